/* test_replay.c: unit tests of replay/'s CPU half: snapshot comparison
 * (bitwise and ULP, with the float edge cases: NaN, -0, denormals, sign
 * crossings, infinities), memory regions, the relocation scanner (which
 * parameter words move, alignment, aliasing, end pointers, nesting,
 * conditional handles), the in-process-only classification, and the trace
 * JSON's shape. The GPU half is tested by tests/gpu/replay.cmake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "replay/replay.h"

/* ---- helpers ---------------------------------------------------------------- */

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static sg_node_id_t add_node(sg_graph_t *g, sg_node_type_t t, uint32_t stream, uint64_t seq)
{
    sg_node_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_node(g, t, stream, seq, &id), SG_OK);
    return id;
}

static void put64(uint8_t *b, uint32_t off, uint64_t v)
{
    memcpy(b + off, &v, 8);
}

static uint64_t get64(const uint8_t *b, uint32_t off)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}

static uint32_t add_image(sg_graph_t *g, bool with_file)
{
    uint32_t id;
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_FATBIN, "0123456789abcdef", 100, &id), SG_OK);
    if (with_file) g->images[id].file = strdup("code/0123456789abcdef.fatbin");
    return id;
}

/* A launchable kernel node: name, image, geometry, one pointer parameter. */
static sg_node_id_t add_kernel(sg_graph_t *g, uint32_t stream, uint64_t seq, const char *name,
                               uint32_t image, uint64_t ptr)
{
    sg_node_id_t id = add_node(g, SG_NODE_KERNEL, stream, seq);
    assert_int_equal(sg_node_set_kernel_name(g, id, name), SG_OK);
    sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
    k->image = image;
    for (int i = 0; i < 3; i++)
        k->grid[i] = k->block[i] = 1;
    uint8_t bytes[8];
    put64(bytes, 0, ptr);
    uint32_t off = 0, sz = 8;
    assert_int_equal(sg_node_set_kernel_params(g, id, 1, &off, &sz, bytes, 8), SG_OK);
    return id;
}

/* ---- comparison -------------------------------------------------------------------- */

static void test_ulp_distance(void **state)
{
    (void)state;
    float denorm_min = from_bits(1), neg_denorm_min = from_bits(0x80000001u);
    float largest_denorm = from_bits(0x007fffffu);
    assert_int_equal(sg_float32_ulp_distance(1.0f, 1.0f), 0);
    assert_int_equal(sg_float32_ulp_distance(1.0f, nextafterf(1.0f, 2.0f)), 1);
    assert_int_equal(sg_float32_ulp_distance(nextafterf(1.0f, 0.0f), 1.0f), 1);
    /* +0 and -0 are the same number */
    assert_int_equal(sg_float32_ulp_distance(0.0f, -0.0f), 0);
    /* across the sign: through zero, counting both denormal steps */
    assert_int_equal(sg_float32_ulp_distance(denorm_min, neg_denorm_min), 2);
    assert_int_equal(sg_float32_ulp_distance(denorm_min, 0.0f), 1);
    assert_int_equal(sg_float32_ulp_distance(-0.0f, denorm_min), 1);
    assert_int_equal(sg_float32_ulp_distance(1.0f, -1.0f), 2ull * 0x3f800000u);
    /* denormal to normal is one step like any other */
    assert_int_equal(sg_float32_ulp_distance(largest_denorm, FLT_MIN), 1);
    /* NaN: equal to any NaN, infinitely far from any number */
    float qnan = from_bits(0x7fc00000u), other_nan = from_bits(0xffc00123u);
    assert_int_equal(sg_float32_ulp_distance(qnan, other_nan), 0);
    assert_true(sg_float32_ulp_distance(qnan, 1.0f) == SG_ULP_INF);
    assert_true(sg_float32_ulp_distance(0.0f, qnan) == SG_ULP_INF);
    /* an overflow is not one ULP */
    assert_true(sg_float32_ulp_distance(FLT_MAX, INFINITY) == SG_ULP_INF);
    assert_int_equal(sg_float32_ulp_distance(INFINITY, INFINITY), 0);
    assert_true(sg_float32_ulp_distance(-INFINITY, INFINITY) == SG_ULP_INF);
}

