/* pass.c: the pass manager: registry, reports, the pass log, and the
 * verifier that checks after every pass that no ordering of its input was
 * lost (see pass.h for the guarantee and its one declared exception). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"
#include "graph/plural.h"

/* ---- registry --------------------------------------------------------------- */

typedef struct {
    const char *name;
    const char *summary;
    bool is_default;
    int (*run)(sg_pass_ctx_t *ctx);
} pass_def_t;

static const pass_def_t passes[] = {
#if !SGCAP_IN_APP
    /* Offline only: it disassembles with nvdisasm (a child process) and
     * may recompile NVRTC source. */
    {"access",
     "what each kernel reads and writes, from its code (PTX, else SASS via nvdisasm): exact "
     "accesses and the facts behind them",
     true, sg_pass_access},
#endif
    {"control-deps", "make orderings implied by capture explicit as control edges", true,
     sg_pass_control_deps},
    {"fusion-legality", "analysis: maximal same-stream kernel chains and the barrier ending each",
     true, sg_pass_fusion_legality},
    {"defer-dealloc",
     "frees of memory last used on another stream: dealloc edges by reachability, placed where "
     "the use is expected to be done",
     true, sg_pass_defer_dealloc},
    /* In libsgcap.so too: the optimizer gives it the images capture holds
     * (sg_rewrite_options_t.kernel_ptx) and NVRTC comes from code/nvlib.c
     * with the real dlsym (optimize/pipeline.c). */
    {"fuse",
     "same-stream kernel chains into one NVRTC-built kernel: pointwise stages lifted into "
     "registers, frees between them sunk below it",
     true, sg_pass_fuse},
    {"reduce", "remove edges implied by other paths (keeps event and dealloc edges)", false,
     sg_pass_reduce},
};
#define N_PASSES (sizeof passes / sizeof passes[0])

size_t sg_rewrite_pass_count(void)
{
    return N_PASSES;
}

const char *sg_rewrite_pass_name(size_t i)
{
    return i < N_PASSES ? passes[i].name : NULL;
}

const char *sg_rewrite_pass_summary(size_t i)
{
    return i < N_PASSES ? passes[i].summary : NULL;
}

bool sg_rewrite_pass_is_default(size_t i)
{
    return i < N_PASSES && passes[i].is_default;
}

int sg_rewrite_pass_find(const char *name)
{
    for (size_t i = 0; name && i < N_PASSES; i++)
        if (strcmp(passes[i].name, name) == 0) return (int)i;
    return -1;
}

void sg_rewrite_options_init(sg_rewrite_options_t *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->verify = true;
}

void sg_rewrite_files_free(sg_rewrite_files_t *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) free(f->files[i].data);
    free(f->files);
    memset(f, 0, sizeof *f);
}

/* ---- reports ------------------------------------------------------------------- */

/* The JSON of each pass is kept as text (json_writer.h: a 100k-node
 * report is far cheaper to write than to build as a tree); the jansson
 * tree of sg_report_json is made from it on demand. */
typedef struct {
    char *json; /* the pass's object, written at depth PASS_DEPTH */
    size_t len;
    char *name, *summary;
} pass_rec_t;

struct sg_report {
    char *text;
    size_t len, cap;
    pass_rec_t *pass;
    size_t n_pass, cap_pass;
    json_t *root;     /* parsed on demand; holds the first n_parsed passes */
    size_t n_parsed;
};

enum { PASS_DEPTH = 2 }; /* {"passes": [ {pass} ]} */

sg_report_t *sg_report_create(void)
{
    sg_report_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->text = calloc(1, 1);
    if (!r->text) {
        sg_report_destroy(r);
        return NULL;
    }
    r->cap = 1;
    return r;
}

void sg_report_destroy(sg_report_t *r)
{
    if (!r) return;
    free(r->text);
    for (size_t i = 0; i < r->n_pass; i++) {
        free(r->pass[i].json);
        free(r->pass[i].name);
        free(r->pass[i].summary);
    }
    free(r->pass);
    json_decref(r->root);
    free(r);
}

const char *sg_report_text(const sg_report_t *r)
{
    return r && r->text ? r->text : "";
}

