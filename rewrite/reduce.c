/* reduce.c: pass `reduce` (optional, not in the default list): remove
 * edges whose ordering another path already gives (transitive reduction),
 * so the instantiated graph carries fewer dependencies.
 *
 * An edge u -> v of kind stream or control, with default CUDA edge data, is
 * removed when u reaches v through another first hop (some other successor
 * w of u reaches v, or u reaches some other predecessor x of v; whichever
 * side has fewer edges is tried). A parallel duplicate (same endpoints) is
 * removed when another edge u -> v stays. Event and dealloc edges are never
 * removed except as exact duplicates (same kind and event), so the last path
 * that carries an event or dealloc ordering always stays; programmatic
 * edges and edges with ports are never removed.
 *
 * Guarantee: reachability is exactly preserved. Removing every edge that
 * has an alternative path in a DAG keeps every ordering (the alternative
 * path's edges are either kept or themselves have alternatives that end in
 * kept edges: induction on topological distance), and this pass removes a
 * subset of those. Idempotent in its own terms: what it keeps has no
 * alternative path, except the edges it never removes.
 *
 * Cost: one reachability snapshot (removals do not change reachability, so
 * it stays valid) plus O(sum over edges of min(outdeg(u), indeg(v))) O(1)
 * queries; with the verifier on, the output's snapshot, made from the
 * input's and the removed edges' ends (sg_reach_build_edited).
 */
#include <stdio.h>
#include <stdlib.h>

#include "rewrite_internal.h"
#include "graph/plural.h"

static bool plain(const sg_edge_t *e)
{
    return (e->kind == SG_EDGE_STREAM || e->kind == SG_EDGE_CONTROL) && e->cuda_type == 0 &&
           e->from_port == 0 && e->to_port == 0;
}

/* Rank of kinds when choosing which of two parallel edges stays. */
static int strength(const sg_edge_t *e)
{
    if (!plain(e)) return 3;
    return e->kind == SG_EDGE_STREAM ? 2 : 1;
}

/* Should e go as a duplicate: another live edge with the same endpoints
 * that is stronger, or as strong with a lower id (and, for non-plain
 * edges, identical in kind and event)? */
static bool duplicate(const sg_graph_t *g, sg_reach_t *r, const sg_edge_t *e)
{
    /* the snapshot's list says whether another edge u -> v exists at all
     * (compact, where the node's own list is a cache miss on a large graph) */
    uint32_t n, same = 0;
    const sg_node_id_t *out = sg_reach_out_ids(r, e->from, &n);
    for (uint32_t i = 0; i < n && same < 2; i++) same += out[i] == e->to;
    if (same < 2) return false;
    const sg_node_t *u = &g->nodes[e->from];
    for (uint32_t i = 0; i < u->n_out; i++) {
        const sg_edge_t *o = &g->edges[u->out[i]];
        if (o == e || o->to != e->to) continue;
        if (!plain(e)) {
            if (o->kind == e->kind && o->event == e->event && o->cuda_type == e->cuda_type &&
                o->from_port == e->from_port && o->to_port == e->to_port && o->id < e->id)
                return true;
            continue;
        }
        int so = strength(o), se = strength(e);
        if (so > se || (so == se && o->id < e->id)) return true;
    }
    return false;
}

/* Over the snapshot's lists (the graph is the snapshot's while edges are
 * chosen: they are removed after), not each node's own. */
static bool redundant(sg_reach_t *r, const sg_edge_t *e)
{
    uint32_t n_out, n_in;
    const sg_node_id_t *out = sg_reach_out_ids(r, e->from, &n_out);
    const uint32_t *in = sg_reach_in_ranks(r, sg_reach_rank(r, e->to), &n_in);
    if (n_out <= n_in) {
        for (uint32_t i = 0; i < n_out; i++) {
            sg_node_id_t w = out[i];
            if (w != e->to && sg_reach_query(r, w, e->to)) return true;
        }
    } else {
        uint32_t n;
        const sg_node_id_t *order = sg_reach_order(r, &n);
        for (uint32_t i = 0; i < n_in; i++) {
            sg_node_id_t x = order[in[i]];
            if (x != e->from && sg_reach_query(r, e->from, x)) return true;
        }
    }
    return false;
}

