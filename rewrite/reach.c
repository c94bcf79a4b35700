/* reach.c: chain-decomposition reachability oracle (see reach.h for the
 * method and its cost). */
#include "reach.h"

#include <stdlib.h>
#include <string.h>

#include "prefetch.h"

/* Entries (int32) one clock table may hold: bounds memory at 64 MiB per
 * table whatever the graph's width. */
#define REACH_BUDGET (1u << 24)

/* The live nodes' adjacency by node id, read from the model in one pass in
 * id order (the model keeps each node's edges in a small array of its own,
 * and a node is ~200 bytes: every later walk goes over these compact arrays
 * instead). Neighbours keep the order of the node's in/out arrays, so the
 * topological order below is the one the model's adjacency gives. */
typedef struct {
    uint32_t *out_start, *out, *in_start, *in;
    uint32_t *stream; /* by id */
    /* By id, when the nodes were read for this adjacency (id_adj_build, or
     * for an earlier one it extends; not id_adj_from_edges): each node's
     * type (SG_REACH_REMOVED for a removed id) and capture sequence number. */
    uint8_t *type;
    uint64_t *seq;
} id_adj_t;

struct sg_reach {
    const sg_graph_t *g;
    unsigned flags;
    sg_node_id_t *order; /* topological order, live nodes */
    uint32_t n_order;
    /* by node id: its rank (UINT32_MAX for removed), chain and position on
     * it, side by side (a query reads all three of both nodes) */
    struct {
        uint32_t rank, chain, pos;
    } *node;
    uint32_t n_ids;      /* g->n_nodes at build time */
    uint32_t n_chains;
    uint32_t width;      /* chains per block */
    uint32_t loaded;     /* loaded block, UINT32_MAX for none */
    int32_t *R;          /* n_order rows of `width`, indexed by rank */
    int32_t *F;
    /* adjacency by rank, compact (the clock loops walk it V * k times) */
    uint32_t *in_start, *in_rank, *out_start, *out_rank;
    /* the poset-chain builder's clock rows (jagged, by rank), reused as R */
    int32_t *rows;
    uint32_t *row_off; /* entries before each row (the budget keeps them in 32 bits) */
    uint32_t *row_len;
    /* rows [0, flat_rows) lie at i * flat_stride, flat_stride entries each
     * (-1 past the chains made before them), and have no row_off/row_len */
    uint32_t flat_rows, flat_stride;
    uint32_t stride;     /* > 0: row i is at i * stride, full width (see build_poset_chains) */
    /* DFS scratch for queries outside the loaded block (by rank; only when
     * the clocks do not fit in one block) */
    uint32_t *stamp;
    uint32_t stamp_now;
    uint32_t *stack;
    /* the adjacency by id it was built from, and the edge counts then: a
     * later snapshot of a graph that only gained edges starts from it
     * (sg_reach_build_after) */
    id_adj_t adj;
    uint32_t n_edges, live_edges;
    bool exact; /* adj is in the model's list order (not sg_reach_build_query's) */
};

static void forward_clocks(sg_reach_t *r, uint32_t c0, uint32_t cw);
static void id_adj_free(id_adj_t *a);
static bool live(const sg_reach_t *r, sg_node_id_t v);

void sg_reach_destroy(sg_reach_t *r)
{
    if (!r) return;
    free(r->order);
    free(r->node);
    free(r->R);
    free(r->F);
    free(r->stamp);
    free(r->stack);
    free(r->rows);
    free(r->row_off);
    free(r->row_len);
    free(r->in_start);
    free(r->in_rank);
    free(r->out_start);
    free(r->out_rank);
    id_adj_free(&r->adj);
    free(r);
}

/* Greedy path cover in topological order: a node continues the chain of an
 * in-neighbour that is still that chain's tail, preferring one on its own
 * stream (so a stream joined by stream edges is one chain) and then the
 * latest enqueued. */
static int build_chains(sg_reach_t *r)
{
    const sg_graph_t *g = r->g;
    uint32_t *tail = malloc((r->n_order ? r->n_order : 1) * sizeof *tail);
    if (!tail) return SG_ENOMEM;
    uint32_t n_chains = 0;
    for (uint32_t i = 0; i < r->n_order; i++) {
        sg_node_id_t v = r->order[i];
        const sg_node_t *nv = &g->nodes[v];
        sg_node_id_t best = SG_NONE;
        bool best_same = false;
        for (uint32_t k = 0; k < nv->n_in; k++) {
            sg_node_id_t u = g->edges[nv->in[k]].from;
            if (tail[r->node[u].chain] != u) continue;
            bool same = g->nodes[u].stream == nv->stream;
            if (best == SG_NONE || (same && !best_same) ||
                (same == best_same && g->nodes[u].seq > g->nodes[best].seq)) {
                best = u;
                best_same = same;
            }
        }
        if (best != SG_NONE) {
            r->node[v].chain = r->node[best].chain;
            r->node[v].pos = r->node[best].pos + 1;
        } else {
            r->node[v].chain = n_chains++;
            r->node[v].pos = 0;
        }
        tail[r->node[v].chain] = v;
    }
    free(tail);
    r->n_chains = n_chains;
    return SG_OK;
}

/* The node facts by id (stream, type, sequence number) are shared between
 * a snapshot and the ones built from it while the nodes keep them (a build
 * from an earlier snapshot would otherwise copy ~13 bytes a node that did
 * not change): each array counts its holders in a header before it, and a
 * build that changes one makes a copy of its own first. */
enum { FACTS_HDR = 16 }; /* keeps the array 16-byte aligned */

static void *facts_new(size_t bytes)
{
    char *h = malloc(FACTS_HDR + (bytes ? bytes : 1));
    if (!h) return NULL;
    *(size_t *)h = 1;
    return h + FACTS_HDR;
}

