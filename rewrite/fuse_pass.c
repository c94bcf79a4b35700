/* fuse_pass.c: the `fuse` pass. For every candidate chain of the
 * fusion-legality finder: each kernel's PTX (code report: PTX image,
 * fatbin pick, recompiled NVRTC source), the stage analysis, runs of
 * stages that can be one kernel (a stage refused ends a run; a cross-stage
 * conflict splits it), and for each run of two or more: the plan, the
 * generated kernel compiled by NVRTC, and the graph surgery: the fused
 * node replaces the run (sg_graph_merge_chain keeps every outside edge),
 * mem_free nodes between its kernels are sunk below it, the fused code goes
 * into the bundle as a cubin image (the node's) and a PTX image, and the
 * root's fusions table records the stages and the dropped writes.
 *
 * Orderings: the fused node keeps the first stage's id and every edge into
 * or out of the run; a sunk free follows the fused node, and whatever
 * followed the run now follows the last sunk free, so every ordering of the
 * input survives (the verifier checks it). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !SGCAP_IN_APP
#include "code/code_report.h" /* offline: PTX from the bundle's images */
#endif
#include "code/fatbin.h"
#include "fuse.h"
#include "graph/views.h"
#include "fusion_legality.h"
#include "graph/comm.h"
#include "graph/plural.h"
#include "rewrite_internal.h"

/* ---- code per stage ------------------------------------------------------------------ */

typedef struct {
    char hash[17];          /* of the PTX text */
    sg_ptx_module_t *mod;
} module_entry_t;

typedef struct {
    uint32_t image;
    char *kernel;
    uint32_t module;        /* index in modules, SG_NONE: none */
    char reason[SG_FZ_REASON];
} kernel_code_t;

typedef struct {
    sg_pass_ctx_t *ctx;
    uint32_t arch;
    module_entry_t *modules;
    uint32_t n_modules;
    kernel_code_t *codes;
    uint32_t n_codes;
    sg_access_cache_t *access; /* the access analysis of each (module, kernel, layout) */
    /* totals for the summary */
    uint32_t fused, removed, splits, refused, chains;
    uint64_t start_us; /* when the pass began (the budget counts from it) */
} fuse_t;

static uint64_t mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void fuse_free(fuse_t *f)
{
    for (uint32_t i = 0; i < f->n_modules; i++) sg_ptx_module_free(f->modules[i].mod);
    free(f->modules);
    for (uint32_t i = 0; i < f->n_codes; i++) free(f->codes[i].kernel);
    free(f->codes);
    sg_access_cache_destroy(f->access);
}

/* The parsed PTX module holding kernel node k, or NULL with why. */
static const sg_ptx_module_t *stage_module(fuse_t *f, const sg_kernel_t *k, const char **why)
{
    for (uint32_t i = 0; i < f->n_codes; i++) {
        kernel_code_t *c = &f->codes[i];
        if (c->image == k->image && !strcmp(c->kernel, k->name)) {
            *why = c->reason;
            return c->module == SG_NONE ? NULL : f->modules[c->module].mod;
        }
    }
    kernel_code_t *nc = realloc(f->codes, (f->n_codes + 1) * sizeof *nc);
    if (!nc) {
        *why = "out of memory";
        return NULL;
    }
    f->codes = nc;
    kernel_code_t *c = &nc[f->n_codes];
    memset(c, 0, sizeof *c);
    c->image = k->image;
    c->kernel = strdup(k->name);
    c->module = SG_NONE;
    if (!c->kernel) {
        *why = "out of memory";
        return NULL;
    }
    f->n_codes++;
    *why = c->reason;
    sg_comm_library_t lib = sg_kernel_comm_library(k->name);
    if (lib != SG_COMM_NONE) { /* its PTX would not tell: it waits on other ranks */
        snprintf(c->reason, sizeof c->reason, "an %s kernel: it talks to peer ranks, never fused",
                 sg_comm_library_name(lib));
        return NULL;
    }
    char *ptx = NULL;
    size_t len = 0;
    const sg_rewrite_options_t *opt = f->ctx->opt;
    if (opt->kernel_ptx) {
        char w[SG_FZ_REASON - 16] = "";
        int rc = opt->kernel_ptx(opt->kernel_ptx_user, f->ctx->g, k->name, k->image, f->arch, &ptx,
                                 &len, w, sizeof w);
        if (rc || !ptx) {
            snprintf(c->reason, sizeof c->reason, "no PTX: %s", rc ? sg_strerror(rc) : w);
            free(ptx);
            return NULL;
        }
    } else {
#if SGCAP_IN_APP
        snprintf(c->reason, sizeof c->reason, "no PTX: no code provider in the app");
        return NULL;
#else
        sg_code_report_options_t o = {0};
        o.device_arch = f->arch;
        o.recompile_nvrtc = true;
        o.files = opt->source;
        sg_code_report_row_t row;
        int rc = sg_code_kernel_ptx(f->ctx->g, opt->bundle, k->name, k->image, &o, &ptx, &len, &row);
        if (rc || !ptx) {
            snprintf(c->reason, sizeof c->reason, "no PTX: %s (%s)", rc ? sg_strerror(rc) : row.detail,
                     rc ? "" : sg_ptx_reason_name(row.reason));
            free(ptx);
            return NULL;
        }
#endif
    }
    char hash[17];
    sg_code_hash(ptx, len, hash);
    for (uint32_t i = 0; i < f->n_modules; i++)
        if (!strcmp(f->modules[i].hash, hash)) {
            c->module = i;
            free(ptx);
            return f->modules[i].mod;
        }
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    int rc = sg_ptx_parse(ptx, len, NULL, &m, &err);
    free(ptx);
    if (rc) {
        snprintf(c->reason, sizeof c->reason, "the PTX does not parse: %s", err.message);
        return NULL;
    }
    module_entry_t *nm = realloc(f->modules, (f->n_modules + 1) * sizeof *nm);
    if (!nm) {
        sg_ptx_module_free(m);
        snprintf(c->reason, sizeof c->reason, "out of memory");
        return NULL;
    }
    f->modules = nm;
    memcpy(nm[f->n_modules].hash, hash, sizeof hash);
    nm[f->n_modules].mod = m;
    c->module = f->n_modules++;
    return m;
}

