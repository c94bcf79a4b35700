/* replay_make_bundle: makes real bundles for the replay GPU tests and
 * benchmarks without the capture shim. It runs a multi-stream workload on
 * the GPU under stream capture, builds the same graph in the model API as it
 * goes (streams, events, kernels with their parameter bytes and layouts,
 * memset, memcpy, graph allocations), snapshots every buffer before and
 * after one launch, and writes the bundle with the fatbin it launched from.
 * It cross-checks its model against the graph CUDA captured (node and edge
 * counts) and can time its own cuGraphLaunch of that graph (--bench), which
 * is what `sgcap replay --bench` is compared with.
 *
 *   fork/join (default): s0: memset out; a = x*1.5+.25; fork
 *                        s1: b = poly(a); b = b*b       (few blocks, long)
 *                        s2: c = poly(a); [--alloc: tmp = graph alloc,
 *                            tmp = c*2+1, c = tmp, free tmp]; c2 = c (memcpy)
 *                        s0: join; out = b*.75 + c2; acc += out
 *   --synthetic N:       N tiny kernels on --width W streams, chains forked
 *                        from and joined to s0 (benchmarks of N nodes)
 *
 * Test variants: --corrupt flips one bit of out's after-snapshot; --host-node
 * adds a host node to the model (in-process only); --fake-cc M.m records
 * another compute capability. Exit 0 on success, 1 on a CUDA or bundle
 * error, 2 on bad usage. */
#include <cuda.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <algorithm>
#include <vector>

#include "graph/bundle.h"
#include "graph/graph.h"
#include "replay_kernels_fatbin.h"

#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != CUDA_SUCCESS) {                                                                 \
            const char *s_ = NULL;                                                                 \
            cuGetErrorName(rc_, &s_);                                                              \
            fprintf(stderr, "replay_make_bundle: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                    s_ ? s_ : "?");                                                                \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != SG_OK) {                                                                        \
            fprintf(stderr, "replay_make_bundle: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                    sg_strerror(rc_));                                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { MAX_STREAMS = 16, MAX_EVENTS = 64 };

/* ---- the recorder: real CUDA calls and the model, side by side ----------------------- */

struct Rec {
    sg_graph_t *g;
    CUstream streams[MAX_STREAMS];
    int n_streams;
    CUevent events[MAX_EVENTS];
    uint32_t model_event[MAX_EVENTS];
    sg_node_id_t event_node[MAX_EVENTS]; /* the node a record bound the event to */
    sg_node_id_t last[MAX_STREAMS];
    std::vector<int> waits[MAX_STREAMS]; /* events waited for since the last node */
    uint64_t seq;
};

/* A new model node on stream s with capture's dependencies: the stream's
 * previous node, and the nodes bound to the events it waited for. */
static sg_node_id_t rec_node(Rec *r, int s, sg_node_type_t t)
{
    sg_node_id_t id;
    MK(sg_graph_add_node(r->g, t, (uint32_t)s, r->seq++, &id));
    if (r->last[s] != SG_NONE)
        MK(sg_graph_add_edge(r->g, r->last[s], id, SG_EDGE_STREAM, SG_NONE, NULL));
    for (int e : r->waits[s])
        if (r->event_node[e] != SG_NONE && r->event_node[e] != r->last[s])
            MK(sg_graph_add_edge(r->g, r->event_node[e], id, SG_EDGE_EVENT, r->model_event[e],
                                 NULL));
    r->waits[s].clear();
    r->last[s] = id;
    return id;
}

static void rec_record(Rec *r, int e, int s)
{
    CK(cuEventRecord(r->events[e], r->streams[s]));
    r->event_node[e] = r->last[s];
}

static void rec_wait(Rec *r, int s, int e)
{
    CK(cuStreamWaitEvent(r->streams[s], r->events[e], 0));
    r->waits[s].push_back(e);
}

struct Buf {
    uint32_t id;
    CUdeviceptr p;
    size_t bytes;
};

static void add_access(Rec *r, sg_node_id_t n, const Buf &b, sg_access_mode_t m)
{
    MK(sg_node_add_access(r->g, n, b.id, 0, b.bytes, m));
}

