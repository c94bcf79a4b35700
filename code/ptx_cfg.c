/* ptx_cfg.c: what the PTX IR offers beyond parsing (see ptx.h): basic
 * blocks and their edges, reverse post-order, dominators, register names,
 * the registers each instruction reads and writes, and the canonical text
 * of an instruction. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ptx.h"
#include "ptx_internal.h"

/* ---- basic blocks ---------------------------------------------------------------- */

bool sg_ptx_instr_is_terminator(const sg_ptx_instr_t *ins)
{
    return ins->op == SG_PTX_OP_BRA || ins->op == SG_PTX_OP_BRX || ins->op == SG_PTX_OP_RET ||
           ins->op == SG_PTX_OP_EXIT || ins->op == SG_PTX_OP_TRAP;
}

/* The label an operand names, SG_PTX_NONE if it names none. */
static uint32_t label_of(const sg_ptx_operand_t *o)
{
    if (o->kind == SG_PTX_OPND_SYMBOL && o->sym_kind == SG_PTX_SYM_LABEL) return o->sym;
    return SG_PTX_NONE;
}

/* Targets of `brx.idx %r, tbl;`: the .branchtargets list after label tbl. */
static uint32_t brx_targets(const sg_ptx_func_t *f, const sg_ptx_instr_t *ins,
                            const sg_ptx_operand_t **list)
{
    for (uint32_t i = 0; i < ins->n_opnds; i++) {
        uint32_t l = label_of(&ins->opnds[i]);
        if (l == SG_PTX_NONE) continue;
        for (uint32_t s = f->labels[l].stmt + 1; s < f->n_stmts; s++) {
            const sg_ptx_stmt_t *st = &f->stmts[s];
            if (st->kind == SG_PTX_STMT_LABEL) continue;
            if (st->kind == SG_PTX_STMT_DIRECTIVE && !strcmp(st->u.ins.opcode, ".branchtargets")) {
                *list = st->u.ins.opnds;
                return st->u.ins.n_opnds;
            }
            break;
        }
    }
    return 0;
}

/* `tbl: .branchtargets ...;` and `proto: .callprototype ...;` name a table
 * or a prototype, not a place in the code: such labels start no block. */
static bool names_a_table(const sg_ptx_func_t *f, uint32_t label_stmt)
{
    if (label_stmt + 1 >= f->n_stmts) return false;
    const sg_ptx_stmt_t *n = &f->stmts[label_stmt + 1];
    return n->kind == SG_PTX_STMT_DIRECTIVE &&
           (!strcmp(n->u.ins.opcode, ".branchtargets") || !strcmp(n->u.ins.opcode, ".calltargets") ||
            !strcmp(n->u.ins.opcode, ".callprototype"));
}

static void add_succ(uint32_t *succ, uint32_t *n, uint32_t b)
{
    for (uint32_t i = 0; i < *n; i++)
        if (succ[i] == b) return;
    succ[(*n)++] = b;
}

