/* code.c: the code images a program loads, inside libsgcap.so.
 *
 * Every load (cuModuleLoad/Data/DataEx/FatBinary, cuLibraryLoadData/
 * FromFile, cuLinkComplete output) and every NVRTC program becomes one
 * entry, one per distinct content (xxh64, sg_code_hash). Images that live
 * in a loaded ELF object (the fatbins cudart registers from .nv_fatbin) are
 * borrowed: they stay mapped for the life of the process, so only a pointer
 * is kept and they are hashed when a bundle first needs them. Anything else
 * (heap buffers, files, NVRTC output) is copied, up to SGCAP_CODE_MAX_BYTES
 * in all; beyond that the hash is kept and the bytes are not (logged).
 *
 * A kernel node finds its image through its owner: cuFuncGetModule -> the
 * module's load; a CUkernel -> cuLibraryGetKernel's library -> its load; a
 * function of a library -> the library kernels of that name
 * (cuKernelGetFunction decides between several). When none of that knows
 * it (a load path we do not hook), the .nv_fatbin sections of every loaded
 * ELF object are scanned once and the kernel is found by name in them.
 * Counts of each load API and each resolution path go into the exit
 * summary: they say which path cudart really uses. */
#include "shim.h"

#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/elf_image.h"
#include "code/fatbin.h"
#include "graph/bundle.h"
#include "graph/plural.h"
#include "triton.h"

#define SNIFF_CAP (1ull << 30)      /* in-process images: headers say the size */
#define NAMES_BUDGET (256ull << 20) /* bytes decompressed to list kernel names */
#define NVRTC_SOURCE_MAX (64u << 20)

typedef struct {
    uint32_t n, cap;
    char **v;
} names_t;

typedef struct code_entry {
    uint32_t id;
    sg_image_kind_t kind;
    const uint8_t *bytes; /* NULL when not kept */
    size_t size;
    bool owned, hashed, names_done;
    char hash[17];
    char *options, *note, *lowered;
    char origin[112];
    uint32_t nvrtc_source; /* entry id of the NVRTC program it was compiled from */
    uint32_t ptx_entry;    /* cubins: entry id of the PTX it was compiled from (Triton) */
    names_t names;
    UT_hash_handle hh_hash, hh_ptr;
} code_entry_t;

enum { H_MODULE = 1, H_LIBRARY = 2 };

typedef struct {
    uint64_t handle;
    uint32_t entry;
    uint8_t kind;
    UT_hash_handle hh;
} handle_t;

typedef struct {
    uint64_t kernel, library;
    UT_hash_handle hh;
} kernel_t;

typedef struct {
    char *name;
    uint32_t n, cap;
    uint64_t *kernels;
    UT_hash_handle hh;
} byname_t;

typedef struct {
    char hash[17];
    uint32_t source;
    UT_hash_handle hh;
} compiled_t;

/* Resolved kernels (function or kernel handle -> entry, SG_NONE for "not
 * found"), so a graph of 10k launches of a few kernels resolves each once.
 * Cleared when a module or library is unloaded (handles get reused). */
typedef struct {
    uint64_t handle;
    uint32_t entry;
    int how;
    UT_hash_handle hh;
} fcache_t;
#define FCACHE_MAX 65536u

typedef struct {
    uint64_t prog;
    char *src, *name;
    char *exprs;
    int n_headers;
    uint32_t entry; /* source entry after compile, SG_NONE before */
    UT_hash_handle hh;
} prog_t;

enum {
    L_MODULE_LOAD,
    L_MODULE_DATA,
    L_MODULE_DATA_EX,
    L_MODULE_FATBIN,
    L_LIBRARY_DATA,
    L_LIBRARY_FILE,
    L_LINK,
    L_NVRTC,
    L_ELF_SCAN,
    L_COUNT
};
static const char *const load_names[L_COUNT] = {
    "cuModuleLoad",      "cuModuleLoadData",      "cuModuleLoadDataEx", "cuModuleLoadFatBinary",
    "cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLinkComplete",     "nvrtc",
    "elf-scan"};
enum { R_MODULE, R_KERNEL, R_NAME, R_SCAN, R_NONE, R_COUNT };
static const char *const resolve_names[R_COUNT] = {"module", "library-kernel", "kernel-name",
                                                   "elf-scan", "unresolved"};

static struct {
    pthread_mutex_t lock;
    code_entry_t **e;
    uint32_t n, cap;
    code_entry_t *by_hash, *by_ptr;
    handle_t *handles;
    kernel_t *kernels;
    byname_t *by_name;
    compiled_t *compiled;
    prog_t *progs;
    fcache_t *fcache;
    uint32_t n_fcache;
    uint64_t copied_bytes, skipped_bytes, names_budget;
    uint32_t skipped;
    uint32_t triton_found, triton_missed; /* PTX for loaded cubins from Triton's cache */
    uint64_t loads[L_COUNT], resolved[R_COUNT];
    unsigned long long scanned_adds; /* dlpi_adds at the last ELF scan */
    /* loaded ELF segments, to tell borrowed images from heap ones */
    struct seg {
        uint64_t start, end;
    } * segs;
    uint32_t n_segs, cap_segs;
    unsigned long long segs_adds;
} C;

/* ---- entries ------------------------------------------------------------------------ */

static void names_add(names_t *l, const char *s)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) return;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return;
        l->v = v;
        l->cap = cap;
    }
    char *d = strdup(s);
    if (d) l->v[l->n++] = d;
}

static bool names_has(const names_t *l, const char *s)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) return true;
    return false;
}

static code_entry_t *entry_new(sg_image_kind_t kind, const char *origin)
{
    if (C.n == C.cap) {
        uint32_t cap = C.cap ? C.cap * 2 : 64;
        code_entry_t **v = realloc(C.e, cap * sizeof *v);
        if (!v) return NULL;
        C.e = v;
        C.cap = cap;
    }
    code_entry_t *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->id = C.n;
    e->kind = kind;
    e->nvrtc_source = SG_NONE;
    e->ptx_entry = SG_NONE;
    snprintf(e->origin, sizeof e->origin, "%s", origin);
    C.e[C.n++] = e;
    return e;
}

