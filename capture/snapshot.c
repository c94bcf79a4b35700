/* snapshot.c: SGCAP_SNAPSHOT=1: the contents of every buffer a graph
 * touches, before and after one launch of it (the first, or the
 * SGCAP_SNAPSHOT_LAUNCH-th), written into its bundle as
 * data/bN.{before,after}.zst so replay can restore the inputs and compare
 * the outputs.
 *
 * At cuGraphLaunch BEFORE: synchronize the launch stream and the context,
 * copy each buffer to the host; the program's launch then runs; AFTER:
 * synchronize again, copy again, and hand the bundle's rewrite (code blobs
 * included, atomic) to the writer thread (writer.c), after the bundle's own
 * first write. A byte cap over both copies (SGCAP_SNAPSHOT_MAX_BYTES) skips
 * whole buffers, and every buffer without a snapshot says why in its
 * snapshot_note. Graph allocations have no contents before the launch
 * (the graph allocates them) and none after it when the graph frees them.
 *
 * Only bundles written in this process are snapshotted, once each; their
 * model is kept (a clone) until then, so memory is bounded by
 * SGCAP_MAX_BUNDLES models. The copies run in relaxed capture mode. */
#include "shim.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"
#include "graph/plural.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct snap_bundle {
    char *path;
    sg_graph_t *model; /* until snapshotted */
    bool taken;        /* a snapshot was started (or done) */
    struct snap_bundle *next;
} snap_bundle_t;

typedef struct snap_exec {
    uint64_t exec;
    snap_bundle_t *bundle;
    uint32_t launches;
    UT_hash_handle hh;
} snap_exec_t;

/* The snapshot in flight on this thread, between BEFORE and AFTER of one
 * cuGraphLaunch. */
typedef struct {
    uint64_t exec;
    CUstream stream;
    snap_bundle_t *bundle;
    sg_graph_t *model;
    uint32_t n;
    void **before, **after;
    uint64_t budget;
    uint64_t skipped_bytes;
    uint32_t skipped;
} inflight_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static snap_bundle_t *bundles;
static snap_exec_t *execs;
static __thread inflight_t *current;

static snap_bundle_t *bundle_by_path(const char *path)
{
    for (snap_bundle_t *b = bundles; b; b = b->next)
        if (strcmp(b->path, path) == 0) return b;
    return NULL;
}

void sg_snap_bind(CUgraphExec exec, const char *path, const sg_graph_t *g)
{
    if (!sg_shim.cfg.snapshot || !exec) return;
    pthread_mutex_lock(&lock);
    snap_bundle_t *b = bundle_by_path(path);
    if (!b && g) {
        b = calloc(1, sizeof *b);
        if (b) {
            b->path = strdup(path);
            b->model = sg_graph_clone(g);
            if (!b->path || !b->model) {
                free(b->path);
                sg_graph_destroy(b->model);
                free(b);
                b = NULL;
                sg_shim_log("snapshot: out of memory keeping the model of %s", path);
            } else {
                b->next = bundles;
                bundles = b;
            }
        }
    }
    uint64_t key = (uint64_t)(uintptr_t)exec;
    snap_exec_t *e = NULL;
    HASH_FIND(hh, execs, &key, sizeof key, e);
    if (!e && b && (e = calloc(1, sizeof *e)) != NULL) {
        e->exec = key;
        HASH_ADD(hh, execs, exec, sizeof e->exec, e);
    }
    if (e && e->bundle != b) {
        e->bundle = b; /* a new graph in this exec: count its launches anew */
        e->launches = 0;
    }
    pthread_mutex_unlock(&lock);
}

void sg_snap_forget(CUgraphExec exec)
{
    if (!sg_shim.cfg.snapshot) return;
    uint64_t key = (uint64_t)(uintptr_t)exec;
    pthread_mutex_lock(&lock);
    snap_exec_t *e = NULL;
    HASH_FIND(hh, execs, &key, sizeof key, e);
    if (e) {
        HASH_DEL(execs, e);
        free(e);
    }
    pthread_mutex_unlock(&lock);
}

