/* test_optimize.c: unit tests of the in-app optimizer's decisions
 * (optimize/decide.c, pipeline.c, config.c) on models built here: every
 * refusal and its reason, whether a rewrite changed what CUDA would run
 * (payloads, new and lost orderings, orderings only repeated, edge data),
 * the pipeline on a graph the passes change and on one they do not, the
 * shadow set and the plant target, the exec-update rules (pointer words,
 * addresses, the structure check of cuGraphExecUpdate), the configuration.
 * The parts that call the driver are tested end to end on the fake driver
 * (tests/optimize/optimize_cpu.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "optimize/opt.h"

/* ---- building models ------------------------------------------------------------ */

static sg_graph_t *new_graph(uint32_t streams, uint32_t events)
{
    sg_graph_t *g = sg_graph_create();
    assert_non_null(g);
    for (uint32_t i = 0; i < streams; i++)
        assert_int_equal(sg_graph_add_stream(g, NULL, 0, NULL), SG_OK);
    for (uint32_t i = 0; i < events; i++)
        assert_int_equal(sg_graph_add_event(g, NULL, 0x4000 + i, NULL), SG_OK);
    return g;
}

static sg_node_id_t node(sg_graph_t *g, sg_node_type_t t, uint32_t s, uint64_t seq)
{
    sg_node_id_t id = SG_NONE;
    assert_int_equal(sg_graph_add_node(g, t, s, seq, &id), SG_OK);
    return id;
}

static uint32_t buffer(sg_graph_t *g, sg_buffer_kind_t kind, uint64_t addr, uint64_t size)
{
    uint32_t id;
    assert_int_equal(sg_graph_add_buffer(g, kind, addr, size, &id), SG_OK);
    return id;
}

/* k(float *y, const float *x, float m, u64 n): y, x are pointer words */
static sg_node_id_t kern(sg_graph_t *g, uint32_t s, uint64_t seq, const char *name, uint64_t y,
                         uint64_t x, float m)
{
    sg_node_id_t id = node(g, SG_NODE_KERNEL, s, seq);
    assert_int_equal(sg_node_set_kernel_name(g, id, name), SG_OK);
    uint32_t offs[4] = {0, 8, 16, 24}, sizes[4] = {8, 8, 4, 8};
    uint8_t bytes[32] = {0};
    uint64_t n = 1024;
    memcpy(bytes, &y, 8);
    memcpy(bytes + 8, &x, 8);
    memcpy(bytes + 16, &m, 4);
    memcpy(bytes + 24, &n, 8);
    assert_int_equal(sg_node_set_kernel_params(g, id, 4, offs, sizes, bytes, 32), SG_OK);
    sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
    k->func_handle = 0xf00d;
    k->grid[0] = 4, k->grid[1] = k->grid[2] = 1;
    k->block[0] = 256, k->block[1] = k->block[2] = 1;
    uint32_t by = sg_graph_find_buffer(g, y), bx = sg_graph_find_buffer(g, x);
    if (by != SG_NONE)
        assert_int_equal(sg_node_add_access(g, id, by, 0, 4096, SG_ACCESS_UNKNOWN), SG_OK);
    if (bx != SG_NONE)
        assert_int_equal(sg_node_add_access(g, id, bx, 0, 4096, SG_ACCESS_READ), SG_OK);
    return id;
}

static void edge(sg_graph_t *g, sg_node_id_t a, sg_node_id_t b, sg_edge_kind_t k, uint32_t ev)
{
    assert_int_equal(sg_graph_add_edge(g, a, b, k, ev, NULL), SG_OK);
}

enum { X = 0x100000, A = 0x200000, B = 0x300000, T = 0x400000, H = 0x500000 };

/* s0: k0 (a = f(x)) -> k1 (b = f(a)); s1: k2 (x... reads a) after an event
 * from k0; k2 joins back into k3 on s0. */
