/* build.c: the optimized graph G1 inside the application (opt.h), made by
 * replay's materializer (replay/materialize.h) with what the app already
 * has: each kernel node runs the very function of the program's node it
 * came from (read back from that node, so a context-independent CUkernel
 * stays one), event nodes use the program's own events, memory is where
 * the program has it (the relocation map holds every buffer at its own
 * address; the materializer adds the graph's own allocations, which G1
 * gets at new addresses). No
 * code is loaded for nodes the passes kept; a fused chain's kernel is the
 * cubin the fuse pass made, loaded once per process (code.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "replay/materialize.h"

typedef struct {
    const sg_opt_driver_t *d;
    const sg_graph_t *root;
    const sg_rewrite_files_t *files; /* the fused kernels' code */
    const uint64_t *orig;
    uint32_t n_orig;
    sg_opt_built_t *out;
    char *err; /* the build's message buffer (the built hook has none of its own) */
    size_t errlen;
} hooks_ctx_t;

static int kernel_hook(void *user, const sg_graph_t *owner, const sg_node_t *node,
                       CUDA_KERNEL_NODE_PARAMS_v2 *fn, bool *loaded, char *err, size_t errlen)
{
    hooks_ctx_t *h = user;
    *loaded = false;
    uint64_t orig = owner == h->root && node->id < h->n_orig ? h->orig[node->id] : 0;
    const sg_fusion_t *rec = owner == h->root ? sg_graph_fusion(h->root, node->id) : NULL;
    if (rec && node->synthesized) {
        /* a fused chain: the cubin the pass made */
        const sg_image_t *im = sg_graph_image(h->root, rec->cubin_image);
        const sg_rewrite_file_t *f = NULL;
        for (size_t i = 0; im && im->file && h->files && i < h->files->n && !f; i++)
            if (!strcmp(h->files->files[i].relpath, im->file)) f = &h->files->files[i];
        if (!f) {
            snprintf(err, errlen, "fused node n%u: its cubin is not among the pass's files", node->id);
            return SG_EUNSUPPORTED;
        }
        CUfunction fn_ = NULL;
        int rc = sg_opt_fused_function(h->d, f->data, f->size, node->u.kernel.name, &fn_, err, errlen);
        if (rc) return rc;
        fn->func = fn_;
        fn->kern = NULL;
        fn->ctx = NULL;
        *loaded = true; /* the materializer checks its layout against the node's */
        return SG_OK;
    }
    if (!orig) {
        snprintf(err, errlen,
                 "kernel node n%u (%.80s) has no node of the program's graph to take its function "
                 "from (a kernel a pass made: its code must be loaded)",
                 node->id, node->u.kernel.name ? node->u.kernel.name : "?");
        return SG_EUNSUPPORTED;
    }
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    CUresult cr = h->d->cuGraphKernelNodeGetParams_v2((CUgraphNode)(uintptr_t)orig, &p);
    if (cr != CUDA_SUCCESS)
        return sg_opt_cu_fail(h->d, cr, "cuGraphKernelNodeGetParams", err, errlen);
    fn->func = p.func;
    fn->kern = p.kern;
    fn->ctx = p.ctx;
    return SG_OK;
}

static int event_hook(void *user, uint32_t ev, CUevent *out, char *err, size_t errlen)
{
    hooks_ctx_t *h = user;
    const sg_event_t *e = ev != SG_NONE ? sg_graph_event(h->root, ev) : NULL;
    if (!e || !e->handle) {
        snprintf(err, errlen, "an event node names no event of the program");
        return SG_EUNSUPPORTED;
    }
    *out = (CUevent)(uintptr_t)e->handle;
    return SG_OK;
}

/* Host memory is where the program has it: a copy node names it as host
 * memory, as the program's node did. */
static void *host_pointer_hook(void *user, uint64_t addr)
{
    hooks_ctx_t *h = user;
    uint32_t b = sg_graph_find_buffer(h->root, addr);
    const sg_buffer_t *buf = b != SG_NONE ? sg_graph_buffer(h->root, b) : NULL;
    return buf && sg_buffer_kind_is_host(buf->kind) ? (void *)(uintptr_t)addr : NULL;
}

static int built_hook(void *user, CUgraphNode cu, const sg_graph_t *owner, const sg_node_t *node,
                      const char *path, uint32_t stream)
{
    hooks_ctx_t *h = user;
    if (owner != h->root || node->id >= h->out->n_nodes) return SG_OK;
    h->out->nodes[node->id] = cu;
    /* Every launch attribute of the program's node (the model records
     * cluster, priority and cooperative; the driver knows them all). */
    uint64_t orig = node->id < h->n_orig ? h->orig[node->id] : 0;
    if (node->type == SG_NODE_KERNEL && orig && h->d->cuGraphKernelNodeCopyAttributes) {
        CUresult cr = h->d->cuGraphKernelNodeCopyAttributes(cu, (CUgraphNode)(uintptr_t)orig);
        if (cr != CUDA_SUCCESS) {
            sg_opt_cu_fail(h->d, cr, "copying a kernel node's launch attributes", h->err,
                           h->errlen);
            return SG_ECUDA;
        }
    }
    return SG_OK;
}

