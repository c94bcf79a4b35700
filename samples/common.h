/* samples/common.h: what every sgcap sample shares.
 *
 * The samples are the GPU test workloads for sgcap: each captures multi-stream
 * work into a CUDA graph, replays it and compares the result with a CPU
 * reference. Three things here make that checkable from outside:
 *
 *  - a fixed-seed PRNG and exact compare helpers, so a run is repeatable and a
 *    replay that differs by one bit fails;
 *  - option parsing shared by all samples (--help, --expect, --n, --replays,
 *    --iters, --no-topo-check);
 *  - a topology recorder: a small model of CUDA stream capture (streams join,
 *    events bind to the latest record, a node depends on its stream
 *    predecessor and on the records its stream waited for). Each sample issues
 *    its work through the cap_* helpers below, which feed the recorder and,
 *    unless this is a dry run, make the real CUDA call. `--expect` is a dry
 *    run that prints the recorder's view (docs/SAMPLES.md, format v1); a real
 *    run checks the same view against the graph CUDA actually captured, so
 *    the expectation the capture tests compare against is itself tested.
 *
 * The first part is plain C (driver_api.c uses it); the CUDA runtime part is
 * compiled only by nvcc.
 */
#ifndef SGCAP_SAMPLES_COMMON_H
#define SGCAP_SAMPLES_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_HEADER "# sgcap expected topology v1"

/* ---------------------------------------------------------------- options */

typedef struct {
    const char *prog;  /* argv[0] without its directory: names the variant */
    const char *about; /* the sample's --help text */
    bool expect;       /* --expect: print the expected topology, touch no GPU */
    bool topo_check;   /* compare the captured graph with the recorder */
    size_t n;          /* --n: elements per buffer */
    int replays;       /* --replays: graph launches to check */
    int iters;         /* --iters: only for samples that set it before parsing */
} sample_opts_t;

static inline void sample_usage(const sample_opts_t *o, FILE *f)
{
    fprintf(f, "usage: %s [--help] [--expect] [--n N] [--replays R]%s [--no-topo-check]\n", o->prog,
            o->iters > 0 ? " [--iters N]" : "");
}

static inline unsigned long long sample_number(const sample_opts_t *o, const char *flag,
                                               const char *text)
{
    char *end = NULL;
    unsigned long long v = text ? strtoull(text, &end, 0) : 0;
    if (!text || !*text || *end || v == 0 || text[0] == '-') {
        fprintf(stderr, "%s: %s needs a positive number\n", o->prog, flag);
        exit(2);
    }
    return v;
}

/* Defaults first, then the command line. Exits 0 after --help, 2 on a bad
 * option. A sample that takes --iters sets o->iters to its default first. */
static inline void sample_parse(sample_opts_t *o, int argc, char **argv)
{
    const char *slash = strrchr(argv[0], '/');
    o->prog = slash ? slash + 1 : argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            sample_usage(o, stdout);
            fputs(o->about, stdout);
            fputs("\noptions:\n"
                  "  --expect         print the expected captured topology (format v1,\n"
                  "                   docs/SAMPLES.md) and exit without touching the GPU\n"
                  "  --n N            elements per buffer\n"
                  "  --replays R      graph launches, each checked against the CPU\n"
                  "  --no-topo-check  skip comparing the captured graph with --expect\n",
                  stdout);
            if (o->iters > 0) fputs("  --iters N        re-captures (one graph each)\n", stdout);
            printf("defaults: --n %zu --replays %d", o->n, o->replays);
            if (o->iters > 0) printf(" --iters %d", o->iters);
            fputs("\nexit status: 0 when every check passes, 1 otherwise, 2 on bad usage\n",
                  stdout);
            exit(0);
        } else if (!strcmp(a, "--expect")) {
            o->expect = true;
        } else if (!strcmp(a, "--no-topo-check")) {
            o->topo_check = false;
        } else if (!strcmp(a, "--n")) {
            o->n = (size_t)sample_number(o, a, next);
            i++;
        } else if (!strcmp(a, "--replays")) {
            o->replays = (int)sample_number(o, a, next);
            i++;
        } else if (!strcmp(a, "--iters") && o->iters > 0) {
            o->iters = (int)sample_number(o, a, next);
            i++;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", o->prog, a);
            sample_usage(o, stderr);
            exit(2);
        }
    }
}

static inline sample_opts_t sample_defaults(const char *about)
{
    sample_opts_t o;
    memset(&o, 0, sizeof o);
    o.about = about;
    o.topo_check = true;
    o.n = (size_t)1 << 20;
    o.replays = 3;
    return o;
}

/* ----------------------------------------------------------- PRNG, checks */

/* splitmix64: tiny, and the same sequence everywhere for a given seed. */
static inline uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void fill_u32(uint32_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)(rng_next(&seed) >> 32);
}

/* Values are k/2^24 scaled into [lo, hi): exact in float, far from denormals. */
static inline void fill_f32(float *p, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        float u = (float)(rng_next(&seed) >> 40) * (1.0f / 16777216.0f);
        p[i] = lo + (hi - lo) * u;
    }
}

static inline void fill_f64(double *p, size_t n, uint64_t seed, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) {
        double u = (double)(rng_next(&seed) >> 11) * (1.0 / 9007199254740992.0);
        p[i] = lo + (hi - lo) * u;
    }
}

/* The compare helpers return the number of mismatches and print the first
 * few. Floats compare bit for bit: the kernels and the CPU reference run the
 * same IEEE operations in the same order (see the f32_ and f64_ helpers). */
#define CHECK_SHOW 5

