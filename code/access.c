/* access.c: the access analysis of one PTX kernel (see access.h).
 *
 * An abstract interpretation over the kernel's CFG. The value of each
 * register is a polynomial (access_expr.c) in the thread/CTA ids, parameter
 * words, loop iteration counts, uniform derived values and bounded opaque
 * values, or "unknown" with a reason; a polynomial may also carry an unknown
 * part ("partial"), which keeps the pointer it is based on. Predicates are
 * conjunctions or disjunctions of comparisons. A state also holds facts
 * (comparisons known to hold on every path here) and whether those facts
 * describe exactly when the block runs ("exact").
 *
 * Blocks are visited once in reverse post-order; a natural loop is visited
 * twice: first with a placeholder for every register it changes, which shows
 * at its latch whether the register is an induction variable (placeholder +
 * loop-invariant step); then with those registers as init + step * K, and
 * with the loop's bound as a fact, derived from the latch condition (its
 * trip count when the condition is uniform, a monotone bound otherwise, or
 * the unit count-down form nvcc emits for remainder loops). This is the
 * widening at loop heads: every other changing register becomes unknown.
 *
 * 32-bit arithmetic is modelled as exact integers; wherever a 32-bit value
 * is widened or compared, a check (the value fits in 32 bits) is attached
 * and verified at evaluation with the launch's numbers.
 */
#include "code/access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_internal.h"

#define MAX_FACTS 24
#define MAX_OB 12
#define MAX_PC 4
#define MAX_LOOP_DEPTH 8
#define MAX_STATE_SLOTS (32u << 20) /* blocks x tracked registers */

/* ---- values ---------------------------------------------------------------- */

typedef enum { V_UNDEF = 0, V_POLY, V_UNKNOWN, V_PRED } vkind_t;

typedef struct {
    uint8_t kind;
    bool partial;      /* POLY: plus an unknown part */
    uint8_t reason;    /* UNKNOWN / partial */
    uint32_t line;
    uint8_t nob;
    uint32_t ob[MAX_OB]; /* checks (cond ids) this value relies on */
    /* PRED: the predicate is true iff all (conj) / any (!conj) of pc hold */
    bool conj, pexact;
    uint8_t pn;
    uint32_t pc[MAX_PC];
    sg_access_expr_t e;
} val_t;

typedef struct {
    sg_access_cond_t c;
    uint8_t nob;
    uint32_t ob[MAX_OB];
    uint64_t hash;
    uint32_t next; /* hash chain */
} cond_t;

typedef struct {
    bool reached, exact;
    uint8_t nf;
    uint32_t f[MAX_FACTS]; /* fact cond ids, ascending */
    uint32_t *v;           /* value id per tracked slot */
} state_t;

typedef struct {
    uint32_t header;
    uint32_t parent;       /* loop index or SG_NONE */
    uint32_t depth;
    uint8_t *in;           /* block membership */
    uint32_t n_latch;
    uint32_t *latch;
    /* results of the first pass, for exits */
    int exit_kind;         /* 0: values with K become unknown; 1: substitute K := exit_k */
    sg_access_expr_t exit_k;
    uint32_t exit_from;    /* the latch block the substitution holds for */
} loop_t;

typedef struct {
    const sg_ptx_module_t *m;
    const sg_ptx_func_t *f;
    sg_access_kernel_t *out;
    /* registers */
    uint32_t n_slots;
    uint32_t *slot_of;      /* per register: slot or SG_NONE */
    /* values and conditions */
    val_t *vals;
    uint32_t n_vals, cap_vals;
    cond_t *conds;
    uint32_t n_conds, cap_conds;
    uint32_t *cond_hash;    /* 4096 buckets */
    /* blocks */
    state_t *st;            /* out-state per block */
    uint32_t *idom, *ipdom; /* (post-)dominators; ipdom: n_blocks = the exit */
    bool *in_exact;         /* in-state of each block is exact (last pass) */
    uint32_t *loop_of;      /* innermost loop per block */
    loop_t *loops;
    uint32_t n_loops;
    struct {
        uint32_t loop, slot;
    } *phs; /* placeholder atoms: the loop and register slot each stands for */
    uint32_t n_ph, cap_ph;
    bool recording;
    bool failed;
    uint8_t fail_reason;
    char fail_detail[160];
    /* call arguments stored with st.param in the current block */
    uint32_t *param_store;  /* per function var: value id + 1, or 0 */
    bool *ptr_param;        /* per param byte offset (entries): reached cvta.to.global */
    uint32_t tid_max[3];    /* static bound of %tid (inclusive) */
    uint32_t ntid_min[3], ntid_max[3];
    /* quotients by value: the same division computes the same opaque value */
    struct quot {
        sg_access_expr_t a, b;
        uint32_t val;
    } *quots;
    uint32_t n_quots, cap_quots;
} ctx_t;

static void fail(ctx_t *c, uint8_t reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool facts_add(state_t *st, uint32_t f);

#include <stdarg.h>
static void fail(ctx_t *c, uint8_t reason, const char *fmt, ...)
{
    if (c->failed) return;
    c->failed = true;
    c->fail_reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->fail_detail, sizeof c->fail_detail, fmt, ap);
    va_end(ap);
}

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return true;
    uint32_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > UINT32_MAX / 2) return false;
        n *= 2;
    }
    void *q = realloc(*p, (size_t)n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static uint32_t new_val(ctx_t *c, const val_t *v)
{
    if (!grow((void **)&c->vals, &c->cap_vals, c->n_vals + 1, sizeof(val_t))) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return 0;
    }
    c->vals[c->n_vals] = *v;
    return c->n_vals++;
}

static uint32_t v_unknown(ctx_t *c, uint8_t reason, uint32_t line)
{
    val_t v;
    memset(&v, 0, sizeof v);
    v.kind = V_UNKNOWN;
    v.reason = reason;
    v.line = line;
    return new_val(c, &v);
}

/* ---- conditions -------------------------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b)
{
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x > INT64_MAX ? 1 : (int64_t)x;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* Canonical form: e < 0 becomes e + 1 <= 0; inequalities divided by the
 * gcd of their coefficients (constant floored); == and != with a positive
 * leading coefficient. */
static bool canon(sg_access_cond_t *k)
{
    if (k->rel == SG_ACCESS_LT) {
        if (!ax_add_const(&k->e, 1, &k->e)) return false;
        k->rel = SG_ACCESS_LE;
    }
    if ((k->rel == SG_ACCESS_LE || k->rel == SG_ACCESS_EQ || k->rel == SG_ACCESS_NE) && k->e.n) {
        int64_t g = 0;
        for (uint32_t i = 0; i < k->e.n; i++) g = gcd64(g, k->e.t[i].coef);
        if (k->rel != SG_ACCESS_LE) {
            if (k->e.c % g) {
                /* never zero: EQ is false, NE true; keep as is (rare) */
                g = 1;
            }
            if (k->e.t[0].coef < 0) g = -g;
        }
        if (g != 1 && g != 0) {
            int64_t c = k->rel == SG_ACCESS_LE ? floor_div(k->e.c, g) : k->e.c / g;
            for (uint32_t i = 0; i < k->e.n; i++) k->e.t[i].coef /= g;
            k->e.c = c;
        }
    }
    return true;
}

static uint32_t intern_cond(ctx_t *c, const sg_access_cond_t *in, const uint32_t *ob, uint8_t nob)
{
    sg_access_cond_t k = *in;
    if (!canon(&k)) return SG_NONE;
    uint64_t h = ax_hash(&k.e) * 31 + k.rel * 7 + k.from_iter;
    uint32_t b = (uint32_t)(h & 4095);
    for (uint32_t i = c->cond_hash[b]; i != SG_NONE; i = c->conds[i].next) {
        cond_t *x = &c->conds[i];
        if (x->hash == h && x->c.rel == k.rel && x->c.from_iter == k.from_iter &&
            ax_equal(&x->c.e, &k.e) && x->nob == nob &&
            (nob == 0 || !memcmp(x->ob, ob, nob * sizeof(uint32_t))))
            return i;
    }
    if (!grow((void **)&c->conds, &c->cap_conds, c->n_conds + 1, sizeof(cond_t))) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return SG_NONE;
    }
    cond_t *x = &c->conds[c->n_conds];
    memset(x, 0, sizeof(*x));
    x->c = k;
    x->nob = nob;
    if (nob) memcpy(x->ob, ob, nob * sizeof(uint32_t));
    x->hash = h;
    x->next = c->cond_hash[b];
    c->cond_hash[b] = c->n_conds;
    return c->n_conds++;
}

/* The negation of fact i (same obligations). */
static uint32_t neg_cond(ctx_t *c, uint32_t i)
{
    sg_access_cond_t k = c->conds[i].c;
    uint32_t ob[MAX_OB];
    uint8_t nob = c->conds[i].nob;
    memcpy(ob, c->conds[i].ob, sizeof ob);
    switch (k.rel) {
    case SG_ACCESS_LE: /* !(e <= 0)  <=>  -e < 0 */
        if (!ax_scale(&k.e, -1, &k.e)) return SG_NONE;
        k.rel = SG_ACCESS_LT;
        break;
    case SG_ACCESS_EQ: k.rel = SG_ACCESS_NE; break;
    case SG_ACCESS_NE: k.rel = SG_ACCESS_EQ; break;
    default: return SG_NONE;
    }
    return intern_cond(c, &k, ob, nob);
}

/* ---- static ranges of atoms ----------------------------------------------------- */

static ival_t static_atom(void *vc, sg_access_atom_t a)
{
    ctx_t *c = vc;
    uint32_t arg = SG_ACCESS_ATOM_ARG(a);
    ival_t r = {-AX_INF, AX_INF};
    switch (SG_ACCESS_ATOM_KIND(a)) {
    case SG_ACCESS_ATOM_SREG:
        if (arg <= SG_ACCESS_TID_Z) {
            r.lo = 0;
            r.hi = c->tid_max[arg];
        } else if (arg <= SG_ACCESS_NTID_Z) {
            r.lo = c->ntid_min[arg - SG_ACCESS_NTID_X];
            r.hi = c->ntid_max[arg - SG_ACCESS_NTID_X];
        } else if (arg <= SG_ACCESS_CTAID_Z) {
            r.lo = 0;
            r.hi = arg == SG_ACCESS_CTAID_X ? 2147483646 : 65534;
        } else {
            r.lo = 1;
            r.hi = arg == SG_ACCESS_NCTAID_X ? 2147483647 : 65535;
        }
        break;
    case SG_ACCESS_ATOM_PARAM: {
        uint32_t w;
        bool s;
        sg_access_param_atom_decode(a, NULL, &w, &s);
        if (s) {
            r.lo = -((i128)1 << (8 * w - 1));
            r.hi = ((i128)1 << (8 * w - 1)) - 1;
        } else {
            r.lo = 0;
            r.hi = ((i128)1 << (8 * w)) - 1;
        }
        break;
    }
    case SG_ACCESS_ATOM_LOOP: r.lo = 0; break;
    case SG_ACCESS_ATOM_OPAQUE:
        if (arg < c->out->n_opaques) {
            r.lo = c->out->opaques[arg].lo;
            r.hi = c->out->opaques[arg].hi;
        }
        break;
    default: break;
    }
    return r;
}

static ival_t srange(ctx_t *c, const sg_access_expr_t *e)
{
    return ax_range(e, static_atom, c);
}

/* ---- building values ----------------------------------------------------------------- */

static void merge_ob(val_t *dst, const val_t *src, bool *overflow)
{
    for (uint8_t i = 0; i < src->nob; i++) {
        bool have = false;
        for (uint8_t j = 0; j < dst->nob; j++) have |= dst->ob[j] == src->ob[i];
        if (have) continue;
        if (dst->nob == MAX_OB) {
            *overflow = true;
            return;
        }
        dst->ob[dst->nob++] = src->ob[i];
    }
}

/* A check that e fits `rel` (FITS_*), unless the static range proves it. */
static bool add_fits(ctx_t *c, val_t *v, const sg_access_expr_t *e, uint8_t rel)
{
    ival_t r = srange(c, e);
    i128 lo = rel == SG_ACCESS_FITS_S32 ? -((i128)1 << 31) : 0;
    i128 hi = rel == SG_ACCESS_FITS_U32 ? ((i128)1 << 32) - 1
              : rel == SG_ACCESS_FITS_S32 ? ((i128)1 << 31) - 1
                                          : ((i128)1 << 63) - 1;
    if (r.lo >= lo && r.hi <= hi) return true;
    sg_access_cond_t k;
    memset(&k, 0, sizeof k);
    k.e = *e;
    k.rel = rel;
    uint32_t id = intern_cond(c, &k, NULL, 0);
    if (id == SG_NONE) return false;
    for (uint8_t j = 0; j < v->nob; j++)
        if (v->ob[j] == id) return true;
    if (v->nob == MAX_OB) return false;
    v->ob[v->nob++] = id;
    return true;
}

static const val_t *V(ctx_t *c, uint32_t id)
{
    return &c->vals[id];
}

static bool is_poly(const val_t *v)
{
    return v->kind == V_POLY && !v->partial;
}

static uint32_t mk_poly(ctx_t *c, const sg_access_expr_t *e, const val_t *a, const val_t *b,
                        bool partial, uint8_t reason, uint32_t line)
{
    val_t r;
    memset(&r, 0, sizeof r);
    r.kind = V_POLY;
    r.e = *e;
    r.partial = partial;
    r.reason = reason;
    r.line = line;
    bool ov = false;
    if (a) merge_ob(&r, a, &ov);
    if (b) merge_ob(&r, b, &ov);
    if (ov) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
    return new_val(c, &r);
}

static uint32_t v_const(ctx_t *c, int64_t k)
{
    sg_access_expr_t e;
    ax_const(&e, k);
    return mk_poly(c, &e, NULL, NULL, false, 0, 0);
}

static uint32_t v_atom(ctx_t *c, sg_access_atom_t a)
{
    sg_access_expr_t e;
    ax_atom(&e, a, 1);
    return mk_poly(c, &e, NULL, NULL, false, 0, 0);
}

/* The reason a non-polynomial operand passes on. */
static void unk_of(const val_t *a, const val_t *b, uint8_t *reason, uint32_t *line)
{
    const val_t *u = (a->kind != V_POLY || a->partial) ? a : b;
    *reason = u->kind == V_UNDEF ? SG_ACCESS_R_UNSUPPORTED : u->reason;
    *line = u->line;
    if (*reason == SG_ACCESS_OK) *reason = SG_ACCESS_R_UNSUPPORTED;
}

/* a + k*b, keeping a partial value's base. */
static uint32_t v_add(ctx_t *c, uint32_t ia, uint32_t ib, int64_t k, uint32_t line)
{
    const val_t *a = V(c, ia), *b = V(c, ib);
    if (a->kind != V_POLY || b->kind != V_POLY) {
        uint8_t r;
        uint32_t l;
        unk_of(a, b, &r, &l);
        /* base + unknown offset: keep the base */
        if (a->kind == V_POLY || b->kind == V_POLY) {
            const val_t *p = a->kind == V_POLY ? a : b;
            const val_t *q = p == a ? b : a;
            sg_access_expr_t e = p->e;
            if (p == b && !ax_scale(&e, k, &e)) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
            if (q->kind == V_UNKNOWN || q->kind == V_UNDEF) {
                uint8_t qr = q->kind == V_UNDEF ? SG_ACCESS_R_UNSUPPORTED : q->reason;
                return mk_poly(c, &e, p, NULL, true, qr, q->line);
            }
        }
        return v_unknown(c, r, l);
    }
    sg_access_expr_t e;
    if (!ax_add(&a->e, &b->e, k, &e)) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
    bool part = a->partial || b->partial;
    uint8_t r = a->partial ? a->reason : b->reason;
    uint32_t l = a->partial ? a->line : b->line;
    return mk_poly(c, &e, a, b, part, part ? r : 0, part ? l : 0);
}

static uint32_t v_mul(ctx_t *c, uint32_t ia, uint32_t ib, uint32_t line)
{
    const val_t *a = V(c, ia), *b = V(c, ib);
    if (a->kind != V_POLY || b->kind != V_POLY) {
        uint8_t r;
        uint32_t l;
        unk_of(a, b, &r, &l);
        return v_unknown(c, r, l);
    }
    int64_t k;
    if (a->partial || b->partial) {
        /* a partial value scaled by a constant stays partial */
        const val_t *p = a->partial ? a : b, *q = p == a ? b : a;
        if (!q->partial && ax_is_const(&q->e, &k)) {
            sg_access_expr_t e;
            if (!ax_scale(&p->e, k, &e)) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
            return mk_poly(c, &e, p, q, true, p->reason, p->line);
        }
        return v_unknown(c, p->reason, p->line);
    }
    sg_access_expr_t e;
    if (!ax_mul(&a->e, &b->e, &e)) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
    return mk_poly(c, &e, a, b, false, 0, 0);
}

/* A value with one more check that its polynomial fits `rel`. */
static uint32_t v_fits(ctx_t *c, uint32_t ia, uint8_t rel, uint32_t line)
{
    const val_t *a = V(c, ia);
    if (a->kind != V_POLY || a->partial) return ia;
    val_t r = *a;
    if (!add_fits(c, &r, &a->e, rel)) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
    if (r.nob == a->nob) return ia;
    return new_val(c, &r);
}

static bool is_uniform_expr(const sg_access_expr_t *e)
{
    for (uint32_t i = 0; i < e->n; i++)
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && e->t[i].atoms[d]; d++) {
            sg_access_atom_t a = e->t[i].atoms[d];
            uint32_t k = SG_ACCESS_ATOM_KIND(a);
            if (k == SG_ACCESS_ATOM_PARAM || k == SG_ACCESS_ATOM_UNIFORM) continue;
            if (k == SG_ACCESS_ATOM_SREG && SG_ACCESS_ATOM_ARG(a) >= SG_ACCESS_NTID_X &&
                !(SG_ACCESS_ATOM_ARG(a) >= SG_ACCESS_CTAID_X && SG_ACCESS_ATOM_ARG(a) <= SG_ACCESS_CTAID_Z))
                continue;
            return false;
        }
    return true;
}

static uint32_t push_expr(ctx_t *c, const sg_access_expr_t *e)
{
    sg_access_kernel_t *k = c->out;
    /* grown by powers of two: the capacity is implied by the count */
    if ((k->n_exprs & (k->n_exprs - 1)) == 0 || k->n_exprs == 0) {
        uint32_t nc = k->n_exprs ? k->n_exprs * 2 : 8;
        void *p = realloc(k->exprs, (size_t)nc * sizeof(*k->exprs));
        if (!p) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
            return SG_NONE;
        }
        k->exprs = p;
    }
    k->exprs[k->n_exprs] = *e;
    return k->n_exprs++;
}

