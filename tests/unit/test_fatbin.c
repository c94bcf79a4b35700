/* test_fatbin.c: unit tests of the code-image reader (code/fatbin.c,
 * code/elf_image.c) on images that nvcc builds from tests/data/fatbin_kernels.cu
 * at build time (tests/fatbin/fatbin.cmake): every --compress-mode, sm_90,
 * the default arch, SASS-only, multi-arch, -G, -rdc objects, an executable,
 * a cubin and a PTX file. Entry kinds and archs are checked against what
 * nvcc --dryrun says it packed (and cuobjdump -lelf -lptx when the build
 * found it); extraction, PTX choice, wrappers, sniffing and hashing are
 * checked on the same files, and malformed variants of them must fail
 * cleanly (regressions from the fuzzer live at the end). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code/code_report.h"
#include "code/elf_image.h"
#include "code/fatbin.h"
#include "graph/bundle.h"

#ifndef SGCAP_FATBIN_DIR
#error "SGCAP_FATBIN_DIR must be defined by tests/fatbin/fatbin.cmake"
#endif

#define K_ADD "sg_fb_add"
#define K_SCALE "_Z11sg_fb_scaleIfEvPT_S0_i"
#define K_HELPER "_Z12sg_fb_helperf"

/* ---- helpers --------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t n;
} blob_t;

static blob_t load(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SGCAP_FATBIN_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s (was the sgcap_fatbin_data target built?)", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    blob_t b = {malloc((size_t)len + 1), (size_t)len};
    assert_non_null(b.p);
    assert_int_equal(fread(b.p, 1, (size_t)len, f), (size_t)len);
    b.p[len] = 0;
    fclose(f);
    return b;
}

static bool exists(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SGCAP_FATBIN_DIR, name);
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* The fatbin bytes of a file: the file itself, or a section of an ELF. */
static const uint8_t *fatbin_bytes(const blob_t *b, const char *section, size_t *n)
{
    if (!section) {
        *n = b->n;
        return b->p;
    }
    sg_elf_section_t s;
    assert_int_equal(sg_elf_find_section(b->p, b->n, section, &s), SG_OK);
    *n = (size_t)s.size;
    return b->p + s.offset;
}

static void parse_ok(const uint8_t *p, size_t n, sg_fatbin_t *fb)
{
    char err[256];
    int rc = sg_fatbin_parse(p, n, 0, fb, err, sizeof err);
    if (rc) fail_msg("parse failed: %s (%s)", sg_strerror(rc), err);
}

/* One image as (kind, arch, suffix), sortable. kind: 'e' ELF, 'p' PTX. */
typedef struct {
    char kind;
    uint32_t arch;
    char sfx;
} image_t;

static int image_cmp(const void *a, const void *b)
{
    const image_t *x = a, *y = b;
    if (x->kind != y->kind) return x->kind - y->kind;
    if (x->arch != y->arch) return x->arch < y->arch ? -1 : 1;
    return x->sfx - y->sfx;
}

/* Parse "90", "90a", "100f" at s; returns chars used. */
static size_t parse_arch(const char *s, uint32_t *arch, char *sfx)
{
    size_t i = 0;
    *arch = 0;
    while (s[i] >= '0' && s[i] <= '9') *arch = *arch * 10 + (uint32_t)(s[i++] - '0');
    *sfx = (s[i] == 'a' || s[i] == 'f') ? s[i++] : 0;
    return i;
}

/* nvcc --dryrun: every "--image3=kind=elf,sm=90" of every fatbinary line. */
static size_t oracle_dryrun(const char *name, image_t *out, size_t max)
{
    char fn[512];
    snprintf(fn, sizeof fn, "%s.dryrun", name);
    blob_t d = load(fn);
    size_t n = 0;
    for (char *line = strtok((char *)d.p, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "fatbinary")) continue;
        for (char *q = strstr(line, "image3=kind="); q; q = strstr(q + 1, "image3=kind=")) {
            char *k = q + strlen("image3=kind=");
            char *sm = strstr(k, ",sm=");
            assert_non_null(sm);
            assert_true(n < max);
            out[n].kind = strncmp(k, "elf", 3) == 0 ? 'e' : strncmp(k, "ptx", 3) == 0 ? 'p' : '?';
            parse_arch(sm + 4, &out[n].arch, &out[n].sfx);
            n++;
        }
    }
    free(d.p);
    qsort(out, n, sizeof *out, image_cmp);
    return n;
}

/* cuobjdump -lelf -lptx: "ELF file    1: x.1.sm_90a.cubin". */
static size_t oracle_cuobjdump(const char *name, image_t *out, size_t max)
{
    char fn[512];
    snprintf(fn, sizeof fn, "%s.cuobjdump", name);
    blob_t d = load(fn);
    size_t n = 0;
    for (char *line = strtok((char *)d.p, "\n"); line; line = strtok(NULL, "\n")) {
        char kind = strncmp(line, "ELF file", 8) == 0   ? 'e'
                    : strncmp(line, "PTX file", 8) == 0 ? 'p'
                                                        : 0;
        if (!kind) continue;
        char *sm = strstr(line, ".sm_");
        assert_non_null(sm);
        assert_true(n < max);
        out[n].kind = kind;
        parse_arch(sm + 4, &out[n].arch, &out[n].sfx);
        n++;
    }
    free(d.p);
    qsort(out, n, sizeof *out, image_cmp);
    return n;
}

static char entry_sfx(const sg_fatbin_entry_t *e)
{
    return (e->flags & SG_FATBIN_FLAG_ARCH_SPECIFIC)     ? 'a'
           : (e->flags & SG_FATBIN_FLAG_FAMILY_SPECIFIC) ? 'f'
                                                         : 0;
}

static size_t reader_images(const sg_fatbin_t *fb, image_t *out, size_t max)
{
    size_t n = 0;
    for (uint32_t i = 0; i < fb->n_entries; i++) {
        const sg_fatbin_entry_t *e = &fb->entries[i];
        assert_true(e->kind == SG_FATBIN_ENTRY_PTX || e->kind == SG_FATBIN_ENTRY_ELF);
        assert_true(n < max);
        out[n].kind = e->kind == SG_FATBIN_ENTRY_ELF ? 'e' : 'p';
        out[n].arch = e->arch;
        out[n].sfx = entry_sfx(e);
        n++;
    }
    qsort(out, n, sizeof *out, image_cmp);
    return n;
}

static void assert_same_images(const char *what, const image_t *a, size_t na, const image_t *b,
                               size_t nb)
{
    if (na != nb) fail_msg("%s: reader found %zu images, oracle %zu", what, na, nb);
    for (size_t i = 0; i < na; i++)
        if (image_cmp(&a[i], &b[i]) != 0)
            fail_msg("%s: image %zu: reader %c sm_%u%c, oracle %c sm_%u%c", what, i, a[i].kind,
                     a[i].arch, a[i].sfx ? a[i].sfx : ' ', b[i].kind, b[i].arch,
                     b[i].sfx ? b[i].sfx : ' ');
}

