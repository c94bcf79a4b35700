/* cmd_rewrite.c: `sgcap rewrite B -o OUT`: run rewrite passes over a
 * bundle's graph and write the result as a new bundle, with the input's
 * code and snapshot files (sg_bundle_write_derived) and the passes' reports.
 * Nothing is written when the input is bad, a pass fails or any output path
 * cannot be written; the input is never changed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle_open.h"
#include "cli.h"
#include "rewrite/pass.h"
#include "graph/plural.h"

static const char usage[] =
    "usage: sgcap rewrite BUNDLE -o OUT [--passes LIST] [--report FILE] [--json FILE]\n"
    "                     [--arch N] [--fuse-tile BxE] [--no-verify] [--force]\n"
    "\n"
    "Run rewrite passes over the graph of BUNDLE and write the result as the new\n"
    "bundle OUT. BUNDLE is never changed; OUT appears complete or not at all, and\n"
    "nothing is written when BUNDLE is unreadable or a pass fails.\n"
    "\n"
    "passes (LIST is comma-separated, run in the order given; default:\n"
    "control-deps,fusion-legality,defer-dealloc,fuse):\n"
    "  control-deps     make the orderings capture implies explicit as control\n"
    "                   edges: event record node -> wait node, stream order at\n"
    "                   record/wait/host/opaque points, free -> allocation that\n"
    "                   reuses its memory, cross-stream orderings that ran through\n"
    "                   a free only\n"
    "  fusion-legality  analysis only: the maximal same-stream kernel chains that\n"
    "                   could be fused and the barrier ending each (event edge,\n"
    "                   memory/host/opaque node, stream change, geometry, fan-in/out)\n"
    "  defer-dealloc    a free of memory last used on another stream and not ordered\n"
    "                   after that use gets dealloc edges from the last use on every\n"
    "                   stream and moves, on its own stream, to where those uses are\n"
    "                   expected to be done, so the stream does not wait (times:\n"
    "                   measured durations, else a roofline estimate); frees already\n"
    "                   after every use stay\n"
    "  fuse             each candidate chain becomes one kernel built with NVRTC:\n"
    "                   pointwise stages (every access the same affine function of\n"
    "                   the thread index, proven from the PTX with the captured\n"
    "                   parameters) are lifted into registers with 16-byte loads and\n"
    "                   stores; frees between them are sunk below it; per chain the\n"
    "                   report says fused / split / refused and why, bytes moved\n"
    "                   before and after, registers and spills (needs libnvrtc)\n"
    "  reduce           remove edges implied by other paths; never event or\n"
    "                   dealloc edges (not in the default list)\n"
    "After each pass sgcap checks that every ordering of its input is kept (a\n"
    "moved free keeps every ordering it needs and every path through it is\n"
    "bridged); a pass that fails the check stops the run.\n"
    "\n"
    "OUT holds the rewritten graph.json (each pass adds a line to its pass log),\n"
    "the code/ and data/ files BUNDLE's graph names, the code the passes made (the\n"
    "fused kernels' cubin and PTX), and two reports of what each pass did and\n"
    "why: report.txt (text) and report.json (JSON, schema sgcap-rewrite-report,\n"
    "docs/SCHEMAS.md). A file the graph names that BUNDLE lacks is left out, with\n"
    "a warning; a code image whose bytes do not match its hash stops the run.\n"
    "\n"
    "options:\n"
    "  -o OUT           the output bundle (required), a new directory\n"
    "  --passes LIST    the passes to run, in order\n"
    "  --report FILE    also write the text report to FILE ('-' for stdout)\n"
    "  --json FILE      also write the JSON report to FILE ('-' for stdout)\n"
    "  --no-verify      skip the ordering check after each pass\n"
    "  --arch N         compile fused kernels for sm_N (default: the bundle's GPU)\n"
    "  --fuse-tile BxE  pointwise fused kernels run B threads per block (a multiple\n"
    "                   of 32, at most 1024) and E elements per thread (4, 8 or\n"
    "                   16); default 128 threads of 8 elements (4 where a\n"
    "                   fused value is 8 bytes wide)\n"
    "  --force          replace OUT when it exists and is a bundle (holding nothing\n"
    "                   but its own files); never BUNDLE itself\n"
    "  -h, --help       show this help\n"
    "\n"
    "Without --report/--json to stdout, one summary line per pass is printed.\n"
    "\n"
    "exit codes: 0 ok, 1 a pass failed (nothing written), 2 bad usage, an\n"
    "unreadable/malformed bundle, or an output that cannot be written (nothing\n"
    "written: every output path is tried first)\n";

/* An output file made in two steps, so that a bad path is found before
 * anything is written and nothing is left half-written: begin creates a
 * temporary file beside the final name, commit renames it into place once
 * everything else has succeeded, abort removes it. "-" is stdout, written at
 * commit. */
