#!/usr/bin/env bash
# Configures and builds sgcap into ./build (or $SGCAP_BUILD_DIR). Extra
# arguments go to cmake's configure step (e.g. -DSGCAP_WERROR=ON). It only
# builds: scripts/setup.sh installs what the build needs (scripts/demo.sh and
# scripts/test.sh run both).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SGCAP_BUILD_DIR:-build}
export PATH="$PATH:/usr/local/cuda/bin"
echo "sgcap: configuring $build/"
cmake -S . -B "$build" -G Ninja "$@" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; echo "sgcap: configuring $build/ failed" >&2; exit 1; }
rm -f "$build.configure.log"
echo "sgcap: building $build/ with $(nproc) jobs (a first build takes a few minutes)"
cmake --build "$build" --parallel "$(nproc)"
echo "sgcap: built into $build/ (command: $build/bin/sgcap)"
