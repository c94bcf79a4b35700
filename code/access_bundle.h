/* access_bundle.h: the one entry point from a bundle's kernel node to what
 * its code reads and writes (docs/ACCESS.md).
 *
 * For a kernel node of an open bundle (graph/bundle.h), the code is looked
 * for in this order: PTX usable on the device from the node's image (a
 * fatbin's entry, a PTX image, PTX recompiled from captured NVRTC source,
 * also through an image's source_image: code_report.h decides exactly as
 * `sgcap inspect --code` shows), analysed by code/access.h; else the
 * image's SASS for the device (a cubin, or a fatbin's ELF entry as the
 * driver would pick it) disassembled with nvdisasm (code/sass.h, found as
 * sg_sass_find_disassembler does) and absorbed into the same result
 * (source SASS); else a result with no sites, status non-zero, and the
 * reason: no code image, no disassembler, nvdisasm rejected the cubin, ...
 *
 * Analyses are cached per (image hash, kernel name, parameter layout)
 * (sg_access_key); nvdisasm runs once per image for every kernel of the
 * graph that uses it; parsed PTX modules are shared between the kernels of
 * one module. Untrusted input everywhere: bad code gets a reason, never a
 * failure. Offline only (it forks nvdisasm and loads NVRTC): never inside
 * the shim. Nothing here prints or exits.
 */
#ifndef SGCAP_CODE_ACCESS_BUNDLE_H
#define SGCAP_CODE_ACCESS_BUNDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "code/access.h"
#include "code/sass.h"
#include "graph/bundle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t device_arch;  /* 0: the bundle's device (cc), else 90 */
    bool no_nvrtc;         /* never recompile captured NVRTC source */
    bool no_sass;          /* never disassemble: SASS-only kernels stay unknown */
    sg_sass_options_t sass;/* nvdisasm (NULL: found), timeout, jobs */
} sg_access_bundle_options_t;

typedef struct sg_access_bundle sg_access_bundle_t;

/* Facts for the kernels of g, whose code is read from b (NULL: no code at
 * all, every kernel "no code"). g must outlive the handle; b too. opt may
 * be NULL. SG_ENOMEM, SG_EINVAL. */
int sg_access_bundle_open(const sg_bundle_t *b, const sg_graph_t *g,
                          const sg_access_bundle_options_t *opt, sg_access_bundle_t **out);
void sg_access_bundle_close(sg_access_bundle_t *ab);

/* The analysis of kernel payload k (a node of g or of one of its bodies),
 * owned by ab. *out always set on 0: look at its status (0 analysed, else
 * reason and detail say why there is none) and source. SG_ENOMEM. */
int sg_access_bundle_kernel(sg_access_bundle_t *ab, const sg_kernel_t *k,
                            const sg_access_kernel_t **out);

/* Analyse every kernel of g now, the SASS-only ones of all images in one
 * nvdisasm batch per arch (nvdisasm's ~0.4 s start-up paid once per graph,
 * not once per image). Optional: without it each image gets its own batch
 * on first need. Idempotent. SG_ENOMEM. */
int sg_access_bundle_prefetch(sg_access_bundle_t *ab);

/* The same evaluated for this launch against g's buffers (ev is the
 * caller's: sg_access_eval_free). SG_ENOMEM. */
int sg_access_bundle_node(sg_access_bundle_t *ab, const sg_kernel_t *k, sg_access_eval_t *ev,
                          const sg_access_kernel_t **kout);

typedef struct {
    uint32_t kernels;       /* distinct analyses made (cache misses) */
    uint32_t ptx, sass, unknown; /* ... by the code they came from */
    uint32_t nvdisasm_runs;
    double ptx_ms, sass_ms; /* wall time spent on each path (nvdisasm included) */
    double worst_ptx_ms, worst_sass_ms; /* the slowest kernel of each */
} sg_access_bundle_stats_t;

void sg_access_bundle_stats(const sg_access_bundle_t *ab, sg_access_bundle_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_ACCESS_BUNDLE_H */
