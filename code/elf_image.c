/* elf_image.c: bounded reader for 64-bit little-endian ELF (cubins and the host
 * binaries that carry fatbins). See elf_image.h for the contract. Fields are read
 * byte by byte so that unaligned input and big-endian hosts are fine. */
#include "elf_image.h"
#include "bytes.h"

#include <stdlib.h>
#include <string.h>

#define EHDR_SIZE 64u
#define SHDR_SIZE 64u
#define PHDR_SIZE 56u
#define SYM_SIZE 24u
#define SHT_SYMTAB 2u
#define SHT_NOBITS 8u
#define SHF_ALLOC 0x2u
#define SHN_UNDEF 0u
#define SHN_LORESERVE 0xff00u
#define SHN_XINDEX 0xffffu
#define STT_FUNC 2u
/* A reader bound, far above any real image (libtorch cubins have < 1000
 * sections), so that a forged count cannot make us loop for long. */
#define MAX_SECTIONS (1u << 20)

/* What the ELF header says, checked against n. */
typedef struct {
    const uint8_t *p;
    uint64_t n;
    uint64_t shoff, phoff;
    uint32_t shnum, phnum, shstrndx;
    uint16_t shentsize, phentsize;
} elf_t;

static int elf_open(const void *data, size_t n, elf_t *e)
{
    const uint8_t *p = data;
    if (!p || n < EHDR_SIZE) return SG_EFORMAT;
    if (p[0] != 0x7f || p[1] != 'E' || p[2] != 'L' || p[3] != 'F') return SG_EFORMAT;
    if (p[4] != 2 || p[5] != 1) return SG_EUNSUPPORTED; /* ELFCLASS64, ELFDATA2LSB */
    memset(e, 0, sizeof *e);
    e->p = p;
    e->n = n;
    e->phoff = sg_rd64(p + 0x20);
    e->shoff = sg_rd64(p + 0x28);
    e->phentsize = sg_rd16(p + 0x36);
    e->phnum = sg_rd16(p + 0x38);
    e->shentsize = sg_rd16(p + 0x3a);
    e->shnum = sg_rd16(p + 0x3c);
    e->shstrndx = sg_rd16(p + 0x3e);

    if (e->shoff != 0) {
        if (e->shentsize < SHDR_SIZE) return SG_EFORMAT;
        /* Extended numbering: the real counts live in section header 0. */
        if (e->shnum == 0 || e->shstrndx == SHN_XINDEX) {
            if (!sg_in_bounds(e->shoff, SHDR_SIZE, n)) return SG_EFORMAT;
            const uint8_t *s0 = p + e->shoff;
            if (e->shnum == 0) {
                uint64_t cnt = sg_rd64(s0 + 0x20);
                if (cnt > MAX_SECTIONS) return SG_ELIMIT;
                e->shnum = (uint32_t)cnt;
            }
            if (e->shstrndx == SHN_XINDEX) e->shstrndx = sg_rd32(s0 + 0x28);
        }
        if (!sg_in_bounds(e->shoff, (uint64_t)e->shnum * e->shentsize, n)) return SG_EFORMAT;
    } else {
        e->shnum = 0;
    }
    if (e->phoff != 0 && e->phnum != 0) {
        if (e->phentsize < PHDR_SIZE) return SG_EFORMAT;
        if (!sg_in_bounds(e->phoff, (uint64_t)e->phnum * e->phentsize, n)) return SG_EFORMAT;
    } else {
        e->phnum = 0;
    }
    return SG_OK;
}

static void elf_section(const elf_t *e, uint32_t i, sg_elf_section_t *s, uint32_t *name_off,
                        uint32_t *link, uint64_t *entsize)
{
    const uint8_t *h = e->p + e->shoff + (uint64_t)i * e->shentsize;
    s->index = i;
    s->type = sg_rd32(h + 4);
    s->flags = sg_rd64(h + 8);
    s->addr = sg_rd64(h + 16);
    s->offset = sg_rd64(h + 24);
    s->size = sg_rd64(h + 32);
    if (name_off) *name_off = sg_rd32(h);
    if (link) *link = sg_rd32(h + 40);
    if (entsize) *entsize = sg_rd64(h + 56);
}

