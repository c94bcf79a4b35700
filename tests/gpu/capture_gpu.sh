#!/usr/bin/env bash
# Every GPU check of capture/ in one go, from a build tree that may have been
# moved (no ctest, no absolute paths): each sample binary (static, shared and
# per-thread-stream cudart, and driver_api) under `sgcap run`, its bundles
# compared with its --expect topology (topo_compare), checked for kernels
# without a code image and CUDA cross-check failures, and shown with
# `sgcap inspect` and `sgcap dot`; the recapture sample at 500 and 2000
# iterations for a bounded bundle count and flat memory; the PyTorch and
# CuPy scripts for two or more streams joined by event edges; one snapshot
# run. Prints one line per check and "N passed, N failed, N skipped".
#
# usage: tests/gpu/capture_gpu.sh [BUILD_DIR] [--only NAME] [--keep DIR]
#   NAME: a sample binary (fork_join_shared), recapture_bounded, snapshot,
#   torch_two_stream, cupy_fork_join or a frameworks/ script (jax_jit, ...). --keep DIR keeps bundles and logs
#   (default: a temporary directory, removed at the end).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
only=""
keep=""
while [ $# -gt 0 ]; do
  case $1 in
  --only) only=$2; shift 2 ;;
  --keep) keep=$2; shift 2 ;;
  *) build=$1; shift ;;
  esac
done
build=$(cd "$build" && pwd)
sgcap=$build/bin/sgcap
topo=$build/bin/topo_compare
shim=$build/lib/libsgcap.so
for f in "$sgcap" "$topo" "$shim"; do
  [ -e "$f" ] || { echo "capture_gpu: $f not built"; exit 2; }
done
missing=$(ldd "$shim" 2>/dev/null | grep "not found")
if [ -n "$missing" ]; then
  echo "capture_gpu: libsgcap.so cannot load here:"
  echo "$missing"
  exit 2
fi
if [ -n "$keep" ]; then
  work=$keep
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
unset SGCAP_MAX_BUNDLES SGCAP_MAX_VARIANTS SGCAP_SNAPSHOT SGCAP_LOG SGCAP_DIR
pass=0 failed=0 skipped=0 failures=""
ok() {
  pass=$((pass + 1))
  printf '%-28s ok    %s\n' "$1" "$2"
}
bad() {
  failed=$((failed + 1))
  failures="$failures $1"
  printf '%-28s FAIL  %s\n' "$1" "$2"
}
skip() {
  skipped=$((skipped + 1))
  printf '%-28s skip  %s\n' "$1" "$2"
}
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

# Python checks on a bundle's graph.json: kernels without an image, streams
# with nodes, event edges, cross-check. Prints "streams=N events=N ...".
bundle_facts() {
  python3 - "$1" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1] + "/graph.json"))
nodes = g["nodes"]
kernels = [n for n in nodes if n["type"] == "kernel"]
noimage = [n["kernel"]["name"] for n in kernels if n["kernel"].get("image") is None]
lanes = {n["stream"] for n in nodes if n["stream"] != "explicit"}
explicit = sum(1 for n in nodes if n["stream"] == "explicit")
events = sum(1 for e in g["edges"] if e["kind"] == "event")
cc = g.get("crosscheck", {})
print(f"streams={len(lanes)} event_edges={events} nodes={len(nodes)} kernels={len(kernels)} "
      f"no_image={len(noimage)} explicit={explicit} crosscheck={'ok' if cc.get('ok') else 'BAD'} "
      f"buffers={len(g.get('buffers', []))} images={len(g.get('images', []))}")
for name in noimage[:3]:
    print("  kernel without image:", name)
if not cc.get("ok"):
    print("  crosscheck:", cc.get("note", ""))
EOF
}

