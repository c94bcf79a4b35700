/* ptx.h: the PTX reader, the one PTX front end of sgcap.
 *
 * sg_ptx_parse turns PTX text (nvcc, NVRTC, Triton/LLVM, hand-written) into
 * an IR that both the access analysis (code/access.h) and the fusion lifter
 * work on:
 *   - the module: .version, .target (with its a/f suffix), .address_size,
 *     module-scope variables (.global/.const/.shared/...) with type, align,
 *     array size and the initialiser kept as source text;
 *   - functions and entries: linkage, parameters (type, align, array size,
 *     .ptr attributes and, for entries, their byte offset in the parameter
 *     buffer), return parameters, the performance directives;
 *   - bodies as a list of statements: register declarations (`%r<42>`
 *     ranges included), local/shared/param variables, labels, directives and
 *     instructions (guard, opcode, modifiers, operands), each with its exact
 *     source span, so a statement can be re-emitted verbatim;
 *   - the control-flow graph (basic blocks, successors, predecessors, reverse
 *     post-order) and per-instruction register uses and definitions.
 *
 * PTX is untrusted input: sizes, statement counts, nesting and expression
 * depth are bounded (sg_ptx_limits_t), nothing is ever read outside the
 * text, and any problem gives SG_EFORMAT (or SG_ELIMIT / SG_ENOMEM) with
 * "line:column: message" in the error. Nothing here prints, exits or aborts.
 *
 * Memory: the module owns a copy of the text and every string and array the
 * IR points to (one arena); sg_ptx_module_free releases all of it. Pointers
 * into the IR stay valid until then. The IR is read-only for its users.
 */
#ifndef SGCAP_CODE_PTX_H
#define SGCAP_CODE_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SG_PTX_NONE UINT32_MAX

/* ---- limits ------------------------------------------------------------- */

typedef struct {
    size_t max_bytes;         /* input text */
    uint32_t max_statements;  /* statements in the whole module */
    uint32_t max_depth;       /* nesting of { } blocks and ( ) expressions */
    uint32_t max_operands;    /* operands of one instruction, elements of one vector */
    uint32_t max_registers;   /* registers declared in one function */
    uint32_t max_functions;   /* functions and entries in the module */
    uint64_t max_memory;      /* bytes of IR (the arena) */
} sg_ptx_limits_t;

/* The defaults: 256 MiB of text, 8M statements, depth 64, 512 operands,
 * 4M registers per function, 1M functions, 4 GiB of IR. */
void sg_ptx_limits_default(sg_ptx_limits_t *lim);

/* ---- errors ------------------------------------------------------------- */

typedef struct {
    int code;          /* SG_EFORMAT, SG_ELIMIT, SG_ENOMEM, SG_EINVAL */
    uint32_t line;     /* 1-based; 0 when not tied to a position */
    uint32_t column;   /* 1-based, in bytes */
    char message[200]; /* "12:5: expected ';' after instruction" */
} sg_ptx_error_t;

/* ---- types and state spaces ---------------------------------------------- */

typedef enum {
    SG_PTX_T_NONE = 0,
    SG_PTX_T_B8, SG_PTX_T_B16, SG_PTX_T_B32, SG_PTX_T_B64, SG_PTX_T_B128,
    SG_PTX_T_U8, SG_PTX_T_U16, SG_PTX_T_U32, SG_PTX_T_U64,
    SG_PTX_T_S8, SG_PTX_T_S16, SG_PTX_T_S32, SG_PTX_T_S64,
    SG_PTX_T_F16, SG_PTX_T_F16X2, SG_PTX_T_BF16, SG_PTX_T_BF16X2, SG_PTX_T_TF32,
    SG_PTX_T_F32, SG_PTX_T_F64,
    SG_PTX_T_E4M3, SG_PTX_T_E5M2, SG_PTX_T_E4M3X2, SG_PTX_T_E5M2X2,
    SG_PTX_T_PRED,
    SG_PTX_T_TEXREF, SG_PTX_T_SAMPLERREF, SG_PTX_T_SURFREF,
    SG_PTX_T_COUNT
} sg_ptx_type_t;

