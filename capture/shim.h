/* shim.h: private to the parts of capture/ that run inside libsgcap.so and
 * call CUDA (shim.c, build.c, code.c, snapshot.c): the process-wide state,
 * its locks, and the functions they share. Everything here is reached from
 * sg_capture_attach(), capture's start as a module of the shim (capture.h);
 * nothing here is linked into the sgcap CLI or the unit tests.
 *
 * Locks, never held across a call back into the program: hot (capture
 * bookkeeping and the memory map; taken on every enqueue during a capture
 * and held through a graph build) and out (bundle policy and totals; held
 * through a bundle write) are never held together; code (the code image
 * store) and snap (snapshot bookkeeping) are innermost: taken under hot or
 * out, never the other way round. Every CUDA call made here goes through SG_REAL inside the
 * reentrancy guard (observer callbacks already run inside it), and calls
 * that are not pure queries run in relaxed capture mode.
 */
#ifndef SGCAP_CAPTURE_SHIM_H
#define SGCAP_CAPTURE_SHIM_H

#include "inject/inject.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

#include "book.h"
#include "bytes.h"
#include "graph/graph.h"
#include "memmap.h"
#include "outbox.h"
#include "reasons.h"
#include "graph/bundle.h"

#define SG_SHIM_HIDDEN __attribute__((visibility("hidden")))

/* Reads the configuration, sets up the state and registers the observer
 * (shim.c); sg_capture_module's start. */
int sg_capture_attach(void) SG_SHIM_HIDDEN;

/* Configuration from the environment (read once at attach). */
typedef struct {
    char dir[4096];
    uint32_t max_bundles;        /* SGCAP_MAX_BUNDLES, default 64 */
    uint32_t max_variants;       /* SGCAP_MAX_VARIANTS: bundles per shape, default 4, 0 no cap */
    bool snapshot;               /* SGCAP_SNAPSHOT=1 */
    bool fsync;                  /* SGCAP_FSYNC=1: bundles written durably (fsync'ed) */
    uint32_t snapshot_launch;    /* SGCAP_SNAPSHOT_LAUNCH, default 1 */
    uint64_t snapshot_max_bytes; /* SGCAP_SNAPSHOT_MAX_BYTES, default 1 GiB */
    uint64_t code_max_bytes;     /* SGCAP_CODE_MAX_BYTES, default 512 MiB of copied images */
    uint64_t arena_bytes;        /* SGCAP_ARENA_BYTES: split buffers larger (arena.h), 1 GiB */
    uint64_t arena_open_bytes;   /* SGCAP_ARENA_OPEN_BYTES: an open-ended access in one, 64 MiB */
    char program[80];
    int64_t pid;
} sg_shim_config_t;


/* A conditional node made with cuGraphAddNode_v2: its bodies. */
typedef struct sg_cond_info {
    uint64_t node;  /* key */
    uint64_t graph; /* the graph it was added to */
    uint32_t type;  /* CUgraphConditionalNodeType */
    uint64_t handle;
    uint32_t n_bodies;
    uint64_t *bodies; /* CUgraph, owned by the node */
    UT_hash_handle hh;
} sg_cond_info_t;

typedef struct sg_cond_handle {
    uint64_t handle; /* key: CUgraphConditionalHandle */
    uint64_t graph;
    uint32_t default_value, flags;
    UT_hash_handle hh;
} sg_cond_handle_t;

typedef struct {
    sg_shim_config_t cfg;
    /* hot */
    pthread_mutex_t hot;
    sg_book_t *book;
    sg_memmap_t mem;
    sg_memmap_t reservations; /* VMM address reservations: group ids for maps */
    sg_cond_info_t *conds;
    sg_cond_handle_t *cond_handles;
    atomic_int sessions; /* open capture sessions: the enqueue fast path */
    /* out */
    pthread_mutex_t out;
    sg_outbox_t outbox;
    uint32_t next_sequence;
    /* totals for the exit summary (under out) */
    uint64_t graphs_seen;  /* instantiations and exec updates */
    uint64_t graphs_by_digest; /* of graphs: recorded without a model build */
    uint64_t variants;         /* distinct graphs not written: SGCAP_MAX_VARIANTS of their
                                  shape were (they are counted among graphs_by_digest) */
    uint64_t graphs, graphs_captured, nodes, streams, events, builds_failed;
    uint64_t crosscheck_bad;
    sg_reasons_t failures; /* distinct reasons a graph was not recorded */
    atomic_int cuda_seen;
} sg_shim_t;

extern sg_shim_t sg_shim SG_SHIM_HIDDEN;

/* Relaxed mode + guard for calls that are not pure queries. */
#define SG_SHIM_RELAXED(stmt)                                                                      \
    do {                                                                                           \
        sg_relaxed_t sg_rx_;                                                                       \
        sg_inject_relaxed_begin(&sg_rx_);                                                          \
        stmt;                                                                                      \
        sg_inject_relaxed_end(&sg_rx_);                                                            \
    } while (0)

/* Stream identity for the book: the handle, or for the per-thread default
 * stream (one handle value, one stream per thread) its cuStreamGetId. */
