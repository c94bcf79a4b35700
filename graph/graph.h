/* graph.h: the stream-annotated graph model that every part of sgcap speaks.
 *
 * A graph is a DAG of nodes (kernel, memcpy, ...) and edges. Unlike a plain
 * CUDA graph, every node remembers the stream it was captured on and its
 * capture sequence number, and every edge remembers why it exists: program
 * order on one stream, an event record/wait pair (naming the event), an
 * ordering a pass made explicit (control) or a deferred deallocation. The
 * root graph also owns the tables the nodes refer to by index: streams,
 * events, buffers (address ranges the graph touches) and code images.
 *
 * Body graphs (child-graph and conditional nodes) are sg_graph_t values too;
 * they share their root's tables, so a stream or buffer index means the same
 * thing at every depth.
 *
 * Identity and cost contracts:
 *   - Node and edge ids are dense indices assigned at creation and never
 *     reused within one graph; removing leaves a hole (sg_graph_node returns
 *     NULL for it). Ids survive bundle write/read unchanged.
 *   - Adding or removing a node or edge costs O(degree of the nodes touched),
 *     never O(graph). Merging a chain costs O(sum of the chain's degrees).
 *   - Strings and arrays held by nodes are owned by the graph and freed with
 *     it; setters copy their inputs.
 *   - Functions that can fail return 0 or a negative SG_E* code. Nothing here
 *     prints, exits or aborts: this code also runs inside the shim.
 */
#ifndef SGCAP_GRAPH_H
#define SGCAP_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------ */

enum {
    SG_OK = 0,
    SG_ENOMEM = -1,       /* allocation failed */
    SG_EINVAL = -2,       /* bad argument (unknown id, wrong node type, ...) */
    SG_ENOENT = -3,       /* no such file, node, edge or entry */
    SG_ECYCLE = -4,       /* the operation would create or found a cycle */
    SG_EFORMAT = -5,      /* malformed input (bundle, fatbin, ...) */
    SG_EIO = -6,          /* read/write/rename failed */
    SG_ELIMIT = -7,       /* a size or count limit was exceeded */
    SG_EUNSUPPORTED = -8, /* valid but not handled by this version */
    SG_EEXIST = -9,       /* already exists */
    SG_ECUDA = -10,       /* a CUDA call failed */
};

/* Static message for an SG_E* code ("unknown error" for anything else). */
const char *sg_strerror(int code);

/* ---- identifiers -------------------------------------------------------- */

typedef uint32_t sg_node_id_t;
typedef uint32_t sg_edge_id_t;
#define SG_NONE UINT32_MAX            /* "no id": no node, no event, no image */
#define SG_STREAM_EXPLICIT UINT32_MAX /* node added with cuGraphAdd*Node */

/* ---- tables of the root graph ------------------------------------------ */

typedef struct {
    uint32_t id;     /* index in the table */
    char *label;     /* "s0", "s1", ... in capture order; never NULL */
    uint64_t handle; /* CUstream value in the captured process (informational) */
    uint64_t cuda_id; /* cuStreamGetId value, 0 if unknown */
    int32_t priority;
    uint32_t flags;     /* CU_STREAM_* creation flags */
    bool per_thread;    /* captured through a _ptsz entry point / per-thread stream */
} sg_stream_t;

typedef struct {
    uint32_t id;
    char *label;     /* "e0", "e1", ... */
    uint64_t handle; /* CUevent value (informational) */
    uint32_t flags;  /* CU_EVENT_* creation flags */
    bool external;   /* recorded/waited with the external flags: real nodes */
} sg_event_t;

typedef enum {
    SG_BUFFER_DEVICE = 0,  /* cuMemAlloc & friends, VMM mappings */
    SG_BUFFER_GRAPH_ALLOC, /* allocated by a mem_alloc node of this graph */
    SG_BUFFER_ASYNC,       /* stream-ordered allocation outside the graph */
    SG_BUFFER_MANAGED,
    SG_BUFFER_HOST_PINNED, /* cuMemHostAlloc / registered host memory */
    SG_BUFFER_UNKNOWN,
    SG_BUFFER_HOST_PAGEABLE, /* plain host memory a copy node reads or writes (exact range) */
    SG_BUFFER_KIND_COUNT
} sg_buffer_kind_t;

