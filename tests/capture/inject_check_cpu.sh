#!/usr/bin/env bash
# tests/gpu/inject_check.sh on the CPU: capture_probe (fake libcuda.so.1)
# under the shim, its scenarios checked against their own --expect
# topology, which must pass, and against the topology of another shape,
# which must fail for the reason that shape implies (a graph built node by
# node has no capture, an edgeless one no stream wait, ...).
# usage: inject_check_cpu.sh SHIM PROBE FAKE_LIB_DIR WORKDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
check=$here/../gpu/inject_check.sh
shim=$1 probe=$2 fake=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SGCAP_DIR=$work/bundles
unset SGCAP_MAX_BUNDLES SGCAP_MAX_VARIANTS SGCAP_SNAPSHOT SGCAP_LOG SGCAP_MODE
failed=0
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# pass SCENARIO: checked against its own --expect
pass() {
  "$probe" "$1" --expect >"$work/$1.topo"
  if bash "$check" "$shim" "$work/$1.topo" -- "$probe" "$1" >"$work/$1.out" 2>&1; then
    echo "ok: $1 passes against its own topology: $(grep -o 'begin=.*' "$work/$1.out")"
  else
    fail "$1 against its own topology"
    sed 's/^/    /' "$work/$1.out"
  fi
}
# refuse SCENARIO EXPECT REASON: must fail, saying REASON
refuse() {
  local s=$1 expect=$2 reason=$3
  bash "$check" "$shim" "$expect" -- "$probe" "$s" >"$work/$s.refused.out" 2>&1
  local rc=$?
  if [ $rc -eq 1 ] && grep -qF "FAIL: $reason" "$work/$s.refused.out"; then
    echo "ok: $s refused against $(basename "$expect"): $reason"
  else
    fail "$s against $(basename "$expect") (exit $rc): wanted \"$reason\""
    sed 's/^/    /' "$work/$s.refused.out"
  fi
}

# fork_join: 1 capture, 4 waits, 3 records, 5 launches, 3 streams;
# single: one capture of one kernel, no event; xla, independent: built node
# by node, no capture; to_graph: a capture into a graph with explicit nodes;
# conditional2: its IF body is captured (bodies: counts are minimums);
# nothing: a capture of nothing (a graph of no nodes: minimums too).
for s in fork_join single xla independent to_graph conditional2 nothing host_copy; do pass "$s"; done
refuse single "$work/fork_join.topo" "0 stream waits inside a capture in the trace, the expected topology makes 4"
refuse fork_join "$work/single.topo" "4 stream waits inside a capture in the trace, the expected topology makes 0"
refuse xla "$work/single.topo" "0 capture begins in the trace, the expected topology makes 1"
refuse single "$work/independent.topo" "1 capture begins in the trace, the expected topology makes 0"
refuse nothing "$work/single.topo" "0 launches inside a capture in the trace, the expected topology makes 1"
# A number: a capture with events on at least N streams (the Python scripts).
if bash "$check" "$shim" 3 -- "$probe" fork_join >"$work/n3.out" 2>&1; then
  echo "ok: fork_join passes with 3 streams required"
else
  fail "fork_join with 3 streams required"
  sed 's/^/    /' "$work/n3.out"
fi
refuse fork_join 4 "3 streams doing captured work in the trace, at least 4 expected"
refuse single 1 "0 stream waits inside a capture in the trace, at least 1 expected"
# Bad usage.
bash "$check" "$shim" "$work/absent.topo" -- "$probe" single >"$work/bad.out" 2>&1
[ $? -eq 2 ] && grep -q "must be a .topo file or a number" "$work/bad.out" &&
  echo "ok: a missing topology file is bad usage" || fail "missing topology file: $(cat "$work/bad.out")"

echo "inject_check_cpu: $failed failed"
[ $failed -eq 0 ]
