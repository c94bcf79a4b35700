/* bundle_write.c: writing NAME.sgraph/ (docs/FORMAT.md section 1), the part
 * the shim links (the text is bundle_emit.c; nothing here reads JSON).
 *
 * Writing builds the whole bundle under a sibling temporary name, fsyncs
 * every file and directory (unless SG_BUNDLE_NO_FSYNC), and renames it into
 * place, so a crash or an error leaves either the old state or the new
 * bundle, never a half bundle (without the fsyncs: as long as the system
 * itself does not crash).
 * Replacing an existing directory is refused unless it is a bundle: nothing
 * of the user's is ever deleted. */
#include "bundle_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

/* Test hook (bundle_private.h): when > 0, the n-th file-system step of a
 * write fails with EIO, so tests can check cleanup after each step. */
int sg_bundle_test_fail_at = 0;

static bool injected_failure(void)
{
    if (sg_bundle_test_fail_at <= 0) return false;
    if (--sg_bundle_test_fail_at > 0) return false;
    errno = EIO;
    return true;
}

static int remove_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(p);
    return 0;
}

/* rm -rf that never follows a symlink or leaves the file system. */
static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static int fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = injected_failure() ? -1 : fsync(fd);
    close(fd);
    return r;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        if (injected_failure()) return -1;
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

typedef struct {
    sg_diag_t *diag;
    const char *path; /* the bundle being written, for messages */
    char **dirs;      /* subdirectories created, relative, for the final fsync */
    size_t n_dirs;
    sg_bundle_carried_t *carried; /* may be NULL */
    bool sync;                    /* fsync files and directories (not SG_BUNDLE_NO_FSYNC) */
} wctx_t;

