/* json_writer.c: JSON text in jansson's indent-2 format (see json_writer.h). */
#include "json_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/utf8.h" /* jansson's rules too */

enum { INDENT = 2 };

void sg_jw_init(sg_jw_t *w, unsigned depth)
{
    memset(w, 0, sizeof *w);
    w->depth0 = depth;
}

void sg_jw_free(sg_jw_t *w)
{
    free(w->buf);
    unsigned d = w->depth0;
    memset(w, 0, sizeof *w);
    w->depth0 = d;
}

const char *sg_jw_text(const sg_jw_t *w)
{
    return w->buf ? w->buf : "";
}

static bool reserve(sg_jw_t *w, size_t n)
{
    if (w->err) return false;
    if (w->len + n + 1 <= w->cap) return true;
    size_t nc = w->cap ? w->cap : 256;
    while (nc < w->len + n + 1) nc *= 2;
    char *p = realloc(w->buf, nc);
    if (!p) {
        w->err = SG_ENOMEM;
        return false;
    }
    w->buf = p;
    w->cap = nc;
    return true;
}

void sg_jw_reserve(sg_jw_t *w, size_t n)
{
    if (w->err || w->len + n + 1 <= w->cap) return;
    char *p = realloc(w->buf, w->len + n + 1);
    if (!p) return; /* only a hint: growth goes on by doubling */
    w->buf = p;
    w->cap = w->len + n + 1;
}

static void put(sg_jw_t *w, const char *s, size_t n)
{
    if (!reserve(w, n)) return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void newline_indent(sg_jw_t *w, unsigned depth)
{
    size_t n = 1 + (size_t)depth * INDENT;
    if (!reserve(w, n)) return;
    w->buf[w->len] = '\n';
    memset(w->buf + w->len + 1, ' ', n - 1);
    w->len += n;
    w->buf[w->len] = '\0';
}

/* What goes before a value or key: nothing after a key or at the top;
 * in a container, a line break (after a comma unless it is the first). */
static void before_item(sg_jw_t *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->n_open == 0) return;
    uint32_t *c = &w->count[w->n_open - 1];
    if (*c) put(w, ",", 1);
    newline_indent(w, w->depth0 + w->n_open);
    (*c)++;
}

static void open_container(sg_jw_t *w, char open, char close)
{
    before_item(w);
    if (w->n_open == SG_JW_MAX_OPEN) {
        if (!w->err) w->err = SG_ELIMIT;
        return;
    }
    put(w, &open, 1);
    w->close[w->n_open] = close;
    w->count[w->n_open++] = 0;
}

void sg_jw_object(sg_jw_t *w)
{
    open_container(w, '{', '}');
}

void sg_jw_array(sg_jw_t *w)
{
    open_container(w, '[', ']');
}

void sg_jw_end(sg_jw_t *w)
{
    if (w->n_open == 0) return;
    unsigned k = --w->n_open;
    if (w->count[k]) newline_indent(w, w->depth0 + k);
    put(w, &w->close[k], 1);
}

/* ---- scalars ------------------------------------------------------------------------- */

static void put_string(sg_jw_t *w, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t len = strlen((const char *)s);
    put(w, "\"", 1);
    size_t run = 0; /* bytes copied as they are, pending */
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n = sg_utf8_seq(s + i, len - i);
        if (n > 1 || (n == 1 && c >= 0x20 && c != '"' && c != '\\')) {
            i += n;
            run += n;
            continue;
        }
        put(w, (const char *)s + i - run, run);
        run = 0;
        char esc[8];
        const char *t = esc;
        size_t tl = 2;
        if (n == 0) {
            t = "\xEF\xBF\xBD"; /* U+FFFD for a byte that starts no valid sequence */
            tl = 3;
        } else {
            switch (c) {
            case '\\': t = "\\\\"; break;
            case '"': t = "\\\""; break;
            case '\b': t = "\\b"; break;
            case '\f': t = "\\f"; break;
            case '\n': t = "\\n"; break;
            case '\r': t = "\\r"; break;
            case '\t': t = "\\t"; break;
            default:
                snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c);
                tl = 6;
                break;
            }
        }
        put(w, t, tl);
        i += 1;
    }
    put(w, (const char *)s + len - run, run);
    put(w, "\"", 1);
}

