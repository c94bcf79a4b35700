#!/usr/bin/env python3
"""gen.py: the CuPy chain fixture of tests/unit/test_fuse.c, a bundle in the
shape CuPy 14 gives when tests/gpu/frameworks/cupy_elementwise.py's chain (8
ElementwiseKernels on one stream, float32, 1M elements) is captured.

The graph (nodes, edges, buffers, parameter bytes, geometry) is the one the
H200 captured (/work/data/probe1/cupy_elementwise/b/python3.1372.1.sgraph,
copied into graph.in.json with its snapshots left out). That capture found
CuPy's kernel cache warm, so it holds SASS-only cubins and no source; here
each kernel gets what a cold cache gives instead: the NVRTC program as
captured (an `nvrtc` image, source and options) and the cubin NVRTC made
from it (the kernel's image, linked by `source_image`), both made here with
NVRTC through ctypes (no GPU, no CuPy).

The source follows CuPy 14's ElementwiseKernel template (typedefs, the
kernel with `#pragma unroll 1`, CUPY_FOR, `_ind.set(i)`, references
`_raw_x[_ind.get()]`), parameters `CArray<float, 1, true, true>` (32-bit
indexing, c-contiguous: 32 bytes each) and `CIndexer<1>` (24 bytes). The
header below is written here in CuPy's layout and semantics (data, size,
shape, strides; element address data + int(stride) * int(index) for 32-bit
indexing); it is not CuPy's code, and it is inlined into each source so the
recompile needs no include path.

Also cupy_chain64.ptx: the same stages with 64-bit indexing (CuPy's choice
for arrays of 2^31 bytes or more), one PTX module for compute_90.

Usage: python3 gen.py   (writes cupy_chain.sgraph/ and cupy_chain64.ptx beside this file)"""
import ctypes
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

HEADER = r"""
/* CuPy-shaped array arguments (see gen.py): not CuPy's code. */
template <bool B, class T, class F> struct sgc_if { typedef T type; };
template <class T, class F> struct sgc_if<false, T, F> { typedef F type; };

template <typename T, int _ndim, bool _c_contiguous = false, bool _use_32bit_indexing = false>
class CArray {
public:
    static const int ndim = _ndim;
    typedef typename sgc_if<_use_32bit_indexing, int, ptrdiff_t>::type index_t;
private:
    T *data_;
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim];
    ptrdiff_t strides_[_ndim];
public:
    /* element at a multi-index: byte strides, in the index type */
    template <typename Int> __device__ const T &operator[](const Int (&idx)[_ndim]) const {
        const char *p = reinterpret_cast<const char *>(data_);
        for (int d = 0; d < _ndim; ++d)
            p += static_cast<index_t>(strides_[d]) * static_cast<index_t>(idx[d]);
        return *reinterpret_cast<const T *>(p);
    }
    template <typename Int> __device__ T &operator[](const Int (&idx)[_ndim]) {
        return const_cast<T &>(static_cast<const CArray &>(*this)[idx]);
    }
};

template <int _ndim> class CIndexer {
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim];
    ptrdiff_t index_[_ndim];
public:
    __device__ ptrdiff_t size() const { return size_; }
    __device__ const ptrdiff_t (&get() const)[_ndim] { return index_; }
    __device__ void set(ptrdiff_t i) {
        /* the 1-D case only: the multi-index is the linear index */
        index_[0] = i;
    }
};

#define CUPY_FOR(i, n)                                                                     \
    for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x;      \
         i < (n); i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)
"""

# the chain of tests/gpu/frameworks/cupy_elementwise.py
BODIES = [
    "y = 1.5f * x + 2.0f",
    "y = x * x",
    "y = sqrtf(x + 1.0f)",
    "y = fminf(fmaxf(x, 0.0f), 50.0f)",
    "y = -0.5f * x + 1.0f",
    "y = x * x",
    "y = sinf(x)",
    "y = 3.0f * x - 1.0f",
]

OPTIONS = "-arch=sm_90 --std=c++17"


