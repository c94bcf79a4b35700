/* memmap.h: the device memory map of the captured process: which address
 * ranges are live allocations, of what kind, so a pointer-sized kernel
 * parameter word can be attributed to a buffer in O(log n).
 *
 * A sorted array of disjoint ranges. Adding a range first cuts away whatever
 * it overlaps (a stale entry whose free we never saw, a host registration
 * over part of a pinned block), so the map never holds two answers for one
 * address. Pure data structure: no CUDA, no locking (the shim holds a lock
 * around it), no globals; unit-tested on the CPU.
 */
#ifndef SGCAP_CAPTURE_MEMMAP_H
#define SGCAP_CAPTURE_MEMMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t start;
    uint64_t size;
    sg_buffer_kind_t kind;
    uint64_t id;    /* unique per added range: identifies "the same allocation" */
    uint64_t group; /* VMM: the reservation it was mapped into (0 = none) */
} sg_memrange_t;

typedef struct {
    sg_memrange_t *r; /* sorted by start, disjoint */
    size_t n, cap;
    uint64_t next_id;
    uint64_t bytes;      /* sum of sizes */
    uint64_t generation; /* counts changes: equal generations, equal maps */
} sg_memmap_t;

void sg_memmap_init(sg_memmap_t *m);
void sg_memmap_clear(sg_memmap_t *m); /* frees everything; m stays usable */

/* Add [start, start+size) (size > 0), cutting away overlapped parts of other
 * ranges. With merge_adjacent and a non-zero group, a range that touches an
 * existing range of the same kind and group is merged with it (VMM chunks
 * mapped one after another into one reservation become one buffer). Returns
 * 0, SG_EINVAL (size 0 or wrap-around) or SG_ENOMEM. *out_id (may be NULL)
 * gets the id of the resulting range. */
int sg_memmap_add(sg_memmap_t *m, uint64_t start, uint64_t size, sg_buffer_kind_t kind,
                  uint64_t group, bool merge_adjacent, uint64_t *out_id);

/* Remove the range that starts exactly at `start` (cuMemFree and friends).
 * Returns 0 or SG_ENOENT. */
int sg_memmap_remove_at(sg_memmap_t *m, uint64_t start);

/* Remove whatever lies in [start, start+size), splitting ranges that
 * straddle its ends (cuMemUnmap of part of a merged VMM range). Returns the
 * number of bytes removed. */
uint64_t sg_memmap_remove_span(sg_memmap_t *m, uint64_t start, uint64_t size);

/* The range holding addr, or NULL. O(log n). The pointer is valid until the
 * next change to the map. */
const sg_memrange_t *sg_memmap_find(const sg_memmap_t *m, uint64_t addr);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_MEMMAP_H */
