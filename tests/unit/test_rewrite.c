/* test_rewrite.c: unit tests of rewrite/: the reachability oracle against
 * brute force, each pass on graphs built here (control-deps rule by rule,
 * fusion-legality barriers, defer-dealloc on the async_alloc pattern, a free
 * before a side-stream use, same-stream frees, interleaved use over four
 * streams, reuse and earlier release, reduce), the pass manager (registry,
 * reports, pass log, the verifier catching bad passes), and a property test
 * on random DAGs with random stream labels: after every pass every pair of
 * nodes ordered before is still ordered, and every pass is idempotent; the
 * report's JSON writer against jansson's own formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/views.h"
#include "rewrite/check.h"
#include "rewrite/fusion_legality.h"
#include "rewrite/json_writer.h"
#include "rewrite/pass.h"
#include "rewrite/reach.h"
#include "rewrite/rewrite_internal.h"

/* ---- building graphs ------------------------------------------------------------ */

static sg_node_id_t node(sg_graph_t *g, sg_node_type_t t, uint32_t s, uint64_t seq)
{
    sg_node_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_node(g, t, s, seq, &id), SG_OK);
    return id;
}

static sg_node_id_t kern(sg_graph_t *g, uint32_t s, uint64_t seq, uint32_t grid)
{
    sg_node_id_t id = node(g, SG_NODE_KERNEL, s, seq);
    char name[32];
    snprintf(name, sizeof name, "k%llu", (unsigned long long)seq);
    assert_int_equal(sg_node_set_kernel_name(g, id, name), SG_OK);
    sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
    k->grid[0] = grid;
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = 256;
    k->block[1] = k->block[2] = 1;
    return id;
}

static sg_edge_id_t edge(sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k,
                         uint32_t ev)
{
    sg_edge_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_edge(g, a, b, k, ev, &id), SG_OK);
    return id;
}

static void acc(sg_graph_t *g, sg_node_id_t n, uint32_t b, sg_access_mode_t m)
{
    assert_int_equal(sg_node_add_access(g, n, b, 0, sg_graph_buffer(g, b)->size, m), SG_OK);
}

static sg_graph_t *new_graph(uint32_t streams, uint32_t events)
{
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    for (uint32_t i = 0; i < streams; i++) assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
    for (uint32_t i = 0; i < events; i++) assert_int_equal(sg_graph_add_event(g, NULL, 0, NULL), SG_OK);
    return g;
}

static uint32_t buffer(sg_graph_t *g, sg_buffer_kind_t kind, uint64_t addr, uint64_t size)
{
    uint32_t id;
    assert_int_equal(sg_graph_add_buffer(g, kind, addr, size, &id), SG_OK);
    return id;
}

/* mem_alloc/mem_free node for buffer b */
static sg_node_id_t memnode(sg_graph_t *g, sg_node_type_t t, uint32_t s, uint64_t seq, uint32_t b)
{
    sg_node_id_t id = node(g, t, s, seq);
    sg_node_t *x = sg_graph_node(g, id);
    x->u.mem.buffer = b;
    x->u.mem.address = sg_graph_buffer(g, b)->address;
    if (t == SG_NODE_MEM_ALLOC) {
        x->u.mem.bytes = sg_graph_buffer(g, b)->size;
        sg_graph_buffer(g, b)->alloc_node = id;
    }
    return id;
}

static uint32_t count_edges(const sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, int kind)
{
    uint32_t n = 0, c = 0;
    const sg_edge_id_t *out = sg_graph_out_edges(g, a, &n);
    for (uint32_t i = 0; i < n; i++) {
        const sg_edge_t *e = sg_graph_edge(g, out[i]);
        if (e->to == b && (kind < 0 || (int)e->kind == kind)) c++;
    }
    return c;
}

static int run(sg_graph_t *g, const char *pass, sg_report_t *rep)
{
    const char *p[1] = {pass};
    return sg_rewrite_run(g, pass ? p : NULL, pass ? 1 : 0, rep);
}

static char *dump(const sg_graph_t *g)
{
    char *s = NULL;
    assert_int_equal(sg_dump_string(g, &s), SG_OK);
    char *p = strstr(s, "\npass log");
    if (p) p[1] = '\0';
    return s;
}

/* ---- brute-force reachability ------------------------------------------------------ */

typedef struct {
    uint32_t n, words;
    uint64_t *bits; /* n rows */
} closure_t;

static bool cl_get(const closure_t *c, uint32_t a, uint32_t b)
{
    return (c->bits[(size_t)a * c->words + b / 64] >> (b % 64)) & 1;
}

static closure_t closure(const sg_graph_t *g)
{
    closure_t c = {g->n_nodes, (g->n_nodes + 63) / 64, NULL};
    c.bits = calloc((size_t)c.n * c.words + 1, sizeof *c.bits);
    sg_node_id_t *order;
    uint32_t n;
    assert_int_equal(sg_graph_topo_order(g, &order, &n), SG_OK);
    for (uint32_t i = n; i-- > 0;) {
        sg_node_id_t v = order[i];
        uint64_t *row = c.bits + (size_t)v * c.words;
        row[v / 64] |= 1ull << (v % 64);
        const sg_node_t *x = sg_graph_node(g, v);
        for (uint32_t k = 0; k < x->n_out; k++) {
            const uint64_t *o = c.bits + (size_t)g->edges[x->out[k]].to * c.words;
            for (uint32_t w = 0; w < c.words; w++) row[w] |= o[w];
        }
    }
    free(order);
    return c;
}

/* ---- random graphs -------------------------------------------------------------------- */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* A random DAG with random stream labels. mode 0: captured-like (stream
 * chains, events as edges or external nodes, allocations freed on a random
 * stream, occasional gaps and extra control edges); mode 1: arbitrary edges
 * between earlier and later nodes, any node type, any stream or explicit. */
static sg_graph_t *random_graph(uint32_t n_nodes, int mode)
{
    uint32_t ns = 1 + rnd(5), ne = 1 + rnd(3), nb = 1 + rnd(6);
    sg_graph_t *g = new_graph(ns, ne);
    g->events[0].external = true;
    uint32_t bufs[8];
    for (uint32_t i = 0; i < nb; i++) {
        /* graph allocations share a pool so some overlap (reuse) */
        bool ga = rnd(2);
        uint64_t addr = ga ? 0x10000 + (uint64_t)rnd(3) * 0x1000 : 0x100000 + (uint64_t)i * 0x10000;
        bufs[i] = buffer(g, ga ? SG_BUFFER_GRAPH_ALLOC : SG_BUFFER_DEVICE, addr, 0x1000 + rnd(2) * 0x800);
    }
    g->device.mem_bandwidth_gbs = 1000;
    sg_node_id_t last[8];
    sg_node_id_t bound[4];
    for (uint32_t i = 0; i < 8; i++) last[i] = SG_NONE;
    for (uint32_t i = 0; i < 4; i++) bound[i] = SG_NONE;
    int alloc_state[8] = {0}; /* 0 none, 1 allocated, 2 freed */
    uint32_t waited[8] = {0};  /* bitmask of events the stream waited on */
    for (uint32_t i = 0; i < n_nodes; i++) {
        uint32_t s = rnd(ns);
        if (mode == 1 && rnd(8) == 0) s = SG_STREAM_EXPLICIT;
        sg_node_type_t t = SG_NODE_KERNEL;
        uint32_t r = rnd(20);
        uint32_t b = rnd(nb);
        bool graph_alloc = g->buffers[bufs[b]].kind == SG_BUFFER_GRAPH_ALLOC;
        if (r == 0) t = SG_NODE_HOST;
        else if (r == 1) t = SG_NODE_EVENT_RECORD;
        else if (r == 2) t = SG_NODE_EVENT_WAIT;
        else if (r == 3) t = SG_NODE_MEMCPY;
        else if (r == 4) t = SG_NODE_EMPTY;
        else if (r == 5 && graph_alloc && (mode == 1 || alloc_state[b] == 0)) t = SG_NODE_MEM_ALLOC;
        else if (r <= 7 && graph_alloc && (mode == 1 || alloc_state[b] == 1)) t = SG_NODE_MEM_FREE;
        else if (r == 8) t = SG_NODE_OPAQUE;
        sg_node_id_t v;
        if (t == SG_NODE_MEM_ALLOC || t == SG_NODE_MEM_FREE) {
            if (g->buffers[bufs[b]].alloc_node != SG_NONE && t == SG_NODE_MEM_ALLOC) t = SG_NODE_KERNEL;
        }
        if (t == SG_NODE_MEM_ALLOC || t == SG_NODE_MEM_FREE) {
            v = memnode(g, t, s, i, bufs[b]);
            alloc_state[b] = t == SG_NODE_MEM_ALLOC ? 1 : 2;
        } else if (t == SG_NODE_KERNEL) {
            v = kern(g, s, i, 1 + rnd(2));
            if (rnd(3) == 0) sg_graph_node(g, v)->duration_ns = 500.0 * (1 + rnd(8));
        } else {
            v = node(g, t, s, i);
            if (t == SG_NODE_EVENT_RECORD || t == SG_NODE_EVENT_WAIT) sg_graph_node(g, v)->u.event = 0;
        }
        if (t == SG_NODE_KERNEL || t == SG_NODE_MEMCPY) {
            uint32_t na = rnd(3);
            for (uint32_t k = 0; k < na; k++) {
                uint32_t bb = bufs[rnd(nb)];
                sg_access_mode_t modes[4] = {SG_ACCESS_READ, SG_ACCESS_WRITE, SG_ACCESS_READWRITE,
                                             SG_ACCESS_UNKNOWN};
                uint64_t size = g->buffers[bb].size;
                uint64_t off = rnd(2) ? 0 : size / 2;
                assert_int_equal(sg_node_add_access(g, v, bb, off, size - off, modes[rnd(4)]),
                                 SG_OK);
            }
        }
        if (mode == 0) {
            if (s < ns) {
                if (last[s] != SG_NONE && rnd(12) != 0) edge(g, last[s], v, SG_EDGE_STREAM, SG_NONE);
                for (uint32_t e = 0; e < ne; e++) {
                    if ((waited[s] >> e & 1) && bound[e] != SG_NONE && bound[e] != last[s] &&
                        count_edges(g, bound[e], v, -1) == 0)
                        edge(g, bound[e], v, SG_EDGE_EVENT, e);
                }
                waited[s] = 0;
                last[s] = v;
                if (rnd(4) == 0) bound[rnd(ne)] = v; /* record after v */
                if (rnd(4) == 0) waited[rnd(ns)] |= 1u << rnd(ne);
            }
            if (i > 0 && rnd(10) == 0) {
                sg_node_id_t a = rnd(i);
                if (count_edges(g, a, v, -1) == 0) edge(g, a, v, SG_EDGE_CONTROL, SG_NONE);
            }
        } else {
            uint32_t k = i ? rnd(4) : 0;
            for (uint32_t j = 0; j < k; j++) {
                sg_node_id_t a = rnd(i);
                sg_edge_kind_t kind = (sg_edge_kind_t)rnd(SG_EDGE_KIND_COUNT);
                edge(g, a, v, kind, kind == SG_EDGE_EVENT ? rnd(ne) : SG_NONE);
            }
        }
    }
    if (mode == 0) {
        /* join every stream into s0 at the end, most of the time */
        sg_node_id_t j = kern(g, 0, n_nodes, 1);
        for (uint32_t s = 0; s < ns; s++)
            if (last[s] != SG_NONE && rnd(8) != 0) edge(g, last[s], j, s ? SG_EDGE_EVENT : SG_EDGE_STREAM, s ? 0 : SG_NONE);
    }
    return g;
}

/* ---- reach oracle ------------------------------------------------------------------------ */

