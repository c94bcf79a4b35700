/* outbox.c: bundle write policy and names (outbox.h). */
#include "outbox.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

void sg_outbox_init(sg_outbox_t *o, uint32_t max_bundles)
{
    memset(o, 0, sizeof *o);
    o->max_bundles = max_bundles;
}

void sg_outbox_free(sg_outbox_t *o)
{
    free(o->entries);
    free(o->seen);
    o->entries = NULL;
    o->seen = NULL;
    o->n_entries = o->cap_entries = o->n_seen = 0;
}

#define SEEN_SLOTS (2u * SG_OUTBOX_SEEN_MAX)

/* Insert into the seen set; true when the digest is new (or the set is
 * full and cannot tell). */
static bool seen_insert(sg_outbox_t *o, uint64_t digest)
{
    uint64_t key = digest ? digest : 1; /* 0 marks an empty slot */
    if (!o->seen) {
        o->seen = calloc(SEEN_SLOTS, sizeof *o->seen);
        if (!o->seen) return true;
    }
    uint32_t i = (uint32_t)(key ^ (key >> 29)) & (SEEN_SLOTS - 1);
    while (o->seen[i]) {
        if (o->seen[i] == key) return false;
        i = (i + 1) & (SEEN_SLOTS - 1);
    }
    if (o->n_seen >= SG_OUTBOX_SEEN_MAX) {
        o->seen_full = true;
        return true;
    }
    o->seen[i] = key;
    o->n_seen++;
    return true;
}

sg_outbox_decision_t sg_outbox_decide(sg_outbox_t *o, uint64_t digest, sg_outbox_entry_t *existing,
                                      bool *report_limit)
{
    if (report_limit) *report_limit = false;
    o->offered++;
    bool fresh = seen_insert(o, digest);
    if (fresh) o->distinct++;
    /* Linear: at most max_bundles entries, and a write follows anyway. */
    for (uint32_t i = 0; i < o->n_entries; i++)
        if (o->entries[i].digest == digest) {
            if (existing) *existing = o->entries[i];
            o->duplicates++;
            return SG_OUTBOX_DUPLICATE;
        }
    if (o->written >= o->max_bundles) {
        if (fresh) o->over_limit++;
        if (!o->limit_reported && report_limit) *report_limit = true;
        o->limit_reported = true;
        return SG_OUTBOX_OVER_LIMIT;
    }
    return SG_OUTBOX_WRITE;
}

bool sg_outbox_would_write(const sg_outbox_t *o, uint64_t digest)
{
    for (uint32_t i = 0; i < o->n_entries; i++)
        if (o->entries[i].digest == digest) return false;
    return o->written < o->max_bundles;
}

int sg_outbox_done(sg_outbox_t *o, uint64_t digest, uint32_t sequence,
                   const sg_outbox_origin_t *origin, bool ok)
{
    if (!ok) {
        o->failed++;
        return SG_OK;
    }
    o->written++;
    if (o->n_entries == o->cap_entries) {
        uint32_t cap = o->cap_entries ? o->cap_entries * 2 : 16;
        sg_outbox_entry_t *p = realloc(o->entries, cap * sizeof *p);
        if (!p) return SG_ENOMEM;
        o->entries = p;
        o->cap_entries = cap;
    }
    o->entries[o->n_entries].digest = digest;
    o->entries[o->n_entries].sequence = sequence;
    o->entries[o->n_entries].origin = origin ? *origin : (sg_outbox_origin_t){-1, -1};
    o->n_entries++;
    return SG_OK;
}

uint32_t sg_outbox_parse_max(const char *text, bool *valid)
{
    if (valid) *valid = true;
    if (!text || !*text) return SG_OUTBOX_DEFAULT_MAX;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] == '-' || text[0] == '+' || v > 1000000u) {
        if (valid) *valid = false;
        return SG_OUTBOX_DEFAULT_MAX;
    }
    return (uint32_t)v;
}

void sg_outbox_program_name(const char *path, char *out, size_t n)
{
    if (n == 0) return;
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : (path ? path : "");
    size_t cap = n - 1 < 64 ? n - 1 : 64, o = 0;
    for (const char *s = base; *s && o < cap; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (o == 0 && c == '.') continue; /* no hidden files, no "..", no "." */
        out[o++] = ok ? c : '_';
    }
    out[o] = '\0';
    if (o == 0) snprintf(out, n, "%s", "program");
}

int sg_outbox_bundle_path(char *buf, size_t n, const char *dir, const char *program,
                          const sg_outbox_origin_t *origin, int64_t pid, uint32_t sequence)
{
    char rank[20] = "", dev[20] = "";
    if (origin && origin->rank >= 0) snprintf(rank, sizeof rank, ".rank%d", (int)origin->rank);
    if (origin && origin->device >= 0) snprintf(dev, sizeof dev, ".dev%d", (int)origin->device);
    int m = snprintf(buf, n, "%s/%s%s%s.%lld.%u.sgraph", dir && *dir ? dir : ".", program, rank,
                     dev, (long long)pid, sequence);
    return m < 0 || (size_t)m >= n ? SG_ELIMIT : SG_OK;
}

int32_t sg_outbox_rank(char *(*get)(const char *))
{
    /* torchrun and torch.distributed, Open MPI, MPICH and Intel MPI, PMIx,
     * Slurm's srun; a node-local rank last */
    static const char *const vars[] = {"RANK",      "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                       "PMIX_RANK", "SLURM_PROCID",         "LOCAL_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = get(vars[i]);
        if (!v || !*v) continue;
        int64_t r = 0;
        const char *p = v;
        for (; *p >= '0' && *p <= '9' && r <= INT32_MAX; p++)
            r = r * 10 + (*p - '0');
        if (*p == '\0' && r <= INT32_MAX) return (int32_t)r;
    }
    return -1;
}