/* The test plant: one memset node after every sink, over the first bytes
 * of a buffer the graph writes, so E1 leaves a result E0 does not. */
static int plant(const sg_opt_driver_t *d, CUcontext ctx, const sg_graph_t *g, sg_opt_built_t *b,
                 char *why, size_t n)
{
    uint32_t target = sg_opt_plant_target(g);
    const sg_buffer_t *buf = target != SG_NONE ? sg_graph_buffer(g, target) : NULL;
    if (!buf) {
        snprintf(b->plant_note, sizeof b->plant_note,
                 "no device buffer the graph writes: nothing planted");
        return SG_OK;
    }
    CUgraphNode *sinks = malloc((g->n_nodes + 1) * sizeof *sinks);
    if (!sinks) return SG_ENOMEM;
    size_t k = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        uint32_t n_out = 0;
        if (!x || i >= b->n_nodes || !b->nodes[i]) continue;
        const sg_edge_id_t *out = sg_graph_out_edges(g, i, &n_out);
        bool sink = true;
        for (uint32_t e = 0; e < n_out && sink; e++)
            sink = sg_graph_edge(g, out[e]) == NULL;
        if (sink) sinks[k++] = b->nodes[i];
    }
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset.dst = (CUdeviceptr)buf->address;
    p.memset.value = 0x5C;
    p.memset.elementSize = 1;
    p.memset.width = buf->size < 64 ? buf->size : 64;
    p.memset.height = 1;
    p.memset.pitch = p.memset.width;
    p.memset.ctx = ctx;
    CUgraphNode node = NULL;
    CUresult cr = d->r.cuGraphAddNode(&node, b->graph, k ? sinks : NULL, NULL, k, &p);
    free(sinks);
    if (cr != CUDA_SUCCESS) return sg_opt_cu_fail(d, cr, "adding the planted memset", why, n);
    b->planted = true;
    snprintf(b->plant_note, sizeof b->plant_note, "0x5C over the first %zu bytes of %s",
             (size_t)p.memset.width, buf->label);
    return SG_OK;
}

int sg_opt_build(const sg_opt_driver_t *d, CUcontext ctx, int device, const sg_graph_t *rewritten,
                 const sg_rewrite_files_t *files, const uint64_t *orig, uint32_t n_orig,
                 bool with_plant, sg_opt_built_t *out, char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    sg_reloc_map_init(&out->map);
    out->n_nodes = rewritten->n_nodes;
    out->nodes = calloc(out->n_nodes + 1, sizeof *out->nodes);
    if (!out->nodes) {
        snprintf(why, n, "out of memory");
        return SG_ENOMEM;
    }
    /* Every buffer stays where it is (identity ranges, so the
     * materializer knows each address); graph allocations are added as
     * their nodes are built. */
    for (uint32_t i = 0; i < rewritten->n_buffers; i++) {
        const sg_buffer_t *buf = &rewritten->buffers[i];
        if (buf->kind == SG_BUFFER_GRAPH_ALLOC || buf->size == 0) continue;
        if (sg_reloc_map_add(&out->map, i, buf->address, buf->size, buf->address)) {
            snprintf(why, n, "out of memory");
            return SG_ENOMEM;
        }
    }
    hooks_ctx_t h = {d, rewritten, files, orig, n_orig, out, why, n};
    sg_mat_t m;
    memset(&m, 0, sizeof m);
    m.drv = &d->r;
    m.ctx = ctx;
    m.device = device;
    m.g = rewritten;
    m.map = &out->map;
    m.hooks = (sg_mat_hooks_t){.user = &h,
                               .kernel = kernel_hook,
                               .event = event_hook,
                               .host = NULL, /* refused before (sg_opt_refuse) */
                               .host_pointer = host_pointer_hook,
                               .built = built_hook};
    int rc = sg_materialize(&m, why, n);
    out->graph = m.graph;
    /* Bodies were cloned into their nodes: they are not needed any more. */
    sg_mat_release(&m);
    if (rc == SG_OK && with_plant) rc = plant(d, ctx, rewritten, out, why, n);
    if (rc == SG_ENOMEM) snprintf(why, n, "out of memory");
    return rc;
}

void sg_opt_built_free(const sg_opt_driver_t *d, sg_opt_built_t *b)
{
    if (!b) return;
    if (b->graph) d->r.cuGraphDestroy(b->graph);
    free(b->nodes);
    sg_reloc_map_free(&b->map);
    memset(b, 0, sizeof *b);
}
