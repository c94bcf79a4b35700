/* profile.c: per-node GPU durations of a replayed graph, from CUPTI
 * activity records. A record of a graph launch carries the id of the node
 * that ran, but that node is the executable graph's copy: instantiation
 * (and adding a child graph) clones nodes, and CUPTI's GRAPHNODE_CLONED
 * callback tells which node each copy came from. Following those links
 * back reaches a node this replay built, and so a node of the model. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "replay_private.h"

#define SG_CUPTI_BUFFER_BYTES (8u << 20)

typedef struct {
    uint64_t id, start, end;
    uint32_t launch;
    sg_node_type_t type;
    const char *name; /* kernels: CUPTI's string, valid for the process */
    uint32_t grid[3];
} act_t;

typedef struct {
    uint64_t copy, original;
} clone_t;

static struct {
    pthread_mutex_t lock;
    bool ready;
    CUpti_SubscriberHandle sub;
    act_t *acts;
    size_t n_acts, cap_acts;
    clone_t *clones;
    size_t n_clones, cap_clones;
    uint32_t launch;
    bool oom;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void push_act(uint64_t id, uint64_t start, uint64_t end, sg_node_type_t type,
                     const char *name, const int32_t *grid)
{
    if (!id) return; /* not from a graph launch */
    if (P.n_acts == P.cap_acts) {
        size_t cap = P.cap_acts ? 2 * P.cap_acts : 1024;
        act_t *a = realloc(P.acts, cap * sizeof *a);
        if (!a) {
            P.oom = true;
            return;
        }
        P.acts = a;
        P.cap_acts = cap;
    }
    act_t *a = &P.acts[P.n_acts++];
    *a = (act_t){id, start, end, P.launch, type, name, {0, 0, 0}};
    for (int i = 0; grid && i < 3; i++)
        a->grid[i] = (uint32_t)grid[i];
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, SG_CUPTI_BUFFER_BYTES);
    *size = *buffer ? SG_CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&P.lock);
    while (valid && sg_cupti->cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            int32_t grid[3] = {k->gridX, k->gridY, k->gridZ};
            push_act(k->graphNodeId, k->start, k->end, SG_NODE_KERNEL, k->name, grid);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            push_act(m->graphNodeId, m->start, m->end, SG_NODE_MEMCPY, NULL, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            push_act(m->graphNodeId, m->start, m->end, SG_NODE_MEMSET, NULL, NULL);
            break;
        }
        default:
            break;
        }
    }
    pthread_mutex_unlock(&P.lock);
    free(buffer);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *cbdata)
{
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
    const CUpti_ResourceData *rd = cbdata;
    const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
    if (!gd || !gd->node || !gd->originalNode) return;
    uint64_t copy = 0, original = 0;
    if (sg_cupti->cuptiGetGraphNodeId(gd->node, &copy) != CUPTI_SUCCESS ||
        sg_cupti->cuptiGetGraphNodeId(gd->originalNode, &original) != CUPTI_SUCCESS)
        return;
    pthread_mutex_lock(&P.lock);
    if (P.n_clones == P.cap_clones) {
        size_t cap = P.cap_clones ? 2 * P.cap_clones : 1024;
        clone_t *c = realloc(P.clones, cap * sizeof *c);
        if (!c) {
            P.oom = true;
            pthread_mutex_unlock(&P.lock);
            return;
        }
        P.clones = c;
        P.cap_clones = cap;
    }
    P.clones[P.n_clones++] = (clone_t){copy, original};
    pthread_mutex_unlock(&P.lock);
}

static int cupti_fail(char *err, size_t errlen, CUptiResult rc, const char *what)
{
    const char *s = NULL;
    if (sg_cupti) sg_cupti->cuptiGetResultString(rc, &s);
    return sg_replay__fail(err, errlen, SG_ECUDA, "%s: %s", what, s ? s : "CUPTI error");
}

#define CUPTI_TRY(call, what)                                                                      \
    do {                                                                                           \
        CUptiResult cr_ = (call);                                                                  \
        if (cr_ != CUPTI_SUCCESS) return cupti_fail(err, errlen, cr_, what);                       \
    } while (0)

int sg_replay__profile_prepare(char *err, size_t errlen)
{
    if (P.ready) return SG_OK;
    int rc = sg_replay__load_cupti(err, errlen);
    if (rc) return rc;
    CUPTI_TRY(sg_cupti->cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
              "cuptiActivityRegisterCallbacks");
    CUPTI_TRY(sg_cupti->cuptiSubscribe(&P.sub, (CUpti_CallbackFunc)on_callback, NULL),
              "cuptiSubscribe");
    CUPTI_TRY(sg_cupti->cuptiEnableCallback(1, P.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                           CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED),
              "cuptiEnableCallback(GRAPHNODE_CLONED)");
    P.ready = true;
    return SG_OK;
}

/* ---- resolving ids -------------------------------------------------------------------- */

