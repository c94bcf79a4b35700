/* common.c: helpers the passes and the check share: node names for
 * reports, per-stream program order, per-buffer users and memory nodes, and
 * the cost model with its ASAP timeline (see rewrite_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/text.h"
#include "graph/views.h"
#include "rewrite_internal.h"

/* ---- names ---------------------------------------------------------------- */

const char *sg_rw_label(const char *s, sg_rw_label_t *buf)
{
    sg_text_escape(buf->s, sizeof buf->s, s);
    return buf->s;
}

const char *sg_rw_note(const char *s, sg_rw_note_t *buf)
{
    sg_text_escape(buf->s, sizeof buf->s, s);
    return buf->s;
}

const char *sg_rw_stream_label(const sg_graph_t *g, uint32_t stream)
{
    const sg_stream_t *s = sg_graph_stream(g, stream);
    return s ? s->label : "explicit";
}

/* What a node is, beyond its type: kernel name, event, buffer. */
static const char *node_what(const sg_graph_t *g, const sg_node_t *n, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (n->type) {
    case SG_NODE_KERNEL:
        if (n->u.kernel.name && n->u.kernel.name[0])
#if SGCAP_IN_APP
            snprintf(buf, len, "%s", n->u.kernel.name); /* no demangler in the app */
#else
            sg_kernel_short_name(n->u.kernel.name, buf, len);
#endif
        break;
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT: {
        const sg_event_t *e = sg_graph_event(g, n->u.event);
        if (e) snprintf(buf, len, "%s", e->label);
        break;
    }
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE: {
        const sg_buffer_t *b = sg_graph_buffer(g, n->u.mem.buffer);
        if (b) snprintf(buf, len, "%s", b->label);
        break;
    }
    default:
        break;
    }
    return buf;
}

/* sg_rw_node_name from what node_what gave (x NULL: removed). */
static const char *format_name(const sg_graph_t *g, sg_node_id_t id, const sg_node_t *x,
                               const char *what, char *buf, size_t n)
{
    if (!x)
        snprintf(buf, n, "n%u (removed)", id);
    else
        snprintf(buf, n, "n%u (%s%s%s, %s)", id, sg_node_type_name(x->type), what[0] ? " " : "",
                 SG_RW_LABEL(what), SG_RW_STREAM(g, x->stream));
    return buf;
}

const char *sg_rw_node_name(const sg_graph_t *g, sg_node_id_t id, char *buf, size_t n)
{
    const sg_node_t *x = sg_graph_node(g, id);
    char what[160] = "";
    if (x) node_what(g, x, what, sizeof what);
    return format_name(g, id, x, what, buf, n);
}

/* The key a node's name is interned by: its type and stream, and for a
 * kernel its mangled name (demangled once per distinct name), for anything
 * else the what itself (a label, cheap to make). Returns the key's length. */
static size_t names_key(const sg_graph_t *g, const sg_node_t *x, char *what, size_t wlen,
                        char *key, size_t klen, bool *have_what)
{
    *have_what = false;
    if (x->type == SG_NODE_KERNEL) {
        const char *name = x->u.kernel.name ? x->u.kernel.name : "";
        int n = snprintf(key, klen, "%02x%08xk%s", (unsigned)x->type, x->stream, name);
        if (n >= 0 && (size_t)n < klen) return (size_t)n;
        /* a name too long for the key buffer: interned by its what */
    }
    node_what(g, x, what, wlen);
    *have_what = true;
    int n = snprintf(key, klen, "%02x%08xw%s", (unsigned)x->type, x->stream, what);
    return n < 0 ? 0 : (size_t)n < klen ? (size_t)n : klen - 1;
}

static uint32_t names_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return (uint32_t)(h ^ (h >> 32));
}

/* Index of the interned entry for key (made from x when new), or
 * UINT32_MAX when out of memory. An entry holds the raw what (for JSON)
 * and the name after "nID (", escaped, as format_name writes it. */
static uint32_t names_intern(sg_rw_names_t *t, const sg_graph_t *g, const sg_node_t *x,
                             const char *key, size_t kn, char *what, size_t wlen, bool have_what)
{
    if (t->n_name * 2 + 2 > t->n_slot) { /* grow and rehash */
        uint32_t ns = t->n_slot ? t->n_slot * 2 : 64;
        uint32_t *slot = calloc(ns, sizeof *slot);
        if (!slot) return UINT32_MAX;
        for (uint32_t i = 0; i < t->n_name; i++) {
            const char *k = t->text + t->name[i].off;
            uint32_t h = names_hash(k, strlen(k)) & (ns - 1);
            while (slot[h]) h = (h + 1) & (ns - 1);
            slot[h] = i + 1;
        }
        free(t->slot);
        t->slot = slot;
        t->n_slot = ns;
    }
    uint32_t h = names_hash(key, kn) & (t->n_slot - 1);
    for (; t->slot[h]; h = (h + 1) & (t->n_slot - 1)) {
        const char *k = t->text + t->name[t->slot[h] - 1].off;
        if (strncmp(k, key, kn) == 0 && k[kn] == '\0') return t->slot[h] - 1;
    }
    if (!have_what) node_what(g, x, what, wlen);
    char tail[2 * sizeof(sg_rw_label_t) + 64]; /* never cut: two labels and a type name */
    snprintf(tail, sizeof tail, "%s%s%s, %s)", sg_node_type_name(x->type), what[0] ? " " : "",
             SG_RW_LABEL(what), SG_RW_STREAM(g, x->stream));
    size_t lw = strlen(what) + 1, lt = strlen(tail) + 1;
    if (sg_array_reserve((void **)&t->text, &t->cap, (uint32_t)(t->len + kn + 1 + lw + lt), 1) ||
        sg_array_reserve((void **)&t->name, &t->cap_name, t->n_name + 1, sizeof *t->name))
        return UINT32_MAX;
    char *e = t->text + t->len;
    memcpy(e, key, kn);
    e[kn] = '\0';
    memcpy(e + kn + 1, what, lw);
    memcpy(e + kn + 1 + lw, tail, lt);
    t->name[t->n_name] = (sg_rw_name_t){t->len, x->stream, (uint8_t)x->type};
    t->len += (uint32_t)(kn + 1 + lw + lt);
    t->slot[h] = ++t->n_name;
    return t->n_name - 1;
}

/* The raw what and the name's tail of an interned entry. */
static const char *names_what(const sg_rw_names_t *t, uint32_t i, const char **tail)
{
    const char *k = t->text + t->name[i].off;
    const char *what = k + strlen(k) + 1;
    *tail = what + strlen(what) + 1;
    return what;
}

