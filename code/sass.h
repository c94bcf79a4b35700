/* sass.h: what a kernel's SASS reads and writes, for kernels that have no
 * PTX (PyTorch's own kernels, `-gencode ...,code=sm_XX` builds).
 *
 * The cubin's kernel code is disassembled with NVIDIA's nvdisasm (a child
 * process, found at run time: $SGCAP_NVDISASM, PATH, the CUDA toolkit, the
 * pip package nvidia-cuda-nvdisasm), the listing is parsed, and a forward
 * dataflow analysis over the kernel's control-flow graph follows every value
 * as a small polynomial in the special registers (tid, ctaid, ntid, nctaid)
 * and the parameter words (constant bank 0 at the arch's parameter base:
 * 0x160 on sm_75..89, 0x210 on sm_90, 0x380 on sm_100/120, read from the
 * cubin's EIATTR_PARAM_CBANK when present). The result is plain facts per
 * global memory instruction: kind, width, the parameter word the address
 * starts from, and for the `blockIdx*blockDim+threadIdx` family of indices
 * the exact affine index and its bounds check; otherwise "unknown" with the
 * reason. The PTX-side access analysis absorbs these facts.
 *
 * Assumptions (the same as the PTX side): 32-bit index arithmetic does not
 * wrap (an index computed in 32 bits and extended is flagged index_32bit so
 * a caller can check the launch size); addresses are 64-bit.
 *
 * Untrusted input everywhere: cubins, listings and the disassembler's
 * behaviour. Nothing here crashes on bad input, prints, or exits; failures
 * become a kernel whose status is "unknown" with a one-line reason. Offline
 * code (it forks a child process): never call it inside the shim.
 */
#ifndef SGCAP_CODE_SASS_H
#define SGCAP_CODE_SASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/fatbin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- facts -------------------------------------------------------------- */

enum {
    SG_SASS_LOAD = 1u << 0,
    SG_SASS_STORE = 1u << 1,
    SG_SASS_ATOMIC = 1u << 2, /* read-modify-write (ATOM*, RED*) */
};

/* Atoms of an index expression: the special registers of a launch. */
typedef enum {
    SG_SASS_ATOM_NONE = 0, /* the constant term */
    SG_SASS_TID_X, SG_SASS_TID_Y, SG_SASS_TID_Z,
    SG_SASS_CTAID_X, SG_SASS_CTAID_Y, SG_SASS_CTAID_Z,
    SG_SASS_NTID_X, SG_SASS_NTID_Y, SG_SASS_NTID_Z,
    SG_SASS_NCTAID_X, SG_SASS_NCTAID_Y, SG_SASS_NCTAID_Z,
    /* k*ntid.x*nctaid.x: the progress of a grid-stride loop, k >= 0 the
     * pass (`for (i = gid; i < n; i += ntid.x*nctaid.x)`: i = gid + this). Only
     * in accesses inside such a loop; its conditions bound k. */
    SG_SASS_GRID_K,
    /* j: the pass of a loop that does not step by the grid (0 at its
     * first), bounded by the access's conditions (sinf's table loop) */
    SG_SASS_LOOP_K,
    SG_SASS_ATOM_COUNT
} sg_sass_atom_t;

/* "tid.x", "ctaid.x", ..., "k*ntid.x*nctaid.x", "j" ("1" for NONE). */
const char *sg_sass_atom_name(sg_sass_atom_t a);

#define SG_SASS_MAX_TERMS 6
/* sum of coef * a * b (b == NONE: coef * a; both NONE: the constant). */
typedef struct {
    uint32_t n;
    struct {
        int64_t coef;
        uint8_t a, b; /* sg_sass_atom_t, a <= b unless b is NONE */
    } t[SG_SASS_MAX_TERMS];
} sg_sass_affine_t;

/* A condition under which an access runs: lhs OP P[param] (a width-byte
 * word, unsigned when uns), or lhs OP rhs_const when param is -1. */
