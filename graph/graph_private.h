/* graph_private.h: what graph/ shares inside itself about fused kernels
 * (graph.c, fusion.c) and nobody else sees. */
#ifndef SGCAP_GRAPH_PRIVATE_H
#define SGCAP_GRAPH_PRIVATE_H

#include "graph.h"

/* Release the root's fusions table / deep-copy s's into the root d. */
void sg_graph__free_fusions(sg_graph_t *g);
int sg_graph__clone_fusions(const sg_graph_t *s, sg_graph_t *d);

#endif /* SGCAP_GRAPH_PRIVATE_H */
