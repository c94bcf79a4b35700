/* test_fuse.c: chain fusion on the CPU (rewrite/fuse.h, the `fuse` pass):
 * the stage analysis on the fusion benchmark's PTX (sm_90 and nvcc's
 * default compute_75 target) and on kernels that must be refused; the
 * plan's slots, forwarding, preloads, dead writes and its split at a
 * stencil; the generated CUDA C compiled by NVRTC into PTX and a cubin
 * (no GPU needed); and the pass end to end on a model graph: the fused
 * node, sunk frees, the fusion record, the report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "code/access.h"
#include "code/ptx.h"
#include "graph/graph.h"
#include "rewrite/fuse.h"
#include "graph/bundle.h"
#include "graph/views.h"
#include "rewrite/pass.h"

static char *read_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/fuse/%s", SGCAP_SOURCE_DIR, name);
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
    if (rc) fail_msg("%s: %s", name, err.message);
    free(text);
    return m;
}

static const char *const chain_names[8] = {
    "_Z10st_affine1PKfPfm", "_Z10st_square1PKfPfm", "_Z7st_sqrtPKfPfm",   "_Z8st_clampPKfPfm",
    "_Z10st_affine2PKfPfm", "_Z10st_square2PKfPfm", "_Z6st_sinPKfPfm",    "_Z10st_affine3PKfPfm"};

#define N_EL (1u << 24)
#define BUF(i) (0x7f0000000000ull + (uint64_t)(i) * 0x4000000ull)

/* A graph like fusion_chain's capture: buffers b0..b8 of N_EL floats, node
 * k reads b<k> and writes b<k+1> with (in, out, n) parameters. dead: the
 * intermediates are graph allocations (kind graph_alloc, alloc_node set)
 * made by mem_alloc nodes at the head of the stream and freed by a
 * mem_free node right after their last reader, on the same stream, the
 * shape `fusion_chain --mode dead` has when captured on the H200 (the
 * capture numbers the buffers in another order, which nothing here
 * depends on). */
static sg_graph_t *chain_graph(const char *const *names, uint32_t n, bool dead, uint32_t block)
{
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
    uint32_t img;
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_PTX, "0123456789abcdef", 1, &img), SG_OK);
    for (uint32_t i = 0; i <= n; i++) {
        bool ga = dead && i > 0 && i < n;
        assert_int_equal(sg_graph_add_buffer(g, ga ? SG_BUFFER_GRAPH_ALLOC : SG_BUFFER_DEVICE, BUF(i),
                                             (uint64_t)N_EL * 4, NULL),
                         SG_OK);
    }
    uint64_t seq = 0;
    sg_node_id_t prev = SG_NONE;
    sg_node_id_t allocs[16];
    if (dead)
        for (uint32_t i = 1; i < n; i++) {
            sg_node_id_t a;
            assert_int_equal(sg_graph_add_node(g, SG_NODE_MEM_ALLOC, 0, seq++, &a), SG_OK);
            sg_node_t *x = sg_graph_node(g, a);
            x->u.mem.buffer = i;
            x->u.mem.address = BUF(i);
            x->u.mem.bytes = (uint64_t)N_EL * 4;
            sg_graph_buffer(g, i)->alloc_node = a;
            if (prev != SG_NONE) assert_int_equal(sg_graph_add_edge(g, prev, a, SG_EDGE_STREAM, SG_NONE, NULL), SG_OK);
            prev = a;
            allocs[i] = a;
        }
    for (uint32_t k = 0; k < n; k++) {
        sg_node_id_t id;
        assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, 0, seq++, &id), SG_OK);
        assert_int_equal(sg_node_set_kernel_name(g, id, names[k]), SG_OK);
        uint8_t bytes[24];
        uint64_t in = BUF(k), out = BUF(k + 1), cnt = N_EL;
        memcpy(bytes, &in, 8);
        memcpy(bytes + 8, &out, 8);
        memcpy(bytes + 16, &cnt, 8);
        uint32_t offs[3] = {0, 8, 16}, sizes[3] = {8, 8, 8};
        assert_int_equal(sg_node_set_kernel_params(g, id, 3, offs, sizes, bytes, 24), SG_OK);
        sg_kernel_t *kk = &sg_graph_node(g, id)->u.kernel;
        kk->image = img;
        kk->grid[0] = N_EL / block;
        kk->block[0] = block;
        kk->grid[1] = kk->grid[2] = kk->block[1] = kk->block[2] = 1;
        assert_int_equal(sg_node_add_access(g, id, k, 0, (uint64_t)N_EL * 4, SG_ACCESS_READ), SG_OK);
        /* as the capture records them (capture/build.c): a pointer-to-const
         * parameter is read, any other pointer may be read and written */
        assert_int_equal(sg_node_add_access(g, id, k + 1, 0, (uint64_t)N_EL * 4, SG_ACCESS_UNKNOWN), SG_OK);
        if (prev != SG_NONE) assert_int_equal(sg_graph_add_edge(g, prev, id, SG_EDGE_STREAM, SG_NONE, NULL), SG_OK);
        prev = id;
        if (dead && k >= 1) {
            sg_node_id_t f;
            assert_int_equal(sg_graph_add_node(g, SG_NODE_MEM_FREE, 0, seq++, &f), SG_OK);
            sg_node_t *x = sg_graph_node(g, f);
            x->u.mem.buffer = k;
            x->u.mem.address = BUF(k);
            assert_int_equal(sg_graph_add_edge(g, prev, f, SG_EDGE_STREAM, SG_NONE, NULL), SG_OK);
            prev = f;
        }
    }
    (void)allocs;
    return g;
}

static const sg_node_t *kernel_node(const sg_graph_t *g, uint32_t k)
{
    uint32_t seen = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (x && x->type == SG_NODE_KERNEL && seen++ == k) return x;
    }
    fail_msg("no kernel %u", k);
    return NULL;
}

