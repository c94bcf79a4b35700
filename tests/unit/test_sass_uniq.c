/* test_sass_uniq.c: each distinct instruction disassembled once
 * (code/sass_uniq.h).
 *
 * Always: the index of distinct encodings, which operands move with the pc,
 * a listing that does not line up, kernel listings put together from a
 * hand-written raw listing, and the cache file of what nvdisasm printed
 * (learned, saved, read back, refused when damaged). With a real nvdisasm
 * (skipped without one): for the committed cubins of every arch, the
 * listing made from the distinct instructions equals the listing of the
 * whole code, instruction by instruction and field by field; and the cache
 * directory across analyses: no nvdisasm run when it knows everything, the
 * same facts, a damaged file ignored and replaced.
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

#include "code/elf_image.h"
#include "code/sass.h"
#include "code/sass_facts.h"
#include "code/sass_uniq.h"
#include "graph/graph.h"

#define DATA SGCAP_SOURCE_DIR "/tests/data/sass/"

static void word(uint8_t *p, uint64_t lo, uint64_t hi)
{
    memcpy(p, &lo, 8);
    memcpy(p + 8, &hi, 8);
}

static void test_index(void **state)
{
    (void)state;
    uint8_t code[16 * 6];
    word(code + 0, 1, 2);
    word(code + 16, 3, 4);
    word(code + 32, 1, 2);
    word(code + 48, 1, 3); /* differs from the first in one word only */
    word(code + 64, 3, 4);
    word(code + 80, 1, 2);
    sg_sass_uniq_t u;
    assert_int_equal(sg_sass_uniq_build(code, sizeof code, &u), 0);
    assert_int_equal(u.n, 6);
    assert_int_equal(u.n_distinct, 3);
    const uint32_t want[] = {0, 1, 0, 2, 1, 0};
    for (int i = 0; i < 6; i++)
        assert_int_equal(u.map[i], want[i]);
    assert_memory_equal(u.code, code, 32); /* first-seen order */
    assert_memory_equal(u.code + 32, code + 48, 16);
    sg_sass_uniq_free(&u);

    assert_int_equal(sg_sass_uniq_build(code, 17, &u), SG_EINVAL);
    assert_int_equal(sg_sass_uniq_build(NULL, 16, &u), SG_EINVAL);
    assert_int_equal(sg_sass_uniq_build(NULL, 0, &u), 0);
    assert_int_equal(u.n_distinct, 0);
    sg_sass_uniq_free(&u);

    /* many distinct words: the table grows past collisions */
    enum { N = 5000 };
    uint8_t *big = malloc(16 * N);
    assert_non_null(big);
    for (uint32_t i = 0; i < N; i++)
        word(big + 16 * i, i % 1237, (uint64_t)(i % 1237) << 40);
    assert_int_equal(sg_sass_uniq_build(big, 16 * N, &u), 0);
    assert_int_equal(u.n_distinct, 1237);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(u.map[i], i % 1237);
    sg_sass_uniq_free(&u);
    free(big);
}

static sg_sass_listing_t parse(const char *text)
{
    sg_sass_listing_t l;
    char err[160];
    assert_int_equal(sg_sass_parse(text, strlen(text), &l, err, sizeof err), 0);
    return l;
}

static void test_pc_operands(void **state)
{
    (void)state;
    /* raw-mode text as nvdisasm prints it at -base 0 */
    sg_sass_listing_t l = parse("        /*0000*/                   @!P0 BRA 0x40 ;\n"
                                "        /*0010*/                   BSSY B0, 0x80 ;\n"
                                "        /*0020*/                   LEPC R20, 0x40 ;\n"
                                "        /*0030*/                   CALL.REL.NOINC 0x100 ;\n"
                                "        /*0040*/                   RET.REL.NODEC R20 0x0 ;\n"
                                "        /*0050*/                   CALL.ABS.NOINC 0x0 ;\n"
                                "        /*0060*/                   JMP 0x200 ;\n"
                                "        /*0070*/                   IMAD R1, R2, 0x40, RZ ;\n"
                                "        /*0080*/                   BRX R2 -0x90 ;\n"
                                "        /*0090*/                   EXIT ;\n");
    assert_int_equal(l.n_insns, 10);
    /* RET's "R20 0x0" (no comma) is one operand the parser keeps as text:
     * nothing the analysis reads moves */
    const int want[] = {0, 1, 1, 0, -1, -1, -1, -1, -1, -1};
    for (uint32_t i = 0; i < l.n_insns; i++)
        if (sg_sass_pc_operand(&l.insns[i]) != want[i])
            fail_msg("instruction %u (%s): operand %d", i, l.insns[i].op,
                     sg_sass_pc_operand(&l.insns[i]));
    sg_sass_listing_free(&l);
}

