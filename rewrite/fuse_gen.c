/* fuse_gen.c: the fused kernel as CUDA C for NVRTC (fuse.h, step 3): the
 * wrapper (element mapping, 16-byte preloads, write-backs) around one
 * inline PTX block per stage and element, each the stage's body verbatim
 * with its registers renamed into the block's scope, labels made unique
 * with %=, special registers virtualized, lifted accesses and ld.param
 * turned into moves. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/fatbin.h"
#include "fuse.h"

/* ---- a growable string ------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    bool oom;
} sb_t;

static void sb_put(sb_t *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (b->n + n + 1 > c) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_printf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb_t *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k < sizeof small) {
        sb_put(b, small, (size_t)k);
        return;
    }
    char *big = malloc((size_t)k + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)k);
    free(big);
}

/* PTX text goes into the asm template with these markers for the parts
 * that must not be escaped: \1N\2 is operand %N, \3 is %=. */
#define OPREF "\1%u\2"
#define UNIQ "\3"

/* One PTX line as a C string literal piece: escape and translate markers. */
static void sb_asm_line(sb_t *b, const char *ptx)
{
    sb_put(b, "        \"", 9);
    for (const char *c = ptx; *c; c++) {
        if (*c == '%') sb_put(b, "%%", 2);
        else if (*c == '"') sb_put(b, "\\\"", 2);
        else if (*c == '\\') sb_put(b, "\\\\", 2);
        else if (*c == '\1') {
            sb_put(b, "%", 1);
        } else if (*c == '\2') {
        } else if (*c == '\3') sb_put(b, "%=", 2);
        else if (*c == '\n' || *c == '\t') sb_put(b, " ", 1);
        else sb_put(b, c, 1);
    }
    sb_put(b, "\\n\"\n", 4);
}

/* ---- per stage emission ------------------------------------------------------------ */

typedef struct {
    char c[8];   /* constraint: "+f", "r", ... */
    char expr[96];
} asm_opnd_t;

typedef struct {
    const sg_fz_plan_t *plan;
    const sg_fz_stage_t *st;
    uint32_t s;       /* stage index */
    uint32_t elem;    /* element copy */
    bool fast;        /* the fast path: never-taken branches left out (fuse.h) */
    sb_t *out;
    asm_opnd_t ops[64];
    uint32_t n_out, n_in; /* outputs first, then inputs (numbering) */
    asm_opnd_t ins[64];
    uint32_t opnd_vt, opnd_vc;
    uint32_t *slot_cur, *slot_valid, *slot_stored; /* operand numbers by slot, SG_NONE */
    uint32_t *site_at;  /* by statement: site index or SG_NONE */
    uint32_t *rn_at;    /* by statement: rn register number or SG_NONE */
    uint32_t *rn_of_site;
    char *err;
    size_t errlen;
    bool failed;
} emit_t;

static void fail(emit_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(emit_t *e, const char *fmt, ...)
{
    if (e->failed) return;
    e->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err, e->errlen, fmt, ap);
    va_end(ap);
}

static uint32_t add_out(emit_t *e, const char *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static uint32_t add_out(emit_t *e, const char *c, const char *fmt, ...)
{
    if (e->n_out >= 64) {
        fail(e, "too many asm operands");
        return 0;
    }
    asm_opnd_t *o = &e->ops[e->n_out];
    snprintf(o->c, sizeof o->c, "%s", c);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->expr, sizeof o->expr, fmt, ap);
    va_end(ap);
    return e->n_out++;
}

static uint32_t add_in(emit_t *e, const char *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static uint32_t add_in(emit_t *e, const char *c, const char *fmt, ...)
{
    if (e->n_in >= 64) {
        fail(e, "too many asm operands");
        return 0;
    }
    asm_opnd_t *o = &e->ins[e->n_in];
    snprintf(o->c, sizeof o->c, "%s", c);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->expr, sizeof o->expr, fmt, ap);
    va_end(ap);
    return 1000 + e->n_in++; /* renumbered once the outputs are known */
}

/* Operand numbers of inputs are only known after every output is: inputs
 * are recorded as 1000 + i and resolved when the asm is written. */
static void put_ref(sb_t *b, uint32_t n)
{
    sb_printf(b, OPREF, n);
}

static void put_reg(emit_t *e, sb_t *b, const char *name)
{
    /* "%f12" -> "%_s3f12" */
    sb_printf(b, "%%_s%u%s", e->s, name && name[0] == '%' ? name + 1 : (name ? name : "?"));
}

static void put_label(emit_t *e, sb_t *b, const char *name)
{
    sb_printf(b, "$sgq%u_%s_" UNIQ, e->s, name[0] == '$' ? name + 1 : name);
}

static void put_modvar(emit_t *e, sb_t *b, uint32_t var)
{
    sb_printf(b, "sgq_m%u_%u", e->s, var);
}

static void put_opnd(emit_t *e, sb_t *b, const sg_ptx_operand_t *o);

static void put_symbol(emit_t *e, sb_t *b, sg_ptx_sym_kind_t k, uint32_t sym, const char *name)
{
    switch (k) {
    case SG_PTX_SYM_LABEL: put_label(e, b, name); break;
    case SG_PTX_SYM_MODULE_VAR: put_modvar(e, b, sym); break;
    case SG_PTX_SYM_LOCAL_VAR: sb_printf(b, "_s%u%s", e->s, name); break;
    default: fail(e, "symbol %s cannot be lifted", name ? name : "?");
    }
}

