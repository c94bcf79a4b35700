/* fuse_stage.c: what lifting needs to know about one stage (fuse.h, step
 * 1), with its captured parameters and geometry as concrete values.
 *
 * Legality is the project's one access analysis (code/access.h): the
 * kernel's facts (flags) give the refusal list; each global access site,
 * evaluated for this launch, gives its address as a linear function of the
 * original thread's global index t = ctaid.x * ntid.x + tid.x (coef,
 * c0, and for a grid-stride loop the step per iteration), the interval of
 * t it can run for (from its byte range, which is exact where the analysis
 * proves it), whether it runs for every t of that interval (exact and
 * dense), and its bound as a parameter word (from the fact t < p + k that
 * the bounds check gave). Nothing here re-derives those.
 *
 * What stays here is the lifter's own view of the PTX, things only the
 * transformation needs: which special registers it can virtualize and
 * where, the forms of ld.param and barriers it can rewrite, the module
 * tables it copies, the statement of each site and its stored register,
 * and the rounding of a stored product (numerics, fuse.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/access.h"
#include "fuse.h"

typedef struct {
    sg_fz_stage_t *st;
    const sg_ptx_func_t *f;
    const sg_kernel_t *k;
} ctx_t;

static void refuse(ctx_t *c, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void refuse(ctx_t *c, uint32_t line, const char *fmt, ...)
{
    char *reason = c->st->reason;
    if (reason[0]) return; /* the first reason wins */
    char msg[SG_FZ_REASON - 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line)
        snprintf(reason, SG_FZ_REASON, "line %u: %.*s", line, (int)(SG_FZ_REASON - 24), msg);
    else
        snprintf(reason, SG_FZ_REASON, "%s", msg);
}

/* ---- the refusal list, from the kernel's facts ------------------------------------------ */

static const struct {
    sg_access_flag_t flag;
    const char *why;
} refused_flags[] = {
    {SG_ACCESS_F_EXIT, "exit ends the thread for every later stage too"},
    {SG_ACCESS_F_TRAP, "trap"},
    {SG_ACCESS_F_TEXTURE, "texture access (that cache is not coherent within a grid)"},
    {SG_ACCESS_F_SURFACE, "surface access (that cache is not coherent within a grid)"},
    {SG_ACCESS_F_ASYNC_PROXY, "async-proxy operation"},
    {SG_ACCESS_F_CP_ASYNC, "cp.async (an asynchronous copy)"},
    {SG_ACCESS_F_MBARRIER, "mbarrier"},
    {SG_ACCESS_F_ENVREG, "reads %envreg (the driver's environment: grid sync and the like)"},
    {SG_ACCESS_F_CALL, "calls are not lifted"},
    {SG_ACCESS_F_EXTERN_CALL, "calls an extern function"},
    {SG_ACCESS_F_INDIRECT_CALL, "indirect call"},
    {SG_ACCESS_F_RUNTIME_CALL, "calls the device runtime (printf, malloc, assert)"},
    {SG_ACCESS_F_DEVICE_LAUNCH, "device-side launch"},
    {SG_ACCESS_F_DYN_SMEM_SIZE, "shared-memory size register (its value changes under fusion)"},
    {SG_ACCESS_F_DYN_SHARED, "dynamic shared memory (.extern .shared)"},
    {SG_ACCESS_F_EARLY_RETURN, "barrier that a thread can skip (an early return before it)"},
    {SG_ACCESS_F_PARAM_ADDRESS, "the address of a parameter is taken"},
    {SG_ACCESS_F_GRIDDEP, "griddepcontrol (programmatic launch)"},
    {SG_ACCESS_F_ATOMIC, "atomic memory operation"},
    {SG_ACCESS_F_CLUSTER, "thread-block clusters or distributed shared memory"},
    {SG_ACCESS_F_CLOCK, "reads a clock"},
    {SG_ACCESS_F_SETMAXNREG, "setmaxnreg"},
    {SG_ACCESS_F_WARP, "warp-level or lane-dependent operation: the fused kernel maps elements to "
                       "other lanes"},
    {SG_ACCESS_F_DYN_STACK, "dynamic stack allocation"},
    {SG_ACCESS_F_INDIRECT_BRANCH, "indirect branch"},
};

