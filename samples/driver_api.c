/* driver_api: a plain C program on the CUDA driver API alone (linked with
 * -lcuda, no cudart), so the capture shim is tested on programs that never
 * go through the runtime: primary context, a PTX module embedded at build time
 * and loaded with cuModuleLoadData, two streams forked and joined with
 * cuEventRecord/cuStreamWaitEvent, cuLaunchKernel and a cuMemsetD32Async node
 * inside cuStreamBeginCapture, then cuGraphInstantiate and cuGraphLaunch.
 * Checks the result against the CPU after every replay. */
#include <cuda.h>

#include "common.h"
#include "driver_api_kernels_ptx.h"

static const char ABOUT[] =
    "driver_api: driver API only (no cudart); kernels from embedded PTX.\n"
    "  s0: y = x*2654435761+12345; record e0\n"
    "  s1: wait e0; memset z = 0x77777777 (cuMemsetD32Async); z ^= y ^ y>>5; record e1\n"
    "  s0: w = y*3+1; wait e1; out = w + z\n"
    "Checks: the captured graph matches --expect; out equals the CPU result after\n"
    "every replay.\n";

enum { S0, S1, NSTREAMS };
enum { E_FORK, E_JOIN, NEVENTS };

#define CU_CHECK(call)                                                                             \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *name_ = NULL, *text_ = NULL;                                               \
            cuGetErrorName(r_, &name_);                                                            \
            cuGetErrorString(r_, &text_);                                                          \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,              \
                    name_ ? name_ : "?", text_ ? text_ : "?");                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The driver-API twin of cap_t in common.h. */
typedef struct {
    const char *prog;
    topo_t *topo;
    bool dry, verify;
    CUstream stream[NSTREAMS];
    CUevent event[NEVENTS];
    cuuint64_t capture_id;
    CUgraph graph;
} dcap_t;

typedef struct {
    size_t n;
    CUfunction scale, mix, combine;
    CUdeviceptr x, y, z, w, out;
} bufs_t;

static void d_begin(dcap_t *c, int sid)
{
    topo_begin(c->topo, sid);
    if (c->dry) return;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CU_CHECK(cuStreamBeginCapture(c->stream[sid], CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_CHECK(cuStreamGetCaptureInfo(c->stream[sid], &st, &c->capture_id, NULL, NULL, NULL, NULL));
}

static void d_node(dcap_t *c, int sid, const char *type)
{
    int idx = topo_node(c->topo, sid, type);
    if (c->dry) return;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    CUgraph g = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    CU_CHECK(cuStreamGetCaptureInfo(c->stream[sid], &st, &id, &g, &deps, &edges, &ndeps));
    if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || id != c->capture_id || ndeps != 1) {
        fprintf(stderr, "%s: after a %s on stream %d: capture status %d, %zu dependencies\n",
                c->prog, type, sid, (int)st, ndeps);
        exit(1);
    }
    c->topo->stream[sid].handle[idx] = (void *)deps[0];
}

static void d_launch(dcap_t *c, int sid, CUfunction f, unsigned grid, unsigned block, void **args)
{
    if (!c->dry)
        CU_CHECK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, c->stream[sid], args, NULL));
    d_node(c, sid, "kernel");
}

static void d_memset32(dcap_t *c, int sid, CUdeviceptr p, unsigned value, size_t count)
{
    if (!c->dry) CU_CHECK(cuMemsetD32Async(p, value, count, c->stream[sid]));
    d_node(c, sid, "memset");
}

static void d_record(dcap_t *c, int ev, int sid)
{
    topo_record(c->topo, ev, sid);
    if (!c->dry) CU_CHECK(cuEventRecord(c->event[ev], c->stream[sid]));
}

static void d_wait(dcap_t *c, int sid, int ev)
{
    topo_wait(c->topo, sid, ev);
    if (!c->dry) CU_CHECK(cuStreamWaitEvent(c->stream[sid], c->event[ev], 0));
}

static int drv_count_nodes(void *graph, size_t *n)
{
    CU_CHECK(cuGraphGetNodes((CUgraph)graph, NULL, n));
    return 0;
}

static int drv_node_type(void *node, const char **type)
{
    CUgraphNodeType t;
    CU_CHECK(cuGraphNodeGetType((CUgraphNode)node, &t));
    switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        *type = "kernel";
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        *type = "memcpy";
        break;
    case CU_GRAPH_NODE_TYPE_MEMSET:
        *type = "memset";
        break;
    case CU_GRAPH_NODE_TYPE_HOST:
        *type = "host";
        break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
        *type = "child_graph";
        break;
    case CU_GRAPH_NODE_TYPE_EMPTY:
        *type = "empty";
        break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        *type = "event_wait";
        break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        *type = "event_record";
        break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        *type = "mem_alloc";
        break;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        *type = "mem_free";
        break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        *type = "conditional";
        break;
    default:
        *type = "other";
        break;
    }
    return 0;
}

static int drv_node_deps(void *node, void **deps, size_t cap, size_t *n)
{
    CUgraphNode nodes[TOPO_MAX_PENDING + 2];
    CUgraphEdgeData edges[TOPO_MAX_PENDING + 2];
    size_t count = 0;
    CU_CHECK(cuGraphNodeGetDependencies((CUgraphNode)node, NULL, NULL, &count));
    if (count > cap || count > TOPO_MAX_PENDING + 2) {
        *n = count;
        return 0;
    }
    if (count == 0) { /* a second query with an empty array is an invalid value */
        *n = 0;
        return 0;
    }
    CU_CHECK(cuGraphNodeGetDependencies((CUgraphNode)node, nodes, edges, &count));
    for (size_t i = 0; i < count; i++)
        deps[i] = (void *)nodes[i];
    *n = count;
    return 0;
}

