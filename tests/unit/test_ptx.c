/* test_ptx.c: the PTX reader (code/ptx.h) on the fixtures of
 * tests/data/ptx/ (nvcc 13 for compute_90 and compute_75, NVRTC CuPy-style,
 * Triton-style, a syntax zoo checked by ptxas): module and function facts,
 * parameter layouts, operands of chosen instructions, control flow, uses
 * and definitions, and two round trips that check every statement's span
 * and the canonical formatter against the parser. Then bad input: every
 * error carries line:column, truncations never crash, limits hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "code/ptx.h"
#include "graph/graph.h"

static char *read_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/ptx/%s", SGCAP_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

static sg_ptx_module_t *parse_fixture(const char *name)
{
    size_t len;
    char *text = read_fixture(name, &len);
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    int rc = sg_ptx_parse(text, len, NULL, &m, &err);
    free(text);
    if (rc) fail_msg("%s: %s", name, err.message);
    return m;
}

/* The first instruction whose canonical text is `want`. */
static const sg_ptx_stmt_t *find_instr(const sg_ptx_func_t *f, const char *want)
{
    char buf[1024];
    for (uint32_t i = 0; i < f->n_stmts; i++) {
        if (f->stmts[i].kind != SG_PTX_STMT_INSTR) continue;
        sg_ptx_format_instr(f, &f->stmts[i].u.ins, buf, sizeof buf);
        if (!strcmp(buf, want)) return &f->stmts[i];
    }
    fail_msg("%s: no instruction '%s'", f->name, want);
    return NULL;
}

static uint32_t reg(const sg_ptx_func_t *f, const char *name)
{
    uint32_t r = sg_ptx_reg_lookup(f, name);
    if (r == SG_PTX_NONE) fail_msg("%s: no register %s", f->name, name);
    return r;
}

static const char *const ALL_FIXTURES[] = {
    "sample_async_alloc.sm90.ptx", "sample_chain_barrier.sm90.ptx", "sample_chains.sm90.ptx",
    "sample_chains.sm75.ptx",      "sample_diamond.sm90.ptx",       "sample_driver_api_kernels.sm90.ptx",
    "sample_event_reuse.sm90.ptx", "sample_fan3.sm90.ptx",          "sample_fork_join.sm90.ptx",
    "sample_fork_join.sm75.ptx",   "sample_ping_pong.sm90.ptx",     "sample_recapture.sm90.ptx",
    "sample_stencil.sm90.ptx",     "sample_two_waiters.sm90.ptx",   "access_kernels.sm90.ptx",
    "access_kernels.sm75.ptx",     "cupy_elementwise.ptx",          "triton_poi_fused.ptx",
    "syntax_zoo.ptx",
};
#define N_FIXTURES (sizeof ALL_FIXTURES / sizeof ALL_FIXTURES[0])

static void test_opcode_table(void **state)
{
    (void)state;
    /* the reader finds opcodes by binary search: names must be sorted */
    for (int op = 2; op < SG_PTX_OP_COUNT; op++)
        assert_true(strcmp(sg_ptx_opcode_name((sg_ptx_opcode_t)(op - 1)),
                           sg_ptx_opcode_name((sg_ptx_opcode_t)op)) < 0);
    assert_string_equal(sg_ptx_type_name(SG_PTX_T_F16X2), ".f16x2");
    assert_int_equal(sg_ptx_type_size(SG_PTX_T_B128), 16);
    assert_true(sg_ptx_type_is_signed(SG_PTX_T_S32));
    assert_false(sg_ptx_type_is_signed(SG_PTX_T_U32));
    assert_true(sg_ptx_type_is_float(SG_PTX_T_BF16));
    assert_string_equal(sg_ptx_space_name(SG_PTX_SPACE_SHARED_CLUSTER), ".shared::cluster");
}

