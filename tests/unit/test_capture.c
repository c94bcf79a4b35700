/* test_capture.c: CPU tests of the capture module's pure parts: the device
 * memory interval map, the capture bookkeeping (stream and event labels,
 * record/wait pairing, edge kinds), assembling a model from a graph's
 * structure, the dedup digest, bundle naming and the bundle bound, and the
 * expected-topology comparison (against the golden fixture bundles and the
 * samples' reviewed --expect files).
 *
 * The bookkeeping is driven by a small fake of the CUDA stream-capture
 * semantics (fake_*): it keeps each stream's real dependency set, makes the
 * nodes and edges a driver would, and hands the book exactly what
 * cuStreamGetCaptureInfo would return. Whole sample captures are replayed
 * through it and must come out as their samples/expected/NAME.topo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/assemble.h"
#include "capture/book.h"
#include "capture/digest.h"
#include "capture/extents.h"
#include "capture/memmap.h"
#include "capture/outbox.h"
#include "capture/arena.h"
#include "capture/reasons.h"
#include "tests/support/topo.h"
#include "graph/bundle.h"
#include "graph/graph.h"

/* ---- memmap ------------------------------------------------------------------- */

static void test_memmap_basic(void **state)
{
    (void)state;
    sg_memmap_t m;
    sg_memmap_init(&m);
    uint64_t a, b;
    assert_int_equal(sg_memmap_add(&m, 0x1000, 0x100, SG_BUFFER_DEVICE, 0, false, &a), SG_OK);
    assert_int_equal(sg_memmap_add(&m, 0x3000, 0x100, SG_BUFFER_ASYNC, 0, false, &b), SG_OK);
    assert_int_not_equal(a, b);
    assert_int_equal(sg_memmap_add(&m, 0x5000, 0, SG_BUFFER_DEVICE, 0, false, NULL), SG_EINVAL);
    assert_null(sg_memmap_find(&m, 0xfff));
    assert_non_null(sg_memmap_find(&m, 0x1000));
    assert_int_equal(sg_memmap_find(&m, 0x10ff)->id, a);
    assert_null(sg_memmap_find(&m, 0x1100));
    assert_int_equal(sg_memmap_find(&m, 0x3080)->kind, SG_BUFFER_ASYNC);
    assert_int_equal(m.bytes, 0x200);
    /* every change moves the generation (raw digests rely on it); lookups
     * and refused changes do not */
    uint64_t gen = m.generation;
    sg_memmap_find(&m, 0x1000);
    assert_int_equal(sg_memmap_remove_at(&m, 0x2000), SG_ENOENT);
    assert_int_equal(m.generation, gen);
    assert_int_equal(sg_memmap_add(&m, 0x7000, 0x10, SG_BUFFER_DEVICE, 0, false, NULL), SG_OK);
    assert_true(m.generation > gen);
    gen = m.generation;
    assert_int_equal(sg_memmap_remove_at(&m, 0x7000), SG_OK);
    assert_true(m.generation > gen);
    gen = m.generation;
    sg_memmap_remove_span(&m, 0x9000, 0x10);
    assert_true(m.generation > gen);
    assert_int_equal(sg_memmap_remove_at(&m, 0x1080), SG_ENOENT);
    assert_int_equal(sg_memmap_remove_at(&m, 0x1000), SG_OK);
    assert_null(sg_memmap_find(&m, 0x1000));
    assert_int_equal(m.n, 1);
    /* An overlapping add replaces what it covers. */
    assert_int_equal(sg_memmap_add(&m, 0x2f00, 0x180, SG_BUFFER_HOST_PINNED, 0, false, NULL),
                     SG_OK);
    assert_int_equal(sg_memmap_find(&m, 0x3000)->kind, SG_BUFFER_HOST_PINNED);
    assert_int_equal(sg_memmap_find(&m, 0x3090)->kind, SG_BUFFER_ASYNC);
    assert_int_equal(sg_memmap_find(&m, 0x3090)->start, 0x3080);
    assert_int_equal(m.bytes, 0x180 + 0x80);
    sg_memmap_clear(&m);
    assert_int_equal(m.n, 0);
    assert_null(sg_memmap_find(&m, 0x3000));
    sg_memmap_clear(&m);
}

static void test_memmap_vmm_merge_and_split(void **state)
{
    (void)state;
    sg_memmap_t m;
    sg_memmap_init(&m);
    uint64_t id1, id2, id3;
    /* Three chunks mapped one after another into reservation 7. */
    assert_int_equal(sg_memmap_add(&m, 0x100000, 0x10000, SG_BUFFER_DEVICE, 7, true, &id1), 0);
    assert_int_equal(sg_memmap_add(&m, 0x120000, 0x10000, SG_BUFFER_DEVICE, 7, true, &id3), 0);
    assert_int_equal(m.n, 2);
    assert_int_equal(sg_memmap_add(&m, 0x110000, 0x10000, SG_BUFFER_DEVICE, 7, true, &id2), 0);
    assert_int_equal(m.n, 1); /* the middle chunk joined both neighbours */
    assert_int_equal(id2, id1);
    const sg_memrange_t *r = sg_memmap_find(&m, 0x12ffff);
    assert_non_null(r);
    assert_int_equal(r->start, 0x100000);
    assert_int_equal(r->size, 0x30000);
    /* Another reservation does not merge. */
    assert_int_equal(sg_memmap_add(&m, 0x130000, 0x10000, SG_BUFFER_DEVICE, 8, true, NULL), 0);
    assert_int_equal(m.n, 2);
    /* Unmapping the middle splits the merged range in two. */
    assert_int_equal(sg_memmap_remove_span(&m, 0x110000, 0x10000), 0x10000);
    assert_int_equal(m.n, 3);
    assert_null(sg_memmap_find(&m, 0x118000));
    assert_int_equal(sg_memmap_find(&m, 0x10ffff)->start, 0x100000);
    assert_int_equal(sg_memmap_find(&m, 0x120000)->start, 0x120000);
    assert_int_not_equal(sg_memmap_find(&m, 0x120000)->id, sg_memmap_find(&m, 0x100000)->id);
    assert_int_equal(m.bytes, 0x30000);
    /* A span covering several ranges and parts of two. */
    assert_int_equal(sg_memmap_remove_span(&m, 0x108000, 0x30000), 0x8000 + 0x10000 + 0x8000);
    assert_int_equal(m.bytes, 0x10000);
    sg_memmap_clear(&m);
}

/* Random operations against a byte-per-page shadow. */
static void test_memmap_random(void **state)
{
    (void)state;
    enum { PAGES = 512 };
    static uint64_t shadow[PAGES]; /* range id covering the page, 0 = none */
    memset(shadow, 0, sizeof shadow);
    sg_memmap_t m;
    sg_memmap_init(&m);
    uint64_t seed = 12345;
    for (int it = 0; it < 20000; it++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(seed >> 33);
        uint32_t p = r % PAGES, len = 1 + (r >> 9) % 16;
        if (p + len > PAGES) len = PAGES - p;
        uint64_t base = 0x7f0000000000ull;
        switch (r % 3) {
        case 0: {
            uint64_t id;
            assert_int_equal(sg_memmap_add(&m, base + p * 4096ull, len * 4096ull, SG_BUFFER_DEVICE,
                                           0, false, &id),
                             SG_OK);
            for (uint32_t i = 0; i < len; i++)
                shadow[p + i] = id;
            break;
        }
        case 1:
            sg_memmap_remove_span(&m, base + p * 4096ull + 17, len * 4096ull - 17);
            /* page granularity in the shadow: drop pages fully or partly hit */
            for (uint32_t i = 0; i < len; i++)
                shadow[p + i] = 0;
            break;
        default: {
            const sg_memrange_t *x = sg_memmap_find(&m, base + p * 4096ull + 100);
            if (shadow[p] == 0)
                assert_null(x);
            else
                assert_non_null(x); /* (a split tail gets a new id: not compared) */
            break;
        }
        }
        /* invariants: sorted, disjoint, byte total */
        uint64_t total = 0;
        for (size_t i = 0; i < m.n; i++) {
            total += m.r[i].size;
            if (i) assert_true(m.r[i - 1].start + m.r[i - 1].size <= m.r[i].start);
        }
        assert_int_equal(total, m.bytes);
    }
    sg_memmap_clear(&m);
}

/* ---- a fake CUDA stream capture ------------------------------------------------ */

#define FK_MAX 64

typedef struct {
    uint64_t deps[FK_MAX];
    size_t n;
    bool in;
} fk_stream_t;

typedef struct {
    sg_book_t *book;
    uint64_t capture_id, graph;
    uint64_t next_node;
    fk_stream_t s[16];
    struct {
        uint64_t deps[FK_MAX];
        size_t n;
    } e[16];
    sg_asm_node_t nodes[256];
    uint32_t n_nodes;
    sg_asm_edge_t edges[512];
    uint32_t n_edges;
} fake_t;

static uint64_t skey(int s)
{
    return 0x1000 + (uint64_t)s;
}

static uint64_t ehandle(int e)
{
    return 0x2000 + (uint64_t)e;
}

static sg_book_stream_info_t sinfo(int s)
{
    sg_book_stream_info_t i = {skey(s), skey(s), 100 + (uint64_t)s, 1, 0, false};
    return i;
}

static void fk_begin(fake_t *f, int s, uint64_t graph)
{
    f->capture_id++;
    f->graph = graph;
    memset(f->s, 0, sizeof f->s);
    f->s[s].in = true;
    sg_book_stream_info_t i = sinfo(s);
    assert_int_equal(sg_book_begin(f->book, f->capture_id, &i, graph, "global", NULL, 0), SG_OK);
}