static int wfail(wctx_t *w, int code, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int wfail(wctx_t *w, int code, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sg_bundle_vdiag(w->diag, code, file, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

/* Stream `in` (a buffer, or the file src_fd when in == NULL) into fd,
 * compressing with zstd when asked; with hash, the source bytes must have
 * that XXH64 (checked before the file is kept). */
static int copy_out(wctx_t *w, const char *rel, int fd, const void *in, size_t in_n, int src_fd,
                    bool compress, const char *hash)
{
    XXH64_state_t *xh = hash ? XXH64_createState() : NULL;
    if (hash && (!xh || XXH64_reset(xh, 0) == XXH_ERROR)) {
        XXH64_freeState(xh);
        return wfail(w, SG_ENOMEM, rel, "out of memory");
    }
    enum { CHUNK = 1 << 20 };
    char *ibuf = NULL, *obuf = NULL;
    ZSTD_CCtx *z = NULL;
    int rc = SG_OK;
    if (src_fd >= 0) ibuf = malloc(CHUNK);
    if (compress) {
        obuf = malloc(ZSTD_CStreamOutSize());
        z = ZSTD_createCCtx();
        if (z) {
            ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 3);
            ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
            struct stat st;
            /* a known size goes into the frame header: readers check it first */
            if (src_fd < 0)
                ZSTD_CCtx_setPledgedSrcSize(z, in_n);
            else if (fstat(src_fd, &st) == 0 && S_ISREG(st.st_mode))
                ZSTD_CCtx_setPledgedSrcSize(z, (unsigned long long)st.st_size);
        }
    }
    if ((src_fd >= 0 && !ibuf) || (compress && (!obuf || !z))) {
        rc = wfail(w, SG_ENOMEM, rel, "out of memory");
        goto out;
    }
    bool eof = false;
    while (!eof) {
        const void *chunk = in;
        size_t cn = in_n;
        if (src_fd >= 0) {
            ssize_t r = read(src_fd, ibuf, CHUNK);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) {
                rc = wfail(w, SG_EIO, rel, "cannot read the source file: %s", strerror(errno));
                goto out;
            }
            chunk = ibuf;
            cn = (size_t)r;
            eof = r == 0;
        } else {
            eof = true;
        }
        if (xh && cn) XXH64_update(xh, chunk, cn);
        if (!compress) {
            if (cn && write_all(fd, chunk, cn)) {
                rc = wfail(w, SG_EIO, rel, "write failed: %s", strerror(errno));
                goto out;
            }
            continue;
        }
        ZSTD_inBuffer zi = {chunk, cn, 0};
        ZSTD_EndDirective mode = eof ? ZSTD_e_end : ZSTD_e_continue;
        for (;;) {
            ZSTD_outBuffer zo = {obuf, ZSTD_CStreamOutSize(), 0};
            size_t left = ZSTD_compressStream2(z, &zo, &zi, mode);
            if (ZSTD_isError(left)) {
                rc = wfail(w, SG_EIO, rel, "zstd: %s", ZSTD_getErrorName(left));
                goto out;
            }
            if (zo.pos && write_all(fd, obuf, zo.pos)) {
                rc = wfail(w, SG_EIO, rel, "write failed: %s", strerror(errno));
                goto out;
            }
            if (eof ? left == 0 : zi.pos == zi.size) break;
        }
    }
    if (xh) {
        char got[17];
        uint64_t h = XXH64_digest(xh);
        snprintf(got, sizeof got, "%016" PRIx64, h);
        if (strcmp(got, hash) != 0)
            rc = wfail(w, SG_EFORMAT, rel,
                       "its bytes hash to %s, not to %s as graph.json says: the file was "
                       "changed or damaged; not copying it",
                       got, hash);
    }
out:
    XXH64_freeState(xh);
    free(ibuf);
    free(obuf);
    ZSTD_freeCCtx(z);
    return rc;
}

/* Remember rel's directory part for the final fsync (few distinct ones). */
static int note_dir(wctx_t *w, const char *rel, size_t len)
{
    for (size_t i = 0; i < w->n_dirs; i++)
        if (strlen(w->dirs[i]) == len && strncmp(w->dirs[i], rel, len) == 0) return SG_OK;
    char **d = realloc(w->dirs, (w->n_dirs + 1) * sizeof *d);
    if (!d) return SG_ENOMEM;
    w->dirs = d;
    if (!(d[w->n_dirs] = strndup(rel, len))) return SG_ENOMEM;
    w->n_dirs++;
    return SG_OK;
}

/* The source of a blob that comes from a file: -1 in *fd when there is none
 * (data in memory), or when an optional file of the source bundle is missing
 * (*skip). */
static int open_source(wctx_t *w, const sg_bundle_blob_t *b, int *fd, bool *skip)
{
    const char *rel = b->relpath;
    *fd = -1;
    *skip = false;
    if (b->src_path) {
        *fd = open(b->src_path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0)
            return wfail(w, errno == ENOENT ? SG_ENOENT : SG_EIO, rel, "cannot open source %s: %s",
                         b->src_path, strerror(errno));
    }
    if (b->from) {
        /* the source bundle's file, opened below its directory descriptor:
         * whatever was swapped in since it was read, no link is followed */
        sg_diag_t d;
        int rc = sg_bundle_open_file(b->from, rel, fd, &d);
        if (rc == SG_ENOENT && b->optional) {
            *skip = true;
            if (w->carried && !w->carried->missing++)
                snprintf(w->carried->first_missing, sizeof w->carried->first_missing, "%s", rel);
            return SG_OK;
        }
        if (rc) return wfail(w, rc, rel, "in %s: %s", sg_bundle_path(b->from), d.message);
        if (w->carried) w->carried->copied++;
    }
    return SG_OK;
}

/* Create the file rel below tmpfd (its directories too), write it, fsync it. */
static int write_file(wctx_t *w, int tmpfd, const sg_bundle_blob_t *b)
{
    const char *rel = b->relpath;
    int src_fd = -1, fd = -1;
    bool skip;
    int rc = open_source(w, b, &src_fd, &skip);
    if (rc || skip) return rc;
    char buf[SG_BUNDLE_MAX_RELPATH + 1];
    snprintf(buf, sizeof buf, "%s", rel);
    int cur = tmpfd;
    char *comp = buf, *slash;
    while ((slash = strchr(comp, '/'))) {
        *slash = '\0';
        if ((injected_failure() || mkdirat(cur, comp, 0777) != 0) && errno != EEXIST) {
            rc = wfail(w, SG_EIO, rel, "cannot create directory: %s", strerror(errno));
            break;
        }
        int dfd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) {
            rc = wfail(w, SG_EIO, rel, "cannot open directory: %s", strerror(errno));
            break;
        }
        if (cur != tmpfd) close(cur);
        cur = dfd;
        comp = slash + 1;
        if ((rc = note_dir(w, rel, (size_t)(slash - buf)))) {
            wfail(w, rc, rel, "out of memory");
            break;
        }
    }
    if (!rc) {
        fd = injected_failure()
                 ? -1
                 : openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0)
            rc = errno == EEXIST ? wfail(w, SG_EEXIST, rel, "written twice into one bundle")
                                 : wfail(w, SG_EIO, rel, "cannot create: %s", strerror(errno));
    }
    if (!rc)
        rc = copy_out(w, rel, fd, b->data, b->size, src_fd, b->compress, b->from ? b->hash : NULL);
    if (!rc && w->sync && (injected_failure() || fsync(fd) != 0))
        rc = wfail(w, SG_EIO, rel, "fsync failed: %s", strerror(errno));
    if (fd >= 0 && close(fd) != 0 && !rc)
        rc = wfail(w, SG_EIO, rel, "close failed: %s", strerror(errno));
    if (src_fd >= 0) close(src_fd);
    if (cur != tmpfd) close(cur);
    return rc;
}

