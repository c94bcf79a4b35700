/* bundle_derive.c: a bundle made from another (bundle.h,
 * sg_bundle_write_derived): a rewritten graph with the source's files carried
 * over, as `sgcap rewrite` writes it, or the same bundle updated in place,
 * as `sgcap replay --profile` does.
 *
 * The files are read from the source's directory descriptor (bundle_read.c),
 * each opened once, when it is copied, without following links; a code image
 * is copied only if its bytes match its hash. What may be replaced is
 * decided here, before anything is written: only a valid bundle that holds
 * nothing but its own files, and never the source unless asked for. */
#include "bundle_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files a bundle may hold besides the ones its graph names. */
static const char *const extra_names[] = {"graph.json", "report.txt", "report.json"};

typedef struct {
    const char **paths;
    const char **hashes;
    size_t n, cap;
    int rc;
    sg_diag_t *diag;
} names_t;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Collect the distinct files a graph names, with the hash each must have. */
static int add_name(void *ctx, const sg_bundle_file_t *f)
{
    names_t *x = ctx;
    /* a compressed image is checked when it is loaded (its hash is of the
     * bytes it decompresses to) */
    const char *hash = f->hash && !ends_with(f->relpath, ".zst") ? f->hash : NULL;
    for (size_t i = 0; i < x->n; i++) {
        if (strcmp(x->paths[i], f->relpath) != 0) continue;
        if (hash && x->hashes[i] && strcmp(hash, x->hashes[i]) != 0)
            return sg_bundle_diag(x->diag, SG_EFORMAT, "graph.json", 0, 0,
                                  "%s names %s with hash %s, another image names it with %s",
                                  f->where, f->relpath, hash, x->hashes[i]);
        if (hash) x->hashes[i] = hash;
        return SG_OK;
    }
    if (x->n == x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 16;
        const char **p = realloc(x->paths, nc * sizeof *p);
        if (p) x->paths = p;
        const char **h = p ? realloc(x->hashes, nc * sizeof *h) : NULL;
        if (!p || !h)
            return sg_bundle_diag(x->diag, SG_ENOMEM, "graph.json", 0, 0, "out of memory");
        x->hashes = h;
        x->cap = nc;
    }
    x->paths[x->n] = f->relpath;
    x->hashes[x->n++] = hash;
    return SG_OK;
}

static int collect(const sg_graph_t *g, names_t *x, sg_diag_t *diag)
{
    memset(x, 0, sizeof *x);
    x->diag = diag;
    return sg_bundle_each_file(g, add_name, x);
}

static void names_free(names_t *x)
{
    free(x->paths);
    free(x->hashes);
}

/* Is rel (a file, or a directory when dir) one of the bundle's own? */
static bool own(const names_t *x, const char *rel, bool dir)
{
    size_t n = strlen(rel);
    for (size_t i = 0; i < sizeof extra_names / sizeof *extra_names; i++)
        if (!dir && strcmp(rel, extra_names[i]) == 0) return true;
    for (size_t i = 0; i < x->n; i++) {
        const char *p = x->paths[i];
        if (!dir && strcmp(p, rel) == 0) return true;
        if (dir && strncmp(p, rel, n) == 0 && p[n] == '/') return true;
    }
    return false;
}

/* Does the directory dirfd (at relative path prefix) hold only the bundle's
 * own files? The first stranger goes into stranger. */
static bool only_own(int dirfd, const char *prefix, const names_t *x, char *stranger, size_t sn)
{
    int dfd = dup(dirfd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        snprintf(stranger, sn, "%s (unreadable)", prefix[0] ? prefix : ".");
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char rel[SG_BUNDLE_MAX_RELPATH + 2];
        int k = snprintf(rel, sizeof rel, "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
        struct stat st;
        ok = k > 0 && (size_t)k < sizeof rel &&
             fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) && own(x, rel, S_ISDIR(st.st_mode));
        if (ok && S_ISDIR(st.st_mode)) {
            int sfd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            ok = sfd >= 0 && only_own(sfd, rel, x, stranger, sn);
            if (sfd >= 0) close(sfd);
            if (!ok) break; /* stranger set inside */
        }
        if (!ok) snprintf(stranger, sn, "%.250s", rel);
    }
    closedir(d);
    return ok;
}

/* May the existing bundle directory at path be replaced by a derived one?
 * Only if it reads as a valid bundle and holds nothing but its own files. */
static int check_replaceable(const char *path, sg_diag_t *diag)
{
    sg_bundle_t *t;
    sg_diag_t d;
    int rc = sg_bundle_open(path, &t, &d);
    if (rc) {
        char m[600];
        return sg_bundle_diag(diag, SG_EEXIST, path, 0, 0,
                              "exists and is not a valid bundle (%s); not replacing it",
                              sg_diag_format(&d, m, sizeof m));
    }
    names_t x;
    char stranger[300] = "";
    rc = collect(sg_bundle_graph(t), &x, diag);
    if (!rc && !only_own(t->dirfd, "", &x, stranger, sizeof stranger))
        rc =
            sg_bundle_diag(diag, SG_EEXIST, path, 0, 0,
                           "holds %s, which is not part of the bundle; not replacing it", stranger);
    names_free(&x);
    sg_bundle_close(t);
    return rc;
}

/* The real path of the directory that will hold path. */
static bool parent_real(const char *path, char *out)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    char *slash = strrchr(buf, '/');
    const char *dir = !slash ? "." : slash == buf ? "/" : (*slash = '\0', buf);
    return realpath(dir, out) != NULL;
}

