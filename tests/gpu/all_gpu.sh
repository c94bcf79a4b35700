#!/usr/bin/env bash
# all_gpu.sh: every GPU check and benchmark of sgcap in one call on the GPU
# machine, within a wall-clock budget, from a build tree carried there.
#
#   tests/gpu/all_gpu.sh BUILD_DIR OUT_DIR [GROUP...]
#
# Correctness groups run side by side (they share the GPU; none of them
# times anything), then the timing groups run one at a time on an otherwise
# idle GPU. Each group writes OUT_DIR/logs/GROUP.log and one status line;
# the end prints a table, the last lines of each log, and packs every log
# into OUT_DIR/logs.tgz. Groups (default: all, in this order):
#   correctness: inject capture replay e2e fuse_all sass coverage optimize nccl
#   timing:      fusion_bench launch_overhead recapture capture_bench optimize_bench
# ALL_GPU_BUDGET_S (default 560): no group starts after this many seconds,
# and running ones are stopped then (their logs are kept). A group whose
# script does not exist in this tree is reported as "absent", not as passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: all_gpu.sh BUILD_DIR OUT_DIR [GROUP...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2/logs" && out=$(cd "$2" && pwd) || exit 2
shift 2
budget=${ALL_GPU_BUDGET_S:-560}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0

correct=(inject capture replay e2e fuse_all sass coverage optimize nccl)
timing=(fusion_bench launch_overhead recapture capture_bench optimize_bench)
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=("${correct[@]}" "${timing[@]}")

# GROUP -> command (empty when the script is absent here)
cmd_of() {
  local g=$1 w=$out/work/$1
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
  fusion_bench) [ -f "$root/bench/fusion_bench.sh" ] && echo "bash $root/bench/fusion_bench.sh $build $w" ;;
  launch_overhead) [ -f "$root/bench/launch_overhead.sh" ] && echo "bash $root/bench/launch_overhead.sh $build" ;;
  recapture) [ -f "$root/bench/bench_recapture.sh" ] && echo "bash $root/bench/bench_recapture.sh $build" ;;
  capture_bench) [ -f "$root/bench/bench_capture.sh" ] && echo "bash $root/bench/bench_capture.sh $build" ;;
  optimize_bench) [ -f "$root/bench/bench_optimize.sh" ] && echo "bash $root/bench/bench_optimize.sh $build $w" ;;
  *) return 1 ;;
  esac
}

declare -A status pid t0
launch() { # GROUP
  local g=$1 c
  c=$(cmd_of "$g") || { status[$g]="unknown group"; return; }
  if [ -z "$c" ]; then status[$g]="absent"; return; fi
  if [ "$(left)" -le 10 ]; then status[$g]="not started (budget)"; return; fi
  mkdir -p "$out/work/$g"
  t0[$g]=$(date +%s)
  ( cd "$root" && exec timeout -k 5 "$(left)" bash -c "$c" ) >"$out/logs/$g.log" 2>&1 &
  pid[$g]=$!
}
finish() { # GROUP
  local g=$1 rc
  wait "${pid[$g]}"; rc=$?
  local secs=$(($(date +%s) - ${t0[$g]}))
  case $rc in
  0) status[$g]="pass (${secs}s)" ;;
  77) status[$g]="skipped: $(tail -n 1 "$out/logs/$g.log" | cut -c1-80)" ;;
  124 | 137) status[$g]="STOPPED at the budget (${secs}s)" ;;
  *) status[$g]="FAIL rc=$rc (${secs}s)" ;;
  esac
}

echo "== all_gpu: $(date -u +%FT%TZ) budget ${budget}s, build $build"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader 2>/dev/null
par=()
for g in "${groups[@]}"; do
  for c in "${correct[@]}"; do [ "$g" = "$c" ] && par+=("$g"); done
done
for g in "${par[@]}"; do launch "$g"; done
for g in "${par[@]}"; do [ -n "${pid[$g]:-}" ] && finish "$g"; done
for g in "${groups[@]}"; do
  for c in "${timing[@]}"; do
    if [ "$g" = "$c" ]; then
      launch "$g"
      [ -n "${pid[$g]:-}" ] && finish "$g"
    fi
  done
done

echo
echo "== all_gpu: summary ($(( $(date +%s) - start ))s)"
for g in "${groups[@]}"; do printf '  %-16s %s\n' "$g" "${status[$g]:-?}"; done
for g in "${groups[@]}"; do
  [ -f "$out/logs/$g.log" ] || continue
  echo; echo "== $g (last lines of logs/$g.log)"
  tail -n "${ALL_GPU_TAIL:-25}" "$out/logs/$g.log"
done
(cd "$out" && tar -czf logs.tgz logs 2>/dev/null)
bad=0
for g in "${groups[@]}"; do case ${status[$g]:-} in pass* | absent | skipped*) ;; *) bad=1 ;; esac; done
exit $bad
