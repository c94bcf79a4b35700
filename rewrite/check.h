/* check.h: `sgcap check`: cross-stream synchronization hazards of a graph,
 * each with its nodes, streams, buffer range and the edge that would fix it.
 *
 * Kinds (the happens-before relation is "there is a path" in the DAG):
 *   race            two nodes on different streams (an explicit node counts
 *                   as its own stream) access overlapping memory of the same
 *                   allocation, at least one writes (SG_ACCESS_UNKNOWN
 *                   counts as writing), and neither reaches the other.
 *                   Missing edge: from the one enqueued first (capture seq).
 *   use_after_free  a node accesses a graph-allocated buffer and is not
 *                   ordered after its mem_alloc (missing alloc -> node) or
 *                   not before one of its mem_free nodes (missing node ->
 *                   free).
 *   reuse           two graph allocations overlap in address, no free of
 *                   the first (the one whose alloc is ordered or enqueued
 *                   first) is ordered before the second's alloc, and a user
 *                   of the first is not ordered before that alloc. One
 *                   finding per pair: nodes = the offending user enqueued
 *                   last among the latest ones, and the second's alloc;
 *                   missing edge = the first's free -> the alloc (or the
 *                   user -> the alloc when the first is never freed). When
 *                   a free does precede the reallocation, a use not ordered
 *                   before that free is a use_after_free instead.
 *   unjoined        a stream other than the capture's origin (the stream of
 *                   the first enqueued node) whose last node has no path to
 *                   the origin stream's last node: forked and never joined.
 *                   Missing edge: that last node -> the origin's last node.
 * Accesses between different graph allocations (reused memory) are judged
 * as reuse, not race; mem_alloc/mem_free nodes act through use_after_free
 * and reuse only.
 *
 * Cost: a reachability snapshot with forward and backward clocks per chain
 * (reach.h), O((V+E) * k). Races: for every access and every chain, the
 * nodes of that chain unordered with the access form one contiguous window
 * of positions, (last position reaching it, first position it reaches);
 * only accesses of the same memory region inside that window are looked at,
 * so a well synchronized graph costs O(accesses * k * log), never O(n^2)
 * pairs (a region is a connected run of overlapping access ranges). Reuse:
 * the same window idea per allocation and chain (neither before the alloc
 * nor after a free of its buffer), over allocations grouped by address
 * cluster, so a pool address reused m times does not cost m^2 pairs.
 * use_after_free: one batched query per (user, alloc/free). Unjoined: one
 * query per stream. Hazards are sorted (kind, nodes) and deduplicated per
 * node pair (per buffer pair for reuse). The result is exact: every racy
 * pair is reported, up to max_hazards (tests compare with brute force).
 */
#ifndef SGCAP_REWRITE_CHECK_H
#define SGCAP_REWRITE_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "graph/graph.h"

/* The schema of `sgcap check --json` (docs/SCHEMAS.md): its name and
 * version lead the output; a change to what it holds raises the version. */
#define SG_CHECK_SCHEMA "sgcap-check"
#define SG_CHECK_SCHEMA_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SG_HAZARD_RACE = 0,
    SG_HAZARD_USE_AFTER_FREE,
    SG_HAZARD_REUSE,
    SG_HAZARD_UNJOINED,
    SG_HAZARD_KIND_COUNT
} sg_hazard_kind_t;

typedef struct {
    sg_hazard_kind_t kind;
    sg_node_id_t nodes[2];    /* race: both accessors (lower id first); use_after_free:
                                 user, alloc/free; reuse: a user of the first buffer,
                                 the alloc of the second; unjoined: the stream's last
                                 node, the origin's last node */
    uint32_t streams[2];      /* of nodes[] (SG_STREAM_EXPLICIT possible) */
    uint32_t buffers[2];      /* buffer of each side, SG_NONE for unjoined */
    sg_access_mode_t modes[2];/* race and use_after_free (user side); 0 otherwise */
    uint64_t lo, hi;          /* overlapping absolute address range [lo, hi); 0,0 for unjoined */
    sg_node_id_t missing_from, missing_to; /* the edge that would order it */
} sg_hazard_t;

typedef struct {
    uint32_t max_hazards; /* stop collecting after this many (0 = 100000) */
} sg_check_options_t;

typedef struct {
    sg_hazard_t *hazards;
    size_t n;
    bool truncated;               /* max_hazards reached: more may exist */
    size_t counts[SG_HAZARD_KIND_COUNT];
} sg_check_result_t;

/* Check the root graph g. Returns 0 (hazards or not), SG_ECYCLE, SG_ENOMEM. */
int sg_check_run(const sg_graph_t *g, const sg_check_options_t *opt, sg_check_result_t *out);
void sg_check_result_free(sg_check_result_t *res);

const char *sg_hazard_kind_name(sg_hazard_kind_t k); /* "race", "use_after_free", ... */
/* One line (no newline) describing h. Returns buf. */
const char *sg_hazard_format(const sg_graph_t *g, const sg_hazard_t *h, char *buf, size_t n);
/* {"kind":..., "nodes":[{...},{...}], "buffers":[...], "range":["0x..","0x.."],
 *  "missing_edge":{"from":id,"to":id}, "message":...} */
json_t *sg_hazard_json(const sg_graph_t *g, const sg_hazard_t *h);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_CHECK_H */
