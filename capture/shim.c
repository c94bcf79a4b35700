/* shim.c: capture/ inside libsgcap.so: the observer that turns intercepted
 * calls into capture bookkeeping (book.h), the device memory map
 * (memmap.h), graph models and bundles, plus the exit summary.
 *
 * How a node gets its stream: after every successful enqueue on a stream
 * that is in a capture we track, cuStreamGetCaptureInfo (13.0 form, with
 * edge data) gives the stream's dependency set, which is then exactly the
 * new node(s); the book tags them with the stream and remembers the set they
 * were enqueued after (the edges and why each exists). Event records and
 * waits only update the book. At instantiate (and exec update) the real
 * graph is read back and assembled with that record (build.c), and a bundle
 * is written unless it is a duplicate or over SGCAP_MAX_BUNDLES.
 *
 * Anything that fails here is logged and dropped; the program always gets
 * the real result of its call. */
#include "shim.h"
#include "capture/u64map.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "graph/bundle.h"
#include "graph/plural.h"
#include "inject/prof.h"

sg_shim_t sg_shim;
static atomic_int attached;

/* ---- small helpers --------------------------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max)
{
    const char *s = getenv(name);
    if (!s || !*s) return def;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end != '\0' || s[0] == '-' || v < min || v > max) {
        sg_shim_log("%s=%.40s not understood: using %" PRIu64, name, s, def);
        return def;
    }
    return v;
}

static void read_program_name(char *out, size_t n)
{
    char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t m = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (m <= 0) {
        m = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (m < 0) m = 0;
    }
    buf[m] = '\0';
    sg_outbox_program_name(buf, out, n);
}

/* The default TLS model on purpose: initial-exec would save a
 * __tls_get_addr call per captured launch, but a library loaded later
 * (libsgcap through CUDA_INJECTION64_PATH, by dlopen) then needs room in
 * glibc's small static TLS surplus, and a process whose other libraries
 * took it would fail to load the shim at all. */
static __thread uint64_t tls_per_thread_key;

/* The per-thread default stream is one stream per thread, so the thread id
 * names it exactly. Never ask the driver (cuStreamGetId): on a capturing
 * stream that call fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 * invalidates the program's capture, relaxed mode or not (seen on CUDA 13.0,
 * driver 580; so do cuStreamGetFlags and cuStreamGetPriority). */
uint64_t sg_shim_stream_key(CUstream s)
{
    if (s != CU_STREAM_PER_THREAD) return (uint64_t)(uintptr_t)s;
    if (!tls_per_thread_key) tls_per_thread_key = (1ull << 62) | (uint64_t)gettid();
    return tls_per_thread_key;
}

/* What we learn of a stream just BEFORE it begins or joins a capture, while
 * it may still be queried; the AFTER callback on the same thread uses it. */
static __thread struct {
    uint64_t key;
    bool valid;
    unsigned long long id;
    unsigned int flags;
    int priority;
} tls_pending;

/* A stream's id (unique for the life of the program: cuStreamGetId),
 * flags and priority never change while it lives, so a small per-thread
 * cache keyed by the handle answers a program that captures on the same
 * streams again and again without a query: four driver calls saved at
 * every capture's begin and at every stream that joins one. A handle can
 * name a new stream once its stream is destroyed, so an entry holds only
 * while no call that ends streams has been made since it was filled
 * (streams_ended counts them, before and after each such call: a stream
 * created at the same address after the destroy returns finds the count
 * moved). Only real handles: the legacy and per-thread default streams are
 * one per context. */
static _Atomic uint64_t streams_ended;
static __thread struct {
    uint64_t key, ended;
    unsigned long long id;
    unsigned int flags;
    int priority;
} tls_sinfo[16];

static bool stream_ender(sg_fn_id_t proto)
{
    switch (proto) {
    case SG_FN_cuStreamDestroy:
    case SG_FN_cuStreamDestroy_v2:
    case SG_FN_cuCtxDestroy:
    case SG_FN_cuCtxDestroy_v2:
    case SG_FN_cuDevicePrimaryCtxRelease:
    case SG_FN_cuDevicePrimaryCtxRelease_v2:
    case SG_FN_cuDevicePrimaryCtxReset:
    case SG_FN_cuDevicePrimaryCtxReset_v2:
    case SG_FN_cuGreenCtxDestroy:
        return true;
    default:
        return false;
    }
}

static void stream_info_before(CUstream s)
{
    tls_pending.valid = false;
    uint64_t key = sg_shim_stream_key(s);
    unsigned slot = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 60);
    uint64_t ended = atomic_load_explicit(&streams_ended, memory_order_acquire);
    bool real = s != NULL && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
    if (real && tls_sinfo[slot].id && tls_sinfo[slot].key == key && tls_sinfo[slot].ended == ended) {
        tls_pending.id = tls_sinfo[slot].id;
        tls_pending.flags = tls_sinfo[slot].flags;
        tls_pending.priority = tls_sinfo[slot].priority;
        tls_pending.key = key;
        tls_pending.valid = true;
        return;
    }
    static __typeof__(&cuStreamGetCaptureInfo_v3) v3;
    if (!v3) v3 = SG_REAL(cuStreamGetCaptureInfo_v3);
    __typeof__(&cuStreamGetId) get_id = SG_REAL(cuStreamGetId);
    __typeof__(&cuStreamGetFlags) get_flags = SG_REAL(cuStreamGetFlags);
    __typeof__(&cuStreamGetPriority) get_prio = SG_REAL(cuStreamGetPriority);
    sg_relaxed_t relaxed;
    sg_inject_relaxed_begin(&relaxed);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    /* Already capturing (or no driver): asking would invalidate it. */
    CUresult r = v3 ? v3(s, &st, &cid, NULL, NULL, NULL, NULL)
                    : sg_inject_capture_status(s, &st, NULL);
    if (r != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE) {
        sg_inject_relaxed_end(&relaxed);
        return;
    }
    tls_pending.id = 0;
    tls_pending.flags = 0;
    tls_pending.priority = 0;
    if (get_id && get_id(s, &tls_pending.id) != CUDA_SUCCESS) tls_pending.id = 0;
    bool ok = true;
    if (get_flags && get_flags(s, &tls_pending.flags) != CUDA_SUCCESS) ok = false;
    if (get_prio && get_prio(s, &tls_pending.priority) != CUDA_SUCCESS) ok = false;
    if (ok && real && tls_pending.id) {
        tls_sinfo[slot].key = key;
        tls_sinfo[slot].ended = ended; /* read before the queries */
        tls_sinfo[slot].id = tls_pending.id;
        tls_sinfo[slot].flags = tls_pending.flags;
        tls_sinfo[slot].priority = tls_pending.priority;
    }
    sg_inject_relaxed_end(&relaxed);
    tls_pending.key = key;
    tls_pending.valid = true;
}

static void stream_info(CUstream s, sg_book_stream_info_t *i)
{
    memset(i, 0, sizeof *i);
    i->key = sg_shim_stream_key(s);
    i->handle = (uint64_t)(uintptr_t)s;
    i->per_thread = s == CU_STREAM_PER_THREAD;
    if (tls_pending.valid && tls_pending.key == i->key) {
        i->cuda_id = tls_pending.id;
        i->flags = tls_pending.flags;
        i->priority = tls_pending.priority;
    }
    tls_pending.valid = false;
}

/* The stream's capture status, id, graph and dependency set (copied into
 * deps, at most cap; *n is the true count). */
static CUresult capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                             uint64_t *deps, size_t cap, size_t *n)
{
    static __typeof__(&cuStreamGetCaptureInfo_v3) fn;
    if (!fn) fn = SG_REAL(cuStreamGetCaptureInfo_v3);
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    *n = 0;
    if (!fn) return CUDA_ERROR_NOT_FOUND;
    const CUgraphNode *d = NULL;
    const CUgraphEdgeData *ed = NULL; /* non-NULL: no LOSSY_QUERY with programmatic edges */
    size_t count = 0;
    CUgraph g = NULL;
    CUresult r = fn(s, st, id, &g, &d, &ed, &count);
    if (r != CUDA_SUCCESS) return r;
    if (graph) *graph = g;
    for (size_t i = 0; i < count && i < cap; i++)
        deps[i] = (uint64_t)(uintptr_t)d[i];
    *n = count;
    return r;
}

