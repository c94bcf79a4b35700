/* build.c: a replay's CUgraph: the materializer (materialize.h) with what
 * a process of its own supplies: kernels from the code images it loaded
 * (code.c), fresh events (the captured ones belonged to the other
 * process), host callbacks as empty nodes with --host-nodes skip, host
 * memory where memory.c mapped it, and one record per node built for the
 * profile and the trace. */
#include <stdlib.h>
#include <string.h>

#include "graph/views.h"
#include "materialize.h"
#include "replay_private.h"

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

static int kernel_hook(void *user, const sg_graph_t *owner, const sg_node_t *n,
                       CUDA_KERNEL_NODE_PARAMS_v2 *out, bool *loaded, char *err, size_t errlen)
{
    sg_replay_t *r = user;
    *loaded = true;
    return sg_replay__function(r, &n->u.kernel, &out->func, err, errlen);
}

static int event_hook(void *user, uint32_t ev, CUevent *out, char *err, size_t errlen)
{
    sg_replay_t *r = user;
    const sg_replay_driver_t *drv = r->drv;
    const sg_event_t *e = ev != SG_NONE ? sg_graph_event(r->g, ev) : NULL;
    if (e && r->events[ev]) {
        *out = r->events[ev];
        return SG_OK;
    }
    unsigned flags = e ? (e->flags & (CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING)) : 0;
    CUevent x;
    SG_CU_TRY(drv->cuEventCreate(&x, flags), "cuEventCreate");
    if (e) {
        r->events[ev] = x;
    } else {
        if (grow((void **)&r->own_events, &r->cap_own_events, r->n_own_events + 1,
                 sizeof *r->own_events)) {
            drv->cuEventDestroy(x);
            return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        }
        r->own_events[r->n_own_events++] = x;
    }
    *out = x;
    return SG_OK;
}

/* --host-nodes skip: an empty node keeps the callback's place in the
 * ordering. */
static int host_hook(void *user, const sg_node_t *n, CUgraphNodeParams *p, char *err, size_t errlen)
{
    p->type = CU_GRAPH_NODE_TYPE_EMPTY;
    return SG_OK;
}

static void *host_pointer_hook(void *user, uint64_t addr)
{
    return sg_replay__host_pointer(user, addr);
}

static int built_hook(void *user, CUgraphNode cu, const sg_graph_t *owner, const sg_node_t *n,
                      const char *path, uint32_t stream)
{
    sg_replay_t *r = user;
    if (grow((void **)&r->built, &r->cap_built, r->n_built + 1, sizeof *r->built)) return SG_ENOMEM;
    sg_built_node_t *x = &r->built[r->n_built++];
    memset(x, 0, sizeof *x);
    x->cu = cu;
    x->id = n->id;
    x->owner = owner;
    x->type = n->type;
    x->stream = stream;
    snprintf(x->path, sizeof x->path, "%s", path);
    if (n->type == SG_NODE_KERNEL && n->u.kernel.name) {
        sg_kernel_short_name(n->u.kernel.name, x->name, sizeof x->name);
        x->mangled = n->u.kernel.name;
        memcpy(x->grid, n->u.kernel.grid, sizeof x->grid);
    } else
        snprintf(x->name, sizeof x->name, "%s", sg_node_type_name(n->type));
    /* CUPTI ids are read now: a cloned child graph's own nodes may not
     * outlive this call's caller. */
    if (r->opt.profile && sg_cupti) sg_cupti->cuptiGetGraphNodeId(cu, &x->cupti_id);
    return SG_OK;
}

int sg_replay__build(sg_replay_t *r, char *err, size_t errlen)
{
    r->events = calloc(r->g->n_events + 1, sizeof *r->events);
    if (!r->events) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    sg_mat_t m;
    memset(&m, 0, sizeof m);
    m.drv = r->drv;
    m.ctx = r->ctx;
    m.device = r->device;
    m.g = r->g;
    m.map = &r->map;
    m.report = &r->report;
    m.buf_addr = r->buf_addr;
    m.hooks = (sg_mat_hooks_t){.user = r,
                               .kernel = kernel_hook,
                               .event = event_hook,
                               .host = r->opt.skip_host_nodes ? host_hook : NULL,
                               .host_pointer = host_pointer_hook,
                               .built = built_hook};
    int rc = sg_materialize(&m, err, errlen);
    /* The replay owns what was made (sg_replay_close destroys it). */
    r->graph = m.graph;
    r->buf_freed = m.buf_freed;
    r->unfreed_alloc = m.unfreed_alloc;
    r->children = m.children;
    r->n_children = m.n_children;
    r->cap_children = m.cap_children;
    r->t.cuda_nodes = m.cuda_nodes;
    if (rc == SG_ENOMEM) return sg_replay__fail(err, errlen, rc, "out of memory");
    return rc;
}
