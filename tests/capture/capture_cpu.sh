#!/usr/bin/env bash
# The capture shim end to end without a GPU: capture_probe (linked with the
# fake libcuda.so.1 of fake_graph_cuda.c) runs its scenarios under
# `sgcap run`; the bundles must have the topology the probe issued, carry
# its code image and buffers, deduplicate re-captures, respect
# SGCAP_MAX_BUNDLES, take snapshots, and survive an unwritable directory.
# usage: capture_cpu.sh SGCAP PROBE FAKE_LIB_DIR TOPO_COMPARE WORKDIR [TRITON_SRC]
set -u
sgcap=$1 probe=$2 fake=$3 topo=$4 work=$5 triton_src=${6:-}
rm -rf "$work"
mkdir -p "$work"
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset SGCAP_MAX_BUNDLES SGCAP_MAX_VARIANTS SGCAP_SNAPSHOT SGCAP_LOG SGCAP_MODE SGCAP_DIR
unset RANK LOCAL_RANK OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID FAKE_CUDA_DEVICES
failed=0
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
ok() { echo "ok: $*"; }

# run NAME OUTDIR PROBE-ARGS...: the probe under sgcap run, stderr kept
run() {
  local name=$1 out=$2
  shift 2
  "$sgcap" run --out "$out" -- "$probe" "$@" >"$work/$name.stdout" 2>"$work/$name.stderr"
  local rc=$?
  if [ $rc -ne 0 ]; then
    fail "$name: exit $rc"
    sed 's/^/    /' "$work/$name.stderr"
    return 1
  fi
  return 0
}

# summary_has NAME WHAT LINE...: ok "NAME: WHAT" when NAME's stderr holds
# every summary LINE (grep patterns), else fail with its summary lines
summary_has() {
  local name=$1 what=$2 line
  shift 2
  for line in "$@"; do
    if ! grep -q "$line" "$work/$name.stderr"; then
      fail "$name: counts in the summary (no \"$line\")"
      grep summary "$work/$name.stderr" | sed 's/^/    /'
      return 1
    fi
  done
  ok "$name: $what"
}

for s in fork_join threads mixed; do
  out=$work/$s
  run "$s" "$out" "$s" || continue
  "$probe" "$s" --expect >"$work/$s.topo"
  if "$topo" --min-streams 2 "$work/$s.topo" "$out"/*.sgraph >"$work/$s.cmp"; then
    ok "$s: topology"
  else
    fail "$s: topology"
    sed 's/^/    /' "$work/$s.cmp"
  fi
  grep -q "summary: 1 graph (1 distinct, 1 from stream capture)" "$work/$s.stderr" &&
    grep -q "1 bundle written" "$work/$s.stderr" || fail "$s: summary line"
  grep -q "1 new bundle in" "$work/$s.stderr" || fail "$s: sgcap run's bundle list"
  grep -q '"crosscheck": {"done": true, "ok": true' "$out"/*.sgraph/graph.json ||
    fail "$s: cross-check not ok"
  "$sgcap" inspect "$out"/*.sgraph >"$work/$s.inspect" 2>&1 || fail "$s: sgcap inspect"
  "$sgcap" dot "$out"/*.sgraph >"$work/$s.dot" 2>&1 || fail "$s: sgcap dot"
  grep -q "cluster" "$work/$s.dot" || fail "$s: dot has no stream lanes"
done

# Per-rank and per-device bundles (docs/NCCL.md): a process a parallel
# launcher started (RANK) that drives two GPUs, ncclCommInitAll's way, names
# each bundle with its rank and its device and records both in the bundle;
# a process that sees one device keeps the device out of the name but not
# out of the record; without a launcher's variable there is no rank.
out=$work/two_devices
if FAKE_CUDA_DEVICES=2 RANK=3 run two_devices "$out" two_devices; then
  d0=$(ls -d "$out"/capture_probe.rank3.dev0.[0-9]*.0.sgraph 2>/dev/null | head -n 1)
  d1=$(ls -d "$out"/capture_probe.rank3.dev1.[0-9]*.1.sgraph 2>/dev/null | head -n 1)
  if [ -n "$d0" ] && [ -n "$d1" ]; then ok "two_devices: bundles named by rank and device"; else
    fail "two_devices: bundle names"
    ls "$out" | sed 's/^/    /'
  fi
  "$probe" two_devices --expect >"$work/two_devices.topo"
  "$topo" --min-streams 2 "$work/two_devices.topo" "$out"/*.sgraph >"$work/two_devices.cmp" ||
    { fail "two_devices: topology"; sed 's/^/    /' "$work/two_devices.cmp"; }
  for b in $d0 $d1; do
    python3 - "$b/graph.json" <<'EOF2' || fail "two_devices: $(basename "$b") record"
import json, re, sys
g = json.load(open(sys.argv[1]))
dev = int(re.search(r"\.dev(\d+)\.", sys.argv[1]).group(1))
assert g["version"] == 4, g["version"]
assert g["capture"]["rank"] == 3, g["capture"]
assert g["device"]["ordinal"] == dev, (g["device"], dev)
EOF2
    "$sgcap" inspect "$b" | grep -q "^origin:  rank 3, device $(basename "$b" | sed 's/.*\.dev\([0-9]*\)\..*/\1/')$" ||
      fail "two_devices: inspect shows no origin for $(basename "$b")"
  done
