/* capture_probe.c: a driver-API program for the CPU test of the capture
 * shim, linked with the fake libcuda.so.1 (fake_graph_cuda.c). Each scenario
 * captures multi-stream work the way a CUDA program does and instantiates
 * it; `--expect` prints the topology it issues (docs/SAMPLES.md, v1), so
 * topo_compare can check the bundles the shim wrote.
 *
 * The edgeless and node-by-node scenarios are the graph shapes that real
 * frameworks build (a single-kernel capture, independent explicit nodes, a
 * graph holding one empty node, XLA's command buffers, captures into an
 * existing graph, single-node bodies): the driver refuses a second listing
 * query with arrays for a count of 0, which once left every such graph
 * unrecorded.
 *
 * two_devices captures one graph per device of a process driving two GPUs
 * (run it with FAKE_CUDA_DEVICES=2): the bundles must say which device.
 *
 * usage: capture_probe SCENARIO [N] [--expect]; capture_probe --list */
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
/* A promise of the probe itself (not a CUDA call) that must hold. */
#define EXPECT(x)                                                                                  \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "capture_probe: expected %s\n", #x);                                  \
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

/* A re-capture step: instantiate the first graph (or update the exec from
 * a later one), destroy the graph, launch. */
static void update_and_launch(CUgraphExec *exec, CUgraph g)
{
    if (!*exec) {
        CHECK(cuGraphInstantiateWithFlags(exec, g, 0));
    } else {
        CUgraphExecUpdateResultInfo info;
        CHECK(cuGraphExecUpdate_v2(*exec, g, &info));
    }
    CHECK(cuGraphDestroy(g));
    CHECK(cuGraphLaunch(*exec, S[0]));
}

/* fork_join with one kernel attribute of its first node changed after
 * capture (which: 0 none, 1 priority, 2 cooperative, 3 cluster): graphs
 * that differ only there must not pass for one another. */
