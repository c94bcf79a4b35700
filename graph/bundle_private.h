/* bundle_private.h: what the bundle's source files (bundle.c, bundle_emit.c,
 * bundle_parse.c) share and nobody else sees: diagnostics and enum names. */
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

/* Names used in graph.json for the model's enums (index = enum value). */
extern const char *const sg_bundle_buffer_kind_names[SG_BUFFER_KIND_COUNT];
extern const char *const sg_bundle_image_kind_names[SG_IMAGE_KIND_COUNT];
extern const char *const sg_bundle_copy_kind_names[5];
extern const char *const sg_bundle_cond_type_names[3];
/* Access modes are not dense (1, 2, 3, 7): map through these. */
const char *sg_bundle_access_mode_name(sg_access_mode_t m);
int sg_bundle_access_mode_from_name(const char *name); /* -1 when unknown */

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