static inline size_t check_u32(const char *prog, const char *what, const uint32_t *got,
                               const uint32_t *want, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == want[i]) continue;
        if (bad++ < CHECK_SHOW)
            fprintf(stderr, "%s: %s[%zu] = 0x%08x, expected 0x%08x\n", prog, what, i,
                    (unsigned)got[i], (unsigned)want[i]);
    }
    if (bad) fprintf(stderr, "%s: %s: %zu of %zu elements differ\n", prog, what, bad, n);
    return bad;
}

static inline size_t check_f32(const char *prog, const char *what, const float *got,
                               const float *want, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t g, w;
        memcpy(&g, &got[i], sizeof g);
        memcpy(&w, &want[i], sizeof w);
        if (g == w) continue;
        if (bad++ < CHECK_SHOW)
            fprintf(stderr, "%s: %s[%zu] = %.9g (0x%08x), expected %.9g (0x%08x)\n", prog, what, i,
                    (double)got[i], (unsigned)g, (double)want[i], (unsigned)w);
    }
    if (bad) fprintf(stderr, "%s: %s: %zu of %zu elements differ\n", prog, what, bad, n);
    return bad;
}

static inline size_t check_f64(const char *prog, const char *what, const double *got,
                               const double *want, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t g, w;
        memcpy(&g, &got[i], sizeof g);
        memcpy(&w, &want[i], sizeof w);
        if (g == w) continue;
        if (bad++ < CHECK_SHOW)
            fprintf(stderr, "%s: %s[%zu] = %.17g, expected %.17g\n", prog, what, i, got[i],
                    want[i]);
    }
    if (bad) fprintf(stderr, "%s: %s: %zu of %zu elements differ\n", prog, what, bad, n);
    return bad;
}

static inline void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------ topology recorder */

#define TOPO_MAX_STREAMS 16
#define TOPO_MAX_EVENTS 64
#define TOPO_MAX_NODES 128
#define TOPO_MAX_EDGES 256
#define TOPO_MAX_PENDING 16

/* The explicit lane: nodes added with cudaGraphAdd*Node (no stream), `x:i`
 * in the text. It is lane TOPO_LANE_X of the stream table. */
#define TOPO_LANE_X TOPO_MAX_STREAMS

/* A node as a plain int: lane * TOPO_MAX_NODES + index on the lane. */
static inline int topo_ref(int lane, int index)
{
    return lane * TOPO_MAX_NODES + index;
}

/* One cross-stream dependency: the record's node on src, the first node on
 * dst after the wait. Stream and node numbers are the sample's own stream ids
 * and per-stream node indexes; labels are applied when printing. A control
 * edge (event -1) is any other ordering: a dependency given to
 * cudaGraphAdd*Node or to cudaStreamBeginCaptureToGraph. */
typedef struct {
    int event, src_stream, src_node, dst_stream, dst_node;
} topo_edge_t;

typedef struct {
    int label; /* s<label>, or -1 while the stream is not in the capture */
    int nnodes;
    const char *type[TOPO_MAX_NODES];
    void *handle[TOPO_MAX_NODES]; /* the captured CUDA node, on a real run */
    int npending;                 /* waits not yet followed by a node */
    topo_edge_t pending[TOPO_MAX_PENDING];
    int npending_ctrl; /* capture-into-graph dependencies of the next node */
    int pending_ctrl[TOPO_MAX_PENDING];
} topo_stream_t;

typedef struct {
    int label;  /* e<label>, or -1 until first recorded in this capture */
    int stream; /* where its latest record is bound, -1 if none */
    int node;
} topo_event_t;

typedef struct {
    const char *prog;
    int graph; /* index of the current capture, -1 before the first */
    int origin;
    int nlabels, nevent_labels;
    int label_stream[TOPO_MAX_STREAMS];
    topo_stream_t stream[TOPO_MAX_STREAMS + 1]; /* + the explicit lane */
    topo_event_t event[TOPO_MAX_EVENTS];
    int nedges;
    topo_edge_t edge[TOPO_MAX_EDGES];
    int nctrl;
    topo_edge_t ctrl[TOPO_MAX_EDGES];
} topo_t;

/* A sample that issues work the model cannot describe exactly is wrong,
 * whatever the GPU says; stop before anything runs. */
static inline void topo_fail(const topo_t *t, const char *what, int a, int b)
{
    fprintf(stderr, "%s: sample design error in graph %d: %s (%d, %d)\n", t->prog, t->graph, what,
            a, b);
    exit(1);
}

static inline topo_t *topo_create(const char *prog)
{
    topo_t *t = (topo_t *)calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "%s: out of host memory\n", prog);
        exit(1);
    }
    t->prog = prog;
    t->graph = -1;
    return t;
}

/* A new graph: no streams, no nodes yet. */
static inline void topo_graph_begin(topo_t *t)
{
    const char *prog = t->prog;
    int graph = t->graph + 1;
    memset(t, 0, sizeof *t);
    t->prog = prog;
    t->graph = graph;
    t->origin = -1;
    for (int s = 0; s <= TOPO_MAX_STREAMS; s++)
        t->stream[s].label = -1;
    for (int e = 0; e < TOPO_MAX_EVENTS; e++)
        t->event[e].label = t->event[e].stream = -1;
}

/* A capture begins on `origin` into the current graph (label s0 for the
 * first capture). */
static inline void topo_capture_begin(topo_t *t, int origin)
{
    if (origin < 0 || origin >= TOPO_MAX_STREAMS) topo_fail(t, "bad origin stream", origin, 0);
    if (t->origin >= 0) topo_fail(t, "one capture per graph in the recorder", origin, t->origin);
    t->origin = origin;
    t->stream[origin].label = t->nlabels;
    t->label_stream[t->nlabels++] = origin;
}

