/* outbox.h: which captured graphs become bundles, and what they are called.
 *
 * Policy, without I/O: a graph whose digest was already written is a
 * duplicate (it names the earlier bundle); after SGCAP_MAX_BUNDLES bundles
 * nothing more is written but graphs are still counted, and the caller is
 * told once so it can log once. Names are `<program>.<pid>.<seq>.sgraph`
 * with the program name reduced to characters a bundle path may hold.
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

typedef struct {
    uint64_t digest;
    uint32_t sequence; /* graph sequence of the bundle written for it */
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
 * earlier bundle's sequence. *report_limit (may be NULL) is set true the
 * first time the bound refuses a graph. Counts the graph as offered, and as
 * distinct when its digest is new (remembered up to SG_OUTBOX_SEEN_MAX
 * digests, 1 MiB; a repeat of a graph refused by the bound is not counted
 * over the limit again). */
sg_outbox_decision_t sg_outbox_decide(sg_outbox_t *o, uint64_t digest, uint32_t *existing,
                                      bool *report_limit);
/* Would sg_outbox_decide say WRITE for this digest? (No side effects.) */
bool sg_outbox_would_write(const sg_outbox_t *o, uint64_t digest);

/* The bundle for a WRITE decision was written (or not). Returns 0 or
 * SG_ENOMEM (then the digest is simply not remembered). */
int sg_outbox_done(sg_outbox_t *o, uint64_t digest, uint32_t sequence, bool ok);

/* SGCAP_MAX_BUNDLES text -> bound: a positive decimal number, else the
 * default; "0" means no bundles at all (counting only) and gives 0. */
uint32_t sg_outbox_parse_max(const char *text, bool *valid);

/* Reduce a program name (argv[0] or /proc/self/exe) to its basename with
 * every character outside [A-Za-z0-9._-] replaced by '_', no leading '.',
 * at most 64 bytes; "program" when nothing is left. */
void sg_outbox_program_name(const char *path, char *out, size_t n);

/* "<dir>/<program>.<pid>.<seq>.sgraph" into buf; returns 0 or SG_ELIMIT
 * when it does not fit. */
int sg_outbox_bundle_path(char *buf, size_t n, const char *dir, const char *program, int64_t pid,
                          uint32_t sequence);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_OUTBOX_H */