static void test_reach_matches_brute_force(void **state)
{
    (void)state;
    rng = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 200; round++) {
        sg_graph_t *g = random_graph(5 + rnd(80), round % 2);
        closure_t c = closure(g);
        for (unsigned flags = 0; flags < 4; flags++) {
            sg_reach_t *r = NULL;
            assert_int_equal(sg_reach_build(g, flags, &r), SG_OK);
            uint32_t n = g->n_nodes;
            for (uint32_t a = 0; a < n; a++)
                for (uint32_t b = 0; b < n; b++)
                    assert_int_equal(sg_reach_query(r, a, b), cl_get(&c, a, b));
            /* batch */
            sg_node_id_t(*pairs)[2] = malloc((size_t)n * n * sizeof *pairs);
            uint8_t *out = malloc((size_t)n * n);
            for (uint32_t a = 0; a < n; a++)
                for (uint32_t b = 0; b < n; b++) {
                    pairs[a * n + b][0] = b; /* shuffled order of sources */
                    pairs[a * n + b][1] = a;
                }
            assert_int_equal(sg_reach_query_batch(r, (const sg_node_id_t(*)[2])pairs, (size_t)n * n, out), SG_OK);
            for (uint32_t i = 0; i < n * n; i++)
                assert_int_equal(out[i], cl_get(&c, pairs[i][0], pairs[i][1]));
            free(pairs);
            free(out);
            /* clocks, block by block */
            if (flags & SG_REACH_FORWARD) {
                for (uint32_t blk = 0; blk < sg_reach_block_count(r); blk++) {
                    uint32_t c0, cw;
                    assert_int_equal(sg_reach_load_block(r, blk, &c0, &cw), SG_OK);
                    for (uint32_t ch = c0; ch < c0 + cw; ch++) {
                        for (uint32_t v = 0; v < n; v++) {
                            int32_t last = -1, first = INT32_MAX;
                            for (uint32_t u = 0; u < n; u++) {
                                if (sg_reach_chain_of(r, u) != ch) continue;
                                int32_t p = (int32_t)sg_reach_pos(r, u);
                                if (cl_get(&c, u, v) && p > last) last = p;
                                if (cl_get(&c, v, u) && p < first) first = p;
                            }
                            assert_int_equal(sg_reach_last_reaching(r, v, ch), last);
                            assert_int_equal(sg_reach_first_reached(r, v, ch), first);
                        }
                    }
                }
            }
            /* every chain is totally ordered: each position reaches the next */
            for (uint32_t u = 0; u < n; u++)
                for (uint32_t v = 0; v < n; v++)
                    if (sg_reach_chain_of(r, u) == sg_reach_chain_of(r, v) &&
                        sg_reach_chain_of(r, u) != UINT32_MAX &&
                        sg_reach_pos(r, v) == sg_reach_pos(r, u) + 1)
                        assert_true(cl_get(&c, u, v));
            sg_reach_destroy(r);
        }
        free(c.bits);
        sg_graph_destroy(g);
    }
}

/* Two snapshots of the same graph give the same answers in every part:
 * order, ranks, chains, adjacency by rank and (with forward clocks) both
 * clocks of every node on every chain. */
static void assert_same_reach(sg_reach_t *a, sg_reach_t *b, uint32_t n_ids)
{
    uint32_t na, nb;
    const sg_node_id_t *oa = sg_reach_order(a, &na), *ob = sg_reach_order(b, &nb);
    assert_int_equal(na, nb);
    for (uint32_t i = 0; i < na; i++) {
        assert_int_equal(oa[i], ob[i]);
        uint32_t ka, kb;
        const uint32_t *ia = sg_reach_in_ranks(a, i, &ka), *ib = sg_reach_in_ranks(b, i, &kb);
        assert_int_equal(ka, kb);
        for (uint32_t k = 0; k < ka; k++) assert_int_equal(ia[k], ib[k]);
    }
    assert_int_equal(sg_reach_chain_count(a), sg_reach_chain_count(b));
    assert_int_equal(sg_reach_block_count(a), sg_reach_block_count(b));
    for (uint32_t v = 0; v < n_ids; v++) {
        assert_int_equal(sg_reach_rank(a, v), sg_reach_rank(b, v));
        assert_int_equal(sg_reach_chain_of(a, v), sg_reach_chain_of(b, v));
        assert_int_equal(sg_reach_pos(a, v), sg_reach_pos(b, v));
    }
    for (uint32_t blk = 0; blk < sg_reach_block_count(a); blk++) {
        uint32_t c0, cw, d0, dw;
        assert_int_equal(sg_reach_load_block(a, blk, &c0, &cw), SG_OK);
        assert_int_equal(sg_reach_load_block(b, blk, &d0, &dw), SG_OK);
        assert_int_equal(c0, d0);
        assert_int_equal(cw, dw);
        for (uint32_t c = c0; c < c0 + cw; c++)
            for (uint32_t v = 0; v < n_ids; v++) {
                assert_int_equal(sg_reach_last_reaching(a, v, c), sg_reach_last_reaching(b, v, c));
                assert_int_equal(sg_reach_first_reached(a, v, c), sg_reach_first_reached(b, v, c));
            }
    }
}

/* Two snapshots of g both have node facts (sg_reach_node_facts), the same,
 * and the same successor lists by id. */
static void assert_same_facts(const sg_reach_t *a, const sg_reach_t *b, const sg_graph_t *g)
{
    const uint8_t *ta, *tb;
    const uint32_t *sa, *sb;
    const uint64_t *qa, *qb;
    assert_true(sg_reach_node_facts(a, g, &ta, &sa, &qa));
    assert_true(sg_reach_node_facts(b, g, &tb, &sb, &qb));
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        assert_int_equal(ta[v], tb[v]);
        assert_int_equal(sa[v], sb[v]);
        assert_int_equal(qa[v], qb[v]);
        uint32_t na, nb;
        const sg_node_id_t *oa = sg_reach_out_ids(a, v, &na), *ob = sg_reach_out_ids(b, v, &nb);
        assert_int_equal(na, nb);
        for (uint32_t k = 0; k < na; k++) assert_int_equal(oa[k], ob[k]);
    }
}

/* sg_reach_build_after: a graph that only gained edges is snapshotted from
 * the earlier snapshot's adjacency plus the new edges; the result must be
 * exactly a fresh build's, and after a removal (of an edge or a node) it
 * must fall back to reading the graph again. */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* sg_rw_alloc_index_at against the reference scan sg_rw_buffer_at, on
 * random graphs of graph allocations that reuse a few pool addresses (same
 * and different sizes, nested ranges), device buffers among them, and
 * random queries (inside, at the edges, past the end, before every alloc). */
static void test_alloc_index(void **state)
{
    (void)state;
    uint64_t rnd = 0x9e3779b97f4a7c15ull;
#define RND() xorshift(&rnd)
    for (int round = 0; round < 60; round++) {
        sg_graph_t *g = sg_graph_create();
        assert_non_null(g);
        assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
        const uint64_t pools[4] = {0x7f0000000000ull, 0x7f0000010000ull, 0x7f0000010800ull,
                                   0x7f0000100000ull};
        uint32_t nb = 1 + (uint32_t)(RND() % 40);
        uint64_t seq = 1;
        for (uint32_t i = 0; i < nb; i++) {
            bool dev = RND() % 8 == 0;
            uint64_t addr = pools[RND() % 4] + (RND() % 3 == 0 ? (RND() % 4) * 0x100 : 0);
            uint64_t size = (RND() % 3 == 0) ? 0x100 * (1 + RND() % 64) : 0x800;
            if (RND() % 17 == 0) size = 0;
            uint32_t b;
            assert_int_equal(sg_graph_add_buffer(g, dev ? SG_BUFFER_DEVICE : SG_BUFFER_GRAPH_ALLOC,
                                                 addr, size, &b), SG_OK);
            if (dev || RND() % 10 == 0) continue; /* no mem_alloc node */
            sg_node_id_t id;
            seq += 1 + RND() % 5;
            assert_int_equal(sg_graph_add_node(g, SG_NODE_MEM_ALLOC, 0, seq, &id), SG_OK);
            sg_graph_node(g, id)->u.mem.buffer = b;
            sg_graph_buffer(g, b)->alloc_node = id;
            if (RND() % 6 == 0) { /* an alloc node of another type: not an allocation */
                sg_graph_node(g, id)->type = SG_NODE_EMPTY;
            }
        }
        sg_rw_alloc_index_t ix;
        assert_int_equal(sg_rw_alloc_index_build(g, &ix), SG_OK);
        for (int q = 0; q < 400; q++) {
            uint32_t b = (uint32_t)(RND() % (nb + 1)); /* nb: out of range */
            uint64_t addr = pools[RND() % 4] + RND() % 0x5000 - 0x100;
            uint64_t at = RND() % (seq + 3);
            uint32_t want = sg_rw_buffer_at(g, b, addr, at);
            uint32_t got = sg_rw_alloc_index_at(&ix, g, b, addr, at);
            if (want != got)
                fail_msg("round %d query %d: buffer %u addr %#llx seq %llu: reference %u, index %u",
                         round, q, b, (unsigned long long)addr, (unsigned long long)at, want, got);
        }
        sg_rw_alloc_index_free(&ix);
        sg_graph_destroy(g);
    }
#undef RND
}

static void test_reach_build_after(void **state)
{
    (void)state;
    rng = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 120; round++) {
        sg_graph_t *g = random_graph(5 + rnd(60), round % 2);
        unsigned flags = (round & 2 ? SG_REACH_FORWARD : 0) | (round & 4 ? SG_REACH_NARROW : 0);
        sg_reach_t *r0 = NULL, *after = NULL, *fresh = NULL;
        assert_int_equal(sg_reach_build(g, flags, &r0), SG_OK);
        int change = round % 4; /* 0, 1: edges added; 2: and one removed; 3: and a node removed */
        uint32_t n = g->n_nodes, adds = 1 + rnd(6);
        for (uint32_t k = 0; k < adds; k++) {
            sg_node_id_t a = rnd(n), b = rnd(n);
            if (a == b) continue;
            if (a > b) {
                sg_node_id_t t = a;
                a = b;
                b = t;
            }
            /* a forward edge of the old order: never a cycle */
            if (sg_reach_rank(r0, a) > sg_reach_rank(r0, b)) {
                sg_node_id_t t = a;
                a = b;
                b = t;
            }
            assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
        }
        if (change == 2 && g->n_edges > 0) {
            for (uint32_t e = 0; e < g->n_edges; e++)
                if (!g->edges[e].removed) {
                    assert_int_equal(sg_graph_remove_edge(g, e), SG_OK);
                    break;
                }
        }
        if (change == 3) assert_int_equal(sg_graph_remove_node(g, rnd(n)), SG_OK);
        int rc_after = sg_reach_build_after(g, r0, flags, &after);
        int rc_fresh = sg_reach_build(g, flags, &fresh);
        assert_int_equal(rc_after, rc_fresh);
        if (rc_fresh == SG_OK) {
            assert_same_reach(after, fresh, g->n_nodes);
            /* made from r0 or not, the node facts are the nodes' */
            assert_same_facts(after, fresh, g);
        }
        sg_reach_destroy(after);
        sg_reach_destroy(fresh);
        /* no previous snapshot: a plain build */
        assert_int_equal(sg_reach_build_after(g, NULL, flags, &after), rc_fresh);
        sg_reach_destroy(after);
        sg_reach_destroy(r0);
        sg_graph_destroy(g);
    }
}

/* While the model's lists are in id order the snapshot reads them from
 * the edge array: the same snapshot as from the lists themselves (the flag
 * set by hand: "may be unordered" is always a safe claim). */
static void test_reach_edge_array_order(void **state)
{
    (void)state;
    rng = 0x3c6ef372fe94f82bull;
    int ordered = 0;
    for (int round = 0; round < 100; round++) {
        sg_graph_t *g = random_graph(5 + rnd(60), round % 2);
        if (round % 3 == 0 && g->live_edges) /* the last edge: the order stays */
            assert_int_equal(sg_graph_remove_edge(g, g->n_edges - 1), SG_OK);
        if (round % 3 == 1) assert_int_equal(sg_graph_remove_node(g, rnd(g->n_nodes)), SG_OK);
        ordered += !g->lists_unordered; /* a node's removal may have moved entries */
        unsigned flags = round & 4 ? SG_REACH_FORWARD : 0;
        sg_reach_t *a = NULL, *b = NULL;
        assert_int_equal(sg_reach_build(g, flags, &a), SG_OK);
        g->lists_unordered = true;
        assert_int_equal(sg_reach_build(g, flags, &b), SG_OK);
        assert_same_reach(a, b, g->n_nodes);
        sg_reach_destroy(a);
        sg_reach_destroy(b);
        sg_graph_destroy(g);
    }
    assert_true(ordered >= 60);
}

/* sg_reach_build_edited: after edges were removed and added and some
 * nodes' sequence numbers and streams changed, the snapshot made from the
 * earlier one and the list of changed nodes is exactly a fresh build's,
 * node facts included; a list that misses a node whose edges changed is
 * refused; with a node removed, or from a query-only snapshot, it is a
 * plain build. */