/* Every case built by fatbin.cmake that holds a fatbin, and where it is. */
static const struct {
    const char *file;
    const char *section; /* NULL: the file is the fatbin */
} cases[] = {
    {"cm_default.fatbin", NULL}, {"cm_speed.fatbin", NULL},    {"cm_size.fatbin", NULL},
    {"cm_none.fatbin", NULL},    {"arch90.fatbin", NULL},      {"default_arch.fatbin", NULL},
    {"sass_only.fatbin", NULL},  {"higher_only.fatbin", NULL}, {"multi.fatbin", NULL},
    {"debug.fatbin", NULL},      {"rdc90.o", "__nv_relfatbin"}, {"rdc_default.o", "__nv_relfatbin"},
    {"exe90", ".nv_fatbin"},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* ---- entry lists against nvcc's own account ------------------------------------ */

static void test_entries_match_oracles(void **state)
{
    (void)state;
    for (size_t c = 0; c < N_CASES; c++) {
        blob_t b = load(cases[c].file);
        size_t n;
        const uint8_t *p = fatbin_bytes(&b, cases[c].section, &n);
        sg_fatbin_t fb;
        parse_ok(p, n, &fb);
        image_t mine[64], theirs[64];
        size_t nm = reader_images(&fb, mine, 64);
        assert_true(nm > 0);
        size_t nd = oracle_dryrun(cases[c].file, theirs, 64);
        assert_same_images(cases[c].file, mine, nm, theirs, nd);
#if SGCAP_FATBIN_HAVE_CUOBJDUMP
        size_t nc = oracle_cuobjdump(cases[c].file, theirs, 64);
        assert_same_images(cases[c].file, mine, nm, theirs, nc);
#else
        (void)oracle_cuobjdump;
#endif
        /* Every entry is 64-bit Linux code with nvcc 13's versions. */
        for (uint32_t i = 0; i < fb.n_entries; i++) {
            const sg_fatbin_entry_t *e = &fb.entries[i];
            assert_true(e->flags & SG_FATBIN_FLAG_64BIT);
            assert_true(e->flags & SG_FATBIN_FLAG_LINUX);
            if (e->kind == SG_FATBIN_ENTRY_ELF) {
                assert_int_equal(e->version_major, 1);
                assert_int_equal(e->version_minor, 8);
            } else {
                assert_int_equal(e->version_major, 9);
                assert_int_equal(e->version_minor, 0);
            }
            assert_true(e->payload_offset + e->payload_size <= fb.size);
        }
        assert_int_equal(fb.size, n);
        sg_fatbin_free(&fb);
        free(b.p);
    }
}

/* What fusion.md §1-2 measured, checked on this build's nvcc. */
static void test_known_layouts(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        uint32_t n_entries;
        sg_fatbin_compression_t ptx, elf;
        uint32_t arch;
    } want[] = {
        {"cm_default.fatbin", 2, SG_FATBIN_COMPRESS_ZSTD, SG_FATBIN_COMPRESS_NONE, 90},
        {"arch90.fatbin", 2, SG_FATBIN_COMPRESS_ZSTD, SG_FATBIN_COMPRESS_NONE, 90},
        {"cm_speed.fatbin", 2, SG_FATBIN_COMPRESS_LZ4, SG_FATBIN_COMPRESS_NONE, 90},
        {"cm_size.fatbin", 2, SG_FATBIN_COMPRESS_ZSTD, SG_FATBIN_COMPRESS_ZSTD, 90},
        {"cm_none.fatbin", 2, SG_FATBIN_COMPRESS_NONE, SG_FATBIN_COMPRESS_NONE, 90},
        {"default_arch.fatbin", 2, SG_FATBIN_COMPRESS_ZSTD, SG_FATBIN_COMPRESS_NONE, 75},
    };
    for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
        blob_t b = load(want[c].file);
        sg_fatbin_t fb;
        parse_ok(b.p, b.n, &fb);
        assert_int_equal(fb.n_containers, 1);
        assert_int_equal(fb.n_entries, want[c].n_entries);
        uint32_t n_ptx = 0, n_elf = 0;
        for (uint32_t i = 0; i < fb.n_entries; i++) {
            const sg_fatbin_entry_t *e = &fb.entries[i];
            assert_int_equal(e->arch, want[c].arch);
            if (e->kind == SG_FATBIN_ENTRY_PTX) {
                n_ptx++;
                assert_int_equal(e->compression, want[c].ptx);
                assert_int_equal(e->header_size, 80);
            } else {
                n_elf++;
                assert_int_equal(e->compression, want[c].elf);
                assert_int_equal(e->header_size, 64);
            }
        }
        assert_int_equal(n_ptx, 1);
        assert_int_equal(n_elf, 1);
        sg_fatbin_free(&fb);
        free(b.p);
    }

    /* SASS-only gencode: one ELF, no PTX. */
    blob_t b = load("sass_only.fatbin");
    sg_fatbin_t fb;
    parse_ok(b.p, b.n, &fb);
    assert_int_equal(fb.n_entries, 1);
    assert_int_equal(fb.entries[0].kind, SG_FATBIN_ENTRY_ELF);
    assert_int_equal(fb.entries[0].arch, 90);
    sg_fatbin_free(&fb);
    free(b.p);

    /* sm_100 ELF entries have the longer (112-byte) header. */
    b = load("higher_only.fatbin");
    parse_ok(b.p, b.n, &fb);
    for (uint32_t i = 0; i < fb.n_entries; i++)
        if (fb.entries[i].kind == SG_FATBIN_ENTRY_ELF)
            assert_int_equal(fb.entries[i].header_size, 112);
    sg_fatbin_free(&fb);
    free(b.p);
}

/* ---- extraction --------------------------------------------------------------- */

static void check_elf_image(const sg_fatbin_entry_t *e, const uint8_t *img, size_t len)
{
    assert_true(len > 64);
    assert_memory_equal(img, "\x7f" "ELF", 4);
    if (e->compression != SG_FATBIN_COMPRESS_NONE) assert_int_equal(len, e->uncompressed_size);
    else
        assert_true(len <= e->payload_size && e->payload_size - len < 8); /* only padding */
    uint64_t sz;
    assert_int_equal(sg_elf_image_size(img, len, &sz), SG_OK);
    assert_int_equal(sz, len);
    uint32_t arch;
    assert_int_equal(sg_elf_cuda_arch(img, len, &arch), SG_OK);
    assert_int_equal(arch, e->arch);
    assert_int_equal(sg_code_image_sniff(img, len, &sz), SG_CODE_FORMAT_CUBIN);
    assert_int_equal(sz, len);
    sg_name_list_t k;
    assert_int_equal(sg_elf_list_kernels(img, len, &k), SG_OK);
    assert_true(sg_name_list_contains(&k, K_ADD));
    assert_true(sg_name_list_contains(&k, K_SCALE));
    assert_false(sg_name_list_contains(&k, K_HELPER));
    sg_name_list_free(&k);
}

static void check_ptx_image(const sg_fatbin_entry_t *e, const uint8_t *img, size_t len)
{
    const char *t = (const char *)img;
    assert_int_equal(strlen(t), len);
    /* The declared size counts the terminating NUL. */
    if (e->compression != SG_FATBIN_COMPRESS_NONE)
        assert_int_equal(len + 1, e->uncompressed_size);
    assert_non_null(strstr(t, ".entry " K_ADD "("));
    assert_non_null(strstr(t, ".entry " K_SCALE "("));
    assert_true(sg_ptx_has_entry(t, len, K_ADD));
    assert_true(sg_ptx_has_entry(t, len, K_SCALE));
    assert_false(sg_ptx_has_entry(t, len, K_HELPER)); /* a .func, not an .entry */
    uint32_t arch, major, minor;
    char sfx;
    assert_int_equal(sg_ptx_target(t, len, &arch, &sfx), SG_OK);
    assert_int_equal(arch, e->arch);
    assert_int_equal(sfx, entry_sfx(e));
    char want[32];
    snprintf(want, sizeof want, ".target sm_%u%s", e->arch, sfx == 'a' ? "a" : "");
    assert_non_null(strstr(t, want));
    assert_int_equal(sg_ptx_version(t, len, &major, &minor), SG_OK);
    assert_int_equal(major, e->version_major);
    assert_int_equal(minor, e->version_minor);
    sg_name_list_t names;
    assert_int_equal(sg_ptx_list_entries(t, len, &names), SG_OK);
    assert_int_equal(names.n, 2);
    assert_true(sg_name_list_contains(&names, K_ADD));
    assert_true(sg_name_list_contains(&names, K_SCALE));
    sg_name_list_free(&names);
    uint64_t sz;
    assert_int_equal(sg_code_image_sniff(img, len, &sz), SG_CODE_FORMAT_PTX);
    assert_int_equal(sz, len);
}

static void test_extract_every_entry(void **state)
{
    (void)state;
    for (size_t c = 0; c < N_CASES; c++) {
        blob_t b = load(cases[c].file);
        size_t n;
        const uint8_t *p = fatbin_bytes(&b, cases[c].section, &n);
        sg_fatbin_t fb;
        parse_ok(p, n, &fb);
        for (uint32_t i = 0; i < fb.n_entries; i++) {
            const sg_fatbin_entry_t *e = &fb.entries[i];
            uint8_t *img;
            size_t len;
            int rc = sg_fatbin_extract(&fb, i, 0, &img, &len);
            if (rc) fail_msg("%s entry %u: %s", cases[c].file, i, sg_strerror(rc));
            /* The exe's first container is the device-link output: a
             * cubin with no kernels of its own. */
            bool dlink = cases[c].section && strcmp(cases[c].file, "exe90") == 0 &&
                         e->container == 0;
            if (e->kind == SG_FATBIN_ENTRY_ELF && !dlink) check_elf_image(e, img, len);
            if (e->kind == SG_FATBIN_ENTRY_PTX) check_ptx_image(e, img, len);
            free(img);
        }
        sg_fatbin_free(&fb);
        free(b.p);
    }
}