int sg_rw_names_make(const sg_graph_t *g, const uint8_t *want, sg_rw_names_t *t,
                     void (*visit)(void *user, sg_node_id_t id, const sg_node_t *x), void *user)
{
    memset(t, 0, sizeof *t);
    t->at = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *t->at);
    int rc = t->at ? SG_OK : SG_ENOMEM;
    if (t->at) t->n_ids = g->n_nodes;
    for (uint32_t id = 0; id < g->n_nodes; id++) {
        if (t->at) t->at[id] = SG_RW_NAME_NONE;
        if (id + SG_PREFETCH_AHEAD < g->n_nodes && want[id + SG_PREFETCH_AHEAD])
            sg_prefetch_node(g, id + SG_PREFETCH_AHEAD, 160); /* names_key's fields */
        if (!want[id]) continue;
        const sg_node_t *x = g->nodes[id].removed ? NULL : &g->nodes[id];
        if (visit && x) visit(user, id, x);
        if (rc) continue;
        if (!x) {
            t->at[id] = SG_RW_NAME_GONE;
            continue;
        }
        char what[160] = "", key[512];
        bool have_what;
        size_t kn = names_key(g, x, what, sizeof what, key, sizeof key, &have_what);
        t->at[id] = names_intern(t, g, x, key, kn, what, sizeof what, have_what);
        if (t->at[id] == UINT32_MAX) {
            sg_rw_names_free(t);
            rc = SG_ENOMEM;
        }
    }
    return rc;
}

/* s appended to buf at *pos, cut as snprintf into n bytes cuts it. */
static void names_put(char *buf, size_t n, size_t *pos, const char *s)
{
    while (*s && *pos + 1 < n) buf[(*pos)++] = *s++;
}

const char *sg_rw_names_get(const sg_rw_names_t *t, const sg_graph_t *g, sg_node_id_t id,
                            char *buf, size_t n)
{
    uint32_t at = id < t->n_ids ? t->at[id] : SG_RW_NAME_NONE;
    if (at >= SG_RW_NAME_GONE || n == 0) return sg_rw_node_name(g, id, buf, n);
    const char *tail;
    names_what(t, at, &tail);
    /* "n%u (" and the tail, as format_name makes the name */
    char head[16];
    char *p = head + sizeof head;
    *--p = '\0';
    *--p = '(';
    *--p = ' ';
    uint32_t v = id;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    *--p = 'n';
    size_t pos = 0;
    names_put(buf, n, &pos, p);
    names_put(buf, n, &pos, tail);
    buf[pos] = '\0';
    return buf;
}

void sg_rw_names_jw(sg_jw_t *w, const sg_rw_names_t *t, const sg_graph_t *g, sg_node_id_t id)
{
    uint32_t at = id < t->n_ids ? t->at[id] : SG_RW_NAME_NONE;
    if (at == SG_RW_NAME_NONE) {
        sg_rw_node_jw(w, g, id);
        return;
    }
    sg_jw_object(w);
    sg_jw_kint(w, "id", id);
    if (at != SG_RW_NAME_GONE) {
        const sg_rw_name_t *e = &t->name[at];
        const char *tail, *what = names_what(t, at, &tail);
        sg_jw_kstring(w, "type", sg_node_type_name((sg_node_type_t)e->type));
        sg_jw_kstring(w, "stream", sg_rw_stream_label(g, e->stream));
        if (what[0]) sg_jw_kstring(w, "name", what);
    }
    sg_jw_end(w);
}

