/* topo_compare.c: does a set of bundles have exactly the topology a sample
 * says it captured? Reads the sample's `--expect` text (docs/SAMPLES.md,
 * v1) and one or more bundles; every expected graph must be matched by some
 * bundle and every bundle must match some expected graph (identical
 * re-captures are deduplicated into one bundle, so counts may differ).
 * Prints one line per bundle, and for a mismatch the differences against
 * the closest expected graph. The comparison itself is tests/support/topo.c,
 * unit-tested on the CPU.
 *
 * usage: topo_compare [--min-streams N] EXPECT_FILE BUNDLE...
 * exit: 0 all match, 1 a mismatch, 2 bad usage or unreadable input */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/topo.h"
#include "graph/bundle.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t m = fread(buf + n, 1, cap - n, f);
        n += m;
        if (m == 0) break;
        if (n == cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p) {
                free(buf);
                buf = NULL;
            }
            buf = p;
        }
    }
    if (f != stdin) fclose(f);
    if (buf) *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    int i = 1;
    unsigned min_streams = 0;
    if (i + 1 < argc && strcmp(argv[i], "--min-streams") == 0) {
        min_streams = (unsigned)strtoul(argv[i + 1], NULL, 10);
        i += 2;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: topo_compare [--min-streams N] EXPECT_FILE BUNDLE...\n");
        return 2;
    }
    size_t len = 0;
    char *text = slurp(argv[i], &len);
    if (!text) {
        fprintf(stderr, "topo_compare: cannot read %s\n", argv[i]);
        return 2;
    }
    sg_topo_t want;
    char err[256];
    if (sg_topo_parse(text, len, &want, err, sizeof err) != SG_OK) {
        fprintf(stderr, "topo_compare: %s: %s\n", argv[i], err);
        free(text);
        return 2;
    }
    free(text);
    i++;
    int n_bundles = argc - i, bad = 0;
    bool *matched = calloc(want.n ? want.n : 1, sizeof *matched);
    static char report[65536], best[65536];
    for (int b = 0; b < n_bundles; b++) {
        const char *path = argv[i + b];
        sg_graph_t *g = NULL;
        sg_diag_t diag;
        if (sg_bundle_read(path, &g, &diag) != SG_OK) {
            char msg[900];
            fprintf(stderr, "topo_compare: %s: %s\n", path, sg_diag_format(&diag, msg, sizeof msg));
            bad++;
            continue;
        }
        sg_topo_graph_t got;
        if (sg_topo_from_graph(g, &got) != SG_OK) {
            fprintf(stderr, "topo_compare: %s: out of memory\n", path);
            sg_graph_destroy(g);
            bad++;
            continue;
        }
        int fewest = -1;
        int64_t closest = -1;
        bool any = false;
        for (uint32_t k = 0; k < want.n; k++) {
            int d = sg_topo_compare(&want.graphs[k], &got, report, sizeof report);
            if (d == 0) {
                matched[k] = true;
                if (!any)
                    printf("%s: matches expected graph %lld (%u streams, %u event and control "
                           "edges)\n",
                           path, (long long)want.graphs[k].index, got.n_streams, got.n_edges);
                any = true;
            } else if (fewest < 0 || d < fewest) {
                fewest = d;
                closest = want.graphs[k].index;
                memcpy(best, report, sizeof best);
            }
        }
        if (any && got.n_streams < min_streams) {
            printf("%s: only %u streams, at least %u required\n", path, got.n_streams, min_streams);
            bad++;
        }
        if (!any) {
            bad++;
            printf("%s: MISMATCH: %d differences from expected graph %lld:\n%s", path, fewest,
                   (long long)closest, best);
            sg_topo_print(&got, report, sizeof report);
            printf("the bundle's topology:\n%s", report);
        }
        if (g->crosscheck_done && !g->crosscheck_ok)
            printf("%s: note: cross-check with CUDA's graph failed: %s\n", path,
                   g->crosscheck_note ? g->crosscheck_note : "");
        sg_topo_graph_free(&got);
        sg_graph_destroy(g);
    }
    for (uint32_t k = 0; k < want.n; k++)
        if (!matched[k]) {
            bad++;
            printf("expected graph %lld: no bundle has its topology\n",
                   (long long)want.graphs[k].index);
        }
    printf("topo_compare: %u expected graphs, %d bundles: %s\n", want.n, n_bundles,
           bad ? "MISMATCH" : "all match");
    free(matched);
    sg_topo_free(&want);
    return bad ? 1 : 0;
}