#define DEPS_CAP 4096

static bool stream_tracked(uint64_t key)
{
    pthread_mutex_lock(&sg_shim.hot);
    bool in = sg_book_capture_of(sg_shim.book, key) != 0;
    pthread_mutex_unlock(&sg_shim.hot);
    return in;
}

static void sessions_refresh(void)
{
    sg_book_stats_t st;
    sg_book_stats(sg_shim.book, &st);
    atomic_store(&sg_shim.sessions, (int)st.sessions_live);
}

static void note_cuda(void)
{
    if (!atomic_load_explicit(&sg_shim.cuda_seen, memory_order_relaxed))
        atomic_store(&sg_shim.cuda_seen, 1);
}

/* ---- enqueue: the node(s) the call made get their stream --------------------------- */

static void enqueue_after(const sg_call_t *c)
{
    if (c->result != CUDA_SUCCESS || !c->has_stream) return;
    if (atomic_load_explicit(&sg_shim.sessions, memory_order_relaxed) == 0) return;
    uint64_t key = sg_shim_stream_key(c->stream);
    /* Ask the driver first and take the lock once: the book says whether
     * the stream is ours (an untracked capture costs one query more). */
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    uint64_t deps[64];
    uint64_t *d = deps;
    size_t n = 0;
    if (capture_info(c->stream, &st, &id, NULL, deps, 64, &n) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return;
    if (n > 64) { /* a wide join: ask again with room for all */
        size_t cap = n < DEPS_CAP ? n : DEPS_CAP;
        d = malloc(cap * sizeof *d);
        if (!d) return;
        if (capture_info(c->stream, &st, &id, NULL, d, cap, &n) != CUDA_SUCCESS) {
            free(d);
            return;
        }
        if (n > cap) n = cap;
    }
    pthread_mutex_lock(&sg_shim.hot);
    sg_shim_calls_note(key, c);
    int rc = sg_book_enqueue(sg_shim.book, key, (uint32_t)c->fn, d, n); /* 0 when not ours */
    pthread_mutex_unlock(&sg_shim.hot);
    if (rc < 0)
        sg_shim_log("capture: bookkeeping failed after %s (%s)", sg_inject_fn_name(c->fn),
                    sg_strerror(rc));
    if (d != deps) free(d);
}

static void on_launch(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    note_cuda();
    if (phase == SG_PHASE_AFTER) enqueue_after(c);
}

/* ---- capture begin / end / update ----------------------------------------------------- */

static const char *mode_name(CUstreamCaptureMode m)
{
    switch (m) {
    case CU_STREAM_CAPTURE_MODE_GLOBAL:
        return "global";
    case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
        return "thread_local";
    case CU_STREAM_CAPTURE_MODE_RELAXED:
        return "relaxed";
    default:
        return "unknown";
    }
}

static void capture_begin(sg_call_t *c)
{
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    CUgraph target = NULL;
    if (c->proto == SG_FN_cuStreamBeginCapture_v2) {
        mode = SG_CALL_ARGS(c, cuStreamBeginCapture_v2)->mode;
    } else if (c->proto == SG_FN_cuStreamBeginCaptureToGraph) {
        mode = SG_CALL_ARGS(c, cuStreamBeginCaptureToGraph)->mode;
        target = SG_CALL_ARGS(c, cuStreamBeginCaptureToGraph)->hGraph;
    }
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    CUgraph g = NULL;
    uint64_t deps[256];
    size_t n = 0;
    if (capture_info(c->stream, &st, &id, &g, deps, 256, &n) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        sg_shim_log("capture: %s succeeded but the stream reports no active capture: not "
                    "tracked",
                    sg_inject_fn_name(c->fn));
        return;
    }
    if (n > 256) {
        sg_shim_log("capture: %zu initial dependencies, keeping 256 (the rest become control "
                    "edges unexplained)",
                    n);
        n = 256;
    }
    sg_book_stream_info_t info;
    stream_info(c->stream, &info);
    pthread_mutex_lock(&sg_shim.hot);
    int rc = sg_book_begin(sg_shim.book, id, &info, (uint64_t)(uintptr_t)(target ? target : g),
                           mode_name(mode), deps, n);
    /* a capture into a graph that may hold nodes already is not described
     * by its calls alone */
    if ((rc == SG_OK || rc == SG_EEXIST) && !target) sg_shim_calls_begin(info.key);
    sessions_refresh();
    pthread_mutex_unlock(&sg_shim.hot);
    if (rc == SG_EEXIST)
        sg_shim_log("capture: stream %p began a capture while we still tracked an older one on "
                    "it; the older one is dropped",
                    (void *)c->stream);
    else if (rc)
        sg_shim_log("capture: cannot track capture %" PRIu64 ": %s", (uint64_t)id, sg_strerror(rc));
}

static void capture_end(sg_call_t *c)
{
    uint64_t key = sg_shim_stream_key(c->stream);
    CUgraph g = NULL;
    bool ok = c->result == CUDA_SUCCESS;
    if (ok) {
        CUgraph *pg = SG_CALL_ARGS(c, cuStreamEndCapture)->phGraph;
        g = pg ? *pg : NULL;
    } else {
        /* A failed end leaves the capture open in some cases (wrong
         * thread): keep it then. */
        CUstreamCaptureStatus st;
        cuuint64_t id;
        uint64_t d[1];
        size_t n;
        if (capture_info(c->stream, &st, &id, NULL, d, 1, &n) == CUDA_SUCCESS &&
            st == CU_STREAM_CAPTURE_STATUS_ACTIVE)
            return;
    }
    pthread_mutex_lock(&sg_shim.hot);
    sg_book_end(sg_shim.book, key, (uint64_t)(uintptr_t)g, ok && g);
    sessions_refresh();
    pthread_mutex_unlock(&sg_shim.hot);
}

static void capture_update(sg_call_t *c)
{
    uint64_t key = sg_shim_stream_key(c->stream);
    if (!stream_tracked(key)) return;
    CUstreamCaptureStatus st;
    cuuint64_t id;
    uint64_t deps[256];
    size_t n = 0;
    if (capture_info(c->stream, &st, &id, NULL, deps, 256, &n) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return;
    if (n > 256) n = 256;
    pthread_mutex_lock(&sg_shim.hot);
    sg_book_update(sg_shim.book, key, deps, n);
    pthread_mutex_unlock(&sg_shim.hot);
}

static void on_capture(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    note_cuda();
    if (phase == SG_PHASE_BEFORE) {
        if (c->proto == SG_FN_cuStreamBeginCapture || c->proto == SG_FN_cuStreamBeginCapture_v2 ||
            c->proto == SG_FN_cuStreamBeginCaptureToGraph)
            stream_info_before(c->stream);
        return;
    }
    switch (c->proto) {
    case SG_FN_cuStreamBeginCapture:
    case SG_FN_cuStreamBeginCapture_v2:
    case SG_FN_cuStreamBeginCaptureToGraph:
        if (c->result == CUDA_SUCCESS) capture_begin(c);
        break;
    case SG_FN_cuStreamEndCapture:
        capture_end(c);
        break;
    case SG_FN_cuStreamUpdateCaptureDependencies:
    case SG_FN_cuStreamUpdateCaptureDependencies_v2:
        if (c->result == CUDA_SUCCESS) capture_update(c);
        break;
    default:
        break;
    }
}

/* ---- events and waits -------------------------------------------------------------------- */

static void on_event(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase != SG_PHASE_AFTER || c->result != CUDA_SUCCESS) return;
    CUevent ev;
    if (c->proto == SG_FN_cuEventRecordWithFlags) {
        sg_args_cuEventRecordWithFlags_t *a = SG_CALL_ARGS(c, cuEventRecordWithFlags);
        if (a->flags & CU_EVENT_RECORD_EXTERNAL) { /* a real event_record node */
            enqueue_after(c);
            return;
        }
        ev = a->hEvent;
    } else {
        ev = SG_CALL_ARGS(c, cuEventRecord)->hEvent;
    }
    if (atomic_load_explicit(&sg_shim.sessions, memory_order_relaxed) == 0) return;
    uint64_t key = sg_shim_stream_key(c->stream);
    pthread_mutex_lock(&sg_shim.hot);
    sg_book_record(sg_shim.book, key, (uint64_t)(uintptr_t)ev);
    pthread_mutex_unlock(&sg_shim.hot);
}

static void on_wait(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase == SG_PHASE_BEFORE) {
        /* A stream about to join a capture: learn what it is while we may. */
        if (atomic_load_explicit(&sg_shim.sessions, memory_order_relaxed) != 0 &&
            !stream_tracked(sg_shim_stream_key(c->stream)))
            stream_info_before(c->stream);
        return;
    }
    if (c->result != CUDA_SUCCESS) return;
    sg_args_cuStreamWaitEvent_t *a = SG_CALL_ARGS(c, cuStreamWaitEvent);
    if (a->Flags & CU_EVENT_WAIT_EXTERNAL) { /* a real event_wait node */
        enqueue_after(c);
        return;
    }
    if (atomic_load_explicit(&sg_shim.sessions, memory_order_relaxed) == 0) return;
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    uint64_t deps[256];
    size_t n = 0;
    if (capture_info(c->stream, &st, &id, NULL, deps, 256, &n) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return;
    if (n > 256) n = 256;
    sg_book_stream_info_t info;
    uint64_t key = sg_shim_stream_key(c->stream);
    stream_info(c->stream, &info); /* what stream_info_before learnt, if it joins now */
    pthread_mutex_lock(&sg_shim.hot);
    if (sg_book_capture_of(sg_shim.book, key) != 0) { /* a member already: nothing to learn */
        memset(&info, 0, sizeof info);
        info.key = key;
        info.handle = (uint64_t)(uintptr_t)c->stream;
    }
    int rc = sg_book_wait(sg_shim.book, &info, (uint64_t)(uintptr_t)a->hEvent, id, deps, n);
    pthread_mutex_unlock(&sg_shim.hot);
    if (rc) sg_shim_log("capture: bookkeeping of a wait failed (%s)", sg_strerror(rc));
}

/* ---- memory map -------------------------------------------------------------------------------
 */

static void mem_add(uint64_t start, uint64_t size, sg_buffer_kind_t kind, bool vmm)
{
    if (!start || !size) return;
    pthread_mutex_lock(&sg_shim.hot);
    uint64_t group = 0;
    if (vmm) {
        const sg_memrange_t *r = sg_memmap_find(&sg_shim.reservations, start);
        group = r ? r->start : 0;
    }
    int rc = sg_memmap_add(&sg_shim.mem, start, size, kind, group, vmm, NULL);
    pthread_mutex_unlock(&sg_shim.hot);
    if (rc)
        sg_shim_log("memory map: cannot record [0x%" PRIx64 ", +%" PRIu64 "): %s", start, size,
                    sg_strerror(rc));
}

static void mem_remove(uint64_t start)
{
    pthread_mutex_lock(&sg_shim.hot);
    sg_memmap_remove_at(&sg_shim.mem, start);
    pthread_mutex_unlock(&sg_shim.hot);
}

bool sg_shim_stream_in_capture(CUstream s)
{
    return atomic_load_explicit(&sg_shim.sessions, memory_order_relaxed) != 0 &&
           stream_tracked(sg_shim_stream_key(s));
}

static bool in_capture(const sg_call_t *c)
{
    return c->has_stream && sg_shim_stream_in_capture(c->stream);
}

static void on_alloc(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase != SG_PHASE_AFTER) return;
    note_cuda();
    if (c->result != CUDA_SUCCESS) return;
    switch (c->proto) {
    case SG_FN_cuMemAlloc: {
        sg_args_cuMemAlloc_t *a = SG_CALL_ARGS(c, cuMemAlloc);
        if (a->dptr) mem_add(*a->dptr, a->bytesize, SG_BUFFER_DEVICE, false);
        break;
    }
    case SG_FN_cuMemAlloc_v2: {
        sg_args_cuMemAlloc_v2_t *a = SG_CALL_ARGS(c, cuMemAlloc_v2);
        if (a->dptr) mem_add(*a->dptr, a->bytesize, SG_BUFFER_DEVICE, false);
        break;
    }
    case SG_FN_cuMemAllocPitch: {
        sg_args_cuMemAllocPitch_t *a = SG_CALL_ARGS(c, cuMemAllocPitch);
        if (a->dptr && a->pPitch)
            mem_add(*a->dptr, (uint64_t)*a->pPitch * a->Height, SG_BUFFER_DEVICE, false);
        break;
    }
    case SG_FN_cuMemAllocPitch_v2: {
        sg_args_cuMemAllocPitch_v2_t *a = SG_CALL_ARGS(c, cuMemAllocPitch_v2);
        if (a->dptr && a->pPitch)
            mem_add(*a->dptr, (uint64_t)*a->pPitch * a->Height, SG_BUFFER_DEVICE, false);
        break;
    }
    case SG_FN_cuMemAllocManaged: {
        sg_args_cuMemAllocManaged_t *a = SG_CALL_ARGS(c, cuMemAllocManaged);
        if (a->dptr) mem_add(*a->dptr, a->bytesize, SG_BUFFER_MANAGED, false);
        break;
    }
    case SG_FN_cuMemAllocHost: {
        sg_args_cuMemAllocHost_t *a = SG_CALL_ARGS(c, cuMemAllocHost);
        if (a->pp) mem_add((uint64_t)(uintptr_t)*a->pp, a->bytesize, SG_BUFFER_HOST_PINNED, false);
        break;
    }
    case SG_FN_cuMemAllocHost_v2: {
        sg_args_cuMemAllocHost_v2_t *a = SG_CALL_ARGS(c, cuMemAllocHost_v2);
        if (a->pp) mem_add((uint64_t)(uintptr_t)*a->pp, a->bytesize, SG_BUFFER_HOST_PINNED, false);
        break;
    }
    case SG_FN_cuMemHostAlloc: {
        sg_args_cuMemHostAlloc_t *a = SG_CALL_ARGS(c, cuMemHostAlloc);
        if (a->pp) mem_add((uint64_t)(uintptr_t)*a->pp, a->bytesize, SG_BUFFER_HOST_PINNED, false);
        break;
    }
    case SG_FN_cuMemHostRegister:
    case SG_FN_cuMemHostRegister_v2: {
        sg_args_cuMemHostRegister_t *a = SG_CALL_ARGS(c, cuMemHostRegister);
        mem_add((uint64_t)(uintptr_t)a->p, a->bytesize, SG_BUFFER_HOST_PINNED, false);
        /* Without unified addressing of this memory the device sees it
         * elsewhere: record that address too. */
        CUdeviceptr dp = 0;
        __typeof__(&cuMemHostGetDevicePointer_v2) get = SG_REAL(cuMemHostGetDevicePointer_v2);
        if (get && get(&dp, a->p, 0) == CUDA_SUCCESS && dp != (CUdeviceptr)(uintptr_t)a->p)
            mem_add(dp, a->bytesize, SG_BUFFER_HOST_PINNED, false);
        break;
    }
    case SG_FN_cuMemAllocAsync:
    case SG_FN_cuMemAllocFromPoolAsync: {
        /* In a capture it is a mem_alloc node whose address belongs to the
         * graph (build.c records it); outside, a stream-ordered allocation. */
        if (in_capture(c)) {
            enqueue_after(c);
            break;
        }
        CUdeviceptr *p;
        size_t size;
        if (c->proto == SG_FN_cuMemAllocAsync) {
            p = SG_CALL_ARGS(c, cuMemAllocAsync)->dptr;
            size = SG_CALL_ARGS(c, cuMemAllocAsync)->bytesize;
        } else {
            p = SG_CALL_ARGS(c, cuMemAllocFromPoolAsync)->dptr;
            size = SG_CALL_ARGS(c, cuMemAllocFromPoolAsync)->bytesize;
        }
        if (p) mem_add(*p, size, SG_BUFFER_ASYNC, false);
        break;
    }
    case SG_FN_cuMemAddressReserve: {
        sg_args_cuMemAddressReserve_t *a = SG_CALL_ARGS(c, cuMemAddressReserve);
        if (a->ptr && *a->ptr && a->size) {
            pthread_mutex_lock(&sg_shim.hot);
            sg_memmap_add(&sg_shim.reservations, *a->ptr, a->size, SG_BUFFER_UNKNOWN, 0, false,
                          NULL);
            pthread_mutex_unlock(&sg_shim.hot);
        }
        break;
    }
    case SG_FN_cuMemMap: {
        sg_args_cuMemMap_t *a = SG_CALL_ARGS(c, cuMemMap);
        mem_add(a->ptr, a->size, SG_BUFFER_DEVICE, true);
        break;
    }
    default:
        break;
    }
}