static void analyze_chain(const char *fixture, bool dead)
{
    sg_ptx_module_t *m = parse_fixture(fixture);
    sg_graph_t *g = chain_graph(chain_names, 8, dead, 256);
    sg_fz_stage_t st[8];
    for (uint32_t k = 0; k < 8; k++) {
        assert_int_equal(sg_fz_stage_analyze(m, kernel_node(g, k), &st[k]), SG_OK);
        if (!st[k].ok) fail_msg("stage %u: %s", k, st[k].reason);
        /* one load of in[t], one store of out[t], guarded by t < n */
        assert_int_equal(st[k].n_sites, 2);
        uint32_t ld = st[k].sites[0].store ? 1 : 0, sti = 1 - ld;
        assert_int_equal(st[k].sites[ld].addr0, BUF(k));
        assert_int_equal(st[k].sites[ld].stride, 4);
        assert_true(st[k].sites[ld].lowerable);
        assert_int_equal(st[k].sites[sti].addr0, BUF(k + 1));
        assert_int_equal(st[k].sites[sti].hi, N_EL);
        assert_int_equal(st[k].sites[sti].hi_rt.param_off, 16); /* n, the third parameter */
        assert_int_equal(st[k].sites[ld].base_param, 0);
        assert_int_equal(st[k].sites[sti].base_param, 8);
    }
    /* x*x stores an un-rounded multiply: forwarded through a rounded copy */
    assert_int_not_equal(st[1].sites[st[1].sites[0].store ? 0 : 1].rn_stmt, SG_NONE);
    /* sinf reads its slow-path table: copied as a read-only module variable */
    assert_int_equal(st[6].n_module_vars, 1);
    assert_string_equal(m->vars[st[6].module_vars[0]].name, "__cudart_i2opi_f");

    sg_fz_plan_t plan;
    assert_int_equal(sg_fz_plan(g, st, 8, &plan), SG_OK);
    assert_int_equal(plan.split_at, SG_NONE);
    assert_int_equal(plan.n_stages, 8);
    assert_int_equal(plan.n_slots, 9);
    for (uint32_t k = 0; k < 9; k++) {
        assert_true(plan.slots[k].lifted);
        assert_int_equal(plan.slots[k].addr0, BUF(k));
        /* intermediates: written by stage k-1, forwarded to stage k */
        assert_int_equal(plan.slots[k].loaded, k < 8);
        assert_int_equal(plan.slots[k].stored, k > 0);
        assert_int_equal(plan.slots[k].dead, dead && k > 0 && k < 8);
    }
    assert_true(plan.slots[0].preload);
    assert_int_equal(plan.slots[0].preload_n, N_EL);
    /* only the input is read from memory; every other read is forwarded */
    for (uint32_t k = 1; k < 9; k++) assert_false(plan.slots[k].preload);
    for (uint32_t k = 0; k < 8; k++) {
        uint32_t ld = st[k].sites[0].store ? 1 : 0;
        assert_true(st[k].sites[1 - ld].must); /* every store runs for each t < n */
        assert_true(plan.site_known[plan.site_base[k] + ld]);
    }

    sg_fz_gen_options_t o;
    sg_fz_gen_options_default(&o);
    sg_fz_source_t src;
    char err[1024] = "";
    int rc = sg_fz_generate(&plan, &o, &src, err, sizeof err);
    if (rc) fail_msg("generate: %s", err);
    assert_int_equal(src.block, 128);
    assert_int_equal(src.grid, N_EL / 1024 /* 128 threads of 8 */);
    assert_int_equal(src.n_params, 8);
    assert_int_equal(src.params_size, 8 * 32);
    /* the write-backs, two float4 each: 8 live outputs, or only the last one when dead */
    uint32_t stores = 0;
    for (const char *p = src.source; (p = strstr(p, "*(float4 *)(a")); p++) stores++;
    assert_int_equal(stores, dead ? 2 : 16);
    assert_non_null(strstr(src.source, "mul.rn.f32"));
    assert_null(strstr(src.source, "@!%%_s")); /* no fallback load left */
    assert_non_null(strstr(src.source, "__ldg((const float4 *)(a0"));
    sg_fz_binary_t bin;
    rc = sg_fz_compile(&src, 90, &bin, err, sizeof err);
    if (rc == SG_EUNSUPPORTED && strstr(err, "not available")) {
        print_message("NVRTC not available here: %s\n", err);
    } else {
        if (rc) {
            FILE *f = fopen("/tmp/sgcap_fused_failed.cu", "w");
            if (f) {
                fputs(src.source, f);
                fclose(f);
            }
            fail_msg("compile: %s", err);
        }
        assert_non_null(strstr(bin.ptx, src.name));
        assert_true(bin.cubin_len > 100);
        assert_memory_equal(bin.cubin, "\x7f" "ELF", 4);
        assert_true(bin.registers > 0);
        assert_int_equal(bin.spill_bytes, 0);
        /* 16-byte accesses in the fused kernel */
        assert_non_null(strstr(bin.ptx, "ld.global.nc.v4.f32"));
        if (!dead) assert_non_null(strstr(bin.ptx, "st.global.v4.f32"));
        if (getenv("SGCAP_TEST_DUMP")) {
            FILE *df = fopen(getenv("SGCAP_TEST_DUMP"), "w");
            if (df) fprintf(df, "%s\n/* ---- PTX ---- */\n%s", src.source, bin.ptx), fclose(df);
        }
        /* again: from the cache */
        sg_fz_binary_t again;
        assert_int_equal(sg_fz_compile(&src, 90, &again, err, sizeof err), SG_OK);
        assert_true(again.cached);
        assert_int_equal(again.cubin_len, bin.cubin_len);
        sg_fz_binary_free(&again);
        sg_fz_binary_free(&bin);
    }
    sg_fz_source_free(&src);
    sg_fz_plan_free(&plan);
    for (uint32_t k = 0; k < 8; k++) sg_fz_stage_free(&st[k]);
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
}

static void test_chain_sm90_live(void **state)
{
    (void)state;
    analyze_chain("fusion_chain.sm90.ptx", false);
}

static void test_chain_sm75_dead(void **state)
{
    (void)state;
    analyze_chain("fusion_chain.sm75.ptx", true);
}

static void test_refusals(void **state)
{
    (void)state;
    sg_ptx_module_t *m = parse_fixture("refusals.sm90.ptx");
    const char *names[] = {"_Z10rf_stencilPKfPfm", "_Z9rf_sharedPKfPfm", "_Z8rf_scalePKfPfm",
                           "_Z9rf_atomicPKfPfm", "_Z7rf_exitPKfPfm"};
    sg_graph_t *g = chain_graph(names, 5, false, 256);
    sg_fz_stage_t st[5];
    for (uint32_t k = 0; k < 5; k++)
        assert_int_equal(sg_fz_stage_analyze(m, kernel_node(g, k), &st[k]), SG_OK);
    assert_true(st[0].ok); /* a stencil is thread-affine on its own ... */
    assert_true(st[1].ok); /* shared memory and a barrier: tier 2 */
    assert_true(st[1].cta);
    assert_true(st[2].ok);
    assert_false(st[3].ok);
    assert_non_null(strstr(st[3].reason, "atomic"));
    assert_false(st[4].ok);
    assert_non_null(strstr(st[4].reason, "exit"));
    /* ... but a stencil after a stage writing what it reads is split off */
    sg_fz_stage_t pair[2] = {st[2], st[0]};
    /* scale writes b3 at t; make the stencil read b3 (its parameters say b0) */
    sg_node_t *sn = (sg_node_t *)kernel_node(g, 0);
    uint64_t b3 = BUF(3);
    memcpy(sn->u.kernel.param_bytes, &b3, 8);
    sg_fz_stage_t re;
    assert_int_equal(sg_fz_stage_analyze(m, sn, &re), SG_OK);
    assert_true(re.ok);
    pair[1] = re;
    sg_fz_plan_t plan;
    assert_int_equal(sg_fz_plan(g, pair, 2, &plan), SG_OK);
    assert_int_equal(plan.split_at, 1);
    assert_non_null(strstr(plan.split_reason, "not thread-local"));
    assert_int_equal(plan.n_stages, 1);
    sg_fz_plan_free(&plan);
    sg_fz_stage_free(&re);
    for (uint32_t k = 0; k < 5; k++) sg_fz_stage_free(&st[k]);
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
}

/* A load with no width the lifter can use (an untyped ld.global: the
 * parser takes "cnotf32" as a modifier; found by fuzz_lift, whose promise is
 * a width of 1..256 for every site of an accepted stage) is refused with
 * its reason. */
static void test_untyped_access(void **state)
{
    (void)state;
    size_t len;
    char *text = read_fixture("fusion_chain.sm90.ptx", &len);
    const char *was = "ld.global.nc.f32", *now = "ld.global.cnotf32";
    char *at = strstr(text, was);
    assert_non_null(at);
    char *mut = malloc(len + 16);
    assert_non_null(mut);
    size_t head = (size_t)(at - text);
    memcpy(mut, text, head);
    memcpy(mut + head, now, strlen(now));
    memcpy(mut + head + strlen(now), at + strlen(was), len - head - strlen(was) + 1);
    size_t mlen = len - strlen(was) + strlen(now);
    free(text);
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    if (sg_ptx_parse(mut, mlen, NULL, &m, &err)) fail_msg("%s", err.message);
    free(mut);
    sg_graph_t *g = chain_graph(chain_names, 1, false, 256);
    sg_fz_stage_t st;
    assert_int_equal(sg_fz_stage_analyze(m, kernel_node(g, 0), &st), SG_OK);
    assert_false(st.ok);
    if (!strstr(st.reason, "the lifter needs a width of 1 to 256")) fail_msg("%s", st.reason);
    sg_fz_stage_free(&st);
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
}

/* The fast path (fuse.h): which guarded branches a stage's fast-path copy
 * leaves out. fp_guard is the bounds check alone (left out); fp_diamond
 * branches on the loaded value around two ways of computing what it then
 * stores (kept: its target reaches the store); fp_after stores, then
 * branches on the value around a second store (kept: the sure store ran
 * before it). With n below the launch's threads, fast_n is n and the
 * general path stays for the tail threads. */
