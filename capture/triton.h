/* triton.h: find the PTX that Triton's cache keeps next to a cubin the
 * program loaded (triton.c says why and how). No CUDA, no locking (the
 * caller serializes), unit-tested on the CPU with a fake cache. */
#ifndef SGCAP_CAPTURE_TRITON_H
#define SGCAP_CAPTURE_TRITON_H

#include <stdbool.h>
#include <stddef.h>

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "<dir>/<stem>.cubin" -> the contents of "<dir>/<stem>.ptx" (malloc'd,
 * NUL-terminated, *len without the NUL; where = its path). SG_ENOENT when
 * the path is not a .cubin or there is no such PTX. */
int sg_triton_ptx_beside(const char *cubin_path, char **ptx, size_t *len, char *where, size_t n);

/* The PTX of the cache directory whose <kernel>.cubin holds exactly these
 * bytes. The cache is $TRITON_CACHE_DIR, else $HOME/.triton/cache (or the
 * directory given to sg_triton_set_cache_dir). SG_ENOENT when none. */
int sg_triton_ptx_in_cache(const char *kernel, const void *cubin, size_t size, char **ptx,
                           size_t *len, char *where, size_t n);

/* Tests: use this cache directory instead of the environment's. */
void sg_triton_set_cache_dir(const char *dir);
/* Drop the index (tests; fork children may keep it). */
void sg_triton_forget(void);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CAPTURE_TRITON_H */
