/* sass_div.c: the unsigned 64-bit division ptxas emits as two paths, and
 * the quotient it leaves (sass_internal.h), for the SASS dataflow.
 *
 * `q = D / S` with 64-bit operands (CuPy's grid-stride loop: the trip count
 * (n - i0 - 1) / (ntid.x*nctaid.x) before a loop unrolled by four) becomes:
 *
 *   F:  t = Dh | Sh ; P = t != 0 ; @!P BRA I       (both high words zero?)
 *   C:  MOV Rret, pc ; CALL $__internal_N_$__cuda_sm20_div_u64 ;
 *       MOV Ql, Qa ; MOV Qh, Qb ; BRA J
 *   I:  the 32-bit idiom: q = Dl / Sl by a rounded-up float reciprocal and
 *       two corrections, ~Sl when Sl is 0 ; Qh = 0
 *   J:  Ql:Qh = q
 *
 * Each piece is checked on the instructions: the fork tests exactly the
 * high words of the registers both paths divide; the callee is the routine
 * of that name (its code is not verified: the name is trusted), reads no
 * register but the divisor (the pair it converts with I2F.U64.RP), the
 * dividend and its return address, and returns in the registers it selects
 * all-ones into when the divisor is zero (the quotient's convention), which
 * the call path moves to Ql:Qh; the inline path's value of Ql is evaluated
 * symbolically (a small expression graph, equal forms made equal: IADD3 x,
 * -y, RZ and IMAD.IADD x, 0x1, -y are one thing) and must be the idiom's
 * quotient of the same Dl and Sl, with Qh set to zero; J is reached from the
 * two paths only. Then the dataflow gives Ql:Qh at J the value of a quotient
 * atom whose dividend and divisor are the pairs' values at the fork. */
#include <stdlib.h>
#include <string.h>

#include "code/sass_internal.h"
#include "graph/graph.h"

/* ---- atoms for quotients and remainders ------------------------------------------------ */

uint16_t sg_div_quotient_atom(ctx_t *x, const sg_poly_t *dividend, const sg_poly_t *divisor)
{
    for (uint32_t i = 0; i < x->nquo; i++)
        if (sg_poly_eq(&x->quo[i].dividend, dividend) && sg_poly_eq(&x->quo[i].divisor, divisor))
            return (uint16_t)(A_QUO | i);
    if (x->nquo == SG_QUO_MAX)
        return 0;
    x->quo[x->nquo].dividend = *dividend;
    x->quo[x->nquo].divisor = *divisor;
    return (uint16_t)(A_QUO | x->nquo++);
}

uint16_t sg_div_mod_atom(ctx_t *x, const sg_poly_t *v, uint32_t modulus)
{
    for (uint32_t i = 0; i < x->nmod; i++)
        if (x->mods[i].modulus == modulus && sg_poly_eq(&x->mods[i].value, v))
            return (uint16_t)(A_MOD | i);
    if (x->nmod == SG_MOD_MAX)
        return 0;
    x->mods[x->nmod].value = *v;
    x->mods[x->nmod].modulus = modulus;
    return (uint16_t)(A_MOD | x->nmod++);
}

/* ---- the inline idiom, evaluated as an expression graph ---------------------------------- */

enum {
    T_LEAF = 1, /* a register at the block's entry: k = register */
    T_CONST,    /* k */
    T_OPAQUE,   /* something not modelled: k = instruction (never equal to another) */
    T_I2F,      /* I2F.U32.RP */
    T_RCP,      /* MUFU.RCP */
    T_F2I,      /* F2I.FTZ.U32.TRUNC.NTZ */
    T_ADD,      /* sum of 2..4 operands, sorted */
    T_NEG,
    T_MUL,      /* low 32 bits of the product, sorted */
    T_MULHI,    /* high 32 bits of the unsigned product, sorted */
    T_BNOT,     /* ~a */
    T_GEU,      /* a >= b unsigned (a predicate) */
    T_NEU,      /* a != b (sorted) */
    T_NOT,      /* !p */
    T_SEL,      /* p ? a : b */
};

#define DAG_MAX 256

typedef struct {
    uint8_t op, n;
    uint16_t a[4];
    int64_t k;
} node_t;

typedef struct {
    node_t n[DAG_MAX];
    uint32_t count;
    bool full;
} dag_t;

