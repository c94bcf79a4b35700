/* test_graph.c: unit tests of the graph model (graph/graph.c): every API
 * function with its error cases, the mutations the rewriter relies on
 * (remove, merge_chain), the deterministic queries, clone independence, and
 * a property test on random DAGs checking adjacency consistency, a shadow
 * model of the edge set, and that each mutation touches only the nodes it
 * involves (the structural form of the O(degree) contract). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/views.h"

/* ---- helpers --------------------------------------------------------------- */

static sg_node_id_t add_node(sg_graph_t *g, sg_node_type_t t, uint32_t stream, uint64_t seq)
{
    sg_node_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_node(g, t, stream, seq, &id), SG_OK);
    return id;
}

static sg_edge_id_t add_edge(sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k,
                             uint32_t ev)
{
    sg_edge_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_edge(g, a, b, k, ev, &id), SG_OK);
    return id;
}

/* Number of live edges a -> b of kind k (any event). */
static uint32_t count_edges(const sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k)
{
    uint32_t n = 0, c = 0;
    const sg_edge_id_t *out = sg_graph_out_edges(g, a, &n);
    for (uint32_t i = 0; i < n; i++) {
        const sg_edge_t *e = sg_graph_edge(g, out[i]);
        if (e && e->to == b && e->kind == k) c++;
    }
    return c;
}

/* Every live edge is in exactly its endpoints' lists, once; every list entry
 * is a live edge with the right endpoint; counts agree. */
static void check_adjacency(const sg_graph_t *g)
{
    uint32_t live_nodes = 0, live_edges = 0, sum_in = 0, sum_out = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = &g->nodes[i];
        assert_int_equal(n->id, i);
        if (n->removed) {
            assert_int_equal(n->n_in, 0);
            assert_int_equal(n->n_out, 0);
            assert_null(sg_graph_node(g, i));
            continue;
        }
        live_nodes++;
        assert_true(n->n_in <= n->cap_in);
        assert_true(n->n_out <= n->cap_out);
        sum_in += n->n_in;
        sum_out += n->n_out;
        for (uint32_t k = 0; k < n->n_in; k++) {
            const sg_edge_t *e = sg_graph_edge(g, n->in[k]);
            assert_non_null(e);
            assert_int_equal(e->to, i);
            for (uint32_t j = k + 1; j < n->n_in; j++)
                assert_int_not_equal(n->in[j], n->in[k]);
        }
        for (uint32_t k = 0; k < n->n_out; k++) {
            const sg_edge_t *e = sg_graph_edge(g, n->out[k]);
            assert_non_null(e);
            assert_int_equal(e->from, i);
            for (uint32_t j = k + 1; j < n->n_out; j++)
                assert_int_not_equal(n->out[j], n->out[k]);
        }
    }
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        assert_int_equal(e->id, i);
        if (e->removed) {
            assert_null(sg_graph_edge(g, i));
            continue;
        }
        live_edges++;
        const sg_node_t *a = sg_graph_node(g, e->from), *b = sg_graph_node(g, e->to);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_not_equal(e->from, e->to);
        uint32_t seen = 0;
        for (uint32_t k = 0; k < a->n_out; k++)
            seen += a->out[k] == i;
        assert_int_equal(seen, 1);
        seen = 0;
        for (uint32_t k = 0; k < b->n_in; k++)
            seen += b->in[k] == i;
        assert_int_equal(seen, 1);
        assert_true(e->kind == SG_EDGE_EVENT ? e->event != SG_NONE : e->event == SG_NONE);
    }
    assert_int_equal(live_nodes, sg_graph_node_count(g));
    assert_int_equal(live_edges, sg_graph_edge_count(g));
    assert_int_equal(sum_in, live_edges);
    assert_int_equal(sum_out, live_edges);
}

static char *dump_of(const sg_graph_t *g)
{
    char *s = NULL;
    assert_int_equal(sg_dump_string(g, &s), SG_OK);
    assert_non_null(s);
    return s;
}

/* ---- names and errors -------------------------------------------------------- */

static void test_strerror_and_names(void **state)
{
    (void)state;
    int codes[] = {SG_OK,  SG_ENOMEM, SG_EINVAL,       SG_ENOENT, SG_ECYCLE, SG_EFORMAT,
                   SG_EIO, SG_ELIMIT, SG_EUNSUPPORTED, SG_EEXIST, SG_ECUDA};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *m = sg_strerror(codes[i]);
        assert_non_null(m);
        assert_string_not_equal(m, "unknown error");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, sg_strerror(codes[j]));
    }
    assert_string_equal(sg_strerror(-999), "unknown error");
    assert_string_equal(sg_strerror(42), "unknown error");

    for (int t = 0; t < SG_NODE_TYPE_COUNT; t++)
        assert_int_equal(sg_node_type_from_name(sg_node_type_name((sg_node_type_t)t)), t);
    assert_string_equal(sg_node_type_name(SG_NODE_EVENT_RECORD), "event_record");
    assert_string_equal(sg_node_type_name(SG_NODE_TYPE_COUNT), "invalid");
    assert_int_equal(sg_node_type_from_name("Kernel"), -1);
    assert_int_equal(sg_node_type_from_name(""), -1);
    assert_int_equal(sg_node_type_from_name(NULL), -1);

    for (int k = 0; k < SG_EDGE_KIND_COUNT; k++)
        assert_int_equal(sg_edge_kind_from_name(sg_edge_kind_name((sg_edge_kind_t)k)), k);
    assert_string_equal(sg_edge_kind_name(SG_EDGE_DEALLOC), "dealloc");
    assert_string_equal(sg_edge_kind_name(SG_EDGE_KIND_COUNT), "invalid");
    assert_int_equal(sg_edge_kind_from_name("events"), -1);
    assert_int_equal(sg_edge_kind_from_name(NULL), -1);
}

/* ---- create, tables ------------------------------------------------------------ */

static void test_create_destroy(void **state)
{
    (void)state;
    sg_graph_destroy(NULL);
    assert_null(sg_graph_create_body(NULL));
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    assert_ptr_equal(g->root, g);
    assert_int_equal(sg_graph_node_count(g), 0);
    assert_int_equal(sg_graph_edge_count(g), 0);
    assert_int_equal(sg_graph_node_count(NULL), 0);
    assert_int_equal(sg_graph_edge_count(NULL), 0);
    sg_graph_t *body = sg_graph_create_body(g);
    assert_non_null(body);
    assert_ptr_equal(body->root, g);
    /* a body of a body still points at the root */
    sg_graph_t *inner = sg_graph_create_body(body);
    assert_ptr_equal(inner->root, g);
    sg_graph_destroy(inner);
    sg_graph_destroy(body);
    sg_graph_destroy(g);
}