#define FP_HEAD(name)                                                                              \
    ".visible .entry " name "(.param .u64 " name "_p0, .param .u64 " name "_p1, .param .u64 " name \
    "_p2)\n{\n .reg .pred %p<3>; .reg .f32 %f<4>; .reg .b32 %r<4>; .reg .b64 %rd<12>;\n"          \
    " ld.param.u64 %rd2, [" name "_p0];\n ld.param.u64 %rd3, [" name "_p1];\n"                     \
    " ld.param.u64 %rd4, [" name "_p2];\n mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %ntid.x;\n"        \
    " mul.wide.u32 %rd5, %r1, %r2;\n mov.u32 %r3, %tid.x;\n cvt.u64.u32 %rd6, %r3;\n"              \
    " add.s64 %rd1, %rd5, %rd6;\n setp.ge.u64 %p1, %rd1, %rd4;\n @%p1 bra $Ldone;\n"              \
    " cvta.to.global.u64 %rd7, %rd2;\n shl.b64 %rd8, %rd1, 2;\n add.s64 %rd9, %rd7, %rd8;\n"       \
    " ld.global.nc.f32 %f1, [%rd9];\n cvta.to.global.u64 %rd10, %rd3;\n add.s64 %rd11, %rd10, %rd8;\n"
static const char fast_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    FP_HEAD("fp_guard")
    " add.f32 %f2, %f1, 0f3F800000;\n st.global.f32 [%rd11], %f2;\n$Ldone:\n ret;\n}\n"
    FP_HEAD("fp_diamond")
    " setp.lt.f32 %p2, %f1, 0f00000000;\n @%p2 bra $Lneg;\n add.f32 %f2, %f1, %f1;\n"
    " bra.uni $Ljoin;\n$Lneg:\n neg.f32 %f2, %f1;\n$Ljoin:\n st.global.f32 [%rd11], %f2;\n"
    "$Ldone:\n ret;\n}\n"
    FP_HEAD("fp_after")
    " add.f32 %f2, %f1, 0f3F800000;\n st.global.f32 [%rd11], %f2;\n"
    " setp.gt.f32 %p2, %f1, 0f42C80000;\n @%p2 bra $Ldone;\n st.global.f32 [%rd11], %f1;\n"
    "$Ldone:\n ret;\n}\n";

/* The never-taken marks of plan stage s, as "1" per guarded branch in
 * statement order ("10": the first left out, the second kept). */
static void marks_of(const sg_fz_plan_t *plan, uint32_t s, char *out, size_t n)
{
    const sg_ptx_func_t *f = plan->stages[s].func;
    size_t k = 0;
    for (uint32_t i = 0; i < f->n_stmts && k + 1 < n; i++) {
        const sg_ptx_stmt_t *x = &f->stmts[i];
        if (x->kind != SG_PTX_STMT_INSTR || x->u.ins.op != SG_PTX_OP_BRA || x->u.ins.guard == SG_PTX_NONE)
            continue;
        out[k++] = plan->never_taken[plan->stmt_base[s] + i] ? '1' : '0';
    }
    out[k] = '\0';
}

static void test_fast_path(void **state)
{
    (void)state;
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t perr;
    if (sg_ptx_parse(fast_ptx, strlen(fast_ptx), NULL, &m, &perr)) fail_msg("%s", perr.message);
    const char *names[] = {"fp_guard", "fp_diamond", "fp_after"};
    const char *want[] = {"1", "10", "10"};
    sg_graph_t *g = chain_graph(names, 3, false, 256);
    for (uint32_t k = 0; k < 3; k++) {
        sg_fz_stage_t st;
        assert_int_equal(sg_fz_stage_analyze(m, kernel_node(g, k), &st), SG_OK);
        if (!st.ok) fail_msg("%s: %s", names[k], st.reason);
        sg_fz_plan_t plan;
        assert_int_equal(sg_fz_plan(g, &st, 1, &plan), SG_OK);
        assert_int_equal(plan.fast_n, N_EL);
        char got[16];
        marks_of(&plan, 0, got, sizeof got);
        if (strcmp(got, want[k])) fail_msg("%s: never-taken marks %s, want %s", names[k], got, want[k]);
        sg_fz_gen_options_t o;
        sg_fz_gen_options_default(&o);
        sg_fz_source_t src;
        char err[1024];
        int rc = sg_fz_generate(&plan, &o, &src, err, sizeof err);
        if (rc) fail_msg("%s: %s", names[k], err);
        /* every thread is fast: no general path, no per-element guard */
        assert_null(strstr(src.source, "< n_el) {"));
        assert_non_null(strstr(src.source, "fast path"));
        sg_fz_source_free(&src);
        sg_fz_plan_free(&plan);
        sg_fz_stage_free(&st);
    }
    /* n = N_EL - 100 of N_EL threads: the last threads take the general path */
    sg_node_t *x = (sg_node_t *)kernel_node(g, 0);
    uint64_t n = N_EL - 100;
    memcpy(x->u.kernel.param_bytes + 16, &n, 8);
    sg_fz_stage_t st;
    assert_int_equal(sg_fz_stage_analyze(m, x, &st), SG_OK);
    assert_true(st.ok);
    sg_fz_plan_t plan;
    assert_int_equal(sg_fz_plan(g, &st, 1, &plan), SG_OK);
    assert_int_equal(plan.fast_n, N_EL - 100);
    sg_fz_gen_options_t o;
    sg_fz_gen_options_default(&o);
    o.block = 128;
    o.elements = 8;
    sg_fz_source_t src;
    char err[1024];
    int rc = sg_fz_generate(&plan, &o, &src, err, sizeof err);
    if (rc) fail_msg("%s", err);
    assert_int_equal(src.block, 128);
    assert_int_equal(src.grid, N_EL / 8 / 128);
    char fast[64];
    snprintf(fast, sizeof fast, "if (t7 < %lluull) {", (unsigned long long)(N_EL - 100));
    assert_non_null(strstr(src.source, fast));
    assert_non_null(strstr(src.source, "if (t7 < n_el) {")); /* the general path */
    /* the thread's second chunk of 4 starts a block's 4*128 elements on */
    assert_non_null(strstr(src.source, "const unsigned long long t4 = eb + 512ull;"));
    assert_non_null(strstr(src.source, "const unsigned long long t3 = eb + 3ull;"));
    sg_fz_binary_t bin;
    rc = sg_fz_compile(&src, 90, &bin, err, sizeof err);
    if (rc != SG_EUNSUPPORTED || !strstr(err, "not available")) {
        if (rc) fail_msg("%s", err);
        assert_int_equal(bin.spill_bytes, 0);
        sg_fz_binary_free(&bin);
    }
    sg_fz_source_free(&src);
    sg_fz_plan_free(&plan);
    sg_fz_stage_free(&st);
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
}

/* Tier 2: a shared-memory stage between two pointwise ones, and a stage
 * reading its block's elements in reverse (another thread of the same CTA
 * wrote them): one kernel with __syncthreads() between the stages, in the
 * original geometry. */