/* A stage's analysis, with the kernel's access facts made once per module,
 * kernel and parameter layout (identical stages in a chain share them). */
static int analyze_stage(fuse_t *f, const sg_ptx_module_t *m, const sg_node_t *x, sg_fz_stage_t *st)
{
    const char *mh = "";
    for (uint32_t i = 0; i < f->n_modules; i++)
        if (f->modules[i].mod == m) mh = f->modules[i].hash;
    const sg_kernel_t *k = &x->u.kernel;
    char key[17];
    sg_access_key(mh, k->name, k->n_params, k->param_offsets, k->param_sizes, key);
    if (!f->access && !(f->access = sg_access_cache_create())) return SG_ENOMEM;
    const sg_access_kernel_t *ak = sg_access_cache_get(f->access, key);
    if (!ak) {
        sg_access_kernel_t fresh;
        int rc = sg_access_analyze_ptx(m, k->name, &fresh);
        if (rc && rc != SG_ENOENT) {
            sg_access_kernel_free(&fresh);
            return rc;
        }
        if ((rc = sg_access_cache_put(f->access, key, &fresh))) {
            sg_access_kernel_free(&fresh);
            return rc;
        }
        ak = sg_access_cache_get(f->access, key);
    }
    return sg_fz_stage_analyze_with(m, ak, x, st);
}

/* ---- images and files -------------------------------------------------------------------- */

static int add_file_image(fuse_t *f, sg_image_kind_t kind, const void *bytes, size_t n,
                          uint32_t arch, uint32_t *out)
{
    sg_graph_t *g = f->ctx->g;
    char hash[17];
    sg_code_hash(bytes, n, hash);
    for (uint32_t i = 0; i < g->n_images; i++)
        if (!strcmp(g->images[i].hash, hash) && g->images[i].kind == kind) {
            *out = i;
            return SG_OK;
        }
    sg_rewrite_files_t *fl = f->ctx->opt->files;
    if (fl->n == fl->cap) {
        size_t nc = fl->cap ? fl->cap * 2 : 8;
        sg_rewrite_file_t *p = realloc(fl->files, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        fl->files = p;
        fl->cap = nc;
    }
    sg_rewrite_file_t *file = &fl->files[fl->n];
    memset(file, 0, sizeof *file);
    snprintf(file->relpath, sizeof file->relpath, "code/%s.%s", hash, kind == SG_IMAGE_PTX ? "ptx" : "cubin");
    file->data = malloc(n ? n : 1);
    if (!file->data) return SG_ENOMEM;
    memcpy(file->data, bytes, n);
    file->size = n;
    uint32_t id;
    int rc = sg_graph_add_image(g, kind, hash, n, &id);
    if (rc) {
        free(file->data);
        return rc;
    }
    fl->n++;
    sg_image_t *im = sg_graph_image(g, id);
    im->file = strdup(file->relpath);
    uint32_t *a = malloc(sizeof *a);
    char note[] = "fused kernel generated by sgcap rewrite --passes fuse";
    im->note = strdup(note);
    if (!im->file || !a || !im->note) {
        free(a);
        return SG_ENOMEM;
    }
    *a = arch;
    if (kind == SG_IMAGE_PTX) {
        im->ptx_archs = a;
        im->n_ptx_archs = 1;
    } else {
        im->sass_archs = a;
        im->n_sass_archs = 1;
    }
    *out = id;
    return SG_OK;
}

/* ---- graph surgery ------------------------------------------------------------------------ */

/* The only in- (dir 1) or out- (dir 0) neighbour of node x. */
static sg_node_id_t lone_neighbour(const sg_graph_t *g, sg_node_id_t x, int dir)
{
    uint32_t n;
    const sg_edge_id_t *e = dir ? sg_graph_in_edges(g, x, &n) : sg_graph_out_edges(g, x, &n);
    if (!n) return SG_NONE;
    const sg_edge_t *ed = sg_graph_edge(g, e[0]);
    return dir ? ed->from : ed->to;
}

static int remove_all_edges(sg_graph_t *g, sg_node_id_t x)
{
    for (;;) {
        uint32_t n;
        const sg_edge_id_t *e = sg_graph_in_edges(g, x, &n);
        if (!n) e = sg_graph_out_edges(g, x, &n);
        if (!n) return SG_OK;
        int rc = sg_graph_remove_edge(g, e[0]);
        if (rc) return rc;
    }
}

static int add_stream_edge(sg_graph_t *g, sg_node_id_t a, sg_node_id_t b)
{
    if (sg_graph_find_edge(g, a, b) != SG_NONE) return SG_OK;
    return sg_graph_add_edge(g, a, b, SG_EDGE_STREAM, SG_NONE, NULL);
}

static bool in_list(const uint32_t *a, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] == x) return true;
    return false;
}

