/* replay.h: rebuild a bundle as a real CUDA graph in a fresh process, run it
 * and compare what it wrote with what the original run wrote (docs/REPLAY.md).
 *
 * Two halves. The CPU half needs no GPU and is unit-tested: planning (can
 * this graph run outside its program, and if not, why), memory regions,
 * the relocation scanner, the snapshot comparison and the trace writer. The
 * GPU half calls the driver only through a table its caller fills
 * (driver.h: from libcuda.so.1 in a process of its own, from the shim's
 * real entry points inside an application), and CUPTI and NVRTC through
 * code/nvlib.h, so every sgcap binary still starts on a machine without a
 * driver: it places memory at the recorded addresses, loads the saved
 * code, builds and instantiates the CUgraph (the materializer), launches,
 * validates, benchmarks and profiles.
 *
 * Library code never prints: reports go to the FILE* the caller passes
 * (options.log), errors come back as SG_E* codes with a message in the
 * caller's buffer.
 */
#ifndef SGCAP_REPLAY_H
#define SGCAP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- planning (CPU) ------------------------------------------------------ */

/* One finding about one node. `node` is a path: "n7" for a node of the root
 * graph, "n4/b0/n2" for node 2 of body 0 of node 4 (a child graph's body is
 * body 0). */
typedef struct {
    char node[64];
    sg_node_type_t type;
    char reason[256];
} sg_plan_issue_t;

typedef struct {
    /* Why the graph can only run inside its program ("in-process only").
     * Empty = it can be replayed here. */
    sg_plan_issue_t *blockers;
    uint32_t n_blockers, cap_blockers;
    /* Replayable, but the user should know (no layout, no snapshot, ...). */
    sg_plan_issue_t *warnings;
    uint32_t n_warnings, cap_warnings;
    uint32_t nodes_by_type[SG_NODE_TYPE_COUNT]; /* every level */
    uint32_t nodes;                             /* every level */
    uint32_t max_depth;                         /* 0 = no bodies */
    uint32_t host_nodes_skipped;                /* with skip_host_nodes */
    bool skip_host_nodes;                       /* how it was planned */
} sg_replay_plan_t;

/* Classify every node of g (bodies included). Returns 0 (the plan may still
 * hold blockers), SG_ENOMEM, or SG_ECYCLE when a graph is not a DAG. */
int sg_replay_plan(const sg_graph_t *g, sg_replay_plan_t *plan);
/* The same; with skip_host_nodes a host callback is a warning, not a
 * blocker (replayed as an empty node, see sg_replay_host_influenced). */
int sg_replay_plan_with(const sg_graph_t *g, bool skip_host_nodes, sg_replay_plan_t *plan);

/* Buffers whose contents after a launch may depend on host callbacks that
 * a replay skips: every host buffer (a callback may read or write it) and,
 * from there, every buffer written by a node that runs after a host node
 * and reads an influenced buffer. *out (malloc'd, one per buffer, NULL when
 * the graph has no host node) is true for those. Returns 0 or SG_ENOMEM /
 * SG_ECYCLE. */
int sg_replay_host_influenced(const sg_graph_t *g, bool **out, uint32_t *n_influenced);
void sg_replay_plan_free(sg_replay_plan_t *plan);

/* Is this kernel one that needs the original processes: a kernel of a
 * communication library (NCCL, NVSHMEM), by graph/comm.h's one rule? */
bool sg_replay_kernel_needs_process(const char *mangled);

/* ---- memory regions (CPU) -------------------------------------------------- */

/* Buffers are placed by region: the recorded ranges rounded out to the
 * mapping granularity and merged where they touch, because several small
 * allocations usually share one 2 MiB page and a page is the smallest thing
 * that can be mapped at an address. Graph allocations are not in any region
 * (the graph's own mem_alloc node creates them). */
typedef struct {
    uint64_t base, size; /* aligned recorded range */
    bool host;           /* host memory (page granularity) */
    bool pageable;       /* host memory that was not pinned: mapped, not registered */
    uint32_t n_buffers;  /* buffers inside */
} sg_region_t;

/* Regions for g's buffers, sorted by base, device regions aligned to
 * device_granularity and host regions to host_page (both powers of two).
 * Buffers of size 0 are skipped. SG_EINVAL on a range that wraps around. */
int sg_replay_plan_regions(const sg_graph_t *g, uint64_t device_granularity, uint64_t host_page,
                           sg_region_t **out, uint32_t *n_out);
/* Which region holds [addr, addr+size)? SG_NONE if none. */
uint32_t sg_region_find(const sg_region_t *r, uint32_t n, uint64_t addr, uint64_t size, bool host);

/* ---- early reservation of the recorded ranges (CPU) ------------------------ */

