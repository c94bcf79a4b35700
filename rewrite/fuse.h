/* fuse.h: fusion of same-stream kernel chains into one generated kernel
 * (docs/FUSION.md). Three steps, each usable on its own (the `fuse` pass
 * strings them together; the in-app optimizer will too):
 *
 *   1. sg_fz_stage_analyze: one kernel node's PTX entry with its captured
 *      parameter bytes and launch geometry as concrete values. Legality is
 *      the access analysis's (code/access.h), evaluated for the launch:
 *      nothing on the refusal list (its kernel flags: exit, calls,
 *      texture/surface, async proxy, warp-level and lane-dependent
 *      operations, atomics, taken parameter addresses, skippable barriers,
 *      ...), every global access affine in the thread ids based on one
 *      parameter word (a function of the original thread's global linear
 *      index t = ctaid.x*ntid.x + tid.x, or of its CTA: tier 2; plus whole
 *      grid strides in a grid-stride loop), the t-interval each site can
 *      execute for and whether it runs for all of it. The stage keeps the
 *      lifter's own view of the PTX: each site's statement, what it can
 *      virtualize and rewrite.
 *   2. sg_fz_plan: the stages of a run together: memory "slots" (one per
 *      distinct address function), the cross-stage rule (two slots that
 *      overlap where at least one is written must be the same slot, i.e.
 *      the same address for the same element; otherwise the run is split
 *      before the later stage), which slots live in registers (lifted) and
 *      which stay real memory accesses, preloads that are provably inside
 *      their buffer, and write-backs that are provably dead.
 *   3. sg_fz_generate + sg_fz_compile: CUDA C for NVRTC in which each stage
 *      body stays verbatim as an inline PTX block per element (registers
 *      renamed into a scope, labels made unique, `ret` a branch to the
 *      block's end) with its special registers virtualized: the fused
 *      thread computes, for each element e it handles, the tid/ctaid of the
 *      original thread of e and feeds those in. Lifted loads become moves
 *      from values the wrapper loaded with 16-byte accesses, lifted stores
 *      moves into a register plus a "stored" flag the wrapper writes back
 *      (16-byte stores when every lane stored), ld.param a move from the
 *      wrapper's copy of that stage's parameters. NVRTC compiles it to PTX
 *      and a cubin; ptxas reports registers and spills.
 *
 * Nothing here prints or exits; every refusal comes back as text in the
 * result ("stage 3 (st_sin): ...").
 */
#ifndef SGCAP_REWRITE_FUSE_H
#define SGCAP_REWRITE_FUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/access.h"
#include "code/ptx.h"
#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_FZ_REASON 240

/* A bound on t as the wrapper evaluates it at run time: the value of a
 * parameter word of the stage plus k, or the constant k. */
typedef struct {
    uint32_t param_off; /* byte offset in the stage's parameter buffer, SG_NONE: constant */
    uint32_t width;     /* bytes of that word (4 or 8) */
    bool is_signed;
    int64_t k;
} sg_fz_bound_t;

/* One global memory access of a stage. */
typedef struct {
    uint32_t stmt;        /* statement index in the entry's body */
    bool store;
    bool lowerable;       /* scalar, unguarded, 4 or 8 bytes: may live in a register */
    bool nc;              /* ld.global.nc */
    uint32_t width;       /* bytes accessed */
    sg_ptx_type_t type;   /* instruction type */
    uint64_t addr0;       /* concrete address for t = 0 */
    int64_t stride;       /* bytes per unit of t (per tid.x when !t_affine) */
    int64_t cta_stride;   /* bytes per unit of ctaid.x */
    bool t_affine;        /* cta_stride == stride * ntid: a function of t alone */
    uint32_t base_param;  /* parameter word (byte offset) the base comes from, SG_NONE if none */
    int64_t base_k;       /* address(t) = word + base_k + stride * t */
    uint64_t lo, hi;      /* the site may execute only for t in [lo, hi) */
    bool must;            /* ... and does execute for every t in [lo, hi) */
    sg_fz_bound_t hi_rt;  /* hi as the wrapper computes it */
    uint32_t value_reg;   /* stores: the register stored (SG_PTX_NONE for an immediate) */
    bool gs;              /* in a grid-stride loop: address(t, m) = addr0 + stride * (t + m * S)
                             for iterations m >= 0, S = ntid * nctaid (period = stride * S) */
    int64_t period;
    uint32_t rn_stmt;     /* stores: the contractable multiply that defines the value
                             (forwarded through a rounded copy), SG_NONE if none */
} sg_fz_site_t;