typedef struct {
    const char *path;
    char *tmp;
    FILE *f;
} staged_t;

static int staged_begin(staged_t *s, const char *path)
{
    *s = (staged_t){.path = path};
    if (!path || strcmp(path, "-") == 0) return 0;
    if (asprintf(&s->tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) {
        s->tmp = NULL;
        errno = ENOMEM;
        return -1;
    }
    int fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 && !(s->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        unlink(s->tmp);
        errno = err;
        fd = -1;
    }
    if (fd < 0) {
        free(s->tmp);
        s->tmp = NULL;
        return -1;
    }
    return 0;
}

static void staged_abort(staged_t *s)
{
    if (s->f) fclose(s->f);
    if (s->tmp) unlink(s->tmp);
    free(s->tmp);
    *s = (staged_t){0};
}

/* Write text into the temporary file (durably). */
static int staged_fill(staged_t *s, const char *text)
{
    if (!s->f) return 0;
    bool ok = fputs(text, s->f) >= 0 && fflush(s->f) == 0 && fsync(fileno(s->f)) == 0;
    int err = errno;
    ok = fclose(s->f) == 0 && ok;
    s->f = NULL;
    errno = ok ? 0 : err;
    return ok ? 0 : -1;
}

static int staged_commit(staged_t *s, const char *text)
{
    if (!s->path) return 0;
    if (!s->tmp) {
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : -1;
    }
    int rc = rename(s->tmp, s->path);
    int err = errno;
    if (rc) unlink(s->tmp);
    free(s->tmp);
    *s = (staged_t){0};
    errno = err;
    return rc;
}

/* Split "a,b,c" into names (pointers into a copy kept in *store). */
static int split_passes(const char *list, char **store, const char ***names, size_t *n)
{
    *store = strdup(list);
    size_t cap = 1;
    for (const char *p = list; *p; p++) cap += *p == ',';
    *names = malloc(cap * sizeof **names);
    if (!*store || !*names) return -1;
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(*store, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        (*names)[(*n)++] = tok;
    return 0;
}

static int run(int argc, char **argv)
{
    const char *path = NULL, *out = NULL, *passes = NULL, *report_path = NULL, *json_path = NULL,
               *arch = NULL, *tile = NULL;
    bool force = false;
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = strcmp(a, "-o") == 0          ? &out
                            : strcmp(a, "--passes") == 0  ? &passes
                            : strcmp(a, "--report") == 0  ? &report_path
                            : strcmp(a, "--json") == 0    ? &json_path
                            : strcmp(a, "--arch") == 0    ? &arch
                            : strcmp(a, "--fuse-tile") == 0 ? &tile
                                                          : NULL;
        if (slot) {
            if (++i >= argc || !argv[i][0]) {
                sg_cli_error("rewrite", "%s needs a value", a);
                return SG_EXIT_USAGE;
            }
            *slot = argv[i];
        } else if (strcmp(a, "--no-verify") == 0) {
            opt.verify = false;
        } else if (strcmp(a, "--force") == 0) {
            force = true;
        } else if (a[0] == '-' && a[1]) {
            sg_cli_error("rewrite", "unknown option '%s' (see sgcap rewrite --help)", a);
            return SG_EXIT_USAGE;
        } else if (!path) {
            path = a;
        } else {
            sg_cli_error("rewrite", "one bundle at a time ('%s' is extra)", a);
            return SG_EXIT_USAGE;
        }
    }
    if (!path || !out) {
        sg_cli_error("rewrite", "%s (see sgcap rewrite --help)",
                     !path ? "no bundle given" : "no output bundle given (-o OUT)");
        return SG_EXIT_USAGE;
    }
    if (arch) {
        char *end = NULL;
        unsigned long v = strtoul(arch, &end, 10);
        if (!end || *end || v < 50 || v > 999) {
            sg_cli_error("rewrite", "--arch wants an sm number such as 90");
            return SG_EXIT_USAGE;
        }
        opt.fuse_arch = (uint32_t)v;
    }
    if (tile) {
        unsigned bl = 0, el = 0;
        char extra;
        if (sscanf(tile, "%ux%u%c", &bl, &el, &extra) != 2 || bl < 32 || bl > 1024 || bl % 32 ||
            (el != 4 && el != 8 && el != 16)) {
            sg_cli_error("rewrite", "--fuse-tile wants BxE: B a multiple of 32 up to 1024, E 4, "
                                    "8 or 16 (such as 256x4)");
            return SG_EXIT_USAGE;
        }
        opt.fuse_block = bl;
        opt.fuse_elements = el;
    }
    if (report_path && json_path && strcmp(report_path, "-") == 0 && strcmp(json_path, "-") == 0) {
        sg_cli_error("rewrite", "--report and --json cannot both go to stdout");
        return SG_EXIT_USAGE;
    }
    char *store = NULL;
    const char **names = NULL;
    size_t n_names = 0;
    if (passes) {
        if (split_passes(passes, &store, &names, &n_names)) {
            sg_cli_error("rewrite", "out of memory");
            return SG_EXIT_USAGE;
        }
        for (size_t i = 0; i < n_names; i++) {
            if (sg_rewrite_pass_find(names[i]) >= 0) continue;
            char known[256] = "";
            for (size_t k = 0; k < sg_rewrite_pass_count(); k++) {
                strncat(known, k ? ", " : "", sizeof known - strlen(known) - 1);
                strncat(known, sg_rewrite_pass_name(k), sizeof known - strlen(known) - 1);
            }
            sg_cli_error("rewrite", "unknown pass '%s' (passes: %s)", names[i], known);
            free(store);
            free(names);
            return SG_EXIT_USAGE;
        }
        if (n_names == 0) {
            sg_cli_error("rewrite", "--passes names no pass");
            free(store);
            free(names);
            return SG_EXIT_USAGE;
        }
    }
    int exit_code = SG_EXIT_OK;
    sg_report_t *report = NULL;
    char *json_text = NULL;
    staged_t text_out, json_out;
    /* every output path is tried before anything is written */
    if (staged_begin(&text_out, report_path)) {
        sg_cli_error("rewrite", "cannot write the report to %s: %s", report_path, strerror(errno));
        free(store);
        free(names);
        return SG_EXIT_USAGE;
    }
    if (staged_begin(&json_out, json_path)) {
        sg_cli_error("rewrite", "cannot write the JSON report to %s: %s", json_path,
                     strerror(errno));
        staged_abort(&text_out);
        free(store);
        free(names);
        return SG_EXIT_USAGE;
    }
    sg_bundle_t *in = sg_cli_open("rewrite", path);
    sg_graph_t *g = sg_bundle_graph(in);
    sg_rewrite_files_t files = {0};
    sg_bundle_blob_t *blobs = NULL;
    opt.bundle = path;
    opt.source = in;
    opt.files = &files;
    if (!g) {
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    report = sg_report_create();
    if (!report) {
        sg_cli_error("rewrite", "out of memory");
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    sg_cli_progress("sgcap rewrite: %u %s, %u %s", sg_graph_node_count(g),
                    sg_plural(sg_graph_node_count(g), "node", "nodes"), sg_graph_edge_count(g),
                    sg_plural(sg_graph_edge_count(g), "edge", "edges"));
    int rc = sg_rewrite_run_opts(g, names, n_names, &opt, report);
    if (rc) {
        /* the failing pass's section says why; show it */
        fputs(sg_report_text(report), stderr);
        sg_cli_error("rewrite", "%s: a pass failed: %s; nothing written", path, sg_strerror(rc));
        exit_code = SG_EXIT_FINDING;
        goto done;
    }
    if (sg_report_json_string(report, &json_text)) {
        sg_cli_error("rewrite", "out of memory");
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    if (staged_fill(&text_out, sg_report_text(report)) || staged_fill(&json_out, json_text)) {
        sg_cli_error("rewrite", "cannot write the reports: %s; nothing written", strerror(errno));
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    /* the rewritten graph with the input's files, the code the passes made
     * (fused kernels: files the graph names that the input lacks) and the
     * reports inside */
    blobs = calloc(2 + files.n, sizeof *blobs);
    if (!blobs) {
        sg_cli_error("rewrite", "out of memory");
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    blobs[0] = (sg_bundle_blob_t){.relpath = "report.txt",
                                  .data = sg_report_text(report),
                                  .size = strlen(sg_report_text(report))};
    blobs[1] =
        (sg_bundle_blob_t){.relpath = "report.json", .data = json_text, .size = strlen(json_text)};
    for (size_t i = 0; i < files.n; i++)
        blobs[2 + i] = (sg_bundle_blob_t){.relpath = files.files[i].relpath,
                                          .data = files.files[i].data,
                                          .size = files.files[i].size,
                                          .named = true};
    sg_diag_t diag = {0};
    sg_bundle_carried_t carried;
    rc = sg_bundle_write_derived(in, g, out, blobs, 2 + files.n, force ? SG_BUNDLE_OVERWRITE : 0,
                                 &carried, &diag);
    if (rc) {
        char buf[1024];
        sg_cli_error("rewrite", "cannot write %s: %s; nothing written", out,
                     sg_diag_format(&diag, buf, sizeof buf));
        if (rc == SG_EEXIST && !force)
            fprintf(stderr, "sgcap rewrite: (use --force to replace a bundle there)\n");
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    if (carried.missing)
        fprintf(stderr,
                "sgcap rewrite: warning: %u file%s that the graph names %s missing in %s (%s%s); "
                "%s lacks %s too\n",
                carried.missing, carried.missing == 1 ? "" : "s",
                carried.missing == 1 ? "is" : "are", sg_cli_text(path),
                sg_cli_text(carried.first_missing), carried.missing > 1 ? ", ..." : "",
                sg_cli_text(out), carried.missing == 1 ? "it" : "them");
    if (staged_commit(&text_out, sg_report_text(report))) {
        sg_cli_error("rewrite", "wrote %s, but not the report %s: %s", out, report_path,
                     strerror(errno));
        exit_code = SG_EXIT_USAGE;
    }
    if (staged_commit(&json_out, json_text)) {
        sg_cli_error("rewrite", "wrote %s, but not the JSON report %s: %s", out, json_path,
                     strerror(errno));
        exit_code = SG_EXIT_USAGE;
    }
    bool stdout_used = (report_path && strcmp(report_path, "-") == 0) ||
                       (json_path && strcmp(json_path, "-") == 0);
    if (!stdout_used) {
        for (size_t i = 0; i < sg_report_pass_count(report); i++) {
            printf("%s: %s\n", sg_report_pass_name(report, i), sg_report_pass_summary(report, i));
        }
        printf("wrote %s\n", out);
    }
done:
    staged_abort(&text_out);
    staged_abort(&json_out);
    free(blobs);
    sg_rewrite_files_free(&files);
    free(json_text);
    sg_report_destroy(report);
    sg_bundle_close(in);
    free(store);
    free(names);
    return exit_code;
}

const sg_command_t sg_command_rewrite = {"rewrite",
                                         "run rewrite passes (control deps, fusion legality, "
                                         "deferred frees) into a new bundle with reports",
                                         usage, run};