static uint64_t fk_node(fake_t *f, int s, sg_node_type_t type)
{
    fk_stream_t *st = &f->s[s];
    assert_true(st->in);
    uint64_t h = ++f->next_node;
    f->nodes[f->n_nodes++] = (sg_asm_node_t){h, type, (uint32_t)type};
    for (size_t i = 0; i < st->n; i++)
        f->edges[f->n_edges++] = (sg_asm_edge_t){st->deps[i], h, 0, 0, 0};
    st->deps[0] = h;
    st->n = 1;
    assert_int_equal(sg_book_enqueue(f->book, skey(s), 7, st->deps, st->n), 1);
    return h;
}

static void fk_record(fake_t *f, int e, int s)
{
    memcpy(f->e[e].deps, f->s[s].deps, sizeof f->s[s].deps);
    f->e[e].n = f->s[s].n;
    assert_int_equal(sg_book_record(f->book, skey(s), ehandle(e)), SG_OK);
}

static void fk_wait(fake_t *f, int s, int e)
{
    fk_stream_t *st = &f->s[s];
    st->in = true;
    for (size_t i = 0; i < f->e[e].n; i++) {
        bool have = false;
        for (size_t j = 0; j < st->n; j++)
            have |= st->deps[j] == f->e[e].deps[i];
        if (!have) st->deps[st->n++] = f->e[e].deps[i];
    }
    sg_book_stream_info_t i = sinfo(s);
    assert_int_equal(sg_book_wait(f->book, &i, ehandle(e), f->capture_id, st->deps, st->n), SG_OK);
}

static void fk_end(fake_t *f, int s)
{
    assert_int_equal(sg_book_end(f->book, skey(s), f->graph, true), SG_OK);
}

/* Assemble the fake graph with its record into a model graph. */
static sg_graph_t *fk_model(fake_t *f, sg_asm_report_t *rep)
{
    const sg_capture_record_t *rec = sg_book_find_record(f->book, f->graph);
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    sg_node_id_t ids[256];
    assert_int_equal(sg_assemble(g, rec, f->nodes, f->n_nodes, f->edges, f->n_edges, ids, rep),
                     SG_OK);
    return g;
}

static fake_t *fk_create(void)
{
    fake_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->book = sg_book_create(NULL);
    assert_non_null(f->book);
    return f;
}

static void fk_destroy(fake_t *f)
{
    sg_book_destroy(f->book);
    free(f);
}

static char *read_text(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, fp), (size_t)n);
    p[n] = '\0';
    fclose(fp);
    *len = (size_t)n;
    return p;
}

/* The model must have exactly the topology of `expect` (graph 0). */
static void expect_topology(const sg_graph_t *g, const char *expect)
{
    sg_topo_t want;
    char err[128];
    assert_int_equal(sg_topo_parse(expect, strlen(expect), &want, err, sizeof err), SG_OK);
    assert_true(want.n >= 1);
    sg_topo_graph_t got;
    assert_int_equal(sg_topo_from_graph(g, &got), SG_OK);
    char report[4096];
    int diff = sg_topo_compare(&want.graphs[0], &got, report, sizeof report);
    if (diff) {
        char text[4096];
        sg_topo_print(&got, text, sizeof text);
        print_message("differences:\n%sgot:\n%s", report, text);
    }
    assert_int_equal(diff, 0);
    sg_topo_graph_free(&got);
    sg_topo_free(&want);
}

static void expect_sample_topology(const sg_graph_t *g, const char *sample)
{
    char path[512];
    snprintf(path, sizeof path, "%s/samples/expected/%s.topo", SGCAP_SOURCE_DIR, sample);
    size_t len;
    char *text = read_text(path, &len);
    assert_non_null(text);
    expect_topology(g, text);
    free(text);
}

/* ---- bookkeeping through whole sample captures ------------------------------------ */

enum { S0, S1, S2, S3 };

static void test_book_fork_join(void **state)
{
    (void)state;
    fake_t *f = fk_create();
    fk_begin(f, S0, 0x900);
    uint64_t a = fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 0, S0);
    fk_wait(f, S1, 0);
    fk_node(f, S1, SG_NODE_KERNEL);
    uint64_t sq = fk_node(f, S1, SG_NODE_KERNEL);
    fk_record(f, 1, S1);
    fk_wait(f, S2, 0);
    uint64_t c = fk_node(f, S2, SG_NODE_KERNEL);
    fk_record(f, 2, S2);
    fk_wait(f, S0, 1);
    fk_wait(f, S0, 2);
    uint64_t comb = fk_node(f, S0, SG_NODE_KERNEL);
    fk_end(f, S0);

    const sg_capture_record_t *rec = sg_book_find_record(f->book, 0x900);
    assert_non_null(rec);
    assert_int_equal(rec->n_streams, 3);
    assert_int_equal(rec->n_events, 3);
    assert_int_equal(rec->n_tags, 5);
    const sg_tag_t *t = sg_book_find_tag(rec, comb);
    assert_non_null(t);
    assert_int_equal(t->stream, 0);
    assert_int_equal(t->seq, 4);
    assert_int_equal(t->n_preds, 3);
    assert_int_equal(sg_dep_find(t->preds, t->n_preds, a)->kind, SG_EDGE_STREAM);
    assert_int_equal(sg_dep_find(t->preds, t->n_preds, sq)->kind, SG_EDGE_EVENT);
    assert_int_equal(sg_dep_find(t->preds, t->n_preds, sq)->event, 1);
    assert_int_equal(sg_dep_find(t->preds, t->n_preds, c)->event, 2);
    uint8_t kind;
    uint32_t ev;
    assert_true(sg_book_edge_kind(rec, a, c, &kind, &ev));
    assert_int_equal(kind, SG_EDGE_EVENT);
    assert_int_equal(ev, 0);
    assert_false(sg_book_edge_kind(rec, c, a, &kind, &ev)); /* no such edge predicted */

    sg_asm_report_t rep;
    sg_graph_t *g = fk_model(f, &rep);
    assert_true(sg_asm_report_ok(&rep, true));
    assert_int_equal(rep.tagged, 5);
    assert_int_equal(rep.explained, 6);
    expect_sample_topology(g, "fork_join");
    sg_graph_destroy(g);
    fk_destroy(f);
}

static void test_book_event_reuse(void **state)
{
    (void)state;
    fake_t *f = fk_create();
    fk_begin(f, S0, 0x900);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 0, S0);
    fk_wait(f, S1, 0);
    fk_node(f, S1, SG_NODE_KERNEL);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 0, S0); /* the latest record now binds to s0:1 */
    fk_wait(f, S2, 0);
    fk_node(f, S2, SG_NODE_KERNEL);
    fk_record(f, 1, S1);
    fk_record(f, 2, S2);
    fk_wait(f, S0, 1);
    fk_wait(f, S0, 2);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_end(f, S0);
    sg_asm_report_t rep;
    sg_graph_t *g = fk_model(f, &rep);
    assert_true(sg_asm_report_ok(&rep, true));
    expect_sample_topology(g, "event_reuse");
    sg_graph_destroy(g);
    fk_destroy(f);
}

static void test_book_two_waiters_and_fan3(void **state)
{
    (void)state;
    fake_t *f = fk_create();
    fk_begin(f, S0, 0x901);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 0, S0);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_wait(f, S1, 0);
    fk_node(f, S1, SG_NODE_KERNEL);
    fk_wait(f, S2, 0);
    fk_node(f, S2, SG_NODE_KERNEL);
    fk_record(f, 1, S1);
    fk_record(f, 2, S2);
    fk_wait(f, S0, 1);
    fk_wait(f, S0, 2);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_end(f, S0);
    sg_asm_report_t rep;
    sg_graph_t *g = fk_model(f, &rep);
    expect_sample_topology(g, "two_waiters");
    sg_graph_destroy(g);

    /* fan3: a side-to-side edge and a three-way join. */
    memset(f->nodes, 0, sizeof f->nodes);
    f->n_nodes = f->n_edges = 0;
    fk_begin(f, S0, 0x902);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 0, S0);
    fk_wait(f, S1, 0);
    fk_node(f, S1, SG_NODE_KERNEL);
    fk_record(f, 1, S1);
    fk_node(f, S1, SG_NODE_KERNEL);
    fk_wait(f, S2, 0);
    fk_node(f, S2, SG_NODE_KERNEL);
    fk_wait(f, S2, 1);
    fk_node(f, S2, SG_NODE_KERNEL);
    fk_wait(f, S3, 0);
    fk_node(f, S3, SG_NODE_KERNEL);
    fk_record(f, 2, S1);
    fk_record(f, 3, S2);
    fk_record(f, 4, S3);
    fk_wait(f, S0, 2);
    fk_wait(f, S0, 3);
    fk_wait(f, S0, 4);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_end(f, S0);
    g = fk_model(f, &rep);
    assert_true(sg_asm_report_ok(&rep, true));
    expect_sample_topology(g, "fan3");
    sg_graph_destroy(g);
    fk_destroy(f);
}

