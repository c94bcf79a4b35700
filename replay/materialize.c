/* materialize.c: the materializer (materialize.h): the model as a real
 * CUgraph, with the caller's driver table, context and hooks. Shared by
 * `sgcap replay` (build.c) and the in-app optimizer (optimize/), so it
 * reads no bundle, prints nothing and names no kernel (the demangler,
 * names.c, is offline code). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"
#include "materialize.h"
#include "replay_private.h"

/* snprintf that may truncate on purpose: node paths are cut at 63 bytes. */
static void pathf(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

typedef struct {
    sg_mat_t *m;
    bool *allocated; /* per buffer: a mem_alloc node of the graph made it */
    char *err;
    size_t errlen;
} build_t;

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return SG_OK;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *a = realloc(*arr, (size_t)c * elem);
    if (!a) return SG_ENOMEM;
    *arr = a;
    *cap = c;
    return SG_OK;
}

static int node_built(build_t *b, CUgraphNode cu, const sg_graph_t *owner, const sg_node_t *n,
                      const char *path, uint32_t stream)
{
    sg_mat_t *m = b->m;
    m->cuda_nodes++;
    return m->hooks.built ? m->hooks.built(m->hooks.user, cu, owner, n, path, stream) : SG_OK;
}

/* ---- kernels ---------------------------------------------------------------- */

typedef struct {
    uint8_t *bytes;
    void **argv;
    void *extra[5];
    size_t extra_size;
    uint32_t *offsets, *sizes;
} kernel_args_t;

static void kernel_args_free(kernel_args_t *a)
{
    free(a->bytes);
    free(a->argv);
    free(a->offsets);
    free(a->sizes);
}

/* The loaded kernel's own parameter layout (cuFuncGetParamInfo). *known is
 * false when the driver cannot say (then the bundle's layout is trusted). */
static int real_layout(build_t *b, CUfunction f, uint32_t **offs, uint32_t **sizes, uint32_t *count,
                       bool *known)
{
    const sg_replay_driver_t *drv = b->m->drv;
    *count = 0;
    *known = true;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < SG_BUNDLE_MAX_PARAM_BYTES; i++) {
        size_t off = 0, size = 0;
        CUresult cr = drv->cuFuncGetParamInfo(f, i, &off, &size);
        if (cr == CUDA_ERROR_INVALID_VALUE) break; /* past the last parameter */
        if (cr != CUDA_SUCCESS && i == 0) {
            *known = false;
            return SG_OK;
        }
        if (cr != CUDA_SUCCESS)
            return sg_replay__cu_fail(drv, b->err, b->errlen, cr, "cuFuncGetParamInfo");
        if (i == cap) {
            cap = cap ? 2 * cap : 8;
            uint32_t *o = realloc(*offs, cap * sizeof *o);
            if (!o) return SG_ENOMEM;
            *offs = o;
            uint32_t *s = realloc(*sizes, cap * sizeof *s);
            if (!s) return SG_ENOMEM;
            *sizes = s;
        }
        (*offs)[i] = (uint32_t)off;
        (*sizes)[i] = (uint32_t)size;
        *count = i + 1;
    }
    return SG_OK;
}

