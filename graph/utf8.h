/* utf8.h: what counts as valid UTF-8 in a bundle, in one place for the
 * writer (bundle_emit.c, which replaces anything else) and the reader
 * (json_read.c, which refuses anything else): whatever one writes, the
 * other accepts. The rewrite report's writer (rewrite/json_writer.c) uses
 * it too (they are jansson's rules), and so does what shows strings to
 * people (text.c: well-formed UTF-8 is kept, anything else escaped).
 * Header-only so that the writer links nothing of the reader. */
#ifndef SGCAP_UTF8_H
#define SGCAP_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n >= 1 bytes left), 0 if
 * invalid: no overlong forms, no surrogates, nothing past U+10FFFF. */
static inline size_t sg_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

#endif /* SGCAP_UTF8_H */
