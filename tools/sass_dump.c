/* sass_dump: the SASS access analysis (code/sass.h) from the command line,
 * for the fixtures (tests/data/sass/make_fixtures.sh) and the GPU machine's
 * check on PyTorch's kernels (tests/gpu/sass_torch.sh). It links only
 * sgcap_code and sgcap_graph, so it runs where the unit tests' cmocka is not
 * installed.
 *
 *   sass_dump [--match S] CUBIN...       facts of every kernel (the format
 *                                        of tests/data/sass/expected_*.txt)
 *   sass_dump --text ARCH LISTING        facts from an ELF-mode nvdisasm listing
 *   sass_dump --summary [--batch] [--whole-code] [--cache DIR] [--match S] CUBIN...
 *                                        shares analysed / certain / attributed,
 *                                        and the cost: one nvdisasm batch per
 *                                        cubin, or one for all (--batch, what a
 *                                        bundle's kernels get); each distinct
 *                                        instruction disassembled once, or the
 *                                        code as it is (--whole-code); with
 *                                        --cache, what nvdisasm printed before
 *                                        is read from and kept in DIR
 *   sass_dump --compare CUBIN...         the facts of every kernel both ways
 *                                        (distinct instructions, whole code):
 *                                        they must be the same
 *   sass_dump --extract LIB ARCH DIR     the sm_ARCH cubins of LIB (a library, or a bare fatbin
 *                                        such as a bundle's code/H.fatbin) as DIR/cNNNN.cubin
 *   sass_dump --check DIR                DIR/kernels_smNN.cubin (and
 *                                        cupy_sm90.cubin) through this
 *                                        machine's nvdisasm against
 *                                        DIR/expected_smNN.txt (expected_cupy_
 *                                        sm90.txt), each way: distinct
 *                                        instructions or the whole code, the
 *                                        default runs or split over 5
 *                                        nvdisasm runs
 *
 * Exit 0 ok, 1 a failure (a fact differs, an unreadable input, no cubin
 * extracted), 2 bad usage, 77 (--check) no nvdisasm found. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
          "       sass_dump --summary [--batch] [--whole-code] [--cache DIR] [--match S] CUBIN...\n"
          "       sass_dump --compare CUBIN...\n"
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

static double cpu_seconds(void)
{
    struct rusage s, c;
    getrusage(RUSAGE_SELF, &s);
    getrusage(RUSAGE_CHILDREN, &c);
    return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
           (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
                    c.ru_stime.tv_usec) * 1e-6;
}

/* Every kernel (matching) of every cubin in one sg_sass_analyze_requests
 * batch. 0, or 1 with a message when a cubin cannot be read. */
static int analyze_batch(int argc, char **argv, const char *match, const sg_sass_options_t *opt,
                         sg_sass_kernel_t **out, uint32_t *n_out)
{
    uint8_t **bytes = calloc((size_t)argc, sizeof *bytes);
    size_t *lens = calloc((size_t)argc, sizeof *lens);
    sg_name_list_t *names = calloc((size_t)argc, sizeof *names);
    sg_sass_request_t *req = NULL;
    uint32_t nr = 0, cap = 0;
    int bad = !bytes || !lens || !names;
    for (int a = 0; a < argc && !bad; a++) {
        bytes[a] = (uint8_t *)sg_sass_read_file(argv[a], &lens[a]);
        if (!bytes[a] || sg_elf_list_kernels(bytes[a], lens[a], &names[a]) != 0) {
            fprintf(stderr, "sass_dump: %s: not a readable cubin\n", argv[a]);
            bad = 1;
            break;
        }
        for (uint32_t i = 0; i < names[a].n; i++) {
            if (match && !strstr(names[a].names[i], match)) continue;
            if (nr == cap) {
                cap = cap ? 2 * cap : 256;
                sg_sass_request_t *r = realloc(req, cap * sizeof *r);
                if (!r) { bad = 1; break; }
                req = r;
            }
            req[nr++] = (sg_sass_request_t){bytes[a], lens[a], names[a].names[i]};
        }
    }
    sg_sass_kernel_t *k = bad ? NULL : calloc(nr ? nr : 1, sizeof *k);
    if (k && sg_sass_analyze_requests(req, nr, opt, k) != 0) {
        fprintf(stderr, "sass_dump: the batch failed (out of memory)\n");
        sg_sass_kernels_free(k, nr);
        k = NULL;
    }
    if (!k) bad = 1;
    /* the kernels' names are their own copies: the cubins can go */
    for (int a = 0; a < argc; a++) {
        if (bytes) free(bytes[a]);
        if (names) sg_name_list_free(&names[a]);
    }
    free(bytes);
    free(lens);
    free(names);
    free(req);
    *out = bad ? NULL : k;
    *n_out = bad ? 0 : nr;
    return bad;
}

