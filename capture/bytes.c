/* bytes.c: the byte runs of bytes.h, growing. */
#include "bytes.h"

#include <stdlib.h>

bool sg_bytes_grow(sg_bytes_t *b, size_t n)
{
    size_t c = b->cap ? b->cap : 1024;
    while (c < b->n + n) c *= 2;
    uint8_t *q = realloc(b->p, c);
    if (!q) {
        b->oom = true;
        return false;
    }
    b->p = q;
    b->cap = c;
    return true;
}
