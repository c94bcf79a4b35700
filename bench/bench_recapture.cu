// bench_recapture: the "re-capture every step" pattern, timed: each of
// --iters iterations captures a small two-stream graph (3 kernels, a fork
// and a join) on the same buffers, updates one executable graph with
// cudaGraphExecUpdate (iteration 0 instantiates), destroys the captured
// graph and launches; the loop is timed from its first capture to the end
// of its last launch. --changing (the default) gives every capture new
// scalar arguments, as a solver whose coefficients change each step (every
// graph is distinct); --same repeats one graph exactly. Prints one
// key=value line. bench_recapture.sh runs it with and without libsgcap.
// --per-call also times each call of the loop on its own (two clock reads
// around it, the same in both runs) and adds the mean ns per iteration of
// each call site to the line (c_begin= ... c_glaunch=): run with and without
// the shim, their difference says which calls the shim makes slower and by
// how much, the real calls included (what the shim's own profile cannot see).
// --queries N first times N cudaStreamGetCaptureInfo calls on a stream in
// capture after one launch (what the shim asks the driver after each
// captured launch and wait) and adds query_ns= to the line; run it plain.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                          \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

__global__ void k_scale(unsigned *y, const unsigned *x, unsigned a, unsigned add, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * a + add;
}
__global__ void k_mix(unsigned *z, const unsigned *y, unsigned bits, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) z[i] = y[i] ^ bits;
}
__global__ void k_sum(unsigned *out, const unsigned *y, const unsigned *z, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[i] + z[i];
}

/* The loop's call sites, in order, for --per-call. */
enum { C_BEGIN, C_SCALE, C_REC1, C_WAIT1, C_MIX, C_REC2, C_WAIT2, C_SUM, C_END, C_UPDATE, C_DESTROY,
       C_GLAUNCH, C_COUNT };
static const char *const call_names[C_COUNT] = {"begin", "k1",  "rec1",   "wait1",   "k2",
                                                "rec2",  "wait2", "k3", "end", "update",
                                                "destroy", "glaunch"};
static double call_ns[C_COUNT];
static bool per_call;

static inline std::chrono::steady_clock::time_point tick()
{
    return per_call ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
}
static inline void tock(int site, std::chrono::steady_clock::time_point t)
{
    if (per_call)
        call_ns[site] +=
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count();
}
/* One call of the loop, timed under --per-call. */
#define TIMED(site, x)                                                                             \
    do {                                                                                           \
        auto t_ = tick();                                                                          \
        x;                                                                                         \
        tock(site, t_);                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    long iters = 3000, queries = 0;
    bool changing = true;
    size_t n = 1 << 16;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atol(argv[++i]);
        else if (!std::strcmp(argv[i], "--same")) changing = false;
        else if (!std::strcmp(argv[i], "--changing")) changing = true;
        else if (!std::strcmp(argv[i], "--per-call")) per_call = true;
        else if (!std::strcmp(argv[i], "--queries") && i + 1 < argc) queries = std::atol(argv[++i]);
        else {
            iters = -1;
            break;
        }
    }
    if (iters < 0 || queries < 0) { /* an unknown option, or a negative count */
        std::fprintf(stderr, "usage: bench_recapture [--iters N>=0] [--same|--changing] [--per-call] "
                             "[--queries N>=0]\n");
        return 2;
    }
    cudaStream_t s0, s1;
    cudaEvent_t fork, join;
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    unsigned *x, *y, *z, *out;
    CHECK(cudaMalloc(&x, n * 4));
    CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMalloc(&z, n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMemset(x, 1, n * 4));
    const unsigned block = 256, grid = (unsigned)((n + block - 1) / block);
    k_sum<<<grid, block, 0, s0>>>(out, x, x, n); // module loads outside the timing
    CHECK(cudaDeviceSynchronize());
    double query_ns = 0;
    if (queries > 0) {
        cudaGraph_t g = nullptr;
        CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
        k_scale<<<grid, block, 0, s0>>>(y, x, 3, 1, n);
        cudaStreamCaptureStatus st;
        unsigned long long id = 0;
        const cudaGraphNode_t *deps = nullptr;
        const cudaGraphEdgeData *edges = nullptr;
        size_t nd = 0;
        auto q0 = std::chrono::steady_clock::now();
        for (long q = 0; q < queries; q++)
            CHECK(cudaStreamGetCaptureInfo(s0, &st, &id, nullptr, &deps, &edges, &nd));
        query_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - q0)
                       .count() /
                   (double)queries;
        CHECK(cudaStreamEndCapture(s0, &g));
        CHECK(cudaGraphDestroy(g));
        if (st != cudaStreamCaptureStatusActive || nd != 1) {
            std::fprintf(stderr, "bench_recapture: the capture reported %zu dependencies, not 1\n", nd);
            return 1;
        }
    }
    cudaGraphExec_t exec = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < iters; k++) {
        unsigned c = changing ? (unsigned)k : 7u;
        cudaGraph_t g = nullptr;
        TIMED(C_BEGIN, CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal)));
        TIMED(C_SCALE, (k_scale<<<grid, block, 0, s0>>>(y, x, 2 * c + 1, c, n)));
        TIMED(C_REC1, CHECK(cudaEventRecord(fork, s0)));
        TIMED(C_WAIT1, CHECK(cudaStreamWaitEvent(s1, fork, 0)));
        TIMED(C_MIX, (k_mix<<<grid, block, 0, s1>>>(z, y, c * 0x9E3779B9u, n)));
        TIMED(C_REC2, CHECK(cudaEventRecord(join, s1)));
        TIMED(C_WAIT2, CHECK(cudaStreamWaitEvent(s0, join, 0)));
        TIMED(C_SUM, (k_sum<<<grid, block, 0, s0>>>(out, y, z, n)));
        TIMED(C_END, CHECK(cudaStreamEndCapture(s0, &g)));
        if (k == 0) {
            CHECK(cudaGraphInstantiate(&exec, g, 0));
        } else {
            cudaGraphExecUpdateResultInfo info;
            TIMED(C_UPDATE, CHECK(cudaGraphExecUpdate(exec, g, &info)));
        }
        TIMED(C_DESTROY, CHECK(cudaGraphDestroy(g)));
        TIMED(C_GLAUNCH, CHECK(cudaGraphLaunch(exec, s0)));
    }
    CHECK(cudaStreamSynchronize(s0));
    auto t1 = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    std::printf("iters=%ld graphs=%s loop_ms=%.3f us_per_iter=%.3f", iters,
                changing ? "changing" : "same", ms, ms * 1000.0 / (double)iters);
    for (int i = 0; per_call && iters > 0 && i < C_COUNT; i++) /* the update: iters - 1 calls */
        std::printf(" c_%s=%.1f", call_names[i],
                    call_ns[i] / (double)(i == C_UPDATE ? (iters > 1 ? iters - 1 : 1) : iters));
    if (queries > 0) std::printf(" query_ns=%.1f", query_ns);
    std::printf("\n");
    if (exec) CHECK(cudaGraphExecDestroy(exec)); /* none with --iters 0 */
    return 0;
}
