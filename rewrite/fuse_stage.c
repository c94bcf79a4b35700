/* fuse_stage.c: what tier-1 lifting needs to know about one stage, proven
 * from its PTX with its captured parameters and geometry as concrete
 * values (fuse.h, step 1).
 *
 * Register values live in a small lattice: undefined, affine (c + at*tid.x
 * + ac*ctaid.x, the integer value before any wrap-around, with the
 * parameter word or module/local symbol it derives from), or unknown. The
 * analysis is flow-insensitive: a register's value is the join of all its
 * definitions, iterated to a fixed point, which is sound for any control
 * flow (nvcc/NVRTC PTX is nearly SSA, so this loses little). 64-bit
 * add/sub/shl/mul-by-constant are exact modulo 2^64; a 32-bit value is
 * widened (cvt, mul.wide) only when its range, from tid in [0, ntid) and
 * ctaid in [0, nctaid), fits the source type, so 32-bit wrap-around can
 * never make an address look affine when it is not.
 *
 * Bounds checks: each block gets the interval of t it may execute for,
 * propagated along the CFG from comparisons `setp.cmp t, n` feeding a
 * branch (t exactly the global linear index, n a constant or a parameter
 * word plus a constant).
 *
 * This is the narrow slice of the access analysis (code/access.h, issue
 * 11) that lifting needs; when that lands its facts can replace this. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

typedef enum { V_UNDEF = 0, V_AFF, V_SYM, V_TOP } vkind_t;

typedef struct {
    uint8_t kind;
    uint8_t tagged;      /* V_AFF: c includes the value of parameter word `tag` */
    uint8_t tag_width;
    uint8_t tag_signed;
    uint32_t tag;        /* V_AFF: parameter byte offset; V_SYM: symbol (see sym_local) */
    bool sym_local;      /* V_SYM: a local variable of the function (else a module variable) */
    int64_t c, at, ac;
    int64_t ks;          /* V_AFF: plus ks * K for an unknown K >= 0 (an induction variable) */
} val_t;

static bool val_eq(const val_t *a, const val_t *b)
{
    return a->kind == b->kind && a->tagged == b->tagged && a->tag == b->tag &&
           a->sym_local == b->sym_local && a->c == b->c && a->at == b->at && a->ac == b->ac &&
           a->ks == b->ks &&
           a->tag_width == b->tag_width && a->tag_signed == b->tag_signed;
}

static val_t top(void)
{
    val_t v;
    memset(&v, 0, sizeof v);
    v.kind = V_TOP;
    return v;
}

static val_t cst(int64_t c)
{
    val_t v;
    memset(&v, 0, sizeof v);
    v.kind = V_AFF;
    v.c = c;
    return v;
}

typedef struct {
    const sg_ptx_func_t *f;
    const sg_ptx_module_t *m;
    const sg_kernel_t *k;
    uint32_t ntid, nctaid;
    val_t *v; /* by register */
    bool changed;
    char *reason;
    bool *cta; /* set when the stage needs its CTA (tier 2) */
} ctx_t;

