#!/usr/bin/env bash
# The main job, from a fresh clone: installs what is missing
# (scripts/setup.sh), builds into ./build (scripts/build.sh), then shows what
# sgcap does with a multi-stream CUDA graph:
#   with a GPU     it captures samples/fork_join live under libsgcap.so (with
#                  buffer snapshots), inspects, checks, rewrites and draws the
#                  capture, and replays it in a fresh process, validating the
#                  output against the original run;
#   without one    the same on a built-in bundle captured from that sample on
#                  an H200 (samples/bundles/); replay is skipped (it needs a GPU);
#   either way     a second bundle with a planted bug (tests/golden/: a free on
#                  one stream of memory another stream still reads): check finds
#                  the hazard, rewrite orders the free after the read, check
#                  finds none.
# Outputs go to ./sgcap-demo in the current directory, or --out DIR. A
# directory that is not empty and was not written by this script is refused;
# one it wrote is replaced.
#
#   scripts/demo.sh [--out DIR]             the sample (captured live with a GPU)
#   scripts/demo.sh [--out DIR] B.sgraph    the same pipeline on a bundle of yours
#
# SGCAP_BUILD_DIR: the build tree (default: build/ in the repository).
# SGCAP_NO_BUILD=1: use that tree as it is, no setup and no build (a tree
# carried to a GPU machine).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

out=sgcap-demo
bundle=""
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --out) [ $# -ge 2 ] || { echo "demo: --out needs a directory" >&2; exit 2; }
           out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    -*) echo "demo: unknown option $1 (see scripts/demo.sh --help)" >&2; exit 2 ;;
    *) [ -z "$bundle" ] || { echo "demo: one bundle at a time ('$1' is extra)" >&2; exit 2; }
       bundle=$1; shift ;;
  esac
done
# Paths the caller gave are relative to where the caller is.
out=$(realpath -m -- "$out")
if [ -n "$bundle" ]; then
  [ -d "$bundle" ] || { echo "demo: no bundle directory at $bundle" >&2; exit 2; }
  bundle=$(realpath -- "$bundle")
fi
user_bundle=$bundle
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SGCAP_BUILD_DIR:-build}
case $build in /*) ;; *) build="$root/$build" ;; esac
sgcap="$build/bin/sgcap"

# The output directory: ours (marked) is replaced, an empty one is used, any
# other is left alone.
if [ -e "$out" ]; then
  if [ -f "$out/.sgcap-demo" ]; then
    rm -rf -- "$out"
  elif [ ! -d "$out" ] || [ -n "$(ls -A -- "$out")" ]; then
    echo "demo: $out exists and was not written by the demo; choose another with --out DIR" >&2
    exit 2
  fi
fi
mkdir -p -- "$out"
echo "written by sgcap's scripts/demo.sh, which replaces this directory when it runs again" \
  >"$out/.sgcap-demo"

steps=4
[ -n "$bundle" ] && steps=3
step=0
say() { step=$((step + 1)); echo; echo "== [$step/$steps] $*"; }

say "setup and build"
if [ "${SGCAP_NO_BUILD:-0}" = 1 ]; then
  echo "   SGCAP_NO_BUILD=1: using $build as it is"
else
  "$root/scripts/setup.sh"
  SGCAP_BUILD_DIR=$build "$root/scripts/build.sh"
fi
[ -x "$sgcap" ] || { echo "demo: $sgcap not found (build failed?)" >&2; exit 2; }

# Why there is or is not a live capture and a replay (one line).
gpu_reason=""
if ! command -v nvidia-smi >/dev/null 2>&1; then
  gpu_reason="no GPU here (nvidia-smi is not installed)"
elif ! nvidia-smi -L >/dev/null 2>&1; then
  gpu_reason="no GPU here (nvidia-smi -L lists none)"
elif [ ! -e "$build/lib/libsgcap.so" ] || [ ! -x "$build/samples/fork_join" ]; then
  gpu_reason="the shim or samples/fork_join is not built in $build"
fi

live=0
name=""
if [ -n "$bundle" ]; then
  name=$(basename "$bundle" .sgraph)
  say "your bundle: $bundle"
elif [ -z "$gpu_reason" ]; then
  say "capturing samples/fork_join under libsgcap.so (GPU found)"
  SGCAP_SNAPSHOT=1 "$sgcap" run --out "$out/capture" -- "$build/samples/fork_join"
  bundle=$(ls -d "$out"/capture/*.sgraph | head -n 1)
  name=fork_join
  live=1
else
  say "the built-in bundle samples/bundles/fork_join.sgraph"
  echo "   $gpu_reason, so no live capture: this bundle was captured by"
  echo "   libsgcap.so from samples/fork_join on an H200 (samples/bundles/README.md)"
  bundle="$root/samples/bundles/fork_join.sgraph"
  name=fork_join
fi

# inspect, check, rewrite (with what it changed), draw: one bundle.
edges_line() { "$sgcap" inspect "$1" | sed -n 's/^edges: *//p'; }
pipeline() {
  local b=$1 n=$2
  echo; echo "-- sgcap inspect"
  "$sgcap" inspect "$b"
  echo; echo "-- sgcap check (cross-stream hazards; exit 1 when there are some)"
  local rc=0
  "$sgcap" check "$b" || rc=$?
  [ $rc -le 1 ] || exit $rc
  echo; echo "-- sgcap rewrite -> $out/$n.rewritten.sgraph"
  "$sgcap" rewrite "$b" -o "$out/$n.rewritten.sgraph" --report "$out/$n.rewrite.txt"
  echo; echo "-- what the rewrite did"
  echo "   edges before: $(edges_line "$b")"
  echo "   edges after:  $(edges_line "$out/$n.rewritten.sgraph")"
  if [ "$(edges_line "$b")" = "$(edges_line "$out/$n.rewritten.sgraph")" ]; then
    echo "   (no edge added or removed: every ordering was already explicit and no free"
    echo "   had to move; fusion-legality is an analysis: its chains are in the report)"
  fi
  local lines
  lines=$(wc -l <"$out/$n.rewrite.txt")
  if [ "$lines" -le 80 ]; then
    echo "   the report ($out/$n.rewrite.txt):"
    sed 's/^/   | /' "$out/$n.rewrite.txt"
  else
    echo "   the report has $lines lines: $out/$n.rewrite.txt"
  fi
  echo; echo "-- drawings (one lane per stream)"
  local ext=svg
  if ! command -v dot >/dev/null 2>&1; then
    ext=dot
    echo "   (Graphviz is not installed here: writing DOT; render with dot -Tsvg)"
  fi
  "$sgcap" dot "$b" -o "$out/$n.captured.$ext"
  "$sgcap" dot "$out/$n.rewritten.sgraph" -o "$out/$n.rewritten.$ext"
  echo "   $out/$n.captured.$ext"
  echo "   $out/$n.rewritten.$ext"
}
pipeline "$bundle" "$name"

