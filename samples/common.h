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

/* One cross-stream dependency: the record's node on src, the first node on
 * dst after the wait. Stream and node numbers are the sample's own stream ids
 * and per-stream node indexes; labels are applied when printing. */
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
    topo_stream_t stream[TOPO_MAX_STREAMS];
    topo_event_t event[TOPO_MAX_EVENTS];
    int nedges;
    topo_edge_t edge[TOPO_MAX_EDGES];
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

static inline void topo_begin(topo_t *t, int origin)
{
    const char *prog = t->prog;
    int graph = t->graph + 1;
    memset(t, 0, sizeof *t);
    t->prog = prog;
    t->graph = graph;
    for (int s = 0; s < TOPO_MAX_STREAMS; s++)
        t->stream[s].label = -1;
    for (int e = 0; e < TOPO_MAX_EVENTS; e++)
        t->event[e].label = t->event[e].stream = -1;
    if (origin < 0 || origin >= TOPO_MAX_STREAMS) topo_fail(t, "bad origin stream", origin, 0);
    t->origin = origin;
    t->stream[origin].label = t->nlabels;
    t->label_stream[t->nlabels++] = origin;
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
    for (int k = 0; k < t->nedges; k++) {
        const topo_edge_t *e = &t->edge[k];
        fprintf(f, "event e%d s%d:%d -> s%d:%d\n", t->event[e->event].label,
                t->stream[e->src_stream].label, e->src_node, t->stream[e->dst_stream].label,
                e->dst_node);
    }
}

/* How topo_verify reads a real graph; one implementation per API (runtime
 * below, driver in driver_api.c). Each returns 0 on success. */
typedef struct {
    int (*count_nodes)(void *graph, size_t *n);
    int (*node_type)(void *node, const char **type);
    int (*node_deps)(void *node, void **deps, size_t cap, size_t *n);
} topo_graph_api_t;

/* Compares the recorder with the graph CUDA captured: same number of nodes,
 * and each node the recorder saw has the recorded type and exactly the
 * dependencies the model predicts. Returns the number of differences. */
static inline int topo_verify(const topo_t *t, void *graph, const topo_graph_api_t *api)
{
    int bad = 0;
    size_t total = 0, n = 0;
    for (int l = 0; l < t->nlabels; l++)
        total += (size_t)t->stream[t->label_stream[l]].nnodes;
    if (api->count_nodes(graph, &n)) return 1;
    if (n != total) {
        fprintf(stderr, "%s: topology: graph %d has %zu nodes, expected %zu\n", t->prog, t->graph,
                n, total);
        bad++;
    }
    for (int l = 0; l < t->nlabels; l++) {
        const topo_stream_t *st = &t->stream[t->label_stream[l]];
        for (int i = 0; i < st->nnodes; i++) {
            void *want[TOPO_MAX_PENDING + 1], *got[TOPO_MAX_PENDING + 2];
            size_t nwant = 0, ngot = 0;
            const char *type = NULL;
            if (!st->handle[i]) {
                fprintf(stderr, "%s: topology: s%d:%d was not seen in the capture\n", t->prog, l,
                        i);
                bad++;
                continue;
            }
            if (i > 0) want[nwant++] = st->handle[i - 1];
            for (int k = 0; k < t->nedges; k++) {
                const topo_edge_t *e = &t->edge[k];
                if (e->dst_stream == t->label_stream[l] && e->dst_node == i)
                    want[nwant++] = t->stream[e->src_stream].handle[e->src_node];
            }
            if (api->node_type(st->handle[i], &type) ||
                api->node_deps(st->handle[i], got, TOPO_MAX_PENDING + 2, &ngot))
                return bad + 1;
            if (strcmp(type, st->type[i]) != 0) {
                fprintf(stderr, "%s: topology: s%d:%d is a %s node, expected %s\n", t->prog, l, i,
                        type, st->type[i]);
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
                        "%s: topology: s%d:%d has %zu dependencies, not the %zu expected "
                        "(stream predecessor plus event edges)\n",
                        t->prog, l, i, ngot, nwant);
                bad++;
            }
        }
    }
    return bad;
}

/* ------------------------------------------------------------ CUDA runtime */
#ifdef __CUDACC__
#include <cuda_runtime.h>

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

static inline void cap_memcpy(cap_t *c, int sid, void *dst, const void *src, size_t bytes)
{
    if (!c->dry)
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream[sid]));
    cap_node(c, sid, "memcpy");
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