static void on_free(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase != SG_PHASE_AFTER || c->result != CUDA_SUCCESS) return;
    switch (c->proto) {
    case SG_FN_cuMemFree:
        mem_remove(SG_CALL_ARGS(c, cuMemFree)->dptr);
        break;
    case SG_FN_cuMemFree_v2:
        mem_remove(SG_CALL_ARGS(c, cuMemFree_v2)->dptr);
        break;
    case SG_FN_cuMemFreeHost:
        mem_remove((uint64_t)(uintptr_t)SG_CALL_ARGS(c, cuMemFreeHost)->p);
        break;
    case SG_FN_cuMemHostUnregister:
        mem_remove((uint64_t)(uintptr_t)SG_CALL_ARGS(c, cuMemHostUnregister)->p);
        break;
    case SG_FN_cuMemFreeAsync:
        if (in_capture(c))
            enqueue_after(c); /* a mem_free node */
        else
            mem_remove(SG_CALL_ARGS(c, cuMemFreeAsync)->dptr);
        break;
    case SG_FN_cuMemUnmap: {
        sg_args_cuMemUnmap_t *a = SG_CALL_ARGS(c, cuMemUnmap);
        pthread_mutex_lock(&sg_shim.hot);
        sg_memmap_remove_span(&sg_shim.mem, a->ptr, a->size);
        pthread_mutex_unlock(&sg_shim.hot);
        break;
    }
    case SG_FN_cuMemAddressFree: {
        sg_args_cuMemAddressFree_t *a = SG_CALL_ARGS(c, cuMemAddressFree);
        pthread_mutex_lock(&sg_shim.hot);
        sg_memmap_remove_span(&sg_shim.reservations, a->ptr, a->size);
        sg_memmap_remove_span(&sg_shim.mem, a->ptr, a->size);
        pthread_mutex_unlock(&sg_shim.hot);
        break;
    }
    default:
        break;
    }
}

