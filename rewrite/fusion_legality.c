/* fusion_legality.c: the chain finder of fusion_legality.h and the
 * `fusion-legality` pass, which reports the chains and what ended each
 * without changing the graph. O(V log V + E). */
#include "fusion_legality.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"
#include "graph/plural.h"

static const char *const barrier_names[SG_BARRIER_KIND_COUNT] = {
    "none",        "stream_start", "stream_end",    "event_out", "event_in",
    "event_node",  "memory_node",  "host_node",     "opaque_node", "graph_node",
    "empty_node",  "stream_change", "fan_out",      "fan_in",    "no_edge",
    "edge_type",   "geometry",     "attributes",    "explicit",    "free_use",
};

const char *sg_barrier_kind_name(sg_barrier_kind_t k)
{
    return (unsigned)k < SG_BARRIER_KIND_COUNT ? barrier_names[k] : "invalid";
}

static sg_barrier_t barrier(sg_barrier_kind_t k, sg_node_id_t node, sg_edge_id_t edge)
{
    return (sg_barrier_t){k, node, edge};
}

/* A non-kernel neighbour is a barrier by its type. */
static sg_barrier_kind_t type_barrier(sg_node_type_t t)
{
    switch (t) {
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT: return SG_BARRIER_EVENT_NODE;
    case SG_NODE_MEMCPY:
    case SG_NODE_MEMSET:
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE: return SG_BARRIER_MEMORY_NODE;
    case SG_NODE_HOST: return SG_BARRIER_HOST_NODE;
    case SG_NODE_CHILD_GRAPH:
    case SG_NODE_CONDITIONAL: return SG_BARRIER_GRAPH_NODE;
    case SG_NODE_EMPTY: return SG_BARRIER_EMPTY_NODE;
    case SG_NODE_OPAQUE:
    default: return SG_BARRIER_OPAQUE_NODE;
    }
}

static bool same_dims(const uint32_t a[3], const uint32_t b[3])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* An edge of kind `kind` (or, with kind < 0, any non-event edge to or from
 * another stream) on x's out (dir 0) or in (dir 1) side; SG_NONE if none.
 * The other end's stream comes from st (not its node: across an edge, a
 * cache miss apiece on a large graph). */
static sg_edge_id_t find_side_edge(const sg_graph_t *g, const sg_rw_streams_t *st,
                                   const sg_node_t *x, int dir, int kind)
{
    uint32_t n = dir ? x->n_in : x->n_out;
    const sg_edge_id_t *ids = dir ? x->in : x->out;
    sg_edge_id_t best = SG_NONE;
    for (uint32_t i = 0; i < n; i++) {
        const sg_edge_t *e = &g->edges[ids[i]];
        bool hit;
        if (kind >= 0) {
            hit = (int)e->kind == kind;
        } else {
            sg_node_id_t o = dir ? e->from : e->to;
            hit = e->kind != SG_EDGE_EVENT && st->stream[o] != x->stream;
        }
        if (hit && (best == SG_NONE || ids[i] < best)) best = ids[i]; /* deterministic */
    }
    return best;
}

/* Why x and its stream successor y may not be joined, looking at their
 * edges only: an event edge out of x (a record point) or into y (a wait
 * point), an edge to or from another stream, no direct edge, another
 * successor of x or predecessor of y, a programmatic or ported edge. */
