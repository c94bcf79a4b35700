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
 * Locks: `lock` (the exec table and the summary) is taken after none of
 * capture's and held across cheap driver calls only; a shadow check runs
 * outside it with its exec marked busy. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "capture/capture.h"
#include "opt.h"
#include "optimize.h"

/* ---- state ------------------------------------------------------------------------- */

typedef enum {
    REC_UNCHANGED = 0, /* the passes changed nothing: no E1 */
    REC_REFUSED,       /* never swapped: why */
    REC_PENDING,       /* E1 built, not checked yet */
    REC_SWAPPED,       /* E1 passed its check */
    REC_FALLBACK,      /* E1 failed or an update could not follow: E0 for good */
} rec_state_t;

/* One instantiated graph, for the log and the exit summary. Records
 * outlive their execs. */
typedef struct {
    uint32_t seq;
    uint64_t e0;
    uint32_t nodes;
    rec_state_t state;
    char why[220];
    uint32_t fused;
    double build_ms; /* model, passes, G1 and E1 at instantiate */
    double check_ms;
    float e1_ms, e0_ms;
    uint32_t checked_at, checks, translated;
    bool counted; /* its state is in opt.by_state */
} record_t;

typedef struct node_map {
    uint64_t node; /* key: a CUgraphNode of the program's graph */
    sg_node_id_t id;
    UT_hash_handle hh;
} node_map_t;

typedef enum { EX_PENDING = 0, EX_SWAPPED, EX_ORIGINAL } ex_state_t;

typedef struct exec_entry {
    uint64_t e0; /* key: the program's exec */
    CUgraphExec e1;
    sg_opt_built_t built;  /* G1, its nodes by id, graph allocations */
    sg_graph_t *model;     /* the program's graph as E0 runs it (updates applied) */
    sg_graph_t *rewritten; /* what E1 runs */
    node_map_t *nodes;     /* program node -> model id */
    sg_opt_span_t *spans;  /* the shadow set */
    uint32_t n_spans;
    uint64_t span_bytes;
    uint32_t launches;
    ex_state_t state;
    bool pending;      /* counted in by_state[REC_PENDING] */
    bool busy;         /* a shadow check is running */
    uint32_t inflight; /* launches of E1 under way outside the lock */
    bool destroyed;    /* E0 was destroyed during that check: free it after */
    uint32_t rec;
    uint32_t logged_updates;
    UT_hash_handle hh;
} exec_entry_t;

/* Decisions that depend on the graph alone, by raw digest: a program that
 * instantiates the same graph again pays a digest, not a model build. */
typedef struct verdict {
    uint64_t digest;   /* key */
    rec_state_t state; /* REC_UNCHANGED or REC_REFUSED */
    uint32_t nodes;
    char why[220];
    UT_hash_handle hh;
} verdict_t;
#define MAX_VERDICTS 4096u

#define MAX_RECORDS 4096u /* beyond: counted in by_state only */
#define LISTED_RECORDS 64u
#define LOGGED_GRAPHS 32u
#define LOGGED_UPDATES 4u
#define REASON_KINDS 8u

static struct {
    sg_opt_config_t cfg;
    sg_opt_driver_t drv;
    int drv_state; /* 0 not filled yet, 1 ready, -1 unusable (logged) */
    pthread_mutex_t lock;
    exec_entry_t *execs;
    atomic_int tracked; /* entries in execs: the launch fast path */
    verdict_t *verdicts;
    uint32_t n_verdicts;
    uint64_t by_digest; /* decisions taken from an earlier graph's */
    record_t records[MAX_RECORDS];
    uint32_t n_records, seq, logged_fallbacks;
    uint64_t by_state[5];
    uint64_t translated, updates_refused;
    struct {
        char why[120];
        uint64_t count;
    } reasons[REASON_KINDS]; /* why graphs kept their original, grouped */
    bool used;
} opt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *const state_names[] = {"unchanged by the passes", "kept original",
                                          "optimized, not checked yet", "swapped", "kept original"};

#define log_info(...) sg_inject_log(SG_LOG_INFO, __VA_ARGS__)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Under lock. A record, or NULL past MAX_RECORDS (then only counted). */
static record_t *record(uint32_t idx)
{
    return idx < opt.n_records ? &opt.records[idx] : NULL;
}

static uint32_t record_new(CUgraphExec e0, uint32_t nodes)
{
    pthread_mutex_lock(&opt.lock);
    uint32_t seq = ++opt.seq, idx = UINT32_MAX;
    if (opt.n_records < MAX_RECORDS) {
        idx = opt.n_records++;
        record_t *r = &opt.records[idx];
        memset(r, 0, sizeof *r);
        r->seq = seq;
        r->e0 = (uint64_t)(uintptr_t)e0;
        r->nodes = nodes;
        r->state = REC_PENDING;
    }
    opt.used = true;
    pthread_mutex_unlock(&opt.lock);
    return idx;
}

/* Under lock: the reason's family (up to the first ':') for the summary. */
static void count_reason(const char *why)
{
    char key[120];
    size_t l = strcspn(why, ":(");
    if (l >= sizeof key) l = sizeof key - 1;
    memcpy(key, why, l);
    while (l && key[l - 1] == ' ')
        l--;
    key[l] = '\0';
    uint32_t k = 0;
    for (; k < REASON_KINDS && opt.reasons[k].count; k++)
        if (!strcmp(opt.reasons[k].why, key)) break;
    if (k == REASON_KINDS) {
        k = REASON_KINDS - 1;
        snprintf(opt.reasons[k].why, sizeof opt.reasons[k].why, "other reasons");
    } else if (!opt.reasons[k].count) {
        snprintf(opt.reasons[k].why, sizeof opt.reasons[k].why, "%s", key);
    }
    opt.reasons[k].count++;
}

/* Under lock: the graph's final word (unchanged, refused, swapped,
 * fallback), logged for the first graphs. */
