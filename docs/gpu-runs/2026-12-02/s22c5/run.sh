#!/usr/bin/env bash
# s22 call 5 (call digest, default path): capture and coverage side by side, then the timing groups
# launch_overhead, capture_bench and recapture (101 rounds)
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c5; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 ROUNDS=101
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=560 bash tests/gpu/all_gpu.sh $B $W capture coverage launch_overhead capture_bench recapture > $OUT/f/all.log 2>&1
grep -A10 "summary" $OUT/f/all.log | head -10
grep -E "^FAIL|MISMATCH [1-9]" $OUT/f/all.log | head -20
grep -h "known by the calls" -r $W 2>/dev/null | sed 's/.*summary: //' | sort | uniq -c | sort -rn | head -5
grep -hE "throughput ratio|added|instantiate|capture  |ratio shim|replays:" $W/logs/*.log | head -16
echo "all done at $SECONDS s"
