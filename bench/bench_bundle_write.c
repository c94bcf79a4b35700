/* bench_bundle_write: what writing a bundle costs the captured program, on
 * the CPU: the dedup digest and sg_bundle_write (graph.json, one 1 MiB code
 * image, fsync'ed and renamed) for capture-shaped graphs of 1k and 10k
 * kernel nodes over 4 streams, and a snapshot rewrite with 64 MiB of buffer
 * contents compressed with zstd. Prints per-phase times and throughputs.
 * usage: bench_bundle_write [DIR]   (default: a directory under /tmp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/digest.h"
#include "graph/bundle.h"
#include "graph/graph.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t dir_bytes(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "du -sb '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    unsigned long long n = 0;
    if (p) {
        if (fscanf(p, "%llu", &n) != 1) n = 0;
        pclose(p);
    }
    return n;
}

/* A graph shaped like a capture: kernels round-robin over 4 streams, an
 * event edge every 16 nodes, 16 buffers, 5 parameters each. */
static sg_graph_t *make(uint32_t nodes)
{
    sg_graph_t *g = sg_graph_create();
    for (int s = 0; s < 4; s++)
        sg_graph_add_stream(g, NULL, 0x1000 + (uint64_t)s, NULL);
    for (int e = 0; e < 4; e++)
        sg_graph_add_event(g, NULL, 0x2000 + (uint64_t)e, NULL);
    for (int b = 0; b < 16; b++)
        sg_graph_add_buffer(g, SG_BUFFER_DEVICE, 0x7f0000000000ull + ((uint64_t)b << 24), 1 << 24,
                            NULL);
    uint32_t img;
    sg_graph_add_image(g, SG_IMAGE_FATBIN, "0123456789abcdef", 1 << 20, &img);
    g->images[img].file = strdup("code/0123456789abcdef.fatbin");
    sg_node_id_t last[4] = {SG_NONE, SG_NONE, SG_NONE, SG_NONE};
    uint32_t offs[5] = {0, 8, 16, 20, 24}, sizes[5] = {8, 8, 4, 4, 8};
    for (uint32_t k = 0; k < nodes; k++) {
        uint32_t s = k % 4;
        sg_node_id_t id;
        sg_graph_add_node(g, SG_NODE_KERNEL, s, k, &id);
        sg_node_set_kernel_name(g, id, "_Z6k_axpbPfPKfffm");
        uint8_t bytes[32];
        uint64_t a = 0x7f0000000000ull + ((uint64_t)(k % 16) << 24), b = a + (1 << 24);
        memcpy(bytes, &a, 8);
        memcpy(bytes + 8, &b, 8);
        memset(bytes + 16, (int)k, 16);
        sg_node_set_kernel_params(g, id, 5, offs, sizes, bytes, 32);
        sg_node_t *n = sg_graph_node(g, id);
        n->u.kernel.image = img;
        n->u.kernel.grid[0] = 4096, n->u.kernel.grid[1] = n->u.kernel.grid[2] = 1;
        n->u.kernel.block[0] = 256, n->u.kernel.block[1] = n->u.kernel.block[2] = 1;
        sg_node_add_access(g, id, k % 16, 0, 1 << 24, SG_ACCESS_UNKNOWN);
        sg_node_add_access(g, id, (k + 1) % 16, 0, 1 << 24, SG_ACCESS_UNKNOWN);
        if (last[s] != SG_NONE) sg_graph_add_edge(g, last[s], id, SG_EDGE_STREAM, SG_NONE, NULL);
        if (k % 16 == 15 && last[(s + 3) % 4] != SG_NONE)
            sg_graph_add_edge(g, last[(s + 3) % 4], id, SG_EDGE_EVENT, s, NULL);
        last[s] = id;
    }
    return g;
}

int main(int argc, char **argv)
{
    char dir[512];
    if (argc > 1)
        snprintf(dir, sizeof dir, "%s", argv[1]);
    else
        snprintf(dir, sizeof dir, "/tmp/bench_bundle_write.%d", (int)getpid());
    mkdir(dir, 0755);
    size_t code_size = 1 << 20;
    uint8_t *code = malloc(code_size);
    for (size_t i = 0; i < code_size; i++)
        code[i] = (uint8_t)(i * 131 + (i >> 9));
    uint32_t sizes[] = {1000, 10000};
    for (int t = 0; t < 2; t++) {
        uint32_t n = sizes[t];
        sg_graph_t *g = make(n);
        double t0 = now();
        uint64_t d = 0;
        for (int r = 0; r < 10; r++)
            d ^= sg_graph_digest(g);
        double t1 = now();
        char path[600];
        snprintf(path, sizeof path, "%s/bench.%u.sgraph", dir, n);
        sg_bundle_blob_t blob = {.relpath = "code/0123456789abcdef.fatbin",
                                 .data = code,
                                 .size = code_size,
                                 .compress = false};
        sg_diag_t diag;
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            double w0 = now();
            int rc = sg_bundle_write(g, path, &blob, 1, SG_BUNDLE_OVERWRITE, &diag);
            double w1 = now();
            if (rc) {
                fprintf(stderr, "bench_bundle_write: %s: %s\n", path, diag.message);
                return 1;
            }
            if (w1 - w0 < best) best = w1 - w0;
        }
        uint64_t bytes = dir_bytes(path);
        printf("bench_bundle_write: %5u nodes: digest %.0f ns/node (%016llx); write %.2f ms "
               "(%.0f ns/node, %.1f MB/s of %llu bytes, best of 5, fsync'ed)\n",
               n, 1e9 * (t1 - t0) / 10 / n, (unsigned long long)d, 1e3 * best, 1e9 * best / n,
               bytes / best / 1e6, (unsigned long long)bytes);
        if (t == 1) {
            /* A snapshot rewrite: 4 buffers of 16 MiB before and after. */
            size_t bsz = 16u << 20;
            sg_bundle_blob_t blobs[9];
            blobs[0] = blob;
            char names[8][48];
            float *data[8];
            for (int i = 0; i < 8; i++) {
                data[i] = malloc(bsz);
                for (size_t k = 0; k < bsz / 4; k++)
                    data[i][k] = (float)((k * 2654435761u + (unsigned)i) % 1000003) * 0.001f;
                snprintf(names[i], sizeof names[i], "data/b%d.%s.zst", i / 2,
                         i % 2 ? "after" : "before");
                blobs[i + 1] = (sg_bundle_blob_t){
                    .relpath = names[i], .data = data[i], .size = bsz, .compress = true};
            }
            double s0 = now();
            int rc = sg_bundle_write(g, path, blobs, 9, SG_BUNDLE_OVERWRITE, &diag);
            double s1 = now();
            if (rc) {
                fprintf(stderr, "bench_bundle_write: snapshot: %s\n", diag.message);
                return 1;
            }
            printf("bench_bundle_write: snapshot rewrite: %.0f ms for %zu MiB of buffers "
                   "(%.0f MB/s uncompressed in, %llu bytes on disk)\n",
                   1e3 * (s1 - s0), 8 * bsz >> 20, 8.0 * bsz / (s1 - s0) / 1e6,
                   (unsigned long long)dir_bytes(path));
            for (int i = 0; i < 8; i++)
                free(data[i]);
        }
        sg_graph_destroy(g);
    }
    free(code);
    if (argc <= 1) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) return 1;
    }
    return 0;
}
