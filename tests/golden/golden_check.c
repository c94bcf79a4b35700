/* golden_check.c: the golden test of one fixture bundle.
 *
 *   golden_check BUNDLE.sgraph EXPECTED.dump
 *
 * Reads the bundle and compares its canonical dump (graph/dump.c) with the
 * expected text, then checks that nothing is lost or changed on the way
 * through the model: write -> read gives the same dump (twice, and the second
 * write yields the same JSON bytes as the first), JSON in memory -> parse
 * gives the same dump, a clone gives the same dump. Finally the DOT export
 * must render with Graphviz (`dot -Tsvg`) without a single message.
 *
 * Regenerating the expected text (development only; review the diff before
 * committing, it is the specification of what the fixture contains):
 *   SGCAP_GOLDEN_UPDATE=1 ctest --test-dir build -L golden
 * or `golden_check --update BUNDLE EXPECTED`. The other checks still run.
 *
 * Exit status: 0 pass, 1 fail, 2 usage, 77 everything passed but `dot` is
 * not installed (ctest reports the test as skipped).
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/bundle.h"
#include "graph/graph.h"
#include "graph/views.h"

static const char *prog = "golden_check";

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "%s: FAIL: %s%s%s\n", prog, what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

static int fail_rc(const char *what, int rc, const sg_diag_t *d)
{
    char buf[1024];
    fprintf(stderr, "%s: FAIL: %s: %s\n", prog, what, sg_strerror(rc));
    if (d && (d->message[0] || d->file[0]))
        fprintf(stderr, "  %s\n", sg_diag_format(d, buf, sizeof buf));
    return 1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap + 1);
            if (!p) break;
            buf = p;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t len = strlen(text);
    int rc = fwrite(text, 1, len, f) == len ? 0 : -1;
    if (fclose(f) != 0) rc = -1;
    return rc;
}

/* Show where two texts differ: `diff -u` when there is one, else the first
 * differing line. */
