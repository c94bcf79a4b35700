/* cmd_replay.c: `sgcap replay B`: rebuild a captured graph in this fresh
 * process, run it, and compare, time or profile it (docs/REPLAY.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "bundle_open.h"
#include "cli.h"
#include "replay/driver.h"
#include "replay/replay.h"
#include "rewrite/pass.h"
#include "graph/plural.h"

static const char usage[] =
    "usage: sgcap replay [OPTIONS] BUNDLE\n"
    "\n"
    "Rebuild the captured graph of BUNDLE as a real CUDA graph in this process:\n"
    "memory at the recorded virtual addresses (relocated when they are taken),\n"
    "code from the bundle's images, fresh events. Restore the \"before\" snapshots,\n"
    "launch once, and then validate, time or profile it.\n"
    "\n"
    "options:\n"
    "  --validate          compare every buffer that has an \"after\" snapshot with\n"
    "                      what the replay wrote, bit for bit\n"
    "  --tolerance ulp=N   with --validate: compare as float32 values, N ULPs apart\n"
    "                      at most (every compared buffer is read as float32; NaN\n"
    "                      equals NaN, +0 equals -0, an infinity only itself)\n"
    "  --bench N           time N launches after a warm-up, each between its own\n"
    "                      pair of CUDA events; print the median us per launch\n"
    "  --warmup N          untimed launches before timing (default 20)\n"
    "  --vs B2             time B2 side by side with BUNDLE (alternating chunks of\n"
    "                      launches in one process) and print the ratio B2/BUNDLE\n"
    "  --profile           time every node on the GPU (CUPTI) and store the\n"
    "                      durations in BUNDLE (rewritten in place, atomically)\n"
    "  --profile-launches N  profiled launches, median per node (default 3)\n"
    "  --trace FILE        write the last profiled launch as a Chrome/Perfetto\n"
    "                      trace, one track per captured stream\n"
    "  --relocate          do not ask for the recorded addresses: place memory\n"
    "                      anywhere and relocate pointers (tests the fallback)\n"
    "  --host-nodes skip   replay a graph with host callbacks without them (empty\n"
    "                      nodes in their place); --validate then compares only what\n"
    "                      no callback can have influenced, and says so\n"
    "  --no-reserve        do not reserve the recorded address ranges before CUDA\n"
    "                      loads (nor re-run without address randomization when\n"
    "                      one is already taken)\n"
    "  --force             replay on another GPU model, compute capability or\n"
    "                      driver version than the bundle was captured with\n"
    "  --device N          GPU ordinal (default 0)\n"
    "  --timings           print how long reading, placing, loading, building,\n"
    "                      instantiating and uploading took\n"
    "  -v, --verbose       every warning and the full relocation report\n"
    "  -h, --help          show this help\n"
    "\n"
    "A graph that can only run inside its program (host callbacks, opaque nodes,\n"
    "kernels whose code was not captured, NCCL) is reported as in-process only,\n"
    "with the reason for each node, and exits 1.\n"
    "\n"
    "exit codes: 0 ran (and, with --validate, every compared buffer matched);\n"
    "1 a validation mismatch, an in-process-only graph, or a failure on the GPU;\n"
    "2 bad usage or bad input: a missing or malformed bundle, code image or\n"
    "snapshot, or another GPU model, compute capability or driver without --force;\n"
    "3 --validate compared nothing (no snapshots, only graph-internal memory, the\n"
    "snapshot cap, or a graph that touches no memory): the reason is printed\n";

#define CMD "replay"

/* --validate ran but had nothing to compare: not a pass, not a mismatch. */
#define SG_EXIT_NOTHING_COMPARED 3

typedef struct {
    const char *bundle, *vs, *trace;
    bool validate, profile, relocate, force, timings, verbose, no_reserve, skip_host;
    sg_compare_options_t cmp;
    uint32_t bench, warmup, profile_launches;
    int device;
} args_t;

