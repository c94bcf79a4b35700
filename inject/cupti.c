/* cupti.c: interception when libsgcap is loaded only through
 * CUDA_INJECTION64_PATH (no LD_PRELOAD).
 *
 * The driver loads an injection library during cuInit and calls its
 * InitializeInjection. By then the program already holds the driver's own
 * entry points (cudart fetched them through the real dlsym and
 * cuGetProcAddress), so none of our wrappers can be put in front of them.
 * What is left is the way NVIDIA's own tools attach: the CUPTI callback API,
 * which calls a subscriber on entry and exit of every driver API call with
 * the call's parameters. Its parameter structs (generated_cuda_meta.h,
 * cuLaunchKernel_params = {CUfunction f; unsigned int gridDimX; ...}) have
 * exactly the layout of our argument structs (one field per parameter, in
 * order, same types), so each callback becomes the same sg_call_t the
 * wrappers make and goes through the same sg_observe_<family> path: capture
 * works unchanged.
 *
 * What this way cannot do, and so does not claim: change arguments or skip
 * calls (CUPTI's parameters are read-only: the optimize mode needs
 * LD_PRELOAD), see NVRTC (not a driver API: no NVRTC source in bundles), see
 * calls made before cuInit. CUPTI allows one subscriber per process on CUDA
 * 13.0: with a profiler attached (Nsight, torch.profiler) subscribing fails
 * and this says so. libcupti is loaded with dlopen (libsgcap links nothing
 * of NVIDIA's), from where the program already has it or the usual places.
 * Calls sgcap makes itself (sg_tls_depth > 0) are not observed, as with the
 * wrappers. */
#define _GNU_SOURCE 1
#include "inject/internal.h"

/* not <cupti.h>: it redefines the v1 structs that cuda.h declares for us */
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <generated_cuda_meta.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table: CUPTI driver callback id -> our entry ------------------------------ */

typedef struct {
    sg_fn_id_t fn, proto;
    unsigned char family, flavour, has_stream, used;
    CUstream (*stream)(const void *params);
} cb_entry_t;

/* Each hook's stream expression (hooks.def's SG_S(...)) reads `args`. */
#define SG_CB_STREAM_FN(ret, fam, flav, hs, st, name, proto, ...)                                  \
    static CUstream cb_stream_##name(const void *params)                                           \
    {                                                                                              \
        sg_args_##proto##_t args;                                                                  \
        memcpy(&args, params, sizeof args);                                                        \
        (void)args;                                                                                \
        return (CUstream)(st);                                                                     \
    }
#define SG_CB_FLAV_PLAIN(M, ret, fam, hs, st, name, ...)                                           \
    M(ret, fam, SG_FLAVOUR_LEGACY, hs, st, name, name, __VA_ARGS__)
