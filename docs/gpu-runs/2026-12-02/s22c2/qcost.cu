// qcost: what each driver query the shim makes costs on a real driver (ns per call, median of 9 batches of 20000)
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
#include <algorithm>
__global__ void k(float *p, float a) { p[threadIdx.x] += a; }
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
#define N 20000
template <class F> static double cost(F f) {
  double v[9];
  for (int b = 0; b < 9; b++) { double t0 = now(); for (int i = 0; i < N; i++) f(); v[b] = (now() - t0) / N; }
  std::sort(v, v + 9); return v[4];
}
int main() {
  float *d; cudaMalloc(&d, 4096);
  cudaStream_t s1, s2; cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaEvent_t e1, e2; cudaEventCreateWithFlags(&e1, cudaEventDisableTiming); cudaEventCreateWithFlags(&e2, cudaEventDisableTiming);
  cudaGraph_t g;
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  k<<<1, 32, 0, s1>>>(d, 1.f); cudaEventRecord(e1, s1); cudaStreamWaitEvent(s2, e1, 0);
  k<<<1, 32, 0, s2>>>(d + 64, 2.f); k<<<1, 32, 0, s1>>>(d + 128, 3.f); cudaEventRecord(e2, s2); cudaStreamWaitEvent(s1, e2, 0);
  cudaStreamEndCapture(s1, &g);
  CUgraphNode nodes[16]; size_t nn = 16; cuGraphGetNodes(g, nodes, &nn);
  printf("graph: %zu nodes\n", nn);
  volatile size_t sink = 0;
  printf("cuGraphGetNodes (fill)          %6.1f ns\n", cost([&] { size_t n = 16; cuGraphGetNodes(g, nodes, &n); sink += n; }));
  CUgraphNode from[16], to[16]; CUgraphEdgeData ed[16];
  printf("cuGraphGetEdges_v2 (fill)       %6.1f ns\n", cost([&] { size_t n = 16; cuGraphGetEdges_v2(g, from, to, ed, &n); sink += n; }));
  printf("cuGraphNodeGetDependencies_v2   %6.1f ns\n", cost([&] { size_t n = 16; cuGraphNodeGetDependencies_v2(nodes[2], from, ed, &n); sink += n; }));
  printf("cuGraphNodeGetType              %6.1f ns\n", cost([&] { CUgraphNodeType t; cuGraphNodeGetType(nodes[1], &t); sink += t; }));
  printf("cuGraphKernelNodeGetParams_v2   %6.1f ns\n", cost([&] { CUDA_KERNEL_NODE_PARAMS p; cuGraphKernelNodeGetParams_v2(nodes[1], &p); sink += p.gridDimX; }));
  printf("cuGraphKernelNodeGetAttribute   %6.1f ns\n", cost([&] { CUkernelNodeAttrValue v; cuGraphKernelNodeGetAttribute(nodes[1], CU_LAUNCH_ATTRIBUTE_PRIORITY, &v); sink += v.priority; }));
  printf("cuThreadExchangeStreamCaptureMode %4.1f ns\n", cost([&] { CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED; cuThreadExchangeStreamCaptureMode(&m); cuThreadExchangeStreamCaptureMode(&m); sink += m; }) / 2);
  printf("cuStreamGetId                   %6.1f ns\n", cost([&] { unsigned long long id; cuStreamGetId((CUstream)s1, &id); sink += id; }));
  printf("cuStreamGetCaptureInfo_v3 (idle)%6.1f ns\n", cost([&] { CUstreamCaptureStatus st; cuuint64_t id; cuStreamGetCaptureInfo_v3((CUstream)s1, &st, &id, NULL, NULL, NULL, NULL); sink += st; }));
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  k<<<1, 32, 0, s1>>>(d, 1.f);
  printf("cuStreamGetCaptureInfo_v3 (cap) %6.1f ns\n", cost([&] { CUstreamCaptureStatus st; cuuint64_t id; CUgraph gg; const CUgraphNode *dd; const CUgraphEdgeData *ee; size_t n; cuStreamGetCaptureInfo_v3((CUstream)s1, &st, &id, &gg, &dd, &ee, &n); sink += n; }));
  cudaGraph_t g2; cudaStreamEndCapture(s1, &g2);
  printf("clock_gettime                   %6.1f ns\n", cost([&] { sink += (size_t)now(); }));
  return 0;
}
