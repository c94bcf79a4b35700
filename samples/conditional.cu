/* conditional: conditional nodes (CUDA 12.4+), whose bodies are graphs of
 * their own: a WHILE loop whose body is one kernel that steps the state and
 * ends the loop from the device after --iters iterations
 * (cudaGraphSetConditional), then an IF whose body (one kernel, captured
 * with cudaStreamBeginCaptureToGraph into the body graph) runs when the
 * first kernel decided so. Both bodies have a single node and no edge.
 * Checks the results after every replay. */
#include "common.h"

static const char ABOUT[] =
    "conditional: explicit graph with conditional nodes.\n"
    "  x:0 init: acc = x; count = 0; IF handle = x[0] & 1 (it is odd)\n"
    "  x:1 WHILE (handle reset to 1 at each launch) body { acc = acc*3 + x;\n"
    "      ++count; stop after --iters steps }  (one kernel, cudaGraphAddKernelNode)\n"
    "  x:2 IF body { out = acc ^ 0x5a5a }     (one kernel, captured into the body)\n"
    "Checks: the graph matches --expect; acc, out and count equal the CPU results\n"
    "after every replay.\n";

enum { S0, NSTREAMS };
enum { NEVENTS = 1 };

typedef struct {
    size_t n;
    uint32_t iters;
    const uint32_t *x;
    uint32_t *acc, *out, *count;
} bufs_t;

__global__ void k_init(uint32_t *acc, uint32_t *count, const uint32_t *x,
                       cudaGraphConditionalHandle h_if, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) acc[i] = x[i];
    if (i == 0) {
        *count = 0;
        cudaGraphSetConditional(h_if, x[0] & 1u);
    }
}

__global__ void k_step(uint32_t *acc, uint32_t *count, const uint32_t *x,
                       cudaGraphConditionalHandle h_loop, uint32_t iters, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) acc[i] = acc[i] * 3u + x[i];
    if (i == 0) {
        uint32_t done = ++*count;
        if (done >= iters) cudaGraphSetConditional(h_loop, 0);
    }
}

__global__ void k_finish(uint32_t *out, const uint32_t *acc, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = acc[i] ^ 0x5a5au;
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cudaGraphConditionalHandle h_loop = 0, h_if = 0;
    xg_begin(c);
    if (!c->dry) {
        CUDA_CHECK(cudaGraphConditionalHandleCreate(&h_loop, c->graph, 1, cudaGraphCondAssignDefault));
        CUDA_CHECK(cudaGraphConditionalHandleCreate(&h_if, c->graph, 0, cudaGraphCondAssignDefault));
    }
    int init = xg_kernel(c, {}, k_init, grid, block, b->acc, b->count, b->x, h_if, b->n);
    cudaGraph_t body = NULL;
    int loop = xg_conditional(c, {init}, h_loop, cudaGraphCondTypeWhile, &body);
    if (!c->dry)
        graph_add_kernel(body, NULL, 0, k_step, grid, block, b->acc, b->count, b->x, h_loop,
                         b->iters, b->n);
    xg_conditional(c, {loop}, h_if, cudaGraphCondTypeIf, &body);
    if (!c->dry) {
        /* The IF body is captured, as a framework would record a library call. */
        cudaGraph_t got = NULL;
        CUDA_CHECK(cudaStreamBeginCaptureToGraph(c->stream[S0], body, NULL, NULL, 0,
                                                 cudaStreamCaptureModeGlobal));
        k_finish<<<grid, block, 0, c->stream[S0]>>>(b->out, b->acc, b->n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamEndCapture(c->stream[S0], &got));
    }
    xg_end(c);
}

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    o.iters = 5;
    sample_parse(&o, argc, argv);
    cap_t *c = cap_create(&o, NSTREAMS, NEVENTS);
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    b.iters = (uint32_t)o.iters;
    if (o.expect) {
        issue(c, &b);
        cap_destroy(c);
        return 0;
    }
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *got = (uint32_t *)host_alloc(bytes);
    uint32_t *want_acc = (uint32_t *)host_alloc(bytes), *want_out = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 41);
    hx[0] |= 1u; /* the IF body runs */
    for (size_t i = 0; i < o.n; i++) {
        uint32_t a = hx[i];
        for (int k = 0; k < o.iters; k++)
            a = a * 3u + hx[i];
        want_acc[i] = a;
        want_out[i] = a ^ 0x5a5au;
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.acc = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    b.count = (uint32_t *)dev_alloc(sizeof(uint32_t));
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.acc, bytes);
        dev_poison(b.out, bytes);
        dev_poison(b.count, sizeof(uint32_t));
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.acc, bytes);
        bad += check_u32(o.prog, "acc", got, want_acc, o.n);
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, want_out, o.n);
        uint32_t count = 0, want_count = (uint32_t)o.iters;
        dev_download(&count, b.count, sizeof count);
        bad += check_u32(o.prog, "count", &count, &want_count, 1);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.acc));
    CUDA_CHECK(cudaFree(b.out));
    CUDA_CHECK(cudaFree(b.count));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want_acc);
    free(want_out);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %d loop steps, %zu elements)\n", o.prog, o.replays, o.iters, o.n);
    return 0;
}
