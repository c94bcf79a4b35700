/* test_sass.c: the SASS access analysis (code/sass.h).
 *
 * Always (no nvdisasm needed): the listing parser and the dataflow on the
 * committed nvdisasm output of tests/data/sass/kernels.cu (sm_90, sm_80),
 * checked fact by fact and against expected_text_sm*.txt; byte extents; bad
 * listings; bad cubins; a missing, failing, hanging or babbling disassembler
 * (fake ones written by the test).
 *
 * `test_sass --nvdisasm` (ctest sass.nvdisasm, exit 77 = skipped when no
 * nvdisasm is found): the committed cubins of every arch through the real
 * disassembler, against expected_sm*.txt, and the cache.
 *
 * The facts in the expected-file format come from code/sass_facts.h, which
 * tools/sass_dump also prints (make_fixtures.sh, tests/gpu/sass_torch.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "code/access.h"
#include "code/fatbin.h"
#include "code/sass.h"
#include "code/sass_facts.h"
#include "graph/graph.h"

#define DATA SGCAP_SOURCE_DIR "/tests/data/sass/"

/* ---- the expected-file format and files (code/sass_facts.h) ------------------ */

static char *dump_all(const sg_sass_kernel_t *k, uint32_t n)
{
    char *s = sg_sass_facts_string(k, n);
    assert_non_null(s);
    return s;
}

/* Analyse every function of an ELF-mode listing. */
static sg_sass_kernel_t *analyse_listing(const char *text, size_t len, uint32_t arch, uint32_t *n)
{
    sg_sass_kernel_t *k = NULL;
    return sg_sass_analyze_listing(text, len, arch, &k, n, NULL, 0) ? NULL : k;
}

/* Every kernel of a cubin (those whose name contains match, if given). */
static sg_sass_kernel_t *analyse_cubin_file(const char *path, uint32_t *n,
                                            const sg_sass_options_t *opt, const char *match)
{
    sg_sass_kernel_t *k = NULL;
    return sg_sass_analyze_cubin_file(path, opt, match, &k, n, NULL, 0) ? NULL : k;
}

static void free_kernels(sg_sass_kernel_t *k, uint32_t n)
{
    sg_sass_kernels_free(k, n);
}

static const sg_sass_kernel_t *find(const sg_sass_kernel_t *k, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (k[i].name && strstr(k[i].name, name))
            return &k[i];
    return NULL;
}

static void check_against(const char *got, const char *expected_file)
{
    size_t len;
    char *want = sg_sass_read_file(expected_file, &len);
    assert_non_null(want);
    if (strcmp(got, want)) {
        fprintf(stderr, "facts differ from %s; got:\n%s\n", expected_file, got);
        fail();
    }
    free(want);
}

/* ---- the sm_90 listing, fact by fact -------------------------------------------- */

typedef struct {
    sg_sass_kernel_t *k;
    uint32_t n;
} fixture_t;

static int setup_sm90(void **state)
{
    size_t len;
    char *text = sg_sass_read_file(DATA "kernels_sm90.sass", &len);
    if (!text)
        return -1;
    fixture_t *f = calloc(1, sizeof *f);
    f->k = analyse_listing(text, len, 90, &f->n);
    free(text);
    *state = f;
    return f->k ? 0 : -1;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    free_kernels(f->k, f->n);
    free(f);
    return 0;
}

static void test_plain_index(void **state)
{
    fixture_t *f = *state;
    const sg_sass_kernel_t *k = find(f->k, f->n, "add_scalar");
    assert_non_null(k);
    assert_int_equal(k->status, SG_SASS_ANALYSED);
    assert_int_equal(k->param_base, 0x210);
    assert_true(k->certain);
    assert_int_equal(k->n_accesses, 3);
    /* two loads of a[i], b[i], one store of out[i] */
    int loads = 0, stores = 0;
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        const sg_sass_access_t *a = &k->accesses[i];
        assert_int_equal(a->width, 4);
        assert_true(a->index_known);
        assert_int_equal(a->stride, 4);
        assert_int_equal(a->offset, 0);
        assert_true(a->guarded);
        assert_int_equal(a->guard_param, 0x18);
        assert_int_equal(a->guard_width, 4);
        assert_false(a->guard_unsigned);
        if (a->kind == SG_SASS_STORE) {
            stores++;
            assert_int_equal(a->base, 0x0);
        } else {
            loads++;
            assert_true(a->base == 0x8 || a->base == 0x10);
        }
    }
    assert_int_equal(loads, 2);
    assert_int_equal(stores, 1);
    assert_int_equal(k->n_params, 3);
    assert_int_equal(k->params[0].offset, 0);
    assert_int_equal(k->params[0].uses, SG_SASS_STORE);
    assert_int_equal(k->params[1].uses, SG_SASS_LOAD);

    /* n = 1000 over 4 x 256 threads: out[0..1000) exactly */
    uint8_t params[28] = {0};
    uint64_t out = 0x7f0000000000ull, a = 0x7f0000100000ull, b = 0x7f0000200000ull;
    int32_t n = 1000;
    memcpy(params, &out, 8);
    memcpy(params + 8, &a, 8);
    memcpy(params + 16, &b, 8);
    memcpy(params + 24, &n, 4);
    uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        sg_sass_extent_t e;
        assert_int_equal(sg_sass_access_extent(&k->accesses[i], params, sizeof params, grid, block, &e), 0);
        uint64_t base = k->accesses[i].base == 0 ? out : k->accesses[i].base == 8 ? a : b;
        assert_int_equal(e.lo, base);
        assert_int_equal(e.hi, base + 4000);
        assert_true(e.exact);
        assert_true(e.dense);
    }
    /* a grid smaller than n: the grid bounds it */
    grid[0] = 2;
    sg_sass_extent_t e;
    assert_int_equal(sg_sass_access_extent(&k->accesses[0], params, sizeof params, grid, block, &e), 0);
    assert_int_equal(e.hi - e.lo, 2048);
    /* n <= 0: nothing */
    n = -5;
    memcpy(params + 24, &n, 4);
    assert_int_equal(sg_sass_access_extent(&k->accesses[0], params, sizeof params, grid, block, &e), 0);
    assert_int_equal(e.hi, e.lo);
    /* parameters too short: no answer, also when only the bound is cut off */
    assert_int_equal(sg_sass_access_extent(&k->accesses[0], params, 4, grid, block, &e), SG_ENOENT);
    assert_int_equal(sg_sass_access_extent(&k->accesses[0], params, 24, grid, block, &e), SG_ENOENT);
}

