/* triton_kernels.cu: two one-kernel cubins named like Triton's (compiled
 * with and without -DSECOND), with their PTX, for the CPU test of finding
 * Triton's PTX in its cache (capture_cpu.sh builds a fake cache from them). */
#ifdef SECOND
extern "C" __global__ void triton_red_fused_sum_1(float *p)
{
    if (p) p[threadIdx.x] += 2.0f;
}
#else
extern "C" __global__ void triton_poi_fused_add_0(float *p)
{
    if (p) p[threadIdx.x] += 1.0f;
}
#endif
