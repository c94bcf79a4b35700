#!/usr/bin/env bash
# Builds sgcap with warnings as errors and runs every test that needs no GPU:
# unit and golden tests, then each libFuzzer target for a bounded time
# (SGCAP_FUZZ_SECONDS, default 60). GPU tests are labelled `gpu`; run them on a
# machine with a GPU with scripts/gpu-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SGCAP_BUILD_DIR:-build}
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B "$build" -G Ninja -DSGCAP_WERROR=ON -DSGCAP_BUILD_FUZZ=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)"
ctest --test-dir "$build" -LE gpu --output-on-failure --timeout 600 -j "$(nproc)"
secs=${SGCAP_FUZZ_SECONDS:-60}
if [ "$secs" -gt 0 ]; then
  for fz in "$build"/fuzz/fuzz_*; do
    [ -x "$fz" ] || continue
    name=$(basename "$fz")
    corpus="$build/fuzz-corpus/$name"
    mkdir -p "$corpus"
    seeds="tests/fuzz/seeds/$name"
    echo "sgcap: fuzzing $name for ${secs}s"
    args=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$corpus")
    [ -d "$seeds" ] && args+=("$seeds")
    "$fz" "${args[@]}" 2>&1 | tail -n 12
  done
fi
echo "sgcap: all CPU tests passed"
