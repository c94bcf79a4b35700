/* rewrite_internal.h: what the passes share inside rewrite/: the pass
 * context (report text, JSON, declarations for the verifier), per-stream
 * program order, per-buffer users, node names for reports, and the cost
 * model with its ASAP timeline. Not installed; tests may include it. */
#ifndef SGCAP_REWRITE_INTERNAL_H
#define SGCAP_REWRITE_INTERNAL_H

#include <jansson.h>
#include <stdarg.h>

#include "json_writer.h"
#include "pass.h"
#include "prefetch.h"
#include "reach.h"

/* ---- pass context ---------------------------------------------------------- */

/* A node whose own orderings a pass changed on purpose; it must keep an
 * ordering from every keep_pred and to every keep_succ (the verifier also
 * checks that every path through it was bridged). */
typedef struct {
    sg_node_id_t node;
    sg_node_id_t *keep_pred, *keep_succ;
    uint32_t n_keep_pred, n_keep_succ;
} sg_rw_moved_t;

typedef struct sg_pass_ctx {
    sg_graph_t *g;
    const char *name;
    char **text; /* report text: the report's own buffer, or own_text */
    size_t *len, *cap;
    char *own_text;
    size_t own_len, own_cap;
    sg_jw_t json; /* this pass's JSON object, open (written as text) */
    char summary[512];
    sg_rw_moved_t *moved;
    uint32_t n_moved, cap_moved;
    int err; /* first out-of-memory while reporting */
    sg_reach_t *reach; /* snapshot of the pass's input, or NULL */
    const sg_rewrite_options_t *opt; /* the run's options (never NULL inside a pass) */
    struct sg_rw_streams *in_streams; /* the program order of the pass's input, or NULL:
                                         built once from reach and shared
                                         (sg_rw_input_streams) */
    sg_reach_t *out_reach; /* optional: a pass that built a snapshot of the graph
                              exactly as it returns it, the one sg_reach_build would give
                              (sg_reach_build_edited from its input's: it knows what it
                              changed), leaves it here for the verifier, which then builds
                              none; it may become the next pass's input */
} sg_pass_ctx_t;

