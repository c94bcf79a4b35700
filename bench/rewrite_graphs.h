/* rewrite_graphs.h: the graphs the rewrite benchmarks run on, shared by
 * bench_rewrite (the timing) and rewrite_equiv (the equivalence harness):
 * build(n), the synthetic 8-stream capture bench_rewrite.c's comment
 * describes, and random_graph(seed), small graphs of every node type
 * (explicit-stream nodes, events, allocations and frees of reused
 * addresses, accesses, extra event and control edges, repeated sequence
 * numbers), deterministic for a seed. Header-only: each program includes
 * it once. */
#ifndef SGCAP_BENCH_REWRITE_GRAPHS_H
#define SGCAP_BENCH_REWRITE_GRAPHS_H

#include <stdio.h>
#include <stdlib.h>

#include "graph/graph.h"

enum { STREAMS = 8 };

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

/* A random graph of 5 to 64 nodes of every type, on 1 to 5 streams. */
static inline sg_graph_t *random_graph(uint32_t seed)
{
    rng_state = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0x2545F4914F6CDD1Dull);
    rnd(7);
    sg_graph_t *g = sg_graph_create();
    if (!g) die("graph_create", SG_ENOMEM);
    uint32_t ns = 1 + rnd(5), ne = 1 + rnd(4), nb = 1 + rnd(6);
    for (uint32_t s = 0; s < ns; s++) sg_graph_add_stream(g, NULL, 0, NULL);
    for (uint32_t e = 0; e < ne; e++) sg_graph_add_event(g, NULL, 0, NULL);
    uint32_t bufs[8];
    for (uint32_t b = 0; b < nb; b++) /* some overlap their neighbour */
        sg_graph_add_buffer(g, SG_BUFFER_DEVICE,
                            0x7f0000000000ull + ((uint64_t)b << 22) - (rnd(3) == 0 ? (1u << 21) : 0),
                            1u << 22, &bufs[b]);
    uint32_t n = 5 + rnd(60), count = 0, live[16], n_live = 0;
    sg_node_id_t last[5] = {SG_NONE, SG_NONE, SG_NONE, SG_NONE, SG_NONE};
    sg_node_id_t ids[64];
    uint64_t seq = 0;
    static const char *const names[] = {"_Z6k_fillPjPKjm", "_Z5k_usePjPKjm", "plain_kernel",
                                        "_ZN2ns4axpyIfEEvPT_S2_"};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = rnd(ns), r = rnd(100);
        sg_node_type_t t = r < 50   ? SG_NODE_KERNEL
                           : r < 56 ? SG_NODE_MEMSET
                           : r < 60 ? SG_NODE_MEMCPY
                           : r < 64 ? SG_NODE_EMPTY
                           : r < 67 ? SG_NODE_HOST
                           : r < 72 ? SG_NODE_EVENT_RECORD
                           : r < 77 ? SG_NODE_EVENT_WAIT
                           : r < 88 ? SG_NODE_MEM_ALLOC
                                    : SG_NODE_MEM_FREE;
        if (t == SG_NODE_MEM_FREE && n_live == 0) t = SG_NODE_KERNEL;
        bool mem = t == SG_NODE_MEM_ALLOC || t == SG_NODE_MEM_FREE;
        uint32_t stream = !mem && rnd(12) == 0 ? SG_STREAM_EXPLICIT : s;
        sg_node_id_t id;
        if (sg_graph_add_node(g, t, stream, rnd(10) == 0 ? seq : seq + 1, &id)) die("add_node", SG_EINVAL);
        seq += 1 + rnd(2);
        ids[count++] = id;
        sg_node_t *x = sg_graph_node(g, id);
        if (t == SG_NODE_KERNEL) {
            sg_node_set_kernel_name(g, id, names[rnd(4)]);
            x = sg_graph_node(g, id);
            x->u.kernel.grid[0] = 1 + rnd(3) * 512;
            x->u.kernel.grid[1] = x->u.kernel.grid[2] = 1;
            x->u.kernel.block[0] = 128u << rnd(2);
            x->u.kernel.block[1] = x->u.kernel.block[2] = 1;
            if (rnd(3) == 0) x->duration_ns = 500 + rnd(9000);
        } else if (t == SG_NODE_EVENT_RECORD || t == SG_NODE_EVENT_WAIT) {
            x->u.event = rnd(ne);
        } else if (t == SG_NODE_MEM_ALLOC) {
            uint32_t buf;
            sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x7e0000000000ull + ((uint64_t)rnd(4) << 20),
                                1u << 20, &buf);
            x = sg_graph_node(g, id);
            x->u.mem.buffer = buf;
            g->buffers[buf].alloc_node = id;
            if (n_live < 16) live[n_live++] = buf;
        } else if (t == SG_NODE_MEM_FREE) {
            uint32_t k = rnd(n_live);
            x->u.mem.buffer = live[k];
            live[k] = live[--n_live];
        }
        if (t == SG_NODE_KERNEL || t == SG_NODE_MEMSET || t == SG_NODE_MEMCPY)
            for (uint32_t a = 0, na = rnd(3); a < na; a++) {
                uint32_t b = n_live && rnd(2) ? live[rnd(n_live)] : bufs[rnd(nb)];
                sg_node_add_access(g, id, b, rnd(2) * 4096, 4096u << rnd(3),
                                   (sg_access_mode_t)(1 + rnd(3)));
            }
        if (stream != SG_STREAM_EXPLICIT) {
            if (last[stream] != SG_NONE && rnd(8))
                sg_graph_add_edge(g, last[stream], id, SG_EDGE_STREAM, SG_NONE, NULL);
            last[stream] = id;
        }
        for (uint32_t k = 0, extra = rnd(4) == 0 ? 1 + rnd(2) : 0; k < extra && count > 1; k++)
            sg_graph_add_edge(g, ids[rnd(count - 1)], id, rnd(2) ? SG_EDGE_EVENT : SG_EDGE_CONTROL,
                              0, NULL);
    }
    return g;
}

#endif /* SGCAP_BENCH_REWRITE_GRAPHS_H */
