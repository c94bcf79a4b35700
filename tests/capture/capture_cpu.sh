#!/usr/bin/env bash
# The capture shim end to end without a GPU: capture_probe (linked with the
# fake libcuda.so.1 of fake_graph_cuda.c) runs its scenarios under
# `sgcap run`; the bundles must have the topology the probe issued, carry
# its code image and buffers, deduplicate re-captures, respect
# SGCAP_MAX_BUNDLES, take snapshots, and survive an unwritable directory.
# usage: capture_cpu.sh SGCAP PROBE FAKE_LIB_DIR TOPO_COMPARE WORKDIR
set -u
sgcap=$1 probe=$2 fake=$3 topo=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset SGCAP_MAX_BUNDLES SGCAP_SNAPSHOT SGCAP_LOG SGCAP_MODE SGCAP_DIR
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

# Re-captures: 40 captures, 20 distinct; at most 8 bundles.
out=$work/recapture
if SGCAP_MAX_BUNDLES=8 run recapture "$out" recapture 40; then
  n=$(ls -d "$out"/*.sgraph | wc -l)
  [ "$n" = 8 ] && ok "recapture: 8 bundles" || fail "recapture: $n bundles, expected 8"
  grep -q "summary: 40 graphs (20 distinct, 40 from stream capture)" "$work/recapture.stderr" &&
    grep -q "8 bundles written" "$work/recapture.stderr" &&
    grep -q "8 duplicates of them, 12 distinct graphs over SGCAP_MAX_BUNDLES=8" \
      "$work/recapture.stderr" || {
    fail "recapture: counts in the summary"
    grep summary "$work/recapture.stderr"
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
