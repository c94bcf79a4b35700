#!/usr/bin/env bash
# The in-app optimizer (SGCAP_MODE=optimize, issue 13) on a GPU, from a build
# tree that may have been moved: every sample binary in the build (static,
# shared and per-thread cudart, driver_api), the PyTorch eager capture,
# torch.compile(mode="reduce-overhead") and the two CuPy scripts, each run
#   plain                     no shim: the stdout and exit code to match
#   optimize                  sgcap run --optimize (graphs the passes change are swapped)
#   forced                    ... SGCAP_OPTIMIZE_FORCE=1: every graph that may be swapped gets
#                             an optimized exec, is shadow-checked and swapped
#   plant                     ... SGCAP_OPTIMIZE_TEST_PLANT=1: every optimized exec computes a
#                             wrong result; it must never reach the program
# Every optimized run must print exactly what the plain run printed and exit
# the same way; the summary's counts of swapped graphs are reported; with the
# plant, 0 graphs may be swapped and every graph that got an optimized exec
# must have fallen back ("E1's result differs"). The exec_update sample
# (forced) must also show its updates translated and its topology change
# falling back. Fusion in the app: the fusion benchmark's chain
# (bench/fusion_chain --result: no times, a hash of every buffer the program
# can read, so the same stdout means bit-exact) in both builds and both forms
# must show its graph swapped with "1 fused chain" under optimize, and the
# CuPy ElementwiseKernel chain at least one fused chain (NVRTC source
# recompiled in the app). Programs run side by side (OPTIMIZE_GPU_JOBS,
# default 8).
#
# usage: tests/gpu/optimize_gpu.sh BUILD_DIR OUT_DIR [--only NAME]
# Exit 0 when everything passed, 1 on any failure, 77 when nothing ran.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: optimize_gpu.sh BUILD_DIR OUT_DIR [--only NAME]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
shift 2
only=""
[ "${1:-}" = "--only" ] && only=${2:-}
sgcap=$build/bin/sgcap
[ -x "$sgcap" ] && [ -e "$build/lib/libsgcap.so" ] || { echo "optimize_gpu: not built in $build"; exit 2; }
jobs=${OPTIMIZE_GPU_JOBS:-8}
unset SGCAP_MODE SGCAP_LOG SGCAP_OPTIMIZE_CHECK SGCAP_OPTIMIZE_FORCE SGCAP_OPTIMIZE_TEST_PLANT \
  SGCAP_SHADOW_MAX_BYTES SGCAP_SNAPSHOT SGCAP_DIR
# Bundles are not what this test is about: count graphs, write none.
export SGCAP_MAX_BUNDLES=0
mkdir -p "$out/runs"

# summary_counts FILE: "N S K U V" = graphs, swapped, kept original,
# unchanged, never checked, from the optimizer's exit summary
summary_counts() {
  sed -n 's/.*summary: optimize: \([0-9]*\) graphs: \([0-9]*\) swapped, \([0-9]*\) kept original.*, \([0-9]*\) unchanged by the passes.*, \([0-9]*\) optimized but never checked.*/\1 \2 \3 \4 \5/p' \
    "$1" | head -n 1
}

# check NAME TIMEOUT CMD...: the four runs of one program; writes
# $out/runs/NAME.result ("ok ..." / "FAIL ..." / "skip ...")
check() {
  local name=$1 limit=$2
  shift 2
  local d=$out/runs/$name res=$out/runs/$name.result
  mkdir -p "$d"
  # Each run gets an empty CuPy kernel cache (harmless to other programs): a
  # kernel CuPy loads from its disk cache was not compiled by NVRTC in this
  # process, so the app holds no PTX of it and it cannot be fused in the app
  # (docs/FUSION.md); what is tested here is the NVRTC path.
  CUPY_CACHE_DIR=$d/cupy-cache.plain timeout "$limit" "$@" >"$d/plain.stdout" 2>"$d/plain.stderr"
  local prc=$?
  if [ $prc -eq 77 ]; then
    echo "skip $(tail -n 1 "$d/plain.stdout")" >"$res"
    return
  fi
  local problems="" facts=""
  [ $prc -eq 0 ] || problems="$problems [plain run exits $prc]"
  local mode
  for mode in optimize forced plant; do
    local envs=(CUPY_CACHE_DIR="$d/cupy-cache.$mode")
    [ $mode = forced ] && envs+=(SGCAP_OPTIMIZE_FORCE=1)
    [ $mode = plant ] && envs+=(SGCAP_OPTIMIZE_TEST_PLANT=1)
    env "${envs[@]}" timeout "$limit" "$sgcap" run --optimize --out "$d/bundles" -- "$@" \
      >"$d/$mode.stdout" 2>"$d/$mode.stderr"
    local rc=$?
    [ $rc -eq $prc ] || problems="$problems [$mode: exit $rc, plain $prc]"
    cmp -s "$d/plain.stdout" "$d/$mode.stdout" ||
      problems="$problems [$mode: stdout differs from the plain run]"
    local counts
    counts=$(summary_counts "$d/$mode.stderr")
    if [ -z "$counts" ]; then
      # a program that instantiates no graph has no summary
      grep -q 'optimize:' "$d/$mode.stderr" && problems="$problems [$mode: no optimizer summary]"
      facts="$facts $mode: no graphs;"
      continue
    fi
    local n s k u v
    read -r n s k u v <<<"$counts"
    facts="$facts $mode: $s/$n swapped;"
    if [ $mode = plant ]; then
      # every graph kept its original: none swapped, none left unchanged
      # (the plant forces an optimized exec), each one refused or caught
      [ "$s" = 0 ] || problems="$problems [plant: $s graphs swapped with a wrong result planted]"
      [ "$u" = 0 ] || problems="$problems [plant: $u graphs without an optimized exec]"
      [ $((k + v)) -eq "$n" ] || problems="$problems [plant: $k kept original + $v never checked of $n]"
      local caught
      caught=$(sed -n "s/.*summary: optimize: [0-9]* graphs: .*[(;] *\([0-9]*\) E1's result differs.*/\1/p" \
        "$d/$mode.stderr" | head -n 1)
      facts="${facts%;} (${caught:-0} caught by the check, $((k - ${caught:-0})) refused before, $v never launched);"
    fi
  done
  if [ -n "$problems" ]; then
    echo "FAIL$problems;$facts" >"$res"
  else
    echo "ok$facts" >"$res"
  fi
}

