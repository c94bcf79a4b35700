/* rawdigest.c: a digest of a CUgraph as the driver lists it, without building
 * a model, so that a program re-capturing the same graph thousands of times
 * pays a digest per instantiation, not a model build (the target:
 * instantiate at most 2 us per node over plain).
 *
 * What goes in: every node's CUDA type, its capture tag (stream label and
 * sequence number: assembly orders nodes by it) and its parameters as the
 * driver returns them (kernel function, geometry, shared memory, attributes
 * and the argument bytes laid out by the kernel's parameter info; copy, set,
 * host, event and graph-memory parameters; overrides of an exec changed in
 * place), every edge by the listing index of its ends with its CUDA edge
 * data and its capture kind and event, the record's stream and event counts
 * and capture mode, and the generations of the device memory map and of
 * the kernel facts (what a pointer or a function handle resolves to). Two
 * graphs with the same raw digest therefore build the same model; the
 * converse need not hold (the shim then builds, and the model digest
 * deduplicates). A second digest, the shape, leaves out the kernels'
 * argument bytes other than pointers into known device memory (their
 * layout stays in): the variant cap of shim.c (SGCAP_MAX_VARIANTS) counts
 * bundles per shape. Graphs with child graphs or conditional nodes are not
 * digested here (their bodies live elsewhere): they are always built.
 *
 * Runs under the hot lock, in relaxed capture mode, like the build. */
#include "shim.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "graph/bundle.h"

/* Two digests in one walk: `shape` of everything but kernel argument bytes
 * (sg_raw_digest_t.shape), and the full digest of everything, made as the
 * hash of the argument bytes seeded with the shape's; each run (bytes.h)
 * is hashed once at the end. */
typedef struct {
    sg_bytes_t args, shape;
} dg_t;

static inline void put(dg_t *h, const void *p, size_t n)
{
    sg_bytes_put(&h->shape, p, n);
}

static inline void put_args(dg_t *h, const void *p, size_t n)
{
    sg_bytes_put(&h->args, p, n);
}

static inline void put_u64(dg_t *h, uint64_t v)
{
    put(h, &v, sizeof v);
}

/* The argument words of a kernel that point into device memory the shim
 * knows of (8-byte aligned words of each argument, struct members
 * included) stay in the shape: graphs over other buffers can alias, and
 * race, differently, so they are not variants of each other; only the
 * other bytes (coefficients, sizes, flags) are left out. Under the hot
 * lock (the memory map). */
/* The span of the memory map, for a one-compare test of each word: most
 * words (coefficients, sizes) fall outside it. */
typedef struct {
    const sg_memmap_t *m;
    uint64_t lo, span;
    uint64_t found;
} ptrs_t;

static inline void ptrs_init(ptrs_t *q)
{
    const sg_memmap_t *m = &sg_shim.mem;
    q->m = m;
    q->lo = m->n ? m->r[0].start : 0;
    q->span = m->n ? m->r[m->n - 1].start + m->r[m->n - 1].size - q->lo : 0;
    q->found = 0;
}

/* A word of argument `arg` at byte `off`: into the shape with its place
 * when it points into known device memory. */
static inline void ptrs_word(ptrs_t *q, sg_bytes_t *shape, uint32_t arg, uint32_t off, uint64_t w)
{
    if (w - q->lo < q->span && sg_memmap_find(q->m, w)) {
        uint64_t rec[2] = {(uint64_t)arg << 32 | off, w};
        sg_bytes_put(shape, rec, sizeof rec);
        q->found++;
    }
}

static void ptrs_bytes(ptrs_t *q, sg_bytes_t *shape, uint32_t arg, const uint8_t *p, size_t n)
{
    for (size_t off = 0; off + 8 <= n; off += 8) {
        uint64_t w;
        memcpy(&w, p + off, 8);
        ptrs_word(q, shape, arg, (uint32_t)off, w);
    }
}