/* The compression mode changes the bytes in the fatbin, never the images. */
static void test_images_identical_across_modes(void **state)
{
    (void)state;
    const char *files[] = {"cm_default.fatbin", "cm_speed.fatbin", "cm_size.fatbin",
                           "cm_none.fatbin", "arch90.fatbin"};
    char ptx_hash[5][17], elf_hash[5][17];
    for (int f = 0; f < 5; f++) {
        blob_t b = load(files[f]);
        sg_fatbin_t fb;
        parse_ok(b.p, b.n, &fb);
        for (uint32_t i = 0; i < fb.n_entries; i++) {
            uint8_t *img;
            size_t len;
            assert_int_equal(sg_fatbin_extract(&fb, i, 0, &img, &len), SG_OK);
            sg_code_hash(img, len, fb.entries[i].kind == SG_FATBIN_ENTRY_PTX ? ptx_hash[f]
                                                                               : elf_hash[f]);
            free(img);
        }
        sg_fatbin_free(&fb);
        free(b.p);
    }
    for (int f = 1; f < 5; f++) {
        assert_string_equal(ptx_hash[f], ptx_hash[0]);
        assert_string_equal(elf_hash[f], elf_hash[0]);
    }
}

static void test_extract_cap(void **state)
{
    (void)state;
    const char *files[] = {"cm_speed.fatbin", "cm_size.fatbin", "cm_none.fatbin"};
    for (int f = 0; f < 3; f++) {
        blob_t b = load(files[f]);
        sg_fatbin_t fb;
        parse_ok(b.p, b.n, &fb);
        for (uint32_t i = 0; i < fb.n_entries; i++) {
            uint8_t *img = (uint8_t *)&img;
            size_t len = 7;
            assert_int_equal(sg_fatbin_extract(&fb, i, 100, &img, &len), SG_ELIMIT);
            assert_null(img);
            assert_int_equal(len, 0);
        }
        sg_fatbin_free(&fb);
        free(b.p);
    }
}

/* ---- PTX choice ------------------------------------------------------------------ */

static sg_ptx_pick_t pick(const char *file, uint32_t dev, const char *kernel)
{
    blob_t b = load(file);
    sg_fatbin_t fb;
    parse_ok(b.p, b.n, &fb);
    sg_ptx_pick_t r;
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sg_fatbin_pick_ptx(&fb, dev, kernel, 0, &r, &text, &len), SG_OK);
    if (r.reason == SG_PTX_OK) {
        assert_non_null(text);
        assert_int_equal(strlen(text), len);
        assert_int_equal(fb.entries[r.entry].kind, SG_FATBIN_ENTRY_PTX);
        if (kernel) assert_true(sg_ptx_has_entry(text, len, kernel));
    } else {
        assert_null(text);
        assert_int_equal(r.entry, SG_NONE);
    }
    assert_true(strlen(r.detail) > 0);
    free(text);
    sg_fatbin_free(&fb);
    free(b.p);
    return r;
}

static void test_pick_ptx(void **state)
{
    (void)state;
    sg_ptx_pick_t r = pick("arch90.fatbin", 90, K_ADD);
    assert_int_equal(r.reason, SG_PTX_OK);
    assert_int_equal(r.target, 90);
    r = pick("arch90.fatbin", 120, NULL);
    assert_int_equal(r.reason, SG_PTX_OK); /* JIT forward */
    r = pick("arch90.fatbin", 75, K_ADD);
    assert_int_equal(r.reason, SG_PTX_ONLY_HIGHER);
    assert_non_null(strstr(r.detail, "sm_90"));
    r = pick("arch90.fatbin", 90, "no_such_kernel");
    assert_int_equal(r.reason, SG_PTX_NOT_IN_PTX);
    assert_non_null(strstr(r.detail, "no_such_kernel"));

    /* nvcc 13's default: compute_75 PTX, usable on sm_90 and sm_75. */
    r = pick("default_arch.fatbin", 90, K_SCALE);
    assert_int_equal(r.reason, SG_PTX_OK);
    assert_int_equal(r.target, 75);
    r = pick("default_arch.fatbin", 75, K_SCALE);
    assert_int_equal(r.reason, SG_PTX_OK);

    r = pick("sass_only.fatbin", 90, K_ADD);
    assert_int_equal(r.reason, SG_PTX_SASS_ONLY);
    assert_non_null(strstr(r.detail, "sm_90"));
    r = pick("higher_only.fatbin", 90, K_ADD);
    assert_int_equal(r.reason, SG_PTX_ONLY_HIGHER);
    assert_non_null(strstr(r.detail, "sm_100"));

    /* multi: PTX for sm_80, sm_90a, sm_90 and sm_100. */
    r = pick("multi.fatbin", 90, K_ADD);
    assert_int_equal(r.reason, SG_PTX_OK);
    assert_int_equal(r.target, 90);
    assert_int_equal(r.target_suffix, 0); /* plain wins the tie with sm_90a */
    r = pick("multi.fatbin", 86, K_ADD);
    assert_int_equal(r.target, 80);
    r = pick("multi.fatbin", 89, NULL);
    assert_int_equal(r.target, 80);
    r = pick("multi.fatbin", 100, K_ADD);
    assert_int_equal(r.target, 100);
    r = pick("multi.fatbin", 120, K_ADD);
    assert_int_equal(r.target, 100);
    r = pick("multi.fatbin", 75, K_ADD);
    assert_int_equal(r.reason, SG_PTX_ONLY_HIGHER);

    r = pick("cm_speed.fatbin", 90, K_SCALE); /* LZ4 PTX */
    assert_int_equal(r.reason, SG_PTX_OK);
    r = pick("cm_none.fatbin", 90, K_SCALE);
    assert_int_equal(r.reason, SG_PTX_OK);

    assert_true(sg_ptx_target_usable(90, 'a', 90));
    assert_false(sg_ptx_target_usable(90, 'a', 100));
    assert_true(sg_ptx_target_usable(100, 'f', 103));
    assert_false(sg_ptx_target_usable(100, 'f', 120));
    assert_false(sg_ptx_target_usable(100, 0, 90));
    assert_string_equal(sg_ptx_reason_name(SG_PTX_SASS_ONLY), "sass_only");
    assert_string_equal(sg_ptx_reason_name((sg_ptx_reason_t)99), "unknown");
}

/* ---- relocatable objects, executables, debug builds -------------------------------- */

static void test_rdc_object(void **state)
{
    (void)state;
    blob_t b = load("rdc90.o");
    sg_elf_section_t s;
    assert_int_equal(sg_elf_find_section(b.p, b.n, ".nv_fatbin", &s), SG_ENOENT);
    size_t n;
    const uint8_t *p = fatbin_bytes(&b, "__nv_relfatbin", &n);
    sg_fatbin_t fb;
    parse_ok(p, n, &fb);
    bool saw_ptx = false;
    for (uint32_t i = 0; i < fb.n_entries; i++) {
        const sg_fatbin_entry_t *e = &fb.entries[i];
        uint8_t *img;
        size_t len;
        assert_int_equal(sg_fatbin_extract(&fb, i, 0, &img, &len), SG_OK);
        if (e->kind == SG_FATBIN_ENTRY_PTX) {
            saw_ptx = true;
            assert_int_equal(e->header_size, 96);
            assert_true(e->options_len > 0);
            const char *opt = (const char *)p + e->options_offset;
            assert_int_equal(strncmp(opt, "--compile-only", 14), 0);
        } else {
            /* A relocatable cubin: e_type ET_REL, device function present
             * but not listed as a kernel. */
            assert_int_equal(img[16], 1);
            sg_elf_section_t t;
            assert_int_equal(sg_elf_find_section(img, len, ".text." K_HELPER, &t), SG_OK);
        }
        free(img);
    }
    assert_true(saw_ptx);
    sg_fatbin_free(&fb);
    free(b.p);
}