/* Replace kernels ks[0..n) (frees[0..nf) between them) by one node with
 * payload k, whose accesses are the stages' except those to the buffers
 * untouched[0..nu) (the fused code no longer reaches them). */
static int replace_run(sg_graph_t *g, const sg_node_id_t *ks, uint32_t n, const sg_node_id_t *frees,
                       uint32_t nf, const uint32_t *untouched, uint32_t nu, const sg_kernel_t *k,
                       const char *label)
{
    int rc;
    /* 1. take the frees out of the run, joining their neighbours */
    for (uint32_t i = 0; i < nf; i++) {
        sg_node_id_t p = lone_neighbour(g, frees[i], 1), q = lone_neighbour(g, frees[i], 0);
        if (p == SG_NONE || q == SG_NONE) return SG_EINVAL;
        if ((rc = remove_all_edges(g, frees[i])) || (rc = add_stream_edge(g, p, q))) return rc;
    }
    /* 2. merge: every outside edge re-attached to ks[0] */
    sg_access_t *acc = NULL;
    uint32_t nacc = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_node_t *x = sg_graph_node(g, ks[i]);
        sg_access_t *na = realloc(acc, (nacc + x->n_accesses + 1) * sizeof *na);
        if (!na) {
            free(acc);
            return SG_ENOMEM;
        }
        acc = na;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            bool dup = in_list(untouched, nu, x->accesses[a].buffer);
            for (uint32_t b = 0; b < nacc && !dup; b++)
                dup = !memcmp(&acc[b], &x->accesses[a], sizeof *acc);
            if (!dup) acc[nacc++] = x->accesses[a];
        }
    }
    if ((rc = sg_graph_merge_chain(g, ks, n))) {
        free(acc);
        return rc;
    }
    rc = sg_node_set_accesses(g, ks[0], NULL, 0); /* (its list may be a place in a block) */
    for (uint32_t a = 0; a < nacc && !rc; a++)
        rc = sg_node_add_access(g, ks[0], acc[a].buffer, acc[a].offset, acc[a].size, acc[a].mode);
    free(acc);
    if (rc) return rc;
    /* 3. the fused payload */
    if ((rc = sg_node_set_kernel_name(g, ks[0], k->name)) ||
        (rc = sg_node_set_kernel_params(g, ks[0], k->n_params, k->param_offsets, k->param_sizes,
                                        k->param_bytes, k->params_size)) ||
        (rc = sg_node_set_label(g, ks[0], label)))
        return rc;
    sg_node_t *fx = sg_graph_node(g, ks[0]);
    fx->synthesized = true;
    fx->duration_ns = -1;
    sg_kernel_t *fk = &fx->u.kernel;
    fk->image = k->image;
    memcpy(fk->grid, k->grid, sizeof fk->grid);
    memcpy(fk->block, k->block, sizeof fk->block);
    memset(fk->cluster, 0, sizeof fk->cluster);
    fk->shared_bytes = 0;
    fk->func_handle = 0;
    /* 4. the frees follow the fused node; what followed it follows them */
    if (nf) {
        for (;;) {
            uint32_t m;
            const sg_edge_id_t *out = sg_graph_out_edges(g, ks[0], &m);
            if (!m) break;
            sg_edge_t e = *sg_graph_edge(g, out[0]);
            if ((rc = sg_graph_remove_edge(g, e.id))) return rc;
            sg_edge_id_t ne;
            if ((rc = sg_graph_add_edge(g, frees[nf - 1], e.to, e.kind, e.event, &ne))) return rc;
            sg_edge_t *pe = sg_graph_edge(g, ne);
            pe->from_port = e.from_port;
            pe->to_port = e.to_port;
            pe->cuda_type = e.cuda_type;
        }
        if ((rc = add_stream_edge(g, ks[0], frees[0]))) return rc;
        for (uint32_t i = 1; i < nf; i++)
            if ((rc = add_stream_edge(g, frees[i - 1], frees[i]))) return rc;
    }
    return SG_OK;
}

