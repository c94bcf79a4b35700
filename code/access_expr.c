/* access_expr.c: polynomials with 64-bit coefficients over the atoms of
 * access.h (thread/CTA ids, parameter words, loop counts, ...), kept in a
 * canonical form (terms sorted by their atoms, no zero coefficient, unused
 * space zeroed) so that two equal polynomials are equal bytes. Also interval
 * bounds and the text form. */
#include <stdio.h>
#include <string.h>

#include "access_internal.h"

void ax_zero(sg_access_expr_t *e)
{
    memset(e, 0, sizeof(*e));
}

void ax_const(sg_access_expr_t *e, int64_t c)
{
    ax_zero(e);
    e->c = c;
}

void ax_atom(sg_access_expr_t *e, sg_access_atom_t a, int64_t coef)
{
    ax_zero(e);
    if (!coef) return;
    e->n = 1;
    e->t[0].coef = coef;
    e->t[0].atoms[0] = a;
}

static int term_cmp(const sg_access_term_t *a, const sg_access_term_t *b)
{
    for (int i = 0; i < SG_ACCESS_MAX_DEGREE; i++) {
        if (a->atoms[i] != b->atoms[i]) return a->atoms[i] < b->atoms[i] ? -1 : 1;
    }
    return 0;
}

static uint32_t term_degree(const sg_access_term_t *t)
{
    uint32_t d = 0;
    while (d < SG_ACCESS_MAX_DEGREE && t->atoms[d]) d++;
    return d;
}

/* Sort and combine up to `n` terms from tmp into out. */
static bool normalize(sg_access_term_t *tmp, uint32_t n, int64_t c, sg_access_expr_t *out)
{
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: n is small */
        sg_access_term_t x = tmp[i];
        uint32_t j = i;
        while (j > 0 && term_cmp(&tmp[j - 1], &x) > 0) {
            tmp[j] = tmp[j - 1];
            j--;
        }
        tmp[j] = x;
    }
    sg_access_expr_t r;
    ax_zero(&r);
    r.c = c;
    for (uint32_t i = 0; i < n;) {
        int64_t coef = tmp[i].coef;
        uint32_t j = i + 1;
        for (; j < n && term_cmp(&tmp[i], &tmp[j]) == 0; j++)
            if (__builtin_add_overflow(coef, tmp[j].coef, &coef)) return false;
        if (coef) {
            if (r.n == SG_ACCESS_MAX_TERMS) return false;
            r.t[r.n] = tmp[i];
            r.t[r.n].coef = coef;
            r.n++;
        }
        i = j;
    }
    *out = r;
    return true;
}

bool ax_add(const sg_access_expr_t *a, const sg_access_expr_t *b, int64_t kb, sg_access_expr_t *out)
{
    sg_access_term_t tmp[2 * SG_ACCESS_MAX_TERMS];
    uint32_t n = 0;
    int64_t c, kc;
    if (__builtin_mul_overflow(b->c, kb, &kc) || __builtin_add_overflow(a->c, kc, &c)) return false;
    for (uint32_t i = 0; i < a->n; i++) tmp[n++] = a->t[i];
    for (uint32_t i = 0; i < b->n; i++) {
        tmp[n] = b->t[i];
        if (__builtin_mul_overflow(b->t[i].coef, kb, &tmp[n].coef)) return false;
        n++;
    }
    return normalize(tmp, n, c, out);
}

bool ax_add_const(const sg_access_expr_t *a, int64_t k, sg_access_expr_t *out)
{
    int64_t c;
    if (__builtin_add_overflow(a->c, k, &c)) return false;
    if (out != a) *out = *a;
    out->c = c;
    return true;
}

bool ax_scale(const sg_access_expr_t *a, int64_t k, sg_access_expr_t *out)
{
    sg_access_expr_t r;
    if (k == 0) {
        ax_zero(out);
        return true;
    }
    r = *a;
    if (__builtin_mul_overflow(a->c, k, &r.c)) return false;
    for (uint32_t i = 0; i < r.n; i++)
        if (__builtin_mul_overflow(a->t[i].coef, k, &r.t[i].coef)) return false;
    *out = r;
    return true;
}

/* The product of two terms, false when the degree is too high. */
static bool term_mul(const sg_access_term_t *x, const sg_access_term_t *y, sg_access_term_t *out)
{
    uint32_t dx = term_degree(x), dy = term_degree(y);
    if (dx + dy > SG_ACCESS_MAX_DEGREE) return false;
    sg_access_term_t r;
    memset(&r, 0, sizeof r);
    if (__builtin_mul_overflow(x->coef, y->coef, &r.coef)) return false;
    uint32_t i = 0, j = 0, k = 0;
    while (i < dx || j < dy) {
        if (j >= dy || (i < dx && x->atoms[i] <= y->atoms[j]))
            r.atoms[k++] = x->atoms[i++];
        else
            r.atoms[k++] = y->atoms[j++];
    }
    *out = r;
    return true;
}