static void test_fork_join(void **state)
{
    (void)state;
    const char *names[] = {"sample_fork_join.sm90.ptx", "sample_fork_join.sm75.ptx"};
    for (int v = 0; v < 2; v++) {
        sg_ptx_module_t *m = parse_fixture(names[v]);
        assert_int_equal(m->version_major, 9);
        assert_int_equal(m->version_minor, 0);
        assert_int_equal(m->target_arch, v == 0 ? 90 : 75);
        assert_int_equal(m->target_suffix, 0);
        assert_int_equal(m->address_size, 64);
        assert_int_equal(m->n_funcs, 3);
        const sg_ptx_func_t *f = sg_ptx_find_func(m, "_Z6k_axpbPfPKfffm");
        assert_non_null(f);
        assert_true(f->is_entry && f->has_body);
        assert_int_equal(f->linkage, SG_PTX_LINK_VISIBLE);
        /* float *y, const float *x, float m, float add, size_t n */
        assert_int_equal(f->n_params, 5);
        const uint32_t off[] = {0, 8, 16, 20, 24}, size[] = {8, 8, 4, 4, 8};
        for (int i = 0; i < 5; i++) {
            assert_int_equal(f->params[i].param_offset, off[i]);
            assert_int_equal(f->params[i].size, size[i]);
            assert_int_equal(f->params[i].space, SG_PTX_SPACE_PARAM);
        }
        assert_int_equal(f->params[2].type, SG_PTX_T_F32);
        assert_int_equal(f->params_size, 32);
        /* %p<2>, %f<5>, %r<4>, %rd<12> */
        assert_int_equal(f->n_reg_decls, 4);
        assert_int_equal(f->n_regs, 2 + 5 + 4 + 12);
        assert_int_equal(sg_ptx_reg_decl(f, reg(f, "%rd11"))->type, SG_PTX_T_B64);
        assert_int_equal(sg_ptx_reg_lookup(f, "%rd12"), SG_PTX_NONE);
        assert_int_equal(sg_ptx_reg_lookup(f, "%rd01"), SG_PTX_NONE);

        const sg_ptx_instr_t *ld = &find_instr(f, "ld.global.f32 %f3, [%rd9];")->u.ins;
        assert_int_equal(ld->op, SG_PTX_OP_LD);
        assert_int_equal(ld->space, SG_PTX_SPACE_GLOBAL);
        assert_int_equal(ld->type, SG_PTX_T_F32);
        assert_int_equal(ld->vec, 1);
        assert_int_equal(ld->n_opnds, 2);
        assert_int_equal(ld->opnds[0].kind, SG_PTX_OPND_REG);
        assert_int_equal(ld->opnds[0].reg, reg(f, "%f3"));
        assert_int_equal(ld->opnds[1].kind, SG_PTX_OPND_ADDRESS);
        assert_int_equal(ld->opnds[1].reg, reg(f, "%rd9"));
        assert_int_equal(ld->opnds[1].ival, 0);

        const sg_ptx_instr_t *lp = &find_instr(f, "ld.param.u64 %rd3, [_Z6k_axpbPfPKfffm_param_1];")->u.ins;
        assert_int_equal(lp->space, SG_PTX_SPACE_PARAM);
        assert_int_equal(lp->opnds[1].sym_kind, SG_PTX_SYM_PARAM);
        assert_int_equal(lp->opnds[1].sym, 1);
        assert_int_equal(lp->opnds[1].reg, SG_PTX_NONE);

        const sg_ptx_instr_t *mv = &find_instr(f, "mov.u32 %r1, %ctaid.x;")->u.ins;
        assert_int_equal(mv->opnds[1].kind, SG_PTX_OPND_SREG);
        assert_int_equal(mv->opnds[1].sreg, SG_PTX_SREG_CTAID_X);
        const sg_ptx_instr_t *cv = &find_instr(f, "cvt.u64.u32 %rd6, %r3;")->u.ins;
        assert_int_equal(cv->type, SG_PTX_T_U64);
        assert_int_equal(cv->type2, SG_PTX_T_U32);
        const sg_ptx_stmt_t *br = find_instr(f, "@%p1 bra $L__BB0_2;");
        assert_int_equal(br->u.ins.guard, reg(f, "%p1"));
        assert_false(br->u.ins.guard_neg);
        assert_int_equal(br->u.ins.opnds[0].sym_kind, SG_PTX_SYM_LABEL);
        /* the span is the statement exactly as written */
        assert_int_equal(br->len, strlen("@%p1 bra \t$L__BB0_2;"));
        assert_memory_equal(m->src + br->off, "@%p1 bra \t$L__BB0_2;", br->len);

        /* blocks: entry (to the guarded branch), body, the label's ret */
        assert_int_equal(f->n_blocks, 3);
        assert_int_equal(f->blocks[0].n_succ, 2);
        assert_int_equal(f->blocks[0].succ[0], 2); /* taken first */
        assert_int_equal(f->blocks[0].succ[1], 1);
        assert_int_equal(f->blocks[1].n_succ, 1);
        assert_int_equal(f->blocks[1].succ[0], 2);
        assert_int_equal(f->blocks[2].n_succ, 0);
        assert_true(f->blocks[2].returns);
        assert_false(f->blocks[0].returns);
        assert_int_equal(f->blocks[2].n_pred, 2);
        assert_int_equal(f->n_rpo, 3);
        assert_int_equal(f->rpo[0], 0);
        assert_int_equal(f->labels[br->u.ins.opnds[0].sym].block, 2);
        assert_int_equal(br->block, 0);
        uint32_t idom[3];
        sg_ptx_dominators(f, idom);
        assert_int_equal(idom[1], 0);
        assert_int_equal(idom[2], 0);
        assert_true(sg_ptx_dominates(f, idom, 0, 2));
        assert_false(sg_ptx_dominates(f, idom, 1, 2));

        /* uses and definitions */
        uint32_t r[8];
        const sg_ptx_instr_t *fma = &find_instr(f, "fma.rn.f32 %f4, %f3, %f1, %f2;")->u.ins;
        assert_int_equal(sg_ptx_instr_defs(fma, r, 8), 1);
        assert_int_equal(r[0], reg(f, "%f4"));
        assert_int_equal(sg_ptx_instr_uses(fma, r, 8), 3);
        const sg_ptx_instr_t *st = &find_instr(f, "st.global.f32 [%rd11], %f4;")->u.ins;
        assert_int_equal(sg_ptx_instr_defs(st, r, 8), 0);
        assert_int_equal(sg_ptx_instr_uses(st, r, 8), 2);
        assert_int_equal(r[0], reg(f, "%rd11"));
        assert_int_equal(r[1], reg(f, "%f4"));
        assert_int_equal(sg_ptx_instr_uses(&br->u.ins, r, 8), 1);
        assert_int_equal(r[0], reg(f, "%p1"));
        sg_ptx_module_free(m);
    }
}