typedef enum { SG_SASS_LT = 0, SG_SASS_LE, SG_SASS_GT, SG_SASS_GE, SG_SASS_EQ, SG_SASS_NE } sg_sass_op_t;

typedef struct {
    sg_sass_affine_t lhs;
    uint8_t op;     /* sg_sass_op_t */
    int32_t param;  /* byte offset of the bound's parameter word, -1: a constant */
    uint8_t width;  /* 4 or 8 */
    bool uns;
    int64_t rhs_const;
} sg_sass_cond_t;

#define SG_SASS_MAX_CONDS 5
#define SG_SASS_MAX_CANDIDATES 4
#define SG_SASS_REASON 112

typedef struct {
    uint32_t pc;      /* byte offset of the instruction in the kernel */
    uint8_t kind;     /* SG_SASS_LOAD / STORE / ATOMIC */
    uint8_t width;    /* bytes one thread accesses (1, 2, 4, 8, 16, 32) */
    bool predicated;  /* executes under a predicate (@P0 ...) */
    bool generic;     /* LD/ST/ATOM: a generic address (global unless proven otherwise) */
    char op[40];      /* the opcode as printed: "LDG.E.128", "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU" */
    /* Byte offset in the parameter buffer of the 64-bit word the address
     * starts from (the pointer), -1 when not attributed. */
    int32_t base;
    /* Parameter words that may be the pointer (base candidates): the base
     * itself when known, else every word that flows additively into the
     * address (several after a select between pointers). */
    uint32_t n_candidates;
    uint16_t candidates[SG_SASS_MAX_CANDIDATES];
    /* base -1 and this: the address starts from the module symbol of that
     * name (from a constant-bank-4 word its relocation names) */
    char symbol[48];
    /* address = P[base] (or the symbol) + index (bytes), index affine in the atoms. */
    bool index_known;
    bool index_32bit; /* the index was computed in 32 bits and extended */
    sg_sass_affine_t index;
    /* The index is multiplied by the parameter word at scale_param, a signed
     * scale_width-byte integer (a stride, CuPy's CArray.strides_[0]). */
    bool scaled;
    uint16_t scale_param;
    uint8_t scale_width;
    /* The linear-index pattern: index = offset + stride * (ctaid.x*ntid.x +
     * tid.x) exactly (stride 0 when the index is not of that form). */
    int64_t stride, offset;
    /* Bounds check in force at the access: guard_lhs < P[guard_param]
     * (a guard_width-byte word, signed unless guard_unsigned). */
    bool guarded;
    /* Every condition known to hold where the access runs (the guard is
     * one of them), and whether they are all of them: false when a
     * predicate the analysis cannot read, or paths merged, also decide which
     * threads run it (ranges from the index are then upper bounds). An
     * access whose index is unknown keeps the conditions too (they may show
     * that a launch never runs it); conditions_exact is false for it. */
    uint32_t n_conds;
    sg_sass_cond_t conds[SG_SASS_MAX_CONDS];
    bool conditions_exact;
    sg_sass_affine_t guard_lhs;
    int32_t guard_param;
    uint8_t guard_width;
    bool guard_unsigned;
    char reason[SG_SASS_REASON]; /* why base or index is unknown; "" when both known */
} sg_sass_access_t;

typedef struct {
    uint16_t offset; /* byte offset of the 64-bit word in the parameter buffer */
    uint8_t uses;    /* SG_SASS_LOAD|STORE|ATOMIC: accesses whose address it may start */
    uint8_t base_uses; /* the same, counting only accesses attributed to it as the base */
} sg_sass_param_use_t;

typedef enum {
    SG_SASS_ANALYSED = 0,   /* facts below are valid */
    SG_SASS_NO_DISASSEMBLER,/* nvdisasm not found */
    SG_SASS_REJECTED,       /* nvdisasm failed, timed out, or printed nothing usable */
    SG_SASS_NO_KERNEL,      /* the cubin has no such kernel */
    SG_SASS_BAD_CUBIN,      /* the cubin is malformed or over a size cap */
    SG_SASS_TOO_COMPLEX,    /* over the analysis limits (size, iterations) */
    SG_SASS_STATUS_COUNT
} sg_sass_status_t;

