// throwaway probe: how fast can the dead 8-op chain go with exact vs fast math (1 and 4 elems/thread)
#include <cstdio>
#include <vector>
#include <algorithm>
__device__ __forceinline__ float chain(float x) {
  x = 1.5f * x + 2.0f; x = x * x; x = sqrtf(x + 1.0f); x = fminf(fmaxf(x, 0.0f), 50.0f);
  x = -0.5f * x + 1.0f; x = x * x; x = sinf(x); return 3.0f * x - 1.0f; }
__global__ void k1(const float *__restrict__ in, float *__restrict__ out, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = chain(in[i]); }
__global__ void k4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) { float4 v = in[i]; v.x = chain(v.x); v.y = chain(v.y); v.z = chain(v.z); v.w = chain(v.w); out[i] = v; } }
__global__ void kcopy(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; if (i < n4) out[i] = in[i]; }
int main() {
  size_t n = 16u << 20; float *a, *b; cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4);
  std::vector<float> h(n); for (size_t i = 0; i < n; i++) h[i] = (float)((int)(i % 2001) - 1000) / 250.0f;
  cudaMemcpy(a, h.data(), n * 4, cudaMemcpyHostToDevice);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int which = 0; which < 3; which++) for (int bs : {128, 256}) {
    std::vector<float> t;
    for (int r = 0; r < 200; r++) {
      cudaEventRecord(e0);
      if (which == 0) k1<<<(unsigned)((n + bs - 1) / bs), bs>>>(a, b, n);
      else if (which == 1) k4<<<(unsigned)((n / 4 + bs - 1) / bs), bs>>>((float4 *)a, (float4 *)b, n / 4);
      else kcopy<<<(unsigned)((n / 4 + bs - 1) / bs), bs>>>((float4 *)a, (float4 *)b, n / 4);
      cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1000);
    }
    std::sort(t.begin(), t.end());
    printf("%s %-6s block %d: median %.1f us\n", PROBE, which == 0 ? "1/thr" : which == 1 ? "float4" : "copy", bs, t[t.size() / 2]);
  }
  printf("%s err %s\n", PROBE, cudaGetErrorString(cudaGetLastError()));
}