/* Labels follow join order, not the program's stream numbering. */
static void test_book_labels_follow_join_order(void **state)
{
    (void)state;
    fake_t *f = fk_create();
    fk_begin(f, S3, 0x903); /* origin is the program's 4th stream */
    fk_node(f, S3, SG_NODE_MEMSET);
    fk_record(f, 5, S3);
    fk_wait(f, S2, 5); /* joins first: s1 */
    fk_node(f, S2, SG_NODE_MEMCPY);
    fk_record(f, 3, S2); /* first record of event 3: e1 */
    fk_wait(f, S0, 3);   /* s2 */
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 9, S0); /* e2 */
    fk_wait(f, S3, 9);
    fk_node(f, S3, SG_NODE_KERNEL);
    fk_end(f, S3);
    sg_asm_report_t rep;
    sg_graph_t *g = fk_model(f, &rep);
    expect_topology(g, "# sgcap expected topology v1\n"
                       "graph 0\n"
                       "stream s0 memset kernel\n"
                       "stream s1 memcpy\n"
                       "stream s2 kernel\n"
                       "event e0 s0:0 -> s1:0\n"
                       "event e1 s1:0 -> s2:0\n"
                       "event e2 s2:0 -> s0:1\n");
    /* The tables carry what the shim knew about each stream. */
    assert_int_equal(g->streams[0].handle, skey(S3));
    assert_int_equal(g->streams[1].cuda_id, 100 + S2);
    assert_int_equal(g->events[1].handle, ehandle(3));
    sg_graph_destroy(g);
    fk_destroy(f);
}

/* cuStreamUpdateCaptureDependencies and BeginCaptureToGraph dependencies
 * give control edges (same-stream nodes put back give stream edges). */
static void test_book_update_and_capture_to_graph(void **state)
{
    (void)state;
    sg_book_t *b = sg_book_create(NULL);
    sg_book_stream_info_t s0 = sinfo(0), s1 = sinfo(1);
    uint64_t pre[2] = {0x500, 0x501}; /* explicit nodes already in the graph */
    assert_int_equal(sg_book_begin(b, 1, &s0, 0x77, "relaxed", pre, 2), SG_OK);
    uint64_t d = 1;
    assert_int_equal(sg_book_enqueue(b, skey(0), 1, &d, 1), 1);
    assert_int_equal(sg_book_record(b, skey(0), ehandle(0)), SG_OK);
    uint64_t j[1] = {1};
    assert_int_equal(sg_book_wait(b, &s1, ehandle(0), 1, j, 1), SG_OK);
    d = 2;
    assert_int_equal(sg_book_enqueue(b, skey(1), 1, &d, 1), 1);
    d = 3;
    assert_int_equal(sg_book_enqueue(b, skey(0), 1, &d, 1), 1);
    /* s0's set becomes {2 (other stream), 3 (its own), 0x600 (explicit)} */
    uint64_t set[3] = {2, 3, 0x600};
    assert_int_equal(sg_book_update(b, skey(0), set, 3), SG_OK);
    d = 4;
    assert_int_equal(sg_book_enqueue(b, skey(0), 1, &d, 1), 1);
    assert_int_equal(sg_book_capture_of(b, skey(1)), 1);
    assert_int_equal(sg_book_end(b, skey(0), 0x77, true), SG_OK);
    assert_int_equal(sg_book_capture_of(b, skey(1)), 0);
    const sg_capture_record_t *rec = sg_book_find_record(b, 0x77);
    assert_non_null(rec);
    assert_string_equal(rec->mode, "relaxed");
    const sg_tag_t *t1 = sg_book_find_tag(rec, 1);
    assert_int_equal(t1->n_preds, 2);
    assert_int_equal(t1->preds[0].kind, SG_EDGE_CONTROL);
    assert_int_equal(t1->preds[1].kind, SG_EDGE_CONTROL);
    const sg_tag_t *t4 = sg_book_find_tag(rec, 4);
    assert_int_equal(t4->n_preds, 3);
    assert_int_equal(sg_dep_find(t4->preds, 3, 2)->kind, SG_EDGE_CONTROL);
    assert_int_equal(sg_dep_find(t4->preds, 3, 3)->kind, SG_EDGE_STREAM);
    assert_int_equal(sg_dep_find(t4->preds, 3, 0x600)->kind, SG_EDGE_CONTROL);
    assert_int_equal(rec->unexplained, 0); /* the program asked for these */

    /* A second capture into the same graph continues labels and sequence. */
    sg_book_stream_info_t s2 = sinfo(2);
    assert_int_equal(sg_book_begin(b, 2, &s2, 0x77, "global", &d, 1), SG_OK);
    uint64_t e = 5;
    assert_int_equal(sg_book_enqueue(b, skey(2), 1, &e, 1), 1);
    assert_int_equal(sg_book_end(b, skey(2), 0x77, true), SG_OK);
    rec = sg_book_find_record(b, 0x77);
    assert_int_equal(rec->n_streams, 3);
    assert_int_equal(sg_book_find_tag(rec, 5)->stream, 2);
    assert_int_equal(sg_book_find_tag(rec, 5)->seq, 4);
    assert_int_equal(rec->n_tags, 5);

    /* Assembling: the pre-existing nodes are explicit, their edges control. */
    sg_asm_node_t nodes[] = {{0x500, SG_NODE_EMPTY, 5}, {0x501, SG_NODE_EMPTY, 5},
                             {1, SG_NODE_KERNEL, 0},    {2, SG_NODE_KERNEL, 0},
                             {3, SG_NODE_KERNEL, 0},    {0x600, SG_NODE_HOST, 3},
                             {4, SG_NODE_KERNEL, 0},    {5, SG_NODE_KERNEL, 0}};
    sg_asm_edge_t edges[] = {{0x500, 1, 0, 0, 0}, {0x501, 1, 0, 0, 0}, {1, 2, 0, 0, 0},
                             {1, 3, 0, 0, 0},     {2, 4, 0, 0, 0},     {3, 4, 0, 0, 0},
                             {0x600, 4, 0, 0, 0}, {4, 5, 0, 0, 0},     {3, 0x600, 0, 0, 0}};
    sg_graph_t *g = sg_graph_create();
    sg_node_id_t ids[8];
    sg_asm_report_t rep;
    assert_int_equal(sg_assemble(g, rec, nodes, 8, edges, 9, ids, &rep), SG_OK);
    assert_int_equal(rep.tagged, 5);
    assert_int_equal(rep.explicit_nodes, 3);
    assert_int_equal(rep.explicit_edges, 1); /* 3 -> 0x600 */
    assert_int_equal(rep.unexplained, 0);
    assert_true(sg_asm_report_ok(&rep, true));
    /* ids in capture order: tagged by seq, then explicit in listing order */
    assert_int_equal(ids[2], 0);
    assert_int_equal(ids[7], 4);
    assert_int_equal(ids[0], 5);
    assert_int_equal(ids[5], 7);
    assert_int_equal(sg_graph_node(g, ids[0])->stream, SG_STREAM_EXPLICIT);
    assert_int_equal(sg_graph_node(g, ids[7])->stream, 2);
    sg_edge_t *e01 = sg_graph_edge(g, sg_graph_find_edge(g, ids[0], ids[2]));
    assert_int_equal(e01->kind, SG_EDGE_CONTROL);
    assert_int_equal(sg_graph_edge(g, sg_graph_find_edge(g, ids[2], ids[3]))->kind, SG_EDGE_EVENT);
    assert_int_equal(sg_graph_edge(g, sg_graph_find_edge(g, ids[3], ids[6]))->kind,
                     SG_EDGE_CONTROL);
    assert_int_equal(sg_graph_edge(g, sg_graph_find_edge(g, ids[4], ids[6]))->kind, SG_EDGE_STREAM);
    assert_int_equal(sg_graph_edge(g, sg_graph_find_edge(g, ids[6], ids[7]))->kind,
                     SG_EDGE_CONTROL); /* BeginCaptureToGraph dependency */
    sg_graph_destroy(g);
    sg_book_destroy(b);
}

/* ---- the capture's calls (sg_book_calls_*) ---------------------------------------- */

typedef struct {
    bool ok;
    uint64_t shape, args;
} calls_out_t;

/* A fork-join capture on S0/S1 whose every node is noted with `arg` (argument
 * bytes) and `tweak` (shape bytes); variants: 1 = S1's kernel after S0's second
 * one (a different order), 2 = a node without a note, 3 = a dependency update,
 * 4 = no sg_book_calls_begin. */
/* Describe the coming call the way calls.c does: into the runs the book
 * gives (none while the digest is off), then noted. */
static void calls_note(sg_book_t *b, uint64_t key, uint32_t shape, uint32_t arg)
{
    sg_bytes_t *sr, *ar;
    sg_book_calls_t *c = sg_book_calls_runs(b, key, &sr, &ar);
    if (!c) return;
    sg_bytes_u32(sr, shape);
    sg_bytes_u32(ar, arg);
    sg_book_calls_noted(c);
}

static calls_out_t calls_capture_in(fake_t *f, uint64_t graph, uint32_t arg, uint32_t tweak,
                                    int variant)
{
    fk_begin(f, S0, graph);
    if (variant != 4) sg_book_calls_begin(f->book, skey(S0), 42, "salt", 4);
    sg_bytes_t *sr, *ar; /* the runs exist exactly while the digest is on */
    assert_true((sg_book_calls_runs(f->book, skey(S0), &sr, &ar) != NULL) == (variant != 4));
    uint32_t shape = 0x5eed ^ tweak;
#define NOTE(s) calls_note(f->book, skey(s), shape, arg)
    NOTE(S0);
    fk_node(f, S0, SG_NODE_KERNEL);
    fk_record(f, 0, S0);
    fk_wait(f, S1, 0);
    if (variant == 1) {
        NOTE(S0);
        fk_node(f, S0, SG_NODE_KERNEL);
        NOTE(S1);
        fk_node(f, S1, SG_NODE_KERNEL);
    } else {
        NOTE(S1);
        fk_node(f, S1, SG_NODE_KERNEL);
        if (variant != 2) NOTE(S0);
        fk_node(f, S0, SG_NODE_KERNEL);
    }
    if (variant == 3) {
        uint64_t d = f->s[S0].deps[0];
        assert_int_equal(sg_book_update(f->book, skey(S0), &d, 1), SG_OK);
    }
    fk_record(f, 1, S1);
    fk_wait(f, S0, 1);
    NOTE(S0);
    fk_node(f, S0, SG_NODE_KERNEL);
#undef NOTE
    fk_end(f, S0);
    const sg_capture_record_t *rec = sg_book_find_record(f->book, graph);
    assert_non_null(rec);
    calls_out_t o = {rec->calls_ok, rec->calls_shape, rec->calls_args};
    if (o.ok) assert_int_equal(rec->calls_gen, 42);
    return o;
}