/* A section with file bytes, checked to lie inside the input. */
static int elf_section_bytes(const elf_t *e, uint32_t i, sg_elf_section_t *s, uint32_t *link,
                             uint64_t *entsize)
{
    if (i >= e->shnum) return SG_EFORMAT;
    elf_section(e, i, s, NULL, link, entsize);
    if (s->type == SHT_NOBITS || !sg_in_bounds(s->offset, s->size, e->n)) return SG_EFORMAT;
    return SG_OK;
}

/* NUL-terminated string at off inside a string table, or NULL. */
static const char *strtab_at(const elf_t *e, const sg_elf_section_t *tab, uint64_t off,
                             size_t *len)
{
    if (off >= tab->size) return NULL;
    const char *s = (const char *)e->p + tab->offset + off;
    const void *nul = memchr(s, 0, (size_t)(tab->size - off));
    if (!nul) return NULL;
    if (len) *len = (size_t)((const char *)nul - s);
    return s;
}

int sg_elf_check(const void *p, size_t n)
{
    elf_t e;
    int rc = elf_open(p, n, &e);
    return rc == SG_ELIMIT ? SG_EFORMAT : rc;
}

int sg_elf_image_size(const void *p, size_t n, uint64_t *size)
{
    elf_t e;
    int rc = elf_open(p, n, &e);
    if (rc) return rc;
    uint64_t end = EHDR_SIZE;
    if (e.shnum) {
        uint64_t t = e.shoff + (uint64_t)e.shnum * e.shentsize;
        if (t > end) end = t;
    }
    if (e.phnum) {
        uint64_t t = e.phoff + (uint64_t)e.phnum * e.phentsize;
        if (t > end) end = t;
    }
    for (uint32_t i = 0; i < e.shnum; i++) {
        sg_elf_section_t s;
        elf_section(&e, i, &s, NULL, NULL, NULL);
        if (s.type == SHT_NOBITS || s.size == 0) continue;
        if (!sg_in_bounds(s.offset, s.size, n)) return SG_EFORMAT;
        if (s.offset + s.size > end) end = s.offset + s.size;
    }
    for (uint32_t i = 0; i < e.phnum; i++) {
        const uint8_t *h = e.p + e.phoff + (uint64_t)i * e.phentsize;
        uint64_t off = sg_rd64(h + 8), filesz = sg_rd64(h + 32);
        if (filesz == 0) continue;
        if (!sg_in_bounds(off, filesz, n)) return SG_EFORMAT;
        if (off + filesz > end) end = off + filesz;
    }
    *size = end;
    return SG_OK;
}

int sg_elf_find_section(const void *p, size_t n, const char *name, sg_elf_section_t *out)
{
    elf_t e;
    if (!name || !out) return SG_EINVAL;
    int rc = elf_open(p, n, &e);
    if (rc) return rc;
    if (e.shnum == 0) return SG_ENOENT;
    sg_elf_section_t strs;
    if (elf_section_bytes(&e, e.shstrndx, &strs, NULL, NULL)) return SG_EFORMAT;
    for (uint32_t i = 0; i < e.shnum; i++) {
        sg_elf_section_t s;
        uint32_t name_off;
        elf_section(&e, i, &s, &name_off, NULL, NULL);
        const char *nm = strtab_at(&e, &strs, name_off, NULL);
        if (!nm || strcmp(nm, name) != 0) continue;
        if (s.type != SHT_NOBITS && !sg_in_bounds(s.offset, s.size, n)) return SG_EFORMAT;
        *out = s;
        return SG_OK;
    }
    return SG_ENOENT;
}

int sg_elf_vaddr_to_offset(const void *p, size_t n, uint64_t vaddr, uint64_t len,
                           uint64_t *offset)
{
    elf_t e;
    int rc = elf_open(p, n, &e);
    if (rc) return rc;
    for (uint32_t i = 0; i < e.shnum; i++) {
        sg_elf_section_t s;
        elf_section(&e, i, &s, NULL, NULL, NULL);
        if (s.type == SHT_NOBITS || !(s.flags & SHF_ALLOC) || s.size == 0) continue;
        if (vaddr < s.addr || !sg_in_bounds(vaddr - s.addr, len, s.size)) continue;
        if (!sg_in_bounds(s.offset, s.size, n)) return SG_EFORMAT;
        *offset = s.offset + (vaddr - s.addr);
        return SG_OK;
    }
    return SG_ENOENT;
}