static void test_tier2(void **state)
{
    (void)state;
    sg_ptx_module_t *m = parse_fixture("refusals.sm90.ptx");
    const char *names[] = {"_Z8rf_scalePKfPfm", "_Z9rf_sharedPKfPfm", "_Z8rf_scalePKfPfm",
                           "_Z10rf_reversePKfPfm"};
    sg_graph_t *g = chain_graph(names, 4, false, 256);
    sg_fz_stage_t st[4];
    for (uint32_t k = 0; k < 4; k++) {
        assert_int_equal(sg_fz_stage_analyze(m, kernel_node(g, k), &st[k]), SG_OK);
        if (!st[k].ok) fail_msg("stage %u: %s", k, st[k].reason);
    }
    assert_false(st[0].cta);
    assert_true(st[1].cta);
    assert_true(st[3].cta); /* reads in[base + ntid - 1 - tid]: not a function of t */
    sg_fz_plan_t plan;
    assert_int_equal(sg_fz_plan(g, st, 4, &plan), SG_OK);
    if (plan.split_at != SG_NONE) fail_msg("%s", plan.split_reason);
    assert_true(plan.cta);
    assert_true(plan.real_mode);
    sg_fz_gen_options_t o;
    sg_fz_gen_options_default(&o);
    sg_fz_source_t src;
    char err[1024];
    int rc = sg_fz_generate(&plan, &o, &src, err, sizeof err);
    if (rc) fail_msg("%s", err);
    assert_int_equal(src.block, 256);
    assert_int_equal(src.grid, N_EL / 256);
    assert_non_null(strstr(src.source, "__syncthreads();"));
    assert_non_null(strstr(src.source, ".shared .align 4 .b8 _s1_ZZ9rf_sharedPKfPfmE4tile[1024]"));
    sg_fz_binary_t bin;
    rc = sg_fz_compile(&src, 90, &bin, err, sizeof err);
    if (rc != SG_EUNSUPPORTED || !strstr(err, "not available")) {
        if (rc) fail_msg("%s", err);
        assert_non_null(strstr(bin.ptx, "bar.sync"));
        sg_fz_binary_free(&bin);
    }
    sg_fz_source_free(&src);
    sg_fz_plan_free(&plan);
    /* the reverse read across a block edge is not CTA-local: shift it by
     * one element and the run splits there */
    sg_node_t *rn = (sg_node_t *)kernel_node(g, 3);
    uint64_t shifted = BUF(3) + 4;
    memcpy(rn->u.kernel.param_bytes, &shifted, 8);
    sg_fz_stage_t rs;
    assert_int_equal(sg_fz_stage_analyze(m, rn, &rs), SG_OK);
    sg_fz_stage_t run[4] = {st[0], st[1], st[2], rs};
    assert_int_equal(sg_fz_plan(g, run, 4, &plan), SG_OK);
    assert_int_equal(plan.split_at, 3);
    sg_fz_plan_free(&plan);
    sg_fz_stage_free(&rs);
    for (uint32_t k = 0; k < 4; k++) sg_fz_stage_free(&st[k]);
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
}

/* CuPy-style ElementwiseKernels (tests/data/ptx/cupy_elementwise.ptx: a
 * grid-stride loop over CArray structs passed by value): two axpb stages,
 * 4 iterations per thread. They fuse in the original geometry with every
 * access kept in memory (no lifting). */
static sg_node_id_t cupy_node(sg_graph_t *g, uint64_t seq, uint64_t in, uint64_t out, uint64_t n,
                              uint32_t grid, uint32_t block)
{
    sg_node_id_t id;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, 0, seq, &id), SG_OK);
    assert_int_equal(sg_node_set_kernel_name(g, id, "cupy_axpb"), SG_OK);
    uint8_t b[88];
    memset(b, 0, sizeof b);
    uint64_t st = 4;
    float a = 1.5f, c = 2.0f;
    memcpy(b, &in, 8), memcpy(b + 8, &n, 8), memcpy(b + 16, &n, 8), memcpy(b + 24, &st, 8);
    memcpy(b + 32, &a, 4), memcpy(b + 36, &c, 4);
    memcpy(b + 40, &out, 8), memcpy(b + 48, &n, 8), memcpy(b + 56, &n, 8), memcpy(b + 64, &st, 8);
    memcpy(b + 72, &n, 8), memcpy(b + 80, &n, 8);
    uint32_t offs[5] = {0, 32, 36, 40, 72}, sizes[5] = {32, 4, 4, 32, 16};
    assert_int_equal(sg_node_set_kernel_params(g, id, 5, offs, sizes, b, 88), SG_OK);
    sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
    k->grid[0] = grid;
    k->block[0] = block;
    k->grid[1] = k->grid[2] = k->block[1] = k->block[2] = 1;
    return id;
}

static void test_grid_stride(void **state)
{
    (void)state;
    size_t len;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/ptx/cupy_elementwise.ptx", SGCAP_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    rewind(f);
    char *text = malloc(len);
    assert_int_equal(fread(text, 1, len, f), len);
    fclose(f);
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t perr;
    assert_int_equal(sg_ptx_parse(text, len, NULL, &m, &perr), SG_OK);
    free(text);
    sg_graph_t *g = sg_graph_create();
    assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
    const uint64_t n = 32768;
    for (int i = 0; i < 3; i++)
        assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, BUF(i), n * 4, NULL), SG_OK);
    sg_node_id_t a = cupy_node(g, 0, BUF(0), BUF(1), n, 64, 128);
    sg_node_id_t b = cupy_node(g, 1, BUF(1), BUF(2), n, 64, 128);
    sg_fz_stage_t st[2];
    assert_int_equal(sg_fz_stage_analyze(m, sg_graph_node(g, a), &st[0]), SG_OK);
    assert_int_equal(sg_fz_stage_analyze(m, sg_graph_node(g, b), &st[1]), SG_OK);
    if (!st[0].ok) fail_msg("%s", st[0].reason);
    assert_true(st[1].ok);
    bool gs = false;
    for (uint32_t i = 0; i < st[0].n_sites; i++) gs |= st[0].sites[i].gs;
    assert_true(gs);
    sg_fz_plan_t plan;
    assert_int_equal(sg_fz_plan(g, st, 2, &plan), SG_OK);
    if (plan.split_at != SG_NONE) fail_msg("%s", plan.split_reason);
    assert_true(plan.real_mode);
    /* x, y, z: three slots, whatever the unrolling */
    assert_int_equal(plan.n_slots, 3);
    sg_fz_gen_options_t o;
    sg_fz_gen_options_default(&o);
    sg_fz_source_t src;
    char err[1024];
    assert_int_equal(sg_fz_generate(&plan, &o, &src, err, sizeof err), SG_OK);
    assert_int_equal(src.grid, 64);
    assert_int_equal(src.block, 128);
    sg_fz_binary_t bin;
    int rc = sg_fz_compile(&src, 90, &bin, err, sizeof err);
    if (rc != SG_EUNSUPPORTED || !strstr(err, "not available")) {
        if (rc) fail_msg("%s", err);
        sg_fz_binary_free(&bin);
    }
    /* a strided CArray: the stride is a struct member (a number here) */
    {
        sg_node_id_t cs;
        assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, 0, 9, &cs), SG_OK);
        assert_int_equal(sg_node_set_kernel_name(g, cs, "cupy_copy_strided"), SG_OK);
        uint8_t pb[80];
        memset(pb, 0, sizeof pb);
        uint64_t in = BUF(0), out = BUF(2), cnt = n / 2, s8 = 8;
        memcpy(pb, &in, 8), memcpy(pb + 8, &cnt, 8), memcpy(pb + 16, &cnt, 8), memcpy(pb + 24, &s8, 8);
        memcpy(pb + 32, &out, 8), memcpy(pb + 40, &cnt, 8), memcpy(pb + 48, &cnt, 8), memcpy(pb + 56, &s8, 8);
        memcpy(pb + 64, &cnt, 8), memcpy(pb + 72, &cnt, 8);
        assert_int_equal(sg_node_set_kernel_params(g, cs, 0, NULL, NULL, pb, 80), SG_OK);
        sg_kernel_t *kk = &sg_graph_node(g, cs)->u.kernel;
        kk->grid[0] = 64;
        kk->block[0] = 128;
        kk->grid[1] = kk->grid[2] = kk->block[1] = kk->block[2] = 1;
        sg_fz_stage_t cst;
        assert_int_equal(sg_fz_stage_analyze(m, sg_graph_node(g, cs), &cst), SG_OK);
        /* its index is i % shape: nothing proves that is i, so it is refused
         * (a contiguous CArray, above, is fine) */
        assert_false(cst.ok);
        if (!strstr(cst.reason, "load address: non-affine arithmetic")) fail_msg("%s", cst.reason);
        sg_fz_stage_free(&cst);
    }
    /* a stage reading y at another element than the one written: split */
    sg_node_id_t c = cupy_node(g, 2, BUF(1) + 4, BUF(0), n - 1, 64, 128);
    sg_fz_stage_t st2[2] = {st[0]};
    assert_int_equal(sg_fz_stage_analyze(m, sg_graph_node(g, c), &st2[1]), SG_OK);
    assert_true(st2[1].ok);
    sg_fz_plan_t p2;
    assert_int_equal(sg_fz_plan(g, st2, 2, &p2), SG_OK);
    assert_int_equal(p2.split_at, 1);
    sg_fz_plan_free(&p2);
    sg_fz_stage_free(&st2[1]);
    sg_fz_source_free(&src);
    sg_fz_plan_free(&plan);
    sg_fz_stage_free(&st[0]);
    sg_fz_stage_free(&st[1]);
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
}

