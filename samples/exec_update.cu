/* exec_update: a program that changes its executable graph every iteration,
 * the three ways CUDA allows, and checks every launch. It is the workload
 * for the in-app optimizer's update translation (SGCAP_MODE=optimize,
 * optimize/README.md): each change made to the program's exec must either
 * be carried over to the optimized one or send the exec back to its
 * original graph, and the program must see the right results either way.
 *
 *   phase 1  cudaGraphExecKernelNodeSetParams on one stage (k_scale), a new
 *            scalar each iteration;
 *   phase 2  cudaGraphExecUpdate from a re-capture of the same topology with
 *            new scalars in every kernel, each iteration;
 *   phase 3  cudaGraphExecUpdate from a capture of another topology (one
 *            kernel more): CUDA refuses it (topology changed), so the program
 *            instantiates that graph instead, and goes on changing the new
 *            exec with cudaGraphExecKernelNodeSetParams. */
#include "common.h"

static const char ABOUT[] =
    "exec_update: captures (on s0, fork to s1 with e0, join with e1) s0: y = x*a + c;\n"
    "s1: z = y ^ b; s0: out = y + z (and, in the last capture, s0: w = out*3 + 1).\n"
    "Phase 1: --iters launches, each after cudaGraphExecKernelNodeSetParams gives\n"
    "k_scale a new a and c; phase 2: --iters launches, each after\n"
    "cudaGraphExecUpdate from a re-capture with new a, b, c; phase 3: the capture\n"
    "with the extra kernel, whose cudaGraphExecUpdate CUDA must refuse\n"
    "(topology changed); it is instantiated instead and gets --iters more\n"
    "kernel-node updates. --expect prints the 1 + --iters + 1 captures.\n"
    "Checks: every capture matches --expect; every launch's out (and w) equals the\n"
    "CPU result for the parameters it ran with.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };

typedef struct {
    size_t n;
    const uint32_t *x;
    uint32_t *y, *z, *out, *w;
} bufs_t;

typedef struct {
    uint32_t a, c, b; /* k_scale's factor and addend, k_mix's bits */
    bool extra;       /* the w = out*3 + 1 kernel */
} params_t;

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

static params_t params_for(uint32_t k, bool extra)
{
    params_t p = {2u * k + 1u, k * 7u + 3u, k * 0x9E3779B9u, extra};
    return p;
}

static cudaGraph_t issue(cap_t *c, const bufs_t *b, const params_t *p)
{
    const unsigned block = 256, grid = blocks_for(b->n, block);
    cap_begin(c, S0);
    CAP_LAUNCH(c, S0, k_scale, grid, block, b->y, b->x, p->a, p->c, b->n);
    cap_record(c, E_FORK, S0);
    cap_wait(c, S1, E_FORK);
    CAP_LAUNCH(c, S1, k_mix, grid, block, b->z, b->y, p->b, b->n);
    cap_record(c, E_JOIN, S1);
    cap_wait(c, S0, E_JOIN);
    CAP_LAUNCH(c, S0, k_sum, grid, block, b->out, b->y, b->z, b->n);
    if (p->extra) CAP_LAUNCH(c, S0, k_scale, grid, block, b->w, b->out, 3u, 1u, b->n);
    return cap_end(c, S0);
}

/* The k_scale node that computes y (the extra kernel writes w). */
static cudaGraphNode_t scale_node(cudaGraph_t g, const uint32_t *y)
{
    cudaGraphNode_t nodes[8];
    size_t n = 8;
    CUDA_CHECK(cudaGraphGetNodes(g, nodes, &n));
    for (size_t i = 0; i < n; i++) {
        cudaGraphNodeType t;
        CUDA_CHECK(cudaGraphNodeGetType(nodes[i], &t));
        if (t != cudaGraphNodeTypeKernel) continue;
        cudaKernelNodeParams kp;
        CUDA_CHECK(cudaGraphKernelNodeGetParams(nodes[i], &kp));
        if (kp.func == (void *)k_scale && *(uint32_t **)kp.kernelParams[0] == y) return nodes[i];
    }
    fprintf(stderr, "exec_update: no k_scale node computing y\n");
    exit(1);
}

/* cudaGraphExecKernelNodeSetParams on k_scale with a new a and c. */
static void set_scale(cudaGraphExec_t e, cudaGraphNode_t node, const bufs_t *b, params_t *p,
                      uint32_t k)
{
    params_t q = params_for(k, p->extra);
    p->a = q.a;
    p->c = q.c;
    cudaKernelNodeParams kp;
    CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &kp));
    uint32_t *y = b->y;
    const uint32_t *x = b->x;
    size_t n = b->n;
    void *args[] = {&y, &x, &p->a, &p->c, &n};
    kp.kernelParams = args;
    CUDA_CHECK(cudaGraphExecKernelNodeSetParams(e, node, &kp));
}