static void test_vectorized(void **state)
{
    fixture_t *f = *state;
    const sg_sass_kernel_t *k = find(f->k, f->n, "vectorized_elementwise_kernel");
    assert_non_null(k);
    assert_true(k->certain);
    /* float4 path + 4 scalar tail elements, each a load and a store */
    assert_int_equal(k->n_accesses, 10);
    const sg_sass_access_t *v = NULL;
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        assert_true(k->accesses[i].index_known);
        assert_true(k->accesses[i].guarded);
        assert_true(k->accesses[i].conditions_exact);
        assert_int_equal(k->accesses[i].guard_param, 0); /* int N, the first parameter */
        /* Array<char*,2> at offset 8: data[0] stored, data[1] loaded */
        assert_int_equal(k->accesses[i].base, k->accesses[i].kind == SG_SASS_STORE ? 8 : 16);
        if (k->accesses[i].width == 16 && k->accesses[i].kind == SG_SASS_STORE)
            v = &k->accesses[i];
    }
    assert_non_null(v);
    /* N = 1000, 2 blocks of 128: block 0 takes the float4 path (512 floats),
     * block 1 the scalar tail */
    uint8_t params[24] = {0};
    int32_t N = 1000;
    uint64_t o = 0x10000, in = 0x20000;
    memcpy(params, &N, 4);
    memcpy(params + 8, &o, 8);
    memcpy(params + 16, &in, 8);
    uint32_t grid[3] = {2, 1, 1}, block[3] = {128, 1, 1};
    sg_sass_extent_t e;
    assert_int_equal(sg_sass_access_extent(v, params, sizeof params, grid, block, &e), 0);
    assert_int_equal(e.lo, o);
    assert_int_equal(e.hi, o + 2048);
    assert_true(e.exact);
    assert_true(e.dense);
    /* block 1 takes the scalar tail: element 512 + tid + 128k while < N */
    int tails = 0;
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        const sg_sass_access_t *t = &k->accesses[i];
        if (t->width != 4 || t->kind != SG_SASS_STORE)
            continue;
        assert_true(t->conditions_exact);
        assert_int_equal(t->n_conds, 2);
        int64_t c = 0; /* the element offset 128k, in bytes */
        for (uint32_t j = 0; j < t->index.n; j++)
            if (t->index.t[j].a == SG_SASS_ATOM_NONE)
                c = t->index.t[j].coef;
        assert_int_equal(sg_sass_access_extent(t, params, sizeof params, grid, block, &e), 0);
        uint64_t lo = o + 2048 + (uint64_t)c, hi = lo + 512;
        if (hi > o + 4000)
            hi = o + 4000; /* N = 1000 floats */
        assert_int_equal(e.lo, lo);
        assert_int_equal(e.hi, hi);
        assert_true(e.exact);
        assert_true(e.dense);
        tails++;
    }
    assert_int_equal(tails, 4);
    /* N = 100: no block is full, the float4 store does not run */
    N = 100;
    memcpy(params, &N, 4);
    assert_int_equal(sg_sass_access_extent(v, params, sizeof params, grid, block, &e), 0);
    assert_int_equal(e.lo, e.hi);
    assert_int_equal(k->n_params, 2);
    assert_int_equal(k->params[0].offset, 8);
    assert_int_equal(k->params[0].uses, SG_SASS_STORE);
    assert_int_equal(k->params[1].offset, 16);
    assert_int_equal(k->params[1].uses, SG_SASS_LOAD);
}

static void test_unknowns(void **state)
{
    fixture_t *f = *state;
    /* gather: out[i] = in[idx[i]]: base known, index from memory */
    const sg_sass_kernel_t *k = find(f->k, f->n, "gather");
    assert_non_null(k);
    assert_true(k->certain);
    int from_mem = 0;
    for (uint32_t i = 0; i < k->n_accesses; i++)
        if (!k->accesses[i].index_known) {
            from_mem++;
            assert_int_equal(k->accesses[i].base, 0x8);
            assert_non_null(strstr(k->accesses[i].reason, "loaded from memory"));
        }
    assert_int_equal(from_mem, 1);

    /* a pointer loaded from memory: the store is not attributed */
    k = find(f->k, f->n, "ptr_from_mem");
    assert_non_null(k);
    assert_false(k->certain);
    assert_non_null(strstr(k->uncertain_reason, "unattributed"));
    assert_int_equal(k->n_params, 1);
    assert_int_equal(k->params[0].uses, SG_SASS_LOAD);

    /* histo: the atomic's base is the bins pointer */
    k = find(f->k, f->n, "histo");
    assert_true(k->certain);
    bool atomic = false;
    for (uint32_t i = 0; i < k->n_accesses; i++)
        if (k->accesses[i].kind == SG_SASS_ATOMIC) {
            atomic = true;
            assert_int_equal(k->accesses[i].base, 0);
            assert_false(k->accesses[i].index_known);
        }
    assert_true(atomic);

    /* reduce_sum: atomicAdd(out, ...) at exactly P[0] */
    k = find(f->k, f->n, "reduce_sum");
    for (uint32_t i = 0; i < k->n_accesses; i++)
        if (k->accesses[i].kind == SG_SASS_ATOMIC) {
            assert_int_equal(k->accesses[i].base, 0);
            assert_true(k->accesses[i].index_known);
            assert_int_equal(k->accesses[i].index.n, 0);
        }

    /* grid-stride loop, 64-bit index, unrolled by four after a remainder
     * loop whose count comes from the 64-bit division (sass_div.c): every
     * access 8*(gid + k*ntid.x*nctaid.x) plus its unrolled copy's offset,
     * its pass k bounded by a condition on the bound P[0x10] */
    k = find(f->k, f->n, "grid_stride");
    assert_true(k->certain);
    assert_int_equal(k->n_accesses, 10);
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        const sg_sass_access_t *a = &k->accesses[i];
        assert_int_equal(a->base, a->kind == SG_SASS_STORE ? 0 : 8);
        if (!a->index_known) fail_msg("grid_stride 0x%x: %s", a->pc, a->reason);
        assert_false(a->scaled);
        int64_t grid_k = 0;
        for (uint32_t t = 0; t < a->index.n; t++)
            if (a->index.t[t].a == SG_SASS_GRID_K) grid_k = a->index.t[t].coef;
        assert_int_equal(grid_k, 8);
        bool bounded = false;
        for (uint32_t c = 0; c < a->n_conds; c++)
            for (uint32_t t = 0; t < a->conds[c].lhs.n; t++)
                bounded |= a->conds[c].lhs.t[t].a == SG_SASS_GRID_K && a->conds[c].param == 0x10 &&
                           a->conds[c].op == SG_SASS_LT;
        assert_true(bounded);
    }

    /* one of two pointers: both are store candidates, nothing certain */
    k = find(f->k, f->n, "select_ptr");
    assert_false(k->certain);
    assert_int_equal(k->n_params, 2);
    assert_int_equal(k->params[0].uses, SG_SASS_STORE);
    assert_int_equal(k->params[1].uses, SG_SASS_STORE);
    assert_int_equal(k->params[0].base_uses, 0);
}

