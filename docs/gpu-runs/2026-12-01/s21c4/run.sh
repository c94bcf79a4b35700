#!/usr/bin/env bash
# s21 call 4: sgcap check on recorded bundles whose kernels are SASS-only, cache cold then warm
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} SGCAP_NVDISASM=$(command -v nvdisasm)
cat .dev/COMMIT
for b in .dev/tb/*.sgraph; do
  c=$(mktemp -d)
  n=$(SGCAP_CACHE_DIR=off $B/bin/sgcap inspect --access "$b" 2>&1 | grep -c ": sass, ")
  for run in cold warm warm; do
    s=$(date +%s%N); out=$(SGCAP_CACHE_DIR=$c $B/bin/sgcap check "$b" 2>&1 | tail -n 1); e=$(date +%s%N)
    echo "$(basename $b) ($n SASS-only kernel nodes) cache $run: $(( (e - s) / 1000000 )) ms: $out"
  done
  rm -rf "$c"
done
