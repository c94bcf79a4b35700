/* common.c: helpers the passes and the check share: node names for
 * reports, per-stream program order, per-buffer users and memory nodes, and
 * the cost model with its ASAP timeline (see rewrite_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/views.h"
#include "rewrite_internal.h"

/* ---- names ---------------------------------------------------------------- */

const char *sg_rw_stream_name(const sg_graph_t *g, uint32_t stream)
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
            sg_kernel_short_name(n->u.kernel.name, buf, len);
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

const char *sg_rw_node_name(const sg_graph_t *g, sg_node_id_t id, char *buf, size_t n)
{
    const sg_node_t *x = sg_graph_node(g, id);
    if (!x) {
        snprintf(buf, n, "n%u (removed)", id);
        return buf;
    }
    char what[160];
    node_what(g, x, what, sizeof what);
    snprintf(buf, n, "n%u (%s%s%s, %s)", id, sg_node_type_name(x->type), what[0] ? " " : "", what,
             sg_rw_stream_name(g, x->stream));
    return buf;
}

json_t *sg_rw_node_json(const sg_graph_t *g, sg_node_id_t id)
{
    const sg_node_t *x = sg_graph_node(g, id);
    if (!x) return json_pack("{s:I}", "id", (json_int_t)id);
    char what[160];
    node_what(g, x, what, sizeof what);
    json_t *o = json_pack("{s:I, s:s, s:s}", "id", (json_int_t)id, "type",
                          sg_node_type_name(x->type), "stream", sg_rw_stream_name(g, x->stream));
    if (o && what[0]) json_object_set_new(o, "name", json_string(what));
    return o;
}

/* ---- program order ---------------------------------------------------------- */

typedef struct {
    uint32_t stream;
    uint32_t rank;
    uint64_t seq;
    sg_node_id_t id;
} order_key_t;

static int cmp_order_key(const void *pa, const void *pb)
{
    const order_key_t *a = pa, *b = pb;
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

int sg_rw_streams_build(const sg_graph_t *g, const sg_reach_t *r, sg_rw_streams_t *s)
{
    memset(s, 0, sizeof *s);
    s->n_streams = g->root->n_streams;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed && g->nodes[i].stream < s->n_streams) n++;
    order_key_t *keys = malloc((n ? n : 1) * sizeof *keys);
    s->start = calloc(s->n_streams + 1, sizeof *s->start);
    s->nodes = malloc((n ? n : 1) * sizeof *s->nodes);
    s->index = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *s->index);
    if (!keys || !s->start || !s->nodes || !s->index) {
        free(keys);
        sg_rw_streams_free(s);
        return SG_ENOMEM;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        s->index[i] = UINT32_MAX;
        const sg_node_t *x = &g->nodes[i];
        if (x->removed || x->stream >= s->n_streams) continue;
        keys[k++] = (order_key_t){x->stream, sg_reach_rank(r, i), x->seq, i};
    }
    qsort(keys, n, sizeof *keys, cmp_order_key);
    for (uint32_t i = 0; i < n; i++) {
        s->nodes[i] = keys[i].id;
        s->start[keys[i].stream + 1]++;
    }
    for (uint32_t t = 0; t < s->n_streams; t++) s->start[t + 1] += s->start[t];
    for (uint32_t i = 0; i < n; i++) s->index[keys[i].id] = i - s->start[keys[i].stream];
    free(keys);
    return SG_OK;
}

void sg_rw_streams_free(sg_rw_streams_t *s)
{
    free(s->start);
    free(s->nodes);
    free(s->index);
    memset(s, 0, sizeof *s);
}

sg_node_id_t sg_rw_stream_prev(const sg_graph_t *g, const sg_rw_streams_t *s, sg_node_id_t v)
{
    const sg_node_t *x = sg_graph_node(g, v);
    if (!x || x->stream >= s->n_streams || s->index[v] == 0 || s->index[v] == UINT32_MAX)
        return SG_NONE;
    return s->nodes[s->start[x->stream] + s->index[v] - 1];
}

sg_node_id_t sg_rw_stream_next(const sg_graph_t *g, const sg_rw_streams_t *s, sg_node_id_t v)
{
    const sg_node_t *x = sg_graph_node(g, v);
    if (!x || x->stream >= s->n_streams || s->index[v] == UINT32_MAX) return SG_NONE;
    uint32_t i = s->start[x->stream] + s->index[v] + 1;
    return i < s->start[x->stream + 1] ? s->nodes[i] : SG_NONE;
}

uint32_t sg_rw_origin_stream(const sg_graph_t *g)
{
    uint32_t best = SG_NONE;
    uint64_t best_seq = 0;
    sg_node_id_t best_id = SG_NONE;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
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
    uint64_t start = b->address + a->offset;
    if (start < b->address) return false; /* wrapped */
    uint64_t end = start + a->size;
    if (end < start) end = UINT64_MAX;
    *lo = start;
    *hi = end;
    return true;
}

