/* kernels.cu: the code of the replay GPU tests' workload. It is compiled to
 * a fatbin (SASS and PTX for sm_90) at build time and embedded in
 * replay_make_bundle, which loads it with cuLibraryLoadData and saves the
 * same bytes in every bundle it writes: the replay runs exactly the code the
 * producer ran. Most kernels are extern "C"; k_poly is a namespaced
 * template, so one name goes through real C++ mangling, and it takes a
 * struct by value with a pointer inside, which relocation must find. */

struct Coeffs {
    float a, b;
    const float *bias; /* 256 floats; offset 8 in the struct */
};

extern "C" __global__ void k_axpb(float *y, const float *x, float m, float add,
                                  unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        y[i] = __fmaf_rn(x[i], m, add);
}

extern "C" __global__ void k_square(float *y, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        y[i] = __fmul_rn(y[i], y[i]);
}

extern "C" __global__ void k_combine(float *out, const float *b, const float *c,
                                     unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = __fmaf_rn(b[i], 0.75f, c[i]);
}

/* reads what was in acc before the graph ran: the before-snapshot matters */
extern "C" __global__ void k_accum(float *acc, const float *v, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        acc[i] = __fadd_rn(acc[i], v[i]);
}

extern "C" __global__ void k_copy(float *dst, const float *src, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* the synthetic bundles' kernel: tiny, so launch and graph costs dominate */
extern "C" __global__ void k_inc(float *y, unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fadd_rn(y[i], 1.0f);
}

namespace sgt
{
/* Long-running on few blocks: the two fork branches run it side by side,
 * which the profiled trace must show. */
template <int R>
__global__ void k_poly(float *y, const float *x, Coeffs c, unsigned long long n, int iters)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float v = x[i];
        for (int it = 0; it < iters; it++)
#pragma unroll
            for (int r = 0; r < R; r++)
                v = __fmaf_rn(v, c.a, c.b);
        y[i] = __fadd_rn(v, c.bias[i & 255]);
    }
}
template __global__ void k_poly<3>(float *, const float *, Coeffs, unsigned long long, int);
} // namespace sgt
