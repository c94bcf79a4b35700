/* cmd_inspect.c: `sgcap inspect B`: what a bundle holds, per stream: node
 * types, events and the streams they connect, kernels, buffers and bytes,
 * code images; --json for machines. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_open.h"
#include "code/code_report.h"
#include "cli.h"
#include "graph/views.h"
#include "graph/plural.h"

static const char usage[] =
    "usage: sgcap inspect [--json] [--code [--arch N]] BUNDLE\n"
    "\n"
    "Summarize a captured graph bundle (a NAME.sgraph directory): node and edge\n"
    "counts by type and kind, per-stream node types, events and the streams each\n"
    "connects, kernels (short name, launches, geometry), buffers and their bytes,\n"
    "code images, the capture cross-check and the pass log.\n"
    "\n"
    "options:\n"
    "  --json     print the same summary as one JSON object on stdout\n"
    "  --code     per kernel instead: its code image, the SASS and PTX archs the\n"
    "             image holds, whether PTX usable on the device exists for that\n"
    "             kernel (what fusion and replay need) and, when not, why\n"
    "  --arch N   device arch for --code (90 = sm_90); default: the bundle's\n"
    "             device, else 90\n"
    "  -h, --help show this help\n"
    "\n"
    "exit codes: 0 ok, 2 bad usage or unreadable/malformed bundle\n";

/* Per-stream counters; index n_streams is the "explicit" lane. */
typedef struct {
    uint32_t by_type[SG_NODE_TYPE_COUNT];
    uint32_t total;
} lane_counts_t;

typedef struct {
    const char *name; /* mangled */
    uint32_t launches;
    const sg_kernel_t *first;
} kernel_row_t;

typedef struct {
    uint32_t edges;
    /* bitmaps would be overkill: streams joined by this event, as pairs */
    uint32_t n_pairs;
    uint32_t (*pairs)[2];
} event_row_t;

typedef struct {
    lane_counts_t *lanes; /* n_streams + 1 */
    uint32_t by_type[SG_NODE_TYPE_COUNT];
    uint32_t by_kind[SG_EDGE_KIND_COUNT];
    uint32_t nodes, edges, synthesized;
    kernel_row_t *kernels;
    uint32_t n_kernels;
    event_row_t *events;
    uint32_t *buffer_users; /* nodes accessing each buffer */
} summary_t;

static uint32_t lane_of(const sg_graph_t *g, uint32_t stream)
{
    return stream < g->n_streams ? stream : g->n_streams;
}

static int add_kernel(summary_t *s, const sg_kernel_t *k)
{
    const char *name = k->name ? k->name : "?";
    for (uint32_t i = 0; i < s->n_kernels; i++) {
        if (strcmp(s->kernels[i].name, name) == 0) {
            s->kernels[i].launches++;
            return 0;
        }
    }
    kernel_row_t *r = realloc(s->kernels, (s->n_kernels + 1) * sizeof *r);
    if (!r) return -1;
    s->kernels = r;
    r[s->n_kernels++] = (kernel_row_t){name, 1, k};
    return 0;
}

static int add_event_pair(event_row_t *e, uint32_t a, uint32_t b)
{
    e->edges++;
    for (uint32_t i = 0; i < e->n_pairs; i++)
        if (e->pairs[i][0] == a && e->pairs[i][1] == b) return 0;
    uint32_t(*p)[2] = realloc(e->pairs, (e->n_pairs + 1) * sizeof *p);
    if (!p) return -1;
    e->pairs = p;
    p[e->n_pairs][0] = a;
    p[e->n_pairs][1] = b;
    e->n_pairs++;
    return 0;
}