bool sg_rw_buffers_overlap(const sg_graph_t *g, uint32_t a, uint32_t b)
{
    const sg_buffer_t *x = sg_graph_buffer(g, a), *y = sg_graph_buffer(g, b);
    if (!x || !y || x->size == 0 || y->size == 0) return false;
    uint64_t xe = x->address + x->size, ye = y->address + y->size;
    if (xe < x->address) xe = UINT64_MAX;
    if (ye < y->address) ye = UINT64_MAX;
    return x->address < ye && y->address < xe;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
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
        uint64_t hi = x->address + x->size;
        sp[n++] = (sg_rw_span_t){x->address, hi < x->address ? UINT64_MAX : hi, i};
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
static uint32_t meant(const sg_graph_t *g, const uint8_t *shared, const sg_node_t *x,
                      const sg_access_t *a)
{
    if (a->buffer >= g->root->n_buffers || !shared[a->buffer]) return a->buffer;
    const sg_buffer_t *b = &g->root->buffers[a->buffer];
    return sg_rw_buffer_at(g, a->buffer, b->address + a->offset, x->seq);
}

int sg_rw_buffers_build(const sg_graph_t *g, sg_rw_buffers_t *b)
{
    memset(b, 0, sizeof *b);
    uint32_t nb = g->root->n_buffers;
    b->n_buffers = nb;
    uint64_t n_acc = 0, n_free = 0, n_all = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed) continue;
        n_all += x->n_accesses;
        if (x->type == SG_NODE_MEM_FREE && x->u.mem.buffer < nb) n_free++;
        if (x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) continue;
        n_acc += x->n_accesses;
    }
    /* (buffer << 32 | node) keys, sorted and made unique */
    uint64_t *keys = malloc((n_acc ? n_acc : 1) * sizeof *keys);
    uint8_t *shared = calloc(nb ? nb : 1, 1);
    b->user_start = calloc(nb + 1, sizeof *b->user_start);
    b->alloc = malloc((nb ? nb : 1) * sizeof *b->alloc);
    b->free_start = calloc(nb + 1, sizeof *b->free_start);
    b->frees = malloc((n_free ? n_free : 1) * sizeof *b->frees);
    b->acc_start = calloc((size_t)g->n_nodes + 1, sizeof *b->acc_start);
    b->acc_buffer = malloc((n_all ? n_all : 1) * sizeof *b->acc_buffer);
    if (!keys || !shared || !b->user_start || !b->alloc || !b->free_start || !b->frees ||
        !b->acc_start || !b->acc_buffer || shared_allocations(g, shared)) {
        free(keys);
        free(shared);
        sg_rw_buffers_free(b);
        return SG_ENOMEM;
    }
    uint64_t k = 0, at = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        b->acc_start[i] = (uint32_t)at;
        if (x->removed) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            uint32_t m = meant(g, shared, x, &x->accesses[a]);
            b->acc_buffer[at++] = m;
            if (x->type != SG_NODE_MEM_ALLOC && x->type != SG_NODE_MEM_FREE && m < nb)
                keys[k++] = (uint64_t)m << 32 | i;
        }
    }
    b->acc_start[g->n_nodes] = (uint32_t)at;
    qsort(keys, k, sizeof *keys, cmp_u64);
    uint64_t u = 0;
    for (uint64_t i = 0; i < k; i++)
        if (i == 0 || keys[i] != keys[i - 1]) keys[u++] = keys[i];
    b->users = malloc((u ? u : 1) * sizeof *b->users);
    if (!b->users) {
        free(keys);
        sg_rw_buffers_free(b);
        return SG_ENOMEM;
    }
    for (uint64_t i = 0; i < u; i++) {
        b->users[i] = (sg_node_id_t)(keys[i] & 0xffffffffu);
        b->user_start[(keys[i] >> 32) + 1]++;
    }
    free(keys);
    for (uint32_t i = 0; i < nb; i++) b->user_start[i + 1] += b->user_start[i];
    for (uint32_t i = 0; i < nb; i++) {
        sg_node_id_t a = g->root->buffers[i].alloc_node;
        const sg_node_t *an = sg_graph_node(g, a);
        b->alloc[i] = an && an->type == SG_NODE_MEM_ALLOC ? a : SG_NONE;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed || (x->type != SG_NODE_MEM_ALLOC && x->type != SG_NODE_MEM_FREE) ||
            x->u.mem.buffer >= nb)
            continue;
        if (x->type == SG_NODE_MEM_ALLOC && b->alloc[x->u.mem.buffer] == SG_NONE)
            b->alloc[x->u.mem.buffer] = i;
        if (x->type == SG_NODE_MEM_FREE) b->free_start[sg_rw_free_buffer(b, g, i) + 1]++;
    }
    for (uint32_t i = 0; i < nb; i++) b->free_start[i + 1] += b->free_start[i];
    uint32_t *fill = calloc(nb ? nb : 1, sizeof *fill);
    if (!fill) {
        free(shared);
        sg_rw_buffers_free(b);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed || x->type != SG_NODE_MEM_FREE || x->u.mem.buffer >= nb) continue;
        uint32_t bf = sg_rw_free_buffer(b, g, i);
        b->frees[b->free_start[bf] + fill[bf]++] = i;
    }
    free(fill);
    free(shared);
    return SG_OK;
}

