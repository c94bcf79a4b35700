/* sass_flow.c: the SASS access analysis (sass.h): a forward dataflow over
 * one kernel's basic blocks that follows every register as a polynomial of
 * degree <= 2 in the special registers and parameter words, and records,
 * per global memory instruction, where its address comes from.
 *
 * Values (val_t) are 32-bit registers: VAL (a 32-bit value p), LO / HI (the
 * low / high word of the 64-bit value p), or TOP (not known; its flags say
 * why, its provenance which parameter words flowed into it). A 64-bit pair
 * (Rn, Rn+1) is p when Rn is VAL/LO p and Rn+1 is HI p: the low word of a
 * carry chain carries the whole 64-bit meaning, the high word only has to
 * come from the matching carry (predicate CARRY p), a 64-bit shift, a sign
 * extension or a zero. Polynomials are mathematical integers: a 32-bit
 * index is assumed not to wrap (flagged index_32bit).
 *
 * Predicated writes keep the value from before beside the new one, so that
 * instructions under the same guard see the new value and others see both
 * (joined); a later comparison of such a select with the bound its guard
 * compared resolves it (select_compare; docs/SASS.md, "Selects"). Comparisons (ISETP) are kept in predicates; a predicated EXIT
 * or branch, or a guard on the access itself, turns them into facts such
 * as "ctaid.x*ntid.x + tid.x < P[0x18]" that give the bounds check.
 *
 * Joins keep a value only when it is the same on every path; a loop thus
 * makes its induction variables TOP ("differs across paths"), which keeps
 * the fixpoint short. Code the entry does not reach (callees, targets of
 * indirect branches) is analysed from an all-unknown state, so none of its
 * accesses is missed.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/sass_internal.h"
#include "graph/graph.h"

/* ---- values ------------------------------------------------------------------ */

/* Provenance keeps only the words that flow in additively (pointer
 * candidates): a word once multiplied or shifted never becomes one again,
 * so keeping it would only crowd the candidates out. */
static void prov_add(val_t *v, uint16_t atom, uint8_t base)
{
    if (!base)
        return;
    for (uint8_t i = 0; i < v->nprov; i++)
        if (v->prov[i].atom == atom) {
            v->prov[i].base |= base;
            return;
        }
    if (v->nprov >= NPROV) {
        v->flags |= F_MANY;
        return;
    }
    v->prov[v->nprov].atom = atom;
    v->prov[v->nprov].base = base;
    v->nprov++;
}

void sg_val_merge_prov(val_t *d, const val_t *s, bool keep_base)
{
    d->flags |= s->flags;
    if (!d->origin)
        d->origin = s->origin;
    for (uint8_t i = 0; i < s->nprov; i++)
        prov_add(d, s->prov[i].atom, keep_base ? s->prov[i].base : 0);
}

static void prov_unbase(val_t *v)
{
    v->nprov = 0;
}

val_t sg_val_top(uint16_t flags)
{
    val_t v;
    memset(&v, 0, sizeof v);
    v.flags = flags;
    return v;
}

val_t sg_val_make(uint8_t kind, const sg_poly_t *p)
{
    val_t v;
    memset(&v, 0, sizeof v);
    v.kind = kind;
    v.p = *p;
    return v;
}

val_t sg_val_const(int64_t c)
{
    sg_poly_t p;
    sg_poly_const(&p, c);
    return sg_val_make(V_VAL, &p);
}

bool sg_val_eq(const val_t *x, const val_t *y)
{
    if (x->kind != y->kind || x->flags != y->flags || x->nprov != y->nprov)
        return false;
    for (uint8_t i = 0; i < x->nprov; i++)
        if (x->prov[i].atom != y->prov[i].atom || x->prov[i].base != y->prov[i].base)
            return false;
    return x->kind == V_TOP || sg_poly_eq(&x->p, &y->p);
}

static bool val_none(const val_t *v)
{
    return v->kind == V_TOP && v->flags == F_NONE;
}

val_t sg_val_join(const val_t *x, const val_t *y)
{
    if (val_none(x))
        return *y;
    if (val_none(y))
        return *x;
    if (x->kind != V_TOP && x->kind == y->kind && sg_poly_eq(&x->p, &y->p)) {
        val_t r = *x;
        sg_val_merge_prov(&r, y, true);
        return r;
    }
    val_t r = sg_val_top(F_JOIN);
    sg_val_merge_prov(&r, x, true);
    sg_val_merge_prov(&r, y, true);
    return r;
}

/* ---- state ------------------------------------------------------------------- */

/* ---- the analysis context ------------------------------------------------------- */

static void escape(ctx_t *x, const char *why, uint32_t pc)
{
    if (!x->escaped)
        snprintf(x->escape_reason, sizeof x->escape_reason, "%s at 0x%x", why, pc - x->pc0);
    x->escaped = true;
}

static int slot_of(const ctx_t *x, const sg_sass_operand_t *o, uint32_t plus)
{
    uint32_t r = (uint32_t)o->reg + plus;
    if (o->uniform) {
        if (o->reg == 63 || r >= x->nu)
            return -1;
        return (int)(x->nr + r);
    }
    if (o->reg == 255 || r >= x->nr)
        return -1;
    return (int)r;
}

bool sg_op_zero_reg(const sg_sass_operand_t *o)
{
    return o->kind == SG_SASS_OP_REG && ((o->uniform && o->reg == 63) || (!o->uniform && o->reg == 255));
}

static int pred_index(const sg_sass_operand_t *o)
{
    return (o->uniform ? 8 : 0) + o->reg;
}

/* Does guard (id, ver) hold wherever g does (g itself, or one it implies)? */
static bool guard_implies(const guard_t *g, int16_t id, uint32_t ver)
{
    if (!g || g->id < 0)
        return false;
    if (g->id == id && g->ver == ver)
        return true;
    for (uint8_t i = 0; i < g->nimp; i++)
        if (g->imp[i].id == id && g->imp[i].ver == ver)
            return true;
    return false;
}

val_t sg_flow_slot_read(const slot_t *s, const guard_t *g)
{
    if (s->g < 0 || guard_implies(g, s->g, s->gver))
        return s->v;
    if (guard_implies(g, (int16_t)(s->g ^ 1), s->gver))
        return s->alt; /* the guard it was written under is false here */
    return sg_val_join(&s->v, &s->alt);
}

static void slot_write(ctx_t *x, state_t *st, int si, const val_t *v, const guard_t *g)
{
    if (si < 0)
        return;
    slot_t *s = &st->slots[si];
    if (!g || g->id < 0) {
        s->v = *v;
        s->g = -1;
        s->sver = ++x->verc;
        s->altver = 0;
        return;
    }
    if (!(s->g == g->id && s->gver == g->ver)) {
        /* a select: the value from before is kept for when g is false */
        s->alt = sg_flow_slot_read(s, NULL);
        s->altver = s->sver;
    }
    s->v = *v;
    s->g = g->id;
    s->gver = g->ver;
    s->sver = ++x->verc;
}

/* The slot holds g ? b : a (a SEL, or a MOV then a predicated write). */
static void slot_select(ctx_t *x, state_t *st, int si, const gref_t *g, const val_t *b,
                        const val_t *a, uint32_t aver)
{
    if (si < 0)
        return;
    slot_t *s = &st->slots[si];
    s->v = *b;
    s->alt = *a;
    s->g = g->id;
    s->gver = g->ver;
    s->altver = aver;
    s->sver = ++x->verc;
}

/* Predicate pi forgotten (written by something not modelled). */
static void pred_forget(ctx_t *x, state_t *st, int pi)
{
    memset(&st->preds[pi], 0, sizeof st->preds[pi]);
    st->preds[pi].ver = ++x->verc;
}

static void pred_write(ctx_t *x, state_t *st, int pi, const pred_t *p, const guard_t *g)
{
    if (pi < 0 || pi == 7 || pi == 15)
        return;
    pred_t np = *p;
    /* a conditional write: valid only for instructions under the same guard */
    np.g = g && g->id >= 0 ? (int16_t)(g->id + 1) : 0;
    np.gver = g && g->id >= 0 ? g->ver : 0;
    np.ver = ++x->verc;
    st->preds[pi] = np;
}

/* ---- reading operands ---------------------------------------------------------- */

/* The value of a constant-bank word. */
static val_t cbank_val(const ctx_t *x, const sg_sass_operand_t *o, uint32_t plus, bool want64)
{
    if (o->reg2 == 4 && want64 && o->reg == 0xffff && o->imm >= 0)
        /* a module symbol's address, which the cubin's relocation names */
        for (uint32_t i = 0; i < x->n_c4 && i <= (A_SYM_MAX & 0xff); i++)
            if ((int64_t)x->c4_offsets[i] == o->imm + plus) {
                sg_poly_t p;
                sg_poly_atom(&p, (uint16_t)(A_SYM | i));
                return sg_val_make(V_VAL, &p);
            }
    if (o->reg2 != 0)
        return sg_val_top(F_CBANK | F_ADDPTR);
    if (o->reg != 0xffff)
        return sg_val_top(F_UNK); /* indexed by a register */
    int64_t off = o->imm + plus;
    if (off < 0)
        return sg_val_top(0);
    uint64_t u = (uint64_t)off;
    uint64_t pend = (uint64_t)x->param_base + (x->param_size ? x->param_size : 32764u);
    if (u >= x->param_base && u < pend) {
        uint32_t po = (uint32_t)(u - x->param_base);
        if (po & 3 || (want64 && (po & 7)))
            return sg_val_top(F_UNK);
        sg_poly_t p;
        uint16_t atom = (uint16_t)((want64 ? A_P64 : A_P32) | (po >> 2));
        sg_poly_atom(&p, atom);
        val_t v = sg_val_make(V_VAL, &p);
        prov_add(&v, atom, 1);
        return v;
    }
    if (!want64 && u >= x->ntid_base && u < x->ntid_base + 0x18 && !(u & 3)) {
        uint32_t k = (uint32_t)(u - x->ntid_base) / 4;
        sg_poly_t p;
        sg_poly_atom(&p, (uint16_t)(k < 3 ? SG_SASS_NTID_X + k : SG_SASS_NCTAID_X + (k - 3)));
        return sg_val_make(V_VAL, &p);
    }
    return sg_val_top(0);
}

static val_t val32_raw(const ctx_t *x, const state_t *st, const sg_sass_operand_t *o,
                       const guard_t *g)
{
    switch (o->kind) {
    case SG_SASS_OP_REG: {
        if (sg_op_zero_reg(o))
            return sg_val_const(0);
        int si = slot_of(x, o, 0);
        if (si < 0)
            return sg_val_top(F_UNK);
        val_t v = sg_flow_slot_read(&st->slots[si], g);
        if (v.kind == V_HI) {
            val_t t = sg_val_top(F_HIGH);
            sg_val_merge_prov(&t, &v, false);
            return t;
        }
        if (v.kind == V_LO)
            v.kind = V_VAL;
        return v;
    }
    case SG_SASS_OP_IMM: {
        int64_t c = o->imm;
        if (c >= 0x80000000ll && c <= 0xffffffffll)
            c -= 0x100000000ll; /* a 32-bit immediate: two's complement */
        return sg_val_const(c);
    }
    case SG_SASS_OP_CBANK:
        return cbank_val(x, o, 0, false);
    case SG_SASS_OP_SREG:
        if (o->sreg) {
            sg_poly_t p;
            sg_poly_atom(&p, o->sreg);
            return sg_val_make(V_VAL, &p);
        }
        return sg_val_top(0);
    case SG_SASS_OP_FIMM:
        return sg_val_top(0);
    default:
        return sg_val_top(F_UNK);
    }
}

/* Apply -X / ~X / |X|. */
static val_t modify(val_t v, const sg_sass_operand_t *o)
{
    if (o->inv || o->abs) {
        val_t t = sg_val_top(F_UNK);
        sg_val_merge_prov(&t, &v, false);
        return t;
    }
    if (o->neg) {
        if (v.kind == V_TOP) {
            prov_unbase(&v);
            return v;
        }
        sg_poly_t z = {0};
        if (!sg_poly_add(&v.p, &z, &v.p, -1)) {
            val_t t = sg_val_top(F_NONLIN);
            sg_val_merge_prov(&t, &v, false);
            return t;
        }
        prov_unbase(&v);
    }
    return v;
}

/* 32-bit operand; LO reads as its (64-bit) value, HI as unknown. */
static val_t rd32(const ctx_t *x, const state_t *st, const sg_sass_operand_t *o, const guard_t *g)
{
    return modify(val32_raw(x, st, o, g), o);
}

/* The word of a register as stored (kinds kept). */
static val_t rdslot(const ctx_t *x, const state_t *st, const sg_sass_operand_t *o, uint32_t plus,
                    const guard_t *g)
{
    if (sg_op_zero_reg(o))
        return sg_val_const(0);
    int si = slot_of(x, o, plus);
    if (si < 0)
        return sg_val_top(F_UNK);
    return sg_flow_slot_read(&st->slots[si], g);
}

static void poly_widen(sg_poly_t *p, uint32_t off);

/* Combine a low and a high word into one 64-bit value (kind VAL). */
val_t sg_val_pair(const val_t *lo, const val_t *hi)
{
    if ((lo->kind == V_VAL || lo->kind == V_LO) && hi->kind == V_HI) {
        sg_poly_t lp = lo->p;
        if (!sg_poly_eq(&lp, &hi->p))
            for (uint8_t i = 0; i < hi->p.n; i++)
                if (sg_poly_term_atom(&hi->p.t[i]) & A_P64)
                    poly_widen(&lp, A_OFF(sg_poly_term_atom(&hi->p.t[i])));
        if (sg_poly_eq(&lp, &hi->p)) {
            val_t r = *hi;
            r.kind = V_VAL;
            sg_val_merge_prov(&r, lo, true);
            return r;
        }
    }
    int64_t c;
    if (lo->kind == V_VAL && hi->kind == V_VAL && sg_poly_is_const(&hi->p, &c) && c == 0) {
        /* zero-extended 32-bit value */
        val_t r = *lo;
        if (!sg_val_exact32(lo, false))
            r.flags |= F_W32;
        return r;
    }
    uint16_t la = lo->p.n == 1 ? sg_poly_term_atom(&lo->p.t[0]) : 0;
    uint16_t ha = hi->p.n == 1 ? sg_poly_term_atom(&hi->p.t[0]) : 0;
    if (lo->kind == V_VAL && hi->kind == V_VAL && lo->p.t[0].c == 1 && hi->p.t[0].c == 1 &&
        (la & A_P32) && (ha & A_P32) && ha == la + 1 && !(A_OFF(la) & 7)) {
        /* two 32-bit loads of one 64-bit parameter word */
        uint16_t atom = (uint16_t)(A_P64 | (la & 0x3fff));
        sg_poly_t p;
        sg_poly_atom(&p, atom);
        val_t r = sg_val_make(V_VAL, &p);
        prov_add(&r, atom, 1);
        return r;
    }
    val_t r = sg_val_top(lo->kind != V_TOP && hi->kind != V_TOP ? F_HIGH : 0);
    sg_val_merge_prov(&r, lo, true);
    sg_val_merge_prov(&r, hi, true);
    /* the low and high words of one pointer parameter flowed into the two halves */
    for (uint8_t i = 0; i < lo->nprov; i++) {
        uint16_t a = lo->prov[i].atom;
        if (!(a & A_P32) || !lo->prov[i].base || (A_OFF(a) & 7))
            continue;
        for (uint8_t j = 0; j < hi->nprov; j++)
            if (hi->prov[j].atom == a + 1)
                prov_add(&r, (uint16_t)(A_P64 | (a & 0x3fff)), 1);
    }
    return r;
}

/* A 64-bit operand: a register pair, a .64 constant-bank word, RZ, an immediate. */
static val_t rd64(const ctx_t *x, const state_t *st, const sg_sass_operand_t *o, const guard_t *g)
{
    val_t r;
    if (o->kind == SG_SASS_OP_REG) {
        if (sg_op_zero_reg(o))
            return sg_val_const(0);
        val_t lo = rdslot(x, st, o, 0, g), hi = rdslot(x, st, o, 1, g);
        r = sg_val_pair(&lo, &hi);
    } else if (o->kind == SG_SASS_OP_CBANK) {
        r = cbank_val(x, o, 0, true);
    } else if (o->kind == SG_SASS_OP_IMM) {
        r = sg_val_const(o->imm);
    } else {
        r = sg_val_top(F_UNK);
    }
    return modify(r, o);
}

static void wr32(ctx_t *x, state_t *st, const sg_sass_operand_t *d, val_t v, const guard_t *g)
{
    if (d->kind != SG_SASS_OP_REG)
        return;
    slot_write(x, st, slot_of(x, d, 0), &v, g);
}

static void wr64(ctx_t *x, state_t *st, const sg_sass_operand_t *d, const val_t *v,
                 const guard_t *g)
{
    if (d->kind != SG_SASS_OP_REG)
        return;
    val_t lo = *v, hi = *v;
    if (v->kind != V_TOP) {
        lo.kind = V_LO;
        hi.kind = V_HI;
    }
    slot_write(x, st, slot_of(x, d, 0), &lo, g);
    slot_write(x, st, slot_of(x, d, 1), &hi, g);
}

/* Mark n registers from d unknown. */
static void clobber(ctx_t *x, state_t *st, const sg_sass_operand_t *d, uint32_t n, uint16_t flags,
                    const val_t *prov, const guard_t *g)
{
    if (d->kind != SG_SASS_OP_REG || sg_op_zero_reg(d))
        return;
    val_t t = sg_val_top(flags);
    if (prov)
        sg_val_merge_prov(&t, prov, false);
    for (uint32_t i = 0; i < n; i++)
        slot_write(x, st, slot_of(x, d, i), &t, g);
}

