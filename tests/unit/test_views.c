/* test_views.c: unit tests of the views (graph/dump.c, dot.c, names.c,
 * text.c): escaping of untrusted strings for terminals,
 * short kernel names of real mangled names, dump determinism (the same
 * graph built in different orders dumps identically; real differences show),
 * escaping of hostile strings, and DOT validity checked by Graphviz itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/dot_fold.h"
#include "graph/graph.h"
#include "graph/text.h"
#include "graph/views.h"

/* ---- helpers --------------------------------------------------------------- */

static sg_node_id_t add_node(sg_graph_t *g, sg_node_type_t t, uint32_t stream, uint64_t seq)
{
    sg_node_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_node(g, t, stream, seq, &id), SG_OK);
    return id;
}

static void add_edge(sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k, uint32_t ev)
{
    assert_int_equal(sg_graph_add_edge(g, a, b, k, ev, NULL), SG_OK);
}

/* noinline: GCC 12 inlines it and then misreports the returned pointer as
 * dangling (-Wdangling-pointer) at the caller's strstr. */
__attribute__((noinline)) static char *dump_of(const sg_graph_t *g)
{
    char *s = NULL;
    assert_int_equal(sg_dump_string(g, &s), SG_OK);
    assert_non_null(s);
    return s;
}

static void set_kernel(sg_graph_t *g, sg_node_id_t id, const char *name, uint32_t grid,
                       uint32_t block, uint64_t ptr, uint32_t n)
{
    sg_node_set_kernel_name(g, id, name);
    sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
    k->grid[0] = grid;
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = block;
    k->block[1] = k->block[2] = 1;
    uint8_t bytes[16] = {0};
    for (int i = 0; i < 8; i++)
        bytes[i] = (uint8_t)(ptr >> (8 * i));
    for (int i = 0; i < 4; i++)
        bytes[8 + i] = (uint8_t)(n >> (8 * i));
    uint32_t off[2] = {0, 8}, sz[2] = {8, 4};
    assert_int_equal(sg_node_set_kernel_params(g, id, 2, off, sz, bytes, 16), SG_OK);
}

/* Fork/join over two streams with an event, a graph allocation freed after
 * a dealloc edge, a child graph and a conditional. `order` permutes the
 * edge insertion; `noise` adds and removes extra edges and changes the
 * process-local values the dump must ignore. */
static sg_graph_t *build_graph(int order, bool noise)
{
    sg_graph_t *g = sg_graph_create();
    g->program = strdup("fork_join");
    g->capture_mode = strdup("global");
    g->device.name = strdup("NVIDIA H200");
    g->device.cc_major = 9;
    g->device.sm_count = 132;
    g->pid = noise ? 4242 : 17;
    g->capture_id = noise ? 99 : 1;
    uint32_t s0, s1, e0, e1, b0, b1, im;
    sg_graph_add_stream(g, NULL, noise ? 0xdead : 0x10, &s0);
    sg_graph_add_stream(g, NULL, noise ? 0xbeef : 0x20, &s1);
    sg_graph_add_event(g, NULL, noise ? 0x1 : 0x30, &e0);
    sg_graph_add_event(g, NULL, noise ? 0x2 : 0x40, &e1);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000000ull, 1 << 20, &b0);
    sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, 0x7f0000200000ull, 1 << 20, &b1);
    sg_graph_add_image(g, SG_IMAGE_FATBIN, "0123456789abcdef", 4096, &im);
    sg_node_id_t k0 = add_node(g, SG_NODE_KERNEL, s0, 0);
    set_kernel(g, k0, "_Z4initPfi", 1024, 256, 0x7f0000000000ull, 262144);
    sg_graph_node(g, k0)->u.kernel.image = im;
    sg_graph_node(g, k0)->u.kernel.func_handle = noise ? 0x1111 : 0x2222;
    sg_node_add_access(g, k0, b0, 0, 1 << 20, SG_ACCESS_WRITE);
    sg_node_id_t r0 = add_node(g, SG_NODE_EVENT_RECORD, s0, 1);
    sg_graph_node(g, r0)->u.event = e0;
    sg_node_id_t al = add_node(g, SG_NODE_MEM_ALLOC, s1, 2);
    sg_graph_node(g, al)->u.mem = (sg_memnode_t){b1, 0x7f0000200000ull, 1 << 20};
    sg_graph_buffer(g, b1)->alloc_node = al;
    sg_node_id_t k1 = add_node(g, SG_NODE_KERNEL, s1, 3);
    set_kernel(g, k1, "_ZN2ns5scaleIfEEvPT_PKS1_i", 1024, 256, 0x7f0000200010ull, 7);
    sg_node_add_access(g, k1, b0, 0, 1 << 20, SG_ACCESS_READ);
    sg_node_add_access(g, k1, b1, 0, 1 << 20, SG_ACCESS_WRITE);
    sg_node_id_t r1 = add_node(g, SG_NODE_EVENT_RECORD, s1, 4);
    sg_graph_node(g, r1)->u.event = e1;
    sg_node_id_t cp = add_node(g, SG_NODE_MEMCPY, s0, 5);
    sg_graph_node(g, cp)->u.memcpy =
        (sg_memcpy_t){0x7f0000000000ull, 0x7f0000200000ull, 0, 0, 1 << 20, 1, 1, SG_COPY_D2D};
    sg_node_id_t fr = add_node(g, SG_NODE_MEM_FREE, s0, 6);
    sg_graph_node(g, fr)->u.mem = (sg_memnode_t){b1, 0x7f0000200000ull, 0};
    sg_node_id_t host = add_node(g, SG_NODE_HOST, s0, 7);
    sg_graph_node(g, host)->u.host = (sg_host_t){noise ? 0x5555 : 0x6666, noise ? 1 : 2};
    sg_node_id_t ch = add_node(g, SG_NODE_CHILD_GRAPH, SG_STREAM_EXPLICIT, 8);
    sg_graph_t *body;
    sg_node_make_child_body(g, ch, &body);
    sg_node_id_t m0 = add_node(body, SG_NODE_MEMSET, SG_STREAM_EXPLICIT, 0);
    sg_graph_node(body, m0)->u.memset = (sg_memset_t){0x7f0000000000ull, 0, 0, 4, 256, 1};
    sg_node_id_t m1 = add_node(body, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 1);
    sg_node_id_t cond = add_node(g, SG_NODE_CONDITIONAL, SG_STREAM_EXPLICIT, 9);
    sg_graph_node(g, cond)->u.cond.handle = noise ? 7 : 8;
    sg_graph_t *cb;
    sg_node_add_cond_body(g, cond, &cb);
    add_node(cb, SG_NODE_OPAQUE, SG_STREAM_EXPLICIT, 0);
    sg_graph_log_pass(g, "ordering", "2 control edges");

    struct {
        sg_node_id_t a, b;
        sg_edge_kind_t k;
        uint32_t ev;
    } edges[] = {
        {k0, r0, SG_EDGE_STREAM, SG_NONE},    {r0, k1, SG_EDGE_EVENT, e0},
        {al, k1, SG_EDGE_STREAM, SG_NONE},    {k1, r1, SG_EDGE_STREAM, SG_NONE},
        {r0, cp, SG_EDGE_STREAM, SG_NONE},    {r1, cp, SG_EDGE_EVENT, e1},
        {cp, fr, SG_EDGE_STREAM, SG_NONE},    {k1, fr, SG_EDGE_DEALLOC, SG_NONE},
        {fr, host, SG_EDGE_STREAM, SG_NONE},  {host, ch, SG_EDGE_CONTROL, SG_NONE},
        {ch, cond, SG_EDGE_CONTROL, SG_NONE}, {r0, cp, SG_EDGE_CONTROL, SG_NONE},
    };
    size_t n = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < n; i++) {
        size_t j = order == 0 ? i : order == 1 ? n - 1 - i : (i * 5) % n; /* 5 is prime to 12 */
        if (noise && i == 3) {
            sg_edge_id_t extra;
            sg_graph_add_edge(g, k0, host, SG_EDGE_CONTROL, SG_NONE, &extra);
            sg_graph_remove_edge(g, extra);
        }
        add_edge(g, edges[j].a, edges[j].b, edges[j].k, edges[j].ev);
    }
    if (order)
        add_edge(body, m0, m1, SG_EDGE_STREAM, SG_NONE);
    else
        add_edge(body, m0, m1, SG_EDGE_STREAM, SG_NONE);
    return g;
}