static CUgraph fork_join_attr(int which)
{
    CUgraph g = fork_join(1.5f);
    CUgraphNode nodes[16];
    size_t nn = 16;
    CHECK(cuGraphGetNodes(g, nodes, &nn));
    CUkernelNodeAttrValue v;
    memset(&v, 0, sizeof v);
    if (which == 1) {
        v.priority = -1;
        CHECK(cuGraphKernelNodeSetAttribute(nodes[0], CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
    } else if (which == 2) {
        v.cooperative = 1;
        CHECK(cuGraphKernelNodeSetAttribute(nodes[0], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v));
    } else if (which == 3) {
        v.clusterDim.x = 2, v.clusterDim.y = 1, v.clusterDim.z = 1;
        CHECK(cuGraphKernelNodeSetAttribute(nodes[0], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v));
    }
    /* what was set reads back through the shim as set (it neither drops
     * nor alters an attribute on its way to the driver) */
    CUkernelNodeAttrValue r;
    CHECK(cuGraphKernelNodeGetAttribute(nodes[0], CU_LAUNCH_ATTRIBUTE_PRIORITY, &r));
    EXPECT(r.priority == (which == 1 ? -1 : 0));
    CHECK(cuGraphKernelNodeGetAttribute(nodes[0], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &r));
    EXPECT(r.cooperative == (which == 2));
    CHECK(cuGraphKernelNodeGetAttribute(nodes[0], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &r));
    EXPECT(r.clusterDim.x == (which == 3 ? 2u : 0u));
    return g;
}

/* A graph whose calls match an earlier one but which changed after its
 * capture ends (changed_after): the first kernel's scale set to 9. */
static CUgraph fork_join_changed(void)
{
    CUgraph g = fork_join(1.5f);
    CUgraphNode nodes[16];
    size_t nn = 16;
    CHECK(cuGraphGetNodes(g, nodes, &nn));
    CUDA_KERNEL_NODE_PARAMS p;
    CHECK(cuGraphKernelNodeGetParams_v2(nodes[0], &p));
    float m = 9.0f;
    void *args[5];
    for (int i = 0; i < 5; i++) args[i] = p.kernelParams[i];
    args[2] = &m;
    p.kernelParams = args;
    CHECK(cuGraphKernelNodeSetParams_v2(nodes[0], &p));
    /* the new scale reads back through the shim as set, the rest as captured */
    CUDA_KERNEL_NODE_PARAMS q;
    CHECK(cuGraphKernelNodeGetParams_v2(nodes[0], &q));
    float got, add;
    memcpy(&got, q.kernelParams[2], sizeof got);
    memcpy(&add, q.kernelParams[3], sizeof add);
    EXPECT(got == 9.0f && add == 0.25f);
    return g;
}

/* bench_recapture's step on the fake driver (for profiling the shim's
 * cost per re-capture; capture_cpu.sh checks its summary): three kernels
 * on two streams with an event fork and join, scalars from c. */
static CUgraph bench_step(unsigned c)
{
    CUgraph g = NULL;
    float m = (float)(2 * c + 1), add = (float)c, mix = (float)(c * 0x9E3779B9u);
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, m, add);
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, mix, 0.0f);
    CHECK(cuEventRecord(E[1], S[1]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    void *cb[] = {&out, &a, &b, &n};
    launch(k_combine, S[0], cb);
    CHECK(cuStreamEndCapture(S[0], &g));
    /* the capture holds the three kernels, joined: a -> b -> combine and
     * a -> combine */
    CUgraphNode nodes[8];
    size_t nn = 8, ne = 0;
    CHECK(cuGraphGetNodes(g, nodes, &nn));
    CHECK(cuGraphGetEdges_v2(g, NULL, NULL, NULL, &ne));
    EXPECT(nn == 3 && ne == 3);
    return g;
}

/* bench_capture's shape on the fake driver (capture_cpu.sh checks its
 * summary; also for profiling the shim's per-node cost): `nodes` kernels round-robin over four streams, each
 * stream feeding the next through an event every 16 nodes, joined into the
 * origin. */
static CUgraph wide(long nodes)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int i = 1; i < 4; i++) {
        CHECK(cuEventRecord(E[0], S[0]));
        CHECK(cuStreamWaitEvent(S[i], E[0], 0));
    }
    for (long k = 0; k < nodes; k++) {
        int si = (int)(k % 4);
        void *sq[] = {&b, &n};
        launch(k_square, S[si], sq);
        if (k % 16 == 15) {
            CHECK(cuEventRecord(E[si], S[si]));
            CHECK(cuStreamWaitEvent(S[(si + 1) % 4], E[si], 0));
        }
    }
    for (int i = 1; i < 4; i++) {
        CHECK(cuEventRecord(E[i], S[i]));
        CHECK(cuStreamWaitEvent(S[0], E[i], 0));
    }
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

/* ---- edgeless and node-by-node graphs ---- */

static CUgraph single(void)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    axpb(S[0], &a, &x, 2.0f, 1.0f);
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

static CUDA_KERNEL_NODE_PARAMS kparams(CUfunction f, void **args)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = 4096, p.gridDimY = 1, p.gridDimZ = 1;
    p.blockDimX = 256, p.blockDimY = 1, p.blockDimZ = 1;
    p.kernelParams = args;
    return p;
}

static CUgraphNode add_axpb(CUgraph g, const CUgraphNode *deps, size_t nd, CUdeviceptr *y,
                            CUdeviceptr *in, float m, float add)
{
    void *args[] = {y, in, &m, &add, &n};
    CUDA_KERNEL_NODE_PARAMS p = kparams(k_axpb, args);
    CUgraphNode node;
    CHECK(cuGraphAddKernelNode_v2(&node, g, deps, nd, &p));
    return node;
}

