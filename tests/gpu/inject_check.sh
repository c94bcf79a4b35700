#!/usr/bin/env bash
# Runs one program with and without libsgcap and checks interception:
#   1. without the shim, 2. LD_PRELOAD (default log level), 3. LD_PRELOAD with
#   SGCAP_LOG=trace: same exit code and same stdout all three times; the trace
#   shows capture begin and end, event records and stream waits inside the
#   capture, and launches with their streams (at least MIN_STREAMS distinct
#   streams doing captured work, when given).
# usage: inject_check.sh SHIM MIN_STREAMS -- PROGRAM [ARGS...]
# Exit 0 pass, 1 fail, 77 skip (PROGRAM exited 77 without the shim).
# Leaves the trace in $SGCAP_CHECK_KEEP/<name>.trace when that is set.
set -uo pipefail
shim=$1
min_streams=$2
shift 3
name=$(basename "$1")
[ "$name" = python3 ] && name=$(basename "${2:-python}" .py)
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
n_ptsz=$(count 'fn=[A-Za-z0-9_]*_ptsz ')
n_pt=$(count 'stream=0x2\(per-thread\)')
streams=$(grep -E 'capture=active' "$t" | grep -E 'fn=cu(Launch|Memcpy|Memset|EventRecord|StreamWaitEvent|MemAlloc|MemFree)' |
          sed -n 's/.* stream=\([^ ]*\) .*/\1/p' | sort -u | wc -l)
[ "$n_begin" -gt 0 ] || problem "no capture begin in the trace"
[ "$n_end" -gt 0 ] || problem "no capture end in the trace"
[ "$n_record" -gt 0 ] || problem "no event record inside a capture in the trace"
[ "$n_wait" -gt 0 ] || problem "no stream wait inside a capture in the trace"
[ "$n_launch" -gt 0 ] || problem "no launch inside a capture in the trace"
[ "$streams" -ge "$min_streams" ] || problem "captured work on $streams streams, expected at least $min_streams"
case "$name" in
  *_ptds) [ $((n_ptsz + n_pt)) -gt 0 ] || problem "per-thread build but no _ptsz call or per-thread stream in the trace" ;;
esac
echo "inject_check $name: begin=$n_begin end=$n_end record=$n_record wait=$n_wait" \
     "captured_launches=$n_launch eager_launches=$n_eager ptsz_calls=$n_ptsz" \
     "per_thread_stream=$n_pt captured_streams=$streams"
[ $fail -eq 0 ] && echo "inject_check $name: PASS"
exit $fail