/* A new graph captured from `origin` (cudaStreamBeginCapture). */
static inline void topo_begin(topo_t *t, int origin)
{
    topo_graph_begin(t);
    topo_capture_begin(t, origin);
}

static inline void topo_check_ref(const topo_t *t, int ref)
{
    int lane = ref / TOPO_MAX_NODES, idx = ref % TOPO_MAX_NODES;
    if (ref < 0 || lane > TOPO_LANE_X || idx >= t->stream[lane].nnodes)
        topo_fail(t, "dependency on a node that does not exist", lane, idx);
}

static inline void topo_add_ctrl(topo_t *t, int from, int to)
{
    topo_check_ref(t, from);
    topo_check_ref(t, to);
    if (t->nctrl >= TOPO_MAX_EDGES) topo_fail(t, "too many control edges", t->nctrl, 0);
    topo_edge_t *e = &t->ctrl[t->nctrl++];
    e->event = -1;
    e->src_stream = from / TOPO_MAX_NODES;
    e->src_node = from % TOPO_MAX_NODES;
    e->dst_stream = to / TOPO_MAX_NODES;
    e->dst_node = to % TOPO_MAX_NODES;
}

/* Dependencies the capture on `origin` starts from (BeginCaptureToGraph):
 * control edges into its first node. */
static inline void topo_capture_deps(topo_t *t, int origin, const int *deps, int n)
{
    topo_stream_t *st = &t->stream[origin];
    if (st->nnodes) topo_fail(t, "capture dependencies after the first node", origin, 0);
    for (int i = 0; i < n; i++) {
        topo_check_ref(t, deps[i]);
        if (st->npending_ctrl >= TOPO_MAX_PENDING) topo_fail(t, "too many dependencies", n, 0);
        st->pending_ctrl[st->npending_ctrl++] = deps[i];
    }
}

/* A node added with cudaGraphAdd*Node after the nodes deps[0..n). */
static inline int topo_explicit(topo_t *t, const char *type, const int *deps, int n)
{
    topo_stream_t *x = &t->stream[TOPO_LANE_X];
    if (x->nnodes >= TOPO_MAX_NODES) topo_fail(t, "too many explicit nodes", x->nnodes, 0);
    int idx = x->nnodes++;
    x->type[idx] = type;
    x->handle[idx] = NULL;
    for (int i = 0; i < n; i++)
        topo_add_ctrl(t, deps[i], topo_ref(TOPO_LANE_X, idx));
    return topo_ref(TOPO_LANE_X, idx);
}

/* The last node captured on stream s so far (for explicit nodes after it). */
static inline int topo_last(const topo_t *t, int s)
{
    if (s < 0 || s >= TOPO_MAX_STREAMS || t->stream[s].nnodes == 0)
        topo_fail(t, "no node on the stream yet", s, 0);
    return topo_ref(s, t->stream[s].nnodes - 1);
}

static inline void topo_check_stream(const topo_t *t, int s)
{
    if (s < 0 || s >= TOPO_MAX_STREAMS) topo_fail(t, "bad stream id", s, 0);
}

/* A node enqueued on stream s: it depends on s's previous node (implicit) and
 * on every record that s waited for since then. Returns its index on s. */
static inline int topo_node(topo_t *t, int s, const char *type)
{
    topo_check_stream(t, s);
    topo_stream_t *st = &t->stream[s];
    if (st->label < 0) topo_fail(t, "node on a stream that has not joined the capture", s, 0);
    if (st->nnodes >= TOPO_MAX_NODES) topo_fail(t, "too many nodes on stream", s, st->nnodes);
    int idx = st->nnodes++;
    st->type[idx] = type;
    st->handle[idx] = NULL;
    for (int p = 0; p < st->npending; p++) {
        if (t->nedges >= TOPO_MAX_EDGES) topo_fail(t, "too many event edges", t->nedges, 0);
        topo_edge_t e = st->pending[p];
        e.dst_node = idx;
        t->edge[t->nedges++] = e;
    }
    st->npending = 0;
    for (int p = 0; p < st->npending_ctrl; p++)
        topo_add_ctrl(t, st->pending_ctrl[p], topo_ref(s, idx));
    st->npending_ctrl = 0;
    return idx;
}

static inline void topo_record(topo_t *t, int ev, int s)
{
    topo_check_stream(t, s);
    if (ev < 0 || ev >= TOPO_MAX_EVENTS) topo_fail(t, "bad event id", ev, 0);
    topo_stream_t *st = &t->stream[s];
    if (st->label < 0) topo_fail(t, "record on a stream that has not joined the capture", ev, s);
    /* A record with no node before it, or right after a wait, binds to a
     * dependency set that v1 lines cannot name: keep every record after a
     * node of its own stream. */
    if (st->nnodes == 0) topo_fail(t, "record before any node on its stream", ev, s);
    if (st->npending) topo_fail(t, "record right after a wait (no node between)", ev, s);
    topo_event_t *e = &t->event[ev];
    if (e->label < 0) e->label = t->nevent_labels++;
    e->stream = s;
    e->node = st->nnodes - 1;
}

static inline void topo_wait(topo_t *t, int s, int ev)
{
    topo_check_stream(t, s);
    if (ev < 0 || ev >= TOPO_MAX_EVENTS) topo_fail(t, "bad event id", ev, 0);
    const topo_event_t *e = &t->event[ev];
    if (e->stream < 0) topo_fail(t, "wait on an event not recorded in this capture", s, ev);
    if (e->stream == s) topo_fail(t, "wait on the waiting stream's own record", s, ev);
    topo_stream_t *st = &t->stream[s];
    if (st->label < 0) {
        st->label = t->nlabels;
        t->label_stream[t->nlabels++] = s;
    }
    if (st->npending >= TOPO_MAX_PENDING) topo_fail(t, "too many waits before a node", s, ev);
    for (int p = 0; p < st->npending; p++)
        if (st->pending[p].src_stream == e->stream && st->pending[p].src_node == e->node)
            topo_fail(t, "the same record waited for twice before a node", s, ev);
    topo_edge_t *pe = &st->pending[st->npending++];
    pe->event = ev;
    pe->src_stream = e->stream;
    pe->src_node = e->node;
    pe->dst_stream = s;
    pe->dst_node = -1;
}

