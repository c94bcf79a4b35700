/* cmd_inspect.c: `sgcap inspect B`: what a bundle holds, per stream: node
 * types, events and the streams they connect, kernels, buffers and bytes,
 * code images; --code: per kernel, its code; --access: per kernel node,
 * what its code reads and writes (computed now when the bundle has no
 * facts); --json for machines. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_open.h"
#include "code/code_report.h"
#include "cli.h"
#include "graph/comm.h"
#include "graph/views.h"
#include "graph/plural.h"
#include "rewrite/pass.h"

static const char usage[] =
    "usage: sgcap inspect [--json] [--code [--arch N]] BUNDLE\n"
    "       sgcap inspect --access [--json] BUNDLE [NODE]\n"
    "\n"
    "Summarize a captured graph bundle (a NAME.sgraph directory): node and edge\n"
    "counts by type and kind, per-stream node types, events and the streams each\n"
    "connects, kernels (short name, launches, geometry), buffers and their bytes,\n"
    "code images, the capture cross-check and the pass log. The rank and device\n"
    "of a multi-GPU program's graph are shown as its origin; NCCL kernels are\n"
    "marked [NCCL], and a stream whose kernels are all NCCL's [comm].\n"
    "\n"
    "options:\n"
    "  --json     print the same summary as one JSON object on stdout\n"
    "  --code     per kernel instead: its code image, the SASS and PTX archs the\n"
    "             image holds, whether PTX usable on the device exists for that\n"
    "             kernel (what fusion and replay need) and, when not, why\n"
    "  --arch N   device arch for --code (90 = sm_90); default: the bundle's\n"
    "             device, else 90\n"
    "  --access   per kernel node (NODE: only that node id of the root graph):\n"
    "             where its facts come from (PTX, SASS via nvdisasm, or unknown\n"
    "             and why), the parameter words its code uses as addresses, every\n"
    "             access site (load, store, atomic, call) with its pointer word,\n"
    "             status and byte range (dense, exact or a bound), and the node's\n"
    "             accesses; then the share of kernel nodes whose every access is\n"
    "             known. The bundle's facts (sgcap rewrite stores them), else\n"
    "             computed now from its code. --json: schema sgcap-access\n"
    "             (docs/SCHEMAS.md)\n"
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
    sg_comm_library_t *comm; /* per stream: its kernels are all NCCL's (graph/comm.h) */
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
    free(s->comm);
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