/* The pass end to end: a bundle on disk with the chain's PTX as its code
 * image, rewritten with --passes fuse. */
static sg_graph_t *write_chain_bundle(const char *dir, const char *fixture, bool dead)
{
    size_t len;
    char *ptx = read_fixture(fixture, &len);
    sg_graph_t *g = chain_graph(chain_names, 8, dead, 256);
    sg_image_t *im = sg_graph_image(g, 0);
    im->file = strdup("code/chain.ptx");
    im->size = len;
    sg_bundle_hash(ptx, len, im->hash); /* images are checked against their hash */
    sg_bundle_blob_t blob = {.relpath = "code/chain.ptx", .data = ptx, .size = len};
    sg_diag_t d;
    assert_int_equal(sg_bundle_write(g, dir, &blob, 1, SG_BUNDLE_OVERWRITE, &d), SG_OK);
    free(ptx);
    return g;
}

/* What the fused kernel of the dead chain does, read back from its PTX
 * with the project's access analysis (code/access.h) and evaluated with the
 * fused node's parameters: its global accesses are one 16-byte load stream
 * of b0 and one 16-byte store stream of b8 (plus their scalar fallbacks
 * for a misaligned or partial group of four, in the same buffers, and
 * sinf's read-only table), and nothing reaches the seven intermediates. */
static void dead_kernel_streams(const sg_graph_t *g, const sg_node_t *fused,
                                const sg_rewrite_files_t *files)
{
    const sg_rewrite_file_t *ptx = NULL;
    for (size_t i = 0; i < files->n; i++)
        if (strstr(files->files[i].relpath, ".ptx")) ptx = &files->files[i];
    assert_non_null(ptx);
    sg_access_kernel_t k;
    assert_int_equal(sg_access_analyze_text(ptx->data, ptx->size, fused->u.kernel.name, &k), SG_OK);
    assert_int_equal(k.status, 0);
    sg_access_eval_t ev;
    assert_int_equal(sg_access_eval(&k, &fused->u.kernel, g->buffers, g->n_buffers, &ev), SG_OK);
    uint32_t v4_loads = 0, v4_stores = 0, v4_halves = 0, table = 0, scalar = 0;
    for (uint32_t i = 0; i < k.n_sites; i++) {
        const sg_access_site_t *x = &k.sites[i];
        const sg_access_range_t *r = &ev.ranges[i];
        if (x->base_kind == SG_ACCESS_BASE_SYMBOL) { /* sinf's __cudart_i2opi_f, copied */
            assert_int_equal(x->kind, SG_ACCESS_LOAD);
            table++;
            continue;
        }
        if (r->status != SG_ACCESS_ST_KNOWN)
            fail_msg("site %u (line %u): %s", i, x->line, r->detail[0] ? r->detail : x->detail);
        uint32_t want = x->kind == SG_ACCESS_LOAD ? 0 : 8;
        assert_true(x->kind == SG_ACCESS_LOAD || x->kind == SG_ACCESS_STORE);
        if (r->buffer != want)
            fail_msg("site %u (line %u, %s) reaches b%u", i, x->line, x->kind == SG_ACCESS_LOAD ? "load" : "store",
                     r->buffer);
        assert_true(r->lo >= BUF(want) && r->hi <= BUF(want) + (uint64_t)N_EL * 4);
        if (x->width == 16) {
            if (x->kind == SG_ACCESS_LOAD) v4_loads++;
            else v4_stores++;
            /* two coalesced streams: a block of 128 threads holds 1024
             * floats, thread tid 16 bytes at 16*tid of each 2048-byte half;
             * together they cover the whole buffer */
            assert_true(r->linear);
            assert_int_equal(r->coef[0], 16);   /* per tid.x */
            assert_int_equal(r->coef[3], 4096); /* per ctaid.x */
            uint64_t half = r->lo == BUF(want) ? 0 : 2048;
            assert_int_equal(r->lo, BUF(want) + half);
            assert_int_equal(r->hi, BUF(want) + (uint64_t)N_EL * 4 - 2048 + half);
            if (x->kind == SG_ACCESS_LOAD) v4_halves |= 1u << (half / 2048);
            else v4_halves |= 4u << (half / 2048);
        } else {
            assert_int_equal(x->width, 4);
            scalar++;
        }
    }
    assert_int_equal(v4_loads, 2);
    assert_int_equal(v4_stores, 2);
    assert_int_equal(v4_halves, 15); /* both halves loaded and stored */
    assert_int_equal(scalar, 16); /* eight loads and eight stores, for a partial group */
    assert_true(table >= 1);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

static void pass_end_to_end(bool dead)
{
    char dir[] = "/tmp/sgcap_test_fuse_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/in.sgraph", dir);
    sg_graph_t *g = write_chain_bundle(path, "fusion_chain.sm90.ptx", dead);
    uint32_t kernels_before = 0, frees = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        kernels_before += x && x->type == SG_NODE_KERNEL;
        frees += x && x->type == SG_NODE_MEM_FREE;
    }
    assert_int_equal(kernels_before, 8);
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    sg_rewrite_files_t files = {0};
    opt.bundle = path;
    opt.files = &files;
    const char *passes[] = {"control-deps", "fuse"};
    sg_report_t *rep = sg_report_create();
    int rc = sg_rewrite_run_opts(g, passes, 2, &opt, rep);
    if (rc) fail_msg("rewrite: %s\n%s", sg_strerror(rc), sg_report_text(rep));
    const char *t = sg_report_text(rep);
    if (getenv("SGCAP_TEST_REPORT")) fputs(t, stderr);
    if (strstr(t, "NVRTC is not available")) {
        print_message("NVRTC not available: skipping the pass checks\n");
    } else {
        if (!strstr(t, "fused n")) fail_msg("%s", t);
        assert_non_null(strstr(t, "verify: ok"));
        assert_non_null(strstr(t, "bytes moved: "));
        /* one kernel node left, the fused one, with the frees after it */
        uint32_t kernels = 0;
        const sg_node_t *fused = NULL;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node_t *x = sg_graph_node(g, i);
            if (x && x->type == SG_NODE_KERNEL) kernels++, fused = x;
        }
        assert_int_equal(kernels, 1);
        assert_true(fused->synthesized);
        assert_non_null(strstr(fused->u.kernel.name, "sgcap_fused_"));
        assert_int_equal(fused->u.kernel.grid[0], N_EL / 1024);
        assert_int_equal(fused->u.kernel.n_params, 8);
        const sg_fusion_t *rec = sg_graph_fusion(g, fused->id);
        assert_non_null(rec);
        assert_int_equal(rec->n_stages, 8);
        assert_int_equal(rec->tier, 1);
        assert_string_equal(rec->stages[6].kernel.name, chain_names[6]);
        assert_int_equal(rec->stages[3].param_base, 3 * 32);
        /* the stage's parameters are where the record says */
        assert_memory_equal(fused->u.kernel.param_bytes + rec->stages[5].param_base,
                            rec->stages[5].kernel.param_bytes, 24);
        assert_int_equal(rec->n_dropped, dead ? 7 : 0);
        assert_int_equal(rec->cubin_image, fused->u.kernel.image);
        const sg_image_t *ci = sg_graph_image(g, rec->cubin_image);
        assert_int_equal(ci->kind, SG_IMAGE_CUBIN);
        assert_int_equal(files.n, 2);
        if (dead) {
            /* Nothing touches the intermediates any more: their mem_alloc
             * and mem_free nodes are gone with the stages, and the graph is
             * the one fused kernel, reading b0 and writing b8. */
            assert_int_equal(sg_graph_node_count(g), 1);
            assert_int_equal(sg_graph_edge_count(g), 0);
            for (uint32_t b = 1; b < 8; b++) assert_int_equal(sg_graph_buffer(g, b)->alloc_node, SG_NONE);
            assert_int_equal(fused->n_accesses, 2);
            for (uint32_t a = 0; a < 2; a++) {
                const sg_access_t *x = &fused->accesses[a];
                assert_true(x->buffer == 0 || x->buffer == 8);
                assert_int_equal(x->mode, x->buffer == 0 ? SG_ACCESS_READ : SG_ACCESS_UNKNOWN);
            }
            assert_non_null(strstr(t, "n0 (mem_alloc), n9 (mem_free) removed: nothing touches buffer b1"));
            dead_kernel_streams(g, fused, &files);
        } else {
            assert_int_equal(fused->n_accesses, 16); /* b0..b7 read, b1..b8 written */
        }
        /* dot names the stages of the fused node */
        char *dot = NULL;
        size_t dot_len = 0;
        FILE *df = open_memstream(&dot, &dot_len);
        assert_non_null(df);
        sg_dot_options_t dopt;
        memset(&dopt, 0, sizeof dopt);
        assert_int_equal(sg_dot_write(g, df, &dopt), SG_OK);
        fclose(df);
        assert_non_null(strstr(dot, "fused, tier 1, 8 stages:"));
        assert_non_null(strstr(dot, "st_sin"));
        free(dot);
        /* the result is a bundle like any other */
        char outp[256];
        snprintf(outp, sizeof outp, "%s/out.sgraph", dir);
        sg_bundle_blob_t blobs[2];
        for (size_t i = 0; i < files.n; i++)
            blobs[i] = (sg_bundle_blob_t){.relpath = files.files[i].relpath, .data = files.files[i].data,
                                          .size = files.files[i].size};
        sg_diag_t d;
        assert_int_equal(sg_bundle_write(g, outp, blobs, files.n, 0, &d), SG_OK);
        sg_graph_t *back = NULL;
        assert_int_equal(sg_bundle_read(outp, &back, &d), SG_OK);
        assert_int_equal(sg_graph_node_count(back), sg_graph_node_count(g));
        char where[300];
        if (!sg_bundle_same(g, back, where, sizeof where)) fail_msg("read back differs: %s", where);
        /* ... with its fusion record */
        const sg_fusion_t *br = sg_graph_fusion(back, fused->id);
        assert_non_null(br);
        assert_int_equal(br->n_stages, 8);
        assert_int_equal(br->n_dropped, rec->n_dropped);
        assert_int_equal(br->cubin_image, rec->cubin_image);
        assert_int_equal(br->ptx_image, rec->ptx_image);
        assert_int_equal(br->registers, rec->registers);
        assert_string_equal(br->hash, rec->hash);
        assert_string_equal(br->stages[6].kernel.name, chain_names[6]);
        assert_int_equal(br->stages[6].kernel.params_size, 24);
        assert_memory_equal(br->stages[6].kernel.param_bytes, rec->stages[6].kernel.param_bytes, 24);
        assert_int_equal(br->stages[6].param_base, rec->stages[6].param_base);
        assert_int_equal(br->stages[6].node, rec->stages[6].node);
        if (dead) assert_non_null(strstr(br->dropped[0].reason, "freed in this graph"));
        /* the writer is deterministic: read -> write -> read -> write */
        char *j1 = NULL, *j2 = NULL;
        assert_int_equal(sg_bundle_to_json(back, &j1), SG_OK);
        sg_graph_t *again = NULL;
        assert_int_equal(sg_bundle_parse_json(j1, strlen(j1), "graph.json", &again, &d), SG_OK);
        assert_int_equal(sg_bundle_to_json(again, &j2), SG_OK);
        assert_string_equal(j1, j2);
        if (dead && getenv("SGCAP_TEST_SEED")) { /* tests/fuzz/seeds/fuzz_bundle/fused.json */
            FILE *sf = fopen(getenv("SGCAP_TEST_SEED"), "w");
            if (sf) fputs(j1, sf), fclose(sf);
        }
        /* and the clone keeps the record */
        sg_graph_t *cl = sg_graph_clone(again);
        assert_non_null(cl);
        assert_non_null(sg_graph_fusion(cl, fused->id));
        assert_int_equal(sg_graph_fusion(cl, fused->id)->n_stages, 8);
        sg_graph_destroy(cl);
        sg_graph_destroy(again);
        /* a record naming a node that is not a kernel is refused, saying where */
        char *at = strstr(j1, "\"fusions\": [");
        assert_non_null(at);
        at = strstr(at, "\"node\": ");
        assert_non_null(at);
        at += strlen("\"node\": ");
        char *bad = malloc(strlen(j1) + 16);
        assert_non_null(bad);
        snprintf(bad, strlen(j1) + 16, "%.*s99999%s", (int)(at - j1), j1, at + strspn(at, "0123456789"));
        sg_graph_t *none = NULL;
        int brc = sg_bundle_parse_json(bad, strlen(bad), "graph.json", &none, &d);
        if (brc == SG_OK) fail_msg("a record naming node 99999 was accepted");
        assert_int_equal(brc, SG_EFORMAT);
        assert_non_null(strstr(d.message, "fusions[0]"));
        free(bad);
        free(j1);
        free(j2);
        sg_graph_destroy(back);
    }
    sg_rewrite_files_free(&files);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The fuse pass (after fusion-legality) on g written as a bundle with its
 * code, as `sgcap rewrite` runs it: fuse_run writes DIR/in.sgraph, runs the
 * passes and returns the report's text; fuse_run_done frees and removes
 * (SGCAP_TEST_KEEP keeps the directory). */
