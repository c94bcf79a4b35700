/* state.c: the optimizer's records and exec entries (state.h): counting
 * and logging each graph's fate, falling back, the table of optimized
 * execs and their node maps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state.h"

sg_opt_state_t sg_opt = {.lock = PTHREAD_MUTEX_INITIALIZER};

const char *const sg_opt_state_names[] = {"unchanged by the passes", "kept original",
                                          "optimized, not checked yet", "swapped", "kept original"};

double sg_opt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Under lock. A record, or NULL past MAX_RECORDS (then only counted). */
record_t *sg_opt_record(uint32_t idx)
{
    return idx < sg_opt.n_records ? &sg_opt.records[idx] : NULL;
}

uint32_t sg_opt_record_new(CUgraphExec e0, uint32_t nodes)
{
    pthread_mutex_lock(&sg_opt.lock);
    uint32_t seq = ++sg_opt.seq, idx = UINT32_MAX;
    if (sg_opt.n_records < MAX_RECORDS) {
        idx = sg_opt.n_records++;
        record_t *r = &sg_opt.records[idx];
        memset(r, 0, sizeof *r);
        r->seq = seq;
        r->e0 = (uint64_t)(uintptr_t)e0;
        r->nodes = nodes;
        r->state = REC_PENDING;
    }
    sg_opt.used = true;
    pthread_mutex_unlock(&sg_opt.lock);
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
    sg_reasons_count(&sg_opt.reasons, key);
}

/* Under lock: the graph's final word (unchanged, refused, swapped,
 * fallback), logged for the first graphs. */
void sg_opt_settle(uint32_t idx, uint32_t seq_hint, rec_state_t st, const char *why)
{
    record_t *r = sg_opt_record(idx);
    if (r && r->counted) sg_opt.by_state[r->state]--; /* a swapped graph that fell back later */
    sg_opt.by_state[st]++;
    if (st == REC_REFUSED || st == REC_FALLBACK) count_reason(why);
    if (r) {
        r->state = st;
        r->counted = true;
        snprintf(r->why, sizeof r->why, "%s", why ? why : "");
    }
    uint32_t seq = r ? r->seq : seq_hint;
    bool log =
        seq <= LOGGED_GRAPHS || (st == REC_FALLBACK && sg_opt.logged_fallbacks < LOGGED_GRAPHS);
    if (st == REC_FALLBACK && log) sg_opt.logged_fallbacks++;
    if (!log) return;
    if (st == REC_SWAPPED && r)
        sg_opt_log("optimize: graph %u (exec %#" PRIx64 "): swapped after the shadow check at "
                   "launch %u (%.3f ms; launch time E1/E0 %.3f/%.3f ms)",
                   seq, r->e0, r->checked_at, r->check_ms, r->e1_ms, r->e0_ms);
    else if (st != REC_SWAPPED)
        sg_opt_log("optimize: graph %u: %s%s%s", seq, sg_opt_state_names[st],
                   why && why[0] ? ": " : "", why ? why : "");
}

void sg_opt_lock_settle(uint32_t idx, rec_state_t st, const char *why)
{
    pthread_mutex_lock(&sg_opt.lock);
    sg_opt_settle(idx, sg_opt.seq, st, why);
    pthread_mutex_unlock(&sg_opt.lock);
}

bool sg_opt_driver_ready(void)
{
    if (sg_opt.drv_state) return sg_opt.drv_state > 0;
    pthread_mutex_lock(&sg_opt.lock);
    if (!sg_opt.drv_state) {
        char why[160] = "";
        if (sg_opt_driver_fill(&sg_opt.drv, why, sizeof why) == SG_OK) {
            sg_opt.drv_state = 1;
        } else {
            sg_opt.drv_state = -1;
            sg_opt_log("optimize: off (%s): every program keeps its own graphs", why);
        }
    }
    pthread_mutex_unlock(&sg_opt.lock);
    return sg_opt.drv_state > 0;
}

void sg_opt_entry_free(exec_entry_t *e)
{
    if (!e) return;
    if (e->e1) sg_opt.drv.r.cuGraphExecDestroy(e->e1);
    sg_opt_built_free(&sg_opt.drv, &e->built);
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
void sg_opt_settle_exec(exec_entry_t *e, rec_state_t st, const char *why)
{
    if (e->pending && !sg_opt_record(e->rec)) sg_opt.by_state[REC_PENDING]--;
    e->pending = false;
    sg_opt_settle(e->rec, 0, st, why);
}

/* Under lock: E0 for good; E1 goes at once unless a check still uses it. */
void sg_opt_fall_back(exec_entry_t *e, const char *why)
{
    if (e->state == EX_ORIGINAL) return;
    e->state = EX_ORIGINAL;
    sg_opt_settle_exec(e, REC_FALLBACK, why);
    if (!e->busy && !e->inflight && e->e1) {
        sg_opt.drv.r.cuGraphExecDestroy(e->e1);
        e->e1 = NULL;
        sg_opt_built_free(&sg_opt.drv, &e->built);
    }
}

exec_entry_t *sg_opt_find(CUgraphExec e0)
{
    uint64_t key = (uint64_t)(uintptr_t)e0;
    exec_entry_t *e = NULL;
    HASH_FIND(hh, sg_opt.execs, &key, sizeof key, e);
    return e;
}

int sg_opt_map_nodes(exec_entry_t *e, const uint64_t *orig, uint32_t n)
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
