/* bundle_parse.c: graph.json text -> the model, hardened (docs/FORMAT.md §2).
 *
 * The text is untrusted. jansson parses it (its errors carry line:column);
 * everything after that is checked here before it is believed: types and
 * ranges of every field, required fields, references into tables and
 * between nodes, duplicate ids, cycles, limits. Each check that fails stops
 * the parse with one diagnostic naming the JSON path and the id at fault.
 *
 * Cost is linear in the input: node and edge ids go through id -> position
 * arrays whose size is bounded by the hole budget (bundle_private.h), and
 * every count is checked against its limit before anything is allocated for
 * it. Memory is jansson's tree (a constant factor of the text) plus the
 * model. */
#include "bundle_private.h"
#include "graph_private.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- where we are, for messages ------------------------------------------------- */

/* A chain of locations from the innermost value outwards; rendered only when
 * something is wrong, so the happy path never formats a string. */
typedef struct loc {
    const struct loc *up;
    const char *key; /* field name, or NULL for an array element */
    int64_t index;   /* array position, or -1 */
    uint32_t id;     /* the entry's id once known, or SG_NONE */
} loc_t;

#define LOC_FIELD(parent, k)                                                                       \
    {                                                                                              \
        (parent), (k), -1, SG_NONE                                                                 \
    }
#define LOC_ELEM(parent, i)                                                                        \
    {                                                                                              \
        (parent), NULL, (int64_t)(i), SG_NONE                                                      \
    }

typedef struct {
    sg_diag_t *diag;
    const char *file;
    sg_graph_t *root;
    uint64_t hole_budget, holes;
    int version; /* of the bundle being read */
} pctx_t;

static void loc_format(const loc_t *l, char *buf, size_t n)
{
    const loc_t *chain[128];
    size_t depth = 0;
    for (; l && depth < 128; l = l->up)
        chain[depth++] = l;
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = depth; i-- > 0 && k + 1 < n;) {
        const loc_t *c = chain[i];
        int w = 0;
        if (c->key)
            w = snprintf(buf + k, n - k, "%s%s", k ? "." : "", c->key);
        else if (c->index >= 0)
            w = snprintf(buf + k, n - k, "[%" PRId64 "]", c->index);
        if (w > 0) k += (size_t)w;
        if (k < n && c->id != SG_NONE) {
            w = snprintf(buf + k, n - k, " (id %" PRIu32 ")", c->id);
            if (w > 0) k += (size_t)w;
        }
        if (k >= n) k = n - 1;
    }
}

static int fail(pctx_t *c, const loc_t *l, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(pctx_t *c, const loc_t *l, int code, const char *fmt, ...)
{
    char where[256], what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    loc_format(l, where, sizeof where);
    if (where[0]) return sg_bundle_diag(c->diag, code, c->file, 0, 0, "%s: %s", where, what);
    return sg_bundle_diag(c->diag, code, c->file, 0, 0, "%s", what);
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* ---- typed field access ------------------------------------------------------------ */

/* o[key], with null treated as absent; SG_EFORMAT if required and absent. */
static int field(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l, json_t **v)
{
    *v = json_object_get(o, key);
    if (*v && json_is_null(*v)) *v = NULL;
    if (!*v && req) {
        loc_t fl = LOC_FIELD(l, key);
        return fail(c, &fl, SG_EFORMAT, "required field is missing");
    }
    return SG_OK;
}

static int want_object(pctx_t *c, const json_t *v, const loc_t *l)
{
    return json_is_object(v) ? SG_OK
                             : fail(c, l, SG_EFORMAT, "expected an object, found %s", type_name(v));
}

static int get_object(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l,
                      json_t **out)
{
    int rc = field(c, o, key, req, l, out);
    if (rc || !*out) return rc;
    loc_t fl = LOC_FIELD(l, key);
    return want_object(c, *out, &fl);
}

static int get_array(pctx_t *c, const json_t *o, const char *key, bool req, size_t max,
                     const loc_t *l, json_t **out)
{
    int rc = field(c, o, key, req, l, out);
    if (rc || !*out) return rc;
    loc_t fl = LOC_FIELD(l, key);
    if (!json_is_array(*out))
        return fail(c, &fl, SG_EFORMAT, "expected an array, found %s", type_name(*out));
    if (json_array_size(*out) > max)
        return fail(c, &fl, SG_ELIMIT, "%zu entries, more than the limit %zu",
                    json_array_size(*out), max);
    return SG_OK;
}

static int int_value(pctx_t *c, const json_t *v, int64_t min, int64_t max, const loc_t *l,
                     int64_t *out)
{
    if (!json_is_integer(v))
        return fail(c, l, SG_EFORMAT, "expected an integer, found %s", type_name(v));
    json_int_t x = json_integer_value(v);
    if (x < min || x > max)
        return fail(c, l, SG_EFORMAT, "%lld is out of range %" PRId64 "..%" PRId64, (long long)x,
                    min, max);
    *out = x;
    return SG_OK;
}

static int get_int(pctx_t *c, const json_t *o, const char *key, bool req, int64_t min, int64_t max,
                   int64_t def, const loc_t *l, int64_t *out)
{
    json_t *v;
    int rc = field(c, o, key, req, l, &v);
    if (rc) return rc;
    if (!v) {
        *out = def;
        return SG_OK;
    }
    loc_t fl = LOC_FIELD(l, key);
    return int_value(c, v, min, max, &fl, out);
}

static int get_u32(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l,
                   uint32_t *out)
{
    int64_t x;
    int rc = get_int(c, o, key, req, 0, UINT32_MAX, 0, l, &x);
    if (!rc) *out = (uint32_t)x;
    return rc;
}

static int get_i32(pctx_t *c, const json_t *o, const char *key, const loc_t *l, int32_t *out)
{
    int64_t x;
    int rc = get_int(c, o, key, false, INT32_MIN, INT32_MAX, 0, l, &x);
    if (!rc) *out = (int32_t)x;
    return rc;
}

static int get_u8(pctx_t *c, const json_t *o, const char *key, const loc_t *l, uint8_t *out)
{
    int64_t x;
    int rc = get_int(c, o, key, false, 0, 255, 0, l, &x);
    if (!rc) *out = (uint8_t)x;
    return rc;
}

/* A u64: a non-negative integer, or "0x" and 1..16 hex digits. */
static int u64_value(pctx_t *c, const json_t *v, const loc_t *l, uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0) return fail(c, l, SG_EFORMAT, "%lld is negative", (long long)x);
        *out = (uint64_t)x;
        return SG_OK;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        uint64_t x = 0;
        bool ok = n >= 3 && n <= 18 && s[0] == '0' && s[1] == 'x';
        for (size_t i = 2; ok && i < n; i++) {
            char ch = s[i];
            unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                         : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                         : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                                  : 16u;
            if (d > 15) ok = false;
            x = (x << 4) | d;
        }
        if (ok) {
            *out = x;
            return SG_OK;
        }
        return fail(c, l, SG_EFORMAT, "expected \"0x\" and 1 to 16 hex digits");
    }
    return fail(c, l, SG_EFORMAT, "expected an integer or a \"0x...\" string, found %s",
                type_name(v));
}

