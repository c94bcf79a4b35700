#!/usr/bin/env bash
# coverage_gpu.sh: does sgcap record every graph real programs build, and
# replay what it records? One run on the GPU machine (issue 14), from a
# carried build tree, < 8 minutes on an H200:
#   - every graph-shape sample (single_node, capture_to_graph, explicit_graph,
#     conditional, mem_nodes, host_copy; static, shared and per-thread cudart)
#     and a few older ones, and the framework programs (torch.compile
#     reduce-overhead with user streams, make_graphed_callables, a
#     shared-input capture, JAX jit with and without XLA's preallocated
#     arena, CuPy) run plain and under `sgcap run --snapshot`; the outputs
#     must be the same and the exit summary must say "0 not recorded";
#   - every bundle is replayed with `sgcap replay --validate` in a fresh
#     process: bit-exact, in-process only (with the reason; a graph with a
#     host callback is then also tried with --host-nodes skip), nothing
#     compared (exit 3, with the reason) or a mismatch (with the reason: a
#     second replay tells non-determinism from a missing dependency);
#   - libsgcap loaded through CUDA_INJECTION64_PATH alone (CUPTI callbacks);
#   - the benchmarks: re-capture (target <= 1.05x), instantiate per node
#     (target <= +2 us), eager launch overhead (target >= 0.97).
# Every program has its own timeout; a failure is reported and the run goes
# on. Ends with one table row per workload and a verdict. Exit 0 when nothing
# was left unrecorded, no output changed, no replay mismatched or failed.
#
# usage: tests/gpu/coverage_gpu.sh BUILD_DIR OUT_DIR
#   COVERAGE_BUDGET_S (default 420): stop starting new work after this many
#   seconds; COVERAGE_SKIP_BENCH=1 skips the benchmarks.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: coverage_gpu.sh BUILD_DIR OUT_DIR"; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
sgcap=$build/bin/sgcap
shim=$build/lib/libsgcap.so
for f in "$sgcap" "$shim"; do
  [ -e "$f" ] || { echo "coverage_gpu: $f not built"; exit 2; }
done
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "coverage_gpu: no GPU here (nvidia-smi -L failed)"
  exit 77
fi
start=$(date +%s)
budget=${COVERAGE_BUDGET_S:-420}
elapsed() { echo $(($(date +%s) - start)); }
over_budget() { [ "$(elapsed)" -ge "$budget" ]; }

unset SGCAP_MAX_BUNDLES SGCAP_MAX_VARIANTS SGCAP_SNAPSHOT SGCAP_LOG SGCAP_DIR SGCAP_MODE SGCAP_LOG_FILE LD_PRELOAD \
  CUDA_INJECTION64_PATH
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
export TRITON_CACHE_DIR=$out/triton-cache CUPY_CACHE_DIR=$out/cupy-cache
export TORCHINDUCTOR_CACHE_DIR=$out/inductor-cache
rm -rf "$out/w" "$out/triton-cache" "$out/inductor-cache" "$out/cupy-cache"
mkdir -p "$out/w"
table=$out/table.txt
: >"$table"

echo "== coverage_gpu: $(date -u +%FT%TZ), build $build, output $out"
nvidia-smi -L 2>/dev/null | head -n 2
nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 |
  sed 's/^/driver: /'
timeout 60 python3 -c "
import importlib
for m in ('torch', 'triton', 'jax', 'cupy'):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, 'missing:', type(e).__name__)" 2>/dev/null | tr '\n' ' '
echo
echo "legend: seen/recorded/not-recorded = the shim's exit summary; bundles = distinct graphs"
echo "written; exact = replayed bit-exact in a fresh process; inproc = in-process only (why);"
echo "none = nothing to compare (exit 3, why); MISMATCH = replay differs (why); out = stdout"
echo "of the program with and without the shim"
echo

not_recorded=0 differ=0 mismatch=0 failures=0 workloads=0
tot_exact=0 tot_inproc=0 tot_none=0 tot_err=0

