#!/usr/bin/env bash
# sass_torch.sh: the SASS access analysis (code/sass.h) on PyTorch's own
# kernels, which have no PTX (issue 11, deliverable 2). Needs no GPU, only
# the GPU machine's software: torch (cu130) for libtorch_cuda.so and an
# nvdisasm (the toolkit's on PATH, else $SGCAP_NVDISASM or the pip package).
#
#   tests/gpu/sass_torch.sh BUILD_DIR OUT_DIR
#
# 1. sass_dump --check: the committed fixtures through this nvdisasm
#    (another nvdisasm version must print what the parser reads);
# 2. the sm_90 cubins of libtorch_cuda.so (extracted with the project's
#    fatbin reader), and for at::native's vectorized_elementwise_kernel,
#    unrolled_elementwise_kernel and reduce_kernel the shares of kernels
#    analysed / certain (every store attributed) and of accesses with a
#    known base and index, on the 3 smallest cubins holding each;
# 3. bench_sass on the smallest of them (ms per kernel, nvdisasm included);
# 4. copies of the smallest cubin per kernel family into OUT_DIR/torch/ (for
#    tests/data/sass/torch/) with their facts (sass_dump);
# 5. the shares over every kernel of every 40th cubin by size (informative),
#    the cost per kernel five ways side by side (bench_sass), and the facts compared
#    between disassembling each distinct instruction once and the whole code.
# SGCAP_LIBTORCH_CUDA=path overrides where libtorch_cuda.so is looked for.
# Everything runs through BUILD_DIR/bin/sass_dump (tools/sass_dump.c), which
# needs only what libsgcap.so needs: not the unit tests' cmocka.
# Prints PASS/FAIL per step; FAIL when a kernel is not analysed or fewer
# than 80% of a family's kernels are certain. Exit 1 on any FAIL.
set -u
if [ $# -lt 2 ] || [ ! -d "$1" ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
out=$2
mkdir -p "$out/torch"
out=$(cd "$out" && pwd)
ts=$build/bin/sass_dump
root=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
[ -x "$ts" ] || { echo "FAIL: $ts not built"; exit 1; }
py=${PYTHON:-python3}

if ! command -v nvdisasm > /dev/null && [ -z "${SGCAP_NVDISASM:-}" ]; then
  echo "note: no nvdisasm on PATH; the pip package is searched next"
fi
if "$ts" --check "$root/tests/data/sass" > "$out/fixtures.log" 2>&1; then
  echo "PASS fixtures ($(grep '^using' "$out/fixtures.log"))"
else
  rc=$?
  echo "FAIL fixtures (rc $rc; $out/fixtures.log)"; tail -20 "$out/fixtures.log"
  fail=1
fi

lib=${SGCAP_LIBTORCH_CUDA:-$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))' 2>/dev/null)}
if [ -z "$lib" ] || [ ! -f "$lib" ]; then
  echo "FAIL torch: libtorch_cuda.so not found with $py"
  exit 1
fi
echo "torch: $lib"
cubins=$(mktemp -d)
trap 'rm -rf "$cubins"' EXIT
if ! "$ts" --extract "$lib" 90 "$cubins"; then
  echo "FAIL extract"
  exit 1
fi

# mangled family prefixes (a plain "reduce_kernel" also matches the
# symmetric-memory all_reduce kernels, whose pointers come from memory)
for fam in 29vectorized_elementwise_kernel 27unrolled_elementwise_kernel 13reduce_kernel; do
  picks=$(for f in $(ls -Sr "$cubins"/*.cubin); do
            if grep -q "$fam" "$f"; then echo "$f"; fi
          done | head -3)
  if [ -z "$picks" ]; then
    echo "FAIL $fam: in no sm_90 cubin"
    fail=1
    continue
  fi
  # shellcheck disable=SC2086
  timeout 550 "$ts" --summary --match "$fam" $picks > "$out/summary_$fam.txt" 2>&1
  cat "$out/summary_$fam.txt" | sed "s/^/  $fam: /"
  line=$(grep '^kernels' "$out/summary_$fam.txt")
  k=$(echo "$line" | sed -E 's/^kernels ([0-9]+), analysed ([0-9]+), .* ([0-9]+) \(([0-9.]+)%\)$/\1/')
  a=$(echo "$line" | sed -E 's/^kernels ([0-9]+), analysed ([0-9]+), .* ([0-9]+) \(([0-9.]+)%\)$/\2/')
  pct=$(echo "$line" | sed -E 's/.*\(([0-9.]+)%\)$/\1/')
  if [ -n "$k" ] && [ "$k" = "$a" ] && awk -v p="$pct" 'BEGIN { exit !(p >= 80) }'; then
    echo "PASS $fam ($a/$k analysed, $pct% certain)"
  else
    echo "FAIL $fam ($line)"
    fail=1
  fi
  first=$(echo "$picks" | head -1)
  name=$(basename "$first" .cubin)
  cp "$first" "$out/torch/${fam}_${name}_sm90.cubin"
  "$ts" "$first" > "$out/torch/${fam}_${name}_sm90.txt" 2>&1
  if [ "$fam" = 29vectorized_elementwise_kernel ]; then
    "$build/bench/bench_sass" "$first" | tee "$out/bench_sass.txt"
  fi
done
# every kernel of a spread of cubins (each 40th by size, ~11 of 448): the
# shares over all of PyTorch's kinds of kernels (informative)
spread=$(ls -S "$cubins"/*.cubin | awk 'NR % 40 == 20')
# shellcheck disable=SC2086
timeout 550 "$ts" --summary $spread > "$out/summary_all.txt" 2>&1
sed 's/^/  every kernel of every 40th cubin: /' "$out/summary_all.txt"
# the cost side by side on the same kernels (issue 11: <= 5 ms per distinct
# kernel, disassembler included), five ways (bench/bench_sass.c): the code
# as it is, one nvdisasm batch per cubin (how it was) and one for all; each
# distinct instruction once, one batch for all (what a bundle's kernels
# get), with no cache directory, an empty one, a warm one
# shellcheck disable=SC2086
timeout 550 "$build/bench/bench_sass" --images 100000 $spread 2>&1 | tee "$out/bench_sass_spread.txt" |
  sed 's/^/  cost: /'
# shellcheck disable=SC2086
if timeout 550 "$ts" --compare $spread > "$out/compare.txt" 2>&1; then
  echo "PASS $(tail -n 1 "$out/compare.txt" | sed 's/^PASS: //') (distinct instructions vs the whole code)"
else
  echo "FAIL compare: $(tail -n 3 "$out/compare.txt")"
  fail=1
fi
echo "cubins and facts for tests/data/sass/torch/: $out/torch/"
exit $fail