static sg_graph_t *fork_join(void)
{
    sg_graph_t *g = new_graph(2, 2);
    buffer(g, SG_BUFFER_DEVICE, X, 4096);
    buffer(g, SG_BUFFER_DEVICE, A, 4096);
    buffer(g, SG_BUFFER_DEVICE, B, 4096);
    sg_node_id_t k0 = kern(g, 0, 0, "_Z1kPfPKffm", A, X, 1.0f);
    sg_node_id_t k1 = kern(g, 0, 1, "_Z1kPfPKffm", B, A, 2.0f);
    sg_node_id_t k2 = kern(g, 1, 2, "_Z1kPfPKffm", X + 2048, A, 3.0f);
    sg_node_id_t k3 = kern(g, 0, 3, "_Z1kPfPKffm", B, B, 4.0f);
    edge(g, k0, k1, SG_EDGE_STREAM, SG_NONE);
    edge(g, k0, k2, SG_EDGE_EVENT, 0);
    edge(g, k1, k3, SG_EDGE_STREAM, SG_NONE);
    edge(g, k2, k3, SG_EDGE_EVENT, 1);
    g->crosscheck_done = g->crosscheck_ok = true;
    return g;
}

/* ---- refusals ------------------------------------------------------------------- */

static void refused_with(sg_graph_t *g, const char *words)
{
    char why[300] = "";
    assert_true(sg_opt_refuse(g, why, sizeof why));
    if (!strstr(why, words)) fail_msg("refused for \"%s\", expected \"%s\"", why, words);
}