static void refuse(ctx_t *c, const sg_ptx_stmt_t *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(ctx_t *c, const sg_ptx_stmt_t *s, const char *fmt, ...)
{
    if (c->reason[0]) return; /* the first reason wins */
    char msg[SG_FZ_REASON - 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s)
        snprintf(c->reason, SG_FZ_REASON, "line %u: %s", s->line, msg);
    else
        snprintf(c->reason, SG_FZ_REASON, "%s", msg);
}

/* Range of an affine value over the launch (c + at*tid + ac*ctaid). */
static void val_range(const ctx_t *c, const val_t *v, __int128 *lo, __int128 *hi)
{
    __int128 t = (__int128)v->at * (c->ntid - 1), a = (__int128)v->ac * (c->nctaid - 1);
    *lo = v->c + (t < 0 ? t : 0) + (a < 0 ? a : 0);
    *hi = v->c + (t > 0 ? t : 0) + (a > 0 ? a : 0);
}

static bool fits(const ctx_t *c, const val_t *v, bool is_signed, uint32_t bits)
{
    if (v->kind != V_AFF || v->tagged || v->ks) return v->kind == V_AFF && bits == 64;
    if (bits >= 64) return true;
    if (bits == 0) return false; /* no value fits zero bits (and 1 << -1 is undefined) */
    __int128 lo, hi;
    val_range(c, v, &lo, &hi);
    __int128 mn = is_signed ? -((__int128)1 << (bits - 1)) : 0;
    __int128 mx = is_signed ? ((__int128)1 << (bits - 1)) - 1 : ((__int128)1 << bits) - 1;
    return lo >= mn && hi <= mx;
}

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

static val_t add(val_t a, val_t b, int sign)
{
    if (a.kind == V_SYM && b.kind == V_AFF) return a;
    if (b.kind == V_SYM && a.kind == V_AFF && sign > 0) return b;
    if (a.kind != V_AFF || b.kind != V_AFF) return top();
    if (a.tagged && b.tagged) return top();
    if (b.tagged && sign < 0) return top();
    if (b.ks && sign < 0) return top(); /* minus an induction: no longer K >= 0 */
    val_t r = a.tagged ? a : b;
    r.c = (int64_t)((uint64_t)a.c + (sign > 0 ? (uint64_t)b.c : 0 - (uint64_t)b.c));
    r.at = a.at + sign * b.at;
    r.ac = a.ac + sign * b.ac;
    r.ks = gcd64(a.ks, b.ks);
    return r;
}

static val_t mul(val_t a, val_t b)
{
    if (a.kind != V_AFF || b.kind != V_AFF) return top();
    /* a parameter word used as a number (a CArray stride): its concrete
     * value; the tag only marks where a base or a bound came from */
    if (!b.at && !b.ac && !b.ks && !(a.at || a.ac || a.ks || a.tagged)) {
        /* both plain: fine either way round */
    } else if (!b.at && !b.ac && !b.ks && b.tagged && !a.tagged) {
        b.tagged = 0;
    } else if (!a.at && !a.ac && !a.ks && a.tagged && !b.tagged) {
        a.tagged = 0;
    }
    if (a.at || a.ac || a.tagged || a.ks) {
        if (b.at || b.ac || b.tagged || b.ks) return top();
    } else {
        val_t t = a;
        a = b;
        b = t;
    }
    /* a is the affine one, b a plain constant */
    if (a.tagged && b.c != 1) return top();
    if (a.ks && b.c < 0) return top();
    a.ks *= b.c;
    a.c = (int64_t)((uint64_t)a.c * (uint64_t)b.c);
    a.at *= b.c;
    a.ac *= b.c;
    return a;
}

/* The value of a source operand. */
static val_t opnd_val(ctx_t *c, const sg_ptx_operand_t *o)
{
    switch (o->kind) {
    case SG_PTX_OPND_REG: return o->comp ? top() : c->v[o->reg];
    case SG_PTX_OPND_INT: return cst(o->ival);
    case SG_PTX_OPND_SREG: {
        val_t v = cst(0);
        switch (o->sreg) {
        case SG_PTX_SREG_TID_X: v.at = 1; return v;
        case SG_PTX_SREG_CTAID_X: v.ac = 1; return v;
        case SG_PTX_SREG_NTID_X: return cst(c->ntid);
        case SG_PTX_SREG_NCTAID_X: return cst(c->nctaid);
        case SG_PTX_SREG_TID_Y: case SG_PTX_SREG_TID_Z:
        case SG_PTX_SREG_CTAID_Y: case SG_PTX_SREG_CTAID_Z: return cst(0);
        case SG_PTX_SREG_NTID_Y: case SG_PTX_SREG_NTID_Z:
        case SG_PTX_SREG_NCTAID_Y: case SG_PTX_SREG_NCTAID_Z: return cst(1);
        default: return top();
        }
    }
    case SG_PTX_OPND_SYMBOL:
        if (o->sym_kind == SG_PTX_SYM_MODULE_VAR || o->sym_kind == SG_PTX_SYM_LOCAL_VAR) {
            val_t v;
            memset(&v, 0, sizeof v);
            v.kind = V_SYM;
            v.tag = o->sym;
            v.sym_local = o->sym_kind == SG_PTX_SYM_LOCAL_VAR;
            return v;
        }
        return top();
    default: return top();
    }
}

static uint32_t type_bits(sg_ptx_type_t t)
{
    return sg_ptx_type_size(t) * 8;
}

/* Little-endian parameter word of `bytes` at off. */
static bool param_word(const sg_kernel_t *k, uint32_t off, uint32_t width, bool sgn, int64_t *out)
{
    if (!k->param_bytes || (uint64_t)off + width > k->params_size) return false;
    uint64_t v = 0;
    for (uint32_t i = 0; i < width; i++) v |= (uint64_t)k->param_bytes[off + i] << (8 * i);
    if (sgn && width < 8 && (v >> (8 * width - 1)) & 1) v |= ~0ull << (8 * width);
    *out = (int64_t)v;
    return true;
}

/* The value an instruction defines (its first operand), or top. */
static val_t eval(ctx_t *c, const sg_ptx_stmt_t *s)
{
    const sg_ptx_instr_t *in = &s->u.ins;
    const sg_ptx_operand_t *o = in->opnds;
    uint32_t bits = type_bits(in->type);
    bool sgn = sg_ptx_type_is_signed(in->type);
    if (in->guard != SG_PTX_NONE) {
        /* a guarded definition joins with what the register held before */
        if (in->n_opnds && o[0].kind == SG_PTX_OPND_REG) return top();
    }
    switch (in->op) {
    case SG_PTX_OP_MOV:
        if (in->n_opnds != 2 || o[1].kind == SG_PTX_OPND_VECTOR) return top();
        {
            val_t v = opnd_val(c, &o[1]);
            if (v.kind == V_AFF && !v.tagged && bits < 64 && !fits(c, &v, sgn, bits) &&
                !fits(c, &v, !sgn, bits))
                return top();
            return v;
        }
    case SG_PTX_OP_CVTA:
        /* to.global / generic <-> global: the same address on every NVIDIA GPU;
         * the wrapper uses the same generic pointer */
        if (sg_ptx_instr_has_mod(in, ".local") || sg_ptx_instr_has_mod(in, ".shared") ||
            sg_ptx_instr_has_mod(in, ".param") || sg_ptx_instr_has_mod(in, ".const"))
            return opnd_val(c, &o[1]).kind == V_SYM ? opnd_val(c, &o[1]) : top();
        return in->n_opnds == 2 ? opnd_val(c, &o[1]) : top();
    case SG_PTX_OP_CVT: {
        if (in->n_opnds != 2 || in->n_mods < 2) return top();
        /* integer widening/narrowing without rounding modifiers */
        if (!sg_ptx_type_is_int(in->type) || !sg_ptx_type_is_int(in->type2)) return top();
        val_t v = opnd_val(c, &o[1]);
        if (v.kind != V_AFF) return top();
        uint32_t sbits = type_bits(in->type2);
        bool ssgn = sg_ptx_type_is_signed(in->type2);
        if (v.tagged) return sbits == 64 && bits == 64 ? v : top();
        if (!fits(c, &v, ssgn, sbits)) return top();
        if (bits < sbits && !fits(c, &v, sgn, bits)) return top();
        return v;
    }
    case SG_PTX_OP_ADD:
    case SG_PTX_OP_SUB:
        if (in->n_opnds != 3 || !sg_ptx_type_is_int(in->type) || in->n_mods > 1) return top();
        {
            val_t r = add(opnd_val(c, &o[1]), opnd_val(c, &o[2]), in->op == SG_PTX_OP_ADD ? 1 : -1);
            if (r.kind == V_AFF && r.tagged && bits != 64) return top();
            return r;
        }
    case SG_PTX_OP_MUL:
        if (in->n_opnds != 3 || !sg_ptx_type_is_int(in->type)) return top();
        if (sg_ptx_instr_has_mod(in, ".wide")) {
            val_t a = opnd_val(c, &o[1]), b = opnd_val(c, &o[2]);
            if (!fits(c, &a, sgn, bits) || !fits(c, &b, sgn, bits)) return top();
            return mul(a, b);
        }
        if (!sg_ptx_instr_has_mod(in, ".lo")) return top();
        return mul(opnd_val(c, &o[1]), opnd_val(c, &o[2]));
    case SG_PTX_OP_MAD:
        if (in->n_opnds != 4 || !sg_ptx_type_is_int(in->type)) return top();
        if (sg_ptx_instr_has_mod(in, ".wide")) {
            val_t a = opnd_val(c, &o[1]), b = opnd_val(c, &o[2]);
            if (!fits(c, &a, sgn, bits) || !fits(c, &b, sgn, bits)) return top();
            return add(mul(a, b), opnd_val(c, &o[3]), 1);
        }
        if (!sg_ptx_instr_has_mod(in, ".lo")) return top();
        return add(mul(opnd_val(c, &o[1]), opnd_val(c, &o[2])), opnd_val(c, &o[3]), 1);
    case SG_PTX_OP_NOT:
    case SG_PTX_OP_NEG: {
        /* ~x = -1 - x and -x, as integers (range checks come at widening) */
        if (in->n_opnds != 2 || !sg_ptx_type_is_int(in->type) || in->type == SG_PTX_T_PRED) return top();
        val_t a = opnd_val(c, &o[1]);
        if (a.kind != V_AFF || a.tagged || a.ks) return top();
        val_t r = a;
        r.c = (in->op == SG_PTX_OP_NOT ? -1 : 0) - a.c;
        r.at = -a.at;
        r.ac = -a.ac;
        return r;
    }
    case SG_PTX_OP_SHL: {
        if (in->n_opnds != 3) return top();
        val_t a = opnd_val(c, &o[1]), b = opnd_val(c, &o[2]);
        if (b.kind != V_AFF || b.at || b.ac || b.tagged || b.ks || b.c < 0 || b.c > 62) return top();
        return mul(a, cst((int64_t)1 << b.c));
    }
    case SG_PTX_OP_LD:
        if (in->space == SG_PTX_SPACE_PARAM && in->vec <= 1 && in->n_opnds == 2 &&
            o[1].kind == SG_PTX_OPND_ADDRESS && o[1].sym_kind == SG_PTX_SYM_PARAM &&
            o[1].reg == SG_PTX_NONE) {
            const sg_ptx_var_t *p = &c->f->params[o[1].sym];
            uint32_t off = p->param_offset + (uint32_t)o[1].ival;
            uint32_t w = sg_ptx_type_size(in->type);
            int64_t x;
            if (!w || !param_word(c->k, off, w, sgn, &x)) return top();
            val_t v = cst(x);
            if (w == 8 || w == 4) {
                v.tagged = 1;
                v.tag = off;
                v.tag_width = (uint8_t)w;
                v.tag_signed = sgn;
            }
            /* a 32-bit scalar stays usable as a bound; as an address part only 64-bit */
            return v;
        }
        return top();
    default: return top();
    }
}

static val_t join(val_t a, val_t b)
{
    if (a.kind == V_UNDEF) return b;
    if (b.kind == V_UNDEF) return a;
    if (val_eq(&a, &b)) return a;
    if (a.kind == V_SYM && b.kind == V_SYM && a.tag == b.tag && a.sym_local == b.sym_local)
        return a; /* same symbol, offsets differ: still that symbol */
    if (a.kind == V_AFF && b.kind == V_AFF && a.tagged == b.tagged && a.tag == b.tag &&
        a.at == b.at && a.ac == b.ac) {
        /* an induction: {c_a + ks_a K} and {c_b + ks_b K} are both inside
         * {min + g K} with g the gcd of the steps and the difference */
        uint64_t lo = (uint64_t)a.c < (uint64_t)b.c ? (uint64_t)a.c : (uint64_t)b.c;
        uint64_t diff = (uint64_t)a.c - lo + (uint64_t)b.c - lo;
        if (diff > (uint64_t)INT64_MAX) return top();
        val_t r = a;
        r.c = (int64_t)lo;
        r.ks = gcd64(gcd64(a.ks, b.ks), (int64_t)diff);
        return r;
    }
    return top();
}

static void define(ctx_t *c, const sg_ptx_stmt_t *s)
{
    const sg_ptx_instr_t *in = &s->u.ins;
    uint32_t defs[16];
    uint32_t nd = sg_ptx_instr_defs(in, defs, 16);
    val_t v = top();
    if (nd == 1 && in->n_opnds && in->opnds[0].kind == SG_PTX_OPND_REG && in->opnds[0].reg == defs[0])
        v = eval(c, s);
    for (uint32_t i = 0; i < nd && i < 16; i++) {
        val_t j = join(c->v[defs[i]], v);
        if (in->guard != SG_PTX_NONE) j = join(j, top());
        if (!val_eq(&j, &c->v[defs[i]])) {
            c->v[defs[i]] = j;
            c->changed = true;
        }
    }
}

/* ---- refusal list ------------------------------------------------------------------ */

static bool mod_prefix(const sg_ptx_instr_t *in, const char *p)
{
    size_t n = strlen(p);
    for (uint32_t i = 0; i < in->n_mods; i++)
        if (!strncmp(in->mods[i], p, n)) return true;
    return false;
}

/* Instructions tier 1 never lifts; returns why, or NULL. */
static const char *refused_op(const sg_ptx_instr_t *in)
{
    switch (in->op) {
    case SG_PTX_OP_EXIT: return "exit ends the thread for every later stage too";
    case SG_PTX_OP_CALL: return "calls are not lifted";
    case SG_PTX_OP_TEX: case SG_PTX_OP_TLD4: case SG_PTX_OP_TXQ: case SG_PTX_OP_SULD:
    case SG_PTX_OP_SUST: case SG_PTX_OP_SURED: case SG_PTX_OP_SUQ:
        return "texture/surface access (that cache is not coherent within a grid)";
    case SG_PTX_OP_MBARRIER: case SG_PTX_OP_TENSORMAP: case SG_PTX_OP_WGMMA:
    case SG_PTX_OP_TCGEN05: case SG_PTX_OP_CP:
        return "async-proxy operation";
    case SG_PTX_OP_GRIDDEPCONTROL: return "griddepcontrol (programmatic launch)";
    case SG_PTX_OP_SHFL: case SG_PTX_OP_VOTE: case SG_PTX_OP_MATCH: case SG_PTX_OP_REDUX:
    case SG_PTX_OP_ACTIVEMASK: case SG_PTX_OP_ELECT:
        return "warp-level operation: the fused kernel maps elements to other lanes";
    case SG_PTX_OP_ATOM: case SG_PTX_OP_RED: return "atomic memory operation";
    case SG_PTX_OP_ALLOCA: case SG_PTX_OP_STACKSAVE: case SG_PTX_OP_STACKRESTORE:
        return "dynamic stack allocation";
    case SG_PTX_OP_MULTIMEM: return "multimem access";
    case SG_PTX_OP_WMMA: case SG_PTX_OP_MMA: case SG_PTX_OP_LDMATRIX: case SG_PTX_OP_STMATRIX:
        return "warp-wide matrix operation";
    case SG_PTX_OP_SETMAXNREG: return "setmaxnreg";
    case SG_PTX_OP_BRX: return "indirect branch";
    default: break;
    }
    if (in->op == SG_PTX_OP_ST && mod_prefix(in, ".async")) return "async-proxy store";
    if (in->op == SG_PTX_OP_OTHER) return NULL; /* unknown opcodes are checked by their operands */
    return NULL;
}

static const char *refused_sreg(sg_ptx_sreg_t r)
{
    switch (r) {
    case SG_PTX_SREG_TID_X: case SG_PTX_SREG_TID_Y: case SG_PTX_SREG_TID_Z:
    case SG_PTX_SREG_NTID_X: case SG_PTX_SREG_NTID_Y: case SG_PTX_SREG_NTID_Z:
    case SG_PTX_SREG_CTAID_X: case SG_PTX_SREG_CTAID_Y: case SG_PTX_SREG_CTAID_Z:
    case SG_PTX_SREG_NCTAID_X: case SG_PTX_SREG_NCTAID_Y: case SG_PTX_SREG_NCTAID_Z:
        return NULL;
    case SG_PTX_SREG_DYNAMIC_SMEM_SIZE: case SG_PTX_SREG_TOTAL_SMEM_SIZE:
    case SG_PTX_SREG_AGGR_SMEM_SIZE:
        return "shared-memory size register (its value changes under fusion)";
    default: return "lane-, warp- or SM-dependent special register";
    }
}

/* ---- bounds checks ---------------------------------------------------------------- */

typedef struct {
    uint64_t lo, hi;
    sg_fz_bound_t hi_rt;
} ival_t;

/* Is v exactly t (ctaid.x * ntid + tid.x)? */
static bool is_t(const ctx_t *c, const val_t *v)
{
    return v->kind == V_AFF && !v->tagged && !v->ks && v->c == 0 && v->at == 1 &&
           v->ac == (int64_t)c->ntid;
}

/* The setp that defines predicate p, if it is the only definition. */
static const sg_ptx_stmt_t *pred_def(const sg_ptx_func_t *f, uint32_t p)
{
    const sg_ptx_stmt_t *found = NULL;
    for (uint32_t i = 0; i < f->n_stmts; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind != SG_PTX_STMT_INSTR) continue;
        uint32_t d[8];
        uint32_t nd = sg_ptx_instr_defs(&s->u.ins, d, 8);
        for (uint32_t k = 0; k < nd && k < 8; k++)
            if (d[k] == p) {
                if (found) return NULL;
                found = s;
            }
    }
    return found;
}