void sg_rw_names_free(sg_rw_names_t *t)
{
    free(t->at);
    free(t->name);
    free(t->text);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

json_t *sg_rw_node_json(const sg_graph_t *g, sg_node_id_t id)
{
    const sg_node_t *x = sg_graph_node(g, id);
    if (!x) return json_pack("{s:I}", "id", (json_int_t)id);
    char what[160];
    node_what(g, x, what, sizeof what);
    json_t *o = json_pack("{s:I, s:s, s:s}", "id", (json_int_t)id, "type",
                          sg_node_type_name(x->type), "stream", sg_rw_stream_label(g, x->stream));
    if (o && what[0]) json_object_set_new(o, "name", json_string(what));
    return o;
}

void sg_rw_node_jw(sg_jw_t *w, const sg_graph_t *g, sg_node_id_t id)
{
    const sg_node_t *x = sg_graph_node(g, id);
    sg_jw_object(w);
    sg_jw_kint(w, "id", id);
    if (x) {
        char what[160];
        node_what(g, x, what, sizeof what);
        sg_jw_kstring(w, "type", sg_node_type_name(x->type));
        sg_jw_kstring(w, "stream", sg_rw_stream_label(g, x->stream));
        if (what[0]) sg_jw_kstring(w, "name", what);
    }
    sg_jw_end(w);
}

/* ---- program order ---------------------------------------------------------- */

typedef struct {
    uint64_t seq;
    uint32_t rank;
    sg_node_id_t id;
} order_key_t;

/* Program order within one stream: by seq, ties by rank (then id). */
static int cmp_order_key(const void *pa, const void *pb)
{
    const order_key_t *a = pa, *b = pb;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Nodes are bucketed by stream in id order (a counting sort, stable), so
 * each stream's run is usually in program order already: capture numbers
 * nodes as it enqueues them. Only a run that is not (a pass moved a node
 * and gave it another node's sequence number) is sorted, with the same
 * total order. One pass over the node array; the rest works on compact
 * arrays by id. O(V) for a captured graph. */
int sg_rw_streams_build(const sg_graph_t *g, const sg_reach_t *r, sg_rw_streams_t *s)
{
    memset(s, 0, sizeof *s);
    s->n_streams = g->root->n_streams;
    s->n_ids = g->n_nodes;
    uint32_t ns = s->n_streams;
    size_t ids = g->n_nodes ? g->n_nodes : 1;
    s->start = calloc((size_t)ns + 1, sizeof *s->start);
    s->index = malloc(ids * sizeof *s->index);
    /* what the snapshot read of the nodes (borrowed, not copied), else one
     * pass over them */
    const uint8_t *ftype;
    const uint32_t *fstream;
    const uint64_t *fseq;
    bool facts = r && sg_reach_node_facts(r, g, &ftype, &fstream, &fseq);
    uint64_t *own_seq = facts ? NULL : malloc(ids * sizeof *own_seq);
    if (!facts) {
        s->own_type = malloc(ids);
        s->own_stream = malloc(ids * sizeof *s->own_stream);
    }
    uint32_t *fill = malloc((ns ? ns : 1) * sizeof *fill);
    if (!s->start || !s->index || (!facts && (!own_seq || !s->own_type || !s->own_stream)) ||
        !fill) {
        free(own_seq);
        free(fill);
        sg_rw_streams_free(s);
        return SG_ENOMEM;
    }
    if (facts) {
        s->type = ftype;
        s->stream = fstream;
    } else {
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node_t *x = &g->nodes[i];
            sg_prefetch_node(g, i + SG_PREFETCH_AHEAD, 48); /* the header */
            s->own_type[i] = x->removed ? SG_RW_REMOVED : (uint8_t)x->type;
            s->own_stream[i] = x->stream;
            own_seq[i] = x->seq;
        }
        s->type = s->own_type;
        s->stream = s->own_stream;
    }
    const uint64_t *seq = facts ? fseq : own_seq;
    uint64_t origin_seq = 0;
    s->origin = SG_NONE;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        s->index[i] = UINT32_MAX;
        if (s->type[i] == SG_RW_REMOVED || s->stream[i] >= ns) continue;
        s->start[s->stream[i] + 1]++;
        /* the first enqueued node, ties by id (ids ascend here) */
        if (s->origin == SG_NONE || seq[i] < origin_seq) {
            s->origin = s->stream[i];
            origin_seq = seq[i];
        }
    }
    for (uint32_t t = 0; t < ns; t++) s->start[t + 1] += s->start[t];
    uint32_t n = s->start[ns];
    s->nodes = malloc((n ? n : 1) * sizeof *s->nodes);
    if (!s->nodes) {
        free(own_seq);
        free(fill);
        sg_rw_streams_free(s);
        return SG_ENOMEM;
    }
    memcpy(fill, s->start, ns * sizeof *fill);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (s->type[i] != SG_RW_REMOVED && s->stream[i] < ns) s->nodes[fill[s->stream[i]]++] = i;
    free(fill);
    int rc = SG_OK;
    for (uint32_t t = 0; t < ns && rc == SG_OK; t++) {
        sg_node_id_t *run = s->nodes + s->start[t];
        uint32_t len = s->start[t + 1] - s->start[t];
        for (uint32_t i = 1; i < len; i++) {
            order_key_t a = {seq[run[i - 1]], sg_reach_rank(r, run[i - 1]), run[i - 1]};
            order_key_t b = {seq[run[i]], sg_reach_rank(r, run[i]), run[i]};
            if (cmp_order_key(&a, &b) <= 0) continue;
            order_key_t *keys = malloc(len * sizeof *keys);
            if (!keys) {
                rc = SG_ENOMEM;
                break;
            }
            for (uint32_t k = 0; k < len; k++)
                keys[k] = (order_key_t){seq[run[k]], sg_reach_rank(r, run[k]), run[k]};
            qsort(keys, len, sizeof *keys, cmp_order_key);
            for (uint32_t k = 0; k < len; k++)
                run[k] = keys[k].id;
            free(keys);
            break;
        }
    }
    free(own_seq);
    if (rc) {
        sg_rw_streams_free(s);
        return rc;
    }
    for (uint32_t t = 0; t < ns; t++)
        for (uint32_t i = s->start[t]; i < s->start[t + 1]; i++)
            s->index[s->nodes[i]] = i - s->start[t];
    return SG_OK;
}

void sg_rw_streams_free(sg_rw_streams_t *s)
{
    free(s->start);
    free(s->nodes);
    free(s->index);
    free(s->own_type);
    free(s->own_stream);
    memset(s, 0, sizeof *s);
}

sg_node_id_t sg_rw_stream_prev(const sg_rw_streams_t *s, sg_node_id_t v)
{
    if (v >= s->n_ids || s->index[v] == 0 || s->index[v] == UINT32_MAX) return SG_NONE;
    return s->nodes[s->start[s->stream[v]] + s->index[v] - 1];
}

sg_node_id_t sg_rw_stream_next(const sg_rw_streams_t *s, sg_node_id_t v)
{
    if (v >= s->n_ids || s->index[v] == UINT32_MAX) return SG_NONE;
    uint32_t i = s->start[s->stream[v]] + s->index[v] + 1;
    return i < s->start[s->stream[v] + 1] ? s->nodes[i] : SG_NONE;
}

uint32_t sg_rw_origin_stream(const sg_graph_t *g)
{
    uint32_t best = SG_NONE;
    uint64_t best_seq = 0;
    sg_node_id_t best_id = SG_NONE;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        sg_prefetch_node(g, i + SG_PREFETCH_AHEAD, 48); /* the header */
        if (x->removed || x->stream >= g->root->n_streams) continue;
        if (best == SG_NONE || x->seq < best_seq || (x->seq == best_seq && i < best_id)) {
            best = x->stream;
            best_seq = x->seq;
            best_id = i;
        }
    }
    return best;
}

/* ---- memory ------------------------------------------------------------------ */

bool sg_rw_access_range(const sg_graph_t *g, const sg_access_t *a, uint64_t *lo, uint64_t *hi)
{
    const sg_buffer_t *b = sg_graph_buffer(g, a->buffer);
    if (!b || a->size == 0) return false;
    if (b->address + a->offset < b->address) { /* the offset wraps: see rewrite_internal.h */
        *lo = b->address;
        *hi = UINT64_MAX;
        return true;
    }
    *lo = b->address + a->offset;
    *hi = sg_rw_end(*lo, a->size);
    return true;
}

bool sg_rw_buffers_overlap(const sg_graph_t *g, uint32_t a, uint32_t b)
{
    const sg_buffer_t *x = sg_graph_buffer(g, a), *y = sg_graph_buffer(g, b);
    if (!x || !y || x->size == 0 || y->size == 0) return false;
    return x->address < sg_rw_end(y->address, y->size) &&
           y->address < sg_rw_end(x->address, x->size);
}

uint32_t sg_rw_buffer_at(const sg_graph_t *g, uint32_t b, uint64_t addr, uint64_t seq)
{
    const sg_graph_t *root = g->root;
    if (b >= root->n_buffers || root->buffers[b].kind != SG_BUFFER_GRAPH_ALLOC) return b;
    uint32_t best = SG_NONE;
    uint64_t best_seq = 0;
    for (uint32_t c = 0; c < root->n_buffers; c++) {
        const sg_buffer_t *x = &root->buffers[c];
        const sg_node_t *a = sg_graph_node(root, x->alloc_node);
        if (x->kind != SG_BUFFER_GRAPH_ALLOC || !a || a->type != SG_NODE_MEM_ALLOC ||
            addr < x->address || addr - x->address >= x->size || a->seq >= seq)
            continue;
        if (best == SG_NONE || a->seq > best_seq) {
            best = c;
            best_seq = a->seq;
        }
    }
    return best == SG_NONE ? b : best;
}