int sg_shim_kernel_args(sg_bytes_t *args, sg_bytes_t *shape, const sg_kinfo_t *ki, void **params,
                        void **extra)
{
    ptrs_t q;
    ptrs_init(&q);
    if (params) {
        sg_bytes_u64(shape, ki->layout);
        /* room for every argument at once */
        if (args->n + ki->arg_bytes > args->cap && !sg_bytes_grow(args, ki->arg_bytes))
            return SG_OK;
        uint8_t *dst = args->p + args->n;
        for (uint32_t i = 0; i < ki->n_params; i++) {
            const uint8_t *src = params[i];
            uint32_t size = ki->sizes[i];
            if (!src) { /* an argument the driver would reject: its place, in the shape */
                uint64_t rec[2] = {UINT64_MAX, i};
                sg_bytes_put(shape, rec, sizeof rec);
                continue;
            }
            if (size == 8) { /* most arguments: a pointer, a size, a double */
                uint64_t w;
                memcpy(&w, src, 8);
                memcpy(dst, &w, 8);
                ptrs_word(&q, shape, i, 0, w);
            } else if (size == 4) { /* no room for a pointer */
                memcpy(dst, src, 4);
            } else {
                memcpy(dst, src, size);
                ptrs_bytes(&q, shape, i, src, size);
            }
            dst += size;
        }
        args->n = (size_t)(dst - args->p);
    } else if (extra) {
        sg_bytes_u64(shape, UINT64_MAX); /* the extra form */
        for (int i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] != CU_LAUNCH_PARAM_BUFFER_POINTER || !extra[i + 1]) continue;
            size_t len = 0;
            for (int j = 0; j < 64 && extra[j] != CU_LAUNCH_PARAM_END; j += 2)
                if (extra[j] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[j + 1])
                    len = *(size_t *)extra[j + 1];
            if (len > SG_BUNDLE_MAX_PARAM_BYTES) return SG_ELIMIT;
            sg_bytes_u64(shape, len);
            sg_bytes_put(args, extra[i + 1], len);
            ptrs_bytes(&q, shape, (uint32_t)i, extra[i + 1], len);
        }
    }
    /* how many places there were: what follows cannot pass for one */
    sg_bytes_u64(shape, q.found);
    return SG_OK;
}

/* Scratch kept between walks (under the hot lock): a program that
 * re-captures every step digests a graph every step. */
static struct {
    dg_t dg;
    CUgraphNode *nodes, *from, *to;
    const sg_tag_t **tags; /* per listing index */
    CUgraphEdgeData *ed;
    size_t cap_nodes, cap_edges;
} scratch;

static bool scratch_fit(size_t nn, size_t ne)
{
    if (nn > scratch.cap_nodes) {
        CUgraphNode *n = realloc(scratch.nodes, nn * sizeof *n);
        if (n) scratch.nodes = n;
        const sg_tag_t **t = realloc(scratch.tags, nn * sizeof *t);
        if (t) scratch.tags = t;
        if (!n || !t) return false;
        scratch.cap_nodes = nn;
    }
    if (ne > scratch.cap_edges) {
        CUgraphNode *f = realloc(scratch.from, ne * sizeof *f);
        if (f) scratch.from = f;
        CUgraphNode *t = realloc(scratch.to, ne * sizeof *t);
        if (t) scratch.to = t;
        CUgraphEdgeData *e = realloc(scratch.ed, ne * sizeof *e);
        if (e) scratch.ed = e;
        if (!f || !t || !e) return false;
        scratch.cap_edges = ne;
    }
    return true;
}

/* Node handle -> listing index, open addressing (handles are never 0). */
typedef struct {
    uint64_t *keys;
    uint32_t *vals;
    uint32_t mask;
} index_t;

/* The index's arrays are kept between walks too (under the hot lock). */
static index_t index_kept;
static uint32_t index_cap;

