/* bundle.c: NAME.sgraph/ on disk: atomic write, hardened read, blobs inside
 * the bundle (docs/FORMAT.md). The JSON itself is bundle_emit.c (model ->
 * text) and bundle_parse.c (text -> model).
 *
 * Writing builds the whole bundle under a sibling temporary name, fsyncs
 * every file and directory, and renames it into place, so a crash or an
 * error leaves either the old state or the new bundle, never a half bundle.
 * Reading opens every file one path component at a time with O_NOFOLLOW
 * below the bundle directory, so no name in graph.json can reach outside it,
 * and bounds every size before it allocates. */
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

/* ---- diagnostics --------------------------------------------------------------- */

int sg_bundle_vdiag(sg_diag_t *d, int code, const char *file, int line, int column, const char *fmt,
                    va_list ap)
{
    if (!d) return code;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    d->column = column;
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    return code;
}

int sg_bundle_diag(sg_diag_t *d, int code, const char *file, int line, int column, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    sg_bundle_vdiag(d, code, file, line, column, fmt, ap);
    va_end(ap);
    return code;
}

const char *sg_diag_format(const sg_diag_t *d, char *buf, size_t n)
{
    if (!buf || n == 0) return buf;
    if (!d) {
        snprintf(buf, n, "(no diagnostic)");
    } else if (d->file[0] && d->line > 0) {
        snprintf(buf, n, "%s:%d:%d: %s", d->file, d->line, d->column, d->message);
    } else if (d->file[0]) {
        snprintf(buf, n, "%s: %s", d->file, d->message);
    } else {
        snprintf(buf, n, "%s", d->message);
    }
    return buf;
}

/* ---- paths ---------------------------------------------------------------------------- */

#define MAX_RELPATH 1024

bool sg_bundle_relpath_ok(const char *relpath)
{
    if (!relpath || !relpath[0] || relpath[0] == '/') return false;
    size_t len = strlen(relpath);
    if (len > MAX_RELPATH) return false;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        char ch = relpath[i];
        if (ch == '/' || ch == '\0') {
            size_t clen = i - start;
            if (clen == 0) return false; /* "a//b", trailing "/" */
            if (clen == 1 && relpath[start] == '.') return false;
            if (clen == 2 && relpath[start] == '.' && relpath[start + 1] == '.') return false;
            start = i + 1;
            continue;
        }
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        if (!ok) return false;
    }
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Open relpath (already sg_bundle_relpath_ok) below dirfd for reading,
 * component by component with O_NOFOLLOW: a symlink anywhere is refused, not
 * followed. On failure returns an SG_E* code and a reason in why. */
static int open_inside(int dirfd, const char *relpath, int *out, const char **why)
{
    char buf[MAX_RELPATH + 1];
    snprintf(buf, sizeof buf, "%s", relpath);
    int cur = dirfd;
    char *comp = buf;
    for (;;) {
        char *slash = strchr(comp, '/');
        if (slash) *slash = '\0';
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
        flags |= slash ? O_DIRECTORY : O_NONBLOCK; /* a FIFO must not block us */
        int fd = openat(cur, comp, flags);
        int err = errno;
        struct stat st;
        bool is_link =
            fd < 0 && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        if (cur != dirfd) close(cur);
        if (fd < 0) {
            if (is_link) {
                *why = "is a symbolic link (or goes through one); bundles may not contain links";
                return SG_EFORMAT;
            }
            if (err == ENOENT) {
                *why = "does not exist in the bundle";
                return SG_ENOENT;
            }
            if (err == ENOTDIR) {
                *why = "goes through something that is not a directory";
                return SG_EFORMAT;
            }
            *why = strerror(err);
            return SG_EIO;
        }
        if (!slash) {
            if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                *why = "is not a regular file";
                return SG_EFORMAT;
            }
            *out = fd;
            return SG_OK;
        }
        cur = fd;
        comp = slash + 1;
    }
}

/* Second line of defence: the opened file really lies below the bundle's
 * real path (checked through /proc when it exists). */
