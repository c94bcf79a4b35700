/* event_reuse: one event recorded twice on s0 at different points. The wait
 * issued after the first record (s1) binds to s0's first kernel; the wait
 * issued after the second record (s2) must bind to the LATEST record, i.e.
 * s0's second kernel, whose output s2 reads. Bound to the first record, s2
 * would read x2 before it is written (the producer is slowed down so that race
 * shows up as poisoned values), and the topology would show the edge from
 * s0:0 instead of s0:1. */
#include "common.h"

static const char ABOUT[] =
    "event_reuse: s0 computes x1 = in*3+1 and records event E (e0); s1 waits E and\n"
    "computes y = x1 ^ 0x55; s0 then computes x2 = x1*5+7 (slowed down) and records\n"
    "E again; s2 waits E (must bind to the second record) and computes\n"
    "z = x2 + x2>>4; s1 and s2 join s0 (e1, e2), which writes out = y + z.\n"
    "Checks: the captured graph matches --expect (edge e0 s0:1 -> s2:0, not\n"
    "s0:0); out equals the CPU result after every replay.\n";

enum { S0, S1, S2, NSTREAMS };
enum { E_REUSED, E_JOIN1, E_JOIN2, NEVENTS };

typedef struct {
    size_t n;
    unsigned delay_ns;
    const uint32_t *in;
    uint32_t *x1, *x2, *y, *z, *out;
} bufs_t;

__host__ __device__ static inline uint32_t op_x1(uint32_t v)
{
    return v * 3u + 1u;
}
__host__ __device__ static inline uint32_t op_x2(uint32_t v)
{
    return v * 5u + 7u;
}
__host__ __device__ static inline uint32_t op_y(uint32_t v)
{
    return v ^ 0x55u;
}
__host__ __device__ static inline uint32_t op_z(uint32_t v)
{
    return v + (v >> 4);
}

__global__ void k_first(uint32_t *x1, const uint32_t *in, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x1[i] = op_x1(in[i]);
}

__global__ void k_second(uint32_t *x2, const uint32_t *x1, unsigned delay_ns, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    producer_delay(delay_ns);
    if (i < n) x2[i] = op_x2(x1[i]);
}

__global__ void k_use_first(uint32_t *y, const uint32_t *x1, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = op_y(x1[i]);
}

__global__ void k_use_second(uint32_t *z, const uint32_t *x2, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) z[i] = op_z(x2[i]);
}

__global__ void k_sum(uint32_t *out, const uint32_t *y, const uint32_t *z, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[i] + z[i];
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_first, grid, block, b->x1, b->in, b->n);
    cap_record(c, E_REUSED, S0); /* first record: binds to k_first */
    cap_wait(c, S1, E_REUSED);
    CAP_LAUNCH(c, S1, k_use_first, grid, block, b->y, b->x1, b->n);
    CAP_LAUNCH(c, S0, k_second, grid, block, b->x2, b->x1, b->delay_ns, b->n);
    cap_record(c, E_REUSED, S0); /* second record: now binds to k_second */
    cap_wait(c, S2, E_REUSED);
    CAP_LAUNCH(c, S2, k_use_second, grid, block, b->z, b->x2, b->n);
    cap_record(c, E_JOIN1, S1);
    cap_record(c, E_JOIN2, S2);
    cap_wait(c, S0, E_JOIN1);
    cap_wait(c, S0, E_JOIN2);
    CAP_LAUNCH(c, S0, k_sum, grid, block, b->out, b->y, b->z, b->n);
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
    b.delay_ns = 20000;
    if (o.expect) {
        issue(c, &b);
        cap_destroy(c);
        return 0;
    }
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *hin = (uint32_t *)host_alloc(bytes), *want = (uint32_t *)host_alloc(bytes);
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hin, o.n, 5);
    for (size_t i = 0; i < o.n; i++) {
        uint32_t x1 = op_x1(hin[i]);
        want[i] = op_y(x1) + op_z(op_x2(x1));
    }
    uint32_t *in = (uint32_t *)dev_alloc(bytes);
    b.in = in;
    b.x1 = (uint32_t *)dev_alloc(bytes);
    b.x2 = (uint32_t *)dev_alloc(bytes);
    b.y = (uint32_t *)dev_alloc(bytes);
    b.z = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(in, hin, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        uint32_t *outs[] = {b.x1, b.x2, b.y, b.z, b.out};
        for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
            dev_poison(outs[k], bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad = check_u32(o.prog, "out", got, want, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(b.x1));
    CUDA_CHECK(cudaFree(b.x2));
    CUDA_CHECK(cudaFree(b.y));
    CUDA_CHECK(cudaFree(b.z));
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(hin);
    free(want);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