/* Code of 4 instructions where words 0 and 2 are the same BRA: the kernel
 * listing of [32, 64) must print its target relative to pc 32. */
static void test_listing(void **state)
{
    (void)state;
    uint8_t code[64];
    word(code + 0, 0xaa, 0);
    word(code + 16, 0xbb, 0);
    word(code + 32, 0xaa, 0);
    word(code + 48, 0xcc, 0);
    sg_sass_uniq_t u;
    assert_int_equal(sg_sass_uniq_build(code, sizeof code, &u), 0);
    assert_int_equal(u.n_distinct, 3);
    sg_sass_listing_t kl;
    assert_int_equal(sg_sass_uniq_listing(&u, 0, 64, &kl), SG_EINVAL); /* nothing taken yet */

    /* what nvdisasm printed for the distinct code at -base 0 */
    sg_sass_listing_t l = parse("        /*0000*/                   @P1 BRA 0x30 ;\n"
                                "        /*0010*/                   IMAD.MOV.U32 R1, RZ, RZ, 0x30 ;\n"
                                "        /*0020*/                   EXIT ;\n");
    /* a listing missing an instruction, or at other pcs, is refused */
    sg_sass_listing_t short_l = l;
    short_l.n_insns = 2;
    assert_int_equal(sg_sass_uniq_take(&u, &short_l, 0, 48, NULL, 0), SG_EFORMAT);
    assert_int_equal(sg_sass_uniq_take(&u, &l, 16, 32, NULL, 0), SG_EFORMAT);
    assert_int_equal(sg_sass_uniq_take(&u, &l, 0, 64, NULL, 0), SG_EINVAL); /* past the distinct code */
    assert_int_equal(sg_sass_uniq_take(&u, &l, 0, 48, NULL, 0), 0);
    sg_sass_listing_free(&l);

    assert_int_equal(sg_sass_uniq_listing(&u, 32, 32, &kl), 0);
    assert_int_equal(kl.n_insns, 2);
    assert_int_equal(kl.n_funcs, 0);
    assert_int_equal(kl.insns[0].pc, 32);
    assert_string_equal(kl.insns[0].op, "BRA");
    assert_int_equal(kl.insns[0].guard, 1);
    assert_int_equal(kl.insns[0].ops[0].imm, 0x30 + 32); /* moved with the pc */
    assert_int_equal(kl.insns[1].pc, 48);
    assert_string_equal(kl.insns[1].op, "EXIT");
    sg_sass_listing_free(&kl);
    assert_int_equal(sg_sass_uniq_listing(&u, 0, 32, &kl), 0);
    assert_int_equal(kl.insns[0].ops[0].imm, 0x30);
    assert_int_equal(kl.insns[1].ops[3].imm, 0x30); /* a plain immediate stays */
    sg_sass_listing_free(&kl);
    assert_int_equal(sg_sass_uniq_listing(&u, 8, 16, &kl), SG_EINVAL);
    assert_int_equal(sg_sass_uniq_listing(&u, 48, 32, &kl), SG_EINVAL);
    assert_int_equal(sg_sass_uniq_listing(&u, 0, 0, &kl), SG_EINVAL);
    sg_sass_uniq_free(&u);
}

static void operand_equal(const sg_sass_operand_t *a, const sg_sass_operand_t *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->uniform, b->uniform);
    assert_int_equal(a->neg, b->neg);
    assert_int_equal(a->inv, b->inv);
    assert_int_equal(a->abs, b->abs);
    assert_int_equal(a->wide, b->wide);
    assert_int_equal(a->u32, b->u32);
    assert_int_equal(a->reg, b->reg);
    assert_int_equal(a->reg2, b->reg2);
    assert_int_equal(a->reg2_uniform, b->reg2_uniform);
    assert_int_equal(a->reg2_wide, b->reg2_wide);
    assert_int_equal(a->imm, b->imm);
    assert_true(a->fimm == b->fimm || (a->fimm != a->fimm && b->fimm != b->fimm));
    assert_int_equal(a->sreg, b->sreg);
}