typedef struct {
    const sg_ptx_module_t *mod; /* not owned */
    const sg_ptx_func_t *func;  /* the stage's entry */
    const sg_node_t *node;      /* not owned */
    uint32_t ntid, nctaid;      /* x dimensions (y and z are 1) */
    uint64_t threads;           /* ntid * nctaid: the original threads, t in [0, threads) */
    uint32_t n_sites;
    sg_fz_site_t *sites;
    uint32_t n_module_vars;     /* module variables the body names (read-only tables) */
    uint32_t *module_vars;      /* indices into mod->vars */
    bool cta;                   /* needs the CTA: shared memory, barriers, or accesses affine
                                   in tid/ctaid but not in t (tier 2) */
    bool ok;                    /* fusable (tier 1, or tier 2 when cta) */
    char reason[SG_FZ_REASON];  /* when not */
} sg_fz_stage_t;

/* Analyze `node` (a kernel node) whose PTX module is `mod`. Returns 0 with
 * st->ok false and st->reason set for a refusal, SG_ENOMEM, SG_EINVAL. */
int sg_fz_stage_analyze(const sg_ptx_module_t *mod, const sg_node_t *node, sg_fz_stage_t *st);
/* The same with the kernel's access analysis already made (code/access.h,
 * of the same module and entry; NULL: made here). */
int sg_fz_stage_analyze_with(const sg_ptx_module_t *mod, const sg_access_kernel_t *ak,
                             const sg_node_t *node, sg_fz_stage_t *st);
void sg_fz_stage_free(sg_fz_stage_t *st);

/* ---- planning a run of stages -------------------------------------------------- */

typedef struct {
    uint64_t addr0;      /* concrete address of element 0 */
    int64_t stride;
    int64_t cta_stride;
    bool t_affine;
    int64_t cta_lo, cta_hi; /* !t_affine: offsets it spans over the launch */
    uint32_t width;
    uint32_t buffer;     /* bundle buffer holding it, SG_NONE if none */
    bool loaded, stored; /* by some stage of the run */
    bool lifted;         /* lives in registers; else every site is a real access */
    bool preload;        /* lifted: the wrapper loads it for t < preload_n */
    uint64_t preload_n;
    sg_fz_bound_t preload_rt;
    bool dead;           /* lifted and stored: write-back dropped (no reader outside the run) */
    bool gs;             /* grid-stride accesses: addr0 normalized into one period */
    uint64_t gs_end;     /* ... and they stay below this (the end of their buffer) */
    uint32_t first_stage, first_site; /* the site whose base parameter the wrapper uses */
    uint32_t last_store_stage;
    char type_c[24];     /* C type of the register ("float") */
    char constraint;     /* inline asm constraint letter */
} sg_fz_slot_t;

typedef struct {
    uint32_t n_stages;
    sg_fz_stage_t *stages; /* not owned */
    uint64_t elements;     /* threads of the original launch */
    bool real_mode;        /* some slot is grid-stride, or the run is CTA-wide: the fused
                              kernel keeps the original geometry and every access in
                              memory (no lifting) */
    bool cta;              /* tier 2: some stage needs its CTA; __syncthreads() between
                              stages, cross-stage dependencies only inside one CTA */
    uint32_t n_slots;
    sg_fz_slot_t *slots;
    uint32_t *site_slot;   /* per stage, per site: slot index (flattened; see site_base) */
    uint32_t *site_base;   /* per stage: first index into site_slot */
    bool *site_known;      /* per site (as site_slot): a lifted load whose register value is
                              certainly valid there (stored before by a stage that must
                              execute for every element it reads, or preloaded for all of
                              them), so it needs no fallback load */
    /* The fast path: a thread whose elements are all below fast_n runs its
     * stages with no per-element guard, without the branches marked in
     * never_taken and with the stores marked sure known to have run (0: no
     * fast path; never in real mode). For t < fast_n a sure site executes
     * (it must for every t in [0, hi), hi >= fast_n), and a marked
     * statement is a guarded branch (or ret) that is never taken: taking it
     * would skip a sure site of its stage that cannot have run before it
     * (no path from the site back to the branch) and cannot run after it (no
     * path from the branch's target to the site). The bounds checks the
     * wrapper has already done thereby drop out, and the elements' code
     * becomes straight-line where the stages' own code is. */
    uint64_t fast_n;
    bool *site_sure;       /* per site (as site_slot) */
    uint32_t *stmt_base;   /* per stage: first index into never_taken */
    bool *never_taken;     /* per stage, per statement of its entry */
    uint32_t n_never;      /* statements marked */
    /* A conflict found while planning: stage `split_at` cannot join the
     * stages before it (the caller fuses stages [0, split_at) and starts
     * again there). SG_NONE when the run is fine. */
    uint32_t split_at;
    char split_reason[SG_FZ_REASON];
} sg_fz_plan_t;

