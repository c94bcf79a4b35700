#!/usr/bin/env bash
# s26 call 4: the groups the closing call left out, alone so they finish:
# capture (every sample in every build and the framework scripts under the
# shim, bundles compared with each sample's expected topology) with
# SGCAP_VERIFY_DIGEST=1, then launch_overhead on an idle GPU.
set -u
cd "$(dirname "$0")/../../../.."
[ -d .dev/build ] || python3 -c "import tarfile; tarfile.open('.dev/build.txz').extractall('.dev')"
B=$PWD/.dev/build
W=/tmp/c4; rm -rf $W; mkdir -p $W $OUT/f $OUT/t
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-400} bash tests/gpu/all_gpu.sh $B $W capture > $OUT/f/all.log 2>&1
grep -A3 "summary" $OUT/f/all.log | head -3
grep -E "^FAIL|MISMATCH|DIFF" $OUT/f/all.log | head -10
grep -h "^capture_gpu:" $W/logs/capture.log
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "digest: checked", c, "differing", d}' $OUT/verify.txt
echo "== launch_overhead at $SECONDS s"
W2=/tmp/c4t; rm -rf $W2; mkdir -p $W2
ALL_GPU_PACK_TO=$OUT/t ALL_GPU_BUDGET_S=${LBUDGET:-110} bash tests/gpu/all_gpu.sh $B $W2 launch_overhead > $OUT/t/all.log 2>&1
grep -A2 "summary" $OUT/t/all.log | head -2
grep -hE "throughput ratio" $W2/logs/*.log | head -4
echo "all done at $SECONDS s"