static void test_triton(void **state)
{
    (void)state;
    sg_ptx_module_t *m = parse_fixture("triton_poi_fused.ptx");
    assert_int_equal(m->version_major, 8);
    assert_int_equal(m->version_minor, 7);
    assert_int_equal(m->target_arch, 90);
    assert_int_equal(m->target_suffix, 'a');
    assert_string_equal(m->target, "sm_90a");
    const sg_ptx_func_t *f = sg_ptx_find_func(m, "triton_poi_fused_add_mul_0");
    assert_non_null(f);
    assert_int_equal(f->reqntid[0], 128);
    assert_int_equal(f->reqntid[1], 1);
    assert_int_equal(f->n_dirs, 1);
    assert_string_equal(f->dirs[0].name, ".reqntid");
    assert_memory_equal(m->src + f->dirs[0].off, ".reqntid 128, 1, 1", f->dirs[0].len);
    assert_int_equal(f->params[0].ptr_space, SG_PTX_SPACE_GLOBAL);
    assert_int_equal(f->params[0].ptr_align, 1);
    assert_int_equal(f->params[0].align, 0);
    assert_int_equal(f->params[3].type, SG_PTX_T_U32);
    assert_int_equal(f->params[3].param_offset, 24);
    assert_int_equal(f->params[4].param_offset, 32);

    const sg_ptx_stmt_t *s = find_instr(f, "@%p1 ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd1];");
    const sg_ptx_instr_t *ld = &s->u.ins;
    assert_int_equal(ld->vec, 4);
    assert_int_equal(ld->type, SG_PTX_T_B32);
    assert_int_equal(ld->guard, reg(f, "%p1"));
    assert_int_equal(ld->opnds[0].kind, SG_PTX_OPND_VECTOR);
    assert_int_equal(ld->opnds[0].n_elems, 4);
    assert_int_equal(ld->opnds[0].elems[3].reg, reg(f, "%r5"));
    assert_int_equal(ld->opnds[1].reg, reg(f, "%rd1"));
    const char *want = "@%p1 ld.global.v4.b32 { %r2, %r3, %r4, %r5 }, [ %rd1 + 0 ];";
    assert_int_equal(s->len, strlen(want));
    assert_memory_equal(m->src + s->off, want, s->len);
    assert_memory_equal(m->src + ld->opnds[1].off, "[ %rd1 + 0 ]", ld->opnds[1].len);
    uint32_t r[8];
    assert_int_equal(sg_ptx_instr_defs(ld, r, 8), 4);
    assert_int_equal(sg_ptx_instr_uses(ld, r, 8), 2); /* guard and address */

    const sg_ptx_instr_t *ev = &find_instr(f, "@%p2 ld.global.L1::evict_last.v4.b32 {%r14, %r15, %r16, %r17}, [%rd4];")->u.ins;
    assert_true(sg_ptx_instr_has_mod(ev, ".L1::evict_last"));
    assert_int_equal(ev->space, SG_PTX_SPACE_GLOBAL);

    /* .loc kept as a directive without its line end; debug sections skipped */
    uint32_t locs = 0;
    for (uint32_t i = 0; i < f->n_stmts; i++) {
        const sg_ptx_stmt_t *st = &f->stmts[i];
        if (st->kind != SG_PTX_STMT_DIRECTIVE) continue;
        assert_string_equal(st->u.ins.opcode, ".loc");
        assert_memory_equal(m->src + st->off, ".loc", 4);
        assert_null(memchr(m->src + st->off, '\n', st->len));
        locs++;
    }
    assert_true(locs > 10);
    /* the code after ret is unreachable: two reachable blocks of three */
    assert_int_equal(f->n_blocks, 3);
    assert_int_equal(f->n_rpo, 2);
    assert_int_equal(f->blocks[2].rpo, SG_PTX_NONE);
    sg_ptx_module_free(m);
}

