#!/usr/bin/env bash
# replay_gpu.sh: the tests of `sgcap replay`, run from a build tree that may
# have been carried to another path (nothing here depends on where the tree
# was configured). ctest runs one step per test (tests/gpu/replay.cmake);
# by hand, run them all:
#
#   tests/gpu/replay_gpu.sh BUILD_DIR            # every step, GPU needed
#   tests/gpu/replay_gpu.sh BUILD_DIR cli        # the steps that need no GPU
#   tests/gpu/replay_gpu.sh BUILD_DIR make validate ...
#
# Steps: cli, fake (no GPU: fake runs replay against a pretend libcuda that
# executes the kernels on the CPU) | make (writes the GPU bundles: run it
# first) | validate | corrupt | relocate | alloc | bench | vs | profile |
# host | fakecc | fakegpu.
# Bundles and outputs go to $SGCAP_REPLAY_OUT (default BUILD_DIR/replay-gpu).
# Each command runs under a timeout ($SGCAP_REPLAY_TIMEOUT s, default 120).
# Prints "PASS step" / "FAIL step: why" and exits 1 if any step failed.
set -u
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 BUILD_DIR [STEP...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
steps=("$@")
if [ ${#steps[@]} -eq 0 ]; then
  steps=(cli fake make validate corrupt relocate alloc bench vs profile host fakecc fakegpu)
fi
sgcap=$build/bin/sgcap
mk=$build/bin/replay_make_bundle
out=${SGCAP_REPLAY_OUT:-$build/replay-gpu}
limit=${SGCAP_REPLAY_TIMEOUT:-120}
mkdir -p "$out"
failed=0
log=""

# run EXPECTED_RC CMD...: runs CMD with the timeout, keeps its output in
# $log (and shows it), and checks its exit code.
run() {
  local want=$1
  shift
  echo "+ $*"
  log=$(timeout "$limit" "$@" 2>&1)
  local rc=$?
  printf '%s\n' "$log"
  if [ "$rc" -ne "$want" ]; then
    echo "  (exit code $rc, expected $want)"
    return 1
  fi
  return 0
}

# expect TEXT: the last run's output contains TEXT (a grep -E pattern)
expect() {
  if ! printf '%s\n' "$log" | grep -Eq -- "$1"; then
    echo "  (output lacks: $1)"
    return 1
  fi
}

need() {
  for f in "$@"; do
    if [ ! -e "$f" ]; then
      echo "  ($f is missing: build it, or run the make step first)"
      return 1
    fi
  done
}

step_cli() {
  need "$sgcap" || return 1
  run 2 "$sgcap" replay "$out/no-such.sgraph" || return 1
  expect "no-such" || return 1
  run 2 "$sgcap" replay --bench zero "$out/x.sgraph" || return 1
  run 0 "$sgcap" replay --help || return 1
  expect "usage: sgcap replay" || return 1
  # a host node: in-process only, decided before any GPU is touched
  local b=$out/cli_host.sgraph
  rm -rf "$b" && mkdir -p "$b"
  cat >"$b/graph.json" <<'JSON'
{"format": "sgcap-bundle", "version": 1,
 "streams": [{"id": 0}],
 "nodes": [{"id": 0, "type": "empty", "stream": 0, "seq": 0},
           {"id": 1, "type": "host", "stream": 0, "seq": 1, "host": {"fn": "0x401000"}}],
 "edges": [{"id": 0, "from": 0, "to": 1, "kind": "stream"}]}
JSON
  run 1 "$sgcap" replay "$b" || return 1
  expect "in-process only" || return 1
  expect "n1 .*host callback 0x401000" || return 1
}

step_fake() {
  local fb=$build/bin/replay_fake_bundle lib=$build/tests/replay-fake
  need "$sgcap" "$fb" "$lib/libcuda.so.1" || return 1
  local fake=(env "LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$sgcap" replay)
  run 0 "$fb" "$out/fake.sgraph" || return 1
  run 0 "$fb" "$out/fake_alloc.sgraph" --alloc || return 1
  run 0 "$fb" "$out/fake_corrupt.sgraph" --corrupt || return 1
  run 0 "${fake[@]}" "$out/fake.sgraph" --validate --timings || return 1
  expect "8 buffers at their recorded addresses, 0 relocated" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  # restores that land late (pageable cuMemcpyHtoD): replay must wait for
  # them before it launches (the H200 showed it once in 50 replays)
  run 0 env FAKE_CUDA_LAZY_HTOD=1 "${fake[@]}" "$out/fake.sgraph" --validate || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  run 0 "${fake[@]}" "$out/fake.sgraph" --validate --relocate -v || return 1
  expect "0 buffers at their recorded addresses, 8 relocated" || return 1
  expect "param 2 @24" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  run 0 "${fake[@]}" "$out/fake_alloc.sgraph" --validate -v || return 1
  expect "1 allocated by the graph" || return 1
  expect "mem_free" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  run 1 "${fake[@]}" "$out/fake_corrupt.sgraph" --validate || return 1
  expect "b5 .*MISMATCH: 1 of 16384 bytes differ, first at byte 5461" || return 1
  expect "why: two replays agree with each other" || return 1
  # The recorded range is kept free from the start: a driver that takes
  # address space at cuInit (FAKE_CUDA_OCCUPY) then lands elsewhere; without
  # the early reservation it takes the range and the buffers move.
  local span
  span=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["buffers"]; lo=min(int(x["address"],16) for x in b); print("%#x:%#x" % (lo & ~0x1fffff, 4 << 20))' "$out/fake.sgraph/graph.json") || return 1
  run 0 env "FAKE_CUDA_OCCUPY=$span" "${fake[@]}" "$out/fake.sgraph" --validate || return 1
  expect "8 buffers at their recorded addresses, 0 relocated" || return 1
  expect "1 of 1 region placed at its recorded address \(1 of 1 kept free from the start, 0 already taken" || return 1
  run 0 env "FAKE_CUDA_OCCUPY=$span" "${fake[@]}" "$out/fake.sgraph" --validate --no-reserve || return 1
  expect "0 buffers at their recorded addresses, 8 relocated" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  # Taken before main in a randomized layout: replay runs itself again without
  # address randomization, where the range is free.
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    run 0 env "OCCUPY_AT=$span" "LD_PRELOAD=$lib/libreplay_occupy.so" "${fake[@]}" \
      "$out/fake.sgraph" --validate || return 1
    expect "re-ran itself without address randomization" || return 1
    expect "8 buffers at their recorded addresses, 0 relocated" || return 1
  else
    echo "  (personality(ADDR_NO_RANDOMIZE) refused here: re-run not tested)"
  fi
  # Pageable host memory in a copy node: allocated at its address, restored,
  # and compared like any buffer.
  run 0 "$fb" "$out/fake_host.sgraph" --host || return 1
  run 0 "${fake[@]}" "$out/fake_host.sgraph" --validate || return 1
  expect "9 buffers at their recorded addresses, 0 relocated" || return 1
  expect "b8 +64 B +match" || return 1
  expect "9 buffers compared: 9 match, 0 MISMATCH" || return 1
  run 0 "${fake[@]}" "$out/fake_host.sgraph" --validate --relocate || return 1
  expect "9 buffers compared: 9 match, 0 MISMATCH" || return 1
  # A host callback: in-process only, unless --host-nodes skip, which then
  # leaves out what the callback may influence (the host buffer) and says so.
  run 0 "$fb" "$out/fake_hostnode.sgraph" --host-node || return 1
  run 1 "${fake[@]}" "$out/fake_hostnode.sgraph" --validate || return 1
  expect "in-process only" || return 1
  expect "--host-nodes skip replays without it" || return 1
  run 0 "${fake[@]}" "$out/fake_hostnode.sgraph" --validate --host-nodes skip || return 1
  expect "1 host callbacks left out" || return 1
  expect "b8 .*not compared: may depend on a host callback that --host-nodes skip left out" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH; 1 not compared" || return 1
  run 0 "${fake[@]}" "$out/fake.sgraph" --bench 50 || return 1
  expect "median [0-9.]+ us per launch \(50 launches" || return 1
  run 0 "${fake[@]}" "$out/fake.sgraph" --vs "$out/fake_alloc.sgraph" --bench 20 || return 1
  expect "bench: ratio" || return 1
  # A code image whose bytes are not its recorded hash is never loaded.
  rm -rf "$out/fake_damaged.sgraph"
  cp -r "$out/fake.sgraph" "$out/fake_damaged.sgraph"
  local img
  img=$(ls "$out/fake_damaged.sgraph/code/"*) || return 1
  printf 'not the captured code' >"$img"
  run 2 "${fake[@]}" "$out/fake_damaged.sgraph" --validate || return 1
  expect "its bytes hash to [0-9a-f]+, not to images\[0\]\.hash" || return 1
}

step_make() {
  need "$mk" || return 1
  run 0 "$mk" "$out/fj.sgraph" --bench 200 || return 1
  run 0 "$mk" "$out/fj_corrupt.sgraph" --corrupt || return 1
  run 0 "$mk" "$out/fj_alloc.sgraph" --alloc || return 1
  run 0 "$mk" "$out/fj_host.sgraph" --host-node || return 1
  run 0 "$mk" "$out/fj_cc80.sgraph" --fake-cc 8.0 || return 1
}

step_validate() {
  need "$out/fj.sgraph" || return 1
  run 0 "$sgcap" replay "$out/fj.sgraph" --validate --timings || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  # same-VA is the default; say so loudly if the addresses were not had,
  # but the validation above is what must hold
  if ! printf '%s\n' "$log" | grep -q "8 buffers at their recorded addresses, 0 relocated"; then
    echo "  NOTE: the recorded addresses were not all available; memory was relocated"
  fi
}

step_corrupt() {
  need "$out/fj_corrupt.sgraph" || return 1
  run 1 "$sgcap" replay "$out/fj_corrupt.sgraph" --validate || return 1
  expect "b5 .*MISMATCH: 1 of [0-9]+ bytes differ" || return 1
  expect "7 match, 1 MISMATCH" || return 1
  # one flipped bit is far beyond any small ULP tolerance
  run 1 "$sgcap" replay "$out/fj_corrupt.sgraph" --validate --tolerance ulp=4 || return 1
  expect "MISMATCH: 1 of [0-9]+ float32 elements beyond 4 ULP" || return 1
}

step_relocate() {
  need "$out/fj.sgraph" || return 1
  run 0 "$sgcap" replay "$out/fj.sgraph" --validate --relocate -v || return 1
  expect "0 buffers at their recorded addresses, 8 relocated" || return 1
  # 5 kernels of 2-3 pointers, the two k_poly structs' bias pointer, 3 node addresses
  expect "relocation: [1-9][0-9]* kernel parameter words, 3 node addresses" || return 1
  expect "param 2 @24" || return 1 # k_poly's Coeffs.bias: struct at 16, pointer at +8
  expect "heuristic" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
}

step_alloc() {
  need "$out/fj_alloc.sgraph" || return 1
  run 0 "$sgcap" replay "$out/fj_alloc.sgraph" --validate -v || return 1
  expect "1 allocated by the graph" || return 1
  expect "8 buffers compared: 8 match, 0 MISMATCH" || return 1
  expect "b8 .*not compared: no after-snapshot" || return 1
  run 0 "$sgcap" replay "$out/fj_alloc.sgraph" --validate --relocate || return 1
  expect "8 match, 0 MISMATCH" || return 1
}

step_bench() {
  need "$out/fj.sgraph" || return 1
  run 0 "$sgcap" replay "$out/fj.sgraph" --bench 1000 || return 1
  expect "bench: .*median [0-9.]+ us per launch \(1000 launches" || return 1
}

step_vs() {
  need "$out/fj.sgraph" "$out/fj_alloc.sgraph" || return 1
  run 0 "$sgcap" replay "$out/fj.sgraph" --vs "$out/fj_alloc.sgraph" --bench 500 || return 1
  expect "bench: ratio .* = [0-9.]+" || return 1
}

step_profile() {
  need "$out/fj.sgraph" || return 1
  rm -rf "$out/fj_prof.sgraph" && cp -r "$out/fj.sgraph" "$out/fj_prof.sgraph" || return 1
  run 0 "$sgcap" replay "$out/fj_prof.sgraph" --profile --trace "$out/fj.trace.json" || return 1
  expect "every record matched to a node" || return 1
  expect "node durations stored in" || return 1
  # the durations are in the bundle, and it still reads and replays
  grep -q '"duration_ns"' "$out/fj_prof.sgraph/graph.json" || {
    echo "  (graph.json has no duration_ns)"
    return 1
  }
  run 0 "$sgcap" replay "$out/fj_prof.sgraph" --validate || return 1
  run 0 python3 "$here/replay/check_trace.py" "$out/fj.trace.json" --tracks 3 --overlap s1 s2 ||
    return 1
}

step_host() {
  need "$out/fj_host.sgraph" || return 1
  run 1 "$sgcap" replay "$out/fj_host.sgraph" --validate || return 1
  expect "in-process only" || return 1
  expect "host callback 0x401234" || return 1
}

step_fakecc() {
  need "$out/fj_cc80.sgraph" || return 1
  run 2 "$sgcap" replay "$out/fj_cc80.sgraph" --validate || return 1
  expect "sm_80" || return 1
  expect "--force" || return 1
  run 0 "$sgcap" replay "$out/fj_cc80.sgraph" --validate --force || return 1
  expect "8 match, 0 MISMATCH" || return 1
}

# The same bundle said to come from another GPU model, then another driver:
# refused (exit 2) with a message naming both and --force; --force replays.
step_fakegpu() {
  need "$out/fj.sgraph" || return 1
  for what in name driver; do
    rm -rf "$out/fj_$what.sgraph"
    cp -r "$out/fj.sgraph" "$out/fj_$what.sgraph"
    python3 - "$out/fj_$what.sgraph/graph.json" "$what" <<'PY' || return 1
import json, sys
path, what = sys.argv[1], sys.argv[2]
g = json.load(open(path))
if what == "name":
    g["device"]["name"] = "NVIDIA A100-SXM4-80GB"
else:
    g["device"]["driver_version"] = 12080
json.dump(g, open(path, "w"))
PY
    run 2 "$sgcap" replay "$out/fj_$what.sgraph" --validate || return 1
    expect "--force" || return 1
    run 0 "$sgcap" replay "$out/fj_$what.sgraph" --validate --force || return 1
    expect "8 match, 0 MISMATCH" || return 1
  done
}

for s in "${steps[@]}"; do
  if ! declare -f "step_$s" >/dev/null; then
    echo "FAIL $s: no such step"
    failed=1
    continue
  fi
  echo "=== replay.$s"
  if "step_$s"; then
    echo "PASS replay.$s"
  else
    echo "FAIL replay.$s"
    failed=1
  fi
done
exit $failed
