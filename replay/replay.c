/* replay.c: one replay from start to end: the GPU (the caller's driver
 * table, a device, a context), the device check, open (memory, code, graph, instantiate, upload), restoring
 * the before-snapshots, launching, validating against the after-snapshots,
 * timing, and tearing it all down again. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"
#include "graph/text.h"
#include "replay_private.h"

#define SG_BENCH_CHUNK 256u

int sg_replay_gpu_open(const sg_replay_driver_t *drv, int device, struct CUctx_st *ctx,
                       sg_replay_gpu_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!drv) return sg_replay__fail(err, errlen, SG_EINVAL, "no driver table");
    SG_CU_TRY(drv->cuInit(0), "cuInit (no usable GPU?)");
    int count = 0;
    SG_CU_TRY(drv->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (device < 0 || device >= count)
        return sg_replay__fail(err, errlen, SG_ECUDA, "there is no GPU %d (this machine has %d)",
                               device, count);
    sg_replay_gpu_t *gpu = calloc(1, sizeof *gpu);
    if (!gpu) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    gpu->drv = drv;
    gpu->device = device;
    CUresult cr = drv->cuDeviceGet(&gpu->dev, device);
    if (cr != CUDA_SUCCESS) {
        free(gpu);
        return sg_replay__cu_fail(drv, err, errlen, cr, "cuDeviceGet");
    }
    if (ctx) {
        gpu->ctx = ctx; /* the caller's, used as it is */
    } else {
        cr = drv->cuDevicePrimaryCtxRetain(&gpu->ctx, gpu->dev);
        if (cr != CUDA_SUCCESS) {
            free(gpu);
            return sg_replay__cu_fail(drv, err, errlen, cr, "cuDevicePrimaryCtxRetain");
        }
        gpu->retained = true;
        cr = drv->cuCtxSetCurrent(gpu->ctx);
        if (cr != CUDA_SUCCESS) {
            sg_replay_gpu_close(gpu);
            return sg_replay__cu_fail(drv, err, errlen, cr, "cuCtxSetCurrent");
        }
    }
    *out = gpu;
    return SG_OK;
}

void sg_replay_gpu_close(sg_replay_gpu_t *gpu)
{
    if (!gpu) return;
    if (gpu->retained) gpu->drv->cuDevicePrimaryCtxRelease(gpu->dev);
    free(gpu);
}

int sg_replay_device_check(const sg_graph_t *g, const sg_replay_gpu_t *gpu, bool force, FILE *log,
                           char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = gpu->drv;
    char name[256] = "";
    int major = 0, minor = 0, driver = 0;
    SG_CU_TRY(drv->cuDeviceGetName(name, sizeof name, gpu->dev), "cuDeviceGetName");
    SG_CU_TRY(
        drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, gpu->dev),
        "cuDeviceGetAttribute");
    SG_CU_TRY(
        drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, gpu->dev),
        "cuDeviceGetAttribute");
    SG_CU_TRY(drv->cuDriverGetVersion(&driver), "cuDriverGetVersion");
    const sg_device_t *d = &g->device;
    if (log)
        fprintf(log, "device: %s (sm_%d%d), driver for CUDA %d.%d\n", name, major, minor,
                driver / 1000, driver % 1000 / 10);
    if (!d->name && !d->cc_major) {
        if (log) fputs("warning: the bundle does not say which GPU it was captured on\n", log);
        return SG_OK;
    }
    if (d->cc_major && (d->cc_major != major || d->cc_minor != minor)) {
        if (!force)
            return sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                                   "the bundle was captured on %s (sm_%d%d) and this GPU is %s "
                                   "(sm_%d%d): its code may not run here and its timings do not "
                                   "compare (--force to try anyway)",
                                   d->name ? d->name : "a GPU", d->cc_major, d->cc_minor, name,
                                   major, minor);
        if (log)
            fprintf(log, "warning: captured on sm_%d%d, replaying on sm_%d%d (--force)\n",
                    d->cc_major, d->cc_minor, major, minor);
    }
    /* Another GPU model or driver: results should still match, but the
     * comparison then proves less than the user may think; refuse unless
     * asked (the contract: a clear message and a non-zero exit). */
    if (d->name && strcmp(d->name, name) != 0) {
        if (!force)
            return sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                                   "the bundle was captured on %s and this GPU is %s (--force to "
                                   "replay anyway)",
                                   d->name, name);
        if (log) {
            char was[128]; /* from the bundle: escaped for the terminal */
            sg_text_escape(was, sizeof was, d->name);
            fprintf(log, "warning: captured on %s, replaying on %s (--force)\n", was, name);
        }
    }
    if (d->driver_version && d->driver_version != driver) {
        if (!force)
            return sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                                   "the bundle was captured with a driver for CUDA %d.%d and this "
                                   "one is for CUDA %d.%d (--force to replay anyway)",
                                   d->driver_version / 1000, d->driver_version % 1000 / 10,
                                   driver / 1000, driver % 1000 / 10);
        if (log)
            fprintf(log,
                    "warning: captured with a driver for CUDA %d.%d, this one is for CUDA %d.%d "
                    "(--force): results should match, timings may not\n",
                    d->driver_version / 1000, d->driver_version % 1000 / 10, driver / 1000,
                    driver % 1000 / 10);
    }
    return SG_OK;
}

