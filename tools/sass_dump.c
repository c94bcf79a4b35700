/* sass_dump: the SASS access analysis (code/sass.h) from the command line,
 * for the fixtures (tests/data/sass/make_fixtures.sh) and the GPU machine's
 * check on PyTorch's kernels (tests/gpu/sass_torch.sh). It links only
 * sgcap_code and sgcap_graph, so it runs where the unit tests' cmocka is not
 * installed.
 *
 *   sass_dump [--match S] CUBIN...       facts of every kernel (the format
 *                                        of tests/data/sass/expected_*.txt)
 *   sass_dump --text ARCH LISTING        facts from an ELF-mode nvdisasm listing
 *   sass_dump --summary [--match S] CUBIN...
 *                                        shares analysed / certain / attributed
 *   sass_dump --extract LIB ARCH DIR     the sm_ARCH cubins of LIB (a library, or a bare fatbin
 *                                        such as a bundle's code/H.fatbin) as DIR/cNNNN.cubin
 *   sass_dump --check DIR                DIR/kernels_smNN.cubin (and
 *                                        cupy_sm90.cubin) through this
 *                                        machine's nvdisasm against
 *                                        DIR/expected_smNN.txt (expected_cupy_
 *                                        sm90.txt), whole and split over 5
 *                                        nvdisasm runs
 *
 * Exit 0 ok, 1 a failure (a fact differs, an unreadable input, no cubin
 * extracted), 2 bad usage, 77 (--check) no nvdisasm found. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "code/elf_image.h"
#include "code/fatbin.h"
#include "code/sass.h"
#include "code/sass_facts.h"
#include "graph/graph.h"

static void usage(FILE *f)
{
    fputs("usage: sass_dump [--match S] CUBIN...\n"
          "       sass_dump --text ARCH LISTING\n"
          "       sass_dump --summary [--match S] CUBIN...\n"
          "       sass_dump --extract LIB ARCH DIR\n"
          "       sass_dump --check FIXTURE_DIR\n",
          f);
}

static bool arch_arg(const char *s, uint32_t *arch)
{
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v < 30 || v > 1000) {
        fprintf(stderr, "sass_dump: '%s' is not an arch number (90 for sm_90)\n", s);
        return false;
    }
    *arch = (uint32_t)v;
    return true;
}

static int dump(int argc, char **argv, const char *match)
{
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        sg_sass_kernel_t *k;
        uint32_t n;
        char err[512];
        if (sg_sass_analyze_cubin_file(argv[i], NULL, match, &k, &n, err, sizeof err)) {
            fprintf(stderr, "sass_dump: %s\n", err);
            bad = 1;
            continue;
        }
        sg_sass_facts_write(stdout, k, n);
        sg_sass_kernels_free(k, n);
    }
    return bad;
}

static int text(const char *arch_s, const char *path)
{
    uint32_t arch;
    if (!arch_arg(arch_s, &arch)) return 2;
    size_t len;
    char *t = sg_sass_read_file(path, &len);
    if (!t) {
        fprintf(stderr, "sass_dump: cannot read %s\n", path);
        return 1;
    }
    sg_sass_kernel_t *k;
    uint32_t n;
    char err[256];
    int rc = sg_sass_analyze_listing(t, len, arch, &k, &n, err, sizeof err);
    free(t);
    if (rc) {
        fprintf(stderr, "sass_dump: %s: %s\n", path, err);
        return 1;
    }
    sg_sass_facts_write(stdout, k, n);
    sg_sass_kernels_free(k, n);
    return 0;
}

static int summary(int argc, char **argv, const char *match)
{
    uint64_t nk = 0, ok = 0, certain = 0, acc = 0, based = 0, indexed = 0, stores = 0,
             stores_based = 0;
    int bad = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int a = 0; a < argc; a++) {
        sg_sass_kernel_t *k;
        uint32_t n;
        char err[512];
        if (sg_sass_analyze_cubin_file(argv[a], NULL, match, &k, &n, err, sizeof err)) {
            fprintf(stderr, "sass_dump: %s\n", err);
            bad = 1;
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            nk++;
            if (k[i].status != SG_SASS_ANALYSED) {
                if (nk - ok <= 5) printf("  %s: %s\n", k[i].name ? k[i].name : "?", k[i].reason);
                continue;
            }
            ok++;
            certain += k[i].certain;
            for (uint32_t j = 0; j < k[i].n_accesses; j++) {
                const sg_sass_access_t *x = &k[i].accesses[j];
                acc++;
                based += x->base >= 0;
                indexed += x->base >= 0 && x->index_known;
                if (x->kind != SG_SASS_LOAD) {
                    stores++;
                    stores_based += x->base >= 0;
                }
            }
        }
        sg_sass_kernels_free(k, n);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("kernels %llu, analysed %llu, certain (every store attributed) %llu (%.1f%%)\n"
           "accesses %llu: base known %llu (%.1f%%), base and index known %llu (%.1f%%); "
           "stores/atomics %llu, attributed %llu\n"
           "%.1f ms in all, %.2f ms per kernel (disassembler included)\n",
           (unsigned long long)nk, (unsigned long long)ok, (unsigned long long)certain,
           ok ? 100.0 * (double)certain / (double)ok : 0.0, (unsigned long long)acc,
           (unsigned long long)based, acc ? 100.0 * (double)based / (double)acc : 0.0,
           (unsigned long long)indexed, acc ? 100.0 * (double)indexed / (double)acc : 0.0,
           (unsigned long long)stores, (unsigned long long)stores_based, ms,
           nk ? ms / (double)nk : 0.0);
    return bad;
}

/* The sm_<arch> cubins of a library's .nv_fatbin (libtorch_cuda.so's). */
static int extract(const char *lib, const char *arch_s, const char *dir)
{
    uint32_t arch;
    if (!arch_arg(arch_s, &arch)) return 2;
    size_t len;
    char *b = sg_sass_read_file(lib, &len);
    sg_elf_section_t s;
    sg_fatbin_t fb;
    char err[256] = "";
    /* a library's .nv_fatbin, or a bare fatbin (a bundle's code/H.fatbin) */
    bool bare = b && len >= 4 && (uint8_t)b[0] == 0x50 && (uint8_t)b[1] == 0xed &&
                (uint8_t)b[2] == 0x55 && (uint8_t)b[3] == 0xba;
    if (bare) {
        s.offset = 0;
        s.size = len;
    }
    if (!b || (!bare && sg_elf_find_section(b, len, ".nv_fatbin", &s) != 0) ||
        sg_fatbin_parse(b + s.offset, s.size, 0, &fb, err, sizeof err) != 0) {
        fprintf(stderr, "sass_dump: %s: no readable .nv_fatbin%s%s\n", lib, *err ? ": " : "", err);
        free(b);
        return 1;
    }
    uint32_t k = 0;
    int bad = 0;
    for (uint32_t i = 0; i < fb.n_entries && !bad; i++) {
        uint8_t *img;
        size_t n;
        if (fb.entries[i].kind != SG_FATBIN_ENTRY_ELF || fb.entries[i].arch != arch ||
            sg_fatbin_extract(&fb, i, 0, &img, &n) != 0)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/c%04u.cubin", dir, k++);
        FILE *o = fopen(p, "wb");
        if (!o || fwrite(img, 1, n, o) != n) {
            fprintf(stderr, "sass_dump: cannot write %s\n", p);
            bad = 1;
        }
        if (o && fclose(o) != 0) bad = 1;
        free(img);
    }
    printf("%u sm_%u cubins from %s\n", k, arch, lib);
    sg_fatbin_free(&fb);
    free(b);
    return bad || !k ? 1 : 0;
}

