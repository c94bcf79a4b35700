#!/usr/bin/env bash
# s23 call 3: the shim's hot-path cuts (kernel arguments in one pass, the book's one-node enqueue,
# the stream-identity cache valid until a call that ends streams): correctness groups with
# SGCAP_VERIFY_DIGEST=1, then the per-call decomposition and the re-capture bench at 61 rounds
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c3; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-260} bash tests/gpu/all_gpu.sh $B $W ${G:-capture inject coverage e2e optimize replay} > $OUT/f/all.log 2>&1
grep -A12 "summary" $OUT/f/all.log | head -12
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | grep -v " 0 MISMATCH" | head -20
echo "== SGCAP_VERIFY_DIGEST lines (graphs checked, differing)"
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
wc -l < $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
grep -v " 0 of them differently" $OUT/verify.txt | head -5
echo "== per call at $SECONDS s"
for m in same changing; do ROUNDS=9 bash bench/bench_recapture_calls.sh $B 3000 $m 2>&1 | tee $OUT/calls.$m.txt; done
echo "== re-capture at $SECONDS s"
ROUNDS=61 bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "all done at $SECONDS s"
