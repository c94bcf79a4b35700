/* check.h: `sgcap check`: cross-stream synchronization hazards of a graph,
 * each with its nodes, streams, buffer range and the edge that would fix it,
 * and whether it is proven or only possible.
 *
 * What a node touches is its accesses (graph.h). After the `access` pass
 * (rewrite/access_pass.c) a kernel's accesses come from its code: ranges
 * that are dense (every byte touched), exact (first and last byte touched)
 * or bounds; where the code could not be analysed they stay the capture's
 * guesses. A hazard is PROVEN when both sides are known from the code (or
 * a copy's payload) and their bytes certainly overlap: both dense, or an
 * endpoint an exact side certainly touches lies in the other's dense range
 * (or both touch the same endpoint). Otherwise it is POSSIBLE, and `why`
 * says which side is not known and why (a guess from pointer arguments, a
 * bound whose offset depends on loaded data, ...).
 *
 * Kinds (the happens-before relation is "there is a path" in the DAG):
 *   race            two nodes on different streams (an explicit node counts
 *                   as its own stream) access overlapping memory of the same
 *                   allocation, at least one writes (SG_ACCESS_UNKNOWN
 *                   counts as writing; two atomics do not race each other),
 *                   and neither reaches the other. Missing edge: from the
 *                   one enqueued first (capture seq).
 *   use_after_free  a node accesses a graph-allocated buffer and is not
 *                   ordered after its mem_alloc (missing alloc -> node) or
 *                   not before one of its mem_free nodes (missing node ->
 *                   free). Proven when the node certainly touches it.
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
 * Lifetimes are per allocation: two graph allocations CUDA gave the same
 * address are two buffers, and an access means the one that was live when
 * its node was enqueued (sg_rw_buffer_at). Accesses between different
 * graph allocations (reused memory) are judged as reuse, not race;
 * mem_alloc/mem_free nodes act through use_after_free and reuse only.
 *
 * A stream whose last node does not reach the origin stream's last node is
 * no hazard: a graph launch completes when every node has, so every sink
 * is joined at the end of the launch. Such streams are listed as notes
 * (`joined_at_end`), since a capture that never joins a stream is refused
 * by CUDA and the graph may have lost an edge.
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
 * use_after_free: one batched query per (user, alloc/free). Hazards are
 * sorted (kind, nodes) and deduplicated per node pair (per buffer pair for
 * reuse), a proven finding winning over a possible one. The result is
 * exact: every racy pair is reported, up to max_hazards (tests compare with
 * brute force).
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
#define SG_CHECK_SCHEMA_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SG_HAZARD_RACE = 0,
    SG_HAZARD_USE_AFTER_FREE,
    SG_HAZARD_REUSE,
    SG_HAZARD_KIND_COUNT
} sg_hazard_kind_t;

typedef struct {
    sg_hazard_kind_t kind;
    sg_node_id_t nodes[2];    /* race: both accessors (lower id first); use_after_free:
                                 user, alloc/free; reuse: a user of the first buffer,
                                 the alloc of the second */
    uint32_t streams[2];      /* of nodes[] (SG_STREAM_EXPLICIT possible) */
    uint32_t buffers[2];      /* buffer of each side */
    sg_access_mode_t modes[2];/* race and use_after_free (user side); 0 otherwise */
    sg_range_kind_t ranges[2];/* how well each side's range is known (a node side of a
                                 use_after_free or reuse: its access) */
    uint64_t lo, hi;          /* overlapping absolute address range [lo, hi) */
    sg_node_id_t missing_from, missing_to; /* the edge that would order it */
    bool proven;              /* both sides known and the bytes certainly overlap */
    char why[240];            /* possible: what is not known, and why */
} sg_hazard_t;

/* A stream that ends at a node with no path to the origin stream's last
 * node: joined only by the end of the graph launch (no hazard). */
typedef struct {
    uint32_t stream;
    sg_node_id_t last, origin_last;
} sg_check_joined_t;

typedef struct {
    uint32_t max_hazards; /* stop collecting after this many (0 = 100000) */
} sg_check_options_t;

typedef struct {
    sg_hazard_t *hazards;
    size_t n;
    bool truncated;               /* max_hazards reached: more may exist */
    size_t counts[SG_HAZARD_KIND_COUNT];        /* all hazards by kind */
    size_t proven_counts[SG_HAZARD_KIND_COUNT]; /* the proven ones */
    size_t n_proven, n_possible;
    sg_check_joined_t *joined_at_end; /* notes, by stream */
    size_t n_joined_at_end;
} sg_check_result_t;

/* Check the root graph g. Returns 0 (hazards or not), SG_ECYCLE, SG_ENOMEM. */
int sg_check_run(const sg_graph_t *g, const sg_check_options_t *opt, sg_check_result_t *out);
void sg_check_result_free(sg_check_result_t *res);

const char *sg_hazard_kind_name(sg_hazard_kind_t k); /* "race", "use_after_free", ... */
/* One line (no newline) describing h. Returns buf. */
const char *sg_hazard_format(const sg_graph_t *g, const sg_hazard_t *h, char *buf, size_t n);
/* {"kind":..., "proven": bool, "why": string or null, "message":..., "nodes":[{...},{...}],
 *  "buffers":[...], "ranges": ["dense", "bound"], "range":{"lo":"0x..","hi":"0x.."},
 *  "missing_edge":{"from":id,"to":id}} (docs/SCHEMAS.md) */
json_t *sg_hazard_json(const sg_graph_t *g, const sg_hazard_t *h);
/* One line for a joined_at_end note; {"stream", "last", "origin_last"} for JSON. */
const char *sg_check_joined_format(const sg_graph_t *g, const sg_check_joined_t *j, char *buf,
                                   size_t n);
json_t *sg_check_joined_json(const sg_graph_t *g, const sg_check_joined_t *j);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_CHECK_H */
