/* update.c: the program's exec updates, carried over to the optimized
 * exec (state.h: sg_opt_exec_set, sg_opt_exec_updated). The program's call
 * has been applied to E0; E1 follows when the node is in E1 as it is in
 * the program's graph and the new parameters keep to the buffers E1 was
 * checked with (decide.c: sg_opt_kernel_args_ok, sg_opt_address_ok);
 * pointers into the graph's own allocations are rewritten to G1's. A kernel
 * node that is a stage of a fused kernel follows when its function and
 * geometry stay and its new parameters differ only in bytes the stage's
 * access analysis does not read (sg_opt_stage_param_mask: no address,
 * bound or index the fusion was proven with changes, so the proof holds):
 * its slice of the fused kernel's parameters is rewritten. Anything else
 * sends the exec back to E0 for good. Both models (what E0 runs, what
 * E1 runs) take the new parameters, so later updates are judged against
 * them. Called under sg_opt.lock, in relaxed capture mode. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "state.h"

/* Under lock: the fused kernel of E1 that node id of the program's graph
 * is stage *stage of, or NULL. */
static const sg_fusion_t *fused_stage(const exec_entry_t *e, sg_node_id_t id, uint32_t *stage)
{
    const sg_graph_t *r = e->rewritten;
    for (uint32_t i = 0; i < r->n_fusions; i++) {
        const sg_fusion_t *f = &r->fusions[i];
        if (!sg_graph_node(r, f->node)) continue;
        for (uint32_t s = 0; s < f->n_stages; s++)
            if (f->stages[s].node == id) {
                *stage = s;
                return f;
            }
    }
    return NULL;
}

/* Under lock. Can node `id` of e follow an update: is it in E1 as it is
 * in the program's graph? */
static bool survives(exec_entry_t *e, sg_node_id_t id, sg_node_t **model_node, CUgraphNode *g1,
                     char *why, size_t n)
{
    sg_node_t *a = sg_graph_node(e->model, id);
    const sg_node_t *b = sg_graph_node(e->rewritten, id);
    if (!a || !b || !sg_opt_same_payload(a, b) || id >= e->built.n_nodes || !e->built.nodes[id]) {
        uint32_t s = 0;
        const sg_fusion_t *f = fused_stage(e, id, &s);
        if (f)
            snprintf(why, n, "node n%u is stage %u of fused kernel n%u in the optimized graph", id,
                     s, f->node);
        else
            snprintf(why, n, "node n%u is not in the optimized graph as it is in the program's",
                     id);
        return false;
    }
    *model_node = a;
    *g1 = e->built.nodes[id];
    return true;
}

static int lookup(exec_entry_t *e, CUgraphNode node, sg_node_id_t *id, char *why, size_t n)
{
    uint64_t key = (uint64_t)(uintptr_t)node;
    node_map_t *m = NULL;
    HASH_FIND(hh, e->nodes, &key, sizeof key, m);
    if (!m) {
        snprintf(why, n, "the update names node %p, which the model does not know", (void *)node);
        return SG_ENOENT;
    }
    *id = m->id;
    return SG_OK;
}

/* Apply a kernel node's new parameters to both models (what E0 and E1 now
 * run), so later updates are judged against them. */
static void kernel_commit(exec_entry_t *e, sg_node_id_t id, const CUDA_KERNEL_NODE_PARAMS *p,
                          const uint8_t *bytes)
{
    sg_graph_t *gs[2] = {e->model, e->rewritten};
    for (int i = 0; i < 2; i++) {
        sg_node_t *x = sg_graph_node(gs[i], id);
        if (!x) continue;
        if (x->u.kernel.params_size)
            memcpy(x->u.kernel.param_bytes, bytes, x->u.kernel.params_size);
        x->u.kernel.grid[0] = p->gridDimX, x->u.kernel.grid[1] = p->gridDimY;
        x->u.kernel.grid[2] = p->gridDimZ;
        x->u.kernel.block[0] = p->blockDimX, x->u.kernel.block[1] = p->blockDimY;
        x->u.kernel.block[2] = p->blockDimZ;
        x->u.kernel.shared_bytes = p->sharedMemBytes;
    }
}

