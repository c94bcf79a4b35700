/* dot.c: Graphviz DOT export of a graph, drawn the way sgcap thinks of it:
 * one coloured lane (cluster) per captured stream, an "explicit" lane for
 * nodes added through the graph API, and edges styled by why they exist
 * (stream order plain, event edges dashed and named, control edges dotted
 * grey, deferred-deallocation edges bold red). Synthesized nodes get a
 * double border so a rewrite is visible at a glance. Body graphs of child
 * and conditional nodes are nested clusters inside their owner's lane.
 *
 * Every string that comes from a graph (labels, names, notes) is escaped
 * for people first, like every other output of sgcap (graph/text.h), cut to
 * a bounded length, then quoted for DOT; node and cluster names are built
 * from ids only. So any graph, even one read from a hostile bundle, yields
 * valid DOT that Graphviz can lay out.
 */
#include "views.h"
#include "comm.h"
#include "dot_fold.h"
#include "text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plural.h"

#define SG_DOT_MAX_DEPTH 64
#define SG_DOT_LABEL_MAX 512 /* bytes of one node label before escaping */
#define SG_DOT_PREFIX_MAX 256
#define SG_DOT_NAME_MAX 96      /* bytes of one name (stream, event, buffer) in a label */
#define SG_DOT_TOOLTIP_MAX 1024 /* the full kernel name, up to this */
#define SG_DOT_QUICK_LAYOUT 100 /* more boxes: bound Graphviz's iterations */

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

/* Write s as the inside of a DOT double-quoted string. A real newline (the
 * label's own line breaks; strings from the graph arrive escaped) becomes a
 * centred line break. Other control bytes and bytes that are not
 * well-formed UTF-8 (Graphviz rejects it) become '?': none should be left
 * after escaping, this keeps the DOT valid whatever the caller passed. */
static void put_escaped(FILE *f, const char *s)
{
    for (const char *p = s; *p;) {
        unsigned char c = (unsigned char)*p;
        size_t len = sg_text_utf8_len(p);
        if (c == '"')
            fputs("\\\"", f);
        else if (c == '\\')
            fputs("\\\\", f);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == 0x7f || len == 0)
            fputc('?', f);
        else
            fwrite(p, 1, len, f);
        p += len ? len : 1;
    }
}

static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    put_escaped(f, s ? s : "");
    fputc('"', f);
}