static void settle(uint32_t idx, uint32_t seq_hint, rec_state_t st, const char *why)
{
    record_t *r = record(idx);
    if (r && r->counted) opt.by_state[r->state]--; /* a swapped graph that fell back later */
    opt.by_state[st]++;
    if (st == REC_REFUSED || st == REC_FALLBACK) count_reason(why);
    if (r) {
        r->state = st;
        r->counted = true;
        snprintf(r->why, sizeof r->why, "%s", why ? why : "");
    }
    uint32_t seq = r ? r->seq : seq_hint;
    bool log = seq <= LOGGED_GRAPHS || (st == REC_FALLBACK && opt.logged_fallbacks < LOGGED_GRAPHS);
    if (st == REC_FALLBACK && log) opt.logged_fallbacks++;
    if (!log) return;
    if (st == REC_SWAPPED && r)
        log_info("optimize: graph %u (exec %#" PRIx64 "): swapped after the shadow check at "
                 "launch %u (%.3f ms; launch time E1/E0 %.3f/%.3f ms)",
                 seq, r->e0, r->checked_at, r->check_ms, r->e1_ms, r->e0_ms);
    else if (st != REC_SWAPPED)
        log_info("optimize: graph %u: %s%s%s", seq, state_names[st], why && why[0] ? ": " : "",
                 why ? why : "");
}

static void lock_settle(uint32_t idx, rec_state_t st, const char *why)
{
    pthread_mutex_lock(&opt.lock);
    settle(idx, opt.seq, st, why);
    pthread_mutex_unlock(&opt.lock);
}

static bool driver_ready(void)
{
    if (opt.drv_state) return opt.drv_state > 0;
    pthread_mutex_lock(&opt.lock);
    if (!opt.drv_state) {
        char why[160] = "";
        if (sg_opt_driver_fill(&opt.drv, why, sizeof why) == SG_OK) {
            opt.drv_state = 1;
        } else {
            opt.drv_state = -1;
            log_info("optimize: off (%s): every program keeps its own graphs", why);
        }
    }
    pthread_mutex_unlock(&opt.lock);
    return opt.drv_state > 0;
}

static void entry_free(exec_entry_t *e)
{
    if (!e) return;
    if (e->e1) opt.drv.r.cuGraphExecDestroy(e->e1);
    sg_opt_built_free(&opt.drv, &e->built);
    sg_graph_destroy(e->model);
    sg_graph_destroy(e->rewritten);
    node_map_t *m, *tmp;
    HASH_ITER(hh, e->nodes, m, tmp)
    {
        HASH_DEL(e->nodes, m);
        free(m);
    }
    free(e->spans);
    free(e);
}

/* Under lock: settle the record of an exec that was optimized (its
 * "pending" count goes, record or not). */
static void settle_exec(exec_entry_t *e, rec_state_t st, const char *why)
{
    if (e->pending && !record(e->rec)) opt.by_state[REC_PENDING]--;
    e->pending = false;
    settle(e->rec, 0, st, why);
}

/* Under lock: E0 for good; E1 goes at once unless a check still uses it. */
static void fall_back(exec_entry_t *e, const char *why)
{
    if (e->state == EX_ORIGINAL) return;
    e->state = EX_ORIGINAL;
    settle_exec(e, REC_FALLBACK, why);
    if (!e->busy && !e->inflight && e->e1) {
        opt.drv.r.cuGraphExecDestroy(e->e1);
        e->e1 = NULL;
        sg_opt_built_free(&opt.drv, &e->built);
    }
}

static exec_entry_t *find(CUgraphExec e0)
{
    uint64_t key = (uint64_t)(uintptr_t)e0;
    exec_entry_t *e = NULL;
    HASH_FIND(hh, opt.execs, &key, sizeof key, e);
    return e;
}

static int map_nodes(exec_entry_t *e, const uint64_t *orig, uint32_t n)
{
    for (uint32_t id = 0; id < n; id++) {
        if (!orig[id]) continue;
        node_map_t *m = NULL;
        HASH_FIND(hh, e->nodes, &orig[id], sizeof orig[id], m);
        if (!m) {
            m = calloc(1, sizeof *m);
            if (!m) return SG_ENOMEM;
            m->node = orig[id];
            HASH_ADD(hh, e->nodes, node, sizeof m->node, m);
            if (!m->hh.tbl) { /* HASH_NONFATAL_OOM: not added */
                free(m);
                return SG_ENOMEM;
            }
        }
        m->id = id;
    }
    return SG_OK;
}

/* ---- instantiate ---------------------------------------------------------------------- */