static void put_opnd(emit_t *e, sb_t *b, const sg_ptx_operand_t *o)
{
    static const char comps[] = "?xyzw";
    const char *src = e->st->mod->src;
    switch (o->kind) {
    case SG_PTX_OPND_REG:
        if (o->neg) sb_put(b, "!", 1);
        put_reg(e, b, o->name);
        if (o->comp) sb_printf(b, ".%c", comps[o->comp <= 4 ? o->comp : 0]);
        break;
    case SG_PTX_OPND_SREG:
        switch (o->sreg) {
        case SG_PTX_SREG_TID_X: put_ref(b, e->opnd_vt); break;
        case SG_PTX_SREG_CTAID_X: put_ref(b, e->opnd_vc); break;
        case SG_PTX_SREG_NTID_X: sb_printf(b, "%u", e->st->ntid); break;
        case SG_PTX_SREG_NCTAID_X: sb_printf(b, "%u", e->st->nctaid); break;
        case SG_PTX_SREG_TID_Y: case SG_PTX_SREG_TID_Z:
        case SG_PTX_SREG_CTAID_Y: case SG_PTX_SREG_CTAID_Z: sb_put(b, "0", 1); break;
        case SG_PTX_SREG_NTID_Y: case SG_PTX_SREG_NTID_Z:
        case SG_PTX_SREG_NCTAID_Y: case SG_PTX_SREG_NCTAID_Z: sb_put(b, "1", 1); break;
        default: fail(e, "special register %s", o->name);
        }
        break;
    case SG_PTX_OPND_INT:
    case SG_PTX_OPND_FLOAT:
        sb_put(b, src + o->off, o->len); /* exactly as written */
        break;
    case SG_PTX_OPND_SYMBOL:
        if (o->neg) sb_put(b, "-", 1);
        put_symbol(e, b, o->sym_kind, o->sym, o->name);
        if (o->ival) sb_printf(b, "%+" PRId64, o->ival);
        break;
    case SG_PTX_OPND_ADDRESS:
        sb_put(b, "[", 1);
        if (o->reg != SG_PTX_NONE) put_reg(e, b, o->name);
        else if (o->sym_kind != SG_PTX_SYM_NONE) put_symbol(e, b, o->sym_kind, o->sym, o->name);
        if (o->reg != SG_PTX_NONE || o->sym_kind != SG_PTX_SYM_NONE) {
            if (o->ival) sb_printf(b, "+%" PRId64, o->ival);
        } else {
            sb_printf(b, "%" PRId64, o->ival);
        }
        if (o->n_elems) fail(e, "address with extra operands");
        sb_put(b, "]", 1);
        break;
    case SG_PTX_OPND_VECTOR:
    case SG_PTX_OPND_LIST:
        sb_put(b, o->kind == SG_PTX_OPND_VECTOR ? "{" : "(", 1);
        for (uint32_t i = 0; i < o->n_elems; i++) {
            if (i) sb_put(b, ", ", 2);
            put_opnd(e, b, &o->elems[i]);
        }
        sb_put(b, o->kind == SG_PTX_OPND_VECTOR ? "}" : ")", 1);
        break;
    case SG_PTX_OPND_SINK: sb_put(b, "_", 1); break;
    case SG_PTX_OPND_PAIR:
        put_opnd(e, b, &o->elems[0]);
        sb_put(b, "|", 1);
        put_opnd(e, b, &o->elems[1]);
        break;
    }
}

static void put_guard(emit_t *e, sb_t *b, const sg_ptx_instr_t *in)
{
    if (in->guard == SG_PTX_NONE) return;
    char name[64];
    sg_ptx_reg_name(e->st->func, in->guard, name, sizeof name);
    sb_printf(b, "@%s", in->guard_neg ? "!" : "");
    put_reg(e, b, name);
    sb_put(b, " ", 1);
}

/* opcode + modifiers, leaving out `drop` (e.g. ".nc"), NULL for none */
static void put_opcode(sb_t *b, const sg_ptx_instr_t *in, const char *drop)
{
    sb_printf(b, "%s", in->opcode);
    for (uint32_t i = 0; i < in->n_mods; i++)
        if (!drop || strcmp(in->mods[i], drop)) sb_printf(b, "%s", in->mods[i]);
}

static void put_instr(emit_t *e, sb_t *b, const sg_ptx_instr_t *in, const char *drop)
{
    put_guard(e, b, in);
    put_opcode(b, in, drop);
    for (uint32_t i = 0; i < in->n_opnds; i++) {
        sb_put(b, i ? ", " : " ", i ? 2 : 1);
        put_opnd(e, b, &in->opnds[i]);
    }
    sb_put(b, ";", 1);
}

static uint32_t reg_bits(const sg_fz_stage_t *st, uint32_t reg)
{
    const sg_ptx_regdecl_t *d = sg_ptx_reg_decl(st->func, reg);
    return d ? sg_ptx_type_size(d->type) * 8 : 0;
}

/* The C expression of a parameter word of stage s read as type t: through
 * the blob's typed view of the right width, so NVVM reads it with one
 * ld.param (a byte array would be read byte by byte). */