static void entry_hash(code_entry_t *e)
{
    if (e->hashed || !e->bytes) return;
    sg_code_hash(e->bytes, e->size, e->hash);
    e->hashed = true;
    code_entry_t *old = NULL;
    HASH_FIND(hh_hash, C.by_hash, e->hash, 16, old);
    if (!old) HASH_ADD(hh_hash, C.by_hash, hash, 16, e);
}

static sg_image_kind_t kind_of(sg_code_format_t f)
{
    switch (f) {
    case SG_CODE_FORMAT_FATBIN:
        return SG_IMAGE_FATBIN;
    case SG_CODE_FORMAT_CUBIN:
        return SG_IMAGE_CUBIN;
    case SG_CODE_FORMAT_PTX:
        return SG_IMAGE_PTX;
    default:
        return SG_IMAGE_UNKNOWN;
    }
}

/* Loaded ELF segments (refreshed when objects come and go). */
static int seg_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (C.n_segs == C.cap_segs) {
            uint32_t cap = C.cap_segs ? C.cap_segs * 2 : 256;
            struct seg *v = realloc(C.segs, cap * sizeof *v);
            if (!v) return 1;
            C.segs = v;
            C.cap_segs = cap;
        }
        C.segs[C.n_segs].start = info->dlpi_addr + ph->p_vaddr;
        C.segs[C.n_segs].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        C.n_segs++;
    }
    C.segs_adds = info->dlpi_adds;
    return 0;
}

/* Bytes from p to the end of the loaded segment holding it, 0 if none. */
static uint64_t in_loaded_object(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    for (int attempt = 0; attempt < 2; attempt++) {
        for (uint32_t i = 0; i < C.n_segs; i++)
            if (a >= C.segs[i].start && a < C.segs[i].end) return C.segs[i].end - a;
        unsigned long long before = C.segs_adds;
        C.n_segs = 0;
        dl_iterate_phdr(seg_cb, NULL);
        if (attempt == 0 && C.segs_adds == before && C.n_segs) break;
    }
    return 0;
}

/* An image held in memory that may go away: found by hash, else a new
 * entry with a copy (up to SGCAP_CODE_MAX_BYTES in all). *fresh says which. */
static code_entry_t *record_bytes(sg_image_kind_t kind, const char *origin, const void *bytes,
                                  size_t size, bool *fresh)
{
    char hash[17];
    sg_code_hash(bytes, size, hash);
    code_entry_t *e = NULL;
    *fresh = false;
    HASH_FIND(hh_hash, C.by_hash, hash, 16, e);
    if (e) return e;
    e = entry_new(kind, origin);
    if (!e) return NULL;
    *fresh = true;
    memcpy(e->hash, hash, sizeof hash);
    e->hashed = true;
    e->size = size;
    HASH_ADD(hh_hash, C.by_hash, hash, 16, e);
    if (C.copied_bytes + size <= sg_shim.cfg.code_max_bytes) {
        uint8_t *copy = malloc(size);
        if (copy) {
            memcpy(copy, bytes, size);
            e->bytes = copy;
            e->owned = true;
            C.copied_bytes += size;
        }
    }
    if (!e->bytes) {
        C.skipped++;
        C.skipped_bytes += size;
        e->note = strdup("bytes not kept: SGCAP_CODE_MAX_BYTES reached");
        sg_shim_log("code: %s image %s (%zu bytes) not kept: SGCAP_CODE_MAX_BYTES=%" PRIu64
                    " reached",
                    origin, hash, (size_t)size, sg_shim.cfg.code_max_bytes);
    }
    return e;
}

/* The PTX a cubin was compiled from, found in Triton's cache (triton.c),
 * becomes an entry of its own that the cubin links to. */
static void link_ptx(code_entry_t *cubin, char *ptx, size_t len, const char *where)
{
    char origin[112];
    const char *base = strrchr(where, '/');
    snprintf(origin, sizeof origin, "Triton's cache (%s)", base ? base + 1 : where);
    bool fresh = false;
    code_entry_t *p = record_bytes(SG_IMAGE_PTX, origin, ptx, len, &fresh);
    free(ptx);
    if (!p || p == cubin) return;
    cubin->ptx_entry = p->id;
    C.triton_found++;
}

static void triton_in_cache(code_entry_t *e, const void *cubin, size_t size)
{
    sg_name_list_t l;
    memset(&l, 0, sizeof l);
    if (sg_elf_list_kernels(cubin, size, &l) != SG_OK || l.n != 1) { /* Triton: one kernel */
        sg_name_list_free(&l);
        return;
    }
    char *ptx = NULL, where[4096];
    size_t len = 0;
    if (sg_triton_ptx_in_cache(l.names[0], cubin, size, &ptx, &len, where, sizeof where) == SG_OK)
        link_ptx(e, ptx, len, where);
    else if (strncmp(l.names[0], "triton_", 7) == 0)
        C.triton_missed++; /* looks like Triton's, and its cache did not have it */
    sg_name_list_free(&l);
}

/* Record an in-memory image (the pointer a load call got). */
static code_entry_t *record_memory(const void *image, const char *origin, int load)
{
    if (!image) return NULL;
    C.loads[load]++;
    uint64_t room = in_loaded_object(image);
    uint64_t size = 0;
    sg_code_format_t f = sg_code_image_sniff(image, room ? room : SNIFF_CAP, &size);
    if (f == SG_CODE_FORMAT_WRAPPER) {
        sg_fatbin_wrapper_t w;
        if (sg_fatbin_wrapper_decode(image, SG_FATBIN_WRAPPER_SIZE, &w) != SG_OK || !w.data)
            return NULL;
        image = (const void *)(uintptr_t)w.data;
        room = in_loaded_object(image);
        f = sg_code_image_sniff(image, room ? room : SNIFF_CAP, &size);
    }
    if (f == SG_CODE_FORMAT_UNKNOWN || size == 0) {
        sg_shim_log("code: %s: image format not recognised: not recorded", origin);
        return NULL;
    }
    if (room) {
        /* Borrowed: one entry per address. */
        code_entry_t *e = NULL;
        HASH_FIND(hh_ptr, C.by_ptr, &image, sizeof image, e);
        if (e) return e;
        e = entry_new(kind_of(f), origin);
        if (!e) return NULL;
        e->bytes = image;
        e->size = size;
        HASH_ADD(hh_ptr, C.by_ptr, bytes, sizeof e->bytes, e);
        return e;
    }
    /* Heap memory may go away after the call: hash now, copy if new. */
    bool fresh = false;
    code_entry_t *e = record_bytes(kind_of(f), origin, image, size, &fresh);
    if (!e || !fresh) return e;
    compiled_t *src = NULL;
    HASH_FIND(hh, C.compiled, e->hash, 16, src);
    if (src) e->nvrtc_source = src->source;
    if (e->kind == SG_IMAGE_CUBIN && e->nvrtc_source == SG_NONE) triton_in_cache(e, image, size);
    return e;
}