/* ---- short names ------------------------------------------------------------- */

static void test_short_names(void **state)
{
    (void)state;
    static const struct {
        const char *mangled, *want;
    } cases[] = {
        /* plain C and extern "C" kernels are not mangled */
        {"add_kernel", "add_kernel"},
        {"i", "i"}, /* the demangler would say "int" */
        {"f", "f"},
        /* free functions, namespaces */
        {"_Z6k_initPfi", "k_init"},
        {"_ZN3foo3bar6kernelEPKfPfi", "foo::bar::kernel"},
        {"_ZN12_GLOBAL__N_13fooEPf", "(anonymous namespace)::foo"},
        /* templates: the return type goes, short arguments stay */
        {"_Z5scaleIfEvPT_S0_i", "scale<float>"},
        {"_ZN2ns5scaleIfEEvPT_PKS1_i", "ns::scale<float>"},
        {"_Z6kernelIfLi256EEvPT_", "kernel<float, 256>"},
        {"_Z3addILi4ELb1EEvPf", "add<4, true>"},
        {"_ZN5outer5inner1kIiEEvT_", "outer::inner::k<int>"},
        /* long argument lists collapse */
        {"_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedINS1_"
         "9GemmShapeILi128ELi128ELi8EEEEEEEEEvNT_6ParamsE",
         "cutlass::Kernel<...>"},
        {"_ZN6thrust8cuda_cub4core13_kernel_agentINS0_14__parallel_for16ParallelForAgentINS0_"
         "11__transform17unary_transform_fIPfS7_NS5_14no_stencil_tagENS_8identityIfEENS5_"
         "21always_true_predicateEEElEES7_lEEvT0_T1_",
         "thrust::cuda_cub::core::_kernel_agent<...>"},
        /* lambdas: parentheses inside braces are not the parameter list */
        {"_Z6kernelIZ4mainEUlfE_EvT_", "kernel<main::{lambda(float)#1}>"},
        {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"},
        /* garbage falls back to the raw text */
        {"_Zgarbage", "_Zgarbage"},
        {"_Z", "_Z"},
        {"_Z999x", "_Z999x"},
        {"_ZN3fooE", "foo"}, /* a valid (variable) name: demangled all the same */
        {"", "(unnamed)"},
    };
    char buf[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = sg_kernel_short_name(cases[i].mangled, buf, sizeof buf);
        assert_ptr_equal(got, buf);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("short name of %s: got \"%s\", want \"%s\"", cases[i].mangled, got,
                     cases[i].want);
    }
    assert_string_equal(sg_kernel_short_name(NULL, buf, sizeof buf), "(unnamed)");
    assert_null(sg_kernel_short_name("x", NULL, 10));
}

/* Small buffers: never a byte past n, always NUL-terminated, "..." when cut. */
static void test_short_name_bounds(void **state)
{
    (void)state;
    const char *names[] = {"_ZN2ns5scaleIfEEvPT_PKS1_i", "a_very_long_plain_c_kernel_name", "",
                           "_Zgarbage", "_Z6kernelIZ4mainEUlfE_EvT_"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char full[256];
        sg_kernel_short_name(names[i], full, sizeof full);
        for (size_t n = 1; n < 40; n++) {
            char buf[64];
            memset(buf, 0x5a, sizeof buf);
            sg_kernel_short_name(names[i], buf, n);
            for (size_t k = n; k < sizeof buf; k++)
                assert_int_equal((unsigned char)buf[k], 0x5a);
            assert_true(strlen(buf) < n);
            if (strlen(full) < n) {
                assert_string_equal(buf, full);
            } else if (n >= 4) {
                assert_int_equal(strlen(buf), n - 1);
                assert_string_equal(buf + n - 4, "...");
                assert_memory_equal(buf, full, n - 4);
            }
        }
        char z = 0x5a;
        sg_kernel_short_name(names[i], &z, 0); /* n == 0 writes nothing */
        assert_int_equal(z, 0x5a);
    }
    /* a huge mangled name is not demangled (bounded work) but still bounded */
    size_t len = 100000;
    char *huge = malloc(len + 1);
    memcpy(huge, "_ZN", 3);
    memset(huge + 3, 'a', len - 3);
    huge[len] = '\0';
    char buf[32];
    sg_kernel_short_name(huge, buf, sizeof buf);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    free(huge);
}

/* ---- dump ------------------------------------------------------------------------ */

static void test_dump_determinism(void **state)
{
    (void)state;
    sg_graph_t *a = build_graph(0, false);
    sg_graph_t *b = build_graph(1, false);
    sg_graph_t *c = build_graph(2, true);
    char *da = dump_of(a), *db = dump_of(b), *dc = dump_of(c);
    /* edge insertion order, edge ids, handles, pid and capture id do not show */
    assert_string_equal(da, db);
    assert_string_equal(da, dc);
    char *da2 = dump_of(a);
    assert_string_equal(da, da2);
    /* ... but real differences do */
    struct {
        const char *what;
        int change;
    } diffs[] = {{"edge kind", 0}, {"address", 1}, {"param byte", 2},  {"seq", 3},
                 {"stream", 4},    {"access", 5},  {"synthesized", 6}, {"event", 7}};
    for (size_t i = 0; i < sizeof diffs / sizeof diffs[0]; i++) {
        sg_graph_t *m = build_graph(0, false);
        switch (diffs[i].change) {
        case 0:
            m->edges[sg_graph_find_edge(m, 8, 9)].kind = SG_EDGE_STREAM;
            break;
        case 1:
            m->buffers[0].address += 0x1000;
            break;
        case 2:
            sg_graph_node(m, 0)->u.kernel.param_bytes[12] = 1;
            break; /* padding too */
        case 3:
            sg_graph_node(m, 5)->seq = 55;
            break;
        case 4:
            sg_graph_node(m, 5)->stream = 1;
            break;
        case 5:
            sg_graph_node(m, 3)->accesses[0].mode = SG_ACCESS_READWRITE;
            break;
        case 6:
            sg_graph_node(m, 8)->synthesized = true;
            break;
        case 7:
            sg_graph_node(m, 1)->u.event = 1;
            break;
        }
        char *dm = dump_of(m);
        if (strcmp(dm, da) == 0)
            fail_msg("a change of %s does not show in the dump", diffs[i].what);
        free(dm);
        sg_graph_destroy(m);
    }
    free(da);
    free(db);
    free(dc);
    free(da2);
    sg_graph_destroy(a);
    sg_graph_destroy(b);
    sg_graph_destroy(c);
}

static void test_dump_content(void **state)
{
    (void)state;
    sg_graph_t *g = build_graph(0, false);
    char *d = dump_of(g);
    const char *want[] = {
        "sgcap dump 1\n",
        "program     fork_join\n",
        "capture     mode=global sequence=0\n",
        "device      \"NVIDIA H200\" cc=9.0 sms=132",
        "\n  s1  id=1 priority=0 flags=0x0\n",
        "\n  b1  id=1 graph_alloc 0x7f0000200000 size=1048576 alloc=n2\n",
        "\n  img0  fatbin 0123456789abcdef size=4096 ptx=- sass=-\n",
        "\n  n0  kernel  s0  seq=0 cuda=0\n",
        "\n      kernel   _Z4initPfi  init  image=img0\n",
        "\n      launch   grid=1024,1,1 block=256,1,1 smem=0\n",
        "\n        [0]   +0     8    00 00 00 00 00 7f 00 00  -> b0+0x0\n",
        "\n        [1]   +8     4    00 00 04 00\n",
        "\n        pad   +12    4    00 00 00 00\n",
        "\n        [0]   +0     8    10 00 20 00 00 7f 00 00  -> b1+0x10\n",
        "\n      kernel   _ZN2ns5scaleIfEEvPT_PKS1_i  \"ns::scale<float>\"\n",
        "\n      access   b1 write offset=0 size=1048576\n",
        "\n      event    e1\n",
        "\n      copy     d2d dst=0x7f0000000000 (b0+0x0) src=0x7f0000200000 (b1+0x0)\n",
        "\n      buffer   b1 address=0x7f0000200000 bytes=1048576\n",
        "\n  n8  child_graph  explicit  seq=8 cuda=0\n      body     (2 nodes, 1 edges)\n"
        "        nodes (2)\n          n0  memset  explicit  seq=0 cuda=0\n",
        "\n        edges (1)\n          n0 -> n1  stream\n",
        "\n      cond     if default=0 bodies=1\n      body 0   (1 nodes, 0 edges)\n",
        "\nedges (12)\n  n0 -> n1  stream\n  n1 -> n3  event e0\n",
        "\n  n1 -> n5  stream\n  n1 -> n5  control\n",
        "\n  n3 -> n6  dealloc\n",
        "\npass log (1)\n  [0] ordering \"2 control edges\"\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(d, want[i])) fail_msg("dump lacks \"%s\":\n%s", want[i], d);
    /* process-local values never appear */
    assert_null(strstr(d, "dead"));
    assert_null(strstr(d, "4242"));
    assert_null(strstr(d, "0x6666"));
    free(d);
    sg_graph_destroy(g);
}

/* Strings from a bundle are untrusted: each item stays on its line. */
static void test_dump_escaping(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    g->program = strdup("two\nlines \"quoted\" back\\slash \x01\xff");
    sg_graph_add_stream(g, "s 0\n", 0, NULL);
    sg_graph_add_event(g, "", 0, NULL);
    sg_node_id_t n = add_node(g, SG_NODE_OPAQUE, 0, 0);
    sg_node_set_opaque_note(g, n, "line1\nline2\r\t");
    sg_node_set_label(g, n, "x=1 y=2");
    char *d = dump_of(g);
    assert_non_null(
        strstr(d, "program     \"two\\nlines \\\"quoted\\\" back\\\\slash \\x01\\xff\"\n"));
    assert_non_null(strstr(d, "\n  \"s 0\\n\"  id=0"));
    assert_non_null(strstr(d, "\n  \"\"  id=0 flags=0x0\n"));
    assert_non_null(strstr(d, "note     \"line1\\nline2\\r\\t\"\n"));
    assert_non_null(strstr(d, "label    \"x=1 y=2\"\n"));
    assert_non_null(strstr(d, "\n  n0  opaque  \"s 0\\n\"  seq=0"));
    for (const char *p = d; *p; p++)
        assert_true(*p == '\n' || (*p >= 0x20 && *p < 0x7f));
    free(d);
    sg_graph_destroy(g);
}

/* The dump finds the buffer an address falls in through its own sorted
 * index; it must agree with sg_graph_find_buffer (lowest id wins) on
 * overlapping, nested, empty and out-of-order buffers. */
static void test_dump_address_owner(void **state)
{
    (void)state;
    uint64_t rng = 12345;
    sg_graph_t *g = sg_graph_create();
    for (int i = 0; i < 64; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t base = 0x10000 + ((rng >> 33) % 64) * 0x100;
        uint64_t size = ((rng >> 20) % 5) * 0x100; /* 0 .. 0x400: overlaps, empties */
        sg_graph_add_buffer(g, SG_BUFFER_DEVICE, base, size, NULL);
    }
    sg_graph_add_buffer(g, SG_BUFFER_UNKNOWN, UINT64_MAX - 0x10, 0x100, NULL); /* wraps */
    for (int i = 0; i < 300; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        sg_node_id_t n = add_node(g, SG_NODE_MEMSET, 0, (uint64_t)i);
        sg_graph_node(g, n)->u.memset.dst = i == 0 ? UINT64_MAX - 1 : 0xff00 + (rng >> 40) % 0x5000;
    }
    char *d = dump_of(g);
    const char *p = d;
    for (uint32_t i = 0; i < 300; i++) {
        uint64_t addr = sg_graph_node(g, i)->u.memset.dst;
        uint32_t b = sg_graph_find_buffer(g, addr);
        char want[128];
        if (b == SG_NONE)
            snprintf(want, sizeof want, "set      dst=0x%" PRIx64 " value", addr);
        else
            snprintf(want, sizeof want, "set      dst=0x%" PRIx64 " (%s+0x%" PRIx64 ") value", addr,
                     sg_graph_buffer(g, b)->label, addr - sg_graph_buffer(g, b)->address);
        const char *hit = strstr(p, want);
        if (!hit) fail_msg("node %u: dump lacks \"%s\"", i, want);
        p = hit;
    }
    free(d);
    sg_graph_destroy(g);
}

static void test_dump_errors(void **state)
{
    (void)state;
    sg_graph_t *g = build_graph(0, false);
    char *s = NULL;
    assert_int_equal(sg_dump(NULL, stdout), SG_EINVAL);
    assert_int_equal(sg_dump(g, NULL), SG_EINVAL);
    assert_int_equal(sg_dump_string(NULL, &s), SG_EINVAL);
    assert_int_equal(sg_dump_string(g, NULL), SG_EINVAL);
    /* a stream that cannot be written reports SG_EIO */
    FILE *ro = fopen("/dev/null", "r");
    assert_non_null(ro);
    assert_int_equal(sg_dump(g, ro), SG_EIO);
    fclose(ro);
    /* a body graph dumps alone: its nodes and edges, no tables */
    sg_graph_t *body = sg_graph_node(g, 8)->u.child;
    assert_int_equal(sg_dump_string(body, &s), SG_OK);
    assert_string_equal(s, "nodes (2)\n"
                           "  n0  memset  explicit  seq=0 cuda=0\n"
                           "      set      dst=0x7f0000000000 (b0+0x0) value=0x0 element=4 "
                           "width=256 height=1 pitch=0\n"
                           "  n1  empty  explicit  seq=1 cuda=0\n"
                           "\n"
                           "edges (1)\n"
                           "  n0 -> n1  stream\n");
    free(s);
    /* empty graph */
    sg_graph_t *e = sg_graph_create();
    assert_int_equal(sg_dump_string(e, &s), SG_OK);
    assert_non_null(strstr(s, "nodes (0)\n\nedges (0)\n"));
    free(s);
    sg_graph_destroy(e);
    sg_graph_destroy(g);
}

/* ---- DOT ----------------------------------------------------------------------------- */

static bool have_dot(void)
{
    return system("command -v dot >/dev/null 2>&1") == 0;
}

/* Render with Graphviz; any message on stderr (even a warning) fails. */
static void check_dot_renders(const sg_graph_t *g, const sg_dot_options_t *opt, char **text)
{
    char path[] = "/tmp/sgcap-test-views-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(sg_dot_write(g, f, opt), SG_OK);
    assert_int_equal(fclose(f), 0);
    char cmd[512], err[64];
    snprintf(err, sizeof err, "%s.err", path);
    snprintf(cmd, sizeof cmd, "dot -Tsvg -o /dev/null '%s' 2>'%s'", path, err);
    int rc = system(cmd);
    FILE *ef = fopen(err, "r");
    char msg[1024] = "";
    size_t got = ef ? fread(msg, 1, sizeof msg - 1, ef) : 0;
    msg[got] = '\0';
    if (ef) fclose(ef);
    unlink(err);
    if (text) {
        FILE *tf = fopen(path, "r");
        fseek(tf, 0, SEEK_END);
        long len = ftell(tf);
        rewind(tf);
        *text = calloc((size_t)len + 1, 1);
        assert_int_equal(fread(*text, 1, (size_t)len, tf), (size_t)len);
        fclose(tf);
    }
    if (rc != 0 || got) fail_msg("dot rejected %s (status %d): %s", path, rc, msg);
    unlink(path);
}

static void test_dot_valid(void **state)
{
    (void)state;
    if (!have_dot()) {
        print_message("graphviz `dot` is not installed: skipping the DOT rendering checks\n");
        skip();
        return;
    }
    sg_graph_t *g = build_graph(0, false);
    sg_graph_node(g, 3)->synthesized = true;
    char *text = NULL;
    check_dot_renders(g, NULL, &text);
    const char *want[] = {
        "subgraph cluster_s0 {",
        "subgraph cluster_s1 {",
        "subgraph cluster_explicit {",
        "label=\"explicit\"",
        "n0 [label=\"init\\ngrid 1024  block 256\" shape=box",
        "n3 [label=\"ns::scale<float>\\ngrid 1024  block 256\\n(synthesized)\"",
        "peripheries=2",
        "n1 -> n3 [style=dashed color=\"#1f4e9c\" fontcolor=\"#1f4e9c\" penwidth=1.3 "
        "label=\"e0\"];",
        "n3 -> n6 [style=bold color=\"red\"",
        "n8 -> n9 [style=dotted color=\"grey50\"",
        "n0 -> n1 [color=\"#333333\"];",
        "subgraph cluster_n8_b0_body {",
        "n8_b0_n0 -> n8_b0_n1",
        "n8 -> n8_b0_n0 [style=dotted",
        "subgraph cluster_n9_b0_body {",
        "shape=house",
        "shape=cds",
        "shape=parallelogram",
        "tooltip=\"_ZN2ns5scaleIfEEvPT_PKS1_i\"",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i])) fail_msg("DOT lacks \"%s\":\n%s", want[i], text);
    free(text);

    sg_dot_options_t opt = {.show_ids = true, .show_params = true, .title = "t \"1\"\n"};
    check_dot_renders(g, &opt, &text);
    assert_non_null(strstr(text, "init #0\\ngrid 1024  block 256\\nparams 8+4 = 16 B"));
    /* a newline from the graph is shown as "\n", not obeyed: it could forge a line */
    assert_non_null(strstr(text, "label=\"t \\\"1\\\"\\\\n\""));
    free(text);
    /* a body graph alone */
    check_dot_renders(sg_graph_node(g, 8)->u.child, NULL, NULL);
    sg_graph_destroy(g);

    /* empty graph, with or without a stream: a note says it has no nodes */
    sg_graph_t *e = sg_graph_create();
    check_dot_renders(e, NULL, &text);
    assert_non_null(strstr(text, "label=\"empty graph: no nodes\""));
    free(text);
    assert_int_equal(sg_graph_add_stream(e, NULL, 0x10, NULL), SG_OK);
    check_dot_renders(e, NULL, &text);
    assert_non_null(strstr(text, "label=\"empty graph: no nodes\""));
    assert_null(strstr(text, "cluster"));
    free(text);
    sg_graph_destroy(e);
}

