/* bundle_read.c: an open bundle (bundle.h): its directory held by one
 * descriptor, graph.json read through it (bundle_parse.c decodes the text),
 * and every other file of it opened below that descriptor without following
 * links, bounded in size before anything is allocated for it, and checked
 * against its hash where the graph gives one. */
#include "bundle_private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
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

/* ---- open ----------------------------------------------------------------------------------- */

static int open_dir(const char *path, sg_bundle_t *b, sg_diag_t *diag)
{
    /* the path the user gave may go through links: that is their choice;
     * from here on only the descriptor is used */
    b->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b->dirfd < 0) {
        int err = errno;
        return sg_bundle_diag(diag, err == ENOENT ? SG_ENOENT : SG_EIO, path, 0, 0,
                              "cannot open the bundle directory: %s", strerror(err));
    }
    struct stat st;
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", b->dirfd);
    ssize_t n = readlink(link, b->real, sizeof b->real - 1);
    if (n > 0) {
        b->real[n] = '\0';
    } else if (!realpath(path, b->real)) {
        int err = errno;
        return sg_bundle_diag(diag, SG_EIO, path, 0, 0, "cannot resolve the bundle path: %s",
                              strerror(err));
    }
    if (fstat(b->dirfd, &st) != 0)
        return sg_bundle_diag(diag, SG_EIO, path, 0, 0, "cannot stat the bundle directory: %s",
                              strerror(errno));
    b->dev = st.st_dev;
    b->ino = st.st_ino;
    return SG_OK;
}

/* A file graph.json names must be a regular file inside the bundle. A
 * missing one is not an error here: a capture may have been unable to store
 * it, and whoever needs its bytes gets SG_ENOENT. */
static int check_ref(void *ctx, const sg_bundle_file_t *f)
{
    const sg_bundle_t *b = ((void **)ctx)[0];
    sg_diag_t *diag = ((void **)ctx)[1];
    int fd;
    const char *why = NULL;
    int rc = sg_bundle_open_inside(b->dirfd, f->relpath, &fd, &why);
    if (rc == SG_ENOENT) return SG_OK;
    if (rc == SG_OK) {
        bool inside = sg_bundle_fd_inside(fd, b->real);
        close(fd);
        if (inside) return SG_OK;
        rc = SG_EFORMAT;
        why = "resolves outside the bundle";
    }
    return sg_bundle_diag(diag, rc, "graph.json", 0, 0, "%s: \"%s\" %s", f->where, f->relpath, why);
}

static int read_graph(sg_bundle_t *b, sg_diag_t *diag)
{
    int fd;
    const char *why = NULL;
    int rc = sg_bundle_open_inside(b->dirfd, "graph.json", &fd, &why);
    if (rc) return sg_bundle_diag(diag, rc, "graph.json", 0, 0, "%s", why);
    char *text = NULL;
    size_t len = 0;
    struct stat st = {0};
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > SG_BUNDLE_MAX_JSON_BYTES) {
        /* refused from its size alone, before a byte is read */
        rc = sg_bundle_diag(diag, SG_ELIMIT, "graph.json", 0, 0,
                            "%lld bytes, more than the limit %u", (long long)st.st_size,
                            SG_BUNDLE_MAX_JSON_BYTES);
    } else if (!sg_bundle_fd_inside(fd, b->real)) {
        rc = sg_bundle_diag(diag, SG_EFORMAT, "graph.json", 0, 0, "resolves outside the bundle");
    } else {
        rc = read_all(fd, SG_BUNDLE_MAX_JSON_BYTES, &text, &len);
        if (rc == SG_ENOMEM)
            sg_bundle_diag(diag, rc, "graph.json", 0, 0,
                           "out of memory: malloc refused %lld bytes for its text",
                           (long long)st.st_size + 2);
        else if (rc)
            sg_bundle_diag(diag, rc, "graph.json", 0, 0, "cannot read: %s",
                           rc == SG_ELIMIT ? "larger than the limit" : sg_strerror(rc));
    }
    close(fd);
    if (!rc) rc = sg_bundle_parse_json(text, len, "graph.json", &b->graph, diag);
    free(text);
    if (rc) return rc;
    void *ctx[2] = {b, diag};
    return sg_bundle_each_file(b->graph, check_ref, ctx);
}

