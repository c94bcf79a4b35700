/* test_check.c: unit tests of the hazard check (rewrite/check.c): the
 * planted-bug fixtures give exactly their hazards (kind and nodes), proven
 * from their kernels' code, and the correct fixtures none; each hazard kind
 * on graphs built here, with the cases that must not be reported; proven
 * against possible by how well each side is known (dense, exact, bound,
 * guess), atomics, lifetimes per allocation when two graph allocations
 * share an address, streams joined only by the end of the launch;
 * formatting and JSON; and the check against a brute-force oracle on
 * random graphs (every racy pair, every unordered use of an allocation,
 * every unordered reuse). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/sass.h"
#include "graph/bundle.h"
#include "graph/graph.h"
#include "rewrite/check.h"
#include "rewrite/pass.h"

/* ---- building graphs ------------------------------------------------------------ */

static sg_node_id_t node(sg_graph_t *g, sg_node_type_t t, uint32_t s, uint64_t seq)
{
    sg_node_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_node(g, t, s, seq, &id), SG_OK);
    if (t == SG_NODE_KERNEL) assert_int_equal(sg_node_set_kernel_name(g, id, "k"), SG_OK);
    return id;
}

static void edge(sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k, uint32_t ev)
{
    assert_int_equal(sg_graph_add_edge(g, a, b, k, ev, NULL), SG_OK);
}

static void access_(sg_graph_t *g, sg_node_id_t n, uint32_t b, uint64_t off, uint64_t size,
                    sg_access_mode_t m)
{
    assert_int_equal(sg_node_add_access(g, n, b, off, size, m), SG_OK);
}

static sg_graph_t *new_graph(uint32_t streams)
{
    sg_graph_t *g = sg_graph_create();
    for (uint32_t i = 0; i < streams; i++) assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
    assert_int_equal(sg_graph_add_event(g, NULL, 0, NULL), SG_OK);
    return g;
}

static uint32_t buffer(sg_graph_t *g, sg_buffer_kind_t kind, uint64_t addr, uint64_t size)
{
    uint32_t id;
    assert_int_equal(sg_graph_add_buffer(g, kind, addr, size, &id), SG_OK);
    return id;
}

static sg_node_id_t memnode(sg_graph_t *g, sg_node_type_t t, uint32_t s, uint64_t seq, uint32_t b)
{
    sg_node_id_t id = node(g, t, s, seq);
    sg_graph_node(g, id)->u.mem.buffer = b;
    if (t == SG_NODE_MEM_ALLOC) sg_graph_buffer(g, b)->alloc_node = id;
    return id;
}

typedef struct {
    sg_hazard_kind_t kind;
    sg_node_id_t a, b, from, to;
} want_t;

static void expect(const sg_graph_t *g, const want_t *w, size_t n)
{
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    if (res.n != n) {
        char line[2048];
        for (size_t i = 0; i < res.n; i++)
            print_message("got: %s\n", sg_hazard_format(g, &res.hazards[i], line, sizeof line));
    }
    assert_int_equal(res.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(res.hazards[i].kind, w[i].kind);
        assert_int_equal(res.hazards[i].nodes[0], w[i].a);
        assert_int_equal(res.hazards[i].nodes[1], w[i].b);
        assert_int_equal(res.hazards[i].missing_from, w[i].from);
        assert_int_equal(res.hazards[i].missing_to, w[i].to);
    }
    sg_check_result_free(&res);
}

/* ---- fixtures -------------------------------------------------------------------- */

static void test_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        want_t w[2];
        size_t n;
    } bugs[] = {
        {"bug_missing_wait", {{SG_HAZARD_RACE, 1, 2, 1, 2}}, 1},
        {"bug_free_before_use", {{SG_HAZARD_USE_AFTER_FREE, 2, 4, 2, 4}}, 1},
        {"bug_reuse_across_streams", {{SG_HAZARD_REUSE, 3, 5, 4, 5}}, 1},
        /* the lost join leaves s0's last kernel reading what s1 writes */
        {"bug_unjoined_fork", {{SG_HAZARD_RACE, 1, 3, 1, 3}, {SG_HAZARD_RACE, 2, 3, 2, 3}}, 2},
        /* write after write on the middle half of y */
        {"bug_waw_halves", {{SG_HAZARD_RACE, 1, 2, 1, 2}}, 1},
    };
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/golden", SGCAP_SOURCE_DIR);
    DIR *d = opendir(dir);
    if (!d) skip();
    struct dirent *de;
    int seen = 0, bugs_seen = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 8 || strcmp(de->d_name + len - 7, ".sgraph") != 0) continue;
        char path[8192], name[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(len - 7), de->d_name);
        sg_bundle_t *b = NULL;
        sg_diag_t diag;
        assert_int_equal(sg_bundle_open(path, &b, &diag), SG_OK);
        sg_graph_t *g = sg_bundle_graph(b);
        /* what `sgcap check` does first: the kernels' accesses from their code */
        bool ran = false;
        assert_int_equal(sg_rewrite_ensure_access(g, b, &ran, NULL, 0), SG_OK);
        assert_true(ran);
        size_t want = 0;
        const want_t *w = NULL;
        for (size_t i = 0; i < sizeof bugs / sizeof bugs[0]; i++)
            if (strcmp(bugs[i].name, name) == 0) w = bugs[i].w, want = bugs[i].n;
        if (strncmp(name, "bug_", 4) == 0) {
            assert_non_null(w); /* a new planted bug needs an expectation here */
            bugs_seen++;
        }
        print_message("%s\n", name);
        expect(g, w, want);
        /* every planted hazard is proven, with its byte range */
        sg_check_result_t res;
        assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
        assert_int_equal(res.n_proven, want);
        assert_int_equal(res.n_possible, 0);
        for (size_t i = 0; i < res.n; i++) {
            assert_true(res.hazards[i].proven);
            assert_true(res.hazards[i].lo < res.hazards[i].hi);
        }
        if (!strcmp(name, "bug_waw_halves")) { /* exactly the middle half of y */
            const sg_buffer_t *y = sg_graph_buffer(g, res.hazards[0].buffers[0]);
            assert_int_equal(res.hazards[0].lo, y->address + y->size / 4);
            assert_int_equal(res.hazards[0].hi, y->address + y->size * 3 / 4);
        }
        sg_check_result_free(&res);
        sg_bundle_close(b);
        seen++;
    }
    closedir(d);
    assert_true(seen >= 4);
    assert_int_equal(bugs_seen, 5);
}

