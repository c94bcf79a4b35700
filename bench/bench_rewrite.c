/* bench_rewrite.c: cost of the rewrite passes and the hazard check at
 * scale. Builds a synthetic multi-stream capture (8 streams; kernels with
 * reads and writes of stream-private buffers; record/wait pairs between
 * streams; data passed between streams in graph allocations written on one
 * stream, read on another and freed on the first, half of them before the
 * join (the frees defer-dealloc must move, and the only hazards), their
 * addresses reused from a pool of 16; measured durations on some kernels)
 * at 10k and 100k nodes, then times each pass
 * alone (with the ordering verifier on, as the CLI runs it), all passes in
 * one run, and the check. Prints ms and ns per node for each, and the
 * 100k/10k ratio, measured side by side in one run: linear code gives ~10x;
 * the targets are at most 1 s at 100k for all passes and at most 11x. Each
 * figure is the best of REPEAT runs of CPU time, sizes interleaved.
 *
 * usage: bench_rewrite [SMALL LARGE]   (default 10000 100000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "rewrite/check.h"
#include "rewrite/pass.h"

enum { STREAMS = 8, REPEAT = 5 };

static double cpu_now(void)
{
    struct timespec c;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    return (double)c.tv_sec + c.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_rewrite: %s failed: %s\n", what, sg_strerror(rc));
    exit(1);
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

typedef struct {
    sg_graph_t *g;
    sg_node_id_t last[STREAMS];
    uint64_t seq;
} builder_t;

static sg_node_id_t add(builder_t *b, sg_node_type_t t, uint32_t s)
{
    sg_node_id_t id;
    int rc = sg_graph_add_node(b->g, t, s, b->seq++, &id);
    if (rc) die("add_node", rc);
    if (t == SG_NODE_KERNEL) {
        sg_node_set_kernel_name(b->g, id, rnd(2) ? "_Z6k_fillPjPKjm" : "_Z5k_usePjPKjm");
        sg_kernel_t *k = &sg_graph_node(b->g, id)->u.kernel;
        k->grid[0] = 1024u << rnd(2);
        k->grid[1] = k->grid[2] = 1;
        k->block[0] = 256;
        k->block[1] = k->block[2] = 1;
        if (rnd(4) == 0) sg_graph_node(b->g, id)->duration_ns = 1000.0 + rnd(20000);
    }
    if (b->last[s] != SG_NONE) sg_graph_add_edge(b->g, b->last[s], id, SG_EDGE_STREAM, SG_NONE, NULL);
    b->last[s] = id;
    return id;
}

/* s waits for t's latest work (a record on t, a wait on s). */
static void wait_for(builder_t *b, uint32_t s, uint32_t t, sg_node_id_t next)
{
    if (b->last[t] == SG_NONE || b->last[t] == next) return;
    sg_graph_add_edge(b->g, b->last[t], next, SG_EDGE_EVENT, t % 4, NULL);
    (void)s;
}

