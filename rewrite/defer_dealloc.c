/* defer_dealloc.c: pass `defer-dealloc`: a free of memory that another
 * stream still uses is ordered after every use by reachability (exact), and
 * moved on its own stream to where those uses are expected to be done
 * (estimated), so that its stream does not wait for them.
 *
 * This is PyTorch's sync_dealloc (#168061: record an event at the last
 * side-stream use, wait at the estimated matching point on the allocating
 * stream) on a captured graph, with the ordering made exact: the estimate
 * only chooses the position among correct ones. For each mem_free F of
 * buffer b on stream s (DESIGN.md rule 3):
 *   1. users(b) = nodes that access b. If none is on another stream: "same
 *      stream", no change. If F reaches a user in the input (a use after
 *      the free), nothing correct can be placed: skipped.
 *   2. M = the maximal elements of users(b) + alloc(b) under reachability
 *      (on a stream that is a chain: its last user). If no element of M is
 *      on another stream, the memory is last used on s: no change. T = the
 *      latest expected finish of M's nodes on other streams, from an ASAP
 *      timeline over the DAG with measured durations where the bundle has
 *      them, else a roofline estimate (common.c).
 *   3. Q = what must stay after F: the first allocations of buffers whose
 *      addresses overlap b that F reaches (CUDA reused b's memory for them)
 *      and accesses to overlapping buffers not allocated in the graph.
 *   4. If every element of M (and the alloc) already reaches F and F hangs
 *      on s, F is settled: left in place. Only unsafe frees change.
 *   5. The anchor P: on s's program order, not before F's own position nor
 *      a use or the alloc on s, the first node that finishes at or after T,
 *      or whose next work on s cannot start before T anyway (it waits for
 *      the use through its own dependencies): where s is expected to be
 *      past the last use, so the free costs s nothing. Never a node that a
 *      member of Q reaches (the search stops: memory reuse bounds how late
 *      the free can go), nor one whose successor on s precedes a use in M
 *      (the free cannot both follow the use and precede that successor);
 *      the last candidate when none qualifies (the report gives the
 *      expected stall).
 *   6. F is taken out of its old place (every path that ran through it is
 *      bridged: pred -> succ; `event` when the removed edge carried an event
 *      across streams, `stream` within one, else `control`) and put between
 *      P and its successor on s: `stream` edges P -> F -> next; `dealloc`
 *      edges from every element of M that does not reach P and to every
 *      member of Q that next does not reach; when F becomes the last node
 *      of a stream other than the capture's origin, `dealloc` edges to the
 *      nodes that stream joined (so it stays joined). F takes P's sequence
 *      number, so it follows P in program order, and carries no event edge.
 *
 * Guarantees: after the pass every free is ordered after its allocation
 * and every use and before every reuse of its memory (by reachability, not
 * by estimate); every other ordering of the input is kept (bridges), except
 * that nodes between F's old and new place on s no longer wait for F; the
 * stream stays one chain in program order. The graph stays acyclic
 * (checked; on pathological inputs where independent per-free decisions
 * would interact into a cycle, the pass undoes everything and places the
 * frees one at a time with a cycle check each). The pass manager verifies
 * the ordering guarantee. Idempotent: a second run finds every free
 * settled. Report per free: where it was, where it went, the edges, the
 * expected stall, and the reuse kept or lost as the change in the buffer's
 * expected live time (bytes x time).
 *
 * Cost: reachability snapshot with forward clocks O((V+E) * k), timeline
 * O(V+E), then per free O(|users| * |M| + k log m + k^2 + the distance
 * scanned on s) queries of O(1) (common.c's reuse index avoids the m^2
 * pairs of a pool address reused m times).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"
#include "graph/plural.h"

/* ---- small id lists ------------------------------------------------------------ */

typedef struct {
    sg_node_id_t *v;
    uint32_t n, cap;
} ids_t;

static int ids_push(ids_t *l, sg_node_id_t x)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 8;
        sg_node_id_t *p = realloc(l->v, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n++] = x;
    return SG_OK;
}

static bool ids_has(const ids_t *l, sg_node_id_t x)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i] == x) return true;
    return false;
}

static int ids_add_unique(ids_t *l, sg_node_id_t x)
{
    return ids_has(l, x) ? SG_OK : ids_push(l, x);
}