static int kernel_args(build_t *b, const sg_graph_t *owner, const sg_node_t *n, const char *path,
                       kernel_args_t *a, CUgraphNodeParams *p)
{
    sg_mat_t *m = b->m;
    const sg_replay_driver_t *drv = m->drv;
    char *err = b->err;
    size_t errlen = b->errlen;
    const sg_kernel_t *k = &n->u.kernel;
    CUDA_KERNEL_NODE_PARAMS_v2 fn;
    memset(&fn, 0, sizeof fn);
    bool loaded = false;
    int rc = m->hooks.kernel(m->hooks.user, owner, n, &fn, &loaded, err, errlen);
    if (rc) return rc;
    if (!fn.func && !fn.kern)
        return sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "%s: no function for %s", path,
                               k->name ? k->name : "?");
    uint32_t count = 0;
    bool known = false;
    if (loaded && fn.func) {
        if (k->shared_bytes > 48u * 1024u)
            SG_CU_TRY(drv->cuFuncSetAttribute(fn.func,
                                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              (int)k->shared_bytes),
                      "cuFuncSetAttribute(max dynamic shared memory)");
        rc = real_layout(b, fn.func, &a->offsets, &a->sizes, &count, &known);
        if (rc)
            return rc == SG_ENOMEM ? sg_replay__fail(b->err, b->errlen, rc, "out of memory") : rc;
    }
    sg_kernel_t view = *k;
    if (!known) {
        /* nothing to check against: the model's layout, or none */
    } else if (k->n_params) {
        bool same = count == k->n_params;
        for (uint32_t i = 0; same && i < count; i++)
            same = a->offsets[i] == k->param_offsets[i] && a->sizes[i] == k->param_sizes[i];
        if (!same)
            return sg_replay__fail(b->err, b->errlen, SG_EUNSUPPORTED,
                                   "%s: the parameter layout of %s in the bundle (%u parameters) "
                                   "differs from the loaded kernel's (%u parameters)",
                                   path, k->name, k->n_params, count);
    } else if (count) {
        view.n_params = count;
        view.param_offsets = a->offsets;
        view.param_sizes = a->sizes;
    }
    uint32_t need = 0;
    for (uint32_t i = 0; i < view.n_params; i++)
        if (view.param_offsets[i] + view.param_sizes[i] > need)
            need = view.param_offsets[i] + view.param_sizes[i];
    if (need > k->params_size)
        return sg_replay__fail(b->err, b->errlen, SG_EUNSUPPORTED,
                               "%s: %s takes %u bytes of parameters but the bundle recorded %u",
                               path, k->name, need, k->params_size);
    a->bytes = malloc(k->params_size ? k->params_size : 1);
    if (!a->bytes) return sg_replay__fail(b->err, b->errlen, SG_ENOMEM, "out of memory");
    if (k->params_size) memcpy(a->bytes, k->param_bytes, k->params_size);
    rc = sg_reloc_kernel_params(m->map, &view, a->bytes, path, m->report);
    if (rc < 0) return sg_replay__fail(b->err, b->errlen, rc, "out of memory");

    p->type = CU_GRAPH_NODE_TYPE_KERNEL;
    p->kernel.func = fn.func;
    p->kernel.kern = fn.kern;
    p->kernel.ctx = fn.ctx;
    p->kernel.gridDimX = k->grid[0];
    p->kernel.gridDimY = k->grid[1];
    p->kernel.gridDimZ = k->grid[2];
    p->kernel.blockDimX = k->block[0];
    p->kernel.blockDimY = k->block[1];
    p->kernel.blockDimZ = k->block[2];
    p->kernel.sharedMemBytes = k->shared_bytes;
    if (view.n_params) {
        a->argv = calloc(view.n_params, sizeof *a->argv);
        if (!a->argv) return sg_replay__fail(b->err, b->errlen, SG_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < view.n_params; i++)
            a->argv[i] = a->bytes + view.param_offsets[i];
        p->kernel.kernelParams = a->argv;
    } else if (k->params_size) {
        /* no layout anywhere: hand the driver the packed buffer */
        a->extra_size = k->params_size;
        a->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
        a->extra[1] = a->bytes;
        a->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
        a->extra[3] = &a->extra_size;
        a->extra[4] = CU_LAUNCH_PARAM_END;
        p->kernel.extra = a->extra;
    }
    return SG_OK;
}

static int kernel_attributes(build_t *b, CUgraphNode cu, const sg_kernel_t *k)
{
    const sg_replay_driver_t *drv = b->m->drv;
    char *err = b->err;
    size_t errlen = b->errlen;
    CUkernelNodeAttrValue v;
    if (k->cluster[0] || k->cluster[1] || k->cluster[2]) {
        memset(&v, 0, sizeof v);
        v.clusterDim.x = k->cluster[0] ? k->cluster[0] : 1;
        v.clusterDim.y = k->cluster[1] ? k->cluster[1] : 1;
        v.clusterDim.z = k->cluster[2] ? k->cluster[2] : 1;
        SG_CU_TRY(drv->cuGraphKernelNodeSetAttribute(cu, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v),
                  "cuGraphKernelNodeSetAttribute(cluster)");
    }
    if (k->priority) {
        memset(&v, 0, sizeof v);
        v.priority = k->priority;
        SG_CU_TRY(drv->cuGraphKernelNodeSetAttribute(cu, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v),
                  "cuGraphKernelNodeSetAttribute(priority)");
    }
    if (k->cooperative) {
        memset(&v, 0, sizeof v);
        v.cooperative = 1;
        SG_CU_TRY(drv->cuGraphKernelNodeSetAttribute(cu, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v),
                  "cuGraphKernelNodeSetAttribute(cooperative)");
    }
    return SG_OK;
}