static calls_out_t calls_capture(uint64_t graph, uint32_t arg, uint32_t tweak, int variant)
{
    fake_t *f = fk_create();
    calls_out_t o = calls_capture_in(f, graph, arg, tweak, variant);
    fk_destroy(f);
    return o;
}

static void test_book_calls(void **state)
{
    (void)state;
    calls_out_t a = calls_capture(0x70, 1, 0, 0);
    assert_true(a.ok);
    /* the same calls in another book, into another graph handle: equal */
    calls_out_t b = calls_capture(0x71, 1, 0, 0);
    assert_true(b.ok);
    assert_true(a.shape == b.shape && a.args == b.args);
    /* new argument values: the shape stays, the arguments differ */
    calls_out_t c = calls_capture(0x70, 2, 0, 0);
    assert_true(c.ok && c.shape == a.shape && c.args != a.args);
    /* a shape byte of a note, or the order of the nodes: another shape */
    calls_out_t d = calls_capture(0x70, 1, 1, 0);
    assert_true(d.ok && d.shape != a.shape);
    calls_out_t e = calls_capture(0x70, 1, 0, 1);
    assert_true(e.ok && e.shape != a.shape);
    /* a node no call described, an update, no begin: not described */
    assert_false(calls_capture(0x70, 1, 0, 2).ok);
    assert_false(calls_capture(0x70, 1, 0, 3).ok);
    assert_false(calls_capture(0x70, 1, 0, 4).ok);
}

/* Captures one after another in one book: the book answers a run equal to
 * the last one's from that one's hash (book.c: run_hash). Every answer must
 * be what a fresh book computes, equal bytes or not (a changed argument or
 * shape byte keeps the runs' lengths). */
static void test_book_calls_again(void **state)
{
    (void)state;
    calls_out_t a = calls_capture(0x70, 1, 0, 0), c = calls_capture(0x70, 2, 0, 0),
                d = calls_capture(0x70, 1, 1, 0);
    fake_t *f = fk_create();
    const struct {
        uint32_t arg, tweak;
        const calls_out_t *want;
    } steps[] = {{1, 0, &a}, {1, 0, &a}, {2, 0, &c}, {2, 0, &c}, {1, 1, &d}, {1, 0, &a}, {1, 1, &d}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        calls_out_t o = calls_capture_in(f, 0x80 + i, steps[i].arg, steps[i].tweak, 0);
        assert_true(o.ok);
        assert_true(o.shape == steps[i].want->shape);
        assert_true(o.args == steps[i].want->args);
    }
    fk_destroy(f);
}

static void test_book_failures_and_bounds(void **state)
{
    (void)state;
    sg_book_limits_t lim = {2, 6};
    sg_book_t *b = sg_book_create(&lim);
    sg_book_stream_info_t s0 = sinfo(0);
    /* a failed capture leaves nothing behind */
    assert_int_equal(sg_book_begin(b, 1, &s0, 0, "global", NULL, 0), SG_OK);
    uint64_t n = 1;
    sg_book_enqueue(b, skey(0), 0, &n, 1);
    assert_int_equal(sg_book_end(b, skey(0), 0, false), SG_OK);
    sg_book_stats_t st;
    sg_book_stats(b, &st);
    assert_int_equal(st.tags_live, 0);
    assert_int_equal(st.captures_dropped, 1);
    assert_int_equal(sg_book_end(b, skey(0), 0x1, true), SG_ENOENT);
    /* unseen streams are ignored */
    assert_int_equal(sg_book_enqueue(b, skey(5), 0, &n, 1), 0);
    assert_int_equal(sg_book_record(b, skey(5), 1), SG_OK);
    /* three graphs of two nodes with room for two records: LRU eviction */
    for (uint64_t gph = 1; gph <= 3; gph++) {
        assert_int_equal(sg_book_begin(b, 10 + gph, &s0, 0, "global", NULL, 0), SG_OK);
        uint64_t x = gph * 100, y = gph * 100 + 1;
        assert_int_equal(sg_book_enqueue(b, skey(0), 0, &x, 1), 1);
        assert_int_equal(sg_book_enqueue(b, skey(0), 0, &y, 1), 1);
        assert_int_equal(sg_book_end(b, skey(0), gph, true), SG_OK);
        if (gph == 2) assert_non_null(sg_book_find_record(b, 1)); /* touch 1 */
    }
    assert_non_null(sg_book_find_record(b, 1));
    assert_null(sg_book_find_record(b, 2));
    assert_non_null(sg_book_find_record(b, 3));
    sg_book_forget(b, 1);
    assert_null(sg_book_find_record(b, 1));
    sg_book_stats(b, &st);
    assert_int_equal(st.records_live, 1);
    assert_int_equal(st.tags_live, 2);
    /* a capture bigger than the tag bound stops tagging and says so */
    assert_int_equal(sg_book_begin(b, 20, &s0, 0, "global", NULL, 0), SG_OK);
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t x = 1000 + k;
        sg_book_enqueue(b, skey(0), 0, &x, 1);
    }
    assert_int_equal(sg_book_end(b, skey(0), 9, true), SG_OK);
    const sg_capture_record_t *r = sg_book_find_record(b, 9);
    assert_non_null(r);
    assert_true(r->overflow);
    assert_true(r->n_tags <= 6);
    /* begin on a stream still in a session drops the old session */
    assert_int_equal(sg_book_begin(b, 30, &s0, 0, "global", NULL, 0), SG_OK);
    assert_int_equal(sg_book_begin(b, 31, &s0, 0, "global", NULL, 0), SG_EEXIST);
    assert_int_equal(sg_book_capture_of(b, skey(0)), 31);
    sg_book_drop_sessions(b);
    assert_false(sg_book_any_session(b));
    sg_book_destroy(b);
}

/* The recapture pattern: thousands of captures, each graph destroyed after
 * an exec update, must not grow the book. */
static void test_book_recapture_bounded(void **state)
{
    (void)state;
    sg_book_t *b = sg_book_create(NULL);
    sg_book_stream_info_t s0 = sinfo(0), s1 = sinfo(1);
    uint64_t node = 1;
    for (int it = 0; it < 5000; it++) {
        assert_int_equal(sg_book_begin(b, (uint64_t)it + 1, &s0, 0, "global", NULL, 0), SG_OK);
        uint64_t a = node++, c = node++, d = node++;
        sg_book_enqueue(b, skey(0), 0, &a, 1);
        sg_book_record(b, skey(0), ehandle(0));
        sg_book_wait(b, &s1, ehandle(0), (uint64_t)it + 1, &a, 1);
        sg_book_enqueue(b, skey(1), 0, &c, 1);
        sg_book_record(b, skey(1), ehandle(1));
        uint64_t j[2] = {a, c};
        sg_book_wait(b, &s0, ehandle(1), (uint64_t)it + 1, j, 2);
        sg_book_enqueue(b, skey(0), 0, &d, 1);
        uint64_t gph = 0x10000 + (uint64_t)it;
        assert_int_equal(sg_book_end(b, skey(0), gph, true), SG_OK);
        assert_non_null(sg_book_find_record(b, gph));
        sg_book_forget(b, gph);
    }
    sg_book_stats_t st;
    sg_book_stats(b, &st);
    assert_int_equal(st.tags_live, 0);
    assert_int_equal(st.records_live, 0);
    assert_int_equal(st.sessions_live, 0);
    assert_int_equal(st.captures_ended, 5000);
    sg_book_destroy(b);
}

/* The book's tables against a plain array, keys chosen from a small space
 * (0 included) so that runs form, wrap around the end of the slots and
 * lose members from their middle: backward-shift deletion must keep every
 * other key findable. */
static void test_u64map_random(void **state)
{
    (void)state;
    enum { KEYS = 300 };
    static uintptr_t ref[KEYS]; /* value per key index, 0 = absent */
    memset(ref, 0, sizeof ref);
    sg_u64map_t m = {0};
    uint64_t seed = 7;
    uint32_t n = 0;
    for (int it = 0; it < 200000; it++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(seed >> 33), k = r % KEYS;
        uint64_t key = k == 0 ? 0 : (uint64_t)k << 40 | k; /* spread, and 0 */
        switch ((r >> 12) % 4) {
        case 0:
        case 1:
            assert_int_equal(sg_u64map_put(&m, key, (void *)(uintptr_t)(it + 1)), 0);
            if (!ref[k]) n++;
            ref[k] = (uintptr_t)(it + 1);
            break;
        case 2:
            assert_true((uintptr_t)sg_u64map_del(&m, key) == ref[k]);
            if (ref[k]) n--;
            ref[k] = 0;
            break;
        default:
            if ((r >> 20) % 64 == 0) { /* now and then empty it, keeping the slots */
                sg_u64map_clear(&m, 1u << 20);
                memset(ref, 0, sizeof ref);
                n = 0;
            }
            break;
        }
        assert_int_equal(m.n, n);
        if (it % 997 == 0)
            for (uint32_t j = 0; j < KEYS; j++) {
                uint64_t kj = j == 0 ? 0 : (uint64_t)j << 40 | j;
                assert_true((uintptr_t)sg_u64map_get(&m, kj) == ref[j]);
            }
    }
    assert_true(m.cap <= 1024); /* at most half full: 300 keys never need more */
    sg_u64map_free(&m);
    assert_int_equal(m.cap, 0);
}

