/* Identifying CUDA entry points and finding the real ones.
 *
 * A function pointer the program obtained (through dlsym or cuGetProcAddress)
 * is identified by where it lies: dladdr must place it exactly at the start
 * of an exported symbol of libcuda.so* / libcudart.so* / libnvrtc.so*, and
 * that exact name (cuLaunchKernel_ptsz, cuMemAlloc_v2, ...) selects the
 * wrapper, which therefore has exactly that ABI. No version tables: the
 * driver already chose the ABI for the caller's (cudaVersion, flags).
 *
 * Real functions come from those lookups, or, for programs linked with
 * -lcuda that call our exported names directly, from the real dlsym on the
 * loaded library's own handle (never RTLD_NEXT, which cannot see libraries
 * Python loaded RTLD_LOCAL, nor RTLD_DEFAULT, which finds our wrappers). */
#include "inject/internal.h"
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name index ---- */
static int sg_sorted[SG_FN_COUNT];

static int sg_cmp_entries(const void *a, const void *b)
{
    return strcmp(sg_entries[*(const int *)a].name, sg_entries[*(const int *)b].name);
}

void sg_table_init(void) SG_HIDDEN;
void sg_table_init(void)
{
    for (int i = 0; i < SG_FN_COUNT; i++) {
        sg_sorted[i] = i;
        sg_entries[i].lib =
            strncmp(sg_entries[i].name, "nvrtc", 5) == 0 ? SG_LIB_NVRTC : SG_LIB_CUDA;
    }
    qsort(sg_sorted, SG_FN_COUNT, sizeof sg_sorted[0], sg_cmp_entries);
}

int sg_inject_lookup(const char *name)
{
    int lo = 0, hi = SG_FN_COUNT - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(name, sg_entries[sg_sorted[mid]].name);
        if (c == 0) return sg_sorted[mid];
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

/* ---- which library an address belongs to ---- */
static const char *sg_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* -1: not a CUDA library; else the sg_lib_t whose names it may define. */
static int sg_lib_of_file(const char *path)
{
    if (path == NULL) return -1;
    const char *b = sg_basename(path);
    if (strncmp(b, "libcuda.so", 10) == 0 || strncmp(b, "libcudart.so", 12) == 0)
        return SG_LIB_CUDA;
    if (strncmp(b, "libnvrtc.so", 11) == 0 || strncmp(b, "libnvrtc.alt.so", 15) == 0)
        return SG_LIB_NVRTC;
    return -1;
}

_Atomic(void *) sg_inject_real_known[SG_FN_COUNT];

static void sg_remember_real(sg_entry_t *e, void *ptr)
{
    void *expected = NULL;
    bool first = atomic_compare_exchange_strong(&e->real, &expected, ptr);
    /* whichever pointer won, it is the entry's for good */
    atomic_store_explicit(&sg_inject_real_known[e - sg_entries], first ? ptr : expected,
                          memory_order_release);
    if (!first && expected != ptr) {
        static atomic_int warned;
        if (atomic_exchange(&warned, 1) == 0)
            sg_inject_log(SG_LOG_INFO,
                          "%s: two different real functions seen (%p, %p); keeping the first "
                          "(more than one libcuda loaded?)",
                          e->name, expected, ptr);
    }
}

void *sg_inject_substitute(void *ptr, const char *name, const char **identified)
{
    if (identified) *identified = NULL;
    if (ptr == NULL) return ptr;
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (dladdr(ptr, &info) == 0) return ptr;
    int lib = sg_lib_of_file(info.dli_fname);
    if (lib < 0) return ptr; /* not from CUDA (possibly already ours) */
    const char *exact = name;
    if (exact == NULL) {
        /* Only an exact symbol start identifies a function: the nearest
         * preceding symbol of an internal function would name the wrong ABI. */
        if (info.dli_sname == NULL || info.dli_saddr != ptr) {
            static atomic_int reported;
            if (atomic_fetch_add(&reported, 1) < 20)
                sg_inject_log(SG_LOG_INFO,
                              "entry point %p in %s is not an exported symbol: passed through "
                              "unobserved",
                              ptr, sg_basename(info.dli_fname));
            return ptr;
        }
        exact = info.dli_sname;
    }
    if (identified) *identified = exact;
    int id = sg_inject_lookup(exact);
    if (id < 0) return ptr;
    sg_entry_t *e = &sg_entries[id];
    if (e->lib != lib) return ptr;
    sg_remember_real(e, ptr);
    if (e->wrapper == NULL) return ptr;
    sg_inject_announce();
    return e->wrapper;
}

/* ---- finding the loaded libraries ---- */
static const char *const sg_lib_soname[SG_LIB_COUNT] = {"libcuda.so.1", "libnvrtc.so.13"};
static _Atomic(void *) sg_lib_handles[SG_LIB_COUNT];

static void *sg_lib_handle(sg_lib_t lib)
{
    void *h = atomic_load(&sg_lib_handles[lib]);
    if (h != NULL) return h;
    /* A loaded library matches its soname, wherever it was loaded from. */
    h = dlopen(sg_lib_soname[lib], RTLD_NOLOAD | RTLD_LAZY);
    if (h == NULL && lib == SG_LIB_CUDA) h = dlopen(sg_lib_soname[lib], RTLD_LAZY);
    if (h != NULL) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&sg_lib_handles[lib], &expected, h)) h = expected;
    }
    return h;
}

void *sg_inject_resolve(sg_fn_id_t id)
{
    if ((unsigned)id >= SG_FN_COUNT) return NULL;
    sg_entry_t *e = &sg_entries[id];
    void *p = atomic_load_explicit(&e->real, memory_order_acquire);
    if (p != NULL || atomic_load_explicit(&e->missing, memory_order_relaxed)) return p;
    sg_inject_init();
    if (sg_real_dlsym_fn == NULL) return NULL;
    void *h = sg_lib_handle((sg_lib_t)e->lib);
    if (h == NULL) return NULL; /* may be loaded later: try again next time */
    p = sg_real_dlsym_fn(h, e->name);
    if (p == NULL) {
        atomic_store(&e->missing, 1);
        return NULL;
    }
    sg_remember_real(e, p);
    return atomic_load(&e->real);
}

void *sg_inject_real(sg_fn_id_t id)
{
    return sg_inject_resolve(id);
}
