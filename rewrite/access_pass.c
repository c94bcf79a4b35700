/* access_pass.c: pass `access`, the head of the default pipeline: what each
 * kernel node really reads and writes, from its code (code/access_bundle.h:
 * PTX, else SASS through nvdisasm, else a reason), stored in the model for
 * every later pass, `sgcap check`, inspect and replay relocation.
 *
 * For each kernel node (bodies included) the node's kernel.access facts
 * get its evaluated sites (kind, status, pointer word, buffer and range,
 * reason) and the parameter words the code uses as addresses; its accesses
 * are replaced by what the code touches: one access per buffer and mode
 * (load read, store write, atomic atomic, pointer passed to a call
 * unknown), ranges from the sites (dense / exact / bound), an unknown site
 * whose pointer is known bounded by that pointer's buffer (the code is
 * assumed to stay inside the allocation its pointer points into). Where
 * the code escapes the analysis (no code, a pointer loaded from memory, a
 * call out, analysis limits) the capture's guesses stay beside those, for
 * the buffers the code's accesses do not name. Copies and sets get the
 * range their payload gives (every byte of a 1-D copy is written).
 *
 * Accesses to graph allocations that share addresses are given to the
 * allocation live when the node was enqueued (sg_rw_buffer_at). No edge is
 * touched. Idempotent: facts are recomputed from the code each time.
 *
 * Offline only (it forks nvdisasm and loads NVRTC): libsgcap.so's build of
 * the passes (SGCAP_IN_APP) leaves it out. */
#if !SGCAP_IN_APP
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "code/access_bundle.h"
#include "graph/bundle.h"
#include "graph/views.h"
#include "rewrite_internal.h"

/* One row of the report per distinct analysis (kernel, image, layout). */
typedef struct {
    const sg_access_kernel_t *k; /* the key: owned by the access cache */
    char name[96];
    uint32_t nodes, all_known, complete;
    sg_facts_source_t source;
    char reason[200];
    UT_hash_handle hh;
} row_t;

typedef struct {
    sg_pass_ctx_t *ctx;
    sg_graph_t *root;
    sg_access_bundle_t *ab;
    sg_rw_alloc_index_t aix; /* the root's graph allocations (the pass adds none) */
    row_t *rows;
    uint32_t kernels, known, by_source[SG_FACTS_SOURCE_COUNT], copies;
} pass_t;

static sg_access_mode_t mode_of(uint8_t kind)
{
    switch (kind) {
    case SG_ACCESS_LOAD: return SG_ACCESS_READ;
    case SG_ACCESS_STORE: return SG_ACCESS_WRITE;
    case SG_ACCESS_ATOMIC: return SG_ACCESS_ATOMIC_RMW;
    default: return SG_ACCESS_UNKNOWN;
    }
}

/* ---- accesses from sites ---------------------------------------------------------------- */

typedef struct {
    sg_access_t *a;
    uint32_t n, cap;
} accs_t;

static int accs_push(accs_t *l, sg_access_t x)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? 2 * l->cap : 8;
        sg_access_t *p = realloc(l->a, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        l->a = p;
        l->cap = nc;
    }
    l->a[l->n++] = x;
    return SG_OK;
}

static int cmp_access(const void *pa, const void *pb)
{
    const sg_access_t *a = pa, *b = pb;
    if (a->buffer != b->buffer) return a->buffer < b->buffer ? -1 : 1;
    if (a->mode != b->mode) return a->mode < b->mode ? -1 : 1;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return (int)b->range - (int)a->range;
}

/* Merge what loses nothing: the same range twice (the better kind wins),
 * a range inside a dense one of the same mode, and dense ranges that
 * overlap or touch (still dense). */