/* Hostile strings everywhere, every node type, bad indices, deep nesting. */
static void test_dot_hostile(void **state)
{
    (void)state;
    if (!have_dot()) {
        print_message("graphviz `dot` is not installed: skipping the DOT rendering checks\n");
        skip();
        return;
    }
    sg_graph_t *g = sg_graph_create();
    uint32_t s0, ev;
    sg_graph_add_stream(g, "\"}; digraph x { a -> b; //", 0, &s0);
    sg_graph_add_stream(g, "back\\slash\\", 0, NULL);
    sg_graph_add_event(g, "<b>html</b>\n\xff\xfe", 0, &ev);
    sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x1000, 16, NULL);
    free(g->buffers[0].label);
    g->buffers[0].label = strdup("{rec|ord}");
    sg_node_id_t prev = SG_NONE;
    for (int t = 0; t < SG_NODE_TYPE_COUNT; t++) {
        sg_node_id_t n = add_node(g, (sg_node_type_t)t, (uint32_t)t % 3, (uint64_t)t);
        sg_node_t *x = sg_graph_node(g, n);
        x->synthesized = t % 2;
        if (t == SG_NODE_KERNEL) sg_node_set_kernel_name(g, n, "_Z1k\"\\\n\x80");
        if (t == SG_NODE_EVENT_RECORD || t == SG_NODE_EVENT_WAIT) x->u.event = t % 2 ? ev : 77;
        if (t == SG_NODE_MEM_ALLOC || t == SG_NODE_MEM_FREE) x->u.mem.buffer = t % 2 ? 0 : 55;
        if (t == SG_NODE_OPAQUE) sg_node_set_opaque_note(g, n, "\\\"\\n\"");
        if (t == SG_NODE_CONDITIONAL) {
            sg_graph_t *b;
            sg_node_add_cond_body(g, n, &b); /* empty body */
            sg_node_add_cond_body(g, n, &b);
            add_node(b, SG_NODE_EMPTY, 12345, 0); /* a stream the table lacks */
        }
        if (t == SG_NODE_CHILD_GRAPH) {
            /* 70 levels: past the drawing depth limit */
            sg_graph_t *b = g;
            sg_node_id_t owner = n;
            for (int d = 0; d < 70; d++) {
                sg_graph_t *inner;
                sg_node_make_child_body(b, owner, &inner);
                owner = add_node(inner, SG_NODE_CHILD_GRAPH, SG_STREAM_EXPLICIT, 0);
                b = inner;
            }
        }
        if (prev != SG_NONE)
            add_edge(g, prev, n, (sg_edge_kind_t)(t % SG_EDGE_KIND_COUNT),
                     t % SG_EDGE_KIND_COUNT == SG_EDGE_EVENT ? ev : SG_NONE);
        prev = n;
    }
    add_node(g, SG_NODE_KERNEL, 999, 99); /* unknown stream: its own lane */
    g->edges[0].from_port = 1;
    g->edges[0].cuda_type = 1;
    sg_dot_options_t opt = {.show_ids = true, .show_params = true, .title = "\\"};
    check_dot_renders(g, &opt, NULL);
    check_dot_renders(g, NULL, NULL);
    /* the dump copes as well: one line per item, nesting cut off */
    char *d = dump_of(g);
    assert_non_null(strstr(d, "(body nesting too deep)"));
    free(d);
    sg_graph_destroy(g);
}