static uint32_t push_uexpr(ctx_t *c, const sg_access_uexpr_t *u)
{
    sg_access_kernel_t *k = c->out;
    if ((k->n_uexprs & (k->n_uexprs - 1)) == 0 || k->n_uexprs == 0) {
        uint32_t nc = k->n_uexprs ? k->n_uexprs * 2 : 8;
        void *p = realloc(k->uexprs, (size_t)nc * sizeof(*k->uexprs));
        if (!p) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
            return SG_NONE;
        }
        k->uexprs = p;
    }
    if (k->n_uexprs >= 0xffffff) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "too many derived values");
        return SG_NONE;
    }
    k->uexprs[k->n_uexprs] = *u;
    return k->n_uexprs++;
}

/* A uniform derived value op(a, b), or SG_NONE when a or b is not uniform. */
static uint32_t v_uniform(ctx_t *c, uint8_t op, uint32_t ia, uint32_t ib, uint32_t bits,
                          bool is_signed)
{
    const val_t *a = V(c, ia), *b = ib == SG_NONE ? NULL : V(c, ib);
    if (!is_poly(a) || !is_uniform_expr(&a->e)) return SG_NONE;
    if (b && (!is_poly(b) || !is_uniform_expr(&b->e))) return SG_NONE;
    sg_access_uexpr_t u;
    memset(&u, 0, sizeof u);
    u.op = op;
    u.bits = (uint8_t)bits;
    u.is_signed = is_signed;
    u.a = push_expr(c, &a->e);
    sg_access_expr_t zero;
    ax_zero(&zero);
    u.b = push_expr(c, b ? &b->e : &zero);
    uint32_t ui = push_uexpr(c, &u);
    if (ui == SG_NONE) return SG_NONE;
    sg_access_expr_t e;
    ax_atom(&e, SG_ACCESS_ATOM(SG_ACCESS_ATOM_UNIFORM, ui), 1);
    return mk_poly(c, &e, a, b, false, 0, 0);
}

static uint32_t v_opaque(ctx_t *c, int64_t lo, int64_t hi, uint32_t line, const char *what)
{
    sg_access_kernel_t *k = c->out;
    if ((k->n_opaques & (k->n_opaques - 1)) == 0 || k->n_opaques == 0) {
        uint32_t nc = k->n_opaques ? k->n_opaques * 2 : 8;
        void *p = realloc(k->opaques, (size_t)nc * sizeof(*k->opaques));
        if (!p) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
            return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
        }
        k->opaques = p;
    }
    if (k->n_opaques >= 0xffffff) return v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line);
    sg_access_opaque_t *o = &k->opaques[k->n_opaques];
    memset(o, 0, sizeof(*o));
    o->lo = lo;
    o->hi = hi;
    o->line = line;
    snprintf(o->what, sizeof o->what, "%s", what);
    return v_atom(c, SG_ACCESS_ATOM(SG_ACCESS_ATOM_OPAQUE, k->n_opaques++));
}

/* Bits a non-negative polynomial may have set, when each term's bits are
 * known; 0 means "could not tell". */
static uint64_t maybe_bits(ctx_t *c, const sg_access_expr_t *e, bool *ok)
{
    uint64_t acc = 0;
    *ok = false;
    if (e->c < 0) return 0;
    acc = (uint64_t)e->c;
    for (uint32_t i = 0; i < e->n; i++) {
        sg_access_expr_t one;
        ax_zero(&one);
        one.n = 1;
        one.t[0] = e->t[i];
        if (e->t[i].coef <= 0) return 0;
        ival_t r = srange(c, &one);
        if (r.lo < 0 || r.hi >= ((i128)1 << 62)) return 0;
        uint32_t tz = (uint32_t)__builtin_ctzll((uint64_t)e->t[i].coef);
        uint64_t hi = (uint64_t)r.hi;
        uint32_t top = hi ? 63 - (uint32_t)__builtin_clzll(hi) : 0;
        uint64_t bits = top >= tz ? ((top == 63 ? ~0ull : ((1ull << (top + 1)) - 1)) & ~((1ull << tz) - 1)) : 0;
        if (bits & acc) return 0; /* overlapping: a sum, not an or */
        acc |= bits;
    }
    *ok = true;
    return acc;
}

/* ---- predicates ------------------------------------------------------------------------ */

static uint32_t mk_pred(ctx_t *c, bool conj, bool exact, const uint32_t *pc, uint8_t pn)
{
    val_t v;
    memset(&v, 0, sizeof v);
    v.kind = V_PRED;
    v.conj = conj;
    v.pexact = exact;
    v.pn = pn;
    if (pn) memcpy(v.pc, pc, pn * sizeof(uint32_t));
    return new_val(c, &v);
}

static uint32_t pred_unknown(ctx_t *c)
{
    return mk_pred(c, true, false, NULL, 0);
}

/* The facts that hold when predicate value p is `want`: fills f (up to
 * MAX_PC) and says whether they describe it exactly. */
static uint8_t pred_facts(ctx_t *c, uint32_t ip, bool want, uint32_t *f, bool *exact)
{
    const val_t *p = V(c, ip);
    *exact = false;
    if (p->kind != V_PRED || p->pn == 0) return 0;
    bool conj = want ? p->conj : !p->conj;
    if (!conj && p->pn > 1) return 0;
    for (uint8_t i = 0; i < p->pn; i++) {
        f[i] = want ? p->pc[i] : neg_cond(c, p->pc[i]);
        if (f[i] == SG_NONE) return 0;
    }
    *exact = p->pexact;
    return p->pn;
}

/* setp: the comparison a CMP b on type t. */
static uint32_t v_compare(ctx_t *c, const char *cmp, sg_ptx_type_t t, uint32_t ia, uint32_t ib,
                          uint32_t line)
{
    const val_t *a = V(c, ia), *b = V(c, ib);
    if (!sg_ptx_type_is_int(t) || !is_poly(a) || !is_poly(b)) return pred_unknown(c);
    bool s = sg_ptx_type_is_signed(t);
    uint32_t bits = sg_ptx_type_size(t) * 8;
    /* the comparison holds on the machine values: the polynomials must fit */
    val_t tmp;
    memset(&tmp, 0, sizeof tmp);
    bool ov = false;
    merge_ob(&tmp, a, &ov);
    merge_ob(&tmp, b, &ov);
    if (bits <= 32 || !s) {
        uint8_t rel = bits <= 32 ? (s ? SG_ACCESS_FITS_S32 : SG_ACCESS_FITS_U32) : SG_ACCESS_FITS_U64;
        if (bits < 32) rel = s ? SG_ACCESS_FITS_S32 : SG_ACCESS_FITS_U32; /* loose for 8/16 */
        if (!add_fits(c, &tmp, &a->e, rel) || !add_fits(c, &tmp, &b->e, rel)) ov = true;
    }
    if (ov) return pred_unknown(c);
    sg_access_cond_t k;
    memset(&k, 0, sizeof k);
    const sg_access_expr_t *l = &a->e, *r = &b->e;
    bool lt = false, le = false, eq = false, swap = false;
    if (!strcmp(cmp, ".lt") || !strcmp(cmp, ".lo"))
        lt = true;
    else if (!strcmp(cmp, ".le") || !strcmp(cmp, ".ls"))
        le = true;
    else if (!strcmp(cmp, ".gt") || !strcmp(cmp, ".hi"))
        lt = swap = true;
    else if (!strcmp(cmp, ".ge") || !strcmp(cmp, ".hs"))
        le = swap = true;
    else if (!strcmp(cmp, ".eq"))
        eq = true;
    else if (strcmp(cmp, ".ne"))
        return pred_unknown(c);
    if (swap) {
        const sg_access_expr_t *x = l;
        l = r;
        r = x;
    }
    if (!ax_add(l, r, -1, &k.e)) return pred_unknown(c);
    k.rel = lt ? SG_ACCESS_LT : le ? SG_ACCESS_LE : eq ? SG_ACCESS_EQ : SG_ACCESS_NE;
    uint32_t id = intern_cond(c, &k, tmp.ob, tmp.nob);
    if (id == SG_NONE) return pred_unknown(c);
    return mk_pred(c, true, true, &id, 1);
}

/* p AND q / p OR q on predicate values (negated operands allowed). */
static uint32_t v_pred_op(ctx_t *c, bool is_and, uint32_t ip, bool np, uint32_t iq, bool nq)
{
    uint32_t fp[MAX_PC], fq[MAX_PC];
    bool ep, eq;
    /* normalise each operand to "true iff conj(facts)" or "true iff disj(facts)" */
    const val_t *p = V(c, ip), *q = V(c, iq);
    if (p->kind != V_PRED || q->kind != V_PRED || !p->pn || !q->pn) return pred_unknown(c);
    /* value of operand as (conj?, facts) for the literal (with negation) */
    bool cp = np ? !p->conj : p->conj, cq = nq ? !q->conj : q->conj;
    for (uint8_t i = 0; i < p->pn; i++) {
        fp[i] = np ? neg_cond(c, p->pc[i]) : p->pc[i];
        if (fp[i] == SG_NONE) return pred_unknown(c);
    }
    for (uint8_t i = 0; i < q->pn; i++) {
        fq[i] = nq ? neg_cond(c, q->pc[i]) : q->pc[i];
        if (fq[i] == SG_NONE) return pred_unknown(c);
    }
    ep = p->pexact;
    eq = q->pexact;
    if (p->pn == 1) cp = is_and;
    if (q->pn == 1) cq = is_and;
    if (cp != is_and || cq != is_and || p->pn + q->pn > MAX_PC) return pred_unknown(c);
    uint32_t all[MAX_PC];
    uint8_t n = 0;
    for (uint8_t i = 0; i < p->pn; i++) all[n++] = fp[i];
    for (uint8_t i = 0; i < q->pn; i++) all[n++] = fq[i];
    return mk_pred(c, is_and, ep && eq, all, n);
}

static uint32_t v_pred_not(ctx_t *c, uint32_t ip)
{
    const val_t *p = V(c, ip);
    if (p->kind != V_PRED || !p->pn) return pred_unknown(c);
    uint32_t f[MAX_PC];
    for (uint8_t i = 0; i < p->pn; i++) {
        f[i] = neg_cond(c, p->pc[i]);
        if (f[i] == SG_NONE) return pred_unknown(c);
    }
    return mk_pred(c, p->pn == 1 ? true : !p->conj, p->pexact, f, p->pn);
}

/* ---- operands ---------------------------------------------------------------------------- */

static uint32_t slot(const ctx_t *c, uint32_t reg)
{
    return reg < c->f->n_regs ? c->slot_of[reg] : SG_NONE;
}

static sg_access_atom_t symaddr_atom(sg_ptx_sym_kind_t kind, uint32_t idx)
{
    return SG_ACCESS_ATOM(AX_SYMADDR, ((uint32_t)kind << 20) | (idx & 0xfffffu));
}

/* The value of an operand read in state st. */
static uint32_t opnd_val(ctx_t *c, const state_t *st, const sg_ptx_operand_t *o, uint32_t line)
{
    switch (o->kind) {
    case SG_PTX_OPND_REG: {
        uint32_t s = slot(c, o->reg);
        if (s == SG_NONE || o->comp) return v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
        uint32_t v = st->v[s];
        if (o->neg) {
            if (V(c, v)->kind == V_PRED) return v_pred_not(c, v);
            return v_add(c, v_const(c, 0), v, -1, line);
        }
        return v;
    }
    case SG_PTX_OPND_INT: return v_const(c, o->ival);
    case SG_PTX_OPND_SREG:
        if (o->sreg >= SG_PTX_SREG_TID_X && o->sreg <= SG_PTX_SREG_NCTAID_Z)
            return v_atom(c, SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, o->sreg - SG_PTX_SREG_TID_X));
        if (o->sreg == SG_PTX_SREG_LANEID) return v_opaque(c, 0, 31, line, "%laneid");
        return v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
    case SG_PTX_OPND_SYMBOL:
        if (o->sym_kind == SG_PTX_SYM_PARAM || o->sym_kind == SG_PTX_SYM_LOCAL_VAR ||
            o->sym_kind == SG_PTX_SYM_MODULE_VAR) {
            sg_access_expr_t e;
            ax_atom(&e, symaddr_atom(o->sym_kind, o->sym), 1);
            e.c = o->ival;
            return mk_poly(c, &e, NULL, NULL, false, 0, 0);
        }
        return v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
    default: return v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
    }
}

/* The address an ADDRESS operand denotes. */
static uint32_t addr_val(ctx_t *c, const state_t *st, const sg_ptx_operand_t *o, uint32_t line)
{
    if (o->kind != SG_PTX_OPND_ADDRESS) return v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
    uint32_t base;
    if (o->reg != SG_PTX_NONE) {
        sg_ptx_operand_t r;
        memset(&r, 0, sizeof r);
        r.kind = SG_PTX_OPND_REG;
        r.reg = o->reg;
        base = opnd_val(c, st, &r, line);
    } else if (o->sym_kind != SG_PTX_SYM_NONE) {
        sg_ptx_operand_t s;
        memset(&s, 0, sizeof s);
        s.kind = SG_PTX_OPND_SYMBOL;
        s.sym_kind = o->sym_kind;
        s.sym = o->sym;
        base = opnd_val(c, st, &s, line);
    } else {
        return v_const(c, o->ival);
    }
    if (o->ival == 0) return base;
    return v_add(c, base, v_const(c, o->ival), 1, line);
}

/* ---- kernel facts -------------------------------------------------------------------------- */

static void flag(ctx_t *c, sg_access_flag_t f, uint32_t line)
{
    sg_access_kernel_t *k = c->out;
    if (!(k->flags & (1ull << f))) {
        k->flags |= 1ull << f;
        k->flag_line[f] = line;
    }
}

static bool is_runtime_callee(const char *n)
{
    return !strcmp(n, "vprintf") || !strcmp(n, "malloc") || !strcmp(n, "free") ||
           !strcmp(n, "__assertfail");
}

static bool is_launch_callee(const char *n)
{
    return !strncmp(n, "cudaLaunchDevice", 16) || !strncmp(n, "cudaGetParameterBuffer", 22) ||
           !strncmp(n, "cudaCGGetIntrinsicHandle", 24) || !strncmp(n, "cudaCGSynchronize", 17);
}

static bool has_mod_prefix(const sg_ptx_instr_t *ins, const char *pre)
{
    size_t n = strlen(pre);
    for (uint32_t i = 0; i < ins->n_mods; i++)
        if (!strncmp(ins->mods[i], pre, n)) return true;
    return false;
}

static void scan_opnd_flags(ctx_t *c, const sg_ptx_operand_t *o, uint32_t line, bool *shared_used,
                            bool in_ldparam)
{
    const sg_ptx_module_t *m = c->m;
    const sg_ptx_func_t *f = c->f;
    if (o->kind == SG_PTX_OPND_SREG) {
        switch (o->sreg) {
        case SG_PTX_SREG_ENVREG: flag(c, SG_ACCESS_F_ENVREG, line); break;
        case SG_PTX_SREG_CLUSTER: flag(c, SG_ACCESS_F_CLUSTER, line); break;
        case SG_PTX_SREG_CLOCK:
        case SG_PTX_SREG_CLOCK64:
        case SG_PTX_SREG_GLOBALTIMER: flag(c, SG_ACCESS_F_CLOCK, line); break;
        case SG_PTX_SREG_DYNAMIC_SMEM_SIZE:
        case SG_PTX_SREG_TOTAL_SMEM_SIZE:
        case SG_PTX_SREG_AGGR_SMEM_SIZE: flag(c, SG_ACCESS_F_DYN_SMEM_SIZE, line); break;
        case SG_PTX_SREG_LANEID:
        case SG_PTX_SREG_WARPID:
        case SG_PTX_SREG_NWARPID:
        case SG_PTX_SREG_SMID:
        case SG_PTX_SREG_NSMID:
        case SG_PTX_SREG_GRIDID:
        case SG_PTX_SREG_LANEMASK: flag(c, SG_ACCESS_F_WARP, line); break;
        default: break;
        }
    }
    if (o->kind == SG_PTX_OPND_SYMBOL || o->kind == SG_PTX_OPND_ADDRESS) {
        const sg_ptx_var_t *v = NULL;
        if (o->sym_kind == SG_PTX_SYM_MODULE_VAR && o->sym < m->n_vars) v = &m->vars[o->sym];
        if (o->sym_kind == SG_PTX_SYM_LOCAL_VAR && o->sym < f->n_vars) v = &f->vars[o->sym];
        if (v && (v->space == SG_PTX_SPACE_GLOBAL || v->space == SG_PTX_SPACE_CONST) &&
            o->sym_kind == SG_PTX_SYM_MODULE_VAR)
            flag(c, SG_ACCESS_F_MODULE_GLOBAL, line);
        if (v && v->space == SG_PTX_SPACE_SHARED) {
            if (v->size == 0 && v->n_dims) {
                flag(c, SG_ACCESS_F_DYN_SHARED, line);
            } else {
                flag(c, SG_ACCESS_F_SHARED, line);
                if (o->sym_kind == SG_PTX_SYM_MODULE_VAR && !shared_used[o->sym]) {
                    shared_used[o->sym] = true;
                    c->out->static_shared_bytes += v->size;
                }
            }
        }
        if (v && v->space == SG_PTX_SPACE_LOCAL) flag(c, SG_ACCESS_F_LOCAL, line);
        if (o->kind == SG_PTX_OPND_SYMBOL && o->sym_kind == SG_PTX_SYM_PARAM && !in_ldparam)
            flag(c, SG_ACCESS_F_PARAM_ADDRESS, line);
    }
    for (uint32_t i = 0; i < o->n_elems; i++) scan_opnd_flags(c, &o->elems[i], line, shared_used, false);
}

static bool is_cta_barrier(const sg_ptx_instr_t *ins)
{
    return (ins->op == SG_PTX_OP_BAR || ins->op == SG_PTX_OP_BARRIER) &&
           !(ins->n_mods && !strcmp(ins->mods[0], ".warp"));
}

#define MAX_BARRIER_BLOCKS 64 /* beyond this, every barrier is taken as skippable */

/* Sets SG_ACCESS_F_EARLY_RETURN when some block holding a barrier can be
 * avoided on a path from the entry to a return (or to a block with no
 * successor). O(barrier blocks x blocks). */