static void set_note(sg_buffer_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_note(sg_buffer_t *b, const char *fmt, ...)
{
    char note[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note, sizeof note, fmt, ap);
    va_end(ap);
    free(b->snapshot_note);
    b->snapshot_note = strdup(note);
}

static void inflight_free(inflight_t *f)
{
    if (!f) return;
    for (uint32_t i = 0; i < f->n; i++) {
        if (f->before) free(f->before[i]);
        if (f->after) free(f->after[i]);
    }
    free(f->before);
    free(f->after);
    sg_graph_destroy(f->model);
    free(f);
}

/* Copy n bytes of this process at addr, refusing (not faulting on) what
 * is not mapped: process_vm_readv on ourselves reports EFAULT instead. */
static bool read_own_memory(void *dst, uint64_t addr, uint64_t n)
{
    uint64_t done = 0;
    while (done < n) {
        struct iovec local = {(char *)dst + done, (size_t)(n - done)};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), (size_t)(n - done)};
        ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (r > 0) {
            done += (uint64_t)r;
            continue;
        }
        if (r < 0 && (errno == ENOSYS || errno == EPERM)) break; /* a sandbox: the pipe way */
        return false;
    }
    if (done == n) return true;
    /* Through a pipe: write(2) reads our memory in the kernel, which says
     * EFAULT instead of faulting. */
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return false;
    bool ok = true;
    while (ok && done < n) {
        size_t chunk = n - done < 65536 ? (size_t)(n - done) : 65536;
        ssize_t w = write(p[1], (const void *)(uintptr_t)(addr + done), chunk);
        ok = w > 0;
        for (ssize_t got = 0; ok && got < w;) {
            ssize_t rr = read(p[0], (char *)dst + done + got, (size_t)(w - got));
            ok = rr > 0;
            got += rr > 0 ? rr : 0;
        }
        if (ok) done += (uint64_t)w;
    }
    close(p[0]);
    close(p[1]);
    return ok && done == n;
}

/* Copy buffer b of the model to a new host block, or NULL with a note. */
static void *copy_out(inflight_t *f, sg_buffer_t *b, const char *when)
{
    if (b->size > f->budget) {
        f->skipped++;
        f->skipped_bytes += b->size;
        set_note(b,
                 "not snapshotted: %" PRIu64 " bytes over what was left of "
                 "SGCAP_SNAPSHOT_MAX_BYTES=%" PRIu64 " (%s)",
                 b->size, sg_shim.cfg.snapshot_max_bytes, when);
        return NULL;
    }
    void *host = malloc(b->size ? b->size : 1);
    if (!host) {
        set_note(b, "not snapshotted: out of host memory for %" PRIu64 " bytes", b->size);
        return NULL;
    }
    if (sg_buffer_kind_is_host(b->kind)) {
        /* The program's own host memory: read it without trusting that it
         * is still mapped (a crash here would be the program's). */
        if (!read_own_memory(host, b->address, b->size)) {
            free(host);
            set_note(b, "not snapshotted: the host memory was not readable %s the launch", when);
            return NULL;
        }
        f->budget -= b->size;
        return host;
    }
    CUresult r = CUDA_ERROR_NOT_FOUND;
    __typeof__(&cuMemcpyDtoH_v2) copy = SG_REAL(cuMemcpyDtoH_v2);
    if (copy) SG_SHIM_RELAXED(r = copy(host, (CUdeviceptr)b->address, b->size));
    if (r != CUDA_SUCCESS) {
        free(host);
        set_note(b, "not snapshotted: copying %s the launch failed (CUDA error %d)", when, (int)r);
        return NULL;
    }
    f->budget -= b->size;
    return host;
}

/* The launch stream, then the whole context: inputs the program wrote on
 * other streams (or the legacy stream) must have landed before "before",
 * and everything the launch made must be done before "after". */
