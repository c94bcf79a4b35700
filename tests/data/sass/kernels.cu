// kernels.cu: fixtures for the SASS access analysis (code/sass.h, test_sass).
// Small kernels that imitate what PyTorch's SASS-only kernels do, compiled by
// make_fixtures.sh with `nvcc -cubin -arch=sm_XX` into the committed cubins
// beside this file. What the analysis must find is in expected_sm*.txt.
#include <cstdint>

template <typename T, int N> struct Array { T data[N]; };
struct Relu { __device__ float operator()(float x) const { return x > 0.f ? x : 0.f; } };

// plain global index with a bounds check, scalar
extern "C" __global__ void add_scalar(float *out, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// the same, float4
extern "C" __global__ void vec4_simple(float4 *out, const float4 *in, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) { float4 v = in[i]; v.x *= 2; v.y *= 2; v.z *= 2; v.w *= 2; out[i] = v; }
}

// PyTorch's vectorized_elementwise_kernel<4, f, Array<char*,2>> shape: the
// pointers inside a by-value struct, 128 threads, 4 elements per thread,
// float4 for full blocks, an unrolled scalar loop for the last block.
template <int vec_size, typename func_t, typename array_t>
__global__ void __launch_bounds__(128) vectorized_elementwise_kernel(int N, func_t f, array_t data)
{
    constexpr int block_work = vec_size * 128;
    int remaining = N - block_work * blockIdx.x;
    if (remaining < block_work) {
        float *o = (float *)data.data[0] + block_work * blockIdx.x;
        const float *in = (const float *)data.data[1] + block_work * blockIdx.x;
#pragma unroll
        for (int k = 0; k < vec_size; k++) {
            int j = threadIdx.x + k * 128;
            if (j < remaining) o[j] = f(in[j]);
        }
        return;
    }
    const float4 *in = (const float4 *)data.data[1] + 128 * blockIdx.x;
    float4 *o = (float4 *)data.data[0] + 128 * blockIdx.x;
    float4 v = in[threadIdx.x];
    v.x = f(v.x); v.y = f(v.y); v.z = f(v.z); v.w = f(v.w);
    o[threadIdx.x] = v;
}
template __global__ void vectorized_elementwise_kernel<4, Relu, Array<char *, 2>>(int, Relu, Array<char *, 2>);

// PyTorch's unrolled_elementwise_kernel shape (no vector path)
template <typename func_t, typename array_t>
__global__ void __launch_bounds__(128) unrolled_elementwise_kernel(int N, func_t f, array_t data)
{
    int remaining = N - 512 * blockIdx.x;
    const float *in = (const float *)data.data[1] + 512 * blockIdx.x;
    float *o = (float *)data.data[0] + 512 * blockIdx.x;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        int j = threadIdx.x + 128 * k;
        if (j < remaining) o[j] = f(in[j]);
    }
}
template __global__ void unrolled_elementwise_kernel<Relu, Array<char *, 2>>(int, Relu, Array<char *, 2>);

// grid-stride loop: the addresses change around the loop
extern "C" __global__ void grid_stride(double *out, const double *in, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)blockDim.x * gridDim.x)
        out[i] = in[i] * 3.0;
}

// a block reduction ending in an atomic
extern "C" __global__ void reduce_sum(float *out, const float *in, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

// an index loaded from memory
extern "C" __global__ void gather(float *out, const float *in, const int *idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[idx[i]];
}

// atomics at data-dependent addresses
extern "C" __global__ void histo(unsigned *bins, const unsigned char *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[in[i]], 1u);
}

// a pointer loaded from memory: the store cannot be attributed
extern "C" __global__ void ptr_from_mem(float **tab, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tab[0][i] = 1.0f;
}

// one of two pointers: both are address words
extern "C" __global__ void select_ptr(float *a, float *b, int which, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *p = which ? a : b;
    if (i < n) p[i] = 2.0f;
}

// the store happens in a non-inlined function of the kernel's own section
__device__ __noinline__ void put(float *p, int i, float v) { p[i] = v; }
extern "C" __global__ void calls_helper(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) put(out, i, 3.0f);
}

// two-dimensional indexing
extern "C" __global__ void two_d(float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = 0.f;
}
