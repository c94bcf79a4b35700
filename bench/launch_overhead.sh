#!/usr/bin/env bash
# Eager launch overhead of libsgcap: runs bench/launch_overhead without and
# with LD_PRELOAD=libsgcap.so, alternating, ROUNDS times each (default 5),
# and prints the best throughput of each, their ratio (target >= 0.97) and
# the nanoseconds the shim adds per intercepted call. A benchmark: it reports,
# it does not fail on time.
# usage: bench/launch_overhead.sh [BUILD_DIR] [LAUNCHES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
build=$(cd "$build" && pwd)
launches=${2:-1000000}
rounds=${ROUNDS:-5}
bin=$build/bench/launch_overhead
shim=$build/lib/libsgcap.so
[ -x "$bin" ] || { echo "launch_overhead: $bin not built" >&2; exit 2; }
[ -f "$shim" ] || { echo "launch_overhead: $shim not built" >&2; exit 2; }

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
best_plain=0
best_shim=0
for r in $(seq "$rounds"); do
  out=$(env -u LD_PRELOAD "$bin" --launches "$launches")
  rate=$(echo "$out" | field launches_per_sec)
  echo "round $r plain: $out"
  best_plain=$(awk -v a="$best_plain" -v b="$rate" 'BEGIN{print (b>a)?b:a}')
  out=$(LD_PRELOAD=$shim SGCAP_LOG=off "$bin" --launches "$launches")
  rate=$(echo "$out" | field launches_per_sec)
  echo "round $r shim:  $out"
  best_shim=$(awk -v a="$best_shim" -v b="$rate" 'BEGIN{print (b>a)?b:a}')
done
awk -v p="$best_plain" -v s="$best_shim" 'BEGIN{
  printf "launch_overhead: plain %.0f launches/s, with libsgcap %.0f launches/s\n", p, s;
  printf "launch_overhead: throughput ratio %.4f (target >= 0.97)\n", s / p;
  printf "launch_overhead: added %.1f ns per intercepted call\n", 1e9 / s - 1e9 / p;
  printf "launch_overhead: %s\n", (s / p >= 0.97) ? "within target" : "BELOW TARGET" }'
