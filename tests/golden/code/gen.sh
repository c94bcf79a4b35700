#!/bin/sh
# gen.sh: the code images of the golden fixtures, compiled with the toolkit's
# nvcc (sm_90 SASS + compute_90 PTX, as the samples build): one fatbin per
# sample fixture from the sample's own source, and bug_kernels.fatbin for the
# planted-bug fixtures. make_fixtures.py puts each into its fixture's code/
# folder under its content hash. Run from anywhere; commit what changes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
nvcc=${NVCC:-nvcc}
gencode="-gencode arch=compute_90,code=[sm_90,compute_90]"
for s in fork_join ping_pong pipeline3 pipeline4 diamond event_reuse two_waiters async_alloc chains chain_barrier stencil; do
    "$nvcc" -fatbin $gencode -I"$root/samples" "$root/samples/$s.cu" -o "$here/$s.fatbin"
done
"$nvcc" -fatbin $gencode "$here/bug_kernels.cu" -o "$here/bug_kernels.fatbin"
