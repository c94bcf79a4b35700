/* hostskip.c: what a replay without the host callbacks cannot vouch for
 * (`sgcap replay --host-nodes skip`).
 *
 * A host callback is code of the captured process: the replay runs an empty
 * node in its place. Whatever the callback would have done is then missing,
 * and a comparison of what it touched would fail for that reason alone. A
 * callback can read and write host memory (pinned, pageable, managed), not
 * device memory, so those buffers are influenced; and every node that runs
 * after a host node (reachable from it) and reads an influenced buffer may
 * write influenced results (an H2D copy of what the callback prepared, the
 * kernel that reads that copy, ...). Nodes not after any host node saw the
 * same memory as in the program, since the replay restores the
 * before-snapshots. Bodies count as one node: a body holding a host node
 * makes its parent one, and its accesses are its parent's. CPU only. */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static bool has_host_node(const sg_graph_t *g)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        if (n->type == SG_NODE_HOST) return true;
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child && has_host_node(n->u.child)) return true;
        for (uint32_t b = 0; n->type == SG_NODE_CONDITIONAL && b < n->u.cond.n_bodies; b++)
            if (has_host_node(n->u.cond.bodies[b])) return true;
    }
    return false;
}

/* Does node n (with its bodies) read a buffer marked in t? */
static bool reads_marked(const sg_node_t *n, const bool *t)
{
    for (uint32_t a = 0; a < n->n_accesses; a++)
        if ((n->accesses[a].mode & SG_ACCESS_READ) && t[n->accesses[a].buffer]) return true;
    const sg_graph_t *bodies[1] = {n->type == SG_NODE_CHILD_GRAPH ? n->u.child : NULL};
    uint32_t nb = n->type == SG_NODE_CONDITIONAL ? n->u.cond.n_bodies : (bodies[0] ? 1 : 0);
    for (uint32_t b = 0; b < nb; b++) {
        const sg_graph_t *g = n->type == SG_NODE_CONDITIONAL ? n->u.cond.bodies[b] : bodies[0];
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node_t *x = sg_graph_node(g, i);
            if (x && reads_marked(x, t)) return true;
        }
    }
    return false;
}

/* Mark what node n (with its bodies) writes; returns how many were new. */
static uint32_t mark_writes(const sg_node_t *n, bool *t)
{
    uint32_t fresh = 0;
    for (uint32_t a = 0; a < n->n_accesses; a++) {
        uint32_t b = n->accesses[a].buffer;
        if ((n->accesses[a].mode & SG_ACCESS_WRITE) && !t[b]) {
            t[b] = true;
            fresh++;
        }
    }
    const sg_graph_t *child = n->type == SG_NODE_CHILD_GRAPH ? n->u.child : NULL;
    uint32_t nb = n->type == SG_NODE_CONDITIONAL ? n->u.cond.n_bodies : (child ? 1 : 0);
    for (uint32_t k = 0; k < nb; k++) {
        const sg_graph_t *g = n->type == SG_NODE_CONDITIONAL ? n->u.cond.bodies[k] : child;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node_t *x = sg_graph_node(g, i);
            if (x) fresh += mark_writes(x, t);
        }
    }
    return fresh;
}

int sg_replay_host_influenced(const sg_graph_t *g, bool **out, uint32_t *n_influenced)
{
    *out = NULL;
    *n_influenced = 0;
    if (!has_host_node(g)) return SG_OK;
    sg_node_id_t *order = NULL;
    uint32_t n = 0;
    int rc = sg_graph_topo_order(g, &order, &n);
    if (rc) return rc;
    bool *t = calloc(g->n_buffers + 1, sizeof *t);
    bool *after = calloc(g->n_nodes + 1, sizeof *after);
    if (!t || !after) {
        free(order);
        free(t);
        free(after);
        return SG_ENOMEM;
    }
    for (uint32_t b = 0; b < g->n_buffers; b++)
        t[b] =
            sg_buffer_kind_is_host(g->buffers[b].kind) || g->buffers[b].kind == SG_BUFFER_MANAGED;
    for (uint32_t k = 0; k < n; k++) {
        const sg_node_t *x = sg_graph_node(g, order[k]);
        bool host = x->type == SG_NODE_HOST;
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) host = has_host_node(x->u.child);
        for (uint32_t b = 0; !host && x->type == SG_NODE_CONDITIONAL && b < x->u.cond.n_bodies; b++)
            host = has_host_node(x->u.cond.bodies[b]);
        uint32_t ni = 0;
        const sg_edge_id_t *in = sg_graph_in_edges(g, x->id, &ni);
        bool is_after = host;
        for (uint32_t e = 0; !is_after && e < ni; e++) {
            const sg_edge_t *ed = sg_graph_edge(g, in[e]);
            if (ed && after[ed->from]) is_after = true;
        }
        after[x->id] = is_after;
        if (is_after && !host && reads_marked(x, t)) mark_writes(x, t);
    }
    for (uint32_t b = 0; b < g->n_buffers; b++)
        if (t[b]) (*n_influenced)++;
    free(order);
    free(after);
    *out = t;
    return SG_OK;
}
