#!/usr/bin/env bash
# s22 call 3: re-capture bench, 31 rounds, twice
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cat .dev/COMMIT
for k in 1 2; do bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.$k.txt; done
echo "done at $SECONDS s"