/* The refused fact that comes first in the code, if any. */
static void refuse_flags(ctx_t *c, const sg_access_kernel_t *ak)
{
    uint32_t best = SG_NONE, line = UINT32_MAX;
    for (uint32_t i = 0; i < sizeof refused_flags / sizeof refused_flags[0]; i++) {
        sg_access_flag_t f = refused_flags[i].flag;
        if (!((ak->flags >> f) & 1u)) continue;
        uint32_t l = ak->flag_line[f] ? ak->flag_line[f] : UINT32_MAX - 1;
        if (best == SG_NONE || l < line) best = i, line = l;
    }
    if (best != SG_NONE)
        refuse(c, line < UINT32_MAX - 1 ? line : 0, "%s: %s", sg_access_flag_name(refused_flags[best].flag),
               refused_flags[best].why);
}

/* ---- the lifter's own view --------------------------------------------------------------- */

static bool mod_prefix(const sg_ptx_instr_t *in, const char *p)
{
    size_t n = strlen(p);
    for (uint32_t i = 0; i < in->n_mods; i++)
        if (!strncmp(in->mods[i], p, n)) return true;
    return false;
}

/* Special registers the wrapper virtualizes: tid.x and ctaid.x are fed in
 * per element, ntid/nctaid become the original constants, y and z are 0
 * and 1 (1-D launches). */
static bool virtualized_sreg(sg_ptx_sreg_t r)
{
    return r >= SG_PTX_SREG_TID_X && r <= SG_PTX_SREG_NCTAID_Z;
}

/* What the transformation cannot rewrite, statement by statement. */
static void lifter_checks(ctx_t *c)
{
    const sg_ptx_func_t *f = c->f;
    for (uint32_t i = 0; i < f->n_stmts && !c->st->reason[0]; i++) {
        const sg_ptx_stmt_t *s = &f->stmts[i];
        if (s->kind == SG_PTX_STMT_VAR_DECL) {
            for (uint32_t v = 0; v < s->u.decl.n; v++) {
                const sg_ptx_var_t *var = &f->vars[s->u.decl.first + v];
                if (var->space == SG_PTX_SPACE_SHARED && var->size && var->linkage != SG_PTX_LINK_EXTERN)
                    c->st->cta = true; /* static shared memory of its own: tier 2 */
                else if (var->space != SG_PTX_SPACE_LOCAL && var->space != SG_PTX_SPACE_REG)
                    refuse(c, s->line, "%s variable %s in the body", sg_ptx_space_name(var->space),
                           var->name);
            }
            continue;
        }
        if (s->kind != SG_PTX_STMT_INSTR) continue;
        const sg_ptx_instr_t *in = &s->u.ins;
        if (in->op == SG_PTX_OP_BAR || in->op == SG_PTX_OP_BARRIER) {
            /* a whole-CTA barrier (bar.sync 0) becomes a kernel boundary of the
             * CTA; anything finer has no meaning across stages */
            bool whole = in->n_opnds == 1 && in->opnds[0].kind == SG_PTX_OPND_INT &&
                         in->opnds[0].ival == 0 && in->guard == SG_PTX_NONE &&
                         (sg_ptx_instr_has_mod(in, ".sync") || in->n_mods == 0) &&
                         !sg_ptx_instr_has_mod(in, ".warp") && !mod_prefix(in, ".cluster");
            if (!whole)
                refuse(c, s->line, "%s%s: a barrier other than bar.sync 0 of the whole CTA", in->opcode,
                       in->n_mods ? in->mods[0] : "");
            c->st->cta = true;
        }
        for (uint32_t o = 0; o < in->n_opnds; o++) {
            const sg_ptx_operand_t *op = &in->opnds[o];
            const sg_ptx_operand_t *list = op->kind == SG_PTX_OPND_VECTOR ? op->elems : op;
            uint32_t nl = op->kind == SG_PTX_OPND_VECTOR ? op->n_elems : 1;
            for (uint32_t e = 0; e < nl; e++) {
                if (list[e].kind == SG_PTX_OPND_SREG) {
                    if (!virtualized_sreg(list[e].sreg))
                        refuse(c, s->line, "special register %s cannot be virtualized", list[e].name);
                    else if (in->op != SG_PTX_OP_MOV && in->op != SG_PTX_OP_CVT)
                        refuse(c, s->line, "%s used outside mov/cvt", list[e].name);
                }
                if (list[e].kind == SG_PTX_OPND_SYMBOL && list[e].sym_kind == SG_PTX_SYM_FUNC)
                    refuse(c, s->line, "a function address is taken");
            }
            if (op->kind == SG_PTX_OPND_ADDRESS && op->sym_kind == SG_PTX_SYM_PARAM &&
                (op->reg != SG_PTX_NONE || in->space != SG_PTX_SPACE_PARAM || in->op != SG_PTX_OP_LD))
                refuse(c, s->line, "the parameter space is accessed other than by ld.param");
        }
        if (in->op == SG_PTX_OP_LD && in->space == SG_PTX_SPACE_PARAM && in->vec > 1)
            refuse(c, s->line, "vector ld.param");
        if ((in->op == SG_PTX_OP_LD || in->op == SG_PTX_OP_ST) && in->n_opnds < 2)
            refuse(c, s->line, "%s with %u operands", in->opcode, in->n_opnds); /* ld d, [a]; st [a], v */
        else if (in->op == SG_PTX_OP_LD && in->space == SG_PTX_SPACE_PARAM &&
                 (in->opnds[1].kind != SG_PTX_OPND_ADDRESS || in->opnds[1].sym_kind != SG_PTX_SYM_PARAM ||
                  in->opnds[1].sym >= c->f->n_params))
            /* the generator reads it from the wrapper's copy of that parameter */
            refuse(c, s->line, "ld.param not from one of the kernel's parameters");
        if (in->op == SG_PTX_OP_LDU) refuse(c, s->line, "ldu");
        if (in->op == SG_PTX_OP_CVTA &&
            (sg_ptx_instr_has_mod(in, ".shared") || sg_ptx_instr_has_mod(in, ".param")))
            refuse(c, s->line, "cvta to or from %s",
                   sg_ptx_instr_has_mod(in, ".param") ? ".param" : ".shared");
        if (in->op == SG_PTX_OP_ST && in->space == SG_PTX_SPACE_CONST) refuse(c, s->line, "store to .const");
        if ((in->op == SG_PTX_OP_LD || in->op == SG_PTX_OP_ST) && in->space == SG_PTX_SPACE_SHARED)
            c->st->cta = true;
    }
}

