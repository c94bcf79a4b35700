/* test_sass_select.c: selects in the SASS analysis (code/sass_flow.c).
 *
 * PyTorch's vectorized kernels end a short block with an unrolled loop
 * that stops at the first element past the end (tests/data/sass/tail.cu
 * has the shape; nvcc makes it a chain of SEL and predicated adds, each
 * step's index chosen by the comparison before it). The analysis proves
 * each step's index from the comparison that guards it; these tests hold
 * it to the byte ranges a brute-force run of the kernel's semantics gives,
 * and check that a chain whose comparison is of another register, against
 * another bound, or with the select the other way round stays unknown.
 * A hand-written listing in the shape of PyTorch's store chain (branches
 * whose joins the comparisons resolve) and PLOP3's predicate copies are
 * checked the same way, and so is a branch on a float comparison, whose
 * two edges' facts cancel where they meet. All on committed listings: no
 * nvdisasm needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "code/sass.h"
#include "code/sass_facts.h"
#include "graph/graph.h"

#define DATA SGCAP_SOURCE_DIR "/tests/data/sass/"

static sg_sass_kernel_t *analyse(const char *text, uint32_t *n)
{
    sg_sass_kernel_t *k = NULL;
    return sg_sass_analyze_listing(text, strlen(text), 90, &k, n, NULL, 0) ? NULL : k;
}

static const sg_sass_kernel_t *find(const sg_sass_kernel_t *k, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (k[i].name && strstr(k[i].name, name))
            return &k[i];
    return NULL;
}

/* Analyse text with the which-th occurrence of from (after the line
 * section, when given) replaced by to (from NULL: as it is). */
static sg_sass_kernel_t *analyse_mutated(const char *text, const char *section, const char *from,
                                         int which, const char *to, uint32_t *n)
{
    size_t len = strlen(text);
    char *m = malloc(len + 64);
    assert_non_null(m);
    memcpy(m, text, len + 1);
    if (from) {
        char *at = section ? strstr(m, section) : m;
        assert_non_null(at);
        for (int w = 0; w <= which; w++) {
            at = strstr(at + (w ? 1 : 0), from);
            if (!at)
                fail_msg("'%s' #%d not in the listing", from, which);
        }
        size_t fl = strlen(from), tl = strlen(to);
        memmove(at + tl, at + fl, strlen(at + fl) + 1);
        memcpy(at, to, tl);
    }
    sg_sass_kernel_t *k = analyse(m, n);
    free(m);
    assert_non_null(k);
    return k;
}

/* The kernel of that name in k (which must have it). */
static const sg_sass_kernel_t *kernel(const sg_sass_kernel_t *k, uint32_t n, const char *name)
{
    const sg_sass_kernel_t *t = find(k, n, name);
    if (!t)
        fail_msg("no kernel %s", name);
    return t;
}

/* The coefficient of atom a (alone) in the index, 0 when absent. */
static int64_t coef(const sg_sass_access_t *s, int a)
{
    for (uint32_t i = 0; i < s->index.n; i++)
        if (s->index.t[i].a == a && s->index.t[i].b == SG_SASS_ATOM_NONE)
            return s->index.t[i].coef;
    return 0;
}

/* The constant term of a condition's left side. */
static int64_t coef_of_cond(const sg_sass_cond_t *q)
{
    for (uint32_t i = 0; i < q->lhs.n; i++)
        if (q->lhs.t[i].a == SG_SASS_ATOM_NONE)
            return q->lhs.t[i].coef;
    return 0;
}

/* Is "k + tid.x + work*ctaid.x < P[0x0]" among the access's conditions? */
static bool has_bound(const sg_sass_access_t *s, int64_t k)
{
    for (uint32_t c = 0; c < s->n_conds; c++) {
        const sg_sass_cond_t *q = &s->conds[c];
        bool tid = false;
        for (uint32_t i = 0; i < q->lhs.n; i++)
            tid |= q->lhs.t[i].a == SG_SASS_TID_X && q->lhs.t[i].b == SG_SASS_ATOM_NONE &&
                   q->lhs.t[i].coef == 1;
        if (q->op == SG_SASS_LT && q->param == 0 && tid && coef_of_cond(q) == k)
            return true;
    }
    return false;
}

