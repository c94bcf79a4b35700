/* access_result.c: the plain-data side of access.h: names, freeing, the
 * cache key and an in-memory cache of analyses, and the builders the SASS
 * path uses to fill a result without PTX. */
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <xxhash.h>

#include "access_internal.h"

const char *sg_access_reason_name(sg_access_reason_t r)
{
    static const char *const names[SG_ACCESS_R_COUNT] = {
        "known",
        "address loaded from memory",
        "offset depends on loaded data",
        "pointer passed to a call",
        "unsupported instruction",
        "non-affine arithmetic",
        "not affine across loop iterations",
        "different values on different paths",
        "too complex",
        "no parameter pointer",
        "texture, surface or tensor-map access",
        "PTX could not be read",
        "no code",
        "irreducible control flow",
        "unbounded",
        "32-bit index may wrap",
        "parameters do not match the code",
        "no disassembler",
        "the disassembler failed",
    };
    return (unsigned)r < SG_ACCESS_R_COUNT ? names[r] : "unknown reason";
}

const char *sg_access_flag_name(sg_access_flag_t f)
{
    static const char *const names[SG_ACCESS_F_COUNT] = {
        "exit",          "trap",          "texture",       "surface",       "async-proxy",
        "cp.async",      "mbarrier",      "module-global", "envreg",        "call",
        "extern-call",   "indirect-call", "runtime-call",  "device-launch", "dynamic-smem-size",
        "shared",        "dynamic-shared", "barrier",      "early-return",  "param-address",
        "ld.global.nc",  "griddepcontrol", "local-memory", "atomic",        "cluster",
        "clock",         "setmaxnreg",    "warp-level",    "dynamic-stack", "indirect-branch",
    };
    return (unsigned)f < SG_ACCESS_F_COUNT ? names[f] : "?";
}

void sg_access_kernel_free(sg_access_kernel_t *k)
{
    if (!k) return;
    free(k->kernel);
    free(k->param_offsets);
    free(k->param_sizes);
    free(k->sites);
    free(k->conds);
    free(k->exprs);
    free(k->uexprs);
    free(k->loops);
    free(k->opaques);
    free(k->address_words);
    memset(k, 0, sizeof(*k));
}

void sg_access_key(const char *image_hash, const char *kernel, uint32_t n_params,
                   const uint32_t *offsets, const uint32_t *sizes, char out[17])
{
    XXH64_state_t *h = XXH64_createState();
    uint64_t v = 0;
    if (h) {
        XXH64_reset(h, 0x5347434150ull);
        const char *a = image_hash ? image_hash : "";
        const char *b = kernel ? kernel : "";
        XXH64_update(h, a, strlen(a) + 1);
        XXH64_update(h, b, strlen(b) + 1);
        XXH64_update(h, &n_params, sizeof n_params);
        for (uint32_t i = 0; i < n_params; i++) {
            uint32_t pair[2] = {offsets ? offsets[i] : 0, sizes ? sizes[i] : 0};
            XXH64_update(h, pair, sizeof pair);
        }
        v = XXH64_digest(h);
        XXH64_freeState(h);
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) out[i] = hex[(v >> (60 - 4 * i)) & 15];
    out[16] = '\0';
}

/* ---- cache ------------------------------------------------------------------ */

typedef struct {
    char key[17];
    sg_access_kernel_t k;
    UT_hash_handle hh;
} cache_entry_t;

struct sg_access_cache {
    cache_entry_t *head;
};

sg_access_cache_t *sg_access_cache_create(void)
{
    return calloc(1, sizeof(sg_access_cache_t));
}

void sg_access_cache_destroy(sg_access_cache_t *c)
{
    if (!c) return;
    cache_entry_t *e, *tmp;
    HASH_ITER(hh, c->head, e, tmp) {
        HASH_DEL(c->head, e);
        sg_access_kernel_free(&e->k);
        free(e);
    }
    free(c);
}