# Inspect and dot every bundle in a directory; 0 if all work.
views() {
  local dir=$1 rc=0
  local b
  for b in "$dir"/*.sgraph; do
    "$sgcap" inspect "$b" >"$b.inspect.txt" 2>&1 || { echo "  inspect failed: $b"; rc=1; }
    "$sgcap" dot "$b" >"$b.dot" 2>&1 || { echo "  dot failed: $b"; rc=1; }
    # lanes, or for a graph of no nodes (torch.compile records some) the note
    grep -q cluster "$b.dot" || grep -q 'label="empty graph: no nodes"' "$b.dot" ||
      { echo "  dot without stream lanes: $b"; rc=1; }
  done
  return $rc
}

# ---- the samples ----
for bin in "$build"/samples/*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  b=$(basename "$bin")
  case "$b" in *.so | *.so.*) continue ;; esac
  want "$b" || continue
  name=${b%_shared}
  name=${name%_ptds}
  args=()
  [ "$name" = recapture ] && args=(--iters 3)
  out=$work/$b
  rm -rf "$out"
  timeout 300 "$sgcap" run --out "$out" -- "$bin" "${args[@]}" >"$work/$b.stdout" 2>"$work/$b.stderr"
  rc=$?
  if [ $rc -ne 0 ]; then
    bad "$b" "exit $rc under the shim"
    tail -n 15 "$work/$b.stderr" | sed 's/^/    /'
    continue
  fi
  "$bin" --expect "${args[@]}" >"$work/$b.topo" 2>/dev/null
  if ! ls "$out"/*.sgraph >/dev/null 2>&1; then
    bad "$b" "no bundle written"
    grep sgcap "$work/$b.stderr" | head -n 10 | sed 's/^/    /'
    continue
  fi
  # multi-stream samples must keep their streams; the single-stream and
  # node-by-node ones (single_node, explicit_graph, ...) have none to keep
  minstreams=0
  grep -q "^stream s1 " "$work/$b.topo" && minstreams=2
  if ! "$topo" --min-streams $minstreams "$work/$b.topo" "$out"/*.sgraph >"$work/$b.cmp" 2>&1; then
    bad "$b" "topology differs from --expect"
    sed 's/^/    /' "$work/$b.cmp" | head -n 40
    continue
  fi
  problems=""
  # every graph the sample instantiated is recorded, none "not recorded"
  grep -q "summary: graphs: .* 0 not recorded" "$work/$b.stderr" ||
    problems="$problems [$(grep -m1 'summary: graphs' "$work/$b.stderr")]"
  for g in "$out"/*.sgraph; do
    facts=$(bundle_facts "$g")
    case "$facts" in *"no_image=0 "*) ;; *) problems="$problems [$facts]" ;; esac
    case "$facts" in *crosscheck=ok*) ;; *) problems="$problems [$facts]" ;; esac
  done
  views "$out" >"$work/$b.views" || problems="$problems [$(cat "$work/$b.views")]"
  if [ -n "$problems" ]; then
    bad "$b" "topology ok, but:$problems"
  else
    ok "$b" "$(bundle_facts "$(ls -d "$out"/*.sgraph | head -n 1)" | head -n 1)"
  fi
  grep "summary: code" "$work/$b.stderr" | sed 's/^/    /' | head -n 1
done

# ---- recapture: bounded bundles, flat memory ----
rss_run() { # rss_run OUT ARGS...: peak RSS (KiB) of the sgcap-run'ed command
  local out=$1
  shift
  python3 - "$sgcap" "$out" "$@" <<'EOF'
import resource, subprocess, sys
sgcap, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
r = subprocess.run([sgcap, "run", "--out", out, "--"] + cmd, capture_output=True, text=True)
sys.stderr.write(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)
EOF
}
if want recapture_bounded; then
  bin=$build/samples/recapture
  if [ ! -x "$bin" ]; then
    skip recapture_bounded "no samples/recapture"
  else
    read -r base brc < <(python3 - "$bin" <<'EOF'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "--iters", "2000"], capture_output=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)
EOF
    )
    read -r small src < <(rss_run "$work/recap500" "$bin" --iters 500 2>"$work/recap500.stderr")
    read -r big bigrc < <(rss_run "$work/recap2000" "$bin" --iters 2000 2>"$work/recap2000.stderr")
    n=$(ls -d "$work"/recap2000/*.sgraph 2>/dev/null | wc -l)
    growth=$((big - small))
    over=$((big - base))
    summary=$(grep "summary:" "$work/recap2000.stderr" | head -n 3)
    if [ "$brc" != 0 ] || [ "$src" != 0 ] || [ "$bigrc" != 0 ]; then
      bad recapture_bounded "exit codes: plain $brc, shim 500 iters $src, 2000 iters $bigrc"
      tail -n 10 "$work/recap2000.stderr" | sed 's/^/    /'
    elif [ "$n" -gt 64 ] || [ "$n" -lt 1 ]; then
      bad recapture_bounded "$n bundles (1..64 expected)"
    elif [ "$growth" -gt 16384 ]; then
      bad recapture_bounded "peak RSS grew ${growth} KiB from 500 to 2000 iterations"
    else
      ok recapture_bounded "$n bundles; peak RSS ${base} KiB plain, ${small}/${big} KiB with the shim at 500/2000 iters (+${over} KiB)"
    fi
    echo "$summary" | sed 's/^/    /'
    "$topo" <("$bin" --expect --iters 2000) "$work"/recap2000/*.sgraph >"$work/recap.cmp" 2>&1 ||
      { bad recapture_topology "bundles differ from --expect"; tail -n 20 "$work/recap.cmp"; }
  fi
fi

# ---- snapshots ----
if want snapshot; then
  bin=$build/samples/fork_join
  out=$work/snapshot
  if [ ! -x "$bin" ]; then
    skip snapshot "no samples/fork_join"
  elif "$sgcap" run --snapshot --out "$out" -- "$bin" >"$work/snapshot.stdout" 2>"$work/snapshot.stderr"; then
    g=$(ls -d "$out"/*.sgraph | head -n 1)
    nb=$(ls "$g"/data 2>/dev/null | grep -c before.zst)
    na=$(ls "$g"/data 2>/dev/null | grep -c after.zst)
    if [ "$nb" -ge 5 ] && [ "$na" -ge 5 ]; then
      ok snapshot "$nb before / $na after snapshots in $(basename "$g")"
    else
      bad snapshot "$nb before / $na after snapshots (5 buffers expected)"
      grep sgcap "$work/snapshot.stderr" | sed 's/^/    /'
    fi
  else
    bad snapshot "fork_join failed under --snapshot"
    tail -n 10 "$work/snapshot.stderr" | sed 's/^/    /'
  fi
fi

# ---- PyTorch and CuPy ----
for script in torch_two_stream cupy_fork_join; do
  want "$script" || continue
  out=$work/$script
  timeout 600 "$sgcap" run --out "$out" -- python3 "$here/$script.py" >"$work/$script.stdout" 2>"$work/$script.stderr"
  rc=$?
  if [ $rc -eq 77 ]; then
    skip "$script" "$(tail -n 1 "$work/$script.stdout")"
    continue
  fi
  if [ $rc -ne 0 ]; then
    bad "$script" "exit $rc under the shim"
    tail -n 15 "$work/$script.stderr" | sed 's/^/    /'
    continue
  fi
  best=""
  for g in "$out"/*.sgraph; do
    [ -d "$g" ] || continue
    facts=$(bundle_facts "$g" | head -n 1)
    s=$(echo "$facts" | sed -n 's/.*streams=\([0-9]*\).*/\1/p')
    e=$(echo "$facts" | sed -n 's/.*event_edges=\([0-9]*\).*/\1/p')
    if [ "${s:-0}" -ge 2 ] && [ "${e:-0}" -ge 2 ]; then best="$(basename "$g"): $facts"; fi
  done
  views "$out" >"$work/$script.views" 2>&1 || best=""
  if [ -n "$best" ]; then
    ok "$script" "$best"
  else
    bad "$script" "no bundle with >= 2 streams and >= 2 event edges (or views failed)"
    for g in "$out"/*.sgraph; do [ -d "$g" ] && bundle_facts "$g" | sed 's/^/    /'; done
    cat "$work/$script.views" | sed 's/^/    /'
  fi
  grep "summary" "$work/$script.stderr" | sed 's/^/    /'
done

# ---- frameworks (tests/gpu/frameworks): torch.compile, CUDA-graph trees,
# make_graphed_callables, JAX jit (XLA command buffers), CuPy ----
for script in torch_compile_streams torch_graphed_callables torch_shared_input jax_jit \
              cupy_elementwise; do
  want "$script" || continue
  py=$here/frameworks/$script.py
  out=$work/$script
  rm -rf "$out"
  timeout 600 python3 "$py" >"$work/$script.plain.stdout" 2>"$work/$script.plain.stderr"
  prc=$?
  if [ $prc -eq 77 ]; then
    skip "$script" "$(tail -n 1 "$work/$script.plain.stdout")"
    continue
  fi
  timeout 600 "$sgcap" run --out "$out" -- python3 "$py" >"$work/$script.stdout" 2>"$work/$script.stderr"
  rc=$?
  problems=""
  [ $rc -eq $prc ] || problems="$problems [exit $rc under the shim, $prc without]"
  cmp -s "$work/$script.plain.stdout" "$work/$script.stdout" ||
    problems="$problems [stdout differs from the plain run]"
  grep -q "summary: graphs: .* 0 not recorded" "$work/$script.stderr" ||
    problems="$problems [$(grep -m1 'summary: graphs' "$work/$script.stderr" || echo 'no summary')]"
  n=0
  for g in "$out"/*.sgraph; do
    [ -d "$g" ] || continue
    n=$((n + 1))
    facts=$(bundle_facts "$g")
    case "$facts" in *"no_image=0 "*) ;; *) problems="$problems [$(basename "$g"): $facts]" ;; esac
  done
  [ $n -gt 0 ] || problems="$problems [no bundle]"
  [ $n -gt 0 ] && { views "$out" >"$work/$script.views" 2>&1 || problems="$problems [views failed]"; }
  if [ -n "$problems" ]; then
    bad "$script" "$problems"
    tail -n 5 "$work/$script.stderr" | sed 's/^/    /'
  else
    ok "$script" "$n bundles; $(grep -m1 'summary: graphs' "$work/$script.stderr" | sed 's/.*summary: //')"
  fi
done

echo "capture_gpu: $pass passed, $failed failed, $skipped skipped${failures:+ (failed:$failures)}"
[ $failed -eq 0 ] || exit 1
[ $pass -gt 0 ] || exit 77
exit 0
