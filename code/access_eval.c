/* access_eval.c: from a kernel's symbolic accesses (access.c) to byte
 * ranges for one launch (see access.h, sg_access_eval).
 *
 * With the launch's parameters and geometry every uniform atom becomes a
 * number (parameter words, %ntid, %nctaid, derived values, loop trip
 * counts), leaving each offset a polynomial in the variables %tid, %ctaid,
 * loop counts and opaque values, each in a box. The conditions shrink the
 * boxes (interval propagation), the checks are verified on them, and the
 * offset's interval over them is a sound range. When the site runs for
 * exactly the points its conditions describe and they are linear, the set
 * of offsets is computed exactly as an arithmetic progression: variables
 * taken in order of their coefficient, each condition applied to the run of
 * variables it constrains (tid.x + ntid.x*ctaid.x < n, a row bound of a 2-D
 * index, a grid-stride loop bound), which gives "dense" and tight hulls.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_internal.h"

#define MAX_VARS 32
#define MAX_CASES 8

typedef struct {
    const sg_access_kernel_t *k;
    const sg_kernel_t *node;
    /* uniform values, memoised: state 0 unknown, 1 busy, 2 done, 3 failed */
    uint8_t *u_state;
    i128 *u_val;
    uint8_t *t_state;
    i128 *t_val; /* loop trip counts */
    char why[96];
} env_t;

static bool read_param(const env_t *env, sg_access_atom_t a, i128 *out)
{
    uint32_t off, w;
    bool s;
    sg_access_param_atom_decode(a, &off, &w, &s);
    const sg_kernel_t *n = env->node;
    if (!n->param_bytes || (uint64_t)off + w > n->params_size) return false;
    uint64_t v = 0;
    for (uint32_t i = 0; i < w; i++) v |= (uint64_t)n->param_bytes[off + i] << (8 * i);
    if (s && w < 8 && (v >> (8 * w - 1)) & 1) v |= ~0ull << (8 * w);
    *out = s ? (i128)(int64_t)v : (i128)v;
    return true;
}

static bool eval_uniform(env_t *env, uint32_t u, i128 *out);
static bool eval_trip(env_t *env, uint32_t L, i128 *out);

/* The number a uniform atom stands for. */
static bool atom_value(env_t *env, sg_access_atom_t a, i128 *out)
{
    uint32_t arg = SG_ACCESS_ATOM_ARG(a);
    switch (SG_ACCESS_ATOM_KIND(a)) {
    case SG_ACCESS_ATOM_SREG:
        if (arg >= SG_ACCESS_NTID_X && arg <= SG_ACCESS_NTID_Z) {
            *out = env->node->block[arg - SG_ACCESS_NTID_X];
            return true;
        }
        if (arg >= SG_ACCESS_NCTAID_X && arg <= SG_ACCESS_NCTAID_Z) {
            *out = env->node->grid[arg - SG_ACCESS_NCTAID_X];
            return true;
        }
        return false;
    case SG_ACCESS_ATOM_PARAM: return read_param(env, a, out);
    case SG_ACCESS_ATOM_UNIFORM: return eval_uniform(env, arg, out);
    default: return false;
    }
}

static bool is_var(sg_access_atom_t a)
{
    uint32_t k = SG_ACCESS_ATOM_KIND(a), arg = SG_ACCESS_ATOM_ARG(a);
    if (k == SG_ACCESS_ATOM_SREG)
        return arg <= SG_ACCESS_TID_Z || (arg >= SG_ACCESS_CTAID_X && arg <= SG_ACCESS_CTAID_Z);
    return k == SG_ACCESS_ATOM_LOOP || k == SG_ACCESS_ATOM_OPAQUE;
}

/* e with every uniform atom replaced by its number. */
static bool concretize(env_t *env, const sg_access_expr_t *e, sg_access_expr_t *out)
{
    sg_access_expr_t r = *e;
    for (uint32_t guard = 0; guard < 4 * SG_ACCESS_MAX_TERMS * SG_ACCESS_MAX_DEGREE; guard++) {
        sg_access_atom_t a = 0;
        for (uint32_t i = 0; i < r.n && !a; i++)
            for (int d = 0; d < SG_ACCESS_MAX_DEGREE && r.t[i].atoms[d]; d++)
                if (!is_var(r.t[i].atoms[d])) {
                    a = r.t[i].atoms[d];
                    break;
                }
        if (!a) {
            *out = r;
            return true;
        }
        i128 v;
        if (!atom_value(env, a, &v)) return false;
        if (v > INT64_MAX || v < INT64_MIN) {
            snprintf(env->why, sizeof env->why, "a value does not fit 64 bits");
            return false;
        }
        sg_access_expr_t by;
        ax_const(&by, (int64_t)v);
        if (!ax_subst(&r, a, &by, &r)) {
            snprintf(env->why, sizeof env->why, "arithmetic overflow");
            return false;
        }
    }
    return false;
}

static bool eval_const(env_t *env, const sg_access_expr_t *e, i128 *out)
{
    sg_access_expr_t c;
    int64_t v;
    if (!concretize(env, e, &c) || !ax_is_const(&c, &v)) return false;
    *out = v;
    return true;
}

static uint64_t trunc_bits(i128 v, uint32_t bits)
{
    uint64_t u = (uint64_t)v;
    return bits >= 64 ? u : u & ((1ull << bits) - 1);
}

static i128 as_math(uint64_t u, uint32_t bits, bool s)
{
    if (bits == 0) return 0; /* an untyped value: no bits (and u >> -1 is undefined) */
    if (bits < 64) {
        u &= (1ull << bits) - 1;
        if (s && (u >> (bits - 1)) & 1) return (i128)u - ((i128)1 << bits);
        return (i128)u;
    }
    return s ? (i128)(int64_t)u : (i128)u;
}