typedef struct {
    char dir[32];
    sg_rewrite_files_t files;
    sg_report_t *rep;
} fuse_run_t;

static const char *fuse_run(fuse_run_t *r, sg_graph_t *g, const sg_bundle_blob_t *blobs, size_t n)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/sgcap_test_fuse_XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    char path[256];
    snprintf(path, sizeof path, "%s/in.sgraph", r->dir);
    sg_diag_t d;
    assert_int_equal(sg_bundle_write(g, path, blobs, n, 0, &d), SG_OK);
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    opt.bundle = path;
    opt.files = &r->files;
    const char *passes[] = {"fusion-legality", "fuse"};
    r->rep = sg_report_create();
    assert_int_equal(sg_rewrite_run_opts(g, passes, 2, &opt, r->rep), SG_OK);
    const char *t = sg_report_text(r->rep);
    if (getenv("SGCAP_TEST_REPORT")) fputs(t, stderr);
    return t;
}

static void fuse_run_done(fuse_run_t *r)
{
    sg_rewrite_files_free(&r->files);
    sg_report_destroy(r->rep);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    if (getenv("SGCAP_TEST_KEEP"))
        print_message("kept %s\n", r->dir);
    else
        assert_int_equal(system(cmd), 0);
}

/* The pass on a chain with barriers the finder and the pass must honour: an
 * event record after stage 1 (split at the event), a geometry change at
 * stage 4 (split), and a stage whose code image is a cubin (SASS only:
 * refused with the reason). */
