/* fake_graph_cuda.c: a fake libcuda.so.1 with enough stream-capture and
 * graph semantics to run libsgcap's capture side end to end on a machine
 * without a GPU: streams join captures through captured events, every
 * enqueue makes a node depending on the stream's current set, the graph
 * can be listed and its nodes read back, modules hold functions whose
 * parameter layout comes from their mangled names. Not a driver: one
 * context, handles are plain pointers, single-threaded use. Used by
 * tests/capture/capture_cpu.sh (no execution: copies to the host fill
 * 0x5a) and, with FAKE_CUDA_EXECUTE=1, by tests/optimize/optimize_cpu.sh:
 * then device memory is host memory at the same addresses, work outside a
 * capture runs when it is enqueued, and a launched graph runs its nodes in
 * the order they were added, kernels through tests/gpu/replay/emulate.h
 * (found by the name inside the mangled one; others do nothing). An
 * executable graph is a copy of its graph's nodes, so exec updates change
 * it alone; cuGraphExecUpdate checks the topology, as the driver does.
 * fake_cuda_live_execs() counts the executable graphs that exist. */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cupti_driver_cbid.h>
#include <dlfcn.h>
#include <generated_cuda_meta.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../gpu/replay/emulate.h"

#define EXPORT __attribute__((visibility("default")))
#define MAXN 64
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

typedef struct fnode fnode_t;
typedef struct fgraph {
    fnode_t **nodes;
    size_t n, cap;
} fgraph_t;

typedef struct ffunc {
    char name[128];
    void *module;
    int n_params;
    size_t off[16], size[16];
    /* a fused kernel of the optimizer (FAKE_CUDA_FUSED): parameter i is
     * stage i's parameter blob, run as that stage's emulated kernel */
    int n_stages;
    const emu_kernel_t *stages[16];
} ffunc_t;

struct fnode {
    CUgraphNodeType type;
    fgraph_t *owner;
    fnode_t *deps[MAXN];
    size_t n_deps;
    /* payloads */
    ffunc_t *func;
    unsigned grid[3], block[3], shmem;
    void *param_ptr[16];
    unsigned char param_bytes[256];
    CUDA_MEMSET_NODE_PARAMS memset;
    CUDA_MEMCPY3D memcpy;
    CUdeviceptr dptr;
    size_t bytes;
    CUhostFn host_fn;
    void *host_data;
    CUevent event;
    CUgraph bodies[4]; /* conditional */
    CUgraph child;     /* child graph node: its own copy of the body */
    int disabled;      /* in an executable graph: cuGraphNodeSetEnabled(0) */
    /* kernel node attributes (cuGraphKernelNodeSetAttribute) */
    int priority, cooperative;
    unsigned cluster[3];
};

/* An executable graph: a copy of the graph's nodes when it was made. */
typedef struct {
    fnode_t *nodes; /* copies */
    fnode_t **orig; /* the graph's node each copy came from */
    int (*deps)[MAXN]; /* dependencies as indices */
    size_t n;
} fexec_t;
static int live_execs;

typedef struct {
    CUstream handle;
    int capturing;
    cuuint64_t id;
    fgraph_t *graph;
    fnode_t *deps[MAXN];
    size_t n;
} fstream_t;

typedef struct {
    CUevent handle;
    cuuint64_t id;
    fnode_t *deps[MAXN];
    size_t n;
} fevent_t;

static fstream_t streams[64];
static fevent_t events[64];
static cuuint64_t next_capture = 1;
static CUdeviceptr next_addr = 0x7f0000000000ull;
static CUgraphEdgeData zero_edges[MAXN];
static _Thread_local CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static fstream_t *stream_of(CUstream s)
{
    for (int i = 0; i < 64; i++)
        if (streams[i].handle == s) return &streams[i];
    for (int i = 0; i < 64; i++)
        if (!streams[i].handle) {
            streams[i].handle = s;
            return &streams[i];
        }
    abort();
}

static fevent_t *event_of(CUevent e)
{
    for (int i = 0; i < 64; i++)
        if (events[i].handle == e) return &events[i];
    for (int i = 0; i < 64; i++)
        if (!events[i].handle) {
            events[i].handle = e;
            return &events[i];
        }
    abort();
}

static fnode_t *graph_add(fgraph_t *g, CUgraphNodeType type, fnode_t *const *deps, size_t n)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->nodes = realloc(g->nodes, g->cap * sizeof *g->nodes);
    }
    fnode_t *nd = calloc(1, sizeof *nd);
    nd->type = type;
    nd->owner = g;
    for (size_t i = 0; i < n && i < MAXN; i++)
        nd->deps[nd->n_deps++] = deps[i];
    g->nodes[g->n++] = nd;
    return nd;
}

/* The node an enqueue on s makes, or NULL when s is not capturing. */
static fnode_t *enqueue(CUstream s, CUgraphNodeType type)
{
    fstream_t *st = stream_of(s);
    if (!st->capturing) return NULL;
    fnode_t *nd = graph_add(st->graph, type, st->deps, st->n);
    st->deps[0] = nd;
    st->n = 1;
    return nd;
}

/* ---- execution (FAKE_CUDA_EXECUTE=1) ---- */
/* Far below where the loader puts libraries (0x7f..., randomized): the
 * addresses handed out start here when executing. */