/* Which rank and which GPU of a multi-GPU program recorded it (docs/NCCL.md). */
static void print_origin(const sg_graph_t *g)
{
    if (g->rank < 0 && g->device.ordinal < 0) return;
    printf("origin: ");
    if (g->rank >= 0) printf(" rank %d", (int)g->rank);
    if (g->device.ordinal >= 0)
        printf("%s device %d", g->rank >= 0 ? "," : "", (int)g->device.ordinal);
    putchar('\n');
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
    print_origin(g);
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
        if (l < g->n_streams && s->comm[l] != SG_COMM_NONE)
            printf("  [comm: %s kernels only]", sg_comm_library_name(s->comm[l]));
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
        sg_comm_library_t lib = sg_kernel_comm_library(s->kernels[i].name);
        if (lib != SG_COMM_NONE) printf(" [%s]", sg_comm_library_name(lib));
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
    if (g->rank >= 0) json_object_set_new(o, "rank", json_integer(g->rank));
    if (g->device.ordinal >= 0) json_object_set_new(o, "device_ordinal", json_integer(g->device.ordinal));
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
        json_t *st = json_pack("{s:s, s:i, s:o}", "label", lane_label(g, l), "nodes",
                               s->lanes[l].total, "by_type", type_object(s->lanes[l].by_type));
        if (st && l < g->n_streams && s->comm[l] != SG_COMM_NONE)
            json_object_set_new(st, "comm", json_string(sg_comm_library_name(s->comm[l])));
        json_array_append_new(streams, st);
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
        json_t *kr = json_pack("{s:s, s:s, s:i, s:[i,i,i], s:[i,i,i], s:i}", "name",
                               s->kernels[i].name, "short_name", shortname, "launches",
                               s->kernels[i].launches, "grid", k->grid[0], k->grid[1],
                               k->grid[2], "block", k->block[0], k->block[1], k->block[2],
                               "shared_bytes", k->shared_bytes);
        sg_comm_library_t lib = sg_kernel_comm_library(s->kernels[i].name);
        if (kr && lib != SG_COMM_NONE)
            json_object_set_new(kr, "library", json_string(sg_comm_library_name(lib)));
        json_array_append_new(kernels, kr);
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

/* ---- --access ------------------------------------------------------------------------ */

#define SG_ACCESS_SCHEMA "sgcap-access"
#define SG_ACCESS_SCHEMA_VERSION 1

typedef struct {
    uint32_t kernels, all_known, complete, by_source[SG_FACTS_SOURCE_COUNT];
} access_tally_t;

static void range_text(const sg_graph_t *g, uint32_t buffer, uint64_t off, uint64_t size,
                       char *buf, size_t n)
{
    const sg_buffer_t *b = sg_graph_buffer(g, buffer);
    if (!b) {
        snprintf(buf, n, "[0x%" PRIx64 ", +%" PRIu64 ")", off, size);
        return;
    }
    snprintf(buf, n, "%s [0x%" PRIx64 ", 0x%" PRIx64 ")", sg_cli_text(b->label), b->address + off,
             b->address + off + size);
}

static void access_node_text(const sg_graph_t *g, const char *path, const sg_node_t *x)
{
    const sg_kernel_t *k = &x->u.kernel;
    const sg_facts_t *f = &k->facts;
    char nm[256];
    sg_kernel_short_name(k->name ? k->name : "?", nm, sizeof nm);
    printf("%s kernel %s: %s%s%s", path, sg_cli_text(nm), sg_facts_source_name(f->source),
           f->all_known ? ", every access known" : "", f->complete ? ", addresses complete" : "");
    printf("; pointer words:");
    for (uint32_t i = 0; i < f->n_pointers; i++) printf(" @%u", f->pointers[i]);
    if (!f->n_pointers) printf(" none");
    putchar('\n');
    if (f->reason) printf("    why: %s\n", sg_cli_text(f->reason));
    char r[160];
    for (uint32_t i = 0; i < f->n_sites; i++) {
        const sg_site_t *st = &f->sites[i];
        char at[24] = "";
        if (st->param >= 0) snprintf(at, sizeof at, " @%d", st->param);
        printf("    site %-3u %-6s line %-5u%-6s %-7s", i, sg_site_kind_name(st->kind), st->line, at,
               sg_site_status_name(st->status));
        if (st->status != SG_SITE_NEVER && st->buffer != SG_NONE) {
            range_text(g, st->buffer, st->offset, st->size, r, sizeof r);
            printf(" %s %s", sg_range_kind_name(st->range), r);
        }
        if (st->reason) printf(": %s", sg_cli_text(st->reason));
        putchar('\n');
    }
    for (uint32_t i = 0; i < x->n_accesses; i++) {
        const sg_access_t *a = &x->accesses[i];
        range_text(g, a->buffer, a->offset, a->size, r, sizeof r);
        printf("    access %-9s %-5s %s\n", sg_access_mode_name(a->mode), sg_range_kind_name(a->range),
               r);
    }
}

static json_t *access_node_json(const sg_graph_t *g, const sg_graph_t *level, sg_node_id_t id,
                                const char *path)
{
    const sg_node_t *x = sg_graph_node(level, id);
    const sg_facts_t *f = &x->u.kernel.facts;
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:b, s:b}", "path", path, "id", (json_int_t)id,
                          "kernel", x->u.kernel.name ? x->u.kernel.name : "", "source",
                          sg_facts_source_name(f->source), "all_known", f->all_known, "complete",
                          f->complete);
    if (!o) return NULL;
    json_object_set_new(o, "reason", f->reason ? json_string(f->reason) : json_null());
    json_t *ptrs = json_array(), *sites = json_array(), *accs = json_array();
    for (uint32_t i = 0; i < f->n_pointers; i++) json_array_append_new(ptrs, json_integer(f->pointers[i]));
    char lo[24], hi[24];
    for (uint32_t i = 0; i < f->n_sites; i++) {
        const sg_site_t *st = &f->sites[i];
        const sg_buffer_t *b = sg_graph_buffer(g, st->buffer);
        json_t *so = json_pack("{s:s, s:s, s:s, s:I}", "kind", sg_site_kind_name(st->kind), "status",
                               sg_site_status_name(st->status), "range",
                               sg_range_kind_name(st->range), "line", (json_int_t)st->line);
        json_object_set_new(so, "param", st->param >= 0 ? json_integer(st->param) : json_null());
        json_object_set_new(so, "buffer", b ? json_string(b->label) : json_null());
        if (b && st->status != SG_SITE_NEVER) {
            snprintf(lo, sizeof lo, "0x%" PRIx64, b->address + st->offset);
            snprintf(hi, sizeof hi, "0x%" PRIx64, b->address + st->offset + st->size);
            json_object_set_new(so, "lo", json_string(lo));
            json_object_set_new(so, "hi", json_string(hi));
        }
        json_object_set_new(so, "reason", st->reason ? json_string(st->reason) : json_null());
        json_array_append_new(sites, so);
    }
    for (uint32_t i = 0; i < x->n_accesses; i++) {
        const sg_access_t *a = &x->accesses[i];
        const sg_buffer_t *b = sg_graph_buffer(g, a->buffer);
        snprintf(lo, sizeof lo, "0x%" PRIx64, (b ? b->address : 0) + a->offset);
        snprintf(hi, sizeof hi, "0x%" PRIx64, (b ? b->address : 0) + a->offset + a->size);
        json_array_append_new(accs, json_pack("{s:s, s:s, s:s, s:s, s:s}", "buffer",
                                              b ? b->label : "?", "mode",
                                              sg_access_mode_name(a->mode), "range",
                                              sg_range_kind_name(a->range), "lo", lo, "hi", hi));
    }
    json_object_set_new(o, "pointers", ptrs);
    json_object_set_new(o, "sites", sites);
    json_object_set_new(o, "accesses", accs);
    return o;
}

