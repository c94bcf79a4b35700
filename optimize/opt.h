/* opt.h: private to optimize/: the decisions of the in-app optimizer (what
 * may be swapped, whether the passes changed anything, what the shadow
 * check copies, whether an exec update can be translated) and the pass
 * pipeline, as pure functions of models (decide.c, pipeline.c: no driver,
 * unit-tested on the CPU); and the parts that call the driver through a
 * table (driver.c: the table from the shim's real entry points; build.c:
 * the optimized graph with replay's materializer; check.c: the shadow
 * check), which module.c ties to the intercepted calls. */
#ifndef SGCAP_OPTIMIZE_OPT_H
#define SGCAP_OPTIMIZE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "graph/graph.h"
#include "replay/driver.h"
#include "replay/replay.h"
#include "rewrite/pass.h"

/* ---- configuration (the environment, docs/INJECT.md) ---------------------- */

typedef struct {
    uint32_t check_launch;     /* SGCAP_OPTIMIZE_CHECK=N: the launch checked (1); 0 = `all` */
    uint64_t shadow_max_bytes; /* SGCAP_SHADOW_MAX_BYTES (1 GiB) */
    bool force; /* SGCAP_OPTIMIZE_FORCE=1: an E1 even when the passes change nothing */
    bool plant; /* SGCAP_OPTIMIZE_TEST_PLANT=1 (tests only): a wrong E1 */
    uint32_t fuse_ms; /* SGCAP_OPTIMIZE_FUSE_MS: NVRTC time in-app fusion may spend in the
                         whole process (SG_OPT_FUSE_MS); 0 turns in-app fusion off */
} sg_opt_config_t;

/* Read the configuration from the environment. Values not understood keep
 * their default and are described in `warn` (empty when all were fine). */
void sg_opt_config_read(sg_opt_config_t *c, char *warn, size_t n);

/* ---- decisions (decide.c) ---------------------------------------------------- */

/* Why graph g (a model the capture built) must keep its original
 * executable graph: a host callback (the shadow check would run it twice),
 * an NCCL/NVSHMEM kernel (a collective cannot run twice across ranks),
 * conditional nodes (handles set from the device), child graphs (not
 * materialized in the app yet), opaque nodes, kernels the capture could
 * not read, a graph allocation that outlives the graph (the program knows
 * its address, which only the original graph has), a model that disagrees
 * with CUDA's own listing. Returns true and writes the reason, or false. */
bool sg_opt_refuse(const sg_graph_t *g, char *why, size_t n);

/* Would CUDA run something else for `after` than for `before` (after is
 * before rewritten)? Different when a node was added or removed, a node's
 * payload changed, an ordering was added or removed (edges that only
 * repeat an ordering the other graph has by some path change nothing), or
 * edge data differs. *what gets the first difference. Returns 0 or
 * SG_ENOMEM/SG_ECYCLE. */
int sg_opt_changed(const sg_graph_t *before, const sg_graph_t *after, bool *changed, char *what,
                   size_t n);

/* Do two nodes of the same id hold the same work (type and payload;
 * labels, streams and sequence numbers aside)? */
bool sg_opt_same_payload(const sg_node_t *a, const sg_node_t *b);

/* Fused nodes (kernels a pass synthesized) in g, and whether one of them
 * would touch data the analysis cannot see into (a kernel of the graph
 * without a parameter layout: its accesses are unknown). */
uint32_t sg_opt_fused_nodes(const sg_graph_t *g);
bool sg_opt_fusion_blind(const sg_graph_t *model, const sg_graph_t *rewritten, char *why, size_t n);

/* The memory the shadow check saves, restores and compares: every
 * recorded buffer but graph allocations (made and freed by the graph: no
 * contents before, none after) and empty ones. Buffers hold whole
 * allocations (or the ranges capture split an arena into), so a kernel
 * that reaches past the extent of its recorded access is still covered. */
typedef struct {
    uint64_t addr, size;
    uint32_t buffer;
    bool host;     /* host memory: read and written by the CPU */
    bool pageable; /* host memory that is not pinned (no driver copies) */
} sg_opt_span_t;
int sg_opt_shadow_set(const sg_graph_t *g, sg_opt_span_t **spans, uint32_t *n, uint64_t *bytes);

/* The buffer the test plant corrupts: a device buffer some node writes (or
 * may write), SG_NONE when there is none. */
uint32_t sg_opt_plant_target(const sg_graph_t *g);

