#!/usr/bin/env bash
# The in-app optimizer end to end without a GPU: optimize_probe (linked
# with the fake libcuda.so.1 of tests/capture, FAKE_CUDA_EXECUTE=1, so its
# graphs compute on the CPU and it checks every result against its own
# reference) runs each scenario under `sgcap run --optimize`. Every run
# must exit 0 with "SCENARIO: OK" (the program saw exactly what its own
# graph computes, whatever the optimizer did), and the log must show the
# decision the scenario is about: swapped after the shadow check, the
# planted wrong result caught and fallen back, updates translated or not,
# graphs refused with their reason, both executable graphs destroyed.
# usage: optimize_cpu.sh SGCAP PROBE FAKE_LIB_DIR WORKDIR
set -u
sgcap=$1 probe=$2 fake=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FAKE_CUDA_EXECUTE=1
unset SGCAP_MODE SGCAP_LOG SGCAP_OPTIMIZE_CHECK SGCAP_OPTIMIZE_FORCE SGCAP_OPTIMIZE_TEST_PLANT \
  SGCAP_SHADOW_MAX_BYTES SGCAP_SNAPSHOT
failed=0
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
ok() { echo "ok: $*"; }

# run NAME [VAR=VALUE...] -- PROBE-ARGS...: the probe under sgcap run
# --optimize; its stdout must end with "SCENARIO: OK".
run() {
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do
    envs+=("$1")
    shift
  done
  shift
  env "${envs[@]}" "$sgcap" run --optimize --out "$work/$name" -- "$probe" "$@" \
    >"$work/$name.stdout" 2>"$work/$name.stderr"
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q "^$1: OK$" "$work/$name.stdout"; then
    fail "$name: exit $rc, stdout: $(tr '\n' ' ' <"$work/$name.stdout")"
    sed 's/^/    /' "$work/$name.stderr" | tail -20
    return 1
  fi
  return 0
}

# has NAME PATTERN WHAT: the run's log holds PATTERN (extended regex)
has() {
  if grep -Eq "$2" "$work/$1.stderr"; then
    ok "$1: $3"
  else
    fail "$1: $3 (no /$2/ in the log)"
    grep 'optimize' "$work/$1.stderr" | sed 's/^/    /' | head -20
  fi
}
lacks() {
  if grep -Eq "$2" "$work/$1.stderr"; then
    fail "$1: $3 (/$2/ in the log)"
    grep -E "$2" "$work/$1.stderr" | sed 's/^/    /' | head -5
  else
    ok "$1: $3"
  fi
}

# Nothing for the passes to change: no optimized graph at all.
if run unchanged -- fork_join 3; then
  has unchanged 'optimize: graph 1: unchanged by the passes' "no optimized graph"
  has unchanged 'summary: optimize: 1 graphs: 0 swapped, 0 kept original, 1 unchanged' "summary"
fi

# The same graph again: decided by its raw digest, no model built.
if run recapture -- recapture 2; then
  has recapture 'summary: optimize: 2 graphs: 0 swapped, 0 kept original, 2 unchanged by the passes .*; 1 decided by digest alone' \
    "the second instantiation decided by digest"
fi

# Forced: E1 is built anyway, checked at the first launch, then launched
# instead of E0 (launches 2 and 3 run E1; the probe checks their results).
if run forced SGCAP_OPTIMIZE_FORCE=1 -- fork_join 3; then
  has forced 'optimize: graph 1 \(exec 0x[0-9a-f]+\): swapped after the shadow check at launch 1' \
    "swapped after the check at launch 1"
  has forced 'summary: optimize: 1 graphs: 1 swapped, 0 kept original' "summary counts it"
  has forced 'summary: optimize: graph 1 .*: swapped: the passes changed nothing \(forced\); 0 fused chains; shadow check [0-9.]+ ms, launch time E1/E0' \
    "per-graph summary line"
fi

# SGCAP_OPTIMIZE_CHECK=N and all.
if run check3 SGCAP_OPTIMIZE_FORCE=1 SGCAP_OPTIMIZE_CHECK=3 -- fork_join 4; then
  has check3 'swapped after the shadow check at launch 3' "checked at launch 3"
fi
if run checkall SGCAP_OPTIMIZE_FORCE=1 SGCAP_OPTIMIZE_CHECK=all -- fork_join 4; then
  has checkall 'summary: optimize: graph 1 .*: swapped: .*shadow checks [0-9.]+ ms in all' \
    "every launch checked"
fi

# The planted wrong result never reaches the program (its result checks
# pass), and the graph falls back for good.
if run plant SGCAP_OPTIMIZE_TEST_PLANT=1 -- fork_join 3; then
  has plant "optimize: graph 1: kept original: E1's result differs from the original's: b[0-9]+ byte [0-9]+ is 0x5c" \
    "the planted result is caught"
  has plant 'summary: optimize: 1 graphs: 0 swapped, 1 kept original' "counted as fallen back"
  lacks plant 'swapped after' "never swapped"