static void test_tables(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t id = 99;
    assert_int_equal(sg_graph_add_stream(NULL, NULL, 0, &id), SG_EINVAL);
    assert_int_equal(sg_graph_add_stream(g, NULL, 0x1234, &id), SG_OK);
    assert_int_equal(id, 0);
    assert_int_equal(sg_graph_add_stream(g, "compute", 0x5678, NULL), SG_OK);
    assert_int_equal(sg_graph_add_stream(g, NULL, 0, &id), SG_OK);
    assert_int_equal(id, 2);
    assert_string_equal(sg_graph_stream(g, 0)->label, "s0");
    assert_string_equal(sg_graph_stream(g, 1)->label, "compute");
    assert_string_equal(sg_graph_stream(g, 2)->label, "s2");
    assert_int_equal(sg_graph_stream(g, 1)->handle, 0x5678);
    assert_int_equal(sg_graph_stream(g, 1)->id, 1);
    assert_null(sg_graph_stream(g, 3));
    assert_null(sg_graph_stream(g, SG_STREAM_EXPLICIT));
    assert_null(sg_graph_stream(NULL, 0));

    assert_int_equal(sg_graph_add_event(NULL, NULL, 0, NULL), SG_EINVAL);
    assert_int_equal(sg_graph_add_event(g, NULL, 7, &id), SG_OK);
    assert_int_equal(id, 0);
    assert_int_equal(sg_graph_add_event(g, "done", 8, &id), SG_OK);
    assert_string_equal(sg_graph_event(g, 0)->label, "e0");
    assert_string_equal(sg_graph_event(g, 1)->label, "done");
    assert_int_equal(sg_graph_event(g, 0)->handle, 7);
    assert_null(sg_graph_event(g, 2));
    assert_null(sg_graph_event(NULL, 0));

    assert_int_equal(sg_graph_add_buffer(NULL, SG_BUFFER_DEVICE, 0, 1, NULL), SG_EINVAL);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_KIND_COUNT, 0, 1, NULL), SG_EINVAL);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x1000, 0x100, &id), SG_OK);
    assert_int_equal(id, 0);
    assert_int_equal(sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x2000, 0x10, &id), SG_OK);
    sg_buffer_t *b = sg_graph_buffer(g, 1);
    assert_string_equal(b->label, "b1");
    assert_int_equal(b->kind, SG_BUFFER_GRAPH_ALLOC);
    assert_int_equal(b->alloc_node, SG_NONE);
    assert_null(b->before_file);
    assert_null(sg_graph_buffer(g, 2));
    assert_int_equal(sg_graph_find_buffer(g, 0x1000), 0);
    assert_int_equal(sg_graph_find_buffer(g, 0x10ff), 0);
    assert_int_equal(sg_graph_find_buffer(g, 0x1100), SG_NONE); /* end is exclusive */
    assert_int_equal(sg_graph_find_buffer(g, 0xfff), SG_NONE);
    assert_int_equal(sg_graph_find_buffer(g, 0x200f), 1);
    assert_int_equal(sg_graph_find_buffer(g, UINT64_MAX), SG_NONE);
    assert_int_equal(sg_graph_find_buffer(NULL, 0x1000), SG_NONE);

    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_FATBIN, "0123", 1, NULL), SG_EINVAL);
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_FATBIN, NULL, 1, NULL), SG_EINVAL);
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_KIND_COUNT, "0123456789abcdef", 1, NULL),
                     SG_EINVAL);
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_FATBIN, "0123456789abcdef0", 1, NULL),
                     SG_EINVAL);
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_PTX, "0123456789abcdef", 77, &id), SG_OK);
    assert_int_equal(id, 0);
    assert_string_equal(sg_graph_image(g, 0)->hash, "0123456789abcdef");
    assert_int_equal(sg_graph_image(g, 0)->size, 77);
    assert_int_equal(sg_graph_image(g, 0)->kind, SG_IMAGE_PTX);
    assert_null(sg_graph_image(g, 1));

    /* tables live on the root: a body adds to and reads from it */
    sg_graph_t *body = sg_graph_create_body(g);
    assert_int_equal(sg_graph_add_stream(body, NULL, 0, &id), SG_OK);
    assert_int_equal(id, 3);
    assert_int_equal(g->n_streams, 4);
    assert_int_equal(body->n_streams, 0);
    assert_string_equal(sg_graph_stream(body, 1)->label, "compute");
    assert_int_equal(sg_graph_find_buffer(body, 0x2000), 1);
    sg_graph_destroy(body);

    /* labels are copied */
    char label[8] = "mine";
    assert_int_equal(sg_graph_add_event(g, label, 0, &id), SG_OK);
    label[0] = 'X';
    assert_string_equal(sg_graph_event(g, id)->label, "mine");
    sg_graph_destroy(g);
}

/* ---- nodes ------------------------------------------------------------------------ */

static void test_nodes_and_setters(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t buf;
    sg_graph_add_stream(g, NULL, 0, NULL);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x1000, 64, &buf);
    sg_node_id_t id;
    assert_int_equal(sg_graph_add_node(NULL, SG_NODE_KERNEL, 0, 0, &id), SG_EINVAL);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_TYPE_COUNT, 0, 0, &id), SG_EINVAL);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_EMPTY, 0, 0, NULL), SG_OK);
    sg_node_id_t k = add_node(g, SG_NODE_KERNEL, 0, 5);
    sg_node_id_t rec = add_node(g, SG_NODE_EVENT_RECORD, 0, 6);
    sg_node_id_t alloc = add_node(g, SG_NODE_MEM_ALLOC, SG_STREAM_EXPLICIT, 7);
    sg_node_id_t op = add_node(g, SG_NODE_OPAQUE, 0, 8);
    assert_int_equal(k, 1);
    assert_int_equal(sg_graph_node_count(g), 5);

    sg_node_t *n = sg_graph_node(g, k);
    assert_int_equal(n->id, k);
    assert_int_equal(n->type, SG_NODE_KERNEL);
    assert_int_equal(n->seq, 5);
    assert_int_equal(n->stream, 0);
    assert_false(n->synthesized);
    assert_true(n->duration_ns < 0);
    assert_int_equal(n->u.kernel.image, SG_NONE);
    assert_int_equal(sg_graph_node(g, rec)->u.event, SG_NONE);
    assert_int_equal(sg_graph_node(g, alloc)->u.mem.buffer, SG_NONE);
    assert_int_equal(sg_graph_node(g, alloc)->stream, SG_STREAM_EXPLICIT);
    assert_null(sg_graph_node(g, 99));
    assert_null(sg_graph_node(g, SG_NONE));
    assert_null(sg_graph_node(NULL, 0));

    /* label: copy, replace, clear */
    assert_int_equal(sg_node_set_label(g, k, "first"), SG_OK);
    assert_int_equal(sg_node_set_label(g, k, "second"), SG_OK);
    assert_string_equal(sg_graph_node(g, k)->label, "second");
    assert_int_equal(sg_node_set_label(g, k, NULL), SG_OK);
    assert_null(sg_graph_node(g, k)->label);
    assert_int_equal(sg_node_set_label(g, 99, "x"), SG_EINVAL);

    /* kernel name */
    assert_int_equal(sg_node_set_kernel_name(g, rec, "_Z1kv"), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_name(g, k, NULL), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_name(g, 99, "_Z1kv"), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_name(g, k, "_Z1kv"), SG_OK);
    assert_int_equal(sg_node_set_kernel_name(g, k, "_Z1kPf"), SG_OK);
    assert_string_equal(sg_graph_node(g, k)->u.kernel.name, "_Z1kPf");

    /* kernel params: validation and copy semantics */
    uint32_t off[2] = {0, 8}, sz[2] = {8, 4};
    uint8_t bytes[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    assert_int_equal(sg_node_set_kernel_params(g, rec, 2, off, sz, bytes, 12), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_params(g, k, 2, NULL, sz, bytes, 12), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_params(g, k, 2, off, NULL, bytes, 12), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_params(g, k, 2, off, sz, NULL, 12), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_params(g, k, 2, off, sz, bytes, 11), SG_EINVAL);
    uint32_t big_off[1] = {UINT32_MAX}, big_sz[1] = {2};
    assert_int_equal(sg_node_set_kernel_params(g, k, 1, big_off, big_sz, bytes, 12), SG_EINVAL);
    assert_int_equal(sg_node_set_kernel_params(g, k, 2, off, sz, bytes, 12), SG_OK);
    bytes[0] = 0xff;
    off[0] = 4;
    n = sg_graph_node(g, k);
    assert_int_equal(n->u.kernel.n_params, 2);
    assert_int_equal(n->u.kernel.params_size, 12);
    assert_int_equal(n->u.kernel.param_bytes[0], 1);
    assert_int_equal(n->u.kernel.param_offsets[0], 0);
    assert_int_equal(n->u.kernel.param_sizes[1], 4);
    assert_int_equal(sg_node_set_kernel_params(g, k, 0, NULL, NULL, NULL, 0), SG_OK);
    assert_int_equal(n->u.kernel.n_params, 0);
    assert_int_equal(n->u.kernel.params_size, 0);
    assert_null(n->u.kernel.param_bytes);
    assert_int_equal(sg_node_set_kernel_params(g, k, 0, NULL, NULL, bytes, 3), SG_OK);
    assert_int_equal(n->u.kernel.params_size, 3);

    /* accesses */
    assert_int_equal(sg_node_add_access(g, k, 5, 0, 4, SG_ACCESS_READ), SG_EINVAL);
    assert_int_equal(sg_node_add_access(g, 99, buf, 0, 4, SG_ACCESS_READ), SG_EINVAL);
    assert_int_equal(sg_node_add_access(g, k, buf, 0, 4, (sg_access_mode_t)0), SG_EINVAL);
    assert_int_equal(sg_node_add_access(g, k, buf, 0, 4, (sg_access_mode_t)4), SG_EINVAL);
    assert_int_equal(sg_node_add_access(g, k, buf, 0, 32, SG_ACCESS_READ), SG_OK);
    assert_int_equal(sg_node_add_access(g, k, buf, 32, 32, SG_ACCESS_WRITE), SG_OK);
    assert_int_equal(sg_node_add_access(g, k, buf, 0, 64, SG_ACCESS_UNKNOWN), SG_OK);
    assert_int_equal(sg_node_add_access(g, k, buf, 0, 64, SG_ACCESS_READWRITE), SG_OK);
    n = sg_graph_node(g, k);
    assert_int_equal(n->n_accesses, 4);
    assert_int_equal(n->accesses[1].offset, 32);
    assert_int_equal(n->accesses[1].mode, SG_ACCESS_WRITE);

    /* opaque note */
    assert_int_equal(sg_node_set_opaque_note(g, k, "x"), SG_EINVAL);
    assert_int_equal(sg_node_set_opaque_note(g, op, "cuGraphAddBatchMemOpNode"), SG_OK);
    assert_string_equal(sg_graph_node(g, op)->u.opaque_note, "cuGraphAddBatchMemOpNode");
    assert_int_equal(sg_node_set_opaque_note(g, op, NULL), SG_OK);
    assert_null(sg_graph_node(g, op)->u.opaque_note);

    /* bodies */
    sg_graph_t *body = NULL;
    assert_int_equal(sg_node_make_child_body(g, k, &body), SG_EINVAL);
    assert_int_equal(sg_node_add_cond_body(g, k, &body), SG_EINVAL);
    sg_node_id_t child = add_node(g, SG_NODE_CHILD_GRAPH, 0, 9);
    sg_node_id_t cond = add_node(g, SG_NODE_CONDITIONAL, 0, 10);
    assert_int_equal(sg_node_make_child_body(g, child, &body), SG_OK);
    assert_ptr_equal(body->root, g);
    add_node(body, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 0);
    sg_graph_t *body2 = NULL;
    assert_int_equal(sg_node_make_child_body(g, child, &body2), SG_OK); /* replaces */
    assert_ptr_equal(sg_graph_node(g, child)->u.child, body2);
    assert_int_equal(sg_graph_node_count(body2), 0);
    assert_int_equal(sg_node_make_child_body(g, child, NULL), SG_OK);
    sg_graph_t *c0 = NULL, *c1 = NULL;
    assert_int_equal(sg_node_add_cond_body(g, cond, &c0), SG_OK);
    assert_int_equal(sg_node_add_cond_body(g, cond, &c1), SG_OK);
    assert_ptr_not_equal(c0, c1);
    assert_int_equal(sg_graph_node(g, cond)->u.cond.n_bodies, 2);
    assert_ptr_equal(sg_graph_node(g, cond)->u.cond.bodies[1], c1);
    add_node(c1, SG_NODE_KERNEL, SG_STREAM_EXPLICIT, 0);
    sg_graph_destroy(g); /* frees bodies; ASan/valgrind would see a leak or double free */
}

