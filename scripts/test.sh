#!/usr/bin/env bash
# Every test that needs no GPU, from a fresh clone: installs what is missing
# (scripts/setup.sh), builds with warnings as errors and the libFuzzer
# targets into its own tree, ./build-test (SGCAP_TEST_BUILD_DIR), so ./build
# keeps its own flags, runs the CPU tests (unit, golden, the shim against a
# fake driver, the samples' --expect/--help checks, install), then each
# fuzzer for SGCAP_FUZZ_SECONDS (default 60; 0 skips them) with a one-line
# result each. GPU tests are labelled `gpu`; scripts/gpu-test.sh runs them
# on a machine with a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SGCAP_TEST_BUILD_DIR:-build-test}

echo "== [1/3] setup and build ($build/: warnings as errors, fuzzers)"
./scripts/setup.sh
SGCAP_BUILD_DIR=$build ./scripts/build.sh -DSGCAP_WERROR=ON -DSGCAP_BUILD_FUZZ=ON

echo
echo "== [2/3] CPU tests (ctest -LE gpu)"
ctest --test-dir "$build" -LE gpu --output-on-failure --timeout 600 -j "$(nproc)"

secs=${SGCAP_FUZZ_SECONDS:-60}
echo
if [ "$secs" -le 0 ]; then
  echo "== [3/3] fuzzing skipped (SGCAP_FUZZ_SECONDS=$secs)"
else
  fuzzers=()
  for fz in "$build"/fuzz/fuzz_*; do [ -x "$fz" ] && fuzzers+=("$fz"); done
  echo "== [3/3] fuzzing: ${#fuzzers[@]} libFuzzer targets, ${secs} s each (SGCAP_FUZZ_SECONDS)"
  [ ${#fuzzers[@]} -gt 0 ] || { echo "no fuzzers in $build/fuzz (clang missing?)" >&2; exit 1; }
  failed=0
  for fz in "${fuzzers[@]}"; do
    name=$(basename "$fz")
    corpus="$build/fuzz-corpus/$name" artifacts="$build/fuzz-artifacts/$name" log="$build/fuzz-logs/$name.log"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    seeds="tests/fuzz/seeds/$name"
    echo "   $name: running for ${secs} s (corpus $corpus; log $log) ..."
    args=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
          -artifact_prefix="$artifacts/" "$corpus")
    [ -d "$seeds" ] && args+=("$seeds")
    rc=0
    "$fz" "${args[@]}" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
    corp=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1 | sed 's/corp: //')
    if [ $rc -eq 0 ]; then
      echo "   $name: ok, ${runs:-?} inputs in ${secs} s, no crash, no leak, no timeout" \
           "(coverage ${cov:-?} edges, corpus ${corp:-?} inputs)"
    else
      failed=1
      echo "   $name: FAILED (exit $rc) after ${runs:-?} inputs; the input that failed is in $artifacts/:"
      ls "$artifacts" | sed 's/^/     /'
      grep -m 1 -E 'ERROR|SUMMARY|deadly signal|out-of-memory|timeout' "$log" | sed 's/^/     /' || true
      echo "     (full output: $log)"
    fi
  done
  [ $failed -eq 0 ] || { echo "sgcap: a fuzzer failed" >&2; exit 1; }
fi
echo
echo "sgcap: all CPU tests passed"