/* Real captures that sgcap check once flagged (issue 11), in
 * tests/data/access/: PyTorch's two streams writing their own tensors from
 * a shared input (the pointers inside TensorIterator's by-value
 * Array<char*,N>; its fatbins cut to their sm_90 entries by
 * slim_fatbin.py) and CuPy ElementwiseKernels on two streams (pointers
 * inside CArray structs; cubins only). From the capture's guesses each has
 * a race between its two streams; from the code none is proven, and with
 * nvdisasm none is left at all, every pointer word found. */
static void test_false_alarms_of_real_captures(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint32_t kernels, all_known; /* with nvdisasm */
    } cases[] = {{"torch_shared_input", 2, 2},
                 /* CuPy's grid-stride loops: every index known (sass_loop.c) */
                 {"cupy_elementwise", 3, 3}};
    char nvd[4096];
    bool disasm = sg_sass_find_disassembler(nvd, sizeof nvd) == SG_OK;
    if (!disasm) print_message("no nvdisasm: only 'nothing proven' is checked\n");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/data/access/%s.sgraph", SGCAP_SOURCE_DIR,
                 cases[c].name);
        sg_bundle_t *b = NULL;
        sg_diag_t diag;
        assert_int_equal(sg_bundle_open(path, &b, &diag), SG_OK);
        sg_graph_t *g = sg_bundle_graph(b);
        /* the false alarm, from the guesses: a possible race across the streams */
        sg_check_result_t res;
        assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
        assert_int_equal(res.counts[SG_HAZARD_RACE], 1);
        assert_int_equal(res.n_proven, 0);
        assert_true(res.hazards[0].streams[0] != res.hazards[0].streams[1]);
        sg_check_result_free(&res);
        bool ran = false;
        assert_int_equal(sg_rewrite_ensure_access(g, b, &ran, NULL, 0), SG_OK);
        assert_true(ran);
        assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
        assert_int_equal(res.n_proven, 0);
        /* the side stream ends in a sink joined by the end of the launch: a note */
        assert_int_equal(res.n_joined_at_end, 1);
        uint32_t kernels = 0, known = 0, sass = 0;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node_t *x = sg_graph_node(g, i);
            if (!x || x->type != SG_NODE_KERNEL) continue;
            kernels++;
            known += x->u.kernel.facts.all_known;
            if (x->u.kernel.facts.source != SG_FACTS_SASS) continue;
            sass++;
            /* a load and a store address word, each within the parameters */
            assert_true(x->u.kernel.facts.n_pointers >= 2);
            assert_true(x->u.kernel.facts.complete);
        }
        assert_int_equal(kernels, cases[c].kernels);
        if (disasm) {
            if (res.n) {
                char line[2048];
                print_message("%s: %s\n", cases[c].name,
                              sg_hazard_format(g, &res.hazards[0], line, sizeof line));
            }
            assert_int_equal(res.n, 0);
            assert_int_equal(sass, kernels);
            assert_int_equal(known, cases[c].all_known);
        }
        sg_check_result_free(&res);
        sg_bundle_close(b);
    }
}

/* ---- races ------------------------------------------------------------------------ */

static void test_races(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(3);
    uint32_t a = buffer(g, SG_BUFFER_DEVICE, 0x1000, 0x1000);
    uint32_t alias = buffer(g, SG_BUFFER_DEVICE, 0x1800, 0x1000); /* overlaps a's upper half */
    sg_node_id_t root = node(g, SG_NODE_KERNEL, 0, 0);
    sg_node_id_t w0 = node(g, SG_NODE_KERNEL, 1, 1);        /* writes a[0, 0x800) */
    sg_node_id_t r1 = node(g, SG_NODE_KERNEL, 2, 2);        /* reads a[0, 0x800): race with w0 */
    sg_node_id_t r2 = node(g, SG_NODE_KERNEL, 2, 3);        /* reads a[0x800, ..): no overlap w0 */
    sg_node_id_t u3 = node(g, SG_NODE_KERNEL, 1, 4);        /* unknown on alias: races r2 */
    sg_node_id_t r4 = node(g, SG_NODE_KERNEL, 0, 5);        /* reads a: reads don't race reads */
    sg_node_id_t x5 = node(g, SG_NODE_KERNEL, SG_STREAM_EXPLICIT, 6); /* explicit writer */
    access_(g, w0, a, 0, 0x800, SG_ACCESS_WRITE);
    access_(g, r1, a, 0, 0x800, SG_ACCESS_READ);
    access_(g, r2, a, 0x800, 0x800, SG_ACCESS_READ);
    access_(g, u3, alias, 0, 0x100, SG_ACCESS_UNKNOWN);
    access_(g, r4, a, 0x8f0, 0x20, SG_ACCESS_READ);
    access_(g, x5, alias, 0x800, 0x10, SG_ACCESS_WRITE); /* beyond a: only alias */
    edge(g, root, w0, SG_EDGE_EVENT, 0);
    edge(g, root, r1, SG_EDGE_EVENT, 0);
    edge(g, r1, r2, SG_EDGE_STREAM, SG_NONE);
    edge(g, w0, u3, SG_EDGE_STREAM, SG_NONE);
    edge(g, root, r4, SG_EDGE_STREAM, SG_NONE);
    edge(g, root, x5, SG_EDGE_CONTROL, SG_NONE);
    /* join everything into s0 so nothing is unjoined */
    sg_node_id_t j = node(g, SG_NODE_KERNEL, 0, 9);
    edge(g, r4, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, u3, j, SG_EDGE_EVENT, 0);
    edge(g, r2, j, SG_EDGE_EVENT, 0);
    edge(g, x5, j, SG_EDGE_CONTROL, SG_NONE);
    want_t w[] = {
        {SG_HAZARD_RACE, w0, r1, w0, r1},
        {SG_HAZARD_RACE, r2, u3, r2, u3},
        {SG_HAZARD_RACE, u3, r4, u3, r4}, /* r4 reads 0x1900: inside u3's 0x1800+0x100 */
    };
    expect(g, w, 3);
    /* an edge orders w0 before r1: that race goes */
    edge(g, w0, r1, SG_EDGE_EVENT, 0);
    expect(g, w + 1, 2);
    sg_graph_destroy(g);
}