static void test_reach_build_edited(void **state)
{
    (void)state;
    rng = 0x6a09e667f3bcc908ull;
    int edited = 0;
    for (int round = 0; round < 160; round++) {
        sg_graph_t *g = random_graph(5 + rnd(60), round % 2);
        unsigned flags = (round & 2 ? SG_REACH_FORWARD : 0) | (round & 4 ? SG_REACH_NARROW : 0);
        sg_reach_t *r0 = NULL, *e = NULL, *fresh = NULL;
        assert_int_equal(sg_reach_build(g, flags, &r0), SG_OK);
        /* r0's facts as built: the edited snapshot shares them until it
         * changes one, and must not change them for r0 */
        const uint8_t *t0;
        const uint32_t *s0;
        const uint64_t *q0;
        assert_true(sg_reach_node_facts(r0, g, &t0, &s0, &q0));
        uint8_t t0c[128];
        uint32_t s0c[128];
        uint64_t q0c[128];
        assert_true(g->n_nodes <= 128);
        memcpy(t0c, t0, g->n_nodes);
        memcpy(s0c, s0, g->n_nodes * sizeof *s0);
        memcpy(q0c, q0, g->n_nodes * sizeof *q0);
        sg_node_id_t touched[64];
        uint32_t nt = 0, n = g->n_nodes, removed = 0;
        for (uint32_t k = rnd(5); k > 0 && g->live_edges; k--, removed++) {
            sg_edge_id_t x = rnd(g->n_edges);
            while (g->edges[x].removed)
                x = (x + 1) % g->n_edges;
            touched[nt++] = g->edges[x].from;
            touched[nt++] = g->edges[x].to;
            assert_int_equal(sg_graph_remove_edge(g, x), SG_OK);
        }
        for (uint32_t k = rnd(5); k > 0; k--) {
            sg_node_id_t a = rnd(n), b = rnd(n);
            if (a == b) continue;
            if (sg_reach_rank(r0, a) > sg_reach_rank(r0, b)) { /* forward: never a cycle */
                sg_node_id_t t = a;
                a = b;
                b = t;
            }
            assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
            touched[nt++] = a;
            touched[nt++] = b;
        }
        for (uint32_t k = rnd(3); k > 0; k--) { /* a moved node's fields */
            sg_node_id_t v = rnd(n);
            g->nodes[v].seq += 1 + rnd(50);
            if (rnd(2)) g->nodes[v].stream = rnd(g->n_streams);
            touched[nt++] = v;
        }
        int change = round % 5; /* 3: a node removed; 4: a changed node not listed */
        if (change == 3) assert_int_equal(sg_graph_remove_node(g, rnd(n)), SG_OK);
        if (change == 4) {
            sg_node_id_t a = rnd(n), b = rnd(n);
            if (a != b) {
                if (sg_reach_rank(r0, a) > sg_reach_rank(r0, b)) {
                    sg_node_id_t t = a;
                    a = b;
                    b = t;
                }
                assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, SG_NONE, NULL),
                                 SG_OK);
                touched[nt++] = b; /* a's out list grew: not listed */
                bool listed = false;
                for (uint32_t i = 0; i < nt; i++) listed = listed || touched[i] == a;
                if (!listed)
                    assert_int_equal(sg_reach_build_edited(g, r0, touched, nt, flags, &e),
                                     SG_EINVAL);
                sg_reach_destroy(r0);
                sg_graph_destroy(g);
                continue;
            }
        }
        assert_int_equal(sg_reach_build_edited(g, r0, touched, nt, flags, &e), SG_OK);
        assert_int_equal(sg_reach_build(g, flags, &fresh), SG_OK);
        assert_same_reach(e, fresh, g->n_nodes);
        assert_same_facts(e, fresh, g);
        assert_memory_equal(t0, t0c, g->n_nodes);
        assert_memory_equal(s0, s0c, g->n_nodes * sizeof *s0);
        assert_memory_equal(q0, q0c, g->n_nodes * sizeof *q0);
        edited += change != 3;
        sg_reach_destroy(e);
        /* from a query-only snapshot (made from the edge array after a
         * removal, not in the lists' order): a plain build */
        if (change != 3 && removed) {
            sg_reach_t *q = NULL;
            assert_int_equal(sg_reach_build_query(g, r0, flags, &q), SG_OK);
            assert_int_equal(sg_reach_build_edited(g, q, NULL, 0, flags, &e), SG_OK);
            assert_same_reach(e, fresh, g->n_nodes);
            assert_same_facts(e, fresh, g);
            sg_reach_destroy(e);
            sg_reach_destroy(q);
        }
        /* an id out of range */
        sg_node_id_t bad = g->n_nodes;
        assert_int_equal(sg_reach_build_edited(g, r0, &bad, 1, flags, &e), SG_EINVAL);
        sg_reach_destroy(fresh);
        sg_reach_destroy(r0);
        sg_graph_destroy(g);
    }
    assert_true(edited >= 80);
}

/* The verifier's query-only snapshot: after edges were added and removed
 * (nodes kept), its answers are the closure's though its adjacency comes
 * from the edge array; a cycle is found as sg_reach_build finds it; with a
 * node removed it is a plain build; a later sg_reach_build_after from it
 * reads the graph again (exactly a fresh build). */
static void test_reach_build_query(void **state)
{
    (void)state;
    rng = 0x8c4a1f0b5e3d2c17ull;
    for (int round = 0; round < 120; round++) {
        sg_graph_t *g = random_graph(5 + rnd(60), round % 2);
        unsigned flags = round & 2 ? SG_REACH_FORWARD : 0;
        sg_reach_t *r0 = NULL, *q = NULL, *fresh = NULL;
        assert_int_equal(sg_reach_build(g, flags, &r0), SG_OK);
        uint32_t n = g->n_nodes, removes = 1 + rnd(5);
        for (uint32_t k = 0; k < removes && g->live_edges; k++) {
            sg_edge_id_t e = rnd(g->n_edges);
            while (g->edges[e].removed)
                e = (e + 1) % g->n_edges;
            assert_int_equal(sg_graph_remove_edge(g, e), SG_OK);
        }
        for (uint32_t k = 0; k < 3; k++) {
            sg_node_id_t a = rnd(n), b = rnd(n);
            if (a == b) continue;
            if (sg_reach_rank(r0, a) > sg_reach_rank(r0, b)) {
                sg_node_id_t t = a;
                a = b;
                b = t;
            }
            assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
        }
        int change = round % 4; /* 2: a cycle; 3: a node removed */
        if (change == 2) {
            sg_node_id_t a = rnd(n), b = rnd(n);
            if (a != b && sg_reach_query(r0, a, b))
                assert_int_equal(sg_graph_add_edge(g, b, a, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
        }
        if (change == 3) assert_int_equal(sg_graph_remove_node(g, rnd(n)), SG_OK);
        int rc_q = sg_reach_build_query(g, r0, flags, &q);
        int rc_fresh = sg_reach_build(g, flags, &fresh);
        assert_int_equal(rc_q, rc_fresh);
        if (rc_fresh == SG_OK) {
            closure_t c = closure(g);
            for (uint32_t a = 0; a < g->n_nodes; a++)
                for (uint32_t b = 0; b < g->n_nodes; b++)
                    assert_int_equal(sg_reach_query(q, a, b), cl_get(&c, a, b));
            free(c.bits);
            if (change == 3) assert_same_reach(q, fresh, g->n_nodes);
            /* edges added after the query snapshot: built from the graph */
            sg_reach_t *after = NULL, *fresh2 = NULL;
            sg_node_id_t a = rnd(n), b = rnd(n);
            if (a != b && sg_reach_query(q, a, b))
                assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
            assert_int_equal(sg_reach_build_after(g, q, flags, &after), SG_OK);
            assert_int_equal(sg_reach_build(g, flags, &fresh2), SG_OK);
            assert_same_reach(after, fresh2, g->n_nodes);
            sg_reach_destroy(after);
            sg_reach_destroy(fresh2);
        }
        sg_reach_destroy(q);
        sg_reach_destroy(fresh);
        sg_reach_destroy(r0);
        sg_graph_destroy(g);
    }
}

static void test_reach_cycle_and_holes(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(1, 0);
    sg_node_id_t a = kern(g, 0, 0, 1), b = kern(g, 0, 1, 1), c = kern(g, 0, 2, 1);
    edge(g, a, b, SG_EDGE_STREAM, SG_NONE);
    edge(g, b, c, SG_EDGE_STREAM, SG_NONE);
    assert_int_equal(sg_graph_remove_node(g, b), SG_OK);
    sg_reach_t *r = NULL;
    assert_int_equal(sg_reach_build(g, 0, &r), SG_OK);
    assert_false(sg_reach_query(r, a, c));
    assert_false(sg_reach_query(r, a, b)); /* removed */
    assert_int_equal(sg_reach_rank(r, b), UINT32_MAX);
    sg_reach_destroy(r);
    edge(g, c, a, SG_EDGE_CONTROL, SG_NONE);
    edge(g, a, c, SG_EDGE_CONTROL, SG_NONE);
    assert_int_equal(sg_reach_build(g, 0, &r), SG_ECYCLE);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, NULL, rep), SG_ECYCLE);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* A graph too wide for one clock block (6000 parallel explicit nodes): the
 * oracle falls back to path chains in blocks and stays exact; the passes
 * and the check still run. */
static void test_reach_wide_graph(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(1, 0);
    uint32_t b = buffer(g, SG_BUFFER_DEVICE, 0x1000, 0x100000);
    sg_node_id_t root = kern(g, 0, 0, 1), sink;
    enum { W = 6000 };
    sg_node_id_t mid[W];
    for (int i = 0; i < W; i++) {
        mid[i] = kern(g, SG_STREAM_EXPLICIT, 1 + (uint64_t)i, 1);
        assert_int_equal(sg_node_add_access(g, mid[i], b, (uint64_t)i * 16, 16, SG_ACCESS_WRITE), SG_OK);
        edge(g, root, mid[i], SG_EDGE_CONTROL, SG_NONE);
    }
    sink = kern(g, 0, W + 1, 1);
    for (int i = 0; i < W; i++) edge(g, mid[i], sink, SG_EDGE_CONTROL, SG_NONE);
    /* two of them overlap: one race */
    assert_int_equal(sg_node_add_access(g, mid[7], b, 8 * 16, 16, SG_ACCESS_READ), SG_OK);
    sg_reach_t *r = NULL;
    assert_int_equal(sg_reach_build(g, SG_REACH_FORWARD, &r), SG_OK);
    assert_true(sg_reach_block_count(r) > 1);
    assert_true(sg_reach_query(r, root, mid[4321]));
    assert_true(sg_reach_query(r, mid[4321], sink));
    assert_false(sg_reach_query(r, mid[1], mid[2]));
    assert_false(sg_reach_query(r, sink, root));
    sg_reach_destroy(r);
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    assert_int_equal(res.n, 1);
    assert_int_equal(res.hazards[0].kind, SG_HAZARD_RACE);
    assert_int_equal(res.hazards[0].nodes[0], mid[7]);
    assert_int_equal(res.hazards[0].nodes[1], mid[8]);
    sg_check_result_free(&res);
    assert_int_equal(run(g, NULL, NULL), SG_OK);
    sg_graph_destroy(g);
}

/* ---- control-deps ----------------------------------------------------------------------- */

static void test_control_deps_record_before_wait(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(3, 1);
    g->events[0].external = true;
    /* s0: k0, R1(e0), k2, R3(e0) ; s1: k1, W4(e0) after R1 ; s2: W6 after R3 */
    sg_node_id_t k0 = kern(g, 0, 0, 1);
    sg_node_id_t r1 = node(g, SG_NODE_EVENT_RECORD, 0, 1);
    sg_node_id_t k1 = kern(g, 1, 2, 1);
    sg_node_id_t w4 = node(g, SG_NODE_EVENT_WAIT, 1, 3);
    sg_node_id_t k2 = kern(g, 0, 4, 1);
    sg_node_id_t r3 = node(g, SG_NODE_EVENT_RECORD, 0, 5);
    sg_node_id_t w6 = node(g, SG_NODE_EVENT_WAIT, 2, 6);
    sg_node_id_t k3 = kern(g, 2, 7, 1);
    for (sg_node_id_t x = r1; x <= w6; x++)
        if (sg_graph_node(g, x)->type != SG_NODE_KERNEL) sg_graph_node(g, x)->u.event = 0;
    edge(g, k0, r1, SG_EDGE_STREAM, SG_NONE);
    edge(g, r1, k2, SG_EDGE_STREAM, SG_NONE);
    edge(g, k2, r3, SG_EDGE_STREAM, SG_NONE);
    edge(g, k1, w4, SG_EDGE_STREAM, SG_NONE);
    edge(g, w6, k3, SG_EDGE_STREAM, SG_NONE);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "control-deps", rep), SG_OK);
    assert_int_equal(count_edges(g, r1, w4, SG_EDGE_CONTROL), 1);
    assert_int_equal(count_edges(g, r3, w6, SG_EDGE_CONTROL), 1); /* the latest record */
    assert_int_equal(count_edges(g, r1, w6, -1), 0);
    assert_non_null(strstr(sg_report_text(rep), "[record-before-wait]"));
    /* why, in the text and the JSON */
    assert_non_null(strstr(sg_report_text(rep),
                           "[record-before-wait]: the wait binds to the latest record of e0 "
                           "enqueued before it (seq 1 < 3)\n"));
    assert_non_null(strstr(sg_report_text(rep), "(seq 5 < 6)\n"));
    json_t *p0 = json_array_get(json_object_get(sg_report_json(rep), "passes"), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(p0, "edges_added"), 0), "why")),
                        "the wait binds to the latest record of e0 enqueued before it (seq 1 < 3)");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(p0, "by_rule"),
                                                        "record-before-wait")),
                     2);
    assert_true(json_is_true(json_object_get(json_object_get(p0, "verify"), "ok")));
    assert_int_equal(g->n_pass_log, 1);
    assert_string_equal(g->pass_log[0].pass, "control-deps");
    /* idempotent */
    char *d1 = dump(g);
    sg_report_t *rep2 = sg_report_create();
    assert_int_equal(run(g, "control-deps", rep2), SG_OK);
    char *d2 = dump(g);
    assert_string_equal(d1, d2);
    assert_non_null(strstr(sg_report_text(rep2), "no change"));
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_report_destroy(rep2);
    sg_graph_destroy(g);
}