static void param_expr(char *buf, size_t n, uint32_t s, uint32_t off, sg_ptx_type_t t, uint32_t bits)
{
    uint32_t w = sg_ptx_type_size(t);
    bool sgn = sg_ptx_type_is_signed(t);
    const char *to = bits == 64 ? "unsigned long long" : bits == 16 ? "unsigned short" : "unsigned";
    const char *view = w == 8 ? "q" : w == 4 ? "u" : w == 2 ? "h" : "b";
    const char *cast = w == 8 ? (sgn ? "(long long)" : "") : w == 4 ? (sgn ? "(int)" : "")
                     : w == 2 ? (sgn ? "(short)" : "") : (sgn ? "(signed char)" : "");
    if (w > 1 && off % w) { /* unaligned: assemble from bytes */
        snprintf(buf, n, "(%s)sgq_bytes(p%u.b + %u, %u)", to, s, off, w);
        return;
    }
    snprintf(buf, n, "(%s)%sp%u.%s[%u]", to, cast, s, view, off / (w ? w : 1));
}

static const char *bits_constraint(uint32_t bits)
{
    return bits == 64 ? "l" : bits == 16 ? "h" : "r";
}

static void emit_statement(emit_t *e, uint32_t i)
{
    const sg_fz_stage_t *st = e->st;
    const sg_ptx_func_t *f = st->func;
    const sg_ptx_stmt_t *s = &f->stmts[i];
    sb_t line = {0};
    switch (s->kind) {
    case SG_PTX_STMT_LABEL:
        put_label(e, &line, f->labels[s->u.label].name);
        sb_put(&line, ":", 1);
        break;
    case SG_PTX_STMT_REG_DECL:
        for (uint32_t k = 0; k < s->u.decl.n; k++) {
            const sg_ptx_regdecl_t *d = &f->reg_decls[s->u.decl.first + k];
            sb_printf(&line, ".reg ");
            if (d->vec > 1) sb_printf(&line, ".v%u ", d->vec);
            sb_printf(&line, "%s ", sg_ptx_type_name(d->type));
            put_reg(e, &line, d->name);
            if (d->count) sb_printf(&line, "<%u>", d->count);
            sb_put(&line, "; ", 2);
        }
        break;
    case SG_PTX_STMT_VAR_DECL:
        for (uint32_t k = 0; k < s->u.decl.n; k++) {
            const sg_ptx_var_t *v = &f->vars[s->u.decl.first + k];
            if (v->space != SG_PTX_SPACE_LOCAL && v->space != SG_PTX_SPACE_SHARED) {
                fail(e, "%s variable %s", sg_ptx_space_name(v->space), v->name);
                break;
            }
            sb_printf(&line, "%s ", sg_ptx_space_name(v->space));
            if (v->align) sb_printf(&line, ".align %u ", v->align);
            if (v->vec > 1) sb_printf(&line, ".v%u ", v->vec);
            sb_printf(&line, "%s _s%u%s", sg_ptx_type_name(v->type), e->s, v->name);
            for (uint32_t d = 0; d < v->n_dims; d++) sb_printf(&line, "[%" PRIu64 "]", v->dims[d]);
            sb_put(&line, "; ", 2);
        }
        break;
    case SG_PTX_STMT_DIRECTIVE:
        if (s->u.ins.opcode && !strcmp(s->u.ins.opcode, ".pragma"))
            sb_put(&line, st->mod->src + s->off, s->len);
        break;
    case SG_PTX_STMT_BLOCK_BEGIN: sb_put(&line, "{", 1); break;
    case SG_PTX_STMT_BLOCK_END: sb_put(&line, "}", 1); break;
    case SG_PTX_STMT_INSTR: {
        const sg_ptx_instr_t *in = &s->u.ins;
        uint32_t site = e->site_at[i];
        if (in->op == SG_PTX_OP_LD && in->space == SG_PTX_SPACE_PARAM) {
            /* a move from the wrapper's copy of the stage's parameters */
            const sg_ptx_operand_t *a = &in->opnds[1];
            uint32_t off = f->params[a->sym].param_offset + (uint32_t)a->ival;
            uint32_t bits = in->opnds[0].kind == SG_PTX_OPND_REG ? reg_bits(st, in->opnds[0].reg) : 0;
            if (!bits || bits == 8) bits = 16;
            char expr[96];
            param_expr(expr, sizeof expr, e->s, off, in->type, bits);
            uint32_t r = add_in(e, bits_constraint(bits), "%s", expr);
            put_guard(e, &line, in);
            sb_printf(&line, "mov.b%u ", bits);
            put_opnd(e, &line, &in->opnds[0]);
            sb_put(&line, ", ", 2);
            put_ref(&line, r);
            sb_put(&line, ";", 1);
            break;
        }
        if (site != SG_NONE) {
            uint32_t slot = e->plan->site_slot[e->plan->site_base[e->s] + site];
            const sg_fz_slot_t *y = &e->plan->slots[slot];
            const sg_fz_site_t *x = &st->sites[site];
            uint32_t bits = y->width * 8;
            if (y->lifted && !x->store && e->plan->site_known[e->plan->site_base[e->s] + site]) {
                sb_printf(&line, "mov.b%u ", bits);
                put_opnd(e, &line, &in->opnds[0]);
                sb_put(&line, ", ", 2);
                put_ref(&line, e->slot_cur[slot]);
                sb_put(&line, ";", 1);
                break;
            }
            if (y->lifted && !x->store) {
                sb_printf(&line, "setp.ne.u32 %%_s%uq, ", e->s);
                put_ref(&line, e->slot_valid[slot]);
                sb_printf(&line, ", 0; @%%_s%uq mov.b%u ", e->s, bits);
                put_opnd(e, &line, &in->opnds[0]);
                sb_put(&line, ", ", 2);
                put_ref(&line, e->slot_cur[slot]);
                sb_printf(&line, "; @!%%_s%uq ", e->s);
                put_opcode(&line, in, ".nc");
                sb_put(&line, " ", 1);
                put_opnd(e, &line, &in->opnds[0]);
                sb_put(&line, ", ", 2);
                put_opnd(e, &line, &in->opnds[1]);
                sb_put(&line, ";", 1);
                break;
            }
            if (y->lifted && x->store) {
                sb_printf(&line, "mov.b%u ", bits);
                put_ref(&line, e->slot_cur[slot]);
                sb_put(&line, ", ", 2);
                if (x->rn_stmt != SG_NONE)
                    sb_printf(&line, "%%_s%urn%u", e->s, e->rn_at[x->rn_stmt]);
                else
                    put_opnd(e, &line, &in->opnds[1]);
                sb_put(&line, "; mov.u32 ", 10);
                put_ref(&line, e->slot_valid[slot]);
                sb_put(&line, ", 1; mov.u32 ", 13);
                put_ref(&line, e->slot_stored[slot]);
                sb_put(&line, ", 1;", 4);
                break;
            }
            /* a real access: in program order, never through the non-coherent path */
            if (x->store && x->rn_stmt != SG_NONE) {
                put_guard(e, &line, in);
                put_opcode(&line, in, NULL);
                sb_put(&line, " ", 1);
                put_opnd(e, &line, &in->opnds[0]);
                sb_printf(&line, ", %%_s%urn%u;", e->s, e->rn_at[x->rn_stmt]);
                break;
            }
            put_instr(e, &line, in, ".nc");
            break;
        }
        if (e->fast && e->plan->never_taken[e->plan->stmt_base[e->s] + i]) {
            sb_printf(&line, "// never taken here: ");
            put_guard(e, &line, in);
            put_opcode(&line, in, NULL);
            break;
        }
        if (in->op == SG_PTX_OP_RET) {
            put_guard(e, &line, in);
            sb_printf(&line, "bra.uni $sgq%u_end_" UNIQ ";", e->s);
            break;
        }
        put_instr(e, &line, in, in->op == SG_PTX_OP_LD ? ".nc" : NULL);
        if (e->rn_at[i] != SG_NONE) {
            /* the rounded copy a store forwards: never contracted with a later add */
            sb_put(&line, " ", 1);
            put_guard(e, &line, in);
            sb_printf(&line, "mul.rn");
            for (uint32_t m = 0; m < in->n_mods; m++) sb_printf(&line, "%s", in->mods[m]);
            sb_printf(&line, " %%_s%urn%u, ", e->s, e->rn_at[i]);
            put_opnd(e, &line, &in->opnds[1]);
            sb_put(&line, ", ", 2);
            put_opnd(e, &line, &in->opnds[2]);
            sb_put(&line, ";", 1);
        }
        break;
    }
    }
    if (line.oom) fail(e, "out of memory");
    if (line.n) sb_asm_line(e->out, line.p);
    free(line.p);
}

