/* bench_sass.c: cost of the SASS access analysis per kernel, nvdisasm
 * included (issue 11: goal <= 5 ms per distinct kernel).
 *
 * For each cubin (default: the generated 200-kernel sm_90 cubin beside this
 * binary): all kernels in one batch with one nvdisasm, the same batch split
 * over side-by-side nvdisasm runs (the default; what
 * sg_sass_cache_prefetch does for an image), then the first few kernels
 * alone (one run each). CPU time is split between the
 * disassembler (children) and the parse + dataflow (this process); wall
 * time is printed beside it (shared build machines make it noisy).
 *
 * With --images K: up to K kernels from each cubin, as a graph's kernel
 * nodes come from many images, five ways (bench_images): the code as it is
 * per image and in one batch, each distinct instruction once in one batch
 * (sg_access_bundle_prefetch) with no cache directory, an empty one and a
 * warm one.
 *
 * usage: bench_sass [CUBIN...] | bench_sass --images K CUBIN... */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "code/elf_image.h"
#include "code/sass.h"

typedef struct {
    double wall, self, child;
} stamp_t;

static stamp_t now(void)
{
    struct timespec w;
    struct rusage s, c;
    clock_gettime(CLOCK_MONOTONIC, &w);
    getrusage(RUSAGE_SELF, &s);
    getrusage(RUSAGE_CHILDREN, &c);
    return (stamp_t){w.tv_sec + w.tv_nsec * 1e-9,
                     s.ru_utime.tv_sec + s.ru_utime.tv_usec * 1e-6 + s.ru_stime.tv_sec +
                         s.ru_stime.tv_usec * 1e-6,
                     c.ru_utime.tv_sec + c.ru_utime.tv_usec * 1e-6 + c.ru_stime.tv_sec +
                         c.ru_stime.tv_usec * 1e-6};
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    uint8_t *b = malloc((size_t)len);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void bench_one(const char *path)
{
    size_t n;
    uint8_t *b = slurp(path, &n);
    sg_name_list_t names = {0};
    if (!b || sg_elf_list_kernels(b, n, &names) != 0 || names.n == 0) {
        printf("%s: not a cubin with kernels\n", path);
        free(b);
        return;
    }
    sg_sass_kernel_t *k = calloc(names.n, sizeof *k);
    sg_sass_options_t one = {.jobs = 1};
    stamp_t s0 = now();
    sg_sass_analyze_cubin(b, n, names.names, names.n, &one, k);
    stamp_t s1 = now();
    for (uint32_t i = 0; i < names.n; i++)
        sg_sass_kernel_free(&k[i]);
    stamp_t t0 = now();
    sg_sass_analyze_cubin(b, n, names.names, names.n, NULL, k);
    stamp_t t1 = now();
    uint64_t insns = 0, ok = 0;
    for (uint32_t i = 0; i < names.n; i++) {
        insns += k[i].n_instructions;
        ok += k[i].status == SG_SASS_ANALYSED;
        sg_sass_kernel_free(&k[i]);
    }
    double per = (t1.self - t0.self + t1.child - t0.child) * 1e3 / names.n;
    printf("%s: %u kernels (%llu analysed), %llu instructions\n", path, names.n,
           (unsigned long long)ok, (unsigned long long)insns);
    printf("  batch, 1 nvdisasm   : %7.2f ms CPU per kernel, %7.2f ms wall\n",
           (s1.self - s0.self + s1.child - s0.child) * 1e3 / names.n,
           (s1.wall - s0.wall) * 1e3 / names.n);
    printf("  batch, side by side : %7.2f ms CPU per kernel (nvdisasm %.2f + analysis %.2f), "
           "%7.2f ms wall\n",
           per, (t1.child - t0.child) * 1e3 / names.n, (t1.self - t0.self) * 1e3 / names.n,
           (t1.wall - t0.wall) * 1e3 / names.n);
    uint32_t alone = names.n < 5 ? names.n : 5;
    stamp_t a0 = now();
    for (uint32_t i = 0; i < alone; i++) {
        sg_sass_analyze_cubin(b, n, &names.names[i], 1, NULL, &k[i]);
        sg_sass_kernel_free(&k[i]);
    }
    stamp_t a1 = now();
    double per1 = (a1.self - a0.self + a1.child - a0.child) * 1e3 / alone;
    printf("  alone               : %7.2f ms CPU per kernel (first %u, one nvdisasm run each), "
           "%7.2f ms wall\n",
           per1, alone, (a1.wall - a0.wall) * 1e3 / alone);
    double wall = (t1.wall - t0.wall) * 1e3 / names.n;
    printf("  batch/alone (CPU): %.3f   goal: <= 5 ms per kernel (batch wall %s)\n", per / per1,
           wall <= 5.0 ? "meets it" : "misses it");
    free(k);
    sg_name_list_free(&names);
    free(b);
}

/* One way of analysing the requests: wall and CPU ms per kernel (nvdisasm
 * included), and what nvdisasm was given. */
static void way(const char *label, const sg_sass_request_t *req, uint32_t nr, bool per_image,
                bool whole, const char *cache)
{
    sg_sass_kernel_t *k = calloc(nr, sizeof *k);
    if (!k)
        return;
    sg_sass_stats_t st = {0};
    sg_sass_options_t opt = {.whole_code = whole, .cache_dir = cache, .stats = &st};
    stamp_t a = now();
    for (uint32_t i = 0; i < nr;) {
        uint32_t j = per_image ? i : nr;
        while (per_image && j < nr && req[j].cubin == req[i].cubin)
            j++;
        sg_sass_analyze_requests(req + i, j - i, &opt, k + i);
        i = j;
    }
    stamp_t b = now();
    uint32_t ok = 0;
    for (uint32_t i = 0; i < nr; i++) {
        ok += k[i].status == SG_SASS_ANALYSED;
        sg_sass_kernel_free(&k[i]);
    }
    free(k);
    double wall = (b.wall - a.wall) * 1e3 / nr;
    printf("  %-44s %7.2f ms wall, %7.2f ms CPU per kernel (nvdisasm %.2f); %u runs, %llu of "
           "%llu instructions to nvdisasm, %llu cached; %u analysed  [%s]\n",
           label, wall, (b.self - a.self + b.child - a.child) * 1e3 / nr,
           (b.child - a.child) * 1e3 / nr, st.runs, (unsigned long long)st.disassembled,
           (unsigned long long)st.instructions, (unsigned long long)st.cached, ok,
           wall <= 5.0 ? "<= 5 ms" : "> 5 ms");
}

/* A graph's view: up to K kernels from each of several images (PyTorch's
 * kernel nodes come from many translation units, each its own fatbin),
 * analysed five ways one after the other: the code as it is, one batch per
 * image (how the access pass started) and one batch for all; each distinct
 * instruction once (sass_uniq.h), one batch for all (what
 * sg_access_bundle_prefetch does now), with no cache directory, with an
 * empty one, and with it warm (every instruction known: no nvdisasm). */
static void bench_images(char **paths, int n_paths, uint32_t per_image)
{
    uint8_t **bytes = calloc((size_t)n_paths, sizeof *bytes);
    size_t *lens = calloc((size_t)n_paths, sizeof *lens);
    sg_name_list_t *names = calloc((size_t)n_paths, sizeof *names);
    sg_sass_request_t *req = NULL;
    uint32_t nr = 0, cap = 0;
    char dir[] = "/tmp/sgcap-bench-sass-XXXXXX";
    bool have_dir = false;
    if (!bytes || !lens || !names)
        goto out;
    for (int i = 0; i < n_paths; i++) {
        bytes[i] = slurp(paths[i], &lens[i]);
        if (!bytes[i] || sg_elf_list_kernels(bytes[i], lens[i], &names[i]) != 0)
            continue;
        for (uint32_t j = 0; j < names[i].n && j < per_image; j++) {
            if (nr == cap) {
                cap = cap ? 2 * cap : 256;
                sg_sass_request_t *r = realloc(req, cap * sizeof *r);
                if (!r)
                    goto out;
                req = r;
            }
            req[nr++] = (sg_sass_request_t){bytes[i], lens[i], names[i].names[j]};
        }
    }
    if (nr == 0)
        goto out;
    have_dir = mkdtemp(dir) != NULL;
    printf("graph view: %u kernels, up to %u from each of %d images\n", nr, per_image, n_paths);
    way("the code as it is, one batch per image", req, nr, true, true, NULL);
    way("the code as it is, one batch for all", req, nr, false, true, NULL);
    way("distinct instructions, one batch, no cache", req, nr, false, false, NULL);
    if (have_dir) {
        way("distinct instructions, one batch, cache cold", req, nr, false, false, dir);
        way("distinct instructions, one batch, cache warm", req, nr, false, false, dir);
    }
    printf("  goal: <= 5 ms per distinct kernel, nvdisasm included (wall time; CPU time beside "
           "it: nvdisasm runs and the analysis threads use up to 8 CPUs)\n");
out:
    if (have_dir) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            printf("bench_sass: could not remove %s\n", dir);
    }
    for (int i = 0; bytes && i < n_paths; i++) {
        free(bytes[i]);
        if (names)
            sg_name_list_free(&names[i]);
    }
    free(bytes);
    free(lens);
    free(names);
    free(req);
}

int main(int argc, char **argv)
{
    char tool[4096];
    if (sg_sass_find_disassembler(tool, sizeof tool) != 0) {
        printf("bench_sass: no nvdisasm found (SGCAP_NVDISASM, PATH, pip nvidia-cuda-nvdisasm): "
               "nothing measured\n");
        return 0;
    }
    printf("nvdisasm: %s\n", tool);
    if (argc < 2) {
        bench_one(SGCAP_BENCH_SASS_CUBIN);
        return 0;
    }
    if (argc > 3 && !strcmp(argv[1], "--images")) {
        bench_images(argv + 3, argc - 3, (uint32_t)atoi(argv[2]) ? (uint32_t)atoi(argv[2]) : 1);
        return 0;
    }
    for (int i = 1; i < argc; i++)
        bench_one(argv[i]);
    return 0;
}