/* Count one graph level (bodies of child/conditional nodes are counted too). */
static int summarize(const sg_graph_t *root, const sg_graph_t *g, summary_t *s)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        s->nodes++;
        s->by_type[n->type]++;
        if (n->synthesized) s->synthesized++;
        lane_counts_t *l = &s->lanes[lane_of(root, n->stream)];
        l->by_type[n->type]++;
        l->total++;
        if (n->type == SG_NODE_KERNEL && add_kernel(s, &n->u.kernel)) return -1;
        for (uint32_t a = 0; a < n->n_accesses; a++)
            if (n->accesses[a].buffer < root->n_buffers) s->buffer_users[n->accesses[a].buffer]++;
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child && summarize(root, n->u.child, s))
            return -1;
        if (n->type == SG_NODE_CONDITIONAL)
            for (uint32_t b = 0; b < n->u.cond.n_bodies; b++)
                if (summarize(root, n->u.cond.bodies[b], s)) return -1;
    }
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = sg_graph_edge(g, i);
        if (!e) continue;
        s->edges++;
        s->by_kind[e->kind]++;
        if (e->kind == SG_EDGE_EVENT && e->event < root->n_events) {
            uint32_t a = lane_of(root, g->nodes[e->from].stream);
            uint32_t b = lane_of(root, g->nodes[e->to].stream);
            if (add_event_pair(&s->events[e->event], a, b)) return -1;
        }
    }
    return 0;
}

static void summary_free(summary_t *s, uint32_t n_events)
{
    free(s->lanes);
    free(s->kernels);
    if (s->events)
        for (uint32_t i = 0; i < n_events; i++) free(s->events[i].pairs);
    free(s->events);
    free(s->buffer_users);
}

static const char *lane_label(const sg_graph_t *g, uint32_t lane)
{
    return lane < g->n_streams ? g->streams[lane].label : "explicit";
}

static const char *human_bytes(uint64_t b, char *buf, size_t n)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRIu64 " B", b);
    else
        snprintf(buf, n, "%.1f %s", v, unit[u]);
    return buf;
}

static void print_type_list(FILE *f, const uint32_t *by_type)
{
    bool first = true;
    for (int t = 0; t < SG_NODE_TYPE_COUNT; t++) {
        if (!by_type[t]) continue;
        fprintf(f, "%s%s %u", first ? "" : ", ", sg_node_type_name((sg_node_type_t)t), by_type[t]);
        first = false;
    }
    if (first) fputs("none", f);
}

static void print_archs(FILE *f, const char *what, const uint32_t *a, uint32_t n)
{
    fprintf(f, " %s", what);
    if (!n) fputs(" none", f);
    for (uint32_t i = 0; i < n; i++) fprintf(f, "%ssm_%u", i ? "," : " ", a[i]);
}

/* Fused kernels (rewrite --passes fuse): the node, its stages, what it dropped. */
static void print_fusions(const sg_graph_t *g)
{
    if (!g->n_fusions) return;
    printf("fused:   %u %s\n", g->n_fusions, sg_plural(g->n_fusions, "kernel", "kernels"));
    for (uint32_t i = 0; i < g->n_fusions; i++) {
        const sg_fusion_t *f = &g->fusions[i];
        const sg_node_t *n = sg_graph_node(g, f->node);
        printf("  n%-5u %s: tier %u, %u %s, %d registers, %d spill bytes, %u %s dropped\n", f->node,
               n && n->u.kernel.name ? sg_cli_text(n->u.kernel.name) : "?", f->tier, f->n_stages,
               sg_plural(f->n_stages, "stage", "stages"), f->registers, f->spill_bytes,
               f->n_dropped, sg_plural(f->n_dropped, "write", "writes"));
        for (uint32_t k = 0; k < f->n_stages; k++) {
            char name[128];
            sg_kernel_short_name(f->stages[k].kernel.name, name, sizeof name);
            printf("    stage %-3u was n%-5u %s (parameters at +%u)\n", k, f->stages[k].node, sg_cli_text(name),
                   f->stages[k].param_base);
        }
        for (uint32_t k = 0; k < f->n_dropped; k++) {
            const sg_dropped_write_t *w = &f->dropped[k];
            printf("    dropped: stage %u's write of b%u [+%" PRIu64 ", %" PRIu64 " bytes): %s\n",
                   w->stage, w->buffer, w->offset, w->size, w->reason ? sg_cli_text(w->reason) : "");
        }
    }
}

static json_t *fusions_json(const sg_graph_t *g)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; arr && i < g->n_fusions; i++) {
        const sg_fusion_t *f = &g->fusions[i];
        json_t *stages = json_array();
        for (uint32_t k = 0; stages && k < f->n_stages; k++)
            json_array_append_new(stages, json_pack("{s:i, s:s, s:i}", "node", f->stages[k].node,
                                                    "kernel", f->stages[k].kernel.name,
                                                    "param_base", f->stages[k].param_base));
        json_array_append_new(arr, json_pack("{s:i, s:i, s:i, s:i, s:o, s:i}", "node", f->node, "tier",
                                             f->tier, "registers", f->registers, "spill_bytes",
                                             f->spill_bytes, "stages", stages, "writes_dropped",
                                             f->n_dropped));
    }
    return arr;
}