/* The asm block of stage s for element copy j. */
static void emit_stage(const sg_fz_plan_t *plan, uint32_t s, uint32_t j, bool fast, sb_t *out,
                       char *err, size_t errlen, bool *failed)
{
    const sg_fz_stage_t *st = &plan->stages[s];
    const sg_ptx_func_t *f = st->func;
    emit_t e;
    memset(&e, 0, sizeof e);
    e.plan = plan;
    e.st = st;
    e.s = s;
    e.elem = j;
    e.fast = fast;
    e.err = err;
    e.errlen = errlen;
    e.slot_cur = malloc(plan->n_slots * sizeof(uint32_t) + 1);
    e.slot_valid = malloc(plan->n_slots * sizeof(uint32_t) + 1);
    e.slot_stored = malloc(plan->n_slots * sizeof(uint32_t) + 1);
    e.site_at = malloc(f->n_stmts * sizeof(uint32_t) + 1);
    e.rn_at = malloc(f->n_stmts * sizeof(uint32_t) + 1);
    sb_t body = {0};
    if (!e.slot_cur || !e.slot_valid || !e.slot_stored || !e.site_at || !e.rn_at) {
        fail(&e, "out of memory");
        goto done;
    }
    for (uint32_t k = 0; k < plan->n_slots; k++) e.slot_cur[k] = e.slot_valid[k] = e.slot_stored[k] = SG_NONE;
    for (uint32_t i = 0; i < f->n_stmts; i++) e.site_at[i] = e.rn_at[i] = SG_NONE;
    uint32_t n_rn = 0;
    for (uint32_t i = 0; i < st->n_sites; i++) {
        const sg_fz_site_t *x = &st->sites[i];
        e.site_at[x->stmt] = i;
        if (x->rn_stmt != SG_NONE && e.rn_at[x->rn_stmt] == SG_NONE) e.rn_at[x->rn_stmt] = n_rn++;
        uint32_t k = plan->site_slot[plan->site_base[s] + i];
        const sg_fz_slot_t *y = &plan->slots[k];
        if (!y->lifted || e.slot_cur[k] != SG_NONE) continue;
        char cc[4] = {'+', y->constraint, 0, 0};
        e.slot_cur[k] = add_out(&e, cc, "c%u_%u", k, j);
        e.slot_valid[k] = add_out(&e, "+r", "v%u_%u", k, j);
        e.slot_stored[k] = add_out(&e, "+r", "s%u_%u", k, j);
    }
    e.opnd_vt = add_in(&e, "r", "vt_%u", j);
    e.opnd_vc = add_in(&e, "r", "vc_%u", j);
    /* the body */
    sb_t *keep = &body;
    e.out = keep;
    sb_asm_line(&body, "{");
    {
        sb_t l = {0};
        sb_printf(&l, ".reg .pred %%_s%uq;", s);
        for (uint32_t i = 0; i < f->n_stmts; i++) {
            if (e.rn_at[i] == SG_NONE) continue;
            sb_printf(&l, " .reg %s %%_s%urn%u;", sg_ptx_type_name(f->stmts[i].u.ins.type), s, e.rn_at[i]);
        }
        if (l.oom) fail(&e, "out of memory");
        else sb_asm_line(&body, l.p);
        free(l.p);
    }
    for (uint32_t i = 0; i < f->n_stmts && !e.failed; i++) emit_statement(&e, i);
    {
        char endl[64];
        snprintf(endl, sizeof endl, "$sgq%u_end_" UNIQ ":", s);
        sb_asm_line(&body, endl);
        sb_asm_line(&body, "}");
    }
    if (body.oom) fail(&e, "out of memory");
    if (e.failed) goto done;
    /* resolve input numbers and write the asm statement */
    sb_printf(out, "    /* stage %u: %s, element %u%s */\n    asm volatile(\n", s,
              st->node->u.kernel.name, j, fast ? ", fast path" : "");
    for (size_t i = 0; i < body.n; i++) {
        if (body.p[i] == '%' && i + 1 < body.n && body.p[i + 1] >= '0' && body.p[i + 1] <= '9') {
            /* an operand reference written by sb_asm_line: "%<number>" */
            size_t k = i + 1;
            uint32_t v = 0;
            while (k < body.n && body.p[k] >= '0' && body.p[k] <= '9') v = v * 10 + (uint32_t)(body.p[k++] - '0');
            if (v >= 1000) v = e.n_out + (v - 1000);
            sb_printf(out, "%%%u", v);
            i = k - 1;
            continue;
        }
        if (body.p[i] == '%' && i + 1 < body.n && body.p[i + 1] == '%') {
            sb_put(out, "%%", 2);
            i++;
            continue;
        }
        sb_put(out, &body.p[i], 1);
    }
    sb_put(out, "        :", 9);
    for (uint32_t i = 0; i < e.n_out; i++)
        sb_printf(out, "%s \"%s\"(%s)", i ? "," : "", e.ops[i].c, e.ops[i].expr);
    sb_put(out, "\n        :", 10);
    for (uint32_t i = 0; i < e.n_in; i++)
        sb_printf(out, "%s \"%s\"(%s)", i ? "," : "", e.ins[i].c, e.ins[i].expr);
    sb_put(out, "\n        : \"memory\");\n", 22);
done:
    if (e.failed) *failed = true;
    free(body.p);
    free(e.slot_cur);
    free(e.slot_valid);
    free(e.slot_stored);
    free(e.site_at);
    free(e.rn_at);
}