void sg_jw_key(sg_jw_t *w, const char *key)
{
    before_item(w);
    put_string(w, key);
    put(w, ": ", 2);
    w->after_key = true;
}

void sg_jw_string(sg_jw_t *w, const char *s)
{
    before_item(w);
    put_string(w, s);
}

void sg_jw_int(sg_jw_t *w, long long v)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%lld", v);
    before_item(w);
    put(w, b, (size_t)n);
}

/* jansson's jsonp_dtostr (printf variant): "%.17g", a ".0" when the text
 * would read back as an integer, no '+' and no leading zeros in the
 * exponent. */
void sg_jw_real(sg_jw_t *w, double v)
{
    if (!isfinite(v)) {
        sg_jw_null(w);
        return;
    }
    char b[40];
    int n = snprintf(b, sizeof b, "%.17g", v);
    if (n < 0 || (size_t)n >= sizeof b - 3) {
        w->err = SG_EINVAL;
        return;
    }
    size_t len = (size_t)n;
    for (size_t i = 0; i < len; i++)
        if (b[i] == ',') b[i] = '.'; /* a locale's decimal comma */
    if (!strchr(b, '.') && !strchr(b, 'e')) {
        memcpy(b + len, ".0", 3);
        len += 2;
    }
    char *start = strchr(b, 'e');
    if (start) {
        start++;
        char *end = start + 1;
        if (*start == '-') start++;
        while (*end == '0') end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - b) + 1);
            len -= (size_t)(end - start);
        }
    }
    before_item(w);
    put(w, b, len);
}

void sg_jw_bool(sg_jw_t *w, bool v)
{
    before_item(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void sg_jw_null(sg_jw_t *w)
{
    before_item(w);
    put(w, "null", 4);
}

void sg_jw_json(sg_jw_t *w, const json_t *v)
{
    if (!v) {
        if (!w->err) w->err = SG_ENOMEM; /* a failed jansson constructor */
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        sg_jw_object(w);
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            sg_jw_key(w, json_object_iter_key(it));
            sg_jw_json(w, json_object_iter_value(it));
        }
        sg_jw_end(w);
        break;
    }
    case JSON_ARRAY:
        sg_jw_array(w);
        for (size_t i = 0; i < json_array_size(v); i++) sg_jw_json(w, json_array_get(v, i));
        sg_jw_end(w);
        break;
    case JSON_STRING: sg_jw_string(w, json_string_value(v)); break;
    case JSON_INTEGER: sg_jw_int(w, (long long)json_integer_value(v)); break;
    case JSON_REAL: sg_jw_real(w, json_real_value(v)); break;
    case JSON_TRUE: sg_jw_bool(w, true); break;
    case JSON_FALSE: sg_jw_bool(w, false); break;
    case JSON_NULL: sg_jw_null(w); break;
    }
}

void sg_jw_raw(sg_jw_t *w, const char *text, size_t len)
{
    before_item(w);
    put(w, text, len);
}

unsigned sg_jw_depth(const sg_jw_t *w)
{
    return w->depth0 + w->n_open;
}

void sg_jw_kstring(sg_jw_t *w, const char *key, const char *s)
{
    sg_jw_key(w, key);
    sg_jw_string(w, s);
}

void sg_jw_kint(sg_jw_t *w, const char *key, long long v)
{
    sg_jw_key(w, key);
    sg_jw_int(w, v);
}

void sg_jw_kreal(sg_jw_t *w, const char *key, double v)
{
    sg_jw_key(w, key);
    sg_jw_real(w, v);
}

void sg_jw_kbool(sg_jw_t *w, const char *key, bool v)
{
    sg_jw_key(w, key);
    sg_jw_bool(w, v);
}

void sg_jw_kid(sg_jw_t *w, const char *key, uint32_t id)
{
    sg_jw_key(w, key);
    if (id == SG_NONE)
        sg_jw_null(w);
    else
        sg_jw_int(w, id);
}