int sg_ptx_build_cfg(struct sg_ptx_arena *a, sg_ptx_func_t *f)
{
    /* 1. blocks: a label after an instruction, or anything after a
       terminator, starts a new one */
    uint32_t nb = 0, cap = 16;
    sg_ptx_block_t *bl = calloc(cap, sizeof(*bl));
    if (!bl) return SG_ENOMEM;
    bl[0].first = 0;
    bl[0].term = SG_PTX_NONE;
    nb = 1;
    bool has_instr = false, after_term = false;
    for (uint32_t i = 0; i < f->n_stmts; i++) {
        sg_ptx_stmt_t *s = &f->stmts[i];
        bool starts = (s->kind == SG_PTX_STMT_LABEL && !names_a_table(f, i) &&
                       (has_instr || after_term)) ||
                      (s->kind == SG_PTX_STMT_INSTR && after_term);
        if (starts) {
            if (nb == cap) {
                if (cap > UINT32_MAX / 4) {
                    free(bl);
                    return SG_ELIMIT;
                }
                sg_ptx_block_t *n = realloc(bl, (size_t)cap * 2 * sizeof(*bl));
                if (!n) {
                    free(bl);
                    return SG_ENOMEM;
                }
                bl = n;
                memset(bl + cap, 0, (size_t)cap * sizeof(*bl));
                cap *= 2;
            }
            bl[nb - 1].end = i;
            bl[nb].first = i;
            bl[nb].term = SG_PTX_NONE;
            nb++;
            has_instr = after_term = false;
        }
        s->block = nb - 1;
        if (s->kind == SG_PTX_STMT_LABEL) f->labels[s->u.label].block = nb - 1;
        if (s->kind == SG_PTX_STMT_INSTR) {
            has_instr = true;
            bl[nb - 1].term = i;
            if (sg_ptx_instr_is_terminator(&s->u.ins)) after_term = true;
        }
    }
    bl[nb - 1].end = f->n_stmts;

    /* 2. successors */
    uint32_t *npred = calloc(nb, sizeof(*npred));
    if (!npred) {
        free(bl);
        return SG_ENOMEM;
    }
    int rc = SG_OK;
    for (uint32_t b = 0; b < nb && rc == SG_OK; b++) {
        const sg_ptx_instr_t *t =
            bl[b].term != SG_PTX_NONE ? &f->stmts[bl[b].term].u.ins : NULL;
        const sg_ptx_operand_t *list = NULL;
        uint32_t nlist = 0;
        if (t && t->op == SG_PTX_OP_BRX) nlist = brx_targets(f, t, &list);
        uint32_t *s = sg_ptx_arena_alloc(a, (nlist + 2) * sizeof(uint32_t));
        if (!s) {
            rc = SG_ENOMEM;
            break;
        }
        uint32_t n = 0;
        bool fall = true;
        if (t && t->op == SG_PTX_OP_BRA) {
            for (uint32_t i = 0; i < t->n_opnds; i++) {
                uint32_t l = label_of(&t->opnds[i]);
                if (l != SG_PTX_NONE && f->labels[l].block != SG_PTX_NONE)
                    add_succ(s, &n, f->labels[l].block);
            }
            fall = t->guard != SG_PTX_NONE;
        } else if (t && t->op == SG_PTX_OP_BRX) {
            for (uint32_t i = 0; i < nlist; i++) {
                uint32_t l = label_of(&list[i]);
                if (l != SG_PTX_NONE && f->labels[l].block != SG_PTX_NONE)
                    add_succ(s, &n, f->labels[l].block);
            }
            fall = t->guard != SG_PTX_NONE;
        } else if (t && (t->op == SG_PTX_OP_RET || t->op == SG_PTX_OP_EXIT ||
                         t->op == SG_PTX_OP_TRAP)) {
            bl[b].returns = true;
            fall = t->guard != SG_PTX_NONE;
        }
        if (fall) {
            if (b + 1 < nb)
                add_succ(s, &n, b + 1);
            else
                bl[b].returns = true;
        }
        bl[b].succ = s;
        bl[b].n_succ = n;
        for (uint32_t i = 0; i < n; i++) npred[s[i]]++;
    }
    /* 3. predecessors */
    for (uint32_t b = 0; b < nb && rc == SG_OK; b++) {
        uint32_t *pr = npred[b] ? sg_ptx_arena_alloc(a, npred[b] * sizeof(uint32_t)) : NULL;
        if (npred[b] && !pr) rc = SG_ENOMEM;
        bl[b].pred = pr;
        bl[b].n_pred = 0;
    }
    for (uint32_t b = 0; b < nb && rc == SG_OK; b++)
        for (uint32_t i = 0; i < bl[b].n_succ; i++) {
            sg_ptx_block_t *d = &bl[bl[b].succ[i]];
            ((uint32_t *)d->pred)[d->n_pred++] = b;
        }
    /* 4. reverse post-order by an explicit DFS */
    uint32_t *post = NULL, *stack = NULL, *pos = NULL;
    if (rc == SG_OK) {
        post = malloc(nb * sizeof(*post));
        stack = malloc(nb * sizeof(*stack));
        pos = calloc(nb, sizeof(*pos));
        if (!post || !stack || !pos) rc = SG_ENOMEM;
    }
    uint32_t np = 0;
    if (rc == SG_OK) {
        for (uint32_t b = 0; b < nb; b++) bl[b].rpo = SG_PTX_NONE;
        uint32_t sp = 0;
        stack[sp++] = 0;
        bl[0].rpo = 0; /* visited mark */
        while (sp) {
            uint32_t b = stack[sp - 1];
            if (pos[b] < bl[b].n_succ) {
                uint32_t s = bl[b].succ[pos[b]++];
                if (bl[s].rpo == SG_PTX_NONE) {
                    bl[s].rpo = 0;
                    stack[sp++] = s;
                }
            } else {
                post[np++] = b;
                sp--;
            }
        }
        uint32_t *rpo = sg_ptx_arena_alloc(a, np * sizeof(*rpo));
        if (!rpo) {
            rc = SG_ENOMEM;
        } else {
            for (uint32_t i = 0; i < np; i++) {
                rpo[i] = post[np - 1 - i];
                bl[rpo[i]].rpo = i;
            }
            f->rpo = rpo;
            f->n_rpo = np;
        }
    }
    free(post);
    free(stack);
    free(pos);
    if (rc == SG_OK) {
        sg_ptx_block_t *final = sg_ptx_arena_alloc(a, nb * sizeof(*final));
        if (!final) {
            rc = SG_ENOMEM;
        } else {
            memcpy(final, bl, nb * sizeof(*final));
            f->blocks = final;
            f->n_blocks = nb;
        }
    }
    free(bl);
    free(npred);
    return rc;
}

