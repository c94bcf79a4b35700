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
/* The newest format version this reader knows; it reads every older one
 * (docs/FORMAT.md section 11: what each version added). */
#define SG_FORMAT_VERSION 6
/* A bundle is written with the oldest version that can say everything in
 * it (the newest .since of the fields and enum names it holds, at least
 * this), so older readers keep reading what they can. */
#define SG_FORMAT_VERSION_MIN 1

/* Limits on what a reader accepts (bundles past them get SG_ELIMIT). */
#define SG_BUNDLE_MAX_JSON_BYTES (512u << 20) /* graph.json */
#define SG_BUNDLE_MAX_NODES 4000000u
#define SG_BUNDLE_MAX_EDGES 16000000u
#define SG_BUNDLE_MAX_TABLE 1000000u          /* streams, events, buffers, images */
#define SG_BUNDLE_MAX_PARAM_BYTES (64u << 10) /* one kernel's parameters */
#define SG_BUNDLE_MAX_DEPTH 16                /* nesting of body graphs */
#define SG_BUNDLE_MAX_STRING 65536u
#define SG_BUNDLE_MAX_FUSED_STAGES 4096u    /* stages of one fused kernel */
#define SG_BUNDLE_MAX_DROPPED_WRITES 65536u /* writes one fused kernel drops */
#define SG_BUNDLE_MAX_SITES 65536u          /* access sites of one kernel launch */
/* The reader's memory: the model it builds may take at most this many times
 * the size of graph.json plus the floor (FORMAT.md section 10). */
#define SG_BUNDLE_MEMORY_FACTOR 14u
#define SG_BUNDLE_MEMORY_FLOOR (16u << 20)

/* One diagnostic: what went wrong and where. file is relative to the bundle
 * ("graph.json"); line/column are 1-based, 0 when not applicable. */
typedef struct {
    char file[256];
    int line, column;
    char message[512];
} sg_diag_t;

typedef struct sg_bundle sg_bundle_t;

/* Extra file written into a bundle: `data`/`size` from memory, or the
 * contents of `src_path` (a file the caller trusts), or the file `relpath`
 * of the open bundle `from` (opened below its directory descriptor, no link
 * followed; with `hash`, its bytes must have that XXH64). With `compress`
 * the bytes are zstd-compressed (relpath should end in ".zst"). */
typedef struct {
    const char *relpath; /* "code/0123456789abcdef.fatbin", "data/b3.before.zst" */
    const void *data;
    size_t size;
    const char *src_path;
    bool compress;
    const sg_bundle_t *from;
    const char *hash; /* with from: 16 hex digits, or NULL */
    bool optional;    /* with from: a file the source lacks is left out, not an error */
    bool named;       /* sg_bundle_write_derived: a file the graph names whose bytes (data)
                         the caller made, written instead of carried from the source */
} sg_bundle_blob_t;

enum {
    /* Replace what is at path, if it is a bundle: an empty directory, or one
     * holding only what sgcap writes into bundles (graph.json, report.txt,
     * report.json, code/ and data/ with regular files in them). A directory
     * with anything else in it is the user's and is never replaced. */
    SG_BUNDLE_OVERWRITE = 1u << 0,
    /* Skip the fsyncs. The bundle is still built under a temporary name and
     * renamed into place whole, so no reader sees half a bundle while the
     * system runs and a failed write leaves nothing; only a crash of the
     * system itself (power, kernel) may lose or truncate what was written
     * last. The shim writes this way unless SGCAP_FSYNC=1 (docs/CAPTURE.md),
     * so that a program does not wait on the disk. */
    SG_BUNDLE_NO_FSYNC = 1u << 1,
};

/* Write g and the blobs to `path` (a directory name, conventionally ending in
 * ".sgraph"). Atomic: the bundle appears complete or not at all. Returns 0 or
 * an SG_E* code with diag filled (diag may be NULL). */
int sg_bundle_write(const sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs,
                    size_t n_blobs, unsigned flags, sg_diag_t *diag);

/* ---- an open bundle ---------------------------------------------------------- */

/* Open the bundle at path: its directory is opened once and held by a
 * descriptor, graph.json is read and checked, and every file it names is
 * checked to be a regular file inside (a missing one is allowed). Every file
 * of the bundle used later is opened below that descriptor, one component
 * at a time with O_NOFOLLOW, and read from the descriptor so opened: a
 * bundle changed while it is in use (a file swapped for a link, the
 * directory renamed) cannot make sgcap read from outside it. */
int sg_bundle_open(const char *path, sg_bundle_t **out, sg_diag_t *diag);
void sg_bundle_close(sg_bundle_t *b);
/* The graph (owned by b), the path it was opened by. */
sg_graph_t *sg_bundle_graph(const sg_bundle_t *b);
const char *sg_bundle_path(const sg_bundle_t *b);
/* Hand the graph to the caller (who destroys it); b keeps its directory. */
sg_graph_t *sg_bundle_take_graph(sg_bundle_t *b);

/* A descriptor (O_RDONLY, close-on-exec) of the regular file relpath inside
 * b. SG_ENOENT when it does not exist, SG_EFORMAT for a link or a non-file. */