static sg_barrier_t link_barrier(const sg_graph_t *g, const sg_rw_streams_t *st, sg_node_id_t x,
                                 sg_node_id_t y)
{
    const sg_node_t *nx = &g->nodes[x], *ny = &g->nodes[y];
    sg_edge_id_t e = find_side_edge(g, st, nx, 0, SG_EDGE_EVENT);
    if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_OUT, g->edges[e].to, e);
    e = find_side_edge(g, st, ny, 1, SG_EDGE_EVENT);
    if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_IN, g->edges[e].from, e);
    e = find_side_edge(g, st, nx, 0, -1);
    if (e != SG_NONE) return barrier(SG_BARRIER_STREAM_CHANGE, g->edges[e].to, e);
    e = find_side_edge(g, st, ny, 1, -1);
    if (e != SG_NONE) return barrier(SG_BARRIER_STREAM_CHANGE, g->edges[e].from, e);
    if (sg_graph_find_edge(g, x, y) == SG_NONE) return barrier(SG_BARRIER_NO_EDGE, y, SG_NONE);
    /* Parallel edges x -> y are one dependency; anything else is a fan. */
    for (uint32_t i = 0; i < nx->n_out; i++) {
        const sg_edge_t *o = &g->edges[nx->out[i]];
        if (o->to != y) return barrier(SG_BARRIER_FAN_OUT, o->to, o->id);
    }
    for (uint32_t i = 0; i < ny->n_in; i++) {
        const sg_edge_t *o = &g->edges[ny->in[i]];
        if (o->from != x) return barrier(SG_BARRIER_FAN_IN, o->from, o->id);
    }
    for (uint32_t i = 0; i < nx->n_out; i++) {
        const sg_edge_t *o = &g->edges[nx->out[i]];
        if (o->cuda_type != 0 || o->from_port != 0 || o->to_port != 0)
            return barrier(SG_BARRIER_EDGE_TYPE, y, o->id);
    }
    return barrier(SG_BARRIER_NONE, SG_NONE, SG_NONE);
}

/* Why kernels a and b (already known to be joined) may not be one chain. */
static sg_barrier_t kernel_barrier(const sg_node_t *na, const sg_node_t *nb)
{
    const sg_kernel_t *ka = &na->u.kernel, *kb = &nb->u.kernel;
    if (!same_dims(ka->grid, kb->grid) || !same_dims(ka->block, kb->block) ||
        !same_dims(ka->cluster, kb->cluster))
        return barrier(SG_BARRIER_GEOMETRY, nb->id, SG_NONE);
    if (ka->cooperative || kb->cooperative || ka->has_extra || kb->has_extra ||
        ka->priority != kb->priority)
        return barrier(SG_BARRIER_ATTRIBUTES, nb->id, SG_NONE);
    return barrier(SG_BARRIER_NONE, SG_NONE, SG_NONE);
}

/* Does node y access memory that mem_free node f frees? */
static bool touches_freed(const sg_graph_t *g, const sg_node_t *y, const sg_node_t *f)
{
    const sg_buffer_t *b = sg_graph_buffer(g, f->u.mem.buffer);
    uint64_t flo = b ? b->address : f->u.mem.address, fhi = b ? flo + b->size : flo + 1;
    for (uint32_t i = 0; i < y->n_accesses; i++) {
        uint64_t lo, hi;
        if (sg_rw_access_range(g, &y->accesses[i], &lo, &hi) && lo < fhi && flo < hi) return true;
    }
    return false;
}

/* What stops a chain at node x going on to y, the node after x in its
 * stream (or SG_NONE), as far as the two nodes say; x is the chain's last
 * kernel or a free it passed. SG_BARRIER_NONE when y is a free the chain
 * may pass, or a kernel it may take as far as the pair goes (with
 * kernel_barrier when x is a kernel; what the chain carries, its last
 * kernel before a free and the frees passed, extend_barrier checks). */
static sg_barrier_t step_barrier(const sg_graph_t *g, const sg_rw_streams_t *st, sg_node_id_t x,
                                 sg_node_id_t y)
{
    const sg_node_t *nx = &g->nodes[x];
    if (y == SG_NONE) {
        sg_edge_id_t e = find_side_edge(g, st, nx, 0, SG_EDGE_EVENT);
        if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_OUT, g->edges[e].to, e);
        e = find_side_edge(g, st, nx, 0, -1);
        if (e != SG_NONE) return barrier(SG_BARRIER_STREAM_CHANGE, g->edges[e].to, e);
        return barrier(SG_BARRIER_STREAM_END, SG_NONE, SG_NONE);
    }
    uint8_t ty = st->type[y];
    if (ty != SG_NODE_KERNEL && ty != SG_NODE_MEM_FREE) {
        /* a record right after the kernel is named as such */
        sg_edge_id_t e = find_side_edge(g, st, nx, 0, SG_EDGE_EVENT);
        if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_OUT, g->edges[e].to, e);
        return barrier(type_barrier(ty), y, SG_NONE);
    }
    const sg_node_t *ny = &g->nodes[y];
    sg_barrier_t b = link_barrier(g, st, x, y);
    if (b.kind != SG_BARRIER_NONE) {
        /* a free that cannot be passed is a memory node in the way */
        if (ny->type == SG_NODE_MEM_FREE) return barrier(SG_BARRIER_MEMORY_NODE, y, SG_NONE);
        return b;
    }
    if (ny->type == SG_NODE_KERNEL && nx->type == SG_NODE_KERNEL) return kernel_barrier(nx, ny);
    return b;
}

