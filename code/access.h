/* access.h: what a kernel reads and writes, from its code.
 *
 * Two steps:
 *   1. sg_access_analyze_ptx (per distinct kernel, cacheable by image hash +
 *      kernel name + parameter layout, see sg_access_key): every global
 *      memory access site of the kernel, classified load / store / atomic,
 *      attributed to the parameter word its address comes from (or the
 *      offset inside a by-value struct parameter), with the byte offset from
 *      that pointer as a polynomial in %tid, %ntid, %ctaid, %nctaid,
 *      parameter words, loop iteration counts and a few derived values, and
 *      the conditions (guards, loop bounds) under which it executes — or
 *      "unknown" with the reason. Plus the kernel-level facts fusion needs
 *      (sg_access_kernel_t.flags: exit, textures, async proxy, calls, ...).
 *      The SASS path (another module) fills the same structures with
 *      source = SG_ACCESS_SOURCE_SASS (see sg_access_site_gid1d).
 *   2. sg_access_eval (per kernel node): with the captured parameter bytes,
 *      the launch geometry and the bundle's buffers, exact byte ranges per
 *      access site: [lo, hi) over the whole grid, whether every byte of it is
 *      touched, the buffer it falls in, the footprint of one thread and of
 *      one CTA, the linear form in the thread/CTA ids, and a per-node
 *      verdict "every access known" with the reasons when not.
 *
 * Results are plain data (arrays of structs of integers and short strings)
 * so that they can be stored in a bundle as they are. An expression atom is
 * one uint32 (kind << 24 | argument); see SG_ACCESS_ATOM_*.
 *
 * Soundness: a range is never smaller than what the code can touch (under
 * the checks listed with each site, verified at evaluation). "dense" and
 * "exact" are claimed only when proven: the site runs for exactly the points
 * its conditions describe, every condition was used, and the points tile
 * the range. Nothing here prints, exits or aborts.
 */
#ifndef SGCAP_CODE_ACCESS_H
#define SGCAP_CODE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/ptx.h"
#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- expressions ----------------------------------------------------------------- */

typedef uint32_t sg_access_atom_t;

enum {
    SG_ACCESS_ATOM_SREG = 1,   /* arg 0..11: tid.x,y,z, ntid.x,y,z, ctaid.x,y,z, nctaid.x,y,z */
    SG_ACCESS_ATOM_PARAM = 2,  /* a parameter word: arg = offset | log2(width) << 16 | signed << 18 */
    SG_ACCESS_ATOM_LOOP = 3,   /* iteration count of loop arg (0 on the first pass through its head) */
    SG_ACCESS_ATOM_UNIFORM = 4,/* uniform value uexprs[arg], computed at evaluation */
    SG_ACCESS_ATOM_OPAQUE = 5, /* a per-thread value known only by its bounds: opaques[arg] */
};
enum {
    SG_ACCESS_TID_X = 0, SG_ACCESS_TID_Y, SG_ACCESS_TID_Z,
    SG_ACCESS_NTID_X, SG_ACCESS_NTID_Y, SG_ACCESS_NTID_Z,
    SG_ACCESS_CTAID_X, SG_ACCESS_CTAID_Y, SG_ACCESS_CTAID_Z,
    SG_ACCESS_NCTAID_X, SG_ACCESS_NCTAID_Y, SG_ACCESS_NCTAID_Z,
};

#define SG_ACCESS_ATOM(kind, arg) ((sg_access_atom_t)(((uint32_t)(kind) << 24) | ((arg) & 0xffffffu)))
#define SG_ACCESS_ATOM_KIND(a) ((uint32_t)(a) >> 24)
#define SG_ACCESS_ATOM_ARG(a) ((uint32_t)(a) & 0xffffffu)
/* A parameter word at byte `off` of `width` bytes (1, 2, 4, 8), signed or not. */
sg_access_atom_t sg_access_param_atom(uint32_t off, uint32_t width, bool is_signed);
void sg_access_param_atom_decode(sg_access_atom_t a, uint32_t *off, uint32_t *width, bool *is_signed);

#define SG_ACCESS_MAX_TERMS 12
#define SG_ACCESS_MAX_DEGREE 4

