#!/usr/bin/env bash
# Runs one program with and without libsgcap and checks interception:
#   1. without the shim, 2. LD_PRELOAD (default log level), 3. LD_PRELOAD with
#   SGCAP_LOG=trace: same exit code and same stdout all three times, and the
#   trace shows the CUDA calls that build the program's graphs.
# usage: inject_check.sh SHIM EXPECT -- PROGRAM [ARGS...]
#   EXPECT is the program's expected topology (a samples/expected/NAME.topo
#   file, docs/SAMPLES.md format v1): what the trace must show is derived
#   from it, graph by graph:
#     - one capture begin and end per graph that has a `stream` line (none
#       for graphs built node by node: `explicit` lines only);
#     - one stream wait inside a capture per `event` line, and at least one
#       event record per event label (none required without event lines);
#     - one captured launch per `kernel` or `host` node on a `stream` line;
#     - captured work on as many distinct streams as the graph with the most
#       `stream` lines has;
#     - at least one graph instantiation and one graph launch.
#   Where the topology has conditional or child-graph nodes, whose bodies it
#   does not describe (a body may be captured too), or a graph of no nodes
#   (it does not say whether that was a capture of nothing), the counts are
#   minimums.
#   Or EXPECT is a number N, for programs without an expected topology
#   (the PyTorch and CuPy scripts): a capture with event records, stream
#   waits and launches, on at least N distinct streams.
# Exit 0 pass, 1 fail, 2 bad usage, 77 skip (PROGRAM exited 77 without the
# shim). Leaves the trace in $SGCAP_CHECK_KEEP/<name>.trace when that is set.
set -uo pipefail
[ $# -ge 4 ] && [ "$3" = "--" ] || { echo "usage: inject_check.sh SHIM EXPECT -- PROGRAM [ARGS...]" >&2; exit 2; }
shim=$1
expect=$2
shift 3
name=$(basename "$1")
[ "$name" = python3 ] && name=$(basename "${2:-python}" .py)

# What the trace must show: w_* are wanted counts; exact says whether they
# must be met exactly (1) or are minimums (0).
if [[ "$expect" =~ ^[0-9]+$ ]]; then
  w_captures=1 w_waits=1 w_records=1 w_launches=1 w_streams=$expect exact=0
elif [ -f "$expect" ]; then
  read -r w_captures w_waits w_records w_launches w_streams open_ended < <(awk '
    /^graph / { g++; lines[g] = 0; next }
    /^(stream|explicit|event|control) / { lines[g]++ }
    /^stream / { if (!cap[g]++) captures++; lanes[g]++
                 for (i = 3; i <= NF; i++) if ($i == "kernel" || $i == "host") launches++ }
    /^(stream|explicit) / { for (i = 2; i <= NF; i++) if ($i == "conditional" || $i == "child_graph") open_ended++ }
    /^event / { waits++; if (!label[g " " $2]++) records++ }
    END { for (k in lanes) if (lanes[k] > streams) streams = lanes[k]
          for (k in lines) if (!lines[k]) open_ended++  # a graph of no nodes: captured or not?
          printf "%d %d %d %d %d %d\n", captures, waits, records, launches, streams, open_ended }' "$expect")
  [ -n "${w_captures:-}" ] || { echo "inject_check $name: cannot read $expect" >&2; exit 2; }
  exact=1
  [ "$open_ended" -gt 0 ] && exact=0
else
  echo "inject_check $name: EXPECT must be a .topo file or a number, not '$expect'" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

env -u LD_PRELOAD "$@" >"$tmp/plain.out" 2>"$tmp/plain.err"
rc_plain=$?
if [ $rc_plain -eq 77 ]; then
  echo "inject_check $name: SKIP ($(tail -n 1 "$tmp/plain.out" "$tmp/plain.err" | tr '\n' ' '))"
  exit 77
fi
LD_PRELOAD=$shim "$@" >"$tmp/shim.out" 2>"$tmp/shim.err"
rc_shim=$?
LD_PRELOAD=$shim SGCAP_LOG=trace SGCAP_LOG_FILE="$tmp/trace" "$@" >"$tmp/trace.out" 2>"$tmp/trace.err"
rc_trace=$?
if [ -n "${SGCAP_CHECK_KEEP:-}" ]; then
  mkdir -p "$SGCAP_CHECK_KEEP"
  cp "$tmp/trace" "$SGCAP_CHECK_KEEP/$name.trace" 2>/dev/null || true
fi

fail=0
problem() { echo "inject_check $name: FAIL: $*"; fail=1; }
[ $rc_plain -eq 0 ] || problem "program fails without the shim (exit $rc_plain): $(tail -n 3 "$tmp/plain.err")"
[ $rc_shim -eq $rc_plain ] || problem "exit code $rc_shim with the shim, $rc_plain without"
[ $rc_trace -eq $rc_plain ] || problem "exit code $rc_trace with tracing, $rc_plain without"
cmp -s "$tmp/plain.out" "$tmp/shim.out" || { problem "stdout differs with the shim"; diff "$tmp/plain.out" "$tmp/shim.out" | head -n 10; }
cmp -s "$tmp/plain.out" "$tmp/trace.out" || { problem "stdout differs with tracing"; diff "$tmp/plain.out" "$tmp/trace.out" | head -n 10; }
grep -q "sgcap" "$tmp/trace.out" && problem "sgcap wrote to stdout"

t=$tmp/trace
[ -s "$t" ] || problem "no trace written"
count() { grep -cE "$1" "$t" 2>/dev/null || true; }
n_begin=$(count 'fn=cuStreamBeginCapture[A-Za-z_0-9]* .*capture=active.*result=0')
n_end=$(count 'fn=cuStreamEndCapture(_ptsz)? .*result=0')
n_record=$(count 'fn=cuEventRecord[A-Za-z_]* .*capture=active')
n_wait=$(count 'fn=cuStreamWaitEvent(_ptsz)? .*capture=active')
n_launch=$(count 'fn=cuLaunch(Kernel|KernelEx|CooperativeKernel|HostFunc)(_ptsz)? .*capture=active')
n_eager=$(count 'fn=cuLaunch(Kernel|KernelEx|CooperativeKernel)(_ptsz)? .*capture=none')
n_inst=$(count 'fn=cuGraphInstantiate[A-Za-z_0-9]* .*result=0')
n_glaunch=$(count 'fn=cuGraphLaunch(_ptsz)? .*result=0')
n_ptsz=$(count 'fn=[A-Za-z0-9_]*_ptsz ')
n_pt=$(count 'stream=0x2\(per-thread\)')
streams=$(grep -E 'capture=active' "$t" | grep -E 'fn=cu(Launch|Memcpy|Memset|EventRecord|StreamWaitEvent|MemAlloc|MemFree)' |
          sed -n 's/.* stream=\([^ ]*\) .*/\1/p' | sort -u | wc -l)

# want WHAT GOT WANTED [exact]: GOT must equal WANTED (exact) or reach it.
want() {
  local what=$1 got=$2 wanted=$3 ex=${4:-0}
  if [ "$ex" = 1 ]; then
    [ "$got" -eq "$wanted" ] || problem "$got $what in the trace, the expected topology makes $wanted"
  else
    [ "$got" -ge "$wanted" ] || problem "$got $what in the trace, at least $wanted expected"
  fi
}
want "capture begins" "$n_begin" "$w_captures" "$exact"
want "capture ends" "$n_end" "$w_captures" "$exact"
want "stream waits inside a capture" "$n_wait" "$w_waits" "$exact"
want "event records inside a capture" "$n_record" "$w_records"
want "launches inside a capture" "$n_launch" "$w_launches" "$exact"
want "streams doing captured work" "$streams" "$w_streams"
want "graph instantiations" "$n_inst" 1
want "graph launches" "$n_glaunch" 1
case "$name" in
  *_ptds) [ $((n_ptsz + n_pt)) -gt 0 ] || problem "per-thread build but no _ptsz call or per-thread stream in the trace" ;;
esac
echo "inject_check $name: begin=$n_begin end=$n_end record=$n_record wait=$n_wait" \
     "captured_launches=$n_launch eager_launches=$n_eager ptsz_calls=$n_ptsz" \
     "per_thread_stream=$n_pt captured_streams=$streams instantiations=$n_inst graph_launches=$n_glaunch" \
     "(expected: captures=$w_captures waits=$w_waits records>=$w_records launches=$w_launches" \
     "streams>=$w_streams, $([ "$exact" = 1 ] && echo exact || echo minimums))"
[ $fail -eq 0 ] && echo "inject_check $name: PASS"
exit $fail