#define SG_CB_FLAV_PTSZ(M, ret, fam, hs, st, name, ...)                                            \
    M(ret, fam, SG_FLAVOUR_LEGACY, hs, st, name, name, __VA_ARGS__)                                \
    M(ret, fam, SG_FLAVOUR_PTSZ, hs, st, name##_ptsz, name, __VA_ARGS__)
#define SG_CB_EXPAND(x) x
#define SG_CB_APPLY(M, ret, fam, flav, hs, st, name, ...)                                          \
    SG_CB_EXPAND(SG_CB_FLAV_##flav(M, ret, fam, hs, st, name, __VA_ARGS__))
/* NVRTC is not a driver API: CUPTI has no callback for it. */
#define SG_CB_ONLY_CUresult(M, ...) M(__VA_ARGS__)
#define SG_CB_ONLY_nvrtcResult(M, ...)

#define SG_HOOK(ret, fam, flav, hs_st, name, ...)                                                  \
    SG_CB_ONLY_##ret(SG_CB_APPLY, SG_CB_STREAM_FN, ret, fam, flav, hs_st, name, __VA_ARGS__)
#define SG_CUSTOM(name, wrapper)
#define SG_REAL_ONLY(name)
#include "inject/hooks.def"
#undef SG_HOOK

/* The layout promise, checked for every hook: CUPTI's parameter struct of
 * each entry point is our argument struct (same size, and both are one
 * field per parameter in order; the field check is that observers read
 * them by the same names). */
#define SG_CB_SAME(ret, fam, flav, hs, st, name, proto, ...)                                       \
    _Static_assert(sizeof(name##_params) == sizeof(sg_args_##proto##_t),                           \
                   #name ": CUPTI's parameters differ from the hook's");
#define SG_HOOK(ret, fam, flav, hs_st, name, ...)                                                  \
    SG_CB_ONLY_##ret(SG_CB_APPLY, SG_CB_SAME, ret, fam, flav, hs_st, name, __VA_ARGS__)
#include "inject/hooks.def"
#undef SG_HOOK

// clang-format off
#define SG_CB_ENTRY(ret, fam, flav, hs, st, name, proto, ...) \
    [CUPTI_DRIVER_TRACE_CBID_##name] = \
        {SG_FN_##name, SG_FN_##proto, SG_FAMILY_##fam, flav, hs, 1, cb_stream_##name},
// clang-format on
#define SG_HOOK(ret, fam, flav, hs_st, name, ...)                                                  \
    SG_CB_ONLY_##ret(SG_CB_APPLY, SG_CB_ENTRY, ret, fam, flav, hs_st, name, __VA_ARGS__)
static const cb_entry_t by_cbid[CUPTI_DRIVER_TRACE_CBID_SIZE] = {
#include "inject/hooks.def"
};
#undef SG_HOOK
#undef SG_CUSTOM
#undef SG_REAL_ONLY

/* ---- libcupti ---------------------------------------------------------------------- */

static struct {
    __typeof__(&cuptiSubscribe) subscribe;
    __typeof__(&cuptiEnableCallback) enable;
    __typeof__(&cuptiGetResultString) result_string;
    CUpti_SubscriberHandle sub;
    int active;
} K;

static void *open_cupti(char *where, size_t n)
{
    static const char *const names[] = {
        "libcupti.so.13",
        "libcupti.so",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcupti.so.13",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD); /* the program's own first */
        if (!h) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(where, n, "%s", names[i]);
            return h;
        }
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        char path[4096];
        snprintf(path, sizeof path, "%s/extras/CUPTI/lib64/libcupti.so.13", home);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(where, n, "%s", path);
            return h;
        }
    }
    return NULL;
}

/* ---- the callback ------------------------------------------------------------------ */

#define NEST_MAX 8
static __thread sg_call_t tls_calls[NEST_MAX];
static __thread int tls_top;

static void observe(sg_phase_t phase, sg_call_t *c)
{
    switch ((sg_family_t)c->family) {
    case SG_FAMILY_CAPTURE:
        sg_observe_capture(phase, c);
        break;
    case SG_FAMILY_CAPINFO:
        sg_observe_capinfo(phase, c);
        break;
    case SG_FAMILY_EVENT:
        sg_observe_event(phase, c);
        break;
    case SG_FAMILY_WAIT:
        sg_observe_wait(phase, c);
        break;
    case SG_FAMILY_LAUNCH:
        sg_observe_launch(phase, c);
        break;
    case SG_FAMILY_COPY:
        sg_observe_copy(phase, c);
        break;
    case SG_FAMILY_MEMSET:
        sg_observe_memset(phase, c);
        break;
    case SG_FAMILY_ALLOC:
        sg_observe_alloc(phase, c);
        break;
    case SG_FAMILY_FREE:
        sg_observe_free(phase, c);
        break;
    case SG_FAMILY_POOL:
        sg_observe_pool(phase, c);
        break;
    case SG_FAMILY_GRAPH:
        sg_observe_graph(phase, c);
        break;
    case SG_FAMILY_MODULE:
        sg_observe_module(phase, c);
        break;
    case SG_FAMILY_SYNC:
        sg_observe_sync(phase, c);
        break;
    default:
        break;
    }
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)user;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return;
    const cb_entry_t *e = &by_cbid[cbid];
    if (!e->used || sg_tls_depth > 0) return; /* sgcap's own calls are not the program's */
    const CUpti_CallbackData *cb = data;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (tls_top >= NEST_MAX) {
            tls_top++; /* counted, not observed */
            return;
        }
        sg_call_t *c = &tls_calls[tls_top++];
        memset(c, 0, sizeof *c);
        c->fn = e->fn;
        c->proto = e->proto;
        c->family = (sg_family_t)e->family;
        c->flavour = (sg_flavour_t)e->flavour;
        c->has_stream = e->has_stream;
        if (c->has_stream)
            c->stream =
                sg_inject_canonical_stream(e->stream(cb->functionParams), (sg_flavour_t)e->flavour);
        /* read-only under CUPTI: observers that would change arguments
         * (optimize) cannot work this way */
        c->args = (void *)cb->functionParams;
        if (!sg_inject_watching((sg_family_t)e->family)) {
            c->fn = SG_FN_COUNT; /* not watched: the exit is ignored too */
            return;
        }
        sg_tls_depth++;
        observe(SG_PHASE_BEFORE, c);
        sg_tls_depth--;
        return;
    }
    if (tls_top <= 0) return;
    int at = --tls_top;
    if (at >= NEST_MAX) return;
    sg_call_t *c = &tls_calls[at];
    if (c->fn == SG_FN_COUNT || c->fn != e->fn) return;
    c->result = cb->functionReturnValue ? (int)*(const CUresult *)cb->functionReturnValue : 0;
    sg_tls_depth++;
    observe(SG_PHASE_AFTER, c);
    sg_tls_depth--;
}

/* ---- attach ------------------------------------------------------------------------ */

int sg_cupti_attach(char *why, size_t n)
{
    if (K.active) return 0;
    char where[4096] = "";
    void *h = open_cupti(where, sizeof where);
    if (!h) {
        snprintf(why, n, "libcupti.so.13 not found (LD_LIBRARY_PATH, CUDA_HOME, /usr/local/cuda)");
        return -1;
    }
    K.subscribe = (__typeof__(K.subscribe))dlsym(h, "cuptiSubscribe");
    K.enable = (__typeof__(K.enable))dlsym(h, "cuptiEnableCallback");
    K.result_string = (__typeof__(K.result_string))dlsym(h, "cuptiGetResultString");
    if (!K.subscribe || !K.enable) {
        snprintf(why, n, "%s lacks cuptiSubscribe/cuptiEnableCallback", where);
        return -1;
    }
    sg_tls_depth++; /* CUPTI's own driver calls are not the program's */
    CUptiResult r = K.subscribe(&K.sub, on_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        sg_tls_depth--;
        const char *msg = NULL;
        if (K.result_string) K.result_string(r, &msg);
        snprintf(why, n, "cuptiSubscribe failed: %s%s", msg ? msg : "error",
                 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                     ? " (another tool, a profiler, already subscribed)"
                     : "");
        return -1;
    }
    uint32_t enabled = 0;
    for (uint32_t id = 0; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++)
        if (by_cbid[id].used &&
            K.enable(1, K.sub, CUPTI_CB_DOMAIN_DRIVER_API, (CUpti_CallbackId)id) == CUPTI_SUCCESS)
            enabled++;
    sg_tls_depth--;
    K.active = 1;
    snprintf(why, n, "CUPTI callbacks from %s on %u driver entry points", where, enabled);
    return 0;
}

int sg_cupti_active(void)
{
    return K.active;
}

int sg_inject_can_replace_calls(void)
{
    return !K.active;
}
