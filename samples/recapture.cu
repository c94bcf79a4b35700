/* recapture: the "capture every step" pattern. Each iteration re-captures the
 * same two-stream topology with different scalar kernel arguments, updates
 * the one executable graph with cudaGraphExecUpdate (no re-instantiation),
 * destroys the freshly captured graph and launches. Thousands of captures in
 * one process test that a capture shim keeps its memory and bundle count
 * bounded. Results are checked periodically and at the end. */
#include "common.h"

static const char ABOUT[] =
    "recapture: every iteration k captures (on s0, fork to s1 with e0, join with\n"
    "e1): s0: y = x*a_k + k; s1: z = y ^ b_k; s0: out = y + z, where a_k = 2k+1 and\n"
    "b_k = k*0x9E3779B9. Iteration 0 instantiates; every later iteration updates\n"
    "the executable graph with cudaGraphExecUpdate, destroys its captured graph\n"
    "and launches. --expect prints one block per capture (--iters of them).\n"
    "Checks: every capture matches --expect; every update succeeds; out equals the\n"
    "CPU result every 100 iterations and after the last.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };
enum { CHECK_EVERY = 100 };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *y, *z, *out;
} bufs_t;

__host__ __device__ static inline uint32_t coef_a(uint32_t k)
{
    return 2u * k + 1u;
}
__host__ __device__ static inline uint32_t coef_b(uint32_t k)
{
    return k * 0x9E3779B9u;
}

__global__ void k_scale(uint32_t *y, const uint32_t *x, uint32_t a, uint32_t add, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * a + add;
}

__global__ void k_mix(uint32_t *z, const uint32_t *y, uint32_t bits, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) z[i] = y[i] ^ bits;
}

__global__ void k_sum(uint32_t *out, const uint32_t *y, const uint32_t *z, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[i] + z[i];
}

static cudaGraph_t issue(cap_t *c, const bufs_t *b, uint32_t k)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_scale, grid, block, b->y, b->x, coef_a(k), k, b->n);
    cap_record(c, E_FORK, S0);
    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_mix, grid, block, b->z, b->y, coef_b(k), b->n);
    cap_record(c, E_JOIN, S1);
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_sum, grid, block, b->out, b->y, b->z, b->n);
    return cap_end(c, S0);
}

static size_t check(const sample_opts_t *o, const bufs_t *b, const uint32_t *hx, uint32_t *want,
                    uint32_t *got, uint32_t k)
{
    for (size_t i = 0; i < o->n; i++) {
        uint32_t y = hx[i] * coef_a(k) + k;
        want[i] = y + (y ^ coef_b(k));
    }
    dev_download(got, b->out, o->n * sizeof(uint32_t));
    size_t bad = check_u32(o->prog, "out", got, want, o->n);
    if (bad) fprintf(stderr, "%s: iteration %u differs\n", o->prog, (unsigned)k);
    return bad;
}

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    o.n = (size_t)1 << 16; /* small: thousands of launches */
    o.iters = 2000;
    sample_parse(&o, argc, argv);
    cap_t *c = cap_create(&o, NSTREAMS, NEVENTS);
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    if (o.expect) {
        for (int k = 0; k < o.iters; k++)
            issue(c, &b, (uint32_t)k);
        cap_destroy(c);
        return 0;
    }
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *want = (uint32_t *)host_alloc(bytes);
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 16);
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.y = (uint32_t *)dev_alloc(bytes);
    b.z = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    cudaGraphExec_t exec = NULL;
    size_t bad = 0;
    int checks = 0;
    for (int k = 0; k < o.iters && !bad; k++) {
        cudaGraph_t g = issue(c, &b, (uint32_t)k);
        if (k == 0) {
            exec = graph_instantiate(g);
        } else {
            cudaGraphExecUpdateResultInfo info;
            memset(&info, 0, sizeof info);
            cudaError_t err = cudaGraphExecUpdate(exec, g, &info);
            if (err != cudaSuccess || info.result != cudaGraphExecUpdateSuccess) {
                fprintf(stderr, "%s: cudaGraphExecUpdate at iteration %d: %s, result %d\n", o.prog,
                        k, cudaGetErrorName(err), (int)info.result);
                return 1;
            }
        }
        CUDA_CHECK(cudaGraphDestroy(g));
        bool last = k == o.iters - 1;
        if (k % CHECK_EVERY == 0 || last) dev_poison(b.out, bytes);
        CUDA_CHECK(cudaGraphLaunch(exec, c->stream[S0]));
        if (k % CHECK_EVERY == 0 || last) {
            CUDA_CHECK(cudaStreamSynchronize(c->stream[S0]));
            bad += check(&o, &b, hx, want, got, (uint32_t)k);
            checks++;
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(c->stream[S0]));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.y));
    CUDA_CHECK(cudaFree(b.z));
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(hx);
    free(want);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d captures and launches, %d checked, %zu elements)\n", o.prog, o.iters, checks,
           o.n);
    return 0;
}