static int open_steps(sg_replay_t *r, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    int rc;
    if (r->opt.profile) {
        rc = sg_replay__profile_prepare(err, errlen);
        if (rc) return rc;
    }
    SG_CU_TRY(drv->cuStreamCreate(&r->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    double t0 = sg_replay__now_ms();
    rc = sg_replay__place(r, err, errlen);
    r->t.place_ms = sg_replay__now_ms() - t0;
    if (rc) return rc;
    rc = sg_replay__load_code(r, err, errlen);
    if (rc) return rc;
    t0 = sg_replay__now_ms();
    rc = sg_replay__build(r, err, errlen);
    r->t.materialize_ms = sg_replay__now_ms() - t0;
    if (rc) return rc;
    /* An allocation the graph never frees would make the second launch
     * fail; let the driver free it before each relaunch. */
    unsigned long long flags =
        r->unfreed_alloc ? CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH : 0;
    t0 = sg_replay__now_ms();
    SG_CU_TRY(drv->cuGraphInstantiateWithFlags(&r->exec, r->graph, flags), "cuGraphInstantiate");
    r->t.instantiate_ms = sg_replay__now_ms() - t0;
    t0 = sg_replay__now_ms();
    SG_CU_TRY(drv->cuGraphUpload(r->exec, r->stream), "cuGraphUpload");
    SG_CU_TRY(drv->cuStreamSynchronize(r->stream), "cuStreamSynchronize");
    r->t.upload_ms = sg_replay__now_ms() - t0;
    return SG_OK;
}

int sg_replay_open(const char *bundle, const sg_graph_t *g, const sg_replay_gpu_t *gpu,
                   const sg_replay_options_t *opt, sg_replay_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!gpu) return sg_replay__fail(err, errlen, SG_EINVAL, "no GPU opened");
    sg_replay_t *r = calloc(1, sizeof *r);
    if (!r) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    r->g = g;
    r->bundle = strdup(bundle);
    if (opt) r->opt = *opt;
    r->drv = gpu->drv;
    r->device = gpu->device;
    r->dev = gpu->dev;
    r->ctx = gpu->ctx;
    sg_reloc_map_init(&r->map);
    if (!r->bundle) {
        sg_replay_close(r);
        return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    }
    int rc = open_steps(r, err, errlen);
    uint32_t n_influenced = 0;
    if (!rc && r->opt.skip_host_nodes)
        rc = sg_replay_host_influenced(g, &r->influenced, &n_influenced);
    if (rc) {
        sg_replay_close(r);
        return rc;
    }
    *out = r;
    return SG_OK;
}

void sg_replay_close(sg_replay_t *r)
{
    if (!r) return;
    const sg_replay_driver_t *drv = r->drv;
    if (r->stream) drv->cuStreamSynchronize(r->stream);
    /* Allocations the graph leaves behind stay allocated after the
     * executable graph is gone unless freed here. */
    if (r->launched && r->buf_addr && r->buf_freed && r->stream) {
        for (uint32_t b = 0; b < r->g->n_buffers; b++)
            if (r->buf_place[b] == SG_PLACE_GRAPH && r->buf_addr[b] && !r->buf_freed[b])
                drv->cuMemFreeAsync(r->buf_addr[b], r->stream);
        drv->cuStreamSynchronize(r->stream);
    }
    if (r->exec) drv->cuGraphExecDestroy(r->exec);
    if (r->graph) drv->cuGraphDestroy(r->graph);
    for (uint32_t i = 0; i < r->n_children; i++)
        drv->cuGraphDestroy(r->children[i]);
    for (uint32_t i = 0; r->events && i < r->g->n_events; i++)
        if (r->events[i]) drv->cuEventDestroy(r->events[i]);
    for (uint32_t i = 0; i < r->n_own_events; i++)
        drv->cuEventDestroy(r->own_events[i]);
    for (uint32_t i = 0; i < r->n_bench_events; i++)
        drv->cuEventDestroy(r->bench_events[i]);
    for (uint32_t i = 0; r->libs && i < r->g->n_images; i++)
        if (r->libs[i]) drv->cuLibraryUnload(r->libs[i]);
    sg_replay__release_memory(r);
    if (r->stream) drv->cuStreamDestroy(r->stream);
    free(r->children);
    free(r->events);
    free(r->own_events);
    free(r->bench_events);
    free(r->libs);
    free(r->built);
    free(r->buf_addr);
    free(r->buf_place);
    free(r->buf_freed);
    free(r->influenced);
    sg_reloc_map_free(&r->map);
    sg_reloc_report_free(&r->report);
    free(r->bundle);
    free(r);
}

const sg_replay_timings_t *sg_replay_timings(const sg_replay_t *r)
{
    return &r->t;
}

const sg_reloc_report_t *sg_replay_relocations(const sg_replay_t *r)
{
    return &r->report;
}

void sg_replay_placement(const sg_replay_t *r, uint32_t *same, uint32_t *moved, uint32_t *by_graph)
{
    *same = *moved = *by_graph = 0;
    for (uint32_t b = 0; b < r->g->n_buffers; b++) {
        if (r->buf_place[b] == SG_PLACE_SAME) (*same)++;
        if (r->buf_place[b] == SG_PLACE_MOVED) (*moved)++;
        if (r->buf_place[b] == SG_PLACE_GRAPH) (*by_graph)++;
    }
}

static int read_snapshot(sg_replay_t *r, const sg_buffer_t *b, const char *file, void **data,
                         size_t *size, char *err, size_t errlen)
{
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    int rc = r->opt.files ? sg_bundle_load(r->opt.files, file, b->size, data, size, &diag)
                          : sg_bundle_read_blob(r->bundle, file, b->size, data, size, &diag);
    if (rc) {
        char buf[900];
        return sg_replay__fail(err, errlen, rc, "snapshot of %s: %s", b->label,
                               sg_diag_format(&diag, buf, sizeof buf));
    }
    return SG_OK;
}

int sg_replay_restore(sg_replay_t *r, char *err, size_t errlen)
{
    const sg_graph_t *g = r->g;
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        if (!b->before_file) continue;
        if (r->buf_place[i] == SG_PLACE_GRAPH) {
            if (r->opt.log)
                fprintf(r->opt.log,
                        "note: %s is allocated by the graph itself: its before-snapshot is not "
                        "restored (the memory does not exist before the launch)\n",
                        b->label);
            continue;
        }
        if (r->buf_place[i] == SG_PLACE_NONE) continue;
        void *data = NULL;
        size_t size = 0;
        int rc = read_snapshot(r, b, b->before_file, &data, &size, err, errlen);
        if (rc) return rc;
        rc = sg_replay__write_buffer(r, i, data, size, err, errlen);
        free(data);
        if (rc) return rc;
        if (size != b->size && r->opt.log)
            fprintf(r->opt.log,
                    "warning: the before-snapshot of %s holds %zu of its %" PRIu64
                    " bytes: the rest starts zeroed\n",
                    b->label, size, b->size);
    }
    /* cuMemcpyHtoD from pageable memory may return before its DMA reaches
     * the device, and it runs in the legacy stream, which the replay stream
     * (non-blocking) is not ordered after: without this wait a launch could
     * overtake the restore (seen on the H200: one re-captured graph in 50
     * replayed "non-deterministically" under load). */
    const sg_replay_driver_t *drv = r->drv;
    SG_CU_TRY(drv->cuStreamSynchronize(NULL), "waiting for the restored snapshots");
    return SG_OK;
}

