/* host_copy: graphs whose copies read and write host memory, as programs do
 * at the edges of their graphs: parameters uploaded from pageable memory, a
 * reduction result copied into a variable on main's stack, a slice copied
 * into pinned memory, and (graph 1) a host callback that turns what the
 * graph copied out into what it copies back in. Checks every host and
 * device result after every replay.
 *
 * What the host callback writes for a later copy node of the same graph is
 * pinned: a pageable source goes through the driver's staging buffer (CUDA's
 * "API synchronization behavior" has a pageable host-to-device copy staged
 * when it is issued), and nothing promises that a graph's copy node reads it
 * only after the nodes it depends on have run (with it pageable, graph 1
 * failed its checks on the H200). The pageable sources and destinations here
 * are ones no node of the graph writes on the host side: parameters set
 * before the launch, a result read after it.
 *   graph 0: no host callback: replayable in a fresh process, host bytes
 *            included (sgcap replay --validate).
 *   graph 1: a host callback: only `sgcap replay --host-nodes skip` runs it
 *            outside the program, and then validates only what the
 *            callback cannot have influenced. */
#include "common.h"

static const char ABOUT[] =
    "host_copy: memcpy nodes to and from host memory, and a host callback.\n"
    "graph 0:\n"
    "  s0: coef <- params (H2D, pageable); y = x*coef[i%64] + 1; record e0\n"
    "  s1: wait e0; total = 0 (memset); total += y (atomics);\n"
    "      result <- total (D2H into a variable on main's stack);\n"
    "      slice <- y[0..256) (D2H, pinned); record e1\n"
    "  s0: wait e1; z = y ^ 3\n"
    "graph 1:\n"
    "  s0: y2 = x + 5; record e0; hbuf <- y2[0..16) (D2H, pinned);\n"
    "      host callback: hdst = hbuf*2 (pinned); d2 <- hdst (H2D, pinned);\n"
    "      out2 = d2[i%16] + x\n"
    "  s1: wait e0; out3 = x*9; record e1\n"
    "  s0: wait e1; out4 = out2 ^ out3\n"
    "Checks: both graphs match --expect; every output, host and device, equals\n"
    "the CPU result after every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };
#define NCOEF 64
#define NSLICE 256
#define NSMALL 16

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *coef, *y, *z;
    unsigned long long *total;
    uint32_t *params;           /* pageable */
    unsigned long long *result; /* pageable: on main's stack */
    uint32_t *slice;            /* pinned */
    /* graph 1 */
    uint32_t *y2, *d2, *out2, *out3, *out4;
    uint32_t *hbuf; /* pinned */
    uint32_t *hdst; /* pinned: a later copy node reads what the callback wrote */
} bufs_t;

__global__ void k_apply(uint32_t *y, const uint32_t *x, const uint32_t *coef, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * coef[i % NCOEF] + 1u;
}

__global__ void k_total(unsigned long long *total, const uint32_t *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, (unsigned long long)y[i]); /* integer: any order, one sum */
}

__global__ void k_xor3(uint32_t *z, const uint32_t *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) z[i] = y[i] ^ 3u;
}

__global__ void k_plus5(uint32_t *y, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 5u;
}

__global__ void k_times9(uint32_t *y, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 9u;
}

__global__ void k_mix(uint32_t *out, const uint32_t *d2, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = d2[i % NSMALL] + x[i];
}

__global__ void k_join(uint32_t *out, const uint32_t *a, const uint32_t *b, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] ^ b[i];
}

/* Runs on a CUDA thread between the two copies; must not call CUDA. */
static void CUDART_CB double_slice(void *p)
{
    bufs_t *b = (bufs_t *)p;
    for (int i = 0; i < NSMALL; i++)
        b->hdst[i] = b->hbuf[i] * 2u;
}

static cudaGraph_t graphs[2];