/* Exec updates. A new argument buffer for kernel node `old` (same layout)
 * is translatable when every pointer-sized word that pointed into a
 * recorded buffer still points into that buffer, and no other word now
 * points into one: the optimized graph was made and checked with the
 * node reading and writing those buffers. Otherwise false with the reason. */
bool sg_opt_kernel_args_ok(const sg_graph_t *g, const sg_kernel_t *old, const uint8_t *bytes,
                           uint32_t size, char *why, size_t n);
/* The same for one address of a copy or set (old -> new). */
bool sg_opt_address_ok(const sg_graph_t *g, uint64_t old_addr, uint64_t new_addr, const char *what,
                       char *why, size_t n);

/* cuGraphExecUpdate: does `now` (the model of the graph the exec was
 * updated from) have the structure of `was` (same live node ids and types,
 * the same edges with the same edge data)? Then *changed (malloc'd, *n
 * ids) lists the nodes whose payload differs. Returns 0 (see *same), or
 * SG_ENOMEM. */
int sg_opt_diff(const sg_graph_t *was, const sg_graph_t *now, bool *same, sg_node_id_t **changed,
                uint32_t *n_changed, char *why, size_t n);

/* ---- the pipeline (pipeline.c) ---------------------------------------------- */

typedef struct {
    uint32_t passes;       /* passes run */
    uint32_t fused_chains; /* kernels a pass synthesized out of chains */
    char chains[200];      /* them, for the summary: "n1+n2 (k_axpb -> k_square), ..." */
    bool fuse_skipped;     /* fusion was not run: the process's fusion time is spent */
} sg_opt_rewrite_stats_t;

/* Rewrite g in place with the in-app pass list (pipeline.c). `fuse`
 * compiles for sm_<arch> and reads kernels' PTX through kernel_ptx (NULL:
 * it fuses nothing); the fused kernels' code goes into files (their cubin
 * and PTX, named by g's images). Returns 0, or an SG_E* code with the
 * failing pass's words in why (g is then partly rewritten: callers pass a
 * clone). */
int sg_opt_pipeline(sg_graph_t *g, uint32_t arch, sg_rewrite_kernel_ptx_fn kernel_ptx,
                    sg_rewrite_files_t *files, sg_opt_rewrite_stats_t *st, char *why, size_t n);
/* The passes, comma separated (for the log). */
const char *sg_opt_pipeline_names(void);

/* Fused kernels compiled per graph in the app (each costs NVRTC a tenth of
 * a second to a second): the chains past it keep their kernels. */
#define SG_OPT_MAX_FUSED 16
/* NVRTC time the process may spend on in-app fusion, all graphs together
 * (SGCAP_OPTIMIZE_FUSE_MS): each fused kernel's compile blocks the
 * program's cuGraphInstantiate (about 1 s each on the H200 for 1000-node
 * graphs of many chains: 17 s for 16 kernels), so fusion stops, and later
 * graphs are optimized without it, once this is spent. */
#define SG_OPT_FUSE_MS 2000u
/* Set the process's fusion budget (the configuration's fuse_ms). */
void sg_opt_pipeline_set_fuse_budget(uint32_t ms);

/* ---- code for fusion (code.c) ------------------------------------------------------ */

/* The fuse pass's kernel_ptx hook in the app: PTX from the images capture
 * holds in the process (a PTX image, a fatbin's best PTX entry, a captured
 * NVRTC program recompiled, cached per source and arch). */
int sg_opt_kernel_ptx(void *user, const sg_graph_t *g, const char *kernel, uint32_t image,
                      uint32_t arch, char **ptx, size_t *len, char *why, size_t n);

/* Which bytes of a kernel's parameters the access analysis of its code
 * reads (sg_access_param_mask): what a fused stage's legality was proven
 * with. mask has k->params_size bytes; 0, or an SG_E* code with why (no
 * PTX, code not analyzable). Cached per image, kernel and layout. */
int sg_opt_stage_param_mask(const sg_graph_t *g, const sg_kernel_t *k, uint8_t *mask, char *why,
                            size_t n);

/* ---- the driver (driver.c) ----------------------------------------------------- */