int sg_replay_run(sg_replay_t *r, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    CUresult cr = drv->cuGraphLaunch(r->exec, r->stream);
    if (cr == CUDA_SUCCESS) {
        r->launched = true;
        cr = drv->cuStreamSynchronize(r->stream);
    }
    if (cr != CUDA_SUCCESS) {
        uint32_t same, moved, by_graph;
        sg_replay_placement(r, &same, &moved, &by_graph);
        return sg_replay__cu_fail(drv, err, errlen, cr,
                                  moved ? "the replayed graph failed on the GPU (memory was "
                                          "relocated: a pointer the heuristic did not see?)"
                                        : "the replayed graph failed on the GPU");
    }
    return SG_OK;
}

int sg_replay_validate(sg_replay_t *r, const sg_compare_options_t *o, sg_buffer_check_t **out,
                       uint32_t *n_out, char *err, size_t errlen)
{
    const sg_graph_t *g = r->g;
    *out = NULL;
    *n_out = 0;
    sg_buffer_check_t *c = calloc(g->n_buffers + 1, sizeof *c);
    if (!c) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    int rc = SG_OK;
    for (uint32_t i = 0; i < g->n_buffers && rc == SG_OK; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        sg_buffer_check_t *x = &c[i];
        x->buffer = i;
        x->status = SG_CHECK_SKIPPED;
        if (!b->after_file) {
            snprintf(x->note, sizeof x->note, "no after-snapshot%s%s", b->snapshot_note ? ": " : "",
                     b->snapshot_note ? b->snapshot_note : "");
            continue;
        }
        if (r->influenced && r->influenced[i]) {
            snprintf(x->note, sizeof x->note,
                     "may depend on a host callback that --host-nodes skip left out");
            continue;
        }
        if (r->buf_place[i] == SG_PLACE_GRAPH && (r->buf_freed[i] || !r->buf_addr[i])) {
            snprintf(x->note, sizeof x->note, "allocated and freed inside the graph");
            continue;
        }
        if (r->buf_place[i] == SG_PLACE_NONE || b->size == 0) {
            snprintf(x->note, sizeof x->note, "empty");
            continue;
        }
        void *want = NULL;
        size_t size = 0;
        rc = read_snapshot(r, b, b->after_file, &want, &size, err, errlen);
        if (rc) break;
        void *got = malloc(size ? size : 1);
        if (!got) {
            free(want);
            rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
            break;
        }
        rc = sg_replay__read_buffer(r, i, got, size, err, errlen);
        if (rc) {
            free(want);
            free(got);
            break;
        }
        sg_compare_buffers(got, want, size, o, &x->cmp);
        x->status = x->cmp.mismatches ? SG_CHECK_MISMATCH : SG_CHECK_MATCH;
        if (size != b->size)
            snprintf(x->note, sizeof x->note, "the after-snapshot holds %zu of %" PRIu64 " bytes",
                     size, b->size);
        free(want);
        free(got);
    }
    if (rc) {
        free(c);
        return rc;
    }
    *out = c;
    *n_out = g->n_buffers;
    return SG_OK;
}