/* "analysed", "no_disassembler", ... */
const char *sg_sass_status_name(sg_sass_status_t s);

typedef struct sg_sass_kernel {
    char *name;              /* owned */
    sg_sass_status_t status;
    char reason[192];        /* status != ANALYSED: "unknown: no disassembler", ... */
    uint32_t arch;           /* 90 for sm_90 */
    uint32_t param_base;     /* c[0x0][param_base] holds parameter byte 0 */
    uint32_t param_size;     /* bytes of parameters (0 when the cubin does not say) */
    uint32_t n_instructions;
    /* Every global store and atomic has its base attributed to a parameter
     * word, and nothing (indirect branch, call out of the kernel, surface or
     * bulk-tensor store) escaped the analysis. When false, nothing about
     * what the kernel writes is certain; see uncertain_reason. */
    bool certain;
    char uncertain_reason[SG_SASS_REASON];
    uint32_t n_accesses;
    sg_sass_access_t *accesses; /* owned; in pc order */
    uint32_t n_params;
    sg_sass_param_use_t *params; /* owned; parameter words used as addresses, by offset */
} sg_sass_kernel_t;

void sg_sass_kernel_free(sg_sass_kernel_t *k);

/* ---- the listing (nvdisasm's text, parsed) ------------------------------ */

typedef enum {
    SG_SASS_OP_OTHER = 0, /* something this parser keeps only as text */
    SG_SASS_OP_REG,       /* R0..R254, RZ (255), UR0..UR62, URZ (63); uniform flag */
    SG_SASS_OP_PRED,      /* P0..P6, PT (7), UP0..UP6, UPT (7); uniform flag */
    SG_SASS_OP_IMM,       /* integer immediate (also a raw-mode branch target) */
    SG_SASS_OP_FIMM,      /* floating-point immediate (value not kept) */
    SG_SASS_OP_CBANK,     /* c[bank][reg+offset] */
    SG_SASS_OP_MEM,       /* [reg(.64)+ureg+offset], maybe after desc[URn] */
    SG_SASS_OP_SREG,      /* SR_TID.X, ... */
    SG_SASS_OP_LABEL,     /* `(.L_x_3): target resolved into imm, -1 if unknown */
} sg_sass_op_kind_t;

typedef struct {
    uint8_t kind;     /* sg_sass_op_kind_t */
    bool uniform;     /* UR / UP */
    bool neg, inv, abs; /* -X, ~X or !P, |X| */
    bool wide;        /* R2.64 */
    bool u32;         /* R2.U32 inside an address */
    uint16_t reg;     /* register / predicate number; CBANK, MEM: base register or 0xffff */
    uint16_t reg2;    /* MEM: a second (uniform) register or 0xffff; CBANK: bank */
    bool reg2_uniform;
    bool reg2_wide;
    int64_t imm;      /* IMM, LABEL target; CBANK, MEM: the offset */
    double fimm;      /* FIMM: the value printed */
    uint8_t sreg;     /* SREG: sg_sass_atom_t, 0 for others */
} sg_sass_operand_t;

#define SG_SASS_MAX_OPERANDS 8
typedef struct {
    uint32_t pc;
    int8_t guard;        /* predicate number, -1 none (or @PT) */
    bool guard_neg, guard_uniform;
    char op[48];         /* opcode with modifiers */
    uint8_t n_ops;
    sg_sass_operand_t ops[SG_SASS_MAX_OPERANDS];
} sg_sass_insn_t;

typedef struct {
    char *name;          /* from `.text.NAME:`; NULL in raw listings */
    uint32_t first, count; /* instructions [first, first+count) */
} sg_sass_func_t;