static size_t *facts_refs(const void *p)
{
    return (size_t *)((char *)(uintptr_t)p - FACTS_HDR);
}

/* One more holder of p (the count is no part of the snapshot p is read
 * from, so a const snapshot may be shared). */
static void *facts_ref(const void *p)
{
    if (p) ++*facts_refs(p);
    return (void *)(uintptr_t)p;
}

static void facts_drop(void *p)
{
    if (p && --*facts_refs(p) == 0) free(facts_refs(p));
}

/* Make *p the caller's own before a write: a copy when it is shared. */
static int facts_own(void **p, size_t bytes)
{
    if (*facts_refs(*p) == 1) return SG_OK;
    void *q = facts_new(bytes);
    if (!q) return SG_ENOMEM;
    memcpy(q, *p, bytes);
    facts_drop(*p);
    *p = q;
    return SG_OK;
}

static void id_adj_free(id_adj_t *a)
{
    free(a->out_start);
    free(a->out);
    free(a->in_start);
    free(a->in);
    facts_drop(a->stream);
    facts_drop(a->type);
    facts_drop(a->seq);
}

/* The arrays of an adjacency of n nodes and ne edges; the streams are
 * prev_stream shared, or a new array when it is NULL. */
static int id_adj_alloc(id_adj_t *a, uint32_t n, size_t ne, const uint32_t *prev_stream)
{
    memset(a, 0, sizeof *a);
    a->out_start = calloc((size_t)n + 1, sizeof *a->out_start);
    a->in_start = calloc((size_t)n + 1, sizeof *a->in_start);
    a->out = malloc((ne ? ne : 1) * sizeof *a->out);
    a->in = malloc((ne ? ne : 1) * sizeof *a->in);
    a->stream = prev_stream ? facts_ref(prev_stream) : facts_new((size_t)n * sizeof *a->stream);
    if (!a->out_start || !a->in_start || !a->out || !a->in || !a->stream) {
        id_adj_free(a);
        return SG_ENOMEM;
    }
    return SG_OK;
}

/* The lists of the live edges in edge id order, from one pass over the edge
 * array (counting sort by endpoint); live[] says which nodes are live. An
 * edge at a removed or unknown node is an inconsistent model: SG_EINVAL. */
static int id_adj_fill_from_edges(const sg_graph_t *g, const uint8_t *live, id_adj_t *a)
{
    uint32_t n = g->n_nodes, count = 0;
    uint32_t *fo = malloc((n ? n : 1) * sizeof *fo), *fi = malloc((n ? n : 1) * sizeof *fi);
    int rc = SG_OK;
    if (!fo || !fi) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed) continue;
        if (e->from >= n || e->to >= n || !live[e->from] || !live[e->to] ||
            ++count > g->live_edges) {
            rc = SG_EINVAL;
            goto out;
        }
        a->out_start[e->from + 1]++;
        a->in_start[e->to + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        a->out_start[i + 1] += a->out_start[i];
        a->in_start[i + 1] += a->in_start[i];
    }
    if (n) {
        memcpy(fo, a->out_start, n * sizeof *fo);
        memcpy(fi, a->in_start, n * sizeof *fi);
    }
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed) continue;
        a->out[fo[e->from]++] = e->to;
        a->in[fi[e->to]++] = e->from;
    }
out:
    free(fo);
    free(fi);
    return rc;
}

/* The model's adjacency, in the order of each node's lists. While the lists
 * are in edge id order (graph.h: lists_unordered), that order is the edge
 * array's: read in one pass, with one pass over the node array for streams
 * and liveness, instead of each node's lists (separate small arrays) and
 * an edge array entry per list entry. */
static int id_adj_build(const sg_graph_t *g, id_adj_t *a)
{
    uint32_t n = g->n_nodes;
    size_t ne = g->live_edges;
    int rc = id_adj_alloc(a, n, ne, NULL);
    if (rc) return rc;
    a->type = facts_new(n);
    a->seq = facts_new((size_t)n * sizeof *a->seq);
    if (!a->type || !a->seq) {
        id_adj_free(a);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const sg_node_t *x = &g->nodes[i];
        sg_prefetch_node(g, i + SG_PREFETCH_AHEAD, 48); /* the header */
        a->stream[i] = x->stream;
        a->type[i] = x->removed ? SG_REACH_REMOVED : (uint8_t)x->type;
        a->seq[i] = x->seq;
    }
    if (!g->lists_unordered) {
        uint8_t *alive = malloc(n ? n : 1);
        if (!alive) {
            id_adj_free(a);
            return SG_ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) alive[i] = a->type[i] != SG_REACH_REMOVED;
        rc = id_adj_fill_from_edges(g, alive, a);
        free(alive);
        if (rc) id_adj_free(a);
        return rc;
    }
    uint32_t no = 0, ni = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_node_t *x = &g->nodes[i];
        a->out_start[i] = no;
        a->in_start[i] = ni;
        if (x->removed) continue;
        if (no + (size_t)x->n_out > ne || ni + (size_t)x->n_in > ne) { /* inconsistent model */
            id_adj_free(a);
            return SG_EINVAL;
        }
        for (uint32_t k = 0; k < x->n_out; k++) a->out[no++] = g->edges[x->out[k]].to;
        for (uint32_t k = 0; k < x->n_in; k++) a->in[ni++] = g->edges[x->in[k]].from;
    }
    a->out_start[n] = no;
    a->in_start[n] = ni;
    return SG_OK;
}

/* Kahn's algorithm with a FIFO: O(V+E) and cache-friendly, where the
 * model's sg_graph_topo_order keeps a heap to order ties by capture
 * sequence (O(V log V)); any topological order serves here, and this one is
 * deterministic (roots by id, then adjacency order). */