/* Can node x be removed with its predecessors ordered before its
 * successors directly? Only plain dependencies (port 0, default type): a
 * programmatic or port edge has no meaning joined to another. */
static bool plain_edges(const sg_graph_t *g, sg_node_id_t x)
{
    for (int dir = 0; dir < 2; dir++) {
        uint32_t n;
        const sg_edge_id_t *e = dir ? sg_graph_in_edges(g, x, &n) : sg_graph_out_edges(g, x, &n);
        for (uint32_t i = 0; i < n; i++) {
            const sg_edge_t *ed = sg_graph_edge(g, e[i]);
            if (ed->from_port || ed->to_port || ed->cuda_type) return false;
        }
    }
    return true;
}

/* Remove node x, ordering each predecessor before each successor instead.
 * The new edge keeps a cross-stream kind (and its event) from either side,
 * the incoming one first: that is where another stream joined. */
static int bypass_node(sg_graph_t *g, sg_node_id_t x)
{
    uint32_t ni, no;
    const sg_edge_id_t *pi = sg_graph_in_edges(g, x, &ni);
    const sg_edge_id_t *po = sg_graph_out_edges(g, x, &no);
    sg_edge_t *in = malloc((ni + 1) * sizeof *in), *out = malloc((no + 1) * sizeof *out);
    int rc = in && out ? SG_OK : SG_ENOMEM;
    for (uint32_t i = 0; i < ni && !rc; i++) in[i] = *sg_graph_edge(g, pi[i]);
    for (uint32_t i = 0; i < no && !rc; i++) out[i] = *sg_graph_edge(g, po[i]);
    for (uint32_t i = 0; i < ni && !rc; i++)
        for (uint32_t o = 0; o < no && !rc; o++) {
            if (sg_graph_find_edge(g, in[i].from, out[o].to) != SG_NONE) continue;
            const sg_edge_t *k = in[i].kind != SG_EDGE_STREAM ? &in[i] : &out[o];
            rc = sg_graph_add_edge(g, in[i].from, out[o].to, k->kind, k->event, NULL);
        }
    if (!rc) rc = sg_graph_remove_node(g, x);
    free(in);
    free(out);
    return rc;
}

#define MAX_MEM_NODES 64 /* mem_alloc + mem_free nodes of one buffer we remove */

/* One graph allocation whose memory nodes went. */
typedef struct {
    uint32_t buffer;
    sg_node_id_t nodes[MAX_MEM_NODES]; /* its mem_alloc node first, then its frees */
    uint32_t n;
} removed_alloc_t;

/* The graph allocations among bufs[0..nb) that no node touches any more
 * (the fused kernel left them alone, and every other user was a stage of
 * it): their mem_alloc and mem_free nodes are removed too, so the fused
 * dead chain is the one kernel. With seven unused 64 MiB allocations left
 * in it, the benchmark's fused graph took 89 us for a kernel that moves
 * 35 us of bytes (docs/FUSION.md section 2). out (capacity nb) gets what
 * went, *n_out how many. */
static int drop_allocations(fuse_t *f, const uint32_t *bufs, uint32_t nb, removed_alloc_t *out,
                            uint32_t *n_out)
{
    sg_graph_t *g = f->ctx->g;
    *n_out = 0;
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t b = bufs[i];
        sg_buffer_t *buf = sg_graph_buffer(g, b);
        if (!buf || buf->kind != SG_BUFFER_GRAPH_ALLOC) continue;
        removed_alloc_t *r = &out[*n_out];
        r->buffer = b;
        r->n = 1;
        uint32_t allocs = 0;
        bool used = false;
        for (uint32_t id = 0; id < g->n_nodes && !used; id++) {
            const sg_node_t *x = sg_graph_node(g, id);
            if (!x) continue;
            if (x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) {
                if (x->u.mem.buffer != b) continue;
                if (!plain_edges(g, id)) used = true;
                else if (x->type == SG_NODE_MEM_ALLOC) r->nodes[0] = id, allocs++;
                else if (r->n < MAX_MEM_NODES) r->nodes[r->n++] = id;
                else used = true;
                continue;
            }
            for (uint32_t a = 0; a < x->n_accesses && !used; a++) used = x->accesses[a].buffer == b;
        }
        if (used || allocs != 1) continue; /* touched, or not allocated by exactly one node */
        for (uint32_t k = 0; k < r->n; k++) {
            int rc = bypass_node(g, r->nodes[k]);
            if (rc) return rc;
        }
        buf->alloc_node = SG_NONE;
        char names[320] = "";
        size_t len = 0;
        for (uint32_t k = 0; k < r->n && len < sizeof names; k++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%sn%u (%s)", k ? ", " : "",
                                    r->nodes[k], k ? "mem_free" : "mem_alloc");
        char id[16];
        snprintf(id, sizeof id, "b%u", b);
        bool named = buf->label && strcmp(buf->label, id);
        sg_rw_printf(f->ctx, "    %s removed: nothing touches buffer %s%s%s%s any more\n", names,
                     named ? SG_RW_LABEL(buf->label) : id, named ? " (" : "", named ? id : "",
                     named ? ")" : "");
        (*n_out)++;
    }
    return SG_OK;
}