static code_entry_t *record_file(const char *path, const char *api, int load)
{
    C.loads[load]++;
    if (!path) return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
        if (fd >= 0) close(fd);
        sg_shim_log("code: %s %s: cannot read the file back: not recorded", api, path);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return NULL;
    uint64_t isize = 0;
    sg_code_format_t f = sg_code_image_sniff(map, size, &isize);
    char origin[112];
    const char *base = strrchr(path, '/');
    snprintf(origin, sizeof origin, "%s %s", api, base ? base + 1 : path);
    code_entry_t *e = NULL;
    if (f != SG_CODE_FORMAT_UNKNOWN && f != SG_CODE_FORMAT_WRAPPER) {
        /* Record the file's bytes as an image (the image, not the whole file,
         * when its headers say it is shorter). */
        if (isize == 0 || isize > size) isize = size;
        bool fresh = false;
        e = record_bytes(kind_of(f), origin, map, isize, &fresh);
        if (e && fresh && e->kind == SG_IMAGE_CUBIN) {
            /* Inductor loads Triton's cubin from Triton's cache by path. */
            char *ptx = NULL, where[4096];
            size_t len = 0;
            if (sg_triton_ptx_beside(path, &ptx, &len, where, sizeof where) == SG_OK)
                link_ptx(e, ptx, len, where);
            else
                triton_in_cache(e, map, isize);
        }
    } else {
        sg_shim_log("code: %s: not a fatbin, cubin or PTX file: not recorded", origin);
    }
    munmap(map, size);
    return e;
}

static void map_handle(uint64_t handle, code_entry_t *e, uint8_t kind)
{
    if (!handle || !e) return;
    handle_t *h = NULL;
    HASH_FIND(hh, C.handles, &handle, sizeof handle, h);
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h) return;
        h->handle = handle;
        HASH_ADD(hh, C.handles, handle, sizeof h->handle, h);
    }
    h->entry = e->id;
    h->kind = kind;
}

static void fcache_clear(void)
{
    fcache_t *f, *tmp;
    HASH_ITER(hh, C.fcache, f, tmp)
    {
        HASH_DEL(C.fcache, f);
        free(f);
    }
    C.n_fcache = 0;
}

static void unmap_handle(uint64_t handle)
{
    fcache_clear();
    sg_kinfo_invalidate(); /* its function handles may be reused */
    handle_t *h = NULL;
    HASH_FIND(hh, C.handles, &handle, sizeof handle, h);
    if (h) {
        HASH_DEL(C.handles, h);
        free(h);
    }
    if (handle == 0) return;
    kernel_t *k, *tmp;
    HASH_ITER(hh, C.kernels, k, tmp)
    {
        if (k->library != handle) continue;
        HASH_DEL(C.kernels, k);
        free(k);
    }
}

static char *jit_options(unsigned n, const CUjit_option *opts)
{
    if (!n || !opts) return NULL;
    char buf[512];
    size_t o = (size_t)snprintf(buf, sizeof buf, "jit options:");
    for (unsigned i = 0; i < n && o + 8 < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, " %d", (int)opts[i]);
    return strdup(buf);
}

/* ---- module family -------------------------------------------------------------------- */

