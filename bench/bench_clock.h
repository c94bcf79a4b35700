/* bench_clock.h: the clock the CPU benchmarks share: CPU time of this
 * process (build machines are shared, so wall time also measures the
 * neighbours) with wall time beside it. Header-only: each bench is one
 * executable. */
#ifndef SGCAP_BENCH_CLOCK_H
#define SGCAP_BENCH_CLOCK_H

#include <time.h>

typedef struct {
    double cpu, wall;
} stamp_t;

static inline stamp_t now(void)
{
    struct timespec c, w;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    clock_gettime(CLOCK_MONOTONIC, &w);
    return (stamp_t){(double)c.tv_sec + c.tv_nsec * 1e-9, (double)w.tv_sec + w.tv_nsec * 1e-9};
}

#endif /* SGCAP_BENCH_CLOCK_H */