/* ---- one run --------------------------------------------------------------------------- */

static uint64_t site_bytes(const sg_fz_site_t *x)
{
    return (uint64_t)x->width * (x->hi - x->lo);
}

/* Fuse stages st[0..n) (nodes ks, frees between them). */
static int fuse_run(fuse_t *f, sg_fz_plan_t *plan, const sg_node_id_t *ks, uint32_t n,
                    const sg_fusion_chain_t *ch, sg_jw_t *runs)
{
    sg_pass_ctx_t *ctx = f->ctx;
    sg_graph_t *g = ctx->g;
    char err[900] = "";
    sg_fz_gen_options_t go;
    sg_fz_gen_options_default(&go);
    go.arch = f->arch;
    if (ctx->opt->fuse_block) go.block = ctx->opt->fuse_block;
    if (ctx->opt->fuse_elements) go.elements = ctx->opt->fuse_elements;
    sg_fz_source_t src;
    char first[96], last[96];
    sg_kernel_plain_name(g->nodes[ks[0]].u.kernel.name, first, sizeof first);
    sg_kernel_plain_name(g->nodes[ks[n - 1]].u.kernel.name, last, sizeof last);
    uint32_t max = ctx->opt->fuse_max_kernels, budget = ctx->opt->fuse_budget_ms;
    uint64_t took_us = mono_us() - f->start_us;
    bool spent = budget && took_us >= (uint64_t)budget * 1000u;
    int rc = (max && f->fused >= max) || spent ? SG_ELIMIT
                                               : sg_fz_generate(plan, &go, &src, err, sizeof err);
    if (rc == SG_ELIMIT) {
        if (spent)
            snprintf(err, sizeof err, "the time budget of %u ms is spent (%.0f ms)", budget,
                     (double)took_us / 1000.0);
        else
            snprintf(err, sizeof err, "the limit of %u fused %s per graph is reached", max,
                     sg_plural(max, "kernel", "kernels"));
        memset(&src, 0, sizeof src);
    }
    if (rc == SG_ENOMEM) return rc;
    sg_fz_binary_t bin;
    memset(&bin, 0, sizeof bin);
    if (!rc) rc = sg_fz_compile(&src, f->arch, &bin, err, sizeof err);
    if (rc == SG_ENOMEM) {
        sg_fz_source_free(&src);
        return rc;
    }
    if (rc) {
        sg_rw_printf(ctx, "  not fused: n%u..n%u (%s .. %s): %s\n", ks[0], ks[n - 1],
                     SG_RW_LABEL(first), SG_RW_LABEL(last), SG_RW_NOTE(err));
        sg_jw_object(runs);
        sg_jw_kstring(runs, "status", "failed");
        sg_jw_kint(runs, "first", ks[0]);
        sg_jw_kint(runs, "last", ks[n - 1]);
        sg_jw_kstring(runs, "reason", err);
        sg_jw_end(runs);
        f->refused++;
        sg_fz_source_free(&src);
        return SG_OK;
    }
    /* bytes moved, before and after */
    uint64_t before = 0, after = 0;
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t i = 0; i < plan->stages[s].n_sites; i++) {
            const sg_fz_site_t *x = &plan->stages[s].sites[i];
            before += site_bytes(x);
            if (!plan->slots[plan->site_slot[plan->site_base[s] + i]].lifted) after += site_bytes(x);
        }
    uint32_t dropped = 0;
    for (uint32_t k = 0; k < plan->n_slots; k++) {
        const sg_fz_slot_t *y = &plan->slots[k];
        if (!y->lifted) continue;
        if (y->preload) after += (uint64_t)y->width * y->preload_n;
        if (y->stored && !y->dead) after += (uint64_t)y->width * plan->elements;
        if (y->dead) dropped++;
    }
    /* frees inside this run */
    sg_node_id_t frees[64];
    uint32_t nf = 0;
    uint64_t lo = g->nodes[ks[0]].seq, hi = g->nodes[ks[n - 1]].seq;
    for (uint32_t i = 0; i < ch->n_frees && nf < 64; i++) {
        const sg_node_t *x = sg_graph_node(g, ch->frees[i]); /* NULL: removed by an earlier run */
        if (x && x->seq > lo && x->seq < hi) frees[nf++] = ch->frees[i];
    }
    /* images */
    uint32_t cubin_img, ptx_img;
    if ((rc = add_file_image(f, SG_IMAGE_CUBIN, bin.cubin, bin.cubin_len, f->arch, &cubin_img)) ||
        (rc = add_file_image(f, SG_IMAGE_PTX, bin.ptx, bin.ptx_len, f->arch, &ptx_img)))
        goto out;
    /* the fused payload: each stage's parameter bytes at its offset */
    sg_kernel_t k;
    memset(&k, 0, sizeof k);
    k.name = src.name;
    k.image = cubin_img;
    k.grid[0] = src.grid;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = src.block;
    k.block[1] = k.block[2] = 1;
    k.n_params = src.n_params;
    k.param_offsets = src.param_offsets;
    k.param_sizes = src.param_sizes;
    k.params_size = src.params_size;
    k.param_bytes = calloc(src.params_size ? src.params_size : 1, 1);
    if (!k.param_bytes) {
        rc = SG_ENOMEM;
        goto out;
    }
    /* the record, before the stage nodes are gone */
    sg_fusion_t *rec;
    if ((rc = sg_graph_add_fusion(g, ks[0], &rec))) {
        free(k.param_bytes);
        goto out;
    }
    memcpy(rec->hash, src.hash, sizeof rec->hash);
    rec->tier = plan->cta ? 2 : 1;
    rec->codegen = strdup(plan->real_mode ? "inline, original geometry" : "inline");
    rec->ptx_image = ptx_img;
    rec->cubin_image = cubin_img;
    rec->registers = bin.registers;
    rec->spill_bytes = bin.spill_bytes;
    for (uint32_t s = 0; s < n && !rc; s++) {
        const sg_node_t *x = &g->nodes[ks[s]];
        memcpy(k.param_bytes + src.param_offsets[s], x->u.kernel.param_bytes, x->u.kernel.params_size);
        rc = sg_fusion_add_stage(rec, ks[s], x->seq, &x->u.kernel, src.param_offsets[s]);
    }
    for (uint32_t j = 0; j < plan->n_slots && !rc; j++) {
        const sg_fz_slot_t *y = &plan->slots[j];
        if (!y->lifted || !y->stored || y->buffer == SG_NONE) continue;
        const sg_buffer_t *b = sg_graph_buffer(g, y->buffer);
        uint64_t off = y->addr0 - b->address, size = (uint64_t)y->width * plan->elements;
        if (off + size > b->size) size = b->size - off;
        for (uint32_t s = 0; s < n && !rc; s++) {
            bool stores = false;
            for (uint32_t i = 0; i < plan->stages[s].n_sites; i++)
                stores |= plan->stages[s].sites[i].store && plan->site_slot[plan->site_base[s] + i] == j;
            if (!stores) continue;
            if (y->dead)
                rc = sg_fusion_add_dropped(rec, s, y->buffer, off, size,
                                           "graph allocation freed in this graph; every reader is a "
                                           "stage of this kernel (forwarded in registers)");
            else if (s != y->last_store_stage)
                rc = sg_fusion_add_dropped(rec, s, y->buffer, off, size,
                                           "overwritten by a later stage of this kernel before "
                                           "anything else can read it");
        }
    }
    if (!rc && !rec->codegen) rc = SG_ENOMEM;
    char label[256];
    snprintf(label, sizeof label, "fused %u stages: %s .. %s", n, first, last);
    uint32_t *untouched = malloc((plan->n_slots + 1) * sizeof *untouched);
    removed_alloc_t *gone = malloc((plan->n_slots + 1) * sizeof *gone);
    uint32_t nu = untouched ? sg_fz_plan_untouched_buffers(g, plan, untouched, plan->n_slots) : 0;
    uint32_t n_gone = 0;
    if ((!untouched || !gone) && !rc) rc = SG_ENOMEM;
    if (!rc) rc = replace_run(g, ks, n, frees, nf, untouched, nu, &k, label);
    free(k.param_bytes);
    if (rc) {
        free(untouched);
        free(gone);
        goto out;
    }
    sg_rw_printf(ctx,
                 "  fused n%u: %s, %u stages (%s .. %s), tier %u%s, grid %u block %u, %d registers, "
                 "%d spill bytes%s\n",
                 ks[0], src.name, n, SG_RW_LABEL(first), SG_RW_LABEL(last), plan->cta ? 2 : 1,
                 plan->cta ? " (CTA-wide: barriers between stages)"
                 : plan->real_mode ? " (grid-stride: accesses kept in memory)" : "",
                 src.grid, src.block, bin.registers, bin.spill_bytes, bin.cached ? " (cached)" : "");
    sg_rw_printf(ctx, "    bytes moved: %" PRIu64 " -> %" PRIu64 " (%.2fx less); writes dropped: %u\n",
                 before, after, after ? (double)before / (double)after : 0.0, dropped);
    for (uint32_t i = 0; i < nf; i++) sg_rw_printf(ctx, "    n%u (mem_free) sunk below it\n", frees[i]);
    rc = drop_allocations(f, untouched, nu, gone, &n_gone);
    free(untouched);
    if (rc) {
        free(gone);
        goto out;
    }
    sg_jw_object(runs);
    sg_jw_kstring(runs, "status", "fused");
    sg_jw_kint(runs, "node", ks[0]);
    sg_jw_kstring(runs, "kernel", src.name);
    sg_jw_key(runs, "stages");
    sg_jw_array(runs);
    for (uint32_t s = 0; s < n; s++) sg_jw_int(runs, ks[s]);
    sg_jw_end(runs);
    sg_jw_key(runs, "frees_sunk");
    sg_jw_array(runs);
    for (uint32_t i = 0; i < nf; i++) sg_jw_int(runs, frees[i]);
    sg_jw_end(runs);
    sg_jw_key(runs, "allocations_removed");
    sg_jw_array(runs);
    for (uint32_t i = 0; i < n_gone; i++) {
        sg_jw_object(runs);
        sg_jw_kint(runs, "buffer", gone[i].buffer);
        sg_jw_kint(runs, "alloc", gone[i].nodes[0]);
        sg_jw_key(runs, "frees");
        sg_jw_array(runs);
        for (uint32_t j = 1; j < gone[i].n; j++) sg_jw_int(runs, gone[i].nodes[j]);
        sg_jw_end(runs);
        sg_jw_end(runs);
    }
    sg_jw_end(runs);
    free(gone);
    sg_jw_kint(runs, "registers", bin.registers);
    sg_jw_kint(runs, "spill_bytes", bin.spill_bytes);
    sg_jw_kint(runs, "bytes_before", (long long)before);
    sg_jw_kint(runs, "bytes_after", (long long)after);
    sg_jw_kint(runs, "writes_dropped", dropped);
    sg_jw_end(runs);
    f->fused++;
    f->removed += n - 1;
