/* fatbin.h: reading CUDA code images: fatbins (the host wrapper, the
 * container, PTX and ELF entries, LZ4/zstd compression), PTX text, format
 * sniffing, content hashes, and picking the PTX a device can use.
 *
 * Layout facts (CUDA 13, measured) are in shared/reference/fusion.md §1:
 *   wrapper   {u32 magic 0x466243B1; u32 version 1|2; u64 data; u64 aux}
 *             v1: aux = offline file name or 0; v2 (linked -rdc programs):
 *             aux = NULL-terminated array of the prelinked objects' fatbins.
 *   container {u32 magic 0xBA55ED50; u16 version 1; u16 header_size;
 *              u64 bytes of entries}, several back to back in .nv_fatbin.
 *   entry     header (64, 72, 80, 96, 112, 128 bytes seen) then payload.
 *
 * All input is untrusted: nothing is read outside the bytes given, sizes are
 * checked before use, decompression has a hard output cap, and memory use is
 * bounded by the input size plus that cap. Functions are pure (no globals,
 * no printing, no exit) and thread-safe, so capture can call them from the
 * shim. Errors are SG_E* codes; where an `err` buffer is taken it gets one
 * line saying what was wrong and at which offset.
 */
#ifndef SGCAP_CODE_FATBIN_H
#define SGCAP_CODE_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "elf_image.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define SG_FATBIN_WRAPPER_SIZE 24u
#define SG_FATBIN_MAGIC 0xBA55ED50u
#define SG_FATBIN_CONTAINER_SIZE 16u
/* Default cap on one decompressed entry (callers pass 0 to get it). The
 * largest cubins in the CUDA 13 libraries are tens of MiB. */
#define SG_FATBIN_DEFAULT_MAX_IMAGE (256u << 20)
/* Bound on entries in one parse: each needs >= 64 input bytes anyway; this
 * stops a pathological input from making an entry table of 100s of MiB. */
#define SG_FATBIN_MAX_ENTRIES (1u << 20)

/* Entry header flags (fusion.md §1; 0x100000/0x200000 measured here with
 * sm_90a/sm_100f builds). Others are kept in sg_fatbin_entry_t.flags. */
#define SG_FATBIN_FLAG_64BIT 0x1ull
#define SG_FATBIN_FLAG_DEBUG 0x2ull
#define SG_FATBIN_FLAG_LINUX 0x10ull
#define SG_FATBIN_FLAG_LZ4 0x2000ull
#define SG_FATBIN_FLAG_ZSTD 0x8000ull
#define SG_FATBIN_FLAG_ARCH_SPECIFIC 0x100000ull   /* sm_XXa */
#define SG_FATBIN_FLAG_FAMILY_SPECIFIC 0x200000ull /* sm_XXf */

/* ---- host wrapper (__fatBinC_Wrapper_t) --------------------------------- */

typedef struct {
    uint32_t version; /* 1 or 2 */
    uint64_t data;    /* address of the fatbin */
    uint64_t aux;     /* v1: file name address or 0; v2: prelinked array address */
} sg_fatbin_wrapper_t;

/* Decode a wrapper from bytes (n >= 24): checks the magic and the version.
 * Addresses are returned as numbers: they are pointers only inside the
 * process that holds the wrapper (offline, map them with
 * sg_elf_vaddr_to_offset). SG_EFORMAT for a bad magic, SG_EUNSUPPORTED for
 * a version other than 1 or 2. */
int sg_fatbin_wrapper_decode(const void *p, size_t n, sg_fatbin_wrapper_t *out);

/* IN-PROCESS ONLY: the fatbins a live wrapper registers: its data, then for
 * v2 the prelinked fatbins from its NULL-terminated array (cudart fills the
 * array before calling __cudaRegisterFatBinary). At most `max` pointers are
 * stored; SG_ELIMIT when the array is longer (out[] and *n hold the first
 * max). The wrapper and the array must be live memory of this process. */
int sg_fatbin_wrapper_fatbins(const void *wrapper, const uint8_t **out, uint32_t max,
                              uint32_t *n);

/* Size of the fatbin container starting at p: 16 + bytes of entries, read
 * from its header alone (only 16 bytes are read). `max` bounds what is
 * accepted (n bytes readable, or a cap in-process); SG_EFORMAT when the
 * header is bad or claims more than max. */
int sg_fatbin_span(const void *p, size_t max, size_t *len);

/* ---- container and entries ---------------------------------------------- */