void sg_code_on_module(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    atomic_store_explicit(&sg_shim.cuda_seen, 1, memory_order_relaxed);
    if (phase == SG_PHASE_BEFORE) {
        if (c->proto == SG_FN_cuModuleUnload || c->proto == SG_FN_cuLibraryUnload) {
            uint64_t h = c->proto == SG_FN_cuModuleUnload
                             ? (uint64_t)(uintptr_t)SG_CALL_ARGS(c, cuModuleUnload)->hmod
                             : (uint64_t)(uintptr_t)SG_CALL_ARGS(c, cuLibraryUnload)->library;
            pthread_mutex_lock(&C.lock);
            unmap_handle(h);
            pthread_mutex_unlock(&C.lock);
        }
        return;
    }
    if (c->result != CUDA_SUCCESS) return;
    pthread_mutex_lock(&C.lock);
    switch (c->proto) {
    case SG_FN_cuModuleLoad: {
        sg_args_cuModuleLoad_t *a = SG_CALL_ARGS(c, cuModuleLoad);
        code_entry_t *e = record_file(a->fname, "cuModuleLoad", L_MODULE_LOAD);
        if (a->module) map_handle((uint64_t)(uintptr_t)*a->module, e, H_MODULE);
        break;
    }
    case SG_FN_cuModuleLoadData: {
        sg_args_cuModuleLoadData_t *a = SG_CALL_ARGS(c, cuModuleLoadData);
        code_entry_t *e = record_memory(a->image, "cuModuleLoadData", L_MODULE_DATA);
        if (a->module) map_handle((uint64_t)(uintptr_t)*a->module, e, H_MODULE);
        break;
    }
    case SG_FN_cuModuleLoadDataEx: {
        sg_args_cuModuleLoadDataEx_t *a = SG_CALL_ARGS(c, cuModuleLoadDataEx);
        code_entry_t *e = record_memory(a->image, "cuModuleLoadDataEx", L_MODULE_DATA_EX);
        if (e && !e->options) e->options = jit_options(a->numOptions, a->options);
        if (a->module) map_handle((uint64_t)(uintptr_t)*a->module, e, H_MODULE);
        break;
    }
    case SG_FN_cuModuleLoadFatBinary: {
        sg_args_cuModuleLoadFatBinary_t *a = SG_CALL_ARGS(c, cuModuleLoadFatBinary);
        code_entry_t *e = record_memory(a->fatCubin, "cuModuleLoadFatBinary", L_MODULE_FATBIN);
        if (a->module) map_handle((uint64_t)(uintptr_t)*a->module, e, H_MODULE);
        break;
    }
    case SG_FN_cuLibraryLoadData: {
        sg_args_cuLibraryLoadData_t *a = SG_CALL_ARGS(c, cuLibraryLoadData);
        code_entry_t *e = record_memory(a->code, "cuLibraryLoadData", L_LIBRARY_DATA);
        if (e && !e->options) e->options = jit_options(a->numJitOptions, a->jitOptions);
        if (a->library) map_handle((uint64_t)(uintptr_t)*a->library, e, H_LIBRARY);
        break;
    }
    case SG_FN_cuLibraryLoadFromFile: {
        sg_args_cuLibraryLoadFromFile_t *a = SG_CALL_ARGS(c, cuLibraryLoadFromFile);
        code_entry_t *e = record_file(a->fileName, "cuLibraryLoadFromFile", L_LIBRARY_FILE);
        if (a->library) map_handle((uint64_t)(uintptr_t)*a->library, e, H_LIBRARY);
        break;
    }
    case SG_FN_cuLinkComplete: {
        sg_args_cuLinkComplete_t *a = SG_CALL_ARGS(c, cuLinkComplete);
        if (a->cubinOut && *a->cubinOut) record_memory(*a->cubinOut, "cuLinkComplete", L_LINK);
        break;
    }
    case SG_FN_cuLibraryGetKernel: {
        sg_args_cuLibraryGetKernel_t *a = SG_CALL_ARGS(c, cuLibraryGetKernel);
        if (!a->pKernel || !*a->pKernel) break;
        uint64_t k = (uint64_t)(uintptr_t)*a->pKernel;
        kernel_t *km = NULL;
        HASH_FIND(hh, C.kernels, &k, sizeof k, km);
        if (!km && (km = calloc(1, sizeof *km)) != NULL) {
            km->kernel = k;
            HASH_ADD(hh, C.kernels, kernel, sizeof km->kernel, km);
        }
        if (km) km->library = (uint64_t)(uintptr_t)a->library;
        if (a->name) {
            byname_t *bn = NULL;
            HASH_FIND_STR(C.by_name, a->name, bn);
            if (!bn && (bn = calloc(1, sizeof *bn)) != NULL) {
                bn->name = strdup(a->name);
                if (bn->name)
                    HASH_ADD_KEYPTR(hh, C.by_name, bn->name, strlen(bn->name), bn);
                else {
                    free(bn);
                    bn = NULL;
                }
            }
            bool have = false;
            for (uint32_t i = 0; bn && i < bn->n; i++)
                have |= bn->kernels[i] == k;
            if (bn && !have && bn->n < 4096) {
                if (bn->n == bn->cap) {
                    uint32_t cap = bn->cap ? bn->cap * 2 : 2;
                    uint64_t *v = realloc(bn->kernels, cap * sizeof *v);
                    if (v) {
                        bn->kernels = v;
                        bn->cap = cap;
                    }
                }
                if (bn->n < bn->cap) bn->kernels[bn->n++] = k;
            }
        }
        break;
    }
    default:
        break;
    }
    pthread_mutex_unlock(&C.lock);
}

/* ---- NVRTC ------------------------------------------------------------------------------ */

static void append(char **s, const char *sep, const char *add)
{
    size_t a = *s ? strlen(*s) : 0, b = strlen(sep), c = strlen(add);
    if (a + b + c > 65000) return; /* the bundle's string bound */
    char *p = realloc(*s, a + b + c + 1);
    if (!p) return;
    memcpy(p + a, a ? sep : "", a ? b : 0);
    size_t o = a + (a ? b : 0);
    memcpy(p + o, add, c + 1);
    *s = p;
}

static void remember_output(uint32_t source, const void *p, size_t n)
{
    if (!p || !n) return;
    compiled_t *cc = calloc(1, sizeof *cc);
    if (!cc) return;
    sg_code_hash(p, n, cc->hash);
    cc->source = source;
    compiled_t *old = NULL;
    HASH_FIND(hh, C.compiled, cc->hash, 16, old);
    if (old) {
        old->source = source;
        free(cc);
        return;
    }
    HASH_ADD(hh, C.compiled, hash, 16, cc);
    /* Output already loaded (rare: load before we saw the compile). */
    code_entry_t *e = NULL;
    HASH_FIND(hh_hash, C.by_hash, cc->hash, 16, e);
    if (e && e->nvrtc_source == SG_NONE) e->nvrtc_source = source;
}

static void nvrtc_compiled(sg_call_t *c)
{
    sg_args_nvrtcCompileProgram_t *a = SG_CALL_ARGS(c, nvrtcCompileProgram);
    uint64_t key = (uint64_t)(uintptr_t)a->prog;
    prog_t *p = NULL;
    HASH_FIND(hh, C.progs, &key, sizeof key, p);
    if (!p || !p->src) return;
    char *opts = NULL;
    for (int i = 0; a->options && i < a->numOptions; i++)
        if (a->options[i]) append(&opts, " ", a->options[i]);
    size_t len = strlen(p->src);
    char hash[17];
    sg_code_hash(p->src, len, hash);
    code_entry_t *e = NULL;
    /* Same source with other options is another program: key by both. */
    for (uint32_t i = 0; i < C.n && !e; i++) {
        code_entry_t *x = C.e[i];
        if (x->kind == SG_IMAGE_NVRTC && memcmp(x->hash, hash, 16) == 0 &&
            ((!x->options && !opts) || (x->options && opts && strcmp(x->options, opts) == 0)))
            e = x;
    }
    if (!e) {
        C.loads[L_NVRTC]++;
        e = entry_new(SG_IMAGE_NVRTC, p->name ? p->name : "nvrtc");
        if (!e) {
            free(opts);
            return;
        }
        e->bytes = (const uint8_t *)p->src;
        e->size = len;
        e->owned = true;
        p->src = NULL; /* the entry owns it now */
        memcpy(e->hash, hash, sizeof hash);
        e->hashed = true;
        e->options = opts;
        opts = NULL;
        if (p->n_headers > 0) {
            char note[160];
            snprintf(note, sizeof note, "%d headers passed to nvrtcCreateProgram are not recorded",
                     p->n_headers);
            e->note = strdup(note);
        }
        C.copied_bytes += len;
    }
    free(opts);
    p->entry = e->id;
    if (p->exprs) {
        e->lowered = p->exprs;
        p->exprs = NULL;
    }
    /* Remember what it compiled to, so the module load of that PTX or
     * cubin links back to this source. */
    __typeof__(&nvrtcGetPTXSize) ptx_size = SG_REAL(nvrtcGetPTXSize);
    __typeof__(&nvrtcGetPTX) ptx = SG_REAL(nvrtcGetPTX);
    __typeof__(&nvrtcGetCUBINSize) cubin_size = SG_REAL(nvrtcGetCUBINSize);
    __typeof__(&nvrtcGetCUBIN) cubin = SG_REAL(nvrtcGetCUBIN);
    size_t n = 0;
    if (ptx_size && ptx && ptx_size(a->prog, &n) == NVRTC_SUCCESS && n > 1 && n < (1u << 30)) {
        char *buf = malloc(n);
        if (buf && ptx(a->prog, buf) == NVRTC_SUCCESS) remember_output(e->id, buf, strnlen(buf, n));
        free(buf);
    }
    n = 0;
    if (cubin_size && cubin && cubin_size(a->prog, &n) == NVRTC_SUCCESS && n > 0 &&
        n < (1u << 30)) {
        char *buf = malloc(n);
        if (buf && cubin(a->prog, buf) == NVRTC_SUCCESS) {
            uint64_t isize = 0;
            if (sg_code_image_sniff(buf, n, &isize) != SG_CODE_FORMAT_CUBIN || !isize) isize = n;
            remember_output(e->id, buf, isize);
        }
        free(buf);
    }
}