void sg_rw_printf(sg_pass_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sg_rw_summary(sg_pass_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Room for n more bytes of report text, made now (see sg_jw_reserve). */
void sg_rw_reserve(sg_pass_ctx_t *ctx, size_t n);
/* A report of `total` like entries, `done` of them written since the text
 * was *text0 bytes long and the pass's JSON ctx->json.len was *json0 (both
 * taken at done == 0): once SG_RW_SAMPLE entries are written, room for the
 * rest at their mean size and a quarter more, so that a large report's
 * buffers grow once by a copy of what the sample wrote, not by doubling
 * copies of all of it (a size guessed per entry up front is wrong on
 * graphs with longer names or lists). Call before each entry. */
enum { SG_RW_SAMPLE = 64 };
void sg_rw_reserve_rest(sg_pass_ctx_t *ctx, uint32_t done, uint32_t total, size_t *text0,
                        size_t *json0);
/* Add key to the pass's JSON object (takes the reference to v; keys are
 * written in the order they are added, each once). */
void sg_rw_json_set(sg_pass_ctx_t *ctx, const char *key, json_t *v);
/* Write key, and return the writer for its value: a large member (an
 * array of records) is written straight into the pass's object. No other
 * member may be added until the value is complete. */
sg_jw_t *sg_rw_json_member(sg_pass_ctx_t *ctx, const char *key);
int sg_rw_note_moved(sg_pass_ctx_t *ctx, sg_node_id_t node, const sg_node_id_t *keep_pred,
                     uint32_t n_keep_pred, const sg_node_id_t *keep_succ, uint32_t n_keep_succ);
/* The reachability snapshot of the pass's input, without forward clocks
 * until a pass asks for them (sg_reach_forward; the reuse rules do): built
 * once and shared (the verifier's snapshot of one pass's output is
 * the next pass's input). Owned by the manager: do not destroy; it does not
 * follow the pass's own changes. NULL with *rc set on failure. */
sg_reach_t *sg_rw_input_reach(sg_pass_ctx_t *ctx, int *rc);
/* The program order of the pass's input (sg_rw_streams_build of the input
 * snapshot), built once and shared the same way: a pass that changes
 * nothing hands it to the next with the snapshot (fusion-legality's is
 * defer-dealloc's). Owned by the manager, read-only, valid while the pass
 * runs (it does not follow the pass's own changes). NULL with *rc set on
 * failure. */
const struct sg_rw_streams *sg_rw_input_streams(sg_pass_ctx_t *ctx, int *rc);

/* Run one pass function through the manager (report, pass log, verifier):
 * how tests exercise the verifier, and how a pass not in the registry yet
 * can be run. */
int sg_rw_run_custom(sg_graph_t *g, const char *name, int (*run)(sg_pass_ctx_t *ctx),
                     const sg_rewrite_options_t *opt, sg_report_t *report);

/* The passes. */
int sg_pass_access(sg_pass_ctx_t *ctx);
int sg_pass_control_deps(sg_pass_ctx_t *ctx);
int sg_pass_fusion_legality(sg_pass_ctx_t *ctx);
int sg_pass_defer_dealloc(sg_pass_ctx_t *ctx);
int sg_pass_reduce(sg_pass_ctx_t *ctx);
int sg_pass_fuse(sg_pass_ctx_t *ctx);

/* ---- names for reports --------------------------------------------------------- */

/* Report text is for people, and labels come from untrusted bundles: every
 * label, name or note that goes into report text (not JSON fields, which
 * jansson escapes) goes through SG_RW_LABEL: escaped as graph/text.h says
 * and cut to fit. The buffer is a compound literal of the enclosing block,
 * so the result is valid for the whole statement that uses it and the
 * library keeps no static state (it also runs inside the app). */
typedef struct {
    char s[128];
} sg_rw_label_t;
const char *sg_rw_label(const char *s, sg_rw_label_t *buf);
#define SG_RW_LABEL(s) sg_rw_label((s), &(sg_rw_label_t){{0}})
/* The same for a longer message that quotes the bundle (a compiler's or
 * parser's words about its code), cut at 1 KiB. */
typedef struct {
    char s[1024];
} sg_rw_note_t;
const char *sg_rw_note(const char *s, sg_rw_note_t *buf);
#define SG_RW_NOTE(s) sg_rw_note((s), &(sg_rw_note_t){{0}})

/* "n12 (kernel k_fill, s0)": id, type, what it is, stream, escaped for a
 * report. Returns buf. */
const char *sg_rw_node_name(const sg_graph_t *g, sg_node_id_t id, char *buf, size_t n);
/* The names of the nodes a report is going to print, gathered beforehand in
 * id order, the order the node array is laid out in: a report prints them
 * in stream order, and on a 100k-node graph reading each node and its
 * kernel name there costs a cache miss or two per name. The table keeps
 * which name each node has, not its text: the nodes of one type and stream
 * that are the same "what" (node_what: a kernel's short name, an event's or
 * buffer's label) share one interned entry, made and escaped once (a graph
 * has few distinct kernels), so the table is 4 bytes a node, and the name
 * is made where it is printed from data that stays in cache. */
typedef struct {
    uint32_t off;    /* in text: the key, the raw what and the name after "nID (", NUL-ended */
    uint32_t stream;
    uint8_t type;
} sg_rw_name_t;
typedef struct {
    uint32_t n_ids;
    uint32_t *at; /* by id: index in name, SG_RW_NAME_NONE when not made, _GONE removed */
    sg_rw_name_t *name;
    uint32_t n_name, cap_name;
    char *text;
    uint32_t len, cap;
    uint32_t *slot, n_slot; /* open addressing: index + 1 into name, 0 = empty */
} sg_rw_names_t;
#define SG_RW_NAME_NONE UINT32_MAX
#define SG_RW_NAME_GONE (UINT32_MAX - 1)
#define SG_RW_REMOVED SG_REACH_REMOVED

/* Make the names of the nodes with want[id] != 0 (want has g->n_nodes
 * entries), and call visit (may be NULL) with each of those nodes, in id
 * order: what else a report reads of them is read in the same pass.
 * SG_ENOMEM leaves t empty: every lookup then makes its name (the visits
 * are made either way). */
int sg_rw_names_make(const sg_graph_t *g, const uint8_t *want, sg_rw_names_t *t,
                     void (*visit)(void *user, sg_node_id_t id, const sg_node_t *x), void *user);
/* The name of id as sg_rw_node_name gives it, made into buf (from the
 * table when it has id). */
const char *sg_rw_names_get(const sg_rw_names_t *t, const sg_graph_t *g, sg_node_id_t id,
                            char *buf, size_t n);
/* sg_rw_node_jw of id, from the table when it has id. */
void sg_rw_names_jw(sg_jw_t *w, const sg_rw_names_t *t, const sg_graph_t *g, sg_node_id_t id);
void sg_rw_names_free(sg_rw_names_t *t);

/* Stream label or "explicit", raw (for JSON); SG_RW_STREAM escaped for text. */
const char *sg_rw_stream_label(const sg_graph_t *g, uint32_t stream);
#define SG_RW_STREAM(g, s) SG_RW_LABEL(sg_rw_stream_label((g), (s)))
/* {"id": 12, "type": "kernel", "stream": "s0", "name": "k_fill"} */
json_t *sg_rw_node_json(const sg_graph_t *g, sg_node_id_t id);
void sg_rw_node_jw(sg_jw_t *w, const sg_graph_t *g, sg_node_id_t id);

/* ---- program order per stream ----------------------------------------------------- */

/* Nodes of each stream in program order: by capture sequence number, ties
 * by topological rank (a pass that moves a node gives it the sequence
 * number of the node it now follows). Explicit nodes are in no stream. */
typedef struct sg_rw_streams {
    uint32_t n_streams;
    uint32_t *start;     /* n_streams + 1 offsets into nodes */
    sg_node_id_t *nodes;
    uint32_t n_ids;      /* g->n_nodes when built */
    uint32_t *index;     /* by node id: position in its stream, UINT32_MAX if none */
    /* By node id, as the one pass over the node array read them: a pass
     * that looks up nodes in stream order or across edges reads these
     * compact arrays instead of the nodes (on a large graph a cache miss
     * per node). */
    const uint8_t *type;    /* the node's sg_node_type_t, SG_RW_REMOVED for a removed id */
    const uint32_t *stream; /* the node's stream (SG_STREAM_EXPLICIT for none) */
    /* type and stream are the snapshot's node facts (sg_reach_node_facts:
     * not copied, valid while the snapshot lives), or these, read from the
     * nodes when the snapshot has none */
    uint8_t *own_type;
    uint32_t *own_stream;
    uint32_t origin;  /* sg_rw_origin_stream's answer */
} sg_rw_streams_t;

/* r is a snapshot of g as it is (its ranks break ties; what it read of the
 * nodes, sg_reach_node_facts, is taken instead of reading them again, and
 * lent: s must be freed before r is destroyed). */
int sg_rw_streams_build(const sg_graph_t *g, const sg_reach_t *r, sg_rw_streams_t *s);
void sg_rw_streams_free(sg_rw_streams_t *s);
/* Neighbour of v in its stream's program order, or SG_NONE. */
sg_node_id_t sg_rw_stream_prev(const sg_rw_streams_t *s, sg_node_id_t v);
sg_node_id_t sg_rw_stream_next(const sg_rw_streams_t *s, sg_node_id_t v);
/* v's type as built (SG_RW_REMOVED for a removed or unknown id). */
static inline uint8_t sg_rw_type(const sg_rw_streams_t *s, sg_node_id_t v)
{
    return v < s->n_ids ? s->type[v] : SG_RW_REMOVED;
}
/* The capture's origin stream: the stream of the first enqueued node
 * (lowest seq) that has one; SG_NONE when no node has a stream. */
uint32_t sg_rw_origin_stream(const sg_graph_t *g);

/* ---- memory -------------------------------------------------------------------------- */

static inline bool sg_rw_writes(sg_access_mode_t m)
{
    return (m & SG_ACCESS_WRITE) != 0; /* UNKNOWN (7) counts as writing */
}

/* start + size, saturating at the top of the address space: a range that
 * would wrap past 2^64 ends there, never before its start. Every range end
 * in rewrite/ is computed with it. */
static inline uint64_t sg_rw_end(uint64_t start, uint64_t size)
{
    return start + size < start ? UINT64_MAX : start + size;
}

/* Absolute [lo, hi) of an access; false when it is empty or its buffer
 * unknown. Accesses are taken by address: one that runs past its buffer's
 * end meets the buffers after it. One whose offset runs past the top of the
 * address space cannot be placed: it covers everything from its buffer's
 * start up (too much keeps a hazard in sight, skipping it hid one). */
bool sg_rw_access_range(const sg_graph_t *g, const sg_access_t *a, uint64_t *lo, uint64_t *hi);

/* Lifetimes are per allocation, not per address: CUDA may give two
 * successive graph allocations (mem_alloc nodes) the same virtual address,
 * and a node's pointer into it means the allocation that was live when the
 * node was enqueued. sg_rw_buffer_at: for an address in graph allocation b,
 * the graph allocation holding addr whose mem_alloc was enqueued last
 * before seq (b itself when there is none, and for any other buffer). */
uint32_t sg_rw_buffer_at(const sg_graph_t *g, uint32_t b, uint64_t addr, uint64_t seq);

/* The same answer from an index of the root's graph allocations (sorted by
 * address, then by their mem_alloc's seq), in O(log n) where allocations
 * share an address (a pool reusing one) instead of a scan of every buffer
 * per access: sg_rw_buffer_at is the reference, and is quadratic when
 * called for every access of a big graph. */
typedef struct {
    uint64_t address, size, seq;
    uint32_t id;
} sg_rw_alloc_ent_t;
typedef struct {
    sg_rw_alloc_ent_t *e;
    uint32_t n;
    uint64_t max_size;
} sg_rw_alloc_index_t;
int sg_rw_alloc_index_build(const sg_graph_t *g, sg_rw_alloc_index_t *ix);
uint32_t sg_rw_alloc_index_at(const sg_rw_alloc_index_t *ix, const sg_graph_t *g, uint32_t b,
                              uint64_t addr, uint64_t seq);
void sg_rw_alloc_index_free(sg_rw_alloc_index_t *ix);

/* For every buffer: the nodes that access it (each once, in id order, not
 * counting mem_alloc/mem_free nodes, whose role is given by alloc/free), its
 * mem_alloc node and its mem_free nodes (SG_NONE / empty when outside the
 * graph). Accesses and frees of graph allocations that share addresses are
 * counted for the allocation they mean (sg_rw_buffer_at). */
typedef struct {
    uint32_t n_buffers;
    uint32_t *user_start; /* n_buffers + 1 offsets into users */
    sg_node_id_t *users;
    sg_node_id_t *alloc;  /* by buffer */
    uint32_t *free_start; /* n_buffers + 1 offsets into frees */
    sg_node_id_t *frees;
    uint32_t *acc_start;  /* by node id, n_nodes + 1 offsets into acc_buffer */
    uint32_t *acc_buffer; /* the buffer each access of each node means */
    uint8_t *acc_guess;   /* beside it: 1 when the access's range is the capture's guess
                             (SG_RANGE_GUESS), so a pass need not read the node again */
    sg_rw_alloc_index_t aix;
} sg_rw_buffers_t;

int sg_rw_buffers_build(const sg_graph_t *g, sg_rw_buffers_t *b);
/* The same, and cost[v] = sg_rw_node_cost_ns of each live node v from the
 * same pass over the nodes (cost has g->n_nodes entries, zeroed; removed
 * ids are left alone): what sg_rw_timeline_from takes. */
int sg_rw_buffers_build_costs(const sg_graph_t *g, sg_rw_buffers_t *b, double *cost);
/* What the reuse rules ask of it (sg_rw_reuse_build, sg_rw_reuse_after):
 * allocations and frees read from the memory nodes alone (their types from
 * st, a program order of g as it is), no per-access table (acc_start is
 * NULL), and the users of a buffer only where the reuse index can ask for
 * them: when a buffer with no mem_alloc shares a cluster of overlapping
 * addresses with another that is freed in the graph, this is
 * sg_rw_buffers_build (every node's accesses are read). */
int sg_rw_buffers_build_memory(const sg_graph_t *g, const sg_rw_streams_t *st, sg_rw_buffers_t *b);
void sg_rw_buffers_free(sg_rw_buffers_t *b);
/* The buffer access a of node x means; the buffer mem_free node f frees. */
uint32_t sg_rw_access_buffer(const sg_rw_buffers_t *b, sg_node_id_t x, uint32_t a);
uint32_t sg_rw_free_buffer(const sg_rw_buffers_t *b, const sg_graph_t *g, sg_node_id_t f);

/* Do buffers a and b cover overlapping addresses? */
bool sg_rw_buffers_overlap(const sg_graph_t *g, uint32_t a, uint32_t b);

/* What must follow a free of buffer b because it reuses b's memory: the
 * allocations of overlapping buffers, and the accesses to overlapping
 * buffers that are not allocated in the graph, that the free reaches; only
 * the minimal ones (later reuses follow through them). Built once per
 * snapshot without enumerating overlapping pairs (a pool address reused m
 * times has m^2 of them): buffers are grouped into clusters of transitively
 * overlapping address ranges, and each cluster keeps its allocations sorted
 * by (chain, position), so a query takes, per chain, the first allocation
 * the free reaches (from the forward clock, which sg_rw_reuse_build adds
 * to reach when it has none) that overlaps b. O(B log B) to build, about
 * O(k log m + k^2) per free (k chains, m allocations in the cluster). */
typedef struct {
    uint32_t chain;      /* the chain of allocs[first .. end) */
    uint32_t first, end; /* into allocs */
} sg_rw_reuse_run_t;

typedef struct {
    uint32_t n_buffers;
    uint32_t *cluster;    /* by buffer */
    uint32_t *start;      /* n_clusters + 1 offsets into allocs */
    sg_node_id_t *allocs; /* per cluster, by (chain, position) */
    uint32_t *alloc_buf;  /* beside allocs: the buffer each allocates (its u.mem.buffer) */
    uint32_t *alloc_pos;  /* and its position on its chain: a query reads neither node
                             nor snapshot for them */
    uint32_t *rstart;     /* n_clusters + 1 offsets into runs */
    sg_rw_reuse_run_t *runs; /* per cluster, its allocations on each chain: a query
                                walks these, not every allocation of the cluster */
    uint32_t *pstart;     /* n_clusters + 1 offsets into plain */
    uint32_t *plain;      /* per cluster, buffers not allocated in the graph */
    uint32_t n_clusters;
} sg_rw_reuse_t;

int sg_rw_reuse_build(const sg_graph_t *g, sg_reach_t *r, const sg_rw_buffers_t *bufs,
                      sg_rw_reuse_t *ru);
void sg_rw_reuse_free(sg_rw_reuse_t *ru);
/* *out (malloc'd, may be NULL when *n == 0) gets the minimal reuses after
 * free f of buffer b; r is the snapshot ru was built from. */
int sg_rw_reuse_after(const sg_rw_reuse_t *ru, sg_reach_t *r, const sg_graph_t *g,
                      const sg_rw_buffers_t *bufs, sg_node_id_t f, uint32_t b, sg_node_id_t **out,
                      uint32_t *n);
/* Does node y touch memory of buffer b as a reuse (allocates, or accesses
 * through another buffer, addresses overlapping b)? */
bool sg_rw_reuses(const sg_graph_t *g, sg_node_id_t y, uint32_t b);

/* The minimal elements of ids[0..n) under reachability (none reaches
 * another), appended to out (capacity n) in topological order; returns how
 * many. O(n log n + n * minima) queries. */
uint32_t sg_rw_minimal(sg_reach_t *r, const sg_node_id_t *ids, uint32_t n, sg_node_id_t *out);

/* ---- cost model and timeline ------------------------------------------------------------- */

/* Fixed costs of the roofline estimate, from the H200 measurements in
 * reference/anchors.md section 3: a graph node costs about 0.93 us to
 * launch, an event record/wait pair 0.6 us, allocation nodes nothing
 * measurable at replay. */
#define SG_COST_LAUNCH_NS 1000.0
#define SG_COST_EVENT_NS 300.0
#define SG_COST_HOST_NS 5000.0
#define SG_COST_DEFAULT_BANDWIDTH_GBS 4000.0 /* H200 HBM3e, effective */

/* Bytes a node touches (reads plus writes; unknown and read-write count
 * twice). */
uint64_t sg_rw_node_bytes(const sg_graph_t *g, const sg_node_t *n);
/* Expected duration: the measured one when the node has it, else launch
 * cost + bytes / bandwidth (the device's, or the H200 default). */
double sg_rw_node_cost_ns(const sg_graph_t *g, const sg_node_t *n);
/* ASAP schedule over the DAG: start = latest finish of the predecessors,
 * finish = start + cost. r is a snapshot of g as it is (its adjacency is
 * used). Arrays by node id, malloc'd. */
int sg_rw_timeline(const sg_graph_t *g, const sg_reach_t *r, double **start, double **finish);
/* The same from each node's cost by id (n_nodes entries, zero for removed
 * ids; malloc'd): it becomes *finish (freed on failure). */
int sg_rw_timeline_from(const sg_graph_t *g, const sg_reach_t *r, double *cost, double **start,
                        double **finish);


/* A growable array of node pairs (free p when done). */
typedef struct {
    sg_node_id_t (*p)[2];
    size_t n, cap;
} sg_rw_pairs_t;
int sg_rw_pairs_push(sg_rw_pairs_t *ps, sg_node_id_t a, sg_node_id_t b);

/* An address range [lo, hi) of buffer `id`; qsort comparator by (lo, id). */
typedef struct {
    uint64_t lo, hi;
    uint32_t id;
} sg_rw_span_t;
int sg_rw_cmp_span(const void *pa, const void *pb);

#endif /* SGCAP_REWRITE_INTERNAL_H */