static void test_executable_wrappers(void **state)
{
    (void)state;
    blob_t b = load("exe90");
    sg_elf_section_t seg, data;
    assert_int_equal(sg_elf_find_section(b.p, b.n, ".nvFatBinSegment", &seg), SG_OK);
    assert_int_equal(sg_elf_find_section(b.p, b.n, ".nv_fatbin", &data), SG_OK);
    /* nvcc 13 executables hold two wrappers, v2 (device link) then v1. */
    assert_int_equal(seg.size, 2 * SG_FATBIN_WRAPPER_SIZE);
    uint32_t total_entries = 0;
    for (int w = 0; w < 2; w++) {
        sg_fatbin_wrapper_t wr;
        assert_int_equal(sg_fatbin_wrapper_decode(b.p + seg.offset + w * SG_FATBIN_WRAPPER_SIZE,
                                                  SG_FATBIN_WRAPPER_SIZE, &wr),
                         SG_OK);
        assert_int_equal(wr.version, w == 0 ? 2 : 1);
        uint64_t off;
        assert_int_equal(sg_elf_vaddr_to_offset(b.p, b.n, wr.data, 16, &off), SG_OK);
        assert_true(off >= data.offset && off < data.offset + data.size);
        size_t span;
        assert_int_equal(sg_fatbin_span(b.p + off, b.n - off, &span), SG_OK);
        sg_fatbin_t fb;
        assert_int_equal(sg_fatbin_parse(b.p + off, b.n - off, SG_FATBIN_FIRST_ONLY, &fb, NULL, 0),
                         SG_OK);
        assert_int_equal(fb.n_containers, 1);
        assert_int_equal(fb.size, span);
        total_entries += fb.n_entries;
        /* The v1 wrapper holds this file's kernels, with PTX. */
        if (w == 1) {
            sg_ptx_pick_t r;
            assert_int_equal(sg_fatbin_pick_ptx(&fb, 90, K_ADD, 0, &r, NULL, NULL), SG_OK);
            assert_int_equal(r.reason, SG_PTX_OK);
        }
        sg_fatbin_free(&fb);
    }
    sg_fatbin_t all;
    parse_ok(b.p + data.offset, (size_t)data.size, &all);
    assert_int_equal(all.n_containers, 2);
    assert_int_equal(all.n_entries, total_entries);
    sg_fatbin_free(&all);
    /* A host executable is not a code image the driver loads. */
    assert_int_equal(sg_code_image_sniff(b.p, b.n, NULL), SG_CODE_FORMAT_UNKNOWN);
    free(b.p);
}

static void test_debug_build(void **state)
{
    (void)state;
    blob_t b = load("debug.fatbin");
    sg_fatbin_t fb;
    parse_ok(b.p, b.n, &fb);
    for (uint32_t i = 0; i < fb.n_entries; i++) {
        const sg_fatbin_entry_t *e = &fb.entries[i];
        assert_true(e->flags & SG_FATBIN_FLAG_DEBUG);
        /* The name is the source path as given to nvcc. */
        const size_t sl = strlen("fatbin_kernels.cu");
        assert_true(e->name_len >= sl);
        assert_memory_equal(b.p + e->name_offset + e->name_len - sl, "fatbin_kernels.cu", sl);
        if (e->kind == SG_FATBIN_ENTRY_PTX) {
            assert_true(e->options_len > 0);
            char opts[256] = {0};
            memcpy(opts, b.p + e->options_offset, e->options_len < 255 ? e->options_len : 255);
            assert_non_null(strstr(opts, "-g"));
        }
    }
    sg_fatbin_free(&fb);
    free(b.p);
}

/* ---- in-process wrappers ----------------------------------------------------------- */

static void test_wrapper_in_process(void **state)
{
    (void)state;
    blob_t a = load("cm_none.fatbin"), r1 = load("rdc90.o");
    size_t n;
    const uint8_t *rel = fatbin_bytes(&r1, "__nv_relfatbin", &n);
    /* What cudart sees for a -rdc program: a v2 wrapper whose data is the
     * device-linked fatbin and whose array lists the prelinked fatbins. */
    const void *prelinked[] = {rel, a.p, NULL};
    struct {
        uint32_t magic, version;
        const void *data;
        const void *aux;
    } w2 = {SG_FATBIN_WRAPPER_MAGIC, 2, a.p, prelinked},
      w1 = {SG_FATBIN_WRAPPER_MAGIC, 1, rel, NULL};
    assert_int_equal(sizeof w2, SG_FATBIN_WRAPPER_SIZE);
    const uint8_t *out[4];
    uint32_t k;
    assert_int_equal(sg_fatbin_wrapper_fatbins(&w2, out, 4, &k), SG_OK);
    assert_int_equal(k, 3);
    assert_ptr_equal(out[0], a.p);
    assert_ptr_equal(out[1], rel);
    assert_ptr_equal(out[2], a.p);
    assert_int_equal(sg_fatbin_wrapper_fatbins(&w2, out, 2, &k), SG_ELIMIT);
    assert_int_equal(k, 2);
    assert_int_equal(sg_fatbin_wrapper_fatbins(&w1, out, 4, &k), SG_OK);
    assert_int_equal(k, 1);
    assert_ptr_equal(out[0], rel);
    /* Each pointer leads to a fatbin whose size the header gives. */
    size_t span;
    assert_int_equal(sg_fatbin_span(rel, SIZE_MAX, &span), SG_OK);
    assert_int_equal(span, n);
    assert_int_equal(sg_fatbin_span(a.p, SIZE_MAX, &span), SG_OK);
    assert_int_equal(span, a.n);
    assert_int_equal(sg_code_image_sniff(&w2, sizeof w2, NULL), SG_CODE_FORMAT_WRAPPER);

    w1.version = 3;
    assert_int_equal(sg_fatbin_wrapper_fatbins(&w1, out, 4, &k), SG_EUNSUPPORTED);
    w1.magic = 0x12345678;
    assert_int_equal(sg_fatbin_wrapper_fatbins(&w1, out, 4, &k), SG_EFORMAT);
    free(a.p);
    free(r1.p);
}

/* ---- sniffing, hashing, standalone cubin and PTX ------------------------------------ */

static void test_sniff_and_standalone(void **state)
{
    (void)state;
    uint64_t sz;
    blob_t f = load("cm_size.fatbin");
    assert_int_equal(sg_code_image_sniff(f.p, f.n, &sz), SG_CODE_FORMAT_FATBIN);
    assert_int_equal(sz, f.n);
    /* In-process the length is unknown: a generous cap gives the same. */
    assert_int_equal(sg_code_image_sniff(f.p, f.n + 1, &sz), SG_CODE_FORMAT_FATBIN);
    assert_int_equal(sz, f.n);
    assert_int_equal(sg_code_image_sniff(f.p, f.n - 1, &sz), SG_CODE_FORMAT_FATBIN);
    assert_int_equal(sz, 0); /* claims more than it has */
    free(f.p);

    blob_t c = load("rdc90.cubin");
    assert_int_equal(sg_code_image_sniff(c.p, c.n, &sz), SG_CODE_FORMAT_CUBIN);
    assert_int_equal(sz, c.n);
    /* nvcc 13 cubins end with the program headers, after the section
     * headers: e_shoff + shnum * shentsize alone would cut them off. */
    uint64_t shoff, phoff;
    memcpy(&shoff, c.p + 0x28, 8);
    memcpy(&phoff, c.p + 0x20, 8);
    uint16_t shnum, phnum;
    memcpy(&shnum, c.p + 0x3c, 2);
    memcpy(&phnum, c.p + 0x38, 2);
    if (phnum) assert_true(phoff > shoff);
    sg_name_list_t k;
    assert_int_equal(sg_elf_list_kernels(c.p, c.n, &k), SG_OK);
    assert_int_equal(k.n, 2);
    assert_false(sg_name_list_contains(&k, K_HELPER));
    sg_name_list_free(&k);
    uint32_t arch;
    assert_int_equal(sg_elf_cuda_arch(c.p, c.n, &arch), SG_OK);
    assert_int_equal(arch, 90);
    free(c.p);

    blob_t p = load("arch90.ptx");
    assert_int_equal(sg_code_image_sniff(p.p, p.n, &sz), SG_CODE_FORMAT_PTX);
    assert_int_equal(sz, strlen((char *)p.p));
    char sfx;
    assert_int_equal(sg_ptx_target((char *)p.p, p.n, &arch, &sfx), SG_OK);
    assert_int_equal(arch, 90);
    free(p.p);

    assert_int_equal(sg_code_image_sniff("hello world", 11, &sz), SG_CODE_FORMAT_UNKNOWN);
    assert_int_equal(sg_code_image_sniff("", 0, &sz), SG_CODE_FORMAT_UNKNOWN);
    assert_int_equal(sg_code_image_sniff(NULL, 100, &sz), SG_CODE_FORMAT_UNKNOWN);
    assert_string_equal(sg_code_format_name(SG_CODE_FORMAT_CUBIN), "cubin");
}

