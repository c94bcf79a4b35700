/* memmap.c: sorted-array interval map of live allocations (memmap.h).
 * Lookups are binary searches; changes move the tail of the array, which is
 * cheap next to the CUDA allocation call that causes them. */
#include "memmap.h"

#include <stdlib.h>
#include <string.h>

void sg_memmap_init(sg_memmap_t *m)
{
    memset(m, 0, sizeof *m);
    m->next_id = 1;
}

void sg_memmap_clear(sg_memmap_t *m)
{
    free(m->r);
    uint64_t next = m->next_id, gen = m->generation;
    memset(m, 0, sizeof *m);
    m->next_id = next ? next : 1;
    m->generation = gen + 1;
}

static uint64_t end_of(const sg_memrange_t *r)
{
    return r->start + r->size;
}

/* First index whose start is >= addr. */
static size_t lower_bound(const sg_memmap_t *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->r[mid].start < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int reserve(sg_memmap_t *m, size_t need)
{
    if (need <= m->cap) return SG_OK;
    size_t cap = m->cap ? m->cap * 2 : 64;
    while (cap < need)
        cap *= 2;
    sg_memrange_t *p = realloc(m->r, cap * sizeof *p);
    if (!p) return SG_ENOMEM;
    m->r = p;
    m->cap = cap;
    return SG_OK;
}

static int insert_at(sg_memmap_t *m, size_t i, const sg_memrange_t *r)
{
    int rc = reserve(m, m->n + 1);
    if (rc) return rc;
    memmove(&m->r[i + 1], &m->r[i], (m->n - i) * sizeof *m->r);
    m->r[i] = *r;
    m->n++;
    m->bytes += r->size;
    return SG_OK;
}

static void erase_at(sg_memmap_t *m, size_t i)
{
    m->bytes -= m->r[i].size;
    memmove(&m->r[i], &m->r[i + 1], (m->n - i - 1) * sizeof *m->r);
    m->n--;
}

const sg_memrange_t *sg_memmap_find(const sg_memmap_t *m, uint64_t addr)
{
    /* The candidate is the last range starting at or before addr. */
    size_t i = lower_bound(m, addr);
    if (i < m->n && m->r[i].start == addr) return &m->r[i];
    if (i == 0) return NULL;
    const sg_memrange_t *r = &m->r[i - 1];
    return addr - r->start < r->size ? r : NULL;
}

uint64_t sg_memmap_remove_span(sg_memmap_t *m, uint64_t start, uint64_t size)
{
    if (size == 0) return 0;
    uint64_t end = start + size < start ? UINT64_MAX : start + size;
    uint64_t removed = 0;
    m->generation++;
    size_t i = lower_bound(m, start);
    if (i > 0 && end_of(&m->r[i - 1]) > start) i--;
    while (i < m->n && m->r[i].start < end) {
        sg_memrange_t *r = &m->r[i];
        uint64_t rs = r->start, re = end_of(r);
        uint64_t cut_s = rs > start ? rs : start, cut_e = re < end ? re : end;
        removed += cut_e - cut_s;
        if (rs < start && re > end) {
            /* Straddles both ends: keep a head and a tail (the tail is a new
             * range with its own id: it is a different piece of memory now). */
            sg_memrange_t tail = *r;
            tail.start = end;
            tail.size = re - end;
            tail.id = m->next_id++;
            m->bytes -= r->size;
            r->size = start - rs;
            m->bytes += r->size;
            if (insert_at(m, i + 1, &tail) != SG_OK) {
                /* Out of memory: losing the tail only costs attribution. */
            }
            return removed;
        }
        if (rs < start) { /* keep the head */
            m->bytes -= re - start;
            r->size = start - rs;
            i++;
        } else if (re > end) { /* keep the tail */
            m->bytes -= end - rs;
            r->size = re - end;
            r->start = end;
            i++;
        } else {
            erase_at(m, i);
        }
    }
    return removed;
}

int sg_memmap_remove_at(sg_memmap_t *m, uint64_t start)
{
    size_t i = lower_bound(m, start);
    if (i >= m->n || m->r[i].start != start) return SG_ENOENT;
    erase_at(m, i);
    m->generation++;
    return SG_OK;
}

int sg_memmap_add(sg_memmap_t *m, uint64_t start, uint64_t size, sg_buffer_kind_t kind,
                  uint64_t group, bool merge_adjacent, uint64_t *out_id)
{
    if (size == 0 || start + size < start) return SG_EINVAL;
    int rc = reserve(m, m->n + 2);
    if (rc) return rc;
    m->generation++;
    sg_memmap_remove_span(m, start, size);
    size_t i = lower_bound(m, start);
    if (merge_adjacent && group != 0) {
        sg_memrange_t *prev = i > 0 ? &m->r[i - 1] : NULL;
        sg_memrange_t *next = i < m->n ? &m->r[i] : NULL;
        bool with_prev =
            prev && prev->group == group && prev->kind == kind && end_of(prev) == start;
        bool with_next =
            next && next->group == group && next->kind == kind && next->start == start + size;
        if (with_prev) {
            prev->size += size;
            m->bytes += size;
            if (with_next) {
                prev->size += next->size;
                m->bytes += next->size;
                erase_at(m, i);
                prev = &m->r[i - 1];
            }
            if (out_id) *out_id = prev->id;
            return SG_OK;
        }
        if (with_next) {
            next->start = start;
            next->size += size;
            m->bytes += size;
            if (out_id) *out_id = next->id;
            return SG_OK;
        }
    }
    sg_memrange_t r = {start, size, kind, m->next_id++, group};
    rc = insert_at(m, i, &r);
    if (rc) return rc;
    if (out_id) *out_id = r.id;
    return SG_OK;
}