static CUresult sync_stream(CUstream s)
{
    CUresult r = CUDA_ERROR_NOT_FOUND;
    __typeof__(&cuStreamSynchronize) sync = SG_REAL(cuStreamSynchronize);
    __typeof__(&cuCtxSynchronize) ctx_sync = SG_REAL(cuCtxSynchronize);
    if (sync) SG_SHIM_RELAXED(r = sync(s));
    if (r == CUDA_SUCCESS && ctx_sync) SG_SHIM_RELAXED(r = ctx_sync());
    return r;
}

static bool freed_by_graph(const sg_graph_t *g, uint32_t buffer)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (n && n->type == SG_NODE_MEM_FREE && n->u.mem.buffer == buffer) return true;
    }
    return false;
}

static void snapshot_before(sg_call_t *c)
{
    uint64_t key = (uint64_t)(uintptr_t)SG_CALL_ARGS(c, cuGraphLaunch)->hGraph;
    pthread_mutex_lock(&lock);
    snap_exec_t *e = NULL;
    HASH_FIND(hh, execs, &key, sizeof key, e);
    snap_bundle_t *b = e ? e->bundle : NULL;
    if (!b || b->taken || ++e->launches != sg_shim.cfg.snapshot_launch) {
        pthread_mutex_unlock(&lock);
        return;
    }
    b->taken = true;
    sg_graph_t *model = b->model;
    b->model = NULL;
    pthread_mutex_unlock(&lock);

    inflight_t *f = calloc(1, sizeof *f);
    if (!f) {
        sg_graph_destroy(model);
        return;
    }
    f->exec = key;
    f->stream = c->stream;
    f->bundle = b;
    f->model = model;
    f->n = model->n_buffers;
    f->budget = sg_shim.cfg.snapshot_max_bytes;
    f->before = calloc(f->n ? f->n : 1, sizeof *f->before);
    f->after = calloc(f->n ? f->n : 1, sizeof *f->after);
    if (!f->before || !f->after) {
        inflight_free(f);
        return;
    }
    CUresult r = sync_stream(c->stream);
    if (r != CUDA_SUCCESS) {
        sg_shim_log("snapshot: synchronizing the launch stream failed (CUDA error %d): %s has "
                    "no snapshot",
                    (int)r, b->path);
        inflight_free(f);
        return;
    }
    for (uint32_t i = 0; i < f->n; i++) {
        sg_buffer_t *buf = &model->buffers[i];
        if (buf->kind == SG_BUFFER_GRAPH_ALLOC) continue; /* exists only while the graph runs */
        f->before[i] = copy_out(f, buf, "before");
    }
    current = f;
}

