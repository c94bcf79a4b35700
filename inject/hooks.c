/* The wrappers, generated from hooks.def, and the entry table.
 *
 * Each wrapper is an exported function with the exact name and prototype of
 * a driver (or NVRTC) entry point. The same function is what dlsym and
 * cuGetProcAddress hand out (dlsym.c, procaddr.c) and what a program linked
 * with -lcuda binds to. Fast path: real pointer, one or two relaxed loads,
 * tail call. Slow path (observed): argument struct, BEFORE, real call, AFTER.
 */
#include "inject/internal.h"
#include "inject/prof.h"

#ifdef SG_PROFILE
#define SG_PROF_FN(fn, p0, p1, p2)                                                                 \
    do {                                                                                           \
        uint64_t p3_ = sg_prof_now();                                                              \
        sg_prof_fn(fn, ((p1) - (p0)) + (p3_ - (p2)), (p2) - (p1));                                 \
    } while (0)
#else
#define SG_PROF_FN(fn, p0, p1, p2) ((void)0)
#endif

#define SG_FAIL_CUresult CUDA_ERROR_NOT_INITIALIZED
#define SG_FAIL_nvrtcResult NVRTC_ERROR_INTERNAL_ERROR

#define SG_OBS_PROCADDR sg_observe_procaddr
#define SG_OBS_CAPTURE sg_observe_capture
#define SG_OBS_CAPINFO sg_observe_capinfo
#define SG_OBS_EVENT sg_observe_event
#define SG_OBS_WAIT sg_observe_wait
#define SG_OBS_LAUNCH sg_observe_launch
#define SG_OBS_COPY sg_observe_copy
#define SG_OBS_MEMSET sg_observe_memset
#define SG_OBS_ALLOC sg_observe_alloc
#define SG_OBS_FREE sg_observe_free
#define SG_OBS_POOL sg_observe_pool
#define SG_OBS_GRAPH sg_observe_graph
#define SG_OBS_MODULE sg_observe_module
#define SG_OBS_NVRTC sg_observe_nvrtc
#define SG_OBS_SYNC sg_observe_sync

/* hs/st come from SG_S(expr) or SG_NS, already split into two arguments. */
#define SG_FLAV_PLAIN(M, ret, fam, hs, st, name, ...)                                              \
    M(ret, fam, SG_FLAVOUR_LEGACY, hs, st, name, name, __VA_ARGS__)
#define SG_FLAV_PTSZ(M, ret, fam, hs, st, name, ...)                                               \
    M(ret, fam, SG_FLAVOUR_LEGACY, hs, st, name, name, __VA_ARGS__)                                \
    M(ret, fam, SG_FLAVOUR_PTSZ, hs, st, name##_ptsz, name, __VA_ARGS__)
#define SG_EXPAND(x) x
/* Called with hs_st already expanded into two arguments (has stream, stream). */
#define SG_HOOK_APPLY(M, ret, fam, flav, hs, st, name, ...)                                        \
    SG_EXPAND(SG_FLAV_##flav(M, ret, fam, hs, st, name, __VA_ARGS__))

#define SG_WRAP(ret, fam, flav, hs, st, name, proto, ...)                                          \
    SG_EXPORT ret name(SG_PARAMS(__VA_ARGS__))                                                     \
    {                                                                                              \
        sg_entry_t *e = &sg_entries[SG_FN_##name];                                                 \
        __typeof__(&name) real =                                                                   \
            (__typeof__(&name))atomic_load_explicit(&e->real, memory_order_acquire);               \
        if (SG_UNLIKELY(real == NULL)) {                                                           \
            real = (__typeof__(&name))sg_inject_resolve(SG_FN_##name);                             \
            if (real == NULL) return SG_FAIL_##ret;                                                \
        }                                                                                          \
        if (SG_LIKELY(!sg_inject_watching(SG_FAMILY_##fam)) || sg_tls_depth > 0)                   \
            return real(SG_ARGS(__VA_ARGS__));                                                     \
        sg_args_##proto##_t args = {SG_ARGS(__VA_ARGS__)};                                         \
        sg_call_t call = {                                                                         \
            SG_FN_##name, SG_FN_##proto, SG_FAMILY_##fam, flav, hs, NULL, &args, 0, 0};            \
        if (hs) call.stream = sg_inject_canonical_stream((CUstream)(st), flav);                    \
        SG_PROF_T(sg_p0);                                                                          \
        sg_tls_depth++;                                                                            \
        SG_OBS_##fam(SG_PHASE_BEFORE, &call);                                                      \
        sg_tls_depth--;                                                                            \
        SG_PROF_T(sg_p1);                                                                          \
        if (!call.skip) call.result = (int)real(SG_FROM(args, __VA_ARGS__));                       \
        SG_PROF_T(sg_p2);                                                                          \
        sg_tls_depth++;                                                                            \
        SG_OBS_##fam(SG_PHASE_AFTER, &call);                                                       \
        sg_tls_depth--;                                                                            \
        SG_PROF_FN(SG_FN_##name, sg_p0, sg_p1, sg_p2);                                             \
        return (ret)call.result;                                                                   \
    }

#define SG_HOOK(ret, fam, flav, hs_st, name, ...)                                                  \
    SG_HOOK_APPLY(SG_WRAP, ret, fam, flav, hs_st, name, __VA_ARGS__)
#define SG_CUSTOM(name, wrapper)
#define SG_REAL_ONLY(name)
#include "inject/hooks.def"
#undef SG_HOOK
#undef SG_CUSTOM
#undef SG_REAL_ONLY

/* The hand-written wrappers of SG_CUSTOM entries (procaddr.c). */
CUresult sg_cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus) SG_HIDDEN;

#define SG_ENTRY(fam, flav, name, proto, wrapper)                                                  \
    [SG_FN_##name] = {#name, (void *)(wrapper), NULL, 0, SG_FAMILY_##fam, flav, 0, SG_FN_##proto},
#define SG_ENTRY_HOOK(ret, fam, flav, hs, st, name, proto, ...)                                    \
    SG_ENTRY(fam, flav, name, proto, &name)
#define SG_HOOK(ret, fam, flav, hs_st, name, ...)                                                  \
    SG_HOOK_APPLY(SG_ENTRY_HOOK, ret, fam, flav, hs_st, name, __VA_ARGS__)
#define SG_CUSTOM(name, wrapper) SG_ENTRY(PROCADDR, SG_FLAVOUR_LEGACY, name, name, &wrapper)
#define SG_REAL_ONLY(name) SG_ENTRY(SYNC, SG_FLAVOUR_LEGACY, name, name, NULL)
sg_entry_t sg_entries[SG_FN_COUNT] = {
#include "inject/hooks.def"
};
#undef SG_HOOK
#undef SG_CUSTOM
#undef SG_REAL_ONLY

const char *sg_inject_fn_name(sg_fn_id_t id)
{
    if ((unsigned)id >= SG_FN_COUNT) return "?";
    return sg_entries[id].name;
}