static void test_refusals(void **state)
{
    (void)state;
    char why[300] = "";
    sg_graph_t *g = fork_join();
    assert_false(sg_opt_refuse(g, why, sizeof why));
    sg_graph_destroy(g);

    const struct {
        sg_node_type_t type;
        const char *words;
    } kinds[] = {
        {SG_NODE_HOST, "host callback: node n4 is one, and the shadow check would run it twice"},
        {SG_NODE_OPAQUE, "opaque node: sgcap does not understand node n4"},
        {SG_NODE_CONDITIONAL, "conditional node: n4's handle is set from the device"},
        {SG_NODE_CHILD_GRAPH, "child graph: node n4 holds one"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        g = fork_join();
        node(g, kinds[i].type, 0, 4);
        refused_with(g, kinds[i].words);
        sg_graph_destroy(g);
    }

    g = fork_join();
    kern(g, 0, 4, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", A, X, 1.0f);
    refused_with(g, "NCCL/NVSHMEM kernel: node n4 runs ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    sg_graph_destroy(g);

    g = fork_join();
    sg_graph_node(g, 2)->u.kernel.func_handle = 0;
    refused_with(g, "kernel not recorded: the capture could not read which kernel node n2 runs");
    sg_graph_destroy(g);

    g = fork_join();
    sg_node_id_t e = node(g, SG_NODE_KERNEL, 0, 4);
    sg_node_set_kernel_name(g, e, "_Z1ev");
    sg_graph_node(g, e)->u.kernel.func_handle = 1;
    sg_graph_node(g, e)->u.kernel.has_extra = true;
    refused_with(g, "arguments not recorded: kernel node n4");
    sg_graph_destroy(g);

    /* A graph allocation the graph frees is fine; one it leaves behind is not. */
    g = fork_join();
    uint32_t t = buffer(g, SG_BUFFER_GRAPH_ALLOC, T, 4096);
    sg_node_id_t al = node(g, SG_NODE_MEM_ALLOC, 0, 4);
    sg_graph_node(g, al)->u.mem = (sg_memnode_t){t, T, 4096};
    g->buffers[t].alloc_node = al;
    refused_with(g, "graph allocation outlives the graph: mem_alloc node n4's (b3, 4096 bytes)");
    sg_node_id_t fr = node(g, SG_NODE_MEM_FREE, 0, 5);
    sg_graph_node(g, fr)->u.mem = (sg_memnode_t){t, T, 0};
    edge(g, al, fr, SG_EDGE_STREAM, SG_NONE);
    assert_false(sg_opt_refuse(g, why, sizeof why));
    sg_graph_destroy(g);

    g = fork_join();
    g->crosscheck_ok = false;
    g->crosscheck_note = strdup("1 edge not predicted");
    refused_with(g, "cross-check: the model disagrees with CUDA's own listing of the graph (1 edge "
                    "not predicted)");
    sg_graph_destroy(g);

    g = new_graph(1, 0);
    refused_with(g, "empty graph");
    sg_graph_destroy(g);
}

/* ---- what changed ------------------------------------------------------------------ */

static bool changed(const sg_graph_t *a, const sg_graph_t *b, char *what, size_t n)
{
    bool c = false;
    assert_int_equal(sg_opt_changed(a, b, &c, what, n), SG_OK);
    return c;
}

static void test_changed(void **state)
{
    (void)state;
    char what[200];
    sg_graph_t *g = fork_join();
    sg_graph_t *h = sg_graph_clone(g);
    assert_false(changed(g, h, what, sizeof what));

    /* An edge that repeats an ordering the graph has by a path: nothing. */
    edge(h, 0, 3, SG_EDGE_CONTROL, SG_NONE);
    assert_false(changed(g, h, what, sizeof what));
    /* Labels, streams and sequence numbers are not work either. */
    sg_node_set_label(h, 1, "moved");
    sg_graph_node(h, 1)->seq = 17;
    assert_false(changed(g, h, what, sizeof what));

    /* A new ordering of independent nodes is. */
    edge(h, 1, 2, SG_EDGE_CONTROL, SG_NONE);
    assert_true(changed(g, h, what, sizeof what));
    assert_string_equal(what,
                        "the rewritten graph orders n1 before n2 and the original one does not");
    sg_graph_destroy(h);

    /* So is a lost one (the other direction). */
    h = sg_graph_clone(g);
    assert_int_equal(sg_graph_remove_edge(h, sg_graph_find_edge(h, 0, 2)), SG_OK);
    assert_true(changed(g, h, what, sizeof what));
    assert_string_equal(what,
                        "the original graph orders n0 before n2 and the rewritten one does not");
    sg_graph_destroy(h);

    /* Edge data must be there as it is, even when a path orders the pair. */
    h = sg_graph_clone(g);
    sg_edge_id_t pe = SG_NONE;
    assert_int_equal(sg_graph_add_edge(h, 0, 3, SG_EDGE_CONTROL, SG_NONE, &pe), SG_OK);
    sg_graph_edge(h, pe)->cuda_type = 1; /* programmatic */
    assert_true(changed(g, h, what, sizeof what));
    assert_non_null(strstr(what, "edge data"));
    sg_graph_destroy(h);

    /* Payloads: one argument byte, a new node, a removed node. */
    h = sg_graph_clone(g);
    sg_graph_node(h, 2)->u.kernel.param_bytes[16] ^= 1;
    assert_true(changed(g, h, what, sizeof what));
    assert_string_equal(what, "node n2 (kernel) changed");
    sg_graph_destroy(h);
    h = sg_graph_clone(g);
    node(h, SG_NODE_EMPTY, 0, 9);
    assert_true(changed(g, h, what, sizeof what));
    assert_string_equal(what, "node n4 was added");
    sg_graph_destroy(h);
    h = sg_graph_clone(g);
    assert_int_equal(sg_graph_remove_node(h, 3), SG_OK);
    assert_true(changed(g, h, what, sizeof what));
    assert_string_equal(what, "node n3 was removed");
    sg_graph_destroy(h);
    sg_graph_destroy(g);
}

/* ---- the pipeline -------------------------------------------------------------------- */

static void test_pipeline(void **state)
{
    (void)state;
    char why[300] = "", what[200] = "";
    sg_opt_rewrite_stats_t st;
    /* Nothing for the ordering passes to do in a plain fork/join. */
    sg_graph_t *g = fork_join();
    sg_graph_t *h = sg_graph_clone(g);
    sg_rewrite_files_t files = {0};
    assert_int_equal(sg_opt_pipeline(h, 90, NULL, &files, &st, why, sizeof why), SG_OK);
    assert_true(st.passes >= 3);
    assert_int_equal(files.n, 0); /* no code to read: nothing fused */
    assert_int_equal(st.fused_chains, 0);
    assert_false(changed(g, h, what, sizeof what));
    sg_graph_destroy(h);
    sg_graph_destroy(g);

    /* An external record and its wait with no path between them: the
     * control-deps pass orders the record first, which changes the graph. */
    g = new_graph(2, 1);
    g->events[0].external = true;
    buffer(g, SG_BUFFER_DEVICE, X, 4096);
    buffer(g, SG_BUFFER_DEVICE, A, 4096);
    sg_node_id_t k0 = kern(g, 0, 0, "_Z1kPfPKffm", A, X, 1.0f);
    sg_node_id_t r = node(g, SG_NODE_EVENT_RECORD, 0, 1);
    sg_node_id_t w = node(g, SG_NODE_EVENT_WAIT, 1, 2);
    sg_node_id_t k1 = kern(g, 1, 3, "_Z1kPfPKffm", X, A, 2.0f);
    sg_graph_node(g, r)->u.event = 0;
    sg_graph_node(g, w)->u.event = 0;
    edge(g, k0, r, SG_EDGE_STREAM, SG_NONE);
    edge(g, w, k1, SG_EDGE_STREAM, SG_NONE);
    h = sg_graph_clone(g);
    assert_int_equal(sg_opt_pipeline(h, 90, NULL, &files, &st, why, sizeof why), SG_OK);
    assert_true(changed(g, h, what, sizeof what));
    assert_string_equal(what,
                        "the rewritten graph orders n1 before n2 and the original one does not");
    assert_string_equal(sg_opt_pipeline_names(), "control-deps,defer-dealloc,fuse");
    sg_graph_destroy(h);

    /* A cycle: the pass manager refuses, and says so. */
    edge(g, k1, k0, SG_EDGE_CONTROL, SG_NONE);
    edge(g, r, w, SG_EDGE_CONTROL, SG_NONE);
    h = sg_graph_clone(g);
    assert_int_not_equal(sg_opt_pipeline(h, 90, NULL, &files, &st, why, sizeof why), SG_OK);
    assert_non_null(strstr(why, "the passes (control-deps,defer-dealloc,fuse) failed"));
    sg_rewrite_files_free(&files);
    sg_graph_destroy(h);
    sg_graph_destroy(g);
}

/* In-app fusion through the pipeline: the fuse pass reads the stages' PTX
 * through the optimizer's hook (here the fusion benchmark's PTX, as
 * capture would hold it for an nvcc binary) and leaves the fused kernel's
 * cubin and PTX in files, named by the graph's images: what build.c loads.
 * NVRTC compiles here without a GPU. */
static char *g_chain_ptx;
static size_t g_chain_len;

static int fixture_ptx(void *user, const sg_graph_t *g, const char *kernel, uint32_t image,
                       uint32_t arch, char **ptx, size_t *len, char *why, size_t n)
{
    (void)user, (void)g, (void)image, (void)arch;
    if (strcmp(kernel, "_Z10st_affine1PKfPfm") && strcmp(kernel, "_Z10st_square1PKfPfm")) {
        snprintf(why, n, "not in the fixture");
        return SG_OK;
    }
    *ptx = malloc(g_chain_len + 1);
    if (!*ptx) return SG_ENOMEM;
    memcpy(*ptx, g_chain_ptx, g_chain_len + 1);
    *len = g_chain_len;
    return SG_OK;
}

static void test_pipeline_fuses(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/fuse/fusion_chain.sm90.ptx", SGCAP_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    g_chain_len = (size_t)ftell(f);
    rewind(f);
    g_chain_ptx = malloc(g_chain_len + 1);
    assert_non_null(g_chain_ptx);
    assert_int_equal(fread(g_chain_ptx, 1, g_chain_len, f), g_chain_len);
    g_chain_ptx[g_chain_len] = 0;
    fclose(f);
    /* y = affine1(x), z = square1(y), 1M floats, one stream */
    sg_graph_t *g = new_graph(1, 0);
    const uint64_t n = 1u << 20, base[3] = {0x7f0000000000ull, 0x7f0000400000ull, 0x7f0000800000ull};
    uint32_t img;
    assert_int_equal(sg_graph_add_image(g, SG_IMAGE_PTX, "0123456789abcdef", 1, &img), SG_OK);
    for (int i = 0; i < 3; i++) buffer(g, SG_BUFFER_DEVICE, base[i], n * 4);
    const char *names[2] = {"_Z10st_affine1PKfPfm", "_Z10st_square1PKfPfm"};
    sg_node_id_t k[2];
    for (int i = 0; i < 2; i++) {
        k[i] = node(g, SG_NODE_KERNEL, 0, (uint64_t)i);
        assert_int_equal(sg_node_set_kernel_name(g, k[i], names[i]), SG_OK);
        uint8_t bytes[24];
        uint64_t in = base[i], out = base[i + 1];
        memcpy(bytes, &in, 8), memcpy(bytes + 8, &out, 8), memcpy(bytes + 16, &n, 8);
        uint32_t offs[3] = {0, 8, 16}, sizes[3] = {8, 8, 8};
        assert_int_equal(sg_node_set_kernel_params(g, k[i], 3, offs, sizes, bytes, 24), SG_OK);
        sg_kernel_t *kk = &sg_graph_node(g, k[i])->u.kernel;
        kk->image = img;
        kk->grid[0] = (uint32_t)(n / 256), kk->block[0] = 256;
        kk->grid[1] = kk->grid[2] = kk->block[1] = kk->block[2] = 1;
        assert_int_equal(sg_node_add_access(g, k[i], (uint32_t)i, 0, n * 4, SG_ACCESS_READ), SG_OK);
        assert_int_equal(sg_node_add_access(g, k[i], (uint32_t)i + 1, 0, n * 4, SG_ACCESS_UNKNOWN),
                         SG_OK);
    }
    edge(g, k[0], k[1], SG_EDGE_STREAM, SG_NONE);
    sg_graph_t *h = sg_graph_clone(g);
    sg_rewrite_files_t files = {0};
    sg_opt_rewrite_stats_t st;
    char why[300] = "", what[200] = "";
    int rc = sg_opt_pipeline(h, 90, fixture_ptx, &files, &st, why, sizeof why);
    if (rc) fail_msg("%s", why);
    if (files.n == 0) {
        print_message("NVRTC not available here: nothing fused\n");
    } else {
        assert_int_equal(st.fused_chains, 1);
        assert_int_equal(files.n, 2); /* the cubin and the PTX */
        assert_int_equal(sg_graph_node_count(h), 1);
        const sg_fusion_t *rec = sg_graph_fusion(h, k[0]);
        assert_non_null(rec);
        assert_int_equal(rec->n_stages, 2);
        const sg_image_t *ci = sg_graph_image(h, rec->cubin_image);
        bool named = false;
        for (size_t i = 0; i < files.n; i++)
            named |= !strcmp(files.files[i].relpath, ci->file) &&
                     !memcmp(files.files[i].data, "\x7f" "ELF", 4);
        assert_true(named);
        assert_true(changed(g, h, what, sizeof what));
        assert_false(sg_opt_fusion_blind(g, h, why, sizeof why));
        assert_false(st.fuse_skipped);
        assert_int_equal(st.passes, 3);
    }
    sg_rewrite_files_free(&files);
    sg_graph_destroy(h);
    /* no fusion time left in the process: the same graph gets the ordering
     * passes only, nothing compiled, the chain kept */
    sg_opt_pipeline_set_fuse_budget(0);
    h = sg_graph_clone(g);
    memset(&files, 0, sizeof files);
    rc = sg_opt_pipeline(h, 90, fixture_ptx, &files, &st, why, sizeof why);
    sg_opt_pipeline_set_fuse_budget(SG_OPT_FUSE_MS);
    if (rc) fail_msg("%s", why);
    assert_true(st.fuse_skipped);
    assert_int_equal(st.passes, 2);
    assert_int_equal(st.fused_chains, 0);
    assert_int_equal(files.n, 0);
    assert_int_equal(sg_graph_node_count(h), 2);
    sg_rewrite_files_free(&files);
    sg_graph_destroy(h);
    sg_graph_destroy(g);
    free(g_chain_ptx);
}

/* ---- shadow set and plant -------------------------------------------------------------- */

static void test_shadow_set_and_plant(void **state)
{
    (void)state;
    sg_graph_t *g = fork_join();
    uint32_t t = buffer(g, SG_BUFFER_GRAPH_ALLOC, T, 4096);
    uint32_t h = buffer(g, SG_BUFFER_HOST_PAGEABLE, H, 16);
    uint32_t p = buffer(g, SG_BUFFER_HOST_PINNED, H + 4096, 64);
    buffer(g, SG_BUFFER_DEVICE, H + 8192, 0);
    sg_opt_span_t *s = NULL;
    uint32_t n = 0;
    uint64_t bytes = 0;
    assert_int_equal(sg_opt_shadow_set(g, &s, &n, &bytes), SG_OK);
    assert_int_equal(n, 5); /* x, a, b, the two host buffers; not the graph's own, not empty */
    assert_int_equal(bytes, 3 * 4096 + 16 + 64);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_not_equal(s[i].buffer, t);
        assert_int_equal(s[i].addr, g->buffers[s[i].buffer].address);
        assert_int_equal(s[i].host, s[i].buffer == h || s[i].buffer == p);
        assert_int_equal(s[i].pageable, s[i].buffer == h);
    }
    free(s);
    /* k0 may write a (UNKNOWN counts as a write): a device buffer */
    assert_int_equal(sg_opt_plant_target(g), 1);
    sg_graph_destroy(g);

    /* Only reads, or only host memory written: nothing to plant in. */
    g = new_graph(1, 0);
    buffer(g, SG_BUFFER_DEVICE, X, 4096);
    buffer(g, SG_BUFFER_HOST_PINNED, H, 4096);
    sg_node_id_t k = kern(g, 0, 0, "_Z1kPfPKffm", 0, X, 1.0f);
    assert_int_equal(sg_node_add_access(g, k, 1, 0, 4096, SG_ACCESS_WRITE), SG_OK);
    assert_int_equal(sg_opt_plant_target(g), SG_NONE);
    sg_graph_destroy(g);
}

/* ---- exec updates ------------------------------------------------------------------------ */

static void test_kernel_args(void **state)
{
    (void)state;
    char why[300];
    sg_graph_t *g = fork_join();
    const sg_kernel_t *k = &sg_graph_node(g, 0)->u.kernel; /* y = A, x = X */
    uint8_t b[32];
    memcpy(b, k->param_bytes, 32);
    assert_true(sg_opt_kernel_args_ok(g, k, b, 32, why, sizeof why));
    /* a new scalar, and a pointer to another place in the same buffer */
    float m = 7.0f;
    memcpy(b + 16, &m, 4);
    uint64_t inside = A + 1024;
    memcpy(b, &inside, 8);
    assert_true(sg_opt_kernel_args_ok(g, k, b, 32, why, sizeof why));
    /* a pointer to another recorded buffer */
    uint64_t other = B;
    memcpy(b + 8, &other, 8);
    assert_false(sg_opt_kernel_args_ok(g, k, b, 32, why, sizeof why));
    assert_string_equal(why, "parameter 1 (byte 8) moves from b0 (0x100000) to b2 (0x300000)");
    /* a pointer to memory the graph never touched */
    memcpy(b + 8, k->param_bytes + 8, 8);
    uint64_t away = 0x900000;
    memcpy(b, &away, 8);
    assert_false(sg_opt_kernel_args_ok(g, k, b, 32, why, sizeof why));
    assert_non_null(strstr(why, "to memory the optimized graph was not checked with (0x900000)"));
    /* a plain value that now points into a buffer */
    memcpy(b, k->param_bytes, 8);
    uint64_t now = X + 8;
    memcpy(b + 24, &now, 8);
    assert_false(sg_opt_kernel_args_ok(g, k, b, 32, why, sizeof why));
    assert_non_null(strstr(why, "parameter 3 (byte 24) moves from memory the graph did not touch"));
    /* a buffer of another size */
    assert_false(sg_opt_kernel_args_ok(g, k, b, 24, why, sizeof why));
    assert_string_equal(why, "the argument buffer changes size (32 -> 24 bytes)");
    /* addresses of copies and sets */
    assert_true(sg_opt_address_ok(g, A, A + 100, "dst", why, sizeof why));
    assert_false(sg_opt_address_ok(g, A, B, "the memset's destination", why, sizeof why));
    assert_string_equal(why, "the memset's destination moves from b1 (0x200000) to b2 (0x300000)");
    sg_graph_destroy(g);
}

static void test_diff(void **state)
{
    (void)state;
    char why[300] = "";
    bool same = false;
    sg_node_id_t *ch = NULL;
    uint32_t n = 0;
    sg_graph_t *g = fork_join();
    sg_graph_t *h = sg_graph_clone(g);
    float m = 9.0f;
    memcpy(sg_graph_node(h, 2)->u.kernel.param_bytes + 16, &m, 4);
    /* a parallel edge of another sgcap kind is the same dependency to CUDA */
    edge(h, 0, 1, SG_EDGE_CONTROL, SG_NONE);
    assert_int_equal(sg_opt_diff(g, h, &same, &ch, &n, why, sizeof why), SG_OK);
    assert_true(same);
    assert_int_equal(n, 1);
    assert_int_equal(ch[0], 2);
    free(ch);
    sg_graph_destroy(h);

    h = sg_graph_clone(g);
    edge(h, 1, 2, SG_EDGE_CONTROL, SG_NONE);
    assert_int_equal(sg_opt_diff(g, h, &same, &ch, &n, why, sizeof why), SG_OK);
    assert_false(same);
    assert_string_equal(why, "the edge n1 -> n2 is new");
    sg_graph_destroy(h);

    h = sg_graph_clone(g);
    node(h, SG_NODE_EMPTY, 0, 9);
    assert_int_equal(sg_opt_diff(g, h, &same, &ch, &n, why, sizeof why), SG_OK);
    assert_false(same);
    assert_string_equal(why, "the graph has 5 nodes instead of 4");
    sg_graph_destroy(h);
    sg_graph_destroy(g);
}

/* ---- configuration ------------------------------------------------------------------------ */

static void test_config(void **state)
{
    (void)state;
    char warn[300];
    sg_opt_config_t c;
    unsetenv("SGCAP_OPTIMIZE_CHECK");
    unsetenv("SGCAP_SHADOW_MAX_BYTES");
    unsetenv("SGCAP_OPTIMIZE_FORCE");
    unsetenv("SGCAP_OPTIMIZE_TEST_PLANT");
    sg_opt_config_read(&c, warn, sizeof warn);
    assert_int_equal(c.check_launch, 1);
    assert_int_equal(c.shadow_max_bytes, 1ull << 30);
    assert_false(c.force);
    assert_false(c.plant);
    assert_string_equal(warn, "");
    setenv("SGCAP_OPTIMIZE_CHECK", "all", 1);
    setenv("SGCAP_SHADOW_MAX_BYTES", "0x1000", 1);
    setenv("SGCAP_OPTIMIZE_TEST_PLANT", "1", 1);
    sg_opt_config_read(&c, warn, sizeof warn);
    assert_int_equal(c.check_launch, 0);
    assert_int_equal(c.shadow_max_bytes, 4096);
    assert_true(c.plant);
    assert_true(c.force); /* a plant needs an optimized graph */
    setenv("SGCAP_OPTIMIZE_CHECK", "0", 1);
    setenv("SGCAP_SHADOW_MAX_BYTES", "lots", 1);
    sg_opt_config_read(&c, warn, sizeof warn);
    assert_int_equal(c.check_launch, 1);
    assert_int_equal(c.shadow_max_bytes, 1ull << 30);
    assert_string_equal(warn, "SGCAP_OPTIMIZE_CHECK=0 not understood (using 1); "
                              "SGCAP_SHADOW_MAX_BYTES=lots not understood (using 1 GiB)");
    setenv("SGCAP_OPTIMIZE_CHECK", "5", 1);
    sg_opt_config_read(&c, warn, sizeof warn);
    assert_int_equal(c.check_launch, 5);
    unsetenv("SGCAP_OPTIMIZE_CHECK");
    unsetenv("SGCAP_SHADOW_MAX_BYTES");
    unsetenv("SGCAP_OPTIMIZE_TEST_PLANT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),    cmocka_unit_test(test_changed),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_pipeline_fuses),    cmocka_unit_test(test_shadow_set_and_plant),
        cmocka_unit_test(test_kernel_args), cmocka_unit_test(test_diff),
        cmocka_unit_test(test_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
