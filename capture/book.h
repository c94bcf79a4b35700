/* book.h: capture bookkeeping: which stream and which event every captured
 * node came from, kept without CUDA so it can be tested with synthetic calls.
 *
 * The shim feeds it what the driver says after each call on a capturing
 * stream: the stream's dependency set D from cuStreamGetCaptureInfo (after
 * an enqueue D is {the new node}). The book keeps, per stream, the same set
 * annotated with WHY each node is in it:
 *
 *   stream   the node was enqueued on this stream (program order);
 *   event    it came in through cuStreamWaitEvent on a captured event whose
 *            latest record (cuEventRecord snapshots the recording stream's
 *            set) held it: the edge names that event;
 *   control  anything else: the initial dependencies of
 *            cuStreamBeginCaptureToGraph, nodes put into the set by
 *            cuStreamUpdateCaptureDependencies that were enqueued on another
 *            stream, nodes that appear in a set without a call we saw. These
 *            are orderings the program made explicitly, without an event;
 *            passes must keep them like any other dependency.
 *   (cuStreamUpdateCaptureDependencies putting back a node of the same
 *   stream gives `stream`: it is still program order on that stream.)
 *
 * A node that is new in D after an enqueue is tagged with its stream label
 * (s0 = the stream that began the capture, s1, ... in the order streams join
 * by waiting on a captured event), a per-capture sequence number, the API
 * that made it, and a copy of the annotated set it was enqueued after: its
 * incoming edges and their kinds. Events get labels e0, e1, ... in order of
 * first record in the capture.
 *
 * At end of capture the session's tags, stream and event tables become a
 * record kept under the CUgraph handle until the graph is instantiated
 * (and for later instantiations) or destroyed; the records are a bounded
 * LRU cache (count and total tags). Nothing here locks: the shim serializes
 * calls with one mutex. Handles are plain 64-bit values.
 *
 * A program may capture thousands of times a second: the book's tables
 * (u64map.h) keep their slots when they empty, and sessions, streams,
 * events, records and the chunks tags are carved from are recycled, so a
 * re-capture allocates next to nothing.
 */
#ifndef SGCAP_CAPTURE_BOOK_H
#define SGCAP_CAPTURE_BOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/bytes.h"
#include "capture/u64map.h"
#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One member of a dependency set, or one incoming edge of a tagged node. */
typedef struct {
    uint64_t node;
    uint32_t event; /* event label index for SG_EDGE_EVENT, else SG_NONE */
    uint8_t kind;   /* sg_edge_kind_t: STREAM, EVENT or CONTROL */
} sg_dep_t;

typedef struct sg_tag {
    uint64_t node;   /* CUgraphNode: the key */
    uint32_t stream; /* stream label index in the record */
    uint32_t api;    /* caller's id of the API that made it */
    uint64_t seq;    /* order of enqueue within the capture */
    uint32_t n_preds;
    sg_dep_t *preds; /* the annotated set it was enqueued after */
} sg_tag_t;

/* What the shim knows about a stream when it enters a capture. */
typedef struct {
    uint64_t key;     /* identity: the handle, or the per-thread stream id */
    uint64_t handle;  /* CUstream as the program passed it (canonical) */
    uint64_t cuda_id; /* cuStreamGetId, 0 if unknown */
    uint32_t flags;
    int32_t priority;
    bool per_thread;
} sg_book_stream_info_t;

/* A finished capture, kept under its graph until instantiate/destroy. */
typedef struct sg_capture_record {
    uint64_t graph;      /* key */
    uint64_t capture_id; /* the last capture that filled it */
    char mode[16];       /* "global", "thread_local", "relaxed" */
    uint32_t n_streams, cap_streams;
    sg_book_stream_info_t *streams; /* index = label number */
    uint32_t n_events, cap_events;
    uint64_t *events;   /* event handle per label number */
    sg_u64map_t tags;   /* node -> sg_tag_t (book.c's) */
    struct sg_book_chunk *chunks; /* where the tags live */
    uint64_t n_tags;
    uint64_t next_seq;
    bool overflow;        /* tagging stopped at the tag bound */
    uint32_t unexplained; /* sets that held nodes no call explained */
    uint64_t lru;         /* last use tick */
    /* The capture's calls (sg_book_calls_*), when every node it tagged came
     * from a call the caller described: two hashes and the caller's
     * generation at its begin. */
    bool calls_ok;
    uint64_t calls_gen, calls_shape, calls_args;
} sg_capture_record_t;

typedef struct {
    uint32_t max_records; /* graphs kept between end of capture and destroy */
    uint64_t max_tags;    /* tags in records and open sessions together */
} sg_book_limits_t;

typedef struct sg_book sg_book_t;

typedef struct {
    uint64_t captures_begun, captures_ended, captures_dropped;
    uint64_t nodes_tagged;
    uint64_t records_evicted;
    uint64_t tags_live; /* in records and sessions now */
    uint64_t tags_peak; /* the most ever held at once */
    uint32_t sessions_live, records_live;
} sg_book_stats_t;

/* NULL limits: defaults (1024 records, 4M tags). NULL when out of memory. */
sg_book_t *sg_book_create(const sg_book_limits_t *limits);
void sg_book_destroy(sg_book_t *b);
/* Drop every open session (a forked child inherits none of the captures). */
void sg_book_drop_sessions(sg_book_t *b);
void sg_book_stats(const sg_book_t *b, sg_book_stats_t *out);