/* Is "tid.x < P[0x0]" among them? */
static bool has_bound_tid(const sg_sass_access_t *s)
{
    for (uint32_t c = 0; c < s->n_conds; c++)
        if (s->conds[c].op == SG_SASS_LT && s->conds[c].param == 0 && s->conds[c].lhs.n == 1 &&
            s->conds[c].lhs.t[0].a == SG_SASS_TID_X && s->conds[c].lhs.t[0].coef == 1)
            return true;
    return false;
}

/* The index is off + 4*tid.x + 4*work*ctaid.x, nothing else. */
static void assert_tail_index(const sg_sass_access_t *s, int64_t work, int64_t off)
{
    if (!s->index_known)
        fail_msg("0x%x %s: index unknown (%s)", s->pc, s->op, s->reason);
    int64_t per = s->width == 16 ? 16 : 4;
    assert_int_equal(coef(s, SG_SASS_TID_X), per);
    assert_int_equal(coef(s, SG_SASS_CTAID_X), 4 * work);
    assert_int_equal(coef(s, SG_SASS_ATOM_NONE), off);
    assert_int_equal(s->index.n, off ? 3 : 2);
}

/* ---- the compiled kernels: tail_kernel<W, Twice>(int N, f, {out, in}) ---------- */

typedef struct {
    uint32_t w;       /* elements per thread */
    int32_t n;        /* N */
    uint32_t grid;
} launch_t;

static const uint64_t OUT = 0x100000, IN = 0x800000;

/* What site s touches, by the kernel's source: a full block (N - W*128*c
 * >= W*128) moves float4s, a short one element k = off/512 of each thread
 * below the end. */
static void truth(const sg_sass_access_t *s, const launch_t *l, uint64_t *lo, uint64_t *hi,
                  bool *dense)
{
    uint64_t base = s->base == 8 ? OUT : IN, work = (uint64_t)l->w * 128;
    int64_t off = coef(s, SG_SASS_ATOM_NONE);
    *lo = UINT64_MAX;
    *hi = 0;
    uint64_t bytes = 0;
    for (uint32_t c = 0; c < l->grid; c++) {
        int64_t rem = (int64_t)l->n - (int64_t)(work * c);
        for (uint32_t t = 0; t < 128; t++) {
            uint64_t a;
            if (rem >= (int64_t)work && s->width == 16)
                a = base + 4 * work * c + 16 * t + (uint64_t)off;
            else if (rem < (int64_t)work && s->width == 4 && (int64_t)t + off / 4 < rem)
                a = base + 4 * (work * c + t) + (uint64_t)off;
            else
                continue;
            *lo = a < *lo ? a : *lo;
            *hi = a + s->width > *hi ? a + s->width : *hi;
            bytes += s->width;
        }
    }
    if (*lo == UINT64_MAX)
        *lo = *hi = 0;
    *dense = bytes == *hi - *lo;
}