typedef struct {
    uint32_t regions;     /* recorded regions (2 MiB device / page host granularity) */
    uint32_t reserved;    /* held (PROT_NONE) until memory.c maps them */
    uint32_t taken;       /* already mapped in this process: will be relocated */
    uint64_t first_taken; /* base of the first taken one, 0 if none */
} sg_reserve_report_t;

/* Reserve g's recorded ranges now (call before the driver is loaded; may be
 * called for several graphs). Adds to *rep (zero it first). Placement
 * releases each range right before it maps it. Returns 0 or SG_ENOMEM /
 * SG_EINVAL (a range that wraps around). */
int sg_replay_reserve(const sg_graph_t *g, sg_reserve_report_t *rep);
/* Release every reservation still held; how many are held. */
void sg_replay_unreserve_all(void);
uint32_t sg_replay_reservations_held(void);

/* ---- relocation (CPU) -------------------------------------------------------- */

typedef struct {
    uint64_t old_base, size, new_base;
    uint32_t buffer;
} sg_reloc_range_t;

/* Where each recorded buffer lives now, and conditional handles (which are
 * plain 64-bit values in the parameters of the kernels that set them). */
typedef struct {
    sg_reloc_range_t *ranges; /* sorted by old_base once a lookup has happened */
    uint32_t n, cap;
    bool sorted;
    uint64_t (*handles)[2]; /* {old, new} */
    uint32_t n_handles, cap_handles;
} sg_reloc_map_t;

void sg_reloc_map_init(sg_reloc_map_t *m);
void sg_reloc_map_free(sg_reloc_map_t *m);
/* Add (or replace, for the same buffer) a range. */
int sg_reloc_map_add(sg_reloc_map_t *m, uint32_t buffer, uint64_t old_base, uint64_t size,
                     uint64_t new_base);
int sg_reloc_map_add_handle(sg_reloc_map_t *m, uint64_t old_value, uint64_t new_value);
/* Translate an address that lies in a recorded buffer, or exactly one past
 * its end when no buffer holds it (end pointers are common). Returns false
 * for an address in no buffer. */
bool sg_reloc_translate(sg_reloc_map_t *m, uint64_t addr, uint64_t *out, uint32_t *buffer,
                        bool *one_past_end);

typedef enum {
    SG_RELOC_PARAM = 0, /* a kernel parameter word */
    SG_RELOC_HANDLE,    /* a kernel parameter word equal to a conditional handle */
    SG_RELOC_MEMCPY_SRC,
    SG_RELOC_MEMCPY_DST,
    SG_RELOC_MEMSET_DST,
    SG_RELOC_MEM_FREE,
} sg_reloc_site_t;

typedef struct {
    char node[64]; /* node path */
    sg_reloc_site_t site;
    uint32_t param;  /* parameter index (SG_NONE when the layout was unknown) */
    uint32_t offset; /* byte offset in the argument buffer */
    uint64_t old_value, new_value;
    uint32_t buffer; /* SG_NONE for a handle */
    bool one_past_end;
} sg_reloc_entry_t;

typedef struct {
    sg_reloc_entry_t *entries;
    uint32_t n, cap;
    uint32_t scanned_without_layout; /* kernels whose whole argument buffer was scanned */
    uint32_t from_code; /* kernels relocated exactly by their access facts' pointer words */
    uint32_t heuristic; /* kernels relocated by the heuristic (no complete facts) */
} sg_reloc_report_t;

void sg_reloc_report_free(sg_reloc_report_t *r);

/* Rewrite in `bytes` (a copy of k->param_bytes, k->params_size long) the
 * 8-byte words that hold an address in a recorded buffer that moved, or a
 * conditional handle that changed. Which words: when k's access facts are
 * complete (PTX or SASS), exactly those at k->facts.pointers; else (the
 * heuristic) every word that lies inside one parameter of at least 8 bytes
 * at an offset that is a multiple of 8, or with no layout every aligned
 * word of the buffer. Each rewrite is appended to rep (may be NULL), which
 * also counts the kernels done each way. Returns the number of words
 * rewritten, or SG_ENOMEM. */
int sg_reloc_kernel_params(sg_reloc_map_t *m, const sg_kernel_t *k, uint8_t *bytes,
                           const char *node, sg_reloc_report_t *rep);
/* Translate one node address (memcpy, memset, free) and report it when it
 * moved. Returns 1 if it moved, 0 if not, SG_ENOENT when addr is in no
 * recorded buffer, SG_ENOMEM. */
int sg_reloc_address(sg_reloc_map_t *m, uint64_t *addr, sg_reloc_site_t site, const char *node,
                     sg_reloc_report_t *rep);