static int topo_order(const sg_graph_t *g, const id_adj_t *a, sg_node_id_t **out,
                      uint32_t *n_out)
{
    uint32_t n = g->n_nodes;
    uint32_t *indeg = malloc((n ? n : 1) * sizeof *indeg);
    sg_node_id_t *q = malloc((g->live_nodes ? g->live_nodes : 1) * sizeof *q);
    if (!indeg || !q) {
        free(indeg);
        free(q);
        return SG_ENOMEM;
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        indeg[i] = a->in_start[i + 1] - a->in_start[i];
        if (indeg[i] == 0 && !g->nodes[i].removed) q[tail++] = i;
    }
    while (head < tail) {
        sg_node_id_t x = q[head++];
        for (uint32_t k = a->out_start[x]; k < a->out_start[x + 1]; k++)
            if (--indeg[a->out[k]] == 0) q[tail++] = a->out[k];
    }
    free(indeg);
    if (tail != g->live_nodes) {
        free(q);
        return SG_ECYCLE;
    }
    *out = q;
    *n_out = tail;
    return SG_OK;
}

/* The predecessors of the live nodes by topological rank (the clocks are
 * made from them). */
static int build_csr(sg_reach_t *r, const id_adj_t *a)
{
    uint32_t n = r->n_order;
    r->in_start = malloc(((size_t)n + 1) * sizeof *r->in_start);
    if (!r->in_start) return SG_ENOMEM;
    r->in_start[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        sg_node_id_t v = r->order[i];
        r->in_start[i + 1] = r->in_start[i] + (a->in_start[v + 1] - a->in_start[v]);
    }
    r->in_rank = malloc((r->in_start[n] ? r->in_start[n] : 1) * sizeof *r->in_rank);
    if (!r->in_rank) return SG_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        sg_node_id_t v = r->order[i];
        uint32_t *in = r->in_rank + r->in_start[i];
        for (uint32_t k = a->in_start[v]; k < a->in_start[v + 1]; k++) *in++ = r->node[a->in[k]].rank;
    }
    return SG_OK;
}

/* The successors by rank, made when first needed: only the forward clocks
 * and the bounded search of a snapshot whose clocks are in blocks walk
 * them, and most snapshots have neither (a pass's, until
 * sg_reach_forward). */
static int build_csr_out(sg_reach_t *r)
{
    if (r->out_rank) return SG_OK;
    const id_adj_t *a = &r->adj;
    uint32_t n = r->n_order;
    uint32_t *start = malloc(((size_t)n + 1) * sizeof *start);
    if (!start) return SG_ENOMEM;
    start[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        sg_node_id_t v = r->order[i];
        start[i + 1] = start[i] + (a->out_start[v + 1] - a->out_start[v]);
    }
    uint32_t *rank = malloc((start[n] ? start[n] : 1) * sizeof *rank);
    if (!rank) {
        free(start);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        sg_node_id_t v = r->order[i];
        uint32_t *out = rank + start[i];
        for (uint32_t k = a->out_start[v]; k < a->out_start[v + 1]; k++) *out++ = r->node[a->out[k]].rank;
    }
    r->out_start = start;
    r->out_rank = rank;
    return SG_OK;
}

/* Chains that need not be paths, only totally ordered by reachability
 * (that is all the clocks need): in topological order, each node gets the
 * clock row of its ancestors over the chains made so far (rows grow with
 * the chain count: earlier nodes cannot reach later chains), and continues
 * the chain of its stream's latest node when that node reaches it (through
 * any path: a stream whose consecutive nodes are ordered only through other
 * streams, e.g. after transitive reduction, stays one chain), else the
 * chain of an in-neighbour that is a tail. Returns SG_ELIMIT when the rows
 * would pass the budget (a graph too wide for this): the caller falls back
 * to build_chains.
 *
 * A captured graph has about one chain per stream, so each row is given
 * that many entries from the start (the count of streams with nodes, -1
 * beyond the row's chains), while the chains fit: the rows then lie at a
 * fixed stride and are R as they are when there are as many chains
 * (r->stride), where jagged rows must be spread into the table afterwards
 * (a move of the whole table). Rows made after the chains
 * outgrow the stride are jagged as before. The budget and every decision
 * count the entries of the jagged rows either way. */
/* Where row i of the builder's rows starts, and its entries. */
static size_t row_start(const sg_reach_t *r, uint32_t i)
{
    return i < r->flat_rows ? (size_t)i * r->flat_stride : r->row_off[i];
}

static uint32_t row_length(const sg_reach_t *r, uint32_t i)
{
    return i < r->flat_rows ? r->flat_stride : r->row_len[i];
}

