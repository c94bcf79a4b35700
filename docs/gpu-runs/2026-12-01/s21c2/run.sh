#!/usr/bin/env bash
# s21 call 2: the groups the SASS threads and the rewrite merge touch, side by side; then timing alone
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
W=/tmp/f2; rm -rf $W; mkdir -p $W $OUT/f
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SGCAP_NVDISASM=$(command -v nvdisasm) NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 ROUNDS=${ROUNDS:-15}
export TRITON_CACHE_DIR=$W/triton-cache CUPY_CACHE_DIR=$W/cupy-cache
cat .dev/COMMIT
ALL_GPU_PACK_TO=$OUT/f ALL_GPU_BUDGET_S=${BUDGET:-330} bash tests/gpu/all_gpu.sh $B $W ${G:-access sass e2e fuse_all replay recapture} > $OUT/f/all.log 2>&1
grep -A10 "summary" $OUT/f/all.log | head -10
grep -E "^FAIL|MISMATCH" $OUT/f/all.log | head -20
grep -hE "cost \(|PASS 11|every kernel of every" $W/logs/sass.log
grep -A120 "share of kernel nodes" $W/logs/access.log 2>/dev/null | grep -E "total" | head
grep -hE "ratio shim|added by" $W/logs/recapture.log
echo "== bench_rewrite x3 at $SECONDS s"
for i in 1 2 3; do $B/bench/bench_rewrite 10000 100000 9 2>&1 | grep -E "all passes  |clone|control-deps|fusion-legality|defer-dealloc|reduce  " ; done | tee $OUT/f/bench_rewrite.log
echo "all done at $SECONDS s"