/* Memory of the host (pinned or pageable): read and written by the CPU,
 * placed with mmap at replay. */
static inline bool sg_buffer_kind_is_host(sg_buffer_kind_t k)
{
    return k == SG_BUFFER_HOST_PINNED || k == SG_BUFFER_HOST_PAGEABLE;
}

typedef struct {
    uint32_t id;
    char *label;         /* "b0", ... */
    sg_buffer_kind_t kind;
    uint64_t address;    /* device virtual address in the captured process */
    uint64_t size;       /* bytes */
    sg_node_id_t alloc_node; /* mem_alloc node (GRAPH_ALLOC) or SG_NONE */
    /* Snapshots, relative paths inside the bundle or NULL. */
    char *before_file;
    char *after_file;
    uint64_t snapshot_bytes; /* uncompressed bytes per snapshot, 0 if none */
    char *snapshot_note;     /* why a snapshot was skipped, or NULL */
} sg_buffer_t;

typedef enum {
    SG_IMAGE_FATBIN = 0,
    SG_IMAGE_CUBIN,
    SG_IMAGE_PTX,
    SG_IMAGE_NVRTC,   /* NVRTC source + options */
    SG_IMAGE_UNKNOWN,
    SG_IMAGE_KIND_COUNT
} sg_image_kind_t;

typedef struct {
    uint32_t id;
    sg_image_kind_t kind;
    char hash[17];        /* xxh64 of the bytes, 16 lowercase hex digits */
    char *file;           /* relative path inside the bundle ("code/HASH.fatbin") or NULL */
    uint64_t size;        /* bytes */
    uint32_t n_ptx_archs; /* PTX targets present, e.g. 90 for sm_90 */
    uint32_t *ptx_archs;
    uint32_t n_sass_archs; /* SASS (ELF) archs present */
    uint32_t *sass_archs;
    char *options;        /* NVRTC or JIT options, NULL if none */
    char *note;           /* free text (why no PTX, ...) or NULL */
    uint32_t source_image; /* the NVRTC source image this image was compiled from,
                              or SG_NONE (its PTX can be recovered by recompiling) */
    uint32_t ptx_image;    /* the PTX image this cubin was assembled from (Triton
                              keeps both in its cache), or SG_NONE: its PTX */
} sg_image_t;

/* ---- nodes --------------------------------------------------------------- */

typedef enum {
    SG_NODE_KERNEL = 0,
    SG_NODE_MEMCPY,
    SG_NODE_MEMSET,
    SG_NODE_HOST,
    SG_NODE_EMPTY,
    SG_NODE_EVENT_RECORD,
    SG_NODE_EVENT_WAIT,
    SG_NODE_MEM_ALLOC,
    SG_NODE_MEM_FREE,
    SG_NODE_CHILD_GRAPH,
    SG_NODE_CONDITIONAL,
    SG_NODE_OPAQUE,
    SG_NODE_TYPE_COUNT
} sg_node_type_t;

/* Stable lower-case names ("kernel", "event_record", ...) and back.
 * sg_node_type_from_name returns -1 for an unknown name. */
const char *sg_node_type_name(sg_node_type_t t);
int sg_node_type_from_name(const char *name);

/* ---- what a kernel touches, from its code (format version 6) ---------------- */

/* Where a kernel node's access facts come from (sgcap's access pass,
 * docs/ACCESS.md): not analysed, its PTX, its SASS (through nvdisasm), or
 * its code could not be analysed (no image, no disassembler, ...: reason). */
typedef enum {
    SG_FACTS_NONE = 0,
    SG_FACTS_PTX,
    SG_FACTS_SASS,
    SG_FACTS_UNKNOWN,
    SG_FACTS_SOURCE_COUNT
} sg_facts_source_t;