static size_t run_and_check(const sample_opts_t *o, cap_t *c, cudaGraphExec_t e, const bufs_t *b,
                            const params_t *p, const uint32_t *hx, uint32_t *want, uint32_t *got,
                            const char *when, int iter)
{
    const size_t bytes = o->n * sizeof(uint32_t);
    dev_poison(b->out, bytes);
    dev_poison(b->w, bytes);
    CUDA_CHECK(cudaGraphLaunch(e, c->stream[S0]));
    CUDA_CHECK(cudaStreamSynchronize(c->stream[S0]));
    for (size_t i = 0; i < o->n; i++) {
        uint32_t y = hx[i] * p->a + p->c;
        want[i] = y + (y ^ p->b);
    }
    dev_download(got, b->out, bytes);
    size_t bad = check_u32(o->prog, "out", got, want, o->n);
    if (p->extra) {
        for (size_t i = 0; i < o->n; i++)
            want[i] = want[i] * 3u + 1u;
        dev_download(got, b->w, bytes);
        bad += check_u32(o->prog, "w", got, want, o->n);
    }
    if (bad) fprintf(stderr, "%s: %s, iteration %d differs\n", o->prog, when, iter);
    return bad;
}

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    o.n = (size_t)1 << 18;
    o.iters = 4;
    sample_parse(&o, argc, argv);
    cap_t *c = cap_create(&o, NSTREAMS, NEVENTS);
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    if (o.expect) {
        params_t p = params_for(0, false);
        issue(c, &b, &p);
        for (int k = 0; k < o.iters; k++) {
            p = params_for(100 + (uint32_t)k, false);
            issue(c, &b, &p);
        }
        p = params_for(200, true);
        issue(c, &b, &p);
        cap_destroy(c);
        return 0;
    }
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *want = (uint32_t *)host_alloc(bytes);
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, o.n, 23);
    uint32_t *x = (uint32_t *)dev_alloc(bytes);
    b.x = x;
    b.y = (uint32_t *)dev_alloc(bytes);
    b.z = (uint32_t *)dev_alloc(bytes);
    b.out = (uint32_t *)dev_alloc(bytes);
    b.w = (uint32_t *)dev_alloc(bytes);
    dev_upload(x, hx, bytes);

    size_t bad = 0;
    int launches = 0;
    /* phase 1: kernel-node updates of one stage */
    params_t p = params_for(0, false);
    cudaGraph_t g = issue(c, &b, &p);
    cudaGraphExec_t exec = graph_instantiate(g);
    cudaGraphNode_t node = scale_node(g, b.y);
    bad += run_and_check(&o, c, exec, &b, &p, hx, want, got, "as captured", 0);
    launches++;
    for (int k = 0; k < o.iters && !bad; k++, launches++) {
        set_scale(exec, node, &b, &p, 10 + (uint32_t)k);
        bad += run_and_check(&o, c, exec, &b, &p, hx, want, got, "after a kernel-node update", k);
    }
    /* phase 2: whole-graph updates, same topology */
    for (int k = 0; k < o.iters && !bad; k++, launches++) {
        p = params_for(100 + (uint32_t)k, false);
        cudaGraph_t g2 = issue(c, &b, &p);
        cudaGraphExecUpdateResultInfo info;
        memset(&info, 0, sizeof info);
        cudaError_t err = cudaGraphExecUpdate(exec, g2, &info);
        if (err != cudaSuccess || info.result != cudaGraphExecUpdateSuccess) {
            fprintf(stderr, "%s: cudaGraphExecUpdate (same topology) at %d: %s, result %d\n",
                    o.prog, k, cudaGetErrorName(err), (int)info.result);
            return 1;
        }
        CUDA_CHECK(cudaGraphDestroy(g2));
        bad += run_and_check(&o, c, exec, &b, &p, hx, want, got, "after a graph update", k);
    }
    /* phase 3: another topology: refused, so re-instantiated */
    if (!bad) {
        p = params_for(200, true);
        cudaGraph_t g3 = issue(c, &b, &p);
        cudaGraphExecUpdateResultInfo info;
        memset(&info, 0, sizeof info);
        cudaError_t err = cudaGraphExecUpdate(exec, g3, &info);
        if (err == cudaSuccess || info.result != cudaGraphExecUpdateErrorTopologyChanged) {
            fprintf(stderr,
                    "%s: cudaGraphExecUpdate to another topology: %s, result %d (expected the "
                    "topology-changed refusal)\n",
                    o.prog, cudaGetErrorName(err), (int)info.result);
            return 1;
        }
        (void)cudaGetLastError(); /* the refusal is the expected outcome */
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(g));
        g = g3;
        exec = graph_instantiate(g);
        node = scale_node(g, b.y);
        bad += run_and_check(&o, c, exec, &b, &p, hx, want, got, "re-instantiated", 0);
        launches++;
        for (int k = 0; k < o.iters && !bad; k++, launches++) {
            set_scale(exec, node, &b, &p, 300 + (uint32_t)k);
            bad += run_and_check(&o, c, exec, &b, &p, hx, want, got,
                                 "after a kernel-node update of the new exec", k);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(c->stream[S0]));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(g));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(b.y));
    CUDA_CHECK(cudaFree(b.z));
    CUDA_CHECK(cudaFree(b.out));
    CUDA_CHECK(cudaFree(b.w));
    cap_destroy(c);
    free(hx);
    free(want);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d kernel-node updates, %d graph updates, 1 topology change, %d launches "
           "checked, %zu elements)\n",
           o.prog, 2 * o.iters, o.iters, launches, o.n);
    return 0;
}