#define ARENA_BASE 0x200000000000ull
#define ARENA_SIZE (64ull << 30)

static int executing(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("FAKE_CUDA_EXECUTE");
        on = e && *e && strcmp(e, "0") != 0;
        /* device memory: host memory at the addresses handed out */
        if (on && mmap((void *)(uintptr_t)ARENA_BASE, ARENA_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1,
                       0) != (void *)(uintptr_t)ARENA_BASE) {
            fprintf(stderr, "fake libcuda: cannot map device memory at %#llx\n", ARENA_BASE);
            abort();
        }
        if (on) next_addr = ARENA_BASE;
    }
    return on;
}

/* "_Z6k_axpbPfPKfffm" -> the emulated k_axpb */
static const emu_kernel_t *emulated(const ffunc_t *f)
{
    if (!f) return NULL;
    const char *p = f->name;
    if (strncmp(p, "_Z", 2) != 0) return emu_find(p);
    p += 2;
    int len = 0;
    while (*p >= '0' && *p <= '9')
        len = len * 10 + (*p++ - '0');
    char name[128];
    if (len <= 0 || len >= (int)sizeof name) return NULL;
    memcpy(name, p, (size_t)len);
    name[len] = '\0';
    return emu_find(name);
}

static void run_memcpy(const CUDA_MEMCPY3D *m)
{
    uintptr_t dst = m->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)m->dstHost
                                                           : (uintptr_t)m->dstDevice;
    uintptr_t src = m->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)m->srcHost
                                                           : (uintptr_t)m->srcDevice;
    size_t h = m->Height ? m->Height : 1, d = m->Depth ? m->Depth : 1;
    size_t dp = m->dstPitch ? m->dstPitch : m->WidthInBytes;
    size_t sp = m->srcPitch ? m->srcPitch : m->WidthInBytes;
    size_t dh = m->dstHeight ? m->dstHeight : h, sh = m->srcHeight ? m->srcHeight : h;
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            memmove((void *)(dst + (z * dh + y) * dp), (const void *)(src + (z * sh + y) * sp),
                    m->WidthInBytes);
}

static void run_memset(const CUDA_MEMSET_NODE_PARAMS *m)
{
    size_t pitch = m->pitch ? m->pitch : m->width * m->elementSize;
    for (size_t r = 0; r < (m->height ? m->height : 1); r++) {
        uint8_t *row = (uint8_t *)(uintptr_t)(m->dst + r * pitch);
        for (size_t x = 0; x < m->width; x++)
            memcpy(row + x * m->elementSize, &m->value, m->elementSize);
    }
}

static void run_node(const fnode_t *nd)
{
    if (nd->disabled) return;
    switch (nd->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        const emu_kernel_t *k = emulated(nd->func);
        if (k) k->run(nd->param_bytes);
        for (int i = 0; !k && nd->func && i < nd->func->n_stages; i++)
            nd->func->stages[i]->run(nd->param_bytes + nd->func->off[i]);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET:
        run_memset(&nd->memset);
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        run_memcpy(&nd->memcpy);
        break;
    case CU_GRAPH_NODE_TYPE_HOST:
        nd->host_fn(nd->host_data);
        break;
    default:
        break;
    }
}

EXPORT int fake_cuda_live_execs(void)
{
    return live_execs;
}

/* ---- init, versions, modes ---- */
EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    static int injected;
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (inj && *inj && !injected) {
        injected = 1;
        void *h = dlopen(inj, RTLD_NOW | RTLD_LOCAL);
        int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
        if (init) init();
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CUstreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}
/* Devices: FAKE_CUDA_DEVICES of them (default 1), each with a primary
 * context whose handle is 0x1000 + its ordinal; the current one is the
 * device cuCtxGetDevice reports (a program driving several GPUs switches). */
static int current_device;
static int fake_devices(void)
{
    const char *v = getenv("FAKE_CUDA_DEVICES");
    int n = v && *v ? atoi(v) : 1;
    return n > 0 ? n : 1;
}
EXPORT CUresult cuDeviceGetCount(int *n)
{
    *n = fake_devices();
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
    if (d < 0 || d >= fake_devices()) return CUDA_ERROR_INVALID_DEVICE;
    *ctx = (CUcontext)(uintptr_t)(0x1000 + d);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    int d = (int)((uintptr_t)ctx - 0x1000);
    if (d < 0 || d >= fake_devices()) return CUDA_ERROR_INVALID_CONTEXT;
    current_device = d;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    *d = current_device;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "Fake GPU");
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
         : a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT   ? 132
                                                           : 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = (CUcontext)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "FAKE_ERROR_%d", (int)r);
    *s = buf;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f, (void)a, (void)v;
    return CUDA_SUCCESS;
}

/* ---- events (times from the host's clock) ---- */
static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
typedef struct {
    double ms;
} ftime_t;
static CUevent created[256]; /* events of cuEventCreate (programs may use any value) */
static ftime_t *timed(CUevent e)
{
    for (int i = 0; e && i < 256; i++)
        if (created[i] == e) return (ftime_t *)e;
    return NULL;
}
EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void)flags;
    for (int i = 0; i < 256; i++)
        if (!created[i]) {
            *e = created[i] = (CUevent)calloc(1, sizeof(ftime_t));
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    for (int i = 0; e && i < 256; i++)
        if (created[i] == e) created[i] = NULL;
    free(e);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventSynchronize(CUevent e)
{
    (void)e;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    if (!timed(a) || !timed(b)) return CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)(timed(b)->ms - timed(a)->ms);
    return CUDA_SUCCESS;
}