static void show_diff(const char *tmpdir, const char *expected_path, const char *want,
                      const char *got)
{
    char actual[4096], cmd[8300];
    snprintf(actual, sizeof actual, "%s/actual.dump", tmpdir);
    if (expected_path && write_file(actual, got) == 0 &&
        system("command -v diff >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' >&2", expected_path, actual);
        if (system(cmd) != -1) return;
    }
    int line = 1;
    const char *a = want, *b = got;
    while (*a && *a == *b) {
        if (*a == '\n') line++;
        a++;
        b++;
    }
    fprintf(stderr, "  first difference at line %d:\n  want: %.120s\n  got:  %.120s\n", line, a, b);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int dump_of(const sg_graph_t *g, char **out, const char *what)
{
    int rc = sg_dump_string(g, out);
    return rc ? fail_rc(what, rc, NULL) : 0;
}

/* Writes g as a bundle, reads it back, returns the new graph and its JSON. */
static int round_trip(const sg_graph_t *g, const char *path, sg_graph_t **out, char **json)
{
    sg_diag_t d;
    memset(&d, 0, sizeof d);
    int rc = sg_bundle_write(g, path, NULL, 0, SG_BUNDLE_OVERWRITE, &d);
    if (rc) return fail_rc("writing the bundle back", rc, &d);
    memset(&d, 0, sizeof d);
    rc = sg_bundle_read(path, out, &d);
    if (rc) return fail_rc("reading the written bundle", rc, &d);
    char jpath[4200];
    snprintf(jpath, sizeof jpath, "%s/graph.json", path);
    *json = read_file(jpath);
    if (!*json) return fail("reading the written graph.json", strerror(errno));
    return 0;
}

static int check_dot(const sg_graph_t *g, const char *tmpdir, const char *name)
{
    if (system("command -v dot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "%s: SKIP: graphviz `dot` is not installed; DOT not rendered\n", prog);
        return 77;
    }
    char path[4096], svg[4200], err[4200], cmd[13000];
    snprintf(path, sizeof path, "%s/graph.dot", tmpdir);
    snprintf(svg, sizeof svg, "%s/graph.svg", tmpdir);
    snprintf(err, sizeof err, "%s/dot.err", tmpdir);
    FILE *f = fopen(path, "w");
    if (!f) return fail("creating the DOT file", strerror(errno));
    sg_dot_options_t opt = {.show_ids = true, .show_params = true, .title = name};
    int rc = sg_dot_write(g, f, &opt);
    if (fclose(f) != 0 && !rc) rc = SG_EIO;
    if (rc) return fail_rc("sg_dot_write", rc, NULL);
    snprintf(cmd, sizeof cmd, "dot -Tsvg -o '%s' '%s' 2>'%s'", svg, path, err);
    int st = system(cmd);
    char *msg = read_file(err);
    struct stat sb;
    bool empty_svg = stat(svg, &sb) != 0 || sb.st_size == 0;
    if (st != 0 || empty_svg || (msg && *msg)) {
        fprintf(stderr, "%s: FAIL: dot -Tsvg rejected the DOT (status %d):\n%s\n", prog, st,
                msg ? msg : "");
        free(msg);
        return 1;
    }
    free(msg);
    return 0;
}

int main(int argc, char **argv)
{
    bool update = getenv("SGCAP_GOLDEN_UPDATE") && strcmp(getenv("SGCAP_GOLDEN_UPDATE"), "0");
    const char *bundle = NULL, *expected = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--update"))
            update = true;
        else if (!bundle)
            bundle = argv[i];
        else if (!expected)
            expected = argv[i];
        else
            bundle = NULL, i = argc;
    }
    if (!bundle || !expected) {
        fprintf(stderr, "usage: %s [--update] BUNDLE.sgraph EXPECTED.dump\n", prog);
        return 2;
    }
    const char *slash = strrchr(bundle, '/');
    char name[256];
    snprintf(name, sizeof name, "%s", slash && slash[1] ? slash + 1 : bundle);
    char *dot = strstr(name, ".sgraph");
    if (dot) *dot = '\0';

    const char *tmp = getenv("TMPDIR");
    char tmpdir[1024];
    snprintf(tmpdir, sizeof tmpdir, "%s/sgcap-golden-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    if (!mkdtemp(tmpdir)) return fail("creating a temporary directory", strerror(errno));

    int status = 0;
    sg_graph_t *g = NULL, *g2 = NULL, *g3 = NULL, *g4 = NULL, *gc = NULL;
    char *d1 = NULL, *d2 = NULL, *d3 = NULL, *d4 = NULL, *dc = NULL, *want = NULL;
    char *json2 = NULL, *json3 = NULL, *json_mem = NULL;
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);

    /* 1. the dump is what the expected file says */
    int rc = sg_bundle_read(bundle, &g, &diag);
    if (rc) {
        status = fail_rc("reading the fixture", rc, &diag);
        goto out;
    }
    if (dump_of(g, &d1, "dumping the fixture")) {
        status = 1;
        goto out;
    }
    if (update) {
        if (write_file(expected, d1) != 0) {
            status = fail("writing the expected dump", strerror(errno));
            goto out;
        }
        fprintf(stderr, "%s: updated %s (review the diff)\n", prog, expected);
    } else {
        want = read_file(expected);
        if (!want) {
            status = fail("reading the expected dump (SGCAP_GOLDEN_UPDATE=1 creates it)", expected);
            goto out;
        }
        if (strcmp(want, d1) != 0) {
            status = fail("the dump differs from the expected text", expected);
            show_diff(tmpdir, expected, want, d1);
        }
    }

    /* 2. read -> write -> read keeps everything; a second write is byte-identical */
    char path2[4200], path3[4200];
    snprintf(path2, sizeof path2, "%s/a.sgraph", tmpdir);
    snprintf(path3, sizeof path3, "%s/b.sgraph", tmpdir);
    if (round_trip(g, path2, &g2, &json2)) {
        status = 1;
        goto out;
    }
    if (dump_of(g2, &d2, "dumping the re-read bundle")) {
        status = 1;
        goto out;
    }
    if (strcmp(d1, d2) != 0) {
        status = fail("read -> write -> read changed the dump", NULL);
        show_diff(tmpdir, NULL, d1, d2);
    }
    if (round_trip(g2, path3, &g3, &json3)) {
        status = 1;
        goto out;
    }
    if (dump_of(g3, &d3, "dumping the twice re-read bundle")) {
        status = 1;
        goto out;
    }
    if (strcmp(d1, d3) != 0) {
        status = fail("a second round trip changed the dump", NULL);
        show_diff(tmpdir, NULL, d1, d3);
    }
    if (strcmp(json2, json3) != 0) {
        status = fail("read -> write -> read -> write is not byte-identical", NULL);
        show_diff(tmpdir, NULL, json2, json3);
    }

    /* 3. JSON in memory parses back to the same graph */
    rc = sg_bundle_to_json(g, &json_mem);
    if (rc) {
        status = fail_rc("sg_bundle_to_json", rc, NULL);
        goto out;
    }
    memset(&diag, 0, sizeof diag);
    rc = sg_bundle_parse_json(json_mem, strlen(json_mem), "memory", &g4, &diag);
    if (rc) {
        status = fail_rc("parsing sg_bundle_to_json's output", rc, &diag);
        goto out;
    }
    if (dump_of(g4, &d4, "dumping the parsed JSON")) {
        status = 1;
        goto out;
    }
    if (strcmp(d1, d4) != 0) {
        status = fail("to_json -> parse_json changed the dump", NULL);
        show_diff(tmpdir, NULL, d1, d4);
    }

    /* 4. a clone is the same graph */
    gc = sg_graph_clone(g);
    if (!gc) {
        status = fail("sg_graph_clone", "out of memory");
        goto out;
    }
    if (dump_of(gc, &dc, "dumping the clone")) {
        status = 1;
        goto out;
    }
    if (strcmp(d1, dc) != 0) {
        status = fail("the clone dumps differently", NULL);
        show_diff(tmpdir, NULL, d1, dc);
    }

    /* 5. the DOT renders */
    if (status == 0) status = check_dot(g, tmpdir, name);

out:
    if (status == 1)
        fprintf(stderr, "%s: %s: FAILED (files kept in %s)\n", prog, name, tmpdir);
    else
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (status == 0) printf("%s: %s: OK\n", prog, name);
    sg_graph_destroy(g);
    sg_graph_destroy(g2);
    sg_graph_destroy(g3);
    sg_graph_destroy(g4);
    sg_graph_destroy(gc);
    free(d1);
    free(d2);
    free(d3);
    free(d4);
    free(dc);
    free(want);
    free(json2);
    free(json3);
    free(json_mem);
    return status;
}
