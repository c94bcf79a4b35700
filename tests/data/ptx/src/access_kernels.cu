/* access_kernels.cu: small kernels in the shapes frameworks and hand-written
 * CUDA use, compiled to PTX fixtures (tests/data/ptx/gen.sh) for the PTX
 * reader and the access analysis (tests/unit/test_ptx.c, test_access.c).
 * Each kernel's comment states the accesses the analysis must find. */
#include <stdint.h>
#include <stddef.h>

/* Grid-stride loop, 64-bit index: reads x[0, n), writes y[0, n). */
extern "C" __global__ void gs_scale(float *y, const float *x, float a, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x)
        y[i] = x[i] * a;
}

/* Grid-stride loop with a 32-bit int index (wrap obligations). */
extern "C" __global__ void gs_int(int *y, const int *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[i] + 1;
}

/* float4 loads and stores, one vector per thread: n4 vectors. */
extern "C" __global__ void vec4_copy(float4 *y, const float4 *x, size_t n4)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x[i];
        v.x += 1.0f;
        y[i] = v;
    }
}

/* Atomics: histogram (data-dependent atomic index) and a counter. */
extern "C" __global__ void histo(unsigned *bins, const unsigned char *in, size_t n,
                                 unsigned long long *count)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[in[i]], 1u);
        atomicAdd(count, 1ull);
    }
}

/* Pointer loaded from memory: table of row pointers. */
extern "C" __global__ void ptr_table(float **rows, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = rows[i][0];
}

/* Data-dependent index: gather. */
extern "C" __global__ void gather(float *out, const float *src, const int *idx, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = src[idx[i]];
}

/* 2-D indexing with a parameter row pitch (elements). */
extern "C" __global__ void add2d(float *c, const float *a, const float *b, int w, int h,
                                 int pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) c[y * pitch + x] = a[y * pitch + x] + b[y * pitch + x];
}

/* Pointers inside a by-value struct, like TensorIterator's Array<char*, N>. */
struct ptr_array3 {
    char *data[3];
};
extern "C" __global__ void struct_ptrs(ptr_array3 a, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float *out = (float *)a.data[0];
        const float *p = (const float *)a.data[1];
        const float *q = (const float *)a.data[2];
        out[i] = p[i] * q[i];
    }
}

/* Row sums: a loop with a parameter-bounded trip count. */
extern "C" __global__ void row_sum(float *out, const float *m, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) s += m[(size_t)r * cols + c];
        out[r] = s;
    }
}

/* CTA-local: a shared-memory tile, a barrier, neighbours inside the block. */
extern "C" __global__ void tile_shift(float *y, const float *x)
{
    __shared__ float t[256];
    size_t i = blockIdx.x * 256 + threadIdx.x;
    t[threadIdx.x] = x[i];
    __syncthreads();
    y[i] = t[(threadIdx.x + 1) & 255];
}

/* Refusal-list material. */
__device__ float g_scale = 2.0f;
__constant__ float c_bias[4] = {1.0f, 2.0f, 3.0f, 4.0f};

extern "C" __global__ void uses_globals(float *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * g_scale + c_bias[i & 3];
}

extern "C" __global__ void early_exit(float *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) asm volatile("exit;");
    y[i] = 0.0f;
}

extern "C" __global__ void dyn_smem(float *y)
{
    extern __shared__ float s[];
    unsigned sz;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(sz));
    s[threadIdx.x] = (float)sz;
    __syncthreads();
    y[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void tex_read(float *y, cudaTextureObject_t t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tex1Dfetch<float>(t, i);
}

__device__ __noinline__ float helper(const float *p, int i) { return p[i] * 3.0f; }

extern "C" __global__ void calls_func(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = helper(x, i);
}

extern "C" __global__ void prints(int n)
{
    if (threadIdx.x == 0) printf("n=%d\n", n);
}

/* Read-only cache path and restrict: ld.global.nc. */
extern "C" __global__ void ldg_axpy(float *__restrict__ y, const float *__restrict__ x, float a,
                                    size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * __ldg(&x[i]) + y[i];
}

/* Warp shuffle reduction, one atomic per warp. */
extern "C" __global__ void warp_sum(float *out, const float *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

/* Stencil over the whole grid: neighbours i-1 and i+1, bounds-checked. */
extern "C" __global__ void stencil3(float *y, const float *x, long n)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float l = i > 0 ? x[i - 1] : 0.0f;
        float r = i + 1 < n ? x[i + 1] : 0.0f;
        y[i] = l + x[i] + r;
    }
}

/* Returns before a barrier that the other threads reach (refusal rule 4). */
extern "C" __global__ void early_ret_barrier(float *y, const float *x, int n)
{
    __shared__ float t[128];
    int i = blockIdx.x * 128 + threadIdx.x;
    if (i >= n) return;
    t[threadIdx.x] = x[i];
    __syncthreads();
    y[i] = t[127 - threadIdx.x];
}
