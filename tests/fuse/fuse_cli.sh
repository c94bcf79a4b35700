#!/usr/bin/env bash
# fuse_cli.sh: `sgcap rewrite --passes fuse` end to end through the CLI, on
# the chains sample as captured on the H200 (tests/golden/chains.sgraph) with
# the sample's PTX as its code image: the rewrite writes the fused kernels'
# cubin and PTX into the new bundle beside the carried code, and inspect and
# dot show the fused nodes with their stages. Needs libnvrtc (CPU only);
# exits 77 (skipped) without it.
# usage: tests/fuse/fuse_cli.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
sgcap=$build/bin/sgcap
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=$work/chains.sgraph
mkdir -p "$in/code"
cp "$src/tests/data/ptx/sample_chains.sm90.ptx" "$in/code/chains.ptx"
python3 - "$src/tests/golden/chains.sgraph/graph.json" "$in/graph.json" "$in/code/chains.ptx" <<'PY'
import ctypes, ctypes.util, json, sys
# readers check an image's bytes against its hash (docs/FORMAT.md section 1):
# the XXH64 (seed 0) of the PTX, from the libxxhash sgcap links
lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
lib.XXH64.restype = ctypes.c_uint64
lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
ptx = open(sys.argv[3], "rb").read()
g = json.load(open(sys.argv[1]))
g["images"][0].update({"kind": "ptx", "file": "code/chains.ptx", "ptx_archs": [90], "sass_archs": [],
                       "hash": "%016x" % lib.XXH64(ptx, len(ptx), 0), "size": len(ptx)})
json.dump(g, open(sys.argv[2], "w"))
PY
out=$work/fused.sgraph
if ! "$sgcap" rewrite "$in" -o "$out" --passes fuse --report "$work/report.txt" >"$work/rewrite.log" 2>&1; then
  cat "$work/rewrite.log"; exit 1
fi
if grep -q "NVRTC is not available" "$work/report.txt"; then
  echo "fuse_cli: skipped: no NVRTC"; exit 77
fi
fail() { echo "fuse_cli: FAIL: $*"; cat "$work/report.txt"; exit 1; }
grep -q "^  fused n" "$work/report.txt" || fail "nothing fused"
grep -q "^fuse: 3 candidate chains: 3 fused kernels" "$work/rewrite.log" || fail "summary: $(cat "$work/rewrite.log")"
# the new code is in the bundle, the old code carried
n_cubin=$(ls "$out/code" | grep -c '\.cubin$' || true)
[ "$n_cubin" -eq 3 ] || fail "expected 3 fused cubins, found $n_cubin"
[ -f "$out/code/chains.ptx" ] || fail "the input's code image was not carried"
"$sgcap" inspect "$out" >"$work/inspect.txt" || fail "inspect failed"
grep -q "^fused:   3 kernels" "$work/inspect.txt" || fail "inspect lists no fused kernels"
grep -q "stage 0   was n9     k_f4_a" "$work/inspect.txt" || fail "inspect does not name the stages: $(cat "$work/inspect.txt")"
"$sgcap" dot "$out" -o "$work/g.dot" || fail "dot failed"
grep -q "fused, tier 1, 12 stages" "$work/g.dot" || fail "dot does not show the fused node"
# --fuse-tile: another tile gives other kernels (the report says their block);
# values it cannot use are refused with the rule, nothing written
"$sgcap" rewrite "$in" -o "$work/tile.sgraph" --passes fuse --fuse-tile 256x4 \
  --report "$work/tile.txt" >/dev/null 2>&1 || fail "--fuse-tile 256x4 failed"
grep -q "^  fused n.* block 256," "$work/tile.txt" || fail "--fuse-tile 256x4: no fused kernel of 256 threads"
grep -q "^  fused n.* block 128," "$work/report.txt" || fail "the default tile is not 128 threads"
for bad in 256 100x4 256x3 2048x4 256x8x1 x4; do
  if "$sgcap" rewrite "$in" -o "$work/bad.sgraph" --passes fuse --fuse-tile "$bad" >"$work/bad.log" 2>&1; then
    fail "--fuse-tile $bad accepted"
  fi
  grep -q "fuse-tile wants BxE" "$work/bad.log" || fail "--fuse-tile $bad: $(cat "$work/bad.log")"
  [ ! -e "$work/bad.sgraph" ] || fail "--fuse-tile $bad wrote a bundle"
done
# a second rewrite of the rewritten bundle keeps it valid (nothing left to fuse)
"$sgcap" rewrite "$out" -o "$work/again.sgraph" --passes fuse >/dev/null 2>&1 || fail "rewriting the fused bundle failed"
echo "fuse_cli: OK"