static void test_dot_errors(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    assert_int_equal(sg_dot_write(NULL, stdout, NULL), SG_EINVAL);
    assert_int_equal(sg_dot_write(g, NULL, NULL), SG_EINVAL);
    FILE *ro = fopen("/dev/null", "r");
    assert_int_equal(sg_dot_write(g, ro, NULL), SG_EIO);
    fclose(ro);
    sg_graph_destroy(g);
}

/* ---- folded drawings ------------------------------------------------------------------ */

static uint64_t fold_rng;
static uint32_t fold_rand(uint32_t n)
{
    fold_rng ^= fold_rng << 13;
    fold_rng ^= fold_rng >> 7;
    fold_rng ^= fold_rng << 17;
    return (uint32_t)(fold_rng % n);
}

/* A capture-like graph of n nodes on `streams` streams: stream order, event
 * edges between streams (record before wait), repeated kernels, a few
 * explicit nodes with edges from earlier nodes, control edges. */
static sg_graph_t *random_capture(uint32_t n, uint32_t streams, uint64_t seed)
{
    fold_rng = seed * 0x9e3779b97f4a7c15ull + 1;
    sg_graph_t *g = sg_graph_create();
    uint32_t ev;
    for (uint32_t s = 0; s < streams; s++)
        sg_graph_add_stream(g, NULL, s, NULL);
    sg_graph_add_event(g, NULL, 1, &ev);
    sg_node_id_t last[8];
    for (uint32_t s = 0; s < 8; s++)
        last[s] = SG_NONE;
    static const char *const names[] = {"_Z1av", "_Z1bv", "_Z1cv"};
    while (g->n_nodes < n) {
        uint32_t s = fold_rand(streams), r = fold_rand(100);
        if (r < 15 && streams > 1) {
            uint32_t t = (s + 1 + fold_rand(streams - 1)) % streams;
            sg_node_id_t rec = add_node(g, SG_NODE_EVENT_RECORD, s, g->n_nodes);
            sg_graph_node(g, rec)->u.event = ev;
            if (last[s] != SG_NONE) add_edge(g, last[s], rec, SG_EDGE_STREAM, SG_NONE);
            last[s] = rec;
            sg_node_id_t w = add_node(g, SG_NODE_EVENT_WAIT, t, g->n_nodes);
            sg_graph_node(g, w)->u.event = ev;
            if (last[t] != SG_NONE) add_edge(g, last[t], w, SG_EDGE_STREAM, SG_NONE);
            add_edge(g, rec, w, SG_EDGE_EVENT, ev);
            last[t] = w;
            continue;
        }
        if (r < 20) { /* explicit, depending on something earlier */
            sg_node_id_t x = add_node(g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, g->n_nodes);
            if (x > 0) add_edge(g, fold_rand(x), x, SG_EDGE_CONTROL, SG_NONE);
            continue;
        }
        sg_node_id_t k = add_node(g, r < 90 ? SG_NODE_KERNEL : SG_NODE_MEMSET, s, g->n_nodes);
        if (r < 90) sg_node_set_kernel_name(g, k, names[r % 2 ? 0 : fold_rand(3)]);
        if (last[s] != SG_NONE) add_edge(g, last[s], k, SG_EDGE_STREAM, SG_NONE);
        if (r > 95 && k > 2) add_edge(g, fold_rand(k - 1), k, SG_EDGE_CONTROL, SG_NONE);
        last[s] = k;
    }
    return g;
}