static void test_compare_bitwise(void **state)
{
    (void)state;
    float want[4] = {1.0f, 2.0f, 0.0f, 4.0f};
    float got[4] = {1.0f, 2.0f, 0.0f, 4.0f};
    sg_compare_options_t bitwise = {0};
    sg_compare_result_t r;
    sg_compare_buffers(got, want, sizeof got, &bitwise, &r);
    assert_int_equal(r.bytes, 16);
    assert_int_equal(r.mismatches, 0);
    assert_true(r.first_mismatch == UINT64_MAX);

    /* -0 differs from +0 bit for bit: only the sign byte (little endian) */
    got[2] = -0.0f;
    sg_compare_buffers(got, want, sizeof got, &bitwise, &r);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 2 * 4 + 3);
    assert_true(r.as_float);
    assert_int_equal(r.max_ulp, 0);
    assert_true(r.max_abs == 0.0);

    /* one ULP off: every byte that differs counts, the float view says 1 ULP */
    got[2] = 0.0f;
    got[1] = nextafterf(2.0f, 3.0f);
    sg_compare_buffers(got, want, sizeof got, &bitwise, &r);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 4);
    assert_int_equal(r.max_ulp, 1);
    assert_true(r.max_abs > 0.0 && r.max_abs < 1e-6);

    /* odd sizes have no float view */
    unsigned char a[5] = {1, 2, 3, 4, 5}, b[5] = {1, 2, 3, 4, 6};
    sg_compare_buffers(a, b, 5, &bitwise, &r);
    assert_false(r.as_float);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 4);
    /* NULL options mean bitwise */
    sg_compare_buffers(a, b, 5, NULL, &r);
    assert_int_equal(r.mismatches, 1);
}

static void test_compare_ulp(void **state)
{
    (void)state;
    float want[8], got[8];
    for (int i = 0; i < 8; i++)
        want[i] = got[i] = (float)i * 0.5f + 1.0f;
    got[2] = nextafterf(want[2], 100.0f);                          /* 1 ULP */
    got[5] = nextafterf(nextafterf(nextafterf(want[5], 0), 0), 0); /* 3 ULP */
    sg_compare_options_t tol2 = {.float32 = true, .ulp = 2};
    sg_compare_result_t r;
    sg_compare_buffers(got, want, sizeof got, &tol2, &r);
    assert_int_equal(r.elements, 8);
    assert_int_equal(r.differing, 2);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 5);
    assert_int_equal(r.max_ulp, 3);
    assert_true(r.max_abs > 0 && r.max_abs < 1e-5);
    sg_compare_options_t tol3 = {.float32 = true, .ulp = 3};
    sg_compare_buffers(got, want, sizeof got, &tol3, &r);
    assert_int_equal(r.mismatches, 0);
    assert_int_equal(r.differing, 2);

    /* ulp=0 still treats -0 == +0 and NaN == NaN (payloads differ) */
    float w2[4] = {0.0f, from_bits(0x7fc00000u), 1.0f, from_bits(1)};
    float g2[4] = {-0.0f, from_bits(0x7fc00001u), 1.0f, from_bits(0x80000001u)};
    sg_compare_options_t tol0 = {.float32 = true, .ulp = 0};
    sg_compare_buffers(g2, w2, sizeof g2, &tol0, &r);
    /* only the denormal pair (2 ULP across zero) is a mismatch */
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 3);
    assert_int_equal(r.max_ulp, 2);
    sg_compare_buffers(g2, w2, sizeof g2, &tol2, &r);
    assert_int_equal(r.mismatches, 0);
    assert_int_equal(r.differing, 1);

    /* a NaN where a number was: a mismatch at any tolerance, abs diff ignores it */
    float w3[2] = {1.0f, 2.0f}, g3[2] = {1.0f, from_bits(0x7fc00000u)};
    sg_compare_options_t big = {.float32 = true, .ulp = 1u << 30};
    sg_compare_buffers(g3, w3, sizeof g3, &big, &r);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 1);
    assert_true(r.max_ulp == SG_ULP_INF);
    assert_true(r.max_abs == 0.0);
    /* overflow to infinity */
    float g4[2] = {1.0f, INFINITY}, w4[2] = {1.0f, FLT_MAX};
    sg_compare_buffers(g4, w4, sizeof g4, &big, &r);
    assert_int_equal(r.mismatches, 1);
    assert_true(isinf(r.max_abs));

    /* a tail shorter than a float is compared bitwise as one more element */
    unsigned char t1[10] = {0}, t2[10] = {0};
    t2[9] = 1;
    sg_compare_buffers(t1, t2, 10, &tol2, &r);
    assert_int_equal(r.elements, 2);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_mismatch, 2);
}

static void test_median(void **state)
{
    (void)state;
    double a[5] = {5, 1, 4, 2, 3};
    assert_true(sg_replay_median(a, 5) == 3.0);
    double b[4] = {10, 1, 3, 2};
    assert_true(sg_replay_median(b, 4) == 2.5);
    assert_true(sg_replay_median(NULL, 0) == 0.0);
}

/* ---- regions --------------------------------------------------------------------------- */

