/* control_deps.c: pass `control-deps`: make the orderings that capture
 * implies, but that the graph holds only implicitly or not at all, explicit
 * as `control` edges, before any pass moves or merges nodes.
 *
 * What a captured graph already has: stream capture gives every node an
 * edge from each node in its stream's current dependency set, and an event
 * record/wait pair (without the external flags) becomes plain edges from the
 * recorded set to the waiter's next node. sgcap labels those `stream` and
 * `event`. CUDA does not prune them. What is missing, precisely:
 *
 *   R1 record-before-wait. Event record/wait *nodes* (the external flags)
 *      are synchronised by the event at run time, not by an edge: a wait
 *      node with no path from its record node may run first and bind to an
 *      older record (PyTorch #193409 is this bug one level up). In program
 *      order a wait binds to the latest record of that event enqueued before
 *      it (by capture sequence number), so: control record -> wait, when
 *      there is no path. A wait with no earlier record in the graph waits on
 *      something outside it and gets nothing.
 *   R2 stream order at synchronisation points. Event record/wait nodes, host
 *      nodes and opaque nodes are barriers in their stream's program order,
 *      and so are the points where an event edge leaves (a record after that
 *      node) or enters (a wait before it). Capture normally joins them to
 *      their stream neighbours; when the program replaced a stream's
 *      dependency set (cuStreamUpdateCaptureDependencies) or nodes were
 *      added explicitly, a barrier can be cut off from its stream. Then:
 *      control prev -> X for a barrier and a record point, X -> next for a
 *      barrier and a wait point, when there is no path. Plain kernels whose
 *      order the program removed on purpose are left alone, and so are
 *      frees (neither barriers nor neighbours here): what a free must
 *      follow and precede is memory, which R3/R4 and defer-dealloc handle.
 *   R3 free before reuse. CUDA gives a graph allocation an address range
 *      that overlaps an earlier one only when the earlier one's free is
 *      ordered before the new allocation; that ordering is usually a long
 *      transitive path. A pass that moves the free (defer-dealloc) must not
 *      lose it, so: control free -> alloc, when a path exists but no edge,
 *      for the first such allocations after the free (the minimal ones;
 *      later reuses of the same memory follow through them).
 *   R4 transitive orderings across an event at a free. When an event edge
 *      leaves or enters a mem_free node, the cross-stream ordering of the
 *      program's record/wait (everything before the record on one stream
 *      before everything after the wait on the other) runs through the
 *      free only transitively; a pass that moves the free would cut it. So:
 *      for an event edge F -> Y, control p -> Y for each predecessor p of F;
 *      for X -> F, control X -> q for each successor q of F (unless an edge
 *      is already there).
 *
 * Guarantees: only adds edges, so every ordering is kept; adds an edge only
 * between nodes where the program's order implies it (never a new ordering
 * of independent work except under R2 in the rare replaced-dependency case);
 * never creates a cycle (R1/R2 add a -> b only after checking on the live
 * graph that b does not reach a, and report the pair otherwise; R3/R4 only
 * shortcut existing paths); idempotent: after one run every rule's
 * condition holds, so a second run adds nothing.
 *
 * Cost: one reachability snapshot O((V+E) * k) and O(V log V) sorting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"
#include "graph/plural.h"

enum { RULE_RECORD_WAIT, RULE_STREAM_ORDER, RULE_FREE_REUSE, RULE_EVENT_AT_FREE, RULE_COUNT };

static const char *const rule_names[RULE_COUNT] = {"record-before-wait", "stream-order",
                                                   "free-before-reuse", "event-at-free"};

/* A candidate edge. The sentence saying why is made only for the few that
 * are added (cand_why), from what the rule saw: a 100k-node graph has tens
 * of thousands of candidates, nearly all of them already ordered. */
typedef struct {
    sg_node_id_t from, to;
    uint8_t rule;
    uint8_t needs_no_path; /* add only when no path exists (else: when no direct edge) */
    uint8_t side;          /* R2: 0 prev -> X, 1 X -> next; R4: 0 event leaves, 1 enters */
    uint8_t what;          /* R2: X is a barrier (0), a record (1), wait (2) or both (3) point */
    uint32_t event;        /* R4: the event edge's event, or SG_NONE */
    sg_node_id_t free;     /* R4: the free */
} cand_t;

