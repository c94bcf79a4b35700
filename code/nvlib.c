/* nvlib.c: NVIDIA's libraries opened at run time, one search list for all
 * (nvlib.h), each library and each table loaded once per process. */
#include "nvlib.h"

#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sonames below and the versioned nvJitLink names in nvlib.h are those
 * of CUDA 13; a toolkit of another major version needs them updated. */
_Static_assert(CUDA_VERSION / 1000 == 13, "code/nvlib: sonames are those of CUDA 13");

typedef struct {
    const char *name;    /* for messages */
    const char *soname;  /* the major version these headers describe */
    bool toolkit;        /* also look in the toolkit's folders */
    const char *subdir;  /* a second folder under a toolkit root, or NULL */
} lib_desc_t;

static const lib_desc_t libs[SG_NVLIB_COUNT] = {
    [SG_NVLIB_CUDA] = {"the CUDA driver", "libcuda.so.1", false, NULL},
    [SG_NVLIB_NVRTC] = {"NVRTC", "libnvrtc.so.13", true, NULL},
    [SG_NVLIB_NVJITLINK] = {"nvJitLink", "libnvJitLink.so.13", true, NULL},
    [SG_NVLIB_CUPTI] = {"CUPTI", "libcupti.so.13", true, "extras/CUPTI/lib64"},
};

const char *sg_nvlib_name(sg_nvlib_t lib)
{
    return (unsigned)lib < SG_NVLIB_COUNT ? libs[lib].name : "an unknown library";
}

/* Appends "dir/soname" (or the bare soname for dir == NULL) unless already
 * listed; counts it even when out is full. */
static void add_candidate(const char *dir, const char *sub, const char *soname, char **out,
                          size_t max, size_t *n)
{
    char path[PATH_MAX];
    if (!dir)
        snprintf(path, sizeof path, "%s", soname);
    else if (sub)
        snprintf(path, sizeof path, "%s/%s/%s", dir, sub, soname);
    else
        snprintf(path, sizeof path, "%s/%s", dir, soname);
    for (size_t i = 0; i < *n && i < max; i++)
        if (out[i] && strcmp(out[i], path) == 0) return;
    if (*n < max) out[*n] = strdup(path);
    (*n)++;
}

size_t sg_nvlib_candidates(sg_nvlib_t lib, const char *exe_dir, const char *cuda_home,
                           const char *cuda_path, char **out, size_t max)
{
    if ((unsigned)lib >= SG_NVLIB_COUNT) return 0;
    const lib_desc_t *d = &libs[lib];
    size_t n = 0;
    if (!d->toolkit) {
        add_candidate(NULL, NULL, d->soname, out, max, &n);
        return n;
    }
    bool have_exe = exe_dir && exe_dir[0];
    if (have_exe) add_candidate(exe_dir, "../lib", d->soname, out, max, &n);
    add_candidate(NULL, NULL, d->soname, out, max, &n);
    if (have_exe) add_candidate(exe_dir, NULL, d->soname, out, max, &n);
    const char *roots[] = {cuda_home, cuda_path, "/usr/local/cuda"};
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++) {
        if (!roots[r] || !roots[r][0]) continue;
        add_candidate(roots[r], "lib64", d->soname, out, max, &n);
        if (d->subdir) add_candidate(roots[r], d->subdir, d->soname, out, max, &n);
    }
    return n;
}

typedef struct {
    bool tried;
    void *handle;
    char err[1024];
} lib_state_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static lib_state_t state[SG_NVLIB_COUNT];

static void copy_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen) snprintf(err, errlen, "%s", msg);
}

#define SG_NVLIB_MAX_CANDIDATES 16