/* End of capture: every wait must have been followed by a node, and every
 * stream's last node must lead to the origin's last node (CUDA refuses an
 * unjoined capture, and a v1 description would be incomplete). */
static inline void topo_end(topo_t *t)
{
    static unsigned char seen[TOPO_MAX_STREAMS][TOPO_MAX_NODES];
    static int stack[TOPO_MAX_STREAMS * TOPO_MAX_NODES];
    const topo_stream_t *o = &t->stream[t->origin];
    if (o->nnodes == 0) topo_fail(t, "no node on the origin stream", t->origin, 0);
    for (int l = 0; l < t->nlabels; l++) {
        int s = t->label_stream[l];
        if (t->stream[s].npending) topo_fail(t, "wait with no node after it", s, 0);
        if (t->stream[s].nnodes == 0) topo_fail(t, "stream joined but has no node", s, 0);
    }
    memset(seen, 0, sizeof seen);
    int top = 0;
    stack[top++] = t->origin * TOPO_MAX_NODES + o->nnodes - 1;
    seen[t->origin][o->nnodes - 1] = 1;
    while (top > 0) {
        int cur = stack[--top], s = cur / TOPO_MAX_NODES, i = cur % TOPO_MAX_NODES;
        if (i > 0 && !seen[s][i - 1]) {
            seen[s][i - 1] = 1;
            stack[top++] = s * TOPO_MAX_NODES + i - 1;
        }
        for (int k = 0; k < t->nedges; k++) {
            const topo_edge_t *e = &t->edge[k];
            if (e->dst_stream != s || e->dst_node != i || seen[e->src_stream][e->src_node])
                continue;
            seen[e->src_stream][e->src_node] = 1;
            stack[top++] = e->src_stream * TOPO_MAX_NODES + e->src_node;
        }
    }
    for (int l = 0; l < t->nlabels; l++) {
        int s = t->label_stream[l];
        if (!seen[s][t->stream[s].nnodes - 1])
            topo_fail(t, "stream not joined back into the origin's last node", s, l);
    }
}

static inline void topo_print(const topo_t *t, FILE *f)
{
    fprintf(f, "graph %d\n", t->graph);
    for (int l = 0; l < t->nlabels; l++) {
        const topo_stream_t *st = &t->stream[t->label_stream[l]];
        fprintf(f, "stream s%d", l);
        for (int i = 0; i < st->nnodes; i++)
            fprintf(f, " %s", st->type[i]);
        fputc('\n', f);
    }
    const topo_stream_t *x = &t->stream[TOPO_LANE_X];
    if (x->nnodes) {
        fputs("explicit", f);
        for (int i = 0; i < x->nnodes; i++)
            fprintf(f, " %s", x->type[i]);
        fputc('\n', f);
    }
    for (int k = 0; k < t->nedges; k++) {
        const topo_edge_t *e = &t->edge[k];
        fprintf(f, "event e%d s%d:%d -> s%d:%d\n", t->event[e->event].label,
                t->stream[e->src_stream].label, e->src_node, t->stream[e->dst_stream].label,
                e->dst_node);
    }
    for (int k = 0; k < t->nctrl; k++) {
        const topo_edge_t *e = &t->ctrl[k];
        char a[16], b[16];
        if (e->src_stream == TOPO_LANE_X)
            snprintf(a, sizeof a, "x:%d", e->src_node);
        else
            snprintf(a, sizeof a, "s%d:%d", t->stream[e->src_stream].label, e->src_node);
        if (e->dst_stream == TOPO_LANE_X)
            snprintf(b, sizeof b, "x:%d", e->dst_node);
        else
            snprintf(b, sizeof b, "s%d:%d", t->stream[e->dst_stream].label, e->dst_node);
        fprintf(f, "control %s -> %s\n", a, b);
    }
}

/* How topo_verify reads a real graph; one implementation per API (runtime
 * below, driver in driver_api.c). Each returns 0 on success. */
typedef struct {
    int (*count_nodes)(void *graph, size_t *n);
    int (*node_type)(void *node, const char **type);
    int (*node_deps)(void *node, void **deps, size_t cap, size_t *n);
} topo_graph_api_t;

/* Compares the recorder with the graph CUDA built: same number of nodes,
 * and each node the recorder saw has the recorded type and exactly the
 * dependencies the model predicts (stream predecessor, event and control
 * edges). Returns the number of differences. */
