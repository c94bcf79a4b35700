#!/usr/bin/env bash
# s23 call 2: where the re-capture cost goes, call by call (plain / shim off / shim), both modes;
# then the profile build's own account of the same loop
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
git log --oneline -1 2>/dev/null || cat .dev/COMMIT
for m in same changing; do ROUNDS=9 bash bench/bench_recapture_calls.sh $B 3000 $m 2>&1 | tee $OUT/calls.$m.txt; done
echo "== profile build at $SECONDS s"
for m in same changing; do
  rm -rf /tmp/pb; LD_PRELOAD=$PWD/.dev/prof/libsgcap.so SGCAP_LOG=off SGCAP_DIR=/tmp/pb $B/bench/bench_recapture --iters 3000 --$m --per-call 2>&1 | tee $OUT/prof.$m.txt | head -40
done
echo "all done at $SECONDS s"
