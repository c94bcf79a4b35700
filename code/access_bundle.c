/* access_bundle.c: a bundle's kernel node -> its access analysis (see
 * access_bundle.h): PTX first, SASS through nvdisasm next, else a reason;
 * cached per (image hash, name, layout), nvdisasm batched per image, or for
 * the whole graph at once (sg_access_bundle_prefetch). */
#include "access_bundle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "code/code_report.h"
#include "code/elf_image.h"
#include "code/fatbin.h"
#include "code/ptx.h"

/* A kernel name used with one image somewhere in the graph. */
typedef struct {
    char *name;
    UT_hash_handle hh;
} name_t;

/* What the SASS path knows about one image, loaded on first need. */
typedef struct {
    name_t *names;        /* the graph's kernels of this image */
    const char **list;    /* the same as an array, for one batched nvdisasm run */
    uint32_t n_names;
    bool loaded, prefetched;
    uint8_t *cubin;       /* the device's SASS, or NULL (why says why) */
    size_t n;
    char why[200];
} image_state_t;

/* A parsed PTX module, by the hash of its text. */
typedef struct {
    char hash[17];
    sg_ptx_module_t *m;   /* NULL: it did not parse (err) */
    char err[160];
    UT_hash_handle hh;
} module_t;

struct sg_access_bundle {
    const sg_bundle_t *b;
    const sg_graph_t *g;
    sg_access_bundle_options_t opt;
    uint32_t arch;
    sg_access_cache_t *cache;
    sg_sass_cache_t *sass;
    image_state_t *images; /* by image index */
    module_t *modules;
    sg_access_bundle_stats_t st;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- the kernels of each image ---------------------------------------------------- */

static int add_name(image_state_t *im, const char *name)
{
    name_t *x = NULL;
    HASH_FIND_STR(im->names, name, x);
    if (x) return SG_OK;
    x = calloc(1, sizeof *x);
    if (!x || !(x->name = strdup(name))) {
        free(x);
        return SG_ENOMEM;
    }
    HASH_ADD_KEYPTR(hh, im->names, x->name, strlen(x->name), x);
    if (!x->hh.tbl) { /* HASH_NONFATAL_OOM: not added */
        free(x->name);
        free(x);
        return SG_ENOMEM;
    }
    im->n_names++;
    return SG_OK;
}

static int collect_names(sg_access_bundle_t *ab, const sg_graph_t *g, int depth)
{
    if (depth > SG_BUNDLE_MAX_DEPTH) return SG_OK;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        if (n->type == SG_NODE_KERNEL && n->u.kernel.name && n->u.kernel.image < ab->g->n_images) {
            int rc = add_name(&ab->images[n->u.kernel.image], n->u.kernel.name);
            if (rc) return rc;
        }
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child) {
            int rc = collect_names(ab, n->u.child, depth + 1);
            if (rc) return rc;
        }
        for (uint32_t k = 0; n->type == SG_NODE_CONDITIONAL && k < n->u.cond.n_bodies; k++) {
            int rc = collect_names(ab, n->u.cond.bodies[k], depth + 1);
            if (rc) return rc;
        }
    }
    return SG_OK;
}

int sg_access_bundle_open(const sg_bundle_t *b, const sg_graph_t *g,
                          const sg_access_bundle_options_t *opt, sg_access_bundle_t **out)
{
    if (!g || !out) return SG_EINVAL;
    *out = NULL;
    sg_access_bundle_t *ab = calloc(1, sizeof *ab);
    if (!ab) return SG_ENOMEM;
    ab->b = b;
    ab->g = g->root;
    if (opt) ab->opt = *opt;
    ab->arch = ab->opt.device_arch ? ab->opt.device_arch : sg_code_report_default_arch(ab->g);
    ab->cache = sg_access_cache_create();
    ab->sass = sg_sass_cache_new(&ab->opt.sass);
    ab->images = calloc(ab->g->n_images + 1, sizeof *ab->images);
    int rc = ab->cache && ab->sass && ab->images ? collect_names(ab, ab->g, 0) : SG_ENOMEM;
    if (rc) {
        sg_access_bundle_close(ab);
        return rc;
    }
    *out = ab;
    return SG_OK;
}