static void test_cupy(void **state)
{
    (void)state;
    sg_ptx_module_t *m = parse_fixture("cupy_elementwise.ptx");
    const sg_ptx_func_t *f = sg_ptx_find_func(m, "cupy_axpb");
    assert_non_null(f);
    /* CArray x (32 bytes), float a, float b, CArray y, CIndexer (16) */
    const uint32_t off[] = {0, 32, 36, 40, 72}, size[] = {32, 4, 4, 32, 16};
    assert_int_equal(f->n_params, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(f->params[i].param_offset, off[i]);
        assert_int_equal(f->params[i].size, size[i]);
    }
    assert_int_equal(f->params[0].align, 8);
    assert_int_equal(f->params[0].type, SG_PTX_T_B8);
    assert_int_equal(f->params[0].n_dims, 1);
    assert_int_equal(f->params[0].dims[0], 32);
    assert_int_equal(f->params_size, 88);
    const sg_ptx_func_t *g = sg_ptx_find_func(m, "cupy_copy_strided");
    assert_non_null(g);
    const sg_ptx_instr_t *ld = &find_instr(g, "ld.param.u64 %rd55, [cupy_copy_strided_param_0+24];")->u.ins;
    assert_int_equal(ld->opnds[1].sym_kind, SG_PTX_SYM_PARAM);
    assert_int_equal(ld->opnds[1].sym, 0);
    assert_int_equal(ld->opnds[1].ival, 24);
    assert_non_null(sg_ptx_find_func(m, "cupy_add32"));
    assert_non_null(sg_ptx_find_func(m, "cupy_scale_2d"));
    sg_ptx_module_free(m);
}

