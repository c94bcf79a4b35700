/* extents.c: cut open-ended kernel accesses at the next entry point into
 * the same buffer (see extents.h). */
#include "extents.h"

#include <stdlib.h>

typedef struct {
    uint32_t buffer;
    uint64_t offset;
} cut_t;

static int cut_cmp(const void *pa, const void *pb)
{
    const cut_t *a = pa, *b = pb;
    if (a->buffer != b->buffer) return a->buffer < b->buffer ? -1 : 1;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static int collect_cuts(const sg_graph_t *g, cut_t **cuts, size_t *n, size_t *cap)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 64;
                cut_t *c = realloc(*cuts, nc * sizeof *c);
                if (!c) return SG_ENOMEM;
                *cuts = c;
                *cap = nc;
            }
            (*cuts)[(*n)++] = (cut_t){x->accesses[a].buffer, x->accesses[a].offset};
        }
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) {
            int rc = collect_cuts(x->u.child, cuts, n, cap);
            if (rc) return rc;
        }
        for (uint32_t b = 0; x->type == SG_NODE_CONDITIONAL && b < x->u.cond.n_bodies; b++) {
            int rc = collect_cuts(x->u.cond.bodies[b], cuts, n, cap);
            if (rc) return rc;
        }
    }
    return SG_OK;
}

static void apply_cuts(sg_graph_t *g, const cut_t *cuts, size_t n)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        if (x->type == SG_NODE_KERNEL) {
            for (uint32_t a = 0; a < x->n_accesses; a++) {
                sg_access_t *ac = &x->accesses[a];
                const sg_buffer_t *buf = sg_graph_buffer(g, ac->buffer);
                if (!buf || ac->offset >= buf->size || ac->size != buf->size - ac->offset)
                    continue; /* not an open-ended kernel access */
                /* first cut strictly after (buffer, offset) */
                size_t lo = 0, hi = n;
                cut_t key = {ac->buffer, ac->offset};
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (cut_cmp(&cuts[mid], &key) <= 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo < n && cuts[lo].buffer == ac->buffer)
                    ac->size = cuts[lo].offset - ac->offset;
            }
        }
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) apply_cuts(x->u.child, cuts, n);
        for (uint32_t b = 0; x->type == SG_NODE_CONDITIONAL && b < x->u.cond.n_bodies; b++)
            apply_cuts(x->u.cond.bodies[b], cuts, n);
    }
}

int sg_capture_segment_extents(sg_graph_t *g)
{
    cut_t *cuts = NULL;
    size_t n = 0, cap = 0;
    int rc = collect_cuts(g, &cuts, &n, &cap);
    if (rc == SG_OK && n) {
        qsort(cuts, n, sizeof *cuts, cut_cmp);
        apply_cuts(g, cuts, n);
    }
    free(cuts);
    return rc;
}