void sg_access_bundle_close(sg_access_bundle_t *ab)
{
    if (!ab) return;
    for (uint32_t i = 0; ab->images && i < ab->g->n_images; i++) {
        image_state_t *im = &ab->images[i];
        name_t *x, *t;
        HASH_ITER(hh, im->names, x, t)
        {
            HASH_DEL(im->names, x);
            free(x->name);
            free(x);
        }
        free(im->list);
        free(im->cubin);
    }
    free(ab->images);
    module_t *m, *t;
    HASH_ITER(hh, ab->modules, m, t)
    {
        HASH_DEL(ab->modules, m);
        sg_ptx_module_free(m->m);
        free(m);
    }
    sg_access_cache_destroy(ab->cache);
    sg_sass_cache_free(ab->sass);
    free(ab);
}

void sg_access_bundle_stats(const sg_access_bundle_t *ab, sg_access_bundle_stats_t *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!ab) return;
    *out = ab->st;
    sg_sass_cache_stats(ab->sass, &out->nvdisasm_runs, NULL);
}

/* ---- results without code ---------------------------------------------------------- */

static int unknown(sg_access_kernel_t *k, const sg_kernel_t *node, int status, uint8_t reason,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int unknown(sg_access_kernel_t *k, const sg_kernel_t *node, int status, uint8_t reason,
                   const char *fmt, ...)
{
    sg_access_kernel_free(k);
    k->kernel = strdup(node->name ? node->name : "");
    if (!k->kernel) return SG_ENOMEM;
    k->status = status;
    k->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->detail, sizeof k->detail, fmt, ap);
    va_end(ap);
    return SG_OK;
}

/* ---- PTX ------------------------------------------------------------------------------ */

static const sg_ptx_module_t *module_of(sg_access_bundle_t *ab, const char *ptx, size_t len,
                                        const char **err)
{
    char hash[17];
    sg_code_hash(ptx, len, hash);
    module_t *m = NULL;
    HASH_FIND_STR(ab->modules, hash, m);
    if (!m) {
        m = calloc(1, sizeof *m);
        if (!m) {
            *err = "out of memory";
            return NULL;
        }
        memcpy(m->hash, hash, sizeof hash);
        sg_ptx_error_t e;
        if (sg_ptx_parse(ptx, len, NULL, &m->m, &e) != SG_OK) {
            m->m = NULL;
            snprintf(m->err, sizeof m->err, "%.150s", e.message);
        }
        HASH_ADD_STR(ab->modules, hash, m);
    }
    *err = m->err;
    return m->m;
}

/* Analyse the kernel's PTX when the image (or its NVRTC source) has usable
 * PTX. *done false: there is none (row says why). */
static int from_ptx(sg_access_bundle_t *ab, const sg_kernel_t *node, sg_access_kernel_t *k,
                    sg_code_report_row_t *row, bool *done)
{
    *done = false;
    sg_code_report_options_t copt = {.device_arch = ab->arch,
                                     .recompile_nvrtc = !ab->opt.no_nvrtc,
                                     .files = ab->b};
    char *ptx = NULL;
    size_t len = 0;
    int rc = sg_code_kernel_ptx(ab->g, sg_bundle_path(ab->b), node->name, node->image, &copt, &ptx,
                                &len, row);
    if (rc) return rc == SG_ENOMEM ? rc : SG_OK;
    if (!ptx) return SG_OK;
    *done = true;
    const char *err = NULL;
    const sg_ptx_module_t *m = module_of(ab, ptx, len, &err);
    free(ptx);
    if (!m) return unknown(k, node, SG_EFORMAT, SG_ACCESS_R_PARSE, "PTX: %s", err);
    rc = sg_access_analyze_ptx(m, node->name, k);
    if (rc == SG_ENOENT) return SG_OK; /* k says so */
    return rc;
}

/* ---- SASS ------------------------------------------------------------------------------ */

static void image_fail(image_state_t *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void image_fail(image_state_t *im, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->why, sizeof im->why, fmt, ap);
    va_end(ap);
}