static void check_ranges(const sg_sass_kernel_t *k, const launch_t *l)
{
    uint8_t params[24] = {0};
    memcpy(params, &l->n, 4);
    memcpy(params + 8, &OUT, 8);
    memcpy(params + 16, &IN, 8);
    uint32_t grid[3] = {l->grid, 1, 1}, block[3] = {128, 1, 1};
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        const sg_sass_access_t *s = &k->accesses[i];
        uint64_t lo, hi;
        bool dense;
        truth(s, l, &lo, &hi, &dense);
        sg_sass_extent_t e;
        assert_int_equal(sg_sass_access_extent(s, params, sizeof params, grid, block, &e), 0);
        if (e.lo == e.hi) {
            /* said to run on no thread: it must not */
            if (lo != hi)
                fail_msg("W=%u N=%d 0x%x %s: never, but the kernel touches [0x%llx, 0x%llx)",
                         l->w, l->n, s->pc, s->op, (unsigned long long)lo, (unsigned long long)hi);
        } else if (e.exact) {
            if (e.lo != lo || e.hi != hi)
                fail_msg("W=%u N=%d 0x%x %s: [0x%llx, 0x%llx), the kernel [0x%llx, 0x%llx)", l->w,
                         l->n, s->pc, s->op, (unsigned long long)e.lo, (unsigned long long)e.hi,
                         (unsigned long long)lo, (unsigned long long)hi);
            assert_true(!e.dense || dense);
        } else {
            /* an upper bound: it covers the kernel's bytes, inside the grid's blocks */
            assert_true(lo == hi || (e.lo <= lo && e.hi >= hi));
            uint64_t b = s->base == 8 ? OUT : IN;
            assert_true(e.lo >= b && e.hi <= b + 4 * (uint64_t)l->w * 128 * l->grid);
        }
        /* every load's conditions are read: exact, or provably not run */
        if (s->kind == SG_SASS_LOAD && !e.exact && e.lo != e.hi)
            fail_msg("W=%u N=%d 0x%x %s: only bounded", l->w, l->n, s->pc, s->op);
    }
}

static char *read_text(const char *path)
{
    size_t len;
    char *t = sg_sass_read_file(path, &len);
    assert_non_null(t);
    return t;
}

static void test_compiled_tails(void **state)
{
    (void)state;
    char *text = read_text(DATA "tail_sm90.sass");
    uint32_t n;
    sg_sass_kernel_t *k = analyse(text, &n);
    assert_non_null(k);
    static const struct {
        const char *name;
        uint32_t w;
    } ks[] = {{"tail_kernelILi8E", 8}, {"tail_kernelILi4E", 4}};
    for (size_t j = 0; j < 2; j++) {
        const sg_sass_kernel_t *t = find(k, n, ks[j].name);
        assert_non_null(t);
        assert_int_equal(t->status, SG_SASS_ANALYSED);
        assert_true(t->certain);
        uint32_t w = ks[j].w, tails = 0;
        /* W scalar loads and stores, W/4 float4 loads and stores */
        assert_int_equal(t->n_accesses, 2 * w + 2 * (w / 4));
        for (uint32_t i = 0; i < t->n_accesses; i++) {
            const sg_sass_access_t *s = &t->accesses[i];
            assert_int_equal(s->base, s->kind == SG_SASS_STORE ? 8 : 16);
            int64_t off = coef(s, SG_SASS_ATOM_NONE);
            assert_tail_index(s, w * 128, off);
            if (s->width == 4) {
                assert_true(off % 512 == 0 && off / 512 < w);
                tails++;
                /* the element's own bound: 128k + tid.x + W*128*ctaid.x < N */
                if (s->kind == SG_SASS_LOAD) {
                    assert_true(has_bound(s, off / 4));
                    assert_true(s->conditions_exact);
                }
            }
        }
        assert_int_equal(tails, 2 * w);
        launch_t ls[] = {{w, (int32_t)(w * 128 + 1000 % (w * 128)), 2},
                         {w, (int32_t)(3 * w * 128), 3},
                         {w, 100, 1},
                         {w, (int32_t)(w * 128 - 1), 1}};
        for (size_t l = 0; l < sizeof ls / sizeof ls[0]; l++)
            check_ranges(t, &ls[l]);
    }
    sg_sass_kernels_free(k, n);
    free(text);
}