enum { WHY_MAX = 200 };

typedef struct {
    cand_t *c;
    size_t n, cap;
} cands_t;

static cand_t *cand_push(cands_t *cs, sg_node_id_t from, sg_node_id_t to, int rule, bool no_path)
{
    if (cs->n == cs->cap) {
        size_t nc = cs->cap ? cs->cap * 2 : 64;
        cand_t *p = realloc(cs->c, nc * sizeof *p);
        if (!p) return NULL;
        cs->c = p;
        cs->cap = nc;
    }
    cand_t *c = &cs->c[cs->n++];
    c->from = from;
    c->to = to;
    c->rule = (uint8_t)rule;
    c->needs_no_path = no_path;
    c->side = c->what = 0;
    c->event = c->free = SG_NONE;
    return c;
}

/* What the report says of the edges an apply adds, read beforehand in id
 * order (added edges are printed in candidate order, and on a large graph
 * each node looked up there costs a cache miss): the names of their ends
 * and, for memory nodes, the buffer (R3's sentence). */
typedef struct {
    sg_rw_names_t names;
    uint32_t *buf; /* by id: u.mem.buffer of a named mem_alloc / mem_free, or NULL */
} shown_t;

static void take_buffer(void *user, sg_node_id_t id, const sg_node_t *x)
{
    shown_t *s = user;
    if (s->buf && (x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE))
        s->buf[id] = x->u.mem.buffer;
}

static uint32_t mem_buffer(const sg_graph_t *g, const shown_t *s, sg_node_id_t v)
{
    return s && s->buf ? s->buf[v] : g->nodes[v].u.mem.buffer;
}

static void cand_why(const sg_graph_t *g, const shown_t *s, const cand_t *c, char *why, size_t n)
{
    switch (c->rule) {
    case RULE_RECORD_WAIT: {
        const sg_node_t *rec = &g->nodes[c->from], *wait = &g->nodes[c->to];
        snprintf(why, n,
                 "the wait binds to the latest record of %s enqueued before it (seq %llu < %llu)",
                 SG_RW_LABEL(g->root->events[wait->u.event].label), (unsigned long long)rec->seq,
                 (unsigned long long)wait->seq);
        break;
    }
    case RULE_STREAM_ORDER: {
        static const char *const points[] = {NULL, "record point", "wait point",
                                             "record and wait point"};
        const sg_node_t *x = &g->nodes[c->side ? c->from : c->to];
        const char *what = c->what ? points[c->what & 3] : sg_node_type_name(x->type);
        if (c->side)
            snprintf(why, n, "%s: everything enqueued after it on %s must follow it", what,
                     SG_RW_STREAM(g, x->stream));
        else
            snprintf(why, n, "%s: everything enqueued before it on %s must precede it", what,
                     SG_RW_STREAM(g, x->stream));
        break;
    }
    case RULE_FREE_REUSE:
        snprintf(why, n,
                 "%s reuses addresses of %s, which is only legal after this free; the path was "
                 "transitive",
                 SG_RW_LABEL(g->root->buffers[mem_buffer(g, s, c->to)].label),
                 SG_RW_LABEL(g->root->buffers[mem_buffer(g, s, c->from)].label));
        break;
    default: {
        const sg_event_t *ev = sg_graph_event(g, c->event);
        snprintf(why, n, "event %s %s the free n%u; this ordering ran through the free only",
                 ev ? SG_RW_LABEL(ev->label) : "?", c->side ? "enters" : "leaves", c->free);
        break;
    }
    }
}

/* Is there an edge a -> b? The graph's edges are the snapshot's plus the
 * ones this pass added since it was taken (the pass removes none): the
 * snapshot's compact lists and a small hash set of the added pairs answer
 * without reading a node's edge list and its edges (a few cache misses per
 * question on a large graph, and the rules ask tens of thousands). */
typedef struct {
    const sg_reach_t *r;
    uint64_t *keys; /* open addressing, (from << 32 | to); 0 is empty (no self edge) */
    uint32_t n, cap;
} edges_t;

