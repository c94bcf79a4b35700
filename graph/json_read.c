/* json_read.c: the pull reader of json_read.h. One pass, no allocation
 * except for a number longer than a stack buffer; every rule of RFC 8259
 * checked where the byte is read, so a skipped value is as well checked as
 * a decoded one. */
#include "json_read.h"
#include "utf8.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_json_init(sg_json_reader_t *r, const char *text, size_t len)
{
    memset(r, 0, sizeof *r);
    r->text = text;
    r->len = len;
}

bool sg_json_fail(sg_json_reader_t *r, size_t pos, const char *fmt, ...)
{
    if (r->failed) return false;
    r->failed = true;
    r->error_pos = pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return false;
}

void sg_json_where(const sg_json_reader_t *r, size_t pos, int *line, int *column)
{
    int l = 1, c = 1;
    if (pos > r->len) pos = r->len;
    for (size_t i = 0; i < pos; i++) {
        unsigned char ch = (unsigned char)r->text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xc0) != 0x80) { /* count characters, not UTF-8 bytes */
            c++;
        }
    }
    *line = l;
    *column = c;
}

static void skip_ws(sg_json_reader_t *r)
{
    while (r->pos < r->len) {
        char ch = r->text[r->pos];
        if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') break;
        r->pos++;
    }
}

/* What is at pos, for messages. */
static const char *what_is_at(const sg_json_reader_t *r, size_t pos, char *buf, size_t n)
{
    if (pos >= r->len) return "the end of the input";
    unsigned char ch = (unsigned char)r->text[pos];
    if (ch >= 0x21 && ch < 0x7f)
        snprintf(buf, n, "'%c'", ch);
    else
        snprintf(buf, n, "byte 0x%02x", ch);
    return buf;
}

static bool unexpected(sg_json_reader_t *r, const char *wanted)
{
    char buf[16];
    return sg_json_fail(r, r->pos, "expected %s, found %s", wanted,
                        what_is_at(r, r->pos, buf, sizeof buf));
}

size_t sg_json_tell(sg_json_reader_t *r)
{
    skip_ws(r);
    return r->pos;
}

void sg_json_seek(sg_json_reader_t *r, size_t pos, int depth)
{
    if (r->failed) return;
    r->pos = pos;
    r->depth = depth;
}

/* Where a number starting at pos ends, and whether it is an integer; no
 * checking (sg_json_number does that). */
static size_t number_end(const sg_json_reader_t *r, size_t pos, bool *integer)
{
    *integer = true;
    while (pos < r->len) {
        char ch = r->text[pos];
        if (ch == '.' || ch == 'e' || ch == 'E') {
            *integer = false;
        } else if (!(ch >= '0' && ch <= '9') && ch != '-' && ch != '+') {
            break;
        }
        pos++;
    }
    return pos;
}

sg_json_type_t sg_json_peek(sg_json_reader_t *r)
{
    if (r->failed) return SG_JSON_BAD;
    skip_ws(r);
    if (r->pos >= r->len) return SG_JSON_BAD;
    char ch = r->text[r->pos];
    switch (ch) {
    case '{':
        return SG_JSON_OBJECT;
    case '[':
        return SG_JSON_ARRAY;
    case '"':
        return SG_JSON_STRING;
    case 't':
    case 'f':
        return SG_JSON_BOOL;
    case 'n':
        return SG_JSON_NULL;
    default:
        if (ch == '-' || (ch >= '0' && ch <= '9')) {
            bool integer;
            number_end(r, r->pos, &integer);
            return integer ? SG_JSON_INTEGER : SG_JSON_REAL;
        }
        return SG_JSON_BAD;
    }
}

/* Does a value start here? (Checked after ':', ',' and '[' so that a
 * missing value is reported where it is missing.) */
static bool value_follows(sg_json_reader_t *r)
{
    if (sg_json_peek(r) != SG_JSON_BAD) return true;
    if (r->failed) return false;
    return unexpected(r, "a value");
}