json_t *sg_report_json(const sg_report_t *cr)
{
    sg_report_t *r = (sg_report_t *)cr; /* the tree is a cache */
    if (!r) return NULL;
    if (!r->root) {
        r->root = json_pack("{s:s, s:i, s:[]}", "schema", SG_REPORT_SCHEMA, "schema_version",
                            SG_REPORT_SCHEMA_VERSION, "passes");
        if (!r->root) return NULL;
    }
    json_t *arr = json_object_get(r->root, "passes");
    for (; r->n_parsed < r->n_pass; r->n_parsed++) {
        json_t *p = json_loadb(r->pass[r->n_parsed].json, r->pass[r->n_parsed].len, 0, NULL);
        if (!p || json_array_append_new(arr, p)) return NULL;
    }
    return r->root;
}

int sg_report_json_string(const sg_report_t *r, char **out)
{
    if (!r || !out) return SG_EINVAL;
    sg_jw_t w;
    sg_jw_init(&w, 0);
    sg_jw_object(&w);
    sg_jw_kstring(&w, "schema", SG_REPORT_SCHEMA);
    sg_jw_kint(&w, "schema_version", SG_REPORT_SCHEMA_VERSION);
    sg_jw_key(&w, "passes");
    sg_jw_array(&w);
    for (size_t i = 0; i < r->n_pass; i++) sg_jw_raw(&w, r->pass[i].json, r->pass[i].len);
    sg_jw_end(&w);
    sg_jw_end(&w);
    sg_jw_raw(&w, "\n", 1);
    if (w.err) {
        sg_jw_free(&w);
        return SG_ENOMEM;
    }
    *out = w.buf;
    return SG_OK;
}

size_t sg_report_pass_count(const sg_report_t *r)
{
    return r ? r->n_pass : 0;
}

const char *sg_report_pass_name(const sg_report_t *r, size_t i)
{
    return r && i < r->n_pass ? r->pass[i].name : "";
}

const char *sg_report_pass_summary(const sg_report_t *r, size_t i)
{
    return r && i < r->n_pass ? r->pass[i].summary : "";
}

/* Take a pass's JSON text (the buffer of a writer) into the report, with
 * its name and summary. */
static int report_add_pass(sg_report_t *r, sg_jw_t *w, const char *name, const char *summary)
{
    if (w->err) return w->err;
    if (r->n_pass == r->cap_pass) {
        size_t nc = r->cap_pass ? r->cap_pass * 2 : 8;
        pass_rec_t *p = realloc(r->pass, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        r->pass = p;
        r->cap_pass = nc;
    }
    pass_rec_t *rec = &r->pass[r->n_pass];
    rec->name = strdup(name);
    rec->summary = strdup(summary);
    if (!rec->name || !rec->summary) {
        free(rec->name);
        free(rec->summary);
        return SG_ENOMEM;
    }
    rec->json = w->buf;
    rec->len = w->len;
    r->n_pass++;
    w->buf = NULL;
    w->len = w->cap = 0;
    return SG_OK;
}

/* ---- pass context ------------------------------------------------------------------ */

static void ctx_vprintf(sg_pass_ctx_t *ctx, const char *fmt, va_list ap)
{
    /* straight into the text buffer, growing it when the line does not fit */
    for (int tries = 0; tries < 3; tries++) {
        size_t room = *ctx->cap - *ctx->len;
        va_list aq;
        va_copy(aq, ap);
        int n = room ? vsnprintf(*ctx->text + *ctx->len, room, fmt, aq) : -2;
        va_end(aq);
        if (n == -1) return;
        if (n >= 0 && (size_t)n < room) {
            *ctx->len += (size_t)n;
            return;
        }
        size_t need = *ctx->len + (n > 0 ? (size_t)n : 0) + 512, nc = *ctx->cap ? *ctx->cap : 4096;
        while (nc < need) nc *= 2;
        char *p = realloc(*ctx->text, nc);
        if (!p) {
            ctx->err = SG_ENOMEM;
            if (*ctx->cap) (*ctx->text)[*ctx->len] = '\0';
            return;
        }
        *ctx->text = p;
        *ctx->cap = nc;
    }
}

void sg_rw_printf(sg_pass_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctx_vprintf(ctx, fmt, ap);
    va_end(ap);
}

void sg_rw_reserve(sg_pass_ctx_t *ctx, size_t n)
{
    if (*ctx->len + n + 1 <= *ctx->cap) return;
    char *p = realloc(*ctx->text, *ctx->len + n + 1);
    if (!p) return; /* only a hint */
    *ctx->text = p;
    *ctx->cap = *ctx->len + n + 1;
}

void sg_rw_reserve_rest(sg_pass_ctx_t *ctx, uint32_t done, uint32_t total, size_t *text0,
                        size_t *json0)
{
    if (done == 0) {
        *text0 = *ctx->len;
        *json0 = ctx->json.len;
        return;
    }
    if (done != SG_RW_SAMPLE || total <= done) return;
    size_t rest = total - done;
    size_t t = *ctx->len - *text0, j = ctx->json.len - *json0;
    sg_rw_reserve(ctx, t / done * rest + t / done * rest / 4);
    sg_jw_reserve(&ctx->json, j / done * rest + j / done * rest / 4);
}

void sg_rw_summary(sg_pass_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->summary, sizeof ctx->summary, fmt, ap);
    va_end(ap);
}

