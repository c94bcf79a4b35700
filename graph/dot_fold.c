/* dot_fold.c: folding a big graph into a drawable number of boxes (see
 * dot_fold.h for what is folded and why the picture stays truthful). */
#include "dot_fold.h"

#include <stdlib.h>
#include <string.h>

#define SG_FOLD_MAX_PERIOD 8 /* longest repeated pattern looked for */
#define SG_FOLD_MAX_DEPTH 64 /* body nesting counted, as dot.c draws it */
/* Arrows per box a folded drawing may have: Graphviz's time grows with the
 * edges that cross ranks, so with more, fold coarser. */
#define SG_FOLD_ARROWS_PER_BOX 4

uint32_t sg_dot_lane_of(const sg_graph_t *root, const sg_node_t *n)
{
    if (n->stream == SG_STREAM_EXPLICIT) return root->n_streams;
    if (n->stream < root->n_streams) return n->stream;
    return root->n_streams + 1;
}

/* Live nodes of g and of every body below it. */
static uint64_t count_all(const sg_graph_t *g, int depth)
{
    uint64_t n = sg_graph_node_count(g);
    if (depth >= SG_FOLD_MAX_DEPTH) return n;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed) continue;
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) n += count_all(x->u.child, depth + 1);
        if (x->type == SG_NODE_CONDITIONAL)
            for (uint32_t b = 0; b < x->u.cond.n_bodies; b++)
                if (x->u.cond.bodies[b]) n += count_all(x->u.cond.bodies[b], depth + 1);
    }
    return n;
}

/* ---- the order everything follows --------------------------------------------- */

static int cmp_seq(const void *pa, const void *pb, void *ctx)
{
    const sg_graph_t *g = ctx;
    const sg_node_t *a = &g->nodes[*(const sg_node_id_t *)pa];
    const sg_node_t *b = &g->nodes[*(const sg_node_id_t *)pb];
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* A topological order; for a graph with a cycle (a hostile bundle), capture
 * order, so that something is still drawn. */
static int node_order(const sg_graph_t *g, sg_node_id_t **order, uint32_t *n)
{
    int rc = sg_graph_topo_order(g, order, n);
    if (rc != SG_ECYCLE) return rc;
    sg_node_id_t *o = malloc((g->live_nodes ? g->live_nodes : 1) * sizeof *o);
    if (!o) return SG_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) o[k++] = i;
    qsort_r(o, k, sizeof *o, cmp_seq, (void *)g);
    *order = o;
    *n = k;
    return SG_OK;
}

/* ---- what may repeat -------------------------------------------------------------- */

/* Nodes that look alike in a drawing: same type, and for kernels the same
 * name and geometry, for copies the same direction. Records, waits, memory
 * nodes, bodies and opaque nodes are the structure: never folded into a
 * repeat. */
static bool repeatable(const sg_node_t *n)
{
    switch (n->type) {
    case SG_NODE_KERNEL:
    case SG_NODE_MEMCPY:
    case SG_NODE_MEMSET:
    case SG_NODE_EMPTY:
    case SG_NODE_HOST:
        return true;
    default:
        return false;
    }
}

static int cmp_look(const void *pa, const void *pb, void *ctx)
{
    const sg_graph_t *g = ctx;
    const sg_node_t *a = &g->nodes[*(const sg_node_id_t *)pa];
    const sg_node_t *b = &g->nodes[*(const sg_node_id_t *)pb];
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    if (a->type == SG_NODE_KERNEL) {
        const sg_kernel_t *x = &a->u.kernel, *y = &b->u.kernel;
        int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
        if (c) return c;
        c = memcmp(x->grid, y->grid, sizeof x->grid);
        if (c) return c;
        return memcmp(x->block, y->block, sizeof x->block);
    }
    if (a->type == SG_NODE_MEMCPY && a->u.memcpy.kind != b->u.memcpy.kind)
        return a->u.memcpy.kind < b->u.memcpy.kind ? -1 : 1;
    return 0;
}