static uint32_t merge(sg_access_t *a, uint32_t n)
{
    qsort(a, n, sizeof *a, cmp_access);
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        sg_access_t *p = w ? &a[w - 1] : NULL;
        if (p && p->buffer == a[i].buffer && p->mode == a[i].mode) {
            uint64_t pe = p->offset + p->size, e = a[i].offset + a[i].size;
            if (p->offset == a[i].offset && p->size == a[i].size) {
                if (a[i].range > p->range) p->range = a[i].range;
                continue;
            }
            if (p->range == SG_RANGE_DENSE && a[i].offset >= p->offset && e <= pe) continue;
            if (p->range == SG_RANGE_DENSE && a[i].range == SG_RANGE_DENSE && a[i].offset <= pe) {
                if (e > pe) p->size = e - p->offset;
                continue;
            }
        }
        a[w++] = a[i];
    }
    return w;
}

static char *strdup_or_null(const char *s)
{
    return s && s[0] ? strdup(s) : NULL;
}

/* The node's facts and accesses from its code's evaluation. */
static int apply(pass_t *p, sg_graph_t *g, sg_node_id_t id, const sg_access_kernel_t *k,
                 const sg_access_eval_t *ev)
{
    sg_node_t *x = sg_graph_node(g, id);
    sg_kernel_t *kp = &x->u.kernel;
    const sg_graph_t *root = p->root;
    sg_facts_t f;
    memset(&f, 0, sizeof f);
    bool analysed = k->status == 0;
    f.source = !analysed ? SG_FACTS_UNKNOWN
                         : k->source == SG_ACCESS_SOURCE_SASS ? SG_FACTS_SASS : SG_FACTS_PTX;
    f.all_known = analysed && ev->all_known;
    f.complete = analysed && k->addresses_complete;
    char why[240] = "";
    if (!analysed)
        snprintf(why, sizeof why, "%s: %.200s", sg_access_reason_name(k->reason), k->detail);
    else if (!f.all_known)
        snprintf(why, sizeof why, "%.200s", ev->reason);
    else if (!f.complete)
        snprintf(why, sizeof why, "an address may start from a parameter word no site names");
    accs_t acc = {0};
    int rc = SG_OK;
    f.reason = strdup_or_null(why);
    if (why[0] && !f.reason) goto oom;
    /* pointer words that lie inside the parameters (the format's rule) */
    f.pointers = malloc((k->n_address_words + 1) * sizeof *f.pointers);
    if (!f.pointers) goto oom;
    for (uint32_t i = 0; i < k->n_address_words; i++)
        if ((uint64_t)k->address_words[i] + 8 <= kp->params_size)
            f.pointers[f.n_pointers++] = k->address_words[i];
    uint32_t ns = ev->n_ranges < SG_BUNDLE_MAX_SITES ? ev->n_ranges : SG_BUNDLE_MAX_SITES;
    f.sites = calloc(ns + 1, sizeof *f.sites);
    if (!f.sites) goto oom;
    bool escapes = !analysed || k->reason != SG_ACCESS_OK || ev->n_ranges > ns;
    for (uint32_t i = 0; i < ns; i++) {
        const sg_access_range_t *r = &ev->ranges[i];
        const sg_access_site_t *s = &k->sites[r->site];
        sg_site_t *t = &f.sites[f.n_sites++];
        t->kind = (sg_site_kind_t)s->kind;
        t->status = r->status == SG_ACCESS_ST_KNOWN   ? SG_SITE_KNOWN
                    : r->status == SG_ACCESS_ST_NEVER ? SG_SITE_NEVER
                                                      : SG_SITE_UNKNOWN;
        t->line = s->line == SG_NONE ? 0 : s->line;
        t->param = s->base_kind == SG_ACCESS_BASE_PARAM ? (int32_t)s->base_param : -1;
        t->buffer = SG_NONE;
        if (t->status == SG_SITE_NEVER) continue;
        uint64_t at = t->status == SG_SITE_KNOWN ? r->lo : r->base;
        uint32_t b = r->buffer;
        if (b == SG_NONE && t->status == SG_SITE_KNOWN) b = sg_graph_find_buffer(root, r->lo);
        if (b != SG_NONE) b = sg_rw_alloc_index_at(&p->aix, root, b, at, x->seq);
        t->buffer = b;
        if (t->status == SG_SITE_KNOWN) {
            t->range = r->dense ? SG_RANGE_DENSE : r->exact ? SG_RANGE_EXACT : SG_RANGE_BOUND;
            t->offset = b != SG_NONE ? r->lo - root->buffers[b].address : r->lo;
            t->size = r->hi - r->lo;
        } else {
            char rs[200];
            snprintf(rs, sizeof rs, "line %u: %s: %.150s", t->line,
                     sg_access_reason_name((sg_access_reason_t)r->reason), r->detail);
            if (!(t->reason = strdup(rs))) goto oom;
            if (b == SG_NONE) {
                escapes = true; /* it may touch memory no pointer argument names */
                continue;
            }
            t->range = SG_RANGE_BOUND;
            t->offset = 0;
            t->size = root->buffers[b].size;
        }
        if (b == SG_NONE || t->size == 0) continue;
        sg_access_t a = {b, t->offset, t->size, mode_of(s->kind), t->range};
        if ((rc = accs_push(&acc, a))) goto out;
    }
    if (escapes) {
        /* keep the capture's guesses for buffers the code's accesses do not name */
        uint32_t named = acc.n;
        for (uint32_t i = 0; i < x->n_accesses; i++) {
            bool covered = false;
            for (uint32_t j = 0; j < named && !covered; j++) covered = acc.a[j].buffer == x->accesses[i].buffer;
            if (covered) continue;
            sg_access_t a = x->accesses[i];
            a.range = SG_RANGE_GUESS;
            if ((rc = accs_push(&acc, a))) goto out;
        }
    }
    uint32_t n = merge(acc.a, acc.n);
    if ((rc = sg_node_set_accesses(g, id, acc.a, n))) goto out;
    x = sg_graph_node(g, id);
    sg_facts_release(&x->u.kernel.facts);
    x->u.kernel.facts = f;
    memset(&f, 0, sizeof f);
    goto out;
oom:
    rc = SG_ENOMEM;
out:
    sg_facts_release(&f);
    free(acc.a);
    return rc;
}

