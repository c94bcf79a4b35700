/* extents.h: how far a kernel's access into a buffer reaches. A kernel
 * argument says where an access starts, never where it ends, so capture
 * first records "from the pointer to the end of the buffer"; that makes every
 * chunked pipeline look racy (chunk c's reader overlaps chunk c+1's writer).
 * The heuristic here (documented in docs/CAPTURE.md) cuts each such
 * open-ended kernel access at the next offset where any node of the graph
 * enters the same buffer (a kernel pointer, a copy or a set), else at the
 * buffer's end. Pure model code: no CUDA. */
#ifndef SGCAP_CAPTURE_EXTENTS_H
#define SGCAP_CAPTURE_EXTENTS_H

#include "graph/graph.h"

/* Apply the cut to every open-ended kernel access of g and its bodies.
 * Returns 0 or SG_ENOMEM (then nothing is changed). */
int sg_capture_segment_extents(sg_graph_t *g);

#endif /* SGCAP_CAPTURE_EXTENTS_H */
