/* prof.h: a developer's profile of the shim's own cost, per intercepted
 * entry point and per named step, compiled in only with the CMake option
 * SGCAP_PROFILE (never in a normal build: these macros are then empty).
 * At exit the shim prints, to stderr, for every observed entry point the
 * calls, the shim's time per call (its BEFORE and AFTER work, the driver
 * queries it makes there included) and the driver's own time per call,
 * then the named steps. Used to find where the re-capture cost goes on a
 * real driver (bench/bench_recapture.sh). */
#ifndef SGCAP_INJECT_PROF_H
#define SGCAP_INJECT_PROF_H

#include <stdint.h>

#ifdef SG_PROFILE
uint64_t sg_prof_now(void);
void sg_prof_fn(int fn, uint64_t shim_ns, uint64_t real_ns);
/* name: a string literal (slots are found by its address) */
void sg_prof_step(const char *name, uint64_t ns);
void sg_prof_report(void);
#define SG_PROF_T(v) uint64_t v = sg_prof_now()
#define SG_PROF_STEP(name, t0) sg_prof_step(name, sg_prof_now() - (t0))
#else
#define SG_PROF_T(v) ((void)0)
#define SG_PROF_STEP(name, t0) ((void)0)
#endif

#endif