/* ---- graphs: instantiate, update, launch, destroy ------------------------------------------ */

static bool ensure_dir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

static void fill_provenance(sg_graph_t *g)
{
    free(g->program);
    g->program = strdup(sg_shim.cfg.program);
    g->pid = sg_shim.cfg.pid;
    /* Read each time: a launcher's child may set it after CUDA started
     * (torch.multiprocessing sets RANK in the spawned interpreter). */
    g->rank = sg_outbox_rank(getenv);
}

/* What a bundle's name says of where the graph comes from. */
static sg_outbox_origin_t origin_of(const sg_graph_t *g)
{
    return (sg_outbox_origin_t){g->rank, sg_shim_many_devices() ? g->device.ordinal : -1};
}

/* Count a graph that could not be recorded under its reason. Under out. */
static void count_failure(const char *why)
{
    sg_reasons_count(&sg_shim.failures, why);
}

/* Raw digests already seen (rawdigest.c) -> the model digest they built
 * (or, past SGCAP_MAX_BUNDLES, a stand-in digest that only counts them) and
 * their counts: a graph seen before costs a digest, not a model build.
 * Bounded: cleared when full. A program whose every capture is new adds an
 * entry per step, so entries sit in one array, found through a u64map of
 * indexes (no allocation per entry, no table rebuilt when it empties).
 * Under out. */
typedef struct raw_entry {
    uint64_t raw;
    uint64_t model;
    bool built;   /* model is a real model digest */
    bool variant; /* a variant over SGCAP_MAX_VARIANTS: counted, never written */
    sg_raw_digest_t counts;
} raw_entry_t;
#define RAW_MAX 65536u
#define RAW_STAND_IN 0x5ca1ab1e00000001ull /* xor'd into a raw digest used for counting */

/* Shapes (sg_raw_digest_t.shape) -> bundles written of that shape: past
 * SGCAP_MAX_VARIANTS a new graph of the shape is counted, not built (a
 * program re-capturing a graph with new arguments every step writes a few
 * bundles of it, not SGCAP_MAX_BUNDLES near-copies). Bounded like raws.
 * Under out. */
typedef struct shape_entry {
    uint64_t shape;
    uint32_t written;
} shape_entry_t;

/* A bounded table of entries of `size` bytes keyed by their first word. */
typedef struct {
    sg_u64map_t map; /* key -> index + 1 */
    void *v;
    uint32_t n, cap;
    size_t size;
} dense_t;

static dense_t raws = {.size = sizeof(raw_entry_t)}, shapes = {.size = sizeof(shape_entry_t)};

static void *dense_find(const dense_t *d, uint64_t key)
{
    uintptr_t i = (uintptr_t)sg_u64map_get(&d->map, key);
    return i ? (char *)d->v + (i - 1) * d->size : NULL;
}

/* A zeroed entry for key (not present), or NULL when out of memory. When
 * full, everything is forgotten first. */
static void *dense_add(dense_t *d, uint64_t key)
{
    if (d->n >= RAW_MAX) {
        sg_u64map_clear(&d->map, UINT32_MAX);
        d->n = 0;
    }
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? 2 * d->cap : 64;
        void *v = realloc(d->v, (size_t)cap * d->size);
        if (!v) return NULL;
        d->v = v;
        d->cap = cap;
    }
    if (sg_u64map_put(&d->map, key, (void *)(uintptr_t)(d->n + 1))) return NULL;
    void *e = (char *)d->v + (size_t)d->n++ * d->size;
    memset(e, 0, d->size);
    memcpy(e, &key, sizeof key);
    return e;
}

static uint32_t shape_written(uint64_t shape)
{
    const shape_entry_t *e = dense_find(&shapes, shape);
    return e ? e->written : 0;
}

static void shape_wrote(uint64_t shape)
{
    shape_entry_t *e = dense_find(&shapes, shape);
    if (!e) e = dense_add(&shapes, shape);
    if (e) e->written++;
}

static void raw_remember(uint64_t raw, uint64_t model, bool built, bool variant,
                         const sg_raw_digest_t *counts)
{
    raw_entry_t *e = dense_find(&raws, raw);
    if (!e) e = dense_add(&raws, raw);
    if (!e) return;
    e->model = model;
    e->built = built;
    e->variant = variant;
    e->counts = *counts;
}

static void count_recorded(const sg_raw_digest_t *c)
{
    sg_shim.graphs++;
    if (c->captured) sg_shim.graphs_captured++;
    sg_shim.nodes += c->nodes;
    sg_shim.streams += c->streams;
    sg_shim.events += c->events;
}

static void bind_duplicate(CUgraphExec exec, const sg_outbox_entry_t *existing)
{
    if (!sg_shim.cfg.snapshot) return; /* the path is for snapshots alone */
    char path[4096 + 160];
    if (sg_outbox_bundle_path(path, sizeof path, sg_shim.cfg.dir, sg_shim.cfg.program,
                              &existing->origin, sg_shim.cfg.pid, existing->sequence) == SG_OK)
        sg_snap_bind(exec, path, NULL);
}

