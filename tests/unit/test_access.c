/* test_access.c: the access analysis (code/access.h) on the PTX fixtures
 * of tests/data/ptx/, with exact expected results: what each site is (kind,
 * width, the parameter word its pointer comes from, its offset and
 * conditions as text) and, evaluated for a launch, its byte range, whether
 * it is dense and exact, its buffer, and the CTA and thread footprints.
 * Covers the samples' kernels (all of them must be fully known), grid-stride
 * loops, 32-bit wrap, 2-D indexing, stencils across blocks, vector and
 * predicated (Triton-style) accesses, CuPy's CArray struct pointers,
 * pointers loaded from memory, data-dependent indices, atomics, calls,
 * textures, the refusal-list facts, the SASS builder, the cache, and bad
 * input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "code/access.h"
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

static void analyze(const char *fixture, const char *kernel, sg_access_kernel_t *k)
{
    size_t len;
    char *text = read_fixture(fixture, &len);
    assert_int_equal(sg_access_analyze_text(text, len, kernel, k), SG_OK);
    free(text);
    if (k->status) fail_msg("%s: %s", kernel, k->detail);
}

/* ---- launches ----------------------------------------------------------------- */

enum { B0 = 0x10000000, B1 = 0x20000000, B2 = 0x30000000, B3 = 0x40000000, BSZ = 16 << 20 };

static const sg_buffer_t BUFS[4] = {
    {.id = 0, .label = "b0", .address = B0, .size = BSZ},
    {.id = 1, .label = "b1", .address = B1, .size = BSZ},
    {.id = 2, .label = "b2", .address = B2, .size = BSZ},
    {.id = 3, .label = "b3", .address = B3, .size = BSZ},
};

typedef struct {
    uint32_t off, width;
    uint64_t value;
} word_t;

static uint8_t g_bytes[4096];

static void launch(const sg_access_kernel_t *k, uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by,
                   const word_t *w, uint32_t nw, sg_access_eval_t *ev)
{
    sg_kernel_t node;
    memset(&node, 0, sizeof node);
    memset(g_bytes, 0, sizeof g_bytes);
    for (uint32_t i = 0; i < nw; i++) memcpy(g_bytes + w[i].off, &w[i].value, w[i].width);
    node.grid[0] = gx;
    node.grid[1] = gy;
    node.grid[2] = 1;
    node.block[0] = bx;
    node.block[1] = by;
    node.block[2] = 1;
    node.param_bytes = g_bytes;
    node.params_size = k->params_size;
    node.n_params = k->n_params;
    node.param_offsets = k->param_offsets;
    node.param_sizes = k->param_sizes;
    assert_int_equal(sg_access_eval(k, &node, BUFS, 4, ev), SG_OK);
    assert_int_equal(ev->n_ranges, k->n_sites);
}

static void expect_range(const sg_access_eval_t *ev, uint32_t site, uint64_t lo, uint64_t hi,
                         uint32_t buffer, bool dense, bool exact)
{
    const sg_access_range_t *r = &ev->ranges[site];
    if (r->status != SG_ACCESS_ST_KNOWN) fail_msg("site %u: status %u (%s)", site, r->status, r->detail);
    if (r->lo != lo || r->hi != hi)
        fail_msg("site %u: [%#llx, %#llx), want [%#llx, %#llx)", site, (unsigned long long)r->lo,
                 (unsigned long long)r->hi, (unsigned long long)lo, (unsigned long long)hi);
    assert_int_equal(r->buffer, buffer);
    assert_int_equal(r->dense, dense);
    assert_int_equal(r->exact, exact);
}

static void expect_site(const sg_access_kernel_t *k, uint32_t i, sg_access_kind_t kind,
                        uint32_t width, uint32_t base_param, const char *offset)
{
    const sg_access_site_t *s = &k->sites[i];
    char buf[512];
    assert_int_equal(s->kind, kind);
    assert_int_equal(s->width, width);
    assert_int_equal(s->base_kind, SG_ACCESS_BASE_PARAM);
    assert_int_equal(s->base_param, base_param);
    if (s->reason != SG_ACCESS_OK) fail_msg("site %u: %s", i, s->detail);
    sg_access_expr_format(&s->offset, buf, sizeof buf);
    if (strcmp(buf, offset)) fail_msg("site %u offset '%s', want '%s'", i, buf, offset);
}

static void expect_cond(const sg_access_kernel_t *k, uint32_t site, uint32_t c, const char *text)
{
    const sg_access_site_t *s = &k->sites[site];
    char buf[512];
    assert_true(c < s->n_conds);
    sg_access_cond_format(&k->conds[s->first_cond + c], buf, sizeof buf);
    if (strcmp(buf, text)) fail_msg("site %u cond %u '%s', want '%s'", site, c, buf, text);
}

#define GID "4*tid.x + 4*ntid.x*ctaid.x"

/* ---- the samples ------------------------------------------------------------------ */

static void test_axpb(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("sample_fork_join.sm90.ptx", "_Z6k_axpbPfPKfffm", &k);
    /* float *y, const float *x, float m, float add, size_t n */
    assert_int_equal(k.n_params, 5);
    assert_int_equal(k.params_size, 32);
    assert_int_equal(k.n_sites, 2);
    expect_site(&k, 0, SG_ACCESS_LOAD, 4, 8, GID);
    expect_site(&k, 1, SG_ACCESS_STORE, 4, 0, GID);
    assert_int_equal(k.sites[0].param_index, 1);
    assert_int_equal(k.sites[1].param_index, 0);
    for (int i = 0; i < 2; i++) {
        assert_true(k.sites[i].exact);
        assert_true(k.sites[i].thread_local);
        assert_false(k.sites[i].generic);
        assert_int_equal(k.sites[i].n_conds, 1);
        expect_cond(&k, i, 0, "tid.x + ntid.x*ctaid.x - p[24:u64] + 1 <= 0");
    }
    assert_int_equal(k.flags, 0);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B1}, {8, 8, B0}, {24, 8, 1000}};
    launch(&k, 4, 1, 256, 1, w, 3, &ev);
    assert_true(ev.all_known);
    expect_range(&ev, 0, B0, B0 + 4000, 0, true, true);
    expect_range(&ev, 1, B1, B1 + 4000, 1, true, true);
    const sg_access_range_t *r = &ev.ranges[1];
    assert_true(r->linear);
    assert_true(r->affine_ids);
    assert_int_equal(r->rest_gcd, 0);
    assert_int_equal(r->loop, SG_NONE);
    assert_int_equal(r->coef[0], 4);    /* tid.x */
    assert_int_equal(r->coef[3], 1024); /* ctaid.x: 256 threads of 4 bytes */
    assert_int_equal(r->c0, 0);
    assert_int_equal(r->cta_lo, B1);
    assert_int_equal(r->cta_hi, B1 + 1024);
    assert_int_equal(r->thread_lo, B1);
    assert_int_equal(r->thread_hi, B1 + 4);
    sg_access_eval_free(&ev);
    /* more elements than threads: the grid bounds it */
    const word_t big[] = {{0, 8, B1}, {8, 8, B0}, {24, 8, 5000}};
    launch(&k, 4, 1, 256, 1, big, 3, &ev);
    expect_range(&ev, 0, B0, B0 + 4096, 0, true, true);
    sg_access_eval_free(&ev);
    /* nothing to do: n = 0 */
    const word_t none[] = {{0, 8, B1}, {8, 8, B0}, {24, 8, 0}};
    launch(&k, 4, 1, 256, 1, none, 3, &ev);
    assert_true(ev.all_known);
    assert_int_equal(ev.ranges[0].status, SG_ACCESS_ST_NEVER);
    assert_int_equal(ev.ranges[1].status, SG_ACCESS_ST_NEVER);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* Every kernel of every sample: every access site known. */