static inline int topo_verify(const topo_t *t, void *graph, const topo_graph_api_t *api)
{
    int bad = 0;
    size_t total = (size_t)t->stream[TOPO_LANE_X].nnodes, n = 0;
    for (int l = 0; l < t->nlabels; l++)
        total += (size_t)t->stream[t->label_stream[l]].nnodes;
    if (api->count_nodes(graph, &n)) return 1;
    if (n != total) {
        fprintf(stderr, "%s: topology: graph %d has %zu nodes, expected %zu\n", t->prog, t->graph,
                n, total);
        bad++;
    }
    for (int l = 0; l <= t->nlabels; l++) {
        int lane = l < t->nlabels ? t->label_stream[l] : TOPO_LANE_X;
        const topo_stream_t *st = &t->stream[lane];
        char name[16];
        if (lane == TOPO_LANE_X)
            snprintf(name, sizeof name, "x");
        else
            snprintf(name, sizeof name, "s%d", l);
        for (int i = 0; i < st->nnodes; i++) {
            void *want[TOPO_MAX_PENDING + 1 + TOPO_MAX_EDGES], *got[TOPO_MAX_PENDING + 2];
            size_t nwant = 0, ngot = 0;
            const char *type = NULL;
            if (!st->handle[i]) {
                fprintf(stderr, "%s: topology: %s:%d was not seen in the graph\n", t->prog, name,
                        i);
                bad++;
                continue;
            }
            if (i > 0 && lane != TOPO_LANE_X) want[nwant++] = st->handle[i - 1];
            for (int k = 0; k < t->nedges; k++) {
                const topo_edge_t *e = &t->edge[k];
                if (e->dst_stream == lane && e->dst_node == i)
                    want[nwant++] = t->stream[e->src_stream].handle[e->src_node];
            }
            for (int k = 0; k < t->nctrl && nwant < TOPO_MAX_PENDING + 1 + TOPO_MAX_EDGES; k++) {
                const topo_edge_t *e = &t->ctrl[k];
                if (e->dst_stream == lane && e->dst_node == i)
                    want[nwant++] = t->stream[e->src_stream].handle[e->src_node];
            }
            if (api->node_type(st->handle[i], &type) ||
                api->node_deps(st->handle[i], got, TOPO_MAX_PENDING + 2, &ngot))
                return bad + 1;
            if (strcmp(type, st->type[i]) != 0) {
                fprintf(stderr, "%s: topology: %s:%d is a %s node, expected %s\n", t->prog, name,
                        i, type, st->type[i]);
                bad++;
            }
            bool same = ngot == nwant;
            for (size_t a = 0; same && a < nwant; a++) {
                bool found = false;
                for (size_t b = 0; b < ngot; b++)
                    found = found || got[b] == want[a];
                same = found;
            }
            if (!same) {
                fprintf(stderr,
                        "%s: topology: %s:%d has %zu dependencies, not the %zu expected "
                        "(stream predecessor plus event and control edges)\n",
                        t->prog, name, i, ngot, nwant);
                bad++;
            }
        }
    }
    return bad;
}

/* ------------------------------------------------------------ CUDA runtime */
#ifdef __CUDACC__
#include <cuda_runtime.h>

#include <initializer_list>
#include <tuple>

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorName(err_), cudaGetErrorString(err_));                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Float and double arithmetic the kernels and the CPU reference share. The
 * _rn intrinsics are never contracted into an FMA by nvcc, and the host side
 * is built with -ffp-contract=off, so both sides round the same way. */
__host__ __device__ static inline float f32_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ static inline float f32_add(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ static inline float f32_fma(float a, float b, float c)
{
    return fmaf(a, b, c);
}
__host__ __device__ static inline double f64_mul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ static inline double f64_fma(double a, double b, double c)
{
    return fma(a, b, c);
}

/* Makes a producer kernel slow enough that a consumer which is not ordered
 * after it (a lost or misbound event edge) reads the poisoned buffer instead
 * of passing by luck. */
__device__ static inline void producer_delay(unsigned ns)
{
    if (ns) __nanosleep(ns);
}

/* A capture context: the sample's streams and events (by small integer ids,
 * the same ids the recorder uses) and the recorder. In a dry run (--expect)
 * there are no streams: every cap_* call only feeds the recorder. */
typedef struct {
    const char *prog;
    topo_t *topo;
    bool dry, verify;
    int nstreams, nevents;
    cudaStream_t stream[TOPO_MAX_STREAMS];
    bool own_stream[TOPO_MAX_STREAMS];
    cudaEvent_t event[TOPO_MAX_EVENTS];
    unsigned long long capture_id;
    cudaGraph_t graph; /* the last graph cap_end returned */
} cap_t;

static inline cap_t *cap_create(const sample_opts_t *o, int nstreams, int nevents)
{
    cap_t *c = (cap_t *)calloc(1, sizeof *c);
    if (!c || nstreams > TOPO_MAX_STREAMS || nevents > TOPO_MAX_EVENTS) {
        fprintf(stderr, "%s: cap_create failed\n", o->prog);
        exit(1);
    }
    c->prog = o->prog;
    c->topo = topo_create(o->prog);
    c->dry = o->expect;
    c->verify = o->topo_check;
    c->nstreams = nstreams;
    c->nevents = nevents;
    if (c->dry) {
        puts(TOPO_HEADER);
        return c;
    }
    /* Non-blocking streams: no implicit ordering with the legacy stream. */
    for (int s = 0; s < nstreams; s++) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream[s], cudaStreamNonBlocking));
        c->own_stream[s] = true;
    }
    for (int e = 0; e < nevents; e++)
        CUDA_CHECK(cudaEventCreateWithFlags(&c->event[e], cudaEventDisableTiming));
    return c;
}

/* Lets a sample capture on a stream it did not create (the default stream in
 * the per-thread-default-stream build). */
static inline void cap_set_stream(cap_t *c, int sid, cudaStream_t s)
{
    if (c->dry) return;
    if (c->own_stream[sid]) CUDA_CHECK(cudaStreamDestroy(c->stream[sid]));
    c->stream[sid] = s;
    c->own_stream[sid] = false;
}

static inline void cap_destroy(cap_t *c)
{
    if (!c->dry) {
        for (int s = 0; s < c->nstreams; s++)
            if (c->own_stream[s]) CUDA_CHECK(cudaStreamDestroy(c->stream[s]));
        for (int e = 0; e < c->nevents; e++)
            CUDA_CHECK(cudaEventDestroy(c->event[e]));
    }
    free(c->topo);
    free(c);
}