static void early_return(ctx_t *c)
{
    const sg_ptx_func_t *f = c->f;
    uint32_t n = f->n_blocks;
    if (!n) return;
    uint8_t *seen = calloc(n, 1);
    uint32_t *stack = malloc(n * sizeof(uint32_t));
    uint32_t checked = 0;
    for (uint32_t bb = 0; bb < n && seen && stack; bb++) {
        uint32_t bar_line = 0;
        for (uint32_t s = f->blocks[bb].first; s < f->blocks[bb].end && !bar_line; s++)
            if (f->stmts[s].kind == SG_PTX_STMT_INSTR && is_cta_barrier(&f->stmts[s].u.ins))
                bar_line = f->stmts[s].line;
        if (!bar_line) continue;
        if (bb == 0) continue; /* the entry block runs in every thread */
        if (++checked > MAX_BARRIER_BLOCKS) {
            flag(c, SG_ACCESS_F_EARLY_RETURN, bar_line);
            break;
        }
        memset(seen, 0, n);
        uint32_t sp = 0;
        stack[sp++] = 0;
        seen[0] = 1;
        bool avoided = false;
        while (sp && !avoided) {
            uint32_t b = stack[--sp];
            if (f->blocks[b].returns || f->blocks[b].n_succ == 0) {
                avoided = true;
                break;
            }
            for (uint32_t i = 0; i < f->blocks[b].n_succ; i++) {
                uint32_t x = f->blocks[b].succ[i];
                if (x == bb || seen[x]) continue;
                seen[x] = 1;
                stack[sp++] = x;
            }
        }
        if (avoided) {
            flag(c, SG_ACCESS_F_EARLY_RETURN, bar_line);
            break;
        }
    }
    if (!seen || !stack) flag(c, SG_ACCESS_F_EARLY_RETURN, f->line); /* out of memory: assume so */
    free(seen);
    free(stack);
}

/* Facts that need no data flow: one pass over the statements. */
static void scan_flags(ctx_t *c)
{
    const sg_ptx_func_t *f = c->f;
    const sg_ptx_module_t *m = c->m;
    bool *shared_used = calloc(m->n_vars + 1, 1);
    if (!shared_used) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return;
    }
    if (f->reqnctapercluster[0] || f->explicitcluster || f->maxclusterrank)
        flag(c, SG_ACCESS_F_CLUSTER, f->line);
    for (uint32_t i = 0; i < f->n_vars; i++) {
        const sg_ptx_var_t *v = &f->vars[i];
        if (v->space == SG_PTX_SPACE_LOCAL) flag(c, SG_ACCESS_F_LOCAL, v->line);
        if (v->space == SG_PTX_SPACE_SHARED) {
            if (v->size == 0 && v->n_dims) {
                flag(c, SG_ACCESS_F_DYN_SHARED, v->line);
            } else {
                flag(c, SG_ACCESS_F_SHARED, v->line);
                c->out->static_shared_bytes += v->size;
            }
        }
    }
    for (uint32_t s = 0; s < f->n_stmts; s++) {
        const sg_ptx_stmt_t *st = &f->stmts[s];
        if (st->kind != SG_PTX_STMT_INSTR) continue;
        const sg_ptx_instr_t *ins = &st->u.ins;
        uint32_t line = st->line;
        bool ldparam = (ins->op == SG_PTX_OP_LD || ins->op == SG_PTX_OP_ST) &&
                       ins->space == SG_PTX_SPACE_PARAM;
        for (uint32_t i = 0; i < ins->n_opnds; i++)
            scan_opnd_flags(c, &ins->opnds[i], line, shared_used, ldparam);
        if (ins->space == SG_PTX_SPACE_SHARED_CLUSTER) flag(c, SG_ACCESS_F_CLUSTER, line);
        if (ldparam && ins->op == SG_PTX_OP_LD && ins->n_opnds > 1 &&
            ins->opnds[1].kind == SG_PTX_OPND_ADDRESS && ins->opnds[1].reg != SG_PTX_NONE)
            flag(c, SG_ACCESS_F_PARAM_ADDRESS, line);
        switch (ins->op) {
        case SG_PTX_OP_EXIT: flag(c, SG_ACCESS_F_EXIT, line); break;
        case SG_PTX_OP_TRAP:
        case SG_PTX_OP_BRKPT: flag(c, SG_ACCESS_F_TRAP, line); break;
        case SG_PTX_OP_TEX:
        case SG_PTX_OP_TLD4:
        case SG_PTX_OP_TXQ: flag(c, SG_ACCESS_F_TEXTURE, line); break;
        case SG_PTX_OP_SULD:
        case SG_PTX_OP_SUST:
        case SG_PTX_OP_SURED:
        case SG_PTX_OP_SUQ: flag(c, SG_ACCESS_F_SURFACE, line); break;
        case SG_PTX_OP_CP:
            if (sg_ptx_instr_has_mod(ins, ".bulk") || (ins->n_mods && !strcmp(ins->mods[0], ".reduce")))
                flag(c, SG_ACCESS_F_ASYNC_PROXY, line);
            else if (sg_ptx_instr_has_mod(ins, ".async"))
                flag(c, SG_ACCESS_F_CP_ASYNC, line);
            break;
        case SG_PTX_OP_ST:
        case SG_PTX_OP_RED:
            if (sg_ptx_instr_has_mod(ins, ".async")) flag(c, SG_ACCESS_F_ASYNC_PROXY, line);
            break;
        case SG_PTX_OP_FENCE:
            if (has_mod_prefix(ins, ".proxy")) flag(c, SG_ACCESS_F_ASYNC_PROXY, line);
            break;
        case SG_PTX_OP_TENSORMAP:
        case SG_PTX_OP_WGMMA:
        case SG_PTX_OP_TCGEN05:
        case SG_PTX_OP_MULTIMEM: flag(c, SG_ACCESS_F_ASYNC_PROXY, line); break;
        case SG_PTX_OP_MBARRIER: flag(c, SG_ACCESS_F_MBARRIER, line); break;
        case SG_PTX_OP_BAR:
        case SG_PTX_OP_BARRIER:
            if (!(ins->n_mods && !strcmp(ins->mods[0], ".warp"))) flag(c, SG_ACCESS_F_BARRIER, line);
            break;
        case SG_PTX_OP_GRIDDEPCONTROL: flag(c, SG_ACCESS_F_GRIDDEP, line); break;
        case SG_PTX_OP_SETMAXNREG: flag(c, SG_ACCESS_F_SETMAXNREG, line); break;
        case SG_PTX_OP_SHFL:
        case SG_PTX_OP_VOTE:
        case SG_PTX_OP_MATCH:
        case SG_PTX_OP_REDUX:
        case SG_PTX_OP_ACTIVEMASK:
        case SG_PTX_OP_ELECT:
        case SG_PTX_OP_WMMA:
        case SG_PTX_OP_MMA:
        case SG_PTX_OP_LDMATRIX:
        case SG_PTX_OP_STMATRIX: flag(c, SG_ACCESS_F_WARP, line); break;
        case SG_PTX_OP_ALLOCA:
        case SG_PTX_OP_STACKSAVE:
        case SG_PTX_OP_STACKRESTORE: flag(c, SG_ACCESS_F_DYN_STACK, line); break;
        case SG_PTX_OP_BRX: flag(c, SG_ACCESS_F_INDIRECT_BRANCH, line); break;
        case SG_PTX_OP_LD:
            if (sg_ptx_instr_has_mod(ins, ".nc")) flag(c, SG_ACCESS_F_LDG_NC, line);
            if (ins->space == SG_PTX_SPACE_LOCAL) flag(c, SG_ACCESS_F_LOCAL, line);
            break;
        case SG_PTX_OP_ATOM:
            if (ins->space == SG_PTX_SPACE_GLOBAL || ins->space == SG_PTX_SPACE_NONE)
                flag(c, SG_ACCESS_F_ATOMIC, line);
            break;
        case SG_PTX_OP_CVTA:
            if (ins->space == SG_PTX_SPACE_PARAM) flag(c, SG_ACCESS_F_PARAM_ADDRESS, line);
            break;
        case SG_PTX_OP_CALL: {
            uint32_t ci = 0;
            while (ci < ins->n_opnds && ins->opnds[ci].kind == SG_PTX_OPND_LIST) ci++;
            if (ci >= ins->n_opnds) break;
            const sg_ptx_operand_t *o = &ins->opnds[ci];
            if (o->kind == SG_PTX_OPND_REG) {
                flag(c, SG_ACCESS_F_INDIRECT_CALL, line);
            } else if (o->sym_kind == SG_PTX_SYM_FUNC && o->sym < m->n_funcs) {
                const char *n = m->funcs[o->sym].name;
                const sg_ptx_func_t *callee = sg_ptx_find_func(m, n);
                if (is_runtime_callee(n))
                    flag(c, SG_ACCESS_F_RUNTIME_CALL, line);
                else if (is_launch_callee(n))
                    flag(c, SG_ACCESS_F_DEVICE_LAUNCH, line);
                else if (callee && callee->has_body)
                    flag(c, SG_ACCESS_F_CALL, line);
                else
                    flag(c, SG_ACCESS_F_EXTERN_CALL, line);
            }
            break;
        }
        default: break;
        }
        if (ins->op == SG_PTX_OP_RED && (ins->space == SG_PTX_SPACE_GLOBAL || ins->space == SG_PTX_SPACE_NONE))
            flag(c, SG_ACCESS_F_ATOMIC, line);
    }
    free(shared_used);
    /* A thread that can return before a barrier others reach: a path from
     * the entry to a return that avoids the barrier's block (the block does
     * not post-dominate the entry). Every barrier is checked, not just the
     * first on each path: a thread that passed one barrier and skips the
     * next is out of step too. */
    if (c->out->flags & (1ull << SG_ACCESS_F_BARRIER)) early_return(c);
}

/* ---- sites ------------------------------------------------------------------------------------ */

static bool push_cond(ctx_t *c, const sg_access_cond_t *k, uint32_t *idx)
{
    sg_access_kernel_t *o = c->out;
    if ((o->n_conds & (o->n_conds - 1)) == 0 || o->n_conds == 0) {
        uint32_t nc = o->n_conds ? o->n_conds * 2 : 16;
        void *p = realloc(o->conds, (size_t)nc * sizeof(*o->conds));
        if (!p) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
            return false;
        }
        o->conds = p;
    }
    o->conds[o->n_conds] = *k;
    *idx = o->n_conds++;
    return true;
}

static sg_access_site_t *push_site(ctx_t *c)
{
    sg_access_kernel_t *o = c->out;
    if ((o->n_sites & (o->n_sites - 1)) == 0 || o->n_sites == 0) {
        uint32_t nc = o->n_sites ? o->n_sites * 2 : 8;
        void *p = realloc(o->sites, (size_t)nc * sizeof(*o->sites));
        if (!p) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
            return NULL;
        }
        o->sites = p;
    }
    sg_access_site_t *s = &o->sites[o->n_sites++];
    memset(s, 0, sizeof(*s));
    return s;
}

/* Does e use atoms an exported expression may not (placeholders, symbols)? */
static bool internal_atoms(const sg_access_expr_t *e)
{
    return (ax_kinds(e) & ((1u << AX_SYMADDR) | (1u << AX_PH))) != 0;
}

static void param_of_offset(const sg_ptx_func_t *f, uint32_t off, uint32_t *index, uint32_t *inner)
{
    *index = SG_NONE;
    *inner = 0;
    for (uint32_t i = 0; i < f->n_params; i++) {
        const sg_ptx_var_t *p = &f->params[i];
        if (off >= p->param_offset && off < p->param_offset + (p->size ? p->size : 1)) {
            *index = i;
            *inner = off - p->param_offset;
            return;
        }
    }
}

/* Record an access site at statement si. addr: the address value; facts
 * and exact: what holds when it runs. */
static void record_site(ctx_t *c, uint32_t si, sg_access_kind_t kind, bool explicit_global,
                        uint32_t width, bool vector, uint32_t addr, const uint32_t *facts, uint8_t nf,
                        bool exact, uint8_t forced_reason, const char *why)
{
    if (!c->recording || c->failed) return;
    const sg_ptx_stmt_t *st = &c->f->stmts[si];
    const val_t *v = V(c, addr);
    /* the base: a parameter pointer (preferring one that reached a
       cvta.to.global when there are several), a module variable, or
       another state space */
    int base_term = -1, flagged = -1;
    uint32_t nbase = 0, nflagged = 0;
    bool shared_or_local = false;
    for (uint32_t i = 0; v->kind == V_POLY && i < v->e.n; i++) {
        const sg_access_term_t *t = &v->e.t[i];
        uint32_t k = SG_ACCESS_ATOM_KIND(t->atoms[0]);
        if (t->atoms[1] || t->coef != 1) continue;
        if (k == SG_ACCESS_ATOM_PARAM) {
            uint32_t off, w;
            sg_access_param_atom_decode(t->atoms[0], &off, &w, NULL);
            if (w != 8) continue;
            if (base_term < 0) base_term = (int)i;
            nbase++;
            if (c->ptr_param && off < c->f->params_size && c->ptr_param[off]) {
                flagged = (int)i;
                nflagged++;
            }
        } else if (k == AX_SYMADDR) {
            uint32_t arg = SG_ACCESS_ATOM_ARG(t->atoms[0]);
            sg_ptx_sym_kind_t sk = (sg_ptx_sym_kind_t)(arg >> 20);
            uint32_t idx = arg & 0xfffffu;
            const sg_ptx_var_t *var = NULL;
            if (sk == SG_PTX_SYM_MODULE_VAR && idx < c->m->n_vars) var = &c->m->vars[idx];
            if (sk == SG_PTX_SYM_LOCAL_VAR && idx < c->f->n_vars) var = &c->f->vars[idx];
            if (sk == SG_PTX_SYM_PARAM || !var || var->space == SG_PTX_SPACE_SHARED ||
                var->space == SG_PTX_SPACE_LOCAL || var->space == SG_PTX_SPACE_PARAM) {
                shared_or_local = true;
            } else {
                base_term = (int)i;
                nbase = 1;
                nflagged = 0;
                break;
            }
        }
    }
    bool ambiguous = false;
    if (nbase > 1) {
        if (nflagged == 1)
            base_term = flagged;
        else
            ambiguous = true;
    }
    if (shared_or_local && !explicit_global) return; /* not global memory */
    sg_access_site_t *s = push_site(c);
    if (!s) return;
    s->kind = (uint8_t)kind;
    s->generic = !explicit_global;
    s->width = (uint16_t)(width > 0xffff ? 0 : width);
    s->vector = vector;
    s->stmt = si;
    s->line = st->line;
    s->exact = exact;
    s->param_index = SG_NONE;
    sg_access_expr_t off;
    ax_zero(&off);
    if (base_term >= 0) {
        sg_access_atom_t a = v->e.t[base_term].atoms[0];
        if (SG_ACCESS_ATOM_KIND(a) == SG_ACCESS_ATOM_PARAM) {
            uint32_t o;
            sg_access_param_atom_decode(a, &o, NULL, NULL);
            s->base_kind = SG_ACCESS_BASE_PARAM;
            s->base_param = o;
            param_of_offset(c->f, o, &s->param_index, &s->param_inner);
        } else {
            uint32_t idx = SG_ACCESS_ATOM_ARG(a) & 0xfffffu;
            s->base_kind = SG_ACCESS_BASE_SYMBOL;
            snprintf(s->base_symbol, sizeof s->base_symbol, "%s",
                     idx < c->m->n_vars ? c->m->vars[idx].name : "?");
        }
        sg_access_expr_t bt;
        ax_atom(&bt, a, 1);
        ax_add(&v->e, &bt, -1, &off);
    }
    const char *opname = st->u.ins.opcode;
    if (forced_reason) {
        s->reason = forced_reason;
        snprintf(s->detail, sizeof s->detail, "line %u: %s", st->line, why ? why : opname);
        return;
    }
    if (v->kind != V_POLY) {
        s->reason = v->kind == V_UNKNOWN && v->reason == SG_ACCESS_R_LOADED_ADDRESS
                        ? SG_ACCESS_R_LOADED_ADDRESS
                        : (v->kind == V_UNKNOWN ? v->reason : SG_ACCESS_R_UNSUPPORTED);
        if (s->reason == SG_ACCESS_OK) s->reason = SG_ACCESS_R_UNSUPPORTED;
        snprintf(s->detail, sizeof s->detail, "line %u: address %s (line %u)", st->line,
                 sg_access_reason_name((sg_access_reason_t)s->reason), v->line);
        return;
    }
    if (base_term < 0) {
        s->reason = v->partial ? (v->reason == SG_ACCESS_R_LOADED_ADDRESS ? SG_ACCESS_R_LOADED_ADDRESS
                                                                          : v->reason)
                               : SG_ACCESS_R_NO_BASE;
        if (s->reason == SG_ACCESS_OK) s->reason = SG_ACCESS_R_NO_BASE;
        snprintf(s->detail, sizeof s->detail, "line %u: no parameter pointer in the address", st->line);
        return;
    }
    if (ambiguous) {
        s->reason = SG_ACCESS_R_NO_BASE;
        snprintf(s->detail, sizeof s->detail, "line %u: two parameter words could be the pointer",
                 st->line);
        return;
    }
    if (v->partial) {
        s->reason = v->reason == SG_ACCESS_R_LOADED_ADDRESS ? SG_ACCESS_R_DATA_DEPENDENT : v->reason;
        if (s->reason == SG_ACCESS_OK) s->reason = SG_ACCESS_R_UNSUPPORTED;
        snprintf(s->detail, sizeof s->detail, "line %u: offset %s (line %u)", st->line,
                 sg_access_reason_name((sg_access_reason_t)s->reason), v->line);
        return;
    }
    if (internal_atoms(&off)) {
        s->reason = SG_ACCESS_R_TOO_COMPLEX;
        snprintf(s->detail, sizeof s->detail, "line %u: address mixes symbols", st->line);
        return;
    }
    s->offset = off;
    uint32_t kinds = ax_kinds(&off);
    s->thread_local = !(kinds & ((1u << SG_ACCESS_ATOM_LOOP) | (1u << SG_ACCESS_ATOM_OPAQUE)));
    /* facts, then the offset's checks, then each fact's checks */
    uint32_t site_index = (uint32_t)(s - c->out->sites);
    uint32_t keep[MAX_FACTS + MAX_PC];
    uint8_t nk = 0;
    bool exact_now = s->exact;
    for (uint8_t i = 0; i < nf; i++) {
        if (internal_atoms(&c->conds[facts[i]].c.e))
            exact_now = false;
        else
            keep[nk++] = facts[i];
    }
    uint32_t first = c->out->n_conds, idx;
    for (uint8_t i = 0; i < nk; i++) {
        sg_access_cond_t k = c->conds[keep[i]].c;
        k.first_check = 0;
        k.n_checks = 0;
        if (!push_cond(c, &k, &idx)) return;
    }
    uint32_t first_ck = c->out->n_conds, n_ck = 0;
    for (uint8_t i = 0; i < v->nob; i++) {
        const cond_t *k = &c->conds[v->ob[i]];
        if (internal_atoms(&k->c.e)) goto too_complex;
        if (!push_cond(c, &k->c, &idx)) return;
        n_ck++;
    }
    for (uint8_t i = 0; i < nk; i++) {
        const cond_t *f = &c->conds[keep[i]];
        uint32_t fc = c->out->n_conds;
        for (uint8_t j = 0; j < f->nob; j++) {
            const cond_t *k = &c->conds[f->ob[j]];
            if (internal_atoms(&k->c.e)) goto too_complex;
            if (!push_cond(c, &k->c, &idx)) return;
        }
        c->out->conds[first + i].first_check = fc;
        c->out->conds[first + i].n_checks = f->nob;
    }
    s = &c->out->sites[site_index];
    s->exact = exact_now;
    s->first_cond = first;
    s->n_conds = nk;
    s->first_check = first_ck;
    s->n_checks = n_ck;
    return;
too_complex:
    s = &c->out->sites[site_index];
    s->reason = SG_ACCESS_R_TOO_COMPLEX;
    snprintf(s->detail, sizeof s->detail, "line %u: a check mixes symbols", st->line);
}

