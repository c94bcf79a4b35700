/* dot.c: Graphviz DOT export of a graph, drawn the way sgcap thinks of it:
 * one coloured lane (cluster) per captured stream, an "explicit" lane for
 * nodes added through the graph API, and edges styled by why they exist
 * (stream order plain, event edges dashed and named, control edges dotted
 * grey, deferred-deallocation edges bold red). Synthesized nodes get a
 * double border so a rewrite is visible at a glance. Body graphs of child
 * and conditional nodes are nested clusters inside their owner's lane.
 *
 * Every string that comes from a graph (labels, names, notes) is escaped,
 * and node and cluster names are built from ids only, so any graph, even
 * one read from a hostile bundle, yields valid DOT.
 */
#include "views.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SG_DOT_MAX_DEPTH 64
#define SG_DOT_LABEL_MAX 512 /* bytes of one node label before escaping */
#define SG_DOT_PREFIX_MAX 256

/* Lane colours: border/title and a light fill, Tableau-like so that
 * neighbouring lanes are easy to tell apart. Grey is kept for "explicit". */
static const char *const lane_border[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                          "#8c564b", "#e377c2", "#bcbd22", "#17becf"};
static const char *const lane_fill[] = {"#e3eef8", "#fff0e0", "#e2f4e2", "#efe8f6",
                                        "#f1e7e4", "#fbeaf5", "#f5f5dc", "#e0f6f8"};
#define SG_DOT_LANE_COLOURS (sizeof lane_border / sizeof lane_border[0])
#define SG_DOT_GREY_BORDER "#7f7f7f"
#define SG_DOT_GREY_FILL "#f0f0f0"

/* ---- strings --------------------------------------------------------------- */

/* Write s as the inside of a DOT double-quoted string. A real newline becomes
 * a centred line break; other control bytes and non-ASCII bytes become '?'
 * (Graphviz rejects invalid UTF-8, and a truncated label can split a
 * character). */
static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"')
            fputs("\\\"", f);
        else if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p >= 0x7f)
            fputc('?', f);
        else
            fputc(*p, f);
    }
}

static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    put_escaped(f, s ? s : "");
    fputc('"', f);
}

/* A bounded label under construction; appends truncate silently. */
typedef struct {
    char s[SG_DOT_LABEL_MAX];
    size_t len;
} label_t;