static void test_expected_text(void **state)
{
    (void)state;
    static const struct {
        const char *listing, *expected;
        uint32_t arch;
    } cases[] = {
        {DATA "kernels_sm90.sass", DATA "expected_text_sm90.txt", 90},
        {DATA "kernels_sm80.sass", DATA "expected_text_sm80.txt", 80},
        {DATA "cupy_sm90.sass", DATA "expected_text_cupy_sm90.txt", 90},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len;
        char *text = sg_sass_read_file(cases[c].listing, &len);
        assert_non_null(text);
        uint32_t n;
        sg_sass_kernel_t *k = analyse_listing(text, len, cases[c].arch, &n);
        assert_non_null(k);
        assert_true(n >= 6);
        char *got = dump_all(k, n);
        check_against(got, cases[c].expected);
        free(got);
        free_kernels(k, n);
        free(text);
    }
}

/* ---- the parser on bad and odd text ------------------------------------------------ */

static void test_parse_odd(void **state)
{
    (void)state;
    sg_sass_listing_t l;
    char err[128];
    assert_int_equal(sg_sass_parse("", 0, &l, err, sizeof err), 0);
    assert_int_equal(l.n_insns, 0);
    sg_sass_listing_free(&l);
    assert_int_equal(sg_sass_parse(NULL, 5, &l, err, sizeof err), SG_EINVAL);

    const char *t =
        "garbage line\n"
        "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
        "        /*0010*/   { IADD3 R0, R1, 0x1, RZ ;\n"
        "        /*0020*/     MOV R2, R0 }\n"
        "        /*0030*/               @!P0 BRA 0x10 ;\n"
        "        /*0040*/                   STG.E desc[UR4][R2.64+0x10], R0 ;\n"
        "        /*0050*/                   FOO R0, ??? weird ;\n"
        "        /*0060*/                   @Q1 MOV R0 ;\n"
        "        /*zz*/ EXIT ;\n"
        "        /*0070*/                   LDG.E.128 R4, [R2.U32+UR4+-0x8] ;\n"
        "        /*0080*/                   EXIT ;\n";
    assert_int_equal(sg_sass_parse(t, strlen(t), &l, err, sizeof err), 0);
    assert_int_equal(l.n_insns, 9);
    assert_string_equal(l.insns[1].op, "IADD3");
    assert_string_equal(l.insns[2].op, "MOV");
    assert_int_equal(l.insns[3].guard, 0);
    assert_true(l.insns[3].guard_neg);
    assert_int_equal(l.insns[3].ops[0].kind, SG_SASS_OP_IMM);
    assert_int_equal(l.insns[3].ops[0].imm, 0x10);
    const sg_sass_operand_t *m = &l.insns[4].ops[0];
    assert_int_equal(m->kind, SG_SASS_OP_MEM);
    assert_int_equal(m->reg, 2);
    assert_true(m->wide);
    assert_int_equal(m->imm, 0x10);
    assert_int_equal(l.insns[5].ops[1].kind, SG_SASS_OP_OTHER);
    assert_string_equal(l.insns[6].op, "?"); /* a guard it cannot read */
    m = &l.insns[7].ops[1];
    assert_int_equal(m->kind, SG_SASS_OP_MEM);
    assert_true(m->u32);
    assert_int_equal(m->reg2, 4);
    assert_true(m->reg2_uniform);
    assert_int_equal(m->imm, -8);
    /* the analysis survives the unknown instruction and reports the store */
    sg_sass_target_t tg = {.arch = 90};
    sg_sass_kernel_t k;
    assert_int_equal(sg_sass_analyze(&l, 0, l.n_insns, 0, "odd", &tg, &k), 0);
    assert_int_equal(k.status, SG_SASS_ANALYSED);
    assert_int_equal(k.n_accesses, 2);
    assert_int_equal(k.accesses[0].kind, SG_SASS_STORE);
    assert_int_equal(k.accesses[0].base, -1);
    assert_false(k.certain);
    sg_sass_kernel_free(&k);
    /* an unknown arch has no parameter base */
    tg.arch = 50;
    assert_int_equal(sg_sass_analyze(&l, 0, l.n_insns, 0, "odd", &tg, &k), 0);
    assert_int_equal(k.status, SG_SASS_REJECTED);
    sg_sass_kernel_free(&k);
    /* a range outside the listing */
    tg.arch = 90;
    assert_int_equal(sg_sass_analyze(&l, 5, 100, 0, "odd", &tg, &k), SG_EINVAL);
    sg_sass_kernel_free(&k);
    sg_sass_listing_free(&l);

    /* pcs that go backwards are refused, not analysed */
    const char *back = "/*0010*/ EXIT ;\n/*0000*/ EXIT ;\n";
    assert_int_equal(sg_sass_parse(back, strlen(back), &l, err, sizeof err), 0);
    assert_int_equal(sg_sass_analyze(&l, 0, l.n_insns, 0, NULL, &tg, &k), 0);
    assert_int_equal(k.status, SG_SASS_REJECTED);
    sg_sass_kernel_free(&k);
    sg_sass_listing_free(&l);

    /* an indirect branch makes the kernel uncertain; the code after it is
     * still analysed (from an all-unknown state) */
    const char *ind = "/*0000*/ BRX R4 -0x10 ;\n/*0010*/ STG.E [R2.64], R0 ;\n/*0020*/ EXIT ;\n";
    assert_int_equal(sg_sass_parse(ind, strlen(ind), &l, err, sizeof err), 0);
    assert_int_equal(sg_sass_analyze(&l, 0, l.n_insns, 0, NULL, &tg, &k), 0);
    assert_false(k.certain);
    assert_int_equal(k.n_accesses, 1);
    sg_sass_kernel_free(&k);
    sg_sass_listing_free(&l);
}

/* A 32-bit value carried into a pointer's high word is zero-extended: the
 * index is flagged index_32bit unless every 32-bit part is exact or the
 * low word of a 64-bit value (PyTorch's TrivialOffsetCalculator<1, uint32_t>). */
