/* chains: same-stream elementwise kernel chains, the fusion candidates. Every
 * kernel here has the same launch geometry and each element is touched only
 * by its own thread, so fusing a chain is legal wherever no barrier (event
 * edge, memory node) cuts it. Lengths 2, 4 and 8; float, uint32 and double;
 * on two streams. One float chain keeps its intermediates in memory allocated
 * and freed inside the capture (cudaMallocAsync/cudaFreeAsync), so its chain
 * is bounded by mem_alloc and mem_free nodes. Checks every result exactly. */
#include "common.h"

static const char ABOUT[] =
    "chains: elementwise chains, all with the same geometry (256-thread blocks,\n"
    "one element per thread), split over two streams:\n"
    "  s0: memset acc = 0 | fork (e0) | mallocAsync t1, t2 | float chain of 4 via\n"
    "      t1/t2 into out4 | freeAsync t1, t2 | float chain of 8 in place on out8 |\n"
    "      join (e1) | uint32 chain of 2 into out2 (reads s1's acc)\n"
    "  s1: uint32 chain of 4 accumulating into acc (starts from s0's memset) |\n"
    "      double chain of 2 into outd\n"
    "Largest legal fusion: s0 kernels 3-6, 9-16, 17-18 and s1 kernels 0-5 (18\n"
    "kernels become 4); never across streams, memory nodes or the join.\n"
    "Checks: the captured graph matches --expect; out4, out8, acc, outd and out2\n"
    "equal the CPU results bit for bit after every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };
enum { F8_STEPS = 8, I4_STEPS = 4 };

typedef struct {
    size_t n;
    const float *inf;
    const uint32_t *ini;
    const double *ind;
    float *out4, *out8;
    uint32_t *acc, *out2;
    double *outd;
} bufs_t;

/* Float chain of 4 (through t1 and t2). */
__global__ void k_f4_a(float *t1, const float *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) t1[i] = f32_fma(x[i], 1.25f, 0.5f);
}
__global__ void k_f4_b(float *t2, const float *t1, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) t2[i] = f32_mul(t1[i], t1[i]);
}
__global__ void k_f4_c(float *t1, const float *t2, const float *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) t1[i] = f32_add(t2[i], x[i]);
}
__global__ void k_f4_d(float *out, const float *t1, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = f32_fma(t1[i], 0.5f, -1.0f);
}

/* Float chain of 8: one load from x, then seven in-place steps. The scale
 * 0.96875 + k/128 is exact in float, so it is the same value whether or not
 * the compiler contracts its computation. */
__host__ __device__ static inline float f8_step(float v, int k)
{
    return (k % 2) ? f32_mul(v, 0.96875f + 0.0078125f * (float)k) : f32_fma(v, -0.75f, (float)k);
}
__global__ void k_f8_first(float *y, const float *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = f8_step(x[i], 0);
}
__global__ void k_f8_step(float *y, int k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = f8_step(y[i], k);
}

/* uint32 chain of 4, accumulating in place from the memset. */
__host__ __device__ static inline uint32_t i4_step(uint32_t acc, uint32_t in, int k)
{
    switch (k) {
    case 0:
        return acc * 3u + in;
    case 1:
        return acc ^ (in << 3);
    case 2:
        return acc + 0x9E3779B9u;
    default:
        return (acc >> 1) ^ in;
    }
}
__global__ void k_i4_step(uint32_t *acc, const uint32_t *in, int k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) acc[i] = i4_step(acc[i], in[i], k);
}

/* double chain of 2. */
__global__ void k_d2_a(double *y, const double *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = f64_fma(x[i], 1.5, 0.25);
}
__global__ void k_d2_b(double *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = f64_mul(y[i], y[i]);
}