/* ---- edges ------------------------------------------------------------------------ */

static void test_edges(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t ev;
    sg_graph_add_stream(g, NULL, 0, NULL);
    sg_graph_add_event(g, NULL, 0, &ev);
    sg_node_id_t a = add_node(g, SG_NODE_KERNEL, 0, 0);
    sg_node_id_t b = add_node(g, SG_NODE_KERNEL, 0, 1);
    sg_node_id_t c = add_node(g, SG_NODE_KERNEL, 0, 2);
    sg_edge_id_t e;
    assert_int_equal(sg_graph_add_edge(g, a, a, SG_EDGE_STREAM, SG_NONE, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, a, 77, SG_EDGE_STREAM, SG_NONE, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, 77, a, SG_EDGE_STREAM, SG_NONE, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_KIND_COUNT, SG_NONE, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_EVENT, SG_NONE, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_EVENT, 5, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_STREAM, ev, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(g, a, b, SG_EDGE_CONTROL, ev, &e), SG_EINVAL);
    assert_int_equal(sg_graph_add_edge(NULL, a, b, SG_EDGE_STREAM, SG_NONE, &e), SG_EINVAL);
    assert_int_equal(sg_graph_edge_count(g), 0);
    assert_int_equal(g->n_edges, 0); /* failed adds consume no id */

    sg_edge_id_t ab = add_edge(g, a, b, SG_EDGE_STREAM, SG_NONE);
    sg_edge_id_t bc = add_edge(g, b, c, SG_EDGE_EVENT, ev);
    sg_edge_id_t ac = add_edge(g, a, c, SG_EDGE_CONTROL, SG_NONE);
    sg_edge_id_t ab2 = add_edge(g, a, b, SG_EDGE_DEALLOC, SG_NONE); /* parallel: allowed */
    assert_int_equal(sg_graph_add_edge(g, c, a, SG_EDGE_STREAM, SG_NONE, NULL), SG_OK);
    assert_int_equal(sg_graph_edge_count(g), 5);
    const sg_edge_t *eb = sg_graph_edge(g, bc);
    assert_int_equal(eb->from, b);
    assert_int_equal(eb->to, c);
    assert_int_equal(eb->kind, SG_EDGE_EVENT);
    assert_int_equal(eb->event, ev);
    assert_int_equal(sg_graph_edge(g, ab)->event, SG_NONE);
    assert_null(sg_graph_edge(g, 99));
    assert_null(sg_graph_edge(NULL, 0));

    uint32_t n;
    const sg_edge_id_t *out = sg_graph_out_edges(g, a, &n);
    assert_int_equal(n, 3);
    (void)out;
    sg_graph_in_edges(g, b, &n);
    assert_int_equal(n, 2);
    assert_null(sg_graph_in_edges(g, 99, &n));
    assert_int_equal(n, 0);
    assert_null(sg_graph_out_edges(g, 99, &n));
    assert_int_equal(n, 0);

    assert_true(sg_graph_find_edge(g, a, b) == ab || sg_graph_find_edge(g, a, b) == ab2);
    assert_int_equal(sg_graph_find_edge(g, a, c), ac);
    assert_int_equal(sg_graph_find_edge(g, b, a), SG_NONE);
    assert_int_equal(sg_graph_find_edge(g, 99, a), SG_NONE);
    check_adjacency(g);

    assert_int_equal(sg_graph_remove_edge(g, ab), SG_OK);
    assert_int_equal(sg_graph_remove_edge(g, ab), SG_EINVAL);
    assert_int_equal(sg_graph_remove_edge(g, 99), SG_EINVAL);
    assert_null(sg_graph_edge(g, ab));
    assert_int_equal(sg_graph_find_edge(g, a, b), ab2);
    assert_int_equal(sg_graph_edge_count(g), 4);
    /* ids are never reused */
    sg_edge_id_t again = add_edge(g, a, b, SG_EDGE_STREAM, SG_NONE);
    assert_int_equal(again, 5);
    check_adjacency(g);
    sg_graph_destroy(g);
}

static void test_remove_node(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    sg_node_id_t n[5];
    for (int i = 0; i < 5; i++)
        n[i] = add_node(g, SG_NODE_KERNEL, 0, (uint64_t)i);
    sg_node_set_kernel_name(g, n[2], "_Z1kv");
    sg_node_set_label(g, n[2], "x");
    add_edge(g, n[0], n[2], SG_EDGE_STREAM, SG_NONE);
    add_edge(g, n[1], n[2], SG_EDGE_CONTROL, SG_NONE);
    add_edge(g, n[2], n[3], SG_EDGE_STREAM, SG_NONE);
    add_edge(g, n[2], n[4], SG_EDGE_DEALLOC, SG_NONE);
    sg_edge_id_t keep = add_edge(g, n[0], n[4], SG_EDGE_STREAM, SG_NONE);
    assert_int_equal(sg_graph_remove_node(g, n[2]), SG_OK);
    assert_null(sg_graph_node(g, n[2]));
    assert_int_equal(sg_graph_node_count(g), 4);
    assert_int_equal(sg_graph_edge_count(g), 1);
    assert_non_null(sg_graph_edge(g, keep));
    uint32_t cnt;
    sg_graph_out_edges(g, n[0], &cnt);
    assert_int_equal(cnt, 1);
    sg_graph_out_edges(g, n[1], &cnt);
    assert_int_equal(cnt, 0);
    sg_graph_in_edges(g, n[3], &cnt);
    assert_int_equal(cnt, 0);
    sg_graph_in_edges(g, n[4], &cnt);
    assert_int_equal(cnt, 1);
    assert_int_equal(sg_graph_remove_node(g, n[2]), SG_EINVAL);
    assert_int_equal(sg_graph_remove_node(g, 99), SG_EINVAL);
    assert_int_equal(sg_graph_remove_node(NULL, 0), SG_EINVAL);
    /* the hole stays: the next node gets a fresh id */
    assert_int_equal(add_node(g, SG_NODE_EMPTY, 0, 9), 5);
    /* operations on the hole fail cleanly */
    assert_int_equal(sg_graph_add_edge(g, n[0], n[2], SG_EDGE_STREAM, SG_NONE, NULL), SG_EINVAL);
    assert_int_equal(sg_node_set_label(g, n[2], "y"), SG_EINVAL);
    assert_false(sg_graph_reaches(g, n[2], n[2]));
    check_adjacency(g);
    sg_graph_destroy(g);
}

/* ---- queries ------------------------------------------------------------------------ */

static void test_stream_order(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    sg_graph_add_stream(g, NULL, 0, NULL);
    sg_graph_add_stream(g, NULL, 0, NULL);
    /* added out of capture order on purpose */
    sg_node_id_t a = add_node(g, SG_NODE_KERNEL, 0, 30);
    sg_node_id_t b = add_node(g, SG_NODE_KERNEL, 1, 5);
    sg_node_id_t c = add_node(g, SG_NODE_KERNEL, 0, 10);
    sg_node_id_t d = add_node(g, SG_NODE_KERNEL, 0, 20);
    sg_node_id_t e = add_node(g, SG_NODE_KERNEL, 0, 10); /* same seq as c: tie by id */
    sg_node_id_t x = add_node(g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 1);
    sg_node_id_t *ids = NULL;
    uint32_t n = 0;
    assert_int_equal(sg_graph_stream_order(g, 0, &ids, &n), SG_OK);
    assert_int_equal(n, 4);
    assert_int_equal(ids[0], c);
    assert_int_equal(ids[1], e);
    assert_int_equal(ids[2], d);
    assert_int_equal(ids[3], a);
    free(ids);
    assert_int_equal(sg_graph_stream_order(g, 1, &ids, &n), SG_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], b);
    free(ids);
    assert_int_equal(sg_graph_stream_order(g, SG_STREAM_EXPLICIT, &ids, &n), SG_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], x);
    free(ids);
    sg_graph_remove_node(g, d);
    assert_int_equal(sg_graph_stream_order(g, 0, &ids, &n), SG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(ids[2], a);
    free(ids);
    assert_int_equal(sg_graph_stream_order(g, 7, &ids, &n), SG_OK); /* no such stream: empty */
    assert_int_equal(n, 0);
    free(ids);
    assert_int_equal(sg_graph_stream_order(NULL, 0, &ids, &n), SG_EINVAL);
    assert_int_equal(sg_graph_stream_order(g, 0, NULL, &n), SG_EINVAL);
    assert_int_equal(sg_graph_stream_order(g, 0, &ids, NULL), SG_EINVAL);
    sg_graph_destroy(g);
}

