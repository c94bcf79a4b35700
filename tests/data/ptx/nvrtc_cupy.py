#!/usr/bin/env python3
"""nvrtc_cupy.py: PTX fixtures in the shape CuPy's ElementwiseKernel gives,
compiled with NVRTC through ctypes (no GPU, no CuPy needed).

CuPy passes every array argument as a by-value CArray struct {T *data;
ptrdiff_t size; ptrdiff_t shape[ndim]; ptrdiff_t strides[ndim]} and the
loop bound in a CIndexer struct, and walks the elements with a grid-stride
loop. The header below is written here to reproduce that layout and loop;
it is not CuPy's code. Output: cupy_elementwise.ptx (compute_90).
Usage: python3 nvrtc_cupy.py OUT_DIR [SASS_DIR] (SASS_DIR: also
cupy_sm90.ptx and cupy_sm90.cubin, one source both ways, for the SASS path)"""
import ctypes
import importlib.util
import os
import sys

HEADER = r"""
/* An array argument: pointer, element count, shape and byte strides. */
template <typename T, int ndim, bool c_contiguous = false, bool use_32bit = false>
struct CArray {
    T *data_;
    ptrdiff_t size_;
    ptrdiff_t shape_[ndim];
    ptrdiff_t strides_[ndim];
    __device__ T &operator[](ptrdiff_t i) const {
        if (c_contiguous) return data_[i];
        /* element i of a strided array: walk the dimensions from the last */
        char *p = reinterpret_cast<char *>(data_);
        for (int d = ndim - 1; d >= 0; d--) {
            ptrdiff_t k = shape_[d] > 1 ? i % shape_[d] : 0;
            p += k * strides_[d];
            i = shape_[d] > 1 ? i / shape_[d] : i;
        }
        return *reinterpret_cast<T *>(p);
    }
};

/* The loop bound of an elementwise launch. */
template <int ndim, bool use_32bit = false>
struct CIndexer {
    ptrdiff_t size_;
    ptrdiff_t shape_[ndim];
    __device__ ptrdiff_t size() const { return size_; }
};

#define ELEMENTWISE_LOOP(i, n)                                                   \
    for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; \
         i < (n); i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)
#define ELEMENTWISE_LOOP32(i, n)                                                 \
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned int)(n); \
         i += blockDim.x * gridDim.x)
"""

KERNELS = r"""
/* y = a * x + b, contiguous, 64-bit indexing (CuPy's default). */
extern "C" __global__ void cupy_axpb(const CArray<float, 1, true> _raw_x, const float a,
                                     const float b, CArray<float, 1, true> _raw_y,
                                     CIndexer<1> _ind)
{
    ELEMENTWISE_LOOP(i, _ind.size()) {
        const float x = _raw_x[i];
        _raw_y[i] = a * x + b;
    }
}

/* out = in0 + in1, contiguous, 32-bit indexing. */
extern "C" __global__ void cupy_add32(const CArray<float, 1, true, true> _raw_in0,
                                      const CArray<float, 1, true, true> _raw_in1,
                                      CArray<float, 1, true, true> _raw_out0,
                                      CIndexer<1, true> _ind)
{
    ELEMENTWISE_LOOP32(i, _ind.size()) {
        _raw_out0[i] = _raw_in0[i] + _raw_in1[i];
    }
}

/* out = in0 (a strided 1-D view: the stride is a struct member). */
extern "C" __global__ void cupy_copy_strided(const CArray<double, 1, false> _raw_in0,
                                             CArray<double, 1, true> _raw_out0,
                                             CIndexer<1> _ind)
{
    ELEMENTWISE_LOOP(i, _ind.size()) {
        _raw_out0[i] = _raw_in0[i];
    }
}

/* out = in0 * 2 on a 2-D strided view: div/mod index decomposition. */
extern "C" __global__ void cupy_scale_2d(const CArray<float, 2, false> _raw_in0,
                                         CArray<float, 2, false> _raw_out0,
                                         CIndexer<2> _ind)
{
    ELEMENTWISE_LOOP(i, _ind.size()) {
        _raw_out0[i] = _raw_in0[i] * 2.0f;
    }
}
"""