/* The concatenated .text of every kernel of a cubin, both ways. */
static void compare_cubin(const char *path, const char *arch_flag, uint32_t *moved)
{
    size_t len;
    uint8_t *cubin = (uint8_t *)sg_sass_read_file(path, &len);
    assert_non_null(cubin);
    sg_name_list_t names = {0};
    assert_int_equal(sg_elf_list_kernels(cubin, len, &names), 0);
    uint8_t *code = NULL;
    size_t n = 0;
    for (uint32_t i = 0; i < names.n; i++) {
        char sec[4096];
        sg_elf_section_t s;
        snprintf(sec, sizeof sec, ".text.%s", names.names[i]);
        assert_int_equal(sg_elf_find_section(cubin, len, sec, &s), 0);
        code = realloc(code, n + s.size);
        assert_non_null(code);
        memcpy(code + n, cubin + s.offset, s.size);
        n += s.size;
    }
    uint32_t arch = (uint32_t)atoi(arch_flag);
    char *text;
    size_t tl;
    char err[256];
    assert_int_equal(sg_sass_disassemble(NULL, arch, false, code, n, &text, &tl, err, sizeof err), 0);
    sg_sass_listing_t whole;
    assert_int_equal(sg_sass_parse(text, tl, &whole, err, sizeof err), 0);
    free(text);
    assert_int_equal(whole.n_insns, n / 16);

    sg_sass_uniq_t u;
    assert_int_equal(sg_sass_uniq_build(code, n, &u), 0);
    assert_true(u.n_distinct < u.n);
    assert_int_equal(sg_sass_disassemble(NULL, arch, false, u.code, (size_t)u.n_distinct * 16,
                                         &text, &tl, err, sizeof err), 0);
    sg_sass_listing_t dl;
    assert_int_equal(sg_sass_parse(text, tl, &dl, err, sizeof err), 0);
    free(text);
    assert_int_equal(sg_sass_uniq_take(&u, &dl, 0, (uint64_t)u.n_distinct * 16, NULL, 0), 0);
    sg_sass_listing_free(&dl);

    /* one listing of the whole code, and one per kernel-sized slice */
    sg_sass_listing_t kl;
    assert_int_equal(sg_sass_uniq_listing(&u, 0, n, &kl), 0);
    assert_int_equal(kl.n_insns, whole.n_insns);
    for (uint32_t i = 0; i < kl.n_insns; i++) {
        const sg_sass_insn_t *a = &kl.insns[i], *b = &whole.insns[i];
        assert_int_equal(a->pc, b->pc);
        assert_int_equal(a->guard, b->guard);
        assert_int_equal(a->guard_neg, b->guard_neg);
        assert_int_equal(a->guard_uniform, b->guard_uniform);
        assert_string_equal(a->op, b->op);
        assert_int_equal(a->n_ops, b->n_ops);
        for (uint32_t k = 0; k < a->n_ops; k++)
            operand_equal(&a->ops[k], &b->ops[k]);
        if (sg_sass_pc_operand(a) >= 0 && u.map[i] * 16 != a->pc)
            (*moved)++;
    }
    sg_sass_listing_free(&kl);
    sg_sass_uniq_free(&u);
    sg_sass_listing_free(&whole);
    sg_name_list_free(&names);
    free(code);
    free(cubin);
}

static void test_against_whole_code(void **state)
{
    (void)state;
    char tool[4096];
    if (sg_sass_find_disassembler(tool, sizeof tool) != 0) {
        fprintf(stderr, "no nvdisasm: the comparison with the whole code is skipped\n");
        skip();
    }
    static const char *const archs[] = {"75", "80", "86", "89", "90", "100", "120"};
    uint32_t moved = 0;
    for (size_t i = 0; i < sizeof archs / sizeof *archs; i++) {
        char p[512];
        snprintf(p, sizeof p, DATA "kernels_sm%s.cubin", archs[i]);
        compare_cubin(p, archs[i], &moved);
    }
    compare_cubin(DATA "cupy_sm90.cubin", "90", &moved);
    compare_cubin(DATA "tail_sm90.cubin", "90", &moved);
    /* the fixtures do have branches that land elsewhere than where they were
     * disassembled: the relocation was exercised */
    assert_true(moved > 20);
}

static char tmp[] = "/tmp/sgcap-icache-XXXXXX";