running=0
spawn() { # NAME TIMEOUT CMD...
  [ -z "$only" ] || [ "$only" = "$1" ] || return 0
  check "$@" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
}

started=$(date +%s)
# Python programs first (the longest), then the samples.
py=python3
spawn torch_compile_streams 300 $py "$here/frameworks/torch_compile_streams.py"
spawn torch_two_stream 240 $py "$here/torch_two_stream.py"
spawn cupy_fork_join 240 $py "$here/cupy_fork_join.py"
spawn cupy_elementwise 240 $py "$here/frameworks/cupy_elementwise.py"
for variant in sm90 default; do
  for mode in live dead; do
    [ -x "$build/bench/fusion_chain_$variant" ] &&
      spawn "fusion_${variant}_$mode" 180 "$build/bench/fusion_chain_$variant" --mode "$mode" \
        --launches 20 --result
  done
done
for bin in "$build"/samples/*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  b=$(basename "$bin")
  case "$b" in *.so | *.so.*) continue ;; esac
  args=()
  case "${b%_shared}" in recapture | recapture_ptds) args=(--iters 200) ;; esac
  spawn "$b" 120 "$bin" "${args[@]}"
done
wait

# The exec_update sample, forced: what happened to each kind of update.
if [ -z "$only" ] || [ "$only" = exec_update ]; then
  log=$out/runs/exec_update/forced.stderr
  if [ -f "$log" ]; then
    r=$out/runs/exec_update_decisions.result
    missing=""
    grep -q 'cuGraphExecKernelNodeSetParams_v2 on node n[0-9]* translated' "$log" ||
      missing="$missing [no kernel-node update translated]"
    grep -q 'cuGraphExecUpdate ([0-9]* nodes changed) translated' "$log" ||
      missing="$missing [no graph update translated]"
    grep -q "kept original: the program's cuGraphExecUpdate failed" "$log" ||
      missing="$missing [the topology change did not fall back]"
    grep -q 'graph 2 (exec 0x[0-9a-f]*): swapped after the shadow check' "$log" ||
      missing="$missing [the re-instantiated graph was not swapped]"
    if [ -z "$missing" ]; then
      echo "ok kernel-node and graph updates translated, the topology change fell back, the new exec swapped" >"$r"
    else
      echo "FAIL$missing" >"$r"
    fi
  fi
fi

# Fusion in the app: the optimize run's summary names the fused chain and
# the graph was swapped in (its stdout, compared above, is the bit-exact part).
fused_check() { # NAME PATTERN WHAT
  local log=$out/runs/$1/optimize.stderr r=$out/runs/$1_fused.result
  [ -z "$only" ] || [ "$only" = "$1" ] || return 0
  [ -f "$log" ] || return 0
  if grep -Eq "$2" "$log"; then
    echo "ok $3: $(grep -Eo '[0-9]+ fused chains?[^;]*' "$log" | head -n 1)" >"$r"
  else
    echo "FAIL $3 not seen: $(grep -E 'summary: optimize: graph' "$log" | head -n 2 | tr '\n' ' ')" >"$r"
  fi
}
for variant in sm90 default; do
  for mode in live dead; do
    fused_check "fusion_${variant}_$mode" 'summary: optimize: graph [0-9]+ .*: swapped: .*; 1 fused chain: ' \
      "swapped with its chain fused in the app"
  done
done
fused_check cupy_elementwise 'summary: optimize: graph [0-9]+ .*; [1-9][0-9]* fused chains?: ' \
  "a CuPy chain fused in the app (NVRTC source)"

pass=0 failed=0 skipped=0
for r in "$out"/runs/*.result; do
  [ -f "$r" ] || continue
  name=$(basename "$r" .result)
  line=$(cat "$r")
  case $line in
  ok*) pass=$((pass + 1)); printf '%-32s ok    %s\n' "$name" "${line#ok}" ;;
  skip*) skipped=$((skipped + 1)); printf '%-32s skip  %s\n' "$name" "${line#skip }" ;;
  *) failed=$((failed + 1)); printf '%-32s FAIL  %s\n' "$name" "${line#FAIL}" ;;
  esac
done
echo "optimize_gpu: $pass passed, $failed failed, $skipped skipped in $(($(date +%s) - started)) s (logs: $out/runs)"
[ $failed -eq 0 ] || exit 1
[ $pass -gt 0 ] || exit 77
exit 0