/* A random capture (streams, events, waits, wide sets) replayed on `b`. */
typedef struct {
    uint64_t node;
    uint32_t stream, n_preds;
    uint64_t seq;
    uint64_t preds[80];
    uint8_t kinds[80];
    uint32_t events[80];
} tag_copy_t;

static uint32_t random_capture(sg_book_t *b, uint64_t *seed, uint64_t graph, uint64_t id,
                               uint64_t *node, tag_copy_t *out, uint32_t max_out,
                               uint32_t *n_streams, uint32_t *n_events)
{
#define RND() (*seed = *seed * 6364136223846793005ull + 1442695040888963407ull, (uint32_t)(*seed >> 33))
    uint32_t streams = 1 + RND() % 4, steps = 1 + RND() % 40;
    uint64_t first = *node;
    sg_book_stream_info_t s0 = sinfo(0);
    /* a new graph each capture (0: the driver's own); its handle at the end
     * may be one a kept record still holds (the driver reuses handles) */
    assert_int_equal(sg_book_begin(b, id, &s0, 0, "global", NULL, 0), SG_OK);
    bool joined[4] = {true, false, false, false};
    uint64_t last[4] = {0};
    for (uint32_t i = 0; i < steps; i++) {
        uint32_t s = RND() % streams, what = RND() % 4;
        if (!joined[s]) what = 2; /* a stream joins by waiting */
        if (what <= 1) {
            uint64_t d = (*node)++;
            sg_book_enqueue(b, skey((int)s), what, &d, 1);
            last[s] = d;
        } else if (what == 2) {
            uint32_t from = RND() % streams;
            if (!joined[from]) continue;
            sg_book_record(b, skey((int)from), ehandle((int)(RND() % 6)));
            uint32_t e = RND() % 6;
            /* the driver's set after the wait: a wide one now and then (> 64
             * members: the allocating paths) */
            uint64_t d[70];
            uint32_t nd = 0;
            if (last[from]) d[nd++] = last[from];
            if (last[s] && s != from) d[nd++] = last[s];
            if (RND() % 8 == 0)
                while (nd < 70 && first + nd < *node)
                    d[nd] = first + nd, nd++;
            sg_book_stream_info_t si = sinfo((int)s);
            sg_book_wait(b, &si, ehandle((int)e), id, d, nd);
            joined[s] = true;
        } else {
            sg_book_record(b, skey((int)s), ehandle((int)(RND() % 6)));
        }
    }
    assert_int_equal(sg_book_end(b, skey(0), graph, true), SG_OK);
#undef RND
    const sg_capture_record_t *rec = sg_book_find_record(b, graph);
    assert_non_null(rec);
    *n_streams = rec->n_streams;
    *n_events = rec->n_events;
    uint32_t n = 0;
    for (uint64_t x = first; x < *node && n < max_out; x++) {
        const sg_tag_t *t = sg_book_find_tag(rec, x);
        if (!t) continue;
        tag_copy_t *c = &out[n++];
        c->node = x;
        c->stream = t->stream;
        c->seq = t->seq;
        c->n_preds = t->n_preds < 80 ? t->n_preds : 80;
        for (uint32_t j = 0; j < c->n_preds; j++) {
            c->preds[j] = t->preds[j].node;
            c->kinds[j] = t->preds[j].kind;
            c->events[j] = t->preds[j].event;
        }
    }
    assert_int_equal(n, rec->n_tags);
    return n;
}

/* One long-lived book recycles its sessions, streams, events, records and
 * tag chunks from one capture to the next; a fresh book per capture has
 * nothing to recycle. Over random captures of every shape both must record
 * exactly the same (no stale member, event, tag or set survives reuse). */
static void test_book_recycled_same_as_fresh(void **state)
{
    (void)state;
    sg_book_t *kept = sg_book_create(NULL);
    static tag_copy_t a[64], c[64];
    uint64_t seed_a = 99, seed_c = 99, node_a = 1, node_c = 1;
    for (int it = 0; it < 3000; it++) {
        uint64_t graph = 0x50000 + (uint64_t)(it % 7); /* handles come back */
        uint32_t sa, ea, sc, ec;
        uint32_t na = random_capture(kept, &seed_a, graph, (uint64_t)it + 1, &node_a, a, 64, &sa, &ea);
        sg_book_t *fresh = sg_book_create(NULL);
        uint32_t nc = random_capture(fresh, &seed_c, graph, (uint64_t)it + 1, &node_c, c, 64, &sc, &ec);
        sg_book_destroy(fresh);
        assert_int_equal(na, nc);
        assert_int_equal(sa, sc);
        assert_int_equal(ea, ec);
        for (uint32_t i = 0; i < na; i++) {
            assert_int_equal(a[i].node, c[i].node);
            assert_int_equal(a[i].stream, c[i].stream);
            assert_int_equal(a[i].seq, c[i].seq);
            assert_int_equal(a[i].n_preds, c[i].n_preds);
            assert_memory_equal(a[i].preds, c[i].preds, a[i].n_preds * sizeof a[i].preds[0]);
            assert_memory_equal(a[i].kinds, c[i].kinds, a[i].n_preds);
            assert_memory_equal(a[i].events, c[i].events, a[i].n_preds * sizeof a[i].events[0]);
        }
        if (it % 3) sg_book_forget(kept, graph); /* some records stay until evicted */
    }
    sg_book_stats_t st;
    sg_book_stats(kept, &st);
    assert_int_equal(st.sessions_live, 0);
    assert_true(st.records_live <= 7);
    sg_book_destroy(kept);
}

/* ---- digest --------------------------------------------------------------------------- */

static sg_graph_t *small_graph(uint8_t param, uint64_t stream_handle)
{
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, s1, e0, b0;
    sg_graph_add_stream(g, NULL, stream_handle, &s0);
    sg_graph_add_stream(g, NULL, stream_handle + 1, &s1);
    sg_graph_add_event(g, NULL, 0xeee, &e0);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7000, 4096, &b0);
    sg_node_id_t a, k;
    sg_graph_add_node(g, SG_NODE_MEMSET, s0, 0, &a);
    sg_graph_node(g, a)->u.memset.dst = 0x7000;
    sg_graph_add_node(g, SG_NODE_KERNEL, s1, 1, &k);
    sg_node_set_kernel_name(g, k, "_Z1kPf");
    uint32_t off = 0, size = 8;
    uint8_t bytes[8] = {0, 0x70, 0, 0, 0, 0, 0, param};
    sg_node_set_kernel_params(g, k, 1, &off, &size, bytes, 8);
    sg_graph_add_edge(g, a, k, SG_EDGE_EVENT, e0, NULL);
    g->program = strdup("x");
    return g;
}

static void test_digest(void **state)
{
    (void)state;
    sg_graph_t *a = small_graph(1, 0x100), *b = small_graph(1, 0x900), *c = small_graph(2, 0x100);
    b->pid = 99;
    b->sequence = 5;
    b->capture_id = 77;
    assert_int_equal(sg_graph_digest(a), sg_graph_digest(b));     /* handles, provenance ignored */
    assert_int_not_equal(sg_graph_digest(a), sg_graph_digest(c)); /* parameter bytes count */
    sg_graph_edge(b, 0)->kind = SG_EDGE_CONTROL;
    sg_graph_edge(b, 0)->event = SG_NONE;
    assert_int_not_equal(sg_graph_digest(a), sg_graph_digest(b)); /* edge kinds count */
    sg_graph_t *d = sg_graph_clone(a);
    assert_int_equal(sg_graph_digest(a), sg_graph_digest(d));
    sg_graph_node(d, 0)->stream = 1;
    assert_int_not_equal(sg_graph_digest(a), sg_graph_digest(d)); /* streams count */
    sg_graph_destroy(a);
    sg_graph_destroy(b);
    sg_graph_destroy(c);
    sg_graph_destroy(d);
}

/* ---- outbox ------------------------------------------------------------------------------ */