/* The t-interval a branch on predicate p (negated: neg) allows when it is
 * taken; false when p says nothing about t. */
static bool cond_interval(ctx_t *c, uint32_t p, bool neg, ival_t *taken, ival_t *fall,
                          uint64_t threads)
{
    const sg_ptx_stmt_t *s = pred_def(c->f, p);
    if (!s || s->u.ins.op != SG_PTX_OP_SETP || s->u.ins.n_opnds != 3 ||
        s->u.ins.guard != SG_PTX_NONE)
        return false;
    const sg_ptx_instr_t *in = &s->u.ins;
    if (!sg_ptx_type_is_int(in->type)) return false;
    val_t a = opnd_val(c, &in->opnds[1]), b = opnd_val(c, &in->opnds[2]);
    bool swap = false;
    if (!is_t(c, &a)) {
        if (!is_t(c, &b)) return false;
        val_t x = a;
        a = b;
        b = x;
        swap = true;
    }
    if (b.kind != V_AFF || b.at || b.ac || b.ks) return false;
    uint32_t bits = type_bits(in->type);
    bool sgn = sg_ptx_type_is_signed(in->type);
    if (bits == 0) return false; /* an untyped compare proves nothing */
    /* t must be representable in the compared width */
    if (bits < 64 && threads - 1 > (sgn ? (1ull << (bits - 1)) - 1 : (bits == 32 ? 0xffffffffull : 0xffffull)))
        return false;
    const char *cmp = in->n_mods ? in->mods[0] : "";
    static const char *const ops[][2] = {{".lt", ".gt"}, {".lo", ".hi"}, {".le", ".ge"},
                                         {".ls", ".hs"}, {".gt", ".lt"}, {".hi", ".lo"},
                                         {".ge", ".le"}, {".hs", ".ls"}};
    if (swap) { /* n cmp t is t cmp' n */
        const char *sw = NULL;
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (!strcmp(cmp, ops[i][0])) sw = ops[i][1];
        if (!sw) return false;
        cmp = sw;
    }
    /* normalize to t < n + adj (lt) or its negation */
    int64_t n = b.c;
    if (!sgn && bits < 64) n = (int64_t)((uint64_t)n & (bits == 32 ? 0xffffffffull : 0xffffull));
    bool lt;
    int64_t adj = 0;
    if (!strcmp(cmp, ".lt") || !strcmp(cmp, ".lo")) lt = true;
    else if (!strcmp(cmp, ".le") || !strcmp(cmp, ".ls")) lt = true, adj = 1;
    else if (!strcmp(cmp, ".ge") || !strcmp(cmp, ".hs")) lt = false;
    else if (!strcmp(cmp, ".gt") || !strcmp(cmp, ".hi")) lt = false, adj = 1;
    else return false;
    if (!sgn && n < 0) return false; /* huge unsigned bound: no information */
    int64_t bound = n + adj;
    if (bound < 0) bound = 0;
    ival_t in_b = {0, (uint64_t)bound > threads ? threads : (uint64_t)bound,
                   {b.tagged ? b.tag : SG_NONE, b.tag_width, b.tag_signed, adj}};
    if (!b.tagged) in_b.hi_rt.k = bound;
    ival_t out_b = {in_b.hi, threads, {SG_NONE, 0, false, (int64_t)threads}};
    bool taken_is_lt = lt != neg;
    *taken = taken_is_lt ? in_b : out_b;
    *fall = taken_is_lt ? out_b : in_b;
    return true;
}