/* Human-readable report with the heuristic warning. */
void sg_reloc_report_print(const sg_reloc_report_t *r, const sg_graph_t *g, bool full, FILE *f);
const char *sg_reloc_site_name(sg_reloc_site_t s);

/* ---- comparison (CPU) ---------------------------------------------------------- */

#define SG_ULP_INF UINT64_MAX /* NaN against a number, or an infinity against anything else */

typedef struct {
    bool float32; /* compare as float32 elements with a ULP tolerance */
    uint32_t ulp; /* tolerance, float32 only */
} sg_compare_options_t;

typedef struct {
    uint64_t bytes;          /* bytes compared */
    uint64_t elements;       /* float32 mode: elements; bitwise: bytes */
    uint64_t mismatches;     /* elements (float32) or bytes (bitwise) beyond tolerance */
    uint64_t first_mismatch; /* index of the first one, in elements/bytes; UINT64_MAX if none */
    uint64_t differing;      /* float32 mode: elements that differ at all, even within tolerance */
    /* Float32 view, whenever bytes is a multiple of 4 (also in bitwise mode,
     * as information): the largest |got - want| over pairs of finite values
     * and the largest ULP distance (SG_ULP_INF when a NaN met a number). */
    bool as_float;
    double max_abs;
    uint64_t max_ulp;
} sg_compare_result_t;

/* ULP distance of two float32 values: the number of representable floats
 * between them, so +0 and -0 are 0 apart, the smallest denormals of each
 * sign 2 apart. Two NaNs are 0 apart (any payload); a NaN and a number, or
 * an infinity and anything but itself, are SG_ULP_INF apart. */
uint64_t sg_float32_ulp_distance(float a, float b);

/* Compare got against want (n bytes each). Bitwise unless o->float32. In
 * float32 mode a trailing part shorter than 4 bytes is compared bitwise. */
void sg_compare_buffers(const void *got, const void *want, size_t n, const sg_compare_options_t *o,
                        sg_compare_result_t *r);

/* ---- trace (CPU) ------------------------------------------------------------------ */

typedef struct {
    char node[64]; /* node path */
    char name[96]; /* short kernel name or node type */
    sg_node_type_t type;
    uint32_t stream; /* stream index or SG_STREAM_EXPLICIT */
    uint64_t start_ns, end_ns;
} sg_trace_event_t;

/* Chrome/Perfetto trace JSON: one process, one track (tid) per captured
 * stream of g ("explicit" gets its own), named by the stream label and
 * sorted by stream index; one complete ("X") event per entry, times in µs
 * relative to the earliest start. Returns 0 or SG_EIO/SG_ENOMEM. */
int sg_trace_write(const sg_graph_t *g, const sg_trace_event_t *ev, uint32_t n, FILE *f);

/* ---- the GPU half ------------------------------------------------------------------ */

typedef struct {
    bool relocate;            /* place memory anywhere and relocate (tests the fallback) */
    bool profile;             /* get CUPTI ready before the graph is built */
    uint64_t max_image_bytes; /* bound on a code image; 0 = 1 GiB */
    FILE *log;                /* warnings and reports; NULL = none */
    bool verbose;             /* full relocation report */
    bool skip_host_nodes;     /* host callbacks become empty nodes (--host-nodes skip) */
    /* the open bundle to read code and snapshots through (graph/bundle.h:
     * its directory descriptor, no link followed); NULL: the bundle path is
     * opened again for each file */
    const struct sg_bundle *files;
} sg_replay_options_t;

typedef struct {
    double read_ms;        /* code images read from the bundle */
    double place_ms;       /* memory reserved and mapped */
    double load_ms;        /* code images loaded (and compiled) */
    double materialize_ms; /* CUgraph built */
    double instantiate_ms;
    double upload_ms;
    uint32_t cuda_nodes; /* nodes created, every level */
} sg_replay_timings_t;

typedef struct sg_replay sg_replay_t;
typedef struct sg_replay_gpu sg_replay_gpu_t;
struct sg_replay_driver; /* driver.h */
struct CUctx_st;         /* cuda.h: CUcontext */

/* The GPU replays run on: `drv`, the driver's entry points (kept by
 * pointer: it must outlive the gpu and every replay on it), device ordinal
 * `device`, and the context to work in. ctx NULL: the device's primary
 * context is retained and made current on the calling thread, and released
 * by sg_replay_gpu_close (a process of its own: `sgcap replay`). Otherwise
 * replay works in ctx as it is: never retains, releases or switches it (the
 * caller keeps it current on the threads that call replay; the in-app
 * optimizer passes the application's). SG_ECUDA with a message when there
 * is no usable GPU of that ordinal. */
