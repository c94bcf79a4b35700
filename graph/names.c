/* names.c: short, readable kernel names for labels and reports.
 *
 * "_Z5scaleIfEvPT_S0_i" becomes "scale<float>", a thrust agent with a page of
 * template arguments becomes "thrust::cuda_cub::core::_kernel_agent<...>", and
 * anything the C++ demangler does not accept is shown as it was captured.
 */
#include "views.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (abi::__cxa_demangle, extern "C"); the offline
 * users of graph/ link stdc++ for it so that no C++ source is needed. The
 * shim never links this file (docs/ARCHITECTURE.md): what capture needs of
 * a mangled name is read by mangled.c. */
char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status);

/* Mangled names past this length are shown raw: the demangler recurses on
 * its input, and names come from untrusted bundles. Real kernels (CUTLASS,
 * thrust) stay well below it. */
#define SG_DEMANGLE_MAX_INPUT 16384

/* Template argument lists longer than this collapse to "<...>": short ones
 * ("<float>", "<4, true>") tell instantiations apart, long ones drown the
 * name. */
#define SG_TEMPLATE_ARGS_KEEP 24

static int bracket_delta(char c)
{
    switch (c) {
    case '<':
    case '(':
    case '[':
    case '{':
        return 1;
    case '>':
    case ')':
    case ']':
    case '}':
        return -1;
    default:
        return 0;
    }
}

/* Narrow [*b, *e) of a demangled function signature to its qualified name:
 * drop the parameter list (the last top-level '(' group and what follows,
 * e.g. " const") and the return type that template functions carry
 * ("void scale<float>(float*)"). Parentheses inside brackets, as in
 * "(anonymous namespace)" or "{lambda(int)#1}", are not the parameter list. */
static void narrow_to_name(const char *s, size_t *b, size_t *e)
{
    size_t paren = SIZE_MAX, space = SIZE_MAX;
    int depth = 0;
    for (size_t i = *b; i < *e; i++) {
        char c = s[i];
        if (depth == 0 && c == '(') paren = i;
        int d = bracket_delta(c);
        /* "operator>" and friends can unbalance the count; never go below 0 */
        if (d < 0 && depth == 0) continue;
        depth += d;
    }
    if (paren != SIZE_MAX && paren > *b) *e = paren;
    depth = 0;
    for (size_t i = *b; i < *e; i++) {
        char c = s[i];
        if (depth == 0 && c == ' ') space = i;
        int d = bracket_delta(c);
        if (d < 0 && depth == 0) continue;
        depth += d;
    }
    if (space != SIZE_MAX && space + 1 < *e) *b = space + 1;
}

/* Append s[b..e) to buf with top-level template argument lists longer than
 * SG_TEMPLATE_ARGS_KEEP replaced by "<...>". Truncates to fit n bytes
 * (n >= 1), ending in "..." when something was cut. */
static void emit_collapsed(const char *s, size_t b, size_t e, char *buf, size_t n)
{
    size_t k = 0;
    bool cut = false;
    size_t i = b;
    while (i < e && !cut) {
        const char *piece = s + i;
        size_t len = 1;
        if (s[i] == '<') {
            /* find the matching '>' counting only angle brackets at this level */
            int depth = 0;
            size_t j = i;
            for (; j < e; j++) {
                if (s[j] == '<')
                    depth++;
                else if (s[j] == '>' && --depth == 0)
                    break;
            }
            if (j < e && j - i - 1 > SG_TEMPLATE_ARGS_KEEP) {
                piece = "<...>";
                len = 5;
                i = j + 1;
            } else {
                len = (j < e ? j + 1 : e) - i;
                i += len;
            }
        } else {
            i++;
        }
        if (k + len > n - 1) {
            len = n - 1 - k;
            cut = true;
        }
        memcpy(buf + k, piece, len);
        k += len;
    }
    if (!cut && i < e) cut = true;
    buf[k] = '\0';
    if (cut && n >= 4) memcpy(buf + (k >= 3 ? k - 3 : 0), "...", 4);
}

/* Reports and drawings name the same few kernels thousands of times, and
 * demangling dominated `sgcap rewrite` on large graphs: remember the last
 * demangled names (direct-mapped by hash; bounded memory; a mutex because
 * this also runs on several threads inside the shim). */
#define NAME_CACHE_SLOTS 64
#define NAME_CACHE_MAX_INPUT 1024
static struct {
    uint64_t hash;
    char *mangled;
    char *narrowed;
} name_cache[NAME_CACHE_SLOTS];
static pthread_mutex_t name_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The demangled name narrowed to what labels show, malloc'd; NULL when the
 * name does not demangle. */
static char *demangle_narrow(const char *mangled, size_t len)
{
    if (len > SG_DEMANGLE_MAX_INPUT || mangled[0] != '_' || mangled[1] != 'Z') return NULL;
    int status = -1;
    char *dem = __cxa_demangle(mangled, NULL, NULL, &status);
    if (status != 0) {
        free(dem);
        return NULL;
    }
    size_t b = 0, e = strlen(dem);
    narrow_to_name(dem, &b, &e);
    memmove(dem, dem + b, e - b);
    dem[e - b] = '\0';
    return dem;
}

const char *sg_kernel_short_name(const char *mangled, char *buf, size_t n)
{
    if (!buf || n == 0) return buf;
    if (!mangled || !*mangled) {
        static const char unnamed[] = "(unnamed)";
        emit_collapsed(unnamed, 0, sizeof unnamed - 1, buf, n);
        return buf;
    }
    size_t len = strlen(mangled);
    /* Only "_Z..." is a mangled function name: the demangler would happily
     * turn a plain C name like "i" or "f" into the type "int" or "float". */
    if (len < 2 || mangled[0] != '_' || mangled[1] != 'Z') {
        emit_collapsed(mangled, 0, len, buf, n);
        return buf;
    }
    bool cacheable = len <= NAME_CACHE_MAX_INPUT;
    uint64_t h = cacheable ? name_hash(mangled, len) : 0;
    unsigned slot = (unsigned)(h % NAME_CACHE_SLOTS);
    if (cacheable) {
        pthread_mutex_lock(&name_cache_lock);
        if (name_cache[slot].mangled && name_cache[slot].hash == h &&
            strcmp(name_cache[slot].mangled, mangled) == 0) {
            emit_collapsed(name_cache[slot].narrowed, 0, strlen(name_cache[slot].narrowed), buf, n);
            pthread_mutex_unlock(&name_cache_lock);
            return buf;
        }
        pthread_mutex_unlock(&name_cache_lock);
    }
    char *narrowed = demangle_narrow(mangled, len);
    if (!narrowed) {
        emit_collapsed(mangled, 0, len, buf, n);
        return buf;
    }
    emit_collapsed(narrowed, 0, strlen(narrowed), buf, n);
    char *key = cacheable ? strdup(mangled) : NULL;
    if (!key) {
        free(narrowed);
        return buf;
    }
    pthread_mutex_lock(&name_cache_lock);
    free(name_cache[slot].mangled);
    free(name_cache[slot].narrowed);
    name_cache[slot].hash = h;
    name_cache[slot].mangled = key;
    name_cache[slot].narrowed = narrowed;
    pthread_mutex_unlock(&name_cache_lock);
    return buf;
}
