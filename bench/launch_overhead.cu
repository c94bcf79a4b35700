// Launch-bound eager loop: --launches tiny kernels (default 1,000,000)
// round-robin over four streams, for launch_overhead.sh to compare with and
// without libsgcap. Two figures per run:
//  - ns_per_launch: the whole loop, launches until the device has run them
//    all (waits for a full launch queue included); one figure per run.
//  - submit_ns: what the host spends in one launch call, the cost the shim
//    can add. Launches go in bursts of --burst (default 256, well below the
//    queue depth, so no call waits for the device); each burst's submission
//    is timed, the device is drained between bursts (not timed), and the
//    median burst is reported, so a preempted burst does not count.
// Prints one line of key=value pairs; checks that every kernel ran.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

__global__ void tiny(unsigned int *counter)
{
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    long launches = 1000000, burst = 256;
    for (int i = 1; i + 1 < argc; i++) {
        if (!std::strcmp(argv[i], "--launches")) launches = std::atol(argv[i + 1]);
        if (!std::strcmp(argv[i], "--burst")) burst = std::atol(argv[i + 1]);
    }
    if (launches < 1 || burst < 1 || burst > launches) {
        std::fprintf(stderr, "usage: launch_overhead [--launches N] [--burst B]  (1 <= B <= N)\n");
        return 2;
    }
    const int nstreams = 4;
    cudaStream_t s[nstreams];
    unsigned int *counter = nullptr;
    CHECK(cudaMalloc(&counter, sizeof *counter));
    CHECK(cudaMemset(counter, 0, sizeof *counter));
    for (int i = 0; i < nstreams; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    // Warm-up: module load, first-launch costs.
    for (int i = 0; i < 1000; i++)
        tiny<<<1, 32, 0, s[i % nstreams]>>>(counter);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemset(counter, 0, sizeof *counter));
    CHECK(cudaDeviceSynchronize());

    // The whole loop, queues full.
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < launches; i++)
        tiny<<<1, 32, 0, s[i % nstreams]>>>(counter);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();

    // Bursts: host submission only.
    long bursts = launches / burst;
    std::vector<double> per(bursts);
    for (long b = 0; b < bursts; b++) {
        auto a = std::chrono::steady_clock::now();
        for (long i = 0; i < burst; i++)
            tiny<<<1, 32, 0, s[i % nstreams]>>>(counter);
        auto z = std::chrono::steady_clock::now();
        per[b] = std::chrono::duration<double, std::nano>(z - a).count() / (double)burst;
        CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaGetLastError());
    std::sort(per.begin(), per.end());
    double submit = bursts % 2 ? per[bursts / 2] : (per[bursts / 2 - 1] + per[bursts / 2]) / 2;

    unsigned int ran = 0;
    CHECK(cudaMemcpy(&ran, counter, sizeof ran, cudaMemcpyDeviceToHost));
    double secs = std::chrono::duration<double>(t1 - t0).count();
    long expect = launches + bursts * burst;
    std::printf("launches=%ld seconds=%.6f launches_per_sec=%.1f ns_per_launch=%.2f bursts=%ld "
                "burst=%ld submit_ns=%.2f ran=%u\n",
                launches, secs, launches / secs, 1e9 * secs / launches, bursts, burst, submit, ran);
    for (int i = 0; i < nstreams; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(counter));
    return ran == (unsigned int)expect ? 0 : 1;
}
