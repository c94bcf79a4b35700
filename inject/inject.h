/* What the rest of libsgcap (capture/, later optimize/) may use of the
 * interception layer: configuration, logging, the table of real driver
 * entry points, the guards every CUDA call made by sgcap itself must run
 * under, and the list of modules the shim starts.
 *
 * The observer seam (how intercepted calls reach capture/) is observe.h.
 * inject/ is the bottom of the shim: it includes nothing of sgcap above it
 * and knows its modules only through sg_inject_modules. */
#ifndef SGCAP_INJECT_INJECT_H
#define SGCAP_INJECT_INJECT_H

#include "inject/sg_cuda.h"
#include "inject/observe.h"
#include <limits.h>
#include <stdatomic.h>

#define SG_INJECT_HIDDEN __attribute__((visibility("hidden")))

/* ---- configuration (from the environment, read once) ---- */
typedef enum sg_mode {
    SG_MODE_OFF = 0,      /* pure pass-through: nothing substituted or observed */
    SG_MODE_CAPTURE = 1,  /* default: observe, write bundles */
    SG_MODE_OPTIMIZE = 2, /* capture, and swap in rewritten graphs */
} sg_mode_t;

typedef enum sg_log_level {
    SG_LOG_OFF = 0,
    SG_LOG_INFO = 1,  /* default: start-up line at first CUDA use, and problems */
    SG_LOG_TRACE = 2, /* plus one line per intercepted call */
} sg_log_level_t;

typedef struct sg_inject_config {
    sg_mode_t mode;          /* SGCAP_MODE=off|capture|optimize */
    sg_log_level_t log;      /* SGCAP_LOG=off|info|trace */
    char dir[PATH_MAX];      /* SGCAP_DIR, default ./sgcap-out (not created here) */
    char log_file[PATH_MAX]; /* SGCAP_LOG_FILE ("%p" = pid), empty = stderr */
} sg_inject_config_t;

/* The configuration; initialises the shim on first use. Never NULL. */
const sg_inject_config_t *sg_inject_config(void) SG_INJECT_HIDDEN;

/* One line to the sgcap log (never stdout), prefixed "sgcap[pid]: ",
 * written with one write(2) so lines from threads and processes never mix.
 * Does nothing when the configured level is below `level`. */
void sg_inject_log(sg_log_level_t level, const char *fmt, ...) SG_INJECT_HIDDEN
    __attribute__((format(printf, 2, 3)));

/* ---- modules ---- */
/* A part of libsgcap.so above inject/ (capture/, later optimize/). Its
 * start() runs once, at the end of the shim's initialisation (whichever
 * entry point comes first), inside the reentrancy guard, and only when the
 * mode is not off; it registers observers (observe.h) and may use
 * everything in this header. It returns 0 or a negative SG_E* code: the
 * shim logs the failure and goes on tracing without that module. */
typedef struct sg_inject_module {
    const char *name; /* "capture": for the log */
    int (*start)(void);
} sg_inject_module_t;

/* The modules of this libsgcap.so in start order, NULL-terminated. Defined
 * by whoever assembles the shim (shim/modules.c), never by inject/. */
extern const sg_inject_module_t *const sg_inject_modules[] SG_INJECT_HIDDEN;

/* ---- the real entry points ---- */
/* Name of an entry of hooks.def ("cuLaunchKernel_ptsz"). */
const char *sg_inject_fn_name(sg_fn_id_t id) SG_INJECT_HIDDEN;

/* The driver's (or NVRTC's) own function for an entry, never our wrapper:
 * the pointer the program's lookups returned, else looked up with the real
 * dlsym in the already loaded libcuda.so.1 / libnvrtc.so.13. NULL when it
 * does not exist (old driver, fake driver, library not loaded). */
void *sg_inject_real(sg_fn_id_t id) SG_INJECT_HIDDEN;

/* The real functions already known, by entry (each is set once and never
 * changes): SG_REAL reads here first, so that the shim's own driver calls
 * on its hot paths (a dozen per re-captured graph) cost a load, not a
 * function call. */
extern _Atomic(void *) sg_inject_real_known[SG_FN_COUNT] SG_INJECT_HIDDEN;

static inline void *sg_inject_real_fast(sg_fn_id_t id)
{
    void *p = atomic_load_explicit(&sg_inject_real_known[id], memory_order_acquire);
    return p ? p : sg_inject_real(id);
}

/* The real dlsym (glibc's, never the exported one, which swaps CUDA and
 * NVRTC functions for the shim's hooks): for in-app code that opens a
 * library itself (the fuser's NVRTC, code/nvlib.h). NULL when glibc's
 * cannot be found. */
void *sg_inject_real_dlsym(void *handle, const char *name) SG_INJECT_HIDDEN;

/* Typed: SG_REAL(cuGraphGetNodes)(graph, nodes, &n). Spell the exported name
 * (cuGraphGetEdges_v2, not cuGraphGetEdges). Check for NULL first. */
#define SG_REAL(name) ((__typeof__(&name))sg_inject_real_fast(SG_FN_##name))

/* ---- guards ---- */
/* Marks the calling thread as inside sgcap's own code: any CUDA call that
 * reaches one of our exported wrappers meanwhile goes straight to the real
 * function, unobserved. Nests. Observer callbacks already run inside it. */
void sg_inject_enter_own_call(void) SG_INJECT_HIDDEN;
void sg_inject_leave_own_call(void) SG_INJECT_HIDDEN;
int sg_inject_in_own_call(void) SG_INJECT_HIDDEN;

/* The reentrancy guard plus relaxed stream-capture mode for this thread, so
 * an "unsafe" call (allocation, module load, pool attribute, ...) made while
 * any thread holds a global-mode capture neither fails nor invalidates that
 * capture. Pair each begin with an end on the same thread. */
typedef struct sg_relaxed {
    CUstreamCaptureMode saved;
    int exchanged;
} sg_relaxed_t;
void sg_inject_relaxed_begin(sg_relaxed_t *state) SG_INJECT_HIDDEN;
void sg_inject_relaxed_end(sg_relaxed_t *state) SG_INJECT_HIDDEN;

/* ---- helpers ---- */
/* NULL → CU_STREAM_LEGACY (legacy flavour) or CU_STREAM_PER_THREAD (_ptsz/_ptds). */
static inline CUstream sg_inject_canonical_stream(CUstream s, sg_flavour_t flavour)
{
    if (s != NULL) return s;
    return flavour == SG_FLAVOUR_LEGACY ? CU_STREAM_LEGACY : CU_STREAM_PER_THREAD;
}

/* Capture status and id of a (canonical) stream, asked of the real driver in
 * relaxed mode. Returns the CUresult; CUDA_ERROR_NOT_FOUND without a driver. */
CUresult sg_inject_capture_status(CUstream stream, CUstreamCaptureStatus *status,
                                  cuuint64_t *id) SG_INJECT_HIDDEN;

/* Number of stream captures begun and not yet ended, process-wide. */
int sg_inject_active_captures(void) SG_INJECT_HIDDEN;

/* Do observers see calls through our own wrappers, so that changing a
 * call's arguments or skipping it (observe.h) takes effect? False when
 * libsgcap was loaded through CUDA_INJECTION64_PATH alone and sees the
 * driver through CUPTI callbacks, whose parameters are read-only. */
int sg_inject_can_replace_calls(void) SG_INJECT_HIDDEN;

#endif