static uint16_t mk(dag_t *g, uint8_t op, uint8_t n, const uint16_t *a, int64_t k)
{
    for (uint32_t i = 1; i < g->count; i++) {
        const node_t *p = &g->n[i];
        if (p->op == op && p->n == n && p->k == k && (!n || !memcmp(p->a, a, n * sizeof *a)))
            return (uint16_t)i;
    }
    if (g->count == 0)
        g->count = 1; /* node 0: none */
    if (g->count == DAG_MAX) {
        g->full = true;
        return 0;
    }
    node_t *p = &g->n[g->count];
    memset(p, 0, sizeof *p);
    p->op = op;
    p->n = n;
    p->k = k;
    if (n)
        memcpy(p->a, a, n * sizeof *a);
    return (uint16_t)g->count++;
}

static uint16_t cst(dag_t *g, int64_t k)
{
    return mk(g, T_CONST, 0, NULL, (int64_t)(uint32_t)k); /* 32-bit words */
}

static bool is_cst(const dag_t *g, uint16_t a, int64_t k)
{
    return g->n[a].op == T_CONST && g->n[a].k == (int64_t)(uint32_t)k;
}

static uint16_t un(dag_t *g, uint8_t op, uint16_t a)
{
    return mk(g, op, 1, &a, 0);
}

static void sort2(uint16_t *a, uint16_t *b)
{
    if (*a > *b) {
        uint16_t t = *a;
        *a = *b;
        *b = t;
    }
}

static uint16_t neg(dag_t *g, uint16_t a)
{
    if (g->n[a].op == T_NEG)
        return g->n[a].a[0];
    if (g->n[a].op == T_CONST)
        return cst(g, -g->n[a].k);
    return un(g, T_NEG, a);
}

static uint16_t add(dag_t *g, uint16_t a, uint16_t b)
{
    uint16_t ops[8];
    uint32_t n = 0;
    int64_t k = 0;
    uint16_t in[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        const node_t *p = &g->n[in[i]];
        if (p->op == T_ADD)
            for (uint8_t j = 0; j < p->n; j++)
                ops[n++] = p->a[j];
        else
            ops[n++] = in[i];
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (g->n[ops[i]].op == T_CONST)
            k += g->n[ops[i]].k;
        else
            ops[m++] = ops[i];
    }
    if ((uint32_t)k)
        ops[m++] = cst(g, k);
    if (m == 0)
        return cst(g, 0);
    if (m == 1)
        return ops[0];
    if (m > 4)
        return mk(g, T_OPAQUE, 0, NULL, -1 - (int64_t)g->count);
    for (uint32_t i = 1; i < m; i++)
        for (uint32_t j = i; j > 0 && ops[j - 1] > ops[j]; j--)
            sort2(&ops[j - 1], &ops[j]);
    return mk(g, T_ADD, (uint8_t)m, ops, 0);
}

/* Products: the negation taken out, so that -a*b and a*-b are one form. */
static uint16_t mul(dag_t *g, uint8_t op, uint16_t a, uint16_t b)
{
    bool flip = false;
    if (op == T_MUL) {
        if (is_cst(g, a, 0) || is_cst(g, b, 0))
            return cst(g, 0);
        if (is_cst(g, a, 1))
            return b;
        if (is_cst(g, b, 1))
            return a;
        if (g->n[a].op == T_NEG)
            a = g->n[a].a[0], flip = !flip;
        if (g->n[b].op == T_NEG)
            b = g->n[b].a[0], flip = !flip;
    }
    sort2(&a, &b);
    uint16_t ab[2] = {a, b};
    uint16_t r = mk(g, op, 2, ab, 0);
    return flip ? neg(g, r) : r;
}

static uint16_t cmp2(dag_t *g, uint8_t op, uint16_t a, uint16_t b)
{
    if (op == T_NEU)
        sort2(&a, &b);
    uint16_t ab[2] = {a, b};
    return mk(g, op, 2, ab, 0);
}

static uint16_t sel(dag_t *g, uint16_t p, uint16_t a, uint16_t b)
{
    if (a == b)
        return a;
    uint16_t pab[3] = {p, a, b};
    return mk(g, T_SEL, 3, pab, 0);
}

static uint16_t not_p(dag_t *g, uint16_t p)
{
    return g->n[p].op == T_NOT ? g->n[p].a[0] : un(g, T_NOT, p);
}

