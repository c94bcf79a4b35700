/* text.h: showing untrusted strings to people. Labels, kernel names, notes
 * and program names come from bundles, which anyone can write: printed raw,
 * "\x1b[2K\r" in a stream label could erase a line of `sgcap check` on a
 * terminal, and a newline could forge one. Every human-readable output of
 * sgcap (the CLI, the rewrite report, the DOT labels) passes such strings
 * through sg_text_escape, so they show as one line of visible text.
 *
 * What is kept: printable ASCII and well-formed UTF-8 of printable
 * characters. What is escaped: a backslash as "\\"; tab, newline and
 * carriage return as "\t", "\n", "\r"; any other C0 control or DEL as
 * "\xHH"; a byte that is not part of well-formed UTF-8 (stray continuation,
 * overlong form, surrogate, past U+10FFFF, cut short) as "\xHH"; C1 controls
 * (U+0080..U+009F) and the bidirectional controls that reorder what a
 * terminal shows (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069) as
 * "\uHHHH". The escaped form is plain ASCII plus the kept UTF-8, so it is
 * safe in a terminal, a log line and a DOT string (after DOT quoting). */
#ifndef SGCAP_TEXT_H
#define SGCAP_TEXT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Escape s (NULL reads as "") into dst (n bytes, NUL included; dst may be
 * NULL when n is 0). When the escaped text does not fit, it is cut at a
 * character or escape boundary and ends in "..." (when n >= 4). Returns the
 * length of the whole escaped text, without the NUL (like snprintf), so
 * sg_text_escape(NULL, 0, s) + 1 is what a buffer needs. */
size_t sg_text_escape(char *dst, size_t n, const char *s);

/* Write s escaped to f; 0, or -1 when the write failed. */
int sg_text_put(FILE *f, const char *s);

/* Length of the well-formed UTF-8 sequence at p (1 for ASCII, 2..4), or 0
 * when the bytes at p are not one (p points at a NUL-terminated string). */
size_t sg_text_utf8_len(const char *p);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_TEXT_H */