const char *sg_ptx_type_name(sg_ptx_type_t t); /* ".u32", "" for NONE */
uint32_t sg_ptx_type_size(sg_ptx_type_t t);    /* bytes; 0 for pred/refs/NONE */
bool sg_ptx_type_is_int(sg_ptx_type_t t);      /* .b/.u/.s types */
bool sg_ptx_type_is_signed(sg_ptx_type_t t);   /* .s types */
bool sg_ptx_type_is_float(sg_ptx_type_t t);

typedef enum {
    SG_PTX_SPACE_NONE = 0,   /* generic address, or no state space given */
    SG_PTX_SPACE_REG,
    SG_PTX_SPACE_SREG,
    SG_PTX_SPACE_CONST,
    SG_PTX_SPACE_GLOBAL,
    SG_PTX_SPACE_LOCAL,
    SG_PTX_SPACE_PARAM,
    SG_PTX_SPACE_SHARED,         /* .shared and .shared::cta */
    SG_PTX_SPACE_SHARED_CLUSTER, /* .shared::cluster */
    SG_PTX_SPACE_TEX,
    SG_PTX_SPACE_COUNT
} sg_ptx_space_t;

const char *sg_ptx_space_name(sg_ptx_space_t s); /* ".global", "" for NONE */

typedef enum {
    SG_PTX_LINK_NONE = 0, SG_PTX_LINK_VISIBLE, SG_PTX_LINK_EXTERN, SG_PTX_LINK_WEAK,
    SG_PTX_LINK_COMMON
} sg_ptx_linkage_t;

/* ---- special registers ---------------------------------------------------- */

typedef enum {
    SG_PTX_SREG_OTHER = 0, /* known to PTX but not named here: see the operand's name */
    SG_PTX_SREG_TID_X, SG_PTX_SREG_TID_Y, SG_PTX_SREG_TID_Z,
    SG_PTX_SREG_NTID_X, SG_PTX_SREG_NTID_Y, SG_PTX_SREG_NTID_Z,
    SG_PTX_SREG_CTAID_X, SG_PTX_SREG_CTAID_Y, SG_PTX_SREG_CTAID_Z,
    SG_PTX_SREG_NCTAID_X, SG_PTX_SREG_NCTAID_Y, SG_PTX_SREG_NCTAID_Z,
    SG_PTX_SREG_LANEID, SG_PTX_SREG_WARPID, SG_PTX_SREG_NWARPID, SG_PTX_SREG_WARPSZ,
    SG_PTX_SREG_SMID, SG_PTX_SREG_NSMID, SG_PTX_SREG_GRIDID,
    SG_PTX_SREG_CLOCK, SG_PTX_SREG_CLOCK64, SG_PTX_SREG_GLOBALTIMER,
    SG_PTX_SREG_LANEMASK,          /* %lanemask_eq/le/lt/ge/gt */
    SG_PTX_SREG_DYNAMIC_SMEM_SIZE, SG_PTX_SREG_TOTAL_SMEM_SIZE, SG_PTX_SREG_AGGR_SMEM_SIZE,
    SG_PTX_SREG_ENVREG,            /* %envreg0..31: driver environment */
    SG_PTX_SREG_CLUSTER,           /* %cluster_*, %clusterid, %nclusterid, %is_explicit_cluster */
    SG_PTX_SREG_PM,                /* %pm0..7, %pm0_64.. performance counters */
    SG_PTX_SREG_COUNT
} sg_ptx_sreg_t;

/* ---- operands -------------------------------------------------------------- */

typedef enum {
    SG_PTX_OPND_REG = 0,  /* a declared register: reg */
    SG_PTX_OPND_SREG,     /* a special register: sreg (+ name as spelled) */
    SG_PTX_OPND_INT,      /* integer immediate (constant expressions folded): ival */
    SG_PTX_OPND_FLOAT,    /* float immediate: fval, fbits/fwidth for 0f/0d forms */
    SG_PTX_OPND_SYMBOL,   /* a name: variable, parameter, function or label (sym) */
    SG_PTX_OPND_ADDRESS,  /* [reg+imm], [sym+imm], [imm]; texture forms [a, {..}] */
    SG_PTX_OPND_VECTOR,   /* {a, b, c, d} */
    SG_PTX_OPND_LIST,     /* (a, b): call arguments and return values */
    SG_PTX_OPND_SINK,     /* _ */
    SG_PTX_OPND_PAIR      /* a|b: two destination predicates/registers */
} sg_ptx_opnd_kind_t;