/* A capture began on `origin` (label s0). graph is the CUgraph it builds
 * (cuStreamBeginCaptureToGraph's, or the one the driver reports); deps are
 * the initial dependency set (BeginCaptureToGraph), annotated `control`.
 * A graph that already has a record (a second capture into it) continues
 * its labels and sequence numbers. Returns 0, SG_EEXIST (stream already in
 * a session: the old one is dropped and the new one begins) or SG_ENOMEM. */
int sg_book_begin(sg_book_t *b, uint64_t capture_id, const sg_book_stream_info_t *origin,
                  uint64_t graph, const char *mode, const uint64_t *deps, size_t n_deps);

/* The capture's calls, hashed as they come, so that the caller can tell a
 * capture made by the same calls as an earlier one without reading the
 * graph back (shim.c: a memo from these hashes to the graph's digest).
 * sg_book_calls_begin, right after sg_book_begin on the origin stream `key`,
 * turns it on for a new record begun without dependencies, with the
 * caller's generation and salt (what else decides what the calls make);
 * the call of the coming sg_book_enqueue is described by appending its
 * shape bytes (everything but argument values) and its argument bytes to
 * the runs sg_book_calls_runs gives (NULL when the digest is off for key's
 * capture: nothing to describe; the runs hold under the caller's lock until
 * its next call into the book), then sg_book_calls_noted; a caller that
 * cannot describe a call takes back what it appended and does not note it
 * (the node then turns the digest off). The
 * book adds what it knows itself: each stream joining (its id, flags and
 * priority), each node tagged (stream, sequence, api, its predecessors'
 * sequence numbers and kinds), each record and wait (stream, event label).
 * A node tagged without a note, an update of the dependencies, a stream
 * whose id is unknown or that another capture holds turn it off
 * (sg_book_calls_taint does it for the caller); at sg_book_end the record
 * gets calls_ok and the two hashes when it stayed on, nothing overflowed and
 * every dependency was explained. */
void sg_book_calls_begin(sg_book_t *b, uint64_t key, uint64_t gen, const void *salt, size_t n);
typedef struct sg_book_calls sg_book_calls_t;
sg_book_calls_t *sg_book_calls_runs(sg_book_t *b, uint64_t key, sg_bytes_t **shape,
                                    sg_bytes_t **args);
void sg_book_calls_noted(sg_book_calls_t *c);
void sg_book_calls_taint(sg_book_t *b, uint64_t key);

/* Capture id of the session holding this stream key, 0 if none. */
uint64_t sg_book_capture_of(const sg_book_t *b, uint64_t key);
/* Is any session open? */
bool sg_book_any_session(const sg_book_t *b);

/* After a successful enqueue on stream `key` (launch, copy, memset, host
 * function, stream-ordered alloc/free, external event record/wait, graph
 * launch): D is the driver's dependency set now. Nodes of D not yet tagged
 * are tagged (api = caller's id). Returns how many were tagged; 0 as well
 * when the stream is in no session. */
int sg_book_enqueue(sg_book_t *b, uint64_t key, uint32_t api, const uint64_t *d, size_t n);

/* cuEventRecord(event, stream) on a capturing stream: the event's latest
 * record is the stream's current set. No-op when the stream is in no session. */
int sg_book_record(sg_book_t *b, uint64_t key, uint64_t event);

/* cuStreamWaitEvent(stream, event) succeeded and the driver now reports the
 * stream in capture `capture_id` with set D. A stream not yet in the session
 * joins it (next label). Nodes new in the set that the event's latest record
 * holds are annotated `event`, others `control`. No-op when no session has
 * that capture id. */
int sg_book_wait(sg_book_t *b, const sg_book_stream_info_t *s, uint64_t event, uint64_t capture_id,
                 const uint64_t *d, size_t n);

/* cuStreamUpdateCaptureDependencies: the stream's set is now D. */
int sg_book_update(sg_book_t *b, uint64_t key, const uint64_t *d, size_t n);

/* End of the capture the stream `key` belongs to. ok with a graph: the
 * session becomes (or merges into) the record of `graph`; otherwise (the
 * capture failed) it is dropped. Returns 0 or SG_ENOENT (no session). */
int sg_book_end(sg_book_t *b, uint64_t key, uint64_t graph, bool ok);

/* The record of a graph (marks it recently used), or NULL. Valid until the
 * next call that changes the book. */
const sg_capture_record_t *sg_book_find_record(sg_book_t *b, uint64_t graph);
/* Tag of a node in a record, or NULL. */
const sg_tag_t *sg_book_find_tag(const sg_capture_record_t *r, uint64_t node);
/* Forget a graph (cuGraphDestroy). */
void sg_book_forget(sg_book_t *b, uint64_t graph);

/* Why the CUDA graph edge from -> to exists, per the record: *kind and
 * *event (event label or SG_NONE). Returns true when the capture explained
 * it (the edge is among `to`'s recorded predecessors); otherwise gives the
 * fallback, `stream` when both ends were tagged on one stream and `control`
 * for anything else (nodes added with cuGraphAdd*Node, edges the program
 * added after capture), and returns false. r may be NULL (explicit graph). */
bool sg_book_edge_kind(const sg_capture_record_t *r, uint64_t from, uint64_t to, uint8_t *kind,
                       uint32_t *event);

/* The same from the two ends' tags (either may be NULL), when the caller
 * has them already. */
bool sg_book_edge_kind_of(const sg_tag_t *from_tag, const sg_tag_t *to_tag, uint64_t from,
                          uint8_t *kind, uint32_t *event);

/* Does the dependency list hold `node`? Returns its entry or NULL. */
const sg_dep_t *sg_dep_find(const sg_dep_t *deps, uint32_t n, uint64_t node);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_BOOK_H */