/* Does the directory dirfd hold only regular files (sub = false: and nothing
 * but what sgcap writes at a bundle's top)? Names the first stranger. */
static bool only_bundle_entries(int dirfd, bool sub, char *stranger, size_t n)
{
    static const char *const top[] = {"graph.json", "report.txt", "report.json", "code", "data"};
    int dfd = dup(dirfd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        snprintf(stranger, n, "(unreadable)");
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            ok = false;
        } else if (sub) {
            ok = S_ISREG(st.st_mode);
        } else {
            ok = false;
            for (size_t i = 0; i < sizeof top / sizeof *top && !ok; i++)
                if (strcmp(e->d_name, top[i]) == 0)
                    ok = i < 3 ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode);
            if (ok && S_ISDIR(st.st_mode)) {
                int sfd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                char inner[256];
                ok = sfd >= 0 && only_bundle_entries(sfd, true, inner, sizeof inner);
                if (sfd >= 0) close(sfd);
                if (!ok) {
                    snprintf(stranger, n, "%.100s/%.150s", e->d_name, inner);
                    break;
                }
            }
        }
        if (!ok) snprintf(stranger, n, "%.250s", e->d_name);
    }
    closedir(d);
    return ok;
}

/* Is the existing path something sg_bundle_write may replace: a real
 * directory (not a link), empty or holding only what sgcap writes into a
 * bundle? Anything else is the user's data. */
static bool replaceable(const char *path, char *stranger, size_t n)
{
    struct stat st;
    snprintf(stranger, n, "(it is not a directory)");
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    bool ok = only_bundle_entries(fd, false, stranger, n);
    close(fd);
    return ok;
}

/* Directory that holds path (for the final fsync of the rename). */
static void parent_of(const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s", path);
    size_t len = strlen(out);
    while (len > 1 && out[len - 1] == '/')
        out[--len] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, n, ".");
    else if (slash == out)
        out[1] = '\0';
    else
        *slash = '\0';
}