static ival_t meet(ival_t a, ival_t b)
{
    ival_t r = a;
    if (b.lo > r.lo) r.lo = b.lo;
    if (b.hi < r.hi || (b.hi == r.hi && b.hi_rt.param_off != SG_NONE)) {
        /* equal bounds: keep the one read from a parameter, valid for other values too */
        r.hi = b.hi;
        r.hi_rt = b.hi_rt;
    }
    return r;
}

static ival_t hull(ival_t a, ival_t b, bool a_empty)
{
    if (a_empty) return b;
    ival_t r = a;
    if (b.lo < r.lo) r.lo = b.lo;
    if (b.hi > r.hi) {
        r.hi = b.hi;
        r.hi_rt = b.hi_rt;
    } else if (b.hi == r.hi && (b.hi_rt.param_off != r.hi_rt.param_off || b.hi_rt.k != r.hi_rt.k)) {
        r.hi_rt = (sg_fz_bound_t){SG_NONE, 0, false, (int64_t)r.hi}; /* agree on the constant */
    }
    return r;
}

static int block_intervals(ctx_t *c, uint64_t threads, ival_t **out)
{
    const sg_ptx_func_t *f = c->f;
    ival_t *iv = calloc(f->n_blocks ? f->n_blocks : 1, sizeof *iv);
    bool *seen = calloc(f->n_blocks ? f->n_blocks : 1, 1);
    if (!iv || !seen) {
        free(iv);
        free(seen);
        return SG_ENOMEM;
    }
    ival_t all = {0, threads, {SG_NONE, 0, false, (int64_t)threads}};
    for (int round = 0; round < 64; round++) {
        bool changed = false;
        for (uint32_t r = 0; r < f->n_rpo; r++) {
            uint32_t b = f->rpo[r];
            ival_t cur = all;
            bool empty = true;
            if (b == 0) {
                cur = all;
                empty = false;
            } else {
                for (uint32_t k = 0; k < f->blocks[b].n_pred; k++) {
                    uint32_t p = f->blocks[b].pred[k];
                    if (!seen[p]) continue;
                    ival_t e = iv[p];
                    const sg_ptx_block_t *pb = &f->blocks[p];
                    if (pb->term != SG_PTX_NONE && pb->n_succ == 2) {
                        const sg_ptx_instr_t *t = &f->stmts[pb->term].u.ins;
                        ival_t tk, fl;
                        if (t->op == SG_PTX_OP_BRA && t->guard != SG_PTX_NONE &&
                            cond_interval(c, t->guard, t->guard_neg, &tk, &fl, threads)) {
                            if (pb->succ[0] == b && pb->succ[1] != b) e = meet(e, tk);
                            else if (pb->succ[1] == b && pb->succ[0] != b) e = meet(e, fl);
                        }
                    }
                    if (e.lo >= e.hi) continue; /* this edge is never taken */
                    cur = hull(cur, e, empty);
                    empty = false;
                }
                if (empty) cur = (ival_t){0, 0, {SG_NONE, 0, false, 0}};
            }
            if (!seen[b] || cur.lo != iv[b].lo || cur.hi != iv[b].hi) {
                iv[b] = cur;
                seen[b] = true;
                changed = true;
            }
        }
        if (!changed) break;
        if (round == 63) {
            for (uint32_t b = 0; b < f->n_blocks; b++) iv[b] = all;
        }
    }
    free(seen);
    *out = iv;
    return SG_OK;
}