/* The idiom's quotient of x by d (leaves). */
static uint16_t idiom(dag_t *g, uint16_t d, uint16_t x)
{
    uint16_t f = un(g, T_F2I, add(g, un(g, T_RCP, un(g, T_I2F, d)), cst(g, 0x0ffffffe)));
    uint16_t t = mul(g, T_MULHI, f, mul(g, T_MUL, neg(g, f), d));
    uint16_t q0 = mul(g, T_MULHI, t, x);
    uint16_t r0 = add(g, mul(g, T_MUL, d, neg(g, q0)), x);
    uint16_t p0 = cmp2(g, T_GEU, r0, d);
    uint16_t r1 = sel(g, p0, add(g, r0, neg(g, d)), r0);
    uint16_t q1 = sel(g, p0, add(g, q0, cst(g, 1)), q0);
    uint16_t q2 = sel(g, cmp2(g, T_GEU, r1, d), add(g, q1, cst(g, 1)), q1);
    return sel(g, not_p(g, cmp2(g, T_NEU, d, cst(g, 0))), un(g, T_BNOT, d), q2);
}

typedef struct {
    dag_t g;
    uint16_t reg[256];  /* R0..R254; RZ is constant 0 */
    uint16_t pred[8];   /* P0..P6 */
} eval_t;

static uint16_t rd(eval_t *e, const sg_sass_insn_t *in, uint8_t k, uint32_t insn)
{
    dag_t *g = &e->g;
    const sg_sass_operand_t *o = &in->ops[k];
    uint16_t v;
    if (o->kind == SG_SASS_OP_IMM) {
        v = cst(g, o->imm);
    } else if (o->kind == SG_SASS_OP_REG && !o->uniform) {
        if (o->reg == 255) {
            v = cst(g, 0);
        } else {
            if (!e->reg[o->reg])
                e->reg[o->reg] = mk(g, T_LEAF, 0, NULL, o->reg);
            v = e->reg[o->reg];
        }
    } else {
        v = mk(g, T_OPAQUE, 0, NULL, -1 - (int64_t)insn * 8 - k);
    }
    if (o->inv)
        v = un(g, T_BNOT, v);
    if (o->neg)
        v = neg(g, v);
    return v;
}

static uint16_t rdp(eval_t *e, int reg, bool inv)
{
    if (reg < 0 || reg > 6)
        return 0;
    if (!e->pred[reg])
        e->pred[reg] = mk(&e->g, T_LEAF, 0, NULL, 1000 + reg);
    return inv ? not_p(&e->g, e->pred[reg]) : e->pred[reg];
}

/* Run instructions [first, first+count) on the graph; false on anything
 * that leaves it (a branch, a call). */