static bool eval_uniform(env_t *env, uint32_t u, i128 *out)
{
    const sg_access_kernel_t *k = env->k;
    if (u >= k->n_uexprs) return false;
    if (env->u_state[u] == 2) {
        *out = env->u_val[u];
        return true;
    }
    if (env->u_state[u] != 0) return false; /* busy (a cycle) or failed before */
    env->u_state[u] = 1;
    const sg_access_uexpr_t *x = &k->uexprs[u];
    i128 a = 0, b = 0, r = 0;
    bool ok = true;
    uint32_t bits = x->bits == 32 ? 32 : 64;
    bool s = x->is_signed;
    if (x->op == SG_ACCESS_U_TRIP) {
        ok = eval_trip(env, x->a, &r);
    } else if (x->op == SG_ACCESS_U_SELECT) {
        i128 cv;
        ok = x->cond < k->n_conds && x->a < k->n_exprs && x->b < k->n_exprs &&
             eval_const(env, &k->conds[x->cond].e, &cv);
        if (ok) {
            bool holds = false;
            switch (k->conds[x->cond].rel) {
            case SG_ACCESS_LT: holds = cv < 0; break;
            case SG_ACCESS_LE: holds = cv <= 0; break;
            case SG_ACCESS_EQ: holds = cv == 0; break;
            case SG_ACCESS_NE: holds = cv != 0; break;
            default: ok = false;
            }
            if (ok) ok = eval_const(env, &k->exprs[holds ? x->a : x->b], &r);
        }
    } else {
        ok = x->a < k->n_exprs && x->b < k->n_exprs && eval_const(env, &k->exprs[x->a], &a) &&
             eval_const(env, &k->exprs[x->b], &b);
        uint64_t ua = trunc_bits(a, bits), ub = trunc_bits(b, bits);
        i128 sa = as_math(ua, bits, true), sb = as_math(ub, bits, true);
        if (ok) {
            switch (x->op) {
            case SG_ACCESS_U_AND: r = as_math(ua & ub, bits, s); break;
            case SG_ACCESS_U_OR: r = as_math(ua | ub, bits, s); break;
            case SG_ACCESS_U_XOR: r = as_math(ua ^ ub, bits, s); break;
            case SG_ACCESS_U_SHL: r = ub >= bits ? 0 : as_math(ua << ub, bits, s); break;
            case SG_ACCESS_U_SHR:
                if (s)
                    r = ub >= bits ? (sa < 0 ? -1 : 0) : as_math((uint64_t)(int64_t)(sa >> ub), bits, true);
                else
                    r = ub >= bits ? 0 : as_math(ua >> ub, bits, false);
                break;
            case SG_ACCESS_U_DIV:
            case SG_ACCESS_U_REM:
                if (ub == 0) {
                    ok = false;
                    break;
                }
                if (s) {
                    if (bits == 64 && sa == INT64_MIN && sb == -1) {
                        ok = false;
                        break;
                    }
                    r = x->op == SG_ACCESS_U_DIV ? sa / sb : sa % sb;
                    r = as_math((uint64_t)r, bits, true);
                } else {
                    r = as_math(x->op == SG_ACCESS_U_DIV ? ua / ub : ua % ub, bits, false);
                }
                break;
            case SG_ACCESS_U_MIN:
            case SG_ACCESS_U_MAX: {
                i128 p = s ? sa : (i128)ua, q = s ? sb : (i128)ub;
                r = (x->op == SG_ACCESS_U_MIN) == (p < q) ? p : q;
                break;
            }
            case SG_ACCESS_U_MULHI: {
                if (bits == 32) {
                    i128 p = s ? sa * sb : (i128)ua * (i128)ub;
                    r = as_math((uint64_t)(p >> 32), 32, s);
                } else if (s) {
                    __int128 p = (__int128)(int64_t)ua * (__int128)(int64_t)ub;
                    r = (int64_t)(p >> 64);
                } else {
                    unsigned __int128 p = (unsigned __int128)ua * ub;
                    r = (i128)(uint64_t)(p >> 64);
                }
                break;
            }
            default: ok = false;
            }
        }
    }
    env->u_state[u] = ok ? 2 : 3;
    env->u_val[u] = r;
    *out = r;
    return ok;
}

static i128 floor_div(i128 a, i128 b)
{
    i128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static i128 ceil_div(i128 a, i128 b)
{
    return -floor_div(-a, b);
}

/* Trip count of loop L: the first K >= 1 for which its condition fails. */
static bool eval_trip(env_t *env, uint32_t L, i128 *out)
{
    const sg_access_kernel_t *k = env->k;
    if (L >= k->n_loops) return false;
    if (env->t_state[L] == 2) {
        *out = env->t_val[L];
        return true;
    }
    if (env->t_state[L] != 0) return false;
    env->t_state[L] = 1;
    const sg_access_loop_t *lp = &k->loops[L];
    bool ok = lp->trip_uniform && lp->trip_cond < k->n_conds;
    i128 t = 0;
    if (ok) {
        const sg_access_cond_t *c = &k->conds[lp->trip_cond];
        sg_access_expr_t e;
        sg_access_atom_t K = SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, L);
        ok = concretize(env, &c->e, &e);
        /* a + b*K */
        int64_t b = 0, a = e.c;
        for (uint32_t i = 0; ok && i < e.n; i++) {
            if (e.t[i].atoms[0] == K && !e.t[i].atoms[1])
                b = e.t[i].coef;
            else
                ok = false;
        }
        if (ok) {
            switch (c->rel) {
            case SG_ACCESS_LT:
            case SG_ACCESS_LE: {
                i128 lim = c->rel == SG_ACCESS_LT ? -(i128)a : -(i128)a + 1; /* b*K >= lim stops */
                if (b <= 0) {
                    ok = (i128)a + b >= (c->rel == SG_ACCESS_LT ? 0 : 1); /* stops at K = 1 */
                    t = 1;
                } else {
                    t = ceil_div(lim, b);
                    if (t < 1) t = 1;
                }
                break;
            }
            case SG_ACCESS_NE:
                if (b == 0) {
                    ok = a == 0;
                    t = 1;
                } else if ((-(i128)a) % b == 0 && -(i128)a / b >= 1) {
                    t = -(i128)a / b;
                } else {
                    ok = false; /* never reaches 0 (before wrapping) */
                }
                break;
            case SG_ACCESS_EQ:
                t = (i128)a + b != 0 ? 1 : (b == 0 ? 0 : 2);
                ok = t != 0;
                break;
            default: ok = false;
            }
        }
        if (!ok) snprintf(env->why, sizeof env->why, "loop at line %u does not end", lp->header_line);
    }
    env->t_state[L] = ok ? 2 : 3;
    env->t_val[L] = t;
    *out = t;
    return ok;
}

/* ---- variables and boxes ---------------------------------------------------------- */

typedef struct {
    sg_access_atom_t atom[MAX_VARS];
    ival_t box[MAX_VARS];
    uint32_t n;
    bool overflow;
} vars_t;

static uint32_t var_index(vars_t *v, sg_access_atom_t a)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->atom[i] == a) return i;
    if (v->n == MAX_VARS) {
        v->overflow = true;
        return SG_NONE;
    }
    v->atom[v->n] = a;
    v->box[v->n].lo = -AX_INF;
    v->box[v->n].hi = AX_INF;
    return v->n++;
}

static void collect_vars(vars_t *v, const sg_access_expr_t *e)
{
    for (uint32_t i = 0; i < e->n; i++)
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && e->t[i].atoms[d]; d++) var_index(v, e->t[i].atoms[d]);
}

static ival_t box_of(void *ctx, sg_access_atom_t a)
{
    vars_t *v = ctx;
    for (uint32_t i = 0; i < v->n; i++)
        if (v->atom[i] == a) return v->box[i];
    ival_t all = {-AX_INF, AX_INF};
    return all;
}

/* Linear coefficients over the variables: false if some term is nonlinear. */
static bool linear_form(const vars_t *v, const sg_access_expr_t *e, i128 *coef)
{
    for (uint32_t i = 0; i < v->n; i++) coef[i] = 0;
    for (uint32_t i = 0; i < e->n; i++) {
        if (e->t[i].atoms[1]) return false;
        for (uint32_t j = 0; j < v->n; j++)
            if (v->atom[j] == e->t[i].atoms[0]) coef[j] = e->t[i].coef;
    }
    return true;
}

typedef struct {
    sg_access_expr_t e; /* concretized */
    uint8_t rel;
    uint16_t tag;       /* facts: from_iter; checks: step loop + 1 */
    uint32_t ck, nck;   /* facts: their checks in the site's fact-check array */
} ccond_t;

