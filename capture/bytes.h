/* bytes.h: the byte runs the shim's digests gather before hashing them
 * once (rawdigest.c reads a graph back into two, calls.c notes a launch
 * into two): an XXH3 streaming update costs tens of nanoseconds a call, and
 * a digest makes dozens of small ones. Out of memory sets oom; the caller
 * then gives up the digest. The append is inline (the shim's hot path);
 * growing is not (bytes.c). */
#ifndef SGCAP_CAPTURE_BYTES_H
#define SGCAP_CAPTURE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

typedef struct {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} sg_bytes_t;

static inline void sg_bytes_reset(sg_bytes_t *b)
{
    b->n = 0;
    b->oom = false;
}

/* Room for n more bytes, or oom set and false. */
bool sg_bytes_grow(sg_bytes_t *b, size_t n) __attribute__((visibility("hidden")));

static inline __attribute__((always_inline)) void sg_bytes_put(sg_bytes_t *b, const void *p,
                                                               size_t n)
{
    if (b->n + n > b->cap && !sg_bytes_grow(b, n)) return;
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static inline void sg_bytes_u64(sg_bytes_t *b, uint64_t v)
{
    sg_bytes_put(b, &v, sizeof v);
}

static inline void sg_bytes_u32(sg_bytes_t *b, uint32_t v)
{
    sg_bytes_put(b, &v, sizeof v);
}

/* A seeded hash of n bytes: XXH3's own seeded form derives a fresh secret
 * (~200 instructions) for every input over 240 bytes; hashing the bytes
 * unseeded and then the pair (hash, seed) costs one short hash instead. */
static inline uint64_t sg_bytes_hash(const void *p, size_t n, uint64_t seed)
{
    uint64_t w[2] = {XXH3_64bits(p, n), seed};
    return XXH3_64bits(w, sizeof w);
}

#endif
