/* module.c: SGCAP_MODE=optimize inside libsgcap.so: the optimizer as a
 * module of the shim (optimize.h), on the intercepted graph calls.
 *
 *   instantiate (AFTER, every variant)  the program got E0. Model (capture),
 *        refusals (decide.c), passes on a clone (pipeline.c); nothing
 *        changed: done, no E1 (the program's launches cost one lookup);
 *        else G1 (build.c) and E1 with the program's flags.
 *   launch (BEFORE)  the Nth launch (SGCAP_OPTIMIZE_CHECK) is the shadow
 *        check (check.c), which runs E1 and then E0 in place of the
 *        program's call; E1 passed: later launches run E1 instead of E0
 *        (the call is skipped with E1's result). Any doubt: E0 for good.
 *   exec updates (AFTER)  applied to E0 by the program; carried over to E1
 *        when the node survives unchanged and the new parameters keep to
 *        the buffers E1 was checked with, else E0 for good.
 *   upload (BEFORE)  uploads the exec that will run; destroy (BEFORE)
 *        destroys E1 and G1 with E0.
 *
 * A launch into a stream that is being captured is left alone: the
 * program's graph becomes a child node of the new graph, as it asked. The
 * program never sees E1's handle, never gets a result E1 produced before
 * the check passed, and every failure here leaves it with E0 (logged).
 *
 * The state it shares with update.c (exec updates) and state.c (records,
 * entries) is state.h. Locks: sg_opt.lock (the exec table and the
 * summary) is taken after none of capture's and held across cheap driver
 * calls only; a shadow check and a swapped launch run outside it, with
 * their exec marked busy or in flight. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "code/fatbin.h"
#include "code/nvlib_lookup.h"
#include "optimize.h"
#include "state.h"

/* ---- instantiate ---------------------------------------------------------------------- */

static bool device_updatable(const sg_graph_t *g, const uint64_t *orig, uint32_t n, char *why,
                             size_t len)
{
    if (!sg_opt.drv.cuGraphKernelNodeGetAttribute) return false;
    for (uint32_t id = 0; id < n && id < g->n_nodes; id++) {
        const sg_node_t *x = sg_graph_node(g, id);
        if (!x || x->type != SG_NODE_KERNEL || !orig[id]) continue;
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        if (sg_opt.drv.cuGraphKernelNodeGetAttribute(
                (CUgraphNode)(uintptr_t)orig[id], CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
                &v) == CUDA_SUCCESS &&
            v.deviceUpdatableKernelNode.deviceUpdatable) {
            snprintf(why, len,
                     "kernel node n%u is device-updatable: the device changes it in E0 only", id);
            return true;
        }
    }
    return false;
}

/* Under lock. */
static const verdict_t *verdict_find(uint64_t digest)
{
    verdict_t *v = NULL;
    if (digest) HASH_FIND(hh, sg_opt.verdicts, &digest, sizeof digest, v);
    return v;
}

static void verdict_keep(uint64_t digest, rec_state_t st, uint32_t nodes, const char *why)
{
    if (!digest || verdict_find(digest)) return;
    if (sg_opt.n_verdicts >= MAX_VERDICTS) {
        verdict_t *v, *tmp;
        HASH_ITER(hh, sg_opt.verdicts, v, tmp)
        {
            HASH_DEL(sg_opt.verdicts, v);
            free(v);
        }
        sg_opt.n_verdicts = 0;
    }
    verdict_t *v = calloc(1, sizeof *v);
    if (!v) return;
    v->digest = digest;
    v->state = st;
    v->nodes = nodes;
    snprintf(v->why, sizeof v->why, "%s", why);
    HASH_ADD(hh, sg_opt.verdicts, digest, sizeof v->digest, v);
    if (!v->hh.tbl) {
        free(v);
        return;
    }
    sg_opt.n_verdicts++;
}