static void print_text(const sg_graph_t *g, const summary_t *s, const char *path)
{
    char b1[32], b2[32];
    printf("bundle:  %s\n", sg_cli_text(path));
    printf("program: %s (pid %" PRId64 "), graph #%u, capture mode %s, capture id %" PRIu64 "\n",
           g->program ? sg_cli_text(g->program) : "?", g->pid, g->sequence,
           g->capture_mode ? sg_cli_text(g->capture_mode) : "?", g->capture_id);
    if (g->device.name)
        printf("device:  %s (sm_%d%d), driver %d, %s\n", sg_cli_text(g->device.name),
               g->device.cc_major, g->device.cc_minor, g->device.driver_version,
               human_bytes(g->device.total_memory, b1, sizeof b1));
    printf("nodes:   %u (", s->nodes);
    print_type_list(stdout, s->by_type);
    printf(")\n");
    if (s->synthesized) printf("         %u synthesized by passes\n", s->synthesized);
    printf("edges:   %u (", s->edges);
    bool first = true;
    for (int k = 0; k < SG_EDGE_KIND_COUNT; k++) {
        if (!s->by_kind[k]) continue;
        printf("%s%s %u", first ? "" : ", ", sg_edge_kind_name((sg_edge_kind_t)k), s->by_kind[k]);
        first = false;
    }
    printf("%s)\n", first ? "none" : "");

    printf("streams: %u\n", g->n_streams);
    for (uint32_t l = 0; l <= g->n_streams; l++) {
        if (l == g->n_streams && s->lanes[l].total == 0) break;
        printf("  %-8s %4u %s: ", sg_cli_text(lane_label(g, l)), s->lanes[l].total,
               sg_plural(s->lanes[l].total, "node", "nodes"));
        print_type_list(stdout, s->lanes[l].by_type);
        putchar('\n');
    }
    printf("events:  %u\n", g->n_events);
    for (uint32_t e = 0; e < g->n_events; e++) {
        const event_row_t *r = &s->events[e];
        printf("  %-8s %4u %s", sg_cli_text(g->events[e].label), r->edges,
               sg_plural(r->edges, "edge", "edges"));
        for (uint32_t p = 0; p < r->n_pairs; p++)
            printf("%s%s -> %s", p ? ", " : ": ", sg_cli_text(lane_label(g, r->pairs[p][0])),
                   sg_cli_text(lane_label(g, r->pairs[p][1])));
        if (g->events[e].external) printf(" (external)");
        putchar('\n');
    }
    printf("kernels: %u %s of %u distinct %s\n", s->by_type[SG_NODE_KERNEL],
           sg_plural(s->by_type[SG_NODE_KERNEL], "launch", "launches"), s->n_kernels,
           sg_plural(s->n_kernels, "kernel", "kernels"));
    for (uint32_t i = 0; i < s->n_kernels; i++) {
        const sg_kernel_t *k = s->kernels[i].first;
        char shortname[96];
        sg_kernel_short_name(s->kernels[i].name, shortname, sizeof shortname);
        printf("  %-32s x%-4u grid (%u,%u,%u) block (%u,%u,%u) smem %u", sg_cli_text(shortname),
               s->kernels[i].launches, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
               k->block[2], k->shared_bytes);
        if (k->image != SG_NONE) printf(" image %u", k->image);
        putchar('\n');
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < g->n_buffers; i++) total += g->buffers[i].size;
    printf("buffers: %u, %s\n", g->n_buffers, human_bytes(total, b1, sizeof b1));
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        printf("  %-8s %-11s 0x%012" PRIx64 " %10s, %u accessing %s%s\n", sg_cli_text(b->label),
               sg_buffer_kind_name(b->kind), b->address, human_bytes(b->size, b2, sizeof b2),
               s->buffer_users[i], sg_plural(s->buffer_users[i], "node", "nodes"),
               b->before_file ? ", snapshots" : "");
    }
    printf("images:  %u\n", g->n_images);
    for (uint32_t i = 0; i < g->n_images; i++) {
        const sg_image_t *im = &g->images[i];
        printf("  %-3u %-7s %s %10s", i, sg_image_kind_name(im->kind), sg_cli_text(im->hash),
               human_bytes(im->size, b1, sizeof b1));
        print_archs(stdout, "ptx", im->ptx_archs, im->n_ptx_archs);
        print_archs(stdout, "sass", im->sass_archs, im->n_sass_archs);
        putchar('\n');
    }
    print_fusions(g);
    if (g->crosscheck_done)
        printf("check:   capture cross-check %s (CUDA reported %u %s, %u %s)%s%s\n",
               g->crosscheck_ok ? "ok" : "MISMATCH", g->cuda_node_count,
               sg_plural(g->cuda_node_count, "node", "nodes"), g->cuda_edge_count,
               sg_plural(g->cuda_edge_count, "edge", "edges"), g->crosscheck_note ? ": " : "",
               g->crosscheck_note ? sg_cli_text(g->crosscheck_note) : "");
    if (g->n_pass_log) {
        printf("passes:  %u\n", g->n_pass_log);
        for (uint32_t i = 0; i < g->n_pass_log; i++)
            printf("  %-16s %s\n", sg_cli_text(g->pass_log[i].pass),
                   sg_cli_text(g->pass_log[i].summary));
    }
}