/* ---- other payloads ------------------------------------------------------------- */

static int node_address(build_t *b, uint64_t *addr, sg_reloc_site_t site, const char *path)
{
    int rc = sg_reloc_address(b->m->map, addr, site, path, b->m->report);
    if (rc == SG_ENOENT)
        return sg_replay__fail(b->err, b->errlen, SG_EUNSUPPORTED,
                               "%s: %s address 0x%" PRIx64 " is in no recorded buffer", path,
                               sg_reloc_site_name(site), *addr);
    if (rc < 0) return sg_replay__fail(b->err, b->errlen, rc, "out of memory");
    return SG_OK;
}

static uint64_t at_least_1(uint64_t v)
{
    return v ? v : 1;
}

static int memcpy_params(build_t *b, const sg_node_t *n, const char *path, CUgraphNodeParams *p)
{
    const sg_memcpy_t *c = &n->u.memcpy;
    uint64_t src = c->src, dst = c->dst;
    int rc = node_address(b, &src, SG_RELOC_MEMCPY_SRC, path);
    if (!rc) rc = node_address(b, &dst, SG_RELOC_MEMCPY_DST, path);
    if (rc) return rc;
    p->type = CU_GRAPH_NODE_TYPE_MEMCPY;
    const sg_mat_hooks_t *h = &b->m->hooks;
    p->memcpy.copyCtx = b->m->ctx;
    CUDA_MEMCPY3D *m = &p->memcpy.copyParams;
    /* Device memory by unified address; host memory (pinned or pageable)
     * named as host memory, which a pageable range needs. */
    void *host_src = h->host_pointer ? h->host_pointer(h->user, src) : NULL,
         *host_dst = h->host_pointer ? h->host_pointer(h->user, dst) : NULL;
    if (host_src) {
        m->srcMemoryType = CU_MEMORYTYPE_HOST;
        m->srcHost = host_src;
    } else {
        m->srcMemoryType = CU_MEMORYTYPE_UNIFIED;
        m->srcDevice = src;
    }
    m->srcPitch = c->src_pitch ? c->src_pitch : c->width;
    m->srcHeight = at_least_1(c->height);
    if (host_dst) {
        m->dstMemoryType = CU_MEMORYTYPE_HOST;
        m->dstHost = host_dst;
    } else {
        m->dstMemoryType = CU_MEMORYTYPE_UNIFIED;
        m->dstDevice = dst;
    }
    m->dstPitch = c->dst_pitch ? c->dst_pitch : c->width;
    m->dstHeight = at_least_1(c->height);
    m->WidthInBytes = c->width;
    m->Height = at_least_1(c->height);
    m->Depth = at_least_1(c->depth);
    return SG_OK;
}

static int memset_params(build_t *b, const sg_node_t *n, const char *path, CUgraphNodeParams *p)
{
    const sg_memset_t *s = &n->u.memset;
    uint64_t dst = s->dst;
    int rc = node_address(b, &dst, SG_RELOC_MEMSET_DST, path);
    if (rc) return rc;
    p->type = CU_GRAPH_NODE_TYPE_MEMSET;
    p->memset.dst = dst;
    p->memset.pitch = s->pitch ? s->pitch : s->width * s->element_size;
    p->memset.value = s->value;
    p->memset.elementSize = s->element_size;
    p->memset.width = s->width;
    p->memset.height = at_least_1(s->height);
    p->memset.ctx = b->m->ctx;
    return SG_OK;
}

/* The buffer a mem node allocates or frees: its own index, or the graph
 * allocation recorded at its address. */
static uint32_t mem_buffer(const sg_graph_t *root, const sg_memnode_t *m)
{
    if (m->buffer != SG_NONE && m->buffer < root->n_buffers) return m->buffer;
    return sg_graph_find_buffer(root, m->address);
}