static bool enter(sg_json_reader_t *r, char open)
{
    if (r->failed) return false;
    skip_ws(r);
    if (r->pos >= r->len || r->text[r->pos] != open)
        return unexpected(r, open == '{' ? "'{'" : "'['");
    if (r->depth >= SG_JSON_MAX_DEPTH)
        return sg_json_fail(r, r->pos, "nested deeper than %d arrays and objects",
                            SG_JSON_MAX_DEPTH);
    r->pos++;
    r->depth++;
    return true;
}

bool sg_json_object_begin(sg_json_reader_t *r)
{
    return enter(r, '{');
}

bool sg_json_array_begin(sg_json_reader_t *r)
{
    return enter(r, '[');
}

/* Before member/element i: the separator, or the closing bracket (0). */
static int next_in(sg_json_reader_t *r, size_t i, char close)
{
    if (r->failed) return -1;
    skip_ws(r);
    if (r->pos < r->len && r->text[r->pos] == close) {
        r->pos++;
        r->depth--;
        return 0;
    }
    if (i > 0) {
        if (r->pos >= r->len || r->text[r->pos] != ',') {
            char want[16];
            snprintf(want, sizeof want, "',' or '%c'", close);
            unexpected(r, want);
            return -1;
        }
        r->pos++;
        skip_ws(r);
    }
    return 1;
}

int sg_json_member(sg_json_reader_t *r, size_t i, sg_json_string_t *key)
{
    int k = next_in(r, i, '}');
    if (k != 1) return k;
    if (r->pos >= r->len || r->text[r->pos] != '"') {
        unexpected(r, "a string (an object key)");
        return -1;
    }
    if (!sg_json_string(r, key)) return -1;
    skip_ws(r);
    if (r->pos >= r->len || r->text[r->pos] != ':') {
        unexpected(r, "':' after the key");
        return -1;
    }
    r->pos++;
    return value_follows(r) ? 1 : -1;
}

int sg_json_element(sg_json_reader_t *r, size_t i)
{
    int k = next_in(r, i, ']');
    if (k != 1) return k;
    return value_follows(r) ? 1 : -1;
}

/* ---- strings ----------------------------------------------------------------------------- */

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0) return -1;
        v = v << 4 | d;
    }
    return v;
}

/* The code point of the \u escape at p (n bytes left, p at the backslash)
 * and the bytes it spans; 0 on error (message in r). */
static unsigned unicode_escape(sg_json_reader_t *r, size_t at, size_t *span)
{
    const char *p = r->text + at;
    size_t n = r->len - at;
    int hi = n >= 6 ? hex4(p + 2) : -1;
    if (hi < 0) return sg_json_fail(r, at, "\\u needs four hex digits"), 0;
    if (hi == 0) return sg_json_fail(r, at, "\\u0000 is not allowed in a string"), 0;
    *span = 6;
    if (hi >= 0xdc00 && hi <= 0xdfff)
        return sg_json_fail(r, at, "\\u%04x is a lone low surrogate", (unsigned)hi), 0;
    if (hi < 0xd800 || hi > 0xdbff) return (unsigned)hi;
    int lo = n >= 12 && p[6] == '\\' && p[7] == 'u' ? hex4(p + 8) : -1;
    if (lo < 0xdc00 || lo > 0xdfff)
        return sg_json_fail(r, at, "\\u%04x is a high surrogate without its low half",
                            (unsigned)hi),
               0;
    *span = 12;
    return 0x10000u + (((unsigned)hi - 0xd800u) << 10) + ((unsigned)lo - 0xdc00u);
}

