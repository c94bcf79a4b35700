/* bench_rewrite.c: cost of the rewrite passes and the hazard check at
 * scale. Builds a synthetic multi-stream capture (8 streams; kernels with
 * reads and writes of stream-private buffers; record/wait pairs between
 * streams; data passed between streams in graph allocations written on one
 * stream, read on another and freed on the first, half of them before the
 * join (the frees defer-dealloc must move, and the only hazards), their
 * addresses reused from a pool of 16; measured durations on some kernels)
 * at 10k and 100k nodes, then times each pass alone (with the ordering
 * verifier on, as the CLI runs it), all passes in one run, the check, and a
 * reference: a copy of the graph (sg_graph_clone), code that is linear by
 * construction, so its ratio shows what the memory hierarchy alone makes
 * of 10x the nodes on this machine; a walk of every edge from both ends
 * (linear too, but in the graph's own random order); and the reachability
 * snapshot (sg_reach_build) that every pass builds or is handed.
 *
 * Prints, per row, the median and the best time at each size, three
 * large/small ratios (of the medians, of the best runs, and the median
 * over the repetitions of each one's pair: the large run divided by the
 * small run made just before it) and the target beside them: linear code
 * gives ~10x; the targets are at most 11x for every pass and at most 11x
 * and 1 s at the large size for all passes in one run. Each figure is CPU
 * time of REPEAT runs (sizes and phases interleaved).
 * The ratio is judged on the pairs. The passes are deterministic, so what
 * a run costs beyond its best is the machine's (another tenant, the host's
 * clocks), and it drifts over seconds: on the H200 host the small size's
 * median has come out 60% above its best in one run and within 4% in the
 * next, which moved the ratio of the medians from 12x to 8.5x with the
 * code unchanged. The two runs of a pair see the same machine, so their
 * ratio cancels the drift; the median of the pairs drops the runs an
 * interrupt or a neighbour hit. The ratio of the best runs (judged on
 * until s25) is biased upwards: a 15 ms run fits in a quiet moment more
 * often than a 200 ms one (on the H200, s25c3, it read 0.2x above the
 * pairs on average, each spread +-0.2x over three rounds). The 1 s target
 * is judged on the median (what a user waits).
 *
 * usage: bench_rewrite [SMALL LARGE [REPEAT]]   (default 10000 100000 7)
 * BENCH_REWRITE_PHASE=NAME (a row's name) runs only that phase, for a
 * profiler; BENCH_REWRITE_RAW=1 prints every run's time to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "graph/graph.h"
#include "rewrite/check.h"
#include "rewrite/pass.h"
#include "rewrite/reach.h"
#include "rewrite_graphs.h"

enum { REPEAT_DEFAULT = 7, REPEAT_MAX = 101 };

/* System CPU time of the process so far (page faults, mmap and munmap of
 * large blocks): the table's figures include it; the all-passes row also
 * prints it apart. */
static double sys_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}
static double last_sys; /* of the last run_phase */

static double cpu_now(void)
{
    struct timespec c;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    return (double)c.tv_sec + c.tv_nsec * 1e-9;
}

enum { P_CONTROL, P_FUSION, P_DEFER, P_REDUCE, P_ALL, P_CHECK, P_CLONE, P_WALK, P_REACH, PHASES };
static const char *const phase_names[PHASES] = {
    "control-deps", "fusion-legality", "defer-dealloc", "reduce",      "all passes",
    "check",        "clone (ref)",     "walk (ref)",    "reach (ref)"};

/* The walk reference: every node's out-edges to their heads and back
 * through the heads' in-edges, reading type and stream at each end: what
 * a pass's edge-by-edge look at the graph costs with nothing else, the
 * memory hierarchy's ratio for the graph's own layout. */