/* ---- division --------------------------------------------------------------------------- */

/* q = floor(a / b) for a thread-varying a >= 0 and a divisor b >= 1 (both
 * statically): an opaque value, bound to a and b by the facts b*q <= a and
 * a <= b*q + b - 1, which hold from here on. The same division (equal
 * operands) gives the same q, so the 32- and 64-bit paths NVVM emits for
 * one division agree. Returns SG_NONE when the operands do not qualify.
 * `fit` is the check the operands need (the machine type of the division). */
/* Whether e >= 0 here: statically, or by a fact of the state (whose
 * checks then go into *with). */
static bool nonneg(ctx_t *c, const state_t *st, const sg_access_expr_t *e, val_t *with)
{
    if (srange(c, e).lo >= 0) return true;
    sg_access_cond_t k;
    memset(&k, 0, sizeof k);
    if (!ax_scale(e, -1, &k.e)) return false;
    k.rel = SG_ACCESS_LE;
    if (!canon(&k)) return false;
    for (uint8_t i = 0; i < st->nf; i++) {
        const cond_t *f = &c->conds[st->f[i]];
        if (f->c.rel != k.rel || f->c.from_iter || !ax_equal(&f->c.e, &k.e)) continue;
        val_t fv;
        memset(&fv, 0, sizeof fv);
        fv.nob = f->nob;
        memcpy(fv.ob, f->ob, sizeof fv.ob);
        bool ov = false;
        merge_ob(with, &fv, &ov);
        return !ov;
    }
    return false;
}

static uint32_t v_quotient(ctx_t *c, state_t *st, uint32_t ia, uint32_t ib, uint8_t fit, uint32_t line,
                           const char *what)
{
    const val_t *a = V(c, ia), *b = V(c, ib);
    if (!is_poly(a) || !is_poly(b)) return SG_NONE;
    ival_t ra = srange(c, &a->e), rb = srange(c, &b->e);
    val_t why;
    memset(&why, 0, sizeof why);
    if (rb.lo < 1 || !nonneg(c, st, &a->e, &why)) return SG_NONE;
    if (ra.lo < 0) ra.lo = 0;
    for (uint32_t i = 0; i < c->n_quots; i++)
        if (ax_equal(&c->quots[i].a, &a->e) && ax_equal(&c->quots[i].b, &b->e)) {
            /* the facts are already in every state the first one reached? Not
               necessarily (another path): add them again here */
            ia = c->quots[i].val;
            goto facts;
        }
    {
        int64_t hi = INT64_MAX;
        if (ra.hi < AX_INF && ra.hi / rb.lo < INT64_MAX) hi = (int64_t)(ra.hi / rb.lo);
        uint32_t q = v_opaque(c, 0, hi, line, what);
        val_t r = *V(c, q);
        bool ov = false;
        merge_ob(&r, a, &ov);
        merge_ob(&r, b, &ov);
        merge_ob(&r, &why, &ov);
        if (ov || !add_fits(c, &r, &a->e, fit) || !add_fits(c, &r, &b->e, fit)) return SG_NONE;
        q = new_val(c, &r);
        if (!grow((void **)&c->quots, &c->cap_quots, c->n_quots + 1, sizeof(*c->quots))) return SG_NONE;
        c->quots[c->n_quots].a = a->e;
        c->quots[c->n_quots].b = b->e;
        c->quots[c->n_quots].val = q;
        c->n_quots++;
        ia = q;
    }
facts: {
    const val_t *q = V(c, ia);
    sg_access_expr_t bq;
    sg_access_cond_t lo, hi;
    memset(&lo, 0, sizeof lo);
    memset(&hi, 0, sizeof hi);
    if (!ax_mul(&b->e, &q->e, &bq) || !ax_add(&bq, &a->e, -1, &lo.e) ||
        !ax_add(&a->e, &bq, -1, &hi.e) || !ax_add(&hi.e, &b->e, -1, &hi.e) ||
        !ax_add_const(&hi.e, 1, &hi.e))
        return SG_NONE;
    lo.rel = hi.rel = SG_ACCESS_LE;
    uint32_t f1 = intern_cond(c, &lo, q->ob, q->nob), f2 = intern_cond(c, &hi, q->ob, q->nob);
    if (f1 == SG_NONE || f2 == SG_NONE) return SG_NONE;
    facts_add(st, f1);
    facts_add(st, f2);
    return ia;
}
}

/* ---- transfer ------------------------------------------------------------------------------ */

static bool val_equal(ctx_t *c, uint32_t ia, uint32_t ib)
{
    if (ia == ib) return true;
    const val_t *a = V(c, ia), *b = V(c, ib);
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case V_POLY:
        return a->partial == b->partial && a->nob == b->nob &&
               !memcmp(a->ob, b->ob, a->nob * sizeof(uint32_t)) && ax_equal(&a->e, &b->e);
    case V_PRED:
        return a->pn == b->pn && a->conj == b->conj && a->pexact == b->pexact &&
               !memcmp(a->pc, b->pc, a->pn * sizeof(uint32_t));
    case V_UNKNOWN: return true; /* unknown either way */
    default: return true;
    }
}

/* Equal polynomials (checks aside): one value needing every check. */
static uint32_t poly_merge(ctx_t *c, const uint32_t *vs, uint32_t n, uint32_t line)
{
    const val_t *a = V(c, vs[0]);
    if (a->kind != V_POLY) return SG_NONE;
    for (uint32_t i = 1; i < n; i++) {
        const val_t *b = V(c, vs[i]);
        if (b->kind != V_POLY || b->partial != a->partial || !ax_equal(&a->e, &b->e)) return SG_NONE;
    }
    val_t r = *a;
    bool ov = false;
    for (uint32_t i = 1; i < n; i++) merge_ob(&r, V(c, vs[i]), &ov);
    return ov ? v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line) : new_val(c, &r);
}

static uint32_t join2(ctx_t *c, uint32_t a, uint32_t b, uint32_t line)
{
    if (val_equal(c, a, b)) return a;
    uint32_t pair[2] = {a, b}, m = poly_merge(c, pair, 2, line);
    if (m != SG_NONE) return m;
    if (V(c, a)->kind == V_PRED || V(c, b)->kind == V_PRED) return pred_unknown(c);
    return v_unknown(c, SG_ACCESS_R_MERGE, line);
}

static void set_def(ctx_t *c, state_t *st, const sg_ptx_operand_t *d, uint32_t val, bool guarded,
                    uint32_t line)
{
    if (d->kind == SG_PTX_OPND_REG) {
        uint32_t s = slot(c, d->reg);
        if (s == SG_NONE) return;
        if (d->comp) val = v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
        st->v[s] = guarded ? join2(c, st->v[s], val, line) : val;
    } else if (d->kind == SG_PTX_OPND_VECTOR || d->kind == SG_PTX_OPND_PAIR) {
        for (uint32_t i = 0; i < d->n_elems; i++) set_def(c, st, &d->elems[i], val, guarded, line);
    }
}

/* Every register the instruction may write becomes unknown. */
static void clobber(ctx_t *c, state_t *st, const sg_ptx_instr_t *ins, uint8_t reason, uint32_t line)
{
    uint32_t regs[64];
    uint32_t n = sg_ptx_instr_defs(ins, regs, 64);
    if (n > 64) n = 64;
    uint32_t u = SG_NONE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = slot(c, regs[i]);
        if (s == SG_NONE) continue;
        const sg_ptx_regdecl_t *d = sg_ptx_reg_decl(c->f, regs[i]);
        if (d && d->type == SG_PTX_T_PRED)
            st->v[s] = pred_unknown(c);
        else {
            if (u == SG_NONE) u = v_unknown(c, reason, line);
            st->v[s] = u;
        }
    }
}

static uint8_t fits_for(sg_ptx_type_t t)
{
    return sg_ptx_type_is_signed(t) ? SG_ACCESS_FITS_S32 : SG_ACCESS_FITS_U32;
}

static bool mod_is(const sg_ptx_instr_t *ins, const char *m)
{
    return sg_ptx_instr_has_mod(ins, m);
}

static const char *cmp_mod(const sg_ptx_instr_t *ins)
{
    static const char *const cmps[] = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi",
                                       ".hs", ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num",
                                       ".nan"};
    for (uint32_t i = 0; i < ins->n_mods; i++)
        for (size_t k = 0; k < sizeof cmps / sizeof cmps[0]; k++)
            if (!strcmp(ins->mods[i], cmps[k])) return cmps[k];
    return NULL;
}

/* Facts for a site: the state's and the guard's. */
static uint8_t site_facts(const state_t *st, const uint32_t *gf, uint8_t ngf, uint32_t *out)
{
    uint8_t n = 0;
    for (uint8_t i = 0; i < st->nf; i++) out[n++] = st->f[i];
    for (uint8_t i = 0; i < ngf; i++) out[n++] = gf[i];
    return n;
}

static void exec_ld_param(ctx_t *c, state_t *st, const sg_ptx_instr_t *ins, bool guarded,
                          uint32_t line)
{
    const sg_ptx_operand_t *d = &ins->opnds[0], *a = &ins->opnds[1];
    uint32_t w = sg_ptx_type_size(ins->type);
    bool ok = c->f->is_entry && sg_ptx_type_is_int(ins->type) && w >= 1 && w <= 8;
    int64_t off = -1;
    if (ok && a->kind == SG_PTX_OPND_ADDRESS) {
        if (a->reg == SG_PTX_NONE && a->sym_kind == SG_PTX_SYM_PARAM && a->sym < c->f->n_params) {
            off = (int64_t)c->f->params[a->sym].param_offset + a->ival;
        } else if (a->reg != SG_PTX_NONE) {
            /* a taken parameter address: &param + constant */
            uint32_t av = addr_val(c, st, a, line);
            const val_t *v = V(c, av);
            if (is_poly(v) && v->e.n == 1 && v->e.t[0].coef == 1 && !v->e.t[0].atoms[1] &&
                SG_ACCESS_ATOM_KIND(v->e.t[0].atoms[0]) == AX_SYMADDR &&
                (SG_ACCESS_ATOM_ARG(v->e.t[0].atoms[0]) >> 20) == SG_PTX_SYM_PARAM) {
                uint32_t idx = SG_ACCESS_ATOM_ARG(v->e.t[0].atoms[0]) & 0xfffffu;
                if (idx < c->f->n_params) off = (int64_t)c->f->params[idx].param_offset + v->e.c;
            }
        }
    }
    if (off < 0 || off + (int64_t)w * ins->vec > (int64_t)c->f->params_size || off > 0xffff) {
        uint8_t r = a->sym_kind == SG_PTX_SYM_LOCAL_VAR || a->sym_kind == SG_PTX_SYM_RET
                        ? SG_ACCESS_R_CALL
                        : SG_ACCESS_R_UNSUPPORTED;
        if (!sg_ptx_type_is_int(ins->type)) r = SG_ACCESS_R_UNSUPPORTED;
        clobber(c, st, ins, r, line);
        return;
    }
    bool s = sg_ptx_type_is_signed(ins->type);
    if (d->kind == SG_PTX_OPND_VECTOR) {
        for (uint32_t i = 0; i < d->n_elems; i++)
            set_def(c, st, &d->elems[i],
                    v_atom(c, sg_access_param_atom((uint32_t)off + i * w, w, s)), guarded, line);
    } else {
        set_def(c, st, d, v_atom(c, sg_access_param_atom((uint32_t)off, w, s)), guarded, line);
    }
}

/* The value stored into a call argument (.param variable) in this block. */
static uint32_t stored_arg(ctx_t *c, const sg_ptx_operand_t *o)
{
    if (o->kind != SG_PTX_OPND_SYMBOL || o->sym_kind != SG_PTX_SYM_LOCAL_VAR ||
        o->sym >= c->f->n_vars || !c->param_store[o->sym])
        return SG_NONE;
    return c->param_store[o->sym] - 1;
}

static void exec_call(ctx_t *c, state_t *st, uint32_t si, const uint32_t *facts, uint8_t nf,
                      bool exact)
{
    const sg_ptx_instr_t *ins = &c->f->stmts[si].u.ins;
    uint32_t ci = 0;
    while (ci < ins->n_opnds && ins->opnds[ci].kind == SG_PTX_OPND_LIST) ci++;
    const char *callee = "a function pointer";
    if (ci < ins->n_opnds && ins->opnds[ci].kind == SG_PTX_OPND_SYMBOL &&
        ins->opnds[ci].sym_kind == SG_PTX_SYM_FUNC)
        callee = c->m->funcs[ins->opnds[ci].sym].name;
    bool runtime = is_runtime_callee(callee);
    for (uint32_t i = ci + 1; i < ins->n_opnds && !runtime; i++) {
        const sg_ptx_operand_t *l = &ins->opnds[i];
        if (l->kind != SG_PTX_OPND_LIST) continue;
        for (uint32_t k = 0; k < l->n_elems; k++) {
            uint32_t v = stored_arg(c, &l->elems[k]);
            if (v == SG_NONE) continue;
            const val_t *x = V(c, v);
            bool pointerish = false;
            for (uint32_t t = 0; x->kind == V_POLY && t < x->e.n; t++) {
                sg_access_atom_t a = x->e.t[t].atoms[0];
                uint32_t w = 0;
                if (SG_ACCESS_ATOM_KIND(a) == SG_ACCESS_ATOM_PARAM) sg_access_param_atom_decode(a, NULL, &w, NULL);
                if (w == 8 || SG_ACCESS_ATOM_KIND(a) == AX_SYMADDR) pointerish = true;
            }
            if (x->kind == V_UNKNOWN && x->reason == SG_ACCESS_R_LOADED_ADDRESS) pointerish = true;
            if (!pointerish) continue;
            char why[96];
            snprintf(why, sizeof why, "pointer passed to %s", callee);
            record_site(c, si, SG_ACCESS_CALL, false, 0, false, v, facts, nf, exact,
                        SG_ACCESS_R_CALL, why);
        }
    }
    clobber(c, st, ins, SG_ACCESS_R_CALL, c->f->stmts[si].line);
}

/* cp.* : which operand is global memory, in which direction, how wide. */
static void exec_cp(ctx_t *c, state_t *st, uint32_t si, const uint32_t *facts, uint8_t nf,
                    bool exact)
{
    const sg_ptx_instr_t *ins = &c->f->stmts[si].u.ins;
    uint32_t line = c->f->stmts[si].line;
    /* the first two state-space modifiers are destination and source */
    sg_ptx_space_t sp[2] = {SG_PTX_SPACE_NONE, SG_PTX_SPACE_NONE};
    uint32_t nsp = 0;
    bool reduce = ins->n_mods && !strcmp(ins->mods[0], ".reduce");
    bool tensor = sg_ptx_instr_has_mod(ins, ".tensor");
    bool prefetch = sg_ptx_instr_has_mod(ins, ".prefetch");
    for (uint32_t i = 0; i < ins->n_mods && nsp < 2; i++) {
        const char *m = ins->mods[i];
        if (!strcmp(m, ".global"))
            sp[nsp++] = SG_PTX_SPACE_GLOBAL;
        else if (!strncmp(m, ".shared", 7))
            sp[nsp++] = SG_PTX_SPACE_SHARED;
    }
    if (prefetch || ins->n_opnds < 2) return; /* commit/wait groups, prefetches */
    for (int which = 0; which < 2; which++) {
        if (sp[which] != SG_PTX_SPACE_GLOBAL) continue;
        const sg_ptx_operand_t *a = &ins->opnds[which];
        sg_access_kind_t kind = which == 1 ? SG_ACCESS_LOAD : reduce ? SG_ACCESS_ATOMIC : SG_ACCESS_STORE;
        uint32_t width = 0;
        if (ins->n_opnds > 2 && ins->opnds[2].kind == SG_PTX_OPND_INT && ins->opnds[2].ival > 0 &&
            ins->opnds[2].ival <= 0xffff)
            width = (uint32_t)ins->opnds[2].ival;
        uint32_t av = a->kind == SG_PTX_OPND_ADDRESS ? addr_val(c, st, a, line)
                                                     : v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line);
        if (tensor)
            record_site(c, si, kind, true, 0, false, av, facts, nf, exact, SG_ACCESS_R_TEXTURE,
                        "tensor-map copy: addresses come from the tensor map");
        else if (!width)
            record_site(c, si, kind, true, 0, false, av, facts, nf, exact, SG_ACCESS_R_UNSUPPORTED,
                        "copy size not a constant");
        else
            record_site(c, si, kind, true, width, false, av, facts, nf, exact, 0, NULL);
    }
}

static void mark_pointer(ctx_t *c, uint32_t iv)
{
    const val_t *v = V(c, iv);
    if (v->kind != V_POLY || !c->ptr_param) return;
    for (uint32_t i = 0; i < v->e.n; i++) {
        const sg_access_term_t *t = &v->e.t[i];
        if (t->coef != 1 || t->atoms[1] || SG_ACCESS_ATOM_KIND(t->atoms[0]) != SG_ACCESS_ATOM_PARAM) continue;
        uint32_t off, w;
        sg_access_param_atom_decode(t->atoms[0], &off, &w, NULL);
        if (w == 8 && off < c->f->params_size) c->ptr_param[off] = true;
    }
}

