// refusals.cu: kernels fusion must split at or refuse (tests/unit/test_fuse.c).
#include <cstddef>
// a 3-point stencil: reads its neighbours, which other threads (other CTAs
// at the block edges) of the previous stage wrote
__global__ void rf_stencil(const float *in, float *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i + 1 < n) out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
// a CTA shared-memory stage: reverses each block's elements
__global__ void rf_shared(const float *in, float *out, size_t n)
{
    __shared__ float tile[256];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x];
}
// a pointwise stage that only runs to the end: fine
__global__ void rf_scale(const float *in, float *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
// an atomic accumulation
__global__ void rf_atomic(const float *in, float *sum, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, in[i]);
}
// exit in the middle (asm), which ends the thread for every later stage
__global__ void rf_exit(const float *in, float *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] < 0.0f) asm volatile("exit;");
    if (i < n) out[i] = in[i];
}
// reads its block's elements in reverse from global memory: what another
// thread of the same CTA wrote in the stage before (CTA-local: tier 2)
__global__ void rf_reverse(const float *in, float *out, size_t n)
{
    size_t base = (size_t)blockIdx.x * blockDim.x;
    size_t i = base + threadIdx.x;
    if (i < n) out[i] = in[base + (blockDim.x - 1 - threadIdx.x)];
}