/* One global memory access site of the kernel's code, evaluated for this
 * launch. The values of kind are code/access.h's sg_access_kind_t. */
typedef enum {
    SG_SITE_LOAD = 1,
    SG_SITE_STORE = 2,
    SG_SITE_ATOMIC = 3, /* read-modify-write by an atomic instruction */
    SG_SITE_CALL = 4,   /* a pointer passed to a call: may read and write */
} sg_site_kind_t;

typedef enum {
    SG_SITE_KNOWN = 0, /* [offset, offset+size) of buffer holds every byte it can touch */
    SG_SITE_NEVER,     /* its conditions never hold for this launch */
    SG_SITE_UNKNOWN,   /* see reason; with a buffer: assumed to stay inside it */
    SG_SITE_STATUS_COUNT
} sg_site_status_t;

/* How much is known about a byte range. GUESS ranges come from the
 * capture's heuristic (a pointer argument, up to the next pointer into the
 * same buffer); the others from the code: BOUND holds every byte the code
 * can touch (perhaps none of them), EXACT also has its first and last byte
 * touched, DENSE has every byte touched. */
typedef enum {
    SG_RANGE_GUESS = 0,
    SG_RANGE_BOUND,
    SG_RANGE_EXACT,
    SG_RANGE_DENSE,
    SG_RANGE_KIND_COUNT
} sg_range_kind_t;

typedef struct {
    sg_site_kind_t kind;
    sg_site_status_t status;
    sg_range_kind_t range; /* of [offset, offset+size) */
    uint32_t line;    /* PTX line, or SASS byte offset of the instruction */
    int32_t param;    /* byte offset of the pointer word in the parameters, -1 when none */
    uint32_t buffer;  /* buffer index, SG_NONE when the range is in no buffer or unknown */
    uint64_t offset, size; /* bytes, from the buffer's start */
    char *reason;     /* UNKNOWN (and inexact KNOWN): why, or NULL */
} sg_site_t;

typedef struct {
    sg_facts_source_t source; /* NONE: no facts (the rest is empty) */
    bool all_known;       /* every site KNOWN or NEVER and the code fully analysed */
    /* Every memory access of the code starts from a pointer in `pointers`
     * (or a module variable) and nothing escapes the analysis: relocating
     * exactly those parameter words relocates everything the kernel uses. */
    bool complete;
    char *reason;         /* why not all known / not complete, NULL when both hold */
    uint32_t n_pointers;
    uint32_t *pointers;   /* byte offsets of the parameter words the code uses as
                             addresses (8-byte pointers; struct-embedded ones too), ascending */
    uint32_t n_sites;
    sg_site_t *sites;
} sg_facts_t;

typedef struct {
    char *name;         /* mangled name; never NULL once set */
    uint32_t image;     /* code image index or SG_NONE */
    uint32_t grid[3], block[3], cluster[3]; /* cluster {0,0,0} = none */
    uint32_t shared_bytes; /* dynamic shared memory */
    uint32_t n_params;
    uint32_t *param_offsets; /* n_params entries */
    uint32_t *param_sizes;   /* n_params entries */
    uint8_t *param_bytes;    /* params_size bytes: the argument buffer */
    uint32_t params_size;
    int32_t priority;
    bool cooperative;
    bool has_extra;          /* launched with `extra` instead of kernelParams */
    uint64_t func_handle;    /* CUfunction/CUkernel in the captured process */
    sg_facts_t facts;        /* what the code touches (source NONE until analysed) */
} sg_kernel_t;

typedef enum {
    SG_COPY_DEFAULT = 0, SG_COPY_H2D, SG_COPY_D2H, SG_COPY_D2D, SG_COPY_H2H, SG_COPY_KIND_COUNT
} sg_copy_kind_t;

typedef struct {
    uint64_t dst, src;            /* addresses */
    uint64_t dst_pitch, src_pitch;/* 0 for 1-D copies */
    uint64_t width;               /* bytes per row */
    uint64_t height, depth;       /* 1 for 1-D copies */
    sg_copy_kind_t kind;
} sg_memcpy_t;