static int get_u64(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l,
                   uint64_t *out)
{
    json_t *v;
    int rc = field(c, o, key, req, l, &v);
    if (rc) return rc;
    *out = 0;
    if (!v) return SG_OK;
    loc_t fl = LOC_FIELD(l, key);
    return u64_value(c, v, &fl, out);
}

static int get_bool(pctx_t *c, const json_t *o, const char *key, const loc_t *l, bool *out)
{
    json_t *v;
    int rc = field(c, o, key, false, l, &v);
    if (rc) return rc;
    *out = false;
    if (!v) return SG_OK;
    if (!json_is_boolean(v)) {
        loc_t fl = LOC_FIELD(l, key);
        return fail(c, &fl, SG_EFORMAT, "expected a boolean, found %s", type_name(v));
    }
    *out = json_is_true(v);
    return SG_OK;
}

static int get_number(pctx_t *c, const json_t *o, const char *key, double def, const loc_t *l,
                      double *out)
{
    json_t *v;
    int rc = field(c, o, key, false, l, &v);
    if (rc) return rc;
    *out = def;
    if (!v) return SG_OK;
    if (!json_is_number(v)) {
        loc_t fl = LOC_FIELD(l, key);
        return fail(c, &fl, SG_EFORMAT, "expected a number, found %s", type_name(v));
    }
    *out = json_number_value(v);
    return SG_OK;
}

/* A string field, at most `max` bytes; *out points into the JSON tree (NULL
 * when absent). jansson has already refused NUL and invalid UTF-8. */
static int get_strn(pctx_t *c, const json_t *o, const char *key, bool req, size_t max,
                    const loc_t *l, const char **out, size_t *len)
{
    json_t *v;
    int rc = field(c, o, key, req, l, &v);
    if (rc) return rc;
    *out = NULL;
    *len = 0;
    if (!v) return SG_OK;
    loc_t fl = LOC_FIELD(l, key);
    if (!json_is_string(v))
        return fail(c, &fl, SG_EFORMAT, "expected a string, found %s", type_name(v));
    if (json_string_length(v) > max)
        return fail(c, &fl, SG_ELIMIT, "string of %zu bytes, more than the limit %zu",
                    json_string_length(v), max);
    *out = json_string_value(v);
    *len = json_string_length(v);
    return SG_OK;
}

static int get_str(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l,
                   const char **out)
{
    size_t len;
    return get_strn(c, o, key, req, SG_BUNDLE_MAX_STRING, l, out, &len);
}

/* A string field copied into *dst (replacing what was there). */
static int dup_str(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l,
                   char **dst)
{
    const char *s;
    size_t len;
    int rc = get_strn(c, o, key, req, SG_BUNDLE_MAX_STRING, l, &s, &len);
    if (rc || !s) return rc;
    char *d = malloc(len + 1);
    if (!d) return fail(c, l, SG_ENOMEM, "out of memory");
    memcpy(d, s, len + 1);
    free(*dst);
    *dst = d;
    return SG_OK;
}

/* A file name inside the bundle: syntax only (sg_bundle_read checks the file). */
static int dup_path(pctx_t *c, const json_t *o, const char *key, const loc_t *l, char **dst)
{
    const char *s;
    int rc = get_str(c, o, key, false, l, &s);
    if (rc || !s) return rc;
    if (!sg_bundle_relpath_ok(s)) {
        loc_t fl = LOC_FIELD(l, key);
        return fail(c, &fl, SG_EFORMAT,
                    "\"%.100s\" is not a safe relative path inside the bundle "
                    "(no \"..\", \".\" or empty components, not absolute, [A-Za-z0-9._-/] only)",
                    s);
    }
    return dup_str(c, o, key, false, l, dst);
}

static int get_enum(pctx_t *c, const json_t *o, const char *key, bool req, const char *const *names,
                    int count, int def, const char *what, const loc_t *l, int *out)
{
    const char *s;
    int rc = get_str(c, o, key, req, l, &s);
    if (rc) return rc;
    *out = def;
    if (!s) return SG_OK;
    for (int i = 0; i < count; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return SG_OK;
        }
    }
    loc_t fl = LOC_FIELD(l, key);
    return fail(c, &fl, SG_EFORMAT, "unknown %s \"%.64s\"", what, s);
}

/* An index into a table of n entries; SG_NONE when absent/null. */
static int get_index(pctx_t *c, const json_t *o, const char *key, bool req, uint32_t n,
                     const char *table, const loc_t *l, uint32_t *out)
{
    json_t *v;
    int rc = field(c, o, key, req, l, &v);
    if (rc) return rc;
    *out = SG_NONE;
    if (!v) return SG_OK;
    loc_t fl = LOC_FIELD(l, key);
    int64_t x;
    if ((rc = int_value(c, v, 0, UINT32_MAX, &fl, &x))) return rc;
    if ((uint64_t)x >= n)
        return fail(c, &fl, SG_EFORMAT, "names %s entry %" PRId64 " but there are only %" PRIu32,
                    table, x, n);
    *out = (uint32_t)x;
    return SG_OK;
}

static int get_triple(pctx_t *c, const json_t *o, const char *key, bool req, const loc_t *l,
                      uint32_t out[3])
{
    json_t *a;
    int rc = field(c, o, key, req, l, &a);
    if (rc || !a) return rc;
    loc_t fl = LOC_FIELD(l, key);
    if (!json_is_array(a) || json_array_size(a) != 3)
        return fail(c, &fl, SG_EFORMAT, "expected an array of 3 integers");
    for (size_t i = 0; i < 3; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        int64_t x;
        if ((rc = int_value(c, json_array_get(a, i), 0, UINT32_MAX, &el, &x))) return rc;
        out[i] = (uint32_t)x;
    }
    return SG_OK;
}

static int get_u32_array(pctx_t *c, const json_t *o, const char *key, const loc_t *l,
                         uint32_t **out, uint32_t *n)
{
    json_t *a;
    int rc = get_array(c, o, key, false, SG_BUNDLE_MAX_TABLE, l, &a);
    if (rc || !a || json_array_size(a) == 0) return rc;
    loc_t fl = LOC_FIELD(l, key);
    uint32_t count = (uint32_t)json_array_size(a);
    uint32_t *v = malloc(count * sizeof *v);
    if (!v) return fail(c, &fl, SG_ENOMEM, "out of memory");
    *out = v; /* owned by the model from here, freed with it on error */
    for (uint32_t i = 0; i < count; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        int64_t x;
        if ((rc = int_value(c, json_array_get(a, i), 0, UINT32_MAX, &el, &x))) return rc;
        v[i] = (uint32_t)x;
    }
    *n = count;
    return SG_OK;
}

/* Make room for `need` entries in a model array without changing its count,
 * so the graph.c adders that follow never reallocate. */
static int reserve(pctx_t *c, void **arr, uint32_t *cap, uint64_t need, size_t elem, const loc_t *l)
{
    if (need <= *cap) return SG_OK;
    void *p = realloc(*arr, (size_t)need * elem);
    if (!p) return fail(c, l, SG_ENOMEM, "out of memory");
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(need - *cap) * elem);
    *arr = p;
    *cap = (uint32_t)need;
    return SG_OK;
}

