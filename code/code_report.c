/* code_report.c: per kernel of a graph, its code image, the archs in it and
 * whether usable PTX exists (code_report.h). Kernels are grouped by image so
 * that each image is read and parsed once, and only one is in memory. */
#include "code_report.h"
#include "nvrtc_ptx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"

#define MAX_DEPTH 16 /* body nesting; bundles refuse deeper graphs too */

typedef struct {
    const char *name;
    uint32_t image;
    sg_node_id_t node;
    bool in_body;
    uint32_t order;
} occurrence_t;

typedef struct {
    occurrence_t *v;
    uint32_t n, cap;
} occ_vec_t;

static int occ_push(occ_vec_t *o, const occurrence_t *x)
{
    if (o->n == UINT32_MAX) return SG_ELIMIT;
    if (o->n == o->cap) {
        uint32_t ncap = o->cap ? (o->cap > UINT32_MAX / 2 ? UINT32_MAX : o->cap * 2) : 64;
        occurrence_t *nv = realloc(o->v, (size_t)ncap * sizeof *nv);
        if (!nv) return SG_ENOMEM;
        o->v = nv;
        o->cap = ncap;
    }
    o->v[o->n] = *x;
    o->v[o->n].order = o->n;
    o->n++;
    return SG_OK;
}

static int collect(const sg_graph_t *g, int depth, bool in_body, occ_vec_t *o)
{
    if (!g || depth > MAX_DEPTH) return SG_OK;
    for (sg_node_id_t id = 0; id < g->n_nodes; id++) {
        const sg_node_t *nd = sg_graph_node(g, id);
        if (!nd) continue;
        int rc = SG_OK;
        if (nd->type == SG_NODE_KERNEL) {
            occurrence_t x = {nd->u.kernel.name ? nd->u.kernel.name : "", nd->u.kernel.image, id,
                              in_body, 0};
            rc = occ_push(o, &x);
        } else if (nd->type == SG_NODE_CHILD_GRAPH) {
            rc = collect(nd->u.child, depth + 1, true, o);
        } else if (nd->type == SG_NODE_CONDITIONAL) {
            for (uint32_t b = 0; b < nd->u.cond.n_bodies && !rc; b++)
                rc = collect(nd->u.cond.bodies[b], depth + 1, true, o);
        }
        if (rc) return rc;
    }
    return SG_OK;
}

static int occ_cmp(const void *a, const void *b)
{
    const occurrence_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->image != y->image) return x->image < y->image ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Rows are sorted by first appearance through this key. */
typedef struct {
    uint32_t order;
    sg_code_report_row_t row;
} keyed_row_t;