static void test_samples_all_known(void **state)
{
    (void)state;
    static const char *const files[] = {
        "sample_async_alloc.sm90.ptx", "sample_chain_barrier.sm90.ptx", "sample_chains.sm90.ptx",
        "sample_chains.sm75.ptx", "sample_diamond.sm90.ptx", "sample_driver_api_kernels.sm90.ptx",
        "sample_event_reuse.sm90.ptx", "sample_fan3.sm90.ptx", "sample_fork_join.sm90.ptx",
        "sample_fork_join.sm75.ptx", "sample_ping_pong.sm90.ptx", "sample_recapture.sm90.ptx",
        "sample_stencil.sm90.ptx", "sample_two_waiters.sm90.ptx"};
    uint32_t kernels = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        char *text = read_fixture(files[i], &len);
        sg_ptx_module_t *m = NULL;
        sg_ptx_error_t err;
        assert_int_equal(sg_ptx_parse(text, len, NULL, &m, &err), SG_OK);
        for (uint32_t f = 0; f < m->n_funcs; f++) {
            if (!m->funcs[f].is_entry) continue;
            sg_access_kernel_t k;
            assert_int_equal(sg_access_analyze_ptx(m, m->funcs[f].name, &k), SG_OK);
            assert_int_equal(k.reason, SG_ACCESS_OK);
            assert_true(k.n_sites >= 2); /* at least a load and a store */
            for (uint32_t s = 0; s < k.n_sites; s++) {
                const sg_access_site_t *x = &k.sites[s];
                if (x->reason != SG_ACCESS_OK)
                    fail_msg("%s %s site %u: %s", files[i], k.kernel, s, x->detail);
                assert_int_equal(x->base_kind, SG_ACCESS_BASE_PARAM);
                assert_true(x->width == 4 || x->width == 8);
            }
            kernels++;
            sg_access_kernel_free(&k);
        }
        sg_ptx_module_free(m);
        free(text);
    }
    assert_int_equal(kernels, 68); /* 54 distinct, chains and fork_join twice */
}

static void test_chain_in_place(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    /* k_f8_step(float *y, int k, size_t n): y[i] = f(y[i]) */
    analyze("sample_chains.sm90.ptx", "_Z9k_f8_stepPfim", &k);
    assert_int_equal(k.n_sites, 2);
    expect_site(&k, 0, SG_ACCESS_LOAD, 4, 0, GID);
    expect_site(&k, 1, SG_ACCESS_STORE, 4, 0, GID);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B2 + 64}, {8, 4, 3}, {16, 8, 65536}};
    launch(&k, 256, 1, 256, 1, w, 3, &ev);
    assert_true(ev.all_known);
    expect_range(&ev, 0, B2 + 64, B2 + 64 + 262144, 2, true, true);
    expect_range(&ev, 1, B2 + 64, B2 + 64 + 262144, 2, true, true);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* Neighbour reads across blocks: each CTA's footprint reaches into the next. */
static void test_stencil(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("sample_stencil.sm90.ptx", "_Z11k_stencil1dPjPKjm", &k);
    assert_int_equal(k.n_sites, 4);
    const char *want[] = {GID " - 4", GID, GID " + 4"};
    uint32_t found = 0;
    for (uint32_t s = 0; s < k.n_sites; s++) {
        char buf[256];
        if (k.sites[s].kind != SG_ACCESS_LOAD) continue;
        sg_access_expr_format(&k.sites[s].offset, buf, sizeof buf);
        for (int j = 0; j < 3; j++) found |= (uint32_t)!strcmp(buf, want[j]) << j;
    }
    assert_int_equal(found, 7);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B1}, {8, 8, B0}, {16, 8, 1000}};
    launch(&k, 4, 1, 256, 1, w, 3, &ev);
    assert_true(ev.all_known);
    for (uint32_t s = 0; s < k.n_sites; s++) {
        const sg_access_range_t *r = &ev.ranges[s];
        char buf[256];
        sg_access_expr_format(&k.sites[s].offset, buf, sizeof buf);
        if (!strcmp(buf, GID " - 4")) { /* x[i-1], i >= 1 */
            expect_range(&ev, s, B0, B0 + 999 * 4, 0, true, true);
            /* CTA 0 reads x[0..254]; CTA 1 starts at x[255]: they overlap */
            assert_int_equal(r->cta_lo, B0);
            assert_int_equal(r->cta_hi, B0 + 255 * 4);
        } else if (!strcmp(buf, GID " + 4")) { /* x[i+1], i + 1 < n */
            expect_range(&ev, s, B0 + 4, B0 + 4000, 0, true, true);
            assert_int_equal(r->cta_hi, B0 + 257 * 4); /* reads CTA 1's first element */
            assert_true(r->cta_hi > B0 + (uint64_t)r->coef[3]);
        } else if (r->kind == SG_ACCESS_STORE) {
            expect_range(&ev, s, B1, B1 + 4000, 1, true, true);
            assert_true(r->cta_hi - r->cta_lo <= (uint64_t)r->coef[3]); /* CTAs apart */
        }
    }
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* 2-D: 32x8 blocks over rows of WIDTH=1024 */
    analyze("sample_stencil.sm90.ptx", "_Z11k_stencil2dPjPKjl", &k);
    assert_int_equal(k.n_sites, 6);
    expect_site(&k, 5, SG_ACCESS_STORE, 4, 0,
                "4*tid.x + 4096*tid.y + 4*ntid.x*ctaid.x + 4096*ntid.y*ctaid.y");
    expect_cond(&k, 5, 0, "tid.y + ntid.y*ctaid.y - p[16:u64] + 1 <= 0");
    expect_cond(&k, 5, 1, "tid.x + ntid.x*ctaid.x - 1023 <= 0");
    const word_t w2[] = {{0, 8, B1}, {8, 8, B0}, {16, 8, 16}}; /* h = 16 rows */
    launch(&k, 32, 2, 32, 8, w2, 3, &ev);
    assert_true(ev.all_known);
    expect_range(&ev, 5, B1, B1 + 16 * 4096, 1, true, true);
    expect_range(&ev, 1, B0, B0 + 15 * 4096, 0, true, true);      /* row above, r > 0 */
    expect_range(&ev, 2, B0 + 4096, B0 + 16 * 4096, 0, true, true); /* row below, r + 1 < h */
    /* column neighbours: every element of the rows but one per row: exact, not dense */
    expect_range(&ev, 3, B0, B0 + 16 * 4096 - 4, 0, false, true);
    expect_range(&ev, 4, B0 + 4, B0 + 16 * 4096, 0, false, true);
    assert_int_equal(ev.ranges[5].coef[1], 4096);   /* tid.y */
    assert_int_equal(ev.ranges[5].coef[4], 32768);  /* ctaid.y: 8 rows */
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* ---- framework-shaped kernels -------------------------------------------------------- */

