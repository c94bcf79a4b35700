/* The seam between interception (inject/) and everything that reacts to an
 * intercepted call (tracing, capture/; the optimizer next).
 *
 * Every wrapper in hooks.c does, for one call of the program:
 *
 *     args = {the call's arguments}          (sg_args_<proto>_t, see below)
 *     sg_observe_<family>(SG_PHASE_BEFORE, &call)   observers may edit args
 *                                                   or set call.skip
 *     call.result = real(args...)            unless call.skip
 *     sg_observe_<family>(SG_PHASE_AFTER, &call)    observers read the result
 *     return call.result
 *
 * with one sg_observe_<family>() per API family (capture, capture queries,
 * event record, stream wait, launch, copy, memset, alloc, free, pool, graph,
 * module, nvrtc, sync). Each of them writes the SGCAP_LOG=trace line (after
 * the call) and then calls every registered observer's callback for that
 * family, in registration order.
 *
 * What an observer may rely on:
 * - call->fn is the exact exported name that was called (cuLaunchKernel_ptsz),
 *   call->proto the legacy-flavour name that shares its prototype
 *   (cuLaunchKernel): switch on proto, read the arguments with
 *   SG_CALL_ARGS(call, cuLaunchKernel)->gridDimX.
 * - call->stream is canonical: NULL never appears; the default stream is
 *   CU_STREAM_LEGACY (legacy flavour) or CU_STREAM_PER_THREAD (_ptsz flavour),
 *   so it can be passed to any real driver function of either flavour.
 * - Callbacks run on the calling thread, inside the reentrancy guard: a CUDA
 *   call they make through our exported names goes straight to the driver and
 *   is not observed. Call the driver through SG_REAL(name)(...) (inject.h);
 *   anything that is not a pure query (alloc, module load, graph building)
 *   goes inside sg_inject_relaxed_begin()/end() so it cannot invalidate a
 *   capture that the program has open on another thread.
 * - Hot families (capture queries, events, waits, launches, copies, memsets)
 *   are observed only while some stream capture is active in the process,
 *   when tracing, or when an observer sets wants_eager; the other families
 *   are observed on every call (unless SGCAP_MODE=off).
 * - Argument pointers and borrowed arrays are valid only during the callback:
 *   copy what you keep. Never call exit/abort or write to stdout.
 * - BEFORE: args may be changed (the real call uses them) and call->skip=1
 *   with call->result set returns that result without calling the driver.
 *   This is how the optimize mode swaps the graph given to instantiate.
 */
#ifndef SGCAP_INJECT_OBSERVE_H
#define SGCAP_INJECT_OBSERVE_H

#include "inject/sg_cuda.h"
#include "inject/pp.h"
#include <stdint.h>

typedef enum sg_family {
    SG_FAMILY_PROCADDR, /* cuGetProcAddress*: traced only */
    SG_FAMILY_CAPTURE,  /* begin, begin-to-graph, end, update dependencies */
    SG_FAMILY_CAPINFO,  /* get capture info, is capturing (hot) */
    SG_FAMILY_EVENT,    /* event record, record with flags (hot) */
    SG_FAMILY_WAIT,     /* stream wait event (hot) */
    SG_FAMILY_LAUNCH,   /* kernel, kernel ex, cooperative, host function (hot) */
    SG_FAMILY_COPY,     /* async copies (hot) */
    SG_FAMILY_MEMSET,   /* async memsets (hot) */
    SG_FAMILY_ALLOC,    /* every allocation path: sync, async, pool, host, VMM */
    SG_FAMILY_FREE,     /* their releases */
    SG_FAMILY_POOL,     /* memory pool create, destroy, trim, attributes */
    SG_FAMILY_GRAPH,    /* instantiate, update, upload, launch, destroy */
    SG_FAMILY_MODULE,   /* module/library load and unload, cuLink* */
    SG_FAMILY_NVRTC,    /* nvrtcCreateProgram, nvrtcCompileProgram */
    SG_FAMILY_SYNC,     /* stream synchronize */
    SG_FAMILY_COUNT
} sg_family_t;

/* Hot families are observed only when someone is watching (see above). */
#define SG_FAMILY_IS_HOT(f)                                                                        \
    ((f) == SG_FAMILY_CAPINFO || (f) == SG_FAMILY_EVENT || (f) == SG_FAMILY_WAIT ||                \
     (f) == SG_FAMILY_LAUNCH || (f) == SG_FAMILY_COPY || (f) == SG_FAMILY_MEMSET)