static json_t *type_object(const uint32_t *by_type)
{
    json_t *o = json_object();
    for (int t = 0; t < SG_NODE_TYPE_COUNT; t++)
        if (by_type[t]) json_object_set_new(o, sg_node_type_name((sg_node_type_t)t),
                                            json_integer(by_type[t]));
    return o;
}

static json_t *arch_array(const uint32_t *a, uint32_t n)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < n; i++) json_array_append_new(arr, json_integer(a[i]));
    return arr;
}

static int print_json(const sg_graph_t *g, const summary_t *s, const char *path)
{
    json_t *o = json_object();
    json_object_set_new(o, "bundle", json_string(path));
    json_object_set_new(o, "program", g->program ? json_string(g->program) : json_null());
    json_object_set_new(o, "pid", json_integer(g->pid));
    json_object_set_new(o, "sequence", json_integer(g->sequence));
    json_object_set_new(o, "capture_mode",
                        g->capture_mode ? json_string(g->capture_mode) : json_null());
    if (g->device.name) {
        json_object_set_new(o, "device",
                            json_pack("{s:s, s:i, s:i, s:i}", "name", g->device.name, "cc_major",
                                      g->device.cc_major, "cc_minor", g->device.cc_minor,
                                      "driver_version", g->device.driver_version));
    }
    json_object_set_new(o, "nodes", json_integer(s->nodes));
    json_object_set_new(o, "nodes_by_type", type_object(s->by_type));
    json_object_set_new(o, "synthesized", json_integer(s->synthesized));
    json_object_set_new(o, "edges", json_integer(s->edges));
    json_t *kinds = json_object();
    for (int k = 0; k < SG_EDGE_KIND_COUNT; k++)
        if (s->by_kind[k])
            json_object_set_new(kinds, sg_edge_kind_name((sg_edge_kind_t)k),
                                json_integer(s->by_kind[k]));
    json_object_set_new(o, "edges_by_kind", kinds);
    json_t *streams = json_array();
    for (uint32_t l = 0; l <= g->n_streams; l++) {
        if (l == g->n_streams && s->lanes[l].total == 0) break;
        json_array_append_new(streams,
                              json_pack("{s:s, s:i, s:o}", "label", lane_label(g, l), "nodes",
                                        s->lanes[l].total, "by_type",
                                        type_object(s->lanes[l].by_type)));
    }
    json_object_set_new(o, "streams", streams);
    json_t *events = json_array();
    for (uint32_t e = 0; e < g->n_events; e++) {
        json_t *pairs = json_array();
        for (uint32_t p = 0; p < s->events[e].n_pairs; p++)
            json_array_append_new(pairs, json_pack("[s,s]", lane_label(g, s->events[e].pairs[p][0]),
                                                   lane_label(g, s->events[e].pairs[p][1])));
        json_array_append_new(events, json_pack("{s:s, s:i, s:b, s:o}", "label",
                                                g->events[e].label, "edges", s->events[e].edges,
                                                "external", g->events[e].external, "connects",
                                                pairs));
    }
    json_object_set_new(o, "events", events);
    json_t *kernels = json_array();
    for (uint32_t i = 0; i < s->n_kernels; i++) {
        const sg_kernel_t *k = s->kernels[i].first;
        char shortname[256];
        sg_kernel_short_name(s->kernels[i].name, shortname, sizeof shortname);
        json_array_append_new(
            kernels, json_pack("{s:s, s:s, s:i, s:[i,i,i], s:[i,i,i], s:i}", "name",
                               s->kernels[i].name, "short_name", shortname, "launches",
                               s->kernels[i].launches, "grid", k->grid[0], k->grid[1],
                               k->grid[2], "block", k->block[0], k->block[1], k->block[2],
                               "shared_bytes", k->shared_bytes));
    }
    json_object_set_new(o, "kernels", kernels);
    json_t *buffers = json_array();
    uint64_t total = 0;
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        char addr[32];
        snprintf(addr, sizeof addr, "0x%" PRIx64, b->address);
        total += b->size;
        json_array_append_new(buffers, json_pack("{s:s, s:s, s:s, s:I, s:i, s:b}", "label",
                                                 b->label, "kind", sg_buffer_kind_name(b->kind),
                                                 "address", addr, "size", (json_int_t)b->size,
                                                 "accessing_nodes", s->buffer_users[i],
                                                 "snapshots", b->before_file != NULL));
    }
    json_object_set_new(o, "buffers", buffers);
    json_object_set_new(o, "buffer_bytes", json_integer((json_int_t)total));
    json_t *images = json_array();
    for (uint32_t i = 0; i < g->n_images; i++) {
        const sg_image_t *im = &g->images[i];
        json_array_append_new(images,
                              json_pack("{s:i, s:s, s:s, s:I, s:o, s:o}", "id", i, "kind",
                                        sg_image_kind_name(im->kind), "hash", im->hash, "size",
                                        (json_int_t)im->size, "ptx_archs",
                                        arch_array(im->ptx_archs, im->n_ptx_archs), "sass_archs",
                                        arch_array(im->sass_archs, im->n_sass_archs)));
    }
    json_object_set_new(o, "images", images);
    if (g->n_fusions) json_object_set_new(o, "fusions", fusions_json(g));
    if (g->crosscheck_done)
        json_object_set_new(o, "crosscheck",
                            json_pack("{s:b, s:i, s:i}", "ok", g->crosscheck_ok, "cuda_nodes",
                                      g->cuda_node_count, "cuda_edges", g->cuda_edge_count));
    json_t *passes = json_array();
    for (uint32_t i = 0; i < g->n_pass_log; i++)
        json_array_append_new(passes, json_pack("{s:s, s:s}", "pass", g->pass_log[i].pass,
                                                "summary", g->pass_log[i].summary));
    json_object_set_new(o, "pass_log", passes);
    int rc = json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    putchar('\n');
    json_decref(o);
    return rc;
}

