/* ping_pong: two streams take turns, each step waiting for the other stream's
 * last step (bidirectional event edges, two events each recorded many times).
 * Every step reads the buffer the other stream wrote last, so any lost or
 * misplaced edge is a data race. The graph is deliberately not idempotent: the
 * state advances with every replay and the CPU reference advances with it,
 * which also shows that each replay really ran every step. */
#include "common.h"

static const char ABOUT[] =
    "ping_pong: steps 0..7 alternate between s0 (even) and s1 (odd); after each\n"
    "step its stream records its own event (e0 for s0, e1 for s1, re-recorded every\n"
    "time) and the other stream waits for it before the next step. Then s0 writes\n"
    "out = x + y.\n"
    "  even step k: x = x*2654435761 + (y ^ k)    odd step k: y = (y ^ x)*40503 + k\n"
    "Checks: the captured graph matches --expect; x, y and out equal the CPU state\n"
    "after every replay (state carries over from one replay to the next).\n";

enum { S0, S1, NSTREAMS };
enum { E_S0, E_S1, NEVENTS };
enum { STEPS = 8 };

typedef struct {
    size_t n;
    uint32_t *x, *y, *out;
} bufs_t;

__host__ __device__ static inline uint32_t even_step(uint32_t x, uint32_t y, uint32_t k)
{
    return x * 2654435761u + (y ^ k);
}

__host__ __device__ static inline uint32_t odd_step(uint32_t x, uint32_t y, uint32_t k)
{
    return (y ^ x) * 40503u + k;
}

__global__ void k_even(uint32_t *x, const uint32_t *y, uint32_t k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = even_step(x[i], y[i], k);
}

__global__ void k_odd(const uint32_t *x, uint32_t *y, uint32_t k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = odd_step(x[i], y[i], k);
}

__global__ void k_sum(uint32_t *out, const uint32_t *x, const uint32_t *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    for (uint32_t k = 0; k < STEPS; k++) {
        int s = (int)(k % 2), ev = s == S0 ? E_S0 : E_S1, other_ev = s == S0 ? E_S1 : E_S0;
        if (k > 0) cap_wait(c, s, other_ev);
        if (s == S0)
            CAP_LAUNCH(c, S0, k_even, grid, block, b->x, b->y, k, b->n);
        else
            CAP_LAUNCH(c, S1, k_odd, grid, block, b->x, b->y, k, b->n);
        cap_record(c, ev, s);
    }
    cap_wait(c, S0, E_S1); /* STEPS is even: the last step ran on s1 */
    CAP_LAUNCH(c, S0, k_sum, grid, block, b->out, b->x, b->y, b->n);
    cap_end(c, S0);
}

static void reference_replay(uint32_t *x, uint32_t *y, uint32_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < STEPS; k++) {
            if (k % 2 == 0)
                x[i] = even_step(x[i], y[i], k);
            else
                y[i] = odd_step(x[i], y[i], k);
        }
        out[i] = x[i] + y[i];
    }
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
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *hy = (uint32_t *)host_alloc(bytes);
    uint32_t *hout = (uint32_t *)host_alloc(bytes), *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 11);
    fill_u32(hy, o.n, 12);
    b.x = (uint32_t *)dev_alloc(bytes);
    b.y = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(b.x, hx, bytes);
    dev_upload(b.y, hy, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.out, bytes);
        graph_run(exec, c->stream[S0]);
        reference_replay(hx, hy, hout, o.n);
        dev_download(got, b.x, bytes);
        bad += check_u32(o.prog, "x", got, hx, o.n);
        dev_download(got, b.y, bytes);
        bad += check_u32(o.prog, "y", got, hy, o.n);
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, hout, o.n);
        if (bad) fprintf(stderr, "%s: replay %d differs\n", o.prog, r);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(b.x));
    CUDA_CHECK(cudaFree(b.y));
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(hx);
    free(hy);
    free(hout);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %d steps, %zu elements)\n", o.prog, o.replays, STEPS, o.n);
    return 0;
}
