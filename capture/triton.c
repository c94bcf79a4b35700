/* triton.c: the PTX Triton keeps next to the cubins it loads.
 *
 * Triton (and PyTorch Inductor's launcher) load cubins only: the PTX they
 * were compiled from never reaches the driver, so a bundle would hold SASS
 * and no PTX, and every analysis that reads PTX would be blind to those
 * kernels. But Triton's cache keeps both: $TRITON_CACHE_DIR (default
 * ~/.triton/cache) holds one directory per compilation with
 * <kernel>.cubin, <kernel>.ptx and <kernel>.json side by side. So:
 *   - a cubin loaded from a file (cuModuleLoad, Inductor's static launcher):
 *     the .ptx beside it;
 *   - a cubin loaded from memory (cuModuleLoadData, Triton's own launcher):
 *     the cache directory whose <kernel>.cubin has exactly the loaded bytes
 *     (same size, then same bytes), <kernel> being the cubin's kernel.
 * The cache is indexed once (kernel file name -> directories) and only new
 * directories are read when a lookup misses, so a run that compiles many
 * kernels reads each cache directory once. Bounded: at most 65536
 * directories indexed, PTX files of at most 64 MiB. Never fatal: a miss
 * only means no PTX. Pure POSIX, no CUDA; the caller (code.c) holds its
 * lock around these calls. */
#include "triton.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uthash.h>

#define MAX_DIRS 65536u
#define MAX_PTX (64u << 20)

typedef struct name_ent {
    char *name; /* kernel file stem: "triton_poi_fused_add_0" */
    uint32_t n, cap;
    uint32_t *dirs; /* indexes into the directory list */
    UT_hash_handle hh;
} name_ent_t;

typedef struct dir_ent {
    char *name;
    UT_hash_handle hh;
} dir_ent_t;

static struct {
    char root[4096];
    bool root_set;
    struct timespec scanned_mtime; /* the root's mtime at the last scan */
    time_t scanned_at;             /* when it was (wall clock) */
    bool scanned;
    char **dirs; /* directory names under root, in index order */
    uint32_t n_dirs, cap_dirs;
    dir_ent_t *seen;
    name_ent_t *names;
} T;

/* Read a whole regular file of at most max bytes; NULL if not. */
static char *slurp(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > max) {
        close(fd);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    size_t got = 0;
    while (buf && got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf || got != n) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0'; /* PTX is text: keep it NUL-terminated for the loaders */
    *len = n;
    return buf;
}

static bool same_file(const char *path, const void *bytes, size_t size)
{
    struct stat st;
    if (stat(path, &st) != 0 || (uint64_t)st.st_size != size) return false;
    size_t len = 0;
    char *f = slurp(path, size, &len);
    bool same = f && len == size && memcmp(f, bytes, size) == 0;
    free(f);
    return same;
}

int sg_triton_ptx_beside(const char *cubin_path, char **ptx, size_t *len, char *where, size_t n)
{
    *ptx = NULL;
    size_t l = strlen(cubin_path);
    if (l < 7 || strcmp(cubin_path + l - 6, ".cubin") != 0 || l + 1 > 4096) return SG_ENOENT;
    char path[4096];
    snprintf(path, sizeof path, "%.*s.ptx", (int)(l - 6), cubin_path);
    *ptx = slurp(path, MAX_PTX, len);
    if (!*ptx) return SG_ENOENT;
    snprintf(where, n, "%s", path);
    return SG_OK;
}

static void cache_root(void)
{
    if (T.root_set) return;
    T.root_set = true;
    const char *d = getenv("TRITON_CACHE_DIR");
    if (d && *d) {
        snprintf(T.root, sizeof T.root, "%s", d);
        return;
    }
    const char *home = getenv("HOME");
    if (home && *home) snprintf(T.root, sizeof T.root, "%s/.triton/cache", home);
}

static void index_add(const char *stem, uint32_t dir)
{
    name_ent_t *e = NULL;
    HASH_FIND_STR(T.names, stem, e);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e || !(e->name = strdup(stem))) {
            free(e);
            return;
        }
        HASH_ADD_KEYPTR(hh, T.names, e->name, strlen(e->name), e);
    }
    if (e->n == e->cap) {
        uint32_t cap = e->cap ? e->cap * 2 : 2;
        uint32_t *v = realloc(e->dirs, cap * sizeof *v);
        if (!v) return;
        e->dirs = v;
        e->cap = cap;
    }
    e->dirs[e->n++] = dir;
}