/* What a launch records about its kernel, resolved before capture begins:
 * with lazy loading, cuKernelGetFunction may load code, which a global-mode
 * capture would refuse (and be invalidated by). */
struct KInfo {
    CUkernel k;
    CUfunction f;
    const char *name;
    std::vector<uint32_t> offs, sizes;
    uint32_t total;
};
static std::vector<KInfo> g_kinfo;

static const KInfo &kinfo(CUkernel k)
{
    for (const KInfo &x : g_kinfo)
        if (x.k == k) return x;
    KInfo x;
    x.k = k;
    x.total = 0;
    CK(cuKernelGetFunction(&x.f, k));
    CK(cuKernelGetName(&x.name, k));
    for (size_t i = 0;; i++) {
        size_t off, size;
        if (cuFuncGetParamInfo(x.f, i, &off, &size) != CUDA_SUCCESS) break;
        x.offs.push_back((uint32_t)off);
        x.sizes.push_back((uint32_t)size);
        x.total = std::max(x.total, (uint32_t)(off + size));
    }
    g_kinfo.push_back(x);
    return g_kinfo.back();
}

/* Launch k on stream s and record it: name, geometry, argument bytes packed
 * at the offsets cuFuncGetParamInfo gives, which is what the capture shim
 * records. */
static sg_node_id_t rec_launch(Rec *r, int s, CUkernel k, unsigned grid, unsigned block,
                               void **args)
{
    const KInfo &ki = kinfo(k);
    CK(cuLaunchKernel(ki.f, grid, 1, 1, block, 1, 1, 0, r->streams[s], args, NULL));
    std::vector<uint8_t> bytes(ki.total ? ki.total : 1, 0);
    for (size_t i = 0; i < ki.offs.size(); i++)
        memcpy(bytes.data() + ki.offs[i], args[i], ki.sizes[i]);
    sg_node_id_t id = rec_node(r, s, SG_NODE_KERNEL);
    MK(sg_node_set_kernel_name(r->g, id, ki.name));
    MK(sg_node_set_kernel_params(r->g, id, (uint32_t)ki.offs.size(), ki.offs.data(),
                                 ki.sizes.data(), bytes.data(), ki.total));
    sg_kernel_t *kk = &sg_graph_node(r->g, id)->u.kernel;
    kk->image = 0;
    kk->grid[0] = grid;
    kk->grid[1] = kk->grid[2] = 1;
    kk->block[0] = block;
    kk->block[1] = kk->block[2] = 1;
    kk->func_handle = (uint64_t)(uintptr_t)k;
    sg_graph_node(r->g, id)->cuda_type = CU_GRAPH_NODE_TYPE_KERNEL;
    return id;
}

/* ---- options ------------------------------------------------------------------------- */

struct Opts {
    const char *out;
    bool alloc, corrupt, host_node;
    int fake_major, fake_minor;
    unsigned synthetic, width, bench, iters;
    unsigned long long n;
};

static void usage(FILE *f)
{
    fputs("usage: replay_make_bundle OUT.sgraph [--alloc] [--corrupt] [--host-node]\n"
          "         [--fake-cc M.m] [--synthetic N [--width W]] [--n ELEMENTS]\n"
          "         [--iters K] [--bench LAUNCHES]\n",
          f);
}

static unsigned long long number(const char *flag, const char *v)
{
    char *end = NULL;
    unsigned long long x = v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end || x == 0) {
        fprintf(stderr, "replay_make_bundle: %s needs a positive number\n", flag);
        exit(2);
    }
    return x;
}