/* Module variables the body names: read-only initialized tables are copied
 * into the fused module (sinf's __cudart_i2opi_f); anything else is not. */
static int module_tables(ctx_t *c, const sg_ptx_module_t *mod)
{
    const sg_ptx_func_t *f = c->f;
    sg_fz_stage_t *st = c->st;
    for (uint32_t i = 0; i < f->n_stmts && !st->reason[0]; i++) {
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
                refuse(c, s->line, "module-scope %s variable %s%s", sg_ptx_space_name(var->space),
                       var->name,
                       var->space == SG_PTX_SPACE_SHARED ? ": tier 2"
                                                         : " (not a read-only initialized table)");
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
    return SG_OK;
}

/* ---- numerics (the lifter's) ------------------------------------------------------------- */

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

/* ---- access sites, from the evaluated facts ---------------------------------------------- */

static bool param_word(const sg_kernel_t *k, uint32_t off, uint32_t width, bool sgn, int64_t *out)
{
    if (!k->param_bytes || width == 0 || width > 8 || (uint64_t)off + width > k->params_size)
        return false; /* (a zero width would shift by -1 below) */
    uint64_t v = 0;
    for (uint32_t i = 0; i < width; i++) v |= (uint64_t)k->param_bytes[off + i] << (8 * i);
    if (sgn && width < 8 && (v >> (8 * width - 1)) & 1) v |= ~0ull << (8 * width);
    *out = (int64_t)v;
    return true;
}

/* Is the term coef * atoms exactly +1 * t's part a (tid.x) or b (ntid.x * ctaid.x)? */
static bool is_atom(sg_access_atom_t a, uint32_t sreg)
{
    return SG_ACCESS_ATOM_KIND(a) == SG_ACCESS_ATOM_SREG && SG_ACCESS_ATOM_ARG(a) == sreg;
}

/* A fact "t + c - p < 0" or "<= 0" (the bounds check t < n with n a
 * parameter word), as the bound t < p + k: true with *b set. */
static bool t_bound_fact(const sg_access_cond_t *f, sg_fz_bound_t *b)
{
    if (f->from_iter || (f->rel != SG_ACCESS_LT && f->rel != SG_ACCESS_LE)) return false;
    bool tid = false, blk = false, par = false;
    for (uint32_t i = 0; i < f->e.n; i++) {
        const sg_access_term_t *t = &f->e.t[i];
        if (t->coef == 1 && !t->atoms[1] && is_atom(t->atoms[0], SG_ACCESS_TID_X)) {
            tid = true;
        } else if (t->coef == 1 && !t->atoms[2] &&
                   ((is_atom(t->atoms[0], SG_ACCESS_NTID_X) && is_atom(t->atoms[1], SG_ACCESS_CTAID_X)) ||
                    (is_atom(t->atoms[1], SG_ACCESS_NTID_X) && is_atom(t->atoms[0], SG_ACCESS_CTAID_X)))) {
            blk = true;
        } else if (t->coef == -1 && !t->atoms[1] &&
                   SG_ACCESS_ATOM_KIND(t->atoms[0]) == SG_ACCESS_ATOM_PARAM && !par) {
            uint32_t off, w;
            bool sgn;
            sg_access_param_atom_decode(t->atoms[0], &off, &w, &sgn);
            if (w != 4 && w != 8) return false;
            b->param_off = off;
            b->width = w;
            b->is_signed = sgn;
            par = true;
        } else {
            return false;
        }
    }
    if (!tid || !blk || !par) return false;
    b->k = f->rel == SG_ACCESS_LT ? -f->e.c : 1 - f->e.c;
    return true;
}

/* The runtime form of the bound hi: a bounds-check fact of the site whose
 * value for this launch is hi, else the constant. */
static sg_fz_bound_t bound_of(const ctx_t *c, const sg_access_kernel_t *ak, const sg_access_site_t *x,
                              uint64_t hi, uint64_t threads)
{
    for (uint32_t i = 0; i < x->n_conds; i++) {
        sg_fz_bound_t b = {SG_NONE, 0, false, 0};
        if (!t_bound_fact(&ak->conds[x->first_cond + i], &b)) continue;
        int64_t p;
        if (!param_word(c->k, b.param_off, b.width, b.is_signed, &p)) continue;
        __int128 v = (__int128)p + b.k;
        if (v < 0) v = 0;
        if (v > (__int128)threads) v = threads;
        if ((uint64_t)v == hi) return b;
    }
    return (sg_fz_bound_t){SG_NONE, 0, false, (int64_t)hi};
}

/* One evaluated access site as the lifter's site; false when the stage is
 * refused (reason set) or the site never runs (*skip). */
static bool site_from(ctx_t *c, const sg_access_kernel_t *ak, const sg_access_site_t *x,
                      const sg_access_range_t *r, sg_fz_site_t *site, bool *skip)
{
    sg_fz_stage_t *st = c->st;
    const sg_ptx_func_t *f = c->f;
    *skip = false;
    const char *what = x->kind == SG_ACCESS_STORE ? "store" : "load";
    if (x->kind == SG_ACCESS_ATOMIC) {
        refuse(c, x->line, "atomic memory operation");
        return false;
    }
    if (x->kind == SG_ACCESS_CALL) {
        refuse(c, x->line, "a pointer is passed to a call");
        return false;
    }
    if (x->base_kind == SG_ACCESS_BASE_SYMBOL) {
        /* a read of a table copied with the stage (module_tables) */
        if (x->kind != SG_ACCESS_LOAD) refuse(c, x->line, "store to module variable %s", x->base_symbol);
        *skip = true;
        return !st->reason[0];
    }
    if (r->status == SG_ACCESS_ST_NEVER) {
        *skip = true; /* never runs in this launch */
        return true;
    }
    if (x->reason != SG_ACCESS_OK || r->status != SG_ACCESS_ST_KNOWN) {
        uint8_t why = x->reason != SG_ACCESS_OK ? x->reason : r->reason;
        const char *d = x->reason != SG_ACCESS_OK ? x->detail : r->detail;
        if (!strncmp(d, "line ", 5) && strstr(d, ": ")) d = strstr(d, ": ") + 2; /* said already */
        refuse(c, x->line, "%s address: %s%s%s%s", what, sg_access_reason_name((sg_access_reason_t)why),
               d[0] ? " (" : "", d, d[0] ? ")" : "");
        return false;
    }
    if (x->stmt >= f->n_stmts || f->stmts[x->stmt].kind != SG_PTX_STMT_INSTR ||
        (f->stmts[x->stmt].u.ins.op != SG_PTX_OP_LD && f->stmts[x->stmt].u.ins.op != SG_PTX_OP_ST)) {
        refuse(c, x->line, "%s: not an ld/st the lifter can rewrite", what);
        return false;
    }
    const sg_ptx_stmt_t *s = &f->stmts[x->stmt];
    const sg_ptx_instr_t *in = &s->u.ins;
    if (x->width == 0 || x->width > 256) { /* an untyped or odd ld/st (fuzz_lift) */
        refuse(c, x->line, "%s of %u bytes: the lifter needs a width of 1 to 256", what, x->width);
        return false;
    }
    if (!r->affine_ids) {
        refuse(c, x->line, "%s address is not an affine function of the thread and block index",
               what);
        return false;
    }
    memset(site, 0, sizeof *site);
    site->stmt = x->stmt;
    site->store = x->kind == SG_ACCESS_STORE;
    site->nc = sg_ptx_instr_has_mod(in, ".nc");
    site->type = in->type;
    site->width = x->width;
    site->value_reg = SG_PTX_NONE;
    site->rn_stmt = SG_NONE;
    site->base_param = x->base_kind == SG_ACCESS_BASE_PARAM ? x->base_param : SG_NONE;
    site->base_k = r->c0;
    site->addr0 = r->base + (uint64_t)r->c0;
    site->stride = r->coef[0];
    site->cta_stride = r->coef[3];
    site->t_affine = site->cta_stride == site->stride * (int64_t)st->ntid;
    site->lo = 0;
    site->hi = st->threads;
    site->hi_rt = (sg_fz_bound_t){SG_NONE, 0, false, (int64_t)st->threads};
    if (r->rest_gcd) {
        /* a grid-stride loop (its iterations, an unrolled body's copies, a
         * remainder loop before it): the thread visits t + m*S for integers m,
         * which holds when every other term moves by whole grid strides */
        int64_t S = (int64_t)st->ntid * st->nctaid;
        site->gs = true;
        site->period = site->stride * S;
        if (!site->t_affine) {
            refuse(c, x->line, "%s in a loop, not a function of the global thread index", what);
            return false;
        }
        if (site->stride <= 0 || r->rest_gcd % site->period) {
            refuse(c, x->line, "%s in a loop whose step is not the grid stride", what);
            return false;
        }
    } else if (!site->t_affine) {
        st->cta = true; /* thread-local only within a CTA, if at all: tier 2 */
    } else if (site->stride) {
        /* the t's it can run for: its bytes are addr0 + stride * t, one t per address */
        int64_t w = (int64_t)site->width, a = (int64_t)(r->lo - site->addr0),
                b = (int64_t)(r->hi - (uint64_t)w - site->addr0);
        int64_t lo = site->stride > 0 ? a : b, hi = site->stride > 0 ? b : a;
        int64_t sd = site->stride > 0 ? site->stride : -site->stride;
        if (lo % sd == 0 && hi % sd == 0) {
            lo /= site->stride > 0 ? sd : -sd;
            hi /= site->stride > 0 ? sd : -sd;
            if (site->stride < 0) {
                int64_t t = lo;
                lo = hi;
                hi = t;
            }
            if (lo < 0) lo = 0;
            if (hi + 1 > (int64_t)st->threads) hi = (int64_t)st->threads - 1;
            if (lo <= hi) {
                site->lo = (uint64_t)lo;
                site->hi = (uint64_t)hi + 1;
            }
        }
        site->hi_rt = bound_of(c, ak, x, site->hi, st->threads);
        /* every t of [lo, hi) runs it: an exact, dense progression of one element per t */
        site->must = in->guard == SG_PTX_NONE && r->exact && r->dense && sd == w;
    } else if (site->store) {
        refuse(c, x->line, "every thread stores to the same address");
        return false;
    }
    site->lowerable = !site->gs && site->t_affine && !x->vector && in->vec <= 1 &&
                      in->guard == SG_PTX_NONE && (site->width == 4 || site->width == 8) &&
                      site->base_param != SG_NONE && site->stride == (int64_t)site->width;
    if (site->store) {
        const sg_ptx_operand_t *val = &in->opnds[1];
        if (val->kind == SG_PTX_OPND_REG && !val->comp) {
            site->value_reg = val->reg;
            uint32_t o = rn_origin(f, val->reg);
            if (o == RN_UNDECIDED)
                refuse(c, x->line, "stored value comes from a multiply through several paths (a "
                                   "fused consumer could be contracted with it)");
            else
                site->rn_stmt = o;
        } else if (val->kind != SG_PTX_OPND_INT && val->kind != SG_PTX_OPND_FLOAT) {
            site->lowerable = false;
            if (val->kind == SG_PTX_OPND_VECTOR)
                for (uint32_t i = 0; i < val->n_elems; i++)
                    if (val->elems[i].kind == SG_PTX_OPND_REG && rn_origin(f, val->elems[i].reg) != SG_NONE)
                        refuse(c, x->line, "vector store of a multiply result");
        }
    }
    return !st->reason[0];
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
    return sg_fz_stage_analyze_with(mod, NULL, node, st);
}

int sg_fz_stage_analyze_with(const sg_ptx_module_t *mod, const sg_access_kernel_t *ak,
                             const sg_node_t *node, sg_fz_stage_t *st)
{
    if (!mod || !node || !st || node->type != SG_NODE_KERNEL) return SG_EINVAL;
    memset(st, 0, sizeof *st);
    st->mod = mod;
    st->node = node;
    const sg_kernel_t *k = &node->u.kernel;
    ctx_t c = {st, NULL, k};
    const sg_ptx_func_t *f = sg_ptx_find_func(mod, k->name);
    if (!f || !f->is_entry || !f->has_body) {
        snprintf(st->reason, sizeof st->reason, "the PTX defines no entry %s", k->name);
        return SG_OK;
    }
    st->func = f;
    c.f = f;
    /* the launch */
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
    st->ntid = k->block[0];
    st->nctaid = k->grid[0];
    st->threads = (uint64_t)st->ntid * st->nctaid;
    if (!st->ntid || !st->nctaid) {
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
    /* the code's facts */
    sg_access_kernel_t own;
    memset(&own, 0, sizeof own);
    int rc = SG_OK;
    if (!ak) {
        rc = sg_access_analyze_ptx(mod, k->name, &own);
        if (rc && rc != SG_ENOENT) {
            sg_access_kernel_free(&own);
            return rc;
        }
        ak = &own;
    }
    sg_access_eval_t ev;
    memset(&ev, 0, sizeof ev);
    if (ak->status || ak->reason != SG_ACCESS_OK) {
        refuse(&c, 0, "the access analysis gives up on the kernel: %s%s%s",
               sg_access_reason_name((sg_access_reason_t)ak->reason), ak->detail[0] ? ": " : "", ak->detail);
        goto done;
    }
    refuse_flags(&c, ak);
    if ((ak->flags >> SG_ACCESS_F_SHARED) & 1u) st->cta = true;
    if ((ak->flags >> SG_ACCESS_F_BARRIER) & 1u) st->cta = true;
    lifter_checks(&c);
    if (!st->reason[0] && (rc = module_tables(&c, mod))) goto done;
    if (st->reason[0]) goto done;
    /* no buffers: the ranges are what the code gives, never cut to a buffer */
    if ((rc = sg_access_eval(ak, k, NULL, 0, &ev))) goto done;
    st->sites = calloc(ak->n_sites ? ak->n_sites : 1, sizeof *st->sites);
    if (!st->sites) {
        rc = SG_ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < ak->n_sites && !st->reason[0]; i++) {
        bool skip;
        if (site_from(&c, ak, &ak->sites[i], &ev.ranges[i], &st->sites[st->n_sites], &skip) && !skip)
            st->n_sites++;
    }
done:
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&own);
    st->ok = !rc && !st->reason[0];
    return rc;
}