/* ---- must-execute --------------------------------------------------------------- */

/* Post-dominator sets (bit b of row x: b post-dominates x), NULL when the
 * function is too large to bother. */
static uint64_t *postdominators(const sg_ptx_func_t *f, uint32_t *words)
{
    uint32_t n = f->n_blocks;
    if (!n || n > 2048) return NULL;
    uint32_t w = (n + 63) / 64;
    uint64_t *pd = malloc((size_t)n * w * sizeof *pd);
    if (!pd) return NULL;
    for (uint32_t x = 0; x < n; x++) {
        uint64_t *row = pd + (size_t)x * w;
        bool exit_block = f->blocks[x].returns || f->blocks[x].n_succ == 0;
        memset(row, exit_block ? 0 : 0xff, w * sizeof *row);
        if (exit_block) row[x / 64] |= 1ull << (x % 64);
    }
    uint64_t *tmp = malloc(w * sizeof *tmp);
    if (!tmp) {
        free(pd);
        return NULL;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = f->n_rpo; r-- > 0;) {
            uint32_t x = f->rpo[r];
            const sg_ptx_block_t *b = &f->blocks[x];
            if (b->returns || b->n_succ == 0) continue;
            memset(tmp, 0xff, w * sizeof *tmp);
            for (uint32_t k = 0; k < b->n_succ; k++)
                for (uint32_t i = 0; i < w; i++) tmp[i] &= pd[(size_t)b->succ[k] * w + i];
            tmp[x / 64] |= 1ull << (x % 64);
            if (memcmp(tmp, pd + (size_t)x * w, w * sizeof *tmp)) {
                memcpy(pd + (size_t)x * w, tmp, w * sizeof *tmp);
                changed = true;
            }
        }
    }
    free(tmp);
    *words = w;
    return pd;
}

static bool pdom(const uint64_t *pd, uint32_t w, uint32_t b, uint32_t x)
{
    return (pd[(size_t)x * w + b / 64] >> (b % 64)) & 1;
}

/* Does block b run for every t in its interval? Every block that can reach
 * b must either be post-dominated by b or branch on t so that the t's
 * leaving towards blocks not post-dominated by b are outside b's interval. */
static bool must_execute(ctx_t *c, const uint64_t *pd, uint32_t w, const ival_t *iv, uint32_t b,
                         uint64_t threads)
{
    const sg_ptx_func_t *f = c->f;
    if (!pd) return false;
    uint8_t *reach = calloc(f->n_blocks, 1);
    uint32_t *stack = malloc(f->n_blocks * sizeof *stack);
    bool ok = reach && stack;
    uint32_t top_ = 0;
    if (ok) {
        reach[b] = 1;
        stack[top_++] = b;
    }
    while (ok && top_) {
        uint32_t y = stack[--top_];
        for (uint32_t k = 0; k < f->blocks[y].n_pred; k++) {
            uint32_t x = f->blocks[y].pred[k];
            if (!reach[x]) {
                reach[x] = 1;
                stack[top_++] = x;
            }
        }
    }
    for (uint32_t x = 0; ok && x < f->n_blocks; x++) {
        if (!reach[x] || x == b || f->blocks[x].rpo == SG_PTX_NONE || pdom(pd, w, b, x)) continue;
        const sg_ptx_block_t *xb = &f->blocks[x];
        if (xb->term == SG_PTX_NONE || xb->n_succ != 2) {
            ok = false;
            break;
        }
        const sg_ptx_instr_t *t = &f->stmts[xb->term].u.ins;
        ival_t tk, fl;
        if (t->op != SG_PTX_OP_BRA || t->guard == SG_PTX_NONE ||
            !cond_interval(c, t->guard, t->guard_neg, &tk, &fl, threads)) {
            ok = false;
            break;
        }
        for (uint32_t k = 0; k < 2 && ok; k++) {
            uint32_t y = xb->succ[k];
            if (y == b || pdom(pd, w, b, y)) continue;
            ival_t e = meet(iv[x], k == 0 ? tk : fl);
            if (e.lo < e.hi && e.lo < iv[b].hi && iv[b].lo < e.hi) ok = false;
        }
    }
    free(reach);
    free(stack);
    return ok;
}

/* ---- the analysis ------------------------------------------------------------------ */

/* The single definition of register r, or NULL. */
static const sg_ptx_stmt_t *single_def(const sg_ptx_func_t *f, uint32_t r, uint32_t *count)
{
    const sg_ptx_stmt_t *found = NULL;
    *count = 0;
    for (uint32_t i = 0; i < f->n_stmts; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind != SG_PTX_STMT_INSTR) continue;
        uint32_t d[8];
        uint32_t nd = sg_ptx_instr_defs(&s->u.ins, d, 8);
        for (uint32_t k = 0; k < nd && k < 8; k++)
            if (d[k] == r) {
                (*count)++;
                found = s;
            }
    }
    return *count == 1 ? found : NULL;
}