static void exec_instr(ctx_t *c, state_t *st, uint32_t si)
{
    const sg_ptx_stmt_t *stmt = &c->f->stmts[si];
    const sg_ptx_instr_t *ins = &stmt->u.ins;
    uint32_t line = stmt->line;
    bool guarded = ins->guard != SG_PTX_NONE;
    uint32_t gf[MAX_PC];
    uint8_t ngf = 0;
    bool gexact = true;
    if (guarded) {
        uint32_t gs = slot(c, ins->guard);
        gexact = false;
        if (gs != SG_NONE) ngf = pred_facts(c, st->v[gs], !ins->guard_neg, gf, &gexact);
    }
    uint32_t facts[MAX_FACTS + MAX_PC];
    uint8_t nf = site_facts(st, gf, ngf, facts);
    bool exact = st->exact && gexact;
    const sg_ptx_operand_t *o = ins->opnds;
    uint32_t n = ins->n_opnds;
    sg_ptx_type_t t = ins->type;
    bool is_int = sg_ptx_type_is_int(t);
    uint32_t bits = sg_ptx_type_size(t) * 8;
#define OPV(i) opnd_val(c, st, &o[i], line)
#define DEF(val) set_def(c, st, &o[0], (val), guarded, line)
    switch (ins->op) {
    case SG_PTX_OP_MOV:
        if (n == 2 && o[0].kind == SG_PTX_OPND_REG &&
            (o[1].kind == SG_PTX_OPND_REG || o[1].kind == SG_PTX_OPND_SREG ||
             o[1].kind == SG_PTX_OPND_SYMBOL || (o[1].kind == SG_PTX_OPND_INT && (is_int || t == SG_PTX_T_PRED))))
            DEF(OPV(1));
        else
            clobber(c, st, ins, SG_ACCESS_R_UNSUPPORTED, line);
        return;
    case SG_PTX_OP_ADD:
    case SG_PTX_OP_SUB:
        if (!is_int || n != 3 || mod_is(ins, ".cc") || mod_is(ins, ".sat")) break;
        DEF(v_add(c, OPV(1), OPV(2), ins->op == SG_PTX_OP_ADD ? 1 : -1, line));
        return;
    case SG_PTX_OP_MUL:
    case SG_PTX_OP_MAD: {
        if (!is_int || n < 3 || mod_is(ins, ".cc")) break;
        uint32_t a = OPV(1), b = OPV(2), r;
        if (mod_is(ins, ".wide")) {
            r = v_mul(c, v_fits(c, a, fits_for(t), line), v_fits(c, b, fits_for(t), line), line);
        } else if (mod_is(ins, ".hi")) {
            r = v_uniform(c, SG_ACCESS_U_MULHI, a, b, bits, sg_ptx_type_is_signed(t));
            if (r == SG_NONE) r = v_unknown(c, SG_ACCESS_R_NONAFFINE, line);
            if (ins->op == SG_PTX_OP_MAD) r = v_add(c, r, OPV(3), 1, line);
            DEF(r);
            return;
        } else {
            r = v_mul(c, a, b, line);
        }
        if (ins->op == SG_PTX_OP_MAD) {
            if (n != 4) break;
            r = v_add(c, r, OPV(3), 1, line);
        }
        DEF(r);
        return;
    }
    case SG_PTX_OP_SHL:
    case SG_PTX_OP_SHR: {
        if (!is_int || n != 3) break;
        uint32_t a = OPV(1), r = SG_NONE;
        const val_t *av = V(c, a);
        if (o[2].kind == SG_PTX_OPND_INT && o[2].ival >= 0 && o[2].ival < bits && o[2].ival < 63) {
            int64_t k = o[2].ival;
            if (ins->op == SG_PTX_OP_SHL) {
                r = v_mul(c, a, v_const(c, (int64_t)1 << k), line);
            } else if (is_poly(av)) {
                ival_t rg = srange(c, &av->e);
                sg_access_expr_t q;
                if (rg.lo >= 0 && rg.hi < ((i128)1 << k))
                    r = v_const(c, 0);
                else if (rg.lo >= 0 && ax_div_exact(&av->e, (int64_t)1 << k, &q)) {
                    r = mk_poly(c, &q, av, NULL, false, 0, 0);
                    /* NVVM's sign extension of a 32-bit index, (x << 32) >> 32, also
                       inside a loop where x << 32 is the induction: the quotient is
                       the machine's only while the 64-bit value did not wrap, i.e.
                       while x * 2^(k-32) fits 32 bits */
                    if (bits == 64 && k >= 32) {
                        uint32_t x = k > 32 ? v_mul(c, r, v_const(c, (int64_t)1 << (k - 32)), line) : r;
                        uint32_t xf = v_fits(c, x, SG_ACCESS_FITS_S32, line);
                        if (k == 32) r = xf;
                        else if (V(c, xf)->kind != V_POLY) r = xf; /* the check did not fit */
                        else r = mk_poly(c, &q, V(c, xf), NULL, false, 0, 0);
                    }
                }
                else
                    r = v_uniform(c, SG_ACCESS_U_SHR, a, OPV(2), bits, sg_ptx_type_is_signed(t));
                if (r == SG_NONE && rg.lo >= 0)
                    r = v_quotient(c, st, a, v_const(c, (int64_t)1 << k), fits_for(t), line, "shr");
                if (r == SG_NONE && iv_bounded(rg) && rg.lo >= 0 && rg.hi < ((i128)1 << 62))
                    r = v_opaque(c, 0, (int64_t)(rg.hi >> k), line, "shr");
            }
        } else {
            r = v_uniform(c, ins->op == SG_PTX_OP_SHL ? SG_ACCESS_U_SHL : SG_ACCESS_U_SHR, a, OPV(2),
                          bits, sg_ptx_type_is_signed(t));
        }
        DEF(r != SG_NONE ? r : v_unknown(c, SG_ACCESS_R_NONAFFINE, line));
        return;
    }
    case SG_PTX_OP_AND:
    case SG_PTX_OP_OR:
    case SG_PTX_OP_XOR: {
        if (n != 3) break;
        if (t == SG_PTX_T_PRED) {
            if (ins->op == SG_PTX_OP_XOR) {
                DEF(pred_unknown(c));
                return;
            }
            const sg_ptx_operand_t *p = &o[1], *q = &o[2];
            if (p->kind != SG_PTX_OPND_REG || q->kind != SG_PTX_OPND_REG) break;
            uint32_t sp = slot(c, p->reg), sq = slot(c, q->reg);
            if (sp == SG_NONE || sq == SG_NONE) break;
            DEF(v_pred_op(c, ins->op == SG_PTX_OP_AND, st->v[sp], p->neg, st->v[sq], q->neg));
            return;
        }
        if (!is_int) break;
        uint32_t a = OPV(1), b = OPV(2), r = SG_NONE;
        const val_t *av = V(c, a), *bv = V(c, b);
        int64_t k;
        uint64_t mask_all = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
        if (ins->op == SG_PTX_OP_AND && is_poly(av) && is_poly(bv) &&
            (ax_is_const(&bv->e, &k) || ax_is_const(&av->e, &k))) {
            const val_t *x = ax_is_const(&bv->e, NULL) ? av : bv;
            uint64_t mask = (uint64_t)k & mask_all;
            bool ok;
            uint64_t mb = maybe_bits(c, &x->e, &ok);
            if (ok && (mb & ~mask) == 0)
                r = x == av ? a : b;
            else if (ok && (mb & mask) == 0)
                r = v_const(c, 0);
        } else if (ins->op == SG_PTX_OP_OR && is_poly(av) && is_poly(bv)) {
            bool oka, okb;
            uint64_t ma = maybe_bits(c, &av->e, &oka), mb = maybe_bits(c, &bv->e, &okb);
            if (oka && okb && (ma & mb) == 0) r = v_add(c, a, b, 1, line);
        } else if (ins->op == SG_PTX_OP_XOR && is_poly(bv) && ax_is_const(&bv->e, &k) && k == 0) {
            r = a;
        }
        if (r == SG_NONE) {
            uint8_t op = ins->op == SG_PTX_OP_AND ? SG_ACCESS_U_AND
                         : ins->op == SG_PTX_OP_OR ? SG_ACCESS_U_OR
                                                   : SG_ACCESS_U_XOR;
            r = v_uniform(c, op, a, b, bits, false);
        }
        if (r == SG_NONE && ins->op == SG_PTX_OP_AND && is_poly(bv) && ax_is_const(&bv->e, &k)) {
            uint64_t mask = (uint64_t)k & mask_all;
            if (mask && mask < (1ull << 62) && !(mask & (mask + 1))) {
                uint32_t q = v_quotient(c, st, a, v_const(c, (int64_t)(mask + 1)),
                                        bits > 32 ? SG_ACCESS_FITS_U64 : SG_ACCESS_FITS_U32, line, "and");
                if (q != SG_NONE)
                    r = v_add(c, a, v_mul(c, q, v_const(c, (int64_t)(mask + 1)), line), -1, line);
            }
            if (r == SG_NONE && mask < (1ull << 62)) r = v_opaque(c, 0, (int64_t)mask, line, "and");
        }
        DEF(r != SG_NONE ? r : v_unknown(c, SG_ACCESS_R_NONAFFINE, line));
        return;
    }
    case SG_PTX_OP_NOT:
        if (n != 2) break;
        if (t == SG_PTX_T_PRED) {
            DEF(o[1].kind == SG_PTX_OPND_REG && slot(c, o[1].reg) != SG_NONE
                    ? v_pred_not(c, st->v[slot(c, o[1].reg)])
                    : pred_unknown(c));
            return;
        }
        if (!is_int) break;
        DEF(v_add(c, v_const(c, -1), OPV(1), -1, line)); /* ~x = -1 - x */
        return;
    case SG_PTX_OP_NEG:
        if (!is_int || n != 2) break;
        DEF(v_add(c, v_const(c, 0), OPV(1), -1, line));
        return;
    case SG_PTX_OP_CVT: {
        if (n != 2 || !is_int || !sg_ptx_type_is_int(ins->type2) || mod_is(ins, ".sat")) break;
        uint32_t a = OPV(1);
        uint32_t dw = sg_ptx_type_size(t), sw = sg_ptx_type_size(ins->type2);
        if (dw > sw) {
            if (sw < 4) {
                const val_t *av = V(c, a);
                int64_t k;
                if (!(is_poly(av) && ax_is_const(&av->e, &k))) {
                    DEF(v_unknown(c, SG_ACCESS_R_UNSUPPORTED, line));
                    return;
                }
            } else {
                a = v_fits(c, a, fits_for(ins->type2), line);
            }
        }
        DEF(a);
        return;
    }
    case SG_PTX_OP_CVTA:
        if (n != 2) break;
        {
            uint32_t a = OPV(1);
            if (ins->space == SG_PTX_SPACE_GLOBAL) mark_pointer(c, a);
            DEF(a);
        }
        return;
    case SG_PTX_OP_SELP: {
        if (n != 4 || !is_int) break;
        uint32_t a = OPV(1), b = OPV(2);
        const val_t *av = V(c, a), *bv = V(c, b);
        int64_t x, y;
        if (val_equal(c, a, b))
            DEF(a);
        else if (is_poly(av) && is_poly(bv) && ax_is_const(&av->e, &x) && ax_is_const(&bv->e, &y))
            DEF(v_opaque(c, x < y ? x : y, x < y ? y : x, line, "selp"));
        else
            DEF(v_unknown(c, SG_ACCESS_R_MERGE, line));
        return;
    }
    case SG_PTX_OP_SETP: {
        const char *cmp = cmp_mod(ins);
        if (n < 3 || !cmp) break;
        uint32_t p = v_compare(c, cmp, t, OPV(1), OPV(2), line);
        uint32_t q = v_pred_not(c, p);
        bool is_and = mod_is(ins, ".and"), is_or = mod_is(ins, ".or");
        if ((is_and || is_or || mod_is(ins, ".xor")) && n == 4 && o[3].kind == SG_PTX_OPND_REG &&
            slot(c, o[3].reg) != SG_NONE) {
            uint32_t cv = st->v[slot(c, o[3].reg)];
            if (is_and || is_or) {
                p = v_pred_op(c, is_and, p, false, cv, o[3].neg);
                q = v_pred_op(c, is_and, q, false, cv, o[3].neg);
            } else {
                p = q = pred_unknown(c);
            }
        } else if (n == 4) {
            p = q = pred_unknown(c);
        }
        if (o[0].kind == SG_PTX_OPND_PAIR) {
            set_def(c, st, &o[0].elems[0], p, guarded, line);
            set_def(c, st, &o[0].elems[1], q, guarded, line);
        } else {
            DEF(p);
        }
        return;
    }
    case SG_PTX_OP_MIN:
    case SG_PTX_OP_MAX:
    case SG_PTX_OP_DIV:
    case SG_PTX_OP_REM: {
        if (!is_int || n != 3) break;
        uint32_t a = OPV(1), b = OPV(2);
        uint8_t op = ins->op == SG_PTX_OP_MIN ? SG_ACCESS_U_MIN
                     : ins->op == SG_PTX_OP_MAX ? SG_ACCESS_U_MAX
                     : ins->op == SG_PTX_OP_DIV ? SG_ACCESS_U_DIV
                                                : SG_ACCESS_U_REM;
        uint32_t r = v_uniform(c, op, a, b, bits, sg_ptx_type_is_signed(t));
        const val_t *av = V(c, a), *bv = V(c, b);
        int64_t k;
        if (r == SG_NONE && (ins->op == SG_PTX_OP_DIV || ins->op == SG_PTX_OP_REM)) {
            uint8_t fit = bits > 32 ? SG_ACCESS_FITS_U64 : fits_for(t);
            uint32_t q = v_quotient(c, st, a, b, fit, line, ins->op == SG_PTX_OP_DIV ? "div" : "rem");
            if (q != SG_NONE)
                r = ins->op == SG_PTX_OP_DIV ? q : v_add(c, a, v_mul(c, b, q, line), -1, line);
        }
        if (r == SG_NONE && is_poly(av) && is_poly(bv) && ax_is_const(&bv->e, &k) && k > 0) {
            ival_t rg = srange(c, &av->e);
            sg_access_expr_t q;
            if (ins->op == SG_PTX_OP_REM) {
                if (rg.lo >= 0 && rg.hi < k)
                    r = a;
                else if (rg.lo >= 0 || !sg_ptx_type_is_signed(t))
                    r = v_opaque(c, 0, k - 1, line, "rem");
                else
                    r = v_opaque(c, -(k - 1), k - 1, line, "rem");
            } else if (ins->op == SG_PTX_OP_DIV) {
                if (rg.lo >= 0 && ax_div_exact(&av->e, k, &q))
                    r = mk_poly(c, &q, av, NULL, false, 0, 0);
                else if (iv_bounded(rg) && rg.lo >= 0 && rg.hi < ((i128)1 << 62))
                    r = v_opaque(c, 0, (int64_t)(rg.hi / k), line, "div");
            }
        }
        DEF(r != SG_NONE ? r : v_unknown(c, SG_ACCESS_R_NONAFFINE, line));
        return;
    }
    case SG_PTX_OP_LD:
    case SG_PTX_OP_LDU:
        if (n < 2) break;
        if (ins->space == SG_PTX_SPACE_PARAM) {
            exec_ld_param(c, st, ins, guarded, line);
            return;
        }
        if (ins->space == SG_PTX_SPACE_NONE || ins->space == SG_PTX_SPACE_GLOBAL ||
            ins->space == SG_PTX_SPACE_CONST)
            record_site(c, si, SG_ACCESS_LOAD, ins->space == SG_PTX_SPACE_GLOBAL,
                        sg_ptx_type_size(t) * ins->vec, ins->vec > 1, addr_val(c, st, &o[1], line),
                        facts, nf, exact, 0, NULL);
        clobber(c, st, ins, SG_ACCESS_R_LOADED_ADDRESS, line);
        return;
    case SG_PTX_OP_ST:
        if (n < 2) break;
        if (ins->space == SG_PTX_SPACE_PARAM) {
            if (o[0].kind == SG_PTX_OPND_ADDRESS && o[0].reg == SG_PTX_NONE &&
                o[0].sym_kind == SG_PTX_SYM_LOCAL_VAR && o[0].ival == 0 && o[0].sym < c->f->n_vars &&
                o[1].kind == SG_PTX_OPND_REG)
                c->param_store[o[0].sym] = OPV(1) + 1;
            return;
        }
        if (ins->space == SG_PTX_SPACE_NONE || ins->space == SG_PTX_SPACE_GLOBAL)
            record_site(c, si, SG_ACCESS_STORE, ins->space == SG_PTX_SPACE_GLOBAL,
                        sg_ptx_type_size(t) * ins->vec, ins->vec > 1, addr_val(c, st, &o[0], line),
                        facts, nf, exact, 0, NULL);
        return;
    case SG_PTX_OP_ATOM:
    case SG_PTX_OP_RED: {
        uint32_t ai = ins->op == SG_PTX_OP_ATOM ? 1 : 0;
        if (n <= ai) break;
        if (ins->space == SG_PTX_SPACE_NONE || ins->space == SG_PTX_SPACE_GLOBAL)
            record_site(c, si, SG_ACCESS_ATOMIC, ins->space == SG_PTX_SPACE_GLOBAL,
                        sg_ptx_type_size(t) * ins->vec, ins->vec > 1, addr_val(c, st, &o[ai], line),
                        facts, nf, exact, 0, NULL);
        if (ins->op == SG_PTX_OP_ATOM) clobber(c, st, ins, SG_ACCESS_R_LOADED_ADDRESS, line);
        return;
    }
    case SG_PTX_OP_CP: exec_cp(c, st, si, facts, nf, exact); return;
    case SG_PTX_OP_CALL: exec_call(c, st, si, facts, nf, exact); return;
    case SG_PTX_OP_TEX:
    case SG_PTX_OP_TLD4:
    case SG_PTX_OP_SULD:
    case SG_PTX_OP_SUST:
    case SG_PTX_OP_SURED:
        record_site(c, si, ins->op == SG_PTX_OP_SUST ? SG_ACCESS_STORE
                           : ins->op == SG_PTX_OP_SURED ? SG_ACCESS_ATOMIC
                                                         : SG_ACCESS_LOAD,
                    true, 0, false, v_unknown(c, SG_ACCESS_R_TEXTURE, line), facts, nf, exact,
                    SG_ACCESS_R_TEXTURE, "texture or surface access");
        clobber(c, st, ins, SG_ACCESS_R_TEXTURE, line);
        return;
    case SG_PTX_OP_WMMA:
    case SG_PTX_OP_MULTIMEM:
        if (ins->space == SG_PTX_SPACE_GLOBAL || ins->space == SG_PTX_SPACE_NONE) {
            bool store = ins->n_mods && !strcmp(ins->mods[0], ".store");
            const sg_ptx_operand_t *a = NULL;
            for (uint32_t i = 0; i < n && !a; i++)
                if (o[i].kind == SG_PTX_OPND_ADDRESS) a = &o[i];
            if (a)
                record_site(c, si, store ? SG_ACCESS_STORE : SG_ACCESS_LOAD, false, 0, false,
                            addr_val(c, st, a, line), facts, nf, exact, SG_ACCESS_R_UNSUPPORTED,
                            ins->op == SG_PTX_OP_WMMA ? "matrix load/store" : "multimem access");
        }
        clobber(c, st, ins, SG_ACCESS_R_UNSUPPORTED, line);
        return;
    case SG_PTX_OP_BRA:
    case SG_PTX_OP_BRX:
    case SG_PTX_OP_RET:
    case SG_PTX_OP_EXIT:
    case SG_PTX_OP_TRAP:
    case SG_PTX_OP_BAR:
    case SG_PTX_OP_BARRIER:
    case SG_PTX_OP_MEMBAR:
    case SG_PTX_OP_FENCE:
    case SG_PTX_OP_PREFETCH:
    case SG_PTX_OP_PREFETCHU:
    case SG_PTX_OP_NANOSLEEP:
        if (ins->op == SG_PTX_OP_BAR || ins->op == SG_PTX_OP_BARRIER) break; /* bar.red defines */
        return;
    default: break;
    }
#undef OPV
#undef DEF
    clobber(c, st, ins, SG_ACCESS_R_UNSUPPORTED, line);
}