int sg_pass_reduce(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    int rc;
    sg_reach_t *r = sg_rw_input_reach(ctx, &rc); /* removals keep reachability: stays valid */
    if (rc) return rc;
    sg_edge_id_t *drop = malloc((g->n_edges ? g->n_edges : 1) * sizeof *drop);
    uint8_t *why = malloc(g->n_edges ? g->n_edges : 1);
    sg_jw_t *arr = sg_rw_json_member(ctx, "removed");
    sg_jw_array(arr);
    if (!drop || !why) {
        rc = SG_ENOMEM;
        goto out;
    }
    uint32_t n = 0, by_kind[SG_EDGE_KIND_COUNT] = {0}, dups = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed) continue;
        if (duplicate(g, r, e)) {
            why[n] = 1;
            drop[n++] = i;
        } else if (plain(e) && redundant(r, e)) {
            why[n] = 0;
            drop[n++] = i;
        }
    }
    /* the names the report prints, made in id order (kernel names
     * demangled once each), not node by node as the edges come */
    sg_rw_names_t names = {0};
    uint8_t *want = n ? calloc(g->n_nodes, 1) : NULL;
    if (want) {
        for (uint32_t i = 0; i < n; i++)
            want[g->edges[drop[i]].from] = want[g->edges[drop[i]].to] = 1;
        sg_rw_names_make(g, want, &names, NULL, NULL);
        free(want);
    }
    size_t text0 = 0, json0 = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_edge_t *e = &g->edges[drop[i]];
        char a[200], b[200];
        sg_rw_reserve_rest(ctx, i, n, &text0, &json0);
        sg_rw_printf(ctx, "- %s %s -> %s: %s\n", sg_edge_kind_name(e->kind),
                     sg_rw_names_get(&names, g, e->from, a, sizeof a),
                     sg_rw_names_get(&names, g, e->to, b, sizeof b),
                     why[i] ? "duplicate of a parallel edge" : "implied by another path");
        sg_jw_object(arr);
        sg_jw_kint(arr, "edge", e->id);
        sg_jw_kstring(arr, "kind", sg_edge_kind_name(e->kind));
        sg_jw_kint(arr, "from", e->from);
        sg_jw_kint(arr, "to", e->to);
        sg_jw_kstring(arr, "why", why[i] ? "duplicate" : "implied");
        sg_jw_end(arr);
        by_kind[e->kind]++;
        dups += why[i];
    }
    sg_rw_names_free(&names);
    /* the verifier's snapshot of the output: the input's with the lists of
     * the removed edges' ends read again, not a read of the whole graph
     * (without the room for them, the verifier builds its own) */
    sg_node_id_t *ends = n && n <= UINT32_MAX / 2 && ctx->opt->verify
                             ? malloc(2 * (size_t)n * sizeof *ends)
                             : NULL;
    for (uint32_t i = 0; ends && i < n; i++) {
        ends[2 * i] = g->edges[drop[i]].from;
        ends[2 * i + 1] = g->edges[drop[i]].to;
    }
    for (uint32_t i = 0; i < n; i++) sg_graph_remove_edge(g, drop[i]);
    if (ends) rc = sg_reach_build_edited(g, r, ends, 2 * n, 0, &ctx->out_reach);
    free(ends);
    if (rc) goto out;
    if (n == 0) sg_rw_printf(ctx, "no change: no edge is implied by another path\n");
    sg_jw_end(arr);
    sg_rw_summary(ctx, "%u %s removed (%u stream, %u control, %u %s); reachability unchanged", n,
                  sg_plural(n, "edge", "edges"), by_kind[SG_EDGE_STREAM], by_kind[SG_EDGE_CONTROL],
                  dups, sg_plural(dups, "duplicate", "duplicates"));
out:
    free(drop);
    free(why);
    return rc;
}