out:
    sg_fz_binary_free(&bin);
    sg_fz_source_free(&src);
    return rc;
}

/* ---- one chain ------------------------------------------------------------------------------ */

/* The chain's record goes into arr as it is made: its runs straight into
 * arr, the refusals (made between them) into a writer of their own,
 * spliced in after the runs. */
static int fuse_chain(fuse_t *f, const sg_fusion_chain_t *ch, sg_jw_t *arr)
{
    sg_pass_ctx_t *ctx = f->ctx;
    sg_graph_t *g = ctx->g;
    uint32_t n = ch->n_nodes;
    sg_fz_stage_t *st = calloc(n, sizeof *st);
    sg_node_id_t *ids = malloc(n * sizeof *ids);
    sg_jw_t refusals;
    int rc = SG_OK;
    if (!st || !ids) {
        free(st);
        free(ids);
        return SG_ENOMEM;
    }
    memcpy(ids, ch->nodes, n * sizeof *ids);
    sg_jw_object(arr);
    sg_jw_kstring(arr, "stream", sg_rw_stream_label(g, ch->stream));
    sg_jw_kint(arr, "first", ids[0]);
    sg_jw_init(&refusals, sg_jw_depth(arr));
    sg_jw_array(&refusals);
    sg_jw_key(arr, "runs");
    sg_jw_array(arr);
    const sg_kernel_t *k0 = &g->nodes[ids[0]].u.kernel;
    sg_rw_printf(ctx, "chain %s: %u kernels n%u..n%u, grid %u block %u%s\n",
                 SG_RW_STREAM(g, ch->stream), n, ids[0], ids[n - 1], k0->grid[0], k0->block[0],
                 ch->n_frees ? ", with frees between them" : "");
    f->chains++;
    /* analyze every stage first (the nodes are still there) */
    for (uint32_t s = 0; s < n && !rc; s++) {
        const sg_node_t *x = &g->nodes[ids[s]];
        const char *why = "";
        const sg_ptx_module_t *m = stage_module(f, &x->u.kernel, &why);
        if (!m) {
            snprintf(st[s].reason, sizeof st[s].reason, "%s", why);
            st[s].node = x;
            continue;
        }
        rc = analyze_stage(f, m, x, &st[s]);
    }
    if (rc) goto out;
    uint32_t start = 0;
    while (start < n && !rc) {
        char nm[96];
        if (!st[start].ok) {
            sg_rw_printf(ctx, "  refused stage %u (n%u %s): %s\n", start, ids[start],
                         SG_RW_LABEL(sg_kernel_plain_name(g->nodes[ids[start]].u.kernel.name, nm, sizeof nm)),
                         SG_RW_NOTE(st[start].reason));
            sg_jw_object(&refusals);
            sg_jw_kint(&refusals, "stage", start);
            sg_jw_kint(&refusals, "node", ids[start]);
            sg_jw_kstring(&refusals, "reason", st[start].reason);
            sg_jw_end(&refusals);
            f->refused++;
            start++;
            continue;
        }
        uint32_t end = start + 1;
        while (end < n && st[end].ok) end++;
        /* plan [start, end); a conflict splits it */
        sg_fz_plan_t plan;
        if ((rc = sg_fz_plan(g, st + start, end - start, &plan))) break;
        uint32_t len = plan.n_stages;
        if (plan.split_at != SG_NONE) {
            uint32_t at = start + plan.split_at;
            sg_rw_printf(ctx, "  split before stage %u (n%u %s): %s\n", at, ids[at],
                         SG_RW_LABEL(sg_kernel_plain_name(g->nodes[ids[at]].u.kernel.name, nm, sizeof nm)),
                         SG_RW_NOTE(plan.split_reason));
            sg_jw_object(&refusals);
            sg_jw_kint(&refusals, "stage", at);
            sg_jw_kint(&refusals, "node", ids[at]);
            sg_jw_kstring(&refusals, "split", "before");
            sg_jw_kstring(&refusals, "reason", plan.split_reason);
            sg_jw_end(&refusals);
            f->splits++;
        }
        if (len >= 2)
            rc = fuse_run(f, &plan, ids + start, len, ch, arr);
        else if (len == 0)
            len = 1; /* the first stage conflicts with itself: on its own */
        sg_fz_plan_free(&plan);
        start += len;
    }
out:
    sg_jw_end(arr); /* runs */
    sg_jw_end(&refusals);
    sg_jw_key(arr, "refused");
    sg_jw_raw(arr, sg_jw_text(&refusals), refusals.len);
    sg_jw_end(arr);
    if (!rc) rc = refusals.err;
    sg_jw_free(&refusals);
    for (uint32_t s = 0; s < n && st; s++) sg_fz_stage_free(&st[s]);
    free(st);
    free(ids);
    return rc;
}