static CUgraph independent(void)
{
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    add_axpb(g, NULL, 0, &a, &x, 2.0f, 1.0f);
    add_axpb(g, NULL, 0, &b, &x, 3.0f, 1.0f);
    return g;
}

/* 21 independent nodes and a join with 20 of them as dependencies: the
 * first 19 and then r19 or r20 (variant 0 or 1). The two variants have the
 * same nodes, arguments and edge count; they differ only in one dependency
 * of a node with more dependencies than the digest asks for at once. */
static CUgraph fanin(int variant)
{
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUgraphNode r[21], deps[20];
    for (int i = 0; i < 21; i++) r[i] = add_axpb(g, NULL, 0, &a, &x, 2.0f, 1.0f);
    for (int i = 0; i < 19; i++) deps[i] = r[i];
    deps[19] = r[19 + variant];
    add_axpb(g, deps, 20, &b, &a, 3.0f, 1.0f);
    return g;
}

static CUgraph one_empty(void)
{
    CUgraph g;
    CUgraphNode e;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddEmptyNode(&e, g, NULL, 0));
    return g;
}

static CUgraphNode add_memset(CUgraph g, const CUgraphNode *deps, size_t nd, CUdeviceptr dst)
{
    CUDA_MEMSET_NODE_PARAMS p = {dst, 0, 7, 4, n, 1};
    CUgraphNode node;
    CHECK(cuGraphAddMemsetNode(&node, g, deps, nd, &p, NULL));
    return node;
}

/* XLA's way: a memset, then a capture into the same graph (a library call)
 * that depends on it and forks, then an explicit kernel after the capture. */
