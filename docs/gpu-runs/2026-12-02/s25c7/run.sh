#!/usr/bin/env bash
# s25c7: the groups s25c6 stopped at its budget (capture, e2e, inject), alone, same build (d0a1394)
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c7; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-160} bash tests/gpu/all_gpu.sh $B $W ${G:-capture e2e inject} > $OUT/f/all.log 2>&1
grep -A6 "summary" $OUT/f/all.log | head -6
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
echo "all done at $SECONDS s"