static void ids_free(ids_t *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- undo log ----------------------------------------------------------------------- */

typedef enum { OP_ADD, OP_REMOVE, OP_SEQ } op_kind_t;

typedef struct {
    op_kind_t kind;
    sg_edge_id_t id; /* OP_ADD */
    sg_edge_t edge;  /* OP_REMOVE: the edge as it was */
    sg_node_id_t node;
    uint64_t seq;    /* OP_SEQ: the old value */
} op_t;

typedef struct {
    op_t *ops;
    size_t n, cap;
    ids_t touched; /* every node an op changed, undone or not (may repeat) */
} undo_t;

/* op.edge holds the edge's ends for OP_ADD too. */
static int undo_push(undo_t *u, op_t op)
{
    int rc = op.kind == OP_SEQ ? ids_push(&u->touched, op.node)
                               : ids_push(&u->touched, op.edge.from);
    if (!rc && op.kind != OP_SEQ) rc = ids_push(&u->touched, op.edge.to);
    if (rc) return rc;
    if (u->n == u->cap) {
        size_t nc = u->cap ? u->cap * 2 : 64;
        op_t *p = realloc(u->ops, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        u->ops = p;
        u->cap = nc;
    }
    u->ops[u->n++] = op;
    return SG_OK;
}

/* Roll back to `mark` ops. Removed edges come back with new ids (and
 * without CUDA edge data, which frees' edges do not carry). */
static int undo_to(sg_graph_t *g, undo_t *u, size_t mark)
{
    int rc = SG_OK;
    while (u->n > mark) {
        op_t *op = &u->ops[--u->n];
        switch (op->kind) {
        case OP_ADD: sg_graph_remove_edge(g, op->id); break;
        case OP_REMOVE:
            if (!rc)
                rc = sg_graph_add_edge(g, op->edge.from, op->edge.to, op->edge.kind,
                                       op->edge.event, NULL);
            break;
        case OP_SEQ: g->nodes[op->node].seq = op->seq; break;
        }
    }
    return rc;
}

static int add_edge_logged(sg_graph_t *g, undo_t *u, sg_node_id_t a, sg_node_id_t b,
                           sg_edge_kind_t k, uint32_t event)
{
    sg_edge_id_t id;
    int rc = sg_graph_add_edge(g, a, b, k, event, &id);
    if (rc) return rc;
    return undo_push(u, (op_t){.kind = OP_ADD, .id = id, .edge = {.from = a, .to = b}});
}

static int remove_edge_logged(sg_graph_t *g, undo_t *u, sg_edge_id_t id)
{
    op_t op = {.kind = OP_REMOVE, .edge = g->edges[id]};
    int rc = undo_push(u, op);
    if (rc) return rc;
    return sg_graph_remove_edge(g, id);
}

/* ---- planning ----------------------------------------------------------------------- */

typedef enum { D_SAME_STREAM, D_SKIP, D_IN_PLACE, D_MOVED } decision_t;

/* Why the anchor is where it is. */
typedef enum { ANCHOR_DONE, ANCHOR_CAPPED, ANCHOR_LAST } anchor_reason_t;

static const char *const decision_names[] = {"same_stream", "skipped", "in_place", "moved"};


typedef struct {
    sg_node_id_t f;
    uint32_t buffer, stream;
    decision_t decision;
    char why[240];
    sg_node_id_t old_prev; /* F's predecessor in its stream's program order */
    sg_node_id_t anchor;   /* P, or SG_NONE */
    sg_node_id_t anchor_next; /* what follows P on s (F goes in between), or SG_NONE */
    anchor_reason_t anchor_reason;
    double stall;          /* expected wait of s's next work at the free */
    ids_t maxima;          /* M */
    ids_t keep_pred;       /* users + alloc: all must precede F */
    ids_t reuse;           /* Q */
    ids_t new_in, new_out; /* F's neighbours after the pass */
    double t_uses;         /* T */
    double t_before, t_after;
} plan_t;

/* A free that keeps its place and only gains dealloc edges reads better as
 * "ordered" than "moved". */
static const char *decision_name(const plan_t *p)
{
    if (p->decision == D_MOVED && p->anchor == p->old_prev) return "ordered";
    return decision_names[p->decision];
}

typedef struct {
    sg_graph_t *g;
    sg_reach_t *r;
    const sg_rw_streams_t *st; /* the manager's, shared */
    sg_rw_buffers_t bufs;
    sg_rw_reuse_t ru;
    double *start, *finish;
    uint32_t origin;
} env_t;

static void plan_free(plan_t *p)
{
    ids_free(&p->maxima);
    ids_free(&p->keep_pred);
    ids_free(&p->reuse);
    ids_free(&p->new_in);
    ids_free(&p->new_out);
}

/* Maximal elements of `cand` under reachability, deterministic. */
static int maximal(env_t *e, const ids_t *cand, ids_t *out)
{
    /* Later topological rank first: a node can only reach later ones. */
    ids_t sorted = {0};
    int rc = SG_OK;
    for (uint32_t i = 0; i < cand->n && rc == SG_OK; i++) rc = ids_add_unique(&sorted, cand->v[i]);
    if (rc) goto out;
    for (uint32_t i = 1; i < sorted.n; i++) { /* insertion sort: lists are short */
        sg_node_id_t x = sorted.v[i];
        uint32_t j = i;
        while (j > 0 && sg_reach_rank(e->r, sorted.v[j - 1]) < sg_reach_rank(e->r, x)) {
            sorted.v[j] = sorted.v[j - 1];
            j--;
        }
        sorted.v[j] = x;
    }
    for (uint32_t i = 0; i < sorted.n && rc == SG_OK; i++) {
        bool dominated = false;
        for (uint32_t k = 0; k < out->n && !dominated; k++)
            dominated = sg_reach_query(e->r, sorted.v[i], out->v[k]);
        if (!dominated) rc = ids_push(out, sorted.v[i]);
    }
out:
    ids_free(&sorted);
    return rc;
}

static int plan_one(env_t *e, sg_node_id_t f, plan_t *p)
{
    sg_graph_t *g = e->g;
    const sg_node_t *fx = &g->nodes[f];
    uint32_t b = fx->u.mem.buffer, s = fx->stream;
    memset(p, 0, sizeof *p);
    p->f = f;
    p->buffer = b;
    p->stream = s;
    p->anchor = SG_NONE;
    p->anchor_next = SG_NONE;
    p->old_prev = sg_rw_stream_prev(e->st, f);
    p->t_before = e->finish[f];
    int rc;
    const sg_rw_buffers_t *bf = &e->bufs;
    uint32_t u0 = bf->user_start[b], u1 = bf->user_start[b + 1];
    bool cross = false;
    for (uint32_t i = u0; i < u1; i++)
        if (e->st->stream[bf->users[i]] != s) cross = true;
    if (s == SG_STREAM_EXPLICIT || s >= e->st->n_streams) {
        p->decision = D_SKIP;
        snprintf(p->why, sizeof p->why, "the free has no stream to be placed on");
        return SG_OK;
    }
    if (!cross) {
        p->decision = D_SAME_STREAM;
        snprintf(p->why, sizeof p->why, "every use is on %s, the free's own stream",
                 SG_RW_STREAM(g, s));
        return SG_OK;
    }
    /* 1. use after free in the input: no correct placement exists */
    for (uint32_t i = u0; i < u1; i++) {
        if (sg_reach_query(e->r, f, bf->users[i])) {
            p->decision = D_SKIP;
            snprintf(p->why, sizeof p->why,
                     "n%u uses %s after this free in the input (use after free): nothing "
                     "correct to place",
                     bf->users[i], SG_RW_LABEL(g->root->buffers[b].label));
            return SG_OK;
        }
    }
    /* 2. maxima and T */
    ids_t cand = {0};
    for (uint32_t i = u0; i < u1; i++)
        if ((rc = ids_push(&cand, bf->users[i]))) goto fail_cand;
    if (bf->alloc[b] != SG_NONE && (rc = ids_push(&cand, bf->alloc[b]))) goto fail_cand;
    for (uint32_t i = 0; i < cand.n; i++)
        if ((rc = ids_push(&p->keep_pred, cand.v[i]))) goto fail_cand;
    if ((rc = maximal(e, &cand, &p->maxima))) goto fail_cand;
    ids_free(&cand);
    p->t_uses = 0;
    bool last_elsewhere = false;
    for (uint32_t i = 0; i < p->maxima.n; i++) {
        sg_node_id_t m = p->maxima.v[i];
        if (e->st->stream[m] == s) continue;
        last_elsewhere = true;
        if (e->finish[m] > p->t_uses) p->t_uses = e->finish[m];
    }
    if (!last_elsewhere) {
        p->decision = D_SAME_STREAM;
        snprintf(p->why, sizeof p->why,
                 "last used on %s, the free's own stream (the other streams' uses are ordered "
                 "before that)",
                 SG_RW_STREAM(g, s));
        return SG_OK;
    }
    /* 3. Q: what reuses b's memory after F */
    {
        sg_node_id_t *q = NULL;
        uint32_t nq = 0;
        if ((rc = sg_rw_reuse_after(&e->ru, e->r, g, bf, f, b, &q, &nq))) return rc;
        p->reuse.v = q;
        p->reuse.n = p->reuse.cap = nq;
    }
    /* Settled already: after every use and the alloc, and hung on its own
     * stream. Such a free is left alone whatever the estimate would pick:
     * the pass changes only frees that are not ordered after every use. */
    bool settled = true, hung = false;
    uint32_t s0 = e->st->start[s], s1 = e->st->start[s + 1];
    for (uint32_t i = 0; i < p->keep_pred.n && settled; i++)
        settled = sg_reach_query(e->r, p->keep_pred.v[i], f);
    uint32_t others = 0; /* 0 or 1: does s hold anything but frees? */
    for (uint32_t i = s0; i < s1 && !others; i++)
        if (e->st->type[e->st->nodes[i]] != SG_NODE_MEM_FREE) others++;
    for (uint32_t i = 0; i < fx->n_in && !hung; i++)
        hung = e->st->stream[g->edges[fx->in[i]].from] == s;
    if (settled && (hung || others == 0)) {
        p->decision = D_IN_PLACE;
        p->anchor = p->old_prev;
        p->t_after = p->t_before;
        return SG_OK;
    }
    for (uint32_t i = 0; i < p->reuse.n; i++) {
        for (uint32_t k = 0; k < p->maxima.n; k++) {
            if (sg_reach_query(e->r, p->reuse.v[i], p->maxima.v[k])) {
                p->decision = D_SKIP;
                snprintf(p->why, sizeof p->why,
                         "n%u reuses the memory of %s before its use n%u in the input (reuse "
                         "race): nothing correct to place",
                         p->reuse.v[i], SG_RW_LABEL(g->root->buffers[b].label), p->maxima.v[k]);
                return SG_OK;
            }
        }
    }
    /* 4. the anchor on s: never before where the program freed, nor before
     * a use or the alloc on s */
    int64_t lo = (int64_t)e->st->index[f] - 1;
    for (uint32_t i = 0; i < p->keep_pred.n; i++) {
        sg_node_id_t v = p->keep_pred.v[i];
        if (e->st->stream[v] == s && (int64_t)e->st->index[v] > lo) lo = e->st->index[v];
    }
    sg_node_id_t anchor = SG_NONE, anchor_next = SG_NONE, anchor_work = SG_NONE;
    bool capped = false, reached = false;
    for (uint32_t i = s0 + (lo < 0 ? 0 : (uint32_t)lo); i < s1; i++) {
        sg_node_id_t v = e->st->nodes[i];
        if (v == f || e->st->type[v] == SG_NODE_MEM_FREE) continue;
        bool blocked = false;
        for (uint32_t k = 0; k < p->reuse.n && !blocked; k++)
            blocked = sg_reach_query(e->r, p->reuse.v[k], v);
        if (blocked) {
            capped = true;
            break;
        }
        /* what follows v on s (the free goes in between), and the next
         * piece of work there */
        sg_node_id_t nx = SG_NONE, nw = SG_NONE;
        for (uint32_t j = i + 1; j < s1 && nw == SG_NONE; j++) {
            sg_node_id_t y = e->st->nodes[j];
            if (y == f) continue;
            if (nx == SG_NONE) nx = y;
            if (e->st->type[y] != SG_NODE_MEM_FREE) nw = y;
        }
        /* v is no anchor if what follows it comes before a last use: the
         * free would have to precede and follow it */
        bool valid = true;
        for (uint32_t k = 0; k < p->maxima.n && valid && nx != SG_NONE; k++)
            valid = !sg_reach_query(e->r, nx, p->maxima.v[k]);
        if (!valid) continue;
        anchor = v;
        anchor_next = nx;
        anchor_work = nw;
        /* Reached: the stream is past the last use when v finishes, or its
         * next work cannot start before then anyway (it waits for the use
         * through its own dependencies): the free costs the stream nothing
         * here. */
        if (e->finish[v] >= p->t_uses || (nw != SG_NONE && e->start[nw] >= p->t_uses)) {
            reached = true;
            break;
        }
    }
    p->anchor_reason = reached ? ANCHOR_DONE : capped ? ANCHOR_CAPPED : ANCHOR_LAST;
    if (anchor == SG_NONE && others) {
        p->decision = D_SKIP;
        snprintf(p->why, sizeof p->why,
                 "no point on %s is after every use and before the memory's reuse (a reuse "
                 "hazard in the input: run sgcap check)",
                 SG_RW_STREAM(g, s));
        return SG_OK;
    }
    p->anchor = anchor;
    p->anchor_next = anchor_next;
    /* 5. neighbours: after the anchor and every last use not already
     * before it; before what follows the anchor on s, and before every
     * reuse not already after that */
    if (anchor != SG_NONE && (rc = ids_push(&p->new_in, anchor))) return rc;
    for (uint32_t i = 0; i < p->maxima.n; i++) {
        sg_node_id_t m = p->maxima.v[i];
        if (anchor != SG_NONE && sg_reach_query(e->r, m, anchor)) continue;
        if ((rc = ids_add_unique(&p->new_in, m))) return rc;
    }
    if (anchor_next != SG_NONE && (rc = ids_push(&p->new_out, anchor_next))) return rc;
    for (uint32_t i = 0; i < p->reuse.n; i++) {
        if (anchor_next != SG_NONE && sg_reach_query(e->r, anchor_next, p->reuse.v[i])) continue;
        if ((rc = ids_add_unique(&p->new_out, p->reuse.v[i]))) return rc;
    }
    /* F will be last on s: keep s joined, through F's own joins when it was
     * the joining node, else the anchor's */
    if (anchor_next == SG_NONE && s != e->origin) {
        bool f_joins = false;
        for (uint32_t k = 0; k < fx->n_out; k++)
            if (e->st->stream[g->edges[fx->out[k]].to] != s) f_joins = true;
        sg_node_id_t x = f_joins ? f : anchor;
        const sg_node_t *nx = x != SG_NONE ? &g->nodes[x] : NULL;
        for (uint32_t k = 0; nx && k < nx->n_out; k++) {
            sg_node_id_t y = g->edges[nx->out[k]].to;
            if (y == f || e->st->stream[y] == s) continue;
            bool bad = false;
            for (uint32_t i = 0; i < p->maxima.n && !bad; i++)
                bad = sg_reach_query(e->r, y, p->maxima.v[i]);
            if (bad) {
                p->decision = D_SKIP;
                snprintf(p->why, sizeof p->why,
                         "%s joins at n%u before a use of %s: the free cannot be placed on %s "
                         "after every use and still joined",
                         SG_RW_STREAM(g, s), y, SG_RW_LABEL(g->root->buffers[b].label),
                         SG_RW_STREAM(g, s));
                return SG_OK;
            }
            if ((rc = ids_add_unique(&p->new_out, y))) return rc;
        }
    }
    /* expected times: the free runs when the anchor and the uses are done;
     * the next work on s waits for it only if that is later than it would
     * start anyway */
    p->t_after = anchor != SG_NONE ? e->finish[anchor] : 0;
    for (uint32_t i = 0; i < p->new_in.n; i++)
        if (e->finish[p->new_in.v[i]] > p->t_after) p->t_after = e->finish[p->new_in.v[i]];
    if (anchor_work != SG_NONE) {
        double would = e->start[anchor_work];
        if (anchor != SG_NONE && e->finish[anchor] > would) would = e->finish[anchor];
        p->stall = p->t_after > would ? p->t_after - would : 0;
    }
    p->decision = D_MOVED;
    return SG_OK;
fail_cand:
    ids_free(&cand);
    return rc;
}

/* ---- applying ----------------------------------------------------------------------- */

static sg_edge_kind_t bridge_kind(const sg_rw_streams_t *st, const sg_edge_t *in,
                                  const sg_edge_t *out, uint32_t *event)
{
    sg_node_id_t a = in->from, b = out->to;
    bool cross = st->stream[a] != st->stream[b];
    *event = SG_NONE;
    if (cross && out->kind == SG_EDGE_EVENT) {
        *event = out->event;
        return SG_EDGE_EVENT;
    }
    if (cross && in->kind == SG_EDGE_EVENT) {
        *event = in->event;
        return SG_EDGE_EVENT;
    }
    if (!cross && in->kind == SG_EDGE_STREAM && out->kind == SG_EDGE_STREAM) return SG_EDGE_STREAM;
    return SG_EDGE_CONTROL;
}

typedef struct {
    ids_t removed_from, removed_to; /* old edges dropped, as pairs */
    ids_t added_from, added_to;     /* edges added (dealloc, anchor, bridges) */
    uint8_t *added_kind;
    uint32_t n_kind, cap_kind;
} changes_t;

static int note_added(changes_t *c, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k)
{
    int rc = ids_push(&c->added_from, a);
    if (!rc) rc = ids_push(&c->added_to, b);
    if (rc) return rc;
    if (c->n_kind == c->cap_kind) {
        uint32_t nc = c->cap_kind ? c->cap_kind * 2 : 8;
        uint8_t *p = realloc(c->added_kind, nc);
        if (!p) return SG_ENOMEM;
        c->added_kind = p;
        c->cap_kind = nc;
    }
    c->added_kind[c->n_kind++] = (uint8_t)k;
    return SG_OK;
}

static void changes_free(changes_t *c)
{
    ids_free(&c->removed_from);
    ids_free(&c->removed_to);
    ids_free(&c->added_from);
    ids_free(&c->added_to);
    free(c->added_kind);
    memset(c, 0, sizeof *c);
}

static int apply_one(sg_graph_t *g, const sg_rw_streams_t *st, const plan_t *p, undo_t *u,
                     changes_t *c)
{
    sg_node_id_t f = p->f;
    int rc = SG_OK;
    /* Copy F's old edges: the adjacency arrays change under us. */
    sg_node_t *fx = &g->nodes[f];
    uint32_t nin = fx->n_in, nout = fx->n_out;
    sg_edge_t *ins = malloc((nin ? nin : 1) * sizeof *ins);
    sg_edge_t *outs = malloc((nout ? nout : 1) * sizeof *outs);
    bool *drop_in = calloc(nin ? nin : 1, 1), *drop_out = calloc(nout ? nout : 1, 1);
    if (!ins || !outs || !drop_in || !drop_out) {
        rc = SG_ENOMEM;
        goto out;
    }
    /* An old edge whose endpoint stays a neighbour is kept when it already
     * has the kind the pass gives such an edge (stream from the anchor,
     * dealloc otherwise), else it is replaced: a moved free carries no event
     * edge, so no rule about record/wait points applies to it later. */
    for (uint32_t i = 0; i < nin; i++) {
        ins[i] = g->edges[fx->in[i]];
        drop_in[i] = !ids_has(&p->new_in, ins[i].from);
    }
    for (uint32_t i = 0; i < nout; i++) {
        outs[i] = g->edges[fx->out[i]];
        drop_out[i] = !ids_has(&p->new_out, outs[i].to);
    }
    /* bridges first, so no path is ever missing */
    for (uint32_t i = 0; i < nin; i++) {
        for (uint32_t k = 0; k < nout; k++) {
            if (!drop_in[i] && !drop_out[k]) continue;
            sg_node_id_t a = ins[i].from, b = outs[k].to;
            if (a == b || sg_graph_find_edge(g, a, b) != SG_NONE) continue;
            uint32_t ev;
            sg_edge_kind_t kind = bridge_kind(st, &ins[i], &outs[k], &ev);
            if ((rc = add_edge_logged(g, u, a, b, kind, ev))) goto out;
            if ((rc = note_added(c, a, b, kind))) goto out;
        }
    }
    for (uint32_t i = 0; i < nin; i++) {
        sg_edge_kind_t want = ins[i].from == p->anchor ? SG_EDGE_STREAM : SG_EDGE_DEALLOC;
        if (!drop_in[i] && ins[i].kind == want) continue;
        if ((rc = remove_edge_logged(g, u, ins[i].id))) goto out;
        if ((rc = ids_push(&c->removed_from, ins[i].from)) ||
            (rc = ids_push(&c->removed_to, f)))
            goto out;
    }
    for (uint32_t i = 0; i < nout; i++) {
        sg_edge_kind_t want = outs[i].to == p->anchor_next ? SG_EDGE_STREAM : SG_EDGE_DEALLOC;
        if (!drop_out[i] && outs[i].kind == want) continue;
        if ((rc = remove_edge_logged(g, u, outs[i].id))) goto out;
        if ((rc = ids_push(&c->removed_from, f)) || (rc = ids_push(&c->removed_to, outs[i].to)))
            goto out;
    }
    for (uint32_t i = 0; i < p->new_in.n; i++) {
        sg_node_id_t a = p->new_in.v[i];
        sg_edge_kind_t kind = a == p->anchor ? SG_EDGE_STREAM : SG_EDGE_DEALLOC;
        bool have = false;
        const sg_node_t *nf = &g->nodes[f];
        for (uint32_t k = 0; k < nf->n_in && !have; k++)
            have = g->edges[nf->in[k]].from == a && g->edges[nf->in[k]].kind == kind;
        if (have) continue;
        if ((rc = add_edge_logged(g, u, a, f, kind, SG_NONE))) goto out;
        if ((rc = note_added(c, a, f, kind))) goto out;
    }
    for (uint32_t i = 0; i < p->new_out.n; i++) {
        sg_node_id_t b = p->new_out.v[i];
        sg_edge_kind_t kind = b == p->anchor_next ? SG_EDGE_STREAM : SG_EDGE_DEALLOC;
        bool have = false;
        const sg_node_t *nf = &g->nodes[f];
        for (uint32_t k = 0; k < nf->n_out && !have; k++)
            have = g->edges[nf->out[k]].to == b && g->edges[nf->out[k]].kind == kind;
        if (have) continue;
        if ((rc = add_edge_logged(g, u, f, b, kind, SG_NONE))) goto out;
        if ((rc = note_added(c, f, b, kind))) goto out;
    }
    if (p->anchor != SG_NONE && p->anchor != p->old_prev &&
        g->nodes[f].seq != g->nodes[p->anchor].seq) {
        if ((rc = undo_push(u, (op_t){.kind = OP_SEQ, .node = f, .seq = g->nodes[f].seq})))
            goto out;
        g->nodes[f].seq = g->nodes[p->anchor].seq;
    }
out:
    free(ins);
    free(outs);
    free(drop_in);
    free(drop_out);
    return rc;
}

/* ---- reporting ------------------------------------------------------------------------ */

static void ids_jw(sg_jw_t *w, const char *key, const ids_t *l)
{
    sg_jw_key(w, key);
    sg_jw_array(w);
    for (uint32_t i = 0; i < l->n; i++) sg_jw_int(w, l->v[i]);
    sg_jw_end(w);
}

static void pairs_jw(sg_jw_t *w, const char *key, const ids_t *from, const ids_t *to,
                     const uint8_t *kinds)
{
    sg_jw_key(w, key);
    sg_jw_array(w);
    for (uint32_t i = 0; i < from->n; i++) {
        sg_jw_object(w);
        sg_jw_kint(w, "from", from->v[i]);
        sg_jw_kint(w, "to", to->v[i]);
        if (kinds) sg_jw_kstring(w, "kind", sg_edge_kind_name(kinds[i]));
        sg_jw_end(w);
    }
    sg_jw_end(w);
}

static void report_one(sg_pass_ctx_t *ctx, env_t *e, const sg_rw_names_t *names, const plan_t *p,
                       const changes_t *c, sg_jw_t *arr)
{
    sg_graph_t *g = ctx->g;
    const sg_buffer_t *buf = &g->root->buffers[p->buffer];
    char a[200], b[200];
    sg_rw_printf(ctx, "free %s: %s, %llu %s, %s\n", sg_rw_names_get(names, g, p->f, a, sizeof a),
                 SG_RW_LABEL(buf->label), (unsigned long long)buf->size,
                 sg_plural(buf->size, "byte", "bytes"), decision_name(p));
    sg_jw_object(arr);
    sg_jw_key(arr, "free");
    sg_rw_names_jw(arr, names, g, p->f);
    sg_jw_kstring(arr, "buffer", buf->label);
    sg_jw_kint(arr, "bytes", (long long)buf->size);
    sg_jw_kstring(arr, "decision", decision_name(p));
    if (p->decision == D_SAME_STREAM || p->decision == D_SKIP) {
        sg_rw_printf(ctx, "  %s\n", p->why);
        sg_jw_kstring(arr, "why", p->why);
        sg_jw_end(arr);
        return;
    }
    sg_rw_printf(ctx, "  last uses:");
    for (uint32_t i = 0; i < p->maxima.n; i++)
        sg_rw_printf(ctx, "%s %s at %.3f us", i ? "," : "",
                     sg_rw_names_get(names, g, p->maxima.v[i], a, sizeof a),
                     e->finish[p->maxima.v[i]] / 1000.0);
    sg_rw_printf(ctx, "\n");
    char why_here[200];
    const char *sn = SG_RW_STREAM(g, p->stream);
    if (p->anchor_reason == ANCHOR_DONE)
        snprintf(why_here, sizeof why_here,
                 "the first node on %s expected to finish after the other streams' last use", sn);
    else if (p->anchor_reason == ANCHOR_CAPPED)
        snprintf(why_here, sizeof why_here, "the last node on %s before a reuse of the memory", sn);
    else
        snprintf(why_here, sizeof why_here,
                 "the last node on %s (none finishes after the other streams' last use)", sn);
    if (p->decision == D_IN_PLACE) {
        sg_rw_printf(ctx,
                     "  in place: already after every use and on %s (after %s), expected at "
                     "%.3f us\n",
                     SG_RW_STREAM(g, p->stream),
                     p->anchor != SG_NONE ? sg_rw_names_get(names, g, p->anchor, a, sizeof a)
                                          : "nothing",
                     p->t_after / 1000.0);
    } else {
        if (p->old_prev != SG_NONE)
            sg_rw_printf(ctx, "  was: after %s, expected at %.3f us\n",
                         sg_rw_names_get(names, g, p->old_prev, a, sizeof a), p->t_before / 1000.0);
        else
            sg_rw_printf(ctx, "  was: first on %s, expected at %.3f us\n",
                         SG_RW_STREAM(g, p->stream), p->t_before / 1000.0);
        if (p->anchor != SG_NONE)
            sg_rw_printf(ctx, "  now: after %s, %s (%.3f us); expected at %.3f us\n",
                         sg_rw_names_get(names, g, p->anchor, a, sizeof a), why_here,
                         p->t_uses / 1000.0, p->t_after / 1000.0);
        else
            sg_rw_printf(ctx, "  now: after its uses only, expected at %.3f us\n",
                         p->t_after / 1000.0);
    }
    if (p->decision == D_MOVED && p->stall > 0)
        sg_rw_printf(ctx, "  expected stall of %s at the free: %.3f us\n",
                     SG_RW_STREAM(g, p->stream), p->stall / 1000.0);
    for (uint32_t i = 0; i < c->added_from.n; i++)
        sg_rw_printf(ctx, "  + %s %s -> %s\n", sg_edge_kind_name(c->added_kind[i]),
                     sg_rw_names_get(names, g, c->added_from.v[i], a, sizeof a),
                     sg_rw_names_get(names, g, c->added_to.v[i], b, sizeof b));
    for (uint32_t i = 0; i < c->removed_from.n; i++)
        sg_rw_printf(ctx, "  - %s -> %s\n",
                     sg_rw_names_get(names, g, c->removed_from.v[i], a, sizeof a),
                     sg_rw_names_get(names, g, c->removed_to.v[i], b, sizeof b));
    if (p->reuse.n) {
        sg_rw_printf(ctx, "  reuse kept: after the free:");
        for (uint32_t i = 0; i < p->reuse.n; i++)
            sg_rw_printf(ctx, "%s %s", i ? "," : "",
                         sg_rw_names_get(names, g, p->reuse.v[i], a, sizeof a));
        sg_rw_printf(ctx, "\n");
    }
    double delta = p->t_after - p->t_before;
    double mib_us = (double)buf->size / 1048576.0 * delta / 1000.0;
    if (p->decision == D_MOVED)
        sg_rw_printf(ctx, "  live until %.3f us instead of %.3f us: %+.3f us, %+.3f MiB*us %s\n",
                     p->t_after / 1000.0, p->t_before / 1000.0, delta / 1000.0, mib_us,
                     delta > 0 ? "(memory held longer: reuse lost)"
                     : delta < 0 ? "(released earlier: reuse gained)"
                                 : "(same)");
    ids_jw(arr, "last_uses", &p->maxima);
    sg_jw_kid(arr, "was_after", p->old_prev);
    sg_jw_kid(arr, "now_after", p->anchor);
    sg_jw_kreal(arr, "uses_done_ns", p->t_uses);
    sg_jw_kreal(arr, "expected_stall_ns", p->stall);
    sg_jw_kreal(arr, "free_before_ns", p->t_before);
    sg_jw_kreal(arr, "free_after_ns", p->t_after);
    sg_jw_kreal(arr, "live_delta_ns", delta);
    sg_jw_kreal(arr, "live_delta_byte_ns", (double)buf->size * delta);
    ids_jw(arr, "reuse_kept", &p->reuse);
    pairs_jw(arr, "added", &c->added_from, &c->added_to, c->added_kind);
    pairs_jw(arr, "removed", &c->removed_from, &c->removed_to, NULL);
    sg_jw_end(arr);
}

/* ---- the pass ------------------------------------------------------------------------ */

static int run_all(sg_pass_ctx_t *ctx, env_t *e, plan_t *plans, uint32_t n, bool careful,
                   undo_t *u, changes_t *ch, uint32_t *n_cycles)
{
    sg_graph_t *g = ctx->g;
    for (uint32_t i = 0; i < n; i++) {
        plan_t *p = &plans[i];
        if (p->decision != D_MOVED) continue;
        size_t mark = u->n;
        int rc = apply_one(g, e->st, p, u, &ch[i]);
        if (rc) return rc;
        if (careful) {
            rc = sg_reach_check_acyclic(g);
            if (rc == SG_ECYCLE) {
                if ((rc = undo_to(g, u, mark))) return rc;
                changes_free(&ch[i]);
                p->decision = D_SKIP;
                snprintf(p->why, sizeof p->why,
                         "placing it would close a cycle with the frees placed before it");
                (*n_cycles)++;
            } else if (rc) {
                return rc;
            }
        }
    }
    return SG_OK;
}

int sg_pass_defer_dealloc(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    env_t e = {0};
    e.g = g;
    plan_t *plans = NULL;
    changes_t *ch = NULL;
    undo_t u = {0};
    uint32_t n = 0;
    sg_node_id_t *frees = NULL;
    sg_rw_names_t names = {0};
    sg_jw_t *arr = NULL;
    int rc;
    e.r = sg_rw_input_reach(ctx, &rc);
    if (rc) return rc;
    if (!(e.st = sg_rw_input_streams(ctx, &rc))) goto out;
    /* the nodes' costs from the buffer table's pass over the nodes */
    double *cost = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *cost);
    if (!cost) {
        rc = SG_ENOMEM;
        goto out;
    }
    if ((rc = sg_rw_buffers_build_costs(g, &e.bufs, cost))) {
        free(cost);
        goto out;
    }
    if ((rc = sg_rw_reuse_build(g, e.r, &e.bufs, &e.ru))) {
        free(cost);
        goto out;
    }
    if ((rc = sg_rw_timeline_from(g, e.r, cost, &e.start, &e.finish))) goto out;
    e.origin = e.st->origin;
    /* the frees, in id order (types from st: only frees are read) */
    frees = malloc((e.st->n_ids ? e.st->n_ids : 1) * sizeof *frees);
    if (!frees) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < e.st->n_ids; i++) {
        uint32_t ahead = i + SG_PREFETCH_AHEAD;
        if (ahead < e.st->n_ids && e.st->type[ahead] == SG_NODE_MEM_FREE)
            sg_prefetch_node(g, ahead, 96); /* to u.mem */
        if (e.st->type[i] == SG_NODE_MEM_FREE && g->nodes[i].u.mem.buffer < g->root->n_buffers)
            frees[n++] = i;
    }
    plans = calloc(n ? n : 1, sizeof *plans);
    ch = calloc(n ? n : 1, sizeof *ch);
    if (!plans || !ch) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t k = 0; k < n; k++)
        if ((rc = plan_one(&e, frees[k], &plans[k]))) goto out;
    /* Decisions were made on the input's snapshot, all at once; applying
     * them together is acyclic except on pathological inputs (see the file
     * comment). Check once; if not, undo and place one at a time. */
    uint32_t n_cycles = 0;
    bool careful = false;
    if ((rc = run_all(ctx, &e, plans, n, false, &u, ch, &n_cycles))) goto out;
    /* the check is the snapshot of the output that the verifier needs (and
     * the next pass's input): the graph does not change after it, so it is
     * handed over. It is the input's with the nodes the pass changed read
     * again (their edges, and the frees' sequence numbers), not a read of
     * the whole graph. */
    rc = sg_reach_build_edited(g, e.r, u.touched.v, u.touched.n, 0, &ctx->out_reach);
    if (rc == SG_ECYCLE) {
        careful = true;
        if ((rc = undo_to(g, &u, 0))) goto out;
        for (uint32_t i = 0; i < n; i++) changes_free(&ch[i]);
        if ((rc = run_all(ctx, &e, plans, n, true, &u, ch, &n_cycles))) goto out;
        /* acyclic now, frees placed one at a time (a cycle left is the
         * verifier's to report) */
        rc = sg_reach_build_edited(g, e.r, u.touched.v, u.touched.n, 0, &ctx->out_reach);
        if (rc == SG_ECYCLE) rc = SG_OK;
        if (rc) goto out;
    } else if (rc) {
        goto out;
    }
    /* the names the report prints, made in id order (each one made where
     * it is printed, when they cannot be) */
    uint8_t *want = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    if (want) {
        for (uint32_t i = 0; i < n; i++) {
            const plan_t *p = &plans[i];
            const changes_t *c = &ch[i];
            const ids_t *lists[] = {&p->maxima,   &p->reuse,        &c->added_from,
                                    &c->added_to, &c->removed_from, &c->removed_to};
            sg_node_id_t one[] = {p->f, p->anchor, p->old_prev};
            for (size_t k = 0; k < sizeof one / sizeof one[0]; k++)
                if (one[k] < g->n_nodes) want[one[k]] = 1;
            for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
                for (uint32_t k = 0; k < lists[l]->n; k++)
                    if (lists[l]->v[k] < g->n_nodes) want[lists[l]->v[k]] = 1;
        }
        sg_rw_names_make(g, want, &names, NULL, NULL);
        free(want);
    }
    uint32_t count[4] = {0}, ordered = 0;
    arr = sg_rw_json_member(ctx, "frees");
    sg_jw_array(arr);
    size_t text0 = 0, json0 = 0;
    double byte_ns = 0;
    uint32_t dealloc_edges = 0;
    for (uint32_t i = 0; i < n; i++) {
        const plan_t *p = &plans[i];
        count[p->decision]++;
        if (p->decision == D_MOVED && p->anchor == p->old_prev) ordered++;
        sg_rw_reserve_rest(ctx, i, n, &text0, &json0);
        report_one(ctx, &e, &names, p, &ch[i], arr);
        if (p->decision == D_MOVED) {
            byte_ns += (double)g->root->buffers[p->buffer].size * (p->t_after - p->t_before);
            for (uint32_t j = 0; j < ch[i].n_kind; j++)
                if (ch[i].added_kind[j] == SG_EDGE_DEALLOC) dealloc_edges++;
            if ((rc = sg_rw_note_moved(ctx, p->f, p->keep_pred.v, p->keep_pred.n, p->reuse.v,
                                       p->reuse.n)))
                goto out;
        }
    }
    if (careful)
        sg_rw_printf(ctx,
                     "note: placing every free at once closed a cycle; placed one at a time "
                     "instead (%u skipped)\n",
                     n_cycles);
    if (n == 0) sg_rw_printf(ctx, "no frees in the graph\n");
    /* what the decisions rest on: kernel users whose access to freed memory
     * is the capture's guess (no access facts: the access pass, offline
     * only, did not run before this one or could not analyse their code) */
    uint32_t guessed = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = plans[i].buffer;
        for (uint32_t j = e.bufs.user_start[b]; j < e.bufs.user_start[b + 1]; j++) {
            sg_node_id_t x = e.bufs.users[j];
            if (e.st->type[x] != SG_NODE_KERNEL) continue;
            for (uint32_t a = e.bufs.acc_start[x]; a < e.bufs.acc_start[x + 1]; a++)
                if (e.bufs.acc_buffer[a] == b && e.bufs.acc_guess[a]) {
                    guessed++;
                    break;
                }
        }
    }
    if (guessed)
        sg_rw_printf(ctx,
                     "note: %u kernel %s of freed memory %s guessed from pointer arguments "
                     "(no access facts from their code)\n",
                     guessed, sg_plural(guessed, "use", "uses"), sg_plural(guessed, "is", "are"));
    sg_jw_end(arr);
    sg_rw_json_set(ctx, "guessed_uses", json_integer(guessed));
    sg_rw_json_set(ctx, "live_delta_byte_ns", json_real(byte_ns));
    sg_rw_summary(ctx,
                  "%u %s: %u moved, %u ordered in place (%u dealloc %s), %u already in "
                  "place, %u same-stream, %u skipped; live bytes x time %+.3f MiB*us",
                  n, sg_plural(n, "free", "frees"), count[D_MOVED] - ordered, ordered,
                  dealloc_edges, sg_plural(dealloc_edges, "edge", "edges"), count[D_IN_PLACE],
                  count[D_SAME_STREAM], count[D_SKIP], byte_ns / 1048576.0 / 1000.0);
out:
    free(frees);
    sg_rw_names_free(&names);
    for (uint32_t i = 0; plans && i < n; i++) plan_free(&plans[i]);
    for (uint32_t i = 0; ch && i < n; i++) changes_free(&ch[i]);
    free(plans);
    free(ch);
    free(u.ops);
    ids_free(&u.touched);
    free(e.start);
    free(e.finish);
    sg_rw_buffers_free(&e.bufs);
    sg_rw_reuse_free(&e.ru);
    return rc;
}
