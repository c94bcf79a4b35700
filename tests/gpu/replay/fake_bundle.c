/* fake_bundle.c: writes the replay tests' fork/join bundle without a GPU,
 * for CPU CI. The buffers are host memory mapped at made-up device-like
 * addresses (several per 2 MiB granule, so regions merge), the kernels run
 * through emulate.h, and the model is the same one replay_make_bundle
 * records on a GPU (same streams, events, nodes, edges, argument layouts).
 * `sgcap replay` then runs it against fake_cuda.c's pretend driver.
 *
 *   fake_bundle OUT.sgraph [--alloc] [--corrupt]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <sys/mman.h>

#include "emulate.h"
#include "graph/bundle.h"
#include "graph/graph.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define N 4096u
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) {                                                                                 \
            fprintf(stderr, "fake_bundle: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
                    sg_strerror(rc_));                                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct {
    sg_graph_t *g;
    sg_node_id_t last[3];
    uint64_t seq;
} rec_t;

static sg_node_id_t node(rec_t *r, uint32_t s, sg_node_type_t t, sg_node_id_t from_event,
                         uint32_t event, sg_node_id_t from_event2, uint32_t event2)
{
    sg_node_id_t id;
    CHECK(sg_graph_add_node(r->g, t, s, r->seq++, &id));
    if (r->last[s] != SG_NONE)
        CHECK(sg_graph_add_edge(r->g, r->last[s], id, SG_EDGE_STREAM, SG_NONE, NULL));
    if (from_event != SG_NONE)
        CHECK(sg_graph_add_edge(r->g, from_event, id, SG_EDGE_EVENT, event, NULL));
    if (from_event2 != SG_NONE)
        CHECK(sg_graph_add_edge(r->g, from_event2, id, SG_EDGE_EVENT, event2, NULL));
    r->last[s] = id;
    return id;
}

/* A kernel node with its arguments, and the kernel run on the CPU now. */
static sg_node_id_t kernel(rec_t *r, uint32_t s, const char *name, const uint8_t *args,
                           sg_node_id_t from_event, uint32_t event, sg_node_id_t from_event2,
                           uint32_t event2)
{
    const emu_kernel_t *k = emu_find(name);
    sg_node_id_t id = node(r, s, SG_NODE_KERNEL, from_event, event, from_event2, event2);
    CHECK(sg_node_set_kernel_name(r->g, id, name));
    CHECK(sg_node_set_kernel_params(r->g, id, k->n_params, k->offsets, k->sizes, args,
                                    emu_params_size(k)));
    sg_kernel_t *kk = &sg_graph_node(r->g, id)->u.kernel;
    kk->image = 0;
    kk->grid[0] = 16;
    kk->block[0] = 256;
    kk->grid[1] = kk->grid[2] = kk->block[1] = kk->block[2] = 1;
    k->run(args);
    return id;
}