/* ---- dominators (Cooper, Harvey, Kennedy) ------------------------------------------ */

void sg_ptx_dominators(const sg_ptx_func_t *f, uint32_t *idom)
{
    for (uint32_t b = 0; b < f->n_blocks; b++) idom[b] = SG_PTX_NONE;
    if (!f->n_rpo) return;
    uint32_t entry = f->rpo[0];
    idom[entry] = entry;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = 1; i < f->n_rpo; i++) {
            uint32_t b = f->rpo[i], nd = SG_PTX_NONE;
            const sg_ptx_block_t *blk = &f->blocks[b];
            for (uint32_t k = 0; k < blk->n_pred; k++) {
                uint32_t p = blk->pred[k];
                if (idom[p] == SG_PTX_NONE) continue;
                if (nd == SG_PTX_NONE) {
                    nd = p;
                    continue;
                }
                uint32_t x = p, y = nd;
                while (x != y) {
                    while (f->blocks[x].rpo > f->blocks[y].rpo) x = idom[x];
                    while (f->blocks[y].rpo > f->blocks[x].rpo) y = idom[y];
                }
                nd = x;
            }
            if (nd != SG_PTX_NONE && idom[b] != nd) {
                idom[b] = nd;
                changed = true;
            }
        }
    }
}

bool sg_ptx_dominates(const sg_ptx_func_t *f, const uint32_t *idom, uint32_t a, uint32_t b)
{
    if (a >= f->n_blocks || b >= f->n_blocks || idom[b] == SG_PTX_NONE) return false;
    for (;;) {
        if (a == b) return true;
        uint32_t up = idom[b];
        if (up == b || up == SG_PTX_NONE) return false;
        b = up;
    }
}

/* ---- registers ----------------------------------------------------------------------- */

