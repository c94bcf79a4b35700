/* bundle_walk.c: walks over a model by the field tables (bundle_fields.c):
 * the deep comparison of two graphs as a bundle stores them, and the list of
 * files a graph names. Both follow the tables, so a field added there is
 * compared and, if it names a file, carried without a change here. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "bundle_fields.h"

/* ---- comparison ----------------------------------------------------------------------- */

typedef struct {
    char path[512];
    size_t len;
    char *where;
    size_t where_n;
} cmp_t;

/* Push ".key" or "[i]" onto the path; returns the length to pop back to. */
static size_t push(cmp_t *c, const char *key, int64_t index)
{
    size_t at = c->len;
    int w = key ? snprintf(c->path + at, sizeof c->path - at, "%s%s", at ? "." : "", key)
                : snprintf(c->path + at, sizeof c->path - at, "[%" PRId64 "]", index);
    if (w > 0) c->len = at + (size_t)w < sizeof c->path ? at + (size_t)w : sizeof c->path - 1;
    return at;
}

static void pop(cmp_t *c, size_t at)
{
    c->len = at;
    c->path[at] = '\0';
}

static bool differ(cmp_t *c, const char *what)
{
    if (c->where && c->where_n)
        snprintf(c->where, c->where_n, "%s%s%s", c->path, c->len ? ": " : "", what);
    return false;
}

static bool same_record(cmp_t *c, const sg_record_t *r, const void *a, const void *b);
static bool same_graph(cmp_t *c, const sg_graph_t *a, const sg_graph_t *b);

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_real(double x, double y, bool duration)
{
    bool ux = duration ? (x < 0 || !isfinite(x)) : !isfinite(x);
    bool uy = duration ? (y < 0 || !isfinite(y)) : !isfinite(y);
    if (ux || uy) return duration ? ux == uy : (ux ? 0 : x) == (uy ? 0 : y);
    return x == y;
}

static bool same_entries(cmp_t *c, const sg_field_t *f, const void *a, const void *b)
{
    uint32_t na = sg_field_count(f, a), nb = sg_field_count(f, b);
    if (na != nb) return differ(c, "different number of entries");
    const char *pa = *(const char *const *)sg_field_ptr(f, a);
    const char *pb = *(const char *const *)sg_field_ptr(f, b);
    for (uint32_t i = 0; i < na; i++) {
        size_t at = push(c, NULL, i);
        bool ok = f->type == SG_FT_BODIES
                      ? same_graph(c, ((sg_graph_t *const *)pa)[i], ((sg_graph_t *const *)pb)[i])
                      : same_record(c, f->sub, pa + i * f->sub->size, pb + i * f->sub->size);
        if (!ok) return false;
        pop(c, at);
    }
    return true;
}