static void instantiated(CUgraphExec e0, CUgraph graph, unsigned long long flags, CUstream upload)
{
    if (!e0 || !graph || !sg_opt_driver_ready()) return;
    double t0 = sg_opt_now_ms();
    uint32_t rec = sg_opt_record_new(e0, 0);
    char why[240] = "";
    if (!sg_inject_can_replace_calls()) {
        /* A launch could not be replaced by E1's: the program's own call
         * would run as well. */
        sg_opt_lock_settle(
            rec, REC_REFUSED,
            "CUDA_INJECTION64_PATH alone: sgcap sees the calls through CUPTI and cannot "
            "replace the program's launches (preload libsgcap.so to optimize)");
        return;
    }
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) {
        sg_opt_lock_settle(rec, REC_REFUSED,
                           "device-launch instantiation: the device launches the original itself");
        return;
    }
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    /* Seen before (and not forced, which always builds): the same answer. */
    uint64_t digest = 0;
    if (sg_capture_raw_digest(graph, &digest) != SG_OK) digest = 0;
    pthread_mutex_lock(&sg_opt.lock);
    const verdict_t *seen = sg_opt.cfg.force ? NULL : verdict_find(digest);
    if (seen) {
        record_t *sr = sg_opt_record(rec);
        if (sr) {
            sr->nodes = seen->nodes;
            sr->build_ms = sg_opt_now_ms() - t0;
        }
        sg_opt.by_digest++;
        sg_opt_settle(rec, sg_opt.seq, seen->state, seen->why);
    }
    pthread_mutex_unlock(&sg_opt.lock);
    if (seen) {
        sg_inject_relaxed_end(&rx);
        return;
    }
    uint64_t *orig = NULL;
    uint32_t n_orig = 0, unreadable = 0;
    sg_graph_t *model = NULL, *rw = NULL;
    exec_entry_t *e = NULL;
    sg_opt_built_t built;
    memset(&built, 0, sizeof built);
    CUgraphExec e1 = NULL;
    rec_state_t verdict = REC_REFUSED;
    bool cacheable = false; /* a refusal decided by the graph alone */
    sg_opt_rewrite_stats_t st;
    memset(&st, 0, sizeof st);
    sg_rewrite_files_t files = {0}; /* the fused kernels' code, until G1 is built */
    char cwhy[200] = "";
    model = sg_capture_model(graph, &orig, &n_orig, &unreadable, cwhy, sizeof cwhy);
    if (!model) {
        snprintf(why, sizeof why, "not recorded: the capture could not record the graph (%s)",
                 cwhy);
        goto out;
    }
    pthread_mutex_lock(&sg_opt.lock);
    if (sg_opt_record(rec)) sg_opt_record(rec)->nodes = sg_graph_node_count(model);
    pthread_mutex_unlock(&sg_opt.lock);
    cacheable = true;
    if (unreadable) {
        snprintf(why, sizeof why,
                 "unreadable nodes: the driver would not give the parameters of %u nodes",
                 unreadable);
        goto out;
    }
    if (sg_opt_refuse(model, why, sizeof why) ||
        device_updatable(model, orig, n_orig, why, sizeof why))
        goto out;
    cacheable = false;
    rw = sg_graph_clone(model);
    if (!rw) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    if (sg_opt_pipeline(rw, sg_code_arch_of(model->device.cc_major, model->device.cc_minor),
                        sg_opt_kernel_ptx, &files, &st, why, sizeof why) != SG_OK)
        goto out;
    static atomic_bool told_fuse_spent;
    if (st.fuse_skipped && !atomic_exchange(&told_fuse_spent, true)) {
        sg_opt_log("optimize: in-app fusion is off from here on: %s (SGCAP_OPTIMIZE_FUSE_MS=%u); "
                   "later graphs get the ordering passes only",
                   sg_opt.cfg.fuse_ms ? "the process's NVRTC time for fusion is spent"
                                      : "turned off",
                   sg_opt.cfg.fuse_ms);
    }
    cacheable = true;
    if (sg_opt_fusion_blind(model, rw, why, sizeof why)) goto out;
    cacheable = false;
    bool changed = true;
    char what[200] = "";
    if (sg_opt_changed(model, rw, &changed, what, sizeof what) != SG_OK) {
        snprintf(why, sizeof why, "comparing the rewritten graph failed");
        goto out;
    }
    if (!changed && !sg_opt.cfg.force) {
        verdict = REC_UNCHANGED;
        why[0] = '\0';
        goto out;
    }
    CUcontext ctx = NULL;
    CUdevice dev = 0;
    CUresult cr = sg_opt.drv.cuCtxGetCurrent(&ctx);
    if (cr == CUDA_SUCCESS) cr = sg_opt.drv.cuCtxGetDevice(&dev);
    if (cr != CUDA_SUCCESS) {
        sg_opt_cu_fail(&sg_opt.drv, cr, "the program's context", why, sizeof why);
        goto out;
    }
    char bwhy[200] = "";
    if (sg_opt_build(&sg_opt.drv, ctx, (int)dev, rw, &files, orig, n_orig, sg_opt.cfg.plant,
                     &built, bwhy, sizeof bwhy) != SG_OK) {
        snprintf(why, sizeof why, "building the optimized graph failed: %s", bwhy);
        goto out;
    }
    if (sg_opt.cfg.plant && !built.planted) {
        snprintf(why, sizeof why, "SGCAP_OPTIMIZE_TEST_PLANT: %s", built.plant_note);
        goto out;
    }
    cr = sg_opt.drv.r.cuGraphInstantiateWithFlags(
        &e1, built.graph, flags & ~(unsigned long long)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    if (cr != CUDA_SUCCESS) {
        e1 = NULL;
        sg_opt_cu_fail(&sg_opt.drv, cr, "instantiating the optimized graph", why, sizeof why);
        goto out;
    }
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) &&
        (cr = sg_opt.drv.r.cuGraphUpload(e1, upload)) != CUDA_SUCCESS) {
        sg_opt_cu_fail(&sg_opt.drv, cr, "uploading the optimized graph", why, sizeof why);
        goto out;
    }
    e = calloc(1, sizeof *e);
    if (!e || sg_opt_map_nodes(e, orig, n_orig) != SG_OK ||
        sg_opt_shadow_set(model, &e->spans, &e->n_spans, &e->span_bytes) != SG_OK) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    e->e0 = (uint64_t)(uintptr_t)e0;
    e->e1 = e1;
    e->built = built;
    e->model = model;
    e->rewritten = rw;
    e->rec = rec;
    e1 = NULL;
    model = rw = NULL;
    memset(&built, 0, sizeof built);
    verdict = REC_PENDING;
    snprintf(why, sizeof why, "%s%s%s", changed ? what : "the passes changed nothing (forced)",
             e->built.planted ? "; planted " : "", e->built.planted ? e->built.plant_note : "");