/* A string from the graph as a quoted DOT string: escaped, at most max bytes. */
static void put_text(FILE *f, const char *s, size_t max)
{
    char buf[SG_DOT_TOOLTIP_MAX + 1];
    if (max > SG_DOT_TOOLTIP_MAX) max = SG_DOT_TOOLTIP_MAX;
    sg_text_escape(buf, max + 1, s);
    put_quoted(f, buf);
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

/* A string from the graph into a label: escaped, at most max bytes. */
static void lbl_text(label_t *l, const char *s, size_t max)
{
    char buf[SG_DOT_NAME_MAX * 2 + 1];
    if (max > sizeof buf - 1) max = sizeof buf - 1;
    sg_text_escape(buf, max + 1, s);
    lbl_printf(l, "%s", buf);
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
        lbl_text(l, name, sizeof name);
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
        /* communication kernels stand out: replay cannot run them offline */
        sg_comm_library_t lib = sg_kernel_comm_library(k->name);
        if (lib != SG_COMM_NONE) {
            lbl_printf(l, "\n%s kernel", sg_comm_library_name(lib));
            *fill = "#ffe7a8";
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
        lbl_printf(l, "record ");
        lbl_text(l, event_label(g, n->u.event), SG_DOT_NAME_MAX);
        break;
    case SG_NODE_EVENT_WAIT:
        *shape = "invhouse";
        *fill = "#dde8f7";
        lbl_printf(l, "wait ");
        lbl_text(l, event_label(g, n->u.event), SG_DOT_NAME_MAX);
        break;
    case SG_NODE_MEM_ALLOC:
        *shape = "house";
        *fill = "#e2f4e2";
        lbl_printf(l, "alloc ");
        lbl_text(l, buffer_label(g, n->u.mem.buffer), SG_DOT_NAME_MAX);
        if (opt->show_ids) lbl_printf(l, " #%" PRIu32, n->id);
        lbl_printf(l, "\n");
        lbl_bytes(l, n->u.mem.bytes);
        return;
    case SG_NODE_MEM_FREE:
        *shape = "box";
        *style = "filled,diagonals";
        *fill = "#fbdede";
        lbl_printf(l, "free ");
        lbl_text(l, buffer_label(g, n->u.mem.buffer), SG_DOT_NAME_MAX);
        break;
    case SG_NODE_CHILD_GRAPH:
        *shape = "box3d";
        *fill = "#f3f3f3";
        lbl_printf(l, "child graph\n%" PRIu32 " %s",
                   n->u.child ? sg_graph_node_count(n->u.child) : 0,
                   sg_plural(n->u.child ? sg_graph_node_count(n->u.child) : 0, "node", "nodes"));
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
        if (n->u.opaque_note) {
            lbl_printf(l, "\n");
            lbl_text(l, n->u.opaque_note, 100);
        }
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
                      const char *prefix, int depth, int ind, bool with_bodies)
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
        put_text(f, n->u.kernel.name, SG_DOT_TOOLTIP_MAX);
    }
    fputs("];\n", f);

    /* Bodies: a nested cluster right here, linked to the owner. */
    if (!with_bodies) return;
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

/* Style of an edge of this kind; its label (event name, "dealloc") into l. */
static void edge_style(const sg_graph_t *g, FILE *f, sg_edge_kind_t kind, uint32_t event,
                       label_t *l)
{
    switch (kind) {
    case SG_EDGE_EVENT:
        if (event != SG_NONE) lbl_text(l, event_label(g, event), SG_DOT_NAME_MAX);
        fputs("style=dashed color=\"#1f4e9c\" fontcolor=\"#1f4e9c\" penwidth=1.3", f);
        break;
    case SG_EDGE_CONTROL:
        fputs("style=dotted color=\"grey50\" penwidth=1.3", f);
        break;
    case SG_EDGE_DEALLOC:
        lbl_printf(l, "dealloc");
        fputs("style=bold color=\"red\" fontcolor=\"red\" penwidth=2", f);
        break;
    default:
        fputs("color=\"#333333\"", f);
        break;
    }
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
        edge_style(g, f, e->kind, e->event, &l);
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

/* "subgraph cluster_s0 {" with the lane's title and colours; a stream of
 * communication kernels only (comm, may be NULL) says so in its title. */
static void lane_open(const sg_graph_t *g, FILE *f, uint32_t l, const sg_comm_library_t *comm)
{
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
    label_t t = {{0}, 0};
    lbl_text(&t,
             l < g->n_streams    ? stream_label(g, l)
             : l == g->n_streams ? "explicit"
                                 : "unknown stream",
             SG_DOT_NAME_MAX);
    if (comm && l < g->n_streams && comm[l] != SG_COMM_NONE)
        lbl_printf(&t, " (comm: %s)", sg_comm_library_name(comm[l]));
    put_quoted(f, t.s);
    fprintf(f,
            "; style=\"rounded,filled\"; color=\"%s\"; fillcolor=\"%s\"; fontcolor=\"%s\";"
            " penwidth=2;\n",
            border, bg, border);
}

/* Nodes of a body graph all sit in the body's cluster (lanes would tear a
 * small body apart); the root graph gets one lane per stream. */
static void emit_graph_nodes(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt,
                             const char *prefix, int depth, int ind)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) emit_node(g, &g->nodes[i], f, opt, prefix, depth, ind, true);
    emit_edges(g, f, prefix, ind);
}

