/* elf_image.h: a small reader for the ELF files sgcap meets as code images: CUDA
 * cubins (SASS) and the host objects, executables and libraries whose
 * .nv_fatbin / __nv_relfatbin sections hold fatbins.
 *
 * Input is untrusted: every offset and count is checked against the length
 * given, arithmetic cannot overflow, and nothing is read outside [p, p+n).
 * Only 64-bit little-endian ELF is handled (cubins and x86-64/aarch64 hosts);
 * anything else is SG_EUNSUPPORTED. All functions are pure: no globals, no
 * printing; safe to call from any thread and from inside the shim.
 */
#ifndef SGCAP_CODE_ELF_IMAGE_H
#define SGCAP_CODE_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_ELF_EM_CUDA 190        /* e_machine of a cubin */
#define SG_ELF_STO_CUDA_ENTRY 0x10 /* st_other bit ptxas sets on kernel (entry) symbols */

/* A list of NUL-terminated names in one allocation: free with
 * sg_name_list_free (a zeroed list is valid and empty). */
typedef struct {
    uint32_t n;
    const char **names;
    void *block; /* owns names[] and the strings */
} sg_name_list_t;

void sg_name_list_free(sg_name_list_t *list);
bool sg_name_list_contains(const sg_name_list_t *list, const char *name);

typedef struct {
    uint32_t index;
    uint32_t type;   /* SHT_* (8 = NOBITS: no bytes in the file) */
    uint64_t flags;  /* SHF_* */
    uint64_t addr;   /* sh_addr (virtual address in a linked image) */
    uint64_t offset; /* file offset; offset+size <= n unless NOBITS */
    uint64_t size;
} sg_elf_section_t;

/* Is [p, p+n) the start of an ELF file we can read (ELF64, little-endian)?
 * Returns 0, SG_EFORMAT (not ELF / truncated header) or SG_EUNSUPPORTED
 * (ELF32 or big-endian). */
int sg_elf_check(const void *p, size_t n);

/* The file size an ELF image claims: the end of whatever its headers reach
 * (the ELF header, section header table, program header table, every
 * section with file bytes, every segment). nvcc 13 cubins put the program
 * headers after the section headers, so e_shoff + e_shentsize * e_shnum is
 * not enough. Reads only the headers, and only inside [p, p+n): n may be a
 * cap larger than the image when the true size is unknown (in-process).
 * SG_EFORMAT when something the headers name lies beyond n. */
int sg_elf_image_size(const void *p, size_t n, uint64_t *size);

/* Find a section by name. SG_ENOENT when absent. */
int sg_elf_find_section(const void *p, size_t n, const char *name, sg_elf_section_t *out);

/* Map a virtual address range of a linked image (executable or shared
 * library) to a file offset through its allocated sections. SG_ENOENT when
 * no section with file bytes holds all of [vaddr, vaddr+len). */
int sg_elf_vaddr_to_offset(const void *p, size_t n, uint64_t vaddr, uint64_t len,
                           uint64_t *offset);

/* Names of the kernels a cubin defines: defined STT_FUNC symbols with the
 * CUDA entry bit in st_other (device functions, which also get .text.<name>
 * sections, do not have it). Order is symbol-table order. An ELF without a
 * symbol table gives an empty list. */
int sg_elf_list_kernels(const void *p, size_t n, sg_name_list_t *out);

/* SM number a cubin was built for (75, 90, 100, ...), from e_flags: the
 * field moved from bits 0-7 (EI_ABIVERSION < 8) to bits 8-15 (>= 8, nvcc
 * 12.8+). SG_EINVAL when the file is not a cubin (e_machine != EM_CUDA). */
int sg_elf_cuda_arch(const void *p, size_t n, uint32_t *arch);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_ELF_IMAGE_H */
