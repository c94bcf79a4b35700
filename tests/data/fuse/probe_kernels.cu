__global__ void k_axpb(float *y, const float *x, float m, float add, unsigned long n)
{
    unsigned long i = blockIdx.x * (unsigned long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fmaf_rn(x[i], m, add);
}
__global__ void k_square(float *y, unsigned long n)
{
    unsigned long i = blockIdx.x * (unsigned long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fmul_rn(y[i], y[i]);
}
__global__ void k_combine(float *out, const float *b, const float *c, unsigned long n)
{
    unsigned long i = blockIdx.x * (unsigned long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = __fmaf_rn(b[i], 0.75f, c[i]);
}