uint64_t sg_shim_stream_key(CUstream s) SG_SHIM_HIDDEN;
/* Is the stream in a capture we track? (takes the hot lock) */
bool sg_shim_stream_in_capture(CUstream s) SG_SHIM_HIDDEN;

/* ---- execs.c: in-place changes of executable graphs ---- */
typedef struct sg_override sg_override_t; /* new parameters of one node */
/* exec was instantiated from / updated with graph (forgets earlier changes). */
void sg_execs_bind(CUgraphExec exec, CUgraph graph) SG_SHIM_HIDDEN;
void sg_execs_forget(CUgraphExec exec) SG_SHIM_HIDDEN;
void sg_execs_graph_destroyed(CUgraph graph) SG_SHIM_HIDDEN;
/* AFTER of cuGraphExec*SetParams, cuGraphNodeSetEnabled & co. */
void sg_execs_on_set(sg_call_t *call) SG_SHIM_HIDDEN;
/* At a launch: 0 = unchanged since recorded; 1 = changed: record *graph
 * again with *ov (a private copy: free it with sg_execs_free_overrides);
 * -1 = changed in a way that cannot be recorded (why says how). The change
 * counts as handled either way. */
int sg_execs_pending(CUgraphExec exec, CUgraph *graph, sg_override_t **ov, char *why,
                     size_t n) SG_SHIM_HIDDEN;
void sg_execs_free_overrides(sg_override_t *ov) SG_SHIM_HIDDEN;
/* The override of `node` if it has one of that type, else NULL. */
const sg_override_t *sg_execs_override(const sg_override_t *ov, uint64_t node,
                                       CUgraphNodeType type) SG_SHIM_HIDDEN;
const CUDA_KERNEL_NODE_PARAMS *sg_override_kernel(const sg_override_t *o) SG_SHIM_HIDDEN;
const CUDA_MEMCPY3D *sg_override_memcpy(const sg_override_t *o) SG_SHIM_HIDDEN;
const CUDA_MEMSET_NODE_PARAMS *sg_override_memset(const sg_override_t *o) SG_SHIM_HIDDEN;
void sg_execs_atfork_child(void) SG_SHIM_HIDDEN;

/* ---- build.c ---- */
/* Build the model of a CUgraph (capture record, node payloads, buffers,
 * code images), with the nodes in `ov` (may be NULL) read from there
 * instead of the graph. Takes the hot lock. NULL with a reason on failure. */
sg_graph_t *sg_shim_build(CUgraph graph, const sg_override_t *ov, char *why,
                          size_t n) SG_SHIM_HIDDEN;
/* The same, and (root_nodes given) the CUgraphNode of each node of the root
 * graph by model id (*n_root_nodes entries, malloc'd) and the number of
 * nodes whose payload could not be read (*unreadable, may be NULL). */
sg_graph_t *sg_shim_build_mapped(CUgraph graph, const sg_override_t *ov, uint64_t **root_nodes,
                                 uint32_t *n_root_nodes, uint32_t *unreadable, char *why,
                                 size_t n) SG_SHIM_HIDDEN;
/* Does this process see more than one device (then bundle names carry the
 * device ordinal)? Asked of the driver once. */
bool sg_shim_many_devices(void) SG_SHIM_HIDDEN;

/* ---- rawdigest.c: a graph's digest without a model ---- */
typedef struct {
    uint64_t digest;
    uint64_t shape;                  /* the same without kernel argument bytes, but for
                                        the words pointing into device memory: graphs
                                        that differ only in their kernels' coefficients,
                                        sizes or flags share it */
    uint32_t nodes, streams, events; /* for the summary when no model is built */
    bool captured;                   /* it has a capture record */
} sg_raw_digest_t;
/* Equal raw digests build equal models. SG_EUNSUPPORTED for graphs with
 * bodies (always built); other errors: build it and let the build say. */
int sg_shim_raw_digest(CUgraph graph, const sg_override_t *ov, sg_raw_digest_t *out) SG_SHIM_HIDDEN;

/* ---- calls.c: a graph known by the calls that captured it ---- */
/* Entry points that change a graph or node, or stream/function attributes,
 * were called (any thread, no lock). */
void sg_shim_calls_graph_changed(void) SG_SHIM_HIDDEN;
void sg_shim_calls_attr_changed(void) SG_SHIM_HIDDEN;
/* Right after sg_book_begin of a new capture on stream key (hot lock). */
void sg_shim_calls_begin(uint64_t key) SG_SHIM_HIDDEN;
/* Right before sg_book_enqueue of call c on stream key (hot lock): notes a
 * kernel launch it can describe. */
void sg_shim_calls_note(uint64_t key, const sg_call_t *c) SG_SHIM_HIDDEN;
/* The call digest and shape of a captured graph whose record allows it
 * (takes the hot lock), in the raw digest's form but a key space of its
 * own: equal call digests, equal raw digests. SG_EUNSUPPORTED otherwise. */
int sg_shim_calls_digest(CUgraph graph, const sg_override_t *ov, sg_raw_digest_t *out) SG_SHIM_HIDDEN;