static bool rename_unsupported(int err)
{
    return err == EINVAL || err == ENOSYS || err == ENOTSUP || err == EOPNOTSUPP;
}

/* Move the finished temporary directory to path. */
static int install(wctx_t *w, const char *tmp, const char *path, unsigned flags, unsigned serial)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && !(flags & SG_BUNDLE_OVERWRITE))
        return wfail(w, SG_EEXIST, path, "already exists");
    if (exists) {
        char stranger[300];
        if (!(flags & SG_BUNDLE_REPLACE_CHECKED) && !replaceable(path, stranger, sizeof stranger))
            return wfail(w, SG_EEXIST, path,
                         "exists and is not a bundle sgcap wrote (it holds %s); not replacing it",
                         stranger);
        /* atomic swap where the file system can; tmp then holds the old bundle */
        if (!injected_failure() && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
            remove_tree(tmp);
            return SG_OK;
        }
        if (!rename_unsupported(errno))
            return wfail(w, SG_EIO, path, "cannot replace: %s", strerror(errno));
        char aside[PATH_MAX];
        int k = snprintf(aside, sizeof aside, "%s.old.%ld.%u", path, (long)getpid(), serial);
        if (k < 0 || (size_t)k >= sizeof aside) return wfail(w, SG_EINVAL, path, "path too long");
        if (injected_failure() || rename(path, aside) != 0)
            return wfail(w, SG_EIO, path, "cannot move the old bundle aside: %s", strerror(errno));
        if (injected_failure() || rename(tmp, path) != 0) {
            int err = errno;
            rename(aside, path); /* put the old one back */
            return wfail(w, SG_EIO, path, "cannot rename into place: %s", strerror(err));
        }
        remove_tree(aside);
        return SG_OK;
    }
    if (!injected_failure() && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return SG_OK;
    if (errno == EEXIST) return wfail(w, SG_EEXIST, path, "appeared while it was being written");
    if (!rename_unsupported(errno))
        return wfail(w, SG_EIO, path, "cannot rename into place: %s", strerror(errno));
    /* plain rename would replace an empty directory: look first */
    if (lstat(path, &st) == 0)
        return wfail(w, SG_EEXIST, path, "appeared while it was being written");
    if (injected_failure() || rename(tmp, path) != 0)
        return wfail(w, SG_EIO, path, "cannot rename into place: %s", strerror(errno));
    return SG_OK;
}

/* File names the graph holds must be ones a reader accepts: refuse to write
 * a bundle that could not be read back. */
static int check_name(void *ctx, const sg_bundle_file_t *f)
{
    wctx_t *w = ctx;
    if (!sg_bundle_relpath_ok(f->relpath))
        return wfail(w, SG_EINVAL, "graph.json",
                     "%s \"%.200s\" is not a safe relative path inside a bundle", f->where,
                     f->relpath);
    if (strcmp(f->relpath, "graph.json") == 0)
        return wfail(w, SG_EINVAL, "graph.json", "%s names graph.json itself", f->where);
    return SG_OK;
}

int sg_bundle_write(const sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                    size_t n_blobs, unsigned flags, sg_diag_t *diag)
{
    /* only sg_bundle_write_derived may say the target was checked */
    return sg_bundle_write_files(g, path, blobs, n_blobs,
                                 flags & ~(unsigned)SG_BUNDLE_REPLACE_CHECKED, NULL, diag);
}