static void clobber_all(ctx_t *x, state_t *st, bool uniform_too, uint16_t flags)
{
    val_t t = sg_val_top(flags);
    uint32_t n = uniform_too ? x->nslots : x->nr;
    for (uint32_t i = 0; i < n; i++) {
        st->slots[i].v = t;
        st->slots[i].g = -1;
        st->slots[i].sver = st->slots[i].altver = 0;
    }
    for (int p = 0; p < NPRED; p++)
        if (p != 7 && p != 15 && (uniform_too || p < 8))
            pred_forget(x, st, p);
}

/* ---- arithmetic --------------------------------------------------------------- */

static val_t arith_add(const val_t *a, const val_t *b)
{
    if (a->kind == V_TOP || b->kind == V_TOP) {
        val_t t = sg_val_top(0);
        sg_val_merge_prov(&t, a, true);
        sg_val_merge_prov(&t, b, true);
        return t;
    }
    val_t r = sg_val_make(V_VAL, &a->p);
    if (!sg_poly_add(&r.p, &a->p, &b->p, 1)) {
        r = sg_val_top(F_NONLIN);
        sg_val_merge_prov(&r, a, true);
        sg_val_merge_prov(&r, b, true);
        return r;
    }
    sg_val_merge_prov(&r, a, true);
    sg_val_merge_prov(&r, b, true);
    return r;
}

static val_t arith_mul(const val_t *a0, const val_t *b0)
{
    int64_t ca = 0, cb = 0;
    bool ka = a0->kind != V_TOP && sg_poly_is_const(&a0->p, &ca);
    bool kb = b0->kind != V_TOP && sg_poly_is_const(&b0->p, &cb);
    /* a factor scaled by anything but 1 is an index, not a pointer */
    val_t as = *a0, bs = *b0;
    if (!(kb && cb == 1))
        as.flags &= (uint16_t)~F_ADDPTR;
    if (!(ka && ca == 1))
        bs.flags &= (uint16_t)~F_ADDPTR;
    const val_t *a = &as, *b = &bs;
    if (a->kind == V_TOP || b->kind == V_TOP) {
        val_t t = sg_val_top(0);
        sg_val_merge_prov(&t, a, kb && cb == 1);
        sg_val_merge_prov(&t, b, ka && ca == 1);
        return t;
    }
    val_t r = sg_val_make(V_VAL, &a->p);
    if (!sg_poly_mul(&r.p, &a->p, &b->p)) {
        r = sg_val_top(F_NONLIN);
        sg_val_merge_prov(&r, a, false);
        sg_val_merge_prov(&r, b, false);
        return r;
    }
    sg_val_merge_prov(&r, a, kb && cb == 1);
    sg_val_merge_prov(&r, b, ka && ca == 1);
    return r;
}

static val_t arith_shl(const val_t *a, int64_t s)
{
    if (s < 0 || s > 62) {
        val_t t = sg_val_top(F_UNK);
        sg_val_merge_prov(&t, a, false);
        return t;
    }
    val_t k = sg_val_const((int64_t)1 << s);
    return arith_mul(a, &k);
}

/* Extension of a 32-bit value into 64 bits: flag non-constant ones. */
/* Is v exactly a 32-bit machine value that cannot have wrapped: a special
 * register, or a constant that fits (unsigned, or signed for a signed
 * extension)? Extending it loses nothing. */
bool sg_val_exact32(const val_t *v, bool is_signed)
{
    int64_t c;
    if (v->kind != V_VAL)
        return false;
    if (sg_poly_is_const(&v->p, &c))
        return is_signed ? c >= INT32_MIN && c <= INT32_MAX : c >= 0 && c <= UINT32_MAX;
    uint16_t a = v->p.n == 1 && v->p.t[0].c == 1 ? sg_poly_term_atom(&v->p.t[0]) : 0;
    /* tid, ctaid, ntid, nctaid are below 2^31 */
    return a >= SG_SASS_TID_X && a <= SG_SASS_NCTAID_Z;
}

/* Is v a 32-bit value that may have wrapped (not a pointer's word, not
 * exact)? Carried into a high word it is zero-extended: flag it. */
static bool narrow32(const val_t *v)
{
    if (v->kind != V_VAL || sg_val_exact32(v, false))
        return false;
    uint16_t at = v->p.n == 1 && v->p.t[0].c == 1 ? sg_poly_term_atom(&v->p.t[0]) : 0;
    return !(at & A_PARAM) && !(at >= A_SYM && at <= A_SYM_MAX);
}

static val_t ext32(val_t v)
{
    int64_t c;
    if (v.kind != V_TOP && !sg_poly_is_const(&v.p, &c))
        v.flags |= F_W32;
    if (v.kind != V_TOP)
        v.kind = V_VAL;
    return v;
}

static val_t with_prov(uint16_t flags, const val_t *a, const val_t *b, const val_t *c)
{
    val_t t = sg_val_top(flags);
    if (a)
        sg_val_merge_prov(&t, a, false);
    if (b)
        sg_val_merge_prov(&t, b, false);
    if (c)
        sg_val_merge_prov(&t, c, false);
    return t;
}

/* ---- predicates and facts ------------------------------------------------------ */

static uint8_t cmp_of(const char *op, bool *ok)
{
    static const char *n[] = {"LT", "LE", "GT", "GE", "EQ", "NE"};
    for (uint8_t i = 0; i < 6; i++)
        if (sg_op_has(op, n[i])) {
            *ok = true;
            return i;
        }
    *ok = false;
    return 0;
}

uint8_t sg_cmp_not(uint8_t c)
{
    static const uint8_t t[] = {C_GE, C_GT, C_LE, C_LT, C_NE, C_EQ};
    return t[c];
}

bool sg_cmp_eq(const cmp_t *a, const cmp_t *b)
{
    return a->cmp == b->cmp && a->uns == b->uns && a->wide == b->wide && sg_poly_eq(&a->l, &b->l) &&
           sg_poly_eq(&a->r, &b->r);
}

static bool fact_opaque(const cmp_t *c)
{
    return sg_poly_has_atom_in(&c->l, A_OPQ, A_OPQ_MAX);
}

/* false when a fact had to be dropped (the list is full: a comparison
 * takes the place of a predicate's opaque outcome, if there is one) */
bool sg_flow_add_fact(state_t *st, const cmp_t *c)
{
    for (uint8_t i = 0; i < st->nfacts; i++)
        if (sg_cmp_eq(&st->facts[i], c))
            return true;
    if (st->nfacts >= MAXFACT) {
        if (!fact_opaque(c))
            for (uint8_t i = 0; i < st->nfacts; i++)
                if (fact_opaque(&st->facts[i])) {
                    st->facts[i] = *c;
                    break;
                }
        return false;
    }
    st->facts[st->nfacts++] = *c;
    return true;
}

/* Predicate pi as seen by an instruction under guard g. */
static const pred_t *pred_get(const state_t *st, int pi, const guard_t *g)
{
    static const pred_t unknown = {.kind = P_TOP};
    const pred_t *p = &st->preds[pi];
    if (p->g && !(g && g->id + 1 == p->g && g->ver == p->gver))
        return &unknown;
    return p;
}

/* The fact that predicate id (pred*2+neg) holds, if it is a comparison. */
bool sg_flow_pred_fact(const state_t *st, int id, cmp_t *out)
{
    if (id < 0 || (id >> 1) >= NPRED)
        return false;
    const pred_t *p = pred_get(st, id >> 1, NULL);
    if (p->kind != P_CMP || (p->half && p->half != 1 + (id & 1)))
        return false;
    *out = p->c;
    if (id & 1)
        out->cmp = sg_cmp_not(out->cmp);
    return true;
}

/* ---- memory instructions ------------------------------------------------------- */

typedef struct {
    uint8_t kind; /* 0: not a global access */
    bool generic;
    bool escape;  /* surface / bulk-tensor: address not from registers */
    uint8_t width;
} memop_t;

static uint8_t mem_width(const char *op, bool atomic)
{
    if (sg_op_has(op, "256"))
        return 32;
    if (sg_op_has(op, "128"))
        return 16;
    if (sg_op_has(op, "64") || sg_op_has(op, "U64") || sg_op_has(op, "S64") || sg_op_has(op, "F64"))
        return 8;
    if (!atomic) {
        if (sg_op_has(op, "U8") || sg_op_has(op, "S8"))
            return 1;
        if (sg_op_has(op, "U16") || sg_op_has(op, "S16"))
            return 2;
    }
    return 4;
}

static memop_t classify_mem(const char *op)
{
    memop_t m = {0};
    if (sg_op_is(op, "LDG") || sg_op_is(op, "LDGSTS")) {
        m.kind = SG_SASS_LOAD;
    } else if (sg_op_is(op, "LD")) {
        m.kind = SG_SASS_LOAD;
        m.generic = true;
    } else if (sg_op_is(op, "STG")) {
        m.kind = SG_SASS_STORE;
    } else if (sg_op_is(op, "ST")) {
        m.kind = SG_SASS_STORE;
        m.generic = true;
    } else if (sg_op_is(op, "ATOMG") || sg_op_is(op, "REDG")) {
        m.kind = SG_SASS_ATOMIC;
    } else if (sg_op_is(op, "ATOM") || sg_op_is(op, "RED")) {
        m.kind = SG_SASS_ATOMIC;
        m.generic = true;
    } else if (sg_op_is(op, "SUST")) {
        m.kind = SG_SASS_STORE;
        m.escape = true;
    } else if (sg_op_is(op, "SUATOM") || sg_op_is(op, "SURED")) {
        m.kind = SG_SASS_ATOMIC;
        m.escape = true;
    } else if (sg_op_is(op, "SULD")) {
        m.kind = SG_SASS_LOAD;
        m.escape = true;
    } else if (sg_op_is(op, "UTMASTG") || sg_op_is(op, "UTMAREDG") || sg_op_is(op, "UBLKRED") ||
               (sg_op_is(op, "UBLKCP") && sg_op_has(op, "G") && strstr(op, ".G.S") == NULL &&
                strstr(op, ".S.G") == NULL)) {
        m.kind = SG_SASS_STORE;
        m.escape = true;
    } else if (sg_op_is(op, "UBLKCP")) {
        m.kind = strstr(op, ".G.S") ? SG_SASS_STORE : SG_SASS_LOAD;
        m.escape = true;
    } else if (sg_op_is(op, "UTMALDG")) {
        m.kind = SG_SASS_LOAD;
        m.escape = true;
    }
    if (m.kind)
        m.width = mem_width(op, m.kind == SG_SASS_ATOMIC);
    return m;
}

bool sg_flow_is_global_access(const char *op)
{
    memop_t m = classify_mem(op);
    return m.kind && !m.escape;
}

/* The 64-bit address of a memory operand. */
static val_t address_of(const ctx_t *x, const state_t *st, const sg_sass_insn_t *in,
                        const sg_sass_operand_t *m, const guard_t *g)
{
    val_t a;
    if (m->reg == 0xffff) {
        a = sg_val_const(0);
    } else {
        sg_sass_operand_t r = {.kind = SG_SASS_OP_REG, .reg = m->reg, .uniform = m->uniform};
        if (m->u32)
            a = ext32(rd32(x, st, &r, g));
        else
            a = rd64(x, st, &r, g); /* .64, or .E (64-bit addressing) */
    }
    if (m->reg2 != 0xffff) {
        sg_sass_operand_t r = {.kind = SG_SASS_OP_REG, .reg = m->reg2, .uniform = m->reg2_uniform};
        val_t b = (m->u32 || m->reg2_wide) ? rd64(x, st, &r, g) : ext32(rd32(x, st, &r, g));
        a = arith_add(&a, &b);
    }
    if (m->imm) {
        val_t c = sg_val_const(m->imm);
        a = arith_add(&a, &c);
    }
    (void)in;
    return a;
}

/* ---- recording ------------------------------------------------------------------- */

static uint32_t find_pc(const ctx_t *x, int64_t pc);

static bool term_has_param(const sg_term_t *t)
{
    for (int k = 0; k < SG_POLY_DEGREE; k++)
        if (t->at[k] & A_PARAM)
            return true;
    return false;
}

/* p with a grid-stride loop's progress as the exported atom: the terms
 * that use a loop count (or a quotient or remainder) must be c times
 * flat*ntid.x*nctaid.x of one loop (flat its pass, sg_loop_t), which
 * becomes c*SG_SASS_GRID_K. */
static bool grid_k_form(const ctx_t *x, const sg_poly_t *p, sg_poly_t *out)
{
    sg_poly_t t = {0}, rest = {0};
    for (uint8_t i = 0; i < p->n; i++) {
        bool loop = false;
        for (int j = 0; j < SG_POLY_DEGREE; j++)
            loop |= p->t[i].at[j] >= A_LOOP && p->t[i].at[j] <= A_MOD_MAX;
        if (!sg_poly_add_term(loop ? &t : &rest, p->t[i].c, p->t[i].at))
            return false;
    }
    if (!t.n) {
        *out = *p;
        return true;
    }
    sg_poly_t s = {0};
    const uint16_t grid[SG_POLY_DEGREE] = {0, 0, SG_SASS_NTID_X, SG_SASS_NCTAID_X};
    sg_poly_add_term(&s, 1, grid);
    /* a loop that does not step by the grid: its count alone, c*K */
    for (uint32_t l = 0; l < x->nloops && t.n == 1; l++)
        if (sg_poly_term_atom(&t.t[0]) == x->loops[l].atom) {
            const uint16_t j[SG_POLY_DEGREE] = {0, 0, 0, SG_SASS_LOOP_K};
            if (!sg_poly_add_term(&rest, t.t[0].c, j))
                return false;
            *out = rest;
            return true;
        }
    for (uint32_t l = 0; l < x->nloops; l++) {
        sg_poly_t fs, cfs, c;
        if (!sg_poly_mul(&fs, &x->loops[l].flat, &s) || !fs.n)
            continue;
        int64_t k = 0;
        for (uint8_t i = 0; i < t.n; i++)
            if (sg_poly_key(&t.t[i]) == sg_poly_key(&fs.t[0]) && t.t[i].c % fs.t[0].c == 0)
                k = t.t[i].c / fs.t[0].c;
        sg_poly_const(&c, k);
        if (!k || !sg_poly_mul(&cfs, &fs, &c) || !sg_poly_eq(&cfs, &t))
            continue;
        const uint16_t g[SG_POLY_DEGREE] = {0, 0, 0, SG_SASS_GRID_K};
        if (!sg_poly_add_term(&rest, k, g))
            return false;
        *out = rest;
        return true;
    }
    return false;
}

/* p in the exported form: degree <= 2 in the special registers and the
 * grid-stride loop's progress, at most SG_SASS_MAX_TERMS terms; false when
 * it is not of that form. */
static bool affine_from_poly(const ctx_t *x, const sg_poly_t *p0, sg_sass_affine_t *out)
{
    memset(out, 0, sizeof *out);
    sg_poly_t q;
    if (!grid_k_form(x, p0, &q))
        return false;
    const sg_poly_t *p = &q;
    if (p->n > SG_SASS_MAX_TERMS)
        return false;
    for (uint8_t i = 0; i < p->n; i++) {
        const sg_term_t *t = &p->t[i];
        if (sg_poly_degree(t) > 2 || t->at[2] > SG_SASS_LOOP_K || t->at[3] > SG_SASS_LOOP_K)
            return false;
        out->t[i].coef = t->c;
        if (t->at[2] == 0) {
            out->t[i].a = (uint8_t)t->at[3];
            out->t[i].b = SG_SASS_ATOM_NONE;
        } else {
            out->t[i].a = (uint8_t)t->at[2];
            out->t[i].b = (uint8_t)t->at[3];
        }
        out->n++;
    }
    return true;
}

/* fact -> "L < P" with L free of parameters and P one parameter word. */
static bool normalize_guard(const cmp_t *f, sg_poly_t *lhs, uint16_t *param)
{
    sg_poly_t X, Y, one;
    sg_poly_const(&one, 1);
    switch (f->cmp) {
    case C_LT: X = f->l, Y = f->r; break;
    case C_LE: X = f->l; if (!sg_poly_add(&Y, &f->r, &one, 1)) return false; break;
    case C_GT: X = f->r, Y = f->l; break;
    case C_GE: X = f->r; if (!sg_poly_add(&Y, &f->l, &one, 1)) return false; break;
    default: return false;
    }
    if (sg_poly_has_params(&X))
        return false;
    int found = -1;
    for (uint8_t i = 0; i < Y.n; i++)
        if (term_has_param(&Y.t[i])) {
            if (found >= 0 || sg_poly_degree(&Y.t[i]) != 1 || Y.t[i].c != 1)
                return false;
            found = i;
        }
    if (found < 0)
        return false;
    *param = sg_poly_term_atom(&Y.t[found]);
    sg_poly_t rest = Y;
    memmove(&rest.t[found], &rest.t[found + 1], (size_t)(rest.n - found - 1) * sizeof(sg_term_t));
    rest.n--;
    return sg_poly_add(lhs, &X, &rest, -1);
}

/* A fact as "lhs OP P" (lhs free of parameters) or "lhs OP constant":
 * l - r = sign*P + X gives -X swap(OP) P for sign +1 and X OP P for -1. */