/* Why the chain whose last kernel is at stream position i, and which passed
 * the frees prior[0..n_prior), does not go on to the next kernel in its
 * stream. step[] and type[] are by stream position (step_barrier to the
 * next position, the node's type). On SG_BARRIER_NONE, *next is the
 * position of that kernel and frees[0..*nf) the mem_free nodes passed on
 * the way (frees has room for the stream). */
static sg_barrier_t extend_barrier(const sg_graph_t *g, const sg_rw_streams_t *st,
                                   const sg_barrier_t *step, const uint8_t *type, uint32_t i,
                                   const sg_node_id_t *prior, uint32_t n_prior, uint32_t *next,
                                   sg_node_id_t *frees, uint32_t *nf)
{
    *nf = 0;
    sg_node_id_t a = st->nodes[i];
    for (;; i++) {
        if (step[i].kind != SG_BARRIER_NONE) return step[i];
        sg_node_id_t y = st->nodes[i + 1]; /* a step to nothing is a barrier */
        if (type[i + 1] == SG_NODE_MEM_FREE) {
            frees[(*nf)++] = y;
            continue;
        }
        const sg_node_t *ny = &g->nodes[y];
        if (type[i] != SG_NODE_KERNEL) {
            sg_barrier_t b = kernel_barrier(&g->nodes[a], ny);
            if (b.kind != SG_BARRIER_NONE) return b;
        }
        for (uint32_t k = 0; k < n_prior + *nf; k++) {
            sg_node_id_t f = k < n_prior ? prior[k] : frees[k - n_prior];
            if (touches_freed(g, ny, &g->nodes[f])) return barrier(SG_BARRIER_FREE_USE, f, SG_NONE);
        }
        *next = i + 1;
        return barrier(SG_BARRIER_NONE, SG_NONE, SG_NONE);
    }
}

void sg_fusion_chains_free(sg_fusion_chains_t *c)
{
    if (!c) return;
    free(c->chains);
    free(c->storage);
    free(c->free_storage);
    memset(c, 0, sizeof *c);
}

/* The finder on a given program order of g (the pass's input's, shared;
 * NULL: a snapshot and an order are built). Each
 * chain starts at the first kernel of its stream not in an earlier chain
 * and is extended through extend_barrier; the barrier that stops it is its
 * tail and the next chain's head. */