typedef struct {
    uint64_t dst, pitch;
    uint32_t value;
    uint32_t element_size; /* 1, 2 or 4 */
    uint64_t width;        /* elements per row */
    uint64_t height;
} sg_memset_t;

typedef struct {
    uint64_t fn, user_data; /* process-local pointers: in-process replay only */
} sg_host_t;

typedef struct {
    uint32_t buffer;  /* buffer index */
    uint64_t address;
    uint64_t bytes;   /* mem_alloc only */
} sg_memnode_t;

typedef enum { SG_COND_IF = 0, SG_COND_WHILE, SG_COND_SWITCH, SG_COND_TYPE_COUNT } sg_cond_type_t;

struct sg_graph;

typedef struct {
    sg_cond_type_t type;
    uint64_t handle;
    uint32_t default_value;
    uint32_t n_bodies;
    struct sg_graph **bodies; /* owned */
} sg_conditional_t;

/* What a node reads and writes: the hazard check and the deallocation pass
 * work on these. UNKNOWN counts as writing. */
typedef enum {
    SG_ACCESS_READ = 1,
    SG_ACCESS_WRITE = 2,
    SG_ACCESS_READWRITE = 3,
    SG_ACCESS_UNKNOWN = 7,
    /* read-modify-write by atomic instructions (version 6): writes, but two
     * nodes' atomics on the same bytes do not race each other */
    SG_ACCESS_ATOMIC_RMW = 11,
} sg_access_mode_t;

typedef struct {
    uint32_t buffer; /* buffer index */
    uint64_t offset; /* from the buffer's start */
    uint64_t size;   /* bytes; the whole rest of the buffer when unknown */
    sg_access_mode_t mode;
    sg_range_kind_t range; /* version 6: GUESS unless the code was analysed */
} sg_access_t;

typedef struct sg_node {
    /* The fields every walk of the graph reads (type, stream, liveness,
     * adjacency, seq) come first, in 48 bytes: a pass that visits nodes out
     * of id order touches one cache line of the node (two when the array's
     * alignment splits the 48 bytes), where the payload union between
     * header and edge lists made it two always. */
    sg_node_id_t id;
    sg_node_type_t type;
    uint32_t stream;   /* stream index or SG_STREAM_EXPLICIT */
    bool synthesized;  /* created by a pass, not by the program */
    bool removed;      /* internal: a hole left by sg_graph_remove_node */
    /* adjacency: edge ids, unordered */
    uint32_t n_in, n_out;
    sg_edge_id_t *in, *out;
    uint64_t seq;      /* capture sequence number (global order of enqueue) */
    uint32_t cap_in, cap_out;
    uint32_t cuda_type;/* CUgraphNodeType as CUDA reported it */
    uint32_t n_accesses;
    sg_access_t *accesses;
    char *label;       /* optional free text (API that made it, pass note) */
    double duration_ns;/* measured on the GPU; < 0 when unknown */
    union {
        sg_kernel_t kernel;
        sg_memcpy_t memcpy;
        sg_memset_t memset;
        sg_host_t host;
        uint32_t event;          /* event_record / event_wait: event index */
        sg_memnode_t mem;        /* mem_alloc / mem_free */
        struct sg_graph *child;  /* child_graph body, owned */
        sg_conditional_t cond;
        char *opaque_note;       /* opaque: what it was */
    } u;
} sg_node_t;

/* ---- edges --------------------------------------------------------------- */

typedef enum {
    SG_EDGE_STREAM = 0, /* program order on one stream */
    SG_EDGE_EVENT,      /* record on one stream, wait on another: names the event */
    SG_EDGE_CONTROL,    /* ordering a pass made explicit */
    SG_EDGE_DEALLOC,    /* deferred deallocation */
    SG_EDGE_KIND_COUNT
} sg_edge_kind_t;

const char *sg_edge_kind_name(sg_edge_kind_t k);
int sg_edge_kind_from_name(const char *name); /* -1 when unknown */