static int cmp_alloc_ent(const void *a, const void *b)
{
    const sg_rw_alloc_ent_t *x = a, *y = b;
    if (x->address != y->address) return x->address < y->address ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int sg_rw_alloc_index_build(const sg_graph_t *g, sg_rw_alloc_index_t *ix)
{
    memset(ix, 0, sizeof *ix);
    const sg_graph_t *root = g->root;
    uint32_t nb = root->n_buffers;
    ix->e = malloc((nb ? nb : 1) * sizeof *ix->e);
    if (!ix->e) return SG_ENOMEM;
    for (uint32_t c = 0; c < nb; c++) {
        const sg_buffer_t *x = &root->buffers[c];
        const sg_node_t *a = sg_graph_node(root, x->alloc_node);
        if (x->kind != SG_BUFFER_GRAPH_ALLOC || !a || a->type != SG_NODE_MEM_ALLOC || !x->size)
            continue;
        ix->e[ix->n++] = (sg_rw_alloc_ent_t){x->address, x->size, a->seq, c};
        if (x->size > ix->max_size) ix->max_size = x->size;
    }
    qsort(ix->e, ix->n, sizeof *ix->e, cmp_alloc_ent);
    return SG_OK;
}

void sg_rw_alloc_index_free(sg_rw_alloc_index_t *ix)
{
    free(ix->e);
    memset(ix, 0, sizeof *ix);
}

uint32_t sg_rw_alloc_index_at(const sg_rw_alloc_index_t *ix, const sg_graph_t *g, uint32_t b,
                              uint64_t addr, uint64_t seq)
{
    const sg_graph_t *root = g->root;
    if (b >= root->n_buffers || root->buffers[b].kind != SG_BUFFER_GRAPH_ALLOC) return b;
    /* hi: the first entry that starts above addr */
    uint32_t lo = 0, hi = ix->n;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (ix->e[m].address <= addr) lo = m + 1;
        else hi = m;
    }
    uint32_t best = SG_NONE;
    uint64_t best_seq = 0;
    /* runs of one start address, from addr down, while one could reach it */
    while (hi > 0) {
        uint64_t start = ix->e[hi - 1].address;
        if (addr - start >= ix->max_size) break;
        /* run: the first entry of this start address (a pool address
         * reused m times has m entries: found by search, not a walk) */
        uint32_t run = 0, top = hi - 1;
        while (run < top) {
            uint32_t m = run + (top - run) / 2;
            if (ix->e[m].address < start)
                run = m + 1;
            else
                top = m;
        }
        /* in the run (by seq): the last enqueued before seq that holds addr */
        uint32_t l = run, h = hi;
        while (l < h) {
            uint32_t m = l + (h - l) / 2;
            if (ix->e[m].seq < seq) l = m + 1;
            else h = m;
        }
        for (uint32_t j = l; j > run; j--) {
            const sg_rw_alloc_ent_t *x = &ix->e[j - 1];
            if (addr - x->address < x->size) {
                if (best == SG_NONE || x->seq > best_seq) best = x->id, best_seq = x->seq;
                break;
            }
        }
        hi = run;
    }
    return best == SG_NONE ? b : best;
}

/* Graph allocations whose addresses another graph allocation shares: only
 * their accesses and frees need sg_rw_buffer_at. */
static int shared_allocations(const sg_graph_t *g, uint8_t *shared)
{
    uint32_t nb = g->root->n_buffers, n = 0;
    sg_rw_span_t *sp = malloc((nb ? nb : 1) * sizeof *sp);
    if (!sp) return SG_ENOMEM;
    for (uint32_t i = 0; i < nb; i++) {
        const sg_buffer_t *x = &g->root->buffers[i];
        if (x->kind != SG_BUFFER_GRAPH_ALLOC || x->size == 0) continue;
        sp[n++] = (sg_rw_span_t){x->address, sg_rw_end(x->address, x->size), i};
    }
    qsort(sp, n, sizeof *sp, sg_rw_cmp_span);
    uint64_t end = 0;
    uint32_t first = 0;
    for (uint32_t i = 0; i <= n; i++) {
        if (i == n || (i > 0 && sp[i].lo >= end)) {
            for (uint32_t j = first; i - first > 1 && j < i; j++) shared[sp[j].id] = 1;
            first = i;
        }
        if (i < n && (i == first || sp[i].hi > end)) end = sp[i].hi;
    }
    free(sp);
    return SG_OK;
}

/* The buffer access a of node x means (see sg_rw_buffer_at). */
static uint32_t meant(const sg_graph_t *g, const sg_rw_alloc_index_t *ix, const uint8_t *shared,
                      const sg_node_t *x, const sg_access_t *a)
{
    if (a->buffer >= g->root->n_buffers || !shared[a->buffer]) return a->buffer;
    const sg_buffer_t *b = &g->root->buffers[a->buffer];
    return sg_rw_alloc_index_at(ix, g, a->buffer, b->address + a->offset, x->seq);
}

static int buffers_build(const sg_graph_t *g, sg_rw_buffers_t *b, double *cost);

/* A mem_alloc or mem_free node i of type t, as both builders take it: the
 * buffer's allocation when it has none yet, or a free of the buffer it
 * means (collected as buffer << 32 | node, counted at free_start[b + 1]). */
static int take_memory_node(const sg_graph_t *g, sg_rw_buffers_t *b, const uint8_t *shared,
                            sg_node_id_t i, uint8_t t, uint64_t **frees, uint32_t *nf,
                            uint32_t *cap_f)
{
    uint32_t bf = g->nodes[i].u.mem.buffer;
    if (bf >= b->n_buffers) return SG_OK;
    if (t == SG_NODE_MEM_ALLOC) {
        if (b->alloc[bf] == SG_NONE) b->alloc[bf] = i;
        return SG_OK;
    }
    if (shared[bf]) bf = sg_rw_free_buffer(b, g, i);
    if (sg_array_reserve((void **)frees, cap_f, *nf + 1, sizeof **frees)) return SG_ENOMEM;
    (*frees)[(*nf)++] = (uint64_t)bf << 32 | i;
    b->free_start[bf + 1]++;
    return SG_OK;
}