static void test_topo_order(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    /* diamond a -> {b, c} -> d plus an isolated e; seq decides ties */
    sg_node_id_t a = add_node(g, SG_NODE_KERNEL, 0, 10);
    sg_node_id_t b = add_node(g, SG_NODE_KERNEL, 0, 40);
    sg_node_id_t c = add_node(g, SG_NODE_KERNEL, 1, 20);
    sg_node_id_t d = add_node(g, SG_NODE_KERNEL, 0, 50);
    sg_node_id_t e = add_node(g, SG_NODE_KERNEL, 1, 30);
    add_edge(g, a, b, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, a, c, SG_EDGE_CONTROL, SG_NONE);
    add_edge(g, b, d, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, c, d, SG_EDGE_CONTROL, SG_NONE);
    sg_node_id_t *o1 = NULL, *o2 = NULL;
    uint32_t n1 = 0, n2 = 0;
    assert_int_equal(sg_graph_topo_order(g, &o1, &n1), SG_OK);
    assert_int_equal(n1, 5);
    sg_node_id_t want[5] = {a, c, e, b, d};
    for (int i = 0; i < 5; i++)
        assert_int_equal(o1[i], want[i]);
    assert_int_equal(sg_graph_topo_order(g, &o2, &n2), SG_OK);
    assert_memory_equal(o1, o2, n1 * sizeof *o1);
    free(o1);
    free(o2);

    /* equal seq: ties by id */
    sg_graph_t *h = sg_graph_create();
    for (int i = 0; i < 4; i++)
        add_node(h, SG_NODE_EMPTY, 0, 7);
    assert_int_equal(sg_graph_topo_order(h, &o1, &n1), SG_OK);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(o1[i], i);
    free(o1);
    sg_graph_destroy(h);

    /* a cycle is found, and breaking it makes the graph orderable again */
    sg_edge_id_t back = add_edge(g, d, a, SG_EDGE_CONTROL, SG_NONE);
    o1 = NULL;
    assert_int_equal(sg_graph_topo_order(g, &o1, &n1), SG_ECYCLE);
    assert_null(o1);
    sg_graph_remove_edge(g, back);
    assert_int_equal(sg_graph_topo_order(g, &o1, &n1), SG_OK);
    free(o1);
    /* removed nodes are not listed */
    sg_graph_remove_node(g, c);
    assert_int_equal(sg_graph_topo_order(g, &o1, &n1), SG_OK);
    assert_int_equal(n1, 4);
    for (uint32_t i = 0; i < n1; i++)
        assert_int_not_equal(o1[i], c);
    free(o1);
    assert_int_equal(sg_graph_topo_order(NULL, &o1, &n1), SG_EINVAL);
    assert_int_equal(sg_graph_topo_order(g, NULL, &n1), SG_EINVAL);

    /* empty graph */
    sg_graph_t *empty = sg_graph_create();
    assert_int_equal(sg_graph_topo_order(empty, &o1, &n1), SG_OK);
    assert_int_equal(n1, 0);
    free(o1);
    sg_graph_destroy(empty);
    sg_graph_destroy(g);
}

/* lists_unordered: while it is false every node's lists hold exactly its
 * live edges in id order (what the rewrite snapshot reads from the edge
 * array instead), through adds, removals of last and inner entries, node
 * removals, chain merges and a clone. */
static uint64_t xs(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static bool lists_match_edge_array(const sg_graph_t *g)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        const sg_node_t *x = &g->nodes[v];
        if (x->removed) continue;
        uint32_t ko = 0, ki = 0;
        for (uint32_t e = 0; e < g->n_edges; e++) {
            if (g->edges[e].removed) continue;
            if (g->edges[e].from == v && (ko >= x->n_out || x->out[ko++] != e)) return false;
            if (g->edges[e].to == v && (ki >= x->n_in || x->in[ki++] != e)) return false;
        }
        if (ko != x->n_out || ki != x->n_in) return false;
    }
    return true;
}

static void test_lists_order(void **state)
{
    (void)state;
    uint64_t rs = 0x51ed2701a4c3b9e5ull;
    int unordered_seen = 0, ordered_after_removal = 0;
    for (int round = 0; round < 80; round++) {
        sg_graph_t *g = sg_graph_create();
        assert_non_null(g);
        assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
        uint32_t n = 4 + (uint32_t)(xs(&rs) % 30);
        for (uint32_t i = 0; i < n; i++) {
            sg_node_id_t id;
            assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, 0, i, &id), SG_OK);
            for (int k = 0; k < 3 && i > 0; k++)
                sg_graph_add_edge(g, (sg_node_id_t)(xs(&rs) % i), id, SG_EDGE_CONTROL, SG_NONE,
                                  NULL);
        }
        assert_false(g->lists_unordered);
        assert_true(lists_match_edge_array(g));
        /* removals: the last edge (order kept), then random ones */
        if (g->n_edges && round % 3 == 0) {
            assert_int_equal(sg_graph_remove_edge(g, g->n_edges - 1), SG_OK);
            assert_false(g->lists_unordered);
            ordered_after_removal++;
        }
        for (int k = 0; k < (int)(xs(&rs) % 4); k++) {
            sg_edge_id_t e = (sg_edge_id_t)(xs(&rs) % g->n_edges);
            if (!g->edges[e].removed) assert_int_equal(sg_graph_remove_edge(g, e), SG_OK);
        }
        if (round % 4 == 1)
            assert_int_equal(sg_graph_remove_node(g, (sg_node_id_t)(xs(&rs) % n)), SG_OK);
        if (round % 5 == 2) {
            sg_node_id_t a = (sg_node_id_t)(xs(&rs) % n);
            const sg_node_t *x = sg_graph_node(g, a);
            if (x && x->n_out) {
                sg_node_id_t chain[2] = {a, g->edges[x->out[0]].to};
                assert_int_equal(sg_graph_merge_chain(g, chain, 2), SG_OK);
            }
        }
        sg_graph_t *c = sg_graph_clone(g);
        assert_non_null(c);
        assert_int_equal(c->lists_unordered, g->lists_unordered);
        if (!g->lists_unordered) {
            assert_true(lists_match_edge_array(g));
            assert_true(lists_match_edge_array(c));
        } else {
            unordered_seen++;
        }
        sg_graph_destroy(c);
        sg_graph_destroy(g);
    }
    assert_true(unordered_seen > 0); /* both states were exercised */
    assert_true(ordered_after_removal > 0);
}