static void snapshot_after(sg_call_t *c)
{
    inflight_t *f = current;
    current = NULL;
    uint64_t key = (uint64_t)(uintptr_t)SG_CALL_ARGS(c, cuGraphLaunch)->hGraph;
    if (!f) return;
    if (f->exec != key || c->result != CUDA_SUCCESS) {
        if (c->result != CUDA_SUCCESS)
            sg_shim_log("snapshot: the launch failed (CUDA error %d): %s has no snapshot",
                        c->result, f->bundle->path);
        inflight_free(f);
        return;
    }
    CUresult r = sync_stream(f->stream);
    if (r != CUDA_SUCCESS) {
        sg_shim_log("snapshot: synchronizing after the launch failed (CUDA error %d): %s has "
                    "no snapshot",
                    (int)r, f->bundle->path);
        inflight_free(f);
        return;
    }
    sg_graph_t *g = f->model;
    sg_bundle_blob_t *data = calloc(2 * (size_t)f->n + 1, sizeof *data);
    char(*names)[48] = calloc(2 * (size_t)f->n + 1, sizeof *names);
    if (!data || !names) {
        free(data);
        free(names);
        inflight_free(f);
        return;
    }
    size_t nd = 0;
    uint64_t bytes = 0;
    uint32_t with = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        sg_buffer_t *buf = &g->buffers[i];
        bool graph_alloc = buf->kind == SG_BUFFER_GRAPH_ALLOC;
        if (!f->before[i] && !graph_alloc) continue; /* its note says why */
        if (graph_alloc && freed_by_graph(g, i)) {
            set_note(buf, "allocated and freed by the graph: no contents outside a launch");
            continue;
        }
        f->after[i] = copy_out(f, buf, "after");
        if (!f->after[i]) continue;
        if (f->before[i]) {
            snprintf(names[nd], sizeof names[nd], "data/b%u.before.zst", i);
            data[nd] = (sg_bundle_blob_t){
                .relpath = names[nd], .data = f->before[i], .size = buf->size, .compress = true};
            free(buf->before_file);
            buf->before_file = strdup(names[nd]);
            nd++;
        } else {
            set_note(buf, "allocated by the graph: no contents before the launch (after only)");
        }
        snprintf(names[nd], sizeof names[nd], "data/b%u.after.zst", i);
        data[nd] = (sg_bundle_blob_t){
            .relpath = names[nd], .data = f->after[i], .size = buf->size, .compress = true};
        free(buf->after_file);
        buf->after_file = strdup(names[nd]);
        nd++;
        buf->snapshot_bytes = buf->size;
        bytes += buf->size;
        with++;
    }
    if (f->skipped) {
        char line[200];
        snprintf(line, sizeof line,
                 "%u %s (%" PRIu64 " bytes) skipped: over SGCAP_SNAPSHOT_MAX_BYTES=%" PRIu64,
                 f->skipped, sg_plural(f->skipped, "buffer", "buffers"), f->skipped_bytes,
                 sg_shim.cfg.snapshot_max_bytes);
        sg_graph_log_pass(g, "snapshot", line);
        sg_shim_log("snapshot: %s: %s", f->bundle->path, line);
    }
    void *code = NULL;
    size_t nc = 0;
    sg_code_blobs(g, &code, &nc);
    sg_bundle_blob_t *all = calloc(nd + nc + 1, sizeof *all);
    /* The writer takes the model, the copies and their names. */
    void **owned = calloc(2 * (size_t)f->n + 2, sizeof *owned);
    int rc = SG_ENOMEM;
    if (all && owned) {
        if (nc) memcpy(all, code, nc * sizeof *all);
        if (nd) memcpy(all + nc, data, nd * sizeof *all);
        size_t no = 0;
        owned[no++] = names;
        for (uint32_t i = 0; i < f->n; i++) {
            if (f->before[i]) owned[no++] = f->before[i];
            if (f->after[i]) owned[no++] = f->after[i];
        }
        rc = sg_writer_submit(g, f->bundle->path, all, nc + nd, SG_BUNDLE_OVERWRITE, owned, no,
                              "snapshot");
    }
    if (rc == SG_OK) {
        f->model = NULL;
        for (uint32_t i = 0; i < f->n; i++)
            f->before[i] = f->after[i] = NULL;
        names = NULL;
        owned = NULL;
        sg_shim_log("snapshot: %s: %u of %u %s, %" PRIu64 " bytes before and after launch %u",
                    f->bundle->path, with, f->n, sg_plural(f->n, "buffer", "buffers"), bytes,
                    sg_shim.cfg.snapshot_launch);
    } else {
        sg_shim_log("snapshot: out of memory queueing the rewrite of %s: no snapshot",
                    f->bundle->path);
    }
    free(owned);
    free(all);
    free(code);
    free(data);
    free(names);
    inflight_free(f);
}

void sg_snap_on_launch(sg_phase_t phase, sg_call_t *c)
{
    if (!sg_shim.cfg.snapshot) return;
    if (phase == SG_PHASE_BEFORE) {
        /* A launch into a stream capture is a child graph node, not a run. */
        if (sg_shim_stream_in_capture(c->stream)) return;
        snapshot_before(c);
    } else {
        snapshot_after(c);
    }
}

void sg_snap_atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    current = NULL;
    snap_exec_t *e, *tmp;
    HASH_ITER(hh, execs, e, tmp)
    {
        HASH_DEL(execs, e);
        free(e);
    }
}