/* Plan stages[0..n) of one chain (all tier-1 ok, identical geometry). g is
 * the graph (buffers and their users decide preloads and dead writes);
 * run_nodes are the nodes the fused kernel replaces. */
int sg_fz_plan(const sg_graph_t *g, sg_fz_stage_t *stages, uint32_t n, sg_fz_plan_t *plan);
void sg_fz_plan_free(sg_fz_plan_t *plan);

/* Does the fused kernel of plan leave slot k's memory alone entirely? A
 * dead slot (write-back dropped) that is not preloaded and whose every load
 * is forwarded from a register (no fallback load): the generated code then
 * has no access to it at all, so a graph allocation holding only such
 * slots is touched by nothing once the run is fused. */
bool sg_fz_slot_untouched(const sg_fz_plan_t *plan, uint32_t k);
/* The buffers of g the fused kernel does not touch although its stages did:
 * every slot based in them is untouched and no other slot can reach into
 * them. Appended to out (capacity cap, at most one per slot); returns how
 * many. */
uint32_t sg_fz_plan_untouched_buffers(const sg_graph_t *g, const sg_fz_plan_t *plan, uint32_t *out,
                                      uint32_t cap);

/* ---- code generation ------------------------------------------------------------ */

typedef struct {
    uint32_t block;        /* threads per block of the fused kernel (128) */
    uint32_t elements;     /* elements per thread, a multiple of 4 (0: 32 bytes of the
                              widest lifted slot, 8 for 4-byte data) */
    uint32_t arch;         /* sm number to compile for (90) */
} sg_fz_gen_options_t;

void sg_fz_gen_options_default(sg_fz_gen_options_t *o);

typedef struct {
    char *source;          /* CUDA C, malloc'd */
    char name[64];         /* the fused kernel's name ("sgcap_fused_<hash>") */
    char hash[17];
    uint32_t grid, block;  /* its launch */
    uint32_t n_params;     /* one per stage: the stage's parameter buffer */
    uint32_t *param_offsets, *param_sizes; /* n_params each, malloc'd */
    uint32_t params_size;
} sg_fz_source_t;

/* Generate the fused kernel for plan (whose stages are all kept). */
int sg_fz_generate(const sg_fz_plan_t *plan, const sg_fz_gen_options_t *opt,
                   sg_fz_source_t *out, char *err, size_t errlen);
void sg_fz_source_free(sg_fz_source_t *s);

typedef struct {
    char *ptx;      /* NUL-terminated */
    size_t ptx_len;
    void *cubin;
    size_t cubin_len;
    int registers;  /* -1 unknown */
    int spill_bytes;/* spill stores + loads, -1 unknown */
    bool cached;    /* came from this process's cache */
} sg_fz_binary_t;

/* Compile with NVRTC (loaded through code/nvlib.h) for sm_<arch>. Results
 * are cached in this process by the hash of the source and options.
 * SG_EUNSUPPORTED with the reason in err when NVRTC is missing or the
 * source does not compile (the log's first lines in err). */
int sg_fz_compile(const sg_fz_source_t *src, uint32_t arch, sg_fz_binary_t *out, char *err,
                  size_t errlen);
void sg_fz_binary_free(sg_fz_binary_t *b);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_FUSE_H */
