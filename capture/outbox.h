/* outbox.h: which captured graphs become bundles, and what they are called.
 *
 * Policy, without I/O: a graph whose digest was already written is a
 * duplicate (it names the earlier bundle); after SGCAP_MAX_BUNDLES bundles
 * nothing more is written but graphs are still counted, and the caller is
 * told once so it can log once. Names are
 * `<program>[.rank<R>][.dev<D>].<pid>.<seq>.sgraph`, with the program name
 * reduced to characters a bundle path may hold, the rank of a process
 * started by a parallel launcher (RANK, OMPI_COMM_WORLD_RANK, ...) and the
 * device ordinal when the process sees more than one device (docs/NCCL.md).
 * Memory: one entry per bundle written, so bounded by the maximum.
 */
#ifndef SGCAP_CAPTURE_OUTBOX_H
#define SGCAP_CAPTURE_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SG_OUTBOX_DEFAULT_MAX 64u

typedef enum {
    SG_OUTBOX_WRITE = 0,  /* new: write it */
    SG_OUTBOX_DUPLICATE,  /* same digest as bundle `existing` */
    SG_OUTBOX_OVER_LIMIT, /* new, but the bound is reached */
} sg_outbox_decision_t;

/* Where a bundle comes from, as far as its name says: the launcher's rank
 * of the process (-1: none) and the device ordinal (-1: not in the name). */
typedef struct {
    int32_t rank;
    int32_t device;
} sg_outbox_origin_t;

typedef struct {
    uint64_t digest;
    uint32_t sequence;         /* graph sequence of the bundle written for it */
    sg_outbox_origin_t origin; /* ... and the rest of its name */
} sg_outbox_entry_t;

#define SG_OUTBOX_SEEN_MAX 65536u /* distinct digests remembered for counting */

typedef struct {
    uint32_t max_bundles;
    uint32_t written;    /* bundles written */
    uint64_t offered;    /* graphs offered */
    uint64_t distinct;   /* ... with a digest not offered before */
    uint64_t duplicates; /* ... that matched a written bundle */
    uint64_t over_limit; /* distinct graphs not written because of the bound */
    uint64_t failed;     /* ... whose write failed */
    bool limit_reported;
    bool seen_full;             /* over SG_OUTBOX_SEEN_MAX distinct: `distinct` is a floor */
    sg_outbox_entry_t *entries; /* written bundles, in order */
    uint32_t n_entries, cap_entries;
    uint64_t *seen; /* open-addressing set of digests offered (0 = empty slot) */
    uint32_t n_seen;
} sg_outbox_t;

/* max 0 means SG_OUTBOX_DEFAULT_MAX. */
void sg_outbox_init(sg_outbox_t *o, uint32_t max_bundles);
void sg_outbox_free(sg_outbox_t *o);

/* Decide for a graph with this digest. For a duplicate *existing gets the
 * earlier bundle's entry (its sequence and origin: what names it).
 * *report_limit (may be NULL) is set true the first time the bound refuses
 * a graph. Counts the graph as offered, and as distinct when its digest is
 * new (remembered up to SG_OUTBOX_SEEN_MAX digests, 1 MiB; a repeat of a
 * graph refused by the bound is not counted over the limit again). */
sg_outbox_decision_t sg_outbox_decide(sg_outbox_t *o, uint64_t digest, sg_outbox_entry_t *existing,
                                      bool *report_limit);
/* Would sg_outbox_decide say WRITE for this digest? (No side effects.) */
bool sg_outbox_would_write(const sg_outbox_t *o, uint64_t digest);

/* The bundle for a WRITE decision was written (or not) under this sequence
 * and origin (NULL: none). Returns 0 or SG_ENOMEM (then the digest is
 * simply not remembered). */
int sg_outbox_done(sg_outbox_t *o, uint64_t digest, uint32_t sequence,
                   const sg_outbox_origin_t *origin, bool ok);

/* SGCAP_MAX_BUNDLES text -> bound: a positive decimal number, else the
 * default; "0" means no bundles at all (counting only) and gives 0. */
uint32_t sg_outbox_parse_max(const char *text, bool *valid);

/* Reduce a program name (argv[0] or /proc/self/exe) to its basename with
 * every character outside [A-Za-z0-9._-] replaced by '_', no leading '.',
 * at most 64 bytes; "program" when nothing is left. */
void sg_outbox_program_name(const char *path, char *out, size_t n);

/* "<dir>/<program>[.rank<R>][.dev<D>].<pid>.<seq>.sgraph" into buf (the
 * parts the origin knows; origin may be NULL); returns 0 or SG_ELIMIT when
 * it does not fit. */
int sg_outbox_bundle_path(char *buf, size_t n, const char *dir, const char *program,
                          const sg_outbox_origin_t *origin, int64_t pid, uint32_t sequence);

/* The rank a parallel launcher gave this process: the first of RANK,
 * OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID, LOCAL_RANK that
 * is set, read through get (getenv; a test passes its own). A variable that
 * is set but not a decimal number from 0 to 2^31-1 is skipped. -1 when none
 * gives one. */
int32_t sg_outbox_rank(char *(*get)(const char *));

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_OUTBOX_H */