typedef struct {
    uint64_t id;
    uint32_t built;
} id_index_t;

static int cmp_id_index(const void *a, const void *b)
{
    uint64_t x = ((const id_index_t *)a)->id, y = ((const id_index_t *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_clone(const void *a, const void *b)
{
    uint64_t x = ((const clone_t *)a)->copy, y = ((const clone_t *)b)->copy;
    return (x > y) - (x < y);
}

static uint32_t resolve(const id_index_t *ix, size_t n_ix, uint64_t id)
{
    for (int hop = 0; hop < 32 && id; hop++) {
        id_index_t key = {id, 0};
        const id_index_t *hit = bsearch(&key, ix, n_ix, sizeof *ix, cmp_id_index);
        if (hit) return hit->built;
        clone_t ck = {id, 0};
        const clone_t *c = bsearch(&ck, P.clones, P.n_clones, sizeof *P.clones, cmp_clone);
        if (!c || c->original == id) break;
        id = c->original;
    }
    return SG_NONE;
}

/* ---- the fallback: kernels matched by name ------------------------------------------ */

/* Should a record's node id lead nowhere (a driver that clones without
 * telling CUPTI's callback, say), kernel records are matched to kernel
 * nodes by mangled name and grid: within one launch, the k-th record of a
 * (name, grid) in start order goes to the k-th such node in build order,
 * when both counts agree. Exact for names that occur once; for repeated
 * names in parallel branches it may swap two identical nodes. Reported. */
static const sg_replay_t *g_sort_replay;

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_grid(const uint32_t *a, const uint32_t *b)
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int cmp_act_index(const void *pa, const void *pb)
{
    const act_t *a = &P.acts[*(const size_t *)pa], *b = &P.acts[*(const size_t *)pb];
    if (a->launch != b->launch) return a->launch < b->launch ? -1 : 1;
    int c = cmp_str(a->name, b->name);
    if (c) return c;
    c = cmp_grid(a->grid, b->grid);
    if (c) return c;
    return (a->start > b->start) - (a->start < b->start);
}

static int cmp_built_index(const void *pa, const void *pb)
{
    uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
    const sg_built_node_t *a = &g_sort_replay->built[x], *b = &g_sort_replay->built[y];
    int c = cmp_str(a->mangled, b->mangled);
    if (c) return c;
    c = cmp_grid(a->grid, b->grid);
    if (c) return c;
    return (x > y) - (x < y);
}

/* res[a] is the built node of act a or SG_NONE; fills what it can. */
static int match_by_name(const sg_replay_t *r, uint32_t *res, uint32_t *matched)
{
    size_t *acts = malloc((P.n_acts + 1) * sizeof *acts), n_acts = 0;
    uint32_t *nodes = malloc((r->n_built + 1) * sizeof *nodes), n_nodes = 0;
    if (!acts || !nodes) {
        free(acts);
        free(nodes);
        return SG_ENOMEM;
    }
    for (size_t a = 0; a < P.n_acts; a++)
        if (res[a] == SG_NONE && P.acts[a].type == SG_NODE_KERNEL && P.acts[a].name)
            acts[n_acts++] = a;
    for (uint32_t b = 0; b < r->n_built; b++)
        if (r->built[b].type == SG_NODE_KERNEL && r->built[b].mangled) nodes[n_nodes++] = b;
    qsort(acts, n_acts, sizeof *acts, cmp_act_index);
    g_sort_replay = r;
    qsort(nodes, n_nodes, sizeof *nodes, cmp_built_index);
    uint32_t lo = 0, launch = UINT32_MAX;
    for (size_t i = 0; i < n_acts;) {
        const act_t *first = &P.acts[acts[i]];
        /* both lists are in (name, grid) order within a launch: walk on */
        if (first->launch != launch) {
            launch = first->launch;
            lo = 0;
        }
        size_t j = i;
        while (j < n_acts && P.acts[acts[j]].launch == first->launch &&
               !cmp_str(P.acts[acts[j]].name, first->name) &&
               !cmp_grid(P.acts[acts[j]].grid, first->grid))
            j++;
        /* the nodes of the same name and grid */
        while (lo < n_nodes && (cmp_str(r->built[nodes[lo]].mangled, first->name) < 0 ||
                                (!cmp_str(r->built[nodes[lo]].mangled, first->name) &&
                                 cmp_grid(r->built[nodes[lo]].grid, first->grid) < 0)))
            lo++;
        uint32_t hi = lo;
        while (hi < n_nodes && !cmp_str(r->built[nodes[hi]].mangled, first->name) &&
               !cmp_grid(r->built[nodes[hi]].grid, first->grid))
            hi++;
        if (hi - lo == j - i)
            for (size_t k = 0; k < j - i; k++) {
                res[acts[i + k]] = nodes[lo + k];
                (*matched)++;
            }
        i = j;
    }
    free(acts);
    free(nodes);
    return SG_OK;
}

int sg_replay_profile(sg_replay_t *r, sg_graph_t *g, uint32_t launches, sg_trace_event_t **events,
                      uint32_t *n_events, uint32_t *unmatched, uint32_t *by_name, char *err,
                      size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    *events = NULL;
    *n_events = 0;
    *unmatched = 0;
    *by_name = 0;
    if (!P.ready || !r->opt.profile)
        return sg_replay__fail(err, errlen, SG_EINVAL, "profiling was not prepared at open");
    if (launches == 0) launches = 1;
    static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                               CUPTI_ACTIVITY_KIND_MEMCPY,
                                               CUPTI_ACTIVITY_KIND_MEMSET};
    pthread_mutex_lock(&P.lock);
    P.n_acts = 0;
    pthread_mutex_unlock(&P.lock);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        CUPTI_TRY(sg_cupti->cuptiActivityEnable(kinds[i]), "cuptiActivityEnable");
    int rc = SG_OK;
    for (uint32_t l = 0; l < launches && rc == SG_OK; l++) {
        pthread_mutex_lock(&P.lock);
        P.launch = l;
        pthread_mutex_unlock(&P.lock);
        CUresult cr = drv->cuGraphLaunch(r->exec, r->stream);
        if (cr == CUDA_SUCCESS) cr = drv->cuStreamSynchronize(r->stream);
        if (cr != CUDA_SUCCESS) rc = sg_replay__cu_fail(drv, err, errlen, cr, "profiled launch");
        /* forced flush: every record of this launch is delivered now, so
         * the launch tag above is the right one */
        sg_cupti->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        sg_cupti->cuptiActivityDisable(kinds[i]);
    if (rc) return rc;

    pthread_mutex_lock(&P.lock);
    bool oom = P.oom;
    qsort(P.clones, P.n_clones, sizeof *P.clones, cmp_clone);
    pthread_mutex_unlock(&P.lock);
    if (oom) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory while profiling");

    id_index_t *ix = calloc(r->n_built + 1, sizeof *ix);
    double *sum = calloc((size_t)r->n_built * launches + 1, sizeof *sum); /* [built][launch] */
    bool *seen = calloc((size_t)r->n_built * launches + 1, sizeof *seen);
    sg_trace_event_t *ev = calloc(P.n_acts + 1, sizeof *ev);
    double *tmp = calloc(launches + 1, sizeof *tmp);
    uint32_t *res = calloc(P.n_acts + 1, sizeof *res);
    size_t n_unresolved = 0;
    if (!ix || !sum || !seen || !ev || !tmp || !res) {
        rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        goto out;
    }
    size_t n_ix = 0;
    for (uint32_t i = 0; i < r->n_built; i++)
        if (r->built[i].cupti_id) ix[n_ix++] = (id_index_t){r->built[i].cupti_id, i};
    qsort(ix, n_ix, sizeof *ix, cmp_id_index);

    for (size_t a = 0; a < P.n_acts; a++) {
        res[a] = resolve(ix, n_ix, P.acts[a].id);
        if (res[a] == SG_NONE) n_unresolved++;
    }
    if (n_unresolved && match_by_name(r, res, by_name)) {
        rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        goto out;
    }
    uint32_t n_ev = 0;
    for (size_t a = 0; a < P.n_acts; a++) {
        const act_t *x = &P.acts[a];
        uint32_t b = res[a];
        if (b == SG_NONE) {
            (*unmatched)++;
            continue;
        }
        /* a node can run several times in one launch (a while body) */
        size_t slot = (size_t)b * launches + x->launch;
        sum[slot] += (double)(x->end > x->start ? x->end - x->start : 0);
        seen[slot] = true;
        if (x->launch + 1 == launches) {
            const sg_built_node_t *bn = &r->built[b];
            sg_trace_event_t *e = &ev[n_ev++];
            snprintf(e->node, sizeof e->node, "%s", bn->path);
            snprintf(e->name, sizeof e->name, "%s", bn->name);
            e->type = bn->type;
            e->stream = bn->stream;
            e->start_ns = x->start;
            e->end_ns = x->end;
        }
    }
    for (uint32_t b = 0; b < r->n_built; b++) {
        uint32_t k = 0;
        for (uint32_t l = 0; l < launches; l++)
            if (seen[(size_t)b * launches + l]) tmp[k++] = sum[(size_t)b * launches + l];
        if (!k) continue;
        /* the model is the caller's mutable graph: owner points into it */
        sg_node_t *n = sg_graph_node((sg_graph_t *)r->built[b].owner, r->built[b].id);
        if (n) n->duration_ns = sg_replay_median(tmp, k);
    }
    (void)g;
    *events = ev;
    *n_events = n_ev;
    ev = NULL;
out:
    free(ix);
    free(sum);
    free(seen);
    free(ev);
    free(tmp);
    free(res);
    return rc;
}