static bool has_mem_nodes(const sg_graph_t *g)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        if (n->type == SG_NODE_MEM_ALLOC || n->type == SG_NODE_MEM_FREE) return true;
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child && has_mem_nodes(n->u.child)) return true;
    }
    return false;
}

/* ---- one graph level ---------------------------------------------------------------- */

static int build_graph(build_t *b, const sg_graph_t *g, CUgraph cg, const char *prefix,
                       uint32_t inherited_stream);

typedef struct {
    CUgraphNode *deps;
    CUgraphEdgeData *data;
    uint32_t n, cap;
} deps_t;

static int collect_deps(const sg_graph_t *g, const sg_node_t *n, CUgraphNode *map, deps_t *d,
                        bool *any_data)
{
    d->n = 0;
    *any_data = false;
    uint32_t n_in = 0;
    const sg_edge_id_t *in = sg_graph_in_edges(g, n->id, &n_in);
    for (uint32_t i = 0; i < n_in; i++) {
        const sg_edge_t *e = sg_graph_edge(g, in[i]);
        if (!e || !map[e->from]) continue;
        CUgraphEdgeData ed;
        memset(&ed, 0, sizeof ed);
        ed.from_port = e->from_port;
        ed.to_port = e->to_port;
        ed.type = e->cuda_type;
        /* CUDA refuses a dependency listed twice; sgcap keeps parallel
         * edges of different kinds, which are one dependency to CUDA */
        bool dup = false;
        for (uint32_t j = 0; j < d->n && !dup; j++)
            dup = d->deps[j] == map[e->from] && !memcmp(&d->data[j], &ed, sizeof ed);
        if (dup) continue;
        if (d->n == d->cap) {
            uint32_t cap = d->cap ? 2 * d->cap : 8;
            CUgraphNode *x = realloc(d->deps, cap * sizeof *x);
            if (!x) return SG_ENOMEM;
            d->deps = x;
            CUgraphEdgeData *y = realloc(d->data, cap * sizeof *y);
            if (!y) return SG_ENOMEM;
            d->data = y;
            d->cap = cap;
        }
        d->deps[d->n] = map[e->from];
        d->data[d->n] = ed;
        d->n++;
        if (ed.from_port || ed.to_port || ed.type) *any_data = true;
    }
    return SG_OK;
}

static CUgraphConditionalNodeType cond_type(sg_cond_type_t t)
{
    switch (t) {
    case SG_COND_WHILE:
        return CU_GRAPH_COND_TYPE_WHILE;
    case SG_COND_SWITCH:
        return CU_GRAPH_COND_TYPE_SWITCH;
    default:
        return CU_GRAPH_COND_TYPE_IF;
    }
}

