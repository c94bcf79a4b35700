/* plan.c: can this graph run outside the program that captured it? Walks
 * every node (bodies too) and lists what makes it "in-process only" (host
 * callbacks, opaque nodes, kernels whose code was not captured, NCCL, ...)
 * and what is replayable but worth a warning. Needs no GPU. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#include "graph/comm.h"

/* snprintf that may truncate on purpose: node paths are cut at 63 bytes. */
static void pathf(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

static int add_issue(sg_plan_issue_t **arr, uint32_t *n, uint32_t *cap, const char *node,
                     sg_node_type_t type, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int add_issue(sg_plan_issue_t **arr, uint32_t *n, uint32_t *cap, const char *node,
                     sg_node_type_t type, const char *fmt, ...)
{
    if (*n == *cap) {
        uint32_t c = *cap ? 2 * *cap : 8;
        sg_plan_issue_t *a = realloc(*arr, c * sizeof *a);
        if (!a) return SG_ENOMEM;
        *arr = a;
        *cap = c;
    }
    sg_plan_issue_t *it = &(*arr)[(*n)++];
    snprintf(it->node, sizeof it->node, "%s", node);
    it->type = type;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->reason, sizeof it->reason, fmt, ap);
    va_end(ap);
    return SG_OK;
}

#define BLOCK(...)                                                                                 \
    add_issue(&p->blockers, &p->n_blockers, &p->cap_blockers, path, n->type, __VA_ARGS__)
#define WARN(...)                                                                                  \
    add_issue(&p->warnings, &p->n_warnings, &p->cap_warnings, path, n->type, __VA_ARGS__)

bool sg_replay_kernel_needs_process(const char *mangled)
{
    return sg_kernel_comm_library(mangled) != SG_COMM_NONE;
}

/* Does any event_record node of g (any depth) record event ev? */
static bool records_event(const sg_graph_t *g, uint32_t ev)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        if (n->type == SG_NODE_EVENT_RECORD && n->u.event == ev) return true;
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child && records_event(n->u.child, ev))
            return true;
        if (n->type == SG_NODE_CONDITIONAL)
            for (uint32_t b = 0; b < n->u.cond.n_bodies; b++)
                if (records_event(n->u.cond.bodies[b], ev)) return true;
    }
    return false;
}

static int check_address(sg_replay_plan_t *p, const sg_graph_t *root, const sg_node_t *n,
                         const char *path, const char *what, uint64_t addr)
{
    if (sg_graph_find_buffer(root, addr) != SG_NONE) return SG_OK;
    return BLOCK("%s address 0x%" PRIx64 " is in no recorded buffer (pageable host memory or "
                 "an allocation the capture did not see)",
                 what, addr);
}

static int plan_kernel(sg_replay_plan_t *p, const sg_graph_t *root, const sg_node_t *n,
                       const char *path)
{
    const sg_kernel_t *k = &n->u.kernel;
    const char *name = k->name && k->name[0] ? k->name : NULL;
    int rc = SG_OK;
    if (!name) return BLOCK("the kernel's name was not recorded");
    if (sg_replay_kernel_needs_process(name))
        return BLOCK("%s is an %s kernel: a communicator cannot be rebuilt offline (it needs "
                     "the peer ranks and proxy threads of the original run)",
                     name, sg_comm_library_name(sg_kernel_comm_library(name)));
    if (k->image == SG_NONE) return BLOCK("the code of %s was not captured", name);
    const sg_image_t *im = sg_graph_image(root, k->image);
    if (!im) return BLOCK("%s names code image %u, which does not exist", name, k->image);
    if (!im->file)
        return BLOCK("code image %u (%s) of %s was not saved in the bundle%s%s", k->image, im->hash,
                     name, im->note ? ": " : "", im->note ? im->note : "");
    if (k->has_extra && k->params_size == 0)
        return BLOCK("%s was launched with `extra` and its argument buffer was not recorded", name);
    if (!k->grid[0] || !k->grid[1] || !k->grid[2] || !k->block[0] || !k->block[1] || !k->block[2])
        return BLOCK("the launch geometry of %s was not recorded", name);
    if (k->params_size > 0 && k->n_params == 0)
        rc = WARN("%s has no parameter layout: it is read from the loaded kernel", name);
    return rc;
}

