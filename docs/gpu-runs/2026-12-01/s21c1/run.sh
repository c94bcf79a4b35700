#!/usr/bin/env bash
# s20 final: every correctness group side by side, then the timing groups on an idle GPU
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/f1; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 ROUNDS=${ROUNDS:-11}
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-500} bash tests/gpu/all_gpu.sh $B $W ${G:-capture inject coverage e2e replay access sass fuse_all optimize recapture launch_overhead capture_bench} > $OUT/f/all.log 2>&1
grep -A16 "summary" $OUT/f/all.log | head -16
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | head -20
grep -A120 "share of kernel nodes" $W/logs/access.log 2>/dev/null | grep -E "total|torch" | head
grep -hE "throughput ratio|added|instantiate|capture  |ratio shim" $W/logs/*.log | head -12
echo "all done at $SECONDS s"