static const char *reason_text(const sg_code_report_row_t *r)
{
    return r->ptx_available ? "ok" : sg_ptx_reason_name(r->reason);
}

static int print_code(const sg_bundle_t *b, const char *path, uint32_t arch, bool json)
{
    const sg_graph_t *g = sg_bundle_graph(b);
    sg_code_report_options_t opt = {.device_arch = arch, .recompile_nvrtc = true, .files = b};
    sg_code_report_t rep = {0};
    int rc = sg_code_report(g, path, &opt, &rep);
    if (rc != SG_OK) {
        sg_cli_error("inspect", "code report failed: %s", sg_strerror(rc));
        return SG_EXIT_USAGE;
    }
    char sass[128], ptx[128];
    if (json) {
        json_t *rows = json_array();
        for (uint32_t i = 0; i < rep.n_rows; i++) {
            const sg_code_report_row_t *r = &rep.rows[i];
            char shortname[256];
            sg_kernel_short_name(r->kernel, shortname, sizeof shortname);
            json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:s, s:b, s:s, s:s}", "kernel", r->kernel,
                                  "short_name", shortname, "nodes", r->n_nodes, "sass",
                                  sg_arch_list_format(&r->sass, sass, sizeof sass), "ptx",
                                  sg_arch_list_format(&r->ptx, ptx, sizeof ptx), "ptx_available",
                                  r->ptx_available, "reason", reason_text(r), "detail", r->detail);
            json_object_set_new(o, "image", r->image == SG_NONE ? json_null()
                                                                : json_integer(r->image));
            json_object_set_new(o, "image_hash", json_string(r->image_hash));
            json_object_set_new(o, "ptx_target",
                                r->ptx_target ? json_integer(r->ptx_target) : json_null());
            json_array_append_new(rows, o);
        }
        json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:o}", "bundle", path, "device_arch",
                              rep.device_arch, "kernels", rep.n_rows, "ptx_available",
                              rep.n_ptx_available, "rows", rows);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        putchar('\n');
        json_decref(o);
    } else {
        printf("code of %s for sm_%u: %u %s, %u with usable PTX\n", sg_cli_text(path),
               rep.device_arch, rep.n_rows, sg_plural(rep.n_rows, "kernel", "kernels"),
               rep.n_ptx_available);
        for (uint32_t i = 0; i < rep.n_rows; i++) {
            const sg_code_report_row_t *r = &rep.rows[i];
            char shortname[96];
            sg_kernel_short_name(r->kernel, shortname, sizeof shortname);
            char img[16];
            if (r->image == SG_NONE)
                snprintf(img, sizeof img, "-");
            else
                snprintf(img, sizeof img, "%u", r->image);
            printf("  %-32s x%-3u image %-3s sass %-14s ptx %-14s PTX: %s\n",
                   sg_cli_text(shortname), r->n_nodes, img,
                   sg_arch_list_format(&r->sass, sass, sizeof sass),
                   sg_arch_list_format(&r->ptx, ptx, sizeof ptx), reason_text(r));
            if (r->detail[0]) printf("      %s\n", sg_cli_text(r->detail));
        }
    }
    sg_code_report_free(&rep);
    return SG_EXIT_OK;
}