static bool same_look(const sg_graph_t *g, sg_node_id_t a, sg_node_id_t b)
{
    const sg_node_t *x = &g->nodes[a], *y = &g->nodes[b];
    if (x->type != y->type) return false;
    return x->type != SG_NODE_KERNEL || strcmp(x->u.kernel.name, y->u.kernel.name) == 0;
}

/* What a folded drawing promises (dot_fold.h), checked on g. */
static void check_fold(const sg_graph_t *g, uint32_t max)
{
    sg_fold_t f;
    assert_int_equal(sg_dot_fold(g, max, &f), SG_OK);
    if (sg_graph_node_count(g) <= max) {
        assert_int_equal(f.level, SG_FOLD_NONE);
        sg_dot_fold_free(&f);
        return;
    }
    assert_int_not_equal(f.level, SG_FOLD_NONE);
    assert_true(f.n_boxes <= max);
    /* every node in exactly one box, of its own lane */
    uint32_t seen = 0;
    for (uint32_t b = 0; b < f.n_boxes; b++) {
        const sg_fold_box_t *x = &f.boxes[b];
        assert_true(x->n_nodes >= 1);
        if (b > 0) assert_true(f.boxes[b - 1].lane <= x->lane);
        for (uint32_t k = 0; k < x->n_nodes; k++) {
            sg_node_id_t v = f.members[x->start + k];
            assert_int_equal(f.box_of[v], b);
            assert_int_equal(sg_dot_lane_of(g, &g->nodes[v]), x->lane);
            seen++;
            if (f.level != SG_FOLD_RUNS || k == 0) continue;
            /* a run: a path, each node entered from the one before */
            assert_int_not_equal(sg_graph_find_edge(g, f.members[x->start + k - 1], v), SG_NONE);
            if (x->period && k >= x->period)
                assert_true(same_look(g, v, f.members[x->start + k - x->period]));
        }
        if (x->period) assert_int_equal(x->period * x->repeats, x->n_nodes);
    }
    assert_int_equal(seen, sg_graph_node_count(g));
    /* every edge between boxes is an arrow (bands: or counted inside) */
    uint64_t between = 0, arrows = 0, inside = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        if (e->removed || f.box_of[e->from] == f.box_of[e->to]) continue;
        uint32_t a = f.box_of[e->from], z = f.box_of[e->to];
        if (f.level == SG_FOLD_BANDS && f.boxes[a].band == f.boxes[z].band) {
            inside += 2;
            continue;
        }
        between++;
        bool found = false;
        for (uint32_t k = 0; k < f.n_edges && !found; k++)
            found = f.edges[k].from == a && f.edges[k].to == z && f.edges[k].kind == e->kind;
        assert_true(found);
    }
    uint64_t counted = 0;
    for (uint32_t b = 0; b < f.n_boxes; b++)
        counted += f.boxes[b].syncs_inside;
    assert_int_equal(counted, inside);
    for (uint32_t k = 0; k < f.n_edges; k++) {
        assert_true(f.edges[k].count >= 1);
        arrows += f.edges[k].count;
        if (f.level == SG_FOLD_BANDS)
            assert_true(f.boxes[f.edges[k].from].band < f.boxes[f.edges[k].to].band);
    }
    assert_int_equal(arrows, between);
    /* the drawing is acyclic: Kahn over the boxes */
    uint32_t *indeg = calloc(f.n_boxes, sizeof *indeg), *queue = malloc(f.n_boxes * sizeof *queue);
    for (uint32_t k = 0; k < f.n_edges; k++)
        indeg[f.edges[k].to]++;
    uint32_t head = 0, tail = 0;
    for (uint32_t b = 0; b < f.n_boxes; b++)
        if (!indeg[b]) queue[tail++] = b;
    while (head < tail) {
        uint32_t b = queue[head++];
        for (uint32_t k = 0; k < f.n_edges; k++)
            if (f.edges[k].from == b && --indeg[f.edges[k].to] == 0) queue[tail++] = f.edges[k].to;
    }
    if (tail != f.n_boxes)
        fail_msg("the folded drawing has a cycle (%u of %u boxes sorted)", tail, f.n_boxes);
    free(indeg);
    free(queue);
    sg_dot_fold_free(&f);
}