static void over_limit(CUgraphExec exec, bool report)
{
    if (report)
        sg_shim_log("capture: SGCAP_MAX_BUNDLES=%u reached: further graphs are counted, not "
                    "written",
                    sg_shim.outbox.max_bundles);
    sg_snap_forget(exec);
}

/* A graph whose raw digest says it needs no model: a duplicate of a bundle,
 * or (past the bound) one only counted. Returns false when it must be built.
 * Under out. */
static bool graph_known(CUgraphExec exec, const sg_raw_digest_t *raw)
{
    raw_entry_t *e = dense_find(&raws, raw->digest);
    uint64_t digest;
    bool variant = e ? e->variant
                     : sg_shim.cfg.max_variants && sg_shim.outbox.written < sg_shim.outbox.max_bundles &&
                           shape_written(raw->shape) >= sg_shim.cfg.max_variants;
    if (variant) {
        /* SGCAP_MAX_VARIANTS bundles of its shape are written: counted only */
        sg_shim.graphs_seen++;
        sg_shim.graphs_by_digest++;
        count_recorded(e ? &e->counts : raw);
        if (!e) {
            sg_shim.variants++;
            raw_remember(raw->digest, raw->digest ^ RAW_STAND_IN, false, true, raw);
        }
        sg_snap_forget(exec);
        return true;
    }
    if (e)
        digest = e->model;
    else if (sg_shim.outbox.written >= sg_shim.outbox.max_bundles)
        digest = raw->digest ^ RAW_STAND_IN;
    else
        return false;
    if (sg_outbox_would_write(&sg_shim.outbox, digest)) return false; /* an earlier write failed */
    sg_shim.graphs_seen++;
    sg_shim.graphs_by_digest++;
    count_recorded(e ? &e->counts : raw);
    sg_outbox_entry_t existing = {0};
    bool report = false;
    switch (sg_outbox_decide(&sg_shim.outbox, digest, &existing, &report)) {
    case SG_OUTBOX_DUPLICATE:
        bind_duplicate(exec, &existing);
        break;
    case SG_OUTBOX_OVER_LIMIT:
        over_limit(exec, report);
        break;
    case SG_OUTBOX_WRITE: /* excluded by sg_outbox_would_write */
        break;
    }
    if (!e) raw_remember(raw->digest, digest, false, false, raw);
    return true;
}

/* The memo of calls.c: call digest -> the raw digest its graph had, call
 * shape -> the raw shape. Bounded like raws. Under out. */
typedef struct memo_entry {
    uint64_t key;
    uint64_t raw;
} memo_entry_t;
static dense_t call_memo = {.size = sizeof(memo_entry_t)},
               shape_memo = {.size = sizeof(memo_entry_t)};
static struct {
    int verify; /* SGCAP_VERIFY_DIGEST: -1 not read yet */
    uint64_t known, checked, differ;
} calls_stats = {-1, 0, 0, 0};

static bool verify_calls(void)
{
    if (calls_stats.verify < 0) {
        const char *v = getenv("SGCAP_VERIFY_DIGEST");
        calls_stats.verify = v && *v && strcmp(v, "0") != 0;
    }
    return calls_stats.verify;
}

/* A graph whose call digest the memo knows: as graph_known, with the raw
 * digest and shape the memo gives (a digest it does not know stays in the
 * calls' own key space, where only this path puts it). Under out. */
static bool calls_known(CUgraphExec exec, const sg_raw_digest_t *cd)
{
    const memo_entry_t *d = dense_find(&call_memo, cd->digest);
    const memo_entry_t *s = dense_find(&shape_memo, cd->shape);
    if (!d && !s) return false;
    sg_raw_digest_t r = *cd;
    if (d) r.digest = d->raw;
    if (s) r.shape = s->raw;
    return graph_known(exec, &r);
}

static void memo_put(dense_t *m, uint64_t key, uint64_t raw)
{
    memo_entry_t *e = dense_find(m, key);
    if (!e) e = dense_add(m, key);
    if (e) e->raw = raw;
}

/* After a graph was read back: what the memo would have said, checked
 * (SGCAP_VERIFY_DIGEST) and learnt. Under out. */
static void calls_learn(const sg_raw_digest_t *cd, const sg_raw_digest_t *raw)
{
    if (verify_calls()) {
        const memo_entry_t *d = dense_find(&call_memo, cd->digest);
        const memo_entry_t *s = dense_find(&shape_memo, cd->shape);
        if (d || s) calls_stats.checked++;
        if ((d && d->raw != raw->digest) || (s && s->raw != raw->shape)) {
            if (calls_stats.differ++ < 16)
                sg_shim_log("capture: SGCAP_VERIFY_DIGEST: a graph's calls were seen before with "
                            "a different %s",
                            d && d->raw != raw->digest ? "graph" : "shape");
        }
    }
    memo_put(&call_memo, cd->digest, raw->digest);
    memo_put(&shape_memo, cd->shape, raw->shape);
}

/* A graph was instantiated (or an exec updated from it, or changed in
 * place: then ov holds the changes): model, bundle. */
static void graph_recorded(CUgraphExec exec, CUgraph graph, const sg_override_t *ov,
                           const char *api)
{
    sg_raw_digest_t raw, cd;
    SG_PROF_T(pc);
    bool have_cd = sg_shim_calls_digest(graph, ov, &cd) == SG_OK;
    if (have_cd && !verify_calls()) {
        pthread_mutex_lock(&sg_shim.out);
        bool done = calls_known(exec, &cd);
        if (done) calls_stats.known++;
        pthread_mutex_unlock(&sg_shim.out);
        SG_PROF_STEP("call digest", pc);
        if (done) return;
    }
    SG_PROF_T(p0);
    bool have_raw = sg_shim_raw_digest(graph, ov, &raw) == SG_OK;
    SG_PROF_STEP("raw digest", p0);
    if (have_raw && have_cd) {
        pthread_mutex_lock(&sg_shim.out);
        calls_learn(&cd, &raw);
        pthread_mutex_unlock(&sg_shim.out);
    }
    if (have_raw) {
        SG_PROF_T(p1);
        pthread_mutex_lock(&sg_shim.out);
        bool done = graph_known(exec, &raw);
        pthread_mutex_unlock(&sg_shim.out);
        SG_PROF_STEP("graph known?", p1);
        if (done) return;
    }
    char why[256] = "";
    SG_PROF_T(p2);
    sg_graph_t *g = sg_shim_build(graph, ov, why, sizeof why);
    SG_PROF_STEP("model build", p2);
    pthread_mutex_lock(&sg_shim.out);
    sg_shim.graphs_seen++;
    if (!g) {
        if (sg_shim.builds_failed++ < 16)
            sg_shim_log("capture: graph %p (%s) not recorded: %s", (void *)graph, api, why);
        count_failure(why);
        pthread_mutex_unlock(&sg_shim.out);
        return;
    }
    g->sequence = sg_shim.next_sequence++;
    fill_provenance(g);
    sg_raw_digest_t counts = {.nodes = sg_graph_node_count(g),
                              .streams = g->n_streams,
                              .events = g->n_events,
                              .captured = g->capture_id != 0};
    count_recorded(&counts);
    if (g->crosscheck_done && !g->crosscheck_ok) {
        if (sg_shim.crosscheck_bad++ < 16)
            sg_shim_log("capture: graph %u cross-check: %s", g->sequence,
                        g->crosscheck_note ? g->crosscheck_note : "differs");
    }
    uint64_t digest = sg_graph_digest(g);
    if (have_raw) raw_remember(raw.digest, digest, true, false, &counts);
    sg_outbox_entry_t existing = {0};
    bool report = false;
    char path[4096 + 160];
    switch (sg_outbox_decide(&sg_shim.outbox, digest, &existing, &report)) {
    case SG_OUTBOX_WRITE: {
        bool ok = false;
        sg_outbox_origin_t origin = origin_of(g);
        if (sg_outbox_bundle_path(path, sizeof path, sg_shim.cfg.dir, sg_shim.cfg.program, &origin,
                                  sg_shim.cfg.pid, g->sequence) != SG_OK) {
            sg_shim_log("capture: bundle path too long under %s", sg_shim.cfg.dir);
        } else if (!ensure_dir(sg_shim.cfg.dir)) {
            sg_shim_log("capture: cannot create %s (%s): graph %u not written", sg_shim.cfg.dir,
                        strerror(errno), g->sequence);
        } else {
            /* The snapshot keeps its own copy of the model; the writer
             * takes this one (bundle first, then any snapshot rewrite). */
            sg_snap_bind(exec, path, g);
            void *blobs = NULL;
            size_t n_blobs = 0;
            sg_code_blobs(g, &blobs, &n_blobs);
            uint32_t seq = g->sequence;
            int rc = sg_writer_submit(g, path, blobs, n_blobs, 0, NULL, 0, "bundle");
            free(blobs);
            if (rc == SG_OK) {
                g = NULL;
                ok = true;
                if (have_raw) shape_wrote(raw.shape);
            } else {
                sg_shim_log("capture: out of memory queueing %s: not written", path);
                sg_snap_forget(exec);
            }
            sg_outbox_done(&sg_shim.outbox, digest, seq, &origin, ok);
            break;
        }
        sg_outbox_done(&sg_shim.outbox, digest, g->sequence, &origin, ok);
        break;
    }
    case SG_OUTBOX_DUPLICATE:
        bind_duplicate(exec, &existing);
        break;
    case SG_OUTBOX_OVER_LIMIT:
        over_limit(exec, report);
        break;
    }
    pthread_mutex_unlock(&sg_shim.out);
    sg_graph_destroy(g);
}