/* Does p name the kernel the model has? The handle may come another way
 * than the capture saw it (the runtime passes a context-independent
 * CUkernel as a CUfunction, or as kern): then the names must agree. The
 * layout the argument rules read is the model's, so it must be the same
 * kernel. */
static bool same_function(const CUDA_KERNEL_NODE_PARAMS *p, const sg_kernel_t *k)
{
    uint64_t fn = (uint64_t)(uintptr_t)(p->func ? (void *)p->func : (void *)p->kern);
    if (fn == k->func_handle) return true;
    const char *name = NULL;
    if (p->func && sg_opt.drv.cuFuncGetName &&
        sg_opt.drv.cuFuncGetName(&name, p->func) != CUDA_SUCCESS)
        name = NULL;
    if (!name && sg_opt.drv.cuKernelGetName) {
        CUkernel kern = p->func ? (CUkernel)p->func : p->kern;
        if (!kern || sg_opt.drv.cuKernelGetName(&name, kern) != CUDA_SUCCESS) name = NULL;
    }
    return name && k->name && strcmp(name, k->name) == 0;
}

/* The parameter of k holding byte b (its index), or k->n_params. */
static uint32_t param_at(const sg_kernel_t *k, uint32_t b)
{
    for (uint32_t i = 0; i < k->n_params; i++)
        if (b >= k->param_offsets[i] && b < k->param_offsets[i] + k->param_sizes[i]) return i;
    return k->n_params;
}

/* New parameters `bytes` (checked by sg_opt_kernel_args_ok) for stage s of
 * fused kernel f, model node x: rewrite that stage's slice of the fused
 * node's parameters in E1. */
