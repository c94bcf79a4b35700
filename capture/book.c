/* book.c: capture bookkeeping (book.h): open capture sessions with their
 * annotated per-stream dependency sets and event records, and the bounded
 * cache of finished capture records keyed by graph. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "bytes.h"

#include <xxhash.h>

typedef struct sess_event {
    uint64_t handle;
    uint32_t label;
    uint32_t n, cap;
    uint64_t *nodes; /* the latest record's dependency set */
} sess_event_t;

struct session;

typedef struct sess_stream {
    uint64_t key;
    struct session *sess;
    uint32_t label;
    uint32_t n, cap;
    sg_dep_t *set; /* annotated current dependency set */
} sess_stream_t;

/* The capture's calls (sg_book_calls_*), hashed as they come: two byte
 * runs (book.h: the shape run and the argument run), each folded into its
 * running hash once it holds CALLS_CHUNK bytes, so a capture of any length
 * holds about two chunks. The caller describes its calls straight into
 * them (sg_book_calls_runs). */
struct sg_book_calls {
    sg_bytes_t shape, args;
    uint64_t h_shape, h_args;
    uint64_t gen;
    bool fresh; /* a new record, begun without dependencies */
    bool on;    /* sg_book_calls_begin was called and nothing tainted it */
    bool noted; /* the coming enqueue's call was noted */
};
typedef sg_book_calls_t calls_t;

typedef struct session {
    uint64_t capture_id;
    sg_capture_record_t *rec; /* owned while the capture is open */
    sg_u64map_t events;       /* handle -> sess_event_t */
    sess_stream_t **members;
    uint32_t n_members, cap_members;
    struct session *next;
    calls_t calls;
} session_t;

/* Tags are carved from chunks owned by their record. */
typedef struct sg_book_chunk {
    struct sg_book_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} chunk_t;

enum {
    CHUNK_BYTES = 4096 - sizeof(chunk_t), /* the usual chunk's payload */
    POOL_MAX = 32,                        /* recycled objects kept of each kind */
    MAP_KEEP = 1024,                      /* slots a recycled table keeps */
    SET_KEEP = 256                        /* dependency-set entries a recycled stream keeps */
};

/* A free list of at most POOL_MAX objects, linked through their first
 * 8 bytes: a key, handle or link that is dead while the object is pooled
 * (every pooled type starts with one). */
typedef struct {
    void *head;
    uint32_t n;
} pool_t;

_Static_assert(offsetof(session_t, capture_id) == 0 && offsetof(sess_stream_t, key) == 0 &&
                   offsetof(sess_event_t, handle) == 0 &&
                   offsetof(sg_capture_record_t, graph) == 0 && offsetof(chunk_t, next) == 0,
               "a pooled object's first 8 bytes are its free-list link");

static bool pool_put(pool_t *p, void *o)
{
    if (p->n >= POOL_MAX) return false;
    memcpy(o, &p->head, sizeof p->head);
    p->head = o;
    p->n++;
    return true;
}

static void *pool_take(pool_t *p)
{
    void *o = p->head;
    if (o) {
        memcpy(&p->head, o, sizeof p->head);
        p->n--;
    }
    return o;
}

/* The last finished capture's runs (their bytes, the hash they were folded
 * into before and the hash that came out): a program that captures the
 * same calls again makes the same bytes, and a compare of a few hundred
 * bytes costs a fraction of hashing them. The buffers swap with the
 * session's (no copy). */
typedef struct {
    sg_bytes_t run;
    uint64_t seed, hash;
} last_run_t;

struct sg_book {
    sg_book_limits_t lim;
    last_run_t last_shape, last_args;
    sg_u64map_t streams;  /* stream key -> sess_stream_t of an open session */
    session_t *sessions;
    sg_u64map_t records;  /* graph -> sg_capture_record_t */
    uint64_t tick;
    sg_book_stats_t st;
    /* recycled objects (chunks: CHUNK_BYTES ones only) */
    pool_t sessions_free, streams_free, events_free, records_free, chunks_free;
};

/* ---- small helpers ---------------------------------------------------------- */