/* ---- states and edges ---------------------------------------------------------------------- */

static bool facts_add(state_t *st, uint32_t f)
{
    if (f == SG_NONE) return true;
    uint8_t i = 0;
    while (i < st->nf && st->f[i] < f) i++;
    if (i < st->nf && st->f[i] == f) return true;
    if (st->nf == MAX_FACTS) return false; /* dropped: weaker, still true */
    memmove(&st->f[i + 1], &st->f[i], (st->nf - i) * sizeof(uint32_t));
    st->f[i] = f;
    st->nf++;
    return true;
}

/* Facts the branch at the end of p adds on its edge to s. */
static uint8_t branch_facts(ctx_t *c, uint32_t p, uint32_t s, uint32_t *f, bool *exact)
{
    const sg_ptx_block_t *b = &c->f->blocks[p];
    *exact = true;
    if (b->term == SG_PTX_NONE) return 0;
    const sg_ptx_instr_t *t = &c->f->stmts[b->term].u.ins;
    bool cond_exit = (t->op == SG_PTX_OP_RET || t->op == SG_PTX_OP_EXIT || t->op == SG_PTX_OP_TRAP) &&
                     t->guard != SG_PTX_NONE;
    if (t->op == SG_PTX_OP_BRX && b->n_succ > 1) {
        *exact = false;
        return 0;
    }
    if (!(t->op == SG_PTX_OP_BRA && t->guard != SG_PTX_NONE && b->n_succ == 2) && !cond_exit) return 0;
    bool taken = !cond_exit && s == b->succ[0];
    uint32_t gs = slot(c, t->guard);
    if (gs == SG_NONE) {
        *exact = false;
        return 0;
    }
    bool want = taken ? !t->guard_neg : t->guard_neg;
    uint8_t n = pred_facts(c, c->st[p].v[gs], want, f, exact);
    if (!n) *exact = false;
    return n;
}

/* Loops the edge p -> s leaves, innermost first. */
static uint32_t exited_loops(ctx_t *c, uint32_t p, uint32_t s, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t l = c->loop_of[p]; l != SG_NONE && n < MAX_LOOP_DEPTH; l = c->loops[l].parent) {
        if (c->loops[l].in[s]) break;
        out[n++] = l;
    }
    return n;
}

/* A value as seen after leaving loops: its count replaced by the last
 * iteration's where that is known, else unknown. */
static uint32_t exit_val(ctx_t *c, uint32_t v, const uint32_t *ls, uint32_t nl, uint32_t p)
{
    for (uint32_t i = 0; i < nl; i++) {
        const val_t *x = V(c, v);
        if (x->kind != V_POLY) continue;
        loop_t *L = &c->loops[ls[i]];
        sg_access_atom_t k = SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, ls[i]);
        if (!ax_has_atom(&x->e, k)) continue;
        if (L->exit_kind == 1 && p == L->exit_from) {
            sg_access_expr_t e;
            if (ax_subst(&x->e, k, &L->exit_k, &e)) {
                v = mk_poly(c, &e, x, NULL, x->partial, x->reason, x->line);
                continue;
            }
        }
        v = v_unknown(c, SG_ACCESS_R_LOOP, c->f->stmts[c->f->blocks[L->header].first].line);
    }
    return v;
}

typedef struct {
    uint32_t p;
    uint32_t nl;
    uint32_t ls[MAX_LOOP_DEPTH];
    bool exact;
    uint8_t nf;
    uint32_t f[MAX_FACTS + MAX_PC];
} edge_t;

static bool fact_mentions_loops(ctx_t *c, uint32_t f, const uint32_t *ls, uint32_t nl)
{
    for (uint32_t i = 0; i < nl; i++)
        if (ax_has_atom(&c->conds[f].c.e, SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, ls[i])) ||
            c->conds[f].c.from_iter == ls[i] + 1)
            return true;
    return false;
}

static void make_edge(ctx_t *c, uint32_t p, uint32_t s, edge_t *e)
{
    const state_t *ps = &c->st[p];
    e->p = p;
    e->nl = exited_loops(c, p, s, e->ls);
    uint32_t bf[MAX_PC];
    bool bexact;
    uint8_t nb = branch_facts(c, p, s, bf, &bexact);
    e->exact = ps->exact && bexact;
    for (uint32_t i = 0; i < e->nl; i++) {
        const loop_t *L = &c->loops[e->ls[i]];
        if (!(L->exit_kind == 1 && p == L->exit_from)) e->exact = false;
    }
    e->nf = 0;
    for (uint8_t i = 0; i < ps->nf; i++)
        if (!fact_mentions_loops(c, ps->f[i], e->ls, e->nl)) e->f[e->nf++] = ps->f[i];
    for (uint8_t i = 0; i < nb; i++)
        if (!fact_mentions_loops(c, bf[i], e->ls, e->nl)) e->f[e->nf++] = bf[i];
}

static bool has_fact(const edge_t *e, uint32_t f)
{
    for (uint8_t i = 0; i < e->nf; i++)
        if (e->f[i] == f) return true;
    return false;
}

/* Whether d = m * e for some polynomial m (tried with the m that makes e's
 * first term match a term of d). */
static bool multiple_of(const sg_access_expr_t *d, const sg_access_expr_t *e)
{
    if (d->n == 0 && d->c == 0) return true;
    if (e->n == 0) return false;
    const sg_access_term_t *te = &e->t[0];
    for (uint32_t i = 0; i < d->n; i++) {
        const sg_access_term_t *td = &d->t[i];
        if (te->coef == 0 || td->coef % te->coef) continue;
        /* td's atoms must contain te's (both sorted) */
        sg_access_term_t m;
        memset(&m, 0, sizeof m);
        m.coef = td->coef / te->coef;
        uint32_t a = 0, b = 0, k = 0;
        bool ok = true;
        while (a < SG_ACCESS_MAX_DEGREE && td->atoms[a]) {
            if (b < SG_ACCESS_MAX_DEGREE && te->atoms[b] && te->atoms[b] == td->atoms[a]) {
                a++;
                b++;
            } else {
                m.atoms[k++] = td->atoms[a++];
            }
        }
        if (b < SG_ACCESS_MAX_DEGREE && te->atoms[b]) ok = false;
        if (!ok) continue;
        sg_access_expr_t me, prod;
        ax_zero(&me);
        if (m.atoms[0]) {
            me.n = 1;
            me.t[0] = m;
        } else {
            me.c = m.coef;
        }
        if (ax_mul(&me, e, &prod) && ax_equal(&prod, d)) return true;
    }
    return false;
}

/* v_j seen on edge i: v_i equals v_j where an equality fact of edge i holds. */
static bool equal_under(ctx_t *c, const edge_t *ei, uint32_t vi, uint32_t vj)
{
    if (val_equal(c, vi, vj)) return true;
    const val_t *a = V(c, vi), *b = V(c, vj);
    if (a->kind != V_POLY || b->kind != V_POLY || a->partial != b->partial) return false;
    sg_access_expr_t d;
    if (!ax_add(&b->e, &a->e, -1, &d)) return false;
    for (uint8_t k = 0; k < ei->nf; k++) {
        const sg_access_cond_t *q = &c->conds[ei->f[k]].c;
        if (q->rel == SG_ACCESS_EQ && multiple_of(&d, &q->e)) return true;
    }
    return false;
}

/* cond ? a : b for uniform a, b and a uniform condition (fact id). */
static uint32_t v_select(ctx_t *c, uint32_t cond, uint32_t ia, uint32_t ib)
{
    const val_t *a = V(c, ia), *b = V(c, ib);
    if (!is_poly(a) || !is_poly(b) || !is_uniform_expr(&a->e) || !is_uniform_expr(&b->e))
        return SG_NONE;
    sg_access_uexpr_t u;
    memset(&u, 0, sizeof u);
    u.op = SG_ACCESS_U_SELECT;
    u.bits = 64;
    u.a = push_expr(c, &a->e);
    u.b = push_expr(c, &b->e);
    if (!push_cond(c, &c->conds[cond].c, &u.cond)) return SG_NONE;
    uint32_t ui = push_uexpr(c, &u);
    if (ui == SG_NONE || u.a == SG_NONE || u.b == SG_NONE) return SG_NONE;
    sg_access_expr_t e;
    ax_atom(&e, SG_ACCESS_ATOM(SG_ACCESS_ATOM_UNIFORM, ui), 1);
    /* the checks of both sides and of the condition's comparison come along */
    val_t r;
    memset(&r, 0, sizeof r);
    r.kind = V_POLY;
    r.e = e;
    bool ov = false;
    merge_ob(&r, a, &ov);
    merge_ob(&r, b, &ov);
    val_t cv;
    memset(&cv, 0, sizeof cv);
    cv.nob = c->conds[cond].nob;
    memcpy(cv.ob, c->conds[cond].ob, sizeof cv.ob);
    merge_ob(&r, &cv, &ov);
    if (ov) return SG_NONE;
    return new_val(c, &r);
}

static bool postdominates(const ctx_t *c, uint32_t b, uint32_t d)
{
    uint32_t nb = c->f->n_blocks;
    for (uint32_t x = d, guard = 0; x != SG_NONE && x < nb && guard <= nb; guard++) {
        if (x == b) return true;
        x = c->ipdom[x];
    }
    return false;
}

/* In-state of block b from its incoming edges (skipping back edges and
 * edges from outside `only_outside_of` when that is a loop index). */
static void join_into(ctx_t *c, uint32_t b, state_t *out, uint32_t skip_inside_loop)
{
    const sg_ptx_block_t *blk = &c->f->blocks[b];
    edge_t *es = NULL;
    uint32_t ne = 0;
    es = calloc(blk->n_pred ? blk->n_pred : 1, sizeof(*es));
    if (!es) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < blk->n_pred; i++) {
        uint32_t p = blk->pred[i];
        if (c->f->blocks[p].rpo == SG_PTX_NONE || !c->st[p].reached) continue;
        if (skip_inside_loop != SG_NONE && c->loops[skip_inside_loop].in[p]) continue;
        if (skip_inside_loop == SG_NONE && c->f->blocks[p].rpo >= blk->rpo) continue; /* back edge */
        make_edge(c, p, b, &es[ne++]);
    }
    out->reached = ne > 0 || b == 0;
    if (ne == 0) {
        /* the function entry: registers undefined, no facts, exact */
        for (uint32_t s = 0; s < c->n_slots; s++) out->v[s] = 0;
        out->nf = 0;
        out->exact = true;
        free(es);
        return;
    }
    /* facts: those on every edge */
    out->nf = 0;
    bool dropped = false;
    for (uint8_t i = 0; i < es[0].nf; i++) {
        bool all = true;
        for (uint32_t k = 1; k < ne && all; k++) all = has_fact(&es[k], es[0].f[i]);
        if (all && !facts_add(out, es[0].f[i])) dropped = true;
    }
    /* exact when the edges' conditions add up to the common facts */
    bool exact = !dropped;
    for (uint32_t k = 0; k < ne; k++) exact &= es[k].exact;
    if (exact && ne > 1) {
        bool some_plain = false;
        for (uint32_t k = 0; k < ne && !some_plain; k++) {
            uint8_t extra = 0;
            for (uint8_t i = 0; i < es[k].nf; i++) {
                bool common = false;
                for (uint8_t j = 0; j < out->nf; j++) common |= out->f[j] == es[k].f[i];
                extra += !common;
            }
            some_plain = extra == 0;
        }
        if (!some_plain) {
            exact = false;
            if (ne == 2) {
                uint32_t x[2];
                uint8_t nx[2] = {0, 0};
                for (int k = 0; k < 2; k++)
                    for (uint8_t i = 0; i < es[k].nf; i++) {
                        bool common = false;
                        for (uint8_t j = 0; j < out->nf; j++) common |= out->f[j] == es[k].f[i];
                        if (!common) x[k] = es[k].f[i], nx[k]++;
                    }
                if (nx[0] == 1 && nx[1] == 1 && neg_cond(c, x[0]) == x[1]) exact = true;
            }
        }
    }
    /* or when b runs whenever its immediate dominator does (b post-dominates
       it, same loop iteration) and that block's facts were exact */
    uint32_t d = c->idom ? c->idom[b] : SG_NONE;
    if (!exact && !dropped && ne > 1 && d != SG_NONE && d != b && c->in_exact[d] &&
        c->loop_of[d] == c->loop_of[b] && postdominates(c, b, d)) {
        /* ... provided every fact the dominator had reached this block */
        bool kept = true;
        for (uint8_t i = 0; i < c->st[d].nf && kept; i++) {
            bool in = false;
            for (uint8_t j = 0; j < out->nf && !in; j++) in = out->f[j] == c->st[d].f[i];
            kept = in;
        }
        exact = kept;
    }
    out->exact = exact;
    c->in_exact[b] = exact;
    /* a uniform if/else: two edges that differ by one uniform fact */
    uint32_t sel_cond = SG_NONE;
    if (ne == 2) {
        uint32_t x[2];
        uint8_t nx[2] = {0, 0};
        for (int k = 0; k < 2; k++)
            for (uint8_t i = 0; i < es[k].nf; i++) {
                bool common = false;
                for (uint8_t j = 0; j < out->nf; j++) common |= out->f[j] == es[k].f[i];
                if (!common) x[k] = es[k].f[i], nx[k]++;
            }
        if (nx[0] == 1 && nx[1] == 1 && neg_cond(c, x[0]) == x[1] &&
            is_uniform_expr(&c->conds[x[0]].c.e) && c->conds[x[0]].c.rel <= SG_ACCESS_NE)
            sel_cond = x[0];
    }
    /* values */
    uint32_t line = c->f->stmts[blk->first < c->f->n_stmts ? blk->first : 0].line;
    for (uint32_t s = 0; s < c->n_slots; s++) {
        uint32_t v0 = exit_val(c, c->st[es[0].p].v[s], es[0].ls, es[0].nl, es[0].p);
        if (ne == 1) {
            out->v[s] = v0;
            continue;
        }
        uint32_t vals[64];
        uint32_t nv = ne < 64 ? ne : 64;
        vals[0] = v0;
        bool same = true;
        for (uint32_t k = 1; k < nv; k++) {
            vals[k] = exit_val(c, c->st[es[k].p].v[s], es[k].ls, es[k].nl, es[k].p);
            same &= val_equal(c, vals[k], v0);
        }
        if (same && ne <= 64) {
            out->v[s] = v0;
            continue;
        }
        if (ne <= 64) {
            uint32_t m = poly_merge(c, vals, nv, line);
            if (m != SG_NONE) {
                out->v[s] = m;
                continue;
            }
        }
        uint32_t pick = SG_NONE;
        for (uint32_t j = 0; j < nv && pick == SG_NONE && ne <= 64; j++) {
            bool ok = true;
            for (uint32_t k = 0; k < nv && ok; k++)
                if (k != j) ok = equal_under(c, &es[k], vals[k], vals[j]);
            if (ok) pick = j;
        }
        if (pick != SG_NONE) {
            val_t r = *V(c, vals[pick]);
            bool ov = false;
            for (uint32_t k = 0; k < nv; k++) merge_ob(&r, V(c, vals[k]), &ov);
            out->v[s] = ov ? v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, line) : new_val(c, &r);
        } else if (sel_cond != SG_NONE && (pick = v_select(c, sel_cond, vals[0], vals[1])) != SG_NONE) {
            out->v[s] = pick;
        } else if (V(c, v0)->kind == V_PRED) {
            out->v[s] = pred_unknown(c);
        } else {
            uint8_t why = SG_ACCESS_R_MERGE;
            uint32_t wl = line;
            for (uint32_t k = 0; k < nv; k++) {
                const val_t *x = V(c, vals[k]);
                if (x->kind == V_UNKNOWN && x->reason != SG_ACCESS_R_MERGE) {
                    why = x->reason;
                    wl = x->line;
                    break;
                }
            }
            out->v[s] = v_unknown(c, why, wl);
        }
    }
    free(es);
}

static void run_block(ctx_t *c, uint32_t b)
{
    state_t *st = &c->st[b];
    const sg_ptx_block_t *blk = &c->f->blocks[b];
    if (c->f->n_vars) memset(c->param_store, 0, c->f->n_vars * sizeof(uint32_t));
    for (uint32_t s = blk->first; s < blk->end && !c->failed; s++)
        if (c->f->stmts[s].kind == SG_PTX_STMT_INSTR) exec_instr(c, st, s);
}

/* ---- loops ------------------------------------------------------------------------------------ */

