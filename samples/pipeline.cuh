/* pipeline.cuh: the body of pipeline3.cu and pipeline4.cu, a PIPELINE_STAGES
 * stage pipeline with stage i on stream s<i> and PIPELINE_CHUNKS chunks
 * flowing through it. Stage i of chunk c waits for stage i-1 of chunk c (one
 * event per stage and chunk), so the stages of different chunks overlap. The
 * origin stream runs stage 0 and, after waiting for the last stage of the last
 * chunk, copies the result out with a memcpy node. */
#include "common.h"

#ifndef PIPELINE_STAGES
#error "define PIPELINE_STAGES before including pipeline.cuh"
#endif
#define PIPELINE_CHUNKS 4

enum { NSTREAMS = PIPELINE_STAGES };
/* Event (i, c), recorded after stage i of chunk c, for i < STAGES-1; then one
 * event for the join of the last stage back into s0. */
enum { E_DONE = (PIPELINE_STAGES - 1) * PIPELINE_CHUNKS, NEVENTS };

typedef struct {
    size_t n;
    uint32_t *buf[PIPELINE_STAGES + 1]; /* buf[0] is the input, buf[i+1] stage i's output */
    uint32_t *out;
} bufs_t;

__host__ __device__ static inline uint32_t stage_op(uint32_t x, uint32_t stage)
{
    return (x ^ (0x9E3779B9u * (stage + 1))) * (2 * stage + 3) + stage;
}

__global__ void k_stage(uint32_t *y, const uint32_t *x, uint32_t stage, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = stage_op(x[i], stage);
}

static void issue(cap_t *c, const bufs_t *b)
{
    const unsigned block = 256;
    cap_begin(c, 0);
    for (int ch = 0; ch < PIPELINE_CHUNKS; ch++) {
        size_t lo = b->n * (size_t)ch / PIPELINE_CHUNKS,
               hi = b->n * (size_t)(ch + 1) / PIPELINE_CHUNKS;
        size_t len = hi - lo;
        unsigned grid = blocks_for(len, block);
        for (int st = 0; st < PIPELINE_STAGES; st++) {
            if (st > 0) cap_wait(c, st, (st - 1) * PIPELINE_CHUNKS + ch);
            /* Offsets on NULL in a dry run are never used; skip them so the
             * arithmetic stays defined. */
            const uint32_t *in = b->buf[st] ? b->buf[st] + lo : NULL;
            uint32_t *outp = b->buf[st + 1] ? b->buf[st + 1] + lo : NULL;
            CAP_LAUNCH(c, st, k_stage, grid, block, outp, in, (uint32_t)st, len);
            if (st < PIPELINE_STAGES - 1) cap_record(c, st * PIPELINE_CHUNKS + ch, st);
        }
    }
    cap_record(c, E_DONE, PIPELINE_STAGES - 1);
    cap_wait(c, 0, E_DONE);
    cap_memcpy(c, 0, b->out, b->buf[PIPELINE_STAGES], b->n * sizeof(uint32_t));
    cap_end(c, 0);
}

static const char ABOUT[] =
    "pipeline" PIPELINE_NAME
    ": stage i of the pipeline runs on stream s<i>; the input is cut into\n"
    "4 chunks and stage i of chunk c waits (one event per stage and chunk) for\n"
    "stage i-1 of chunk c, so chunks overlap across stages. s0 runs stage 0, then\n"
    "waits for the last stage of the last chunk and copies the result out (memcpy\n"
    "node). Stage i: y = (x ^ 0x9E3779B9*(i+1)) * (2i+3) + i.\n"
    "Checks: the captured graph matches --expect; every stage's output and the\n"
    "copy equal the CPU result after every replay.\n";

int main(int argc, char **argv)
{
    sample_opts_t o = sample_defaults(ABOUT);
    sample_parse(&o, argc, argv);
    if (o.n < PIPELINE_CHUNKS) {
        fprintf(stderr, "%s: --n must be at least %d\n", o.prog, PIPELINE_CHUNKS);
        return 2;
    }
    cap_t *c = cap_create(&o, NSTREAMS, NEVENTS);
    bufs_t b;
    memset(&b, 0, sizeof b);
    b.n = o.n;
    if (o.expect) {
        issue(c, &b);
        cap_destroy(c);
        return 0;
    }
    const size_t bytes = o.n * sizeof(uint32_t);
    uint32_t *want[PIPELINE_STAGES + 1];
    uint32_t *got = (uint32_t *)host_alloc(bytes);
    for (int st = 0; st <= PIPELINE_STAGES; st++) {
        want[st] = (uint32_t *)host_alloc(bytes);
        b.buf[st] = (uint32_t *)dev_alloc(bytes);
    }
    fill_u32(want[0], o.n, 3);
    for (int st = 0; st < PIPELINE_STAGES; st++)
        for (size_t i = 0; i < o.n; i++)
            want[st + 1][i] = stage_op(want[st][i], (uint32_t)st);
    b.out = (uint32_t *)dev_alloc(bytes);
    dev_upload(b.buf[0], want[0], bytes);

    issue(c, &b);
    cudaGraphExec_t exec = graph_instantiate(c->graph);
    size_t bad = 0;
    for (int r = 0; r < o.replays && !bad; r++) {
        for (int st = 1; st <= PIPELINE_STAGES; st++)
            dev_poison(b.buf[st], bytes);
        dev_poison(b.out, bytes);
        graph_run(exec, c->stream[0]);
        for (int st = 1; st <= PIPELINE_STAGES; st++) {
            char what[32];
            snprintf(what, sizeof what, "stage%d", st - 1);
            dev_download(got, b.buf[st], bytes);
            bad += check_u32(o.prog, what, got, want[st], o.n);
        }
        dev_download(got, b.out, bytes);
        bad += check_u32(o.prog, "out", got, want[PIPELINE_STAGES], o.n);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(c->graph));
    for (int st = 0; st <= PIPELINE_STAGES; st++) {
        CUDA_CHECK(cudaFree(b.buf[st]));
        free(want[st]);
    }
    CUDA_CHECK(cudaFree(b.out));
    cap_destroy(c);
    free(got);
    if (bad) {
        printf("%s: FAIL\n", o.prog);
        return 1;
    }
    printf("%s: OK (%d replays, %d stages x %d chunks, %zu elements)\n", o.prog, o.replays,
           PIPELINE_STAGES, PIPELINE_CHUNKS, o.n);
    return 0;
}