static void test_control_deps_stream_order(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    /* s0: k0, host h1, k2 with only k0 -> k2 (dependencies replaced around
     * the host node); s0: k3 records e0 for s1's k5 but has no edge from k2;
     * plain kernels k6, k7 on s1 with no edge between them stay apart. */
    sg_node_id_t k0 = kern(g, 0, 0, 1);
    sg_node_id_t h1 = node(g, SG_NODE_HOST, 0, 1);
    sg_node_id_t k2 = kern(g, 0, 2, 1);
    sg_node_id_t k3 = kern(g, 0, 3, 1);
    sg_node_id_t k5 = kern(g, 1, 5, 1);
    sg_node_id_t k6 = kern(g, 1, 6, 1);
    sg_node_id_t k7 = kern(g, 1, 7, 1);
    edge(g, k0, k2, SG_EDGE_STREAM, SG_NONE);
    edge(g, k3, k5, SG_EDGE_EVENT, 0);
    edge(g, k5, k6, SG_EDGE_STREAM, SG_NONE);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "control-deps", rep), SG_OK);
    assert_int_equal(count_edges(g, k0, h1, SG_EDGE_CONTROL), 1);
    assert_int_equal(count_edges(g, h1, k2, SG_EDGE_CONTROL), 1);
    assert_int_equal(count_edges(g, k2, k3, SG_EDGE_CONTROL), 1); /* record point */
    assert_int_equal(count_edges(g, k6, k7, -1), 0);               /* plain kernels */
    assert_int_equal(count_edges(g, k5, k6, SG_EDGE_CONTROL), 0);  /* already there */
    const char *t = sg_report_text(rep);
    assert_non_null(strstr(t, "-> n1 (host, s0) [stream-order]: host: everything enqueued before "
                              "it on s0 must precede it\n"));
    assert_non_null(strstr(t, "n1 (host, s0) -> n2 (kernel k2, s0) [stream-order]: host: "
                              "everything enqueued after it on s0 must follow it\n"));
    assert_non_null(strstr(t, "-> n3 (kernel k3, s0) [stream-order]: record point: everything "
                              "enqueued before it on s0 must precede it\n"));
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

static void test_control_deps_free_reuse_and_event_at_free(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    uint32_t b1 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x1000);
    uint32_t b2 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1800, 0x1000); /* overlaps b1 */
    sg_node_id_t a1 = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, b1);
    sg_node_id_t u1 = kern(g, 0, 1, 1);
    acc(g, u1, b1, SG_ACCESS_WRITE);
    sg_node_id_t f1 = memnode(g, SG_NODE_MEM_FREE, 0, 2, b1);
    sg_node_id_t x = kern(g, 1, 3, 1); /* s1 waits for the record after f1 */
    sg_node_id_t k = kern(g, 0, 4, 1);
    sg_node_id_t a2 = memnode(g, SG_NODE_MEM_ALLOC, 0, 5, b2);
    sg_node_id_t u2 = kern(g, 0, 6, 1);
    acc(g, u2, b2, SG_ACCESS_WRITE);
    edge(g, a1, u1, SG_EDGE_STREAM, SG_NONE);
    edge(g, u1, f1, SG_EDGE_STREAM, SG_NONE);
    edge(g, f1, x, SG_EDGE_EVENT, 0);
    edge(g, f1, k, SG_EDGE_STREAM, SG_NONE);
    edge(g, k, a2, SG_EDGE_STREAM, SG_NONE);
    edge(g, a2, u2, SG_EDGE_STREAM, SG_NONE);
    edge(g, x, u2, SG_EDGE_EVENT, 0);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "control-deps", rep), SG_OK);
    assert_int_equal(count_edges(g, f1, a2, SG_EDGE_CONTROL), 1);  /* free before reuse */
    assert_int_equal(count_edges(g, u1, x, SG_EDGE_CONTROL), 1);   /* event leaves the free */
    assert_int_equal(count_edges(g, u1, k, SG_EDGE_CONTROL), 0);   /* stream order: not an event */
    assert_non_null(strstr(sg_report_text(rep), "[free-before-reuse]"));
    assert_non_null(strstr(sg_report_text(rep), "[event-at-free]"));
    char *d1 = dump(g);
    assert_int_equal(run(g, "control-deps", NULL), SG_OK);
    char *d2 = dump(g);
    assert_string_equal(d1, d2);
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

static void test_control_deps_contradiction(void **state)
{
    (void)state;
    /* a wait node enqueued after its record, but the graph orders the wait
     * first: no edge may be added (it would close a cycle) */
    sg_graph_t *g = new_graph(2, 1);
    sg_node_id_t r = node(g, SG_NODE_EVENT_RECORD, 0, 5);
    sg_node_id_t w = node(g, SG_NODE_EVENT_WAIT, 1, 6);
    sg_graph_node(g, r)->u.event = sg_graph_node(g, w)->u.event = 0;
    edge(g, w, r, SG_EDGE_CONTROL, SG_NONE);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "control-deps", rep), SG_OK);
    assert_int_equal(count_edges(g, r, w, -1), 0);
    assert_non_null(strstr(sg_report_text(rep), "orders them the other way"));
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* ---- fusion legality -------------------------------------------------------------------- */

static void test_fusion_chains(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    uint64_t q = 0;
    /* s0: k0 k1 k2 (chain) | k3 grid 2 (geometry) | k4 records e0 -> s1 | k5
     * memcpy m6 | k7 k8, k8 has a wait from s1 | k9 -> k10 and k9 -> k11
     * (fan-out) | k11 | explicit kernel */
    sg_node_id_t k0 = kern(g, 0, q++, 1), k1 = kern(g, 0, q++, 1), k2 = kern(g, 0, q++, 1);
    sg_node_id_t k3 = kern(g, 0, q++, 2);
    sg_node_id_t k4 = kern(g, 0, q++, 2);
    sg_node_id_t s1a = kern(g, 1, q++, 1);
    sg_node_id_t k5 = kern(g, 0, q++, 2);
    sg_node_id_t m6 = node(g, SG_NODE_MEMCPY, 0, q++);
    sg_node_id_t k7 = kern(g, 0, q++, 1), k8 = kern(g, 0, q++, 1);
    sg_node_id_t k9 = kern(g, 0, q++, 1), k10 = kern(g, 0, q++, 1), k11 = kern(g, 0, q++, 1);
    sg_node_id_t kx = kern(g, SG_STREAM_EXPLICIT, q++, 1);
    sg_node_id_t chain[] = {k0, k1, k2, k3, k4, k5, m6, k7, k8, k9, k10, k11};
    for (size_t i = 0; i + 1 < sizeof chain / sizeof *chain; i++)
        edge(g, chain[i], chain[i + 1], SG_EDGE_STREAM, SG_NONE);
    sg_edge_t *ev = sg_graph_edge(g, edge(g, k4, s1a, SG_EDGE_EVENT, 0));
    sg_edge_id_t evid = ev->id;
    sg_edge_id_t win = edge(g, s1a, k8, SG_EDGE_EVENT, 0);
    sg_edge_id_t fan = edge(g, k9, k11, SG_EDGE_STREAM, SG_NONE);
    sg_fusion_chains_t fc;
    assert_int_equal(sg_fusion_chains_find(g, &fc), SG_OK);
    /* chains in order: [k0 k1 k2] [k3 k4] [k5] [k7] [k8 k9] [k10] [k11] | s1 [s1a] | [kx]
     * (the wait before k8 cuts k7 from k8; nothing cuts k8 from k9) */
    assert_int_equal(fc.n_kernels, 13);
    assert_int_equal(fc.n_chains, 9);
    assert_int_equal(fc.n_candidates, 3);
    const sg_fusion_chain_t *c = fc.chains;
    assert_int_equal(c[0].n_nodes, 3);
    assert_int_equal(c[0].nodes[0], k0);
    assert_int_equal(c[0].nodes[2], k2);
    assert_int_equal(c[0].head.kind, SG_BARRIER_STREAM_START);
    assert_int_equal(c[0].tail.kind, SG_BARRIER_GEOMETRY);
    assert_int_equal(c[0].tail.node, k3);
    assert_int_equal(c[1].n_nodes, 2); /* k3 k4: same grid 2 */
    assert_int_equal(c[1].head.kind, SG_BARRIER_GEOMETRY);
    assert_int_equal(c[1].head.node, k2);
    assert_int_equal(c[1].tail.kind, SG_BARRIER_EVENT_OUT);
    assert_int_equal(c[1].tail.edge, evid);
    assert_int_equal(c[2].nodes[0], k5);
    assert_int_equal(c[2].head.kind, SG_BARRIER_EVENT_OUT);
    assert_int_equal(c[2].tail.kind, SG_BARRIER_MEMORY_NODE);
    assert_int_equal(c[2].tail.node, m6);
    assert_int_equal(c[3].nodes[0], k7);
    assert_int_equal(c[3].head.kind, SG_BARRIER_MEMORY_NODE);
    assert_int_equal(c[3].tail.kind, SG_BARRIER_EVENT_IN);
    assert_int_equal(c[3].tail.edge, win);
    assert_int_equal(c[4].n_nodes, 2);
    assert_int_equal(c[4].nodes[0], k8);
    assert_int_equal(c[4].nodes[1], k9);
    assert_int_equal(c[4].head.kind, SG_BARRIER_EVENT_IN);
    assert_int_equal(c[4].tail.kind, SG_BARRIER_FAN_OUT);
    assert_int_equal(c[4].tail.edge, fan);
    assert_int_equal(c[5].nodes[0], k10);
    assert_int_equal(c[5].tail.kind, SG_BARRIER_FAN_IN);
    assert_int_equal(c[6].nodes[0], k11);
    assert_int_equal(c[6].tail.kind, SG_BARRIER_STREAM_END);
    assert_int_equal(c[7].stream, 1);
    assert_int_equal(c[7].tail.kind, SG_BARRIER_EVENT_OUT);
    assert_int_equal(c[8].stream, SG_STREAM_EXPLICIT);
    assert_int_equal(c[8].nodes[0], kx);
    assert_int_equal(c[8].head.kind, SG_BARRIER_EXPLICIT);
    /* a candidate chain merges into one node without a cycle */
    assert_int_equal(sg_graph_merge_chain(g, c[0].nodes, c[0].n_nodes), SG_OK);
    sg_node_id_t *order;
    uint32_t n;
    assert_int_equal(sg_graph_topo_order(g, &order, &n), SG_OK);
    free(order);
    sg_fusion_chains_free(&fc);
    /* the pass reports and leaves the graph unchanged */
    char *d1 = dump(g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "fusion-legality", rep), SG_OK);
    char *d2 = dump(g);
    assert_string_equal(d1, d2);
    assert_non_null(strstr(sg_report_text(rep), "tail: fan_out"));
    json_t *p0 = json_array_get(json_object_get(sg_report_json(rep), "passes"), 0);
    assert_int_equal(json_array_size(json_object_get(p0, "chains")), 9); /* k0 now stands alone */
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

static void test_fusion_attributes_and_edge_type(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(1, 0);
    sg_node_id_t a = kern(g, 0, 0, 1), b = kern(g, 0, 1, 1), c = kern(g, 0, 2, 1), d = kern(g, 0, 3, 1);
    sg_graph_node(g, b)->u.kernel.cooperative = true;
    edge(g, a, b, SG_EDGE_STREAM, SG_NONE);
    edge(g, b, c, SG_EDGE_STREAM, SG_NONE);
    sg_edge_id_t e = edge(g, c, d, SG_EDGE_STREAM, SG_NONE);
    sg_graph_edge(g, e)->cuda_type = 1; /* programmatic */
    sg_fusion_chains_t fc;
    assert_int_equal(sg_fusion_chains_find(g, &fc), SG_OK);
    assert_int_equal(fc.n_chains, 4);
    assert_int_equal(fc.chains[0].tail.kind, SG_BARRIER_ATTRIBUTES);
    assert_int_equal(fc.chains[1].tail.kind, SG_BARRIER_ATTRIBUTES);
    assert_int_equal(fc.chains[2].tail.kind, SG_BARRIER_EDGE_TYPE);
    assert_string_equal(sg_barrier_kind_name(SG_BARRIER_EDGE_TYPE), "edge_type");
    sg_fusion_chains_free(&fc);
    sg_graph_destroy(g);
}

/* The dead form of a pointwise chain: intermediates allocated before the
 * chain and freed right after their last use inside it. The frees do not
 * end the chain (fusion sinks them); a kernel touching freed memory, or a
 * free with an event edge, does. */