/* A float multiply ptxas may contract with a following add (no rounding
 * modifier). */
static bool contractable_mul(const sg_ptx_instr_t *in)
{
    if (in->op != SG_PTX_OP_MUL || !sg_ptx_type_is_float(in->type)) return false;
    for (uint32_t i = 0; i < in->n_mods; i++)
        if (!strcmp(in->mods[i], ".rn") || !strcmp(in->mods[i], ".rz") ||
            !strcmp(in->mods[i], ".rm") || !strcmp(in->mods[i], ".rp"))
            return false;
    return true;
}

/* For a stored value register: the contractable multiply it comes from
 * (through single-definition moves), SG_NONE if none; -1 (as UINT32_MAX-1)
 * when that cannot be decided. */
#define RN_UNDECIDED (SG_NONE - 1)
static uint32_t rn_origin(const sg_ptx_func_t *f, uint32_t reg)
{
    for (int hop = 0; hop < 16; hop++) {
        uint32_t n;
        const sg_ptx_stmt_t *d = single_def(f, reg, &n);
        if (!d) {
            /* several definitions: fine unless one of them is a multiply */
            for (uint32_t i = 0; i < f->n_stmts; i++) {
                const sg_ptx_stmt_t *s = &f->stmts[i];
                if (s->kind != SG_PTX_STMT_INSTR || !contractable_mul(&s->u.ins)) continue;
                if (s->u.ins.opnds[0].kind == SG_PTX_OPND_REG && s->u.ins.opnds[0].reg == reg)
                    return RN_UNDECIDED;
            }
            return SG_NONE;
        }
        const sg_ptx_instr_t *in = &d->u.ins;
        if (contractable_mul(in)) return in->guard == SG_PTX_NONE ? (uint32_t)(d - f->stmts) : RN_UNDECIDED;
        if (in->op == SG_PTX_OP_MOV && in->n_opnds == 2 && in->opnds[1].kind == SG_PTX_OPND_REG &&
            !in->opnds[1].comp) {
            reg = in->opnds[1].reg;
            continue;
        }
        if ((in->op == SG_PTX_OP_NEG || in->op == SG_PTX_OP_ABS) && in->n_opnds == 2 &&
            in->opnds[1].kind == SG_PTX_OPND_REG) {
            uint32_t n2;
            const sg_ptx_stmt_t *d2 = single_def(f, in->opnds[1].reg, &n2);
            if (d2 && contractable_mul(&d2->u.ins)) return RN_UNDECIDED;
        }
        return SG_NONE;
    }
    return SG_NONE;
}

static void site_from(ctx_t *c, const sg_ptx_stmt_t *s, uint32_t stmt, const ival_t *iv,
                      sg_fz_site_t *site)
{
    const sg_ptx_instr_t *in = &s->u.ins;
    memset(site, 0, sizeof *site);
    site->stmt = stmt;
    site->store = in->op == SG_PTX_OP_ST;
    site->nc = sg_ptx_instr_has_mod(in, ".nc");
    site->type = in->type;
    site->width = sg_ptx_type_size(in->type) * (in->vec ? in->vec : 1);
    site->value_reg = SG_PTX_NONE;
    site->rn_stmt = SG_NONE;
    site->base_param = SG_NONE;
    const sg_ptx_operand_t *addr = site->store ? &in->opnds[0] : &in->opnds[1];
    val_t v = addr->reg != SG_PTX_NONE ? c->v[addr->reg] : cst(0);
    if (addr->reg == SG_PTX_NONE && addr->sym_kind != SG_PTX_SYM_NONE) v = top();
    site->lo = iv->lo;
    site->hi = iv->hi;
    site->hi_rt = iv->hi_rt;
    if (v.kind != V_AFF) {
        refuse(c, s, "%s address is not an affine function of the thread and block index",
               site->store ? "store" : "load");
        return;
    }
    site->stride = v.at;
    site->cta_stride = v.ac;
    site->t_affine = v.ac == v.at * (int64_t)c->ntid;
    if (!site->t_affine) {
        if (v.ks) {
            refuse(c, s, "%s in a loop, not a function of the global thread index",
                   site->store ? "store" : "load");
            return;
        }
        *c->cta = true; /* thread-local only within a CTA, if at all: tier 2 */
    }
    site->addr0 = (uint64_t)v.c + (uint64_t)addr->ival;
    if (v.ks) {
        /* a grid-stride loop: the same thread visits t, t + S, t + 2S, ... */
        int64_t S = (int64_t)c->ntid * c->nctaid;
        site->gs = true;
        site->period = v.at * S;
        site->lo = 0;
        site->hi = c->ntid * (uint64_t)c->nctaid;
        if (v.at <= 0 || v.ks % site->period) {
            refuse(c, s, "%s in a loop whose step is not the grid stride",
                   site->store ? "store" : "load");
            return;
        }
    }
    if (v.tagged && v.tag_width == 8) {
        site->base_param = v.tag;
        int64_t word = 0;
        param_word(c->k, v.tag, 8, false, &word);
        site->base_k = (int64_t)(site->addr0 - (uint64_t)word);
    }
    if (site->stride == 0 && site->store)
        refuse(c, s, "every thread stores to the same address");
    site->lowerable = !site->gs && site->t_affine && in->vec <= 1 && in->guard == SG_PTX_NONE &&
                      (site->width == 4 || site->width == 8) && site->base_param != SG_NONE &&
                      site->stride == (int64_t)site->width;
    if (site->store) {
        const sg_ptx_operand_t *val = &in->opnds[1];
        if (val->kind == SG_PTX_OPND_REG && !val->comp) {
            site->value_reg = val->reg;
            uint32_t o = rn_origin(c->f, val->reg);
            if (o == RN_UNDECIDED)
                refuse(c, s, "stored value comes from a multiply through several paths (a "
                             "fused consumer could be contracted with it)");
            else
                site->rn_stmt = o;
        } else if (val->kind != SG_PTX_OPND_INT && val->kind != SG_PTX_OPND_FLOAT) {
            site->lowerable = false;
            if (val->kind == SG_PTX_OPND_VECTOR)
                for (uint32_t i = 0; i < val->n_elems; i++)
                    if (val->elems[i].kind == SG_PTX_OPND_REG &&
                        rn_origin(c->f, val->elems[i].reg) != SG_NONE)
                        refuse(c, s, "vector store of a multiply result");
        }
    }
}

void sg_fz_stage_free(sg_fz_stage_t *st)
{
    if (!st) return;
    free(st->sites);
    free(st->module_vars);
    memset(st, 0, sizeof *st);
}

