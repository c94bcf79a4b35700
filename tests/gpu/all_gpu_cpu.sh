#!/usr/bin/env bash
# tests/gpu/all_gpu.sh on the CPU, with ad-hoc groups (NAME=COMMAND): a
# progress line per group as it ends, failure lines of failed groups in the
# summary, and nothing lost when the call is killed: on TERM the running
# groups are stopped (their whole process trees), the summary printed and
# the logs packed; under SIGKILL the periodic logs.tgz holds what the logs
# had by then.
# usage: all_gpu_cpu.sh BUILD_DIR WORKDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
all=$here/all_gpu.sh
build=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }

# 1. groups end in their own order; the failed one's reason is in the summary
ALL_GPU_PACK_S=1 ALL_GPU_BUDGET_S=60 bash "$all" "$build" "$work/a" \
  'slow=echo started; sleep 3; echo done' \
  'quick=echo one; echo "FAIL: the reason"; echo "8 match, 0 MISMATCH"; exit 1' \
  'fine=true' nonesuch >"$work/a.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit $rc with a failed group (1 expected)"
order=$(grep -E '^== all_gpu: [a-z]+ .* still running$' "$work/a.out" | awk '{print $3}' | tr '\n' ' ')
case "$order" in
  "quick fine slow " | "fine quick slow ") ok "progress lines in the order groups end ($order)" ;;
  *) fail "progress lines: '$order'" ;;
esac
grep -q "^== all_gpu: slow  *pass ([0-9]*s); at [0-9]*s, 0 still running" "$work/a.out" ||
  fail "no progress line for slow"
grep -q "^  nonesuch  *unknown group" "$work/a.out" || fail "an unknown group is not reported"
sed -n '/failure lines of logs\/quick.log/,/^$/p' "$work/a.out" >"$work/a.fail"
grep -q "^FAIL: the reason" "$work/a.fail" && ! grep -q "0 MISMATCH" "$work/a.fail" &&
  ok "the failed group's reason in the summary, no '0 MISMATCH'" || fail "failure lines: $(cat "$work/a.fail")"
tar -xzf "$work/a/logs.tgz" -C "$work" logs/slow.log 2>/dev/null && grep -q done "$work/logs/slow.log" &&
  ok "logs.tgz at the end holds every log" || fail "logs.tgz at the end"

# 2. TERM while a group runs: stopped, summary, logs packed, exit 143,
#    the group's whole tree gone
rm -rf "$work/logs"
ALL_GPU_PACK_S=60 ALL_GPU_BUDGET_S=60 bash "$all" "$build" "$work/b" \
  "hang=echo waiting; sleep 300 & echo \$! >$work/b.child; wait" 'short=true' >"$work/b.out" 2>&1 &
runner=$!
for _ in $(seq 50); do [ -s "$work/b.child" ] && grep -q short "$work/b.out" && break; sleep 0.2; done
kill -TERM "$runner"
wait "$runner"
rc=$?
child=$(cat "$work/b.child" 2>/dev/null)
[ $rc -eq 143 ] || fail "exit $rc after TERM (143 expected)"
grep -q "stopped by a signal" "$work/b.out" && grep -q "^  hang  *KILLED by the signal" "$work/b.out" &&
  grep -q "^  short  *pass" "$work/b.out" && ok "TERM: summary with the running group KILLED" ||
  fail "TERM summary: $(cat "$work/b.out")"
tar -xzf "$work/b/logs.tgz" -C "$work" logs/hang.log 2>/dev/null && grep -q waiting "$work/logs/hang.log" &&
  ok "TERM: logs.tgz holds the killed group's log" || fail "TERM: logs.tgz"
if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
  fail "TERM: the group's child $child still runs"
  kill "$child"
else
  ok "TERM: the group's process tree is gone"
fi

# 3. SIGKILL (no trap can run): the periodic pack has the log so far, in
#    OUT_DIR and in ALL_GPU_PACK_TO
rm -rf "$work/logs"
mkdir -p "$work/copy"
ALL_GPU_PACK_TO=$work/copy ALL_GPU_PACK_S=1 ALL_GPU_BUDGET_S=60 setsid bash "$all" "$build" "$work/c" \
  'hang=echo partial output; sleep 300' >"$work/c.out" 2>&1 &
runner=$!
for _ in $(seq 50); do
  tar -xzf "$work/copy/logs.tgz" -C "$work" logs/hang.log 2>/dev/null && grep -q partial "$work/logs/hang.log" && break
  sleep 0.2
done
kill -KILL -- -"$runner" 2>/dev/null # its whole session, as a device call's end would
wait "$runner" 2>/dev/null
grep -q "partial output" "$work/logs/hang.log" 2>/dev/null &&
  tar -tzf "$work/c/logs.tgz" logs/hang.log >/dev/null 2>&1 &&
  ok "SIGKILL: the periodic logs.tgz (and its ALL_GPU_PACK_TO copy) holds the running group's log" ||
  fail "SIGKILL: no log in logs.tgz"
echo "all_gpu_cpu: $failed failed"
[ $failed -eq 0 ]