/* look[id]: equal for nodes that look alike, SG_NONE for the structure. */
static int looks(const sg_graph_t *g, uint32_t *look)
{
    sg_node_id_t *ids = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *ids);
    if (!ids) return SG_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        look[i] = SG_NONE;
        if (!g->nodes[i].removed && repeatable(&g->nodes[i])) ids[k++] = i;
    }
    qsort_r(ids, k, sizeof *ids, cmp_look, (void *)g);
    uint32_t next = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (i > 0 && cmp_look(&ids[i - 1], &ids[i], (void *)g) != 0) next++;
        look[ids[i]] = next;
    }
    free(ids);
    return SG_OK;
}

/* ---- segments ---------------------------------------------------------------------- */

typedef struct {
    const sg_graph_t *g;
    uint32_t max_boxes;
    sg_node_id_t *order; /* topological */
    uint32_t n_order;
    sg_node_id_t *lane_nodes; /* by lane, each lane in topological order */
    uint32_t *lane_start;     /* n_lanes + 1 */
    uint32_t *seg_of;         /* node id -> segment */
    uint32_t *seg_start;      /* segment -> first index in lane_nodes; n_segs + 1 */
    uint32_t n_segs;
    uint32_t *look;
} work_t;

static bool has_edge_from(const sg_graph_t *g, const sg_node_t *v, sg_node_id_t from)
{
    for (uint32_t i = 0; i < v->n_in; i++)
        if (g->edges[v->in[i]].from == from) return true;
    return false;
}

/* Cut every lane into segments (see dot_fold.h): v joins the segment of the
 * node before it when it has an edge from it and, if some edge enters v
 * from outside the segment, no edge has left the segment yet. */
static int segments(work_t *w)
{
    const sg_graph_t *g = w->g;
    uint32_t n_lanes = g->root->n_streams + 2;
    w->seg_start = malloc(((size_t)w->n_order + 1) * sizeof *w->seg_start);
    if (!w->seg_start) return SG_ENOMEM;
    uint32_t s = 0;
    for (uint32_t l = 0; l < n_lanes; l++) {
        sg_node_id_t tail = SG_NONE;
        uint64_t out_left = 0; /* edges from the segment to nodes outside it */
        for (uint32_t k = w->lane_start[l]; k < w->lane_start[l + 1]; k++) {
            sg_node_id_t v = w->lane_nodes[k];
            const sg_node_t *x = &g->nodes[v];
            uint32_t from_inside = 0;
            if (tail != SG_NONE)
                for (uint32_t i = 0; i < x->n_in; i++)
                    from_inside += w->seg_of[g->edges[x->in[i]].from] == s - 1;
            bool entered = from_inside < x->n_in;
            bool join = tail != SG_NONE && has_edge_from(g, x, tail) &&
                        (!entered || out_left == from_inside);
            if (join) {
                out_left -= from_inside;
            } else {
                w->seg_start[s++] = k;
                out_left = 0;
            }
            w->seg_of[v] = s - 1;
            out_left += x->n_out;
            tail = v;
        }
    }
    w->seg_start[s] = w->n_order;
    w->n_segs = s;
    return SG_OK;
}

/* ---- repeats inside a segment --------------------------------------------------------- */

typedef struct {
    uint32_t start, len, period; /* indices into lane_nodes; period 0 = one node */
} piece_t;

static bool same_looks(const work_t *w, uint32_t a, uint32_t b, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        uint32_t x = w->look[w->lane_nodes[a + i]], y = w->look[w->lane_nodes[b + i]];
        if (x == SG_NONE || x != y) return false;
    }
    return true;
}

/* Split lane_nodes[a, b) into repeats of patterns of 1..SG_FOLD_MAX_PERIOD
 * nodes (the one covering most nodes; the shorter pattern on a tie) and
 * single nodes. Appends to pieces; returns how many. */