/* A function label inside a section of an ELF-mode listing (a callee:
 * `$__internal_0_$__cuda_sm20_div_u64:`). */
typedef struct {
    char *name;
    uint32_t func;       /* the section (index into funcs) */
    uint32_t pc;         /* of its first instruction */
} sg_sass_sym_t;

typedef struct {
    uint32_t n_insns;
    sg_sass_insn_t *insns;
    uint32_t n_funcs;    /* 0 for a raw listing (nvdisasm -b) */
    sg_sass_func_t *funcs;
    uint32_t n_syms;     /* 0 for a raw listing */
    sg_sass_sym_t *syms;
} sg_sass_listing_t;

/* Parse nvdisasm output: raw mode (-b SMxx, absolute pcs, hex branch
 * targets) or ELF mode (sections `.text.NAME:`, labels). Lines that are not
 * instructions are skipped; a malformed instruction line is kept with
 * op "?" (it poisons the analysis of its kernel, never the parse). Limits:
 * 1 GiB of text, 16M instructions. SG_EINVAL / SG_ELIMIT / SG_ENOMEM with a
 * reason in err. */
int sg_sass_parse(const char *text, size_t len, sg_sass_listing_t *out, char *err,
                  size_t errlen);
void sg_sass_listing_free(sg_sass_listing_t *l);

/* ---- analysis ------------------------------------------------------------ */

typedef struct {
    uint32_t arch;        /* sm number: decides where ntid/nctaid live */
    uint32_t param_base;  /* 0: the arch's default */
    uint32_t param_size;  /* 0: up to 32764 bytes */
    /* Offsets (from the kernel's start) of the functions defined in the
     * kernel's own section (non-inlined callees and internal helpers):
     * calls to them are followed. NULL: a call is followed only when its
     * target is a label of the same section (ELF-mode listings). Any other
     * call leaves the kernel and makes it uncertain. */
    const uint32_t *call_targets;
    uint32_t n_call_targets;
    /* Those of call_targets named as CUDA's internal unsigned 64-bit
     * division (`$__internal_N_$__cuda_sm20_div_u64`): a call to one of
     * them, paired with the inline 32-bit division it is chosen against,
     * gives a quotient (CuPy's grid-stride loop trip counts). NULL with
     * call_targets NULL: the listing's function labels say. */
    const uint32_t *div_u64_targets;
    uint32_t n_div_u64_targets;
    /* Offsets in constant bank 4 that the cubin's relocations fill with the
     * address of a system function that writes no memory the program sees
     * (__assertfail, vprintf): an indirect call through such a word (how
     * CUDA_KERNEL_ASSERT and printf are called) clobbers registers but does
     * not make the kernel uncertain. */
    const uint32_t *benign_c4;
    uint32_t n_benign_c4;
    /* 64-bit words of constant bank 4 that the cubin's relocations fill
     * with the address of a symbol of the module (a __device__ or
     * __constant__ variable; sinf's table __cudart_i2opi_f), and the
     * symbol's name: an address read from there is that symbol's. */
    const uint32_t *c4_symbol_offsets;
    const char *const *c4_symbol_names;
    uint32_t n_c4_symbols;
    /* __launch_bounds__ / __maxnreg__ thread limits (EIATTR_MAX_THREADS or
     * EIATTR_REQNTID), 0 when unknown: they bound tid, which lets the
     * analysis read `ctaid*128 | tid` as an add, as ptxas does. */
    uint32_t max_ntid[3];
} sg_sass_target_t;

/* Default parameter base of an arch (0x160 below sm_90, 0x210 sm_90,
 * 0x380 from sm_100), 0 for an arch it does not know. */
uint32_t sg_sass_default_param_base(uint32_t arch);

/* Analyse instructions [first, first+count) of a listing as one kernel whose
 * pcs start at pc0 (0 for ELF listings, the kernel's offset in a raw one).
 * out->name is set from name (may be NULL). Always fills out; returns 0, or
 * SG_ENOMEM / SG_EINVAL (then out->status says why too). */