/* ---- copies and sets: their payload says exactly what they touch ---------------------------- */

static void copy_ranges(pass_t *p, sg_node_t *x)
{
    bool dense = false;
    if (x->type == SG_NODE_MEMCPY) {
        const sg_memcpy_t *c = &x->u.memcpy;
        bool flat = c->height <= 1 && c->depth <= 1;
        dense = flat || ((!c->dst_pitch || c->dst_pitch == c->width) &&
                         (!c->src_pitch || c->src_pitch == c->width));
    } else {
        const sg_memset_t *m = &x->u.memset;
        uint64_t row = m->width * (m->element_size ? m->element_size : 1);
        dense = m->height <= 1 || !m->pitch || m->pitch == row;
    }
    for (uint32_t i = 0; i < x->n_accesses; i++)
        if (x->accesses[i].range == SG_RANGE_GUESS && x->accesses[i].mode != SG_ACCESS_UNKNOWN)
            x->accesses[i].range = dense ? SG_RANGE_DENSE : SG_RANGE_EXACT;
    p->copies++;
}

/* ---- walking the graph ------------------------------------------------------------------ */

static int note_row(pass_t *p, const sg_kernel_t *kp, const sg_access_kernel_t *k)
{
    row_t *r = NULL;
    HASH_FIND_PTR(p->rows, &k, r);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return SG_ENOMEM;
        r->k = k;
        sg_kernel_short_name(kp->name ? kp->name : "?", r->name, sizeof r->name);
        r->source = kp->facts.source;
        if (kp->facts.reason) snprintf(r->reason, sizeof r->reason, "%s", kp->facts.reason);
        HASH_ADD_PTR(p->rows, k, r);
        if (!r->hh.tbl) {
            free(r);
            return SG_ENOMEM;
        }
    }
    r->nodes++;
    r->all_known += kp->facts.all_known;
    r->complete += kp->facts.complete;
    return SG_OK;
}