typedef struct {
    sg_edge_id_t id;
    sg_node_id_t from, to;
    sg_edge_kind_t kind;
    uint32_t event;       /* SG_EDGE_EVENT: event index; else SG_NONE */
    uint8_t from_port, to_port, cuda_type; /* CUgraphEdgeData */
    bool removed;         /* internal */
} sg_edge_t;

/* ---- names of the enums --------------------------------------------------- */

/* Every enum of the model has one table of stable lower-case names, here and
 * nowhere else: graph.json, dumps, reports and messages all spell a value
 * the same way. `values` maps position -> value for enums that are not dense
 * (access modes); NULL means value == position. `since` is the bundle format
 * version that added each name (docs/FORMAT.md section 11); NULL: all 1. */
typedef struct {
    const char *what;          /* "buffer kind", for messages */
    uint32_t n;
    const char *const *names;
    const int *values;
    const uint8_t *since;
} sg_enum_names_t;

/* The format version that added the name of value v (1 when unknown). */
uint32_t sg_enum_since(const sg_enum_names_t *e, int v);

extern const sg_enum_names_t sg_node_types, sg_edge_kinds, sg_buffer_kinds, sg_image_kinds,
    sg_copy_kinds, sg_cond_types, sg_access_modes, sg_facts_sources, sg_site_kinds,
    sg_site_statuses, sg_range_kinds;

/* The name of value v, or "invalid" when v is not one of e's values. */
const char *sg_enum_name(const sg_enum_names_t *e, int v);
/* The value named name, or -1 for an unknown name. */
int sg_enum_value(const sg_enum_names_t *e, const char *name);

const char *sg_buffer_kind_name(sg_buffer_kind_t k);
const char *sg_image_kind_name(sg_image_kind_t k);
const char *sg_copy_kind_name(sg_copy_kind_t k);
const char *sg_cond_type_name(sg_cond_type_t t);
const char *sg_access_mode_name(sg_access_mode_t m);
const char *sg_facts_source_name(sg_facts_source_t s);
const char *sg_site_kind_name(sg_site_kind_t k);
const char *sg_site_status_name(sg_site_status_t s);
const char *sg_range_kind_name(sg_range_kind_t r);

/* ---- the graph ------------------------------------------------------------ */

typedef struct {
    char *name;            /* "NVIDIA H200" */
    int cc_major, cc_minor;
    int driver_version;    /* cuDriverGetVersion */
    uint64_t total_memory;
    char uuid[40];         /* "GPU-xxxxxxxx-..." or "" */
    uint32_t sm_count;
    int32_t ordinal;          /* the device's ordinal in the capturing process, -1 unknown */
    double mem_bandwidth_gbs; /* for roofline estimates; 0 when unknown */
} sg_device_t;

typedef struct {
    char *pass;    /* pass name */
    char *summary; /* one line */
} sg_pass_log_t;

/* ---- fused kernels ----------------------------------------------------------- */

/* A kernel node the fuse pass made out of a chain of kernel nodes keeps an
 * ordinary kernel payload (its own name, code image, geometry and
 * parameters) and, in the root's fusions table, what it replaced: enough to
 * show it (inspect, dot), to translate a later parameter update of one of
 * the original nodes into the fused node's parameters (its stage's bytes
 * start at param_base there), and to say which writes it dropped and why. */
typedef struct {
    sg_node_id_t node;  /* the original node's id (no longer in the graph) */
    uint64_t seq;       /* its capture sequence number */
    sg_kernel_t kernel; /* its payload as captured: name, image, geometry, parameters */
    uint32_t param_base; /* offset of its parameter bytes in the fused node's */
} sg_fused_stage_t;

typedef struct {
    uint32_t stage;    /* index in stages of the stage whose store was dropped */
    uint32_t buffer;   /* buffer index */
    uint64_t offset, size; /* bytes, from the buffer's start */
    char *reason;      /* why no one can read it ("graph allocation freed in the graph ...") */
} sg_dropped_write_t;

