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
    sg_sass_insn_t *insns;  /* [n_distinct]: parsed, pc = 16 * index */
    uint8_t *have;          /* [n_distinct]: insns[i] filled */
} sg_sass_uniq_t;

/* Index the distinct 16-byte instructions of code (len a multiple of 16,
 * at most 2^28 instructions). 0, SG_EINVAL or SG_ENOMEM. */
int sg_sass_uniq_build(const uint8_t *code, size_t len, sg_sass_uniq_t *u);

/* Take the instructions of a listing of u->code[base, base + len) that was
 * disassembled with -base base: it must list exactly one instruction at
 * every 16 bytes of the range. 0, or SG_EFORMAT when it does not. */
int sg_sass_uniq_take(sg_sass_uniq_t *u, const sg_sass_listing_t *l, uint64_t base,
                      uint64_t len);

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

#endif /* SGCAP_CODE_SASS_UNIQ_H */
