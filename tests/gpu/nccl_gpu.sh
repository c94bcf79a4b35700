#!/usr/bin/env bash
# nccl_gpu.sh: NCCL inside captured graphs, on the GPU machine (issue 15,
# docs/NCCL.md), from a carried build tree, in under 3 minutes on one H200:
#   - the kernel names of the NCCL the programs load (the nvidia-nccl-cu13
#     package's libnccl.so.2): every one told as NCCL's by graph/comm.c's
#     rule (test_comm against that library);
#   - tests/gpu/nccl/nccl_allreduce (ncclCommInitAll, one rank per GPU, a
#     captured all_reduce between compute on two streams) and
#     tests/gpu/frameworks/torch_dist_allreduce.py (torch.distributed NCCL,
#     one process per GPU, all_reduce on an event-joined side stream), each
#     plain and under `sgcap run --snapshot`: same stdout and exit code;
#     every graph recorded (each exit summary says "0 not recorded"); bundle
#     names and records carry the rank and device (torch: .rank<R>, the
#     records' capture.rank; every bundle: device.ordinal; .dev<D> when a
#     process sees several GPUs); the compute and comm streams are joined by
#     event edges; `sgcap check` exits 0; `sgcap inspect` and `sgcap dot`
#     work, and label NCCL kernels where there are any; `sgcap replay
#     --validate` is bit-exact, or, for a graph with NCCL kernels (two or
#     more ranks), in-process only with the NCCL reason and nothing else;
#   - with NCCL_TESTS_BUILD=DIR (an nccl-tests build made by hand on the GPU
#     machine; this project holds none of its code): `all_reduce_perf -b 8
#     -e 1M -f 4 -g 1 -G 5 -c 1` plain and under the shim: same exit code,
#     the same rows with no wrong values, every graph recorded, check clean,
#     every bundle replayed.
# With one GPU NCCL lowers the collective to copies: no NCCL kernel appears,
# the graphs are plain and must replay bit-exact. One verdict line per
# workload; exit 0 when every workload passed (77 without a GPU).
#
# usage: tests/gpu/nccl_gpu.sh BUILD_DIR OUT_DIR
#   NCCL_TESTS_BUILD=DIR   also run DIR/all_reduce_perf
#   NCCL_LIB_DIR=DIR       where libnccl.so.2 is (default: the nvidia-nccl-cu13 package)
#   NCCL_GPU_BUDGET_S=N    start no workload after N seconds (default 170)
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: nccl_gpu.sh BUILD_DIR OUT_DIR"; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
sgcap=$build/bin/sgcap
for f in "$sgcap" "$build/lib/libsgcap.so"; do
  [ -e "$f" ] || { echo "nccl_gpu: $f not built"; exit 2; }
done
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "nccl_gpu: no GPU here (nvidia-smi -L failed)"
  exit 77
fi
start=$(date +%s)
budget=${NCCL_GPU_BUDGET_S:-170}
over_budget() { [ $(($(date +%s) - start)) -ge "$budget" ]; }

# The shim's settings and a launcher's rank come from this script only.
unset SGCAP_MAX_BUNDLES SGCAP_MAX_VARIANTS SGCAP_SNAPSHOT SGCAP_LOG SGCAP_DIR SGCAP_MODE SGCAP_LOG_FILE LD_PRELOAD \
  CUDA_INJECTION64_PATH RANK LOCAL_RANK WORLD_SIZE OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK \
  SLURM_PROCID
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1

# libnccl.so.2 of the nvidia-nccl-cu13 package (its module or a glob over
# site-packages), unless NCCL_LIB_DIR says where.
find_nccl() {
  python3 - <<'EOF' 2>/dev/null
import glob, os, site, sys
dirs = []
try:
    import nvidia.nccl as m
    dirs += [os.path.join(p, "lib") for p in getattr(m, "__path__", [])]
except Exception:
    pass
for s in site.getsitepackages() + [site.getusersitepackages()]:
    dirs.append(os.path.join(s, "nvidia", "nccl", "lib"))
for d in dirs:
    if glob.glob(os.path.join(d, "libnccl.so.2")):
        print(d)
        sys.exit(0)
sys.exit(1)
EOF
}
libdir=${NCCL_LIB_DIR:-$(find_nccl)}
if [ -z "$libdir" ] || [ ! -e "$libdir/libnccl.so.2" ]; then
  echo "nccl_gpu: no libnccl.so.2 (install nvidia-nccl-cu13, or set NCCL_LIB_DIR)"
  exit 77