static void prog_free(prog_t *p)
{
    free(p->src);
    free(p->name);
    free(p->exprs);
    free(p);
}

void sg_code_on_nvrtc(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase == SG_PHASE_BEFORE) {
        if (c->proto == SG_FN_nvrtcDestroyProgram) {
            nvrtcProgram *pp = SG_CALL_ARGS(c, nvrtcDestroyProgram)->prog;
            if (!pp) return;
            uint64_t key = (uint64_t)(uintptr_t)*pp;
            pthread_mutex_lock(&C.lock);
            prog_t *p = NULL;
            HASH_FIND(hh, C.progs, &key, sizeof key, p);
            if (p) {
                HASH_DEL(C.progs, p);
                prog_free(p);
            }
            pthread_mutex_unlock(&C.lock);
        }
        return;
    }
    if (c->result != NVRTC_SUCCESS) return;
    pthread_mutex_lock(&C.lock);
    switch (c->proto) {
    case SG_FN_nvrtcCreateProgram: {
        sg_args_nvrtcCreateProgram_t *a = SG_CALL_ARGS(c, nvrtcCreateProgram);
        if (!a->prog || !a->src) break;
        size_t len = strnlen(a->src, NVRTC_SOURCE_MAX + 1);
        if (len > NVRTC_SOURCE_MAX) {
            sg_shim_log("code: NVRTC program source over %u bytes: not recorded", NVRTC_SOURCE_MAX);
            break;
        }
        prog_t *p = calloc(1, sizeof *p);
        if (!p) break;
        p->prog = (uint64_t)(uintptr_t)*a->prog;
        p->src = strndup(a->src, len);
        p->name = a->name ? strdup(a->name) : NULL;
        p->n_headers = a->numHeaders;
        p->entry = SG_NONE;
        prog_t *old = NULL;
        HASH_FIND(hh, C.progs, &p->prog, sizeof p->prog, old);
        if (old) {
            HASH_DEL(C.progs, old);
            prog_free(old);
        }
        HASH_ADD(hh, C.progs, prog, sizeof p->prog, p);
        break;
    }
    case SG_FN_nvrtcCompileProgram:
        nvrtc_compiled(c);
        break;
    case SG_FN_nvrtcAddNameExpression:
    case SG_FN_nvrtcGetLoweredName: {
        uint64_t key;
        const char *expr;
        const char *lowered = NULL;
        if (c->proto == SG_FN_nvrtcAddNameExpression) {
            key = (uint64_t)(uintptr_t)SG_CALL_ARGS(c, nvrtcAddNameExpression)->prog;
            expr = SG_CALL_ARGS(c, nvrtcAddNameExpression)->name_expression;
        } else {
            sg_args_nvrtcGetLoweredName_t *a = SG_CALL_ARGS(c, nvrtcGetLoweredName);
            key = (uint64_t)(uintptr_t)a->prog;
            expr = a->name_expression;
            lowered = a->lowered_name ? *a->lowered_name : NULL;
            if (!lowered) break; /* only the mapping is worth keeping */
        }
        prog_t *p = NULL;
        HASH_FIND(hh, C.progs, &key, sizeof key, p);
        if (!p || !expr) break;
        char item[1024];
        if (lowered)
            snprintf(item, sizeof item, "%s -> %s", expr, lowered);
        else
            snprintf(item, sizeof item, "%s", expr);
        if (lowered && p->entry != SG_NONE)
            append(&C.e[p->entry]->lowered, "; ", item);
        else if (!lowered)
            append(&p->exprs, "; ", item);
        break;
    }
    default:
        break;
    }
    pthread_mutex_unlock(&C.lock);
}

/* ---- kernel names in images (for the name fallbacks) ------------------------------------- */