static bool parse_u32(const char *s, uint32_t *out, uint32_t min, uint32_t max)
{
    if (!s || !*s || *s == '-') return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max) return false;
    *out = (uint32_t)v;
    return true;
}

static int parse_args(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof *a);
    a->warmup = 20;
    a->profile_launches = 3;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint32_t n;
        if (!strcmp(o, "--validate")) {
            a->validate = true;
        } else if (!strcmp(o, "--tolerance")) {
            if (!v || strncmp(v, "ulp=", 4) || !parse_u32(v + 4, &n, 0, 1u << 30)) {
                sg_cli_error(CMD, "--tolerance wants ulp=N (N a whole number of ULPs)");
                return -1;
            }
            a->cmp.float32 = true;
            a->cmp.ulp = n;
            i++;
        } else if (!strcmp(o, "--bench") || !strcmp(o, "--warmup") ||
                   !strcmp(o, "--profile-launches") || !strcmp(o, "--device")) {
            uint32_t lo = strcmp(o, "--warmup") && strcmp(o, "--device") ? 1 : 0;
            if (!parse_u32(v, &n, lo, 10000000)) {
                sg_cli_error(CMD, "%s wants a number%s", o, lo ? " of at least 1" : "");
                return -1;
            }
            if (!strcmp(o, "--bench"))
                a->bench = n;
            else if (!strcmp(o, "--warmup"))
                a->warmup = n;
            else if (!strcmp(o, "--device"))
                a->device = (int)n;
            else
                a->profile_launches = n;
            i++;
        } else if (!strcmp(o, "--vs") || !strcmp(o, "--trace")) {
            if (!v) {
                sg_cli_error(CMD, "%s wants a %s", o, strcmp(o, "--vs") ? "file name" : "bundle");
                return -1;
            }
            if (!strcmp(o, "--vs"))
                a->vs = v;
            else
                a->trace = v;
            i++;
        } else if (!strcmp(o, "--profile")) {
            a->profile = true;
        } else if (!strcmp(o, "--relocate")) {
            a->relocate = true;
        } else if (!strcmp(o, "--no-reserve")) {
            a->no_reserve = true;
        } else if (!strcmp(o, "--host-nodes")) {
            if (!v || (strcmp(v, "skip") && strcmp(v, "fail"))) {
                sg_cli_error(CMD, "--host-nodes wants skip or fail (fail: in-process only, the "
                                  "default)");
                return -1;
            }
            a->skip_host = !strcmp(v, "skip");
            i++;
        } else if (!strcmp(o, "--force")) {
            a->force = true;
        } else if (!strcmp(o, "--timings")) {
            a->timings = true;
        } else if (!strcmp(o, "-v") || !strcmp(o, "--verbose")) {
            a->verbose = true;
        } else if (o[0] == '-' && o[1]) {
            sg_cli_error(CMD, "unknown option '%s' (see sgcap replay --help)", o);
            return -1;
        } else if (!a->bundle) {
            a->bundle = o;
        } else {
            sg_cli_error(CMD, "one bundle at a time ('%s' is extra; --vs B2 compares two)", o);
            return -1;
        }
    }
    if (!a->bundle) {
        sg_cli_error(CMD, "no bundle given (see sgcap replay --help)");
        return -1;
    }
    if (a->cmp.float32 && !a->validate) {
        sg_cli_error(CMD, "--tolerance only makes sense with --validate");
        return -1;
    }
    if (a->vs && !a->bench) a->bench = 1000;
    return 0;
}

/* Bundle problems are bad input (2); everything the GPU or the graph did is
 * a finding (1). */
static int exit_for(int rc)
{
    switch (rc) {
    case SG_ENOENT:
    case SG_EFORMAT:
    case SG_ELIMIT:
    case SG_EIO:
        return SG_EXIT_USAGE;
    default:
        return SG_EXIT_FINDING;
    }
}