static void graph_instantiated(CUgraphExec exec, CUgraph graph, const char *api)
{
    sg_execs_bind(exec, graph);
    graph_recorded(exec, graph, NULL, api);
}

/* Before a launch: an exec changed in place since it was recorded is
 * recorded again as it is now (or, when that cannot be done, loses its
 * snapshot binding: a snapshot would pair its memory with the wrong model). */
static void exec_refresh(CUgraphExec exec)
{
    CUgraph graph = NULL;
    sg_override_t *ov = NULL;
    char why[200] = "";
    SG_PROF_T(p0);
    int rc = sg_execs_pending(exec, &graph, &ov, why, sizeof why);
    SG_PROF_STEP("exec pending?", p0);
    if (rc == 1) {
        graph_recorded(exec, graph, ov, "an exec changed in place");
    } else if (rc < 0) {
        pthread_mutex_lock(&sg_shim.out);
        sg_shim.graphs_seen++;
        sg_shim.builds_failed++;
        char line[260];
        snprintf(line, sizeof line, "an exec changed in place: %s", why);
        count_failure(line);
        if (sg_shim.builds_failed <= 16)
            sg_shim_log("capture: exec %p not recorded again: %s (no snapshot)", (void *)exec,
                        line);
        pthread_mutex_unlock(&sg_shim.out);
        sg_snap_forget(exec);
    }
    sg_execs_free_overrides(ov);
}

static void cond_node_added(sg_call_t *c)
{
    /* cuGraphAddNode (no edge data) and _v2 differ only there */
    CUgraphNode *out;
    CUgraph graph;
    CUgraphNodeParams *np;
    if (c->proto == SG_FN_cuGraphAddNode) {
        sg_args_cuGraphAddNode_t *a = SG_CALL_ARGS(c, cuGraphAddNode);
        out = a->phGraphNode, graph = a->hGraph, np = a->nodeParams;
    } else {
        sg_args_cuGraphAddNode_v2_t *a = SG_CALL_ARGS(c, cuGraphAddNode_v2);
        out = a->phGraphNode, graph = a->hGraph, np = a->nodeParams;
    }
    if (!np || !out || np->type != CU_GRAPH_NODE_TYPE_CONDITIONAL) return;
    const CUDA_CONDITIONAL_NODE_PARAMS *p = &np->conditional;
    sg_cond_info_t *ci = calloc(1, sizeof *ci);
    if (!ci) return;
    ci->node = (uint64_t)(uintptr_t)*out;
    ci->graph = (uint64_t)(uintptr_t)graph;
    ci->type = (uint32_t)p->type;
    ci->handle = (uint64_t)p->handle;
    ci->n_bodies = p->phGraph_out ? p->size : 0;
    if (ci->n_bodies > 1024) ci->n_bodies = 1024;
    if (ci->n_bodies) {
        ci->bodies = malloc(ci->n_bodies * sizeof *ci->bodies);
        if (!ci->bodies) {
            free(ci);
            return;
        }
        for (uint32_t i = 0; i < ci->n_bodies; i++)
            ci->bodies[i] = (uint64_t)(uintptr_t)p->phGraph_out[i];
    }
    pthread_mutex_lock(&sg_shim.hot);
    sg_cond_info_t *old = NULL;
    HASH_FIND(hh, sg_shim.conds, &ci->node, sizeof ci->node, old);
    if (old) {
        HASH_DEL(sg_shim.conds, old);
        free(old->bodies);
        free(old);
    }
    HASH_ADD(hh, sg_shim.conds, node, sizeof ci->node, ci);
    pthread_mutex_unlock(&sg_shim.hot);
}

static void cond_handle_created(sg_call_t *c)
{
    sg_args_cuGraphConditionalHandleCreate_t *a = SG_CALL_ARGS(c, cuGraphConditionalHandleCreate);
    if (!a->pHandle_out) return;
    sg_cond_handle_t *h = calloc(1, sizeof *h);
    if (!h) return;
    h->handle = (uint64_t)*a->pHandle_out;
    h->graph = (uint64_t)(uintptr_t)a->hGraph;
    h->default_value = a->defaultLaunchValue;
    h->flags = a->flags;
    pthread_mutex_lock(&sg_shim.hot);
    sg_cond_handle_t *old = NULL;
    HASH_FIND(hh, sg_shim.cond_handles, &h->handle, sizeof h->handle, old);
    if (old) {
        HASH_DEL(sg_shim.cond_handles, old);
        free(old);
    }
    HASH_ADD(hh, sg_shim.cond_handles, handle, sizeof h->handle, h);
    pthread_mutex_unlock(&sg_shim.hot);
}

static void graph_destroyed(CUgraph graph)
{
    uint64_t g = (uint64_t)(uintptr_t)graph;
    sg_execs_graph_destroyed(graph);
    pthread_mutex_lock(&sg_shim.hot);
    sg_book_forget(sg_shim.book, g);
    sg_cond_info_t *ci, *tmp;
    HASH_ITER(hh, sg_shim.conds, ci, tmp)
    {
        if (ci->graph != g) continue;
        HASH_DEL(sg_shim.conds, ci);
        free(ci->bodies);
        free(ci);
    }
    sg_cond_handle_t *h, *htmp;
    HASH_ITER(hh, sg_shim.cond_handles, h, htmp)
    {
        if (h->graph != g) continue;
        HASH_DEL(sg_shim.cond_handles, h);
        free(h);
    }
    pthread_mutex_unlock(&sg_shim.hot);
}