static int walk(pass_t *p, sg_graph_t *g, int depth)
{
    if (depth > SG_BUNDLE_MAX_DEPTH) return SG_OK;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        int rc = SG_OK;
        if (x->type == SG_NODE_KERNEL) {
            const sg_access_kernel_t *k = NULL;
            sg_access_eval_t ev;
            memset(&ev, 0, sizeof ev);
            rc = sg_access_bundle_node(p->ab, &x->u.kernel, &ev, &k);
            if (!rc) rc = apply(p, g, i, k, &ev);
            sg_access_eval_free(&ev);
            if (rc) return rc;
            x = sg_graph_node(g, i);
            p->kernels++;
            p->known += x->u.kernel.facts.all_known;
            p->by_source[x->u.kernel.facts.source]++;
            if ((rc = note_row(p, &x->u.kernel, k))) return rc;
        } else if (x->type == SG_NODE_MEMCPY || x->type == SG_NODE_MEMSET) {
            copy_ranges(p, x);
        } else if (x->type == SG_NODE_CHILD_GRAPH && x->u.child) {
            rc = walk(p, x->u.child, depth + 1);
        } else if (x->type == SG_NODE_CONDITIONAL) {
            for (uint32_t b = 0; b < x->u.cond.n_bodies && !rc; b++)
                rc = walk(p, x->u.cond.bodies[b], depth + 1);
        }
        if (rc) return rc;
    }
    return SG_OK;
}

static int cmp_row(const void *pa, const void *pb)
{
    const row_t *a = *(row_t *const *)pa, *b = *(row_t *const *)pb;
    if (a->all_known != a->nodes || b->all_known != b->nodes) {
        bool ka = a->all_known == a->nodes, kb = b->all_known == b->nodes;
        if (ka != kb) return ka ? 1 : -1; /* the ones with unknown accesses first */
    }
    return strcmp(a->name, b->name);
}

static int report(pass_t *p)
{
    sg_pass_ctx_t *ctx = p->ctx;
    uint32_t n = HASH_COUNT(p->rows), i = 0;
    row_t **rows = malloc((n + 1) * sizeof *rows);
    if (!rows) return SG_ENOMEM;
    for (row_t *r = p->rows; r; r = r->hh.next) rows[i++] = r;
    qsort(rows, n, sizeof *rows, cmp_row);
    sg_jw_t *arr = sg_rw_json_member(ctx, "kernels");
    sg_jw_array(arr);
    for (i = 0; i < n; i++) {
        const row_t *r = rows[i];
        sg_rw_printf(ctx, "- %s x%u: %s, %u of %u launches with every access known%s%s\n",
                     SG_RW_LABEL(r->name), r->nodes, sg_facts_source_name(r->source),
                     r->all_known, r->nodes, r->reason[0] ? "; " : "", SG_RW_LABEL(r->reason));
        sg_jw_object(arr);
        sg_jw_kstring(arr, "kernel", r->k->kernel ? r->k->kernel : "");
        sg_jw_kint(arr, "nodes", r->nodes);
        sg_jw_kstring(arr, "source", sg_facts_source_name(r->source));
        sg_jw_kint(arr, "all_known", r->all_known);
        sg_jw_kint(arr, "complete", r->complete);
        if (r->reason[0]) sg_jw_kstring(arr, "reason", r->reason);
        sg_jw_end(arr);
    }
    sg_jw_end(arr);
    free(rows);
    sg_access_bundle_stats_t st;
    sg_access_bundle_stats(p->ab, &st);
    sg_rw_json_set(ctx, "kernel_nodes", json_integer(p->kernels));
    sg_rw_json_set(ctx, "all_known", json_integer(p->known));
    sg_rw_json_set(ctx, "by_source",
                   json_pack("{s:i, s:i, s:i}", "ptx", p->by_source[SG_FACTS_PTX], "sass",
                             p->by_source[SG_FACTS_SASS], "unknown",
                             p->by_source[SG_FACTS_UNKNOWN]));
    sg_rw_json_set(ctx, "nvdisasm_runs", json_integer(st.nvdisasm_runs));
    if (p->kernels == 0) sg_rw_printf(ctx, "no kernel nodes\n");
    sg_rw_summary(ctx,
                  "%u kernel nodes (%u distinct kernels): %u with every access known; code from "
                  "PTX %u, SASS %u, none %u",
                  p->kernels, n, p->known, p->by_source[SG_FACTS_PTX], p->by_source[SG_FACTS_SASS],
                  p->by_source[SG_FACTS_UNKNOWN]);
    return SG_OK;
}