static void print_plan(const char *path, const sg_graph_t *g, const sg_replay_plan_t *p,
                       bool verbose)
{
    printf("replay: %s: %u %s (", path, p->nodes, sg_plural(p->nodes, "node", "nodes"));
    bool first = true;
    for (int t = 0; t < SG_NODE_TYPE_COUNT; t++) {
        if (!p->nodes_by_type[t]) continue;
        printf("%s%s %u", first ? "" : ", ", sg_node_type_name((sg_node_type_t)t),
               p->nodes_by_type[t]);
        first = false;
    }
    printf(") on %u %s, %u %s, %u code %s\n", g->n_streams,
           sg_plural(g->n_streams, "stream", "streams"), g->n_buffers,
           sg_plural(g->n_buffers, "buffer", "buffers"), g->n_images,
           sg_plural(g->n_images, "image", "images"));
    uint32_t shown = verbose ? p->n_warnings : (p->n_warnings < 8 ? p->n_warnings : 8);
    for (uint32_t i = 0; i < shown; i++)
        fprintf(stderr, "warning: %s (%s): %s\n", sg_cli_text(p->warnings[i].node),
                sg_node_type_name(p->warnings[i].type), sg_cli_text(p->warnings[i].reason));
    if (shown < p->n_warnings)
        fprintf(stderr, "warning: ... %u more (-v shows all)\n", p->n_warnings - shown);
}

static bool plan_or_report(const char *path, const sg_graph_t *g, sg_replay_plan_t *p, bool verbose,
                           bool skip_host, int *exit_code)
{
    int rc = sg_replay_plan_with(g, skip_host, p);
    if (rc) {
        sg_cli_error(CMD, "%s: %s", path, sg_strerror(rc));
        *exit_code = SG_EXIT_USAGE;
        return false;
    }
    print_plan(path, g, p, verbose);
    if (!p->n_blockers) return true;
    printf("replay: %s: in-process only: this graph cannot run outside the program that "
           "captured it:\n",
           path);
    for (uint32_t i = 0; i < p->n_blockers; i++)
        printf("  %-12s %-12s %s\n", sg_cli_text(p->blockers[i].node),
               sg_node_type_name(p->blockers[i].type), sg_cli_text(p->blockers[i].reason));
    *exit_code = SG_EXIT_FINDING;
    return false;
}

static const char *bytes_text(uint64_t b, char *buf, size_t n)
{
    if (b >= (1ull << 20))
        snprintf(buf, n, "%.1f MiB", b / 1048576.0);
    else if (b >= 1024)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, n, "%" PRIu64 " B", b);
    return buf;
}

static void ulp_text(uint64_t ulp, char *buf, size_t n)
{
    if (ulp == SG_ULP_INF)
        snprintf(buf, n, "NaN/inf against a number");
    else
        snprintf(buf, n, "%" PRIu64 " ULP", ulp);
}