static void list_names(code_entry_t *e)
{
    if (e->names_done) return;
    e->names_done = true;
    if (!e->bytes) return;
    sg_name_list_t l;
    memset(&l, 0, sizeof l);
    if (e->kind == SG_IMAGE_CUBIN) {
        if (sg_elf_list_kernels(e->bytes, e->size, &l) == SG_OK)
            for (uint32_t i = 0; i < l.n; i++)
                names_add(&e->names, l.names[i]);
        sg_name_list_free(&l);
        return;
    }
    if (e->kind == SG_IMAGE_PTX) {
        if (sg_ptx_list_entries((const char *)e->bytes, e->size, &l) == SG_OK)
            for (uint32_t i = 0; i < l.n; i++)
                names_add(&e->names, l.names[i]);
        sg_name_list_free(&l);
        return;
    }
    if (e->kind != SG_IMAGE_FATBIN) return;
    sg_fatbin_t fb;
    if (sg_fatbin_parse(e->bytes, e->size, 0, &fb, NULL, 0) != SG_OK) return;
    for (uint32_t i = 0; i < fb.n_entries; i++) {
        const sg_fatbin_entry_t *fe = &fb.entries[i];
        if (fe->kind != SG_FATBIN_ENTRY_ELF && fe->kind != SG_FATBIN_ENTRY_PTX) continue;
        uint64_t cost = fe->uncompressed_size ? fe->uncompressed_size : fe->payload_size;
        if (cost > C.names_budget) continue;
        uint8_t *img = NULL;
        size_t len = 0;
        if (sg_fatbin_extract(&fb, i, 0, &img, &len) != SG_OK) continue;
        C.names_budget -= cost;
        memset(&l, 0, sizeof l);
        int rc = fe->kind == SG_FATBIN_ENTRY_ELF ? sg_elf_list_kernels(img, len, &l)
                                                 : sg_ptx_list_entries((const char *)img, len, &l);
        if (rc == SG_OK)
            for (uint32_t k = 0; k < l.n; k++)
                names_add(&e->names, l.names[k]);
        sg_name_list_free(&l);
        free(img);
        /* One arch holds every kernel of the image: stop at the first. */
        if (e->names.n) break;
    }
    sg_fatbin_free(&fb);
}

/* Scan the .nv_fatbin section of every loaded ELF object not yet scanned:
 * one borrowed entry per fatbin container. */
typedef struct {
    const char *name;
    uint64_t base;
} obj_t;

static int obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    obj_t **list = data;
    size_t n = 0;
    while ((*list)[n].name)
        n++;
    obj_t *v = realloc(*list, (n + 2) * sizeof *v);
    if (!v) return 1;
    v[n].name =
        info->dlpi_name && info->dlpi_name[0] ? strdup(info->dlpi_name) : strdup("/proc/self/exe");
    v[n].base = info->dlpi_addr;
    v[n + 1].name = NULL;
    *list = v;
    C.scanned_adds = info->dlpi_adds;
    return 0;
}

static void scan_object(const obj_t *o)
{
    const char *base = strrchr(o->name, '/');
    base = base ? base + 1 : o->name;
    if (strncmp(base, "libsgcap", 8) == 0 || strncmp(base, "libc.so", 7) == 0 ||
        strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "linux-vdso", 10) == 0)
        return;
    int fd = open(o->name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 64) {
        close(fd);
        return;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    sg_elf_section_t sec;
    if (sg_elf_find_section(map, (size_t)st.st_size, ".nv_fatbin", &sec) == SG_OK && sec.addr &&
        sec.size && sec.type != SHT_NOBITS) {
        const uint8_t *mem = (const uint8_t *)(uintptr_t)(o->base + sec.addr);
        /* The section as the loader mapped it; walk its containers. */
        if (in_loaded_object(mem) >= sec.size) {
            uint64_t off = 0;
            while (off + SG_FATBIN_CONTAINER_SIZE <= sec.size) {
                const uint8_t *p = mem + off;
                uint32_t magic;
                memcpy(&magic, p, 4);
                if (magic != SG_FATBIN_MAGIC) {
                    off += 8; /* padding between containers */
                    continue;
                }
                size_t len = 0;
                if (sg_fatbin_span(p, sec.size - off, &len) != SG_OK || len == 0) break;
                code_entry_t *e = NULL;
                HASH_FIND(hh_ptr, C.by_ptr, &p, sizeof p, e);
                if (!e) {
                    char origin[112];
                    snprintf(origin, sizeof origin, ".nv_fatbin of %s", base);
                    e = entry_new(SG_IMAGE_FATBIN, origin);
                    if (!e) break;
                    e->bytes = p;
                    e->size = len;
                    HASH_ADD(hh_ptr, C.by_ptr, bytes, sizeof e->bytes, e);
                    C.loads[L_ELF_SCAN]++;
                }
                off += len;
            }
        }
    }
    munmap(map, (size_t)st.st_size);
}

static void scan_loaded_objects(void)
{
    obj_t *list = calloc(1, sizeof *list);
    if (!list) return;
    unsigned long long before = C.scanned_adds;
    dl_iterate_phdr(obj_cb, &list);
    if (before == 0 || C.scanned_adds != before)
        for (size_t i = 0; list[i].name; i++)
            scan_object(&list[i]);
    for (size_t i = 0; list[i].name; i++)
        free((void *)list[i].name);
    free(list);
}

/* ---- kernel -> image ----------------------------------------------------------------------- */

static code_entry_t *entry_of_handle(uint64_t h)
{
    handle_t *hm = NULL;
    HASH_FIND(hh, C.handles, &h, sizeof h, hm);
    return hm && hm->entry < C.n ? C.e[hm->entry] : NULL;
}

static code_entry_t *resolve(CUfunction func, CUkernel kern, const char *name, int *how)
{
    CUmodule mod = NULL;
    __typeof__(&cuFuncGetModule) get_mod = SG_REAL(cuFuncGetModule);
    if (func && get_mod && get_mod(&mod, func) == CUDA_SUCCESS && mod) {
        code_entry_t *e = entry_of_handle((uint64_t)(uintptr_t)mod);
        if (e) {
            *how = R_MODULE;
            return e;
        }
    }
    /* The handle as a CUkernel (given, or a CUkernel passed as CUfunction). */
    for (int i = 0; i < 2; i++) {
        uint64_t k = i == 0 ? (uint64_t)(uintptr_t)kern : (uint64_t)(uintptr_t)func;
        if (!k) continue;
        kernel_t *km = NULL;
        HASH_FIND(hh, C.kernels, &k, sizeof k, km);
        code_entry_t *e = km ? entry_of_handle(km->library) : NULL;
        if (e) {
            *how = R_KERNEL;
            return e;
        }
    }
    if (name && *name) {
        byname_t *bn = NULL;
        HASH_FIND_STR(C.by_name, name, bn);
        code_entry_t *found = NULL;
        if (bn && bn->n == 1) {
            kernel_t *km = NULL;
            HASH_FIND(hh, C.kernels, &bn->kernels[0], sizeof bn->kernels[0], km);
            found = km ? entry_of_handle(km->library) : NULL;
        } else if (bn && func) {
            __typeof__(&cuKernelGetFunction) kf = SG_REAL(cuKernelGetFunction);
            for (uint32_t i = 0; kf && i < bn->n && !found; i++) {
                CUfunction f2 = NULL;
                if (kf(&f2, (CUkernel)(uintptr_t)bn->kernels[i]) == CUDA_SUCCESS && f2 == func) {
                    kernel_t *km = NULL;
                    HASH_FIND(hh, C.kernels, &bn->kernels[i], sizeof bn->kernels[i], km);
                    found = km ? entry_of_handle(km->library) : NULL;
                }
            }
        }
        if (found) {
            if (mod) map_handle((uint64_t)(uintptr_t)mod, found, H_MODULE);
            *how = R_NAME;
            return found;
        }
        /* Last resort: the kernel by name in every image we know, after
         * scanning loaded objects for fatbins nobody loaded through a hook. */
        scan_loaded_objects();
        code_entry_t *match = NULL;
        uint32_t matches = 0;
        for (uint32_t i = 0; i < C.n; i++) {
            code_entry_t *e = C.e[i];
            if (e->kind == SG_IMAGE_NVRTC) continue;
            list_names(e);
            if (names_has(&e->names, name)) {
                if (!match) match = e;
                matches++;
            }
        }
        if (match) {
            if (matches == 1 && mod) map_handle((uint64_t)(uintptr_t)mod, match, H_MODULE);
            *how = R_SCAN;
            return match;
        }
    }
    *how = R_NONE;
    return NULL;
}

