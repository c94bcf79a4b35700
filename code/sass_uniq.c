/* sass_uniq.c: the distinct instructions of a batch and the kernel
 * listings made from them (see sass_uniq.h). */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "code/sass_internal.h"
#include "code/sass_uniq.h"
#include "graph/graph.h"

#define MAX_INSNS (1u << 28)
#define EMPTY UINT32_MAX

void sg_sass_uniq_free(sg_sass_uniq_t *u)
{
    if (!u)
        return;
    free(u->map);
    free(u->code);
    free(u->insns);
    free(u->have);
    memset(u, 0, sizeof *u);
}

int sg_sass_uniq_build(const uint8_t *code, size_t len, sg_sass_uniq_t *u)
{
    if (!u)
        return SG_EINVAL;
    memset(u, 0, sizeof *u);
    if ((!code && len) || len % 16 || len / 16 > MAX_INSNS)
        return SG_EINVAL;
    uint32_t n = (uint32_t)(len / 16);
    uint32_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *slot = malloc((size_t)cap * sizeof *slot);
    u->map = malloc((size_t)(n ? n : 1) * sizeof *u->map);
    u->code = malloc(len ? len : 16);
    if (!slot || !u->map || !u->code) {
        free(slot);
        sg_sass_uniq_free(u);
        return SG_ENOMEM;
    }
    memset(slot, 0xff, (size_t)cap * sizeof *slot);
    u->n = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *w = code + (size_t)i * 16;
        uint32_t h = (uint32_t)XXH3_64bits(w, 16) & (cap - 1);
        while (slot[h] != EMPTY && memcmp(u->code + (size_t)slot[h] * 16, w, 16))
            h = (h + 1) & (cap - 1);
        if (slot[h] == EMPTY) {
            slot[h] = u->n_distinct;
            memcpy(u->code + (size_t)u->n_distinct * 16, w, 16);
            u->n_distinct++;
        }
        u->map[i] = slot[h];
    }
    free(slot);
    size_t nd = u->n_distinct ? u->n_distinct : 1;
    u->insns = calloc(nd, sizeof *u->insns);
    u->have = calloc(nd, 1);
    if (!u->insns || !u->have) {
        sg_sass_uniq_free(u);
        return SG_ENOMEM;
    }
    return 0;
}

int sg_sass_uniq_take(sg_sass_uniq_t *u, const sg_sass_listing_t *l, uint64_t base,
                      uint64_t len, const uint32_t *which, uint32_t n_which)
{
    if (!u || !l)
        return SG_EINVAL;
    uint64_t span = which ? (uint64_t)n_which * 16 : (uint64_t)u->n_distinct * 16;
    if (base % 16 || len % 16 || base > span || len > span - base)
        return SG_EINVAL;
    uint64_t count = len / 16;
    if (l->n_insns != count)
        return SG_EFORMAT;
    for (uint64_t k = 0; k < count; k++)
        if (l->insns[k].pc != base + 16 * k)
            return SG_EFORMAT;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t at = base / 16 + k;
        uint32_t d = which ? which[at] : (uint32_t)at;
        if (d >= u->n_distinct)
            return SG_EINVAL;
        u->insns[d] = l->insns[k];
        u->have[d] = 1;
    }
    return 0;
}

int sg_sass_pc_operand(const sg_sass_insn_t *in)
{
    const char *op = in->op;
    /* Measured with nvdisasm 13.0 on sm_90 (the same code at two -base
     * values): these and only these print a pc-dependent operand, always
     * the last number. JMP, CALL.ABS, RET.ABS take absolute targets; BRX
     * and JMX a register. */
    bool rel = sg_op_is(op, "BRA") || sg_op_is(op, "BSSY") || sg_op_is(op, "LEPC") ||
               ((sg_op_is(op, "CALL") || sg_op_is(op, "RET")) && sg_op_has(op, "REL"));
    if (!rel)
        return -1;
    for (int i = (int)in->n_ops - 1; i >= 0; i--)
        if (in->ops[i].kind == SG_SASS_OP_IMM ||
            (in->ops[i].kind == SG_SASS_OP_LABEL && in->ops[i].imm >= 0))
            return i;
    return -1;
}

int sg_sass_uniq_listing(const sg_sass_uniq_t *u, uint64_t off, uint64_t size,
                         sg_sass_listing_t *out)
{
    if (!out)
        return SG_EINVAL;
    memset(out, 0, sizeof *out);
    if (!u || off % 16 || size % 16 || size == 0 || off > (uint64_t)u->n * 16 ||
        size > (uint64_t)u->n * 16 - off || off + size > UINT32_MAX)
        return SG_EINVAL;
    uint32_t first = (uint32_t)(off / 16), count = (uint32_t)(size / 16);
    for (uint32_t j = 0; j < count; j++)
        if (!u->have[u->map[first + j]])
            return SG_EINVAL;
    sg_sass_insn_t *in = malloc((size_t)count * sizeof *in);
    if (!in)
        return SG_ENOMEM;
    for (uint32_t j = 0; j < count; j++) {
        uint32_t d = u->map[first + j];
        in[j] = u->insns[d];
        in[j].pc = (uint32_t)(off + 16u * j);
        int k = sg_sass_pc_operand(&in[j]);
        if (k >= 0)
            in[j].ops[k].imm += (int64_t)in[j].pc - (int64_t)u->insns[d].pc;
    }
    out->insns = in;
    out->n_insns = count;
    return 0;
}