static bool fd_inside(int fd, const char *root_real)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0) return true; /* no /proc: the O_NOFOLLOW walk stands alone */
    target[n] = '\0';
    size_t r = strlen(root_real);
    if (r == 1) return target[0] == '/'; /* bundle at "/" */
    return strncmp(target, root_real, r) == 0 && target[r] == '/';
}

/* Read all of fd, refusing more than max bytes. *data is NUL-terminated. */
static int read_all(int fd, uint64_t max, char **data, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return SG_EIO;
    if ((uint64_t)st.st_size > max) return SG_ELIMIT;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) return SG_ENOMEM;
    for (;;) {
        if (n == cap) {
            /* the file grew while we read it */
            if (n > max) {
                free(buf);
                return SG_ELIMIT;
            }
            size_t ncap = cap * 2 > max + 1 ? (size_t)max + 1 : cap * 2;
            char *p = realloc(buf, ncap + 1);
            if (!p) {
                free(buf);
                return SG_ENOMEM;
            }
            buf = p;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            free(buf);
            return SG_EIO;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    if (n > max) {
        free(buf);
        return SG_ELIMIT;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return SG_OK;
}

/* Decompress one or more zstd frames, at most max bytes out. The bound holds
 * whatever the frame header claims: output is produced in growing steps and
 * the decoder is stopped one byte past max. */
static int zstd_decode(const void *src, size_t n, uint64_t max, void **out, size_t *out_n,
                       const char **why)
{
    unsigned long long fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR) {
        *why = "is not zstd data";
        return SG_EFORMAT;
    }
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > max) {
        *why = "decompresses to more bytes than allowed";
        return SG_ELIMIT;
    }
    size_t limit = max >= SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)max + 1;
    size_t cap = fcs != ZSTD_CONTENTSIZE_UNKNOWN ? (size_t)fcs + 1 : 65536;
    if (cap > limit) cap = limit;
    char *buf = malloc(cap ? cap : 1);
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!buf || !d) {
        free(buf);
        ZSTD_freeDCtx(d);
        *why = "out of memory";
        return SG_ENOMEM;
    }
    ZSTD_inBuffer in = {src, n, 0};
    size_t produced = 0;
    int rc = SG_OK;
    for (;;) {
        if (produced == cap) {
            if (cap >= limit) {
                rc = SG_ELIMIT;
                *why = "decompresses to more bytes than allowed";
                break;
            }
            size_t ncap = cap * 2 > limit ? limit : cap * 2;
            char *p = realloc(buf, ncap);
            if (!p) {
                rc = SG_ENOMEM;
                *why = "out of memory";
                break;
            }
            buf = p;
            cap = ncap;
        }
        ZSTD_outBuffer o = {buf, cap, produced};
        size_t ret = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(ret)) {
            rc = SG_EFORMAT;
            *why = ZSTD_getErrorName(ret);
            break;
        }
        produced = o.pos;
        if (produced > max) {
            rc = SG_ELIMIT;
            *why = "decompresses to more bytes than allowed";
            break;
        }
        if (ret == 0 && in.pos == in.size) break;
        if (in.pos == in.size && o.pos < o.size) {
            rc = SG_EFORMAT;
            *why = "is truncated zstd data";
            break;
        }
    }
    ZSTD_freeDCtx(d);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_n = produced;
    return SG_OK;
}

/* ---- read -------------------------------------------------------------------------------- */

static int open_bundle_dir(const char *path, int *dirfd, char *real, sg_diag_t *diag)
{
    *dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0) {
        int err = errno;
        return sg_bundle_diag(diag, err == ENOENT ? SG_ENOENT : SG_EIO, path, 0, 0,
                              "cannot open the bundle directory: %s", strerror(err));
    }
    if (!realpath(path, real)) {
        int err = errno;
        close(*dirfd);
        return sg_bundle_diag(diag, SG_EIO, path, 0, 0, "cannot resolve the bundle path: %s",
                              strerror(err));
    }
    return SG_OK;
}

/* A file graph.json names must be a regular file inside the bundle. A
 * missing one is not an error here: a capture may have been unable to store
 * it, and whoever needs its bytes gets SG_ENOENT from sg_bundle_read_blob. */