static void test_grid_stride(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("access_kernels.sm90.ptx", "gs_scale", &k);
    assert_int_equal(k.n_loops, 1);
    expect_site(&k, 0, SG_ACCESS_LOAD, 4, 8, GID " + 4*ntid.x*nctaid.x*K0");
    assert_true(k.sites[0].exact);
    assert_false(k.sites[0].thread_local); /* a loop: more than one element per thread */
    expect_cond(&k, 0, 1, "tid.x + ntid.x*ctaid.x + ntid.x*nctaid.x*K0 - p[24:u64] + 1 <= 0");
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B1}, {8, 8, B0}, {24, 8, 100003}};
    launch(&k, 8, 1, 128, 1, w, 3, &ev);
    assert_true(ev.all_known);
    expect_range(&ev, 0, B0, B0 + 400012, 0, true, true);
    expect_range(&ev, 1, B1, B1 + 400012, 1, true, true);
    /* thread 0 touches elements 0, 1024, ..., 99328 */
    assert_int_equal(ev.ranges[0].thread_lo, B0);
    assert_int_equal(ev.ranges[0].thread_hi, B0 + 99328 * 4 + 4);
    /* affine in the ids plus one grid stride (8 blocks of 128 threads) per iteration */
    assert_false(ev.ranges[0].linear);
    assert_true(ev.ranges[0].affine_ids);
    assert_int_equal(ev.ranges[0].rest_gcd, 4 * 1024);
    assert_int_equal(ev.ranges[0].coef[0], 4);
    assert_int_equal(ev.ranges[0].coef[3], 512);
    assert_int_equal(ev.ranges[0].loop, 0);
    assert_int_equal(ev.ranges[0].loop_coef, 4 * 1024);
    assert_int_equal(ev.ranges[0].c0, 0);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* the same with a 32-bit int index */
    analyze("access_kernels.sm90.ptx", "gs_int", &k);
    const word_t wi[] = {{0, 8, B1}, {8, 8, B0}, {16, 4, 100003}};
    launch(&k, 8, 1, 128, 1, wi, 3, &ev);
    assert_true(ev.all_known);
    expect_range(&ev, 0, B0, B0 + 400012, 0, true, true);
    sg_access_eval_free(&ev);
    /* near INT_MAX the index can wrap when it steps past n: not known */
    const word_t wrap[] = {{0, 8, B1}, {8, 8, B0}, {16, 4, 2147483000}};
    launch(&k, 1024, 1, 1024, 1, wrap, 3, &ev);
    assert_false(ev.all_known);
    assert_int_equal(ev.ranges[0].status, SG_ACCESS_ST_UNKNOWN);
    assert_int_equal(ev.ranges[0].reason, SG_ACCESS_R_WRAP);
    assert_non_null(strstr(ev.reason, "wrap"));
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

static void test_vectors_and_2d(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("access_kernels.sm90.ptx", "vec4_copy", &k);
    expect_site(&k, 0, SG_ACCESS_LOAD, 16, 8, "16*tid.x + 16*ntid.x*ctaid.x");
    assert_true(k.sites[0].vector);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B1}, {8, 8, B0}, {16, 8, 100}};
    launch(&k, 1, 1, 128, 1, w, 3, &ev);
    expect_range(&ev, 0, B0, B0 + 1600, 0, true, true);
    expect_range(&ev, 1, B1, B1 + 1600, 1, true, true);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* c[y*pitch + x], x < w, y < h, 32-bit int index */
    analyze("access_kernels.sm90.ptx", "add2d", &k);
    assert_int_equal(k.n_sites, 3);
    expect_site(&k, 2, SG_ACCESS_STORE, 4, 0,
                "4*tid.x + 4*tid.y*p[32:u32] + 4*ntid.x*ctaid.x + 4*ntid.y*ctaid.y*p[32:u32]");
    const word_t w2[] = {{0, 8, B2}, {8, 8, B0}, {16, 8, B1}, {24, 4, 100}, {28, 4, 50}, {32, 4, 128}};
    launch(&k, 7, 4, 16, 16, w2, 6, &ev);
    assert_true(ev.all_known);
    /* rows of 100 elements every 128: the exact hull, not dense */
    expect_range(&ev, 2, B2, B2 + 4 * (49 * 128 + 99) + 4, 2, false, true);
    expect_range(&ev, 0, B1, B1 + 4 * (49 * 128 + 99) + 4, 1, false, true);
    sg_access_eval_free(&ev);
    /* pitch == width: dense */
    const word_t w3[] = {{0, 8, B2}, {8, 8, B0}, {16, 8, B1}, {24, 4, 112}, {28, 4, 50}, {32, 4, 112}};
    launch(&k, 7, 4, 16, 16, w3, 6, &ev);
    expect_range(&ev, 2, B2, B2 + 4 * 50 * 112, 2, true, true);
    sg_access_eval_free(&ev);
    /* a grid whose 32-bit x index wraps */
    launch(&k, 4194304, 1, 1024, 1, w2, 6, &ev);
    assert_false(ev.all_known);
    assert_int_equal(ev.ranges[2].reason, SG_ACCESS_R_WRAP);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* Pointers inside a by-value struct (TensorIterator-like, CuPy's CArray). */
static void test_struct_pointers(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("access_kernels.sm90.ptx", "struct_ptrs", &k);
    assert_int_equal(k.n_sites, 3);
    uint32_t seen = 0;
    for (uint32_t s = 0; s < 3; s++) {
        const sg_access_site_t *x = &k.sites[s];
        assert_int_equal(x->param_index, 0);
        assert_int_equal(x->param_inner, x->base_param);
        seen |= 1u << (x->base_param / 8);
        assert_int_equal(x->kind, x->base_param == 0 ? SG_ACCESS_STORE : SG_ACCESS_LOAD);
    }
    assert_int_equal(seen, 7);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B0}, {8, 8, B1}, {16, 8, B2}, {24, 4, 300}};
    launch(&k, 2, 1, 256, 1, w, 4, &ev);
    assert_true(ev.all_known);
    for (uint32_t s = 0; s < 3; s++) {
        uint32_t b = k.sites[s].base_param / 8;
        expect_range(&ev, s, BUFS[b].address, BUFS[b].address + 1200, b, true, true);
    }
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* CuPy ElementwiseKernel: y = a * x + b over CArray structs, unrolled by NVRTC */
    analyze("cupy_elementwise.ptx", "cupy_axpb", &k);
    assert_true(k.n_sites >= 2);
    for (uint32_t s = 0; s < k.n_sites; s++) {
        const sg_access_site_t *x = &k.sites[s];
        assert_int_equal(x->reason, SG_ACCESS_OK);
        /* x.data is the first word of parameter 0, y.data of parameter 3 (offset 40) */
        assert_int_equal(x->base_param, x->kind == SG_ACCESS_LOAD ? 0 : 40);
        assert_int_equal(x->param_index, x->kind == SG_ACCESS_LOAD ? 0 : 3);
        assert_int_equal(x->param_inner, 0);
    }
    /* NVRTC unrolled the grid-stride loop by 4: a remainder loop of
       (trip count mod 4) iterations, then four elements per iteration. With
       the quotient facts the bounds are the true hulls, but not claimed
       exact (the trip count is a per-thread quotient). */
    assert_int_equal(k.n_sites, 10);
    const word_t wc[] = {{0, 8, B0}, {8, 8, 1000}, {40, 8, B1}, {48, 8, 1000}, {72, 8, 1000}};
    launch(&k, 4, 1, 256, 1, wc, 5, &ev);
    assert_true(ev.all_known);
    /* 1024 threads for 1000 elements: one remainder iteration each, the unrolled part never */
    expect_range(&ev, 0, B0, B0 + 4000, 0, false, false);
    expect_range(&ev, 1, B1, B1 + 4000, 1, false, false);
    for (uint32_t s = 2; s < k.n_sites; s++) assert_int_equal(ev.ranges[s].status, SG_ACCESS_ST_NEVER);
    sg_access_eval_free(&ev);
    const word_t wl[] = {{0, 8, B0}, {8, 8, 100000}, {40, 8, B1}, {48, 8, 100000}, {72, 8, 100000}};
    launch(&k, 4, 1, 256, 1, wl, 5, &ev);
    assert_true(ev.all_known);
    /* 97 or 98 iterations: remainder 1 or 2 (the threads below 672), elements < 1696 */
    expect_range(&ev, 0, B0, B0 + 4 * 1696, 0, false, false);
    /* the first of four: from element 1696 up to n - 1 - 3*1024; the last: up to n - 1 */
    expect_range(&ev, 2, B0 + 4 * 1696, B0 + 4 * (100000 - 3072), 0, false, false);
    expect_range(&ev, 9, B1 + 4 * (1696 + 3072), B1 + 4 * 100000, 1, false, false);
    for (uint32_t s = 0; s < k.n_sites; s++) {
        const sg_access_range_t *r = &ev.ranges[s];
        uint64_t base = r->kind == SG_ACCESS_LOAD ? B0 : B1;
        assert_true(r->lo >= base && r->hi <= base + 400000);
        assert_false(r->clipped);
        /* every element a thread touches is its own t plus whole grid strides
           (1024 threads of 4 bytes): the remainder loop's count and the
           unrolled loop's quotients all come in multiples of 4096 bytes */
        assert_true(r->affine_ids);
        assert_int_equal(r->coef[0], 4);
        assert_int_equal(r->coef[3], 1024);
        assert_true(r->rest_gcd > 0 && r->rest_gcd % 4096 == 0);
        assert_int_equal(r->c0 % 4096, 0);
    }
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* 32-bit indexing, not unrolled: exact */
    analyze("cupy_elementwise.ptx", "cupy_add32", &k);
    assert_int_equal(k.n_sites, 3);
    const word_t wa[] = {{0, 8, B0}, {32, 8, B1}, {64, 8, B2}, {96, 8, 5000}};
    launch(&k, 4, 1, 256, 1, wa, 4, &ev);
    assert_true(ev.all_known);
    for (uint32_t s = 0; s < 3; s++) {
        uint32_t b = k.sites[s].base_param / 32;
        expect_range(&ev, s, BUFS[b].address, BUFS[b].address + 20000, b, true, true);
    }
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* a strided view: the element index is i % shape, not affine */
    analyze("cupy_elementwise.ptx", "cupy_copy_strided", &k);
    bool strided_unknown = false, store_known = false;
    for (uint32_t s = 0; s < k.n_sites; s++) {
        if (k.sites[s].kind == SG_ACCESS_LOAD && k.sites[s].reason != SG_ACCESS_OK) strided_unknown = true;
        if (k.sites[s].kind == SG_ACCESS_STORE && k.sites[s].reason == SG_ACCESS_OK) store_known = true;
        assert_int_equal(k.sites[s].base_kind, SG_ACCESS_BASE_PARAM);
    }
    assert_true(strided_unknown && store_known);
    sg_access_kernel_free(&k);
}

