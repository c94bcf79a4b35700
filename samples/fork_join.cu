/* fork_join: the basic multi-stream capture. The origin stream forks to two
 * side streams through one event, each side does its own float work, both
 * join back through their own events, and a combine kernel on the origin reads
 * both results. Checks the float results bit for bit against the CPU.
 *
 * In the per-thread-default-stream build (fork_join_ptds) the origin is the
 * default stream itself (handle 0, which then means the calling thread's
 * stream), so the capture shim sees NULL-stream calls through the _ptsz entry
 * points. */
#include "common.h"

static const char ABOUT[] =
    "fork_join: capture on s0, fork to s1 and s2 with one event (e0), join back\n"
    "with one event per side stream (e1, e2), combine on s0.\n"
    "  s0: a = x*1.5+0.25        | s1: b = a*-0.5+2; b = b*b | s2: c = a*3-1\n"
    "  s0 (after both joins): out = b*0.75 + c\n"
    "In the _ptds build s0 is the per-thread default stream (handle 0).\n"
    "Checks: the captured graph matches --expect; out equals the CPU result\n"
    "bit for bit after every replay.\n";

enum { S0, S1, S2, NSTREAMS };
enum { E_FORK, E_JOIN1, E_JOIN2, NEVENTS };

typedef struct {
    size_t n;
    const float *x;
    float *a, *b, *c, *out;
} bufs_t;

__global__ void k_axpb(float *y, const float *x, float m, float add, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = f32_fma(x[i], m, add);
}

__global__ void k_square(float *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = f32_mul(y[i], y[i]);
}

__global__ void k_combine(float *out, const float *b, const float *c, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = f32_fma(b[i], 0.75f, c[i]);
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_axpb, grid, block, b->a, b->x, 1.5f, 0.25f, b->n);
    cap_record(c, E_FORK, S0);

    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_axpb, grid, block, b->b, b->a, -0.5f, 2.0f, b->n);
    CAP_LAUNCH(c, S1, k_square, grid, block, b->b, b->n);
    cap_record(c, E_JOIN1, S1);

    cap_wait(c, S2, E_FORK);
    CAP_LAUNCH(c, S2, k_axpb, grid, block, b->c, b->a, 3.0f, -1.0f, b->n);
    cap_record(c, E_JOIN2, S2);

    cap_wait(c, S0, E_JOIN1);
    cap_wait(c, S0, E_JOIN2);
    CAP_LAUNCH(c, S0, k_combine, grid, block, b->out, b->b, b->c, b->n);
    cap_end(c, S0);
}

static void reference(float *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float a = f32_fma(x[i], 1.5f, 0.25f);
        float b = f32_fma(a, -0.5f, 2.0f);
        b = f32_mul(b, b);
        float c = f32_fma(a, 3.0f, -1.0f);
        out[i] = f32_fma(b, 0.75f, c);
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
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    cap_set_stream(c, S0, 0);
#endif
    const size_t bytes = o.n * sizeof(float);
    float *hx = (float *)host_alloc(bytes), *want = (float *)host_alloc(bytes);
    float *got = (float *)host_alloc(bytes);
    fill_f32(hx, o.n, 1, -4.0f, 4.0f);
    reference(want, hx, o.n);

    float *x = (float *)dev_alloc(bytes);
    b.x = x;
    b.a = (float *)dev_alloc(bytes);
    b.b = (float *)dev_alloc(bytes);
    b.c = (float *)dev_alloc(bytes);
    b.out = (float *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        dev_poison(b.a, bytes);
        dev_poison(b.b, bytes);
        dev_poison(b.c, bytes);
        dev_poison(b.out, bytes);
        graph_run(exec, c->stream[S0]);
        dev_download(got, b.out, bytes);
        bad = check_f32(o.prog, "out", got, want, o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.a));
    CUDA_CHECK(cudaFree(b.b));
    CUDA_CHECK(cudaFree(b.c));
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