static void test_regions(void **state)
{
    (void)state;
    const uint64_t G2M = 0x200000;
    sg_graph_t *g = sg_graph_create();
    uint32_t b;
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000200, 0x1000, &b);    /* b0 */
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000100000, 0x200000, &b);  /* b1: 2 granules */
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0001000000, 16, &b);        /* b2 apart */
    sg_graph_add_buffer(g, SG_BUFFER_HOST_PINNED, 0x5010, 100, &b);          /* b3 host */
    sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x7f0002000000, 4096, &b); /* b4 no region */
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0003000000, 0, &b);         /* b5 empty */
    sg_graph_add_buffer(g, SG_BUFFER_MANAGED, 0x7f0000400000, 0x10, &b);     /* b6 touches */
    sg_region_t *r = NULL;
    uint32_t n = 0;
    assert_int_equal(sg_replay_plan_regions(g, G2M, 4096, &r, &n), SG_OK);
    assert_int_equal(n, 3);
    /* b0, b1 and b6 merge: overlapping granules, then a touching one */
    assert_false(r[0].host);
    assert_true(r[0].base == 0x7f0000000000);
    assert_true(r[0].size == 0x600000);
    assert_int_equal(r[0].n_buffers, 3);
    assert_true(r[1].base == 0x7f0001000000 && r[1].size == G2M);
    assert_int_equal(r[1].n_buffers, 1);
    assert_true(r[2].host);
    assert_true(r[2].base == 0x5000 && r[2].size == 4096);
    assert_int_equal(sg_region_find(r, n, 0x7f0000100000, 0x200000, false), 0);
    assert_int_equal(sg_region_find(r, n, 0x5010, 100, true), 2);
    assert_true(sg_region_find(r, n, 0x5010, 100, false) == SG_NONE);
    assert_true(sg_region_find(r, n, 0x7f0002000000, 4096, false) == SG_NONE);
    free(r);
    /* granularity must be a power of two */
    assert_int_equal(sg_replay_plan_regions(g, 3000, 4096, &r, &n), SG_EINVAL);
    /* a range that wraps around is refused */
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, UINT64_MAX - 10, 100, &b);
    assert_int_equal(sg_replay_plan_regions(g, G2M, 4096, &r, &n), SG_EINVAL);
    assert_null(r);
    sg_graph_destroy(g);
}

/* ---- relocation ----------------------------------------------------------------------- */

#define A_OLD 0x7f0000001000ull
#define A_NEW 0x7e0000009000ull
#define B_OLD 0x7f0000002000ull

static void make_map(sg_reloc_map_t *m)
{
    sg_reloc_map_init(m);
    assert_int_equal(sg_reloc_map_add(m, 0, A_OLD, 0x100, A_NEW), SG_OK); /* moved */
    assert_int_equal(sg_reloc_map_add(m, 1, B_OLD, 0x100, B_OLD), SG_OK); /* stayed */
}