fi
out=$work/local_rank
if LOCAL_RANK=1 run local_rank "$out" fork_join; then
  b=$(ls -d "$out"/capture_probe.rank1.[0-9]*.0.sgraph 2>/dev/null | head -n 1)
  if [ -n "$b" ] && grep -q '"rank": 1' "$b/graph.json" && grep -q '"ordinal": 0' "$b/graph.json"; then
    ok "local_rank: named by rank, device 0 recorded but not in the name"
  else
    fail "local_rank: $(ls "$out")"
  fi
fi
b=$(ls -d "$work"/fork_join/*.sgraph 2>/dev/null | head -n 1)
case $(basename "${b:-none}") in
capture_probe.[0-9]*.0.sgraph) grep -q '"rank"' "$b/graph.json" && fail "fork_join: a rank without a launcher" ;;
*) fail "fork_join: bundle name $(basename "${b:-none}") is not <program>.<pid>.<seq>.sgraph" ;;
esac

# Graph shapes real frameworks build, most of them without a single edge
# (a one-kernel capture, independent explicit nodes, one empty node, a
# capture of nothing (torch.compile records those), XLA's
# node-by-node command buffers with a single-kernel child graph, a capture
# into an existing graph, a conditional whose body is one kernel, and the
# conditional sample's WHILE and IF, the IF body captured from a stream no
# node of the graph itself is on). The fake driver refuses to list arrays
# for a count of 0, as driver 580 does: every one must be recorded, with the
# topology the probe issued.
for s in single independent one_empty nothing to_graph xla conditional1 conditional2 arena host_copy; do
  out=$work/$s
  run "$s" "$out" "$s" || continue
  grep -q "summary: graphs: 1 seen, 1 recorded (0 by digest alone), 0 not recorded$" "$work/$s.stderr" || {
    fail "$s: not recorded"
    grep "summary: graphs\|not recorded" "$work/$s.stderr" | sed 's/^/    /'
    continue
  }
  "$probe" "$s" --expect >"$work/$s.topo"
  if "$topo" "$work/$s.topo" "$out"/*.sgraph >"$work/$s.cmp"; then
    ok "$s: recorded, topology"
  else
    fail "$s: topology"
    sed 's/^/    /' "$work/$s.cmp"
  fi
  grep -q '"crosscheck": {"done": true, "ok": true' "$out"/*.sgraph/graph.json ||
    fail "$s: cross-check not ok"
done
# A graph of no nodes: every view works on it, and dot draws a note
# saying so instead of a blank page (capture_gpu.sh accepts that note in
# place of stream lanes).
g=$(ls -d "$work/nothing"/*.sgraph 2>/dev/null | head -n 1)
if [ -n "$g" ]; then
  views_ok=1
  for v in "inspect" "inspect --json" "inspect --code" "dot" "check"; do
    # shellcheck disable=SC2086
    "$sgcap" $v "$g" >"$work/nothing.view" 2>&1 || { fail "nothing: sgcap $v: exit $?"; views_ok=0; }
    [ "$v" = dot ] && cp "$work/nothing.view" "$work/nothing.dot"
  done
  grep -q "^nodes: *0 (none)" < <("$sgcap" inspect "$g") || { fail "nothing: inspect does not say 0 nodes"; views_ok=0; }
  grep -q 'label="empty graph: no nodes"' "$work/nothing.dot" || { fail "nothing: dot has no empty-graph note"; views_ok=0; }
  [ $views_ok = 1 ] && ok "nothing: inspect, inspect --json/--code, dot and check work on a graph of no nodes"
fi
# Bodies with no edges are read too: the child graph and the conditional
# body each hold their one kernel.
for s in xla conditional1; do
  g=$(ls -d "$work/$s"/*.sgraph 2>/dev/null | head -n 1)
  [ -n "$g" ] || continue
  python3 - "$g/graph.json" <<'EOF2' && ok "$s: single-node body recorded" || fail "$s: body"
import json, sys
g = json.load(open(sys.argv[1]))
bodies = [x["body"] for x in g["nodes"] if x["type"] == "child_graph"]
bodies += [b for x in g["nodes"] if x["type"] == "conditional" for b in x["conditional"]["bodies"]]
assert len(bodies) == 1, bodies
assert [x["type"] for x in bodies[0]["nodes"]] == ["kernel"] and bodies[0]["edges"] == [], bodies
k = bodies[0]["nodes"][0]["kernel"]
assert k["name"] == "_Z6k_axpbPfPKfffm" and k["image"] == 0, k
EOF2
done
g=$(ls -d "$work"/xla/*.sgraph 2>/dev/null | head -n 1)
if [ -n "$g" ]; then
  grep -q '"graph_alloc"' "$g/graph.json" && grep -q '"alloc_node": 0' "$g/graph.json" ||
    fail "xla: the explicit mem_alloc node does not own a graph allocation"
fi

# An exec changed in place (cuGraphExecKernelNodeSetParams, XLA's way): the
# next launch records what it runs now (a second bundle with the new scalar
# and output, snapshotted at that launch); the same change again is a
# duplicate; a change the model cannot express (a disabled node) is counted
# as not recorded, with its reason, and gets no snapshot.
out=$work/exec_set_params
if SGCAP_SNAPSHOT=1 run exec_set_params "$out" exec_set_params; then
  grep -q "summary: graphs: 4 seen, 3 recorded (1 by digest alone), 1 not recorded (1 an exec changed in place: cuGraphNodeSetEnabled" \
    "$work/exec_set_params.stderr" && ok "exec_set_params: counted" || {
    fail "exec_set_params: summary"
    grep "summary: graphs" "$work/exec_set_params.stderr" | sed 's/^/    /'
  }
  n=$(ls -d "$out"/*.sgraph 2>/dev/null | wc -l)
  [ "$n" = 2 ] || fail "exec_set_params: $n bundles, expected 2"
  b1=$(ls -d "$out"/*.1.sgraph 2>/dev/null | head -n 1)
  if [ -n "$b1" ] && python3 - "$b1/graph.json" <<'EOF2'; then ok "exec_set_params: the changed exec recorded as it runs"; else fail "exec_set_params: second bundle"; fi
import json, struct, sys
g = json.load(open(sys.argv[1]))
k = g["nodes"][0]["kernel"]
b = bytes.fromhex(k["params"]["bytes"])
assert struct.unpack_from("<f", b, 16)[0] == 7.0, b.hex()
assert all(x.get("after") for x in g["buffers"]), g["buffers"]
EOF2
fi

# Triton's cubins come with their PTX, found in Triton's cache: beside the
# cubin loaded by path, and by content for the cubin loaded from memory (a
# decoy directory holds a cubin of the same kernel name and size but other
# bytes, and a PTX that must not be taken).
if [ -n "$triton_src" ] && [ -f "$triton_src/sum1.cubin" ]; then
  cache=$work/triton-cache
  mkdir -p "$cache/AAAA" "$cache/BBBB" "$cache/CCCC"
  cp "$triton_src/add0.cubin" "$cache/AAAA/triton_poi_fused_add_0.cubin"
  cp "$triton_src/add0.ptx" "$cache/AAAA/triton_poi_fused_add_0.ptx"
  head -c "$(stat -c %s "$triton_src/sum1.cubin")" /dev/zero >"$cache/BBBB/triton_red_fused_sum_1.cubin"
  echo "// decoy: not the PTX of the loaded cubin" >"$cache/BBBB/triton_red_fused_sum_1.ptx"
  cp "$triton_src/sum1.cubin" "$cache/CCCC/triton_red_fused_sum_1.cubin"
  cp "$triton_src/sum1.ptx" "$cache/CCCC/triton_red_fused_sum_1.ptx"
  echo '{"name": "triton_red_fused_sum_1"}' >"$cache/CCCC/triton_red_fused_sum_1.json"
  out=$work/triton
  if TRITON_CACHE_DIR=$cache run triton "$out" triton "$cache"; then
    grep -q "Triton PTX found for 2 cubins (0 not found)" "$work/triton.stderr" ||
      fail "triton: summary does not count 2 PTX found"
    g=$(ls -d "$out"/*.sgraph 2>/dev/null | head -n 1)
    if [ -n "$g" ] && python3 - "$g" <<'EOF2'; then ok "triton: PTX of both cubins recorded and linked"; else fail "triton: PTX images"; fi
import json, os, sys
b = sys.argv[1]
g = json.load(open(os.path.join(b, "graph.json")))
imgs = g["images"]
cubins = [i for i in imgs if i["kind"] == "cubin"]
ptx = {i["id"]: i for i in imgs if i["kind"] == "ptx"}
assert len(cubins) == 2 and len(ptx) == 2, imgs
assert g["version"] == 5, g["version"]  # images[].ptx_image
for c in cubins:
    assert "ptx-source:" in c["note"], c
    pid = c["ptx_image"]
    assert "(image %d," % pid in c["note"], c
    text = open(os.path.join(b, ptx[pid]["file"])).read()
    assert "decoy" not in text and ".entry triton_" in text, text[:200]
    assert 90 in ptx[pid]["ptx_archs"], ptx[pid]
EOF2
    # ... and the code report (what fusion asks too) takes that PTX
    if [ -n "$g" ] && "$sgcap" inspect --code "$g" >"$work/triton.code" 2>&1 &&
      grep -q "2 kernels, 2 with usable PTX" "$work/triton.code" &&
      [ "$(grep -c 'from the PTX image [0-9]* the cubin was assembled from' "$work/triton.code")" = 2 ]; then
      ok "triton: inspect --code finds the PTX of both cubins"
    else
      fail "triton: inspect --code"
      sed 's/^/    /' "$work/triton.code"
    fi
  fi
fi

# Loaded through CUDA_INJECTION64_PATH alone (no LD_PRELOAD): the fake
# driver calls InitializeInjection at cuInit and the shim observes it
# through (fake) CUPTI callbacks: the same bundle as under LD_PRELOAD. With
# another subscriber first, it says it intercepts nothing; the program runs.
shim=$(dirname "$sgcap")/../lib/libsgcap.so
if [ -f "$shim" ]; then
  out=$work/injection
  env -u LD_PRELOAD CUDA_INJECTION64_PATH="$shim" SGCAP_DIR="$out" "$probe" fork_join \
    >"$work/injection.stdout" 2>"$work/injection.stderr"
  "$probe" fork_join --expect >"$work/injection.topo"
  if grep -q "observing the driver through CUPTI callbacks" "$work/injection.stderr" &&
    grep -q "summary: graphs: 1 seen, 1 recorded" "$work/injection.stderr" &&
    "$topo" --min-streams 2 "$work/injection.topo" "$out"/*.sgraph >"$work/injection.cmp" &&
    grep -q '"crosscheck": {"done": true, "ok": true' "$out"/*.sgraph/graph.json; then
    ok "injection alone: recorded through CUPTI, same topology"
  else
    fail "injection alone"
    cat "$work/injection.stderr" "$work/injection.cmp" 2>/dev/null | sed 's/^/    /'
  fi
  env -u LD_PRELOAD FAKE_CUPTI_BUSY=1 CUDA_INJECTION64_PATH="$shim" SGCAP_DIR="$work/busy" \
    "$probe" fork_join >"$work/busy.stdout" 2>"$work/busy.stderr"
  grep -q "nothing is intercepted (cuptiSubscribe failed: multiple subscribers (another tool" \
    "$work/busy.stderr" && grep -q "capture_probe fork_join: OK" "$work/busy.stdout" &&
    [ ! -d "$work/busy" ] && ok "injection alone, CUPTI busy: said so, program ran" ||
    fail "injection alone with another CUPTI subscriber"
fi

# An 8 GiB arena reached in three places: recorded as those ranges (the
# open-ended last one capped), each small enough to snapshot.
out=$work/arena_snap
if SGCAP_SNAPSHOT=1 run arena_snap "$out" arena; then
  g=$(ls -d "$out"/*.sgraph | head -n 1)
  if python3 - "$g/graph.json" <<'EOF2'; then ok "arena: recorded as the ranges reached, snapshotted"; else fail "arena"; fi
import json, sys
g = json.load(open(sys.argv[1]))
b = g["buffers"]
big = [x for x in b if x["size"] > (1 << 30)]
assert not big, big
arena = [x for x in b if int(x["address"], 16) >= 0x7f0000000000 and x["size"] != 4 << 20]
assert all(x.get("after") and x.get("before") for x in b), b
assert any("arenas" in p["summary"] for p in g["pass_log"]), g["pass_log"]
assert sum(1 for x in b if x["size"] >= 64 << 20) == 2, b  # the capped kernel accesses
EOF2
fi

# Host memory in copies: each pageable range is a host_pageable buffer of
# exactly the bytes copied (format version 2), snapshotted from the
# program's memory before and after the launch.
out=$work/host_snap
if SGCAP_SNAPSHOT=1 run host_snap "$out" host_copy; then
  g=$(ls -d "$out"/*.sgraph | head -n 1)
  if python3 - "$g" <<'EOF2'; then ok "host_copy: pageable ranges recorded and snapshotted"; else fail "host_copy: host buffers"; fi
import json, os, subprocess, sys
b = sys.argv[1]
g = json.load(open(os.path.join(b, "graph.json")))
assert g["version"] >= 2, g["version"]  # host_pageable is version 2
host = sorted((x for x in g["buffers"] if x["kind"] == "host_pageable"), key=lambda x: x["size"])
assert [x["size"] for x in host] == [8, 16, 64, 256], host
want = {8: 0x33, 16: 0x44, 64: 0x11, 256: 0x22}
for x in host:
    for when in ("before", "after"):
        data = subprocess.run(["zstd", "-dc", os.path.join(b, x[when])], check=True,
                              capture_output=True).stdout
        assert data == bytes([want[x["size"]]]) * x["size"], (x, when, data[:16])
EOF2
fi

# The PTX the probe loaded from .rodata is the kernels' image, kept once.
g=$(ls -d "$work"/fork_join/*.sgraph 2>/dev/null | head -n 1)
if [ -n "$g" ]; then
  n_code=$(ls "$g"/code 2>/dev/null | wc -l)
  [ "$n_code" = 1 ] && ls "$g"/code | grep -q '\.ptx$' && ok "fork_join: one PTX image" ||
    fail "fork_join: expected one code/*.ptx, got: $(ls "$g"/code 2>/dev/null)"
  grep -q '"image": 0' "$g/graph.json" || fail "fork_join: kernels do not name their image"
  grep -q '"kind": "device", "address"' "$g/graph.json" || fail "fork_join: no device buffers"
  grep -q '"mode": "unknown"' "$g/graph.json" || fail "fork_join: kernels have no accesses"
fi
g=$(ls -d "$work"/mixed/*.sgraph 2>/dev/null | head -n 1)
if [ -n "$g" ]; then
  grep -q '"graph_alloc"' "$g/graph.json" && grep -q '"alloc_node": 2' "$g/graph.json" ||
    fail "mixed: no graph allocation buffer owned by node 2"
  grep -q '"external": true' "$g/graph.json" || fail "mixed: external event not marked"
  grep -q '"mode": "relaxed"' "$g/graph.json" || fail "mixed: capture mode not recorded"
fi

# Re-captures: 40 captures, 20 distinct; at most 8 bundles (no cap on
# variants: these graphs differ only in a kernel argument).
out=$work/recapture
if SGCAP_MAX_VARIANTS=0 SGCAP_MAX_BUNDLES=8 run recapture "$out" recapture 40; then
  n=$(ls -d "$out"/*.sgraph | wc -l)
  [ "$n" = 8 ] && ok "recapture: 8 bundles" || fail "recapture: $n bundles, expected 8"
  grep -q "summary: 40 graphs (20 distinct, 40 from stream capture)" "$work/recapture.stderr" &&
    grep -q "8 bundles written" "$work/recapture.stderr" &&
    grep -q "8 duplicates of them, 12 distinct graphs over SGCAP_MAX_BUNDLES=8" \
      "$work/recapture.stderr" || {
    fail "recapture: counts in the summary"
    grep summary "$work/recapture.stderr"
  }
  # Identical re-captures and graphs past the bound cost a digest, no model:
  # 8 of the 20 distinct graphs are built, 32 graphs are known by digest.
  grep -q "summary: graphs: 40 seen, 40 recorded (32 by digest alone), 0 not recorded" \
    "$work/recapture.stderr" || {
    fail "recapture: graphs recorded by digest alone"
    grep "summary: graphs" "$work/recapture.stderr" | sed 's/^/    /'
  }
  grep -q "peak [0-9] tags held (now 0 in 0 graphs" "$work/recapture.stderr" ||
    fail "recapture: bookkeeping not bounded (see the summary)"
  [ "$(grep -c 'SGCAP_MAX_BUNDLES=8 reached' "$work/recapture.stderr")" = 1 ] ||
    fail "recapture: the bound is logged once"
  "$probe" recapture 40 --expect >"$work/recapture.topo"
  # 40 expected graphs, all the same topology: every bundle matches one.
  "$topo" "$work/recapture.topo" "$out"/*.sgraph >"$work/recapture.cmp" || {
    fail "recapture: topology"
    tail -n 20 "$work/recapture.cmp"
  }
fi

# A node with more dependencies than the digest's window: two graphs that
# differ only in its 20th dependency are two distinct graphs, and their
# repeats are known by digest (the same 2 built, 2 by digest alone).
out=$work/fanin
run fanin "$out" fanin 4 &&
  summary_has fanin "the 20th dependency tells two graphs apart" \
    "summary: 4 graphs (2 distinct, 0 from stream capture)" \
    "summary: graphs: 4 seen, 4 recorded (2 by digest alone), 0 not recorded"

# bench_capture's shape (300 kernels over four streams, joined every 16
# nodes), captured five times alike: one model built, the repeats known by
# their raw digest (each listed node by node), every node counted.
out=$work/wide
run wide "$out" wide 300 &&
  summary_has wide "repeats of a 300-node capture known by digest" \
    "summary: graphs: 5 seen, 5 recorded (4 by digest alone), 0 not recorded" \
    "summary: 5 graphs (1 distinct, 5 from stream capture), 1500 nodes, 20 streams, 20 events; 1 bundle written"

# Kernel node attributes are part of the raw digest (rawdigest.c hashes the
# members the model keeps): fork_join as captured, then with its first
# node's priority, cooperative flag or cluster dimension changed, then the
# last again: four distinct graphs, each attribute in its bundle.
out=$work/attrs
if run attrs "$out" attrs &&
  summary_has attrs "graphs that differ in one kernel attribute are told apart" \
    "summary: graphs: 5 seen, 5 recorded (1 by digest alone), 0 not recorded" \
    "summary: 5 graphs (4 distinct, 5 from stream capture)"; then
  grep -q '"priority": -1, "func_handle"' "$out"/*.sgraph/graph.json &&
    grep -q '"cooperative": true' "$out"/*.sgraph/graph.json &&
    grep -q '"cluster": \[2, 1, 1\]' "$out"/*.sgraph/graph.json &&
    ok "attrs: each attribute in its bundle" || fail "attrs: an attribute missing from the bundles"
fi

# bench_recapture's loop (3 kernels, two streams, fork and join; exec
# update, destroy, launch), 200 steps: with new scalars every step 4 bundles
# (SGCAP_MAX_VARIANTS) and the rest counted by digest; the same graph every
# step 1 bundle and 199 duplicates, known by digest.
out=$work/bench_changing
run bench_changing "$out" bench_changing 200 &&
  summary_has bench_changing "4 bundles, the rest by digest" \
    "summary: graphs: 200 seen, 200 recorded (196 by digest alone), 0 not recorded" \
    "summary: 200 graphs (200 distinct, 200 from stream capture), 600 nodes, 400 streams, 400 events; 4 bundles written" \
    "summary: 196 graphs known by the calls that captured them"
out=$work/bench_same
if run bench_same "$out" bench_same 200; then
  summary_has bench_same "1 bundle, the rest by digest" \
    "summary: graphs: 200 seen, 200 recorded (199 by digest alone), 0 not recorded" \
    "summary: 200 graphs (1 distinct, 200 from stream capture), 600 nodes, 400 streams, 400 events; 1 bundle written" \
    "summary: 199 graphs known by the calls that captured them"
  "$topo" --min-streams 2 <(printf '# sgcap expected topology v1\ngraph 0\nstream s0 kernel kernel\nstream s1 kernel\nevent e0 s0:0 -> s1:0\nevent e1 s1:0 -> s0:1\n') \
    "$out"/*.sgraph >"$work/bench_same.cmp" && ok "bench_same: topology" || {
    fail "bench_same: topology"
    sed 's/^/    /' "$work/bench_same.cmp"
  }
fi

# A graph known by the calls that captured it (capture/calls.c) is not read
# back; one changed after its capture is, and so is one captured after a
# stream attribute changed: four captures by the same calls, two bundles,
# one graph known by its calls.
out=$work/changed_after
run changed_after "$out" changed_after &&
  summary_has changed_after "a graph changed after capture is read back" \
    "summary: graphs: 4 seen, 4 recorded (2 by digest alone), 0 not recorded" \
    "summary: 4 graphs (2 distinct, 4 from stream capture), 20 nodes, 12 streams, 12 events; 2 bundles written" \
    "summary: 1 graph known by the calls that captured them"
# A stream destroyed and its handle used again is a new stream (a new id):
# the shim's cache of stream identities must not answer for it, so the
# capture after the destroy is read back (without the count of calls that
# end streams it would be known by its calls: three graphs, not two).
out=$work/stream_reused
run stream_reused "$out" stream_reused &&
  summary_has stream_reused "a destroyed stream's handle names a new stream" \
    "summary: graphs: 4 seen, 4 recorded" \
    "summary: 2 graphs known by the calls that captured them"
# SGCAP_VERIFY_DIGEST=1 reads every graph back and compares it with what
# its calls said: never differently, on every re-capturing scenario.
for s in "bench_changing 200" "bench_same 50" "recapture 40" "attrs" "changed_after" "stream_reused" "rebuffer 6" "wide 300"; do
  name=verify_${s%% *}
  # shellcheck disable=SC2086
  if SGCAP_VERIFY_DIGEST=1 run "$name" "$work/$name" $s; then
    if grep -q "SGCAP_VERIFY_DIGEST: .* read back that the calls already told, 0 of them differently" \
      "$work/$name.stderr" && ! grep -q "SGCAP_VERIFY_DIGEST: 0 graphs read back" "$work/$name.stderr" ||
      { [ "$s" = attrs ] && grep -q "SGCAP_VERIFY_DIGEST: 0 graphs read back" "$work/$name.stderr"; }; then
      ok "$name: what the calls said matches the graph"
    else
      fail "$name: the calls and the graph disagree, or nothing was checked"
      grep summary "$work/$name.stderr" | sed 's/^/    /'
    fi
  fi
done

# The variant cap: the same 20 distinct graphs, one shape (only the scalar
# argument changes); SGCAP_MAX_VARIANTS=3 writes 3 and counts 17, none built.
out=$work/variants
if SGCAP_MAX_VARIANTS=3 run variants "$out" recapture 40; then
  n=$(ls -d "$out"/*.sgraph | wc -l)
  [ "$n" = 3 ] && ok "variants: 3 bundles" || fail "variants: $n bundles, expected 3"
  grep -q "summary: 40 graphs (20 distinct, 40 from stream capture)" "$work/variants.stderr" &&
    grep -q "3 bundles written" "$work/variants.stderr" &&
    grep -q "summary: 17 distinct graphs not written: they differ only in kernel arguments that are not device pointers from graphs written SGCAP_MAX_VARIANTS=3 times" \
      "$work/variants.stderr" &&
    grep -q "summary: graphs: 40 seen, 40 recorded (37 by digest alone), 0 not recorded" \
      "$work/variants.stderr" || {
    fail "variants: counts in the summary"
    grep summary "$work/variants.stderr" | sed 's/^/    /'
  }
fi
# Only the bytes that do not point into device memory make variants: the
# same graph over two output buffers in turn is two graphs of two shapes
# (with SGCAP_MAX_VARIANTS=1: 2 bundles), the scalar-changing one of one
# shape (1 bundle).
out=$work/rebuffer
if SGCAP_MAX_VARIANTS=1 run rebuffer "$out" rebuffer 10; then
  n=$(ls -d "$out"/*.sgraph | wc -l)
  [ "$n" = 2 ] && ok "variants: pointer arguments keep graphs apart (2 bundles)" ||
    fail "variants: rebuffer wrote $n bundles, expected 2"
  grep -q "distinct graphs not written" "$work/rebuffer.stderr" &&
    fail "variants: rebuffer counted variants: $(grep summary "$work/rebuffer.stderr")"
fi
out=$work/variants1
if SGCAP_MAX_VARIANTS=1 run variants1 "$out" recapture 10; then
  n=$(ls -d "$out"/*.sgraph | wc -l)
  [ "$n" = 1 ] && ok "variants: scalar arguments make variants (1 bundle)" ||
    fail "variants: recapture with SGCAP_MAX_VARIANTS=1 wrote $n bundles, expected 1"
fi
# A value it cannot read is said and the default used.
out=$work/variants_bad
if SGCAP_MAX_VARIANTS=many run variants_bad "$out" recapture 12; then
  grep -q "SGCAP_MAX_VARIANTS=many not understood: using 4" "$work/variants_bad.stderr" &&
    [ "$(ls -d "$out"/*.sgraph | wc -l)" = 4 ] && ok "variants: a bad value falls back to 4" ||
    fail "variants: SGCAP_MAX_VARIANTS=many (see $work/variants_bad.stderr)"
fi

# Snapshots: every device buffer before and after the first launch.
out=$work/snapshot
if SGCAP_SNAPSHOT=1 run snapshot "$out" fork_join; then
  g=$(ls -d "$out"/*.sgraph | head -n 1)
  nb=$(ls "$g"/data 2>/dev/null | grep -c 'before.zst$')
  na=$(ls "$g"/data 2>/dev/null | grep -c 'after.zst$')
  [ "$nb" = 5 ] && [ "$na" = 5 ] && ok "snapshot: 5 buffers before and after" ||
    fail "snapshot: $nb before, $na after (expected 5 each)"
  [ -d "$g/code" ] || fail "snapshot: the rewrite lost the code images"
fi
out=$work/snapshot_cap
if SGCAP_SNAPSHOT=1 SGCAP_SNAPSHOT_MAX_BYTES=10000000 run snapshot_cap "$out" fork_join; then
  g=$(ls -d "$out"/*.sgraph | head -n 1)
  grep -q 'SGCAP_SNAPSHOT_MAX_BYTES' "$g/graph.json" && ok "snapshot: the cap is noted" ||
    fail "snapshot: skipped buffers not noted in the bundle"
  grep -q 'skipped: over SGCAP_SNAPSHOT_MAX_BYTES' "$work/snapshot_cap.stderr" ||
    fail "snapshot: skipped buffers not logged"
fi

# A conditional node added by hand into a capture, its body captured on
# another stream: the body is recorded with its stream, the edges around the
# conditional are control edges, the cross-check still agrees.
out=$work/conditional
if run conditional "$out" conditional; then
  g=$(ls -d "$out"/*.sgraph | head -n 1)
  if python3 - "$g/graph.json" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
n = {x["id"]: x for x in g["nodes"]}
cond = [x for x in g["nodes"] if x["type"] == "conditional"]
assert len(cond) == 1 and cond[0]["stream"] == "explicit", cond
c = cond[0]["conditional"]
assert c["type"] == "if" and c["default_value"] == 1 and len(c["bodies"]) == 1, c
body = c["bodies"][0]
assert [x["type"] for x in body["nodes"]] == ["kernel", "kernel"], body
assert all(x["stream"] == 1 for x in body["nodes"]), body
assert [e["kind"] for e in body["edges"]] == ["stream"], body
assert g["streams"][1]["handle"] == "0x3100", g["streams"]
kinds = sorted((n[e["from"]]["type"], n[e["to"]]["type"], e["kind"]) for e in g["edges"])
assert kinds == [("conditional", "kernel", "control"), ("kernel", "conditional", "control")], kinds
assert g["crosscheck"]["ok"], g["crosscheck"]
EOF
  then ok "conditional: body with its stream, control edges"; else fail "conditional"; fi
fi

# Explicitly built graphs: their nodes are on the explicit lane.
out=$work/explicit
if run explicit "$out" explicit; then
  g=$(ls -d "$out"/*.sgraph | head -n 1)
  grep -q '"stream": "explicit"' "$g/graph.json" && grep -q '"mode": "explicit"' "$g/graph.json" &&
    ok "explicit graph" || fail "explicit: nodes not labelled explicit"
  grep -q '"kind": "control"' "$g/graph.json" || fail "explicit: edge kind should be control"
fi

# An unwritable directory (under a regular file: fails even for root):
# logged, and the program carries on.
touch "$work/not_a_dir"
if run unwritable "$work/not_a_dir/sub" fork_join; then
  grep -q "cannot create" "$work/unwritable.stderr" && grep -q "1 failed" "$work/unwritable.stderr" &&
    grep -q "capture_probe fork_join: OK" "$work/unwritable.stdout" &&
    ok "unwritable directory: logged, program ran" || {
    fail "unwritable directory handling"
    cat "$work/unwritable.stderr"
  }
fi

echo "capture_cpu: $failed failed"
[ $failed -eq 0 ]