static void on_graph(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    note_cuda();
    if (c->proto == SG_FN_cuGraphLaunch) {
        if (phase == SG_PHASE_BEFORE && !sg_shim_stream_in_capture(c->stream))
            exec_refresh(SG_CALL_ARGS(c, cuGraphLaunch)->hGraph);
        sg_snap_on_launch(phase, c);
        if (phase == SG_PHASE_AFTER) enqueue_after(c); /* launched into a capture: a child graph */
        return;
    }
    if (stream_ender(c->proto)) { /* before and after: see streams_ended */
        atomic_fetch_add_explicit(&streams_ended, 1, memory_order_release);
        return;
    }
    if (phase == SG_PHASE_BEFORE) {
        if (c->proto == SG_FN_cuGraphDestroy)
            graph_destroyed(SG_CALL_ARGS(c, cuGraphDestroy)->hGraph);
        else if (c->proto == SG_FN_cuGraphExecDestroy) {
            sg_snap_forget(SG_CALL_ARGS(c, cuGraphExecDestroy)->hGraphExec);
            sg_execs_forget(SG_CALL_ARGS(c, cuGraphExecDestroy)->hGraphExec);
        }
        return;
    }
    /* counted whatever the result: a failed call may still have changed
     * something, and a count too many only costs a graph read back */
    switch (c->proto) {
    case SG_FN_cuGraphKernelNodeSetParams:
    case SG_FN_cuGraphKernelNodeSetParams_v2:
    case SG_FN_cuGraphKernelNodeSetAttribute:
    case SG_FN_cuGraphKernelNodeCopyAttributes:
    case SG_FN_cuGraphNodeSetParams:
    case SG_FN_cuGraphMemcpyNodeSetParams:
    case SG_FN_cuGraphMemsetNodeSetParams:
    case SG_FN_cuGraphHostNodeSetParams:
    case SG_FN_cuGraphEventRecordNodeSetEvent:
    case SG_FN_cuGraphEventWaitNodeSetEvent:
    case SG_FN_cuGraphExternalSemaphoresSignalNodeSetParams:
    case SG_FN_cuGraphExternalSemaphoresWaitNodeSetParams:
    case SG_FN_cuGraphBatchMemOpNodeSetParams:
    case SG_FN_cuGraphAddDependencies:
    case SG_FN_cuGraphAddDependencies_v2:
    case SG_FN_cuGraphRemoveDependencies:
    case SG_FN_cuGraphRemoveDependencies_v2:
    case SG_FN_cuGraphDestroyNode:
    case SG_FN_cuGraphAddKernelNode:
    case SG_FN_cuGraphAddKernelNode_v2:
    case SG_FN_cuGraphAddMemcpyNode:
    case SG_FN_cuGraphAddMemsetNode:
    case SG_FN_cuGraphAddHostNode:
    case SG_FN_cuGraphAddChildGraphNode:
    case SG_FN_cuGraphAddEmptyNode:
    case SG_FN_cuGraphAddEventRecordNode:
    case SG_FN_cuGraphAddEventWaitNode:
    case SG_FN_cuGraphAddMemAllocNode:
    case SG_FN_cuGraphAddMemFreeNode:
    case SG_FN_cuGraphAddExternalSemaphoresSignalNode:
    case SG_FN_cuGraphAddExternalSemaphoresWaitNode:
    case SG_FN_cuGraphAddBatchMemOpNode:
    case SG_FN_cuGraphAddNode:
    case SG_FN_cuGraphAddNode_v2:
        sg_shim_calls_graph_changed();
        break;
    case SG_FN_cuStreamSetAttribute:
    case SG_FN_cuStreamCopyAttributes:
    case SG_FN_cuFuncSetAttribute:
    case SG_FN_cuKernelSetAttribute:
    case SG_FN_cuFuncSetCacheConfig:
    case SG_FN_cuKernelSetCacheConfig:
        sg_shim_calls_attr_changed();
        return;
    default:
        break;
    }
    if (c->result != CUDA_SUCCESS) return;
    switch (c->proto) {
    case SG_FN_cuGraphInstantiate: {
        sg_args_cuGraphInstantiate_t *a = SG_CALL_ARGS(c, cuGraphInstantiate);
        if (a->phGraphExec) graph_instantiated(*a->phGraphExec, a->hGraph, "cuGraphInstantiate");
        break;
    }
    case SG_FN_cuGraphInstantiate_v2: {
        sg_args_cuGraphInstantiate_v2_t *a = SG_CALL_ARGS(c, cuGraphInstantiate_v2);
        if (a->phGraphExec) graph_instantiated(*a->phGraphExec, a->hGraph, "cuGraphInstantiate_v2");
        break;
    }
    case SG_FN_cuGraphInstantiateWithFlags: {
        sg_args_cuGraphInstantiateWithFlags_t *a = SG_CALL_ARGS(c, cuGraphInstantiateWithFlags);
        if (a->phGraphExec)
            graph_instantiated(*a->phGraphExec, a->hGraph, "cuGraphInstantiateWithFlags");
        break;
    }
    case SG_FN_cuGraphInstantiateWithParams: {
        sg_args_cuGraphInstantiateWithParams_t *a = SG_CALL_ARGS(c, cuGraphInstantiateWithParams);
        if (a->phGraphExec)
            graph_instantiated(*a->phGraphExec, a->hGraph, "cuGraphInstantiateWithParams");
        break;
    }
    case SG_FN_cuGraphExecUpdate:
        graph_instantiated(SG_CALL_ARGS(c, cuGraphExecUpdate)->hGraphExec,
                           SG_CALL_ARGS(c, cuGraphExecUpdate)->hGraph, "cuGraphExecUpdate");
        break;
    case SG_FN_cuGraphExecUpdate_v2:
        graph_instantiated(SG_CALL_ARGS(c, cuGraphExecUpdate_v2)->hGraphExec,
                           SG_CALL_ARGS(c, cuGraphExecUpdate_v2)->hGraph, "cuGraphExecUpdate");
        break;
    case SG_FN_cuGraphAddNode:
    case SG_FN_cuGraphAddNode_v2:
        cond_node_added(c);
        break;
    case SG_FN_cuGraphConditionalHandleCreate:
        cond_handle_created(c);
        break;
    case SG_FN_cuGraphExecKernelNodeSetParams:
    case SG_FN_cuGraphExecKernelNodeSetParams_v2:
    case SG_FN_cuGraphExecMemcpyNodeSetParams:
    case SG_FN_cuGraphExecMemsetNodeSetParams:
    case SG_FN_cuGraphExecNodeSetParams:
    case SG_FN_cuGraphExecHostNodeSetParams:
    case SG_FN_cuGraphExecChildGraphNodeSetParams:
    case SG_FN_cuGraphExecEventRecordNodeSetEvent:
    case SG_FN_cuGraphExecEventWaitNodeSetEvent:
    case SG_FN_cuGraphNodeSetEnabled:
        sg_execs_on_set(c);
        break;
    default:
        break;
    }
}

/* ---- attach, fork, summary ------------------------------------------------------------------ */

/* hot and out are never held together and code is innermost, so taking
 * them in this order cannot deadlock against a thread of the program. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&sg_shim.hot);
    pthread_mutex_lock(&sg_shim.out);
    sg_code_atfork_prepare();
    sg_writer_atfork_prepare();
}

static void atfork_parent(void)
{
    sg_writer_atfork_parent();
    sg_code_atfork_parent();
    pthread_mutex_unlock(&sg_shim.out);
    pthread_mutex_unlock(&sg_shim.hot);
}

static void atfork_child(void)
{
    sg_writer_atfork_child();
    sg_code_atfork_child();
    pthread_mutex_unlock(&sg_shim.out);
    pthread_mutex_unlock(&sg_shim.hot);
    /* Captures, execs and the driver do not survive fork. */
    sg_book_drop_sessions(sg_shim.book);
    atomic_store(&sg_shim.sessions, 0);
    tls_per_thread_key = 0;
    sg_shim.cfg.pid = (int64_t)getpid();
    atomic_store(&sg_shim.cuda_seen, 0);
    sg_snap_atfork_child();
    sg_execs_atfork_child();
    sg_kinfo_atfork_child();
}

static const sg_observer_t observer = {
    .name = "capture",
    .wants_eager = 0,
    .on =
        {
            [SG_FAMILY_CAPTURE] = on_capture,
            [SG_FAMILY_EVENT] = on_event,
            [SG_FAMILY_WAIT] = on_wait,
            [SG_FAMILY_LAUNCH] = on_launch,
            [SG_FAMILY_COPY] = on_launch,
            [SG_FAMILY_MEMSET] = on_launch,
            [SG_FAMILY_ALLOC] = on_alloc,
            [SG_FAMILY_FREE] = on_free,
            [SG_FAMILY_GRAPH] = on_graph,
            [SG_FAMILY_MODULE] = sg_code_on_module,
            [SG_FAMILY_NVRTC] = sg_code_on_nvrtc,
        },
    .user = NULL,
};

static int attach(void);

int sg_capture_attach(void)
{
    SG_PROF_T(p0);
    int rc = attach();
    SG_PROF_STEP("attach", p0);
    return rc;
}

