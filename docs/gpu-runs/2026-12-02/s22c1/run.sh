#!/usr/bin/env bash
# s22 call 1: machine facts; where the shim's re-capture cost goes on the real driver (profile build);
# fixed cost of the shim (--iters 0); bench_rewrite with and without glibc's THP malloc tunable
set -u
cd "$(dirname "$0")/../.."
B=$PWD/.dev/build
export LD_LIBRARY_PATH=$PWD/.dev/extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cat .dev/COMMIT
echo "== machine"; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|L1d|L2|L3|NUMA node\(s\)"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1
grep -i huge /proc/meminfo | head -3; command -v perf || echo "no perf"; uptime
W=/tmp/c1; rm -rf $W; mkdir -p $W
R=$B/bench/bench_recapture
echo "== profile build of the shim, 3000 iterations"
for m in changing same; do
  for k in 1 2; do
    rm -rf $W/p; LD_PRELOAD=$PWD/.dev/prof/libsgcap.so SGCAP_DIR=$W/p SGCAP_LOG_FILE=$W/log.$m.$k $R --iters 3000 --$m 2>$W/prof.$m.$k
    echo "-- $m $k"; grep sgcap-prof $W/prof.$m.$k
  done
done
echo "== fixed cost: --iters 0 and --iters 3000, plain vs shim, 10 rounds alternating (whole process ms)"
now() { date +%s%N; }
for it in 0 3000; do
  for r in 1 2 3 4 5 6 7 8 9 10; do
    t0=$(now); $R --iters $it --same >/dev/null; t1=$(now)
    rm -rf $W/s; LD_PRELOAD=$B/lib/libsgcap.so SGCAP_LOG=off SGCAP_DIR=$W/s $R --iters $it --same >/dev/null; t2=$(now)
    echo "iters=$it plain_ms=$(( (t1-t0)/1000000 )) shim_ms=$(( (t2-t1)/1000000 ))"
  done
done | tee $W/fixed.txt
for it in 0 3000; do awk -v it=$it '$1=="iters="it{split($2,a,"=");split($3,b,"=");p+=a[2];s+=b[2];n++} END{printf "iters=%s mean plain %.1f shim %.1f ms\n", it, p/n, s/n}' $W/fixed.txt; done
echo "== bench_rewrite: plain malloc vs GLIBC_TUNABLES=glibc.malloc.hugetlb=1, alternating"
for k in 1 2; do
  echo "-- default $k"; $B/bench/bench_rewrite 10000 100000 9 2>&1 | grep -E "all passes  |clone|control-deps|fusion-legality|defer-dealloc|reduce  |check  "
  echo "-- hugetlb=1 $k"; GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $B/bench/bench_rewrite 10000 100000 9 2>&1 | grep -E "all passes  |clone|control-deps|fusion-legality|defer-dealloc|reduce  |check  "
done
grep -i AnonHugePages /proc/meminfo
echo "done at $SECONDS s"
