// bench_optimize: the workload of bench_optimize.sh, the in-app optimizer's
// costs when there is nothing for it to gain. It captures --graphs distinct
// graphs (a scalar differs, so none is a re-capture of another) of --nodes
// small kernels forked over two streams and joined back (a shape the
// ordering passes leave as it is), times each cudaGraphInstantiate on the
// host, then launches the first graph --launches times:
//   launch_gpu_us   median of each launch between its own pair of events
//                   (what the GPU spends on the graph);
//   launch_host_us  host time of the back-to-back launches / --launches
//                   (what the program's thread spends per cudaGraphLaunch,
//                   the shim's lookup included).
// Prints one key=value line; checks the result against the CPU.
// Exit 0 = correct, 1 = wrong or CUDA error, 2 = bad usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "bench_optimize: %s: %s\n", #x, cudaGetErrorString(e_));          \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

__global__ void k_add(unsigned *y, unsigned v, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += v;
}

static double now_us()
{
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

int main(int argc, char **argv)
{
    int nodes = 1000, graphs = 5, launches = 2000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) {
            std::fprintf(stderr, "usage: bench_optimize [--nodes N] [--graphs G] [--launches L]\n");
            return 2;
        }
        if (!std::strcmp(argv[i], "--nodes"))
            nodes = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--graphs"))
            graphs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--launches"))
            launches = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: bench_optimize [--nodes N] [--graphs G] [--launches L]\n");
            return 2;
        }
    }
    if (nodes < 4 || graphs < 1 || launches < 1) return 2;
    const unsigned n = 1024;
    cudaStream_t s0, s1;
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    unsigned *a, *b;
    CHECK(cudaMalloc(&a, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&b, n * sizeof(unsigned)));
    CHECK(cudaMemset(a, 0, n * sizeof(unsigned)));
    CHECK(cudaMemset(b, 0, n * sizeof(unsigned)));

    std::vector<cudaGraphExec_t> execs(graphs);
    std::vector<double> inst;
    for (int g = 0; g < graphs; g++) {
        cudaGraph_t graph;
        CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
        k_add<<<4, 256, 0, s0>>>(a, 1u + (unsigned)g, n);
        CHECK(cudaEventRecord(fork, s0));
        CHECK(cudaStreamWaitEvent(s1, fork, 0));
        int half = (nodes - 2) / 2;
        for (int k = 0; k < half; k++)
            k_add<<<4, 256, 0, s0>>>(a, 1u, n);
        for (int k = 0; k < nodes - 2 - half; k++)
            k_add<<<4, 256, 0, s1>>>(b, 1u, n);
        CHECK(cudaEventRecord(join, s1));
        CHECK(cudaStreamWaitEvent(s0, join, 0));
        k_add<<<4, 256, 0, s0>>>(a, 1u, n);
        CHECK(cudaStreamEndCapture(s0, &graph));
        double t0 = now_us();
        CHECK(cudaGraphInstantiate(&execs[g], graph, 0));
        inst.push_back(now_us() - t0);
        CHECK(cudaGraphDestroy(graph));
    }

    cudaGraphExec_t e = execs[0];
    CHECK(cudaGraphLaunch(e, s0)); /* warm-up (and the optimizer's check, if any) */
    CHECK(cudaStreamSynchronize(s0));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    std::vector<double> gpu;
    int timed = std::min(launches, 200);
    for (int l = 0; l < timed; l++) {
        float ms = 0;
        CHECK(cudaEventRecord(t0, s0));
        CHECK(cudaGraphLaunch(e, s0));
        CHECK(cudaEventRecord(t1, s0));
        CHECK(cudaEventSynchronize(t1));
        CHECK(cudaEventElapsedTime(&ms, t0, t1));
        gpu.push_back(1000.0 * ms);
    }
    double h0 = now_us();
    for (int l = 0; l < launches; l++)
        CHECK(cudaGraphLaunch(e, s0));
    double host = (now_us() - h0) / launches;
    CHECK(cudaStreamSynchronize(s0));

    /* a: graph 0 adds 1 + (half + 1) per launch; b: (nodes - 2 - half) */
    long total = 1 + timed + launches;
    int half = (nodes - 2) / 2;
    std::vector<unsigned> ha(n), hb(n);
    CHECK(cudaMemcpy(ha.data(), a, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hb.data(), b, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned wa = (unsigned)(total * (1 + half + 1)), wb = (unsigned)(total * (nodes - 2 - half));
    size_t bad = 0;
    for (unsigned i = 0; i < n; i++)
        bad += ha[i] != wa || hb[i] != wb;
    std::printf("bench_optimize nodes=%d graphs=%d launches=%d instantiate_us=%.1f "
                "instantiate_us_per_node=%.3f launch_gpu_us=%.2f launch_host_us=%.3f wrong=%zu\n",
                nodes, graphs, launches, median(inst), median(inst) / nodes, median(gpu), host,
                bad);
    for (auto x : execs)
        CHECK(cudaGraphExecDestroy(x));
    return bad ? 1 : 0;
}
