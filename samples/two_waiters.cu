/* two_waiters: two streams wait on ONE record of one event (PyTorch issue
 * #193409: only the first consumer was ordered). s0 moves on to more work
 * after the record, so each waiter must bind to the recorded point, not to
 * s0's tip, and the second waiter must get its own edge. The producer is
 * slowed down so an unordered waiter reads poisoned data and fails. */
#include "common.h"

static const char ABOUT[] =
    "two_waiters: s0 produces a (slowed down) and records event E once (e0); s0\n"
    "goes on to b = a*a; s1 and s2 both wait on that one record and compute\n"
    "y = a ^ (a>>5) and z = a*9+2; they join s0 (e1, e2), which writes\n"
    "out = b + y + z.\n"
    "Checks: the captured graph matches --expect (two edges from s0:0, one to\n"
    "each waiter); out equals the CPU result after every replay.\n";

enum { S0, S1, S2, NSTREAMS };
enum { E_A, E_JOIN1, E_JOIN2, NEVENTS };

typedef struct {
    size_t n;
    unsigned delay_ns;
    const uint32_t *in;
    uint32_t *a, *b, *y, *z, *out;
} bufs_t;

__host__ __device__ static inline uint32_t op_a(uint32_t v)
{
    return (v ^ 0x5BD1E995u) * 33u;
}
__host__ __device__ static inline uint32_t op_y(uint32_t a)
{
    return a ^ (a >> 5);
}
__host__ __device__ static inline uint32_t op_z(uint32_t a)
{
    return a * 9u + 2u;
}

__global__ void k_produce(uint32_t *a, const uint32_t *in, unsigned delay_ns, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    producer_delay(delay_ns);
    if (i < n) a[i] = op_a(in[i]);
}

__global__ void k_square(uint32_t *b, const uint32_t *a, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] * a[i];
}

__global__ void k_wait1(uint32_t *y, const uint32_t *a, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = op_y(a[i]);
}

__global__ void k_wait2(uint32_t *z, const uint32_t *a, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) z[i] = op_z(a[i]);
}

__global__ void k_sum3(uint32_t *out, const uint32_t *b, const uint32_t *y, const uint32_t *z,
                       size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = b[i] + y[i] + z[i];
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_produce, grid, block, b->a, b->in, b->delay_ns, b->n);
    cap_record(c, E_A, S0);
    CAP_LAUNCH(c, S0, k_square, grid, block, b->b, b->a, b->n);
    cap_wait(c, S1, E_A);
    CAP_LAUNCH(c, S1, k_wait1, grid, block, b->y, b->a, b->n);
    cap_wait(c, S2, E_A);
    CAP_LAUNCH(c, S2, k_wait2, grid, block, b->z, b->a, b->n);
    cap_record(c, E_JOIN1, S1);
    cap_record(c, E_JOIN2, S2);
    cap_wait(c, S0, E_JOIN1);
    cap_wait(c, S0, E_JOIN2);
    CAP_LAUNCH(c, S0, k_sum3, grid, block, b->out, b->b, b->y, b->z, b->n);
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
    fill_u32(hin, o.n, 6);
    for (size_t i = 0; i < o.n; i++) {
        uint32_t a = op_a(hin[i]);
        want[i] = a * a + op_y(a) + op_z(a);
    }
    uint32_t *in = (uint32_t *)dev_alloc(bytes);
    b.in = in;
    b.a = (uint32_t *)dev_alloc(bytes);
    b.b = (uint32_t *)dev_alloc(bytes);
    b.y = (uint32_t *)dev_alloc(bytes);
    b.z = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(in, hin, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        uint32_t *outs[] = {b.a, b.b, b.y, b.z, b.out};
        for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
            dev_poison(outs[k], bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad = check_u32(o.prog, "out", got, want, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(b.a));
    CUDA_CHECK(cudaFree(b.b));
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
