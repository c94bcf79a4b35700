// fusion_chain: the fusion benchmark's workload (issue 12). An 8-stage
// float32 pointwise chain (1.5x+2, x^2, sqrt(x+1), clamp(0,50), -0.5x+1,
// x^2, sin, 3x-1) as eight kernels on one stream, captured into a CUDA
// graph and launched --launches times. Two forms:
//   --mode live  every intermediate in a buffer of the program's own
//                (cudaMalloc): the app may read them, so a fuser must keep
//                all eight stores;
//   --mode dead  the seven intermediates are cudaMallocAsync'd and
//                cudaFreeAsync'd inside the capture (graph allocations
//                freed in the same graph): provably dead after the launch.
// --mode copy times a float4 copy of the same bytes (the roofline).
// Prints one key=value line (median graph time over the launches, timed
// with events; with --e2e also the end-to-end time of all the launches back
// to back, host wall clock from the first launch to the stream's end, the
// way a program that launches the graph in a loop sees it) and checks the
// output against a CPU reference (sin differs
// by a few ulp between host and device: the check allows 1e-5 relative).
// Exit 0 = correct, 1 = wrong result or CUDA error, 2 = bad usage.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "fusion_chain: %s: %s\n", #x, cudaGetErrorString(e_));          \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

#define STAGE(name, expr)                                                                          \
    __global__ void name(const float *__restrict__ in, float *__restrict__ out, size_t n)          \
    {                                                                                              \
        size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;                                  \
        if (i < n) {                                                                               \
            float x = in[i];                                                                       \
            out[i] = (expr);                                                                       \
        }                                                                                          \
    }
STAGE(st_affine1, 1.5f * x + 2.0f)
STAGE(st_square1, x *x)
STAGE(st_sqrt, sqrtf(x + 1.0f))
STAGE(st_clamp, fminf(fmaxf(x, 0.0f), 50.0f))
STAGE(st_affine2, -0.5f * x + 1.0f)
STAGE(st_square2, x *x)
STAGE(st_sin, sinf(x))
STAGE(st_affine3, 3.0f * x - 1.0f)

typedef void (*stage_fn)(const float *, float *, size_t);
static const stage_fn stages[8] = {st_affine1, st_square1, st_sqrt,    st_clamp,
                                   st_affine2, st_square2, st_sin, st_affine3};

static float ref_stage(int s, float x)
{
    switch (s) {
    case 0: return std::fmaf(1.5f, x, 2.0f);
    case 1: return x * x;
    case 2: return std::sqrt(x + 1.0f);
    case 3: return std::fmin(std::fmax(x, 0.0f), 50.0f);
    case 4: return std::fmaf(-0.5f, x, 1.0f);
    case 5: return x * x;
    case 6: return (float)std::sin((double)x);
    default: return std::fmaf(3.0f, x, -1.0f);
    }
}

__global__ void copy4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

static void usage(FILE *f)
{
    std::fprintf(f, "usage: fusion_chain [--mode live|dead|copy] [--n ELEMENTS] [--launches L] "
                    "[--e2e] [--result]\n"
                    "  live: intermediates in the program's own buffers (default)\n"
                    "  dead: intermediates allocated and freed inside the capture\n"
                    "  copy: a float4 copy of the same bytes (the bandwidth roofline)\n"
                    "  --result: print no times, only the result and a hash of its bytes (runs\n"
                    "            with and without sgcap must print the same line: bit-exact)\n"
                    "exit status: 0 correct, 1 wrong result or CUDA error, 2 bad usage\n");
}

