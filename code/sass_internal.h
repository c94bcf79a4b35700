/* sass_internal.h: what the SASS dataflow's files (code/sass_flow.c, the
 * analysis of one kernel; sass_poly.c, its polynomials; sass_loop.c, loop
 * summaries) share and nobody else uses.
 *
 * A register holds a val_t: a 32-bit value p (VAL), the low or high word
 * of the 64-bit value p (LO, HI), or TOP with flags saying why it is not
 * known. p is a polynomial over atoms: the special registers (1..12, the
 * sg_sass_atom_t numbering), the iteration count of a summarized loop
 * (A_LOOP), and parameter words (P32, P64). */
#ifndef SGCAP_CODE_SASS_INTERNAL_H
#define SGCAP_CODE_SASS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/sass.h"

/* ---- polynomials ----------------------------------------------------------- */

/* Atoms. Their order is the order of terms: special registers, loop
 * counts, parameter words last. */
#define A_LOOP 0x0100u /* | L: the iteration count of loop L (0 at its first pass) */
#define A_LOOP_MAX 0x01ffu
#define A_QUO 0x0200u  /* | i: the quotient ctx->quo[i] */
#define A_MOD 0x0300u  /* | i: the remainder ctx->mods[i] */
#define A_MOD_MAX 0x03ffu
#define A_SYM 0x0400u  /* | i: the address of module symbol ctx->c4_names[i] */
#define A_SYM_MAX 0x04ffu
/* | predicate: c*atom == 0 (!= 0) says that the branch at the end of block
 * c - 1 went the way where that predicate is false (true): a condition not
 * read, kept so that the two edges' facts cancel where they meet again */
#define A_OPQ 0x0500u
#define A_OPQ_MAX 0x05ffu
#define A_P32 0x4000u  /* | offset / 4: a 32-bit parameter word */
#define A_P64 0x8000u  /* | offset / 4: a 64-bit parameter word */
#define A_PARAM (A_P32 | A_P64)
#define A_OFF(a) (((uint32_t)(a) & 0x3fffu) << 2)

#define SG_POLY_DEGREE 4
#define SG_POLY_TERMS 6

/* coef * at[0] * at[1] * at[2] * at[3]; at ascending, 0 (no atom) first:
 * a term of degree d has its atoms in the last d places. */
typedef struct {
    int64_t c;
    uint16_t at[SG_POLY_DEGREE];
} sg_term_t;

typedef struct {
    uint8_t n;
    sg_term_t t[SG_POLY_TERMS]; /* sorted by sg_poly_key, no zero coefficient */
} sg_poly_t;

uint64_t sg_poly_key(const sg_term_t *t);
uint32_t sg_poly_degree(const sg_term_t *t);
/* The atom of a degree-1 term, 0 otherwise. */
uint16_t sg_poly_term_atom(const sg_term_t *t);
bool sg_poly_eq(const sg_poly_t *x, const sg_poly_t *y);
void sg_poly_const(sg_poly_t *p, int64_t c);
void sg_poly_atom(sg_poly_t *p, uint16_t a);
/* Add c * (product of atoms) into p; false when p would need too many terms. */
bool sg_poly_add_term(sg_poly_t *p, int64_t c, const uint16_t atoms[SG_POLY_DEGREE]);
/* r = x + ys * y */
bool sg_poly_add(sg_poly_t *r, const sg_poly_t *x, const sg_poly_t *y, int64_t ys);
bool sg_poly_mul(sg_poly_t *r, const sg_poly_t *x, const sg_poly_t *y);
bool sg_poly_is_const(const sg_poly_t *p, int64_t *c);
bool sg_poly_has_params(const sg_poly_t *p);
/* Does p use an atom in [lo, hi]? */
bool sg_poly_has_atom_in(const sg_poly_t *p, uint16_t lo, uint16_t hi);
/* r = p with every occurrence of atom replaced by `by`. */
bool sg_poly_subst(sg_poly_t *r, const sg_poly_t *p, uint16_t atom, const sg_poly_t *by);
/* p = atom * with + without, where neither uses atom; false when a term
 * uses it twice. */
bool sg_poly_split(const sg_poly_t *p, uint16_t atom, sg_poly_t *with, sg_poly_t *without);

/* ---- values ------------------------------------------------------------------ */

#define NPROV 6