/* Every kernel node of level (bodies too, their paths "n4/n0"), or only
 * root node `only`. */
static void access_walk(const sg_graph_t *g, const sg_graph_t *level, const char *prefix,
                        uint32_t only, int depth, json_t *arr, access_tally_t *t)
{
    for (uint32_t i = 0; i < level->n_nodes && depth <= 16; i++) {
        const sg_node_t *x = sg_graph_node(level, i);
        if (!x || (only != SG_NONE && i != only)) continue;
        char path[256];
        snprintf(path, sizeof path, "%sn%u", prefix, i);
        if (x->type == SG_NODE_KERNEL) {
            t->kernels++;
            t->all_known += x->u.kernel.facts.all_known;
            t->complete += x->u.kernel.facts.complete;
            t->by_source[x->u.kernel.facts.source]++;
            if (arr)
                json_array_append_new(arr, access_node_json(g, level, i, path));
            else
                access_node_text(g, path, x);
        }
        if (only != SG_NONE) continue;
        char sub[300];
        snprintf(sub, sizeof sub, "%s/", path);
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child)
            access_walk(g, x->u.child, sub, SG_NONE, depth + 1, arr, t);
        for (uint32_t b = 0; x->type == SG_NODE_CONDITIONAL && b < x->u.cond.n_bodies; b++)
            access_walk(g, x->u.cond.bodies[b], sub, SG_NONE, depth + 1, arr, t);
    }
}