const sg_ptx_regdecl_t *sg_ptx_reg_decl(const sg_ptx_func_t *f, uint32_t reg)
{
    if (!f || reg >= f->n_regs) return NULL;
    uint32_t lo = 0, hi = f->n_reg_decls;
    while (lo < hi) { /* last decl with base <= reg */
        uint32_t mid = (lo + hi) / 2;
        if (f->reg_decls[mid].base <= reg)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return NULL;
    const sg_ptx_regdecl_t *d = &f->reg_decls[lo - 1];
    uint32_t n = d->count ? d->count : 1;
    return reg - d->base < n ? d : NULL;
}

int sg_ptx_reg_name(const sg_ptx_func_t *f, uint32_t reg, char *buf, size_t n)
{
    const sg_ptx_regdecl_t *d = sg_ptx_reg_decl(f, reg);
    if (!d) return snprintf(buf, n, "?%u", reg);
    if (!d->count) return snprintf(buf, n, "%s", d->name);
    return snprintf(buf, n, "%s%u", d->name, reg - d->base);
}

uint32_t sg_ptx_reg_lookup(const sg_ptx_func_t *f, const char *name)
{
    if (!f || !name) return SG_PTX_NONE;
    size_t n = strlen(name);
    for (uint32_t i = 0; i < f->n_reg_decls; i++) {
        const sg_ptx_regdecl_t *d = &f->reg_decls[i];
        size_t l = strlen(d->name);
        if (!d->count) {
            if (l == n && !memcmp(d->name, name, n)) return d->base;
            continue;
        }
        if (n <= l || memcmp(d->name, name, l)) continue;
        if (name[l] == '0' && n > l + 1) continue;
        uint64_t v = 0;
        size_t k = l;
        for (; k < n && name[k] >= '0' && name[k] <= '9' && v <= UINT32_MAX; k++)
            v = v * 10 + (uint64_t)(name[k] - '0');
        if (k == n && v < d->count) return d->base + (uint32_t)v;
    }
    return SG_PTX_NONE;
}

/* ---- uses and definitions ------------------------------------------------------------ */

typedef enum { DEF_FIRST, DEF_NONE, DEF_FIRST_AND_USE, DEF_UNKNOWN, DEF_CALL } def_rule_t;

static bool mod0(const sg_ptx_instr_t *ins, const char *m)
{
    return ins->n_mods && !strcmp(ins->mods[0], m);
}

static def_rule_t def_rule(const sg_ptx_instr_t *ins)
{
    switch (ins->op) {
    case SG_PTX_OP_ST:
    case SG_PTX_OP_RED:
    case SG_PTX_OP_BRA:
    case SG_PTX_OP_BRX:
    case SG_PTX_OP_RET:
    case SG_PTX_OP_EXIT:
    case SG_PTX_OP_TRAP:
    case SG_PTX_OP_BRKPT:
    case SG_PTX_OP_CP:
    case SG_PTX_OP_PREFETCH:
    case SG_PTX_OP_PREFETCHU:
    case SG_PTX_OP_MEMBAR:
    case SG_PTX_OP_FENCE:
    case SG_PTX_OP_SUST:
    case SG_PTX_OP_SURED:
    case SG_PTX_OP_STMATRIX:
    case SG_PTX_OP_NANOSLEEP:
    case SG_PTX_OP_PMEVENT:
    case SG_PTX_OP_GRIDDEPCONTROL:
    case SG_PTX_OP_DISCARD:
    case SG_PTX_OP_APPLYPRIORITY:
    case SG_PTX_OP_SETMAXNREG:
    case SG_PTX_OP_STACKRESTORE:
    case SG_PTX_OP_TENSORMAP: return DEF_NONE;
    case SG_PTX_OP_BAR:
    case SG_PTX_OP_BARRIER: return sg_ptx_instr_has_mod(ins, ".red") ? DEF_FIRST : DEF_NONE;
    case SG_PTX_OP_MULTIMEM: return mod0(ins, ".ld_reduce") ? DEF_FIRST : DEF_NONE;
    case SG_PTX_OP_WMMA: return mod0(ins, ".store") ? DEF_NONE : DEF_FIRST;
    case SG_PTX_OP_MBARRIER:
        return (mod0(ins, ".init") || mod0(ins, ".inval") || mod0(ins, ".expect_tx") ||
                mod0(ins, ".complete_tx"))
                   ? DEF_NONE
                   : DEF_FIRST;
    case SG_PTX_OP_WGMMA: return mod0(ins, ".mma_async") ? DEF_FIRST_AND_USE : DEF_NONE;
    case SG_PTX_OP_CALL: return DEF_CALL;
    case SG_PTX_OP_OTHER:
    case SG_PTX_OP_TCGEN05: return DEF_UNKNOWN;
    default: return DEF_FIRST;
    }
}

typedef struct {
    uint32_t *regs;
    uint32_t max, n;
} reg_out_t;

static void put(reg_out_t *o, uint32_t r)
{
    if (r == SG_PTX_NONE) return;
    for (uint32_t i = 0; i < o->n && i < o->max; i++)
        if (o->regs[i] == r) return;
    if (o->n < o->max) o->regs[o->n] = r;
    o->n++;
}

/* Registers named by an operand. `addr_only`: only those inside addresses. */
static void regs_of(const sg_ptx_operand_t *op, reg_out_t *o, bool addr_only, bool in_addr)
{
    switch (op->kind) {
    case SG_PTX_OPND_REG:
        if (!addr_only || in_addr) put(o, op->reg);
        break;
    case SG_PTX_OPND_ADDRESS:
        put(o, op->reg);
        for (uint32_t i = 0; i < op->n_elems; i++) regs_of(&op->elems[i], o, false, true);
        break;
    case SG_PTX_OPND_VECTOR:
    case SG_PTX_OPND_LIST:
    case SG_PTX_OPND_PAIR:
        for (uint32_t i = 0; i < op->n_elems; i++) regs_of(&op->elems[i], o, addr_only, in_addr);
        break;
    default: break;
    }
}

/* The callee operand of a call: the first operand that is not a list. */
static uint32_t call_callee(const sg_ptx_instr_t *ins)
{
    for (uint32_t i = 0; i < ins->n_opnds; i++)
        if (ins->opnds[i].kind != SG_PTX_OPND_LIST) return i;
    return ins->n_opnds;
}

uint32_t sg_ptx_instr_defs(const sg_ptx_instr_t *ins, uint32_t *regs, uint32_t max)
{
    reg_out_t o = {regs, max, 0};
    switch (def_rule(ins)) {
    case DEF_NONE: break;
    case DEF_FIRST:
    case DEF_FIRST_AND_USE:
        if (ins->n_opnds && ins->opnds[0].kind != SG_PTX_OPND_ADDRESS)
            regs_of(&ins->opnds[0], &o, false, false);
        break;
    case DEF_CALL: {
        uint32_t c = call_callee(ins);
        for (uint32_t i = 0; i < c; i++) regs_of(&ins->opnds[i], &o, false, false);
        break;
    }
    case DEF_UNKNOWN:
        for (uint32_t i = 0; i < ins->n_opnds; i++)
            if (ins->opnds[i].kind != SG_PTX_OPND_ADDRESS) regs_of(&ins->opnds[i], &o, false, false);
        break;
    }
    return o.n;
}

uint32_t sg_ptx_instr_uses(const sg_ptx_instr_t *ins, uint32_t *regs, uint32_t max)
{
    reg_out_t o = {regs, max, 0};
    put(&o, ins->guard);
    def_rule_t r = def_rule(ins);
    for (uint32_t i = 0; i < ins->n_opnds; i++) {
        const sg_ptx_operand_t *op = &ins->opnds[i];
        bool is_def = false;
        if (i == 0 && r == DEF_FIRST && op->kind != SG_PTX_OPND_ADDRESS) is_def = true;
        if (r == DEF_CALL && i < call_callee(ins)) is_def = true;
        regs_of(op, &o, is_def, false);
    }
    return o.n;
}

/* ---- canonical text ------------------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t cap, len;
} out_t;

static void emit(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(out_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int k = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0) o->len += (size_t)k;
}

static void emit_opnd(out_t *o, const sg_ptx_func_t *f, const sg_ptx_operand_t *op)
{
    static const char comps[] = "?xyzw";
    if (op->neg) {
        const sg_ptx_regdecl_t *d = op->kind == SG_PTX_OPND_REG ? sg_ptx_reg_decl(f, op->reg) : NULL;
        emit(o, "%s", d && d->type == SG_PTX_T_PRED ? "!" : op->kind == SG_PTX_OPND_REG ? "-" : "!");
    }
    switch (op->kind) {
    case SG_PTX_OPND_REG:
        emit(o, "%s", op->name ? op->name : "?");
        if (op->comp) emit(o, ".%c", comps[op->comp <= 4 ? op->comp : 0]);
        break;
    case SG_PTX_OPND_SREG:
        emit(o, "%s", op->name);
        if (op->comp) emit(o, ".%c", comps[op->comp]);
        break;
    case SG_PTX_OPND_INT: emit(o, "%" PRId64, op->ival); break;
    case SG_PTX_OPND_FLOAT:
        if (op->fwidth == 32)
            emit(o, "0f%08" PRIX64, op->fbits);
        else if (op->fwidth == 64)
            emit(o, "0d%016" PRIX64, op->fbits);
        else
            emit(o, "%.17g", op->fval);
        break;
    case SG_PTX_OPND_SYMBOL:
        emit(o, "%s", op->name);
        if (op->ival) emit(o, "%+" PRId64, op->ival);
        break;
    case SG_PTX_OPND_ADDRESS:
        if (op->name) {
            emit(o, "[%s", op->name);
            if (op->ival) emit(o, "%+" PRId64, op->ival);
        } else {
            emit(o, "[%" PRId64, op->ival);
        }
        for (uint32_t i = 0; i < op->n_elems; i++) {
            emit(o, ", ");
            emit_opnd(o, f, &op->elems[i]);
        }
        emit(o, "]");
        break;
    case SG_PTX_OPND_VECTOR:
    case SG_PTX_OPND_LIST:
        emit(o, "%c", op->kind == SG_PTX_OPND_VECTOR ? '{' : '(');
        for (uint32_t i = 0; i < op->n_elems; i++) {
            if (i) emit(o, ", ");
            emit_opnd(o, f, &op->elems[i]);
        }
        emit(o, "%c", op->kind == SG_PTX_OPND_VECTOR ? '}' : ')');
        break;
    case SG_PTX_OPND_SINK: emit(o, "_"); break;
    case SG_PTX_OPND_PAIR:
        emit_opnd(o, f, &op->elems[0]);
        emit(o, "|");
        emit_opnd(o, f, &op->elems[1]);
        break;
    }
}

int sg_ptx_format_instr(const sg_ptx_func_t *f, const sg_ptx_instr_t *ins, char *buf, size_t n)
{
    out_t o = {buf, n, 0};
    if (n) buf[0] = '\0';
    if (ins->guard != SG_PTX_NONE) {
        char r[128];
        sg_ptx_reg_name(f, ins->guard, r, sizeof r);
        emit(&o, "@%s%s ", ins->guard_neg ? "!" : "", r);
    }
    emit(&o, "%s", ins->opcode);
    for (uint32_t i = 0; i < ins->n_mods; i++) emit(&o, "%s", ins->mods[i]);
    for (uint32_t i = 0; i < ins->n_opnds; i++) {
        emit(&o, i ? ", " : " ");
        emit_opnd(&o, f, &ins->opnds[i]);
    }
    emit(&o, ";");
    return (int)o.len;
}
