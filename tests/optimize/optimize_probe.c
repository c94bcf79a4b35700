/* optimize_probe.c: a driver-API program for the CPU test of the in-app
 * optimizer (optimize_cpu.sh), linked with the fake libcuda.so.1 of
 * tests/capture/fake_graph_cuda.c and run with FAKE_CUDA_EXECUTE=1, so its
 * graphs really compute (on the CPU, with the kernels of
 * tests/gpu/replay/emulate.h). Each scenario captures a multi-stream graph,
 * launches it and checks every result against a CPU reference: whatever
 * the optimizer swaps in, falls back to or translates, the program must
 * see exactly what its own graph computes. Exit 0 and "NAME: OK" on
 * stdout, or 1 and what differed.
 *
 * With OPTIMIZE_PROBE_PTX=FILE the module is that PTX (real code for the
 * kernels: tests/data/fuse/probe_kernels.cu) instead of a stub, so the
 * optimizer can fuse the chain k_axpb -> k_square of stream 1; the fake
 * driver runs the fused kernel as its stages (FAKE_CUDA_FUSED).
 *
 * usage: optimize_probe SCENARIO [LAUNCHES]; optimize_probe --list */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "optimize_probe: %s failed: %d\n", #x, (int)r_);                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int fake_cuda_live_execs(void); /* the fake driver's count of executable graphs */

static const char ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
                          "// the fake driver runs these by name\n";

#define N 4096
static CUstream S[3] = {(CUstream)0x3000, (CUstream)0x3100, (CUstream)0x3200};
static CUevent E[6] = {(CUevent)0x4000, (CUevent)0x4100, (CUevent)0x4200,
                       (CUevent)0x4300, (CUevent)0x4400, (CUevent)0x4500};
static CUfunction k_axpb, k_square, k_combine, k_nccl;
static CUdeviceptr x, a, b, c, out, x2;
static size_t n = N;
static float hx[N], hx2[N];
static const char *scenario = "?";

/* The PTX of OPTIMIZE_PROBE_PTX, NUL-terminated, or the stub. */
static const char *module_image(void)
{
    const char *path = getenv("OPTIMIZE_PROBE_PTX");
    if (!path || !*path) return ptx;
    FILE *f = fopen(path, "rb");
    static char text[1 << 16];
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (!f || got == 0 || !feof(f)) {
        fprintf(stderr, "optimize_probe: cannot read %s (or it is over %zu bytes)\n", path,
                sizeof text - 1);
        exit(1);
    }
    fclose(f);
    text[got] = '\0';
    return text;
}