static void test_reaches(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    sg_node_id_t n[6];
    for (int i = 0; i < 6; i++)
        n[i] = add_node(g, SG_NODE_KERNEL, 0, (uint64_t)i);
    add_edge(g, n[0], n[1], SG_EDGE_STREAM, SG_NONE);
    add_edge(g, n[1], n[2], SG_EDGE_CONTROL, SG_NONE);
    add_edge(g, n[2], n[3], SG_EDGE_DEALLOC, SG_NONE);
    add_edge(g, n[4], n[3], SG_EDGE_STREAM, SG_NONE);
    assert_true(sg_graph_reaches(g, n[0], n[3]));
    assert_true(sg_graph_reaches(g, n[0], n[0]));
    assert_true(sg_graph_reaches(g, n[4], n[3]));
    assert_false(sg_graph_reaches(g, n[3], n[0])); /* edges are directed */
    assert_false(sg_graph_reaches(g, n[0], n[4]));
    assert_false(sg_graph_reaches(g, n[5], n[0]));
    assert_false(sg_graph_reaches(g, n[0], 99));
    assert_false(sg_graph_reaches(NULL, 0, 0));
    sg_graph_remove_node(g, n[2]);
    assert_false(sg_graph_reaches(g, n[0], n[3]));
    assert_false(sg_graph_reaches(g, n[2], n[2]));
    /* a cycle does not make it loop */
    add_edge(g, n[3], n[4], SG_EDGE_CONTROL, SG_NONE);
    add_edge(g, n[4], n[5], SG_EDGE_CONTROL, SG_NONE);
    assert_true(sg_graph_reaches(g, n[3], n[5]));
    assert_false(sg_graph_reaches(g, n[3], n[0]));
    sg_graph_destroy(g);
}

/* ---- merge_chain --------------------------------------------------------------------- */

static void test_merge_chain(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t ev;
    sg_graph_add_stream(g, NULL, 0, NULL);
    sg_graph_add_stream(g, NULL, 0, NULL);
    sg_graph_add_event(g, NULL, 0, &ev);
    /*   p --stream--> k0 --stream--> k1 --stream--> k2 --stream--> s
     *   w --event e0--> k1            k1 --event e0--> r
     *   p --control--> k2 (becomes p->k0 control: a different kind, kept)
     *   k2 --stream--> s duplicates k0 --stream--> s: merged once         */
    sg_node_id_t p = add_node(g, SG_NODE_KERNEL, 0, 0);
    sg_node_id_t k0 = add_node(g, SG_NODE_KERNEL, 0, 1);
    sg_node_id_t k1 = add_node(g, SG_NODE_KERNEL, 0, 2);
    sg_node_id_t k2 = add_node(g, SG_NODE_KERNEL, 0, 3);
    sg_node_id_t s = add_node(g, SG_NODE_KERNEL, 0, 4);
    sg_node_id_t w = add_node(g, SG_NODE_EVENT_RECORD, 1, 5);
    sg_node_id_t r = add_node(g, SG_NODE_EVENT_WAIT, 1, 6);
    sg_node_set_kernel_name(g, k0, "_Z2k0v");
    sg_node_set_kernel_name(g, k1, "_Z2k1v");
    add_edge(g, p, k0, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, k0, k1, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, k1, k2, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, k2, s, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, k0, s, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, w, k1, SG_EDGE_EVENT, ev);
    add_edge(g, k1, r, SG_EDGE_EVENT, ev);
    add_edge(g, p, k2, SG_EDGE_CONTROL, SG_NONE);
    add_edge(g, k0, k2, SG_EDGE_CONTROL, SG_NONE); /* inside the chain: disappears */

    /* errors first: nothing may change */
    sg_node_id_t unconnected[] = {k1, k0};
    sg_node_id_t dup[] = {k0, k1, k0};
    sg_node_id_t missing[] = {k0, 99};
    uint32_t before = sg_graph_edge_count(g);
    assert_int_equal(sg_graph_merge_chain(g, unconnected, 2), SG_EINVAL);
    assert_int_equal(sg_graph_merge_chain(g, dup, 3), SG_EINVAL);
    assert_int_equal(sg_graph_merge_chain(g, missing, 2), SG_EINVAL);
    assert_int_equal(sg_graph_merge_chain(g, NULL, 2), SG_EINVAL);
    assert_int_equal(sg_graph_merge_chain(g, unconnected, 0), SG_EINVAL);
    assert_int_equal(sg_graph_merge_chain(NULL, unconnected, 2), SG_EINVAL);
    assert_int_equal(sg_graph_edge_count(g), before);
    assert_int_equal(sg_graph_node_count(g), 7);
    /* a chain of one is a no-op */
    assert_int_equal(sg_graph_merge_chain(g, &k0, 1), SG_OK);
    assert_int_equal(sg_graph_edge_count(g), before);

    sg_node_id_t chain[] = {k0, k1, k2};
    assert_int_equal(sg_graph_merge_chain(g, chain, 3), SG_OK);
    check_adjacency(g);
    assert_non_null(sg_graph_node(g, k0));
    assert_null(sg_graph_node(g, k1));
    assert_null(sg_graph_node(g, k2));
    assert_string_equal(sg_graph_node(g, k0)->u.kernel.name, "_Z2k0v"); /* keeps its payload */
    assert_int_equal(sg_graph_node_count(g), 5);
    assert_int_equal(count_edges(g, p, k0, SG_EDGE_STREAM), 1);
    assert_int_equal(count_edges(g, p, k0, SG_EDGE_CONTROL), 1);
    assert_int_equal(count_edges(g, k0, s, SG_EDGE_STREAM), 1); /* deduplicated */
    assert_int_equal(count_edges(g, w, k0, SG_EDGE_EVENT), 1);
    assert_int_equal(count_edges(g, k0, r, SG_EDGE_EVENT), 1);
    assert_int_equal(sg_graph_edge_count(g), 5);
    uint32_t n;
    sg_graph_in_edges(g, k0, &n);
    assert_int_equal(n, 3);
    sg_graph_out_edges(g, k0, &n);
    assert_int_equal(n, 2);
    /* the event edge kept its event */
    const sg_edge_t *we = sg_graph_edge(g, sg_graph_find_edge(g, w, k0));
    assert_int_equal(we->event, ev);
    assert_int_equal(we->kind, SG_EDGE_EVENT);
    sg_node_id_t *order;
    assert_int_equal(sg_graph_topo_order(g, &order, &n), SG_OK);
    free(order);
    sg_graph_destroy(g);
}

/* Edges of different kinds or events between the same pair are all kept;
 * only exact duplicates collapse. The chain may be given in any id order. */
static void test_merge_chain_dedup_rules(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t e0, e1;
    sg_graph_add_event(g, NULL, 0, &e0);
    sg_graph_add_event(g, NULL, 0, &e1);
    sg_node_id_t x = add_node(g, SG_NODE_EMPTY, 0, 0);
    sg_node_id_t b = add_node(g, SG_NODE_KERNEL, 0, 2); /* the chain is b -> a */
    sg_node_id_t a = add_node(g, SG_NODE_KERNEL, 0, 3);
    sg_node_id_t y = add_node(g, SG_NODE_EMPTY, 0, 4);
    add_edge(g, b, a, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, x, b, SG_EDGE_EVENT, e0);
    add_edge(g, x, a, SG_EDGE_EVENT, e0); /* exact duplicate after merge */
    add_edge(g, x, a, SG_EDGE_EVENT, e1); /* other event: kept */
    add_edge(g, x, a, SG_EDGE_CONTROL, SG_NONE);
    add_edge(g, a, y, SG_EDGE_DEALLOC, SG_NONE);
    add_edge(g, b, y, SG_EDGE_DEALLOC, SG_NONE);
    add_edge(g, b, y, SG_EDGE_DEALLOC, SG_NONE); /* chain[0]'s own parallel edges stay */
    sg_node_id_t chain[] = {b, a};
    assert_int_equal(sg_graph_merge_chain(g, chain, 2), SG_OK);
    check_adjacency(g);
    assert_null(sg_graph_node(g, a));
    assert_int_equal(count_edges(g, x, b, SG_EDGE_EVENT), 2);
    assert_int_equal(count_edges(g, x, b, SG_EDGE_CONTROL), 1);
    assert_int_equal(count_edges(g, b, y, SG_EDGE_DEALLOC), 2);
    assert_int_equal(sg_graph_edge_count(g), 5);
    sg_graph_destroy(g);
}

/* ---- clone and pass log ----------------------------------------------------------------- */

