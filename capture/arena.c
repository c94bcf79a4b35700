/* arena.c: a huge allocation that a graph reaches only in places becomes one
 * buffer per place (arena.h says why). Pure model code: no CUDA. */
#include "arena.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t start, end;
} span_t;

typedef struct {
    span_t *v;
    size_t n, cap;
} spans_t;

static int spans_add(spans_t *s, uint64_t start, uint64_t end)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        span_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) return SG_ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (span_t){start, end};
    return SG_OK;
}

static int span_cmp(const void *pa, const void *pb)
{
    const span_t *a = pa, *b = pb;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Does any node of g (bodies too) name buffer b other than by an access? */
static bool named_by_mem_node(const sg_graph_t *g, uint32_t b)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        if ((x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) && x->u.mem.buffer == b)
            return true;
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child && named_by_mem_node(x->u.child, b))
            return true;
        for (uint32_t k = 0; x->type == SG_NODE_CONDITIONAL && k < x->u.cond.n_bodies; k++)
            if (named_by_mem_node(x->u.cond.bodies[k], b)) return true;
    }
    return false;
}

/* Every place the nodes of g reach in buffer b (bodies too). */
static int collect(const sg_graph_t *g, uint32_t b, const sg_buffer_t *buf, uint64_t open_cap,
                   spans_t *out, uint32_t *capped)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            const sg_access_t *ac = &x->accesses[a];
            if (ac->buffer != b || ac->offset >= buf->size) continue;
            uint64_t len = ac->size;
            /* A kernel access's end is a guess (extents.h: the next entry
             * into the buffer, or its end), which in an arena can lie
             * gigabytes away: assume at most open_cap. A narrower extent
             * (from a code analysis) is taken as it is. */
            if (x->type == SG_NODE_KERNEL && len > open_cap) {
                len = open_cap;
                (*capped)++;
            }
            if (len == 0) len = 1;
            if (ac->offset + len > buf->size || ac->offset + len < ac->offset)
                len = buf->size - ac->offset;
            int rc = spans_add(out, ac->offset, ac->offset + len);
            if (rc) return rc;
        }
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) {
            int rc = collect(x->u.child, b, buf, open_cap, out, capped);
            if (rc) return rc;
        }
        for (uint32_t k = 0; x->type == SG_NODE_CONDITIONAL && k < x->u.cond.n_bodies; k++) {
            int rc = collect(x->u.cond.bodies[k], b, buf, open_cap, out, capped);
            if (rc) return rc;
        }
    }
    return SG_OK;
}

/* Point every access of g into old buffer b at the new buffer holding it. */
static void repoint(sg_graph_t *g, uint32_t b, const span_t *m, size_t nm, uint32_t first_new)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            sg_access_t *ac = &x->accesses[a];
            if (ac->buffer != b) continue;
            size_t lo = 0, hi = nm; /* last span starting at or before the offset */
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (m[mid].start <= ac->offset)
                    lo = mid;
                else
                    hi = mid;
            }
            ac->buffer = first_new + (uint32_t)lo;
            ac->offset -= m[lo].start;
            uint64_t room = m[lo].end - m[lo].start - ac->offset;
            if (ac->size > room) ac->size = room;
        }
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) repoint(x->u.child, b, m, nm, first_new);
        for (uint32_t k = 0; x->type == SG_NODE_CONDITIONAL && k < x->u.cond.n_bodies; k++)
            repoint(x->u.cond.bodies[k], b, m, nm, first_new);
    }
}

/* Rewrite buffer indexes of g through map (SG_NONE: gone, never referenced). */
static void renumber(sg_graph_t *g, const uint32_t *map)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++)
            x->accesses[a].buffer = map[x->accesses[a].buffer];
        if ((x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) &&
            x->u.mem.buffer != SG_NONE)
            x->u.mem.buffer = map[x->u.mem.buffer];
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) renumber(x->u.child, map);
        for (uint32_t k = 0; x->type == SG_NODE_CONDITIONAL && k < x->u.cond.n_bodies; k++)
            renumber(x->u.cond.bodies[k], map);
    }
}

/* Drop the buffers marked in gone[] from the table, keeping the others in
 * order; labels follow the new indexes. */