static void test_carry_extension(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        /* (tid + 512*ctaid) * P[0x10] in 32 bits, carried into P[0x8] */
        "/*0030*/ IMAD R0, R3, 0x200, R0 ;\n"
        "/*0040*/ IMAD R0, R0, c[0x0][0x220], RZ ;\n"
        "/*0050*/ IADD3 R4, P0, R0, R4, RZ ;\n"
        "/*0060*/ IMAD.X R5, RZ, RZ, R5, P0 ;\n",
        /* 4*(tid + 512*ctaid) in 32 bits, by LEA */
        "/*0030*/ IMAD R0, R3, 0x200, R0 ;\n"
        "/*0040*/ NOP ;\n"
        "/*0050*/ LEA R4, P0, R0, R4, 0x2 ;\n"
        "/*0060*/ LEA.HI.X R5, R0, R5, RZ, 0x2, P0 ;\n",
        /* exact: 512*ctaid + tid in 64 bits, shifted as a pair */
        "/*0030*/ IMAD.MOV.U32 R1, RZ, RZ, RZ ;\n"
        "/*0040*/ IMAD.WIDE.U32 R6, R3, 0x200, R0 ;\n"
        "/*0050*/ IMAD.SHL.U32 R8, R6, 0x4, RZ ;\n"
        "/*0060*/ SHF.L.U64.HI R9, R6, 0x2, R7 ;\n"
        "/*0070*/ IADD3 R4, P0, R8, R4, RZ ;\n"
        "/*0080*/ IADD3.X R5, R9, R5, RZ, P0, !PT ;\n",
    };
    const bool flagged[] = {true, true, false};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "/*0000*/ S2R R0, SR_TID.X ;\n"
                 "/*0010*/ S2R R3, SR_CTAID.X ;\n"
                 "/*0020*/ LDC.64 R4, c[0x0][0x218] ;\n"
                 "%s"
                 "/*0100*/ STG.E desc[UR4][R4.64], R0 ;\n"
                 "/*0110*/ EXIT ;\n",
                 shapes[i]);
        sg_sass_listing_t l;
        char err[128];
        assert_int_equal(sg_sass_parse(text, strlen(text), &l, err, sizeof err), 0);
        sg_sass_target_t tg = {.arch = 90};
        sg_sass_kernel_t k;
        assert_int_equal(sg_sass_analyze(&l, 0, l.n_insns, 0, "carry", &tg, &k), 0);
        assert_int_equal(k.n_accesses, 1);
        const sg_sass_access_t *a = &k.accesses[0];
        if (!a->index_known || a->base != 8 || a->index_32bit != flagged[i])
            fail_msg("shape %zu: known %d base %d 32-bit %d (%s)", i, a->index_known, a->base,
                     a->index_32bit, a->reason);
        assert_true(a->scaled == (i == 0));
        sg_sass_kernel_free(&k);
        sg_sass_listing_free(&l);
    }
}

/* ---- cubins and the disassembler, without nvdisasm -------------------------------------- */

static char tmpdir[256];

static const char *fake_tool(const char *name, const char *body)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_sass_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_bad_cubins_and_tools(void **state)
{
    (void)state;
    size_t len;
    uint8_t *cubin = (uint8_t *)sg_sass_read_file(DATA "kernels_sm90.cubin", &len);
    assert_non_null(cubin);
    const char *names[] = {"add_scalar", "no_such_kernel"};
    sg_sass_kernel_t k[2];

    /* garbage and truncation: a reason per kernel, no disassembler run */
    uint8_t garbage[64];
    memset(garbage, 0x5a, sizeof garbage);
    assert_int_equal(sg_sass_analyze_cubin(garbage, sizeof garbage, names, 2, NULL, k), 0);
    assert_int_equal(k[0].status, SG_SASS_BAD_CUBIN);
    assert_non_null(strstr(k[0].reason, "not a cubin"));
    sg_sass_kernel_free(&k[0]);
    sg_sass_kernel_free(&k[1]);
    assert_int_equal(sg_sass_analyze_cubin(cubin, 200, names, 2, NULL, k), 0);
    assert_true(k[0].status == SG_SASS_BAD_CUBIN || k[0].status == SG_SASS_NO_KERNEL);
    sg_sass_kernel_free(&k[0]);
    sg_sass_kernel_free(&k[1]);

    /* no disassembler */
    sg_sass_options_t opt = {.nvdisasm = "/nonexistent/nvdisasm"};
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 2, &opt, k), 0);
    assert_int_equal(k[0].status, SG_SASS_NO_DISASSEMBLER);
    assert_non_null(strstr(k[0].reason, "no disassembler"));
    assert_int_equal(k[1].status, SG_SASS_NO_KERNEL);
    sg_sass_kernel_free(&k[0]);
    sg_sass_kernel_free(&k[1]);
    setenv("SGCAP_NVDISASM", "/nonexistent/nvdisasm", 1);
    char path[256];
    assert_int_equal(sg_sass_find_disassembler(path, sizeof path), SG_ENOENT);
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 1, NULL, k), 0);
    assert_int_equal(k[0].status, SG_SASS_NO_DISASSEMBLER);
    sg_sass_kernel_free(&k[0]);

    /* it fails with a message */
    opt.nvdisasm = fake_tool("fail", "echo 'nvdisasm fatal   : bad input' >&2\necho 'more' >&2\nexit 1");
    setenv("SGCAP_NVDISASM", opt.nvdisasm, 1);
    assert_int_equal(sg_sass_find_disassembler(path, sizeof path), 0);
    assert_string_equal(path, opt.nvdisasm);
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 1, &opt, k), 0);
    assert_int_equal(k[0].status, SG_SASS_REJECTED);
    assert_non_null(strstr(k[0].reason, "nvdisasm rejected the cubin (nvdisasm fatal   : bad input)"));
    sg_sass_kernel_free(&k[0]);

    /* it hangs: killed at the timeout */
    opt.nvdisasm = fake_tool("hang", "exec sleep 30");
    opt.timeout_ms = 300;
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 1, &opt, k), 0);
    assert_int_equal(k[0].status, SG_SASS_REJECTED);
    assert_non_null(strstr(k[0].reason, "timed out"));
    sg_sass_kernel_free(&k[0]);

    /* it babbles: over the output cap, or nothing that is code */
    opt.nvdisasm = fake_tool("babble", "yes 'blah blah'");
    opt.timeout_ms = 10000;
    opt.max_output = 1 << 20;
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 1, &opt, k), 0);
    assert_int_equal(k[0].status, SG_SASS_REJECTED);
    assert_non_null(strstr(k[0].reason, "more than"));
    sg_sass_kernel_free(&k[0]);
    opt.nvdisasm = fake_tool("prose", "echo 'this is not a listing'");
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 1, &opt, k), 0);
    assert_int_equal(k[0].status, SG_SASS_REJECTED);
    assert_non_null(strstr(k[0].reason, "does not cover"));
    sg_sass_kernel_free(&k[0]);
    /* it prints nothing and succeeds */
    opt.nvdisasm = fake_tool("silent", "exit 0");
    assert_int_equal(sg_sass_analyze_cubin(cubin, len, names, 1, &opt, k), 0);
    assert_int_equal(k[0].status, SG_SASS_REJECTED);
    sg_sass_kernel_free(&k[0]);
    unsetenv("SGCAP_NVDISASM");
    free(cubin);
}

