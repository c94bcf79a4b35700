#!/usr/bin/env bash
# all_gpu.sh: every GPU check and benchmark of sgcap in one call on the GPU
# machine, within a wall-clock budget, from a build tree carried there.
#
#   tests/gpu/all_gpu.sh BUILD_DIR OUT_DIR [GROUP...]
#
# Correctness groups run side by side (they share the GPU; none of them
# times anything), then the timing groups run one at a time on an otherwise
# idle GPU. Each group writes OUT_DIR/logs/GROUP.log; a progress line is
# printed as each group ends (in the order they end). The end prints a
# table, the failure lines of each failed group's log (FAIL, MISMATCH,
# error), the last lines of each log, and packs every log into
# OUT_DIR/logs.tgz. Groups (default: all, in this order):
#   correctness: inject capture replay e2e fuse_all sass coverage optimize nccl access
#   timing:      fusion_bench launch_overhead recapture capture_bench optimize_bench
#   NAME=COMMAND: an ad-hoc group NAME running COMMAND (bash, in the
#                 repository root) with the correctness groups
# ALL_GPU_BUDGET_S (default 560): no group starts after this many seconds,
# and running ones are stopped then (their logs are kept). A group whose
# script does not exist in this tree is reported as "absent", not as passed.
# Nothing is lost when the whole call is killed: logs.tgz is repacked every
# ALL_GPU_PACK_S seconds (default 20) and whenever a group ends, and on
# TERM, INT or HUP the running groups are stopped, the summary is printed
# (those groups "KILLED") and the logs are packed before exiting 143.
# ALL_GPU_PACK_TO=DIR also keeps a copy of logs.tgz in DIR (the device
# call's $OUT, say, when OUT_DIR with its bundles is too big to bring back).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: all_gpu.sh BUILD_DIR OUT_DIR [GROUP...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2/logs" && out=$(cd "$2" && pwd) || exit 2
shift 2
budget=${ALL_GPU_BUDGET_S:-560}
# The correctness groups share the GPU: JAX, run by three of them, would
# take 75% of its memory per process by default (XLA's preallocated pool),
# and a replay of another group then could not even create its context
# (seen once: cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY). JAX still
# preallocates, from a smaller share; a caller's own setting wins.
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.15}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0

correct=(inject capture replay e2e fuse_all sass coverage optimize nccl access)
timing=(fusion_bench launch_overhead recapture capture_bench optimize_bench)
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=("${correct[@]}" "${timing[@]}")

declare -A adhoc
for a in "${groups[@]}"; do
  case $a in *=*) adhoc[${a%%=*}]=${a#*=} ;; esac
done
groups=("${groups[@]%%=*}")

# GROUP -> command (empty when the script is absent here)
cmd_of() {
  local g=$1 w=$out/work/$1
  if [ -n "${adhoc[$g]:-}" ]; then
    echo "${adhoc[$g]}"
    return
  fi
  case $g in
  inject) [ -f "$here/inject_gpu.sh" ] && echo "SKIP_BENCH=1 bash $here/inject_gpu.sh $build" ;;
  capture) [ -f "$here/capture_gpu.sh" ] && echo "bash $here/capture_gpu.sh $build --keep $w" ;;
  replay) [ -f "$here/replay_gpu.sh" ] && echo "SGCAP_REPLAY_OUT=$w bash $here/replay_gpu.sh $build" ;;
  e2e) [ -f "$here/e2e_replay.sh" ] && echo "bash $here/e2e_replay.sh $build $w" ;;
  fuse_all) [ -f "$here/fuse_all.sh" ] && echo "bash $here/fuse_all.sh $build $w" ;;
  sass) [ -f "$here/sass_torch.sh" ] && echo "bash $here/sass_torch.sh $build $w" ;;
  coverage) [ -f "$here/coverage_gpu.sh" ] &&
    echo "COVERAGE_SKIP_BENCH=1 COVERAGE_BUDGET_S=$((budget - 60)) bash $here/coverage_gpu.sh $build $w" ;;
  optimize) [ -f "$here/optimize_gpu.sh" ] && echo "bash $here/optimize_gpu.sh $build $w" ;;
  nccl) [ -f "$here/nccl_gpu.sh" ] && echo "bash $here/nccl_gpu.sh $build $w" ;;
  access) [ -f "$here/access_gpu.sh" ] && echo "bash $here/access_gpu.sh $build $w" ;;
  fusion_bench) [ -f "$root/bench/fusion_bench.sh" ] && echo "bash $root/bench/fusion_bench.sh $build $w" ;;
  launch_overhead) [ -f "$root/bench/launch_overhead.sh" ] && echo "bash $root/bench/launch_overhead.sh $build" ;;
  recapture) [ -f "$root/bench/bench_recapture.sh" ] && echo "bash $root/bench/bench_recapture.sh $build" ;;
  capture_bench) [ -f "$root/bench/bench_capture.sh" ] && echo "bash $root/bench/bench_capture.sh $build" ;;
  optimize_bench) [ -f "$root/bench/bench_optimize.sh" ] && echo "bash $root/bench/bench_optimize.sh $build $w" ;;
  *) return 1 ;;
  esac
}

