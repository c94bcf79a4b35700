/* fuzz_ptx.c: libFuzzer target for the PTX reader (code/ptx*.c). Arbitrary
 * bytes are parsed under small limits; whatever parses is walked the way
 * the access analysis and the fusion lifter walk it, and the reader's
 * promises are checked: every span lies inside the text, every statement
 * belongs to a block whose range holds it, successor and predecessor lists
 * agree, the reverse post-order is a permutation of the reachable blocks,
 * register ids are declared, dominators are consistent, and formatting and
 * uses/defs never overrun. Seeds: tests/fuzz/seeds/fuzz_ptx/ (a link to the
 * PTX fixtures in tests/data/ptx/). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/ptx.h"
#include "graph/graph.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) __builtin_trap();                                                                \
    } while (0)

static volatile uint64_t sink;

static void check_span(const sg_ptx_module_t *m, uint32_t off, uint32_t len)
{
    CHECK((uint64_t)off + len <= m->src_len);
}

static void check_opnd(const sg_ptx_module_t *m, const sg_ptx_func_t *f, const sg_ptx_operand_t *o)
{
    check_span(m, o->off, o->len);
    if (o->kind == SG_PTX_OPND_REG) CHECK(o->reg < f->n_regs);
    if (o->kind == SG_PTX_OPND_ADDRESS && o->reg != SG_PTX_NONE) CHECK(o->reg < f->n_regs);
    if (o->kind == SG_PTX_OPND_SYMBOL || o->kind == SG_PTX_OPND_ADDRESS) {
        switch (o->sym_kind) {
        case SG_PTX_SYM_PARAM: CHECK(o->sym < f->n_params); break;
        case SG_PTX_SYM_RET: CHECK(o->sym < f->n_rets); break;
        case SG_PTX_SYM_LOCAL_VAR: CHECK(o->sym < f->n_vars); break;
        case SG_PTX_SYM_MODULE_VAR: CHECK(o->sym < m->n_vars); break;
        case SG_PTX_SYM_FUNC: CHECK(o->sym < m->n_funcs); break;
        case SG_PTX_SYM_LABEL: CHECK(o->sym < f->n_labels); break;
        case SG_PTX_SYM_NONE: CHECK(o->kind == SG_PTX_OPND_ADDRESS); break;
        }
    }
    for (uint32_t i = 0; i < o->n_elems; i++) check_opnd(m, f, &o->elems[i]);
}

static void walk(const sg_ptx_module_t *m, const sg_ptx_func_t *f)
{
    char buf[256];
    uint32_t regs[8];
    check_span(m, f->off, f->len);
    for (uint32_t i = 0; i < f->n_params; i++) check_span(m, f->params[i].off, f->params[i].len);
    for (uint32_t i = 0; i < f->n_dirs; i++) check_span(m, f->dirs[i].off, f->dirs[i].len);
    if (!f->has_body) {
        CHECK(f->n_stmts == 0 && f->n_blocks == 0);
        return;
    }
    check_span(m, f->body_off, f->body_len);
    CHECK(f->n_blocks >= 1);
    for (uint32_t s = 0; s < f->n_stmts; s++) {
        const sg_ptx_stmt_t *st = &f->stmts[s];
        check_span(m, st->off, st->len);
        CHECK(st->block < f->n_blocks);
        CHECK(f->blocks[st->block].first <= s && s < f->blocks[st->block].end);
        if (st->kind == SG_PTX_STMT_LABEL) CHECK(st->u.label < f->n_labels);
        if (st->kind != SG_PTX_STMT_INSTR && st->kind != SG_PTX_STMT_DIRECTIVE) continue;
        const sg_ptx_instr_t *ins = &st->u.ins;
        for (uint32_t i = 0; i < ins->n_opnds; i++) check_opnd(m, f, &ins->opnds[i]);
        if (st->kind != SG_PTX_STMT_INSTR) continue;
        if (ins->guard != SG_PTX_NONE) CHECK(ins->guard < f->n_regs);
        int n = sg_ptx_format_instr(f, ins, buf, sizeof buf);
        CHECK(n >= 0);
        CHECK(strlen(buf) == ((size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1));
        uint32_t u = sg_ptx_instr_uses(ins, regs, 8), d = sg_ptx_instr_defs(ins, regs, 8);
        for (uint32_t i = 0; i < d && i < 8; i++) CHECK(regs[i] < f->n_regs);
        sink += u + d;
    }
    uint32_t reachable = 0;
    for (uint32_t b = 0; b < f->n_blocks; b++) {
        const sg_ptx_block_t *bl = &f->blocks[b];
        CHECK(bl->first <= bl->end && bl->end <= f->n_stmts);
        if (b + 1 < f->n_blocks) CHECK(bl->end == f->blocks[b + 1].first);
        for (uint32_t i = 0; i < bl->n_succ; i++) {
            uint32_t s = bl->succ[i], seen = 0;
            CHECK(s < f->n_blocks);
            for (uint32_t k = 0; k < f->blocks[s].n_pred; k++) seen += f->blocks[s].pred[k] == b;
            CHECK(seen == 1);
        }
        if (bl->rpo != SG_PTX_NONE) {
            CHECK(bl->rpo < f->n_rpo && f->rpo[bl->rpo] == b);
            reachable++;
        }
    }
    CHECK(reachable == f->n_rpo && f->rpo[0] == 0);
    uint32_t *idom = malloc(f->n_blocks * sizeof(*idom));
    if (!idom) return;
    sg_ptx_dominators(f, idom);
    for (uint32_t b = 0; b < f->n_blocks; b++) {
        if (f->blocks[b].rpo == SG_PTX_NONE) {
            CHECK(idom[b] == SG_PTX_NONE);
            continue;
        }
        CHECK(sg_ptx_dominates(f, idom, 0, b));
        if (b) CHECK(f->blocks[idom[b]].rpo < f->blocks[b].rpo);
    }
    free(idom);
    for (uint32_t r = 0; r < f->n_regs && r < 64; r++) {
        sg_ptx_reg_name(f, r, buf, sizeof buf);
        CHECK(sg_ptx_reg_lookup(f, buf) != SG_PTX_NONE);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sg_ptx_limits_t lim;
    sg_ptx_limits_default(&lim);
    lim.max_bytes = 1u << 20;
    lim.max_statements = 1u << 16;
    lim.max_registers = 1u << 16;
    lim.max_memory = 64u << 20;
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    int rc = sg_ptx_parse((const char *)data, size, &lim, &m, &err);
    if (rc != SG_OK) {
        CHECK(m == NULL && err.code == rc && err.message[0]);
        return 0;
    }
    CHECK(m->src_len == size && memcmp(m->src, data, size) == 0);
    for (uint32_t i = 0; i < m->n_vars; i++) check_span(m, m->vars[i].off, m->vars[i].len);
    for (uint32_t i = 0; i < m->n_funcs; i++) walk(m, &m->funcs[i]);
    sg_ptx_module_free(m);
    return 0;
}
