/* json_writer.h: JSON written straight into text, for the rewrite report.
 * A 100k-node rewrite reports ~100k values; built as a jansson tree they
 * cost about a million small allocations to make and as many to free, more
 * than the passes themselves. The writer formats exactly as jansson's
 * json_dumps(JSON_INDENT(2) | JSON_PRESERVE_ORDER) formats the same values
 * (integers "%lld", reals "%.17g" with jansson's ".0" and exponent rules,
 * the same string escapes), so the report text is what the tree gave.
 *
 * Values are written in order: open a container, write members (an
 * object's as key then value), close it. A writer starts at a depth (the
 * indentation of its first value), so a part written apart (a pass's
 * member) can be spliced into a larger document with sg_jw_raw. Out of
 * memory is sticky in `err`; writes after it do nothing. Invalid UTF-8 in
 * a string is written as U+FFFD (jansson refuses such strings). A real
 * that is not finite is written as null (JSON has no such number).
 */
#ifndef SGCAP_REWRITE_JSON_WRITER_H
#define SGCAP_REWRITE_JSON_WRITER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { SG_JW_MAX_OPEN = 32 };

typedef struct {
    char *buf; /* NUL-terminated once anything was written */
    size_t len, cap;
    int err;   /* 0 or SG_ENOMEM */
    unsigned depth0;  /* depth of the first value */
    unsigned n_open;  /* open containers */
    uint32_t count[SG_JW_MAX_OPEN]; /* values (members) written in each */
    char close[SG_JW_MAX_OPEN];     /* '}' or ']' for each */
    bool after_key;
} sg_jw_t;

void sg_jw_init(sg_jw_t *w, unsigned depth);
void sg_jw_free(sg_jw_t *w);
/* The text so far ("" when empty); valid until the next write. */
const char *sg_jw_text(const sg_jw_t *w);

void sg_jw_object(sg_jw_t *w);
void sg_jw_array(sg_jw_t *w);
void sg_jw_end(sg_jw_t *w); /* closes the innermost open container */
void sg_jw_key(sg_jw_t *w, const char *key);

void sg_jw_string(sg_jw_t *w, const char *s);
void sg_jw_int(sg_jw_t *w, long long v);
void sg_jw_real(sg_jw_t *w, double v);
void sg_jw_bool(sg_jw_t *w, bool v);
void sg_jw_null(sg_jw_t *w);
/* A jansson value, formatted the same way (NULL: nothing, sets err). */
void sg_jw_json(sg_jw_t *w, const json_t *v);
/* A value already written as text (by another writer started at this
 * writer's current value depth, sg_jw_depth). */
void sg_jw_raw(sg_jw_t *w, const char *text, size_t len);
/* Room for n more bytes, made now (a writer about to write many records of
 * a size it can estimate grows its buffer once, not by doubling copies). */
void sg_jw_reserve(sg_jw_t *w, size_t n);
/* The depth a writer must start at for its value to be spliced in as this
 * writer's next value (a member of, or an item in, the innermost open
 * container). */
unsigned sg_jw_depth(const sg_jw_t *w);

/* key + value in one call */
void sg_jw_kstring(sg_jw_t *w, const char *key, const char *s);
void sg_jw_kint(sg_jw_t *w, const char *key, long long v);
void sg_jw_kreal(sg_jw_t *w, const char *key, double v);
void sg_jw_kbool(sg_jw_t *w, const char *key, bool v);
/* an id, or null for SG_NONE */
void sg_jw_kid(sg_jw_t *w, const char *key, uint32_t id);

#endif /* SGCAP_REWRITE_JSON_WRITER_H */
