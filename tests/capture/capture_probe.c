/* capture_probe.c: a driver-API program for the CPU test of the capture
 * shim, linked with the fake libcuda.so.1 (fake_graph_cuda.c). Each scenario
 * captures multi-stream work the way a CUDA program does and instantiates
 * it; `--expect` prints the topology it issues (docs/SAMPLES.md, v1), so
 * topo_compare can check the bundles the shim wrote.
 *
 * usage: capture_probe fork_join|threads|mixed|conditional|recapture N|explicit [--expect] */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "capture_probe: %s failed: %d\n", #x, (int)r_);                        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* PTX text in .rodata: the shim must record it as a borrowed PTX image. */
static const char ptx[] = ".version 9.0\n"
                          ".target sm_90\n"
                          ".address_size 64\n"
                          ".visible .entry _Z6k_axpbPfPKfffm(.param .u64 a, .param .u64 b,\n"
                          "  .param .f32 c, .param .f32 d, .param .u64 e) { ret; }\n"
                          ".visible .entry _Z8k_squarePfm(.param .u64 a, .param .u64 b) { ret; }\n"
                          ".visible .entry _Z9k_combinePfPKfS1_m(.param .u64 a, .param .u64 b,\n"
                          "  .param .u64 c, .param .u64 d) { ret; }\n";

static CUstream S[4] = {(CUstream)0x3000, (CUstream)0x3100, (CUstream)0x3200, (CUstream)0x3300};
static CUevent E[4] = {(CUevent)0x4000, (CUevent)0x4100, (CUevent)0x4200, (CUevent)0x4300};
static CUfunction k_axpb, k_square, k_combine;
static CUdeviceptr x, a, b, c, out;
static size_t n = 1 << 20;

