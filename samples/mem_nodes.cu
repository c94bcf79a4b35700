/* mem_nodes: graph memory nodes added by hand (cudaGraphAddMemAllocNode /
 * cudaGraphAddMemFreeNode), as frameworks that build graphs explicitly do:
 * one allocation made and freed inside the graph, and one the graph makes
 * and leaves behind for the program to read (its address is fixed for the
 * life of the graph; the exec is instantiated with AutoFreeOnLaunch so it
 * can be launched again). Checks both outputs after every replay. */
#include "common.h"

static const char ABOUT[] =
    "mem_nodes: explicit graph memory nodes.\n"
    "  x:0 mem_alloc tmp   x:1 tmp = x*7+3   x:2 out = tmp ^ (tmp>>3)   x:3 mem_free tmp\n"
    "  x:4 mem_alloc keep  x:5 keep = x + 11   (keep outlives the launch)\n"
    "Checks: the graph matches --expect; out and keep equal the CPU results after\n"
    "every replay (instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch).\n";

enum { S0, NSTREAMS };
enum { NEVENTS = 1 };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *out;
    void *keep; /* set by the graph's second mem_alloc node */
} bufs_t;

__host__ __device__ static inline uint32_t op_fill(uint32_t x)
{
    return x * 7u + 3u;
}
__host__ __device__ static inline uint32_t op_use(uint32_t t)
{
    return t ^ (t >> 3);
}

__global__ void k_fill(uint32_t *tmp, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) tmp[i] = op_fill(x[i]);
}

__global__ void k_use(uint32_t *out, const uint32_t *tmp, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = op_use(tmp[i]);
}

__global__ void k_plus11(uint32_t *keep, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) keep[i] = x[i] + 11u;
}

static void issue(cap_t *c, bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    const size_t bytes = b->n * sizeof(uint32_t);
    void *tmp = NULL;
    xg_begin(c);
    int alloc = xg_alloc(c, {}, &tmp, bytes);
    int fill = xg_kernel(c, {alloc}, k_fill, grid, block, (uint32_t *)tmp, b->x, b->n);
    int use = xg_kernel(c, {fill}, k_use, grid, block, b->out, (const uint32_t *)tmp, b->n);
    xg_free(c, {use}, tmp);
    int keep = xg_alloc(c, {}, &b->keep, bytes);
    xg_kernel(c, {keep}, k_plus11, grid, block, (uint32_t *)b->keep, b->x, b->n);
    xg_end(c);
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
    uint32_t *want_out = (uint32_t *)host_alloc(bytes), *want_keep = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 51);
    for (size_t i = 0; i < o.n; i++) {
        want_out[i] = op_use(op_fill(hx[i]));
        want_keep[i] = hx[i] + 11u;
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = NULL;
    CUDA_CHECK(cudaGraphInstantiate(&exec, c->graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.out, bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, want_out, o.n);
        dev_download(got, b.keep, bytes); /* left allocated by the launch */
        bad += check_u32(o.prog, "keep", got, want_keep, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(b.keep)); /* the last launch's allocation */
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want_out);
    free(want_keep);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