const sg_dep_t *sg_dep_find(const sg_dep_t *deps, uint32_t n, uint64_t node)
{
    for (uint32_t i = 0; i < n; i++)
        if (deps[i].node == node) return &deps[i];
    return NULL;
}

static bool u64_in(const uint64_t *a, uint32_t n, uint64_t v)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] == v) return true;
    return false;
}

/* ---- recycling ---------------------------------------------------------------- */

/* n bytes for a tag of r, 16-aligned, from its chunks. */
static void *tag_alloc(sg_book_t *b, sg_capture_record_t *r, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    chunk_t *c = r->chunks;
    if (!c || c->size - c->used < n) {
        if (!(n <= CHUNK_BYTES && (c = pool_take(&b->chunks_free)))) {
            size_t size = n > CHUNK_BYTES ? n : CHUNK_BYTES;
            c = malloc(sizeof *c + size);
            if (!c) return NULL;
            c->size = size;
        }
        c->used = 0;
        c->next = r->chunks;
        r->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

static void chunks_release(sg_book_t *b, chunk_t *c)
{
    while (c) {
        chunk_t *next = c->next;
        if (c->size != CHUNK_BYTES || !pool_put(&b->chunks_free, c)) free(c);
        c = next;
    }
}

/* What each pooled kind owns, given back for good. */
static void record_dispose(sg_capture_record_t *r)
{
    sg_u64map_free(&r->tags);
    free(r->streams);
    free(r->events);
    free(r);
}

static void event_dispose(sess_event_t *e)
{
    free(e->nodes);
    free(e);
}

static void stream_dispose(sess_stream_t *st)
{
    free(st->set);
    free(st);
}

static void session_dispose(session_t *s)
{
    free(s->calls.shape.p);
    free(s->calls.args.p);
    sg_u64map_free(&s->events);
    free(s->members);
    free(s);
}

static void record_free(sg_book_t *b, sg_capture_record_t *r)
{
    if (!r) return;
    chunks_release(b, r->chunks);
    r->chunks = NULL;
    if (r->tags.cap <= MAP_KEEP && pool_put(&b->records_free, r)) {
        sg_u64map_clear(&r->tags, MAP_KEEP);
        return;
    }
    record_dispose(r);
}

static sg_capture_record_t *record_new(sg_book_t *b, uint64_t graph, uint64_t capture_id,
                                       const char *mode)
{
    sg_capture_record_t *r = pool_take(&b->records_free);
    if (r) {
        sg_capture_record_t keep = *r; /* the arrays and the table, emptied */
        memset(r, 0, sizeof *r);
        r->streams = keep.streams;
        r->cap_streams = keep.cap_streams;
        r->events = keep.events;
        r->cap_events = keep.cap_events;
        r->tags = keep.tags;
    } else {
        r = calloc(1, sizeof *r);
        if (!r) return NULL;
    }
    r->graph = graph;
    r->capture_id = capture_id;
    strncpy(r->mode, mode ? mode : "global", sizeof r->mode - 1);
    return r;
}

static void event_free(sg_book_t *b, sess_event_t *e)
{
    if (e->cap > SET_KEEP || !pool_put(&b->events_free, e)) event_dispose(e);
}

static sess_event_t *event_new(sg_book_t *b)
{
    sess_event_t *e = pool_take(&b->events_free);
    if (!e) return calloc(1, sizeof(sess_event_t));
    uint64_t *nodes = e->nodes;
    uint32_t cap = e->cap;
    memset(e, 0, sizeof *e);
    e->nodes = nodes;
    e->cap = cap;
    return e;
}

static void stream_free(sg_book_t *b, sess_stream_t *st)
{
    if (st->cap > SET_KEEP || !pool_put(&b->streams_free, st)) stream_dispose(st);
}

static sess_stream_t *stream_new(sg_book_t *b)
{
    sess_stream_t *st = pool_take(&b->streams_free);
    if (!st) return calloc(1, sizeof(sess_stream_t));
    sg_dep_t *set = st->set;
    uint32_t cap = st->cap;
    memset(st, 0, sizeof *st);
    st->set = set;
    st->cap = cap;
    return st;
}

static session_t *session_new(sg_book_t *b)
{
    session_t *s = pool_take(&b->sessions_free);
    if (!s) return calloc(1, sizeof(session_t));
    session_t keep = *s;
    memset(s, 0, sizeof *s);
    s->events = keep.events; /* emptied when it was freed */
    s->members = keep.members;
    s->cap_members = keep.cap_members;
    s->calls.shape = keep.calls.shape;
    s->calls.args = keep.calls.args;
    return s;
}

/* Stream label in the record for this key: existing or appended. */
static int record_stream(sg_capture_record_t *r, const sg_book_stream_info_t *s, uint32_t *label)
{
    for (uint32_t i = 0; i < r->n_streams; i++)
        if (r->streams[i].key == s->key) {
            *label = i;
            return SG_OK;
        }
    int rc = sg_array_grow((void **)&r->streams, &r->cap_streams, r->n_streams + 1, sizeof *r->streams);
    if (rc) return rc;
    r->streams[r->n_streams] = *s;
    *label = r->n_streams++;
    return SG_OK;
}

static int record_event(sg_capture_record_t *r, uint64_t handle, uint32_t *label)
{
    for (uint32_t i = 0; i < r->n_events; i++)
        if (r->events[i] == handle) {
            *label = i;
            return SG_OK;
        }
    int rc = sg_array_grow((void **)&r->events, &r->cap_events, r->n_events + 1, sizeof *r->events);
    if (rc) return rc;
    r->events[r->n_events] = handle;
    *label = r->n_events++;
    return SG_OK;
}

/* ---- records cache ---------------------------------------------------------- */

static void drop_record(sg_book_t *b, sg_capture_record_t *r)
{
    sg_u64map_del(&b->records, r->graph);
    b->st.tags_live -= r->n_tags;
    b->st.records_live--;
    record_free(b, r);
}

static void evict_one(sg_book_t *b)
{
    sg_capture_record_t *old = NULL;
    for (uint32_t i = 0; i < b->records.cap; i++) {
        sg_capture_record_t *r = b->records.vals[i];
        if (r && (!old || r->lru < old->lru)) old = r;
    }
    if (!old) return;
    b->st.records_evicted++;
    drop_record(b, old);
}

static void enforce_limits(sg_book_t *b)
{
    while (b->records.n &&
           (b->st.records_live > b->lim.max_records || b->st.tags_live > b->lim.max_tags))
        evict_one(b);
}

/* ---- sessions ----------------------------------------------------------------- */

static void session_free(sg_book_t *b, session_t *s, bool keep_record)
{
    for (uint32_t i = 0; i < s->n_members; i++) {
        sess_stream_t *st = s->members[i];
        sg_u64map_del(&b->streams, st->key);
        stream_free(b, st);
    }
    for (uint32_t i = 0; i < s->events.cap; i++)
        if (s->events.vals[i]) event_free(b, s->events.vals[i]);
    sg_u64map_clear(&s->events, MAP_KEEP);
    if (!keep_record && s->rec) {
        b->st.tags_live -= s->rec->n_tags;
        record_free(b, s->rec);
    }
    for (session_t **pp = &b->sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    b->st.sessions_live--;
    if (s->cap_members > SET_KEEP || !pool_put(&b->sessions_free, s)) session_dispose(s);
}

static session_t *session_by_id(const sg_book_t *b, uint64_t capture_id)
{
    for (session_t *s = b->sessions; s; s = s->next)
        if (s->capture_id == capture_id) return s;
    return NULL;
}

static sess_stream_t *stream_find(const sg_book_t *b, uint64_t key)
{
    return sg_u64map_get(&b->streams, key);
}

static sess_stream_t *stream_join(sg_book_t *b, session_t *s, const sg_book_stream_info_t *info)
{
    uint32_t label;
    if (record_stream(s->rec, info, &label)) return NULL;
    if (sg_array_grow((void **)&s->members, &s->cap_members, s->n_members + 1, sizeof *s->members))
        return NULL;
    sess_stream_t *st = stream_new(b);
    if (!st) return NULL;
    st->key = info->key;
    st->sess = s;
    st->label = label;
    if (sg_u64map_put(&b->streams, st->key, st)) {
        stream_free(b, st);
        return NULL;
    }
    s->members[s->n_members++] = st;
    return st;
}

/* Replace st's annotated set by D: members kept keep their annotation; new
 * ones get classify(). */
typedef sg_dep_t (*classify_fn)(const void *ctx, uint64_t node);

static int set_store(sess_stream_t *st, const sg_dep_t *next, uint32_t m);

static int set_assign(sess_stream_t *st, const uint64_t *d, size_t n, classify_fn classify,
                      const void *ctx, uint32_t *unexplained)
{
    if (n > UINT32_MAX / 2) return SG_ELIMIT;
    sg_dep_t small[64];
    sg_dep_t *next = n <= 64 ? small : malloc(n * sizeof *next);
    if (!next) return SG_ENOMEM;
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (sg_dep_find(next, m, d[i])) continue; /* the driver never repeats; be safe */
        const sg_dep_t *old = sg_dep_find(st->set, st->n, d[i]);
        if (old) {
            next[m++] = *old;
        } else {
            next[m] = classify(ctx, d[i]);
            if (next[m].kind == SG_EDGE_CONTROL && unexplained) (*unexplained)++;
            m++;
        }
    }
    int rc = set_store(st, next, m);
    if (next != small) free(next);
    return rc;
}

static sg_dep_t classify_control(const void *ctx, uint64_t node)
{
    (void)ctx;
    sg_dep_t dep = {node, SG_NONE, SG_EDGE_CONTROL};
    return dep;
}

/* ---- the capture's calls ---------------------------------------------------------- */

enum { CALLS_CHUNK = 4096 };

/* A run that has reached a chunk is folded into its hash and emptied. */
static inline void calls_fold(sg_bytes_t *r, uint64_t *h)
{
    if (r->n < CALLS_CHUNK) return;
    *h = sg_bytes_hash(r->p, r->n, *h);
    r->n = 0;
}

/* Append to the shape run (the book's own steps). Out of memory sets the
 * run's oom: the record is then not described by its calls (sg_book_end). */
static inline void calls_shape(calls_t *c, const void *p, size_t n)
{
    sg_bytes_put(&c->shape, p, n);
    calls_fold(&c->shape, &c->h_shape);
}

/* What the book itself knows of a step, into the shape run: an op letter
 * with the stream label, a word and two halves. */
static inline void calls_step(calls_t *c, char op, uint32_t stream, uint64_t a, uint32_t b,
                              uint32_t d)
{
    if (!c->on) return;
    uint64_t w[3] = {(uint64_t)(uint8_t)op | (uint64_t)stream << 8, a,
                     (uint64_t)b | (uint64_t)d << 32};
    calls_shape(c, w, sizeof w);
}

/* A stream entering the session: its identity (cuStreamGetId, unique for
 * the program's life, flags and priority decide what captured kernel nodes
 * inherit). */
static void calls_join(calls_t *c, uint32_t label, const sg_book_stream_info_t *i)
{
    calls_step(c, i->per_thread ? 'j' : 'J', label, i->cuda_id, i->flags, (uint32_t)i->priority);
    if (!i->cuda_id) c->on = false; /* an identity we do not know */
}

/* ---- public ---------------------------------------------------------------------- */

sg_book_t *sg_book_create(const sg_book_limits_t *limits)
{
    sg_book_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->lim.max_records = limits && limits->max_records ? limits->max_records : 1024;
    b->lim.max_tags = limits && limits->max_tags ? limits->max_tags : (4u << 20);
    return b;
}

void sg_book_drop_sessions(sg_book_t *b)
{
    while (b && b->sessions) {
        b->st.captures_dropped++;
        session_free(b, b->sessions, false);
    }
}

void sg_book_destroy(sg_book_t *b)
{
    if (!b) return;
    sg_book_drop_sessions(b);
    for (uint32_t i = 0; i < b->records.cap; i++) {
        sg_capture_record_t *r = b->records.vals[i];
        if (!r) continue;
        chunks_release(b, r->chunks);
        record_dispose(r);
    }
    sg_u64map_free(&b->records);
    sg_u64map_free(&b->streams);
    void *o;
    while ((o = pool_take(&b->sessions_free))) session_dispose(o);
    while ((o = pool_take(&b->streams_free))) stream_dispose(o);
    while ((o = pool_take(&b->events_free))) event_dispose(o);
    while ((o = pool_take(&b->records_free))) record_dispose(o);
    while ((o = pool_take(&b->chunks_free))) free(o);
    free(b->last_shape.run.p);
    free(b->last_args.run.p);
    free(b);
}

void sg_book_stats(const sg_book_t *b, sg_book_stats_t *out)
{
    *out = b->st;
}

bool sg_book_any_session(const sg_book_t *b)
{
    return b->sessions != NULL;
}

uint64_t sg_book_capture_of(const sg_book_t *b, uint64_t key)
{
    const sess_stream_t *st = stream_find(b, key);
    return st ? st->sess->capture_id : 0;
}

int sg_book_begin(sg_book_t *b, uint64_t capture_id, const sg_book_stream_info_t *origin,
                  uint64_t graph, const char *mode, const uint64_t *deps, size_t n_deps)
{
    int ret = SG_OK;
    sess_stream_t *old = stream_find(b, origin->key);
    if (old) {
        /* We missed the end of its last capture: that session is gone. */
        b->st.captures_dropped++;
        session_free(b, old->sess, false);
        ret = SG_EEXIST;
    }
    session_t *s = session_new(b);
    if (!s) return SG_ENOMEM;
    s->capture_id = capture_id;
    /* A second capture into a graph we already hold continues its record. */
    sg_capture_record_t *rec = graph ? sg_u64map_del(&b->records, graph) : NULL;
    s->calls.fresh = !rec && n_deps == 0;
    if (rec) {
        b->st.records_live--;
        rec->capture_id = capture_id;
        rec->calls_ok = false; /* its first capture's calls do not describe it */
    } else {
        rec = record_new(b, graph, capture_id, mode);
        if (!rec) {
            s->next = b->sessions; /* so that session_free finds and recycles it */
            b->sessions = s;
            b->st.sessions_live++;
            session_free(b, s, true);
            return SG_ENOMEM;
        }
    }
    s->rec = rec;
    s->next = b->sessions;
    b->sessions = s;
    b->st.sessions_live++;
    b->st.captures_begun++;
    sess_stream_t *st = stream_join(b, s, origin);
    if (!st) {
        session_free(b, s, false);
        return SG_ENOMEM;
    }
    int rc = set_assign(st, deps, n_deps, classify_control, NULL, NULL);
    return rc ? rc : ret;
}

typedef struct {
    const sg_capture_record_t *rec;
    uint32_t stream;
} enqueue_ctx_t;

/* Replace st's set by next[0..m), reusing its storage when it fits. */
static int set_store(sess_stream_t *st, const sg_dep_t *next, uint32_t m)
{
    if (m > st->cap) {
        sg_dep_t *p = realloc(st->set, m * sizeof *p);
        if (!p) return SG_ENOMEM;
        st->set = p;
        st->cap = m;
    }
    if (m) memcpy(st->set, next, m * sizeof *next);
    st->n = m;
    return SG_OK;
}

/* Tag a node st's call just made: its stream, sequence number and
 * predecessors (st's set), and its step in the call digest. 1 when tagged,
 * 0 when the tag limit or memory stopped it (the record overflows). */
static int tag_new(sg_book_t *b, sess_stream_t *st, sg_capture_record_t *rec, uint64_t node,
                   uint32_t api)
{
    if (b->st.tags_live >= b->lim.max_tags) {
        enforce_limits(b); /* make room by evicting finished records */
        if (b->st.tags_live >= b->lim.max_tags) {
            rec->overflow = true;
            return 0;
        }
    }
    /* The tag and its predecessors in one block. */
    if (sg_u64map_reserve(&rec->tags)) return 0;
    sg_tag_t *t = tag_alloc(b, rec, sizeof *t + st->n * sizeof(sg_dep_t));
    if (!t) return 0;
    memset(t, 0, sizeof *t);
    t->node = node;
    t->stream = st->label;
    t->api = api;
    t->seq = rec->next_seq++;
    t->n_preds = st->n;
    t->preds = (sg_dep_t *)(t + 1);
    if (st->n) memcpy(t->preds, st->set, st->n * sizeof *t->preds);
    sg_u64map_put(&rec->tags, t->node, t); /* room reserved above */
    rec->n_tags++;
    calls_t *c = &st->sess->calls;
    if (c->on && !c->noted) c->on = false; /* a node from a call nobody described */
    if (c->on) {
        calls_step(c, 'N', t->stream, t->seq, api, t->n_preds);
        for (uint32_t k = 0; k < t->n_preds; k++) {
            const sg_tag_t *p = sg_u64map_get(&rec->tags, t->preds[k].node);
            uint64_t w[2] = {p ? p->seq : UINT64_MAX,
                             (uint64_t)t->preds[k].kind << 32 | t->preds[k].event};
            calls_shape(c, w, sizeof w);
        }
    }
    b->st.tags_live++;
    if (b->st.tags_live > b->st.tags_peak) b->st.tags_peak = b->st.tags_live;
    b->st.nodes_tagged++;
    return 1;
}

int sg_book_enqueue(sg_book_t *b, uint64_t key, uint32_t api, const uint64_t *d, size_t n)
{
    sess_stream_t *st = stream_find(b, key);
    if (!st) return 0;
    if (n > UINT32_MAX / 2) return SG_ELIMIT;
    sg_capture_record_t *rec = st->sess->rec;
    int tagged = 0;
    /* The usual call: one new node, after the stream's set. */
    if (n == 1 && !sg_u64map_get(&rec->tags, d[0]) && !sg_dep_find(st->set, st->n, d[0])) {
        tagged = tag_new(b, st, rec, d[0], api);
        sg_dep_t one = {d[0], SG_NONE, SG_EDGE_STREAM};
        int rc = set_store(st, &one, 1);
        st->sess->calls.noted = false;
        return rc ? rc : tagged;
    }
    /* The general case allocates only the tags while it fits the stack. */
    uint64_t fresh_small[64];
    sg_dep_t next_small[64];
    uint64_t *fresh = n <= 64 ? fresh_small : malloc(n * sizeof *fresh);
    sg_dep_t *next = n <= 64 ? next_small : malloc(n * sizeof *next);
    uint32_t n_fresh = 0;
    int rc = SG_ENOMEM;
    if (!fresh || !next) goto out;
    for (size_t i = 0; i < n; i++) {
        const sg_tag_t *t = sg_u64map_get(&rec->tags, d[i]);
        if (!t && !sg_dep_find(st->set, st->n, d[i]) && !u64_in(fresh, n_fresh, d[i]))
            fresh[n_fresh++] = d[i];
    }
    for (uint32_t i = 0; i < n_fresh; i++) {
        int k = tag_new(b, st, rec, fresh[i], api);
        if (!k) break;
        tagged += k;
    }
    /* The new set: fresh nodes are this stream's own; anything else that
     * appeared without our knowing why is control. */
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (sg_dep_find(next, m, d[i])) continue;
        const sg_dep_t *old = sg_dep_find(st->set, st->n, d[i]);
        if (old) {
            next[m++] = *old;
        } else if (u64_in(fresh, n_fresh, d[i])) {
            next[m++] = (sg_dep_t){d[i], SG_NONE, SG_EDGE_STREAM};
        } else {
            const sg_tag_t *t = sg_book_find_tag(rec, d[i]);
            uint8_t kind = t && t->stream == st->label ? SG_EDGE_STREAM : SG_EDGE_CONTROL;
            if (kind == SG_EDGE_CONTROL) rec->unexplained++;
            next[m++] = (sg_dep_t){d[i], SG_NONE, kind};
        }
    }
    rc = set_store(st, next, m);
    st->sess->calls.noted = false;
out:
    if (fresh != fresh_small) free(fresh);
    if (next != next_small) free(next);
    return rc ? rc : tagged;
}

int sg_book_record(sg_book_t *b, uint64_t key, uint64_t event)
{
    sess_stream_t *st = stream_find(b, key);
    if (!st) return SG_OK;
    session_t *s = st->sess;
    sess_event_t *e = sg_u64map_get(&s->events, event);
    if (!e) {
        if (sg_u64map_reserve(&s->events)) return SG_ENOMEM;
        e = event_new(b);
        if (!e) return SG_ENOMEM;
        e->handle = event;
        if (record_event(s->rec, event, &e->label)) {
            event_free(b, e);
            return SG_ENOMEM;
        }
        sg_u64map_put(&s->events, event, e); /* room reserved above */
    }
    if (sg_array_grow((void **)&e->nodes, &e->cap, st->n, sizeof *e->nodes)) return SG_ENOMEM;
    for (uint32_t i = 0; i < st->n; i++)
        e->nodes[i] = st->set[i].node;
    e->n = st->n;
    calls_step(&s->calls, 'R', st->label, e->label, st->n, 0);
    return SG_OK;
}

typedef struct {
    const sess_event_t *ev;
} wait_ctx_t;

static sg_dep_t classify_wait(const void *ctx, uint64_t node)
{
    const wait_ctx_t *w = ctx;
    if (w->ev && u64_in(w->ev->nodes, w->ev->n, node)) {
        sg_dep_t dep = {node, w->ev->label, SG_EDGE_EVENT};
        return dep;
    }
    return classify_control(NULL, node);
}

int sg_book_wait(sg_book_t *b, const sg_book_stream_info_t *s, uint64_t event, uint64_t capture_id,
                 const uint64_t *d, size_t n)
{
    sess_stream_t *st = stream_find(b, s->key);
    if (st && st->sess->capture_id != capture_id) {
        /* The stream is reported in another capture than we thought: the
         * old session lost track; leave it be and follow the driver. */
        st->sess->calls.on = false;
        st = NULL;
    }
    if (!st) {
        session_t *sess = session_by_id(b, capture_id);
        if (!sess) return SG_OK;
        if (stream_find(b, s->key)) {
            sess->calls.on = false;
            return SG_OK;
        }
        st = stream_join(b, sess, s);
        if (!st) return SG_ENOMEM;
        calls_join(&sess->calls, st->label, s);
    }
    wait_ctx_t w = {NULL};
    w.ev = sg_u64map_get(&st->sess->events, event);
    calls_step(&st->sess->calls, 'W', st->label, w.ev ? w.ev->label : UINT32_MAX, (uint32_t)n, 0);
    return set_assign(st, d, n, classify_wait, &w, &st->sess->rec->unexplained);
}

typedef struct {
    const sg_capture_record_t *rec;
    uint32_t stream;
} update_ctx_t;

static sg_dep_t classify_update(const void *ctx, uint64_t node)
{
    const update_ctx_t *u = ctx;
    const sg_tag_t *t = sg_book_find_tag(u->rec, node);
    sg_dep_t dep = {node, SG_NONE,
                    (uint8_t)(t && t->stream == u->stream ? SG_EDGE_STREAM : SG_EDGE_CONTROL)};
    return dep;
}

int sg_book_update(sg_book_t *b, uint64_t key, const uint64_t *d, size_t n)
{
    sess_stream_t *st = stream_find(b, key);
    if (!st) return SG_OK;
    update_ctx_t u = {st->sess->rec, st->label};
    st->sess->calls.on = false; /* dependencies the calls do not show */
    /* Control edges here are the program's explicit choice, not a loss of
     * track: do not count them as unexplained. */
    return set_assign(st, d, n, classify_update, &u, NULL);
}

/* The hash of a finished run (folded into seed so far): the last run's
 * when the bytes are the same, else computed; either way the run becomes
 * the last one (the buffers swap, so the session keeps the older one's
 * storage to write its next capture into). */
static uint64_t run_hash(last_run_t *last, sg_bytes_t *run, uint64_t seed)
{
    uint64_t h;
    if (last->run.p && last->run.n == run->n && last->seed == seed &&
        memcmp(last->run.p, run->p, run->n) == 0)
        h = last->hash;
    else
        h = sg_bytes_hash(run->p, run->n, seed);
    sg_bytes_t older = last->run;
    last->run = *run, last->seed = seed, last->hash = h;
    *run = older;
    return h;
}

int sg_book_end(sg_book_t *b, uint64_t key, uint64_t graph, bool ok)
{
    sess_stream_t *st = stream_find(b, key);
    if (!st) return SG_ENOENT;
    session_t *s = st->sess;
    if (!ok || !graph) {
        b->st.captures_dropped++;
        session_free(b, s, false);
        return SG_OK;
    }
    sg_capture_record_t *rec = s->rec;
    s->rec = NULL;
    calls_t *c = &s->calls;
    rec->calls_ok = c->on && !c->shape.oom && !c->args.oom && !rec->overflow &&
                    rec->unexplained == 0;
    if (rec->calls_ok) {
        rec->calls_gen = c->gen;
        rec->calls_shape = run_hash(&b->last_shape, &c->shape, c->h_shape);
        rec->calls_args = run_hash(&b->last_args, &c->args, c->h_args);
    }
    session_free(b, s, true);
    sg_capture_record_t *prev = sg_u64map_get(&b->records, graph);
    if (prev) drop_record(b, prev); /* a handle the driver reused */
    rec->graph = graph;
    rec->lru = ++b->tick;
    if (sg_u64map_put(&b->records, graph, rec)) {
        b->st.tags_live -= rec->n_tags;
        record_free(b, rec);
        return SG_ENOMEM;
    }
    b->st.records_live++;
    b->st.captures_ended++;
    enforce_limits(b);
    return SG_OK;
}

void sg_book_calls_begin(sg_book_t *b, uint64_t key, uint64_t gen, const void *salt, size_t n)
{
    sess_stream_t *st = stream_find(b, key);
    if (!st) return;
    calls_t *c = &st->sess->calls;
    if (!c->fresh || st->sess->n_members != 1) return;
    const sg_capture_record_t *rec = st->sess->rec;
    c->on = true;
    c->noted = false;
    sg_bytes_reset(&c->shape);
    sg_bytes_reset(&c->args);
    c->h_shape = c->h_args = 0;
    c->gen = gen;
    calls_join(c, st->label, &rec->streams[st->label]);
    calls_shape(c, rec->mode, sizeof rec->mode);
    calls_shape(c, salt, n);
}

sg_book_calls_t *sg_book_calls_runs(sg_book_t *b, uint64_t key, sg_bytes_t **shape,
                                    sg_bytes_t **args)
{
    sess_stream_t *st = stream_find(b, key);
    if (!st || !st->sess->calls.on) return NULL;
    calls_t *c = &st->sess->calls;
    *shape = &c->shape;
    *args = &c->args;
    return c;
}

void sg_book_calls_noted(sg_book_calls_t *c)
{
    calls_fold(&c->shape, &c->h_shape);
    calls_fold(&c->args, &c->h_args);
    c->noted = true;
}

void sg_book_calls_taint(sg_book_t *b, uint64_t key)
{
    sess_stream_t *st = stream_find(b, key);
    if (st) st->sess->calls.on = false;
}

const sg_capture_record_t *sg_book_find_record(sg_book_t *b, uint64_t graph)
{
    sg_capture_record_t *r = sg_u64map_get(&b->records, graph);
    if (r) r->lru = ++b->tick;
    return r;
}

const sg_tag_t *sg_book_find_tag(const sg_capture_record_t *r, uint64_t node)
{
    return r ? sg_u64map_get(&r->tags, node) : NULL;
}

void sg_book_forget(sg_book_t *b, uint64_t graph)
{
    sg_capture_record_t *r = sg_u64map_get(&b->records, graph);
    if (r) drop_record(b, r);
}

bool sg_book_edge_kind_of(const sg_tag_t *f, const sg_tag_t *t, uint64_t from, uint8_t *kind,
                          uint32_t *event)
{
    *kind = SG_EDGE_CONTROL;
    *event = SG_NONE;
    if (!t) return false;
    const sg_dep_t *d = sg_dep_find(t->preds, t->n_preds, from);
    if (d) {
        *kind = d->kind;
        *event = d->kind == SG_EDGE_EVENT ? d->event : SG_NONE;
        return true;
    }
    if (f && f->stream == t->stream) *kind = SG_EDGE_STREAM;
    return false;
}

bool sg_book_edge_kind(const sg_capture_record_t *r, uint64_t from, uint64_t to, uint8_t *kind,
                       uint32_t *event)
{
    return sg_book_edge_kind_of(sg_book_find_tag(r, from), sg_book_find_tag(r, to), from, kind,
                                event);
}
