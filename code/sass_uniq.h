/* sass_uniq.h: each distinct instruction of a batch disassembled once.
 *
 * nvdisasm costs ~15-40 us per instruction and kernels repeat themselves:
 * PyTorch's cubins hold 5-20% distinct 16-byte encodings (303,192
 * instructions of one libtorch cubin are 21,551 distinct ones). The text
 * nvdisasm prints for an encoding does not depend on where it sits except
 * for the operands relative to the pc (BRA, BSSY, CALL.REL, RET.REL and
 * LEPC print an absolute target or address), so the batch's distinct
 * encodings are disassembled once, side by side, and every kernel's
 * listing is put together from them with those operands moved to the
 * instruction's own pc. Tested against the listing of the whole code
 * (tests/unit/test_sass_uniq.c, every fixture kernel, field by field).
 * Internal to code/sass*.c.
 */
#ifndef SGCAP_CODE_SASS_UNIQ_H
#define SGCAP_CODE_SASS_UNIQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/sass.h"

typedef struct {
    uint32_t n;             /* instructions of the code (its bytes / 16) */
    uint32_t *map;          /* [n]: instruction -> distinct index */
    uint32_t n_distinct;
    uint8_t *code;          /* [n_distinct * 16]: the encodings, first-seen order */
    sg_sass_insn_t *insns;  /* [n_distinct]: parsed; pc: where nvdisasm printed it */
    uint8_t *have;          /* [n_distinct]: insns[i] filled */
} sg_sass_uniq_t;

/* Index the distinct 16-byte instructions of code (len a multiple of 16,
 * at most 2^28 instructions). 0, SG_EINVAL or SG_ENOMEM. */
int sg_sass_uniq_build(const uint8_t *code, size_t len, sg_sass_uniq_t *u);

/* Take the instructions of a listing of code[base, base + len) that was
 * disassembled with -base base, where instruction k of that code is
 * distinct instruction which[k] (which NULL: the code is u->code itself): it
 * must list exactly one instruction at every 16 bytes of the range. 0,
 * SG_EINVAL, or SG_EFORMAT when it does not line up. */
int sg_sass_uniq_take(sg_sass_uniq_t *u, const sg_sass_listing_t *l, uint64_t base,
                      uint64_t len, const uint32_t *which, uint32_t n_which);

/* The listing of the code's bytes [off, off + size) (16-aligned, inside the
 * code, every distinct instruction taken): pcs off, off + 16, ..., and
 * pc-relative operands as a listing of the whole code at base 0 prints
 * them. A raw listing (no functions); free it with sg_sass_listing_free.
 * 0, SG_EINVAL, SG_ENOMEM. */
int sg_sass_uniq_listing(const sg_sass_uniq_t *u, uint64_t off, uint64_t size,
                         sg_sass_listing_t *out);

/* Does nvdisasm print an operand of this instruction relative to its pc
 * (the index of that operand, -1 when none)? */
int sg_sass_pc_operand(const sg_sass_insn_t *in);

void sg_sass_uniq_free(sg_sass_uniq_t *u);

/* ---- what nvdisasm printed before ---------------------------------------------
 *
 * A file per (nvdisasm binary, arch) in a cache directory: one line per
 * encoding, "HEX32 LINE", LINE as nvdisasm printed it (its pc included, for
 * the pc-relative operands). Written whole under a temporary name and
 * renamed; a file that does not read back (another version, damage, a line
 * that is not one instruction) is ignored and replaced. */
typedef struct sg_sass_icache sg_sass_icache_t;

/* The cache of dir for (tool, arch); NULL when dir is NULL or out of memory
 * (the analysis then runs without one). */
sg_sass_icache_t *sg_sass_icache_open(const char *dir, const char *tool, uint32_t arch);
/* Fill the distinct instructions of u the cache knows; how many. */
uint32_t sg_sass_icache_fill(const sg_sass_icache_t *c, sg_sass_uniq_t *u);
/* Learn what nvdisasm printed (text, -base base) for code whose instruction
 * k is distinct instruction which[k] of u, k < n. Lines that do not line
 * up are not learned. */
void sg_sass_icache_learn(sg_sass_icache_t *c, const sg_sass_uniq_t *u, const uint32_t *which,
                          uint32_t n, const char *text, size_t len, uint64_t base);
/* Write it back when it learned something. 0 or SG_EIO (nothing lost: the
 * old file stays). */
int sg_sass_icache_save(sg_sass_icache_t *c);
void sg_sass_icache_free(sg_sass_icache_t *c);
/* The file it reads and writes, and the header line it expects (for tests
 * and fuzzers that write one). */
const char *sg_sass_icache_path(const sg_sass_icache_t *c);
const char *sg_sass_icache_header(const sg_sass_icache_t *c);
/* Entries it holds, and those learned since it was opened. */
void sg_sass_icache_stats(const sg_sass_icache_t *c, uint32_t *entries, uint32_t *learned);

#endif /* SGCAP_CODE_SASS_UNIQ_H */