static void process_loop(ctx_t *c, uint32_t L);

/* The outermost loop inside region L (SG_NONE: the function) holding b. */
static uint32_t child_of(const ctx_t *c, uint32_t L, uint32_t b)
{
    uint32_t x = c->loop_of[b];
    if (x == L) return SG_NONE;
    while (x != SG_NONE && c->loops[x].parent != L) x = c->loops[x].parent;
    return x;
}

static void run_region(ctx_t *c, uint32_t L)
{
    const sg_ptx_func_t *f = c->f;
    for (uint32_t i = 0; i < f->n_rpo && !c->failed; i++) {
        uint32_t b = f->rpo[i];
        if (L != SG_NONE && !c->loops[L].in[b]) continue;
        uint32_t ch = child_of(c, L, b);
        if (ch != SG_NONE) {
            if (b == c->loops[ch].header) process_loop(c, ch);
            continue;
        }
        if (L == SG_NONE || b != c->loops[L].header) join_into(c, b, &c->st[b], SG_NONE);
        run_block(c, b);
    }
}

static uint32_t new_ph(ctx_t *c, uint32_t L, uint32_t s)
{
    if (!grow((void **)&c->phs, &c->cap_ph, c->n_ph + 1, sizeof(*c->phs))) return SG_NONE;
    c->phs[c->n_ph].loop = L;
    c->phs[c->n_ph].slot = s;
    return c->n_ph++;
}

/* Whether the entry facts already say k (obligations aside). */
static bool entry_says(ctx_t *c, const state_t *entry, const sg_access_cond_t *k)
{
    sg_access_cond_t y = *k;
    if (!canon(&y)) return false;
    for (uint8_t j = 0; j < entry->nf; j++) {
        const sg_access_cond_t *x = &c->conds[entry->f[j]].c;
        if (x->rel == y.rel && x->from_iter == 0 && ax_equal(&x->e, &y.e)) return true;
    }
    return false;
}

/* Replace every placeholder of loop L in e by what pass 1 found it to be:
 * (value at the head of the current iteration) - step for an induction
 * variable, the entry value for an invariant. False if e uses another. */
typedef struct {
    uint32_t cls;          /* 0 invariant, 1 induction, 2 varies */
    sg_access_expr_t d;    /* step */
    uint32_t head;         /* pass-2 head value */
} slot_class_t;

static bool subst_ph(ctx_t *c, uint32_t L, const slot_class_t *cls, sg_access_expr_t *e,
                     bool prev_iteration)
{
    for (uint32_t guard = 0; guard < 64; guard++) {
        sg_access_atom_t ph = 0;
        for (uint32_t i = 0; i < e->n && !ph; i++)
            for (int d = 0; d < SG_ACCESS_MAX_DEGREE && e->t[i].atoms[d]; d++)
                if (SG_ACCESS_ATOM_KIND(e->t[i].atoms[d]) == AX_PH) {
                    ph = e->t[i].atoms[d];
                    break;
                }
        if (!ph) return true;
        uint32_t id = SG_ACCESS_ATOM_ARG(ph);
        if (id >= c->n_ph || c->phs[id].loop != L) return false;
        uint32_t s = c->phs[id].slot;
        const slot_class_t *k = &cls[s];
        if (k->cls == 2) return false;
        const val_t *hv = V(c, k->head);
        if (!is_poly(hv)) return false;
        sg_access_expr_t by = hv->e;
        if (k->cls == 1 && prev_iteration && !ax_add(&by, &k->d, -1, &by)) return false;
        if (!ax_subst(e, ph, &by, e)) return false;
    }
    return false;
}

static void process_loop(ctx_t *c, uint32_t L)
{
    loop_t *lp = &c->loops[L];
    uint32_t h = lp->header;
    const sg_ptx_func_t *f = c->f;
    uint32_t T = c->n_slots;
    if (lp->depth >= MAX_LOOP_DEPTH) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "loops nested deeper than %d", MAX_LOOP_DEPTH);
        return;
    }
    uint32_t hline = f->stmts[f->blocks[h].first < f->n_stmts ? f->blocks[h].first : 0].line;
    /* entry state */
    join_into(c, h, &c->st[h], L);
    state_t entry = c->st[h];
    uint32_t *entry_v = malloc((T ? T : 1) * sizeof(uint32_t));
    slot_class_t *cls = calloc(T ? T : 1, sizeof(*cls));
    uint8_t *defined = calloc(T ? T : 1, 1);
    if (!entry_v || !cls || !defined) {
        free(entry_v);
        free(cls);
        free(defined);
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return;
    }
    memcpy(entry_v, c->st[h].v, T * sizeof(uint32_t));
    for (uint32_t b = 0; b < f->n_blocks; b++) {
        if (!lp->in[b]) continue;
        for (uint32_t s = f->blocks[b].first; s < f->blocks[b].end; s++) {
            if (f->stmts[s].kind != SG_PTX_STMT_INSTR) continue;
            uint32_t regs[64];
            uint32_t n = sg_ptx_instr_defs(&f->stmts[s].u.ins, regs, 64);
            for (uint32_t i = 0; i < n && i < 64; i++)
                if (slot(c, regs[i]) != SG_NONE) defined[slot(c, regs[i])] = 1;
        }
    }
    /* pass 1: placeholders for everything the loop changes */
    bool rec = c->recording;
    c->recording = false;
    sg_access_atom_t *phs = calloc(T ? T : 1, sizeof(*phs));
    if (!phs) fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
    for (uint32_t s = 0; s < T && phs; s++) {
        if (!defined[s]) continue;
        uint32_t id = new_ph(c, L, s);
        if (id == SG_NONE || id > 0xffffff) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "too many loop variables");
            break;
        }
        if (V(c, entry_v[s])->kind == V_PRED) {
            c->st[h].v[s] = pred_unknown(c);
        } else {
            phs[s] = SG_ACCESS_ATOM(AX_PH, id);
            c->st[h].v[s] = v_atom(c, phs[s]);
        }
    }
    c->in_exact[h] = false;
    run_region(c, L);
    /* classify each changed register from its value at the latches */
    for (uint32_t s = 0; s < T && !c->failed; s++) {
        if (!defined[s]) {
            cls[s].cls = 0;
            cls[s].head = entry_v[s];
            continue;
        }
        sg_access_atom_t ph = phs ? phs[s] : 0;
        uint32_t k = ph ? 0 : 2;
        sg_access_expr_t d;
        ax_zero(&d);
        /* recomputed every iteration to its value before the loop: invariant */
        bool same_as_entry = ph != 0;
        for (uint32_t i = 0; i < lp->n_latch && same_as_entry; i++)
            same_as_entry = val_equal(c, c->st[lp->latch[i]].v[s], entry_v[s]) &&
                            V(c, entry_v[s])->kind == V_POLY;
        if (same_as_entry) {
            cls[s].cls = 0;
            cls[s].head = entry_v[s];
            continue;
        }
        for (uint32_t i = 0; i < lp->n_latch && k != 2; i++) {
            const val_t *lv = V(c, c->st[lp->latch[i]].v[s]);
            if (lv->kind != V_POLY || lv->partial) {
                k = 2;
                break;
            }
            bool other;
            int64_t co = ax_linear_coef(&lv->e, ph, &other);
            sg_access_expr_t step;
            sg_access_expr_t one;
            ax_atom(&one, ph, 1);
            if (co != 1 || other || !ax_add(&lv->e, &one, -1, &step)) {
                k = 2;
                break;
            }
            /* the step may not depend on values the loop changes */
            bool ok = true;
            for (uint32_t t = 0; t < step.n && ok; t++)
                for (int dd = 0; dd < SG_ACCESS_MAX_DEGREE && step.t[t].atoms[dd]; dd++)
                    if (SG_ACCESS_ATOM_KIND(step.t[t].atoms[dd]) == AX_PH) ok = false;
            if (!ok) {
                k = 2;
                break;
            }
            bool zero = step.n == 0 && step.c == 0;
            uint32_t kk = zero ? 0 : 1;
            if (i == 0) {
                k = kk;
                d = step;
            } else if (kk != k || !ax_equal(&d, &step)) {
                k = 2;
            }
        }
        cls[s].cls = k;
        cls[s].d = d;
        if (k == 0) {
            cls[s].head = entry_v[s];
        } else if (k == 1) {
            const val_t *ev = V(c, entry_v[s]);
            if (ev->kind == V_POLY) {
                sg_access_expr_t kd;
                ax_atom(&kd, SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, L), 1);
                sg_access_expr_t e;
                if (ax_mul(&d, &kd, &kd) && ax_add(&ev->e, &kd, 1, &e))
                    cls[s].head = mk_poly(c, &e, ev, NULL, ev->partial, ev->reason, ev->line);
                else
                    cls[s].head = v_unknown(c, SG_ACCESS_R_TOO_COMPLEX, hline);
            } else {
                cls[s].head = v_unknown(c, ev->kind == V_UNKNOWN ? ev->reason : SG_ACCESS_R_LOOP, hline);
            }
        } else {
            cls[s].head = V(c, entry_v[s])->kind == V_PRED ? pred_unknown(c)
                                                          : v_unknown(c, SG_ACCESS_R_LOOP, hline);
        }
    }
    /* the loop's bound, from the latch condition */
    uint32_t lfacts[MAX_PC];
    uint8_t nlf = 0;
    bool lexact = false;
    lp->exit_kind = 0;
    bool single_exit = lp->n_latch == 1;
    for (uint32_t b = 0; b < f->n_blocks && single_exit; b++) {
        if (!lp->in[b]) continue;
        for (uint32_t i = 0; i < f->blocks[b].n_succ; i++)
            if (!lp->in[f->blocks[b].succ[i]] && b != lp->latch[0]) single_exit = false;
        if (f->blocks[b].returns && b != lp->latch[0]) single_exit = false;
    }
    if (single_exit && !c->failed) {
        uint32_t u = lp->latch[0];
        uint32_t bf[MAX_PC];
        bool bexact;
        uint8_t nb = branch_facts(c, u, h, bf, &bexact);
        lexact = bexact && nb > 0;
        for (uint8_t i = 0; i < nb; i++) {
            const cond_t *q = &c->conds[bf[i]];
            sg_access_cond_t k = q->c;
            uint32_t ob[MAX_OB];
            uint8_t nob = 0;
            bool ok = subst_ph(c, L, cls, &k.e, true);
            for (uint8_t j = 0; j < q->nob && ok; j++) {
                sg_access_cond_t o = c->conds[q->ob[j]].c;
                ok = subst_ph(c, L, cls, &o.e, true);
                o.from_iter = (uint16_t)(L + 1); /* verified one iteration ahead */
                if (ok) {
                    ob[nob] = intern_cond(c, &o, NULL, 0);
                    ok = ob[nob++] != SG_NONE;
                }
            }
            if (!ok) {
                lexact = false;
                continue;
            }
            sg_access_atom_t K = SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, L);
            /* uniform: the trip count is computed at evaluation */
            bool uni = true;
            for (uint32_t t = 0; t < k.e.n && uni; t++)
                for (int dd = 0; dd < SG_ACCESS_MAX_DEGREE && k.e.t[t].atoms[dd]; dd++) {
                    sg_access_atom_t a = k.e.t[t].atoms[dd];
                    if (a == K) continue;
                    sg_access_expr_t one;
                    ax_atom(&one, a, 1);
                    if (!is_uniform_expr(&one)) uni = false;
                }
            if (uni && ax_has_atom(&k.e, K) && nb == 1) {
                uint32_t ci;
                if (!push_cond(c, &k, &ci)) break;
                sg_access_loop_t *ol = &c->out->loops[L];
                ol->trip_cond = ci;
                ol->trip_uniform = true;
                sg_access_uexpr_t ux;
                memset(&ux, 0, sizeof ux);
                ux.op = SG_ACCESS_U_TRIP;
                ux.bits = 64;
                ux.a = L;
                uint32_t ui = push_uexpr(c, &ux);
                if (ui == SG_NONE) break;
                sg_access_cond_t kf;
                memset(&kf, 0, sizeof kf);
                sg_access_expr_t tr;
                ax_atom(&kf.e, K, 1);
                ax_atom(&tr, SG_ACCESS_ATOM(SG_ACCESS_ATOM_UNIFORM, ui), 1);
                ax_add(&kf.e, &tr, -1, &kf.e);
                kf.rel = SG_ACCESS_LT; /* K < trip */
                lfacts[nlf++] = intern_cond(c, &kf, ob, nob);
                lp->exit_kind = 1;
                lp->exit_from = u;
                ax_atom(&lp->exit_k, SG_ACCESS_ATOM(SG_ACCESS_ATOM_UNIFORM, ui), 1);
                lp->exit_k.c = -1;
                continue;
            }
            bool other;
            int64_t kc = ax_linear_coef(&k.e, K, &other);
            if (k.rel == SG_ACCESS_NE && !other && (kc == 1 || kc == -1)) {
                /* unit count-down (or up) to zero: K < |start| */
                sg_access_expr_t a;
                sg_access_expr_t kk;
                ax_atom(&kk, K, kc);
                ax_add(&k.e, &kk, -1, &a); /* the value at K = 0 */
                ival_t r = srange(c, &a);
                sg_access_cond_t start = {.e = a, .rel = SG_ACCESS_NE};
                bool nonzero = entry_says(c, &entry, &start);
                val_t nn;
                memset(&nn, 0, sizeof nn);
                sg_access_expr_t na;
                bool sign_ok = kc == -1 ? (r.lo >= 0 || nonneg(c, &entry, &a, &nn))
                                        : (r.hi <= 0 || (ax_scale(&a, -1, &na) && nonneg(c, &entry, &na, &nn)));
                for (uint8_t j = 0; j < nn.nob && nob < MAX_OB; j++) ob[nob++] = nn.ob[j];
                if (nonzero && sign_ok && nn.nob <= MAX_OB) {
                    sg_access_expr_t lim; /* |a| */
                    if (kc == -1)
                        lim = a;
                    else
                        ax_scale(&a, -1, &lim);
                    sg_access_cond_t kf;
                    memset(&kf, 0, sizeof kf);
                    ax_atom(&kf.e, K, 1);
                    if (ax_add(&kf.e, &lim, -1, &kf.e)) {
                        kf.rel = SG_ACCESS_LT;
                        lfacts[nlf++] = intern_cond(c, &kf, ob, nob);
                        lp->exit_kind = 1;
                        lp->exit_from = u;
                        ax_add_const(&lim, -1, &lp->exit_k);
                        continue;
                    }
                }
                lexact = false;
                continue;
            }
            if (k.rel == SG_ACCESS_LE || k.rel == SG_ACCESS_LT) {
                /* monotone in K: once false, false for every later iteration */
                sg_access_expr_t slope; /* terms with K, K removed */
                sg_access_expr_t one;
                ax_const(&one, 1);
                bool ok2 = ax_subst(&k.e, K, &one, &slope);
                sg_access_expr_t zero_e, two_e, at0, at2, slope2;
                ax_const(&zero_e, 0);
                ax_const(&two_e, 2);
                ok2 = ok2 && ax_subst(&k.e, K, &zero_e, &at0) && ax_add(&slope, &at0, -1, &slope);
                /* linear in K: the step from 1 to 2 is the step from 0 to 1 */
                ok2 = ok2 && ax_subst(&k.e, K, &two_e, &at2) && ax_add(&at2, &at0, -1, &slope2) &&
                      ax_scale(&slope, 2, &at2) && ax_equal(&slope2, &at2);
                if (ok2 && ax_has_atom(&k.e, K) && srange(c, &slope).lo >= 0) {
                    sg_access_cond_t c0 = {.e = at0, .rel = k.rel};
                    bool at_entry = entry_says(c, &entry, &c0);
                    if (!at_entry) {
                        k.from_iter = (uint16_t)(L + 1);
                        lexact = false;
                    }
                    lfacts[nlf++] = intern_cond(c, &k, ob, nob);
                    continue;
                }
            }
            lexact = false;
        }
    } else {
        lexact = false;
    }
    /* pass 2 */
    c->recording = rec;
    state_t *hs = &c->st[h];
    for (uint32_t s = 0; s < T; s++) hs->v[s] = cls[s].head;
    hs->nf = 0;
    bool dropped = false;
    for (uint8_t i = 0; i < entry.nf; i++) dropped |= !facts_add(hs, entry.f[i]);
    for (uint8_t i = 0; i < nlf; i++) dropped |= !facts_add(hs, lfacts[i]);
    hs->exact = entry.exact && lexact && !dropped;
    hs->reached = true;
    c->in_exact[h] = hs->exact;
    if (!c->failed) run_region(c, L);
    free(phs);
    free(entry_v);
    free(cls);
    free(defined);
}

/* ---- setup ------------------------------------------------------------------------------------ */

static void mark(uint8_t *tracked, uint32_t *stack, uint32_t *sp, uint32_t r, uint32_t nregs)
{
    if (r < nregs && !tracked[r]) {
        tracked[r] = 1;
        stack[(*sp)++] = r;
    }
}

static void mark_addr_regs(const sg_ptx_operand_t *o, uint8_t *tracked, uint32_t *stack, uint32_t *sp,
                           uint32_t nregs, bool in_addr)
{
    if (o->kind == SG_PTX_OPND_ADDRESS) {
        mark(tracked, stack, sp, o->reg, nregs);
        in_addr = true;
    } else if (o->kind == SG_PTX_OPND_REG && in_addr) {
        mark(tracked, stack, sp, o->reg, nregs);
    }
    for (uint32_t i = 0; i < o->n_elems; i++) mark_addr_regs(&o->elems[i], tracked, stack, sp, nregs, in_addr);
}

/* Registers that matter: those addresses, guards, branch conditions and
 * call arguments depend on (a backward slice). Slots are dense over them. */
