/* topo.c: expected-topology text (v1), the same view of a model graph, and
 * their comparison (topo.h). */
#include "topo.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- growing arrays --------------------------------------------------------- */

typedef struct {
    uint32_t cap_streams, cap_edges, cap_problems;
} caps_t;

void sg_topo_graph_free(sg_topo_graph_t *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->n_streams; i++)
        free(g->streams[i].types);
    free(g->streams);
    free(g->explicit_lane.types);
    free(g->edges);
    for (uint32_t i = 0; i < g->n_problems; i++)
        free(g->problems[i]);
    free(g->problems);
    memset(g, 0, sizeof *g);
}

void sg_topo_free(sg_topo_t *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->n; i++)
        sg_topo_graph_free(&t->graphs[i]);
    free(t->graphs);
    memset(t, 0, sizeof *t);
}

static int add_problem(sg_topo_graph_t *g, uint32_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int add_problem(sg_topo_graph_t *g, uint32_t *cap, const char *fmt, ...)
{
    if (g->n_problems >= 1000) return SG_OK; /* enough to say it is wrong */
    int rc = sg_array_grow((void **)&g->problems, cap, g->n_problems + 1, sizeof *g->problems);
    if (rc) return rc;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    g->problems[g->n_problems] = strdup(line);
    if (!g->problems[g->n_problems]) return SG_ENOMEM;
    g->n_problems++;
    return SG_OK;
}

/* ---- parsing -------------------------------------------------------------------- */

static int fail(char *err, size_t n, unsigned line, const char *what)
{
    if (err && n) snprintf(err, n, "line %u: %s", line, what);
    return SG_EFORMAT;
}

/* "sK:i" -> K, i ("x:i" -> SG_TOPO_LANE_X, i); returns the position after
 * it or NULL. */
static const char *parse_ref(const char *p, uint32_t *s, uint32_t *i)
{
    char *end;
    unsigned long a;
    if (p[0] == 'x' && p[1] == ':') {
        a = SG_TOPO_LANE_X;
        p += 2;
    } else {
        if (*p != 's') return NULL;
        a = strtoul(p + 1, &end, 10);
        if (end == p + 1 || *end != ':' || a > 1000000) return NULL;
        p = end + 1;
    }
    unsigned long b = strtoul(p, &end, 10);
    if (end == p || b > 100000000) return NULL;
    *s = (uint32_t)a;
    *i = (uint32_t)b;
    return end;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static const sg_topo_stream_t *lane(const sg_topo_graph_t *g, uint32_t stream)
{
    if (stream == SG_TOPO_LANE_X) return &g->explicit_lane;
    return stream < g->n_streams ? &g->streams[stream] : NULL;
}

static bool ref_ok(const sg_topo_graph_t *g, uint32_t stream, uint32_t node)
{
    const sg_topo_stream_t *l = lane(g, stream);
    return l && node < l->n_nodes;
}

static int finish_graph(sg_topo_graph_t *g, char *err, size_t errlen, unsigned line)
{
    for (uint32_t k = 0; k < g->n_edges; k++) {
        const sg_topo_edge_t *e = &g->edges[k];
        if (!ref_ok(g, e->src_stream, e->src_node) || !ref_ok(g, e->dst_stream, e->dst_node))
            return fail(err, errlen, line,
                        e->kind == SG_TOPO_EDGE_EVENT
                            ? "event line names a node that no stream line lists"
                            : "control line names a node that no stream or explicit line lists");
        if (e->kind == SG_TOPO_EDGE_EVENT &&
            (e->src_stream == SG_TOPO_LANE_X || e->dst_stream == SG_TOPO_LANE_X))
            return fail(err, errlen, line, "an event edge cannot touch the explicit lane");
    }
    return SG_OK;
}

/* "TYPE TYPE ..." into l. */
static int parse_types(const char *p, sg_topo_stream_t *l, char *err, size_t errlen, unsigned line)
{
    uint32_t cap_types = 0;
    p = skip_ws(p);
    while (*p) {
        const char *w = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        char word[32];
        size_t wl = (size_t)(p - w);
        if (wl >= sizeof word) wl = sizeof word - 1;
        memcpy(word, w, wl);
        word[wl] = '\0';
        int t = sg_node_type_from_name(word);
        if (t < 0) return fail(err, errlen, line, "unknown node type");
        int rc = sg_array_grow((void **)&l->types, &cap_types, l->n_nodes + 1, 1);
        if (rc) return rc;
        l->types[l->n_nodes++] = (uint8_t)t;
        p = skip_ws(p);
    }
    return SG_OK;
}

int sg_topo_parse(const char *text, size_t len, sg_topo_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    uint32_t cap_graphs = 0, cap_streams = 0, cap_edges = 0;
    sg_topo_graph_t *cur = NULL;
    bool header = false;
    unsigned lineno = 0;
    int rc = SG_OK;
    size_t pos = 0;
    char buf[8192];
    while (pos < len) {
        size_t e = pos;
        while (e < len && text[e] != '\n')
            e++;
        lineno++;
        size_t l = e - pos;
        if (l >= sizeof buf) {
            rc = fail(err, errlen, lineno, "line too long");
            goto out;
        }
        memcpy(buf, text + pos, l);
        buf[l] = '\0';
        pos = e + 1;
        while (l > 0 && (buf[l - 1] == '\r' || buf[l - 1] == ' '))
            buf[--l] = '\0';
        const char *p = skip_ws(buf);
        if (!header) {
            if (*p == '\0') continue;
            if (strcmp(p, SG_TOPO_HEADER) != 0) {
                rc = fail(err, errlen, lineno, "missing header '" SG_TOPO_HEADER "'");
                goto out;
            }
            header = true;
            continue;
        }
        if (*p == '\0' || *p == '#') continue;
        if (strncmp(p, "graph ", 6) == 0) {
            if (cur && (rc = finish_graph(cur, err, errlen, lineno))) goto out;
            char *end;
            long long idx = strtoll(p + 6, &end, 10);
            if (end == p + 6 || *skip_ws(end) != '\0' || idx < 0) {
                rc = fail(err, errlen, lineno, "bad 'graph N' line");
                goto out;
            }
            if ((rc = sg_array_grow((void **)&out->graphs, &cap_graphs, out->n + 1,
                                    sizeof *out->graphs)))
                goto out;
            cur = &out->graphs[out->n++];
            memset(cur, 0, sizeof *cur);
            cur->index = idx;
            cap_streams = cap_edges = 0;
        } else if (strncmp(p, "stream ", 7) == 0) {
            if (!cur) {
                rc = fail(err, errlen, lineno, "stream line before any 'graph N'");
                goto out;
            }
            p = skip_ws(p + 7);
            char *end;
            if (*p != 's') {
                rc = fail(err, errlen, lineno, "stream label must be sK");
                goto out;
            }
            unsigned long k = strtoul(p + 1, &end, 10);
            if (end == p + 1 || k != cur->n_streams) {
                rc = fail(err, errlen, lineno, "streams must be listed as s0, s1, ... in order");
                goto out;
            }
            if ((rc = sg_array_grow((void **)&cur->streams, &cap_streams, cur->n_streams + 1,
                                    sizeof *cur->streams)))
                goto out;
            sg_topo_stream_t *st = &cur->streams[cur->n_streams++];
            memset(st, 0, sizeof *st);
            if ((rc = parse_types(end, st, err, errlen, lineno))) goto out;
        } else if (strncmp(p, "explicit", 8) == 0 && (p[8] == ' ' || p[8] == '\0')) {
            if (!cur) {
                rc = fail(err, errlen, lineno, "explicit line before any 'graph N'");
                goto out;
            }
            if (cur->explicit_lane.n_nodes) {
                rc = fail(err, errlen, lineno, "a second explicit line in one graph");
                goto out;
            }
            if ((rc = parse_types(p + 8, &cur->explicit_lane, err, errlen, lineno))) goto out;
        } else if (strncmp(p, "control ", 8) == 0) {
            if (!cur) {
                rc = fail(err, errlen, lineno, "control line before any 'graph N'");
                goto out;
            }
            sg_topo_edge_t ed = {SG_NONE, 0, 0, 0, 0, SG_TOPO_EDGE_CONTROL};
            p = parse_ref(skip_ws(p + 8), &ed.src_stream, &ed.src_node);
            if (p) {
                p = skip_ws(p);
                p = strncmp(p, "->", 2) == 0
                        ? parse_ref(skip_ws(p + 2), &ed.dst_stream, &ed.dst_node)
                        : NULL;
            }
            if (!p || *skip_ws(p) != '\0') {
                rc = fail(err, errlen, lineno, "expected 'control A -> B' (A, B: sK:i or x:i)");
                goto out;
            }
            if ((rc = sg_array_grow((void **)&cur->edges, &cap_edges, cur->n_edges + 1,
                                    sizeof *cur->edges)))
                goto out;
            cur->edges[cur->n_edges++] = ed;
        } else if (strncmp(p, "event ", 6) == 0) {
            if (!cur) {
                rc = fail(err, errlen, lineno, "event line before any 'graph N'");
                goto out;
            }
            p = skip_ws(p + 6);
            char *end;
            sg_topo_edge_t ed = {0, 0, 0, 0, 0, SG_TOPO_EDGE_EVENT};
            if (*p != 'e') {
                rc = fail(err, errlen, lineno, "event label must be eK");
                goto out;
            }
            unsigned long ev = strtoul(p + 1, &end, 10);
            if (end == p + 1 || ev > 1000000) {
                rc = fail(err, errlen, lineno, "bad event label");
                goto out;
            }
            ed.event = (uint32_t)ev;
            p = parse_ref(skip_ws(end), &ed.src_stream, &ed.src_node);
            if (p) {
                p = skip_ws(p);
                p = strncmp(p, "->", 2) == 0
                        ? parse_ref(skip_ws(p + 2), &ed.dst_stream, &ed.dst_node)
                        : NULL;
            }
            if (!p || *skip_ws(p) != '\0') {
                rc = fail(err, errlen, lineno, "expected 'event eK sA:i -> sB:j'");
                goto out;
            }
            if ((rc = sg_array_grow((void **)&cur->edges, &cap_edges, cur->n_edges + 1,
                                    sizeof *cur->edges)))
                goto out;
            cur->edges[cur->n_edges++] = ed;
        } else {
            rc = fail(err, errlen, lineno,
                      "unknown line (expected graph, stream, explicit, event or control)");
            goto out;
        }
    }
    if (!header) {
        rc = fail(err, errlen, lineno, "empty input (no header)");
        goto out;
    }
    if (cur) rc = finish_graph(cur, err, errlen, lineno);
out:
    if (rc) sg_topo_free(out);
    return rc;
}

/* ---- extraction ------------------------------------------------------------------- */

typedef struct {
    uint32_t stream, index;
} place_t;

static bool has_stream_edge(const sg_graph_t *g, sg_node_id_t from, sg_node_id_t to)
{
    uint32_t n = 0;
    const sg_edge_id_t *out = sg_graph_out_edges(g, from, &n);
    for (uint32_t i = 0; i < n; i++) {
        const sg_edge_t *e = sg_graph_edge(g, out[i]);
        if (e && e->to == to && e->kind == SG_EDGE_STREAM) return true;
    }
    return false;
}

/* Explicit nodes in the order they were added (by seq, then id). */
static int explicit_order(const sg_graph_t *g, sg_node_id_t **out, uint32_t *n)
{
    *out = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof **out);
    *n = 0;
    if (!*out) return SG_ENOMEM;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *nd = sg_graph_node(g, i);
        if (nd && nd->stream == SG_STREAM_EXPLICIT) (*out)[(*n)++] = i;
    }
    /* insertion sort: explicit lanes are short, ids mostly in order already */
    for (uint32_t i = 1; i < *n; i++) {
        sg_node_id_t v = (*out)[i];
        uint64_t sv = sg_graph_node(g, v)->seq;
        uint32_t j = i;
        while (j > 0 && sg_graph_node(g, (*out)[j - 1])->seq > sv) {
            (*out)[j] = (*out)[j - 1];
            j--;
        }
        (*out)[j] = v;
    }
    return SG_OK;
}

