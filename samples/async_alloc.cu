/* async_alloc: memory allocated inside the capture on one stream and last
 * used on another (the "record_stream problem" that deferred deallocation
 * solves). s0 allocates tmp with cudaMallocAsync and fills it, s1 reads it,
 * s0 does unrelated work meanwhile, then waits for s1 and frees tmp with
 * cudaFreeAsync. Checks both results and that the graph relaunches (its
 * allocation is freed inside the graph, so every launch allocates afresh). */
#include "common.h"

static const char ABOUT[] =
    "async_alloc: s0: cudaMallocAsync tmp; tmp = x*9+4; record e0.\n"
    "s1: wait e0; out1 = tmp ^ (tmp>>7) (last use of tmp); record e1.\n"
    "s0: w = x + 17 (independent work); wait e1; cudaFreeAsync tmp.\n"
    "Checks: the captured graph matches --expect (mem_alloc and mem_free nodes on\n"
    "s0); out1 and w equal the CPU results after every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_FILLED, E_USED, NEVENTS };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *out1, *w;
} bufs_t;

__host__ __device__ static inline uint32_t op_tmp(uint32_t x)
{
    return x * 9u + 4u;
}
__host__ __device__ static inline uint32_t op_use(uint32_t t)
{
    return t ^ (t >> 7);
}

__global__ void k_fill(uint32_t *tmp, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) tmp[i] = op_tmp(x[i]);
}

__global__ void k_use(uint32_t *out, const uint32_t *tmp, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = op_use(tmp[i]);
}

__global__ void k_other(uint32_t *w, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) w[i] = x[i] + 17u;
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    void *tmp = NULL;
    cap_begin(c, S0);
    cap_malloc(c, S0, &tmp, b->n * sizeof(uint32_t));
    CAP_LAUNCH(c, S0, k_fill, grid, block, (uint32_t *)tmp, b->x, b->n);
    cap_record(c, E_FILLED, S0);
    cap_wait(c, S1, E_FILLED);
    CAP_LAUNCH(c, S1, k_use, grid, block, b->out1, (const uint32_t *)tmp, b->n);
    cap_record(c, E_USED, S1);
    CAP_LAUNCH(c, S0, k_other, grid, block, b->w, b->x, b->n);
    cap_wait(c, S0, E_USED);
    cap_free(c, S0, tmp);
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
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *got = (uint32_t *)host_alloc(bytes);
    uint32_t *want1 = (uint32_t *)host_alloc(bytes), *wantw = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 7);
    for (size_t i = 0; i < o.n; i++) {
        want1[i] = op_use(op_tmp(hx[i]));
        wantw[i] = hx[i] + 17u;
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.out1 = (uint32_t *)dev_alloc(bytes);
    b.w = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.out1, bytes);
        dev_poison(b.w, bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out1, bytes);
        bad += check_u32(o.prog, "out1", got, want1, o.n);
        dev_download(got, b.w, bytes);
        bad += check_u32(o.prog, "w", got, wantw, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.out1));
    CUDA_CHECK(cudaFree(b.w));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want1);
    free(wantw);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