static uint32_t edge_slot(const edges_t *es, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    uint32_t i = (uint32_t)(h >> 32) & (es->cap - 1);
    while (es->keys[i] && es->keys[i] != key)
        i = (i + 1) & (es->cap - 1);
    return i;
}

static bool has_edge(const edges_t *es, sg_node_id_t a, sg_node_id_t b)
{
    uint32_t n;
    const sg_node_id_t *out = sg_reach_out_ids(es->r, a, &n);
    for (uint32_t i = 0; i < n; i++)
        if (out[i] == b) return true;
    if (es->n == 0 || a == b) return false;
    uint64_t key = (uint64_t)a << 32 | b;
    return es->keys[edge_slot(es, key)] == key;
}

static int note_edge(edges_t *es, sg_node_id_t a, sg_node_id_t b)
{
    if (2 * (es->n + 1) > es->cap) {
        uint32_t nc = es->cap ? es->cap * 2 : 256;
        edges_t grown = {es->r, calloc(nc, sizeof *es->keys), 0, nc};
        if (!grown.keys) return SG_ENOMEM;
        for (uint32_t i = 0; i < es->cap; i++)
            if (es->keys[i]) grown.keys[edge_slot(&grown, es->keys[i])] = es->keys[i];
        grown.n = es->n;
        free(es->keys);
        *es = grown;
    }
    uint64_t key = (uint64_t)a << 32 | b;
    uint32_t i = edge_slot(es, key);
    if (!es->keys[i]) {
        es->keys[i] = key;
        es->n++;
    }
    return SG_OK;
}

/* A new snapshot r of the graph as it is: it holds every edge. */
static void edges_reset(edges_t *es, const sg_reach_t *r)
{
    es->r = r;
    es->n = 0;
    if (es->keys) memset(es->keys, 0, es->cap * sizeof *es->keys);
}

static bool is_barrier(uint8_t type)
{
    return type == SG_NODE_EVENT_RECORD || type == SG_NODE_EVENT_WAIT || type == SG_NODE_HOST ||
           type == SG_NODE_OPAQUE;
}

/* Which nodes an event edge leaves (bit 0) or enters (bit 1): one pass over
 * the edge array, instead of each node's edge lists (separate small arrays,
 * a cache miss apiece on a large graph). NULL when out of memory. */
static uint8_t *event_ends(const sg_graph_t *g)
{
    uint8_t *ends = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    for (uint32_t i = 0; ends && i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed || e->kind != SG_EDGE_EVENT) continue;
        ends[e->from] |= 1;
        ends[e->to] |= 2;
    }
    return ends;
}

typedef struct {
    uint32_t event;
    uint64_t seq;
    sg_node_id_t id;
    bool is_record;
} evnode_t;

static int cmp_evnode(const void *pa, const void *pb)
{
    const evnode_t *a = pa, *b = pb;
    if (a->event != b->event) return a->event < b->event ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* R1 candidates. Only record and wait nodes are read (their types are in
 * st). */
static int rule_record_wait(const sg_graph_t *g, const sg_rw_streams_t *st, cands_t *cs)
{
    evnode_t *ev = NULL;
    uint32_t n = 0, cap = 0;
    for (uint32_t i = 0; i < st->n_ids; i++) {
        if (st->type[i] != SG_NODE_EVENT_RECORD && st->type[i] != SG_NODE_EVENT_WAIT) continue;
        const sg_node_t *x = &g->nodes[i];
        if (x->u.event >= g->root->n_events) continue;
        if (sg_array_reserve((void **)&ev, &cap, n + 1, sizeof *ev)) {
            free(ev);
            return SG_ENOMEM;
        }
        ev[n++] = (evnode_t){x->u.event, x->seq, i, x->type == SG_NODE_EVENT_RECORD};
    }
    if (n > 1) qsort(ev, n, sizeof *ev, cmp_evnode);
    sg_node_id_t last_record = SG_NONE;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0 || ev[i].event != ev[i - 1].event) last_record = SG_NONE;
        if (ev[i].is_record) {
            last_record = ev[i].id;
            continue;
        }
        if (last_record == SG_NONE) continue;
        if (!cand_push(cs, last_record, ev[i].id, RULE_RECORD_WAIT, true)) {
            free(ev);
            return SG_ENOMEM;
        }
    }
    free(ev);
    return SG_OK;
}