fi
if run plant_all SGCAP_OPTIMIZE_TEST_PLANT=1 SGCAP_OPTIMIZE_CHECK=all -- fork_join 3; then
  has plant_all "kept original: E1's result differs" "caught with every launch checked"
fi

# Passes that change the graph: no forcing needed.
if run events -- events 3; then
  has events 'optimize: graph 1 \(exec 0x[0-9a-f]+\): optimized \(the rewritten graph orders n[0-9]+ before n[0-9]+' \
    "control-deps orders the external record before its wait"
  has events 'swapped after the shadow check at launch 1' "swapped"
fi
if run dealloc -- dealloc 3; then
  has dealloc 'optimize: graph 1 .*: optimized' "defer-dealloc moves the free"
  has dealloc 'swapped after the shadow check at launch 1' \
    "swapped (its graph allocation at a new address, kernels relocated)"
fi

# Fusion in the app: with real PTX for the probe's kernels the fuse pass
# fuses stream 1's k_axpb -> k_square (NVRTC compiles here; the fake driver
# runs the fused kernel as its stages, FAKE_CUDA_FUSED), the shadow check
# passes and E1 runs; a planted wrong result in the fused E1 falls back.
ptx=$(dirname "$0")/../data/fuse/probe_kernels.sm90.ptx
fused=_Z6k_axpbPfPKfffm,_Z8k_squarePfm
if run fuse OPTIMIZE_PROBE_PTX="$ptx" FAKE_CUDA_FUSED=$fused -- fork_join 3; then
  has fuse 'optimize: graph 1 \(exec 0x[0-9a-f]+\): swapped after the shadow check at launch 1' \
    "the fused graph swapped in after its check"
  has fuse 'summary: optimize: graph 1 .*: swapped: .*; 1 fused chain: n1\+n2 \(k_axpb -> k_square\)' \
    "the summary lists the fused chain"
fi
if run fuse_plant OPTIMIZE_PROBE_PTX="$ptx" FAKE_CUDA_FUSED=$fused SGCAP_OPTIMIZE_TEST_PLANT=1 -- fork_join 3; then
  has fuse_plant "kept original: E1's result differs from the original's: b[0-9]+ byte [0-9]+ is 0x5c" \
    "a planted wrong result in the fused graph is caught"
  has fuse_plant 'summary: optimize: graph 1 .*: kept original: .*; 1 fused chain: n1\+n2' \
    "fallen back, its fused chain listed"
  lacks fuse_plant 'swapped after' "never swapped"
fi
# Exec updates of a fused stage: a new scalar is written into the stage's
# slice of the fused kernel's parameters (the probe checks E1's results
# after it); a new element count (a bound the fusion was proven with) falls
# back.
if run fused_update OPTIMIZE_PROBE_PTX="$ptx" FAKE_CUDA_FUSED=$fused -- fused_update; then
  has fused_update 'optimize: graph 1: cuGraphExecKernelNodeSetParams_v2 on node n1 \(stage 0 of fused kernel n1\) translated' \
    "a new scalar of a fused stage translated"
  has fused_update 'kept original: cuGraphExecKernelNodeSetParams_v2 could not follow: node n1 is stage 0 of fused kernel n1: parameter 4 \(byte 24\) changes, and the fusion was proven for its value' \
    "a new bound of a fused stage falls back"
  has fused_update 'summary: optimize: 1 graphs: 0 swapped, 1 kept original.*; 1 exec updates translated, 1 could not follow' \
    "summary counts both"
fi
if run fused_disable OPTIMIZE_PROBE_PTX="$ptx" FAKE_CUDA_FUSED=$fused -- fused_disable; then
  has fused_disable 'kept original: cuGraphNodeSetEnabled could not follow: node n2 is stage 1 of fused kernel n1 in the optimized graph' \
    "disabling a fused stage falls back"
fi
# cuGraphExecUpdate of a graph with a fused chain: the re-capture changes a
# kernel outside the chain (translated, fused stages unchanged); a new
# topology falls back.
if run fuse_exec_update OPTIMIZE_PROBE_PTX="$ptx" FAKE_CUDA_FUSED=$fused -- exec_update; then
  has fuse_exec_update 'optimize: graph 1: cuGraphExecUpdate \(1 nodes changed\) translated' \
    "an update beside a fused chain translated"
  has fuse_exec_update "kept original: the program's cuGraphExecUpdate failed" \
    "a topology-changing update falls back"
fi
# Without FAKE_CUDA_FUSED the fake's fused kernel has no parameters: the
# build refuses it (the layout check of the materializer).
if run fuse_layout OPTIMIZE_PROBE_PTX="$ptx" -- fork_join 2; then
  has fuse_layout 'kept original: building the optimized graph failed: n1: the parameter layout of sgcap_fused_[0-9a-f]+ in the bundle \(2 parameters\) differs from the loaded kernel.s \(0 parameters\)' \
    "a fused kernel whose layout differs is refused"