static size_t utf8_len(unsigned cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

bool sg_json_string(sg_json_reader_t *r, sg_json_string_t *s)
{
    if (r->failed) return false;
    skip_ws(r);
    if (r->pos >= r->len || r->text[r->pos] != '"') return unexpected(r, "a string");
    size_t i = r->pos + 1, len = 0;
    s->pos = i;
    s->escaped = false;
    const unsigned char *t = (const unsigned char *)r->text;
    for (;;) {
        if (i >= r->len) return sg_json_fail(r, r->pos, "unterminated string");
        unsigned char ch = t[i];
        if (ch == '"') break;
        if (ch < 0x20) return sg_json_fail(r, i, "control character 0x%02x in a string", ch);
        if (ch == '\\') {
            s->escaped = true;
            if (i + 1 >= r->len) return sg_json_fail(r, i, "unterminated string");
            char e = (char)t[i + 1];
            if (e == 'u') {
                size_t span = 0;
                unsigned cp = unicode_escape(r, i, &span);
                if (!cp) return false;
                len += utf8_len(cp);
                i += span;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || !e)
                return sg_json_fail(r, i, "invalid escape '\\%c'", e >= 0x21 && e < 0x7f ? e : '?');
            len++;
            i += 2;
            continue;
        }
        if (ch >= 0x80) {
            size_t l = sg_utf8_seq(t + i, r->len - i);
            if (!l) return sg_json_fail(r, i, "invalid UTF-8 in a string");
            len += l;
            i += l;
            continue;
        }
        len++;
        i++;
    }
    s->raw_len = i - s->pos;
    s->len = len;
    r->pos = i + 1;
    return true;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

void sg_json_decode(const sg_json_reader_t *r, const sg_json_string_t *s, char *out)
{
    const char *p = r->text + s->pos, *end = p + s->raw_len;
    if (!s->escaped) {
        memcpy(out, p, s->raw_len);
        out[s->raw_len] = '\0';
        return;
    }
    char *o = out;
    while (p < end) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        char e = p[1];
        if (e == 'u') {
            /* already checked by sg_json_string */
            unsigned hi = (unsigned)hex4(p + 2), cp = hi;
            p += 6;
            if (hi >= 0xd800 && hi <= 0xdbff) {
                cp = 0x10000u + ((hi - 0xd800u) << 10) + ((unsigned)hex4(p + 2) - 0xdc00u);
                p += 6;
            }
            o = put_utf8(o, cp);
            continue;
        }
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        *o++ = to[strchr(from, e) - from];
        p += 2;
    }
    *o = '\0';
}

bool sg_json_string_is(const sg_json_reader_t *r, const sg_json_string_t *s, const char *lit)
{
    size_t n = strlen(lit);
    if (s->len != n) return false;
    if (!s->escaped) return memcmp(r->text + s->pos, lit, n) == 0;
    char buf[256];
    if (n >= sizeof buf) return false; /* no key or name of ours is that long */
    sg_json_decode(r, s, buf);
    return memcmp(buf, lit, n) == 0;
}

/* ---- numbers and literals ---------------------------------------------------------------- */

static bool digits(const sg_json_reader_t *r, size_t *i)
{
    size_t start = *i;
    while (*i < r->len && r->text[*i] >= '0' && r->text[*i] <= '9')
        (*i)++;
    return *i > start;
}

bool sg_json_number(sg_json_reader_t *r, sg_json_number_t *n)
{
    if (r->failed) return false;
    skip_ws(r);
    size_t start = r->pos, i = start;
    bool neg = i < r->len && r->text[i] == '-';
    if (neg) i++;
    if (i >= r->len || !(r->text[i] >= '0' && r->text[i] <= '9')) return unexpected(r, "a number");
    if (r->text[i] == '0') {
        i++;
        if (i < r->len && r->text[i] >= '0' && r->text[i] <= '9')
            return sg_json_fail(r, start, "a number may not start with 0");
    } else {
        digits(r, &i);
    }
    bool integer = true;
    if (i < r->len && r->text[i] == '.') {
        integer = false;
        i++;
        if (!digits(r, &i)) return sg_json_fail(r, i, "expected a digit after '.'");
    }
    if (i < r->len && (r->text[i] == 'e' || r->text[i] == 'E')) {
        integer = false;
        i++;
        if (i < r->len && (r->text[i] == '+' || r->text[i] == '-')) i++;
        if (!digits(r, &i)) return sg_json_fail(r, i, "expected a digit in the exponent");
    }
    n->is_integer = integer;
    if (integer) {
        /* accumulate negatively so INT64_MIN fits */
        int64_t v = 0;
        for (size_t k = start + neg; k < i; k++) {
            int d = r->text[k] - '0';
            if (v < (INT64_MIN + d) / 10)
                return sg_json_fail(r, start, "integer out of range (more than 64 bits)");
            v = v * 10 - d;
        }
        if (!neg) {
            if (v == INT64_MIN)
                return sg_json_fail(r, start, "integer out of range (more than 64 bits)");
            v = -v;
        }
        n->integer = v;
        n->real = (double)v;
        r->pos = i;
        return true;
    }
    /* strtod wants a NUL-terminated copy in the locale's decimal point */
    size_t tn = i - start;
    char small[128], *buf = tn < sizeof small ? small : malloc(tn + 8);
    if (!buf) return sg_json_fail(r, start, "out of memory reading a %zu-digit number", tn);
    memcpy(buf, r->text + start, tn);
    buf[tn] = '\0';
    const char *point = localeconv()->decimal_point;
    char *dot = strchr(buf, '.');
    if (dot && point && point[0] && strcmp(point, ".") != 0 && strlen(point) == 1) *dot = point[0];
    errno = 0;
    double d = strtod(buf, NULL);
    int err = errno;
    if (buf != small) free(buf);
    if (err == ERANGE && isinf(d)) return sg_json_fail(r, start, "real number out of range");
    n->real = d;
    n->integer = 0;
    r->pos = i;
    return true;
}

static bool literal(sg_json_reader_t *r, const char *word)
{
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->text + r->pos, word, n) != 0)
        return sg_json_fail(r, r->pos, "invalid literal (true, false or null expected)");
    r->pos += n;
    return true;
}

