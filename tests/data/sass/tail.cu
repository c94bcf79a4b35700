// tail.cu: fixtures for the SASS analysis' selects (code/sass_flow.c,
// test_sass_select). PyTorch's vectorized_elementwise_kernel handles a
// block's short remainder with an unrolled loop that stops at the first
// element past the end and steps its index by the block otherwise; the
// elements are zero-initialised. nvcc turns that loop into a chain of
// selects (SEL R3, R14, R17, P0 then @!P6 VIADD R3, R3, 0x80, ...) that
// only the comparison guarding each step tells apart. Compiled by
// make_fixtures.sh (nvcc -cubin -arch=sm_90) into tail_sm90.cubin and the
// listing tail_sm90.sass that the test reads.
#include <cstdint>

template <typename T, int N> struct Array { T data[N]; };
struct Twice { __device__ float operator()(float x) const { return 2.f * x; } };

template <int W>
struct Tail {
    Array<char *, 2> data;
    int remaining;
    __device__ bool inbounds(int i) const { return (int)(threadIdx.x + i * 128) < remaining; }
    __device__ void load(float *x, int idx) const {
        int t = threadIdx.x;
#pragma unroll
        for (int i = 0; i < W; i++) {
            bool stop = t >= remaining;
            uint32_t off = (uint32_t)(t + W * 128 * idx);
            if (!stop) x[i] = *(reinterpret_cast<const float *>(data.data[1]) + off);
            t = stop ? t : t + 128;
        }
    }
    __device__ void store(const float *x, int idx) const {
        int t = threadIdx.x;
#pragma unroll
        for (int i = 0; i < W; i++) {
            if (t >= remaining) return;
            uint32_t off = (uint32_t)(t + W * 128 * idx);
            *(reinterpret_cast<float *>(data.data[0]) + off) = x[i];
            t += 128;
        }
    }
};

// N floats, W per thread, 128 threads: full blocks take float4s, the last
// one the selects.
template <int W, typename F>
__global__ void __launch_bounds__(128) tail_kernel(int N, F f, Array<char *, 2> data)
{
    int remaining = N - W * 128 * blockIdx.x;
    if (remaining >= W * 128) {
        const float4 *in = (const float4 *)data.data[1] + (W / 4) * 128 * blockIdx.x;
        float4 *o = (float4 *)data.data[0] + (W / 4) * 128 * blockIdx.x;
#pragma unroll
        for (int k = 0; k < W / 4; k++) {
            float4 v = in[threadIdx.x + 128 * k];
            v.x = f(v.x); v.y = f(v.y); v.z = f(v.z); v.w = f(v.w);
            o[threadIdx.x + 128 * k] = v;
        }
        return;
    }
    Tail<W> p{data, remaining};
    int idx = blockIdx.x;
    float x[W] = {}, r[W];
    p.load(x, idx);
#pragma unroll
    for (int i = 0; i < W; i++)
        if (p.inbounds(i)) r[i] = f(x[i]);
    p.store(r, idx);
}
template __global__ void tail_kernel<8, Twice>(int, Twice, Array<char *, 2>);
template __global__ void tail_kernel<4, Twice>(int, Twice, Array<char *, 2>);
