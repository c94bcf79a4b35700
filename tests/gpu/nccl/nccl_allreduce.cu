// nccl_allreduce: a captured all_reduce between compute on two streams, on
// every visible GPU (one rank per GPU, one process: ncclCommInitAll), the
// project's own NCCL workload for sgcap (issue 15).
//
// Per rank, captured into one CUDA graph:
//   compute: produce(x)            x[i] = rank + 1 + i % 7
//            record ev_fork
//   comm:    wait ev_fork; ncclAllReduce(x -> y, sum); record ev_join
//   compute: scale(z, 0.5)         independent work, overlaps the collective
//            wait ev_join
//            consume(y, z -> out)  out[i] = y[i] + z[i]
// The graph is launched --launches times; out is checked against the exact
// sum. With one GPU NCCL lowers the collective to copies (no NCCL kernel);
// with two or more, NCCL kernels run on the comm stream.
// Exit 0 = correct, 1 = wrong result or CUDA/NCCL error, 2 = bad usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include <nccl.h>

#define CUDA(x)                                                                                    \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "nccl_allreduce: %s: %s\n", #x, cudaGetErrorString(e_));        \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)
#define NCCL(x)                                                                                    \
    do {                                                                                           \
        ncclResult_t r_ = (x);                                                                     \
        if (r_ != ncclSuccess) {                                                                   \
            std::fprintf(stderr, "nccl_allreduce: %s: %s\n", #x, ncclGetErrorString(r_));        \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

__global__ void produce(float *x, size_t n, int rank)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (float)(rank + 1 + (int)(i % 7));
}
__global__ void scale(float *z, size_t n, float s)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = (float)(i % 5) * s;
}
__global__ void consume(const float *y, const float *z, float *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[i] + z[i];
}

struct rank_t {
    cudaStream_t compute, comm;
    cudaEvent_t fork, join;
    float *x, *y, *z, *out;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

int main(int argc, char **argv)
{
    size_t n = (size_t)1 << 20;
    int launches = 5, want_ranks = 0;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--help")) {
            std::printf("usage: nccl_allreduce [--n ELEMENTS] [--launches L] [--ranks R]\n"
                        "  one rank per visible GPU (or the first R); exit 0 correct, 1 wrong or "
                        "error, 2 bad usage\n");
            return 0;
        }
        if (i + 1 >= argc) return 2;
        if (!std::strcmp(argv[i], "--n")) n = std::strtoull(argv[++i], nullptr, 0);
        else if (!std::strcmp(argv[i], "--launches")) launches = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--ranks")) want_ranks = std::atoi(argv[++i]);
        else return 2;
    }
    int ndev = 0;
    CUDA(cudaGetDeviceCount(&ndev));
    if (want_ranks > 0 && want_ranks < ndev) ndev = want_ranks;
    if (ndev < 1 || n == 0 || launches < 1) return 2;
    std::vector<int> devs(ndev);
    for (int d = 0; d < ndev; d++) devs[d] = d;
    std::vector<ncclComm_t> comms(ndev);
    NCCL(ncclCommInitAll(comms.data(), ndev, devs.data()));
    std::vector<rank_t> r(ndev);
    const unsigned block = 256, grid = (unsigned)((n + block - 1) / block);
    for (int d = 0; d < ndev; d++) {
        CUDA(cudaSetDevice(d));
        CUDA(cudaStreamCreateWithFlags(&r[d].compute, cudaStreamNonBlocking));
        CUDA(cudaStreamCreateWithFlags(&r[d].comm, cudaStreamNonBlocking));
        CUDA(cudaEventCreateWithFlags(&r[d].fork, cudaEventDisableTiming));
        CUDA(cudaEventCreateWithFlags(&r[d].join, cudaEventDisableTiming));
        for (float **p : {&r[d].x, &r[d].y, &r[d].z, &r[d].out}) CUDA(cudaMalloc(p, n * sizeof(float)));
    }
    // Capture: every rank's streams are capturing while the group is issued.
    for (int d = 0; d < ndev; d++) {
        CUDA(cudaSetDevice(d));
        CUDA(cudaStreamBeginCapture(r[d].compute, cudaStreamCaptureModeThreadLocal));
        produce<<<grid, block, 0, r[d].compute>>>(r[d].x, n, d);
        CUDA(cudaEventRecord(r[d].fork, r[d].compute));
        CUDA(cudaStreamWaitEvent(r[d].comm, r[d].fork, 0));
    }
    NCCL(ncclGroupStart());
    for (int d = 0; d < ndev; d++)
        NCCL(ncclAllReduce(r[d].x, r[d].y, n, ncclFloat, ncclSum, comms[d], r[d].comm));
    NCCL(ncclGroupEnd());
    for (int d = 0; d < ndev; d++) {
        CUDA(cudaSetDevice(d));
        CUDA(cudaEventRecord(r[d].join, r[d].comm));
        scale<<<grid, block, 0, r[d].compute>>>(r[d].z, n, 0.5f);
        CUDA(cudaStreamWaitEvent(r[d].compute, r[d].join, 0));
        consume<<<grid, block, 0, r[d].compute>>>(r[d].y, r[d].z, r[d].out, n);
        CUDA(cudaGetLastError());
        CUDA(cudaStreamEndCapture(r[d].compute, &r[d].graph));
        CUDA(cudaGraphInstantiate(&r[d].exec, r[d].graph, 0));
    }
    for (int l = 0; l < launches; l++) {
        for (int d = 0; d < ndev; d++) {
            CUDA(cudaSetDevice(d));
            CUDA(cudaMemset(r[d].out, 0xff, n * sizeof(float)));
            CUDA(cudaDeviceSynchronize()); // the legacy-stream memset before the graph
            CUDA(cudaGraphLaunch(r[d].exec, r[d].compute));
        }
        for (int d = 0; d < ndev; d++) {
            CUDA(cudaSetDevice(d));
            CUDA(cudaStreamSynchronize(r[d].compute));
        }
    }
    // sum over ranks of (rank + 1 + i%7) = ndev*(ndev+1)/2 + ndev*(i%7); plus (i%5)*0.5
    size_t bad = 0;
    std::vector<float> host(n);
    for (int d = 0; d < ndev; d++) {
        CUDA(cudaSetDevice(d));
        CUDA(cudaMemcpy(host.data(), r[d].out, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            float want = (float)(ndev * (ndev + 1) / 2 + ndev * (int)(i % 7)) + (float)(i % 5) * 0.5f;
            if (host[i] != want) bad++;
        }
    }
    for (int d = 0; d < ndev; d++) {
        CUDA(cudaSetDevice(d));
        CUDA(cudaGraphExecDestroy(r[d].exec));
        CUDA(cudaGraphDestroy(r[d].graph));
        for (float *p : {r[d].x, r[d].y, r[d].z, r[d].out}) CUDA(cudaFree(p));
        NCCL(ncclCommDestroy(comms[d]));
    }
    std::printf("nccl_allreduce: %s (%d rank%s, %d launches, %zu elements, %zu wrong)\n",
                bad ? "FAIL" : "OK", ndev, ndev == 1 ? "" : "s", launches, n, bad);
    return bad ? 1 : 0;
}