fi

# Never swapped, with the reason.
if run outlive SGCAP_OPTIMIZE_FORCE=1 -- outlive 2; then
  has outlive "kept original: graph allocation outlives the graph: mem_alloc node n0's \(b[0-9]+, [0-9]+ bytes\)" \
    "an allocation the graph does not free"
fi
if run nccl SGCAP_OPTIMIZE_FORCE=1 -- nccl 2; then
  has nccl 'summary: optimize: 1 graphs: 0 swapped, 1 kept original \(1 NCCL/NVSHMEM kernel\)' \
    "the summary groups the reason"
  has nccl 'kept original: NCCL/NVSHMEM kernel: node n[0-9]+ runs ncclDevKernel_AllReduce_Sum_f32_RING_LL, and its shadow check cannot run a collective twice across ranks' \
    "NCCL graph refused"
fi
if run device_launch SGCAP_OPTIMIZE_FORCE=1 -- device_launch; then
  has device_launch 'kept original: device-launch instantiation' "device-launch flag refused"
fi
if run host SGCAP_OPTIMIZE_FORCE=1 -- host 3; then
  has host 'kept original: host callback: node n[0-9]+ is one, and the shadow check would run it twice' \
    "host callback refused (and it ran once per launch)"
fi
if run shadow_cap SGCAP_OPTIMIZE_FORCE=1 SGCAP_SHADOW_MAX_BYTES=1000 -- fork_join 2; then
  has shadow_cap 'kept original: shadow set over SGCAP_SHADOW_MAX_BYTES=1000: the check would copy [0-9]+ bytes' \
    "a shadow set over the cap"
fi

# Exec updates: translated where the node survives and keeps its buffers,
# else the exec falls back to E0 (every result is checked by the probe).
if run set_params SGCAP_OPTIMIZE_FORCE=1 -- set_params; then
  has set_params 'optimize: graph 1: cuGraphExecKernelNodeSetParams_v2 on node n0 translated' \
    "a new scalar translated"
  has set_params 'optimize: graph 1: cuGraphNodeSetEnabled on node n[0-9]+ translated' \
    "disabling a node translated"
  has set_params 'kept original: cuGraphExecKernelNodeSetParams_v2 could not follow: node n0: parameter 1 \(byte 8\) moves from b[0-9]+ \(0x[0-9a-f]+\) to memory the optimized graph was not checked with' \
    "a new buffer falls back"
  has set_params 'summary: optimize: 1 graphs: 0 swapped, 1 kept original.*; 3 exec updates translated, 1 could not follow' \
    "summary counts the updates"
fi
if run exec_update SGCAP_OPTIMIZE_FORCE=1 -- exec_update; then
  has exec_update 'optimize: graph 1: cuGraphExecUpdate \(1 nodes changed\) translated' \
    "an update with a new scalar translated"
  has exec_update "kept original: the program's cuGraphExecUpdate failed" \
    "a topology-changing update falls back"
fi

# Destroying the program's exec destroys the optimized one with it.
if run destroy SGCAP_OPTIMIZE_FORCE=1 -- destroy; then
  if grep -q '^destroy: live executable graphs 2 -> 0$' "$work/destroy.stdout"; then
    ok "destroy: E0 and E1 both destroyed"
  else
    fail "destroy: $(cat "$work/destroy.stdout")"
  fi
fi

# Loaded through CUDA_INJECTION64_PATH alone, sgcap sees the driver through
# (fake) CUPTI callbacks and cannot replace a launch: it says so and swaps
# nothing.
shim=$(dirname "$sgcap")/../lib/libsgcap.so
if env -u LD_PRELOAD CUDA_INJECTION64_PATH="$shim" SGCAP_MODE=optimize SGCAP_OPTIMIZE_FORCE=1 \
  SGCAP_DIR="$work/injection" "$probe" fork_join 3 >"$work/injection.stdout" 2>"$work/injection.stderr" &&
  grep -q '^fork_join: OK$' "$work/injection.stdout"; then
  has injection 'kept original: CUDA_INJECTION64_PATH alone: sgcap sees the calls through CUPTI and cannot replace' \
    "injection alone: refused, program ran"
else
  fail "injection alone: the probe failed"
  sed 's/^/    /' "$work/injection.stderr" | tail -10
fi

# Capture mode: the optimizer stays out of the way.
if SGCAP_MODE=capture "$sgcap" run --out "$work/capture" -- "$probe" fork_join 2 \
  >"$work/capture.stdout" 2>"$work/capture.stderr"; then
  lacks capture 'optimize:' "SGCAP_MODE=capture: no optimizer"
else
  fail "capture mode: the probe failed"
fi

[ $failed = 0 ] && echo "optimize_cpu: all passed" || echo "optimize_cpu: $failed failed"
[ $failed = 0 ]