static int build_node(build_t *b, const sg_graph_t *g, CUgraph cg, const sg_node_t *n,
                      const char *path, uint32_t stream, deps_t *d, bool any_data,
                      CUgraphConditionalHandle handle, CUgraphNode *out)
{
    sg_mat_t *m = b->m;
    const sg_replay_driver_t *drv = m->drv;
    const sg_graph_t *root = m->g;
    char *err = b->err;
    size_t errlen = b->errlen;
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    kernel_args_t ka;
    memset(&ka, 0, sizeof ka);
    CUgraph child = NULL;
    uint32_t alloc_buffer = SG_NONE;
    int rc = SG_OK;

    switch (n->type) {
    case SG_NODE_KERNEL:
        rc = kernel_args(b, g, n, path, &ka, &p);
        break;
    case SG_NODE_MEMCPY:
        rc = memcpy_params(b, n, path, &p);
        break;
    case SG_NODE_MEMSET:
        rc = memset_params(b, n, path, &p);
        break;
    case SG_NODE_EMPTY:
        p.type = CU_GRAPH_NODE_TYPE_EMPTY;
        break;
    case SG_NODE_HOST:
        /* the callback is code of the program the model was captured in:
         * the caller decides (replay: an empty node with --host-nodes skip) */
        if (!m->hooks.host) {
            rc = sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                                 "%s: a host node runs only in-process", path);
            break;
        }
        rc = m->hooks.host(m->hooks.user, n, &p, err, errlen);
        break;
    case SG_NODE_EVENT_RECORD:
        p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
        rc = m->hooks.event(m->hooks.user, n->u.event, &p.eventRecord.event, err, errlen);
        break;
    case SG_NODE_EVENT_WAIT:
        p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
        rc = m->hooks.event(m->hooks.user, n->u.event, &p.eventWait.event, err, errlen);
        break;
    case SG_NODE_MEM_ALLOC: {
        alloc_buffer = mem_buffer(root, &n->u.mem);
        const sg_buffer_t *buf = alloc_buffer != SG_NONE ? &root->buffers[alloc_buffer] : NULL;
        p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
        p.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.alloc.poolProps.location.id = m->device;
        p.alloc.bytesize = n->u.mem.bytes ? n->u.mem.bytes : (buf ? buf->size : 0);
        if (!p.alloc.bytesize)
            rc = sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "%s: allocation of unknown size",
                                 path);
        break;
    }
    case SG_NODE_MEM_FREE: {
        uint32_t fb = mem_buffer(root, &n->u.mem);
        uint64_t a = n->u.mem.address;
        if (!a && fb != SG_NONE) a = root->buffers[fb].address;
        rc = node_address(b, &a, SG_RELOC_MEM_FREE, path);
        if (!rc && fb != SG_NONE) m->buf_freed[fb] = true;
        p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
        p.free.dptr = a;
        break;
    }
    case SG_NODE_CHILD_GRAPH: {
        SG_CU_TRY(drv->cuGraphCreate(&child, 0), "cuGraphCreate");
        if (grow((void **)&m->children, &m->cap_children, m->n_children + 1, sizeof *m->children)) {
            drv->cuGraphDestroy(child);
            return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        }
        m->children[m->n_children++] = child;
        char sub[64];
        pathf(sub, sizeof sub, "%s/", path);
        rc = build_graph(b, n->u.child, child, sub, stream);
        p.type = CU_GRAPH_NODE_TYPE_GRAPH;
        p.graph.graph = child;
        /* a body with memory nodes must be moved into its parent; others
         * are cloned, the default */
        p.graph.ownership = has_mem_nodes(n->u.child) ? CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE
                                                      : CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE;
        if (p.graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) m->n_children--;
        break;
    }
    case SG_NODE_CONDITIONAL:
        p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
        p.conditional.handle = handle;
        p.conditional.type = cond_type(n->u.cond.type);
        p.conditional.size = n->u.cond.n_bodies;
        p.conditional.ctx = m->ctx;
        break;
    default:
        rc = sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "%s: a %s node runs only in-process",
                             path, sg_node_type_name(n->type));
        break;
    }
    if (rc) {
        kernel_args_free(&ka);
        return rc;
    }
    CUgraphNode cu = NULL;
    CUresult cr =
        drv->cuGraphAddNode(&cu, cg, d->n ? d->deps : NULL, any_data ? d->data : NULL, d->n, &p);
    kernel_args_free(&ka);
    if (cr != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: adding the %s node", path, sg_node_type_name(n->type));
        return sg_replay__cu_fail(drv, err, errlen, cr, what);
    }
    if (n->type == SG_NODE_KERNEL) {
        rc = kernel_attributes(b, cu, &n->u.kernel);
        if (rc) return rc;
    }
    if (n->type == SG_NODE_MEM_ALLOC && alloc_buffer != SG_NONE) {
        const sg_buffer_t *buf = &root->buffers[alloc_buffer];
        uint64_t old = n->u.mem.address ? n->u.mem.address : buf->address;
        if (m->buf_addr) m->buf_addr[alloc_buffer] = p.alloc.dptr;
        b->allocated[alloc_buffer] = p.alloc.dptr != 0;
        rc = sg_reloc_map_add(m->map, alloc_buffer, old, buf->size ? buf->size : p.alloc.bytesize,
                              p.alloc.dptr);
        if (rc) return sg_replay__fail(err, errlen, rc, "out of memory");
    }
    rc = node_built(b, cu, g, n, path, stream);
    if (rc) return rc;
    if (n->type == SG_NODE_CONDITIONAL) {
        for (uint32_t i = 0; i < n->u.cond.n_bodies && rc == SG_OK; i++) {
            char sub[64];
            pathf(sub, sizeof sub, "%s/b%u/", path, i);
            rc = build_graph(b, n->u.cond.bodies[i], p.conditional.phGraph_out[i], sub, stream);
        }
    }
    *out = cu;
    return rc;
}