static bool export_cond(const ctx_t *x, const cmp_t *f, sg_sass_cond_t *out)
{
    static const uint8_t swap[] = {SG_SASS_GT, SG_SASS_GE, SG_SASS_LT, SG_SASS_LE, SG_SASS_EQ,
                                   SG_SASS_NE};
    sg_poly_t d;
    if (!sg_poly_add(&d, &f->l, &f->r, -1))
        return false;
    int found = -1;
    for (uint8_t i = 0; i < d.n; i++)
        if (term_has_param(&d.t[i])) {
            if (found >= 0 || sg_poly_degree(&d.t[i]) != 1 || (d.t[i].c != 1 && d.t[i].c != -1))
                return false;
            found = i;
        }
    memset(out, 0, sizeof *out);
    out->uns = f->uns;
    if (found < 0) {
        /* D OP 0: keep D's constant on the right */
        int64_t k = 0;
        sg_poly_t e = d;
        for (uint8_t i = 0; i < e.n; i++)
            if (!sg_poly_degree(&e.t[i])) {
                k = e.t[i].c;
                memmove(&e.t[i], &e.t[i + 1], (size_t)(e.n - i - 1) * sizeof(sg_term_t));
                e.n--;
                break;
            }
        if (!affine_from_poly(x, &e, &out->lhs))
            return false;
        out->op = f->cmp;
        out->param = -1;
        out->width = f->wide ? 8 : 4;
        out->rhs_const = -k;
        return true;
    }
    uint16_t p = sg_poly_term_atom(&d.t[found]);
    int64_t sign = d.t[found].c;
    if (f->wide && !(p & A_P64))
        return false;
    sg_poly_t e = d;
    memmove(&e.t[found], &e.t[found + 1], (size_t)(e.n - found - 1) * sizeof(sg_term_t));
    e.n--;
    if (sign > 0) {
        sg_poly_t z = {0};
        if (!sg_poly_add(&e, &z, &e, -1))
            return false;
        out->op = swap[f->cmp];
    } else {
        out->op = f->cmp;
    }
    if (!affine_from_poly(x, &e, &out->lhs))
        return false;
    out->param = (int32_t)A_OFF(p);
    out->width = (p & A_P64) ? 8 : 4;
    return true;
}

/* Is the non-constant part of x a positive multiple s of that of y? */
static bool proportional(const sg_poly_t *x, const sg_poly_t *y, int64_t *s)
{
    int64_t k = 0;
    uint8_t nx = 0, ny = 0;
    for (uint8_t i = 0; i < x->n; i++)
        if (sg_poly_degree(&x->t[i]))
            nx++;
    for (uint8_t i = 0; i < y->n; i++)
        if (sg_poly_degree(&y->t[i]))
            ny++;
    if (nx != ny || nx == 0)
        return false;
    for (uint8_t i = 0, j = 0; i < x->n; i++) {
        if (!sg_poly_degree(&x->t[i]))
            continue;
        while (j < y->n && !sg_poly_degree(&y->t[j]))
            j++;
        if (j >= y->n || sg_poly_key(&x->t[i]) != sg_poly_key(&y->t[j]) || y->t[j].c <= 0 ||
            x->t[i].c % y->t[j].c)
            return false;
        int64_t q = x->t[i].c / y->t[j].c;
        if (k && q != k)
            return false;
        k = q;
        j++;
    }
    if (k <= 0)
        return false;
    *s = k;
    return true;
}

static const char *flag_reason(uint16_t f)
{
    if (f & F_UNREACHED)
        return "code not reached from the kernel entry (a callee or an indirect-branch target)";
    if (f & F_MEM)
        return "address loaded from memory";
    if (f & F_JOIN)
        return "address differs across paths (selected, or changes around a loop)";
    if (f & F_CALL)
        return "address clobbered by a call";
    if (f & F_CBANK)
        return "address from a constant bank other than the parameters (a __device__ or "
               "__constant__ variable)";
    if (f & F_NONLIN)
        return "address arithmetic beyond the polynomials kept (degree 4, 6 terms)";
    if (f & F_HIGH)
        return "the two words of the 64-bit address do not match";
    if (f & F_DIV)
        return "address divided or shifted right";
    if (f & F_MANY)
        return "too many parameter words in the address";
    if (f & F_UNK)
        return "unrecognised arithmetic";
    if (f & F_NONE)
        return "address from a path the analysis found no value on";
    return "address not derived from a parameter";
}

/* p = w * q for a parameter word w in every term, once, and no other
 * parameter word: a stride that scales the whole index. */
static bool factor_scale(const sg_poly_t *p, uint16_t *w, sg_poly_t *q)
{
    if (!p->n)
        return false;
    uint16_t cand = 0;
    for (int k = 0; k < SG_POLY_DEGREE; k++)
        if (p->t[0].at[k] & A_PARAM)
            cand = p->t[0].at[k];
    if (!cand)
        return false;
    sg_poly_t with, without;
    if (!sg_poly_split(p, cand, &with, &without) || without.n || sg_poly_has_params(&with))
        return false;
    *w = cand;
    *q = with;
    return true;
}

/* The index in the exported form (a->index, a->scaled); NULL, or why not. */
static const char *export_index(const ctx_t *x, sg_poly_t *idx, sg_sass_access_t *a)
{
    if (sg_poly_has_params(idx)) {
        uint16_t w;
        if (!factor_scale(idx, &w, idx))
            return "index depends on parameter words (strides or offsets)";
        a->scaled = true;
        a->scale_param = (uint16_t)A_OFF(w);
        a->scale_width = (w & A_P64) ? 8 : 4;
    }
    sg_poly_t g;
    if (sg_poly_has_atom_in(idx, A_LOOP, A_MOD_MAX) && !grid_k_form(x, idx, &g))
        return sg_poly_has_atom_in(idx, A_LOOP, A_LOOP_MAX)
                   ? "index unknown: it changes around a loop by a step other than the grid "
                     "(ntid.x*nctaid.x)"
                   : "index unknown: it uses a quotient or a remainder";
    if (!affine_from_poly(x, idx, &a->index))
        return "index of degree 3 or more in the launch indices";
    return NULL;
}

/* An index that uses a loop's pass (SG_SASS_GRID_K, SG_SASS_LOOP_K) needs
 * a condition bounding it from above. */
static bool loop_bounded(const sg_sass_access_t *a)
{
    for (uint8_t atom = SG_SASS_GRID_K; atom <= SG_SASS_LOOP_K; atom++) {
        bool uses = false, bounded = false;
        for (uint32_t i = 0; i < a->index.n; i++)
            uses |= a->index.t[i].a == atom || a->index.t[i].b == atom;
        for (uint32_t c = 0; uses && c < a->n_conds; c++) {
            const sg_sass_cond_t *k = &a->conds[c];
            for (uint32_t i = 0; i < k->lhs.n; i++)
                if (k->lhs.t[i].a == atom && k->lhs.t[i].b == SG_SASS_ATOM_NONE &&
                    ((k->lhs.t[i].coef > 0 && (k->op == SG_SASS_LT || k->op == SG_SASS_LE)) ||
                     (k->lhs.t[i].coef < 0 && (k->op == SG_SASS_GT || k->op == SG_SASS_GE))))
                    bounded = true;
        }
        if (uses && !bounded)
            return false;
    }
    return true;
}

static void record(ctx_t *x, const state_t *st, const sg_sass_insn_t *in, const memop_t *m,
                   const val_t *addr, const guard_t *g)
{
    sg_sass_kernel_t *k = x->out;
    if (k->n_accesses == x->cap_acc) {
        uint32_t nc = x->cap_acc ? x->cap_acc * 2 : 16;
        sg_sass_access_t *na = realloc(k->accesses, nc * sizeof *na);
        if (!na) {
            x->err = SG_ENOMEM;
            return;
        }
        k->accesses = na;
        x->cap_acc = nc;
    }
    sg_sass_access_t *a = &k->accesses[k->n_accesses++];
    memset(a, 0, sizeof *a);
    a->pc = in->pc - x->pc0;
    a->kind = m->kind;
    a->width = m->width;
    a->predicated = in->guard >= 0;
    a->generic = m->generic;
    a->base = -1;
    a->guard_param = -1;
    snprintf(a->op, sizeof a->op, "%.39s", in->op);
    if (m->escape) {
        snprintf(a->reason, sizeof a->reason, "%s",
                 sg_op_is(in->op, "SULD") || sg_op_is(in->op, "SUST") || sg_op_is(in->op, "SUATOM") ||
                         sg_op_is(in->op, "SURED")
                     ? "surface access: address from a surface object"
                     : "bulk tensor copy: address from a tensor map or shared memory");
        return;
    }
    /* candidates: P64 words that flow in additively */
    for (uint8_t i = 0; i < addr->nprov && a->n_candidates < SG_SASS_MAX_CANDIDATES; i++)
        if ((addr->prov[i].atom & A_P64) && addr->prov[i].base)
            a->candidates[a->n_candidates++] = (uint16_t)A_OFF(addr->prov[i].atom);
    if (addr->kind != V_TOP) {
        int bt = -1, nb = 0;
        for (uint8_t i = 0; i < addr->p.n; i++)
            if ((sg_poly_term_atom(&addr->p.t[i]) & A_P64) && addr->p.t[i].c == 1)
                bt = i, nb++;
        int st_sym = -1;
        for (uint8_t i = 0; nb == 0 && i < addr->p.n; i++) {
            uint16_t at = sg_poly_term_atom(&addr->p.t[i]);
            if (at >= A_SYM && at <= A_SYM_MAX && addr->p.t[i].c == 1)
                st_sym = st_sym < 0 ? i : -2;
        }
        if (st_sym >= 0) { /* from a module symbol: the index is the rest */
            bt = st_sym;
            nb = 1;
            snprintf(a->symbol, sizeof a->symbol, "%s",
                     x->c4_names[sg_poly_term_atom(&addr->p.t[bt]) & 0xff]);
        }
        if (nb == 1) {
            if (!a->symbol[0])
                a->base = (int32_t)A_OFF(sg_poly_term_atom(&addr->p.t[bt]));
            sg_poly_t idx = addr->p;
            memmove(&idx.t[bt], &idx.t[bt + 1], (size_t)(idx.n - bt - 1) * sizeof(sg_term_t));
            idx.n--;
            const char *why = export_index(x, &idx, a);
            if (why) {
                a->scaled = false;
                memset(&a->index, 0, sizeof a->index);
                snprintf(a->reason, sizeof a->reason, "%s", why);
            } else {
                a->index_known = true;
                a->index_32bit = (addr->flags & F_W32) != 0;
                /* linear pattern */
                int64_t s = 0, off = 0;
                bool lin = true;
                for (uint8_t i = 0; i < idx.n; i++) {
                    const sg_term_t *t = &idx.t[i];
                    uint32_t deg = sg_poly_degree(t);
                    if (!deg)
                        off = t->c;
                    else if ((deg == 1 && t->at[3] == SG_SASS_TID_X) ||
                             (deg == 2 && t->at[2] == SG_SASS_CTAID_X &&
                              t->at[3] == SG_SASS_NTID_X)) {
                        if (s && s != t->c)
                            lin = false;
                        s = t->c;
                    } else {
                        lin = false;
                    }
                }
                uint8_t nvar = (uint8_t)(idx.n - (off ? 1 : 0));
                if (lin && nvar == 2 && s && !a->scaled) {
                    a->stride = s;
                    a->offset = off;
                }
                /* the bounds check */
                cmp_t facts[MAXFACT + 1];
                uint8_t nf = 0;
                cmp_t gf;
                bool guard_read = g->id < 0;
                if (sg_flow_pred_fact(st, g->id, &gf)) {
                    facts[nf++] = gf;
                    guard_read = true;
                }
                for (uint8_t i = 0; i < st->nfacts; i++)
                    facts[nf++] = st->facts[i];
                bool have = false;
                sg_poly_t gl = {0};
                uint16_t gp = 0;
                bool gu = false;
                for (int pass = 0; pass < 2 && !have; pass++)
                    for (uint8_t i = 0; i < nf && !have; i++) {
                        sg_poly_t L;
                        uint16_t prm;
                        int64_t sc;
                        if (!normalize_guard(&facts[i], &L, &prm))
                            continue;
                        gl = L, gp = prm, gu = facts[i].uns;
                        if (pass == 0 && !proportional(&idx, &L, &sc))
                            continue;
                        if (!affine_from_poly(x, &L, &a->guard_lhs))
                            continue;
                        a->guarded = true;
                        a->guard_param = (int32_t)A_OFF(prm);
                        a->guard_width = (prm & A_P64) ? 8 : 4;
                        if (facts[i].wide && !(prm & A_P64))
                            a->guard_width = 8;
                        a->guard_unsigned = facts[i].uns;
                        have = true;
                    }
                (void)gl, (void)gp, (void)gu;
                /* every condition, for the range to use */
                bool all = true;
                for (uint8_t i = 0; i < nf; i++) {
                    if (a->n_conds < SG_SASS_MAX_CONDS &&
                        export_cond(x, &facts[i], &a->conds[a->n_conds]))
                        a->n_conds++;
                    else
                        all = false;
                }
                a->conditions_exact = guard_read && !st->cond_unknown && all;
                if (!loop_bounded(a)) {
                    a->index_known = a->scaled = a->index_32bit = false;
                    memset(&a->index, 0, sizeof a->index);
                    a->stride = a->offset = 0;
                    a->conditions_exact = false;
                    snprintf(a->reason, sizeof a->reason,
                             "index unknown: no bound proven on the grid-stride loop's passes");
                }
            }
        } else if (nb > 1) {
            snprintf(a->reason, sizeof a->reason, "address adds several parameter words");
        } else {
            snprintf(a->reason, sizeof a->reason, "address not derived from a parameter");
        }
    } else {
        const char *r = flag_reason(addr->flags);
        if (a->n_candidates == 1 && !(addr->flags & F_ADDPTR)) {
            a->base = a->candidates[0];
            snprintf(a->reason, sizeof a->reason, "index unknown: %s", r);
            if (addr->flags & F_MEM)
                snprintf(a->reason, sizeof a->reason, "index unknown: index loaded from memory");
        } else if (a->n_candidates == 1) {
            snprintf(a->reason, sizeof a->reason, "%.60s; the part beside P[0x%x] may be a pointer",
                     r, a->candidates[0]);
        } else {
            snprintf(a->reason, sizeof a->reason, "%s", r);
        }
        uint32_t oi = addr->origin ? find_pc(x, (int64_t)addr->origin - 1) : UINT32_MAX;
        bool unk_first = !(addr->flags & (F_UNREACHED | F_MEM | F_JOIN | F_CALL | F_CBANK |
                                           F_NONLIN | F_HIGH | F_DIV | F_MANY));
        if ((addr->flags & F_UNK) && unk_first && oi != UINT32_MAX) {
            size_t l = strlen(a->reason);
            snprintf(a->reason + l, sizeof a->reason - l, " (%.40s at 0x%x)", x->in[oi].op,
                     x->in[oi].pc - x->pc0);
        }
    }
    if (!a->index_known) {
        /* The address is unknown, but what is known about when it runs still
         * tells a launch where it never runs (a tail no block reaches). */
        cmp_t gf;
        if (sg_flow_pred_fact(st, g->id, &gf) && a->n_conds < SG_SASS_MAX_CONDS &&
            export_cond(x, &gf, &a->conds[a->n_conds]))
            a->n_conds++;
        for (uint8_t i = 0; i < st->nfacts && a->n_conds < SG_SASS_MAX_CONDS; i++)
            if (export_cond(x, &st->facts[i], &a->conds[a->n_conds])) a->n_conds++;
    }
}

/* ---- one instruction --------------------------------------------------------- */

/* Index of the first operand at or after i that is not a predicate. */
static uint8_t skip_preds(const sg_sass_insn_t *in, uint8_t i)
{
    while (i < in->n_ops && in->ops[i].kind == SG_SASS_OP_PRED)
        i++;
    return i;
}


/* Carry-out predicates written by operands [1, a), PT not counted. */
static uint8_t count_carries(const sg_sass_insn_t *in, uint8_t a)
{
    uint8_t k = 0;
    for (uint8_t i = 1; i < a; i++) {
        int pi = pred_index(&in->ops[i]);
        k += pi != 7 && pi != 15;
    }
    return k;
}

/* Replace the parameter word P32[off] by the 64-bit word P64[off]. */
static void poly_widen(sg_poly_t *p, uint32_t off)
{
    for (uint8_t i = 0; i < p->n; i++)
        if (sg_poly_term_atom(&p->t[i]) == (uint16_t)(A_P32 | (off >> 2)))
            p->t[i].at[SG_POLY_DEGREE - 1] = (uint16_t)(A_P64 | (off >> 2));
    /* the order of terms may change: P64 sorts after every P32 */
    for (uint8_t i = 1; i < p->n; i++)
        for (uint8_t j = i; j > 0 && sg_poly_key(&p->t[j - 1]) > sg_poly_key(&p->t[j]); j--) {
            sg_term_t t = p->t[j];
            p->t[j] = p->t[j - 1];
            p->t[j - 1] = t;
        }
}

/* The high word of the 64-bit sum named by carry p. When the low add took
 * the low word P32[o] of a parameter and this one takes its high word
 * P32[o+4] (sm_75/80 add constant-bank words directly), the sum is really
 * P64[o]: the pair check widens the low word's term to match. */
