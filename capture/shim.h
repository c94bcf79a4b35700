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

#include "book.h"
#include "graph/graph.h"
#include "memmap.h"
#include "outbox.h"

#define SG_SHIM_HIDDEN __attribute__((visibility("hidden")))

/* Reads the configuration, sets up the state and registers the observer
 * (shim.c); sg_capture_module's start. */
int sg_capture_attach(void) SG_SHIM_HIDDEN;

/* Configuration from the environment (read once at attach). */
typedef struct {
    char dir[4096];
    uint32_t max_bundles;        /* SGCAP_MAX_BUNDLES, default 64 */
    bool snapshot;               /* SGCAP_SNAPSHOT=1 */
    uint32_t snapshot_launch;    /* SGCAP_SNAPSHOT_LAUNCH, default 1 */
    uint64_t snapshot_max_bytes; /* SGCAP_SNAPSHOT_MAX_BYTES, default 1 GiB */
    uint64_t code_max_bytes;     /* SGCAP_CODE_MAX_BYTES, default 512 MiB of copied images */
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
    uint64_t graphs, graphs_captured, nodes, streams, events, builds_failed;
    uint64_t crosscheck_bad;
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

/* ---- build.c ---- */
/* Build the model of a CUgraph (capture record, node payloads, buffers,
 * code images). Takes the hot lock. NULL with a reason on failure. */
sg_graph_t *sg_shim_build(CUgraph graph, char *why, size_t n) SG_SHIM_HIDDEN;

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

/* ---- logging ---- */
#define sg_shim_log(...) sg_inject_log(SG_LOG_INFO, __VA_ARGS__)

#endif /* SGCAP_CAPTURE_SHIM_H */