int sg_rw_buffers_build(const sg_graph_t *g, sg_rw_buffers_t *b)
{
    return buffers_build(g, b, NULL);
}

int sg_rw_buffers_build_costs(const sg_graph_t *g, sg_rw_buffers_t *b, double *cost)
{
    return buffers_build(g, b, cost);
}

/* cost (may be NULL): each live node's sg_rw_node_cost_ns, by id, from the
 * same pass over the nodes */
static int buffers_build(const sg_graph_t *g, sg_rw_buffers_t *b, double *cost)
{
    memset(b, 0, sizeof *b);
    uint32_t nb = g->root->n_buffers;
    b->n_buffers = nb;
    b->user_start = calloc((size_t)nb + 1, sizeof *b->user_start);
    b->alloc = malloc((nb ? nb : 1) * sizeof *b->alloc);
    b->free_start = calloc((size_t)nb + 1, sizeof *b->free_start);
    b->acc_start = calloc((size_t)g->n_nodes + 1, sizeof *b->acc_start);
    uint32_t *last = calloc(nb ? nb : 1, sizeof *last); /* by buffer: last user + 1 */
    uint8_t *shared = calloc(nb ? nb : 1, 1);
    uint64_t *pairs = NULL, *frees = NULL; /* (buffer << 32 | node), in node order */
    uint32_t np = 0, cap_p = 0, nf = 0, cap_f = 0, na = 0, cap_a = 0;
    if (!b->user_start || !b->alloc || !b->free_start || !b->acc_start || !last || !shared ||
        shared_allocations(g, shared) || sg_rw_alloc_index_build(g, &b->aix))
        goto oom;
    /* room for an access and a use per live node from the start: doubling
     * from nothing copies as many bytes as the arrays end up with, and on a
     * large graph every copied line is a cache miss */
    uint32_t cap_g0 = 0;
    if (sg_array_reserve((void **)&b->acc_buffer, &cap_a, g->live_nodes, sizeof *b->acc_buffer) ||
        sg_array_reserve((void **)&b->acc_guess, &cap_g0, g->live_nodes, 1) ||
        sg_array_reserve((void **)&pairs, &cap_p, g->live_nodes, sizeof *pairs))
        goto oom;
    for (uint32_t i = 0; i < nb; i++) {
        sg_node_id_t a = g->root->buffers[i].alloc_node;
        const sg_node_t *an = sg_graph_node(g, a);
        b->alloc[i] = an && an->type == SG_NODE_MEM_ALLOC ? a : SG_NONE;
    }
    /* One pass over the nodes (on a large graph each pass over the node
     * array is a cache miss per node): users, allocations and frees, then
     * counting sorts by buffer of what was collected, so each buffer's
     * users and frees come out in id order, each user once. */
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        sg_prefetch_node(g, i + SG_PREFETCH_AHEAD, 160); /* to the kernel's geometry (cost) */
        b->acc_start[i] = na;
        if (x->removed) continue;
        if (cost) cost[i] = sg_rw_node_cost_ns(g, x);
        if (x->n_accesses) {
            uint32_t cap_g = cap_a;
            if (sg_array_reserve((void **)&b->acc_buffer, &cap_a, na + x->n_accesses,
                                 sizeof *b->acc_buffer) ||
                sg_array_reserve((void **)&b->acc_guess, &cap_g, na + x->n_accesses, 1))
                goto oom;
            for (uint32_t a = 0; a < x->n_accesses; a++) {
                b->acc_guess[na] = x->accesses[a].range == SG_RANGE_GUESS;
                b->acc_buffer[na++] = meant(g, &b->aix, shared, x, &x->accesses[a]);
            }
        }
        if (x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) {
            if (take_memory_node(g, b, shared, i, (uint8_t)x->type, &frees, &nf, &cap_f)) goto oom;
            continue;
        }
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            uint32_t bf = b->acc_buffer[b->acc_start[i] + a];
            if (bf >= nb || last[bf] == i + 1) continue; /* the same node twice: one user */
            last[bf] = i + 1;
            if (sg_array_reserve((void **)&pairs, &cap_p, np + 1, sizeof *pairs)) goto oom;
            pairs[np++] = (uint64_t)bf << 32 | i;
            b->user_start[bf + 1]++;
        }
    }
    b->acc_start[g->n_nodes] = na;
    for (uint32_t i = 0; i < nb; i++) {
        b->user_start[i + 1] += b->user_start[i];
        b->free_start[i + 1] += b->free_start[i];
    }
    b->users = malloc((np ? np : 1) * sizeof *b->users);
    b->frees = malloc((nf ? nf : 1) * sizeof *b->frees);
    if (!b->users || !b->frees) goto oom;
    /* last[] is the fill position from here on */
    memcpy(last, b->user_start, nb * sizeof *last);
    for (uint32_t k = 0; k < np; k++) b->users[last[pairs[k] >> 32]++] = (sg_node_id_t)pairs[k];
    memcpy(last, b->free_start, nb * sizeof *last);
    for (uint32_t k = 0; k < nf; k++) b->frees[last[frees[k] >> 32]++] = (sg_node_id_t)frees[k];
    free(pairs);
    free(frees);
    free(last);
    free(shared);
    return SG_OK;
oom:
    free(pairs);
    free(frees);
    free(last);
    free(shared);
    sg_rw_buffers_free(b);
    return SG_ENOMEM;
}

/* Could sg_rw_reuse_after ask for the users of a buffer? Only of one with no
 * mem_alloc (plain) that overlaps another, freed one: so only when some
 * cluster of transitively overlapping buffers (sg_rw_reuse_build's) holds a
 * freed buffer and a plain one other than it. b->free_start holds each
 * buffer's count of frees (at id + 1) here, not yet offsets. */
