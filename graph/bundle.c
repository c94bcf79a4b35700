/* bundle.c: what reading and writing a bundle share (docs/FORMAT.md):
 * diagnostics, the rule for file names inside a bundle, and opening a file
 * below a bundle's directory descriptor without following any link. The
 * reader is bundle_read.c (directory, files) and bundle_parse.c (graph.json),
 * the writer bundle_write.c and bundle_emit.c, a bundle derived from another
 * bundle_derive.c. */
#include "bundle_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

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

bool sg_bundle_relpath_ok(const char *relpath)
{
    if (!relpath || !relpath[0] || relpath[0] == '/') return false;
    size_t len = strlen(relpath);
    if (len > SG_BUNDLE_MAX_RELPATH) return false;
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

int sg_bundle_open_inside(int dirfd, const char *relpath, int *out, const char **why)
{
    char buf[SG_BUNDLE_MAX_RELPATH + 1];
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

bool sg_bundle_fd_inside(int fd, const char *root_real)
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

/* ---- an open bundle's files ----------------------------------------------------------- */

/* These two are here, not in bundle_read.c, so that the writer (which
 * copies files from an open bundle) does not pull the reader and its parser
 * into the shim. */
const char *sg_bundle_path(const sg_bundle_t *b)
{
    return b ? b->path : NULL;
}

int sg_bundle_open_file(const sg_bundle_t *b, const char *relpath, int *fd, sg_diag_t *diag)
{
    if (!b || !fd) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "bad argument");
    *fd = -1;
    if (!sg_bundle_relpath_ok(relpath))
        return sg_bundle_diag(diag, SG_EFORMAT, relpath ? relpath : "", 0, 0,
                              "not a safe relative path inside the bundle");
    const char *why = NULL;
    int rc = sg_bundle_open_inside(b->dirfd, relpath, fd, &why);
    if (rc) return sg_bundle_diag(diag, rc, relpath, 0, 0, "%s", why);
    if (!sg_bundle_fd_inside(*fd, b->real)) {
        close(*fd);
        *fd = -1;
        return sg_bundle_diag(diag, SG_EFORMAT, relpath, 0, 0, "resolves outside the bundle");
    }
    return SG_OK;
}

/* ---- the content hash ------------------------------------------------------------------ */

void sg_bundle_hash(const void *p, size_t n, char out[17])
{
    static const char hex[] = "0123456789abcdef";
    uint64_t h = XXH64(n ? p : "", n, 0);
    for (int i = 15; i >= 0; i--) {
        out[i] = hex[h & 0xf];
        h >>= 4;
    }
    out[16] = '\0';
}