static bool evaluate(const ctx_t *x, uint32_t first, uint32_t count, eval_t *e)
{
    dag_t *g = &e->g;
    for (uint32_t i = first; i < first + count; i++) {
        const sg_sass_insn_t *in = &x->in[i];
        const char *op = in->op;
        const sg_sass_operand_t *o = in->ops;
        uint8_t n = in->n_ops;
        if (sg_op_is(op, "NOP") || sg_op_is(op, "BSYNC") || sg_op_is(op, "BSSY"))
            continue;
        if (sg_op_is(op, "BRA") || sg_op_is(op, "CALL") || sg_op_is(op, "EXIT") ||
            sg_op_is(op, "RET") || in->guard_uniform || in->guard > 7)
            return false;
        uint16_t gp = in->guard >= 0 && in->guard != 7 ? rdp(e, in->guard, in->guard_neg) : 0;
        if (in->guard == 7 && in->guard_neg)
            continue; /* @!PT */
        /* predicate results */
        if (sg_op_is(op, "ISETP") && n == 5 && o[0].kind == SG_SASS_OP_PRED && !o[0].uniform &&
            o[1].kind == SG_SASS_OP_PRED && o[1].reg == 7 && o[4].kind == SG_SASS_OP_PRED &&
            o[4].reg == 7 && !o[4].inv && sg_op_has(op, "U32") && sg_op_has(op, "AND") &&
            !sg_op_has(op, "EX") && o[0].reg < 7 && (sg_op_has(op, "GE") || sg_op_has(op, "NE"))) {
            uint16_t v = cmp2(g, sg_op_has(op, "GE") ? T_GEU : T_NEU, rd(e, in, 2, i), rd(e, in, 3, i));
            e->pred[o[0].reg] = gp ? sel(g, gp, v, rdp(e, o[0].reg, false)) : v;
            continue;
        }
        uint8_t d = 0;
        while (d < n && o[d].kind == SG_SASS_OP_PRED) {
            if (!o[d].uniform && o[d].reg < 7)
                e->pred[o[d].reg] = mk(g, T_OPAQUE, 0, NULL, -1 - (int64_t)i * 8 - d);
            d++;
        }
        if (d >= n || o[d].kind != SG_SASS_OP_REG)
            continue; /* writes no register */
        if (o[d].uniform || o[d].reg == 255)
            continue;
        uint16_t v = 0;
        bool plain = d == 0;
        if (plain && sg_op_is(op, "I2F") && !strcmp(op, "I2F.U32.RP") && n == 2)
            v = un(g, T_I2F, rd(e, in, 1, i));
        else if (plain && !strcmp(op, "MUFU.RCP") && n == 2)
            v = un(g, T_RCP, rd(e, in, 1, i));
        else if (plain && !strcmp(op, "F2I.FTZ.U32.TRUNC.NTZ") && n == 2)
            v = un(g, T_F2I, rd(e, in, 1, i));
        else if (plain && (!strcmp(op, "MOV") || !strcmp(op, "IMAD.MOV.U32") || !strcmp(op, "IMAD.MOV")) &&
                 (n == 2 || (n == 4 && sg_op_zero_reg(&o[1]) && sg_op_zero_reg(&o[2]))))
            v = rd(e, in, (uint8_t)(n - 1), i);
        else if (plain && (!strcmp(op, "VIADD") || !strcmp(op, "IADD3")) && n >= 3 && n <= 4)
            v = n == 3 ? add(g, rd(e, in, 1, i), rd(e, in, 2, i))
                       : add(g, add(g, rd(e, in, 1, i), rd(e, in, 2, i)), rd(e, in, 3, i));
        else if (plain && (!strcmp(op, "IMAD") || !strcmp(op, "IMAD.IADD")) && n == 4)
            v = add(g, mul(g, T_MUL, rd(e, in, 1, i), rd(e, in, 2, i)), rd(e, in, 3, i));
        else if (plain && !strcmp(op, "IMAD.HI.U32") && n == 4)
            v = add(g, mul(g, T_MULHI, rd(e, in, 1, i), rd(e, in, 2, i)), rd(e, in, 3, i));
        else if (plain && sg_op_is(op, "HFMA2") && n == 5 && sg_op_zero_reg(&o[1]) &&
                 sg_op_zero_reg(&o[2]) && o[3].kind == SG_SASS_OP_IMM && !o[3].imm &&
                 o[4].kind == SG_SASS_OP_IMM && !o[4].imm)
            v = cst(g, 0);
        else if (plain && !strcmp(op, "LOP3.LUT") && n == 6 && sg_op_zero_reg(&o[1]) &&
                 sg_op_zero_reg(&o[3]) && o[4].kind == SG_SASS_OP_IMM && o[4].imm == 0x33 &&
                 o[5].kind == SG_SASS_OP_PRED)
            v = un(g, T_BNOT, rd(e, in, 2, i));
        else
            v = mk(g, T_OPAQUE, 0, NULL, -1 - (int64_t)i * 8 - 7);
        uint16_t dst = o[d].reg;
        if (gp)
            v = sel(g, gp, v, rd(e, in, d, i));
        /* a wide destination (not modelled here) makes its pair opaque */
        e->reg[dst] = v;
        for (uint32_t w = 1; w < sg_op_dest_width(op) && dst + w < 255; w++)
            e->reg[dst + w] = mk(g, T_OPAQUE, 0, NULL, -1 - (int64_t)i * 8 - 6 + (int64_t)w * 64);
        if (g->full)
            return false;
    }
    return !g->full;
}

/* ---- the callee ------------------------------------------------------------------------ */

typedef struct {
    int sl, sh;       /* divisor registers */
    int q1, q2;       /* the registers that get all-ones for a zero divisor */
    uint8_t live[256]; /* registers read before written */
} callee_t;

static bool reads_reg(const sg_sass_insn_t *in, uint8_t from, uint16_t r)
{
    for (uint8_t k = from; k < in->n_ops; k++) {
        const sg_sass_operand_t *o = &in->ops[k];
        if ((o->kind == SG_SASS_OP_REG || o->kind == SG_SASS_OP_MEM || o->kind == SG_SASS_OP_CBANK) &&
            !o->uniform && o->reg != 0xffff) {
            uint32_t w = o->wide ? 2 : 1;
            if (r >= o->reg && r < o->reg + w)
                return true;
        }
    }
    return false;
}

/* The destination register of an instruction (its first register operand
 * after any predicate results), -1 for none; *wide: two registers. */