static void test_zoo(void **state)
{
    (void)state;
    sg_ptx_module_t *m = parse_fixture("syntax_zoo.ptx");
    assert_int_equal(m->n_vars, 6);
    const sg_ptx_var_t *v = &m->vars[0];
    assert_string_equal(v->name, "counter");
    assert_int_equal(v->space, SG_PTX_SPACE_GLOBAL);
    assert_int_equal(v->align, 4);
    assert_memory_equal(m->src + v->init_off, "7", v->init_len);
    v = &m->vars[1];
    assert_string_equal(v->name, "table_ptrs");
    assert_int_equal(v->size, 16);
    const char *init = "{generic(counter), generic(counter)+4}";
    assert_int_equal(v->init_len, strlen(init));
    assert_memory_equal(m->src + v->init_off, init, v->init_len);
    assert_int_equal(m->vars[2].space, SG_PTX_SPACE_CONST);
    assert_int_equal(m->vars[3].size, 4096);
    assert_int_equal(m->vars[4].linkage, SG_PTX_LINK_EXTERN);
    assert_int_equal(m->vars[4].size, 0); /* unsized */
    assert_int_equal(m->vars[4].n_dims, 1);
    assert_int_equal(m->vars[4].dims[0], 0);

    const sg_ptx_func_t *vp = sg_ptx_find_func(m, "vprintf");
    assert_non_null(vp);
    assert_false(vp->has_body);
    assert_int_equal(vp->linkage, SG_PTX_LINK_EXTERN);
    assert_int_equal(vp->n_rets, 1);
    const sg_ptx_func_t *tw = sg_ptx_find_func(m, "twice");
    assert_int_equal(tw->linkage, SG_PTX_LINK_WEAK);
    assert_false(tw->is_entry);

    const sg_ptx_func_t *f = sg_ptx_find_func(m, "zoo_matrix");
    assert_int_equal(f->maxntid[0], 256);
    assert_int_equal(f->minnctapersm, 1);
    assert_int_equal(f->maxnreg, 168);
    assert_int_equal(f->n_dirs, 3);
    assert_int_equal(f->params[2].align, 64);
    assert_int_equal(f->params[2].param_offset, 64); /* aligned up from 16 */
    assert_int_equal(f->params[3].param_offset, 192);
    assert_int_equal(f->n_vars, 1);
    assert_int_equal(f->vars[0].space, SG_PTX_SPACE_SHARED);
    /* constant expressions are folded */
    assert_int_equal(find_instr(f, "add.s32 %r28, %r26, 32;")->u.ins.opnds[2].ival, 32);
    assert_int_equal(find_instr(f, "sub.s32 %r29, %r28, -6;")->u.ins.opnds[2].ival, -6);
    /* a|b pairs, taken parameter address, special registers, vectors */
    uint32_t r[16];
    const sg_ptx_instr_t *sh = &find_instr(f, "shfl.sync.bfly.b32 %r24|%p3, %r23, 16, 31, -1;")->u.ins;
    assert_int_equal(sh->opnds[0].kind, SG_PTX_OPND_PAIR);
    assert_int_equal(sg_ptx_instr_defs(sh, r, 16), 2);
    assert_int_equal(r[0], reg(f, "%r24"));
    assert_int_equal(r[1], reg(f, "%p3"));
    const sg_ptx_instr_t *pa = &find_instr(f, "mov.u64 %rd3, zoo_matrix_param_2;")->u.ins;
    assert_int_equal(pa->opnds[1].sym_kind, SG_PTX_SYM_PARAM);
    assert_int_equal(pa->opnds[1].sym, 2);
    assert_int_equal(find_instr(f, "mov.u32 %r4, %envreg3;")->u.ins.opnds[1].sreg,
                     SG_PTX_SREG_ENVREG);
    assert_int_equal(find_instr(f, "mov.u64 %rd4, %clock64;")->u.ins.opnds[1].sreg,
                     SG_PTX_SREG_CLOCK64);
    const sg_ptx_instr_t *tm =
        &find_instr(f, "@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd3, {%r2, %r3}], [%r20];")->u.ins;
    assert_int_equal(tm->space, SG_PTX_SPACE_SHARED_CLUSTER);
    assert_int_equal(tm->opnds[1].n_elems, 1);
    assert_int_equal(tm->opnds[1].elems[0].kind, SG_PTX_OPND_VECTOR);
    assert_int_equal(sg_ptx_instr_defs(tm, r, 16), 0);
    assert_int_equal(sg_ptx_instr_uses(tm, r, 16), 6);
    const sg_ptx_instr_t *mma = &find_instr(f, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%f1, %f2, %f3, %f4};")->u.ins;
    assert_int_equal(sg_ptx_instr_defs(mma, r, 16), 4);
    assert_int_equal(sg_ptx_instr_uses(mma, r, 16), 10);
    const sg_ptx_instr_t *cas = &find_instr(f, "atom.global.cas.b32 %r30, [%rd10], %r28, %r29;")->u.ins;
    assert_int_equal(sg_ptx_instr_defs(cas, r, 16), 1);
    assert_int_equal(sg_ptx_instr_uses(cas, r, 16), 3);
    const sg_ptx_instr_t *arr = &find_instr(f, "@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd8, [%r20], 1024;")->u.ins;
    assert_int_equal(sg_ptx_instr_defs(arr, r, 16), 1);
    assert_int_equal(r[0], reg(f, "%rd8"));
    assert_int_equal(sg_ptx_instr_defs(&find_instr(f, "mbarrier.init.shared::cta.b64 [%r20], 1;")->u.ins, r, 16), 0);
    const sg_ptx_instr_t *unpack = &find_instr(f, "mov.b32 {%rs1, %rs2}, %r27;")->u.ins;
    assert_int_equal(sg_ptx_instr_defs(unpack, r, 16), 2);
    assert_int_equal(find_instr(f, "ld.global.u32 %r32, [counter];")->u.ins.opnds[1].sym_kind,
                     SG_PTX_SYM_MODULE_VAR);
    assert_int_equal(find_instr(f, "ld.const.u32 %r31, [lut+4];")->u.ins.opnds[1].ival, 4);
    assert_true(find_instr(f, "@!%p2 bra $L__wait;")->u.ins.guard_neg);

    /* calls, a jump table, exit and trap */
    const sg_ptx_func_t *c = sg_ptx_find_func(m, "zoo_control");
    assert_int_equal(c->reqntid[0], 64);
    assert_int_equal(c->reqntid[1], 1);
    const sg_ptx_instr_t *call = &find_instr(c, "call.uni (retval0), twice, (param0);")->u.ins;
    assert_int_equal(call->op, SG_PTX_OP_CALL);
    assert_int_equal(call->n_opnds, 3);
    assert_int_equal(call->opnds[0].kind, SG_PTX_OPND_LIST);
    assert_int_equal(call->opnds[1].sym_kind, SG_PTX_SYM_FUNC);
    assert_ptr_equal(&m->funcs[call->opnds[1].sym], tw);
    assert_int_equal(call->opnds[2].elems[0].sym_kind, SG_PTX_SYM_LOCAL_VAR);
    const sg_ptx_instr_t *icall = &find_instr(c, "call (retval0), %rd3, (param0), prototype_0;")->u.ins;
    assert_int_equal(icall->opnds[1].kind, SG_PTX_OPND_REG);
    assert_int_equal(icall->opnds[3].sym_kind, SG_PTX_SYM_LABEL);
    assert_int_equal(sg_ptx_instr_uses(icall, r, 16), 1);
    const sg_ptx_stmt_t *brx = find_instr(c, "brx.idx %r2, ts;");
    const sg_ptx_block_t *bb = &c->blocks[brx->block];
    assert_int_equal(bb->n_succ, 4);
    for (uint32_t i = 0; i < 4; i++) assert_int_equal(c->blocks[bb->succ[i]].n_succ, 1);
    const sg_ptx_block_t *ex = &c->blocks[find_instr(c, "@%p1 exit;")->block];
    assert_true(ex->returns);
    assert_int_equal(ex->n_succ, 1);
    /* the join after the jump table is dominated by the brx block */
    uint32_t *idom = calloc(c->n_blocks, sizeof(*idom));
    sg_ptx_dominators(c, idom);
    uint32_t join = find_instr(c, "st.local.u32 [%SPL], %r3;")->block;
    assert_int_equal(c->blocks[join].n_pred, 4);
    assert_int_equal(idom[join], brx->block);
    free(idom);
    sg_ptx_module_free(m);
}