static int setup_tmp(void **state)
{
    (void)state;
    strcpy(tmp, "/tmp/sgcap-icache-XXXXXX");
    return mkdtemp(tmp) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* The one cache file in dir (its path in out); how many there are. */
static int cache_file(const char *dir, char *out, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls '%s'/sass-sm*.txt 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int n = 0;
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (n++ == 0) snprintf(out, len, "%s", line);
    }
    pclose(p);
    return n;
}

/* Learn two of three distinct instructions from a hand-written listing,
 * save, open again and fill a fresh index: the two come back with the pcs
 * they were printed at (so a branch moves right); a damaged file is
 * ignored. Needs no nvdisasm: the tool only names the file. */
static void test_icache_file(void **state)
{
    (void)state;
    uint8_t code[48];
    word(code + 0, 0xaa, 0);
    word(code + 16, 0xbb, 0);
    word(code + 32, 0xcc, 0);
    sg_sass_uniq_t u;
    assert_int_equal(sg_sass_uniq_build(code, sizeof code, &u), 0);
    sg_sass_icache_t *c = sg_sass_icache_open(tmp, "/bin/sh", 90);
    assert_non_null(c);
    uint32_t entries, learned;
    sg_sass_icache_stats(c, &entries, &learned);
    assert_int_equal(entries, 0);
    assert_int_equal(sg_sass_icache_fill(c, &u), 0);
    /* nvdisasm ran on distinct instructions 2 and 0 (in that order) at -base 0x100 */
    const uint32_t which[] = {2, 0};
    const char *text = "\t.headerflags @\"EF_CUDA_SM90\"\n"
                       "        /*0100*/                   IMAD.MOV.U32 R1, RZ, RZ, 0x7 ;\n"
                       "        /*0110*/                   @P0 BRA 0x200 ;\n";
    sg_sass_icache_learn(c, &u, which, 2, text, strlen(text), 0x100);
    sg_sass_icache_stats(c, &entries, &learned);
    assert_int_equal(entries, 0); /* the listing starts at 0x100: k = 0x10 is past which[] */
    sg_sass_icache_learn(c, &u, which - 0, 2, text, strlen(text), 0);
    sg_sass_icache_stats(c, &entries, &learned);
    assert_int_equal(entries, 0); /* pcs that do not line up with base: nothing learned */
    const char *text0 = "        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, 0x7 ;\n"
                        "        /*0010*/                   @P0 BRA 0x200 ;\n";
    sg_sass_icache_learn(c, &u, which, 2, text0, strlen(text0), 0);
    sg_sass_icache_stats(c, &entries, &learned);
    assert_int_equal(entries, 2);
    assert_int_equal(learned, 2);
    assert_int_equal(sg_sass_icache_save(c), 0);
    sg_sass_icache_free(c);
    sg_sass_uniq_free(&u);

    char path[4096];
    assert_int_equal(cache_file(tmp, path, sizeof path), 1);
    assert_int_equal(sg_sass_uniq_build(code, sizeof code, &u), 0);
    c = sg_sass_icache_open(tmp, "/bin/sh", 90);
    sg_sass_icache_stats(c, &entries, &learned);
    assert_int_equal(entries, 2);
    assert_int_equal(learned, 0);
    assert_int_equal(sg_sass_icache_fill(c, &u), 2);
    assert_true(u.have[0] && !u.have[1] && u.have[2]);
    assert_string_equal(u.insns[2].op, "IMAD.MOV.U32");
    assert_string_equal(u.insns[0].op, "BRA");
    assert_int_equal(u.insns[0].pc, 0x10); /* where it was printed */
    /* the last missing one, then the kernel listing of [0, 48) */
    sg_sass_listing_t l = parse("        /*0000*/                   EXIT ;\n");
    const uint32_t one[] = {1};
    assert_int_equal(sg_sass_uniq_take(&u, &l, 0, 16, one, 1), 0);
    sg_sass_listing_free(&l);
    sg_sass_listing_t kl;
    assert_int_equal(sg_sass_uniq_listing(&u, 0, 48, &kl), 0);
    assert_int_equal(kl.insns[0].ops[0].imm, 0x200 - 0x10); /* BRA at pc 0 */
    assert_string_equal(kl.insns[1].op, "EXIT");
    assert_int_equal(kl.insns[2].ops[3].imm, 7);
    sg_sass_listing_free(&kl);
    sg_sass_icache_free(c);
    sg_sass_uniq_free(&u);

    /* another arch or binary: another file, empty */
    c = sg_sass_icache_open(tmp, "/bin/sh", 80);
    sg_sass_icache_stats(c, &entries, NULL);
    assert_int_equal(entries, 0);
    sg_sass_icache_free(c);
    assert_null(sg_sass_icache_open(NULL, "/bin/sh", 90));

    /* damage: a line that is not hex, then a file cut short: ignored */
    char *body = sg_sass_read_file(path, &(size_t){0});
    assert_non_null(body);
    for (int damage = 0; damage < 2; damage++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        if (damage == 0) {
            char *p = strchr(body, '\n');
            assert_non_null(p);
            fwrite(body, 1, (size_t)(p + 1 - body), f);
            fputs("zz", f);
            fputs(p + 3, f);
        } else {
            fwrite(body, 1, strlen(body) - 3, f);
        }
        fclose(f);
        c = sg_sass_icache_open(tmp, "/bin/sh", 90);
        sg_sass_icache_stats(c, &entries, NULL);
        assert_int_equal(entries, 0);
        sg_sass_icache_free(c);
    }
    free(body);
}

