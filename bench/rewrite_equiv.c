/* rewrite_equiv.c: the equivalence harness for work on the rewrite passes'
 * speed, whose rule is that no output changes: runs eight pipelines of the
 * passes (each pass alone, all four, three orders of several) over the
 * bench graphs of 40, 300, 10k and 30k nodes and COUNT random graphs of
 * every node type (rewrite_graphs.h), and prints one line per case: the
 * return code and an FNV-1a hash of the report text, the report JSON and the
 * graph's dump after the run. Run it built from the code before a change and
 * after it, and compare the two outputs (cmp): any difference is a changed
 * output. Not a test: the hashes change whenever an output is meant to.
 *
 * usage: rewrite_equiv [COUNT]   (default 300) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/views.h"
#include "rewrite/pass.h"
#include "rewrite_graphs.h"

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static void run_case(const char *what, const sg_graph_t *g)
{
    static const char *const p4[] = {"control-deps", "fusion-legality", "defer-dealloc", "reduce"};
    static const char *const px[] = {"reduce", "control-deps", "defer-dealloc", "reduce",
                                     "fusion-legality"};
    static const struct {
        const char *const *names;
        size_t n;
    } pipes[] = {{p4, 1}, {p4 + 1, 1}, {p4 + 2, 1}, {p4 + 3, 1},
                 {p4, 4}, {px, 5},     {p4 + 2, 2}, {p4, 3}};
    for (size_t p = 0; p < sizeof pipes / sizeof pipes[0]; p++) {
        sg_graph_t *c = sg_graph_clone(g);
        sg_report_t *rep = sg_report_create();
        if (!c || !rep) die("clone", SG_ENOMEM);
        int rc = sg_rewrite_run(c, pipes[p].names, pipes[p].n, rep);
        char code[16];
        snprintf(code, sizeof code, "%d", rc);
        uint64_t h = fnv(fnv(0xcbf29ce484222325ull, code), sg_report_text(rep));
        char *s = NULL;
        if (sg_report_json_string(rep, &s) == 0 && s) h = fnv(h, s);
        free(s);
        s = NULL;
        if (sg_dump_string(c, &s) == 0 && s) h = fnv(h, s);
        free(s);
        printf("%s pipe%zu rc=%d %016llx\n", what, p, rc, (unsigned long long)h);
        sg_report_destroy(rep);
        sg_graph_destroy(c);
    }
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 300;
    static const uint32_t sizes[] = {40, 300, 10000, 30000};
    char what[32];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        sg_graph_t *g = build(sizes[i]);
        snprintf(what, sizeof what, "bench%u", sizes[i]);
        run_case(what, g);
        sg_graph_destroy(g);
    }
    for (int s = 0; s < count; s++) {
        sg_graph_t *g = random_graph((uint32_t)s);
        snprintf(what, sizeof what, "random%d", s);
        run_case(what, g);
        sg_graph_destroy(g);
    }
    return 0;
}
