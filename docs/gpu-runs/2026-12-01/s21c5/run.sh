#!/usr/bin/env bash
# s21 call 5: after the review (the instruction cache on uthash): access, sass, e2e side by side
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/f5; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 ROUNDS=${ROUNDS:-15}
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-330} bash tests/gpu/all_gpu.sh $B $W ${G:-access sass e2e} > $OUT/f/all.log 2>&1
grep -A10 "summary" $OUT/f/all.log | head -10
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | head -20
grep -hE "cost:|PASS 11|^FAIL" $W/logs/sass.log
grep -A120 "share of kernel nodes" $W/logs/access.log 2>/dev/null | grep -E "total" | head
grep -h "e2e_replay:" $W/logs/e2e.log; echo "all done at $SECONDS s"
