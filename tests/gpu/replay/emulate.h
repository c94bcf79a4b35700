/* emulate.h: CPU versions of the replay test workload's kernels
 * (tests/gpu/replay/kernels.cu), with their argument layouts. The fake
 * driver (fake_cuda.c) runs them when a replayed graph is "launched" on a
 * machine without a GPU, and fake_bundle.c runs them to make the snapshots
 * such a replay is validated against, so the whole of `sgcap replay`
 * (placement, relocation, restore, build, validation) runs in CPU CI.
 * Kernels read their pointers from the argument bytes, exactly as the GPU
 * would: a pointer the relocation missed crashes or mismatches here too. */
#ifndef SGCAP_TESTS_REPLAY_EMULATE_H
#define SGCAP_TESTS_REPLAY_EMULATE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *name;
    uint32_t n_params;
    uint32_t offsets[6], sizes[6];
    void (*run)(const uint8_t *args);
} emu_kernel_t;

static inline void *emu_ptr(const uint8_t *a, uint32_t off)
{
    uint64_t v;
    memcpy(&v, a + off, 8);
    return (void *)(uintptr_t)v;
}

static inline uint64_t emu_u64(const uint8_t *a, uint32_t off)
{
    uint64_t v;
    memcpy(&v, a + off, 8);
    return v;
}

static inline float emu_f32(const uint8_t *a, uint32_t off)
{
    float v;
    memcpy(&v, a + off, 4);
    return v;
}

static void emu_axpb(const uint8_t *a)
{
    float *y = (float *)emu_ptr(a, 0);
    const float *x = (const float *)emu_ptr(a, 8);
    float m = emu_f32(a, 16), add = emu_f32(a, 20);
    for (uint64_t i = 0, n = emu_u64(a, 24); i < n; i++)
        y[i] = fmaf(x[i], m, add);
}

static void emu_square(const uint8_t *a)
{
    float *y = (float *)emu_ptr(a, 0);
    for (uint64_t i = 0, n = emu_u64(a, 8); i < n; i++)
        y[i] = y[i] * y[i];
}

static void emu_combine(const uint8_t *a)
{
    float *out = (float *)emu_ptr(a, 0);
    const float *b = (const float *)emu_ptr(a, 8), *c = (const float *)emu_ptr(a, 16);
    for (uint64_t i = 0, n = emu_u64(a, 24); i < n; i++)
        out[i] = fmaf(b[i], 0.75f, c[i]);
}

static void emu_accum(const uint8_t *a)
{
    float *acc = (float *)emu_ptr(a, 0);
    const float *v = (const float *)emu_ptr(a, 8);
    for (uint64_t i = 0, n = emu_u64(a, 16); i < n; i++)
        acc[i] = acc[i] + v[i];
}

static void emu_copy(const uint8_t *a)
{
    float *d = (float *)emu_ptr(a, 0);
    const float *s = (const float *)emu_ptr(a, 8);
    memmove(d, s, emu_u64(a, 16) * sizeof(float));
}

/* k_poly(float *y, const float *x, Coeffs {float a, b; const float *bias},
 * u64 n, int iters): the struct sits at 16, its pointer at 24 */
static void emu_poly(const uint8_t *a)
{
    float *y = (float *)emu_ptr(a, 0);
    const float *x = (const float *)emu_ptr(a, 8);
    float ca = emu_f32(a, 16), cb = emu_f32(a, 20);
    const float *bias = (const float *)emu_ptr(a, 24);
    uint64_t n = emu_u64(a, 32);
    int iters;
    memcpy(&iters, a + 40, 4);
    for (uint64_t i = 0; i < n; i++) {
        float v = x[i];
        for (int it = 0; it < iters; it++)
            for (int r = 0; r < 3; r++)
                v = fmaf(v, ca, cb);
        y[i] = v + bias[i & 255];
    }
}

static const emu_kernel_t emu_kernels[] = {
    {"k_axpb", 5, {0, 8, 16, 20, 24}, {8, 8, 4, 4, 8}, emu_axpb},
    {"k_square", 2, {0, 8}, {8, 8}, emu_square},
    {"k_combine", 4, {0, 8, 16, 24}, {8, 8, 8, 8}, emu_combine},
    {"k_accum", 3, {0, 8, 16}, {8, 8, 8}, emu_accum},
    {"k_copy", 3, {0, 8, 16}, {8, 8, 8}, emu_copy},
    {"_ZN3sgt6k_polyILi3EEEvPfPKf6Coeffsyi", 5, {0, 8, 16, 32, 40}, {8, 8, 16, 8, 4}, emu_poly},
};

static inline const emu_kernel_t *emu_find(const char *name)
{
    for (size_t i = 0; i < sizeof emu_kernels / sizeof emu_kernels[0]; i++)
        if (!strcmp(emu_kernels[i].name, name)) return &emu_kernels[i];
    return NULL;
}

static inline uint32_t emu_params_size(const emu_kernel_t *k)
{
    uint32_t i = k->n_params - 1;
    return k->offsets[i] + k->sizes[i];
}

#endif /* SGCAP_TESTS_REPLAY_EMULATE_H */