/* The directory only, for reading files of a bundle whose graph is not needed. */
static int open_bare(const char *path, sg_bundle_t **out, sg_diag_t *diag)
{
    *out = NULL;
    if (!path) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "no bundle path");
    sg_bundle_t *b = calloc(1, sizeof *b);
    if (!b || !(b->path = strdup(path))) {
        free(b);
        return sg_bundle_diag(diag, SG_ENOMEM, path, 0, 0, "out of memory");
    }
    b->dirfd = -1;
    int rc = open_dir(path, b, diag);
    if (rc) {
        sg_bundle_close(b);
        return rc;
    }
    *out = b;
    return SG_OK;
}

int sg_bundle_open(const char *path, sg_bundle_t **out, sg_diag_t *diag)
{
    if (!out) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "bad argument");
    int rc = open_bare(path, out, diag);
    if (rc) return rc;
    if ((rc = read_graph(*out, diag))) {
        sg_bundle_close(*out);
        *out = NULL;
    }
    return rc;
}

void sg_bundle_close(sg_bundle_t *b)
{
    if (!b) return;
    if (b->dirfd >= 0) close(b->dirfd);
    sg_graph_destroy(b->graph);
    free(b->path);
    free(b);
}

sg_graph_t *sg_bundle_graph(const sg_bundle_t *b)
{
    return b ? b->graph : NULL;
}

sg_graph_t *sg_bundle_take_graph(sg_bundle_t *b)
{
    if (!b) return NULL;
    sg_graph_t *g = b->graph;
    b->graph = NULL;
    return g;
}

int sg_bundle_read(const char *path, sg_graph_t **out, sg_diag_t *diag)
{
    if (!path || !out) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "no bundle path");
    *out = NULL;
    sg_bundle_t *b;
    int rc = sg_bundle_open(path, &b, diag);
    if (rc) return rc;
    *out = sg_bundle_take_graph(b);
    sg_bundle_close(b);
    return SG_OK;
}

/* ---- files ---------------------------------------------------------------------------------- */

int sg_bundle_load(const sg_bundle_t *b, const char *relpath, uint64_t max_bytes, void **data,
                   size_t *size, sg_diag_t *diag)
{
    if (!b || !data || !size) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "bad argument");
    *data = NULL;
    *size = 0;
    int fd;
    int rc = sg_bundle_open_file(b, relpath, &fd, diag);
    if (rc) return rc;
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
    const char *why = NULL;
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

int sg_bundle_load_image(const sg_bundle_t *b, uint32_t image, uint64_t max_bytes, void **data,
                         size_t *size, sg_diag_t *diag)
{
    const sg_image_t *im = b && b->graph ? sg_graph_image(b->graph, image) : NULL;
    if (!im || !data || !size) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "bad argument");
    *data = NULL;
    *size = 0;
    if (!im->file)
        return sg_bundle_diag(diag, SG_ENOENT, "graph.json", 0, 0,
                              "images[%" PRIu32 "] (%s) names no file: its code was not saved",
                              image, im->hash);
    void *p;
    size_t n;
    int rc = sg_bundle_load(b, im->file, max_bytes, &p, &n, diag);
    if (!rc) rc = sg_bundle_check_image(b->graph, image, p, n, diag);
    if (rc) {
        free(p);
        return rc;
    }
    *data = p;
    *size = n;
    return SG_OK;
}

int sg_bundle_check_image(const sg_graph_t *g, uint32_t image, const void *data, size_t n,
                          sg_diag_t *diag)
{
    const sg_image_t *im = sg_graph_image(g, image);
    if (!im) return sg_bundle_diag(diag, SG_EINVAL, "", 0, 0, "no image %" PRIu32, image);
    const char *file = im->file ? im->file : "graph.json";
    char got[17];
    sg_bundle_hash(data, n, got);
    if (strcmp(got, im->hash) != 0)
        return sg_bundle_diag(diag, SG_EFORMAT, file, 0, 0,
                              "its bytes hash to %s, not to images[%" PRIu32
                              "].hash %s: the file was changed or damaged",
                              got, image, im->hash);
    if (im->size && im->size != n)
        return sg_bundle_diag(diag, SG_EFORMAT, file, 0, 0,
                              "%zu bytes, not images[%" PRIu32 "].size %" PRIu64
                              ": the file was changed or damaged",
                              n, image, im->size);
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
    sg_bundle_t *b;
    int rc = open_bare(path, &b, diag);
    if (rc) return rc;
    rc = sg_bundle_load(b, relpath, max_bytes, data, size, diag);
    sg_bundle_close(b);
    return rc;
}
