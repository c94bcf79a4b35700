#!/usr/bin/env bash
# s26 call 2 (the closing one): this session's rewrite change (software prefetch in the passes'
# walks over the node and edge arrays, branch-free clock rows) on the GPU
# machine. The passes run inside the shim too (SGCAP_MODE=optimize): the
# correctness groups that run them, with SGCAP_VERIFY_DIGEST=1, side by
# side; before them bench_rewrite before (38a87d1) and after, alternating
# (6 rounds of 15 pairs each), with per-run times (paired ratios); the full
# bench of the new code, twice.
set -u
cd "$(dirname "$0")/../../../.."
[ -d .dev/build ] || python3 -c "import tarfile; tarfile.open('.dev/build.txz').extractall('.dev')"
B=$PWD/.dev/build
W=/tmp/c2; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT; lscpu | grep -E "Model name|L2|L3"
echo "== bench_rewrite before/after at $SECONDS s"
cp $B/bench/bench_rewrite .dev/s26/bench_rewrite_after
for k in 1 2 3 4 5 6; do
  for v in bench_rewrite_base bench_rewrite_after; do
    BENCH_REWRITE_RAW=1 BENCH_REWRITE_PHASE="all passes" .dev/s26/$v 10000 100000 15 > /dev/null 2> $OUT/$v.$k.raw
  done
done
python3 .dev/s26/pair.py $OUT/*.raw | grep POOLED
echo "== the full bench (after) at $SECONDS s"
BENCH_REWRITE_RAW=1 $B/bench/bench_rewrite 10000 100000 11 2> $OUT/full.raw | tee $OUT/bench_rewrite.txt
echo "== the full bench again at $SECONDS s"
BENCH_REWRITE_RAW=1 $B/bench/bench_rewrite 10000 100000 11 2> $OUT/full2.raw | tee $OUT/bench_rewrite2.txt | grep -E "^(all passes|clone|targets)"
(cd $OUT && tar czf raw.tgz *.raw && rm -f *.raw)
[ "${G-}" = none ] && { echo "groups skipped; all done at $SECONDS s"; exit 0; }
echo "== correctness groups at $SECONDS s"
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-330} bash tests/gpu/all_gpu.sh $B $W ${G:-optimize e2e fuse_all replay coverage inject access} > $OUT/f/all.log 2>&1
grep -A12 "summary" $OUT/f/all.log | head -12
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | grep -v " 0 MISMATCH" | head -20
echo "== SGCAP_VERIFY_DIGEST lines (graphs checked, differing)"
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
wc -l < $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
grep -v " 0 of them differently" $OUT/verify.txt | head -5
echo "all done at $SECONDS s"