int sg_pass_fuse(sg_pass_ctx_t *ctx)
{
    sg_graph_t *g = ctx->g;
    fuse_t f;
    memset(&f, 0, sizeof f);
    f.start_us = mono_us();
    f.ctx = ctx;
    f.arch = ctx->opt->fuse_arch ? ctx->opt->fuse_arch
                                 : sg_code_arch_of(g->device.cc_major, g->device.cc_minor);
    if ((!ctx->opt->bundle && !ctx->opt->kernel_ptx) || !ctx->opt->files) {
        sg_rw_printf(ctx, "no bundle to read kernel code from: nothing fused (run it through "
                          "sgcap rewrite)\n");
        sg_rw_summary(ctx, "nothing fused: no kernel code available");
        sg_jw_t *arr = sg_rw_json_member(ctx, "chains");
        sg_jw_array(arr);
        sg_jw_end(arr);
        return SG_OK;
    }
    sg_fusion_chains_t fc;
    int rc = sg_fusion_chains_find(g, &fc);
    if (rc) return rc;
    sg_jw_t *arr = sg_rw_json_member(ctx, "chains");
    sg_jw_array(arr);
    /* chain node ids stay valid: a fused run keeps its first id and only
     * removes nodes of its own chain */
    for (uint32_t c = 0; c < fc.n_chains && !rc; c++)
        if (fc.chains[c].n_nodes >= 2) rc = fuse_chain(&f, &fc.chains[c], arr);
    sg_jw_end(arr);
    sg_rw_json_set(ctx, "arch", json_integer(f.arch));
    sg_rw_summary(ctx, "%u candidate %s: %u fused %s replacing %u %s; %u %s, %u %s (sm_%u)",
                  f.chains, sg_plural(f.chains, "chain", "chains"), f.fused,
                  sg_plural(f.fused, "kernel", "kernels"), f.removed,
                  sg_plural(f.removed, "launch", "launches"), f.splits,
                  sg_plural(f.splits, "split", "splits"), f.refused,
                  sg_plural(f.refused, "refusal", "refusals"), f.arch);
    sg_fusion_chains_free(&fc);
    fuse_free(&f);
    return rc;
}