static int plan_graph(sg_replay_plan_t *p, const sg_graph_t *root, const sg_graph_t *g,
                      const char *prefix, uint32_t depth)
{
    sg_node_id_t *order = NULL;
    uint32_t n_order = 0;
    int rc = sg_graph_topo_order(g, &order, &n_order);
    if (rc) return rc;
    free(order);
    if (depth > p->max_depth) p->max_depth = depth;
    for (uint32_t i = 0; i < g->n_nodes && rc == SG_OK; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        char path[64];
        pathf(path, sizeof path, "%sn%u", prefix, n->id);
        p->nodes++;
        p->nodes_by_type[n->type]++;
        switch (n->type) {
        case SG_NODE_KERNEL:
            rc = plan_kernel(p, root, n, path);
            break;
        case SG_NODE_MEMCPY: {
            const sg_memcpy_t *c = &n->u.memcpy;
            rc = check_address(p, root, n, path, "memcpy source", c->src);
            if (!rc) rc = check_address(p, root, n, path, "memcpy destination", c->dst);
            break;
        }
        case SG_NODE_MEMSET: {
            const sg_memset_t *s = &n->u.memset;
            if (s->element_size != 1 && s->element_size != 2 && s->element_size != 4)
                rc = BLOCK("memset element size %u is not 1, 2 or 4", s->element_size);
            else
                rc = check_address(p, root, n, path, "memset destination", s->dst);
            break;
        }
        case SG_NODE_HOST:
            if (p->skip_host_nodes) {
                p->host_nodes_skipped++;
                rc = WARN("host callback 0x%" PRIx64 " left out (--host-nodes skip): buffers it "
                          "may influence are not compared",
                          n->u.host.fn);
                break;
            }
            rc = BLOCK("host callback 0x%" PRIx64 " (data 0x%" PRIx64 ") is code of the captured "
                       "process (--host-nodes skip replays without it)",
                       n->u.host.fn, n->u.host.user_data);
            break;
        case SG_NODE_OPAQUE:
            rc = BLOCK("opaque node%s%s: sgcap does not know how to rebuild it",
                       n->u.opaque_note ? " " : "", n->u.opaque_note ? n->u.opaque_note : "");
            break;
        case SG_NODE_EMPTY:
            break;
        case SG_NODE_EVENT_RECORD:
            if (n->u.event == SG_NONE) rc = WARN("records no known event: a fresh event is used");
            break;
        case SG_NODE_EVENT_WAIT:
            if (n->u.event == SG_NONE || !records_event(root, n->u.event))
                rc = WARN("waits for an event recorded outside the graph: the replay has "
                          "nothing to wait for");
            break;
        case SG_NODE_MEM_ALLOC:
            if (n->u.mem.buffer == SG_NONE)
                rc = WARN("allocation not linked to a buffer: pointers into it are not relocated "
                          "if the driver places it elsewhere");
            break;
        case SG_NODE_MEM_FREE: {
            uint32_t b = n->u.mem.buffer != SG_NONE ? n->u.mem.buffer
                                                    : sg_graph_find_buffer(root, n->u.mem.address);
            const sg_buffer_t *buf = b != SG_NONE ? sg_graph_buffer(root, b) : NULL;
            if (!buf)
                rc = BLOCK("frees 0x%" PRIx64 ", which is in no recorded buffer", n->u.mem.address);
            else if (buf->kind != SG_BUFFER_GRAPH_ALLOC)
                rc = BLOCK("frees %s (kind %s), which the graph did not allocate: the replay "
                           "cannot recreate that allocation",
                           buf->label, sg_buffer_kind_name(buf->kind));
            break;
        }
        case SG_NODE_CHILD_GRAPH:
            if (!n->u.child) {
                rc = BLOCK("the child graph's body was not recorded");
            } else {
                char sub[64];
                pathf(sub, sizeof sub, "%s/", path);
                rc = plan_graph(p, root, n->u.child, sub, depth + 1);
            }
            break;
        case SG_NODE_CONDITIONAL:
            if (n->u.cond.n_bodies == 0) {
                rc = BLOCK("the conditional node's bodies were not recorded");
                break;
            }
            rc = WARN("conditional node: its handle is re-created (default %u applied at each "
                      "launch) and found in kernel parameters by value",
                      n->u.cond.default_value);
            for (uint32_t b = 0; b < n->u.cond.n_bodies && rc == SG_OK; b++) {
                char sub[64];
                pathf(sub, sizeof sub, "%s/b%u/", path, b);
                rc = plan_graph(p, root, n->u.cond.bodies[b], sub, depth + 1);
            }
            break;
        default:
            rc = BLOCK("unknown node type %d", (int)n->type);
            break;
        }
    }
    return rc;
}

int sg_replay_plan(const sg_graph_t *g, sg_replay_plan_t *plan)
{
    return sg_replay_plan_with(g, false, plan);
}

int sg_replay_plan_with(const sg_graph_t *g, bool skip_host_nodes, sg_replay_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->skip_host_nodes = skip_host_nodes;
    if (!g) return SG_EINVAL;
    int rc = plan_graph(plan, g, g, "", 0);
    if (rc) sg_replay_plan_free(plan);
    return rc;
}

void sg_replay_plan_free(sg_replay_plan_t *plan)
{
    free(plan->blockers);
    free(plan->warnings);
    memset(plan, 0, sizeof *plan);
}
