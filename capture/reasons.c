/* reasons.c: the bounded tally of reasons (reasons.h). */
#include "reasons.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void sg_reasons_count(sg_reasons_t *t, const char *why)
{
    uint32_t k = 0;
    for (; k < SG_REASONS_MAX && t->r[k].count; k++)
        if (strcmp(t->r[k].why, why) == 0) break;
    if (k == SG_REASONS_MAX) {
        k = SG_REASONS_MAX - 1;
        snprintf(t->r[k].why, sizeof t->r[k].why, "other reasons");
    } else if (!t->r[k].count) {
        snprintf(t->r[k].why, sizeof t->r[k].why, "%s", why);
    }
    t->r[k].count++;
}

void sg_reasons_format(const sg_reasons_t *t, char *out, size_t n)
{
    if (!n) return;
    out[0] = '\0';
    size_t l = 0;
    for (uint32_t k = 0; k < SG_REASONS_MAX && t->r[k].count && l < n; k++) {
        int w = snprintf(out + l, n - l, "%s%" PRIu64 " %s", k ? "; " : " (", t->r[k].count,
                         t->r[k].why);
        if (w < 0) return;
        l += (size_t)w;
    }
    if (l && l < n) snprintf(out + l, n - l, ")");
}