static int summary(int argc, char **argv, const char *match, bool batch, bool whole,
                   const char *cache)
{
    uint64_t nk = 0, ok = 0, certain = 0, acc = 0, based = 0, indexed = 0, stores = 0,
             stores_based = 0;
    int bad = 0;
    sg_sass_stats_t st = {0};
    sg_sass_options_t opt = {.whole_code = whole, .stats = &st, .cache_dir = cache};
    struct timespec t0, t1;
    double c0 = cpu_seconds();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int a = 0; a < argc; a++) {
        sg_sass_kernel_t *k;
        uint32_t n;
        char err[512];
        if (batch) {
            if (analyze_batch(argc, argv, match, &opt, &k, &n)) return 1;
            a = argc;
        } else if (sg_sass_analyze_cubin_file(argv[a], &opt, match, &k, &n, err, sizeof err)) {
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
    double cpu = (cpu_seconds() - c0) * 1e3;
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("kernels %llu, analysed %llu, certain (every store attributed) %llu (%.1f%%)\n"
           "accesses %llu: base known %llu (%.1f%%), base and index known %llu (%.1f%%); "
           "stores/atomics %llu, attributed %llu\n"
           "%.1f ms in all, %.2f ms per kernel (disassembler included; CPU %.2f ms per kernel); "
           "%s, %s: %llu instructions, %llu given to nvdisasm, %u nvdisasm runs, "
           "%llu known from the cache\n",
           (unsigned long long)nk, (unsigned long long)ok, (unsigned long long)certain,
           ok ? 100.0 * (double)certain / (double)ok : 0.0, (unsigned long long)acc,
           (unsigned long long)based, acc ? 100.0 * (double)based / (double)acc : 0.0,
           (unsigned long long)indexed, acc ? 100.0 * (double)indexed / (double)acc : 0.0,
           (unsigned long long)stores, (unsigned long long)stores_based, ms,
           nk ? ms / (double)nk : 0.0, nk ? cpu / (double)nk : 0.0,
           batch ? "one batch for all cubins" : "one batch per cubin",
           whole ? "the code as it is" : "each distinct instruction once",
           (unsigned long long)st.instructions, (unsigned long long)st.disassembled, st.runs,
           (unsigned long long)st.cached);
    return bad;
}

/* Both ways of disassembling must give the same facts, kernel for kernel. */
static int compare(int argc, char **argv)
{
    int bad = 0;
    uint64_t kernels = 0, same = 0;
    for (int a = 0; a < argc; a++) {
        char *facts[2] = {NULL, NULL};
        uint32_t nk[2] = {0, 0};
        for (int w = 0; w < 2; w++) {
            sg_sass_options_t opt = {.whole_code = w == 1};
            sg_sass_kernel_t *k;
            char err[512];
            if (sg_sass_analyze_cubin_file(argv[a], &opt, NULL, &k, &nk[w], err, sizeof err)) {
                fprintf(stderr, "sass_dump: %s\n", err);
                bad = 1;
                break;
            }
            facts[w] = sg_sass_facts_string(k, nk[w]);
            sg_sass_kernels_free(k, nk[w]);
        }
        if (facts[0] && facts[1]) {
            kernels += nk[0];
            if (nk[0] == nk[1] && !strcmp(facts[0], facts[1])) {
                same += nk[0];
            } else {
                printf("FAIL %s: the facts differ between distinct instructions and the whole code\n",
                       argv[a]);
                bad = 1;
            }
        } else if (!bad) {
            bad = 1;
        }
        free(facts[0]);
        free(facts[1]);
    }
    printf("%s: %d cubins, %llu kernels, facts the same both ways for %llu\n",
           bad ? "FAIL" : "PASS", argc, (unsigned long long)kernels, (unsigned long long)same);
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
        for (uint32_t way = 0; way < 4; way++) {
            uint32_t jobs = way & 1 ? 5 : 0;
            sg_sass_options_t opt = {.jobs = jobs, .whole_code = way >= 2};
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
            static const char *const hows[] = {
                "distinct instructions, runs side by side", "distinct instructions, 5 runs",
                "whole code, runs side by side", "whole code, 5 runs"};
            const char *how = hows[way];
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
    if (!strcmp(mode, "--compare") && argc >= 3) return compare(argc - 2, argv + 2);
    bool sum = !strcmp(mode, "--summary"), batch = false, whole = false;
    int i = sum ? 2 : 1;
    const char *match = NULL, *cache = NULL;
    for (; sum && i < argc; i++) {
        if (!strcmp(argv[i], "--batch")) batch = true;
        else if (!strcmp(argv[i], "--whole-code")) whole = true;
        else if (!strcmp(argv[i], "--cache") && i + 1 < argc) cache = argv[++i];
        else break;
    }
    if (i + 1 < argc && !strcmp(argv[i], "--match")) {
        match = argv[i + 1];
        i += 2;
    }
    if (i >= argc || argv[i][0] == '-') {
        usage(stderr);
        return 2;
    }
    return sum ? summary(argc - i, argv + i, match, batch, whole, cache) : dump(argc - i, argv + i, match);
}