/* Shrink the boxes with the linear conditions; false when empty. */
static bool tighten(vars_t *v, const ccond_t *cs, uint32_t nc)
{
    for (int round = 0; round < 8; round++) {
        bool changed = false;
        for (uint32_t k = 0; k < nc; k++) {
            i128 coef[MAX_VARS];
            if (!linear_form(v, &cs[k].e, coef)) continue;
            int sides = cs[k].rel == SG_ACCESS_EQ ? 2 : (cs[k].rel <= SG_ACCESS_LE ? 1 : 0);
            for (int side = 0; side < sides; side++) {
                i128 sg = side ? -1 : 1; /* side 1: -e <= 0 */
                i128 c0 = sg * cs[k].e.c + (cs[k].rel == SG_ACCESS_LT ? 1 : 0);
                for (uint32_t j = 0; j < v->n; j++) {
                    i128 cj = sg * coef[j];
                    if (!cj) continue;
                    /* cj*x_j <= -c0 - min(sum of the others) */
                    ival_t rest = iv_point(c0);
                    for (uint32_t i = 0; i < v->n; i++)
                        if (i != j && coef[i]) rest = iv_add(rest, iv_mul(iv_point(sg * coef[i]), v->box[i]));
                    if (rest.lo <= -AX_INF) continue;
                    i128 rhs = -rest.lo;
                    ival_t *b = &v->box[j];
                    if (cj > 0) {
                        i128 hi = floor_div(rhs, cj);
                        if (hi < b->hi) {
                            b->hi = hi;
                            changed = true;
                        }
                    } else {
                        i128 lo = ceil_div(rhs, cj);
                        if (lo > b->lo) {
                            b->lo = lo;
                            changed = true;
                        }
                    }
                    if (b->lo > b->hi) return false;
                }
            }
            /* a condition on constants only */
            bool has = false;
            for (uint32_t j = 0; j < v->n; j++) has |= coef[j] != 0;
            if (!has) {
                i128 c = cs[k].e.c;
                bool holds = cs[k].rel == SG_ACCESS_LT ? c < 0
                             : cs[k].rel == SG_ACCESS_LE ? c <= 0
                             : cs[k].rel == SG_ACCESS_EQ ? c == 0
                                                         : c != 0;
                if (!holds) return false;
            }
        }
        if (!changed) break;
    }
    return true;
}

/* ---- linear bounds: Fourier-Motzkin ------------------------------------------------------- */

/* Interval propagation treats variables one at a time; offsets built from
 * several related variables (a quotient and its dividend, a loop count and
 * its bound) need the constraints combined. Fourier-Motzkin elimination with
 * integer tightening (divide by the gcd, round the constant) gives the bound
 * of the offset over the whole system. Dropping a constraint (too many rows,
 * huge coefficients) only weakens the bound, so every exit is sound. */

#define FM_MAX 384
#define FM_BIG ((i128)1 << 96)

typedef struct {
    i128 a[MAX_VARS + 1]; /* the last column is the offset */
    i128 k;               /* sum a*x + k <= 0 */
} fm_row_t;

static i128 iabs(i128 x)
{
    return x < 0 ? -x : x;
}

