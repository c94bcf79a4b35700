#!/bin/sh
# gen.sh: regenerate the PTX fixtures of tests/unit/test_fuse.c with the CUDA
# toolkit (nvcc; no GPU needed): the fusion benchmark's 8-stage chain
# (bench/fusion_chain.cu) for sm_90 and for nvcc's default target
# (compute_75), the refusal cases of refusals.cu (PTX, and a cubin: SASS only), and
# probe_kernels.cu: tests/optimize/optimize_probe.c's kernels as real code (its fuse scenarios).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
NVCC=${NVCC:-nvcc}
"$NVCC" -ptx -arch=compute_90 "$root/bench/fusion_chain.cu" -o "$here/fusion_chain.sm90.ptx"
"$NVCC" -ptx "$root/bench/fusion_chain.cu" -o "$here/fusion_chain.sm75.ptx"
"$NVCC" -ptx -arch=compute_90 "$here/refusals.cu" -o "$here/refusals.sm90.ptx"
"$NVCC" -cubin -arch=sm_90 "$here/refusals.cu" -o "$here/refusals.sm90.cubin"
"$NVCC" -ptx -arch=compute_90 "$here/probe_kernels.cu" -o "$here/probe_kernels.sm90.ptx"