/* The cubin the driver would load: exact arch (an sm_90a build on sm_90 too),
 * else the highest same-major one below, never another major. multi.fatbin
 * is built by tests/fatbin/fatbin.cmake: sm_75, sm_90a and sm_100 ELF
 * entries beside PTX. */
static void test_pick_cubin(void **state)
{
    (void)state;
    size_t len;
    char *b = sg_sass_read_file(SGCAP_BINARY_DIR "/tests/fatbin-data/multi.fatbin", &len);
    assert_non_null(b);
    sg_fatbin_t fb;
    char err[128];
    assert_int_equal(sg_fatbin_parse(b, len, 0, &fb, err, sizeof err), 0);
    static const struct {
        uint32_t device, arch;
        int rc;
    } cases[] = {{75, 75, 0}, {90, 90, 0}, {100, 100, 0}, {103, 100, 0},
                 {86, 0, SG_ENOENT}, {120, 0, SG_ENOENT}, {89, 0, SG_ENOENT}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t e = SG_NONE;
        assert_int_equal(sg_sass_pick_cubin(&fb, cases[i].device, &e), cases[i].rc);
        if (cases[i].rc == 0) {
            assert_int_equal(fb.entries[e].kind, SG_FATBIN_ENTRY_ELF);
            assert_int_equal(fb.entries[e].arch, cases[i].arch);
        }
    }
    assert_int_equal(sg_sass_pick_cubin(NULL, 90, NULL), SG_EINVAL);
    sg_fatbin_free(&fb);
    free(b);
}

/* ---- with the real disassembler --------------------------------------------------------- */

static const uint32_t archs[] = {75, 80, 86, 89, 90, 100, 120};

static void test_cubins(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        char cubin[512], expected[512];
        snprintf(cubin, sizeof cubin, DATA "kernels_sm%u.cubin", archs[i]);
        snprintf(expected, sizeof expected, DATA "expected_sm%u.txt", archs[i]);
        uint32_t n;
        sg_sass_kernel_t *k = analyse_cubin_file(cubin, &n, NULL, NULL);
        assert_non_null(k);
        assert_true(n >= 12);
        for (uint32_t j = 0; j < n; j++) {
            assert_int_equal(k[j].status, SG_SASS_ANALYSED);
            assert_int_equal(k[j].arch, archs[i]);
            assert_int_equal(k[j].param_base, sg_sass_default_param_base(archs[i]));
        }
        const sg_sass_kernel_t *a = find(k, n, "add_scalar");
        assert_true(a && a->certain && a->n_accesses == 3 && a->accesses[2].stride == 4 &&
                    a->accesses[2].guard_param == 0x18);
        char *got = dump_all(k, n);
        check_against(got, expected);
        free_kernels(k, n);
        /* the same facts when the batch is split over several nvdisasm runs */
        sg_sass_options_t opt = {.jobs = 5};
        k = analyse_cubin_file(cubin, &n, &opt, NULL);
        char *split = dump_all(k, n);
        assert_string_equal(split, got);
        free(split);
        free(got);
        free_kernels(k, n);
    }
}

static void test_cache(void **state)
{
    (void)state;
    size_t len;
    uint8_t *cubin = (uint8_t *)sg_sass_read_file(DATA "kernels_sm90.cubin", &len);
    sg_sass_cache_t *c = sg_sass_cache_new(NULL);
    const char *names[] = {"add_scalar", "gather", "histo", "add_scalar"};
    assert_int_equal(sg_sass_cache_prefetch(c, cubin, len, names, 4), 0);
    uint32_t runs, kernels;
    sg_sass_cache_stats(c, &runs, &kernels);
    assert_int_equal(runs, 1);
    assert_int_equal(kernels, 3);
    const sg_sass_kernel_t *k;
    assert_int_equal(sg_sass_cache_get(c, cubin, len, "gather", &k), 0);
    assert_string_equal(k->name, "gather");
    assert_int_equal(k->status, SG_SASS_ANALYSED);
    sg_sass_cache_stats(c, &runs, NULL);
    assert_int_equal(runs, 1); /* a hit */
    assert_int_equal(sg_sass_cache_get(c, cubin, len, "two_d", &k), 0);
    sg_sass_cache_stats(c, &runs, &kernels);
    assert_int_equal(runs, 2);
    assert_int_equal(kernels, 4);
    /* another cubin with the same kernel name is another entry */
    cubin[len - 1] ^= 1;
    assert_int_equal(sg_sass_cache_get(c, cubin, len, "gather", &k), 0);
    sg_sass_cache_stats(c, &runs, NULL);
    assert_int_equal(runs, 3);
    sg_sass_cache_free(c);
    free(cubin);
}

/* Kernels of several cubins (two sm_90 images, one sm_80, one that is not
 * a cubin) in one batch: one nvdisasm run per arch, counted by a wrapper
 * around the real tool, and for each kernel the facts one cubin at a time
 * gives. */
