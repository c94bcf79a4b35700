/* graph_private.h: what graph/ shares inside itself about fused kernels
 * (graph.c, fusion.c) and nobody else sees. */
#ifndef SGCAP_GRAPH_PRIVATE_H
#define SGCAP_GRAPH_PRIVATE_H

#include "graph.h"

/* Release the root's fusions table / deep-copy s's into the root d. */
void sg_graph__free_fusions(sg_graph_t *g);
int sg_graph__clone_fusions(const sg_graph_t *s, sg_graph_t *d);

/* Give every live node of g, whose lists are all NULL, its in and out
 * lists, sized exactly to n_in and n_out (their entries left to the
 * caller), from one block in node order (g->blocks, made once per graph);
 * the counts are kept. SG_ENOMEM leaves every list NULL and the counts as
 * they were. What it allocates: the block and at most
 * SG_GRAPH__BLOCKS_BYTES for its record. */
#define SG_GRAPH__BLOCKS_BYTES 64
int sg_graph__adj_carve(sg_graph_t *g);

#endif /* SGCAP_GRAPH_PRIVATE_H */