int sg_replay_gpu_open(const struct sg_replay_driver *drv, int device, struct CUctx_st *ctx,
                       sg_replay_gpu_t **out, char *err, size_t errlen);
void sg_replay_gpu_close(sg_replay_gpu_t *gpu);

/* Compare the bundle's device with this one: warns (to log) about another
 * name or driver; SG_EUNSUPPORTED for another compute capability unless
 * force. */
int sg_replay_device_check(const sg_graph_t *g, const sg_replay_gpu_t *gpu, bool force, FILE *log,
                           char *err, size_t errlen);

/* Build everything on gpu: memory, code, CUgraph, executable graph. `g`
 * and `gpu` must stay alive and unchanged (durations aside) until
 * sg_replay_close. Errors: SG_ECUDA, SG_EUNSUPPORTED (a kernel missing from
 * its image, NVRTC missing, ...), bundle errors from reading code
 * (SG_ENOENT, SG_EFORMAT, SG_ELIMIT). */
int sg_replay_open(const char *bundle, const sg_graph_t *g, const sg_replay_gpu_t *gpu,
                   const sg_replay_options_t *opt, sg_replay_t **out, char *err, size_t errlen);
void sg_replay_close(sg_replay_t *r);

const sg_replay_timings_t *sg_replay_timings(const sg_replay_t *r);
const sg_reloc_report_t *sg_replay_relocations(const sg_replay_t *r);
/* Buffers placed at their recorded address / elsewhere / by the graph. */
void sg_replay_placement(const sg_replay_t *r, uint32_t *same, uint32_t *moved, uint32_t *by_graph);
/* Regions (what is mapped) placed at their recorded address, of all. */
void sg_replay_region_placement(const sg_replay_t *r, uint32_t *same, uint32_t *total);

/* Write the "before" snapshots into the buffers (others are zeroed when
 * placed). Bundle errors on a missing or bad snapshot. */
int sg_replay_restore(sg_replay_t *r, char *err, size_t errlen);
/* Launch once and wait for it. */
int sg_replay_run(sg_replay_t *r, char *err, size_t errlen);

typedef enum {
    SG_CHECK_MATCH = 0,
    SG_CHECK_MISMATCH,
    SG_CHECK_SKIPPED, /* not compared: note says why */
} sg_check_status_t;

typedef struct {
    uint32_t buffer;
    sg_check_status_t status;
    char note[192];
    sg_compare_result_t cmp;
} sg_buffer_check_t;

/* Compare every buffer against its "after" snapshot; out is malloc'd with
 * one entry per buffer. Returns 0 (look at the statuses) or an error. */
int sg_replay_validate(sg_replay_t *r, const sg_compare_options_t *o, sg_buffer_check_t **out,
                       uint32_t *n_out, char *err, size_t errlen);

/* After a mismatch: read every compared buffer, restore, launch again and
 * compare the second replay with the first. differing > 0: the graph is not
 * deterministic; 0: the replay is repeatable, so the difference from the
 * capture comes from something the bundle does not hold. */
typedef struct {
    uint32_t compared, differing; /* buffers */
    uint32_t first_buffer;        /* the first that differed */
    uint64_t bytes_differing;
    uint64_t max_ulp; /* float32 view, where the sizes allow */
} sg_repeat_result_t;
int sg_replay_repeat(sg_replay_t *r, sg_repeat_result_t *out, char *err, size_t errlen);

/* Timed launches. Each launch is timed with its own pair of CUDA events,
 * after `warmup` untimed launches; samples_us (n entries) may be NULL.
 * With two replays, launches alternate in chunks so both see the same GPU
 * state and clocks. */
int sg_replay_bench(sg_replay_t *r, uint32_t n, uint32_t warmup, double *median_us,
                    double *samples_us, char *err, size_t errlen);
int sg_replay_bench_pair(sg_replay_t *a, sg_replay_t *b, uint32_t n, uint32_t warmup,
                         double *median_a_us, double *median_b_us, char *err, size_t errlen);

/* Profile `launches` launches with CUPTI (opt.profile must have been set):
 * stores each node's median GPU duration into its model node's duration_ns
 * (g is the graph passed to open; that is why it is not const here) and
 * returns the last launch's events for a trace (malloc'd). Records are
 * matched to nodes by their graph node ids; *by_name counts kernel records
 * matched by the name fallback instead, *unmatched those matched nowhere. */
int sg_replay_profile(sg_replay_t *r, sg_graph_t *g, uint32_t launches, sg_trace_event_t **events,
                      uint32_t *n_events, uint32_t *unmatched, uint32_t *by_name, char *err,
                      size_t errlen);

/* Median of n doubles (sorts v). 0 for n == 0. */
double sg_replay_median(double *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REPLAY_H */