/* R2 candidates. */
static int rule_stream_order(const sg_graph_t *g, const sg_rw_streams_t *st, cands_t *cs)
{
    uint8_t *ends = event_ends(g);
    if (!ends) return SG_ENOMEM;
    int rc = SG_OK;
    /* by st's arrays, not the nodes: a node and its stream neighbours */
    for (uint32_t i = 0; i < st->n_ids && rc == SG_OK; i++) {
        uint8_t type = st->type[i];
        if (type == SG_RW_REMOVED || st->stream[i] >= st->n_streams || type == SG_NODE_MEM_FREE)
            continue;
        bool barrier = is_barrier(type);
        bool record_point = !barrier && (ends[i] & 1);
        bool wait_point = !barrier && (ends[i] & 2);
        if (!barrier && !record_point && !wait_point) continue;
        uint8_t what = barrier ? 0 : (uint8_t)((record_point ? 1 : 0) | (wait_point ? 2 : 0));
        sg_node_id_t prev = sg_rw_stream_prev(st, i), next = sg_rw_stream_next(st, i);
        while (prev != SG_NONE && st->type[prev] == SG_NODE_MEM_FREE)
            prev = sg_rw_stream_prev(st, prev);
        while (next != SG_NONE && st->type[next] == SG_NODE_MEM_FREE)
            next = sg_rw_stream_next(st, next);
        if (prev != SG_NONE && (barrier || record_point)) {
            cand_t *c = cand_push(cs, prev, i, RULE_STREAM_ORDER, true);
            if (!c) {
                rc = SG_ENOMEM;
                break;
            }
            c->what = what;
        }
        if (next != SG_NONE && (barrier || wait_point)) {
            cand_t *c = cand_push(cs, i, next, RULE_STREAM_ORDER, true);
            if (!c) {
                rc = SG_ENOMEM;
                break;
            }
            c->side = 1;
            c->what = what;
        }
    }
    free(ends);
    return rc;
}

/* R3 candidates: for every free F of a buffer b, the first allocations
 * after F of buffers overlapping b (the minimal reuses, common.c); later
 * reuses of the same memory are ordered through them. (Overlapping
 * allocations that no free orders are hazards: sgcap check reports them.) */
static int rule_free_reuse(const sg_graph_t *g, const sg_rw_streams_t *st,
                           const sg_rw_buffers_t *bufs, sg_reach_t *r, const edges_t *es,
                           cands_t *cs)
{
    sg_rw_reuse_t ru;
    int rc = sg_rw_reuse_build(g, r, bufs, &ru);
    if (rc) return rc;
    for (uint32_t b = 0; b < ru.n_buffers && rc == SG_OK; b++) {
        for (uint32_t k = bufs->free_start[b]; k < bufs->free_start[b + 1] && rc == SG_OK; k++) {
            sg_node_id_t f = bufs->frees[k], *mins = NULL;
            uint32_t m = 0;
            if ((rc = sg_rw_reuse_after(&ru, r, g, bufs, f, b, &mins, &m))) break;
            for (uint32_t i = 0; i < m; i++) {
                if (sg_rw_type(st, mins[i]) != SG_NODE_MEM_ALLOC) continue;
                if (has_edge(es, f, mins[i])) continue;
                if (!cand_push(cs, f, mins[i], RULE_FREE_REUSE, false)) {
                    rc = SG_ENOMEM;
                    break;
                }
            }
            free(mins);
        }
    }
    sg_rw_reuse_free(&ru);
    return rc;
}

/* The event edges that leave or enter a free, in id order: found in one
 * pass over the edge array the first time R4 runs (the ends' types come
 * from st), the same list for its later rounds (the pass adds only control
 * edges and removes none). */
typedef struct {
    sg_edge_id_t *ids;
    uint32_t n;
    bool made;
} at_free_t;

