#!/usr/bin/env bash
# s23 call 1 (at afa2b62, the review commit of s22 that never ran on the GPU): the shim's correctness
# groups with SGCAP_VERIFY_DIGEST=1, then launch_overhead and capture_bench (not re-measured since the
# call digest), then the re-capture bench at 61 rounds (ROUNDS only on that command)
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c1; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=300 bash tests/gpu/all_gpu.sh $B $W capture inject coverage e2e optimize replay > $OUT/f/all.log 2>&1
grep -A12 "summary" $OUT/f/all.log | head -12
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | head -20
echo "== SGCAP_VERIFY_DIGEST lines (graphs checked, differing)"
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
wc -l < $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
grep -v " 0 of them differently" $OUT/verify.txt | head -5
echo "== timing at $SECONDS s"
W2=/tmp/c1t; rm -rf $W2; mkdir -p $W2 $OUT/t
ALL_GPU_PACK_TO=$OUT/t ALL_GPU_BUDGET_S=150 bash tests/gpu/all_gpu.sh $B $W2 launch_overhead capture_bench > $OUT/t/all.log 2>&1
grep -A4 "summary" $OUT/t/all.log | head -4
grep -hE "throughput ratio|per node|instantiate|added" $W2/logs/*.log | head -16
echo "== re-capture at $SECONDS s"
ROUNDS=61 bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "all done at $SECONDS s"
