/* plural.h: the noun for a count in text meant for people ("1 node",
 * "0 nodes", "2 nodes"), so that every summary line of sgcap agrees:
 *     printf("%u %s", n, sg_plural(n, "node", "nodes"));
 * Header only: the shim uses it too. */
#ifndef SGCAP_PLURAL_H
#define SGCAP_PLURAL_H

#include <stdint.h>

static inline const char *sg_plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

#endif /* SGCAP_PLURAL_H */