say "replay in a fresh process"
if [ $live -eq 1 ]; then
  echo "-- sgcap replay --validate (compared with the original run)"
  "$sgcap" replay "$bundle" --validate
  "$sgcap" replay "$bundle" --bench 200
elif [ -z "$gpu_reason" ]; then
  if [ -d "$bundle/data" ]; then
    "$sgcap" replay "$bundle" --validate
  else
    echo "   the bundle has no buffer snapshots (capture with SGCAP_SNAPSHOT=1 to validate)"
    "$sgcap" replay "$bundle"
  fi
else
  echo "   skipped: $gpu_reason."
  echo "   Replay rebuilds the captured graph as a real CUDA graph in a fresh process,"
  echo "   runs it and compares its output with the original run's. On a machine with"
  if [ -n "$user_bundle" ]; then
    echo "   a GPU: sgcap replay $bundle --validate (the bundle needs buffer"
    echo "   snapshots: capture with SGCAP_SNAPSHOT=1)."
  else
    echo "   a GPU this demo captures the sample live and replays it."
  fi
fi

if [ "$steps" -eq 4 ]; then
  say "a bundle with a planted bug: tests/golden/bug_free_before_use.sgraph"
  echo "   On s0 a buffer is freed while a kernel on s1 may still read it (no"
  echo "   ordering between the two): check reports it, defer-dealloc orders the"
  echo "   free after the read (a dealloc edge), and the rewritten bundle checks clean."
  bug="$root/tests/golden/bug_free_before_use.sgraph"
  rc=0
  echo; echo "-- sgcap check"
  "$sgcap" check "$bug" || rc=$?
  [ $rc -le 1 ] || exit $rc
  "$sgcap" rewrite "$bug" -o "$out/bug_free_before_use.rewritten.sgraph" \
    --report "$out/bug_free_before_use.rewrite.txt" >/dev/null
  echo; echo "-- what defer-dealloc did ($out/bug_free_before_use.rewrite.txt)"
  sed -n '/^== defer-dealloc ==/,/^$/p' "$out/bug_free_before_use.rewrite.txt" | sed 's/^/   | /'
  echo "   edges before: $(edges_line "$bug")"
  echo "   edges after:  $(edges_line "$out/bug_free_before_use.rewritten.sgraph")"
  echo; echo "-- sgcap check of the rewritten bundle"
  "$sgcap" check "$out/bug_free_before_use.rewritten.sgraph"
  if command -v dot >/dev/null 2>&1; then
    "$sgcap" dot "$out/bug_free_before_use.rewritten.sgraph" -o "$out/bug_free_before_use.rewritten.svg"
    echo "   drawing: $out/bug_free_before_use.rewritten.svg (the dealloc edge is bold red)"
  fi
fi

echo
echo "demo: done; outputs in $out/"
