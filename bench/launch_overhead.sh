#!/usr/bin/env bash
# Eager launch overhead of libsgcap: runs bench/launch_overhead without and
# with LD_PRELOAD=libsgcap.so, alternating plain/shim ROUNDS times (default
# 15), each run pinned to one CPU, and prints the median throughput of each,
# the median of the per-round ratios (target >= 0.97) and the nanoseconds the
# shim adds per intercepted call (difference of the medians). Rounds are
# paired and alternated so drift of the machine hits both sides alike; the
# spread (min..max of the round ratios) says how far to trust the result.
# A benchmark: it reports, it does not fail on time.
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

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for r in $(seq "$rounds"); do
  p=$(env -u LD_PRELOAD "${pin[@]}" "$bin" --launches "$launches" | field ns_per_launch)
  s=$(LD_PRELOAD=$shim SGCAP_LOG=off "${pin[@]}" "$bin" --launches "$launches" | field ns_per_launch)
  echo "round $r: plain $p ns/launch, shim $s ns/launch"
  echo "$p $s" >>"$rows"
done
sort_median() { sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
mp=$(awk '{print $1}' "$rows" | sort_median)
ms=$(awk '{print $2}' "$rows" | sort_median)
mr=$(awk '{print $1/$2}' "$rows" | sort_median)
lo=$(awk '{print $1/$2}' "$rows" | sort -g | head -n 1)
hi=$(awk '{print $1/$2}' "$rows" | sort -g | tail -n 1)
awk -v p="$mp" -v s="$ms" -v r="$mr" -v lo="$lo" -v hi="$hi" -v n="$rounds" -v l="$launches" 'BEGIN{
  printf "launch_overhead: %d rounds x %d launches over 4 streams, medians\n", n, l;
  printf "launch_overhead: plain %.0f launches/s, with libsgcap %.0f launches/s\n", 1e9/p, 1e9/s;
  printf "launch_overhead: throughput ratio %.4f (median of round ratios; spread %.3f..%.3f; target >= 0.97)\n", r, lo, hi;
  printf "launch_overhead: added %.1f ns per intercepted call (median shim - median plain)\n", s - p;
  printf "launch_overhead: %s\n", (r >= 0.97) ? "within target" : "BELOW TARGET" }'