uint32_t sg_rw_free_buffer(const sg_rw_buffers_t *b, const sg_graph_t *g, sg_node_id_t f)
{
    const sg_node_t *x = &g->nodes[f];
    uint32_t buf = x->u.mem.buffer;
    if (buf >= b->n_buffers || g->root->buffers[buf].kind != SG_BUFFER_GRAPH_ALLOC) return buf;
    /* the allocation live at its address when the free was enqueued */
    uint64_t addr = x->u.mem.address ? x->u.mem.address : g->root->buffers[buf].address;
    return sg_rw_buffer_at(g, buf, addr, x->seq);
}

uint32_t sg_rw_access_buffer(const sg_rw_buffers_t *b, sg_node_id_t x, uint32_t a)
{
    return b->acc_buffer[b->acc_start[x] + a];
}

void sg_rw_buffers_free(sg_rw_buffers_t *b)
{
    free(b->acc_start);
    free(b->acc_buffer);
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
    size_t ids = g->n_nodes ? g->n_nodes : 1;
    double *s = calloc(ids, sizeof *s), *f = calloc(ids, sizeof *f);
    if (!s || !f) {
        free(s);
        free(f);
        return SG_ENOMEM;
    }
    uint32_t n;
    const sg_node_id_t *order = sg_reach_order(r, &n);
    for (uint32_t i = 0; i < n; i++) {
        sg_node_id_t v = order[i];
        const sg_node_t *x = &g->nodes[v];
        double t = 0;
        for (uint32_t k = 0; k < x->n_in; k++) {
            double p = f[g->edges[x->in[k]].from];
            if (p > t) t = p;
        }
        s[v] = t;
        f[v] = t + sg_rw_node_cost_ns(g, x);
    }
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
    free(ru->pstart);
    free(ru->plain);
    memset(ru, 0, sizeof *ru);
}

int sg_rw_reuse_build(const sg_graph_t *g, sg_reach_t *r, const sg_rw_buffers_t *bufs,
                      sg_rw_reuse_t *ru)
{
    memset(ru, 0, sizeof *ru);
    uint32_t nb = g->root->n_buffers, n = 0;
    ru->n_buffers = nb;
    sg_rw_span_t *sp = malloc((nb ? nb : 1) * sizeof *sp);
    ru->cluster = malloc((nb ? nb : 1) * sizeof *ru->cluster);
    keyed_t *k = malloc((nb ? nb : 1) * sizeof *k);
    if (!sp || !ru->cluster || !k) goto oom;
    for (uint32_t i = 0; i < nb; i++) {
        const sg_buffer_t *b = &g->root->buffers[i];
        uint64_t hi = b->address + b->size;
        sp[n++] = (sg_rw_span_t){b->address, hi < b->address ? UINT64_MAX : hi, i};
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
    ru->plain = malloc((np ? np : 1) * sizeof *ru->plain);
    if (!ru->allocs || !ru->plain) goto oom;
    for (uint32_t i = 0; i < na; i++) ru->allocs[i] = k[i].id;
    for (uint32_t c = 0; c < nc; c++) {
        ru->start[c + 1] += ru->start[c];
        ru->pstart[c + 1] += ru->pstart[c];
    }
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
    size_t cap = (size_t)(a1 - a0) + extra;
    if (cap == 0) return SG_OK;
    sg_node_id_t *cand = malloc(cap * sizeof *cand);
    if (!cand) return SG_ENOMEM;
    uint32_t nc = 0;
    bool clocks = sg_reach_all_loaded(r, true);
    for (uint32_t i = a0; i < a1;) {
        uint32_t c = sg_reach_chain_of(r, ru->allocs[i]), j = i;
        while (j < a1 && sg_reach_chain_of(r, ru->allocs[j]) == c) j++;
        if (clocks) {
            /* on chain c every position from the first one f reaches on is
             * reachable: the first allocation there that overlaps b is the
             * only candidate of this chain */
            int32_t p = sg_reach_first_reached(r, f, c);
            uint32_t lo = i, hi = j;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if ((int64_t)sg_reach_pos(r, ru->allocs[mid]) >= p)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            for (; p != INT32_MAX && lo < j; lo++) {
                uint32_t ob = g->nodes[ru->allocs[lo]].u.mem.buffer;
                if (ob != b && sg_rw_buffers_overlap(g, ob, b)) {
                    cand[nc++] = ru->allocs[lo];
                    break;
                }
            }
        } else {
            for (uint32_t k = i; k < j; k++) {
                uint32_t ob = g->nodes[ru->allocs[k]].u.mem.buffer;
                if (ob != b && sg_rw_buffers_overlap(g, ob, b) && sg_reach_query(r, f, ru->allocs[k]))
                    cand[nc++] = ru->allocs[k];
            }
        }
        i = j;
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