static int build_poset_chains(sg_reach_t *r)
{
    const sg_graph_t *g = r->g;
    size_t n = r->n_order;
    uint32_t *off = malloc((n ? n : 1) * sizeof *off);
    uint32_t *len = malloc((n ? n : 1) * sizeof *len);
    uint32_t *tail = malloc((n ? n : 1) * sizeof *tail);     /* by chain: rank of its tail */
    uint32_t *chain = malloc((n ? n : 1) * sizeof *chain);   /* by rank */
    uint32_t *pos = malloc((n ? n : 1) * sizeof *pos);       /* by rank */
    uint32_t ns = g->root->n_streams;
    uint32_t *stream_chain = malloc((ns ? ns : 1) * sizeof *stream_chain);
    int32_t *arena = NULL;
    int rc = SG_OK;
    if (!off || !len || !tail || !chain || !pos || !stream_chain) {
        rc = SG_ENOMEM;
        goto out;
    }
    /* one entry per stream that has nodes, while the chains fit */
    for (uint32_t i = 0; i < ns; i++) stream_chain[i] = UINT32_MAX;
    uint32_t stride = 0;
    const uint32_t *stream_of = r->adj.stream; /* by id: read through the order */
    for (size_t i = 0; i < n; i++) {
        uint32_t st = stream_of[r->order[i]];
        if (st < ns && stream_chain[st] == UINT32_MAX) stream_chain[st] = 0, stride++;
    }
    for (uint32_t i = 0; i < ns; i++) stream_chain[i] = UINT32_MAX;
    if (stride > 64 || (uint64_t)n * stride > REACH_BUDGET) stride = 0;
    size_t cap = (stride ? n * stride : n * 4) + 16, used = 0;
    /* rows before flat (all while the stride holds) are at i * stride0 with
     * stride0 entries: their offsets and lengths are not written */
    uint32_t stride0 = stride, flat = stride ? (uint32_t)n : 0;
    if (!(arena = malloc(cap * sizeof *arena))) {
        rc = SG_ENOMEM;
        goto out;
    }
    uint32_t k = 0;
    /* the entries of the rows laid out jagged, and the capacity a jagged
     * arena would have: the budget is checked when that one grows */
    size_t jagged = 0, jcap = n * 4 + 16;
    for (size_t i = 0; i < n; i++) {
        sg_node_id_t v = r->order[i];
        uint32_t stream = stream_of[v];
        if (jagged + k + 1 > jcap) {
            if (jagged + k + 1 > REACH_BUDGET) {
                rc = SG_ELIMIT;
                goto out;
            }
            jcap = jcap * 2 > jagged + k + 1 ? jcap * 2 : jagged + k + 1;
        }
        /* room for k + 1 entries (a new chain may start here) and a row */
        size_t room = stride > k + 1 ? stride : k + 1;
        if (used + room > cap) {
            size_t nc = cap * 2 > used + room ? cap * 2 : used + room;
            int32_t *p = realloc(arena, nc * sizeof *p);
            if (!p) {
                rc = SG_ENOMEM;
                goto out;
            }
            arena = p;
            cap = nc;
        }
        int32_t *row = arena + used;
        /* the rows are written in order into memory that is not in the
         * cache on a large graph: asked for 1 KB ahead, for writing */
        if (used + 256 < cap) __builtin_prefetch(arena + used + 256, 1);
        for (uint32_t c = 0; c < (stride ? stride : k); c++) row[c] = -1;
        const uint32_t *in = r->in_rank + r->in_start[i];
        uint32_t nin = r->in_start[i + 1] - r->in_start[i];
        for (uint32_t e = 0; e < nin; e++) {
            uint32_t j = in[e];
            const int32_t *ru = arena + (j < flat ? (size_t)j * stride0 : off[j]);
            uint32_t lu = j < flat ? stride0 : len[j];
            for (uint32_t c = 0; c < lu; c++)
                row[c] = ru[c] > row[c] ? ru[c] : row[c]; /* no branch: its outcome is data */
        }
        uint32_t pick = UINT32_MAX;
        uint32_t sc = stream < ns ? stream_chain[stream] : UINT32_MAX;
        if (sc != UINT32_MAX && row[sc] == (int32_t)pos[tail[sc]]) pick = sc;
        for (uint32_t e = 0; e < nin && pick == UINT32_MAX; e++)
            if (tail[chain[in[e]]] == in[e]) pick = chain[in[e]];
        if (pick == UINT32_MAX) {
            pick = k++;
            row[pick] = -1;
            pos[i] = 0;
        } else {
            pos[i] = pos[tail[pick]] + 1;
        }
        chain[i] = pick;
        r->node[v].chain = pick; /* by id too, while the order's entry is at hand */
        r->node[v].pos = pos[i];
        tail[pick] = (uint32_t)i;
        row[pick] = (int32_t)pos[i];
        if (k > stride && stride) { /* the chains outgrew it: jagged from this row on */
            stride = 0;
            flat = (uint32_t)i;
        }
        if (!stride) {
            off[i] = (uint32_t)used; /* used <= max(4n + 16, n * stride, REACH_BUDGET) */
            len[i] = k;
        }
        used += stride ? stride : k;
        jagged += k;
        if (stream < ns) stream_chain[stream] = pick;
    }
    r->n_chains = k;
    r->stride = stride; /* still > 0: every row is at i * stride */
    r->rows = arena; /* kept: they are R for all chains */
    r->row_off = off;
    r->row_len = len;
    r->flat_rows = flat;
    r->flat_stride = stride0;
    arena = NULL;
    off = NULL;
    len = NULL;
out:
    free(off);
    free(len);
    free(tail);
    free(chain);
    free(pos);
    free(stream_chain);
    free(arena);
    return rc;
}

/* The snapshot of g from its adjacency by id (owned by the snapshot from
 * here on, freed on failure). */