static void test_dot_fold_properties(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        uint32_t n = 50 + (uint32_t)(seed * 37 % 900), streams = 1 + seed % 5;
        sg_graph_t *g = random_capture(n, streams, seed);
        static const uint32_t budgets[] = {8, 20, 60, 150, 400, 2000};
        for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++)
            check_fold(g, budgets[i]);
        sg_graph_destroy(g);
    }
}

/* The case that makes folding hard: a stream forks to another and joins
 * back; its nodes from the fork to the join must not become one box (the
 * arrows box -> s1 -> box would be a cycle). Repeats are found. */
static void test_dot_fold_shapes(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t ev;
    sg_graph_add_stream(g, NULL, 0, NULL);
    sg_graph_add_stream(g, NULL, 1, NULL);
    sg_graph_add_event(g, NULL, 1, &ev);
    sg_node_id_t prev = SG_NONE;
    sg_node_id_t ids[80];
    for (uint32_t i = 0; i < 80; i++) { /* s0: a x40, then [b c d] x10, then 10 more a */
        ids[i] = add_node(g, SG_NODE_KERNEL, 0, i);
        sg_node_set_kernel_name(g, ids[i],
                                i < 40   ? "_Z1av"
                                : i < 70 ? (i % 3 == 1   ? "_Z1bv"
                                            : i % 3 == 2 ? "_Z1cv"
                                                         : "_Z1dv")
                                         : "_Z1av");
        sg_kernel_t *k = &sg_graph_node(g, ids[i])->u.kernel;
        k->grid[0] = 64, k->grid[1] = k->grid[2] = 1;
        k->block[0] = 128, k->block[1] = k->block[2] = 1;
        if (prev != SG_NONE) add_edge(g, prev, ids[i], SG_EDGE_STREAM, SG_NONE);
        prev = ids[i];
    }
    /* fork at node 72 to s1, join at node 76 */
    sg_node_id_t w = add_node(g, SG_NODE_KERNEL, 1, 100);
    sg_node_set_kernel_name(g, w, "_Z1wv");
    add_edge(g, ids[72], w, SG_EDGE_EVENT, ev);
    add_edge(g, w, ids[76], SG_EDGE_EVENT, ev);
    check_fold(g, 20);
    sg_fold_t f;
    assert_int_equal(sg_dot_fold(g, 20, &f), SG_OK);
    assert_int_equal(f.level, SG_FOLD_RUNS);
    assert_int_not_equal(f.box_of[ids[72]], f.box_of[ids[76]]);
    const sg_fold_box_t *a = &f.boxes[f.box_of[ids[0]]], *bcd = &f.boxes[f.box_of[ids[45]]];
    assert_int_equal(a->period, 1);
    assert_int_equal(a->repeats, 40);
    assert_int_equal(bcd->period, 3);
    assert_int_equal(bcd->repeats, 10);
    /* the arrows s0 -> s1 -> s0 carry the event */
    bool out_ev = false, in_ev = false;
    for (uint32_t k = 0; k < f.n_edges; k++) {
        out_ev |= f.edges[k].to == f.box_of[w] && f.edges[k].kind == SG_EDGE_EVENT &&
                  f.edges[k].event == ev;
        in_ev |= f.edges[k].from == f.box_of[w] && f.edges[k].kind == SG_EDGE_EVENT;
    }
    assert_true(out_ev && in_ev);
    sg_dot_fold_free(&f);
    /* in DOT: the repeats are labelled, the title says how */
    sg_dot_summary_t sum;
    sg_dot_options_t opt = {.title = "shapes", .max_nodes = 20, .summary = &sum};
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    assert_int_equal(sg_dot_write(g, mf, &opt), SG_OK);
    fclose(mf);
    assert_non_null(strstr(text, "f0 [label=\"a\\ngrid 64  block 128\\nx40\""));
    assert_non_null(strstr(text, "10 x [\\nb\\nc\\nd ]"));
    assert_non_null(strstr(text, "label=\"shapes\\n81 nodes drawn as"));
    assert_int_equal(sum.nodes, 81);
    assert_true(sum.boxes <= 20 && sum.folded_boxes >= 2);
    free(text);
    sg_graph_destroy(g);
}