/* ---- round trips --------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static void put(buf_t *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(buf_t *b, const char *s)
{
    put(b, s, strlen(s));
}

/* The module rebuilt from its spans: header from the IR, variables and
 * function headers verbatim, each statement on its own line, verbatim or
 * (canonical) as sg_ptx_format_instr writes it. */
static char *rebuild(const sg_ptx_module_t *m, bool canonical)
{
    buf_t b = {0};
    char line[8192];
    snprintf(line, sizeof line, ".version %u.%u\n.target %s\n.address_size %u\n",
             m->version_major, m->version_minor, m->target, m->address_size);
    puts_(&b, line);
    uint32_t last = UINT32_MAX;
    for (uint32_t i = 0; i < m->n_vars; i++) {
        if (m->vars[i].off == last) continue; /* one statement declaring several */
        last = m->vars[i].off;
        put(&b, m->src + m->vars[i].off, m->vars[i].len);
        puts_(&b, "\n");
    }
    for (uint32_t i = 0; i < m->n_funcs; i++) {
        const sg_ptx_func_t *f = &m->funcs[i];
        if (!f->has_body) {
            put(&b, m->src + f->off, f->len);
            puts_(&b, "\n");
            continue;
        }
        put(&b, m->src + f->off, f->body_off - f->off);
        puts_(&b, "{\n");
        for (uint32_t s = 0; s < f->n_stmts; s++) {
            const sg_ptx_stmt_t *st = &f->stmts[s];
            if (canonical && st->kind == SG_PTX_STMT_INSTR) {
                sg_ptx_format_instr(f, &st->u.ins, line, sizeof line);
                puts_(&b, line);
            } else {
                put(&b, m->src + st->off, st->len);
            }
            puts_(&b, "\n");
        }
        puts_(&b, "}\n");
        assert_int_equal(m->src[f->body_off], '{');
        assert_int_equal(m->src[f->body_off + f->body_len - 1], '}');
        assert_int_equal(f->off + f->len, f->body_off + f->body_len);
    }
    return b.p;
}

static void same_ir(const sg_ptx_module_t *a, const sg_ptx_module_t *b, const char *what)
{
    char x[8192], y[8192];
    if (a->n_funcs != b->n_funcs || a->n_vars != b->n_vars) fail_msg("%s: counts differ", what);
    for (uint32_t i = 0; i < a->n_funcs; i++) {
        const sg_ptx_func_t *f = &a->funcs[i], *g = &b->funcs[i];
        assert_string_equal(f->name, g->name);
        assert_int_equal(f->n_params, g->n_params);
        assert_int_equal(f->params_size, g->params_size);
        assert_int_equal(f->n_regs, g->n_regs);
        if (f->n_stmts != g->n_stmts) fail_msg("%s: %s: statement counts differ", what, f->name);
        for (uint32_t s = 0; s < f->n_stmts; s++) {
            const sg_ptx_stmt_t *p = &f->stmts[s], *q = &g->stmts[s];
            assert_int_equal(p->kind, q->kind);
            assert_int_equal(p->block, q->block);
            if (p->kind != SG_PTX_STMT_INSTR) continue;
            sg_ptx_format_instr(f, &p->u.ins, x, sizeof x);
            sg_ptx_format_instr(g, &q->u.ins, y, sizeof y);
            if (strcmp(x, y)) fail_msg("%s: %s: '%s' became '%s'", what, f->name, x, y);
        }
        assert_int_equal(f->n_blocks, g->n_blocks);
        for (uint32_t k = 0; k < f->n_blocks; k++) {
            assert_int_equal(f->blocks[k].n_succ, g->blocks[k].n_succ);
            for (uint32_t e = 0; e < f->blocks[k].n_succ; e++)
                assert_int_equal(f->blocks[k].succ[e], g->blocks[k].succ[e]);
        }
    }
}