/* ---- timing ------------------------------------------------------------------------ */

static int bench_events(sg_replay_t *r, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    if (r->n_bench_events) return SG_OK;
    r->bench_events = calloc(2 * SG_BENCH_CHUNK, sizeof *r->bench_events);
    if (!r->bench_events) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    for (; r->n_bench_events < 2 * SG_BENCH_CHUNK; r->n_bench_events++)
        SG_CU_TRY(drv->cuEventCreate(&r->bench_events[r->n_bench_events], CU_EVENT_DEFAULT),
                  "cuEventCreate");
    return SG_OK;
}

static int launches(sg_replay_t *r, uint32_t n, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    for (uint32_t i = 0; i < n; i++)
        SG_CU_TRY(drv->cuGraphLaunch(r->exec, r->stream), "cuGraphLaunch");
    if (n) r->launched = true;
    SG_CU_TRY(drv->cuStreamSynchronize(r->stream), "warm-up launches");
    return SG_OK;
}

/* Up to SG_BENCH_CHUNK launches, each between its own pair of events. */
static int timed_chunk(sg_replay_t *r, uint32_t n, double *out_us, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    CUevent *ev = r->bench_events;
    for (uint32_t i = 0; i < n; i++) {
        SG_CU_TRY(drv->cuEventRecord(ev[2 * i], r->stream), "cuEventRecord");
        SG_CU_TRY(drv->cuGraphLaunch(r->exec, r->stream), "cuGraphLaunch");
        SG_CU_TRY(drv->cuEventRecord(ev[2 * i + 1], r->stream), "cuEventRecord");
    }
    r->launched = true;
    SG_CU_TRY(drv->cuStreamSynchronize(r->stream), "timed launches");
    for (uint32_t i = 0; i < n; i++) {
        float ms = 0;
        SG_CU_TRY(drv->cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cuEventElapsedTime");
        out_us[i] = ms * 1000.0;
    }
    return SG_OK;
}

/* Both replays (b may be NULL) run n timed launches, in alternating chunks
 * so that clocks, temperature and whatever else drifts is shared. */
static int bench_impl(sg_replay_t *a, sg_replay_t *b, uint32_t n, uint32_t warmup, double *median_a,
                      double *median_b, double *samples_a, char *err, size_t errlen)
{
    sg_replay_t *rs[2] = {a, b};
    double *samples[2] = {NULL, NULL};
    int rc = SG_OK;
    if (n == 0) return sg_replay__fail(err, errlen, SG_EINVAL, "no launches to time");
    for (int k = 0; k < 2 && rc == SG_OK; k++) {
        if (!rs[k]) continue;
        samples[k] = malloc(n * sizeof *samples[k]);
        if (!samples[k]) rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        if (!rc) rc = bench_events(rs[k], err, errlen);
        if (!rc) rc = launches(rs[k], warmup, err, errlen);
    }
    for (uint32_t done = 0; done < n && rc == SG_OK;) {
        uint32_t m = n - done < SG_BENCH_CHUNK ? n - done : SG_BENCH_CHUNK;
        for (int k = 0; k < 2 && rc == SG_OK; k++)
            if (rs[k]) rc = timed_chunk(rs[k], m, samples[k] + done, err, errlen);
        done += m;
    }
    if (rc == SG_OK) {
        if (samples_a) memcpy(samples_a, samples[0], n * sizeof *samples_a);
        *median_a = sg_replay_median(samples[0], n);
        if (b && median_b) *median_b = sg_replay_median(samples[1], n);
    }
    free(samples[0]);
    free(samples[1]);
    return rc;
}

int sg_replay_bench(sg_replay_t *r, uint32_t n, uint32_t warmup, double *median_us,
                    double *samples_us, char *err, size_t errlen)
{
    return bench_impl(r, NULL, n, warmup, median_us, NULL, samples_us, err, errlen);
}

int sg_replay_bench_pair(sg_replay_t *a, sg_replay_t *b, uint32_t n, uint32_t warmup,
                         double *median_a_us, double *median_b_us, char *err, size_t errlen)
{
    if (!b) return sg_replay__fail(err, errlen, SG_EINVAL, "bench_pair needs two replays");
    return bench_impl(a, b, n, warmup, median_a_us, median_b_us, NULL, err, errlen);
}