static CUgraph to_graph(void)
{
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUgraphNode ms = add_memset(g, NULL, 0, x);
    CHECK(cuStreamBeginCaptureToGraph(S[0], g, &ms, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &a, &x, 1.5f, 0.25f);
    CHECK(cuEventRecord(E[0], S[0]));
    CHECK(cuStreamWaitEvent(S[1], E[0], 0));
    axpb(S[1], &b, &a, -0.5f, 2.0f);
    CHECK(cuEventRecord(E[1], S[1]));
    CHECK(cuStreamWaitEvent(S[0], E[1], 0));
    void *cb[] = {&out, &a, &b, &n};
    launch(k_combine, S[0], cb);
    CUstreamCaptureStatus st;
    cuuint64_t id;
    const CUgraphNode *last;
    const CUgraphEdgeData *ed;
    size_t nl;
    CHECK(cuStreamGetCaptureInfo_v3(S[0], &st, &id, NULL, &last, &ed, &nl));
    CUgraphNode tail = last[0];
    CUgraph same = NULL;
    CHECK(cuStreamEndCapture(S[0], &same));
    if (same != g) {
        fprintf(stderr, "capture_probe: capture into a graph returned another graph\n");
        exit(1);
    }
    add_axpb(g, &tail, 1, &c, &out, 1.0f, 1.0f);
    return g;
}

static const char to_graph_expect[] = "stream s0 kernel kernel\n"
                                      "stream s1 kernel\n"
                                      "explicit memset kernel\n"
                                      "event e0 s0:0 -> s1:0\n"
                                      "event e1 s1:0 -> s0:1\n"
                                      "control x:0 -> s0:0\n"
                                      "control s0:1 -> x:1\n";

/* Node by node through the driver API: a diamond of a memset, two kernels
 * and a D2D copy, a child graph holding a single kernel (an edgeless
 * body), and a graph allocation freed at the end. */
static CUgraph child_body;
static CUgraph xla(void)
{
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphCreate(&child_body, 0));
    add_axpb(child_body, NULL, 0, &c, &a, 0.5f, 0.5f);
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = n * 4;
    CUgraphNode alloc;
    CHECK(cuGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    CUdeviceptr tmp = ap.dptr;
    CUgraphNode ms = add_memset(g, &alloc, 1, tmp);
    CUgraphNode k1 = add_axpb(g, &ms, 1, &a, &tmp, 2.0f, 1.0f);
    CUgraphNode k2 = add_axpb(g, &ms, 1, &b, &tmp, 3.0f, 1.0f);
    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.srcDevice = a;
    cp.dstDevice = out;
    cp.WidthInBytes = n * 4;
    cp.Height = cp.Depth = 1;
    CUgraphNode both[2] = {k1, k2}, copy, child, fr;
    CHECK(cuGraphAddMemcpyNode(&copy, g, both, 2, &cp, NULL));
    CHECK(cuGraphAddChildGraphNode(&child, g, &copy, 1, child_body));
    CHECK(cuGraphAddMemFreeNode(&fr, g, &child, 1, tmp));
    return g;
}

static const char xla_expect[] = "explicit mem_alloc memset kernel kernel memcpy child_graph "
                                 "mem_free\n"
                                 "control x:0 -> x:1\n"
                                 "control x:1 -> x:2\n"
                                 "control x:1 -> x:3\n"
                                 "control x:2 -> x:4\n"
                                 "control x:3 -> x:4\n"
                                 "control x:4 -> x:5\n"
                                 "control x:5 -> x:6\n";

/* A conditional node whose one body holds a single kernel (no edges). */
static CUgraph conditional1(void)
{
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    CHECK(cuGraphConditionalHandleCreate(&h, g, NULL, 1, 0));
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
    p.conditional.size = 1;
    CUgraphNode cond;
    CHECK(cuGraphAddNode_v2(&cond, g, NULL, NULL, 0, &p));
    add_axpb(p.conditional.phGraph_out[0], NULL, 0, &a, &x, 1.0f, 1.0f);
    return g;
}

/* A capture of nothing (torch.compile records such graphs): no node at
 * all, the origin stream in the table. */
static CUgraph nothing(void)
{
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

/* The conditional sample's shape: an init kernel, a WHILE whose body is one
 * kernel added by hand, then an IF whose body is one kernel captured into it
 * from the origin stream (cuStreamBeginCaptureToGraph on the body graph). */
static CUgraph conditional2(void)
{
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h_loop, h_if;
    CHECK(cuGraphConditionalHandleCreate(&h_loop, g, NULL, 1, 1));
    CHECK(cuGraphConditionalHandleCreate(&h_if, g, NULL, 0, 1));
    CUgraphNode init = add_axpb(g, NULL, 0, &a, &x, 1.0f, 0.0f), loop, cond;
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h_loop;
    p.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
    p.conditional.size = 1;
    CHECK(cuGraphAddNode_v2(&loop, g, &init, NULL, 1, &p));
    add_axpb(p.conditional.phGraph_out[0], NULL, 0, &a, &x, 3.0f, 1.0f);
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h_if;
    p.conditional.type = CU_GRAPH_COND_TYPE_IF;
    p.conditional.size = 1;
    CHECK(cuGraphAddNode_v2(&cond, g, &loop, NULL, 1, &p));
    CUgraph body = p.conditional.phGraph_out[0], got = NULL;
    CHECK(cuStreamBeginCaptureToGraph(S[0], body, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &out, &a, 1.0f, 2.0f);
    CHECK(cuStreamEndCapture(S[0], &got));
    return g;
}

/* An exec changed in place after instantiation (XLA's way of reusing a
 * command buffer with new buffers): k_axpb's scalar and output change, then
 * the same change again, then a node is disabled (not modelled). */
static void exec_set_params(void)
{
    CUgraph g = fork_join(1.5f);
    CUgraphExec exec;
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    CHECK(cuGraphLaunch(exec, S[0]));
    CUgraphNode nodes[8];
    size_t nn = 8;
    CHECK(cuGraphGetNodes(g, nodes, &nn));
    float m = 7.0f, add = 0.25f;
    void *args[] = {&c, &x, &m, &add, &n};
    CUDA_KERNEL_NODE_PARAMS p = kparams(k_axpb, args);
    for (int i = 0; i < 2; i++) {
        CHECK(cuGraphExecKernelNodeSetParams_v2(exec, nodes[0], &p));
        CHECK(cuGraphLaunch(exec, S[0]));
    }
    CHECK(cuGraphNodeSetEnabled(exec, nodes[1], 0));
    CHECK(cuGraphLaunch(exec, S[0]));
    CHECK(cuStreamSynchronize(S[0]));
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));
}

/* Triton's two ways of loading a cubin: by path from its cache
 * (Inductor's launcher) and from memory (Triton's own); argv names the
 * cache, laid out by capture_cpu.sh. One kernel of each in one capture. */
static CUgraph triton(const char *cache)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/AAAA/triton_poi_fused_add_0.cubin", cache);
    CUmodule m1, m2;
    CHECK(cuModuleLoad(&m1, path));
    snprintf(path, sizeof path, "%s/CCCC/triton_red_fused_sum_1.cubin", cache);
    FILE *f = fopen(path, "rb");
    static char image[1 << 20];
    size_t len = f ? fread(image, 1, sizeof image, f) : 0;
    if (f) fclose(f);
    if (!len) {
        fprintf(stderr, "capture_probe: cannot read %s\n", path);
        exit(1);
    }
    char *copy = malloc(len); /* heap memory, as Triton hands it over */
    memcpy(copy, image, len);
    CHECK(cuModuleLoadData(&m2, copy));
    free(copy);
    CUfunction f1, f2;
    CHECK(cuModuleGetFunction(&f1, m1, "triton_poi_fused_add_0"));
    CHECK(cuModuleGetFunction(&f2, m2, "triton_red_fused_sum_1"));
    CUgraph g = NULL;
    void *args[] = {&a};
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    launch(f1, S[0], args);
    launch(f2, S[0], args);
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

/* A framework's arena (XLA preallocates most of the GPU): one 8 GiB
 * allocation, three kernels on pointers into it. */
static CUgraph arena(void)
{
    CUdeviceptr base, in, mid, far;
    CHECK(cuMemAlloc_v2(&base, 8ull << 30));
    in = base + 0x200000;
    mid = base + 0x400000;
    far = base + (5ull << 30);
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    axpb(S[0], &mid, &in, 2.0f, 1.0f);
    axpb(S[0], &far, &mid, 3.0f, 1.0f);
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

/* Copies to and from the program's own host memory: a reduction result into
 * a variable on the stack (D2H), a slice into a heap block (D2H),
 * parameters from a heap block (H2D) and, with unified addressing
 * (cudaMemcpyDefault), from another stack variable. The snapshot must hold
 * their bytes: each is filled with a pattern the test knows. */
static uint8_t *host_params, *host_slice;
static CUgraph host_copy(void)
{
    static uint64_t result; /* stands for a stack variable: alive across the launch */
    static uint32_t unified_src[4];
    host_params = malloc(64);
    host_slice = malloc(256);
    memset(host_params, 0x11, 64);
    memset(host_slice, 0x22, 256);
    memset(&result, 0x33, sizeof result);
    memset(unified_src, 0x44, sizeof unified_src);
    CUgraph g = NULL;
    CHECK(cuStreamBeginCapture_v2(S[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemcpyHtoDAsync_v2(a, host_params, 64, S[0]));
    axpb(S[0], &b, &a, 2.0f, 1.0f);
    CHECK(cuMemcpyDtoHAsync_v2(&result, b, sizeof result, S[0]));
    CHECK(cuMemcpyDtoHAsync_v2(host_slice, b, 256, S[0]));
    CHECK(cuMemcpyAsync(c, (CUdeviceptr)(uintptr_t)unified_src, sizeof unified_src, S[0]));
    CHECK(cuStreamEndCapture(S[0], &g));
    return g;
}

typedef struct {
    const char *name;
    CUgraph (*make)(void);
    const char *expect; /* NULL: the scenario is checked otherwise */
} scenario_t;

static const scenario_t edgeless[] = {
    {"single", single, "stream s0 kernel\n"},
    {"independent", independent, "explicit kernel kernel\n"},
    {"one_empty", one_empty, "explicit empty\n"},
    {"to_graph", to_graph, to_graph_expect},
    {"xla", xla, xla_expect},
    {"conditional1", conditional1, "explicit conditional\n"},
    {"nothing", nothing, ""},
    {"conditional2", conditional2,
     "explicit kernel conditional conditional\ncontrol x:0 -> x:1\ncontrol x:1 -> x:2\n"},
    {"arena", arena, "stream s0 kernel kernel\n"},
    {"host_copy", host_copy, "stream s0 memcpy kernel memcpy memcpy memcpy\n"},
};
#define N_EDGELESS (sizeof edgeless / sizeof *edgeless)

static const scenario_t *find_edgeless(const char *name)
{
    for (size_t i = 0; i < N_EDGELESS; i++)
        if (strcmp(edgeless[i].name, name) == 0) return &edgeless[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: capture_probe SCENARIO [N] [--expect] (capture_probe --list "
                        "lists them)\n");
        return 2;
    }
    const char *what = argv[1];
    if (strcmp(what, "--list") == 0) {
        puts("fork_join threads mixed conditional recapture rebuffer explicit exec_set_params "
             "triton two_devices bench_changing bench_same attrs changed_after stream_reused");
        for (size_t i = 0; i < N_EDGELESS; i++)
            printf("%s%s", edgeless[i].name, i + 1 < N_EDGELESS ? " " : "\n");
        return 0;
    }
    const scenario_t *sc = find_edgeless(what);
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
        int graphs = strcmp(what, "recapture") == 0 || strcmp(what, "rebuffer") == 0 ? iters
                     : strcmp(what, "two_devices") == 0 ? 2
                                                        : 1;
        for (int i = 0; i < graphs; i++) {
            printf("graph %d\n", i);
            fputs(sc                              ? sc->expect
                  : strcmp(what, "mixed") == 0    ? mixed_expect
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
    if (sc) {
        CUgraph g = sc->make();
        CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
        CHECK(cuGraphLaunch(exec, S[0]));
        CHECK(cuStreamSynchronize(S[0]));
        CHECK(cuGraphExecDestroy(exec));
        CHECK(cuGraphDestroy(g));
    } else if (strcmp(what, "exec_set_params") == 0) {
        exec_set_params();
    } else if (strcmp(what, "two_devices") == 0) {
        /* one process, two GPUs (ncclCommInitAll's way): each graph is
         * captured and instantiated with its own device current */
        for (int d = 0; d < 2; d++) {
            CUcontext ctx;
            CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
            CHECK(cuCtxSetCurrent(ctx));
            CUgraph g = fork_join(1.5f + (float)d);
            CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            CHECK(cuGraphExecDestroy(exec));
            CHECK(cuGraphDestroy(g));
        }
    } else if (strcmp(what, "triton") == 0) {
        if (argc < 3) {
            fprintf(stderr, "capture_probe: triton CACHE_DIR\n");
            return 2;
        }
        CUgraph g = triton(argv[2]);
        CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
        CHECK(cuGraphExecDestroy(exec));
        CHECK(cuGraphDestroy(g));
    } else if (strcmp(what, "fork_join") == 0 || strcmp(what, "mixed") == 0 ||
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
        /* the scalar changes every iteration, except that every other
         * capture repeats the previous one exactly */
        for (int i = 0; i < iters; i++) update_and_launch(&exec, fork_join(1.0f + (float)(i / 2)));
        CHECK(cuGraphExecDestroy(exec));
    } else if (strcmp(what, "attrs") == 0) {
        /* none, priority, cooperative, cluster, then cluster again: five
         * graphs, four distinct */
        for (int i = 0; i < 5; i++) {
            CUgraph g = fork_join_attr(i < 4 ? i : 3);
            CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            CHECK(cuGraphExecDestroy(exec));
            CHECK(cuGraphDestroy(g));
        }
    } else if (strcmp(what, "changed_after") == 0) {
        /* the same calls four times: plain; then a kernel's parameters set
         * after the capture (a new graph); plain again (known by its
         * calls); a stream attribute set first (read back: the calls alone
         * no longer tell) */
        for (int i = 0; i < 4; i++) {
            if (i == 3) {
                CUstreamAttrValue v;
                memset(&v, 0, sizeof v);
                v.priority = -1;
                CHECK(cuStreamSetAttribute(S[0], CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
            }
            CUgraph g = i == 1 ? fork_join_changed() : fork_join(1.5f);
            CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            CHECK(cuGraphExecDestroy(exec));
            CHECK(cuGraphDestroy(g));
        }
    } else if (strcmp(what, "stream_reused") == 0) {
        /* the same calls four times, the joining stream destroyed after
         * the second: its handle then names a new stream (a new id), so
         * the third capture is not the first two's graph by its calls and
         * is read back; the fourth is the third's again */
        for (int i = 0; i < 4; i++) {
            if (i == 2) {
                /* through the shim's counting wrapper to the driver: the
                 * handle names a new stream now */
                unsigned long long before = 0, after = 0;
                CHECK(cuStreamGetId(S[1], &before));
                CHECK(cuStreamDestroy_v2(S[1]));
                CHECK(cuStreamGetId(S[1], &after));
                EXPECT(after != before);
                EXPECT(cuStreamDestroy_v2((CUstream)0x1234) == CUDA_ERROR_INVALID_HANDLE);
            }
            CUgraph g = fork_join(1.5f);
            CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            CHECK(cuGraphExecDestroy(exec));
            CHECK(cuGraphDestroy(g));
        }
    } else if (strcmp(what, "bench_changing") == 0 || strcmp(what, "bench_same") == 0) {
        /* bench_recapture's loop, N steps (default 3000): new scalars every
         * step (changing) or one graph again and again (same) */
        bool changing = what[6] == 'c';
        for (int i = 0; i < (iters > 1 ? iters : 3000); i++)
            update_and_launch(&exec, bench_step(changing ? (unsigned)i : 7u));
        CHECK(cuStreamSynchronize(S[0]));
        CHECK(cuGraphExecDestroy(exec));
    } else if (strcmp(what, "fanin") == 0) {
        /* the two fanin variants in turn, N graphs (default 4) */
        for (int i = 0; i < (iters > 1 ? iters : 4); i++) {
            CUgraph g = fanin(i % 2);
            CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            CHECK(cuGraphExecDestroy(exec));
            CHECK(cuGraphDestroy(g));
        }
    } else if (strcmp(what, "wide") == 0) {
        /* N nodes (default 1000), captured and instantiated 5 times */
        long nodes = iters > 1 ? iters : 1000;
        for (int r = 0; r < 5; r++) {
            CUgraph g = wide(nodes);
            CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
            CHECK(cuGraphExecDestroy(exec));
            CHECK(cuGraphDestroy(g));
        }
    } else if (strcmp(what, "rebuffer") == 0) {
        /* the same graph with the same scalars over two output buffers in
         * turn: graphs that differ only in a pointer argument */
        CUdeviceptr outs[2] = {out, 0};
        CHECK(cuMemAlloc_v2(&outs[1], n * 4));
        for (int i = 0; i < iters; i++) {
            out = outs[i % 2];
            update_and_launch(&exec, fork_join(2.0f));
        }
        CHECK(cuGraphExecDestroy(exec));
        out = outs[0];
        CHECK(cuMemFree_v2(outs[1]));
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