void sg_rw_json_set(sg_pass_ctx_t *ctx, const char *key, json_t *v)
{
    if (!v) {
        ctx->err = SG_ENOMEM;
        return;
    }
    sg_jw_key(&ctx->json, key);
    sg_jw_json(&ctx->json, v);
    json_decref(v);
}

sg_jw_t *sg_rw_json_member(sg_pass_ctx_t *ctx, const char *key)
{
    sg_jw_key(&ctx->json, key);
    return &ctx->json;
}

static sg_node_id_t *dup_ids(const sg_node_id_t *ids, uint32_t n)
{
    sg_node_id_t *p = malloc((n ? n : 1) * sizeof *p);
    if (p && n) memcpy(p, ids, n * sizeof *p);
    return p;
}

int sg_rw_note_moved(sg_pass_ctx_t *ctx, sg_node_id_t node, const sg_node_id_t *keep_pred,
                     uint32_t n_keep_pred, const sg_node_id_t *keep_succ, uint32_t n_keep_succ)
{
    if (ctx->n_moved == ctx->cap_moved) {
        uint32_t nc = ctx->cap_moved ? ctx->cap_moved * 2 : 8;
        sg_rw_moved_t *m = realloc(ctx->moved, nc * sizeof *m);
        if (!m) return SG_ENOMEM;
        ctx->moved = m;
        ctx->cap_moved = nc;
    }
    sg_rw_moved_t *m = &ctx->moved[ctx->n_moved];
    m->node = node;
    m->keep_pred = dup_ids(keep_pred, n_keep_pred);
    m->keep_succ = dup_ids(keep_succ, n_keep_succ);
    if (!m->keep_pred || !m->keep_succ) {
        free(m->keep_pred);
        free(m->keep_succ);
        return SG_ENOMEM;
    }
    m->n_keep_pred = n_keep_pred;
    m->n_keep_succ = n_keep_succ;
    ctx->n_moved++;
    return SG_OK;
}

sg_reach_t *sg_rw_input_reach(sg_pass_ctx_t *ctx, int *rc)
{
    *rc = SG_OK;
    if (!ctx->reach) *rc = sg_reach_build(ctx->g, 0, &ctx->reach);
    return ctx->reach;
}

const sg_rw_streams_t *sg_rw_input_streams(sg_pass_ctx_t *ctx, int *rc)
{
    if (ctx->in_streams) {
        *rc = SG_OK;
        return ctx->in_streams;
    }
    sg_reach_t *r = sg_rw_input_reach(ctx, rc);
    if (*rc) return NULL;
    sg_rw_streams_t *s = malloc(sizeof *s);
    if (!s) {
        *rc = SG_ENOMEM;
        return NULL;
    }
    if ((*rc = sg_rw_streams_build(ctx->g, r, s))) {
        free(s);
        return NULL;
    }
    return ctx->in_streams = s;
}

/* Free a shared program order (before the snapshot it borrows from). */
static void streams_drop(sg_rw_streams_t **s)
{
    if (!*s) return;
    sg_rw_streams_free(*s);
    free(*s);
    *s = NULL;
}

static void ctx_free(sg_pass_ctx_t *ctx)
{
    free(ctx->own_text);
    sg_jw_free(&ctx->json);
    for (uint32_t i = 0; i < ctx->n_moved; i++) {
        free(ctx->moved[i].keep_pred);
        free(ctx->moved[i].keep_succ);
    }
    free(ctx->moved);
}