static void test_reloc_params(void **state)
{
    (void)state;
    sg_reloc_map_t m;
    make_map(&m);
    uint8_t bytes[64];
    memset(bytes, 0, sizeof bytes);
    put64(bytes, 0, A_OLD + 0x10);    /* p0 pointer into A: moves */
    uint32_t small = (uint32_t)A_OLD; /* p1: 4 bytes that look like A's low half */
    memcpy(bytes + 8, &small, 4);
    put64(bytes, 16, B_OLD + 8);    /* p2 pointer into B: B did not move */
    put64(bytes, 24, A_OLD + 0x50); /* p3 a u64 "integer" equal to an address in A: aliases */
    /* p4 a 16-byte struct {float, float, const float *} at 32: its pointer at 40 */
    float f2[2] = {1.5f, 2.5f};
    memcpy(bytes + 32, f2, 8);
    put64(bytes, 40, A_OLD + 0x20);
    put64(bytes, 48, A_OLD + 0x100); /* p5 one past A's end */
    /* p6 12 bytes at 52: an address at unaligned 52 is not a pointer slot;
     * the aligned word at 56 is inside it and is scanned */
    put64(bytes, 56, 0x1234); /* nothing there */
    uint32_t offs[] = {0, 8, 16, 24, 32, 48, 56}, sizes[] = {8, 4, 8, 8, 16, 8, 8};
    sg_kernel_t k;
    memset(&k, 0, sizeof k);
    k.n_params = 7;
    k.param_offsets = offs;
    k.param_sizes = sizes;
    k.param_bytes = bytes;
    k.params_size = 64;
    uint8_t copy[64];
    memcpy(copy, bytes, 64);
    sg_reloc_report_t rep = {0};
    int moved = sg_reloc_kernel_params(&m, &k, copy, "n3", &rep);
    assert_int_equal(moved, 4);
    assert_true(get64(copy, 0) == A_NEW + 0x10);
    assert_memory_equal(copy + 8, &small, 4);
    assert_true(get64(copy, 16) == B_OLD + 8);
    assert_true(get64(copy, 24) == A_NEW + 0x50);
    assert_memory_equal(copy + 32, f2, 8);
    assert_true(get64(copy, 40) == A_NEW + 0x20);
    assert_true(get64(copy, 48) == A_NEW + 0x100);
    assert_int_equal(rep.n, 4);
    assert_string_equal(rep.entries[0].node, "n3");
    assert_int_equal(rep.entries[0].param, 0);
    assert_int_equal(rep.entries[0].offset, 0);
    assert_int_equal(rep.entries[2].param, 4);
    assert_int_equal(rep.entries[2].offset, 40);
    assert_true(rep.entries[3].one_past_end);
    assert_int_equal(rep.entries[3].buffer, 0);
    /* the caller's bytes are untouched */
    assert_true(get64(bytes, 0) == A_OLD + 0x10);

    /* unaligned: a parameter at offset 4 of size 8 holds no aligned word */
    uint8_t ub[16] = {0};
    put64(ub, 4, A_OLD);
    uint32_t uoff = 4, usz = 8;
    sg_kernel_t ku = {.n_params = 1,
                      .param_offsets = &uoff,
                      .param_sizes = &usz,
                      .param_bytes = ub,
                      .params_size = 12};
    assert_int_equal(sg_reloc_kernel_params(&m, &ku, ub, "n4", &rep), 0);
    assert_true(get64(ub, 4) == A_OLD);

    /* no layout: every aligned word is scanned and the fact is counted */
    uint8_t nb[24] = {0};
    put64(nb, 8, A_OLD + 4);
    put64(nb, 16, B_OLD);
    sg_kernel_t kn = {.param_bytes = nb, .params_size = 24};
    sg_reloc_report_t rep2 = {0};
    assert_int_equal(sg_reloc_kernel_params(&m, &kn, nb, "n5", &rep2), 1);
    assert_true(get64(nb, 8) == A_NEW + 4);
    assert_int_equal(rep2.scanned_without_layout, 1);
    assert_true(rep2.entries[0].param == SG_NONE);

    /* conditional handles: exact value match */
    assert_int_equal(sg_reloc_map_add_handle(&m, 0xabc0, 0xdef0), SG_OK);
    uint8_t hb[8];
    put64(hb, 0, 0xabc0);
    uint32_t hoff = 0, hsz = 8;
    sg_kernel_t kh = {.n_params = 1,
                      .param_offsets = &hoff,
                      .param_sizes = &hsz,
                      .param_bytes = hb,
                      .params_size = 8};
    assert_int_equal(sg_reloc_kernel_params(&m, &kh, hb, "n6", &rep2), 1);
    assert_true(get64(hb, 0) == 0xdef0);
    assert_int_equal(rep2.entries[1].site, SG_RELOC_HANDLE);

    /* the printed report names the node and warns that this is a heuristic */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sg_graph_t *g = sg_graph_create();
    uint32_t id;
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, A_OLD, 0x100, &id);
    sg_reloc_report_print(&rep, g, true, f);
    fclose(f);
    assert_non_null(strstr(text, "n3"));
    assert_non_null(strstr(text, "heuristic"));
    assert_non_null(strstr(text, "one past"));
    free(text);
    sg_graph_destroy(g);
    sg_reloc_report_free(&rep);
    sg_reloc_report_free(&rep2);
    sg_reloc_map_free(&m);
}

/* A kernel with complete access facts: exactly the words its code uses as
 * addresses are rewritten (the u64 integer equal to an address is left
 * alone, the struct-embedded pointer is found, an unaligned one too), the
 * report counts it as from the code and gives no heuristic warning;
 * incomplete facts fall back to the heuristic. */