/* ---- module variables ------------------------------------------------------------------ */

/* The initializer of a read-only table as bytes in C ("{1, 2, ...}"). */
static int emit_table(sb_t *b, const sg_fz_stage_t *st, uint32_t s, uint32_t idx, char *err,
                      size_t errlen)
{
    const sg_ptx_var_t *v = &st->mod->vars[idx];
    uint32_t esz = sg_ptx_type_size(v->type) * (v->vec ? v->vec : 1);
    if (!esz || !v->size || v->size > (1u << 20)) {
        snprintf(err, errlen, "module variable %s: unsupported type or size", v->name);
        return SG_EUNSUPPORTED;
    }
    const char *t = st->mod->src + v->init_off, *end = t + v->init_len;
    sb_printf(b, "extern \"C\" %s __attribute__((used)) __align__(%u) const unsigned char sgq_m%u_%u[%" PRIu64 "] = {",
              v->space == SG_PTX_SPACE_CONST ? "__constant__" : "__device__", v->align ? v->align : esz, s,
              idx, v->size);
    uint64_t bytes = 0;
    while (t < end && bytes < v->size) {
        while (t < end && (*t == ' ' || *t == '{' || *t == '}' || *t == ',' || *t == '\n' || *t == '\t' || *t == '\r')) t++;
        if (t >= end) break;
        char *e2 = NULL;
        uint64_t x;
        if (t + 2 < end && t[0] == '0' && (t[1] == 'f' || t[1] == 'd' || t[1] == 'F' || t[1] == 'D'))
            x = strtoull(t + 2, &e2, 16);
        else if (*t == '-')
            x = (uint64_t)strtoll(t, &e2, 0);
        else
            x = strtoull(t, &e2, 0);
        if (!e2 || e2 == t) {
            snprintf(err, errlen, "module variable %s: initializer not understood", v->name);
            return SG_EUNSUPPORTED;
        }
        t = e2;
        for (uint32_t k = 0; k < esz && bytes < v->size; k++, bytes++)
            sb_printf(b, "%s%u", bytes ? "," : "", (unsigned)((x >> (8 * k)) & 0xff));
    }
    sb_printf(b, "};\n");
    return SG_OK;
}

