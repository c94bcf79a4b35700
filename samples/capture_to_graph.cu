/* capture_to_graph: a graph that is partly built by hand and partly
 * captured, the way XLA puts a library call into its command buffer: an
 * explicit memset node, then cudaStreamBeginCaptureToGraph into the same
 * graph starting after that node (a control edge), with a fork to a second
 * stream and a join, then an explicit kernel node after the captured part.
 * Checks both outputs after every replay. */
#include "common.h"

static const char ABOUT[] =
    "capture_to_graph: explicit memset, a two-stream capture into the same graph,\n"
    "then an explicit kernel after it.\n"
    "  x:0  memset acc = 0                (cudaGraphAddMemsetNode)\n"
    "  s0:  acc += x; record e0           (cudaStreamBeginCaptureToGraph after x:0)\n"
    "  s1:  wait e0; t = acc*3; record e1\n"
    "  s0:  wait e1; out = acc + t\n"
    "  x:1  fin = out ^ 7                 (cudaGraphAddKernelNode after s0's last node)\n"
    "Checks: the graph matches --expect (explicit lane, control edges); out and\n"
    "fin equal the CPU results after every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *acc, *t, *out, *fin;
} bufs_t;

__global__ void k_accumulate(uint32_t *acc, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) acc[i] += x[i];
}

__global__ void k_times3(uint32_t *t, const uint32_t *acc, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) t[i] = acc[i] * 3u;
}

__global__ void k_sum(uint32_t *out, const uint32_t *acc, const uint32_t *t, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = acc[i] + t[i];
}

__global__ void k_xor7(uint32_t *fin, const uint32_t *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) fin[i] = out[i] ^ 7u;
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    xg_begin(c);
    int zero = xg_memset(c, {}, b->acc, 0, b->n * sizeof(uint32_t));
    cap_begin_to_graph(c, S0, {zero});
    CAP_LAUNCH(c, S0, k_accumulate, grid, block, b->acc, b->x, b->n);
    cap_record(c, E_FORK, S0);
    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_times3, grid, block, b->t, (const uint32_t *)b->acc, b->n);
    cap_record(c, E_JOIN, S1);
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_sum, grid, block, b->out, (const uint32_t *)b->acc,
               (const uint32_t *)b->t, b->n);
    cap_end_to_graph(c, S0);
    xg_kernel(c, {cap_last(c, S0)}, k_xor7, grid, block, b->fin, (const uint32_t *)b->out,
              b->n);
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
    uint32_t *want_out = (uint32_t *)host_alloc(bytes), *want_fin = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 21);
    for (size_t i = 0; i < o.n; i++) {
        uint32_t acc = hx[i];
        want_out[i] = acc + acc * 3u;
        want_fin[i] = want_out[i] ^ 7u;
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.acc = (uint32_t *)dev_alloc(bytes);
    b.t = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    b.fin = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.acc, bytes); /* the memset node must clear it */
        dev_poison(b.out, bytes);
        dev_poison(b.fin, bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, want_out, o.n);
        dev_download(got, b.fin, bytes);
        bad += check_u32(o.prog, "fin", got, want_fin, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.acc));
    CUDA_CHECK(cudaFree(b.t));
    CUDA_CHECK(cudaFree(b.out));
    CUDA_CHECK(cudaFree(b.fin));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want_out);
    free(want_fin);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