enum { V_TOP = 0, V_VAL, V_LO, V_HI };
enum {
    F_MEM = 1u << 0,    /* loaded from memory */
    F_UNK = 1u << 1,    /* an instruction the analysis does not model */
    F_JOIN = 1u << 2,   /* differs across paths (loops) */
    F_CALL = 1u << 3,   /* clobbered by a call */
    F_CBANK = 1u << 4,  /* from a constant bank other than the parameters */
    F_NONLIN = 1u << 5, /* beyond the degree or the terms a polynomial keeps */
    F_HIGH = 1u << 6,   /* the two words of a pair do not match */
    F_W32 = 1u << 7,    /* a 32-bit value was extended to 64 bits */
    F_MANY = 1u << 8,   /* more parameter words than provenance keeps */
    F_UNREACHED = 1u << 9, /* code not reached from the entry */
    F_DIV = 1u << 10,   /* shifted right / divided */
    /* an unknown value that may itself be a pointer (loaded, from another
     * constant bank, clobbered) flowed in additively: a single parameter
     * candidate beside it is not proof of the base. Multiplying clears it. */
    F_ADDPTR = 1u << 11,
    /* no path has given a value yet (a join's bottom, only ever alone: the
     * value of a select under its virtual guard before any path sets it) */
    F_NONE = 1u << 12,
};

typedef struct {
    uint16_t atom; /* A_P32|off or A_P64|off */
    uint8_t base;  /* flows in additively (a pointer candidate) */
} prov_t;

typedef struct {
    uint8_t kind, nprov;
    uint16_t flags;
    uint32_t origin; /* 1 + pc of the unmodelled instruction behind F_UNK, 0 none */
    prov_t prov[NPROV];
    sg_poly_t p;
} val_t;

/* ---- state ------------------------------------------------------------------- */

#define NPRED 16 /* P0..P6, PT=7, UP0..UP6 = 8..14, UPT = 15 */
/* Virtual predicates after the real ones: made by a join for a register
 * whose value on some paths is pinned by a comparison (sg_flow_state_join),
 * they live until the next join. */
#define NVPRED 4
#define MAXFACT 6
#define NIMP 8 /* guards a comparison of a select implies */

enum { C_LT = 0, C_LE, C_GT, C_GE, C_EQ, C_NE };
enum { P_TOP = 0, P_CMP, P_CARRY, P_ZERO /* a carry that is 0 */ };

typedef struct {
    uint8_t cmp;
    bool uns, wide;
    sg_poly_t l, r;
} cmp_t;

/* A guard: predicate*2 + negated, at the version ver of that predicate. */
typedef struct {
    int16_t id;
    uint32_t ver;
} gref_t;

typedef struct {
    uint8_t kind;
    uint16_t flags; /* CARRY: the W32 flag of the low word */
    int16_t g;      /* written under guard g-1 (pred*2+neg) at version gver; 0 none */
    uint32_t gver;
    uint32_t ver;
    cmp_t c;  /* P_CMP */
    sg_poly_t p; /* P_CARRY: the 64-bit sum whose low word set this carry */
    /* The comparison's first operand was register slot lslot holding the
     * value of identity lsver (slot_t.sver; 0: none). */
    uint16_t lslot;
    uint32_t lsver;
    /* 0: c holds when the predicate is true and its negation when false.
     * 1 + n: only under the guard pred*2+n (c negated when n = 1): a
     * comparison of a select that only that outcome resolves (c.l is the
     * select's value then; c.r is the operand as compared). */
    uint8_t half;
    /* Under the guard pred*2+imp_neg the guards imp[] hold too (the
     * outcome that proves which value a select took). */
    uint8_t imp_neg;
    uint8_t nimp;
    gref_t imp[NIMP];
} pred_t;

typedef struct {
    val_t v, alt;  /* alt: the value when the guard is false */
    int16_t g;     /* -1: unguarded; else pred*2 + neg */
    uint32_t gver; /* version of the guard predicate */
    /* Identity of the value held (one number per write, and per join for
     * each slot), so that a comparison can say which value it compared:
     * sver of the value now, altver of alt (0: none). Valid from a join to
     * the next (the join gives every slot a new one). */
    uint32_t sver, altver;
} slot_t;

#define NHELD (NIMP + 1)

typedef struct {
    bool reached;
    /* some path here passed a condition that is not among the facts (a
     * predicate it cannot read, facts lost at a join): which threads get
     * here is then only bounded, not known */
    bool cond_unknown;
    uint8_t nfacts;
    cmp_t facts[MAXFACT];
    pred_t preds[NPRED + NVPRED];
    /* Guards that hold along the edge being joined (its branch predicate
     * and what that implies): the join resolves the slots they guard.
     * Empty in a block's entry state. */
    uint8_t nheld;
    gref_t held[NHELD];
    slot_t *slots; /* ctx->nslots */
} state_t;