bool sg_json_bool(sg_json_reader_t *r, bool *b)
{
    if (r->failed) return false;
    skip_ws(r);
    if (r->pos < r->len && r->text[r->pos] == 't') {
        *b = true;
        return literal(r, "true");
    }
    if (r->pos < r->len && r->text[r->pos] == 'f') {
        *b = false;
        return literal(r, "false");
    }
    return unexpected(r, "true or false");
}

bool sg_json_null(sg_json_reader_t *r)
{
    if (r->failed) return false;
    skip_ws(r);
    return literal(r, "null");
}

/* ---- skipping ------------------------------------------------------------------------------ */

bool sg_json_skip(sg_json_reader_t *r, size_t *children)
{
    if (children) *children = 0;
    sg_json_type_t t = sg_json_peek(r);
    switch (t) {
    case SG_JSON_OBJECT: {
        if (!sg_json_object_begin(r)) return false;
        sg_json_string_t key;
        size_t i = 0;
        int k;
        while ((k = sg_json_member(r, i, &key)) == 1) {
            if (!sg_json_skip(r, NULL)) return false;
            i++;
        }
        if (children) *children = i;
        return k == 0;
    }
    case SG_JSON_ARRAY: {
        if (!sg_json_array_begin(r)) return false;
        size_t i = 0;
        int k;
        while ((k = sg_json_element(r, i)) == 1) {
            if (!sg_json_skip(r, NULL)) return false;
            i++;
        }
        if (children) *children = i;
        return k == 0;
    }
    case SG_JSON_STRING: {
        sg_json_string_t s;
        return sg_json_string(r, &s);
    }
    case SG_JSON_INTEGER:
    case SG_JSON_REAL: {
        sg_json_number_t n;
        return sg_json_number(r, &n);
    }
    case SG_JSON_BOOL: {
        bool b;
        return sg_json_bool(r, &b);
    }
    case SG_JSON_NULL:
        return sg_json_null(r);
    default:
        return r->failed ? false : unexpected(r, "a value");
    }
}

bool sg_json_end(sg_json_reader_t *r)
{
    if (r->failed) return false;
    skip_ws(r);
    if (r->pos == r->len) return true;
    return unexpected(r, "the end of the input after the top-level value");
}