/* A graph using every payload and table, for clone and dump tests. */
static sg_graph_t *build_rich_graph(void)
{
    sg_graph_t *g = sg_graph_create();
    g->program = strdup("rich");
    g->capture_mode = strdup("global");
    g->device.name = strdup("NVIDIA H200");
    g->device.cc_major = 9;
    g->sequence = 3;
    uint32_t s0, s1, ev, b0, b1, im;
    sg_graph_add_stream(g, NULL, 0x10, &s0);
    sg_graph_add_stream(g, "side", 0x20, &s1);
    sg_graph_add_event(g, NULL, 0x30, &ev);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000000ull, 4096, &b0);
    sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x7f0000100000ull, 4096, &b1);
    sg_graph_buffer(g, b0)->before_file = strdup("data/b0.before.zst");
    sg_graph_add_image(g, SG_IMAGE_FATBIN, "00112233445566ff", 100, &im);
    sg_image_t *img = sg_graph_image(g, im);
    img->n_ptx_archs = 1;
    img->ptx_archs = malloc(sizeof(uint32_t));
    img->ptx_archs[0] = 90;
    img->file = strdup("code/00112233445566ff.fatbin");
    sg_node_id_t al = add_node(g, SG_NODE_MEM_ALLOC, s0, 0);
    sg_graph_node(g, al)->u.mem = (sg_memnode_t){b1, 0x7f0000100000ull, 4096};
    sg_graph_buffer(g, b1)->alloc_node = al;
    sg_node_id_t k = add_node(g, SG_NODE_KERNEL, s0, 1);
    sg_node_set_kernel_name(g, k, "_Z5scaleIfEvPT_S0_i");
    sg_kernel_t *kk = &sg_graph_node(g, k)->u.kernel;
    kk->image = im;
    for (int i = 0; i < 3; i++)
        kk->grid[i] = kk->block[i] = 1;
    kk->grid[0] = 16;
    kk->block[0] = 256;
    uint32_t off[2] = {0, 8}, sz[2] = {8, 4};
    uint8_t bytes[16] = {0, 0, 0, 0, 0, 0x7f, 0, 0, 0, 4, 0, 0};
    sg_node_set_kernel_params(g, k, 2, off, sz, bytes, 16);
    sg_node_add_access(g, k, b0, 0, 4096, SG_ACCESS_READWRITE);
    sg_node_id_t rec = add_node(g, SG_NODE_EVENT_RECORD, s0, 2);
    sg_graph_node(g, rec)->u.event = ev;
    sg_node_id_t cp = add_node(g, SG_NODE_MEMCPY, s1, 3);
    sg_graph_node(g, cp)->u.memcpy =
        (sg_memcpy_t){0x7f0000100000ull, 0x7f0000000000ull, 0, 0, 4096, 1, 1, SG_COPY_D2D};
    sg_node_add_access(g, cp, b0, 0, 4096, SG_ACCESS_READ);
    sg_node_add_access(g, cp, b1, 0, 4096, SG_ACCESS_WRITE);
    sg_node_id_t fr = add_node(g, SG_NODE_MEM_FREE, s0, 4);
    sg_graph_node(g, fr)->u.mem = (sg_memnode_t){b1, 0x7f0000100000ull, 0};
    sg_node_id_t ch = add_node(g, SG_NODE_CHILD_GRAPH, s1, 5);
    sg_graph_t *body;
    sg_node_make_child_body(g, ch, &body);
    sg_node_id_t m0 = add_node(body, SG_NODE_MEMSET, SG_STREAM_EXPLICIT, 0);
    sg_graph_node(body, m0)->u.memset = (sg_memset_t){0x7f0000000000ull, 0, 0, 4, 1024, 1};
    sg_node_id_t h0 = add_node(body, SG_NODE_HOST, SG_STREAM_EXPLICIT, 1);
    add_edge(body, m0, h0, SG_EDGE_STREAM, SG_NONE);
    sg_node_id_t cond = add_node(g, SG_NODE_CONDITIONAL, s1, 6);
    sg_graph_t *cb;
    sg_node_add_cond_body(g, cond, &cb);
    add_node(cb, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 0);
    sg_graph_node(g, cond)->u.cond.type = SG_COND_WHILE;
    sg_node_id_t op = add_node(g, SG_NODE_OPAQUE, s0, 7);
    sg_node_set_opaque_note(g, op, "batch mem op");
    sg_graph_node(g, op)->synthesized = true;
    sg_graph_node(g, op)->duration_ns = 1500.25;
    sg_node_set_label(g, op, "made by a test");
    add_edge(g, al, k, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, k, rec, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, rec, cp, SG_EDGE_EVENT, ev);
    add_edge(g, rec, fr, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, cp, fr, SG_EDGE_DEALLOC, SG_NONE);
    add_edge(g, cp, ch, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, ch, cond, SG_EDGE_STREAM, SG_NONE);
    add_edge(g, fr, op, SG_EDGE_CONTROL, SG_NONE);
    sg_node_id_t gone = add_node(g, SG_NODE_EMPTY, s0, 8); /* leaves a hole */
    add_edge(g, op, gone, SG_EDGE_STREAM, SG_NONE);
    sg_graph_remove_node(g, gone);
    sg_graph_log_pass(g, "ordering", "made 1 control edge explicit");
    return g;
}

static void test_clone(void **state)
{
    (void)state;
    sg_graph_t *g = build_rich_graph();
    char *d0 = dump_of(g);
    sg_graph_t *c = sg_graph_clone(g);
    assert_non_null(c);
    assert_ptr_equal(c->root, c);
    char *d1 = dump_of(c);
    assert_string_equal(d0, d1);
    check_adjacency(c);
    assert_int_equal(c->n_nodes, g->n_nodes); /* holes stay holes */
    assert_int_equal(c->n_edges, g->n_edges);
    assert_null(sg_graph_node(c, 8));
    /* bodies point at the clone's root, not the original's */
    sg_graph_t *cbody = sg_graph_node(c, 5)->u.child;
    assert_ptr_not_equal(cbody, sg_graph_node(g, 5)->u.child);
    assert_ptr_equal(cbody->root, c);
    assert_ptr_equal(sg_graph_node(c, 6)->u.cond.bodies[0]->root, c);

    /* mutate the clone everywhere; the original must not move */
    sg_node_set_label(c, 1, "changed");
    sg_node_set_kernel_name(c, 1, "_Z5otherv");
    sg_graph_node(c, 1)->u.kernel.param_bytes[0] = 0xee;
    sg_graph_node(c, 1)->accesses[0].mode = SG_ACCESS_READ;
    sg_node_add_access(c, 1, 0, 0, 1, SG_ACCESS_WRITE);
    sg_graph_remove_node(c, 3);
    add_edge(c, 0, 7, SG_EDGE_CONTROL, SG_NONE);
    add_node(cbody, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 9);
    add_node(sg_graph_node(c, 6)->u.cond.bodies[0], SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 9);
    sg_node_set_opaque_note(c, 7, "other");
    free(c->streams[1].label);
    c->streams[1].label = strdup("renamed");
    c->buffers[0].before_file[0] = 'X';
    c->images[0].ptx_archs[0] = 80;
    free(c->program);
    c->program = strdup("other");
    sg_graph_add_stream(c, NULL, 0, NULL);
    sg_graph_log_pass(c, "more", "");
    char *d2 = dump_of(g);
    assert_string_equal(d0, d2);
    check_adjacency(g);
    check_adjacency(c);
    char *d3 = dump_of(c);
    assert_string_not_equal(d0, d3);

    /* the original can go first */
    sg_graph_destroy(g);
    check_adjacency(c);
    sg_graph_destroy(c);
    free(d0);
    free(d1);
    free(d2);
    free(d3);

    /* only roots are cloned */
    sg_graph_t *r = sg_graph_create();
    sg_graph_t *body = sg_graph_create_body(r);
    assert_null(sg_graph_clone(body));
    assert_null(sg_graph_clone(NULL));
    sg_graph_destroy(body);
    sg_graph_t *empty = sg_graph_clone(r);
    assert_non_null(empty);
    assert_int_equal(sg_graph_node_count(empty), 0);
    sg_graph_destroy(empty);
    sg_graph_destroy(r);
}

static void test_pass_log(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    assert_int_equal(sg_graph_log_pass(g, NULL, "x"), SG_EINVAL);
    assert_int_equal(sg_graph_log_pass(NULL, "p", "x"), SG_EINVAL);
    assert_int_equal(sg_graph_log_pass(g, "fuse", NULL), SG_OK);
    assert_int_equal(sg_graph_log_pass(g, "order", "3 edges"), SG_OK);
    assert_int_equal(g->n_pass_log, 2);
    assert_string_equal(g->pass_log[0].summary, "");
    assert_string_equal(g->pass_log[1].pass, "order");
    /* a body logs to its root */
    sg_graph_t *body = sg_graph_create_body(g);
    assert_int_equal(sg_graph_log_pass(body, "b", "s"), SG_OK);
    assert_int_equal(g->n_pass_log, 3);
    sg_graph_destroy(body);
    sg_graph_destroy(g);
}

/* ---- property test on random DAGs ---------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) /* uniform-ish in [0, n), n > 0 */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Shadow of the edge set, kept by the test without the model's help. */
typedef struct {
    sg_node_id_t from, to;
    sg_edge_kind_t kind;
    uint32_t event;
    bool live;
} shadow_edge_t;

typedef struct {
    shadow_edge_t *e;
    uint32_t n, cap;
    bool *node_live;
    uint32_t n_nodes;
} shadow_t;

static void shadow_add_edge(shadow_t *s, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k,
                            uint32_t ev)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->e = realloc(s->e, s->cap * sizeof *s->e);
    }
    s->e[s->n++] = (shadow_edge_t){a, b, k, ev, true};
}