int sg_pass_access(sg_pass_ctx_t *ctx)
{
    pass_t p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.root = ctx->g->root;
    const sg_bundle_t *b = ctx->opt->source;
    sg_bundle_t *own = NULL;
    if (!b && ctx->opt->bundle) {
        sg_diag_t diag;
        memset(&diag, 0, sizeof diag);
        if (sg_bundle_open(ctx->opt->bundle, &own, &diag) == SG_OK) {
            b = own;
        } else {
            char msg[300];
            sg_rw_printf(ctx, "no code read: %s\n", sg_diag_format(&diag, msg, sizeof msg));
        }
    }
    if (!b) sg_rw_printf(ctx, "no bundle to read code from: every kernel keeps the capture's guesses\n");
    sg_access_bundle_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.device_arch = ctx->opt->fuse_arch;
    /* what nvdisasm printed before, kept across runs ($SGCAP_CACHE_DIR) */
    char cache_dir[4096];
    if (sg_sass_default_cache_dir(cache_dir, sizeof cache_dir) == 0) opt.sass.cache_dir = cache_dir;
    int rc = sg_rw_alloc_index_build(p.root, &p.aix);
    if (!rc) rc = sg_access_bundle_open(b, p.root, &opt, &p.ab);
    /* every SASS-only kernel of every image in one nvdisasm batch */
    if (!rc) rc = sg_access_bundle_prefetch(p.ab);
    if (!rc) rc = walk(&p, ctx->g, 0);
    if (!rc) rc = report(&p);
    row_t *r, *t;
    HASH_ITER(hh, p.rows, r, t)
    {
        HASH_DEL(p.rows, r);
        free(r);
    }
    sg_access_bundle_close(p.ab);
    sg_bundle_close(own);
    sg_rw_alloc_index_free(&p.aix);
    return rc;
}
/* Does any kernel node of g (bodies included) lack facts? */
static bool lacks_facts(const sg_graph_t *g, int depth)
{
    if (depth > SG_BUNDLE_MAX_DEPTH) return false;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        if (x->type == SG_NODE_KERNEL && x->u.kernel.facts.source == SG_FACTS_NONE) return true;
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child && lacks_facts(x->u.child, depth + 1))
            return true;
        for (uint32_t b = 0; x->type == SG_NODE_CONDITIONAL && b < x->u.cond.n_bodies; b++)
            if (lacks_facts(x->u.cond.bodies[b], depth + 1)) return true;
    }
    return false;
}

int sg_rewrite_ensure_access(sg_graph_t *g, const struct sg_bundle *source, bool *ran,
                             char *summary, size_t n)
{
    if (ran) *ran = false;
    if (summary && n) summary[0] = '\0';
    if (!g || g->root != g) return SG_EINVAL;
    if (!lacks_facts(g, 0)) return SG_OK;
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    opt.verify = false; /* it adds no edge and removes none */
    opt.source = source;
    opt.bundle = source ? sg_bundle_path(source) : NULL;
    const char *names[] = {"access"};
    int rc = sg_rewrite_run_opts(g, names, 1, &opt, NULL);
    if (rc) return rc;
    if (ran) *ran = true;
    if (summary && n && g->n_pass_log)
        snprintf(summary, n, "%s", g->pass_log[g->n_pass_log - 1].summary);
    return SG_OK;
}
#endif /* !SGCAP_IN_APP */
