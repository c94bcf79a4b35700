#!/usr/bin/env bash
# The main job. With a GPU (and the shim built), runs a multi-stream sample
# under libsgcap.so, then looks at what was captured: inspect, hazard check,
# rewrite, drawing, and replay with validation against the original run.
# Without a GPU (or with a bundle given), runs the same offline pipeline on a
# built-in captured bundle. Everything lands in ./out/demo (or $1 = a bundle).
#
#   scripts/demo.sh               built-in sample (captured live when a GPU is present)
#   scripts/demo.sh B.sgraph      the offline pipeline on your own bundle
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SGCAP_BUILD_DIR:-build}
sgcap="$build/bin/sgcap"
out=out/demo
[ -x "$sgcap" ] || { echo "demo: $sgcap not found: run scripts/build.sh first" >&2; exit 2; }
rm -rf "$out"; mkdir -p "$out"

have_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
    [ -e "$build/lib/libsgcap.so" ] && [ -x "$build/samples/fork_join" ]
}

bundle=""
live=0
if [ $# -ge 1 ]; then
  bundle=$1
elif have_gpu; then
  echo "== capturing samples/fork_join under libsgcap.so (GPU found)"
  SGCAP_SNAPSHOT=1 "$sgcap" run --out "$out/capture" -- "$build/samples/fork_join"
  bundle=$(ls -d "$out"/capture/*.sgraph | head -n 1)
  live=1
else
  echo "== no GPU here: using the built-in bundle captured from samples/fork_join on an H200"
  bundle=samples/bundles/fork_join.sgraph
fi
[ -d "$bundle" ] || { echo "demo: no bundle at $bundle" >&2; exit 2; }

echo; echo "== sgcap inspect $bundle"
"$sgcap" inspect "$bundle"
echo; echo "== sgcap check (cross-stream hazards)"
set +e; "$sgcap" check "$bundle"; rc=$?; set -e
[ $rc -le 1 ] || exit $rc
echo; echo "== sgcap rewrite -> $out/rewritten.sgraph"
"$sgcap" rewrite "$bundle" -o "$out/rewritten.sgraph"
echo; echo "== drawings"
ext=svg
if ! command -v dot >/dev/null 2>&1; then
  ext=dot
  echo "   (Graphviz is not installed here: writing DOT; render with dot -Tsvg)"
fi
"$sgcap" dot "$bundle" -o "$out/captured.$ext"
"$sgcap" dot "$out/rewritten.sgraph" -o "$out/rewritten.$ext"
echo "   $out/captured.$ext  $out/rewritten.$ext"
if [ $live -eq 1 ]; then
  echo; echo "== sgcap replay --validate (fresh process, compared with the original run)"
  "$sgcap" replay "$bundle" --validate
  "$sgcap" replay "$bundle" --bench 200
fi
echo; echo "demo: done; outputs in $out/"