static void test_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        sg_ptx_module_t *m = parse_fixture(ALL_FIXTURES[i]);
        for (int canon = 0; canon < 2; canon++) {
            char *text = rebuild(m, canon);
            sg_ptx_module_t *m2 = NULL;
            sg_ptx_error_t err;
            if (sg_ptx_parse(text, strlen(text), NULL, &m2, &err))
                fail_msg("%s (%s): %s", ALL_FIXTURES[i], canon ? "canonical" : "spans", err.message);
            same_ir(m, m2, ALL_FIXTURES[i]);
            sg_ptx_module_free(m2);
            free(text);
        }
        /* every instruction span is one statement: it ends with ';' and
           holds exactly one ';' outside strings */
        for (uint32_t f = 0; f < m->n_funcs; f++)
            for (uint32_t s = 0; s < m->funcs[f].n_stmts; s++) {
                const sg_ptx_stmt_t *st = &m->funcs[f].stmts[s];
                assert_true(st->off + st->len <= m->src_len);
                if (st->kind == SG_PTX_STMT_LABEL) assert_int_equal(m->src[st->off + st->len - 1], ':');
                if (st->kind != SG_PTX_STMT_INSTR) continue;
                assert_int_equal(m->src[st->off + st->len - 1], ';');
                const char *semi = memchr(m->src + st->off, ';', st->len);
                assert_ptr_equal(semi, m->src + st->off + st->len - 1);
            }
        sg_ptx_module_free(m);
    }
}

/* Every register name maps back to its id (inner-scope redeclarations of a
 * name, like NVVM's temp_param_reg in each call block, to the first one). */
static void test_register_names(void **state)
{
    (void)state;
    sg_ptx_module_t *m = parse_fixture("syntax_zoo.ptx");
    for (uint32_t i = 0; i < m->n_funcs; i++) {
        const sg_ptx_func_t *f = &m->funcs[i];
        for (uint32_t r = 0; r < f->n_regs; r++) {
            char name[64];
            sg_ptx_reg_name(f, r, name, sizeof name);
            uint32_t back = sg_ptx_reg_lookup(f, name);
            char again[64];
            sg_ptx_reg_name(f, back, again, sizeof again);
            assert_string_equal(name, again);
            if (strcmp(name, "temp_param_reg")) assert_int_equal(back, r);
        }
    }
    const sg_ptx_func_t *c = sg_ptx_find_func(m, "zoo_control");
    assert_int_equal(sg_ptx_reg_decl(c, reg(c, "%SPL"))->count, 0);
    sg_ptx_module_free(m);
}

/* ---- bad input -------------------------------------------------------------- */

#define HDR ".version 8.0\n.target sm_90\n.address_size 64\n"

static void expect_error(const char *text, int code, const char *where, const char *what)
{
    sg_ptx_module_t *m = (sg_ptx_module_t *)0x1;
    sg_ptx_error_t err;
    int rc = sg_ptx_parse(text, strlen(text), NULL, &m, &err);
    if (rc != code) fail_msg("'%s': rc %d (%s), want %d", text, rc, err.message, code);
    assert_null(m);
    assert_int_equal(err.code, code);
    if (where && strncmp(err.message, where, strlen(where)))
        fail_msg("'%s': message '%s' does not start with '%s'", text, err.message, where);
    if (what && !strstr(err.message, what))
        fail_msg("'%s': message '%s' lacks '%s'", text, err.message, what);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", SG_EFORMAT, NULL, "no .version");
    expect_error("\x7f\x45LF garbage", SG_EFORMAT, "1:1:", "unexpected character");
    expect_error("hello world", SG_EFORMAT, "1:1:", "not PTX");
    expect_error(".target sm_90\n", SG_EFORMAT, "1:1:", ".version");
    expect_error(".version 8.0\n.entry k() { ret; }", SG_EFORMAT, "2:1:", ".target");
    expect_error(HDR ".entry k()\n{\n\tret;\n", SG_EFORMAT, NULL, "not closed");
    expect_error(HDR ".entry k()\n{\n\tmov.u32 %r1, 1;\n\tret;\n}\n", SG_EFORMAT, "6:10:",
                 "undeclared identifier '%r1'");
    expect_error(HDR ".entry k()\n{\n.reg .b32 %r<4>;\n\tmov.u32 %r4, 1;\n}\n", SG_EFORMAT,
                 "7:10:", "undeclared identifier '%r4'");
    expect_error(HDR ".entry k()\n{\nL1:\nL1:\n\tret;\n}\n", SG_EFORMAT, "7:1:", "defined twice");
    expect_error(HDR ".entry k()\n{\n.reg .b32 %r;\n.reg .b32 %r;\n}\n", SG_EFORMAT, "7:11:",
                 "declared twice");
    expect_error(HDR ".entry k()\n{\n\tbra L9;\n}\n", SG_EFORMAT, "6:6:", "undeclared identifier 'L9'");
    expect_error(HDR ".entry k()\n{\n\tret\n}\n", SG_EFORMAT, "7:1:", "expected ';'");
    expect_error(HDR ".entry k()\n{\n/* never closed\n", SG_EFORMAT, "6:1:", "unterminated comment");
    expect_error(HDR ".global .align 3 .u32 x;\n", SG_EFORMAT, "4:9:", "alignment");
    expect_error(HDR ".entry k()\n{\n.reg .b64 %r;\n\tmov.u64 %r, 99999999999999999999;\n}\n",
                 SG_EFORMAT, "7:14:", "64 bits");
    expect_error(HDR ".entry k()\n{\n.reg .b64 %r;\n\tmov.u64 %r, (1/0);\n}\n", SG_EFORMAT, NULL,
                 "division by zero");
    expect_error(HDR ".entry k()\n{\n.reg .b32 %r;\n\tmov.u32 %r, %tid;\n}\n", SG_EFORMAT, NULL,
                 "needs a component");
    expect_error(HDR ".entry k()\n{\n\t.pragma \"nounroll;\n}\n", SG_EFORMAT, "6:10:",
                 "unterminated string");
    expect_error(HDR ".bogus 1;\n", SG_EFORMAT, "4:1:", "unknown directive");
    expect_error(HDR ".entry k(.param .u64 p[) { ret; }", SG_EFORMAT, "4:24:", NULL);
    expect_error(HDR ".entry k() { .reg .b32 %r<2000000000>; }", SG_ELIMIT, NULL, "registers");
    char deep[600] = HDR ".entry k() {";
    for (int i = 0; i < 100; i++) strcat(deep, "{");
    expect_error(deep, SG_ELIMIT, NULL, "nesting");
}