typedef enum {
    SG_PTX_SYM_NONE = 0,
    SG_PTX_SYM_PARAM,      /* a parameter of the enclosing function: func->params[sym] */
    SG_PTX_SYM_RET,        /* a return parameter: func->rets[sym] */
    SG_PTX_SYM_LOCAL_VAR,  /* a variable declared in the body: func->vars[sym] */
    SG_PTX_SYM_MODULE_VAR, /* module->vars[sym] */
    SG_PTX_SYM_FUNC,       /* module->funcs[sym] */
    SG_PTX_SYM_LABEL       /* func->labels[sym] */
} sg_ptx_sym_kind_t;

typedef struct sg_ptx_operand {
    sg_ptx_opnd_kind_t kind;
    bool neg;            /* written with a leading '!' (predicates) or '-' */
    uint8_t comp;        /* vector component of a register: 0 none, 1..4 = .x .y .z .w */
    sg_ptx_sreg_t sreg;  /* SREG */
    uint32_t reg;        /* REG: register id; ADDRESS: base register or SG_PTX_NONE */
    sg_ptx_sym_kind_t sym_kind; /* SYMBOL; ADDRESS: base symbol (NONE if none) */
    uint32_t sym;        /* index in the table sym_kind names */
    int64_t ival;        /* INT: value; ADDRESS: offset, or the address without a base */
    double fval;         /* FLOAT */
    uint64_t fbits;      /* FLOAT written 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX: the bits */
    uint8_t fwidth;      /* 32 or 64 for those forms, 0 for decimal */
    const char *name;    /* REG/SREG/SYMBOL and ADDRESS bases: the name as written */
    uint32_t n_elems;    /* VECTOR/LIST/PAIR elements; ADDRESS: items after the base */
    const struct sg_ptx_operand *elems;
    uint32_t off, len;   /* source span */
} sg_ptx_operand_t;

/* ---- instructions ------------------------------------------------------------ */

/* Opcodes the analysis and the lifter look at by name; the rest are OTHER
 * (the spelling is always in instr.opcode). */
typedef enum {
    SG_PTX_OP_OTHER = 0,
    SG_PTX_OP_ABS, SG_PTX_OP_ACTIVEMASK, SG_PTX_OP_ADD, SG_PTX_OP_ADDC, SG_PTX_OP_ALLOCA,
    SG_PTX_OP_AND, SG_PTX_OP_APPLYPRIORITY, SG_PTX_OP_ATOM, SG_PTX_OP_BAR, SG_PTX_OP_BARRIER,
    SG_PTX_OP_BFE, SG_PTX_OP_BFI, SG_PTX_OP_BFIND, SG_PTX_OP_BRA, SG_PTX_OP_BREV,
    SG_PTX_OP_BRKPT, SG_PTX_OP_BRX, SG_PTX_OP_CALL, SG_PTX_OP_CLZ, SG_PTX_OP_CNOT,
    SG_PTX_OP_COPYSIGN, SG_PTX_OP_COS, SG_PTX_OP_CP, SG_PTX_OP_CREATEPOLICY, SG_PTX_OP_CVT,
    SG_PTX_OP_CVTA, SG_PTX_OP_DISCARD, SG_PTX_OP_DIV, SG_PTX_OP_DP2A, SG_PTX_OP_DP4A,
    SG_PTX_OP_ELECT, SG_PTX_OP_EX2, SG_PTX_OP_EXIT, SG_PTX_OP_FENCE, SG_PTX_OP_FMA,
    SG_PTX_OP_FNS, SG_PTX_OP_GETCTARANK, SG_PTX_OP_GRIDDEPCONTROL, SG_PTX_OP_ISSPACEP,
    SG_PTX_OP_LD, SG_PTX_OP_LDMATRIX, SG_PTX_OP_LDU, SG_PTX_OP_LG2, SG_PTX_OP_LOP3,
    SG_PTX_OP_MAD, SG_PTX_OP_MAD24, SG_PTX_OP_MADC, SG_PTX_OP_MAPA, SG_PTX_OP_MATCH,
    SG_PTX_OP_MAX, SG_PTX_OP_MBARRIER, SG_PTX_OP_MEMBAR, SG_PTX_OP_MIN, SG_PTX_OP_MMA,
    SG_PTX_OP_MOV, SG_PTX_OP_MUL, SG_PTX_OP_MUL24, SG_PTX_OP_MULTIMEM, SG_PTX_OP_NANOSLEEP,
    SG_PTX_OP_NEG, SG_PTX_OP_NOT, SG_PTX_OP_OR, SG_PTX_OP_PMEVENT, SG_PTX_OP_POPC,
    SG_PTX_OP_PREFETCH, SG_PTX_OP_PREFETCHU, SG_PTX_OP_PRMT, SG_PTX_OP_RCP, SG_PTX_OP_RED,
    SG_PTX_OP_REDUX, SG_PTX_OP_REM, SG_PTX_OP_RET, SG_PTX_OP_RSQRT, SG_PTX_OP_SAD,
    SG_PTX_OP_SELP, SG_PTX_OP_SET, SG_PTX_OP_SETMAXNREG, SG_PTX_OP_SETP, SG_PTX_OP_SHF,
    SG_PTX_OP_SHFL, SG_PTX_OP_SHL, SG_PTX_OP_SHR, SG_PTX_OP_SIN, SG_PTX_OP_SLCT,
    SG_PTX_OP_SQRT, SG_PTX_OP_ST, SG_PTX_OP_STACKRESTORE, SG_PTX_OP_STACKSAVE,
    SG_PTX_OP_STMATRIX, SG_PTX_OP_SUB, SG_PTX_OP_SUBC, SG_PTX_OP_SULD, SG_PTX_OP_SUQ,
    SG_PTX_OP_SURED, SG_PTX_OP_SUST, SG_PTX_OP_SZEXT, SG_PTX_OP_TANH, SG_PTX_OP_TCGEN05,
    SG_PTX_OP_TENSORMAP, SG_PTX_OP_TESTP, SG_PTX_OP_TEX, SG_PTX_OP_TLD4, SG_PTX_OP_TRAP,
    SG_PTX_OP_TXQ, SG_PTX_OP_VOTE, SG_PTX_OP_WGMMA, SG_PTX_OP_WMMA, SG_PTX_OP_XOR,
    SG_PTX_OP_COUNT
} sg_ptx_opcode_t;