/* Read the cache directories not indexed yet. The root's mtime changes
 * when Triton adds a directory: unchanged since the last scan, nothing is
 * new (programs that load many cubins Triton never made, XLA's, pay one
 * stat per load). */
static void index_new_dirs(void)
{
    if (!T.root[0]) return;
    struct stat st;
    if (stat(T.root, &st) != 0) return;
    /* a coarse file-system clock can hide a change made in the tick of
     * the last scan: trust an unchanged mtime only once it is old */
    if (T.scanned && st.st_mtim.tv_sec == T.scanned_mtime.tv_sec &&
        st.st_mtim.tv_nsec == T.scanned_mtime.tv_nsec && T.scanned_at > st.st_mtim.tv_sec + 1)
        return;
    T.scanned = true;
    T.scanned_mtime = st.st_mtim;
    T.scanned_at = time(NULL);
    DIR *d = opendir(T.root);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && T.n_dirs < MAX_DIRS) {
        if (de->d_name[0] == '.') continue;
        dir_ent_t *s = NULL;
        HASH_FIND_STR(T.seen, de->d_name, s);
        if (s) continue;
        s = calloc(1, sizeof *s);
        if (!s || !(s->name = strdup(de->d_name))) {
            free(s);
            break;
        }
        HASH_ADD_KEYPTR(hh, T.seen, s->name, strlen(s->name), s);
        char sub[4096 + 256];
        snprintf(sub, sizeof sub, "%s/%s", T.root, de->d_name);
        DIR *sd = opendir(sub);
        if (!sd) continue;
        if (T.n_dirs == T.cap_dirs) {
            uint32_t cap = T.cap_dirs ? T.cap_dirs * 2 : 64;
            char **v = realloc(T.dirs, cap * sizeof *v);
            if (!v) {
                closedir(sd);
                break;
            }
            T.dirs = v;
            T.cap_dirs = cap;
        }
        uint32_t idx = T.n_dirs++;
        T.dirs[idx] = s->name;
        struct dirent *fe;
        while ((fe = readdir(sd)) != NULL) {
            size_t fl = strlen(fe->d_name);
            if (fl > 6 && strcmp(fe->d_name + fl - 6, ".cubin") == 0 && fl < 512) {
                char stem[512];
                memcpy(stem, fe->d_name, fl - 6);
                stem[fl - 6] = '\0';
                index_add(stem, idx);
            }
        }
        closedir(sd);
    }
    closedir(d);
}

static int lookup(const char *kernel, const void *cubin, size_t size, char **ptx, size_t *len,
                  char *where, size_t n)
{
    name_ent_t *e = NULL;
    HASH_FIND_STR(T.names, kernel, e);
    for (uint32_t i = 0; e && i < e->n; i++) {
        char path[4096 + 1024];
        snprintf(path, sizeof path, "%s/%s/%s.cubin", T.root, T.dirs[e->dirs[i]], kernel);
        if (!same_file(path, cubin, size)) continue;
        if (sg_triton_ptx_beside(path, ptx, len, where, n) == SG_OK) return SG_OK;
    }
    return SG_ENOENT;
}

int sg_triton_ptx_in_cache(const char *kernel, const void *cubin, size_t size, char **ptx,
                           size_t *len, char *where, size_t n)
{
    *ptx = NULL;
    if (!kernel || !*kernel || strchr(kernel, '/') || strlen(kernel) >= 480) return SG_ENOENT;
    cache_root();
    if (!T.root[0]) return SG_ENOENT;
    if (lookup(kernel, cubin, size, ptx, len, where, n) == SG_OK) return SG_OK;
    index_new_dirs(); /* Triton wrote it just before loading it */
    return lookup(kernel, cubin, size, ptx, len, where, n);
}

void sg_triton_set_cache_dir(const char *dir)
{
    sg_triton_forget();
    T.root_set = true;
    snprintf(T.root, sizeof T.root, "%s", dir ? dir : "");
}

void sg_triton_forget(void)
{
    name_ent_t *e, *et;
    HASH_ITER(hh, T.names, e, et)
    {
        HASH_DEL(T.names, e);
        free(e->name);
        free(e->dirs);
        free(e);
    }
    dir_ent_t *s, *st;
    HASH_ITER(hh, T.seen, s, st)
    {
        HASH_DEL(T.seen, s);
        free(s->name);
        free(s);
    }
    free(T.dirs);
    memset(&T, 0, sizeof T);
}
