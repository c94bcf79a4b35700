/* reasons.h: a bounded tally of distinct reasons for an exit summary:
 * capture's graphs "not recorded" and the optimizer's graphs that "kept
 * original" are each counted by reason, the first SG_REASONS_MAX - 1
 * distinct texts on their own and every later one under "other reasons",
 * so a summary line stays one line whatever the program does. */
#ifndef SGCAP_CAPTURE_REASONS_H
#define SGCAP_CAPTURE_REASONS_H

#include <stddef.h>
#include <stdint.h>

#define SG_REASONS_MAX 8

typedef struct {
    struct {
        char why[160];
        uint64_t count;
    } r[SG_REASONS_MAX];
} sg_reasons_t;

void sg_reasons_count(sg_reasons_t *t, const char *why);
/* " (N why; N why)", or "" when nothing was counted; always terminated,
 * cut at n. */
void sg_reasons_format(const sg_reasons_t *t, char *out, size_t n);

#endif /* SGCAP_CAPTURE_REASONS_H */
