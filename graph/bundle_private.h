/* bundle_private.h: what the bundle's source files (bundle*.c) share and
 * nobody else sees. */
#ifndef SGCAP_BUNDLE_PRIVATE_H
#define SGCAP_BUNDLE_PRIVATE_H

#include <limits.h>
#include <stdarg.h>
#include <sys/types.h>

#include "bundle.h"

#define SG_BUNDLE_MAX_RELPATH 1024

struct sg_bundle {
    int dirfd;           /* the directory, opened once */
    char *path;          /* as the caller named it, for messages */
    char real[PATH_MAX]; /* its real path when opened (the /proc check) */
    dev_t dev;           /* what the directory is, to recognize it */
    ino_t ino;
    sg_graph_t *graph;
};

/* Open relpath (already sg_bundle_relpath_ok) below dirfd for reading,
 * component by component with O_NOFOLLOW: a symlink anywhere is refused, not
 * followed; only a regular file is opened. On failure returns an SG_E* code
 * and a reason in why. */
int sg_bundle_open_inside(int dirfd, const char *relpath, int *out, const char **why);
/* Second line of defence: the opened file really lies below the bundle's
 * real path (checked through /proc when it exists). */
bool sg_bundle_fd_inside(int fd, const char *root_real);

/* sg_bundle_write's flag from sg_bundle_write_derived: what is at the path
 * has been checked to be replaceable (a fuller check than OVERWRITE's own). */
enum { SG_BUNDLE_REPLACE_CHECKED = 1u << 8 };

/* sg_bundle_write, taking SG_BUNDLE_REPLACE_CHECKED and counting the files
 * carried from a source bundle (carried may be NULL). */
int sg_bundle_write_files(const sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                          size_t n_blobs, unsigned flags, sg_bundle_carried_t *carried,
                          sg_diag_t *diag);

/* Fill d (may be NULL) with file, position and a printf-style message; returns
 * code so callers can `return sg_bundle_diag(...)`. */
int sg_bundle_diag(sg_diag_t *d, int code, const char *file, int line, int column, const char *fmt,
                   ...) __attribute__((format(printf, 6, 7)));
int sg_bundle_vdiag(sg_diag_t *d, int code, const char *file, int line, int column, const char *fmt,
                    va_list ap) __attribute__((format(printf, 6, 0)));

/* Test hook: when set to n > 0, the n-th fallible file-system step of the
 * next sg_bundle_write fails with EIO (counts down; 0 = off). Only tests set
 * it, on one thread. */
extern int sg_bundle_test_fail_at;

/* Limit on the holes (unused ids) of a bundle with `entries` nodes and edges
 * in all its graphs: keeps the memory spent on holes proportional to input. */
static inline uint64_t sg_bundle_hole_budget(uint64_t entries)
{
    return 65536u + 64u * entries;
}

#endif /* SGCAP_BUNDLE_PRIVATE_H */
