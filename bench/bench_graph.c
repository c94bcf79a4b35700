/* bench_graph.c: cost of the graph model and the bundle at scale. Builds a
 * synthetic capture (8 streams, kernels with parameters and accesses,
 * copies, memsets, record/wait pairs joining streams) at 10k and 100k nodes,
 * then times build, serialize (sg_bundle_to_json), write (sg_bundle_write,
 * fsyncs included), read (sg_bundle_read) and dump (sg_dump_string). Prints
 * ns per node per phase and the 100k/10k ratio of each, measured side by
 * side in one run: linear code gives ~10x; the target is at most 11x. Each
 * phase is the best of several repetitions, the two sizes interleaved. Costs are CPU time of this
 * process (build machines are shared: wall time there also measures the
 * neighbours), with wall time beside them; the wall time of write includes
 * waiting for fsync.
 *
 * usage: bench_graph [DIR [SMALL LARGE]]   (default: a temporary directory,
 * 10000 and 100000 nodes) */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph/bundle.h"
#include "graph/graph.h"
#include "graph/views.h"
#include "bench_clock.h"

enum { STREAMS = 8, BUFFERS = 512, REPEAT = 3 };

typedef enum { BUILD, SERIALIZE, WRITE, READ, DUMP, PHASES } phase_t;
static const char *const phase_names[PHASES] = {"build", "serialize", "write", "read", "dump"};

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_graph: %s failed: %s\n", what, sg_strerror(rc));
    exit(1);
}

/* Deterministic xorshift, so both sizes build the same mix. */
static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static void stream_edge(sg_graph_t *g, sg_node_id_t from, sg_node_id_t to)
{
    int rc;
    if (from != SG_NONE && (rc = sg_graph_add_edge(g, from, to, SG_EDGE_STREAM, SG_NONE, NULL)))
        die("edge", rc);
}

/* n nodes: program order per stream, cross-stream joins through events. */
static sg_graph_t *build(uint32_t n)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    sg_graph_t *g = sg_graph_create();
    if (!g) die("create", SG_ENOMEM);
    g->program = strdup("bench_graph");
    g->device.name = strdup("NVIDIA H200");
    uint32_t ev[STREAMS];
    for (uint32_t s = 0; s < STREAMS; s++) {
        sg_graph_add_stream(g, NULL, 0x55e3a3f01a30ull + 0x2b0 * s, NULL);
        sg_graph_add_event(g, NULL, 0x55e3a3f9c6d0ull + 0x70 * s, &ev[s]);
    }
    for (uint32_t b = 0; b < BUFFERS; b++)
        sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f4c1a000000ull + ((uint64_t)b << 22), 1 << 22,
                            NULL);
    sg_graph_add_image(g, SG_IMAGE_FATBIN, "52061060d7e719fb", 24604, NULL);
    sg_node_id_t last[STREAMS];
    for (uint32_t s = 0; s < STREAMS; s++)
        last[s] = SG_NONE;
    uint64_t seq = 0;
    uint32_t offs[5] = {0, 8, 16, 20, 24}, sizes[5] = {8, 8, 4, 4, 8};
    uint8_t bytes[32];
    while (g->n_nodes < n) {
        uint32_t s = rnd(STREAMS), r = rnd(100);
        sg_node_id_t id;
        int rc;
        if (r < 8 && g->n_nodes + 2 <= n) {
            /* record on s, wait on another stream t: an event edge joins them */
            uint32_t t = (s + 1 + rnd(STREAMS - 1)) % STREAMS;
            sg_node_id_t rec, wait;
            if ((rc = sg_graph_add_node(g, SG_NODE_EVENT_RECORD, s, seq++, &rec))) die("node", rc);
            sg_graph_node(g, rec)->u.event = ev[s];
            stream_edge(g, last[s], rec);
            last[s] = rec;
            if ((rc = sg_graph_add_node(g, SG_NODE_EVENT_WAIT, t, seq++, &wait))) die("node", rc);
            sg_graph_node(g, wait)->u.event = ev[s];
            stream_edge(g, last[t], wait);
            if ((rc = sg_graph_add_edge(g, rec, wait, SG_EDGE_EVENT, ev[s], NULL))) die("edge", rc);
            last[t] = wait;
            continue;
        }
        sg_node_type_t type = r < 80 ? SG_NODE_KERNEL : r < 92 ? SG_NODE_MEMCPY : SG_NODE_MEMSET;
        if ((rc = sg_graph_add_node(g, type, s, seq++, &id))) die("node", rc);
        uint32_t b_in = rnd(BUFFERS), b_out = rnd(BUFFERS);
        uint64_t a_in = g->buffers[b_in].address, a_out = g->buffers[b_out].address;
        if (type == SG_NODE_KERNEL) {
            sg_node_set_kernel_name(g, id, (r & 1) ? "_Z6k_axpbPfPKfffm" : "_Z8k_squarePfm");
            memcpy(bytes, &a_out, 8);
            memcpy(bytes + 8, &a_in, 8);
            for (int i = 16; i < 32; i++)
                bytes[i] = (uint8_t)rnd(256);
            if ((rc = sg_node_set_kernel_params(g, id, 5, offs, sizes, bytes, 32)))
                die("params", rc);
            sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
            k->image = 0;
            k->grid[0] = 4096, k->grid[1] = k->grid[2] = 1;
            k->block[0] = 256, k->block[1] = k->block[2] = 1;
            k->func_handle = 0x55e3a41c0000ull;
            sg_node_add_access(g, id, b_in, 0, 1 << 22, SG_ACCESS_READ);
            sg_node_add_access(g, id, b_out, 0, 1 << 22, SG_ACCESS_WRITE);
        } else if (type == SG_NODE_MEMCPY) {
            sg_memcpy_t *c = &sg_graph_node(g, id)->u.memcpy;
            c->dst = a_out, c->src = a_in, c->width = 1 << 22, c->height = c->depth = 1;
            c->kind = SG_COPY_D2D;
            sg_node_add_access(g, id, b_in, 0, 1 << 22, SG_ACCESS_READ);
            sg_node_add_access(g, id, b_out, 0, 1 << 22, SG_ACCESS_WRITE);
        } else {
            sg_memset_t *m = &sg_graph_node(g, id)->u.memset;
            m->dst = a_out, m->value = 0, m->element_size = 4, m->width = 1 << 20, m->height = 1;
            sg_node_add_access(g, id, b_out, 0, 1 << 22, SG_ACCESS_WRITE);
        }
        stream_edge(g, last[s], id);
        last[s] = id;
    }
    return g;
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(p);
    return 0;
}