static int check_ref(int dirfd, const char *real, const char *relpath, const char *where,
                     sg_diag_t *diag)
{
    if (!relpath) return SG_OK;
    int fd;
    const char *why = NULL;
    int rc = open_inside(dirfd, relpath, &fd, &why);
    if (rc == SG_ENOENT) return SG_OK;
    if (rc == SG_OK) {
        bool inside = fd_inside(fd, real);
        close(fd);
        if (inside) return SG_OK;
        rc = SG_EFORMAT;
        why = "resolves outside the bundle";
    }
    return sg_bundle_diag(diag, rc, "graph.json", 0, 0, "%s: \"%s\" %s", where, relpath, why);
}

static int check_refs(int dirfd, const char *real, const sg_graph_t *g, sg_diag_t *diag)
{
    char where[64];
    int rc;
    for (uint32_t i = 0; i < g->n_images; i++) {
        snprintf(where, sizeof where, "images[%" PRIu32 "].file", i);
        if ((rc = check_ref(dirfd, real, g->images[i].file, where, diag))) return rc;
    }
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        snprintf(where, sizeof where, "buffers[%" PRIu32 "].before", i);
        if ((rc = check_ref(dirfd, real, g->buffers[i].before_file, where, diag))) return rc;
        snprintf(where, sizeof where, "buffers[%" PRIu32 "].after", i);
        if ((rc = check_ref(dirfd, real, g->buffers[i].after_file, where, diag))) return rc;
    }
    return SG_OK;
}

int sg_bundle_read(const char *path, sg_graph_t **out, sg_diag_t *diag)
{
    if (!path || !out) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "no bundle path");
    *out = NULL;
    int dirfd;
    char real[PATH_MAX];
    int rc = open_bundle_dir(path, &dirfd, real, diag);
    if (rc) return rc;
    int fd;
    const char *why = NULL;
    rc = open_inside(dirfd, "graph.json", &fd, &why);
    if (rc) {
        close(dirfd);
        return sg_bundle_diag(diag, rc, "graph.json", 0, 0, "%s", why);
    }
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > SG_BUNDLE_MAX_JSON_BYTES) {
        /* refused from its size alone, before a byte is read */
        rc = sg_bundle_diag(diag, SG_ELIMIT, "graph.json", 0, 0,
                            "%lld bytes, more than the limit %u", (long long)st.st_size,
                            SG_BUNDLE_MAX_JSON_BYTES);
    } else if (!fd_inside(fd, real)) {
        rc = sg_bundle_diag(diag, SG_EFORMAT, "graph.json", 0, 0, "resolves outside the bundle");
    } else {
        rc = read_all(fd, SG_BUNDLE_MAX_JSON_BYTES, &text, &len);
        if (rc)
            sg_bundle_diag(diag, rc, "graph.json", 0, 0, "cannot read: %s",
                           rc == SG_ELIMIT ? "larger than the limit" : sg_strerror(rc));
    }
    close(fd);
    sg_graph_t *g = NULL;
    if (!rc) rc = sg_bundle_parse_json(text, len, "graph.json", &g, diag);
    free(text);
    if (!rc) rc = check_refs(dirfd, real, g, diag);
    close(dirfd);
    if (rc) {
        sg_graph_destroy(g);
        return rc;
    }
    *out = g;
    return SG_OK;
}

