#!/usr/bin/env bash
# s22 call 4 (at the call-digest commit): the shim's correctness groups with SGCAP_VERIFY_DIGEST=1
# (every graph the calls identify is read back too and compared), then the re-capture bench
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c4; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache SGCAP_VERIFY_DIGEST=1
cat .dev/COMMIT
ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-360} bash tests/gpu/all_gpu.sh $B $W ${G:-capture inject coverage e2e optimize replay} > $OUT/f/all.log 2>&1
grep -A12 "summary" $OUT/f/all.log | head -12
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | head -20
echo "== SGCAP_VERIFY_DIGEST lines (graphs checked, differing)"
grep -rh --include='*' -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
wc -l < $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
grep -v " 0 of them differently" $OUT/verify.txt | head -5
grep -rh -a "differently\|a different graph\|a different shape" $W 2>/dev/null | grep -v " 0 of them differently" | head -5
echo "== re-capture at $SECONDS s"
unset SGCAP_VERIFY_DIGEST
bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "all done at $SECONDS s"