/* Triton: two predicated 16-byte vectors per thread, .reqntid 128. */
static void test_triton(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("triton_poi_fused.ptx", "triton_poi_fused_add_mul_0", &k);
    assert_int_equal(k.n_sites, 6);
    assert_int_equal(k.reqntid[0], 128);
    expect_site(&k, 0, SG_ACCESS_LOAD, 16, 0, "16*tid.x + 4096*ctaid.x");
    expect_site(&k, 1, SG_ACCESS_LOAD, 16, 0, "16*tid.x + 4096*ctaid.x + 2048");
    expect_site(&k, 4, SG_ACCESS_STORE, 16, 16, "16*tid.x + 4096*ctaid.x");
    expect_site(&k, 5, SG_ACCESS_STORE, 16, 16, "16*tid.x + 4096*ctaid.x + 2048");
    expect_cond(&k, 1, 0, "4*tid.x + 1024*ctaid.x - p[24:u32] + 513 <= 0");
    for (uint32_t s = 0; s < 6; s++) {
        assert_true(k.sites[s].thread_local);
        assert_true(k.sites[s].vector);
    }
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B0}, {8, 8, B1}, {16, 8, B2}, {24, 4, 5120}};
    launch(&k, 5, 1, 128, 1, w, 4, &ev);
    assert_true(ev.all_known);
    /* elements [1024c, 1024c+512) and [1024c+512, 1024c+1024) of each CTA c */
    expect_range(&ev, 0, B0, B0 + 4 * 5120 - 2048, 0, false, false);
    expect_range(&ev, 5, B2 + 2048, B2 + 4 * 5120, 2, false, false);
    assert_int_equal(ev.ranges[5].coef[0], 16);
    assert_int_equal(ev.ranges[5].coef[3], 4096);
    assert_int_equal(ev.ranges[5].c0, 2048);
    assert_int_equal(ev.ranges[4].cta_hi - ev.ranges[4].cta_lo, 2048);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* ---- what stays unknown, and why ---------------------------------------------------- */