static void issue(cap_t *c, bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    cap_memcpy_kind(c, S0, b->coef, b->params, NCOEF * sizeof(uint32_t), cudaMemcpyHostToDevice);
    CAP_LAUNCH(c, S0, k_apply, grid, block, b->y, b->x, (const uint32_t *)b->coef, b->n);
    cap_record(c, E_FORK, S0);
    cap_wait(c, S1, E_FORK);
    cap_memset(c, S1, b->total, 0, sizeof *b->total);
    CAP_LAUNCH(c, S1, k_total, grid, block, b->total, (const uint32_t *)b->y, b->n);
    cap_memcpy_kind(c, S1, b->result, b->total, sizeof *b->result, cudaMemcpyDeviceToHost);
    cap_memcpy_kind(c, S1, b->slice, b->y, NSLICE * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    cap_record(c, E_JOIN, S1);
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_xor3, grid, block, b->z, (const uint32_t *)b->y, b->n);
    graphs[0] = cap_end(c, S0);

    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_plus5, grid, block, b->y2, b->x, b->n);
    cap_record(c, E_FORK, S0);
    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_times9, grid, block, b->out3, b->x, b->n);
    cap_record(c, E_JOIN, S1);
    cap_memcpy_kind(c, S0, b->hbuf, b->y2, NSMALL * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    cap_host(c, S0, double_slice, b);
    cap_memcpy_kind(c, S0, b->d2, b->hdst, NSMALL * sizeof(uint32_t), cudaMemcpyHostToDevice);
    CAP_LAUNCH(c, S0, k_mix, grid, block, b->out2, (const uint32_t *)b->d2, b->x, b->n);
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_join, grid, block, b->out4, (const uint32_t *)b->out2,
               (const uint32_t *)b->out3, b->n);
    graphs[1] = cap_end(c, S0);
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
    if (o.n < NSLICE) {
        fprintf(stderr, "%s: --n must be at least %d\n", o.prog, NSLICE);
        return 2;
    }
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *got = (uint32_t *)host_alloc(bytes);
    uint32_t *want_y = (uint32_t *)host_alloc(bytes), *want_z = (uint32_t *)host_alloc(bytes);
    uint32_t *want_out2 = (uint32_t *)host_alloc(bytes), *want_out3 = (uint32_t *)host_alloc(bytes);
    uint32_t *want_out4 = (uint32_t *)host_alloc(bytes);
    uint32_t want_hdst[NSMALL];
    unsigned long long want_total = 0;
    unsigned long long result_on_stack = 0; /* graph 0 copies its reduction here */
    b.params = (uint32_t *)host_alloc(NCOEF * sizeof(uint32_t));
    b.result = &result_on_stack;
    fill_u32(hx, o.n, 61);
    fill_u32(b.params, NCOEF, 62);
    for (size_t i = 0; i < o.n; i++) {
        want_y[i] = hx[i] * b.params[i % NCOEF] + 1u;
        want_total += want_y[i];
        want_z[i] = want_y[i] ^ 3u;
        want_out3[i] = hx[i] * 9u;
    }
    for (int i = 0; i < NSMALL; i++)
        want_hdst[i] = (hx[i] + 5u) * 2u;
    for (size_t i = 0; i < o.n; i++) {
        want_out2[i] = want_hdst[i % NSMALL] + hx[i];
        want_out4[i] = want_out2[i] ^ want_out3[i];
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.coef = (uint32_t *)dev_alloc(NCOEF * sizeof(uint32_t));
    b.y = (uint32_t *)dev_alloc(bytes);
    b.z = (uint32_t *)dev_alloc(bytes);
    b.total = (unsigned long long *)dev_alloc(sizeof(unsigned long long));
    b.y2 = (uint32_t *)dev_alloc(bytes);
    b.d2 = (uint32_t *)dev_alloc(NSMALL * sizeof(uint32_t));
    b.out2 = (uint32_t *)dev_alloc(bytes);
    b.out3 = (uint32_t *)dev_alloc(bytes);
    b.out4 = (uint32_t *)dev_alloc(bytes);
    CUDA_CHECK(cudaMallocHost((void **)&b.slice, NSLICE * sizeof(uint32_t)));
    CUDA_CHECK(cudaMallocHost((void **)&b.hbuf, NSMALL * sizeof(uint32_t)));
    CUDA_CHECK(cudaMallocHost((void **)&b.hdst, NSMALL * sizeof(uint32_t)));
    dev_upload(x, hx, bytes);

    issue(c, &b);
    size_t bad = 0;
    for (int k = 0; k < 2 && !bad; k++) {
        cudaGraphExec_t exec = graph_instantiate(graphs[k]);
        for (int r = 0; r < o.replays && !bad; r++) {
            if (k == 0) {
                dev_poison(b.coef, NCOEF * sizeof(uint32_t));
                dev_poison(b.y, bytes);
                dev_poison(b.z, bytes);
                memset(&result_on_stack, 0xA5, sizeof result_on_stack);
                memset(b.slice, 0xA5, NSLICE * sizeof(uint32_t));
            } else {
                dev_poison(b.y2, bytes);
                dev_poison(b.d2, NSMALL * sizeof(uint32_t));
                dev_poison(b.out2, bytes);
                dev_poison(b.out3, bytes);
                dev_poison(b.out4, bytes);
                memset(b.hbuf, 0xA5, NSMALL * sizeof(uint32_t));
                memset(b.hdst, 0xA5, NSMALL * sizeof(uint32_t));
            }
            graph_run(exec, c->stream[S0]);
            if (k == 0) {
                dev_download(got, b.y, bytes);
                bad += check_u32(o.prog, "y", got, want_y, o.n);
                dev_download(got, b.z, bytes);
                bad += check_u32(o.prog, "z", got, want_z, o.n);
                bad += check_u32(o.prog, "slice (pinned)", b.slice, want_y, NSLICE);
                if (result_on_stack != want_total) {
                    fprintf(stderr, "%s: result (pageable, on the stack) = %llu, expected %llu\n",
                            o.prog, result_on_stack, want_total);
                    bad++;
                }
            } else {
                bad += check_u32(o.prog, "hdst (pinned, from the host callback)", b.hdst,
                                 want_hdst, NSMALL);
                dev_download(got, b.out2, bytes);
                bad += check_u32(o.prog, "out2", got, want_out2, o.n);
                dev_download(got, b.out3, bytes);
                bad += check_u32(o.prog, "out3", got, want_out3, o.n);
                dev_download(got, b.out4, bytes);
                bad += check_u32(o.prog, "out4", got, want_out4, o.n);
            }
        }
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(graphs[k]));
    }
    void *dev[] = {x, b.coef, b.y, b.z, b.total, b.y2, b.d2, b.out2, b.out3, b.out4};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        CUDA_CHECK(cudaFree(dev[i]));
    CUDA_CHECK(cudaFreeHost(b.slice));
    CUDA_CHECK(cudaFreeHost(b.hbuf));
    CUDA_CHECK(cudaFreeHost(b.hdst));
    cap_destroy(c);
    free(hx);
    free(got);
    free(want_y);
    free(want_z);
    free(want_out2);
    free(want_out3);
    free(want_out4);
    free(b.params);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays of 2 graphs, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
