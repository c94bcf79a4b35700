#!/usr/bin/env bash
# Every GPU check of inject/ in one go, from a build tree that may have been
# moved (no ctest, no absolute paths): each sample in each build with and
# without libsgcap, the PyTorch and CuPy capture scripts, then the launch
# overhead benchmark. Prints one line per check and "N passed, N failed".
# usage: tests/gpu/inject_gpu.sh [BUILD_DIR]   (from anywhere)
#   SGCAP_CHECK_KEEP=DIR keeps every trace; SKIP_BENCH=1 skips the benchmark.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shim=$build/lib/libsgcap.so
check=$here/inject_check.sh
[ -f "$shim" ] || { echo "inject_gpu: $shim not built"; exit 2; }
pass=0; failed=0; skipped=0
run() {
  timeout 300 bash "$check" "$shim" "$@"
  case $? in 0) pass=$((pass + 1)) ;; 77) skipped=$((skipped + 1)) ;; *) failed=$((failed + 1)) ;; esac
}
# What inject_check must see in a sample's trace comes from its expected
# topology (samples/expected); a sample without one needs a two-stream
# capture with events.
expect_of() {
  local topo=$root/samples/expected/$1.topo
  if [ -f "$topo" ]; then echo "$topo"; else echo 2; fi
}
for bin in "$build"/samples/*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  b=$(basename "$bin")
  case "$b" in *.so*|*.a) continue ;; esac
  name=${b%_shared}; name=${name%_ptds}
  args=()
  [ "$name" = recapture ] && args=(--iters 3)
  run "$(expect_of "$name")" -- "$bin" "${args[@]}"
done
run 2 -- python3 "$here/torch_two_stream.py"
run 2 -- python3 "$here/cupy_fork_join.py"
echo "$pass passed, $failed failed, $skipped skipped"
if [ -z "${SKIP_BENCH:-}" ]; then
  bash "$root/bench/launch_overhead.sh" "$build"
fi
[ $failed -eq 0 ]
