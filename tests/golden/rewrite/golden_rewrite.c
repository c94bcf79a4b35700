/* golden_rewrite.c: the golden test of rewrite/ on one fixture bundle.
 *
 *   golden_rewrite BUNDLE.sgraph EXPECTED_DIR
 *
 * For NAME.sgraph and every pass P (each alone, then the default pipeline
 * "default"), reads the bundle, runs the pass with the ordering verifier on,
 * and compares the text report followed by the canonical dump of the result
 * with EXPECTED_DIR/NAME.P.txt. Also: the result survives a JSON round trip
 * unchanged (the rewritten graph is a valid bundle), running the pass a
 * second time changes nothing but the pass log (idempotence), and the
 * hazard check's findings equal EXPECTED_DIR/NAME.check.txt.
 *
 * Regenerate after an intended change (then review `git diff`; the expected
 * files are the specification of what each pass does to each topology):
 *   SGCAP_GOLDEN_UPDATE=1 ctest --test-dir build -R golden.rewrite
 *
 * Exit status: 0 pass, 1 fail, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"
#include "graph/views.h"
#include "rewrite/check.h"
#include "rewrite/pass.h"

static int failures;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            char *p = realloc(buf, 2 * cap + 1);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Compare got with the expected file (or write it when updating). */
static void expect(const char *path, const char *got)
{
    const char *upd = getenv("SGCAP_GOLDEN_UPDATE");
    if (upd && strcmp(upd, "1") == 0) {
        if (write_text(path, got)) {
            fprintf(stderr, "FAIL: cannot write %s\n", path);
            failures++;
        }
        return;
    }
    char *want = read_text(path);
    if (!want) {
        fprintf(stderr, "FAIL: %s missing (SGCAP_GOLDEN_UPDATE=1 creates it)\n", path);
        failures++;
        return;
    }
    if (strcmp(want, got) != 0) {
        /* first differing line, for the log */
        const char *a = want, *b = got;
        int line = 1;
        while (*a && *a == *b) {
            if (*a == '\n') line++;
            a++, b++;
        }
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        fprintf(stderr, "FAIL: %s differs at line %d\n  want: %.*s\n  got:  %.*s\n", path, line,
                (int)(ea ? ea - a : (long)strlen(a)), a, (int)(eb ? eb - b : (long)strlen(b)), b);
        failures++;
    }
    free(want);
}

static char *dump_of(const sg_graph_t *g)
{
    char *s = NULL;
    if (sg_dump_string(g, &s) != SG_OK) return NULL;
    return s;
}

static char *concat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

/* Dump minus the pass log section, to compare graphs across runs. */
static char *strip_pass_log(char *dump)
{
    char *p = dump ? strstr(dump, "\npass log") : NULL;
    if (p) p[1] = '\0';
    return dump;
}

/* The bundle open (the access pass reads the kernels' code through it) and
 * a copy of its graph to rewrite. */
static sg_graph_t *open_case(const char *bundle, sg_bundle_t **b)
{
    sg_diag_t d = {0};
    if (sg_bundle_open(bundle, b, &d) != SG_OK) {
        fprintf(stderr, "FAIL: cannot read %s\n", bundle);
        failures++;
        return NULL;
    }
    sg_graph_t *g = sg_graph_clone(sg_bundle_graph(*b));
    if (!g) {
        fprintf(stderr, "FAIL: out of memory\n");
        failures++;
    }
    return g;
}