/* The image's SASS for the device: the cubin itself, or the fatbin entry
 * the driver would load. */
static int load_cubin(sg_access_bundle_t *ab, uint32_t index, image_state_t *im)
{
    im->loaded = true;
    const sg_image_t *img = sg_graph_image(ab->g, index);
    if (!img->file || !ab->b) {
        image_fail(im, "image %s: bytes not in the bundle", img->hash);
        return SG_OK;
    }
    void *data = NULL;
    size_t n = 0;
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    int rc = sg_bundle_load_image(ab->b, index, SG_CODE_REPORT_MAX_IMAGE, &data, &n, &diag);
    if (rc == SG_ENOMEM) return rc;
    if (rc) {
        char msg[160];
        image_fail(im, "%s", sg_diag_format(&diag, msg, sizeof msg));
        return SG_OK;
    }
    uint32_t arch = 0;
    switch (sg_code_image_sniff(data, n, NULL)) {
    case SG_CODE_FORMAT_CUBIN:
        if (sg_elf_cuda_arch(data, n, &arch) == SG_OK && arch / 10 != ab->arch / 10) {
            image_fail(im, "%s: a cubin for sm_%u, not for the device's sm_%u", img->file, arch,
                       ab->arch);
            break;
        }
        im->cubin = data;
        im->n = n;
        data = NULL;
        break;
    case SG_CODE_FORMAT_FATBIN: {
        sg_fatbin_t fb;
        char err[160];
        uint32_t entry;
        rc = sg_fatbin_parse(data, n, 0, &fb, err, sizeof err);
        if (rc == SG_ENOMEM) break;
        if (rc) {
            image_fail(im, "%s: %s", img->file, err);
            rc = SG_OK;
            break;
        }
        if (sg_sass_pick_cubin(&fb, ab->arch, &entry) != SG_OK) {
            image_fail(im, "%s: no SASS the driver would load on sm_%u", img->file, ab->arch);
        } else if ((rc = sg_fatbin_extract(&fb, entry, 0, &im->cubin, &im->n)) != SG_OK) {
            if (rc != SG_ENOMEM) image_fail(im, "%s: its sm_%u entry: %s", img->file,
                                            fb.entries[entry].arch, sg_strerror(rc));
            im->cubin = NULL;
            rc = rc == SG_ENOMEM ? rc : SG_OK;
        }
        sg_fatbin_free(&fb);
        break;
    }
    default:
        image_fail(im, "%s: no SASS in a %s image", img->file, sg_image_kind_name(img->kind));
        break;
    }
    free(data);
    return rc;
}

static int from_sass(sg_access_bundle_t *ab, const sg_kernel_t *node, sg_access_kernel_t *k,
                     const char *no_ptx)
{
    image_state_t *im = &ab->images[node->image];
    int rc;
    if (!im->loaded && (rc = load_cubin(ab, node->image, im))) return rc;
    if (!im->cubin)
        return unknown(k, node, SG_ENOENT, SG_ACCESS_R_NO_CODE, "no PTX (%.80s); no SASS: %.60s",
                       no_ptx, im->why);
    double t0 = now_ms();
    if (!im->prefetched) {
        /* one nvdisasm run for every kernel of the graph in this image */
        im->prefetched = true;
        im->list = malloc((im->n_names + 1) * sizeof *im->list);
        if (!im->list) return SG_ENOMEM;
        uint32_t i = 0;
        for (name_t *x = im->names; x; x = x->hh.next) im->list[i++] = x->name;
        if ((rc = sg_sass_cache_prefetch(ab->sass, im->cubin, im->n, im->list, i))) return rc;
        double per = (now_ms() - t0) / (i ? i : 1);
        if (per > ab->st.worst_sass_ms) ab->st.worst_sass_ms = per;
    }
    const sg_sass_kernel_t *sk = NULL;
    if ((rc = sg_sass_cache_get(ab->sass, im->cubin, im->n, node->name, &sk))) return rc;
    sg_access_kernel_free(k);
    rc = sg_access_from_sass(sk, node->n_params, node->param_offsets, node->param_sizes,
                             node->params_size, k);
    ab->st.sass_ms += now_ms() - t0;
    return rc;
}