/* coef * atoms[0] * ... (atoms ascending, unused slots 0) */
typedef struct {
    int64_t coef;
    sg_access_atom_t atoms[SG_ACCESS_MAX_DEGREE];
} sg_access_term_t;

/* c + sum of terms; terms sorted, no zero coefficient, unused terms zero. */
typedef struct {
    int64_t c;
    uint32_t n;
    sg_access_term_t t[SG_ACCESS_MAX_TERMS];
} sg_access_expr_t;

/* "4*ctaid.x*ntid.x + 4*tid.x + 8", "p[24:u64]*tid.x", "L0", "U3", "O1". Returns
 * the length needed (snprintf-style). */
int sg_access_expr_format(const sg_access_expr_t *e, char *buf, size_t n);

/* A condition: e REL 0. Facts use LT..NE; checks (what must hold for the
 * polynomial arithmetic to equal the machine's, i.e. no 32-bit wrap) use the
 * FITS kinds.
 *
 * A fact is true only if its own checks hold (the comparison it comes from
 * was done on 32-bit values): evaluation verifies a fact's checks before it
 * uses the fact, on boxes narrowed by facts already verified. A check with
 * from_iter = L+1 is a loop step check: it is verified one iteration ahead
 * (K_L + 1) under the loop's own bound, which is the inductive argument that
 * the loop's comparison never wraps. */
typedef enum {
    SG_ACCESS_LT = 0,   /* e < 0 */
    SG_ACCESS_LE,       /* e <= 0 */
    SG_ACCESS_EQ,       /* e == 0 */
    SG_ACCESS_NE,       /* e != 0 */
    SG_ACCESS_FITS_U32, /* 0 <= e < 2^32 */
    SG_ACCESS_FITS_S32, /* -2^31 <= e < 2^31 */
    SG_ACCESS_FITS_U64, /* 0 <= e < 2^63 */
    SG_ACCESS_REL_COUNT
} sg_access_rel_t;

typedef struct {
    sg_access_expr_t e;
    uint8_t rel;        /* sg_access_rel_t */
    uint16_t from_iter; /* facts: 0 always, L+1 only from the second pass through loop L's head;
                           checks: L+1 for a step check of loop L */
    uint16_t n_checks;  /* facts: their checks, kernel->conds[first_check ..] */
    uint32_t first_check;
} sg_access_cond_t;

int sg_access_cond_format(const sg_access_cond_t *c, char *buf, size_t n);

/* ---- derived values, loops, opaque values -------------------------------------------- */

typedef enum {
    SG_ACCESS_U_AND = 0, SG_ACCESS_U_OR, SG_ACCESS_U_XOR, SG_ACCESS_U_SHL, SG_ACCESS_U_SHR,
    SG_ACCESS_U_DIV, SG_ACCESS_U_REM, SG_ACCESS_U_MIN, SG_ACCESS_U_MAX, SG_ACCESS_U_MULHI,
    SG_ACCESS_U_TRIP, /* the trip count of loop a (a is a loop index, not an expression) */
    SG_ACCESS_U_SELECT, /* conds[cond] holds ? exprs[a] : exprs[b] (a uniform if/else) */
    SG_ACCESS_U_COUNT
} sg_access_uop_t;

/* A value every thread of the launch computes the same way from parameters
 * and the geometry: op(exprs[a], exprs[b]) in `bits`-bit arithmetic. */
typedef struct {
    uint8_t op;          /* sg_access_uop_t */
    uint8_t bits;        /* 32 or 64 */
    bool is_signed;
    uint32_t a, b;       /* indices into kernel->exprs (TRIP: a = loop index) */
    uint32_t cond;       /* SELECT: index into kernel->conds */
} sg_access_uexpr_t;

/* A loop (natural loop of the PTX CFG). Its iteration count K (atom LOOP)
 * starts at 0; when `trip_cond` is set, the head is reached for iteration
 * K >= 1 exactly when conds[trip_cond] holds for K, which gives the trip
 * count at evaluation if the condition uses only K and uniform values. */
typedef struct {
    uint32_t header_line;
    uint32_t parent;     /* enclosing loop or SG_NONE */
    uint32_t trip_cond;  /* index into conds or SG_NONE */
    bool trip_uniform;   /* trip_cond uses only this loop's K and uniform atoms */
} sg_access_loop_t;