static bool device_updatable(const sg_graph_t *g, const uint64_t *orig, uint32_t n, char *why,
                             size_t len)
{
    if (!opt.drv.cuGraphKernelNodeGetAttribute) return false;
    for (uint32_t id = 0; id < n && id < g->n_nodes; id++) {
        const sg_node_t *x = sg_graph_node(g, id);
        if (!x || x->type != SG_NODE_KERNEL || !orig[id]) continue;
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        if (opt.drv.cuGraphKernelNodeGetAttribute((CUgraphNode)(uintptr_t)orig[id],
                                                  CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
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
    if (digest) HASH_FIND(hh, opt.verdicts, &digest, sizeof digest, v);
    return v;
}

static void verdict_keep(uint64_t digest, rec_state_t st, uint32_t nodes, const char *why)
{
    if (!digest || verdict_find(digest)) return;
    if (opt.n_verdicts >= MAX_VERDICTS) {
        verdict_t *v, *tmp;
        HASH_ITER(hh, opt.verdicts, v, tmp)
        {
            HASH_DEL(opt.verdicts, v);
            free(v);
        }
        opt.n_verdicts = 0;
    }
    verdict_t *v = calloc(1, sizeof *v);
    if (!v) return;
    v->digest = digest;
    v->state = st;
    v->nodes = nodes;
    snprintf(v->why, sizeof v->why, "%s", why);
    HASH_ADD(hh, opt.verdicts, digest, sizeof v->digest, v);
    if (!v->hh.tbl) {
        free(v);
        return;
    }
    opt.n_verdicts++;
}

static void instantiated(CUgraphExec e0, CUgraph graph, unsigned long long flags, CUstream upload)
{
    if (!e0 || !graph || !driver_ready()) return;
    double t0 = now_ms();
    uint32_t rec = record_new(e0, 0);
    char why[240] = "";
    if (!sg_inject_can_replace_calls()) {
        /* A launch could not be replaced by E1's: the program's own call
         * would run as well. */
        lock_settle(rec, REC_REFUSED,
                    "CUDA_INJECTION64_PATH alone: sgcap sees the calls through CUPTI and cannot "
                    "replace the program's launches (preload libsgcap.so to optimize)");
        return;
    }
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) {
        lock_settle(rec, REC_REFUSED,
                    "device-launch instantiation: the device launches the original itself");
        return;
    }
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    /* Seen before (and not forced, which always builds): the same answer. */
    uint64_t digest = 0;
    if (sg_capture_raw_digest(graph, &digest) != SG_OK) digest = 0;
    pthread_mutex_lock(&opt.lock);
    const verdict_t *seen = opt.cfg.force ? NULL : verdict_find(digest);
    if (seen) {
        record_t *sr = record(rec);
        if (sr) {
            sr->nodes = seen->nodes;
            sr->build_ms = now_ms() - t0;
        }
        opt.by_digest++;
        settle(rec, opt.seq, seen->state, seen->why);
    }
    pthread_mutex_unlock(&opt.lock);
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
    char cwhy[200] = "";
    model = sg_capture_model(graph, &orig, &n_orig, &unreadable, cwhy, sizeof cwhy);
    if (!model) {
        snprintf(why, sizeof why, "not recorded: the capture could not record the graph (%s)",
                 cwhy);
        goto out;
    }
    pthread_mutex_lock(&opt.lock);
    if (record(rec)) record(rec)->nodes = sg_graph_node_count(model);
    pthread_mutex_unlock(&opt.lock);
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
    if (sg_opt_pipeline(rw, &st, why, sizeof why) != SG_OK) goto out;
    cacheable = true;
    if (sg_opt_fusion_blind(model, rw, why, sizeof why)) goto out;
    cacheable = false;
    bool changed = true;
    char what[200] = "";
    if (sg_opt_changed(model, rw, &changed, what, sizeof what) != SG_OK) {
        snprintf(why, sizeof why, "comparing the rewritten graph failed");
        goto out;
    }
    if (!changed && !opt.cfg.force) {
        verdict = REC_UNCHANGED;
        why[0] = '\0';
        goto out;
    }
    CUcontext ctx = NULL;
    CUdevice dev = 0;
    CUresult cr = opt.drv.cuCtxGetCurrent(&ctx);
    if (cr == CUDA_SUCCESS) cr = opt.drv.cuCtxGetDevice(&dev);
    if (cr != CUDA_SUCCESS) {
        sg_opt_cu_fail(&opt.drv, cr, "the program's context", why, sizeof why);
        goto out;
    }
    char bwhy[200] = "";
    if (sg_opt_build(&opt.drv, ctx, (int)dev, rw, orig, n_orig, opt.cfg.plant, &built, bwhy,
                     sizeof bwhy) != SG_OK) {
        snprintf(why, sizeof why, "building the optimized graph failed: %s", bwhy);
        goto out;
    }
    if (opt.cfg.plant && !built.planted) {
        snprintf(why, sizeof why, "SGCAP_OPTIMIZE_TEST_PLANT: %s", built.plant_note);
        goto out;
    }
    cr = opt.drv.r.cuGraphInstantiateWithFlags(
        &e1, built.graph, flags & ~(unsigned long long)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    if (cr != CUDA_SUCCESS) {
        e1 = NULL;
        sg_opt_cu_fail(&opt.drv, cr, "instantiating the optimized graph", why, sizeof why);
        goto out;
    }
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) &&
        (cr = opt.drv.r.cuGraphUpload(e1, upload)) != CUDA_SUCCESS) {
        sg_opt_cu_fail(&opt.drv, cr, "uploading the optimized graph", why, sizeof why);
        goto out;
    }
    e = calloc(1, sizeof *e);
    if (!e || map_nodes(e, orig, n_orig) != SG_OK ||
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
    if (e1) opt.drv.r.cuGraphExecDestroy(e1);
    sg_opt_built_free(&opt.drv, &built);
    sg_inject_relaxed_end(&rx);
    pthread_mutex_lock(&opt.lock);
    record_t *r = record(rec);
    if (r) {
        r->fused = st.fused_chains;
        r->build_ms = now_ms() - t0;
    }
    if (verdict == REC_PENDING) {
        exec_entry_t *old = find(e0); /* a stale entry (an exec we missed the destroy of) */
        if (old) {
            HASH_DEL(opt.execs, old);
            entry_free(old);
            atomic_fetch_sub(&opt.tracked, 1);
        }
        HASH_ADD(hh, opt.execs, e0, sizeof e->e0, e);
        if (!e->hh.tbl) {
            verdict = REC_REFUSED;
            snprintf(why, sizeof why, "out of memory");
        } else {
            atomic_fetch_add(&opt.tracked, 1);
            opt.by_state[REC_PENDING]++; /* until its check settles it */
            e->pending = true;
            if (r) {
                snprintf(r->why, sizeof r->why, "%s", why);
                r->counted = true;
            }
            if ((r ? r->seq : opt.seq) <= LOGGED_GRAPHS)
                log_info("optimize: graph %u (exec %p): optimized (%s), %s", r ? r->seq : opt.seq,
                         (void *)e0, why,
                         opt.cfg.check_launch ? "shadow check at the launch set by "
                                                "SGCAP_OPTIMIZE_CHECK (default 1)"
                                              : "shadow check at every launch");
            e = NULL;
        }
    }
    if (verdict != REC_PENDING) {
        settle(rec, opt.seq, verdict, why);
        /* What depends on the graph alone is kept for its digest; a failure
         * to build or instantiate E1 may not repeat. */
        if (verdict == REC_UNCHANGED || (verdict == REC_REFUSED && cacheable))
            verdict_keep(digest, verdict, r ? r->nodes : 0, why);
    }
    pthread_mutex_unlock(&opt.lock);
    if (e) entry_free(e);
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
    pthread_mutex_lock(&opt.lock);
    exec_entry_t *e = find(a->hGraph);
    if (!e || e->state == EX_ORIGINAL || e->busy || capturing(call->stream)) {
        pthread_mutex_unlock(&opt.lock);
        return;
    }
    e->launches++;
    if (e->state == EX_SWAPPED) {
        /* Outside the lock: a launch may block on a full queue. */
        CUgraphExec e1 = e->e1;
        e->inflight++;
        pthread_mutex_unlock(&opt.lock);
        CUresult r = opt.drv.r.cuGraphLaunch(e1, call->stream);
        pthread_mutex_lock(&opt.lock);
        e->inflight--;
        if (r == CUDA_SUCCESS) {
            call->skip = 1;
            call->result = r;
        } else {
            char why[200];
            sg_opt_cu_fail(&opt.drv, r, "launching the optimized graph", why, sizeof why);
            fall_back(e, why); /* the program's call launches E0 */
        }
        bool gone = e->destroyed && !e->busy && !e->inflight;
        pthread_mutex_unlock(&opt.lock);
        if (gone) entry_free(e); /* another thread destroyed E0 meanwhile */
        return;
    }
    /* The Nth launch, or the first after it that finds no stream capture
     * in the process: the check synchronizes the context, which must not
     * meet another thread's capture. */
    bool check = opt.cfg.check_launch == 0 || e->launches >= opt.cfg.check_launch;
    if (!check || sg_inject_active_captures() > 0) {
        pthread_mutex_unlock(&opt.lock);
        return;
    }
    if (e->span_bytes > opt.cfg.shadow_max_bytes) {
        char why[200];
        snprintf(why, sizeof why,
                 "shadow set over SGCAP_SHADOW_MAX_BYTES=%" PRIu64 ": the check would copy %" PRIu64
                 " bytes",
                 opt.cfg.shadow_max_bytes, e->span_bytes);
        fall_back(e, why);
        pthread_mutex_unlock(&opt.lock);
        return;
    }
    e->busy = true;
    CUgraphExec e1 = e->e1;
    uint32_t launch = e->launches;
    pthread_mutex_unlock(&opt.lock);

    sg_opt_check_t res;
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    sg_opt_shadow_check(&opt.drv, call->stream, opt.drv.r.cuGraphLaunch, a->hGraph, e1, e->model,
                        e->spans, e->n_spans, &res);
    sg_inject_relaxed_end(&rx);

    pthread_mutex_lock(&opt.lock);
    e->busy = false;
    if (e->destroyed) { /* another thread destroyed E0 meanwhile */
        bool gone = !e->inflight;
        pthread_mutex_unlock(&opt.lock);
        if (res.e0_launched) {
            call->skip = 1;
            call->result = res.e0_result;
        }
        if (gone) entry_free(e);
        return;
    }
    if (res.e0_launched) {
        call->skip = 1;
        call->result = res.e0_result;
    }
    record_t *r = record(e->rec);
    if (r) {
        r->checks++;
        r->check_ms += res.check_ms;
        r->e1_ms = res.e1_ms;
        r->e0_ms = res.e0_ms;
        if (!r->checked_at) r->checked_at = launch;
    }
    if (!res.match) {
        fall_back(e, res.why);
    } else if (opt.cfg.check_launch != 0 || (r && r->checks == 1)) {
        /* SGCAP_OPTIMIZE_CHECK=all: every launch is checked (and the
         * program sees E0's results); counted as swapped while all pass. */
        if (opt.cfg.check_launch != 0) e->state = EX_SWAPPED;
        char why[sizeof r->why];
        snprintf(why, sizeof why, "%s", r ? r->why : "");
        settle_exec(e, REC_SWAPPED, why);
    }
    pthread_mutex_unlock(&opt.lock);
}

static void upload_before(sg_call_t *call)
{
    sg_args_cuGraphUpload_t *a = SG_CALL_ARGS(call, cuGraphUpload);
    pthread_mutex_lock(&opt.lock);
    exec_entry_t *e = find(a->hGraph);
    if (e && e->e1 && e->state != EX_ORIGINAL && !e->busy) {
        CUresult r = opt.drv.r.cuGraphUpload(e->e1, call->stream);
        /* Swapped: only E1 will run. Before its check both will: the
         * program's own upload of E0 goes ahead too. */
        if (e->state == EX_SWAPPED && r == CUDA_SUCCESS) {
            call->skip = 1;
            call->result = r;
        }
    }
    pthread_mutex_unlock(&opt.lock);
}

static void destroy_before(sg_call_t *call)
{
    CUgraphExec e0 = SG_CALL_ARGS(call, cuGraphExecDestroy)->hGraphExec;
    pthread_mutex_lock(&opt.lock);
    exec_entry_t *e = find(e0);
    if (e) {
        HASH_DEL(opt.execs, e);
        atomic_fetch_sub(&opt.tracked, 1);
        if (e->busy || e->inflight) e->destroyed = true; /* the last user frees it */
    }
    bool later = e && e->destroyed;
    pthread_mutex_unlock(&opt.lock);
    if (!e || later) return;
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    entry_free(e); /* E1 and G1 go with E0 */
    sg_inject_relaxed_end(&rx);
}

/* ---- exec updates ------------------------------------------------------------------------- */

/* Under lock. Can node `id` of e follow an update: is it in E1 as it is
 * in the program's graph? */
static bool survives(exec_entry_t *e, sg_node_id_t id, sg_node_t **model_node, CUgraphNode *g1,
                     char *why, size_t n)
{
    sg_node_t *a = sg_graph_node(e->model, id);
    const sg_node_t *b = sg_graph_node(e->rewritten, id);
    if (!a || !b || !sg_opt_same_payload(a, b) || id >= e->built.n_nodes || !e->built.nodes[id]) {
        /* A stage of a fused kernel will be carried over here too, once
         * the fused node records its stages' parameter slices. */
        snprintf(why, n, "node n%u is not in the optimized graph as it is in the program's", id);
        return false;
    }
    *model_node = a;
    *g1 = e->built.nodes[id];
    return true;
}

static int lookup(exec_entry_t *e, CUgraphNode node, sg_node_id_t *id, char *why, size_t n)
{
    uint64_t key = (uint64_t)(uintptr_t)node;
    node_map_t *m = NULL;
    HASH_FIND(hh, e->nodes, &key, sizeof key, m);
    if (!m) {
        snprintf(why, n, "the update names node %p, which the model does not know", (void *)node);
        return SG_ENOENT;
    }
    *id = m->id;
    return SG_OK;
}

/* Apply a kernel node's new parameters to both models (what E0 and E1 now
 * run), so later updates are judged against them. */
static void kernel_commit(exec_entry_t *e, sg_node_id_t id, const CUDA_KERNEL_NODE_PARAMS *p,
                          const uint8_t *bytes)
{
    sg_graph_t *gs[2] = {e->model, e->rewritten};
    for (int i = 0; i < 2; i++) {
        sg_node_t *x = sg_graph_node(gs[i], id);
        if (!x) continue;
        if (x->u.kernel.params_size)
            memcpy(x->u.kernel.param_bytes, bytes, x->u.kernel.params_size);
        x->u.kernel.grid[0] = p->gridDimX, x->u.kernel.grid[1] = p->gridDimY;
        x->u.kernel.grid[2] = p->gridDimZ;
        x->u.kernel.block[0] = p->blockDimX, x->u.kernel.block[1] = p->blockDimY;
        x->u.kernel.block[2] = p->blockDimZ;
        x->u.kernel.shared_bytes = p->sharedMemBytes;
    }
}

/* Does p name the kernel the model has? The handle may come another way
 * than the capture saw it (the runtime passes a context-independent
 * CUkernel as a CUfunction, or as kern): then the names must agree. The
 * layout the argument rules read is the model's, so it must be the same
 * kernel. */
static bool same_function(const CUDA_KERNEL_NODE_PARAMS *p, const sg_kernel_t *k)
{
    uint64_t fn = (uint64_t)(uintptr_t)(p->func ? (void *)p->func : (void *)p->kern);
    if (fn == k->func_handle) return true;
    const char *name = NULL;
    if (p->func && opt.drv.cuFuncGetName && opt.drv.cuFuncGetName(&name, p->func) != CUDA_SUCCESS)
        name = NULL;
    if (!name && opt.drv.cuKernelGetName) {
        CUkernel kern = p->func ? (CUkernel)p->func : p->kern;
        if (!kern || opt.drv.cuKernelGetName(&name, kern) != CUDA_SUCCESS) name = NULL;
    }
    return name && k->name && strcmp(name, k->name) == 0;
}

static int carry_kernel(exec_entry_t *e, sg_node_id_t id, const CUDA_KERNEL_NODE_PARAMS *p,
                        char *why, size_t n)
{
    sg_node_t *x;
    CUgraphNode g1;
    if (!p || !survives(e, id, &x, &g1, why, n)) return SG_EUNSUPPORTED;
    const sg_kernel_t *k = &x->u.kernel;
    if (!same_function(p, k)) {
        snprintf(why, n, "the update gives node n%u another kernel than %.80s", id, k->name);
        return SG_EUNSUPPORTED;
    }
    if (p->extra || (k->n_params && !p->kernelParams)) {
        snprintf(why, n, "node n%u gets its arguments through `extra`", id);
        return SG_EUNSUPPORTED;
    }
    uint8_t *bytes = calloc(1, k->params_size + 1), *moved = calloc(1, k->params_size + 1);
    void **argv = calloc(k->n_params + 1, sizeof *argv);
    int rc = SG_ENOMEM;
    if (!bytes || !moved || !argv) {
        snprintf(why, n, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < k->n_params; i++)
        memcpy(bytes + k->param_offsets[i], p->kernelParams[i], k->param_sizes[i]);
    rc = SG_EUNSUPPORTED;
    char w[200] = "";
    if (!sg_opt_kernel_args_ok(e->model, k, bytes, k->params_size, w, sizeof w)) {
        snprintf(why, n, "node n%u: %s", id, w);
        goto out;
    }
    /* Pointers into the graph's own allocations: G1 has them elsewhere. */
    memcpy(moved, bytes, k->params_size);
    if (sg_reloc_kernel_params(&e->built.map, k, moved, "update", NULL) < 0) {
        snprintf(why, n, "out of memory");
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < k->n_params; i++)
        argv[i] = moved + k->param_offsets[i];
    CUDA_KERNEL_NODE_PARAMS q = *p;
    q.kernelParams = argv;
    CUresult cr = opt.drv.cuGraphExecKernelNodeSetParams_v2(e->e1, g1, &q);
    if (cr != CUDA_SUCCESS) {
        sg_opt_cu_fail(&opt.drv, cr, "the optimized graph refused the new parameters", why, n);
        rc = SG_ECUDA;
        goto out;
    }
    kernel_commit(e, id, p, bytes);
    rc = SG_OK;
out:
    free(bytes);
    free(moved);
    free(argv);
    return rc;
}

static int relocate(exec_entry_t *e, CUdeviceptr *addr)
{
    uint64_t a = *addr;
    int rc = sg_reloc_address(&e->built.map, &a, SG_RELOC_MEMSET_DST, "update", NULL);
    if (rc >= 0) *addr = a;
    return rc == SG_ENOENT ? SG_OK : rc; /* memory the graph does not allocate: as it is */
}

static int carry_memset(exec_entry_t *e, sg_node_id_t id, const CUDA_MEMSET_NODE_PARAMS *p,
                        CUcontext ctx, char *why, size_t n)
{
    sg_node_t *x;
    CUgraphNode g1;
    if (!p || !survives(e, id, &x, &g1, why, n)) return SG_EUNSUPPORTED;
    char w[200];
    if (!sg_opt_address_ok(e->model, x->u.memset.dst, p->dst, "the memset's destination", w,
                           sizeof w)) {
        snprintf(why, n, "node n%u: %s", id, w);
        return SG_EUNSUPPORTED;
    }
    CUDA_MEMSET_NODE_PARAMS q = *p;
    if (relocate(e, &q.dst)) return SG_ENOMEM;
    CUresult cr = opt.drv.cuGraphExecMemsetNodeSetParams(e->e1, g1, &q, ctx);
    if (cr != CUDA_SUCCESS)
        return sg_opt_cu_fail(&opt.drv, cr, "the optimized graph refused the new memset", why, n);
    sg_graph_t *gs[2] = {e->model, e->rewritten};
    for (int i = 0; i < 2; i++) {
        sg_node_t *y = sg_graph_node(gs[i], id);
        y->u.memset.dst = p->dst;
        y->u.memset.pitch = p->pitch;
        y->u.memset.value = p->value;
        y->u.memset.element_size = p->elementSize;
        y->u.memset.width = p->width;
        y->u.memset.height = p->height;
    }
    return SG_OK;
}

/* The unified address a side of a copy names, 0 for an array. */
static uint64_t copy_side(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    if (t == CU_MEMORYTYPE_HOST) return (uint64_t)(uintptr_t)host;
    if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED) return dev;
    return 0;
}

static int carry_memcpy(exec_entry_t *e, sg_node_id_t id, const CUDA_MEMCPY3D *p, CUcontext ctx,
                        char *why, size_t n)
{
    sg_node_t *x;
    CUgraphNode g1;
    if (!p || !survives(e, id, &x, &g1, why, n)) return SG_EUNSUPPORTED;
    uint64_t src = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice);
    uint64_t dst = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice);
    char w[200];
    if (!src || !dst) {
        snprintf(why, n, "node n%u: the copy names a CUDA array", id);
        return SG_EUNSUPPORTED;
    }
    if (!sg_opt_address_ok(e->model, x->u.memcpy.src, src, "the copy's source", w, sizeof w) ||
        !sg_opt_address_ok(e->model, x->u.memcpy.dst, dst, "the copy's destination", w, sizeof w)) {
        snprintf(why, n, "node n%u: %s", id, w);
        return SG_EUNSUPPORTED;
    }
    CUDA_MEMCPY3D q = *p;
    if (q.srcMemoryType != CU_MEMORYTYPE_HOST && relocate(e, &q.srcDevice)) return SG_ENOMEM;
    if (q.dstMemoryType != CU_MEMORYTYPE_HOST && relocate(e, &q.dstDevice)) return SG_ENOMEM;
    CUresult cr = opt.drv.cuGraphExecMemcpyNodeSetParams(e->e1, g1, &q, ctx);
    if (cr != CUDA_SUCCESS)
        return sg_opt_cu_fail(&opt.drv, cr, "the optimized graph refused the new copy", why, n);
    sg_graph_t *gs[2] = {e->model, e->rewritten};
    for (int i = 0; i < 2; i++) {
        sg_node_t *y = sg_graph_node(gs[i], id);
        y->u.memcpy.src = src;
        y->u.memcpy.dst = dst;
        y->u.memcpy.width = p->WidthInBytes;
        y->u.memcpy.height = p->Height;
        y->u.memcpy.depth = p->Depth;
    }
    return SG_OK;
}