static uint32_t split_repeats(const work_t *w, uint32_t a, uint32_t b, piece_t *pieces)
{
    uint32_t n = 0;
    for (uint32_t i = a; i < b;) {
        uint32_t best = 0, best_p = 0;
        for (uint32_t p = 1; p <= SG_FOLD_MAX_PERIOD && i + 2 * p <= b; p++) {
            uint32_t r = 1;
            while (i + (r + 1) * p <= b && same_looks(w, i, i + r * p, p))
                r++;
            if (r >= 2 && r * p > best) best = r * p, best_p = p;
        }
        if (best) {
            pieces[n++] = (piece_t){i, best, best_p};
            i += best;
        } else {
            pieces[n++] = (piece_t){i, 1, 0};
            i++;
        }
    }
    return n;
}

/* ---- boxes and arrows ------------------------------------------------------------------ */

static int push_box(sg_fold_t *f, uint32_t *cap, sg_fold_box_t box)
{
    if (f->n_boxes == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 64;
        sg_fold_box_t *p = realloc(f->boxes, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        f->boxes = p;
        *cap = nc;
    }
    f->boxes[f->n_boxes++] = box;
    return SG_OK;
}

static int cmp_fold_edge(const void *pa, const void *pb)
{
    const sg_fold_edge_t *a = pa, *b = pb;
    if (a->from != b->from) return a->from < b->from ? -1 : 1;
    if (a->to != b->to) return a->to < b->to ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* One arrow per (box, box, kind), counting the edges it stands for. */
static int arrows(const sg_graph_t *g, sg_fold_t *f)
{
    sg_fold_edge_t *a = malloc((g->n_edges ? g->n_edges : 1) * sizeof *a);
    if (!a) return SG_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        if (e->removed) continue;
        uint32_t bf = f->box_of[e->from], bt = f->box_of[e->to];
        if (bf == bt || bf == SG_NONE || bt == SG_NONE) continue;
        if (f->level == SG_FOLD_BANDS && f->boxes[bf].band == f->boxes[bt].band) {
            f->boxes[bf].syncs_inside++;
            f->boxes[bt].syncs_inside++;
            continue;
        }
        a[n++] =
            (sg_fold_edge_t){bf, bt, e->kind, 1, e->kind == SG_EDGE_EVENT ? e->event : SG_NONE};
    }
    qsort(a, n, sizeof *a, cmp_fold_edge);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        sg_fold_edge_t *p = k ? &a[k - 1] : NULL;
        if (p && p->from == a[i].from && p->to == a[i].to && p->kind == a[i].kind) {
            p->count++;
            if (p->event != a[i].event) p->event = SG_NONE;
        } else {
            a[k++] = a[i];
        }
    }
    f->edges = a;
    f->n_edges = k;
    return SG_OK;
}

/* Runs: every segment one box, then as many segments as the budget allows
 * split into their repeats and single nodes, cheapest first. */