static val_t hi_from_carry(ctx_t *x, state_t *st, const sg_sass_insn_t *in, uint8_t from,
                           const pred_t *p, const guard_t *g)
{
    val_t v = sg_val_make(V_HI, &p->p);
    v.flags = p->flags;
    for (uint8_t i = from; i < in->n_ops; i++) {
        const sg_sass_operand_t *o = &in->ops[i];
        val_t w;
        if (o->kind == SG_SASS_OP_CBANK)
            w = cbank_val(x, o, 0, false);
        else if (o->kind == SG_SASS_OP_REG && !sg_op_zero_reg(o))
            w = rdslot(x, st, o, 0, g);
        else
            continue;
        if (w.kind == V_HI) {
            /* the high word of a pointer already widened (P + offset, from
             * an add of its two words): the low word's P32 is that P64 */
            for (uint8_t t = 0; t < w.p.n; t++) {
                uint16_t pa = sg_poly_term_atom(&w.p.t[t]);
                if (!(pa & A_P64) || w.p.t[t].c != 1)
                    continue;
                for (uint8_t k = 0; k < v.p.n; k++)
                    if (sg_poly_term_atom(&v.p.t[k]) == (uint16_t)(A_P32 | (pa & 0x3fff)) &&
                        v.p.t[k].c == 1) {
                        poly_widen(&v.p, A_OFF(pa));
                        break;
                    }
            }
            continue;
        }
        uint16_t wa = w.p.n == 1 ? sg_poly_term_atom(&w.p.t[0]) : 0;
        if (w.kind != V_VAL || w.p.t[0].c != 1 || !(wa & A_P32) || A_OFF(wa) < 4)
            continue;
        uint32_t lo = A_OFF(wa) - 4;
        if (lo & 7)
            continue;
        for (uint8_t k = 0; k < v.p.n; k++)
            if (sg_poly_term_atom(&v.p.t[k]) == (uint16_t)(A_P32 | (lo >> 2)) && v.p.t[k].c == 1) {
                poly_widen(&v.p, lo);
                prov_add(&v, (uint16_t)(A_P64 | (lo >> 2)), 1);
                break;
            }
    }
    return v;
}

/* The high word of an add whose carry is not known: unknown, but the
 * pointer words flowing in still flow in. */
static void high_word_unknown(ctx_t *x, state_t *st, const sg_sass_insn_t *in, uint8_t from,
                              const guard_t *g)
{
    val_t t = sg_val_top(0);
    for (uint8_t i = from; i < in->n_ops; i++)
        if (in->ops[i].kind == SG_SASS_OP_REG || in->ops[i].kind == SG_SASS_OP_CBANK) {
            sg_sass_operand_t r = in->ops[i];
            val_t v = r.kind == SG_SASS_OP_REG ? rdslot(x, st, &r, 0, g) : cbank_val(x, &r, 0, false);
            sg_val_merge_prov(&t, &v, !r.neg && !r.inv);
        }
    uint8_t d = 0;
    for (uint8_t i = 1; i < in->n_ops && in->ops[i].kind == SG_SASS_OP_PRED; i++) {
        pred_t p = {0};
        pred_write(x, st, pred_index(&in->ops[i]), &p, g);
    }
    wr32(x, st, &in->ops[d], t, g);
}

static void do_generic(ctx_t *x, state_t *st, const sg_sass_insn_t *in, const guard_t *g)
{
    char base[48];
    size_t bl = strcspn(in->op, ".");
    snprintf(base, sizeof base, "%.*s", (int)bl, in->op);
    bool all = (bl >= 3 && !strcmp(base + bl - 3, "MMA")) || sg_op_is(in->op, "LDSM") ||
               sg_op_is(in->op, "LDTM") || sg_op_is(in->op, "TEX") || sg_op_is(in->op, "TLD") ||
               sg_op_is(in->op, "TLD4") || sg_op_is(in->op, "TXD") || sg_op_is(in->op, "TXQ") ||
               sg_op_is(in->op, "TMML") || !strncmp(base, "UTC", 3) || !strcmp(in->op, "?");
    val_t pr = sg_val_top(0);
    for (uint8_t i = skip_preds(in, 0) + 1; i < in->n_ops; i++)
        if (in->ops[i].kind == SG_SASS_OP_REG || in->ops[i].kind == SG_SASS_OP_CBANK) {
            val_t v = val32_raw(x, st, &in->ops[i], g);
            sg_val_merge_prov(&pr, &v, false);
        }
    uint16_t carried = (uint16_t)(pr.flags & F_ADDPTR);
    uint8_t dst = skip_preds(in, 0);
    for (uint8_t i = dst + 1; i < in->n_ops; i++)
        if (in->ops[i].kind == SG_SASS_OP_REG && !sg_op_zero_reg(&in->ops[i])) {
            val_t v = rdslot(x, st, &in->ops[i], 0, g);
            if (v.nprov)
                carried = F_ADDPTR; /* e.g. a pointer rounded with LOP3 */
        }
    pr.flags = carried;
    pr.origin = in->pc + 1;
    uint16_t fl = F_UNK;
    if (all || sg_op_is(in->op, "R2P")) {
        clobber_all(x, st, false, F_UNK);
        return;
    }
    uint8_t i = 0;
    for (; i < in->n_ops && in->ops[i].kind == SG_SASS_OP_PRED; i++) {
        pred_t t = {0};
        pred_write(x, st, pred_index(&in->ops[i]), &t, g);
    }
    if (i < in->n_ops && in->ops[i].kind == SG_SASS_OP_REG)
        clobber(x, st, &in->ops[i], sg_op_dest_width(in->op), fl, &pr, g);
}

/* Registers an instruction writes from its destination (a bound for
 * unmodelled ones: 1, pairs for 64-bit forms, 4 for 128-bit). */
uint32_t sg_op_dest_width(const char *op)
{
    memop_t m = classify_mem(op);
    if (m.kind && m.kind != SG_SASS_STORE)
        return (m.width + 3u) / 4u;
    if (sg_op_has(op, "128"))
        return 4;
    if (sg_op_is(op, "SHF") || sg_op_is(op, "USHF"))
        return 1; /* a funnel shift of a 64-bit value gives one word of it */
    if (sg_op_has(op, "64") || sg_op_has(op, "WIDE") || strstr(op, "F64") || strstr(op, "U64") ||
        strstr(op, "S64") || (op[0] == 'D' && !sg_op_is(op, "DEPBAR")) || sg_op_is(op, "CS2R"))
        return 2;
    return 1;
}

/* Registers a callee writes: everything from its first instruction to its
 * first RET. Its results may be pointers only when it reads pointer-sized
 * words (a parameter pair, a 64-bit load). */
static void clobber_callee(ctx_t *x, state_t *st, uint32_t from)
{
    uint16_t fl = F_CALL;
    for (uint32_t i = from; i < x->n && !sg_op_is(x->in[i].op, "RET"); i++)
        if (sg_op_has(x->in[i].op, "64") &&
            (sg_op_is(x->in[i].op, "LDC") || sg_op_is(x->in[i].op, "ULDC") ||
             sg_op_is(x->in[i].op, "LDCU") || classify_mem(x->in[i].op).kind))
            fl |= F_ADDPTR;
    for (uint32_t i = from; i < x->n; i++) {
        const sg_sass_insn_t *in = &x->in[i];
        if (sg_op_is(in->op, "RET"))
            return;
        if (sg_op_is(in->op, "CALL")) {
            clobber_all(x, st, true, F_CALL | F_ADDPTR);
            return;
        }
        uint8_t k = 0;
        for (; k < in->n_ops && in->ops[k].kind == SG_SASS_OP_PRED; k++) {
            int pi = pred_index(&in->ops[k]);
            if (pi != 7 && pi != 15)
                pred_forget(x, st, pi);
        }
        memop_t m = classify_mem(in->op);
        size_t bl = strcspn(in->op, ".");
        if (bl >= 4 && !strncmp(in->op + bl - 4, "SETP", 4))
            continue; /* writes predicates only (done above) */
        if ((m.kind == SG_SASS_STORE) || sg_op_is(in->op, "STS") || sg_op_is(in->op, "STL") ||
            sg_op_is(in->op, "BRA") || sg_op_is(in->op, "EXIT") || sg_op_is(in->op, "BAR") ||
            sg_op_is(in->op, "BSSY") || sg_op_is(in->op, "BSYNC"))
            continue;
        if (k < in->n_ops && in->ops[k].kind == SG_SASS_OP_REG) {
            if (bl >= 3 && !strncmp(in->op + bl - 3, "MMA", 3)) {
                clobber_all(x, st, false, fl);
                continue;
            }
            clobber(x, st, &in->ops[k], sg_op_dest_width(in->op), fl, NULL, NULL);
        }
    }
}

/* Is small a thread index below 2^k (by the launch bounds) and big a
 * multiple of 2^k, so that big | small == big + small? (Values are taken
 * non-negative, as everywhere here.) */
static bool disjoint_or(const ctx_t *x, const val_t *big, const val_t *small)
{
    if (big->kind == V_TOP || small->kind == V_TOP || small->p.n != 1 ||
        sg_poly_degree(&small->p.t[0]) != 1 || small->p.t[0].c != 1)
        return false;
    uint16_t t = sg_poly_term_atom(&small->p.t[0]);
    if (t < SG_SASS_TID_X || t > SG_SASS_TID_Z || !x->max_ntid[t - SG_SASS_TID_X])
        return false;
    uint64_t lim = x->max_ntid[t - SG_SASS_TID_X]; /* tid < lim */
    uint64_t pow = 1;
    while (pow < lim)
        pow <<= 1;
    for (uint8_t i = 0; i < big->p.n; i++) {
        int64_t c = big->p.t[i].c;
        if (c <= 0 || (uint64_t)c % pow)
            return false;
    }
    return true;
}

/* The most recent writer of register r before instruction idx in its block
 * (UINT32_MAX when none there). */
static uint32_t writer_in_block(const ctx_t *x, uint32_t idx, const sg_sass_operand_t *r)
{
    uint32_t first = x->blocks ? x->blocks[x->blk_of[idx]].first : 0;
    for (uint32_t i = idx; i-- > first;) {
        const sg_sass_insn_t *in = &x->in[i];
        uint8_t d = 0;
        while (d < in->n_ops && in->ops[d].kind == SG_SASS_OP_PRED)
            d++;
        if (d >= in->n_ops || in->ops[d].kind != SG_SASS_OP_REG || in->ops[d].uniform != r->uniform)
            continue;
        uint32_t w = sg_op_has(in->op, "64") ? 2 : 1;
        if (r->reg >= in->ops[d].reg && r->reg < in->ops[d].reg + w)
            return i;
    }
    return UINT32_MAX;
}

/* CALL.ABS Rn where Rn:Rn+1 was just loaded from c[0x4][k] and the
 * relocation of that word names a benign system function. */
static bool benign_call(const ctx_t *x, uint32_t idx)
{
    const sg_sass_operand_t *r = &x->in[idx].ops[0];
    uint32_t w = writer_in_block(x, idx, r);
    if (w == UINT32_MAX)
        return false;
    const sg_sass_insn_t *ld = &x->in[w];
    if (!sg_op_is(ld->op, "LDC") || !sg_op_has(ld->op, "64") || ld->n_ops < 2 ||
        ld->ops[1].kind != SG_SASS_OP_CBANK || ld->ops[1].reg2 != 4 || ld->ops[0].reg != r->reg)
        return false;
    int64_t off = ld->ops[1].imm;
    if (ld->ops[1].reg != 0xffff) {
        sg_sass_operand_t ir = {.kind = SG_SASS_OP_REG, .reg = ld->ops[1].reg,
                                .uniform = ld->ops[1].uniform};
        uint32_t iw = writer_in_block(x, w, &ir);
        if (iw == UINT32_MAX)
            return false;
        const sg_sass_insn_t *mv = &x->in[iw];
        if (sg_op_is(mv->op, "MOV") && mv->n_ops >= 2 && mv->ops[1].kind == SG_SASS_OP_IMM)
            off += mv->ops[1].imm;
        else if (sg_op_is(mv->op, "IMAD") && sg_op_has(mv->op, "MOV") && mv->n_ops == 4 &&
                 mv->ops[3].kind == SG_SASS_OP_IMM)
            off += mv->ops[3].imm;
        else
            return false;
    }
    for (uint32_t k = 0; k < x->n_benign_c4; k++)
        if ((int64_t)x->benign_c4[k] == off)
            return true;
    return false;
}

/* The binary16 encoding of an immediate printed as a number, when exact. */
static bool half_bits(const sg_sass_operand_t *o, uint16_t *out)
{
    double v;
    if (o->kind == SG_SASS_OP_IMM && o->imm == 0)
        v = 0;
    else if (o->kind == SG_SASS_OP_FIMM)
        v = o->fimm;
    else
        return false;
    if (v != v)
        return false;
    uint16_t sign = 0;
    if (v < 0 || (v == 0 && 1 / v < 0)) {
        sign = 0x8000;
        v = -v;
    }
    if (v == 0) {
        *out = sign;
        return true;
    }
    /* subnormal: m * 2^-24, m < 1024 */
    double m = v * 16777216.0;
    if (m < 1024) {
        if (m != (double)(uint32_t)m)
            return false;
        *out = (uint16_t)(sign | (uint32_t)m);
        return true;
    }
    for (int e = 1; e < 31; e++) {
        double scale = 1;
        for (int k = 0; k < e - 25; k++)
            scale *= 2;
        for (int k = 0; k < 25 - e; k++)
            scale /= 2;
        /* value = (1024 + f) * 2^(e - 25) */
        double q = v / scale;
        if (q >= 1024 && q < 2048) {
            if (q != (double)(uint32_t)q)
                return false;
            *out = (uint16_t)(sign | (e << 10) | ((uint32_t)q - 1024));
            return true;
        }
    }
    return false;
}

/* When slot s holds a select g ? v : alt, the comparison alt satisfies
 * whenever it holds alt (k.l unused): g's predicate R compared alt (the
 * value of identity altver, or R's first operand alt itself) against X,
 * and g false is the outcome of R where alt OP X holds; a virtual
 * predicate says OP X of alt by itself. */
static bool slot_alt_cond(const state_t *st, const slot_t *s, cmp_t *k)
{
    if (s->g < 0)
        return false;
    int gp = s->g >> 1, n = s->g & 1;
    const pred_t *R = &st->preds[gp];
    if (R->ver != s->gver || R->kind != P_CMP || R->g || R->c.wide)
        return false;
    memset(k, 0, sizeof *k);
    k->uns = R->c.uns;
    k->r = R->c.r;
    if (gp >= NPRED) {
        k->cmp = R->c.cmp;
        return n == 0;
    }
    bool alt_known = s->alt.kind == V_VAL || s->alt.kind == V_LO;
    if (!((s->altver && R->lsver == s->altver) ||
          (!R->half && alt_known && sg_poly_eq(&s->alt.p, &R->c.l))))
        return false;
    k->cmp = n ? R->c.cmp : sg_cmp_not(R->c.cmp);
    return true;
}

static bool same_bound(const cmp_t *a, const cmp_t *b)
{
    return a->cmp == b->cmp && a->uns == b->uns && sg_poly_eq(&a->r, &b->r);
}

/* ISETP np = (slot si OP b), where the slot holds a select: g ? v : alt
 * with alt the value its guard's comparison R compared, alt OP' X when g
 * is false (R: P = alt OP X with g = !P, or P = !(alt OP X) with g = P; a
 * virtual predicate says OP' X of alt by itself). Compared with the same
 * X, signedness and OP = OP', np false means the slot is not alt (g
 * holds, the slot is v); with OP = !OP', np true does. np is then the
 * comparison of v, valid under that outcome, which implies g and what g
 * implies. When v - alt is a constant of the right sign (v = alt + 128
 * for OP' = GE: alt >= X gives v >= X too), np is v OP X either way. */
static void select_compare(const state_t *st, int si, uint8_t op, bool uns, const val_t *b,
                           pred_t *np)
{
    const slot_t *s = &st->slots[si];
    cmp_t k;
    if (b->kind == V_TOP || (s->v.kind != V_VAL && s->v.kind != V_LO) ||
        !slot_alt_cond(st, s, &k) || k.uns != uns || !sg_poly_eq(&k.r, &b->p))
        return;
    int gp = s->g >> 1, n = s->g & 1;
    const pred_t *R = &st->preds[gp];
    /* alt and v of a virtual select come from different paths */
    bool alt_known = gp < NPRED && (s->alt.kind == V_VAL || s->alt.kind == V_LO);
    uint8_t op_alt = k.cmp;
    uint8_t parity; /* the outcome of np that excludes alt: guard pred*2+parity */
    if (op == op_alt)
        parity = 1;
    else if (op == sg_cmp_not(op_alt))
        parity = 0;
    else
        return;
    memset(np, 0, sizeof *np);
    np->kind = P_CMP;
    np->c.cmp = op;
    np->c.uns = uns;
    np->c.l = s->v.p;
    np->c.r = b->p;
    np->half = (uint8_t)(1 + parity);
    sg_poly_t d;
    int64_t dc;
    if (alt_known && sg_poly_add(&d, &s->v.p, &s->alt.p, -1) && sg_poly_is_const(&d, &dc) &&
        (((op_alt == C_GE || op_alt == C_GT) && dc >= 0) ||
         ((op_alt == C_LE || op_alt == C_LT) && dc <= 0)))
        np->half = 0; /* np = (alt OP X) or (v OP X) = v OP X */
    np->imp_neg = parity;
    np->imp[np->nimp++] = (gref_t){s->g, s->gver};
    if (R->nimp && R->imp_neg == n)
        for (uint8_t i = 0; i < R->nimp && np->nimp < NIMP; i++)
            np->imp[np->nimp++] = R->imp[i];
}