static void test_hash(void **state)
{
    (void)state;
    char h[17];
    /* Known answers of XXH64 with seed 0. */
    sg_code_hash("", 0, h);
    assert_string_equal(h, "ef46db3751d8e999");
    sg_code_hash("abc", 3, h);
    assert_string_equal(h, "44bc2cf5ad770999");
    sg_code_hash(NULL, 0, h);
    assert_string_equal(h, "ef46db3751d8e999");
}

/* ---- PTX text corner cases ----------------------------------------------------------- */

static void test_ptx_text(void **state)
{
    (void)state;
    const char *t = "// .entry in_comment(\n"
                    "/* .target sm_20 .entry in_block( */\n"
                    ".version 8.7\n"
                    ".target sm_90a, debug\n"
                    ".global .b8 s[4] = {0}; // \".entry in_string(\"\n"
                    ".visible .entry first(\n.param .u64 p)\n{ ld.param.u64 %rd1, [p]; ret; }\n"
                    ".entry\tsecond ( )\n{ ret; }\n"
                    ".func (.reg .b32 r) not_entry()\n{ ret; }\n"
                    ".weak .entry $third()\n{ ret; }\n";
    size_t len = strlen(t);
    uint32_t arch, major, minor;
    char sfx;
    assert_int_equal(sg_ptx_target(t, len, &arch, &sfx), SG_OK);
    assert_int_equal(arch, 90);
    assert_int_equal(sfx, 'a');
    assert_int_equal(sg_ptx_version(t, len, &major, &minor), SG_OK);
    assert_int_equal(major, 8);
    assert_int_equal(minor, 7);
    sg_name_list_t l;
    assert_int_equal(sg_ptx_list_entries(t, len, &l), SG_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.names[0], "first");
    assert_string_equal(l.names[1], "second");
    assert_string_equal(l.names[2], "$third");
    sg_name_list_free(&l);
    assert_false(sg_ptx_has_entry(t, len, "in_comment"));
    assert_false(sg_ptx_has_entry(t, len, "in_block"));
    assert_false(sg_ptx_has_entry(t, len, "in_string"));
    assert_false(sg_ptx_has_entry(t, len, "not_entry"));
    assert_false(sg_ptx_has_entry(t, len, "firs"));
    /* Length bounds the scan even without a NUL. */
    assert_false(sg_ptx_has_entry(t, (size_t)(strstr(t, "second") - t), "second"));
    assert_int_equal(sg_ptx_target("no directives", 13, &arch, &sfx), SG_ENOENT);
    assert_int_equal(sg_ptx_target(".target compute_90", 18, &arch, &sfx), SG_EFORMAT);
    assert_int_equal(sg_ptx_target(".target sm_90x", 14, &arch, &sfx), SG_EFORMAT);
    assert_int_equal(sg_ptx_target(".target sm_123456", 17, &arch, &sfx), SG_EFORMAT);
    assert_int_equal(sg_ptx_list_entries("", 0, &l), SG_OK);
    assert_int_equal(l.n, 0);
}

/* ---- malformed input ------------------------------------------------------------------ */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Every strict prefix of a one-container fatbin is an error, never a crash,
 * and prefixes of every entry kind extract safely when they parse. */
static void test_truncations(void **state)
{
    (void)state;
    const char *files[] = {"cm_speed.fatbin", "cm_size.fatbin", "cm_none.fatbin"};
    for (int f = 0; f < 3; f++) {
        blob_t b = load(files[f]);
        for (size_t n = 0; n < b.n; n++) {
            uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
            memcpy(copy, b.p, n);
            sg_fatbin_t fb;
            char err[200];
            assert_int_not_equal(sg_fatbin_parse(copy, n, 0, &fb, err, sizeof err), SG_OK);
            assert_int_equal(fb.n_entries, 0);
            assert_null(fb.entries);
            assert_true(strlen(err) > 0);
            free(copy);
        }
        free(b.p);
    }
}

static void test_corrupt_headers(void **state)
{
    (void)state;
    blob_t b = load("cm_speed.fatbin"); /* ELF none + PTX LZ4 */
    sg_fatbin_t fb;
    parse_ok(b.p, b.n, &fb);
    uint32_t ptx = fb.entries[0].kind == SG_FATBIN_ENTRY_PTX ? 0 : 1;
    uint64_t ph = fb.entries[ptx].header_offset, eh = fb.entries[1 - ptx].header_offset;
    sg_fatbin_free(&fb);
    uint8_t *m = malloc(b.n);
    char err[200];

#define RESET() memcpy(m, b.p, b.n)
    RESET();
    put32(m, 0xBA55ED51);
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EFORMAT);
    assert_non_null(strstr(err, "magic"));
    RESET();
    m[4] = 2; /* container version */
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EUNSUPPORTED);
    RESET();
    put64(m + 8, UINT64_MAX - 4); /* bytes of entries */
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EFORMAT);
    RESET();
    put32(m + eh + 4, 0); /* entry header size 0: must not loop */
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EFORMAT);
    RESET();
    put64(m + eh + 8, UINT64_MAX); /* entry payload size */
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EFORMAT);
    RESET();
    put64(m + ph + 40, SG_FATBIN_FLAG_LZ4 | SG_FATBIN_FLAG_ZSTD | 0x11);
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EFORMAT);
    RESET();
    put32(m + ph + 16, 0xffffff); /* compressed size past the payload */
    assert_int_equal(sg_fatbin_parse(m, b.n, 0, &fb, err, sizeof err), SG_EFORMAT);
    RESET();
    put32(m + ph + 32, 0xfffffff0); /* name offset out of the header: ignored */
    put32(m + ph + 36, 100);
    put32(m + ph + 20, 0xfffffff0); /* options offset out of the header: ignored */
    parse_ok(m, b.n, &fb);
    assert_int_equal(fb.entries[ptx].name_len, 0);
    assert_int_equal(fb.entries[ptx].options_len, 0);
    sg_fatbin_free(&fb);

    /* Lies about the decompressed size. */
    uint8_t *img;
    size_t len;
    RESET();
    put64(m + ph + 56, (uint64_t)1 << 40);
    parse_ok(m, b.n, &fb);
    assert_int_equal(sg_fatbin_extract(&fb, ptx, 0, &img, &len), SG_EFORMAT); /* > 255x */
    sg_fatbin_free(&fb);
    RESET();
    put64(m + ph + 56, 10);
    parse_ok(m, b.n, &fb);
    assert_int_equal(sg_fatbin_extract(&fb, ptx, 0, &img, &len), SG_EFORMAT); /* too small */
    sg_fatbin_free(&fb);
    RESET();
    parse_ok(m, b.n, &fb);
    const uint8_t *payload;
    size_t plen;
    assert_int_equal(sg_fatbin_entry_payload(&fb, ptx, &payload, &plen), SG_OK);
    memset((uint8_t *)payload, 0xff, plen); /* garbage LZ4 stream */
    assert_int_equal(sg_fatbin_extract(&fb, ptx, 0, &img, &len), SG_EFORMAT);
    sg_fatbin_free(&fb);

    /* Padding between and after containers is fine; garbage is not. */
    uint8_t *two = calloc(1, 2 * b.n + 64);
    memcpy(two, b.p, b.n);
    memcpy(two + b.n + 24, b.p, b.n);
    parse_ok(two, 2 * b.n + 64, &fb);
    assert_int_equal(fb.n_containers, 2);
    assert_int_equal(fb.n_entries, 4);
    assert_int_equal(fb.size, 2 * b.n + 24);
    assert_int_equal(fb.entries[2].header_offset, b.n + 24 + 16);
    sg_fatbin_free(&fb);
    assert_int_equal(sg_fatbin_parse(two, 2 * b.n + 64, SG_FATBIN_FIRST_ONLY, &fb, NULL, 0),
                     SG_OK);
    assert_int_equal(fb.n_containers, 1);
    sg_fatbin_free(&fb);
    two[b.n + 3] = 7;
    assert_int_equal(sg_fatbin_parse(two, 2 * b.n + 64, 0, &fb, err, sizeof err), SG_EFORMAT);
    free(two);

    /* zstd: a declared size over the cap is refused before allocating. */
    blob_t z = load("cm_size.fatbin");
    parse_ok(z.p, z.n, &fb);
    for (uint32_t i = 0; i < fb.n_entries; i++) {
        assert_int_equal(fb.entries[i].compression, SG_FATBIN_COMPRESS_ZSTD);
        assert_int_equal(sg_fatbin_extract(&fb, i, fb.entries[i].uncompressed_size - 1, &img,
                                           &len),
                         SG_ELIMIT);
        assert_int_equal(sg_fatbin_extract(&fb, i, fb.entries[i].uncompressed_size, &img, &len),
                         SG_OK);
        free(img);
    }
    sg_fatbin_free(&fb);
    free(z.p);