static i128 gcd128(i128 a, i128 b)
{
    a = iabs(a);
    b = iabs(b);
    while (b) {
        i128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* 1: keep, 0: always true, -1: never true, 2: too big (drop) */
static int fm_norm(fm_row_t *r, uint32_t n)
{
    i128 g = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (iabs(r->a[i]) > FM_BIG) return 2;
        g = gcd128(g, r->a[i]);
    }
    if (iabs(r->k) > FM_BIG) return 2;
    if (g == 0) return r->k > 0 ? -1 : 0;
    for (uint32_t i = 0; i < n; i++) r->a[i] /= g;
    r->k = -floor_div(-r->k, g); /* sum (a/g) x <= floor(-k/g) */
    return 1;
}

static bool fm_same(const fm_row_t *x, const fm_row_t *y, uint32_t n)
{
    if (x->k != y->k) return false;
    for (uint32_t i = 0; i < n; i++)
        if (x->a[i] != y->a[i]) return false;
    return true;
}

/* Bounds of the linear offset over the boxes and the linear conditions:
 * 1 with *out set, 0 when it cannot tell, -1 when the system has no
 * solution (the site never runs). */
static int fm_bound_order(const vars_t *v, const ccond_t *cs, uint32_t nc, const sg_access_expr_t *off,
                          bool ids_first, ival_t *out)
{
    uint32_t n = v->n + 1, y = v->n;
    i128 oc[MAX_VARS];
    if (!linear_form(v, off, oc)) return 0;
    fm_row_t *rows = malloc(2 * FM_MAX * sizeof(fm_row_t)), *tmp = rows + FM_MAX;
    if (!rows) return 0;
    uint32_t nr = 0;
    int result = 0;
#define ADD_ROW(r)                                                                                     do {                                                                                                   int st_ = fm_norm(&(r), n);                                                                        if (st_ == -1) {                                                                                       result = -1;                                                                                       goto done;                                                                                     }                                                                                                  if (st_ == 1 && nr < FM_MAX) rows[nr++] = (r);                                                 } while (0)
    for (uint32_t i = 0; i < v->n; i++) {
        fm_row_t r;
        memset(&r, 0, sizeof r);
        if (v->box[i].lo > -AX_INF) {
            r.a[i] = -1;
            r.k = v->box[i].lo;
            ADD_ROW(r);
        }
        memset(&r, 0, sizeof r);
        if (v->box[i].hi < AX_INF) {
            r.a[i] = 1;
            r.k = -v->box[i].hi;
            ADD_ROW(r);
        }
    }
    for (uint32_t k = 0; k < nc; k++) {
        i128 co[MAX_VARS];
        if (cs[k].rel > SG_ACCESS_EQ || !linear_form(v, &cs[k].e, co)) continue;
        for (int side = 0; side < (cs[k].rel == SG_ACCESS_EQ ? 2 : 1); side++) {
            fm_row_t r;
            memset(&r, 0, sizeof r);
            i128 sg = side ? -1 : 1;
            for (uint32_t i = 0; i < v->n; i++) r.a[i] = sg * co[i];
            r.k = sg * cs[k].e.c + (cs[k].rel == SG_ACCESS_LT ? 1 : 0);
            ADD_ROW(r);
        }
    }
    for (int side = 0; side < 2; side++) { /* y = offset */
        fm_row_t r;
        memset(&r, 0, sizeof r);
        i128 sg = side ? -1 : 1;
        for (uint32_t i = 0; i < v->n; i++) r.a[i] = -sg * oc[i];
        r.a[y] = sg;
        r.k = -sg * off->c;
        ADD_ROW(r);
    }
    /* eliminate the variables, cheapest first */
    bool gone[MAX_VARS] = {false};
    for (uint32_t round = 0; round < v->n; round++) {
        uint32_t best = SG_NONE;
        uint64_t cost = UINT64_MAX;
        for (uint32_t j = 0; j < v->n && ids_first && best == SG_NONE; j++)
            if (!gone[j] && SG_ACCESS_ATOM_KIND(v->atom[j]) == SG_ACCESS_ATOM_SREG) best = j;
        if (best == SG_NONE)
            for (uint32_t j = 0; j < v->n; j++) {
                if (gone[j]) continue;
                uint64_t p = 0, q = 0;
                for (uint32_t r = 0; r < nr; r++) {
                    p += rows[r].a[j] > 0;
                    q += rows[r].a[j] < 0;
                }
                if (p * q < cost) {
                    cost = p * q;
                    best = j;
                }
            }
        if (best == SG_NONE) break;
        gone[best] = true;
        uint32_t nt = 0;
        bool full = false;
        for (uint32_t r = 0; r < nr; r++)
            if (rows[r].a[best] == 0) tmp[nt++] = rows[r];
        for (uint32_t p = 0; p < nr && !full; p++) {
            if (rows[p].a[best] <= 0) continue;
            for (uint32_t q = 0; q < nr && !full; q++) {
                if (rows[q].a[best] >= 0) continue;
                fm_row_t c;
                i128 mp = -rows[q].a[best], mq = rows[p].a[best];
                bool big = false;
                for (uint32_t i = 0; i < n; i++) {
                    c.a[i] = mp * rows[p].a[i] + mq * rows[q].a[i];
                    big |= iabs(c.a[i]) > FM_BIG;
                }
                c.k = mp * rows[p].k + mq * rows[q].k;
                if (big || iabs(c.k) > FM_BIG) continue; /* dropped: weaker */
                int st = fm_norm(&c, n);
                if (st == -1) {
                    result = -1;
                    goto done;
                }
                if (st != 1) continue;
                bool dup = false;
                for (uint32_t t = 0; t < nt && !dup; t++) dup = fm_same(&tmp[t], &c, n);
                if (dup) continue;
                if (nt == FM_MAX) {
                    full = true;
                    break;
                }
                tmp[nt++] = c;
            }
        }
        if (full) goto done; /* too many rows: no answer */
        memcpy(rows, tmp, nt * sizeof(fm_row_t));
        nr = nt;
    }
    {
        ival_t b = {-AX_INF, AX_INF};
        for (uint32_t r = 0; r < nr; r++) {
            i128 a = rows[r].a[y];
            if (a > 0) {
                i128 hi = floor_div(-rows[r].k, a);
                if (hi < b.hi) b.hi = hi;
            } else if (a < 0) {
                i128 lo = ceil_div(-rows[r].k, a);
                if (lo > b.lo) b.lo = lo;
            }
        }
        if (b.lo > b.hi) {
            result = -1;
            goto done;
        }
        *out = b;
        result = 1;
    }
done:
#undef ADD_ROW
    free(rows);
    return result;
}

/* Integer tightening depends on the order of elimination: two orders
 * (cheapest first; thread and CTA ids first, which pairs a guard with the
 * quotient facts over the same thread index), their bounds intersected. */
static int fm_bound(const vars_t *v, const ccond_t *cs, uint32_t nc, const sg_access_expr_t *off,
                    ival_t *out)
{
    ival_t a, b;
    int ra = fm_bound_order(v, cs, nc, off, false, &a);
    if (ra == -1) return -1;
    int rb = fm_bound_order(v, cs, nc, off, true, &b);
    if (rb == -1) return -1;
    if (ra != 1 && rb != 1) return 0;
    if (ra != 1) a = b;
    if (rb != 1) b = a;
    out->lo = a.lo > b.lo ? a.lo : b.lo;
    out->hi = a.hi < b.hi ? a.hi : b.hi;
    return out->lo > out->hi ? -1 : 1;
}

/* Whether e fits `rel` given the boxes and the conditions in use: intervals
 * first, the linear system when they are too coarse. */
static bool fits(ival_t r, uint8_t rel);
static bool fits_under(const vars_t *v, const ccond_t *use, uint32_t nu, const sg_access_expr_t *e,
                       uint8_t rel)
{
    if (fits(ax_range(e, box_of, (void *)v), rel)) return true;
    ival_t b;
    int r = fm_bound(v, use, nu, e, &b);
    return r == -1 || (r == 1 && fits(b, rel)); /* -1: nothing runs, vacuously */
}

/* ---- exact sets: arithmetic progressions ------------------------------------------------ */

typedef struct {
    i128 b, g, n; /* {b + g*s : 0 <= s < n}; n may be AX_INF */
} ap_t;

static bool ap_merge(ap_t x, ap_t y, ap_t *out)
{
    if (x.n == 0 || y.n == 0) {
        out->b = 0;
        out->g = 1;
        out->n = 0;
        return true;
    }
    if (x.n == 1) {
        *out = (ap_t){x.b + y.b, y.g, y.n};
        return true;
    }
    if (y.n == 1) {
        *out = (ap_t){x.b + y.b, x.g, x.n};
        return true;
    }
    if (y.g % x.g != 0) return false;
    if (x.n >= AX_INF) return false;
    if (y.g > x.g * x.n) return false; /* a gap between the copies */
    i128 n = y.n >= AX_INF ? AX_INF : (x.n - 1) + (y.g / x.g) * (y.n - 1) + 1;
    *out = (ap_t){x.b + y.b, x.g, n};
    return true;
}

/* Keep the points of a with lo <= point <= hi. */
static ap_t ap_clip(ap_t a, i128 lo, i128 hi)
{
    if (a.n == 0) return a;
    i128 s0 = lo <= a.b ? 0 : ceil_div(lo - a.b, a.g);
    i128 s1 = hi >= AX_INF ? a.n - 1 : floor_div(hi - a.b, a.g);
    if (a.n < AX_INF && s1 > a.n - 1) s1 = a.n - 1;
    if (s1 >= AX_INF - 1) s1 = AX_INF - 1;
    ap_t r = {a.b + a.g * s0, a.g, s1 >= s0 ? s1 - s0 + 1 : 0};
    if (s1 >= AX_INF - 1) r.n = AX_INF;
    return r;
}

typedef struct {
    uint32_t first, last; /* run of sorted variables */
    i128 lo, hi;          /* bounds on the run's sum */
    bool ne;              /* a single excluded value lo (== hi) */
} run_t;

typedef struct {
    const vars_t *v;
    const uint32_t *order; /* variable indices sorted by coefficient */
    const i128 *a;         /* coefficients by variable index */
    const run_t *runs;
    uint32_t n_runs;
} apctx_t;

static bool ap_apply(const apctx_t *x, uint32_t i, uint32_t j, ap_t *acc)
{
    for (uint32_t r = 0; r < x->n_runs; r++) {
        const run_t *rn = &x->runs[r];
        if (rn->first != i || rn->last != j) continue;
        if (rn->ne) {
            /* an excluded value: exact only at an end */
            if (acc->n == 0 || rn->lo < acc->b || (acc->n < AX_INF && rn->lo > acc->b + acc->g * (acc->n - 1)))
                continue;
            if (rn->lo == acc->b) {
                acc->b += acc->g;
                acc->n = acc->n >= AX_INF ? AX_INF : acc->n - 1;
            } else if (acc->n < AX_INF && rn->lo == acc->b + acc->g * (acc->n - 1)) {
                acc->n--;
            } else if ((rn->lo - acc->b) % acc->g == 0) {
                return false; /* a hole inside */
            }
            continue;
        }
        *acc = ap_clip(*acc, rn->lo, rn->hi);
    }
    return true;
}

static bool ap_eval(const apctx_t *x, uint32_t i, uint32_t j, ap_t *out)
{
    if (i == j) {
        uint32_t v = x->order[i];
        ival_t bx = x->v->box[v];
        if (bx.lo <= -AX_INF) return false;
        ap_t a = {x->a[v] * bx.lo, x->a[v], bx.hi >= AX_INF ? AX_INF : bx.hi - bx.lo + 1};
        if (!ap_apply(x, i, i, &a)) return false;
        *out = a;
        return true;
    }
    ap_t acc = {0, 1, 1};
    bool first = true;
    for (uint32_t k = i; k <= j;) {
        /* the largest run starting at k inside [i, j], other than [i, j] itself */
        uint32_t end = k;
        for (uint32_t r = 0; r < x->n_runs; r++) {
            const run_t *rn = &x->runs[r];
            if (rn->first == k && rn->last <= j && !(rn->first == i && rn->last == j) && rn->last > end)
                end = rn->last;
        }
        ap_t part;
        if (!ap_eval(x, k, end, &part)) return false;
        if (first)
            acc = part;
        else if (!ap_merge(acc, part, &acc))
            return false;
        first = false;
        k = end + 1;
    }
    if (!ap_apply(x, i, j, &acc)) return false;
    *out = acc;
    return true;
}

/* The exact set of offsets as a progression (returns 2, *out set), or only
 * its exact hull when the variables' parts do not tile (returns 1, *hull
 * set, the offset's constant included), or 0 when neither can be proven. */
/* Whether condition c holds at the point w (one value per variable). */
static bool holds_at(const vars_t *v, const ccond_t *c, const i128 *w)
{
    i128 x = c->e.c;
    for (uint32_t i = 0; i < c->e.n; i++) {
        i128 t = c->e.t[i].coef;
        for (int d = 0; d < SG_ACCESS_MAX_DEGREE && c->e.t[i].atoms[d]; d++) {
            uint32_t j = 0;
            while (j < v->n && v->atom[j] != c->e.t[i].atoms[d]) j++;
            if (j == v->n) return false;
            t *= w[j];
        }
        x += t;
    }
    switch (c->rel) {
    case SG_ACCESS_LT: return x < 0;
    case SG_ACCESS_LE: return x <= 0;
    case SG_ACCESS_EQ: return x == 0;
    case SG_ACCESS_NE: return x != 0;
    default: return false;
    }
}

static int exact_set(const vars_t *v, const sg_access_expr_t *off, const ccond_t *cs, uint32_t nc,
                     const i128 *witness, ap_t *out, ival_t *hull)
{
    i128 a[MAX_VARS];
    if (!linear_form(v, off, a)) return 0;
    uint32_t order[MAX_VARS], no = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        if (a[i] < 0) return 0;
        if (a[i] > 0) order[no++] = i;
    }
    for (uint32_t i = 1; i < no; i++) { /* by coefficient */
        uint32_t x = order[i], j = i;
        while (j > 0 && a[order[j - 1]] > a[x]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    uint32_t pos[MAX_VARS];
    for (uint32_t i = 0; i < v->n; i++) pos[i] = SG_NONE;
    for (uint32_t i = 0; i < no; i++) pos[order[i]] = i;
    run_t runs[64];
    uint32_t nr = 0;
    for (uint32_t k = 0; k < nc; k++) {
        i128 b[MAX_VARS];
        if (!linear_form(v, &cs[k].e, b)) return 0;
        uint32_t lo = SG_NONE, hi = 0, cnt = 0;
        bool zero_var = false;
        for (uint32_t i = 0; i < v->n; i++) {
            if (!b[i]) continue;
            if (pos[i] == SG_NONE) {
                zero_var = true;
                continue;
            }
            cnt++;
            if (lo == SG_NONE || pos[i] < lo) lo = pos[i];
            if (pos[i] > hi) hi = pos[i];
        }
        if (zero_var) {
            /* a condition only on variables the offset does not use decides
               whether the site runs at all: it must hold at the witness */
            if (cnt == 0 && witness && holds_at(v, &cs[k], witness)) continue;
            return 0;
        }
        if (cnt == 0) continue; /* constants only: tighten() checked it */
        if (hi - lo + 1 != cnt) return 0; /* not a run */
        /* proportional to the offset's coefficients: b = beta * a */
        uint32_t f0 = order[lo];
        for (uint32_t p = lo; p <= hi; p++) {
            uint32_t vi = order[p];
            if (b[vi] * a[f0] != b[f0] * a[vi]) return 0;
        }
        if (nr == 64) return 0;
        /* beta * R + c <= 0 with R the run's sum (in offset units), beta = b[f0]/a[f0] */
        i128 bf = b[f0], af = a[f0], c = cs[k].e.c;
        run_t rn = {lo, hi, -AX_INF, AX_INF, false};
        switch (cs[k].rel) {
        case SG_ACCESS_LT:
        case SG_ACCESS_LE: {
            i128 cc = cs[k].rel == SG_ACCESS_LT ? c + 1 : c;
            if (bf > 0)
                rn.hi = floor_div(-cc * af, bf);
            else
                rn.lo = ceil_div(-cc * af, bf);
            break;
        }
        case SG_ACCESS_EQ:
            if ((-c * af) % bf) {
                out->n = 0;
                return 2;
            }
            rn.lo = rn.hi = -c * af / bf;
            break;
        case SG_ACCESS_NE:
            if ((-c * af) % bf) continue; /* never equal */
            rn.lo = rn.hi = -c * af / bf;
            rn.ne = true;
            break;
        default: return 0;
        }
        runs[nr++] = rn;
    }
    /* runs must nest or be apart */
    for (uint32_t p = 0; p < nr; p++)
        for (uint32_t q = 0; q < nr; q++) {
            const run_t *x = &runs[p], *y = &runs[q];
            bool apart = x->last < y->first || y->last < x->first;
            bool nested = (x->first <= y->first && y->last <= x->last) ||
                          (y->first <= x->first && x->last <= y->last);
            if (!apart && !nested) return 0;
        }
    if (no == 0) {
        *out = (ap_t){0, 1, 1};
        return 2;
    }
    apctx_t ax = {v, order, a, runs, nr};
    ap_t r;
    if (ap_eval(&ax, 0, no - 1, &r)) {
        if (r.n >= AX_INF) return 0;
        *out = r;
        return 2;
    }
    /* the top-level parts are independent: the hull is the sum of theirs,
       unless a condition spans all of them */
    for (uint32_t q = 0; q < nr; q++)
        if (runs[q].first == 0 && runs[q].last == no - 1) return 0;
    ival_t h = {off->c, off->c};
    for (uint32_t k = 0; k < no;) {
        uint32_t end = k;
        for (uint32_t q = 0; q < nr; q++)
            if (runs[q].first == k && runs[q].last > end) end = runs[q].last;
        ap_t part;
        if (!ap_eval(&ax, k, end, &part) || part.n >= AX_INF) return 0;
        if (part.n == 0) {
            out->n = 0;
            return 2;
        }
        h.lo += part.b;
        h.hi += part.b + part.g * (part.n - 1);
        k = end + 1;
    }
    *hull = h;
    return 1;
}

/* ---- one site -------------------------------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void set_unknown(sg_access_range_t *r, uint8_t reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_unknown(sg_access_range_t *r, uint8_t reason, const char *fmt, ...)
{
    r->status = SG_ACCESS_ST_UNKNOWN;
    r->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

static bool fits(ival_t r, uint8_t rel)
{
    i128 lo = rel == SG_ACCESS_FITS_S32 ? -((i128)1 << 31) : 0;
    i128 hi = rel == SG_ACCESS_FITS_U32 ? ((i128)1 << 32) - 1
              : rel == SG_ACCESS_FITS_S32 ? ((i128)1 << 31) - 1
                                          : ((i128)1 << 63) - 1;
    return r.lo >= lo && r.hi <= hi;
}

static const sg_buffer_t *find_buffer(const sg_buffer_t *bufs, uint32_t n, uint64_t addr, uint32_t *idx)
{
    const sg_buffer_t *best = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const sg_buffer_t *b = &bufs[i];
        if (addr >= b->address && addr - b->address < b->size && (!best || b->size < best->size)) {
            best = b;
            *idx = i;
        }
    }
    return best;
}

static void eval_known(env_t *env, uint32_t si, const sg_access_site_t *s, const sg_buffer_t *bufs,
                       uint32_t nbufs, sg_access_range_t *r);

static void eval_site(env_t *env, uint32_t si, const sg_buffer_t *bufs, uint32_t nbufs,
                      sg_access_range_t *r)
{
    const sg_access_site_t *s = &env->k->sites[si];
    if (s->reason == SG_ACCESS_OK) {
        eval_known(env, si, s, bufs, nbufs, r);
        return;
    }
    /* The offset is unknown, but its conditions may still never hold in
     * this launch (a tail loop no block reaches): evaluate them alone. */
    if (s->n_conds) {
        sg_access_site_t probe = *s;
        probe.reason = SG_ACCESS_OK;
        probe.exact = false;
        probe.n_checks = 0;
        ax_zero(&probe.offset);
        eval_known(env, si, &probe, bufs, nbufs, r);
        if (r->status == SG_ACCESS_ST_NEVER) return;
    }
    memset(r, 0, sizeof(*r));
    r->site = si;
    r->kind = s->kind;
    r->buffer = SG_NONE;
    set_unknown(r, s->reason, "%s", s->detail);
    /* its pointer may be known: say which buffer */
    i128 b;
    if (s->base_kind == SG_ACCESS_BASE_PARAM &&
        read_param(env, sg_access_param_atom(s->base_param, 8, false), &b)) {
        r->base = (uint64_t)b;
        find_buffer(bufs, nbufs, r->base, &r->buffer);
    }
}

static void eval_known(env_t *env, uint32_t si, const sg_access_site_t *s, const sg_buffer_t *bufs,
                       uint32_t nbufs, sg_access_range_t *r)
{
    const sg_access_kernel_t *k = env->k;
    const sg_kernel_t *node = env->node;
    memset(r, 0, sizeof(*r));
    r->site = si;
    r->kind = s->kind;
    r->buffer = SG_NONE;
    if (s->base_kind == SG_ACCESS_BASE_PARAM) {
        i128 b;
        if (!read_param(env, sg_access_param_atom(s->base_param, 8, false), &b)) {
            set_unknown(r, SG_ACCESS_R_PARAMS, "pointer at parameter byte %u is past the parameters",
                        s->base_param);
            return;
        }
        r->base = (uint64_t)b;
    } else if (s->base_kind != SG_ACCESS_BASE_SYMBOL) {
        set_unknown(r, SG_ACCESS_R_NO_BASE, "%s", "no base");
        return;
    }
    /* concrete offset, conditions and checks */
    sg_access_expr_t off;
    env->why[0] = '\0';
    if (!concretize(env, &s->offset, &off)) {
        set_unknown(r, SG_ACCESS_R_UNBOUNDED, "%s", env->why[0] ? env->why : "a derived value is unknown");
        return;
    }
    ccond_t cs[64], ck[64], fck[128];
    uint32_t nc = 0, nk = 0, nfk = 0;
    if (s->n_conds > 64 || s->n_checks > 64) {
        set_unknown(r, SG_ACCESS_R_TOO_COMPLEX, "%s", "too many conditions");
        return;
    }
    bool exact = s->exact;
    for (uint32_t i = 0; i < s->n_conds; i++) {
        const sg_access_cond_t *c = &k->conds[s->first_cond + i];
        ccond_t *x = &cs[nc];
        bool ok = concretize(env, &c->e, &x->e) && c->first_check + (uint64_t)c->n_checks <= k->n_conds &&
                  nfk + c->n_checks <= 128;
        x->rel = c->rel;
        x->tag = c->from_iter;
        x->ck = nfk;
        x->nck = 0;
        for (uint32_t j = 0; ok && j < c->n_checks; j++) {
            const sg_access_cond_t *q = &k->conds[c->first_check + j];
            ok = concretize(env, &q->e, &fck[nfk + j].e);
            fck[nfk + j].rel = q->rel;
            fck[nfk + j].tag = q->from_iter;
            x->nck++;
        }
        if (!ok) {
            exact = false; /* a condition we cannot evaluate: left out (weaker) */
            continue;
        }
        nfk += x->nck;
        nc++;
    }
    for (uint32_t i = 0; i < s->n_checks; i++) {
        const sg_access_cond_t *c = &k->conds[s->first_check + i];
        if (!concretize(env, &c->e, &ck[nk].e)) {
            set_unknown(r, SG_ACCESS_R_UNBOUNDED, "%s", "a check cannot be evaluated");
            return;
        }
        ck[nk].rel = c->rel;
        ck[nk].tag = c->from_iter;
        nk++;
    }
    /* variables and their boxes */
    vars_t v0;
    memset(&v0, 0, sizeof v0);
    collect_vars(&v0, &off);
    for (uint32_t i = 0; i < nc; i++) collect_vars(&v0, &cs[i].e);
    for (uint32_t i = 0; i < nk; i++) collect_vars(&v0, &ck[i].e);
    for (uint32_t i = 0; i < nfk; i++) collect_vars(&v0, &fck[i].e);
    if (v0.overflow) {
        set_unknown(r, SG_ACCESS_R_TOO_COMPLEX, "%s", "too many variables");
        return;
    }
    bool opaque = false;
    for (uint32_t i = 0; i < v0.n; i++) {
        sg_access_atom_t a = v0.atom[i];
        uint32_t arg = SG_ACCESS_ATOM_ARG(a);
        ival_t *b = &v0.box[i];
        switch (SG_ACCESS_ATOM_KIND(a)) {
        case SG_ACCESS_ATOM_SREG:
            b->lo = 0;
            b->hi = arg <= SG_ACCESS_TID_Z ? (i128)node->block[arg] - 1
                                           : (i128)node->grid[arg - SG_ACCESS_CTAID_X] - 1;
            break;
        case SG_ACCESS_ATOM_LOOP: {
            i128 t;
            b->lo = 0;
            b->hi = AX_INF;
            if (arg < k->n_loops && k->loops[arg].trip_uniform && eval_trip(env, arg, &t)) b->hi = t - 1;
            break;
        }
        case SG_ACCESS_ATOM_OPAQUE:
            opaque = true;
            if (arg < k->n_opaques) {
                b->lo = k->opaques[arg].lo;
                b->hi = k->opaques[arg].hi;
            }
            break;
        default: break;
        }
        if (b->lo > b->hi) { /* an empty grid or loop */
            r->status = SG_ACCESS_ST_NEVER;
            return;
        }
    }
    if (opaque) exact = false;
    /* cases: loops whose conditions hold only from their second iteration */
    uint16_t tloops[3];
    uint32_t nt = 0;
    for (uint32_t i = 0; i < nc; i++) {
        if (!cs[i].tag) continue;
        bool have = false;
        for (uint32_t j = 0; j < nt; j++) have |= tloops[j] == cs[i].tag;
        if (have) continue;
        if (nt == 3) {
            set_unknown(r, SG_ACCESS_R_TOO_COMPLEX, "%s", "too many loop cases");
            return;
        }
        tloops[nt++] = cs[i].tag;
    }
    if (nt) exact = false;
    bool any = false, has_witness = false;
    i128 witness[MAX_VARS];
    ival_t hull = {AX_INF, -AX_INF}, cta = {AX_INF, -AX_INF}, thr = {AX_INF, -AX_INF};
    for (uint32_t mask = 0; mask < (1u << nt); mask++) {
        vars_t v = v0;
        ccond_t use[65];
        uint32_t nu = 0;
        bool skip = false;
        for (uint32_t j = 0; j < nt; j++) {
            uint32_t L = tloops[j] - 1u;
            uint32_t vi = var_index(&v, SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, L));
            if (vi == SG_NONE) continue;
            if (mask & (1u << j)) {
                if (v.box[vi].lo < 1) v.box[vi].lo = 1;
            } else {
                v.box[vi].hi = 0;
            }
            if (v.box[vi].lo > v.box[vi].hi) skip = true;
        }
        if (skip) continue;
        ccond_t cand[64];
        uint32_t ncand = 0;
        for (uint32_t i = 0; i < nc; i++) {
            bool keep = true;
            for (uint32_t j = 0; j < nt; j++)
                if (cs[i].tag == tloops[j] && !(mask & (1u << j))) keep = false;
            if (keep) cand[ncand++] = cs[i];
        }
        /* use a fact only once its own checks hold on what the facts already
           in use allow (a loop's step checks: one iteration ahead, under the
           loop's bound) */
        bool in_use[64] = {false};
        bool progress = true, empty = false;
        while (progress && !empty) {
            progress = false;
            vars_t vb = v;
            if (!tighten(&vb, use, nu)) {
                empty = true;
                break;
            }
            for (uint32_t i = 0; i < ncand; i++) {
                if (in_use[i]) continue;
                bool ok = true;
                for (uint32_t j = 0; j < cand[i].nck && ok; j++) {
                    const ccond_t *q = &fck[cand[i].ck + j];
                    if (!q->tag) {
                        ok = fits_under(&vb, use, nu, &q->e, q->rel);
                        continue;
                    }
                    vars_t vs = v;
                    use[nu] = cand[i];
                    if (!tighten(&vs, use, nu + 1)) continue; /* never runs: vacuous */
                    sg_access_expr_t next, kp1;
                    sg_access_atom_t K = SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, q->tag - 1u);
                    ax_atom(&kp1, K, 1);
                    kp1.c = 1;
                    ok = ax_subst(&q->e, K, &kp1, &next) && fits_under(&vs, use, nu + 1, &next, q->rel);
                }
                if (ok) {
                    in_use[i] = true;
                    use[nu++] = cand[i];
                    progress = true;
                }
            }
        }
        if (empty || !tighten(&v, use, nu)) continue;
        if (nu < ncand) exact = false; /* a fact left out: the set may be smaller */
        for (uint32_t i = 0; i < nk; i++)
            if (!fits_under(&v, use, nu, &ck[i].e, ck[i].rel)) {
                char e[64];
                ax_format(&ck[i].e, e, sizeof e);
                set_unknown(r, SG_ACCESS_R_WRAP, "32-bit arithmetic may wrap: %s", e);
                return;
            }
        ival_t o = ax_range(&off, box_of, &v), fo;
        int fs = fm_bound(&v, use, nu, &off, &fo);
        if (fs == -1) continue; /* the conditions cannot all hold */
        if (fs == 1) {
            if (fo.lo > o.lo) o.lo = fo.lo;
            if (fo.hi < o.hi) o.hi = fo.hi;
            if (o.lo > o.hi) continue; /* two sound bounds that do not meet: nothing runs */
        }
        if (!iv_bounded(o)) {
            set_unknown(r, SG_ACCESS_R_UNBOUNDED, "%s",
                        env->why[0] ? env->why : "no bound on a loop count or index");
            return;
        }
        if (!any && v.n == v0.n) { /* the tightened box's low corner: a candidate witness */
            has_witness = true;
            for (uint32_t i = 0; i < v.n; i++) {
                witness[i] = v.box[i].lo;
                if (v.box[i].lo <= -AX_INF) has_witness = false;
            }
        }
        any = true;
        if (o.lo < hull.lo) hull.lo = o.lo;
        if (o.hi > hull.hi) hull.hi = o.hi;
        /* CTA (0,0,0) and its thread (0,0,0) */
        vars_t vc = v;
        for (uint32_t i = 0; i < vc.n; i++) {
            sg_access_atom_t a = vc.atom[i];
            uint32_t arg = SG_ACCESS_ATOM_ARG(a);
            bool cta_id = SG_ACCESS_ATOM_KIND(a) == SG_ACCESS_ATOM_SREG && arg >= SG_ACCESS_CTAID_X;
            if (cta_id) vc.box[i].lo = vc.box[i].hi = 0;
        }
        vars_t vt = vc;
        if (tighten(&vc, use, nu)) {
            ival_t x = ax_range(&off, box_of, &vc);
            if (x.lo < cta.lo) cta.lo = x.lo;
            if (x.hi > cta.hi) cta.hi = x.hi;
        }
        for (uint32_t i = 0; i < vt.n; i++)
            if (SG_ACCESS_ATOM_KIND(vt.atom[i]) == SG_ACCESS_ATOM_SREG) vt.box[i].lo = vt.box[i].hi = 0;
        if (tighten(&vt, use, nu)) {
            ival_t x = ax_range(&off, box_of, &vt);
            if (x.lo < thr.lo) thr.lo = x.lo;
            if (x.hi > thr.hi) thr.hi = x.hi;
        }
    }
    if (!any) {
        r->status = SG_ACCESS_ST_NEVER;
        return;
    }
    uint32_t w = s->width ? s->width : 1;
    /* exact set */
    ap_t ap;
    ival_t eh;
    int es = exact ? exact_set(&v0, &off, cs, nc, has_witness ? witness : NULL, &ap, &eh) : 0;
    if (es == 1) {
        r->exact = true;
        hull = eh;
    }
    if (es == 2) {
        if (ap.n == 0) {
            r->status = SG_ACCESS_ST_NEVER;
            return;
        }
        r->exact = true;
        r->dense = ap.n == 1 || ap.g <= (i128)w;
        hull.lo = ap.b + off.c;
        hull.hi = ap.b + off.c + ap.g * (ap.n - 1);
        /* the same for CTA (0,0,0) and its thread (0,0,0) */
        for (int which = 0; which < 2; which++) {
            vars_t vf = v0;
            for (uint32_t i = 0; i < vf.n; i++) {
                uint32_t arg = SG_ACCESS_ATOM_ARG(vf.atom[i]);
                if (SG_ACCESS_ATOM_KIND(vf.atom[i]) == SG_ACCESS_ATOM_SREG &&
                    (which == 1 || arg >= SG_ACCESS_CTAID_X))
                    vf.box[i].lo = vf.box[i].hi = 0;
            }
            ap_t fp;
            ival_t *dst = which ? &thr : &cta, fh;
            int fs = exact_set(&vf, &off, cs, nc, NULL, &fp, &fh);
            if (fs == 1) *dst = fh;
            if (fs == 2) {
                if (fp.n == 0) {
                    dst->lo = AX_INF;
                    dst->hi = -AX_INF;
                } else {
                    dst->lo = fp.b + off.c;
                    dst->hi = fp.b + off.c + fp.g * (fp.n - 1);
                }
            }
        }
    }
    r->status = SG_ACCESS_ST_KNOWN;
    r->lo = r->base + (uint64_t)(int64_t)hull.lo;
    r->hi = r->base + (uint64_t)(int64_t)hull.hi + w;
    if (cta.lo <= cta.hi) {
        r->cta_lo = r->base + (uint64_t)(int64_t)cta.lo;
        r->cta_hi = r->base + (uint64_t)(int64_t)cta.hi + w;
    }
    if (thr.lo <= thr.hi) {
        r->thread_lo = r->base + (uint64_t)(int64_t)thr.lo;
        r->thread_hi = r->base + (uint64_t)(int64_t)thr.hi + w;
    }
    /* the affine form in the thread and CTA ids, and what else there is */
    r->affine_ids = true;
    r->c0 = off.c;
    uint32_t rest_terms = 0;
    for (uint32_t i = 0; i < off.n; i++) {
        const sg_access_term_t *t = &off.t[i];
        uint32_t arg = SG_ACCESS_ATOM_ARG(t->atoms[0]);
        uint32_t kind = SG_ACCESS_ATOM_KIND(t->atoms[0]);
        if (!t->atoms[1] && (kind == SG_ACCESS_ATOM_LOOP || kind == SG_ACCESS_ATOM_OPAQUE)) {
            r->rest_gcd = gcd64(r->rest_gcd, t->coef);
            if (kind == SG_ACCESS_ATOM_LOOP && !rest_terms++) {
                r->loop = arg;
                r->loop_coef = t->coef;
            } else {
                r->loop_coef = 0; /* more than one: no single loop */
            }
            continue;
        }
        if (t->atoms[1] || kind != SG_ACCESS_ATOM_SREG) {
            r->affine_ids = false;
            continue;
        }
        r->coef[arg <= SG_ACCESS_TID_Z ? arg : 3 + (arg - SG_ACCESS_CTAID_X)] = t->coef;
    }
    if (!r->affine_ids) {
        memset(r->coef, 0, sizeof r->coef);
        r->c0 = 0;
        r->rest_gcd = 0;
        r->loop_coef = 0;
    }
    r->linear = r->affine_ids && !r->rest_gcd;
    /* the buffer */
    if (s->base_kind == SG_ACCESS_BASE_PARAM) {
        uint32_t bi = SG_NONE;
        const sg_buffer_t *b = find_buffer(bufs, nbufs, r->base, &bi);
        if (!b && r->lo != r->base) b = find_buffer(bufs, nbufs, r->lo, &bi);
        if (b) {
            r->buffer = bi;
            uint64_t end = b->address + b->size;
            if (r->lo < b->address || r->hi > end) {
                if (!r->exact && (r->lo >= end || r->hi <= b->address)) {
                    /* a bound wholly outside the buffer its base points into
                     * says nothing of where the access goes (clipping it to
                     * the buffer would invert it) */
                    set_unknown(r, SG_ACCESS_R_NO_BASE,
                                "its bound [%#" PRIx64 ", %#" PRIx64 ") lies outside buffer %s", r->lo,
                                r->hi, b->label ? b->label : "?");
                } else if (!r->exact) {
                    r->clipped = true;
                    if (r->lo < b->address) r->lo = b->address;
                    if (r->hi > end) r->hi = end;
                    r->dense = false;
                } else {
                    snprintf(r->detail, sizeof r->detail, "reaches beyond buffer %s", b->label ? b->label : "?");
                }
            }
        }
    } else {
        snprintf(r->detail, sizeof r->detail, "module variable %s", s->base_symbol);
    }
}