static int print_access(sg_bundle_t *b, const char *path, const char *node, bool json)
{
    sg_graph_t *g = sg_bundle_graph(b);
    uint32_t only = SG_NONE;
    if (node) {
        char *end = NULL;
        const char *d = node[0] == 'n' ? node + 1 : node;
        unsigned long v = strtoul(d, &end, 10);
        if (!*d || *end || v >= g->n_nodes || !sg_graph_node(g, (sg_node_id_t)v)) {
            sg_cli_error("inspect", "%s: no node '%s' in the root graph", sg_cli_text(path),
                         sg_cli_text(node));
            return SG_EXIT_USAGE;
        }
        only = (uint32_t)v;
        if (sg_graph_node(g, only)->type != SG_NODE_KERNEL) {
            sg_cli_error("inspect", "%s: node n%u is a %s node, not a kernel", sg_cli_text(path), only,
                         sg_node_type_name(sg_graph_node(g, only)->type));
            return SG_EXIT_USAGE;
        }
    }
    bool ran = false;
    char how[512] = "";
    int rc = sg_rewrite_ensure_access(g, b, &ran, how, sizeof how);
    if (rc) {
        sg_cli_error("inspect", "%s: access analysis failed: %s", sg_cli_text(path), sg_strerror(rc));
        return SG_EXIT_USAGE;
    }
    access_tally_t t = {0};
    if (json) {
        json_t *arr = json_array();
        access_walk(g, g, "", only, 0, arr, &t);
        json_t *o = json_pack(
            "{s:s, s:i, s:s, s:{s:s, s:s}, s:o, s:i, s:i, s:i, s:{s:i, s:i, s:i}}", "schema",
            SG_ACCESS_SCHEMA, "schema_version", SG_ACCESS_SCHEMA_VERSION, "bundle", path, "analysis",
            "facts", ran ? "computed now" : "from the bundle", "summary", how, "nodes", arr,
            "kernel_nodes", t.kernels, "all_known", t.all_known, "complete", t.complete, "by_source",
            "ptx", t.by_source[SG_FACTS_PTX], "sass", t.by_source[SG_FACTS_SASS], "unknown",
            t.by_source[SG_FACTS_UNKNOWN]);
        if (!o || json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
            json_decref(o);
            sg_cli_error("inspect", "out of memory");
            return SG_EXIT_USAGE;
        }
        putchar('\n');
        json_decref(o);
        return SG_EXIT_OK;
    }
    printf("access facts of %s (%s)\n", sg_cli_text(path),
           ran ? "computed now: the bundle has none" : "from the bundle");
    access_walk(g, g, "", only, 0, NULL, &t);
    printf("%u kernel %s: %u with every access known (%.1f%%), %u with complete addresses; "
           "code from PTX %u, SASS %u, none %u\n",
           t.kernels, sg_plural(t.kernels, "node", "nodes"), t.all_known,
           t.kernels ? 100.0 * t.all_known / t.kernels : 100.0, t.complete, t.by_source[SG_FACTS_PTX],
           t.by_source[SG_FACTS_SASS], t.by_source[SG_FACTS_UNKNOWN]);
    return SG_EXIT_OK;
}

static int run(int argc, char **argv)
{
    bool json = false, code = false, access = false;
    const char *node = NULL;
    uint32_t arch = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--code") == 0) {
            code = true;
        } else if (strcmp(argv[i], "--access") == 0) {
            access = true;
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
        } else if (!node) {
            node = argv[i];
        } else {
            sg_cli_error("inspect", "one bundle at a time ('%s' is extra)", argv[i]);
            return SG_EXIT_USAGE;
        }
    }
    if (!path) {
        sg_cli_error("inspect", "no bundle given (see sgcap inspect --help)");
        return SG_EXIT_USAGE;
    }
    if (node && !access) {
        sg_cli_error("inspect", "one bundle at a time ('%s' is extra)", node);
        return SG_EXIT_USAGE;
    }
    if (access && code) {
        sg_cli_error("inspect", "--access and --code are two views: one at a time");
        return SG_EXIT_USAGE;
    }
    if (access) {
        sg_bundle_t *b = sg_cli_open("inspect", path);
        if (!b) return SG_EXIT_USAGE;
        int rc = print_access(b, path, node, json);
        sg_bundle_close(b);
        return rc;
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
    s.comm = calloc(g->n_streams + 1, sizeof *s.comm);
    if (s.comm) sg_graph_comm_streams(g, s.comm);
    int exit_code = SG_EXIT_OK;
    if (!s.lanes || !s.events || !s.buffer_users || !s.comm || summarize(g, g, &s)) {
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