typedef struct {
    int64_t lo, hi;      /* inclusive bounds */
    uint32_t line;       /* where the analysis gave up on its exact value */
    char what[32];       /* "and.b32", "rem.u32", ... */
} sg_access_opaque_t;

/* ---- access sites ------------------------------------------------------------------ */

typedef enum {
    SG_ACCESS_LOAD = 1,
    SG_ACCESS_STORE = 2,
    SG_ACCESS_ATOMIC = 3, /* read-modify-write */
    SG_ACCESS_CALL = 4,   /* a pointer passed to a call: may read and write */
} sg_access_kind_t;

typedef enum {
    SG_ACCESS_BASE_NONE = 0, /* unknown base */
    SG_ACCESS_BASE_PARAM,    /* a pointer word in the parameter buffer */
    SG_ACCESS_BASE_SYMBOL,   /* a module-scope .global/.const variable */
} sg_access_base_t;

typedef enum {
    SG_ACCESS_OK = 0,
    SG_ACCESS_R_LOADED_ADDRESS,  /* the address was loaded from memory */
    SG_ACCESS_R_DATA_DEPENDENT,  /* the offset depends on loaded data */
    SG_ACCESS_R_CALL,            /* pointer passed to a call the analysis does not follow */
    SG_ACCESS_R_UNSUPPORTED,     /* an instruction the analysis does not model */
    SG_ACCESS_R_NONAFFINE,       /* arithmetic outside the polynomial domain (div, rem, bit ops) */
    SG_ACCESS_R_LOOP,            /* changes non-affinely across loop iterations, or used after its loop */
    SG_ACCESS_R_MERGE,           /* different values on different paths */
    SG_ACCESS_R_TOO_COMPLEX,     /* beyond the expression or analysis limits */
    SG_ACCESS_R_NO_BASE,         /* not a parameter pointer plus an offset */
    SG_ACCESS_R_TEXTURE,         /* texture/surface/tensor-map access */
    SG_ACCESS_R_PARSE,           /* the PTX could not be read */
    SG_ACCESS_R_NO_CODE,         /* no PTX (or SASS) for the kernel */
    SG_ACCESS_R_CONTROL_FLOW,    /* irreducible control flow */
    /* evaluation */
    SG_ACCESS_R_UNBOUNDED,       /* a loop count or value has no bound */
    SG_ACCESS_R_WRAP,            /* 32-bit index arithmetic may wrap for this launch */
    SG_ACCESS_R_PARAMS,          /* the captured parameters do not match the code's layout */
    /* the SASS path */
    SG_ACCESS_R_NO_DISASSEMBLER, /* no nvdisasm to read a SASS-only kernel with */
    SG_ACCESS_R_DISASSEMBLER,    /* nvdisasm failed on the cubin, or it is malformed */
    SG_ACCESS_R_COUNT
} sg_access_reason_t;

const char *sg_access_reason_name(sg_access_reason_t r); /* "address loaded from memory" */

typedef struct {
    uint8_t kind;            /* sg_access_kind_t */
    uint8_t base_kind;       /* sg_access_base_t */
    uint8_t reason;          /* sg_access_reason_t: SG_ACCESS_OK when the offset is known */
    bool generic;            /* generic addressing (no .global on the instruction) */
    bool exact;              /* runs for exactly the points its conditions describe */
    bool thread_local;       /* offset depends only on the thread's ids and uniform values */
    bool vector;             /* a vector access (ld.v4 ...) */
    uint16_t width;          /* bytes per execution, 0 when unknown */
    uint32_t stmt;           /* PTX statement index in the kernel (SASS: instruction index) */
    uint32_t line;           /* PTX line (SASS: pc) */
    uint32_t base_param;     /* BASE_PARAM: byte offset of the pointer in the parameter buffer */
    uint32_t param_index;    /* BASE_PARAM: the parameter holding it */
    uint32_t param_inner;    /* BASE_PARAM: offset inside that parameter (by-value structs) */
    char base_symbol[64];    /* BASE_SYMBOL: the variable */
    sg_access_expr_t offset; /* bytes from the base; meaningful when reason == OK */
    uint32_t first_cond, n_conds;   /* facts that hold whenever it runs (kernel->conds) */
    uint32_t first_check, n_checks; /* the offset's own checks (kernel->conds) */
    char detail[96];         /* "line 42: ld.global.u64 %rd10 result used as address" */
} sg_access_site_t;