static void setup(void)
{
    CHECK(cuInit(0));
    CUmodule m;
    CHECK(cuModuleLoadData(&m, module_image()));
    CHECK(cuModuleGetFunction(&k_axpb, m, "_Z6k_axpbPfPKfffm"));
    CHECK(cuModuleGetFunction(&k_square, m, "_Z8k_squarePfm"));
    CHECK(cuModuleGetFunction(&k_combine, m, "_Z9k_combinePfPKfS1_m"));
    CHECK(cuModuleGetFunction(&k_nccl, m, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
    CUdeviceptr *bufs[] = {&x, &a, &b, &c, &out, &x2};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        CHECK(cuMemAlloc_v2(bufs[i], N * sizeof(float)));
    unsigned long long s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        hx[i] = (float)((s * 0x2545f4914f6cdd1dull) >> 40) / (float)(1u << 24) - 0.5f;
        hx2[i] = hx[i] * 3.0f + 1.0f;
    }
    CHECK(cuMemcpyHtoD_v2(x, hx, sizeof hx));
    CHECK(cuMemcpyHtoD_v2(x2, hx2, sizeof hx2));
}

/* ---- the work and its CPU reference ---- */

static void axpb(CUstream st, CUdeviceptr *y, CUdeviceptr *in, float m, float add)
{
    void *args[] = {y, in, &m, &add, &n};
    CHECK(cuLaunchKernel(k_axpb, 4, 1, 1, 1024, 1, 1, 0, st, args, NULL));
}

static void square(CUstream st, CUdeviceptr *y)
{
    void *args[] = {y, &n};
    CHECK(cuLaunchKernel(k_square, 4, 1, 1, 1024, 1, 1, 0, st, args, NULL));
}

static void combine(CUstream st)
{
    void *args[] = {&out, &b, &c, &n};
    CHECK(cuLaunchKernel(k_combine, 4, 1, 1, 1024, 1, 1, 0, st, args, NULL));
}

typedef struct {
    float scale;
    const float *in;
    bool squared; /* the k_square node runs */
    float b_add;  /* the k_axpb of stream 1 adds it (2 as captured) */
    bool b_short; /* that k_axpb stops one element short: b[N-1] keeps the last
                     launch's value, squared again */
} ref_t;

static void expect(const ref_t *r, const char *when)
{
    static float got[N];
    CHECK(cuMemcpyDtoH_v2(got, out, sizeof got));
    for (int i = 0; i < N; i++) {
        float va = fmaf(r->in[i], r->scale, 0.25f);
        float vb = fmaf(va, -0.5f, r->b_add);
        if (r->squared) vb = vb * vb;
        if (r->b_short && i == N - 1) vb = vb * vb;
        float vc = fmaf(va, 3.0f, -1.0f);
        float want = fmaf(vb, 0.75f, vc);
        if (memcmp(&got[i], &want, sizeof want) != 0) {
            printf("%s: FAIL %s: out[%d] = %a, the program's graph computes %a\n", scenario, when,
                   i, (double)got[i], (double)want);
            exit(1);
        }
    }
}

/* out is poisoned before every launch: a launch that skips work fails. */
static void launch(CUgraphExec e, const ref_t *r, const char *when)
{
    CHECK(cuMemsetD32Async(out, 0xA5A5A5A5u, N, S[0]));
    CHECK(cuGraphLaunch(e, S[0]));
    CHECK(cuStreamSynchronize(S[0]));
    expect(r, when);
}

/* s0: a = x*scale + 0.25; fork: s1 b = (a*-0.5 + 2)^2, s2 c = a*3 - 1;
 * join: out = b*0.75 + c. `extra`: one more kernel after the join (a
 * graph of another topology). */
static CUgraph fork_join(float scale, bool extra)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, scale, 0.25f);
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    square(S[1], &b);
    CHECK(cuEventRecord(E[1], S[1]));
    CHECK(cuStreamWaitEvent(S[2], E[0], 0));
    axpb(S[2], &c, &a, 3.0f, -1.0f);
    CHECK(cuEventRecord(E[2], S[2]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    CHECK(cuStreamWaitEvent(S[0], E[2], 0));
    combine(S[0]);
    if (extra) axpb(S[0], &x2, &out, 1.0f, 0.0f); /* writes x2 only: out stays as checked */
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

static CUgraphExec instantiate(CUgraph g, unsigned long long flags)
{
    CUgraphExec e = NULL;
    CHECK(cuGraphInstantiateWithFlags(&e, g, flags));
    return e;
}

/* The i-th node of g that runs f. */
static CUgraphNode node_of(CUgraph g, CUfunction f, int which)
{
    CUgraphNode nodes[64];
    size_t count = 64;
    CHECK(cuGraphGetNodes(g, nodes, &count));
    for (size_t i = 0; i < count; i++) {
        CUgraphNodeType t;
        CHECK(cuGraphNodeGetType(nodes[i], &t));
        if (t != CU_GRAPH_NODE_TYPE_KERNEL) continue;
        CUDA_KERNEL_NODE_PARAMS_v2 p;
        CHECK(cuGraphKernelNodeGetParams_v2(nodes[i], &p));
        if (p.func == f && which-- == 0) return nodes[i];
    }
    fprintf(stderr, "optimize_probe: no such node\n");
    exit(1);
}

/* ---- scenarios ---- */

static void run_fork_join(int launches)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    for (int i = 0; i < launches; i++)
        launch(e, &r, "a launch");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

/* External event record and wait nodes with no path between them: the
 * control-deps pass orders the record before the wait (its rule R1), so
 * the passes change the graph and it is optimized without being forced. */
static void run_events(int launches)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuEventRecord(E[3], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[3], 0)); /* s1 joins, depending on nothing yet */
    CHECK(cuStreamWaitEvent(S[2], E[3], 0));
    axpb(S[0], &a, &x, 2.0f, 0.25f);
    CHECK(cuEventRecordWithFlags(E[4], S[0], CU_EVENT_RECORD_EXTERNAL));
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[2], E[4], CU_EVENT_WAIT_EXTERNAL));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    CHECK(cuStreamWaitEvent(S[2], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    square(S[1], &b);
    CHECK(cuEventRecord(E[1], S[1]));
    axpb(S[2], &c, &a, 3.0f, -1.0f);
    CHECK(cuEventRecord(E[2], S[2]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    CHECK(cuStreamWaitEvent(S[0], E[2], 0));
    combine(S[0]);
    CHECK(cuStreamEndCapture(S[0], &g));
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {2.0f, hx, true, 2.0f, false};
    for (int i = 0; i < launches; i++)
        launch(e, &r, "a launch");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

/* A graph allocation t, written on s0 and read on s1, freed on s0 without
 * waiting for s1 (the allocator's stream-ordered free; PyTorch's
 * sync_dealloc case): the defer-dealloc pass moves the free after the
 * read, and the optimized graph gets t at an address of its own. With
 * `keep`, t is never freed: it outlives the graph (refused). */
static void run_alloc(int launches, bool keep)
{
    CUgraph g = NULL;
    CUdeviceptr t = 0;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemAllocAsync(&t, N * sizeof(float), S[0]));
    axpb(S[0], &t, &x, 1.5f, 0.25f);
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &t, -0.5f, 2.0f);
    square(S[1], &b);
    CHECK(cuEventRecord(E[1], S[1]));
    if (!keep) CHECK(cuMemFreeAsync(t, S[0]));
    axpb(S[0], &c, &a, 3.0f, -1.0f);
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    combine(S[0]);
    CHECK(cuStreamEndCapture(S[0], &g));
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    for (int i = 0; i < launches; i++)
        launch(e, &r, "a launch");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

/* cuGraphExecKernelNodeSetParams on stream 0's k_axpb (a = in*scale + 0.25)
 * of fork_join's graph g in exec e. */
static void set_first_axpb(CUgraphExec e, CUgraph g, CUdeviceptr *in, float scale)
{
    CUgraphNode first = node_of(g, k_axpb, 0);
    float add = 0.25f;
    void *args[] = {&a, in, &scale, &add, &n};
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    CHECK(cuGraphKernelNodeGetParams_v2(first, &p));
    p.kernelParams = args;
    CHECK(cuGraphExecKernelNodeSetParams_v2(e, first, &p));
}

/* In-place changes: a new scalar for the first kernel (carried over to the
 * optimized graph), a disabled node (carried over), then a new input
 * buffer the optimized graph was never checked with (it cannot follow:
 * the original runs from then on). Every result is checked. */
static void run_set_params(void)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    launch(e, &r, "the first launch");
    launch(e, &r, "the second launch");
    set_first_axpb(e, g, &x, 0.75f);
    r.scale = 0.75f;
    launch(e, &r, "after a new scalar");
    CHECK(cuGraphNodeSetEnabled(e, node_of(g, k_square, 0), 0));
    r.squared = false;
    launch(e, &r, "after disabling k_square");
    CHECK(cuGraphNodeSetEnabled(e, node_of(g, k_square, 0), 1));
    r.squared = true;
    launch(e, &r, "after enabling it again");
    set_first_axpb(e, g, &x2, 0.75f);
    r.in = hx2;
    launch(e, &r, "after a new input buffer");
    launch(e, &r, "a launch after that");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

/* cuGraphExecUpdate: from a re-capture with a new scalar (same topology:
 * carried over), then from one with another topology (the driver refuses
 * the update; the exec keeps running what it ran). */
static void run_exec_update(void)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    launch(e, &r, "the first launch");
    /* node updates first, more of them than the log shows (as the
     * exec_update sample does): the graph update's own line must still be
     * logged */
    for (int i = 0; i < 6; i++) {
        set_first_axpb(e, g, &x, 1.5f);
        launch(e, &r, "after a kernel-node update");
    }
    CUgraph g2 = fork_join(-2.0f, false);
    CUgraphExecUpdateResultInfo info;
    CHECK(cuGraphExecUpdate_v2(e, g2, &info));
    r.scale = -2.0f;
    launch(e, &r, "after an update with a new scalar");
    launch(e, &r, "a second launch after it");
    CUgraph g3 = fork_join(5.0f, true);
    CUresult u = cuGraphExecUpdate_v2(e, g3, &info);
    if (u == CUDA_SUCCESS || info.result != CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED) {
        printf("%s: FAIL: an update to another topology was accepted\n", scenario);
        exit(1);
    }
    launch(e, &r, "after a refused update to another topology");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
    CHECK(cuGraphDestroy(g2));
    CHECK(cuGraphDestroy(g3));
}

/* Exec updates of a stage of a fused chain (stream 1: k_axpb -> k_square,
 * fused under OPTIMIZE_PROBE_PTX): a new scalar of the first stage is
 * translated into its slice of the fused kernel's parameters; a new
 * element count (a value the fusion's legality was proven with) sends the
 * exec back to the original. */
static void run_fused_update(void)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    launch(e, &r, "the first launch");
    launch(e, &r, "the second launch");
    CUgraphNode stage = node_of(g, k_axpb, 1); /* stream 1's: b = a*-0.5 + add */
    float m = -0.5f, add = 1.0f;
    size_t shorter = N - 1;
    void *args[] = {&b, &a, &m, &add, &n};
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    CHECK(cuGraphKernelNodeGetParams_v2(stage, &p));
    p.kernelParams = args;
    CHECK(cuGraphExecKernelNodeSetParams_v2(e, stage, &p));
    r.b_add = 1.0f;
    launch(e, &r, "after a new scalar in a fused stage");
    launch(e, &r, "a second launch after it");
    args[4] = &shorter;
    CHECK(cuGraphExecKernelNodeSetParams_v2(e, stage, &p));
    r.b_short = true;
    launch(e, &r, "after a new element count in a fused stage");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

/* Disabling one stage of a fused chain: not carried over (the fused
 * kernel runs every stage), the exec goes back to the original. */
static void run_fused_disable(void)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    launch(e, &r, "the first launch");
    launch(e, &r, "the second launch");
    CHECK(cuGraphNodeSetEnabled(e, node_of(g, k_square, 0), 0));
    r.squared = false;
    launch(e, &r, "after disabling k_square, a fused stage");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

static void run_destroy(void)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    launch(e, &r, "a launch");
    int before = fake_cuda_live_execs();
    CHECK(cuGraphExecDestroy(e));
    int after = fake_cuda_live_execs();
    CHECK(cuGraphDestroy(g));
    printf("%s: live executable graphs %d -> %d\n", scenario, before, after);
}

static void run_nccl(int launches)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CHECK(cuLaunchKernel(k_nccl, 1, 1, 1, 32, 1, 1, 0, S[0], NULL, NULL));
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    square(S[1], &b);
    CHECK(cuEventRecord(E[1], S[1]));
    axpb(S[0], &c, &a, 3.0f, -1.0f);
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    combine(S[0]);
    CHECK(cuStreamEndCapture(S[0], &g));
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    for (int i = 0; i < launches; i++)
        launch(e, &r, "a launch");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

static void run_device_launch(void)
{
    CUgraph g = fork_join(1.5f, false);
    CUgraphExec e = instantiate(g, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    launch(e, &r, "a launch");
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

static int host_calls;
static void host_fn(void *p)
{
    (void)p;
    host_calls++;
}

static void run_host(int launches)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CHECK(cuLaunchHostFunc(S[0], host_fn, NULL));
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    square(S[1], &b);
    CHECK(cuEventRecord(E[1], S[1]));
    axpb(S[0], &c, &a, 3.0f, -1.0f);
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    combine(S[0]);
    CHECK(cuStreamEndCapture(S[0], &g));
    CUgraphExec e = instantiate(g, 0);
    ref_t r = {1.5f, hx, true, 2.0f, false};
    for (int i = 0; i < launches; i++)
        launch(e, &r, "a launch");
    if (host_calls != launches) {
        printf("%s: FAIL: the host callback ran %d times in %d launches\n", scenario, host_calls,
               launches);
        exit(1);
    }
    CHECK(cuGraphExecDestroy(e));
    CHECK(cuGraphDestroy(g));
}

int main(int argc, char **argv)
{
    static const char list[] = "fork_join recapture events dealloc outlive set_params exec_update "
                               "fused_update fused_disable destroy nccl device_launch host";
    if (argc < 2) {
        fprintf(stderr, "usage: optimize_probe SCENARIO [LAUNCHES]; optimize_probe --list\n");
        return 2;
    }
    if (!strcmp(argv[1], "--list")) {
        puts(list);
        return 0;
    }
    scenario = argv[1];
    int launches = argc > 2 ? atoi(argv[2]) : 3;
    if (launches < 1) launches = 1;
    setup();
    if (!strcmp(scenario, "fork_join"))
        run_fork_join(launches);
    else if (!strcmp(scenario, "recapture")) /* the same graph captured and instantiated again */
        run_fork_join(launches), run_fork_join(launches);
    else if (!strcmp(scenario, "events"))
        run_events(launches);
    else if (!strcmp(scenario, "dealloc"))
        run_alloc(launches, false);
    else if (!strcmp(scenario, "outlive"))
        run_alloc(launches, true);
    else if (!strcmp(scenario, "set_params"))
        run_set_params();
    else if (!strcmp(scenario, "exec_update"))
        run_exec_update();
    else if (!strcmp(scenario, "fused_update"))
        run_fused_update();
    else if (!strcmp(scenario, "fused_disable"))
        run_fused_disable();
    else if (!strcmp(scenario, "destroy"))
        run_destroy();
    else if (!strcmp(scenario, "nccl"))
        run_nccl(launches);
    else if (!strcmp(scenario, "device_launch"))
        run_device_launch();
    else if (!strcmp(scenario, "host"))
        run_host(launches);
    else {
        fprintf(stderr, "optimize_probe: unknown scenario %s (%s)\n", scenario, list);
        return 2;
    }
    printf("%s: OK\n", scenario);
    return 0;
}
