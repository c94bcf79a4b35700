#!/usr/bin/env bash
# s24 call 2: what one cuStreamGetCaptureInfo costs on a capturing stream (the shim asks it after
# every captured launch and wait), the per-call table at 7476d46, the profile build's account
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/slim
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cat .dev/COMMIT
for r in 1 2 3; do $B/bench/bench_recapture --iters 10 --queries 20000; done | tee $OUT/query.txt
for m in same; do ROUNDS=9 bash bench/bench_recapture_calls.sh $B 3000 $m 2>&1 | tee $OUT/calls.$m.txt; done
echo "== profile build at $SECONDS s"
for m in same changing; do
  rm -rf /tmp/pb; LD_PRELOAD=$PWD/.dev/prof/libsgcap.so SGCAP_LOG=off SGCAP_DIR=/tmp/pb $B/bench/bench_recapture --iters 3000 --$m --per-call 2>&1 | tee $OUT/prof.$m.txt | head -30
done
echo "all done at $SECONDS s"