static int event_edges_at_frees(const sg_graph_t *g, const sg_rw_streams_t *st, at_free_t *af)
{
    if (af->made) return SG_OK;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed || e->kind != SG_EDGE_EVENT ||
            (sg_rw_type(st, e->from) != SG_NODE_MEM_FREE &&
             sg_rw_type(st, e->to) != SG_NODE_MEM_FREE))
            continue;
        if (sg_array_reserve((void **)&af->ids, &cap, af->n + 1, sizeof *af->ids)) return SG_ENOMEM;
        af->ids[af->n++] = i;
    }
    af->made = true;
    return SG_OK;
}

/* R4 candidates. Only frees are read. */
static int rule_event_at_free(const sg_graph_t *g, const sg_rw_streams_t *st, const edges_t *es,
                              at_free_t *af, cands_t *cs)
{
    int rc = event_edges_at_frees(g, st, af);
    if (rc) return rc;
    for (uint32_t j = 0; j < af->n; j++) {
        const sg_edge_t *e = &g->edges[af->ids[j]];
        for (int side = 0; side < 2; side++) {
            sg_node_id_t f = side ? e->to : e->from;
            if (sg_rw_type(st, f) != SG_NODE_MEM_FREE) continue;
            const sg_node_t *fx = &g->nodes[f];
            /* side 0: event leaves the free: its predecessors -> e->to.
             * side 1: event enters the free: e->from -> its successors. */
            uint32_t n = side ? fx->n_out : fx->n_in;
            for (uint32_t k = 0; k < n; k++) {
                const sg_edge_t *o = &g->edges[side ? fx->out[k] : fx->in[k]];
                sg_node_id_t from = side ? e->from : o->from, to = side ? o->to : e->to;
                if (from == to || has_edge(es, from, to)) continue;
                cand_t *c = cand_push(cs, from, to, RULE_EVENT_AT_FREE, false);
                if (!c) return SG_ENOMEM;
                c->side = (uint8_t)side;
                c->event = e->event;
                c->free = f;
            }
        }
    }
    return SG_OK;
}

static int cmp_cand(const void *pa, const void *pb)
{
    const cand_t *a = pa, *b = pb;
    if (a->from != b->from) return a->from < b->from ? -1 : 1;
    if (a->to != b->to) return a->to < b->to ? -1 : 1;
    return a->rule < b->rule ? -1 : a->rule > b->rule;
}

/* What the pass did, in order: an edge added, or a candidate skipped
 * because the graph orders its pair the other way. The report lines are
 * written from this once the rules are done, with every name they need made
 * in one pass in id order (made where each is printed, the lines come in
 * candidate order, and on a large graph each node read there costs a cache
 * miss). */
typedef struct {
    cand_t c;
    bool skipped;
} logged_t;

typedef struct {
    uint32_t added[RULE_COUNT], total, skipped;
    sg_jw_t *arr; /* the pass's edges_added, open */
    logged_t *log;
    size_t n_log, cap_log, n_shown; /* n_shown: the lines written so far */
} tally_t;

static int log_push(tally_t *t, const cand_t *c, bool skipped)
{
    if (t->n_log == t->cap_log) {
        size_t nc = t->cap_log ? t->cap_log * 2 : 64;
        logged_t *p = realloc(t->log, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        t->log = p;
        t->cap_log = nc;
    }
    t->log[t->n_log++] = (logged_t){*c, skipped};
    return SG_OK;
}

/* Write the report lines and JSON entries of what was logged since the
 * last call. */
static void log_write(sg_pass_ctx_t *ctx, tally_t *t)
{
    const sg_graph_t *g = ctx->g;
    if (t->n_shown == t->n_log) return;
    shown_t shown = {{0}, NULL};
    uint8_t *want = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    if (want) {
        for (size_t i = t->n_shown; i < t->n_log; i++)
            want[t->log[i].c.from] = want[t->log[i].c.to] = 1;
        shown.buf = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *shown.buf);
        if (sg_rw_names_make(g, want, &shown.names, take_buffer, &shown) != SG_OK || !shown.buf) {
            free(shown.buf);
            shown.buf = NULL;
        }
        free(want);
    }
    /* a line is ~170 bytes of text and ~500 of JSON */
    sg_rw_reserve(ctx, (t->n_log - t->n_shown) * 192);
    sg_jw_reserve(t->arr, (t->n_log - t->n_shown) * 576);
    for (; t->n_shown < t->n_log; t->n_shown++) {
        const logged_t *l = &t->log[t->n_shown];
        const cand_t *c = &l->c;
        char a[200], b[200], why[WHY_MAX];
        const char *na = sg_rw_names_get(&shown.names, g, c->from, a, sizeof a);
        const char *nb = sg_rw_names_get(&shown.names, g, c->to, b, sizeof b);
        if (l->skipped) {
            sg_rw_printf(ctx, "skip %s -> %s [%s]: the graph orders them the other way\n", na, nb,
                         rule_names[c->rule]);
            continue;
        }
        cand_why(g, &shown, c, why, sizeof why);
        sg_rw_printf(ctx, "+ control %s -> %s [%s]: %s\n", na, nb, rule_names[c->rule], why);
        sg_jw_object(t->arr);
        sg_jw_kstring(t->arr, "rule", rule_names[c->rule]);
        sg_jw_key(t->arr, "from");
        sg_rw_names_jw(t->arr, &shown.names, g, c->from);
        sg_jw_key(t->arr, "to");
        sg_rw_names_jw(t->arr, &shown.names, g, c->to);
        sg_jw_kstring(t->arr, "why", why);
        sg_jw_end(t->arr);
    }
    sg_rw_names_free(&shown.names);
    free(shown.buf);
}