# For the SASS path (tests/data/sass/cupy_sm90.*): the kernels above plus
# two loops that are not CuPy's grid-stride shape, which must stay unknown.
NOT_GRID_STRIDE = r"""
/* steps by blockDim.x only: not the grid stride */
extern "C" __global__ void loop_block_step(const CArray<float, 1, true> _raw_x,
                                           CArray<float, 1, true> _raw_y, CIndexer<1> _ind)
{
    for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < _ind.size(); i += blockDim.x)
        _raw_y[i] = _raw_x[i] + 1.0f;
}

/* the bound is loaded from memory: data-dependent */
extern "C" __global__ void loop_loaded_bound(const CArray<float, 1, true> _raw_x,
                                             CArray<float, 1, true> _raw_y, const long long *n)
{
    ELEMENTWISE_LOOP(i, n[0]) {
        _raw_y[i] = _raw_x[i] * 3.0f;
    }
}
"""


def cupy14_kernels():
    """CuPy 14's own loop shape for the SASS path (cupy_sm90.*): `#pragma
    unroll 1` over CUPY_FOR, references through `_ind.get()`, the element
    address data + stride * index in the index type (int with 32-bit
    indexing), as tests/data/fuse/cupy_chain/gen.py writes it (its header,
    in a namespace here so that it sits beside the one above). A unary and
    a binary kernel with 32-bit indexing, a unary one with 64-bit, and
    sinf (its table loop)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuse", "cupy_chain",
                        "gen.py")
    spec = importlib.util.spec_from_file_location("cupy_chain_gen", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = "namespace cupy14 {\n" + gen.HEADER + "}\ntypedef float X;\ntypedef float Y;\n"
    for name, body, idx32 in (("cupy14_square", "y = x * x", True),
                              ("cupy14_axpb64", "y = 1.5f * x + 2.0f", False),
                              # sinf's argument reduction reads a table of the
                              # module in a loop inside the grid-stride one
                              ("cupy14_sin", "y = sinf(x)", True)):
        k = gen.kernel(0, body, idx32).replace("sg_stage0", name)
        out += k.replace("CArray<", "cupy14::CArray<").replace("CIndexer<", "cupy14::CIndexer<")
    out += r"""
extern "C" __global__ void cupy14_add(const cupy14::CArray<float, 1, true, true> _raw_in0,
                                      const cupy14::CArray<float, 1, true, true> _raw_in1,
                                      cupy14::CArray<float, 1, true, true> _raw_out0,
                                      cupy14::CIndexer<1> _ind) {
  ;
  #pragma unroll 1
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    const float in0 = _raw_in0[_ind.get()];
    const float in1 = _raw_in1[_ind.get()];
    _raw_out0[_ind.get()] = in0 + in1;
  }
  ;
}
"""
    return out


def nvrtc():
    for name in ("libnvrtc.so", "libnvrtc.so.13"):
        for d in (os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/lib64", ""):
            try:
                return ctypes.CDLL(os.path.join(d, name) if d else name)
            except OSError:
                pass
    sys.exit("nvrtc_cupy.py: libnvrtc not found")


def compile_ptx(lib, src, name, opts):
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc:
        sys.exit("nvrtcCreateProgram: %d" % rc)
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc:
        sys.exit("nvrtcCompileProgram failed:\n" + log.value.decode())
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value.decode()


def compile_cubin(lib, src, name, opts):
    """The same through NVRTC to SASS (what CuPy's kernel cache holds)."""
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc:
        sys.exit("nvrtcCreateProgram: %d" % rc)
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    if lib.nvrtcCompileProgram(prog, len(opts), argv):
        sys.exit("nvrtcCompileProgram (cubin) failed")
    size = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return cubin.raw


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    lib = nvrtc()
    ptx = compile_ptx(lib, HEADER + KERNELS, "cupy_elementwise.cu",
                      ["--gpu-architecture=compute_90", "--std=c++17"])
    with open(os.path.join(out, "cupy_elementwise.ptx"), "w") as f:
        f.write(ptx)
    # usage: nvrtc_cupy.py OUT_DIR [SASS_DIR]: also the SASS fixtures, one
    # source compiled both ways (PTX and sm_90 cubin) so the two paths can
    # be compared kernel by kernel
    if len(sys.argv) > 2:
        src = HEADER + KERNELS + NOT_GRID_STRIDE + cupy14_kernels()
        sass = sys.argv[2]
        with open(os.path.join(sass, "cupy_sm90.ptx"), "w") as f:
            f.write(compile_ptx(lib, src, "cupy_sass.cu",
                                ["--gpu-architecture=compute_90", "--std=c++17"]))
        with open(os.path.join(sass, "cupy_sm90.cubin"), "wb") as f:
            f.write(compile_cubin(lib, src, "cupy_sass.cu",
                                  ["--gpu-architecture=sm_90", "--std=c++17"]))


if __name__ == "__main__":
    main()