static void put(uint8_t *a, uint32_t off, const void *v, size_t n)
{
    memcpy(a + off, v, n);
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    bool alloc = false, corrupt = false, host = false, host_node = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--alloc"))
            alloc = true;
        else if (!strcmp(argv[i], "--corrupt"))
            corrupt = true;
        else if (!strcmp(argv[i], "--host"))
            host = true;
        else if (!strcmp(argv[i], "--host-node"))
            host = host_node = true;
        else
            out = argv[i];
    }
    if (!out) {
        fprintf(stderr, "usage: fake_bundle OUT.sgraph [--alloc] [--corrupt] [--host] "
                        "[--host-node]\n");
        return 2;
    }
    /* eight buffers, 256 KiB apart, in one 4 MiB span at a device-like address */
    enum { X, A, B, C, C2, OUT, ACC, BIAS, NB };
    const size_t stride = 256u << 10, span = 4u << 20;
    uint8_t *base = MAP_FAILED;
    for (uint64_t try_at = 0x7e5500000000ull; base == MAP_FAILED && try_at < 0x7e6000000000ull;
         try_at += span)
        base = mmap((void *)(uintptr_t)try_at, span, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (base == MAP_FAILED) {
        perror("fake_bundle: mmap");
        return 1;
    }
    float *buf[NB];
    size_t bytes[NB];
    sg_graph_t *g = sg_graph_create();
    uint32_t id;
    for (int i = 0; i < NB; i++) {
        buf[i] = (float *)(base + 64 + i * stride); /* not granule-aligned, like cuMemAlloc's */
        bytes[i] = (i == BIAS ? 256 : N) * sizeof(float);
        CHECK(sg_graph_add_buffer(g, SG_BUFFER_DEVICE, (uintptr_t)buf[i], bytes[i], &id));
    }
    uint64_t s = 12345;
    for (unsigned i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        buf[X][i] = (float)((int32_t)(s >> 33) % 2000000) / 1000000.0f;
        buf[ACC][i] = buf[X][i] * 0.5f - 0.25f;
    }
    for (int i = 0; i < 256; i++)
        buf[BIAS][i] = (float)i / 256.0f - 0.5f;
    for (int i = A; i <= OUT; i++)
        memset(buf[i], 0xab, bytes[i]);
    uint8_t *before[NB], *after[NB];
    for (int i = 0; i < NB; i++) {
        before[i] = malloc(bytes[i]);
        memcpy(before[i], buf[i], bytes[i]);
    }

    for (int i = 0; i < 3; i++)
        CHECK(sg_graph_add_stream(g, NULL, 0x100 + i, &id));
    for (int i = 0; i < 3; i++)
        CHECK(sg_graph_add_event(g, NULL, 0x200 + i, &id));
    static const uint8_t fatbin[] = "sgcap fake fatbin: fake_cuda.c runs emulate.h";
    char hash[17], file[64];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)XXH64(fatbin, sizeof fatbin, 0));
    snprintf(file, sizeof file, "code/%s.fatbin", hash);
    CHECK(sg_graph_add_image(g, SG_IMAGE_FATBIN, hash, sizeof fatbin, &id));
    g->images[0].file = strdup(file);
    g->device.name = strdup("sgcap fake GPU");
    g->device.cc_major = 9;
    g->device.driver_version = 13000;
    g->program = strdup("fake_bundle");

    rec_t r = {g, {SG_NONE, SG_NONE, SG_NONE}, 0};
    uint64_t n = N;
    uint8_t a[64];
    float m1 = 1.5f, a1 = 0.25f, two = 2.0f, one = 1.0f;
    int iters = 4;
    struct {
        float ca, cb;
        const float *bias;
    } cb = {0.5f, 0.25f, buf[BIAS]}, cc = {0.25f, -0.5f, buf[BIAS]};

    /* s0 */
    sg_node_id_t ms = node(&r, 0, SG_NODE_MEMSET, SG_NONE, 0, SG_NONE, 0);
    sg_graph_node(g, ms)->u.memset = (sg_memset_t){(uintptr_t)buf[OUT], 0, 0, 4, N, 1};
    memset(buf[OUT], 0, bytes[OUT]);
    memset(a, 0, sizeof a);
    put(a, 0, &buf[A], 8), put(a, 8, &buf[X], 8), put(a, 16, &m1, 4), put(a, 20, &a1, 4),
        put(a, 24, &n, 8);
    sg_node_id_t fork = kernel(&r, 0, "k_axpb", a, SG_NONE, 0, SG_NONE, 0);
    /* s1 */
    memset(a, 0, sizeof a);
    put(a, 0, &buf[B], 8), put(a, 8, &buf[A], 8), put(a, 16, &cb, 16), put(a, 32, &n, 8),
        put(a, 40, &iters, 4);
    kernel(&r, 1, "_ZN3sgt6k_polyILi3EEEvPfPKf6Coeffsyi", a, fork, 0, SG_NONE, 0);
    memset(a, 0, sizeof a);
    put(a, 0, &buf[B], 8), put(a, 8, &n, 8);
    sg_node_id_t j1 = kernel(&r, 1, "k_square", a, SG_NONE, 0, SG_NONE, 0);
    /* s2 */
    memset(a, 0, sizeof a);
    put(a, 0, &buf[C], 8), put(a, 8, &buf[A], 8), put(a, 16, &cc, 16), put(a, 32, &n, 8),
        put(a, 40, &iters, 4);
    kernel(&r, 2, "_ZN3sgt6k_polyILi3EEEvPfPKf6Coeffsyi", a, fork, 0, SG_NONE, 0);
    if (alloc) {
        float *tmp = aligned_alloc(256, bytes[C]);
        uint32_t tb;
        CHECK(sg_graph_add_buffer(g, SG_BUFFER_GRAPH_ALLOC, (uintptr_t)tmp, bytes[C], &tb));
        sg_node_id_t al = node(&r, 2, SG_NODE_MEM_ALLOC, SG_NONE, 0, SG_NONE, 0);
        sg_graph_node(g, al)->u.mem = (sg_memnode_t){tb, (uintptr_t)tmp, bytes[C]};
        g->buffers[tb].alloc_node = al;
        memset(a, 0, sizeof a);
        put(a, 0, &tmp, 8), put(a, 8, &buf[C], 8), put(a, 16, &two, 4), put(a, 20, &one, 4),
            put(a, 24, &n, 8);
        kernel(&r, 2, "k_axpb", a, SG_NONE, 0, SG_NONE, 0);
        memset(a, 0, sizeof a);
        put(a, 0, &buf[C], 8), put(a, 8, &tmp, 8), put(a, 16, &n, 8);
        kernel(&r, 2, "k_copy", a, SG_NONE, 0, SG_NONE, 0);
        sg_node_id_t fr = node(&r, 2, SG_NODE_MEM_FREE, SG_NONE, 0, SG_NONE, 0);
        sg_graph_node(g, fr)->u.mem = (sg_memnode_t){tb, (uintptr_t)tmp, 0};
        free(tmp);
    }
    sg_node_id_t j2 = node(&r, 2, SG_NODE_MEMCPY, SG_NONE, 0, SG_NONE, 0);
    sg_graph_node(g, j2)->u.memcpy =
        (sg_memcpy_t){(uintptr_t)buf[C2], (uintptr_t)buf[C], 0, 0, bytes[C], 1, 1, SG_COPY_D2D};
    memcpy(buf[C2], buf[C], bytes[C]);
    /* s0 after the joins */
    memset(a, 0, sizeof a);
    put(a, 0, &buf[OUT], 8), put(a, 8, &buf[B], 8), put(a, 16, &buf[C2], 8), put(a, 24, &n, 8);
    kernel(&r, 0, "k_combine", a, j1, 1, j2, 2);
    memset(a, 0, sizeof a);
    put(a, 0, &buf[ACC], 8), put(a, 8, &buf[OUT], 8), put(a, 16, &n, 8);
    kernel(&r, 0, "k_accum", a, SG_NONE, 0, SG_NONE, 0);
    /* --host: the result's first 16 floats copied into pageable host memory
     * (a host_pageable buffer); --host-node: after a host callback */
    static uint8_t hout[64];
    uint32_t hb = SG_NONE;
    uint8_t hbefore[64], hafter[64];
    if (host) {
        memset(hout, 0xcd, sizeof hout);
        memcpy(hbefore, hout, sizeof hout);
        CHECK(sg_graph_add_buffer(g, SG_BUFFER_HOST_PAGEABLE, (uintptr_t)hout, sizeof hout, &hb));
        if (host_node) {
            sg_node_id_t h = node(&r, 0, SG_NODE_HOST, SG_NONE, 0, SG_NONE, 0);
            sg_graph_node(g, h)->u.host = (sg_host_t){0x401000, 0x402000};
        }
        sg_node_id_t cp = node(&r, 0, SG_NODE_MEMCPY, SG_NONE, 0, SG_NONE, 0);
        sg_graph_node(g, cp)->u.memcpy =
            (sg_memcpy_t){(uintptr_t)hout, (uintptr_t)buf[ACC], 0, 0, sizeof hout, 1, 1, SG_COPY_D2H};
        sg_node_add_access(g, cp, hb, 0, sizeof hout, SG_ACCESS_WRITE);
        sg_node_add_access(g, cp, ACC, 0, sizeof hout, SG_ACCESS_READ);
        memcpy(hout, buf[ACC], sizeof hout);
        memcpy(hafter, hout, sizeof hout);
        g->buffers[hb].before_file = strdup("data/b8.before.zst");
        g->buffers[hb].after_file = strdup("data/b8.after.zst");
        g->buffers[hb].snapshot_bytes = sizeof hout;
    }

    sg_bundle_blob_t blobs[3 + 2 * NB];
    memset(blobs, 0, sizeof blobs);
    blobs[0] = (sg_bundle_blob_t){
        .relpath = g->images[0].file, .data = fatbin, .size = sizeof fatbin, .compress = false};
    for (int i = 0; i < NB; i++) {
        after[i] = malloc(bytes[i]);
        memcpy(after[i], buf[i], bytes[i]);
        if (corrupt && i == OUT) after[i][(N / 3) * 4 + 1] ^= 0x04;
        char path[64];
        snprintf(path, sizeof path, "data/b%d.before.zst", i);
        g->buffers[i].before_file = strdup(path);
        snprintf(path, sizeof path, "data/b%d.after.zst", i);
        g->buffers[i].after_file = strdup(path);
        g->buffers[i].snapshot_bytes = bytes[i];
        blobs[1 + 2 * i] = (sg_bundle_blob_t){.relpath = g->buffers[i].before_file,
                                              .data = before[i],
                                              .size = bytes[i],
                                              .compress = true};
        blobs[2 + 2 * i] = (sg_bundle_blob_t){.relpath = g->buffers[i].after_file,
                                              .data = after[i],
                                              .size = bytes[i],
                                              .compress = true};
    }
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    size_t nblobs = 1 + 2 * NB;
    if (host) {
        blobs[nblobs++] = (sg_bundle_blob_t){
            .relpath = g->buffers[hb].before_file, .data = hbefore, .size = 64, .compress = true};
        blobs[nblobs++] = (sg_bundle_blob_t){
            .relpath = g->buffers[hb].after_file, .data = hafter, .size = 64, .compress = true};
    }
    if (sg_bundle_write(g, out, blobs, nblobs, SG_BUNDLE_OVERWRITE, &diag)) {
        char msg[1024];
        fprintf(stderr, "fake_bundle: %s\n", sg_diag_format(&diag, msg, sizeof msg));
        return 1;
    }
    printf("fake_bundle: wrote %s: %u nodes, %u edges, buffers from %p\n", out,
           sg_graph_node_count(g), sg_graph_edge_count(g), (void *)buf[0]);
    for (int i = 0; i < NB; i++) {
        free(before[i]);
        free(after[i]);
    }
    sg_graph_destroy(g);
    munmap(base, span);
    return 0;
}