static void test_batch_images(void **state)
{
    (void)state;
    char real[4096];
    assert_int_equal(sg_sass_find_disassembler(real, sizeof real), 0);
    size_t l90, l80;
    uint8_t *c90 = (uint8_t *)sg_sass_read_file(DATA "kernels_sm90.cubin", &l90);
    uint8_t *c80 = (uint8_t *)sg_sass_read_file(DATA "kernels_sm80.cubin", &l80);
    assert_non_null(c90);
    assert_non_null(c80);
    uint8_t *other = malloc(l90); /* another image with the same bytes */
    assert_non_null(other);
    memcpy(other, c90, l90);
    uint8_t garbage[64] = {0x7f, 'E', 'L', 'F'};
    char count[512], body[5000];
    snprintf(count, sizeof count, "%s/runs", tmpdir);
    snprintf(body, sizeof body, "echo run >> '%s'\nexec '%s' \"$@\"", count, real);
    sg_sass_options_t opt = {.nvdisasm = fake_tool("counting_nvdisasm", body), .jobs = 1};
    const sg_sass_request_t req[] = {
        {c90, l90, "add_scalar"}, {c80, l80, "gather"},   {other, l90, "histo"},
        {garbage, sizeof garbage, "add_scalar"},          {c90, l90, "gather"},
        {c80, l80, "add_scalar"}, {c90, l90, "no_such_kernel"},
    };
    enum { N = sizeof req / sizeof req[0] };
    sg_sass_kernel_t got[N];
    assert_int_equal(sg_sass_analyze_requests(req, N, &opt, got), 0);
    char *runs = sg_sass_read_file(count, &(size_t){0});
    assert_non_null(runs);
    assert_string_equal(runs, "run\nrun\n"); /* sm_90 and sm_80: one run each */
    free(runs);
    assert_int_equal(got[3].status, SG_SASS_BAD_CUBIN);
    assert_int_equal(got[6].status, SG_SASS_NO_KERNEL);
    for (uint32_t i = 0; i < N; i++) {
        if (i == 3 || i == 6) continue;
        assert_int_equal(got[i].status, SG_SASS_ANALYSED);
        sg_sass_kernel_t alone;
        assert_int_equal(sg_sass_analyze_cubin(req[i].cubin, req[i].n, &req[i].name, 1, NULL,
                                               &alone), 0);
        char *a = dump_all(&alone, 1), *b = dump_all(&got[i], 1);
        assert_string_equal(b, a);
        free(a);
        free(b);
        sg_sass_kernel_free(&alone);
    }
    for (uint32_t i = 0; i < N; i++) sg_sass_kernel_free(&got[i]);

    /* the cache: one batch for what it lacks, hits afterwards */
    sg_sass_cache_t *c = sg_sass_cache_new(&opt);
    assert_int_equal(sg_sass_cache_prefetch_requests(c, req, N), 0);
    uint32_t nr, nk;
    sg_sass_cache_stats(c, &nr, &nk);
    assert_int_equal(nr, 1);
    assert_int_equal(nk, 7); /* failures are kept too: asked again, no new run */
    const sg_sass_kernel_t *k;
    assert_int_equal(sg_sass_cache_get(c, c80, l80, "gather", &k), 0);
    assert_int_equal(k->status, SG_SASS_ANALYSED);
    assert_int_equal(k->arch, 80);
    /* keyed by content: the first image's histo is the copy's */
    assert_int_equal(sg_sass_cache_get(c, c90, l90, "histo", &k), 0);
    assert_int_equal(k->status, SG_SASS_ANALYSED);
    assert_int_equal(sg_sass_cache_prefetch_requests(c, req, N), 0);
    sg_sass_cache_stats(c, &nr, &nk);
    assert_int_equal(nr, 1);
    assert_int_equal(nk, 7);
    sg_sass_cache_free(c);
    free(c90);
    free(c80);
    free(other);
}

/* ---- CuPy's grid-stride loops against the PTX path ------------------------------------- */

/* The kernels of tests/data/sass/cupy_sm90.* (tests/data/ptx/nvrtc_cupy.py,
 * one NVRTC source as PTX and as an sm_90 cubin): how each must come out of
 * the SASS path. KNOWN: every site known (or never run), the same ranges as
 * the PTX path for each pointer word and kind; UNKNOWN: the sites through
 * the arrays unknown. */
enum { SASS_KNOWN, SASS_UNKNOWN };
static const struct {
    const char *name;
    int sass;
    bool ptx_known;
    bool one_site; /* one site per pointer word and kind (no unrolled copies) */
} cupy_kernels[] = {
    /* 64-bit index, unrolled by four after a remainder loop (the division) */
    {"cupy_axpb", SASS_KNOWN, true, false},
    /* 32-bit index, one loop */
    {"cupy_add32", SASS_KNOWN, true, true},
    /* CuPy 14's shape: `#pragma unroll 1`, address data + stride * i in
     * 32-bit arithmetic */
    {"cupy14_square", SASS_KNOWN, true, true},
    {"cupy14_add", SASS_KNOWN, true, true},
    /* sinf: its table (__cudart_i2opi_f, a module symbol the relocations of
     * constant bank 4 name) read in a loop inside the grid-stride loop */
    {"cupy14_sin", SASS_KNOWN, true, false},
    /* 64-bit indexing: the stride's product is built from 32-bit halves,
     * which the SASS path does not model (the PTX path knows it) */
    {"cupy14_axpb64", SASS_UNKNOWN, true, false},
    /* a strided view: i % shape, unknown to the PTX path too */
    {"cupy_copy_strided", SASS_UNKNOWN, false, false},
    /* not CuPy's loop: a blockDim-only step, a bound loaded from memory */
    {"loop_block_step", SASS_UNKNOWN, false, false},
    {"loop_loaded_bound", SASS_UNKNOWN, false, false},
};

/* Launches: n below the grid, not a multiple of the stride, one element,
 * many passes, and one past 2^32 elements (the 64-bit division's call
 * path; only for a 64-bit index). */
static const struct {
    uint32_t grid, block;
    uint64_t n;
    bool wide_only;
} cupy_launches[] = {{4, 128, 100000, false}, {4, 128, 100, false},   {4, 128, 1000, false},
                     {4, 128, 1, false},      {1, 32, 1000, false},    {80, 256, 123457, false},
                     {1024, 1024, 200000000, false}, {1024, 1024, 5000000000ull, true}};

/* Parameter bytes in CuPy's layout: CArray {data, size, shape, strides}
 * (32 bytes; data 0x10000000 * (param + 1), a float's stride), CIndexer
 * {size, shape[, index]} (16 or 24 bytes), a pointer (8, to the loaded
 * bound). */
static void cupy_params(const sg_access_kernel_t *pk, uint64_t n, uint8_t *bytes, size_t cap)
{
    memset(bytes, 0, cap);
    assert_true(pk->params_size <= cap);
    for (uint32_t i = 0; i < pk->n_params; i++) {
        uint64_t w[4] = {0x10000000ull * (i + 1), n, n, 4};
        if (pk->param_sizes[i] == 16 || pk->param_sizes[i] == 24) w[0] = n;
        if (pk->param_sizes[i] == 8 || pk->param_sizes[i] >= 16)
            memcpy(bytes + pk->param_offsets[i], w, pk->param_sizes[i] < 32 ? pk->param_sizes[i] : 32);
    }
}

/* The hull of the known ranges of k's sites with the base (pointer word or
 * module symbol) and kind of site s (lo > hi: none). */
static void hull_of(const sg_access_kernel_t *k, const sg_access_eval_t *e, const sg_access_site_t *s,
                    uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (uint32_t j = 0; j < e->n_ranges; j++) {
        const sg_access_site_t *q = &k->sites[e->ranges[j].site];
        bool same = q->base_kind == s->base_kind &&
                    (q->base_kind == SG_ACCESS_BASE_SYMBOL ? !strcmp(q->base_symbol, s->base_symbol)
                                                           : q->base_param == s->base_param);
        if (!same || q->kind != s->kind || e->ranges[j].status != SG_ACCESS_ST_KNOWN)
            continue;
        if (e->ranges[j].lo < *lo) *lo = e->ranges[j].lo;
        if (e->ranges[j].hi > *hi) *hi = e->ranges[j].hi;
    }
}