#undef RESET
    free(m);
    free(b.p);

    /* API misuse. */
    assert_int_equal(sg_fatbin_parse(NULL, 10, 0, &fb, NULL, 0), SG_EINVAL);
    assert_int_equal(sg_fatbin_parse("x", 1, 0, NULL, NULL, 0), SG_EINVAL);
    assert_int_equal(sg_fatbin_extract(&fb, 0, 0, &img, &len), SG_EINVAL);
    assert_int_equal(sg_fatbin_pick_ptx(&fb, 0, NULL, 0, &(sg_ptx_pick_t){0}, NULL, NULL),
                     SG_EINVAL);
    sg_fatbin_free(NULL);
}

static void test_elf_corrupt(void **state)
{
    (void)state;
    blob_t c = load("rdc90.cubin");
    uint8_t *m = malloc(c.n);
    uint64_t sz;
    sg_name_list_t k;
    sg_elf_section_t s;
    /* Every prefix: no crash, and the full size is never claimed. */
    for (size_t n = 0; n < c.n; n += 7) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, c.p, n);
        int rc = sg_elf_image_size(copy, n, &sz);
        if (rc == SG_OK) assert_true(sz <= n);
        if (sg_elf_list_kernels(copy, n, &k) == SG_OK) sg_name_list_free(&k);
        (void)sg_elf_find_section(copy, n, ".nv.info", &s);
        free(copy);
    }
    memcpy(m, c.p, c.n);
    m[4] = 1; /* ELFCLASS32 */
    assert_int_equal(sg_elf_check(m, c.n), SG_EUNSUPPORTED);
    memcpy(m, c.p, c.n);
    put64(m + 0x28, UINT64_MAX - 10); /* e_shoff */
    assert_int_equal(sg_elf_image_size(m, c.n, &sz), SG_EFORMAT);
    assert_int_equal(sg_elf_list_kernels(m, c.n, &k), SG_EFORMAT);
    memcpy(m, c.p, c.n);
    m[0x3e] = 0xfe; /* e_shstrndx past the table */
    m[0x3f] = 0;
    assert_int_equal(sg_elf_find_section(m, c.n, ".symtab", &s), SG_EFORMAT);
    memcpy(m, c.p, c.n);
    m[0x12] = 62; /* EM_X86_64: not a cubin */
    uint32_t arch;
    assert_int_equal(sg_elf_cuda_arch(m, c.n, &arch), SG_EINVAL);
    assert_int_equal(sg_code_image_sniff(m, c.n, &sz), SG_CODE_FORMAT_UNKNOWN);
    free(m);
    free(c.p);
}

/* ---- the per-kernel code report over a bundle ------------------------------------------- */

static uint32_t add_image(sg_graph_t *g, sg_image_kind_t kind, const blob_t *b, const char *ext,
                          sg_bundle_blob_t *blob, char *relpath, size_t rn)
{
    char hash[17];
    sg_code_hash(b->p, b->n, hash);
    uint32_t id;
    assert_int_equal(sg_graph_add_image(g, kind, hash, b->n, &id), SG_OK);
    snprintf(relpath, rn, "code/%s.%s", hash, ext);
    sg_graph_image(g, id)->file = strdup(relpath);
    *blob = (sg_bundle_blob_t){.relpath = relpath, .data = b->p, .size = b->n};
    return id;
}

static void add_kernel(sg_graph_t *g, const char *name, uint32_t image)
{
    sg_node_id_t id;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, SG_STREAM_EXPLICIT, 0, &id), SG_OK);
    assert_int_equal(sg_node_set_kernel_name(g, id, name), SG_OK);
    sg_graph_node(g, id)->u.kernel.image = image;
}

static const sg_code_report_row_t *find_row(const sg_code_report_t *r, const char *kernel,
                                            uint32_t image)
{
    for (uint32_t i = 0; i < r->n_rows; i++)
        if (strcmp(r->rows[i].kernel, kernel) == 0 && r->rows[i].image == image)
            return &r->rows[i];
    fail_msg("no report row for %s in image %u", kernel, image);
    return NULL;
}