static void run_case(const char *bundle, const char *dir, const char *name, const char *label,
                     const char *const *passes, size_t n)
{
    sg_bundle_t *src = NULL;
    sg_diag_t d = {0};
    sg_graph_t *g = open_case(bundle, &src);
    if (!g) return;
    sg_report_t *rep = sg_report_create();
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    opt.source = src;
    opt.bundle = bundle;
    int rc = sg_rewrite_run_opts(g, passes, n, &opt, rep);
    if (rc != SG_OK) {
        fprintf(stderr, "FAIL: %s %s: %s\n%s", name, label, sg_strerror(rc), sg_report_text(rep));
        failures++;
    }
    char *dump = dump_of(g);
    char *text = dump ? concat3(sg_report_text(rep), "== dump ==\n", dump) : NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s.txt", dir, name, label);
    if (text) expect(path, text);
    /* the result is a valid bundle: JSON round trip keeps the dump */
    char *json = NULL;
    sg_graph_t *back = NULL;
    if (sg_bundle_to_json(g, &json) != SG_OK ||
        sg_bundle_parse_json(json, strlen(json), "rewritten", &back, &d) != SG_OK) {
        char buf[1024];
        fprintf(stderr, "FAIL: %s %s: the result does not round-trip: %s\n", name, label,
                sg_diag_format(&d, buf, sizeof buf));
        failures++;
    } else {
        char *d2 = dump_of(back);
        if (!d2 || !dump || strcmp(d2, dump) != 0) {
            fprintf(stderr, "FAIL: %s %s: dump changes through JSON\n", name, label);
            failures++;
        }
        free(d2);
    }
    /* idempotence: a second run changes nothing but the pass log */
    sg_report_t *rep2 = sg_report_create();
    if (sg_rewrite_run_opts(g, passes, n, &opt, rep2) != SG_OK) {
        fprintf(stderr, "FAIL: %s %s: second run failed\n%s", name, label, sg_report_text(rep2));
        failures++;
    }
    char *again = strip_pass_log(dump_of(g));
    char *first = strip_pass_log(dump ? strdup(dump) : NULL);
    if (!again || !first || strcmp(again, first) != 0) {
        fprintf(stderr, "FAIL: %s %s: not idempotent\n", name, label);
        failures++;
    }
    free(again);
    free(first);
    sg_report_destroy(rep2);
    sg_graph_destroy(back);
    free(json);
    free(text);
    free(dump);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
    sg_bundle_close(src);
}

/* text + line + newline, growing text (freed and NULL when out of memory). */
static char *append_line(char *text, size_t *len, size_t *cap, const char *line)
{
    size_t l = strlen(line);
    if (*len + l + 2 > *cap) {
        *cap = 2 * (*len + l + 2);
        char *t = realloc(text, *cap);
        if (!t) {
            free(text);
            return NULL;
        }
        text = t;
    }
    memcpy(text + *len, line, l);
    *len += l;
    text[(*len)++] = '\n';
    text[*len] = '\0';
    return text;
}

/* `sgcap check` as the CLI runs it: access facts from the code first. */
static void check_case(const char *bundle, const char *dir, const char *name)
{
    sg_bundle_t *src = NULL;
    sg_graph_t *g = open_case(bundle, &src);
    if (!g) return;
    sg_check_result_t res;
    if (sg_rewrite_ensure_access(g, src, NULL, NULL, 0) != SG_OK ||
        sg_check_run(g, NULL, &res) != SG_OK) {
        fprintf(stderr, "FAIL: %s: check failed\n", name);
        failures++;
        sg_graph_destroy(g);
        sg_bundle_close(src);
        return;
    }
    size_t cap = 4096, len = 0;
    char *text = calloc(1, cap), line[2048];
    for (size_t i = 0; text && i < res.n; i++)
        text = append_line(text, &len, &cap, sg_hazard_format(g, &res.hazards[i], line, sizeof line));
    for (size_t i = 0; text && i < res.n_joined_at_end; i++)
        text = append_line(text, &len, &cap,
                           sg_check_joined_format(g, &res.joined_at_end[i], line, sizeof line));
    if (text) {
        if (len == 0) snprintf(text, cap, "no hazards\n");
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.check.txt", dir, name);
        expect(path, text);
    }
    free(text);
    sg_check_result_free(&res);
    sg_graph_destroy(g);
    sg_bundle_close(src);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: golden_rewrite BUNDLE.sgraph EXPECTED_DIR\n");
        return 2;
    }
    const char *bundle = argv[1], *dir = argv[2];
    const char *base = strrchr(bundle, '/');
    base = base ? base + 1 : bundle;
    char name[512];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strstr(name, ".sgraph");
    if (dot) *dot = '\0';
    for (size_t i = 0; i < sg_rewrite_pass_count(); i++) {
        const char *p = sg_rewrite_pass_name(i);
        run_case(bundle, dir, name, p, &p, 1);
    }
    run_case(bundle, dir, name, "default", NULL, 0);
    check_case(bundle, dir, name);
    if (failures) fprintf(stderr, "golden_rewrite %s: %d failure(s)\n", name, failures);
    return failures ? 1 : 0;
}