const sg_access_kernel_t *sg_access_cache_get(const sg_access_cache_t *c, const char key[17])
{
    if (!c || !key) return NULL;
    cache_entry_t *e = NULL;
    HASH_FIND(hh, c->head, key, 16, e);
    return e ? &e->k : NULL;
}

int sg_access_cache_put(sg_access_cache_t *c, const char key[17], sg_access_kernel_t *k)
{
    if (!c || !key || !k) return SG_EINVAL;
    cache_entry_t *e = NULL;
    HASH_FIND(hh, c->head, key, 16, e);
    if (e) return SG_EEXIST;
    e = calloc(1, sizeof(*e));
    if (!e) return SG_ENOMEM;
    memcpy(e->key, key, 16);
    e->key[16] = '\0';
    e->k = *k;
    HASH_ADD(hh, c->head, key, 16, e);
    cache_entry_t *back = NULL;
    HASH_FIND(hh, c->head, key, 16, back); /* uthash drops the item when it runs out of memory */
    if (back != e) {
        free(e);
        return SG_ENOMEM;
    }
    memset(k, 0, sizeof(*k));
    return SG_OK;
}

/* ---- builders -------------------------------------------------------------------- */

static bool grow_pow2(void **p, uint32_t n, size_t elem)
{
    if (n && (n & (n - 1))) return true; /* not at a power of two: room left */
    uint32_t cap = n ? n * 2 : 8;
    void *q = realloc(*p, (size_t)cap * elem);
    if (!q) return false;
    *p = q;
    return true;
}

static bool push(sg_access_kernel_t *k, const sg_access_cond_t *c, uint32_t *idx)
{
    if (!grow_pow2((void **)&k->conds, k->n_conds, sizeof(*k->conds))) return false;
    k->conds[k->n_conds] = *c;
    *idx = k->n_conds++;
    return true;
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

int sg_access_kernel_addresses(sg_access_kernel_t *k)
{
    if (!k) return SG_EINVAL;
    uint32_t *w = malloc(((size_t)k->n_address_words + k->n_sites + 1) * sizeof *w);
    if (!w) return SG_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->n_address_words; i++) w[n++] = k->address_words[i];
    bool complete = k->status == 0 && k->reason == SG_ACCESS_OK &&
                    !(k->flags & (1ull << SG_ACCESS_F_PARAM_ADDRESS));
    for (uint32_t i = 0; i < k->n_sites; i++) {
        const sg_access_site_t *s = &k->sites[i];
        if (s->base_kind == SG_ACCESS_BASE_PARAM) w[n++] = s->base_param;
        /* a pointer loaded from memory was never a parameter word; any other
         * site without a base may start from a word nobody named */
        else if (s->base_kind == SG_ACCESS_BASE_NONE && s->reason != SG_ACCESS_R_LOADED_ADDRESS)
            complete = false;
    }
    qsort(w, n, sizeof *w, cmp_u32);
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++)
        if (u == 0 || w[i] != w[u - 1]) w[u++] = w[i];
    free(k->address_words);
    k->address_words = w;
    k->n_address_words = u;
    k->addresses_complete = complete;
    return SG_OK;
}

int sg_access_kernel_add_site(sg_access_kernel_t *k, const sg_access_site_t *site,
                              const sg_access_cond_t *conds, uint32_t n_conds,
                              const sg_access_cond_t *cond_checks,
                              const sg_access_cond_t *checks, uint32_t n_checks)
{
    if (!k || !site || (n_conds && !conds) || (n_checks && !checks)) return SG_EINVAL;
    if (!grow_pow2((void **)&k->sites, k->n_sites, sizeof(*k->sites))) return SG_ENOMEM;
    sg_access_site_t s = *site;
    uint32_t idx, first = k->n_conds;
    for (uint32_t i = 0; i < n_conds; i++) {
        sg_access_cond_t c = conds[i];
        c.first_check = 0;
        c.n_checks = 0;
        if (!push(k, &c, &idx)) return SG_ENOMEM;
    }
    s.first_cond = first;
    s.n_conds = n_conds;
    s.first_check = k->n_conds;
    s.n_checks = n_checks;
    for (uint32_t i = 0; i < n_checks; i++)
        if (!push(k, &checks[i], &idx)) return SG_ENOMEM;
    uint32_t used = 0;
    for (uint32_t i = 0; i < n_conds; i++) {
        uint32_t fc = k->n_conds;
        for (uint32_t j = 0; j < conds[i].n_checks; j++)
            if (!cond_checks || !push(k, &cond_checks[used++], &idx)) return cond_checks ? SG_ENOMEM : SG_EINVAL;
        k->conds[first + i].first_check = fc;
        k->conds[first + i].n_checks = conds[i].n_checks;
    }
    k->sites[k->n_sites++] = s;
    return SG_OK;
}