/* ---- the wrapper ------------------------------------------------------------------------ */

/* Which elements a thread holds. Its E elements are G = E / C chunks of C
 * consecutive elements, C = 16 / (widest lifted slot) (4 floats): chunk g
 * of thread tid in block b starts at element b*B*E + g*B*C + tid*C, so the
 * threads of a warp read and write each chunk as one contiguous run (every
 * vector access coalesced, as Triton lays out its blocks). Consecutive
 * chunks per thread (8 floats = two 16-byte halves of one 32-byte run) ran
 * the live chain at half speed on the H200: each 16-byte store covered
 * half a sector. Element j is t<j> = eb + off(j), eb = b*B*E + tid*C. */
typedef struct {
    uint32_t B, E, C;
} layout_t;

static uint64_t elem_off(const layout_t *L, uint32_t j)
{
    return (uint64_t)(j / L->C) * L->B * L->C + j % L->C;
}

/* The vector type holding one chunk of slot y (C elements: 16 or 8 bytes). */
static void chunk_types(const sg_fz_slot_t *y, uint32_t C, const char **vec, const char **mk)
{
    bool f = y->constraint == 'f' || y->constraint == 'd';
    if (y->width == 8) {
        *vec = f ? "double2" : "ulonglong2";
        *mk = f ? "make_double2" : "make_ulonglong2";
    } else if (C == 4) {
        *vec = f ? "float4" : "uint4";
        *mk = f ? "make_float4" : "make_uint4";
    } else {
        *vec = f ? "float2" : "uint2";
        *mk = f ? "make_float2" : "make_uint2";
    }
}

/* Store slot k of the thread's elements: one vector store per chunk when
 * every element stored and the chunks are aligned (they all are when the
 * first is: chunk starts differ by multiples of C elements), else element
 * by element. */
static void write_back(sb_t *b, const sg_fz_plan_t *plan, uint32_t k, const layout_t *L)
{
    const sg_fz_slot_t *y = &plan->slots[k];
    const char *vec, *mk;
    chunk_types(y, L->C, &vec, &mk);
    sb_printf(b, "    if (");
    for (uint32_t j = 0; j < L->E; j++) sb_printf(b, "%ss%u_%u", j ? " & " : "", k, j);
    sb_printf(b, " && ((unsigned long long)(a%u + t0) & %u) == 0) {\n", k, L->C * y->width - 1);
    for (uint32_t j = 0; j < L->E; j += L->C) {
        sb_printf(b, "        *(%s *)(a%u + t%u) = %s(", vec, k, j, mk);
        for (uint32_t q = 0; q < L->C; q++) sb_printf(b, "%sc%u_%u", q ? ", " : "", k, j + q);
        sb_printf(b, ");\n");
    }
    sb_printf(b, "    } else {\n");
    for (uint32_t j = 0; j < L->E; j++) sb_printf(b, "        if (s%u_%u) a%u[t%u] = c%u_%u;\n", k, j, k, j, k, j);
    sb_printf(b, "    }\n");
}

/* The stages in order, each for every element of the thread (so every
 * element runs its stages in order); a slot is written back right after the
 * last stage that stores it, so few values stay live. The fast path runs
 * each element without its guard (all of the thread's elements are below
 * fast_n), leaves out the never-taken branches and records the sure stores
 * as done, so the write-backs' checks fold away. */
static void emit_stages(const sg_fz_plan_t *plan, const layout_t *L, bool fast, sb_t *b,
                        char *err, size_t errlen, bool *failed)
{
    const uint32_t E = L->E;
    for (uint32_t s = 0; s < plan->n_stages && !*failed; s++) {
        const sg_fz_stage_t *st = &plan->stages[s];
        /* tier 2: a kernel boundary within the CTA (every thread gets here:
         * the wrapper's threads are exactly the original ones) */
        if (plan->cta && s > 0) sb_printf(b, "    __syncthreads();\n");
        for (uint32_t j = 0; j < E && !*failed; j++) {
            if (!fast) sb_printf(b, "    if (t%u < n_el) {\n", j);
            emit_stage(plan, s, j, fast, b, err, errlen, failed);
            for (uint32_t i = 0; fast && i < st->n_sites; i++) {
                uint32_t k = plan->site_slot[plan->site_base[s] + i];
                if (!st->sites[i].store || !plan->slots[k].lifted ||
                    !plan->site_sure[plan->site_base[s] + i])
                    continue;
                sb_printf(b, "    v%u_%u = 1; s%u_%u = 1; /* a sure store */\n", k, j, k, j);
            }
            if (!fast) sb_printf(b, "    }\n");
        }
        for (uint32_t k = 0; k < plan->n_slots; k++) {
            const sg_fz_slot_t *y = &plan->slots[k];
            if (!y->lifted || !y->stored || y->dead || y->last_store_stage != s) continue;
            write_back(b, plan, k, L);
        }
    }
}