/* ---- tables -------------------------------------------------------------------------- */

/* Entry i of a table array: an object whose "id" is i. */
static int table_entry(pctx_t *c, const json_t *arr, size_t i, loc_t *el, const json_t **o)
{
    *o = json_array_get(arr, i);
    int rc = want_object(c, *o, el);
    if (rc) return rc;
    uint32_t id;
    if ((rc = get_u32(c, *o, "id", true, el, &id))) return rc;
    if (id != i)
        return fail(c, el, SG_EFORMAT,
                    "id %" PRIu32 " is not its position %zu (table ids are dense)", id, i);
    el->id = id;
    return SG_OK;
}

static int parse_streams(pctx_t *c, const json_t *top)
{
    sg_graph_t *g = c->root;
    json_t *arr;
    int rc = get_array(c, top, "streams", false, SG_BUNDLE_MAX_TABLE, NULL, &arr);
    if (rc || !arr) return rc;
    loc_t fl = LOC_FIELD(NULL, "streams");
    size_t n = json_array_size(arr);
    if ((rc = reserve(c, (void **)&g->streams, &g->cap_streams, n, sizeof *g->streams, &fl)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        const json_t *o;
        const char *label;
        if ((rc = table_entry(c, arr, i, &el, &o))) return rc;
        if ((rc = get_str(c, o, "label", false, &el, &label))) return rc;
        if (sg_graph_add_stream(g, label, 0, NULL)) return fail(c, &el, SG_ENOMEM, "out of memory");
        sg_stream_t *s = &g->streams[i];
        if ((rc = get_u64(c, o, "handle", false, &el, &s->handle)) ||
            (rc = get_u64(c, o, "cuda_id", false, &el, &s->cuda_id)) ||
            (rc = get_i32(c, o, "priority", &el, &s->priority)) ||
            (rc = get_u32(c, o, "flags", false, &el, &s->flags)) ||
            (rc = get_bool(c, o, "per_thread", &el, &s->per_thread)))
            return rc;
    }
    return SG_OK;
}

static int parse_events(pctx_t *c, const json_t *top)
{
    sg_graph_t *g = c->root;
    json_t *arr;
    int rc = get_array(c, top, "events", false, SG_BUNDLE_MAX_TABLE, NULL, &arr);
    if (rc || !arr) return rc;
    loc_t fl = LOC_FIELD(NULL, "events");
    size_t n = json_array_size(arr);
    if ((rc = reserve(c, (void **)&g->events, &g->cap_events, n, sizeof *g->events, &fl)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        const json_t *o;
        const char *label;
        if ((rc = table_entry(c, arr, i, &el, &o))) return rc;
        if ((rc = get_str(c, o, "label", false, &el, &label))) return rc;
        if (sg_graph_add_event(g, label, 0, NULL)) return fail(c, &el, SG_ENOMEM, "out of memory");
        sg_event_t *e = &g->events[i];
        if ((rc = get_u64(c, o, "handle", false, &el, &e->handle)) ||
            (rc = get_u32(c, o, "flags", false, &el, &e->flags)) ||
            (rc = get_bool(c, o, "external", &el, &e->external)))
            return rc;
    }
    return SG_OK;
}

static int parse_buffers(pctx_t *c, const json_t *top)
{
    sg_graph_t *g = c->root;
    json_t *arr;
    int rc = get_array(c, top, "buffers", false, SG_BUNDLE_MAX_TABLE, NULL, &arr);
    if (rc || !arr) return rc;
    loc_t fl = LOC_FIELD(NULL, "buffers");
    size_t n = json_array_size(arr);
    if ((rc = reserve(c, (void **)&g->buffers, &g->cap_buffers, n, sizeof *g->buffers, &fl)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        const json_t *o;
        int kind;
        uint64_t address, size;
        if ((rc = table_entry(c, arr, i, &el, &o)) ||
            (rc = get_enum(c, o, "kind", true, sg_bundle_buffer_kind_names, SG_BUFFER_KIND_COUNT, 0,
                           "buffer kind", &el, &kind)) ||
            (rc = get_u64(c, o, "address", true, &el, &address)) ||
            (rc = get_u64(c, o, "size", true, &el, &size)))
            return rc;
        if (kind == SG_BUFFER_HOST_PAGEABLE && c->version < 2) {
            loc_t kl = LOC_FIELD(&el, "kind");
            return fail(c, &kl, SG_EFORMAT, "\"host_pageable\" needs format version 2 (this "
                                            "bundle says %d)",
                        c->version);
        }
        if (sg_graph_add_buffer(g, (sg_buffer_kind_t)kind, address, size, NULL))
            return fail(c, &el, SG_ENOMEM, "out of memory");
        sg_buffer_t *b = &g->buffers[i];
        int64_t alloc;
        /* alloc_node is checked against the root graph once it is read */
        if ((rc = dup_str(c, o, "label", false, &el, &b->label)) ||
            (rc = get_int(c, o, "alloc_node", false, 0, UINT32_MAX - 1, SG_NONE, &el, &alloc)) ||
            (rc = dup_path(c, o, "before", &el, &b->before_file)) ||
            (rc = dup_path(c, o, "after", &el, &b->after_file)) ||
            (rc = get_u64(c, o, "snapshot_bytes", false, &el, &b->snapshot_bytes)) ||
            (rc = dup_str(c, o, "snapshot_note", false, &el, &b->snapshot_note)))
            return rc;
        b->alloc_node = (sg_node_id_t)alloc;
    }
    return SG_OK;
}

static bool is_hash(const char *s, size_t n)
{
    if (n != 16) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

static int parse_images(pctx_t *c, const json_t *top)
{
    sg_graph_t *g = c->root;
    json_t *arr;
    int rc = get_array(c, top, "images", false, SG_BUNDLE_MAX_TABLE, NULL, &arr);
    if (rc || !arr) return rc;
    loc_t fl = LOC_FIELD(NULL, "images");
    size_t n = json_array_size(arr);
    if ((rc = reserve(c, (void **)&g->images, &g->cap_images, n, sizeof *g->images, &fl)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        const json_t *o;
        int kind;
        const char *hash;
        size_t hash_len;
        uint64_t size;
        if ((rc = table_entry(c, arr, i, &el, &o)) ||
            (rc = get_enum(c, o, "kind", true, sg_bundle_image_kind_names, SG_IMAGE_KIND_COUNT, 0,
                           "image kind", &el, &kind)) ||
            (rc = get_strn(c, o, "hash", true, 64, &el, &hash, &hash_len)) ||
            (rc = get_u64(c, o, "size", false, &el, &size)))
            return rc;
        if (!is_hash(hash, hash_len)) {
            loc_t hl = LOC_FIELD(&el, "hash");
            return fail(c, &hl, SG_EFORMAT, "expected 16 lowercase hex digits, found \"%.64s\"",
                        hash);
        }
        if (sg_graph_add_image(g, (sg_image_kind_t)kind, hash, size, NULL))
            return fail(c, &el, SG_ENOMEM, "out of memory");
        sg_image_t *im = &g->images[i];
        if ((rc = dup_path(c, o, "file", &el, &im->file)) ||
            (rc = get_u32_array(c, o, "ptx_archs", &el, &im->ptx_archs, &im->n_ptx_archs)) ||
            (rc = get_u32_array(c, o, "sass_archs", &el, &im->sass_archs, &im->n_sass_archs)) ||
            (rc = dup_str(c, o, "options", false, &el, &im->options)) ||
            (rc = dup_str(c, o, "note", false, &el, &im->note)) ||
            (rc = get_index(c, o, "source_image", false, (uint32_t)n, "images", &el,
                            &im->source_image)))
            return rc;
    }
    /* source_image may name a later entry, so its kind is checked once the
     * whole table is read. Only NVRTC source can be recompiled to PTX; any
     * other kind there would send readers looking for source that is not. */
    for (uint32_t i = 0; i < g->n_images; i++) {
        uint32_t s = g->images[i].source_image;
        if (s == SG_NONE) continue;
        loc_t el = LOC_ELEM(&fl, i);
        el.id = i;
        loc_t sl = LOC_FIELD(&el, "source_image");
        if (s == i) return fail(c, &sl, SG_EFORMAT, "names the image itself");
        if (g->images[s].kind != SG_IMAGE_NVRTC)
            return fail(c, &sl, SG_EFORMAT, "names image %" PRIu32 ", a %s image, not nvrtc", s,
                        sg_bundle_image_kind_names[g->images[s].kind]);
    }
    return SG_OK;
}

/* ---- nodes ------------------------------------------------------------------------------ */

static int parse_graph(pctx_t *c, const json_t *go, sg_graph_t *g, int depth, const loc_t *gl);

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static int parse_params(pctx_t *c, const json_t *ko, sg_kernel_t *k, const loc_t *kl)
{
    json_t *p;
    int rc = get_object(c, ko, "params", false, kl, &p);
    if (rc || !p) return rc;
    loc_t pl = LOC_FIELD(kl, "params");
    const char *hex;
    size_t hex_len;
    if ((rc = get_strn(c, p, "bytes", false, 2 * (size_t)SG_BUNDLE_MAX_PARAM_BYTES, &pl, &hex,
                       &hex_len)))
        return rc;
    loc_t bl = LOC_FIELD(&pl, "bytes");
    if (hex_len % 2) return fail(c, &bl, SG_EFORMAT, "odd number of hex digits (%zu)", hex_len);
    uint32_t size = (uint32_t)(hex_len / 2);
    if (size) {
        k->param_bytes = malloc(size);
        if (!k->param_bytes) return fail(c, &bl, SG_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < size; i++) {
            int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return fail(c, &bl, SG_EFORMAT, "not a hex digit at position %" PRIu32,
                            hi < 0 ? 2 * i : 2 * i + 1);
            k->param_bytes[i] = (uint8_t)(hi << 4 | lo);
        }
        k->params_size = size;
    }
    json_t *layout;
    if ((rc = get_array(c, p, "layout", false, SG_BUNDLE_MAX_PARAM_BYTES, &pl, &layout))) return rc;
    uint32_t n = layout ? (uint32_t)json_array_size(layout) : 0;
    if (!n) return SG_OK;
    loc_t ll = LOC_FIELD(&pl, "layout");
    k->param_offsets = malloc(n * sizeof(uint32_t));
    k->param_sizes = malloc(n * sizeof(uint32_t));
    if (!k->param_offsets || !k->param_sizes) return fail(c, &ll, SG_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        loc_t el = LOC_ELEM(&ll, i);
        const json_t *pair = json_array_get(layout, i);
        if (!json_is_array(pair) || json_array_size(pair) != 2)
            return fail(c, &el, SG_EFORMAT, "expected [offset, size]");
        int64_t off, sz;
        loc_t e0 = LOC_ELEM(&el, 0), e1 = LOC_ELEM(&el, 1);
        if ((rc = int_value(c, json_array_get(pair, 0), 0, UINT32_MAX, &e0, &off)) ||
            (rc = int_value(c, json_array_get(pair, 1), 0, UINT32_MAX, &e1, &sz)))
            return rc;
        if ((uint64_t)off + (uint64_t)sz > size)
            return fail(c, &el, SG_EFORMAT,
                        "parameter %" PRIu32 " [offset %" PRId64 ", size %" PRId64
                        "] reaches past the %" PRIu32 " parameter bytes",
                        i, off, sz, size);
        k->param_offsets[i] = (uint32_t)off;
        k->param_sizes[i] = (uint32_t)sz;
    }
    k->n_params = n;
    return SG_OK;
}

static int parse_kernel(pctx_t *c, const json_t *no, sg_kernel_t *k, const loc_t *nl)
{
    json_t *ko;
    int rc = get_object(c, no, "kernel", true, nl, &ko);
    if (rc) return rc;
    loc_t kl = LOC_FIELD(nl, "kernel");
    if ((rc = dup_str(c, ko, "name", true, &kl, &k->name)) ||
        (rc = get_index(c, ko, "image", false, c->root->n_images, "images", &kl, &k->image)) ||
        (rc = get_triple(c, ko, "grid", true, &kl, k->grid)) ||
        (rc = get_triple(c, ko, "block", true, &kl, k->block)) ||
        (rc = get_triple(c, ko, "cluster", false, &kl, k->cluster)) ||
        (rc = get_u32(c, ko, "shared_bytes", false, &kl, &k->shared_bytes)) ||
        (rc = get_i32(c, ko, "priority", &kl, &k->priority)) ||
        (rc = get_bool(c, ko, "cooperative", &kl, &k->cooperative)) ||
        (rc = get_bool(c, ko, "has_extra", &kl, &k->has_extra)) ||
        (rc = get_u64(c, ko, "func_handle", false, &kl, &k->func_handle)))
        return rc;
    return parse_params(c, ko, k, &kl);
}

static int parse_accesses(pctx_t *c, const json_t *no, sg_node_t *n, const loc_t *nl)
{
    json_t *arr;
    int rc = get_array(c, no, "accesses", false, SG_BUNDLE_MAX_TABLE, nl, &arr);
    if (rc || !arr || json_array_size(arr) == 0) return rc;
    loc_t fl = LOC_FIELD(nl, "accesses");
    uint32_t count = (uint32_t)json_array_size(arr);
    n->accesses = calloc(count, sizeof *n->accesses);
    if (!n->accesses) return fail(c, &fl, SG_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < count; i++) {
        loc_t el = LOC_ELEM(&fl, i);
        const json_t *o = json_array_get(arr, i);
        sg_access_t *a = &n->accesses[i];
        const char *mode;
        if ((rc = want_object(c, o, &el)) ||
            (rc =
                 get_index(c, o, "buffer", true, c->root->n_buffers, "buffers", &el, &a->buffer)) ||
            (rc = get_u64(c, o, "offset", false, &el, &a->offset)) ||
            (rc = get_u64(c, o, "size", true, &el, &a->size)) ||
            (rc = get_str(c, o, "mode", true, &el, &mode)))
            return rc;
        int m = sg_bundle_access_mode_from_name(mode);
        if (m < 0) {
            loc_t ml = LOC_FIELD(&el, "mode");
            return fail(c, &ml, SG_EFORMAT, "unknown access mode \"%.64s\"", mode);
        }
        a->mode = (sg_access_mode_t)m;
        n->n_accesses = i + 1;
    }
    return SG_OK;
}

/* A body graph object at `depth`, attached by the caller. */
static int parse_body(pctx_t *c, const json_t *bo, sg_graph_t *b, int depth, const loc_t *bl)
{
    if (depth > SG_BUNDLE_MAX_DEPTH)
        return fail(c, bl, SG_ELIMIT, "body graphs nested deeper than the limit %d",
                    SG_BUNDLE_MAX_DEPTH);
    int rc = want_object(c, bo, bl);
    return rc ? rc : parse_graph(c, bo, b, depth, bl);
}

static int parse_payload(pctx_t *c, const json_t *no, sg_graph_t *g, sg_node_id_t id, int depth,
                         const loc_t *nl)
{
    sg_node_t *n = &g->nodes[id];
    json_t *o;
    int rc = SG_OK;
    switch (n->type) {
    case SG_NODE_KERNEL:
        return parse_kernel(c, no, &n->u.kernel, nl);
    case SG_NODE_MEMCPY: {
        if ((rc = get_object(c, no, "memcpy", false, nl, &o)) || !o) return rc;
        loc_t ol = LOC_FIELD(nl, "memcpy");
        sg_memcpy_t *m = &n->u.memcpy;
        int kind;
        if ((rc = get_u64(c, o, "dst", false, &ol, &m->dst)) ||
            (rc = get_u64(c, o, "src", false, &ol, &m->src)) ||
            (rc = get_u64(c, o, "dst_pitch", false, &ol, &m->dst_pitch)) ||
            (rc = get_u64(c, o, "src_pitch", false, &ol, &m->src_pitch)) ||
            (rc = get_u64(c, o, "width", false, &ol, &m->width)) ||
            (rc = get_u64(c, o, "height", false, &ol, &m->height)) ||
            (rc = get_u64(c, o, "depth", false, &ol, &m->depth)) ||
            (rc = get_enum(c, o, "kind", false, sg_bundle_copy_kind_names, 5, 0, "copy kind", &ol,
                           &kind)))
            return rc;
        m->kind = (sg_copy_kind_t)kind;
        return SG_OK;
    }
    case SG_NODE_MEMSET: {
        if ((rc = get_object(c, no, "memset", false, nl, &o)) || !o) return rc;
        loc_t ol = LOC_FIELD(nl, "memset");
        sg_memset_t *m = &n->u.memset;
        if ((rc = get_u64(c, o, "dst", false, &ol, &m->dst)) ||
            (rc = get_u64(c, o, "pitch", false, &ol, &m->pitch)) ||
            (rc = get_u32(c, o, "value", false, &ol, &m->value)) ||
            (rc = get_u32(c, o, "element_size", false, &ol, &m->element_size)) ||
            (rc = get_u64(c, o, "width", false, &ol, &m->width)) ||
            (rc = get_u64(c, o, "height", false, &ol, &m->height)))
            return rc;
        if (m->element_size != 0 && m->element_size != 1 && m->element_size != 2 &&
            m->element_size != 4) {
            loc_t el = LOC_FIELD(&ol, "element_size");
            return fail(c, &el, SG_EFORMAT, "must be 1, 2 or 4 (0 = not set), found %" PRIu32,
                        m->element_size);
        }
        return SG_OK;
    }
    case SG_NODE_HOST: {
        if ((rc = get_object(c, no, "host", false, nl, &o)) || !o) return rc;
        loc_t ol = LOC_FIELD(nl, "host");
        if ((rc = get_u64(c, o, "fn", false, &ol, &n->u.host.fn)) ||
            (rc = get_u64(c, o, "user_data", false, &ol, &n->u.host.user_data)))
            return rc;
        return SG_OK;
    }
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        return get_index(c, no, "event", false, c->root->n_events, "events", nl, &n->u.event);
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE: {
        if ((rc = get_object(c, no, "mem", false, nl, &o)) || !o) return rc;
        loc_t ol = LOC_FIELD(nl, "mem");
        if ((rc = get_index(c, o, "buffer", false, c->root->n_buffers, "buffers", &ol,
                            &n->u.mem.buffer)) ||
            (rc = get_u64(c, o, "address", false, &ol, &n->u.mem.address)) ||
            (rc = get_u64(c, o, "bytes", false, &ol, &n->u.mem.bytes)))
            return rc;
        return SG_OK;
    }
    case SG_NODE_CHILD_GRAPH: {
        if ((rc = field(c, no, "body", false, nl, &o)) || !o) return rc;
        loc_t bl = LOC_FIELD(nl, "body");
        sg_graph_t *body;
        if (sg_node_make_child_body(g, id, &body)) return fail(c, &bl, SG_ENOMEM, "out of memory");
        return parse_body(c, o, body, depth + 1, &bl);
    }
    case SG_NODE_CONDITIONAL: {
        if ((rc = get_object(c, no, "conditional", false, nl, &o)) || !o) return rc;
        loc_t ol = LOC_FIELD(nl, "conditional");
        sg_conditional_t *cd = &n->u.cond;
        int type;
        json_t *bodies;
        if ((rc = get_enum(c, o, "type", false, sg_bundle_cond_type_names, 3, 0, "conditional type",
                           &ol, &type)) ||
            (rc = get_u64(c, o, "handle", false, &ol, &cd->handle)) ||
            (rc = get_u32(c, o, "default_value", false, &ol, &cd->default_value)) ||
            (rc = get_array(c, o, "bodies", false, SG_BUNDLE_MAX_NODES, &ol, &bodies)))
            return rc;
        cd->type = (sg_cond_type_t)type;
        loc_t al = LOC_FIELD(&ol, "bodies");
        size_t nb = bodies ? json_array_size(bodies) : 0;
        if (!nb) return SG_OK;
        /* sized once: sg_node_add_cond_body grows the array by one per call,
           quadratic for the many bodies an input may list */
        cd->bodies = calloc(nb, sizeof *cd->bodies);
        if (!cd->bodies) return fail(c, &al, SG_ENOMEM, "out of memory");
        for (size_t i = 0; i < nb; i++) {
            loc_t bl = LOC_ELEM(&al, i);
            sg_graph_t *body = sg_graph_create_body(g);
            if (!body) return fail(c, &bl, SG_ENOMEM, "out of memory");
            cd->bodies[i] = body;
            cd->n_bodies = (uint32_t)i + 1;
            if ((rc = parse_body(c, json_array_get(bodies, i), body, depth + 1, &bl))) return rc;
        }
        return SG_OK;
    }
    case SG_NODE_OPAQUE: {
        if ((rc = get_object(c, no, "opaque", false, nl, &o)) || !o) return rc;
        loc_t ol = LOC_FIELD(nl, "opaque");
        return dup_str(c, o, "note", false, &ol, &n->u.opaque_note);
    }
    default:
        return SG_OK;
    }
}

static int parse_node(pctx_t *c, const json_t *no, sg_graph_t *g, sg_node_id_t id, int depth,
                      const loc_t *nl)
{
    uint32_t stream;
    uint64_t seq;
    const char *tname;
    int rc = get_str(c, no, "type", true, nl, &tname);
    if (rc) return rc;
    int type = sg_node_type_from_name(tname); /* graph.c owns the names */
    if (type < 0) {
        loc_t tl = LOC_FIELD(nl, "type");
        return fail(c, &tl, SG_EFORMAT, "unknown node type \"%.64s\"", tname);
    }
    json_t *sv;
    if ((rc = field(c, no, "stream", true, nl, &sv))) return rc;
    loc_t sl = LOC_FIELD(nl, "stream");
    if (json_is_string(sv)) {
        if (strcmp(json_string_value(sv), "explicit") != 0)
            return fail(c, &sl, SG_EFORMAT, "expected a stream index or \"explicit\"");
        stream = SG_STREAM_EXPLICIT;
    } else {
        int64_t x;
        if ((rc = int_value(c, sv, 0, UINT32_MAX, &sl, &x))) return rc;
        if ((uint64_t)x >= c->root->n_streams)
            return fail(c, &sl, SG_EFORMAT,
                        "names streams entry %" PRId64 " but there are only %" PRIu32, x,
                        c->root->n_streams);
        stream = (uint32_t)x;
    }
    if ((rc = get_u64(c, no, "seq", true, nl, &seq))) return rc;
    sg_node_id_t got;
    if (sg_graph_add_node(g, (sg_node_type_t)type, stream, seq, &got))
        return fail(c, nl, SG_ENOMEM, "out of memory");
    if (got != id) return fail(c, nl, SG_EINVAL, "internal error: node placed at %u", got);
    sg_node_t *n = &g->nodes[id];
    if ((rc = get_bool(c, no, "synthesized", nl, &n->synthesized)) ||
        (rc = dup_str(c, no, "label", false, nl, &n->label)) ||
        (rc = get_u32(c, no, "cuda_type", false, nl, &n->cuda_type)) ||
        (rc = get_number(c, no, "duration_ns", -1.0, nl, &n->duration_ns)) ||
        (rc = parse_accesses(c, no, n, nl)))
        return rc;
    return parse_payload(c, no, g, id, depth, nl);
}

/* ---- graphs --------------------------------------------------------------------------- */

/* Ids of an array of nodes or edges: each entry an object with a u32 "id"
 * below SG_NONE, no duplicates, the holes they leave within budget. Returns
 * a malloc'd id -> array position map of *map_n entries (SG_NONE = hole). */
static int index_ids(pctx_t *c, const json_t *go, const json_t *arr, const loc_t *gl,
                     const loc_t *al, const char *what, const char *next_key, uint32_t **map,
                     uint32_t *map_n)
{
    size_t n = json_array_size(arr);
    *map = NULL;
    *map_n = 0;
    int64_t next;
    int rc = get_int(c, go, next_key, false, 0, UINT32_MAX, -1, gl, &next);
    if (rc) return rc;
    uint64_t end = 0; /* one past the largest id */
    for (size_t i = 0; i < n; i++) {
        loc_t el = LOC_ELEM(al, i);
        const json_t *o = json_array_get(arr, i);
        int64_t id;
        if ((rc = want_object(c, o, &el)) ||
            (rc = get_int(c, o, "id", true, 0, UINT32_MAX - 1, 0, &el, &id)))
            return rc;
        if ((uint64_t)id + 1 > end) end = (uint64_t)id + 1;
    }
    if (next >= 0) {
        /* ids of removed entries past the last live one stay used */
        loc_t nl = LOC_FIELD(gl, next_key);
        if ((uint64_t)next < end)
            return fail(c, &nl, SG_EFORMAT, "%" PRId64 " is not above the largest %s id %" PRIu64,
                        next, what, end - 1);
        end = (uint64_t)next;
    }
    if (end == 0) return SG_OK;
    uint64_t holes = end > n ? end - n : 0;
    if (holes > c->hole_budget - c->holes)
        return fail(c, al, SG_ELIMIT,
                    "%s ids go up to %" PRIu64 " for only %zu %ss: too many unused ids "
                    "(the bundle may have at most %" PRIu64 ")",
                    what, end - 1, n, what, c->hole_budget);
    c->holes += holes;
    uint32_t *m = malloc((size_t)end * sizeof *m);
    if (!m) return fail(c, al, SG_ENOMEM, "out of memory");
    memset(m, 0xff, (size_t)end * sizeof *m);
    for (size_t i = 0; i < n; i++) {
        uint32_t id = (uint32_t)json_integer_value(json_object_get(json_array_get(arr, i), "id"));
        if (m[id] != SG_NONE) {
            loc_t el = LOC_ELEM(al, i);
            el.id = id;
            uint32_t first = m[id];
            free(m);
            return fail(c, &el, SG_EFORMAT, "duplicate %s id (also at position %" PRIu32 ")", what,
                        first);
        }
        m[id] = (uint32_t)i;
    }
    *map = m;
    *map_n = (uint32_t)end;
    return SG_OK;
}

static int parse_edge(pctx_t *c, const json_t *eo, sg_graph_t *g, sg_edge_id_t id, const loc_t *el)
{
    uint32_t from, to, event;
    const char *kname;
    int rc;
    if ((rc = get_u32(c, eo, "from", true, el, &from)) ||
        (rc = get_u32(c, eo, "to", true, el, &to)) ||
        (rc = get_str(c, eo, "kind", true, el, &kname)) ||
        (rc = get_index(c, eo, "event", false, c->root->n_events, "events", el, &event)))
        return rc;
    if (!sg_graph_node(g, from))
        return fail(c, el, SG_EFORMAT, "\"from\" names unknown node %" PRIu32, from);
    if (!sg_graph_node(g, to))
        return fail(c, el, SG_EFORMAT, "\"to\" names unknown node %" PRIu32, to);
    if (from == to) return fail(c, el, SG_EFORMAT, "self-loop on node %" PRIu32, from);
    int kind = sg_edge_kind_from_name(kname); /* graph.c owns the names */
    if (kind < 0) {
        loc_t kl = LOC_FIELD(el, "kind");
        return fail(c, &kl, SG_EFORMAT, "unknown edge kind \"%.64s\"", kname);
    }
    if (kind == SG_EDGE_EVENT && event == SG_NONE)
        return fail(c, el, SG_EFORMAT, "an event edge must name its event");
    if (kind != SG_EDGE_EVENT && event != SG_NONE)
        return fail(c, el, SG_EFORMAT, "a %s edge may not name an event",
                    sg_edge_kind_name((sg_edge_kind_t)kind));
    uint8_t from_port, to_port, cuda_type;
    if ((rc = get_u8(c, eo, "from_port", el, &from_port)) ||
        (rc = get_u8(c, eo, "to_port", el, &to_port)) ||
        (rc = get_u8(c, eo, "cuda_type", el, &cuda_type)))
        return rc;
    sg_edge_id_t got;
    if (sg_graph_add_edge(g, from, to, (sg_edge_kind_t)kind, event, &got))
        return fail(c, el, SG_ENOMEM, "out of memory");
    if (got != id) return fail(c, el, SG_EINVAL, "internal error: edge placed at %u", got);
    sg_edge_t *e = &g->edges[id];
    e->from_port = from_port;
    e->to_port = to_port;
    e->cuda_type = cuda_type;
    return SG_OK;
}

/* Kahn's algorithm in O(V+E); on a cycle, name a node on it: every node left
 * over has an unprocessed predecessor, so walking those backwards must
 * revisit a node, and the first revisited node lies on a cycle. */
static int check_acyclic(pctx_t *c, const sg_graph_t *g, const loc_t *nl)
{
    uint32_t nn = g->n_nodes;
    if (nn == 0) return SG_OK;
    uint32_t *indeg = malloc(nn * sizeof *indeg);
    uint32_t *queue = malloc(nn * sizeof *queue);
    if (!indeg || !queue) {
        free(indeg);
        free(queue);
        return fail(c, nl, SG_ENOMEM, "out of memory");
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < nn; i++) {
        indeg[i] = g->nodes[i].removed ? 0 : g->nodes[i].n_in;
        if (!g->nodes[i].removed && indeg[i] == 0) queue[tail++] = i;
    }
    while (head < tail) {
        const sg_node_t *x = &g->nodes[queue[head++]];
        for (uint32_t i = 0; i < x->n_out; i++)
            if (--indeg[g->edges[x->out[i]].to] == 0) queue[tail++] = g->edges[x->out[i]].to;
    }
    int rc = SG_OK;
    if (tail != g->live_nodes) {
        uint32_t v = 0;
        while (v < nn && (g->nodes[v].removed || indeg[v] == 0))
            v++;
        /* reuse queue as the visited mark */
        memset(queue, 0, nn * sizeof *queue);
        while (v < nn && !queue[v]) {
            queue[v] = 1;
            const sg_node_t *x = &g->nodes[v];
            uint32_t next = nn;
            for (uint32_t i = 0; i < x->n_in && next == nn; i++) {
                uint32_t p = g->edges[x->in[i]].from;
                if (indeg[p] > 0) next = p;
            }
            v = next;
        }
        rc = fail(c, nl, SG_ECYCLE, "the graph has a cycle through node %" PRIu32, v);
    }
    free(indeg);
    free(queue);
    return rc;
}

static int parse_graph(pctx_t *c, const json_t *go, sg_graph_t *g, int depth, const loc_t *gl)
{
    json_t *nodes, *edges;
    int rc;
    if ((rc = get_array(c, go, "nodes", true, SG_BUNDLE_MAX_NODES, gl, &nodes)) ||
        (rc = get_array(c, go, "edges", true, SG_BUNDLE_MAX_EDGES, gl, &edges)))
        return rc;
    loc_t nl = LOC_FIELD(gl, "nodes"), el = LOC_FIELD(gl, "edges");
    uint32_t *map = NULL, map_n = 0;
    if ((rc = index_ids(c, go, nodes, gl, &nl, "node", "next_node_id", &map, &map_n))) return rc;
    rc = reserve(c, (void **)&g->nodes, &g->cap_nodes, map_n, sizeof *g->nodes, &nl);
    for (uint32_t id = 0; id < map_n && !rc; id++) {
        if (map[id] == SG_NONE) {
            /* a hole: the id was used once and removed by a pass */
            sg_node_id_t got;
            if (sg_graph_add_node(g, SG_NODE_EMPTY, SG_STREAM_EXPLICIT, 0, &got) ||
                sg_graph_remove_node(g, got))
                rc = fail(c, &nl, SG_ENOMEM, "out of memory");
            continue;
        }
        loc_t xl = LOC_ELEM(&nl, map[id]);
        xl.id = id;
        rc = parse_node(c, json_array_get(nodes, map[id]), g, id, depth, &xl);
    }
    free(map);
    if (rc) return rc;

    if ((rc = index_ids(c, go, edges, gl, &el, "edge", "next_edge_id", &map, &map_n))) return rc;
    rc = reserve(c, (void **)&g->edges, &g->cap_edges, map_n, sizeof *g->edges, &el);
    for (uint32_t id = 0; id < map_n && !rc; id++) {
        if (map[id] == SG_NONE) {
            /* graph.c has no call that leaves an edge hole; the array was
             * reserved above, so appending a removed entry is all it takes */
            g->edges[g->n_edges++] = (sg_edge_t){.id = id,
                                                 .from = SG_NONE,
                                                 .to = SG_NONE,
                                                 .kind = SG_EDGE_STREAM,
                                                 .event = SG_NONE,
                                                 .removed = true};
            continue;
        }
        loc_t xl = LOC_ELEM(&el, map[id]);
        xl.id = id;
        rc = parse_edge(c, json_array_get(edges, map[id]), g, id, &xl);
    }
    free(map);
    if (rc) return rc;
    return check_acyclic(c, g, &nl);
}

/* Nodes and edges of a graph object and all its bodies, for limits checked
 * before anything is built. Wrong types are skipped: the parse reports them. */
static void count_entries(const json_t *go, int depth, uint64_t *nodes, uint64_t *edges)
{
    if (depth > SG_BUNDLE_MAX_DEPTH || !json_is_object(go)) return;
    const json_t *na = json_object_get(go, "nodes"), *ea = json_object_get(go, "edges");
    if (json_is_array(ea)) *edges += json_array_size(ea);
    if (!json_is_array(na)) return;
    *nodes += json_array_size(na);
    for (size_t i = 0; i < json_array_size(na); i++) {
        const json_t *n = json_array_get(na, i);
        const char *type = json_string_value(json_object_get(n, "type"));
        if (!type) continue;
        if (strcmp(type, "child_graph") == 0) {
            count_entries(json_object_get(n, "body"), depth + 1, nodes, edges);
        } else if (strcmp(type, "conditional") == 0) {
            const json_t *b = json_object_get(json_object_get(n, "conditional"), "bodies");
            for (size_t j = 0; json_is_array(b) && j < json_array_size(b); j++)
                count_entries(json_array_get(b, j), depth + 1, nodes, edges);
        }
    }
}

/* ---- top level -------------------------------------------------------------------------- */

static int parse_provenance(pctx_t *c, const json_t *top)
{
    sg_graph_t *g = c->root;
    json_t *o;
    int rc;
    int64_t x;
    if ((rc = get_object(c, top, "capture", false, NULL, &o))) return rc;
    if (o) {
        loc_t l = LOC_FIELD(NULL, "capture");
        if ((rc = dup_str(c, o, "program", false, &l, &g->program)) ||
            (rc = get_int(c, o, "pid", false, INT64_MIN, INT64_MAX, 0, &l, &x)))
            return rc;
        g->pid = x;
        if ((rc = get_u64(c, o, "capture_id", false, &l, &g->capture_id)) ||
            (rc = get_u32(c, o, "sequence", false, &l, &g->sequence)) ||
            (rc = dup_str(c, o, "mode", false, &l, &g->capture_mode)))
            return rc;
    }
    if ((rc = get_object(c, top, "device", false, NULL, &o))) return rc;
    if (o) {
        loc_t l = LOC_FIELD(NULL, "device");
        sg_device_t *d = &g->device;
        int32_t v;
        const char *uuid;
        size_t uuid_len;
        if ((rc = dup_str(c, o, "name", false, &l, &d->name))) return rc;
        if ((rc = get_i32(c, o, "cc_major", &l, &v))) return rc;
        d->cc_major = v;
        if ((rc = get_i32(c, o, "cc_minor", &l, &v))) return rc;
        d->cc_minor = v;
        if ((rc = get_i32(c, o, "driver_version", &l, &v))) return rc;
        d->driver_version = v;
        if ((rc = get_u64(c, o, "total_memory", false, &l, &d->total_memory)) ||
            (rc = get_strn(c, o, "uuid", false, sizeof d->uuid - 1, &l, &uuid, &uuid_len)) ||
            (rc = get_u32(c, o, "sm_count", false, &l, &d->sm_count)) ||
            (rc = get_number(c, o, "mem_bandwidth_gbs", 0.0, &l, &d->mem_bandwidth_gbs)))
            return rc;
        if (uuid) memcpy(d->uuid, uuid, uuid_len + 1);
    }
    if ((rc = get_object(c, top, "crosscheck", false, NULL, &o))) return rc;
    if (o) {
        loc_t l = LOC_FIELD(NULL, "crosscheck");
        if ((rc = get_bool(c, o, "done", &l, &g->crosscheck_done)) ||
            (rc = get_bool(c, o, "ok", &l, &g->crosscheck_ok)) ||
            (rc = get_u32(c, o, "cuda_node_count", false, &l, &g->cuda_node_count)) ||
            (rc = get_u32(c, o, "cuda_edge_count", false, &l, &g->cuda_edge_count)) ||
            (rc = dup_str(c, o, "note", false, &l, &g->crosscheck_note)))
            return rc;
    }
    return SG_OK;
}

static int parse_pass_log(pctx_t *c, const json_t *top)
{
    json_t *arr;
    int rc = get_array(c, top, "pass_log", false, SG_BUNDLE_MAX_TABLE, NULL, &arr);
    if (rc || !arr) return rc;
    loc_t fl = LOC_FIELD(NULL, "pass_log");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        loc_t el = LOC_ELEM(&fl, i);
        const json_t *o = json_array_get(arr, i);
        const char *pass, *summary;
        if ((rc = want_object(c, o, &el)) || (rc = get_str(c, o, "pass", true, &el, &pass)) ||
            (rc = get_str(c, o, "summary", false, &el, &summary)))
            return rc;
        if (sg_graph_log_pass(c->root, pass, summary ? summary : ""))
            return fail(c, &el, SG_ENOMEM, "out of memory");
    }
    return SG_OK;
}

/* alloc_node names a mem_alloc node of the root graph; known only now. */
static int check_alloc_nodes(pctx_t *c)
{
    const sg_graph_t *g = c->root;
    loc_t fl = LOC_FIELD(NULL, "buffers");
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        sg_node_id_t a = g->buffers[i].alloc_node;
        if (a == SG_NONE) continue;
        const sg_node_t *n = sg_graph_node(g, a);
        loc_t el = LOC_ELEM(&fl, i);
        el.id = i;
        loc_t al = LOC_FIELD(&el, "alloc_node");
        if (!n) return fail(c, &al, SG_EFORMAT, "names unknown node %" PRIu32, a);
        if (n->type != SG_NODE_MEM_ALLOC)
            return fail(c, &al, SG_EFORMAT, "names node %" PRIu32 ", a %s node, not mem_alloc", a,
                        sg_node_type_name(n->type));
    }
    return SG_OK;
}

static int parse_top(pctx_t *c, const json_t *top)
{
    if (!json_is_object(top))
        return fail(c, NULL, SG_EFORMAT, "expected an object at the top level, found %s",
                    type_name(top));
    const char *format;
    int rc = get_str(c, top, "format", true, NULL, &format);
    if (rc) return rc;
    if (strcmp(format, SG_FORMAT_NAME) != 0) {
        loc_t fl = LOC_FIELD(NULL, "format");
        return fail(c, &fl, SG_EFORMAT, "\"%.64s\" is not \"" SG_FORMAT_NAME "\"", format);
    }
    json_t *v;
    if ((rc = field(c, top, "version", true, NULL, &v))) return rc;
    loc_t vl = LOC_FIELD(NULL, "version");
    if (!json_is_integer(v))
        return fail(c, &vl, SG_EFORMAT, "expected an integer, found %s", type_name(v));
    if (json_integer_value(v) < SG_FORMAT_VERSION_MIN ||
        json_integer_value(v) > SG_FORMAT_VERSION)
        return fail(c, &vl, SG_EUNSUPPORTED,
                    "version %lld is not supported (this reader supports %d to %d)",
                    (long long)json_integer_value(v), SG_FORMAT_VERSION_MIN, SG_FORMAT_VERSION);
    c->version = (int)json_integer_value(v);

    uint64_t nodes = 0, edges = 0;
    count_entries(top, 0, &nodes, &edges);
    if (nodes > SG_BUNDLE_MAX_NODES) {
        loc_t nl = LOC_FIELD(NULL, "nodes");
        return fail(c, &nl, SG_ELIMIT, "%" PRIu64 " nodes in all graphs, more than the limit %u",
                    nodes, SG_BUNDLE_MAX_NODES);
    }
    if (edges > SG_BUNDLE_MAX_EDGES) {
        loc_t el = LOC_FIELD(NULL, "edges");
        return fail(c, &el, SG_ELIMIT, "%" PRIu64 " edges in all graphs, more than the limit %u",
                    edges, SG_BUNDLE_MAX_EDGES);
    }
    c->hole_budget = sg_bundle_hole_budget(nodes + edges);

    if ((rc = parse_streams(c, top)) || (rc = parse_events(c, top)) ||
        (rc = parse_buffers(c, top)) || (rc = parse_images(c, top)) ||
        (rc = parse_graph(c, top, c->root, 0, NULL)) || (rc = check_alloc_nodes(c)) ||
        (rc = parse_pass_log(c, top)) || (rc = parse_provenance(c, top)) ||
        (rc = sg_bundle__parse_fusions(top, c->root, c->diag, c->file)))
        return rc;
    return SG_OK;
}

int sg_bundle_parse_json(const char *text, size_t len, const char *name, sg_graph_t **out,
                         sg_diag_t *diag)
{
    if (!name) name = "graph.json";
    if (!text || !out) return sg_bundle_diag(diag, SG_EINVAL, name, 0, 0, "no input");
    *out = NULL;
    if (len > SG_BUNDLE_MAX_JSON_BYTES)
        return sg_bundle_diag(diag, SG_ELIMIT, name, 0, 0, "%zu bytes, more than the limit %u", len,
                              SG_BUNDLE_MAX_JSON_BYTES);
    json_error_t je;
    json_t *top = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!top) return sg_bundle_diag(diag, SG_EFORMAT, name, je.line, je.column, "%s", je.text);
    pctx_t c = {.diag = diag, .file = name, .root = sg_graph_create()};
    int rc =
        c.root ? parse_top(&c, top) : sg_bundle_diag(diag, SG_ENOMEM, name, 0, 0, "out of memory");
    json_decref(top);
    if (rc) {
        sg_graph_destroy(c.root);
        return rc;
    }
    *out = c.root;
    return SG_OK;
}