int sg_sass_analyze(const sg_sass_listing_t *l, uint32_t first, uint32_t count, uint32_t pc0,
                    const char *name, const sg_sass_target_t *target, sg_sass_kernel_t *out);

/* Parse an ELF-mode listing and analyse its kernel `name` (the only or
 * first function when name is NULL): for tests and tools on saved text. */
int sg_sass_analyze_text(const char *text, size_t len, const char *name,
                         const sg_sass_target_t *target, sg_sass_kernel_t *out);

/* ---- the disassembler ---------------------------------------------------- */

/* Find nvdisasm: $SGCAP_NVDISASM (used as given, even when it does not
 * exist: a test's way to say "missing"), then PATH, then $CUDA_HOME/bin,
 * /usr/local/cuda/bin, then nvidia/cu13/bin and nvidia/cuda_nvdisasm/bin
 * under the site-packages of the python3 interpreters on PATH and of
 * ~/.local. 0 with the path, SG_ENOENT when none. The search runs once per
 * process unless SGCAP_NVDISASM is set (it is re-read on each call). */
int sg_sass_find_disassembler(char *path, size_t len);

typedef struct {
    const char *nvdisasm; /* NULL: sg_sass_find_disassembler */
    uint32_t timeout_ms;  /* per nvdisasm run; 0: 60000 */
    size_t max_output;    /* cap on its stdout; 0: 512 MiB */
    /* nvdisasm runs side by side for one batch (each on a slice of the
     * kernels), and threads analysing its kernels; 0: the CPUs, up to 8
     * (nvdisasm: one per 128 KiB of code at least, 256 KiB of distinct
     * instructions) */
    uint32_t jobs;
    /* Disassemble the batch's code as it is instead of each distinct
     * instruction once (sass_uniq.h); the facts are the same (tested), the
     * cost is several times higher: for tests and benchmarks. */
    bool whole_code;
    /* A directory where what nvdisasm printed for each distinct instruction
     * is kept across runs (one file per nvdisasm binary and arch; see
     * sass_uniq.h): instructions found there are not disassembled again.
     * NULL: none (the library never writes a cache unless asked; the CLI
     * asks for sg_sass_default_cache_dir). */
    const char *cache_dir;
    /* Filled when not NULL: what the disassembler was given. */
    struct sg_sass_stats *stats;
} sg_sass_options_t;

typedef struct sg_sass_stats {
    uint64_t instructions; /* in the kernels of the batches */
    uint64_t disassembled; /* instructions given to nvdisasm */
    uint64_t cached;       /* distinct instructions the cache directory knew */
    uint32_t runs;         /* nvdisasm processes started */
} sg_sass_stats_t;

/* The cache directory for cache_dir: $SGCAP_CACHE_DIR ("" or "off": none),
 * else $XDG_CACHE_HOME/sgcap, else $HOME/.cache/sgcap. 0 with the path,
 * SG_ENOENT when there is none. */
int sg_sass_default_cache_dir(char *path, size_t len);

/* Run nvdisasm on raw SASS bytes (nvdisasm -b SM<arch>[a]): the listing text
 * is malloc'd, NUL-terminated. Returns 0, SG_ENOENT (no disassembler),
 * SG_EFORMAT (it failed: the first line of its stderr is in err), SG_ELIMIT
 * (timeout or output cap), SG_EIO. */
int sg_sass_disassemble(const sg_sass_options_t *opt, uint32_t arch, bool arch_specific,
                        const uint8_t *code, size_t n, char **text, size_t *text_len,
                        char *err, size_t errlen);

/* ---- cubins --------------------------------------------------------------- */

/* Analyse kernels of one cubin with a single nvdisasm run (its start-up
 * dominates: batch the kernels of an image). out[i] gets kernel names[i]
 * (a status other than ANALYSED when it cannot be analysed). Returns 0, or
 * SG_ENOMEM / SG_EINVAL; per-kernel failures are in out[i]. */