/* Prints the report; returns true when every compared buffer matched. */
static bool print_validation(const sg_graph_t *g, const sg_buffer_check_t *c, uint32_t n,
                             const sg_compare_options_t *o)
{
    uint32_t compared = 0, matched = 0, skipped = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_buffer_check_t *x = &c[i];
        const sg_buffer_t *b = &g->buffers[x->buffer];
        char sz[32], u[48];
        printf("validate: %-6s %10s  ", sg_cli_text(b->label), bytes_text(b->size, sz, sizeof sz));
        if (x->status == SG_CHECK_SKIPPED) {
            skipped++;
            printf("not compared: %s\n", sg_cli_text(x->note));
            continue;
        }
        compared++;
        const sg_compare_result_t *r = &x->cmp;
        if (x->status == SG_CHECK_MATCH) {
            matched++;
            if (o->float32 && r->differing)
                printf("match within %u ULP (%" PRIu64 " of %" PRIu64 " elements differ, max %s, "
                       "max |diff| %.9g)",
                       o->ulp, r->differing, r->elements, (ulp_text(r->max_ulp, u, sizeof u), u),
                       r->max_abs);
            else
                printf("match (%s)", o->float32 ? "as float32" : "bit for bit");
        } else if (o->float32) {
            ulp_text(r->max_ulp, u, sizeof u);
            printf("MISMATCH: %" PRIu64 " of %" PRIu64 " float32 elements beyond %u ULP, first "
                   "at element %" PRIu64 "; max %s, max |diff| %.9g",
                   r->mismatches, r->elements, o->ulp, r->first_mismatch, u, r->max_abs);
        } else {
            printf("MISMATCH: %" PRIu64 " of %" PRIu64 " bytes differ, first at byte %" PRIu64,
                   r->mismatches, r->bytes, r->first_mismatch);
            if (r->as_float) {
                ulp_text(r->max_ulp, u, sizeof u);
                printf(" (float32 element %" PRIu64 "); as float32: max %s, max |diff| %.9g",
                       r->first_mismatch / 4, u, r->max_abs);
            }
        }
        if (x->note[0]) printf(" [%s]", sg_cli_text(x->note));
        putchar('\n');
    }
    printf("validate: %u %s compared: %u match, %u MISMATCH; %u not compared\n", compared,
           sg_plural(compared, "buffer", "buffers"), matched, compared - matched, skipped);
    return matched == compared;
}

/* A mismatch has two kinds of cause; a second replay tells them apart. */
static void explain_mismatch(sg_replay_t *r, const sg_graph_t *g)
{
    char err[1024];
    sg_repeat_result_t rep;
    if (sg_replay_repeat(r, &rep, err, sizeof err) != SG_OK) {
        printf("validate: could not replay a second time to find out why: %s\n", err);
        return;
    }
    if (rep.differing) {
        char u[48];
        ulp_text(rep.max_ulp, u, sizeof u);
        printf("validate: why: the graph is not deterministic: a second replay differs from the "
               "first in %u of %u %s (%s first; %" PRIu64 " bytes; as float32 at most %s): "
               "floating-point atomics, split reductions or a race; no bit-exact comparison can "
               "pass (compare with --tolerance ulp=N)\n",
               rep.differing, rep.compared, sg_plural(rep.compared, "buffer", "buffers"),
               g->buffers[rep.first_buffer].label, rep.bytes_differing, u);
    } else {
        printf("validate: why: two replays agree with each other (%u %s), so the replay is "
               "repeatable but not what the program computed: the graph depends on something "
               "the bundle does not hold (memory no snapshot covered, module state, work outside "
               "the graph)\n",
               rep.compared, sg_plural(rep.compared, "buffer", "buffers"));
    }
}

/* Nothing compared is not a pass: say why, from what each buffer lacks. */
static void print_nothing_compared(const sg_graph_t *g, const sg_buffer_check_t *c, uint32_t n)
{
    uint32_t internal = 0, capped = 0, none = 0, other = 0, host = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_buffer_t *b = &g->buffers[c[i].buffer];
        const char *note = b->snapshot_note ? b->snapshot_note : "";
        if (strstr(c[i].note, "--host-nodes skip"))
            host++;
        else if (b->kind == SG_BUFFER_GRAPH_ALLOC &&
                 (strstr(c[i].note, "inside the graph") || strstr(note, "freed by the graph")))
            internal++;
        else if (strstr(note, "SGCAP_SNAPSHOT_MAX_BYTES"))
            capped++;
        else if (!b->after_file && !b->snapshot_note)
            none++;
        else
            other++;
    }
    printf("validate: NOTHING COMPARED (exit %d): ", SG_EXIT_NOTHING_COMPARED);
    if (n == 0) {
        printf("the graph touches no memory sgcap knows of (%u %s)\n", sg_graph_node_count(g),
               sg_plural(sg_graph_node_count(g), "node", "nodes"));
        return;
    }
    const char *sep = "";
    if (none) {
        printf("%s%u buffer%s without snapshots (capture with SGCAP_SNAPSHOT=1, or sgcap run "
               "--snapshot)",
               sep, none, none == 1 ? "" : "s");
        sep = "; ";
    }
    if (internal) {
        printf("%s%u buffer%s only graph-internal memory (allocated and freed inside the graph: "
               "nothing outlives a launch)",
               sep, internal, internal == 1 ? " is" : "s are");
        sep = "; ";
    }
    if (capped) {
        printf("%s%u buffer%s over the snapshot cap (SGCAP_SNAPSHOT_MAX_BYTES)", sep, capped,
               capped == 1 ? "" : "s");
        sep = "; ";
    }
    if (host) {
        printf("%s%u buffer%s may depend on the host callbacks left out (--host-nodes skip)", sep,
               host, host == 1 ? "" : "s");
        sep = "; ";
    }
    if (other)
        printf("%s%u buffer%s not compared for other reasons (above)", sep, other,
               other == 1 ? "" : "s");
    putchar('\n');
}