out:
    if (e1) sg_opt.drv.r.cuGraphExecDestroy(e1);
    sg_opt_built_free(&sg_opt.drv, &built);
    sg_rewrite_files_free(&files);
    sg_inject_relaxed_end(&rx);
    pthread_mutex_lock(&sg_opt.lock);
    record_t *r = sg_opt_record(rec);
    if (r) {
        r->fused = st.fused_chains;
        snprintf(r->chains, sizeof r->chains, "%s", st.chains);
        r->build_ms = sg_opt_now_ms() - t0;
    }
    if (verdict == REC_PENDING) {
        exec_entry_t *old = sg_opt_find(e0); /* a stale entry (an exec we missed the destroy of) */
        if (old) {
            HASH_DEL(sg_opt.execs, old);
            sg_opt_entry_free(old);
            atomic_fetch_sub(&sg_opt.tracked, 1);
        }
        HASH_ADD(hh, sg_opt.execs, e0, sizeof e->e0, e);
        if (!e->hh.tbl) {
            verdict = REC_REFUSED;
            snprintf(why, sizeof why, "out of memory");
        } else {
            atomic_fetch_add(&sg_opt.tracked, 1);
            sg_opt.by_state[REC_PENDING]++; /* until its check settles it */
            e->pending = true;
            if (r) {
                snprintf(r->why, sizeof r->why, "%s", why);
                r->counted = true;
            }
            if ((r ? r->seq : sg_opt.seq) <= LOGGED_GRAPHS)
                sg_opt_log("optimize: graph %u (exec %p): optimized (%s), %s",
                           r ? r->seq : sg_opt.seq, (void *)e0, why,
                           sg_opt.cfg.check_launch ? "shadow check at the launch set by "
                                                     "SGCAP_OPTIMIZE_CHECK (default 1)"
                                                   : "shadow check at every launch");
            e = NULL;
        }
    }
    if (verdict != REC_PENDING) {
        sg_opt_settle(rec, sg_opt.seq, verdict, why);
        /* What depends on the graph alone is kept for its digest; a failure
         * to build or instantiate E1 may not repeat. */
        if (verdict == REC_UNCHANGED || (verdict == REC_REFUSED && cacheable))
            verdict_keep(digest, verdict, r ? r->nodes : 0, why);
    }
    pthread_mutex_unlock(&sg_opt.lock);
    if (e) sg_opt_entry_free(e);
    sg_graph_destroy(model);
    sg_graph_destroy(rw);
    free(orig);
}

