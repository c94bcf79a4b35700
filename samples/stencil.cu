/* stencil: neighbour reads across thread blocks, next to elementwise kernels
 * with the same launch geometry. Fusion must be refused at every stencil
 * boundary even though the geometry matches: the stencil reads elements that
 * other blocks wrote in the kernel before it (read after write), and the
 * in-place update after it overwrites elements that other blocks' stencil
 * threads still read (write after read). s0 runs a 1-D three-point stencil
 * twice; s1 runs a 2-D five-point stencil on a 2-D launch. Checks exactly. */
#include "common.h"

static const char ABOUT[] =
    "stencil: s0: x = in*3+1; record e0; then twice { y = x[i-1] + 2x[i] + 3x[i+1]\n"
    "(zero outside); x = x ^ (y*5) in place }; wait e1; out = x + u*7.\n"
    "s1 (waits e0): u = in2 ^ 0x01234567; v = 4u[r][c] + u[r-1][c] + u[r+1][c]\n"
    "+ 2u[r][c-1] + 3u[r][c+1] (zero outside; 2-D launch, 32x8 blocks); u = u + v\n"
    "in place; record e1.\n"
    "Every kernel on a stream has the same geometry, but no two neighbouring\n"
    "kernels on s0 or s1 may fuse: each stencil reads across block boundaries\n"
    "what the previous kernel wrote, and the next kernel overwrites what it read.\n"
    "--n must be a multiple of 8192 (rows of 1024).\n"
    "Checks: the captured graph matches --expect; x, u and out equal the CPU\n"
    "results after every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };
enum { WIDTH = 1024, STENCIL_STEPS = 2 };

typedef struct {
    size_t n;
    const uint32_t *in, *in2;
    uint32_t *x, *y, *u, *v, *out;
} bufs_t;

__host__ __device__ static inline uint32_t at(const uint32_t *p, long i, long n)
{
    return (i >= 0 && i < n) ? p[i] : 0u;
}

__host__ __device__ static inline uint32_t stencil1d(const uint32_t *x, long i, long n)
{
    return at(x, i - 1, n) + 2u * x[i] + 3u * at(x, i + 1, n);
}

__host__ __device__ static inline uint32_t stencil2d(const uint32_t *u, long r, long c, long h)
{
    uint32_t s = 4u * u[r * WIDTH + c];
    if (r > 0) s += u[(r - 1) * WIDTH + c];
    if (r + 1 < h) s += u[(r + 1) * WIDTH + c];
    if (c > 0) s += 2u * u[r * WIDTH + c - 1];
    if (c + 1 < WIDTH) s += 3u * u[r * WIDTH + c + 1];
    return s;
}

__global__ void k_init(uint32_t *x, const uint32_t *in, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = in[i] * 3u + 1u;
}

__global__ void k_stencil1d(uint32_t *y, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = stencil1d(x, (long)i, (long)n);
}

__global__ void k_update1d(uint32_t *x, const uint32_t *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] ^= y[i] * 5u;
}

__global__ void k_init2d(uint32_t *u, const uint32_t *in2, long h)
{
    long c = blockIdx.x * (long)blockDim.x + threadIdx.x,
         r = blockIdx.y * (long)blockDim.y + threadIdx.y;
    if (r < h && c < WIDTH) u[r * WIDTH + c] = in2[r * WIDTH + c] ^ 0x01234567u;
}

__global__ void k_stencil2d(uint32_t *v, const uint32_t *u, long h)
{
    long c = blockIdx.x * (long)blockDim.x + threadIdx.x,
         r = blockIdx.y * (long)blockDim.y + threadIdx.y;
    if (r < h && c < WIDTH) v[r * WIDTH + c] = stencil2d(u, r, c, h);
}

__global__ void k_update2d(uint32_t *u, const uint32_t *v, long h)
{
    long c = blockIdx.x * (long)blockDim.x + threadIdx.x,
         r = blockIdx.y * (long)blockDim.y + threadIdx.y;
    if (r < h && c < WIDTH) u[r * WIDTH + c] += v[r * WIDTH + c];
}