/* ---- verifier ------------------------------------------------------------------------ */

/* What the verifier keeps of the input. Not a copy of its edges: an edge
 * keeps its id and endpoints for good (ids are never reused; a removed
 * edge keeps its endpoints), so which ids were live, and a hash of their
 * ids and endpoints to show that no pass rewrote one in place, name the
 * input's edges in the output graph's own edge array. */
typedef struct {
    uint32_t n_nodes;   /* g->n_nodes before the pass */
    uint32_t live_nodes, n_edges_total; /* g->live_nodes, g->n_edges */
    uint8_t *was_live;  /* by id, or NULL: then `input` says (a removed node has no rank) */
    const sg_reach_t *input; /* the input's reachability snapshot, when there is one */
    uint32_t n_edges;   /* live edges */
    uint64_t *edge_live; /* bit i: edge i was live */
    uint64_t hash;      /* edges_hash of the live edges */
} snapshot_t;

static bool was_live_edge(const snapshot_t *s, uint32_t i)
{
    return s->edge_live[i >> 6] >> (i & 63) & 1;
}

/* One edge's share of the hash (a sum: a 64-bit mix of its id and
 * endpoints, so that a changed endpoint or id changes the sum but by
 * chance). */
static uint64_t edge_mix(uint32_t id, sg_node_id_t from, sg_node_id_t to)
{
    uint64_t x = ((uint64_t)from << 32 | to) ^ ((uint64_t)id * 0x9e3779b97f4a7c15ull);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void snapshot_free(snapshot_t *s)
{
    free(s->was_live);
    free(s->edge_live);
    memset(s, 0, sizeof *s);
}

static int snapshot_take(const sg_graph_t *g, const sg_reach_t *input, snapshot_t *s)
{
    memset(s, 0, sizeof *s);
    s->n_nodes = g->n_nodes;
    s->live_nodes = g->live_nodes;
    s->n_edges_total = g->n_edges;
    s->input = input;
    if (!input) s->was_live = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    s->edge_live = calloc(g->n_edges / 64 + 1, sizeof *s->edge_live);
    if ((!input && !s->was_live) || !s->edge_live) {
        snapshot_free(s);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; !input && i < g->n_nodes; i++) {
        sg_prefetch_node(g, i + SG_PREFETCH_AHEAD, 16);
        s->was_live[i] = !g->nodes[i].removed;
    }
    uint64_t h = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed) continue;
        s->edge_live[i >> 6] |= 1ull << (i & 63);
        h += edge_mix(i, e->from, e->to);
        s->n_edges++;
    }
    s->hash = h;
    return SG_OK;
}

/* Old-graph adjacency in CSR form, both directions. */
typedef struct {
    uint32_t *out_start, *in_start;
    sg_node_id_t *out, *in;
} csr_t;

static void csr_free(csr_t *c)
{
    free(c->out_start);
    free(c->in_start);
    free(c->out);
    free(c->in);
}

/* The input's edges by their endpoints (read from g's edge array once the
 * hash has shown them unchanged). */
static int csr_build(const sg_graph_t *g, const snapshot_t *s, csr_t *c)
{
    memset(c, 0, sizeof *c);
    size_t nn = (size_t)s->n_nodes + 1, ne = s->n_edges ? s->n_edges : 1;
    c->out_start = calloc(nn, sizeof *c->out_start);
    c->in_start = calloc(nn, sizeof *c->in_start);
    c->out = malloc(ne * sizeof *c->out);
    c->in = malloc(ne * sizeof *c->in);
    uint32_t *fo = calloc(nn, sizeof *fo), *fi = calloc(nn, sizeof *fi);
    if (!c->out_start || !c->in_start || !c->out || !c->in || !fo || !fi) {
        free(fo);
        free(fi);
        csr_free(c);
        return SG_ENOMEM;
    }
    const sg_edge_t *edges = g->edges; /* the input's: see snapshot_t */
    for (uint32_t i = 0; i < s->n_edges_total; i++) {
        if (!was_live_edge(s, i)) continue;
        c->out_start[edges[i].from + 1]++;
        c->in_start[edges[i].to + 1]++;
    }
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        c->out_start[i + 1] += c->out_start[i];
        c->in_start[i + 1] += c->in_start[i];
    }
    for (uint32_t i = 0; i < s->n_edges_total; i++) {
        if (!was_live_edge(s, i)) continue;
        sg_node_id_t a = edges[i].from, b = edges[i].to;
        c->out[c->out_start[a] + fo[a]++] = b;
        c->in[c->in_start[b] + fi[b]++] = a;
    }
    free(fo);
    free(fi);
    return SG_OK;
}