static int plain_users_asked(const sg_graph_t *g, const sg_rw_buffers_t *b, bool *asked)
{
    uint32_t nb = b->n_buffers;
    *asked = false;
    sg_rw_span_t *sp = malloc((nb ? nb : 1) * sizeof *sp);
    if (!sp) return SG_ENOMEM;
    for (uint32_t i = 0; i < nb; i++) {
        const sg_buffer_t *x = &g->root->buffers[i];
        sp[i] = (sg_rw_span_t){x->address, sg_rw_end(x->address, x->size), i};
    }
    qsort(sp, nb, sizeof *sp, sg_rw_cmp_span);
    uint64_t end = 0;
    uint32_t freed = 0, plain = 0, both = 0; /* in the current cluster */
    for (uint32_t i = 0; i <= nb && !*asked; i++) {
        if (i == nb || (i > 0 && sp[i].lo >= end)) {
            /* a cluster ends: a freed buffer and a plain one other than it */
            if (freed && plain && !(freed == 1 && plain == 1 && both == 1)) *asked = true;
            freed = plain = both = 0;
        }
        if (i == nb) break;
        if (i == 0 || sp[i].hi > end) end = sp[i].hi;
        uint32_t id = sp[i].id;
        bool f = b->free_start[id + 1] > 0,
             p = b->alloc[id] == SG_NONE; /* counts, not offsets yet */
        freed += f;
        plain += p;
        both += f && p;
    }
    free(sp);
    return SG_OK;
}

int sg_rw_buffers_build_memory(const sg_graph_t *g, const sg_rw_streams_t *st, sg_rw_buffers_t *b)
{
    if (!st || st->n_ids != g->n_nodes) return sg_rw_buffers_build(g, b);
    memset(b, 0, sizeof *b);
    uint32_t nb = g->root->n_buffers;
    b->n_buffers = nb;
    b->user_start = calloc((size_t)nb + 1, sizeof *b->user_start);
    b->users = malloc(sizeof *b->users);
    b->alloc = malloc((nb ? nb : 1) * sizeof *b->alloc);
    b->free_start = calloc((size_t)nb + 1, sizeof *b->free_start);
    uint8_t *shared = calloc(nb ? nb : 1, 1);
    uint64_t *frees = NULL; /* (buffer << 32 | node), in node order */
    uint32_t nf = 0, cap_f = 0;
    if (!b->user_start || !b->users || !b->alloc || !b->free_start || !shared ||
        shared_allocations(g, shared) || sg_rw_alloc_index_build(g, &b->aix))
        goto oom;
    for (uint32_t i = 0; i < nb; i++) {
        sg_node_id_t a = g->root->buffers[i].alloc_node;
        b->alloc[i] = sg_rw_type(st, a) == SG_NODE_MEM_ALLOC ? a : SG_NONE;
    }
    /* the memory nodes, in id order, as sg_rw_buffers_build takes them */
    for (uint32_t i = 0; i < st->n_ids; i++) {
        uint8_t t = st->type[i];
        if (t != SG_NODE_MEM_ALLOC && t != SG_NODE_MEM_FREE) continue;
        if (take_memory_node(g, b, shared, i, t, &frees, &nf, &cap_f)) goto oom;
    }
    free(shared);
    shared = NULL;
    bool asked;
    if (plain_users_asked(g, b, &asked)) goto oom;
    if (asked) {
        free(frees);
        sg_rw_buffers_free(b);
        return sg_rw_buffers_build(g, b);
    }
    for (uint32_t i = 0; i < nb; i++)
        b->free_start[i + 1] += b->free_start[i];
    b->frees = malloc((nf ? nf : 1) * sizeof *b->frees);
    uint32_t *fill = malloc((nb ? nb : 1) * sizeof *fill);
    if (!b->frees || !fill) {
        free(fill);
        goto oom;
    }
    memcpy(fill, b->free_start, nb * sizeof *fill);
    for (uint32_t k = 0; k < nf; k++)
        b->frees[fill[frees[k] >> 32]++] = (sg_node_id_t)frees[k];
    free(fill);
    free(frees);
    return SG_OK;
oom:
    free(frees);
    free(shared);
    sg_rw_buffers_free(b);
    return SG_ENOMEM;
}

uint32_t sg_rw_free_buffer(const sg_rw_buffers_t *b, const sg_graph_t *g, sg_node_id_t f)
{
    const sg_node_t *x = &g->nodes[f];
    uint32_t buf = x->u.mem.buffer;
    if (buf >= b->n_buffers || g->root->buffers[buf].kind != SG_BUFFER_GRAPH_ALLOC) return buf;
    /* the allocation live at its address when the free was enqueued */
    uint64_t addr = x->u.mem.address ? x->u.mem.address : g->root->buffers[buf].address;
    return sg_rw_alloc_index_at(&b->aix, g, buf, addr, x->seq);
}

uint32_t sg_rw_access_buffer(const sg_rw_buffers_t *b, sg_node_id_t x, uint32_t a)
{
    return b->acc_buffer[b->acc_start[x] + a];
}

void sg_rw_buffers_free(sg_rw_buffers_t *b)
{
    sg_rw_alloc_index_free(&b->aix);
    free(b->acc_start);
    free(b->acc_buffer);
    free(b->acc_guess);
    free(b->user_start);
    free(b->users);
    free(b->alloc);
    free(b->free_start);
    free(b->frees);
    memset(b, 0, sizeof *b);
}

/* ---- cost model ----------------------------------------------------------------- */

uint64_t sg_rw_node_bytes(const sg_graph_t *g, const sg_node_t *n)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n->n_accesses; i++) {
        const sg_access_t *a = &n->accesses[i];
        uint64_t times = a->mode == SG_ACCESS_READ || a->mode == SG_ACCESS_WRITE ? 1 : 2;
        uint64_t add = a->size * times;
        bytes = bytes + add < bytes ? UINT64_MAX : bytes + add;
    }
    if (n->n_accesses == 0 && n->type == SG_NODE_MEMCPY) {
        const sg_memcpy_t *c = &n->u.memcpy;
        uint64_t h = c->height ? c->height : 1, d = c->depth ? c->depth : 1;
        bytes = 2 * c->width * h * d;
    }
    if (n->n_accesses == 0 && n->type == SG_NODE_MEMSET) {
        const sg_memset_t *m = &n->u.memset;
        bytes = m->width * (m->height ? m->height : 1) * (m->element_size ? m->element_size : 1);
    }
    (void)g;
    return bytes;
}

double sg_rw_node_cost_ns(const sg_graph_t *g, const sg_node_t *n)
{
    if (n->duration_ns >= 0) return n->duration_ns;
    double bw = g->root->device.mem_bandwidth_gbs > 0 ? g->root->device.mem_bandwidth_gbs
                                                      : SG_COST_DEFAULT_BANDWIDTH_GBS;
    double data = (double)sg_rw_node_bytes(g, n) / bw; /* 1 GB/s = 1 byte/ns */
    switch (n->type) {
    case SG_NODE_KERNEL:
    case SG_NODE_MEMCPY:
    case SG_NODE_MEMSET:
    case SG_NODE_CHILD_GRAPH:
    case SG_NODE_CONDITIONAL:
    case SG_NODE_OPAQUE:
        return SG_COST_LAUNCH_NS + data;
    case SG_NODE_HOST:
        return SG_COST_HOST_NS;
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        return SG_COST_EVENT_NS;
    case SG_NODE_EMPTY:
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE:
    default:
        return 0.0;
    }
}