/* ---- launch and upload ------------------------------------------------------------------ */

static bool capturing(CUstream s)
{
    if (sg_inject_active_captures() == 0) return false;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return sg_inject_capture_status(s, &st, NULL) != CUDA_SUCCESS ||
           st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static void launch_before(sg_call_t *call)
{
    sg_args_cuGraphLaunch_t *a = SG_CALL_ARGS(call, cuGraphLaunch);
    pthread_mutex_lock(&sg_opt.lock);
    exec_entry_t *e = sg_opt_find(a->hGraph);
    if (!e || e->state == EX_ORIGINAL || e->busy || capturing(call->stream)) {
        pthread_mutex_unlock(&sg_opt.lock);
        return;
    }
    e->launches++;
    if (e->state == EX_SWAPPED) {
        /* Outside the lock: a launch may block on a full queue. */
        CUgraphExec e1 = e->e1;
        e->inflight++;
        pthread_mutex_unlock(&sg_opt.lock);
        CUresult r = sg_opt.drv.r.cuGraphLaunch(e1, call->stream);
        pthread_mutex_lock(&sg_opt.lock);
        e->inflight--;
        if (r == CUDA_SUCCESS) {
            call->skip = 1;
            call->result = r;
        } else {
            char why[200];
            sg_opt_cu_fail(&sg_opt.drv, r, "launching the optimized graph", why, sizeof why);
            sg_opt_fall_back(e, why); /* the program's call launches E0 */
        }
        bool gone = e->destroyed && !e->busy && !e->inflight;
        pthread_mutex_unlock(&sg_opt.lock);
        if (gone) sg_opt_entry_free(e); /* another thread destroyed E0 meanwhile */
        return;
    }
    /* The Nth launch, or the first after it that finds no stream capture
     * in the process: the check synchronizes the context, which must not
     * meet another thread's capture. */
    bool check = sg_opt.cfg.check_launch == 0 || e->launches >= sg_opt.cfg.check_launch;
    if (!check || sg_inject_active_captures() > 0) {
        pthread_mutex_unlock(&sg_opt.lock);
        return;
    }
    if (e->span_bytes > sg_opt.cfg.shadow_max_bytes) {
        char why[200];
        snprintf(why, sizeof why,
                 "shadow set over SGCAP_SHADOW_MAX_BYTES=%" PRIu64 ": the check would copy %" PRIu64
                 " bytes",
                 sg_opt.cfg.shadow_max_bytes, e->span_bytes);
        sg_opt_fall_back(e, why);
        pthread_mutex_unlock(&sg_opt.lock);
        return;
    }
    e->busy = true;
    CUgraphExec e1 = e->e1;
    uint32_t launch = e->launches;
    pthread_mutex_unlock(&sg_opt.lock);

    sg_opt_check_t res;
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    sg_opt_shadow_check(&sg_opt.drv, call->stream, sg_opt.drv.r.cuGraphLaunch, a->hGraph, e1,
                        e->model, e->spans, e->n_spans, &res);
    sg_inject_relaxed_end(&rx);

    pthread_mutex_lock(&sg_opt.lock);
    e->busy = false;
    if (e->destroyed) { /* another thread destroyed E0 meanwhile */
        bool gone = !e->inflight;
        pthread_mutex_unlock(&sg_opt.lock);
        if (res.e0_launched) {
            call->skip = 1;
            call->result = res.e0_result;
        }
        if (gone) sg_opt_entry_free(e);
        return;
    }
    if (res.e0_launched) {
        call->skip = 1;
        call->result = res.e0_result;
    }
    record_t *r = sg_opt_record(e->rec);
    if (r) {
        r->checks++;
        r->check_ms += res.check_ms;
        r->e1_ms = res.e1_ms;
        r->e0_ms = res.e0_ms;
        if (!r->checked_at) r->checked_at = launch;
    }
    if (!res.match) {
        sg_opt_fall_back(e, res.why);
    } else if (sg_opt.cfg.check_launch != 0 || (r && r->checks == 1)) {
        /* SGCAP_OPTIMIZE_CHECK=all: every launch is checked (and the
         * program sees E0's results); counted as swapped while all pass. */
        if (sg_opt.cfg.check_launch != 0) e->state = EX_SWAPPED;
        char why[sizeof r->why];
        snprintf(why, sizeof why, "%s", r ? r->why : "");
        sg_opt_settle_exec(e, REC_SWAPPED, why);
    }
    pthread_mutex_unlock(&sg_opt.lock);
}

static void upload_before(sg_call_t *call)
{
    sg_args_cuGraphUpload_t *a = SG_CALL_ARGS(call, cuGraphUpload);
    pthread_mutex_lock(&sg_opt.lock);
    exec_entry_t *e = sg_opt_find(a->hGraph);
    if (e && e->e1 && e->state != EX_ORIGINAL && !e->busy) {
        CUresult r = sg_opt.drv.r.cuGraphUpload(e->e1, call->stream);
        /* Swapped: only E1 will run. Before its check both will: the
         * program's own upload of E0 goes ahead too. */
        if (e->state == EX_SWAPPED && r == CUDA_SUCCESS) {
            call->skip = 1;
            call->result = r;
        }
    }
    pthread_mutex_unlock(&sg_opt.lock);
}

static void destroy_before(sg_call_t *call)
{
    CUgraphExec e0 = SG_CALL_ARGS(call, cuGraphExecDestroy)->hGraphExec;
    pthread_mutex_lock(&sg_opt.lock);
    exec_entry_t *e = sg_opt_find(e0);
    if (e) {
        HASH_DEL(sg_opt.execs, e);
        atomic_fetch_sub(&sg_opt.tracked, 1);
        if (e->busy || e->inflight) e->destroyed = true; /* the last user frees it */
    }
    bool later = e && e->destroyed;
    pthread_mutex_unlock(&sg_opt.lock);
    if (!e || later) return;
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    sg_opt_entry_free(e); /* E1 and G1 go with E0 */
    sg_inject_relaxed_end(&rx);
}

/* ---- the observer -------------------------------------------------------------------------- */

static void on_graph(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase == SG_PHASE_BEFORE) {
        if (atomic_load_explicit(&sg_opt.tracked, memory_order_relaxed) == 0) return;
        switch (c->proto) {
        case SG_FN_cuGraphLaunch:
            launch_before(c);
            break;
        case SG_FN_cuGraphUpload:
            upload_before(c);
            break;
        case SG_FN_cuGraphExecDestroy:
            destroy_before(c);
            break;
        default:
            break;
        }
        return;
    }
    switch (c->proto) {
    case SG_FN_cuGraphInstantiate:
    case SG_FN_cuGraphInstantiate_v2: {
        sg_args_cuGraphInstantiate_t *a = SG_CALL_ARGS(c, cuGraphInstantiate);
        if (c->result == CUDA_SUCCESS && a->phGraphExec)
            instantiated(*a->phGraphExec, a->hGraph, 0, NULL);
        break;
    }
    case SG_FN_cuGraphInstantiateWithFlags: {
        sg_args_cuGraphInstantiateWithFlags_t *a = SG_CALL_ARGS(c, cuGraphInstantiateWithFlags);
        if (c->result == CUDA_SUCCESS && a->phGraphExec)
            instantiated(*a->phGraphExec, a->hGraph, a->flags, NULL);
        break;
    }
    case SG_FN_cuGraphInstantiateWithParams: {
        sg_args_cuGraphInstantiateWithParams_t *a = SG_CALL_ARGS(c, cuGraphInstantiateWithParams);
        if (c->result == CUDA_SUCCESS && a->phGraphExec && a->instantiateParams)
            instantiated(*a->phGraphExec, a->hGraph, a->instantiateParams->flags,
                         a->instantiateParams->hUploadStream);
        break;
    }
    default:
        break;
    }
    if (atomic_load_explicit(&sg_opt.tracked, memory_order_relaxed) == 0) return;
    pthread_mutex_lock(&sg_opt.lock);
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    switch (c->proto) {
    case SG_FN_cuGraphExecUpdate:
        sg_opt_exec_updated(SG_CALL_ARGS(c, cuGraphExecUpdate)->hGraphExec,
                            SG_CALL_ARGS(c, cuGraphExecUpdate)->hGraph, c->result);
        break;
    case SG_FN_cuGraphExecUpdate_v2:
        sg_opt_exec_updated(SG_CALL_ARGS(c, cuGraphExecUpdate_v2)->hGraphExec,
                            SG_CALL_ARGS(c, cuGraphExecUpdate_v2)->hGraph, c->result);
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
        /* A failed call left E0 as it was: nothing to follow. */
        if (c->result == CUDA_SUCCESS) sg_opt_exec_set(c);
        break;
    default:
        break;
    }
    sg_inject_relaxed_end(&rx);
    pthread_mutex_unlock(&sg_opt.lock);
}