/* Non-exempt nodes reached from x through exempt nodes only, along the old
 * edges (dir 0: successors, 1: predecessors). */
static int collect_through(const csr_t *c, const uint8_t *exempt, sg_node_id_t x, int dir,
                           uint8_t *seen, sg_node_id_t **out, uint32_t *n_out)
{
    sg_node_id_t *stack = NULL, *res = NULL;
    uint32_t top = 0, cap = 0, nr = 0, capr = 0;
    int rc = SG_OK;
    sg_node_id_t *visited = NULL;
    uint32_t nv = 0, capv = 0;
#define PUSH(arr, n, cp, val)                                               \
    do {                                                                    \
        if ((n) == (cp)) {                                                  \
            uint32_t nc_ = (cp) ? (cp) * 2 : 16;                            \
            sg_node_id_t *q_ = realloc((arr), nc_ * sizeof *q_);            \
            if (!q_) {                                                      \
                rc = SG_ENOMEM;                                             \
                goto done;                                                  \
            }                                                               \
            (arr) = q_;                                                     \
            (cp) = nc_;                                                     \
        }                                                                   \
        (arr)[(n)++] = (val);                                               \
    } while (0)
    PUSH(stack, top, cap, x);
    seen[x] = 1;
    PUSH(visited, nv, capv, x);
    while (top) {
        sg_node_id_t y = stack[--top];
        uint32_t b = dir ? c->in_start[y] : c->out_start[y];
        uint32_t e = dir ? c->in_start[y + 1] : c->out_start[y + 1];
        for (uint32_t i = b; i < e; i++) {
            sg_node_id_t z = dir ? c->in[i] : c->out[i];
            if (seen[z]) continue;
            seen[z] = 1;
            PUSH(visited, nv, capv, z);
            if (exempt[z])
                PUSH(stack, top, cap, z);
            else
                PUSH(res, nr, capr, z);
        }
    }
#undef PUSH
done:
    for (uint32_t i = 0; i < nv; i++) seen[visited[i]] = 0;
    free(visited);
    free(stack);
    if (rc) {
        free(res);
        return rc;
    }
    *out = res;
    *n_out = nr;
    return SG_OK;
}

/* Is every edge of the input still there, with its endpoints, and no
 * other edge of an id it had? (Edge ids are never reused.) */
static bool edges_intact(const sg_graph_t *g, const snapshot_t *s)
{
    uint64_t h = 0;
    for (uint32_t i = 0; i < s->n_edges_total; i++) {
        const sg_edge_t *e = &g->edges[i];
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (e->removed == was_live_edge(s, i)) return false;
        if (!e->removed) h += edge_mix(i, e->from, e->to);
    }
    return h == s->hash;
}

/* Check the ordering guarantee; on failure describe the first lost ordering
 * in ctx's text. Sets *checked to the number of orderings checked. */
