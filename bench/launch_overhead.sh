#!/usr/bin/env bash
# Eager launch overhead of libsgcap: runs bench/launch_overhead without and
# with LD_PRELOAD=libsgcap.so, alternating plain/shim ROUNDS times (default
# 15), each run pinned to one CPU. Two figures per run (see
# launch_overhead.cu):
#  - submission: host time of one launch call, in bursts short enough that no
#    call waits for the device; the median of ~1000 bursts per run, so a
#    burst the machine preempted does not count. This is what the shim can
#    add to a launch, and the target is on it: the median of the per-round
#    ratios plain/shim of submission throughput, >= 0.97.
#  - whole loop: launches until the device has run them all (waits for a
#    full queue included), one figure per run. On the H200 both are close
#    (a launch call costs ~3.5 us of host time there either way), but this
#    one takes every hiccup of the run; printed for reference.
# Also prints the nanoseconds the shim adds per call (difference of the
# submission medians). Rounds are paired and alternated so drift of the
# machine hits both sides alike; the spread (min..max of the round ratios)
# says how far to trust the result. A benchmark: it reports, it does not
# fail on time.
# usage: bench/launch_overhead.sh [BUILD_DIR] [LAUNCHES_PER_ROUND]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
build=$(cd "$build" && pwd)
launches=${2:-250000}
rounds=${ROUNDS:-15}
bin=$build/bench/launch_overhead
shim=$build/lib/libsgcap.so
[ -x "$bin" ] || { echo "launch_overhead: $bin not built" >&2; exit 2; }
[ -f "$shim" ] || { echo "launch_overhead: $shim not built" >&2; exit 2; }
pin=()
command -v taskset >/dev/null 2>&1 && pin=(taskset -c 2)

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for r in $(seq "$rounds"); do
  p=$(env -u LD_PRELOAD "${pin[@]}" "$bin" --launches "$launches")
  s=$(LD_PRELOAD=$shim SGCAP_LOG=off "${pin[@]}" "$bin" --launches "$launches")
  pl=$(field ns_per_launch <<<"$p"); sl=$(field ns_per_launch <<<"$s")
  ps=$(field submit_ns <<<"$p"); ss=$(field submit_ns <<<"$s")
  echo "round $r: submit plain $ps ns, shim $ss ns; whole loop plain $pl ns/launch, shim $sl ns/launch"
  echo "$ps $ss $pl $sl" >>"$rows"
done
sort_median() { sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
col_ratio() { awk -v a="$1" -v b="$2" '{print $a/$b}' "$rows"; }
mps=$(awk '{print $1}' "$rows" | sort_median)
mss=$(awk '{print $2}' "$rows" | sort_median)
mpl=$(awk '{print $3}' "$rows" | sort_median)
msl=$(awk '{print $4}' "$rows" | sort_median)
rs=$(col_ratio 1 2 | sort_median); rs_lo=$(col_ratio 1 2 | sort -g | head -n 1); rs_hi=$(col_ratio 1 2 | sort -g | tail -n 1)
rl=$(col_ratio 3 4 | sort_median); rl_lo=$(col_ratio 3 4 | sort -g | head -n 1); rl_hi=$(col_ratio 3 4 | sort -g | tail -n 1)
awk -v ps="$mps" -v ss="$mss" -v pl="$mpl" -v sl="$msl" -v rs="$rs" -v rslo="$rs_lo" -v rshi="$rs_hi" \
    -v rl="$rl" -v rllo="$rl_lo" -v rlhi="$rl_hi" -v n="$rounds" -v l="$launches" 'BEGIN{
  printf "launch_overhead: %d rounds x %d launches over 4 streams, medians\n", n, l;
  printf "launch_overhead: submission: plain %.1f ns per launch call, with libsgcap %.1f ns\n", ps, ss;
  printf "launch_overhead: submission throughput ratio %.4f (median of round ratios; spread %.3f..%.3f; target >= 0.97)\n", rs, rslo, rshi;
  printf "launch_overhead: added %.1f ns per intercepted call (median shim - median plain submission)\n", ss - ps;
  printf "launch_overhead: whole loop (for reference): plain %.0f launches/s, with libsgcap %.0f launches/s, ratio %.4f (spread %.3f..%.3f)\n", 1e9/pl, 1e9/sl, rl, rllo, rlhi;
  printf "launch_overhead: %s\n", (rs >= 0.97) ? "within target" : "BELOW TARGET" }'
