/* chain_barrier: an elementwise chain on s0 cut in the middle by an event
 * record that s1 waits on; s1 reads the intermediate at that point. All five
 * s0 kernels have the same geometry, so only the record/wait barrier stops
 * fusion: k0+k1 and k2+k3 may fuse, k1|k2 may not (an event edge leaves k1),
 * nor k3|k4 (an event edge enters k4). Checks results bit for bit. */
#include "common.h"

static const char ABOUT[] =
    "chain_barrier: s0 runs t = x*2+1; t = t*t; then records e0; then\n"
    "u = t*0.5+3; u = u*u; s1 waits e0 and reads the intermediate t:\n"
    "v = t*-1+4; s1 records e1; s0 waits e1 and writes out = u + v.\n"
    "Fusion may merge s0:0-1 and s0:2-3 but nothing across the record (after\n"
    "s0:1) or into s0:4 (the join): 5 s0 kernels become 3.\n"
    "Checks: the captured graph matches --expect; t, u, v and out equal the CPU\n"
    "results bit for bit after every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_MID, E_JOIN, NEVENTS };

typedef struct {
    size_t n;
    const float *x;
    float *t, *u, *v, *out;
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

__global__ void k_add(float *out, const float *a, const float *b, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = f32_add(a[i], b[i]);
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_axpb, grid, block, b->t, b->x, 2.0f, 1.0f, b->n);
    CAP_LAUNCH(c, S0, k_square, grid, block, b->t, b->n);
    cap_record(c, E_MID, S0); /* the barrier: s1 reads t as it is here */
    CAP_LAUNCH(c, S0, k_axpb, grid, block, b->u, b->t, 0.5f, 3.0f, b->n);
    CAP_LAUNCH(c, S0, k_square, grid, block, b->u, b->n);
    cap_wait(c, S1, E_MID);
    CAP_LAUNCH(c, S1, k_axpb, grid, block, b->v, b->t, -1.0f, 4.0f, b->n);
    cap_record(c, E_JOIN, S1);
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_add, grid, block, b->out, b->u, b->v, b->n);
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
    const size_t n = o.n, bytes = n * sizeof(float);
    float *hx = (float *)host_alloc(bytes), *got = (float *)host_alloc(bytes);
    float *wt = (float *)host_alloc(bytes), *wu = (float *)host_alloc(bytes);
    float *wv = (float *)host_alloc(bytes), *wout = (float *)host_alloc(bytes);
    fill_f32(hx, n, 13, -3.0f, 3.0f);
    for (size_t i = 0; i < n; i++) {
        float t = f32_fma(hx[i], 2.0f, 1.0f);
        t = f32_mul(t, t);
        float u = f32_fma(t, 0.5f, 3.0f);
        u = f32_mul(u, u);
        float v = f32_fma(t, -1.0f, 4.0f);
        wt[i] = t;
        wu[i] = u;
        wv[i] = v;
        wout[i] = f32_add(u, v);
    }
    float *x = (float *)dev_alloc(bytes);
    b.x = x;
    b.t = (float *)dev_alloc(bytes);
    b.u = (float *)dev_alloc(bytes);
    b.v = (float *)dev_alloc(bytes);
    b.out = (float *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        float *outs[] = {b.t, b.u, b.v, b.out};
        const float *wants[] = {wt, wu, wv, wout};
        const char *names[] = {"t", "u", "v", "out"};
        for (size_t k = 0; k < 4; k++)
            dev_poison(outs[k], bytes);
        graph_run(exec, c->stream[S0]);
        for (size_t k = 0; k < 4; k++) {
            dev_download(got, outs[k], bytes);
            bad += check_f32(o.prog, names[k], got, wants[k], n);
        }
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.t));
    CUDA_CHECK(cudaFree(b.u));
    CUDA_CHECK(cudaFree(b.v));
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(hx);
    free(got);
    free(wt);
    free(wu);
    free(wv);
    free(wout);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %zu elements)\n", o.prog, o.replays, n);
    return 0;
}
