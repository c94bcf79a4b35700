/* check.c: the shadow check (opt.h): at one launch of the program's
 * executable graph E0, run the optimized E1 on the same inputs and compare
 * what the two leave in memory, bit for bit, before E1 is ever trusted.
 *
 *   save every span            (device: copies to the host on the stream;
 *                               host memory: read by the CPU)
 *   E1, between two events     its results are copied to the host
 *   restore every span         so E0 starts from what the program had
 *   E0, between two events     the program's launch: the results it sees
 *   compare E0's results with E1's, chunk by chunk
 *
 * E0 runs last, so the program always gets the original graph's results
 * of the checked launch, whatever E1 did, and the restore writes only the
 * bytes E1 changed. The host waits where it reads what the GPU left: for
 * the context before the save (nothing enqueued before may still run),
 * for the stream after E1 (twice: its results, then their copies), after
 * E0, and once per chunk of the comparison; everything else is ordered by
 * the stream, and nothing here runs at later launches. A failure before E1 runs leaves
 * everything as it was (the caller then launches E0 itself); one after it
 * still restores before E0 runs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opt.h"

#define CHUNK (64u << 20) /* bytes read back at a time for the comparison */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
    const sg_opt_driver_t *d;
    CUstream s;
    sg_opt_check_t *res;
} ctx_t;

static bool cu(ctx_t *c, CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return true;
    if (!c->res->why[0]) sg_opt_cu_fail(c->d, r, what, c->res->why, sizeof c->res->why);
    return false;
}

/* Device (or pinned) memory to the host and back, on the stream. */
static bool to_host(ctx_t *c, const sg_opt_span_t *sp, uint64_t off, uint64_t len, uint8_t *dst)
{
    if (sp->pageable) {
        memcpy(dst, (const void *)(uintptr_t)(sp->addr + off), len);
        return true;
    }
    return cu(c, c->d->cuMemcpyDtoHAsync_v2(dst, sp->addr + off, len, c->s),
              "copying a buffer out");
}

static bool from_host(ctx_t *c, const sg_opt_span_t *sp, uint64_t off, uint64_t len,
                      const uint8_t *src)
{
    if (sp->pageable) {
        memcpy((void *)(uintptr_t)(sp->addr + off), src, len);
        return true;
    }
    return cu(c, c->d->cuMemcpyHtoDAsync_v2(sp->addr + off, src, len, c->s), "restoring a buffer");
}

static bool sync(ctx_t *c)
{
    return cu(c, c->d->r.cuStreamSynchronize(c->s), "cuStreamSynchronize");
}

/* Nothing the program enqueued before is still running when the spans are
 * read (work on other streams may write other parts of the same
 * allocations), and pageable host memory is read by the CPU. Device copies
 * are ordered by the stream; the host reads them after a later sync. */
static bool save(ctx_t *c, const sg_opt_span_t *spans, uint32_t n, uint8_t *buf)
{
    if (!cu(c, c->d->cuCtxSynchronize(), "cuCtxSynchronize")) return false;
    uint64_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!to_host(c, &spans[i], 0, spans[i].size, buf + off)) return false;
        off += spans[i].size;
    }
    return true;
}

#define BLOCK 4096u /* granularity of the restore */

/* Put back what E1 changed: the runs of blocks where E1's results differ
 * from the saved bytes (after: E1's results), or every byte when E1's
 * results could not be read (after NULL). Only those, so bytes of the same
 * allocations that the graph does not touch are never written: the program
 * may have work of its own there. Every span is restored even after a
 * failure; the copies are ordered before E0 by the stream. */
static bool restore(ctx_t *c, const sg_opt_span_t *spans, uint32_t n, const uint8_t *saved,
                    const uint8_t *after)
{
    uint64_t off = 0;
    bool ok = true;
    for (uint32_t i = 0; i < n; off += spans[i].size, i++) {
        const sg_opt_span_t *sp = &spans[i];
        if (!after) {
            ok = from_host(c, sp, 0, sp->size, saved + off) && ok;
            continue;
        }
        uint64_t at = 0;
        while (at < sp->size) {
            uint64_t len = sp->size - at < BLOCK ? sp->size - at : BLOCK;
            if (!memcmp(saved + off + at, after + off + at, len)) {
                at += len;
                continue;
            }
            uint64_t start = at;
            while (at < sp->size) {
                len = sp->size - at < BLOCK ? sp->size - at : BLOCK;
                if (!memcmp(saved + off + at, after + off + at, len)) break;
                at += len;
            }
            ok = from_host(c, sp, start, at - start, saved + off + start) && ok;
        }
    }
    return ok;
}