/* Store g (its measured durations) back into the bundle it came from,
 * atomically, with the bundle's own files carried over. */
static int rewrite_bundle(const sg_bundle_t *in, sg_graph_t *g)
{
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    int rc = sg_bundle_write_derived(in, g, sg_bundle_path(in), NULL, 0,
                                     SG_BUNDLE_OVERWRITE | SG_BUNDLE_REPLACE_SOURCE, NULL, &diag);
    if (rc) {
        char buf[1024];
        sg_cli_error(CMD, "rewriting %s: %s", sg_bundle_path(in),
                     sg_diag_format(&diag, buf, sizeof buf));
    }
    return rc;
}

static int cmp_trace(const void *pa, const void *pb)
{
    const sg_trace_event_t *a = pa, *b = pb;
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static int do_profile(const args_t *a, sg_replay_t *r, const sg_bundle_t *in, sg_graph_t *g)
{
    char err[1024];
    sg_trace_event_t *ev = NULL;
    uint32_t n_ev = 0, unmatched = 0, by_name = 0;
    int rc = sg_replay_profile(r, g, a->profile_launches, &ev, &n_ev, &unmatched, &by_name, err,
                               sizeof err);
    if (rc) {
        sg_cli_error(CMD, "profiling: %s", err);
        return exit_for(rc);
    }
    if (n_ev == 0) {
        sg_cli_error(CMD,
                     "profiling: CUPTI delivered no activity record of the graph's nodes "
                     "(%u %s matched no node)",
                     unmatched, sg_plural(unmatched, "record", "records"));
        free(ev);
        return SG_EXIT_FINDING;
    }
    qsort(ev, n_ev, sizeof *ev, cmp_trace);
    uint64_t t0 = UINT64_MAX;
    for (uint32_t i = 0; i < n_ev; i++)
        if (ev[i].start_ns < t0) t0 = ev[i].start_ns;
    printf("profile: %u node %s in the last of %u %s%s\n", n_ev,
           sg_plural(n_ev, "execution", "executions"), a->profile_launches,
           sg_plural(a->profile_launches, "launch", "launches"),
           unmatched ? "" : ", every record matched to a node");
    if (unmatched)
        printf("profile: warning: %u activity %s matched no node of the bundle\n", unmatched,
               sg_plural(unmatched, "record", "records"));
    uint32_t shown = a->verbose || n_ev <= 40 ? n_ev : 40;
    for (uint32_t i = 0; i < shown; i++) {
        const sg_stream_t *s =
            ev[i].stream != SG_STREAM_EXPLICIT ? sg_graph_stream(g, ev[i].stream) : NULL;
        printf("  %-8s %-12s %-32s start %10.3f us  %10.3f us\n",
               sg_cli_text(s ? s->label : "explicit"), sg_cli_text(ev[i].node),
               sg_cli_text(ev[i].name), (ev[i].start_ns - t0) / 1000.0,
               (ev[i].end_ns - ev[i].start_ns) / 1000.0);
    }
    if (shown < n_ev) printf("  ... %u more (-v shows all)\n", n_ev - shown);
    int exit_code = SG_EXIT_OK;
    if (a->trace) {
        FILE *f = fopen(a->trace, "w");
        if (!f || sg_trace_write(g, ev, n_ev, f) != SG_OK) {
            sg_cli_error(CMD, "cannot write the trace %s: %s", a->trace, strerror(errno));
            exit_code = SG_EXIT_USAGE;
        } else {
            printf("trace: %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
                   a->trace);
        }
        if (f && fclose(f) != 0 && exit_code == SG_EXIT_OK) {
            sg_cli_error(CMD, "cannot write the trace %s: %s", a->trace, strerror(errno));
            exit_code = SG_EXIT_USAGE;
        }
    }
    free(ev);
    if (a->profile && exit_code == SG_EXIT_OK) {
        if (rewrite_bundle(in, g) != SG_OK) return SG_EXIT_FINDING;
        printf("profile: node durations stored in %s\n", a->bundle);
    }
    return exit_code;
}

/* What the early reservation achieved, for the memory line. */
static sg_reserve_report_t reserve_report;
static bool reexecuted;

#define REEXEC_ENV "SGCAP_REPLAY_NO_ASLR"

/* Keep the recorded ranges free before CUDA (or anything else) maps memory
 * here. A range the process already holds at start is only free in another
 * layout: run once more without address randomization (`argv` is the
 * subcommand's, main's array shifted by one, so argv - 1 is the whole
 * command line). Returns only if it did not re-run. */
static void reserve_early(const args_t *a, char **argv, const sg_graph_t *g, const sg_graph_t *g2)
{
    reexecuted = getenv(REEXEC_ENV) != NULL;
    if (a->no_reserve || a->relocate) return;
    memset(&reserve_report, 0, sizeof reserve_report);
    if (sg_replay_reserve(g, &reserve_report) != SG_OK ||
        (g2 && sg_replay_reserve(g2, &reserve_report) != SG_OK))
        return; /* placement reports what it could not place */
    if (reserve_report.taken == 0 || reexecuted) return;
    int pers = personality(0xffffffff);
    if (pers == -1 || (pers & ADDR_NO_RANDOMIZE)) return;
    fflush(stdout);
    fflush(stderr);
    sg_replay_unreserve_all();
    if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1 &&
        setenv(REEXEC_ENV, "1", 1) == 0) {
        execv("/proc/self/exe", argv - 1);
        personality((unsigned long)pers); /* still here: carry on as we are */
    }
    unsetenv(REEXEC_ENV);
    memset(&reserve_report, 0, sizeof reserve_report);
    sg_replay_reserve(g, &reserve_report);
    if (g2) sg_replay_reserve(g2, &reserve_report);
}