/* ---- kernel facts (fusion's refusal list; the fusion pass decides) ------------------ */

typedef enum {
    SG_ACCESS_F_EXIT = 0,      /* exit */
    SG_ACCESS_F_TRAP,          /* trap, brkpt */
    SG_ACCESS_F_TEXTURE,       /* tex, tld4, txq */
    SG_ACCESS_F_SURFACE,       /* suld, sust, sured, suq */
    SG_ACCESS_F_ASYNC_PROXY,   /* cp.async.bulk*, cp.reduce.async.bulk, st.async, red.async,
                                  fence.proxy.async, tensormap.*, multimem, wgmma, tcgen05 */
    SG_ACCESS_F_CP_ASYNC,      /* cp.async (non-bulk) */
    SG_ACCESS_F_MBARRIER,      /* mbarrier.* */
    SG_ACCESS_F_MODULE_GLOBAL, /* refers to a module-scope .global or .const variable */
    SG_ACCESS_F_ENVREG,        /* reads %envreg* (driver environment: grid sync, ...) */
    SG_ACCESS_F_CALL,          /* calls a function defined in the module */
    SG_ACCESS_F_EXTERN_CALL,   /* calls an extern function other than the ones below */
    SG_ACCESS_F_INDIRECT_CALL, /* calls through a register */
    SG_ACCESS_F_RUNTIME_CALL,  /* vprintf, malloc, free, __assertfail */
    SG_ACCESS_F_DEVICE_LAUNCH, /* cudaLaunchDevice*, cudaGetParameterBuffer* */
    SG_ACCESS_F_DYN_SMEM_SIZE, /* %dynamic_smem_size, %total_smem_size, %aggr_smem_size */
    SG_ACCESS_F_SHARED,        /* static .shared variables */
    SG_ACCESS_F_DYN_SHARED,    /* .extern .shared (dynamic shared memory) */
    SG_ACCESS_F_BARRIER,       /* bar.*, barrier.* */
    SG_ACCESS_F_EARLY_RETURN,  /* a thread can return without reaching a barrier others reach:
                                  some barrier's block does not post-dominate the entry */
    SG_ACCESS_F_PARAM_ADDRESS, /* takes a parameter's address */
    SG_ACCESS_F_LDG_NC,        /* ld.global.nc */
    SG_ACCESS_F_GRIDDEP,       /* griddepcontrol.* */
    SG_ACCESS_F_LOCAL,         /* local memory (a stack frame) */
    SG_ACCESS_F_ATOMIC,        /* atom/red on global or generic memory */
    SG_ACCESS_F_CLUSTER,       /* cluster special registers, .shared::cluster, cluster directives */
    SG_ACCESS_F_CLOCK,         /* reads clocks or timers */
    SG_ACCESS_F_SETMAXNREG,
    SG_ACCESS_F_WARP,          /* warp-level or lane-dependent: shfl, vote, match, redux,
                                  activemask, elect, wmma/mma/ldmatrix/stmatrix, %laneid,
                                  %warpid, %nwarpid, %smid, %nsmid, %gridid, %lanemask_* */
    SG_ACCESS_F_DYN_STACK,     /* alloca, stacksave, stackrestore */
    SG_ACCESS_F_INDIRECT_BRANCH, /* brx.idx */
    SG_ACCESS_F_COUNT
} sg_access_flag_t;

const char *sg_access_flag_name(sg_access_flag_t f); /* "exit", "texture", ... */

typedef enum { SG_ACCESS_SOURCE_PTX = 0, SG_ACCESS_SOURCE_SASS } sg_access_source_t;