static int run(int argc, char **argv)
{
    bool json = false, code = false;
    uint32_t arch = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--code") == 0) {
            code = true;
        } else if (strcmp(argv[i], "--arch") == 0) {
            char *end = NULL;
            unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || !end || *end || v < 30 || v > 1000) {
                sg_cli_error("inspect", "--arch needs a number like 90 (sm_90)");
                return SG_EXIT_USAGE;
            }
            arch = (uint32_t)v;
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            sg_cli_error("inspect", "unknown option '%s' (see sgcap inspect --help)", argv[i]);
            return SG_EXIT_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            sg_cli_error("inspect", "one bundle at a time ('%s' is extra)", argv[i]);
            return SG_EXIT_USAGE;
        }
    }
    if (!path) {
        sg_cli_error("inspect", "no bundle given (see sgcap inspect --help)");
        return SG_EXIT_USAGE;
    }
    if (code) {
        /* images are read through the open bundle */
        sg_bundle_t *b = sg_cli_open("inspect", path);
        if (!b) return SG_EXIT_USAGE;
        int rc = print_code(b, path, arch, json);
        sg_bundle_close(b);
        return rc;
    }
    sg_graph_t *g = sg_cli_open_bundle("inspect", path);
    if (!g) return SG_EXIT_USAGE;
    summary_t s = {0};
    s.lanes = calloc(g->n_streams + 1, sizeof *s.lanes);
    s.events = calloc(g->n_events + 1, sizeof *s.events);
    s.buffer_users = calloc(g->n_buffers + 1, sizeof *s.buffer_users);
    int exit_code = SG_EXIT_OK;
    if (!s.lanes || !s.events || !s.buffer_users || summarize(g, g, &s)) {
        sg_cli_error("inspect", "out of memory");
        exit_code = SG_EXIT_USAGE;
    } else if (json) {
        if (print_json(g, &s, path)) exit_code = SG_EXIT_USAGE;
    } else {
        print_text(g, &s, path);
    }
    summary_free(&s, g->n_events);
    sg_graph_destroy(g);
    return exit_code;
}

const sg_command_t sg_command_inspect = {
    "inspect", "summarize a bundle: streams, events, kernels, buffers, code", usage, run};