static int build_from_adj(const sg_graph_t *g, unsigned flags, id_adj_t adj, sg_reach_t **out)
{
    sg_reach_t *r = calloc(1, sizeof *r);
    if (!r) {
        id_adj_free(&adj);
        return SG_ENOMEM;
    }
    r->g = g;
    r->flags = flags;
    r->loaded = UINT32_MAX;
    r->n_edges = g->n_edges;
    r->live_edges = g->live_edges;
    r->adj = adj;
    int rc = topo_order(g, &r->adj, &r->order, &r->n_order);
    if (rc) {
        sg_reach_destroy(r);
        return rc;
    }
    r->n_ids = g->n_nodes;
    size_t ids = r->n_ids ? r->n_ids : 1;
    r->node = calloc(ids, sizeof *r->node);
    if (!r->node) {
        sg_reach_destroy(r);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < r->n_ids; i++) r->node[i].rank = UINT32_MAX;
    for (uint32_t i = 0; i < r->n_order; i++) r->node[r->order[i]].rank = i;
    rc = build_csr(r, &r->adj);
    if (rc == SG_OK) rc = build_poset_chains(r);
    if (rc == SG_ELIMIT) rc = build_chains(r);
    if (rc) {
        sg_reach_destroy(r);
        return rc;
    }
    uint64_t rows = r->n_order ? r->n_order : 1;
    uint64_t w = r->n_chains ? r->n_chains : 1;
    if (w * rows > REACH_BUDGET) w = REACH_BUDGET / rows ? REACH_BUDGET / rows : 1;
    if ((flags & SG_REACH_NARROW) && w > 2) w = 2;
    r->width = (uint32_t)w;
    if ((r->n_chains > r->width || (flags & SG_REACH_FORWARD)) && build_csr_out(r)) {
        sg_reach_destroy(r);
        return SG_ENOMEM;
    }
    if (r->n_chains > r->width) {
        r->stamp = calloc(rows, sizeof *r->stamp);
        r->stack = malloc(rows * sizeof *r->stack);
        if (!r->stamp || !r->stack) {
            sg_reach_destroy(r);
            return SG_ENOMEM;
        }
    }
    bool rows_are_R = r->rows && r->n_chains <= r->width && r->n_chains > 0;
    if (rows_are_R) {
        /* The builder's rows are R already, jagged (a row holds the chains
         * made before it): spread them into the table in place, last row
         * first (row i moves up to i * w, and every earlier row lies below
         * its start), instead of copying them into a second table. Only
         * the forward clocks remain to compute. */
        int32_t *t = r->rows;
        if (r->stride && r->stride != w) {
            /* rows at a wider stride (fewer chains than streams) move down
             * to i * w, first row first */
            for (uint32_t i = 0; i < r->n_order; i++)
                memmove(t + (size_t)i * w, t + row_start(r, i), w * sizeof *t);
        }
        if (!r->stride || r->stride != w) {
            t = realloc(r->rows, (size_t)(w * rows) * sizeof *t);
            if (!t) {
                sg_reach_destroy(r);
                return SG_ENOMEM;
            }
        }
        r->rows = NULL;
        r->R = t;
        for (uint32_t i = r->n_order; !r->stride && i-- > 0;) {
            int32_t *row = t + (size_t)i * w;
            uint32_t l = row_length(r, i);
            memmove(row, t + row_start(r, i), l * sizeof *row);
            for (uint32_t c = l; c < w; c++)
                row[c] = -1;
        }
    } else {
        r->R = malloc((size_t)(w * rows) * sizeof *r->R);
    }
    if (flags & SG_REACH_FORWARD) r->F = malloc((size_t)(w * rows) * sizeof *r->F);
    if (!r->R || ((flags & SG_REACH_FORWARD) && !r->F)) {
        sg_reach_destroy(r);
        return SG_ENOMEM;
    }
    if (rows_are_R) {
        if (r->F) forward_clocks(r, 0, r->n_chains);
        r->loaded = 0;
    } else if (r->n_chains <= r->width && r->n_chains > 0) {
        sg_reach_load_block(r, 0, NULL, NULL);
    }
    free(r->rows);
    free(r->row_off);
    free(r->row_len);
    r->rows = NULL;
    r->row_off = NULL;
    r->row_len = NULL;
    *out = r;
    return SG_OK;
}

int sg_reach_build(const sg_graph_t *g, unsigned flags, sg_reach_t **out)
{
    if (!g || !out) return SG_EINVAL;
    *out = NULL;
    id_adj_t adj;
    int rc = id_adj_build(g, &adj);
    if (rc == SG_OK) rc = build_from_adj(g, flags, adj, out);
    if (rc == SG_OK) (*out)->exact = true;
    return rc;
}

/* Has g only gained edges since prev was taken of it: the same nodes (ids
 * are never reused, so equal id and live counts mean none was added or
 * removed), every edge prev saw still there and every newer edge live? A
 * removal anywhere reorders a node's edge list (the model swaps the last
 * entry into the hole), so then the adjacency is read again. */
static bool only_added_edges(const sg_graph_t *g, const sg_reach_t *prev)
{
    if (!prev->exact || prev->g != g || g->n_nodes != prev->n_ids ||
        g->live_nodes != prev->n_order || g->n_edges < prev->n_edges)
        return false;
    uint32_t added = g->n_edges - prev->n_edges;
    for (uint32_t i = prev->n_edges; i < g->n_edges; i++)
        if (g->edges[i].removed) return false;
    return g->live_edges == prev->live_edges + added;
}

/* prev's adjacency with the edges added since (ids prev->n_edges on),
 * appended in id order to each node's lists, as the model appends them: the
 * lists id_adj_build would read, made from compact arrays and the new
 * edges alone; with `facts`, prev's node facts too. */
