/* bench_dot.c: how long `sgcap dot B -o B.svg` takes, Graphviz included, on
 * synthetic captures shaped like real ones: a main stream running a
 * repeated layer (a short periodic chain of kernels), forks to two side
 * streams that run chains of their own and join back, a copy stream that
 * feeds the main stream through events, memsets and graph allocations here
 * and there. Sizes 1,000, 3,000 and 20,000 nodes by default (the goals of
 * issue 16: at most 2 s for 1,000 nodes and 10 s for 20,000, drawing
 * folded to the default --max-nodes), plus the 1,000-node graph drawn
 * unfolded (--max-nodes 0) beside it: the ratio is what folding buys.
 * Prints wall and child CPU seconds per run and the SVG size.
 *
 * usage: bench_dot SGCAP [DIR [N...]]   (default: a temporary directory,
 * 1000 3000 20000); with SGCAP = "-" it only writes the bundles. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "graph/bundle.h"
#include "graph/graph.h"

enum { STREAMS = 4, BUFFERS = 64 };

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_dot: %s failed: %s\n", what, sg_strerror(rc));
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
    uint32_t ev[STREAMS];
    uint64_t seq;
    uint32_t target;
} gen_t;

static bool room(const gen_t *s, uint32_t n)
{
    return s->g->n_nodes + n <= s->target;
}

static sg_node_id_t add(gen_t *s, sg_node_type_t type, uint32_t stream)
{
    sg_node_id_t id;
    int rc = sg_graph_add_node(s->g, type, stream, s->seq++, &id);
    if (rc) die("node", rc);
    if (s->last[stream] != SG_NONE &&
        (rc = sg_graph_add_edge(s->g, s->last[stream], id, SG_EDGE_STREAM, SG_NONE, NULL)))
        die("edge", rc);
    s->last[stream] = id;
    return id;
}

static void kernel(gen_t *s, uint32_t stream, const char *name, uint32_t grid)
{
    sg_node_id_t id = add(s, SG_NODE_KERNEL, stream);
    if (sg_node_set_kernel_name(s->g, id, name)) die("kernel name", SG_ENOMEM);
    sg_kernel_t *k = &sg_graph_node(s->g, id)->u.kernel;
    k->grid[0] = grid, k->grid[1] = k->grid[2] = 1;
    k->block[0] = 256, k->block[1] = k->block[2] = 1;
    uint32_t b = rnd(BUFFERS);
    sg_node_add_access(s->g, id, b, 0, 1 << 20, SG_ACCESS_READWRITE);
}

/* record on `from`, wait on `to`: one event edge */
static void sync_streams(gen_t *s, uint32_t from, uint32_t to)
{
    sg_node_id_t rec = add(s, SG_NODE_EVENT_RECORD, from);
    sg_graph_node(s->g, rec)->u.event = s->ev[from];
    sg_node_id_t wait = add(s, SG_NODE_EVENT_WAIT, to);
    sg_graph_node(s->g, wait)->u.event = s->ev[from];
    int rc = sg_graph_add_edge(s->g, rec, wait, SG_EDGE_EVENT, s->ev[from], NULL);
    if (rc) die("event edge", rc);
}

static const char *const layer[] = {
    "_Z13layernorm_fwdPfPKfS1_S1_i", "_Z9gemm_tileILi128ELi64EEvPKfS1_Pfiii",
    "_Z13bias_gelu_fwdPfPKfi", "_Z9gemm_tileILi128ELi64EEvPKfS1_Pfiii", "_Z12residual_addPfPKfi"};
static const char *const side[] = {"_Z17attention_partialPfPKfS1_ii", "_Z11softmax_rowPfi",
                                   "_Z18reduce_partial_sumPfPKfi"};

