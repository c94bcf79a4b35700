#!/usr/bin/env bash
# bench_optimize.sh: what the in-app optimizer (SGCAP_MODE=optimize) costs
# and gains, side by side in one run on one GPU.
#
#   bench/bench_optimize.sh BUILD_DIR OUT_DIR [ROUNDS]
#
# 1. Nothing to gain (bench/bench_optimize: --graphs distinct 1000-node
#    fork/join graphs the ordering passes leave as they are), in rounds that
#    alternate four ways of running it: plain; `sgcap run` (capture);
#    `sgcap run --optimize`; and --optimize with SGCAP_OPTIMIZE_FORCE=1 (an
#    optimized exec built, checked and launched anyway, for information).
#    Reported, medians over the rounds:
#      launch time ratio optimize / capture and optimize / plain, GPU time
#      per launch (target 1.00 +- 0.02: no optimized exec, so the same work
#      by construction) and host time per cudaGraphLaunch;
#      instantiate cost the optimizer adds per node: (optimize - capture) /
#      nodes, and the whole shim's (optimize - plain) / nodes (target <= 20
#      us per node).
#    Bundles are counted, not written (SGCAP_MAX_BUNDLES=0), in every run.
# 2. The fusion benchmark's graph (bench/fusion_chain, live form) launched
#    1000 times back to back, end to end: plain against --optimize, rounds
#    alternating. The target, optimize <= plain / (0.9 x the offline fused
#    speedup), needs the fused graph inside the app, which the fuse pass
#    cannot give yet (it compiles with NVRTC through code/nvlib.c, which the
#    shim cannot use): reported as not available, with the ratio measured.
# Tests never assert on time: this prints the targets' status and exits 0
# when every run was correct, 1 when a run failed or computed a wrong result.
set -u
build=$(cd "${1:?usage: bench_optimize.sh BUILD_DIR OUT_DIR [ROUNDS]}" && pwd) || exit 2
out=${2:?usage: bench_optimize.sh BUILD_DIR OUT_DIR [ROUNDS]}
rounds=${3:-5}
mkdir -p "$out" && out=$(cd "$out" && pwd)
sgcap=$build/bin/sgcap
bench=$build/bench/bench_optimize
chain=$build/bench/fusion_chain_sm90
for f in "$sgcap" "$bench"; do
  [ -x "$f" ] || { echo "bench_optimize: $f is missing (build the tree with CUDA first)" >&2; exit 2; }
done
unset SGCAP_MODE SGCAP_LOG SGCAP_OPTIMIZE_CHECK SGCAP_OPTIMIZE_FORCE SGCAP_OPTIMIZE_TEST_PLANT SGCAP_SNAPSHOT
export SGCAP_MAX_BUNDLES=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
failed=0
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | head -n 1; }
median() { sort -g | awk '{a[NR]=$1} END{if (!NR) print "nan"; else print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }

# run WAY LOG PROGRAM ARGS...: the program the WAY says, its stdout into LOG
run() {
  local way=$1 log=$2
  shift 2
  case $way in
  plain) timeout 300 "$@" >"$log" 2>"$log.err" ;;
  capture) timeout 300 "$sgcap" run --out "$out/bundles" -- "$@" >"$log" 2>"$log.err" ;;
  optimize) timeout 300 "$sgcap" run --optimize --out "$out/bundles" -- "$@" >"$log" 2>"$log.err" ;;
  forced) SGCAP_OPTIMIZE_FORCE=1 timeout 300 "$sgcap" run --optimize --out "$out/bundles" -- "$@" \
    >"$log" 2>"$log.err" ;;
  esac
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "bench_optimize: $way run of $(basename "$1") exited $rc (see $log.err)"
    failed=1
  fi
}

# ---- 1. nothing to gain ----
ways=(plain capture optimize forced)
nodes=1000
for r in $(seq "$rounds"); do
  for w in "${ways[@]}"; do
    run "$w" "$out/nothing.$w.$r" "$bench" --nodes $nodes --graphs 5 --launches 2000
  done
done
declare -A inst gpu host
for w in "${ways[@]}"; do
  inst[$w]=$(cat "$out"/nothing.$w.[0-9]* 2>/dev/null | field instantiate_us | median)
  gpu[$w]=$(cat "$out"/nothing.$w.[0-9]* 2>/dev/null | field launch_gpu_us | median)
  host[$w]=$(cat "$out"/nothing.$w.[0-9]* 2>/dev/null | field launch_host_us | median)
  printf 'nothing fusable, %-8s instantiate %10s us  launch %8s us GPU  %8s us host\n' "$w" \
    "${inst[$w]}" "${gpu[$w]}" "${host[$w]}"
done
grep -h 'summary: optimize: [0-9]* graphs' "$out"/nothing.optimize.1.err "$out"/nothing.forced.1.err 2>/dev/null |
  sed 's/^/  /'
awk -v io="${inst[optimize]}" -v ic="${inst[capture]}" -v ip="${inst[plain]}" \
  -v go="${gpu[optimize]}" -v gc="${gpu[capture]}" -v gp="${gpu[plain]}" -v gf="${gpu[forced]}" \
  -v ho="${host[optimize]}" -v hc="${host[capture]}" -v hp="${host[plain]}" -v n=$nodes 'BEGIN{
  r = go / gc; rp = go / gp;
  printf "nothing fusable: launch time optimize/capture %.3f (GPU), %.3f (host); optimize/plain %.3f (GPU), %.3f (host); forced E1/capture %.3f (GPU) [target 1.00 +- 0.02: %s]\n",
    r, ho / hc, rp, ho / hp, gf / gc, (r >= 0.98 && r <= 1.02) ? "met" : "NOT MET";
  a = (io - ic) / n; b = (io - ip) / n;
  printf "nothing fusable: instantiate cost added per node: %.2f us by the optimizer (optimize - capture), %.2f us by the whole shim (optimize - plain) [target <= 20 us: %s]\n",
    a, b, (b <= 20) ? "met" : "NOT MET" }'

# ---- 2. the fusion benchmark's graph, 1000 launches end to end ----
if [ -x "$chain" ]; then
  for r in $(seq "$rounds"); do
    for w in plain optimize; do
      run "$w" "$out/chain.$w.$r" "$chain" --mode live --launches 1000 --e2e
    done
  done
  cp=$(cat "$out"/chain.plain.[0-9]* | field e2e_ms | median)
  co=$(cat "$out"/chain.optimize.[0-9]* | field e2e_ms | median)
  grep -h 'summary: optimize: [0-9]* graphs' "$out"/chain.optimize.1.err 2>/dev/null | sed 's/^/  /'
  awk -v p="$cp" -v o="$co" 'BEGIN{
    printf "fusion chain, 1000 launches end to end: plain %.1f ms, optimize %.1f ms, ratio %.3f\n", p, o, o / p;
    print "fusion chain target (optimize <= plain / (0.9 x offline fused speedup)): not available: the fuse pass does not run inside the app yet (it needs NVRTC from the shim'"'"'s real entry points), so there is nothing fused to launch" }'
else
  echo "fusion chain: $chain not built: skipped"
fi
[ $failed -eq 0 ] && echo "bench_optimize: every run correct" || echo "bench_optimize: some runs FAILED"
exit $failed
