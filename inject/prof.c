/* prof.c: see prof.h. Empty unless built with SGCAP_PROFILE. */
#include "inject/prof.h"

#ifdef SG_PROFILE
#include "inject/internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    _Atomic uint64_t calls, shim_ns, real_ns;
} fn_prof_t;
static fn_prof_t fns[SG_FN_COUNT];

enum { STEPS = 32 };
static struct {
    const char *_Atomic name;
    _Atomic uint64_t calls, ns;
} steps[STEPS];

uint64_t sg_prof_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void sg_prof_fn(int fn, uint64_t shim_ns, uint64_t real_ns)
{
    if (fn < 0 || fn >= SG_FN_COUNT) return;
    atomic_fetch_add_explicit(&fns[fn].calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&fns[fn].shim_ns, shim_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&fns[fn].real_ns, real_ns, memory_order_relaxed);
}

void sg_prof_step(const char *name, uint64_t ns)
{
    for (int i = 0; i < STEPS; i++) {
        const char *n = atomic_load(&steps[i].name);
        if (!n) {
            const char *expected = NULL;
            if (!atomic_compare_exchange_strong(&steps[i].name, &expected, name) && expected != name)
                continue;
            n = name;
        }
        if (n != name) continue;
        atomic_fetch_add_explicit(&steps[i].calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&steps[i].ns, ns, memory_order_relaxed);
        return;
    }
}

void sg_prof_report(void)
{
    uint64_t total = 0;
    for (int i = 0; i < SG_FN_COUNT; i++) total += fns[i].shim_ns;
    fprintf(stderr, "sgcap-prof: observed calls, shim time %.3f ms in all\n", total * 1e-6);
    for (int i = 0; i < SG_FN_COUNT; i++) {
        uint64_t c = fns[i].calls;
        if (!c) continue;
        fprintf(stderr, "sgcap-prof: fn %-40s calls %8llu shim %8.0f ns/call (%8.3f ms) real %8.0f ns/call\n",
                sg_entries[i].name, (unsigned long long)c, (double)fns[i].shim_ns / c,
                fns[i].shim_ns * 1e-6, (double)fns[i].real_ns / c);
    }
    for (int i = 0; i < STEPS; i++) {
        const char *n = steps[i].name;
        if (!n) break;
        uint64_t c = steps[i].calls;
        fprintf(stderr, "sgcap-prof: step %-38s calls %8llu %8.0f ns/call (%8.3f ms)\n", n,
                (unsigned long long)c, c ? (double)steps[i].ns / c : 0.0, steps[i].ns * 1e-6);
    }
}
#endif