static int carry_stage(exec_entry_t *e, const sg_node_t *x, const CUDA_KERNEL_NODE_PARAMS *p,
                       const uint8_t *bytes, const sg_fusion_t *f, uint32_t s, char *why, size_t n)
{
    const sg_kernel_t *k = &x->u.kernel;
    sg_node_t *fx = sg_graph_node(e->rewritten, f->node);
    if (!fx || f->node >= e->built.n_nodes || !e->built.nodes[f->node] ||
        (uint64_t)f->stages[s].param_base + k->params_size > fx->u.kernel.params_size) {
        snprintf(why, n, "node n%u: fused kernel n%u is not in the optimized graph", x->id,
                 f->node);
        return SG_EUNSUPPORTED;
    }
    if (p->gridDimX != k->grid[0] || p->gridDimY != k->grid[1] || p->gridDimZ != k->grid[2] ||
        p->blockDimX != k->block[0] || p->blockDimY != k->block[1] ||
        p->blockDimZ != k->block[2] || p->sharedMemBytes != k->shared_bytes) {
        snprintf(why, n,
                 "node n%u is stage %u of fused kernel n%u, and the update changes its geometry",
                 x->id, s, f->node);
        return SG_EUNSUPPORTED;
    }
    uint8_t *mask = calloc(1, k->params_size + 1), *blob = NULL;
    void **argv = NULL;
    int rc = SG_ENOMEM;
    if (!mask) goto out;
    char w[200] = "";
    rc = sg_opt_stage_param_mask(e->model, k, mask, w, sizeof w);
    if (rc == SG_ENOMEM) goto out;
    if (rc) {
        snprintf(why, n, "node n%u is stage %u of fused kernel n%u: %s", x->id, s, f->node, w);
        rc = SG_EUNSUPPORTED;
        goto out;
    }
    for (uint32_t b = 0; b < k->params_size; b++)
        if (mask[b] && bytes[b] != k->param_bytes[b]) {
            uint32_t i = param_at(k, b);
            snprintf(why, n,
                     "node n%u is stage %u of fused kernel n%u: parameter %u (byte %u) changes, "
                     "and the fusion was proven for its value (an address, bound or index the "
                     "stage's accesses depend on)",
                     x->id, s, f->node, i, b);
            rc = SG_EUNSUPPORTED;
            goto out;
        }
    const sg_kernel_t *fk = &fx->u.kernel;
    blob = malloc(fk->params_size + 1);
    argv = calloc(fk->n_params + 1, sizeof *argv);
    rc = SG_ENOMEM;
    if (!blob || !argv) goto out;
    memcpy(blob, fk->param_bytes, fk->params_size);
    memcpy(blob + f->stages[s].param_base, bytes, k->params_size);
    /* the bytes the fused kernel runs with: pointers into graph allocations at G1's */
    uint8_t *moved = malloc(fk->params_size + 1);
    if (!moved) goto out;
    memcpy(moved, blob, fk->params_size);
    if (sg_reloc_kernel_params(&e->built.map, fk, moved, "update", NULL) < 0) {
        free(moved);
        goto out;
    }
    for (uint32_t i = 0; i < fk->n_params; i++) argv[i] = moved + fk->param_offsets[i];
    CUDA_KERNEL_NODE_PARAMS q;
    memset(&q, 0, sizeof q);
    CUresult cr = sg_opt.drv.cuGraphKernelNodeGetParams_v2(e->built.nodes[f->node], &q);
    if (cr == CUDA_SUCCESS) {
        q.kernelParams = argv;
        q.extra = NULL;
        cr = sg_opt.drv.cuGraphExecKernelNodeSetParams_v2(e->e1, e->built.nodes[f->node], &q);
    }
    free(moved);
    if (cr != CUDA_SUCCESS) {
        sg_opt_cu_fail(&sg_opt.drv, cr, "the optimized graph refused the fused kernel's new parameters",
                       why, n);
        rc = SG_ECUDA;
        goto out;
    }
    memcpy(fx->u.kernel.param_bytes, blob, fk->params_size); /* E1 runs these now */
    rc = SG_OK;
out:
    if (rc == SG_ENOMEM && !why[0]) snprintf(why, n, "out of memory");
    free(mask);
    free(blob);
    free(argv);
    return rc;
}

