/* fusion_legality.c: the chain finder of fusion_legality.h and the
 * `fusion-legality` pass, which reports the chains and what ended each
 * without changing the graph. O(V log V + E). */
#include "fusion_legality.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"

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
 * another stream) on x's out (dir 0) or in (dir 1) side; SG_NONE if none. */
static sg_edge_id_t find_side_edge(const sg_graph_t *g, const sg_node_t *x, int dir, int kind)
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
            const sg_node_t *o = &g->nodes[dir ? e->from : e->to];
            hit = e->kind != SG_EDGE_EVENT && o->stream != x->stream;
        }
        if (hit && (best == SG_NONE || ids[i] < best)) best = ids[i]; /* deterministic */
    }
    return best;
}

/* Why x and its stream successor y may not be joined, looking at their
 * edges only: an event edge out of x (a record point) or into y (a wait
 * point), an edge to or from another stream, no direct edge, another
 * successor of x or predecessor of y, a programmatic or ported edge. */
static sg_barrier_t link_barrier(const sg_graph_t *g, sg_node_id_t x, sg_node_id_t y)
{
    const sg_node_t *nx = &g->nodes[x], *ny = &g->nodes[y];
    sg_edge_id_t e = find_side_edge(g, nx, 0, SG_EDGE_EVENT);
    if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_OUT, g->edges[e].to, e);
    e = find_side_edge(g, ny, 1, SG_EDGE_EVENT);
    if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_IN, g->edges[e].from, e);
    e = find_side_edge(g, nx, 0, -1);
    if (e != SG_NONE) return barrier(SG_BARRIER_STREAM_CHANGE, g->edges[e].to, e);
    e = find_side_edge(g, ny, 1, -1);
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

/* Why the chain whose last kernel is a, and which passed the frees
 * prior[0..n_prior), does not go on to the next kernel in a's stream. On
 * SG_BARRIER_NONE, *next is that kernel and frees[0..*nf) the mem_free
 * nodes passed on the way (frees has room for the stream). */