void sg_fz_gen_options_default(sg_fz_gen_options_t *o)
{
    o->block = 128;
    o->elements = 0; /* 32 bytes of the widest lifted slot per thread */
    o->arch = 90;
}

void sg_fz_source_free(sg_fz_source_t *s)
{
    if (!s) return;
    free(s->source);
    free(s->param_offsets);
    free(s->param_sizes);
    memset(s, 0, sizeof *s);
}

static uint32_t stage_align(const sg_fz_stage_t *st)
{
    (void)st;
    return 16; /* keeps every parameter's own alignment inside the blob */
}

static void bound_expr(char *buf, size_t n, const sg_fz_bound_t *b, uint32_t stage, uint64_t elements)
{
    if (b->param_off == SG_NONE) {
        snprintf(buf, n, "%lluull", (unsigned long long)(b->k < 0 ? 0 : b->k));
        return;
    }
    const char *t = b->width == 8 ? (b->is_signed ? "long long" : "unsigned long long")
                                  : (b->is_signed ? "int" : "unsigned");
    char w[96];
    param_expr(w, sizeof w, stage, b->param_off,
               b->width == 8 ? (b->is_signed ? SG_PTX_T_S64 : SG_PTX_T_U64)
                             : (b->is_signed ? SG_PTX_T_S32 : SG_PTX_T_U32),
               64);
    (void)t;
    snprintf(buf, n, "sgq_clamp((long long)%s%s + %lldll, %lluull)", b->is_signed && b->width == 4 ? "(int)" : "",
             w, (long long)b->k, (unsigned long long)elements);
}

