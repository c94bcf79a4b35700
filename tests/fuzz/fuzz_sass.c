/* fuzz_sass.c: libFuzzer target for the SASS listing parser and the access
 * analysis (code/sass_text.c, code/sass_flow.c, and the loop summaries and
 * divisions of code/sass_loop.c, code/sass_div.c). Arbitrary text is parsed as
 * nvdisasm output; every function it names (or the whole raw listing) is
 * analysed for an arch picked by the first byte, and the facts are checked
 * against the analysis's promises: accesses in the kernel's pc range, bases
 * and candidates aligned to 8 inside the parameter space, NUL-terminated
 * reasons, parameter uses sorted. The disassembler itself is not run.
 * Seeds: tests/fuzz/seeds/fuzz_sass/ (pieces of real listings). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/sass.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) __builtin_trap();                                                                \
    } while (0)

static const uint32_t archs[] = {75, 80, 86, 89, 90, 100, 120, 50};

static void check_kernel(const sg_sass_kernel_t *k, uint32_t first_pc, uint32_t last_pc)
{
    CHECK(memchr(k->reason, 0, sizeof k->reason));
    CHECK(memchr(k->uncertain_reason, 0, sizeof k->uncertain_reason));
    if (k->status != SG_SASS_ANALYSED) {
        CHECK(k->n_accesses == 0 || k->accesses);
        return;
    }
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        const sg_sass_access_t *a = &k->accesses[i];
        CHECK(a->pc <= last_pc - first_pc);
        CHECK(a->kind == SG_SASS_LOAD || a->kind == SG_SASS_STORE || a->kind == SG_SASS_ATOMIC);
        CHECK(a->width >= 1 && a->width <= 32);
        CHECK(a->base < 32768 && (a->base < 0 || (a->base & 7) == 0));
        CHECK(a->n_candidates <= SG_SASS_MAX_CANDIDATES);
        CHECK(a->index.n <= SG_SASS_MAX_TERMS && a->guard_lhs.n <= SG_SASS_MAX_TERMS);
        CHECK(memchr(a->reason, 0, sizeof a->reason) && memchr(a->op, 0, sizeof a->op));
        /* a scaled index names a 4- or 8-byte stride word, aligned */
        CHECK(!a->scaled || ((a->scale_width == 4 || a->scale_width == 8) &&
                             a->scale_param % a->scale_width == 0 && a->index_known));
        if (!k->certain)
            continue;
        CHECK(a->kind == SG_SASS_LOAD || a->base >= 0);
        char line[512];
        sg_sass_access_format(a, line, sizeof line);
        uint8_t params[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        uint32_t grid[3] = {3, 2, 1}, block[3] = {128, 1, 2};
        sg_sass_extent_t e;
        if (sg_sass_access_extent(a, params, sizeof params, grid, block, &e) == 0)
            CHECK(e.lo <= e.hi || !e.exact);
    }
    for (uint32_t i = 1; i < k->n_params; i++)
        CHECK(k->params[i - 1].offset < k->params[i].offset);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t arch = archs[data[0] & 7];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    sg_sass_listing_t l;
    char err[128];
    if (sg_sass_parse(text, len, &l, err, sizeof err) != 0) {
        CHECK(memchr(err, 0, sizeof err));
        return 0;
    }
    sg_sass_target_t t = {.arch = arch, .param_size = (data[0] & 8) ? 64 : 0};
    uint32_t calls[2] = {0x40, 0x100};
    if (data[0] & 16) {
        t.call_targets = calls;
        t.n_call_targets = 2;
    }
    sg_sass_kernel_t k;
    if (l.n_funcs == 0) {
        uint32_t pc0 = l.n_insns ? l.insns[0].pc : 0;
        sg_sass_analyze(&l, 0, l.n_insns, pc0, NULL, &t, &k);
        check_kernel(&k, pc0, l.n_insns ? l.insns[l.n_insns - 1].pc : 0);
        sg_sass_kernel_free(&k);
    }
    for (uint32_t f = 0; f < l.n_funcs; f++) {
        CHECK(l.funcs[f].first <= l.n_insns && l.funcs[f].count <= l.n_insns - l.funcs[f].first);
        const sg_sass_insn_t *in = l.n_insns ? l.insns + l.funcs[f].first : NULL;
        uint32_t c = l.funcs[f].count;
        sg_sass_analyze(&l, l.funcs[f].first, c, 0, l.funcs[f].name, &t, &k);
        check_kernel(&k, 0, c ? in[c - 1].pc : 0);
        sg_sass_kernel_free(&k);
    }
    sg_sass_listing_free(&l);
    return 0;
}