static int chains_find(const sg_graph_t *g, const sg_rw_streams_t *given, sg_fusion_chains_t *out)
{
    if (!g || !out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    sg_reach_t *r = NULL;
    sg_rw_streams_t own = {0};
    const sg_rw_streams_t *st = given;
    sg_node_id_t *pend = NULL;
    sg_barrier_t *step = NULL;
    uint8_t *type = NULL;
    int rc = SG_OK;
    if (!given) {
        if ((rc = sg_reach_build(g, 0, &r))) return rc;
        if ((rc = sg_rw_streams_build(g, r, &own))) goto out;
        st = &own;
    }
    uint32_t n_kernels = 0, n_frees = 0;
    for (uint32_t i = 0; i < st->n_ids; i++) {
        n_kernels += st->type[i] == SG_NODE_KERNEL;
        n_frees += st->type[i] == SG_NODE_MEM_FREE;
    }
    out->storage = malloc((n_kernels ? n_kernels : 1) * sizeof *out->storage);
    out->chains = malloc((n_kernels ? n_kernels : 1) * sizeof *out->chains);
    out->free_storage = malloc((n_frees ? n_frees : 1) * sizeof *out->free_storage);
    pend = malloc((n_frees ? n_frees : 1) * sizeof *pend);
    if (!out->storage || !out->chains || !out->free_storage || !pend) {
        rc = SG_ENOMEM;
        goto out;
    }
    /* Every step check reads both nodes and their edges: done in id order
     * (a captured graph interleaves its streams, so walking one stream at a
     * time would touch the node array out of order, a cache miss per node
     * on a large graph), results kept by stream position: step[i] from the
     * node at i to the one after it (for kernels and frees, the nodes a
     * chain is extended from), type[i] the node's type. */
    uint32_t n_pos = st->start[st->n_streams];
    step = malloc((n_pos ? n_pos : 1) * sizeof *step);
    type = malloc(n_pos ? n_pos : 1);
    if (!step || !type) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t v = 0; v < st->n_ids; v++) {
        uint32_t s = st->stream[v];
        /* header, edge lists and launch geometry: the whole node */
        sg_prefetch_node(g, v + SG_PREFETCH_AHEAD, sizeof *g->nodes);
        if (st->type[v] == SG_RW_REMOVED || s >= st->n_streams) continue;
        uint32_t i = st->start[s] + st->index[v];
        type[i] = st->type[v];
        if (type[i] != SG_NODE_KERNEL && type[i] != SG_NODE_MEM_FREE) continue;
        sg_node_id_t next = i + 1 < st->start[s + 1] ? st->nodes[i + 1] : SG_NONE;
        step[i] = step_barrier(g, st, v, next);
    }
    uint32_t used = 0, used_frees = 0;
    for (uint32_t s = 0; s < st->n_streams; s++) {
        sg_barrier_t head = barrier(SG_BARRIER_STREAM_START, SG_NONE, SG_NONE);
        for (uint32_t i = st->start[s]; i < st->start[s + 1]; i++) {
            if (type[i] != SG_NODE_KERNEL) continue;
            sg_node_id_t v = st->nodes[i];
            /* the node before v in program order */
            sg_node_id_t prev = i > st->start[s] ? st->nodes[i - 1] : SG_NONE;
            if (prev != SG_NONE && type[i - 1] != SG_NODE_KERNEL)
                head = barrier(type_barrier(type[i - 1]), prev, SG_NONE);
            else if (head.node == v)
                head.node = prev; /* seen from v, the node across is the kernel before */
            sg_fusion_chain_t *cur = &out->chains[out->n_chains++];
            cur->stream = s;
            cur->n_nodes = 1;
            cur->nodes = out->storage + used;
            cur->frees = out->free_storage + used_frees;
            cur->n_frees = 0;
            cur->head = head;
            out->storage[used++] = v;
            for (;;) {
                uint32_t next, nf;
                sg_barrier_t why = extend_barrier(g, st, step, type, i, cur->frees, cur->n_frees,
                                                  &next, pend, &nf);
                if (why.kind != SG_BARRIER_NONE) {
                    cur->tail = why;
                    head = why;
                    break;
                }
                memcpy(out->free_storage + used_frees, pend, nf * sizeof *pend);
                used_frees += nf;
                cur->n_frees += nf;
                out->storage[used++] = st->nodes[next];
                cur->n_nodes++;
                i = next; /* on to the chain's last kernel (frees in it included) */
            }
        }
    }
    for (uint32_t i = 0; i < st->n_ids; i++) {
        if (st->type[i] != SG_NODE_KERNEL || st->stream[i] < st->n_streams) continue;
        sg_fusion_chain_t *ch = &out->chains[out->n_chains++];
        ch->stream = SG_STREAM_EXPLICIT;
        ch->n_nodes = 1;
        ch->nodes = out->storage + used;
        ch->frees = out->free_storage + used_frees;
        ch->n_frees = 0;
        ch->head = ch->tail = barrier(SG_BARRIER_EXPLICIT, SG_NONE, SG_NONE);
        out->storage[used++] = i;
    }
    out->n_kernels = used;
    for (uint32_t c = 0; c < out->n_chains; c++) {
        if (out->chains[c].n_nodes >= 2) out->n_candidates++;
        out->tail_counts[out->chains[c].tail.kind]++;
    }
out:
    free(pend);
    free(step);
    free(type);
    sg_rw_streams_free(&own);
    sg_reach_destroy(r);
    if (rc) sg_fusion_chains_free(out);
    return rc;
}