static bool same_field(cmp_t *c, const sg_field_t *f, const void *a, const void *b)
{
    const void *pa = sg_field_ptr(f, a), *pb = sg_field_ptr(f, b);
    switch (f->type) {
    case SG_FT_U8:
    case SG_FT_U32:
    case SG_FT_I32:
    case SG_FT_I64:
    case SG_FT_U64:
    case SG_FT_ADDR:
    case SG_FT_BOOL:
    case SG_FT_ENUM:
    case SG_FT_INDEX:
    case SG_FT_NODE_ID:
    case SG_FT_STREAM:
    case SG_FT_TRIPLE:
        return memcmp(pa, pb, f->size) == 0 || differ(c, "different values");
    case SG_FT_REAL:
    case SG_FT_DURATION:
        return same_real(*(const double *)pa, *(const double *)pb, f->type == SG_FT_DURATION) ||
               differ(c, "different numbers");
    case SG_FT_STR:
    case SG_FT_PATH:
        return same_str(*(const char *const *)pa, *(const char *const *)pb) ||
               differ(c, "different strings");
    case SG_FT_CHARS:
    case SG_FT_HASH:
        return strncmp(pa, pb, f->size) == 0 || differ(c, "different strings");
    case SG_FT_U32S:
    case SG_FT_HEX:
    case SG_FT_PAIRS: {
        uint32_t na = sg_field_count(f, a), nb = sg_field_count(f, b);
        size_t elem = f->type == SG_FT_HEX ? 1 : sizeof(uint32_t);
        if (na != nb) return differ(c, "different lengths");
        if (na && memcmp(*(void *const *)pa, *(void *const *)pb, na * elem) != 0)
            return differ(c, "different contents");
        if (f->type == SG_FT_PAIRS && na &&
            memcmp(*(void *const *)((const char *)a + f->off2),
                   *(void *const *)((const char *)b + f->off2), na * elem) != 0)
            return differ(c, "different contents");
        return true;
    }
    case SG_FT_OBJECT:
        return same_record(c, f->sub, pa, pb);
    case SG_FT_RECORDS:
    case SG_FT_TABLE:
    case SG_FT_BODIES:
        return same_entries(c, f, a, b);
    case SG_FT_BODY: {
        const sg_graph_t *ga = *(sg_graph_t *const *)pa, *gb = *(sg_graph_t *const *)pb;
        if (!ga || !gb) return ga == gb || differ(c, "a body on one side only");
        return same_graph(c, ga, gb);
    }
    case SG_FT_NODES: {
        const sg_graph_t *ga = a, *gb = b;
        if (ga->n_nodes != gb->n_nodes || ga->live_nodes != gb->live_nodes)
            return differ(c, "different node ids");
        for (uint32_t i = 0; i < ga->n_nodes; i++) {
            const sg_node_t *x = &ga->nodes[i], *y = &gb->nodes[i];
            size_t at = push(c, NULL, i);
            if (x->removed != y->removed) return differ(c, "a hole on one side only");
            if (!x->removed) {
                if (!same_record(c, f->sub, x, y)) return false;
                if (x->n_in != y->n_in || x->n_out != y->n_out)
                    return differ(c, "different numbers of edges in or out");
            }
            pop(c, at);
        }
        return true;
    }
    case SG_FT_EDGES: {
        const sg_graph_t *ga = a, *gb = b;
        if (ga->n_edges != gb->n_edges || ga->live_edges != gb->live_edges)
            return differ(c, "different edge ids");
        for (uint32_t i = 0; i < ga->n_edges; i++) {
            const sg_edge_t *x = &ga->edges[i], *y = &gb->edges[i];
            size_t at = push(c, NULL, i);
            if (x->removed != y->removed) return differ(c, "a hole on one side only");
            if (!x->removed && !same_record(c, f->sub, x, y)) return false;
            pop(c, at);
        }
        return true;
    }
    case SG_FT_GRAPH:
        return same_record(c, f->sub, a, b);
    default: /* NEXT_ID (covered by NODES/EDGES), FORMAT, VERSION */
        return true;
    }
}

static bool same_record(cmp_t *c, const sg_record_t *r, const void *a, const void *b)
{
    for (uint32_t i = 0; i < r->n_fields; i++) {
        const sg_field_t *f = &r->fields[i];
        /* a node's payload: compared as the type (compared before it) says */
        if (r->id == SG_REC_NODE && !sg_field_applies(f, ((const sg_node_t *)a)->type)) continue;
        size_t at = f->key ? push(c, f->key, -1) : c->len;
        if (!same_field(c, f, a, b)) return false;
        pop(c, at);
    }
    return true;
}

static bool same_graph(cmp_t *c, const sg_graph_t *a, const sg_graph_t *b)
{
    return same_record(c, sg_records[SG_REC_GRAPH], a, b);
}

bool sg_bundle_same(const sg_graph_t *a, const sg_graph_t *b, char *where, size_t n)
{
    cmp_t c = {.where = where, .where_n = n};
    if (where && n) where[0] = '\0';
    if (!a || !b) return a == b || differ(&c, "a graph on one side only");
    return same_record(&c, &sg_record_bundle, a, b);
}

/* ---- files named ------------------------------------------------------------------------ */

typedef struct {
    sg_bundle_file_fn fn;
    void *ctx;
    char where[160];
} walk_t;

