/* diamond: s0 produces, s1 and s2 consume in parallel, and a fourth stream s3
 * joins both branches (its first node waits on two events, so it has two
 * event edges) and produces the result; s0 waits for s3 before a final
 * kernel so the capture is joined. Checks the result bit for bit. */
#include "common.h"

static const char ABOUT[] =
    "diamond: s0 produces a; s1 (b = a ^ a>>3) and s2 (c = a*7) consume it in\n"
    "parallel after one fork event (e0); s3 joins both (waits e1 from s1 and e2\n"
    "from s2) and computes d = b + c; s0 waits for s3 (e3) and writes\n"
    "out = d ^ 0xDEADBEEF.\n"
    "Checks: the captured graph matches --expect; out equals the CPU result after\n"
    "every replay.\n";

enum { S0, S1, S2, S3, NSTREAMS };
enum { E_FORK, E_B, E_C, E_D, NEVENTS };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *a, *b, *c, *d, *out;
} bufs_t;

__host__ __device__ static inline uint32_t op_a(uint32_t x)
{
    return x * 5u + 1u;
}
__host__ __device__ static inline uint32_t op_b(uint32_t a)
{
    return a ^ (a >> 3);
}
__host__ __device__ static inline uint32_t op_c(uint32_t a)
{
    return a * 7u;
}
__host__ __device__ static inline uint32_t op_out(uint32_t d)
{
    return d ^ 0xDEADBEEFu;
}

__global__ void k_produce(uint32_t *a, const uint32_t *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) a[i] = op_a(x[i]);
}

__global__ void k_left(uint32_t *b, const uint32_t *a, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) b[i] = op_b(a[i]);
}

__global__ void k_right(uint32_t *c, const uint32_t *a, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) c[i] = op_c(a[i]);
}

__global__ void k_join(uint32_t *d, const uint32_t *b, const uint32_t *c, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) d[i] = b[i] + c[i];
}

__global__ void k_finish(uint32_t *out, const uint32_t *d, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = op_out(d[i]);
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_produce, grid, block, b->a, b->x, b->n);
    cap_record(c, E_FORK, S0);
    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_left, grid, block, b->b, b->a, b->n);
    cap_record(c, E_B, S1);
    cap_wait(c, S2, E_FORK);
    CAP_LAUNCH(c, S2, k_right, grid, block, b->c, b->a, b->n);
    cap_record(c, E_C, S2);
    cap_wait(c, S3, E_B);
    cap_wait(c, S3, E_C);
    CAP_LAUNCH(c, S3, k_join, grid, block, b->d, b->b, b->c, b->n);
    cap_record(c, E_D, S3);
    cap_wait(c, S0, E_D);
    CAP_LAUNCH(c, S0, k_finish, grid, block, b->out, b->d, b->n);
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
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *want = (uint32_t *)host_alloc(bytes);
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 4);
    for (size_t i = 0; i < o.n; i++) {
        uint32_t a = op_a(hx[i]);
        want[i] = op_out(op_b(a) + op_c(a));
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.a = (uint32_t *)dev_alloc(bytes);
    b.b = (uint32_t *)dev_alloc(bytes);
    b.c = (uint32_t *)dev_alloc(bytes);
    b.d = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        uint32_t *outs[] = {b.a, b.b, b.c, b.d, b.out};
        for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
            dev_poison(outs[k], bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad = check_u32(o.prog, "out", got, want, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.a));
    CUDA_CHECK(cudaFree(b.b));
    CUDA_CHECK(cudaFree(b.c));
    CUDA_CHECK(cudaFree(b.d));
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(hx);
    free(want);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, o.n);
    return 0;
}