int sg_fz_generate(const sg_fz_plan_t *plan, const sg_fz_gen_options_t *opt, sg_fz_source_t *out,
                   char *err, size_t errlen)
{
    if (!plan || !opt || !out || !plan->n_stages) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    /* grid-stride stages keep their geometry: one element (thread) per thread */
    /* elements per thread: as asked, or two 16-byte accesses of the widest
     * lifted slot (measured on the H200, docs/RESULTS.md: 128 threads of 8
     * floats ran the dead chain 36.3 us, 256 of 4 39.5 us) */
    uint32_t widest = 4;
    for (uint32_t k = 0; k < plan->n_slots; k++)
        if (plan->slots[k].lifted && plan->slots[k].width > widest) widest = plan->slots[k].width;
    const uint32_t E = plan->real_mode ? 1 : opt->elements ? opt->elements : 32 / widest;
    const uint32_t B = plan->real_mode ? plan->stages[0].ntid : opt->block;
    sb_t b = {0};
    bool failed = false;
    sb_printf(&b, "/* generated by sgcap (rewrite/fuse_gen.c): %u fused stages */\n", plan->n_stages);
    sb_printf(&b, "static __device__ __forceinline__ unsigned long long sgq_bytes(const unsigned "
                  "char *p, unsigned n) { unsigned long long v = 0; for (unsigned i = 0; i < n; i++) "
                  "v |= (unsigned long long)p[i] << (8 * i); return v; }\n");
    sb_printf(&b, "static __device__ __forceinline__ unsigned long long sgq_clamp(long long v, "
                  "unsigned long long m) { return v < 0 ? 0ull : ((unsigned long long)v < m ? "
                  "(unsigned long long)v : m); }\n");
    for (uint32_t s = 0; s < plan->n_stages; s++) {
        const sg_fz_stage_t *st = &plan->stages[s];
        uint32_t sz = (st->node->u.kernel.params_size + 15) / 16 * 16;
        if (!sz) sz = 16;
        sb_printf(&b,
                  "struct __align__(%u) sgq_p%u_t { union { unsigned char b[%u]; unsigned short h[%u]; "
                  "unsigned u[%u]; unsigned long long q[%u]; }; };\n",
                  stage_align(st), s, sz, sz / 2, sz / 4, sz / 8);
        for (uint32_t m = 0; m < st->n_module_vars; m++)
            if (emit_table(&b, st, s, st->module_vars[m], err, errlen)) failed = true;
    }
    sb_printf(&b, "extern \"C\" __global__ void __launch_bounds__(%u) SGQ_NAME(", B);
    for (uint32_t s = 0; s < plan->n_stages; s++) sb_printf(&b, "%sconst sgq_p%u_t p%u", s ? ", " : "", s, s);
    sb_printf(&b, ")\n{\n");
    sb_printf(&b, "    const unsigned long long n_el = %lluull;\n", (unsigned long long)plan->elements);
    const layout_t L = {B, E, plan->real_mode ? 1 : 16 / widest};
    sb_printf(&b, "    const unsigned long long eb = (unsigned long long)blockIdx.x * %llu + threadIdx.x * %u;\n",
              (unsigned long long)B * E, L.C);
    for (uint32_t j = 0; j < E; j++)
        sb_printf(&b, "    const unsigned long long t%u = eb + %lluull;\n", j, (unsigned long long)elem_off(&L, j));
    sb_printf(&b, "    if (t0 >= n_el) return;\n");
    /* per element: virtual ids */
    const uint32_t ntid = plan->stages[0].ntid;
    for (uint32_t j = 0; j < E; j++)
        sb_printf(&b, "    const unsigned vt_%u = (unsigned)(t%u %% %uu), vc_%u = (unsigned)(t%u / %uu);\n",
                  j, j, ntid, j, j, ntid);
    /* slots */
    for (uint32_t k = 0; k < plan->n_slots; k++) {
        const sg_fz_slot_t *y = &plan->slots[k];
        if (!y->lifted) continue;
        const sg_fz_stage_t *st = &plan->stages[y->first_stage];
        const sg_fz_site_t *x = &st->sites[y->first_site];
        sb_printf(&b, "    /* slot %u: 0x%llx + %lld*t, %u bytes%s%s%s */\n", k, (unsigned long long)y->addr0,
                  (long long)y->stride, y->width, y->loaded ? ", read" : "", y->stored ? ", written" : "",
                  y->dead ? " (write dropped: nothing reads it after the graph)" : "");
        char base[96];
        param_expr(base, sizeof base, y->first_stage, x->base_param, SG_PTX_T_U64, 64);
        sb_printf(&b, "    %s *const a%u = (%s *)(%s + %lldll);\n", y->type_c, k, y->type_c, base,
                  (long long)x->base_k);
        for (uint32_t j = 0; j < E; j++) sb_printf(&b, "    %s c%u_%u = 0; unsigned v%u_%u = 0, s%u_%u = 0;\n", y->type_c, k, j, k, j, k, j);
        if (y->preload) {
            char nb[160];
            bound_expr(nb, sizeof nb, &y->preload_rt, y->first_stage, plan->elements);
            const char *vec, *mk;
            chunk_types(y, L.C, &vec, &mk);
            (void)mk;
            sb_printf(&b, "    {\n        const unsigned long long nb = %s;\n", nb);
            /* t<E-1> is the thread's largest element */
            sb_printf(&b, "        if (t%u < nb && ((unsigned long long)(a%u + t0) & %u) == 0) {\n", E - 1,
                      k, L.C * y->width - 1);
            for (uint32_t j = 0; j < E; j += L.C) {
                sb_printf(&b, "            { const %s v = __ldg((const %s *)(a%u + t%u));", vec, vec, k, j);
                const char *f4[] = {"x", "y", "z", "w"};
                for (uint32_t q = 0; q < L.C && j + q < E; q++)
                    sb_printf(&b, " c%u_%u = v.%s; v%u_%u = 1;", k, j + q, f4[q], k, j + q);
                sb_printf(&b, " }\n");
            }
            sb_printf(&b, "        } else {\n");
            for (uint32_t j = 0; j < E; j++)
                sb_printf(&b, "            if (t%u < nb) { c%u_%u = a%u[t%u]; v%u_%u = 1; }\n", j, k, j, k, j, k, j);
            sb_printf(&b, "        }\n    }\n");
        }
    }
    /* The fast path for threads whose elements are all below fast_n, the
     * general one for the rest; only one of them when the other cannot run
     * (every block full, B*E elements each, and all below fast_n). */
    const bool fast = !plan->real_mode && plan->fast_n >= E;
    const bool only_fast = fast && plan->fast_n >= plan->elements && plan->elements % ((uint64_t)B * E) == 0;
    if (fast && !only_fast)
        sb_printf(&b, "    if (t%u < %lluull) {\n", E - 1, (unsigned long long)plan->fast_n);
    if (fast) emit_stages(plan, &L, true, &b, err, errlen, &failed);
    if (fast && !only_fast) sb_printf(&b, "    } else {\n");
    if (!only_fast) emit_stages(plan, &L, false, &b, err, errlen, &failed);
    if (fast && !only_fast) sb_printf(&b, "    }\n");
    sb_printf(&b, "}\n");
    if (b.oom) {
        free(b.p);
        return SG_ENOMEM;
    }
    if (failed) {
        free(b.p);
        return SG_EUNSUPPORTED;
    }
    if (E * 4 % 16) {
        /* vector paths assume 16-byte groups */
    }
    /* name by content */
    sg_code_hash(b.p, b.n, out->hash);
    snprintf(out->name, sizeof out->name, "sgcap_fused_%s", out->hash);
    sb_t f = {0};
    const char *mark = "SGQ_NAME";
    char *at = strstr(b.p, mark);
    sb_put(&f, b.p, (size_t)(at - b.p));
    sb_printf(&f, "%s", out->name);
    sb_put(&f, at + strlen(mark), strlen(at + strlen(mark)));
    free(b.p);
    if (f.oom) {
        free(f.p);
        return SG_ENOMEM;
    }
    out->source = f.p;
    out->block = B;
    uint64_t threads = (plan->elements + E - 1) / E;
    out->grid = (uint32_t)((threads + B - 1) / B);
    out->n_params = plan->n_stages;
    out->param_offsets = malloc(plan->n_stages * sizeof(uint32_t));
    out->param_sizes = malloc(plan->n_stages * sizeof(uint32_t));
    if (!out->param_offsets || !out->param_sizes) {
        sg_fz_source_free(out);
        return SG_ENOMEM;
    }
    uint32_t off = 0;
    for (uint32_t s = 0; s < plan->n_stages; s++) {
        uint32_t a = stage_align(&plan->stages[s]);
        uint32_t sz = plan->stages[s].node->u.kernel.params_size;
        if (!sz) sz = 1;
        sz = (sz + a - 1) / a * a; /* sizeof the aligned struct */
        off = (off + a - 1) / a * a;
        out->param_offsets[s] = off;
        out->param_sizes[s] = sz;
        off += sz;
    }
    out->params_size = off;
    return SG_OK;
}