__attribute__((format(printf, 2, 3))) static void lbl_printf(label_t *l, const char *fmt, ...)
{
    if (l->len >= sizeof l->s - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(l->s + l->len, sizeof l->s - l->len, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    l->len += (size_t)w;
    if (l->len > sizeof l->s - 1) l->len = sizeof l->s - 1;
}

/* "256", "64x64", "8x8x4": trailing 1s add nothing for a reader. */
static void lbl_dims(label_t *l, const uint32_t d[3])
{
    if (d[2] != 1)
        lbl_printf(l, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, d[0], d[1], d[2]);
    else if (d[1] != 1)
        lbl_printf(l, "%" PRIu32 "x%" PRIu32, d[0], d[1]);
    else
        lbl_printf(l, "%" PRIu32, d[0]);
}

static void lbl_bytes(label_t *l, uint64_t b)
{
    if (b >= (1ull << 30) && b % (1ull << 30) == 0)
        lbl_printf(l, "%" PRIu64 " GiB", b >> 30);
    else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
        lbl_printf(l, "%" PRIu64 " MiB", b >> 20);
    else if (b >= (1ull << 10) && b % (1ull << 10) == 0)
        lbl_printf(l, "%" PRIu64 " KiB", b >> 10);
    else
        lbl_printf(l, "%" PRIu64 " B", b);
}

static const char *stream_label(const sg_graph_t *g, uint32_t stream)
{
    if (stream == SG_STREAM_EXPLICIT) return "explicit";
    const sg_stream_t *s = sg_graph_stream(g, stream);
    return s && s->label ? s->label : "?";
}

static const char *event_label(const sg_graph_t *g, uint32_t event)
{
    const sg_event_t *e = sg_graph_event(g, event);
    return e && e->label ? e->label : "?";
}

static const char *buffer_label(const sg_graph_t *g, uint32_t buffer)
{
    const sg_buffer_t *b = sg_graph_buffer(g, buffer);
    return b && b->label ? b->label : "?";
}

/* ---- nodes ----------------------------------------------------------------- */

static const char *copy_kind_upper(sg_copy_kind_t k)
{
    static const char *const names[] = {"", " H2D", " D2H", " D2D", " H2H"};
    return (unsigned)k <= SG_COPY_H2H ? names[k] : "";
}

static const char *cond_name(sg_cond_type_t t)
{
    return t == SG_COND_IF       ? "if"
           : t == SG_COND_WHILE  ? "while"
           : t == SG_COND_SWITCH ? "switch"
                                 : "cond";
}

/* Shape, fill and label of one node. */
static void node_look(const sg_graph_t *g, const sg_node_t *n, const sg_dot_options_t *opt,
                      label_t *l, const char **shape, const char **style, const char **fill)
{
    *style = "filled";
    *fill = "white";
    switch (n->type) {
    case SG_NODE_KERNEL: {
        const sg_kernel_t *k = &n->u.kernel;
        char name[128];
        sg_kernel_short_name(k->name, name, sizeof name);
        *shape = "box";
        *style = "rounded,filled";
        lbl_printf(l, "%s", name);
        if (opt->show_ids) lbl_printf(l, " #%" PRIu32, n->id);
        /* a fused kernel names its stages (from its record, else its label) */
        const sg_fusion_t *fu = sg_graph_fusion(g, n->id);
        if (fu) {
            lbl_printf(l, "\nfused, tier %u, %u stages:", fu->tier, fu->n_stages);
            for (uint32_t i = 0; i < fu->n_stages; i++) {
                char sn[96];
                sg_kernel_short_name(fu->stages[i].kernel.name, sn, sizeof sn);
                lbl_printf(l, "%s%s", i % 3 ? ", " : "\n", sn);
            }
            *fill = "#fde2f0";
        } else if (n->synthesized && n->label && !strncmp(n->label, "fused", 5)) {
            lbl_printf(l, "\n%s", n->label);
            *fill = "#fde2f0";
        }
        lbl_printf(l, "\ngrid ");
        lbl_dims(l, k->grid);
        lbl_printf(l, "  block ");
        lbl_dims(l, k->block);
        if (k->cluster[0] || k->cluster[1] || k->cluster[2]) {
            lbl_printf(l, "\ncluster ");
            lbl_dims(l, k->cluster);
        }
        if (k->shared_bytes) {
            lbl_printf(l, "\nsmem ");
            lbl_bytes(l, k->shared_bytes);
        }
        if (opt->show_params && k->n_params) {
            lbl_printf(l, "\nparams ");
            for (uint32_t i = 0; i < k->n_params && l->len < 200; i++)
                lbl_printf(l, "%s%" PRIu32, i ? "+" : "", k->param_sizes[i]);
            lbl_printf(l, " = %" PRIu32 " B", k->params_size);
        }
        return;
    }
    case SG_NODE_MEMCPY: {
        const sg_memcpy_t *c = &n->u.memcpy;
        *shape = "parallelogram";
        *fill = "#fff6d5";
        lbl_printf(l, "memcpy%s", copy_kind_upper(c->kind));
        if (opt->show_ids) lbl_printf(l, " #%" PRIu32, n->id);
        lbl_printf(l, "\n");
        lbl_bytes(l, c->width * (c->height ? c->height : 1) * (c->depth ? c->depth : 1));
        return;
    }
    case SG_NODE_MEMSET: {
        const sg_memset_t *s = &n->u.memset;
        *shape = "trapezium";
        *fill = "#fff6d5";
        lbl_printf(l, "memset");
        if (opt->show_ids) lbl_printf(l, " #%" PRIu32, n->id);
        lbl_printf(l, "\n");
        lbl_bytes(l, s->width * (s->height ? s->height : 1) * s->element_size);
        lbl_printf(l, " = 0x%" PRIx32, s->value);
        return;
    }
    case SG_NODE_HOST:
        *shape = "hexagon";
        *fill = "#efe6ff";
        lbl_printf(l, "host");
        break;
    case SG_NODE_EMPTY:
        *shape = "ellipse";
        *fill = "#f5f5f5";
        lbl_printf(l, "empty");
        break;
    case SG_NODE_EVENT_RECORD:
        *shape = "cds";
        *fill = "#dde8f7";
        lbl_printf(l, "record %s", event_label(g, n->u.event));
        break;
    case SG_NODE_EVENT_WAIT:
        *shape = "invhouse";
        *fill = "#dde8f7";
        lbl_printf(l, "wait %s", event_label(g, n->u.event));
        break;
    case SG_NODE_MEM_ALLOC:
        *shape = "house";
        *fill = "#e2f4e2";
        lbl_printf(l, "alloc %s", buffer_label(g, n->u.mem.buffer));
        if (opt->show_ids) lbl_printf(l, " #%" PRIu32, n->id);
        lbl_printf(l, "\n");
        lbl_bytes(l, n->u.mem.bytes);
        return;
    case SG_NODE_MEM_FREE:
        *shape = "box";
        *style = "filled,diagonals";
        *fill = "#fbdede";
        lbl_printf(l, "free %s", buffer_label(g, n->u.mem.buffer));
        break;
    case SG_NODE_CHILD_GRAPH:
        *shape = "box3d";
        *fill = "#f3f3f3";
        lbl_printf(l, "child graph\n%" PRIu32 " nodes",
                   n->u.child ? sg_graph_node_count(n->u.child) : 0);
        break;
    case SG_NODE_CONDITIONAL:
        *shape = "diamond";
        *fill = "#f3f3f3";
        lbl_printf(l, "%s\n%" PRIu32 " bodies", cond_name(n->u.cond.type), n->u.cond.n_bodies);
        break;
    case SG_NODE_OPAQUE:
        *shape = "octagon";
        *fill = "#dddddd";
        lbl_printf(l, "opaque");
        if (n->u.opaque_note) lbl_printf(l, "\n%.100s", n->u.opaque_note);
        break;
    default:
        *shape = "box";
        lbl_printf(l, "%s", sg_node_type_name(n->type));
        break;
    }
    if (opt->show_ids) lbl_printf(l, " #%" PRIu32, n->id);
}

static void emit_graph_nodes(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt,
                             const char *prefix, int depth, int ind);

static void emit_node(const sg_graph_t *g, const sg_node_t *n, FILE *f, const sg_dot_options_t *opt,
                      const char *prefix, int depth, int ind)
{
    label_t l = {{0}, 0};
    const char *shape, *style, *fill;
    node_look(g, n, opt, &l, &shape, &style, &fill);
    if (n->duration_ns >= 0) lbl_printf(&l, "\n%.2f us", n->duration_ns / 1000.0);
    if (n->synthesized) lbl_printf(&l, "\n(synthesized)");
    fprintf(f, "%*s%sn%" PRIu32 " [label=", ind, "", prefix, n->id);
    put_quoted(f, l.s);
    fprintf(f, " shape=%s style=\"%s\" fillcolor=\"%s\"", shape, style, fill);
    if (n->synthesized) fputs(" peripheries=2 color=\"#b0006a\" penwidth=1.5", f);
    if (n->type == SG_NODE_KERNEL && n->u.kernel.name) {
        fputs(" tooltip=", f);
        put_quoted(f, n->u.kernel.name);
    }
    fputs("];\n", f);

    /* Bodies: a nested cluster right here, linked to the owner. */
    uint32_t n_bodies = 0;
    sg_graph_t *const *bodies = NULL;
    if (n->type == SG_NODE_CHILD_GRAPH && n->u.child) {
        n_bodies = 1;
        bodies = &n->u.child;
    } else if (n->type == SG_NODE_CONDITIONAL) {
        n_bodies = n->u.cond.n_bodies;
        bodies = n->u.cond.bodies;
    }
    for (uint32_t b = 0; b < n_bodies; b++) {
        char sub[SG_DOT_PREFIX_MAX];
        int w = snprintf(sub, sizeof sub, "%sn%" PRIu32 "_b%" PRIu32 "_", prefix, n->id, b);
        if (w < 0 || (size_t)w >= sizeof sub || !bodies[b]) continue;
        fprintf(f, "%*ssubgraph cluster_%sbody {\n", ind, "", sub);
        fprintf(f, "%*s  label=", ind, "");
        {
            label_t bl = {{0}, 0};
            if (n->type == SG_NODE_CONDITIONAL)
                lbl_printf(&bl, "body %" PRIu32 " of ", b);
            else
                lbl_printf(&bl, "body of ");
            lbl_printf(&bl, "n%" PRIu32, n->id);
            put_quoted(f, bl.s);
        }
        fprintf(f, "; style=\"dashed,filled\"; color=\"%s\"; fillcolor=\"white\";\n",
                SG_DOT_GREY_BORDER);
        if (depth + 1 > SG_DOT_MAX_DEPTH) {
            fprintf(f, "%*s  %snote [label=\"(nested too deep)\" shape=plaintext];\n", ind, "",
                    sub);
        } else if (sg_graph_node_count(bodies[b]) == 0) {
            fprintf(f, "%*s  %snote [label=\"(empty)\" shape=plaintext];\n", ind, "", sub);
        } else {
            emit_graph_nodes(bodies[b], f, opt, sub, depth + 1, ind + 2);
        }
        fprintf(f, "%*s}\n", ind, "");
        /* link the owner to the body's first source node (or its note) */
        const sg_graph_t *bg = bodies[b];
        char target[SG_DOT_PREFIX_MAX + 16];
        snprintf(target, sizeof target, "%snote", sub);
        if (depth + 1 <= SG_DOT_MAX_DEPTH) {
            for (uint32_t i = 0; i < bg->n_nodes; i++) {
                if (!bg->nodes[i].removed && bg->nodes[i].n_in == 0) {
                    snprintf(target, sizeof target, "%sn%" PRIu32, sub, i);
                    break;
                }
            }
        }
        fprintf(f, "%*s%sn%" PRIu32 " -> %s [style=dotted color=\"%s\" arrowhead=odot];\n", ind, "",
                prefix, n->id, target, SG_DOT_GREY_BORDER);
    }
}

/* ---- edges ----------------------------------------------------------------- */

static int cmp_edge(const void *pa, const void *pb)
{
    const sg_edge_t *a = *(const sg_edge_t *const *)pa, *b = *(const sg_edge_t *const *)pb;
    if (a->from != b->from) return a->from < b->from ? -1 : 1;
    if (a->to != b->to) return a->to < b->to ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->event != b->event) return a->event < b->event ? -1 : 1;
    return 0;
}

static void emit_edges(const sg_graph_t *g, FILE *f, const char *prefix, int ind)
{
    uint32_t live = sg_graph_edge_count(g);
    if (!live) return;
    const sg_edge_t **sorted = malloc(live * sizeof *sorted);
    if (!sorted) return; /* the graph is still valid DOT, just without edges */
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_edges && k < live; i++)
        if (!g->edges[i].removed) sorted[k++] = &g->edges[i];
    qsort(sorted, k, sizeof *sorted, cmp_edge);
    for (uint32_t i = 0; i < k; i++) {
        const sg_edge_t *e = sorted[i];
        label_t l = {{0}, 0};
        fprintf(f, "%*s%sn%" PRIu32 " -> %sn%" PRIu32 " [", ind, "", prefix, e->from, prefix,
                e->to);
        switch (e->kind) {
        case SG_EDGE_EVENT:
            lbl_printf(&l, "%s", event_label(g, e->event));
            fputs("style=dashed color=\"#1f4e9c\" fontcolor=\"#1f4e9c\" penwidth=1.3", f);
            break;
        case SG_EDGE_CONTROL:
            fputs("style=dotted color=\"grey50\" penwidth=1.3", f);
            break;
        case SG_EDGE_DEALLOC:
            lbl_printf(&l, "dealloc");
            fputs("style=bold color=\"red\" fontcolor=\"red\" penwidth=2", f);
            break;
        default:
            fputs("color=\"#333333\"", f);
            break;
        }
        if (e->cuda_type) lbl_printf(&l, "%stype %u", l.len ? " " : "", (unsigned)e->cuda_type);
        if (e->from_port || e->to_port)
            lbl_printf(&l, "%sport %u>%u", l.len ? " " : "", (unsigned)e->from_port,
                       (unsigned)e->to_port);
        if (l.len) {
            fputs(" label=", f);
            put_quoted(f, l.s);
        }
        fputs("];\n", f);
    }
    free(sorted);
}