static int carry_kernel(exec_entry_t *e, sg_node_id_t id, const CUDA_KERNEL_NODE_PARAMS *p,
                        char *why, size_t n)
{
    sg_node_t *x = NULL;
    CUgraphNode g1 = NULL;
    uint32_t stage = 0;
    const sg_fusion_t *f = p ? fused_stage(e, id, &stage) : NULL;
    if (f) {
        x = sg_graph_node(e->model, id);
        if (!x || x->type != SG_NODE_KERNEL) {
            snprintf(why, n, "node n%u: not a kernel node of the program's graph", id);
            return SG_EUNSUPPORTED;
        }
    } else if (!p || !survives(e, id, &x, &g1, why, n)) {
        return SG_EUNSUPPORTED;
    }
    const sg_kernel_t *k = &x->u.kernel;
    if (!same_function(p, k)) {
        snprintf(why, n, "the update gives node n%u another kernel than %.80s", id, k->name);
        return SG_EUNSUPPORTED;
    }
    if (p->extra || (k->n_params && !p->kernelParams)) {
        snprintf(why, n, "node n%u gets its arguments through `extra`", id);
        return SG_EUNSUPPORTED;
    }
    uint8_t *bytes = calloc(1, k->params_size + 1), *moved = calloc(1, k->params_size + 1);
    void **argv = calloc(k->n_params + 1, sizeof *argv);
    int rc = SG_ENOMEM;
    if (!bytes || !moved || !argv) {
        snprintf(why, n, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < k->n_params; i++)
        memcpy(bytes + k->param_offsets[i], p->kernelParams[i], k->param_sizes[i]);
    rc = SG_EUNSUPPORTED;
    char w[200] = "";
    if (!sg_opt_kernel_args_ok(e->model, k, bytes, k->params_size, w, sizeof w)) {
        snprintf(why, n, "node n%u: %s", id, w);
        goto out;
    }
    if (f) {
        rc = carry_stage(e, x, p, bytes, f, stage, why, n);
        if (rc == SG_OK) kernel_commit(e, id, p, bytes);
        goto out;
    }
    /* Pointers into the graph's own allocations: G1 has them elsewhere. */
    memcpy(moved, bytes, k->params_size);
    if (sg_reloc_kernel_params(&e->built.map, k, moved, "update", NULL) < 0) {
        snprintf(why, n, "out of memory");
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < k->n_params; i++)
        argv[i] = moved + k->param_offsets[i];
    CUDA_KERNEL_NODE_PARAMS q = *p;
    q.kernelParams = argv;
    CUresult cr = sg_opt.drv.cuGraphExecKernelNodeSetParams_v2(e->e1, g1, &q);
    if (cr != CUDA_SUCCESS) {
        sg_opt_cu_fail(&sg_opt.drv, cr, "the optimized graph refused the new parameters", why, n);
        rc = SG_ECUDA;
        goto out;
    }
    kernel_commit(e, id, p, bytes);
    rc = SG_OK;
out:
    free(bytes);
    free(moved);
    free(argv);
    return rc;
}

static int relocate(exec_entry_t *e, CUdeviceptr *addr)
{
    uint64_t a = *addr;
    int rc = sg_reloc_address(&e->built.map, &a, SG_RELOC_MEMSET_DST, "update", NULL);
    if (rc >= 0) *addr = a;
    return rc == SG_ENOENT ? SG_OK : rc; /* memory the graph does not allocate: as it is */
}

static int carry_memset(exec_entry_t *e, sg_node_id_t id, const CUDA_MEMSET_NODE_PARAMS *p,
                        CUcontext ctx, char *why, size_t n)
{
    sg_node_t *x;
    CUgraphNode g1;
    if (!p || !survives(e, id, &x, &g1, why, n)) return SG_EUNSUPPORTED;
    char w[200];
    if (!sg_opt_address_ok(e->model, x->u.memset.dst, p->dst, "the memset's destination", w,
                           sizeof w)) {
        snprintf(why, n, "node n%u: %s", id, w);
        return SG_EUNSUPPORTED;
    }
    CUDA_MEMSET_NODE_PARAMS q = *p;
    if (relocate(e, &q.dst)) return SG_ENOMEM;
    CUresult cr = sg_opt.drv.cuGraphExecMemsetNodeSetParams(e->e1, g1, &q, ctx);
    if (cr != CUDA_SUCCESS)
        return sg_opt_cu_fail(&sg_opt.drv, cr, "the optimized graph refused the new memset", why,
                              n);
    sg_graph_t *gs[2] = {e->model, e->rewritten};
    for (int i = 0; i < 2; i++) {
        sg_node_t *y = sg_graph_node(gs[i], id);
        y->u.memset.dst = p->dst;
        y->u.memset.pitch = p->pitch;
        y->u.memset.value = p->value;
        y->u.memset.element_size = p->elementSize;
        y->u.memset.width = p->width;
        y->u.memset.height = p->height;
    }
    return SG_OK;
}

/* The unified address a side of a copy names, 0 for an array. */
static uint64_t copy_side(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    if (t == CU_MEMORYTYPE_HOST) return (uint64_t)(uintptr_t)host;
    if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED) return dev;
    return 0;
}