const char *sg_ptx_opcode_name(sg_ptx_opcode_t op); /* "ld"; "" for OTHER */

typedef struct {
    sg_ptx_opcode_t op;
    const char *opcode;          /* as written: "ld", "cp", "tcgen05" */
    uint32_t n_mods;
    const char *const *mods;     /* with their dot: ".global", ".v4", ".b32", ".L2::cache_hint" */
    uint32_t n_opnds;
    const sg_ptx_operand_t *opnds;
    uint32_t guard;              /* guard predicate register, SG_PTX_NONE when unguarded */
    bool guard_neg;              /* @!p */
    /* Decoded from the modifiers (the first of each kind): */
    sg_ptx_space_t space;        /* state space modifier, NONE when absent */
    sg_ptx_type_t type, type2;   /* first and second type modifier (cvt.u64.u32: U64, U32) */
    uint8_t vec;                 /* 1, or 2/4/8 from .v2/.v4/.v8 */
} sg_ptx_instr_t;

/* True when the instruction has modifier `mod` (with its dot). */
bool sg_ptx_instr_has_mod(const sg_ptx_instr_t *ins, const char *mod);

/* ---- declarations -------------------------------------------------------------- */

/* A variable or parameter: module-scope variables, function parameters and
 * return parameters, and variables declared inside a body. */
typedef struct {
    const char *name;
    sg_ptx_space_t space;     /* PARAM or REG for parameters */
    sg_ptx_linkage_t linkage;
    sg_ptx_type_t type;       /* element type */
    uint32_t vec;             /* 1, or 2/4 for .v2/.v4 variables */
    uint32_t align;           /* .align N, 0 when not given */
    uint32_t n_dims;          /* array dimensions (0: scalar) */
    uint64_t dims[4];         /* 0 for an unsized dimension ([]) */
    uint64_t size;            /* bytes (0 for unsized arrays and reference types) */
    sg_ptx_space_t ptr_space; /* .ptr .global etc. on a parameter, NONE when absent */
    uint32_t ptr_align;       /* .ptr ... .align N */
    uint32_t param_offset;    /* entry parameters: byte offset in the parameter buffer */
    bool managed;             /* .attribute(.managed) */
    uint32_t init_off, init_len; /* initialiser text after '=' (0/0: none) */
    uint32_t off, len;        /* span of the declaration (for parameters: this one) */
    uint32_t line;
} sg_ptx_var_t;