static inline void cap_begin(cap_t *c, int sid)
{
    topo_begin(c->topo, sid);
    if (c->dry) return;
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamBeginCapture(c->stream[sid], cudaStreamCaptureModeGlobal));
    CUDA_CHECK(cudaStreamGetCaptureInfo(c->stream[sid], &st, &c->capture_id));
}

/* After each enqueue: the stream's dependency set is exactly the node just
 * captured (the same query sgcap's shim uses to tag nodes with streams). */
static inline void cap_node(cap_t *c, int sid, const char *type)
{
    int idx = topo_node(c->topo, sid, type);
    if (c->dry) return;
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    cudaGraph_t g = NULL;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    CUDA_CHECK(cudaStreamGetCaptureInfo(c->stream[sid], &st, &id, &g, &deps, &edges, &ndeps));
    if (st != cudaStreamCaptureStatusActive || id != c->capture_id || ndeps != 1) {
        fprintf(stderr,
                "%s: after a %s on stream %d: capture status %d, id %llu (expected %llu), "
                "%zu dependencies (expected 1)\n",
                c->prog, type, sid, (int)st, id, c->capture_id, ndeps);
        exit(1);
    }
    c->topo->stream[sid].handle[idx] = (void *)deps[0];
}

#define CAP_LAUNCH(c, sid, kernel, grid, block, ...)                                               \
    do {                                                                                           \
        if (!(c)->dry) {                                                                           \
            kernel<<<(grid), (block), 0, (c)->stream[sid]>>>(__VA_ARGS__);                         \
            CUDA_CHECK(cudaGetLastError());                                                        \
        }                                                                                          \
        cap_node((c), (sid), "kernel");                                                            \
    } while (0)

static inline void cap_record(cap_t *c, int ev, int sid)
{
    topo_record(c->topo, ev, sid);
    if (!c->dry) CUDA_CHECK(cudaEventRecord(c->event[ev], c->stream[sid]));
}

static inline void cap_wait(cap_t *c, int sid, int ev)
{
    topo_wait(c->topo, sid, ev);
    if (!c->dry) CUDA_CHECK(cudaStreamWaitEvent(c->stream[sid], c->event[ev], 0));
}

static inline void cap_memset(cap_t *c, int sid, void *p, int value, size_t bytes)
{
    if (!c->dry) CUDA_CHECK(cudaMemsetAsync(p, value, bytes, c->stream[sid]));
    cap_node(c, sid, "memset");
}

static inline void cap_memcpy_kind(cap_t *c, int sid, void *dst, const void *src, size_t bytes,
                                   cudaMemcpyKind kind)
{
    if (!c->dry) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, c->stream[sid]));
    cap_node(c, sid, "memcpy");
}

static inline void cap_memcpy(cap_t *c, int sid, void *dst, const void *src, size_t bytes)
{
    cap_memcpy_kind(c, sid, dst, src, bytes, cudaMemcpyDeviceToDevice);
}

/* A host function node (cudaLaunchHostFunc in the capture). */
static inline void cap_host(cap_t *c, int sid, cudaHostFn_t fn, void *data)
{
    if (!c->dry) CUDA_CHECK(cudaLaunchHostFunc(c->stream[sid], fn, data));
    cap_node(c, sid, "host");
}

static inline void cap_malloc(cap_t *c, int sid, void **p, size_t bytes)
{
    *p = NULL;
    if (!c->dry) CUDA_CHECK(cudaMallocAsync(p, bytes, c->stream[sid]));
    cap_node(c, sid, "mem_alloc");
}

static inline void cap_free(cap_t *c, int sid, void *p)
{
    if (!c->dry) CUDA_CHECK(cudaFreeAsync(p, c->stream[sid]));
    cap_node(c, sid, "mem_free");
}

static inline int rt_count_nodes(void *graph, size_t *n)
{
    CUDA_CHECK(cudaGraphGetNodes((cudaGraph_t)graph, NULL, n));
    return 0;
}

static inline int rt_node_type(void *node, const char **type)
{
    cudaGraphNodeType t;
    CUDA_CHECK(cudaGraphNodeGetType((cudaGraphNode_t)node, &t));
    switch (t) {
    case cudaGraphNodeTypeKernel:
        *type = "kernel";
        break;
    case cudaGraphNodeTypeMemcpy:
        *type = "memcpy";
        break;
    case cudaGraphNodeTypeMemset:
        *type = "memset";
        break;
    case cudaGraphNodeTypeHost:
        *type = "host";
        break;
    case cudaGraphNodeTypeGraph:
        *type = "child_graph";
        break;
    case cudaGraphNodeTypeEmpty:
        *type = "empty";
        break;
    case cudaGraphNodeTypeWaitEvent:
        *type = "event_wait";
        break;
    case cudaGraphNodeTypeEventRecord:
        *type = "event_record";
        break;
    case cudaGraphNodeTypeMemAlloc:
        *type = "mem_alloc";
        break;
    case cudaGraphNodeTypeMemFree:
        *type = "mem_free";
        break;
    case cudaGraphNodeTypeConditional:
        *type = "conditional";
        break;
    default:
        *type = "other";
        break;
    }
    return 0;
}