static void test_fusion_chain_through_frees(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    uint32_t b[6];
    for (int i = 0; i < 6; i++)
        b[i] = buffer(g, i == 0 || i == 5 ? SG_BUFFER_DEVICE : SG_BUFFER_GRAPH_ALLOC,
                      0x100000ull * (i + 1), 0x1000);
    uint64_t q = 0;
    sg_node_id_t a1 = memnode(g, SG_NODE_MEM_ALLOC, 0, q++, b[1]);
    sg_node_id_t a2 = memnode(g, SG_NODE_MEM_ALLOC, 0, q++, b[2]);
    sg_node_id_t k0 = kern(g, 0, q++, 4), k1 = kern(g, 0, q++, 4);
    sg_node_id_t f1 = memnode(g, SG_NODE_MEM_FREE, 0, q++, b[1]);
    sg_node_id_t k2 = kern(g, 0, q++, 4);
    sg_node_id_t f2 = memnode(g, SG_NODE_MEM_FREE, 0, q++, b[2]);
    sg_node_id_t k3 = kern(g, 0, q++, 4); /* touches b1, freed by f1: use after free */
    sg_node_id_t f3 = memnode(g, SG_NODE_MEM_FREE, 0, q++, b[3]);
    sg_node_id_t k4 = kern(g, 0, q++, 4);
    sg_node_id_t f4 = memnode(g, SG_NODE_MEM_FREE, 0, q++, b[4]);
    sg_node_id_t k5 = kern(g, 0, q++, 4);
    sg_node_id_t o1 = kern(g, 1, q++, 4);
    acc(g, k0, b[0], SG_ACCESS_READ), acc(g, k0, b[1], SG_ACCESS_WRITE);
    acc(g, k1, b[1], SG_ACCESS_READ), acc(g, k1, b[2], SG_ACCESS_WRITE);
    acc(g, k2, b[2], SG_ACCESS_READ), acc(g, k2, b[3], SG_ACCESS_WRITE);
    acc(g, k3, b[3], SG_ACCESS_READ), acc(g, k3, b[1], SG_ACCESS_WRITE);
    acc(g, k4, b[0], SG_ACCESS_READ), acc(g, k4, b[4], SG_ACCESS_WRITE);
    acc(g, k5, b[4], SG_ACCESS_READ), acc(g, k5, b[5], SG_ACCESS_WRITE);
    sg_node_id_t seq0[] = {a1, a2, k0, k1, f1, k2, f2, k3, f3, k4, f4, k5};
    for (size_t i = 0; i + 1 < sizeof seq0 / sizeof *seq0; i++)
        edge(g, seq0[i], seq0[i + 1], SG_EDGE_STREAM, SG_NONE);
    sg_edge_id_t rec = edge(g, f4, o1, SG_EDGE_EVENT, 0); /* f4 records an event */
    sg_fusion_chains_t fc;
    assert_int_equal(sg_fusion_chains_find(g, &fc), SG_OK);
    /* [k0 k1 (f1) k2] | [k3 (f3) k4] | [k5] | s1 [o1] */
    assert_int_equal(fc.n_chains, 4);
    const sg_fusion_chain_t *c = fc.chains;
    assert_int_equal(c[0].n_nodes, 3);
    assert_int_equal(c[0].nodes[2], k2);
    assert_int_equal(c[0].n_frees, 1);
    assert_int_equal(c[0].frees[0], f1);
    assert_int_equal(c[0].head.kind, SG_BARRIER_MEMORY_NODE);
    assert_int_equal(c[0].head.node, a2);
    assert_int_equal(c[0].tail.kind, SG_BARRIER_FREE_USE);
    assert_int_equal(c[0].tail.node, f1);
    assert_int_equal(c[1].n_nodes, 2);
    assert_int_equal(c[1].nodes[0], k3);
    assert_int_equal(c[1].n_frees, 1);
    assert_int_equal(c[1].frees[0], f3);
    assert_int_equal(c[1].tail.kind, SG_BARRIER_EVENT_OUT); /* f4 records: a record point */
    assert_int_equal(c[1].tail.edge, rec);
    assert_int_equal(c[2].nodes[0], k5);
    assert_int_equal(c[2].n_frees, 0);
    assert_int_equal(fc.n_candidates, 2);
    assert_string_equal(sg_barrier_kind_name(SG_BARRIER_FREE_USE), "free_use");
    sg_fusion_chains_free(&fc);
    sg_graph_destroy(g);
}

/* ---- defer-dealloc ---------------------------------------------------------------------- */

/* async_alloc: alloc + fill on s0, use on s1, other work on s0, s0 waits
 * for s1 (join_at_free) or not (the free-before-use bug), free on s0, then
 * a last kernel on s0 that s1 joins. */
typedef struct {
    sg_graph_t *g;
    sg_node_id_t alloc, fill, use, other, free, sum;
    uint32_t tmp;
} async_t;

static async_t async_alloc(bool joined_before_free, double use_ns, double other_ns)
{
    async_t a;
    sg_graph_t *g = a.g = new_graph(2, 2);
    uint32_t x = buffer(g, SG_BUFFER_DEVICE, 0x100000, 1 << 20);
    a.tmp = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x200000, 1 << 20);
    a.alloc = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, a.tmp);
    a.fill = kern(g, 0, 1, 4);
    acc(g, a.fill, x, SG_ACCESS_READ);
    acc(g, a.fill, a.tmp, SG_ACCESS_WRITE);
    a.use = kern(g, 1, 2, 4);
    acc(g, a.use, a.tmp, SG_ACCESS_READ);
    a.other = kern(g, 0, 3, 4);
    acc(g, a.other, x, SG_ACCESS_READ);
    a.free = memnode(g, SG_NODE_MEM_FREE, 0, 4, a.tmp);
    a.sum = kern(g, 0, 5, 4);
    sg_graph_node(g, a.fill)->duration_ns = 1000;
    sg_graph_node(g, a.use)->duration_ns = use_ns;
    sg_graph_node(g, a.other)->duration_ns = other_ns;
    sg_graph_node(g, a.sum)->duration_ns = 1000;
    edge(g, a.alloc, a.fill, SG_EDGE_STREAM, SG_NONE);
    edge(g, a.fill, a.use, SG_EDGE_EVENT, 0);
    edge(g, a.fill, a.other, SG_EDGE_STREAM, SG_NONE);
    edge(g, a.other, a.free, SG_EDGE_STREAM, SG_NONE);
    edge(g, a.free, a.sum, SG_EDGE_STREAM, SG_NONE);
    edge(g, a.use, joined_before_free ? a.free : a.sum, SG_EDGE_EVENT, 1);
    return a;
}

static size_t hazards(const sg_graph_t *g)
{
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    size_t n = res.n;
    sg_check_result_free(&res);
    return n;
}

static json_t *first_free(sg_report_t *rep, size_t pass)
{
    json_t *p = json_array_get(json_object_get(sg_report_json(rep), "passes"), pass);
    return json_array_get(json_object_get(p, "frees"), 0);
}

static void test_defer_async_alloc_in_place(void **state)
{
    (void)state;
    /* the sample: the free is the last node, after the join */
    async_t a = async_alloc(true, 3000, 1000);
    assert_int_equal(sg_graph_remove_node(a.g, a.sum), SG_OK);
    char *d1 = dump(a.g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(a.g, "defer-dealloc", rep), SG_OK);
    char *d2 = dump(a.g);
    assert_string_equal(d1, d2);
    assert_string_equal(json_string_value(json_object_get(first_free(rep, 0), "decision")), "in_place");
    assert_int_equal(hazards(a.g), 0);
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_graph_destroy(a.g);
}

/* The same with work after the free: still settled (after every use, on
 * its stream), so unchanged: the pass changes only unsafe frees. */
static void test_defer_joined_free_in_place(void **state)
{
    (void)state;
    async_t a = async_alloc(true, 3000, 1000);
    char *d1 = dump(a.g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(a.g, "defer-dealloc", rep), SG_OK);
    char *d2 = dump(a.g);
    assert_string_equal(d1, d2);
    assert_string_equal(json_string_value(json_object_get(first_free(rep, 0), "decision")), "in_place");
    assert_int_equal(hazards(a.g), 0);
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_graph_destroy(a.g);
}

static void test_defer_free_before_use(void **state)
{
    (void)state;
    async_t a = async_alloc(false, 3000, 1000);
    assert_int_equal(hazards(a.g), 1); /* use_after_free */
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(a.g, "defer-dealloc", rep), SG_OK);
    assert_int_equal(count_edges(a.g, a.use, a.free, SG_EDGE_DEALLOC), 1);
    /* s0 is expected past the use once `other` is done and `sum` waits for
     * the use anyway: the free stays between them */
    assert_int_equal(count_edges(a.g, a.other, a.free, SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(a.g, a.free, a.sum, SG_EDGE_STREAM), 1);
    assert_true(json_real_value(json_object_get(first_free(rep, 0), "expected_stall_ns")) == 0);
    assert_int_equal(hazards(a.g), 0);
    json_t *f = first_free(rep, 0);
    assert_string_equal(json_string_value(json_object_get(f, "decision")), "ordered");
    assert_int_equal(json_integer_value(json_object_get(f, "now_after")), a.other);
    assert_true(json_real_value(json_object_get(f, "live_delta_ns")) > 0); /* held until the use */
    /* idempotent */
    char *d1 = dump(a.g);
    sg_report_t *rep2 = sg_report_create();
    assert_int_equal(run(a.g, "defer-dealloc", rep2), SG_OK);
    char *d2 = dump(a.g);
    assert_string_equal(d1, d2);
    assert_string_equal(json_string_value(json_object_get(first_free(rep2, 0), "decision")), "in_place");
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_report_destroy(rep2);
    sg_graph_destroy(a.g);
}

static void test_defer_same_stream_no_change(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    uint32_t b = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x1000);
    uint32_t x = buffer(g, SG_BUFFER_DEVICE, 0x10000, 0x1000);
    sg_node_id_t al = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, b);
    sg_node_id_t k1 = kern(g, 0, 1, 1);
    acc(g, k1, b, SG_ACCESS_WRITE);
    sg_node_id_t s1 = kern(g, 1, 2, 1); /* other stream, other memory */
    acc(g, s1, x, SG_ACCESS_WRITE);
    sg_node_id_t k2 = kern(g, 0, 3, 1);
    acc(g, k2, b, SG_ACCESS_READ);
    sg_node_id_t fr = memnode(g, SG_NODE_MEM_FREE, 0, 4, b);
    sg_node_id_t k3 = kern(g, 0, 5, 1);
    edge(g, al, k1, SG_EDGE_STREAM, SG_NONE);
    edge(g, k1, s1, SG_EDGE_EVENT, 0);
    edge(g, k1, k2, SG_EDGE_STREAM, SG_NONE);
    edge(g, k2, fr, SG_EDGE_STREAM, SG_NONE);
    edge(g, fr, k3, SG_EDGE_STREAM, SG_NONE);
    edge(g, s1, k3, SG_EDGE_EVENT, 0);
    char *d1 = dump(g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "defer-dealloc", rep), SG_OK);
    char *d2 = dump(g);
    assert_string_equal(d1, d2);
    assert_string_equal(json_string_value(json_object_get(first_free(rep, 0), "decision")),
                        "same_stream");
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* b allocated on s0, used on s1, s2, s3 twice each, interleaved with s0
 * work; the free on s0 comes before any join (the record_stream problem on
 * four streams); s1..s3 join s0's last kernel. The uses end at different
 * times; the free must end up after all of them, hung at the s0 node that
 * finishes after the latest. */