fi
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
nccl_version=$(python3 -c "
import ctypes
v = ctypes.c_int()
ctypes.CDLL('$libdir/libnccl.so.2').ncclGetVersion(ctypes.byref(v))
print('%d.%d.%d' % (v.value // 10000, v.value // 100 % 100, v.value % 100))" 2>/dev/null)

echo "== nccl_gpu: $(date -u +%FT%TZ), build $build, output $out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 2
echo "NCCL ${nccl_version:-?} from $libdir; $gpus GPU(s): $( [ "$gpus" -ge 2 ] && echo "NCCL kernels expected" || echo "one rank: collectives lowered to copies, no NCCL kernel expected")"
echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
echo

verdicts=$out/verdicts.txt
: >"$verdicts"
failed=0
verdict() { # NAME TEXT...
  local name=$1
  shift
  printf '%-22s %s\n' "$name:" "$*" | tee -a "$verdicts"
  case $* in PASS* | skipped*) ;; *) failed=$((failed + 1)) ;; esac
}

# ---- the kernel names of the NCCL the programs load -------------------------------------
names_log=$out/names.log
if [ -x "$build/bin/test_comm" ]; then
  if SGCAP_TEST_NCCL_LIB=$libdir/libnccl.so.2 "$build/bin/test_comm" >"$names_log" 2>&1; then
    verdict kernel-names "PASS: $(grep -o '[0-9]* cubins, [0-9]* NCCL kernels, [0-9]* one-rank reductions' "$names_log" | head -n 1) in NCCL ${nccl_version:-?}, all told apart"
  else
    verdict kernel-names "FAIL: $(grep -m1 -i 'is not told\|told as\|error' "$names_log" | cut -c1-200)"
  fi
else
  verdict kernel-names "FAIL: $build/bin/test_comm not built"
fi

# ---- one bundle ----------------------------------------------------------------------------

# replay_one BUNDLE: "exact", "nccl" (in-process only for NCCL kernels;
# "nccl, also: WHY" when other nodes have reasons of their own), "empty"
# (the graph touches no memory: nothing to compare) or "BAD: why".
replay_one() {
  local b=$1 log=$1.replay.log rc
  timeout 120 "$sgcap" replay "$b" --validate >"$log" 2>&1
  rc=$?
  case $rc in
  0) grep -q 'validate: [0-9]* buffers\? compared: [0-9]* match, 0 MISMATCH' "$log" && echo exact ||
    echo "BAD: exit 0 without a comparison line" ;;
  1)
    if grep -q 'in-process only' "$log"; then
      local reasons others
      reasons=$(sed -n '/in-process only/,$p' "$log" | grep '^  n')
      others=$(echo "$reasons" | grep -v 'is an NCCL kernel: a communicator cannot be rebuilt offline')
      local first
      first=$(echo "$others" | head -n 1 | sed 's/^ *//' | cut -c1-160)
      if [ -z "$reasons" ]; then echo "BAD: in-process only, no reason given"
      elif [ "$reasons" = "$others" ]; then echo "BAD: in-process only: $first"
      elif [ -z "$others" ]; then echo nccl
      else echo "nccl, also: $first"
      fi
    else
      echo "BAD: $(grep -m1 'MISMATCH\|why:\|sgcap replay:' "$log" | cut -c1-160)"
    fi
    ;;
  3)
    # a graph that touches no memory (nccl-tests' in-place captures with one
    # rank are empty) has nothing to compare; anything else must compare
    if grep -q 'NOTHING COMPARED.*touches no memory sgcap knows of' "$log"; then echo empty; else
      echo "BAD: nothing compared: $(grep -m1 'NOTHING COMPARED' "$log" | sed 's/.*(exit 3): //' | cut -c1-140)"
    fi
    ;;
  124 | 137) echo "BAD: replay timed out" ;;
  *) echo "BAD: exit $rc: $(tail -n 1 "$log" | cut -c1-160)" ;;
  esac
}

# facts BUNDLE RANKED: one line about the bundle, "BAD: ..." when its name
# and records disagree (RANKED=1: a launcher's rank must be in both) or its
# streams are not joined by event edges (when it has several streams).
facts() {
  python3 - "$1" "$2" <<'EOF' 2>&1 || true
import json, os, re, sys
b, ranked = sys.argv[1], sys.argv[2] == "1"
name = os.path.basename(b.rstrip("/"))
g = json.load(open(os.path.join(b, "graph.json")))
rank = g.get("capture", {}).get("rank", -1)
ordinal = g.get("device", {}).get("ordinal", -1)
bad = []
m = re.search(r"\.rank(\d+)\.", name)
if ranked and not m:
    bad.append("no .rank<R> in the name")
if m and int(m.group(1)) != rank:
    bad.append("name says rank %s, record %s" % (m.group(1), rank))
if not m and rank >= 0:
    bad.append("record has rank %d, the name none" % rank)
m = re.search(r"\.dev(\d+)\.", name)
if m and int(m.group(1)) != ordinal:
    bad.append("name says device %s, record %s" % (m.group(1), ordinal))
if ordinal < 0:
    bad.append("no device.ordinal")
nodes = g["nodes"]
streams = sorted({n["stream"] for n in nodes if n["stream"] != "explicit"})
lanes = " ".join("s%d[%s]" % (s, ",".join(n["type"] for n in sorted(
    (x for x in nodes if x["stream"] == s), key=lambda x: x["seq"]))) for s in streams)
events = [e for e in g["edges"] if e["kind"] == "event"]
nccl = [n["kernel"]["name"] for n in nodes if n["type"] == "kernel" and
        re.search(r"(^|\d)nccl", n["kernel"]["name"])]
work = sum(1 for n in nodes if n["type"] in ("kernel", "memcpy", "memset", "host", "child_graph",
                                              "conditional", "opaque"))
if len(streams) > 1 and len(events) < 2:
    bad.append("%d streams joined by %d event edges" % (len(streams), len(events)))
head = "BAD: " + "; ".join(bad) + " | " if bad else ""
print("%sv%d rank=%d device=%d nodes=%d work=%d %s event_edges=%d nccl_kernels=%d" % (
    head, g["version"], rank, ordinal, len(nodes), work, lanes, len(events), len(nccl)))
EOF
}

