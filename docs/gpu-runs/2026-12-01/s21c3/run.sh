#!/usr/bin/env bash
# s21 call 3: the SASS group alone (its cost rows on an idle machine), re-capture, PTX access cost, rewrite passes
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/f3; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 ROUNDS=${ROUNDS:-21}
cat .dev/COMMIT; nproc
ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-300} bash tests/gpu/all_gpu.sh $B $W ${G:-sass recapture} > $OUT/f/all.log 2>&1
grep -A6 "summary" $OUT/f/all.log | head -6
grep -hE "^FAIL|cost:|PASS 11" $W/logs/sass.log
grep -hE "ratio shim|added by" $W/logs/recapture.log
echo "== bench_access at $SECONDS s"
$B/bench/bench_access tests/data/ptx 10000 2>&1 | tail -8 | tee $OUT/f/bench_access.log
echo "== bench_rewrite x3 at $SECONDS s"
for i in 1 2 3; do $B/bench/bench_rewrite 10000 100000 9 2>&1 | grep -E "all passes  |clone|control-deps|fusion-legality|defer-dealloc|reduce  " ; done | tee $OUT/f/bench_rewrite.log
echo "all done at $SECONDS s"