static void print_open(const args_t *a, sg_replay_t *r, const sg_graph_t *g, const char *path)
{
    uint32_t same, moved, by_graph, rsame, rtotal;
    sg_replay_placement(r, &same, &moved, &by_graph);
    sg_replay_region_placement(r, &rsame, &rtotal);
    printf("memory: %s: %u %s at their recorded addresses, %u relocated, %u allocated by "
           "the graph\n",
           path, same, sg_plural(same, "buffer", "buffers"), moved, by_graph);
    if (rtotal && !a->relocate) {
        printf("memory: %s: %u of %u %s placed at %s recorded address", path, rsame, rtotal,
               sg_plural(rtotal, "region", "regions"), sg_plural(rtotal, "its", "their"));
        if (a->no_reserve)
            printf(" (no early reservation: --no-reserve)");
        else
            printf(" (%u of %u kept free from the start, %u already taken in this process)%s",
                   reserve_report.reserved, reserve_report.regions, reserve_report.taken,
                   reexecuted ? "; sgcap re-ran itself without address randomization to free "
                                "ranges its first layout held"
                              : "");
        putchar('\n');
    }
    const sg_reloc_report_t *rep = sg_replay_relocations(r);
    if (rep->n || moved) sg_reloc_report_print(rep, g, a->verbose, stdout);
    const sg_replay_timings_t *t = sg_replay_timings(r);
    if (a->timings) {
        double per = t->cuda_nodes ? 1000.0 / t->cuda_nodes : 0;
        printf("timings: %s: nodes=%u read_ms=%.3f place_ms=%.3f load_ms=%.3f "
               "materialize_ms=%.3f instantiate_ms=%.3f upload_ms=%.3f "
               "materialize_us_per_node=%.3f instantiate_us_per_node=%.3f\n",
               path, t->cuda_nodes, t->read_ms, t->place_ms, t->load_ms, t->materialize_ms,
               t->instantiate_ms, t->upload_ms, t->materialize_ms * per, t->instantiate_ms * per);
    }
}

