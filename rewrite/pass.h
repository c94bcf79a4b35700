/* pass.h: the rewriter's public entry point: run named passes over a graph,
 * collect what each did and why in a report (text for people, JSON for
 * machines), log one line per pass in the graph's pass log, and verify after
 * every pass that no ordering of the input was lost.
 *
 * Passes (in default order):
 *   access           what each kernel touches, from its code (rewrite/access_pass.c)
 *   control-deps     make orderings implied by capture explicit (control edges)
 *   fusion-legality  analysis: same-stream kernel chains and their barriers
 *   defer-dealloc    cross-stream frees: dealloc edges, placed by reachability
 *   fuse             same-stream kernel chains into one generated kernel (rewrite/fuse.h)
 *   reduce           (not default) drop edges implied by other paths
 * Each pass's algorithm and guarantees are in the comment that opens its
 * file (rewrite/control_deps.c, ...).
 *
 * Ordering guarantee, checked by the verifier when options.verify is set
 * (the default): for every pair of nodes (a, b) with a path a -> b before a
 * pass, the path still exists after it. The one deliberate exception is a
 * node a pass declares as moved (defer-dealloc's frees): its own orderings
 * may change, but it keeps the ones the pass declares as required (a free
 * stays after its allocation and every use, and before every allocation
 * that reuses its memory), and every path that ran through it is kept by a
 * bridge. A pass must change edges only through the graph's calls (add,
 * remove): one that rewrites an edge of its input in place fails
 * verification. The verifier costs O((V+E) * k) with k ~ streams (see
 * reach.h).
 */
#ifndef SGCAP_REWRITE_PASS_H
#define SGCAP_REWRITE_PASS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reports ------------------------------------------------------------- */

typedef struct sg_report sg_report_t;

sg_report_t *sg_report_create(void); /* NULL when out of memory */
void sg_report_destroy(sg_report_t *r);
/* Human-readable text of every pass run so far ("" when none). */
const char *sg_report_text(const sg_report_t *r);
/* The JSON report's schema (docs/SCHEMAS.md): its name and version lead
 * every report; a change to what the report holds raises the version. */
#define SG_REPORT_SCHEMA "sgcap-rewrite-report"
#define SG_REPORT_SCHEMA_VERSION 5

/* {"schema": SG_REPORT_SCHEMA, "schema_version": SG_REPORT_SCHEMA_VERSION,
 *  "passes": [{"pass": NAME, "summary": LINE, "verify": {...},
 *  ...pass-specific fields}, ...]}; borrowed, valid until the report is
 * destroyed (passes run later are appended to it). The passes write their
 * JSON as text; this tree is made from it on the first call (a 100k-node
 * report is ~15 MB of JSON: callers that only write it out use
 * sg_report_json_string). NULL when out of memory. */
json_t *sg_report_json(const sg_report_t *r);
/* The same serialized (indent 2, keys in insertion order, newline ended:
 * byte for byte what json_dumps gives of that tree); *out is malloc'd. */
int sg_report_json_string(const sg_report_t *r, char **out);
/* The passes run so far, each pass's name and one-line summary, without
 * the JSON ("" for a pass that failed before it had one); i < count. */
size_t sg_report_pass_count(const sg_report_t *r);
const char *sg_report_pass_name(const sg_report_t *r, size_t i);
const char *sg_report_pass_summary(const sg_report_t *r, size_t i);

/* ---- passes -------------------------------------------------------------- */

/* Files a pass made for the output bundle (the fused kernels' code): the
 * caller writes them beside graph.json; the graph's images name them. */
typedef struct {
    char relpath[64]; /* "code/<hash>.cubin" */
    void *data;       /* malloc'd */
    size_t size;
} sg_rewrite_file_t;

typedef struct {
    sg_rewrite_file_t *files;
    size_t n, cap;
} sg_rewrite_files_t;

void sg_rewrite_files_free(sg_rewrite_files_t *f);

