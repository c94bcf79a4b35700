#!/usr/bin/env bash
# s24 first call (prepared at the end of s23): the final commit of s23 (e240282 or later) on the GPU
# with SGCAP_VERIFY_DIGEST=1 (inject and replay did not run at s23's last commits), then issue 10's
# open question: where bench_rewrite's superlinearity starts (sizes between 10k and 100k), and the
# re-capture bench once more.
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/s24; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=250 bash tests/gpu/all_gpu.sh $B $W inject replay capture coverage > $OUT/f/all.log 2>&1
grep -A8 "summary" $OUT/f/all.log | head -8
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
echo "== bench_rewrite by size at $SECONDS s"
for l in 20000 50000 100000; do $B/bench/bench_rewrite 10000 $l 9 2>&1 | grep -E "^(all passes|clone) " | sed "s/^/10k->$l: /"; done | tee $OUT/bench_rewrite_sizes.txt
lscpu | grep -iE "model name|L1d|L2|L3" | tee $OUT/lscpu.txt
echo "== re-capture at $SECONDS s"
ROUNDS=61 bash bench/bench_recapture.sh $B 2>&1 | tee $OUT/recapture.txt
echo "all done at $SECONDS s"