/* Facts of every kernel of a cubin with these options. */
static char *facts_of(const char *cubin, const sg_sass_options_t *opt)
{
    sg_sass_kernel_t *k;
    uint32_t n;
    assert_int_equal(sg_sass_analyze_cubin_file(cubin, opt, NULL, &k, &n, NULL, 0), 0);
    char *f = sg_sass_facts_string(k, n);
    assert_non_null(f);
    sg_sass_kernels_free(k, n);
    return f;
}

static void test_cache_dir(void **state)
{
    (void)state;
    char tool[4096];
    if (sg_sass_find_disassembler(tool, sizeof tool) != 0) {
        fprintf(stderr, "no nvdisasm: the cache directory is not tried\n");
        skip();
    }
    const char *k90 = DATA "kernels_sm90.cubin", *cupy = DATA "cupy_sm90.cubin";
    sg_sass_options_t whole = {.whole_code = true};
    char *want90 = facts_of(k90, &whole), *wantc = facts_of(cupy, &whole);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sub/dir", tmp); /* made when first written */
    sg_sass_stats_t st = {0};
    sg_sass_options_t opt = {.cache_dir = dir, .stats = &st};
    char *f = facts_of(k90, &opt);
    assert_string_equal(f, want90);
    free(f);
    assert_true(st.runs >= 1 && st.cached == 0 && st.disassembled > 0);
    uint64_t distinct = st.disassembled;
    char path[4096];
    assert_int_equal(cache_file(dir, path, sizeof path), 1);

    memset(&st, 0, sizeof st);
    f = facts_of(k90, &opt);
    assert_string_equal(f, want90);
    free(f);
    assert_int_equal(st.runs, 0); /* everything known: no nvdisasm at all */
    assert_int_equal(st.disassembled, 0);
    assert_int_equal(st.cached, distinct);

    /* another cubin: only what the cache lacks goes to nvdisasm */
    memset(&st, 0, sizeof st);
    f = facts_of(cupy, &opt);
    assert_string_equal(f, wantc);
    free(f);
    assert_true(st.runs >= 1 && st.cached > 0 && st.disassembled > 0);

    /* a damaged file: ignored (the facts are still right) and replaced */
    FILE *o = fopen(path, "r+");
    assert_non_null(o);
    fseek(o, 200, SEEK_SET);
    fputs("#garbage#", o);
    fclose(o);
    memset(&st, 0, sizeof st);
    f = facts_of(k90, &opt);
    assert_string_equal(f, want90);
    free(f);
    assert_true(st.runs >= 1 && st.cached == 0);
    memset(&st, 0, sizeof st);
    f = facts_of(k90, &opt);
    assert_string_equal(f, want90);
    free(f);
    assert_int_equal(st.runs, 0);

    /* a directory that cannot be made: analysed all the same */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/file", tmp);
    FILE *b = fopen(bad, "w");
    assert_non_null(b);
    fclose(b);
    snprintf(bad, sizeof bad, "%s/file/sub", tmp);
    sg_sass_options_t nowrite = {.cache_dir = bad};
    f = facts_of(k90, &nowrite);
    assert_string_equal(f, want90);
    free(f);
    free(want90);
    free(wantc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_pc_operands),
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_against_whole_code),
        cmocka_unit_test_setup_teardown(test_icache_file, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_cache_dir, setup_tmp, teardown_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
