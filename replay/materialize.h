/* materialize.h: the materializer: a model graph (graph/) as a real CUgraph,
 * for any caller that holds a driver table (driver.h) and a context.
 *
 * `sgcap replay` uses it on a bundle in a process of its own (kernels from
 * the code it loaded, fresh events, memory it placed: build.c fills the
 * hooks); the in-app optimizer (optimize/) uses it inside the application
 * (the live kernels and events the model names, memory where it already
 * is). What differs between the two is behind the hooks below; everything
 * else (node payloads, edge data, graph allocations and the relocation of
 * the pointers into them, child and conditional bodies) is here, once.
 *
 * Nodes are added in a topological order with their dependencies (so a
 * mem_alloc node exists, and its driver-chosen address is known, before any
 * node that uses it is built), one cuGraphAddNode per node; every edge
 * becomes a dependency with its CUDA edge data, whatever its sgcap kind.
 * Addresses in parameters and node payloads go through the relocation map,
 * which is the identity for buffers at their recorded addresses.
 *
 * In-app code: no printing, no bundle reading, bounded work (O(V + E) driver
 * calls plus one relocation scan per kernel's arguments). */
#ifndef SGCAP_REPLAY_MATERIALIZE_H
#define SGCAP_REPLAY_MATERIALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "graph/graph.h"
#include "replay/driver.h"
#include "replay/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void *user;
    /* The code a kernel node runs: set out->func (and out->kern, out->ctx
     * for a context-independent CUkernel). *loaded: the function was loaded
     * for this graph (code from a bundle, a fused kernel), so its parameter
     * layout (cuFuncGetParamInfo) is checked against the model's and its
     * dynamic shared memory limit is raised when the node needs it; false
     * for the very handle the model was read from, whose layout the model
     * holds and whose attributes its program set. Required. */
    int (*kernel)(void *user, const sg_graph_t *owner, const sg_node_t *n,
                  CUDA_KERNEL_NODE_PARAMS_v2 *out, bool *loaded, char *err, size_t errlen);
    /* The event of an event_record/event_wait node (index into the root's
     * event table, or SG_NONE when the model names none). Required. */
    int (*event)(void *user, uint32_t event, CUevent *out, char *err, size_t errlen);
    /* A host node: fill p (an empty node is allowed). NULL: host nodes are
     * refused (SG_EUNSUPPORTED). */
    int (*host)(void *user, const sg_node_t *n, CUgraphNodeParams *p, char *err, size_t errlen);
    /* The host pointer of an address in host memory, NULL for device
     * memory. NULL hook: every address is a device (unified) address. */
    void *(*host_pointer)(void *user, uint64_t addr);
    /* Called for every CUDA node created (may be NULL). */
    int (*built)(void *user, CUgraphNode cu, const sg_graph_t *owner, const sg_node_t *n,
                 const char *path, uint32_t stream);
} sg_mat_hooks_t;

typedef struct {
    /* in */
    const sg_replay_driver_t *drv;
    CUcontext ctx;             /* the context copies, sets and conditionals name */
    int device;                /* ordinal: where mem_alloc nodes allocate */
    const sg_graph_t *g;       /* the root graph */
    sg_reloc_map_t *map;       /* recorded -> current addresses; graph allocations are added */
    sg_reloc_report_t *report; /* every rewrite made; may be NULL */
    sg_mat_hooks_t hooks;
    CUdeviceptr *buf_addr; /* may be NULL; else per buffer: set for graph allocations */
    /* out */
    CUgraph graph;      /* the root CUgraph (the caller destroys it) */
    bool *buf_freed;    /* per buffer: a mem_free node of the graph frees it */
    bool unfreed_alloc; /* a graph allocation outlives a launch */
    CUgraph *children;  /* child-graph bodies cloned into their nodes */
    uint32_t n_children, cap_children;
    uint32_t cuda_nodes; /* nodes created, every level */
} sg_mat_t;

/* Build m->g into a new m->graph. On failure everything made so far stays
 * in m for sg_mat_release (SG_ECUDA, SG_EUNSUPPORTED with the node's path
 * in err, SG_ENOMEM, SG_ECYCLE). */
int sg_materialize(sg_mat_t *m, char *err, size_t errlen);
/* Destroy the child bodies and free m's arrays; m->graph is the caller's
 * (left as it is). */
void sg_mat_release(sg_mat_t *m);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REPLAY_MATERIALIZE_H */
