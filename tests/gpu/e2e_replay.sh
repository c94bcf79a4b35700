#!/usr/bin/env bash
# End to end on the GPU: every sample (static and shared cudart) runs under
# `sgcap run --snapshot`, then each bundle it wrote is replayed in a fresh
# process with `sgcap replay --validate`, which compares every buffer with the
# snapshot taken after the original launch. Prints one line per bundle and
# "N validated, N failed, N in-process only".
# usage: tests/gpu/e2e_replay.sh BUILD_DIR [OUT_DIR] [SAMPLE...]
set -u
build=$(cd "${1:?usage: e2e_replay.sh BUILD_DIR [OUT_DIR] [SAMPLE...]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
shift 2 2>/dev/null || shift $#
sgcap=$build/bin/sgcap
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(fork_join ping_pong pipeline3 pipeline4 diamond event_reuse two_waiters async_alloc
         chains chain_barrier stencil fan3)
fi
ok=0; bad=0; inproc=0
for n in "${names[@]}"; do
  for v in "" _shared; do
    bin=$build/samples/$n$v
    [ -x "$bin" ] || { echo "e2e $n$v: MISSING binary"; bad=$((bad + 1)); continue; }
    dir=$out/$n$v
    rm -rf "$dir"
    if ! timeout 120 "$sgcap" run --snapshot --out "$dir" -- "$bin" >"$out/$n$v.run.log" 2>&1; then
      echo "e2e $n$v: FAIL: the sample failed under the shim"; tail -5 "$out/$n$v.run.log"
      bad=$((bad + 1)); continue
    fi
    found=0
    for b in "$dir"/*.sgraph; do
      [ -d "$b" ] || continue
      found=1
      timeout 120 "$sgcap" replay "$b" --validate >"$b.replay.log" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then
        echo "e2e $n$v: $(basename "$b"): validated: $(grep -m1 -E 'buffers compared' "$b.replay.log")"
        ok=$((ok + 1))
      elif grep -q "in-process only" "$b.replay.log"; then
        echo "e2e $n$v: $(basename "$b"): in-process only: $(grep -m1 'in-process only' "$b.replay.log")"
        inproc=$((inproc + 1))
      else
        echo "e2e $n$v: $(basename "$b"): FAIL (exit $rc)"; tail -8 "$b.replay.log"
        bad=$((bad + 1))
      fi
    done
    [ $found -eq 1 ] || { echo "e2e $n$v: FAIL: no bundle written"; tail -5 "$out/$n$v.run.log"; bad=$((bad + 1)); }
  done
done
echo "e2e_replay: $ok validated, $bad failed, $inproc in-process only"
[ $bad -eq 0 ]