static sg_barrier_t extend_barrier(const sg_graph_t *g, const sg_rw_streams_t *st, sg_node_id_t a,
                                   const sg_node_id_t *prior, uint32_t n_prior,
                                   sg_node_id_t *next, sg_node_id_t *frees, uint32_t *nf)
{
    *nf = 0;
    *next = SG_NONE;
    sg_node_id_t x = a;
    for (;;) {
        sg_node_id_t y = sg_rw_stream_next(g, st, x);
        const sg_node_t *nx = &g->nodes[x];
        if (y == SG_NONE) {
            sg_edge_id_t e = find_side_edge(g, nx, 0, SG_EDGE_EVENT);
            if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_OUT, g->edges[e].to, e);
            e = find_side_edge(g, nx, 0, -1);
            if (e != SG_NONE) return barrier(SG_BARRIER_STREAM_CHANGE, g->edges[e].to, e);
            return barrier(SG_BARRIER_STREAM_END, SG_NONE, SG_NONE);
        }
        const sg_node_t *ny = &g->nodes[y];
        if (ny->type != SG_NODE_KERNEL && ny->type != SG_NODE_MEM_FREE) {
            /* a record right after the kernel is named as such */
            sg_edge_id_t e = find_side_edge(g, nx, 0, SG_EDGE_EVENT);
            if (e != SG_NONE) return barrier(SG_BARRIER_EVENT_OUT, g->edges[e].to, e);
            return barrier(type_barrier(ny->type), y, SG_NONE);
        }
        sg_barrier_t b = link_barrier(g, x, y);
        if (b.kind != SG_BARRIER_NONE) {
            /* a free that cannot be passed is a memory node in the way */
            if (ny->type == SG_NODE_MEM_FREE) return barrier(SG_BARRIER_MEMORY_NODE, y, SG_NONE);
            return b;
        }
        if (ny->type == SG_NODE_MEM_FREE) {
            frees[(*nf)++] = y;
            x = y;
            continue;
        }
        b = kernel_barrier(&g->nodes[a], ny);
        if (b.kind != SG_BARRIER_NONE) return b;
        for (uint32_t i = 0; i < n_prior + *nf; i++) {
            sg_node_id_t f = i < n_prior ? prior[i] : frees[i - n_prior];
            if (touches_freed(g, ny, &g->nodes[f])) return barrier(SG_BARRIER_FREE_USE, f, SG_NONE);
        }
        *next = y;
        return b;
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

/* The finder on a given snapshot of g (r may be NULL: one is built). Each
 * chain starts at the first kernel of its stream not in an earlier chain
 * and is extended through extend_barrier; the barrier that stops it is its
 * tail and the next chain's head. */
static int chains_find(const sg_graph_t *g, sg_reach_t *given, sg_fusion_chains_t *out)
{
    if (!g || !out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    sg_reach_t *r = given;
    sg_rw_streams_t st = {0};
    sg_node_id_t *pend = NULL;
    int rc = given ? SG_OK : sg_reach_build(g, 0, &r);
    if (rc) return rc;
    if ((rc = sg_rw_streams_build(g, r, &st))) goto out;
    uint32_t n_kernels = 0, n_frees = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].removed) continue;
        n_kernels += g->nodes[i].type == SG_NODE_KERNEL;
        n_frees += g->nodes[i].type == SG_NODE_MEM_FREE;
    }
    out->storage = malloc((n_kernels ? n_kernels : 1) * sizeof *out->storage);
    out->chains = malloc((n_kernels ? n_kernels : 1) * sizeof *out->chains);
    out->free_storage = malloc((n_frees ? n_frees : 1) * sizeof *out->free_storage);
    pend = malloc((n_frees ? n_frees : 1) * sizeof *pend);
    if (!out->storage || !out->chains || !out->free_storage || !pend) {
        rc = SG_ENOMEM;
        goto out;
    }
    uint32_t used = 0, used_frees = 0;
    for (uint32_t s = 0; s < st.n_streams; s++) {
        sg_barrier_t head = barrier(SG_BARRIER_STREAM_START, SG_NONE, SG_NONE);
        sg_node_id_t prev = SG_NONE; /* the node before v in program order */
        for (uint32_t i = st.start[s]; i < st.start[s + 1]; i++) {
            sg_node_id_t v = st.nodes[i];
            if (g->nodes[v].type != SG_NODE_KERNEL) {
                prev = v;
                continue;
            }
            if (prev != SG_NONE && g->nodes[prev].type != SG_NODE_KERNEL)
                head = barrier(type_barrier(g->nodes[prev].type), prev, SG_NONE);
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
            sg_node_id_t last = v;
            for (;;) {
                sg_node_id_t next;
                uint32_t nf;
                sg_barrier_t why = extend_barrier(g, &st, last, cur->frees, cur->n_frees, &next,
                                                 pend, &nf);
                if (why.kind != SG_BARRIER_NONE) {
                    cur->tail = why;
                    head = why;
                    break;
                }
                memcpy(out->free_storage + used_frees, pend, nf * sizeof *pend);
                used_frees += nf;
                cur->n_frees += nf;
                out->storage[used++] = next;
                cur->n_nodes++;
                last = next;
            }
            /* skip to the chain's last kernel (frees in it included) */
            while (i + 1 < st.start[s + 1] && st.nodes[i] != last) i++;
            prev = last;
        }
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed || x->type != SG_NODE_KERNEL || x->stream < st.n_streams) continue;
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
    sg_rw_streams_free(&st);
    if (r != given) sg_reach_destroy(r);
    if (rc) sg_fusion_chains_free(out);
    return rc;
}

int sg_fusion_chains_find(const sg_graph_t *g, sg_fusion_chains_t *out)
{
    return chains_find(g, NULL, out);
}

/* ---- the pass ---------------------------------------------------------------- */

static void describe_barrier(const sg_graph_t *g, const sg_barrier_t *b, char *buf, size_t n)
{
    char node[200] = "";
    if (b->node != SG_NONE) sg_rw_node_name(g, b->node, node, sizeof node);
    const sg_edge_t *e = b->edge != SG_NONE ? sg_graph_edge(g, b->edge) : NULL;
    char edge[160] = "";
    if (e) {
        const sg_event_t *ev = sg_graph_event(g, e->event);
        snprintf(edge, sizeof edge, " via %s edge n%u -> n%u%s%s", sg_edge_kind_name(e->kind),
                 e->from, e->to, ev ? " on " : "", ev ? ev->label : "");
    }
    snprintf(buf, n, "%s%s%s%s", sg_barrier_kind_name(b->kind), node[0] ? " at " : "", node, edge);
}