/* Add the candidates that still apply: for R1/R2 when the pairs are not
 * ordered (decided on the snapshot r, rechecked on the live graph), for
 * R3/R4 when no direct edge exists. */
static int apply(sg_pass_ctx_t *ctx, sg_reach_t *r, edges_t *es, cands_t *cs, tally_t *t,
                 uint32_t *n_added)
{
    sg_graph_t *g = ctx->g;
    *n_added = 0;
    if (cs->n == 0) return SG_OK;
    uint8_t *ans = malloc(cs->n);
    sg_node_id_t(*pairs)[2] = malloc(cs->n * sizeof *pairs);
    int rc = SG_OK;
    if (!ans || !pairs) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < cs->n; i++) {
        pairs[i][0] = cs->c[i].from;
        pairs[i][1] = cs->c[i].to;
    }
    if ((rc = sg_reach_query_batch(r, (const sg_node_id_t(*)[2])pairs, cs->n, ans))) goto out;
    /* Of the candidates for one pair only the first in (from, to, rule)
     * order is weighed, and what rules it out (a path for R1/R2, an edge
     * for R3/R4: neither changes for this pair while others are added) is
     * the pair's. When every candidate is weighed the same way the pairs
     * ruled out can go before the sort, which then orders the few left
     * (on a large graph tens of thousands of R2 candidates, nearly all
     * ordered already). */
    bool mixed = false;
    for (size_t i = 1; i < cs->n && !mixed; i++)
        mixed = cs->c[i].needs_no_path != cs->c[0].needs_no_path;
    if (!mixed) {
        size_t k = 0;
        for (size_t i = 0; i < cs->n; i++) {
            const cand_t *c = &cs->c[i];
            if (c->needs_no_path ? ans[i] != 0 : has_edge(es, c->from, c->to)) continue;
            cs->c[k++] = *c;
        }
        cs->n = k;
        for (size_t i = 0; i < cs->n; i++)
            ans[i] = 0; /* every one left has no path / edge */
    }
    qsort(cs->c, cs->n, sizeof *cs->c, cmp_cand);
    if (mixed) {
        for (size_t i = 0; i < cs->n; i++) {
            pairs[i][0] = cs->c[i].from;
            pairs[i][1] = cs->c[i].to;
        }
        if ((rc = sg_reach_query_batch(r, (const sg_node_id_t(*)[2])pairs, cs->n, ans))) goto out;
    }
    for (size_t i = 0; i < cs->n; i++) {
        const cand_t *c = &cs->c[i];
        if (i > 0 && cs->c[i - 1].from == c->from && cs->c[i - 1].to == c->to) continue;
        if (c->needs_no_path ? ans[i] != 0 : has_edge(es, c->from, c->to)) continue;
        if (c->needs_no_path) {
            /* Recheck on the live graph: an edge added above may already
             * order the pair, and R1/R2 must never close a cycle (a graph
             * whose edges contradict capture order, e.g. after a moved
             * free, could otherwise get one). Rare: normal captures have no
             * R1/R2 candidates left after the snapshot filter. */
            if (sg_graph_reaches(g, c->from, c->to)) continue;
            if (sg_graph_reaches(g, c->to, c->from)) {
                if ((rc = log_push(t, c, true))) goto out;
                t->skipped++;
                continue;
            }
        }
        if ((rc = sg_graph_add_edge(g, c->from, c->to, SG_EDGE_CONTROL, SG_NONE, NULL))) goto out;
        if ((rc = note_edge(es, c->from, c->to))) goto out;
        if ((rc = log_push(t, c, false))) goto out;
        t->added[c->rule]++;
        t->total++;
        (*n_added)++;
    }