/* ---- kinfo.c: per-kernel facts, asked once per function handle ---- */
typedef struct {
    char *name;      /* mangled; NULL when the driver would not say */
    bool kernel_api; /* the handle is a CUkernel (possibly cast to CUfunction) */
    uint32_t n_params, total;
    uint32_t *offs, *sizes; /* cuFuncGetParamInfo / cuKernelGetParamInfo */
    uint64_t layout;        /* a hash of n_params and sizes (0 in the empty entry) */
    size_t arg_bytes;       /* the sum of sizes */
    bool *ro;               /* pointer-to-const parameters (from the mangled name) */
} sg_kinfo_t;
/* Never NULL (an empty entry when unknown); valid for the life of the
 * process. func may be NULL (then kern is the kernel). */
const sg_kinfo_t *sg_kinfo_get(CUfunction func, CUkernel kern) SG_SHIM_HIDDEN;
/* A module or library was unloaded: handles may be reused. */
void sg_kinfo_invalidate(void) SG_SHIM_HIDDEN;
uint64_t sg_kinfo_generation(void) SG_SHIM_HIDDEN; /* changes at every invalidation */
void sg_kinfo_atfork_child(void) SG_SHIM_HIDDEN;

/* A kernel's argument bytes into args, and into shape their layout (the
 * parameter count and sizes as one word, sg_kinfo_t.layout, or the extra
 * form's length), any missing argument, and the words that point into
 * known device memory with their places, then how many of those there
 * were, from the kernelParams or extra of a launch or a node; the raw
 * digest and calls.c describe a kernel alike. SG_ELIMIT for an extra
 * buffer over the bundle's bound; out of memory sets a run's oom (the
 * caller checks). Under the hot lock. */
int sg_shim_kernel_args(sg_bytes_t *args, sg_bytes_t *shape, const sg_kinfo_t *ki, void **params,
                        void **extra) SG_SHIM_HIDDEN;

/* ---- code.c: code images ---- */
int sg_code_attach(void) SG_SHIM_HIDDEN;
void sg_code_on_module(sg_phase_t phase, sg_call_t *call, void *user) SG_SHIM_HIDDEN;
void sg_code_on_nvrtc(sg_phase_t phase, sg_call_t *call, void *user) SG_SHIM_HIDDEN;
/* The image holding a kernel (func or kern), added to g's image table;
 * SG_NONE with a reason when unknown. */
uint32_t sg_code_image_for_kernel(sg_graph_t *g, CUfunction func, CUkernel kern, const char *name,
                                  char *why, size_t n) SG_SHIM_HIDDEN;
/* Blobs (code/HASH.ext) for the images of g; the data stays valid for the
 * life of the process. *out is malloc'd. */
int sg_code_blobs(const sg_graph_t *g, void **out, size_t *n) SG_SHIM_HIDDEN;
/* The bytes of image `image` of g (as a bundle's code/ file would hold
 * them), valid for the life of the process; SG_ENOENT when capture holds
 * none (a load it did not copy). */
int sg_code_image_bytes(const sg_graph_t *g, uint32_t image, const void **bytes,
                        size_t *size) SG_SHIM_HIDDEN;
void sg_code_summary(char *buf, size_t n) SG_SHIM_HIDDEN;
void sg_code_atfork_prepare(void) SG_SHIM_HIDDEN;
void sg_code_atfork_parent(void) SG_SHIM_HIDDEN;
void sg_code_atfork_child(void) SG_SHIM_HIDDEN;

/* ---- snapshot.c ---- */
/* A bundle was written for exec (or a duplicate names bundle `path`). */
void sg_snap_bind(CUgraphExec exec, const char *path, const sg_graph_t *g) SG_SHIM_HIDDEN;
void sg_snap_forget(CUgraphExec exec) SG_SHIM_HIDDEN;
void sg_snap_on_launch(sg_phase_t phase, sg_call_t *call) SG_SHIM_HIDDEN;
void sg_snap_atfork_child(void) SG_SHIM_HIDDEN;

/* ---- writer.c: bundle writes off the program's thread ---- */
/* Write g (taken) with blobs (copied; their data must stay valid until the
 * write: code images do, `owned` memory is freed after it) to path, in
 * submission order. SG_ENOMEM: nothing taken, nothing written. */
int sg_writer_submit(sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                     size_t n_blobs, unsigned flags, void **owned, size_t n_owned,
                     const char *what) SG_SHIM_HIDDEN;
void sg_writer_flush(void) SG_SHIM_HIDDEN; /* wait until every submitted write is done */
uint64_t sg_writer_failed(void) SG_SHIM_HIDDEN;
void sg_writer_atfork_prepare(void) SG_SHIM_HIDDEN;
void sg_writer_atfork_parent(void) SG_SHIM_HIDDEN;
void sg_writer_atfork_child(void) SG_SHIM_HIDDEN;

/* ---- logging ---- */
#define sg_shim_log(...) sg_inject_log(SG_LOG_INFO, __VA_ARGS__)

#endif /* SGCAP_CAPTURE_SHIM_H */
