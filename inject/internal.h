/* Private to inject/: the entry table, the state the wrappers' fast path
 * reads, and the functions the inject/ files share. Other modules use
 * inject.h and observe.h. */
#ifndef SGCAP_INJECT_INTERNAL_H
#define SGCAP_INJECT_INTERNAL_H

#include "inject/inject.h"
#include <stdatomic.h>

#define SG_EXPORT __attribute__((visibility("default")))
#define SG_HIDDEN __attribute__((visibility("hidden")))
#define SG_LIKELY(x) __builtin_expect(!!(x), 1)
#define SG_UNLIKELY(x) __builtin_expect(!!(x), 0)

typedef enum sg_lib { SG_LIB_CUDA = 0, SG_LIB_NVRTC = 1, SG_LIB_COUNT } sg_lib_t;

/* One exported (or real-only) entry point. */
typedef struct sg_entry {
    const char *name;     /* exact exported name */
    void *wrapper;        /* ours, with the same ABI; NULL for real-only entries */
    _Atomic(void *) real; /* the driver's function, once known */
    atomic_int missing;   /* looked up in a loaded library and not there */
    unsigned char family; /* sg_family_t */
    unsigned char flavour;
    unsigned char lib; /* sg_lib_t */
    sg_fn_id_t proto;
} sg_entry_t;

extern sg_entry_t sg_entries[SG_FN_COUNT] SG_HIDDEN;

/* Fast-path state: hot families are observed when sg_watch_hot (tracing, or
 * an observer wants eager calls) or sg_active_captures is non-zero; the
 * others when sg_watch_cold (mode is not off). */
extern atomic_int sg_watch_hot SG_HIDDEN;
extern atomic_int sg_watch_cold SG_HIDDEN;
extern atomic_int sg_active_captures_count SG_HIDDEN;
extern __thread int sg_tls_depth SG_HIDDEN __attribute__((tls_model("initial-exec")));

static inline int sg_inject_watching(sg_family_t family)
{
    if (SG_FAMILY_IS_HOT(family))
        return atomic_load_explicit(&sg_watch_hot, memory_order_relaxed) |
               atomic_load_explicit(&sg_active_captures_count, memory_order_relaxed);
    return atomic_load_explicit(&sg_watch_cold, memory_order_relaxed);
}

/* The real dlsym, set by sg_inject_init (or the first dlsym call). */
extern void *(*volatile sg_real_dlsym_fn)(void *, const char *)SG_HIDDEN;
void *sg_inject_resolve_real_dlsym(void) SG_HIDDEN;

/* Once per process: real dlsym, configuration, atfork, observers. Cheap
 * after the first call; safe from any entry point, before constructors. */
void sg_inject_init(void) SG_HIDDEN;

/* Resolves an entry's real function (see sg_inject_real). */
void *sg_inject_resolve(sg_fn_id_t id) SG_HIDDEN;

/* The entry with this exact name, or -1. */
int sg_inject_lookup(const char *name) SG_HIDDEN;

/* If `ptr` is the start of an exported function of libcuda/libcudart/libnvrtc
 * that we wrap, remembers it as that entry's real function and returns our
 * wrapper; otherwise returns ptr unchanged. `name` is the exported name when
 * the caller knows it (dlsym), NULL to identify ptr with dladdr
 * (cuGetProcAddress). *wrapped_name, if given, receives the entry's name or
 * the dladdr name (or NULL). */
void *sg_inject_substitute(void *ptr, const char *name, const char **identified) SG_HIDDEN;

/* Substitution happens only when mode != off. */
int sg_inject_substituting(void) SG_HIDDEN;

/* Logs the one start-up line at the first CUDA interception. */
void sg_inject_announce(void) SG_HIDDEN;

/* Capture bookkeeping (observe.c). */
void sg_inject_capture_began(void) SG_HIDDEN;
void sg_inject_capture_ended(void) SG_HIDDEN;

/* Recomputes sg_watch_hot/cold from config and observers. */
void sg_inject_update_watch(void) SG_HIDDEN;

/* Observer table (observe.c). */
void sg_inject_observers_reset_after_fork(void) SG_HIDDEN;

/* CUDA_INJECTION64_PATH without LD_PRELOAD: observe the driver through
 * CUPTI callbacks (cupti.c). 0 when attached (why = what), -1 with why. */
int sg_cupti_attach(char *why, size_t n) SG_HIDDEN;
int sg_cupti_active(void) SG_HIDDEN;

/* The pid as last seen (refreshed in a forked child). */
extern int sg_inject_pid SG_HIDDEN;

#endif
