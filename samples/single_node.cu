/* single_node: graphs without a single edge, the shapes torch.compile's
 * CUDA-graph trees (one fused Triton kernel per graph) and small XLA
 * programs produce. The driver refuses to list the arrays of a graph with
 * no edges when asked with a count of 0, which once left every such graph
 * unrecorded; this sample is the GPU check that they are recorded.
 *   graph 0: a capture of one kernel;
 *   graph 1: two independent kernel nodes added with cudaGraphAddKernelNode;
 *   graph 2: one empty node (cudaGraphAddEmptyNode);
 *   graph 3: a capture of one memset.
 * Each graph is launched --replays times; outputs are poisoned before each
 * launch and compared with the CPU after it. */
#include "common.h"

static const char ABOUT[] =
    "single_node: four graphs with no edges at all.\n"
    "  graph 0 (captured on s0): y = x*3+1\n"
    "  graph 1 (explicit): a = x*3+1 and b = x^0x55aa (two independent kernel nodes)\n"
    "  graph 2 (explicit): one empty node\n"
    "  graph 3 (captured on s0): memset of m to 0x3c\n"
    "Checks: every graph matches --expect; y, a, b, m equal the CPU results after\n"
    "every replay (the empty graph only has to launch).\n";

enum { S0, NSTREAMS };
enum { NEVENTS = 1 };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *y, *a, *b, *m;
} bufs_t;

__host__ __device__ static inline uint32_t op_lin(uint32_t x)
{
    return x * 3u + 1u;
}
__host__ __device__ static inline uint32_t op_xor(uint32_t x)
{
    return x ^ 0x55aau;
}

__global__ void k_lin(uint32_t *y, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = op_lin(x[i]);
}

__global__ void k_xor(uint32_t *y, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = op_xor(x[i]);
}

static cudaGraph_t graphs[4];

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_lin, grid, block, b->y, b->x, b->n);
    graphs[0] = cap_end(c, S0);

    xg_begin(c);
    xg_kernel(c, {}, k_lin, grid, block, b->a, b->x, b->n);
    xg_kernel(c, {}, k_xor, grid, block, b->b, b->x, b->n);
    graphs[1] = xg_end(c);

    xg_begin(c);
    xg_empty(c, {});
    graphs[2] = xg_end(c);

    cap_begin(c, S0);
    cap_memset(c, S0, b->m, 0x3c, b->n * sizeof(uint32_t));
    graphs[3] = cap_end(c, S0);
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
    uint32_t *want_lin = (uint32_t *)host_alloc(bytes), *want_xor = (uint32_t *)host_alloc(bytes);
    uint32_t *want_m = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 11);
    for (size_t i = 0; i < o.n; i++) {
        want_lin[i] = op_lin(hx[i]);
        want_xor[i] = op_xor(hx[i]);
        want_m[i] = 0x3c3c3c3cu;
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.y = (uint32_t *)dev_alloc(bytes);
    b.a = (uint32_t *)dev_alloc(bytes);
    b.b = (uint32_t *)dev_alloc(bytes);
    b.m = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    size_t bad = 0;
    for (int k = 0; k < 4 && !bad; k++) {
        cudaGraphExec_t exec = graph_instantiate(graphs[k]);
        for (int r = 0; r < o.replays && !bad; r++) {
            dev_poison(b.y, bytes);
            dev_poison(b.a, bytes);
            dev_poison(b.b, bytes);
            dev_poison(b.m, bytes);
            graph_run(exec, c->stream[S0]);
            if (k == 0) {
                dev_download(got, b.y, bytes);
                bad += check_u32(o.prog, "y", got, want_lin, o.n);
            } else if (k == 1) {
                dev_download(got, b.a, bytes);
                bad += check_u32(o.prog, "a", got, want_lin, o.n);
                dev_download(got, b.b, bytes);
                bad += check_u32(o.prog, "b", got, want_xor, o.n);
            } else if (k == 3) {
                dev_download(got, b.m, bytes);
                bad += check_u32(o.prog, "m", got, want_m, o.n);
            }
        }
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(graphs[k]));
    }
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.y));
    CUDA_CHECK(cudaFree(b.a));
    CUDA_CHECK(cudaFree(b.b));
    CUDA_CHECK(cudaFree(b.m));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want_lin);
    free(want_xor);
    free(want_m);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays of 4 graphs, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
