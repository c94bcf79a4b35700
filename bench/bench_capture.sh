#!/usr/bin/env bash
# Capture cost of libsgcap per captured node: runs bench/bench_capture
# without and with LD_PRELOAD=libsgcap.so at 1k and 10k nodes, alternating
# plain/shim ROUNDS times (default 5), and prints the medians, the
# nanoseconds the shim adds per captured node during capture (target <= 1000)
# and the instantiate time per node of each side (the median is of the
# repeats: identical graphs, which the shim knows by a raw digest without
# building a model; the first instantiate builds it and queues the bundle,
# printed apart). Then
# bundle write throughput (CPU only, bench_bundle_write). A benchmark: it
# reports, it does not fail on time.
# usage: bench/bench_capture.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
build=$(cd "$build" && pwd)
rounds=${ROUNDS:-5}
bin=$build/bench/bench_capture
shim=$build/lib/libsgcap.so
[ -x "$bin" ] || { echo "bench_capture: $bin not built" >&2; exit 2; }
[ -f "$shim" ] || { echo "bench_capture: $shim not built" >&2; exit 2; }
pin=()
command -v taskset >/dev/null 2>&1 && pin=(taskset -c 2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
sort_median() { sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }

for nodes in 1000 10000; do
  rows=$out/rows.$nodes
  : >"$rows"
  for r in $(seq "$rounds"); do
    p=$(env -u LD_PRELOAD "${pin[@]}" "$bin" --nodes "$nodes")
    s=$(LD_PRELOAD=$shim SGCAP_LOG=off SGCAP_DIR=$out/b$nodes.$r "${pin[@]}" "$bin" --nodes "$nodes")
    echo "$(echo " $p" | field capture_ns_per_node) $(echo " $s" | field capture_ns_per_node)" \
      "$(echo " $p" | field instantiate_ns_per_node) $(echo " $s" | field instantiate_ns_per_node)" \
      "$(echo " $s" | field first_instantiate_ns)" >>"$rows"
  done
  cp=$(awk '{print $1}' "$rows" | sort_median)
  cs=$(awk '{print $2}' "$rows" | sort_median)
  ip=$(awk '{print $3}' "$rows" | sort_median)
  is=$(awk '{print $4}' "$rows" | sort_median)
  first=$(awk '{print $5}' "$rows" | sort_median)
  awk -v n="$nodes" -v cp="$cp" -v cs="$cs" -v ip="$ip" -v is="$is" -v f="$first" -v r="$rounds" 'BEGIN{
    printf "bench_capture: %d nodes, %d rounds, medians\n", n, r;
    printf "bench_capture:   capture     plain %.0f ns/node, shim %.0f ns/node: +%.0f ns per captured node (%s, target <= 1000)\n", cp, cs, cs - cp, (cs - cp <= 1000) ? "within target" : "ABOVE TARGET";
    printf "bench_capture:   instantiate plain %.0f ns/node, shim %.0f ns/node (median of the repeats: identical graphs, a raw digest each, no model)\n", ip, is;
    printf "bench_capture:   first instantiate with the shim (build + bundle write): %.2f ms, %.0f ns/node\n", f / 1e6, f / n }'
done
if [ -x "$build/bench/bench_bundle_write" ]; then
  "$build/bench/bench_bundle_write" "$out/w"
fi