static int fold_runs(work_t *w, sg_fold_t *f)
{
    uint32_t ns = w->n_segs;
    piece_t *pieces = malloc((w->n_order ? w->n_order : 1) * sizeof *pieces);
    uint32_t *piece_start = malloc(((size_t)ns + 1) * sizeof *piece_start);
    uint32_t *by_cost = malloc((ns ? ns : 1) * sizeof *by_cost);
    uint8_t *refined = calloc(ns ? ns : 1, 1);
    int rc = SG_ENOMEM;
    if (!pieces || !piece_start || !by_cost || !refined) goto out;
    uint32_t np = 0;
    for (uint32_t s = 0; s < ns; s++) {
        piece_start[s] = np;
        np += split_repeats(w, w->seg_start[s], w->seg_start[s + 1], pieces + np);
    }
    piece_start[ns] = np;
    /* counting sort of the segments by extra boxes, so ties keep lane order */
    uint32_t max_extra = 0;
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t extra = piece_start[s + 1] - piece_start[s] - 1;
        if (extra > max_extra) max_extra = extra;
    }
    uint32_t *first = calloc((size_t)max_extra + 2, sizeof *first);
    if (!first) goto out;
    for (uint32_t s = 0; s < ns; s++)
        first[piece_start[s + 1] - piece_start[s]]++; /* extra + 1 */
    for (uint32_t e = 0; e <= max_extra; e++)
        first[e + 1] += first[e];
    for (uint32_t s = 0; s < ns; s++)
        by_cost[first[piece_start[s + 1] - piece_start[s] - 1]++] = s;
    free(first);
    uint64_t boxes = ns;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t s = by_cost[i], extra = piece_start[s + 1] - piece_start[s] - 1;
        if (boxes + extra > w->max_boxes) break;
        boxes += extra;
        refined[s] = 1;
    }
    uint32_t cap = 0;
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t lane = sg_dot_lane_of(w->g->root, &w->g->nodes[w->lane_nodes[w->seg_start[s]]]);
        if (!refined[s]) {
            sg_fold_box_t b = {lane, 0, w->seg_start[s], w->seg_start[s + 1] - w->seg_start[s], 0,
                               0,    0};
            if ((rc = push_box(f, &cap, b))) goto out;
            continue;
        }
        for (uint32_t p = piece_start[s]; p < piece_start[s + 1]; p++) {
            const piece_t *x = &pieces[p];
            sg_fold_box_t b = {
                lane, 0, x->start, x->len, x->period, x->period ? x->len / x->period : 0, 0};
            if ((rc = push_box(f, &cap, b))) goto out;
        }
    }
    rc = SG_OK;
out:
    free(pieces);
    free(piece_start);
    free(by_cost);
    free(refined);
    return rc;
}

/* Bands: `bands` chunks of the topological order, one box per lane each. */
static uint32_t band_of(uint32_t pos, uint32_t n, uint32_t bands)
{
    return (uint32_t)((uint64_t)pos * bands / n);
}

static int fold_bands(work_t *w, sg_fold_t *f, const uint32_t *pos, uint32_t at_most)
{
    const sg_graph_t *g = w->g;
    uint32_t n = w->n_order, n_lanes = g->root->n_streams + 2;
    /* boxes for a band count: lanes that have nodes in each band */
    uint32_t active = 0;
    for (uint32_t l = 0; l < n_lanes; l++)
        active += w->lane_start[l + 1] > w->lane_start[l];
    uint32_t bands = w->max_boxes / (active ? active : 1);
    if (bands > at_most) bands = at_most;
    if (bands < 1) bands = 1;
    if (bands > n) bands = n;
    for (;;) {
        uint64_t boxes = 0;
        for (uint32_t l = 0; l < n_lanes; l++) {
            uint32_t last = SG_NONE;
            for (uint32_t k = w->lane_start[l]; k < w->lane_start[l + 1]; k++) {
                uint32_t b = band_of(pos[w->lane_nodes[k]], n, bands);
                if (b != last) boxes++, last = b;
            }
        }
        if (boxes <= w->max_boxes || bands == 1) break;
        uint32_t fewer = (uint32_t)((uint64_t)bands * w->max_boxes / boxes);
        bands = fewer < bands ? fewer : bands - 1;
        if (bands < 1) bands = 1;
    }
    uint32_t cap = 0;
    for (uint32_t l = 0; l < n_lanes; l++) {
        for (uint32_t k = w->lane_start[l]; k < w->lane_start[l + 1];) {
            uint32_t b = band_of(pos[w->lane_nodes[k]], n, bands), e = k;
            while (e < w->lane_start[l + 1] && band_of(pos[w->lane_nodes[e]], n, bands) == b)
                e++;
            int rc = push_box(f, &cap, (sg_fold_box_t){l, b, k, e - k, 0, 0, 0});
            if (rc) return rc;
            k = e;
        }
    }
    f->n_bands = bands;
    return SG_OK;
}