/* Folded drawings are valid DOT that Graphviz lays out without a warning,
 * as runs and as bands, hostile graphs included. */
static void test_dot_fold_renders(void **state)
{
    (void)state;
    if (!have_dot()) {
        print_message("graphviz `dot` is not installed: skipping the DOT rendering checks\n");
        skip();
        return;
    }
    sg_graph_t *g = random_capture(3000, 4, 7);
    sg_dot_summary_t sum;
    sg_dot_options_t runs = {.max_nodes = 600, .summary = &sum, .show_ids = true};
    check_dot_renders(g, &runs, NULL);
    assert_true(sum.boxes <= 600 && sum.folded_boxes > 0);
    sg_dot_options_t bands = {.max_nodes = 40, .summary = &sum};
    char *text = NULL;
    check_dot_renders(g, &bands, &text);
    assert_true(sum.bands > 1 && sum.boxes <= 40);
    assert_non_null(strstr(text, "rank=same"));
    free(text);
    sg_graph_destroy(g);
}

/* ---- text escaping ---------------------------------------------------------------- */

static void expect_escape(const char *in, const char *want)
{
    char buf[256];
    size_t n = sg_text_escape(buf, sizeof buf, in);
    if (strcmp(buf, want) != 0) fail_msg("escape gave \"%s\", want \"%s\"", buf, want);
    assert_int_equal(n, strlen(want));
    assert_int_equal(sg_text_escape(NULL, 0, in), strlen(want));
}

