/* text.c: escaping untrusted strings for people (see text.h). */
#include "text.h"
#include "utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t sg_text_utf8_len(const char *s)
{
    /* graph/utf8.h's rule; a NUL ends the bytes there are */
    return sg_utf8_seq((const unsigned char *)s, strnlen(s, 4));
}

static uint32_t decode(const unsigned char *p, size_t len)
{
    static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t cp = p[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (p[i] & 0x3f);
    return cp;
}

/* Characters a terminal acts on instead of showing: C1 controls and the
 * bidirectional marks, embeddings, overrides and isolates. */
static bool hidden_control(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The escaped form of the character at *s: into piece (at least 8 bytes,
 * not NUL-terminated); returns its length and advances *s. */
static size_t next_piece(const char **s, char piece[8])
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)*s;
    unsigned char c = p[0];
    if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
        piece[0] = '\\';
        piece[1] = c == '\\' ? '\\' : c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
        *s += 1;
        return 2;
    }
    if (c >= 0x20 && c < 0x7f) {
        piece[0] = (char)c;
        *s += 1;
        return 1;
    }
    size_t len = c < 0x80 ? 0 : sg_text_utf8_len(*s); /* 0: C0 control, DEL, bad byte */
    if (len == 0) {
        piece[0] = '\\', piece[1] = 'x', piece[2] = hex[c >> 4], piece[3] = hex[c & 15];
        *s += 1;
        return 4;
    }
    uint32_t cp = decode(p, len);
    *s += len;
    if (hidden_control(cp)) {
        piece[0] = '\\', piece[1] = 'u';
        for (int i = 0; i < 4; i++)
            piece[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
        return 6;
    }
    memcpy(piece, p, len);
    return len;
}

size_t sg_text_escape(char *dst, size_t n, const char *s)
{
    if (!s) s = "";
    char piece[8];
    size_t total = 0;
    for (const char *p = s; *p;)
        total += next_piece(&p, piece);
    if (n == 0 || !dst) return total;
    /* room for the text, or for a cut text and "..." */
    bool cut = total > n - 1;
    size_t limit = !cut ? n - 1 : n >= 4 ? n - 4 : n - 1;
    size_t o = 0;
    for (const char *p = s; *p;) {
        size_t len = next_piece(&p, piece);
        if (o + len > limit) break;
        memcpy(dst + o, piece, len);
        o += len;
    }
    if (cut && n >= 4) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
    return total;
}

int sg_text_put(FILE *f, const char *s)
{
    if (!s) s = "";
    char piece[8];
    for (const char *p = s; *p;)
        if (fwrite(piece, 1, next_piece(&p, piece), f) == 0) return -1;
    return ferror(f) ? -1 : 0;
}