static int emit_lanes(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt,
                      const sg_comm_library_t *comm)
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
        if (!g->nodes[i].removed) start[sg_dot_lane_of(g, &g->nodes[i]) + 1]++;
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
        if (!g->nodes[i].removed) ids[fill[sg_dot_lane_of(g, &g->nodes[i])]++] = i;
    free(fill);

    for (uint32_t l = 0; l < n_lanes; l++) {
        if (start[l] == start[l + 1]) continue;
        lane_open(g, f, l, comm);
        for (uint32_t k = start[l]; k < start[l + 1]; k++)
            emit_node(g, &g->nodes[ids[k]], f, opt, "", 0, 4, true);
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

/* ---- folded drawings (dot_fold.h) ---------------------------------------------- */

/* A box is named after its first node: "n12" for a box of one node (the
 * same name as unfolded), "f12" for one of several. */
static void box_name(const sg_fold_t *fo, uint32_t b, char *buf, size_t n)
{
    const sg_fold_box_t *x = &fo->boxes[b];
    snprintf(buf, n, "%s%" PRIu32, x->n_nodes == 1 ? "n" : "f", fo->members[x->start]);
}

/* The first line of a node's own label ("gemm_tile<128, 64>", "memcpy H2D"). */
static void node_headline(const sg_graph_t *g, const sg_node_t *n, label_t *out)
{
    label_t l = {{0}, 0};
    const char *shape, *style, *fill;
    sg_dot_options_t plain = {0};
    node_look(g, n, &plain, &l, &shape, &style, &fill);
    char *nl = strchr(l.s, '\n');
    if (nl) *nl = '\0';
    lbl_printf(out, "%s", l.s);
}

static int cmp_name(const void *pa, const void *pb)
{
    return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/* "3 kernel, 2 event_wait" and the most launched kernels of a box of mixed
 * nodes. */
static void box_contents(const sg_graph_t *g, const sg_fold_t *fo, const sg_fold_box_t *x,
                         label_t *l)
{
    uint32_t by_type[SG_NODE_TYPE_COUNT] = {0};
    const char **names = malloc(x->n_nodes * sizeof *names);
    uint32_t nk = 0;
    for (uint32_t k = 0; k < x->n_nodes; k++) {
        const sg_node_t *n = &g->nodes[fo->members[x->start + k]];
        if ((unsigned)n->type < SG_NODE_TYPE_COUNT) by_type[n->type]++;
        if (names && n->type == SG_NODE_KERNEL)
            names[nk++] = n->u.kernel.name ? n->u.kernel.name : "?";
    }
    for (int shown = 0; shown < 4; shown++) {
        int best = -1;
        for (int t = 0; t < SG_NODE_TYPE_COUNT; t++)
            if (by_type[t] && (best < 0 || by_type[t] > by_type[best])) best = t;
        if (best < 0) break;
        lbl_printf(l, "%s%" PRIu32 " %s", shown ? ", " : "\n", by_type[best],
                   sg_node_type_name((sg_node_type_t)best));
        by_type[best] = 0;
    }
    if (!names) return;
    qsort(names, nk, sizeof *names, cmp_name);
    for (int shown = 0; shown < 3 && nk; shown++) {
        uint32_t best = 0, best_n = 0;
        for (uint32_t i = 0; i < nk;) {
            uint32_t j = i;
            while (j < nk && strcmp(names[j], names[i]) == 0)
                j++;
            if (j - i > best_n && names[i][0]) best = i, best_n = j - i;
            i = j;
        }
        if (!best_n) break;
        char name[128];
        sg_kernel_short_name(names[best], name, sizeof name);
        lbl_printf(l, "\n");
        lbl_text(l, name, 48);
        lbl_printf(l, " x%" PRIu32, best_n);
        for (uint32_t i = best; i < best + best_n; i++)
            names[i] = ""; /* taken */
    }
    free(names);
}

static void emit_box(const sg_graph_t *g, const sg_fold_t *fo, uint32_t b, FILE *f,
                     const sg_dot_options_t *opt)
{
    const sg_fold_box_t *x = &fo->boxes[b];
    const sg_node_t *first = &g->nodes[fo->members[x->start]];
    if (x->n_nodes == 1) {
        emit_node(g, first, f, opt, "", 0, 4, false);
        return;
    }
    label_t l = {{0}, 0};
    const char *shape = "box", *style = "rounded,filled", *fill = "white";
    if (x->period == 1) {
        /* one node repeated: its own look, and how often */
        node_look(g, first, opt, &l, &shape, &style, &fill);
        lbl_printf(&l, "\nx%" PRIu32, x->repeats);
    } else if (x->period > 1) {
        lbl_printf(&l, "%" PRIu32 " x [", x->repeats);
        for (uint32_t k = 0; k < x->period; k++) {
            lbl_printf(&l, "\n");
            node_headline(g, &g->nodes[fo->members[x->start + k]], &l);
        }
        lbl_printf(&l, " ]");
    } else {
        style = "filled";
        fill = "#fafafa";
        lbl_printf(&l, "%" PRIu32 " nodes", x->n_nodes);
        box_contents(g, fo, x, &l);
        if (x->syncs_inside)
            lbl_printf(&l, "\n%" PRIu32 " cross-stream edges inside", x->syncs_inside);
    }
    if (opt->show_ids || x->period == 0)
        lbl_printf(&l, "\nn%" PRIu32 " .. n%" PRIu32, first->id,
                   fo->members[x->start + x->n_nodes - 1]);
    char name[24];
    box_name(fo, b, name, sizeof name);
    fprintf(f, "    %s [label=", name);
    put_quoted(f, l.s);
    fprintf(f, " shape=%s style=\"%s,bold\" fillcolor=\"%s\" penwidth=2];\n", shape, style, fill);
}

static void emit_folded(const sg_graph_t *g, const sg_fold_t *fo, FILE *f,
                        const sg_dot_options_t *opt, const sg_comm_library_t *comm)
{
    for (uint32_t b = 0; b < fo->n_boxes;) {
        uint32_t lane = fo->boxes[b].lane;
        lane_open(g, f, lane, comm);
        for (; b < fo->n_boxes && fo->boxes[b].lane == lane; b++)
            emit_box(g, fo, b, f, opt);
        fputs("  }\n", f);
    }
    if (fo->level == SG_FOLD_BANDS) {
        /* one rank per band: lanes side by side, bands one below the other */
        for (uint32_t band = 0; band < fo->n_bands; band++) {
            bool open = false;
            for (uint32_t b = 0; b < fo->n_boxes; b++) {
                if (fo->boxes[b].band != band) continue;
                char name[24];
                box_name(fo, b, name, sizeof name);
                fprintf(f, "%s %s;", open ? "" : "  { rank=same;", name);
                open = true;
            }
            if (open) fputs(" }\n", f);
        }
    }
    for (uint32_t i = 0; i < fo->n_edges; i++) {
        const sg_fold_edge_t *e = &fo->edges[i];
        char a[24], z[24];
        box_name(fo, e->from, a, sizeof a);
        box_name(fo, e->to, z, sizeof z);
        label_t l = {{0}, 0};
        fprintf(f, "  %s -> %s [", a, z);
        edge_style(g, f, e->kind, e->event, &l);
        if (e->count > 1) lbl_printf(&l, "%sx%" PRIu32, l.len ? " " : "", e->count);
        if (l.len) {
            fputs(" label=", f);
            put_quoted(f, l.s);
        }
        fputs("];\n", f);
    }
}

static void summarize(const sg_graph_t *g, const sg_fold_t *fo, sg_dot_summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->nodes = sg_graph_node_count(g);
    if (fo->level == SG_FOLD_NONE) {
        s->boxes = s->nodes;
        return;
    }
    s->boxes = fo->n_boxes;
    s->bands = fo->level == SG_FOLD_BANDS ? fo->n_bands : 0;
    for (uint32_t b = 0; b < fo->n_boxes; b++) {
        if (fo->boxes[b].n_nodes < 2) continue;
        s->folded_boxes++;
        s->folded_nodes += fo->boxes[b].n_nodes;
    }
    for (uint32_t i = 0; i < g->n_nodes && !s->bodies_hidden; i++) {
        const sg_node_t *n = &g->nodes[i];
        s->bodies_hidden = !n->removed && ((n->type == SG_NODE_CHILD_GRAPH && n->u.child) ||
                                           (n->type == SG_NODE_CONDITIONAL && n->u.cond.n_bodies));
    }
}

const char *sg_dot_summary_text(const sg_dot_summary_t *s, char *buf, size_t n)
{
    int w;
    if (s->bands)
        w = snprintf(buf, n,
                     "%" PRIu32 " nodes drawn as %" PRIu32 " boxes: %" PRIu32
                     " bands of about %" PRIu32 " nodes, one box per stream and band; arrows "
                     "only between bands",
                     s->nodes, s->boxes, s->bands, (s->nodes + s->bands - 1) / s->bands);
    else if (s->folded_boxes)
        w = snprintf(buf, n,
                     "%" PRIu32 " nodes drawn as %" PRIu32 " boxes, %" PRIu32
                     " of them runs of one stream (%" PRIu32 " nodes)",
                     s->nodes, s->boxes, s->folded_boxes, s->folded_nodes);
    else
        w = snprintf(buf, n, "%s", "");
    if (w >= 0 && (size_t)w < n && s->bodies_hidden)
        snprintf(buf + w, n - (size_t)w, "%sbodies of child graphs not drawn", w ? "; " : "");
    return buf;
}

int sg_dot_write(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt)
{
    if (!g || !f) return SG_EINVAL;
    sg_dot_options_t defaults = {0};
    if (!opt) opt = &defaults;
    sg_fold_t fo;
    int rc = sg_dot_fold(g, g->root == g ? opt->max_nodes : 0, &fo);
    if (rc) return rc;
    sg_dot_summary_t sum;
    summarize(g, &fo, &sum);
    if (opt->summary) *opt->summary = sum;
    fputs("digraph sgcap {\n", f);
    fputs("  graph [fontname=\"Helvetica\" fontsize=12 rankdir=TB nodesep=0.35 ranksep=0.4"
          " compound=true",
          f);
    /* Graphviz's newer ranking keeps lanes and bands straight, and on
     * clusters it is much faster: a 1,000-node capture unfolded takes 1.5 s
     * with it, over a minute without */
    fputs(" newrank=true", f);
    /* Graphviz's x placement (network simplex) runs unbounded by default,
     * which takes minutes on a few hundred boxes with long edges; a bound
     * linear in the nodes costs a little straightness */
    if (sum.boxes > SG_DOT_QUICK_LAYOUT) fputs(" nslimit=2", f);
    char how[256];
    sg_dot_summary_text(&sum, how, sizeof how);
    if (opt->title || how[0]) {
        label_t t = {{0}, 0};
        if (opt->title) lbl_text(&t, opt->title, SG_DOT_NAME_MAX * 2);
        if (how[0]) lbl_printf(&t, "%s%s", opt->title ? "\n" : "", how);
        fputs(" labelloc=t label=", f);
        put_quoted(f, t.s);
    }
    fputs("];\n", f);
    fputs("  node [fontname=\"Helvetica\" fontsize=10 margin=\"0.12,0.05\" color=\"#333333\"];\n",
          f);
    fputs("  edge [fontname=\"Helvetica\" fontsize=9 arrowsize=0.7];\n", f);
    /* which lanes carry communication kernels only (none named when out of memory) */
    sg_comm_library_t *comm = NULL;
    if (g->root == g && g->n_streams) {
        comm = malloc(g->n_streams * sizeof *comm);
        if (comm) sg_graph_comm_streams(g, comm);
    }
    if (fo.level != SG_FOLD_NONE) {
        emit_folded(g, &fo, f, opt, comm);
    } else if (g->root == g) {
        rc = emit_lanes(g, f, opt, comm);
        if (rc == SG_OK) emit_edges(g, f, "", 2);
    } else {
        /* a body graph drawn alone: no lanes, its nodes as they are */
        emit_graph_nodes(g, f, opt, "", 0, 2);
    }
    fputs("}\n", f);
    free(comm);
    sg_dot_fold_free(&fo);
    if (rc == SG_OK && ferror(f)) rc = SG_EIO;
    return rc;
}
