/* sass_facts.h: what the SASS analysis (sass.h) found, as text, for people
 * and for the fixtures (tests/data/sass/expected_*.txt hold this format),
 * and the analysis of every kernel of a cubin file. Shared by the unit test
 * and tools/sass_dump (which the GPU machine runs without cmocka). */
#ifndef SGCAP_CODE_SASS_FACTS_H
#define SGCAP_CODE_SASS_FACTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "code/sass.h"

/* One kernel per block: "kernel NAME: STATUS, sm_90, parameters at ...",
 * then one line per access and per parameter word used as an address. */
void sg_sass_facts_write(FILE *o, const sg_sass_kernel_t *k, uint32_t n);
/* The same into a malloc'd string (NULL when out of memory). */
char *sg_sass_facts_string(const sg_sass_kernel_t *k, uint32_t n);

/* Analyse every kernel of the cubin file at path (those whose name contains
 * match, unless match is NULL) with one nvdisasm batch: *out (calloc'd, n
 * entries, free with sg_sass_kernels_free) holds them in the order of the
 * cubin's symbol table. Returns 0, SG_EIO (unreadable: err says why),
 * SG_EFORMAT (not an ELF cubin), SG_ENOMEM; a kernel that cannot be
 * analysed is still 0, with its status and reason. */
int sg_sass_analyze_cubin_file(const char *path, const sg_sass_options_t *opt, const char *match,
                               sg_sass_kernel_t **out, uint32_t *n, char *err, size_t errlen);
/* Every function of an ELF-mode nvdisasm listing, analysed for sm_<arch>
 * (the fixtures' second format). 0, or SG_EINVAL / SG_ELIMIT / SG_ENOMEM
 * from the parse, with its reason in err. */
int sg_sass_analyze_listing(const char *text, size_t len, uint32_t arch, sg_sass_kernel_t **out,
                            uint32_t *n, char *err, size_t errlen);
void sg_sass_kernels_free(sg_sass_kernel_t *k, uint32_t n);

/* A whole file (a cubin, a listing, an expected-facts file), malloc'd with a
 * NUL after its *len bytes; NULL with errno set when it cannot be read. */
char *sg_sass_read_file(const char *path, size_t *len);

#endif /* SGCAP_CODE_SASS_FACTS_H */