static int dest_reg(const sg_sass_insn_t *in, bool *wide)
{
    uint8_t d = 0;
    while (d < in->n_ops && in->ops[d].kind == SG_SASS_OP_PRED)
        d++;
    /* I2F's result is a float: 64-bit only as F64, whatever its source */
    *wide = sg_op_is(in->op, "I2F") ? sg_op_has(in->op, "F64") : sg_op_dest_width(in->op) > 1;
    if (d >= in->n_ops || in->ops[d].kind != SG_SASS_OP_REG || in->ops[d].uniform ||
        in->ops[d].reg == 255)
        return -1;
    const char *op = in->op;
    size_t bl = strcspn(op, ".");
    if (sg_op_is(op, "ST") || sg_op_is(op, "STG") || sg_op_is(op, "STS") || sg_op_is(op, "STL") ||
        sg_op_is(op, "RET") || sg_op_is(op, "BRA") || sg_op_is(op, "RED") ||
        (bl >= 4 && !strncmp(op + bl - 4, "SETP", 4)))
        return -1; /* no register result (a ...SETP's first register is a source) */
    return in->ops[d].reg;
}

/* Read the callee at instruction c: straight-line code to its RET. */
static bool read_callee(const ctx_t *x, uint32_t c, callee_t *cl)
{
    memset(cl, 0, sizeof *cl);
    cl->sl = cl->sh = cl->q1 = cl->q2 = -1;
    uint8_t written[256] = {0};
    int src[256];
    for (int r = 0; r < 256; r++)
        src[r] = -1; /* the live-in register a move copied here */
    uint32_t end = c;
    int sel_pred = -1;
    for (uint32_t i = c; i < x->n && i < c + 256; i++) {
        const sg_sass_insn_t *in = &x->in[i];
        if (sg_op_is(in->op, "BRA") || sg_op_is(in->op, "CALL") || sg_op_is(in->op, "EXIT") ||
            in->guard >= 0)
            return false;
        bool wide;
        int d = dest_reg(in, &wide);
        uint8_t from = 0;
        while (d >= 0 && from < in->n_ops && in->ops[from].kind == SG_SASS_OP_PRED)
            from++;
        if (d >= 0)
            from++; /* past the destination */
        for (uint16_t r = 0; r < 255; r++)
            if (!written[r] && reads_reg(in, from, r))
                cl->live[r] = 1;
        if (sg_op_is(in->op, "RET")) {
            end = i;
            break;
        }
        /* the divisor: the pair I2F.U64.RP converts, copied from live-ins */
        if (!strcmp(in->op, "I2F.U64.RP") && in->n_ops == 2 && in->ops[1].kind == SG_SASS_OP_REG &&
            cl->sl < 0) {
            int a = in->ops[1].reg;
            cl->sl = a < 255 && written[a] ? src[a] : a;
            cl->sh = a + 1 < 255 && written[a + 1] ? src[a + 1] : a + 1;
        }
        if (sg_op_is(in->op, "SEL") && in->n_ops == 4 && in->ops[2].kind == SG_SASS_OP_IMM &&
            (uint32_t)in->ops[2].imm == 0xffffffffu && in->ops[3].kind == SG_SASS_OP_PRED && d >= 0) {
            if (sel_pred >= 0 && sel_pred != in->ops[3].reg)
                return false;
            sel_pred = in->ops[3].reg;
            if (cl->q1 < 0)
                cl->q1 = d;
            else if (cl->q2 < 0 && d != cl->q1)
                cl->q2 = d;
        } else if (d >= 0 && (d == cl->q1 || d == cl->q2)) {
            return false; /* rewritten after its all-ones select */
        }
        if (d >= 0) {
            bool mov = (!strcmp(in->op, "MOV") && in->n_ops == 2) ||
                       (!strcmp(in->op, "IMAD.MOV.U32") && in->n_ops == 4 &&
                        sg_op_zero_reg(&in->ops[1]) && sg_op_zero_reg(&in->ops[2]));
            const sg_sass_operand_t *s = &in->ops[in->n_ops - 1];
            src[d] = mov && s->kind == SG_SASS_OP_REG && !s->uniform && !s->neg && !s->inv &&
                             s->reg < 255 && !written[s->reg]
                         ? s->reg
                         : -1;
            written[d] = 1;
            if (wide && d + 1 < 255) {
                written[d + 1] = 1;
                src[d + 1] = -1;
            }
        }
    }
    if (end == c || cl->sl < 0 || cl->sh < 0 || cl->q1 < 0 || cl->q2 < 0 || sel_pred < 0)
        return false;
    /* the selects' predicate: divisor != 0, both words */
    bool lo = false, ex = false;
    for (uint32_t i = c; i < end; i++) {
        const sg_sass_insn_t *in = &x->in[i];
        if (!sg_op_is(in->op, "ISETP") || in->n_ops < 5 || in->ops[0].kind != SG_SASS_OP_PRED ||
            in->ops[0].reg != sel_pred)
            continue;
        bool zero = sg_op_zero_reg(&in->ops[3]) && in->ops[2].kind == SG_SASS_OP_REG;
        if (!strcmp(in->op, "ISETP.NE.U32.AND") && zero && in->ops[2].reg == cl->sl)
            lo = true, ex = false;
        else if (!strcmp(in->op, "ISETP.NE.AND.EX") && zero && in->ops[2].reg == cl->sh && lo &&
                 in->n_ops == 6 && in->ops[5].kind == SG_SASS_OP_PRED && in->ops[5].reg == sel_pred)
            ex = true;
        else
            lo = ex = false; /* rewritten otherwise */
    }
    return lo && ex;
}