static void d_end(dcap_t *c, int sid)
{
    topo_end(c->topo);
    if (c->dry) {
        topo_print(c->topo, stdout);
        return;
    }
    CU_CHECK(cuStreamEndCapture(c->stream[sid], &c->graph));
    if (c->verify) {
        static const topo_graph_api_t api = {drv_count_nodes, drv_node_type, drv_node_deps};
        if (topo_verify(c->topo, (void *)c->graph, &api)) {
            fprintf(stderr, "%s: FAIL: captured graph differs from --expect (its view:)\n",
                    c->prog);
            topo_print(c->topo, stderr);
            exit(1);
        }
    }
}

static uint32_t op_y(uint32_t x)
{
    return x * 2654435761u + 12345u;
}

static void issue(dcap_t *c, bufs_t *b)
{
    const unsigned block = 256;
    const unsigned grid = (unsigned)((b->n + block - 1) / block);
    unsigned long long n = b->n;
    unsigned a1 = 2654435761u, b1 = 12345u, a2 = 3u, b2 = 1u;
    void *scale1[] = {&b->y, &b->x, &a1, &b1, &n};
    void *mix[] = {&b->z, &b->y, &n};
    void *scale2[] = {&b->w, &b->y, &a2, &b2, &n};
    void *combine[] = {&b->out, &b->w, &b->z, &n};

    d_begin(c, S0);
    d_launch(c, S0, b->scale, grid, block, scale1);
    d_record(c, E_FORK, S0);
    d_wait(c, S1, E_FORK);
    d_memset32(c, S1, b->z, 0x77777777u, b->n);
    d_launch(c, S1, b->mix, grid, block, mix);
    d_record(c, E_JOIN, S1);
    d_launch(c, S0, b->scale, grid, block, scale2);
    d_wait(c, S0, E_JOIN);
    d_launch(c, S0, b->combine, grid, block, combine);
    d_end(c, S0);
}

static void poison(CUdeviceptr p, size_t bytes)
{
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuMemsetD8(p, 0xA5, bytes));
    CU_CHECK(cuCtxSynchronize());
}

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    sample_parse(&o, argc, argv);
    dcap_t c;
    memset(&c, 0, sizeof c);
    c.prog = o.prog;
    c.topo = topo_create(o.prog);
    c.dry = o.expect;
    c.verify = o.topo_check;
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    if (o.expect) {
        puts(TOPO_HEADER);
        issue(&c, &b);
        free(c.topo);
        return 0;
    }

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cuCtxSetCurrent(ctx));
    CU_CHECK(cuModuleLoadData(&mod, driver_api_ptx));
    CU_CHECK(cuModuleGetFunction(&b.scale, mod, "drv_scale"));
    CU_CHECK(cuModuleGetFunction(&b.mix, mod, "drv_mix"));
    CU_CHECK(cuModuleGetFunction(&b.combine, mod, "drv_combine"));
    for (int s = 0; s < NSTREAMS; s++)
        CU_CHECK(cuStreamCreate(&c.stream[s], CU_STREAM_NON_BLOCKING));
    for (int e = 0; e < NEVENTS; e++)
        CU_CHECK(cuEventCreate(&c.event[e], CU_EVENT_DISABLE_TIMING));

    const size_t n = o.n, bytes = n * sizeof(uint32_t);
    uint32_t *hx = (uint32_t *)host_alloc(bytes), *want = (uint32_t *)host_alloc(bytes);
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    fill_u32(hx, n, 18);
    for (size_t i = 0; i < n; i++) {
        uint32_t y = op_y(hx[i]);
        uint32_t z = 0x77777777u ^ y ^ (y >> 5);
        want[i] = (y * 3u + 1u) + z;
    }
    CUdeviceptr *dptrs[] = {&b.x, &b.y, &b.z, &b.w, &b.out};
    for (size_t k = 0; k < 5; k++)
        CU_CHECK(cuMemAlloc(dptrs[k], bytes));
    CU_CHECK(cuMemcpyHtoD(b.x, hx, bytes));
    CU_CHECK(cuCtxSynchronize());

    issue(&c, &b);
    CUgraphExec exec;
    CU_CHECK(cuGraphInstantiate(&exec, c.graph, 0));
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        for (size_t k = 1; k < 5; k++)
            poison(*dptrs[k], bytes);
        CU_CHECK(cuGraphLaunch(exec, c.stream[S0]));
        CU_CHECK(cuStreamSynchronize(c.stream[S0]));
        CU_CHECK(cuMemcpyDtoH(got, b.out, bytes));
        bad = check_u32(o.prog, "out", got, want, n);
    }
    CU_CHECK(cuGraphExecDestroy(exec));
    CU_CHECK(cuGraphDestroy(c.graph));
    for (size_t k = 0; k < 5; k++)
        CU_CHECK(cuMemFree(*dptrs[k]));
    for (int s = 0; s < NSTREAMS; s++)
        CU_CHECK(cuStreamDestroy(c.stream[s]));
    for (int e = 0; e < NEVENTS; e++)
        CU_CHECK(cuEventDestroy(c.event[e]));
    CU_CHECK(cuModuleUnload(mod));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    free(c.topo);
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