__global__ void k_final(uint32_t *out, const uint32_t *x, const uint32_t *u, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + u[i] * 7u;
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    const long h = (long)(b->n / WIDTH);
    const dim3 block2(32, 8), grid2(WIDTH / 32, (unsigned)(h / 8));
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_init, grid, block, b->x, b->in, b->n);
    cap_record(c, E_FORK, S0);

    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_init2d, grid2, block2, b->u, b->in2, h);
    CAP_LAUNCH(c, S1, k_stencil2d, grid2, block2, b->v, b->u, h);
    CAP_LAUNCH(c, S1, k_update2d, grid2, block2, b->u, b->v, h);
    cap_record(c, E_JOIN, S1);

    for (int s = 0; s < STENCIL_STEPS; s++) {
        CAP_LAUNCH(c, S0, k_stencil1d, grid, block, b->y, b->x, b->n);
        CAP_LAUNCH(c, S0, k_update1d, grid, block, b->x, b->y, b->n);
    }
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_final, grid, block, b->out, b->x, b->u, b->n);
    cap_end(c, S0);
}

static void reference(uint32_t *x, uint32_t *u, uint32_t *out, const uint32_t *in,
                      const uint32_t *in2, size_t n)
{
    const long h = (long)(n / WIDTH);
    uint32_t *tmp = (uint32_t *)host_alloc(n * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++)
        x[i] = in[i] * 3u + 1u;
    for (int s = 0; s < STENCIL_STEPS; s++) {
        for (size_t i = 0; i < n; i++)
            tmp[i] = stencil1d(x, (long)i, (long)n);
        for (size_t i = 0; i < n; i++)
            x[i] ^= tmp[i] * 5u;
    }
    for (size_t i = 0; i < n; i++)
        u[i] = in2[i] ^ 0x01234567u;
    for (long r = 0; r < h; r++)
        for (long c = 0; c < WIDTH; c++)
            tmp[r * WIDTH + c] = stencil2d(u, r, c, h);
    for (size_t i = 0; i < n; i++)
        u[i] += tmp[i];
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] + u[i] * 7u;
    free(tmp);
}

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    sample_parse(&o, argc, argv);
    if (o.n % (WIDTH * 8) != 0) {
        fprintf(stderr, "%s: --n must be a multiple of %d\n", o.prog, WIDTH * 8);
        return 2;
    }
    cap_t *c = cap_create(&o, NSTREAMS, NEVENTS);
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    if (o.expect) {
        issue(c, &b);
        cap_destroy(c);
        return 0;
    }
    const size_t n = o.n, bytes = n * sizeof(uint32_t);
    uint32_t *hin = (uint32_t *)host_alloc(bytes), *hin2 = (uint32_t *)host_alloc(bytes);
    uint32_t *wx = (uint32_t *)host_alloc(bytes), *wu = (uint32_t *)host_alloc(bytes);
    uint32_t *wout = (uint32_t *)host_alloc(bytes), *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hin, n, 14);
    fill_u32(hin2, n, 15);
    reference(wx, wu, wout, hin, hin2, n);
    uint32_t *in = (uint32_t *)dev_alloc(bytes), *in2 = (uint32_t *)dev_alloc(bytes);
    b.in = in;
    b.in2 = in2;
    b.x = (uint32_t *)dev_alloc(bytes);
    b.y = (uint32_t *)dev_alloc(bytes);
    b.u = (uint32_t *)dev_alloc(bytes);
    b.v = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(in, hin, bytes);
    dev_upload(in2, hin2, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        uint32_t *outs[] = {b.x, b.y, b.u, b.v, b.out};
        for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
            dev_poison(outs[k], bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.x, bytes);
        bad += check_u32(o.prog, "x", got, wx, n);
        dev_download(got, b.u, bytes);
        bad += check_u32(o.prog, "u", got, wu, n);
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, wout, n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    void *dev[] = {in, in2, b.x, b.y, b.u, b.v, b.out};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        CUDA_CHECK(cudaFree(dev[k]));
    cap_destroy(c);
    void *host[] = {hin, hin2, wx, wu, wout, got};
    for (size_t k = 0; k < sizeof host / sizeof host[0]; k++)
        free(host[k]);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements, %d stencil steps)\n", o.prog, o.replays, n,
           STENCIL_STEPS);
    return 0;
}