/* The PATH fields of record r over base (and of the records inside it). */
static int walk_record(walk_t *w, const sg_record_t *r, const void *base, const char *prefix)
{
    for (uint32_t i = 0; i < r->n_fields; i++) {
        const sg_field_t *f = &r->fields[i];
        if (r->id == SG_REC_NODE && !sg_field_applies(f, ((const sg_node_t *)base)->type)) continue;
        if (f->type == SG_FT_PATH) {
            const char *rel = *(const char *const *)sg_field_ptr(f, base);
            if (!rel) continue;
            const char *hash = NULL;
            uint64_t size = 0;
            if (f->flags & SG_F_HASHED) {
                for (uint32_t k = 0; k < r->n_fields; k++) {
                    const sg_field_t *h = &r->fields[k];
                    if (h->type == SG_FT_HASH) hash = sg_field_ptr(h, base);
                    if (h->type == SG_FT_U64 && strcmp(h->key, "size") == 0)
                        memcpy(&size, sg_field_ptr(h, base), sizeof size);
                }
            }
            snprintf(w->where, sizeof w->where, "%s%s%s", prefix, prefix[0] ? "." : "", f->key);
            sg_bundle_file_t file = {rel, w->where, hash, size};
            int rc = w->fn(w->ctx, &file);
            if (rc) return rc;
        } else if (f->type == SG_FT_OBJECT || f->type == SG_FT_GRAPH) {
            char p[128];
            snprintf(p, sizeof p, "%s%s%s", prefix, prefix[0] && f->key ? "." : "",
                     f->key ? f->key : "");
            int rc = walk_record(w, f->sub, sg_field_ptr(f, base), p);
            if (rc) return rc;
        } else if (f->type == SG_FT_NODES) {
            const sg_graph_t *g = base;
            for (uint32_t k = 0; k < g->n_nodes; k++) {
                if (g->nodes[k].removed) continue;
                char p[128];
                snprintf(p, sizeof p, "%s%snodes[%" PRIu32 "]", prefix, prefix[0] ? "." : "", k);
                int rc = walk_record(w, f->sub, &g->nodes[k], p);
                if (rc) return rc;
            }
        } else if (f->type == SG_FT_BODY || f->type == SG_FT_BODIES) {
            const sg_node_t *n = base;
            bool one = f->type == SG_FT_BODY;
            if (!sg_field_applies(f, n->type)) continue;
            uint32_t cnt = one ? 1 : sg_field_count(f, base);
            for (uint32_t k = 0; k < cnt; k++) {
                const sg_graph_t *b = one ? *(sg_graph_t *const *)sg_field_ptr(f, base)
                                          : (*(sg_graph_t *const *const *)sg_field_ptr(f, base))[k];
                if (!b) continue;
                char p[128];
                if (one)
                    snprintf(p, sizeof p, "%s.%s", prefix, f->key);
                else
                    snprintf(p, sizeof p, "%s.%s[%" PRIu32 "]", prefix, f->key, k);
                int rc = walk_record(w, sg_records[SG_REC_GRAPH], b, p);
                if (rc) return rc;
            }
        } else if (f->type == SG_FT_TABLE || f->type == SG_FT_RECORDS) {
            uint32_t n = sg_field_count(f, base);
            const char *arr = *(const char *const *)sg_field_ptr(f, base);
            for (uint32_t k = 0; k < n; k++) {
                char p[128];
                snprintf(p, sizeof p, "%s%s%s[%" PRIu32 "]", prefix, prefix[0] ? "." : "", f->key,
                         k);
                int rc = walk_record(w, f->sub, arr + (size_t)k * f->sub->size, p);
                if (rc) return rc;
            }
        }
    }
    return SG_OK;
}

int sg_bundle_each_file(const sg_graph_t *g, sg_bundle_file_fn fn, void *ctx)
{
    if (!g || !fn) return SG_EINVAL;
    walk_t w = {.fn = fn, .ctx = ctx};
    return walk_record(&w, &sg_record_bundle, g->root, "");
}
