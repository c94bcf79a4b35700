#!/usr/bin/env bash
# tools/sass_dump on the CPU: the fixture check through this machine's
# nvdisasm (what tests/gpu/sass_torch.sh runs on the GPU machine), the facts
# of the committed listings equal to their expected files, a summary, and
# clear failures on bad input. Exit 77 when no nvdisasm is found.
# usage: sass_dump_cpu.sh SASS_DUMP DATA_DIR WORKDIR
set -u
tool=$1 data=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }

for a in 90 80 cupy_90; do
  stem=kernels_sm$a expected=expected_text_sm$a.txt arch=$a
  if [ $a = cupy_90 ]; then stem=cupy_sm90 expected=expected_text_cupy_sm90.txt arch=90; fi
  if "$tool" --text $arch "$data/$stem.sass" >"$work/text$a.txt" 2>&1 &&
    cmp -s "$work/text$a.txt" "$data/$expected"; then
    ok "--text $arch: the facts of $stem.sass as in $expected"
  else
    fail "--text $arch $stem.sass"
    diff "$work/text$a.txt" "$data/$expected" | head -n 20
  fi
done
"$tool" 2>/dev/null; [ $? -eq 2 ] && ok "no argument: usage, exit 2" || fail "no argument"
"$tool" --text x "$data/kernels_sm90.sass" 2>"$work/badarch.err"
[ $? -eq 2 ] && grep -q "not an arch number" "$work/badarch.err" && ok "bad arch: exit 2" ||
  fail "bad arch"
"$tool" "$work/absent.cubin" 2>"$work/absent.err"
[ $? -eq 1 ] && grep -q "absent.cubin: cannot read" "$work/absent.err" &&
  ok "missing cubin: exit 1, said so" || fail "missing cubin: $(cat "$work/absent.err")"
"$tool" "$data/kernels_sm90.sass" 2>"$work/notelf.err"
[ $? -eq 1 ] && grep -q "not an ELF cubin" "$work/notelf.err" && ok "not a cubin: exit 1, said so" ||
  fail "not a cubin: $(cat "$work/notelf.err")"
"$tool" --extract "$data/kernels_sm90.sass" 90 "$work" >"$work/extract.out" 2>&1
[ $? -eq 1 ] && grep -q "no readable .nv_fatbin" "$work/extract.out" &&
  ok "--extract on a file without a fatbin: exit 1" || fail "--extract: $(cat "$work/extract.out")"

"$tool" --check "$data" >"$work/check.out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
  echo "no nvdisasm: the cubin checks are skipped"
  [ $failed -eq 0 ] && exit 77
  exit 1
fi
if [ $rc -eq 0 ] && [ "$(grep -c '^ok   kernels sm_' "$work/check.out")" = 28 ] &&
  [ "$(grep -c '^ok   cupy sm_90' "$work/check.out")" = 4 ]; then
  ok "--check: 7 archs and CuPy's loops, distinct instructions and whole code, default and split runs, facts as expected"
else
  fail "--check (exit $rc)"
  head -n 40 "$work/check.out"
fi
# tail.cu's selects: the cubin through nvdisasm gives the listing's facts
"$tool" "$data/tail_sm90.cubin" | grep '^  ' >"$work/tail_cubin.txt" 2>&1
"$tool" --text 90 "$data/tail_sm90.sass" | grep '^  ' >"$work/tail_text.txt" 2>&1
if [ -s "$work/tail_cubin.txt" ] && cmp -s "$work/tail_cubin.txt" "$work/tail_text.txt" &&
  ! grep -q unknown "$work/tail_cubin.txt"; then
  ok "tail_sm90.cubin: every access known, the facts of its listing"
else
  fail "tail_sm90.cubin"
  diff "$work/tail_cubin.txt" "$work/tail_text.txt" | head -n 10
fi
# a wrong expected file is caught
mkdir -p "$work/wrong"
cp "$data"/kernels_sm*.cubin "$data"/expected_sm*.txt "$data"/cupy_sm90.cubin \
  "$data"/expected_cupy_sm90.txt "$work/wrong/"
sed -i '1s/certain/CERTAIN/' "$work/wrong/expected_sm90.txt"
"$tool" --check "$work/wrong" >"$work/wrong.out" 2>&1
[ $? -eq 1 ] && grep -q "FAIL kernels sm_90 (distinct instructions, runs side by side): the facts differ" "$work/wrong.out" &&
  grep -q "FAIL kernels sm_90 (whole code, 5 runs): the facts differ" "$work/wrong.out" &&
  ok "--check: a changed expected file fails" || fail "--check did not catch a changed expected file"
"$tool" "$data/kernels_sm90.cubin" >"$work/dump90.txt" 2>&1 && cmp -s "$work/dump90.txt" "$data/expected_sm90.txt" &&
  ok "dump of kernels_sm90.cubin as in expected_sm90.txt" || fail "dump of kernels_sm90.cubin"
"$tool" --summary --match add_scalar "$data/kernels_sm90.cubin" >"$work/summary.txt" 2>&1 &&
  grep -q "^kernels 1, analysed 1, certain (every store attributed) 1 (100.0%)" "$work/summary.txt" &&
  ok "--summary --match" || fail "--summary: $(cat "$work/summary.txt")"
# both ways of disassembling give the same facts on every fixture cubin
"$tool" --compare "$data"/kernels_sm*.cubin "$data/cupy_sm90.cubin" "$data/tail_sm90.cubin" \
  >"$work/compare.txt" 2>&1 && grep -q "^PASS: 9 cubins, " "$work/compare.txt" &&
  ok "--compare: the same facts both ways" || fail "--compare: $(tail -n 3 "$work/compare.txt")"
# one batch for two cubins; fewer instructions disassembled than analysed,
# and all of them with --whole-code
"$tool" --summary --batch "$data/kernels_sm90.cubin" "$data/cupy_sm90.cubin" >"$work/batch.txt" 2>&1
b_ins=$(sed -n 's/.*: \([0-9]*\) instructions, \([0-9]*\) given to nvdisasm, \([0-9]*\) nvdisasm runs.*/\1 \2 \3/p' "$work/batch.txt")
"$tool" --summary --batch --whole-code "$data/kernels_sm90.cubin" "$data/cupy_sm90.cubin" >"$work/batchw.txt" 2>&1
w_ins=$(sed -n 's/.*: \([0-9]*\) instructions, \([0-9]*\) given to nvdisasm, \([0-9]*\) nvdisasm runs.*/\1 \2 \3/p' "$work/batchw.txt")
n90=$(grep -c '^kernel ' "$data/expected_sm90.txt"); ncp=$(grep -c '^kernel ' "$data/expected_cupy_sm90.txt")
set -- $b_ins $w_ins
if grep -q "^kernels $((n90 + ncp)), analysed $((n90 + ncp))," "$work/batch.txt" &&
   grep -q "one batch for all cubins, each distinct instruction once" "$work/batch.txt" &&
   [ $# -eq 6 ] && [ "$3" = 1 ] && [ "$2" -lt "$1" ] && [ "$4" = "$1" ] && [ "$5" = "$4" ]; then
  ok "--summary --batch: $1 instructions, $2 distinct ones disassembled in one run"
else
  fail "--summary --batch: $(tail -n 1 "$work/batch.txt") / $(tail -n 1 "$work/batchw.txt")"
fi
echo "sass_dump_cpu: $failed failed"
[ $failed -eq 0 ]