static void test_pass_barriers(void **state)
{
    (void)state;
    size_t plen, clen;
    char *ptx = read_fixture("fusion_chain.sm90.ptx", &plen);
    char *cubin = read_fixture("refusals.sm90.cubin", &clen);
    sg_graph_t *g = chain_graph(chain_names, 6, false, 256);
    assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
    assert_int_equal(sg_graph_add_event(g, NULL, 0, NULL), SG_OK);
    sg_image_t *im = sg_graph_image(g, 0);
    im->file = strdup("code/chain.ptx");
    im->size = plen;
    sg_bundle_hash(ptx, plen, im->hash); /* images are checked against their hash */
    uint32_t ci;
    char chash[17];
    sg_bundle_hash(cubin, clen, chash);
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_CUBIN, chash, clen, &ci), SG_OK);
    sg_graph_image(g, ci)->file = strdup("code/refusals.cubin");
    /* k1 records an event another stream waits for */
    sg_node_id_t other;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, 1, 100, &other), SG_OK);
    assert_int_equal(sg_node_set_kernel_name(g, other, "other"), SG_OK);
    sg_edge_id_t ev;
    assert_int_equal(sg_graph_add_edge(g, kernel_node(g, 1)->id, other, SG_EDGE_EVENT, 0, &ev), SG_OK);
    /* k4 and k5: another grid; k5's code is the cubin */
    for (uint32_t k = 4; k < 6; k++) {
        sg_kernel_t *kk = (sg_kernel_t *)&kernel_node(g, k)->u.kernel;
        kk->grid[0] = N_EL / 512;
        kk->block[0] = 512;
    }
    sg_node_t *k5 = (sg_node_t *)kernel_node(g, 5);
    sg_node_id_t k4_id = kernel_node(g, 4)->id, k5_id = k5->id; /* the nodes move when fused */
    k5->u.kernel.image = ci;
    assert_int_equal(sg_node_set_kernel_name(g, k5->id, "_Z8rf_scalePKfPfm"), SG_OK);
    sg_bundle_blob_t blobs[2] = {{.relpath = "code/chain.ptx", .data = ptx, .size = plen},
                                 {.relpath = "code/refusals.cubin", .data = cubin, .size = clen}};
    fuse_run_t fr;
    const char *t = fuse_run(&fr, g, blobs, 2);
    sg_report_t *rep = fr.rep;
    free(ptx);
    free(cubin);
    /* the finder: [k0 k1] | event | [k2 k3] | geometry | [k4 k5] */
    assert_non_null(strstr(t, "tail: event_out"));
    assert_non_null(strstr(t, "tail: geometry"));
    /* k5: refused, SASS only; k4 stays alone */
    assert_non_null(strstr(t, "refused stage 1"));
    assert_non_null(strstr(t, "sass_only"));
    /* the JSON says the same (written as text, the runs and the refusals
     * apart): exactly what jansson makes of its own tree */
    char *js = NULL;
    assert_int_equal(sg_report_json_string(rep, &js), SG_OK);
    json_t *tree = sg_report_json(rep);
    assert_non_null(tree);
    char *again = json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    assert_non_null(again);
    assert_int_equal(strlen(js), strlen(again) + 1);
    assert_memory_equal(js, again, strlen(again));
    free(again);
    free(js);
    json_t *fp = json_array_get(json_object_get(tree, "passes"), 1);
    assert_string_equal(json_string_value(json_object_get(fp, "pass")), "fuse");
    json_t *chains = json_object_get(fp, "chains");
    assert_int_equal(json_array_size(chains), 3); /* [k0 k1] [k2 k3] [k4 k5] */
    json_t *last = json_array_get(chains, 2);
    assert_int_equal(json_integer_value(json_object_get(last, "first")), k4_id);
    json_t *refused = json_object_get(last, "refused");
    assert_int_equal(json_array_size(refused), 1);
    json_t *rf = json_array_get(refused, 0);
    assert_int_equal(json_integer_value(json_object_get(rf, "stage")), 1);
    assert_int_equal(json_integer_value(json_object_get(rf, "node")), k5_id);
    assert_non_null(strstr(json_string_value(json_object_get(rf, "reason")), "sass_only"));
    assert_int_equal(json_array_size(json_object_get(last, "runs")), 0);
    if (!strstr(t, "NVRTC is not available")) {
        for (size_t c = 0; c < 2; c++) {
            json_t *runs = json_object_get(json_array_get(chains, c), "runs");
            assert_int_equal(json_array_size(runs), 1);
            json_t *run = json_array_get(runs, 0);
            assert_string_equal(json_string_value(json_object_get(run, "status")), "fused");
            assert_int_equal(json_array_size(json_object_get(run, "stages")), 2);
            assert_int_equal(json_array_size(json_object_get(json_array_get(chains, c), "refused")), 0);
        }
        assert_int_equal(g->n_fusions, 2);
        assert_int_equal(g->fusions[0].n_stages, 2);
        assert_int_equal(g->fusions[1].n_stages, 2);
        /* the event edge now leaves the first fused node, still an event edge */
        sg_edge_id_t e = sg_graph_find_edge(g, g->fusions[0].node, other);
        assert_int_not_equal(e, SG_NONE);
        assert_int_equal(sg_graph_edge(g, e)->kind, SG_EDGE_EVENT);
        assert_int_equal(sg_graph_edge(g, e)->event, 0);
        (void)ev;
    }
    fuse_run_done(&fr);
    sg_graph_destroy(g);
}

/* An NCCL kernel in a same-stream chain is refused with its reason before
 * its code is looked at (graph/comm.h's rule): its PTX could not show that
 * it waits on other ranks. */
static void test_pass_nccl(void **state)
{
    (void)state;
    size_t plen;
    char *ptx = read_fixture("fusion_chain.sm90.ptx", &plen);
    sg_graph_t *g = chain_graph(chain_names, 3, false, 256);
    sg_image_t *im = sg_graph_image(g, 0);
    im->file = strdup("code/chain.ptx");
    im->size = plen;
    sg_bundle_hash(ptx, plen, im->hash);
    assert_int_equal(sg_node_set_kernel_name(g, kernel_node(g, 1)->id,
                                             "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL"
                                             "24ncclDevKernelArgsStorageILm4096EE"),
                     SG_OK);
    sg_bundle_blob_t blob = {.relpath = "code/chain.ptx", .data = ptx, .size = plen};
    fuse_run_t fr;
    const char *t = fuse_run(&fr, g, &blob, 1);
    free(ptx);
    assert_non_null(strstr(t, "an NCCL kernel: it talks to peer ranks, never fused"));
    assert_int_equal(g->n_fusions, 0);
    fuse_run_done(&fr);
    sg_graph_destroy(g);
}

static void test_pass_live(void **state)
{
    (void)state;
    pass_end_to_end(false);
}

static void test_pass_dead(void **state)
{
    (void)state;
    pass_end_to_end(true);
}

/* The chains sample as captured on the H200 (tests/golden/chains.sgraph),
 * with the sample's PTX as its code image: float, double and uint32 chains,
 * in-place steps, intermediates in graph allocations freed in the capture,
 * event edges between two streams. */
static void test_pass_chains_sample(void **state)
{
    (void)state;
    char src[1024];
    snprintf(src, sizeof src, "%s/tests/golden/chains.sgraph", SGCAP_SOURCE_DIR);
    sg_graph_t *g = NULL;
    sg_diag_t d;
    assert_int_equal(sg_bundle_read(src, &g, &d), SG_OK);
    char dir[] = "/tmp/sgcap_test_fuse_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/chains.sgraph", dir);
    size_t len;
    char pp[1024];
    snprintf(pp, sizeof pp, "%s/tests/data/ptx/sample_chains.sm90.ptx", SGCAP_SOURCE_DIR);
    FILE *f = fopen(pp, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    rewind(f);
    char *ptx = malloc(len);
    assert_int_equal(fread(ptx, 1, len, f), len);
    fclose(f);
    sg_image_t *im = sg_graph_image(g, 0);
    im->kind = SG_IMAGE_PTX;
    im->file = strdup("code/chains.ptx");
    im->size = len;
    sg_bundle_hash(ptx, len, im->hash); /* images are checked against their hash */
    sg_bundle_blob_t blob = {.relpath = "code/chains.ptx", .data = ptx, .size = len};
    assert_int_equal(sg_bundle_write(g, path, &blob, 1, 0, &d), SG_OK);
    free(ptx);
    uint32_t before = sg_graph_node_count(g);
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    sg_rewrite_files_t files = {0};
    opt.bundle = path;
    opt.files = &files;
    sg_report_t *rep = sg_report_create();
    int rc = sg_rewrite_run_opts(g, NULL, 0, &opt, rep); /* the default pipeline */
    const char *t = sg_report_text(rep);
    if (getenv("SGCAP_TEST_REPORT")) fputs(t, stderr);
    if (rc) fail_msg("%s\n%s", sg_strerror(rc), t);
    if (!strstr(t, "NVRTC is not available")) {
        /* s0's 12 kernels (4 through t1/t2, frees, 8 in place) are one kernel;
         * s1's 6 (4 uint32 steps, 2 double) split at the type change only if
         * a conflict says so; the 2 after the join are one */
        assert_non_null(strstr(t, "fused n"));
        assert_null(strstr(t, "not fused:"));
        assert_non_null(strstr(t, "verify: ok"));
        uint32_t fused = 0;
        for (uint32_t i = 0; i < g->n_fusions; i++) fused += g->fusions[i].n_stages;
        assert_true(g->n_fusions >= 3);
        /* and t1, t2 (graph allocations only the fused stages used, freed
         * in the capture) lose their mem_alloc and mem_free nodes */
        assert_int_equal(sg_graph_node_count(g), before - (fused - g->n_fusions) - 4);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node_t *x = sg_graph_node(g, i);
            assert_false(x && (x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE));
        }
        assert_non_null(strstr(t, "removed: nothing touches buffer t1 (b8) any more"));
        /* the in-place float steps: one slot, written back once */
        bool overwritten = false;
        for (uint32_t i = 0; i < g->n_fusions; i++)
            for (uint32_t k = 0; k < g->fusions[i].n_dropped; k++)
                overwritten |= strstr(g->fusions[i].dropped[k].reason, "overwritten") != NULL;
        assert_true(overwritten);
    }
    sg_rewrite_files_free(&files);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The fused kernel of the CuPy chain, read back from its PTX with the
 * access analysis and the fused node's parameters: per thread, stage k
 * loads b<k> and stores b<k+1> at t + m*S (a grid-stride loop over the
 * original geometry), every access in memory, in the stages' order, none
 * outside its 4 MiB (the bound the analysis proves is that buffer). */