static Opts parse(int argc, char **argv)
{
    Opts o;
    memset(&o, 0, sizeof o);
    o.width = 4;
    o.iters = 32;
    o.n = 1ull << 18;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--alloc"))
            o.alloc = true;
        else if (!strcmp(a, "--corrupt"))
            o.corrupt = true;
        else if (!strcmp(a, "--host-node"))
            o.host_node = true;
        else if (!strcmp(a, "--fake-cc")) {
            if (!v || sscanf(v, "%d.%d", &o.fake_major, &o.fake_minor) != 2) {
                fprintf(stderr, "replay_make_bundle: --fake-cc wants M.m\n");
                exit(2);
            }
            i++;
        } else if (!strcmp(a, "--synthetic"))
            o.synthetic = (unsigned)number(a, v), i++;
        else if (!strcmp(a, "--width"))
            o.width = (unsigned)number(a, v), i++;
        else if (!strcmp(a, "--bench"))
            o.bench = (unsigned)number(a, v), i++;
        else if (!strcmp(a, "--iters"))
            o.iters = (unsigned)number(a, v), i++;
        else if (!strcmp(a, "--n"))
            o.n = number(a, v), i++;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (a[0] == '-') {
            usage(stderr);
            exit(2);
        } else if (!o.out)
            o.out = a;
        else {
            usage(stderr);
            exit(2);
        }
    }
    if (!o.out) {
        usage(stderr);
        exit(2);
    }
    if (o.width < 1 || o.width > MAX_STREAMS - 1) o.width = 4;
    return o;
}

/* ---- workloads ------------------------------------------------------------------------ */

static CUkernel kernel_named(CUlibrary lib, const char *part)
{
    unsigned count = 0;
    CK(cuLibraryGetKernelCount(&count, lib));
    std::vector<CUkernel> ks(count);
    CK(cuLibraryEnumerateKernels(ks.data(), count, lib));
    for (CUkernel k : ks) {
        const char *name = NULL;
        CK(cuKernelGetName(&name, k));
        if (name && strstr(name, part)) return k;
    }
    fprintf(stderr, "replay_make_bundle: no kernel named like %s in the fatbin\n", part);
    exit(1);
}

struct Coeffs {
    float a, b;
    CUdeviceptr bias;
};

static unsigned blocks_for(unsigned long long n, unsigned block)
{
    unsigned long long b = (n + block - 1) / block;
    return (unsigned)std::min<unsigned long long>(b, 65535);
}

static Buf new_buffer(Rec *r, std::vector<Buf> &all, size_t bytes)
{
    Buf b;
    b.bytes = bytes;
    CK(cuMemAlloc(&b.p, bytes));
    MK(sg_graph_add_buffer(r->g, SG_BUFFER_DEVICE, b.p, bytes, &b.id));
    all.push_back(b);
    return b;
}

