#!/usr/bin/env bash
# bench_replay.sh: what replay costs, measured side by side in one run.
#
#   bench/bench_replay.sh BUILD_DIR [ROUNDS] [LAUNCHES]
#
# 1. Launch time of a replayed graph against the original program's own
#    launches of the same graph: replay_make_bundle captures the workload,
#    writes the bundle and times its cuGraphLaunch; `sgcap replay --bench`
#    times the replayed graph in a fresh process, with the same method (each
#    launch between its own pair of CUDA events, median). The two alternate
#    for ROUNDS rounds (default 3), for the fork/join workload (GPU-bound) and
#    a 1000-kernel synthetic graph (launch-bound). Expect a ratio near 1.00.
# 2. Load + materialize + instantiate time per node for synthetic bundles of
#    1k and 10k tiny kernels on 4 streams (`sgcap replay --timings`).
# Needs a GPU; prints a table, asserts nothing (tests never assert on time).
set -u
build=$(cd "${1:?usage: bench_replay.sh BUILD_DIR [ROUNDS] [LAUNCHES]}" && pwd)
rounds=${2:-3}
launches=${3:-1000}
mk=$build/bin/replay_make_bundle
sgcap=$build/bin/sgcap
out=${SGCAP_BENCH_OUT:-$build/bench-replay}
mkdir -p "$out"
for f in "$mk" "$sgcap"; do
  [ -x "$f" ] || { echo "bench_replay: $f is missing (build the tree first)" >&2; exit 2; }
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

launch_pair() { # NAME PRODUCER-ARGS...
  local name=$1
  shift
  local b=$out/$name.sgraph o r
  : >"$out/$name.orig" && : >"$out/$name.replay"
  for i in $(seq "$rounds"); do
    o=$(timeout 300 "$mk" "$b" "$@" --bench "$launches" | awk '/^original:/ && match($0, /median [0-9.]+ us/) {print substr($0, RSTART + 7, RLENGTH - 10)}')
    r=$(timeout 300 "$sgcap" replay "$b" --bench "$launches" | awk '/^bench:/ && match($0, /median [0-9.]+ us/) {print substr($0, RSTART + 7, RLENGTH - 10)}')
    echo "$o" >>"$out/$name.orig"
    echo "$r" >>"$out/$name.replay"
    printf '  %-10s round %d: original %10s us   replay %10s us\n' "$name" "$i" "$o" "$r"
  done
  local mo mr
  mo=$(median <"$out/$name.orig")
  mr=$(median <"$out/$name.replay")
  printf '  %-10s median:  original %10s us   replay %10s us   ratio replay/original %s\n' \
    "$name" "$mo" "$mr" "$(awk -v a="$mr" -v b="$mo" 'BEGIN {printf (b > 0 ? "%.3f" : "nan"), a / b}')"
}

echo "== launch time, replayed vs original ($rounds rounds of $launches launches)"
launch_pair forkjoin
launch_pair synth1k --synthetic 1000 --width 4

echo "== load + materialize + instantiate per node (synthetic, 4 streams)"
printf '  %7s %10s %10s %10s %12s %12s %10s %12s\n' nodes read_ms load_ms place_ms \
  materialize_ms instantiate_ms upload_ms us_per_node
for n in 1000 10000; do
  b=$out/synth$n.sgraph
  timeout 300 "$mk" "$b" --synthetic "$n" --width 4 >/dev/null || { echo "  $n: producer failed"; continue; }
  t0=$(date +%s%N)
  line=$(timeout 300 "$sgcap" replay "$b" --timings | grep '^timings:')
  t1=$(date +%s%N)
  echo "$line" | awk -v wall_ms="$(( (t1 - t0) / 1000000 ))" '{
    for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    total = v["read_ms"] + v["load_ms"] + v["place_ms"] + v["materialize_ms"] + v["instantiate_ms"]
    printf "  %7d %10.3f %10.3f %10.3f %12.3f %12.3f %10.3f %12.3f   (sgcap process: %d ms)\n",
      v["nodes"], v["read_ms"], v["load_ms"], v["place_ms"], v["materialize_ms"],
      v["instantiate_ms"], v["upload_ms"], 1000 * total / v["nodes"], wall_ms }'
done