typedef struct {
    sg_node_id_t node;     /* the fused kernel node */
    char hash[17];         /* cache key: xxh64 of the stages' code, geometry and codegen */
    uint32_t tier;         /* 1: pointwise, stages lifted; 2: CTA-local, stages called with barriers */
    char *codegen;         /* how it was generated ("inline", "funcs") */
    uint32_t ptx_image;    /* image of its PTX, SG_NONE if not kept */
    uint32_t cubin_image;  /* image of its cubin (the node's own image), SG_NONE if none */
    int32_t registers;     /* per thread, as ptxas reported; -1 unknown */
    int32_t spill_bytes;   /* spill stores + loads ptxas reported; -1 unknown */
    uint32_t n_stages;
    sg_fused_stage_t *stages;
    uint32_t n_dropped;
    sg_dropped_write_t *dropped;
    char *note;            /* free text or NULL */
} sg_fusion_t;

typedef struct sg_graph {
    struct sg_graph *root; /* self for a root graph */
    /* nodes and edges: dense by id, holes where removed */
    sg_node_t *nodes;
    uint32_t n_nodes, cap_nodes, live_nodes;
    sg_edge_t *edges;
    uint32_t n_edges, cap_edges, live_edges;
    /* internal: false while every node's in and out lists hold its live
     * edges in id order (edges are appended; a removal moves the list's
     * last entry into the hole, and sets it when that entry was not the
     * one removed). Readers that need the lists' order can then take it
     * from the edge array, read in one pass, instead of each node's lists. */
    bool lists_unordered;
    /* internal (graph.c): blocks holding the edge lists and the access
     * lists of the nodes that sg_graph_clone or the bundle reader made, in
     * node order (a walk of the nodes in id order reads their lists in
     * address order, however fragmented the heap was when the graph was
     * made); a list that outgrows its place moves to an allocation of its
     * own. NULL when there are none. */
    struct sg_graph_blocks *blocks;
    /* tables: meaningful on the root only */
    sg_stream_t *streams;
    uint32_t n_streams, cap_streams;
    sg_event_t *events;
    uint32_t n_events, cap_events;
    sg_buffer_t *buffers;
    uint32_t n_buffers, cap_buffers;
    sg_image_t *images;
    uint32_t n_images, cap_images;
    /* provenance: meaningful on the root only */
    char *program;        /* program name (argv[0] basename) */
    int64_t pid;
    uint64_t capture_id;  /* CUDA capture id, 0 if built explicitly */
    uint32_t sequence;    /* per-process graph sequence number */
    int32_t rank;         /* the process's rank under a launcher (RANK, ...), -1 none */
    char *capture_mode;   /* "global", "thread_local", "relaxed", "explicit" */
    sg_device_t device;
    /* cross-check against cuGraphGetNodes/Edges (capture sets it) */
    bool crosscheck_done, crosscheck_ok;
    uint32_t cuda_node_count, cuda_edge_count;
    char *crosscheck_note;
    sg_pass_log_t *pass_log;
    uint32_t n_pass_log, cap_pass_log;
    /* fused kernels: meaningful on the root only (graph/fusion.c) */
    sg_fusion_t *fusions;
    uint32_t n_fusions, cap_fusions;
} sg_graph_t;

/* Create an empty root graph / a body graph sharing `parent`'s root tables.
 * Both return NULL when out of memory. A body graph is owned by the node it
 * is attached to and freed with it. */
sg_graph_t *sg_graph_create(void);
sg_graph_t *sg_graph_create_body(sg_graph_t *parent);
void sg_graph_destroy(sg_graph_t *g);
/* Free what node n owns (label, accesses, payload, bodies) and zero its
 * payload; for code that builds a node before it is in a graph (the bundle
 * reader). */
void sg_node_release(sg_node_t *n);

/* Tables (call on any graph; they act on the root). Labels are copied; a
 * NULL label gets the default ("s3", "e1", "b7", ...). out_id may be NULL. */