int sg_bundle_read_blob(const char *path, const char *relpath, uint64_t max_bytes, void **data,
                        size_t *size, sg_diag_t *diag)
{
    if (!path || !data || !size) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "bad argument");
    *data = NULL;
    *size = 0;
    if (!sg_bundle_relpath_ok(relpath))
        return sg_bundle_diag(diag, SG_EFORMAT, relpath ? relpath : "", 0, 0,
                              "not a safe relative path inside the bundle");
    int dirfd, fd;
    char real[PATH_MAX];
    int rc = open_bundle_dir(path, &dirfd, real, diag);
    if (rc) return rc;
    const char *why = NULL;
    rc = open_inside(dirfd, relpath, &fd, &why);
    close(dirfd);
    if (rc) return sg_bundle_diag(diag, rc, relpath, 0, 0, "%s", why);
    if (!fd_inside(fd, real)) {
        close(fd);
        return sg_bundle_diag(diag, SG_EFORMAT, relpath, 0, 0, "resolves outside the bundle");
    }
    bool zst = ends_with(relpath, ".zst");
    /* compressed data is never much larger than what it decodes to */
    uint64_t file_max = max_bytes;
    if (zst) {
        size_t m = max_bytes > (SIZE_MAX >> 2) ? SIZE_MAX >> 2 : (size_t)max_bytes;
        file_max = ZSTD_compressBound(m) + 64;
    }
    char *raw;
    size_t n;
    rc = read_all(fd, file_max, &raw, &n);
    close(fd);
    if (rc == SG_ELIMIT)
        return sg_bundle_diag(diag, rc, relpath, 0, 0, "larger than the limit of %" PRIu64 " bytes",
                              max_bytes);
    if (rc) return sg_bundle_diag(diag, rc, relpath, 0, 0, "cannot read: %s", sg_strerror(rc));
    if (!zst) {
        *data = raw;
        *size = n;
        return SG_OK;
    }
    void *dec;
    size_t dn;
    rc = zstd_decode(raw, n, max_bytes, &dec, &dn, &why);
    free(raw);
    if (rc) {
        if (rc == SG_ELIMIT)
            return sg_bundle_diag(diag, rc, relpath, 0, 0,
                                  "decompresses to more than the limit of %" PRIu64 " bytes",
                                  max_bytes);
        return sg_bundle_diag(diag, rc, relpath, 0, 0, "%s", why);
    }
    *data = dec;
    *size = dn;
    return SG_OK;
}

/* ---- write -------------------------------------------------------------------------------- */

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
 * compressing with zstd when asked. */
static int copy_out(wctx_t *w, const char *rel, int fd, const void *in, size_t in_n, int src_fd,
                    bool compress)
{
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
out:
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

/* Create the file rel below tmpfd (its directories too), write it, fsync it. */
static int write_file(wctx_t *w, int tmpfd, const char *rel, const void *data, size_t n,
                      const char *src_path, bool compress)
{
    char buf[MAX_RELPATH + 1];
    snprintf(buf, sizeof buf, "%s", rel);
    int cur = tmpfd, rc = SG_OK;
    char *comp = buf, *slash;
    while ((slash = strchr(comp, '/'))) {
        *slash = '\0';
        if ((injected_failure() || mkdirat(cur, comp, 0777) != 0) && errno != EEXIST) {
            rc = wfail(w, SG_EIO, rel, "cannot create directory: %s", strerror(errno));
            break;
        }
        int fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            rc = wfail(w, SG_EIO, rel, "cannot open directory: %s", strerror(errno));
            break;
        }
        if (cur != tmpfd) close(cur);
        cur = fd;
        comp = slash + 1;
        if ((rc = note_dir(w, rel, (size_t)(slash - buf)))) {
            wfail(w, rc, rel, "out of memory");
            break;
        }
    }
    int src_fd = -1, fd = -1;
    if (!rc && src_path) {
        src_fd = open(src_path, O_RDONLY | O_CLOEXEC);
        if (src_fd < 0)
            rc = wfail(w, errno == ENOENT ? SG_ENOENT : SG_EIO, rel, "cannot open source %s: %s",
                       src_path, strerror(errno));
    }
    if (!rc) {
        fd = injected_failure()
                 ? -1
                 : openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0)
            rc = errno == EEXIST ? wfail(w, SG_EEXIST, rel, "written twice into one bundle")
                                 : wfail(w, SG_EIO, rel, "cannot create: %s", strerror(errno));
    }
    if (!rc) rc = copy_out(w, rel, fd, data, n, src_fd, compress);
    if (!rc && (injected_failure() || fsync(fd) != 0))
        rc = wfail(w, SG_EIO, rel, "fsync failed: %s", strerror(errno));
    if (fd >= 0 && close(fd) != 0 && !rc)
        rc = wfail(w, SG_EIO, rel, "close failed: %s", strerror(errno));
    if (src_fd >= 0) close(src_fd);
    if (cur != tmpfd) close(cur);
    return rc;
}

