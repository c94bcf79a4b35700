// A minimal CUDA runtime program for the CPU tests: on a machine without a
// GPU (or driver) it must print and exit exactly the same with and without
// libsgcap preloaded.
#include <cstdio>
#include <cuda_runtime.h>

int main()
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    std::printf("count=%d error=%s\n", e == cudaSuccess ? n : -1, cudaGetErrorName(e));
    return e == cudaSuccess ? 0 : 2;
}