static void test_race_same_stream_and_reused_memory(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2);
    uint32_t a = buffer(g, SG_BUFFER_DEVICE, 0x1000, 0x1000);
    /* two writers on s0 with no path (dependencies replaced): not a
     * cross-stream hazard */
    sg_node_id_t k0 = node(g, SG_NODE_KERNEL, 0, 0), k1 = node(g, SG_NODE_KERNEL, 0, 1);
    access_(g, k0, a, 0, 0x1000, SG_ACCESS_WRITE);
    access_(g, k1, a, 0, 0x1000, SG_ACCESS_WRITE);
    expect(g, NULL, 0);
    sg_graph_destroy(g);
}

/* The message of the only hazard of g (which must have exactly one). */
static void only_hazard(const sg_graph_t *g, sg_hazard_t *h, char *line, size_t n)
{
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    if (res.n != 1)
        for (size_t i = 0; i < res.n; i++)
            print_message("got: %s\n", sg_hazard_format(g, &res.hazards[i], line, n));
    assert_int_equal(res.n, 1);
    *h = res.hazards[0];
    sg_hazard_format(g, h, line, n);
    sg_check_result_free(&res);
}

/* Accesses by address: one past its buffer's end races on the memory it
 * reaches and the finding names that buffer (issue 16: it was named after
 * the other access's buffer, with a range outside it); between two graph
 * allocations that do not share memory it is a race too, not left to the
 * reuse check. */
static void test_race_past_buffer_end(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        for (int kind = 0; kind < 2; kind++) {
            sg_graph_t *g = new_graph(2);
            sg_buffer_kind_t bk = kind ? SG_BUFFER_GRAPH_ALLOC : SG_BUFFER_DEVICE;
            uint32_t a = buffer(g, bk, 0x1000, 0x1000), b = buffer(g, bk, 0x2000, 0x1000);
            free(g->buffers[a].label);
            g->buffers[a].label = strdup("A");
            free(g->buffers[b].label);
            g->buffers[b].label = strdup("B");
            sg_node_id_t n0 = node(g, SG_NODE_KERNEL, 0, 0), n1 = node(g, SG_NODE_KERNEL, 1, 1);
            /* the writer runs 0x800 past A's end; the reader reads B */
            access_(g, order ? n1 : n0, a, 0, 0x1800, SG_ACCESS_WRITE);
            access_(g, order ? n0 : n1, b, 0, 0x100, SG_ACCESS_READ);
            sg_node_id_t j = node(g, SG_NODE_KERNEL, 0, 2);
            edge(g, n0, j, SG_EDGE_STREAM, SG_NONE);
            edge(g, n1, j, SG_EDGE_EVENT, 0);
            sg_hazard_t h;
            char line[2048];
            only_hazard(g, &h, line, sizeof line);
            assert_int_equal(h.kind, SG_HAZARD_RACE);
            assert_int_equal(h.lo, 0x2000);
            assert_int_equal(h.hi, 0x2100);
            if (!strstr(line, "race on B [0x2000, 0x2100)") ||
                !strstr(line, "writes it (past the end of A)"))
                fail_msg("%s", line);
            assert_null(strstr(line, "reads it (past"));
            sg_graph_destroy(g);
        }
    }
}

/* Range arithmetic never wraps: an offset near 2^64 (a bundle can say
 * anything) cannot hide a hazard, a buffer at the top of the address space
 * ends there. */
static void test_ranges_near_2_64(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2);
    uint32_t a = buffer(g, SG_BUFFER_DEVICE, 0x1000, 0x1000);
    sg_node_id_t n0 = node(g, SG_NODE_KERNEL, 0, 0), n1 = node(g, SG_NODE_KERNEL, 1, 1);
    access_(g, n0, a, UINT64_MAX - 0xfff, 0x2000, SG_ACCESS_WRITE); /* wraps to 0x0..0x1000 */
    access_(g, n1, a, 0, 0x100, SG_ACCESS_READ);
    sg_node_id_t j = node(g, SG_NODE_KERNEL, 0, 2);
    edge(g, n0, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, n1, j, SG_EDGE_EVENT, 0);
    sg_hazard_t h;
    char line[2048];
    only_hazard(g, &h, line, sizeof line);
    assert_int_equal(h.kind, SG_HAZARD_RACE);
    assert_int_equal(h.nodes[0], n0);
    assert_int_equal(h.nodes[1], n1);
    assert_int_equal(h.lo, 0x1000);
    assert_int_equal(h.hi, 0x1100);
    sg_graph_destroy(g);

    /* a graph allocation at the top: its range ends at 2^64 - 1, not below
     * its start */
    g = new_graph(2);
    uint32_t t = buffer(g, SG_BUFFER_GRAPH_ALLOC, UINT64_MAX - 0xfff, 0x2000);
    sg_node_id_t al = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, t);
    sg_node_id_t early = node(g, SG_NODE_KERNEL, 1, 1); /* not after the alloc */
    access_(g, early, t, UINT64_MAX, 0x10, SG_ACCESS_WRITE);
    j = node(g, SG_NODE_KERNEL, 0, 2);
    edge(g, al, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, early, j, SG_EDGE_EVENT, 0);
    only_hazard(g, &h, line, sizeof line);
    assert_int_equal(h.kind, SG_HAZARD_USE_AFTER_FREE);
    assert_true(h.lo <= h.hi);
    assert_int_equal(h.hi, UINT64_MAX);
    sg_graph_destroy(g);
}