typedef enum sg_flavour {
    SG_FLAVOUR_LEGACY = 0, /* plain name: a NULL stream is the legacy stream */
    SG_FLAVOUR_PTSZ = 1,   /* NAME_ptsz: a NULL stream is the per-thread stream */
    SG_FLAVOUR_PTDS = 2,   /* NAME_ptds (synchronous per-thread variants) */
} sg_flavour_t;

/* One id per entry of hooks.def: SG_FN_cuLaunchKernel, SG_FN_cuLaunchKernel_ptsz,
 * SG_FN_cuGraphGetNodes (real-only), ... */
#define SG_S(x) 1, x
#define SG_NS 0, NULL
#define SG_IDS_PLAIN(name) SG_FN_##name,
#define SG_IDS_PTSZ(name) SG_FN_##name, SG_FN_##name##_ptsz,
#define SG_HOOK(ret, fam, flav, hs_st, name, ...) SG_IDS_##flav(name)
#define SG_CUSTOM(name, wrapper) SG_FN_##name,
#define SG_REAL_ONLY(name) SG_FN_##name,
typedef enum sg_fn_id {
#include "inject/hooks.def"
    SG_FN_COUNT
} sg_fn_id_t;
#undef SG_HOOK
#undef SG_CUSTOM
#undef SG_REAL_ONLY

/* The argument struct of each hooked prototype: sg_args_cuLaunchKernel_t
 * {CUfunction f; unsigned int gridDimX; ...}, the fields named as in cuda.h.
 * The _ptsz twin uses its legacy twin's struct. */
#define SG_HOOK(ret, fam, flav, hs_st, name, ...)                                                  \
    typedef struct sg_args_##name {                                                                \
        SG_FIELDS(__VA_ARGS__)                                                                     \
    } sg_args_##name##_t;
#define SG_CUSTOM(name, wrapper)
#define SG_REAL_ONLY(name)
#include "inject/hooks.def"
#undef SG_HOOK
#undef SG_CUSTOM
#undef SG_REAL_ONLY

typedef enum sg_phase { SG_PHASE_BEFORE = 0, SG_PHASE_AFTER = 1 } sg_phase_t;

typedef struct sg_call {
    sg_fn_id_t fn;    /* exact exported function called */
    sg_fn_id_t proto; /* its legacy-flavour twin: selects the args struct */
    sg_family_t family;
    sg_flavour_t flavour;
    int has_stream;  /* 0 for calls without a stream */
    CUstream stream; /* canonical (see above); NULL when !has_stream */
    void *args;      /* sg_args_<proto>_t */
    int result;      /* CUresult or nvrtcResult; valid AFTER (or set with skip) */
    int skip;        /* BEFORE: 1 = do not call the driver, return result */
} sg_call_t;

#define SG_CALL_ARGS(call, proto) ((sg_args_##proto##_t *)(call)->args)

typedef void (*sg_observe_fn)(sg_phase_t phase, sg_call_t *call, void *user);

/* A set of per-family callbacks (NULL = not interested). */
typedef struct sg_observer {
    const char *name;
    int wants_eager; /* see hot families above */
    sg_observe_fn on[SG_FAMILY_COUNT];
    void *user;
} sg_observer_t;

/* Registers an observer (kept by pointer, never copied; at most 8). Returns
 * 0, or -1 when the table is full. Safe to call from a module's start()
 * (inject.h: sg_inject_module_t). */
int sg_inject_add_observer(const sg_observer_t *observer);

/* The family entry points the wrappers call (defined in observe.c). */
void sg_observe_procaddr(sg_phase_t phase, sg_call_t *call);
void sg_observe_capture(sg_phase_t phase, sg_call_t *call);
void sg_observe_capinfo(sg_phase_t phase, sg_call_t *call);
void sg_observe_event(sg_phase_t phase, sg_call_t *call);
void sg_observe_wait(sg_phase_t phase, sg_call_t *call);
void sg_observe_launch(sg_phase_t phase, sg_call_t *call);
void sg_observe_copy(sg_phase_t phase, sg_call_t *call);
void sg_observe_memset(sg_phase_t phase, sg_call_t *call);
void sg_observe_alloc(sg_phase_t phase, sg_call_t *call);
void sg_observe_free(sg_phase_t phase, sg_call_t *call);
void sg_observe_pool(sg_phase_t phase, sg_call_t *call);
void sg_observe_graph(sg_phase_t phase, sg_call_t *call);
void sg_observe_module(sg_phase_t phase, sg_call_t *call);
void sg_observe_nvrtc(sg_phase_t phase, sg_call_t *call);
void sg_observe_sync(sg_phase_t phase, sg_call_t *call);

#endif