static int compact(sg_graph_t *g, const bool *gone)
{
    uint32_t n = g->n_buffers;
    uint32_t *map = malloc((n ? n : 1) * sizeof *map);
    if (!map) return SG_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        map[i] = gone[i] ? SG_NONE : k++;
    renumber(g, map);
    for (uint32_t i = 0; i < n; i++) {
        sg_buffer_t *b = &g->buffers[i];
        if (gone[i]) {
            free(b->label);
            free(b->before_file);
            free(b->after_file);
            free(b->snapshot_note);
            continue;
        }
        uint32_t j = map[i];
        if (j != i) g->buffers[j] = *b;
        sg_buffer_t *nb = &g->buffers[j];
        nb->id = j;
        char label[16];
        snprintf(label, sizeof label, "b%u", j);
        if (!nb->label || strcmp(nb->label, label) != 0) {
            char *l = strdup(label);
            if (l) {
                free(nb->label);
                nb->label = l;
            }
        }
    }
    g->n_buffers = k;
    free(map);
    return SG_OK;
}

int sg_capture_split_arenas(sg_graph_t *g, const sg_arena_limits_t *lim, char *note, size_t n)
{
    if (note && n) note[0] = '\0';
    if (g->root && g->root != g) return SG_EINVAL;
    uint32_t n0 = g->n_buffers;
    bool *gone = calloc(n0 + 1, sizeof *gone);
    if (!gone) return SG_ENOMEM;
    spans_t s = {0};
    int rc = SG_OK, split = 0;
    uint32_t made = 0, capped_total = 0;
    uint64_t arena_bytes = 0, kept_bytes = 0;
    for (uint32_t b = 0; b < n0 && rc == SG_OK; b++) {
        const sg_buffer_t *buf = &g->buffers[b];
        if (buf->size <= lim->threshold || buf->kind == SG_BUFFER_GRAPH_ALLOC) continue;
        if (named_by_mem_node(g, b)) continue;
        s.n = 0;
        uint32_t capped = 0;
        rc = collect(g, b, buf, lim->open_cap, &s, &capped);
        if (rc || s.n == 0) continue;
        qsort(s.v, s.n, sizeof *s.v, span_cmp);
        size_t m = 0; /* merge in place: overlapping, or closer than `gap` */
        for (size_t i = 0; i < s.n; i++) {
            if (m && s.v[i].start <= s.v[m - 1].end + lim->gap) {
                if (s.v[i].end > s.v[m - 1].end) s.v[m - 1].end = s.v[i].end;
                continue;
            }
            s.v[m++] = s.v[i];
        }
        uint64_t covered = 0;
        for (size_t i = 0; i < m; i++)
            covered += s.v[i].end - s.v[i].start;
        if (covered >= buf->size) continue; /* reached everywhere: keep it whole */
        uint32_t first = g->n_buffers;
        uint64_t base = buf->address;
        sg_buffer_kind_t kind = buf->kind;
        for (size_t i = 0; i < m && rc == SG_OK; i++)
            rc = sg_graph_add_buffer(g, kind, base + s.v[i].start, s.v[i].end - s.v[i].start, NULL);
        if (rc) break;
        repoint(g, b, s.v, m, first);
        gone[b] = true;
        split++;
        made += (uint32_t)m;
        capped_total += capped;
        arena_bytes += g->buffers[b].size;
        kept_bytes += covered;
    }
    if (rc == SG_OK && split) rc = compact(g, gone);
    if (rc == SG_OK && split && note && n)
        snprintf(note, n,
                 "%d allocation%s of %.1f GiB in all (arenas) recorded as the %u range%s the "
                 "nodes reach (%.1f MiB); %u kernel access%s of unknown extent capped at %" PRIu64
                 " bytes",
                 split, split == 1 ? "" : "s", arena_bytes / (1024.0 * 1024 * 1024), made,
                 made == 1 ? "" : "s", kept_bytes / (1024.0 * 1024), capped_total,
                 capped_total == 1 ? "" : "es", lim->open_cap);
    free(s.v);
    free(gone);
    return rc ? rc : split;
}