static int carry_memcpy(exec_entry_t *e, sg_node_id_t id, const CUDA_MEMCPY3D *p, CUcontext ctx,
                        char *why, size_t n)
{
    sg_node_t *x;
    CUgraphNode g1;
    if (!p || !survives(e, id, &x, &g1, why, n)) return SG_EUNSUPPORTED;
    uint64_t src = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice);
    uint64_t dst = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice);
    char w[200];
    if (!src || !dst) {
        snprintf(why, n, "node n%u: the copy names a CUDA array", id);
        return SG_EUNSUPPORTED;
    }
    if (!sg_opt_address_ok(e->model, x->u.memcpy.src, src, "the copy's source", w, sizeof w) ||
        !sg_opt_address_ok(e->model, x->u.memcpy.dst, dst, "the copy's destination", w, sizeof w)) {
        snprintf(why, n, "node n%u: %s", id, w);
        return SG_EUNSUPPORTED;
    }
    CUDA_MEMCPY3D q = *p;
    if (q.srcMemoryType != CU_MEMORYTYPE_HOST && relocate(e, &q.srcDevice)) return SG_ENOMEM;
    if (q.dstMemoryType != CU_MEMORYTYPE_HOST && relocate(e, &q.dstDevice)) return SG_ENOMEM;
    CUresult cr = sg_opt.drv.cuGraphExecMemcpyNodeSetParams(e->e1, g1, &q, ctx);
    if (cr != CUDA_SUCCESS)
        return sg_opt_cu_fail(&sg_opt.drv, cr, "the optimized graph refused the new copy", why, n);
    sg_graph_t *gs[2] = {e->model, e->rewritten};
    for (int i = 0; i < 2; i++) {
        sg_node_t *y = sg_graph_node(gs[i], id);
        y->u.memcpy.src = src;
        y->u.memcpy.dst = dst;
        y->u.memcpy.width = p->WidthInBytes;
        y->u.memcpy.height = p->Height;
        y->u.memcpy.depth = p->Depth;
    }
    return SG_OK;
}

static const char *fn_name(const sg_call_t *call)
{
    return sg_inject_fn_name(call->fn);
}

