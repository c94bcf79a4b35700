// fatbin_kernels.cu: a small CUDA file that tests/fatbin/fatbin.cmake
// compiles with many nvcc modes; test_fatbin reads the results. It has a
// C-named kernel, a templated (mangled) kernel, and a non-inlined device
// function, which must not be listed as a kernel in a relocatable cubin.
#include <cuda_runtime.h>

__device__ __noinline__ float sg_fb_helper(float x) { return x * 2.0f + 1.0f; }

extern "C" __global__ void sg_fb_add(float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += sg_fb_helper(b[i]);
}

template <typename T> __global__ void sg_fb_scale(T *a, T s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= s;
}
template __global__ void sg_fb_scale<float>(float *, float, int);

// The host program is never run by the tests (no GPU in CI); it exists so
// that the executable has real .nv_fatbin and .nvFatBinSegment sections.
int main(int argc, char **argv)
{
    if (argc > 1) {
        float *a = nullptr;
        sg_fb_add<<<1, 32>>>(a, a, 0);
        sg_fb_scale<float><<<1, 32>>>(a, 2.0f, 0);
        return cudaDeviceSynchronize() != cudaSuccess;
    }
    return 0;
}