out:
    cs->n = 0;
    free(ans);
    free(pairs);
    return rc;
}

int sg_pass_control_deps(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    sg_reach_t *r = NULL;
    const sg_rw_streams_t *st = NULL; /* the manager's, shared */
    sg_rw_buffers_t bufs = {0};
    cands_t cs = {0};
    tally_t t = {{0}, 0, 0, sg_rw_json_member(ctx, "edges_added"), NULL, 0, 0, 0};
    uint32_t n_added = 0;
    sg_jw_array(t.arr);
    sg_reach_t *own = NULL; /* a snapshot after R1/R2 added edges */
    edges_t es = {0};
    at_free_t af = {0};
    int rc;
    r = sg_rw_input_reach(ctx, &rc);
    if (rc) goto out;
    /* The rules feed each other, so they run in an order that reaches a
     * fixpoint in one pass (which makes the pass idempotent):
     * R1/R2 add orderings, which can create the paths R3 looks for and give
     * a free the new neighbours R4 bridges around; R3 and R4 only shortcut
     * existing paths (reachability stays), but give frees new neighbours,
     * so R4 repeats until it adds nothing. */
    edges_reset(&es, r);
    if (!(st = sg_rw_input_streams(ctx, &rc))) goto out;
    if ((rc = rule_record_wait(g, st, &cs))) goto out;
    if ((rc = rule_stream_order(g, st, &cs))) goto out;
    if ((rc = apply(ctx, r, &es, &cs, &t, &n_added))) goto out;
    if (n_added) {
        if ((rc = sg_reach_build_after(g, r, 0, &own))) goto out;
        r = own;
        edges_reset(&es, r);
    }
    if ((rc = sg_rw_buffers_build_memory(g, st, &bufs))) goto out;
    if ((rc = rule_free_reuse(g, st, &bufs, r, &es, &cs))) goto out;
    if ((rc = apply(ctx, r, &es, &cs, &t, &n_added))) goto out;
    do {
        if ((rc = rule_event_at_free(g, st, &es, &af, &cs))) goto out;
        if ((rc = apply(ctx, r, &es, &cs, &t, &n_added))) goto out;
    } while (n_added);

    log_write(ctx, &t);
    if (t.total == 0) sg_rw_printf(ctx, "no change: every implied ordering is already explicit\n");
    sg_jw_end(t.arr);
    json_t *counts = json_object();
    for (int k = 0; k < RULE_COUNT; k++)
        json_object_set_new(counts, rule_names[k], json_integer(t.added[k]));
    sg_rw_json_set(ctx, "by_rule", counts);
    sg_rw_json_set(ctx, "skipped_contradicting", json_integer(t.skipped));
    sg_rw_summary(ctx,
                  "%u control %s added (record-before-wait %u, stream-order %u, "
                  "free-before-reuse %u, event-at-free %u)",
                  t.total, sg_plural(t.total, "edge", "edges"), t.added[RULE_RECORD_WAIT], t.added[RULE_STREAM_ORDER],
                  t.added[RULE_FREE_REUSE], t.added[RULE_EVENT_AT_FREE]);
out:
    log_write(ctx, &t); /* what was done before a failure */
    free(t.log);
    free(af.ids);
    free(es.keys);
    free(cs.c);
    sg_rw_buffers_free(&bufs);
    sg_reach_destroy(own);
    return rc;
}
