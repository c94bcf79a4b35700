/* u64map.h: a small open-addressing map from 64-bit keys to non-NULL
 * pointers, for the shim's hot bookkeeping (book.c). Unlike uthash, its
 * storage outlives emptiness: a table that empties and fills again every
 * capture (the streams of the open sessions, a session's events, a record's
 * tags) keeps its slots instead of freeing and allocating them each time,
 * and an entry costs no embedded handle. Linear probing at most half full,
 * deletion by backward shift (no tombstones), so lookups stay short however
 * keys come and go. Any key is allowed (0 too); a slot is free when its
 * value is NULL. Not thread-safe: the caller serializes. */
#ifndef SGCAP_CAPTURE_U64MAP_H
#define SGCAP_CAPTURE_U64MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t *keys;
    void **vals;
    uint32_t cap; /* 0 or a power of two */
    uint32_t n;
    uint8_t shift; /* 64 - log2(cap) */
} sg_u64map_t;

static inline uint32_t sg_u64map_slot(const sg_u64map_t *m, uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

static inline void *sg_u64map_get(const sg_u64map_t *m, uint64_t key)
{
    if (!m->n) return NULL;
    uint32_t mask = m->cap - 1;
    for (uint32_t i = sg_u64map_slot(m, key);; i = (i + 1) & mask) {
        void *v = m->vals[i];
        if (!v) return NULL;
        if (m->keys[i] == key) return v;
    }
}

/* Room for one more entry (rehashes into twice the slots when needed).
 * 0, or -1 when out of memory (the map is unchanged). */
static inline int sg_u64map_reserve(sg_u64map_t *m)
{
    if (2 * (m->n + 1) <= m->cap) return 0;
    if (m->cap >= (1u << 30)) return -1;
    uint32_t cap = m->cap ? 2 * m->cap : 16;
    uint64_t *k = malloc((size_t)cap * sizeof *k);
    void **v = calloc(cap, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    sg_u64map_t next = {k, v, cap, m->n, (uint8_t)(64 - __builtin_ctz(cap))};
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->vals[i]) continue;
        uint32_t j = sg_u64map_slot(&next, m->keys[i]);
        while (v[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    *m = next;
    return 0;
}

/* Insert or replace (val non-NULL). 0, or -1 when out of memory. */
static inline int sg_u64map_put(sg_u64map_t *m, uint64_t key, void *val)
{
    if (sg_u64map_reserve(m)) return -1;
    uint32_t mask = m->cap - 1, i = sg_u64map_slot(m, key);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->vals[i]) m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

/* Remove key; returns its value or NULL when absent. */
static inline void *sg_u64map_del(sg_u64map_t *m, uint64_t key)
{
    if (!m->n) return NULL;
    uint32_t mask = m->cap - 1, i = sg_u64map_slot(m, key);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    void *out = m->vals[i];
    if (!out) return NULL;
    /* backward shift: move up every later entry of the run whose home slot
     * is not cyclically in (i, j] */
    for (uint32_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        uint32_t h = sg_u64map_slot(m, m->keys[j]);
        bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (stays) continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        i = j;
    }
    m->vals[i] = NULL;
    m->n--;
    return out;
}

/* Empty it, keeping the slots (or freeing them when more than keep_cap). */
static inline void sg_u64map_clear(sg_u64map_t *m, uint32_t keep_cap)
{
    if (m->cap > keep_cap) {
        free(m->keys);
        free(m->vals);
        memset(m, 0, sizeof *m);
        return;
    }
    if (m->n) memset(m->vals, 0, (size_t)m->cap * sizeof *m->vals);
    m->n = 0;
}

static inline void sg_u64map_free(sg_u64map_t *m)
{
    sg_u64map_clear(m, 0);
}

/* for (uint32_t i = 0; i < m.cap; i++) if (m.vals[i]) ... iterates it. */

#endif /* SGCAP_CAPTURE_U64MAP_H */
