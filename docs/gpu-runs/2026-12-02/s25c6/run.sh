#!/usr/bin/env bash
# s25 final call: this session's commits on the GPU. The graph change (edge lists, access lists and
# kernel names of a clone in blocks) runs inside the shim too (the optimizer's clone, the capture
# snapshot): the correctness groups with SGCAP_VERIFY_DIGEST=1, side by side; then bench_rewrite
# before (f1d537a^) and after, alternating, with per-run times (paired ratios) and the section
# timers of an experiment build; the full bench; launch_overhead.
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/c6; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
SGCAP_VERIFY_DIGEST=1 ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-230} bash tests/gpu/all_gpu.sh $B $W ${G:-capture coverage e2e optimize fuse_all access replay inject} > $OUT/f/all.log 2>&1
grep -A12 "summary" $OUT/f/all.log | head -12
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | grep -v " 0 MISMATCH" | head -20
echo "== SGCAP_VERIFY_DIGEST lines (graphs checked, differing)"
grep -rh -a "SGCAP_VERIFY_DIGEST: " $W 2>/dev/null | sed 's/.*SGCAP_VERIFY_DIGEST: //' > $OUT/verify.txt
wc -l < $OUT/verify.txt
awk '{c+=$1; for(i=1;i<=NF;i++) if ($i=="differently") d+=$(i-3)} END{print "checked", c, "differing", d}' $OUT/verify.txt
grep -v " 0 of them differently" $OUT/verify.txt | head -5
echo "== bench_rewrite before/after at $SECONDS s"
cp $B/bench/bench_rewrite .dev/s25/bench_rewrite_after
for k in 1 2 3; do
  for v in bench_rewrite bench_rewrite_after; do
    BENCH_REWRITE_RAW=1 BENCH_REWRITE_PHASE="all passes" .dev/s25/$v 10000 100000 15 > /dev/null 2> $OUT/$v.$k.raw
  done
done
python3 .dev/s25/pair.py $OUT/*.raw | grep POOLED
echo "== the full bench (after) at $SECONDS s"
BENCH_REWRITE_RAW=1 $B/bench/bench_rewrite 10000 100000 11 2> $OUT/full.raw | tee $OUT/bench_rewrite.txt
echo "== section timers (experiment build of the after code) at $SECONDS s"
XP_DUMP=1 BENCH_REWRITE_PHASE="all passes" .dev/s25/bench_rewrite_xp_names 10000 100000 15 2>$OUT/xp.txt | grep "^all passes"
python3 .dev/s25/xpagg.py $OUT/xp.txt > $OUT/xp.agg; head -16 $OUT/xp.agg
(cd $OUT && tar czf raw.tgz *.raw xp.txt && rm -f *.raw xp.txt)
echo "== launch_overhead at $SECONDS s"
W2=/tmp/c6t; rm -rf $W2; mkdir -p $W2 $OUT/t
ALL_GPU_PACK_TO=$OUT/t ALL_GPU_BUDGET_S=120 bash tests/gpu/all_gpu.sh $B $W2 launch_overhead > $OUT/t/all.log 2>&1
grep -A3 "summary" $OUT/t/all.log | head -3
grep -hE "throughput ratio" $W2/logs/*.log | head -4
echo "all done at $SECONDS s"