/* PLOP3.LUT d, e, a, b, c, lutd, lute: d (e) is bit (a<<2 | b<<1 | c) of
 * lutd (lute). With one input not constant (PT, !PT), d is a copy of it,
 * its negation or a constant (UISETP UP0 then PLOP3.LUT P0, PT, PT, PT,
 * UP0, 0x80, 0x0 moves a uniform comparison into P0); anything else is
 * not known. */
static void plop3(ctx_t *x, state_t *st, const sg_sass_insn_t *in, const guard_t *g)
{
    const sg_sass_operand_t *o = in->ops;
    bool ok = in->n_ops == 7 && o[5].kind == SG_SASS_OP_IMM && o[6].kind == SG_SASS_OP_IMM;
    for (int i = 0; i < 5 && ok; i++)
        ok = o[i].kind == SG_SASS_OP_PRED;
    if (!ok) {
        do_generic(x, st, in, g);
        return;
    }
    int var = -1; /* the one input predicate that is not constant */
    for (int i = 2; i < 5; i++) {
        int pi = pred_index(&o[i]);
        if (pi == 7 || pi == 15)
            continue;
        if (var >= 0 && var != pi)
            ok = false;
        var = pi;
    }
    pred_t src = ok && var >= 0 ? *pred_get(st, var, g) : (pred_t){0};
    pred_t np[2];
    for (int d = 0; d < 2; d++) {
        memset(&np[d], 0, sizeof np[d]);
        if (!ok || var < 0)
            continue;
        /* f(x) for the input x; the table is read with the first input as
         * the high bit (LOP3's convention) and, to depend on no convention,
         * must say the same with it as the low bit */
        int f[2];
        bool same = true;
        for (int xv = 0; xv < 2; xv++) {
            int hi = 0, lo = 0;
            for (int i = 2; i < 5; i++) {
                int pi = pred_index(&o[i]);
                int v = ((pi == 7 || pi == 15) ? 1 : xv) ^ (o[i].inv ? 1 : 0);
                hi = hi << 1 | v;
                lo |= v << (i - 2);
            }
            f[xv] = (int)((o[5 + d].imm >> hi) & 1);
            same &= f[xv] == (int)((o[5 + d].imm >> lo) & 1);
        }
        if (!same)
            continue;
        if (f[0] == 0 && f[1] == 1) {
            np[d] = src; /* a copy: the same truth, the same facts */
        } else if (f[0] == 1 && f[1] == 0 && src.kind == P_CMP) {
            np[d] = src;
            np[d].c.cmp = sg_cmp_not(src.c.cmp);
            if (src.half)
                np[d].half = (uint8_t)(3 - src.half);
            np[d].imp_neg = (uint8_t)(src.imp_neg ^ 1);
        }
    }
    /* inputs read before either output is written */
    for (int d = 0; d < 2; d++)
        pred_write(x, st, pred_index(&o[d]), &np[d], g);
}

/* The guard id (pred*2+neg) at the predicate's current version, with what
 * it implies. */
static guard_t make_guard(const state_t *st, int16_t id)
{
    guard_t G = {.id = id, .ver = st->preds[id >> 1].ver};
    const pred_t *gp = pred_get(st, id >> 1, NULL);
    if (gp->nimp && gp->imp_neg == (id & 1)) {
        G.nimp = gp->nimp;
        memcpy(G.imp, gp->imp, gp->nimp * sizeof *G.imp);
    }
    return G;
}

static void step_guarded(ctx_t *x, state_t *st, uint32_t idx, const guard_t *g);

/* Integer arithmetic that writes one 32-bit register and nothing else. */
static bool liftable(const sg_sass_insn_t *in)
{
    const char *op = in->op;
    if (in->n_ops < 2 || in->ops[0].kind != SG_SASS_OP_REG || in->ops[1].kind == SG_SASS_OP_PRED)
        return false;
    if (sg_op_has(op, "WIDE") || sg_op_has(op, "X") || sg_op_has(op, "HI") || sg_op_has(op, "64"))
        return false;
    return sg_op_is(op, "IADD3") || sg_op_is(op, "UIADD3") || sg_op_is(op, "VIADD") ||
           sg_op_is(op, "IADD") || sg_op_is(op, "IADD32I") || sg_op_is(op, "IMAD") ||
           sg_op_is(op, "UIMAD") || sg_op_is(op, "LEA") || sg_op_is(op, "ULEA");
}

/* An unguarded add or multiply-add of a select g ? v : alt (and values
 * that do not depend on g) is the select g ? f(v) : f(alt): computed under
 * g and under !g (`VIADD R0, R3, 0x80` after `@!P6 VIADD R3, R3, 0x80`).
 * False when it does not apply. */
static bool step_lifted(ctx_t *x, state_t *st, uint32_t idx)
{
    const sg_sass_insn_t *in = &x->in[idx];
    if (in->guard >= 0)
        return false;
    const slot_t *sel = NULL;
    for (uint8_t i = 1; i < in->n_ops; i++) {
        const sg_sass_operand_t *o = &in->ops[i];
        if (o->kind != SG_SASS_OP_REG || sg_op_zero_reg(o))
            continue;
        int si = slot_of(x, o, 0);
        if (si < 0)
            return false;
        const slot_t *s = &st->slots[si];
        if (s->g < 0)
            continue;
        if (sel && (sel->g != s->g || sel->gver != s->gver))
            return false;
        sel = s;
    }
    int ds = in->n_ops ? slot_of(x, &in->ops[0], 0) : -1;
    if (!sel || ds < 0 || !liftable(in))
        return false;
    gref_t g = {sel->g, sel->gver};
    guard_t G1 = {.id = g.id, .ver = g.ver}, G0 = {.id = (int16_t)(g.id ^ 1), .ver = g.ver};
    slot_t keep = st->slots[ds];
    step_guarded(x, st, idx, &G1);
    val_t v1 = st->slots[ds].v;
    st->slots[ds] = keep;
    step_guarded(x, st, idx, &G0);
    val_t v0 = st->slots[ds].v;
    st->slots[ds] = keep;
    slot_select(x, st, ds, &g, &v1, &v0, 0);
    return true;
}

static void step(ctx_t *x, state_t *st, uint32_t idx)
{
    const sg_sass_insn_t *in = &x->in[idx];
    guard_t G = {.id = -1};
    if (in->guard == 7 && in->guard_neg)
        return; /* @!PT */
    if (in->guard >= 0)
        G = make_guard(st, (int16_t)(((in->guard_uniform ? 8 : 0) + in->guard) * 2 +
                                     (in->guard_neg ? 1 : 0)));
    else if (step_lifted(x, st, idx))
        return;
    step_guarded(x, st, idx, &G);
}