int sg_graph_add_stream(sg_graph_t *g, const char *label, uint64_t handle, uint32_t *out_id);
int sg_graph_add_event(sg_graph_t *g, const char *label, uint64_t handle, uint32_t *out_id);
int sg_graph_add_buffer(sg_graph_t *g, sg_buffer_kind_t kind, uint64_t address, uint64_t size,
                        uint32_t *out_id);
int sg_graph_add_image(sg_graph_t *g, sg_image_kind_t kind, const char *hash, uint64_t size,
                       uint32_t *out_id);
sg_stream_t *sg_graph_stream(const sg_graph_t *g, uint32_t id); /* NULL if out of range */
sg_event_t *sg_graph_event(const sg_graph_t *g, uint32_t id);
sg_buffer_t *sg_graph_buffer(const sg_graph_t *g, uint32_t id);
sg_image_t *sg_graph_image(const sg_graph_t *g, uint32_t id);
/* Buffer whose [address, address+size) holds addr, or SG_NONE. O(buffers). */
uint32_t sg_graph_find_buffer(const sg_graph_t *g, uint64_t addr);

/* Nodes. A new node has no payload beyond zeroes; set it with the setters
 * below or by writing the union for plain-value fields. */
int sg_graph_add_node(sg_graph_t *g, sg_node_type_t type, uint32_t stream, uint64_t seq,
                      sg_node_id_t *out_id);
/* NULL if none/removed. The pointer is valid until the next node is added
 * to this graph (the node array may move); ids stay valid forever. */
sg_node_t *sg_graph_node(const sg_graph_t *g, sg_node_id_t id);
/* Removes the node and every edge touching it. */
int sg_graph_remove_node(sg_graph_t *g, sg_node_id_t id);
uint32_t sg_graph_node_count(const sg_graph_t *g); /* live nodes */
uint32_t sg_graph_edge_count(const sg_graph_t *g); /* live edges */

/* Node payload setters: copy their inputs, replace what was there. */
int sg_node_set_label(sg_graph_t *g, sg_node_id_t id, const char *label);
int sg_node_set_kernel_name(sg_graph_t *g, sg_node_id_t id, const char *name);
int sg_node_set_kernel_params(sg_graph_t *g, sg_node_id_t id, uint32_t n_params,
                              const uint32_t *offsets, const uint32_t *sizes,
                              const uint8_t *bytes, uint32_t params_size);
/* Append an access (range GUESS: what capture knows from a pointer). */
int sg_node_add_access(sg_graph_t *g, sg_node_id_t id, uint32_t buffer, uint64_t offset,
                       uint64_t size, sg_access_mode_t mode);
/* Replace the node's accesses with acc[0..n) (copied; buffers and modes checked). */
int sg_node_set_accesses(sg_graph_t *g, sg_node_id_t id, const sg_access_t *acc, uint32_t n);
int sg_node_set_opaque_note(sg_graph_t *g, sg_node_id_t id, const char *note);
/* Attach a new empty body graph to a child_graph node (replacing any) /
 * append a body to a conditional node; the body is returned in *out. */
int sg_node_make_child_body(sg_graph_t *g, sg_node_id_t id, sg_graph_t **out);
int sg_node_add_cond_body(sg_graph_t *g, sg_node_id_t id, sg_graph_t **out);

/* Edges. Adding an edge that would close a cycle is allowed (the model does
 * not check on every add; use sg_graph_topo_order); a self-loop is SG_EINVAL.
 * event must be a valid event index for SG_EDGE_EVENT and SG_NONE otherwise. */
int sg_graph_add_edge(sg_graph_t *g, sg_node_id_t from, sg_node_id_t to, sg_edge_kind_t kind,
                      uint32_t event, sg_edge_id_t *out_id);
sg_edge_t *sg_graph_edge(const sg_graph_t *g, sg_edge_id_t id); /* NULL if none/removed */
int sg_graph_remove_edge(sg_graph_t *g, sg_edge_id_t id);
/* First live edge from -> to (any kind), or SG_NONE. O(out-degree of from). */
sg_edge_id_t sg_graph_find_edge(const sg_graph_t *g, sg_node_id_t from, sg_node_id_t to);