/* ---- streams and capture ---- */
/* The probe's streams are fixed handles that live for the process; a
 * destroy makes the next stream at that handle a new one, with a new id
 * (as the driver may hand a destroyed stream's address to a new stream). */
static unsigned stream_incarnation[64];
static unsigned *incarnation_of(CUstream s)
{
    return &stream_incarnation[((uintptr_t)s >> 8) & 63];
}
EXPORT CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    *id = (unsigned long long)(uintptr_t)s | (unsigned long long)*incarnation_of(s) << 40;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    uintptr_t h = (uintptr_t)s; /* only the probe's streams: 0x3000, 0x3100, ... */
    if (h < 0x3000 || h > 0x3f00 || (h & 0xff)) return CUDA_ERROR_INVALID_HANDLE;
    (*incarnation_of(s))++;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *f)
{
    (void)s;
    *f = 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetPriority(CUstream s, int *p)
{
    (void)s;
    *p = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize(void)
{
    return CUDA_SUCCESS;
}
static CUresult cuStreamSynchronize_impl(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

static CUresult begin(CUstream s, fgraph_t *g, const CUgraphNode *deps, size_t n)
{
    fstream_t *st = stream_of(s);
    if (st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    st->capturing = 1;
    st->id = next_capture++;
    st->graph = g ? g : calloc(1, sizeof *g);
    st->n = 0;
    for (size_t i = 0; i < n && i < MAXN; i++)
        st->deps[st->n++] = (fnode_t *)deps[i];
    return CUDA_SUCCESS;
}
static CUresult cuStreamBeginCapture_v2_impl(CUstream s, CUstreamCaptureMode mode)
{
    (void)mode;
    return begin(s, NULL, NULL, 0);
}
EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                            const CUgraphEdgeData *ed, size_t n,
                                            CUstreamCaptureMode mode)
{
    (void)ed;
    (void)mode;
    return begin(s, (fgraph_t *)g, deps, n);
}
static CUresult cuStreamEndCapture_impl(CUstream s, CUgraph *g)
{
    fstream_t *st = stream_of(s);
    if (!st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    *g = (CUgraph)st->graph;
    cuuint64_t id = st->id;
    for (int i = 0; i < 64; i++)
        if (streams[i].capturing && streams[i].id == id) {
            streams[i].capturing = 0;
            streams[i].n = 0;
        }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st_out, cuuint64_t *id,
                                          CUgraph *g, const CUgraphNode **deps,
                                          const CUgraphEdgeData **ed, size_t *n)
{
    fstream_t *st = stream_of(s);
    *st_out = st->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id) *id = st->capturing ? st->id : 0;
    if (g) *g = st->capturing ? (CUgraph)st->graph : NULL;
    if (deps) *deps = (const CUgraphNode *)st->deps;
    if (ed) *ed = zero_edges;
    if (n) *n = st->capturing ? st->n : 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamUpdateCaptureDependencies_v2(CUstream s, CUgraphNode *deps,
                                                     const CUgraphEdgeData *ed, size_t n,
                                                     unsigned int flags)
{
    (void)ed;
    fstream_t *st = stream_of(s);
    if (!st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) st->n = 0;
    for (size_t i = 0; i < n && st->n < MAXN; i++)
        st->deps[st->n++] = (fnode_t *)deps[i];
    return CUDA_SUCCESS;
}
static CUresult cuEventRecord_impl(CUevent e, CUstream s)
{
    fstream_t *st = stream_of(s);
    fevent_t *ev = event_of(e);
    ev->id = st->capturing ? st->id : 0;
    memcpy(ev->deps, st->deps, sizeof st->deps);
    ev->n = st->capturing ? st->n : 0;
    if (!st->capturing && timed(e)) timed(e)->ms = clock_ms();
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
    if (flags & CU_EVENT_RECORD_EXTERNAL) {
        fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
        if (!nd) return CUDA_ERROR_ILLEGAL_STATE;
        nd->event = e;
        return CUDA_SUCCESS;
    }
    return cuEventRecord_impl(e, s);
}
static CUresult cuStreamWaitEvent_impl(CUstream s, CUevent e, unsigned int flags)
{
    fstream_t *st = stream_of(s);
    fevent_t *ev = event_of(e);
    if (flags & CU_EVENT_WAIT_EXTERNAL) {
        fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
        if (!nd) return CUDA_ERROR_ILLEGAL_STATE;
        nd->event = e;
        return CUDA_SUCCESS;
    }
    if (!ev->id) return CUDA_SUCCESS; /* outside any capture: a plain wait */
    if (!st->capturing) {             /* joins the event's capture */
        fstream_t *origin = NULL;
        for (int i = 0; i < 64; i++)
            if (streams[i].capturing && streams[i].id == ev->id) origin = &streams[i];
        if (!origin) return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
        st->capturing = 1;
        st->id = ev->id;
        st->graph = origin->graph;
        st->n = 0;
    }
    for (size_t i = 0; i < ev->n; i++) {
        int have = 0;
        for (size_t j = 0; j < st->n; j++)
            have |= st->deps[j] == ev->deps[i];
        if (!have && st->n < MAXN) st->deps[st->n++] = ev->deps[i];
    }
    return CUDA_SUCCESS;
}

/* ---- modules and functions ---- */
static CUresult cuModuleLoadData_impl(CUmodule *m, const void *image)
{
    *m = (CUmodule)(uintptr_t)(0x5000 + ((uintptr_t)image & 0xfff0));
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoad(CUmodule *m, const char *path)
{
    static uintptr_t next = 0x9000;
    (void)path;
    *m = (CUmodule)(next += 0x10);
    return CUDA_SUCCESS;
}

/* Parameter layout from an Itanium-mangled name of simple types. */
static void layout(ffunc_t *f)
{
    const char *p = f->name;
    if (strncmp(p, "_Z", 2) != 0) return;
    p += 2;
    int len = 0;
    while (*p >= '0' && *p <= '9')
        len = len * 10 + (*p++ - '0');
    p += len;
    size_t off = 0;
    while (*p && f->n_params < 16) {
        size_t size = 8;
        if (*p == 'P') {
            while (*p == 'P' || *p == 'K')
                p++;
            p++;
        } else if (*p == 'S') { /* a substitution (S_, S0_, ...): a repeated pointer type */
            while (*p && *p != '_')
                p++;
            if (*p) p++;
        } else {
            size = (*p == 'f' || *p == 'i' || *p == 'j') ? 4 : 8;
            p++;
        }
        off = (off + size - 1) / size * size;
        f->off[f->n_params] = off;
        f->size[f->n_params] = size;
        f->n_params++;
        off += size;
    }
}

EXPORT CUresult cuModuleGetFunction(CUfunction *fn, CUmodule m, const char *name)
{
    ffunc_t *f = calloc(1, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->module = m;
    layout(f);
    *fn = (CUfunction)f;
    return CUDA_SUCCESS;
}
/* NVRTC (the optimizer's fusion compiles in the app) opens libcuda.so.1
 * itself and, if it has cuInit, asks for export tables: this driver has none. */
EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    (void)id;
    if (table) *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* Libraries hold the optimizer's fused kernels (a cubin NVRTC made: the
 * fake cannot run it). FAKE_CUDA_FUSED=NAME,NAME,... names the stages, in
 * order, of every kernel got from a library that is not emulated itself:
 * its parameters are the stages' parameter blobs, each 16-aligned and
 * rounded up to 16 bytes (rewrite/fuse_gen.c's sgq_p<s>_t), and a launch
 * runs the stages' emulations one after the other: what the fused kernel
 * computes when every stage's stores are kept. */
static void fused_layout(ffunc_t *f)
{
    const char *list = getenv("FAKE_CUDA_FUSED");
    if (!list || !*list || f->n_params || emulated(f)) return;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    size_t off = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && f->n_stages < 16;
         t = strtok_r(NULL, ",", &save)) {
        ffunc_t st;
        memset(&st, 0, sizeof st);
        snprintf(st.name, sizeof st.name, "%s", t);
        layout(&st);
        const emu_kernel_t *k = emulated(&st);
        if (!k) {
            fprintf(stderr, "fake libcuda: FAKE_CUDA_FUSED stage %s is not emulated\n", t);
            abort();
        }
        size_t size = st.n_params ? st.off[st.n_params - 1] + st.size[st.n_params - 1] : 0;
        size = size ? (size + 15) / 16 * 16 : 16;
        off = (off + 15) / 16 * 16;
        f->stages[f->n_stages] = k;
        f->off[f->n_stages] = off, f->size[f->n_stages] = size;
        f->n_stages++;
        off += size;
    }
    f->n_params = f->n_stages;
}
EXPORT CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                                  unsigned nj, CUlibraryOption *lo, void **lv, unsigned nl)
{
    static uintptr_t next = 0xA000;
    (void)code, (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    *lib = (CUlibrary)(next += 0x10);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    ffunc_t *f = calloc(1, sizeof *f);
    if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->module = lib;
    layout(f);
    fused_layout(f);
    *k = (CUkernel)f;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuKernelGetFunction(CUfunction *fn, CUkernel k)
{
    *fn = (CUfunction)k; /* one context */
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetName(const char **name, CUfunction fn)
{
    *name = ((ffunc_t *)fn)->name;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetModule(CUmodule *m, CUfunction fn)
{
    *m = (CUmodule)((ffunc_t *)fn)->module;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetParamInfo(CUfunction fn, size_t i, size_t *off, size_t *size)
{
    ffunc_t *f = (ffunc_t *)fn;
    if ((int)i >= f->n_params) return CUDA_ERROR_INVALID_VALUE;
    *off = f->off[i];
    *size = f->size[i];
    return CUDA_SUCCESS;
}

/* ---- enqueues ---- */
static CUresult cuLaunchKernel_impl(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                               void **extra)
{
    (void)extra;
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_KERNEL);
    fnode_t eager;
    if (!nd) { /* not capturing: runs now (FAKE_CUDA_EXECUTE) */
        if (!executing()) return CUDA_SUCCESS;
        memset(&eager, 0, sizeof eager);
        nd = &eager;
    }
    ffunc_t *f = (ffunc_t *)fn;
    nd->func = f;
    nd->grid[0] = gx, nd->grid[1] = gy, nd->grid[2] = gz;
    nd->block[0] = bx, nd->block[1] = by, nd->block[2] = bz;
    nd->shmem = shmem;
    for (int i = 0; i < f->n_params; i++) {
        memcpy(nd->param_bytes + f->off[i], params[i], f->size[i]);
        nd->param_ptr[i] = nd->param_bytes + f->off[i];
    }
    if (nd == &eager) run_node(nd);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_MEMSET);
    CUDA_MEMSET_NODE_PARAMS m = {d, 0, v, 4, n, 1};
    if (nd)
        nd->memset = m;
    else if (executing())
        run_memset(&m);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (nd) {
        memset(&nd->memcpy, 0, sizeof nd->memcpy);
        nd->memcpy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
        nd->memcpy.srcDevice = src;
        nd->memcpy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
        nd->memcpy.dstDevice = dst;
        nd->memcpy.WidthInBytes = n;
        nd->memcpy.Height = 1;
        nd->memcpy.Depth = 1;
    } else if (executing()) {
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    }
    return CUDA_SUCCESS;
}
static void copy_node(CUstream s, CUmemorytype dt, void *dh, CUdeviceptr dd, CUmemorytype st,
                      const void *sh, CUdeviceptr sd, size_t n)
{
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_MEMCPY);
    fnode_t eager;
    if (!nd) {
        if (!executing()) return;
        nd = &eager;
    }
    memset(&nd->memcpy, 0, sizeof nd->memcpy);
    nd->memcpy.dstMemoryType = dt;
    nd->memcpy.dstHost = dh;
    nd->memcpy.dstDevice = dd;
    nd->memcpy.srcMemoryType = st;
    nd->memcpy.srcHost = sh;
    nd->memcpy.srcDevice = sd;
    nd->memcpy.WidthInBytes = n;
    nd->memcpy.Height = 1;
    nd->memcpy.Depth = 1;
    if (nd == &eager) run_memcpy(&nd->memcpy);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    copy_node(s, CU_MEMORYTYPE_HOST, dst, 0, CU_MEMORYTYPE_DEVICE, NULL, src, n);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    copy_node(s, CU_MEMORYTYPE_DEVICE, NULL, dst, CU_MEMORYTYPE_HOST, src, 0, n);
    return CUDA_SUCCESS;
}
/* Like the driver: no CUDA memory at all is an invalid value. */
EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    if (a != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_NOT_SUPPORTED;
    if (p < (executing() ? ARENA_BASE : 0x7f0000000000ull) || p >= next_addr)
        return CUDA_ERROR_INVALID_VALUE;
    *(CUmemorytype *)data = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_HOST);
    if (nd) {
        nd->host_fn = fn;
        nd->host_data = data;
    } else {
        fn(data);
    }
    return CUDA_SUCCESS;
}
static CUresult cuMemAlloc_v2_impl(CUdeviceptr *p, size_t n)
{
    if (executing() && next_addr + n > ARENA_BASE + ARENA_SIZE) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = next_addr;
    next_addr += (n + 0xfffff) & ~(CUdeviceptr)0xfffff;
    return CUDA_SUCCESS;
}
static CUresult cuMemFree_v2_impl(CUdeviceptr p)
{
    (void)p;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
    cuMemAlloc_v2_impl(p, n);
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (nd) {
        nd->dptr = *p;
        nd->bytes = n;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    fnode_t *nd = enqueue(s, CU_GRAPH_NODE_TYPE_MEM_FREE);
    if (nd) nd->dptr = p;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    if (executing())
        memcpy(dst, (const void *)(uintptr_t)src, n);
    else
        memset(dst, 0x5a, n);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    if (executing()) memcpy((void *)(uintptr_t)dst, src, n);
    return CUDA_SUCCESS;
}

/* ---- graphs ---- */
EXPORT CUresult cuGraphCreate(CUgraph *g, unsigned int flags)
{
    (void)flags;
    *g = (CUgraph)calloc(1, sizeof(fgraph_t));
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n)
{
    *out =
        (CUgraphNode)graph_add((fgraph_t *)g, CU_GRAPH_NODE_TYPE_EMPTY, (fnode_t *const *)deps, n);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *h, CUgraph g,
                                               CUcontext ctx, unsigned int def, unsigned int flags)
{
    static CUgraphConditionalHandle next = 0x70;
    (void)g, (void)ctx, (void)def, (void)flags;
    *h = next++;
    return CUDA_SUCCESS;
}
static void kernel_payload(fnode_t *nd, const CUDA_KERNEL_NODE_PARAMS *p)
{
    ffunc_t *f = (ffunc_t *)p->func;
    nd->func = f;
    nd->grid[0] = p->gridDimX, nd->grid[1] = p->gridDimY, nd->grid[2] = p->gridDimZ;
    nd->block[0] = p->blockDimX, nd->block[1] = p->blockDimY, nd->block[2] = p->blockDimZ;
    nd->shmem = p->sharedMemBytes;
    for (int i = 0; f && i < f->n_params; i++) {
        memcpy(nd->param_bytes + f->off[i], p->kernelParams[i], f->size[i]);
        nd->param_ptr[i] = nd->param_bytes + f->off[i];
    }
}
/* A kernel node's parameters set after capture (the shim must read such a
 * graph back, whatever calls captured it). */
EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    fnode_t *nd = (fnode_t *)n;
    if (!nd || !p || nd->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    kernel_payload(nd, p);
    return CUDA_SUCCESS;
}
/* Stream attributes are accepted and forgotten: captured kernels of this
 * driver do not inherit them (a real one does). */
EXPORT CUresult cuStreamSetAttribute(CUstream s, CUstreamAttrID id, const CUstreamAttrValue *v)
{
    (void)s, (void)id;
    return v ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                  const CUgraphEdgeData *ed, size_t n, CUgraphNodeParams *p)
{
    (void)ed;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        if (p->conditional.size > 4) return CUDA_ERROR_NOT_SUPPORTED;
        break;
    case CU_GRAPH_NODE_TYPE_KERNEL:
    case CU_GRAPH_NODE_TYPE_MEMSET:
    case CU_GRAPH_NODE_TYPE_MEMCPY:
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
    case CU_GRAPH_NODE_TYPE_HOST:
        break;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    fnode_t *nd = graph_add((fgraph_t *)g, p->type, (fnode_t *const *)deps, n);
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        for (unsigned i = 0; i < p->conditional.size; i++)
            nd->bodies[i] = (CUgraph)calloc(1, sizeof(fgraph_t));
        p->conditional.phGraph_out = nd->bodies;
        break;
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS k;
        memcpy(&k, &p->kernel, sizeof k);
        kernel_payload(nd, &k);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET:
        nd->memset = (CUDA_MEMSET_NODE_PARAMS){p->memset.dst,         p->memset.pitch,
                                               p->memset.value,       p->memset.elementSize,
                                               p->memset.width,       p->memset.height};
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        nd->memcpy = p->memcpy.copyParams;
        break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        nd->event = p->eventRecord.event;
        break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        nd->event = p->eventWait.event;
        break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        cuMemAlloc_v2_impl(&p->alloc.dptr, p->alloc.bytesize);
        nd->dptr = p->alloc.dptr;
        nd->bytes = p->alloc.bytesize;
        break;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        nd->dptr = p->free.dptr;
        break;
    case CU_GRAPH_NODE_TYPE_HOST:
        nd->host_fn = p->host.fn;
        nd->host_data = p->host.userData;
        break;
    default:
        break;
    }
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
/* Explicit construction (cuGraphAdd*Node), the way XLA builds command
 * buffers: the node depends on exactly the nodes given. */
static fnode_t *add_explicit(CUgraph g, CUgraphNodeType type, const CUgraphNode *deps, size_t n)
{
    return graph_add((fgraph_t *)g, type, (fnode_t *const *)deps, n);
}
EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_KERNEL, deps, n);
    kernel_payload(nd, p);
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                     size_t n, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    (void)ctx;
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_MEMSET, deps, n);
    nd->memset = *p;
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                     size_t n, const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    (void)ctx;
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_MEMCPY, deps, n);
    nd->memcpy = *p;
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddHostNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                                   const CUDA_HOST_NODE_PARAMS *p)
{
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_HOST, deps, n);
    nd->host_fn = p->fn;
    nd->host_data = p->userData;
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                       size_t n, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC, deps, n);
    cuMemAlloc_v2_impl(&p->dptr, p->bytesize);
    nd->dptr = p->dptr;
    nd->bytes = p->bytesize;
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                      size_t n, CUdeviceptr dptr)
{
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_MEM_FREE, deps, n);
    nd->dptr = dptr;
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
/* CUDA embeds a clone of the child; here the child must simply outlive the
 * node (the probe keeps it). */
EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                         size_t n, CUgraph child)
{
    fnode_t *nd = add_explicit(g, CU_GRAPH_NODE_TYPE_GRAPH, deps, n);
    nd->child = child;
    *out = (CUgraphNode)nd;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode n, CUgraph *g)
{
    fnode_t *nd = (fnode_t *)n;
    if (nd->type != CU_GRAPH_NODE_TYPE_GRAPH) return CUDA_ERROR_INVALID_VALUE;
    *g = nd->child;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode n, CUgraphNode *deps,
                                              CUgraphEdgeData *ed, size_t *count)
{
    fnode_t *nd = (fnode_t *)n;
    /* The real driver (580) refuses arrays with a count of 0. */
    if (deps && *count == 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; deps && i < nd->n_deps && i < *count; i++) {
        deps[i] = (CUgraphNode)nd->deps[i];
        if (ed) memset(&ed[i], 0, sizeof ed[i]);
    }
    *count = nd->n_deps;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    fgraph_t *fg = (fgraph_t *)g;
    /* The real driver (580) refuses arrays with a count of 0. */
    if (nodes && *n == 0) return CUDA_ERROR_INVALID_VALUE;
    if (nodes)
        for (size_t i = 0; i < fg->n && i < *n; i++)
            nodes[i] = (CUgraphNode)fg->nodes[i];
    *n = fg->n;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphGetEdges_v2(CUgraph g, CUgraphNode *from, CUgraphNode *to,
                                   CUgraphEdgeData *ed, size_t *n)
{
    fgraph_t *fg = (fgraph_t *)g;
    /* The real driver (580) refuses arrays with a count of 0. */
    if (from && *n == 0) return CUDA_ERROR_INVALID_VALUE;
    size_t k = 0;
    for (size_t i = 0; i < fg->n; i++)
        for (size_t j = 0; j < fg->nodes[i]->n_deps; j++) {
            if (from && k < *n) {
                from[k] = (CUgraphNode)fg->nodes[i]->deps[j];
                to[k] = (CUgraphNode)fg->nodes[i];
                if (ed) memset(&ed[k], 0, sizeof ed[k]);
            }
            k++;
        }
    *n = k;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *t)
{
    *t = ((fnode_t *)n)->type;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    fnode_t *nd = (fnode_t *)n;
    if (nd->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof *p);
    p->func = (CUfunction)nd->func;
    p->gridDimX = nd->grid[0], p->gridDimY = nd->grid[1], p->gridDimZ = nd->grid[2];
    p->blockDimX = nd->block[0], p->blockDimY = nd->block[1], p->blockDimZ = nd->block[2];
    p->sharedMemBytes = nd->shmem;
    p->kernelParams = nd->param_ptr;
    return CUDA_SUCCESS;
}
/* Kernel node attributes: priority, cooperative and cluster dimension are
 * kept per node (0 unless set); the whole value union is written, as a
 * driver may. */
EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode n, CUkernelNodeAttrID id,
                                              CUkernelNodeAttrValue *v)
{
    fnode_t *nd = (fnode_t *)n;
    if (!nd || !v || nd->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    memset(v, 0, sizeof *v);
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        v->priority = nd->priority;
        return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        v->cooperative = nd->cooperative;
        return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        v->clusterDim.x = nd->cluster[0], v->clusterDim.y = nd->cluster[1];
        v->clusterDim.z = nd->cluster[2];
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}
EXPORT CUresult cuGraphKernelNodeSetAttribute(CUgraphNode n, CUkernelNodeAttrID id,
                                              const CUkernelNodeAttrValue *v)
{
    fnode_t *nd = (fnode_t *)n;
    if (!nd || !v || nd->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        nd->priority = v->priority;
        return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        nd->cooperative = v->cooperative;
        return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        nd->cluster[0] = v->clusterDim.x, nd->cluster[1] = v->clusterDim.y;
        nd->cluster[2] = v->clusterDim.z;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}
EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p)
{
    *p = ((fnode_t *)n)->memset;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode n, CUDA_MEMCPY3D *p)
{
    *p = ((fnode_t *)n)->memcpy;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode n, CUDA_HOST_NODE_PARAMS *p)
{
    p->fn = ((fnode_t *)n)->host_fn;
    p->userData = ((fnode_t *)n)->host_data;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode n, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    memset(p, 0, sizeof *p);
    p->dptr = ((fnode_t *)n)->dptr;
    p->bytesize = ((fnode_t *)n)->bytes;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode n, CUdeviceptr *p)
{
    *p = ((fnode_t *)n)->dptr;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode n, CUevent *e)
{
    *e = ((fnode_t *)n)->event;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode n, CUevent *e)
{
    *e = ((fnode_t *)n)->event;
    return CUDA_SUCCESS;
}
static CUresult cuGraphInstantiateWithFlags_impl(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    (void)f;
    fgraph_t *fg = (fgraph_t *)g;
    fexec_t *x = calloc(1, sizeof *x);
    x->n = fg->n;
    x->nodes = calloc(fg->n + 1, sizeof *x->nodes);
    x->orig = calloc(fg->n + 1, sizeof *x->orig);
    x->deps = calloc(fg->n + 1, sizeof *x->deps);
    for (size_t i = 0; i < fg->n; i++) {
        x->nodes[i] = *fg->nodes[i];
        x->orig[i] = fg->nodes[i];
        for (size_t j = 0; j < fg->nodes[i]->n_deps; j++) {
            x->deps[i][j] = -1;
            for (size_t k = 0; k < i; k++)
                if (fg->nodes[k] == fg->nodes[i]->deps[j]) x->deps[i][j] = (int)k;
        }
    }
    live_execs++;
    *e = (CUgraphExec)x;
    return CUDA_SUCCESS;
}
static fnode_t *exec_node(CUgraphExec e, CUgraphNode n)
{
    fexec_t *x = (fexec_t *)e;
    for (size_t i = 0; x && i < x->n; i++)
        if (x->orig[i] == (fnode_t *)n) return &x->nodes[i];
    return NULL;
}
/* The payload of a node, as an executable graph keeps it. */
static void copy_payload(fnode_t *dst, const fnode_t *src)
{
    fnode_t keep = *dst;
    *dst = *src;
    memcpy(dst->deps, keep.deps, sizeof dst->deps);
    dst->n_deps = keep.n_deps;
    dst->owner = keep.owner;
    dst->disabled = keep.disabled;
}
/* Like the driver: the same nodes (types, in order) with the same
 * dependencies, or CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED. */
EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    fexec_t *x = (fexec_t *)e;
    fgraph_t *fg = (fgraph_t *)g;
    if (info) memset(info, 0, sizeof *info);
    int same = x->n == fg->n;
    for (size_t i = 0; same && i < fg->n; i++) {
        same = fg->nodes[i]->type == x->nodes[i].type && fg->nodes[i]->n_deps == x->nodes[i].n_deps;
        for (size_t j = 0; same && j < fg->nodes[i]->n_deps; j++)
            same = x->deps[i][j] >= 0 && fg->nodes[x->deps[i][j]] == fg->nodes[i]->deps[j];
    }
    if (!same) {
        if (info) info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    for (size_t i = 0; i < fg->n; i++)
        copy_payload(&x->nodes[i], fg->nodes[i]);
    if (info) info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
}
/* In-place changes of an exec change its copy of the node. */
EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode n,
                                                  const CUDA_KERNEL_NODE_PARAMS *p)
{
    fnode_t *nd = exec_node(e, n);
    if (!nd || nd->type != CU_GRAPH_NODE_TYPE_KERNEL || !p) return CUDA_ERROR_INVALID_VALUE;
    kernel_payload(nd, p);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec e, CUgraphNode n,
                                               const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    (void)ctx;
    fnode_t *nd = exec_node(e, n);
    if (!nd || nd->type != CU_GRAPH_NODE_TYPE_MEMSET || !p) return CUDA_ERROR_INVALID_VALUE;
    nd->memset = *p;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode n,
                                               const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    (void)ctx;
    fnode_t *nd = exec_node(e, n);
    if (!nd || nd->type != CU_GRAPH_NODE_TYPE_MEMCPY || !p) return CUDA_ERROR_INVALID_VALUE;
    nd->memcpy = *p;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec e, CUgraphNode n, unsigned int on)
{
    fnode_t *nd = exec_node(e, n);
    if (!nd) return CUDA_ERROR_INVALID_VALUE;
    nd->disabled = !on;
    return CUDA_SUCCESS;
}
static CUresult cuGraphLaunch_impl(CUgraphExec e, CUstream s)
{
    fexec_t *x = (fexec_t *)e;
    if (stream_of(s)->capturing || !executing()) return CUDA_SUCCESS;
    for (size_t i = 0; i < x->n; i++)
        run_node(&x->nodes[i]);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphUpload(CUgraphExec e, CUstream s)
{
    (void)e, (void)s;
    return CUDA_SUCCESS;
}
static CUresult cuGraphExecDestroy_impl(CUgraphExec e)
{
    fexec_t *x = (fexec_t *)e;
    free(x->nodes);
    free(x->orig);
    free(x->deps);
    free(x);
    live_execs--;
    return CUDA_SUCCESS;
}
static CUresult cuGraphDestroy_impl(CUgraph g)
{
    fgraph_t *fg = (fgraph_t *)g;
    for (size_t i = 0; i < fg->n; i++)
        free(fg->nodes[i]);
    free(fg->nodes);
    free(fg);
    return CUDA_SUCCESS;
}

/* ---- CUDA_INJECTION64_PATH and CUPTI callbacks --------------------------------------
 * Like the driver: cuInit loads the library named by CUDA_INJECTION64_PATH
 * and calls its InitializeInjection; the entry points below report entry
 * and exit to a subscriber of the (fake) libcupti, when one is loaded, with
 * CUPTI's own parameter structs. */
typedef void (*dispatch_fn)(int, unsigned, const char *, const void *, const CUresult *);
static dispatch_fn cupti_dispatch; /* set by the fake libcupti when a subscriber comes */
EXPORT void fake_cuda_cupti_loaded(void *f)
{
    cupti_dispatch = (dispatch_fn)f;
}
static void dispatch_call(int site, unsigned cbid, const char *name, const void *p,
                          const CUresult *r)
{
    /* (looking libcupti up here, once per call, made every call a dlopen:
     * most of a re-capture loop's time went to the loader) */
    if (cupti_dispatch) cupti_dispatch(site, cbid, name, p, r);
}
#define TRACED(name, ...)                                                                          \
    name##_params cupti_params_ = {__VA_ARGS__};                                                   \
    dispatch_call(0, CUPTI_DRIVER_TRACE_CBID_##name, #name, &cupti_params_, NULL);                 \
    CUresult cupti_result_ = name##_impl(__VA_ARGS__);                                             \
    dispatch_call(1, CUPTI_DRIVER_TRACE_CBID_##name, #name, &cupti_params_, &cupti_result_);       \
    return cupti_result_;

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    TRACED(cuStreamBeginCapture_v2, s, mode)
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    TRACED(cuEventRecord, e, s)
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    TRACED(cuStreamWaitEvent, s, e, flags)
}

EXPORT CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    TRACED(cuLaunchKernel, fn, gx, gy, gz, bx, by, bz, shmem, s, params, extra)
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    TRACED(cuStreamEndCapture, s, g)
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    TRACED(cuGraphInstantiateWithFlags, e, g, f)
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    TRACED(cuGraphLaunch, e, s)
}

EXPORT CUresult cuGraphDestroy(CUgraph g)
{
    TRACED(cuGraphDestroy, g)
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
    TRACED(cuGraphExecDestroy, e)
}

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    TRACED(cuModuleLoadData, m, image)
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    TRACED(cuMemAlloc_v2, p, n)
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    TRACED(cuMemFree_v2, p)
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    TRACED(cuStreamSynchronize, s)
}
