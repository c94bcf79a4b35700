/* fan3: fan-out from the origin to three side streams through one record,
 * a side-to-side dependency (recorded on s1, waited on by s2 after s2 already
 * did its own work), and fan-in of all three back into the origin with three
 * events. Extra coverage beyond fork_join: three waiters on one record, a
 * record on a non-origin stream waited on by another non-origin stream, and a
 * join node with three event edges. Checks the result exactly. */
#include "common.h"

static const char ABOUT[] =
    "fan3: s0: a = x*3+5; record e0. s1, s2, s3 all wait e0.\n"
    "  s1: b = a ^ a>>11; record e1; b2 = b*7\n"
    "  s2: c = a + 0x1234; wait e1 (s1's first kernel); c2 = c ^ b\n"
    "  s3: d = a*a\n"
    "s1, s2, s3 record e2, e3, e4; s0 waits for all three; out = b2 + c2 + d.\n"
    "Checks: the captured graph matches --expect; out equals the CPU result after\n"
    "every replay.\n";

enum { S0, S1, S2, S3, NSTREAMS };
enum { E_FORK, E_B, E_J1, E_J2, E_J3, NEVENTS };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *a, *b, *b2, *c, *c2, *d, *out;
} bufs_t;

__host__ __device__ static inline uint32_t op_a(uint32_t x)
{
    return x * 3u + 5u;
}
__host__ __device__ static inline uint32_t op_b(uint32_t a)
{
    return a ^ (a >> 11);
}
__host__ __device__ static inline uint32_t op_c(uint32_t a)
{
    return a + 0x1234u;
}

/* One generic unary kernel keeps the sample short; the op number picks the
 * function, so each launch is still a distinct, checkable computation. */
__global__ void k_unary(uint32_t *y, const uint32_t *x, int op, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t v = x[i];
    switch (op) {
    case 0:
        y[i] = op_a(v);
        break;
    case 1:
        y[i] = op_b(v);
        break;
    case 2:
        y[i] = v * 7u;
        break;
    case 3:
        y[i] = op_c(v);
        break;
    default:
        y[i] = v * v;
        break;
    }
}

__global__ void k_xor(uint32_t *y, const uint32_t *p, const uint32_t *q, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = p[i] ^ q[i];
}

__global__ void k_sum3(uint32_t *out, const uint32_t *p, const uint32_t *q, const uint32_t *r,
                       size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i] + q[i] + r[i];
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    const size_t n = b->n;
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_unary, grid, block, b->a, b->x, 0, n);
    cap_record(c, E_FORK, S0);

    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_unary, grid, block, b->b, b->a, 1, n);
    cap_record(c, E_B, S1);
    CAP_LAUNCH(c, S1, k_unary, grid, block, b->b2, b->b, 2, n);

    cap_wait(c, S2, E_FORK);
    CAP_LAUNCH(c, S2, k_unary, grid, block, b->c, b->a, 3, n);
    cap_wait(c, S2, E_B);
    CAP_LAUNCH(c, S2, k_xor, grid, block, b->c2, b->c, b->b, n);

    cap_wait(c, S3, E_FORK);
    CAP_LAUNCH(c, S3, k_unary, grid, block, b->d, b->a, 4, n);

    cap_record(c, E_J1, S1);
    cap_record(c, E_J2, S2);
    cap_record(c, E_J3, S3);
    cap_wait(c, S0, E_J1);
    cap_wait(c, S0, E_J2);
    cap_wait(c, S0, E_J3);
    CAP_LAUNCH(c, S0, k_sum3, grid, block, b->out, b->b2, b->c2, b->d, n);
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
    const size_t n = o.n, bytes = n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *want = (uint32_t *)host_alloc(bytes);
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, n, 17);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = op_a(hx[i]), bb = op_b(a);
        want[i] = bb * 7u + (op_c(a) ^ bb) + a * a;
    }
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    uint32_t **outs[] = {&b.a, &b.b, &b.b2, &b.c, &b.c2, &b.d, &b.out};
    const size_t nouts = sizeof outs / sizeof outs[0];
    for (size_t k = 0; k < nouts; k++)
        *outs[k] = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        for (size_t k = 0; k < nouts; k++)
            dev_poison(*outs[k], bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad = check_u32(o.prog, "out", got, want, n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    for (size_t k = 0; k < nouts; k++)
        CUDA_CHECK(cudaFree(*outs[k]));
    cap_destroy(c);
    free(hx);
    free(want);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, n);
    return 0;
}
