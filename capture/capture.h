/* capture.h: capture/ as seen by whoever assembles libsgcap.so
 * (shim/modules.c): one module of the shim (inject/inject.h), started by
 * inject/ once the shim is initialised. Everything else of capture/ is
 * private to it. */
#ifndef SGCAP_CAPTURE_CAPTURE_H
#define SGCAP_CAPTURE_CAPTURE_H

#include "inject/inject.h"

/* Starts capture: configuration from the environment (docs/CAPTURE.md),
 * the observer of every intercepted family capture needs. */
extern const sg_inject_module_t sg_capture_module SG_INJECT_HIDDEN;

/* For the in-app optimizer (optimize/), which builds on capture: the model
 * of a graph the program holds, built the way a bundle's is (its capture
 * record, node payloads, buffers from the memory map, code images), and
 * the CUgraphNode of every node of its root graph by model id (*nodes,
 * malloc'd, *n_nodes entries; 0 for ids without one). *unreadable counts
 * nodes whose payload the driver would not give (the model is then
 * incomplete). Call it from an observer callback (inside the shim's guard);
 * it takes capture's locks and counts nothing in capture's summary. NULL
 * with a reason in why when the graph cannot be recorded. */
struct sg_graph;
struct sg_graph *sg_capture_model(CUgraph graph, uint64_t **nodes, uint32_t *n_nodes,
                                  uint32_t *unreadable, char *why, size_t n) SG_INJECT_HIDDEN;

/* The graph's raw digest (capture/rawdigest.c): equal digests build equal
 * models, so a decision taken on one model holds for every graph of that
 * digest. 0 on success; an error for graphs with bodies (never digested)
 * and when the driver would not list the graph. */
int sg_capture_raw_digest(CUgraph graph, uint64_t *digest) SG_INJECT_HIDDEN;

/* The bytes of image `image` of a model sg_capture_model built (what a
 * bundle's code/ file would hold: a fatbin, cubin, PTX or NVRTC source),
 * valid for the life of the process: the fuser reads kernels' PTX from
 * them. SG_ENOENT when capture holds none (a load it did not copy). */
int sg_capture_image_bytes(const struct sg_graph *g, uint32_t image, const void **bytes,
                           size_t *size) SG_INJECT_HIDDEN;

#endif /* SGCAP_CAPTURE_CAPTURE_H */
