#!/usr/bin/env bash
# install_check.sh BUILD_DIR WORK_DIR: `cmake --install` into a fresh prefix
# gives bin/sgcap, lib/libsgcap.so and the docs, and the installed command
# works from there: it reads a bundle, and `sgcap run` finds the shim beside
# it (../lib) and runs a program under it (/bin/true: no CUDA, exit 0).
set -euo pipefail
build=$1 work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/sgcap lib/libsgcap.so share/doc/sgcap/README.md share/doc/sgcap/docs/FORMAT.md; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; cat "$work/install.log"; exit 1; }
done
[ ! -e "$prefix/share/doc/sgcap/docs/gpu-runs" ] || { echo "FAIL: gpu-runs logs installed"; exit 1; }
"$prefix/bin/sgcap" --help | grep -q "usage" || { echo "FAIL: sgcap --help"; exit 1; }
"$prefix/bin/sgcap" inspect "$src/samples/bundles/fork_join.sgraph" >"$work/inspect.txt" ||
  { echo "FAIL: installed sgcap cannot inspect the built-in bundle"; exit 1; }
grep -q "^nodes:   5" "$work/inspect.txt" || { echo "FAIL: inspect output"; cat "$work/inspect.txt"; exit 1; }
"$prefix/bin/sgcap" run --out "$work/run" -- /bin/true 2>"$work/run.txt" ||
  { echo "FAIL: installed sgcap run -- /bin/true"; cat "$work/run.txt"; exit 1; }
grep -q "exited with 0" "$work/run.txt" || { echo "FAIL: sgcap run output"; cat "$work/run.txt"; exit 1; }
echo "install: ok ($(cd "$prefix" && find . -type f | wc -l) files under the prefix)"