static const char *fn_name(const sg_call_t *call)
{
    return sg_inject_fn_name(call->fn);
}

/* Under lock: one in-place change of E0, carried over to E1 or not. */
static void exec_set(sg_call_t *call)
{
    CUgraphExec e0 = NULL;
    CUgraphNode node = NULL;
    switch (call->proto) {
#define SG_OPT_TARGET_(name)                                                                       \
    case SG_FN_##name:                                                                             \
        e0 = SG_CALL_ARGS(call, name)->hGraphExec;                                                 \
        node = SG_CALL_ARGS(call, name)->hNode;                                                    \
        break;
        SG_OPT_TARGET_(cuGraphExecKernelNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecKernelNodeSetParams_v2)
        SG_OPT_TARGET_(cuGraphExecMemcpyNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecMemsetNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecHostNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecChildGraphNodeSetParams)
        SG_OPT_TARGET_(cuGraphExecEventRecordNodeSetEvent)
        SG_OPT_TARGET_(cuGraphExecEventWaitNodeSetEvent)
        SG_OPT_TARGET_(cuGraphNodeSetEnabled)
#undef SG_OPT_TARGET_
    default:
        return;
    }
    exec_entry_t *e = find(e0);
    if (!e || e->state == EX_ORIGINAL || !e->e1) return;
    char why[240] = "";
    sg_node_id_t id = SG_NONE;
    int rc = lookup(e, node, &id, why, sizeof why);
    sg_node_t *x = NULL;
    CUgraphNode g1 = NULL;
    if (rc == SG_OK) {
        switch (call->proto) {
        case SG_FN_cuGraphExecKernelNodeSetParams_v2:
            rc = carry_kernel(e, id,
                              SG_CALL_ARGS(call, cuGraphExecKernelNodeSetParams_v2)->nodeParams,
                              why, sizeof why);
            break;
        case SG_FN_cuGraphExecMemsetNodeSetParams: {
            sg_args_cuGraphExecMemsetNodeSetParams_t *a =
                SG_CALL_ARGS(call, cuGraphExecMemsetNodeSetParams);
            rc = carry_memset(e, id, a->memsetParams, a->ctx, why, sizeof why);
            break;
        }
        case SG_FN_cuGraphExecMemcpyNodeSetParams: {
            sg_args_cuGraphExecMemcpyNodeSetParams_t *a =
                SG_CALL_ARGS(call, cuGraphExecMemcpyNodeSetParams);
            rc = carry_memcpy(e, id, a->copyParams, a->ctx, why, sizeof why);
            break;
        }
        case SG_FN_cuGraphExecNodeSetParams: {
            CUgraphNodeParams *p = SG_CALL_ARGS(call, cuGraphExecNodeSetParams)->nodeParams;
            if (p && p->type == CU_GRAPH_NODE_TYPE_KERNEL) {
                /* the generic struct's kernel member has the same fields */
                _Static_assert(sizeof p->kernel == sizeof(CUDA_KERNEL_NODE_PARAMS),
                               "kernel node parameter layouts");
                CUDA_KERNEL_NODE_PARAMS k;
                memcpy(&k, &p->kernel, sizeof k);
                rc = carry_kernel(e, id, &k, why, sizeof why);
            } else if (p && p->type == CU_GRAPH_NODE_TYPE_MEMSET) {
                CUDA_MEMSET_NODE_PARAMS v = {p->memset.dst,   p->memset.pitch,
                                             p->memset.value, p->memset.elementSize,
                                             p->memset.width, p->memset.height};
                rc = carry_memset(e, id, &v, p->memset.ctx, why, sizeof why);
            } else if (p && p->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
                rc = carry_memcpy(e, id, &p->memcpy.copyParams, p->memcpy.copyCtx, why, sizeof why);
            } else {
                snprintf(why, sizeof why,
                         "cuGraphExecNodeSetParams of a node of type %d cannot be carried over to "
                         "the optimized graph",
                         p ? (int)p->type : -1);
                rc = SG_EUNSUPPORTED;
            }
            break;
        }
        case SG_FN_cuGraphNodeSetEnabled:
            if (survives(e, id, &x, &g1, why, sizeof why)) {
                CUresult cr =
                    opt.drv.cuGraphNodeSetEnabled
                        ? opt.drv.cuGraphNodeSetEnabled(
                              e->e1, g1, SG_CALL_ARGS(call, cuGraphNodeSetEnabled)->isEnabled)
                        : CUDA_ERROR_NOT_FOUND;
                rc = cr == CUDA_SUCCESS
                         ? SG_OK
                         : sg_opt_cu_fail(&opt.drv, cr, "cuGraphNodeSetEnabled", why, sizeof why);
            } else {
                rc = SG_EUNSUPPORTED;
            }
            break;
        default:
            snprintf(why, sizeof why, "%s cannot be carried over to the optimized graph",
                     fn_name(call));
            rc = SG_EUNSUPPORTED;
            break;
        }
    }
    record_t *r = record(e->rec);
    if (rc == SG_OK) {
        opt.translated++;
        if (r) r->translated++;
        if (e->logged_updates++ < LOGGED_UPDATES)
            log_info("optimize: graph %u: %s on node n%u translated to the optimized graph",
                     r ? r->seq : 0, fn_name(call), id);
        return;
    }
    opt.updates_refused++;
    char line[300];
    snprintf(line, sizeof line, "%s could not follow: %s", fn_name(call), why);
    fall_back(e, line);
}