/* s0 forks to s1 and s2 and joins them again (see the file comment). */
static void fork_join(Rec *r, CUlibrary lib, const Opts &o, std::vector<Buf> &bufs,
                      std::vector<CUdeviceptr> &graph_allocs)
{
    unsigned long long n = o.n;
    size_t bytes = n * sizeof(float);
    Buf x = new_buffer(r, bufs, bytes), a = new_buffer(r, bufs, bytes);
    Buf b = new_buffer(r, bufs, bytes), c = new_buffer(r, bufs, bytes);
    Buf c2 = new_buffer(r, bufs, bytes), out = new_buffer(r, bufs, bytes);
    Buf acc = new_buffer(r, bufs, bytes), bias = new_buffer(r, bufs, 256 * sizeof(float));
    CUkernel k_axpb, k_square, k_combine, k_accum, k_copy, k_poly;
    CK(cuLibraryGetKernel(&k_axpb, lib, "k_axpb"));
    CK(cuLibraryGetKernel(&k_square, lib, "k_square"));
    CK(cuLibraryGetKernel(&k_combine, lib, "k_combine"));
    CK(cuLibraryGetKernel(&k_accum, lib, "k_accum"));
    CK(cuLibraryGetKernel(&k_copy, lib, "k_copy"));
    k_poly = kernel_named(lib, "k_poly");
    for (CUkernel k : {k_axpb, k_square, k_combine, k_accum, k_copy, k_poly})
        kinfo(k);

    /* inputs: x and acc random, bias fixed, the rest a byte pattern that
     * only a correct restore reproduces */
    std::vector<float> h(n);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (auto &v : h) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = (float)((int32_t)(s >> 33) % 2000000) / 1000000.0f;
    }
    CK(cuMemcpyHtoD(x.p, h.data(), bytes));
    for (auto &v : h)
        v = v * 0.5f - 0.25f;
    CK(cuMemcpyHtoD(acc.p, h.data(), bytes));
    std::vector<float> hb(256);
    for (int i = 0; i < 256; i++)
        hb[i] = (float)i / 256.0f - 0.5f;
    CK(cuMemcpyHtoD(bias.p, hb.data(), hb.size() * sizeof(float)));
    for (const Buf *p : {&a, &b, &c, &c2, &out})
        CK(cuMemsetD8(p->p, 0xab, p->bytes));

    const unsigned block = 256, grid = blocks_for(n, block), few = 16;
    float m1 = 1.5f, a1 = 0.25f;
    int iters = (int)o.iters;
    Coeffs cb = {0.5f, 0.25f, bias.p}, cc = {0.25f, -0.5f, bias.p};
    enum { S0, S1, S2 };
    enum { E_FORK, E_J1, E_J2 };

    CK(cuStreamBeginCapture(r->streams[S0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemsetD32Async(out.p, 0, n, r->streams[S0]));
    sg_node_id_t ms = rec_node(r, S0, SG_NODE_MEMSET);
    sg_graph_node(r->g, ms)->u.memset = sg_memset_t{out.p, 0, 0, 4, n, 1};
    sg_graph_node(r->g, ms)->cuda_type = CU_GRAPH_NODE_TYPE_MEMSET;
    add_access(r, ms, out, SG_ACCESS_WRITE);
    {
        void *args[] = {&a.p, &x.p, &m1, &a1, &n};
        sg_node_id_t k = rec_launch(r, S0, k_axpb, grid, block, args);
        add_access(r, k, x, SG_ACCESS_READ);
        add_access(r, k, a, SG_ACCESS_WRITE);
    }
    rec_record(r, E_FORK, S0);

    rec_wait(r, S1, E_FORK);
    {
        void *args[] = {&b.p, &a.p, &cb, &n, &iters};
        sg_node_id_t k = rec_launch(r, S1, k_poly, few, block, args);
        add_access(r, k, a, SG_ACCESS_READ);
        add_access(r, k, bias, SG_ACCESS_READ);
        add_access(r, k, b, SG_ACCESS_WRITE);
        void *args2[] = {&b.p, &n};
        k = rec_launch(r, S1, k_square, grid, block, args2);
        add_access(r, k, b, SG_ACCESS_READWRITE);
    }
    rec_record(r, E_J1, S1);

    rec_wait(r, S2, E_FORK);
    {
        void *args[] = {&c.p, &a.p, &cc, &n, &iters};
        sg_node_id_t k = rec_launch(r, S2, k_poly, few, block, args);
        add_access(r, k, a, SG_ACCESS_READ);
        add_access(r, k, bias, SG_ACCESS_READ);
        add_access(r, k, c, SG_ACCESS_WRITE);
    }
    if (o.alloc) {
        Buf tmp;
        tmp.bytes = bytes;
        CK(cuMemAllocAsync(&tmp.p, bytes, r->streams[S2]));
        graph_allocs.push_back(tmp.p);
        sg_node_id_t al = rec_node(r, S2, SG_NODE_MEM_ALLOC);
        MK(sg_graph_add_buffer(r->g, SG_BUFFER_GRAPH_ALLOC, tmp.p, bytes, &tmp.id));
        sg_graph_node(r->g, al)->u.mem = sg_memnode_t{tmp.id, tmp.p, bytes};
        sg_graph_node(r->g, al)->cuda_type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
        r->g->buffers[tmp.id].alloc_node = al;
        float two = 2.0f, one = 1.0f;
        void *args[] = {&tmp.p, &c.p, &two, &one, &n};
        sg_node_id_t k = rec_launch(r, S2, k_axpb, grid, block, args);
        add_access(r, k, c, SG_ACCESS_READ);
        add_access(r, k, tmp, SG_ACCESS_WRITE);
        void *args2[] = {&c.p, &tmp.p, &n};
        k = rec_launch(r, S2, k_copy, grid, block, args2);
        add_access(r, k, tmp, SG_ACCESS_READ);
        add_access(r, k, c, SG_ACCESS_WRITE);
        CK(cuMemFreeAsync(tmp.p, r->streams[S2]));
        sg_node_id_t fr = rec_node(r, S2, SG_NODE_MEM_FREE);
        sg_graph_node(r->g, fr)->u.mem = sg_memnode_t{tmp.id, tmp.p, 0};
        sg_graph_node(r->g, fr)->cuda_type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    }
    CK(cuMemcpyDtoDAsync(c2.p, c.p, bytes, r->streams[S2]));
    sg_node_id_t cp = rec_node(r, S2, SG_NODE_MEMCPY);
    sg_graph_node(r->g, cp)->u.memcpy = sg_memcpy_t{c2.p, c.p, 0, 0, bytes, 1, 1, SG_COPY_D2D};
    sg_graph_node(r->g, cp)->cuda_type = CU_GRAPH_NODE_TYPE_MEMCPY;
    add_access(r, cp, c, SG_ACCESS_READ);
    add_access(r, cp, c2, SG_ACCESS_WRITE);
    rec_record(r, E_J2, S2);

    rec_wait(r, S0, E_J1);
    rec_wait(r, S0, E_J2);
    {
        void *args[] = {&out.p, &b.p, &c2.p, &n};
        sg_node_id_t k = rec_launch(r, S0, k_combine, grid, block, args);
        add_access(r, k, b, SG_ACCESS_READ);
        add_access(r, k, c2, SG_ACCESS_READ);
        add_access(r, k, out, SG_ACCESS_WRITE);
        void *args2[] = {&acc.p, &out.p, &n};
        k = rec_launch(r, S0, k_accum, grid, block, args2);
        add_access(r, k, out, SG_ACCESS_READ);
        add_access(r, k, acc, SG_ACCESS_READWRITE);
    }
}

/* N tiny kernels on W streams: each stream a chain, forked from s0's first
 * kernel and joined back into s0's last. */
static void synthetic(Rec *r, CUlibrary lib, const Opts &o, std::vector<Buf> &bufs)
{
    unsigned w = o.width;
    CUkernel k_inc;
    CK(cuLibraryGetKernel(&k_inc, lib, "k_inc"));
    kinfo(k_inc);
    unsigned long long n = 256;
    std::vector<Buf> per(w + 1);
    for (unsigned i = 0; i <= w; i++) {
        per[i] = new_buffer(r, bufs, n * sizeof(float));
        CK(cuMemsetD8(per[i].p, 0, per[i].bytes));
    }
    CK(cuStreamBeginCapture(r->streams[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
    void *a0[] = {&per[0].p, &n};
    rec_launch(r, 0, k_inc, 1, 256, a0);
    rec_record(r, 0, 0);
    for (unsigned s = 1; s <= w; s++)
        rec_wait(r, (int)s, 0);
    unsigned body = o.synthetic > 2 ? o.synthetic - 2 : 1;
    for (unsigned i = 0; i < body; i++) {
        unsigned s = 1 + i % w;
        void *args[] = {&per[s].p, &n};
        rec_launch(r, (int)s, k_inc, 1, 256, args);
    }
    for (unsigned s = 1; s <= w; s++) {
        rec_record(r, (int)s, (int)s);
        rec_wait(r, 0, (int)s);
    }
    rec_launch(r, 0, k_inc, 1, 256, a0);
}

/* ---- main ------------------------------------------------------------------------------ */

static std::vector<uint8_t> download(const Buf &b)
{
    std::vector<uint8_t> h(b.bytes);
    CK(cuMemcpyDtoH(h.data(), b.p, b.bytes));
    return h;
}

static char *dupf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

static double bench_graph(CUgraphExec exec, CUstream s, unsigned n)
{
    for (int i = 0; i < 20; i++)
        CK(cuGraphLaunch(exec, s));
    CK(cuStreamSynchronize(s));
    std::vector<CUevent> ev(512);
    for (auto &e : ev)
        CK(cuEventCreate(&e, CU_EVENT_DEFAULT));
    std::vector<double> us;
    /* the same method as sgcap replay --bench: each launch between its own
     * pair of events, in chunks of 256 */
    for (unsigned done = 0; done < n;) {
        unsigned m = std::min(256u, n - done);
        for (unsigned i = 0; i < m; i++) {
            CK(cuEventRecord(ev[2 * i], s));
            CK(cuGraphLaunch(exec, s));
            CK(cuEventRecord(ev[2 * i + 1], s));
        }
        CK(cuStreamSynchronize(s));
        for (unsigned i = 0; i < m; i++) {
            float ms;
            CK(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            us.push_back(ms * 1000.0);
        }
        done += m;
    }
    for (auto &e : ev)
        CK(cuEventDestroy(e));
    std::sort(us.begin(), us.end());
    size_t k = us.size();
    return k % 2 ? us[k / 2] : 0.5 * (us[k / 2 - 1] + us[k / 2]);
}

int main(int argc, char **argv)
{
    Opts o = parse(argc, argv);
    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUlibrary lib;
    CK(cuLibraryLoadData(&lib, replay_fatbin, NULL, NULL, 0, NULL, NULL, 0));

    Rec r;
    r.g = sg_graph_create();
    if (!r.g) return 1;
    r.seq = 0;
    r.n_streams = o.synthetic ? (int)o.width + 1 : 3;
    for (int s = 0; s < r.n_streams; s++) {
        CK(cuStreamCreate(&r.streams[s], CU_STREAM_NON_BLOCKING));
        uint32_t id;
        MK(sg_graph_add_stream(r.g, NULL, (uint64_t)(uintptr_t)r.streams[s], &id));
        r.last[s] = SG_NONE;
    }
    for (int e = 0; e < MAX_EVENTS; e++) {
        CK(cuEventCreate(&r.events[e], CU_EVENT_DISABLE_TIMING));
        r.event_node[e] = SG_NONE;
        r.model_event[e] = SG_NONE;
    }
    for (int e = 0; e < (o.synthetic ? r.n_streams : 3); e++) {
        MK(sg_graph_add_event(r.g, NULL, (uint64_t)(uintptr_t)r.events[e], &r.model_event[e]));
        r.g->events[r.model_event[e]].flags = CU_EVENT_DISABLE_TIMING;
    }

    /* the code image: the very bytes this process launched from */
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx",
             (unsigned long long)XXH64(replay_fatbin, replay_fatbin_size, 0));
    uint32_t img;
    MK(sg_graph_add_image(r.g, SG_IMAGE_FATBIN, hash, replay_fatbin_size, &img));
    sg_image_t *im = &r.g->images[img];
    im->file = dupf("code/%s.fatbin", hash);
    im->n_sass_archs = im->n_ptx_archs = 1;
    im->sass_archs = (uint32_t *)malloc(sizeof(uint32_t));
    im->ptx_archs = (uint32_t *)malloc(sizeof(uint32_t));
    im->sass_archs[0] = im->ptx_archs[0] = 90;

    std::vector<Buf> bufs;
    std::vector<CUdeviceptr> graph_allocs;
    if (o.synthetic)
        synthetic(&r, lib, o, bufs);
    else
        fork_join(&r, lib, o, bufs, graph_allocs);
    CUgraph graph;
    CK(cuStreamEndCapture(r.streams[0], &graph));

    /* the model must be the graph CUDA captured */
    size_t cuda_nodes = 0, cuda_edges = 0;
    CK(cuGraphGetNodes(graph, NULL, &cuda_nodes));
    CK(cuGraphGetEdges(graph, NULL, NULL, NULL, &cuda_edges));
    r.g->crosscheck_done = true;
    r.g->cuda_node_count = (uint32_t)cuda_nodes;
    r.g->cuda_edge_count = (uint32_t)cuda_edges;
    r.g->crosscheck_ok =
        cuda_nodes == sg_graph_node_count(r.g) && cuda_edges == sg_graph_edge_count(r.g);
    if (!r.g->crosscheck_ok) {
        /* not fatal: an extra (redundant) edge in the model only adds a
         * dependency the replay did not need; say it and keep going */
        fprintf(stderr,
                "replay_make_bundle: warning: the model has %u nodes and %u edges, CUDA "
                "captured %zu and %zu\n",
                sg_graph_node_count(r.g), sg_graph_edge_count(r.g), cuda_nodes, cuda_edges);
        r.g->crosscheck_note = strdup("replay_make_bundle's model differs in counts");
    }

    std::vector<std::vector<uint8_t>> before, after;
    for (const Buf &b : bufs)
        before.push_back(download(b));
    CUgraphExec exec;
    CK(cuGraphInstantiateWithFlags(&exec, graph, 0));
    CK(cuGraphLaunch(exec, r.streams[0]));
    CK(cuStreamSynchronize(r.streams[0]));
    for (const Buf &b : bufs)
        after.push_back(download(b));

    /* provenance and device */
    char name[256];
    int major, minor, driver, sms;
    size_t total;
    CK(cuDeviceGetName(name, sizeof name, dev));
    CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CK(cuDeviceTotalMem(&total, dev));
    CK(cuDriverGetVersion(&driver));
    r.g->device.name = strdup(name);
    r.g->device.cc_major = o.fake_major ? o.fake_major : major;
    r.g->device.cc_minor = o.fake_major ? o.fake_minor : minor;
    r.g->device.driver_version = driver;
    r.g->device.total_memory = total;
    r.g->device.sm_count = (uint32_t)sms;
    r.g->program = strdup("replay_make_bundle");
    r.g->pid = 0;
    r.g->capture_mode = strdup("global");

    if (o.host_node) {
        /* a host callback in the model only: the replay must refuse it */
        sg_node_id_t h;
        MK(sg_graph_add_node(r.g, SG_NODE_HOST, 0, r.seq++, &h));
        sg_graph_node(r.g, h)->u.host.fn = 0x401234;
        MK(sg_graph_add_edge(r.g, r.last[0], h, SG_EDGE_STREAM, SG_NONE, NULL));
    }

    /* blobs: the fatbin and two snapshots per buffer */
    std::vector<sg_bundle_blob_t> blobs;
    std::vector<char *> names;
    sg_bundle_blob_t code;
    memset(&code, 0, sizeof code);
    code.relpath = im->file;
    code.data = replay_fatbin;
    code.size = replay_fatbin_size;
    blobs.push_back(code);
    for (size_t i = 0; i < bufs.size(); i++) {
        sg_buffer_t *b = &r.g->buffers[bufs[i].id];
        b->before_file = dupf("data/b%u.before.zst", bufs[i].id);
        b->after_file = dupf("data/b%u.after.zst", bufs[i].id);
        b->snapshot_bytes = bufs[i].bytes;
        if (o.corrupt && i == 5) {
            /* out: one bit of one float, far from the start */
            size_t at = (o.n / 3) * sizeof(float) + 1;
            after[i][at] ^= 0x04;
        }
        sg_bundle_blob_t bb;
        memset(&bb, 0, sizeof bb);
        bb.relpath = b->before_file;
        bb.data = before[i].data();
        bb.size = before[i].size();
        bb.compress = true;
        blobs.push_back(bb);
        bb.relpath = b->after_file;
        bb.data = after[i].data();
        bb.size = after[i].size();
        blobs.push_back(bb);
    }
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    int rc = sg_bundle_write(r.g, o.out, blobs.data(), blobs.size(), SG_BUNDLE_OVERWRITE, &diag);
    if (rc != SG_OK) {
        char buf[1024];
        fprintf(stderr, "replay_make_bundle: writing %s: %s\n", o.out,
                sg_diag_format(&diag, buf, sizeof buf));
        return 1;
    }
    printf("replay_make_bundle: wrote %s: %u nodes, %u edges on %d streams, %zu buffers "
           "(first at 0x%llx), crosscheck %s\n",
           o.out, sg_graph_node_count(r.g), sg_graph_edge_count(r.g), r.n_streams, bufs.size(),
           bufs.empty() ? 0ull : (unsigned long long)bufs[0].p,
           r.g->crosscheck_ok ? "ok" : "MISMATCH");
    if (o.bench) {
        double med = bench_graph(exec, r.streams[0], o.bench);
        printf("original: %s: median %.3f us per launch (%u launches after 20 warm-up)\n", o.out,
               med, o.bench);
    }
    CK(cuGraphExecDestroy(exec));
    CK(cuGraphDestroy(graph));
    sg_graph_destroy(r.g);
    return 0;
}