static void launch(CUfunction f, CUstream s, void **args)
{
    CHECK(cuLaunchKernel(f, 4096, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void axpb(CUstream s, CUdeviceptr *y, CUdeviceptr *in, float m, float add)
{
    void *args[] = {y, in, &m, &add, &n};
    launch(k_axpb, s, args);
}

static CUgraph fork_join(float scale)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, scale, 0.25f);
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    void *sq[] = {&b, &n};
    launch(k_square, S[1], sq);
    CHECK(cuEventRecord(E[1], S[1]));
    CHECK(cuStreamWaitEvent(S[2], E[0], 0));
    axpb(S[2], &c, &a, 3.0f, -1.0f);
    CHECK(cuEventRecord(E[2], S[2]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    CHECK(cuStreamWaitEvent(S[0], E[2], 0));
    void *cb[] = {&out, &b, &c, &n};
    launch(k_combine, S[0], cb);
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

static const char fork_join_expect[] = "stream s0 kernel kernel\n"
                                       "stream s1 kernel kernel\n"
                                       "stream s2 kernel\n"
                                       "event e0 s0:0 -> s1:0\n"
                                       "event e0 s0:0 -> s2:0\n"
                                       "event e1 s1:1 -> s0:1\n"
                                       "event e2 s2:0 -> s0:1\n";

/* The side stream is driven from another thread while the origin's thread
 * waits (a capture in relaxed mode; thread_local would forbid nothing here
 * either). */
static void *side_thread(void *arg)
{
    (void)arg;
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    void *sq[] = {&b, &n};
    launch(k_square, S[1], sq);
    CHECK(cuEventRecord(E[1], S[1]));
    return NULL;
}

static CUgraph threads(void)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_RELAXED));
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CHECK(cuEventRecord(E[0], S[0]));
    pthread_t t;
    if (pthread_create(&t, NULL, side_thread, NULL) != 0) exit(1);
    pthread_join(t, NULL);
    CHECK(cuStreamWaitEvent(S[2], E[0], 0));
    axpb(S[2], &c, &a, 3.0f, -1.0f);
    CHECK(cuEventRecord(E[2], S[2]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    CHECK(cuStreamWaitEvent(S[0], E[2], 0));
    void *cb[] = {&out, &b, &c, &n};
    launch(k_combine, S[0], cb);
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

/* A conditional node put into a capture by hand (cuGraphAddNode_v2 on the
 * capturing graph, then cuStreamUpdateCaptureDependencies), its body
 * captured from another stream with cuStreamBeginCaptureToGraph. */
static CUgraph conditional(void)
{
    CUgraph g = NULL, cap = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CUstreamCaptureStatus st;
    cuuint64_t id;
    const CUgraphNode *deps;
    const CUgraphEdgeData *ed;
    size_t nd;
    CHECK(cuStreamGetCaptureInfo_v3(S[0], &st, &id, &cap, &deps, &ed, &nd));
    CUgraphConditionalHandle h;
    CHECK(cuGraphConditionalHandleCreate(&h, cap, NULL, 1, 0));
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = CU_GRAPH_COND_TYPE_IF;
    p.conditional.size = 1;
    CUgraphNode cond;
    CHECK(cuGraphAddNode_v2(&cond, cap, deps, NULL, nd, &p));
    CHECK(cuStreamUpdateCaptureDependencies_v2(S[0], &cond, NULL, 1,
                                               CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    void *cb[] = {&out, &a, &a, &n};
    launch(k_combine, S[0], cb);
    CHECK(cuStreamEndCapture(S[0], &g));
    CUgraph body = p.conditional.phGraph_out[0], got = NULL;
    CHECK(cuStreamBeginCaptureToGraph(S[1], body, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[1], &b, &a, 2.0f, 1.0f);
    void *sq[] = {&b, &n};
    launch(k_square, S[1], sq);
    CHECK(cuStreamEndCapture(S[1], &got));
    return g;
}

static void host_fn(void *p)
{
    (void)p;
}

static CUgraph mixed(void)
{
    CUgraph g = NULL;
    CUdeviceptr tmp = 0;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_RELAXED));
    CHECK(cuMemsetD32Async(x, 7, n, S[0]));
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CHECK(cuMemAllocAsync(&tmp, n * 4, S[0]));
    CHECK(cuEventRecord(E[3], S[0]));
    CHECK(cuStreamWaitEvent(S[3], E[3], 0));
    axpb(S[3], &tmp, &a, 2.0f, 1.0f);
    CHECK(cuMemcpyAsync(out, tmp, n * 4, S[3]));
    CHECK(cuEventRecord(E[1], S[3]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    CHECK(cuMemFreeAsync(tmp, S[0]));
    CHECK(cuLaunchHostFunc(S[0], host_fn, NULL));
    CHECK(cuEventRecordWithFlags(E[2], S[0], CU_EVENT_RECORD_EXTERNAL));
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

static const char mixed_expect[] = "stream s0 memset kernel mem_alloc mem_free host event_record\n"
                                   "stream s1 kernel memcpy\n"
                                   "event e0 s0:2 -> s1:0\n"
                                   "event e1 s1:1 -> s0:3\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: capture_probe fork_join|threads|mixed|conditional|recapture "
                        "N|explicit [--expect]\n");
        return 2;
    }
    const char *what = argv[1];
    int iters = 1;
    bool expect = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0)
            expect = true;
        else
            iters = atoi(argv[i]);
    }
    if (expect) {
        puts("# sgcap expected topology v1");
        int graphs = strcmp(what, "recapture") == 0 ? iters : 1;
        for (int i = 0; i < graphs; i++) {
            printf("graph %d\n", i);
            fputs(strcmp(what, "mixed") == 0      ? mixed_expect
                  : strcmp(what, "explicit") == 0 ? ""
                                                  : fork_join_expect,
                  stdout);
        }
        return 0;
    }
    CHECK(cuInit(0));
    CUmodule mod;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&k_axpb, mod, "_Z6k_axpbPfPKfffm"));
    CHECK(cuModuleGetFunction(&k_square, mod, "_Z8k_squarePfm"));
    CHECK(cuModuleGetFunction(&k_combine, mod, "_Z9k_combinePfPKfS1_m"));
    CHECK(cuMemAlloc_v2(&x, n * 4));
    CHECK(cuMemAlloc_v2(&a, n * 4));
    CHECK(cuMemAlloc_v2(&b, n * 4));
    CHECK(cuMemAlloc_v2(&c, n * 4));
    CHECK(cuMemAlloc_v2(&out, n * 4));
    CUgraphExec exec = NULL;
    if (strcmp(what, "fork_join") == 0 || strcmp(what, "mixed") == 0 ||
        strcmp(what, "threads") == 0 || strcmp(what, "conditional") == 0) {
        CUgraph g = what[0] == 'f'   ? fork_join(1.5f)
                    : what[0] == 'm' ? mixed()
                    : what[0] == 't' ? threads()
                                     : conditional();
        CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
        for (int r = 0; r < 3; r++)
            CHECK(cuGraphLaunch(exec, S[0]));
        CHECK(cuStreamSynchronize(S[0]));
        CHECK(cuGraphExecDestroy(exec));
        CHECK(cuGraphDestroy(g));
    } else if (strcmp(what, "recapture") == 0) {
        for (int i = 0; i < iters; i++) {
            /* the scalar changes every iteration, except that every other
             * capture repeats the previous one exactly */
            CUgraph g = fork_join(1.0f + (float)(i / 2));
            if (i == 0) {
                CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            } else {
                CUgraphExecUpdateResultInfo info;
                CHECK(cuGraphExecUpdate_v2(exec, g, &info));
            }
            CHECK(cuGraphDestroy(g));
            CHECK(cuGraphLaunch(exec, S[0]));
        }
        CHECK(cuGraphExecDestroy(exec));
    } else if (strcmp(what, "explicit") == 0) {
        CUgraph g;
        CUgraphNode e1, e2;
        CHECK(cuGraphCreate(&g, 0));
        CHECK(cuGraphAddEmptyNode(&e1, g, NULL, 0));
        CHECK(cuGraphAddEmptyNode(&e2, g, &e1, 1));
        CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
        CHECK(cuGraphLaunch(exec, S[0]));
        CHECK(cuGraphExecDestroy(exec));
        CHECK(cuGraphDestroy(g));
    } else {
        fprintf(stderr, "capture_probe: unknown scenario %s\n", what);
        return 2;
    }
    CHECK(cuMemFree_v2(x));
    printf("capture_probe %s: OK\n", what);
    return 0;
}