/* Under lock: the program updated E0 from another graph. */
static void exec_updated(CUgraphExec e0, CUgraph graph, int result)
{
    exec_entry_t *e = find(e0);
    if (!e || e->state == EX_ORIGINAL || !e->e1) return;
    char why[240] = "", line[320];
    if (result != CUDA_SUCCESS) {
        snprintf(line, sizeof line,
                 "the program's cuGraphExecUpdate failed (CUDA error %d: the graph's topology "
                 "changed?)",
                 result);
        fall_back(e, line);
        return;
    }
    uint64_t *orig = NULL;
    uint32_t n_orig = 0, unreadable = 0;
    sg_node_id_t *changed = NULL;
    uint32_t n_changed = 0;
    bool same = false;
    int rc = SG_EUNSUPPORTED;
    sg_graph_t *now = sg_capture_model(graph, &orig, &n_orig, &unreadable, why, sizeof why);
    if (!now || unreadable) {
        if (now) snprintf(why, sizeof why, "%u nodes could not be read", unreadable);
        goto out;
    }
    if (sg_opt_diff(e->model, now, &same, &changed, &n_changed, why, sizeof why) || !same) goto out;
    rc = SG_OK;
    for (uint32_t i = 0; i < n_changed && rc == SG_OK; i++) {
        sg_node_id_t id = changed[i];
        const sg_node_t *x = sg_graph_node(now, id);
        CUgraphNode h = id < n_orig ? (CUgraphNode)(uintptr_t)orig[id] : NULL;
        CUresult cr = CUDA_ERROR_NOT_FOUND;
        if (x->type == SG_NODE_KERNEL && h) {
            CUDA_KERNEL_NODE_PARAMS p;
            memset(&p, 0, sizeof p);
            cr = opt.drv.cuGraphKernelNodeGetParams_v2(h, &p);
            rc = cr == CUDA_SUCCESS ? carry_kernel(e, id, &p, why, sizeof why) : SG_ECUDA;
        } else if (x->type == SG_NODE_MEMSET && h && opt.drv.cuGraphMemsetNodeGetParams) {
            CUDA_MEMSET_NODE_PARAMS p;
            cr = opt.drv.cuGraphMemsetNodeGetParams(h, &p);
            rc = cr == CUDA_SUCCESS ? carry_memset(e, id, &p, NULL, why, sizeof why) : SG_ECUDA;
        } else if (x->type == SG_NODE_MEMCPY && h && opt.drv.cuGraphMemcpyNodeGetParams) {
            CUDA_MEMCPY3D p;
            cr = opt.drv.cuGraphMemcpyNodeGetParams(h, &p);
            rc = cr == CUDA_SUCCESS ? carry_memcpy(e, id, &p, NULL, why, sizeof why) : SG_ECUDA;
        } else {
            snprintf(why, sizeof why, "node n%u (%s) changes, which cannot be carried over", id,
                     sg_node_type_name(x->type));
            rc = SG_EUNSUPPORTED;
        }
        if (rc == SG_ECUDA && !why[0])
            sg_opt_cu_fail(&opt.drv, cr, "reading the new node", why, sizeof why);
    }
    if (rc == SG_OK) rc = map_nodes(e, orig, n_orig);
out:
    sg_graph_destroy(now);
    free(orig);
    free(changed);
    record_t *r = record(e->rec);
    if (rc == SG_OK) {
        opt.translated++;
        if (r) r->translated++;
        if (e->logged_updates++ < LOGGED_UPDATES)
            log_info("optimize: graph %u: cuGraphExecUpdate (%u nodes changed) translated to the "
                     "optimized graph",
                     r ? r->seq : 0, n_changed);
        return;
    }
    opt.updates_refused++;
    snprintf(line, sizeof line, "cuGraphExecUpdate could not follow: %s",
             why[0] ? why : "the new graph could not be read");
    fall_back(e, line);
}

