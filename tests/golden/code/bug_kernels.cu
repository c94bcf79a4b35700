// bug_kernels.cu: the kernels of the planted-bug fixtures (tests/golden/bug_*.sgraph),
// the same one-element-per-thread shape as the samples' kernels, so the access
// analysis gives each fixture exact, dense ranges and the checker proves its hazard.
// Compiled by gen.sh into bug_kernels.fatbin (sm_90 SASS + compute_90 PTX).
#include <cstddef>
#include <cstdint>

#define GID (blockIdx.x * (size_t)blockDim.x + threadIdx.x)

__global__ void k_init(uint32_t *x, size_t n) { size_t i = GID; if (i < n) x[i] = (uint32_t)i * 3u + 1u; }
__global__ void k_produce(uint32_t *a, const uint32_t *x, size_t n) { size_t i = GID; if (i < n) a[i] = x[i] * 5u + 2u; }
__global__ void k_consume(uint32_t *y, const uint32_t *a, size_t n) { size_t i = GID; if (i < n) y[i] = a[i] ^ 0x55u; }
__global__ void k_sum(uint32_t *out, const uint32_t *a, const uint32_t *b, size_t n) { size_t i = GID; if (i < n) out[i] = a[i] + b[i]; }
__global__ void k_fill(uint32_t *tmp, const uint32_t *x, size_t n) { size_t i = GID; if (i < n) tmp[i] = x[i] * 9u + 4u; }
__global__ void k_use(uint32_t *out, const uint32_t *tmp, size_t n) { size_t i = GID; if (i < n) out[i] = tmp[i] ^ (tmp[i] >> 7); }
__global__ void k_other(uint32_t *w, const uint32_t *x, size_t n) { size_t i = GID; if (i < n) w[i] = x[i] + 17u; }
__global__ void k_scale(uint32_t *y, const uint32_t *x, size_t n) { size_t i = GID; if (i < n) y[i] = x[i] * 7u; }
__global__ void k_square(uint32_t *y, size_t n) { size_t i = GID; if (i < n) y[i] = y[i] * y[i]; }