/* ---- memory lifetime ------------------------------------------------------------------ */

static void test_use_after_free(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2);
    uint32_t t = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x1000);
    sg_node_id_t al = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, t);
    sg_node_id_t early = node(g, SG_NODE_KERNEL, 1, 1); /* before the alloc */
    sg_node_id_t k = node(g, SG_NODE_KERNEL, 0, 2);
    sg_node_id_t fr = memnode(g, SG_NODE_MEM_FREE, 0, 3, t);
    sg_node_id_t late = node(g, SG_NODE_KERNEL, 1, 4); /* after the free */
    access_(g, early, t, 0, 0x10, SG_ACCESS_WRITE);
    access_(g, k, t, 0, 0x1000, SG_ACCESS_READWRITE);
    access_(g, late, t, 0, 0x10, SG_ACCESS_READ);
    edge(g, al, k, SG_EDGE_STREAM, SG_NONE);
    edge(g, k, fr, SG_EDGE_STREAM, SG_NONE);
    edge(g, early, k, SG_EDGE_EVENT, 0);
    edge(g, fr, late, SG_EDGE_EVENT, 0);
    sg_node_id_t j = node(g, SG_NODE_KERNEL, 0, 5);
    edge(g, fr, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, late, j, SG_EDGE_EVENT, 0);
    want_t w[] = {
        {SG_HAZARD_USE_AFTER_FREE, early, al, al, early}, /* not after its alloc */
        {SG_HAZARD_USE_AFTER_FREE, late, fr, late, fr},   /* not before its free */
    };
    expect(g, w, 2);
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    char line[2048];
    assert_non_null(strstr(sg_hazard_format(g, &res.hazards[0], line, sizeof line),
                           "not ordered after its alloc"));
    assert_non_null(strstr(sg_hazard_format(g, &res.hazards[1], line, sizeof line),
                           "not ordered before its free"));
    json_t *js = sg_hazard_json(g, &res.hazards[1]);
    assert_string_equal(json_string_value(json_object_get(js, "kind")), "use_after_free");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(js, "missing_edge"), "from")), late);
    assert_string_equal(json_string_value(json_object_get(json_object_get(js, "range"), "lo")), "0x1000");
    assert_int_equal(json_array_size(json_object_get(js, "nodes")), 2);
    json_decref(js);
    sg_check_result_free(&res);
    sg_graph_destroy(g);
}

static void test_reuse(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2);
    uint32_t t1 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1000, 0x1000);
    uint32_t t2 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x1800, 0x1000);
    /* s0: alloc t1, k (uses t1), free t1 -> alloc t2, k2 (uses t2), free t2.
     * s1 reads t1 and is joined only at the end: the free is not before
     * its use (use_after_free), and the reuse is ordered after the free, so
     * no separate reuse finding. */
    sg_node_id_t a1 = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, t1);
    sg_node_id_t k = node(g, SG_NODE_KERNEL, 0, 1);
    sg_node_id_t side = node(g, SG_NODE_KERNEL, 1, 2);
    sg_node_id_t f1 = memnode(g, SG_NODE_MEM_FREE, 0, 3, t1);
    sg_node_id_t a2 = memnode(g, SG_NODE_MEM_ALLOC, 0, 4, t2);
    sg_node_id_t k2 = node(g, SG_NODE_KERNEL, 0, 5);
    sg_node_id_t f2 = memnode(g, SG_NODE_MEM_FREE, 0, 6, t2);
    sg_node_id_t j = node(g, SG_NODE_KERNEL, 0, 7);
    access_(g, k, t1, 0, 0x1000, SG_ACCESS_WRITE);
    access_(g, side, t1, 0, 0x1000, SG_ACCESS_READ);
    access_(g, k2, t2, 0, 0x1000, SG_ACCESS_WRITE);
    edge(g, a1, k, SG_EDGE_STREAM, SG_NONE);
    edge(g, k, side, SG_EDGE_EVENT, 0);
    edge(g, k, f1, SG_EDGE_STREAM, SG_NONE);
    edge(g, f1, a2, SG_EDGE_STREAM, SG_NONE);
    edge(g, a2, k2, SG_EDGE_STREAM, SG_NONE);
    edge(g, k2, f2, SG_EDGE_STREAM, SG_NONE);
    edge(g, f2, j, SG_EDGE_STREAM, SG_NONE);
    edge(g, side, j, SG_EDGE_EVENT, 0);
    want_t w1[] = {{SG_HAZARD_USE_AFTER_FREE, side, f1, side, f1}};
    expect(g, w1, 1);
    /* with the use joined before the free: clean */
    sg_graph_remove_edge(g, sg_graph_find_edge(g, side, j));
    edge(g, side, f1, SG_EDGE_EVENT, 0);
    expect(g, NULL, 0);
    /* t1 never freed in the graph: the reallocation races the side use */
    sg_graph_remove_node(g, f1);
    edge(g, k, a2, SG_EDGE_STREAM, SG_NONE);
    edge(g, side, j, SG_EDGE_EVENT, 0);
    want_t w2[] = {{SG_HAZARD_REUSE, side, a2, side, a2}};
    expect(g, w2, 1);
    sg_graph_destroy(g);
}

/* A stream whose last node does not reach the origin's last node is joined
 * by the end of the launch: a note, no hazard (the torch_shared_input
 * capture: a side stream ending in a sink). */