static void test_outbox(void **state)
{
    (void)state;
    sg_outbox_t o;
    sg_outbox_init(&o, 2);
    sg_outbox_entry_t seq = {0};
    const sg_outbox_origin_t r1d0 = {1, 0};
    bool report = false;
    assert_true(sg_outbox_would_write(&o, 0xa));
    assert_int_equal(o.offered, 0); /* asking changes nothing */
    assert_int_equal(sg_outbox_decide(&o, 0xa, &seq, &report), SG_OUTBOX_WRITE);
    sg_outbox_done(&o, 0xa, 0, NULL, true);
    assert_false(sg_outbox_would_write(&o, 0xa));
    assert_int_equal(sg_outbox_decide(&o, 0xa, &seq, &report), SG_OUTBOX_DUPLICATE);
    assert_int_equal(seq.sequence, 0);
    assert_int_equal(seq.origin.rank, -1); /* written without an origin */
    assert_int_equal(seq.origin.device, -1);
    assert_int_equal(sg_outbox_decide(&o, 0xb, &seq, &report), SG_OUTBOX_WRITE);
    sg_outbox_done(&o, 0xb, 2, &r1d0, false); /* failed: not remembered, counted */
    assert_int_equal(sg_outbox_decide(&o, 0xb, &seq, &report), SG_OUTBOX_WRITE);
    sg_outbox_done(&o, 0xb, 3, &r1d0, true);
    assert_false(sg_outbox_would_write(&o, 0xc)); /* full */
    assert_int_equal(sg_outbox_decide(&o, 0xc, &seq, &report), SG_OUTBOX_OVER_LIMIT);
    assert_true(report);
    assert_int_equal(sg_outbox_decide(&o, 0xd, &seq, &report), SG_OUTBOX_OVER_LIMIT);
    assert_false(report); /* reported once */
    assert_int_equal(sg_outbox_decide(&o, 0xd, &seq, &report), SG_OUTBOX_OVER_LIMIT);
    assert_int_equal(sg_outbox_decide(&o, 0xb, &seq, &report), SG_OUTBOX_DUPLICATE);
    assert_int_equal(seq.sequence, 3);
    assert_int_equal(seq.origin.rank, 1); /* what names the earlier bundle */
    assert_int_equal(seq.origin.device, 0);
    assert_int_equal(o.written, 2);
    assert_int_equal(o.offered, 8);
    assert_int_equal(o.distinct, 4);
    assert_int_equal(o.duplicates, 2);
    assert_int_equal(o.over_limit, 2); /* 0xc and 0xd, each once */
    assert_int_equal(o.failed, 1);
    sg_outbox_free(&o);

    sg_outbox_init(&o, 0); /* SGCAP_MAX_BUNDLES=0: count only */
    assert_int_equal(sg_outbox_decide(&o, 1, NULL, &report), SG_OUTBOX_OVER_LIMIT);
    sg_outbox_free(&o);

    /* The distinct-count set is bounded: past it, counting goes on. */
    sg_outbox_init(&o, 1);
    for (uint64_t d = 1; d <= SG_OUTBOX_SEEN_MAX + 10; d++)
        sg_outbox_decide(&o, d * 0x9E3779B97F4A7C15ull, NULL, NULL);
    assert_true(o.seen_full);
    assert_int_equal(o.n_seen, SG_OUTBOX_SEEN_MAX);
    assert_int_equal(o.distinct, SG_OUTBOX_SEEN_MAX + 10);
    sg_outbox_free(&o);

    bool valid;
    assert_int_equal(sg_outbox_parse_max(NULL, &valid), SG_OUTBOX_DEFAULT_MAX);
    assert_int_equal(sg_outbox_parse_max("10", &valid), 10);
    assert_true(valid);
    assert_int_equal(sg_outbox_parse_max("0", &valid), 0);
    assert_int_equal(sg_outbox_parse_max("-3", &valid), SG_OUTBOX_DEFAULT_MAX);
    assert_false(valid);
    assert_int_equal(sg_outbox_parse_max("12x", &valid), SG_OUTBOX_DEFAULT_MAX);
    assert_false(valid);

    char name[80], path[256];
    sg_outbox_program_name("/usr/bin/python3.12", name, sizeof name);
    assert_string_equal(name, "python3.12");
    sg_outbox_program_name("./a b$c", name, sizeof name);
    assert_string_equal(name, "a_b_c");
    sg_outbox_program_name("/x/..", name, sizeof name);
    assert_string_equal(name, "program");
    sg_outbox_program_name("..hidden", name, sizeof name);
    assert_string_equal(name, "hidden");
    sg_outbox_program_name(NULL, name, sizeof name);
    assert_string_equal(name, "program");
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    sg_outbox_program_name(longname, name, sizeof name);
    assert_int_equal(strlen(name), 64);
    assert_int_equal(sg_outbox_bundle_path(path, sizeof path, "/tmp/o", "fork_join", NULL, 4242, 3),
                     SG_OK);
    assert_string_equal(path, "/tmp/o/fork_join.4242.3.sgraph");
    assert_true(sg_bundle_relpath_ok("fork_join.4242.3.sgraph"));
    assert_int_equal(sg_outbox_bundle_path(path, 10, "/tmp/o", "fork_join", NULL, 4242, 3),
                     SG_ELIMIT);
    /* a rank, a device ordinal, both; -1 leaves a part out */
    const sg_outbox_origin_t rank3 = {3, -1}, dev1 = {-1, 1}, both = {12, 0};
    assert_int_equal(sg_outbox_bundle_path(path, sizeof path, "o", "python3", &rank3, 7, 0), SG_OK);
    assert_string_equal(path, "o/python3.rank3.7.0.sgraph");
    assert_int_equal(sg_outbox_bundle_path(path, sizeof path, "o", "nccl", &dev1, 7, 1), SG_OK);
    assert_string_equal(path, "o/nccl.dev1.7.1.sgraph");
    assert_int_equal(sg_outbox_bundle_path(path, sizeof path, "o", "nccl", &both, 7, 2), SG_OK);
    assert_string_equal(path, "o/nccl.rank12.dev0.7.2.sgraph");
    assert_true(sg_bundle_relpath_ok("nccl.rank12.dev0.7.2.sgraph"));
}

/* The launcher's rank, from the first variable that holds a number. */
static const char *const *fake_env;
static char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (strcmp(e[0], name) == 0) return (char *)e[1];
    return NULL;
}

static void test_outbox_rank(void **state)
{
    (void)state;
    static const char *const none[] = {"PATH", "/bin", NULL};
    static const char *const torchrun[] = {"LOCAL_RANK", "1", "RANK", "9", NULL};
    static const char *const mpi[] = {"OMPI_COMM_WORLD_RANK", "4", "SLURM_PROCID", "0", NULL};
    static const char *const pmix[] = {"PMIX_RANK", "6", NULL};
    static const char *const slurm[] = {"SLURM_PROCID", "2", NULL};
    static const char *const local[] = {"LOCAL_RANK", "0", NULL};
    static const char *const bad[] = {"RANK", "x1", "PMI_RANK", "", "LOCAL_RANK", "3", NULL};
    static const char *const huge[] = {"RANK", "2147483648", "SLURM_PROCID", "2147483647", NULL};
    static const char *const neg[] = {"RANK", "-1", NULL};
    static const struct {
        const char *const *env;
        int32_t rank;
    } cases[] = {{none, -1}, {torchrun, 9}, {mpi, 4},   {pmix, 6}, {slurm, 2},
                 {local, 0}, {bad, 3},      {huge, INT32_MAX}, {neg, -1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fake_env = cases[i].env;
        if (sg_outbox_rank(fake_getenv) != cases[i].rank)
            fail_msg("case %zu: rank %d, expected %d", i, sg_outbox_rank(fake_getenv),
                     cases[i].rank);
    }
    fake_env = NULL;
}

/* ---- expected topology ------------------------------------------------------------------- */

static void test_topo_parse(void **state)
{
    (void)state;
    const char *ok = "# sgcap expected topology v1\n"
                     "graph 0\n"
                     "stream s0 kernel memcpy\n"
                     "stream s1 mem_alloc\n"
                     "event e0 s0:0 -> s1:0\n"
                     "\n"
                     "graph 1\n"
                     "stream s0 kernel\n";
    sg_topo_t t;
    char err[128];
    assert_int_equal(sg_topo_parse(ok, strlen(ok), &t, err, sizeof err), SG_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.graphs[0].n_streams, 2);
    assert_int_equal(t.graphs[0].streams[0].types[1], SG_NODE_MEMCPY);
    assert_int_equal(t.graphs[0].n_edges, 1);
    assert_int_equal(t.graphs[1].index, 1);
    char buf[512];
    assert_int_equal(sg_topo_print(&t.graphs[0], buf, sizeof buf), SG_OK);
    assert_string_equal(buf, "graph 0\nstream s0 kernel memcpy\nstream s1 mem_alloc\n"
                             "event e0 s0:0 -> s1:0\n");
    sg_topo_free(&t);

    const char *bad[] = {
        "graph 0\n",
        "# sgcap expected topology v1\nstream s0 kernel\n",
        "# sgcap expected topology v1\ngraph 0\nstream s1 kernel\n",
        "# sgcap expected topology v1\ngraph 0\nstream s0 kernal\n",
        "# sgcap expected topology v1\ngraph 0\nstream s0 kernel\nevent e0 s0:0 -> s0:1\n",
        "# sgcap expected topology v1\ngraph 0\nstream s0 kernel\nevent e0 s0:0 s0:0\n",
        "# sgcap expected topology v1\ngraph x\n",
        "# sgcap expected topology v1\ngraph 0\nnode s0\n",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(sg_topo_parse(bad[i], strlen(bad[i]), &t, err, sizeof err), SG_EFORMAT);
        assert_true(strncmp(err, "line ", 5) == 0);
    }
}

/* Every golden fixture named after a sample has that sample's expected
 * topology; the bug_* fixtures and a hand-made wrong expectation do not. */
static void test_topo_golden_bundles(void **state)
{
    (void)state;
    const char *samples[] = {"fork_join", "ping_pong",     "pipeline3",   "pipeline4",
                             "diamond",   "event_reuse",   "two_waiters", "async_alloc",
                             "chains",    "chain_barrier", "stencil"};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/golden/%s.sgraph", SGCAP_SOURCE_DIR, samples[i]);
        sg_graph_t *g = NULL;
        sg_diag_t diag;
        int rc = sg_bundle_read(path, &g, &diag);
        if (rc) print_message("%s: %s\n", path, diag.message);
        assert_int_equal(rc, SG_OK);
        print_message("golden %s\n", samples[i]);
        expect_sample_topology(g, samples[i]);
        sg_graph_destroy(g);
    }

    char path[512];
    snprintf(path, sizeof path, "%s/tests/golden/fork_join.sgraph", SGCAP_SOURCE_DIR);
    sg_graph_t *g = NULL;
    assert_int_equal(sg_bundle_read(path, &g, NULL), SG_OK);
    sg_topo_graph_t got;
    assert_int_equal(sg_topo_from_graph(g, &got), SG_OK);
    const char *wrong = "# sgcap expected topology v1\n"
                        "graph 0\n"
                        "stream s0 kernel kernel\n"
                        "stream s1 kernel memcpy\n"
                        "stream s2 kernel\n"
                        "event e0 s0:0 -> s1:0\n"
                        "event e1 s0:0 -> s2:0\n"
                        "event e1 s1:1 -> s0:1\n"
                        "event e2 s2:0 -> s0:1\n";
    sg_topo_t want;
    assert_int_equal(sg_topo_parse(wrong, strlen(wrong), &want, NULL, 0), SG_OK);
    char report[1024];
    int diff = sg_topo_compare(&want.graphs[0], &got, report, sizeof report);
    assert_int_equal(diff, 3); /* stream s1 types, one missing and one unexpected edge */
    assert_non_null(strstr(report, "stream s1: expected kernel memcpy; got kernel kernel"));
    assert_non_null(strstr(report, "missing event edge e1 s0:0 -> s2:0"));
    assert_non_null(strstr(report, "unexpected event edge e0 s0:0 -> s2:0"));
    sg_topo_free(&want);
    sg_topo_graph_free(&got);

    /* An explicit node and a control edge are expressible (explicit lane,
     * control line); a stream edge into the explicit lane and a dealloc
     * edge are not. */
    sg_node_id_t x, y;
    sg_graph_add_node(g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 99, &x);
    sg_graph_add_node(g, SG_NODE_MEMSET, SG_STREAM_EXPLICIT, 98, &y); /* added first */
    sg_graph_add_edge(g, 0, x, SG_EDGE_CONTROL, SG_NONE, NULL);
    sg_graph_add_edge(g, y, x, SG_EDGE_CONTROL, SG_NONE, NULL);
    assert_int_equal(sg_topo_from_graph(g, &got), SG_OK);
    assert_int_equal(got.n_problems, 0);
    assert_int_equal(got.explicit_lane.n_nodes, 2);
    assert_int_equal(got.explicit_lane.types[0], SG_NODE_MEMSET);
    char text[1024];
    assert_int_equal(sg_topo_print(&got, text, sizeof text), SG_OK);
    assert_non_null(strstr(text, "explicit memset empty\n"));
    assert_non_null(strstr(text, "control s0:0 -> x:1\n"));
    assert_non_null(strstr(text, "control x:0 -> x:1\n"));
    /* the printed view parses back and compares equal */
    char full[1100];
    snprintf(full, sizeof full, "%s\n%s", SG_TOPO_HEADER, text);
    assert_int_equal(sg_topo_parse(full, strlen(full), &want, NULL, 0), SG_OK);
    diff = sg_topo_compare(&want.graphs[0], &got, report, sizeof report);
    if (diff) print_message("%s---\n%s", text, report);
    assert_int_equal(diff, 0);
    sg_topo_free(&want);
    sg_topo_graph_free(&got);
    sg_graph_add_edge(g, x, 1, SG_EDGE_STREAM, SG_NONE, NULL);
    sg_graph_add_edge(g, 1, 2, SG_EDGE_DEALLOC, SG_NONE, NULL);
    assert_int_equal(sg_topo_from_graph(g, &got), SG_OK);
    assert_int_equal(got.n_problems, 2);
    assert_non_null(strstr(got.problems[0], "stream edge x:1 -> s"));
    assert_non_null(strstr(got.problems[1], "dealloc edge"));
    sg_topo_graph_free(&got);
    sg_graph_destroy(g);
}

