/* json_read.h: a pull reader over JSON text held in memory (RFC 8259), for
 * the bundle reader (bundle_parse.c).
 *
 * It builds no tree: the caller walks the text value by value and decodes
 * what it knows straight into its own structures, and skips what it does
 * not know at no memory cost. Everything it passes over, skipped or not, is
 * fully checked: syntax, UTF-8 (no overlongs, surrogates or code points past
 * U+10FFFF), escapes (no \u0000, paired surrogates), integers that fit in 64
 * signed bits, finite reals, nesting at most SG_JSON_MAX_DEPTH deep. The
 * first error stops the reader; sg_json_where turns its byte offset into a
 * line and column for the message.
 *
 * Positions are byte offsets into the text, so the caller can come back to a
 * value later (sg_json_seek) without copying it. */
#ifndef SGCAP_JSON_READ_H
#define SGCAP_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_JSON_MAX_DEPTH 2048

typedef enum {
    SG_JSON_BAD = 0, /* no value here (or the reader has failed) */
    SG_JSON_OBJECT,
    SG_JSON_ARRAY,
    SG_JSON_STRING,
    SG_JSON_INTEGER,
    SG_JSON_REAL,
    SG_JSON_BOOL,
    SG_JSON_NULL,
} sg_json_type_t;

typedef struct {
    const char *text;
    size_t len, pos;
    int depth; /* containers entered and not yet left */
    bool failed;
    size_t error_pos; /* where the first error is */
    char error[160];  /* what it is */
} sg_json_reader_t;

/* A string token: where its content starts and how long it is decoded. */
typedef struct {
    size_t pos;     /* first byte after the opening quote */
    size_t raw_len; /* bytes up to the closing quote */
    size_t len;     /* bytes once escapes are decoded */
    bool escaped;   /* has a backslash (decoding is more than a copy) */
} sg_json_string_t;

typedef struct {
    bool is_integer; /* no fraction, no exponent */
    int64_t integer; /* when is_integer */
    double real;     /* always */
} sg_json_number_t;

void sg_json_init(sg_json_reader_t *r, const char *text, size_t len);

/* Type of the next value (whitespace skipped), without consuming it. */
sg_json_type_t sg_json_peek(sg_json_reader_t *r);
/* Offset of the next value (after whitespace). */
size_t sg_json_tell(sg_json_reader_t *r);
/* Continue at pos (an offset sg_json_tell returned) at container depth depth. */
void sg_json_seek(sg_json_reader_t *r, size_t pos, int depth);

/* Members of an object: call sg_json_object_begin on '{', then
 * sg_json_member(r, i, &key) with i = 0, 1, ... until it returns 0 (the '}'
 * was consumed); 1 means a key was read and its value is next; -1 an error. */
bool sg_json_object_begin(sg_json_reader_t *r);
int sg_json_member(sg_json_reader_t *r, size_t i, sg_json_string_t *key);
/* Elements of an array, likewise: 1 = an element is next, 0 = ']' consumed. */
bool sg_json_array_begin(sg_json_reader_t *r);
int sg_json_element(sg_json_reader_t *r, size_t i);

/* Scalars: each consumes one value of its type, or fails (the caller peeks
 * first to report a wrong type in its own words). */
bool sg_json_string(sg_json_reader_t *r, sg_json_string_t *s);
bool sg_json_number(sg_json_reader_t *r, sg_json_number_t *n);
bool sg_json_bool(sg_json_reader_t *r, bool *b);
bool sg_json_null(sg_json_reader_t *r);

/* Skip one value of any type, checking all of it. For a container,
 * *children (may be NULL) is its number of members or elements. */
bool sg_json_skip(sg_json_reader_t *r, size_t *children);
/* After the top-level value: only whitespace may follow. */
bool sg_json_end(sg_json_reader_t *r);

/* Decoded bytes of s into out (s->len bytes and a NUL). */
void sg_json_decode(const sg_json_reader_t *r, const sg_json_string_t *s, char *out);
/* Is s exactly the NUL-terminated lit? */
bool sg_json_string_is(const sg_json_reader_t *r, const sg_json_string_t *s, const char *lit);

/* Record an error at pos (the first one wins); returns false. */
bool sg_json_fail(sg_json_reader_t *r, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* 1-based line and column (in characters) of byte offset pos. */
void sg_json_where(const sg_json_reader_t *r, size_t pos, int *line, int *column);

#endif /* SGCAP_JSON_READ_H */
