#!/usr/bin/env bash
# End to end on the GPU, per program: run it under `sgcap run --snapshot`;
# then for each bundle it wrote: `sgcap check` (a correct sample has no
# cross-stream hazard: exit 0), `sgcap inspect --code` (does every kernel
# have PTX usable on this GPU, and if not, why), and `sgcap replay --validate`
# in a fresh process (every buffer compared with the snapshot taken after the
# original launch). Programs: every sample (static and shared cudart), plus
# the PyTorch and CuPy capture scripts. Prints one line per bundle and a
# summary; exits 1 if a replay failed or a sample had a hazard.
# usage: tests/gpu/e2e_replay.sh BUILD_DIR [OUT_DIR] [PROGRAM...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: e2e_replay.sh BUILD_DIR [OUT_DIR] [PROGRAM...]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
shift 2 2>/dev/null || shift $#
sgcap=$build/bin/sgcap
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for n in fork_join ping_pong pipeline3 pipeline4 diamond event_reuse two_waiters async_alloc \
           chains chain_barrier stencil fan3; do
    names+=("$n" "${n}_shared")
  done
  for n in single_node capture_to_graph explicit_graph conditional mem_nodes host_copy; do
    names+=("$n" "${n}_shared")
  done
  names+=(torch_two_stream cupy_fork_join torch_compile_streams torch_graphed_callables
          torch_shared_input jax_jit cupy_elementwise)
fi
ok=0; bad=0; inproc=0; nothing=0; hazards=0; ptx_ok=0; ptx_total=0
for n in "${names[@]}"; do
  case $n in
  torch_two_stream | cupy_fork_join) cmd=(python3 "$here/$n.py") ;;
  torch_* | jax_* | cupy_*) cmd=(python3 "$here/frameworks/$n.py") ;;
  *) cmd=("$build/samples/$n") ;;
  esac
  dir=$out/$n
  rm -rf "$dir"
  # CuPy links kernels to their NVRTC source only when it compiles them.
  if ! CUPY_CACHE_DIR=$out/cupy-cache timeout 180 "$sgcap" run --snapshot --out "$dir" -- "${cmd[@]}" \
       >"$out/$n.run.log" 2>&1; then
    echo "e2e $n: FAIL: the program failed under the shim"; tail -5 "$out/$n.run.log"
    bad=$((bad + 1)); continue
  fi
  found=0
  for b in "$dir"/*.sgraph; do
    [ -d "$b" ] || continue
    found=1
    name=$(basename "$b")
    "$sgcap" check "$b" >"$b.check.log" 2>&1
    crc=$?
    chk="no hazard"
    if [ $crc -ne 0 ]; then
      chk="HAZARDS: $(tail -n 1 "$b.check.log")"
      case $n in torch_* | cupy_* | jax_*) ;; *) hazards=$((hazards + 1)) ;; esac
    fi
    "$sgcap" inspect --code "$b" >"$b.code.log" 2>&1
    code=$(head -n 1 "$b.code.log" | sed -n 's/.*: \([0-9]*\) kernels\?, \([0-9]*\) with usable PTX.*/\2 of \1 kernels with PTX/p')
    k=$(head -n 1 "$b.code.log" | sed -n 's/.*: \([0-9]*\) kernels, \([0-9]*\) with.*/\1 \2/p')
    if [ -n "$k" ]; then
      ptx_total=$((ptx_total + ${k% *})); ptx_ok=$((ptx_ok + ${k#* }))
    fi
    why=$(grep -o 'PTX: [a-z_]*' "$b.code.log" | grep -v 'PTX: ok' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    timeout 120 "$sgcap" replay "$b" --validate >"$b.replay.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      res="validated ($(grep -m1 -o '[0-9]* buffers\? compared: [0-9]* match, [0-9]* MISMATCH' "$b.replay.log"))"
      ok=$((ok + 1))
    elif [ $rc -eq 3 ]; then
      res="NOTHING COMPARED: $(grep -m1 'NOTHING COMPARED' "$b.replay.log" | sed 's/.*(exit 3): //')"
      nothing=$((nothing + 1))
    elif grep -q "in-process only" "$b.replay.log"; then
      res="in-process only: $(grep -m1 -A1 'in-process only' "$b.replay.log" | tail -n 1 | sed 's/^ *//')"
      inproc=$((inproc + 1))
    else
      res="REPLAY FAILED (exit $rc): $(tail -n 2 "$b.replay.log" | tr '\n' ' ')"
      bad=$((bad + 1))
    fi
    echo "e2e $n: $name: check: $chk; code: ${code:-?}${why:+ [$why]}; replay: $res"
  done
  [ $found -eq 1 ] || { echo "e2e $n: FAIL: no bundle written"; tail -5 "$out/$n.run.log"; bad=$((bad + 1)); }
done
echo "e2e_replay: $ok validated, $bad failed, $inproc in-process only, ${nothing:-0} compared nothing; samples with hazards: $hazards; kernels with PTX: $ptx_ok of $ptx_total"
[ $bad -eq 0 ] && [ $hazards -eq 0 ]
