/* config.c: the optimizer's settings from the environment (opt.h; the
 * table in docs/INJECT.md). Read once, when the optimizer starts. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"

static void note(char *warn, size_t n, const char *name, const char *value, const char *used)
{
    size_t l = strlen(warn);
    if (l + 1 >= n) return;
    snprintf(warn + l, n - l, "%s%s=%.40s not understood (using %s)", l ? "; " : "", name, value,
             used);
}

static bool flag(const char *name)
{
    const char *s = getenv(name);
    return s && *s && strcmp(s, "0") != 0;
}

void sg_opt_config_read(sg_opt_config_t *c, char *warn, size_t n)
{
    if (n) warn[0] = '\0';
    c->check_launch = 1;
    c->shadow_max_bytes = 1ull << 30;
    const char *s = getenv("SGCAP_OPTIMIZE_CHECK");
    if (s && *s) {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 10);
        if (strcmp(s, "all") == 0)
            c->check_launch = 0;
        else if (s[0] != '-' && *end == '\0' && v >= 1 && v <= UINT32_MAX)
            c->check_launch = (uint32_t)v;
        else
            note(warn, n, "SGCAP_OPTIMIZE_CHECK", s, "1");
    }
    s = getenv("SGCAP_SHADOW_MAX_BYTES");
    if (s && *s) {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 0);
        if (s[0] != '-' && *end == '\0')
            c->shadow_max_bytes = v;
        else
            note(warn, n, "SGCAP_SHADOW_MAX_BYTES", s, "1 GiB");
    }
    c->fuse_ms = SG_OPT_FUSE_MS;
    s = getenv("SGCAP_OPTIMIZE_FUSE_MS");
    if (s && *s) {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 10);
        if (s[0] != '-' && *end == '\0' && v <= UINT32_MAX)
            c->fuse_ms = (uint32_t)v;
        else
            note(warn, n, "SGCAP_OPTIMIZE_FUSE_MS", s, "2000");
    }
    c->plant = flag("SGCAP_OPTIMIZE_TEST_PLANT");
    /* A planted wrong result needs an optimized graph to plant it in. */
    c->force = flag("SGCAP_OPTIMIZE_FORCE") || c->plant;
}