static int id_adj_extend(const sg_graph_t *g, const sg_reach_t *prev, bool facts, id_adj_t *a)
{
    const id_adj_t *p = &prev->adj;
    uint32_t n = g->n_nodes, e0 = prev->n_edges;
    memset(a, 0, sizeof *a);
    a->out_start = calloc((size_t)n + 1, sizeof *a->out_start);
    a->in_start = calloc((size_t)n + 1, sizeof *a->in_start);
    size_t ne = g->live_edges ? g->live_edges : 1;
    a->out = malloc(ne * sizeof *a->out);
    a->in = malloc(ne * sizeof *a->in);
    /* a node keeps its stream, type and sequence number (sg_reach_node_facts):
     * prev's, shared */
    a->stream = facts_ref(p->stream);
    if (facts && p->type) {
        a->type = facts_ref(p->type);
        a->seq = facts_ref(p->seq);
    }
    uint32_t *fo = malloc((n ? n : 1) * sizeof *fo), *fi = malloc((n ? n : 1) * sizeof *fi);
    if (!a->out_start || !a->in_start || !a->out || !a->in || !fo || !fi) {
        free(fo);
        free(fi);
        id_adj_free(a);
        return SG_ENOMEM;
    }
    for (uint32_t i = e0; i < g->n_edges; i++) {
        a->out_start[g->edges[i].from + 1]++;
        a->in_start[g->edges[i].to + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        a->out_start[i + 1] += a->out_start[i] + (p->out_start[i + 1] - p->out_start[i]);
        a->in_start[i + 1] += a->in_start[i] + (p->in_start[i + 1] - p->in_start[i]);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t lo = p->out_start[i + 1] - p->out_start[i], li = p->in_start[i + 1] - p->in_start[i];
        memcpy(a->out + a->out_start[i], p->out + p->out_start[i], lo * sizeof *a->out);
        memcpy(a->in + a->in_start[i], p->in + p->in_start[i], li * sizeof *a->in);
        fo[i] = a->out_start[i] + lo;
        fi[i] = a->in_start[i] + li;
    }
    for (uint32_t i = e0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        a->out[fo[e->from]++] = e->to;
        a->in[fi[e->to]++] = e->from;
    }
    free(fo);
    free(fi);
    return SG_OK;
}

int sg_reach_build_after(const sg_graph_t *g, const sg_reach_t *prev, unsigned flags,
                         sg_reach_t **out)
{
    if (!g || !out) return SG_EINVAL;
    if (!prev || !only_added_edges(g, prev)) return sg_reach_build(g, flags, out);
    *out = NULL;
    id_adj_t adj;
    int rc = id_adj_extend(g, prev, true, &adj);
    if (rc == SG_OK) rc = build_from_adj(g, flags, adj, out);
    if (rc == SG_OK) (*out)->exact = true;
    return rc;
}

/* Has g the node set prev was taken of (ids are never reused: with as many
 * ids and live nodes, no node was added or removed)? */
static bool same_nodes(const sg_graph_t *g, const sg_reach_t *prev)
{
    return prev->g == g && g->n_nodes == prev->n_ids && g->live_nodes == prev->n_order;
}

/* The adjacency of g's live edges in edge id order, one pass over the edge
 * array: the nodes are prev's (same_nodes), so the node array is not read
 * at all. Streams are prev's: a pass that moved a node to another stream
 * only changes how the chains fall, not reachability. */
static int id_adj_from_edges(const sg_graph_t *g, const sg_reach_t *prev, id_adj_t *a)
{
    uint32_t n = g->n_nodes;
    int rc = id_adj_alloc(a, n, g->live_edges, prev->adj.stream);
    if (rc) return rc;
    uint8_t *alive = malloc(n ? n : 1);
    if (!alive) {
        id_adj_free(a);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        alive[i] = live(prev, i);
    rc = id_adj_fill_from_edges(g, alive, a);
    free(alive);
    if (rc) id_adj_free(a);
    return rc;
}

int sg_reach_build_query(const sg_graph_t *g, const sg_reach_t *prev, unsigned flags,
                         sg_reach_t **out)
{
    if (!g || !out) return SG_EINVAL;
    if (!prev || only_added_edges(g, prev) || !same_nodes(g, prev))
        return sg_reach_build_after(g, prev, flags, out);
    *out = NULL;
    id_adj_t adj;
    int rc = id_adj_from_edges(g, prev, &adj);
    return rc ? rc : build_from_adj(g, flags, adj, out);
}

/* prev's adjacency and node facts with the lists and fields of the nodes
 * marked in `touched` (by id) read again from the model: exactly what
 * id_adj_build would read when only those nodes changed since prev (an
 * edge added or removed changes only its two ends' lists, the removal by
 * moving an entry within them). Lists that do not add up to the graph's
 * live edges mean a changed node was not marked: SG_EINVAL. */
static int id_adj_edit(const sg_graph_t *g, const sg_reach_t *prev, const uint8_t *touched,
                       id_adj_t *a)
{
    const id_adj_t *p = &prev->adj;
    uint32_t n = g->n_nodes;
    int rc = id_adj_alloc(a, n, g->live_edges, p->stream);
    if (rc) return rc;
    /* prev's facts, shared until a touched node's differ */
    a->type = facts_ref(p->type);
    a->seq = facts_ref(p->seq);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t lo = p->out_start[i + 1] - p->out_start[i], li = p->in_start[i + 1] - p->in_start[i];
        if (i + SG_PREFETCH_AHEAD < n && touched[i + SG_PREFETCH_AHEAD])
            sg_prefetch_node(g, i + SG_PREFETCH_AHEAD, 48); /* the header */
        if (touched[i]) {
            const sg_node_t *x = &g->nodes[i];
            lo = x->n_out;
            li = x->n_in;
            if (a->stream[i] != x->stream) {
                if ((rc = facts_own((void **)&a->stream, (size_t)n * sizeof *a->stream))) break;
                a->stream[i] = x->stream;
            }
            /* live: prev's nodes are */
            if (a->type && a->type[i] != (uint8_t)x->type) {
                if ((rc = facts_own((void **)&a->type, n))) break;
                a->type[i] = (uint8_t)x->type;
            }
            if (a->seq && a->seq[i] != x->seq) {
                if ((rc = facts_own((void **)&a->seq, (size_t)n * sizeof *a->seq))) break;
                a->seq[i] = x->seq;
            }
        }
        a->out_start[i + 1] = a->out_start[i] + lo;
        a->in_start[i + 1] = a->in_start[i] + li;
        if (a->out_start[i + 1] > g->live_edges || a->in_start[i + 1] > g->live_edges) {
            rc = SG_EINVAL;
            break;
        }
    }
    if (rc || a->out_start[n] != g->live_edges || a->in_start[n] != g->live_edges) {
        id_adj_free(a);
        return rc == SG_ENOMEM ? rc : SG_EINVAL;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t *out = a->out + a->out_start[i], *in = a->in + a->in_start[i];
        if (!touched[i]) {
            memcpy(out, p->out + p->out_start[i], (a->out_start[i + 1] - a->out_start[i]) * sizeof *out);
            memcpy(in, p->in + p->in_start[i], (a->in_start[i + 1] - a->in_start[i]) * sizeof *in);
            continue;
        }
        const sg_node_t *x = &g->nodes[i];
        for (uint32_t k = 0; k < x->n_out; k++) out[k] = g->edges[x->out[k]].to;
        for (uint32_t k = 0; k < x->n_in; k++) in[k] = g->edges[x->in[k]].from;
    }
    return SG_OK;
}

int sg_reach_build_edited(const sg_graph_t *g, const sg_reach_t *prev, const sg_node_id_t *touched,
                          uint32_t n_touched, unsigned flags, sg_reach_t **out)
{
    if (!g || !out || (n_touched && !touched)) return SG_EINVAL;
    *out = NULL;
    for (uint32_t i = 0; i < n_touched; i++)
        if (touched[i] >= g->n_nodes) return SG_EINVAL;
    if (!prev || !prev->exact || !same_nodes(g, prev)) return sg_reach_build(g, flags, out);
    uint8_t *mark = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    if (!mark) return SG_ENOMEM;
    for (uint32_t i = 0; i < n_touched; i++) mark[touched[i]] = 1;
    id_adj_t adj;
    int rc = id_adj_edit(g, prev, mark, &adj);
    free(mark);
    if (rc == SG_OK) rc = build_from_adj(g, flags, adj, out);
    if (rc == SG_OK) (*out)->exact = true;
    return rc;
}

/* F for chains [c0, c0 + cw): rows in reverse topological order, min over
 * out-neighbours. */
static void forward_clocks(sg_reach_t *r, uint32_t c0, uint32_t cw)
{
    uint32_t w = r->width;
    for (uint32_t i = r->n_order; i-- > 0;) {
        sg_node_id_t v = r->order[i];
        int32_t *row = r->F + (size_t)i * w;
        for (uint32_t c = 0; c < cw; c++) row[c] = INT32_MAX;
        for (uint32_t k = r->out_start[i]; k < r->out_start[i + 1]; k++) {
            const int32_t *p = r->F + (size_t)r->out_rank[k] * w;
            for (uint32_t c = 0; c < cw; c++)
                row[c] = p[c] < row[c] ? p[c] : row[c]; /* no branch: its outcome is data */
        }
        uint32_t cv = r->node[v].chain;
        if (cv >= c0 && cv - c0 < cw) row[cv - c0] = (int32_t)r->node[v].pos;
    }
}

int sg_reach_forward(sg_reach_t *r)
{
    if (r->F) return SG_OK;
    if (build_csr_out(r)) return SG_ENOMEM;
    uint64_t rows = r->n_order ? r->n_order : 1;
    r->F = malloc((size_t)(r->width * rows) * sizeof *r->F);
    if (!r->F) return SG_ENOMEM;
    r->flags |= SG_REACH_FORWARD;
    if (r->loaded != UINT32_MAX) { /* the loaded block's, as loading computes them */
        uint32_t c0 = r->loaded * r->width;
        forward_clocks(r, c0, r->n_chains - c0 < r->width ? r->n_chains - c0 : r->width);
    }
    return SG_OK;
}

uint32_t sg_reach_block_count(const sg_reach_t *r)
{
    return r->n_chains ? (r->n_chains + r->width - 1) / r->width : 0;
}

int sg_reach_load_block(sg_reach_t *r, uint32_t b, uint32_t *first, uint32_t *count)
{
    if (b >= sg_reach_block_count(r)) return SG_EINVAL;
    uint32_t c0 = b * r->width;
    uint32_t w = r->width;
    uint32_t cw = r->n_chains - c0 < w ? r->n_chains - c0 : w;
    if (first) *first = c0;
    if (count) *count = cw;
    if (r->loaded == b) return SG_OK;
    /* R: rows in topological order, max over in-neighbours. */
    for (uint32_t i = 0; i < r->n_order; i++) {
        sg_node_id_t v = r->order[i];
        int32_t *row = r->R + (size_t)i * w;
        for (uint32_t c = 0; c < cw; c++) row[c] = -1;
        for (uint32_t k = r->in_start[i]; k < r->in_start[i + 1]; k++) {
            const int32_t *p = r->R + (size_t)r->in_rank[k] * w;
            for (uint32_t c = 0; c < cw; c++)
                if (p[c] > row[c]) row[c] = p[c];
        }
        uint32_t cv = r->node[v].chain;
        if (cv >= c0 && cv - c0 < cw) row[cv - c0] = (int32_t)r->node[v].pos;
    }
    if (r->F) forward_clocks(r, c0, cw);
    r->loaded = b;
    return SG_OK;
}

static bool live(const sg_reach_t *r, sg_node_id_t v)
{
    return v < r->n_ids && r->node[v].rank != UINT32_MAX;
}

int32_t sg_reach_last_reaching(const sg_reach_t *r, sg_node_id_t v, uint32_t c)
{
    uint32_t c0 = r->loaded * r->width;
    if (!live(r, v) || r->loaded == UINT32_MAX || c < c0 || c - c0 >= r->width) return -1;
    return r->R[(size_t)r->node[v].rank * r->width + (c - c0)];
}

int32_t sg_reach_first_reached(const sg_reach_t *r, sg_node_id_t v, uint32_t c)
{
    uint32_t c0 = r->loaded * r->width;
    if (!r->F || !live(r, v) || r->loaded == UINT32_MAX || c < c0 || c - c0 >= r->width)
        return INT32_MAX;
    return r->F[(size_t)r->node[v].rank * r->width + (c - c0)];
}

/* Answers that need no clock: identity, rank order, same chain. Returns
 * 0/1, or -1 when the clock (or a search) is needed. */
static int quick(const sg_reach_t *r, sg_node_id_t u, sg_node_id_t v)
{
    if (!live(r, u) || !live(r, v)) return 0;
    if (u == v) return 1;
    if (r->node[u].rank >= r->node[v].rank) return 0;
    if (r->node[u].chain == r->node[v].chain) return r->node[u].pos <= r->node[v].pos;
    return -1;
}

static bool in_loaded(const sg_reach_t *r, uint32_t c)
{
    return r->loaded != UINT32_MAX && c / r->width == r->loaded;
}

static bool clock_answer(const sg_reach_t *r, sg_node_id_t u, sg_node_id_t v)
{
    int32_t q = r->R[(size_t)r->node[v].rank * r->width + (r->node[u].chain - r->loaded * r->width)];
    return q >= (int32_t)r->node[u].pos;
}

/* DFS from u that never enters a node ranked after v (it cannot reach v),
 * over the adjacency by rank. */
static bool bounded_dfs(sg_reach_t *r, sg_node_id_t u, sg_node_id_t v)
{
    if (++r->stamp_now == 0) {
        memset(r->stamp, 0, r->n_order * sizeof *r->stamp);
        r->stamp_now = 1;
    }
    uint32_t limit = r->node[v].rank, top = 0;
    r->stack[top++] = r->node[u].rank;
    r->stamp[r->node[u].rank] = r->stamp_now;
    while (top) {
        uint32_t x = r->stack[--top];
        for (uint32_t k = r->out_start[x]; k < r->out_start[x + 1]; k++) {
            uint32_t y = r->out_rank[k];
            if (y == limit) return true;
            if (r->stamp[y] == r->stamp_now || y > limit) continue;
            r->stamp[y] = r->stamp_now;
            r->stack[top++] = y;
        }
    }
    return false;
}

bool sg_reach_query(sg_reach_t *r, sg_node_id_t u, sg_node_id_t v)
{
    int q = quick(r, u, v);
    if (q >= 0) return q == 1;
    if (in_loaded(r, r->node[u].chain)) return clock_answer(r, u, v);
    return bounded_dfs(r, u, v);
}

typedef struct {
    uint32_t block;
    uint32_t index;
} pending_t;

static int cmp_pending(const void *a, const void *b)
{
    const pending_t *x = a, *y = b;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int sg_reach_query_batch(sg_reach_t *r, const sg_node_id_t (*pairs)[2], size_t n, uint8_t *out)
{
    if (n == 0) return SG_OK;
    if (!pairs || !out) return SG_EINVAL;
    pending_t *p = malloc(n * sizeof *p);
    if (!p) return SG_ENOMEM;
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        int q = quick(r, pairs[i][0], pairs[i][1]);
        if (q >= 0) {
            out[i] = (uint8_t)q;
        } else if (in_loaded(r, r->node[pairs[i][0]].chain)) {
            out[i] = clock_answer(r, pairs[i][0], pairs[i][1]);
        } else {
            p[np].block = r->node[pairs[i][0]].chain / r->width;
            p[np].index = (uint32_t)i;
            np++;
        }
    }
    qsort(p, np, sizeof *p, cmp_pending);
    for (size_t i = 0; i < np; i++) {
        if (p[i].block != r->loaded) {
            int rc = sg_reach_load_block(r, p[i].block, NULL, NULL);
            if (rc) {
                free(p);
                return rc;
            }
        }
        out[p[i].index] = clock_answer(r, pairs[p[i].index][0], pairs[p[i].index][1]);
    }
    free(p);
    return SG_OK;
}

const sg_node_id_t *sg_reach_order(const sg_reach_t *r, uint32_t *n)
{
    *n = r->n_order;
    return r->order;
}

uint32_t sg_reach_rank(const sg_reach_t *r, sg_node_id_t v)
{
    return v < r->n_ids ? r->node[v].rank : UINT32_MAX;
}

const uint32_t *sg_reach_in_ranks(const sg_reach_t *r, uint32_t i, uint32_t *n)
{
    if (i >= r->n_order) {
        *n = 0;
        return NULL;
    }
    *n = r->in_start[i + 1] - r->in_start[i];
    return r->in_rank + r->in_start[i];
}

bool sg_reach_node_facts(const sg_reach_t *r, const sg_graph_t *g, const uint8_t **type,
                         const uint32_t **stream, const uint64_t **seq)
{
    if (!r->adj.type || r->g != g || r->n_ids != g->n_nodes) return false;
    *type = r->adj.type;
    *stream = r->adj.stream;
    *seq = r->adj.seq;
    return true;
}

const sg_node_id_t *sg_reach_out_ids(const sg_reach_t *r, sg_node_id_t v, uint32_t *n)
{
    if (!live(r, v)) {
        *n = 0;
        return NULL;
    }
    *n = r->adj.out_start[v + 1] - r->adj.out_start[v];
    return r->adj.out + r->adj.out_start[v];
}

uint32_t sg_reach_chain_count(const sg_reach_t *r)
{
    return r->n_chains;
}

uint32_t sg_reach_chain_of(const sg_reach_t *r, sg_node_id_t v)
{
    return live(r, v) ? r->node[v].chain : UINT32_MAX;
}

uint32_t sg_reach_pos(const sg_reach_t *r, sg_node_id_t v)
{
    return live(r, v) ? r->node[v].pos : UINT32_MAX;
}

bool sg_reach_all_loaded(const sg_reach_t *r, bool forward)
{
    return r->n_chains <= r->width && r->loaded == 0 && (!forward || r->F);
}

int sg_reach_check_acyclic(const sg_graph_t *g)
{
    return sg_reach_check_acyclic_after(g, NULL);
}

int sg_reach_check_acyclic_after(const sg_graph_t *g, const sg_reach_t *prev)
{
    id_adj_t adj;
    int rc = prev && only_added_edges(g, prev) ? id_adj_extend(g, prev, false, &adj)
             : prev && same_nodes(g, prev)     ? id_adj_from_edges(g, prev, &adj)
                                               : id_adj_build(g, &adj);
    if (rc) return rc;
    sg_node_id_t *order = NULL;
    uint32_t n = 0;
    rc = topo_order(g, &adj, &order, &n);
    id_adj_free(&adj);
    free(order);
    return rc;
}