static int attach(void)
{
    if (atomic_exchange(&attached, 1)) return 0;
    sg_shim_config_t *cfg = &sg_shim.cfg;
    const sg_inject_config_t *ic = sg_inject_config();
    snprintf(cfg->dir, sizeof cfg->dir, "%s", ic->dir);
    bool valid = true;
    cfg->max_bundles = sg_outbox_parse_max(getenv("SGCAP_MAX_BUNDLES"), &valid);
    if (!valid)
        sg_shim_log("SGCAP_MAX_BUNDLES=%.40s not understood: using %u", getenv("SGCAP_MAX_BUNDLES"),
                    cfg->max_bundles);
    cfg->max_variants = (uint32_t)env_u64("SGCAP_MAX_VARIANTS", 4, 0, UINT32_MAX);
    const char *fs = getenv("SGCAP_FSYNC");
    cfg->fsync = fs && *fs && strcmp(fs, "0") != 0;
    const char *snap = getenv("SGCAP_SNAPSHOT");
    cfg->snapshot = snap && *snap && strcmp(snap, "0") != 0;
    cfg->snapshot_launch = (uint32_t)env_u64("SGCAP_SNAPSHOT_LAUNCH", 1, 1, UINT32_MAX);
    cfg->snapshot_max_bytes = env_u64("SGCAP_SNAPSHOT_MAX_BYTES", 1ull << 30, 0, UINT64_MAX);
    cfg->code_max_bytes = env_u64("SGCAP_CODE_MAX_BYTES", 512ull << 20, 0, UINT64_MAX);
    cfg->arena_bytes = env_u64("SGCAP_ARENA_BYTES", 1ull << 30, 1, UINT64_MAX);
    cfg->arena_open_bytes = env_u64("SGCAP_ARENA_OPEN_BYTES", 64ull << 20, 1, UINT64_MAX);
    cfg->pid = (int64_t)getpid();
    read_program_name(cfg->program, sizeof cfg->program);

    pthread_mutex_init(&sg_shim.hot, NULL);
    pthread_mutex_init(&sg_shim.out, NULL);
    sg_book_limits_t lim = {1024, 4u << 20};
    sg_shim.book = sg_book_create(&lim);
    if (!sg_shim.book) return SG_ENOMEM;
    sg_memmap_init(&sg_shim.mem);
    sg_memmap_init(&sg_shim.reservations);
    sg_outbox_init(&sg_shim.outbox, cfg->max_bundles);
    int rc = sg_code_attach();
    if (rc) return rc;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    if (sg_inject_add_observer(&observer) != 0) return SG_ELIMIT;
    return 0;
}

static void summary(void);

/* The summary goes out at exit from every process that used CUDA. */
__attribute__((destructor)) static void sg_shim_summary(void)
{
    SG_PROF_T(p0);
    summary();
    SG_PROF_STEP("exit: flush and summary", p0);
#ifdef SG_PROFILE
    sg_prof_report();
#endif
}

static void summary(void)
{
    if (!atomic_load(&attached)) return;
    sg_writer_flush(); /* every bundle is on disk before the program's exit returns */
    if (!atomic_load(&sg_shim.cuda_seen)) return;
    /* Only processes that instantiated a graph have something to say (a
     * program's helper processes, eager-only runs and captures that were
     * never instantiated stay quiet at info level). */
    sg_book_stats_t bs;
    memset(&bs, 0, sizeof bs);
    bool hot_locked = pthread_mutex_trylock(&sg_shim.hot) == 0;
    sg_book_stats(sg_shim.book, &bs);
    if (hot_locked) pthread_mutex_unlock(&sg_shim.hot);
    if (sg_shim.graphs == 0 && sg_shim.builds_failed == 0) return;
    bool locked = pthread_mutex_trylock(&sg_shim.out) == 0;
    char code[256];
    sg_code_summary(code, sizeof code);
    const sg_outbox_t *o = &sg_shim.outbox;
    /* The coverage line first: every graph the program instantiated (or
     * updated an exec from) is either recorded or counted with its reason. */
    char why[SG_REASONS_MAX * 180];
    sg_reasons_format(&sg_shim.failures, why, sizeof why);
    sg_shim_log("summary: graphs: %" PRIu64 " seen, %" PRIu64 " recorded (%" PRIu64
                " by digest alone), %" PRIu64 " not recorded%s",
                sg_shim.graphs_seen, sg_shim.graphs, sg_shim.graphs_by_digest,
                sg_shim.builds_failed, why);
    uint32_t written = o->written - (uint32_t)sg_writer_failed();
    sg_shim_log("summary: %" PRIu64 " %s (%" PRIu64 "%s distinct, %" PRIu64
                " from stream capture), %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
                " %s; %u %s written to %s (%" PRIu64 " %s of them, %" PRIu64
                " distinct %s over SGCAP_MAX_BUNDLES=%u, %" PRIu64 " failed)",
                sg_shim.graphs, sg_plural(sg_shim.graphs, "graph", "graphs"),
                o->distinct + sg_shim.variants,
                o->seen_full ? "+" : "", sg_shim.graphs_captured, sg_shim.nodes,
                sg_plural(sg_shim.nodes, "node", "nodes"), sg_shim.streams,
                sg_plural(sg_shim.streams, "stream", "streams"), sg_shim.events,
                sg_plural(sg_shim.events, "event", "events"), written,
                sg_plural(written, "bundle", "bundles"), sg_shim.cfg.dir, o->duplicates,
                sg_plural(o->duplicates, "duplicate", "duplicates"), o->over_limit,
                sg_plural(o->over_limit, "graph", "graphs"), o->max_bundles,
                o->failed + sg_writer_failed());
    if (sg_shim.variants)
        sg_shim_log("summary: %" PRIu64 " distinct %s not written: %s only in kernel arguments "
                    "that are not device pointers from graphs written SGCAP_MAX_VARIANTS=%u "
                    "times (0: no cap)",
                    sg_shim.variants, sg_plural(sg_shim.variants, "graph", "graphs"),
                    sg_shim.variants == 1 ? "it differs" : "they differ", sg_shim.cfg.max_variants);
    if (calls_stats.known)
        sg_shim_log("summary: %" PRIu64 " %s known by the calls that captured them, not read "
                    "back (SGCAP_VERIFY_DIGEST=1 checks them)",
                    calls_stats.known, sg_plural(calls_stats.known, "graph", "graphs"));
    if (verify_calls())
        sg_shim_log("summary: SGCAP_VERIFY_DIGEST: %" PRIu64 " %s read back that the calls "
                    "already told, %" PRIu64 " of them differently",
                    calls_stats.checked, sg_plural(calls_stats.checked, "graph", "graphs"),
                    calls_stats.differ);
    if (code[0]) sg_shim_log("summary: %s", code);
    sg_shim_log("summary: bookkeeping: %" PRIu64 " %s, %" PRIu64
                " %s tagged, peak %" PRIu64 " %s held (now %" PRIu64 " in %u %s, %" PRIu64
                " evicted), %zu live %s mapped",
                bs.captures_begun, sg_plural(bs.captures_begun, "capture", "captures"),
                bs.nodes_tagged, sg_plural(bs.nodes_tagged, "node", "nodes"), bs.tags_peak,
                sg_plural(bs.tags_peak, "tag", "tags"), bs.tags_live, bs.records_live,
                sg_plural(bs.records_live, "graph", "graphs"), bs.records_evicted, sg_shim.mem.n,
                sg_plural(sg_shim.mem.n, "allocation", "allocations"));
    if (sg_shim.builds_failed || sg_shim.crosscheck_bad)
        sg_shim_log("summary: %" PRIu64 " %s could not be recorded, %" PRIu64
                    " %s with CUDA's own node/edge lists (see the lines above)",
                    sg_shim.builds_failed, sg_plural(sg_shim.builds_failed, "graph", "graphs"),
                    sg_shim.crosscheck_bad,
                    sg_plural(sg_shim.crosscheck_bad, "disagrees", "disagree"));
    if (locked) pthread_mutex_unlock(&sg_shim.out);
}