static void test_code_report(void **state)
{
    (void)state;
    blob_t fat = load("arch90.fatbin"), sass = load("sass_only.fatbin"),
           cubin = load("rdc90.cubin"), ptx = load("arch90.ptx"), multi = load("multi.fatbin"),
           junk = {(uint8_t *)"not code at all", 15};
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    g->device.cc_major = 9;
    g->device.cc_minor = 0;
    sg_bundle_blob_t blobs[6];
    char rel[6][64];
    uint32_t i_fat = add_image(g, SG_IMAGE_FATBIN, &fat, "fatbin", &blobs[0], rel[0], 64);
    uint32_t i_sass = add_image(g, SG_IMAGE_FATBIN, &sass, "fatbin", &blobs[1], rel[1], 64);
    uint32_t i_cubin = add_image(g, SG_IMAGE_CUBIN, &cubin, "cubin", &blobs[2], rel[2], 64);
    uint32_t i_ptx = add_image(g, SG_IMAGE_PTX, &ptx, "ptx", &blobs[3], rel[3], 64);
    uint32_t i_multi = add_image(g, SG_IMAGE_FATBIN, &multi, "fatbin", &blobs[4], rel[4], 64);
    uint32_t i_junk = add_image(g, SG_IMAGE_FATBIN, &junk, "fatbin", &blobs[5], rel[5], 64);
    uint32_t i_nvrtc;
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_NVRTC, "0123456789abcdef", 10, &i_nvrtc),
                     SG_OK);
    uint32_t i_meta;
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_FATBIN, "fedcba9876543210", 10, &i_meta),
                     SG_OK);

    add_kernel(g, K_ADD, i_fat);
    add_kernel(g, K_ADD, i_fat); /* same kernel twice: one row, two nodes */
    add_kernel(g, K_SCALE, i_sass);
    add_kernel(g, K_ADD, i_cubin);
    add_kernel(g, K_SCALE, i_ptx);
    add_kernel(g, "not_in_there", i_ptx);
    add_kernel(g, K_ADD, i_multi);
    add_kernel(g, K_ADD, i_junk);
    add_kernel(g, "jit_kernel", i_nvrtc);
    add_kernel(g, K_ADD, i_meta);
    add_kernel(g, "orphan", SG_NONE);
    /* A kernel inside a child graph counts too. */
    sg_node_id_t child;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_CHILD_GRAPH, SG_STREAM_EXPLICIT, 0, &child),
                     SG_OK);
    sg_graph_t *body;
    assert_int_equal(sg_node_make_child_body(g, child, &body), SG_OK);
    add_kernel(body, K_ADD, i_fat);

    char dir[] = "/tmp/sgcap_test_fatbin_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/k.sgraph", dir);
    sg_diag_t diag;
    int rc = sg_bundle_write(g, path, blobs, 6, 0, &diag);
    if (rc) {
        char m[600];
        fail_msg("bundle write: %s", sg_diag_format(&diag, m, sizeof m));
    }

    sg_code_report_t r;
    assert_int_equal(sg_code_report(g, path, NULL, &r), SG_OK);
    assert_int_equal(r.device_arch, 90);
    assert_int_equal(r.n_rows, 10);
    /* First-appearance order. */
    assert_string_equal(r.rows[0].kernel, K_ADD);
    assert_int_equal(r.rows[0].image, i_fat);
    assert_string_equal(r.rows[9].kernel, "orphan");

    const sg_code_report_row_t *x = find_row(&r, K_ADD, i_fat);
    assert_int_equal(x->n_nodes, 3);
    assert_false(x->first_in_body);
    assert_true(x->ptx_available);
    assert_int_equal(x->reason, SG_PTX_OK);
    assert_int_equal(x->ptx_target, 90);
    assert_int_equal(x->image_format, SG_CODE_FORMAT_FATBIN);
    assert_true(x->archs_from_bytes);
    assert_int_equal(x->sass.n, 1);
    assert_int_equal(x->sass.arch[0], 90);
    assert_int_equal(x->ptx.n, 1);
    assert_int_equal(x->ptx.arch[0], 90);
    assert_string_equal(x->image_file, rel[0]);

    x = find_row(&r, K_SCALE, i_sass);
    assert_false(x->ptx_available);
    assert_int_equal(x->reason, SG_PTX_SASS_ONLY);
    assert_int_equal(x->ptx.n, 0);

    x = find_row(&r, K_ADD, i_cubin);
    assert_int_equal(x->reason, SG_PTX_SASS_ONLY);
    assert_int_equal(x->image_format, SG_CODE_FORMAT_CUBIN);
    assert_int_equal(x->sass.arch[0], 90);

    x = find_row(&r, K_SCALE, i_ptx);
    assert_true(x->ptx_available);
    assert_int_equal(x->image_format, SG_CODE_FORMAT_PTX);
    x = find_row(&r, "not_in_there", i_ptx);
    assert_int_equal(x->reason, SG_PTX_NOT_IN_PTX);

    x = find_row(&r, K_ADD, i_multi);
    assert_true(x->ptx_available);
    assert_int_equal(x->ptx_target, 90);
    assert_int_equal(x->sass.n, 3); /* sm_75, sm_90a, sm_100 */
    assert_int_equal(x->sass.arch[1], 90);
    assert_int_equal(x->sass.suffix[1], 'a');
    assert_int_equal(x->ptx.n, 4); /* 80, 90, 90a, 100 */
    char archs[64];
    assert_string_equal(sg_arch_list_format(&x->sass, archs, sizeof archs),
                        "sm_75, sm_90a, sm_100");
    assert_string_equal(sg_arch_list_format(&x->ptx, archs, sizeof archs),
                        "sm_80, sm_90, sm_90a, sm_100");
    assert_string_equal(sg_arch_list_format(&find_row(&r, K_SCALE, i_sass)->ptx, archs, 64), "-");

    x = find_row(&r, K_ADD, i_junk);
    assert_int_equal(x->reason, SG_PTX_UNREADABLE);
    x = find_row(&r, "jit_kernel", i_nvrtc);
    assert_int_equal(x->reason, SG_PTX_FROM_SOURCE);
    x = find_row(&r, K_ADD, i_meta);
    assert_int_equal(x->reason, SG_PTX_NO_IMAGE);
    x = find_row(&r, "orphan", SG_NONE);
    assert_int_equal(x->reason, SG_PTX_NO_IMAGE);
    assert_int_equal(x->image_hash[0], 0);
    assert_int_equal(r.n_ptx_available, 3);
    for (uint32_t i = 0; i < r.n_rows; i++) assert_true(strlen(r.rows[i].detail) > 0);
    sg_code_report_free(&r);

    /* An older device: the sm_90 PTX no longer fits. */
    sg_code_report_options_t opt = {.device_arch = 75};
    assert_int_equal(sg_code_report(g, path, &opt, &r), SG_OK);
    assert_int_equal(find_row(&r, K_ADD, i_fat)->reason, SG_PTX_ONLY_HIGHER);
    assert_int_equal(find_row(&r, K_SCALE, i_ptx)->reason, SG_PTX_ONLY_HIGHER);
    sg_code_report_free(&r);

    /* A size cap below the image: unreadable, with the file named. */
    opt = (sg_code_report_options_t){.max_image_bytes = 100};
    assert_int_equal(sg_code_report(g, path, &opt, &r), SG_OK);
    x = find_row(&r, K_ADD, i_fat);
    assert_int_equal(x->reason, SG_PTX_UNREADABLE);
    assert_non_null(strstr(x->detail, rel[0]));
    sg_code_report_free(&r);

    /* An image file that went missing: "not captured". */
    char victim[512];
    snprintf(victim, sizeof victim, "%s/%s", path, rel[1]);
    assert_int_equal(unlink(victim), 0);
    assert_int_equal(sg_code_report(g, path, NULL, &r), SG_OK);
    assert_int_equal(find_row(&r, K_SCALE, i_sass)->reason, SG_PTX_NO_IMAGE);
    sg_code_report_free(&r);

    /* No bundle: metadata only, never "available". */
    assert_int_equal(sg_code_report(g, NULL, NULL, &r), SG_OK);
    for (uint32_t i = 0; i < r.n_rows; i++) assert_false(r.rows[i].ptx_available);
    sg_code_report_free(&r);

    /* Device arch from the graph, 90 when unknown. */
    assert_int_equal(sg_code_report_default_arch(g), 90);
    g->device.cc_major = 12;
    assert_int_equal(sg_code_report_default_arch(g), 120);
    g->device.cc_major = 0;
    assert_int_equal(sg_code_report_default_arch(g), 90);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    sg_graph_destroy(g);
    free(fat.p);
    free(sass.p);
    free(cubin.p);
    free(ptx.p);
    free(multi.p);
}

/* A cubin that NVRTC built (CuPy's path): the image is SASS only, but it
 * names the captured NVRTC source, and recompiling that source gives PTX. */
static void write_cupy_bundle(const char *path, const blob_t *cubin, const char *src,
                              uint32_t *i_cubin, uint32_t *i_src, sg_graph_t **out)
{
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    g->device.cc_major = 9;
    g->device.cc_minor = 0;
    sg_bundle_blob_t blobs[2];
    char rel[2][64];
    blob_t sb = {(uint8_t *)src, strlen(src)};
    /* The source after the cubin: capture adds it while adding the cubin. */
    *i_cubin = add_image(g, SG_IMAGE_CUBIN, cubin, "cubin", &blobs[0], rel[0], 64);
    *i_src = add_image(g, SG_IMAGE_NVRTC, &sb, "cu", &blobs[1], rel[1], 64);
    sg_graph_image(g, *i_src)->options = strdup("-arch=sm_90 -std=c++17 --use_fast_math");
    sg_graph_image(g, *i_cubin)->source_image = *i_src;
    add_kernel(g, K_ADD, *i_cubin);
    add_kernel(g, K_SCALE, *i_cubin); /* in the cubin, not in this source */
    sg_diag_t diag;
    int rc = sg_bundle_write(g, path, blobs, 2, 0, &diag);
    if (rc) {
        char m[600];
        fail_msg("bundle write: %s", sg_diag_format(&diag, m, sizeof m));
    }
    /* What inspect sees: the bundle as read back, link included. */
    sg_graph_destroy(g);
    assert_int_equal(sg_bundle_read(path, out, &diag), SG_OK);
    assert_int_equal((*out)->images[*i_cubin].source_image, *i_src);
}