static int build_graph(build_t *b, const sg_graph_t *g, CUgraph cg, const char *prefix,
                       uint32_t inherited_stream)
{
    sg_mat_t *m = b->m;
    const sg_replay_driver_t *drv = m->drv;
    char *err = b->err;
    size_t errlen = b->errlen;
    sg_node_id_t *order = NULL;
    uint32_t n_order = 0;
    int rc = sg_graph_topo_order(g, &order, &n_order);
    if (rc) return sg_replay__fail(err, errlen, rc, "%sthe graph is not a DAG", prefix);
    CUgraphNode *map = calloc(g->n_nodes + 1, sizeof *map);
    CUgraphConditionalHandle *handles = calloc(g->n_nodes + 1, sizeof *handles);
    deps_t d;
    memset(&d, 0, sizeof d);
    if (!map || !handles) {
        rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        goto out;
    }
    /* Handles first: the kernel that sets a condition runs before the
     * conditional node and carries the handle among its parameters, so the
     * new handle must be known before that kernel is built. */
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n || n->type != SG_NODE_CONDITIONAL) continue;
        CUresult cr = drv->cuGraphConditionalHandleCreate(
            &handles[i], cg, m->ctx, n->u.cond.default_value, CU_GRAPH_COND_ASSIGN_DEFAULT);
        if (cr != CUDA_SUCCESS) {
            rc = sg_replay__cu_fail(drv, err, errlen, cr, "cuGraphConditionalHandleCreate");
            goto out;
        }
        if (n->u.cond.handle && sg_reloc_map_add_handle(m->map, n->u.cond.handle, handles[i])) {
            rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
            goto out;
        }
    }
    for (uint32_t i = 0; i < n_order && rc == SG_OK; i++) {
        const sg_node_t *n = sg_graph_node(g, order[i]);
        char path[64];
        pathf(path, sizeof path, "%sn%u", prefix, n->id);
        uint32_t stream = n->stream != SG_STREAM_EXPLICIT ? n->stream : inherited_stream;
        bool any_data = false;
        if (collect_deps(g, n, map, &d, &any_data)) {
            rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
            break;
        }
        rc = build_node(b, g, cg, n, path, stream, &d, any_data, handles[n->id], &map[n->id]);
    }
out:
    free(order);
    free(map);
    free(handles);
    free(d.deps);
    free(d.data);
    return rc;
}

int sg_materialize(sg_mat_t *m, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = m->drv;
    if (!drv || !m->g || !m->map || !m->hooks.kernel || !m->hooks.event)
        return sg_replay__fail(err, errlen, SG_EINVAL,
                               "materializer: missing driver, graph or hook");
    build_t b = {m, NULL, err, errlen};
    m->graph = NULL;
    m->unfreed_alloc = false;
    m->cuda_nodes = 0;
    free(m->buf_freed);
    m->buf_freed = calloc(m->g->n_buffers + 1, sizeof *m->buf_freed);
    b.allocated = calloc(m->g->n_buffers + 1, sizeof *b.allocated);
    if (!m->buf_freed || !b.allocated) {
        free(b.allocated);
        return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    }
    CUresult cr = drv->cuGraphCreate(&m->graph, 0);
    int rc = cr == CUDA_SUCCESS ? build_graph(&b, m->g, m->graph, "", SG_STREAM_EXPLICIT)
                                : sg_replay__cu_fail(drv, err, errlen, cr, "cuGraphCreate");
    /* An allocation made by the graph and freed by none of its nodes. */
    for (uint32_t i = 0; rc == SG_OK && i < m->g->n_buffers; i++)
        if (b.allocated[i] && !m->buf_freed[i]) m->unfreed_alloc = true;
    free(b.allocated);
    return rc;
}

void sg_mat_release(sg_mat_t *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->n_children; i++)
        m->drv->cuGraphDestroy(m->children[i]);
    free(m->children);
    free(m->buf_freed);
    m->children = NULL;
    m->buf_freed = NULL;
    m->n_children = m->cap_children = 0;
}