static json_t *barrier_json(const sg_barrier_t *b)
{
    json_t *o = json_pack("{s:s}", "barrier", sg_barrier_kind_name(b->kind));
    if (!o) return NULL;
    json_object_set_new(o, "node", b->node != SG_NONE ? json_integer(b->node) : json_null());
    json_object_set_new(o, "edge", b->edge != SG_NONE ? json_integer(b->edge) : json_null());
    return o;
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
    sg_reach_t *r = sg_rw_input_reach(ctx, &rc);
    if (rc) return rc;
    if ((rc = chains_find(g, r, &fc))) return rc;
    json_t *arr = json_array();
    if (!arr) {
        sg_fusion_chains_free(&fc);
        return SG_ENOMEM;
    }
    bool list_singles = fc.n_kernels <= LIST_SINGLES_MAX;
    uint32_t fused_away = 0, singles = 0;
    for (uint32_t c = 0; c < fc.n_chains; c++) {
        const sg_fusion_chain_t *ch = &fc.chains[c];
        char hb[400], tb[400], name[200];
        if (ch->n_nodes < 2) {
            singles++;
            if (!list_singles) continue;
        }
        describe_barrier(g, &ch->head, hb, sizeof hb);
        describe_barrier(g, &ch->tail, tb, sizeof tb);
        if (ch->n_nodes < 2) {
            sg_rw_printf(ctx, "single %s: %s\n  head: %s\n  tail: %s\n",
                         sg_rw_stream_name(g, ch->stream),
                         sg_rw_node_name(g, ch->nodes[0], name, sizeof name), hb, tb);
        } else {
            const sg_kernel_t *k0 = &g->nodes[ch->nodes[0]].u.kernel;
            sg_rw_printf(ctx, "chain %s: %u kernels, grid %ux%ux%u block %ux%ux%u\n",
                         sg_rw_stream_name(g, ch->stream), ch->n_nodes, k0->grid[0], k0->grid[1],
                         k0->grid[2], k0->block[0], k0->block[1], k0->block[2]);
            for (uint32_t i = 0; i < ch->n_nodes; i++)
                sg_rw_printf(ctx, "  %s\n", sg_rw_node_name(g, ch->nodes[i], name, sizeof name));
            for (uint32_t i = 0; i < ch->n_frees; i++)
                sg_rw_printf(ctx, "  passes %s (fusion sinks it below the chain)\n",
                             sg_rw_node_name(g, ch->frees[i], name, sizeof name));
            sg_rw_printf(ctx, "  head: %s\n  tail: %s\n", hb, tb);
            fused_away += ch->n_nodes - 1;
        }
        json_t *ids = json_array();
        for (uint32_t i = 0; i < ch->n_nodes; i++) json_array_append_new(ids, json_integer(ch->nodes[i]));
        json_t *frees = json_array();
        for (uint32_t i = 0; i < ch->n_frees; i++) json_array_append_new(frees, json_integer(ch->frees[i]));
        json_array_append_new(
            arr, json_pack("{s:s, s:o, s:o, s:o, s:o}", "stream", sg_rw_stream_name(g, ch->stream),
                           "nodes", ids, "frees", frees, "head", barrier_json(&ch->head), "tail",
                           barrier_json(&ch->tail)));
    }
    if (!list_singles && singles)
        sg_rw_printf(ctx, "%u single kernels (chains of 1) not listed (more than %d kernels)\n",
                     singles, LIST_SINGLES_MAX);
    json_t *counts = json_object();
    sg_rw_printf(ctx, "chain ends by barrier:");
    for (int k = 1; k < SG_BARRIER_KIND_COUNT; k++) {
        if (!fc.tail_counts[k]) continue;
        sg_rw_printf(ctx, " %s %u", sg_barrier_kind_name(k), fc.tail_counts[k]);
        json_object_set_new(counts, sg_barrier_kind_name(k), json_integer(fc.tail_counts[k]));
    }
    sg_rw_printf(ctx, "%s\n", fc.n_chains ? "" : " (no kernels)");
    sg_rw_json_set(ctx, "chains", arr);
    sg_rw_json_set(ctx, "singles_listed", json_boolean(list_singles));
    sg_rw_json_set(ctx, "tail_barriers", counts);
    sg_rw_json_set(ctx, "kernels", json_integer(fc.n_kernels));
    sg_rw_json_set(ctx, "candidates", json_integer(fc.n_candidates));
    sg_rw_summary(ctx,
                  "%u kernels in %u chains, %u fusion candidates (chains of >= 2) covering %u "
                  "launches that fusion could remove; graph unchanged",
                  fc.n_kernels, fc.n_chains, fc.n_candidates, fused_away);
    sg_fusion_chains_free(&fc);
    return SG_OK;
}