static sg_graph_t *build(uint32_t n)
{
    rng_state = 0x9e3779b97f4a7c15ull ^ n;
    gen_t s = {.g = sg_graph_create(), .target = n};
    if (!s.g) die("create", SG_ENOMEM);
    s.g->program = strdup("bench_dot");
    for (uint32_t i = 0; i < STREAMS; i++) {
        s.last[i] = SG_NONE;
        if (sg_graph_add_stream(s.g, NULL, 0x1000 + i, NULL) ||
            sg_graph_add_event(s.g, NULL, 0x2000 + i, &s.ev[i]))
            die("tables", SG_ENOMEM);
    }
    for (uint32_t b = 0; b < BUFFERS; b++)
        sg_graph_add_buffer(s.g, SG_BUFFER_DEVICE, 0x7f0000000000ull + ((uint64_t)b << 24), 1 << 24,
                            NULL);
    while (room(&s, 1)) {
        uint32_t r = rnd(100);
        if (r < 60) { /* a few layers on the main stream */
            uint32_t reps = 1 + rnd(4);
            for (uint32_t i = 0; i < reps * 5 && room(&s, 1); i++)
                kernel(&s, 0, layer[i % 5], 1024);
        } else if (r < 80 && room(&s, 24)) { /* fork to s1 and s2, chains there, join */
            sync_streams(&s, 0, 1);
            sync_streams(&s, 0, 2);
            for (uint32_t t = 1; t <= 2; t++) {
                uint32_t len = 2 + rnd(6);
                for (uint32_t i = 0; i < len; i++)
                    kernel(&s, t, side[(i * t) % 3], 128 * t);
            }
            sync_streams(&s, 1, 0);
            sync_streams(&s, 2, 0);
        } else if (r < 90 && room(&s, 3)) { /* the copy stream feeds the main one */
            sg_node_id_t c = add(&s, SG_NODE_MEMCPY, 3);
            sg_memcpy_t *m = &sg_graph_node(s.g, c)->u.memcpy;
            m->width = 1 << 20, m->height = m->depth = 1, m->kind = SG_COPY_H2D;
            sync_streams(&s, 3, 0);
        } else if (room(&s, 1)) {
            sg_node_id_t z = add(&s, SG_NODE_MEMSET, 0);
            sg_memset_t *m = &sg_graph_node(s.g, z)->u.memset;
            m->element_size = 4, m->width = 1 << 18, m->height = 1;
        }
    }
    return s.g;
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double children_cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

/* Run `sgcap dot [extra] B -o OUT`; its stderr (the folding summary) goes to ours. */
static int draw(const char *sgcap, const char *bundle, const char *out, const char *extra,
                double *secs, double *cpu)
{
    double c0 = children_cpu(), t0 = wall();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (extra)
            execl(sgcap, sgcap, "dot", extra, "0", bundle, "-o", out, (char *)NULL);
        else
            execl(sgcap, sgcap, "dot", bundle, "-o", out, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0) return -1;
    *secs = wall() - t0;
    *cpu = children_cpu() - c0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(p);
    return 0;
}

/* Seconds (wall) of one drawing; 0 when only writing bundles. */
static double one(const char *sgcap, const char *dir, uint32_t n, const char *extra)
{
    char bundle[4096], out[4200];
    snprintf(bundle, sizeof bundle, "%s/dot_%u.sgraph", dir, n);
    snprintf(out, sizeof out, "%s/dot_%u%s.svg", dir, n, extra ? "_full" : "");
    struct stat st;
    if (stat(bundle, &st) != 0) {
        sg_graph_t *g = build(n);
        sg_diag_t diag;
        int rc = sg_bundle_write(g, bundle, NULL, 0, SG_BUNDLE_OVERWRITE, &diag);
        if (rc) die(diag.message, rc);
        printf("bench_dot: %u nodes, %u edges, %u streams -> %s\n", sg_graph_node_count(g),
               sg_graph_edge_count(g), g->n_streams, bundle);
        sg_graph_destroy(g);
    }
    if (strcmp(sgcap, "-") == 0) return 0;
    double secs = 0, cpu = 0;
    fflush(stdout);
    int rc = draw(sgcap, bundle, out, extra, &secs, &cpu);
    long long bytes = stat(out, &st) == 0 ? (long long)st.st_size : -1;
    const char *goal = extra        ? ""
                       : n == 1000  ? "  (goal: 2 s)"
                       : n == 20000 ? "  (goal: 10 s)"
                                    : "";
    printf("bench_dot: %6u nodes%-16s %7.2f s wall %7.2f s cpu  svg %lld bytes  exit %d%s\n", n,
           extra ? " (--max-nodes 0)" : "", secs, cpu, bytes, rc, goal);
    fflush(stdout);
    return secs;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_dot SGCAP|- [DIR [N...]]\n");
        return 2;
    }
    char tmpl[] = "/tmp/sgcap-bench-dot-XXXXXX";
    const char *dir = argc > 2 ? argv[2] : mkdtemp(tmpl);
    if (!dir) {
        perror("bench_dot: mkdtemp");
        return 1;
    }
    uint32_t sizes[16] = {1000, 3000, 20000}, n_sizes = 3;
    if (argc > 3) {
        n_sizes = 0;
        for (int i = 3; i < argc && n_sizes < 16; i++)
            sizes[n_sizes++] = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    for (uint32_t i = 0; i < n_sizes; i++) {
        if (!sizes[i]) continue;
        double folded = one(argv[1], dir, sizes[i], NULL);
        if (sizes[i] == 1000) {
            double full = one(argv[1], dir, sizes[i], "--max-nodes");
            if (folded > 0)
                printf("bench_dot: 1000 nodes unfolded / folded = %.1fx the time\n", full / folded);
        }
    }
    if (argc <= 2) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
