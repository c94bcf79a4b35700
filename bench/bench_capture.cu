// bench_capture: the cost of stream capture per captured node, for
// bench_capture.sh to compare with and without libsgcap. Captures --nodes
// tiny kernels (default 1000) round-robin over four streams, with every
// stream joining the next through an event every 16 nodes (so the shim's
// record/wait pairing is exercised, not only its enqueue path), then joins
// all into the origin; --reps captures (default 21), each timed from
// cudaStreamBeginCapture to cudaStreamEndCapture, and each instantiated
// (timed separately: with the shim that includes building the model and,
// the first time, writing the bundle). Prints one key=value line of medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

__global__ void tiny(float *p, float v)
{
    if (threadIdx.x == 0 && p) p[blockIdx.x] = v;
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                          \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    long nodes = 1000;
    int reps = 21;
    for (int i = 1; i + 1 < argc; i++) {
        if (!std::strcmp(argv[i], "--nodes")) nodes = std::atol(argv[i + 1]);
        if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    }
    const int ns = 4;
    cudaStream_t s[ns];
    cudaEvent_t ev[ns];
    for (int i = 0; i < ns; i++) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    }
    float *buf = nullptr;
    CHECK(cudaMalloc(&buf, 1024 * sizeof(float)));
    tiny<<<1, 32, 0, s[0]>>>(buf, 0.0f); // module load outside the timing
    CHECK(cudaDeviceSynchronize());

    std::vector<double> cap, inst;
    for (int r = 0; r < reps; r++) {
        cudaGraph_t g = nullptr;
        auto t0 = std::chrono::steady_clock::now();
        CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
        for (int i = 1; i < ns; i++) { // fork
            CHECK(cudaEventRecord(ev[0], s[0]));
            CHECK(cudaStreamWaitEvent(s[i], ev[0], 0));
        }
        for (long k = 0; k < nodes; k++) {
            int si = (int)(k % ns);
            tiny<<<1, 32, 0, s[si]>>>(buf, (float)k);
            if (k % 16 == 15) { // this stream's work feeds the next stream
                CHECK(cudaEventRecord(ev[si], s[si]));
                CHECK(cudaStreamWaitEvent(s[(si + 1) % ns], ev[si], 0));
            }
        }
        for (int i = 1; i < ns; i++) { // join
            CHECK(cudaEventRecord(ev[i], s[i]));
            CHECK(cudaStreamWaitEvent(s[0], ev[i], 0));
        }
        CHECK(cudaStreamEndCapture(s[0], &g));
        auto t1 = std::chrono::steady_clock::now();
        cudaGraphExec_t e = nullptr;
        CHECK(cudaGraphInstantiate(&e, g, 0));
        auto t2 = std::chrono::steady_clock::now();
        cap.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
        inst.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
        CHECK(cudaGraphExecDestroy(e));
        CHECK(cudaGraphDestroy(g));
    }
    double c = median(cap), in = median(inst);
    std::printf("nodes=%ld reps=%d capture_ns=%.0f capture_ns_per_node=%.1f instantiate_ns=%.0f "
                "instantiate_ns_per_node=%.1f first_instantiate_ns=%.0f\n",
                nodes, reps, c, c / nodes, in, in / nodes, inst.empty() ? 0.0 : inst[0]);
    for (int i = 0; i < ns; i++) {
        CHECK(cudaStreamDestroy(s[i]));
        CHECK(cudaEventDestroy(ev[i]));
    }
    CHECK(cudaFree(buf));
    return 0;
}