static void cupy_kernel_accesses(const sg_graph_t *g, const sg_node_t *fused, const sg_rewrite_files_t *files)
{
    const sg_rewrite_file_t *ptx = NULL;
    for (size_t i = 0; i < files->n; i++)
        if (strstr(files->files[i].relpath, ".ptx")) ptx = &files->files[i];
    assert_non_null(ptx);
    sg_access_kernel_t k;
    assert_int_equal(sg_access_analyze_text(ptx->data, ptx->size, fused->u.kernel.name, &k), SG_OK);
    assert_int_equal(k.status, 0);
    sg_access_eval_t ev;
    assert_int_equal(sg_access_eval(&k, &fused->u.kernel, g->buffers, g->n_buffers, &ev), SG_OK);
    /* sites come in statement order: load b0, store b1, load b1, ... */
    uint32_t seen = 0;
    const int64_t S = 8192 * 128;
    for (uint32_t i = 0; i < k.n_sites; i++) {
        const sg_access_site_t *x = &k.sites[i];
        const sg_access_range_t *r = &ev.ranges[i];
        if (x->base_kind == SG_ACCESS_BASE_SYMBOL) continue; /* sinf's table */
        if (r->status == SG_ACCESS_ST_NEVER) continue;
        if (r->status != SG_ACCESS_ST_KNOWN) fail_msg("site %u (line %u): %s", i, x->line, r->detail);
        uint32_t stage = seen / 2;
        bool store = seen % 2;
        assert_true(stage < 8);
        assert_int_equal(x->kind, store ? SG_ACCESS_STORE : SG_ACCESS_LOAD);
        const sg_buffer_t *b = sg_graph_buffer(g, stage + store);
        assert_int_equal(r->buffer, stage + store);
        assert_int_equal(r->lo, b->address);
        assert_int_equal(r->hi, b->address + b->size);
        assert_true(r->affine_ids);
        assert_int_equal(r->coef[0], 4);
        assert_int_equal(r->coef[3], 4 * 128);
        assert_true(r->rest_gcd != 0 && r->rest_gcd % (4 * S) == 0);
        seen++;
    }
    assert_int_equal(seen, 16);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

static void cupy_chain_pass(const char *bundle)
{
    sg_graph_t *g = NULL;
    sg_diag_t d;
    assert_int_equal(sg_bundle_read(bundle, &g, &d), SG_OK);
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    sg_rewrite_files_t files = {0};
    opt.bundle = bundle;
    opt.files = &files;
    const char *passes[] = {"fuse"};
    sg_report_t *rep = sg_report_create();
    int rc = sg_rewrite_run_opts(g, passes, 1, &opt, rep);
    const char *t = sg_report_text(rep);
    if (getenv("SGCAP_TEST_REPORT")) fputs(t, stderr);
    if (rc) fail_msg("%s\n%s", sg_strerror(rc), t);
    if (!strstr(t, "NVRTC is not available")) {
        if (!strstr(t, "fused n0: ") || strstr(t, "refused")) fail_msg("%s", t);
        assert_non_null(strstr(t, "8 stages (sg_stage0 .. sg_stage7)"));
        assert_non_null(strstr(t, "grid-stride: accesses kept in memory"));
        assert_int_equal(sg_graph_node_count(g), 1);
        const sg_node_t *fused = sg_graph_node(g, 0);
        assert_int_equal(fused->type, SG_NODE_KERNEL);
        assert_int_equal(fused->u.kernel.grid[0], 8192);
        assert_int_equal(fused->u.kernel.block[0], 128);
        const sg_fusion_t *rec = sg_graph_fusion(g, 0);
        assert_non_null(rec);
        assert_int_equal(rec->n_stages, 8);
        assert_string_equal(rec->codegen, "inline, original geometry");
        assert_int_equal(rec->n_dropped, 0); /* every intermediate is the app's own array */
        cupy_kernel_accesses(g, fused, &files);
    }
    sg_rewrite_files_free(&files);
    sg_report_destroy(rep);
    sg_graph_destroy(g);
}

/* The CuPy chain as the H200 captured it (tests/data/fuse/cupy_chain/:
 * eight ElementwiseKernels, CArray structs by value, a grid-stride loop,
 * 32-bit indexing), with the NVRTC programs a cold kernel cache records,
 * each kernel's cubin linked to its source: the PTX comes from recompiling
 * that source. It was refused stage by stage ("load address is not an
 * affine function") before fusion took its facts from the access
 * analysis. */
static void test_pass_cupy_chain(void **state)
{
    (void)state;
    char src[1024];
    snprintf(src, sizeof src, "%s/tests/data/fuse/cupy_chain/cupy_chain.sgraph", SGCAP_SOURCE_DIR);
    cupy_chain_pass(src);
}

/* The same chain with 64-bit indexing (CuPy's choice for arrays of 2^31
 * bytes or more), the stages' PTX one module. */
static void test_pass_cupy_chain64(void **state)
{
    (void)state;
    char src[1024];
    snprintf(src, sizeof src, "%s/tests/data/fuse/cupy_chain/cupy_chain.sgraph", SGCAP_SOURCE_DIR);
    sg_graph_t *g = NULL;
    sg_diag_t d;
    assert_int_equal(sg_bundle_read(src, &g, &d), SG_OK);
    size_t len;
    char *ptx = read_fixture("cupy_chain/cupy_chain64.ptx", &len);
    uint32_t img;
    char hash[17];
    sg_bundle_hash(ptx, len, hash);
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_PTX, hash, len, &img), SG_OK);
    sg_graph_image(g, img)->file = strdup("code/chain64.ptx");
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *x = sg_graph_node(g, i);
        if (x && x->type == SG_NODE_KERNEL) x->u.kernel.image = img;
    }
    char dir[] = "/tmp/sgcap_test_fuse_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/chain64.sgraph", dir);
    sg_bundle_blob_t blob = {.relpath = "code/chain64.ptx", .data = ptx, .size = len};
    assert_int_equal(sg_bundle_write(g, path, &blob, 1, 0, &d), SG_OK);
    free(ptx);
    sg_graph_destroy(g);
    cupy_chain_pass(path);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_sm90_live),
        cmocka_unit_test(test_chain_sm75_dead),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_untyped_access),
        cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_pass_nccl),
        cmocka_unit_test(test_grid_stride),
        cmocka_unit_test(test_tier2),
        cmocka_unit_test(test_pass_barriers),
        cmocka_unit_test(test_pass_live),
        cmocka_unit_test(test_pass_dead),
        cmocka_unit_test(test_pass_chains_sample),
        cmocka_unit_test(test_pass_cupy_chain),
        cmocka_unit_test(test_pass_cupy_chain64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
