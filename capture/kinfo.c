/* kinfo.c: what the driver says about a kernel, asked once per kernel.
 *
 * Reading a graph back asks, for every kernel node, its name
 * (cuFuncGetName/cuKernelGetName), its parameter layout (one
 * cuFuncGetParamInfo per parameter, and one more that fails) and which of
 * its pointer parameters are pointers to const (parsed from the mangled
 * name). A program that re-captures the same graph thousands of times asks
 * the same questions about the same few kernels every time; the answers
 * depend only on the function handle, so they are kept here, keyed by it.
 *
 * Handles are reused after a module or library is unloaded, so an unload
 * retires every entry (sg_kinfo_invalidate). Retired entries stay allocated
 * until exit, because a graph build on another thread may still hold one;
 * so do entries dropped when the table reaches its bound. Lock: innermost. */
#include "shim.h"

#include <xxhash.h>

#include <stdlib.h>
#include <string.h>

#include "capture/u64map.h"
#include "graph/bundle.h"
#include "graph/views.h"

#define KINFO_MAX 65536u
#define MAX_PARAMS 4096u

typedef struct kinfo_entry {
    uint64_t handle; /* key: the CUfunction, or the CUkernel when func is NULL */
    sg_kinfo_t info;
    struct kinfo_entry *retired_next;
} kinfo_entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sg_u64map_t table; /* handle -> kinfo_entry_t */
static kinfo_entry_t *retired;
static uint32_t n_live;
static _Atomic uint64_t generation; /* counts invalidations */

/* Ask the driver. The name decides whether the handle is a CUfunction or a
 * CUkernel (context-independent launches cast a CUkernel to CUfunction):
 * only ever pass a handle to the API of its own kind. */
static void query(CUfunction func, CUkernel kern, sg_kinfo_t *k)
{
    __typeof__(&cuFuncGetName) fname = SG_REAL(cuFuncGetName);
    __typeof__(&cuKernelGetName) kname = SG_REAL(cuKernelGetName);
    const char *name = NULL;
    k->kernel_api = func == NULL;
    if (func && fname && fname(&name, func) != CUDA_SUCCESS) {
        name = NULL;
        if (kname && kname(&name, (CUkernel)func) == CUDA_SUCCESS) k->kernel_api = true;
    } else if (!func && kern && kname && kname(&name, kern) != CUDA_SUCCESS) {
        name = NULL;
    }
    CUkernel as_kernel = func ? (CUkernel)func : kern;
    k->name = name ? strdup(name) : NULL;
    uint32_t *offs = malloc(MAX_PARAMS * sizeof *offs), *sizes = malloc(MAX_PARAMS * sizeof *sizes);
    if (!offs || !sizes) {
        free(offs);
        free(sizes);
        return;
    }
    __typeof__(&cuFuncGetParamInfo) fpi = SG_REAL(cuFuncGetParamInfo);
    __typeof__(&cuKernelGetParamInfo) kpi = SG_REAL(cuKernelGetParamInfo);
    uint32_t n = 0, total = 0;
    for (size_t i = 0; i < MAX_PARAMS; i++) {
        size_t off = 0, size = 0;
        CUresult pr = CUDA_ERROR_NOT_FOUND;
        if (!k->kernel_api && fpi)
            pr = fpi(func, i, &off, &size);
        else if (k->kernel_api && kpi)
            pr = kpi(as_kernel, i, &off, &size);
        if (pr != CUDA_SUCCESS) break; /* past the last parameter */
        if (off + size > SG_BUNDLE_MAX_PARAM_BYTES) break;
        offs[n] = (uint32_t)off;
        sizes[n] = (uint32_t)size;
        if (off + size > total) total = (uint32_t)(off + size);
        n++;
    }
    k->n_params = n;
    k->total = total;
    /* the layout in one word, for the digests' shapes (sg_shim_kernel_args),
     * and the bytes of all arguments (what they copy: not `total`, which
     * a layout with overlapping parameters would undercount) */
    k->layout = XXH3_64bits_withSeed(sizes, n * sizeof *sizes, 0x6c61796f7574ull ^ n);
    size_t bytes = 0;
    for (uint32_t i = 0; i < n; i++)
        bytes += sizes[i];
    k->arg_bytes = bytes;
    k->offs = realloc(offs, (n ? n : 1) * sizeof *offs);
    k->sizes = realloc(sizes, (n ? n : 1) * sizeof *sizes);
    if (!k->offs) k->offs = offs;
    if (!k->sizes) k->sizes = sizes;
    k->ro = calloc(n ? n : 1, sizeof *k->ro);
    if (k->ro && k->name) sg_kernel_const_pointer_params(k->name, n, k->ro);
}

static void retire_all(void)
{
    for (uint32_t i = 0; i < table.cap; i++) {
        kinfo_entry_t *e = table.vals[i];
        if (!e) continue;
        e->retired_next = retired;
        retired = e;
    }
    sg_u64map_clear(&table, UINT32_MAX);
    n_live = 0;
    generation++;
}

/* The last few answers on this thread: a re-capturing program asks about
 * the same few kernels at every launch and node, and the table's lock is
 * then most of the cost. An entry lives as long as the process; an unload
 * (a new generation) makes these stale. */
static __thread struct {
    uint64_t key, gen;
    const sg_kinfo_t *info;
} recent[8];

const sg_kinfo_t *sg_kinfo_get(CUfunction func, CUkernel kern)
{
    uint64_t key = func ? (uint64_t)(uintptr_t)func : (uint64_t)(uintptr_t)kern;
    static const sg_kinfo_t none = {0};
    if (!key) return &none;
    unsigned slot = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 61);
    uint64_t gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (recent[slot].key == key && recent[slot].gen == gen && recent[slot].info)
        return recent[slot].info;
    pthread_mutex_lock(&lock);
    kinfo_entry_t *e = sg_u64map_get(&table, key);
    if (!e) {
        if (n_live >= KINFO_MAX) retire_all();
        e = sg_u64map_reserve(&table) ? NULL : calloc(1, sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&lock);
            return &none;
        }
        e->handle = key;
        query(func, kern, &e->info);
        sg_u64map_put(&table, key, e); /* room reserved above */
        n_live++;
    }
    pthread_mutex_unlock(&lock);
    recent[slot].key = key, recent[slot].gen = gen, recent[slot].info = &e->info;
    return &e->info;
}

void sg_kinfo_invalidate(void)
{
    pthread_mutex_lock(&lock);
    retire_all();
    pthread_mutex_unlock(&lock);
}

uint64_t sg_kinfo_generation(void)
{
    return generation;
}

void sg_kinfo_atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
}