/* ---- finding the sites ------------------------------------------------------------------ */

/* The last writer of predicate p / register r in [from, to), UINT32_MAX none. */
static uint32_t last_pred_writer(const ctx_t *x, uint32_t from, uint32_t to, int p)
{
    for (uint32_t i = to; i-- > from;) {
        const sg_sass_insn_t *in = &x->in[i];
        for (uint8_t k = 0; k < in->n_ops && in->ops[k].kind == SG_SASS_OP_PRED; k++)
            if (!in->ops[k].uniform && in->ops[k].reg == p)
                return i;
    }
    return UINT32_MAX;
}

static uint32_t last_reg_writer(const ctx_t *x, uint32_t from, uint32_t to, int r)
{
    for (uint32_t i = to; i-- > from;) {
        bool wide;
        int d = dest_reg(&x->in[i], &wide);
        if (d >= 0 && (d == r || (wide && d + 1 == r)))
            return i;
    }
    return UINT32_MAX;
}

static bool is_move(const sg_sass_insn_t *in, int *d, int *s)
{
    const sg_sass_operand_t *o = in->ops;
    if (in->guard >= 0)
        return false;
    if (!strcmp(in->op, "MOV") && in->n_ops == 2 && o[0].kind == SG_SASS_OP_REG &&
        o[1].kind == SG_SASS_OP_REG && !o[1].neg && !o[1].inv && !o[0].uniform && !o[1].uniform) {
        *d = o[0].reg, *s = o[1].reg;
        return true;
    }
    if (!strcmp(in->op, "IMAD.MOV.U32") && in->n_ops == 4 && o[0].kind == SG_SASS_OP_REG &&
        sg_op_zero_reg(&o[1]) && sg_op_zero_reg(&o[2]) && o[3].kind == SG_SASS_OP_REG &&
        !o[3].neg && !o[3].inv && !o[0].uniform && !o[3].uniform) {
        *d = o[0].reg, *s = o[3].reg;
        return true;
    }
    return false;
}

static bool is_div_target(const ctx_t *x, int64_t pc)
{
    for (uint32_t i = 0; i < x->n_div_pcs; i++)
        if ((int64_t)x->div_pcs[i] == pc)
            return true;
    return false;
}