static int verify(sg_pass_ctx_t *ctx, const snapshot_t *s, size_t *checked, bool *ok,
                  sg_reach_t **keep)
{
    sg_graph_t *g = ctx->g;
    *ok = true;
    *checked = 0;
    sg_reach_t *r = ctx->out_reach;
    ctx->out_reach = NULL;
    uint8_t *exempt = calloc(s->n_nodes ? s->n_nodes : 1, 1);
    uint8_t *seen = NULL;
    sg_rw_pairs_t ps = {0};
    csr_t c = {0};
    uint8_t *ans = NULL;
    int rc = SG_OK;
    if (!exempt) {
        rc = SG_ENOMEM;
        goto out;
    }
    bool any_exempt = false;
    /* ids are never reused: with as many ids and live nodes as before, no
     * node was removed */
    if (g->n_nodes != s->n_nodes || g->live_nodes != s->live_nodes)
        for (uint32_t i = 0; i < s->n_nodes; i++)
            if (g->nodes[i].removed &&
                (s->was_live ? s->was_live[i] : sg_reach_rank(s->input, i) != UINT32_MAX))
                exempt[i] = 1, any_exempt = true;
    for (uint32_t i = 0; i < ctx->n_moved; i++) {
        if (ctx->moved[i].node < s->n_nodes) exempt[ctx->moved[i].node] = 1, any_exempt = true;
    }
    bool only_added = !any_exempt && edges_intact(g, s);
    /* A snapshot that is kept is the next pass's input: exactly
     * sg_reach_build's (a pass that only added edges
     * gets it from the input's adjacency). One that only answers the
     * queries below may be read from the edge array alone; and when the
     * pass only added edges, no query is left and the cycle check is all
     * there is to do. */
    if (!r && !keep && only_added)
        rc = sg_reach_check_acyclic_after(g, s->input);
    else if (!r)
        rc = keep ? sg_reach_build_after(g, s->input, 0, &r)
                  : sg_reach_build_query(g, s->input, 0, &r);
    if (rc == SG_ECYCLE) {
        *ok = false;
        sg_rw_printf(ctx, "verify: FAILED: the pass left a cycle\n");
        goto out;
    }
    if (rc) goto out;
    if (only_added) {
        /* The pass only added edges: every edge of the input is still
         * there, so every path is. */
        *checked = s->n_edges;
        goto out;
    }
    if (!(seen = calloc(s->n_nodes ? s->n_nodes : 1, 1))) {
        rc = SG_ENOMEM;
        goto out;
    }
    /* an edge of the input that is still there keeps its ordering: only
     * the others are queried */
    size_t direct = 0;
    uint64_t h = 0;
    bool moved_out = false; /* an endpoint that is no node of the input */
    for (uint32_t i = 0; i < s->n_edges_total; i++) {
        sg_prefetch_edge(g, i + SG_PREFETCH_EDGES_AHEAD);
        if (!was_live_edge(s, i)) continue;
        const sg_edge_t *e = &g->edges[i]; /* ids are never reused */
        sg_node_id_t a = e->from, b = e->to;
        h += edge_mix(i, a, b);
        if (a >= s->n_nodes || b >= s->n_nodes) {
            moved_out = true;
            continue;
        }
        if (exempt[a] || exempt[b]) continue;
        if (!e->removed) {
            direct++;
            continue;
        }
        if ((rc = sg_rw_pairs_push(&ps, a, b))) goto out;
    }
    if (moved_out || h != s->hash) {
        /* the endpoints read above are not the input's */
        *ok = false;
        sg_rw_printf(ctx, "verify: FAILED: the pass changed an edge of the input in place\n");
        goto out;
    }
    for (uint32_t i = 0; i < ctx->n_moved; i++) {
        const sg_rw_moved_t *m = &ctx->moved[i];
        for (uint32_t k = 0; k < m->n_keep_pred; k++)
            if ((rc = sg_rw_pairs_push(&ps, m->keep_pred[k], m->node))) goto out;
        for (uint32_t k = 0; k < m->n_keep_succ; k++)
            if ((rc = sg_rw_pairs_push(&ps, m->node, m->keep_succ[k]))) goto out;
    }
    if (any_exempt) {
        /* Every path that ran through exempt nodes must be bridged. */
        if ((rc = csr_build(g, s, &c))) goto out;
        for (uint32_t x = 0; x < s->n_nodes; x++) {
            if (!exempt[x]) continue;
            /* only start from an exempt node with a non-exempt predecessor,
             * so a run of exempt nodes is bridged once */
            sg_node_id_t *pre = NULL, *suc = NULL;
            uint32_t np = 0, nsu = 0;
            if ((rc = collect_through(&c, exempt, x, 1, seen, &pre, &np))) goto out;
            if ((rc = collect_through(&c, exempt, x, 0, seen, &suc, &nsu))) {
                free(pre);
                goto out;
            }
            for (uint32_t a = 0; a < np && rc == SG_OK; a++)
                for (uint32_t b = 0; b < nsu && rc == SG_OK; b++)
                    rc = sg_rw_pairs_push(&ps, pre[a], suc[b]);
            free(pre);
            free(suc);
            if (rc) goto out;
        }
    }
    ans = malloc(ps.n ? ps.n : 1);
    if (!ans) {
        rc = SG_ENOMEM;
        goto out;
    }
    if ((rc = sg_reach_query_batch(r, (const sg_node_id_t(*)[2])ps.p, ps.n, ans))) goto out;
    *checked = ps.n + direct;
    uint32_t shown = 0, lost = 0;
    for (size_t i = 0; i < ps.n; i++) {
        if (ans[i]) continue;
        lost++;
        if (*ok) sg_rw_printf(ctx, "verify: FAILED: orderings of the input lost:\n");
        *ok = false;
        if (shown++ < 10) {
            char a[200], b[200];
            sg_rw_printf(ctx, "  %s no longer before %s\n", sg_rw_node_name(g, ps.p[i][0], a, sizeof a),
                         sg_rw_node_name(g, ps.p[i][1], b, sizeof b));
        }
    }
    if (lost > shown) sg_rw_printf(ctx, "  ... and %u more\n", lost - shown);
out:
    free(ans);
    csr_free(&c);
    free(ps.p);
    free(exempt);
    free(seen);
    if (rc == SG_OK && *ok && keep) {
        *keep = r; /* the next pass's input */
        r = NULL;
    }
    sg_reach_destroy(r);
    return rc;
}