static const char *ext_of(sg_image_kind_t k)
{
    switch (k) {
    case SG_IMAGE_FATBIN:
        return "fatbin";
    case SG_IMAGE_CUBIN:
        return "cubin";
    case SG_IMAGE_PTX:
        return "ptx";
    case SG_IMAGE_NVRTC:
        return "cu";
    default:
        return "bin";
    }
}

static void add_arch(uint32_t **v, uint32_t *n, uint32_t arch)
{
    for (uint32_t i = 0; i < *n; i++)
        if ((*v)[i] == arch) return;
    uint32_t *p = realloc(*v, (*n + 1) * sizeof *p);
    if (!p) return;
    p[(*n)++] = arch;
    *v = p;
    for (uint32_t i = *n - 1; i > 0 && p[i - 1] > p[i]; i--) { /* keep ascending */
        uint32_t t = p[i];
        p[i] = p[i - 1];
        p[i - 1] = t;
    }
}

static void fill_archs(const code_entry_t *e, sg_image_t *im)
{
    if (!e->bytes) return;
    if (e->kind == SG_IMAGE_FATBIN) {
        sg_fatbin_t fb;
        if (sg_fatbin_parse(e->bytes, e->size, 0, &fb, NULL, 0) != SG_OK) return;
        for (uint32_t i = 0; i < fb.n_entries; i++) {
            const sg_fatbin_entry_t *fe = &fb.entries[i];
            if (fe->kind == SG_FATBIN_ENTRY_PTX)
                add_arch(&im->ptx_archs, &im->n_ptx_archs, fe->arch);
            else if (fe->kind == SG_FATBIN_ENTRY_ELF)
                add_arch(&im->sass_archs, &im->n_sass_archs, fe->arch);
        }
        sg_fatbin_free(&fb);
    } else if (e->kind == SG_IMAGE_CUBIN) {
        uint32_t arch = 0;
        if (sg_elf_cuda_arch(e->bytes, e->size, &arch) == SG_OK)
            add_arch(&im->sass_archs, &im->n_sass_archs, arch);
    } else if (e->kind == SG_IMAGE_PTX) {
        uint32_t arch = 0;
        char suffix = 0;
        if (sg_ptx_target((const char *)e->bytes, e->size, &arch, &suffix) == SG_OK)
            add_arch(&im->ptx_archs, &im->n_ptx_archs, arch);
    }
}

/* The entry as an image of g (found by hash, else added). */
static uint32_t image_in_graph(sg_graph_t *g, code_entry_t *e)
{
    entry_hash(e);
    if (!e->hashed) return SG_NONE;
    sg_graph_t *root = g->root ? g->root : g;
    for (uint32_t i = 0; i < root->n_images; i++)
        if (strcmp(root->images[i].hash, e->hash) == 0) return i;
    uint32_t idx;
    if (sg_graph_add_image(root, e->kind, e->hash, e->size, &idx)) return SG_NONE;
    sg_image_t *im = sg_graph_image(root, idx);
    if (e->bytes) {
        char file[64];
        snprintf(file, sizeof file, "code/%s.%s", e->hash, ext_of(e->kind));
        im->file = strdup(file);
    }
    if (e->options) im->options = strdup(e->options);
    char note[1024] = "";
    size_t o = (size_t)snprintf(note, sizeof note, "loaded by %s", e->origin);
    if (e->note && o < sizeof note)
        o += (size_t)snprintf(note + o, sizeof note - o, "; %s", e->note);
    if (e->lowered && o < sizeof note)
        o += (size_t)snprintf(note + o, sizeof note - o, "; name expressions: %s", e->lowered);
    /* The source goes into this graph's image table too (the table is the
     * bundle's, so sidx is its bundle index) and is linked by index as well as
     * in the note: sgcap inspect --code recompiles it for the PTX that a
     * cubin built by NVRTC (CuPy) lacks. */
    uint32_t sidx = SG_NONE;
    if (e->nvrtc_source != SG_NONE && e->nvrtc_source < C.n && e->nvrtc_source != e->id) {
        code_entry_t *src = C.e[e->nvrtc_source];
        if (src->kind == SG_IMAGE_NVRTC) sidx = image_in_graph(g, src);
        if (sidx != SG_NONE && o < sizeof note)
            snprintf(note + o, sizeof note - o, "; nvrtc-source:%s (image %u)", src->hash, sidx);
        im = sg_graph_image(root, idx); /* the table may have moved */
    }
    /* The PTX Triton compiled this cubin from: an image of its own in this
     * graph's table, linked by index (ptx_image: sgcap inspect --code and
     * fusion take it as the cubin's PTX) and, for people, in the note. */
    uint32_t pidx = SG_NONE;
    if (e->ptx_entry != SG_NONE && e->ptx_entry < C.n && e->ptx_entry != e->id) {
        code_entry_t *ptx = C.e[e->ptx_entry];
        pidx = image_in_graph(g, ptx);
        im = sg_graph_image(root, idx); /* the table may have moved */
        size_t used = strlen(note);
        if (pidx != SG_NONE && used < sizeof note)
            snprintf(note + used, sizeof note - used, "; ptx-source:%s (image %u, %s)", ptx->hash,
                     pidx, ptx->origin);
    }
    /* Images are found by hash; a reader rejects a source_image that is not
     * an nvrtc image other than this one (a ptx_image not a ptx one), so
     * never write such a link. */
    if (sidx == idx || (sidx != SG_NONE && root->images[sidx].kind != SG_IMAGE_NVRTC))
        sidx = SG_NONE;
    if (pidx == idx || (pidx != SG_NONE && root->images[pidx].kind != SG_IMAGE_PTX))
        pidx = SG_NONE;
    im->source_image = sidx;
    im->ptx_image = pidx;
    im->note = strdup(note);
    fill_archs(e, im);
    return idx;
}