int sg_fusion_chains_find(const sg_graph_t *g, sg_fusion_chains_t *out)
{
    return chains_find(g, NULL, out);
}

/* ---- the pass ---------------------------------------------------------------- */

/* What the report prints reads of the graph, read beforehand in id order
 * (the chains are printed by stream, and on a large graph each node or edge
 * looked up there costs a cache miss): the names of the nodes it names
 * (sg_rw_names_t), each candidate chain's geometry and each barrier edge.
 * A failure to make them only means each is read where it is printed. */
typedef struct {
    uint32_t grid[3], block[3];
} geometry_t;

typedef struct {
    sg_rw_names_t names;
    uint32_t *head_of; /* by node id: 1 + the ordinal of the candidate chain it heads, or 0 */
    geometry_t *geo;   /* by candidate ordinal */
    uint32_t *edge_at; /* by edge id: 1 + its index in edges, or 0 */
    sg_edge_t *edges;  /* the barrier edges, copied */
} facts_t;

static void take_geometry(void *user, sg_node_id_t id, const sg_node_t *x)
{
    facts_t *f = user;
    uint32_t k = f->head_of ? f->head_of[id] : 0;
    if (!k) return;
    memcpy(f->geo[k - 1].grid, x->u.kernel.grid, sizeof f->geo[k - 1].grid);
    memcpy(f->geo[k - 1].block, x->u.kernel.block, sizeof f->geo[k - 1].block);
}

static void facts_make(const sg_graph_t *g, const sg_fusion_chains_t *fc, bool list_singles,
                       facts_t *f)
{
    memset(f, 0, sizeof *f);
    uint8_t *want = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    f->head_of = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *f->head_of);
    f->geo = malloc((fc->n_candidates ? fc->n_candidates : 1) * sizeof *f->geo);
    f->edge_at = calloc(g->n_edges ? g->n_edges : 1, sizeof *f->edge_at);
    if (!f->head_of || !f->geo) {
        free(f->head_of);
        free(f->geo);
        f->head_of = NULL;
        f->geo = NULL;
    }
    uint32_t k = 0, n_edges = 0;
    for (uint32_t c = 0; c < fc->n_chains; c++) {
        const sg_fusion_chain_t *ch = &fc->chains[c];
        if (ch->n_nodes >= 2 && f->head_of) f->head_of[ch->nodes[0]] = ++k;
        if (ch->n_nodes < 2 && !list_singles) continue;
        if (want) {
            for (uint32_t i = 0; i < ch->n_nodes; i++)
                want[ch->nodes[i]] = 1;
            for (uint32_t i = 0; i < ch->n_frees; i++)
                want[ch->frees[i]] = 1;
            if (ch->head.node != SG_NONE) want[ch->head.node] = 1;
            if (ch->tail.node != SG_NONE) want[ch->tail.node] = 1;
        }
        const sg_barrier_t *b[2] = {&ch->head, &ch->tail};
        for (int i = 0; i < 2 && f->edge_at; i++)
            if (b[i]->edge < g->n_edges && !f->edge_at[b[i]->edge]) {
                f->edge_at[b[i]->edge] = UINT32_MAX; /* marked */
                n_edges++;
            }
    }
    if (want) {
        sg_rw_names_make(g, want, &f->names, take_geometry, f);
        free(want);
    } else {
        free(f->head_of);
        free(f->geo);
        f->head_of = NULL;
        f->geo = NULL;
    }
    if (f->edge_at && !(f->edges = malloc((n_edges ? n_edges : 1) * sizeof *f->edges))) {
        free(f->edge_at);
        f->edge_at = NULL;
    }
    for (uint32_t e = 0, n = 0; f->edge_at && e < g->n_edges; e++) {
        if (!f->edge_at[e]) continue;
        f->edges[n] = g->edges[e];
        f->edge_at[e] = ++n;
    }
}