/* Where `fuse` gets a kernel's PTX when the images are not in a bundle on
 * disk (the in-app optimizer: the images capture holds in the process).
 * For kernel `kernel` of image `image` of g, PTX usable on sm_<arch>:
 * returns 0 with *ptx malloc'd and NUL-terminated (*len its length); 0
 * with *ptx NULL and the reason in why when there is none (the stage is
 * refused with it); or an SG_E* code (out of memory). */
typedef int (*sg_rewrite_kernel_ptx_fn)(void *user, const sg_graph_t *g, const char *kernel,
                                        uint32_t image, uint32_t arch, char **ptx, size_t *len,
                                        char *why, size_t n);

typedef struct {
    bool verify;        /* check the ordering guarantee after each pass (default true) */
    const char *bundle; /* the input bundle's directory: where passes read code images
                           (fuse); NULL: none, and fuse refuses every chain */
    const struct sg_bundle *source; /* the input bundle, open (graph/bundle.h): when set,
                                       images are read through its directory descriptor
                                       instead of reopening `bundle` for each */
    sg_rewrite_files_t *files; /* where passes put new files; NULL: fuse changes nothing */
    uint32_t fuse_arch; /* sm number fused kernels are compiled for (0: the bundle's device) */
    uint32_t fuse_block, fuse_elements; /* pointwise fused kernels' threads per block and
                                           elements per thread (0: 256 and 4) */
    sg_rewrite_kernel_ptx_fn kernel_ptx; /* instead of the bundle's images (in the app) */
    void *kernel_ptx_user;
    uint32_t fuse_max_kernels; /* fused kernels one run may compile (0: no limit); the
                                  chains past it are reported and left alone */
    uint32_t fuse_budget_ms;   /* time the fuse pass may take, analysis and NVRTC (0: no
                                  limit); once spent, the chains left are reported and
                                  left alone (the in-app optimizer's bound on the time a
                                  program's cuGraphInstantiate can take) */
} sg_rewrite_options_t;

void sg_rewrite_options_init(sg_rewrite_options_t *opt);

/* The registry: index 0 .. sg_rewrite_pass_count()-1. */
size_t sg_rewrite_pass_count(void);
const char *sg_rewrite_pass_name(size_t i);
const char *sg_rewrite_pass_summary(size_t i);
bool sg_rewrite_pass_is_default(size_t i);
/* Index of a pass by name, or -1. */
int sg_rewrite_pass_find(const char *name);

/* Run `passes` (n names; NULL/0 = the default list) in order on the root
 * graph g. report may be NULL. Returns 0; SG_EINVAL for an unknown pass name
 * or a body graph (nothing is run); SG_ECYCLE when the input has a cycle or
 * a pass left one; SG_EINVAL when the verifier finds a lost ordering or an
 * edge of the input rewritten in place (the report names it); another SG_E* code when a pass fails (out of memory).
 * On any failure g may hold the failing pass's partial work: callers that
 * need the input intact run on a clone (the CLI writes nothing then). */
int sg_rewrite_run(sg_graph_t *g, const char *const *passes, size_t n, sg_report_t *report);
int sg_rewrite_run_opts(sg_graph_t *g, const char *const *passes, size_t n,
                        const sg_rewrite_options_t *opt, sg_report_t *report);

/* The `access` pass (offline builds only) on g when some kernel node of it
 * has no access facts yet: what `sgcap check`, inspect and replay do with
 * a bundle written before the pass ran. Code is read from source (may be
 * NULL: every kernel then "no code"). *ran (may be NULL) says whether it
 * ran; summary (n bytes, may be NULL) gets the pass's summary line. The
 * graph's pass log gains the pass's line. 0 or an SG_E* code. */
int sg_rewrite_ensure_access(sg_graph_t *g, const struct sg_bundle *source, bool *ran,
                             char *summary, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REWRITE_PASS_H */