/* ---- the observer -------------------------------------------------------------------------- */

static void on_graph(sg_phase_t phase, sg_call_t *c, void *user)
{
    (void)user;
    if (phase == SG_PHASE_BEFORE) {
        if (atomic_load_explicit(&opt.tracked, memory_order_relaxed) == 0) return;
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
    if (atomic_load_explicit(&opt.tracked, memory_order_relaxed) == 0) return;
    pthread_mutex_lock(&opt.lock);
    sg_relaxed_t rx;
    sg_inject_relaxed_begin(&rx);
    switch (c->proto) {
    case SG_FN_cuGraphExecUpdate:
        exec_updated(SG_CALL_ARGS(c, cuGraphExecUpdate)->hGraphExec,
                     SG_CALL_ARGS(c, cuGraphExecUpdate)->hGraph, c->result);
        break;
    case SG_FN_cuGraphExecUpdate_v2:
        exec_updated(SG_CALL_ARGS(c, cuGraphExecUpdate_v2)->hGraphExec,
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
        if (c->result == CUDA_SUCCESS) exec_set(c);
        break;
    default:
        break;
    }
    sg_inject_relaxed_end(&rx);
    pthread_mutex_unlock(&opt.lock);
}

static void atfork_child(void)
{
    /* Executable graphs and the driver's state do not survive fork. */
    pthread_mutex_init(&opt.lock, NULL);
    exec_entry_t *e, *tmp;
    HASH_ITER(hh, opt.execs, e, tmp)
    {
        HASH_DEL(opt.execs, e);
        sg_graph_destroy(e->model);
        sg_graph_destroy(e->rewritten);
        free(e->spans);
        free(e); /* its handles belong to the parent's driver */
    }
    atomic_store(&opt.tracked, 0);
    opt.drv_state = 0;
    opt.n_records = 0;
    opt.seq = 0;
    opt.used = false;
    memset(opt.by_state, 0, sizeof opt.by_state);
    memset(opt.reasons, 0, sizeof opt.reasons);
    opt.translated = opt.updates_refused = 0;
}

static const sg_observer_t observer = {
    .name = "optimize",
    .on = {[SG_FAMILY_GRAPH] = on_graph},
};

static int start(void)
{
    if (sg_inject_config()->mode != SG_MODE_OPTIMIZE) return SG_OK;
    char warn[300];
    sg_opt_config_read(&opt.cfg, warn, sizeof warn);
    if (warn[0]) log_info("optimize: %s", warn);
    if (opt.cfg.plant)
        log_info("optimize: SGCAP_OPTIMIZE_TEST_PLANT is set: every optimized graph gets a wrong "
                 "result planted (a test of the fallback, never for real runs)");
    pthread_atfork(NULL, NULL, atfork_child);
    return sg_inject_add_observer(&observer) == 0 ? SG_OK : SG_ELIMIT;
}

const sg_inject_module_t sg_optimize_module = {.name = "optimize", .start = start};

/* ---- the exit summary ---------------------------------------------------------------------- */

__attribute__((destructor)) static void summary(void)
{
    if (!opt.used) return;
    bool locked = pthread_mutex_trylock(&opt.lock) == 0;
    char reasons[REASON_KINDS * 140] = "";
    size_t rl = 0;
    for (uint32_t k = 0; k < REASON_KINDS && opt.reasons[k].count; k++)
        rl += (size_t)snprintf(reasons + rl, sizeof reasons - rl, "%s%" PRIu64 " %s",
                               k ? "; " : " (", opt.reasons[k].count, opt.reasons[k].why);
    if (rl && rl < sizeof reasons) snprintf(reasons + rl, sizeof reasons - rl, ")");
    uint64_t never = opt.by_state[REC_PENDING];
    log_info("summary: optimize: %u graphs: %" PRIu64 " swapped, %" PRIu64
             " kept original%s, %" PRIu64 " unchanged by the passes (%s), %" PRIu64
             " optimized but never checked; %" PRIu64 " decided by digest alone; %" PRIu64
             " exec updates translated, %" PRIu64 " could not follow",
             opt.seq, opt.by_state[REC_SWAPPED],
             opt.by_state[REC_REFUSED] + opt.by_state[REC_FALLBACK], reasons,
             opt.by_state[REC_UNCHANGED], sg_opt_pipeline_names(), never, opt.by_digest,
             opt.translated, opt.updates_refused);
    char unchanged[400] = "";
    size_t ul = 0;
    for (uint32_t i = 0; i < opt.n_records && ul + 16 < sizeof unchanged; i++)
        if (opt.records[i].state == REC_UNCHANGED)
            ul += (size_t)snprintf(unchanged + ul, sizeof unchanged - ul, "%s%u", ul ? " " : "",
                                   opt.records[i].seq);
    if (ul)
        log_info("summary: optimize: unchanged by the passes (no optimized graph): graph %s",
                 unchanged);
    uint32_t listed = 0;
    for (uint32_t i = 0; i < opt.n_records && listed < LISTED_RECORDS; i++) {
        const record_t *r = &opt.records[i];
        if (r->state == REC_UNCHANGED) continue;
        listed++;
        char check[160] = "";
        if (r->checks)
            snprintf(check, sizeof check,
                     "; shadow check%s %.3f ms%s, launch time E1/E0 %.3f/%.3f ms = %.2f",
                     r->checks > 1 ? "s" : "", r->check_ms, r->checks > 1 ? " in all" : "",
                     r->e1_ms, r->e0_ms, r->e0_ms > 0 ? r->e1_ms / r->e0_ms : 0.0);
        log_info("summary: optimize: graph %u (exec %#" PRIx64 ", %u nodes): %s%s%s; %u fused "
                 "chains%s; %u updates translated; built in %.3f ms",
                 r->seq, r->e0, r->nodes, state_names[r->state], r->why[0] ? ": " : "", r->why,
                 r->fused, check, r->translated, r->build_ms);
    }
    if (opt.seq > opt.n_records)
        log_info("summary: optimize: %u more graphs counted above, not listed",
                 opt.seq - opt.n_records);
    if (locked) pthread_mutex_unlock(&opt.lock);
}