static void test_reloc_params_from_facts(void **state)
{
    (void)state;
    sg_reloc_map_t m;
    make_map(&m);
    uint8_t bytes[64] = {0};
    put64(bytes, 0, A_OLD + 0x10);  /* p0: a pointer the code uses */
    put64(bytes, 8, A_OLD + 0x50);  /* p1: a u64 integer equal to an address in A */
    put64(bytes, 16, A_OLD + 0x20); /* p2: struct {ptr, ptr} at 16: both used */
    put64(bytes, 24, A_OLD + 0x30);
    put64(bytes, 36, A_OLD + 0x40); /* p3: packed struct, its pointer at unaligned 36 */
    uint32_t offs[] = {0, 8, 16, 32}, sizes[] = {8, 8, 16, 12};
    uint32_t ptrs[] = {0, 16, 24, 36, 60}; /* 60: past the last whole word, ignored */
    sg_kernel_t k = {.n_params = 4,
                     .param_offsets = offs,
                     .param_sizes = sizes,
                     .param_bytes = bytes,
                     .params_size = 64};
    k.facts.source = SG_FACTS_SASS;
    k.facts.complete = true;
    k.facts.pointers = ptrs;
    k.facts.n_pointers = 5;
    uint8_t copy[64];
    memcpy(copy, bytes, 64);
    sg_reloc_report_t rep = {0};
    assert_int_equal(sg_reloc_kernel_params(&m, &k, copy, "n1", &rep), 4);
    assert_true(get64(copy, 0) == A_NEW + 0x10);
    assert_true(get64(copy, 8) == A_OLD + 0x50); /* not an address to the code */
    assert_true(get64(copy, 16) == A_NEW + 0x20);
    assert_true(get64(copy, 24) == A_NEW + 0x30);
    assert_true(get64(copy, 36) == A_NEW + 0x40);
    assert_int_equal(rep.entries[1].param, 2);
    assert_int_equal(rep.entries[3].param, 3);
    assert_int_equal(rep.entries[3].offset, 36);
    assert_int_equal(rep.from_code, 1);
    assert_int_equal(rep.heuristic, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sg_graph_t *g = sg_graph_create();
    sg_reloc_report_print(&rep, g, true, f);
    fclose(f);
    assert_non_null(strstr(text, "1 kernel had exactly the parameter words its code uses"));
    assert_null(strstr(text, "warning"));
    free(text);
    /* not complete (or no code): the heuristic, with its warning */
    k.facts.complete = false;
    memcpy(copy, bytes, 64);
    assert_int_equal(sg_reloc_kernel_params(&m, &k, copy, "n2", &rep), 4);
    assert_true(get64(copy, 8) == A_NEW + 0x50);
    assert_true(get64(copy, 36) == A_OLD + 0x40); /* unaligned: the heuristic misses it */
    assert_int_equal(rep.heuristic, 1);
    f = open_memstream(&text, &len);
    sg_reloc_report_print(&rep, g, true, f);
    fclose(f);
    assert_non_null(strstr(text, "warning: relocation of the 1 kernel without complete access"));
    free(text);
    sg_graph_destroy(g);
    sg_reloc_report_free(&rep);
    sg_reloc_map_free(&m);
}

static void test_reloc_addresses(void **state)
{
    (void)state;
    sg_reloc_map_t m;
    make_map(&m);
    sg_reloc_report_t rep = {0};
    uint64_t a = A_OLD + 8;
    assert_int_equal(sg_reloc_address(&m, &a, SG_RELOC_MEMCPY_DST, "n1", &rep), 1);
    assert_true(a == A_NEW + 8);
    uint64_t b = B_OLD;
    assert_int_equal(sg_reloc_address(&m, &b, SG_RELOC_MEMSET_DST, "n2", &rep), 0);
    assert_true(b == B_OLD);
    uint64_t c = 0x1000;
    assert_int_equal(sg_reloc_address(&m, &c, SG_RELOC_MEMCPY_SRC, "n3", &rep), SG_ENOENT);
    /* a node address one past a buffer is not an address of that buffer */
    uint64_t d = A_OLD + 0x100;
    assert_int_equal(sg_reloc_address(&m, &d, SG_RELOC_MEMCPY_SRC, "n4", &rep), SG_ENOENT);
    assert_int_equal(rep.n, 1);
    assert_int_equal(rep.entries[0].site, SG_RELOC_MEMCPY_DST);

    /* nested ranges: the innermost holder wins; its end, still inside the
     * outer one, belongs to the outer one */
    assert_int_equal(sg_reloc_map_add(&m, 7, 0x10000, 0x1000, 0x50000), SG_OK);
    assert_int_equal(sg_reloc_map_add(&m, 8, 0x10100, 0x100, 0x70000), SG_OK);
    uint64_t out = 0;
    uint32_t buf = 0;
    bool past = true;
    assert_true(sg_reloc_translate(&m, 0x10150, &out, &buf, &past));
    assert_true(out == 0x70050 && buf == 8 && !past);
    assert_true(sg_reloc_translate(&m, 0x10300, &out, &buf, &past));
    assert_true(out == 0x50300 && buf == 7);
    assert_true(sg_reloc_translate(&m, 0x10200, &out, &buf, &past));
    assert_true(out == 0x50200 && buf == 7 && !past);
    /* replacing a buffer's range */
    assert_int_equal(sg_reloc_map_add(&m, 8, 0x10100, 0x100, 0x80000), SG_OK);
    assert_true(sg_reloc_translate(&m, 0x10100, &out, &buf, NULL));
    assert_true(out == 0x80000);
    sg_reloc_report_free(&rep);
    sg_reloc_map_free(&m);
}

/* ---- planning ------------------------------------------------------------------------- */

static bool has_issue(const sg_plan_issue_t *a, uint32_t n, const char *node, const char *text)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(a[i].node, node) && strstr(a[i].reason, text)) return true;
    return false;
}

