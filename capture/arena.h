/* arena.h: frameworks that manage their own memory hand a graph pointers
 * into one huge allocation: XLA preallocates 75% of the GPU (104.9 GiB on an
 * H200) and suballocates every buffer from it; PyTorch's expandable segments
 * map one large reservation. Recorded as one buffer, such an arena is too
 * big to snapshot (so validation compares nothing) and to map again at
 * replay. But the graph's nodes reach only a few places in it. This pass
 * replaces each buffer larger than `threshold` by one buffer per range its
 * nodes reach: each access's [offset, offset+size) (exact for copies and
 * sets; for kernels a guess -- extents.c cuts at the next entry into the
 * buffer, which in an arena can be gigabytes away, or runs to its end -- so
 * capped at `open_cap`), merged where closer than `gap`. Accesses are re-pointed into
 * the new buffers, which keep the arena's kind, at their own addresses.
 *
 * Better extents plug in here unchanged: whatever narrows an access's size
 * before this pass (a code analysis of the kernel) narrows the ranges. A
 * kernel that reaches past its range at replay touches unmapped memory
 * (beyond the 2 MiB page) and fails there, loudly.
 *
 * Buffers named by a mem_alloc/mem_free node, graph allocations, and
 * buffers whose ranges cover them anyway are kept whole. Pure model code. */
#ifndef SGCAP_CAPTURE_ARENA_H
#define SGCAP_CAPTURE_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

typedef struct {
    uint64_t threshold; /* split buffers larger than this (SGCAP_ARENA_BYTES) */
    uint64_t open_cap;  /* bytes assumed for an open-ended kernel access (SGCAP_ARENA_OPEN_BYTES) */
    uint64_t gap;       /* merge ranges closer than this */
} sg_arena_limits_t;

/* On a root graph. Returns the number of buffers split (0 = none), or an
 * SG_E* code; note (may be NULL) gets one line for the pass log. */
int sg_capture_split_arenas(sg_graph_t *g, const sg_arena_limits_t *lim, char *note, size_t n);

#endif /* SGCAP_CAPTURE_ARENA_H */