/* One register declaration: `.reg .b32 %r<42>;` declares ids base..base+41
 * named %r0..%r41; `.reg .b64 %SP;` declares one (count 0, the name itself). */
typedef struct {
    const char *name;      /* the prefix of a range, or the register's name */
    uint32_t count;        /* registers in a range; 0 for a single register */
    uint32_t base;         /* first register id */
    sg_ptx_type_t type;
    uint32_t vec;
    uint32_t stmt;         /* declaring statement (SG_PTX_NONE for .reg parameters) */
} sg_ptx_regdecl_t;

typedef struct {
    const char *name;
    uint32_t stmt;         /* the LABEL statement */
    uint32_t block;        /* basic block it starts */
} sg_ptx_label_t;

/* A performance directive or attribute between the parameter list and the
 * body: .maxntid, .reqntid, .minnctapersm, .maxnctapersm, .maxnreg,
 * .reqnctapercluster, .maxclusterrank, .explicitcluster, .noreturn, .pragma. */
typedef struct {
    const char *name;      /* ".maxntid" */
    uint32_t n_values;
    uint64_t values[3];
    uint32_t off, len;     /* span, including a .pragma's ';' */
} sg_ptx_directive_t;

/* ---- statements --------------------------------------------------------------- */

typedef enum {
    SG_PTX_STMT_INSTR = 0,  /* u.ins */
    SG_PTX_STMT_LABEL,      /* u.label: index in func->labels */
    SG_PTX_STMT_REG_DECL,   /* u.decl: func->reg_decls[first .. first+n) */
    SG_PTX_STMT_VAR_DECL,   /* u.decl: func->vars[first .. first+n) */
    SG_PTX_STMT_DIRECTIVE,  /* u.ins: opcode = ".pragma", ".loc", ".branchtargets", ...;
                               operands only for .branchtargets/.calltargets */
    SG_PTX_STMT_BLOCK_BEGIN,/* '{' */
    SG_PTX_STMT_BLOCK_END   /* '}' */
} sg_ptx_stmt_kind_t;

typedef struct {
    sg_ptx_stmt_kind_t kind;
    uint32_t off, len;      /* exact source span: through ';' (':' for labels) */
    uint32_t line, col;
    uint32_t depth;         /* { } nesting inside the body, 0 at the top */
    uint32_t block;         /* basic block, SG_PTX_NONE before the first instruction */
    union {
        sg_ptx_instr_t ins;
        uint32_t label;
        struct {
            uint32_t first, n;
        } decl;
    } u;
} sg_ptx_stmt_t;

/* ---- control flow ---------------------------------------------------------------- */

typedef struct {
    uint32_t first, end;    /* statements [first, end) */
    uint32_t term;          /* last instruction statement, SG_PTX_NONE if none */
    uint32_t n_succ, n_pred;
    const uint32_t *succ;   /* block indices; for a conditional branch: taken, then fall-through */
    const uint32_t *pred;
    bool returns;           /* may leave the function here (ret, exit, trap, end of body) */
    uint32_t rpo;           /* position in func->rpo, SG_PTX_NONE if unreachable */
} sg_ptx_block_t;

/* ---- functions and the module ---------------------------------------------------- */

typedef struct {
    const char *name;
    bool is_entry;
    bool has_body;          /* false for declarations (prototypes, .extern) */
    sg_ptx_linkage_t linkage;
    bool noreturn;
    uint32_t n_params;
    sg_ptx_var_t *params;
    uint32_t params_size;   /* entries: bytes of the parameter buffer */
    uint32_t n_rets;
    sg_ptx_var_t *rets;
    uint32_t maxntid[3], reqntid[3]; /* 0 when not given (missing dims are 1) */
    uint32_t minnctapersm, maxnctapersm, maxnreg, maxclusterrank;
    uint32_t reqnctapercluster[3];
    bool explicitcluster;
    uint32_t n_dirs;
    sg_ptx_directive_t *dirs;
    /* spans, for rewriting */
    uint32_t off, len;                 /* the whole definition or declaration */
    uint32_t line, col;
    uint32_t kw_off, kw_len;           /* ".entry" / ".func" */
    uint32_t name_off, name_len;
    uint32_t params_off, params_len;   /* "( ... )", 0/0 when absent */
    uint32_t rets_off, rets_len;       /* "( ... )" of a .func's return parameters */
    uint32_t body_off, body_len;       /* "{ ... }", 0/0 without a body */
    /* body */
    uint32_t n_stmts;
    sg_ptx_stmt_t *stmts;
    uint32_t n_regs;                   /* register ids are 0 .. n_regs-1 */
    uint32_t n_reg_decls;
    sg_ptx_regdecl_t *reg_decls;       /* ordered by base */
    uint32_t n_vars;
    sg_ptx_var_t *vars;
    uint32_t n_labels;
    sg_ptx_label_t *labels;
    /* control flow (built for functions with a body) */
    uint32_t n_blocks;
    sg_ptx_block_t *blocks;            /* block 0 is the entry */
    uint32_t n_rpo;
    uint32_t *rpo;                     /* reachable blocks in reverse post-order */
} sg_ptx_func_t;