static void test_plan_replayable(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, s1, ev, b0, b1, img;
    sg_graph_add_stream(g, NULL, 0, &s0);
    sg_graph_add_stream(g, NULL, 0, &s1);
    sg_graph_add_event(g, NULL, 0, &ev);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x10000, 4096, &b0);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x20000, 4096, &b1);
    img = add_image(g, true);
    sg_node_id_t k = add_kernel(g, s0, 0, "_Z3fooPf", img, 0x10000);
    sg_node_id_t c = add_node(g, SG_NODE_MEMCPY, s1, 1);
    sg_graph_node(g, c)->u.memcpy =
        (sg_memcpy_t){.dst = 0x20000, .src = 0x10010, .width = 64, .height = 1, .depth = 1};
    sg_node_id_t s = add_node(g, SG_NODE_MEMSET, s1, 2);
    sg_graph_node(g, s)->u.memset =
        (sg_memset_t){.dst = 0x20000, .value = 7, .element_size = 4, .width = 16, .height = 1};
    sg_node_id_t rec = add_node(g, SG_NODE_EVENT_RECORD, s0, 3);
    sg_graph_node(g, rec)->u.event = ev;
    sg_node_id_t wait = add_node(g, SG_NODE_EVENT_WAIT, s1, 4);
    sg_graph_node(g, wait)->u.event = ev;
    sg_node_id_t e = add_node(g, SG_NODE_EMPTY, s0, 5);
    sg_graph_add_edge(g, k, rec, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, rec, wait, SG_EDGE_EVENT, ev, NULL);
    sg_graph_add_edge(g, wait, c, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, c, s, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, s, e, SG_EDGE_CONTROL, SG_NONE, NULL);
    sg_replay_plan_t p;
    assert_int_equal(sg_replay_plan(g, &p), SG_OK);
    assert_int_equal(p.n_blockers, 0);
    assert_int_equal(p.n_warnings, 0);
    assert_int_equal(p.nodes, 6);
    assert_int_equal(p.nodes_by_type[SG_NODE_KERNEL], 1);
    sg_replay_plan_free(&p);

    /* a kernel without a layout is replayable, with a warning; so is a
     * wait for an event nothing in the graph records */
    sg_graph_node(g, k)->u.kernel.n_params = 0;
    sg_graph_node(g, rec)->u.event = SG_NONE;
    assert_int_equal(sg_replay_plan(g, &p), SG_OK);
    assert_int_equal(p.n_blockers, 0);
    assert_true(has_issue(p.warnings, p.n_warnings, "n0", "no parameter layout"));
    assert_true(has_issue(p.warnings, p.n_warnings, "n4", "outside the graph"));
    assert_true(has_issue(p.warnings, p.n_warnings, "n3", "fresh event"));
    sg_replay_plan_free(&p);
    sg_graph_destroy(g);
}

static void test_plan_in_process_only(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, b0, bg, img, nofile;
    sg_graph_add_stream(g, NULL, 0, &s0);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x10000, 4096, &b0);
    sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x90000, 4096, &bg);
    img = add_image(g, true);
    nofile = add_image(g, false);
    g->images[nofile].note = strdup("loaded from a file the capture could not read");

    sg_node_id_t h = add_node(g, SG_NODE_HOST, s0, 0); /* n0 */
    sg_graph_node(g, h)->u.host.fn = 0x401000;
    sg_node_id_t o = add_node(g, SG_NODE_OPAQUE, s0, 1); /* n1 */
    sg_node_set_opaque_note(g, o, "batch mem op");
    sg_node_id_t k1 = add_kernel(g, s0, 2, "_Z3fooPf", SG_NONE, 0x10000); /* n2 */
    sg_node_id_t k2 = add_kernel(g, s0, 3, "_Z3barPf", nofile, 0x10000);  /* n3 */
    sg_node_id_t k3 =
        add_kernel(g, s0, 4, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", img, 0x10000); /* n4 */
    sg_node_id_t c = add_node(g, SG_NODE_MEMCPY, s0, 5);                               /* n5 */
    sg_graph_node(g, c)->u.memcpy = (sg_memcpy_t){.dst = 0x10000, .src = 0x7ffd0000, .width = 8};
    sg_node_id_t ms = add_node(g, SG_NODE_MEMSET, s0, 6); /* n6 */
    sg_graph_node(g, ms)->u.memset = (sg_memset_t){.dst = 0x10000, .element_size = 3, .width = 1};
    sg_node_id_t fr = add_node(g, SG_NODE_MEM_FREE, s0, 7); /* n7: frees a device buffer */
    sg_graph_node(g, fr)->u.mem = (sg_memnode_t){.buffer = b0, .address = 0x10000};
    sg_node_id_t fr2 = add_node(g, SG_NODE_MEM_FREE, s0, 8); /* n8: a graph allocation: fine */
    sg_graph_node(g, fr2)->u.mem = (sg_memnode_t){.buffer = bg, .address = 0x90000};
    /* n9: a child graph whose body has a host node */
    sg_node_id_t ch = add_node(g, SG_NODE_CHILD_GRAPH, s0, 9);
    sg_graph_t *body = NULL;
    assert_int_equal(sg_node_make_child_body(g, ch, &body), SG_OK);
    add_node(body, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 0);
    add_node(body, SG_NODE_HOST, SG_STREAM_EXPLICIT, 1);
    /* n10: a conditional whose second body holds an opaque node */
    sg_node_id_t cd = add_node(g, SG_NODE_CONDITIONAL, s0, 10);
    sg_graph_t *b0g = NULL, *b1g = NULL;
    assert_int_equal(sg_node_add_cond_body(g, cd, &b0g), SG_OK);
    assert_int_equal(sg_node_add_cond_body(g, cd, &b1g), SG_OK);
    add_node(b0g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 0);
    add_node(b1g, SG_NODE_OPAQUE, SG_STREAM_EXPLICIT, 0);
    (void)k1;
    (void)k2;
    (void)k3;

    sg_replay_plan_t p;
    assert_int_equal(sg_replay_plan(g, &p), SG_OK);
    assert_true(has_issue(p.blockers, p.n_blockers, "n0", "host callback 0x401000"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n1", "batch mem op"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n2", "was not captured"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n3", "not saved in the bundle"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n3", "could not read"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n4", "NCCL"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n5", "in no recorded buffer"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n6", "element size 3"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n7", "did not allocate"));
    assert_false(has_issue(p.blockers, p.n_blockers, "n8", ""));
    assert_true(has_issue(p.blockers, p.n_blockers, "n9/n1", "host callback"));
    assert_true(has_issue(p.blockers, p.n_blockers, "n10/b1/n0", "opaque"));
    assert_int_equal(p.n_blockers, 10);
    assert_int_equal(p.max_depth, 1);
    assert_true(has_issue(p.warnings, p.n_warnings, "n10", "conditional"));
    sg_replay_plan_free(&p);

    assert_true(sg_replay_kernel_needs_process("_Z20ncclKernel_AllGatherv"));
    assert_false(sg_replay_kernel_needs_process("_Z6k_axpbPfPKfffm"));
    sg_graph_destroy(g);
}