# Facts about one bundle for the details file, one line.
bundle_facts() {
  python3 - "$1" <<'EOF' 2>/dev/null || echo "facts: unreadable"
import json, sys
g = json.load(open(sys.argv[1] + "/graph.json"))
nodes = g["nodes"]
lanes = sorted({n["stream"] for n in nodes if n["stream"] != "explicit"})
expl = sum(1 for n in nodes if n["stream"] == "explicit")
kinds = {}
for b in g.get("buffers", []):
    kinds[b["kind"]] = kinds.get(b["kind"], 0) + 1
imgs = g.get("images", [])
ptx_linked = sum(1 for i in imgs if "ptx-source:" in (i.get("note") or ""))
cubins = sum(1 for i in imgs if i["kind"] == "cubin")
arena = [p["summary"] for p in g.get("pass_log", []) if "arenas" in p["summary"]]
snap = sum(1 for b in g.get("buffers", []) if b.get("after"))
print(f"v{g['version']} nodes={len(nodes)} streams={len(lanes)} explicit={expl} "
      f"edges={len(g['edges'])} buffers={kinds} snapshotted={snap} cubins={cubins} "
      f"cubins_with_triton_ptx={ptx_linked} crosscheck={'ok' if g['crosscheck'].get('ok') else 'BAD'}"
      + (f" arena: {arena[0]}" if arena else ""))
EOF
}

# replay_one BUNDLE: classify its replay; prints "exact", "inproc: why", ...
replay_one() {
  local b=$1 log=$1.replay.log rc why
  timeout 180 "$sgcap" replay "$b" --validate >"$log" 2>&1
  rc=$?
  case $rc in
  0) echo "exact" ;;
  3) echo "none: $(grep -m1 'NOTHING COMPARED' "$log" | sed 's/.*(exit 3): //')" ;;
  124 | 137) echo "ERROR: replay timed out" ;;
  1)
    if grep -q "in-process only" "$log"; then
      why=$(grep -A1 -m1 "in-process only" "$log" | tail -n 1 | sed 's/^ *//' | cut -c1-150)
      if grep -q "host callback" "$log"; then
        timeout 180 "$sgcap" replay "$b" --validate --host-nodes skip >"$b.replay_skip.log" 2>&1
        local src=$?
        case $src in
        0) why="$why; with --host-nodes skip: exact ($(grep -m1 -o '[0-9]* buffers compared.*' "$b.replay_skip.log"))" ;;
        3) why="$why; with --host-nodes skip: nothing compared" ;;
        *) why="$why; with --host-nodes skip: exit $src: $(tail -n 1 "$b.replay_skip.log" | cut -c1-120)" ;;
        esac
      fi
      echo "inproc: $why"
    elif grep -q "MISMATCH" "$log"; then
      echo "MISMATCH: $(grep -m1 -o '[0-9]* buffers compared: .*' "$log"); $(grep -m1 'why:' "$log" | sed 's/.*why: //' | cut -c1-220)"
    else
      echo "ERROR: exit 1: $(grep -m1 'sgcap replay:' "$log" | cut -c1-200)"
    fi
    ;;
  *) echo "ERROR: exit $rc: $(tail -n 1 "$log" | cut -c1-200)" ;;
  esac
}