int sg_bundle_write_files(const sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                          size_t n_blobs, unsigned flags, sg_bundle_carried_t *carried,
                          sg_diag_t *diag)
{
    static atomic_uint counter;
    wctx_t w = {.diag = diag,
                .path = path,
                .carried = carried,
                .sync = !(flags & SG_BUNDLE_NO_FSYNC)};
    if (!g || !path || !path[0] || (n_blobs && !blobs))
        return wfail(&w, SG_EINVAL, path ? path : "", "bad argument");
    if (strlen(path) > PATH_MAX - 64) return wfail(&w, SG_EINVAL, path, "path too long");
    /* "out.sgraph/" names the same bundle; the temporary must be its sibling */
    char clean[PATH_MAX];
    snprintf(clean, sizeof clean, "%s", path);
    for (size_t len = strlen(clean); len > 1 && clean[len - 1] == '/';)
        clean[--len] = '\0';
    path = clean;
    w.path = path;
    for (size_t i = 0; i < n_blobs; i++) {
        const sg_bundle_blob_t *b = &blobs[i];
        if (!sg_bundle_relpath_ok(b->relpath) || strcmp(b->relpath, "graph.json") == 0)
            return wfail(&w, SG_EINVAL, b->relpath ? b->relpath : "",
                         "blob %zu: not a valid file name inside a bundle", i);
        int sources = (b->src_path != NULL) + (b->data != NULL) + (b->from != NULL);
        if (sources > 1 || (sources == 0 && b->size != 0))
            return wfail(&w, SG_EINVAL, b->relpath, "blob %zu: give one of data, src_path, from",
                         i);
    }
    struct stat st;
    if (lstat(path, &st) == 0 && !(flags & SG_BUNDLE_OVERWRITE))
        return wfail(&w, SG_EEXIST, path, "already exists");
    int rc = sg_bundle_each_file(g, check_name, &w);
    if (rc) return rc;

    char *json = NULL;
    rc = sg_bundle_to_json(g, &json);
    if (rc) return wfail(&w, rc, "graph.json", "cannot serialize the graph: %s", sg_strerror(rc));

    char tmp[PATH_MAX];
    unsigned serial = 0;
    int made = -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        serial = atomic_fetch_add(&counter, 1);
        int k = snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), serial);
        if (k < 0 || (size_t)k >= sizeof tmp) {
            free(json);
            return wfail(&w, SG_EINVAL, path, "path too long");
        }
        made = injected_failure() ? -1 : mkdir(tmp, 0777);
        if (made == 0 || errno != EEXIST) break;
    }
    if (made != 0) {
        rc = wfail(&w, SG_EIO, path, "cannot create the temporary directory %s: %s", tmp,
                   strerror(errno));
        free(json);
        return rc;
    }
    int tmpfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (tmpfd < 0) rc = wfail(&w, SG_EIO, path, "cannot open %s: %s", tmp, strerror(errno));
    sg_bundle_blob_t gj = {.relpath = "graph.json", .data = json, .size = strlen(json)};
    if (!rc) rc = write_file(&w, tmpfd, &gj);
    free(json);
    for (size_t i = 0; i < n_blobs && !rc; i++)
        rc = write_file(&w, tmpfd, &blobs[i]);
    for (size_t i = 0; i < w.n_dirs && !rc && w.sync; i++) {
        char sub[PATH_MAX];
        int k = snprintf(sub, sizeof sub, "%s/%s", tmp, w.dirs[i]);
        if (k < 0 || (size_t)k >= sizeof sub || fsync_path(sub) != 0)
            rc = wfail(&w, SG_EIO, w.dirs[i], "fsync failed: %s", strerror(errno));
    }
    if (!rc && w.sync && (injected_failure() || fsync(tmpfd) != 0))
        rc = wfail(&w, SG_EIO, path, "fsync failed: %s", strerror(errno));
    if (tmpfd >= 0) close(tmpfd);
    for (size_t i = 0; i < w.n_dirs; i++)
        free(w.dirs[i]);
    free(w.dirs);
    if (!rc) rc = install(&w, tmp, path, flags, serial);
    if (rc) {
        remove_tree(tmp);
        return rc;
    }
    /* make the rename itself durable */
    if (w.sync) {
        char parent[PATH_MAX];
        parent_of(path, parent, sizeof parent);
        fsync_path(parent);
    }
    return SG_OK;
}