static void test_plan_cycle(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    sg_node_id_t a = add_node(g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 0);
    sg_node_id_t b = add_node(g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 1);
    sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, SG_NONE, NULL);
    sg_graph_add_edge(g, b, a, SG_EDGE_CONTROL, SG_NONE, NULL);
    sg_replay_plan_t p;
    assert_int_equal(sg_replay_plan(g, &p), SG_ECYCLE);
    assert_int_equal(p.n_blockers, 0);
    sg_graph_destroy(g);
}

/* ---- trace ---------------------------------------------------------------------------- */

static void test_trace_shape(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t s;
    sg_graph_add_stream(g, "s0", 0, &s);
    sg_graph_add_stream(g, "side", 0, &s);
    sg_graph_add_stream(g, "s2", 0, &s);
    g->program = strdup("fork_join");
    sg_trace_event_t ev[4];
    memset(ev, 0, sizeof ev);
    const struct {
        const char *node, *name;
        uint32_t stream;
        uint64_t start, end;
    } rows[4] = {{"n0", "k_axpb", 0, 1000000, 1002000},
                 {"n1", "k_poly", 1, 1003000, 1103000},
                 {"n2", "k_poly", 2, 1003500, 1101000},
                 {"n3", "empty", SG_STREAM_EXPLICIT, 1104000, 1104000}};
    for (int i = 0; i < 4; i++) {
        snprintf(ev[i].node, sizeof ev[i].node, "%s", rows[i].node);
        snprintf(ev[i].name, sizeof ev[i].name, "%s", rows[i].name);
        ev[i].type = i == 3 ? SG_NODE_EMPTY : SG_NODE_KERNEL;
        ev[i].stream = rows[i].stream;
        ev[i].start_ns = rows[i].start;
        ev[i].end_ns = rows[i].end;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(sg_trace_write(g, ev, 4, f), SG_OK);
    fclose(f);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    assert_non_null(root);
    json_t *events = json_object_get(root, "traceEvents");
    assert_true(json_is_array(events));
    int threads = 0, complete = 0;
    bool saw_side = false, saw_explicit = false;
    double ts[4] = {0}, dur[4] = {0};
    int tid[4] = {0};
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        assert_non_null(ph);
        if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
            threads++;
            const char *label =
                json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            if (!strcmp(label, "side")) {
                saw_side = true;
                assert_int_equal(json_integer_value(json_object_get(e, "tid")), 2);
            }
            if (!strcmp(label, "explicit")) saw_explicit = true;
        } else if (!strcmp(ph, "X")) {
            json_t *args = json_object_get(e, "args");
            const char *node = json_string_value(json_object_get(args, "node"));
            int k = node[1] - '0';
            assert_true(k >= 0 && k < 4);
            ts[k] = json_number_value(json_object_get(e, "ts"));
            dur[k] = json_number_value(json_object_get(e, "dur"));
            tid[k] = (int)json_integer_value(json_object_get(e, "tid"));
            complete++;
        }
    }
    assert_int_equal(threads, 4); /* three streams and the explicit lane */
    assert_true(saw_side && saw_explicit);
    assert_int_equal(complete, 4);
    /* times in µs from the first start; one track per stream */
    assert_true(ts[0] == 0.0);
    assert_true(fabs(dur[1] - 100.0) < 1e-9);
    assert_int_equal(tid[0], 1);
    assert_int_equal(tid[1], 2);
    assert_int_equal(tid[2], 3);
    assert_int_equal(tid[3], 4);
    /* the two branches overlap, as the trace must show */
    assert_true(ts[2] < ts[1] + dur[1] && ts[1] < ts[2] + dur[2]);
    json_decref(root);
    free(text);
    sg_graph_destroy(g);
}