/* Under lock: one in-place change of E0, carried over to E1 or not. */
void sg_opt_exec_set(sg_call_t *call)
{
    CUgraphExec e0 = NULL;
    CUgraphNode node = NULL;
    switch (call->proto) {
#define SG_OPT_TARGET_(name)                                                                       \
    case SG_FN_##name:                                                                             \
        e0 = SG_CALL_ARGS(call, name)->hGraphExec;                                                 \
        node = SG_CALL_ARGS(call, name)->hNode;                                                    \
        break;
        SG_OPT_TARGET_(cuGraphExecKernelNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecKernelNodeSetParams_v2)
        SG_OPT_TARGET_(cuGraphExecMemcpyNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecMemsetNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecHostNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecChildGraphNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecEventRecordNodeSetEvent)
        SG_OPT_TARGET_(cuGraphExecEventWaitNodeSetEvent)
        SG_OPT_TARGET_(cuGraphNodeSetEnabled)
#undef SG_OPT_TARGET_
    default:
        return;
    }
    exec_entry_t *e = sg_opt_find(e0);
    if (!e || e->state == EX_ORIGINAL || !e->e1) return;
    char why[240] = "";
    sg_node_id_t id = SG_NONE;
    int rc = lookup(e, node, &id, why, sizeof why);
    sg_node_t *x = NULL;
    CUgraphNode g1 = NULL;
    if (rc == SG_OK) {
        switch (call->proto) {
        case SG_FN_cuGraphExecKernelNodeSetParams_v2:
            rc = carry_kernel(e, id,
                              SG_CALL_ARGS(call, cuGraphExecKernelNodeSetParams_v2)->nodeParams,
                              why, sizeof why);
            break;
        case SG_FN_cuGraphExecMemsetNodeSetParams: {
            sg_args_cuGraphExecMemsetNodeSetParams_t *a =
                SG_CALL_ARGS(call, cuGraphExecMemsetNodeSetParams);
            rc = carry_memset(e, id, a->memsetParams, a->ctx, why, sizeof why);
            break;
        }
        case SG_FN_cuGraphExecMemcpyNodeSetParams: {
            sg_args_cuGraphExecMemcpyNodeSetParams_t *a =
                SG_CALL_ARGS(call, cuGraphExecMemcpyNodeSetParams);
            rc = carry_memcpy(e, id, a->copyParams, a->ctx, why, sizeof why);
            break;
        }
        case SG_FN_cuGraphExecNodeSetParams: {
            CUgraphNodeParams *p = SG_CALL_ARGS(call, cuGraphExecNodeSetParams)->nodeParams;
            if (p && p->type == CU_GRAPH_NODE_TYPE_KERNEL) {
                /* the generic struct's kernel member has the same fields */
                _Static_assert(sizeof p->kernel == sizeof(CUDA_KERNEL_NODE_PARAMS),
                               "kernel node parameter layouts");
                CUDA_KERNEL_NODE_PARAMS k;
                memcpy(&k, &p->kernel, sizeof k);
                rc = carry_kernel(e, id, &k, why, sizeof why);
            } else if (p && p->type == CU_GRAPH_NODE_TYPE_MEMSET) {
                CUDA_MEMSET_NODE_PARAMS v = {p->memset.dst,   p->memset.pitch,
                                             p->memset.value, p->memset.elementSize,
                                             p->memset.width, p->memset.height};
                rc = carry_memset(e, id, &v, p->memset.ctx, why, sizeof why);
            } else if (p && p->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
                rc = carry_memcpy(e, id, &p->memcpy.copyParams, p->memcpy.copyCtx, why, sizeof why);
            } else {
                snprintf(why, sizeof why,
                         "cuGraphExecNodeSetParams of a node of type %d cannot be carried over to "
                         "the optimized graph",
                         p ? (int)p->type : -1);
                rc = SG_EUNSUPPORTED;
            }
            break;
        }
        case SG_FN_cuGraphNodeSetEnabled:
            if (survives(e, id, &x, &g1, why, sizeof why)) {
                CUresult cr =
                    sg_opt.drv.cuGraphNodeSetEnabled
                        ? sg_opt.drv.cuGraphNodeSetEnabled(
                              e->e1, g1, SG_CALL_ARGS(call, cuGraphNodeSetEnabled)->isEnabled)
                        : CUDA_ERROR_NOT_FOUND;
                rc = cr == CUDA_SUCCESS ? SG_OK
                                        : sg_opt_cu_fail(&sg_opt.drv, cr, "cuGraphNodeSetEnabled",
                                                         why, sizeof why);
            } else {
                rc = SG_EUNSUPPORTED;
            }
            break;
        default:
            snprintf(why, sizeof why, "%s cannot be carried over to the optimized graph",
                     fn_name(call));
            rc = SG_EUNSUPPORTED;
            break;
        }
    }
    record_t *r = sg_opt_record(e->rec);
    if (rc == SG_OK) {
        sg_opt.translated++;
        if (r) r->translated++;
        if (e->logged_updates++ < LOGGED_UPDATES) {
            uint32_t s = 0;
            const sg_fusion_t *f = fused_stage(e, id, &s);
            char where[64] = "";
            if (f) snprintf(where, sizeof where, " (stage %u of fused kernel n%u)", s, f->node);
            sg_opt_log("optimize: graph %u: %s on node n%u%s translated to the optimized graph",
                       r ? r->seq : 0, fn_name(call), id, where);
        }
        return;
    }
    sg_opt.updates_refused++;
    char line[300];
    snprintf(line, sizeof line, "%s could not follow: %s", fn_name(call), why);
    sg_opt_fall_back(e, line);
}