static int index_init(index_t *x, size_t n)
{
    uint32_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    if (slots > index_cap) {
        uint64_t *k = realloc(index_kept.keys, slots * sizeof *k);
        if (k) index_kept.keys = k;
        uint32_t *v = realloc(index_kept.vals, slots * sizeof *v);
        if (v) index_kept.vals = v;
        if (!k || !v) return SG_ENOMEM;
        index_cap = slots;
    }
    memset(index_kept.keys, 0, slots * sizeof *index_kept.keys);
    *x = index_kept;
    x->mask = slots - 1;
    return SG_OK;
}

static uint32_t slot_of(const index_t *x, uint64_t key)
{
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & x->mask;
    while (x->keys[i] && x->keys[i] != key)
        i = (i + 1) & x->mask;
    return i;
}

static uint32_t index_get(const index_t *x, uint64_t key)
{
    uint32_t i = slot_of(x, key);
    return x->keys[i] ? x->vals[i] : UINT32_MAX;
}

static int kernel_part(dg_t *h, CUgraphNode node, const sg_override_t *ov)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    const sg_override_t *o =
        sg_execs_override(ov, (uint64_t)(uintptr_t)node, CU_GRAPH_NODE_TYPE_KERNEL);
    if (o) {
        p = *sg_override_kernel(o);
    } else {
        __typeof__(&cuGraphKernelNodeGetParams_v2) get = SG_REAL(cuGraphKernelNodeGetParams_v2);
        if (!get || get(node, &p) != CUDA_SUCCESS) return SG_ECUDA;
    }
    const sg_kinfo_t *ki = sg_kinfo_get(p.func, p.kern);
    put_u64(h, (uint64_t)(uintptr_t)p.func);
    put_u64(h, (uint64_t)(uintptr_t)p.kern);
    uint32_t geo[7] = {p.gridDimX,  p.gridDimY,  p.gridDimZ,      p.blockDimX,
                       p.blockDimY, p.blockDimZ, p.sharedMemBytes};
    put(h, geo, sizeof geo);
    int rc = sg_shim_kernel_args(&h->args, &h->shape, ki, p.kernelParams, p.extra);
    if (rc) return rc;
    /* The three attributes the model keeps (build.c), as the members it
     * reads: the 64-byte value union would be ~200 bytes of zeros per node
     * to hash. `got` says which queries succeeded (a failed one leaves the
     * model's default). */
    __typeof__(&cuGraphKernelNodeGetAttribute) attr = SG_REAL(cuGraphKernelNodeGetAttribute);
    if (attr) {
        int32_t a[6] = {0};
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        if (attr(node, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v) == CUDA_SUCCESS) a[0] |= 1, a[1] = v.priority;
        memset(&v, 0, sizeof v);
        if (attr(node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v) == CUDA_SUCCESS)
            a[0] |= 2, a[2] = v.cooperative;
        memset(&v, 0, sizeof v);
        if (attr(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v) == CUDA_SUCCESS)
            a[0] |= 4, a[3] = (int32_t)v.clusterDim.x, a[4] = (int32_t)v.clusterDim.y,
            a[5] = (int32_t)v.clusterDim.z;
        put(h, a, sizeof a);
    }
    return SG_OK;
}

