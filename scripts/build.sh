#!/usr/bin/env bash
# Configures and builds sgcap into ./build (or $SGCAP_BUILD_DIR).
# Extra arguments go to cmake's configure step (e.g. -DSGCAP_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SGCAP_BUILD_DIR:-build}
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B "$build" -G Ninja "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
echo "sgcap: built into $build/ (command: $build/bin/sgcap)"
