/* explicit_graph: a graph built node by node, the way XLA builds its command
 * buffers (no stream capture at all): a graph allocation, a memset, two
 * independent kernels (a diamond), a device-to-device copy that joins them,
 * a child graph holding a single kernel (a body without edges), and the
 * free of the allocation. Checks every output after every replay. */
#include "common.h"

static const char ABOUT[] =
    "explicit_graph: every node added with cudaGraphAdd*Node, no capture.\n"
    "  x:0 mem_alloc tmp         x:1 memset tmp = 0 (after x:0)\n"
    "  x:2 tmp += x*2 (after x:1) x:3 v = x*5+1 (after x:1)\n"
    "  x:4 memcpy out = tmp (after x:2 and x:3)\n"
    "  x:5 child graph { w = out + v } (after x:4)\n"
    "  x:6 mem_free tmp (after x:5)\n"
    "Checks: the graph matches --expect; v, out and w equal the CPU results after\n"
    "every replay (the allocation is made and freed by every launch).\n";

enum { S0, NSTREAMS };
enum { NEVENTS = 1 };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *v, *out, *w;
} bufs_t;

__global__ void k_add_twice(uint32_t *tmp, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) tmp[i] += x[i] * 2u;
}

__global__ void k_lin5(uint32_t *v, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) v[i] = x[i] * 5u + 1u;
}

__global__ void k_add(uint32_t *w, const uint32_t *a, const uint32_t *b, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) w[i] = a[i] + b[i];
}

static cudaGraph_t child;

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    const size_t bytes = b->n * sizeof(uint32_t);
    void *tmp = NULL;
    xg_begin(c);
    int alloc = xg_alloc(c, {}, &tmp, bytes);
    int zero = xg_memset(c, {alloc}, tmp, 0, bytes);
    int k1 = xg_kernel(c, {zero}, k_add_twice, grid, block, (uint32_t *)tmp, b->x, b->n);
    int k2 = xg_kernel(c, {zero}, k_lin5, grid, block, b->v, b->x, b->n);
    int copy = xg_memcpy(c, {k1, k2}, b->out, tmp, bytes, cudaMemcpyDeviceToDevice);
    if (!c->dry) {
        CUDA_CHECK(cudaGraphCreate(&child, 0));
        graph_add_kernel(child, NULL, 0, k_add, grid, block, b->w, (const uint32_t *)b->out,
                         (const uint32_t *)b->v, b->n);
    }
    int body = xg_child(c, {copy}, child);
    xg_free(c, {body}, tmp);
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
    uint32_t *want_v = (uint32_t *)host_alloc(bytes), *want_out = (uint32_t *)host_alloc(bytes);
    uint32_t *want_w = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 31);
    for (size_t i = 0; i < o.n; i++) {
        want_v[i] = hx[i] * 5u + 1u;
        want_out[i] = hx[i] * 2u;
        want_w[i] = want_out[i] + want_v[i];
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.v = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    b.w = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.v, bytes);
        dev_poison(b.out, bytes);
        dev_poison(b.w, bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.v, bytes);
        bad += check_u32(o.prog, "v", got, want_v, o.n);
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, want_out, o.n);
        dev_download(got, b.w, bytes);
        bad += check_u32(o.prog, "w", got, want_w, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaGraphDestroy(child));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.v));
    CUDA_CHECK(cudaFree(b.out));
    CUDA_CHECK(cudaFree(b.w));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want_v);
    free(want_out);
    free(want_w);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
