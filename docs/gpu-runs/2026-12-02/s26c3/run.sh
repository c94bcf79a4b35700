#!/usr/bin/env bash
# s26 call 3: the before/after comparison again, made robust to the host's
# drift (s26c2's phase-only rounds saw the 10k median move 15 -> 24 ms with
# the binary unchanged): the full bench (every row, as a user runs it),
# before (38a87d1) and after, alternating, four rounds; then the all-passes
# row alone, before and after alternating every 3 pairs, 30 rounds.
set -u
cd "$(dirname "$0")/../../../.."
[ -d .dev/build ] || python3 -c "import tarfile; tarfile.open('.dev/build.txz').extractall('.dev')"
B=$PWD/.dev/build
cat .dev/COMMIT
cp $B/bench/bench_rewrite .dev/s26/bench_rewrite_after
echo "== full bench, before and after alternating, at $SECONDS s"
for k in 1 2 3 4; do
  for v in bench_rewrite_base bench_rewrite_after; do
    BENCH_REWRITE_RAW=1 .dev/s26/$v 10000 100000 11 2> $OUT/full.$v.$k.raw > $OUT/full.$v.$k.txt
    echo "$v round $k: $(grep -E '^all passes' $OUT/full.$v.$k.txt) | clone: $(grep -E '^clone' $OUT/full.$v.$k.txt | awk '{print $(NF-2)}')"
  done
done
echo "== all passes alone, alternating every 3 pairs, at $SECONDS s"
for k in $(seq 1 30); do
  for v in bench_rewrite_base bench_rewrite_after; do
    BENCH_REWRITE_RAW=1 BENCH_REWRITE_PHASE="all passes" .dev/s26/$v 10000 100000 3 > /dev/null 2> $OUT/$v.$k.raw
  done
done
python3 .dev/s26/pair.py $OUT/bench_rewrite_*.raw | grep POOLED
echo "== the full benches' rows, pooled"
python3 .dev/s26/pair.py $OUT/full.*.raw | grep POOLED
(cd $OUT && tar czf raw.tgz *.raw && rm -f *.raw)
echo "all done at $SECONDS s"