static void test_joined_at_end(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(3);
    sg_node_id_t k0 = node(g, SG_NODE_KERNEL, 1, 0); /* the first node: s1 is the origin */
    sg_node_id_t k1 = node(g, SG_NODE_KERNEL, 0, 1);
    sg_node_id_t k2 = node(g, SG_NODE_KERNEL, 2, 2);
    sg_node_id_t k3 = node(g, SG_NODE_KERNEL, 1, 3);
    edge(g, k0, k1, SG_EDGE_EVENT, 0);
    edge(g, k0, k2, SG_EDGE_EVENT, 0);
    edge(g, k0, k3, SG_EDGE_STREAM, SG_NONE);
    edge(g, k2, k3, SG_EDGE_EVENT, 0);
    expect(g, NULL, 0);
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    assert_int_equal(res.n_joined_at_end, 1);
    assert_int_equal(res.joined_at_end[0].stream, 0);
    assert_int_equal(res.joined_at_end[0].last, k1);
    assert_int_equal(res.joined_at_end[0].origin_last, k3);
    char line[1024];
    assert_non_null(strstr(sg_check_joined_format(g, &res.joined_at_end[0], line, sizeof line),
                           "joined by the end of the graph launch"));
    sg_check_result_free(&res);
    edge(g, k1, k3, SG_EDGE_EVENT, 0);
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    assert_int_equal(res.n_joined_at_end, 0);
    sg_check_result_free(&res);
    sg_graph_destroy(g);
}

/* An access whose range kind is r (code facts, as the access pass sets). */
static void access_r(sg_graph_t *g, sg_node_id_t n, uint32_t b, uint64_t off, uint64_t size,
                     sg_access_mode_t m, sg_range_kind_t r)
{
    access_(g, n, b, off, size, m);
    sg_node_t *x = sg_graph_node(g, n);
    x->accesses[x->n_accesses - 1].range = r;
    if (x->type == SG_NODE_KERNEL && r != SG_RANGE_GUESS) x->u.kernel.facts.source = SG_FACTS_PTX;
}

/* One race between two unordered kernels on s0/s1 with the given sides. */
static sg_hazard_t one_race(sg_range_kind_t ra, uint64_t alo, uint64_t ahi, sg_access_mode_t ma,
                            sg_range_kind_t rb, uint64_t blo, uint64_t bhi, sg_access_mode_t mb,
                            size_t *n)
{
    sg_graph_t *g = new_graph(2);
    uint32_t buf = buffer(g, SG_BUFFER_DEVICE, 0x10000, 0x10000);
    sg_node_id_t a = node(g, SG_NODE_KERNEL, 0, 0), b = node(g, SG_NODE_KERNEL, 1, 1);
    access_r(g, a, buf, alo, ahi - alo, ma, ra);
    access_r(g, b, buf, blo, bhi - blo, mb, rb);
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    *n = res.n;
    sg_hazard_t h;
    memset(&h, 0, sizeof h);
    if (res.n) h = res.hazards[0];
    char line[2048];
    if (res.n) {
        sg_hazard_format(g, &h, line, sizeof line);
        /* the line says which it is */
        assert_non_null(strstr(line, h.proven ? "proven race" : "possible race"));
        if (!h.proven) assert_non_null(strstr(line, "not proven: "));
        json_t *js = sg_hazard_json(g, &h);
        assert_true(json_is_true(json_object_get(js, "proven")) == h.proven);
        json_decref(js);
    }
    sg_check_result_free(&res);
    sg_graph_destroy(g);
    return h;
}

static void test_proven_or_possible(void **state)
{
    (void)state;
    size_t n;
    const sg_access_mode_t W = SG_ACCESS_WRITE, R = SG_ACCESS_READ;
    /* dense on both sides: every byte of the overlap is touched by both */
    sg_hazard_t h = one_race(SG_RANGE_DENSE, 0, 0x100, W, SG_RANGE_DENSE, 0x80, 0x180, R, &n);
    assert_int_equal(n, 1);
    assert_true(h.proven);
    assert_int_equal(h.lo, 0x10080);
    assert_int_equal(h.hi, 0x10100);
    /* exact against dense: the exact side's first byte lies in the dense one */
    h = one_race(SG_RANGE_EXACT, 0x80, 0x200, W, SG_RANGE_DENSE, 0, 0x100, R, &n);
    assert_true(n == 1 && h.proven);
    /* exact against dense, neither endpoint inside: strided, maybe disjoint */
    h = one_race(SG_RANGE_EXACT, 0, 0x400, W, SG_RANGE_DENSE, 0x100, 0x200, R, &n);
    assert_true(n == 1 && !h.proven);
    assert_non_null(strstr(h.why, "may not"));
    /* two exact ranges that share only a middle: not proven */
    h = one_race(SG_RANGE_EXACT, 0, 0x300, W, SG_RANGE_EXACT, 0x100, 0x400, W, &n);
    assert_true(n == 1 && !h.proven);
    assert_non_null(strstr(h.why, "neither is dense"));
    /* a bound: the code may touch none of it */
    h = one_race(SG_RANGE_BOUND, 0, 0x100, W, SG_RANGE_DENSE, 0, 0x100, R, &n);
    assert_true(n == 1 && !h.proven);
    assert_non_null(strstr(h.why, "is a bound"));
    /* a guess from the pointer arguments of a kernel nobody analysed */
    h = one_race(SG_RANGE_GUESS, 0, 0x100, SG_ACCESS_UNKNOWN, SG_RANGE_DENSE, 0, 0x100, R, &n);
    assert_true(n == 1 && !h.proven);
    assert_non_null(strstr(h.why, "is not analysed"));
    /* disjoint exact ranges: nothing at all */
    one_race(SG_RANGE_DENSE, 0, 0x100, W, SG_RANGE_DENSE, 0x100, 0x200, W, &n);
    assert_int_equal(n, 0);
    /* two atomic updates of the same counter do not race; an atomic and a read do */
    one_race(SG_RANGE_DENSE, 0, 4, SG_ACCESS_ATOMIC_RMW, SG_RANGE_DENSE, 0, 4, SG_ACCESS_ATOMIC_RMW,
             &n);
    assert_int_equal(n, 0);
    h = one_race(SG_RANGE_DENSE, 0, 4, SG_ACCESS_ATOMIC_RMW, SG_RANGE_DENSE, 0, 4, R, &n);
    assert_true(n == 1 && h.proven);
}

/* CUDA gives two successive graph allocations of one size the same address
 * (cudaMallocAsync/cudaFreeAsync twice in a row): lifetimes are per
 * allocation, so the second one's users are no use after the first's free,
 * whichever buffer capture attributed their pointers to. */