static int fill_lane(const sg_graph_t *g, const sg_node_id_t *ids, uint32_t n, uint32_t label,
                     sg_topo_stream_t *st, place_t *where)
{
    st->types = malloc(n ? n : 1);
    if (!st->types) return SG_ENOMEM;
    st->n_nodes = n;
    for (uint32_t i = 0; i < n; i++) {
        st->types[i] = (uint8_t)sg_graph_node(g, ids[i])->type;
        where[ids[i]].stream = label;
        where[ids[i]].index = i;
    }
    return SG_OK;
}

static const char *ref_text(place_t p, char *buf, size_t n)
{
    if (p.stream == SG_TOPO_LANE_X)
        snprintf(buf, n, "x:%u", p.index);
    else
        snprintf(buf, n, "s%u:%u", p.stream, p.index);
    return buf;
}

int sg_topo_from_graph(const sg_graph_t *g, sg_topo_graph_t *out)
{
    memset(out, 0, sizeof *out);
    const sg_graph_t *root = g->root ? g->root : g;
    uint32_t cap_edges = 0, cap_problems = 0;
    int rc = SG_OK;
    sg_node_id_t *ids = NULL;
    uint32_t n = 0;
    out->index = root->sequence;
    place_t *where = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *where);
    if (!where) return SG_ENOMEM;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        where[i].stream = where[i].index = SG_NONE;
    /* The view is of this graph's own nodes: a stream of the table that none
     * of them is on (one a conditional body was captured from, the origin of
     * a capture of nothing) is not one of its lanes; the others keep their
     * order, labelled s0, s1, ... */
    if (root->n_streams) {
        out->streams = calloc(root->n_streams, sizeof *out->streams);
        if (!out->streams) {
            rc = SG_ENOMEM;
            goto fail;
        }
    }
    for (uint32_t s = 0; s < root->n_streams; s++) {
        if ((rc = sg_graph_stream_order(g, s, &ids, &n))) goto fail;
        uint32_t lane = out->n_streams;
        if (n) {
            if ((rc = fill_lane(g, ids, n, lane, &out->streams[lane], where))) goto fail;
            out->n_streams++;
        }
        for (uint32_t i = 1; i < n; i++)
            if (!has_stream_edge(g, ids[i - 1], ids[i]) &&
                (rc = add_problem(out, &cap_problems,
                                  "no stream edge s%u:%u -> s%u:%u between consecutive nodes", lane,
                                  i - 1, lane, i)))
                goto fail;
        free(ids);
        ids = NULL;
    }
    if ((rc = explicit_order(g, &ids, &n))) goto fail;
    if (n && (rc = fill_lane(g, ids, n, SG_TOPO_LANE_X, &out->explicit_lane, where))) goto fail;
    free(ids);
    ids = NULL;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *nd = sg_graph_node(g, i);
        if (nd && where[i].stream == SG_NONE &&
            (rc = add_problem(out, &cap_problems, "node #%u (%s) is on no stream of the table", i,
                              sg_node_type_name(nd->type))))
            goto fail;
    }
    for (uint32_t k = 0; k < g->n_edges; k++) {
        const sg_edge_t *e = sg_graph_edge(g, k);
        if (!e) continue;
        place_t a = where[e->from], b = where[e->to];
        char ra[32], rb[32];
        if (a.stream == SG_NONE || b.stream == SG_NONE) {
            if ((rc = add_problem(out, &cap_problems, "%s edge #%u touches a node on no stream",
                                  sg_edge_kind_name(e->kind), k)))
                goto fail;
            continue;
        }
        bool x = a.stream == SG_TOPO_LANE_X || b.stream == SG_TOPO_LANE_X;
        if ((e->kind == SG_EDGE_EVENT && !x) || e->kind == SG_EDGE_CONTROL) {
            if ((rc = sg_array_grow((void **)&out->edges, &cap_edges, out->n_edges + 1,
                                    sizeof *out->edges)))
                goto fail;
            sg_topo_edge_t te = {e->kind == SG_EDGE_EVENT ? e->event : SG_NONE,
                                 a.stream,
                                 a.index,
                                 b.stream,
                                 b.index,
                                 e->kind == SG_EDGE_EVENT ? SG_TOPO_EDGE_EVENT
                                                          : SG_TOPO_EDGE_CONTROL};
            out->edges[out->n_edges++] = te;
        } else if (e->kind == SG_EDGE_STREAM && !x) {
            if ((a.stream != b.stream || b.index != a.index + 1) &&
                (rc = add_problem(out, &cap_problems,
                                  "stream edge s%u:%u -> s%u:%u does not join consecutive nodes "
                                  "of one stream",
                                  a.stream, a.index, b.stream, b.index)))
                goto fail;
        } else if ((rc = add_problem(out, &cap_problems, "%s edge %s -> %s",
                                     sg_edge_kind_name(e->kind), ref_text(a, ra, sizeof ra),
                                     ref_text(b, rb, sizeof rb)))) {
            goto fail;
        }
    }
    free(where);
    return SG_OK;