/* ---- running ------------------------------------------------------------------------- */

int sg_rewrite_run(sg_graph_t *g, const char *const *names, size_t n, sg_report_t *report)
{
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    return sg_rewrite_run_opts(g, names, n, &opt, report);
}

/* *reach: the snapshot of the input (or NULL), replaced by one of the
 * output when the verifier made it and `keep` asks for it (the next pass's
 * input; the last pass's is not needed). *streams: the input's program
 * order made from *reach (or NULL), handed on with it when the pass changed
 * nothing, else freed. *carry (or NULL): the verifier's record of the input
 * (snapshot_t), handed on in the same way: when the pass before changed
 * nothing it is this pass's input's too, and the edge array is not read
 * again for it. */
static int run_one(sg_graph_t *g, const pass_def_t *p, const sg_rewrite_options_t *opt,
                   sg_report_t *report, sg_reach_t **reach, sg_rw_streams_t **streams, bool keep,
                   snapshot_t *carry)
{
    sg_pass_ctx_t ctx = {0};
    ctx.g = g;
    ctx.opt = opt;
    /* the text goes straight into the report */
    ctx.text = report ? &report->text : &ctx.own_text;
    ctx.len = report ? &report->len : &ctx.own_len;
    ctx.cap = report ? &report->cap : &ctx.own_cap;
    ctx.reach = *reach; /* a snapshot of exactly this graph, or NULL */
    *reach = NULL;
    ctx.in_streams = ctx.reach ? *streams : NULL;
    if (!ctx.reach) streams_drop(streams);
    *streams = NULL;
    ctx.name = p->name;
    sg_jw_init(&ctx.json, PASS_DEPTH);
    sg_jw_object(&ctx.json);
    sg_jw_kstring(&ctx.json, "pass", p->name);
    snapshot_t snap = {0};
    int rc = SG_OK;
    if (carry && carry->edge_live && ctx.reach && carry->input == ctx.reach) {
        snap = *carry; /* the graph and its snapshot are the ones it was taken of */
        memset(carry, 0, sizeof *carry);
    } else if (carry) {
        snapshot_free(carry);
    }
    if (opt->verify && !snap.edge_live && (rc = snapshot_take(g, ctx.reach, &snap))) goto out;
    sg_rw_printf(&ctx, "== %s ==\n", p->name);
    rc = p->run(&ctx);
    if (rc == SG_OK) rc = ctx.err ? ctx.err : ctx.json.err;
    if (rc) {
        sg_rw_printf(&ctx, "error: %s\n", sg_strerror(rc));
        goto report_out;
    }
    sg_rw_printf(&ctx, "summary: %s\n", ctx.summary);
    sg_jw_kstring(&ctx.json, "summary", ctx.summary);
    if (opt->verify) {
        size_t checked = 0;
        bool ok = true;
        if (ctx.n_moved == 0 && g->n_nodes == snap.n_nodes && g->n_edges == snap.n_edges_total &&
            g->live_nodes == snap.live_nodes && g->live_edges == snap.n_edges) {
            /* Nothing was added or removed (ids are never reused, so an add
             * and a remove cannot cancel out): every edge of the input is
             * still there, and the input's snapshot still describes the
             * graph; hand it on. */
            checked = snap.n_edges;
            *reach = ctx.reach;
            ctx.reach = NULL;
            *streams = ctx.in_streams;
            ctx.in_streams = NULL;
            if (carry && snap.input) {
                *carry = snap;
                memset(&snap, 0, sizeof snap);
            }
        } else {
            rc = verify(&ctx, &snap, &checked, &ok, keep ? reach : NULL);
        }
        if (rc == SG_OK && !ok) rc = SG_EINVAL;
        if (rc == SG_OK) {
            sg_rw_printf(&ctx, "verify: ok, %zu %s of the input kept\n", checked,
                         sg_plural(checked, "ordering", "orderings"));
            if (ctx.n_moved)
                sg_rw_printf(&ctx,
                             "  (%u moved %s: %s required orderings and every path through "
                             "%s)\n",
                             ctx.n_moved, sg_plural(ctx.n_moved, "node", "nodes"),
                             sg_plural(ctx.n_moved, "its", "their"),
                             sg_plural(ctx.n_moved, "it", "them"));
        }
        sg_jw_key(&ctx.json, "verify");
        sg_jw_object(&ctx.json);
        sg_jw_kbool(&ctx.json, "ok", rc == SG_OK);
        sg_jw_kint(&ctx.json, "orderings_checked", (long long)checked);
        sg_jw_kint(&ctx.json, "moved_nodes", (long long)ctx.n_moved);
        sg_jw_end(&ctx.json);
    }
    if (rc == SG_OK) rc = sg_graph_log_pass(g, p->name, ctx.summary);
report_out:
    sg_rw_printf(&ctx, "\n");
    while (ctx.json.n_open) sg_jw_end(&ctx.json); /* a failed pass may leave a member open */
    if (report) {
        int arc = ctx.err ? ctx.err : report_add_pass(report, &ctx.json, p->name, ctx.summary);
        if (arc) rc = rc ? rc : arc;
    }
out:
    snapshot_free(&snap);
    streams_drop(&ctx.in_streams);
    sg_reach_destroy(ctx.reach);
    sg_reach_destroy(ctx.out_reach);
    ctx_free(&ctx);
    return rc;
}