/* Does block f end the fork of a division? Fill the site. */
static bool match_site(ctx_t *x, uint32_t f, sg_div_site_t *s)
{
    const block_t *F = &x->blocks[f];
    const sg_sass_insn_t *br = &x->in[F->first + F->count - 1];
    if (!sg_op_is(br->op, "BRA") || br->guard < 0 || br->guard > 6 || !br->guard_neg ||
        br->guard_uniform || F->succ[0] == UINT32_MAX || F->succ[1] == UINT32_MAX)
        return false;
    uint32_t ib = F->succ[0], cb = F->succ[1];
    /* P = t != 0, t = A | B */
    uint32_t w = last_pred_writer(x, F->first, F->first + F->count - 1, br->guard);
    if (w == UINT32_MAX)
        return false;
    const sg_sass_insn_t *is = &x->in[w];
    if (strcmp(is->op, "ISETP.NE.U32.AND") || is->n_ops != 5 || is->ops[1].kind != SG_SASS_OP_PRED ||
        is->ops[1].reg != 7 || is->ops[2].kind != SG_SASS_OP_REG || is->ops[2].uniform ||
        !sg_op_zero_reg(&is->ops[3]) || is->ops[4].kind != SG_SASS_OP_PRED || is->ops[4].reg != 7 ||
        is->ops[4].inv)
        return false;
    uint32_t lw = last_reg_writer(x, F->first, w, is->ops[2].reg);
    if (lw == UINT32_MAX)
        return false;
    const sg_sass_insn_t *lo = &x->in[lw];
    if (strcmp(lo->op, "LOP3.LUT") || lo->n_ops != 6 || lo->ops[1].kind != SG_SASS_OP_REG ||
        lo->ops[2].kind != SG_SASS_OP_REG || lo->ops[1].uniform || lo->ops[2].uniform ||
        lo->ops[1].neg || lo->ops[1].inv || lo->ops[2].neg || lo->ops[2].inv ||
        !sg_op_zero_reg(&lo->ops[3]) || lo->ops[4].kind != SG_SASS_OP_IMM || lo->ops[4].imm != 0xfc)
        return false;
    int ha = lo->ops[1].reg, hb = lo->ops[2].reg;
    /* the call path: [MOV Rret, pc]; CALL div_u64; moves; BRA J */
    const block_t *C = &x->blocks[cb];
    uint32_t call = UINT32_MAX;
    for (uint32_t i = C->first; i < C->first + C->count; i++)
        if (sg_op_is(x->in[i].op, "CALL")) {
            call = i;
            break;
        }
    if (call == UINT32_MAX || x->in[call].guard >= 0)
        return false;
    const sg_sass_insn_t *ci = &x->in[call];
    int64_t target = ci->n_ops ? ci->ops[ci->n_ops - 1].imm : -1;
    if (!ci->n_ops || (ci->ops[ci->n_ops - 1].kind != SG_SASS_OP_IMM &&
                       ci->ops[ci->n_ops - 1].kind != SG_SASS_OP_LABEL) ||
        !is_div_target(x, target))
        return false;
    int ret = -1; /* only the return address before it */
    for (uint32_t i = C->first; i < call; i++) {
        if (strcmp(x->in[i].op, "MOV") || x->in[i].n_ops != 2 || ret >= 0 ||
            x->in[i].ops[0].kind != SG_SASS_OP_REG || x->in[i].ops[0].uniform ||
            x->in[i].ops[1].kind != SG_SASS_OP_IMM || x->in[i].guard >= 0)
            return false;
        ret = x->in[i].ops[0].reg;
    }
    const sg_sass_insn_t *last = &x->in[C->first + C->count - 1];
    if (!sg_op_is(last->op, "BRA") || last->guard >= 0 || C->succ[1] != UINT32_MAX)
        return false;
    uint32_t jb = C->succ[0];
    int md[4], ms[4], nm = 0;
    for (uint32_t i = call + 1; i + 1 < C->first + C->count; i++) {
        if (nm == 4 || !is_move(&x->in[i], &md[nm], &ms[nm]))
            return false;
        /* each destination once, none read by a later move: the moves
         * copy the callee's results as it left them */
        for (int k = 0; k < nm; k++)
            if (md[k] == md[nm] || md[k] == ms[nm])
                return false;
        nm++;
    }
    /* the callee */
    uint32_t ce = UINT32_MAX;
    for (uint32_t i = 0; i < x->n; i++)
        if ((int64_t)x->in[i].pc == target) {
            ce = i;
            break;
        }
    callee_t cl;
    if (ce == UINT32_MAX || !read_callee(x, ce, &cl))
        return false;
    /* the divisor's high word is one of the tested words, the dividend's the other */
    int dh = cl.sh == ha ? hb : cl.sh == hb ? ha : -1;
    if (dh < 0)
        return false;
    /* Ql, Qh: where the moves put the callee's all-ones registers */
    int ql = -1, qh = -1;
    for (int k = 0; k < nm; k++)
        for (int j = 0; j < nm; j++)
            if (k != j && ((ms[k] == cl.q1 && ms[j] == cl.q2) || (ms[k] == cl.q2 && ms[j] == cl.q1)) &&
                ql < 0) {
                /* which is the low word: the one the inline path divides into */
                ql = md[k], qh = md[j];
            }
    if (ql < 0)
        return false;
    /* the inline path: falls into J; Ql is the idiom's quotient, Qh zero */
    const block_t *I = &x->blocks[ib];
    if (I->succ[0] != jb || I->succ[1] != UINT32_MAX || jb == UINT32_MAX)
        return false;
    eval_t *e = calloc(1, sizeof *e);
    if (!e)
        return false;
    bool ok = evaluate(x, I->first, I->count, e);
    int dl = -1, xl = -1;
    for (int pass = 0; ok && pass < 2 && dl < 0; pass++) {
        if (pass) { /* the quotient's words the other way round */
            int t = ql;
            ql = qh;
            qh = t;
        }
        uint16_t q = e->reg[ql];
        if (!q || !is_cst(&e->g, e->reg[qh] ? e->reg[qh] : 0, 0))
            continue;
        /* the idiom of the divisor's low word by each candidate dividend
         * (the leaves: registers as they were at the block's entry) */
        for (int r = 0; r < 255 && dl < 0; r++) {
            if (!cl.live[r] || r == cl.sl || r == cl.sh || r == dh || r == ret)
                continue;
            uint16_t dleaf = mk(&e->g, T_LEAF, 0, NULL, cl.sl), xleaf = mk(&e->g, T_LEAF, 0, NULL, r);
            if (idiom(&e->g, dleaf, xleaf) == q && !e->g.full)
                dl = cl.sl, xl = r;
        }
    }
    free(e);
    if (!ok || dl < 0)
        return false;
    /* the callee reads nothing else (its return address aside) */
    for (int r = 0; r < 255; r++)
        if (cl.live[r] && r != cl.sl && r != cl.sh && r != xl && r != dh && r != ret)
            return false;
    /* J is reached from the two paths only, and each path from F only (the
     * registers at their start are F's) */
    uint32_t into = 0, into_c = 0, into_i = 0;
    for (uint32_t b = 0; b < x->nblocks; b++)
        for (int k = 0; k < 2; k++) {
            into += x->blocks[b].succ[k] == jb;
            into_c += x->blocks[b].succ[k] == cb;
            into_i += x->blocks[b].succ[k] == ib;
        }
    if (into != 2 || into_c != 1 || into_i != 1 || cb == ib)
        return false;
    /* the return address is none of the operands */
    if (ret == xl || ret == dh || ret == dl || ret == cl.sh)
        return false;
    /* the words at F's end are those the paths divide: not rewritten after the test */
    int regs[4] = {ha, hb, xl, dl};
    for (int k = 0; k < 4; k++)
        if (last_reg_writer(x, lw, F->first + F->count, regs[k]) != UINT32_MAX)
            return false;
    memset(s, 0, sizeof *s);
    s->fork = f;
    s->join = jb;
    s->dl = (uint16_t)xl;
    s->dh = (uint16_t)dh;
    s->sl = (uint16_t)dl;
    s->sh = (uint16_t)cl.sh;
    s->ql = (uint16_t)ql;
    s->qh = (uint16_t)qh;
    return true;
}