/* ---- one nvdisasm batch for the whole graph ------------------------------------------- */

typedef struct {
    sg_sass_request_t *req;
    uint32_t n, cap;
} req_list_t;

/* The kernel nodes of g (and its bodies) that will take the SASS path: no
 * cached analysis, no PTX that analyses; their images' cubins loaded. */
static int gather_sass(sg_access_bundle_t *ab, const sg_graph_t *g, int depth, req_list_t *rl)
{
    if (depth > SG_BUNDLE_MAX_DEPTH) return SG_OK;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        int rc = SG_OK;
        if (!x) continue;
        if (x->type == SG_NODE_CHILD_GRAPH && x->u.child)
            rc = gather_sass(ab, x->u.child, depth + 1, rl);
        for (uint32_t b = 0; x->type == SG_NODE_CONDITIONAL && b < x->u.cond.n_bodies && !rc; b++)
            rc = gather_sass(ab, x->u.cond.bodies[b], depth + 1, rl);
        if (rc) return rc;
        if (x->type != SG_NODE_KERNEL) continue;
        const sg_kernel_t *node = &x->u.kernel;
        const sg_image_t *img = node->image == SG_NONE ? NULL : sg_graph_image(ab->g, node->image);
        if (!node->name || !node->name[0] || !img || !img->file || node->image >= ab->g->n_images)
            continue;
        image_state_t *im = &ab->images[node->image];
        if (im->prefetched) continue;
        char key[17];
        sg_access_key(img->hash, node->name, node->n_params, node->param_offsets,
                      node->param_sizes, key);
        if (sg_access_cache_get(ab->cache, key)) continue;
        /* the PTX path first, as analyse() does; a kernel it analyses is
         * cached now and needs no disassembly */
        sg_access_kernel_t k;
        sg_code_report_row_t row;
        bool done = false;
        memset(&k, 0, sizeof k);
        memset(&row, 0, sizeof row);
        double t0 = now_ms();
        rc = from_ptx(ab, node, &k, &row, &done);
        if (!rc && done && k.status == 0) {
            double ms = now_ms() - t0;
            ab->st.ptx_ms += ms;
            if (ms > ab->st.worst_ptx_ms) ab->st.worst_ptx_ms = ms;
            ab->st.kernels++;
            ab->st.ptx++;
            rc = sg_access_cache_put(ab->cache, key, &k);
        }
        sg_access_kernel_free(&k);
        if (rc) return rc;
        if (done && sg_access_cache_get(ab->cache, key)) continue;
        if (!im->loaded && (rc = load_cubin(ab, node->image, im))) return rc;
        if (!im->cubin) continue;
        if (rl->n == rl->cap) {
            uint32_t nc = rl->cap ? rl->cap * 2 : 16;
            sg_sass_request_t *nr = realloc(rl->req, nc * sizeof *nr);
            if (!nr) return SG_ENOMEM;
            rl->req = nr;
            rl->cap = nc;
        }
        rl->req[rl->n++] = (sg_sass_request_t){.cubin = im->cubin, .n = im->n, .name = node->name};
    }
    return SG_OK;
}

int sg_access_bundle_prefetch(sg_access_bundle_t *ab)
{
    if (!ab) return SG_EINVAL;
    if (ab->opt.no_sass || !ab->b) return SG_OK;
    req_list_t rl = {0};
    int rc = gather_sass(ab, ab->g, 0, &rl);
    if (!rc && rl.n) {
        double t0 = now_ms();
        rc = sg_sass_cache_prefetch_requests(ab->sass, rl.req, rl.n);
        double per = (now_ms() - t0) / rl.n;
        if (per > ab->st.worst_sass_ms) ab->st.worst_sass_ms = per;
        ab->st.sass_ms += now_ms() - t0;
        /* every image of the batch is done: from_sass only reads the cache */
        for (uint32_t i = 0; i < ab->g->n_images && !rc; i++)
            if (ab->images[i].cubin) ab->images[i].prefetched = true;
    }
    free(rl.req);
    return rc;
}

/* ---- the entry point ------------------------------------------------------------------- */