int sg_rw_run_custom(sg_graph_t *g, const char *name, int (*run)(sg_pass_ctx_t *ctx),
                     const sg_rewrite_options_t *opt, sg_report_t *report)
{
    if (!g || g->root != g || !name || !run) return SG_EINVAL;
    sg_rewrite_options_t defaults;
    if (!opt) {
        sg_rewrite_options_init(&defaults);
        opt = &defaults;
    }
    pass_def_t def = {name, "", false, run};
    sg_reach_t *reach = NULL;
    sg_rw_streams_t *streams = NULL;
    int rc = run_one(g, &def, opt, report, &reach, &streams, false, NULL);
    streams_drop(&streams);
    sg_reach_destroy(reach);
    return rc;
}

int sg_rewrite_run_opts(sg_graph_t *g, const char *const *names, size_t n,
                        const sg_rewrite_options_t *opt, sg_report_t *report)
{
    if (!g || g->root != g) return SG_EINVAL;
    sg_rewrite_options_t defaults;
    if (!opt) {
        sg_rewrite_options_init(&defaults);
        opt = &defaults;
    }
    const pass_def_t *list[64];
    size_t count = 0;
    if (!names || n == 0) {
        for (size_t i = 0; i < N_PASSES; i++)
            if (passes[i].is_default) list[count++] = &passes[i];
    } else {
        if (n > sizeof list / sizeof list[0]) return SG_ELIMIT;
        for (size_t i = 0; i < n; i++) {
            int k = sg_rewrite_pass_find(names[i]);
            if (k < 0) return SG_EINVAL;
            list[count++] = &passes[k];
        }
    }
    /* A cyclic input is no DAG to reason about: refuse before any pass. The
     * snapshot is the first pass's input; each verification's snapshot is
     * the next one's. */
    sg_reach_t *reach = NULL;
    sg_rw_streams_t *streams = NULL;
    snapshot_t carry = {0};
    int rc = sg_reach_build(g, 0, &reach);
    for (size_t i = 0; i < count && rc == SG_OK; i++)
        rc = run_one(g, list[i], opt, report, &reach, &streams, i + 1 < count, &carry);
    snapshot_free(&carry);
    streams_drop(&streams);
    sg_reach_destroy(reach);
    return rc;
}
