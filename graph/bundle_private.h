/* bundle_private.h: what the bundle's source files (bundle.c, bundle_emit.c,
 * bundle_parse.c) share and nobody else sees. */
#ifndef SGCAP_BUNDLE_PRIVATE_H
#define SGCAP_BUNDLE_PRIVATE_H

#include <stdarg.h>
#include "bundle.h"

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