bool ax_mul(const sg_access_expr_t *a, const sg_access_expr_t *b, sg_access_expr_t *out)
{
    sg_access_term_t tmp[SG_ACCESS_MAX_TERMS * SG_ACCESS_MAX_TERMS + 2 * SG_ACCESS_MAX_TERMS];
    uint32_t n = 0;
    int64_t c;
    if (__builtin_mul_overflow(a->c, b->c, &c)) return false;
    for (uint32_t i = 0; i < a->n; i++)
        for (uint32_t j = 0; j < b->n; j++)
            if (!term_mul(&a->t[i], &b->t[j], &tmp[n++])) return false;
    for (uint32_t i = 0; i < a->n; i++) {
        tmp[n] = a->t[i];
        if (__builtin_mul_overflow(a->t[i].coef, b->c, &tmp[n].coef)) return false;
        n++;
    }
    for (uint32_t j = 0; j < b->n; j++) {
        tmp[n] = b->t[j];
        if (__builtin_mul_overflow(b->t[j].coef, a->c, &tmp[n].coef)) return false;
        n++;
    }
    return normalize(tmp, n, c, out);
}

bool ax_subst(const sg_access_expr_t *e, sg_access_atom_t atom, const sg_access_expr_t *by,
              sg_access_expr_t *out)
{
    sg_access_expr_t acc;
    ax_const(&acc, e->c);
    for (uint32_t i = 0; i < e->n; i++) {
        const sg_access_term_t *t = &e->t[i];
        sg_access_term_t rest;
        memset(&rest, 0, sizeof rest);
        rest.coef = t->coef;
        uint32_t m = 0, k = 0;
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && t->atoms[d]; d++) {
            if (t->atoms[d] == atom)
                m++;
            else
                rest.atoms[k++] = t->atoms[d];
        }
        sg_access_expr_t part;
        ax_zero(&part);
        if (rest.atoms[0]) {
            part.n = 1;
            part.t[0] = rest;
        } else {
            part.c = rest.coef;
        }
        for (uint32_t p = 0; p < m; p++)
            if (!ax_mul(&part, by, &part)) return false;
        if (!ax_add(&acc, &part, 1, &acc)) return false;
    }
    *out = acc;
    return true;
}

bool ax_equal(const sg_access_expr_t *a, const sg_access_expr_t *b)
{
    if (a->c != b->c || a->n != b->n) return false;
    return memcmp(a->t, b->t, a->n * sizeof(a->t[0])) == 0;
}

bool ax_is_const(const sg_access_expr_t *e, int64_t *c)
{
    if (e->n) return false;
    if (c) *c = e->c;
    return true;
}

uint32_t ax_kinds(const sg_access_expr_t *e)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < e->n; i++)
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && e->t[i].atoms[d]; d++)
            k |= 1u << SG_ACCESS_ATOM_KIND(e->t[i].atoms[d]);
    return k;
}

bool ax_has_atom(const sg_access_expr_t *e, sg_access_atom_t a)
{
    for (uint32_t i = 0; i < e->n; i++)
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && e->t[i].atoms[d]; d++)
            if (e->t[i].atoms[d] == a) return true;
    return false;
}

int64_t ax_linear_coef(const sg_access_expr_t *e, sg_access_atom_t a, bool *other)
{
    int64_t c = 0;
    bool o = false;
    for (uint32_t i = 0; i < e->n; i++) {
        const sg_access_term_t *t = &e->t[i];
        if (t->atoms[0] == a && t->atoms[1] == 0) {
            c = t->coef;
            continue;
        }
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && t->atoms[d]; d++)
            if (t->atoms[d] == a) o = true;
    }
    if (other) *other = o;
    return c;
}

bool ax_div_exact(const sg_access_expr_t *e, int64_t d, sg_access_expr_t *out)
{
    if (d == 0 || (d == -1 && e->c == INT64_MIN)) return false;
    sg_access_expr_t r = *e;
    if (r.c % d) return false;
    r.c /= d;
    for (uint32_t i = 0; i < r.n; i++) {
        if (r.t[i].coef % d || (d == -1 && r.t[i].coef == INT64_MIN)) return false;
        r.t[i].coef /= d;
    }
    *out = r;
    return true;
}