static int row_order_cmp(const void *a, const void *b)
{
    const keyed_row_t *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int row_image_cmp(const void *a, const void *b)
{
    const sg_code_report_row_t *const *x = a, *const *y = b;
    if ((*x)->image != (*y)->image) return (*x)->image < (*y)->image ? -1 : 1;
    return 0;
}

static void arch_list_add(sg_arch_list_t *l, uint32_t arch, char sfx)
{
    uint32_t i = 0;
    while (i < l->n && (l->arch[i] < arch || (l->arch[i] == arch && l->suffix[i] < sfx))) i++;
    if (i < l->n && l->arch[i] == arch && l->suffix[i] == sfx) return;
    if (l->n == SG_CODE_REPORT_MAX_ARCHS) {
        l->truncated = true;
        return;
    }
    memmove(l->arch + i + 1, l->arch + i, (l->n - i) * sizeof l->arch[0]);
    memmove(l->suffix + i + 1, l->suffix + i, (l->n - i) * sizeof l->suffix[0]);
    l->arch[i] = arch;
    l->suffix[i] = sfx;
    l->n++;
}

/* What one image gave: either bytes to look into, or why not. */
typedef struct {
    sg_ptx_reason_t fail; /* SG_PTX_OK: bytes usable */
    char fail_detail[224];
    void *bytes;
    size_t n;
    sg_code_format_t format;
    sg_fatbin_t fb;
    sg_arch_list_t sass, ptx;
    bool from_bytes;
    bool recompiled; /* bytes are PTX recompiled from captured NVRTC source */
    bool linked;     /* bytes are the PTX image a cubin was assembled from */
    uint32_t source; /* ... from this image index (for the detail) */
} image_ctx_t;

static void image_fail(image_ctx_t *c, sg_ptx_reason_t r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void image_fail(image_ctx_t *c, sg_ptx_reason_t r, const char *fmt, ...)
{
    c->fail = r;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->fail_detail, sizeof c->fail_detail, fmt, ap);
    va_end(ap);
}

static void metadata_archs(const sg_image_t *img, image_ctx_t *c)
{
    for (uint32_t i = 0; img->sass_archs && i < img->n_sass_archs; i++)
        arch_list_add(&c->sass, img->sass_archs[i], 0);
    for (uint32_t i = 0; img->ptx_archs && i < img->n_ptx_archs; i++)
        arch_list_add(&c->ptx, img->ptx_archs[i], 0);
}

static char entry_suffix(const sg_fatbin_entry_t *e)
{
    return (e->flags & SG_FATBIN_FLAG_ARCH_SPECIFIC)     ? 'a'
           : (e->flags & SG_FATBIN_FLAG_FAMILY_SPECIFIC) ? 'f'
                                                         : 0;
}

/* The bytes of image index, checked against its hash: through the open
 * bundle when the caller has one. */
static int read_image(const sg_graph_t *g, const sg_code_report_options_t *opt,
                      const char *bundle_path, uint32_t index, void **data, size_t *n,
                      sg_diag_t *diag)
{
    if (opt->files)
        return sg_bundle_load_image(opt->files, index, opt->max_image_bytes, data, n, diag);
    int rc = sg_bundle_read_blob(bundle_path, sg_graph_image(g, index)->file,
                                 opt->max_image_bytes, data, n, diag);
    if (!rc && (rc = sg_bundle_check_image(g, index, *data, *n, diag))) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

/* An NVRTC source image: recompile it to PTX for the device, then treat the
 * result like a captured PTX image. */
static int nvrtc_load(const sg_graph_t *g, const sg_image_t *img, uint32_t index,
                      const char *bundle_path, const sg_code_report_options_t *opt,
                      image_ctx_t *c)
{
    c->source = index;
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    void *src = NULL;
    size_t n = 0;
    int rc = read_image(g, opt, bundle_path, index, &src, &n, &diag);
    if (rc == SG_ENOMEM) return rc;
    if (rc) {
        char msg[200];
        sg_diag_format(&diag, msg, sizeof msg);
        image_fail(c, rc == SG_ENOENT ? SG_PTX_NO_IMAGE : SG_PTX_UNREADABLE, "%s", msg);
        return SG_OK;
    }
    char *ptx = NULL, err[200];
    size_t ptx_len = 0;
    rc = sg_nvrtc_compile_ptx(src, n, NULL, img->options, opt->device_arch, &ptx, &ptx_len, err,
                              sizeof err);
    free(src);
    if (rc == SG_ENOMEM) return rc;
    if (rc) {
        image_fail(c, SG_PTX_FROM_SOURCE, "NVRTC source: recompiling for compute_%u failed: %s",
                   opt->device_arch, err);
        return SG_OK;
    }
    c->bytes = ptx;
    c->n = ptx_len;
    c->format = SG_CODE_FORMAT_PTX;
    c->from_bytes = true;
    c->recompiled = true;
    uint32_t arch;
    char sfx;
    if (sg_ptx_target(ptx, ptx_len, &arch, &sfx) == SG_OK) arch_list_add(&c->ptx, arch, sfx);
    return SG_OK;
}

static int image_load(const sg_graph_t *g, uint32_t index, const char *bundle_path,
                      const sg_code_report_options_t *opt, image_ctx_t *c)
{
    memset(c, 0, sizeof *c);
    const sg_image_t *img = index == SG_NONE ? NULL : sg_graph_image(g, index);
    if (index == SG_NONE) {
        image_fail(c, SG_PTX_NO_IMAGE, "no code image recorded for this kernel");
        return SG_OK;
    }
    if (!img) {
        image_fail(c, SG_PTX_NO_IMAGE, "image index %u is not in the image table", index);
        return SG_OK;
    }
    metadata_archs(img, c);
    if (img->kind == SG_IMAGE_NVRTC) {
        if (!opt->recompile_nvrtc || !bundle_path || !img->file) {
            image_fail(c, SG_PTX_FROM_SOURCE,
                       "NVRTC source captured: PTX comes from recompiling it");
            return SG_OK;
        }
        return nvrtc_load(g, img, index, bundle_path, opt, c);
    }
    if (!bundle_path || !img->file) {
        image_fail(c, SG_PTX_NO_IMAGE, "image %s%s: bytes not in the bundle", img->hash,
                   img->file ? " (no bundle given)" : "");
        return SG_OK;
    }
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    int rc = read_image(g, opt, bundle_path, index, &c->bytes, &c->n, &diag);
    if (rc == SG_ENOMEM) return rc;
    if (rc) {
        char msg[200];
        sg_diag_format(&diag, msg, sizeof msg);
        image_fail(c, rc == SG_ENOENT ? SG_PTX_NO_IMAGE : SG_PTX_UNREADABLE, "%s", msg);
        return SG_OK;
    }
    /* The bytes decide, not the recorded kind. */
    memset(&c->sass, 0, sizeof c->sass);
    memset(&c->ptx, 0, sizeof c->ptx);
    c->from_bytes = true;
    c->format = sg_code_image_sniff(c->bytes, c->n, NULL);
    switch (c->format) {
    case SG_CODE_FORMAT_FATBIN: {
        char err[160];
        rc = sg_fatbin_parse(c->bytes, c->n, 0, &c->fb, err, sizeof err);
        if (rc == SG_ENOMEM) return rc;
        if (rc) {
            image_fail(c, SG_PTX_UNREADABLE, "%s: %s", img->file, err);
            return SG_OK;
        }
        for (uint32_t i = 0; i < c->fb.n_entries; i++) {
            const sg_fatbin_entry_t *e = &c->fb.entries[i];
            if (e->kind == SG_FATBIN_ENTRY_ELF) arch_list_add(&c->sass, e->arch, entry_suffix(e));
            if (e->kind == SG_FATBIN_ENTRY_PTX) arch_list_add(&c->ptx, e->arch, entry_suffix(e));
        }
        break;
    }
    case SG_CODE_FORMAT_CUBIN: {
        uint32_t arch;
        if (sg_elf_cuda_arch(c->bytes, c->n, &arch) == SG_OK) arch_list_add(&c->sass, arch, 0);
        break;
    }
    case SG_CODE_FORMAT_PTX: {
        uint32_t arch;
        char sfx;
        if (sg_ptx_target(c->bytes, c->n, &arch, &sfx) == SG_OK) arch_list_add(&c->ptx, arch, sfx);
        break;
    }
    default:
        image_fail(c, SG_PTX_UNREADABLE, "%s: not a fatbin, cubin or PTX image", img->file);
        break;
    }
    return SG_OK;
}

static void image_unload(image_ctx_t *c)
{
    sg_fatbin_free(&c->fb);
    free(c->bytes);
    memset(c, 0, sizeof *c);
}

static const char *sfx_str(char s)
{
    return s == 'a' ? "a" : s == 'f' ? "f" : "";
}

/* Decide one row from its image. */
static int row_decide(sg_code_report_row_t *r, const image_ctx_t *c, uint32_t dev,
                      const sg_code_report_options_t *opt)
{
    r->sass = c->sass;
    r->ptx = c->ptx;
    r->archs_from_bytes = c->from_bytes;
    r->image_format = c->format;
    r->ptx_entry = SG_NONE;
    const char *kernel = r->kernel[0] ? r->kernel : NULL;
    if (c->fail != SG_PTX_OK) {
        r->reason = c->fail;
        snprintf(r->detail, sizeof r->detail, "%s", c->fail_detail);
        return SG_OK;
    }
    if (c->format == SG_CODE_FORMAT_FATBIN) {
        sg_ptx_pick_t pick;
        int rc = sg_fatbin_pick_ptx(&c->fb, dev, kernel, opt->max_entry_bytes, &pick, NULL, NULL);
        if (rc) return rc;
        r->reason = pick.reason;
        r->ptx_entry = pick.entry;
        r->ptx_target = pick.target;
        r->ptx_target_suffix = pick.target_suffix;
        snprintf(r->detail, sizeof r->detail, "%s", pick.detail);
    } else if (c->format == SG_CODE_FORMAT_CUBIN) {
        r->reason = SG_PTX_SASS_ONLY;
        if (c->sass.n)
            snprintf(r->detail, sizeof r->detail, "cubin for sm_%u: SASS only", c->sass.arch[0]);
        else
            snprintf(r->detail, sizeof r->detail, "cubin: SASS only");
    } else { /* PTX text */
        const char *text = c->bytes;
        uint32_t target;
        char sfx;
        if (sg_ptx_target(text, c->n, &target, &sfx) != SG_OK) {
            r->reason = SG_PTX_UNREADABLE;
            snprintf(r->detail, sizeof r->detail, "PTX without a readable .target");
        } else if (kernel && !sg_ptx_has_entry(text, c->n, kernel)) {
            r->reason = SG_PTX_NOT_IN_PTX;
            snprintf(r->detail, sizeof r->detail, "PTX for sm_%u%s does not define %s", target,
                     sfx_str(sfx), kernel);
        } else if (!sg_ptx_target_usable(target, sfx, dev)) {
            r->reason = target > dev ? SG_PTX_ONLY_HIGHER : SG_PTX_ARCH_MISMATCH;
            snprintf(r->detail, sizeof r->detail, "PTX only for sm_%u%s, not usable on sm_%u",
                     target, sfx_str(sfx), dev);
        } else {
            r->reason = SG_PTX_OK;
            r->ptx_target = target;
            r->ptx_target_suffix = sfx;
            if (c->recompiled)
                snprintf(r->detail, sizeof r->detail,
                         "PTX .target sm_%u%s for sm_%u, recompiled from the NVRTC source image %u",
                         target, sfx_str(sfx), dev, c->source);
            else if (c->linked)
                snprintf(r->detail, sizeof r->detail,
                         "PTX .target sm_%u%s for sm_%u, from the PTX image %u the cubin was "
                         "assembled from",
                         target, sfx_str(sfx), dev, c->source);
            else
                snprintf(r->detail, sizeof r->detail, "PTX .target sm_%u%s for sm_%u", target,
                         sfx_str(sfx), dev);
        }
    }
    r->ptx_available = r->reason == SG_PTX_OK;
    return SG_OK;
}

/* Where the PTX of an image without any comes from: the PTX image it was
 * assembled from (ptx_image: a Triton cubin), else the NVRTC source it was
 * compiled from (source_image: a CuPy cubin). SG_NONE when neither; *src
 * and *is_ptx say which. Bundles refuse links to other kinds; models may
 * hold them, and they are ignored. */
static uint32_t linked_source(const sg_graph_t *g, uint32_t index, const sg_image_t **src,
                              bool *is_ptx)
{
    const sg_image_t *img = index == SG_NONE ? NULL : sg_graph_image(g, index);
    *src = NULL;
    *is_ptx = false;
    if (!img || img->kind == SG_IMAGE_NVRTC) return SG_NONE;
    const sg_image_t *p = img->ptx_image != index ? sg_graph_image(g, img->ptx_image) : NULL;
    if (p && p->kind == SG_IMAGE_PTX) {
        *src = p;
        *is_ptx = true;
        return img->ptx_image;
    }
    const sg_image_t *n = img->source_image != index ? sg_graph_image(g, img->source_image) : NULL;
    if (n && n->kind == SG_IMAGE_NVRTC) {
        *src = n;
        return img->source_image;
    }
    return SG_NONE;
}

/* Load what linked_source named as if it were the kernel's image: the PTX
 * image's bytes, or the NVRTC source recompiled. */
static int linked_load(const sg_graph_t *g, uint32_t s, const sg_image_t *src, bool is_ptx,
                       const char *bundle_path, const sg_code_report_options_t *opt, image_ctx_t *c)
{
    memset(c, 0, sizeof *c);
    if (!is_ptx) return nvrtc_load(g, src, s, bundle_path, opt, c);
    int rc = image_load(g, s, bundle_path, opt, c);
    c->linked = true;
    c->source = s;
    return rc;
}

/* Rows of one image that ended without usable PTX, where the image links
 * the PTX it was assembled from (Triton) or the NVRTC source it was compiled
 * from (CuPy): that is the way to PTX, so load it (recompile the source) and
 * decide those rows from it. The image's own SASS archs and format stay in
 * the row; the PTX columns and the reason come from the linked code. Without
 * recompiling, an NVRTC source leaves the image's answer, and the detail
 * says where PTX would come from. */
static int source_fallback(const sg_graph_t *g, sg_code_report_row_t **rows, uint32_t n,
                           const char *bundle_path, const sg_code_report_options_t *opt)
{
    const sg_image_t *src;
    bool is_ptx;
    uint32_t s = linked_source(g, rows[0]->image, &src, &is_ptx);
    if (s == SG_NONE) return SG_OK;
    uint32_t need = 0;
    for (uint32_t k = 0; k < n; k++)
        need += !rows[k]->ptx_available;
    if (!need) return SG_OK;
    const char *what = is_ptx ? "PTX image" : "NVRTC source image";
    if ((!is_ptx && !opt->recompile_nvrtc) || !bundle_path || !src->file) {
        for (uint32_t k = 0; k < n; k++) {
            sg_code_report_row_t *r = rows[k];
            if (r->ptx_available) continue;
            size_t used = strnlen(r->detail, sizeof r->detail);
            snprintf(r->detail + used, sizeof r->detail - used, "; %s captured as image %u: %s",
                     is_ptx ? "the PTX it was assembled from" : "NVRTC source", s,
                     !is_ptx      ? "recompiling it gives PTX"
                     : !src->file ? "its bytes are not in the bundle"
                                  : "reading the bundle gives PTX");
        }
        return SG_OK;
    }
    image_ctx_t sc;
    int rc = linked_load(g, s, src, is_ptx, bundle_path, opt, &sc);
    for (uint32_t k = 0; k < n && !rc; k++) {
        sg_code_report_row_t *r = rows[k];
        if (r->ptx_available) continue;
        sg_arch_list_t sass = r->sass;
        sg_code_format_t format = r->image_format;
        bool from_bytes = r->archs_from_bytes;
        char before[sizeof r->detail];
        memcpy(before, r->detail, sizeof before);
        if ((rc = row_decide(r, &sc, opt->device_arch, opt))) break;
        r->sass = sass;
        r->image_format = format;
        r->archs_from_bytes = from_bytes;
        if (!r->ptx_available) {
            /* Both answers matter: what the image lacks and why the link did not help. */
            char after[sizeof r->detail];
            memcpy(after, r->detail, sizeof after);
            snprintf(r->detail, sizeof r->detail, "%.90s; %s %u: %.90s", before, what, s, after);
        }
    }
    image_unload(&sc);
    return rc;
}

const char *sg_arch_list_format(const sg_arch_list_t *l, char *buf, size_t n)
{
    if (!buf || n == 0) return buf;
    buf[0] = 0;
    if (!l || l->n == 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    size_t used = 0;
    for (uint32_t i = 0; i < l->n && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%ssm_%u%s", i ? ", " : "", l->arch[i],
                         sfx_str(l->suffix[i]));
        if (w < 0) break;
        used += (size_t)w;
    }
    if (l->truncated && used < n) snprintf(buf + used, n - used, ", ...");
    return buf;
}

uint32_t sg_code_report_default_arch(const sg_graph_t *g)
{
    return g ? sg_code_arch_of(g->device.cc_major, g->device.cc_minor) : SG_CODE_REPORT_DEFAULT_ARCH;
}

void sg_code_report_free(sg_code_report_t *r)
{
    if (!r) return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}

int sg_code_report(const sg_graph_t *g, const char *bundle_path,
                   const sg_code_report_options_t *options, sg_code_report_t *out)
{
    if (!g || !out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    sg_code_report_options_t opt = {0};
    if (options) opt = *options;
    if (opt.device_arch == 0) opt.device_arch = sg_code_report_default_arch(g);
    if (opt.max_image_bytes == 0) opt.max_image_bytes = SG_CODE_REPORT_MAX_IMAGE;
    if (opt.max_entry_bytes == 0) opt.max_entry_bytes = SG_FATBIN_DEFAULT_MAX_IMAGE;
    out->device_arch = opt.device_arch;

    occ_vec_t occ = {0};
    int rc = collect(g->root ? g->root : g, 0, false, &occ);
    if (rc || occ.n == 0) {
        free(occ.v);
        return rc;
    }
    qsort(occ.v, occ.n, sizeof *occ.v, occ_cmp);

    /* Distinct (name, image) rows, each keyed by its first appearance. */
    keyed_row_t *keyed = calloc(occ.n, sizeof *keyed);
    sg_code_report_row_t **by_image = NULL;
    if (!keyed) {
        free(occ.v);
        return SG_ENOMEM;
    }
    uint32_t nrows = 0;
    for (uint32_t i = 0; i < occ.n; i++) {
        const occurrence_t *x = &occ.v[i];
        if (nrows && strcmp(keyed[nrows - 1].row.kernel, x->name) == 0 &&
            keyed[nrows - 1].row.image == x->image) {
            keyed[nrows - 1].row.n_nodes++;
            continue; /* sorted by order within a group: the first one won */
        }
        keyed_row_t *k = &keyed[nrows++];
        k->order = x->order;
        k->row.kernel = x->name;
        k->row.first_node = x->node;
        k->row.first_in_body = x->in_body;
        k->row.n_nodes = 1;
        k->row.image = x->image;
        k->row.image_kind = SG_IMAGE_UNKNOWN;
        const sg_image_t *img = x->image == SG_NONE ? NULL : sg_graph_image(g, x->image);
        if (img) {
            k->row.image_kind = img->kind;
            memcpy(k->row.image_hash, img->hash, 16);
            k->row.image_hash[16] = 0;
            k->row.image_file = img->file;
        }
    }
    free(occ.v);
    qsort(keyed, nrows, sizeof *keyed, row_order_cmp);

    out->rows = malloc((size_t)nrows * sizeof *out->rows);
    by_image = malloc((size_t)nrows * sizeof *by_image);
    if (!out->rows || !by_image) {
        free(keyed);
        free(by_image);
        sg_code_report_free(out);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < nrows; i++) {
        out->rows[i] = keyed[i].row;
        by_image[i] = &out->rows[i];
    }
    free(keyed);
    out->n_rows = nrows;
    qsort(by_image, nrows, sizeof *by_image, row_image_cmp);

    for (uint32_t i = 0; i < nrows && !rc;) {
        uint32_t j = i;
        while (j < nrows && by_image[j]->image == by_image[i]->image) j++;
        image_ctx_t ctx;
        rc = image_load(g, by_image[i]->image, bundle_path, &opt, &ctx);
        for (uint32_t k = i; k < j && !rc; k++) rc = row_decide(by_image[k], &ctx, opt.device_arch, &opt);
        image_unload(&ctx); /* before the source is loaded: one image in memory at a time */
        if (!rc) rc = source_fallback(g, by_image + i, j - i, bundle_path, &opt);
        i = j;
    }
    free(by_image);
    if (rc) {
        sg_code_report_free(out);
        return rc;
    }
    for (uint32_t i = 0; i < nrows; i++) out->n_ptx_available += out->rows[i].ptx_available;
    return SG_OK;
}

/* The chosen PTX text of a decided row out of its image's bytes. */
static int take_ptx(image_ctx_t *c, const sg_code_report_row_t *r,
                    const sg_code_report_options_t *opt, char **ptx, size_t *len)
{
    if (c->format == SG_CODE_FORMAT_FATBIN) {
        sg_ptx_pick_t pick;
        return sg_fatbin_pick_ptx(&c->fb, opt->device_arch, r->kernel, opt->max_entry_bytes,
                                  &pick, ptx, len);
    }
    char *t = malloc(c->n + 1);
    if (!t) return SG_ENOMEM;
    memcpy(t, c->bytes, c->n);
    t[c->n] = 0;
    *ptx = t;
    *len = strnlen(t, c->n);
    return SG_OK;
}

int sg_code_kernel_ptx(const sg_graph_t *g, const char *bundle_path, const char *kernel,
                       uint32_t image, const sg_code_report_options_t *options, char **ptx,
                       size_t *ptx_len, sg_code_report_row_t *row)
{
    if (!g || !kernel || !ptx || !ptx_len) return SG_EINVAL;
    *ptx = NULL;
    *ptx_len = 0;
    sg_code_report_options_t opt = {0};
    if (options) opt = *options;
    if (opt.device_arch == 0) opt.device_arch = sg_code_report_default_arch(g);
    if (opt.max_image_bytes == 0) opt.max_image_bytes = SG_CODE_REPORT_MAX_IMAGE;
    if (opt.max_entry_bytes == 0) opt.max_entry_bytes = SG_FATBIN_DEFAULT_MAX_IMAGE;
    sg_code_report_row_t r;
    memset(&r, 0, sizeof r);
    r.kernel = kernel;
    r.image = image;
    r.first_node = SG_NONE;
    image_ctx_t c;
    int rc = image_load(g, image, bundle_path, &opt, &c);
    if (!rc) rc = row_decide(&r, &c, opt.device_arch, &opt);
    if (!rc && r.ptx_available) rc = take_ptx(&c, &r, &opt, ptx, ptx_len);
    image_unload(&c);
    const sg_image_t *src;
    bool is_ptx;
    uint32_t s = linked_source(g, image, &src, &is_ptx);
    if (!rc && !r.ptx_available && s != SG_NONE) {
        /* a cubin assembled from a captured PTX image (Triton) or compiled
         * from captured NVRTC source (CuPy): its PTX is that image's */
        sg_code_report_row_t *rows[1] = {&r};
        rc = source_fallback(g, rows, 1, bundle_path, &opt);
        if (!rc && r.ptx_available) {
            rc = linked_load(g, s, src, is_ptx, bundle_path, &opt, &c);
            if (!rc && c.fail == SG_PTX_OK) rc = take_ptx(&c, &r, &opt, ptx, ptx_len);
            image_unload(&c);
        }
    }
    if (row) *row = r;
    if (rc) {
        free(*ptx);
        *ptx = NULL;
        *ptx_len = 0;
    }
    return rc;
}