void sg_name_list_free(sg_name_list_t *list)
{
    if (!list) return;
    free(list->block);
    memset(list, 0, sizeof *list);
}

bool sg_name_list_contains(const sg_name_list_t *list, const char *name)
{
    if (!list || !name) return false;
    for (uint32_t i = 0; i < list->n; i++)
        if (strcmp(list->names[i], name) == 0) return true;
    return false;
}

/* Is symbol i a kernel? Sets *name and *len when it is. */
static bool symbol_is_kernel(const elf_t *e, const sg_elf_section_t *symtab,
                             const sg_elf_section_t *strs, uint64_t i, const char **name,
                             size_t *len)
{
    const uint8_t *sym = e->p + symtab->offset + i * SYM_SIZE;
    uint32_t name_off = sg_rd32(sym);
    uint8_t info = sym[4], other = sym[5];
    uint16_t shndx = sg_rd16(sym + 6);
    if ((info & 0xf) != STT_FUNC || !(other & SG_ELF_STO_CUDA_ENTRY)) return false;
    if (shndx == SHN_UNDEF || (shndx >= SHN_LORESERVE && shndx != SHN_XINDEX)) return false;
    *name = strtab_at(e, strs, name_off, len);
    return *name != NULL && *len > 0;
}

int sg_elf_list_kernels(const void *p, size_t n, sg_name_list_t *out)
{
    if (!out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    elf_t e;
    int rc = elf_open(p, n, &e);
    if (rc) return rc;

    sg_elf_section_t symtab = {0}, strs = {0};
    bool found = false;
    for (uint32_t i = 0; i < e.shnum && !found; i++) {
        sg_elf_section_t s;
        uint32_t link;
        elf_section(&e, i, &s, NULL, &link, NULL);
        if (s.type != SHT_SYMTAB) continue;
        if (elf_section_bytes(&e, i, &symtab, &link, NULL)) return SG_EFORMAT;
        if (elf_section_bytes(&e, link, &strs, NULL, NULL)) return SG_EFORMAT;
        found = true;
    }
    if (!found) return SG_OK;

    /* Two passes: count and size, then fill one block. The block is at most
     * the string table plus a pointer per symbol, so it is bounded by n. */
    uint64_t nsyms = symtab.size / SYM_SIZE, count = 0, bytes = 0;
    for (uint64_t i = 0; i < nsyms; i++) {
        const char *nm;
        size_t len;
        if (!symbol_is_kernel(&e, &symtab, &strs, i, &nm, &len)) continue;
        count++;
        bytes += len + 1;
    }
    if (count == 0) return SG_OK;
    if (count > UINT32_MAX) return SG_ELIMIT;
    void *block = malloc(count * sizeof(char *) + bytes);
    if (!block) return SG_ENOMEM;
    const char **names = block;
    char *w = (char *)block + count * sizeof(char *);
    uint32_t k = 0;
    for (uint64_t i = 0; i < nsyms; i++) {
        const char *nm;
        size_t len;
        if (!symbol_is_kernel(&e, &symtab, &strs, i, &nm, &len)) continue;
        memcpy(w, nm, len + 1);
        names[k++] = w;
        w += len + 1;
    }
    out->n = k;
    out->names = names;
    out->block = block;
    return SG_OK;
}

int sg_elf_cuda_arch(const void *p, size_t n, uint32_t *arch)
{
    elf_t e;
    int rc = elf_open(p, n, &e);
    if (rc) return rc;
    const uint8_t *b = p;
    if (sg_rd16(b + 0x12) != SG_ELF_EM_CUDA) return SG_EINVAL;
    uint32_t flags = sg_rd32(b + 0x30);
    uint32_t a = b[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
    if (a == 0) return SG_EFORMAT;
    *arch = a;
    return SG_OK;
}