uint32_t ax_trailing_zeros(const sg_access_expr_t *e)
{
    uint64_t acc = (uint64_t)e->c;
    for (uint32_t i = 0; i < e->n; i++) acc |= (uint64_t)e->t[i].coef;
    return acc ? (uint32_t)__builtin_ctzll(acc) : 64;
}

uint64_t ax_hash(const sg_access_expr_t *e)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)e->c;
    const unsigned char *p = (const unsigned char *)e->t;
    for (size_t i = 0; i < e->n * sizeof(e->t[0]); i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ e->n;
}

/* ---- intervals ------------------------------------------------------------- */

static i128 clamp(i128 v)
{
    return v > AX_INF ? AX_INF : v < -AX_INF ? -AX_INF : v;
}

ival_t iv_point(i128 v)
{
    ival_t r = {clamp(v), clamp(v)};
    return r;
}

bool iv_bounded(ival_t a)
{
    return a.lo > -AX_INF && a.hi < AX_INF;
}

ival_t iv_add(ival_t a, ival_t b)
{
    ival_t r;
    r.lo = (a.lo <= -AX_INF || b.lo <= -AX_INF) ? -AX_INF : clamp(a.lo + b.lo);
    r.hi = (a.hi >= AX_INF || b.hi >= AX_INF) ? AX_INF : clamp(a.hi + b.hi);
    return r;
}

/* x*y for one corner, with infinities: 0 times anything is 0. */
static i128 corner(i128 x, i128 y)
{
    if (x == 0 || y == 0) return 0;
    bool inf = x >= AX_INF || x <= -AX_INF || y >= AX_INF || y <= -AX_INF;
    bool neg = (x < 0) != (y < 0);
    if (inf) return neg ? -AX_INF : AX_INF;
    /* |x|,|y| < 2^100: the product may overflow i128, so saturate first */
    i128 ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
    if (ax > AX_INF / ay) return neg ? -AX_INF : AX_INF;
    return clamp(x * y);
}

ival_t iv_mul(ival_t a, ival_t b)
{
    i128 c[4] = {corner(a.lo, b.lo), corner(a.lo, b.hi), corner(a.hi, b.lo), corner(a.hi, b.hi)};
    ival_t r = {c[0], c[0]};
    for (int i = 1; i < 4; i++) {
        if (c[i] < r.lo) r.lo = c[i];
        if (c[i] > r.hi) r.hi = c[i];
    }
    return r;
}

ival_t ax_range(const sg_access_expr_t *e, ax_range_fn fn, void *ctx)
{
    ival_t r = iv_point(e->c);
    for (uint32_t i = 0; i < e->n; i++) {
        const sg_access_term_t *t = &e->t[i];
        ival_t p = iv_point(t->coef);
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && t->atoms[d]; d++) {
            /* x*x is non-negative: an interval product would lose that; rare, left loose */
            p = iv_mul(p, fn(ctx, t->atoms[d]));
        }
        r = iv_add(r, p);
    }
    return r;
}

/* ---- text -------------------------------------------------------------------- */

sg_access_atom_t sg_access_param_atom(uint32_t off, uint32_t width, bool is_signed)
{
    uint32_t lg = width >= 8 ? 3 : width >= 4 ? 2 : width >= 2 ? 1 : 0;
    return SG_ACCESS_ATOM(SG_ACCESS_ATOM_PARAM, (off & 0xffffu) | lg << 16 | (is_signed ? 1u : 0u) << 18);
}

void sg_access_param_atom_decode(sg_access_atom_t a, uint32_t *off, uint32_t *width, bool *is_signed)
{
    uint32_t arg = SG_ACCESS_ATOM_ARG(a);
    if (off) *off = arg & 0xffffu;
    if (width) *width = 1u << ((arg >> 16) & 3u);
    if (is_signed) *is_signed = (arg >> 18) & 1u;
}

static void mark(uint8_t *mask, size_t size, uint32_t off, uint32_t width)
{
    for (uint32_t i = 0; i < width && (size_t)off + i < size; i++) mask[off + i] = 1;
}

static void mark_expr(const sg_access_expr_t *e, uint8_t *mask, size_t size)
{
    for (uint32_t i = 0; i < e->n && i < SG_ACCESS_MAX_TERMS; i++)
        for (uint32_t d = 0; d < SG_ACCESS_MAX_DEGREE; d++) {
            sg_access_atom_t a = e->t[i].atoms[d];
            if (SG_ACCESS_ATOM_KIND(a) != SG_ACCESS_ATOM_PARAM) continue;
            uint32_t off, width;
            sg_access_param_atom_decode(a, &off, &width, NULL);
            mark(mask, size, off, width);
        }
}

