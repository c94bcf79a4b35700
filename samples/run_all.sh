#!/usr/bin/env bash
# samples/run_all.sh: runs every built sample binary once on the GPU and
# summarises. Unlike ctest, it needs no absolute paths, so it works on a build
# tree copied to another machine at another path.
#   samples/run_all.sh [BUILD_DIR] [-- ARGS...]
# BUILD_DIR defaults to build; ARGS go to every sample (e.g. --replays 20).
# Environment (LD_PRELOAD=libsgcap.so, ...) is passed through. Each run has a
# 120 s limit. Exit status 0 only if every sample exits 0.
set -u
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
dir=$build/samples
if [ ! -d "$dir" ]; then
    echo "run_all: no $dir (build the samples first)" >&2
    exit 2
fi
pass=0 fail=0 failed=""
for bin in "$dir"/*; do
    name=$(basename "$bin")
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    case $name in *.so | *.so.*) continue ;; esac
    start=$(date +%s.%N)
    out=$(timeout 120 "$bin" "$@" 2>&1)
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
        printf '%-24s ok    %6.6ss  %s\n' "$name" "$secs" "$(echo "$out" | tail -n 1)"
    else
        fail=$((fail + 1))
        failed="$failed $name"
        printf '%-24s FAIL  rc=%d\n' "$name" $rc
        echo "$out" | tail -n 20 | sed 's/^/    /'
    fi
done
echo "run_all: $pass passed, $fail failed${failed:+:$failed}"
[ $fail -eq 0 ]