int sg_access_eval(const sg_access_kernel_t *k, const sg_kernel_t *node, const sg_buffer_t *buffers,
                   uint32_t n_buffers, sg_access_eval_t *out)
{
    if (!out) return SG_EINVAL;
    memset(out, 0, sizeof(*out));
    if (!k || !node || (n_buffers && !buffers)) return SG_EINVAL;
    out->ranges = calloc(k->n_sites ? k->n_sites : 1, sizeof(*out->ranges));
    env_t env;
    memset(&env, 0, sizeof env);
    env.k = k;
    env.node = node;
    env.u_state = calloc(k->n_uexprs + 1, 1);
    env.u_val = calloc(k->n_uexprs + 1, sizeof(i128));
    env.t_state = calloc(k->n_loops + 1, 1);
    env.t_val = calloc(k->n_loops + 1, sizeof(i128));
    if (!out->ranges || !env.u_state || !env.u_val || !env.t_state || !env.t_val) {
        free(out->ranges);
        out->ranges = NULL;
        free(env.u_state);
        free(env.u_val);
        free(env.t_state);
        free(env.t_val);
        return SG_ENOMEM;
    }
    out->n_ranges = k->n_sites;
    /* the captured layout must be the code's */
    bool layout_ok = node->params_size >= k->params_size;
    if (node->n_params && node->param_offsets && node->param_sizes) {
        layout_ok &= node->n_params == k->n_params;
        for (uint32_t i = 0; layout_ok && i < k->n_params; i++)
            layout_ok = node->param_offsets[i] == k->param_offsets[i] &&
                        node->param_sizes[i] == k->param_sizes[i];
    }
    bool geometry_ok = true;
    for (int d = 0; d < 3; d++) geometry_ok &= node->grid[d] > 0 && node->block[d] > 0;
    for (uint32_t i = 0; i < k->n_sites; i++) {
        sg_access_range_t *r = &out->ranges[i];
        if (!layout_ok) {
            memset(r, 0, sizeof(*r));
            r->site = i;
            r->kind = k->sites[i].kind;
            r->buffer = SG_NONE;
            set_unknown(r, SG_ACCESS_R_PARAMS, "%s", "the captured parameter layout is not the code's");
        } else if (!geometry_ok) {
            memset(r, 0, sizeof(*r));
            r->site = i;
            r->kind = k->sites[i].kind;
            r->buffer = SG_NONE;
            r->status = SG_ACCESS_ST_NEVER;
        } else {
            eval_site(&env, i, buffers, n_buffers, r);
        }
        if (!r->loop_coef) r->loop = SG_NONE; /* no loop term (the ranges start zeroed) */
        if (r->status == SG_ACCESS_ST_UNKNOWN) {
            if (!out->n_unknown)
                snprintf(out->reason, sizeof out->reason, "line %u: %s: %.90s", k->sites[i].line,
                         sg_access_reason_name((sg_access_reason_t)r->reason), r->detail);
            out->n_unknown++;
        }
    }
    out->all_known = out->n_unknown == 0 && k->status == 0 && k->reason == SG_ACCESS_OK;
    if (!out->all_known && !out->n_unknown)
        snprintf(out->reason, sizeof out->reason, "%s: %.120s",
                 sg_access_reason_name((sg_access_reason_t)k->reason), k->detail);
    free(env.u_state);
    free(env.u_val);
    free(env.t_state);
    free(env.t_val);
    return SG_OK;
}

void sg_access_eval_free(sg_access_eval_t *e)
{
    if (!e) return;
    free(e->ranges);
    memset(e, 0, sizeof(*e));
}
