#!/usr/bin/env bash
# s24 call 4: the capture-coverage group alone at this stop's head with a budget for all of its
# workloads (s24c1 ran it beside three other groups and its three CUDA_INJECTION64_PATH workloads
# did not start), SGCAP_VERIFY_DIGEST=1
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/s24c4; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=400 bash tests/gpu/all_gpu.sh $B $W coverage > $OUT/f/all.log 2>&1
grep -A3 "summary" $OUT/f/all.log | head -3
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
find $W -name coverage.log -path '*logs*' | head -1 | xargs -r tail -8
echo "all done at $SECONDS s"
