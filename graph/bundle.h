/* bundle.h: the on-disk form of a graph, NAME.sgraph/ (docs/FORMAT.md).
 *
 * A bundle is a directory: graph.json (the model), code/HASH.* (code images)
 * and data/ID.{before,after}.zst (buffer snapshots). It is written under a
 * temporary name and renamed into place when complete, so a crash never
 * leaves a half bundle. Reading treats the bundle as untrusted input: every
 * size and count is bounded, no path may leave the bundle (no "..", no
 * absolute paths, no symlinks), and every problem yields one message naming
 * the file and the position (line:column) or the id at fault.
 */
#ifndef SGCAP_BUNDLE_H
#define SGCAP_BUNDLE_H

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_FORMAT_NAME "sgcap-bundle"
#define SG_FORMAT_VERSION 2 /* the newest this reader knows; it reads 1 too */
/* The version a bundle is written with: the oldest that can say everything
 * in it (2 only for buffers of kind host_pageable), so older readers keep
 * reading what they can. */
#define SG_FORMAT_VERSION_MIN 1

/* Limits on what a reader accepts (bundles past them get SG_ELIMIT). */
#define SG_BUNDLE_MAX_JSON_BYTES (512u << 20)   /* graph.json */
#define SG_BUNDLE_MAX_NODES 4000000u
#define SG_BUNDLE_MAX_EDGES 16000000u
#define SG_BUNDLE_MAX_TABLE 1000000u           /* streams, events, buffers, images */
#define SG_BUNDLE_MAX_PARAM_BYTES (64u << 10)  /* one kernel's parameters */
#define SG_BUNDLE_MAX_DEPTH 16                 /* nesting of body graphs */
#define SG_BUNDLE_MAX_STRING 65536u

/* One diagnostic: what went wrong and where. file is relative to the bundle
 * ("graph.json"); line/column are 1-based, 0 when not applicable. */
typedef struct {
    char file[256];
    int line, column;
    char message[512];
} sg_diag_t;

/* Extra file written into a bundle: either `data`/`size` from memory or the
 * contents of `src_path` (an existing file, e.g. from another bundle). With
 * `compress` the bytes are zstd-compressed (relpath should end in ".zst"). */
typedef struct {
    const char *relpath; /* "code/0123456789abcdef.fatbin", "data/b3.before.zst" */
    const void *data;
    size_t size;
    const char *src_path;
    bool compress;
} sg_bundle_blob_t;

enum { SG_BUNDLE_OVERWRITE = 1u << 0 }; /* replace an existing bundle at path */

/* Write g and the blobs to `path` (a directory name, conventionally ending in
 * ".sgraph"). Atomic: the bundle appears complete or not at all. Returns 0 or
 * an SG_E* code with diag filled (diag may be NULL). */
int sg_bundle_write(const sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                    size_t n_blobs, unsigned flags, sg_diag_t *diag);

/* Read graph.json of the bundle at `path` into a new graph. */
int sg_bundle_read(const char *path, sg_graph_t **out, sg_diag_t *diag);

/* Parse a graph.json held in memory (used by read and by the fuzzer).
 * `name` is used in diagnostics. */
int sg_bundle_parse_json(const char *text, size_t len, const char *name, sg_graph_t **out,
                         sg_diag_t *diag);

/* Serialize to a malloc'd NUL-terminated JSON string (stable key order). */
int sg_bundle_to_json(const sg_graph_t *g, char **out);

/* Read a file inside the bundle, refusing paths that leave it, symlinks, and
 * files larger than max_bytes. A name ending in ".zst" is decompressed (the
 * decompressed size is bounded by max_bytes too). *data is malloc'd. */
int sg_bundle_read_blob(const char *path, const char *relpath, uint64_t max_bytes, void **data,
                        size_t *size, sg_diag_t *diag);

/* Is relpath a safe relative path (no "..", not absolute, no empty or "."
 * components, only [A-Za-z0-9._-/])? */
bool sg_bundle_relpath_ok(const char *relpath);

/* Format "file:line:col: message" (or "file: message") into buf. */
const char *sg_diag_format(const sg_diag_t *d, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_BUNDLE_H */