int sg_bundle_open_file(const sg_bundle_t *b, const char *relpath, int *fd, sg_diag_t *diag);
/* The bytes of relpath inside b, at most max_bytes (after decompression for
 * a name ending in ".zst"); *data is malloc'd. */
int sg_bundle_load(const sg_bundle_t *b, const char *relpath, uint64_t max_bytes, void **data,
                   size_t *size, sg_diag_t *diag);
/* The bytes of code image `image` (at most max_bytes), checked against its
 * hash (and size, when the graph gives one): a file that does not match is
 * SG_EFORMAT, naming the image. SG_ENOENT when the image has no file. */
int sg_bundle_load_image(const sg_bundle_t *b, uint32_t image, uint64_t max_bytes, void **data,
                         size_t *size, sg_diag_t *diag);

/* The content hash of the format (FORMAT.md section 1): the XXH64 (seed 0)
 * of n bytes as 16 lowercase hex digits and a NUL. */
void sg_bundle_hash(const void *p, size_t n, char out[17]);

/* Do data/n hold code image `image` of g: its hash (and its size, when g
 * gives one)? SG_EFORMAT naming the file when not. */
int sg_bundle_check_image(const sg_graph_t *g, uint32_t image, const void *data, size_t n,
                          sg_diag_t *diag);

/* What sg_bundle_write_derived carried over. */
typedef struct {
    uint32_t copied;  /* files copied from the source bundle */
    uint32_t missing; /* files the graph names that the source lacks */
    char first_missing[256];
} sg_bundle_carried_t;

enum {
    /* with SG_BUNDLE_OVERWRITE: replace the source bundle itself (an update
     * in place); without it, the source is never replaced */
    SG_BUNDLE_REPLACE_SOURCE = 1u << 1,
};

/* Write g (a graph derived from src's, e.g. by rewrite passes) as the bundle
 * `path`, carrying over every file of src that g names, byte for byte (a code
 * image only if it matches its hash), plus the extra blobs: files g does not
 * name (reports), and files g names that the caller made (`named`, from
 * data: the code a pass generated), each checked before anything is written
 * to be named by g, once, and to match the hash g gives it. A file g names
 * that neither src nor the extras hold stays missing, as the format allows,
 * and is counted in *carried (may be NULL). SG_BUNDLE_OVERWRITE replaces an existing `path`
 * only if it opens as a valid bundle and holds nothing but graph.json,
 * report.txt, report.json and the files its graph names; `path` may never
 * be src, lie inside src or hold it, unless SG_BUNDLE_REPLACE_SOURCE asks to
 * replace src itself. Atomic like sg_bundle_write. */
int sg_bundle_write_derived(const sg_bundle_t *src, const sg_graph_t *g, const char *path,
                            const sg_bundle_blob_t *extra, size_t n_extra, unsigned flags,
                            sg_bundle_carried_t *carried, sg_diag_t *diag);

/* Read graph.json of the bundle at `path` into a new graph (sg_bundle_open,
 * keep the graph, close). */
int sg_bundle_read(const char *path, sg_graph_t **out, sg_diag_t *diag);

/* Parse a graph.json held in memory (used by read and by the fuzzer).
 * `name` is used in diagnostics. */
int sg_bundle_parse_json(const char *text, size_t len, const char *name, sg_graph_t **out,
                         sg_diag_t *diag);

/* Serialize to a malloc'd NUL-terminated JSON string (stable key order). */
int sg_bundle_to_json(const sg_graph_t *g, char **out);

/* Read a file inside the bundle at path, refusing paths that leave it,
 * symlinks, and files larger than max_bytes. A name ending in ".zst" is
 * decompressed (the decompressed size is bounded by max_bytes too). *data is
 * malloc'd. This opens the bundle's directory anew: a caller that reads
 * several files of one bundle should hold it open (sg_bundle_load). */
int sg_bundle_read_blob(const char *path, const char *relpath, uint64_t max_bytes, void **data,
                        size_t *size, sg_diag_t *diag);

/* Is relpath a safe relative path (no "..", not absolute, no empty or "."
 * components, only [A-Za-z0-9._-/])? */
bool sg_bundle_relpath_ok(const char *relpath);

/* A file a graph names (images[].file, buffers[].before and .after, and
 * whatever PATH field bundle_fields.c gains). */
typedef struct {
    const char *relpath; /* as graph.json names it */
    const char *where;   /* "images[3].file", for messages */
    const char *hash;    /* the XXH64 its bytes must have (16 hex digits), or NULL */
    uint64_t size;       /* the byte count it must have, 0 when not said */
} sg_bundle_file_t;
typedef int (*sg_bundle_file_fn)(void *ctx, const sg_bundle_file_t *file);

/* Call fn for every file g names, in table order (a file named twice comes
 * twice); stops at fn's first non-zero result and returns it. */
int sg_bundle_each_file(const sg_graph_t *g, sg_bundle_file_fn fn, void *ctx);

/* Do a and b hold the same bundle content: every field the format stores,
 * node and edge ids and holes, equal? On a difference, where (n bytes, may
 * be NULL) names the first: "nodes[3].kernel.grid: different values". */
bool sg_bundle_same(const sg_graph_t *a, const sg_graph_t *b, char *where, size_t n);

/* Format "file:line:col: message" (or "file: message") into buf. */
const char *sg_diag_format(const sg_diag_t *d, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_BUNDLE_H */