declare -A status pid t0
running=()
pack() { # logs.tgz, replaced whole (a reader never sees half a tarball)
  (cd "$out" && tar -czf logs.tgz.part logs 2>/dev/null && mv -f logs.tgz.part logs.tgz)
  if [ -n "${ALL_GPU_PACK_TO:-}" ]; then
    cp -f "$out/logs.tgz" "$ALL_GPU_PACK_TO/logs.tgz.part" 2>/dev/null &&
      mv -f "$ALL_GPU_PACK_TO/logs.tgz.part" "$ALL_GPU_PACK_TO/logs.tgz"
  fi
}
launch() { # GROUP
  local g=$1 c
  c=$(cmd_of "$g") || { status[$g]="unknown group"; return; }
  if [ -z "$c" ]; then status[$g]="absent"; return; fi
  if [ "$(left)" -le 10 ]; then status[$g]="not started (budget)"; return; fi
  mkdir -p "$out/work/$g"
  t0[$g]=$(date +%s)
  ( cd "$root" && exec timeout -k 5 "$(left)" bash -c "$c" ) >"$out/logs/$g.log" 2>&1 &
  pid[$g]=$!
  running+=("$g")
}
finish() { # GROUP: it has ended (or is ending): its status, a progress line
  local g=$1 rc
  wait "${pid[$g]}"; rc=$?
  local secs=$(($(date +%s) - ${t0[$g]}))
  case $rc in
  0) status[$g]="pass (${secs}s)" ;;
  77) status[$g]="skipped: $(tail -n 1 "$out/logs/$g.log" | cut -c1-80)" ;;
  124 | 137) status[$g]="STOPPED at the budget (${secs}s)" ;;
  *) status[$g]="FAIL rc=$rc (${secs}s)" ;;
  esac
  local still=()
  for r in "${running[@]}"; do [ "$r" = "$g" ] || still+=("$r"); done
  running=("${still[@]}")
  printf '== all_gpu: %-16s %s; at %ss, %d still running\n' "$g" "${status[$g]}" \
    "$(( $(date +%s) - start ))" "${#running[@]}"
  pack
}
# Wait for every running group, finishing each as it ends.
drain() {
  while [ ${#running[@]} -gt 0 ]; do
    local g ended=""
    for g in "${running[@]}"; do
      kill -0 "${pid[$g]}" 2>/dev/null || { ended=$g; break; }
    done
    if [ -n "$ended" ]; then finish "$ended"; else sleep 1; fi
  done
}
summary() {
  echo
  echo "== all_gpu: summary ($(( $(date +%s) - start ))s)"
  for g in "${groups[@]}"; do printf '  %-16s %s\n' "$g" "${status[$g]:-?}"; done
  for g in "${groups[@]}"; do
    case ${status[$g]:-} in pass* | absent | skipped* | "not started"*) continue ;; esac
    [ -f "$out/logs/$g.log" ] || continue
    echo; echo "== $g (failure lines of logs/$g.log)"
    # (counts of none, "0 MISMATCH" or "MISMATCH 0", are no failure)
    grep -E 'FAIL|MISMATCH|[Ee]rror|not recorded: ' "$out/logs/$g.log" |
      grep -vE '(^|[^0-9])0 MISMATCH([^:]|$)|MISMATCH 0( |$)' | head -n "${ALL_GPU_FAIL_LINES:-40}"
  done
  for g in "${groups[@]}"; do
    [ -f "$out/logs/$g.log" ] || continue
    echo; echo "== $g (last lines of logs/$g.log)"
    tail -n "${ALL_GPU_TAIL:-25}" "$out/logs/$g.log"
  done
}
on_signal() {
  trap - TERM INT HUP
  echo "== all_gpu: stopped by a signal after $(( $(date +%s) - start ))s; stopping ${running[*]:-nothing}"
  local g
  # timeout leads a process group of its own: the group is the whole tree
  for g in "${running[@]}"; do kill -TERM -- -"${pid[$g]}" "${pid[$g]}" 2>/dev/null; done
  sleep 2
  for g in "${running[@]}"; do
    kill -KILL -- -"${pid[$g]}" "${pid[$g]}" 2>/dev/null
    status[$g]="KILLED by the signal ($(( $(date +%s) - ${t0[$g]} ))s)"
  done
  running=()
  [ -n "${packer:-}" ] && kill "$packer" 2>/dev/null
  summary
  pack
  exit 143
}
trap on_signal TERM INT HUP

echo "== all_gpu: $(date -u +%FT%TZ) budget ${budget}s, build $build"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader 2>/dev/null
# the logs so far, packed every ALL_GPU_PACK_S seconds until the end
( trap - TERM INT HUP; while sleep "${ALL_GPU_PACK_S:-20}"; do pack; done ) &
packer=$!
is_correct() {
  local c
  [ -n "${adhoc[$1]:-}" ] && return 0
  for c in "${correct[@]}"; do [ "$1" = "$c" ] && return 0; done
  return 1
}
is_timing() {
  local c
  for c in "${timing[@]}"; do [ "$1" = "$c" ] && return 0; done
  return 1
}
for g in "${groups[@]}"; do
  if is_correct "$g"; then launch "$g"; elif ! is_timing "$g"; then status[$g]="unknown group"; fi
done
drain
for g in "${groups[@]}"; do
  if is_timing "$g"; then
    launch "$g"
    drain
  fi
done
kill "$packer" 2>/dev/null
wait "$packer" 2>/dev/null
summary
pack
bad=0
for g in "${groups[@]}"; do case ${status[$g]:-} in pass* | absent | skipped*) ;; *) bad=1 ;; esac; done
exit $bad