/* Mutations of tail_kernel<8>'s select chain. */
static void test_chain_mutations(void **state)
{
    (void)state;
    char *text = read_text(DATA "tail_sm90.sass");
    static const struct {
        const char *what, *from, *to;
        uint32_t first_unknown; /* the first load element the chain no longer proves */
    } cases[] = {
        {"as compiled", "", "", 8},
        /* the first step compares ctaid, not the value SEL keeps */
        {"another register", "ISETP.GE.AND P6, PT, R3, R0, PT ;",
         "ISETP.GE.AND P6, PT, R6, R0, PT ;", 1},
        /* the second step's comparison is against another bound */
        {"another bound", "ISETP.GE.AND P0, PT, R7, R0, PT ;", "ISETP.GE.AND P0, PT, R7, R6, PT ;",
         1},
        /* the index steps when the comparison is true, not when false */
        {"added under P", "@!P0 VIADD R7, R7, 0x80 ;", "@P0 VIADD R7, R7, 0x80 ;", 2},
        /* SEL keeps the stepped value when the comparison is true */
        {"SEL reversed", "SEL R7, R3, R2, P6 ;", "SEL R7, R2, R3, P6 ;", 1},
        /* the step compares with GT: equal to the bound is not excluded */
        {"another kind", "ISETP.GE.AND P0, PT, R7, R0, PT ;", "ISETP.GT.AND P0, PT, R7, R0, PT ;",
         1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t n;
        sg_sass_kernel_t *k =
            analyse_mutated(text, ".text._Z11tail_kernelILi8E5TwiceEviT0_5ArrayIPcLi2EE:",
                            cases[c].from[0] ? cases[c].from : NULL, 0, cases[c].to, &n);
        const sg_sass_kernel_t *t = kernel(k, n, "tail_kernelILi8E");
        for (uint32_t i = 0; i < t->n_accesses; i++) {
            const sg_sass_access_t *s = &t->accesses[i];
            assert_int_equal(s->base, s->kind == SG_SASS_STORE ? 8 : 16); /* always attributed */
            if (s->kind != SG_SASS_LOAD || s->width != 4)
                continue;
            /* the loads in pc order are elements 0, 1, ... up to where the
             * chain reorders them; what is known must be right */
            if (s->index_known) {
                int64_t off = coef(s, SG_SASS_ATOM_NONE);
                assert_tail_index(s, 1024, off);
                if ((uint32_t)(off / 512) >= cases[c].first_unknown)
                    fail_msg("%s: element %lld at 0x%x proven", cases[c].what,
                             (long long)(off / 512), s->pc);
            } else {
                assert_true(s->reason[0] != 0);
            }
        }
        /* the elements before the mutation stay known */
        uint32_t known = 0;
        for (uint32_t i = 0; i < t->n_accesses; i++)
            known += t->accesses[i].kind == SG_SASS_LOAD && t->accesses[i].width == 4 &&
                     t->accesses[i].index_known;
        if (known != cases[c].first_unknown)
            fail_msg("%s: %u scalar loads known, want %u", cases[c].what, known,
                     cases[c].first_unknown);
        sg_sass_kernels_free(k, n);
    }
    free(text);
}

/* ---- PyTorch's store chain, by hand ---------------------------------------------------

   Six elements per thread, a block of 768: R7 = P0 ? tid : tid + 128 (a
   predicated move), then branches whose joins meet a path where the last
   comparison pinned R7 >= X (the taken edges) with the path that stepped
   it; the last join also meets a predicated step (@!P0 R7 += 128). X =
   N - 768*ctaid.x, the element index 768*ctaid.x + R7. */
static const char store_chain[] =
    ".text.store_chain:\n"
    "        /*0000*/                   S2R R7, SR_TID.X ;\n"
    "        /*0010*/                   S2R R0, SR_CTAID.X ;\n"
    "        /*0020*/                   LDC R6, c[0x0][0x210] ;\n"
    "        /*0030*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0040*/                   IMAD R6, R0, -0x300, R6 ;\n"
    "        /*0050*/                   IMAD R5, R0, 0x300, RZ ;\n"
    "        /*0060*/                   VIADD R21, R7, 0x80 ;\n"
    "        /*0070*/                   ISETP.GE.AND P0, PT, R7, R6, PT ;\n"
    "        /*0080*/                   S2R R9, SR_TID.X ;\n"
    "        /*0090*/              @!P0 LDC.64 R10, c[0x0][0x218] ;\n"
    "        /*00a0*/              @!P0 IMAD.MOV.U32 R7, RZ, RZ, R21 ;\n"
    "        /*00b0*/              @!P0 VIADD R9, R9, R5 ;\n"
    "        /*00c0*/              @!P0 IMAD.WIDE.U32 R10, R9, 0x4, R10 ;\n"
    "        /*00d0*/              @!P0 STG.E desc[UR4][R10.64], RZ ;\n"
    "        /*00e0*/                   ISETP.GE.AND P0, PT, R7, R6, PT ;\n"
    "        /*00f0*/               @P0 BRA `(.L_x_2) ;\n"
    "        /*0100*/                   LDC.64 R10, c[0x0][0x218] ;\n"
    "        /*0110*/                   VIADD R9, R7.reuse, R5 ;\n"
    "        /*0120*/                   VIADD R7, R7, 0x80 ;\n"
    "        /*0130*/                   ISETP.GE.AND P0, PT, R7, R6, PT ;\n"
    "        /*0140*/                   IMAD.WIDE.U32 R10, R9, 0x4, R10 ;\n"
    "        /*0150*/                   STG.E desc[UR4][R10.64], RZ ;\n"
    "        /*0160*/               @P0 BRA `(.L_x_3) ;\n"
    "        /*0170*/                   LDC.64 R10, c[0x0][0x218] ;\n"
    "        /*0180*/                   VIADD R9, R7.reuse, R5 ;\n"
    "        /*0190*/                   VIADD R7, R7, 0x80 ;\n"
    "        /*01a0*/                   IMAD.WIDE.U32 R10, R9, 0x4, R10 ;\n"
    "        /*01b0*/                   STG.E desc[UR4][R10.64], RZ ;\n"
    ".L_x_2:\n"
    "        /*01c0*/                   ISETP.GE.AND P0, PT, R7, R6, PT ;\n"
    "        /*01d0*/               @P0 BRA `(.L_x_4) ;\n"
    "        /*01e0*/                   LDC.64 R10, c[0x0][0x218] ;\n"
    "        /*01f0*/                   VIADD R9, R7.reuse, R5 ;\n"
    "        /*0200*/                   VIADD R7, R7, 0x80 ;\n"
    "        /*0210*/                   IMAD.WIDE.U32 R10, R9, 0x4, R10 ;\n"
    "        /*0220*/                   STG.E desc[UR4][R10.64], RZ ;\n"
    ".L_x_3:\n"
    "        /*0230*/                   ISETP.GE.AND P0, PT, R7, R6, PT ;\n"
    "        /*0240*/              @!P0 LDC.64 R10, c[0x0][0x218] ;\n"
    "        /*0250*/              @!P0 VIADD R9, R7.reuse, R5 ;\n"
    "        /*0260*/              @!P0 VIADD R7, R7, 0x80 ;\n"
    "        /*0270*/              @!P0 IMAD.WIDE.U32 R10, R9, 0x4, R10 ;\n"
    "        /*0280*/              @!P0 STG.E desc[UR4][R10.64], RZ ;\n"
    ".L_x_4:\n"
    "        /*0290*/                   ISETP.GE.AND P0, PT, R7, R6, PT ;\n"
    "        /*02a0*/               @P0 EXIT ;\n"
    "        /*02b0*/                   LDC.64 R10, c[0x0][0x218] ;\n"
    "        /*02c0*/                   VIADD R9, R7, R5 ;\n"
    "        /*02d0*/                   IMAD.WIDE.U32 R10, R9, 0x4, R10 ;\n"
    "        /*02e0*/                   STG.E desc[UR4][R10.64], RZ ;\n"
    "        /*02f0*/                   EXIT ;\n";

static void test_store_chain(void **state)
{
    (void)state;
    uint32_t n;
    sg_sass_kernel_t *k = analyse_mutated(store_chain, NULL, NULL, 0, NULL, &n);
    const sg_sass_kernel_t *t = kernel(k, n, "store_chain");
    assert_int_equal(t->n_accesses, 6);
    for (uint32_t i = 0; i < 6; i++) {
        const sg_sass_access_t *s = &t->accesses[i];
        assert_int_equal(s->base, 0x8);
        assert_tail_index(s, 768, 512 * (int64_t)i); /* element i, in pc order */
        /* its own bound: 128i + tid.x + 768*ctaid.x < N */
        if (!has_bound(s, 128 * (int64_t)i))
            fail_msg("element %u at 0x%x without its bound", i, s->pc);
    }
    /* the ranges: N = 1000 over 2 blocks; element i of block c is
     * 768c + tid + 128i while below N */
    uint8_t params[24] = {0};
    int32_t N = 1000;
    memcpy(params, &N, 4);
    memcpy(params + 8, &OUT, 8);
    uint32_t grid[3] = {2, 1, 1}, block[3] = {128, 1, 1};
    for (uint32_t i = 0; i < 6; i++) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (uint32_t c = 0; c < 2; c++)
            for (uint32_t tid = 0; tid < 128; tid++) {
                uint64_t e = 768 * c + tid + 128 * i;
                if (e >= (uint64_t)N)
                    continue;
                lo = OUT + 4 * e < lo ? OUT + 4 * e : lo;
                hi = OUT + 4 * e + 4 > hi ? OUT + 4 * e + 4 : hi;
            }
        sg_sass_extent_t e;
        assert_int_equal(sg_sass_access_extent(&t->accesses[i], params, sizeof params, grid, block, &e), 0);
        assert_true(e.lo <= lo && e.hi >= hi);
        if (e.exact) {
            assert_int_equal(e.lo, lo);
            assert_int_equal(e.hi, hi);
        }
        assert_true(e.hi <= OUT + 4 * (uint64_t)N);
    }
    sg_sass_kernels_free(k, n);

    /* a join's pin is a comparison with that bound and that kind only */
    static const struct {
        const char *what, *from, *to;
        int which;
        uint32_t unknown; /* the element that is no longer proven, 6: none */
    } cases[] = {
        /* the same program: R7 < X false instead of R7 >= X true takes the branch */
        {"the complement", "ISETP.GE.AND P0, PT, R7, R6, PT ;\n        /*01d0*/               @P0 BRA",
         "ISETP.LT.AND P0, PT, R7, R6, PT ;\n        /*01d0*/              @!P0 BRA", 0, 6},
        /* the comparison after the first join is R7 > X: R7 == X is not excluded */
        {"another kind", "ISETP.GE.AND P0, PT, R7, R6, PT ;", "ISETP.GT.AND P0, PT, R7, R6, PT ;",
         3, 3},
        /* the comparison after the first join is against ctaid */
        {"another bound", "ISETP.GE.AND P0, PT, R7, R6, PT ;", "ISETP.GE.AND P0, PT, R7, R0, PT ;",
         3, 3},
        /* the branch after the predicated move compares R5 (768*ctaid.x), not R7 */
        {"another register", "ISETP.GE.AND P0, PT, R7, R6, PT ;\n        /*00f0*/",
         "ISETP.GE.AND P0, PT, R5, R6, PT ;\n        /*00f0*/", 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        k = analyse_mutated(store_chain, NULL, cases[c].from, cases[c].which, cases[c].to, &n);
        t = kernel(k, n, "store_chain");
        for (uint32_t i = 0; i < t->n_accesses; i++) {
            bool known = t->accesses[i].index_known;
            if ((i == cases[c].unknown && known) || (cases[c].unknown == 6 && !known))
                fail_msg("%s: element %u at 0x%x %s", cases[c].what, i, t->accesses[i].pc,
                         known ? "proven" : "not proven");
        }
        for (uint32_t i = 0; i < t->n_accesses; i++)
            if (t->accesses[i].index_known)
                assert_tail_index(&t->accesses[i], 768, 512 * (int64_t)i);
        sg_sass_kernels_free(k, n);
    }
}

/* ---- a select across the two edges of its own guard's branch ---------------------

   R18 is loaded under !P0, then `@P0 BRA`: each edge knows which value R18
   has, and where they meet again R18 is the select it was (PyTorch's
   unrolled_elementwise_kernel loads its output pointer that way). */
static const char rejoin[] =
    ".text.rejoin:\n"
    "        /*0000*/                   S2R R9, SR_TID.X ;\n"
    "        /*0010*/                   LDC R8, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0030*/                   ISETP.GE.AND P0, PT, R9, R8, PT ;\n"
    "        /*0040*/              @!P0 LDC.64 R18, c[0x0][0x218] ;\n"
    "        /*0050*/               @P0 BRA `(.L_x_1) ;\n"
    "        /*0060*/                   IMAD.MOV.U32 R2, RZ, RZ, R9 ;\n"
    ".L_x_1:\n"
    "        /*0070*/              @!P0 IMAD.WIDE.U32 R18, R9, 0x4, R18 ;\n"
    "        /*0080*/              @!P0 STG.E desc[UR4][R18.64], RZ ;\n"
    "        /*0090*/                   EXIT ;\n";

static void test_rejoin(void **state)
{
    (void)state;
    uint32_t n;
    sg_sass_kernel_t *k = analyse_mutated(rejoin, NULL, NULL, 0, NULL, &n);
    const sg_sass_kernel_t *t = kernel(k, n, "rejoin");
    assert_int_equal(t->n_accesses, 1);
    const sg_sass_access_t *s = &t->accesses[0];
    assert_true(s->index_known);
    assert_int_equal(s->base, 0x8);
    assert_int_equal(coef(s, SG_SASS_TID_X), 4);
    assert_true(has_bound_tid(s));
    sg_sass_kernels_free(k, n);
    /* the store under P0 instead: the pointer is not loaded there */
    k = analyse_mutated(rejoin, NULL, "@!P0 STG", 0, " @P0 STG", &n);
    t = kernel(k, n, "rejoin");
    assert_false(t->accesses[0].index_known && t->accesses[0].base == 0x8);
    sg_sass_kernels_free(k, n);
}

/* ---- PLOP3.LUT: a uniform comparison moved into a predicate ------------------------ */

static const char plop3_copy[] =
    ".text.plop3:\n"
    "        /*0000*/                   S2UR UR5, SR_CTAID.X ;\n"
    "        /*0010*/                   ULDC UR6, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC.64 UR8, c[0x0][0x208] ;\n"
    "        /*0030*/                   USHF.L.U32 UR5, UR5, 0xa, URZ ;\n"
    "        /*0040*/                   UIADD3 UR6, -UR5, UR6, URZ ;\n"
    "        /*0050*/                   UISETP.GE.U32.AND UP0, UPT, UR6, 0x400, UPT ;\n"
    "        /*0060*/                   PLOP3.LUT P0, PT, PT, PT, UP0, 0x80, 0x0 ;\n"
    "        /*0070*/              @!P0 EXIT ;\n"
    "        /*0080*/                   S2R R0, SR_TID.X ;\n"
    "        /*0090*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*00a0*/                   VIADD R0, R0, UR5 ;\n"
    "        /*00b0*/                   IMAD.WIDE.U32 R2, R0, 0x4, R2 ;\n"
    "        /*00c0*/                   STG.E desc[UR8][R2.64], RZ ;\n"
    "        /*00d0*/                   EXIT ;\n";

static void test_plop3(void **state)
{
    (void)state;
    static const struct {
        const char *lut;
        uint8_t op; /* the condition on 1024 + 1024*ctaid.x against P[0x0] */
        bool known;
    } cases[] = {
        {"0x80, 0x0", SG_SASS_LE, true},  /* P0 = UP0: remaining >= 1024 */
        {"0x48, 0x0", SG_SASS_GT, true},  /* P0 = !UP0, whichever input is the table's high bit */
        {"0x40, 0x0", 0, false},          /* !UP0 or false: it depends on that */
        {"0xc0, 0x0", 0, false},          /* PT & PT, or UP0 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t n;
        sg_sass_kernel_t *k = analyse_mutated(plop3_copy, NULL, "0x80, 0x0", 0, cases[c].lut, &n);
        const sg_sass_kernel_t *t = kernel(k, n, "plop3");
        assert_int_equal(t->n_accesses, 1);
        const sg_sass_access_t *s = &t->accesses[0];
        assert_true(s->index_known);
        bool found = false;
        for (uint32_t i = 0; i < s->n_conds; i++) {
            const sg_sass_cond_t *q = &s->conds[i];
            if (q->param == 0 && q->uns && coef_of_cond(q) == 1024) {
                assert_int_equal(q->op, cases[c].op);
                found = true;
            }
        }
        assert_int_equal(found, cases[c].known);
        assert_int_equal(s->conditions_exact, cases[c].known);
        sg_sass_kernels_free(k, n);
    }
}

/* ---- a branch on a float comparison, and where its edges meet ------------------

   The analysis cannot read FSETP's predicate; inside the branch which
   threads run is only bounded, after it (both edges met) it is exact
   again: the two edges' opaque outcomes cancel. */
static const char fdiamond[] =
    ".text.fdiamond:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC R2, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0030*/                   ISETP.GE.AND P0, PT, R0, R2, PT ;\n"
    "        /*0040*/               @P0 EXIT ;\n"
    "        /*0050*/                   LDC.64 R4, c[0x0][0x218] ;\n"
    "        /*0060*/                   IMAD.WIDE.U32 R4, R0, 0x4, R4 ;\n"
    "        /*0070*/                   LDG.E R6, desc[UR4][R4.64] ;\n"
    "        /*0080*/                   FSETP.GE.AND P1, PT, |R6|, 105615, PT ;\n"
    "        /*0090*/              @!P1 BRA `(.L_x_1) ;\n"
    "        /*00a0*/                   FMUL R6, R6, 2 ;\n"
    "        /*00b0*/                   STG.E desc[UR4][R4.64], R6 ;\n"
    ".L_x_1:\n"
    "        /*00c0*/                   STG.E desc[UR4][R4.64+0x4], R6 ;\n"
    "        /*00d0*/                   EXIT ;\n";

static void test_float_branch(void **state)
{
    (void)state;
    uint32_t n;
    sg_sass_kernel_t *k = analyse_mutated(fdiamond, NULL, NULL, 0, NULL, &n);
    const sg_sass_kernel_t *t = kernel(k, n, "fdiamond");
    assert_int_equal(t->n_accesses, 3);
    for (uint32_t i = 0; i < 3; i++) {
        assert_true(t->accesses[i].index_known);
        assert_true(has_bound_tid(&t->accesses[i]));
    }
    assert_true(t->accesses[0].conditions_exact);  /* the load, before the branch */
    assert_false(t->accesses[1].conditions_exact); /* inside: some threads, by data */
    assert_true(t->accesses[2].conditions_exact);  /* after: all of them again */
    sg_sass_kernels_free(k, n);
    /* a second branch inside on another float: where the first one's edges
     * meet, the second one's inner edge has not met its other one */
    k = analyse_mutated(fdiamond, NULL, "        /*00a0*/                   FMUL R6, R6, 2 ;\n", 0,
                        "        /*00a0*/                   FSETP.GE.AND P2, PT, |R6|, 1, PT ;\n"
                        "        /*00a4*/               @P2 BRA `(.L_x_1) ;\n",
                        &n);
    t = kernel(k, n, "fdiamond");
    assert_int_equal(t->n_accesses, 3);
    assert_false(t->accesses[1].conditions_exact);
    sg_sass_kernels_free(k, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compiled_tails),
        cmocka_unit_test(test_chain_mutations),
        cmocka_unit_test(test_store_chain),
        cmocka_unit_test(test_rejoin),
        cmocka_unit_test(test_plop3),
        cmocka_unit_test(test_float_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
