#!/usr/bin/env bash
# Where the shim's re-capture cost goes, call by call: bench/bench_recapture
# --per-call (each call of the loop timed on its own) without the shim, with
# it loaded but off (SGCAP_MODE=off: the wrappers pass every call through),
# and with it capturing, ROUNDS times each (default 9), in alternating order.
# Prints, per call site, the median ns per iteration of each side and what
# loading the shim (off - plain) and recording (shim - off) add. The clock
# reads around each call cost the same on every side; the differences are
# the shim's, the real driver calls' slowdown under it included.
# A benchmark: it reports, it does not fail on time.
# usage: [ROUNDS=N] bench/bench_recapture_calls.sh [BUILD_DIR] [ITERS] [same|changing]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
iters=${2:-3000}
mode=${3:-same}
rounds=${ROUNDS:-9}
bin=$build/bench/bench_recapture
shim=$build/lib/libsgcap.so
[ -x "$bin" ] || { echo "bench_recapture_calls: $bin not built" >&2; exit 2; }
[ -f "$shim" ] || { echo "bench_recapture_calls: $shim not built" >&2; exit 2; }
case $rounds in '' | *[!0-9]* | 0) echo "bench_recapture_calls: ROUNDS=$rounds: a count >= 1" >&2; exit 2 ;; esac
case $mode in same | changing) ;; *) echo "bench_recapture_calls: mode $mode: same or changing" >&2; exit 2 ;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
side() { # side NAME: one run, its key=value line appended to $out/NAME
  case $1 in
  plain) env -u LD_PRELOAD "$bin" --iters "$iters" --"$mode" --per-call ;;
  off) LD_PRELOAD=$shim SGCAP_MODE=off SGCAP_LOG=off "$bin" --iters "$iters" --"$mode" --per-call ;;
  shim) LD_PRELOAD=$shim SGCAP_LOG=off SGCAP_DIR=$out/b.$2 "$bin" --iters "$iters" --"$mode" --per-call ;;
  esac >>"$out/$1"
}
side plain 0 >/dev/null; side off 0 >/dev/null; side shim 0 >/dev/null
: >"$out/plain"; : >"$out/off"; : >"$out/shim"
for r in $(seq "$rounds"); do
  case $((r % 3)) in
  0) side plain "$r"; side off "$r"; side shim "$r" ;;
  1) side off "$r"; side shim "$r"; side plain "$r" ;;
  2) side shim "$r"; side plain "$r"; side off "$r" ;;
  esac
done
med() { sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
col() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$out/$1" | med; }
echo "bench_recapture_calls: $mode graphs, $iters iterations, $rounds rounds; median ns per iteration"
{
  for c in begin k1 rec1 wait1 k2 rec2 wait2 k3 end update destroy glaunch; do
    echo "$c $(col plain c_$c) $(col off c_$c) $(col shim c_$c)"
  done
  echo "loop $(col plain us_per_iter) $(col off us_per_iter) $(col shim us_per_iter)"
} | awk '
  BEGIN { printf "%-10s %9s %9s %9s %9s %9s\n", "call", "plain", "off", "shim", "off-plain", "shim-off" }
  $1 == "loop" { printf "%-10s %9.1f %9.1f %9.1f %+9.1f %+9.1f\n", "sum", p, o, s, o - p, s - o;
                 printf "%-10s %9.0f %9.0f %9.0f %+9.0f %+9.0f   (the whole loop)\n", "loop", $2 * 1000, $3 * 1000, $4 * 1000, ($3 - $2) * 1000, ($4 - $3) * 1000; next }
  { printf "%-10s %9.1f %9.1f %9.1f %+9.1f %+9.1f\n", $1, $2, $3, $4, $3 - $2, $4 - $3; p += $2; o += $3; s += $4 }'
