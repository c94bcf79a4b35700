/* bytes.h: little-endian reads and bounds checks for the readers of
 * untrusted code images (fatbin.c, elf_image.c). */
#ifndef SGCAP_CODE_BYTES_H
#define SGCAP_CODE_BYTES_H

#include <stdbool.h>
#include <stdint.h>

static inline uint16_t sg_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t sg_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t sg_rd64(const uint8_t *p)
{
    return (uint64_t)sg_rd32(p) | ((uint64_t)sg_rd32(p + 4) << 32);
}

/* [off, off+len) lies inside n bytes, without overflow. */
static inline bool sg_in_bounds(uint64_t off, uint64_t len, uint64_t n)
{
    return off <= n && len <= n - off;
}

#endif /* SGCAP_CODE_BYTES_H */