int sg_access_site_gid1d(sg_access_kernel_t *k, sg_access_kind_t kind, uint32_t ptr_off,
                         uint32_t width, uint32_t bound_off, uint32_t bound_width,
                         bool bound_signed)
{
    if (!k || width == 0 || width > 0xffff || ptr_off > 0xffff || bound_off > 0xffff ||
        (bound_width != 0 && bound_width != 1 && bound_width != 2 && bound_width != 4 &&
         bound_width != 8))
        return SG_EINVAL;
    sg_access_site_t s;
    memset(&s, 0, sizeof s);
    s.kind = (uint8_t)kind;
    s.base_kind = SG_ACCESS_BASE_PARAM;
    s.base_param = ptr_off;
    s.param_index = SG_NONE;
    for (uint32_t i = 0; i < k->n_params; i++)
        if (k->param_offsets && ptr_off >= k->param_offsets[i] &&
            ptr_off < k->param_offsets[i] + (k->param_sizes ? k->param_sizes[i] : 8)) {
            s.param_index = i;
            s.param_inner = ptr_off - k->param_offsets[i];
        }
    s.width = (uint16_t)width;
    s.vector = width > 8;
    s.thread_local = true;
    s.exact = true;
    s.stmt = s.line = SG_NONE;
    /* gid = ctaid.x * ntid.x + tid.x; offset = width * gid */
    sg_access_expr_t gid, bound;
    ax_zero(&gid);
    gid.n = 2;
    gid.t[0].coef = 1;
    gid.t[0].atoms[0] = SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, SG_ACCESS_TID_X);
    gid.t[1].coef = 1;
    gid.t[1].atoms[0] = SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, SG_ACCESS_NTID_X);
    gid.t[1].atoms[1] = SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, SG_ACCESS_CTAID_X);
    if (!ax_scale(&gid, (int64_t)width, &s.offset)) return SG_EINVAL;
    bool narrow = bound_width && bound_width <= 4;
    uint8_t fit = bound_signed ? SG_ACCESS_FITS_S32 : SG_ACCESS_FITS_U32;
    sg_access_cond_t cond, fchk[2], chk;
    memset(&cond, 0, sizeof cond);
    memset(fchk, 0, sizeof fchk);
    memset(&chk, 0, sizeof chk);
    uint32_t nc = 0, nk = 0;
    if (bound_width) {
        /* gid - bound + 1 <= 0 (gid < bound) */
        ax_atom(&bound, sg_access_param_atom(bound_off, bound_width, bound_signed), 1);
        if (!ax_add(&gid, &bound, -1, &cond.e) || !ax_add_const(&cond.e, 1, &cond.e)) return SG_EINVAL;
        cond.rel = SG_ACCESS_LE;
        nc = 1;
        fchk[0].e = gid;
        fchk[1].e = bound;
        fchk[0].rel = fchk[1].rel = narrow ? fit : SG_ACCESS_FITS_U64;
        cond.n_checks = bound_signed && !narrow ? 0 : 2;
    }
    if (narrow) { /* the index itself is a 32-bit value */
        chk.e = gid;
        chk.rel = fit;
        nk = 1;
    }
    return sg_access_kernel_add_site(k, &s, nc ? &cond : NULL, nc, fchk, nk ? &chk : NULL, nk);
}