static volatile uint64_t walk_sink;
static void walk(const sg_graph_t *g)
{
    uint64_t h = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        const sg_node_t *n = &g->nodes[v];
        if (n->removed) continue;
        for (uint32_t k = 0; k < n->n_out; k++) {
            const sg_node_t *t = &g->nodes[g->edges[n->out[k]].to];
            h += (uint64_t)t->type * 31 + t->stream;
            for (uint32_t j = 0; j < t->n_in; j++) h ^= g->edges[t->in[j]].from;
        }
    }
    walk_sink = h;
}
#define RATIO_TARGET 11.0
#define ALL_TARGET_S 1.0

static double run_phase(const sg_graph_t *g, int phase)
{
    static const char *const all[] = {"control-deps", "fusion-legality", "defer-dealloc", "reduce"};
    if (phase == P_WALK) {
        double t0 = cpu_now();
        walk(g);
        return cpu_now() - t0;
    }
    if (phase == P_REACH) { /* the reachability snapshot every pass starts from */
        double t0 = cpu_now();
        sg_reach_t *r = NULL;
        int rc = sg_reach_build(g, 0, &r);
        double t = cpu_now() - t0;
        if (rc) die("reach", rc);
        sg_reach_destroy(r);
        return t;
    }
    if (phase == P_CLONE) {
        double t0 = cpu_now();
        sg_graph_t *c = sg_graph_clone(g);
        double t = cpu_now() - t0;
        if (!c) die("clone", SG_ENOMEM);
        sg_graph_destroy(c);
        return t;
    }
    sg_graph_t *c = sg_graph_clone(g);
    if (!c) die("clone", SG_ENOMEM);
    double s0 = sys_now();
    double t0 = cpu_now();
    int rc;
    if (phase == P_CHECK) {
        sg_check_result_t res;
        rc = sg_check_run(c, NULL, &res);
        sg_check_result_free(&res);
    } else if (phase == P_ALL) {
        rc = sg_rewrite_run(c, all, 4, NULL);
    } else {
        rc = sg_rewrite_run(c, &all[phase], 1, NULL);
    }
    double t = cpu_now() - t0;
    last_sys = sys_now() - s0;
    if (rc) die(phase_names[phase], rc);
    sg_graph_destroy(c);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of n sorted values. */
static double median(const double *v, int n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    uint32_t sizes[2] = {10000, 100000};
    int repeat = REPEAT_DEFAULT;
    if (argc == 3 || argc == 4) {
        sizes[0] = (uint32_t)strtoul(argv[1], NULL, 10);
        sizes[1] = (uint32_t)strtoul(argv[2], NULL, 10);
        if (argc == 4) repeat = atoi(argv[3]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: bench_rewrite [SMALL LARGE [REPEAT]]\n");
        return 2;
    }
    if (sizes[0] < 2 * STREAMS + 16 || sizes[1] <= sizes[0] || repeat < 1 || repeat > REPEAT_MAX) {
        fprintf(stderr, "bench_rewrite: need %d <= SMALL < LARGE and 1 <= REPEAT <= %d\n",
                2 * STREAMS + 16, REPEAT_MAX);
        return 2;
    }
    /* BENCH_REWRITE_PHASE=NAME runs that phase alone (for a profiler); the
     * other rows then read 0 */
    int only = -1;
    const char *want = getenv("BENCH_REWRITE_PHASE");
    for (int p = 0; want && p < PHASES; p++)
        if (strcmp(want, phase_names[p]) == 0) only = p;
    if (want && only < 0) {
        fprintf(stderr, "bench_rewrite: BENCH_REWRITE_PHASE=%s is not a phase\n", want);
        return 2;
    }
    /* BENCH_REWRITE_RAW=1 prints every run's time to stderr ("raw PHASE SIZE
     * REP MS"), for an analysis of its own (pairs of runs next in time) */
    const bool raw = getenv("BENCH_REWRITE_RAW") != NULL;
    sg_graph_t *g[2] = {build(sizes[0]), build(sizes[1])};
    static double t[2][PHASES][REPEAT_MAX], sys_all[2][REPEAT_MAX];
    for (int rep = 0; rep < repeat; rep++)
        for (int p = 0; p < PHASES; p++)
            for (int i = 0; i < 2; i++)
            {
                t[i][p][rep] = only < 0 || only == p ? run_phase(g[i], p) : 0.0;
                if (p == P_ALL) sys_all[i][rep] = only < 0 || only == p ? last_sys : 0.0;
                if (raw && (only < 0 || only == p))
                    fprintf(stderr, "raw %s %u %d %.4f\n", phase_names[p], sizes[i], rep,
                            t[i][p][rep] * 1e3);
            }
    sg_check_result_t res;
    sg_check_run(g[1], NULL, &res);
    printf("bench_rewrite: %u streams; %u nodes / %u edges and %u nodes / %u edges; %zu hazards "
           "in the large input (frees before the join)\n",
           STREAMS, sg_graph_node_count(g[0]), sg_graph_edge_count(g[0]), sg_graph_node_count(g[1]),
           sg_graph_edge_count(g[1]), res.n);
    sg_check_result_free(&res);
    printf("CPU time, median of %d runs (best in brackets); linear code gives ~%.0fx; ratios of "
           "the medians, of the best runs, and the median of each run's pair (large/small, run "
           "one after the other), on which the target is judged\n",
           repeat, (double)sizes[1] / sizes[0]);
    printf("%-16s %16s %18s %8s %8s %8s  %-20s %s\n", "phase", "small ms", "large ms", "ratio",
           "(best)", "(pairs)", "target", "");
    bool all_met = true;
    for (int p = 0; p < PHASES; p++) {
        if (only >= 0 && p != only) continue;
        double m[2], b[2], pr[REPEAT_MAX];
        for (int k = 0; k < repeat; k++) pr[k] = t[0][p][k] > 0 ? t[1][p][k] / t[0][p][k] : 0;
        qsort(pr, (size_t)repeat, sizeof pr[0], cmp_double);
        double rp = median(pr, repeat);
        for (int i = 0; i < 2; i++) {
            qsort(t[i][p], (size_t)repeat, sizeof t[i][p][0], cmp_double);
            m[i] = median(t[i][p], repeat);
            b[i] = t[i][p][0];
        }
        double r = m[1] / m[0], rb = b[1] / b[0];
        char small[32], large[32], target[32];
        snprintf(target, sizeof target, "%s", p >= P_CLONE ? "(reference)" : "-");
        snprintf(small, sizeof small, "%.2f (%.2f)", m[0] * 1e3, b[0] * 1e3);
        snprintf(large, sizeof large, "%.2f (%.2f)", m[1] * 1e3, b[1] * 1e3);
        const char *verdict = "";
        if (p <= P_ALL) {
            bool met = rp <= RATIO_TARGET;
            if (p == P_ALL) {
                met = met && m[1] <= ALL_TARGET_S;
                snprintf(target, sizeof target, "<= %.0fx, <= %.0f ms", RATIO_TARGET,
                         ALL_TARGET_S * 1e3);
                all_met = met;
            } else {
                snprintf(target, sizeof target, "<= %.0fx", RATIO_TARGET);
            }
            verdict = met ? "met" : "MISSED";
        }
        printf("%-16s %16s %18s %7.2fx %7.2fx %7.2fx  %-20s %s\n", phase_names[p], small, large, r,
               rb, rp, target, verdict);
    }
    if (only < 0 || only == P_ALL) {
        for (int i = 0; i < 2; i++) qsort(sys_all[i], (size_t)repeat, sizeof sys_all[i][0], cmp_double);
        printf("all passes, system time within (median): small %.2f ms, large %.2f ms\n",
               median(sys_all[0], repeat) * 1e3, median(sys_all[1], repeat) * 1e3);
    }
    if (only < 0 || only == P_ALL)
        printf("targets (all passes): at most %.0f ms for the large graph (median), at most %.0fx "
               "(median of the pairs): %s\n",
               ALL_TARGET_S * 1e3, RATIO_TARGET, all_met ? "met" : "MISSED");
    sg_graph_destroy(g[0]);
    sg_graph_destroy(g[1]);
    return 0;
}