/* Which box each node is in, and the arrows. */
static int place(const sg_graph_t *g, sg_fold_t *f)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        f->box_of[i] = SG_NONE;
    for (uint32_t b = 0; b < f->n_boxes; b++)
        for (uint32_t k = 0; k < f->boxes[b].n_nodes; k++)
            f->box_of[f->members[f->boxes[b].start + k]] = b;
    return arrows(g, f);
}

/* Forget the boxes and arrows, to fold again. */
static void drop(sg_fold_t *f)
{
    free(f->boxes);
    free(f->edges);
    f->boxes = NULL;
    f->edges = NULL;
    f->n_boxes = f->n_edges = f->n_bands = 0;
}

int sg_dot_fold(const sg_graph_t *g, uint32_t max_boxes, sg_fold_t *out)
{
    memset(out, 0, sizeof *out);
    out->n_nodes = sg_graph_node_count(g);
    out->n_lanes = g->root->n_streams + 2;
    if (max_boxes == 0 || count_all(g, 0) <= max_boxes) return SG_OK; /* SG_FOLD_NONE */
    work_t w = {.g = g, .max_boxes = max_boxes};
    uint32_t n_lanes = out->n_lanes;
    uint32_t *pos = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *pos);
    w.lane_start = calloc((size_t)n_lanes + 1, sizeof *w.lane_start);
    w.seg_of = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *w.seg_of);
    w.look = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *w.look);
    out->box_of = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *out->box_of);
    int rc = SG_ENOMEM;
    if (!pos || !w.lane_start || !w.seg_of || !w.look || !out->box_of) goto out;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        w.seg_of[i] = SG_NONE;
    if ((rc = node_order(g, &w.order, &w.n_order))) goto out;
    rc = SG_ENOMEM;
    w.lane_nodes = malloc((w.n_order ? w.n_order : 1) * sizeof *w.lane_nodes);
    if (!w.lane_nodes) goto out;
    /* lanes, each in topological order: a stable counting sort */
    for (uint32_t k = 0; k < w.n_order; k++) {
        pos[w.order[k]] = k;
        w.lane_start[sg_dot_lane_of(g->root, &g->nodes[w.order[k]]) + 1]++;
    }
    for (uint32_t l = 0; l < n_lanes; l++)
        w.lane_start[l + 1] += w.lane_start[l];
    {
        uint32_t *fill = malloc((size_t)n_lanes * sizeof *fill);
        if (!fill) goto out;
        memcpy(fill, w.lane_start, (size_t)n_lanes * sizeof *fill);
        for (uint32_t k = 0; k < w.n_order; k++)
            w.lane_nodes[fill[sg_dot_lane_of(g->root, &g->nodes[w.order[k]])]++] = w.order[k];
        free(fill);
    }
    if ((rc = looks(g, w.look)) || (rc = segments(&w))) goto out;
    out->members = w.lane_nodes; /* out owns it from here */
    if (w.n_segs <= max_boxes) {
        out->level = SG_FOLD_RUNS;
        if ((rc = fold_runs(&w, out)) || (rc = place(g, out))) goto out;
        if (out->n_edges <= SG_FOLD_ARROWS_PER_BOX * max_boxes) goto out;
        drop(out); /* too many arrows for a quick layout: bands have fewer */
    }
    out->level = SG_FOLD_BANDS;
    for (uint32_t at_most = UINT32_MAX;;) {
        if ((rc = fold_bands(&w, out, pos, at_most)) || (rc = place(g, out))) goto out;
        if (out->n_edges <= SG_FOLD_ARROWS_PER_BOX * max_boxes || out->n_bands == 1) break;
        at_most = out->n_bands / 2;
        drop(out);
    }
out:
    free(pos);
    free(w.order);
    if (!out->members) free(w.lane_nodes);
    free(w.lane_start);
    free(w.seg_of);
    free(w.look);
    free(w.seg_start);
    if (rc) sg_dot_fold_free(out);
    return rc;
}

void sg_dot_fold_free(sg_fold_t *f)
{
    free(f->boxes);
    free(f->members);
    free(f->box_of);
    free(f->edges);
    memset(f, 0, sizeof *f);
}