static inline int rt_node_deps(void *node, void **deps, size_t cap, size_t *n)
{
    cudaGraphNode_t nodes[TOPO_MAX_PENDING + 2];
    cudaGraphEdgeData edges[TOPO_MAX_PENDING + 2];
    size_t count = 0;
    CUDA_CHECK(cudaGraphNodeGetDependencies((cudaGraphNode_t)node, NULL, NULL, &count));
    if (count > cap || count > TOPO_MAX_PENDING + 2) {
        *n = count; /* more than any sample expects: report the count only */
        return 0;
    }
    /* A root node: the runtime answers a second query with an empty array as
     * an invalid value (seen on CUDA 13.0, driver 580), so don't ask. */
    if (count == 0) {
        *n = 0;
        return 0;
    }
    CUDA_CHECK(cudaGraphNodeGetDependencies((cudaGraphNode_t)node, nodes, edges, &count));
    for (size_t i = 0; i < count; i++)
        deps[i] = (void *)nodes[i];
    *n = count;
    return 0;
}

/* Ends the capture begun on stream sid. A dry run prints the graph's
 * expected topology; a real run compares it with what CUDA captured. */
static inline cudaGraph_t cap_end(cap_t *c, int sid)
{
    topo_end(c->topo);
    if (c->dry) {
        topo_print(c->topo, stdout);
        return NULL;
    }
    CUDA_CHECK(cudaStreamEndCapture(c->stream[sid], &c->graph));
    if (c->verify) {
        static const topo_graph_api_t api = {rt_count_nodes, rt_node_type, rt_node_deps};
        if (topo_verify(c->topo, (void *)c->graph, &api)) {
            fprintf(stderr, "%s: FAIL: captured graph %d differs from --expect (its view:)\n",
                    c->prog, c->topo->graph);
            topo_print(c->topo, stderr);
            exit(1);
        }
    }
    return c->graph;
}

/* ------------------------------------- graphs built node by node (explicit) */

/* The way XLA builds its command buffers: cudaGraphAdd*Node with explicit
 * dependencies, given as recorder refs (an xg_* result, or cap_last() of a
 * captured stream). Each xg_* call feeds the recorder (explicit lane, one
 * control edge per dependency) and, unless dry, adds the real node. */
typedef std::initializer_list<int> deps_t;

static inline int xg_handles(cap_t *c, deps_t deps, cudaGraphNode_t *out)
{
    int n = 0;
    for (int r : deps) {
        topo_check_ref(c->topo, r);
        if (n >= TOPO_MAX_PENDING) topo_fail(c->topo, "too many dependencies", n, 0);
        out[n++] = (cudaGraphNode_t)c->topo->stream[r / TOPO_MAX_NODES].handle[r % TOPO_MAX_NODES];
    }
    return n;
}

static inline int xg_record(cap_t *c, const char *type, deps_t deps, cudaGraphNode_t node)
{
    int refs[TOPO_MAX_PENDING], n = 0;
    for (int r : deps)
        refs[n++] = r;
    int ref = topo_explicit(c->topo, type, refs, n);
    c->topo->stream[TOPO_LANE_X].handle[ref % TOPO_MAX_NODES] = (void *)node;
    return ref;
}

/* A new graph (cudaGraphCreate) built node by node, perhaps with one capture
 * into it (cap_begin_to_graph). */
static inline void xg_begin(cap_t *c)
{
    topo_graph_begin(c->topo);
    if (!c->dry) CUDA_CHECK(cudaGraphCreate(&c->graph, 0));
}

/* Print (dry run) or verify the graph begun with xg_begin; returns it. */
static inline cudaGraph_t xg_end(cap_t *c)
{
    if (c->dry) {
        topo_print(c->topo, stdout);
        return NULL;
    }
    if (c->verify) {
        static const topo_graph_api_t api = {rt_count_nodes, rt_node_type, rt_node_deps};
        if (topo_verify(c->topo, (void *)c->graph, &api)) {
            fprintf(stderr, "%s: FAIL: graph %d differs from --expect (its view:)\n", c->prog,
                    c->topo->graph);
            topo_print(c->topo, stderr);
            exit(1);
        }
    }
    return c->graph;
}

/* A kernel node in any graph (bodies too): the arguments are converted to
 * the kernel's parameter types and passed by address, as <<<>>> does. */
template <typename... P, typename... A>
static inline cudaGraphNode_t graph_add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                               void (*kernel)(P...), unsigned grid, unsigned block,
                                               A... args)
{
    std::tuple<P...> values(args...);
    void *ptrs[sizeof...(P) + 1];
    int i = 0;
    std::apply([&](auto &...v) { ((ptrs[i++] = (void *)&v), ...); }, values);
    cudaKernelNodeParams p{};
    p.func = (void *)kernel;
    p.gridDim = dim3(grid);
    p.blockDim = dim3(block);
    p.kernelParams = ptrs;
    cudaGraphNode_t node = NULL;
    CUDA_CHECK(cudaGraphAddKernelNode(&node, g, deps, n, &p));
    return node;
}

template <typename... P, typename... A>
static inline int xg_kernel(cap_t *c, deps_t deps, void (*kernel)(P...), unsigned grid,
                            unsigned block, A... args)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry) node = graph_add_kernel(c->graph, d, (size_t)n, kernel, grid, block, args...);
    return xg_record(c, "kernel", deps, node);
}

static inline int xg_memset(cap_t *c, deps_t deps, void *dst, int value, size_t bytes)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry) {
        cudaMemsetParams p;
        memset(&p, 0, sizeof p);
        p.dst = dst;
        p.value = (unsigned)value;
        p.elementSize = 1;
        p.width = bytes;
        p.height = 1;
        CUDA_CHECK(cudaGraphAddMemsetNode(&node, c->graph, d, (size_t)n, &p));
    }
    return xg_record(c, "memset", deps, node);
}

static inline int xg_memcpy(cap_t *c, deps_t deps, void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry)
        CUDA_CHECK(cudaGraphAddMemcpyNode1D(&node, c->graph, d, (size_t)n, dst, src, bytes, kind));
    return xg_record(c, "memcpy", deps, node);
}