static void test_code_report_nvrtc_source(void **state)
{
    (void)state;
    static const char src[] = "extern \"C\" __global__ void sg_fb_add(float *a, const float *b, "
                              "int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    if (i < n) a[i] += b[i] * 2.0f + 1.0f;\n}\n";
    blob_t cubin = load("rdc90.cubin");
    char dir[] = "/tmp/sgcap_test_cupy_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/cupy.sgraph", dir);
    uint32_t i_cubin, i_src;
    sg_graph_t *g = NULL;
    write_cupy_bundle(path, &cubin, src, &i_cubin, &i_src, &g);
    char want[96];
    snprintf(want, sizeof want, "recompiled from the NVRTC source image %u", i_src);

    /* Recompiling (what inspect --code does): PTX for the cubin's kernel. */
    sg_code_report_options_t opt = {.recompile_nvrtc = true};
    sg_code_report_t r;
    assert_int_equal(sg_code_report(g, path, &opt, &r), SG_OK);
    assert_int_equal(r.n_rows, 2);
    const sg_code_report_row_t *x = find_row(&r, K_ADD, i_cubin);
    if (!x->ptx_available) fail_msg("no PTX: %s", x->detail);
    assert_int_equal(x->reason, SG_PTX_OK);
    assert_int_equal(x->ptx_target, 90);
    assert_int_equal(x->image_kind, SG_IMAGE_CUBIN);
    assert_int_equal(x->image_format, SG_CODE_FORMAT_CUBIN); /* the image is still the cubin */
    assert_int_equal(x->sass.n, 1);
    assert_int_equal(x->sass.arch[0], 90);
    assert_int_equal(x->ptx.n, 1);
    assert_int_equal(x->ptx.arch[0], 90);
    assert_non_null(strstr(x->detail, want));
    /* A kernel the source does not define: still no PTX, and both reasons said. */
    x = find_row(&r, K_SCALE, i_cubin);
    assert_false(x->ptx_available);
    assert_int_equal(x->reason, SG_PTX_NOT_IN_PTX);
    assert_non_null(strstr(x->detail, "SASS only"));
    assert_non_null(strstr(x->detail, "NVRTC source image"));
    assert_int_equal(r.n_ptx_available, 1);
    sg_code_report_free(&r);

    /* Another device: the source is recompiled for it. */
    opt.device_arch = 80;
    assert_int_equal(sg_code_report(g, path, &opt, &r), SG_OK);
    x = find_row(&r, K_ADD, i_cubin);
    assert_true(x->ptx_available);
    assert_int_equal(x->ptx_target, 80);
    sg_code_report_free(&r);

    /* Without recompiling: what the cubin gives, and a pointer to the source. */
    opt = (sg_code_report_options_t){.recompile_nvrtc = false};
    assert_int_equal(sg_code_report(g, path, &opt, &r), SG_OK);
    x = find_row(&r, K_ADD, i_cubin);
    assert_false(x->ptx_available);
    assert_int_equal(x->reason, SG_PTX_SASS_ONLY);
    char src_note[96];
    snprintf(src_note, sizeof src_note, "NVRTC source captured as image %u", i_src);
    assert_non_null(strstr(x->detail, "SASS only"));
    assert_non_null(strstr(x->detail, src_note));
    assert_null(strstr(x->detail, "recompiled"));
    assert_int_equal(r.n_ptx_available, 0);
    sg_code_report_free(&r);
    /* ... and no options at all means the same. */
    assert_int_equal(sg_code_report(g, path, NULL, &r), SG_OK);
    assert_int_equal(find_row(&r, K_ADD, i_cubin)->reason, SG_PTX_SASS_ONLY);
    sg_code_report_free(&r);
    sg_graph_destroy(g);

    /* A source that does not compile: reason from_nvrtc_source, NVRTC's words kept. */
    snprintf(path, sizeof path, "%s/broken.sgraph", dir);
    write_cupy_bundle(path, &cubin, "extern \"C\" __global__ void sg_fb_add( {", &i_cubin, &i_src,
                      &g);
    opt = (sg_code_report_options_t){.recompile_nvrtc = true};
    assert_int_equal(sg_code_report(g, path, &opt, &r), SG_OK);
    x = find_row(&r, K_ADD, i_cubin);
    assert_false(x->ptx_available);
    assert_int_equal(x->reason, SG_PTX_FROM_SOURCE);
    assert_non_null(strstr(x->detail, "SASS only"));
    assert_non_null(strstr(x->detail, "recompiling for compute_90 failed"));
    sg_code_report_free(&r);
    sg_graph_destroy(g);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cubin.p);
}

/* A cubin assembled from PTX that capture found beside it (Triton's cache):
 * the image is SASS only, but it names the PTX image (ptx_image), which is
 * then the PTX of its kernels, for the report and for fusion
 * (sg_code_kernel_ptx), without any recompiling. */
static void test_code_report_ptx_image(void **state)
{
    (void)state;
    blob_t cubin = load("rdc90.cubin"), ptx = load("arch90.ptx");
    static const char only_add[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
                                   ".visible .entry sg_fb_add() { ret; }\n";
    blob_t small = {(uint8_t *)only_add, strlen(only_add)};
    char dir[] = "/tmp/sgcap_test_triton_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    sg_diag_t diag;
    for (int variant = 0; variant < 2; variant++) {
        snprintf(path, sizeof path, "%s/triton%d.sgraph", dir, variant);
        sg_graph_t *g = sg_graph_create();
        assert_non_null(g);
        g->device.cc_major = 9;
        sg_bundle_blob_t blobs[2];
        char rel[2][64];
        uint32_t i_cubin = add_image(g, SG_IMAGE_CUBIN, &cubin, "cubin", &blobs[0], rel[0], 64);
        uint32_t i_ptx = add_image(g, SG_IMAGE_PTX, variant ? &small : &ptx, "ptx", &blobs[1],
                                   rel[1], 64);
        sg_graph_image(g, i_cubin)->ptx_image = i_ptx;
        add_kernel(g, K_ADD, i_cubin);
        add_kernel(g, K_SCALE, i_cubin);
        assert_int_equal(sg_bundle_write(g, path, blobs, 2, 0, &diag), SG_OK);
        sg_graph_destroy(g);
        assert_int_equal(sg_bundle_read(path, &g, &diag), SG_OK);
        assert_int_equal(g->images[i_cubin].ptx_image, i_ptx);

        sg_code_report_t r;
        assert_int_equal(sg_code_report(g, path, NULL, &r), SG_OK); /* no recompiling needed */
        char want[96];
        snprintf(want, sizeof want, "from the PTX image %u the cubin was assembled from", i_ptx);
        const sg_code_report_row_t *x = find_row(&r, K_ADD, i_cubin);
        if (!x->ptx_available) fail_msg("no PTX: %s", x->detail);
        assert_int_equal(x->ptx_target, 90);
        assert_int_equal(x->image_format, SG_CODE_FORMAT_CUBIN); /* the image is still the cubin */
        assert_int_equal(x->sass.n, 1);
        assert_non_null(strstr(x->detail, want));
        x = find_row(&r, K_SCALE, i_cubin);
        if (variant == 0) {
            assert_true(x->ptx_available);
            assert_int_equal(r.n_ptx_available, 2);
        } else { /* a PTX image without that kernel: both answers said */
            assert_false(x->ptx_available);
            assert_int_equal(x->reason, SG_PTX_NOT_IN_PTX);
            assert_non_null(strstr(x->detail, "SASS only"));
            assert_non_null(strstr(x->detail, "; PTX image "));
            assert_int_equal(r.n_ptx_available, 1);
        }
        sg_code_report_free(&r);

        /* what fusion lifts: the PTX image's text */
        char *text = NULL;
        size_t len = 0;
        sg_code_report_row_t row;
        assert_int_equal(sg_code_kernel_ptx(g, path, K_ADD, i_cubin, NULL, &text, &len, &row),
                         SG_OK);
        assert_non_null(text);
        assert_true(row.ptx_available);
        assert_non_null(strstr(text, ".entry sg_fb_add"));
        assert_int_equal(len, variant ? small.n : strnlen((const char *)ptx.p, ptx.n));
        free(text);
        assert_int_equal(sg_code_kernel_ptx(g, path, K_SCALE, i_cubin, NULL, &text, &len, &row),
                         SG_OK);
        assert_true(variant ? text == NULL : text != NULL);
        free(text);

        /* without the bundle's bytes: the link is named, no PTX claimed */
        assert_int_equal(sg_code_report(g, NULL, NULL, &r), SG_OK);
        x = find_row(&r, K_ADD, i_cubin);
        assert_false(x->ptx_available);
        snprintf(want, sizeof want, "the PTX it was assembled from captured as image %u", i_ptx);
        assert_non_null(strstr(x->detail, want));
        sg_code_report_free(&r);
        sg_graph_destroy(g);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cubin.p);
    free(ptx.p);
}

int main(void)
{
    if (!exists("cm_none.fatbin")) {
        fprintf(stderr, "test_fatbin: %s has no nvcc outputs: build target sgcap_fatbin_data\n",
                SGCAP_FATBIN_DIR);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_match_oracles),
        cmocka_unit_test(test_known_layouts),
        cmocka_unit_test(test_extract_every_entry),
        cmocka_unit_test(test_images_identical_across_modes),
        cmocka_unit_test(test_extract_cap),
        cmocka_unit_test(test_pick_ptx),
        cmocka_unit_test(test_rdc_object),
        cmocka_unit_test(test_executable_wrappers),
        cmocka_unit_test(test_debug_build),
        cmocka_unit_test(test_wrapper_in_process),
        cmocka_unit_test(test_sniff_and_standalone),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_ptx_text),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_corrupt_headers),
        cmocka_unit_test(test_elf_corrupt),
        cmocka_unit_test(test_code_report),
        cmocka_unit_test(test_code_report_nvrtc_source),
        cmocka_unit_test(test_code_report_ptx_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
