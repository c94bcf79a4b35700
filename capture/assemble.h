/* assemble.h: the structural half of turning a real CUDA graph into a model
 * graph, without CUDA: given the graph's nodes and edges (as the driver
 * listed them) and the capture record of that graph (book.h), add the nodes
 * with their streams and sequence numbers, the streams and events to the
 * root tables, and the edges with their kinds; and say how well the capture
 * bookkeeping explains the real graph (the cross-check).
 *
 * Node ids follow capture order: tagged nodes by sequence number, then the
 * nodes no capture call made (stream `explicit`, seq after the captured
 * ones, in the driver's listing order). So identical re-captures get
 * identical ids, which deduplication relies on. Edges are added sorted by
 * (destination id, source id, ports) for the same reason. The shim fills
 * the node payloads afterwards.
 */
#ifndef SGCAP_CAPTURE_ASSEMBLE_H
#define SGCAP_CAPTURE_ASSEMBLE_H

#include <stdint.h>

#include "book.h"
#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t handle; /* CUgraphNode */
    sg_node_type_t type;
    uint32_t cuda_type; /* CUgraphNodeType */
} sg_asm_node_t;

typedef struct {
    uint64_t from, to;                /* CUgraphNode handles */
    uint8_t from_port, to_port, type; /* CUgraphEdgeData */
} sg_asm_edge_t;

typedef struct {
    uint32_t tagged;            /* nodes the capture tagged with a stream */
    uint32_t explicit_nodes;    /* nodes no capture call made */
    uint64_t tags_missing;      /* tags of the record whose node is gone */
    uint32_t explained;         /* edges the capture predicted */
    uint32_t unexplained;       /* real edges into captured nodes it did not predict */
    uint32_t explicit_edges;    /* edges into nodes the program added itself */
    uint32_t predicted_missing; /* predicted edges the graph lacks */
    uint32_t dropped_edges;     /* edges naming an unknown node or a self-loop */
    bool overflow;              /* the record stopped tagging at its bound */
} sg_asm_report_t;

/* Add nodes[] and edges[] to g (a root or a body graph; tables go to its
 * root). rec may be NULL (a graph built with cuGraphAdd*Node). ids[i]
 * receives the model id of nodes[i]. Returns 0, SG_ENOMEM or SG_EINVAL. */
int sg_assemble(sg_graph_t *g, const sg_capture_record_t *rec, const sg_asm_node_t *nodes,
                uint32_t n_nodes, const sg_asm_edge_t *edges, uint32_t n_edges, sg_node_id_t *ids,
                sg_asm_report_t *rep);

/* One line for the bundle's crosscheck note ("" when all agree). */
void sg_asm_report_note(const sg_asm_report_t *rep, bool captured, char *buf, size_t n);
/* Do capture and graph agree? */
bool sg_asm_report_ok(const sg_asm_report_t *rep, bool captured);

/* Root table index of stream label `label` of rec (added when missing,
 * matched by key/handle and cuStreamGetId). */
int sg_assemble_stream(sg_graph_t *g, const sg_capture_record_t *rec, uint32_t label,
                       uint32_t *index);
/* Root table index of an event handle (added when missing). */
int sg_assemble_event(sg_graph_t *g, uint64_t handle, bool external, uint32_t *index);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_ASSEMBLE_H */
