/* reach.h: exact "is there a path u -> v" on a snapshot of a DAG, for many
 * queries, without O(V^2) memory or a BFS per query.
 *
 * Method: the nodes are split into chains, each a path of the graph (every
 * consecutive pair joined by an edge), built greedily in topological order
 * and preferring the same stream, so a captured graph gets about one chain
 * per stream. For every node v and chain c we keep
 *     R[v][c] = the largest position on c of a node that reaches v (-1: none)
 * (a vector clock with one entry per chain, CSAN's per-stream clocks made
 * exact: because a chain is a path, position q reaching v implies every
 * position <= q reaches v). Then u reaches v iff R[v][chain(u)] >= pos(u).
 * Streams themselves are not used as the clock's index because a stream is
 * a path only when every consecutive pair is joined; a stream with a gap
 * simply becomes two chains here.
 *
 * Cost: O((V+E) * k) time for k chains, O(V * w) memory where the clocks
 * are computed w chains at a time (w = k when V*k is small, which is the
 * case for captured graphs; otherwise blocks of w chains, and single
 * queries whose chain is not loaded use a DFS bounded by topological rank).
 *
 * The snapshot is not updated when the graph changes: build a new one.
 */
#ifndef SGCAP_REWRITE_REACH_H
#define SGCAP_REWRITE_REACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_reach sg_reach_t;

enum {
    SG_REACH_FORWARD = 1u << 0, /* also keep F[v][c] = first position on c reached from v */
    SG_REACH_NARROW = 1u << 1,  /* tests: clock blocks of 2 chains, to exercise the block
                                   and search paths on small graphs */
};

/* Snapshot g (its root-level nodes and edges). SG_ECYCLE if g has a cycle. */
int sg_reach_build(const sg_graph_t *g, unsigned flags, sg_reach_t **out);
void sg_reach_destroy(sg_reach_t *r);

/* Does u reach v (u == v counts)? Removed or unknown nodes reach nothing. */
bool sg_reach_query(sg_reach_t *r, sg_node_id_t u, sg_node_id_t v);
/* The same for n pairs at once (grouped so each block of clocks is computed
 * once); out[i] = 1 when pairs[i][0] reaches pairs[i][1]. */
int sg_reach_query_batch(sg_reach_t *r, const sg_node_id_t (*pairs)[2], size_t n, uint8_t *out);

/* Topological order of the live nodes (Kahn, ties by seq then id) and each
 * node's rank in it (UINT32_MAX for a removed id). */
const sg_node_id_t *sg_reach_order(const sg_reach_t *r, uint32_t *n);
uint32_t sg_reach_rank(const sg_reach_t *r, sg_node_id_t v);

/* Chains: count, chain of a node and its position on it. */
uint32_t sg_reach_chain_count(const sg_reach_t *r);
uint32_t sg_reach_chain_of(const sg_reach_t *r, sg_node_id_t v);
uint32_t sg_reach_pos(const sg_reach_t *r, sg_node_id_t v);

/* Clock blocks, for scans over all chains (the hazard check): load block b
 * (chains [*first, *first + *count)); then R and (with SG_REACH_FORWARD) F
 * may be read for chains of that block. */
uint32_t sg_reach_block_count(const sg_reach_t *r);
int sg_reach_load_block(sg_reach_t *r, uint32_t b, uint32_t *first, uint32_t *count);
/* Largest position on chain c of a node reaching v, or -1. */
int32_t sg_reach_last_reaching(const sg_reach_t *r, sg_node_id_t v, uint32_t c);
/* Smallest position on chain c of a node reached from v, or INT32_MAX. */
int32_t sg_reach_first_reached(const sg_reach_t *r, sg_node_id_t v, uint32_t c);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_REACH_H */