static void test_text_escape(void **state)
{
    (void)state;
    expect_escape("s0", "s0");
    expect_escape(NULL, "");
    /* the attack of issue 16: erase the line, go back to its start */
    expect_escape("s0\x1b[2K\rno hazards", "s0\\x1b[2K\\rno hazards");
    expect_escape("a\nb\tc\\d\x7f\x01", "a\\nb\\tc\\\\d\\x7f\\x01");
    /* UTF-8: kept when well formed and printable */
    expect_escape("gr\xc3\xbc\xc3\x9f"
                  "e \xe2\x86\x92 \xf0\x9f\x98\x80",
                  "gr\xc3\xbc\xc3\x9f"
                  "e \xe2\x86\x92 \xf0\x9f\x98\x80");
    /* not well formed: each byte shown */
    expect_escape("\xc3", "\\xc3");                            /* cut short */
    expect_escape("\xc3(", "\\xc3(");                          /* bad continuation */
    expect_escape("\x80x", "\\x80x");                          /* stray continuation */
    expect_escape("\xc0\xaf", "\\xc0\\xaf");                   /* overlong '/' */
    expect_escape("\xe0\x80\xaf", "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
    expect_escape("\xed\xa0\x80", "\\xed\\xa0\\x80");          /* a surrogate */
    expect_escape("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    expect_escape("\xff\xfe", "\\xff\\xfe");
    /* C1 controls (U+009B is CSI on some terminals) and bidi overrides */
    expect_escape("\xc2\x9b"
                  "2K",
                  "\\u009b2K");
    expect_escape("abc\xe2\x80\xae"
                  "def\xe2\x81\xa6",
                  "abc\\u202edef\\u2066");
    expect_escape("\xd8\x9c\xe2\x80\x8f", "\\u061c\\u200f");
    /* cut to fit: at a boundary, marked, the full length returned */
    char buf[8];
    assert_int_equal(sg_text_escape(buf, sizeof buf, "abcdefghij"), 10);
    assert_string_equal(buf, "abcd...");
    assert_int_equal(sg_text_escape(buf, sizeof buf, "abcdefg"), 7);
    assert_string_equal(buf, "abcdefg");
    assert_int_equal(sg_text_escape(buf, sizeof buf, "\x1b\x1b\x1b"), 12);
    assert_string_equal(buf, "\\x1b..."); /* never half an escape */
    assert_int_equal(sg_text_escape(buf, sizeof buf, "ab\xe2\x86\x92\xe2\x86\x92"), 8);
    assert_string_equal(buf, "ab..."); /* never half a character */
    assert_int_equal(sg_text_escape(buf, 3, "abcdef"), 6);
    assert_string_equal(buf, "ab");
    /* the stream form writes the same */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(sg_text_put(f, "x\x1b]0;t\x07\xc2\x9b"), 0);
    fclose(f);
    assert_string_equal(text, "x\\x1b]0;t\\x07\\u009b");
    free(text);
    assert_int_equal(sg_text_utf8_len("a"), 1);
    assert_int_equal(sg_text_utf8_len("\xc3\xbc"), 2);
    assert_int_equal(sg_text_utf8_len("\xc3"), 0);
    assert_int_equal(sg_text_utf8_len("\xf0\x9f\x98\x80"), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_escape),       cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_short_name_bounds), cmocka_unit_test(test_dump_determinism),
        cmocka_unit_test(test_dump_content),      cmocka_unit_test(test_dump_escaping),
        cmocka_unit_test(test_dump_errors),       cmocka_unit_test(test_dump_address_owner),
        cmocka_unit_test(test_dot_valid),         cmocka_unit_test(test_dot_hostile),
        cmocka_unit_test(test_dot_errors),        cmocka_unit_test(test_dot_fold_properties),
        cmocka_unit_test(test_dot_fold_shapes),   cmocka_unit_test(test_dot_fold_renders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