static int node_part(dg_t *h, CUgraphNode node, CUgraphNodeType t, const sg_override_t *ov)
{
    CUresult r = CUDA_SUCCESS;
    switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return kernel_part(h, node, ov);
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
        CUDA_MEMCPY3D p;
        memset(&p, 0, sizeof p);
        const sg_override_t *o =
            sg_execs_override(ov, (uint64_t)(uintptr_t)node, CU_GRAPH_NODE_TYPE_MEMCPY);
        if (o) {
            p = *sg_override_memcpy(o);
        } else {
            __typeof__(&cuGraphMemcpyNodeGetParams) get = SG_REAL(cuGraphMemcpyNodeGetParams);
            r = get ? get(node, &p) : CUDA_ERROR_NOT_FOUND;
        }
        put(h, &p, sizeof p);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        const sg_override_t *o =
            sg_execs_override(ov, (uint64_t)(uintptr_t)node, CU_GRAPH_NODE_TYPE_MEMSET);
        if (o) {
            p = *sg_override_memset(o);
        } else {
            __typeof__(&cuGraphMemsetNodeGetParams) get = SG_REAL(cuGraphMemsetNodeGetParams);
            r = get ? get(node, &p) : CUDA_ERROR_NOT_FOUND;
        }
        put(h, &p, sizeof p);
        break;
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        __typeof__(&cuGraphHostNodeGetParams) get = SG_REAL(cuGraphHostNodeGetParams);
        r = get ? get(node, &p) : CUDA_ERROR_NOT_FOUND;
        put(h, &p, sizeof p);
        break;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
        CUevent ev = NULL;
        if (t == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
            __typeof__(&cuGraphEventRecordNodeGetEvent) get =
                SG_REAL(cuGraphEventRecordNodeGetEvent);
            r = get ? get(node, &ev) : CUDA_ERROR_NOT_FOUND;
        } else {
            __typeof__(&cuGraphEventWaitNodeGetEvent) get = SG_REAL(cuGraphEventWaitNodeGetEvent);
            r = get ? get(node, &ev) : CUDA_ERROR_NOT_FOUND;
        }
        put_u64(h, (uint64_t)(uintptr_t)ev);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        __typeof__(&cuGraphMemAllocNodeGetParams) get = SG_REAL(cuGraphMemAllocNodeGetParams);
        r = get ? get(node, &p) : CUDA_ERROR_NOT_FOUND;
        put_u64(h, p.dptr);
        put_u64(h, p.bytesize);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: {
        CUdeviceptr d = 0;
        __typeof__(&cuGraphMemFreeNodeGetParams) get = SG_REAL(cuGraphMemFreeNodeGetParams);
        r = get ? get(node, &d) : CUDA_ERROR_NOT_FOUND;
        put_u64(h, d);
        break;
    }
    case CU_GRAPH_NODE_TYPE_EMPTY:
        break;
    default: /* bodies (child graph, conditional) and node types read elsewhere */
        return SG_EUNSUPPORTED;
    }
    return r == CUDA_SUCCESS ? SG_OK : SG_ECUDA;
}

/* A node's dependencies are asked for with a window of at most this many
 * entries: the driver clears the unused rest of the array it is given, so
 * a window as large as the remaining buffer would make the walk quadratic. */
enum { DEPS_WINDOW = 16 };

/* The graph's edges into the scratch arrays by asking each of the nn listed
 * nodes for its dependencies (its in-edges, in dependency order; a node
 * with a full window is counted, then listed). cuGraphGetEdges_v2 costs
 * time superlinear in the graph: on the H200 (driver 580) 44 ns per node at
 * 1k nodes and 770 at 10k, against 25 and 68 for the dependencies of every
 * node (.dev measurement, docs/CAPTURE.md). SG_EUNSUPPORTED when the driver
 * lacks the call or refuses it: the caller lists the edges the other way. */