/* A stream no node of the graph is on (the stream a conditional body was
 * captured from, the origin of a capture of nothing) is no lane of its view:
 * the conditional sample's graph compares equal to its --expect text, and the
 * other streams keep their order under consecutive labels. */
static void test_topo_bodies_only_stream(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    uint32_t s_body, s_top;
    assert_int_equal(sg_graph_add_stream(g, "s0", 0x3000, &s_body), SG_OK);
    assert_int_equal(sg_graph_add_stream(g, "s1", 0x3100, &s_top), SG_OK);
    sg_node_id_t init, loop, cond;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, SG_STREAM_EXPLICIT, 0, &init), SG_OK);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_CONDITIONAL, SG_STREAM_EXPLICIT, 1, &loop),
                     SG_OK);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_CONDITIONAL, SG_STREAM_EXPLICIT, 2, &cond),
                     SG_OK);
    assert_int_equal(sg_graph_add_edge(g, init, loop, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
    assert_int_equal(sg_graph_add_edge(g, loop, cond, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
    sg_graph_t *body = sg_graph_create_body(g);
    assert_non_null(body);
    sg_node_id_t k;
    assert_int_equal(sg_graph_add_node(body, SG_NODE_KERNEL, s_body, 3, &k), SG_OK);
    expect_topology(g, "# sgcap expected topology v1\n"
                       "graph 0\n"
                       "explicit kernel conditional conditional\n"
                       "control x:0 -> x:1\n"
                       "control x:1 -> x:2\n");
    /* a node on the second stream of the table is on lane s0 */
    sg_node_id_t top;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_MEMSET, s_top, 4, &top), SG_OK);
    assert_int_equal(sg_graph_add_edge(g, cond, top, SG_EDGE_CONTROL, SG_NONE, NULL), SG_OK);
    expect_topology(g, "# sgcap expected topology v1\n"
                       "graph 0\n"
                       "stream s0 memset\n"
                       "explicit kernel conditional conditional\n"
                       "control x:0 -> x:1\n"
                       "control x:1 -> x:2\n"
                       "control x:2 -> s0:0\n");
    sg_graph_destroy(body);
    sg_graph_destroy(g);
}

/* The explicit lane and control edges (graphs built node by node, captures
 * into an existing graph): parsed, compared, refused where malformed. */
static void test_topo_explicit(void **state)
{
    (void)state;
    const char *text = "# sgcap expected topology v1\n"
                       "graph 0\n"
                       "stream s0 kernel kernel\n"
                       "explicit memset kernel\n"
                       "control x:0 -> x:1\n"
                       "control x:1 -> s0:0\n";
    sg_topo_t t, u;
    char err[160];
    assert_int_equal(sg_topo_parse(text, strlen(text), &t, err, sizeof err), SG_OK);
    const sg_topo_graph_t *g = &t.graphs[0];
    assert_int_equal(g->explicit_lane.n_nodes, 2);
    assert_int_equal(g->n_edges, 2);
    assert_int_equal(g->edges[1].kind, SG_TOPO_EDGE_CONTROL);
    assert_int_equal(g->edges[1].src_stream, SG_TOPO_LANE_X);
    assert_int_equal(g->edges[1].dst_stream, 0);
    const char *other = "# sgcap expected topology v1\n"
                        "graph 0\n"
                        "stream s0 kernel kernel\n"
                        "explicit memset kernel\n"
                        "control x:0 -> s0:0\n"
                        "control x:0 -> x:1\n";
    assert_int_equal(sg_topo_parse(other, strlen(other), &u, err, sizeof err), SG_OK);
    char report[512];
    assert_int_equal(sg_topo_compare(g, &u.graphs[0], report, sizeof report), 2);
    assert_non_null(strstr(report, "missing control edge x:1 -> s0:0"));
    assert_non_null(strstr(report, "unexpected control edge x:0 -> s0:0"));
    sg_topo_free(&u);
    const char *fewer = "# sgcap expected topology v1\ngraph 0\nstream s0 kernel kernel\n"
                        "explicit memset\ncontrol x:0 -> s0:0\n";
    assert_int_equal(sg_topo_parse(fewer, strlen(fewer), &u, err, sizeof err), SG_OK);
    assert_true(sg_topo_compare(g, &u.graphs[0], report, sizeof report) >= 1);
    assert_non_null(strstr(report, "explicit: expected memset kernel; got memset"));
    sg_topo_free(&u);
    sg_topo_free(&t);

    const char *bad[] = {
        "# sgcap expected topology v1\ngraph 0\nexplicit kernel\ncontrol x:0 -> x:1\n",
        "# sgcap expected topology v1\ngraph 0\nexplicit kernel\nexplicit kernel\n",
        "# sgcap expected topology v1\ngraph 0\nexplicit kernal\n",
        "# sgcap expected topology v1\ngraph 0\nstream s0 kernel\nexplicit kernel\n"
        "event e0 x:0 -> s0:0\n",
        "# sgcap expected topology v1\ngraph 0\nexplicit kernel kernel\ncontrol x:0 x:1\n",
        "# sgcap expected topology v1\nexplicit kernel\n",
        "# sgcap expected topology v1\ngraph 0\nexplicit kernel\ncontrol y:0 -> x:0\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(sg_topo_parse(bad[i], strlen(bad[i]), &t, err, sizeof err), SG_EFORMAT);
        assert_true(strncmp(err, "line ", 5) == 0);
    }
}

/* An arena (a buffer over the threshold) becomes the ranges its nodes
 * reach; the open-ended access is capped; other buffers keep their order. */
static void test_split_arenas(void **state)
{
    (void)state;
    const uint64_t GiB = 1ull << 30, base = 0x7f0000000000ull;
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, small, arena, other, big_alloc;
    assert_int_equal(sg_graph_add_stream(g, NULL, 0, &s0), 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x10000, 4096, &small), 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, base, 2 * GiB, &arena), 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x20000, 4096, &other), 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x7e0000000000ull, 2 * GiB,
                                         &big_alloc),
                     0);
    sg_node_id_t a, b, c, d, e;
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 0, &a);
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 1, &b);
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 2, &c);
    sg_graph_add_node(g, SG_NODE_MEMCPY, s0, 3, &d);
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 4, &e);
    sg_node_add_access(g, a, arena, 0, 0x100000, SG_ACCESS_READ);
    sg_node_add_access(g, a, small, 0, 4096, SG_ACCESS_UNKNOWN);
    sg_node_add_access(g, b, arena, 0x100000, 0x40000000 - 0x100000, SG_ACCESS_UNKNOWN);
    sg_node_add_access(g, c, arena, 0x40000000, 2 * GiB - 0x40000000, SG_ACCESS_UNKNOWN); /* open */
    sg_node_add_access(g, d, arena, 0x7ff00000, 0x1000, SG_ACCESS_WRITE);
    sg_node_add_access(g, d, other, 0, 4096, SG_ACCESS_READ);
    sg_node_add_access(g, e, big_alloc, 0x1000, 2 * GiB - 0x1000, SG_ACCESS_UNKNOWN);
    sg_arena_limits_t lim = {GiB, 64u << 20, 2u << 20};
    char note[256];
    assert_int_equal(sg_capture_split_arenas(g, &lim, note, sizeof note), 1);
    assert_non_null(strstr(note, "1 allocation of 2.0 GiB"));
    assert_non_null(strstr(note, "the 3 ranges the nodes reach"));
    assert_non_null(strstr(note, "2 kernel accesses of unknown extent capped at 67108864 bytes"));
    assert_int_equal(g->n_buffers, 6);
    /* the others keep their order; the arena's ranges come last */
    assert_int_equal(g->buffers[0].address, 0x10000);
    assert_int_equal(g->buffers[1].address, 0x20000);
    assert_int_equal(g->buffers[2].kind, SG_BUFFER_GRAPH_ALLOC); /* never split */
    /* a (1 MiB) and b (capped to 64 MiB) merge; c's 64 MiB is its own */
    assert_int_equal(g->buffers[3].address, base);
    assert_int_equal(g->buffers[3].size, 0x100000 + (64u << 20));
    assert_int_equal(g->buffers[4].address, base + 0x40000000);
    assert_int_equal(g->buffers[4].size, 64u << 20);
    assert_int_equal(g->buffers[5].address, base + 0x7ff00000);
    assert_int_equal(g->buffers[5].size, 0x1000);
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        char label[16];
        snprintf(label, sizeof label, "b%u", i);
        assert_string_equal(g->buffers[i].label, label);
        assert_int_equal(g->buffers[i].id, i);
    }
    const sg_node_t *na = sg_graph_node(g, a), *nb = sg_graph_node(g, b), *nc = sg_graph_node(g, c);
    const sg_node_t *nd = sg_graph_node(g, d), *ne = sg_graph_node(g, e);
    assert_int_equal(na->accesses[0].buffer, 3);
    assert_int_equal(na->accesses[0].offset, 0);
    assert_int_equal(na->accesses[1].buffer, 0);
    assert_int_equal(nb->accesses[0].buffer, 3);
    assert_int_equal(nb->accesses[0].offset, 0x100000);
    assert_int_equal(nb->accesses[0].size, 64u << 20);
    assert_int_equal(nc->accesses[0].buffer, 4);
    assert_int_equal(nc->accesses[0].offset, 0);
    assert_int_equal(nc->accesses[0].size, 64u << 20);
    assert_int_equal(nd->accesses[0].buffer, 5);
    assert_int_equal(nd->accesses[0].offset, 0);
    assert_int_equal(nd->accesses[1].buffer, 1);
    assert_int_equal(ne->accesses[0].buffer, 2);
    /* again: nothing left over the threshold that is reached only in places */
    assert_int_equal(sg_capture_split_arenas(g, &lim, note, sizeof note), 0);
    sg_graph_destroy(g);

    /* reached everywhere, or named by a memory node: kept whole */
    g = sg_graph_create();
    sg_graph_add_stream(g, NULL, 0, &s0);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, base, 2 * GiB, &arena);
    sg_graph_add_node(g, SG_NODE_MEMSET, s0, 0, &a);
    sg_node_add_access(g, a, arena, 0, 2 * GiB, SG_ACCESS_WRITE);
    assert_int_equal(sg_capture_split_arenas(g, &lim, NULL, 0), 0);
    sg_graph_add_node(g, SG_NODE_MEM_FREE, s0, 1, &b);
    sg_graph_node(g, b)->u.mem.buffer = arena;
    sg_graph_add_node(g, SG_NODE_KERNEL, s0, 2, &c);
    sg_node_add_access(g, c, arena, 0, 4096, SG_ACCESS_READ);
    assert_int_equal(sg_capture_split_arenas(g, &lim, NULL, 0), 0);
    assert_int_equal(g->n_buffers, 1);
    sg_graph_destroy(g);
}

