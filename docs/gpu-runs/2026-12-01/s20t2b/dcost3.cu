// throwaway: per-node cost of the raw digest's driver calls on big captured graphs
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
__global__ void tiny(float *p, float v) { if (threadIdx.x == 0 && p) p[blockIdx.x] = v; }
static double now() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
  float *buf; cudaMalloc(&buf, 4096 * 4);
  cudaStream_t s[4]; cudaEvent_t ev[4];
  for (int i = 0; i < 4; i++) { cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking); cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming); }
  tiny<<<1, 32, 0, s[0]>>>(buf, 0.f); cudaDeviceSynchronize();
  for (long nodes : {1000L, 10000L}) {
    for (int rep = 0; rep < 3; rep++) {
      cudaGraph_t g;
      cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal);
      for (int i = 1; i < 4; i++) { cudaEventRecord(ev[0], s[0]); cudaStreamWaitEvent(s[i], ev[0], 0); }
      for (long k = 0; k < nodes; k++) { int si = k % 4; tiny<<<1, 32, 0, s[si]>>>(buf, (float)k);
        if (k % 16 == 15) { cudaEventRecord(ev[si], s[si]); cudaStreamWaitEvent(s[(si + 1) % 4], ev[si], 0); } }
      for (int i = 1; i < 4; i++) { cudaEventRecord(ev[i], s[i]); cudaStreamWaitEvent(s[0], ev[i], 0); }
      cudaStreamEndCapture(s[0], &g);
      CUgraph cg = (CUgraph)g;
      double t0 = now();
      size_t nn = 0; cuGraphGetNodes(cg, NULL, &nn); std::vector<CUgraphNode> n(nn); cuGraphGetNodes(cg, n.data(), &nn);
      double t1 = now();
      size_t ne = 0; cuGraphGetEdges_v2(cg, NULL, NULL, NULL, &ne); std::vector<CUgraphNode> f(ne), t(ne); std::vector<CUgraphEdgeData> ed(ne);
      cuGraphGetEdges_v2(cg, f.data(), t.data(), ed.data(), &ne);
      double t2 = now();
      for (size_t j = 0; j < nn; j++) { CUgraphNodeType ty; cuGraphNodeGetType(n[j], &ty); }
      double t3 = now();
      for (size_t j = 0; j < nn; j++) { CUDA_KERNEL_NODE_PARAMS p; cuGraphKernelNodeGetParams_v2(n[j], &p); }
      double t4 = now();
      for (size_t j = 0; j < nn; j++) { CUkernelNodeAttrValue v; cuGraphKernelNodeGetAttribute(n[j], CU_LAUNCH_ATTRIBUTE_PRIORITY, &v);
        cuGraphKernelNodeGetAttribute(n[j], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v); cuGraphKernelNodeGetAttribute(n[j], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v); }
      double t5 = now();
      cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0);
      double t6 = now();
      size_t tot = 0; std::vector<CUgraphNode> dep(64); std::vector<CUgraphEdgeData> ded(64);
      for (size_t j = 0; j < nn; j++) { size_t k = 64; cuGraphNodeGetDependencies_v2(n[j], dep.data(), ded.data(), &k); tot += k; }
      double t7 = now();
      size_t tot2 = 0;
      for (size_t j = 0; j < nn; j++) { size_t k = 0; cuGraphNodeGetDependencies_v2(n[j], NULL, NULL, &k); tot2 += k; }
      double t8 = now();
      printf("nodes=%zu edges=%zu per node ns: getnodes %.1f getedges %.1f type %.1f params %.1f attr3 %.1f | instantiate %.1f | deps %.1f (%zu edges) count-only %.1f\n", nn, ne,
             (t1 - t0) / nn, (t2 - t1) / nn, (t3 - t2) / nn, (t4 - t3) / nn, (t5 - t4) / nn, (t6 - t5) / nn, (t7 - t6) / nn, tot, (t8 - t7) / nn);
      cudaGraphExecDestroy(e); cudaGraphDestroy(g);
    }
  }
  return 0;
}