static bool under(const char *p, const char *root)
{
    size_t n = strlen(root);
    return strncmp(p, root, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* Where path lies relative to the source: never inside it, never holding it,
 * never the source itself unless the caller replaces the source. */
static int check_target(const sg_bundle_t *src, const char *path, unsigned *flags, sg_diag_t *diag)
{
    char parent[PATH_MAX];
    if (parent_real(path, parent) && under(parent, src->real))
        return sg_bundle_diag(diag, SG_EINVAL, path, 0, 0,
                              "lies inside the input bundle %s, which is never changed",
                              sg_bundle_path(src));
    struct stat st;
    if (lstat(path, &st) != 0) return SG_OK; /* a new directory */
    bool is_src = S_ISDIR(st.st_mode) && st.st_dev == src->dev && st.st_ino == src->ino;
    if (is_src) {
        if ((*flags & SG_BUNDLE_REPLACE_SOURCE) && (*flags & SG_BUNDLE_OVERWRITE)) {
            *flags |= SG_BUNDLE_REPLACE_CHECKED;
            return SG_OK;
        }
        return sg_bundle_diag(diag, SG_EINVAL, path, 0, 0,
                              "is the input bundle, which is never replaced");
    }
    if (!(*flags & SG_BUNDLE_OVERWRITE)) return SG_OK; /* sg_bundle_write says it exists */
    char real[PATH_MAX];
    if (S_ISDIR(st.st_mode) && realpath(path, real) && under(src->real, real))
        return sg_bundle_diag(diag, SG_EINVAL, path, 0, 0,
                              "holds the input bundle %s; not replacing it", sg_bundle_path(src));
    if (!S_ISDIR(st.st_mode))
        return sg_bundle_diag(diag, SG_EEXIST, path, 0, 0,
                              "exists and is not a directory; not replacing it");
    int rc = check_replaceable(path, diag);
    if (!rc) *flags |= SG_BUNDLE_REPLACE_CHECKED;
    return rc;
}

/* An extra blob either is a file g does not name (a report) or, marked
 * named, supplies one g names: its bytes from memory, matching the hash g
 * gives them, and no other extra supplying it too. */
static int check_extra(const names_t *x, const sg_bundle_blob_t *b, const sg_bundle_blob_t **made,
                       sg_diag_t *diag)
{
    const char *rel = b->relpath ? b->relpath : "";
    size_t k = 0;
    while (k < x->n && strcmp(rel, x->paths[k]) != 0)
        k++;
    if (!b->named) {
        if (k == x->n) return SG_OK;
        return sg_bundle_diag(diag, SG_EINVAL, rel, 0, 0,
                              "is a file the graph names and one to be written besides");
    }
    if (k == x->n)
        return sg_bundle_diag(diag, SG_EINVAL, rel, 0, 0,
                              "is given as a file the graph names, but the graph does not name it");
    if (made[k]) return sg_bundle_diag(diag, SG_EINVAL, rel, 0, 0, "is given twice");
    if (!b->data || b->src_path || b->from)
        return sg_bundle_diag(diag, SG_EINVAL, rel, 0, 0,
                              "a file the caller made must come from memory (data)");
    if (x->hashes[k]) {
        char hash[17];
        sg_bundle_hash(b->data, b->size, hash);
        if (strcmp(hash, x->hashes[k]) != 0)
            return sg_bundle_diag(diag, SG_EINVAL, rel, 0, 0,
                                  "its bytes have hash %s, the graph says %s", hash, x->hashes[k]);
    }
    made[k] = b;
    return SG_OK;
}

int sg_bundle_write_derived(const sg_bundle_t *src, const sg_graph_t *g, const char *path,
                            const sg_bundle_blob_t *extra, size_t n_extra, unsigned flags,
                            sg_bundle_carried_t *carried, sg_diag_t *diag)
{
    if (carried) memset(carried, 0, sizeof *carried);
    if (!src || !g || !path || !path[0] || (n_extra && !extra))
        return sg_bundle_diag(diag, SG_EINVAL, path ? path : "", 0, 0, "bad argument");
    flags &= ~(unsigned)SG_BUNDLE_REPLACE_CHECKED; /* only check_target grants it */
    int rc = check_target(src, path, &flags, diag);
    if (rc) return rc;
    names_t x;
    if ((rc = collect(g, &x, diag))) {
        names_free(&x);
        return rc;
    }
    /* made[k]: the extra that supplies named file k instead of src */
    const sg_bundle_blob_t **made = calloc(x.n + 1, sizeof *made);
    sg_bundle_blob_t *blobs = made ? calloc(x.n + n_extra + 1, sizeof *blobs) : NULL;
    if (!blobs) {
        free(made);
        names_free(&x);
        return sg_bundle_diag(diag, SG_ENOMEM, path, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < n_extra && !rc; i++)
        rc = check_extra(&x, &extra[i], made, diag);
    size_t n = 0;
    for (size_t i = 0; i < x.n && !rc; i++)
        if (!made[i])
            blobs[n++] = (sg_bundle_blob_t){
                .relpath = x.paths[i], .from = src, .hash = x.hashes[i], .optional = true};
    if (!rc) {
        if (n_extra) memcpy(blobs + n, extra, n_extra * sizeof *extra);
        rc = sg_bundle_write_files(g, path, blobs, n + n_extra, flags, carried, diag);
    }
    free(blobs);
    free(made);
    names_free(&x);
    return rc;
}
