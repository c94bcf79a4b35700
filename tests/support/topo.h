/* topo.h: the stream topology of a captured graph in the samples' terms
 * (docs/SAMPLES.md, "Expected topology, format v1"): nodes per stream in
 * program order by type, and the event edges between them named by event
 * label and per-stream node index. Parses the `--expect` text, extracts the
 * same view from a model graph (a bundle), and compares the two, so the
 * capture tests can say "this bundle is exactly what the program issued".
 *
 * Graphs built node by node (cuGraphAdd*Node, the way XLA builds its command
 * buffers) and captures into an existing graph (cuStreamBeginCaptureToGraph)
 * are described by two optional line kinds: `explicit TYPE...` (the nodes no
 * capture call made, in the order they were added, referred to as x:i) and
 * `control A -> B` (an edge made without an event: initial dependencies of a
 * capture into a graph, cuStreamUpdateCaptureDependencies, cuGraphAdd*Node).
 *
 * Extraction also checks what the format leaves implicit: consecutive nodes
 * of one stream are joined by a stream edge, and there is no other edge (no
 * stream edge that skips a node or touches the explicit lane, no dealloc
 * edge). Each violation is one problem line in the result.
 */
#ifndef SGCAP_TESTS_SUPPORT_TOPO_H
#define SGCAP_TESTS_SUPPORT_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_TOPO_HEADER "# sgcap expected topology v1"

/* The explicit lane: nodes no capture call made (cuGraphAdd*Node), in the
 * order they were added; written `x:i`. No edges are implied on it. */
#define SG_TOPO_LANE_X (UINT32_MAX - 1) /* not SG_NONE */

typedef enum {
    SG_TOPO_EDGE_EVENT = 0, /* `event eK sA:i -> sB:j`: a record/wait pair */
    SG_TOPO_EDGE_CONTROL,   /* `control A -> B`: an ordering made without an event */
} sg_topo_edge_kind_t;

typedef struct {
    uint32_t event;                /* e<event>; SG_NONE for a control edge */
    uint32_t src_stream, src_node; /* s<src_stream>:<src_node>, or SG_TOPO_LANE_X */
    uint32_t dst_stream, dst_node;
    uint8_t kind;                  /* sg_topo_edge_kind_t */
} sg_topo_edge_t;

typedef struct {
    uint32_t n_nodes;
    uint8_t *types; /* sg_node_type_t per node, program order */
} sg_topo_stream_t;

typedef struct {
    int64_t index; /* "graph N"; for an extracted graph its sequence */
    uint32_t n_streams;
    sg_topo_stream_t *streams; /* index = label number */
    sg_topo_stream_t explicit_lane;
    uint32_t n_edges;
    sg_topo_edge_t *edges;
    /* Extraction only: what the v1 view cannot express, one line each. */
    uint32_t n_problems;
    char **problems;
} sg_topo_graph_t;

typedef struct {
    uint32_t n;
    sg_topo_graph_t *graphs;
} sg_topo_t;

/* Parse `--expect` output. Returns 0 or SG_EFORMAT with "line N: what" in
 * err, SG_ENOMEM. Streams must be listed as s0, s1, ... in order. */
int sg_topo_parse(const char *text, size_t len, sg_topo_t *out, char *err, size_t errlen);
void sg_topo_free(sg_topo_t *t);
void sg_topo_graph_free(sg_topo_graph_t *g);

/* The topology of a model graph (root only; bodies are not in v1). Stream
 * sK is the stream table's entry K; event eK the event table's entry K. */
int sg_topo_from_graph(const sg_graph_t *g, sg_topo_graph_t *out);

/* Compare: returns the number of differences (0 = same) and writes one line
 * per difference into report (truncated to n bytes, may be NULL). Event
 * edges compare as multisets. Problems of `got` count as differences. */
int sg_topo_compare(const sg_topo_graph_t *want, const sg_topo_graph_t *got, char *report,
                    size_t n);

/* Print in v1 form ("graph N", "stream ...", "event ..."), edges sorted. */
int sg_topo_print(const sg_topo_graph_t *g, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_TESTS_SUPPORT_TOPO_H */