/* The model's live edges, as a multiset, equal the shadow's. */
static void check_against_shadow(const sg_graph_t *g, const shadow_t *s)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < s->n; i++)
        live += s->e[i].live;
    assert_int_equal(live, sg_graph_edge_count(g));
    for (uint32_t i = 0; i < s->n_nodes; i++)
        assert_int_equal(s->node_live[i], sg_graph_node(g, i) != NULL);
    /* every shadow edge matched by a distinct model edge */
    uint8_t *used = calloc(g->n_edges + 1, 1);
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->e[i].live) continue;
        const shadow_edge_t *se = &s->e[i];
        uint32_t n;
        const sg_edge_id_t *out = sg_graph_out_edges(g, se->from, &n);
        bool found = false;
        for (uint32_t k = 0; k < n && !found; k++) {
            const sg_edge_t *e = sg_graph_edge(g, out[k]);
            if (!used[out[k]] && e->to == se->to && e->kind == se->kind && e->event == se->event) {
                used[out[k]] = 1;
                found = true;
            }
        }
        assert_true(found);
    }
    free(used);
}

static bool shadow_reaches(const shadow_t *s, sg_node_id_t a, sg_node_id_t b)
{
    if (a == b) return true;
    bool *seen = calloc(s->n_nodes, sizeof *seen);
    sg_node_id_t *stack = malloc((s->n_nodes + 1) * sizeof *stack);
    uint32_t top = 0;
    bool found = false;
    stack[top++] = a;
    seen[a] = true;
    while (top && !found) {
        sg_node_id_t x = stack[--top];
        for (uint32_t i = 0; i < s->n; i++) {
            if (!s->e[i].live || s->e[i].from != x) continue;
            sg_node_id_t y = s->e[i].to;
            if (y == b) found = true;
            if (!seen[y]) {
                seen[y] = true;
                stack[top++] = y;
            }
        }
    }
    free(seen);
    free(stack);
    return found;
}

/* Reference Kahn: repeatedly take the ready node with the smallest (seq, id).
 * Returns false on a cycle. */
static bool shadow_topo(const sg_graph_t *g, const shadow_t *s, sg_node_id_t *order, uint32_t *n)
{
    uint32_t *indeg = calloc(s->n_nodes, sizeof *indeg);
    bool *done = calloc(s->n_nodes, sizeof *done);
    uint32_t live = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->e[i].live) indeg[s->e[i].to]++;
    for (uint32_t i = 0; i < s->n_nodes; i++)
        live += s->node_live[i];
    uint32_t k = 0;
    for (;;) {
        sg_node_id_t best = SG_NONE;
        for (uint32_t i = 0; i < s->n_nodes; i++) {
            if (!s->node_live[i] || done[i] || indeg[i]) continue;
            if (best == SG_NONE || g->nodes[i].seq < g->nodes[best].seq) best = i;
        }
        if (best == SG_NONE) break;
        done[best] = true;
        order[k++] = best;
        for (uint32_t i = 0; i < s->n; i++)
            if (s->e[i].live && s->e[i].from == best) indeg[s->e[i].to]--;
    }
    free(indeg);
    free(done);
    *n = k;
    return k == live;
}

/* Adjacency of every node, to prove that a mutation touched only the nodes
 * it involves (so its cost is bounded by their degrees). */
typedef struct {
    const sg_edge_id_t *in, *out;
    uint32_t n_in, n_out, cap_in, cap_out;
    uint64_t sum;
} adj_snap_t;

static adj_snap_t *snapshot(const sg_graph_t *g)
{
    adj_snap_t *s = calloc(g->n_nodes + 1, sizeof *s);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = &g->nodes[i];
        s[i] = (adj_snap_t){n->in, n->out, n->n_in, n->n_out, n->cap_in, n->cap_out, 0};
        for (uint32_t k = 0; k < n->n_in; k++)
            s[i].sum = s[i].sum * 31 + n->in[k];
        for (uint32_t k = 0; k < n->n_out; k++)
            s[i].sum = s[i].sum * 37 + n->out[k];
    }
    return s;
}

static void check_untouched(const sg_graph_t *g, const adj_snap_t *before, uint32_t n_before,
                            const bool *involved)
{
    adj_snap_t *after = snapshot(g);
    for (uint32_t i = 0; i < n_before; i++) {
        if (involved[i]) continue;
        assert_ptr_equal(after[i].in, before[i].in);
        assert_ptr_equal(after[i].out, before[i].out);
        assert_int_equal(after[i].n_in, before[i].n_in);
        assert_int_equal(after[i].n_out, before[i].n_out);
        assert_int_equal(after[i].cap_in, before[i].cap_in);
        assert_int_equal(after[i].cap_out, before[i].cap_out);
        assert_true(after[i].sum == before[i].sum);
    }
    free(after);
}

/* Nodes a mutation may touch: the given ones and their neighbours. */
static void mark_with_neighbours(const sg_graph_t *g, bool *involved, sg_node_id_t x)
{
    const sg_node_t *n = sg_graph_node(g, x);
    involved[x] = true;
    if (!n) return;
    for (uint32_t k = 0; k < n->n_in; k++)
        involved[g->edges[n->in[k]].from] = true;
    for (uint32_t k = 0; k < n->n_out; k++)
        involved[g->edges[n->out[k]].to] = true;
}

static sg_node_id_t random_live_node(const sg_graph_t *g)
{
    if (!sg_graph_node_count(g)) return SG_NONE;
    for (;;) {
        sg_node_id_t x = rnd(g->n_nodes);
        if (sg_graph_node(g, x)) return x;
    }
}

/* How often each mutation ran, so the test proves it exercised them all. */
static uint32_t op_counts[5];

static void property_round(uint32_t n_events)
{
    sg_graph_t *g = sg_graph_create();
    for (uint32_t i = 0; i < n_events; i++)
        sg_graph_add_event(g, NULL, 0, NULL);
    shadow_t s = {0};
    s.node_live = calloc(4096, sizeof *s.node_live);
    uint32_t steps = 150 + rnd(150);
    for (uint32_t step = 0; step < steps; step++) {
        uint32_t op = rnd(100);
        uint32_t n_before = g->n_nodes;
        adj_snap_t *before = snapshot(g);
        bool *involved = calloc(n_before + 1, sizeof *involved);
        const sg_node_t *nodes_before = g->nodes;
        if (op < 30 || sg_graph_node_count(g) < 2) {
            /* add a node; seq is random so ties and out-of-order ids happen */
            sg_node_id_t id = add_node(g, (sg_node_type_t)rnd(SG_NODE_TYPE_COUNT), rnd(3), rnd(64));
            assert_int_equal(id, s.n_nodes);
            s.node_live[s.n_nodes++] = true;
            op_counts[0]++;
        } else if (op < 65) {
            /* add an edge forward in id order: the graph stays a DAG unless
             * a merge already closed a cycle */
            sg_node_id_t a = random_live_node(g), b = random_live_node(g);
            if (a == b) goto next;
            if (a > b) {
                sg_node_id_t t = a;
                a = b;
                b = t;
            }
            sg_edge_kind_t k = (sg_edge_kind_t)rnd(SG_EDGE_KIND_COUNT);
            uint32_t ev = k == SG_EDGE_EVENT ? rnd(n_events) : SG_NONE;
            involved[a] = involved[b] = true;
            add_edge(g, a, b, k, ev);
            shadow_add_edge(&s, a, b, k, ev);
            op_counts[1]++;
            assert_ptr_equal(g->nodes, nodes_before); /* no O(V) move of the node array */
        } else if (op < 80) {
            /* remove a random live edge */
            if (!sg_graph_edge_count(g)) goto next;
            sg_edge_id_t e;
            do
                e = rnd(g->n_edges);
            while (!sg_graph_edge(g, e));
            const sg_edge_t *ep = sg_graph_edge(g, e);
            involved[ep->from] = involved[ep->to] = true;
            for (uint32_t i = 0; i < s.n; i++) {
                if (s.e[i].live && s.e[i].from == ep->from && s.e[i].to == ep->to &&
                    s.e[i].kind == ep->kind && s.e[i].event == ep->event) {
                    s.e[i].live = false;
                    break;
                }
            }
            assert_int_equal(sg_graph_remove_edge(g, e), SG_OK);
            op_counts[2]++;
        } else if (op < 88) {
            /* remove a node and everything touching it */
            sg_node_id_t x = random_live_node(g);
            mark_with_neighbours(g, involved, x);
            assert_int_equal(sg_graph_remove_node(g, x), SG_OK);
            op_counts[3]++;
            s.node_live[x] = false;
            for (uint32_t i = 0; i < s.n; i++)
                if (s.e[i].from == x || s.e[i].to == x) s.e[i].live = false;
        } else {
            /* merge a random walk of 2-4 connected nodes */
            sg_node_id_t chain[4];
            uint32_t len = 0, want = 2 + rnd(3);
            chain[len++] = random_live_node(g);
            while (len < want) {
                uint32_t n;
                const sg_edge_id_t *out = sg_graph_out_edges(g, chain[len - 1], &n);
                if (!n) break;
                sg_node_id_t nx = g->edges[out[rnd(n)]].to;
                bool dup = false;
                for (uint32_t i = 0; i < len; i++)
                    dup |= chain[i] == nx;
                if (dup) break;
                chain[len++] = nx;
            }
            if (len < 2) goto next;
            for (uint32_t i = 0; i < len; i++)
                mark_with_neighbours(g, involved, chain[i]);
            /* expected edge multiset: chain[0]'s outside edges stay as they
             * are; every other outside edge is redirected to chain[0] unless
             * an identical edge is already there */
            bool in_chain[4096] = {0};
            for (uint32_t i = 0; i < len; i++)
                in_chain[chain[i]] = true;
            sg_node_id_t keep = chain[0];
            uint32_t n_old = s.n;
            for (uint32_t i = 0; i < n_old; i++) {
                shadow_edge_t se = s.e[i];
                if (!se.live) continue;
                bool fi = in_chain[se.from], ti = in_chain[se.to];
                if (fi && ti) {
                    s.e[i].live = false;
                    continue;
                }
                if ((!fi && !ti) || se.from == keep || se.to == keep) continue;
                s.e[i].live = false;
                shadow_edge_t r = se;
                if (fi)
                    r.from = keep;
                else
                    r.to = keep;
                bool exists = false;
                for (uint32_t j = 0; j < s.n && !exists; j++)
                    exists = s.e[j].live && s.e[j].from == r.from && s.e[j].to == r.to &&
                             s.e[j].kind == r.kind && s.e[j].event == r.event;
                if (!exists) shadow_add_edge(&s, r.from, r.to, r.kind, r.event);
            }
            for (uint32_t i = 1; i < len; i++)
                s.node_live[chain[i]] = false;
            assert_int_equal(sg_graph_merge_chain(g, chain, len), SG_OK);
            assert_ptr_equal(g->nodes, nodes_before);
            op_counts[4]++;
        }
        check_adjacency(g);
        check_against_shadow(g, &s);
        check_untouched(g, before, n_before, involved);
        /* queries agree with the shadow */
        if (step % 10 == 0 && sg_graph_node_count(g)) {
            sg_node_id_t *order = NULL, *ref = malloc((s.n_nodes + 1) * sizeof *ref);
            uint32_t n = 0, nref = 0;
            int rc = sg_graph_topo_order(g, &order, &n);
            bool acyclic = shadow_topo(g, &s, ref, &nref);
            assert_int_equal(rc, acyclic ? SG_OK : SG_ECYCLE);
            if (acyclic) {
                assert_int_equal(n, nref);
                assert_memory_equal(order, ref, n * sizeof *order);
            }
            free(order);
            free(ref);
            for (int q = 0; q < 8; q++) {
                sg_node_id_t a = random_live_node(g), b = random_live_node(g);
                assert_int_equal(sg_graph_reaches(g, a, b), shadow_reaches(&s, a, b));
            }
        }
    next:
        free(before);
        free(involved);
    }
    /* a clone is adjacency-consistent and independent */
    sg_graph_t *c = sg_graph_clone(g);
    check_adjacency(c);
    check_against_shadow(c, &s);
    sg_graph_destroy(g);
    check_adjacency(c);
    sg_graph_destroy(c);
    free(s.e);
    free(s.node_live);
}