/* A graph allocation (mem_alloc node); *p is its address, fixed for the life
 * of the graph. */
static inline int xg_alloc(cap_t *c, deps_t deps, void **p, size_t bytes)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    *p = NULL;
    if (!c->dry) {
        int dev = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        cudaMemAllocNodeParams ap;
        memset(&ap, 0, sizeof ap);
        ap.poolProps.allocType = cudaMemAllocationTypePinned;
        ap.poolProps.location.type = cudaMemLocationTypeDevice;
        ap.poolProps.location.id = dev;
        ap.bytesize = bytes;
        CUDA_CHECK(cudaGraphAddMemAllocNode(&node, c->graph, d, (size_t)n, &ap));
        *p = ap.dptr;
    }
    return xg_record(c, "mem_alloc", deps, node);
}

static inline int xg_free(cap_t *c, deps_t deps, void *p)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry) CUDA_CHECK(cudaGraphAddMemFreeNode(&node, c->graph, d, (size_t)n, p));
    return xg_record(c, "mem_free", deps, node);
}

static inline int xg_empty(cap_t *c, deps_t deps)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry) CUDA_CHECK(cudaGraphAddEmptyNode(&node, c->graph, d, (size_t)n));
    return xg_record(c, "empty", deps, node);
}

/* A child graph node; CUDA embeds a copy of `child`. */
static inline int xg_child(cap_t *c, deps_t deps, cudaGraph_t child)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry) CUDA_CHECK(cudaGraphAddChildGraphNode(&node, c->graph, d, (size_t)n, child));
    return xg_record(c, "child_graph", deps, node);
}

static inline int xg_host(cap_t *c, deps_t deps, cudaHostFn_t fn, void *data)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    if (!c->dry) {
        cudaHostNodeParams p = {fn, data};
        CUDA_CHECK(cudaGraphAddHostNode(&node, c->graph, d, (size_t)n, &p));
    }
    return xg_record(c, "host", deps, node);
}

/* A conditional node with one body (*body, NULL in a dry run), to be filled
 * with cudaGraphAdd*Node or cudaStreamBeginCaptureToGraph; bodies are not
 * part of the v1 view. */
static inline int xg_conditional(cap_t *c, deps_t deps, cudaGraphConditionalHandle h,
                                 cudaGraphConditionalNodeType type, cudaGraph_t *body)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {}, node = NULL;
    int n = xg_handles(c, deps, d);
    *body = NULL;
    if (!c->dry) {
        /* its union has members with constructors: build it in zeroed bytes */
        alignas(cudaGraphNodeParams) unsigned char raw[sizeof(cudaGraphNodeParams)];
        memset(raw, 0, sizeof raw);
        cudaGraphNodeParams *p = reinterpret_cast<cudaGraphNodeParams *>(raw);
        p->type = cudaGraphNodeTypeConditional;
        p->conditional.handle = h;
        p->conditional.type = type;
        p->conditional.size = 1;
        CUDA_CHECK(cudaGraphAddNode(&node, c->graph, d, NULL, (size_t)n, p));
        *body = p->conditional.phGraph_out[0];
    }
    return xg_record(c, "conditional", deps, node);
}

/* A capture into the graph begun with xg_begin, starting after deps
 * (control edges into the first captured node). */
static inline void cap_begin_to_graph(cap_t *c, int sid, deps_t deps)
{
    cudaGraphNode_t d[TOPO_MAX_PENDING] = {};
    int n = xg_handles(c, deps, d), refs[TOPO_MAX_PENDING], k = 0;
    for (int r : deps)
        refs[k++] = r;
    topo_capture_begin(c->topo, sid);
    topo_capture_deps(c->topo, sid, refs, k);
    if (c->dry) return;
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamBeginCaptureToGraph(c->stream[sid], c->graph, n ? d : NULL, NULL,
                                             (size_t)n, cudaStreamCaptureModeGlobal));
    CUDA_CHECK(cudaStreamGetCaptureInfo(c->stream[sid], &st, &c->capture_id));
}

/* Ends a capture begun with cap_begin_to_graph; the graph stays open for
 * more explicit nodes until xg_end. */
static inline void cap_end_to_graph(cap_t *c, int sid)
{
    topo_end(c->topo);
    if (c->dry) return;
    cudaGraph_t g = NULL;
    CUDA_CHECK(cudaStreamEndCapture(c->stream[sid], &g));
    if (g != c->graph) {
        fprintf(stderr, "%s: a capture into a graph ended with another graph\n", c->prog);
        exit(1);
    }
}

static inline int cap_last(cap_t *c, int sid)
{
    return topo_last(c->topo, sid);
}

/* ------------------------------------------------ device memory and graphs */

static inline void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
}

/* Setup and readback go through the device-wide synchronisation so they are
 * ordered with the non-blocking streams the graphs run on. */
static inline void dev_upload(void *dst, const void *src, size_t bytes)
{
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
}

static inline void dev_download(void *dst, const void *src, size_t bytes)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

/* Outputs are overwritten with a pattern before every launch, so a replay
 * that skips a node cannot pass on the previous launch's results. */
static inline void dev_poison(void *p, size_t bytes)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(p, 0xA5, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
}

static inline cudaGraphExec_t graph_instantiate(cudaGraph_t g)
{
    cudaGraphExec_t e = NULL;
    CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
    return e;
}

static inline void graph_run(cudaGraphExec_t e, cudaStream_t s)
{
    CUDA_CHECK(cudaGraphLaunch(e, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaGetLastError());
}

static inline unsigned blocks_for(size_t n, unsigned block)
{
    return (unsigned)((n + block - 1) / block);
}

#endif /* __CUDACC__ */
#endif /* SGCAP_SAMPLES_COMMON_H */
