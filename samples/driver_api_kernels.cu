/* driver_api_kernels.cu: the kernels of driver_api.c. Compiled to PTX only
 * (compute_90) and embedded in driver_api as text, so the capture shim sees a
 * module loaded with cuModuleLoadData rather than a registered fatbin.
 * extern "C" keeps the entry names unmangled for cuModuleGetFunction. */

extern "C" __global__ void drv_scale(unsigned *y, const unsigned *x, unsigned a, unsigned b,
                                     unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * a + b;
}

extern "C" __global__ void drv_mix(unsigned *z, const unsigned *y, unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) z[i] ^= y[i] ^ (y[i] >> 5);
}

extern "C" __global__ void drv_combine(unsigned *out, const unsigned *w, const unsigned *z,
                                       unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = w[i] + z[i];
}