int sg_div_find(ctx_t *x)
{
    x->divs = NULL;
    x->ndivs = 0;
    if (!x->n_div_pcs)
        return 0;
    for (uint32_t f = 0; f < x->nblocks; f++) {
        sg_div_site_t s;
        if (!match_site(x, f, &s))
            continue;
        sg_div_site_t *nd = realloc(x->divs, (x->ndivs + 1) * sizeof *nd);
        if (!nd)
            return SG_ENOMEM;
        x->divs = nd;
        x->divs[x->ndivs++] = s;
    }
    return 0;
}

/* ---- in the dataflow ------------------------------------------------------------------------ */

void sg_div_block_end(ctx_t *x, state_t *st, uint32_t b)
{
    for (uint32_t i = 0; i < x->ndivs; i++) {
        sg_div_site_t *s = &x->divs[i];
        if (s->fork != b)
            continue;
        val_t dl = sg_flow_slot_read(&st->slots[s->dl], NULL), dh = sg_flow_slot_read(&st->slots[s->dh], NULL);
        val_t sl = sg_flow_slot_read(&st->slots[s->sl], NULL), sh = sg_flow_slot_read(&st->slots[s->sh], NULL);
        val_t d = sg_val_pair(&dl, &dh), v = sg_val_pair(&sl, &sh);
        s->atom = d.kind != V_TOP && v.kind != V_TOP ? sg_div_quotient_atom(x, &d.p, &v.p) : 0;
    }
}

void sg_div_block_start(ctx_t *x, state_t *st, uint32_t b)
{
    for (uint32_t i = 0; i < x->ndivs; i++) {
        const sg_div_site_t *s = &x->divs[i];
        if (s->join != b || !s->atom)
            continue;
        sg_poly_t q;
        sg_poly_atom(&q, s->atom);
        val_t lo = sg_val_make(V_LO, &q), hi = sg_val_make(V_HI, &q);
        st->slots[s->ql].v = st->slots[s->ql].alt = lo;
        st->slots[s->ql].g = -1;
        st->slots[s->ql].sver = ++x->verc;
        st->slots[s->qh].v = st->slots[s->qh].alt = hi;
        st->slots[s->qh].g = -1;
        st->slots[s->qh].sver = ++x->verc;
    }
}
