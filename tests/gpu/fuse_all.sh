#!/usr/bin/env bash
# fuse_all.sh: `sgcap rewrite --passes fuse` on every bundle of every sample
# (static and shared cudart), the PyTorch and CuPy capture scripts, then
# `sgcap replay FUSED --validate` (bit-exact against the original run's
# snapshots) and `sgcap replay B --vs FUSED --bench N` (the speedup per
# bundle). A bundle where nothing fused is still validated (the rewrite must
# not break it). One line per bundle, a summary; exit 1 when a rewrite or a
# validation failed.
# usage: tests/gpu/fuse_all.sh BUILD_DIR [OUT_DIR] [PROGRAM...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: fuse_all.sh BUILD_DIR [OUT_DIR] [PROGRAM...]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out" && out=$(cd "$out" && pwd)
shift 2 2>/dev/null || shift $#
sgcap=$build/bin/sgcap
bench=${SGCAP_FUSE_BENCH:-100}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for n in fork_join ping_pong pipeline3 pipeline4 diamond event_reuse two_waiters async_alloc \
           chains chain_barrier stencil fan3; do
    names+=("$n" "${n}_shared")
  done
  names+=(torch_two_stream cupy_fork_join frameworks/cupy_elementwise frameworks/torch_shared_input)
fi
bundles=0 fused_bundles=0 fused_kernels=0 bad=0
for n in "${names[@]}"; do
  case $n in
  *torch* | *cupy*) cmd=(python3 "$here/$n.py") ;;
  *) cmd=("$build/samples/$n") ;;
  esac
  tag=${n//\//_}
  dir=$out/$tag
  rm -rf "$dir"
  cache=$(mktemp -d) # a fresh CuPy kernel cache: CuPy runs NVRTC and the source is captured
  CUPY_CACHE_DIR=$cache timeout 300 "$sgcap" run --snapshot --out "$dir" -- "${cmd[@]}" \
    >"$out/$tag.run.log" 2>&1
  rc=$?
  rm -rf "$cache"
  if grep -q ': skip' "$out/$tag.run.log"; then
    echo "fuse $tag: skipped ($(grep -m1 ': skip' "$out/$tag.run.log"))"
    continue
  fi
  [ $rc -eq 0 ] || { echo "fuse $tag: FAIL: the program failed under the shim (exit $rc)"; bad=$((bad + 1)); continue; }
  for b in "$dir"/*.sgraph; do
    [ -d "$b" ] || continue
    bundles=$((bundles + 1))
    f=${b%.sgraph}.fused.sgraph
    name=$(basename "$b")
    if ! timeout 300 "$sgcap" rewrite "$b" -o "$f" --passes fuse --force --report "$b.fuse.txt" \
        >"$b.fuse.log" 2>&1; then
      echo "fuse $tag/$name: FAIL: rewrite: $(tail -n 1 "$b.fuse.log")"
      bad=$((bad + 1))
      continue
    fi
    k=$(grep -c '^  fused n' "$b.fuse.txt")
    summary=$(grep -m1 '^summary:' "$b.fuse.txt" | sed 's/^summary: //')
    if [ "$k" -gt 0 ]; then fused_bundles=$((fused_bundles + 1)); fused_kernels=$((fused_kernels + k)); fi
    if timeout 300 "$sgcap" replay "$f" --validate >"$b.fused.validate.log" 2>&1; then
      v="bit-exact"
    elif grep -q 'in-process only' "$b.fused.validate.log"; then
      v="in-process only"
    else
      v="VALIDATION FAILED ($(grep -m1 -iE 'mismatch|error' "$b.fused.validate.log"))"
      bad=$((bad + 1))
    fi
    speed=""
    if [ "$k" -gt 0 ] && [ "$v" = bit-exact ]; then
      timeout 300 "$sgcap" replay "$b" --vs "$f" --bench "$bench" >"$b.fused.bench.log" 2>&1 &&
        speed=$(grep -o 'ratio .*' "$b.fused.bench.log" | awk '{r=$NF; if (r > 0) printf "speedup %.2fx", 1 / r}')
    fi
    echo "fuse $tag/$name: $summary; $v${speed:+; $speed}"
    grep -E '^  (refused|split|not fused)' "$b.fuse.txt" | head -3 | sed 's/^/    /'
  done
done
echo "fuse: $bundles bundles, $fused_bundles with fused kernels ($fused_kernels kernels), $bad failures"
[ $bad -eq 0 ]
