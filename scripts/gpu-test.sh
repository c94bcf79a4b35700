#!/usr/bin/env bash
# Runs the tests that need a GPU (ctest label `gpu`): every sample in every
# build, with and without the shim, real captures compared with each
# sample's expected topology, the PyTorch and CuPy scripts, replay
# validation. Builds first unless SGCAP_NO_BUILD=1. Fails loudly when no GPU
# is visible: a GPU test that skips itself silently would be a lie.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SGCAP_BUILD_DIR:-build}
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-test: no GPU visible (nvidia-smi -L failed); these tests need one" >&2
  exit 2
fi
[ "${SGCAP_NO_BUILD:-0}" = 1 ] || ./scripts/build.sh
ctest --test-dir "$build" -L gpu --output-on-failure --timeout 600 "$@"