static void facts_free(facts_t *f)
{
    sg_rw_names_free(&f->names);
    free(f->head_of);
    free(f->geo);
    free(f->edge_at);
    free(f->edges);
}

static const sg_edge_t *fact_edge(const facts_t *f, const sg_graph_t *g, sg_edge_id_t e)
{
    if (f->edge_at && e < g->n_edges && f->edge_at[e]) {
        const sg_edge_t *x = &f->edges[f->edge_at[e] - 1];
        return x->removed ? NULL : x;
    }
    return sg_graph_edge(g, e);
}

static void describe_barrier(const sg_graph_t *g, const facts_t *f, const sg_barrier_t *b,
                             char *buf, size_t n)
{
    char nbuf[200];
    const char *node =
        b->node != SG_NONE ? sg_rw_names_get(&f->names, g, b->node, nbuf, sizeof nbuf) : "";
    const sg_edge_t *e = b->edge != SG_NONE ? fact_edge(f, g, b->edge) : NULL;
    char edge[160] = "";
    if (e) {
        const sg_event_t *ev = sg_graph_event(g, e->event);
        snprintf(edge, sizeof edge, " via %s edge n%u -> n%u%s%s", sg_edge_kind_name(e->kind),
                 e->from, e->to, ev ? " on " : "", ev ? SG_RW_LABEL(ev->label) : "");
    }
    snprintf(buf, n, "%s%s%s%s", sg_barrier_kind_name(b->kind), node[0] ? " at " : "", node, edge);
}

static void barrier_jw(sg_jw_t *w, const char *key, const sg_barrier_t *b)
{
    sg_jw_key(w, key);
    sg_jw_object(w);
    sg_jw_kstring(w, "barrier", sg_barrier_kind_name(b->kind));
    sg_jw_kid(w, "node", b->node);
    sg_jw_kid(w, "edge", b->edge);
    sg_jw_end(w);
}

/* Single kernels are listed one per line when the graph is small; past
 * this many kernels the report keeps every candidate chain and only counts
 * the single ones (a 100k-node report of one line per kernel helps nobody
 * and costs more than the analysis). The API always has every chain. */
#define LIST_SINGLES_MAX 256