# run_workload NAME TIMEOUT MODE CMD...: MODE is preload or inject.
run_workload() {
  local name=$1 t=$2 mode=$3
  shift 3
  local dir=$out/w/$name
  if over_budget; then
    printf '%-28s skipped: time budget of %ss used up\n' "$name" "$budget" | tee -a "$table"
    return
  fi
  mkdir -p "$dir"
  workloads=$((workloads + 1))
  (cd "$dir" && timeout "$t" "$@" >plain.out 2>plain.err)
  local prc=$?
  if [ $prc -eq 77 ]; then
    printf '%-28s skipped: %s\n' "$name" "$(tail -n 1 "$dir/plain.out")" | tee -a "$table"
    return
  fi
  local src
  if [ "$mode" = inject ]; then
    (cd "$dir" && SGCAP_DIR=$dir/b SGCAP_SNAPSHOT=1 CUDA_INJECTION64_PATH=$shim timeout "$t" "$@" \
      >shim.out 2>shim.err)
    src=$?
  else
    (cd "$dir" && timeout "$t" "$sgcap" run --snapshot --out "$dir/b" -- "$@" >shim.out 2>shim.err)
    src=$?
  fi
  local same=same
  cmp -s "$dir/plain.out" "$dir/shim.out" || { same=DIFFERS; differ=$((differ + 1)); }
  [ $prc -eq $src ] || same="$same, exit $prc plain vs $src shim"
  [ $src -ne 0 ] && [ $src -eq $prc ] && same="$same (both exit $src)"
  [ $src -eq 124 ] && same="$same, TIMED OUT under the shim"
  [ $src -ne 0 ] && failures=$((failures + 1))
  local sum seen rec nrec why
  sum=$(grep -m1 "summary: graphs:" "$dir/shim.err" | sed 's/.*summary: graphs: //')
  seen=$(echo "$sum" | sed -n 's/^\([0-9]*\) seen.*/\1/p')
  rec=$(echo "$sum" | sed -n 's/.* seen, \([0-9]*\) recorded.*/\1/p')
  nrec=$(echo "$sum" | sed -n 's/.*, \([0-9]*\) not recorded.*/\1/p')
  why=$(echo "$sum" | sed -n 's/.* not recorded (\(.*\))$/\1/p')
  [ -n "$nrec" ] && [ "$nrec" -gt 0 ] && not_recorded=$((not_recorded + nrec))
  local exact=0 inproc=0 none=0 mis=0 err=0 bundles=0 reasons="" b r
  : >"$dir/details.txt"
  for b in "$dir"/b/*.sgraph; do
    [ -d "$b" ] || continue
    bundles=$((bundles + 1))
    r=$(replay_one "$b")
    case $r in
    exact) exact=$((exact + 1)) ;;
    inproc:*) inproc=$((inproc + 1)); reasons="$reasons; $(basename "$b"): $r" ;;
    none:*) none=$((none + 1)); reasons="$reasons; $(basename "$b"): $r" ;;
    MISMATCH:*) mis=$((mis + 1)); reasons="$reasons; $(basename "$b"): $r" ;;
    *) err=$((err + 1)); reasons="$reasons; $(basename "$b"): $r" ;;
    esac
    echo "$(basename "$b"): $(bundle_facts "$b"); replay: $r" >>"$dir/details.txt"
  done
  mismatch=$((mismatch + mis))
  tot_exact=$((tot_exact + exact)) tot_inproc=$((tot_inproc + inproc))
  tot_none=$((tot_none + none)) tot_err=$((tot_err + err))
  printf '%-28s seen %3s rec %3s not-rec %2s | bundles %2d: exact %2d inproc %2d none %2d MISMATCH %d err %d | out %s\n' \
    "$name" "${seen:-?}" "${rec:-?}" "${nrec:-?}" "$bundles" "$exact" "$inproc" "$none" "$mis" "$err" \
    "$same" | tee -a "$table"
  [ -n "$why" ] && echo "    not recorded: $why" | tee -a "$table"
  [ -n "$reasons" ] && echo "$reasons" | sed 's/^; //' | tr ';' '\n' | sed 's/^ */    /' |
    head -n 12 | tee -a "$table"
  grep -h "summary: code:" "$dir/shim.err" | sed 's/.*summary: /    /' | cut -c1-230
  grep -h "loaded through CUDA_INJECTION64_PATH" "$dir/shim.err" | head -n 1 | sed 's/.*sgcap\[[0-9]*\]: /    /'
  if [ "$same" != same ]; then
    diff "$dir/plain.out" "$dir/shim.out" | head -n 6 | sed 's/^/    out: /'
    tail -n 4 "$dir/shim.err" | sed 's/^/    err: /'
  fi
  sed 's/^/    /' "$dir/details.txt" >>"$out/details.txt"
}