uint32_t sg_code_image_for_kernel(sg_graph_t *g, CUfunction func, CUkernel kern, const char *name,
                                  char *why, size_t n)
{
    pthread_mutex_lock(&C.lock);
    int how = R_NONE;
    code_entry_t *e = NULL;
    uint64_t key = func ? (uint64_t)(uintptr_t)func : (uint64_t)(uintptr_t)kern;
    fcache_t *fc = NULL;
    if (key) HASH_FIND(hh, C.fcache, &key, sizeof key, fc);
    if (fc) {
        how = fc->how;
        e = fc->entry < C.n ? C.e[fc->entry] : NULL;
    } else {
        e = resolve(func, kern, name, &how);
        if (key && C.n_fcache >= FCACHE_MAX) fcache_clear();
        if (key && (fc = calloc(1, sizeof *fc)) != NULL) {
            fc->handle = key;
            fc->entry = e ? e->id : SG_NONE;
            fc->how = how;
            HASH_ADD(hh, C.fcache, handle, sizeof fc->handle, fc);
            C.n_fcache++;
        }
    }
    C.resolved[how]++;
    uint32_t idx = SG_NONE;
    if (e) {
        idx = image_in_graph(g, e);
        if (idx == SG_NONE) snprintf(why, n, "code image of the kernel could not be hashed");
    } else {
        snprintf(why, n, "code image not captured (no hooked load holds kernel %.80s)",
                 name && *name ? name : "?");
    }
    pthread_mutex_unlock(&C.lock);
    return idx;
}

/* The entry holding image im's bytes, or NULL. Under C.lock. */
static const code_entry_t *entry_of_image(const sg_image_t *im)
{
    code_entry_t *e = NULL;
    HASH_FIND(hh_hash, C.by_hash, im->hash, 16, e);
    if (!e) { /* an NVRTC source (keyed apart from loads) */
        for (uint32_t k = 0; k < C.n && !e; k++)
            if (C.e[k]->hashed && strcmp(C.e[k]->hash, im->hash) == 0 && C.e[k]->bytes)
                e = C.e[k];
    }
    return e && e->bytes ? e : NULL;
}

int sg_code_image_bytes(const sg_graph_t *g, uint32_t image, const void **bytes, size_t *size)
{
    *bytes = NULL;
    *size = 0;
    const sg_image_t *im = sg_graph_image(g, image);
    if (!im) return SG_ENOENT;
    pthread_mutex_lock(&C.lock);
    const code_entry_t *e = entry_of_image(im);
    if (e) {
        *bytes = e->bytes;
        *size = e->size;
    }
    pthread_mutex_unlock(&C.lock);
    return e ? SG_OK : SG_ENOENT;
}

int sg_code_blobs(const sg_graph_t *g, void **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!g->n_images) return SG_OK;
    sg_bundle_blob_t *b = calloc(g->n_images, sizeof *b);
    if (!b) return SG_ENOMEM;
    size_t m = 0;
    pthread_mutex_lock(&C.lock);
    for (uint32_t i = 0; i < g->n_images; i++) {
        const sg_image_t *im = &g->images[i];
        if (!im->file) continue;
        const code_entry_t *e = entry_of_image(im);
        if (!e) continue;
        b[m].relpath = im->file;
        b[m].data = e->bytes;
        b[m].size = e->size;
        b[m].compress = false;
        m++;
    }
    pthread_mutex_unlock(&C.lock);
    *out = b;
    *n = m;
    return SG_OK;
}

void sg_code_summary(char *buf, size_t n)
{
    bool locked = pthread_mutex_trylock(&C.lock) == 0;
    size_t o =
        (size_t)snprintf(buf, n, "code: %u %s (%" PRIu64 " bytes copied", C.n,
                         sg_plural(C.n, "image", "images"), C.copied_bytes);
    if (C.skipped && o < n)
        o += (size_t)snprintf(buf + o, n - o, ", %u not kept: %" PRIu64 " bytes", C.skipped,
                              C.skipped_bytes);
    if (o < n) o += (size_t)snprintf(buf + o, n - o, "), loads");
    for (int i = 0; i < L_COUNT && o < n; i++)
        if (C.loads[i])
            o += (size_t)snprintf(buf + o, n - o, " %s=%" PRIu64, load_names[i], C.loads[i]);
    if ((C.triton_found || C.triton_missed) && o < n)
        o += (size_t)snprintf(buf + o, n - o, ", Triton PTX found for %u cubins (%u not found)",
                              C.triton_found, C.triton_missed);
    if (o < n) o += (size_t)snprintf(buf + o, n - o, ", kernels by");
    for (int i = 0; i < R_COUNT && o < n; i++)
        if (C.resolved[i])
            o += (size_t)snprintf(buf + o, n - o, " %s=%" PRIu64, resolve_names[i], C.resolved[i]);
    if (locked) pthread_mutex_unlock(&C.lock);
}

void sg_code_atfork_prepare(void)
{
    pthread_mutex_lock(&C.lock);
}

void sg_code_atfork_parent(void)
{
    pthread_mutex_unlock(&C.lock);
}

void sg_code_atfork_child(void)
{
    pthread_mutex_unlock(&C.lock);
}

int sg_code_attach(void)
{
    pthread_mutex_init(&C.lock, NULL);
    C.names_budget = NAMES_BUDGET;
    return 0;
}
