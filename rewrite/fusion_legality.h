/* fusion_legality.h: where same-stream kernel fusion may happen, as an API
 * for the fusion work and as the `fusion-legality` pass's report.
 *
 * A candidate chain is a maximal run k1 .. km of kernel nodes that are
 * consecutive in one stream's program order where, for every consecutive
 * pair (a, b):
 *   - a direct edge a -> b exists, of CUDA type default with ports 0, and it
 *     is a's only outgoing and b's only incoming edge (so every interior node
 *     has exactly one predecessor and one successor, and merging the chain
 *     with sg_graph_merge_chain cannot close a cycle);
 *   - no event edge leaves a (a record after it) or enters b (a wait before
 *     it), and no other edge crosses to or from another stream there;
 *   - identical grid, block and cluster; neither cooperative nor launched
 *     with `extra`; equal priority.
 * A mem_free node between two chain kernels does not end the chain when it
 * is joined like a kernel would be (one edge in from the node before it,
 * one out to the node after it, default type, no event edge) and no later
 * kernel of the chain touches the buffer it frees: fusion sinks it below
 * the fused node, which is always legal then (the dead form of a pointwise
 * chain frees every intermediate right after its last use). Such frees are
 * listed with the chain; a free after the chain's last kernel is not part
 * of it. Everything else is a barrier. Each chain records, at both ends, the
 * barrier that stopped it (DESIGN.md rule 1, reference/fusion.md section 4
 * rules 1-2). Legality of the code inside the kernels (rule 3, one-CTA
 * dependencies; the refusal list) is the fusion work's job, not this one.
 *
 * Chains of length 1 are listed too (with both barriers), so the consumer
 * sees every kernel exactly once; `n_candidates` counts chains of >= 2.
 */
#ifndef SGCAP_REWRITE_FUSION_LEGALITY_H
#define SGCAP_REWRITE_FUSION_LEGALITY_H

#include <stdint.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SG_BARRIER_NONE = 0,      /* not a barrier */
    SG_BARRIER_STREAM_START,  /* first node of its stream */
    SG_BARRIER_STREAM_END,    /* last node of its stream */
    SG_BARRIER_EVENT_OUT,     /* an event edge leaves the earlier kernel (record point) */
    SG_BARRIER_EVENT_IN,      /* an event edge enters the later kernel (wait point) */
    SG_BARRIER_EVENT_NODE,    /* the neighbour is an event record/wait node */
    SG_BARRIER_MEMORY_NODE,   /* memcpy, memset, mem_alloc or mem_free */
    SG_BARRIER_HOST_NODE,
    SG_BARRIER_OPAQUE_NODE,
    SG_BARRIER_GRAPH_NODE,    /* child_graph or conditional */
    SG_BARRIER_EMPTY_NODE,
    SG_BARRIER_STREAM_CHANGE, /* a non-event edge to or from another stream */
    SG_BARRIER_FAN_OUT,       /* the earlier kernel has another successor on its stream */
    SG_BARRIER_FAN_IN,        /* the later kernel has another predecessor on its stream */
    SG_BARRIER_NO_EDGE,       /* adjacent in program order, but no direct edge */
    SG_BARRIER_EDGE_TYPE,     /* the edge is programmatic or uses ports */
    SG_BARRIER_GEOMETRY,      /* grid, block or cluster differ */
    SG_BARRIER_ATTRIBUTES,    /* cooperative, `extra` parameters, or different priority */
    SG_BARRIER_EXPLICIT,      /* the kernel has no stream (added explicitly) */
    SG_BARRIER_FREE_USE,      /* the later kernel touches memory a mem_free before it freed */
    SG_BARRIER_KIND_COUNT
} sg_barrier_kind_t;

typedef struct {
    sg_barrier_kind_t kind;
    sg_node_id_t node; /* the node across the barrier; SG_NONE at a stream end */
    sg_edge_id_t edge; /* the edge that is the barrier (event, fan, stream change,
                          edge type); SG_NONE otherwise */
} sg_barrier_t;

typedef struct {
    uint32_t stream;           /* stream index, or SG_STREAM_EXPLICIT */
    uint32_t n_nodes;          /* >= 1 */
    const sg_node_id_t *nodes; /* kernels in program order; pairwise joined by an edge,
                                  or through the frees below */
    uint32_t n_frees;          /* mem_free nodes between the kernels, to sink below them */
    const sg_node_id_t *frees; /* in program order */
    sg_barrier_t head;         /* why the chain does not extend backwards */
    sg_barrier_t tail;         /* why it does not extend forwards */
} sg_fusion_chain_t;

typedef struct {
    sg_fusion_chain_t *chains; /* by stream, then program order; explicit kernels last */
    uint32_t n_chains;
    uint32_t n_candidates;     /* chains with n_nodes >= 2 */
    uint32_t n_kernels;        /* kernels covered (every live kernel of the root graph) */
    uint32_t tail_counts[SG_BARRIER_KIND_COUNT]; /* chains ended by each barrier kind */
    sg_node_id_t *storage;     /* internal: backing store of every chain's nodes */
    sg_node_id_t *free_storage; /* internal: ... and frees */
} sg_fusion_chains_t;

/* Find the chains of g's root-level nodes. Returns 0, SG_ECYCLE or SG_ENOMEM;
 * free with sg_fusion_chains_free (also after failure). */
int sg_fusion_chains_find(const sg_graph_t *g, sg_fusion_chains_t *out);
void sg_fusion_chains_free(sg_fusion_chains_t *c);

/* "event_out", "geometry", ... (stable; used in reports and JSON). */
const char *sg_barrier_kind_name(sg_barrier_kind_t k);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_FUSION_LEGALITY_H */