static void test_unknown_reasons(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    sg_access_eval_t ev;
    /* out[i] = rows[i][0]: the second load's address comes from the first */
    analyze("access_kernels.sm90.ptx", "ptr_table", &k);
    assert_int_equal(k.n_sites, 3);
    expect_site(&k, 0, SG_ACCESS_LOAD, 8, 0, "8*tid.x + 8*ntid.x*ctaid.x");
    assert_int_equal(k.sites[1].reason, SG_ACCESS_R_LOADED_ADDRESS);
    assert_int_equal(k.sites[1].base_kind, SG_ACCESS_BASE_NONE);
    assert_non_null(strstr(k.sites[1].detail, "loaded from memory"));
    const word_t w[] = {{0, 8, B0}, {8, 8, B1}, {16, 8, 100}};
    launch(&k, 1, 1, 128, 1, w, 3, &ev);
    assert_false(ev.all_known);
    assert_int_equal(ev.n_unknown, 1);
    assert_int_equal(ev.ranges[1].status, SG_ACCESS_ST_UNKNOWN);
    assert_non_null(strstr(ev.reason, "address loaded from memory"));
    expect_range(&ev, 2, B1, B1 + 400, 1, true, true);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* out[i] = src[idx[i]]: the base is known, the offset depends on data */
    analyze("access_kernels.sm90.ptx", "gather", &k);
    assert_int_equal(k.sites[1].reason, SG_ACCESS_R_DATA_DEPENDENT);
    assert_int_equal(k.sites[1].base_kind, SG_ACCESS_BASE_PARAM);
    assert_int_equal(k.sites[1].base_param, 8);
    sg_access_kernel_free(&k);

    /* a histogram: atomics at data-dependent bins, and one counter */
    analyze("access_kernels.sm90.ptx", "histo", &k);
    assert_int_equal(k.n_sites, 3);
    assert_int_equal(k.sites[1].kind, SG_ACCESS_ATOMIC);
    assert_int_equal(k.sites[1].reason, SG_ACCESS_R_DATA_DEPENDENT);
    expect_site(&k, 2, SG_ACCESS_ATOMIC, 8, 24, "0");
    assert_true(k.flags & (1ull << SG_ACCESS_F_ATOMIC));
    const word_t wh[] = {{0, 8, B0}, {8, 8, B1}, {16, 8, 1000}, {24, 8, B2 + 8}};
    launch(&k, 4, 1, 256, 1, wh, 4, &ev);
    expect_range(&ev, 0, B1, B1 + 1000, 1, true, true);
    expect_range(&ev, 2, B2 + 8, B2 + 16, 2, true, true);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);

    /* a pointer handed to a function the analysis does not follow */
    analyze("access_kernels.sm90.ptx", "calls_func", &k);
    bool call = false;
    for (uint32_t s = 0; s < k.n_sites; s++)
        if (k.sites[s].kind == SG_ACCESS_CALL) {
            call = true;
            assert_int_equal(k.sites[s].reason, SG_ACCESS_R_CALL);
            assert_int_equal(k.sites[s].base_param, 8);
            assert_non_null(strstr(k.sites[s].detail, "_Z6helperPKfi"));
        }
    assert_true(call);
    assert_true(k.flags & (1ull << SG_ACCESS_F_CALL));
    sg_access_kernel_free(&k);

    analyze("access_kernels.sm90.ptx", "tex_read", &k);
    assert_int_equal(k.sites[0].reason, SG_ACCESS_R_TEXTURE);
    assert_true(k.flags & (1ull << SG_ACCESS_F_TEXTURE));
    sg_access_kernel_free(&k);

    /* strided CuPy views take an index apart with rem: not affine */
    analyze("cupy_elementwise.ptx", "cupy_scale_2d", &k);
    for (uint32_t s = 0; s < k.n_sites; s++) assert_int_not_equal(k.sites[s].reason, SG_ACCESS_OK);
    sg_access_kernel_free(&k);
}

static void test_loops_with_trip_counts(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    /* out[r] = sum over c < cols of m[r*cols + c], unrolled by 4 plus a remainder */
    analyze("access_kernels.sm90.ptx", "row_sum", &k);
    assert_int_equal(k.n_loops, 2);
    assert_true(k.loops[0].trip_uniform);
    assert_true(k.loops[1].trip_uniform);
    for (uint32_t s = 0; s < k.n_sites; s++) assert_int_equal(k.sites[s].reason, SG_ACCESS_OK);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B1}, {8, 8, B0}, {16, 4, 100}, {20, 4, 37}};
    launch(&k, 1, 1, 128, 1, w, 4, &ev);
    assert_true(ev.all_known);
    /* the unrolled part reads columns 0..35 in steps of 4 (site 0: 0, 4, .., 32) */
    expect_range(&ev, 0, B0, B0 + 4 * (99 * 37 + 32) + 4, 0, false, true);
    expect_range(&ev, 3, B0 + 12, B0 + 4 * (99 * 37 + 35) + 4, 0, false, true);
    /* the remainder reads column 36 of each row */
    expect_range(&ev, 4, B0 + 4 * 36, B0 + 4 * (99 * 37 + 36) + 4, 0, false, true);
    expect_range(&ev, 5, B1, B1 + 400, 1, true, true);
    sg_access_eval_free(&ev);
    /* cols = 0: only the store */
    const word_t w0[] = {{0, 8, B1}, {8, 8, B0}, {16, 4, 100}, {20, 4, 0}};
    launch(&k, 1, 1, 128, 1, w0, 4, &ev);
    for (uint32_t s = 0; s < 5; s++) assert_int_equal(ev.ranges[s].status, SG_ACCESS_ST_NEVER);
    expect_range(&ev, 5, B1, B1 + 400, 1, true, true);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* A loop whose bound is re-read from the parameters every iteration, with a
 * 32-bit counter: the trip count is the parameter. */
static void test_counted_loop(void **state)
{
    (void)state;
    const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                      ".visible .entry fill(.param .u64 p, .param .u32 n)\n{\n"
                      ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n"
                      "ld.param.u64 %rd1, [p];\nmov.u32 %r1, 0;\n"
                      "L:\nld.param.u32 %r2, [n];\nmul.wide.u32 %rd2, %r1, 4;\n"
                      "add.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r1;\n"
                      "add.s32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, %r2;\n@%p1 bra L;\nret;\n}\n";
    sg_access_kernel_t k;
    assert_int_equal(sg_access_analyze_text(ptx, strlen(ptx), "fill", &k), SG_OK);
    assert_int_equal(k.reason, SG_ACCESS_OK);
    assert_int_equal(k.n_loops, 1);
    assert_true(k.loops[0].trip_uniform);
    expect_site(&k, 0, SG_ACCESS_STORE, 4, 0, "4*K0");
    assert_true(k.sites[0].exact);
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B3}, {8, 4, 100}};
    launch(&k, 2, 1, 32, 1, w, 2, &ev);
    expect_range(&ev, 0, B3, B3 + 400, 3, true, true);
    assert_int_equal(ev.ranges[0].thread_hi - ev.ranges[0].thread_lo, 400); /* every thread, all of it */
    sg_access_eval_free(&ev);
    /* n = 0: the body still runs once (the test is at the bottom) */
    const word_t w0[] = {{0, 8, B3}, {8, 4, 0}};
    launch(&k, 1, 1, 1, 1, w0, 2, &ev);
    expect_range(&ev, 0, B3, B3 + 4, 3, true, true);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* ---- the facts fusion needs ---------------------------------------------------------- */

static bool has(const sg_access_kernel_t *k, sg_access_flag_t f)
{
    return (k->flags >> f) & 1u;
}

