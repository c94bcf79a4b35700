/* state.h: private to optimize/: the optimizer's state shared by its
 * in-app files: the table of executable graphs it optimized (one entry per
 * program exec with an E1), one record per instantiated graph for the log
 * and the exit summary, and the functions that settle a graph's fate.
 * module.c owns the observer (instantiate, launch, upload, destroy, the
 * summary), update.c the exec updates, state.c the records and entries.
 * Everything is under sg_opt.lock unless said otherwise. */
#ifndef SGCAP_OPTIMIZE_STATE_H
#define SGCAP_OPTIMIZE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

#include "capture/reasons.h"
#include "inject/inject.h"
#include "opt.h"

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
    char chains[200]; /* the fused chains (sg_opt_rewrite_stats_t.chains) */
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
    uint32_t logged_updates;       /* node-parameter updates logged (the first LOGGED_UPDATES) */
    uint32_t logged_graph_updates; /* cuGraphExecUpdate translations logged, counted apart */
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

typedef struct {
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
    sg_reasons_t reasons; /* why graphs kept their original, grouped */
    bool used;
} sg_opt_state_t;

/* The optimizer's state (module.c). */
extern sg_opt_state_t sg_opt;

extern const char *const sg_opt_state_names[];

#define sg_opt_log(...) sg_inject_log(SG_LOG_INFO, __VA_ARGS__)

double sg_opt_now_ms(void);
/* The record of index idx, NULL past MAX_RECORDS (then only counted). */
record_t *sg_opt_record(uint32_t idx);
/* A new record for a graph the program instantiated (takes the lock). */
uint32_t sg_opt_record_new(CUgraphExec e0, uint32_t nodes);
/* A graph's final word (unchanged, refused, swapped, fallback): counted,
 * and logged for the first graphs. seq_hint names it when it has no record. */
void sg_opt_settle(uint32_t idx, uint32_t seq_hint, rec_state_t st, const char *why);
void sg_opt_lock_settle(uint32_t idx, rec_state_t st, const char *why); /* takes the lock */
/* The same for an optimized exec (its pending count goes, record or not). */
void sg_opt_settle_exec(exec_entry_t *e, rec_state_t st, const char *why);
/* E0 for good; E1 goes at once unless a check or launch still uses it. */
void sg_opt_fall_back(exec_entry_t *e, const char *why);
/* The driver table, filled at first use (takes the lock); false when the
 * driver lacks what the optimizer needs (logged once). */
bool sg_opt_driver_ready(void);
exec_entry_t *sg_opt_find(CUgraphExec e0);
/* Remember that orig[id] (program nodes) are model node id. */
int sg_opt_map_nodes(exec_entry_t *e, const uint64_t *orig, uint32_t n);
/* Free an entry that is in no table: E1, G1, models. */
void sg_opt_entry_free(exec_entry_t *e);

/* update.c: an in-place change of E0 (cuGraphExec*SetParams,
 * cuGraphNodeSetEnabled) or cuGraphExecUpdate of it, after the program's
 * call; carried over to E1 or the exec falls back. */
void sg_opt_exec_set(sg_call_t *call);
void sg_opt_exec_updated(CUgraphExec e0, CUgraph graph, int result);

#endif /* SGCAP_OPTIMIZE_STATE_H */