echo "== 1. graph-shape samples and older ones ($(elapsed) s)"
samples=$build/samples
for s in single_node capture_to_graph explicit_graph conditional mem_nodes host_copy; do
  for v in "" _shared _ptds; do
    [ -x "$samples/$s$v" ] || { echo "$s$v: not built"; failures=$((failures + 1)); continue; }
    run_workload "$s$v" 120 preload "$samples/$s$v"
  done
done
for s in fork_join async_alloc; do
  run_workload "$s" 120 preload "$samples/$s"
done
run_workload recapture_x50 120 preload "$samples/recapture" --iters 50

if [ "${COVERAGE_SKIP_BENCH:-0}" != 1 ]; then
  echo
  echo "== 2. benchmarks ($(elapsed) s)"
  ROUNDS=5 timeout 150 bash "$root/bench/bench_recapture.sh" "$build" 3000 2>&1 | tee "$out/bench_recapture.txt" ||
    echo "bench_recapture: failed or timed out"
  ROUNDS=3 timeout 150 bash "$root/bench/bench_capture.sh" "$build" 2>&1 | grep -v "^$" | tee "$out/bench_capture.txt" ||
    echo "bench_capture: failed or timed out"
  ROUNDS=5 timeout 90 bash "$root/bench/launch_overhead.sh" "$build" 100000 2>&1 | tail -n 4 | tee "$out/launch_overhead.txt" ||
    echo "launch_overhead: failed or timed out"
fi

echo
echo "== 3. frameworks ($(elapsed) s)"
fw=$here/frameworks
# most telling first: the time budget may stop the last ones
run_workload torch_compile_streams 300 preload python3 "$fw/torch_compile_streams.py"
run_workload jax_jit 240 preload python3 "$fw/jax_jit.py"
run_workload jax_jit_no_prealloc 240 preload env XLA_PYTHON_CLIENT_PREALLOCATE=false python3 "$fw/jax_jit.py"
run_workload torch_graphed_callables 240 preload python3 "$fw/torch_graphed_callables.py"
run_workload cupy_elementwise 240 preload python3 "$fw/cupy_elementwise.py"
run_workload torch_shared_input 240 preload python3 "$fw/torch_shared_input.py"
run_workload torch_two_stream 240 preload python3 "$here/torch_two_stream.py"
run_workload cupy_fork_join 240 preload python3 "$here/cupy_fork_join.py"

echo
echo "== 4. loaded through CUDA_INJECTION64_PATH alone (no LD_PRELOAD) ($(elapsed) s)"
run_workload inject_fork_join 120 inject "$samples/fork_join"
run_workload inject_explicit_graph 120 inject "$samples/explicit_graph"
run_workload inject_torch_two_stream 240 inject python3 "$here/torch_two_stream.py"

echo
echo "== table ($(elapsed) s; per-bundle facts in $out/details.txt, logs under $out/w)"
cat "$table"
echo
echo "coverage_gpu: $workloads workloads; graphs not recorded: $not_recorded (must be 0); outputs" \
  "differing: $differ (must be 0); programs failing under the shim: $failures"
echo "coverage_gpu: replays: $tot_exact bit-exact, $tot_inproc in-process only, $tot_none" \
  "compared nothing, $mismatch MISMATCH, $tot_err errors"
if [ "$not_recorded" -eq 0 ] && [ "$differ" -eq 0 ] && [ "$mismatch" -eq 0 ] && [ "$tot_err" -eq 0 ] &&
  [ "$failures" -eq 0 ]; then
  echo "coverage_gpu: PASS"
  exit 0
fi
echo "coverage_gpu: FAIL (see the rows above)"
exit 1