typedef struct {
    int16_t id; /* pred*2+neg, -1 none */
    uint32_t ver;
    bool never; /* @!PT */
    uint8_t nimp; /* guards that hold whenever this one does */
    gref_t imp[NIMP];
} guard_t;

/* ---- the analysis context ------------------------------------------------------- */

typedef struct {
    uint32_t first, count; /* instructions */
    uint32_t succ[2];      /* block indices, UINT32_MAX none */
    int8_t fact_pred[2];   /* predicate (pred*2+neg) that holds along succ[i], -1 none,
                              -2 a condition the analysis cannot read */
} block_t;

/* A natural loop the dataflow summarizes (sass_loop.c): its header's
 * state at iteration K, proven by induction from the state it is entered
 * with. */
typedef struct {
    uint32_t head_block; /* header block */
    uint32_t parent;     /* the loop holding it (summarized inside its region), UINT32_MAX */
    uint8_t *member;    /* ctx->nblocks flags: the blocks of the loop */
    uint16_t atom;      /* A_LOOP | index: its iteration count K */
    bool tried;         /* entry is the state the last summary was made from */
    bool summarized;    /* head is proven */
    state_t entry;      /* the join of the states entering the header */
    state_t head;       /* the header's state at iteration K */
    /* The grid-stride loop's pass at the header, in passes of the loop
     * `for (i = i0; i < n; i += ntid.x*nctaid.x)` it implements: K, or
     * R + U*K for a loop unrolled by U after a remainder loop of R passes
     * (the index at the header is then i0 + flat*ntid.x*nctaid.x). */
    sg_poly_t flat;
} sg_loop_t;

#define SG_LOOPS_MAX 16

/* floor(dividend / divisor) as unsigned 64-bit integers (all ones for a
 * zero divisor), from a recognised division (code/sass_div.c). */
typedef struct {
    sg_poly_t dividend, divisor;
} sg_quo_t;

/* value mod modulus, a power of two (x & (modulus - 1)). */
typedef struct {
    sg_poly_t value;
    uint32_t modulus;
} sg_mod_t;

#define SG_QUO_MAX 8
#define SG_MOD_MAX 8

/* A division's two paths (sass_div.c): the fork block, the join, the
 * registers of the dividend (dl:dh), divisor (sl:sh) and quotient (ql:qh),
 * and the quotient atom of the fork's last run (0: its words not known). */
typedef struct {
    uint32_t fork, join;
    uint16_t dl, dh, sl, sh, ql, qh;
    uint16_t atom;
} sg_div_site_t;

typedef struct {
    const sg_sass_insn_t *in;
    uint32_t n;
    uint32_t pc0;
    uint32_t arch, param_base, param_size;
    uint32_t ntid_base; /* c[0x0][ntid_base] = ntid.x; nctaid.x at +0xc */
    const uint32_t *call_targets;
    uint32_t n_call_targets;
    const uint32_t *benign_c4;
    uint32_t n_benign_c4;
    const uint32_t *c4_offsets; /* bank-4 words holding symbols' addresses */
    const char *const *c4_names;
    uint32_t n_c4;
    uint32_t max_ntid[3];
    uint32_t nr, nu;    /* R slots [0,nr), UR slots [nr, nr+nu) */
    uint32_t nslots;
    uint32_t verc;      /* version counter */
    block_t *blocks;
    uint32_t nblocks;
    uint32_t *blk_of;   /* instruction -> block */
    bool final;         /* record accesses */
    bool escaped;
    char escape_reason[SG_SASS_REASON];
    sg_sass_kernel_t *out;
    uint32_t cap_acc;
    int err;
    sg_loop_t *loops;   /* summarized loops: outermost loops with a memory access */
    uint32_t nloops;
    uint32_t *div_pcs;  /* pcs of the functions named as the 64-bit division */
    uint32_t n_div_pcs;
    sg_div_site_t *divs;
    uint32_t ndivs;
    sg_quo_t quo[SG_QUO_MAX];
    uint32_t nquo;
    sg_mod_t mods[SG_MOD_MAX];
    uint32_t nmod;
} ctx_t;

/* ---- shared by the dataflow's files (code/sass_flow.c) -------------------------- */

/* Opcode text: a modifier m of op ("64" in "IADD3.64"), its base mnemonic b. */
/* Is op the mnemonic b, with or without modifiers ("IMAD.WIDE" is "IMAD")?
 * Inline: the dataflow asks it dozens of times per instruction, and most
 * answers are decided by the first character. */
static inline bool sg_op_is(const char *op, const char *b)
{
    size_t i = 0;
    while (b[i] && op[i] == b[i])
        i++;
    return !b[i] && (op[i] == '.' || op[i] == 0);
}