// clang-format off
#define SG_OPT_DRIVER_FUNCS(X) \
    X(cuGraphKernelNodeGetParams_v2) \
    X(cuGraphKernelNodeGetAttribute) \
    X(cuGraphKernelNodeCopyAttributes) \
    X(cuGraphMemsetNodeGetParams) \
    X(cuGraphMemcpyNodeGetParams) \
    X(cuGraphExecKernelNodeSetParams_v2) \
    X(cuGraphExecNodeSetParams) \
    X(cuGraphExecMemsetNodeSetParams) \
    X(cuGraphExecMemcpyNodeSetParams) \
    X(cuGraphNodeSetEnabled) \
    X(cuMemcpyDtoHAsync_v2) \
    X(cuMemcpyHtoDAsync_v2) \
    X(cuCtxGetCurrent) \
    X(cuCtxSynchronize) \
    X(cuCtxGetDevice) \
    X(cuFuncGetName) \
    X(cuKernelGetName)
// clang-format on

#define SG_OPT_DRIVER_FIELD_(name) __typeof__(&name) name;
typedef struct {
    sg_replay_driver_t r; /* what the materializer calls */
    SG_OPT_DRIVER_FUNCS(SG_OPT_DRIVER_FIELD_)
} sg_opt_driver_t;
#undef SG_OPT_DRIVER_FIELD_

/* Fill d from the shim's real entry points (SG_REAL). SG_EUNSUPPORTED
 * with the missing name when an entry the optimizer needs is absent. */
int sg_opt_driver_fill(sg_opt_driver_t *d, char *why, size_t n);

/* "what: CUDA_ERROR_NAME" into why; returns SG_ECUDA. */
int sg_opt_cu_fail(const sg_opt_driver_t *d, CUresult rc, const char *what, char *why, size_t n);

/* A fused kernel's function in the current context: its cubin loaded with
 * cuLibraryLoadData once per process (by content hash), then the kernel
 * `name` of it (code.c). SG_ECUDA/SG_ELIMIT/SG_EUNSUPPORTED with why. */
int sg_opt_fused_function(const sg_opt_driver_t *d, const void *cubin, size_t size,
                          const char *name, CUfunction *out, char *why, size_t n);

/* ---- the optimized graph (build.c) ---------------------------------------------- */

typedef struct {
    CUgraph graph;      /* G1, kept while E1 lives: exec updates name its nodes */
    CUgraphNode *nodes; /* G1's node of each root node of the rewritten model, by id */
    uint32_t n_nodes;
    sg_reloc_map_t map; /* graph allocations: the original's address -> G1's */
    bool planted;       /* the test plant was added */
    char plant_note[160];
} sg_opt_built_t;

/* Build `rewritten` as a CUgraph in the application's context `ctx`:
 * kernels run the very functions of the original nodes (`orig[id]`, the
 * CUgraphNode of model node id in the program's graph), a fused node the
 * cubin the pass made (in `files`, named by its fusion record's image,
 * loaded with sg_opt_fused_function), events are the program's, memory is
 * where it is. With plant, one memset node after every sink writes 0x5C
 * over the first bytes of the plant target. */
int sg_opt_build(const sg_opt_driver_t *d, CUcontext ctx, int device, const sg_graph_t *rewritten,
                 const sg_rewrite_files_t *files, const uint64_t *orig, uint32_t n_orig, bool plant,
                 sg_opt_built_t *out, char *why, size_t n);
void sg_opt_built_free(const sg_opt_driver_t *d, sg_opt_built_t *b);

/* ---- the shadow check (check.c) ---------------------------------------------------- */

typedef CUresult (*sg_opt_launch_fn)(CUgraphExec exec, CUstream stream);

typedef struct {
    bool e0_launched;   /* E0 ran: its result is the program's */
    CUresult e0_result; /* the result of that launch */
    bool match;         /* E1's results equal E0's, bit for bit */
    double check_ms;    /* the whole check, on the host */
    float e1_ms, e0_ms; /* the two launches, by events on the stream */
    uint64_t bytes;     /* compared */
    char why[240];      /* what failed or differed */
} sg_opt_check_t;

/* On `stream`: save every span, run E1, keep what it left, restore the
 * spans, run E0 (with `launch`, the flavour the program called), compare.
 * Synchronizes the stream (the host needs the results); nothing else. The
 * caller returns res->e0_result to the program when res->e0_launched, and
 * launches E0 itself otherwise (a failure before E1 changed anything). */
void sg_opt_shadow_check(const sg_opt_driver_t *d, CUstream stream, sg_opt_launch_fn launch,
                         CUgraphExec e0, CUgraphExec e1, const sg_graph_t *g,
                         const sg_opt_span_t *spans, uint32_t n_spans, sg_opt_check_t *res);

#endif /* SGCAP_OPTIMIZE_OPT_H */