static void test_limits(void **state)
{
    (void)state;
    size_t len;
    char *text = read_fixture("sample_chains.sm90.ptx", &len);
    sg_ptx_limits_t lim;
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    sg_ptx_limits_default(&lim);
    lim.max_bytes = len - 1;
    assert_int_equal(sg_ptx_parse(text, len, &lim, &m, &err), SG_ELIMIT);
    assert_non_null(strstr(err.message, "bytes"));
    sg_ptx_limits_default(&lim);
    lim.max_statements = 50;
    assert_int_equal(sg_ptx_parse(text, len, &lim, &m, &err), SG_ELIMIT);
    assert_non_null(strstr(err.message, "statements"));
    sg_ptx_limits_default(&lim);
    lim.max_functions = 3;
    assert_int_equal(sg_ptx_parse(text, len, &lim, &m, &err), SG_ELIMIT);
    sg_ptx_limits_default(&lim);
    lim.max_memory = 32u << 10; /* less than the IR needs */
    assert_int_equal(sg_ptx_parse(text, len, &lim, &m, &err), SG_ELIMIT);
    assert_null(m);
    /* the same text parses with the defaults */
    assert_int_equal(sg_ptx_parse(text, len, NULL, &m, &err), SG_OK);
    sg_ptx_module_free(m);
    free(text);
    /* too many operands */
    buf_t b = {0};
    puts_(&b, HDR ".entry k() { .reg .b32 %r; mov.b32 %r");
    for (int i = 0; i < 600; i++) puts_(&b, ", 1");
    puts_(&b, "; }");
    assert_int_equal(sg_ptx_parse(b.p, b.n, NULL, &m, &err), SG_ELIMIT);
    assert_non_null(strstr(err.message, "operands"));
    free(b.p);
    assert_int_equal(sg_ptx_parse(NULL, 4, NULL, &m, &err), SG_EINVAL);
}

/* Every prefix of a real module either parses or fails with a position. */
static void test_truncations(void **state)
{
    (void)state;
    const char *names[] = {"sample_stencil.sm90.ptx", "syntax_zoo.ptx", "triton_poi_fused.ptx"};
    for (int k = 0; k < 3; k++) {
        size_t len;
        char *text = read_fixture(names[k], &len);
        uint32_t ok = 0, bad = 0;
        for (size_t cut = 0; cut < len; cut += 1 + cut % 13) {
            char *copy = malloc(cut ? cut : 1); /* exactly cut bytes: overreads show under ASan */
            memcpy(copy, text, cut);
            sg_ptx_module_t *m = NULL;
            sg_ptx_error_t err;
            int rc = sg_ptx_parse(copy, cut, NULL, &m, &err);
            if (rc == SG_OK) {
                ok++;
                sg_ptx_module_free(m);
            } else {
                bad++;
                assert_int_equal(rc, SG_EFORMAT);
                assert_true(err.message[0] != '\0');
            }
            free(copy);
        }
        assert_true(bad > 0);
        assert_true(ok > 0); /* cuts between functions are valid modules */
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opcode_table),   cmocka_unit_test(test_fork_join),
        cmocka_unit_test(test_triton),         cmocka_unit_test(test_cupy),
        cmocka_unit_test(test_zoo),            cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_register_names), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),         cmocka_unit_test(test_truncations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