/* uint32 chain of 2 after the join. */
__global__ void k_i2_a(uint32_t *y, const uint32_t *acc, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = acc[i] ^ 0xA5A5A5A5u;
}
__global__ void k_i2_b(uint32_t *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * 31u + 7u;
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    const size_t n = b->n;
    void *t1 = NULL, *t2 = NULL;
    cap_begin(c, S0);
    cap_memset(c, S0, b->acc, 0, n * sizeof(uint32_t));
    cap_record(c, E_FORK, S0);

    cap_wait(c, S1, E_FORK);
    for (int k = 0; k < I4_STEPS; k++)
        CAP_LAUNCH(c, S1, k_i4_step, grid, block, b->acc, b->ini, k, n);
    CAP_LAUNCH(c, S1, k_d2_a, grid, block, b->outd, b->ind, n);
    CAP_LAUNCH(c, S1, k_d2_b, grid, block, b->outd, n);
    cap_record(c, E_JOIN, S1);

    cap_malloc(c, S0, &t1, n * sizeof(float));
    cap_malloc(c, S0, &t2, n * sizeof(float));
    CAP_LAUNCH(c, S0, k_f4_a, grid, block, (float *)t1, b->inf, n);
    CAP_LAUNCH(c, S0, k_f4_b, grid, block, (float *)t2, (const float *)t1, n);
    CAP_LAUNCH(c, S0, k_f4_c, grid, block, (float *)t1, (const float *)t2, b->inf, n);
    CAP_LAUNCH(c, S0, k_f4_d, grid, block, b->out4, (const float *)t1, n);
    cap_free(c, S0, t1);
    cap_free(c, S0, t2);
    CAP_LAUNCH(c, S0, k_f8_first, grid, block, b->out8, b->inf, n);
    for (int k = 1; k < F8_STEPS; k++)
        CAP_LAUNCH(c, S0, k_f8_step, grid, block, b->out8, k, n);

    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_i2_a, grid, block, b->out2, b->acc, n);
    CAP_LAUNCH(c, S0, k_i2_b, grid, block, b->out2, n);
    cap_end(c, S0);
}

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    sample_parse(&o, argc, argv);
    cap_t *c = cap_create(&o, NSTREAMS, NEVENTS);
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    if (o.expect) {
        issue(c, &b);
        cap_destroy(c);
        return 0;
    }
    const size_t n = o.n, fb = n * sizeof(float), ib = n * sizeof(uint32_t),
                 db = n * sizeof(double);
    float *hf = (float *)host_alloc(fb), *w4 = (float *)host_alloc(fb),
          *w8 = (float *)host_alloc(fb);
    float *gf = (float *)host_alloc(fb);
    uint32_t *hi = (uint32_t *)host_alloc(ib), *wacc = (uint32_t *)host_alloc(ib);
    uint32_t *w2 = (uint32_t *)host_alloc(ib), *gi = (uint32_t *)host_alloc(ib);
    double *hd = (double *)host_alloc(db), *wd = (double *)host_alloc(db);
    double *gd = (double *)host_alloc(db);
    fill_f32(hf, n, 8, -2.0f, 2.0f);
    fill_u32(hi, n, 9);
    fill_f64(hd, n, 10, -3.0, 3.0);
    for (size_t i = 0; i < n; i++) {
        float t1 = f32_fma(hf[i], 1.25f, 0.5f);
        float t2 = f32_mul(t1, t1);
        t1 = f32_add(t2, hf[i]);
        w4[i] = f32_fma(t1, 0.5f, -1.0f);
        float v = hf[i];
        for (int k = 0; k < F8_STEPS; k++)
            v = f8_step(v, k);
        w8[i] = v;
        uint32_t acc = 0;
        for (int k = 0; k < I4_STEPS; k++)
            acc = i4_step(acc, hi[i], k);
        wacc[i] = acc;
        w2[i] = (acc ^ 0xA5A5A5A5u) * 31u + 7u;
        double d = f64_fma(hd[i], 1.5, 0.25);
        wd[i] = f64_mul(d, d);
    }
    float *inf = (float *)dev_alloc(fb);
    uint32_t *ini = (uint32_t *)dev_alloc(ib);
    double *ind = (double *)dev_alloc(db);
    b.inf = inf;
    b.ini = ini;
    b.ind = ind;
    b.out4 = (float *)dev_alloc(fb);
    b.out8 = (float *)dev_alloc(fb);
    b.acc = (uint32_t *)dev_alloc(ib);
    b.out2 = (uint32_t *)dev_alloc(ib);
    b.outd = (double *)dev_alloc(db);
    dev_upload(inf, hf, fb);
    dev_upload(ini, hi, ib);
    dev_upload(ind, hd, db);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.out4, fb);
        dev_poison(b.out8, fb);
        dev_poison(b.acc, ib);
        dev_poison(b.out2, ib);
        dev_poison(b.outd, db);
        graph_run(exec, c->stream[S0]);
        dev_download(gf, b.out4, fb);
        bad += check_f32(o.prog, "out4", gf, w4, n);
        dev_download(gf, b.out8, fb);
        bad += check_f32(o.prog, "out8", gf, w8, n);
        dev_download(gi, b.acc, ib);
        bad += check_u32(o.prog, "acc", gi, wacc, n);
        dev_download(gi, b.out2, ib);
        bad += check_u32(o.prog, "out2", gi, w2, n);
        dev_download(gd, b.outd, db);
        bad += check_f64(o.prog, "outd", gd, wd, n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    void *dev[] = {inf, ini, ind, b.out4, b.out8, b.acc, b.out2, b.outd};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        CUDA_CHECK(cudaFree(dev[k]));
    cap_destroy(c);
    void *host[] = {hf, w4, w8, gf, hi, wacc, w2, gi, hd, wd, gd};
    for (size_t k = 0; k < sizeof host / sizeof host[0]; k++)
        free(host[k]);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, chains of 2/4/8 kernels, %zu elements)\n", o.prog, o.replays, n);
    return 0;
}