def kernel(i, body, idx32=True):
    """CuPy 14's ElementwiseKernel template for ("float32 x", "float32 y")."""
    arr = "CArray<float, 1, true, %s>" % ("true" if idx32 else "false")
    return (
        '\nextern "C" __global__ void sg_stage%d(const %s _raw_x, %s _raw_y, CIndexer<1> _ind) {\n'
        "  ;\n  #pragma unroll 1\n  CUPY_FOR(i, _ind.size()) {\n    _ind.set(i);\n"
        "    const X &x = _raw_x[_ind.get()];\n    Y &y = _raw_y[_ind.get()];\n"
        "    %s;\n  }\n  ;\n}\n" % (i, arr, arr, body))


def source(i, body, idx32=True):
    return "typedef float X;\ntypedef float Y;\n" + HEADER + kernel(i, body, idx32)


def lib(names):
    for n in names:
        for d in (os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/lib64", ""):
            try:
                return ctypes.CDLL(os.path.join(d, n) if d else n)
            except OSError:
                pass
    sys.exit("gen.py: none of %s found" % (names,))


def compile_(nv, src, name, opts, ptx=False):
    prog = ctypes.c_void_p()
    if nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None):
        sys.exit("nvrtcCreateProgram failed")
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = nv.nvrtcCompileProgram(prog, len(opts), argv)
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetProgramLog(prog, log)
    if rc:
        sys.exit("nvrtcCompileProgram failed:\n" + log.value.decode())
    get_size, get = (nv.nvrtcGetPTXSize, nv.nvrtcGetPTX) if ptx else (nv.nvrtcGetCUBINSize, nv.nvrtcGetCUBIN)
    get_size(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    get(prog, out)
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return out.raw[: size.value].rstrip(b"\0") if ptx else out.raw[: size.value]


def main():
    nv = lib(["libnvrtc.so", "libnvrtc.so.13"])
    xx = lib(["libxxhash.so", "libxxhash.so.0"])
    xx.XXH64.restype = ctypes.c_uint64
    xx.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    with open(os.path.join(HERE, "graph.in.json")) as f:
        g = json.load(f)
    out = os.path.join(HERE, "cupy_chain.sgraph")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "code"))
    images = []
    kernels = [n for n in g["nodes"] if n["type"] == "kernel"]
    for i, n in enumerate(kernels):
        src = source(i, BODIES[i]).encode()
        bin_ = compile_(nv, src.decode(), "sg_stage%d.cu" % i, OPTIONS.split())
        for kind, data, ext in (("nvrtc", src, "cu"), ("cubin", bin_, "cubin")):
            h = "%016x" % xx.XXH64(data, len(data), 0)
            with open(os.path.join(out, "code", h + "." + ext), "wb") as f:
                f.write(data)
            im = {"id": len(images), "kind": kind, "hash": h, "file": "code/%s.%s" % (h, ext),
                  "size": len(data)}
            if kind == "nvrtc":
                im.update({"ptx_archs": [], "sass_archs": [], "options": OPTIONS,
                           "note": "NVRTC program sg_stage%d.cu" % i})
            else:
                im.update({"ptx_archs": [], "sass_archs": [90], "source_image": len(images) - 1,
                           "note": "loaded by cuModuleLoadData; nvrtc-source:%s (image %d)"
                                   % (images[-1]["hash"], len(images) - 1)})
                n["kernel"]["image"] = im["id"]
            images.append(im)
    g["images"] = images
    with open(os.path.join(out, "graph.json"), "w") as f:
        json.dump(g, f, indent=2)
        f.write("\n")
    # the same eight stages with 64-bit indexing (arrays of 2^31 bytes or more),
    # one module, as PTX: test_fuse builds its bundle from graph.in.json
    src64 = "typedef float X;\ntypedef float Y;\n" + HEADER + "".join(
        kernel(i, b, idx32=False) for i, b in enumerate(BODIES))
    ptx = compile_(nv, src64, "cupy_chain64.cu", ["--gpu-architecture=compute_90", "--std=c++17"], ptx=True)
    with open(os.path.join(HERE, "cupy_chain64.ptx"), "wb") as f:
        f.write(ptx)


if __name__ == "__main__":
    main()