/* Is the existing path something we may replace: a real directory (not a
 * link) that is a bundle or empty? Anything else is the user's data. */
static bool replaceable(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    bool ok = fstatat(fd, "graph.json", &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!ok) {
        /* an empty directory is fine too */
        int dfd = dup(fd);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (d) {
            struct dirent *e;
            ok = true;
            while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ok = false;
            closedir(d);
        } else if (dfd >= 0) {
            close(dfd);
        }
    }
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
static int install(wctx_t *w, const char *tmp, const char *path, bool overwrite, unsigned serial)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && !overwrite) return wfail(w, SG_EEXIST, path, "already exists");
    if (exists) {
        if (!replaceable(path))
            return wfail(w, SG_EEXIST, path,
                         "exists and is not a bundle or an empty directory; not replacing it");
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
static int check_names(wctx_t *w, const sg_graph_t *g)
{
    for (uint32_t i = 0; i < g->n_images; i++) {
        const char *f = g->images[i].file;
        if (f && !sg_bundle_relpath_ok(f))
            return wfail(w, SG_EINVAL, "graph.json",
                         "images[%" PRIu32 "].file \"%.200s\" is not a "
                         "safe relative path inside a bundle",
                         i, f);
    }
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const char *f[2] = {g->buffers[i].before_file, g->buffers[i].after_file};
        for (int k = 0; k < 2; k++)
            if (f[k] && !sg_bundle_relpath_ok(f[k]))
                return wfail(w, SG_EINVAL, "graph.json",
                             "buffers[%" PRIu32 "].%s \"%.200s\" is "
                             "not a safe relative path inside a bundle",
                             i, k ? "after" : "before", f[k]);
    }
    return SG_OK;
}

int sg_bundle_write(const sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                    size_t n_blobs, unsigned flags, sg_diag_t *diag)
{
    static atomic_uint counter;
    wctx_t w = {.diag = diag, .path = path};
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
        if ((b->src_path != NULL) == (b->data != NULL) && !(b->src_path == NULL && b->size == 0))
            return wfail(&w, SG_EINVAL, b->relpath, "blob %zu: give either data or src_path", i);
    }
    struct stat st;
    if (lstat(path, &st) == 0 && !(flags & SG_BUNDLE_OVERWRITE))
        return wfail(&w, SG_EEXIST, path, "already exists");
    int rc = check_names(&w, g);
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
    if (!rc) rc = write_file(&w, tmpfd, "graph.json", json, strlen(json), NULL, false);
    free(json);
    for (size_t i = 0; i < n_blobs && !rc; i++)
        rc = write_file(&w, tmpfd, blobs[i].relpath, blobs[i].data, blobs[i].size,
                        blobs[i].src_path, blobs[i].compress);
    for (size_t i = 0; i < w.n_dirs && !rc; i++) {
        char sub[PATH_MAX];
        int k = snprintf(sub, sizeof sub, "%s/%s", tmp, w.dirs[i]);
        if (k < 0 || (size_t)k >= sizeof sub || fsync_path(sub) != 0)
            rc = wfail(&w, SG_EIO, w.dirs[i], "fsync failed: %s", strerror(errno));
    }
    if (!rc && (injected_failure() || fsync(tmpfd) != 0))
        rc = wfail(&w, SG_EIO, path, "fsync failed: %s", strerror(errno));
    if (tmpfd >= 0) close(tmpfd);
    for (size_t i = 0; i < w.n_dirs; i++)
        free(w.dirs[i]);
    free(w.dirs);
    if (!rc) rc = install(&w, tmp, path, flags & SG_BUNDLE_OVERWRITE, serial);
    if (rc) {
        remove_tree(tmp);
        return rc;
    }
    /* make the rename itself durable */
    char parent[PATH_MAX];
    parent_of(path, parent, sizeof parent);
    fsync_path(parent);
    return SG_OK;
}