/* Open-ended kernel accesses are cut at the next entry into the buffer. */
static void test_segment_extents(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, b0, b1;
    assert_int_equal(sg_graph_add_stream(g, NULL, 0, &s0), 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x10000, 4096, &b0), 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x20000, 4096, &b1), 0);
    sg_node_id_t k0, k1, cp, k3, k4;
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s0, 0, &k0), 0);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s0, 1, &k1), 0);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_MEMCPY, s0, 2, &cp), 0);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s0, 3, &k3), 0);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s0, 4, &k4), 0);
    /* open-ended: size == rest of the buffer */
    assert_int_equal(sg_node_add_access(g, k0, b0, 0, 4096, SG_ACCESS_UNKNOWN), 0);
    assert_int_equal(sg_node_add_access(g, k1, b0, 1024, 3072, SG_ACCESS_READ), 0);
    assert_int_equal(sg_node_add_access(g, cp, b0, 2048, 512, SG_ACCESS_WRITE), 0);
    assert_int_equal(sg_node_add_access(g, k3, b0, 3072, 1024, SG_ACCESS_UNKNOWN), 0);
    /* a kernel access with a known size stays; another buffer is separate */
    assert_int_equal(sg_node_add_access(g, k4, b0, 0, 100, SG_ACCESS_READ), 0);
    assert_int_equal(sg_node_add_access(g, k4, b1, 0, 4096, SG_ACCESS_UNKNOWN), 0);

    assert_int_equal(sg_capture_segment_extents(g), 0);
    assert_int_equal(sg_graph_node(g, k0)->accesses[0].size, 1024); /* cut at k1's pointer */
    assert_int_equal(sg_graph_node(g, k1)->accesses[0].size, 1024); /* cut at the copy */
    assert_int_equal(sg_graph_node(g, cp)->accesses[0].size, 512);  /* copies are exact */
    assert_int_equal(sg_graph_node(g, k3)->accesses[0].size, 1024); /* last: to the end */
    assert_int_equal(sg_graph_node(g, k4)->accesses[0].size, 100);
    assert_int_equal(sg_graph_node(g, k4)->accesses[1].size, 4096); /* alone in b1 */
    /* idempotent */
    assert_int_equal(sg_capture_segment_extents(g), 0);
    assert_int_equal(sg_graph_node(g, k0)->accesses[0].size, 1024);
    sg_graph_destroy(g);
}

/* The exit summaries' tally of reasons: distinct texts counted apart, the
 * eighth and later distinct ones together, formatted on one line. */
static void test_reasons(void **state)
{
    (void)state;
    sg_reasons_t t;
    memset(&t, 0, sizeof t);
    char out[2000];
    sg_reasons_format(&t, out, sizeof out);
    assert_string_equal(out, "");
    sg_reasons_count(&t, "a");
    sg_reasons_count(&t, "b");
    sg_reasons_count(&t, "a");
    sg_reasons_format(&t, out, sizeof out);
    assert_string_equal(out, " (2 a; 1 b)");
    char why[8];
    for (int i = 0; i < 8; i++) {
        snprintf(why, sizeof why, "r%d", i);
        sg_reasons_count(&t, why);
    }
    sg_reasons_format(&t, out, sizeof out);
    assert_string_equal(out, " (2 a; 1 b; 1 r0; 1 r1; 1 r2; 1 r3; 1 r4; 3 other reasons)");
    /* cut, still terminated */
    sg_reasons_format(&t, out, 10);
    assert_string_equal(out, " (2 a; 1 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segment_extents),
        cmocka_unit_test(test_split_arenas),
        cmocka_unit_test(test_memmap_basic),
        cmocka_unit_test(test_memmap_vmm_merge_and_split),
        cmocka_unit_test(test_memmap_random),
        cmocka_unit_test(test_book_fork_join),
        cmocka_unit_test(test_book_calls),
        cmocka_unit_test(test_book_calls_again),
        cmocka_unit_test(test_book_event_reuse),
        cmocka_unit_test(test_book_two_waiters_and_fan3),
        cmocka_unit_test(test_book_labels_follow_join_order),
        cmocka_unit_test(test_book_update_and_capture_to_graph),
        cmocka_unit_test(test_book_failures_and_bounds),
        cmocka_unit_test(test_book_recapture_bounded),
        cmocka_unit_test(test_u64map_random),
        cmocka_unit_test(test_book_recycled_same_as_fresh),
        cmocka_unit_test(test_digest),
        cmocka_unit_test(test_outbox),
        cmocka_unit_test(test_outbox_rank),
        cmocka_unit_test(test_topo_parse),
        cmocka_unit_test(test_topo_golden_bundles),
        cmocka_unit_test(test_topo_bodies_only_stream),
        cmocka_unit_test(test_topo_explicit),
        cmocka_unit_test(test_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