/* Open, restore and run one bundle; prints what went wrong. */
static int start(const args_t *a, const sg_replay_gpu_t *gpu, const sg_bundle_t *in, bool profile,
                 sg_replay_t **out)
{
    char err[1024];
    const char *path = sg_bundle_path(in);
    const sg_graph_t *g = sg_bundle_graph(in);
    sg_replay_options_t opt = {.relocate = a->relocate,
                               .profile = profile,
                               .log = stderr,
                               .verbose = a->verbose,
                               .skip_host_nodes = a->skip_host,
                               .files = in};
    int rc = sg_replay_open(path, g, gpu, &opt, out, err, sizeof err);
    if (rc) {
        sg_cli_error(CMD, "%s: %s%s", path,
                     rc == SG_EUNSUPPORTED ? "cannot replay outside its program: " : "", err);
        return exit_for(rc);
    }
    print_open(a, *out, g, path);
    rc = sg_replay_restore(*out, err, sizeof err);
    if (!rc) rc = sg_replay_run(*out, err, sizeof err);
    if (rc) {
        sg_cli_error(CMD, "%s: %s", path, err);
        return exit_for(rc);
    }
    printf("replay: %s: launched once and finished\n", path);
    return SG_EXIT_OK;
}

/* The kernels' access facts (the access pass, when the bundle has none):
 * relocation then rewrites exactly the words their code uses as addresses.
 * Without them (analysis failed) it falls back to its heuristic. */
static void analyse(const args_t *a, const char *path, const sg_bundle_t *in, sg_graph_t *g)
{
    bool ran = false;
    char how[512] = "";
    int rc = sg_rewrite_ensure_access(g, in, &ran, how, sizeof how);
    if (rc)
        fprintf(stderr, "replay: %s: access analysis failed (%s): relocation uses its heuristic\n",
                sg_cli_text(path), sg_strerror(rc));
    else if (ran && a->verbose)
        printf("replay: %s: access facts computed: %s\n", sg_cli_text(path), how);
}