/* The committed fixtures through this machine's nvdisasm (another nvdisasm
 * version must print what the parser reads). */
static int check(const char *dir)
{
    char path[4096];
    if (sg_sass_find_disassembler(path, sizeof path) != 0) {
        fprintf(stderr, "SKIP: no nvdisasm found (set SGCAP_NVDISASM, put it on PATH, or pip "
                        "install nvidia-cuda-nvdisasm)\n");
        return 77;
    }
    printf("using %s\n", path);
    /* every arch of kernels.cu, and CuPy's loops (cupy_sm90) */
    static const uint32_t archs[] = {75, 80, 86, 89, 90, 100, 120, 90};
    const size_t n_archs = sizeof archs / sizeof *archs;
    int bad = 0;
    for (size_t i = 0; i < n_archs; i++) {
        char cubin[4096], expected[4096];
        const char *stem = i + 1 == n_archs ? "cupy" : "kernels";
        snprintf(cubin, sizeof cubin, "%s/%s_sm%u.cubin", dir, stem, archs[i]);
        snprintf(expected, sizeof expected, "%s/expected_%ssm%u.txt", dir,
                 i + 1 == n_archs ? "cupy_" : "", archs[i]);
        size_t len;
        char *want = sg_sass_read_file(expected, &len);
        if (!want) {
            printf("FAIL %s sm_%u: cannot read %s\n", stem, archs[i], expected);
            bad = 1;
            continue;
        }
        for (uint32_t jobs = 0; jobs <= 5; jobs += 5) {
            sg_sass_options_t opt = {.jobs = jobs};
            sg_sass_kernel_t *k;
            uint32_t n;
            char err[512];
            if (sg_sass_analyze_cubin_file(cubin, &opt, NULL, &k, &n, err, sizeof err)) {
                printf("FAIL %s sm_%u: %s\n", stem, archs[i], err);
                bad = 1;
                break;
            }
            char *got = sg_sass_facts_string(k, n);
            uint32_t analysed = 0;
            for (uint32_t j = 0; j < n; j++)
                analysed += k[j].status == SG_SASS_ANALYSED;
            sg_sass_kernels_free(k, n);
            const char *how = jobs ? "split over 5 nvdisasm runs" : "one nvdisasm run";
            if (!got || strcmp(got, want) != 0) {
                printf("FAIL %s sm_%u (%s): the facts differ from %s; got:\n%s", stem, archs[i], how,
                       expected, got ? got : "(out of memory)\n");
                bad = 1;
            } else {
                printf("ok   %s sm_%u (%s): %u kernels, %u analysed, facts as in %s\n", stem, archs[i],
                       how, n, analysed, expected);
            }
            free(got);
        }
        free(want);
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *mode = argv[1];
    if (!strcmp(mode, "--text") && argc == 4) return text(argv[2], argv[3]);
    if (!strcmp(mode, "--extract") && argc == 5) return extract(argv[2], argv[3], argv[4]);
    if (!strcmp(mode, "--check") && argc == 3) return check(argv[2]);
    bool sum = !strcmp(mode, "--summary");
    int i = sum ? 2 : 1;
    const char *match = NULL;
    if (i + 1 < argc && !strcmp(argv[i], "--match")) {
        match = argv[i + 1];
        i += 2;
    }
    if (i >= argc || argv[i][0] == '-') {
        usage(stderr);
        return 2;
    }
    return sum ? summary(argc - i, argv + i, match) : dump(argc - i, argv + i, match);
}
