// Launch-bound eager loop: --launches tiny kernels (default 1,000,000)
// round-robin over four streams, timed on the host, for launch_overhead.sh
// to compare with and without libsgcap. Prints one line of key=value pairs;
// checks that every kernel ran.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    long launches = 1000000;
    for (int i = 1; i + 1 < argc; i++)
        if (!std::strcmp(argv[i], "--launches")) launches = std::atol(argv[i + 1]);
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

    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < launches; i++)
        tiny<<<1, 32, 0, s[i % nstreams]>>>(counter);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();

    unsigned int ran = 0;
    CHECK(cudaMemcpy(&ran, counter, sizeof ran, cudaMemcpyDeviceToHost));
    double secs = std::chrono::duration<double>(t1 - t0).count();
    std::printf("launches=%ld seconds=%.6f launches_per_sec=%.1f ns_per_launch=%.2f ran=%u\n",
                launches, secs, launches / secs, 1e9 * secs / launches, ran);
    for (int i = 0; i < nstreams; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(counter));
    return ran == (unsigned int)launches ? 0 : 1;
}