/* The analysis of one kernel. Owns its arrays; free with sg_access_kernel_free. */
typedef struct {
    char *kernel;                /* mangled name */
    uint8_t source;              /* sg_access_source_t */
    int status;                  /* 0; SG_EFORMAT (code unreadable), SG_ENOENT (kernel not in it) */
    uint8_t reason;              /* kernel-level reason when status != 0 or the analysis gave up */
    char detail[160];
    uint32_t n_params;
    uint32_t *param_offsets, *param_sizes; /* the code's parameter layout */
    uint32_t params_size;
    uint32_t reqntid[3], maxntid[3];       /* 0 when not declared */
    uint64_t static_shared_bytes;
    uint64_t flags;                        /* 1 << sg_access_flag_t */
    uint32_t flag_line[SG_ACCESS_F_COUNT]; /* first line showing each flag, 0 if none */
    uint32_t n_sites;
    sg_access_site_t *sites;
    uint32_t n_conds;
    sg_access_cond_t *conds;
    uint32_t n_exprs;
    sg_access_expr_t *exprs;               /* operands of uexprs */
    uint32_t n_uexprs;
    sg_access_uexpr_t *uexprs;
    uint32_t n_loops;
    sg_access_loop_t *loops;
    uint32_t n_opaques;
    sg_access_opaque_t *opaques;
    /* What replay relocation needs (sg_access_kernel_addresses): the
     * parameter words the code uses as addresses, ascending (every site's
     * base; for SASS also the candidates of an address selected between
     * pointers), and whether every memory access's address starts from one
     * of them, a module variable or a pointer loaded from memory, with
     * nothing escaping the analysis: then rewriting exactly those words
     * relocates every address the launch uses. */
    uint32_t n_address_words;
    uint32_t *address_words;
    bool addresses_complete;
} sg_access_kernel_t;

/* Analyze entry `kernel` of a parsed module. Returns 0 (also when the
 * analysis found unknown accesses: see the sites), SG_ENOENT when the module
 * has no such entry (out->status too), SG_ENOMEM. out is reset first. */
int sg_access_analyze_ptx(const sg_ptx_module_t *m, const char *kernel, sg_access_kernel_t *out);
/* Parse `ptx` first; a parse error gives status SG_EFORMAT, reason PARSE and
 * the parser's message in detail (and returns 0: the result says why). */
int sg_access_analyze_text(const char *ptx, size_t len, const char *kernel,
                           sg_access_kernel_t *out);
void sg_access_kernel_free(sg_access_kernel_t *k);

/* Mark in mask (size bytes, the parameter buffer) every byte whose value
 * the analysis of k depends on: the pointer word of each site with a
 * parameter base, and every parameter word in its expressions (offsets,
 * facts and their checks, uniform values, loop conditions). Evaluating k
 * for parameters that differ only outside the mask gives the same ranges:
 * what a fused stage's new parameters may change (the in-app optimizer's
 * exec updates). Words past size are ignored. */
void sg_access_param_mask(const sg_access_kernel_t *k, uint8_t *mask, size_t size);

/* Cache key of an analysis: xxh64 over image hash, kernel name and layout,
 * as 16 lowercase hex digits. */
void sg_access_key(const char *image_hash, const char *kernel, uint32_t n_params,
                   const uint32_t *offsets, const uint32_t *sizes, char out[17]);

/* A cache of analyses by key (uthash; NULL-safe). get returns NULL when absent. */
typedef struct sg_access_cache sg_access_cache_t;
sg_access_cache_t *sg_access_cache_create(void);
void sg_access_cache_destroy(sg_access_cache_t *c);
const sg_access_kernel_t *sg_access_cache_get(const sg_access_cache_t *c, const char key[17]);
/* Takes ownership of *k (which is zeroed) on success. */
int sg_access_cache_put(sg_access_cache_t *c, const char key[17], sg_access_kernel_t *k);

/* Fill address_words and addresses_complete from the sites (and any words
 * already listed): sg_access_analyze_ptx and sg_access_from_sass call it.
 * 0 or SG_ENOMEM. */
int sg_access_kernel_addresses(sg_access_kernel_t *k);

/* The SASS path's facts (code/sass.h) as a result of this kind: one site
 * per SASS access (its pointer word, its affine index as the offset, its
 * conditions as facts with the wrap checks of 32-bit comparisons and of a
 * 32-bit index), unknown with the SASS reason where it had none; a kernel
 * nvdisasm could not read gets status SG_EUNSUPPORTED and the reason. The
 * parameter layout is the launch's (the cubin does not give one). */