int sg_sass_analyze_cubin(const uint8_t *cubin, size_t n, const char *const *names,
                          uint32_t n_names, const sg_sass_options_t *opt, sg_sass_kernel_t *out);

/* One kernel of one cubin, for a batch over several cubins. */
typedef struct {
    const uint8_t *cubin;
    size_t n;
    const char *name;
} sg_sass_request_t;

/* Analyse kernels of any number of cubins with one nvdisasm batch per arch
 * (the .text sections of every kernel asked for, concatenated): nvdisasm's
 * start-up (~0.4 s) is paid once for all the images of a graph, not once per
 * image. out[i] gets req[i]; the facts are the same as one cubin at a time
 * (tested). Returns 0, or SG_ENOMEM / SG_EINVAL. */
int sg_sass_analyze_requests(const sg_sass_request_t *req, uint32_t n_req,
                             const sg_sass_options_t *opt, sg_sass_kernel_t *out);

/* The fatbin entry the driver would load on sm_<device_arch>: an ELF entry
 * of exactly that arch, else the highest same-major arch below it (not an
 * arch-specific 'a' build of another arch). SG_ENOENT when none. */
int sg_sass_pick_cubin(const sg_fatbin_t *fb, uint32_t device_arch, uint32_t *entry);

/* ---- cache ------------------------------------------------------------------ */

typedef struct sg_sass_cache sg_sass_cache_t;

sg_sass_cache_t *sg_sass_cache_new(const sg_sass_options_t *opt);
void sg_sass_cache_free(sg_sass_cache_t *c);
/* Analyse whichever of names[] are not cached yet for this cubin, in one
 * nvdisasm run. 0 or SG_ENOMEM / SG_EINVAL. */
int sg_sass_cache_prefetch(sg_sass_cache_t *c, const uint8_t *cubin, size_t n,
                           const char *const *names, uint32_t n_names);
/* The same over several cubins: one batch per arch for whatever is not
 * cached yet (what a bundle's SASS-only kernel nodes need, all images at
 * once). */
int sg_sass_cache_prefetch_requests(sg_sass_cache_t *c, const sg_sass_request_t *req,
                                    uint32_t n_req);
/* The facts for one kernel, keyed by (cubin content hash, name); analysed on
 * a miss. The result stays owned by the cache until it is freed. */
int sg_sass_cache_get(sg_sass_cache_t *c, const uint8_t *cubin, size_t n, const char *name,
                      const sg_sass_kernel_t **out);
/* Number of nvdisasm runs and of kernels analysed so far. */
void sg_sass_cache_stats(const sg_sass_cache_t *c, uint32_t *runs, uint32_t *kernels);

/* ---- ranges ------------------------------------------------------------------ */

typedef struct {
    uint64_t lo, hi; /* bytes [lo, hi); lo == hi: no thread accesses */
    bool exact;      /* some thread touches lo and some touches hi-1 */
    bool dense;      /* every byte in [lo, hi) is touched */
} sg_sass_extent_t;

/* The bytes an access touches over a launch, from the parameter bytes and
 * the geometry. SG_ENOENT when the access's base or index is unknown, or
 * its parameter words lie outside params. Conditions on one thread or
 * block index (PyTorch's `remaining >= block_work`) cap that index; those
 * whose left side the index is a positive multiple of (`i < n`) cap the
 * index; constant ones are evaluated; any other makes it an upper bound. */
int sg_sass_access_extent(const sg_sass_access_t *a, const uint8_t *params, size_t params_len,
                          const uint32_t grid[3], const uint32_t block[3], sg_sass_extent_t *out);

/* One line for humans: "STG.E.128 store 16B P[0x8] + 16*(ctaid.x*ntid.x+tid.x) if
 * ctaid.x*ntid.x+tid.x < P[0x10]" or "... unknown: address loaded from memory". */
void sg_sass_access_format(const sg_sass_access_t *a, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_SASS_H */