static bool slice(ctx_t *c)
{
    const sg_ptx_func_t *f = c->f;
    uint32_t nr = f->n_regs;
    uint8_t *tracked = calloc(nr ? nr : 1, 1);
    uint32_t *stack = malloc((nr ? nr : 1) * sizeof(uint32_t));
    uint32_t *ndef = calloc(nr + 1, sizeof(uint32_t));
    c->slot_of = malloc((nr ? nr : 1) * sizeof(uint32_t));
    uint32_t regs[64];
    if (!tracked || !stack || !ndef || !c->slot_of) goto oom;
    uint32_t sp = 0;
    for (uint32_t s = 0; s < f->n_stmts; s++) {
        const sg_ptx_stmt_t *st = &f->stmts[s];
        if (st->kind != SG_PTX_STMT_INSTR) continue;
        const sg_ptx_instr_t *ins = &st->u.ins;
        mark(tracked, stack, &sp, ins->guard, nr);
        for (uint32_t i = 0; i < ins->n_opnds; i++) mark_addr_regs(&ins->opnds[i], tracked, stack, &sp, nr, false);
        if (ins->op == SG_PTX_OP_BRX && ins->n_opnds && ins->opnds[0].kind == SG_PTX_OPND_REG)
            mark(tracked, stack, &sp, ins->opnds[0].reg, nr);
        if (ins->op == SG_PTX_OP_ST && ins->space == SG_PTX_SPACE_PARAM && ins->n_opnds > 1 &&
            ins->opnds[1].kind == SG_PTX_OPND_REG)
            mark(tracked, stack, &sp, ins->opnds[1].reg, nr);
        uint32_t n = sg_ptx_instr_defs(ins, regs, 64);
        for (uint32_t i = 0; i < n && i < 64; i++) ndef[regs[i]]++;
    }
    /* definitions per register (CSR) */
    uint32_t *start = calloc(nr + 1, sizeof(uint32_t));
    if (!start) goto oom;
    for (uint32_t r = 0; r < nr; r++) start[r + 1] = start[r] + ndef[r];
    uint32_t *defs = malloc((start[nr] ? start[nr] : 1) * sizeof(uint32_t));
    if (!defs) {
        free(start);
        goto oom;
    }
    memset(ndef, 0, (nr + 1) * sizeof(uint32_t));
    for (uint32_t s = 0; s < f->n_stmts; s++) {
        if (f->stmts[s].kind != SG_PTX_STMT_INSTR) continue;
        uint32_t n = sg_ptx_instr_defs(&f->stmts[s].u.ins, regs, 64);
        for (uint32_t i = 0; i < n && i < 64; i++) defs[start[regs[i]] + ndef[regs[i]]++] = s;
    }
    while (sp) {
        uint32_t r = stack[--sp];
        for (uint32_t k = start[r]; k < start[r + 1]; k++) {
            uint32_t n = sg_ptx_instr_uses(&f->stmts[defs[k]].u.ins, regs, 64);
            for (uint32_t i = 0; i < n && i < 64; i++) mark(tracked, stack, &sp, regs[i], nr);
        }
    }
    free(start);
    free(defs);
    c->n_slots = 0;
    for (uint32_t r = 0; r < nr; r++) c->slot_of[r] = tracked[r] ? c->n_slots++ : SG_NONE;
    free(tracked);
    free(stack);
    free(ndef);
    return true;
oom:
    free(tracked);
    free(stack);
    free(ndef);
    fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
    return false;
}

/* Natural loops from back edges; irreducible flow fails the analysis. */
static bool find_loops(ctx_t *c)
{
    const sg_ptx_func_t *f = c->f;
    uint32_t nb = f->n_blocks;
    c->idom = malloc(nb * sizeof(uint32_t));
    c->loop_of = malloc(nb * sizeof(uint32_t));
    if (!c->idom || !c->loop_of) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return false;
    }
    sg_ptx_dominators(f, c->idom);
    uint32_t cap = 0;
    for (uint32_t u = 0; u < nb; u++) {
        if (f->blocks[u].rpo == SG_PTX_NONE) continue;
        for (uint32_t i = 0; i < f->blocks[u].n_succ; i++) {
            uint32_t h = f->blocks[u].succ[i];
            if (f->blocks[h].rpo > f->blocks[u].rpo) continue;
            if (!sg_ptx_dominates(f, c->idom, h, u)) {
                fail(c, SG_ACCESS_R_CONTROL_FLOW, "line %u: irreducible control flow",
                     f->stmts[f->blocks[h].first < f->n_stmts ? f->blocks[h].first : 0].line);
                return false;
            }
            uint32_t L = SG_NONE;
            for (uint32_t k = 0; k < c->n_loops; k++)
                if (c->loops[k].header == h) L = k;
            if (L == SG_NONE) {
                if (!grow((void **)&c->loops, &cap, c->n_loops + 1, sizeof(loop_t)) ||
                    c->n_loops >= 0xffff) {
                    fail(c, SG_ACCESS_R_TOO_COMPLEX, "too many loops");
                    return false;
                }
                L = c->n_loops++;
                memset(&c->loops[L], 0, sizeof(loop_t));
                c->loops[L].header = h;
                c->loops[L].parent = SG_NONE;
                c->loops[L].in = calloc(nb, 1);
                if (!c->loops[L].in) {
                    fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
                    return false;
                }
                c->loops[L].in[h] = 1;
            }
            loop_t *lp = &c->loops[L];
            uint32_t *nl = realloc(lp->latch, (lp->n_latch + 1) * sizeof(uint32_t));
            if (!nl) {
                fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
                return false;
            }
            lp->latch = nl;
            lp->latch[lp->n_latch++] = u;
            /* body: everything reaching u without passing h */
            uint32_t *stack = malloc(nb * sizeof(uint32_t));
            if (!stack) {
                fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
                return false;
            }
            uint32_t sp = 0;
            if (!lp->in[u]) {
                lp->in[u] = 1;
                stack[sp++] = u;
            }
            while (sp) {
                uint32_t b = stack[--sp];
                for (uint32_t k = 0; k < f->blocks[b].n_pred; k++) {
                    uint32_t p = f->blocks[b].pred[k];
                    if (f->blocks[p].rpo == SG_PTX_NONE || lp->in[p]) continue;
                    lp->in[p] = 1;
                    stack[sp++] = p;
                }
            }
            free(stack);
        }
    }
    /* nesting: the parent is the smallest other loop holding the header */
    uint32_t *size = calloc(c->n_loops + 1, sizeof(uint32_t));
    if (!size) {
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return false;
    }
    for (uint32_t L = 0; L < c->n_loops; L++)
        for (uint32_t b = 0; b < nb; b++) size[L] += c->loops[L].in[b];
    for (uint32_t L = 0; L < c->n_loops; L++) {
        uint32_t best = SG_NONE;
        for (uint32_t M = 0; M < c->n_loops; M++)
            if (M != L && c->loops[M].in[c->loops[L].header] && size[M] > size[L] &&
                (best == SG_NONE || size[M] < size[best]))
                best = M;
        c->loops[L].parent = best;
    }
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t best = SG_NONE;
        for (uint32_t L = 0; L < c->n_loops; L++)
            if (c->loops[L].in[b] && (best == SG_NONE || size[L] < size[best])) best = L;
        c->loop_of[b] = best;
    }
    free(size);
    for (uint32_t L = 0; L < c->n_loops; L++) {
        uint32_t d = 0;
        for (uint32_t p = c->loops[L].parent; p != SG_NONE && d <= MAX_LOOP_DEPTH; p = c->loops[p].parent) d++;
        c->loops[L].depth = d;
    }
    return true;
}

/* Immediate post-dominators on the reverse CFG with a virtual exit (index
 * n_blocks) that every returning block leads to; SG_NONE for blocks that
 * reach no exit. */
static bool find_postdoms(ctx_t *c)
{
    const sg_ptx_func_t *f = c->f;
    uint32_t nb = f->n_blocks, X = nb;
    uint32_t *order = malloc((nb + 1) * sizeof(uint32_t)), *pos = malloc((nb + 1) * sizeof(uint32_t));
    uint32_t *stack = malloc((nb + 1) * sizeof(uint32_t)), *it = calloc(nb + 1, sizeof(uint32_t));
    c->ipdom = malloc((nb + 1) * sizeof(uint32_t));
    if (!order || !pos || !stack || !it || !c->ipdom) {
        free(order);
        free(pos);
        free(stack);
        free(it);
        fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
        return false;
    }
    /* reverse-graph successors of x: its CFG predecessors; of the exit:
       the returning blocks (visited by scanning) */
    for (uint32_t i = 0; i <= nb; i++) pos[i] = SG_NONE;
    uint32_t n = 0, sp = 0;
    stack[sp++] = X;
    pos[X] = 0; /* visited */
    uint32_t *post = order;
    while (sp) {
        uint32_t x = stack[sp - 1];
        uint32_t next = SG_NONE;
        if (x == X) {
            while (it[x] < nb && next == SG_NONE) {
                uint32_t b = it[x]++;
                if (f->blocks[b].returns && f->blocks[b].rpo != SG_PTX_NONE && pos[b] == SG_NONE) next = b;
            }
        } else {
            while (it[x] < f->blocks[x].n_pred && next == SG_NONE) {
                uint32_t p = f->blocks[x].pred[it[x]++];
                if (f->blocks[p].rpo != SG_PTX_NONE && pos[p] == SG_NONE) next = p;
            }
        }
        if (next != SG_NONE) {
            pos[next] = 0;
            stack[sp++] = next;
        } else {
            post[n++] = x;
            sp--;
        }
    }
    /* rpo index: post-order reversed */
    for (uint32_t i = 0; i <= nb; i++) pos[i] = SG_NONE;
    for (uint32_t i = 0; i < n; i++) pos[post[i]] = n - 1 - i;
    for (uint32_t i = 0; i <= nb; i++) c->ipdom[i] = SG_NONE;
    c->ipdom[X] = X;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = n; i-- > 0;) { /* reverse post-order of the reverse graph */
            uint32_t x = post[i];
            if (x == X) continue;
            uint32_t nd = SG_NONE;
            /* predecessors in the reverse graph: CFG successors, and the exit */
            uint32_t ns = f->blocks[x].n_succ + (f->blocks[x].returns ? 1 : 0);
            for (uint32_t k = 0; k < ns; k++) {
                uint32_t p = k < f->blocks[x].n_succ ? f->blocks[x].succ[k] : X;
                if (c->ipdom[p] == SG_NONE) continue;
                if (nd == SG_NONE) {
                    nd = p;
                    continue;
                }
                uint32_t a = p, b = nd;
                while (a != b) {
                    while (pos[a] > pos[b]) a = c->ipdom[a];
                    while (pos[b] > pos[a]) b = c->ipdom[b];
                }
                nd = a;
            }
            if (nd != SG_NONE && c->ipdom[x] != nd) {
                c->ipdom[x] = nd;
                changed = true;
            }
        }
    }
    free(order);
    free(pos);
    free(stack);
    free(it);
    return true;
}

/* When the analysis gives up on a kernel: one unknown site per global
 * memory instruction, so what the code touches stays visible. */
static void fallback_sites(ctx_t *c)
{
    sg_access_kernel_t *k = c->out;
    k->n_sites = 0;
    k->n_conds = 0;
    const sg_ptx_func_t *f = c->f;
    bool was = c->failed;
    c->failed = false;
    for (uint32_t s = 0; s < f->n_stmts; s++) {
        const sg_ptx_stmt_t *st = &f->stmts[s];
        if (st->kind != SG_PTX_STMT_INSTR) continue;
        const sg_ptx_instr_t *ins = &st->u.ins;
        sg_access_kind_t kind;
        switch (ins->op) {
        case SG_PTX_OP_LD:
        case SG_PTX_OP_LDU:
            if (ins->space != SG_PTX_SPACE_GLOBAL && ins->space != SG_PTX_SPACE_NONE) continue;
            kind = SG_ACCESS_LOAD;
            break;
        case SG_PTX_OP_ST:
            if (ins->space != SG_PTX_SPACE_GLOBAL && ins->space != SG_PTX_SPACE_NONE) continue;
            kind = SG_ACCESS_STORE;
            break;
        case SG_PTX_OP_ATOM:
        case SG_PTX_OP_RED:
            if (ins->space != SG_PTX_SPACE_GLOBAL && ins->space != SG_PTX_SPACE_NONE) continue;
            kind = SG_ACCESS_ATOMIC;
            break;
        case SG_PTX_OP_CP:
            if (!sg_ptx_instr_has_mod(ins, ".global")) continue;
            kind = SG_ACCESS_LOAD;
            break;
        case SG_PTX_OP_CALL: kind = SG_ACCESS_CALL; break;
        default: continue;
        }
        sg_access_site_t *x = push_site(c);
        if (!x) break;
        x->kind = (uint8_t)kind;
        x->generic = ins->space != SG_PTX_SPACE_GLOBAL;
        x->width = (uint16_t)(sg_ptx_type_size(ins->type) * ins->vec);
        x->vector = ins->vec > 1;
        x->stmt = s;
        x->line = st->line;
        x->param_index = SG_NONE;
        x->reason = c->fail_reason;
        snprintf(x->detail, sizeof x->detail, "%.95s", c->fail_detail);
    }
    c->failed = was;
}

static void ctx_free(ctx_t *c)
{
    free(c->slot_of);
    free(c->vals);
    free(c->conds);
    free(c->cond_hash);
    if (c->st) free(c->st[0].v);
    free(c->st);
    free(c->idom);
    free(c->ipdom);
    free(c->in_exact);
    free(c->loop_of);
    for (uint32_t L = 0; L < c->n_loops; L++) {
        free(c->loops[L].in);
        free(c->loops[L].latch);
    }
    free(c->loops);
    free(c->phs);
    free(c->param_store);
    free(c->ptr_param);
    free(c->quots);
}

int sg_access_analyze_ptx(const sg_ptx_module_t *m, const char *kernel, sg_access_kernel_t *out)
{
    if (!out) return SG_EINVAL;
    memset(out, 0, sizeof(*out));
    if (!m || !kernel) return SG_EINVAL;
    out->source = SG_ACCESS_SOURCE_PTX;
    out->kernel = strdup(kernel);
    if (!out->kernel) return SG_ENOMEM;
    const sg_ptx_func_t *f = NULL;
    for (uint32_t i = 0; i < m->n_funcs; i++)
        if (m->funcs[i].is_entry && m->funcs[i].has_body && !strcmp(m->funcs[i].name, kernel))
            f = &m->funcs[i];
    if (!f) {
        out->status = SG_ENOENT;
        out->reason = SG_ACCESS_R_NO_CODE;
        snprintf(out->detail, sizeof out->detail, "no .entry %.120s in the PTX", kernel);
        return SG_ENOENT;
    }
    out->n_params = f->n_params;
    out->params_size = f->params_size;
    if (f->n_params) {
        out->param_offsets = malloc(f->n_params * sizeof(uint32_t));
        out->param_sizes = malloc(f->n_params * sizeof(uint32_t));
        if (!out->param_offsets || !out->param_sizes) return SG_ENOMEM;
        for (uint32_t i = 0; i < f->n_params; i++) {
            out->param_offsets[i] = f->params[i].param_offset;
            out->param_sizes[i] = (uint32_t)f->params[i].size;
        }
    }
    memcpy(out->reqntid, f->reqntid, sizeof out->reqntid);
    memcpy(out->maxntid, f->maxntid, sizeof out->maxntid);

    ctx_t cx, *c = &cx;
    memset(c, 0, sizeof(*c));
    c->m = m;
    c->f = f;
    c->out = out;
    static const uint32_t dflt[3] = {1024, 1024, 64};
    for (int d = 0; d < 3; d++) {
        uint32_t lim = f->reqntid[d] ? f->reqntid[d] : f->maxntid[d] ? f->maxntid[d] : dflt[d];
        if (lim == 0 || lim > dflt[d]) lim = dflt[d];
        c->tid_max[d] = lim - 1;
        c->ntid_max[d] = lim;
        c->ntid_min[d] = f->reqntid[d] ? lim : 1;
    }
    c->cond_hash = malloc(4096 * sizeof(uint32_t));
    c->param_store = calloc(f->n_vars + 1, sizeof(uint32_t));
    c->ptr_param = calloc(f->params_size + 1, 1);
    if (!c->cond_hash || !c->param_store || !c->ptr_param) {
        ctx_free(c);
        return SG_ENOMEM;
    }
    memset(c->cond_hash, 0xff, 4096 * sizeof(uint32_t));
    val_t undef;
    memset(&undef, 0, sizeof undef);
    new_val(c, &undef); /* id 0: undefined */
    scan_flags(c);
    c->in_exact = calloc(f->n_blocks + 1, sizeof(bool));
    if (!c->in_exact) fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
    if (!c->failed && slice(c) && find_loops(c) && find_postdoms(c)) {
        if ((uint64_t)f->n_blocks * (c->n_slots + 1) > MAX_STATE_SLOTS) {
            fail(c, SG_ACCESS_R_TOO_COMPLEX, "%u blocks x %u registers is beyond the analysis limit",
                 f->n_blocks, c->n_slots);
        } else {
            c->st = calloc(f->n_blocks, sizeof(state_t));
            uint32_t *vs = calloc((size_t)f->n_blocks * (c->n_slots + 1), sizeof(uint32_t));
            out->loops = calloc(c->n_loops + 1, sizeof(sg_access_loop_t));
            if (!c->st || !vs || !out->loops) {
                free(vs);
                fail(c, SG_ACCESS_R_TOO_COMPLEX, "out of memory");
            } else {
                for (uint32_t b = 0; b < f->n_blocks; b++) c->st[b].v = vs + (size_t)b * (c->n_slots + 1);
                out->n_loops = c->n_loops;
                for (uint32_t L = 0; L < c->n_loops; L++) {
                    uint32_t h = c->loops[L].header;
                    out->loops[L].header_line = f->stmts[f->blocks[h].first < f->n_stmts ? f->blocks[h].first : 0].line;
                    out->loops[L].parent = c->loops[L].parent;
                    out->loops[L].trip_cond = SG_NONE;
                }
                c->recording = true;
                run_region(c, SG_NONE);
            }
        }
    }
    if (c->failed) {
        out->reason = c->fail_reason;
        snprintf(out->detail, sizeof out->detail, "%.159s", c->fail_detail);
        fallback_sites(c);
    }
    ctx_free(c);
    return sg_access_kernel_addresses(out);
}

int sg_access_analyze_text(const char *ptx, size_t len, const char *kernel, sg_access_kernel_t *out)
{
    if (!out) return SG_EINVAL;
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    int rc = sg_ptx_parse(ptx, len, NULL, &m, &err);
    if (rc) {
        memset(out, 0, sizeof(*out));
        out->kernel = kernel ? strdup(kernel) : NULL;
        out->status = rc == SG_ENOMEM ? SG_ENOMEM : SG_EFORMAT;
        out->reason = SG_ACCESS_R_PARSE;
        snprintf(out->detail, sizeof out->detail, "PTX: %.150s", err.message);
        return rc == SG_ENOMEM ? SG_ENOMEM : SG_OK;
    }
    rc = sg_access_analyze_ptx(m, kernel, out);
    sg_ptx_module_free(m);
    return rc == SG_ENOENT ? SG_OK : rc;
}