static void test_defer_interleaved_four_streams(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(4, 2);
    uint32_t b = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x100000);
    uint64_t q = 0;
    sg_node_id_t al = memnode(g, SG_NODE_MEM_ALLOC, 0, q++, b);
    sg_node_id_t fill = kern(g, 0, q++, 1);
    acc(g, fill, b, SG_ACCESS_WRITE);
    sg_graph_node(g, fill)->duration_ns = 1000;
    edge(g, al, fill, SG_EDGE_STREAM, SG_NONE);
    sg_node_id_t uses[4][2], s0w[6];
    double dur[4] = {0, 2000, 9000, 5000}; /* s2's uses run longest */
    for (int s = 1; s <= 3; s++) {
        for (int k = 0; k < 2; k++) {
            uses[s][k] = kern(g, s, q++, 1);
            acc(g, uses[s][k], b, SG_ACCESS_READ);
            sg_graph_node(g, uses[s][k])->duration_ns = dur[s];
            edge(g, k ? uses[s][0] : fill, uses[s][k], k ? SG_EDGE_STREAM : SG_EDGE_EVENT,
                 k ? SG_NONE : 0);
        }
    }
    sg_node_id_t prev = fill;
    for (int i = 0; i < 6; i++) {
        s0w[i] = kern(g, 0, q++, 1);
        sg_graph_node(g, s0w[i])->duration_ns = 4000;
        edge(g, prev, s0w[i], SG_EDGE_STREAM, SG_NONE);
        prev = s0w[i];
        if (i == 0) {
            /* the free right after the first s0 kernel */
            sg_node_id_t fr = memnode(g, SG_NODE_MEM_FREE, 0, q++, b);
            edge(g, prev, fr, SG_EDGE_STREAM, SG_NONE);
            prev = fr;
        }
    }
    sg_node_id_t fr = SG_NONE;
    for (sg_node_id_t v = 0; v < g->n_nodes; v++)
        if (g->nodes[v].type == SG_NODE_MEM_FREE) fr = v;
    for (int s = 1; s <= 3; s++) edge(g, uses[s][1], s0w[5], SG_EDGE_EVENT, 1);
    assert_int_equal(hazards(g), 6); /* every side-stream use is unordered with the free */
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "defer-dealloc", rep), SG_OK);
    for (int s = 1; s <= 3; s++) {
        assert_int_equal(count_edges(g, uses[s][1], fr, SG_EDGE_DEALLOC), 1);
        assert_int_equal(count_edges(g, uses[s][0], fr, -1), 0); /* only the last use */
    }
    /* timeline: fill ends 1 us; s2 ends at 1+9+9 = 19 us; s0 kernels end at
     * 5, 9, 13, 17, 21, 25 us: the first s0 node done by 19 us is s0w[4] */
    assert_int_equal(count_edges(g, s0w[4], fr, SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(g, fr, s0w[5], SG_EDGE_STREAM), 1); /* in the stream again */
    assert_int_equal(sg_graph_node(g, fr)->seq, sg_graph_node(g, s0w[4])->seq);
    uint32_t nout = 0;
    sg_graph_out_edges(g, fr, &nout);
    assert_int_equal(nout, 1);
    assert_int_equal(count_edges(g, s0w[0], s0w[1], SG_EDGE_STREAM), 1); /* bridged */
    /* s0w[5] starts at 21 us, after the uses end (19 us): no stall */
    assert_true(json_real_value(json_object_get(first_free(rep, 0), "expected_stall_ns")) == 0);
    assert_int_equal(hazards(g), 0);
    json_t *f = first_free(rep, 0);
    assert_int_equal(json_array_size(json_object_get(f, "last_uses")), 3); /* fill precedes them */
    assert_true(fabs(json_real_value(json_object_get(f, "uses_done_ns")) - 19000.0) < 1e-6);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* A free followed on s0 by an allocation that reuses its memory: the reuse
 * stays after the free (and so waits for the side-stream use), and the
 * anchor cannot go past the reallocation. */
static void test_defer_keeps_reuse(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 2);
    uint32_t b1 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x1000);
    uint32_t b2 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x1000);
    sg_node_id_t a1 = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, b1);
    sg_node_id_t w1 = kern(g, 0, 1, 1);
    acc(g, w1, b1, SG_ACCESS_WRITE);
    sg_node_id_t u = kern(g, 1, 2, 1);
    acc(g, u, b1, SG_ACCESS_READ);
    sg_graph_node(g, u)->duration_ns = 50000; /* long */
    sg_node_id_t f1 = memnode(g, SG_NODE_MEM_FREE, 0, 3, b1);
    sg_node_id_t k = kern(g, 0, 4, 1);
    sg_node_id_t a2 = memnode(g, SG_NODE_MEM_ALLOC, 0, 5, b2);
    sg_node_id_t w2 = kern(g, 0, 6, 1);
    acc(g, w2, b2, SG_ACCESS_WRITE);
    sg_node_id_t f2 = memnode(g, SG_NODE_MEM_FREE, 0, 7, b2);
    sg_node_id_t j = kern(g, 0, 8, 1);
    edge(g, a1, w1, SG_EDGE_STREAM, SG_NONE);
    edge(g, w1, u, SG_EDGE_EVENT, 0);
    edge(g, w1, f1, SG_EDGE_STREAM, SG_NONE);
    edge(g, f1, k, SG_EDGE_STREAM, SG_NONE);
    edge(g, k, a2, SG_EDGE_STREAM, SG_NONE);
    edge(g, a2, w2, SG_EDGE_STREAM, SG_NONE);
    edge(g, w2, f2, SG_EDGE_STREAM, SG_NONE);
    edge(g, f2, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, u, j, SG_EDGE_EVENT, 1);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "defer-dealloc", rep), SG_OK);
    assert_int_equal(count_edges(g, u, f1, SG_EDGE_DEALLOC), 1);
    assert_true(sg_graph_reaches(g, f1, a2)); /* reuse kept */
    assert_false(sg_graph_reaches(g, a2, f1));
    assert_int_equal(count_edges(g, k, f1, SG_EDGE_STREAM), 1); /* capped before the reuse */
    assert_int_equal(hazards(g), 0);
    json_t *f = first_free(rep, 0);
    assert_int_equal(json_array_size(json_object_get(f, "reuse_kept")), 1);
    assert_non_null(strstr(sg_report_text(rep), "before a reuse of the memory"));
    /* the reallocation must wait for the long use: reported as a stall */
    assert_true(json_real_value(json_object_get(f, "expected_stall_ns")) > 40000);
    assert_non_null(strstr(sg_report_text(rep), "expected stall of s0"));
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* A long side-stream use and short s0 work: the free goes after the last
 * s0 node that runs before the join (which waits for the use anyway), so
 * nothing on s0 is expected to stall. */
static void test_defer_expected_stall(void **state)
{
    (void)state;
    async_t a = async_alloc(false, 20000, 1000); /* use 1..21 us, other 1..2 us */
    sg_report_t *rep = sg_report_create();
    sg_graph_remove_edge(a.g, sg_graph_find_edge(a.g, a.use, a.sum)); /* sum no longer waits */
    sg_node_id_t j = kern(a.g, 0, 6, 4); /* the join, after sum */
    edge(a.g, a.sum, j, SG_EDGE_STREAM, SG_NONE);
    edge(a.g, a.use, j, SG_EDGE_EVENT, 1);
    assert_int_equal(run(a.g, "defer-dealloc", rep), SG_OK);
    json_t *f = first_free(rep, 0);
    assert_string_equal(json_string_value(json_object_get(f, "decision")), "moved");
    /* sum (2..3 us) and j (21..22 us): j cannot start before the use ends,
     * so the free goes between sum and j, and nobody stalls */
    assert_int_equal(json_integer_value(json_object_get(f, "now_after")), a.sum);
    assert_int_equal(count_edges(a.g, a.free, j, SG_EDGE_STREAM), 1);
    assert_true(json_real_value(json_object_get(f, "expected_stall_ns")) == 0);
    assert_int_equal(hazards(a.g), 0);
    sg_report_destroy(rep);
    sg_graph_destroy(a.g);
}

static void test_defer_skips_use_after_free(void **state)
{
    (void)state;
    async_t a = async_alloc(true, 3000, 1000);
    /* a use after the free, on s1 */
    sg_node_id_t late = kern(a.g, 1, 9, 4);
    acc(a.g, late, a.tmp, SG_ACCESS_READ);
    edge(a.g, a.free, late, SG_EDGE_EVENT, 0);
    char *d1 = dump(a.g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(a.g, "defer-dealloc", rep), SG_OK);
    char *d2 = dump(a.g);
    assert_string_equal(d1, d2);
    assert_string_equal(json_string_value(json_object_get(first_free(rep, 0), "decision")), "skipped");
    assert_non_null(strstr(sg_report_text(rep), "use after free"));
    free(d1);
    free(d2);
    sg_report_destroy(rep);
    sg_graph_destroy(a.g);
}

/* The one-at-a-time fallback: two frees whose placements are correct one
 * by one but close a cycle together. F1 (of b1, on s0) waits for U1 on s1
 * and must stay before P3, which touches memory of b1 (a device buffer at
 * b1's addresses) and precedes U2 on s0; F2 (of b2, on s1) is the mirror
 * image. Placed at once: F1 -> P3 -> U2 -> F2 -> P4 -> U1 -> F1. The pass
 * undoes both, places F1, refuses F2, and hands the verifier (and the next
 * pass) a snapshot of what it left made from the input's
 * (sg_reach_build_edited over every node it touched, the undone ones
 * included: an undone edit can reorder a node's lists): it must be the one
 * a fresh build gives. */
static sg_node_id_t cycle_f[2], cycle_u[2];
static int defer_then_compare(sg_pass_ctx_t *ctx)
{
    int rc = sg_pass_defer_dealloc(ctx);
    if (rc) return rc;
    assert_non_null(ctx->out_reach);
    sg_reach_t *fresh = NULL;
    assert_int_equal(sg_reach_build(ctx->g, 0, &fresh), SG_OK);
    assert_same_reach(ctx->out_reach, fresh, ctx->g->n_nodes);
    assert_same_facts(ctx->out_reach, fresh, ctx->g);
    sg_reach_destroy(fresh);
    return SG_OK;
}