int sg_pass_fusion_legality(sg_pass_ctx_t *ctx)
{
    const sg_graph_t *g = ctx->g;
    sg_fusion_chains_t fc;
    int rc;
    const sg_rw_streams_t *st = sg_rw_input_streams(ctx, &rc);
    if (!st) return rc;
    if ((rc = chains_find(g, st, &fc))) return rc;
    bool list_singles = fc.n_kernels <= LIST_SINGLES_MAX;
    facts_t facts;
    facts_make(g, &fc, list_singles, &facts);
    /* a listed chain is ~250 bytes of text and ~400 of JSON: the buffers
     * grow once, not by doubling copies */
    uint32_t listed = list_singles ? fc.n_chains : fc.n_candidates;
    sg_rw_reserve(ctx, (size_t)listed * 256);
    sg_jw_t *arr = sg_rw_json_member(ctx, "chains");
    sg_jw_reserve(arr, (size_t)listed * 416);
    sg_jw_array(arr);
    uint32_t fused_away = 0, singles = 0, cand = 0;
    for (uint32_t c = 0; c < fc.n_chains; c++) {
        const sg_fusion_chain_t *ch = &fc.chains[c];
        char hb[400], tb[400], name[200];
        if (ch->n_nodes < 2) {
            singles++;
            if (!list_singles) continue;
        }
        describe_barrier(g, &facts, &ch->head, hb, sizeof hb);
        describe_barrier(g, &facts, &ch->tail, tb, sizeof tb);
        if (ch->n_nodes < 2) {
            sg_rw_printf(ctx, "single %s: %s\n  head: %s\n  tail: %s\n",
                         SG_RW_STREAM(g, ch->stream),
                         sg_rw_names_get(&facts.names, g, ch->nodes[0], name, sizeof name), hb, tb);
        } else {
            const sg_kernel_t *k0 = &g->nodes[ch->nodes[0]].u.kernel;
            const uint32_t *grid = facts.geo ? facts.geo[cand].grid : k0->grid;
            const uint32_t *block = facts.geo ? facts.geo[cand].block : k0->block;
            sg_rw_printf(ctx, "chain %s: %u kernels, grid %ux%ux%u block %ux%ux%u\n",
                         SG_RW_STREAM(g, ch->stream), ch->n_nodes, grid[0], grid[1], grid[2],
                         block[0], block[1], block[2]);
            for (uint32_t i = 0; i < ch->n_nodes; i++)
                sg_rw_printf(ctx, "  %s\n",
                             sg_rw_names_get(&facts.names, g, ch->nodes[i], name, sizeof name));
            for (uint32_t i = 0; i < ch->n_frees; i++)
                sg_rw_printf(ctx, "  passes %s (fusion sinks it below the chain)\n",
                             sg_rw_names_get(&facts.names, g, ch->frees[i], name, sizeof name));
            sg_rw_printf(ctx, "  head: %s\n  tail: %s\n", hb, tb);
            fused_away += ch->n_nodes - 1;
            cand++;
        }
        sg_jw_object(arr);
        sg_jw_kstring(arr, "stream", sg_rw_stream_label(g, ch->stream));
        sg_jw_key(arr, "nodes");
        sg_jw_array(arr);
        for (uint32_t i = 0; i < ch->n_nodes; i++) sg_jw_int(arr, ch->nodes[i]);
        sg_jw_end(arr);
        sg_jw_key(arr, "frees");
        sg_jw_array(arr);
        for (uint32_t i = 0; i < ch->n_frees; i++) sg_jw_int(arr, ch->frees[i]);
        sg_jw_end(arr);
        barrier_jw(arr, "head", &ch->head);
        barrier_jw(arr, "tail", &ch->tail);
        sg_jw_end(arr);
    }
    facts_free(&facts);
    if (!list_singles && singles)
        sg_rw_printf(ctx, "%u single %s (chains of 1) not listed (more than %d kernels)\n",
                     singles, sg_plural(singles, "kernel", "kernels"), LIST_SINGLES_MAX);
    json_t *counts = json_object();
    sg_rw_printf(ctx, "chain ends by barrier:");
    for (int k = 1; k < SG_BARRIER_KIND_COUNT; k++) {
        if (!fc.tail_counts[k]) continue;
        sg_rw_printf(ctx, " %s %u", sg_barrier_kind_name(k), fc.tail_counts[k]);
        json_object_set_new(counts, sg_barrier_kind_name(k), json_integer(fc.tail_counts[k]));
    }
    sg_rw_printf(ctx, "%s\n", fc.n_chains ? "" : " (no kernels)");
    sg_jw_end(arr);
    sg_rw_json_set(ctx, "singles_listed", json_boolean(list_singles));
    sg_rw_json_set(ctx, "tail_barriers", counts);
    sg_rw_json_set(ctx, "kernels", json_integer(fc.n_kernels));
    sg_rw_json_set(ctx, "candidates", json_integer(fc.n_candidates));
    sg_rw_summary(ctx,
                  "%u %s in %u %s, %u fusion %s (chains of >= 2) covering %u %s that fusion "
                  "could remove; graph unchanged",
                  fc.n_kernels, sg_plural(fc.n_kernels, "kernel", "kernels"), fc.n_chains,
                  sg_plural(fc.n_chains, "chain", "chains"), fc.n_candidates,
                  sg_plural(fc.n_candidates, "candidate", "candidates"), fused_away,
                  sg_plural(fused_away, "launch", "launches"));
    sg_fusion_chains_free(&fc);
    return SG_OK;
}