static void test_flags(void **state)
{
    (void)state;
    struct {
        const char *kernel;
        sg_access_flag_t flag;
    } want[] = {
        {"early_exit", SG_ACCESS_F_EXIT},          {"tex_read", SG_ACCESS_F_TEXTURE},
        {"dyn_smem", SG_ACCESS_F_DYN_SMEM_SIZE},   {"dyn_smem", SG_ACCESS_F_DYN_SHARED},
        {"uses_globals", SG_ACCESS_F_MODULE_GLOBAL}, {"calls_func", SG_ACCESS_F_CALL},
        {"prints", SG_ACCESS_F_RUNTIME_CALL},      {"prints", SG_ACCESS_F_LOCAL},
        {"ldg_axpy", SG_ACCESS_F_LDG_NC},          {"tile_shift", SG_ACCESS_F_SHARED},
        {"tile_shift", SG_ACCESS_F_BARRIER},       {"early_ret_barrier", SG_ACCESS_F_EARLY_RETURN},
        {"warp_sum", SG_ACCESS_F_ATOMIC},          {"warp_sum", SG_ACCESS_F_WARP},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sg_access_kernel_t k;
        analyze("access_kernels.sm90.ptx", want[i].kernel, &k);
        if (!has(&k, want[i].flag))
            fail_msg("%s lacks %s", want[i].kernel, sg_access_flag_name(want[i].flag));
        assert_true(k.flag_line[want[i].flag] > 0);
        sg_access_kernel_free(&k);
    }
    sg_access_kernel_t k;
    analyze("access_kernels.sm90.ptx", "tile_shift", &k);
    assert_false(has(&k, SG_ACCESS_F_EARLY_RETURN)); /* every thread reaches the barrier */
    assert_int_equal(k.static_shared_bytes, 1024);
    sg_access_kernel_free(&k);
    analyze("access_kernels.sm90.ptx", "gs_scale", &k);
    assert_int_equal(k.flags, 0);
    sg_access_kernel_free(&k);
    analyze("syntax_zoo.ptx", "zoo_matrix", &k);
    sg_access_flag_t zoo[] = {SG_ACCESS_F_ASYNC_PROXY, SG_ACCESS_F_CP_ASYNC, SG_ACCESS_F_MBARRIER,
                              SG_ACCESS_F_ENVREG, SG_ACCESS_F_CLUSTER, SG_ACCESS_F_CLOCK,
                              SG_ACCESS_F_PARAM_ADDRESS, SG_ACCESS_F_GRIDDEP,
                              SG_ACCESS_F_MODULE_GLOBAL, SG_ACCESS_F_LDG_NC, SG_ACCESS_F_ATOMIC,
                              SG_ACCESS_F_WARP /* mma, shfl, vote */};
    for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++)
        if (!has(&k, zoo[i])) fail_msg("zoo_matrix lacks %s", sg_access_flag_name(zoo[i]));
    /* the tensor-map copy is unknown; the bulk copy from shared memory is a store */
    bool tma = false, bulk = false;
    for (uint32_t s = 0; s < k.n_sites; s++) {
        tma |= k.sites[s].reason == SG_ACCESS_R_TEXTURE;
        bulk |= k.sites[s].kind == SG_ACCESS_STORE && k.sites[s].width == 256;
    }
    assert_true(tma && bulk);
    sg_access_kernel_free(&k);
    analyze("syntax_zoo.ptx", "zoo_control", &k);
    sg_access_flag_t ctl[] = {SG_ACCESS_F_EXIT, SG_ACCESS_F_TRAP, SG_ACCESS_F_CALL,
                              SG_ACCESS_F_INDIRECT_CALL, SG_ACCESS_F_RUNTIME_CALL,
                              SG_ACCESS_F_DYN_SMEM_SIZE, SG_ACCESS_F_DYN_SHARED, SG_ACCESS_F_LOCAL,
                              SG_ACCESS_F_INDIRECT_BRANCH};
    for (size_t i = 0; i < sizeof ctl / sizeof ctl[0]; i++)
        if (!has(&k, ctl[i])) fail_msg("zoo_control lacks %s", sg_access_flag_name(ctl[i]));
    sg_access_kernel_free(&k);
}