# ---- one workload ---------------------------------------------------------------------------

# summary_of ERRFILE: "seen recorded not_recorded" summed over every process
# that printed an exit summary, then the number of such processes.
summary_of() {
  grep -h "summary: graphs:" "$1" | sed 's/.*summary: graphs: //' | awk '
    { seen += $1; rec += $3; n++
      for (i = 2; i < NF; i++) if ($(i) == "not" && $(i+1) ~ /^recorded/) { nrec += $(i-1); break } }
    END { printf "%d %d %d %d\n", seen, rec, nrec, n }'
}

# run_workload NAME TIMEOUT RANKED FILTER CMD...: FILTER turns stdout into
# what must be the same with and without the shim ("cat": all of it).
run_workload() {
  local name=$1 t=$2 ranked=$3 filter=$4
  shift 4
  local dir=$out/$name
  if over_budget; then
    verdict "$name" "FAIL: not run, the time budget of ${budget}s was used up"
    return
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && timeout "$t" "$@" >plain.out 2>plain.err)
  local prc=$?
  if [ $prc -eq 77 ]; then
    verdict "$name" "skipped: $(tail -n 1 "$dir/plain.out")"
    return
  fi
  (cd "$dir" && timeout "$t" "$sgcap" run --snapshot --out "$dir/b" -- "$@" >shim.out 2>shim.err)
  local src=$?
  local bad=() note=()
  [ $prc -eq 0 ] || bad+=("plain run exit $prc: $(tail -n 1 "$dir/plain.err" | cut -c1-120)")
  [ $src -eq $prc ] || bad+=("exit $prc plain, $src under the shim")
  $filter <"$dir/plain.out" >"$dir/plain.cmp"
  $filter <"$dir/shim.out" >"$dir/shim.cmp"
  cmp -s "$dir/plain.cmp" "$dir/shim.cmp" || bad+=("stdout differs: $(diff "$dir/plain.cmp" "$dir/shim.cmp" | sed -n 2p | cut -c1-100)")
  [ -s "$dir/plain.cmp" ] || bad+=("no output to compare")
  local seen rec nrec procs
  read -r seen rec nrec procs < <(summary_of "$dir/shim.err")
  [ "$procs" -gt 0 ] || bad+=("no exit summary from the shim")
  [ "$nrec" -eq 0 ] || bad+=("$nrec graphs not recorded: $(grep -h -m1 'not recorded (' "$dir/shim.err" | sed 's/.*not recorded (//' | cut -c1-120)")
  [ "$seen" -eq "$rec" ] || bad+=("$seen graphs seen, $rec recorded")
  local bundles=0 exact=0 nccl=0 empty=0 checked=0 drawn=0 b r f
  : >"$dir/details.txt"
  for b in "$dir"/b/*.sgraph; do
    [ -d "$b" ] || continue
    bundles=$((bundles + 1))
    f=$(facts "$b" "$ranked")
    case $f in BAD:*) bad+=("$(basename "$b"): ${f#BAD: }") ;; esac
    if "$sgcap" check "$b" >"$b.check.txt" 2>&1; then checked=$((checked + 1)); else
      bad+=("$(basename "$b"): check exit $?: $(tail -n 1 "$b.check.txt" | cut -c1-100)")
    fi
    "$sgcap" inspect "$b" >"$b.inspect.txt" 2>&1 || bad+=("$(basename "$b"): inspect failed")
    if "$sgcap" dot "$b" -o "$b.dot" >"$b.dot.log" 2>&1 && grep -q '^digraph' "$b.dot"; then
      drawn=$((drawn + 1))
    else
      bad+=("$(basename "$b"): dot failed: $(tail -n 1 "$b.dot.log" | cut -c1-80)")
    fi
    # a bundle with NCCL kernels: labelled in inspect and dot
    case $f in *nccl_kernels=0*) ;; *)
      grep -q '\[NCCL\]' "$b.inspect.txt" || bad+=("$(basename "$b"): NCCL kernels not labelled by inspect")
      grep -q 'NCCL kernel' "$b.dot" || bad+=("$(basename "$b"): NCCL kernels not labelled by dot") ;;
    esac
    r=$(replay_one "$b")
    case $r in
    exact) exact=$((exact + 1)) ;;
    nccl*)
      nccl=$((nccl + 1))
      case $f in *nccl_kernels=0*) bad+=("$(basename "$b"): an NCCL refusal without an NCCL kernel") ;; esac
      ;;
    empty)
      empty=$((empty + 1))
      case $f in *" work=0 "*) ;; *) bad+=("$(basename "$b"): nothing compared, yet it has nodes that work") ;; esac
      ;;
    *) bad+=("$(basename "$b"): replay: ${r#BAD: }") ;;
    esac
    echo "$(basename "$b"): $f; replay: $r" >>"$dir/details.txt"
  done
  [ $bundles -gt 0 ] || bad+=("no bundle written")
  note+=("exit $prc/$src, graphs $seen seen $rec recorded $nrec not recorded ($procs processes)")
  note+=("bundles $bundles: check clean $checked, replay bit-exact $exact, in-process only (NCCL) $nccl, empty (nothing to compare) $empty, drawn $drawn")
  if [ ${#bad[@]} -eq 0 ]; then
    verdict "$name" "PASS: $(IFS=';'; echo "${note[*]}" | sed 's/;/; /g')"
  else
    verdict "$name" "FAIL: $(IFS='|'; echo "${bad[*]}" | sed 's/|/ | /g' | cut -c1-600)"
    echo "    $(IFS=';'; echo "${note[*]}" | sed 's/;/; /g')" | tee -a "$verdicts"
  fi
  sed 's/^/    /' "$dir/details.txt" | head -n 8
}

# all_reduce_perf's rows without their timings: size, count, type and op,
# then every later column that is not a time or a bandwidth (no '.'): the
# root (-1) where the version prints one, and the #wrong counts; the
# out-of-bounds line.
nccl_tests_rows() {
  awk '/^ *[0-9]+ +[0-9]+ +[a-z0-9_]+ +[a-z]+ / {
         line = $1 " " $2 " " $3 " " $4 " wrong"
         for (i = 5; i <= NF; i++) if ($(i) !~ /\./) line = line " " $(i)
         print line
       }
       /Out of bounds values/ { print }'
}

# ---- the workloads --------------------------------------------------------------------------

if [ -x "$build/tests/gpu/nccl_allreduce" ]; then
  run_workload nccl_allreduce 60 0 cat "$build/tests/gpu/nccl_allreduce" --launches 5
else
  verdict nccl_allreduce "FAIL: $build/tests/gpu/nccl_allreduce not built (nccl.h not found at configure time)"
fi

if python3 -c "import torch" 2>/dev/null; then
  run_workload torch_dist_allreduce 150 1 cat python3 "$here/frameworks/torch_dist_allreduce.py"
else
  verdict torch_dist_allreduce "skipped: no torch here"
fi

if [ -n "${NCCL_TESTS_BUILD:-}" ]; then
  perf=$NCCL_TESTS_BUILD/all_reduce_perf
  if [ -x "$perf" ]; then
    run_workload nccl-tests 120 0 nccl_tests_rows "$perf" -b 8 -e 1M -f 4 -g 1 -G 5 -c 1
    if [ -f "$out/nccl-tests/plain.cmp" ]; then
      wrong=$(awk '$5 == "wrong" { for (i = 6; i <= NF; i++) if ($(i) != "0" && $(i) != "-1" && $(i) != "N/A") { print; break } }' \
        "$out/nccl-tests/plain.cmp" | wc -l)
      rows=$(grep -c ' wrong ' "$out/nccl-tests/plain.cmp")
      echo "    all_reduce_perf: $rows sizes, $wrong with wrong values; graphs seen: $(summary_of "$out/nccl-tests/shim.err" | cut -d' ' -f1) (nccl-tests makes 24 with these flags, 15 edgeless)" |
        tee -a "$verdicts"
      [ "$wrong" -eq 0 ] && [ "$rows" -gt 0 ] || failed=$((failed + 1))
    fi
  else
    verdict nccl-tests "FAIL: $perf is not an executable"
  fi
else
  verdict nccl-tests "skipped: NCCL_TESTS_BUILD not set"
fi

echo
echo "== nccl_gpu: $(($(date +%s) - start))s, $failed failed"
cat "$verdicts"
[ $failed -eq 0 ]