/* Does op carry the modifier m (".WIDE" in "IMAD.WIDE.U32")? */
static inline bool sg_op_has(const char *op, const char *m)
{
    for (const char *p = op; *p; p++) {
        if (*p != '.')
            continue;
        size_t i = 0;
        while (m[i] && p[1 + i] == m[i])
            i++;
        if (!m[i] && (p[1 + i] == '.' || p[1 + i] == 0))
            return true;
    }
    return false;
}
bool sg_op_zero_reg(const sg_sass_operand_t *o); /* RZ, URZ */
/* Registers an instruction writes from its destination (1, 2 for 64-bit
 * forms, 4 for 128-bit; an upper bound for those not modelled). */
uint32_t sg_op_dest_width(const char *op);

val_t sg_val_top(uint16_t flags);
val_t sg_val_make(uint8_t kind, const sg_poly_t *p);
val_t sg_val_const(int64_t c);
bool sg_val_eq(const val_t *x, const val_t *y);
val_t sg_val_join(const val_t *x, const val_t *y);
/* The 64-bit value of a pair of words (TOP when they do not match). */
val_t sg_val_pair(const val_t *lo, const val_t *hi);
/* Is v exactly a 32-bit machine value that cannot have wrapped (a special
 * register, a constant that fits)? */
bool sg_val_exact32(const val_t *v, bool is_signed);
/* d gets s's flags and pointer candidates (as candidates only when keep_base). */
void sg_val_merge_prov(val_t *d, const val_t *s, bool keep_base);

bool sg_cmp_eq(const cmp_t *a, const cmp_t *b);
uint8_t sg_cmp_not(uint8_t c);

/* The value of a slot as an instruction under guard g reads it (NULL: any). */
val_t sg_flow_slot_read(const slot_t *s, const guard_t *g);
/* false when the fact did not fit (the list is full) */
bool sg_flow_add_fact(state_t *st, const cmp_t *c);
/* The comparison predicate id (pred*2+neg) holds, if it is one. */
bool sg_flow_pred_fact(const state_t *st, int id, cmp_t *out);
void sg_flow_state_top(ctx_t *x, state_t *s, uint16_t flags);
void sg_flow_state_copy(ctx_t *x, state_t *d, const state_t *s);
/* Join s into d, the entry state of block b; true when d changed. */
bool sg_flow_state_join(ctx_t *x, state_t *d, const state_t *s, uint32_t b);
/* Run block b's instructions on st. */
void sg_flow_run_block(ctx_t *x, state_t *st, uint32_t b);
/* Add to st the facts that hold along edge k of block b (or mark it
 * cond_unknown when the branch's condition cannot be read). */
void sg_flow_edge_facts(ctx_t *x, state_t *st, uint32_t b, int k);
/* Does the instruction access global memory through a register address? */
bool sg_flow_is_global_access(const char *op);

/* ---- loop summaries (code/sass_loop.c) ------------------------------------------ */

/* Find the loops to summarize (after the blocks are built). */
int sg_loops_find(ctx_t *x);
void sg_loops_free(ctx_t *x);
/* What the fixpoint joins into block s for the edge b -> s carrying st
 * (its facts added): st, or a copy in scratch with the values of a
 * summarized loop it leaves rewritten, or NULL when the edge enters or
 * returns to a summarized loop's header (whose state, the summary, is set
 * in in[s] on entry). */
const state_t *sg_loops_edge(ctx_t *x, uint32_t b, uint32_t s, const state_t *st,
                             state_t *scratch, state_t *in, uint8_t *dirty);
/* After a pass: recompute each loop's entry state from in[]; summarize the
 * loops whose entry changed. *changed: another pass is needed. */
int sg_loops_update(ctx_t *x, state_t *in, bool *changed);
/* Forget every summary (the passes did not settle). */
void sg_loops_drop(ctx_t *x);

/* ---- divisions (code/sass_div.c) -------------------------------------------------- */

/* Find the divisions (after the blocks are built). */
int sg_div_find(ctx_t *x);
/* The atom of a quotient / of a remainder mod a power of two, 0 when the
 * table is full. */
uint16_t sg_div_quotient_atom(ctx_t *x, const sg_poly_t *dividend, const sg_poly_t *divisor);
uint16_t sg_div_mod_atom(ctx_t *x, const sg_poly_t *v, uint32_t modulus);
/* At the end of a division's fork: its operands; at the start of its join:
 * the quotient. */
void sg_div_block_end(ctx_t *x, state_t *st, uint32_t b);
void sg_div_block_start(ctx_t *x, state_t *st, uint32_t b);

#endif /* SGCAP_CODE_SASS_INTERNAL_H */
