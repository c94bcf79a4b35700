#!/usr/bin/env bash
# s24 call 3 (final): at this stop's head. The shim's code is what s24c1 verified (7476d46), so:
# the re-capture bench at 201 rounds (issue 14's last target, with a confidence interval narrow
# enough to judge), launch_overhead and capture_bench (no regression at the head), bench_rewrite
# with the best-run verdict x2 (issue 10 item 6)
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
cat .dev/COMMIT
echo "== timing at $SECONDS s"
W2=/tmp/c3t; rm -rf $W2; mkdir -p $W2 $OUT/t
ALL_GPU_PACK_TO=$OUT/t ALL_GPU_BUDGET_S=120 bash tests/gpu/all_gpu.sh $B $W2 launch_overhead capture_bench > $OUT/t/all.log 2>&1
grep -A4 "summary" $OUT/t/all.log | head -4
grep -hE "throughput ratio|per captured node|instantiate" $W2/logs/*.log | head -8
echo "== bench_rewrite at $SECONDS s"
for k in 1 2; do $B/bench/bench_rewrite 10000 100000 11 2>&1 | tee $OUT/bench_rewrite.$k.txt | grep -E "^(control-deps|fusion-legality|defer-dealloc|reduce|all passes|clone|targets) "; done
echo "== re-capture at $SECONDS s"
ROUNDS=${ROUNDS_RC:-201} bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "all done at $SECONDS s"