/* A PTX entry "k" from a body (the module header and declarations around it). */
static void analyze_body(const char *params, const char *body, sg_access_kernel_t *k)
{
    char text[4096];
    int n = snprintf(text, sizeof text,
                     ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(%s)\n{\n"
                     ".reg .pred %%p<4>;\n.reg .b32 %%r<16>;\n.reg .b64 %%rd<32>;\n.reg .f32 %%f<4>;\n"
                     "%s\n}\n",
                     params, body);
    assert_true(n > 0 && (size_t)n < sizeof text);
    assert_int_equal(sg_access_analyze_text(text, (size_t)n, "k", k), SG_OK);
    if (k->status) fail_msg("%s", k->detail);
}

/* Barriers: a thread that passes the first and skips the second is out of
 * step too (the flag fusion uses to keep barriers in every thread). */
static void test_barrier_skipped(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze_body(".param .u32 n",
                 "ld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\nbar.sync 0;\n"
                 "setp.ge.u32 %p1, %r2, %r1;\n@%p1 bra DONE;\nbar.sync 0;\nDONE:\nret;",
                 &k);
    assert_true(has(&k, SG_ACCESS_F_BARRIER));
    assert_true(has(&k, SG_ACCESS_F_EARLY_RETURN));
    assert_int_equal(k.flag_line[SG_ACCESS_F_EARLY_RETURN], 15); /* the second bar.sync */
    sg_access_kernel_free(&k);
    /* both barriers in every thread: none skipped */
    analyze_body(".param .u32 n",
                 "ld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\nbar.sync 0;\n"
                 "setp.ge.u32 %p1, %r2, %r1;\n@%p1 bra SKIP;\nadd.u32 %r3, %r2, 1;\nSKIP:\n"
                 "bar.sync 0;\nret;",
                 &k);
    assert_true(has(&k, SG_ACCESS_F_BARRIER));
    assert_false(has(&k, SG_ACCESS_F_EARLY_RETURN));
    sg_access_kernel_free(&k);
    /* dynamic stack */
    analyze_body(".param .u32 n", "ld.param.u32 %r1, [n];\nalloca.u64 %rd1, %r1;\nret;", &k);
    assert_true(has(&k, SG_ACCESS_F_DYN_STACK));
    sg_access_kernel_free(&k);
    analyze_body("", "mov.u32 %r1, %laneid;\nret;", &k);
    assert_true(has(&k, SG_ACCESS_F_WARP));
    sg_access_kernel_free(&k);
}

/* NVVM sign-extends a 32-bit index product as (x << 32) >> 32, the shifted
 * value being the loop's induction (CuPy's 32-bit indexing): the offset is
 * x only while x fits 32 bits, so that is checked, for every iteration. */
static const char SEXT_LOOP[] =
    "ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [n];\nld.param.u64 %rd3, [s];\n"
    "mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmul.wide.u32 %rd4, %r1, %r2;\n"
    "mov.u32 %r3, %tid.x;\ncvt.u64.u32 %rd5, %r3;\nadd.s64 %rd6, %rd4, %rd5;\n"
    "setp.ge.s64 %p1, %rd6, %rd2;\n@%p1 bra DONE;\ncvta.to.global.u64 %rd7, %rd1;\n"
    "mov.u32 %r4, %nctaid.x;\ncvt.u64.u32 %rd8, %r4;\ncvt.u64.u32 %rd9, %r2;\n"
    "mul.lo.s64 %rd10, %rd9, %rd8;\nmul.lo.s64 %rd11, %rd3, %rd6;\nshl.b64 %rd12, %rd11, 32;\n"
    "mul.lo.s64 %rd13, %rd3, %rd10;\nshl.b64 %rd14, %rd13, 32;\nLOOP:\n"
    "shr.s64 %rd15, %rd12, 32;\nadd.s64 %rd16, %rd7, %rd15;\nld.global.f32 %f1, [%rd16];\n"
    "add.s64 %rd12, %rd12, %rd14;\nadd.s64 %rd6, %rd6, %rd10;\nsetp.lt.s64 %p2, %rd6, %rd2;\n"
    "@%p2 bra LOOP;\nDONE:\nret;";

static void test_sext_index(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze_body(".param .u64 a, .param .u64 n, .param .u64 s", SEXT_LOOP, &k);
    assert_int_equal(k.n_sites, 1);
    expect_site(&k, 0, SG_ACCESS_LOAD, 4, 0,
                "tid.x*p[16:u64] + ntid.x*ctaid.x*p[16:u64] + ntid.x*nctaid.x*p[16:u64]*K0");
    assert_int_equal(k.sites[0].n_checks, 1);
    char c[200];
    sg_access_cond_format(&k.conds[k.sites[0].first_check], c, sizeof c);
    assert_string_equal(c, "tid.x*p[16:u64] + ntid.x*ctaid.x*p[16:u64] + ntid.x*nctaid.x*p[16:u64]*K0 fits s32");
    /* 1M floats: every byte offset fits; a grid-stride loop of 4 blocks of 128 */
    sg_access_eval_t ev;
    const word_t w[] = {{0, 8, B0}, {8, 8, 1u << 20}, {16, 8, 4}};
    launch(&k, 4, 1, 128, 1, w, 3, &ev);
    assert_true(ev.all_known);
    expect_range(&ev, 0, B0, B0 + (4u << 20), 0, true, true);
    assert_int_equal(ev.ranges[0].loop, 0);
    assert_int_equal(ev.ranges[0].loop_coef, 4 * 512);
    sg_access_eval_free(&ev);
    /* 1G floats: offsets past 2^31 wrap in the machine, so the range is unknown */
    const word_t big[] = {{0, 8, B0}, {8, 8, 1u << 30}, {16, 8, 4}};
    launch(&k, 4, 1, 128, 1, big, 3, &ev);
    assert_false(ev.all_known);
    assert_int_equal(ev.ranges[0].reason, SG_ACCESS_R_WRAP);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* ---- the SASS path's builder, the cache, layouts ------------------------------------------ */

static void test_sass_builder(void **state)
{
    (void)state;
    /* what the SASS helper reports for k_axpb: a load at param 8, a store at
       param 0, 4 bytes, the plain pattern bounded by the u64 at 24 */
    sg_access_kernel_t s;
    memset(&s, 0, sizeof s);
    s.source = SG_ACCESS_SOURCE_SASS;
    uint32_t offs[] = {0, 8, 16, 20, 24}, sizes[] = {8, 8, 4, 4, 8};
    s.n_params = 5;
    s.param_offsets = malloc(sizeof offs);
    s.param_sizes = malloc(sizeof sizes);
    memcpy(s.param_offsets, offs, sizeof offs);
    memcpy(s.param_sizes, sizes, sizeof sizes);
    s.params_size = 32;
    assert_int_equal(sg_access_site_gid1d(&s, SG_ACCESS_LOAD, 8, 4, 24, 8, false), SG_OK);
    assert_int_equal(sg_access_site_gid1d(&s, SG_ACCESS_STORE, 0, 4, 24, 8, false), SG_OK);
    assert_int_equal(s.sites[0].param_index, 1);
    sg_access_kernel_t p;
    analyze("sample_fork_join.sm90.ptx", "_Z6k_axpbPfPKfffm", &p);
    const word_t w[] = {{0, 8, B1}, {8, 8, B0}, {24, 8, 777}};
    sg_access_eval_t es, ep;
    launch(&s, 4, 1, 256, 1, w, 3, &es);
    launch(&p, 4, 1, 256, 1, w, 3, &ep);
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(es.ranges[i].lo, ep.ranges[i].lo);
        assert_int_equal(es.ranges[i].hi, ep.ranges[i].hi);
        assert_int_equal(es.ranges[i].dense, ep.ranges[i].dense);
        assert_int_equal(es.ranges[i].exact, ep.ranges[i].exact);
    }
    expect_range(&es, 0, B0, B0 + 777 * 4, 0, true, true);
    sg_access_eval_free(&es);
    sg_access_eval_free(&ep);
    /* a 32-bit bound is checked against wrapping */
    sg_access_kernel_t s32;
    memset(&s32, 0, sizeof s32);
    s32.params_size = 12;
    assert_int_equal(sg_access_site_gid1d(&s32, SG_ACCESS_STORE, 0, 4, 8, 4, true), SG_OK);
    assert_int_equal(s32.sites[0].n_conds, 1);
    assert_int_equal(s32.conds[s32.sites[0].first_cond].n_checks, 2); /* gid and bound fit */
    assert_int_equal(sg_access_site_gid1d(&s32, SG_ACCESS_STORE, 0, 0, 8, 4, true), SG_EINVAL);
    sg_access_kernel_free(&s32);
    sg_access_kernel_free(&s);
    sg_access_kernel_free(&p);
}

/* The parameter bytes the analysis reads: k_axpb(y, x, m, add, n) depends
 * on its two pointers and its bound, never on the scalars m and add (what
 * an exec update of a fused stage may change). */
static void test_param_mask(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze("sample_fork_join.sm90.ptx", "_Z6k_axpbPfPKfffm", &k);
    assert_int_equal(k.params_size, 32);
    uint8_t mask[32 + 4];
    memset(mask, 7, sizeof mask);
    memset(mask, 0, 32);
    sg_access_param_mask(&k, mask, 32);
    for (int i = 0; i < 32; i++)
        if (mask[i] != (i < 16 || i >= 24)) fail_msg("byte %d: mask %u", i, mask[i]);
    assert_int_equal(mask[32], 7); /* nothing past size */
    memset(mask, 0, 32);
    sg_access_param_mask(&k, mask, 12); /* a short buffer: only what fits */
    for (int i = 0; i < 32; i++) assert_int_equal(mask[i], i < 12);
    sg_access_kernel_free(&k);
}

static void test_cache_and_layout(void **state)
{
    (void)state;
    uint32_t o1[] = {0, 8}, s1[] = {8, 8}, s2[] = {8, 4};
    char a[17], b[17], c[17], d[17];
    sg_access_key("0123456789abcdef", "k", 2, o1, s1, a);
    sg_access_key("0123456789abcdef", "k", 2, o1, s2, b);
    sg_access_key("0123456789abcdee", "k", 2, o1, s1, c);
    sg_access_key("0123456789abcdef", "k2", 2, o1, s1, d);
    assert_int_equal(strlen(a), 16);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, c);
    assert_string_not_equal(a, d);
    sg_access_key("0123456789abcdef", "k", 2, o1, s1, b);
    assert_string_equal(a, b);
    sg_access_cache_t *cache = sg_access_cache_create();
    sg_access_kernel_t k;
    analyze("sample_fork_join.sm90.ptx", "_Z8k_squarePfm", &k);
    assert_null(sg_access_cache_get(cache, a));
    assert_int_equal(sg_access_cache_put(cache, a, &k), SG_OK);
    assert_null(k.sites); /* ownership moved */
    const sg_access_kernel_t *got = sg_access_cache_get(cache, a);
    assert_non_null(got);
    assert_string_equal(got->kernel, "_Z8k_squarePfm");
    sg_access_kernel_t again;
    analyze("sample_fork_join.sm90.ptx", "_Z8k_squarePfm", &again);
    assert_int_equal(sg_access_cache_put(cache, a, &again), SG_EEXIST);
    sg_access_kernel_free(&again);
    /* a node whose captured layout is not the code's: nothing known */
    sg_kernel_t node;
    memset(&node, 0, sizeof node);
    uint32_t offs[] = {0, 8}, sizes[] = {8, 4};
    uint8_t bytes[16] = {0};
    node.grid[0] = node.grid[1] = node.grid[2] = 1;
    node.block[0] = node.block[1] = node.block[2] = 32;
    node.n_params = 2;
    node.param_offsets = offs;
    node.param_sizes = sizes;
    node.param_bytes = bytes;
    node.params_size = 16;
    sg_access_eval_t ev;
    assert_int_equal(sg_access_eval(got, &node, BUFS, 4, &ev), SG_OK);
    assert_false(ev.all_known);
    assert_int_equal(ev.ranges[0].reason, SG_ACCESS_R_PARAMS);
    sg_access_eval_free(&ev);
    sg_access_cache_destroy(cache);
    assert_int_equal(sg_access_eval(NULL, &node, BUFS, 4, &ev), SG_EINVAL);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    assert_int_equal(sg_access_analyze_text("garbage", 7, "k", &k), SG_OK);
    assert_int_equal(k.status, SG_EFORMAT);
    assert_int_equal(k.reason, SG_ACCESS_R_PARSE);
    assert_non_null(strstr(k.detail, "1:1:"));
    assert_int_equal(k.n_sites, 0);
    sg_access_kernel_free(&k);
    /* huge: refused by size before a byte is read */
    assert_int_equal(sg_access_analyze_text("x", (size_t)1 << 40, "k", &k), SG_OK);
    assert_int_equal(k.status, SG_EFORMAT);
    assert_int_equal(k.reason, SG_ACCESS_R_PARSE);
    assert_non_null(strstr(k.detail, "limit"));
    sg_access_kernel_free(&k);
    size_t len;
    char *text = read_fixture("access_kernels.sm90.ptx", &len);
    assert_int_equal(sg_access_analyze_text(text, len, "no_such_kernel", &k), SG_OK);
    assert_int_equal(k.status, SG_ENOENT);
    assert_int_equal(k.reason, SG_ACCESS_R_NO_CODE);
    sg_access_kernel_free(&k);
    /* every prefix: a result with a reason or a parse error, never a crash */
    uint32_t parsed = 0;
    for (size_t cut = 0; cut < len; cut += 1 + cut % 97) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, text, cut);
        assert_int_equal(sg_access_analyze_text(copy, cut, "row_sum", &k), SG_OK);
        if (k.status == SG_OK) {
            parsed++;
            for (uint32_t s = 0; s < k.n_sites; s++)
                if (k.sites[s].reason) assert_true(k.sites[s].detail[0] != '\0');
        } else {
            assert_true(k.status == SG_EFORMAT || k.status == SG_ENOENT);
        }
        sg_access_kernel_free(&k);
        free(copy);
    }
    assert_true(parsed > 0);
    free(text);
    /* a kernel the analysis cannot follow still lists its accesses */
    const char *irreducible =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry irr(.param .u64 p, .param .u32 c)\n{\n"
        ".reg .pred %p<2>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n"
        "ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [c];\n"
        "setp.eq.s32 %p1, %r1, 0;\n@%p1 bra B;\n"
        "A:\nst.global.u32 [%rd1], %r1;\nbra B;\n"
        "B:\nst.global.u32 [%rd1+4], %r1;\nsetp.ne.s32 %p1, %r1, 7;\n@%p1 bra A;\nret;\n}\n";
    assert_int_equal(sg_access_analyze_text(irreducible, strlen(irreducible), "irr", &k), SG_OK);
    assert_int_equal(k.status, SG_OK);
    assert_int_equal(k.reason, SG_ACCESS_R_CONTROL_FLOW);
    assert_int_equal(k.n_sites, 2);
    assert_int_equal(k.sites[0].reason, SG_ACCESS_R_CONTROL_FLOW);
    sg_kernel_t node;
    memset(&node, 0, sizeof node);
    uint8_t bytes[16] = {0};
    node.grid[0] = node.grid[1] = node.grid[2] = 1;
    node.block[0] = node.block[1] = node.block[2] = 1;
    node.param_bytes = bytes;
    node.params_size = 12;
    sg_access_eval_t ev;
    assert_int_equal(sg_access_eval(&k, &node, BUFS, 4, &ev), SG_OK);
    assert_false(ev.all_known);
    assert_non_null(strstr(ev.reason, "irreducible"));
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

/* A bound (not exact: the store is conditional on data the analysis cannot
 * see) whose whole range lies outside the buffer its base points into, the
 * base inside b0 and the offset a parameter far past b0's end: unknown, not
 * clipped to an inverted range (found by fuzz_ptx). */
static void test_bound_outside_buffer(void **state)
{
    (void)state;
    sg_access_kernel_t k;
    analyze_body(".param .u64 p, .param .u64 q, .param .u64 c",
                 "ld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [q];\nld.param.u64 %rd3, [c];\n"
                 "ld.global.u32 %r1, [%rd3];\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra DONE;\n"
                 "shl.b64 %rd4, %rd2, 2;\nadd.s64 %rd5, %rd1, %rd4;\nst.global.u32 [%rd5], %r1;\n"
                 "DONE:\nret;",
                 &k);
    const word_t w[] = {{0, 8, B0}, {8, 8, (uint64_t)BSZ}, {16, 8, B1}};
    sg_access_eval_t ev;
    launch(&k, 1, 1, 32, 1, w, 3, &ev);
    uint32_t store = k.sites[0].kind == SG_ACCESS_STORE ? 0 : 1;
    assert_int_equal(k.sites[store].kind, SG_ACCESS_STORE);
    const sg_access_range_t *r = &ev.ranges[store];
    if (r->status == SG_ACCESS_ST_KNOWN) {
        /* exact: the range is the true one, beyond b0, never inverted */
        assert_true(r->lo < r->hi);
        assert_int_equal(r->lo, (uint64_t)B0 + 4ull * BSZ);
    } else {
        assert_int_equal(r->status, SG_ACCESS_ST_UNKNOWN);
        assert_int_not_equal(r->reason, SG_ACCESS_OK);
    }
    assert_false(ev.all_known && r->status != SG_ACCESS_ST_KNOWN);
    sg_access_eval_free(&ev);
    sg_access_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axpb),
        cmocka_unit_test(test_bound_outside_buffer),
        cmocka_unit_test(test_samples_all_known),
        cmocka_unit_test(test_chain_in_place),
        cmocka_unit_test(test_stencil),
        cmocka_unit_test(test_grid_stride),
        cmocka_unit_test(test_vectors_and_2d),
        cmocka_unit_test(test_struct_pointers),
        cmocka_unit_test(test_triton),
        cmocka_unit_test(test_unknown_reasons),
        cmocka_unit_test(test_loops_with_trip_counts),
        cmocka_unit_test(test_counted_loop),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_barrier_skipped),
        cmocka_unit_test(test_sext_index),
        cmocka_unit_test(test_sass_builder),
        cmocka_unit_test(test_param_mask),
        cmocka_unit_test(test_cache_and_layout),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
