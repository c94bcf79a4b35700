/* reserve.c: keep the recorded address ranges free until replay maps them.
 *
 * Same-address placement (memory.c) asks cuMemAddressReserve for the
 * recorded address, which is only a hint: it fails whenever something in the
 * replay process already lives there, and the replay process maps a lot
 * before it gets that far (shared libraries, the allocator's arenas, the
 * driver's own bookkeeping at cuInit). So the CLI reserves every recorded
 * range (PROT_NONE, MAP_NORESERVE: no memory, only address space) as soon as
 * it has read the bundle and before CUDA is loaded, and memory.c releases
 * each part right before it asks the driver for exactly that range. A range
 * that is already taken when the CLI starts stays taken: the CLI may then
 * run itself again without address randomization (tools/cmd_replay.c), and
 * what is still taken is relocated as before.
 *
 * Ranges are computed like memory.c's regions, with the 2 MiB granularity
 * every current GPU reports (memory.c rounds to the real one; a larger one
 * only means part of a region was not reserved). Process-wide state: one
 * replay process, one set of reservations. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define RESERVE_GRANULARITY (2ull << 20)

typedef struct {
    uint64_t base, size;
} span_t;

static struct {
    span_t *held;
    uint32_t n, cap;
} R;

static int hold(uint64_t base, uint64_t size)
{
    if (R.n == R.cap) {
        uint32_t cap = R.cap ? R.cap * 2 : 16;
        span_t *v = realloc(R.held, cap * sizeof *v);
        if (!v) return SG_ENOMEM;
        R.held = v;
        R.cap = cap;
    }
    R.held[R.n++] = (span_t){base, size};
    return SG_OK;
}

int sg_replay_reserve(const sg_graph_t *g, sg_reserve_report_t *rep)
{
    sg_region_t *regions = NULL;
    uint32_t n = 0;
    long page = sysconf(_SC_PAGESIZE);
    int rc = sg_replay_plan_regions(g, RESERVE_GRANULARITY, page > 0 ? (uint64_t)page : 4096,
                                    &regions, &n);
    if (rc) return rc;
    for (uint32_t i = 0; i < n && rc == SG_OK; i++) {
        uint64_t base = regions[i].base, size = regions[i].size;
        if (!base || base + size < base) continue;
        rep->regions++;
        void *p = mmap((void *)(uintptr_t)base, size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != MAP_FAILED && (uint64_t)(uintptr_t)p != base) {
            munmap(p, size); /* an old kernel took the address as a hint */
            p = MAP_FAILED;
        }
        if (p == MAP_FAILED) {
            rep->taken++;
            if (rep->first_taken == 0) rep->first_taken = base;
            continue;
        }
        rc = hold(base, size);
        if (rc)
            munmap(p, size);
        else
            rep->reserved++;
    }
    free(regions);
    return rc;
}

uint32_t sg_replay__unreserve(uint64_t base, uint64_t size)
{
    uint64_t end = base + size;
    uint32_t released = 0;
    for (uint32_t i = 0; i < R.n;) {
        span_t *h = &R.held[i];
        uint64_t hs = h->base, he = h->base + h->size;
        uint64_t cs = hs > base ? hs : base, ce = he < end ? he : end;
        if (cs >= ce) {
            i++;
            continue;
        }
        munmap((void *)(uintptr_t)cs, (size_t)(ce - cs));
        released++;
        /* keep what lies outside [base, end): at most two pieces */
        span_t left = {hs, cs - hs}, right = {ce, he - ce};
        R.held[i] = R.held[--R.n];
        if (left.size) hold(left.base, left.size);
        if (right.size) hold(right.base, right.size);
    }
    return released;
}

void sg_replay_unreserve_all(void)
{
    for (uint32_t i = 0; i < R.n; i++)
        munmap((void *)(uintptr_t)R.held[i].base, (size_t)R.held[i].size);
    free(R.held);
    memset(&R, 0, sizeof R);
}

uint32_t sg_replay_reservations_held(void)
{
    return R.n;
}