void sg_access_param_mask(const sg_access_kernel_t *k, uint8_t *mask, size_t size)
{
    for (uint32_t i = 0; i < k->n_sites; i++) {
        const sg_access_site_t *x = &k->sites[i];
        if (x->base_kind == SG_ACCESS_BASE_PARAM) mark(mask, size, x->base_param, 8);
        mark_expr(&x->offset, mask, size);
    }
    for (uint32_t i = 0; i < k->n_conds; i++) mark_expr(&k->conds[i].e, mask, size);
    for (uint32_t i = 0; i < k->n_exprs; i++) mark_expr(&k->exprs[i], mask, size);
}

static int atom_text(sg_access_atom_t a, char *buf, size_t n)
{
    static const char *const sreg[12] = {"tid.x",   "tid.y",   "tid.z",   "ntid.x",
                                         "ntid.y",  "ntid.z",  "ctaid.x", "ctaid.y",
                                         "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z"};
    uint32_t arg = SG_ACCESS_ATOM_ARG(a);
    switch (SG_ACCESS_ATOM_KIND(a)) {
    case SG_ACCESS_ATOM_SREG: return snprintf(buf, n, "%s", arg < 12 ? sreg[arg] : "?");
    case SG_ACCESS_ATOM_PARAM: {
        uint32_t off, w;
        bool s;
        sg_access_param_atom_decode(a, &off, &w, &s);
        return snprintf(buf, n, "p[%u:%c%u]", off, s ? 's' : 'u', w * 8);
    }
    case SG_ACCESS_ATOM_LOOP: return snprintf(buf, n, "K%u", arg);
    case SG_ACCESS_ATOM_UNIFORM: return snprintf(buf, n, "U%u", arg);
    case SG_ACCESS_ATOM_OPAQUE: return snprintf(buf, n, "O%u", arg);
    case AX_SYMADDR: return snprintf(buf, n, "&S%u.%u", arg >> 20, arg & 0xfffffu);
    case AX_PH: return snprintf(buf, n, "X%u", arg);
    default: return snprintf(buf, n, "?%08x", a);
    }
}

int ax_format(const sg_access_expr_t *e, char *buf, size_t n)
{
    size_t len = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(len < n ? buf + len : NULL, len < n ? n - len : 0, __VA_ARGS__);         \
        if (k_ > 0) len += (size_t)k_;                                                             \
    } while (0)
    if (n) buf[0] = '\0';
    for (uint32_t i = 0; i < e->n; i++) {
        const sg_access_term_t *t = &e->t[i];
        int64_t c = t->coef;
        if (i == 0) {
            if (c == -1)
                PUT("-");
            else if (c != 1)
                PUT("%lld*", (long long)c);
        } else {
            if (c < 0)
                PUT(" - ");
            else
                PUT(" + ");
            uint64_t ac = c < 0 ? 0 - (uint64_t)c : (uint64_t)c;
            if (ac != 1) PUT("%llu*", (unsigned long long)ac);
        }
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && t->atoms[d]; d++) {
            char a[48];
            atom_text(t->atoms[d], a, sizeof a);
            PUT("%s%s", d ? "*" : "", a);
        }
    }
    if (e->n == 0)
        PUT("%lld", (long long)e->c);
    else if (e->c > 0)
        PUT(" + %lld", (long long)e->c);
    else if (e->c < 0)
        PUT(" - %llu", (unsigned long long)(0 - (uint64_t)e->c));
#undef PUT
    return (int)len;
}

int sg_access_expr_format(const sg_access_expr_t *e, char *buf, size_t n)
{
    return ax_format(e, buf, n);
}

int sg_access_cond_format(const sg_access_cond_t *c, char *buf, size_t n)
{
    static const char *const rel[SG_ACCESS_REL_COUNT] = {"< 0",          "<= 0",
                                                          "== 0",         "!= 0",
                                                          "fits u32",     "fits s32",
                                                          "fits u64"};
    char e[512];
    ax_format(&c->e, e, sizeof e);
    if (c->from_iter)
        return snprintf(buf, n, "%s %s (from iteration 1 of K%u)", e,
                        c->rel < SG_ACCESS_REL_COUNT ? rel[c->rel] : "?", c->from_iter - 1u);
    return snprintf(buf, n, "%s %s", e, c->rel < SG_ACCESS_REL_COUNT ? rel[c->rel] : "?");
}