int sg_fz_stage_analyze(const sg_ptx_module_t *mod, const sg_node_t *node, sg_fz_stage_t *st)
{
    if (!mod || !node || !st || node->type != SG_NODE_KERNEL) return SG_EINVAL;
    memset(st, 0, sizeof *st);
    st->mod = mod;
    st->node = node;
    const sg_kernel_t *k = &node->u.kernel;
    ctx_t c = {0};
    c.reason = st->reason;
    c.cta = &st->cta;
    c.m = mod;
    c.k = k;
    const sg_ptx_func_t *f = sg_ptx_find_func(mod, k->name);
    if (!f || !f->is_entry || !f->has_body) {
        snprintf(st->reason, sizeof st->reason, "the PTX defines no entry %s", k->name);
        return SG_OK;
    }
    st->func = f;
    c.f = f;
    if (k->block[1] != 1 || k->block[2] != 1 || k->grid[1] != 1 || k->grid[2] != 1) {
        snprintf(st->reason, sizeof st->reason,
                 "2-D/3-D launch (block %ux%ux%u grid %ux%ux%u): tier 1 lifts 1-D launches",
                 k->block[0], k->block[1], k->block[2], k->grid[0], k->grid[1], k->grid[2]);
        return SG_OK;
    }
    if (k->cluster[0] > 1 || k->cluster[1] > 1 || k->cluster[2] > 1) {
        snprintf(st->reason, sizeof st->reason, "thread-block clusters");
        return SG_OK;
    }
    if (k->shared_bytes) {
        snprintf(st->reason, sizeof st->reason, "dynamic shared memory (%u bytes): tier 2",
                 k->shared_bytes);
        return SG_OK;
    }
    c.ntid = k->block[0];
    c.nctaid = k->grid[0];
    st->ntid = c.ntid;
    st->nctaid = c.nctaid;
    st->threads = (uint64_t)c.ntid * c.nctaid;
    if (!c.ntid || !c.nctaid) {
        snprintf(st->reason, sizeof st->reason, "empty launch");
        return SG_OK;
    }
    if (!k->param_bytes && f->n_params) {
        snprintf(st->reason, sizeof st->reason, "parameters were not captured");
        return SG_OK;
    }
    if (k->params_size < f->params_size) {
        snprintf(st->reason, sizeof st->reason,
                 "captured parameters (%u bytes) are shorter than the PTX's (%u)", k->params_size,
                 f->params_size);
        return SG_OK;
    }
    /* the refusal list, statement by statement */
    for (uint32_t i = 0; i < f->n_stmts && !c.reason[0]; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind == SG_PTX_STMT_VAR_DECL) {
            for (uint32_t v = 0; v < s->u.decl.n; v++) {
                const sg_ptx_var_t *var = &f->vars[s->u.decl.first + v];
                if (var->space == SG_PTX_SPACE_SHARED && var->size && var->linkage != SG_PTX_LINK_EXTERN)
                    st->cta = true; /* static shared memory of its own: tier 2 */
                else if (var->space != SG_PTX_SPACE_LOCAL && var->space != SG_PTX_SPACE_REG)
                    refuse(&c, s, "%s variable %s in the body", sg_ptx_space_name(var->space),
                           var->name);
            }
            continue;
        }
        if (s->kind != SG_PTX_STMT_INSTR) continue;
        const sg_ptx_instr_t *in = &s->u.ins;
        const char *why = refused_op(in);
        if (why) {
            refuse(&c, s, "%s%s: %s", in->opcode, in->n_mods ? in->mods[0] : "", why);
            break;
        }
        if (in->op == SG_PTX_OP_BAR || in->op == SG_PTX_OP_BARRIER) {
            /* a whole-CTA barrier (bar.sync 0) is tier 2; anything finer is not fused */
            bool whole = in->n_opnds == 1 && in->opnds[0].kind == SG_PTX_OPND_INT &&
                         in->opnds[0].ival == 0 && in->guard == SG_PTX_NONE &&
                         (sg_ptx_instr_has_mod(in, ".sync") || in->n_mods == 0) &&
                         !sg_ptx_instr_has_mod(in, ".warp") && !mod_prefix(in, ".cluster");
            if (!whole) {
                refuse(&c, s, "%s%s: a barrier other than bar.sync 0 of the whole CTA", in->opcode,
                       in->n_mods ? in->mods[0] : "");
                break;
            }
            st->cta = true;
        }
        for (uint32_t o = 0; o < in->n_opnds; o++) {
            const sg_ptx_operand_t *op = &in->opnds[o];
            const sg_ptx_operand_t *list = op->kind == SG_PTX_OPND_VECTOR ? op->elems : op;
            uint32_t nl = op->kind == SG_PTX_OPND_VECTOR ? op->n_elems : 1;
            for (uint32_t e = 0; e < nl; e++) {
                if (list[e].kind == SG_PTX_OPND_SREG) {
                    const char *w = refused_sreg(list[e].sreg);
                    if (w) refuse(&c, s, "%s: %s", list[e].name, w);
                    else if (in->op != SG_PTX_OP_MOV && in->op != SG_PTX_OP_CVT)
                        refuse(&c, s, "%s used outside mov/cvt", list[e].name);
                }
                if (list[e].kind == SG_PTX_OPND_SYMBOL && list[e].sym_kind == SG_PTX_SYM_PARAM)
                    refuse(&c, s, "the address of a parameter is taken");
                if (list[e].kind == SG_PTX_OPND_SYMBOL && list[e].sym_kind == SG_PTX_SYM_FUNC)
                    refuse(&c, s, "a function address is taken");
            }
            if (op->kind == SG_PTX_OPND_ADDRESS && op->sym_kind == SG_PTX_SYM_PARAM &&
                (op->reg != SG_PTX_NONE || in->space != SG_PTX_SPACE_PARAM || in->op != SG_PTX_OP_LD))
                refuse(&c, s, "the parameter space is accessed other than by ld.param");
            if (op->kind == SG_PTX_OPND_ADDRESS && op->reg != SG_PTX_NONE &&
                in->space == SG_PTX_SPACE_PARAM)
                refuse(&c, s, "ld.param through a register (a taken parameter address)");
        }
        if ((in->op == SG_PTX_OP_LD || in->op == SG_PTX_OP_ST || in->op == SG_PTX_OP_LDU ||
             in->op == SG_PTX_OP_PREFETCH || in->op == SG_PTX_OP_PREFETCHU) &&
            in->space == SG_PTX_SPACE_SHARED_CLUSTER)
            refuse(&c, s, "distributed shared memory access");
        if ((in->op == SG_PTX_OP_LD || in->op == SG_PTX_OP_ST) && in->space == SG_PTX_SPACE_SHARED)
            st->cta = true;
        if (in->op == SG_PTX_OP_LD && in->space == SG_PTX_SPACE_PARAM && in->vec > 1)
            refuse(&c, s, "vector ld.param");
        if (in->op == SG_PTX_OP_LDU) refuse(&c, s, "ldu");
        if (in->op == SG_PTX_OP_CVTA &&
            (sg_ptx_instr_has_mod(in, ".shared") || sg_ptx_instr_has_mod(in, ".param")))
            refuse(&c, s, "cvta to or from %s", sg_ptx_instr_has_mod(in, ".param") ? ".param" : ".shared");
        if (in->op == SG_PTX_OP_ST && in->space == SG_PTX_SPACE_CONST)
            refuse(&c, s, "store to .const");
    }
    /* module variables: read-only tables may be copied, anything else no */
    for (uint32_t i = 0; i < f->n_stmts && !c.reason[0]; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind != SG_PTX_STMT_INSTR) continue;
        for (uint32_t o = 0; o < s->u.ins.n_opnds; o++) {
            const sg_ptx_operand_t *op = &s->u.ins.opnds[o];
            if (!((op->kind == SG_PTX_OPND_SYMBOL || op->kind == SG_PTX_OPND_ADDRESS) &&
                  op->sym_kind == SG_PTX_SYM_MODULE_VAR))
                continue;
            const sg_ptx_var_t *var = &mod->vars[op->sym];
            if ((var->space != SG_PTX_SPACE_GLOBAL && var->space != SG_PTX_SPACE_CONST) ||
                var->linkage == SG_PTX_LINK_EXTERN || !var->init_len || var->size == 0) {
                refuse(&c, s, "module-scope %s variable %s%s", sg_ptx_space_name(var->space),
                       var->name, var->space == SG_PTX_SPACE_SHARED ? ": tier 2" : " (not a read-only initialized table)");
                break;
            }
            bool have = false;
            for (uint32_t m = 0; m < st->n_module_vars; m++) have |= st->module_vars[m] == op->sym;
            if (!have) {
                uint32_t *mv = realloc(st->module_vars, (st->n_module_vars + 1) * sizeof *mv);
                if (!mv) return SG_ENOMEM;
                st->module_vars = mv;
                mv[st->n_module_vars++] = op->sym;
            }
        }
    }
    if (c.reason[0]) return SG_OK;
    /* register values */
    c.v = calloc(f->n_regs ? f->n_regs : 1, sizeof *c.v);
    if (!c.v) return SG_ENOMEM;
    for (int round = 0; round < 32; round++) {
        c.changed = false;
        for (uint32_t i = 0; i < f->n_stmts; i++)
            if (f->stmts[i].kind == SG_PTX_STMT_INSTR) define(&c, &f->stmts[i]);
        if (!c.changed) break;
        if (round == 31) refuse(&c, NULL, "register values did not settle");
    }
    ival_t *iv = NULL;
    int rc = c.reason[0] ? SG_OK : block_intervals(&c, st->threads, &iv);
    if (rc) {
        free(c.v);
        return rc;
    }
    uint32_t pdw = 0;
    uint64_t *pd = c.reason[0] ? NULL : postdominators(f, &pdw);
    /* a thread that returned early would not reach a later stage's barrier,
     * nor this one's: every barrier must run in every thread */
    for (uint32_t i = 0; i < f->n_stmts && !c.reason[0]; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind != SG_PTX_STMT_INSTR ||
            (s->u.ins.op != SG_PTX_OP_BAR && s->u.ins.op != SG_PTX_OP_BARRIER))
            continue;
        if (!pd || s->block == SG_PTX_NONE || !pdom(pd, pdw, s->block, 0))
            refuse(&c, s, "barrier that a thread can skip (an early return before it)");
    }
    /* global accesses; stores to anything not thread-local are refused */
    for (uint32_t i = 0; i < f->n_stmts && !c.reason[0]; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind != SG_PTX_STMT_INSTR) continue;
        const sg_ptx_instr_t *in = &s->u.ins;
        if (in->op != SG_PTX_OP_LD && in->op != SG_PTX_OP_ST) continue;
        if (in->space == SG_PTX_SPACE_PARAM || in->space == SG_PTX_SPACE_LOCAL ||
            in->space == SG_PTX_SPACE_SHARED)
            continue; /* the stage's own memory */
        const sg_ptx_operand_t *addr = in->op == SG_PTX_OP_ST ? &in->opnds[0] : &in->opnds[1];
        if (addr->kind != SG_PTX_OPND_ADDRESS) {
            refuse(&c, s, "unexpected address operand");
            break;
        }
        val_t base = addr->reg != SG_PTX_NONE ? c.v[addr->reg] : top();
        if (addr->reg == SG_PTX_NONE && addr->sym_kind == SG_PTX_SYM_MODULE_VAR) {
            if (in->op == SG_PTX_OP_ST) refuse(&c, s, "store to module variable %s", addr->name);
            continue; /* a read of a copied table */
        }
        if (base.kind == V_SYM) {
            if (in->op == SG_PTX_OP_ST && !base.sym_local)
                refuse(&c, s, "store into a module variable");
            if (!base.sym_local && in->space != SG_PTX_SPACE_GLOBAL &&
                in->space != SG_PTX_SPACE_CONST && in->space != SG_PTX_SPACE_NONE)
                refuse(&c, s, "unexpected access to a module variable");
            if (base.sym_local && in->space != SG_PTX_SPACE_NONE && in->space != SG_PTX_SPACE_LOCAL)
                refuse(&c, s, "local variable accessed in another space");
            continue;
        }
        if (in->space != SG_PTX_SPACE_GLOBAL && in->space != SG_PTX_SPACE_NONE) {
            if (in->space == SG_PTX_SPACE_CONST && in->op == SG_PTX_OP_LD) {
                refuse(&c, s, "ld.const from a computed address");
                break;
            }
            refuse(&c, s, "%s access", sg_ptx_space_name(in->space));
            break;
        }
        sg_fz_site_t *ns = realloc(st->sites, (st->n_sites + 1) * sizeof *ns);
        if (!ns) {
            free(pd);
            free(iv);
            free(c.v);
            return SG_ENOMEM;
        }
        st->sites = ns;
        uint32_t b = s->block != SG_PTX_NONE ? s->block : 0;
        site_from(&c, s, i, &iv[b], &ns[st->n_sites]);
        ns[st->n_sites].must = !ns[st->n_sites].gs && in->guard == SG_PTX_NONE &&
                               must_execute(&c, pd, pdw, iv, b, st->threads);
        if (ns[st->n_sites].lo < ns[st->n_sites].hi) st->n_sites++; /* unreachable sites never run */
    }
    free(pd);
    free(iv);
    free(c.v);
    st->ok = !c.reason[0];
    return SG_OK;
}
