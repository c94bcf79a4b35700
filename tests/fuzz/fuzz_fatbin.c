/* fuzz_fatbin.c: libFuzzer target for the code-image reader (code/fatbin.c,
 * code/elf_image.c). Arbitrary bytes go through everything capture would do to
 * an image it does not trust: sniff, wrapper decode, parse (chained and
 * first-only), extract every entry under a 16 MiB cap, read each extracted
 * cubin/PTX, pick PTX for two devices, and the ELF and PTX readers on the
 * raw bytes (including a .nv_fatbin section found in them). The in-process
 * wrapper walk (which follows pointers) is deliberately not fuzzed.
 * Seeds: tests/fuzz/seeds/fuzz_fatbin/ (small nvcc outputs). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/elf_image.h"
#include "code/fatbin.h"

/* Small enough that libFuzzer's RSS limit is never the finding. */
#define FUZZ_MAX_IMAGE (16u << 20)

/* The reader's promises; a broken one traps, which libFuzzer reports. */
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) __builtin_trap();                                                                \
    } while (0)

static volatile uint64_t sink;

static void read_elf(const uint8_t *p, size_t n)
{
    uint64_t sz, off;
    uint32_t arch;
    sg_name_list_t names;
    sg_elf_section_t s;
    if (sg_elf_image_size(p, n, &sz) == SG_OK) sink += sz;
    if (sg_elf_cuda_arch(p, n, &arch) == SG_OK) sink += arch;
    if (sg_elf_list_kernels(p, n, &names) == SG_OK) {
        sink += names.n;
        for (uint32_t i = 0; i < names.n; i++) sink += strlen(names.names[i]);
        sg_name_list_free(&names);
    }
    if (sg_elf_find_section(p, n, ".nv.info", &s) == SG_OK) sink += s.size;
    if (sg_elf_vaddr_to_offset(p, n, 0x1000, 16, &off) == SG_OK) sink += off;
}

static void read_ptx(const uint8_t *p, size_t n)
{
    const char *t = (const char *)p;
    uint32_t a, b;
    char sfx;
    sg_name_list_t names;
    if (sg_ptx_target(t, n, &a, &sfx) == SG_OK) sink += a + (uint8_t)sfx;
    if (sg_ptx_version(t, n, &a, &b) == SG_OK) sink += a + b;
    if (sg_ptx_list_entries(t, n, &names) == SG_OK) {
        for (uint32_t i = 0; i < names.n; i++) sink += strlen(names.names[i]);
        sg_name_list_free(&names);
    }
    sink += sg_ptx_has_entry(t, n, "sg_fb_add");
}

static bool read_fatbin(const uint8_t *p, size_t n, unsigned flags)
{
    sg_fatbin_t fb;
    char err[160];
    if (sg_fatbin_parse(p, n, flags, &fb, err, sizeof err) != SG_OK) return false;
    for (uint32_t i = 0; i < fb.n_entries; i++) {
        const uint8_t *raw;
        size_t rawn;
        if (sg_fatbin_entry_payload(&fb, i, &raw, &rawn) == SG_OK) {
            CHECK(raw >= p && rawn <= n && (size_t)(raw - p) <= n - rawn); /* never outside */
            sink += rawn;
        }
        uint8_t *img;
        size_t len;
        if (sg_fatbin_extract(&fb, i, FUZZ_MAX_IMAGE, &img, &len) != SG_OK) continue;
        CHECK(img != NULL && len <= FUZZ_MAX_IMAGE); /* the cap holds */
        if (fb.entries[i].kind == SG_FATBIN_ENTRY_ELF) read_elf(img, len);
        if (fb.entries[i].kind == SG_FATBIN_ENTRY_PTX) read_ptx(img, len);
        uint64_t sz;
        sink += sg_code_image_sniff(img, len, &sz) + sz;
        char h[17];
        sg_code_hash(img, len, h);
        free(img);
    }
    sg_ptx_pick_t pick;
    char *ptx = NULL;
    size_t ptx_len = 0;
    if (sg_fatbin_pick_ptx(&fb, 90, NULL, FUZZ_MAX_IMAGE, &pick, &ptx, &ptx_len) == SG_OK) {
        /* OK comes with text from a real entry; anything else with none */
        if (pick.reason == SG_PTX_OK)
            CHECK(ptx != NULL && pick.entry < fb.n_entries && ptx_len <= FUZZ_MAX_IMAGE);
        else
            CHECK(ptx == NULL);
        sink += pick.reason + ptx_len;
        free(ptx);
    }
    if (sg_fatbin_pick_ptx(&fb, 75, "sg_fb_add", FUZZ_MAX_IMAGE, &pick, NULL, NULL) == SG_OK)
        sink += pick.reason;
    sg_fatbin_free(&fb);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t sz;
    sink += sg_code_image_sniff(data, size, &sz) + sz;
    sg_fatbin_wrapper_t w;
    if (sg_fatbin_wrapper_decode(data, size, &w) == SG_OK) sink += w.version;
    size_t span;
    if (sg_fatbin_span(data, size, &span) == SG_OK) sink += span;

    /* First-only differs only when something follows the first container. */
    if (!read_fatbin(data, size, 0)) read_fatbin(data, size, SG_FATBIN_FIRST_ONLY);

    read_elf(data, size);
    sg_elf_section_t s;
    if (sg_elf_find_section(data, size, ".nv_fatbin", &s) == SG_OK && s.type != 8) {
        CHECK(s.offset <= size && s.size <= size - s.offset); /* sections stay inside */
        read_fatbin(data + s.offset, (size_t)s.size, 0);
    }
    if (sg_elf_find_section(data, size, "__nv_relfatbin", &s) == SG_OK && s.type != 8) {
        CHECK(s.offset <= size && s.size <= size - s.offset);
        read_fatbin(data + s.offset, (size_t)s.size, 0);
    }
    read_ptx(data, size);
    return 0;
}