int main(int argc, char **argv)
{
    const char *mode = "live";
    size_t n = (size_t)1 << 24;
    int launches = 50;
    bool e2e = false, result_only = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        if (!std::strcmp(argv[i], "--e2e")) { e2e = true; continue; }
        if (!std::strcmp(argv[i], "--result")) { result_only = true; continue; }
        if (i + 1 >= argc) { usage(stderr); return 2; }
        if (!std::strcmp(argv[i], "--mode")) mode = argv[++i];
        else if (!std::strcmp(argv[i], "--n")) n = std::strtoull(argv[++i], nullptr, 0);
        else if (!std::strcmp(argv[i], "--launches")) launches = std::atoi(argv[++i]);
        else { usage(stderr); return 2; }
    }
    bool live = !std::strcmp(mode, "live"), dead = !std::strcmp(mode, "dead"),
         copy = !std::strcmp(mode, "copy");
    if ((!live && !dead && !copy) || n == 0 || n % 4 != 0 || launches < 1) {
        usage(stderr);
        return 2;
    }

    std::vector<float> host(n);
    unsigned s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        host[i] = ((float)(s >> 8) / 16777216.0f) * 8.0f - 4.0f;
    }
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    float *buf[9] = {}; /* buf[0] input, buf[8] output, buf[1..7] intermediates */
    for (int i = 0; i < 9; i++)
        if (live || i == 0 || i == 8) CHECK(cudaMalloc(&buf[i], n * sizeof(float)));
    CHECK(cudaMemcpy(buf[0], host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const unsigned block = 256;
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    if (copy) {
        size_t n4 = n / 4;
        copy4<<<(unsigned)((n4 + block - 1) / block), block, 0, st>>>((const float4 *)buf[0],
                                                                      (float4 *)buf[8], n4);
    } else {
        if (dead)
            for (int i = 1; i < 8; i++) CHECK(cudaMallocAsync(&buf[i], n * sizeof(float), st));
        unsigned grid = (unsigned)((n + block - 1) / block);
        for (int k = 0; k < 8; k++) {
            stages[k]<<<grid, block, 0, st>>>(buf[k], buf[k + 1], n);
            if (dead && k >= 1) CHECK(cudaFreeAsync(buf[k], st)); /* last use of buf[k] */
        }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaStreamEndCapture(st, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));

    CHECK(cudaGraphLaunch(exec, st)); /* warm-up */
    CHECK(cudaStreamSynchronize(st));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms(launches);
    for (int l = 0; l < launches; l++) {
        CHECK(cudaEventRecord(a, st));
        CHECK(cudaGraphLaunch(exec, st));
        CHECK(cudaEventRecord(b, st));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms[l], a, b));
    }
    std::sort(ms.begin(), ms.end());
    double us = 1000.0 * ms[launches / 2];
    double e2e_ms = 0.0;
    if (e2e) { /* the loop a program runs: launches back to back, one wait */
        auto h0 = std::chrono::steady_clock::now();
        for (int l = 0; l < launches; l++) CHECK(cudaGraphLaunch(exec, st));
        CHECK(cudaStreamSynchronize(st));
        e2e_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0)
                     .count();
    }

    std::vector<float> out(n);
    CHECK(cudaMemcpy(out.data(), buf[8], n * sizeof(float), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float want = host[i];
        if (copy) {
            if (out[i] != want) bad++;
            continue;
        }
        for (int k = 0; k < 8; k++) want = ref_stage(k, want);
        if (!(std::fabs(out[i] - want) <= 1e-5f * std::fmax(1.0f, std::fabs(want)))) bad++;
    }
    /* The fewest bytes any version must move: one read of the input plus
     * every store still live (live: all eight; dead and copy: the output). */
    double bytes = (live ? 9.0 : 2.0) * n * sizeof(float);
    if (result_only) {
        /* FNV-1a over every buffer the program can read after the graph:
         * the output, and in live mode the seven intermediates too */
        unsigned long long h = 0xcbf29ce484222325ull;
        std::vector<unsigned char> bytes_of(n * sizeof(float));
        for (int k = 1; k <= 8; k++) {
            if (!live && k != 8) continue;
            CHECK(cudaMemcpy(bytes_of.data(), buf[k], bytes_of.size(), cudaMemcpyDeviceToHost));
            for (unsigned char c : bytes_of) h = (h ^ c) * 0x100000001b3ull;
        }
        std::printf("fusion_chain mode=%s n=%zu launches=%d wrong=%zu fnv1a=%016llx\n", mode, n,
                    launches, bad, h);
    } else {
        std::printf("fusion_chain mode=%s n=%zu launches=%d median_us=%.2f min_bytes=%.0f "
                    "gbs_at_min_bytes=%.1f wrong=%zu",
                    mode, n, launches, us, bytes, bytes / (us * 1e3), bad);
        if (e2e) std::printf(" e2e_ms=%.3f", e2e_ms);
        std::printf("\n");
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    for (int i = 0; i < 9; i++)
        if (buf[i] && (live || i == 0 || i == 8)) CHECK(cudaFree(buf[i]));
    return bad ? 1 : 0;
}