static int run(int argc, char **argv)
{
    args_t a;
    if (parse_args(argc, argv, &a)) return SG_EXIT_USAGE;
    int exit_code = SG_EXIT_OK;
    char err[1024];
    sg_bundle_t *in = NULL, *in2 = NULL;
    sg_graph_t *g = NULL, *g2 = NULL;
    sg_replay_t *r = NULL, *r2 = NULL;
    sg_replay_plan_t plan = {0}, plan2 = {0};
    /* This process drives the GPU itself: the driver from libcuda.so.1, the
     * device's primary context. */
    static sg_replay_driver_t drv;
    sg_replay_gpu_t *gpu = NULL;

    in = sg_cli_open(CMD, a.bundle);
    if (!in) return SG_EXIT_USAGE;
    g = sg_bundle_graph(in);
    if (!plan_or_report(a.bundle, g, &plan, a.verbose, a.skip_host, &exit_code)) goto out;
    if (plan.host_nodes_skipped)
        printf("replay: %s: %u host callbacks left out (--host-nodes skip): what they may "
               "influence is not compared\n",
               a.bundle, plan.host_nodes_skipped);
    if (a.vs) {
        in2 = sg_cli_open(CMD, a.vs);
        if (!in2) {
            exit_code = SG_EXIT_USAGE;
            goto out;
        }
        g2 = sg_bundle_graph(in2);
        if (!plan_or_report(a.vs, g2, &plan2, a.verbose, a.skip_host, &exit_code)) goto out;
    }
    reserve_early(&a, argv, g, g2); /* before the driver maps anything */
    int rc = sg_replay_driver_load(&drv, err, sizeof err);
    if (!rc) rc = sg_replay_gpu_open(&drv, a.device, NULL, &gpu, err, sizeof err);
    if (!rc) rc = sg_replay_device_check(g, gpu, a.force, stderr, err, sizeof err);
    if (!rc && g2) rc = sg_replay_device_check(g2, gpu, a.force, NULL, err, sizeof err);
    if (rc) {
        sg_cli_error(CMD, "%s", err);
        exit_code = rc == SG_EUNSUPPORTED ? SG_EXIT_USAGE : SG_EXIT_FINDING;
        goto out;
    }
    analyse(&a, a.bundle, in, g);
    if (g2) analyse(&a, a.vs, in2, g2);
    exit_code = start(&a, gpu, in, a.profile || a.trace, &r);
    if (exit_code) goto out;

    if (a.validate) {
        sg_buffer_check_t *checks = NULL;
        uint32_t n = 0;
        rc = sg_replay_validate(r, &a.cmp, &checks, &n, err, sizeof err);
        if (rc) {
            sg_cli_error(CMD, "validating: %s", err);
            exit_code = exit_for(rc);
            goto out;
        }
        uint32_t compared = 0;
        for (uint32_t i = 0; i < n; i++)
            compared += checks[i].status != SG_CHECK_SKIPPED;
        if (!print_validation(g, checks, n, &a.cmp)) {
            exit_code = SG_EXIT_FINDING;
            explain_mismatch(r, g);
        } else if (compared == 0) {
            print_nothing_compared(g, checks, n);
            exit_code = SG_EXIT_NOTHING_COMPARED;
        }
        free(checks);
    }
    if (a.profile || a.trace) {
        int pc = do_profile(&a, r, in, g);
        if (pc && !exit_code) exit_code = pc;
    }
    if (a.bench) {
        double ma = 0, mb = 0;
        if (a.vs) {
            int sc = start(&a, gpu, in2, false, &r2);
            if (sc) {
                if (!exit_code) exit_code = sc;
                goto out;
            }
            rc = sg_replay_bench_pair(r, r2, a.bench, a.warmup, &ma, &mb, err, sizeof err);
        } else {
            rc = sg_replay_bench(r, a.bench, a.warmup, &ma, NULL, err, sizeof err);
        }
        if (rc) {
            sg_cli_error(CMD, "timing: %s", err);
            if (!exit_code) exit_code = exit_for(rc);
            goto out;
        }
        printf("bench: %s: median %.3f us per launch (%u %s after %u warm-up)\n", a.bundle,
               ma, a.bench, sg_plural(a.bench, "launch", "launches"), a.warmup);
        if (a.vs) {
            printf("bench: %s: median %.3f us per launch (%u %s after %u warm-up)\n", a.vs,
                   mb, a.bench, sg_plural(a.bench, "launch", "launches"), a.warmup);
            printf("bench: ratio %s / %s = %.3f\n", a.vs, a.bundle, ma > 0 ? mb / ma : 0.0);
        }
    }
out:
    sg_replay_close(r2);
    sg_replay_close(r);
    sg_replay_gpu_close(gpu);
    sg_replay_plan_free(&plan);
    sg_replay_plan_free(&plan2);
    sg_bundle_close(in2);
    sg_bundle_close(in);
    return exit_code;
}

const sg_command_t sg_command_replay = {
    "replay", "rebuild a bundle as a real graph here; validate, time, profile it", usage, run};
