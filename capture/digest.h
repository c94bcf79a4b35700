/* digest.h: a 64-bit digest of what makes two captured graphs the same
 * graph, so a program that re-captures identical work thousands of times
 * writes one bundle.
 *
 * Covered: every node's type, stream label index, capture sequence number
 * and payload (kernel name, image hash, geometry, shared memory, parameter
 * layout and bytes, attributes; copy/set/host/event/memory fields; bodies,
 * recursively), every edge (endpoints, kind, event, CUDA edge data), the
 * buffers (kind, address, size) and the stream/event table sizes.
 * Not covered: provenance (program, pid, sequence, capture id, mode),
 * handles (streams, events, functions), device, cross-check, snapshots and
 * labels: they differ between identical re-captures and say nothing about
 * the work. Ids are covered implicitly through edge endpoints, so the
 * builder must assign them deterministically (it does: by capture order).
 */
#ifndef SGCAP_CAPTURE_DIGEST_H
#define SGCAP_CAPTURE_DIGEST_H

#include <stdint.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

uint64_t sg_graph_digest(const sg_graph_t *g);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_DIGEST_H */