/* A clone keeps its nodes' edge lists, access lists and kernel names in
 * blocks (graph.c); every mutation of a node must treat a place in a block
 * as the clone's, never free or grow it in place. The same random mutations
 * on the original (lists of their own) and on a clone must leave equal
 * graphs, and destroying both must free exactly what each owns. */
static void test_clone_mutations_match(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 40; seed++) {
        rng_state = 0x2545F4914F6CDD1Dull * seed;
        sg_graph_t *g = sg_graph_create();
        sg_graph_add_stream(g, NULL, 0, NULL);
        sg_graph_add_stream(g, NULL, 0, NULL);
        uint32_t buf[3];
        for (int b = 0; b < 3; b++)
            sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000000ull + ((uint64_t)b << 20),
                                1u << 20, &buf[b]);
        uint32_t n = 8 + rnd(40);
        for (uint32_t i = 0; i < n; i++) {
            sg_node_id_t id = add_node(g, rnd(3) ? SG_NODE_KERNEL : SG_NODE_EMPTY, rnd(2), i);
            if (g->nodes[id].type == SG_NODE_KERNEL)
                assert_int_equal(sg_node_set_kernel_name(g, id, rnd(2) ? "_Z1kv" : "_Z4fillPf"),
                                 SG_OK);
            for (uint32_t a = rnd(3); a > 0; a--)
                assert_int_equal(sg_node_add_access(g, id, buf[rnd(3)], 0, 64, SG_ACCESS_READ),
                                 SG_OK);
            for (uint32_t e = rnd(3); e > 0 && i > 0; e--)
                add_edge(g, rnd(i), id, SG_EDGE_STREAM, SG_NONE);
        }
        sg_graph_t *c = sg_graph_clone(g);
        assert_non_null(c);
        sg_graph_t *both[2] = {g, c};
        for (uint32_t step = 0; step < 200; step++) {
            uint32_t op = rnd(7), a = rnd(n), b = rnd(n), m = rnd(4);
            uint64_t pick = rng_state;
            for (int k = 0; k < 2; k++) {
                sg_graph_t *x = both[k];
                bool live = sg_graph_node(x, a) != NULL;
                switch (op) {
                case 0: /* an edge forward in id order: stays a DAG */
                    if (a < b && live && sg_graph_node(x, b))
                        add_edge(x, a, b, SG_EDGE_CONTROL, SG_NONE);
                    break;
                case 1: { /* remove one of a's out-edges */
                    uint32_t no = 0;
                    const sg_edge_id_t *out = sg_graph_out_edges(x, a, &no);
                    if (no) assert_int_equal(sg_graph_remove_edge(x, out[pick % no]), SG_OK);
                    break;
                }
                case 2:
                    if (live && step % 5 == 0) assert_int_equal(sg_graph_remove_node(x, a), SG_OK);
                    break;
                case 3:
                    if (live)
                        assert_int_equal(sg_node_add_access(x, a, buf[m % 3], m, 8, SG_ACCESS_WRITE),
                                         SG_OK);
                    break;
                case 4:
                    if (live) {
                        sg_access_t acc[2] = {{buf[m % 3], 0, 16, SG_ACCESS_READ, SG_RANGE_GUESS},
                                              {buf[(m + 1) % 3], 8, 8, SG_ACCESS_WRITE,
                                               SG_RANGE_GUESS}};
                        assert_int_equal(sg_node_set_accesses(x, a, acc, m % 3), SG_OK);
                    }
                    break;
                case 5:
                    if (live && x->nodes[a].type == SG_NODE_KERNEL)
                        assert_int_equal(sg_node_set_kernel_name(x, a, m ? "_Z3newv" : "k2"),
                                         SG_OK);
                    break;
                default: /* several edges into a: its list grows out of the block */
                    for (uint32_t j = 0; j < a && j < 5 && live; j++)
                        if (sg_graph_node(x, j)) add_edge(x, j, a, SG_EDGE_CONTROL, SG_NONE);
                    break;
                }
            }
            if (step % 50 == 49) {
                char *dg = dump_of(g), *dc = dump_of(c);
                assert_string_equal(dg, dc);
                free(dg);
                free(dc);
                check_adjacency(g);
                check_adjacency(c);
            }
        }
        /* a clone of the clone (blocks of its own, from lists in blocks and out) */
        sg_graph_t *cc = sg_graph_clone(c);
        assert_non_null(cc);
        char *dg = dump_of(g), *dcc = dump_of(cc);
        assert_string_equal(dg, dcc);
        free(dg);
        free(dcc);
        sg_graph_destroy(cc);
        sg_graph_destroy(c);
        sg_graph_destroy(g);
    }
}

static void test_property_random_dags(void **state)
{
    (void)state;
    rng_state = 0x9e3779b97f4a7c15ull; /* fixed seed: failures reproduce */
    for (int round = 0; round < 300; round++)
        property_round(1 + (uint32_t)round % 4);
    for (int i = 0; i < 5; i++)
        assert_true(op_counts[i] > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror_and_names),
        cmocka_unit_test(test_create_destroy),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_nodes_and_setters),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_lists_order),
        cmocka_unit_test(test_remove_node),
        cmocka_unit_test(test_stream_order),
        cmocka_unit_test(test_topo_order),
        cmocka_unit_test(test_reaches),
        cmocka_unit_test(test_merge_chain),
        cmocka_unit_test(test_merge_chain_dedup_rules),
        cmocka_unit_test(test_clone),
        cmocka_unit_test(test_pass_log),
        cmocka_unit_test(test_property_random_dags),
        cmocka_unit_test(test_clone_mutations_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