static void test_same_address_allocations(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(1);
    uint32_t t1 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x100000, 0x1000);
    uint32_t t2 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x100000, 0x1000);
    sg_node_id_t a1 = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, t1);
    sg_node_id_t k1 = node(g, SG_NODE_KERNEL, 0, 1);
    sg_node_id_t f1 = memnode(g, SG_NODE_MEM_FREE, 0, 2, t2); /* capture names the later one */
    sg_node_id_t a2 = memnode(g, SG_NODE_MEM_ALLOC, 0, 3, t2);
    sg_node_id_t k2 = node(g, SG_NODE_KERNEL, 0, 4);
    sg_node_id_t f2 = memnode(g, SG_NODE_MEM_FREE, 0, 5, t2);
    sg_graph_node(g, f1)->u.mem.address = sg_graph_node(g, f2)->u.mem.address = 0x100000;
    access_r(g, k1, t2, 0, 0x1000, SG_ACCESS_WRITE, SG_RANGE_DENSE); /* by address: t2 */
    access_r(g, k2, t2, 0, 0x1000, SG_ACCESS_WRITE, SG_RANGE_DENSE);
    edge(g, a1, k1, SG_EDGE_STREAM, SG_NONE);
    edge(g, k1, f1, SG_EDGE_STREAM, SG_NONE);
    edge(g, f1, a2, SG_EDGE_STREAM, SG_NONE);
    edge(g, a2, k2, SG_EDGE_STREAM, SG_NONE);
    edge(g, k2, f2, SG_EDGE_STREAM, SG_NONE);
    expect(g, NULL, 0);
    /* the same graph with the second pair on another stream, unordered: the
     * reallocation races k1's use of the first allocation, proven */
    sg_graph_destroy(g);
    g = new_graph(2);
    t1 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x100000, 0x1000);
    t2 = buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x100000, 0x1000);
    a1 = memnode(g, SG_NODE_MEM_ALLOC, 0, 0, t1);
    k1 = node(g, SG_NODE_KERNEL, 0, 1);
    a2 = memnode(g, SG_NODE_MEM_ALLOC, 1, 2, t2);
    k2 = node(g, SG_NODE_KERNEL, 1, 3);
    access_r(g, k1, t2, 0, 0x1000, SG_ACCESS_WRITE, SG_RANGE_DENSE);
    access_r(g, k2, t2, 0, 0x1000, SG_ACCESS_WRITE, SG_RANGE_DENSE);
    edge(g, a1, k1, SG_EDGE_STREAM, SG_NONE);
    edge(g, a2, k2, SG_EDGE_STREAM, SG_NONE);
    want_t w[] = {{SG_HAZARD_REUSE, k1, a2, k1, a2}};
    expect(g, w, 1);
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    assert_true(res.hazards[0].proven);
    assert_int_equal(res.hazards[0].buffers[0], t1);
    sg_check_result_free(&res);
    sg_graph_destroy(g);
}

static void test_max_hazards(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(2);
    uint32_t a = buffer(g, SG_BUFFER_DEVICE, 0x1000, 0x1000);
    for (int i = 0; i < 40; i++) {
        sg_node_id_t k = node(g, SG_NODE_KERNEL, (uint32_t)(i % 2), (uint64_t)i);
        access_(g, k, a, 0, 0x1000, SG_ACCESS_WRITE);
        if (i >= 2) edge(g, k - 2, k, SG_EDGE_STREAM, SG_NONE);
    }
    sg_check_options_t opt = {.max_hazards = 10};
    sg_check_result_t res;
    assert_int_equal(sg_check_run(g, &opt, &res), SG_OK);
    assert_true(res.truncated);
    assert_true(res.n <= 10);
    sg_check_result_free(&res);
    assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
    assert_false(res.truncated);
    assert_int_equal(res.counts[SG_HAZARD_RACE], 20 * 20); /* every s0/s1 pair */
    sg_check_result_free(&res);
    sg_graph_destroy(g);
}

/* ---- against brute force --------------------------------------------------------------- */

static uint64_t rng = 0x853c49e6748fea9bull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static sg_graph_t *random_graph(uint32_t n)
{
    uint32_t ns = 1 + rnd(4), nb = 1 + rnd(5);
    sg_graph_t *g = new_graph(ns);
    for (uint32_t i = 0; i < nb; i++) {
        bool ga = rnd(2);
        buffer(g, ga ? SG_BUFFER_GRAPH_ALLOC : SG_BUFFER_DEVICE, 0x1000 + (uint64_t)rnd(4) * 0x400,
               0x400 + (uint64_t)rnd(3) * 0x400);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = rnd(10) == 0 ? SG_STREAM_EXPLICIT : rnd(ns);
        uint32_t b = rnd(nb);
        sg_node_type_t t = SG_NODE_KERNEL;
        if (g->buffers[b].kind == SG_BUFFER_GRAPH_ALLOC && rnd(5) == 0)
            t = g->buffers[b].alloc_node == SG_NONE ? SG_NODE_MEM_ALLOC : SG_NODE_MEM_FREE;
        sg_node_id_t v;
        if (t == SG_NODE_KERNEL) {
            v = node(g, t, s, i);
            uint32_t na = rnd(3);
            static const sg_access_mode_t modes[] = {SG_ACCESS_READ, SG_ACCESS_WRITE,
                                                     SG_ACCESS_READWRITE, SG_ACCESS_UNKNOWN};
            for (uint32_t k = 0; k < na; k++) {
                uint32_t bb = rnd(nb);
                uint64_t off = (uint64_t)rnd(4) * 0x100;
                if (off >= g->buffers[bb].size) off = 0;
                access_(g, v, bb, off, 0x100 + (uint64_t)rnd(4) * 0x100, modes[rnd(4)]);
            }
        } else {
            v = memnode(g, t, s, i, b);
        }
        uint32_t k = i ? rnd(3) : 0;
        for (uint32_t j = 0; j < k; j++) {
            sg_node_id_t a = rnd(i);
            if (sg_graph_find_edge(g, a, v) == SG_NONE) edge(g, a, v, SG_EDGE_STREAM, SG_NONE);
        }
    }
    return g;
}