static void step_guarded(ctx_t *x, state_t *st, uint32_t idx, const guard_t *g)
{
    const sg_sass_insn_t *in = &x->in[idx];
    const char *op = in->op;
    const sg_sass_operand_t *o = in->ops;
    uint8_t n = in->n_ops;

    /* memory */
    memop_t m = classify_mem(op);
    if (m.kind) {
        const sg_sass_operand_t *mo = NULL;
        for (uint8_t i = 0; i < n; i++)
            if (o[i].kind == SG_SASS_OP_MEM) {
                mo = &o[i];
                if (!sg_op_is(op, "LDGSTS"))
                    break;
            }
        if (x->final) {
            val_t addr = mo && !m.escape ? address_of(x, st, in, mo, g) : sg_val_top(F_UNK);
            record(x, st, in, &m, &addr, g);
        }
        if (m.kind != SG_SASS_STORE && !sg_op_is(op, "LDGSTS") && !sg_op_is(op, "RED") &&
            !sg_op_is(op, "REDG")) {
            uint8_t d = skip_preds(in, 0);
            for (uint8_t i = 0; i < d; i++) {
                pred_t t = {0};
                pred_write(x, st, pred_index(&o[i]), &t, g);
            }
            if (d < n && o[d].kind == SG_SASS_OP_REG) {
                uint32_t w = m.escape ? 8 : (m.width + 3u) / 4u;
                clobber(x, st, &o[d], w, F_MEM | F_ADDPTR, NULL, g);
            }
        }
        return;
    }
    if (sg_op_is(op, "LDS") || sg_op_is(op, "LDL") || sg_op_is(op, "ATOMS") ||
        sg_op_is(op, "SHFL")) {
        uint8_t d = skip_preds(in, 0);
        for (uint8_t i = 0; i < d; i++) {
            pred_t t = {0};
            pred_write(x, st, pred_index(&o[i]), &t, g);
        }
        if (d < n && o[d].kind == SG_SASS_OP_REG)
            clobber(x, st, &o[d], (mem_width(op, false) + 3u) / 4u, F_MEM | F_ADDPTR, NULL, g);
        return;
    }
    if (sg_op_is(op, "STS") || sg_op_is(op, "STL") || sg_op_is(op, "NOP") || sg_op_is(op, "BAR") ||
        sg_op_is(op, "BSSY") || sg_op_is(op, "BSYNC") || sg_op_is(op, "WARPSYNC") ||
        sg_op_is(op, "MEMBAR") || sg_op_is(op, "FENCE") || sg_op_is(op, "CCTL") ||
        sg_op_is(op, "ERRBAR") || sg_op_is(op, "DEPBAR") || sg_op_is(op, "LDGDEPBAR") ||
        sg_op_is(op, "YIELD") || sg_op_is(op, "BRA") || sg_op_is(op, "EXIT") ||
        sg_op_is(op, "RET") || sg_op_is(op, "BPT") || sg_op_is(op, "KILL") ||
        sg_op_is(op, "NANOSLEEP") || sg_op_is(op, "UTMAPF") || sg_op_is(op, "UTMACCTL") ||
        sg_op_is(op, "ACQBULK"))
        return;
    if (sg_op_is(op, "BRX") || sg_op_is(op, "JMX") || sg_op_is(op, "JMP") || sg_op_is(op, "CALL")) {
        bool indirect = sg_op_is(op, "BRX") || sg_op_is(op, "JMX") ||
                        !(n >= 1 && (o[n - 1].kind == SG_SASS_OP_LABEL || o[n - 1].kind == SG_SASS_OP_IMM));
        if (sg_op_is(op, "CALL") && !indirect) {
            int64_t t = o[n - 1].imm;
            /* the callee inside this kernel's code: clobber what it writes */
            uint32_t lo = 0, hi = x->n;
            while (lo < hi) {
                uint32_t mid = (lo + hi) / 2;
                if ((int64_t)x->in[mid].pc < t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            bool known = false;
            if (x->call_targets) {
                for (uint32_t k = 0; k < x->n_call_targets; k++)
                    if ((int64_t)x->call_targets[k] + x->pc0 == t)
                        known = true;
            } else {
                known = o[n - 1].kind == SG_SASS_OP_LABEL;
            }
            if (known && t >= 0 && lo < x->n && (int64_t)x->in[lo].pc == t &&
                t != (int64_t)x->pc0) {
                clobber_callee(x, st, lo);
                return;
            }
            escape(x, "call to a function outside the kernel", in->pc);
            clobber_all(x, st, true, F_CALL | F_ADDPTR);
            return;
        }
        if (sg_op_is(op, "CALL") && n >= 1 && o[0].kind == SG_SASS_OP_REG && benign_call(x, idx)) {
            clobber_all(x, st, true, F_CALL); /* __assertfail, vprintf: no pointers back */
            return;
        }
        escape(x, "indirect branch or call", in->pc);
        clobber_all(x, st, true, F_UNK | F_ADDPTR);
        return;
    }

    if (sg_op_is(op, "MOV") || sg_op_is(op, "UMOV") || sg_op_is(op, "R2UR")) {
        if (n < 2)
            goto generic;
        if (sg_op_has(op, "64")) {
            val_t v = rd64(x, st, &o[1], g);
            wr64(x, st, &o[0], &v, g);
        } else {
            bool plain = o[1].kind == SG_SASS_OP_REG && !o[1].neg && !o[1].inv && !o[1].abs;
            int ss = plain ? slot_of(x, &o[1], 0) : -1;
            int ds = o[0].kind == SG_SASS_OP_REG ? slot_of(x, &o[0], 0) : -1;
            if (ss >= 0 && ds >= 0 && g->id < 0) {
                /* the same bits: a select stays one, its identity too */
                st->slots[ds] = st->slots[ss];
                return;
            }
            val_t v = rdslot(x, st, &o[1], 0, g);
            if (!plain)
                v = rd32(x, st, &o[1], g);
            wr32(x, st, &o[0], v, g);
        }
        return;
    }
    if (sg_op_is(op, "HFMA2") && n == 5 && sg_op_zero_reg(&o[1]) && sg_op_zero_reg(&o[2])) {
        /* HFMA2 d, -RZ, RZ, hi, lo: a 32-bit constant made of two halves */
        uint16_t hi, lo;
        if (half_bits(&o[3], &hi) && half_bits(&o[4], &lo)) {
            wr32(x, st, &o[0], sg_val_const((int32_t)(((uint32_t)hi << 16) | lo)), g);
            return;
        }
        goto generic;
    }
    if (sg_op_is(op, "S2R") || sg_op_is(op, "S2UR")) {
        if (n < 2)
            goto generic;
        wr32(x, st, &o[0], rd32(x, st, &o[1], g), g);
        return;
    }
    if (sg_op_is(op, "CS2R")) {
        if (n < 2)
            goto generic;
        val_t v = (o[1].kind == SG_SASS_OP_SREG && o[1].reg == 1) ? sg_val_const(0) : sg_val_top(0);
        if (sg_op_has(op, "32")) {
            wr32(x, st, &o[0], v, g);
        } else {
            wr32(x, st, &o[0], v, g);
            sg_sass_operand_t d1 = o[0];
            d1.reg++;
            wr32(x, st, &d1, v, g);
        }
        return;
    }
    if (sg_op_is(op, "LDC") || sg_op_is(op, "ULDC") || sg_op_is(op, "LDCU")) {
        if (n < 2 || o[1].kind != SG_SASS_OP_CBANK)
            goto generic;
        if (sg_op_has(op, "U8") || sg_op_has(op, "S8") || sg_op_has(op, "U16") || sg_op_has(op, "S16")) {
            clobber(x, st, &o[0], 1, 0, NULL, g);
            return;
        }
        if (sg_op_has(op, "128") || sg_op_has(op, "64")) {
            int pairs = sg_op_has(op, "128") ? 2 : 1;
            for (int k = 0; k < pairs; k++) {
                val_t v = cbank_val(x, &o[1], (uint32_t)(8 * k), true);
                sg_sass_operand_t d = o[0];
                d.reg = (uint16_t)(d.reg + 2 * k);
                if (v.kind == V_TOP) {
                    /* not a pointer-aligned parameter: two 32-bit words */
                    val_t lo = cbank_val(x, &o[1], (uint32_t)(8 * k), false);
                    val_t hi = cbank_val(x, &o[1], (uint32_t)(8 * k + 4), false);
                    wr32(x, st, &d, lo, g);
                    d.reg++;
                    wr32(x, st, &d, hi, g);
                } else {
                    wr64(x, st, &d, &v, g);
                }
            }
            return;
        }
        wr32(x, st, &o[0], cbank_val(x, &o[1], 0, false), g);
        return;
    }

    if (sg_op_is(op, "IMAD") || sg_op_is(op, "UIMAD")) {
        if (sg_op_has(op, "HI"))
            goto generic;
        uint8_t a = 1;
        bool carry_out = n > 1 && o[1].kind == SG_SASS_OP_PRED;
        if (carry_out)
            a = 2;
        if (n < a + 3)
            goto generic;
        if (sg_op_has(op, "X")) {
            /* high word: the carry-in predicate names the 64-bit sum */
            const sg_sass_operand_t *cp = &o[n - 1];
            if (cp->kind == SG_SASS_OP_PRED && !cp->inv && !carry_out) {
                const pred_t *p = pred_get(st, pred_index(cp), g);
                if (p->kind == P_CARRY) {
                    val_t v = hi_from_carry(x, st, in, a, p, g);
                    wr32(x, st, &o[0], v, g);
                    return;
                }
                if (p->kind == P_ZERO) {
                    /* no carry comes in: a plain multiply-add */
                    val_t va = rd32(x, st, &o[a], g), vb = rd32(x, st, &o[a + 1], g);
                    val_t vc = rd32(x, st, &o[a + 2], g), prod = arith_mul(&va, &vb);
                    wr32(x, st, &o[0], arith_add(&prod, &vc), g);
                    return;
                }
            }
            high_word_unknown(x, st, in, a, g);
            return;
        }
        if (carry_out)
            goto generic;
        if (sg_op_zero_reg(&o[a]) && sg_op_zero_reg(&o[a + 1]) && !sg_op_has(op, "WIDE") &&
            o[a + 2].kind == SG_SASS_OP_REG && !o[a + 2].neg && !o[a + 2].inv && !o[a + 2].abs) {
            /* IMAD.MOV.U32 d, RZ, RZ, s: a move, which keeps a high word a high word */
            wr32(x, st, &o[0], rdslot(x, st, &o[a + 2], 0, g), g);
            return;
        }
        val_t va = rd32(x, st, &o[a], g), vb = rd32(x, st, &o[a + 1], g);
        if (sg_op_has(op, "WIDE")) {
            val_t vc = rd64(x, st, &o[a + 2], g);
            val_t prod = arith_mul(&va, &vb);
            /* the 64-bit product of two exact 32-bit values is exact */
            bool sgn = !sg_op_has(op, "U32");
            if (sg_val_exact32(&va, sgn) && sg_val_exact32(&vb, sgn) && prod.kind != V_TOP)
                prod.kind = V_VAL;
            else
                prod = ext32(prod);
            val_t r = arith_add(&prod, &vc);
            r.flags |= prod.flags & F_W32;
            wr64(x, st, &o[0], &r, g);
            return;
        }
        val_t vc = rd32(x, st, &o[a + 2], g);
        val_t prod = arith_mul(&va, &vb);
        val_t r = arith_add(&prod, &vc);
        /* the low word of a 64-bit value times a constant (IMAD.SHL) is the
         * low word of the 64-bit product */
        int64_t kc;
        if (r.kind == V_VAL && !carry_out && o[a].kind == SG_SASS_OP_REG &&
            !sg_op_zero_reg(&o[a]) && !o[a].neg && rdslot(x, st, &o[a], 0, g).kind == V_LO &&
            vb.kind == V_VAL && sg_poly_is_const(&vb.p, &kc) && sg_op_zero_reg(&o[a + 2]))
            r.kind = V_LO;
        wr32(x, st, &o[0], r, g);
        return;
    }

    if (sg_op_is(op, "IADD3") || sg_op_is(op, "UIADD3") || sg_op_is(op, "IADD") ||
        sg_op_is(op, "UIADD") || sg_op_is(op, "VIADD") || sg_op_is(op, "UVIADD") ||
        sg_op_is(op, "IADD32I")) {
        uint8_t a = skip_preds(in, 1);
        uint8_t ncarry = count_carries(in, a);
        if (a >= n)
            goto generic;
        /* operands from a to the first predicate after it */
        uint8_t e = a;
        while (e < n && o[e].kind != SG_SASS_OP_PRED)
            e++;
        if (sg_op_has(op, "X")) {
            for (uint8_t i = e; i < n; i++)
                if (o[i].kind == SG_SASS_OP_PRED && !o[i].inv && pred_index(&o[i]) != 7 &&
                    pred_index(&o[i]) != 15) {
                    const pred_t *p = pred_get(st, pred_index(&o[i]), g);
                    if (p->kind == P_CARRY && ncarry == 0) {
                        val_t v = hi_from_carry(x, st, in, a, p, g);
                        wr32(x, st, &o[0], v, g);
                        return;
                    }
                    if (p->kind == P_ZERO && ncarry == 0) {
                        /* no carry comes in: a plain 32-bit add */
                        val_t s = sg_val_const(0);
                        for (uint8_t k = a; k < e; k++) {
                            val_t v = rd32(x, st, &o[k], g);
                            s = arith_add(&s, &v);
                        }
                        wr32(x, st, &o[0], s, g);
                        return;
                    }
                    break;
                }
            if (ncarry == 0) {
                high_word_unknown(x, st, in, a, g);
                return;
            }
            goto generic;
        }
        if (sg_op_has(op, "64")) {
            val_t s = sg_val_const(0);
            for (uint8_t i = a; i < e; i++) {
                val_t v = rd64(x, st, &o[i], g);
                s = arith_add(&s, &v);
            }
            wr64(x, st, &o[0], &s, g);
            return;
        }
        val_t s = sg_val_const(0);
        bool lo = false;
        /* operands that may be nonzero, negated ones, and a high word added to zeros */
        uint8_t nonzero = 0, neg = 0;
        int hi_op = -1;
        uint16_t narrow = 0;
        for (uint8_t i = a; i < e; i++) {
            bool is_lo = false;
            if (o[i].kind == SG_SASS_OP_REG && !sg_op_zero_reg(&o[i])) {
                val_t raw = rdslot(x, st, &o[i], 0, g);
                if (raw.kind == V_LO)
                    lo = is_lo = true;
                if (raw.kind == V_HI && !o[i].neg && !o[i].inv)
                    hi_op = i;
            }
            val_t v = rd32(x, st, &o[i], g);
            if (!is_lo && narrow32(&v))
                narrow = F_W32;
            int64_t c;
            if (!(v.kind != V_TOP && sg_poly_is_const(&v.p, &c) && c == 0))
                nonzero++;
            neg += o[i].neg || o[i].inv; /* -0 is ~0 + 1: it carries */
            s = arith_add(&s, &v);
        }
        if (hi_op >= 0 && nonzero == 1 && ncarry == 0) {
            /* a high word plus zeros: a move, which keeps it a high word */
            wr32(x, st, &o[0], rdslot(x, st, &o[hi_op], 0, g), g);
            return;
        }
        if (lo && s.kind == V_VAL)
            s.kind = V_LO;
        wr32(x, st, &o[0], s, g);
        for (uint8_t i = 1; i < a; i++) {
            /* one unnegated 32-bit operand never carries */
            pred_t p = {.kind = nonzero <= 1 && !neg ? P_ZERO : s.kind == V_TOP ? P_TOP : P_CARRY,
                        .p = s.p};
            p.flags = (s.flags & F_W32) | narrow;
            pred_write(x, st, pred_index(&o[i]), &p, g);
        }
        return;
    }

    if (sg_op_is(op, "LEA") || sg_op_is(op, "ULEA")) {
        uint8_t a = skip_preds(in, 1);
        uint8_t ncarry = count_carries(in, a);
        if (sg_op_has(op, "HI")) {
            if (sg_op_has(op, "X") && ncarry == 0) {
                const sg_sass_operand_t *cp = &o[n - 1];
                if (cp->kind == SG_SASS_OP_PRED && !cp->inv) {
                    const pred_t *p = pred_get(st, pred_index(cp), g);
                    if (p->kind == P_CARRY) {
                        val_t v = hi_from_carry(x, st, in, a, p, g);
                        v.flags |= sg_op_has(op, "SX32") ? F_W32 : 0;
                        wr32(x, st, &o[0], v, g);
                        return;
                    }
                }
                high_word_unknown(x, st, in, a, g);
                return;
            }
            goto generic;
        }
        if (a + 3 > n || o[a + 2].kind != SG_SASS_OP_IMM)
            goto generic;
        val_t va = rd32(x, st, &o[a], g), vb = rd32(x, st, &o[a + 1], g);
        bool lo = false;
        if (o[a + 1].kind == SG_SASS_OP_REG && !sg_op_zero_reg(&o[a + 1]) &&
            rdslot(x, st, &o[a + 1], 0, g).kind == V_LO)
            lo = true;
        bool a_lo = o[a].kind == SG_SASS_OP_REG && !sg_op_zero_reg(&o[a]) &&
                    rdslot(x, st, &o[a], 0, g).kind == V_LO;
        uint16_t narrow = (!a_lo && narrow32(&va)) || (!lo && narrow32(&vb)) ? F_W32 : 0;
        val_t sh = arith_shl(&va, o[a + 2].imm);
        val_t s = arith_add(&sh, &vb);
        if (lo && s.kind == V_VAL)
            s.kind = V_LO;
        wr32(x, st, &o[0], s, g);
        for (uint8_t i = 1; i < a; i++) {
            pred_t p = {.kind = s.kind == V_TOP ? P_TOP : P_CARRY, .p = s.p};
            p.flags = (s.flags & F_W32) | narrow;
            pred_write(x, st, pred_index(&o[i]), &p, g);
        }
        return;
    }

    if (sg_op_is(op, "SHF") || sg_op_is(op, "USHF")) {
        if (n < 4 || o[2].kind != SG_SASS_OP_IMM)
            goto generic;
        int64_t s = o[2].imm;
        if (sg_op_has(op, "L") && sg_op_has(op, "U32") && !sg_op_has(op, "HI")) {
            val_t va = rd32(x, st, &o[1], g);
            bool lo = o[1].kind == SG_SASS_OP_REG && !sg_op_zero_reg(&o[1]) &&
                      rdslot(x, st, &o[1], 0, g).kind == V_LO;
            val_t r = arith_shl(&va, s);
            if (lo && r.kind == V_VAL)
                r.kind = V_LO;
            wr32(x, st, &o[0], r, g);
            return;
        }
        if (sg_op_has(op, "L") && sg_op_has(op, "U64") && sg_op_has(op, "HI")) {
            val_t lo = rdslot(x, st, &o[1], 0, g);
            val_t hi = rdslot(x, st, &o[3], 0, g);
            if (o[1].neg || o[1].inv || o[3].neg || o[3].inv)
                goto generic;
            if (lo.kind == V_VAL && hi.kind == V_VAL) {
                int64_t c;
                if (!(sg_poly_is_const(&hi.p, &c) && c == 0))
                    goto generic;
            }
            val_t w = sg_val_pair(&lo, &hi);
            if (w.kind == V_TOP)
                goto generic;
            val_t r = arith_shl(&w, s);
            if (r.kind == V_TOP)
                goto generic;
            r.kind = V_HI;
            wr32(x, st, &o[0], r, g);
            return;
        }
        if (sg_op_has(op, "R") && sg_op_has(op, "S32") && sg_op_has(op, "HI") && s == 31 &&
            sg_op_zero_reg(&o[1])) {
            /* the sign word of o[3]: the high word of its sign extension */
            val_t v = rd32(x, st, &o[3], g);
            if (v.kind == V_TOP)
                goto generic;
            v = ext32(v);
            v.kind = V_HI;
            wr32(x, st, &o[0], v, g);
            return;
        }
        {
            val_t t = with_prov(F_DIV, NULL, NULL, NULL);
            val_t v = rd32(x, st, &o[1], g), w = rd32(x, st, &o[3], g);
            sg_val_merge_prov(&t, &v, false);
            sg_val_merge_prov(&t, &w, false);
            t.flags = F_DIV;
            wr32(x, st, &o[0], t, g);
        }
        return;
    }

    if (sg_op_is(op, "SEL") || sg_op_is(op, "USEL")) {
        if (n < 4 || o[3].kind != SG_SASS_OP_PRED)
            goto generic;
        int pi = pred_index(&o[3]);
        bool always_a = (pi == 7 || pi == 15) && !o[3].inv;
        bool always_b = (pi == 7 || pi == 15) && o[3].inv;
        if (sg_op_has(op, "64")) {
            val_t a = rd64(x, st, &o[1], g), b = rd64(x, st, &o[2], g);
            val_t r = always_a ? a : always_b ? b : sg_val_join(&a, &b);
            wr64(x, st, &o[0], &r, g);
            return;
        }
        val_t a = rd32(x, st, &o[1], g), b = rd32(x, st, &o[2], g);
        if (!always_a && !always_b && g->id < 0 && o[0].kind == SG_SASS_OP_REG) {
            /* d = P ? a : b is b under the guard !P and a otherwise (each
             * read as an instruction under that guard reads it) */
            gref_t sg = {(int16_t)(pi * 2 + (o[3].inv ? 0 : 1)), st->preds[pi].ver};
            guard_t gb = make_guard(st, sg.id), ga = make_guard(st, (int16_t)(sg.id ^ 1));
            a = rd32(x, st, &o[1], &ga);
            b = rd32(x, st, &o[2], &gb);
            int as = o[1].kind == SG_SASS_OP_REG && !o[1].neg && !o[1].inv && !o[1].abs
                         ? slot_of(x, &o[1], 0)
                         : -1;
            slot_select(x, st, slot_of(x, &o[0], 0), &sg, &b, &a, as >= 0 ? st->slots[as].sver : 0);
            return;
        }
        wr32(x, st, &o[0], always_a ? a : always_b ? b : sg_val_join(&a, &b), g);
        return;
    }

    if ((sg_op_is(op, "LOP3") || sg_op_is(op, "ULOP3")) && n == 6 && sg_op_zero_reg(&o[3]) &&
        o[4].kind == SG_SASS_OP_IMM && o[4].imm == 0xc0 &&
        ((o[1].kind == SG_SASS_OP_REG && o[2].kind == SG_SASS_OP_IMM) ||
         (o[2].kind == SG_SASS_OP_REG && o[1].kind == SG_SASS_OP_IMM))) {
        /* x & (2^k - 1): x mod 2^k, exact whatever x's high bits (a
         * remainder the loop summaries can reason about) */
        const sg_sass_operand_t *r = o[1].kind == SG_SASS_OP_REG ? &o[1] : &o[2];
        int64_t mask = (o[1].kind == SG_SASS_OP_IMM ? &o[1] : &o[2])->imm;
        val_t v = rdslot(x, st, r, 0, g);
        uint16_t atom = 0;
        if ((v.kind == V_VAL || v.kind == V_LO) && !r->neg && !r->inv && mask > 0 &&
            mask < 0x80000000ll && !(mask & (mask + 1)))
            atom = sg_div_mod_atom(x, &v.p, (uint32_t)mask + 1);
        if (atom) {
            sg_poly_t p;
            sg_poly_atom(&p, atom);
            wr32(x, st, &o[0], sg_val_make(V_VAL, &p), g);
            return;
        }
        goto generic;
    }
    if ((sg_op_is(op, "LOP3") || sg_op_is(op, "ULOP3")) && n == 6 && sg_op_zero_reg(&o[1]) &&
        sg_op_zero_reg(&o[3]) && o[2].kind == SG_SASS_OP_REG && !o[2].neg && !o[2].inv &&
        o[4].kind == SG_SASS_OP_IMM && o[4].imm == 0x33) {
        /* ~b: -1 - b, word by word (the NOT of a 64-bit value's low or high
         * word is that word of its NOT) */
        val_t v = rdslot(x, st, &o[2], 0, g);
        if (v.kind != V_TOP) {
            sg_poly_t m1;
            sg_poly_const(&m1, -1);
            if (sg_poly_add(&v.p, &m1, &v.p, -1)) {
                prov_unbase(&v);
                wr32(x, st, &o[0], v, g);
                return;
            }
        }
        goto generic;
    }
    if ((sg_op_is(op, "LOP3") || sg_op_is(op, "ULOP3")) && n == 6 && sg_op_zero_reg(&o[3]) &&
        o[4].kind == SG_SASS_OP_IMM && (o[4].imm == 0xfc || o[4].imm == 0xfe) &&
        (o[1].kind == SG_SASS_OP_REG || o[1].kind == SG_SASS_OP_IMM) &&
        (o[2].kind == SG_SASS_OP_REG || o[2].kind == SG_SASS_OP_IMM)) {
        /* a | b where the bits cannot overlap is a + b: ctaid*128 | tid.x with
         * at most 128 threads (launch bounds), PyTorch's block offsets */
        val_t a = rd32(x, st, &o[1], g), b = rd32(x, st, &o[2], g);
        if (disjoint_or(x, &a, &b) || disjoint_or(x, &b, &a)) {
            wr32(x, st, &o[0], arith_add(&a, &b), g);
            return;
        }
        goto generic;
    }
    if ((sg_op_is(op, "PLOP3") || sg_op_is(op, "UPLOP3")) && sg_op_has(op, "LUT")) {
        plop3(x, st, in, g);
        return;
    }
    if (sg_op_is(op, "ISETP") || sg_op_is(op, "UISETP")) {
        if (n < 5 || o[0].kind != SG_SASS_OP_PRED || o[1].kind != SG_SASS_OP_PRED)
            goto generic;
        pred_t np = {0};
        bool ok;
        uint8_t c = cmp_of(op, &ok);
        bool wide64 = sg_op_has(op, "U64") || sg_op_has(op, "S64");
        bool uns = sg_op_has(op, "U32") || sg_op_has(op, "U64");
        const sg_sass_operand_t *comb = &o[4];
        int ci = comb->kind == SG_SASS_OP_PRED ? pred_index(comb) : -1;
        bool plain = ok && sg_op_has(op, "AND") && (ci == 7 || ci == 15) && !comb->inv;
        if (plain && sg_op_has(op, "EX")) {
            const sg_sass_operand_t *ex = &o[n - 1];
            if (n >= 6 && ex->kind == SG_SASS_OP_PRED && !ex->inv) {
                const pred_t *lo = pred_get(st, pred_index(ex), g);
                val_t ha = rdslot(x, st, &o[2], 0, g), hb = rdslot(x, st, &o[3], 0, g);
                if (o[2].kind == SG_SASS_OP_CBANK)
                    ha = cbank_val(x, &o[2], 0, false);
                if (o[3].kind == SG_SASS_OP_CBANK)
                    hb = cbank_val(x, &o[3], 0, false);
                if (o[2].kind == SG_SASS_OP_IMM)
                    ha = sg_val_const(o[2].imm);
                if (o[3].kind == SG_SASS_OP_IMM)
                    hb = sg_val_const(o[3].imm);
                if (lo->kind == P_CMP && !lo->c.wide) {
                    val_t la = sg_val_make(V_VAL, &lo->c.l), lb = sg_val_make(V_VAL, &lo->c.r);
                    val_t wa = sg_val_pair(&la, &ha), wb = sg_val_pair(&lb, &hb);
                    /* a 64-bit parameter compared in two words */
                    if (wa.kind != V_TOP && wb.kind != V_TOP && !o[2].neg && !o[3].neg) {
                        np.kind = P_CMP;
                        np.c.cmp = c;
                        np.c.uns = uns;
                        np.c.wide = true;
                        np.c.l = wa.p;
                        np.c.r = wb.p;
                    }
                }
            }
        } else if (plain) {
            val_t a, b;
            if (wide64) {
                a = rd64(x, st, &o[2], g);
                b = rd64(x, st, &o[3], g);
            } else {
                a = rd32(x, st, &o[2], g);
                b = rd32(x, st, &o[3], g);
            }
            int si = o[2].kind == SG_SASS_OP_REG && !o[2].neg && !o[2].inv && !o[2].abs
                         ? slot_of(x, &o[2], 0)
                         : -1;
            if (a.kind != V_TOP && b.kind != V_TOP) {
                np.kind = P_CMP;
                np.c.cmp = c;
                np.c.uns = uns;
                np.c.wide = wide64;
                np.c.l = a.p;
                np.c.r = b.p;
            } else if (si >= 0 && !wide64) {
                select_compare(st, si, c, uns, &b, &np);
            }
            if (si >= 0 && st->slots[si].sver) {
                np.lslot = (uint16_t)si;
                np.lsver = st->slots[si].sver;
            }
        }
        pred_write(x, st, pred_index(&o[0]), &np, g);
        pred_t t = {0};
        pred_write(x, st, pred_index(&o[1]), &t, g);
        return;
    }

generic:
    do_generic(x, st, in, g);
}

/* ---- blocks ------------------------------------------------------------------ */

static bool is_branch(const sg_sass_insn_t *in)
{
    return sg_op_is(in->op, "BRA");
}

static bool ends_block(const sg_sass_insn_t *in)
{
    return sg_op_is(in->op, "BRA") || sg_op_is(in->op, "EXIT") || sg_op_is(in->op, "RET") ||
           sg_op_is(in->op, "BRX") || sg_op_is(in->op, "JMX") || sg_op_is(in->op, "JMP") ||
           sg_op_is(in->op, "KILL");
}

static int64_t branch_target(const sg_sass_insn_t *in)
{
    for (int i = in->n_ops - 1; i >= 0; i--)
        if (in->ops[i].kind == SG_SASS_OP_LABEL || in->ops[i].kind == SG_SASS_OP_IMM)
            return in->ops[i].imm;
    return -1;
}

static uint32_t find_pc(const ctx_t *x, int64_t pc)
{
    uint32_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint32_t m = (lo + hi) / 2;
        if ((int64_t)x->in[m].pc < pc)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < x->n && (int64_t)x->in[lo].pc == pc ? lo : UINT32_MAX;
}

static int build_blocks(ctx_t *x)
{
    uint8_t *lead = calloc(x->n + 1, 1);
    x->blk_of = calloc(x->n ? x->n : 1, sizeof *x->blk_of);
    if (!lead || !x->blk_of) {
        free(lead);
        return SG_ENOMEM;
    }
    lead[0] = 1;
    for (uint32_t i = 0; i < x->n; i++) {
        const sg_sass_insn_t *in = &x->in[i];
        if (ends_block(in))
            lead[i + 1] = 1;
        if (is_branch(in)) {
            uint32_t t = find_pc(x, branch_target(in));
            if (t != UINT32_MAX)
                lead[t] = 1;
        }
    }
    uint32_t nb = 0;
    for (uint32_t i = 0; i < x->n; i++)
        nb += lead[i];
    x->blocks = calloc(nb ? nb : 1, sizeof *x->blocks);
    if (!x->blocks) {
        free(lead);
        return SG_ENOMEM;
    }
    uint32_t b = UINT32_MAX;
    for (uint32_t i = 0; i < x->n; i++) {
        if (lead[i]) {
            b = b == UINT32_MAX ? 0 : b + 1;
            x->blocks[b].first = i;
        }
        x->blocks[b].count++;
        x->blk_of[i] = b;
    }
    x->nblocks = nb;
    free(lead);
    for (uint32_t k = 0; k < nb; k++) {
        block_t *bk = &x->blocks[k];
        bk->succ[0] = bk->succ[1] = UINT32_MAX;
        bk->fact_pred[0] = bk->fact_pred[1] = -1;
        const sg_sass_insn_t *last = &x->in[bk->first + bk->count - 1];
        uint32_t next = k + 1 < nb ? k + 1 : UINT32_MAX;
        int gid = -1;
        if (last->guard >= 0 && last->guard != 7)
            gid = ((last->guard_uniform ? 8 : 0) + last->guard) * 2 + (last->guard_neg ? 1 : 0);
        if (gid < 0 && sg_op_is(last->op, "BRA") && last->n_ops > 1 &&
            last->ops[0].kind == SG_SASS_OP_PRED && last->ops[0].reg != 7)
            gid = pred_index(&last->ops[0]) * 2 + (last->ops[0].inv ? 1 : 0); /* BRA.U UP0, L */
        bool never = last->guard == 7 && last->guard_neg;
        if (never) {
            bk->succ[0] = next;
        } else if (sg_op_is(last->op, "BRA")) {
            int64_t tpc = branch_target(last);
            uint32_t t = find_pc(x, tpc);
            bool cond = last->guard >= 0 || sg_op_has(last->op, "DIV") ||
                        (last->n_ops > 1 && last->ops[0].kind == SG_SASS_OP_PRED);
            if (t == UINT32_MAX)
                escape(x, "branch out of the kernel", last->pc);
            else
                bk->succ[0] = x->blk_of[t];
            bk->fact_pred[0] = (int8_t)(cond ? (gid >= 0 ? gid : -2) : -1);
            if (cond) {
                bk->succ[1] = next;
                bk->fact_pred[1] = (int8_t)(gid >= 0 ? gid ^ 1 : -2);
            }
        } else if (sg_op_is(last->op, "EXIT") || sg_op_is(last->op, "KILL")) {
            if (last->guard >= 0) {
                bk->succ[0] = next;
                bk->fact_pred[0] = (int8_t)(gid >= 0 ? gid ^ 1 : -1);
            }
        } else if (sg_op_is(last->op, "RET") || sg_op_is(last->op, "BRX") ||
                   sg_op_is(last->op, "JMX") || sg_op_is(last->op, "JMP")) {
            if (last->guard >= 0) {
                bk->succ[0] = next;
                bk->fact_pred[0] = -2;
            }
        } else {
            bk->succ[0] = next;
        }
    }
    return 0;
}

/* ---- the fixpoint ---------------------------------------------------------------- */

void sg_flow_state_top(ctx_t *x, state_t *s, uint16_t flags)
{
    val_t t = sg_val_top(flags);
    for (uint32_t i = 0; i < x->nslots; i++) {
        s->slots[i].v = t;
        s->slots[i].alt = t;
        s->slots[i].g = -1;
        s->slots[i].gver = 0;
        s->slots[i].sver = s->slots[i].altver = 0;
    }
    memset(s->preds, 0, sizeof s->preds);
    s->nfacts = 0;
    s->nheld = 0;
    s->reached = true;
}

void sg_flow_state_copy(ctx_t *x, state_t *d, const state_t *s)
{
    slot_t *keep = d->slots;
    memcpy(keep, s->slots, x->nslots * sizeof *keep);
    *d = *s;
    d->slots = keep;
}

/* Join src into dst (entry state of block b); true when dst changed. */
/* Values that differ only where a path's facts pin an atom: when the
 * state c came from has a fact X == k and a with X := k is c, a holds on
 * both paths (the remainder loop's index i0 + R*S, and i0 on the path that
 * skipped it because R == 0). */
static bool join_by_fact(const val_t *a, const val_t *c, const state_t *cs, val_t *out)
{
    if (a->kind == V_TOP || a->kind != c->kind)
        return false;
    for (uint8_t i = 0; i < cs->nfacts; i++) {
        const cmp_t *f = &cs->facts[i];
        sg_poly_t d, k;
        if (f->cmp != C_EQ || !sg_poly_add(&d, &f->l, &f->r, -1) || d.n < 1 || d.n > 2)
            continue;
        /* d = X - k or X + (-k): one atom term with coefficient 1 and a constant */
        uint16_t atom = 0;
        int64_t kc = 0;
        bool ok = true;
        for (uint8_t t = 0; t < d.n; t++) {
            uint16_t at = sg_poly_term_atom(&d.t[t]);
            if (at && d.t[t].c == 1 && !atom)
                atom = at;
            else if (!sg_poly_degree(&d.t[t]))
                kc = -d.t[t].c;
            else
                ok = false;
        }
        sg_poly_t r;
        sg_poly_const(&k, kc);
        if (ok && atom && sg_poly_subst(&r, &a->p, atom, &k) && sg_poly_eq(&r, &c->p)) {
            *out = *a;
            sg_val_merge_prov(out, c, true);
            return true;
        }
    }
    return false;
}

static val_t join_values(const val_t *a, const state_t *as, const val_t *c, const state_t *cs)
{
    val_t r;
    if (a->kind != V_TOP && a->kind == c->kind && !sg_poly_eq(&a->p, &c->p) &&
        (join_by_fact(a, c, cs, &r) || join_by_fact(c, a, as, &r)))
        return r;
    return sg_val_join(a, c);
}

/* ---- joins: selects resolved along edges, and pinned paths ------------------

   A state arriving on an edge carries the guards that hold along it
   (held: the branch's predicate and what it implies). A slot written under
   one of them, or under its negation, is then one value (edge_slot).

   Pins: when the edge's predicate compared register R, unchanged since,
   R's value on this path satisfies that comparison (R >= X on the taken
   side of `ISETP.GE P0, R, X; @P0 BRA`). Joined with paths that do not
   say so, R becomes a select under a virtual predicate J of the joined
   block (J false: a pinned path, whose value satisfies the comparison; J
   true: the others): the next `ISETP.GE Q, R, X` false then implies J and
   so R's value from the other paths (select_compare). Virtual predicates
   and the identities (sver) they rest on live from a join to the next. */

/* The side the edge excludes becomes "no value" (F_NONE): the slot reads
 * as the other, and a join with the other edge of the same branch gives
 * the select back. */
static slot_t edge_slot(const state_t *s, const slot_t *c)
{
    slot_t r = *c;
    if (c->g < 0)
        return r;
    for (uint8_t i = 0; i < s->nheld; i++)
        if (s->held[i].ver == c->gver && (s->held[i].id == c->g || s->held[i].id == (c->g ^ 1))) {
            if (s->held[i].id == c->g)
                r.alt = sg_val_top(F_NONE);
            else
                r.v = sg_val_top(F_NONE);
            break;
        }
    if ((c->g >> 1) >= NPRED) { /* a virtual guard does not outlive its block */
        r.v = r.alt = sg_flow_slot_read(&r, NULL);
        r.g = -1;
        r.gver = 0;
    }
    return r;
}

/* The register the edge's own predicate pins, and how (k.l unused). */
static int edge_pin(ctx_t *x, const state_t *s, cmp_t *k)
{
    if (!s->nheld || (s->held[0].id >> 1) >= NPRED)
        return -1;
    const pred_t *R = &s->preds[s->held[0].id >> 1];
    if (R->ver != s->held[0].ver || R->kind != P_CMP || R->g || R->c.wide || !R->lsver ||
        R->lslot >= x->nslots || s->slots[R->lslot].sver != R->lsver)
        return -1;
    memset(k, 0, sizeof *k);
    k->cmp = (s->held[0].id & 1) ? sg_cmp_not(R->c.cmp) : R->c.cmp;
    k->uns = R->c.uns;
    k->r = R->c.r;
    return R->lslot;
}

/* The virtual predicate of d for pin k (made when new), -1 when all are taken. */
static int vpred_for(state_t *d, const cmp_t *k, uint32_t b)
{
    for (int i = 0; i < NVPRED; i++) {
        const pred_t *v = &d->preds[NPRED + i];
        if (v->kind == P_CMP && v->c.cmp == k->cmp && v->c.uns == k->uns && sg_poly_eq(&v->c.r, &k->r))
            return NPRED + i;
    }
    for (int i = 0; i < NVPRED; i++) {
        pred_t *v = &d->preds[NPRED + i];
        if (v->kind != P_TOP)
            continue;
        memset(v, 0, sizeof *v);
        v->kind = P_CMP;
        v->c = *k;
        v->ver = 0xc0000000u | (b << 3) | (uint32_t)i;
        return NPRED + i;
    }
    return -1;
}

/* A predicate as an entry state keeps it: no identity of a compared value,
 * no virtual guard (both belong to the block before). */
static void pred_entry(pred_t *p)
{
    p->lsver = 0;
    uint8_t n = 0;
    for (uint8_t i = 0; i < p->nimp; i++)
        if ((p->imp[i].id >> 1) < NPRED)
            p->imp[n++] = p->imp[i];
    p->nimp = n;
}

static bool pred_same(const pred_t *a, const pred_t *c)
{
    if (!(a->kind == c->kind && a->g == c->g && a->gver == c->gver && a->half == c->half &&
          a->nimp == c->nimp && (!a->nimp || a->imp_neg == c->imp_neg) &&
          ((a->kind == P_CMP && sg_cmp_eq(&a->c, &c->c)) ||
           (a->kind == P_CARRY && sg_poly_eq(&a->p, &c->p)) || a->kind == P_ZERO)))
        return false;
    for (uint8_t i = 0; i < a->nimp; i++)
        if (a->imp[i].id != c->imp[i].id || a->imp[i].ver != c->imp[i].ver)
            return false;
    return true;
}

static void slot_plain(slot_t *r, const val_t *v)
{
    r->v = r->alt = *v;
    r->g = -1;
    r->gver = 0;
}

/* Slot i of d (entry of block b; first: d held nothing yet) joined with c
 * arriving in s, pinned by k when pinned. An arriving select whose alt
 * satisfies a comparison (slot_alt_cond: `@!Q R = R + 128` after Q = R >=
 * X) counts as pinned for alt and as not pinned for its other value. */
static slot_t join_slot(state_t *d, const state_t *s, const slot_t *c, bool first, uint32_t i,
                        bool pinned, const cmp_t *k0, uint32_t b)
{
    slot_t r;
    val_t cv = sg_flow_slot_read(c, NULL);
    const slot_t *a = &d->slots[i];
    cmp_t k = *k0, ks;
    bool split = !pinned && c->g >= 0 && slot_alt_cond(s, c, &ks);
    if (split)
        k = ks;
    const val_t *pv = split ? &c->alt : &cv; /* the pinned part */
    static const val_t none = {.kind = V_TOP, .flags = F_NONE};
    const val_t *uv = split ? &c->v : pinned ? &none : &cv; /* the other */
    int vp;
    if (first) {
        r = *c;
        if (pinned && (vp = vpred_for(d, &k, b)) >= 0) {
            r.g = (int16_t)(vp * 2);
            r.gver = d->preds[vp].ver;
            r.v = none;
            r.alt = cv;
        }
    } else if (a->g >= 2 * NPRED) {
        const pred_t *V = &d->preds[a->g >> 1];
        val_t av = sg_flow_slot_read(a, NULL);
        r = *a;
        if ((pinned || split) && same_bound(&V->c, &k)) {
            r.v = sg_val_join(&a->v, uv);
            r.alt = sg_val_join(&a->alt, pv);
        } else if (pinned) {
            val_t j = sg_val_join(&av, &cv);
            slot_plain(&r, &j);
        } else {
            r.v = sg_val_join(&a->v, &cv);
        }
        if (r.g >= 0 && r.v.kind == V_TOP && !val_none(&r.v)) {
            val_t j = sg_val_join(&av, &cv);
            slot_plain(&r, &j); /* a select whose other value is not known says nothing */
        }
    } else if ((pinned || split) && a->g < 0 && a->v.kind != V_TOP &&
               sg_val_join(&a->v, uv).kind != V_TOP && sg_val_join(&a->v, &cv).kind == V_TOP &&
               (vp = vpred_for(d, &k, b)) >= 0) {
        r = *a;
        r.g = (int16_t)(vp * 2);
        r.gver = d->preds[vp].ver;
        r.v = sg_val_join(&a->v, uv);
        r.alt = *pv;
    } else if (a->g == c->g && a->gver == c->gver) {
        r = *a;
        r.v = a->g < 0 ? join_values(&a->v, d, &c->v, s) : sg_val_join(&a->v, &c->v);
        if (a->g >= 0)
            r.alt = sg_val_join(&a->alt, &c->alt);
    } else {
        val_t va = sg_flow_slot_read(a, NULL);
        val_t j = sg_val_join(&va, &cv);
        r = *a;
        slot_plain(&r, &j);
    }
    r.sver = 0x80000000u | (b << 10) | i; /* nslots <= 1024 */
    r.altver = 0;
    return r;
}

/* The join; on a first visit with steal set, d takes s's slots instead of a
 * copy of them (s's slots are then d's old buffer: garbage). */
static bool state_join(ctx_t *x, state_t *d, state_t *steal, const state_t *s, uint32_t b)
{
    bool first = !d->reached;
    cmp_t k;
    int pin = edge_pin(x, s, &k);
    if (first) {
        if (steal) {
            slot_t *mine = d->slots;
            *d = *steal;
            steal->slots = mine;
        } else {
            sg_flow_state_copy(x, d, s);
        }
        memset(&d->preds[NPRED], 0, NVPRED * sizeof d->preds[0]);
        for (int p = 0; p < NPRED; p++)
            pred_entry(&d->preds[p]);
        for (uint32_t i = 0; i < x->nslots; i++) {
            slot_t *a = &d->slots[i];
            if (a->g >= 0 || pin == (int)i) {
                slot_t c = a->g >= 0 ? edge_slot(s, a) : *a;
                *a = join_slot(d, s, &c, true, i, pin == (int)i, &k, b);
            }
            a->sver = 0x80000000u | (b << 10) | i;
            a->altver = 0;
        }
        d->nheld = 0;
        return true;
    }
    bool ch = false;
    for (uint32_t i = 0; i < x->nslots; i++) {
        slot_t *a = &d->slots[i];
        const slot_t *c = &s->slots[i];
        slot_t ce;
        if (c->g >= 0) {
            ce = edge_slot(s, c);
            c = &ce;
        }
        if (a->g < 0 && c->g < 0 && pin != (int)i) {
            /* the common case: two plain values */
            val_t v = join_values(&a->v, d, &c->v, s);
            if (!sg_val_eq(&v, &a->v)) {
                a->v = v;
                ch = true;
            }
            continue;
        }
        slot_t r = join_slot(d, s, c, false, i, pin == (int)i, &k, b);
        if (!(r.g == a->g && r.gver == a->gver && sg_val_eq(&r.v, &a->v) &&
              (a->g < 0 || sg_val_eq(&r.alt, &a->alt)))) {
            *a = r;
            ch = true;
        }
    }
    d->nheld = 0;
    for (int p = 0; p < NPRED; p++) {
        pred_t *a = &d->preds[p];
        pred_t c = s->preds[p];
        if (a->ver == c.ver)
            continue;
        pred_entry(&c);
        uint32_t jv = 0x80000000u | (b << 4) | (uint32_t)p;
        pred_t r = pred_same(a, &c) ? *a : (pred_t){0};
        r.ver = jv;
        if (a->ver != jv || a->kind != r.kind) {
            *a = r;
            ch = true;
        }
    }
    uint8_t nf = 0;
    cmp_t keep[MAXFACT];
    for (uint8_t i = 0; i < d->nfacts; i++)
        for (uint8_t j = 0; j < s->nfacts; j++)
            if (sg_cmp_eq(&d->facts[i], &s->facts[j])) {
                keep[nf++] = d->facts[i];
                break;
            }
    /* Threads here = the union over the paths. When one path's facts are a
     * subset of the other's, or the two differ by one complementary fact
     * (an if/else closing), the common facts describe that union exactly. */
    uint8_t xd = (uint8_t)(d->nfacts - nf), xs = (uint8_t)(s->nfacts - nf);
    bool lost = s->cond_unknown;
    if (xd && xs) {
        lost = true;
        if (xd == 1 && xs == 1) {
            const cmp_t *fd = NULL, *fs = NULL;
            for (uint8_t i = 0; i < d->nfacts; i++) {
                bool common = false;
                for (uint8_t j = 0; j < nf; j++)
                    common |= sg_cmp_eq(&d->facts[i], &keep[j]);
                if (!common)
                    fd = &d->facts[i];
            }
            for (uint8_t i = 0; i < s->nfacts; i++) {
                bool common = false;
                for (uint8_t j = 0; j < nf; j++)
                    common |= sg_cmp_eq(&s->facts[i], &keep[j]);
                if (!common)
                    fs = &s->facts[i];
            }
            if (fd && fs) {
                cmp_t neg = *fs;
                neg.cmp = sg_cmp_not(neg.cmp);
                lost = !sg_cmp_eq(fd, &neg);
            }
        }
    }
    if (nf != d->nfacts) {
        memcpy(d->facts, keep, nf * sizeof *keep);
        d->nfacts = nf;
        ch = true;
    }
    if (lost && !d->cond_unknown) {
        d->cond_unknown = true; /* threads get here under conditions no longer listed */
        ch = true;
    }
    return ch;
}

bool sg_flow_state_join(ctx_t *x, state_t *d, const state_t *s, uint32_t b)
{
    return state_join(x, d, NULL, s, b);
}

void sg_flow_run_block(ctx_t *x, state_t *st, uint32_t b)
{
    const block_t *bk = &x->blocks[b];
    if (x->ndivs)
        sg_div_block_start(x, st, b);
    for (uint32_t i = 0; i < bk->count && !x->err; i++) {
        step(x, st, bk->first + i);
    }
    if (x->ndivs)
        sg_div_block_end(x, st, b);
}

/* Is this block only padding (NOPs, a branch to itself)? */
static bool is_padding(const ctx_t *x, uint32_t b)
{
    const block_t *bk = &x->blocks[b];
    for (uint32_t i = 0; i < bk->count; i++) {
        const sg_sass_insn_t *in = &x->in[bk->first + i];
        if (sg_op_is(in->op, "NOP"))
            continue;
        if (sg_op_is(in->op, "BRA") && branch_target(in) == (int64_t)in->pc)
            continue;
        return false;
    }
    return true;
}

void sg_flow_edge_facts(ctx_t *x, state_t *st, uint32_t b, int k)
{
    int8_t fp = x->blocks[b].fact_pred[k];
    cmp_t f;
    if (fp >= 0 && sg_flow_pred_fact(st, fp, &f)) {
        if (!sg_flow_add_fact(st, &f))
            st->cond_unknown = true;
    } else if (fp >= 0 && (fp >> 1) < NPRED) {
        /* a predicate not read (a float comparison): this edge's outcome of
         * block b's branch, opaque, so that where both edges meet again the
         * facts are whole (a path back to b passes its loop's header, whose
         * entry path drops it) */
        memset(&f, 0, sizeof f);
        sg_term_t t = {.c = (int64_t)b + 1, .at = {0, 0, 0, (uint16_t)(A_OPQ | (fp >> 1))}};
        f.l.n = 1;
        f.l.t[0] = t;
        f.cmp = (fp & 1) ? C_EQ : C_NE;
        if (!sg_flow_add_fact(st, &f))
            st->cond_unknown = true;
    } else if (fp != -1) {
        st->cond_unknown = true;
    }
    st->nheld = 0;
    if (fp >= 0) {
        /* the guard holds along this edge, and what it implies */
        st->held[st->nheld++] = (gref_t){fp, st->preds[fp >> 1].ver};
        const pred_t *p = pred_get(st, fp >> 1, NULL);
        if (p->nimp && p->imp_neg == (fp & 1))
            for (uint8_t i = 0; i < p->nimp && st->nheld < NHELD; i++)
                st->held[st->nheld++] = p->imp[i];
    }
    (void)x;
}

/* One forward pass to the fixed point from the kernel entry, summarized
 * loops applied (sass_loop.c). cur and scratch are working states. */
static int flow_pass(ctx_t *x, state_t *in, uint8_t *dirty, state_t *cur, state_t *scratch,
                     uint64_t *work)
{
    for (uint32_t b = 0; b < x->nblocks; b++) {
        in[b].reached = false;
        in[b].nfacts = 0;
        in[b].cond_unknown = false;
        dirty[b] = 0;
    }
    if (!x->nblocks)
        return 0;
    sg_flow_state_top(x, &in[0], 0);
    dirty[0] = 1;
    /* bounds: visits per block (joins only go up a short lattice, 2-4 are
     * typical), and slot copies in all (~0.3 ns each: a few seconds at most) */
    uint64_t visits = 0, cap = (uint64_t)x->nblocks * 16 + 256;
    const uint64_t work_cap = 200000000ull;
    bool any = true;
    while (any) {
        any = false;
        for (uint32_t b = 0; b < x->nblocks; b++) {
            if (!dirty[b])
                continue;
            dirty[b] = 0;
            any = true;
            *work += x->nslots + x->blocks[b].count * 8u;
            if (++visits > cap || *work > work_cap)
                return SG_ELIMIT;
            sg_flow_state_copy(x, cur, &in[b]);
            sg_flow_run_block(x, cur, b);
            for (int k = 0; k < 2; k++) {
                uint32_t s = x->blocks[b].succ[k];
                if (s == UINT32_MAX)
                    continue;
                uint8_t nf0 = cur->nfacts;
                bool cu0 = cur->cond_unknown;
                sg_flow_edge_facts(x, cur, b, k);
                const state_t *j = x->nloops ? sg_loops_edge(x, b, s, cur, scratch, in, dirty) : cur;
                /* cur is not read after its last edge (the next block copies
                 * into it): a first visit there takes its slots, no copy */
                bool last = k == 1 || x->blocks[b].succ[1] == UINT32_MAX;
                if (j && state_join(x, &in[s], last && j == cur ? cur : NULL, j, s))
                    dirty[s] = 1;
                cur->nfacts = nf0;
                cur->cond_unknown = cu0;
                cur->nheld = 0;
            }
        }
        if (x->err)
            return x->err;
    }
    return 0;
}

static int fixpoint(ctx_t *x)
{
    size_t ss = x->nslots * sizeof(slot_t);
    if (x->nblocks && ss > (512u << 20) / x->nblocks)
        return SG_ELIMIT;
    state_t *in = calloc(x->nblocks ? x->nblocks : 1, sizeof *in);
    slot_t *mem = calloc((size_t)x->nblocks + 2, ss ? ss : 1);
    uint8_t *dirty = calloc(x->nblocks ? x->nblocks : 1, 1);
    int rc = 0;
    if (!in || !mem || !dirty) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t b = 0; b < x->nblocks; b++)
        in[b].slots = (slot_t *)((char *)mem + ss * b);
    state_t cur = {.slots = (slot_t *)((char *)mem + ss * x->nblocks)};
    state_t scratch = {.slots = (slot_t *)((char *)mem + ss * (x->nblocks + 1))};
    uint64_t work = 0;
    rc = flow_pass(x, in, dirty, &cur, &scratch, &work);
    /* Loop summaries from the fixed states, then passes with them until the
     * states their summaries came from no longer change (a summary holds
     * only for the entry state it was proven from); at the bound, none. */
    for (uint32_t pass = 0; rc == 0 && x->nloops; pass++) {
        bool changed = false;
        rc = sg_loops_update(x, in, &changed);
        if (rc || !changed)
            break;
        if (pass > x->nloops + 2) {
            sg_loops_drop(x);
            rc = flow_pass(x, in, dirty, &cur, &scratch, &work);
            break;
        }
        rc = flow_pass(x, in, dirty, &cur, &scratch, &work);
    }
    if (rc)
        goto out;
    /* final pass: record accesses from the fixed states; unreached code from TOP */
    x->final = true;
    for (uint32_t b = 0; b < x->nblocks && !x->err; b++) {
        if (in[b].reached) {
            /* in place: nothing reads in[b] after its final run */
            sg_flow_run_block(x, &in[b], b);
            continue;
        }
        if (is_padding(x, b))
            continue;
        sg_flow_state_top(x, &cur, F_UNREACHED | F_ADDPTR);
        sg_flow_run_block(x, &cur, b);
    }
    rc = x->err;
out:
    free(in);
    free(mem);
    free(dirty);
    return rc;
}

/* ---- entry point --------------------------------------------------------------------- */

uint32_t sg_sass_default_param_base(uint32_t arch)
{
    if (arch >= 100)
        return 0x380;
    if (arch >= 90)
        return 0x210;
    if (arch >= 75)
        return 0x160;
    return 0;
}

static int cmp_use(const void *a, const void *b)
{
    const sg_sass_param_use_t *x = a, *y = b;
    return (int)x->offset - (int)y->offset;
}

static int summarize(sg_sass_kernel_t *k, ctx_t *x)
{
    k->certain = !x->escaped;
    if (x->escaped)
        snprintf(k->uncertain_reason, sizeof k->uncertain_reason, "%s", x->escape_reason);
    uint32_t cap = 0;
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        sg_sass_access_t *a = &k->accesses[i];
        if (a->kind != SG_SASS_LOAD && a->base < 0 && k->certain) {
            k->certain = false;
            snprintf(k->uncertain_reason, sizeof k->uncertain_reason,
                     "%s at 0x%x writes through an unattributed address", a->op, a->pc);
        }
        for (uint32_t c = 0; c < a->n_candidates; c++) {
            uint32_t j = 0;
            while (j < k->n_params && k->params[j].offset != a->candidates[c])
                j++;
            if (j == k->n_params) {
                if (k->n_params == cap) {
                    uint32_t nc = cap ? cap * 2 : 8;
                    sg_sass_param_use_t *np = realloc(k->params, nc * sizeof *np);
                    if (!np)
                        return SG_ENOMEM;
                    k->params = np;
                    cap = nc;
                }
                memset(&k->params[j], 0, sizeof k->params[j]);
                k->params[j].offset = a->candidates[c];
                k->n_params++;
            }
            k->params[j].uses |= a->kind;
            if (a->base == (int32_t)a->candidates[c])
                k->params[j].base_uses |= a->kind;
        }
    }
    if (k->n_params)
        qsort(k->params, k->n_params, sizeof *k->params, cmp_use);
    return 0;
}