static void test_defer_one_at_a_time(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 0);
    uint32_t b[2], d[2];
    sg_node_id_t al[2], k[2], p[2];
    for (int s = 0; s < 2; s++) {
        uint64_t at = 0x100000 * (uint64_t)(s + 1);
        b[s] = buffer(g, SG_BUFFER_GRAPH_ALLOC, at, 0x1000);
        d[s] = buffer(g, SG_BUFFER_DEVICE, at, 0x1000); /* b's memory, not allocated here */
    }
    for (int s = 0; s < 2; s++) { /* seq: s0 even, s1 odd */
        al[s] = memnode(g, SG_NODE_MEM_ALLOC, s, 0 + s, b[s]);
        cycle_f[s] = memnode(g, SG_NODE_MEM_FREE, s, 2 + s, b[s]);
        k[s] = kern(g, s, 4 + s, 1);
        p[s] = kern(g, s, 6 + s, 1);
        acc(g, p[s], d[s], SG_ACCESS_WRITE);
        cycle_u[s] = kern(g, s, 8 + s, 1); /* uses the other stream's buffer */
        acc(g, cycle_u[s], b[1 - s], SG_ACCESS_READ);
        edge(g, al[s], cycle_f[s], SG_EDGE_STREAM, SG_NONE);
        edge(g, cycle_f[s], k[s], SG_EDGE_STREAM, SG_NONE);
        edge(g, k[s], p[s], SG_EDGE_STREAM, SG_NONE);
        edge(g, p[s], cycle_u[s], SG_EDGE_STREAM, SG_NONE);
        /* a second in-edge of K: F's removed edge to it comes back behind
         * this one when the first attempt is undone, so K's list changes
         * order even where F2 ends up where it was */
        edge(g, al[s], k[s], SG_EDGE_CONTROL, SG_NONE);
    }
    closure_t before = closure(g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(sg_rw_run_custom(g, "defer-dealloc", defer_then_compare, NULL, rep), SG_OK);
    const char *t = sg_report_text(rep);
    assert_non_null(strstr(t, "placed one at a time instead (1 skipped)"));
    assert_non_null(strstr(t, "verify: ok"));
    json_t *frees = json_object_get(json_array_get(json_object_get(sg_report_json(rep), "passes"), 0),
                                    "frees");
    assert_int_equal(json_array_size(frees), 2);
    json_t *f0 = json_array_get(frees, 0), *f1 = json_array_get(frees, 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(f0, "free"), "id")),
                     cycle_f[0]);
    assert_string_equal(json_string_value(json_object_get(f0, "decision")), "moved");
    assert_string_equal(json_string_value(json_object_get(f1, "decision")), "skipped");
    assert_non_null(strstr(json_string_value(json_object_get(f1, "why")), "close a cycle"));
    /* F1 placed: after U1, between K0 and P3; F2 where it was */
    assert_int_equal(count_edges(g, cycle_u[1], cycle_f[0], SG_EDGE_DEALLOC), 1);
    assert_int_equal(count_edges(g, k[0], cycle_f[0], SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(g, cycle_f[0], p[0], SG_EDGE_STREAM), 1);
    assert_true(count_edges(g, al[0], k[0], -1) >= 1); /* bridged, or joined already */
    assert_int_equal(count_edges(g, al[1], cycle_f[1], SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(g, cycle_f[1], k[1], SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(g, cycle_u[0], cycle_f[1], -1), 0);
    assert_int_equal(sg_reach_check_acyclic(g), SG_OK);
    /* every ordering of the input but those of the moved free is kept */
    closure_t after = closure(g);
    for (uint32_t x = 0; x < g->n_nodes; x++)
        for (uint32_t y = 0; y < g->n_nodes; y++)
            if (x != cycle_f[0] && y != cycle_f[0] && cl_get(&before, x, y))
                assert_true(cl_get(&after, x, y));
    free(before.bits);
    free(after.bits);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* ---- reduce ----------------------------------------------------------------------------- */

static void test_reduce(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    sg_node_id_t a = kern(g, 0, 0, 1), b = kern(g, 1, 1, 1), c = kern(g, 0, 2, 1), d = kern(g, 0, 3, 1);
    edge(g, a, b, SG_EDGE_EVENT, 0);
    edge(g, b, c, SG_EDGE_EVENT, 0);
    edge(g, a, c, SG_EDGE_STREAM, SG_NONE);  /* implied by a -> b -> c */
    edge(g, c, d, SG_EDGE_STREAM, SG_NONE);
    edge(g, c, d, SG_EDGE_CONTROL, SG_NONE); /* duplicate, weaker */
    edge(g, a, d, SG_EDGE_EVENT, 0);         /* implied, but an event edge: kept */
    edge(g, b, d, SG_EDGE_DEALLOC, SG_NONE); /* implied, dealloc: kept */
    closure_t before = closure(g);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(run(g, "reduce", rep), SG_OK);
    assert_int_equal(count_edges(g, a, c, -1), 0);
    assert_int_equal(count_edges(g, c, d, SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(g, c, d, SG_EDGE_CONTROL), 0);
    assert_int_equal(count_edges(g, a, d, SG_EDGE_EVENT), 1);
    assert_int_equal(count_edges(g, b, d, SG_EDGE_DEALLOC), 1);
    closure_t after = closure(g);
    assert_memory_equal(before.bits, after.bits, (size_t)before.n * before.words * 8);
    free(before.bits);
    free(after.bits);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* ---- pass manager ----------------------------------------------------------------------- */

static int bad_drop_edge(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    for (uint32_t i = 0; i < g->n_edges; i++)
        if (!g->edges[i].removed) return sg_graph_remove_edge(g, i);
    return SG_OK;
}

static int bad_cycle(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    for (uint32_t i = 0; i < g->n_edges; i++)
        if (!g->edges[i].removed)
            return sg_graph_add_edge(g, g->edges[i].to, g->edges[i].from, SG_EDGE_CONTROL, SG_NONE,
                                     NULL);
    return SG_OK;
}

/* moves the free of the async graph but forgets the use -> free ordering */
static sg_node_id_t moved_free;
static int bad_move(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    sg_node_t *f = sg_graph_node(g, moved_free);
    while (f->n_in) sg_graph_remove_edge(g, f->in[0]);
    sg_node_id_t keep[1] = {0};
    return sg_rw_note_moved(ctx, moved_free, keep, 1, NULL, 0);
}

static int good_move(sg_pass_ctx_t *ctx)
{
    /* the same, but bridges and keeps the alloc before the free */
    sg_graph_t *g = ctx->g;
    sg_node_t *f = sg_graph_node(g, moved_free);
    sg_node_id_t preds[8], succs[8];
    uint32_t np = 0, ns = 0;
    for (uint32_t i = 0; i < f->n_in; i++) preds[np++] = g->edges[f->in[i]].from;
    for (uint32_t i = 0; i < f->n_out; i++) succs[ns++] = g->edges[f->out[i]].to;
    for (uint32_t i = 0; i < np; i++)
        for (uint32_t k = 0; k < ns; k++) sg_graph_add_edge(g, preds[i], succs[k], SG_EDGE_CONTROL, SG_NONE, NULL);
    f = sg_graph_node(g, moved_free);
    while (f->n_in) sg_graph_remove_edge(g, f->in[0]);
    while (f->n_out) sg_graph_remove_edge(g, f->out[0]);
    sg_graph_add_edge(g, 0, moved_free, SG_EDGE_DEALLOC, SG_NONE, NULL);
    sg_node_id_t keep[1] = {0};
    return sg_rw_note_moved(ctx, moved_free, keep, 1, NULL, 0);
}

/* rewrites the edge a -> c of the chain a -> b -> c (+ a -> c) to a -> b in
 * place and adds a -> c anew: every ordering of the input still holds, but
 * its edge is not the input's edge any more, which the verifier must see (it
 * reads the input's edges from the edge array by id). (A pass that adds and
 * removes nothing is not verified at all.) */
static int bad_retarget(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    g->edges[2].to = 1;
    return sg_graph_add_edge(g, 0, 2, SG_EDGE_CONTROL, SG_NONE, NULL);
}

static void test_verify_in_place(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(1, 0);
    sg_node_id_t a = kern(g, 0, 1, 1), b = kern(g, 0, 2, 1), c = kern(g, 0, 3, 1);
    assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_STREAM, SG_NONE, NULL), SG_OK);
    assert_int_equal(sg_graph_add_edge(g, b, c, SG_EDGE_STREAM, SG_NONE, NULL), SG_OK);
    assert_int_equal(sg_graph_add_edge(g, a, c, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
    assert_int_equal(g->edges[2].from, a);
    assert_int_equal(g->edges[2].to, c);
    sg_report_t *rep = sg_report_create();
    assert_int_equal(sg_rw_run_custom(g, "bad-retarget", bad_retarget, NULL, rep), SG_EINVAL);
    assert_non_null(strstr(sg_report_text(rep), "verify: FAILED: the pass changed an edge of the input in place"));
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

static void test_pass_manager(void **state)
{
    (void)state;
    assert_int_equal(sg_rewrite_pass_count(), 6);
    assert_int_equal(sg_rewrite_pass_find("access"), 0); /* the head: what kernels touch */
    assert_int_equal(sg_rewrite_pass_find("defer-dealloc"), 3);
    assert_int_equal(sg_rewrite_pass_find("nope"), -1);
    assert_true(sg_rewrite_pass_is_default(0)); /* access */
    assert_true(sg_rewrite_pass_is_default(4)); /* fuse */
    assert_false(sg_rewrite_pass_is_default(5)); /* reduce */
    async_t a = async_alloc(false, 3000, 1000);
    sg_graph_t *g = a.g;
    const char *bad[2] = {"control-deps", "nope"};
    char *d0 = dump(g);
    assert_int_equal(sg_rewrite_run(g, bad, 2, NULL), SG_EINVAL);
    char *d1 = dump(g);
    assert_string_equal(d0, d1); /* nothing run */
    assert_int_equal(g->n_pass_log, 0);
    free(d1);
    /* the verifier catches a pass that drops an ordering */
    sg_report_t *rep = sg_report_create();
    sg_graph_t *c = sg_graph_clone(g);
    assert_int_equal(sg_rw_run_custom(c, "bad-drop", bad_drop_edge, NULL, rep), SG_EINVAL);
    assert_non_null(strstr(sg_report_text(rep), "verify: FAILED"));
    sg_graph_destroy(c);
    sg_report_destroy(rep);
    /* ... unless verification is off */
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    opt.verify = false;
    c = sg_graph_clone(g);
    assert_int_equal(sg_rw_run_custom(c, "bad-drop", bad_drop_edge, &opt, NULL), SG_OK);
    sg_graph_destroy(c);
    /* a cycle */
    rep = sg_report_create();
    c = sg_graph_clone(g);
    assert_int_equal(sg_rw_run_custom(c, "bad-cycle", bad_cycle, NULL, rep), SG_ECYCLE);
    sg_graph_destroy(c);
    sg_report_destroy(rep);
    /* a moved node that loses a path through it, then one that bridges */
    moved_free = a.free;
    rep = sg_report_create();
    c = sg_graph_clone(g);
    assert_int_equal(sg_rw_run_custom(c, "bad-move", bad_move, NULL, rep), SG_EINVAL);
    sg_graph_destroy(c);
    sg_report_destroy(rep);
    rep = sg_report_create();
    c = sg_graph_clone(g);
    assert_int_equal(sg_rw_run_custom(c, "good-move", good_move, NULL, rep), SG_OK);
    assert_non_null(strstr(sg_report_text(rep), "1 moved node: its required orderings"));
    sg_graph_destroy(c);
    sg_report_destroy(rep);
    /* the default pipeline: report text, JSON, pass log */
    rep = sg_report_create();
    assert_int_equal(sg_rewrite_run(g, NULL, 0, rep), SG_OK);
    assert_int_equal(g->n_pass_log, 5);
    assert_string_equal(g->pass_log[0].pass, "access");
    assert_string_equal(g->pass_log[3].pass, "defer-dealloc");
    assert_string_equal(g->pass_log[4].pass, "fuse");
    assert_int_equal(sg_report_pass_count(rep), 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(sg_report_pass_name(rep, i), g->pass_log[i].pass);
        assert_string_equal(sg_report_pass_summary(rep, i), g->pass_log[i].summary);
    }
    assert_string_equal(sg_report_pass_name(rep, 5), "");
    const char *t = sg_report_text(rep);
    assert_non_null(strstr(t, "== access =="));
    assert_non_null(strstr(t, "no bundle to read code from")); /* no code: guesses stay */
    assert_non_null(strstr(t, "== control-deps =="));
    assert_non_null(strstr(t, "== fusion-legality =="));
    assert_non_null(strstr(t, "== defer-dealloc =="));
    assert_non_null(strstr(t, "no bundle to read kernel code from")); /* fuse needs code */
    char *js = NULL;
    assert_int_equal(sg_report_json_string(rep, &js), SG_OK);
    json_error_t err;
    json_t *back = json_loads(js, 0, &err);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_object_get(back, "schema")), SG_REPORT_SCHEMA);
    assert_int_equal(json_integer_value(json_object_get(back, "schema_version")),
                     SG_REPORT_SCHEMA_VERSION);
    json_t *passes = json_object_get(back, "passes");
    assert_int_equal(json_array_size(passes), 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *p = json_array_get(passes, i);
        assert_non_null(json_string_value(json_object_get(p, "summary")));
        assert_true(json_is_true(json_object_get(json_object_get(p, "verify"), "ok")));
    }
    json_decref(back);
    free(js);
    free(d0);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* The memory-only buffer table (what control-deps' reuse rule reads) has the
 * full table's allocations and frees, and the reuse index answers the same
 * from either; when it skipped the users, no plain buffer could be asked
 * for (both paths are taken over these graphs). */
static void test_buffers_memory(void **state)
{
    (void)state;
    rng = 0x6a09e667f3bcc908ull;
    int skipped = 0, full = 0;
    for (int round = 0; round < 150; round++) {
        sg_graph_t *g = random_graph(10 + rnd(70), round % 2);
        if (round % 5 == 0) /* a graph allocation without its mem_alloc, in the pool */
            buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x10000, 0x1000);
        sg_reach_t *r = NULL;
        assert_int_equal(sg_reach_build(g, SG_REACH_FORWARD, &r), SG_OK);
        sg_rw_streams_t st;
        assert_int_equal(sg_rw_streams_build(g, r, &st), SG_OK);
        sg_rw_buffers_t a, m;
        assert_int_equal(sg_rw_buffers_build(g, &a), SG_OK);
        assert_int_equal(sg_rw_buffers_build_memory(g, &st, &m), SG_OK);
        assert_int_equal(a.n_buffers, m.n_buffers);
        for (uint32_t b = 0; b < a.n_buffers; b++) {
            assert_int_equal(a.alloc[b], m.alloc[b]);
            assert_int_equal(a.free_start[b + 1], m.free_start[b + 1]);
        }
        for (uint32_t k = 0; k < a.free_start[a.n_buffers]; k++)
            assert_int_equal(a.frees[k], m.frees[k]);
        if (m.acc_start) {
            full++;
        } else {
            skipped++;
            for (uint32_t b = 0; b < a.n_buffers; b++)
                for (uint32_t o = 0; o < a.n_buffers; o++)
                    if (o != b && a.alloc[o] == SG_NONE && a.free_start[b + 1] > a.free_start[b])
                        assert_false(sg_rw_buffers_overlap(g, o, b));
        }
        sg_rw_reuse_t ra, rm;
        assert_int_equal(sg_rw_reuse_build(g, r, &a, &ra), SG_OK);
        assert_int_equal(sg_rw_reuse_build(g, r, &m, &rm), SG_OK);
        for (uint32_t b = 0; b < a.n_buffers; b++)
            for (uint32_t k = a.free_start[b]; k < a.free_start[b + 1]; k++) {
                sg_node_id_t *qa = NULL, *qm = NULL;
                uint32_t na = 0, nm = 0;
                assert_int_equal(sg_rw_reuse_after(&ra, r, g, &a, a.frees[k], b, &qa, &na), SG_OK);
                assert_int_equal(sg_rw_reuse_after(&rm, r, g, &m, m.frees[k], b, &qm, &nm), SG_OK);
                assert_int_equal(na, nm);
                for (uint32_t i = 0; i < na; i++)
                    assert_int_equal(qa[i], qm[i]);
                free(qa);
                free(qm);
            }
        sg_rw_reuse_free(&ra);
        sg_rw_reuse_free(&rm);
        sg_rw_buffers_free(&a);
        sg_rw_buffers_free(&m);
        sg_rw_streams_free(&st);
        sg_reach_destroy(r);
        sg_graph_destroy(g);
    }
    assert_true(skipped > 20);
    assert_true(full > 5);
}

/* ---- property: random DAGs ---------------------------------------------------------------- */

static const char *const configs[][4] = {
    {"control-deps", NULL},
    {"fusion-legality", NULL},
    {"defer-dealloc", NULL},
    {"reduce", NULL},
    {"control-deps", "fusion-legality", "defer-dealloc", NULL},
    {"control-deps", "defer-dealloc", "reduce", NULL},
    {"defer-dealloc", "control-deps", "defer-dealloc", NULL},
};

static void property_round(uint32_t size, int mode, size_t cfg, uint32_t *moved_total,
                           uint32_t *idem_checked)
{
    sg_graph_t *g = random_graph(size, mode);
    bool clean_input = hazards(g) == 0;
    closure_t before = closure(g);
    sg_rw_buffers_t bufs;
    assert_int_equal(sg_rw_buffers_build(g, &bufs), SG_OK);
    size_t n = 0;
    while (n < 4 && configs[cfg][n]) n++;
    sg_report_t *rep = sg_report_create();
    int rc = sg_rewrite_run(g, configs[cfg], n, rep);
    if (rc != SG_OK) fprintf(stderr, "%s", sg_report_text(rep));
    assert_int_equal(rc, SG_OK);
    /* moved frees, from the JSON report */
    uint8_t *moved = calloc(g->n_nodes + 1, 1);
    json_t *passes = json_object_get(sg_report_json(rep), "passes");
    for (size_t i = 0; i < json_array_size(passes); i++) {
        json_t *fr = json_object_get(json_array_get(passes, i), "frees");
        for (size_t k = 0; k < json_array_size(fr); k++) {
            json_t *f = json_array_get(fr, k);
            const char *d = json_string_value(json_object_get(f, "decision"));
            if (strcmp(d, "moved") != 0 && strcmp(d, "ordered") != 0) continue;
            sg_node_id_t id = (sg_node_id_t)json_integer_value(
                json_object_get(json_object_get(f, "free"), "id"));
            moved[id] = 1;
            (*moved_total)++;
        }
    }
    closure_t after = closure(g); /* also asserts acyclic */
    for (uint32_t a = 0; a < before.n; a++) {
        for (uint32_t b = 0; b < before.n; b++) {
            if (!cl_get(&before, a, b) || moved[a] || moved[b]) continue;
            if (!cl_get(&after, a, b))
                fail_msg("config %zu size %u mode %d: n%u -> n%u lost\n%s", cfg, size, mode, a, b,
                         sg_report_text(rep));
        }
    }
    /* a moved free: after its alloc and every use, before every reuse it had */
    for (uint32_t f = 0; f < before.n; f++) {
        if (!moved[f]) continue;
        uint32_t bf = g->nodes[f].u.mem.buffer;
        for (uint32_t i = bufs.user_start[bf]; i < bufs.user_start[bf + 1]; i++)
            assert_true(cl_get(&after, bufs.users[i], f));
        if (bufs.alloc[bf] != SG_NONE) assert_true(cl_get(&after, bufs.alloc[bf], f));
        for (uint32_t ob = 0; ob < bufs.n_buffers; ob++) {
            if (ob == bf || bufs.alloc[ob] == SG_NONE || !sg_rw_buffers_overlap(g, bf, ob)) continue;
            if (cl_get(&before, f, bufs.alloc[ob])) assert_true(cl_get(&after, f, bufs.alloc[ob]));
        }
    }
    /* Idempotent: every pass on its own, always; a pipeline run again on
     * its output, when its input was hazard-free (on a racy input,
     * defer-dealloc's fixes order things that a second control-deps then
     * rightly makes explicit). */
    char *d1 = dump(g);
    assert_int_equal(sg_rewrite_run(g, configs[cfg], n, NULL), SG_OK);
    char *d2 = dump(g);
    if (n > 1 && !clean_input) {
        free(d2);
        d2 = strdup(d1);
    } else {
        (*idem_checked)++;
    }
    if (strcmp(d1, d2) != 0) {
        /* leave both dumps where a developer can diff them */
        FILE *f1 = fopen("test_rewrite.idem.1.txt", "w"), *f2 = fopen("test_rewrite.idem.2.txt", "w");
        if (f1) fputs(d1, f1), fclose(f1);
        if (f2) fputs(d2, f2), fclose(f2);
        fail_msg("config %zu size %u mode %d not idempotent (dumps in test_rewrite.idem.*.txt)\n%s",
                 cfg, size, mode, sg_report_text(rep));
    }
    free(d1);
    free(d2);
    free(moved);
    free(before.bits);
    free(after.bits);
    sg_rw_buffers_free(&bufs);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

static void test_property_random_dags(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {4, 12, 40, 120};
    uint32_t moved = 0, idem = 0;
    rng = 0x2545f4914f6cdd1dull;
    for (size_t cfg = 0; cfg < sizeof configs / sizeof configs[0]; cfg++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int round = 0; round < 60; round++)
                property_round(sizes[s], round % 2, cfg, &moved, &idem);
    /* the test does exercise moves and idempotence */
    print_message("random DAGs: %u frees moved, %u idempotence checks\n", moved, idem);
    assert_true(moved > 50);
    assert_true(idem > 4 * 4 * 60);
}

/* ---- the report's JSON writer ------------------------------------------------------- */

static uint64_t jw_rng = 88172645463325252ull;
static uint32_t jw_rand(uint32_t n)
{
    jw_rng ^= jw_rng << 13;
    jw_rng ^= jw_rng >> 7;
    jw_rng ^= jw_rng << 17;
    return (uint32_t)(jw_rng % n);
}

/* A random string: ASCII, escapes, control bytes, valid UTF-8 of 2-4
 * bytes (jansson accepts only valid UTF-8, so no invalid bytes here). */
static void random_string(char *s, size_t cap)
{
    static const char *const pieces[] = {"a", "Z", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r",
                                         "\t", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac",
                                         "\xf0\x9f\x98\x80", "k_fill<float>", "e0"};
    size_t n = 0, k = jw_rand(8);
    s[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        const char *p = pieces[jw_rand(sizeof pieces / sizeof pieces[0])];
        if (n + strlen(p) + 1 > cap) break;
        memcpy(s + n, p, strlen(p) + 1);
        n += strlen(p);
    }
}

static json_t *random_json(int depth)
{
    static const double reals[] = {0.0, -0.0, 0.1, 1000.0, 1e20, 1.5e-7, -2.5, 1e300, 123456789.125,
                                   4.9e-324, 1e16, 1e17, 3.0e-5};
    char str[64];
    switch (depth > 3 ? jw_rand(5) : jw_rand(7)) {
    case 0: return json_integer((json_int_t)jw_rand(1u << 31) - (1 << 30));
    case 1: return json_real(jw_rand(2) ? reals[jw_rand(sizeof reals / sizeof reals[0])]
                                        : (double)jw_rand(1u << 30) / (1 + jw_rand(1000)));
    case 2: random_string(str, sizeof str); return json_string(str);
    case 3: return jw_rand(2) ? json_true() : json_false();
    case 4: return json_null();
    case 5: {
        json_t *a = json_array();
        for (uint32_t i = 0, n = jw_rand(4); i < n; i++) json_array_append_new(a, random_json(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (uint32_t i = 0, n = jw_rand(4); i < n; i++) {
            random_string(str, sizeof str);
            json_object_set_new(o, str, random_json(depth + 1));
        }
        return o;
    }
    }
}

static void test_json_writer_matches_jansson(void **state)
{
    (void)state;
    for (int iter = 0; iter < 2000; iter++) {
        json_t *v = random_json(0);
        assert_non_null(v);
        char *want = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        assert_non_null(want);
        sg_jw_t w;
        sg_jw_init(&w, 0);
        sg_jw_json(&w, v);
        assert_int_equal(w.err, 0);
        if (strcmp(sg_jw_text(&w), want) != 0)
            fail_msg("writer:\n%s\njansson:\n%s\n", sg_jw_text(&w), want);
        /* the same value spliced in as a member at depth 1, and as an
         * item of an array below it (the depth sg_jw_depth gives) */
        sg_jw_t inner, inner2, outer;
        sg_jw_init(&outer, 0);
        sg_jw_object(&outer);
        sg_jw_key(&outer, "v");
        assert_int_equal(sg_jw_depth(&outer), 1);
        sg_jw_init(&inner, sg_jw_depth(&outer));
        sg_jw_json(&inner, v);
        sg_jw_raw(&outer, sg_jw_text(&inner), inner.len);
        sg_jw_key(&outer, "list");
        sg_jw_array(&outer);
        sg_jw_int(&outer, 1);
        assert_int_equal(sg_jw_depth(&outer), 2);
        sg_jw_init(&inner2, sg_jw_depth(&outer));
        sg_jw_json(&inner2, v);
        sg_jw_raw(&outer, sg_jw_text(&inner2), inner2.len);
        sg_jw_end(&outer);
        sg_jw_end(&outer);
        json_t *wrap = json_pack("{s:O, s:[i, O]}", "v", v, "list", 1, v);
        char *want2 = json_dumps(wrap, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        assert_string_equal(sg_jw_text(&outer), want2);
        free(want2);
        json_decref(wrap);
        sg_jw_free(&inner);
        sg_jw_free(&inner2);
        sg_jw_free(&outer);
        sg_jw_free(&w);
        free(want);
        json_decref(v);
    }
    /* what jansson refuses: invalid UTF-8 becomes U+FFFD, a non-finite
     * real null; both still parse */
    sg_jw_t w;
    sg_jw_init(&w, 0);
    sg_jw_array(&w);
    sg_jw_string(&w, "a\xff" "b\xc0\xaf" "c\xed\xa0\x80");
    sg_jw_real(&w, NAN);
    sg_jw_real(&w, INFINITY);
    sg_jw_end(&w);
    json_error_t err;
    json_t *back = json_loads(sg_jw_text(&w), 0, &err);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_array_get(back, 0)),
                        "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    assert_true(json_is_null(json_array_get(back, 1)));
    assert_true(json_is_null(json_array_get(back, 2)));
    json_decref(back);
    sg_jw_free(&w);
}

/* The report's JSON text is exactly what jansson makes of its own tree
 * (sg_report_json parses the text): every pass, with reals, nulls, node
 * objects and escaped labels (fuse, without a bundle, with no chains). */
static void test_report_json_text_is_jansson_format(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2, 1);
    free(g->streams[1].label);
    g->streams[1].label = strdup("side \"s1\"\n\t\xc3\xa9");
    uint32_t b = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 4096);
    sg_node_id_t a = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, b);
    sg_node_id_t w = kern(g, 0, 1, 64);
    acc(g, w, b, SG_ACCESS_WRITE);
    sg_node_id_t r = kern(g, 1, 2, 64);
    acc(g, r, b, SG_ACCESS_READ);
    sg_node_id_t f = memnode(g, SG_NODE_MEM_FREE, 0, 3, b);
    sg_node_id_t k = kern(g, 0, 4, 64);
    sg_node_id_t j = kern(g, 0, 5, 64);
    edge(g, a, w, SG_EDGE_STREAM, SG_NONE);
    edge(g, w, r, SG_EDGE_EVENT, 0);
    edge(g, w, f, SG_EDGE_STREAM, SG_NONE);
    edge(g, f, k, SG_EDGE_STREAM, SG_NONE);
    edge(g, k, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, r, j, SG_EDGE_EVENT, 0);
    sg_graph_node(g, w)->duration_ns = 1234.5;
    static const char *const all[] = {"control-deps", "fusion-legality", "defer-dealloc", "reduce",
                                      "fuse"};
    sg_report_t *rep = sg_report_create();
    assert_int_equal(sg_rewrite_run(g, all, 5, rep), SG_OK);
    char *text = NULL;
    assert_int_equal(sg_report_json_string(rep, &text), SG_OK);
    json_t *tree = sg_report_json(rep);
    assert_non_null(tree);
    assert_int_equal(json_array_size(json_object_get(tree, "passes")), 5);
    char *again = json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    assert_non_null(again);
    size_t n = strlen(again);
    assert_int_equal(strlen(text), n + 1);
    assert_memory_equal(text, again, n);
    assert_int_equal(text[n], '\n');
    /* the moved free's record carries reals and node objects */
    assert_non_null(strstr(text, "\"uses_done_ns\": "));
    assert_non_null(strstr(text, "side \\\"s1\\\"\\n\\t\xc3\xa9"));
    /* a second run appends to the same tree (a borrowed pointer stays valid) */
    assert_int_equal(sg_rewrite_run(g, all, 1, rep), SG_OK);
    assert_ptr_equal(sg_report_json(rep), tree);
    assert_int_equal(json_array_size(json_object_get(tree, "passes")), 6);
    free(again);
    free(text);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reach_matches_brute_force),
        cmocka_unit_test(test_reach_build_after),
        cmocka_unit_test(test_reach_build_query),
        cmocka_unit_test(test_reach_edge_array_order),
        cmocka_unit_test(test_alloc_index),
        cmocka_unit_test(test_buffers_memory),
        cmocka_unit_test(test_reach_build_edited),
        cmocka_unit_test(test_reach_cycle_and_holes),
        cmocka_unit_test(test_reach_wide_graph),
        cmocka_unit_test(test_control_deps_record_before_wait),
        cmocka_unit_test(test_control_deps_stream_order),
        cmocka_unit_test(test_control_deps_free_reuse_and_event_at_free),
        cmocka_unit_test(test_control_deps_contradiction),
        cmocka_unit_test(test_fusion_chains),
        cmocka_unit_test(test_fusion_attributes_and_edge_type),
        cmocka_unit_test(test_fusion_chain_through_frees),
        cmocka_unit_test(test_defer_async_alloc_in_place),
        cmocka_unit_test(test_defer_joined_free_in_place),
        cmocka_unit_test(test_defer_free_before_use),
        cmocka_unit_test(test_defer_same_stream_no_change),
        cmocka_unit_test(test_defer_interleaved_four_streams),
        cmocka_unit_test(test_defer_keeps_reuse),
        cmocka_unit_test(test_defer_expected_stall),
        cmocka_unit_test(test_defer_skips_use_after_free),
        cmocka_unit_test(test_defer_one_at_a_time),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_pass_manager),
        cmocka_unit_test(test_verify_in_place),
        cmocka_unit_test(test_property_random_dags),
        cmocka_unit_test(test_json_writer_matches_jansson),
        cmocka_unit_test(test_report_json_text_is_jansson_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