typedef struct sg_ptx_module {
    const char *src;           /* the module's own copy of the text, NUL-terminated */
    size_t src_len;
    uint32_t version_major, version_minor;
    uint32_t target_arch;      /* 90 for sm_90a */
    char target_suffix;        /* 'a', 'f' or 0 */
    char target[64];           /* the .target list as written, "sm_90a" or "sm_75, debug" */
    bool target_debug;
    uint32_t address_size;     /* 32 or 64 (64 when not given) */
    uint32_t n_vars;
    sg_ptx_var_t *vars;
    uint32_t n_funcs;
    sg_ptx_func_t *funcs;
    uint32_t n_stmts;          /* statements in all bodies */
    struct sg_ptx_arena *arena; /* internal */
} sg_ptx_module_t;

/* Parse `len` bytes of PTX (need not be NUL-terminated). lim may be NULL
 * for the defaults; err may be NULL. On success *out is the module. */
int sg_ptx_parse(const char *text, size_t len, const sg_ptx_limits_t *lim,
                 sg_ptx_module_t **out, sg_ptx_error_t *err);
void sg_ptx_module_free(sg_ptx_module_t *m);

/* The function or entry named `name` that has a body (else a declaration), NULL if none. */
const sg_ptx_func_t *sg_ptx_find_func(const sg_ptx_module_t *m, const char *name);

/* Register queries. sg_ptx_reg_name writes the name ("%r17") and returns
 * its length (snprintf-style); the type is that of the declaration. */
int sg_ptx_reg_name(const sg_ptx_func_t *f, uint32_t reg, char *buf, size_t n);
const sg_ptx_regdecl_t *sg_ptx_reg_decl(const sg_ptx_func_t *f, uint32_t reg);
/* The register id of `name` in f, SG_PTX_NONE when f declares none (inner-scope
 * redeclarations: the first one). */
uint32_t sg_ptx_reg_lookup(const sg_ptx_func_t *f, const char *name);

/* Registers an instruction reads and writes (the guard counts as read;
 * address bases are read). Writes up to `max` ids and returns how many
 * there are (which may be more than max). For opcodes this reader does not
 * know, every register operand outside an address is reported as both
 * read and written, which is what a sound analysis needs. */
uint32_t sg_ptx_instr_uses(const sg_ptx_instr_t *ins, uint32_t *regs, uint32_t max);
uint32_t sg_ptx_instr_defs(const sg_ptx_instr_t *ins, uint32_t *regs, uint32_t max);

/* True when the instruction ends a basic block (bra, brx, ret, exit, trap). */
bool sg_ptx_instr_is_terminator(const sg_ptx_instr_t *ins);

/* The instruction in canonical form, one space between opcode and operands
 * and ", " between operands ("@!%p1 ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1+16];").
 * Returns the length it needs (snprintf-style). */
int sg_ptx_format_instr(const sg_ptx_func_t *f, const sg_ptx_instr_t *ins, char *buf, size_t n);

/* Immediate dominators of f's reachable blocks (idom[entry] = entry,
 * SG_PTX_NONE for unreachable blocks); idom has f->n_blocks entries. */
void sg_ptx_dominators(const sg_ptx_func_t *f, uint32_t *idom);
/* Whether block a dominates block b, given idom from sg_ptx_dominators. */
bool sg_ptx_dominates(const sg_ptx_func_t *f, const uint32_t *idom, uint32_t a, uint32_t b);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_PTX_H */
