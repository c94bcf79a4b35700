/* reach.h: exact "is there a path u -> v" on a snapshot of a DAG, for many
 * queries, without O(V^2) memory or a BFS per query.
 *
 * Method: the nodes are split into chains, each totally ordered by
 * reachability (every node of a chain reaches the next), built greedily in
 * topological order: a node continues its stream's chain when the stream's
 * latest node reaches it (by any path), else the chain of an in-neighbour
 * that is a tail; so a captured graph gets about one chain per stream, even
 * after transitive reduction removed its stream edges. For every node v and
 * chain c we keep
 *     R[v][c] = the largest position on c of a node that reaches v (-1: none)
 * (a vector clock with one entry per chain: CSAN's per-stream clocks made
 * exact, because on a chain position q reaching v implies every position
 * <= q reaches v). Then u reaches v iff R[v][chain(u)] >= pos(u). Streams
 * themselves cannot be the clock's index: a stream is totally ordered only
 * when its consecutive nodes are joined by paths; a stream with a gap simply
 * becomes two chains here. (Very wide graphs, whose growing rows would pass
 * the memory budget, fall back to chains that are paths of direct edges.)
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
/* The same snapshot, taken of g after prev was taken of it (prev may be
 * NULL): when g has only gained edges since (no node added or removed, no
 * edge removed), its adjacency is prev's plus the new edges, and the node
 * array is not read again; otherwise exactly sg_reach_build. The result is
 * the one sg_reach_build would give either way (order, chains, clocks). */
int sg_reach_build_after(const sg_graph_t *g, const sg_reach_t *prev, unsigned flags,
                         sg_reach_t **out);
/* The same snapshot, taken of g after prev was taken of it, when since
 * then only the nodes touched[0..n_touched) changed (duplicates allowed):
 * edges were added or removed at them (both ends of each are listed), or
 * their type, stream or sequence number changed; no node was added or
 * removed. Their edge lists and fields are read from the model, every
 * other node's from prev (for a pass that knows what it changed, without
 * a read of the whole node array). SG_EINVAL when the lists do not add up
 * to g's edges (a changed node was not listed: not every such mistake is
 * seen) or an id is out of range. Without a usable prev (NULL, of another
 * node set, or sg_reach_build_query's) exactly sg_reach_build. The result
 * is the one sg_reach_build would give, node facts included. */
int sg_reach_build_edited(const sg_graph_t *g, const sg_reach_t *prev, const sg_node_id_t *touched,
                          uint32_t n_touched, unsigned flags, sg_reach_t **out);
/* A snapshot of g for reachability queries and the acyclicity check only
 * (the verifier's, when no later pass takes it as its input): when g has
 * prev's nodes (none added or removed), its adjacency is read from the edge
 * array in id order instead of each node's edge lists, so its topological
 * order and chains may differ from sg_reach_build's (the answers do not);
 * otherwise exactly sg_reach_build_after. A later sg_reach_build_after from
 * it reads the graph again. */
int sg_reach_build_query(const sg_graph_t *g, const sg_reach_t *prev, unsigned flags,
                         sg_reach_t **out);
/* Give a snapshot built without SG_REACH_FORWARD its forward clocks (none
 * to do when it has them): it is then the one a build with the flag gives.
 * For the passes, whose snapshots are built without them and handed from
 * pass to pass: only the reuse rules (rewrite_internal.h) read them. */
int sg_reach_forward(sg_reach_t *r);
void sg_reach_destroy(sg_reach_t *r);
/* SG_OK when g (root-level) is a DAG, SG_ECYCLE when not; O(V+E). */
int sg_reach_check_acyclic(const sg_graph_t *g);
/* The same, reading g's adjacency as sg_reach_build_query would (from
 * prev's compact lists when g only gained edges since, from the edge array
 * when it has prev's nodes): the check alone, with no snapshot built. */
int sg_reach_check_acyclic_after(const sg_graph_t *g, const sg_reach_t *prev);

/* Does u reach v (u == v counts)? Removed or unknown nodes reach nothing. */
bool sg_reach_query(sg_reach_t *r, sg_node_id_t u, sg_node_id_t v);
/* The same for n pairs at once (grouped so each block of clocks is computed
 * once); out[i] = 1 when pairs[i][0] reaches pairs[i][1]. */
int sg_reach_query_batch(sg_reach_t *r, const sg_node_id_t (*pairs)[2], size_t n, uint8_t *out);

/* A topological order of the live nodes (Kahn with a FIFO: roots by id,
 * then adjacency order; deterministic for a given graph) and each node's
 * rank in it (UINT32_MAX for a removed id). */
const sg_node_id_t *sg_reach_order(const sg_reach_t *r, uint32_t *n);
uint32_t sg_reach_rank(const sg_reach_t *r, sg_node_id_t v);

/* The predecessors of the node of topological rank i, as ranks (the
 * snapshot's compact adjacency; a predecessor joined by two edges is
 * listed twice). */
const uint32_t *sg_reach_in_ranks(const sg_reach_t *r, uint32_t i, uint32_t *n);

/* What a snapshot that read g's node array (sg_reach_build, and
 * sg_reach_build_after when it had to) read of each node, by id: its type
 * (SG_REACH_REMOVED for a removed id), stream and capture sequence number,
 * so that a pass starting from the snapshot need not read the nodes again.
 * A snapshot sg_reach_build_after made from an earlier one (g only gained
 * edges) has the earlier one's: a node keeps these fields unless a pass
 * changes them, and such a pass is one that also moves edges (defer-dealloc,
 * whose output is read again). False when the snapshot was made without
 * reading the nodes (sg_reach_build_query's from the edge array), or is of
 * another graph. Valid while g's nodes keep those fields: a pass that
 * changes them must not take them from its input's snapshot. */
#define SG_REACH_REMOVED 0xffu
bool sg_reach_node_facts(const sg_reach_t *r, const sg_graph_t *g, const uint8_t **type,
                         const uint32_t **stream, const uint64_t **seq);

/* The successors of node v as the snapshot has them (by id, in the order of
 * the model's list, or edge id order for sg_reach_build_query's; a
 * successor joined by two edges is listed twice); NULL with *n = 0 for a
 * removed or unknown id. */
const sg_node_id_t *sg_reach_out_ids(const sg_reach_t *r, sg_node_id_t v, uint32_t *n);

/* Chains: count, chain of a node and its position on it. */
uint32_t sg_reach_chain_count(const sg_reach_t *r);
uint32_t sg_reach_chain_of(const sg_reach_t *r, sg_node_id_t v);
uint32_t sg_reach_pos(const sg_reach_t *r, sg_node_id_t v);

/* Clock blocks, for scans over all chains (the hazard check): load block b
 * (chains [*first, *first + *count)); then R and (with SG_REACH_FORWARD) F
 * may be read for chains of that block. */
uint32_t sg_reach_block_count(const sg_reach_t *r);
int sg_reach_load_block(sg_reach_t *r, uint32_t b, uint32_t *first, uint32_t *count);
/* Are the clocks of every chain loaded (one block), with forward clocks
 * when `forward`? Then the two functions below answer for any chain. */
bool sg_reach_all_loaded(const sg_reach_t *r, bool forward);
/* Largest position on chain c of a node reaching v, or -1. */
int32_t sg_reach_last_reaching(const sg_reach_t *r, sg_node_id_t v, uint32_t c);
/* Smallest position on chain c of a node reached from v, or INT32_MAX. */
int32_t sg_reach_first_reached(const sg_reach_t *r, sg_node_id_t v, uint32_t c);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_REACH_H */