/* Under lock: the program updated E0 from another graph. */
void sg_opt_exec_updated(CUgraphExec e0, CUgraph graph, int result)
{
    exec_entry_t *e = sg_opt_find(e0);
    if (!e || e->state == EX_ORIGINAL || !e->e1) return;
    char why[240] = "", line[320];
    if (result != CUDA_SUCCESS) {
        snprintf(line, sizeof line,
                 "the program's cuGraphExecUpdate failed (CUDA error %d: the graph's topology "
                 "changed?)",
                 result);
        sg_opt_fall_back(e, line);
        return;
    }
    uint64_t *orig = NULL;
    uint32_t n_orig = 0, unreadable = 0;
    sg_node_id_t *changed = NULL;
    uint32_t n_changed = 0;
    bool same = false;
    int rc = SG_EUNSUPPORTED;
    sg_graph_t *now = sg_capture_model(graph, &orig, &n_orig, &unreadable, why, sizeof why);
    if (!now || unreadable) {
        if (now) snprintf(why, sizeof why, "%u nodes could not be read", unreadable);
        goto out;
    }
    if (sg_opt_diff(e->model, now, &same, &changed, &n_changed, why, sizeof why) || !same) goto out;
    rc = SG_OK;
    for (uint32_t i = 0; i < n_changed && rc == SG_OK; i++) {
        sg_node_id_t id = changed[i];
        const sg_node_t *x = sg_graph_node(now, id);
        CUgraphNode h = id < n_orig ? (CUgraphNode)(uintptr_t)orig[id] : NULL;
        CUresult cr = CUDA_ERROR_NOT_FOUND;
        if (x->type == SG_NODE_KERNEL && h) {
            CUDA_KERNEL_NODE_PARAMS p;
            memset(&p, 0, sizeof p);
            cr = sg_opt.drv.cuGraphKernelNodeGetParams_v2(h, &p);
            rc = cr == CUDA_SUCCESS ? carry_kernel(e, id, &p, why, sizeof why) : SG_ECUDA;
        } else if (x->type == SG_NODE_MEMSET && h && sg_opt.drv.cuGraphMemsetNodeGetParams) {
            CUDA_MEMSET_NODE_PARAMS p;
            cr = sg_opt.drv.cuGraphMemsetNodeGetParams(h, &p);
            rc = cr == CUDA_SUCCESS ? carry_memset(e, id, &p, NULL, why, sizeof why) : SG_ECUDA;
        } else if (x->type == SG_NODE_MEMCPY && h && sg_opt.drv.cuGraphMemcpyNodeGetParams) {
            CUDA_MEMCPY3D p;
            cr = sg_opt.drv.cuGraphMemcpyNodeGetParams(h, &p);
            rc = cr == CUDA_SUCCESS ? carry_memcpy(e, id, &p, NULL, why, sizeof why) : SG_ECUDA;
        } else {
            snprintf(why, sizeof why, "node n%u (%s) changes, which cannot be carried over", id,
                     sg_node_type_name(x->type));
            rc = SG_EUNSUPPORTED;
        }
        if (rc == SG_ECUDA && !why[0])
            sg_opt_cu_fail(&sg_opt.drv, cr, "reading the new node", why, sizeof why);
    }
    if (rc == SG_OK) rc = sg_opt_map_nodes(e, orig, n_orig);
out:
    sg_graph_destroy(now);
    free(orig);
    free(changed);
    record_t *r = sg_opt_record(e->rec);
    if (rc == SG_OK) {
        sg_opt.translated++;
        if (r) r->translated++;
        if (e->logged_graph_updates++ < LOGGED_UPDATES)
            sg_opt_log("optimize: graph %u: cuGraphExecUpdate (%u nodes changed) translated to the "
                       "optimized graph",
                       r ? r->seq : 0, n_changed);
        return;
    }
    sg_opt.updates_refused++;
    snprintf(line, sizeof line, "cuGraphExecUpdate could not follow: %s",
             why[0] ? why : "the new graph could not be read");
    sg_opt_fall_back(e, line);
}
