#!/bin/sh
# gen.sh: regenerate the PTX fixtures of tests/unit/test_ptx.c and
# test_access.c with the CUDA toolkit (nvcc, NVRTC; no GPU needed).
#   sample_<name>.sm90.ptx  nvcc -ptx -arch=compute_90 of samples/<name>.cu
#   sample_<name>.sm75.ptx  the same with nvcc's default target (compute_75), for
#                           fork_join and chains only (nvcc 13 emits the same
#                           bodies for both targets; these keep the JIT path covered)
#   access_kernels.sm90.ptx / .sm75.ptx   src/access_kernels.cu
#   cupy_*.ptx              NVRTC, CuPy-style ElementwiseKernels (nvrtc_cupy.py)
# triton_*.ptx are hand-written in the shape Triton 3.6 emits and are not
# regenerated here. Run from anywhere: sh tests/data/ptx/gen.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
NVCC=${NVCC:-nvcc}
for cu in "$root"/samples/*.cu; do
    name=$(basename "$cu" .cu)
    grep -q __global__ "$cu" || continue
    "$NVCC" -ptx -arch=compute_90 -I"$root/samples" "$cu" -o "$here/sample_$name.sm90.ptx"
    case $name in fork_join | chains)
        "$NVCC" -ptx -I"$root/samples" "$cu" -o "$here/sample_$name.sm75.ptx" ;;
    esac
done
"$NVCC" -ptx -arch=compute_90 "$here/src/access_kernels.cu" -o "$here/access_kernels.sm90.ptx"
"$NVCC" -ptx "$here/src/access_kernels.cu" -o "$here/access_kernels.sm75.ptx"
python3 "$here/nvrtc_cupy.py" "$here"