static void atfork_child(void)
{
    /* Executable graphs and the driver's state do not survive fork. */
    pthread_mutex_init(&sg_opt.lock, NULL);
    exec_entry_t *e, *tmp;
    HASH_ITER(hh, sg_opt.execs, e, tmp)
    {
        HASH_DEL(sg_opt.execs, e);
        sg_graph_destroy(e->model);
        sg_graph_destroy(e->rewritten);
        free(e->spans);
        free(e); /* its handles belong to the parent's driver */
    }
    atomic_store(&sg_opt.tracked, 0);
    sg_opt.drv_state = 0;
    sg_opt.n_records = 0;
    sg_opt.seq = 0;
    sg_opt.used = false;
    memset(sg_opt.by_state, 0, sizeof sg_opt.by_state);
    memset(&sg_opt.reasons, 0, sizeof sg_opt.reasons);
    sg_opt.translated = sg_opt.updates_refused = 0;
}

static const sg_observer_t observer = {
    .name = "optimize",
    .on = {[SG_FAMILY_GRAPH] = on_graph},
};

static int start(void)
{
    if (sg_inject_config()->mode != SG_MODE_OPTIMIZE) return SG_OK;
    /* the fuser's NVRTC (code/nvlib.h) is looked up with the real dlsym:
     * never the shim's hooks of NVRTC */
    sg_nvlib_use_dlsym(sg_inject_real_dlsym);
    char warn[300];
    sg_opt_config_read(&sg_opt.cfg, warn, sizeof warn);
    sg_opt_pipeline_set_fuse_budget(sg_opt.cfg.fuse_ms);
    if (warn[0]) sg_opt_log("optimize: %s", warn);
    if (sg_opt.cfg.plant)
        sg_opt_log("optimize: SGCAP_OPTIMIZE_TEST_PLANT is set: every optimized graph gets a wrong "
                   "result planted (a test of the fallback, never for real runs)");
    pthread_atfork(NULL, NULL, atfork_child);
    return sg_inject_add_observer(&observer) == 0 ? SG_OK : SG_ELIMIT;
}