typedef struct {
    double cpu[PHASES], wall[PHASES]; /* best of REPEAT, seconds */
    uint32_t edges;
    size_t json_bytes;
} result_t;

static void keep_best(result_t *r, const stamp_t a[PHASES], const stamp_t b[PHASES])
{
    for (int p = 0; p < PHASES; p++) {
        double c = b[p].cpu - a[p].cpu, w = b[p].wall - a[p].wall;
        if (c < r->cpu[p]) r->cpu[p] = c;
        if (w < r->wall[p]) r->wall[p] = w;
    }
}

static void result_init(result_t *r)
{
    for (int p = 0; p < PHASES; p++)
        r->cpu[p] = r->wall[p] = 1e30;
}

/* One repetition of every phase for n nodes, keeping the best times. */
static void measure_once(uint32_t n, const char *dir, result_t *res)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_%u.sgraph", dir, n);
    stamp_t a[PHASES], b[PHASES];
    sg_diag_t diag;
    a[BUILD] = now();
    sg_graph_t *g = build(n);
    b[BUILD] = now();

    char *text = NULL;
    a[SERIALIZE] = now();
    int rc = sg_bundle_to_json(g, &text);
    b[SERIALIZE] = now();
    if (rc) die("serialize", rc);
    res->json_bytes = strlen(text);
    free(text);

    a[WRITE] = now();
    rc = sg_bundle_write(g, path, NULL, 0, SG_BUNDLE_OVERWRITE, &diag);
    b[WRITE] = now();
    if (rc) die(diag.message, rc);

    sg_graph_t *r = NULL;
    a[READ] = now();
    rc = sg_bundle_read(path, &r, &diag);
    b[READ] = now();
    if (rc) die(diag.message, rc);
    if (sg_graph_node_count(r) != n || sg_graph_edge_count(r) != sg_graph_edge_count(g))
        die("read back (counts differ)", SG_EFORMAT);

    char *dump = NULL;
    a[DUMP] = now();
    rc = sg_dump_string(r, &dump);
    b[DUMP] = now();
    if (rc) die("dump", rc);
    free(dump);

    keep_best(res, a, b);
    res->edges = sg_graph_edge_count(g);
    sg_graph_destroy(g);
    sg_graph_destroy(r);
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
    char tmpl[] = "/tmp/sgcap-bench-XXXXXX";
    const char *dir = argc > 1 ? argv[1] : NULL;
    uint32_t small = argc > 3 ? (uint32_t)strtoul(argv[2], NULL, 10) : 10000;
    uint32_t large = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 100000;
    if (!small || !large) {
        fprintf(stderr, "usage: bench_graph [DIR [SMALL LARGE]]\n");
        return 2;
    }
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("bench_graph: mkdtemp");
        return 1;
    }
    /* interleaved, so that a busy neighbour weighs on both sizes alike */
    result_t s, l;
    result_init(&s);
    result_init(&l);
    for (int rep = 0; rep < REPEAT; rep++) {
        measure_once(small, dir, &s);
        measure_once(large, dir, &l);
    }
    if (argc <= 1) rmdir(dir);

    printf("bench_graph: %u nodes (%u edges, graph.json %zu bytes) vs %u nodes (%u edges, "
           "%zu bytes), best of %d\n",
           small, s.edges, s.json_bytes, large, l.edges, l.json_bytes, REPEAT);
    printf("%-10s %11s %11s %7s   %11s %11s %7s\n", "", "cpu ns/node", "", "", "wall ns/node", "",
           "");
    printf("%-10s %11u %11u %7s   %11u %11u %7s\n", "phase", small, large, "ratio", small, large,
           "ratio");
    double cs = 0, cl = 0, ws = 0, wl = 0;
    for (int p = 0; p < PHASES; p++) {
        printf("%-10s %11.1f %11.1f %6.2fx   %11.1f %11.1f %6.2fx\n", phase_names[p],
               s.cpu[p] * 1e9 / small, l.cpu[p] * 1e9 / large, l.cpu[p] / s.cpu[p],
               s.wall[p] * 1e9 / small, l.wall[p] * 1e9 / large, l.wall[p] / s.wall[p]);
        cs += s.cpu[p], cl += l.cpu[p], ws += s.wall[p], wl += l.wall[p];
    }
    printf("%-10s %11.1f %11.1f %6.2fx   %11.1f %11.1f %6.2fx\n", "total", cs * 1e9 / small,
           cl * 1e9 / large, cl / cs, ws * 1e9 / small, wl * 1e9 / large, wl / ws);
    printf("nodes %.1fx; linear means a total ratio of at most %.1fx\n", (double)large / small,
           1.1 * large / small);
    return 0;
}
