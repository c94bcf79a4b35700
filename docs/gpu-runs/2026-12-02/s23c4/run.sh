#!/usr/bin/env bash
# s23 call 4 (final): every change of the session on the GPU. Correctness groups the changes touch
# (the shim's hot path: capture coverage e2e optimize; the rewrite passes: fuse_all access) with
# SGCAP_VERIFY_DIGEST=1; then alone: launch_overhead and capture_bench, bench_rewrite x3, the
# per-call decomposition, the re-capture bench at 61 rounds
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c4; rm -rf $W; mkdir -p $W $OUT/f $OUT/t
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-220} bash tests/gpu/all_gpu.sh $B $W ${G:-capture coverage e2e optimize fuse_all access} > $OUT/f/all.log 2>&1
grep -A12 "summary" $OUT/f/all.log | head -12
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | grep -v " 0 MISMATCH" | head -20
echo "== SGCAP_VERIFY_DIGEST lines (graphs checked, differing)"
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
wc -l < $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
grep -v " 0 of them differently" $OUT/verify.txt | head -5
echo "== timing at $SECONDS s"
W2=/tmp/c4t; rm -rf $W2; mkdir -p $W2
ALL_GPU_PACK_TO=$OUT/t ALL_GPU_BUDGET_S=150 bash tests/gpu/all_gpu.sh $B $W2 launch_overhead capture_bench > $OUT/t/all.log 2>&1
grep -A4 "summary" $OUT/t/all.log | head -4
grep -hE "throughput ratio|per captured node|instantiate" $W2/logs/*.log | head -8
echo "== bench_rewrite at $SECONDS s"
for k in 1 2 3; do $B/bench/bench_rewrite 10000 100000 9 2>&1 | tee $OUT/bench_rewrite.$k.txt | grep -E "^(control-deps|fusion-legality|defer-dealloc|reduce|all passes|clone) "; done
echo "== per call at $SECONDS s"
ROUNDS=7 bash bench/bench_recapture_calls.sh $B 3000 changing 2>&1 | tee $OUT/calls.changing.txt
echo "== re-capture at $SECONDS s"
ROUNDS=61 bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "all done at $SECONDS s"