const sg_inject_module_t sg_optimize_module = {.name = "optimize", .start = start};

/* ---- the exit summary ---------------------------------------------------------------------- */

__attribute__((destructor)) static void summary(void)
{
    if (!sg_opt.used) return;
    bool locked = pthread_mutex_trylock(&sg_opt.lock) == 0;
    char reasons[SG_REASONS_MAX * 180];
    sg_reasons_format(&sg_opt.reasons, reasons, sizeof reasons);
    uint64_t never = sg_opt.by_state[REC_PENDING];
    sg_opt_log("summary: optimize: %u graphs: %" PRIu64 " swapped, %" PRIu64
               " kept original%s, %" PRIu64 " unchanged by the passes (%s), %" PRIu64
               " optimized but never checked; %" PRIu64 " decided by digest alone; %" PRIu64
               " exec updates translated, %" PRIu64 " could not follow",
               sg_opt.seq, sg_opt.by_state[REC_SWAPPED],
               sg_opt.by_state[REC_REFUSED] + sg_opt.by_state[REC_FALLBACK], reasons,
               sg_opt.by_state[REC_UNCHANGED], sg_opt_pipeline_names(), never, sg_opt.by_digest,
               sg_opt.translated, sg_opt.updates_refused);
    char unchanged[400] = "";
    size_t ul = 0;
    for (uint32_t i = 0; i < sg_opt.n_records && ul + 16 < sizeof unchanged; i++)
        if (sg_opt.records[i].state == REC_UNCHANGED)
            ul += (size_t)snprintf(unchanged + ul, sizeof unchanged - ul, "%s%u", ul ? " " : "",
                                   sg_opt.records[i].seq);
    if (ul)
        sg_opt_log("summary: optimize: unchanged by the passes (no optimized graph): graph %s",
                   unchanged);
    uint32_t listed = 0;
    for (uint32_t i = 0; i < sg_opt.n_records && listed < LISTED_RECORDS; i++) {
        const record_t *r = &sg_opt.records[i];
        if (r->state == REC_UNCHANGED) continue;
        listed++;
        char check[160] = "";
        if (r->checks)
            snprintf(check, sizeof check,
                     "; shadow check%s %.3f ms%s, launch time E1/E0 %.3f/%.3f ms = %.2f",
                     r->checks > 1 ? "s" : "", r->check_ms, r->checks > 1 ? " in all" : "",
                     r->e1_ms, r->e0_ms, r->e0_ms > 0 ? r->e1_ms / r->e0_ms : 0.0);
        sg_opt_log("summary: optimize: graph %u (exec %#" PRIx64 ", %u nodes): %s%s%s; %u fused "
                   "%s%s%s%s; %u updates translated; built in %.3f ms",
                   r->seq, r->e0, r->nodes, sg_opt_state_names[r->state], r->why[0] ? ": " : "",
                   r->why, r->fused, r->fused == 1 ? "chain" : "chains", r->chains[0] ? ": " : "",
                   r->chains, check, r->translated, r->build_ms);
    }
    if (sg_opt.seq > sg_opt.n_records)
        sg_opt_log("summary: optimize: %u more graphs counted above, not listed",
                   sg_opt.seq - sg_opt.n_records);
    if (locked) pthread_mutex_unlock(&sg_opt.lock);
}
