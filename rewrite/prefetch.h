/* prefetch.h: software prefetch for the passes' walks over the model's
 * arrays in id order.
 *
 * A node is 240 bytes and a walk reads one to four lines of each, among
 * a dozen other arrays it reads and writes in step: on a large graph
 * (100k nodes, 24 MB of nodes, out of the 2 MB L2) the hardware's stream
 * prefetcher keeps too few of these streams ahead, and each node's first
 * read waits on L3. Asking for the node SG_PREFETCH_AHEAD ids ahead hides
 * that wait; on a graph that fits in L2 it costs a few instructions a
 * node. Measured on the 2-core build VM (bench_rewrite before and after,
 * alternating, 20 rounds of 5 pairs, the median of the rounds' ratios):
 * the prefetches in the passes, with reach.c's clock rows made without a
 * data-dependent branch, take 8% off all passes at 100k nodes and 3% at
 * 10k; on the H200's host bench_rewrite's all-passes ratio went from
 * 11.22x to 10.74x (docs/RESULTS.md, s26). They change no result
 * (rewrite_equiv's output is byte-identical): a prefetch is only a hint,
 * and none here reaches past an array's end. */
#ifndef SGCAP_REWRITE_PREFETCH_H
#define SGCAP_REWRITE_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

/* How far ahead a walk in id order asks for a node (in nodes): ~15 KB,
 * well inside L1, far enough ahead for an L3 miss at any pass's pace. */
#define SG_PREFETCH_AHEAD 64

/* The first `bytes` bytes of node id into the cache, when id is a node.
 * Both helpers are always inlined: a prefetch has no effect GCC counts, so
 * at -O2 (GCC 12) it found a plain static inline helper free of effects
 * and deleted every call to it, prefetches and all. */
static inline __attribute__((always_inline)) void sg_prefetch_node(const sg_graph_t *g, uint32_t id,
                                                                 size_t bytes)
{
    if (id >= g->n_nodes || bytes == 0) return;
    /* each 64-byte line the bytes lie on */
    uintptr_t at = (uintptr_t)&g->nodes[id], last = at + bytes - 1;
    for (uintptr_t l = at & ~(uintptr_t)63; l <= last; l += 64)
        __builtin_prefetch((const void *)l);
}

/* Edge id into the cache, when it is one (a walk over the edge array in
 * id order asks SG_PREFETCH_EDGES_AHEAD edges, 768 bytes, ahead). */
#define SG_PREFETCH_EDGES_AHEAD 32
static inline __attribute__((always_inline)) void sg_prefetch_edge(const sg_graph_t *g, uint32_t id)
{
    if (id < g->n_edges) __builtin_prefetch(&g->edges[id]);
}

#endif