/* The first difference between E0's results (in memory now) and E1's. */
static bool compare(ctx_t *c, const sg_graph_t *g, const sg_opt_span_t *spans, uint32_t n,
                    const uint8_t *e1, uint8_t *scratch)
{
    uint64_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_opt_span_t *sp = &spans[i];
        for (uint64_t at = 0; at < sp->size; at += CHUNK) {
            uint64_t len = sp->size - at < CHUNK ? sp->size - at : CHUNK;
            if (!to_host(c, sp, at, len, scratch) || !sync(c)) return false;
            const uint8_t *want = e1 + off + at;
            if (memcmp(scratch, want, len) != 0) {
                uint64_t k = 0;
                while (k < len && scratch[k] == want[k])
                    k++;
                const sg_buffer_t *b = sg_graph_buffer(g, sp->buffer);
                snprintf(c->res->why, sizeof c->res->why,
                         "E1's result differs from the original's: %s byte %" PRIu64
                         " is 0x%02x, the original left 0x%02x",
                         b ? b->label : "a buffer", at + k, want[k], scratch[k]);
                c->res->match = false;
                return true;
            }
            c->res->bytes += len;
        }
        off += sp->size;
    }
    c->res->match = true;
    return true;
}

static bool timed_launch(ctx_t *c, sg_opt_launch_fn launch, CUgraphExec e, CUevent a, CUevent b,
                         CUresult *result)
{
    const sg_replay_driver_t *r = &c->d->r;
    bool timed = a && b && r->cuEventRecord(a, c->s) == CUDA_SUCCESS;
    *result = launch(e, c->s);
    if (timed) r->cuEventRecord(b, c->s);
    return *result == CUDA_SUCCESS;
}

static float elapsed(const sg_replay_driver_t *r, CUevent a, CUevent b)
{
    float ms = -1.0f;
    if (!a || !b || r->cuEventSynchronize(b) != CUDA_SUCCESS ||
        r->cuEventElapsedTime(&ms, a, b) != CUDA_SUCCESS)
        return -1.0f;
    return ms;
}

void sg_opt_shadow_check(const sg_opt_driver_t *d, CUstream stream, sg_opt_launch_fn launch,
                         CUgraphExec e0, CUgraphExec e1, const sg_graph_t *g,
                         const sg_opt_span_t *spans, uint32_t n_spans, sg_opt_check_t *res)
{
    memset(res, 0, sizeof *res);
    res->e1_ms = res->e0_ms = -1.0f;
    double t0 = now_ms();
    ctx_t c = {d, stream, res};
    uint64_t total = 0, largest = 1;
    for (uint32_t i = 0; i < n_spans; i++) {
        total += spans[i].size;
        if (spans[i].size > largest) largest = spans[i].size;
    }
    uint8_t *saved = malloc(total ? total : 1), *after_e1 = malloc(total ? total : 1);
    uint8_t *scratch = malloc(largest < CHUNK ? largest : CHUNK);
    CUevent ev[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++)
        if (d->r.cuEventCreate(&ev[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) ev[i] = NULL;
    if (!saved || !after_e1 || !scratch) {
        snprintf(res->why, sizeof res->why, "out of memory for %" PRIu64 " bytes of copies",
                 2 * total);
        goto out;
    }
    if (!save(&c, spans, n_spans, saved)) goto out; /* nothing changed yet */

    CUresult r1 = CUDA_SUCCESS;
    bool e1_ok = timed_launch(&c, launch, e1, ev[0], ev[1], &r1);
    if (!e1_ok) cu(&c, r1, "launching the optimized graph");
    /* E1 done (pageable host memory is read by the CPU next) */
    bool kept = e1_ok && sync(&c);
    uint64_t off = 0;
    for (uint32_t i = 0; kept && i < n_spans; i++) {
        kept = to_host(&c, &spans[i], 0, spans[i].size, after_e1 + off);
        off += spans[i].size;
    }
    /* the restore compares E1's results with the saved bytes on the host */
    kept = kept && sync(&c);
    res->e1_ms = e1_ok ? elapsed(&d->r, ev[0], ev[1]) : -1.0f;
    if (!restore(&c, spans, n_spans, saved, kept ? after_e1 : NULL)) {
        /* The inputs may not be what the program left: E0 runs on them
         * anyway (the program asked for it), and the log says so. */
        if (!res->why[0]) snprintf(res->why, sizeof res->why, "restoring the inputs failed");
    }

    res->e0_launched = true;
    bool e0_ok = timed_launch(&c, launch, e0, ev[2], ev[3], &res->e0_result);
    if (!e0_ok) {
        if (!res->why[0])
            sg_opt_cu_fail(d, res->e0_result, "the original graph's launch", res->why,
                           sizeof res->why);
        goto out;
    }
    if (!kept || !sync(&c)) goto out;
    res->e0_ms = elapsed(&d->r, ev[2], ev[3]);
    if (!res->why[0]) compare(&c, g, spans, n_spans, after_e1, scratch);
out:
    for (int i = 0; i < 4; i++)
        if (ev[i]) d->r.cuEventDestroy(ev[i]);
    free(saved);
    free(after_e1);
    free(scratch);
    if (res->why[0]) res->match = false;
    res->check_ms = now_ms() - t0;
}