static int analyse(sg_access_bundle_t *ab, const sg_kernel_t *node, sg_access_kernel_t *k)
{
    const sg_image_t *img = node->image == SG_NONE ? NULL : sg_graph_image(ab->g, node->image);
    if (!node->name || !node->name[0])
        return unknown(k, node, SG_ENOENT, SG_ACCESS_R_NO_CODE, "the kernel has no name");
    if (!img)
        return unknown(k, node, SG_ENOENT, SG_ACCESS_R_NO_CODE, "no code image recorded");
    if (!ab->b)
        return unknown(k, node, SG_ENOENT, SG_ACCESS_R_NO_CODE, "no bundle to read code from");
    if (!img->file)
        return unknown(k, node, SG_ENOENT, SG_ACCESS_R_NO_CODE,
                       "image %s (%s): its bytes are not in the bundle", img->hash,
                       sg_image_kind_name(img->kind));
    sg_code_report_row_t row;
    memset(&row, 0, sizeof row);
    bool done = false;
    double t0 = now_ms();
    int rc = from_ptx(ab, node, k, &row, &done);
    if (rc) return rc;
    if (done) {
        double ms = now_ms() - t0;
        ab->st.ptx_ms += ms;
        if (ms > ab->st.worst_ptx_ms) ab->st.worst_ptx_ms = ms;
        if (k->status == 0) return SG_OK;
    }
    char no_ptx[240];
    if (done)
        snprintf(no_ptx, sizeof no_ptx, "PTX: %.200s", k->detail);
    else
        snprintf(no_ptx, sizeof no_ptx, "%s%s%.200s", sg_ptx_reason_name(row.reason),
                 row.detail[0] ? ": " : "", row.detail);
    if (ab->opt.no_sass)
        return unknown(k, node, SG_ENOENT, SG_ACCESS_R_NO_CODE, "no PTX (%.150s); SASS not read",
                       no_ptx);
    sg_access_kernel_t ptx_try = *k;
    memset(k, 0, sizeof *k);
    rc = from_sass(ab, node, k, no_ptx);
    if (rc == SG_OK && k->status != 0 && done) {
        /* neither worked: the PTX's reason is the first one to give */
        sg_access_kernel_free(k);
        *k = ptx_try;
        return SG_OK;
    }
    sg_access_kernel_free(&ptx_try);
    return rc;
}

int sg_access_bundle_kernel(sg_access_bundle_t *ab, const sg_kernel_t *node,
                            const sg_access_kernel_t **out)
{
    if (!ab || !node || !out) return SG_EINVAL;
    const sg_image_t *img = node->image == SG_NONE ? NULL : sg_graph_image(ab->g, node->image);
    char key[17];
    sg_access_key(img ? img->hash : "", node->name, node->n_params, node->param_offsets,
                  node->param_sizes, key);
    const sg_access_kernel_t *hit = sg_access_cache_get(ab->cache, key);
    if (hit) {
        *out = hit;
        return SG_OK;
    }
    sg_access_kernel_t k;
    memset(&k, 0, sizeof k);
    int rc = analyse(ab, node, &k);
    if (rc) {
        sg_access_kernel_free(&k);
        return rc;
    }
    ab->st.kernels++;
    if (k.status != 0)
        ab->st.unknown++;
    else if (k.source == SG_ACCESS_SOURCE_SASS)
        ab->st.sass++;
    else
        ab->st.ptx++;
    if ((rc = sg_access_cache_put(ab->cache, key, &k))) {
        sg_access_kernel_free(&k);
        return rc;
    }
    *out = sg_access_cache_get(ab->cache, key);
    return *out ? SG_OK : SG_ENOMEM;
}

int sg_access_bundle_node(sg_access_bundle_t *ab, const sg_kernel_t *node, sg_access_eval_t *ev,
                          const sg_access_kernel_t **kout)
{
    const sg_access_kernel_t *k = NULL;
    int rc = sg_access_bundle_kernel(ab, node, &k);
    if (rc) return rc;
    if (kout) *kout = k;
    return sg_access_eval(k, node, ab->g->buffers, ab->g->n_buffers, ev);
}