static bool **closure(const sg_graph_t *g)
{
    uint32_t n = g->n_nodes;
    bool **r = calloc(n, sizeof *r);
    for (uint32_t i = 0; i < n; i++) r[i] = calloc(n, 1);
    for (uint32_t i = n; i-- > 0;) { /* ids are a topological order here */
        r[i][i] = true;
        const sg_node_t *x = &g->nodes[i];
        for (uint32_t k = 0; k < x->n_out; k++) {
            sg_node_id_t y = g->edges[x->out[k]].to;
            for (uint32_t z = 0; z < n; z++) r[i][z] |= r[y][z];
        }
    }
    return r;
}

typedef struct {
    int kind;
    sg_node_id_t a, b;
} hkey_t;

static int cmp_key(const void *pa, const void *pb)
{
    const hkey_t *x = pa, *y = pb;
    if (x->kind != y->kind) return x->kind - y->kind;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

/* The graph allocation an access at addr by a node enqueued at seq means:
 * among the graph allocations holding addr, the one allocated last before
 * seq (b itself when there is none, or when b is no graph allocation). */
static uint32_t meant_buffer(const sg_graph_t *g, uint32_t b, uint64_t addr, uint64_t seq)
{
    if (g->buffers[b].kind != SG_BUFFER_GRAPH_ALLOC) return b;
    uint32_t best = b;
    uint64_t best_seq = 0;
    bool any = false;
    for (uint32_t c = 0; c < g->n_buffers; c++) {
        const sg_buffer_t *x = &g->buffers[c];
        if (x->kind != SG_BUFFER_GRAPH_ALLOC || x->alloc_node == SG_NONE) continue;
        uint64_t as = g->nodes[x->alloc_node].seq;
        if (addr < x->address || addr >= x->address + x->size || as >= seq) continue;
        if (!any || as > best_seq) best = c, best_seq = as, any = true;
    }
    return best;
}

static uint32_t acc_buffer(const sg_graph_t *g, const sg_node_t *x, const sg_access_t *a)
{
    return meant_buffer(g, a->buffer, g->buffers[a->buffer].address + a->offset, x->seq);
}

static uint32_t free_buffer(const sg_graph_t *g, const sg_node_t *f)
{
    return meant_buffer(g, f->u.mem.buffer, g->buffers[f->u.mem.buffer].address, f->seq);
}

static size_t brute(const sg_graph_t *g, hkey_t *out)
{
    uint32_t n = g->n_nodes, nb = g->n_buffers;
    bool **r = closure(g);
    size_t k = 0;
    /* races */
    for (uint32_t x = 0; x < n; x++) {
        const sg_node_t *nx = &g->nodes[x];
        if (nx->type != SG_NODE_KERNEL) continue;
        for (uint32_t y = x + 1; y < n; y++) {
            const sg_node_t *ny = &g->nodes[y];
            if (ny->type != SG_NODE_KERNEL || r[x][y] || r[y][x]) continue;
            bool diff = nx->stream == SG_STREAM_EXPLICIT || ny->stream == SG_STREAM_EXPLICIT ||
                        nx->stream != ny->stream;
            if (!diff) continue;
            bool hit = false;
            for (uint32_t i = 0; i < nx->n_accesses && !hit; i++)
                for (uint32_t j = 0; j < ny->n_accesses && !hit; j++) {
                    const sg_access_t *p = &nx->accesses[i], *q = &ny->accesses[j];
                    if (!((p->mode | q->mode) & SG_ACCESS_WRITE)) continue;
                    uint32_t pb = acc_buffer(g, nx, p), qb = acc_buffer(g, ny, q);
                    const sg_buffer_t *bp = &g->buffers[pb], *bq = &g->buffers[qb];
                    /* two graph allocations sharing memory: judged as reuse; ones
                     * that do not share it meet only through an access past an
                     * end, and that is a race */
                    if (pb != qb && bp->alloc_node != SG_NONE &&
                        bq->alloc_node != SG_NONE && bp->address < bq->address + bq->size &&
                        bq->address < bp->address + bp->size)
                        continue;
                    uint64_t plo = g->buffers[p->buffer].address + p->offset,
                             qlo = g->buffers[q->buffer].address + q->offset;
                    if (plo < qlo + q->size && qlo < plo + p->size) hit = true;
                }
            if (hit) out[k++] = (hkey_t){SG_HAZARD_RACE, x, y};
        }
    }
    /* use after free */
    for (uint32_t b = 0; b < nb; b++) {
        for (uint32_t u = 0; u < n; u++) {
            const sg_node_t *nu = &g->nodes[u];
            bool uses = false;
            for (uint32_t i = 0; i < nu->n_accesses; i++) uses |= acc_buffer(g, nu, &nu->accesses[i]) == b;
            if (nu->type != SG_NODE_KERNEL || !uses) continue;
            sg_node_id_t a = g->buffers[b].alloc_node;
            if (a != SG_NONE && !r[a][u]) out[k++] = (hkey_t){SG_HAZARD_USE_AFTER_FREE, u, a};
            for (uint32_t f = 0; f < n; f++)
                if (g->nodes[f].type == SG_NODE_MEM_FREE && free_buffer(g, &g->nodes[f]) == b && !r[u][f])
                    out[k++] = (hkey_t){SG_HAZARD_USE_AFTER_FREE, u, f};
        }
    }
    /* reuse: (first buffer, second buffer) as the key */
    for (uint32_t b1 = 0; b1 < nb; b1++) {
        for (uint32_t b2 = b1 + 1; b2 < nb; b2++) {
            const sg_buffer_t *x = &g->buffers[b1], *y = &g->buffers[b2];
            if (x->alloc_node == SG_NONE || y->alloc_node == SG_NONE) continue;
            if (!(x->address < y->address + y->size && y->address < x->address + x->size)) continue;
            sg_node_id_t a1 = x->alloc_node, a2 = y->alloc_node;
            bool first1 = r[a1][a2] ? true : r[a2][a1] ? false : g->nodes[a1].seq < g->nodes[a2].seq;
            uint32_t f = first1 ? b1 : b2, s = first1 ? b2 : b1;
            sg_node_id_t as = g->buffers[s].alloc_node;
            bool freed_before = false, bad = false;
            for (uint32_t v = 0; v < n; v++) {
                if (g->nodes[v].type == SG_NODE_MEM_FREE && free_buffer(g, &g->nodes[v]) == f &&
                    r[v][as])
                    freed_before = true;
                if (g->nodes[v].type != SG_NODE_KERNEL) continue;
                for (uint32_t i = 0; i < g->nodes[v].n_accesses; i++)
                    if (acc_buffer(g, &g->nodes[v], &g->nodes[v].accesses[i]) == f && !r[v][as])
                        bad = true;
            }
            if (!freed_before && bad) out[k++] = (hkey_t){SG_HAZARD_REUSE, f, s};
        }
    }
    for (uint32_t i = 0; i < n; i++) free(r[i]);
    free(r);
    qsort(out, k, sizeof *out, cmp_key);
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (w == 0 || cmp_key(&out[w - 1], &out[i]) != 0) out[w++] = out[i];
    return w;
}

static void test_against_brute_force(void **state)
{
    (void)state;
    size_t total[SG_HAZARD_KIND_COUNT] = {0};
    for (int round = 0; round < 400; round++) {
        sg_graph_t *g = random_graph(2 + rnd(60));
        hkey_t *want = malloc(200000 * sizeof *want);
        size_t nw = brute(g, want);
        sg_check_result_t res;
        assert_int_equal(sg_check_run(g, NULL, &res), SG_OK);
        hkey_t *got = malloc((res.n + 1) * sizeof *got);
        for (size_t i = 0; i < res.n; i++) {
            const sg_hazard_t *h = &res.hazards[i];
            got[i] = (hkey_t){h->kind, h->nodes[0], h->nodes[1]};
            if (h->kind == SG_HAZARD_REUSE) got[i] = (hkey_t){h->kind, h->buffers[0], h->buffers[1]};
            /* the fix named is an edge that does not exist and would not close a cycle */
            assert_int_equal(sg_graph_find_edge(g, h->missing_from, h->missing_to), SG_NONE);
            assert_false(sg_graph_reaches(g, h->missing_from, h->missing_to));
            total[h->kind]++;
        }
        qsort(got, res.n, sizeof *got, cmp_key);
        if (nw != res.n) {
            char *js = NULL;
            if (sg_bundle_to_json(g, &js) == SG_OK) {
                FILE *f = fopen("test_check.mismatch.json", "w");
                if (f) fputs(js, f), fclose(f);
                free(js);
            }
            for (size_t i = 0; i < nw; i++) print_message("want %d %u %u\n", want[i].kind, want[i].a, want[i].b);
            for (size_t i = 0; i < res.n; i++) print_message("got  %d %u %u\n", got[i].kind, got[i].a, got[i].b);
        }
        assert_int_equal(nw, res.n);
        for (size_t i = 0; i < nw; i++) assert_int_equal(cmp_key(&want[i], &got[i]), 0);
        free(got);
        free(want);
        sg_check_result_free(&res);
        sg_graph_destroy(g);
    }
    for (int k = 0; k < SG_HAZARD_KIND_COUNT; k++) assert_true(total[k] > 10); /* all exercised */
}

/* A long, well synchronized graph: four streams of 25k kernels, each
 * writing its own slot of its stream's buffer; every other node of a
 * stream waits for the previous stream (a ring) and reads the slot the
 * last node there wrote. One planted read without a wait: the check must
 * find just that race. */
static void test_large_graph(void **state)
{
    (void)state;
    sg_graph_t *g = new_graph(4);
    uint32_t n = 100000, slots = n / 4 + 1;
    uint32_t bufs[4];
    for (int i = 0; i < 4; i++)
        bufs[i] = buffer(g, SG_BUFFER_DEVICE, 0x10000000ull * (uint64_t)(i + 1), (uint64_t)slots * 0x100);
    sg_node_id_t last[4] = {SG_NONE, SG_NONE, SG_NONE, SG_NONE};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = i % 4, p = (s + 3) % 4;
        sg_node_id_t v = node(g, SG_NODE_KERNEL, s, i);
        access_(g, v, bufs[s], (uint64_t)(i / 4) * 0x100, 0x100, SG_ACCESS_WRITE);
        if (last[s] != SG_NONE) edge(g, last[s], v, SG_EDGE_STREAM, SG_NONE);
        if ((i / 4) % 2 == 0 && last[p] != SG_NONE) {
            edge(g, last[p], v, SG_EDGE_EVENT, 0);
            access_(g, v, bufs[p], (uint64_t)(last[p] / 4) * 0x100, 0x100, SG_ACCESS_READ);
        }
        last[s] = v;
    }
    sg_node_id_t j = node(g, SG_NODE_KERNEL, 0, n);
    for (int s = 0; s < 4; s++) edge(g, last[s], j, s ? SG_EDGE_EVENT : SG_EDGE_STREAM, s ? 0 : SG_NONE);
    expect(g, NULL, 0);
    /* 50005 (s1, no wait) reads the slot 50004 (s0) writes */
    access_(g, 50005, bufs[0], (uint64_t)(50004 / 4) * 0x100, 0x100, SG_ACCESS_READ);
    want_t w[] = {{SG_HAZARD_RACE, 50004, 50005, 50004, 50005}};
    expect(g, w, 1);
    sg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_false_alarms_of_real_captures),
        cmocka_unit_test(test_races),
        cmocka_unit_test(test_race_same_stream_and_reused_memory),
        cmocka_unit_test(test_race_past_buffer_end),
        cmocka_unit_test(test_ranges_near_2_64),
        cmocka_unit_test(test_use_after_free),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_joined_at_end),
        cmocka_unit_test(test_proven_or_possible),
        cmocka_unit_test(test_same_address_allocations),
        cmocka_unit_test(test_max_hazards),
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_large_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