/* The pcs of the functions named as the 64-bit division: the target's (raw
 * listings, from the cubin's symbols), else the listing's function labels
 * inside this kernel's section. */
static int division_targets(ctx_t *x, const sg_sass_listing_t *l, uint32_t first,
                            const sg_sass_target_t *t)
{
    static const char div_u64[] = "__cuda_sm20_div_u64";
    uint32_t n = t->n_div_u64_targets;
    int64_t f = -1;
    if (!t->call_targets)
        for (uint32_t i = 0; i < l->n_funcs; i++)
            if (l->funcs[i].first == first)
                f = i;
    for (uint32_t i = 0; f >= 0 && i < l->n_syms; i++)
        n += l->syms[i].func == (uint32_t)f;
    if (!n)
        return 0;
    x->div_pcs = malloc(n * sizeof *x->div_pcs);
    if (!x->div_pcs)
        return SG_ENOMEM;
    for (uint32_t i = 0; t->div_u64_targets && i < t->n_div_u64_targets; i++)
        x->div_pcs[x->n_div_pcs++] = t->div_u64_targets[i] + x->pc0;
    for (uint32_t i = 0; f >= 0 && i < l->n_syms; i++) {
        const char *nm = l->syms[i].name;
        size_t len = strlen(nm);
        if (l->syms[i].func == (uint32_t)f && len >= sizeof div_u64 - 1 &&
            !strcmp(nm + len - (sizeof div_u64 - 1), div_u64))
            x->div_pcs[x->n_div_pcs++] = l->syms[i].pc;
    }
    return 0;
}

