/* fuzz_ptx.c: libFuzzer target for the PTX reader (code/ptx*.c) and the
 * access analysis (code/access*.c). Arbitrary bytes are parsed under small
 * limits; whatever parses is walked the way the access analysis and the
 * fusion lifter walk it, and the reader's promises are checked: every span
 * lies inside the text, every statement belongs to a block whose range
 * holds it, successor and predecessor lists agree, the reverse post-order is
 * a permutation of the reachable blocks, register ids are declared,
 * dominators are consistent, and formatting and uses/defs never overrun.
 * Then every entry is analysed and evaluated for a small launch: indices in
 * the result stay inside its tables, every unknown has a reason, every known
 * range is ordered. Seeds: tests/fuzz/seeds/fuzz_ptx/ (a link to the PTX
 * fixtures in tests/data/ptx/). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/access.h"
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

static void analyse(const sg_ptx_module_t *m, const sg_ptx_func_t *f)
{
    sg_access_kernel_t k;
    int rc = sg_access_analyze_ptx(m, f->name, &k);
    CHECK(rc == SG_OK || rc == SG_ENOMEM);
    char buf[256];
    for (uint32_t i = 0; i < k.n_sites; i++) {
        const sg_access_site_t *s = &k.sites[i];
        CHECK(s->reason < SG_ACCESS_R_COUNT);
        CHECK(s->reason == SG_ACCESS_OK || s->detail[0]);
        CHECK((uint64_t)s->first_cond + s->n_conds <= k.n_conds);
        CHECK((uint64_t)s->first_check + s->n_checks <= k.n_conds);
        for (uint32_t c = 0; c < s->n_conds; c++) {
            const sg_access_cond_t *q = &k.conds[s->first_cond + c];
            CHECK((uint64_t)q->first_check + q->n_checks <= k.n_conds);
            sg_access_cond_format(q, buf, sizeof buf);
        }
        sg_access_expr_format(&s->offset, buf, sizeof buf);
    }
    for (uint32_t u = 0; u < k.n_uexprs; u++)
        CHECK(k.uexprs[u].op == SG_ACCESS_U_TRIP ? k.uexprs[u].a < k.n_loops
                                                 : k.uexprs[u].a < k.n_exprs && k.uexprs[u].b < k.n_exprs);
    uint8_t bytes[512] = {0};
    for (size_t i = 0; i < sizeof bytes; i += 8) bytes[i + 2] = 0x10; /* "pointers" at 1 MiB */
    sg_kernel_t node;
    memset(&node, 0, sizeof node);
    node.grid[0] = 3;
    node.grid[1] = node.grid[2] = 1;
    node.block[0] = 64;
    node.block[1] = 2;
    node.block[2] = 1;
    node.param_bytes = bytes;
    node.params_size = k.params_size < sizeof bytes ? k.params_size : (uint32_t)sizeof bytes;
    sg_buffer_t buf0 = {.address = 1u << 20, .size = 1u << 20, .label = "b0"};
    sg_access_eval_t ev;
    if (sg_access_eval(&k, &node, &buf0, 1, &ev) == SG_OK) {
        CHECK(ev.n_ranges == k.n_sites);
        for (uint32_t i = 0; i < ev.n_ranges; i++) {
            const sg_access_range_t *r = &ev.ranges[i];
            CHECK(r->status <= SG_ACCESS_ST_UNKNOWN);
            if (r->status == SG_ACCESS_ST_KNOWN && k.sites[i].base_kind == SG_ACCESS_BASE_PARAM)
                CHECK(r->lo < r->hi || r->hi == 0);
            if (r->status == SG_ACCESS_ST_UNKNOWN) CHECK(r->reason != SG_ACCESS_OK);
        }
        sink += ev.all_known;
        sg_access_eval_free(&ev);
    }
    sg_access_kernel_free(&k);
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
    for (uint32_t i = 0; i < m->n_funcs; i++)
        if (m->funcs[i].is_entry && m->funcs[i].has_body) analyse(m, &m->funcs[i]);
    sg_ptx_module_free(m);
    return 0;
}