static sg_graph_t *build(uint32_t n)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    builder_t b = {sg_graph_create(), {0}, 0};
    sg_graph_t *g = b.g;
    for (int s = 0; s < STREAMS; s++) {
        sg_graph_add_stream(g, NULL, 0, NULL);
        b.last[s] = SG_NONE;
    }
    for (int e = 0; e < 4; e++) sg_graph_add_event(g, NULL, 0, NULL);
    g->device.mem_bandwidth_gbs = 4800;
    /* per-stream device buffers (each stream writes its own), plus a pool
     * of graph-allocation addresses reused as allocations are freed */
    uint32_t own[STREAMS][8];
    for (int s = 0; s < STREAMS; s++)
        for (int i = 0; i < 8; i++)
            sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000000ull + ((uint64_t)(s * 8 + i) << 22),
                                1u << 22, &own[s][i]);
    enum { POOL = 16 };
    uint64_t pool_base = 0x7e0000000000ull;
    bool pool_busy[POOL] = {false};
    /* the capture: s0 forks every stream, then work with cross-stream
     * reads and allocations, then every stream joins s0 */
    sg_node_id_t root = add(&b, SG_NODE_KERNEL, 0);
    for (int s = 1; s < STREAMS; s++) {
        sg_node_id_t k = add(&b, SG_NODE_KERNEL, (uint32_t)s);
        sg_graph_add_edge(g, root, k, SG_EDGE_EVENT, 0, NULL);
    }
    while (b.seq + 2 * STREAMS + 8 < n) {
        uint32_t s = rnd(STREAMS);
        uint32_t r = rnd(100);
        if (r < 4) {
            /* an allocation on s, written there, read on t after a wait,
             * freed on s: half the time after t joins back (correct and in
             * place), half the time before (the free must be deferred) */
            uint32_t slot = rnd(POOL);
            if (pool_busy[slot]) continue;
            pool_busy[slot] = true;
            uint32_t t = (s + 1 + rnd(STREAMS - 1)) % STREAMS;
            uint32_t buf;
            sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, pool_base + ((uint64_t)slot << 20), 1u << 20,
                                &buf);
            sg_node_id_t a = add(&b, SG_NODE_MEM_ALLOC, s);
            sg_graph_node(g, a)->u.mem.buffer = buf;
            g->buffers[buf].alloc_node = a;
            sg_node_id_t w = add(&b, SG_NODE_KERNEL, s);
            sg_node_add_access(g, w, buf, 0, 1u << 20, SG_ACCESS_WRITE);
            sg_node_id_t u = add(&b, SG_NODE_KERNEL, t);
            wait_for(&b, t, s, u);
            sg_node_add_access(g, u, buf, 0, 1u << 20, SG_ACCESS_READ);
            sg_node_add_access(g, u, own[t][rnd(8)], 0, 1u << 22, SG_ACCESS_WRITE);
            sg_node_id_t o = add(&b, SG_NODE_KERNEL, s);
            sg_node_add_access(g, o, own[s][rnd(8)], 0, 1u << 22, SG_ACCESS_WRITE);
            bool joined = rnd(2);
            sg_node_id_t f = add(&b, SG_NODE_MEM_FREE, s);
            sg_graph_node(g, f)->u.mem.buffer = buf;
            if (joined) {
                wait_for(&b, s, t, f);
            } else {
                sg_node_id_t k = add(&b, SG_NODE_KERNEL, s); /* joins t after the free */
                wait_for(&b, s, t, k);
            }
            pool_busy[slot] = false; /* the next allocation of this slot follows on s or later */
        } else if (r < 20) {
            /* s waits for t (an event between the streams, no data) */
            uint32_t t = (s + 1 + rnd(STREAMS - 1)) % STREAMS;
            sg_node_id_t k = add(&b, SG_NODE_KERNEL, s);
            wait_for(&b, s, t, k);
            sg_node_add_access(g, k, own[s][rnd(8)], 0, 1u << 22, SG_ACCESS_READWRITE);
        } else if (r < 22) {
            sg_node_id_t m = add(&b, SG_NODE_MEMSET, s);
            sg_node_add_access(g, m, own[s][rnd(8)], 0, 1u << 22, SG_ACCESS_WRITE);
        } else {
            /* stream-private work */
            sg_node_id_t k = add(&b, SG_NODE_KERNEL, s);
            sg_node_add_access(g, k, own[s][rnd(8)], 0, 1u << 22, SG_ACCESS_READ);
            sg_node_add_access(g, k, own[s][rnd(8)], 0, 1u << 22, SG_ACCESS_WRITE);
        }
    }
    sg_node_id_t end = add(&b, SG_NODE_KERNEL, 0);
    for (uint32_t s = 1; s < STREAMS; s++) wait_for(&b, 0, s, end);
    return g;
}

enum { P_CONTROL, P_FUSION, P_DEFER, P_REDUCE, P_ALL, P_CHECK, PHASES };
static const char *const phase_names[PHASES] = {"control-deps", "fusion-legality", "defer-dealloc",
                                                "reduce", "all passes", "check"};

static double run_phase(const sg_graph_t *g, int phase)
{
    static const char *const all[] = {"control-deps", "fusion-legality", "defer-dealloc", "reduce"};
    sg_graph_t *c = sg_graph_clone(g);
    if (!c) die("clone", SG_ENOMEM);
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
    if (rc) die(phase_names[phase], rc);
    sg_graph_destroy(c);
    return t;
}

int main(int argc, char **argv)
{
    uint32_t sizes[2] = {10000, 100000};
    if (argc == 3) {
        sizes[0] = (uint32_t)strtoul(argv[1], NULL, 10);
        sizes[1] = (uint32_t)strtoul(argv[2], NULL, 10);
    }
    sg_graph_t *g[2] = {build(sizes[0]), build(sizes[1])};
    double best[2][PHASES];
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < PHASES; p++) best[i][p] = 1e30;
    for (int rep = 0; rep < REPEAT; rep++)
        for (int p = 0; p < PHASES; p++)
            for (int i = 0; i < 2; i++) {
                double t = run_phase(g[i], p);
                if (t < best[i][p]) best[i][p] = t;
            }
    sg_check_result_t res;
    sg_check_run(g[1], NULL, &res);
    printf("bench_rewrite: %u streams; %u nodes / %u edges and %u nodes / %u edges; %zu hazards "
           "in the large input (frees before the join)\n",
           STREAMS, sg_graph_node_count(g[0]), sg_graph_edge_count(g[0]), sg_graph_node_count(g[1]),
           sg_graph_edge_count(g[1]), res.n);
    sg_check_result_free(&res);
    printf("%-16s %12s %10s %12s %10s %8s\n", "phase", "small ms", "ns/node", "large ms", "ns/node",
           "ratio");
    int bad = 0;
    for (int p = 0; p < PHASES; p++) {
        double r = best[1][p] / best[0][p];
        printf("%-16s %12.2f %10.0f %12.2f %10.0f %7.2fx\n", phase_names[p], best[0][p] * 1e3,
               best[0][p] * 1e9 / sizes[0], best[1][p] * 1e3, best[1][p] * 1e9 / sizes[1], r);
        if (p == P_ALL && (best[1][p] > 1.0 || r > 11.0)) bad = 1;
    }
    printf("targets (all passes): at most 1 s for the large graph, at most 11x: %s\n",
           bad ? "MISSED" : "met");
    sg_graph_destroy(g[0]);
    sg_graph_destroy(g[1]);
    return 0;
}