int sg_sass_analyze(const sg_sass_listing_t *l, uint32_t first, uint32_t count, uint32_t pc0,
                    const char *name, const sg_sass_target_t *target, sg_sass_kernel_t *out)
{
    if (!out)
        return SG_EINVAL;
    memset(out, 0, sizeof *out);
    if (name && !(out->name = strdup(name)))
        return SG_ENOMEM;
    out->status = SG_SASS_ANALYSED;
    if (!l || !target || first > l->n_insns || count > l->n_insns - first) {
        out->status = SG_SASS_NO_KERNEL;
        snprintf(out->reason, sizeof out->reason, "unknown: no such instruction range");
        return SG_EINVAL;
    }
    ctx_t x = {.in = l->insns ? l->insns + first : NULL, .n = count, .pc0 = pc0, .out = out};
    x.arch = target->arch;
    x.param_base = target->param_base ? target->param_base : sg_sass_default_param_base(target->arch);
    x.param_size = target->param_size;
    x.call_targets = target->call_targets;
    x.n_call_targets = target->n_call_targets;
    x.benign_c4 = target->benign_c4;
    x.n_benign_c4 = target->n_benign_c4;
    x.c4_offsets = target->c4_symbol_offsets;
    x.c4_names = target->c4_symbol_names;
    x.n_c4 = target->c4_symbol_offsets && target->c4_symbol_names ? target->n_c4_symbols : 0;
    memcpy(x.max_ntid, target->max_ntid, sizeof x.max_ntid);
    x.ntid_base = target->arch >= 100 ? 0x360 : 0;
    out->arch = x.arch;
    out->param_base = x.param_base;
    out->param_size = x.param_size;
    out->n_instructions = count;
    if (!x.param_base) {
        out->status = SG_SASS_REJECTED;
        snprintf(out->reason, sizeof out->reason, "unknown: no parameter base known for sm_%u",
                 target->arch);
        return 0;
    }
    for (uint32_t i = 0; i + 1 < count; i++)
        if (x.in[i + 1].pc <= x.in[i].pc) {
            out->status = SG_SASS_REJECTED;
            snprintf(out->reason, sizeof out->reason,
                     "unknown: instruction offsets are not increasing at 0x%x", x.in[i + 1].pc);
            return 0;
        }
    uint32_t maxr = 0, maxu = 0;
    for (uint32_t i = 0; i < count; i++)
        for (uint8_t k = 0; k < x.in[i].n_ops; k++) {
            const sg_sass_operand_t *o = &x.in[i].ops[k];
            if (o->kind == SG_SASS_OP_REG || o->kind == SG_SASS_OP_MEM) {
                if (o->reg != 0xffff) {
                    if (o->uniform && o->reg != 63 && o->reg > maxu)
                        maxu = o->reg;
                    if (!o->uniform && o->reg != 255 && o->reg > maxr)
                        maxr = o->reg;
                }
                if (o->kind == SG_SASS_OP_MEM && o->reg2 != 0xffff && o->reg2 != 63 &&
                    o->reg2 > maxu)
                    maxu = o->reg2;
            }
        }
    x.nr = maxr + 8 > 255 ? 255 : maxr + 8;
    x.nu = maxu + 8 > 63 ? 63 : maxu + 8;
    x.nslots = x.nr + x.nu;
    int rc = build_blocks(&x);
    if (rc == 0)
        rc = division_targets(&x, l, first, target);
    if (rc == 0)
        rc = sg_div_find(&x);
    if (rc == 0)
        rc = sg_loops_find(&x);
    if (rc == 0)
        rc = fixpoint(&x);
    if (rc == 0)
        rc = summarize(out, &x);
    sg_loops_free(&x);
    free(x.div_pcs);
    free(x.divs);
    free(x.blocks);
    free(x.blk_of);
    if (rc == SG_ELIMIT) {
        free(out->accesses);
        out->accesses = NULL;
        out->n_accesses = 0;
        out->status = SG_SASS_TOO_COMPLEX;
        snprintf(out->reason, sizeof out->reason,
                 "unknown: kernel over the analysis limits (%u instructions)", count);
        return 0;
    }
    if (rc) {
        out->status = SG_SASS_TOO_COMPLEX;
        snprintf(out->reason, sizeof out->reason, "unknown: out of memory");
    }
    return rc;
}