typedef enum {
    SG_FATBIN_ENTRY_OTHER = 0, /* a kind this reader does not know (kept, not decoded) */
    SG_FATBIN_ENTRY_PTX = 1,
    SG_FATBIN_ENTRY_ELF = 2,
} sg_fatbin_entry_kind_t;

typedef enum {
    SG_FATBIN_COMPRESS_NONE = 0,
    SG_FATBIN_COMPRESS_LZ4,
    SG_FATBIN_COMPRESS_ZSTD,
} sg_fatbin_compression_t;

typedef struct {
    sg_fatbin_entry_kind_t kind;
    uint16_t raw_kind;                  /* the header's kind field */
    uint32_t arch;                      /* 75, 90, 100, ...: sm_ for ELF, compute_ for PTX */
    uint16_t version_major, version_minor; /* ELF 1.8, PTX 9.0 (nvcc 13) */
    uint64_t flags;                     /* SG_FATBIN_FLAG_* and anything else */
    sg_fatbin_compression_t compression;
    uint32_t container;                 /* index of its container */
    /* Offsets are from the start of the bytes given to sg_fatbin_parse. */
    uint64_t header_offset;
    uint32_t header_size;
    uint64_t payload_offset;
    uint64_t payload_size;      /* padded size in the fatbin */
    uint64_t compressed_size;   /* bytes of compressed data, 0 if uncompressed */
    uint64_t uncompressed_size; /* declared size after decompression, 0 if uncompressed */
    /* Optional strings inside the header, 0/0 when absent: the source file
     * name (debug builds) and the ptxas options ("--compile-only" for -rdc). */
    uint64_t name_offset;
    uint32_t name_len;
    uint64_t options_offset;
    uint32_t options_len;
} sg_fatbin_entry_t;

typedef struct {
    const uint8_t *data; /* the bytes parsed; not owned: keep them alive */
    size_t size;         /* bytes consumed: through the end of the last container */
    uint32_t n_containers;
    uint32_t n_entries;
    sg_fatbin_entry_t *entries; /* owned */
} sg_fatbin_t;

enum {
    /* Parse only the first container and ignore what follows it (an image
     * handed to cuModuleLoadData, whose length is unknown). Without it,
     * containers are read back to back up to n; zero bytes between or after
     * containers are skipped as padding, anything else is an error. */
    SG_FATBIN_FIRST_ONLY = 1u << 0,
};

/* Parse a fatbin (one container or several back to back, e.g. the whole
 * .nv_fatbin section of a binary). out->entries lists every entry in order.
 * Returns 0 or SG_EFORMAT / SG_EUNSUPPORTED / SG_ELIMIT / SG_ENOMEM with a
 * one-line reason in err (err may be NULL). On error *out is empty. */
int sg_fatbin_parse(const void *p, size_t n, unsigned flags, sg_fatbin_t *out, char *err,
                    size_t errlen);
void sg_fatbin_free(sg_fatbin_t *fb);

/* Raw payload of entry i (compressed bytes if compressed), no copy. */
int sg_fatbin_entry_payload(const sg_fatbin_t *fb, uint32_t i, const uint8_t **p, size_t *n);

/* Decompress (or copy) entry i into a malloc'd buffer. The result is the
 * image itself: PTX text up to its NUL (*len excludes the NUL, the buffer is
 * always NUL-terminated); an ELF trimmed to the size its headers give (or
 * the whole payload if they cannot be read). max_bytes caps the output
 * (0 = SG_FATBIN_DEFAULT_MAX_IMAGE); an entry declaring more is SG_ELIMIT
 * and nothing larger than max_bytes + 1 is ever allocated. Corrupt
 * compressed data is SG_EFORMAT. */
int sg_fatbin_extract(const sg_fatbin_t *fb, uint32_t i, uint64_t max_bytes, uint8_t **out,
                      size_t *len);

/* ---- PTX text ------------------------------------------------------------ */

/* The `.target` of a PTX module: sm number (90) and suffix ('a', 'f' or 0).
 * Comments and strings are skipped; only the first `len` bytes are read (and
 * never past a NUL). SG_ENOENT when there is no .target. */
int sg_ptx_target(const char *ptx, size_t len, uint32_t *arch, char *suffix);
/* The `.version` directive: 9.0 gives major 9, minor 0. */
int sg_ptx_version(const char *ptx, size_t len, uint32_t *major, uint32_t *minor);
/* Names of the module's `.entry` functions (kernels), in text order. */
int sg_ptx_list_entries(const char *ptx, size_t len, sg_name_list_t *out);
/* Does the module define kernel `name` as an `.entry`? */
bool sg_ptx_has_entry(const char *ptx, size_t len, const char *name);