static int list_deps(size_t nn, size_t *ne)
{
    __typeof__(&cuGraphNodeGetDependencies_v2) get_deps = SG_REAL(cuGraphNodeGetDependencies_v2);
    if (!get_deps) return SG_EUNSUPPORTED;
    size_t e = 0;
    for (size_t i = 0; i < nn; i++) {
        CUgraphNode node = scratch.nodes[i];
        if (scratch.cap_edges - e < DEPS_WINDOW &&
            !scratch_fit(scratch.cap_nodes, (e + DEPS_WINDOW) * 2))
            return SG_ENOMEM;
        /* edge data the driver leaves alone must not carry the last walk's */
        memset(scratch.ed + e, 0, DEPS_WINDOW * sizeof *scratch.ed);
        size_t k = DEPS_WINDOW;
        if (get_deps(node, scratch.from + e, scratch.ed + e, &k) != CUDA_SUCCESS)
            return SG_EUNSUPPORTED;
        if (k >= DEPS_WINDOW) { /* maybe more than the window held */
            size_t c = 0;
            if (get_deps(node, NULL, NULL, &c) != CUDA_SUCCESS) return SG_EUNSUPPORTED;
            if (c > SG_BUNDLE_MAX_EDGES || e + c > SG_BUNDLE_MAX_EDGES) return SG_ELIMIT;
            /* one entry to spare, so that a count below what was given
             * says the listing is whole */
            if (scratch.cap_edges - e < c + 1 && !scratch_fit(scratch.cap_nodes, (e + c + 1) * 2))
                return SG_ENOMEM;
            memset(scratch.ed + e, 0, (c + 1) * sizeof *scratch.ed);
            k = c + 1;
            if (get_deps(node, scratch.from + e, scratch.ed + e, &k) != CUDA_SUCCESS || k != c)
                return SG_ECUDA; /* changed under us: let the build say so */
        }
        for (size_t j = 0; j < k; j++) scratch.to[e + j] = node;
        e += k;
        if (e > SG_BUNDLE_MAX_EDGES) return SG_ELIMIT;
    }
    *ne = e;
    return SG_OK;
}

/* The graph's nodes and edges into the scratch arrays: the nodes in one
 * call when they fit what is kept from the last walk (a re-captured graph
 * does), else a count and a fill; the edges per node (list_deps), or where
 * the driver cannot, in one cuGraphGetEdges_v2 call the same way. Under
 * the hot lock. */
static int list_graph(CUgraph graph, size_t *nn, size_t *ne)
{
    __typeof__(&cuGraphGetNodes) get_nodes = SG_REAL(cuGraphGetNodes);
    __typeof__(&cuGraphGetEdges_v2) get_edges = SG_REAL(cuGraphGetEdges_v2);
    if (!get_nodes || !get_edges) return SG_EUNSUPPORTED;
    /* The driver fills at most the count given and returns the true count
     * when it is smaller: a count below the capacity is the whole listing.
     * It refuses arrays with a count of 0 (build.c). */
    size_t n = scratch.cap_nodes;
    bool whole = n && get_nodes(graph, scratch.nodes, &n) == CUDA_SUCCESS && n < scratch.cap_nodes;
    if (!whole) {
        n = 0;
        if (get_nodes(graph, NULL, &n) != CUDA_SUCCESS) return SG_ECUDA;
        if (n > SG_BUNDLE_MAX_NODES) return SG_ELIMIT;
        /* room to spare, so that the next walk of this graph fits in one call */
        if (!scratch_fit(n + n / 2 + 1, scratch.cap_edges ? scratch.cap_edges : 1)) return SG_ENOMEM;
        size_t got = n;
        if (n && (get_nodes(graph, scratch.nodes, &got) != CUDA_SUCCESS || got != n))
            return SG_ECUDA; /* changed under us: let the build say so */
    }
    *nn = n;
    size_t e = 0;
    int rc = list_deps(n, &e);
    if (rc != SG_EUNSUPPORTED) {
        *ne = e;
        return rc;
    }
    /* edge data the driver leaves alone must not carry the last walk's */
    e = scratch.cap_edges;
    if (e) memset(scratch.ed, 0, e * sizeof *scratch.ed);
    whole = e && get_edges(graph, scratch.from, scratch.to, scratch.ed, &e) == CUDA_SUCCESS &&
            e < scratch.cap_edges;
    if (!whole) {
        e = 0;
        if (get_edges(graph, NULL, NULL, NULL, &e) != CUDA_SUCCESS) return SG_ECUDA;
        if (e > SG_BUNDLE_MAX_EDGES) return SG_ELIMIT;
        if (!scratch_fit(scratch.cap_nodes, e + e / 2 + 1)) return SG_ENOMEM;
        size_t got = e;
        memset(scratch.ed, 0, scratch.cap_edges * sizeof *scratch.ed);
        if (e && (get_edges(graph, scratch.from, scratch.to, scratch.ed, &got) != CUDA_SUCCESS ||
                  got != e))
            return SG_ECUDA;
    }
    *ne = e;
    return SG_OK;
}