int sg_rw_timeline(const sg_graph_t *g, const sg_reach_t *r, double **start, double **finish)
{
    double *cost = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *cost);
    if (!cost) return SG_ENOMEM;
    /* costs in id order (one pass over the nodes) */
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        sg_prefetch_node(g, v + SG_PREFETCH_AHEAD, 160); /* up to the kernel's geometry */
        if (!g->nodes[v].removed) cost[v] = sg_rw_node_cost_ns(g, &g->nodes[v]);
    }
    return sg_rw_timeline_from(g, r, cost, start, finish);
}

int sg_rw_timeline_from(const sg_graph_t *g, const sg_reach_t *r, double *cost, double **start,
                        double **finish)
{
    size_t ids = g->n_nodes ? g->n_nodes : 1;
    uint32_t n;
    const sg_node_id_t *order = sg_reach_order(r, &n);
    double *s = calloc(ids, sizeof *s), *f = cost;
    double *fr = malloc((n ? n : 1) * sizeof *fr); /* finish by rank */
    if (!s || !f || !fr) {
        free(s);
        free(f);
        free(fr);
        return SG_ENOMEM;
    }
    /* the schedule over the snapshot's adjacency by rank */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t np;
        const uint32_t *in = sg_reach_in_ranks(r, i, &np);
        double t = 0;
        for (uint32_t k = 0; k < np; k++)
            if (fr[in[k]] > t) t = fr[in[k]];
        sg_node_id_t v = order[i];
        s[v] = t;
        f[v] = fr[i] = t + f[v];
    }
    free(fr);
    *start = s;
    *finish = f;
    return SG_OK;
}

/* ---- small shared containers --------------------------------------------------------- */

int sg_rw_pairs_push(sg_rw_pairs_t *ps, sg_node_id_t a, sg_node_id_t b)
{
    if (ps->n == ps->cap) {
        size_t nc = ps->cap ? ps->cap * 2 : 256;
        void *q = realloc(ps->p, nc * sizeof *ps->p);
        if (!q) return SG_ENOMEM;
        ps->p = q;
        ps->cap = nc;
    }
    ps->p[ps->n][0] = a;
    ps->p[ps->n][1] = b;
    ps->n++;
    return SG_OK;
}

int sg_rw_cmp_span(const void *pa, const void *pb)
{
    const sg_rw_span_t *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* ---- overlapping buffers and minimal elements -------------------------------------- */


typedef struct {
    uint32_t rank;
    sg_node_id_t id;
} ranked_t;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked_t *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

uint32_t sg_rw_minimal(sg_reach_t *r, const sg_node_id_t *ids, uint32_t n, sg_node_id_t *out)
{
    ranked_t *rk = malloc((n ? n : 1) * sizeof *rk);
    if (!rk) return 0;
    for (uint32_t i = 0; i < n; i++) rk[i] = (ranked_t){sg_reach_rank(r, ids[i]), ids[i]};
    qsort(rk, n, sizeof *rk, cmp_ranked);
    /* Only an earlier-ranked node can reach a later one, and whatever
     * reaches a node is reached from some minimal element: comparing with
     * the minima found so far is enough. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && rk[i].id == rk[i - 1].id) continue;
        bool dominated = false;
        for (uint32_t k = 0; k < m && !dominated; k++) dominated = sg_reach_query(r, out[k], rk[i].id);
        if (!dominated) out[m++] = rk[i].id;
    }
    free(rk);
    return m;
}

/* ---- reuse of freed memory ------------------------------------------------------ */

typedef struct {
    uint32_t cluster, chain, pos;
    sg_node_id_t id;
} keyed_t;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed_t *a = pa, *b = pb;
    if (a->cluster != b->cluster) return a->cluster < b->cluster ? -1 : 1;
    if (a->chain != b->chain) return a->chain < b->chain ? -1 : 1;
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

void sg_rw_reuse_free(sg_rw_reuse_t *ru)
{
    free(ru->cluster);
    free(ru->start);
    free(ru->allocs);
    free(ru->alloc_buf);
    free(ru->alloc_pos);
    free(ru->rstart);
    free(ru->runs);
    free(ru->pstart);
    free(ru->plain);
    memset(ru, 0, sizeof *ru);
}

int sg_rw_reuse_build(const sg_graph_t *g, sg_reach_t *r, const sg_rw_buffers_t *bufs,
                      sg_rw_reuse_t *ru)
{
    memset(ru, 0, sizeof *ru);
    /* the queries (sg_rw_reuse_after) read the forward clocks */
    int frc = sg_reach_forward(r);
    if (frc) return frc;
    uint32_t nb = g->root->n_buffers, n = 0;
    ru->n_buffers = nb;
    sg_rw_span_t *sp = malloc((nb ? nb : 1) * sizeof *sp);
    ru->cluster = malloc((nb ? nb : 1) * sizeof *ru->cluster);
    keyed_t *k = malloc((nb ? nb : 1) * sizeof *k);
    if (!sp || !ru->cluster || !k) goto oom;
    for (uint32_t i = 0; i < nb; i++) {
        const sg_buffer_t *b = &g->root->buffers[i];
        sp[n++] = (sg_rw_span_t){b->address, sg_rw_end(b->address, b->size), i};
    }
    qsort(sp, n, sizeof *sp, sg_rw_cmp_span);
    uint64_t end = 0;
    uint32_t nc = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0 || sp[i].lo >= end) nc++;
        if (i == 0 || sp[i].hi > end) end = sp[i].hi;
        ru->cluster[sp[i].id] = nc - 1;
    }
    ru->n_clusters = nc;
    ru->start = calloc((size_t)nc + 1, sizeof *ru->start);
    ru->pstart = calloc((size_t)nc + 1, sizeof *ru->pstart);
    if (!ru->start || !ru->pstart) goto oom;
    uint32_t na = 0, np = 0;
    for (uint32_t b = 0; b < nb; b++) {
        sg_node_id_t a = bufs->alloc[b];
        if (a != SG_NONE) {
            k[na++] = (keyed_t){ru->cluster[b], sg_reach_chain_of(r, a), sg_reach_pos(r, a), a};
            ru->start[ru->cluster[b] + 1]++;
        } else {
            ru->pstart[ru->cluster[b] + 1]++;
            np++;
        }
    }
    qsort(k, na, sizeof *k, cmp_keyed);
    ru->allocs = malloc((na ? na : 1) * sizeof *ru->allocs);
    ru->alloc_buf = malloc((na ? na : 1) * sizeof *ru->alloc_buf);
    ru->alloc_pos = malloc((na ? na : 1) * sizeof *ru->alloc_pos);
    ru->plain = malloc((np ? np : 1) * sizeof *ru->plain);
    if (!ru->allocs || !ru->alloc_buf || !ru->alloc_pos || !ru->plain) goto oom;
    for (uint32_t i = 0; i < na; i++) {
        ru->allocs[i] = k[i].id;
        ru->alloc_buf[i] = g->nodes[k[i].id].u.mem.buffer;
        ru->alloc_pos[i] = k[i].pos;
    }
    for (uint32_t c = 0; c < nc; c++) {
        ru->start[c + 1] += ru->start[c];
        ru->pstart[c + 1] += ru->pstart[c];
    }
    /* runs of one chain within each cluster (k is sorted by cluster, chain) */
    uint32_t n_runs = 0;
    for (uint32_t i = 0; i < na; i++)
        if (i == 0 || k[i].cluster != k[i - 1].cluster || k[i].chain != k[i - 1].chain) n_runs++;
    ru->runs = malloc((n_runs ? n_runs : 1) * sizeof *ru->runs);
    ru->rstart = calloc((size_t)nc + 1, sizeof *ru->rstart);
    if (!ru->runs || !ru->rstart) goto oom;
    n_runs = 0;
    for (uint32_t i = 0; i < na; i++) {
        if (i == 0 || k[i].cluster != k[i - 1].cluster || k[i].chain != k[i - 1].chain) {
            ru->runs[n_runs++] = (sg_rw_reuse_run_t){k[i].chain, i, i};
            ru->rstart[k[i].cluster + 1]++;
        }
        ru->runs[n_runs - 1].end = i + 1;
    }
    for (uint32_t c = 0; c < nc; c++) ru->rstart[c + 1] += ru->rstart[c];
    uint32_t *fill = calloc(nc ? nc : 1, sizeof *fill);
    if (!fill) goto oom;
    for (uint32_t b = 0; b < nb; b++)
        if (bufs->alloc[b] == SG_NONE) ru->plain[ru->pstart[ru->cluster[b]] + fill[ru->cluster[b]]++] = b;
    free(fill);
    free(sp);
    free(k);
    return SG_OK;
oom:
    free(sp);
    free(k);
    sg_rw_reuse_free(ru);
    return SG_ENOMEM;
}