/* --host-nodes skip: host buffers, and what nodes after a host node derive
 * from influenced buffers, are influenced; work before it, or not derived
 * from influenced memory, is not. */
static void test_host_influenced(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, hb, d0, d1, d2, d3, d4;
    sg_graph_add_stream(g, NULL, 0, &s0);
    sg_graph_add_buffer(g, SG_BUFFER_HOST_PAGEABLE, 0x7ffd0000, 64, &hb);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000000ull, 64, &d0);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000100000ull, 64, &d1);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000200000ull, 64, &d2);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000300000ull, 64, &d3);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000400000ull, 64, &d4);
    bool *t = (bool *)1;
    uint32_t n = 99;
    assert_int_equal(sg_replay_host_influenced(g, &t, &n), SG_OK);
    assert_null(t); /* no host node: nothing to say */
    assert_int_equal(n, 0);
    sg_node_id_t k1, h, c, k2, k3;
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 0, &k1); /* before the callback */
    sg_node_add_access(g, k1, hb, 0, 64, SG_ACCESS_READ);
    sg_node_add_access(g, k1, d0, 0, 64, SG_ACCESS_READ);
    sg_node_add_access(g, k1, d1, 0, 64, SG_ACCESS_WRITE);
    sg_graph_add_node(g, SG_NODE_HOST, s0, 1, &h);
    sg_graph_add_node(g, SG_NODE_MEMCPY, s0, 2, &c); /* H2D of what the callback wrote */
    sg_node_add_access(g, c, hb, 0, 64, SG_ACCESS_READ);
    sg_node_add_access(g, c, d2, 0, 64, SG_ACCESS_WRITE);
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 3, &k2); /* reads that copy */
    sg_node_add_access(g, k2, d2, 0, 64, SG_ACCESS_READ);
    sg_node_add_access(g, k2, d3, 0, 64, SG_ACCESS_UNKNOWN);
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 4, &k3); /* after, but from d1 only */
    sg_node_add_access(g, k3, d1, 0, 64, SG_ACCESS_READ);
    sg_node_add_access(g, k3, d4, 0, 64, SG_ACCESS_WRITE);
    sg_graph_add_edge(g, k1, h, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, h, c, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, c, k2, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, k2, k3, SG_EDGE_STREAM, SG_NONE, NULL);
    assert_int_equal(sg_replay_host_influenced(g, &t, &n), SG_OK);
    assert_non_null(t);
    assert_true(t[hb]);
    assert_false(t[d0]);
    assert_false(t[d1]); /* written before the callback */
    assert_true(t[d2]);
    assert_true(t[d3]);
    assert_false(t[d4]);
    assert_int_equal(n, 3);
    free(t);
    /* the plan: a blocker without skip, a warning with it */
    sg_replay_plan_t p;
    assert_int_equal(sg_replay_plan_with(g, false, &p), SG_OK);
    bool host_blocked = false;
    for (uint32_t i = 0; i < p.n_blockers; i++)
        if (p.blockers[i].type == SG_NODE_HOST)
            host_blocked = strstr(p.blockers[i].reason, "--host-nodes skip replays without it");
    assert_true(host_blocked);
    sg_replay_plan_free(&p);
    assert_int_equal(sg_replay_plan_with(g, true, &p), SG_OK);
    for (uint32_t i = 0; i < p.n_blockers; i++)
        assert_int_not_equal(p.blockers[i].type, SG_NODE_HOST);
    assert_int_equal(p.host_nodes_skipped, 1);
    sg_replay_plan_free(&p);
    sg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_influenced),
        cmocka_unit_test(test_ulp_distance),
        cmocka_unit_test(test_compare_bitwise),
        cmocka_unit_test(test_compare_ulp),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_reloc_params),
        cmocka_unit_test(test_reloc_params_from_facts),
        cmocka_unit_test(test_reloc_addresses),
        cmocka_unit_test(test_plan_replayable),
        cmocka_unit_test(test_plan_in_process_only),
        cmocka_unit_test(test_plan_cycle),
        cmocka_unit_test(test_trace_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