/* One kernel's SASS facts against the PTX path's, at every launch. */
static void check_cupy_kernel(uint32_t t, const char *ptx, size_t lp, const sg_sass_kernel_t *sass)
{
    const char *name = cupy_kernels[t].name;
    sg_access_kernel_t pk, sk;
    memset(&pk, 0, sizeof pk);
    assert_int_equal(sg_access_analyze_text(ptx, lp, name, &pk), 0);
    assert_int_equal(pk.status, 0);
    assert_int_equal(sass->status, SG_SASS_ANALYSED);
    assert_int_equal(sg_access_from_sass(sass, pk.n_params, pk.param_offsets, pk.param_sizes,
                                         pk.params_size, &sk), 0);
    bool wide = strcmp(name, "cupy_axpb") == 0;
    for (size_t l = 0; l < sizeof cupy_launches / sizeof cupy_launches[0]; l++) {
        if (cupy_launches[l].wide_only && !wide) continue;
        uint8_t bytes[256];
        cupy_params(&pk, cupy_launches[l].n, bytes, sizeof bytes);
        sg_kernel_t node;
        memset(&node, 0, sizeof node);
        node.grid[0] = cupy_launches[l].grid;
        node.block[0] = cupy_launches[l].block;
        node.grid[1] = node.grid[2] = node.block[1] = node.block[2] = 1;
        node.param_bytes = bytes;
        node.params_size = pk.params_size;
        node.n_params = pk.n_params;
        node.param_offsets = pk.param_offsets;
        node.param_sizes = pk.param_sizes;
        sg_access_eval_t pe, se;
        assert_int_equal(sg_access_eval(&pk, &node, NULL, 0, &pe), 0);
        assert_int_equal(sg_access_eval(&sk, &node, NULL, 0, &se), 0);
        if (cupy_kernels[t].ptx_known && !pe.all_known)
            fail_msg("%s n=%llu: PTX not all known: %s", name, (unsigned long long)cupy_launches[l].n,
                     pe.reason);
        for (uint32_t i = 0; i < se.n_ranges; i++) {
            const sg_access_range_t *r = &se.ranges[i];
            const sg_access_site_t *s = &sk.sites[r->site];
            /* the pointer word is known (or the module symbol) */
            assert_true(s->base_kind == SG_ACCESS_BASE_PARAM || s->base_kind == SG_ACCESS_BASE_SYMBOL);
            bool array = s->param_index != SG_NONE && pk.param_sizes[s->param_index] == 32;
            if (cupy_kernels[t].sass == SASS_UNKNOWN) {
                /* never a range through the arrays (the loaded bound's own
                 * 8-byte load is known) */
                if (array && r->status != SG_ACCESS_ST_UNKNOWN)
                    fail_msg("%s: site %u (%s) known", name, i, s->detail);
                if (r->status == SG_ACCESS_ST_UNKNOWN) assert_true(s->detail[0] != 0);
                continue;
            }
            if (r->status == SG_ACCESS_ST_UNKNOWN)
                fail_msg("%s n=%llu grid %u: SASS site %u unknown: %s / %s", name,
                         (unsigned long long)cupy_launches[l].n, cupy_launches[l].grid, i, s->detail,
                         r->detail);
            /* within the PTX path's hull for its word and kind, and the
             * hulls equal: no byte more, none missing */
            uint64_t plo, phi, slo, shi;
            hull_of(&pk, &pe, s, &plo, &phi);
            hull_of(&sk, &se, s, &slo, &shi);
            if (r->status == SG_ACCESS_ST_KNOWN && (r->lo < plo || r->hi > phi))
                fail_msg("%s n=%llu: SASS site %u [%#llx, %#llx) outside the PTX hull [%#llx, %#llx)",
                         name, (unsigned long long)cupy_launches[l].n, i, (unsigned long long)r->lo,
                         (unsigned long long)r->hi, (unsigned long long)plo, (unsigned long long)phi);
            if (slo != plo || shi != phi)
                fail_msg("%s n=%llu grid %u: word %u kind %u: SASS [%#llx, %#llx), PTX [%#llx, %#llx)",
                         name, (unsigned long long)cupy_launches[l].n, cupy_launches[l].grid,
                         s->base_param, s->kind, (unsigned long long)slo, (unsigned long long)shi,
                         (unsigned long long)plo, (unsigned long long)phi);
            /* one site per word and kind: as exact and dense as the PTX path's */
            for (uint32_t j = 0; cupy_kernels[t].one_site && j < pe.n_ranges; j++) {
                const sg_access_range_t *q = &pe.ranges[j];
                const sg_access_site_t *qs = &pk.sites[q->site];
                if (qs->base_param == s->base_param && qs->kind == s->kind &&
                    (q->exact != r->exact || q->dense != r->dense))
                    fail_msg("%s n=%llu grid %u: site %u exact %d dense %d, PTX %d %d", name,
                             (unsigned long long)cupy_launches[l].n, cupy_launches[l].grid, i,
                             r->exact, r->dense, q->exact, q->dense);
            }
        }
        sg_access_eval_free(&pe);
        sg_access_eval_free(&se);
    }
    sg_access_kernel_free(&pk);
    sg_access_kernel_free(&sk);
}

/* The listing of the loop kernels (no nvdisasm needed), against the PTX. */
static void test_cupy_listing(void **state)
{
    (void)state;
    size_t ll, lp;
    char *text = sg_sass_read_file(DATA "cupy_sm90.sass", &ll);
    char *ptx = sg_sass_read_file(DATA "cupy_sm90.ptx", &lp);
    assert_non_null(text);
    assert_non_null(ptx);
    uint32_t n;
    sg_sass_kernel_t *k = analyse_listing(text, ll, 90, &n);
    assert_non_null(k);
    uint32_t seen = 0;
    for (uint32_t t = 0; t < sizeof cupy_kernels / sizeof cupy_kernels[0]; t++) {
        const sg_sass_kernel_t *s = find(k, n, cupy_kernels[t].name);
        if (!s) continue; /* not in the listing */
        seen++;
        check_cupy_kernel(t, ptx, lp, s);
    }
    assert_int_equal(seen, 6);
    /* CuPy 14's addressing: P[data] + P[stride]*(gid + k*grid), the stride
     * word CArray.strides_[0] */
    const sg_sass_kernel_t *sq = find(k, n, "cupy14_square");
    assert_int_equal(sq->n_accesses, 2);
    for (uint32_t i = 0; i < 2; i++) {
        assert_true(sq->accesses[i].scaled);
        assert_int_equal(sq->accesses[i].scale_param, sq->accesses[i].base + 0x18);
        assert_int_equal(sq->accesses[i].scale_width, 4);
        assert_true(sq->accesses[i].index_32bit);
        assert_true(sq->accesses[i].conditions_exact);
    }
    free_kernels(k, n);
    free(text);
    free(ptx);
}