/* ---- lanes ----------------------------------------------------------------- */

/* Lane of a node: its stream index, n_streams for explicit, n_streams + 1
 * for a stream index the table does not have. */
static uint32_t lane_of(const sg_graph_t *root, const sg_node_t *n)
{
    if (n->stream == SG_STREAM_EXPLICIT) return root->n_streams;
    if (n->stream < root->n_streams) return n->stream;
    return root->n_streams + 1;
}

/* Nodes of a body graph all sit in the body's cluster (lanes would tear a
 * small body apart); the root graph gets one lane per stream. */
static void emit_graph_nodes(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt,
                             const char *prefix, int depth, int ind)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) emit_node(g, &g->nodes[i], f, opt, prefix, depth, ind);
    emit_edges(g, f, prefix, ind);
}

static int emit_lanes(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt)
{
    uint32_t n_lanes = g->n_streams + 2;
    /* counting sort of node ids by lane: O(nodes + streams) */
    uint32_t *start = calloc((size_t)n_lanes + 1, sizeof *start);
    uint32_t *ids = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *ids);
    if (!start || !ids) {
        free(start);
        free(ids);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) start[lane_of(g, &g->nodes[i]) + 1]++;
    for (uint32_t l = 0; l < n_lanes; l++)
        start[l + 1] += start[l];
    uint32_t *fill = malloc((size_t)n_lanes * sizeof *fill);
    if (!fill) {
        free(start);
        free(ids);
        return SG_ENOMEM;
    }
    memcpy(fill, start, (size_t)n_lanes * sizeof *fill);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) ids[fill[lane_of(g, &g->nodes[i])]++] = i;
    free(fill);

    for (uint32_t l = 0; l < n_lanes; l++) {
        if (start[l] == start[l + 1]) continue;
        const char *border = SG_DOT_GREY_BORDER, *bg = SG_DOT_GREY_FILL;
        if (l < g->n_streams) {
            border = lane_border[l % SG_DOT_LANE_COLOURS];
            bg = lane_fill[l % SG_DOT_LANE_COLOURS];
        }
        if (l < g->n_streams)
            fprintf(f, "  subgraph cluster_s%" PRIu32 " {\n    label=", l);
        else if (l == g->n_streams)
            fputs("  subgraph cluster_explicit {\n    label=", f);
        else
            fputs("  subgraph cluster_unknown {\n    label=", f);
        put_quoted(f, l < g->n_streams    ? stream_label(g, l)
                      : l == g->n_streams ? "explicit"
                                          : "unknown stream");
        fprintf(f,
                "; style=\"rounded,filled\"; color=\"%s\"; fillcolor=\"%s\"; fontcolor=\"%s\";"
                " penwidth=2;\n",
                border, bg, border);
        for (uint32_t k = start[l]; k < start[l + 1]; k++)
            emit_node(g, &g->nodes[ids[k]], f, opt, "", 0, 4);
        fputs("  }\n", f);
    }
    /* A graph of no nodes (torch.compile records some) is drawn as a note
     * saying so, not as a blank page. */
    if (start[n_lanes] == 0)
        fputs("  graph_empty [shape=note style=dashed label=\"empty graph: no nodes\"];\n", f);
    free(start);
    free(ids);
    return SG_OK;
}

int sg_dot_write(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt)
{
    if (!g || !f) return SG_EINVAL;
    sg_dot_options_t defaults = {0};
    if (!opt) opt = &defaults;
    fputs("digraph sgcap {\n", f);
    fputs("  graph [fontname=\"Helvetica\" fontsize=12 rankdir=TB nodesep=0.35 ranksep=0.4"
          " compound=true",
          f);
    if (opt->title) {
        fputs(" labelloc=t label=", f);
        put_quoted(f, opt->title);
    }
    fputs("];\n", f);
    fputs("  node [fontname=\"Helvetica\" fontsize=10 margin=\"0.12,0.05\" color=\"#333333\"];\n",
          f);
    fputs("  edge [fontname=\"Helvetica\" fontsize=9 arrowsize=0.7];\n", f);
    int rc = SG_OK;
    if (g->root == g) {
        rc = emit_lanes(g, f, opt);
        if (rc == SG_OK) emit_edges(g, f, "", 2);
    } else {
        /* a body graph drawn alone: no lanes, its nodes as they are */
        emit_graph_nodes(g, f, opt, "", 0, 2);
    }
    fputs("}\n", f);
    if (rc == SG_OK && ferror(f)) rc = SG_EIO;
    return rc;
}
