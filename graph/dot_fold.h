/* dot_fold.h: how `sgcap dot` keeps a big graph drawable (internal to
 * graph/, used by dot.c). A drawing of thousands of nodes is neither
 * readable nor something Graphviz lays out in reasonable time (its layout
 * is super-linear in the ranks and in the edges that cross them), so above
 * a budget of boxes the graph is drawn folded, each box standing for a run
 * of nodes of one lane (stream):
 *
 *   runs      every lane is cut into segments, maximal runs of its program
 *             order that can be drawn as one box without a cycle appearing
 *             (below); as many segments as the budget allows are refined
 *             into repeats ("gemm x40", "4 x [layernorm, gemm, gelu]") and
 *             single nodes, the cheapest refinements first; the others stay
 *             one box listing what they hold.
 *   bands     when even one box per segment is over the budget: the lanes
 *             are cut at the same points of a topological order into bands
 *             of about equal node count, one box per lane and band, drawn
 *             as a grid (one rank per band); arrows join boxes of different
 *             bands only, a box counts the cross-lane edges inside its band.
 *
 * A segment is a path v1 -> v2 -> ... of one lane (each node has an edge
 * from the one before) in which every node entered from outside comes no
 * later than every node left to outside. Then no path leaves the segment
 * and comes back (it would run against the topological order), so drawing
 * it as one box keeps the picture acyclic, and every arrow between boxes
 * stands for at least one edge between their nodes. Every part of the cost
 * is O(V + E) after one O(V log V) topological sort.
 */
#ifndef SGCAP_DOT_FOLD_H
#define SGCAP_DOT_FOLD_H

#include "graph.h"

typedef enum { SG_FOLD_NONE = 0, SG_FOLD_RUNS, SG_FOLD_BANDS } sg_fold_level_t;

typedef struct {
    uint32_t lane;  /* as sg_dot_lane_of */
    uint32_t band;  /* SG_FOLD_BANDS: its band (its rank in the drawing) */
    uint32_t start; /* members: fold.members[start, start + n_nodes), in lane order */
    uint32_t n_nodes;
    uint32_t period; /* a repeat: pattern length (n_nodes = period * repeats); else 0 */
    uint32_t repeats;
    uint32_t syncs_inside; /* bands: edges to or from boxes of the same band on other lanes */
} sg_fold_box_t;

typedef struct {
    uint32_t from, to; /* box indices */
    sg_edge_kind_t kind;
    uint32_t count; /* edges of the graph this arrow stands for */
    uint32_t event; /* the event all of them name, else SG_NONE */
} sg_fold_edge_t;

typedef struct {
    sg_fold_level_t level;
    uint32_t n_nodes;     /* live nodes of the graph (its own level, without bodies) */
    sg_fold_box_t *boxes; /* by lane, then lane order */
    uint32_t n_boxes;
    sg_node_id_t *members;
    uint32_t *box_of; /* node id -> box index; SG_NONE for a removed node */
    sg_fold_edge_t *edges;
    uint32_t n_edges;
    uint32_t n_bands;
    uint32_t n_lanes; /* n_streams + 2: explicit, then unknown streams */
} sg_fold_t;

/* The lane a node is drawn in: its stream index, n_streams for explicit
 * nodes, n_streams + 1 for a stream index the table does not have. */
uint32_t sg_dot_lane_of(const sg_graph_t *root, const sg_node_t *n);

/* Fold the root-level nodes of g into at most about max_boxes boxes (see
 * above; SG_FOLD_NONE with one box per node when the graph fits). 0 or
 * SG_ENOMEM; on success free with sg_dot_fold_free. */
int sg_dot_fold(const sg_graph_t *g, uint32_t max_boxes, sg_fold_t *out);
void sg_dot_fold_free(sg_fold_t *f);

#endif /* SGCAP_DOT_FOLD_H */