static void open_lib(sg_nvlib_t lib, lib_state_t *s)
{
    const lib_desc_t *d = &libs[lib];
    s->handle = dlopen(d->soname, RTLD_NOW | RTLD_NOLOAD);
    if (s->handle) return;
    char exe[PATH_MAX] = "";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
    } else {
        exe[0] = '\0';
    }
    char *cand[SG_NVLIB_MAX_CANDIDATES] = {0};
    size_t n = sg_nvlib_candidates(lib, exe, getenv("CUDA_HOME"), getenv("CUDA_PATH"), cand,
                                   SG_NVLIB_MAX_CANDIDATES);
    if (n > SG_NVLIB_MAX_CANDIDATES) n = SG_NVLIB_MAX_CANDIDATES;
    /* The list of what was tried, and the first reason other than "not
     * there" (a library that exists but does not load says why). */
    char tried[700] = "", why[256] = "", first[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && !s->handle; i++) {
        if (!cand[i]) continue;
        s->handle = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
        if (s->handle) break;
        const char *e = dlerror();
        if (e && !first[0]) snprintf(first, sizeof first, "%s", e);
        if (e && !why[0] && !strstr(e, "No such file")) snprintf(why, sizeof why, "; %s", e);
        int w = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", cand[i]);
        if (w > 0) used = used + (size_t)w < sizeof tried ? used + (size_t)w : sizeof tried - 1;
    }
    for (size_t i = 0; i < n; i++)
        free(cand[i]);
    if (!s->handle) {
        if (lib == SG_NVLIB_CUDA)
            snprintf(s->err, sizeof s->err,
                     "cannot load the CUDA driver (%s): %s; is there an NVIDIA GPU and driver on "
                     "this machine?",
                     tried, first[0] ? first : "not found");
        else
            snprintf(s->err, sizeof s->err, "cannot load %s (tried %s)%s", d->name, tried, why);
    }
}

void *sg_nvlib_handle(sg_nvlib_t lib, char *err, size_t errlen)
{
    if ((unsigned)lib >= SG_NVLIB_COUNT) {
        copy_err(err, errlen, "no such NVIDIA library");
        return NULL;
    }
    pthread_mutex_lock(&lock);
    lib_state_t *s = &state[lib];
    if (!s->tried) {
        open_lib(lib, s);
        s->tried = true;
    }
    void *h = s->handle;
    if (!h) copy_err(err, errlen, s->err);
    pthread_mutex_unlock(&lock);
    return h;
}

/* One typed table: filled once, under the lock, from the library's handle.
 * A missing entry point fails the whole table (the library is too old). */
typedef struct {
    bool tried, ok;
    char err[1024];
} table_state_t;

/* The lookup the tables use: dlsym, unless the caller gave another
 * (sg_nvlib_use_dlsym). Set once, before the first table is filled. */
static void *(*volatile lookup)(void *, const char *);

void sg_nvlib_use_dlsym(void *(*fn)(void *, const char *))
{
    lookup = fn;
}

static bool resolve(void *h, const char *lib, const char *symbol, void **slot, table_state_t *t)
{
    void *(*fn)(void *, const char *) = lookup;
    *slot = fn ? fn(h, symbol) : dlsym(h, symbol);
    if (*slot) return true;
    snprintf(t->err, sizeof t->err, "%s has no %s: it is older than the CUDA %d.%d headers sgcap "
             "was built with", lib, symbol, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return false;
}

#define SG_RESOLVE1_(name) ok = ok && resolve(h, libname, #name, (void **)&api.name, &t);
#define SG_RESOLVE2_(name, symbol) ok = ok && resolve(h, libname, #symbol, (void **)&api.name, &t);

#define SG_NVLIB_TABLE_(fn, lib, type, funcs, resolver)                                            \
    const type *fn(char *err, size_t errlen)                                                       \
    {                                                                                              \
        static type api;                                                                           \
        static table_state_t t;                                                                    \
        static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;                             \
        pthread_mutex_lock(&table_lock);                                                           \
        if (!t.tried) {                                                                            \
            t.tried = true;                                                                        \
            void *h = sg_nvlib_handle(lib, t.err, sizeof t.err);                                   \
            const char *libname = sg_nvlib_name(lib);                                              \
            bool ok = h != NULL;                                                                   \
            funcs(resolver) t.ok = ok;                                                             \
            if (!ok) memset(&api, 0, sizeof api);                                                  \
        }                                                                                          \
        bool ok = t.ok;                                                                            \
        if (!ok) copy_err(err, errlen, t.err);                                                     \
        pthread_mutex_unlock(&table_lock);                                                         \
        return ok ? &api : NULL;                                                                   \
    }

SG_NVLIB_TABLE_(sg_nvlib_nvrtc, SG_NVLIB_NVRTC, sg_nvrtc_api_t, SG_NVRTC_FUNCS, SG_RESOLVE1_)
SG_NVLIB_TABLE_(sg_nvlib_nvjitlink, SG_NVLIB_NVJITLINK, sg_nvjitlink_api_t, SG_NVJITLINK_FUNCS,
                SG_RESOLVE2_)
SG_NVLIB_TABLE_(sg_nvlib_cupti, SG_NVLIB_CUPTI, sg_cupti_api_t, SG_CUPTI_FUNCS, SG_RESOLVE1_)