bool sg_rw_reuses(const sg_graph_t *g, sg_node_id_t y, uint32_t b)
{
    const sg_node_t *n = sg_graph_node(g, y);
    if (!n) return false;
    if (n->type == SG_NODE_MEM_ALLOC)
        return n->u.mem.buffer != b && sg_rw_buffers_overlap(g, n->u.mem.buffer, b);
    for (uint32_t i = 0; i < n->n_accesses; i++)
        if (n->accesses[i].buffer != b && sg_rw_buffers_overlap(g, n->accesses[i].buffer, b))
            return true;
    return false;
}

int sg_rw_reuse_after(const sg_rw_reuse_t *ru, sg_reach_t *r, const sg_graph_t *g,
                      const sg_rw_buffers_t *bufs, sg_node_id_t f, uint32_t b, sg_node_id_t **out,
                      uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (b >= ru->n_buffers) return SG_OK;
    uint32_t cl = ru->cluster[b];
    uint32_t a0 = ru->start[cl], a1 = ru->start[cl + 1];
    uint32_t extra = 0;
    for (uint32_t i = ru->pstart[cl]; i < ru->pstart[cl + 1]; i++) {
        uint32_t ob = ru->plain[i];
        if (ob != b && sg_rw_buffers_overlap(g, ob, b))
            extra += bufs->user_start[ob + 1] - bufs->user_start[ob];
    }
    bool clocks = sg_reach_all_loaded(r, true);
    /* with the clocks, at most one candidate per run (chain) */
    size_t cap = (size_t)(clocks ? ru->rstart[cl + 1] - ru->rstart[cl] : a1 - a0) + extra;
    if (cap == 0) return SG_OK;
    sg_node_id_t *cand = malloc(cap * sizeof *cand);
    if (!cand) return SG_ENOMEM;
    uint32_t nc = 0;
    for (uint32_t ri = ru->rstart[cl]; ri < ru->rstart[cl + 1]; ri++) {
        uint32_t c = ru->runs[ri].chain, i = ru->runs[ri].first, j = ru->runs[ri].end;
        if (clocks) {
            /* on chain c every position from the first one f reaches on is
             * reachable: the first allocation there that overlaps b is the
             * only candidate of this chain */
            int32_t p = sg_reach_first_reached(r, f, c);
            uint32_t lo = i, hi = j;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if ((int64_t)ru->alloc_pos[mid] >= p)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            for (; p != INT32_MAX && lo < j; lo++) {
                uint32_t ob = ru->alloc_buf[lo];
                if (ob != b && sg_rw_buffers_overlap(g, ob, b)) {
                    cand[nc++] = ru->allocs[lo];
                    break;
                }
            }
        } else {
            for (uint32_t k = i; k < j; k++) {
                uint32_t ob = ru->alloc_buf[k];
                if (ob != b && sg_rw_buffers_overlap(g, ob, b) && sg_reach_query(r, f, ru->allocs[k]))
                    cand[nc++] = ru->allocs[k];
            }
        }
    }
    for (uint32_t i = ru->pstart[cl]; i < ru->pstart[cl + 1]; i++) {
        uint32_t ob = ru->plain[i];
        if (ob == b || !sg_rw_buffers_overlap(g, ob, b)) continue;
        for (uint32_t k = bufs->user_start[ob]; k < bufs->user_start[ob + 1]; k++)
            if (bufs->users[k] != f && sg_reach_query(r, f, bufs->users[k])) cand[nc++] = bufs->users[k];
    }
    sg_node_id_t *mins = malloc((nc ? nc : 1) * sizeof *mins);
    if (!mins) {
        free(cand);
        return SG_ENOMEM;
    }
    *n = sg_rw_minimal(r, cand, nc, mins);
    *out = mins;
    free(cand);
    return SG_OK;
}