fail:
    free(ids);
    free(where);
    sg_topo_graph_free(out);
    return rc;
}

/* ---- comparison and printing --------------------------------------------------------- */

static int edge_cmp(const void *pa, const void *pb)
{
    const sg_topo_edge_t *a = pa, *b = pb;
    uint32_t ka[6] = {a->kind, a->dst_stream, a->dst_node, a->src_stream, a->src_node, a->event};
    uint32_t kb[6] = {b->kind, b->dst_stream, b->dst_node, b->src_stream, b->src_node, b->event};
    for (int i = 0; i < 6; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

typedef struct {
    char *p;
    size_t n, used;
} sink_t;

static void say(sink_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(sink_t *s, const char *fmt, ...)
{
    if (!s->p || s->n == 0 || s->used + 1 >= s->n) return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(s->p + s->used, s->n - s->used, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    s->used += (size_t)m;
    if (s->used >= s->n) s->used = s->n - 1;
}

static void say_types(sink_t *s, const sg_topo_stream_t *st)
{
    if (!st || st->n_nodes == 0) {
        say(s, "(none)");
        return;
    }
    for (uint32_t i = 0; i < st->n_nodes; i++)
        say(s, "%s%s", i ? " " : "", sg_node_type_name((sg_node_type_t)st->types[i]));
}

/* "e0 s0:1 -> s1:0" / "x:0 -> s0:0": the line without its keyword. */
static void edge_text(const sg_topo_edge_t *e, char *buf, size_t n)
{
    char a[32], b[32];
    place_t pa = {e->src_stream, e->src_node}, pb = {e->dst_stream, e->dst_node};
    ref_text(pa, a, sizeof a);
    ref_text(pb, b, sizeof b);
    if (e->kind == SG_TOPO_EDGE_EVENT)
        snprintf(buf, n, "e%u %s -> %s", e->event, a, b);
    else
        snprintf(buf, n, "%s -> %s", a, b);
}

static sg_topo_edge_t *sorted_edges(const sg_topo_graph_t *g)
{
    sg_topo_edge_t *e = malloc((g->n_edges ? g->n_edges : 1) * sizeof *e);
    if (!e) return NULL;
    if (g->n_edges) memcpy(e, g->edges, g->n_edges * sizeof *e);
    qsort(e, g->n_edges, sizeof *e, edge_cmp);
    return e;
}

int sg_topo_compare(const sg_topo_graph_t *want, const sg_topo_graph_t *got, char *report, size_t n)
{
    sink_t s = {report, n, 0};
    if (report && n) report[0] = '\0';
    int diff = 0;
    if (want->n_streams != got->n_streams) {
        say(&s, "streams: expected %u, got %u\n", want->n_streams, got->n_streams);
        diff++;
    }
    uint32_t ns = want->n_streams > got->n_streams ? want->n_streams : got->n_streams;
    for (uint32_t k = 0; k < ns; k++) {
        const sg_topo_stream_t *a = k < want->n_streams ? &want->streams[k] : NULL;
        const sg_topo_stream_t *b = k < got->n_streams ? &got->streams[k] : NULL;
        bool same = a && b && a->n_nodes == b->n_nodes &&
                    (a->n_nodes == 0 || memcmp(a->types, b->types, a->n_nodes) == 0);
        if (same) continue;
        say(&s, "stream s%u: expected ", k);
        say_types(&s, a);
        say(&s, "; got ");
        say_types(&s, b);
        say(&s, "\n");
        diff++;
    }
    const sg_topo_stream_t *xa = &want->explicit_lane, *xb = &got->explicit_lane;
    if (xa->n_nodes != xb->n_nodes ||
        (xa->n_nodes && memcmp(xa->types, xb->types, xa->n_nodes) != 0)) {
        say(&s, "explicit: expected ");
        say_types(&s, xa);
        say(&s, "; got ");
        say_types(&s, xb);
        say(&s, "\n");
        diff++;
    }
    sg_topo_edge_t *ea = sorted_edges(want), *eb = sorted_edges(got);
    if (!ea || !eb) {
        free(ea);
        free(eb);
        say(&s, "out of memory\n");
        return diff + 1;
    }
    uint32_t i = 0, j = 0;
    while (i < want->n_edges || j < got->n_edges) {
        int c = i >= want->n_edges ? 1 : j >= got->n_edges ? -1 : edge_cmp(&ea[i], &eb[j]);
        if (c == 0) {
            i++;
            j++;
            continue;
        }
        const sg_topo_edge_t *e = c < 0 ? &ea[i++] : &eb[j++];
        char line[96];
        edge_text(e, line, sizeof line);
        say(&s, "%s %s edge %s\n", c < 0 ? "missing" : "unexpected",
            e->kind == SG_TOPO_EDGE_EVENT ? "event" : "control", line);
        diff++;
    }
    free(ea);
    free(eb);
    for (uint32_t k = 0; k < got->n_problems; k++) {
        say(&s, "%s\n", got->problems[k]);
        diff++;
    }
    return diff;
}

int sg_topo_print(const sg_topo_graph_t *g, char *buf, size_t n)
{
    sink_t s = {buf, n, 0};
    if (buf && n) buf[0] = '\0';
    say(&s, "graph %" PRId64 "\n", g->index);
    for (uint32_t k = 0; k < g->n_streams; k++) {
        say(&s, "stream s%u", k);
        for (uint32_t i = 0; i < g->streams[k].n_nodes; i++)
            say(&s, " %s", sg_node_type_name((sg_node_type_t)g->streams[k].types[i]));
        say(&s, "\n");
    }
    if (g->explicit_lane.n_nodes) {
        say(&s, "explicit");
        for (uint32_t i = 0; i < g->explicit_lane.n_nodes; i++)
            say(&s, " %s", sg_node_type_name((sg_node_type_t)g->explicit_lane.types[i]));
        say(&s, "\n");
    }
    sg_topo_edge_t *e = sorted_edges(g);
    if (!e) return SG_ENOMEM;
    for (uint32_t k = 0; k < g->n_edges; k++) {
        char line[96];
        edge_text(&e[k], line, sizeof line);
        say(&s, "%s %s\n", e[k].kind == SG_TOPO_EDGE_EVENT ? "event" : "control", line);
    }
    free(e);
    for (uint32_t k = 0; k < g->n_problems; k++)
        say(&s, "# problem: %s\n", g->problems[k]);
    return s.used + 1 >= n ? SG_ELIMIT : SG_OK;
}
