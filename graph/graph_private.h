/* graph_private.h: what graph/ shares inside itself about fused kernels
 * (graph.c, fusion.c, the bundle reader and writer) and nobody else sees. */
#ifndef SGCAP_GRAPH_PRIVATE_H
#define SGCAP_GRAPH_PRIVATE_H

#include <jansson.h>

#include "bundle.h"
#include "graph.h"

/* Release the root's fusions table / deep-copy s's into the root d. */
void sg_graph__free_fusions(sg_graph_t *g);
int sg_graph__clone_fusions(const sg_graph_t *s, sg_graph_t *d);

/* Read the "fusions" array of graph.json (bundle_fusions.c), with the
 * bundle's diagnostics. */
int sg_bundle__parse_fusions(const json_t *top, sg_graph_t *g, sg_diag_t *diag, const char *file);

#endif /* SGCAP_GRAPH_PRIVATE_H */