/* Can PTX with `.target sm_<target><suffix>` be JIT-compiled for a device
 * of sm_<device_arch>? Plain: target <= device. 'a' (arch-specific): only
 * the same arch. 'f' (family): same major, target <= device. */
bool sg_ptx_target_usable(uint32_t target, char suffix, uint32_t device_arch);

/* ---- choosing a kernel's PTX --------------------------------------------- */

typedef enum {
    SG_PTX_OK = 0,           /* usable PTX found */
    SG_PTX_NO_IMAGE,         /* the kernel's code image was not captured */
    SG_PTX_SASS_ONLY,        /* the image holds SASS (ELF) but no PTX */
    SG_PTX_ONLY_HIGHER,      /* PTX exists only for targets above the device */
    SG_PTX_ARCH_MISMATCH,    /* PTX exists only for other arch/family-specific targets */
    SG_PTX_NOT_IN_PTX,       /* the image has PTX, but none defines this kernel */
    SG_PTX_FROM_SOURCE,      /* NVRTC source captured: PTX comes from recompiling it */
    SG_PTX_EMPTY,            /* the image holds no code at all */
    SG_PTX_UNREADABLE,       /* the image or an entry is malformed or over the size cap */
    SG_PTX_REASON_COUNT
} sg_ptx_reason_t;

/* Stable short names ("ok", "sass_only", "only_higher_target", ...). */
const char *sg_ptx_reason_name(sg_ptx_reason_t r);

/* The sm number of a device of compute capability major.minor (90 for
 * 9.0); 90 when they are not a capability (unrecorded). */
uint32_t sg_code_arch_of(int cc_major, int cc_minor);

typedef struct {
    sg_ptx_reason_t reason;
    uint32_t entry;     /* chosen fatbin entry, SG_NONE when none */
    uint32_t target;    /* its .target sm number, 0 when none */
    char target_suffix; /* 'a', 'f' or 0 */
    char detail[192];   /* one line for humans: what was there and why not */
} sg_ptx_pick_t;

/* Pick the PTX entry to use on a device of sm_<device_arch>: among PTX
 * entries whose text defines `kernel` (any PTX entry when kernel is NULL),
 * the one with the highest `.target` that sg_ptx_target_usable accepts
 * (read from the text, not the header; on a tie the plain target wins over
 * 'a'/'f', being the most portable). Returns 0 whenever a decision was made,
 * including "none" (see out->reason); negative only for bad arguments or
 * out of memory. With ptx != NULL the chosen text is handed back (malloc'd,
 * NUL-terminated, *ptx_len without the NUL), else freed. max_bytes caps each
 * decompressed entry as in sg_fatbin_extract. */
int sg_fatbin_pick_ptx(const sg_fatbin_t *fb, uint32_t device_arch, const char *kernel,
                       uint64_t max_bytes, sg_ptx_pick_t *out, char **ptx, size_t *ptx_len);

/* ---- format sniffing and hashing ----------------------------------------- */

typedef enum {
    SG_CODE_FORMAT_UNKNOWN = 0,
    SG_CODE_FORMAT_FATBIN,  /* starts with a container header */
    SG_CODE_FORMAT_WRAPPER, /* a __fatBinC_Wrapper_t (in-process pointer) */
    SG_CODE_FORMAT_CUBIN,   /* ELF (EM_CUDA) */
    SG_CODE_FORMAT_PTX,     /* PTX text */
} sg_code_format_t;

/* What a code image is and how many bytes it spans according to its own
 * header: a fatbin's first container (16 + bytes of entries), a cubin's
 * sg_elf_image_size, PTX text up to its NUL (without it), 24 for a wrapper.
 * `n` is how many bytes may be read: the exact length, or in-process (where
 * cuModuleLoadData gets no length) a cap; only headers inside [p, p+n) are
 * read. Returns the format; *size (may be NULL) is 0 when unknown or when
 * the header claims more than n. */
sg_code_format_t sg_code_image_sniff(const void *p, size_t n, uint64_t *size);
const char *sg_code_format_name(sg_code_format_t f); /* "fatbin", "cubin", ... */

/* Content hash of a code image: xxh64, seed 0, as 16 lowercase hex digits. */
void sg_code_hash(const void *p, size_t n, char out[17]);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_FATBIN_H */