/* cupy_axpb's listing with one piece of the argument wrong: the sites that
 * rested on it must become unknown (pcs: the remainder loop's sites below
 * 0x600, the unrolled loop's above). */
static void test_cupy_mutations(void **state)
{
    (void)state;
    size_t len;
    char *text = sg_sass_read_file(DATA "cupy_sm90.sass", &len);
    assert_non_null(text);
    static const struct {
        const char *what, *from, *to;
        int which; /* the occurrence in cupy_axpb (0 first) */
        bool remainder_known, unrolled_known;
        uint32_t store_only; /* nonzero: only the sites of this kind go unknown */
    } cases[] = {
        {"as compiled", "", "", 0, true, true, 0},
        /* the unrolled loop's index steps by 3 grids, its pointers by 4 */
        {"unroll step", "IADD3 R5, P0, P1, R2, R5, R2 ;", "IADD3 R5, P0, P1, R2, R5, RZ ;", 1,
         true, false, 0},
        /* the x pointer steps by the high word of 4 grids */
        {"pointer step", "IADD3 R19, P1, R10, R4, RZ ;", "IADD3 R19, P1, R10, R6, RZ ;", 0, true,
         false, SG_ACCESS_LOAD},
        /* the remainder mod 2, not the unroll factor 4 */
        {"remainder mask", "LOP3.LUT R16, R16, 0x3, RZ, 0xc0, !PT ;",
         "LOP3.LUT R16, R16, 0x1, RZ, 0xc0, !PT ;", 0, true, false, 0},
        /* the remainder of q + 2 passes, not of the trip count q + 1 */
        {"remainder count", "VIADD R16, R8.reuse, 0x1 ;", "VIADD R16, R8.reuse, 0x2 ;", 0, false,
         false, 0},
        /* the unrolled loop exits on x.size, not on the CIndexer's n */
        {"exit bound", "ULDC.64 UR6, c[0x0][0x258] ;", "ULDC.64 UR6, c[0x0][0x218] ;", 0, true,
         false, 0},
        /* the inline division's divisor is another register */
        {"divisor", "I2F.U32.RP R4, R2 ;", "I2F.U32.RP R4, R3 ;", 0, false, false, 0},
    };
    char *sec = strstr(text, ".text.cupy_axpb:");
    assert_non_null(sec);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *m = malloc(len + 64);
        assert_non_null(m);
        memcpy(m, text, len + 1);
        if (cases[c].from[0]) {
            char *at = m + (sec - text);
            for (int w = 0; w <= cases[c].which; w++) {
                at = strstr(at + (w ? 1 : 0), cases[c].from);
                if (!at) fail_msg("%s: '%s' not in cupy_axpb", cases[c].what, cases[c].from);
            }
            size_t fl = strlen(cases[c].from), tl = strlen(cases[c].to);
            memmove(at + tl, at + fl, strlen(at + fl) + 1);
            memcpy(at, cases[c].to, tl);
        }
        uint32_t n;
        sg_sass_kernel_t *k = analyse_listing(m, strlen(m), 90, &n);
        assert_non_null(k);
        const sg_sass_kernel_t *a = find(k, n, "cupy_axpb");
        assert_non_null(a);
        assert_int_equal(a->n_accesses, 10);
        for (uint32_t i = 0; i < a->n_accesses; i++) {
            const sg_sass_access_t *s = &a->accesses[i];
            bool remainder = s->pc < 0x600;
            bool want = remainder ? cases[c].remainder_known : cases[c].unrolled_known;
            if (cases[c].store_only && !remainder && s->kind != cases[c].store_only) want = true;
            if (s->index_known != want)
                fail_msg("%s: 0x%x %s: index %s (%s)", cases[c].what, s->pc, s->op,
                         s->index_known ? "known" : "unknown", s->reason);
            if (!s->index_known) assert_true(s->reason[0] != 0);
            assert_true(s->base >= 0); /* the pointer word stays attributed */
        }
        free_kernels(k, n);
        free(m);
    }
    free(text);
}

/* The cubin through nvdisasm: the same, every kernel of it. */
static void test_cupy_sass_vs_ptx(void **state)
{
    (void)state;
    size_t lc, lp;
    uint8_t *cubin = (uint8_t *)sg_sass_read_file(DATA "cupy_sm90.cubin", &lc);
    char *ptx = sg_sass_read_file(DATA "cupy_sm90.ptx", &lp);
    assert_non_null(cubin);
    assert_non_null(ptx);
    for (uint32_t t = 0; t < sizeof cupy_kernels / sizeof cupy_kernels[0]; t++) {
        sg_sass_kernel_t sass;
        assert_int_equal(sg_sass_analyze_cubin(cubin, lc, &cupy_kernels[t].name, 1, NULL, &sass), 0);
        check_cupy_kernel(t, ptx, lp, &sass);
        sg_sass_kernel_free(&sass);
    }
    free(cubin);
    free(ptx);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--nvdisasm")) {
        char path[4096];
        if (sg_sass_find_disassembler(path, sizeof path) != 0) {
            fprintf(stderr, "SKIP: no nvdisasm found (set SGCAP_NVDISASM, put it on PATH, or "
                            "pip install nvidia-cuda-nvdisasm)\n");
            return 77;
        }
        fprintf(stderr, "using %s\n", path);
        const struct CMUnitTest real[] = {
            cmocka_unit_test(test_cubins), cmocka_unit_test(test_cache),
            cmocka_unit_test_setup_teardown(test_batch_images, setup_tmp, teardown_tmp),
            cmocka_unit_test(test_cupy_sass_vs_ptx)};
        return cmocka_run_group_tests_name("sass_nvdisasm", real, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_index, setup_sm90, teardown),
        cmocka_unit_test_setup_teardown(test_vectorized, setup_sm90, teardown),
        cmocka_unit_test_setup_teardown(test_unknowns, setup_sm90, teardown),
        cmocka_unit_test(test_cupy_listing),
        cmocka_unit_test(test_cupy_mutations),
        cmocka_unit_test(test_expected_text),
        cmocka_unit_test(test_parse_odd),
        cmocka_unit_test(test_carry_extension),
        cmocka_unit_test(test_pick_cubin),
        cmocka_unit_test_setup_teardown(test_bad_cubins_and_tools, setup_tmp, teardown_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