struct sg_sass_kernel;
int sg_access_from_sass(const struct sg_sass_kernel *sk, uint32_t n_params,
                        const uint32_t *offsets, const uint32_t *sizes, uint32_t params_size,
                        sg_access_kernel_t *out);

/* For the SASS path: append a site (copied) with its facts (conds; fact i
 * owns the next conds[i].n_checks entries of cond_checks) and the offset's
 * checks. And the plain `blockIdx*blockDim+threadIdx` pattern: offset
 * width*(ctaid.x*ntid.x + tid.x), guarded by gid < bound (a parameter word at
 * bound_off of bound_width bytes; bound_width 0 for none). A bound of 4 bytes
 * or less means 32-bit index arithmetic, which gets its wrap checks. */
int sg_access_kernel_add_site(sg_access_kernel_t *k, const sg_access_site_t *site,
                              const sg_access_cond_t *conds, uint32_t n_conds,
                              const sg_access_cond_t *cond_checks,
                              const sg_access_cond_t *checks, uint32_t n_checks);
int sg_access_site_gid1d(sg_access_kernel_t *k, sg_access_kind_t kind, uint32_t ptr_off,
                         uint32_t width, uint32_t bound_off, uint32_t bound_width,
                         bool bound_signed);

/* ---- evaluation per kernel node ------------------------------------------------------- */

typedef enum {
    SG_ACCESS_ST_KNOWN = 0, /* lo/hi hold every byte it can touch */
    SG_ACCESS_ST_NEVER,     /* its conditions never hold for this launch */
    SG_ACCESS_ST_UNKNOWN,   /* see reason */
} sg_access_status_t;

typedef struct {
    uint32_t site;           /* index into kernel->sites */
    uint8_t status;          /* sg_access_status_t */
    uint8_t kind;            /* copied from the site */
    uint8_t reason;          /* UNKNOWN: why */
    bool dense;              /* every byte of [lo, hi) is touched */
    bool exact;              /* [lo, hi) is the tight hull (first and last byte are touched) */
    bool clipped;            /* the bound the code gives was wider than the base's buffer: cut to it */
    bool linear;             /* offset = sum coef[i] * (tid.x,y,z, ctaid.x,y,z)[i] + c0 */
    uint64_t base;           /* the pointer read from the parameters (or the symbol, 0);
                                UNKNOWN sites keep it when their pointer word is known */
    uint32_t buffer;         /* buffer index holding the range (UNKNOWN: holding base),
                                SG_NONE when none does */
    uint64_t lo, hi;         /* absolute addresses, [lo, hi) */
    uint64_t thread_lo, thread_hi; /* thread (0,0,0) of CTA (0,0,0), over all its iterations */
    uint64_t cta_lo, cta_hi;       /* CTA (0,0,0) */
    int64_t coef[6];
    int64_t c0;
    /* affine in the ids, plus other variables: offset = sum coef[i] * ids[i] + c0 + R,
       R a sum of terms each of degree 1 in a loop count or an opaque value (an
       unrolled grid-stride loop after its remainder loop), rest_gcd the gcd of R's
       coefficients (0: no R, then linear is set too). loop/loop_coef: R is the one
       term loop_coef * K of loop `loop`; SG_NONE and 0 otherwise. coef and c0 are
       set whenever affine_ids is. */
    bool affine_ids;
    int64_t rest_gcd;
    uint32_t loop;
    int64_t loop_coef;
    char detail[96];
} sg_access_range_t;

typedef struct {
    bool all_known;          /* every site KNOWN or NEVER, kernel analysed */
    uint32_t n_unknown;
    char reason[160];        /* the first reason when not all known */
    uint32_t n_ranges;
    sg_access_range_t *ranges; /* one per site, in site order */
} sg_access_eval_t;

/* Evaluate k for one launch: node's parameter bytes and geometry, the
 * graph's buffer table. Returns 0, SG_ENOMEM, SG_EINVAL (bad arguments). */
int sg_access_eval(const sg_access_kernel_t *k, const sg_kernel_t *node,
                   const sg_buffer_t *buffers, uint32_t n_buffers, sg_access_eval_t *out);
void sg_access_eval_free(sg_access_eval_t *e);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_ACCESS_H */
