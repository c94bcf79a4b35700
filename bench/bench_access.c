/* bench_access.c: cost of the access analysis (code/access.h).
 *
 * 1. Per distinct kernel: every entry of every PTX fixture in
 *    tests/data/ptx/ is parsed once and analysed repeatedly; prints the mean
 *    and worst analysis time per kernel and the ratio of the worst to the
 *    1 ms goal (<= 1.00 meets it), plus the parse time per module.
 * 2. A synthetic graph of NODES kernel nodes (default 10000) launching those
 *    kernels with parameters pointing into a table of buffers: each node's
 *    analysis is looked up in the cache by (image hash, kernel, layout) and
 *    computed on a miss, then evaluated for the node. Prints the total and
 *    its ratio to the 2 s goal.
 * Times are CPU time of this process (build machines are shared), wall time
 * beside them.
 *
 * usage: bench_access [FIXTURE_DIR [NODES]] */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "code/access.h"
#include "code/fatbin.h"
#include "bench_clock.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = '\0';
    *len = (size_t)n;
    return b;
}

typedef struct {
    sg_ptx_module_t *m;
    char hash[17];
    const char *name;
} module_t;

typedef struct {
    module_t *mod;
    const sg_ptx_func_t *f;
} kernel_ref_t;

int main(int argc, char **argv)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : SGCAP_SOURCE_DIR "/tests/data/ptx");
    uint32_t nodes = argc > 2 ? (uint32_t)atoi(argv[2]) : 10000;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "bench_access: cannot open %s\n", dir);
        return 1;
    }
    module_t mods[64];
    uint32_t nm = 0;
    kernel_ref_t ks[1024];
    uint32_t nk = 0;
    double parse_cpu = 0;
    size_t parse_bytes = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nm < 64) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".ptx")) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *text = slurp(path, &len);
        if (!text) continue;
        sg_ptx_error_t err;
        stamp_t t0 = now();
        int rc = sg_ptx_parse(text, len, NULL, &mods[nm].m, &err);
        parse_cpu += now().cpu - t0.cpu;
        parse_bytes += len;
        if (rc) {
            fprintf(stderr, "bench_access: %s: %s\n", e->d_name, err.message);
            free(text);
            continue;
        }
        sg_code_hash(text, len, mods[nm].hash);
        mods[nm].name = strdup(e->d_name);
        for (uint32_t i = 0; i < mods[nm].m->n_funcs && nk < 1024; i++)
            if (mods[nm].m->funcs[i].is_entry && mods[nm].m->funcs[i].has_body)
                ks[nk++] = (kernel_ref_t){&mods[nm], &mods[nm].m->funcs[i]};
        free(text);
        nm++;
    }
    closedir(d);
    if (!nk) {
        fprintf(stderr, "bench_access: no kernels in %s\n", dir);
        return 1;
    }
    printf("bench_access: %u modules (%zu KiB of PTX), %u kernels\n", nm, parse_bytes >> 10, nk);
    printf("  parse: %.1f us per module, %.1f MB/s\n", parse_cpu * 1e6 / nm,
           parse_bytes / parse_cpu / 1e6);

    /* 1. analysis per distinct kernel */
    double worst = 0, sum = 0;
    const char *worst_name = "";
    for (uint32_t i = 0; i < nk; i++) {
        uint32_t reps = 0;
        stamp_t t0 = now();
        double el = 0;
        do {
            sg_access_kernel_t k;
            sg_access_analyze_ptx(ks[i].mod->m, ks[i].f->name, &k);
            sg_access_kernel_free(&k);
            reps++;
            el = now().cpu - t0.cpu;
        } while (el < 0.02 && reps < 100000);
        double per = el / reps;
        sum += per;
        if (per > worst) {
            worst = per;
            worst_name = ks[i].f->name;
        }
    }
    printf("  analysis per kernel: mean %.1f us, worst %.1f us (%s)\n", sum * 1e6 / nk, worst * 1e6,
           worst_name);
    printf("  worst / 1 ms goal: %.3f %s\n", worst / 1e-3, worst <= 1e-3 ? "(met)" : "(MISSED)");

    /* 2. a graph of `nodes` kernel nodes over those kernels, through the cache */
    enum { NBUF = 64 };
    sg_buffer_t bufs[NBUF];
    memset(bufs, 0, sizeof bufs);
    for (uint32_t b = 0; b < NBUF; b++) {
        bufs[b].id = b;
        bufs[b].address = 0x100000000ull + (uint64_t)b * (64ull << 20);
        bufs[b].size = 64ull << 20;
        bufs[b].label = "b";
    }
    uint8_t *bytes = calloc(nodes, 256);
    sg_kernel_t *node = calloc(nodes, sizeof(sg_kernel_t));
    if (!bytes || !node) return 1;
    uint64_t rng = 88172645463325252ull;
    for (uint32_t n = 0; n < nodes; n++) {
        const sg_ptx_func_t *f = ks[n % nk].f;
        sg_kernel_t *k = &node[n];
        k->name = (char *)f->name;
        k->grid[0] = 64 + n % 200;
        k->grid[1] = k->grid[2] = 1;
        k->block[0] = 128;
        k->block[1] = k->block[2] = 1;
        k->params_size = f->params_size <= 256 ? f->params_size : 256;
        k->param_bytes = bytes + (size_t)n * 256;
        /* pointer-sized words point into buffers, the rest are sizes */
        for (uint32_t off = 0; off + 8 <= k->params_size; off += 8) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            uint64_t v = (off / 8) % 2 == 0 ? bufs[rng % NBUF].address : 1000 + rng % 50000;
            memcpy(k->param_bytes + off, &v, 8);
        }
    }
    stamp_t t0 = now();
    sg_access_cache_t *cache = sg_access_cache_create();
    uint32_t known = 0, misses = 0;
    for (uint32_t n = 0; n < nodes; n++) {
        const kernel_ref_t *r = &ks[n % nk];
        uint32_t offs[256], sizes[256], np = r->f->n_params < 256 ? r->f->n_params : 256;
        for (uint32_t i = 0; i < np; i++) {
            offs[i] = r->f->params[i].param_offset;
            sizes[i] = (uint32_t)r->f->params[i].size;
        }
        char key[17];
        sg_access_key(r->mod->hash, r->f->name, np, offs, sizes, key);
        const sg_access_kernel_t *ak = sg_access_cache_get(cache, key);
        if (!ak) {
            sg_access_kernel_t fresh;
            sg_access_analyze_ptx(r->mod->m, r->f->name, &fresh);
            if (sg_access_cache_put(cache, key, &fresh)) sg_access_kernel_free(&fresh);
            ak = sg_access_cache_get(cache, key);
            misses++;
        }
        sg_access_eval_t ev;
        if (ak && sg_access_eval(ak, &node[n], bufs, NBUF, &ev) == SG_OK) {
            known += ev.all_known;
            sg_access_eval_free(&ev);
        }
    }
    stamp_t t1 = now();
    sg_access_cache_destroy(cache);
    double cpu = t1.cpu - t0.cpu, wall = t1.wall - t0.wall;
    printf("  %u-node graph: %.3f s cpu (%.3f s wall), %.1f us per node, %u analyses, %u nodes all known\n",
           nodes, cpu, wall, cpu * 1e6 / nodes, misses, known);
    printf("  graph / 2 s goal: %.3f %s\n", cpu / 2.0, cpu <= 2.0 ? "(met)" : "(MISSED)");
    free(bytes);
    free(node);
    for (uint32_t i = 0; i < nm; i++) {
        sg_ptx_module_free(mods[i].m);
        free((char *)mods[i].name);
    }
    return 0;
}