/* Adjacency: edge ids, valid until the next mutation of that node. */
const sg_edge_id_t *sg_graph_in_edges(const sg_graph_t *g, sg_node_id_t id, uint32_t *n);
const sg_edge_id_t *sg_graph_out_edges(const sg_graph_t *g, sg_node_id_t id, uint32_t *n);

/* Queries. Arrays returned through out-pointers are malloc'd; caller frees. */
/* Nodes of `stream` in capture order (by seq, ties by id). */
int sg_graph_stream_order(const sg_graph_t *g, uint32_t stream, sg_node_id_t **out, uint32_t *n);
/* All live nodes in a topological order (Kahn; ties by seq then id, so the
 * order is deterministic). SG_ECYCLE when the graph has a cycle. */
int sg_graph_topo_order(const sg_graph_t *g, sg_node_id_t **out, uint32_t *n);
/* Is there a path from -> to (from == to counts as reachable)? O(V+E). */
bool sg_graph_reaches(const sg_graph_t *g, sg_node_id_t from, sg_node_id_t to);

/* Merge a chain of nodes into chain[0], which stays and keeps its id and
 * payload. Every edge between a chain node and a node outside the chain is
 * re-attached to chain[0] (an edge that would duplicate an existing one of
 * the same kind, endpoints and event is dropped); edges inside the chain and
 * the other chain nodes are removed. The chain must be given in order and
 * each consecutive pair must be connected by an edge (SG_EINVAL otherwise).
 * The caller guarantees that no path leaves the chain and re-enters it
 * (fusion legality does: interior nodes have one predecessor and one
 * successor); otherwise the merged graph has a cycle. */
int sg_graph_merge_chain(sg_graph_t *g, const sg_node_id_t *chain, uint32_t n);

/* Fused kernels (graph/fusion.c). sg_graph_add_fusion appends a record
 * for the fused node `node` with no stages; the pointer is valid until the
 * next record is added. Stages copy the kernel payload they are given. */
int sg_graph_add_fusion(sg_graph_t *g, sg_node_id_t node, sg_fusion_t **out);
int sg_fusion_add_stage(sg_fusion_t *f, sg_node_id_t node, uint64_t seq, const sg_kernel_t *k,
                        uint32_t param_base);
int sg_fusion_add_dropped(sg_fusion_t *f, uint32_t stage, uint32_t buffer, uint64_t offset,
                          uint64_t size, const char *reason);
/* The record of fused node `node`, NULL when it is not one. O(fusions). */
const sg_fusion_t *sg_graph_fusion(const sg_graph_t *g, sg_node_id_t node);
/* Deep copy / release of a kernel payload (parameters, name, facts). */
int sg_kernel_copy(sg_kernel_t *dst, const sg_kernel_t *src);
void sg_kernel_release(sg_kernel_t *k);
/* Deep copy / release of access facts (release leaves them empty, source NONE). */
int sg_facts_copy(sg_facts_t *dst, const sg_facts_t *src);
void sg_facts_release(sg_facts_t *f);

/* Append a line to the pass log. */
int sg_graph_log_pass(sg_graph_t *g, const char *pass, const char *summary);

/* Deep copy (tables, nodes, edges, bodies, ids preserved). NULL on OOM. */
sg_graph_t *sg_graph_clone(const sg_graph_t *g);

/* Grow *arr (entries of `elem` bytes, *cap of them) so that it holds at
 * least `need`, doubling; new entries are zeroed. SG_ENOMEM or SG_ELIMIT
 * (past UINT32_MAX - 1 entries) leave *arr and *cap as they were. Shared by
 * every growable table of sgcap. */
int sg_array_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem);
/* The same without zeroing the new entries, for arrays whose every entry is
 * written before it is read: a doubled large array (a 100k-node graph's
 * edges) is not written twice, half of it for nothing. */
int sg_array_reserve(void **arr, uint32_t *cap, uint32_t need, size_t elem);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_GRAPH_H */
