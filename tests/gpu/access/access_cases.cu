// access_cases.cu: the captures of issue 11's GPU "done when" that no sample
// has, one per mode, for tests/gpu/access_gpu.sh. Each captures one graph on
// two streams, launches it, checks the result on the host and exits 0 (1 on
// a wrong result, 2 on a CUDA error, 77 with no GPU). Correct programs
// (sgcap check must find 0 proven hazards):
//   sink       s1 forks from s0 and ends in a kernel no node waits for: s0
//              waits on s1's last event as the capture's last call, so the
//              graph has s1's kernel as a sink, joined only by the end of
//              the launch
//   va_reuse   two same-size cudaMallocAsync/cudaFreeAsync pairs in a row on
//              one stream: CUDA gives the second the first's address
// Planted hazards (each must be proven, naming both nodes and the bytes):
//   missing_wait   producer on s0, consumer on s1, the event wait left out
//                  (ordering by luck: s1 is joined, not forked after it)
//   free_while_read  s0 frees an allocation s1 still reads
//   waw_halves     s0 writes [0, 3/4) of a buffer and s1 [1/4, 1): the
//                  middle half is written by both, unordered
// The hazard modes run correctly on the GPU only by chance; they check
// nothing (exit 0 once launched): their graphs are what is tested.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "access_cases: %s: %s (line %d)\n", #x, cudaGetErrorString(e_),  \
                    __LINE__);                                                                \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

static const int N = 1 << 16;

__global__ void fill(float *p, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}

__global__ void scale(float *out, const float *in, int n, float f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * f;
}

static int blocks(int n)
{
    return (n + 255) / 256;
}

static bool expect(const float *d, int n, float v, const char *what)
{
    float *h = (float *)malloc(n * sizeof(float));
    CK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (h[i] != v) {
            fprintf(stderr, "access_cases: %s[%d] = %g, expected %g\n", what, i, h[i], v);
            free(h);
            return false;
        }
    free(h);
    return true;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("access_cases: skip: no CUDA device\n");
        return 77;
    }
    cudaStream_t s0, s1;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    float *x, *y, *z;
    CK(cudaMalloc(&x, N * sizeof(float)));
    CK(cudaMalloc(&y, N * sizeof(float)));
    CK(cudaMalloc(&z, N * sizeof(float)));
    CK(cudaMemset(x, 0, N * sizeof(float)));
    CK(cudaMemset(y, 0, N * sizeof(float)));
    CK(cudaMemset(z, 0, N * sizeof(float)));
    CK(cudaDeviceSynchronize());
    cudaGraph_t g;
    bool checked = true, ok = true;

    CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
    if (!strcmp(mode, "sink")) {
        // s0: x = 1; fork; s1: y = 2 x (the sink); s0: z = 3 x; join at the end
        fill<<<blocks(N), 256, 0, s0>>>(x, N, 1.0f);
        CK(cudaEventRecord(fork, s0));
        CK(cudaStreamWaitEvent(s1, fork, 0));
        scale<<<blocks(N), 256, 0, s1>>>(y, x, N, 2.0f);
        scale<<<blocks(N), 256, 0, s0>>>(z, x, N, 3.0f);
        CK(cudaEventRecord(join, s1));
        CK(cudaStreamWaitEvent(s0, join, 0)); // no node after it: s1's kernel stays a sink
    } else if (!strcmp(mode, "va_reuse")) {
        // t1 = x; y = 2 t1; free t1; t2 = y; z = 3 t2; free t2 (t2 takes t1's address)
        float *t1, *t2;
        CK(cudaMallocAsync((void **)&t1, N * sizeof(float), s0));
        fill<<<blocks(N), 256, 0, s0>>>(t1, N, 1.0f);
        scale<<<blocks(N), 256, 0, s0>>>(y, t1, N, 2.0f);
        CK(cudaFreeAsync(t1, s0));
        CK(cudaMallocAsync((void **)&t2, N * sizeof(float), s0));
        scale<<<blocks(N), 256, 0, s0>>>(t2, y, N, 1.0f);
        CK(cudaEventRecord(fork, s0));
        CK(cudaStreamWaitEvent(s1, fork, 0));
        scale<<<blocks(N), 256, 0, s1>>>(z, t2, N, 1.5f);
        CK(cudaEventRecord(join, s1));
        CK(cudaStreamWaitEvent(s0, join, 0));
        CK(cudaFreeAsync(t2, s0));
        printf("access_cases: va_reuse: second allocation %s the first's address\n",
               t1 == t2 ? "took" : "did not take");
    } else if (!strcmp(mode, "missing_wait")) {
        CK(cudaEventRecord(fork, s0));
        CK(cudaStreamWaitEvent(s1, fork, 0));
        fill<<<blocks(N), 256, 0, s0>>>(x, N, 1.0f);             // producer
        scale<<<blocks(N), 256, 0, s1>>>(y, x, N, 2.0f);         // consumer: no wait
        CK(cudaEventRecord(join, s1));
        CK(cudaStreamWaitEvent(s0, join, 0));
        fill<<<blocks(N), 256, 0, s0>>>(z, N, 0.0f);
        checked = false;
    } else if (!strcmp(mode, "free_while_read")) {
        float *t;
        CK(cudaMallocAsync((void **)&t, N * sizeof(float), s0));
        fill<<<blocks(N), 256, 0, s0>>>(t, N, 1.0f);
        CK(cudaEventRecord(fork, s0));
        CK(cudaStreamWaitEvent(s1, fork, 0));
        scale<<<blocks(N), 256, 0, s1>>>(y, t, N, 2.0f);         // reads t on s1
        CK(cudaFreeAsync(t, s0));                                 // freed on s0 meanwhile
        CK(cudaEventRecord(join, s1));
        CK(cudaStreamWaitEvent(s0, join, 0));
        fill<<<blocks(N), 256, 0, s0>>>(z, N, 0.0f);
        checked = false;
    } else if (!strcmp(mode, "waw_halves")) {
        CK(cudaEventRecord(fork, s0));
        CK(cudaStreamWaitEvent(s1, fork, 0));
        fill<<<blocks(3 * N / 4), 256, 0, s0>>>(x, 3 * N / 4, 1.0f);    // [0, 3/4)
        fill<<<blocks(3 * N / 4), 256, 0, s1>>>(x + N / 4, 3 * N / 4, 2.0f); // [1/4, 1)
        CK(cudaEventRecord(join, s1));
        CK(cudaStreamWaitEvent(s0, join, 0));
        fill<<<blocks(N), 256, 0, s0>>>(z, N, 0.0f);
        checked = false;
    } else {
        fprintf(stderr,
                "usage: access_cases sink|va_reuse|missing_wait|free_while_read|waw_halves\n");
        return 2;
    }
    CK(cudaStreamEndCapture(s0, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s0));
    CK(cudaStreamSynchronize(s0));
    if (checked) ok = expect(y, N, 2.0f, "y") && expect(z, N, 3.0f, "z"); // both correct modes
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    printf("access_cases: %s: %s\n", mode,
           !checked ? "launched (a planted hazard)" : ok ? "OK" : "WRONG");
    return ok ? 0 : 1;
}