int sg_shim_raw_digest(CUgraph graph, const sg_override_t *ov, sg_raw_digest_t *out)
{
    memset(out, 0, sizeof *out);
    __typeof__(&cuGraphNodeGetType) get_type = SG_REAL(cuGraphNodeGetType);
    if (!get_type) return SG_EUNSUPPORTED;
    size_t nn = 0, ne = 0;
    index_t idx = {0};
    sg_relaxed_t relaxed;
    sg_inject_relaxed_begin(&relaxed);
    pthread_mutex_lock(&sg_shim.hot);
    dg_t *h = &scratch.dg;
    sg_bytes_reset(&h->args);
    sg_bytes_reset(&h->shape);
    int rc = list_graph(graph, &nn, &ne);
    if (rc) goto out;
    rc = SG_ENOMEM;
    if (index_init(&idx, nn)) goto out;
    CUgraphNode *nodes = scratch.nodes, *from = scratch.from, *to = scratch.to;
    CUgraphEdgeData *ed = scratch.ed;
    const sg_tag_t **tags = scratch.tags;
    rc = SG_ECUDA;
    const sg_capture_record_t *rec = sg_book_find_record(sg_shim.book, (uint64_t)(uintptr_t)graph);
    put_u64(h, nn);
    put_u64(h, ne);
    put_u64(h, sg_shim.mem.generation);
    put_u64(h, sg_kinfo_generation());
    if (rec) {
        uint32_t counts[2] = {rec->n_streams, rec->n_events};
        put(h, counts, sizeof counts);
        put(h, rec->mode, strnlen(rec->mode, sizeof rec->mode));
    }
    for (size_t i = 0; i < nn; i++) {
        uint64_t key = (uint64_t)(uintptr_t)nodes[i];
        uint32_t s = slot_of(&idx, key);
        idx.keys[s] = key;
        idx.vals[s] = (uint32_t)i;
        CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
        if (get_type(nodes[i], &t) != CUDA_SUCCESS) goto out;
        const sg_tag_t *tag = rec ? sg_book_find_tag(rec, key) : NULL;
        tags[i] = tag;
        uint64_t head[3] = {(uint64_t)t, tag ? tag->stream : UINT64_MAX, tag ? tag->seq : 0};
        put(h, head, sizeof head);
        rc = node_part(h, nodes[i], t, ov);
        if (rc) goto out;
        rc = SG_ECUDA;
    }
    for (size_t i = 0; i < ne; i++) {
        uint8_t kind = 0;
        uint32_t event = SG_NONE;
        uint32_t fi = index_get(&idx, (uint64_t)(uintptr_t)from[i]),
                 ti = index_get(&idx, (uint64_t)(uintptr_t)to[i]);
        sg_book_edge_kind_of(fi < nn ? tags[fi] : NULL, ti < nn ? tags[ti] : NULL,
                             (uint64_t)(uintptr_t)from[i], &kind, &event);
        uint32_t e[6] = {fi,
                         ti,
                         (uint32_t)ed[i].from_port | (uint32_t)ed[i].to_port << 8 |
                             (uint32_t)ed[i].type << 16,
                         kind,
                         event,
                         0};
        put(h, e, sizeof e);
    }
    rc = SG_ENOMEM;
    if (h->args.oom || h->shape.oom) goto out;
    out->shape = XXH3_64bits(h->shape.p, h->shape.n);
    out->digest = sg_bytes_hash(h->args.p, h->args.n, out->shape);
    out->nodes = (uint32_t)nn;
    out->streams = rec ? rec->n_streams : 0;
    out->events = rec ? rec->n_events : 0;
    out->captured = rec != NULL;
    rc = SG_OK;
out:
    pthread_mutex_unlock(&sg_shim.hot);
    sg_inject_relaxed_end(&relaxed);
    return rc;
}
