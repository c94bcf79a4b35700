/* bundle_parse.c: graph.json text -> the model, hardened (docs/FORMAT.md §2).
 *
 * The text is untrusted. It is read with the pull reader of json_read.h and
 * decoded straight into the model as the field tables (bundle_fields.c)
 * describe it: no JSON tree is built, and a field this reader does not know
 * is skipped (checked, never stored). Everything is checked before it is
 * believed: types and ranges, required fields, references into tables and
 * between nodes, duplicate keys and ids, cycles, limits. The first check
 * that fails stops the parse with one diagnostic: line:column, the JSON path
 * and the id at fault.
 *
 * Order. Keys may come in any order (FORMAT.md §2), but some fields need
 * others first: a node's stream index needs the streams table, its payload
 * needs its type, an edge its graph's nodes. So the top-level object and
 * each graph object are first scanned for where their keys are (one pass
 * that also checks the JSON syntax of everything inside), then decoded in
 * table order; inside a node a payload met before "type" is decoded when
 * the object ends. sgcap writes keys in table order, so its own bundles are
 * decoded in one pass after the scan.
 *
 * Memory. Every allocation is counted against a budget of
 * SG_BUNDLE_MEMORY_FACTOR times the text plus SG_BUNDLE_MEMORY_FLOOR, so no
 * input, however crafted, makes the reader need more (FORMAT.md §10); an
 * allocation that fails says what it was for. Node and edge ids place each
 * entry in the model's id-indexed arrays directly; the holes they leave are
 * paid from the same budget and bounded by the format's hole rule. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_fields.h"
#include "bundle_private.h"
#include "graph_private.h"
#include "json_read.h"

#define NO_POS SIZE_MAX

/* ---- where we are, for messages --------------------------------------------------- */

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
    sg_json_reader_t r;
    sg_diag_t *diag;
    const char *file;
    sg_graph_t *root;
    /* memory: what the model and the reader's own arrays take */
    size_t mem, mem_limit;
    /* nodes and edges listed in all graphs, and the holes their ids leave */
    uint64_t nodes, edges, holes;
    uint64_t worst_holes; /* the graph with the most, for the message */
    char worst_where[160];
    const char *worst_what;
    uint64_t worst_end, worst_n;
    /* the graph whose nodes are being read, for their bodies */
    sg_graph_t *graph;
    int graph_depth;
    uint32_t version; /* the bundle's format version */
    uint8_t *fused;   /* per root node id: it has a fusion record (fusions[] only) */
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

static int fail(pctx_t *c, const loc_t *l, size_t pos, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(pctx_t *c, const loc_t *l, size_t pos, int code, const char *fmt, ...)
{
    char where[256], what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    loc_format(l, where, sizeof where);
    int line = 0, column = 0;
    if (pos != NO_POS) sg_json_where(&c->r, pos, &line, &column);
    if (where[0])
        return sg_bundle_diag(c->diag, code, c->file, line, column, "%s: %s", where, what);
    return sg_bundle_diag(c->diag, code, c->file, line, column, "%s", what);
}

/* The JSON reader stopped: its message, at its position. */
static int json_failed(pctx_t *c, const loc_t *l)
{
    return fail(c, l, c->r.error_pos, SG_EFORMAT, "%s", c->r.error);
}

static const char *type_name(sg_json_type_t t)
{
    switch (t) {
    case SG_JSON_OBJECT:
        return "an object";
    case SG_JSON_ARRAY:
        return "an array";
    case SG_JSON_STRING:
        return "a string";
    case SG_JSON_INTEGER:
        return "an integer";
    case SG_JSON_REAL:
        return "a real number";
    case SG_JSON_BOOL:
        return "a boolean";
    case SG_JSON_NULL:
        return "null";
    default:
        return "no value";
    }
}

/* The next value must be of type want (a wrong type is the caller's error). */
static int want(pctx_t *c, sg_json_type_t want, const char *what, const loc_t *l)
{
    sg_json_type_t t = sg_json_peek(&c->r);
    if (c->r.failed) return json_failed(c, l);
    if (t == want) return SG_OK;
    return fail(c, l, sg_json_tell(&c->r), SG_EFORMAT, "expected %s, found %s", what, type_name(t));
}

/* ---- memory -------------------------------------------------------------------------------- */

/* What malloc really spends on n bytes (glibc: 8 bytes of header, 16-byte
 * granules, 32 at least), so the budget bounds the heap, not the requests. */
static size_t chunk(size_t n)
{
    size_t k = (n + 8 + 15) & ~(size_t)15;
    return k < 32 ? 32 : k;
}

static int over_budget(pctx_t *c, const loc_t *l, size_t pos, size_t n, const char *what)
{
    return fail(c, l, pos, SG_ELIMIT,
                "reading this graph.json would take more than %zu MiB of memory (%u times its "
                "size and %u MiB: the most this reader spends; see docs/FORMAT.md section 10); "
                "%zu more bytes were needed for %s",
                c->mem_limit >> 20, SG_BUNDLE_MEMORY_FACTOR, SG_BUNDLE_MEMORY_FLOOR >> 20, n, what);
}

static int out_of_memory(pctx_t *c, const loc_t *l, size_t pos, size_t n, const char *what)
{
    return fail(c, l, pos, SG_ENOMEM,
                "out of memory: malloc refused %zu bytes for %s (the model read so far takes %zu "
                "MiB)",
                n, what, c->mem >> 20);
}

/* *p = a new block of n bytes (zeroed when zero), counted against the budget. */
static int mem_alloc(pctx_t *c, void **p, size_t n, bool zero, const char *what, const loc_t *l,
                     size_t pos)
{
    size_t k = chunk(n);
    if (k > c->mem_limit - c->mem) return over_budget(c, l, pos, n, what);
    *p = zero ? calloc(1, n ? n : 1) : malloc(n ? n : 1);
    if (!*p) return out_of_memory(c, l, pos, n, what);
    c->mem += k;
    return SG_OK;
}

/* Grow *p from old_n to new_n bytes (the new bytes zeroed). */
static int mem_grow(pctx_t *c, void **p, size_t old_n, size_t new_n, const char *what,
                    const loc_t *l, size_t pos)
{
    size_t had = *p ? chunk(old_n) : 0, k = chunk(new_n);
    if (k > had && k - had > c->mem_limit - c->mem) return over_budget(c, l, pos, new_n, what);
    void *q = realloc(*p, new_n);
    if (!q) return out_of_memory(c, l, pos, new_n, what);
    memset((char *)q + old_n, 0, new_n - old_n);
    *p = q;
    c->mem = c->mem - had + k;
    return SG_OK;
}

static void mem_free(pctx_t *c, void *p, size_t n)
{
    if (!p) return;
    free(p);
    c->mem -= chunk(n);
}

/* Room for at least need entries of elem bytes in a growing list. */
static int list_room(pctx_t *c, void **arr, uint32_t *cap, uint64_t need, size_t elem,
                     const char *what, const loc_t *l, size_t pos)
{
    if (need <= *cap) return SG_OK;
    uint64_t ncap = *cap ? (uint64_t)*cap * 2 : 4;
    if (ncap < need) ncap = need;
    int rc = mem_grow(c, arr, (size_t)*cap * elem, (size_t)ncap * elem, what, l, pos);
    if (!rc) *cap = (uint32_t)ncap;
    return rc;
}

/* ---- scalars ------------------------------------------------------------------------------- */

static int get_int(pctx_t *c, int64_t min, int64_t max, const loc_t *l, int64_t *out)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_INTEGER, "an integer", l);
    if (rc) return rc;
    sg_json_number_t n;
    if (!sg_json_number(&c->r, &n)) return json_failed(c, l);
    if (n.integer < min || n.integer > max)
        return fail(c, l, pos, SG_EFORMAT, "%" PRId64 " is out of range %" PRId64 "..%" PRId64,
                    n.integer, min, max);
    *out = n.integer;
    return SG_OK;
}

/* A u64: a non-negative integer, or "0x" and 1..16 hex digits. */
static int get_u64(pctx_t *c, const loc_t *l, uint64_t *out)
{
    size_t pos = sg_json_tell(&c->r);
    sg_json_type_t t = sg_json_peek(&c->r);
    if (t == SG_JSON_INTEGER) {
        sg_json_number_t n;
        if (!sg_json_number(&c->r, &n)) return json_failed(c, l);
        if (n.integer < 0) return fail(c, l, pos, SG_EFORMAT, "%" PRId64 " is negative", n.integer);
        *out = (uint64_t)n.integer;
        return SG_OK;
    }
    if (t != SG_JSON_STRING) {
        if (c->r.failed) return json_failed(c, l);
        return fail(c, l, pos, SG_EFORMAT, "expected an integer or a \"0x...\" string, found %s",
                    type_name(t));
    }
    sg_json_string_t s;
    if (!sg_json_string(&c->r, &s)) return json_failed(c, l);
    const char *p = c->r.text + s.pos;
    bool ok = !s.escaped && s.len >= 3 && s.len <= 18 && p[0] == '0' && p[1] == 'x';
    uint64_t x = 0;
    for (size_t i = 2; ok && i < s.len; i++) {
        char ch = p[i];
        unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                     : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                     : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                              : 16u;
        if (d > 15) ok = false;
        x = (x << 4) | d;
    }
    if (!ok) return fail(c, l, pos, SG_EFORMAT, "expected \"0x\" and 1 to 16 hex digits");
    *out = x;
    return SG_OK;
}

/* A string token of at most max decoded bytes. */
static int get_string(pctx_t *c, size_t max, const loc_t *l, sg_json_string_t *s)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_STRING, "a string", l);
    if (rc) return rc;
    if (!sg_json_string(&c->r, s)) return json_failed(c, l);
    if (s->len > max)
        return fail(c, l, pos, SG_ELIMIT, "string of %zu bytes, more than the limit %zu", s->len,
                    max);
    return SG_OK;
}

/* A decoded copy of s, counted. */
static int copy_string(pctx_t *c, const sg_json_string_t *s, const loc_t *l, size_t pos, char **out)
{
    char *d;
    int rc = mem_alloc(c, (void **)&d, s->len + 1, false, "a string", l, pos);
    if (rc) return rc;
    sg_json_decode(&c->r, s, d);
    *out = d;
    return SG_OK;
}

static int table_size(const pctx_t *c, uint32_t table, const char **name)
{
    static const char *const names[] = {"streams", "events", "buffers", "images"};
    const sg_graph_t *g = c->root;
    const uint32_t sizes[] = {g->n_streams, g->n_events, g->n_buffers, g->n_images};
    *name = names[table];
    return (int)sizes[table];
}

static int get_index(pctx_t *c, uint32_t table, const loc_t *l, uint32_t *out)
{
    size_t pos = sg_json_tell(&c->r);
    int64_t x;
    int rc = get_int(c, 0, UINT32_MAX, l, &x);
    if (rc) return rc;
    const char *name;
    uint32_t n = (uint32_t)table_size(c, table, &name);
    if ((uint64_t)x >= n)
        return fail(c, l, pos, SG_EFORMAT, "names %s entry %" PRId64 " but there are only %" PRIu32,
                    name, x, n);
    *out = (uint32_t)x;
    return SG_OK;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* ---- records ------------------------------------------------------------------------------- */

static int decode_object(pctx_t *c, const sg_record_t *r, void *base, loc_t *l);
static int decode_body(pctx_t *c, sg_graph_t *parent, int depth, const loc_t *l, sg_graph_t **out);

/* Element `at` of an array (under the reader) is one past the limit: count
 * the rest, for the message. */
static int too_many(pctx_t *c, size_t at, size_t max, const loc_t *l, size_t pos)
{
    size_t i = at;
    int k = 1;
    while (k == 1 && sg_json_skip(&c->r, NULL))
        k = sg_json_element(&c->r, ++i);
    if (k < 0 || c->r.failed) return json_failed(c, l);
    return fail(c, l, pos, SG_ELIMIT, "%zu entries, more than the limit %zu", i, max);
}

/* A list of uint32 (U32S), [a, b] pairs (PAIRS) or records (RECORDS). */
static int decode_list(pctx_t *c, const sg_field_t *f, void *base, const loc_t *l)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_ARRAY, "an array", l);
    if (rc) return rc;
    sg_json_array_begin(&c->r);
    void **arr = sg_field_ptr(f, base), **arr2 = (void **)((char *)base + f->off2);
    uint32_t *count = (uint32_t *)((char *)base + f->count_off);
    size_t elem = f->type == SG_FT_RECORDS ? f->sub->size : sizeof(uint32_t);
    size_t max = f->max ? f->max : SG_BUNDLE_MAX_TABLE;
    uint32_t cap = 0;
    int k;
    for (size_t i = 0; (k = sg_json_element(&c->r, i)) == 1; i++) {
        if (i >= max) return too_many(c, i, max, l, pos);
        loc_t el = LOC_ELEM(l, i);
        size_t epos = sg_json_tell(&c->r);
        uint32_t cap1 = cap;
        if ((rc = list_room(c, arr, &cap, i + 1, elem, f->key, l, pos))) return rc;
        if (f->type == SG_FT_PAIRS && (rc = list_room(c, arr2, &cap1, i + 1, elem, f->key, l, pos)))
            return rc;
        if (f->type == SG_FT_U32S) {
            int64_t x;
            if ((rc = get_int(c, 0, UINT32_MAX, &el, &x))) return rc;
            ((uint32_t *)*arr)[i] = (uint32_t)x;
        } else if (f->type == SG_FT_PAIRS) {
            if (sg_json_peek(&c->r) != SG_JSON_ARRAY)
                return fail(c, &el, epos, SG_EFORMAT, "expected [offset, size]");
            sg_json_array_begin(&c->r);
            int64_t v[2];
            for (size_t j = 0; j < 2; j++) {
                loc_t jl = LOC_ELEM(&el, j);
                if (sg_json_element(&c->r, j) != 1) {
                    if (c->r.failed) return json_failed(c, &el);
                    return fail(c, &el, epos, SG_EFORMAT, "expected [offset, size]");
                }
                if ((rc = get_int(c, 0, UINT32_MAX, &jl, &v[j]))) return rc;
            }
            if (sg_json_element(&c->r, 2) != 0) {
                if (c->r.failed) return json_failed(c, &el);
                return fail(c, &el, epos, SG_EFORMAT, "expected [offset, size]");
            }
            ((uint32_t *)*arr)[i] = (uint32_t)v[0];
            ((uint32_t *)*arr2)[i] = (uint32_t)v[1];
        } else {
            void *e = (char *)*arr + i * elem;
            if ((rc = decode_object(c, f->sub, e, &el))) {
                *count = (uint32_t)i + 1; /* what it owns is freed with the model */
                return rc;
            }
        }
        *count = (uint32_t)i + 1;
    }
    return k < 0 ? json_failed(c, l) : SG_OK;
}

static int decode_bodies(pctx_t *c, const sg_field_t *f, void *base, const loc_t *l, int depth,
                         sg_graph_t *g)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_ARRAY, "an array", l);
    if (rc) return rc;
    sg_json_array_begin(&c->r);
    sg_graph_t ***arr = sg_field_ptr(f, base);
    uint32_t *count = (uint32_t *)((char *)base + f->count_off), cap = 0;
    int k;
    for (size_t i = 0; (k = sg_json_element(&c->r, i)) == 1; i++) {
        if (i >= f->max) return too_many(c, i, f->max, l, pos);
        loc_t el = LOC_ELEM(l, i);
        if ((rc = list_room(c, (void **)arr, &cap, i + 1, sizeof **arr, "body graphs", l, pos)))
            return rc;
        if ((rc = decode_body(c, g, depth + 1, &el, &(*arr)[i]))) {
            *count = (*arr)[i] ? (uint32_t)i + 1 : (uint32_t)i;
            return rc;
        }
        *count = (uint32_t)i + 1;
    }
    return k < 0 ? json_failed(c, l) : SG_OK;
}

/* Decode the value of field f of the record over base. The value is not
 * null (the caller treats null as absent). */
static int decode_field(pctx_t *c, const sg_record_t *r, const sg_field_t *f, void *base,
                        const loc_t *l)
{
    void *p = sg_field_ptr(f, base);
    size_t pos = sg_json_tell(&c->r);
    int64_t x;
    uint64_t u = 0;
    int rc = SG_OK;
    sg_json_string_t s;
    switch (f->type) {
    case SG_FT_U8:
        if (!(rc = get_int(c, 0, UINT8_MAX, l, &x))) *(uint8_t *)p = (uint8_t)x;
        return rc;
    case SG_FT_U32: {
        /* node and edge ids never take the "none" value */
        int64_t max = (f->flags & SG_F_ID) && (r->id == SG_REC_NODE || r->id == SG_REC_EDGE)
                          ? UINT32_MAX - 1
                          : UINT32_MAX;
        if (!(rc = get_int(c, 0, max, l, &x))) {
            uint32_t v = (uint32_t)x;
            memcpy(p, &v, sizeof v);
        }
        return rc;
    }
    case SG_FT_I32:
        if (!(rc = get_int(c, INT32_MIN, INT32_MAX, l, &x))) {
            int32_t v = (int32_t)x;
            memcpy(p, &v, sizeof v);
        }
        return rc;
    case SG_FT_I64:
        if (!(rc = get_int(c, INT64_MIN, INT64_MAX, l, &x))) memcpy(p, &x, sizeof x);
        return rc;
    case SG_FT_U64:
    case SG_FT_ADDR:
        if (!(rc = get_u64(c, l, &u))) memcpy(p, &u, sizeof u);
        return rc;
    case SG_FT_BOOL:
        if ((rc = want(c, SG_JSON_BOOL, "a boolean", l))) return rc;
        return sg_json_bool(&c->r, (bool *)p) ? SG_OK : json_failed(c, l);
    case SG_FT_REAL:
    case SG_FT_DURATION: {
        sg_json_type_t t = sg_json_peek(&c->r);
        if (t != SG_JSON_INTEGER && t != SG_JSON_REAL) {
            if (c->r.failed) return json_failed(c, l);
            return fail(c, l, pos, SG_EFORMAT, "expected a number, found %s", type_name(t));
        }
        sg_json_number_t n;
        if (!sg_json_number(&c->r, &n)) return json_failed(c, l);
        *(double *)p = n.real;
        return SG_OK;
    }
    case SG_FT_STR:
    case SG_FT_PATH: {
        if ((rc = get_string(c, f->max ? f->max : SG_BUNDLE_MAX_STRING, l, &s))) return rc;
        char **dst = p, *d;
        if ((rc = copy_string(c, &s, l, pos, &d))) return rc;
        if (f->type == SG_FT_PATH && !sg_bundle_relpath_ok(d)) {
            rc = fail(c, l, pos, SG_EFORMAT,
                      "\"%.100s\" is not a safe relative path inside the bundle (no \"..\", \".\" "
                      "or empty components, not absolute, [A-Za-z0-9._-/] only)",
                      d);
            mem_free(c, d, s.len + 1);
            return rc;
        }
        if (f->type == SG_FT_PATH && strcmp(d, "graph.json") == 0) {
            mem_free(c, d, s.len + 1);
            return fail(c, l, pos, SG_EFORMAT,
                        "\"graph.json\" is the bundle's own graph, not a file it may name");
        }
        free(*dst);
        *dst = d;
        return SG_OK;
    }
    case SG_FT_CHARS:
        if ((rc = get_string(c, f->size - 1, l, &s))) return rc;
        sg_json_decode(&c->r, &s, p);
        return SG_OK;
    case SG_FT_HASH: {
        if ((rc = want(c, SG_JSON_STRING, "a string", l))) return rc;
        if (!sg_json_string(&c->r, &s)) return json_failed(c, l);
        const char *h = c->r.text + s.pos;
        bool ok = !s.escaped && s.len == 16;
        for (size_t i = 0; ok && i < 16; i++)
            ok = (h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f');
        if (!ok)
            return fail(c, l, pos, SG_EFORMAT, "expected 16 lowercase hex digits, found \"%.*s\"",
                        (int)(s.raw_len < 64 ? s.raw_len : 64), h);
        memcpy(p, h, 16);
        ((char *)p)[16] = '\0';
        return SG_OK;
    }
    case SG_FT_ENUM: {
        if ((rc = get_string(c, SG_BUNDLE_MAX_STRING, l, &s))) return rc;
        char name[64] = "";
        if (s.len < sizeof name) sg_json_decode(&c->r, &s, name);
        int v = s.len < sizeof name ? sg_enum_value(f->names, name) : -1;
        if (v < 0)
            return fail(c, l, pos, SG_EFORMAT, "unknown %s \"%.64s\"", f->names->what,
                        s.len < sizeof name ? name : "(too long)");
        /* a reader of the bundle's version would not know the name */
        uint32_t since = sg_enum_since(f->names, v);
        if (since > c->version)
            return fail(c, l, pos, SG_EFORMAT,
                        "\"%s\" needs format version %" PRIu32 " (this bundle says %" PRIu32 ")",
                        name, since, c->version);
        int32_t v32 = v;
        memcpy(p, &v32, sizeof v32);
        return SG_OK;
    }
    case SG_FT_INDEX: {
        uint32_t v;
        if (!(rc = get_index(c, f->table, l, &v))) memcpy(p, &v, sizeof v);
        return rc;
    }
    case SG_FT_NODE_ID:
        /* checked against the root graph once it is read */
        if (!(rc = get_int(c, 0, UINT32_MAX - 1, l, &x))) {
            uint32_t v = (uint32_t)x;
            memcpy(p, &v, sizeof v);
        }
        return rc;
    case SG_FT_STREAM: {
        uint32_t v;
        if (sg_json_peek(&c->r) == SG_JSON_STRING) {
            if (!sg_json_string(&c->r, &s)) return json_failed(c, l);
            if (!sg_json_string_is(&c->r, &s, "explicit"))
                return fail(c, l, pos, SG_EFORMAT, "expected a stream index or \"explicit\"");
            v = SG_STREAM_EXPLICIT;
        } else if ((rc = get_index(c, SG_TABLE_STREAMS, l, &v))) {
            return rc;
        }
        memcpy(p, &v, sizeof v);
        return SG_OK;
    }
    case SG_FT_TRIPLE: {
        if (sg_json_peek(&c->r) != SG_JSON_ARRAY) goto not_triple;
        sg_json_array_begin(&c->r);
        uint32_t v[3];
        for (size_t i = 0; i < 3; i++) {
            loc_t el = LOC_ELEM(l, i);
            if (sg_json_element(&c->r, i) != 1) goto not_triple;
            if ((rc = get_int(c, 0, UINT32_MAX, &el, &x))) return rc;
            v[i] = (uint32_t)x;
        }
        if (sg_json_element(&c->r, 3) != 0) goto not_triple;
        memcpy(p, v, sizeof v);
        return SG_OK;
    not_triple:
        if (c->r.failed) return json_failed(c, l);
        return fail(c, l, pos, SG_EFORMAT, "expected an array of 3 integers");
    }
    case SG_FT_HEX: {
        size_t max = 2 * (size_t)(f->max ? f->max : SG_BUNDLE_MAX_TABLE);
        if ((rc = get_string(c, max, l, &s))) return rc;
        if (s.len % 2) return fail(c, l, pos, SG_EFORMAT, "odd number of hex digits (%zu)", s.len);
        const char *h = c->r.text + s.pos;
        for (size_t i = 0; i < s.raw_len; i++)
            if (s.escaped || hexval(h[i]) < 0)
                return fail(c, l, pos, SG_EFORMAT, "not a hex digit at position %zu", i);
        uint32_t n = (uint32_t)(s.len / 2);
        if (!n) return SG_OK;
        uint8_t *b;
        if ((rc = mem_alloc(c, (void **)&b, n, false, f->key, l, pos))) return rc;
        for (uint32_t i = 0; i < n; i++)
            b[i] = (uint8_t)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
        *(uint8_t **)p = b;
        memcpy((char *)base + f->count_off, &n, sizeof n);
        return SG_OK;
    }
    case SG_FT_U32S:
    case SG_FT_PAIRS:
    case SG_FT_RECORDS:
        return decode_list(c, f, base, l);
    case SG_FT_OBJECT: {
        loc_t ol = *l;
        return decode_object(c, f->sub, p, &ol);
    }
    case SG_FT_BODY:
        return decode_body(c, c->graph, c->graph_depth + 1, l, (sg_graph_t **)p);
    case SG_FT_BODIES:
        return decode_bodies(c, f, base, l, c->graph_depth, c->graph);
    default:
        /* TABLE, NODES, EDGES, NEXT_ID, GRAPH, FORMAT, VERSION: decode_top/decode_graph */
        return sg_json_skip(&c->r, NULL) ? SG_OK : json_failed(c, l);
    }
}

/* Defaults a decoded record starts from (node payloads: once the type is known). */
static void init_fields(const sg_record_t *r, void *base, int node_type, bool typed)
{
    for (uint32_t i = 0; i < r->n_fields; i++) {
        const sg_field_t *f = &r->fields[i];
        if ((f->types != 0) != typed) continue;
        if (typed && !sg_field_applies(f, node_type)) continue;
        void *p = sg_field_ptr(f, base);
        if (f->type == SG_FT_INDEX || f->type == SG_FT_NODE_ID) {
            uint32_t none = SG_NONE;
            memcpy(p, &none, sizeof none);
        } else if (f->type == SG_FT_DURATION) {
            *(double *)p = (double)f->def;
        } else if (f->type == SG_FT_I32 && f->def) {
            int32_t v = (int32_t)f->def;
            memcpy(p, &v, sizeof v);
        } else if (f->type == SG_FT_ENUM && f->def > 0) {
            int32_t v = (int32_t)f->def;
            memcpy(p, &v, sizeof v);
        } else if (f->type == SG_FT_OBJECT) {
            init_fields(f->sub, p, -1, false);
        }
    }
}

static int node_type_of(const sg_record_t *r, const void *base)
{
    return r->id == SG_REC_NODE ? (int)((const sg_node_t *)base)->type : -1;
}

/* A fused kernel's record (FORMAT.md section 4.4), read after the root
 * graph: its node is a kernel node of the root with no other record, and
 * each stage's parameters fit in that node's. */
static int check_fusion(pctx_t *c, const sg_fusion_t *f, const loc_t *l, size_t pos)
{
    const sg_graph_t *g = c->root;
    loc_t nl = LOC_FIELD(l, "node");
    const sg_node_t *n = sg_graph_node(g, f->node);
    if (!n || n->type != SG_NODE_KERNEL)
        return fail(c, &nl, pos, SG_EFORMAT, "%" PRIu32 " is not a kernel node of the root graph",
                    f->node);
    if (!c->fused) {
        int rc = mem_alloc(c, (void **)&c->fused, g->n_nodes, true, "the fusion records", l, pos);
        if (rc) return rc;
    }
    if (c->fused[f->node])
        return fail(c, &nl, pos, SG_EFORMAT, "node %" PRIu32 " has a fusion record already",
                    f->node);
    c->fused[f->node] = 1;
    if (f->tier < 1 || f->tier > 2) {
        loc_t tl = LOC_FIELD(l, "tier");
        return fail(c, &tl, pos, SG_EFORMAT, "must be 1 or 2, found %" PRIu32, f->tier);
    }
    if (f->registers < -1 || f->spill_bytes < -1) {
        loc_t rl = LOC_FIELD(l, f->registers < -1 ? "registers" : "spill_bytes");
        return fail(c, &rl, pos, SG_EFORMAT, "must be -1 (unknown) or more");
    }
    loc_t sl = LOC_FIELD(l, "stages");
    if (f->n_stages == 0) return fail(c, &sl, pos, SG_EFORMAT, "a fused kernel has stages");
    for (uint32_t i = 0; i < f->n_stages; i++) {
        const sg_fused_stage_t *st = &f->stages[i];
        loc_t el = LOC_ELEM(&sl, i);
        if (st->node == SG_NONE)
            return fail(c, &el, pos, SG_EFORMAT, "\"node\" %" PRIu32 " is no node id", st->node);
        if ((uint64_t)st->param_base + st->kernel.params_size > n->u.kernel.params_size)
            return fail(c, &el, pos, SG_EFORMAT,
                        "its parameters (%" PRIu32 " bytes at %" PRIu32 ") reach past the fused "
                        "node's %" PRIu32 " bytes",
                        st->kernel.params_size, st->param_base, n->u.kernel.params_size);
    }
    loc_t dl = LOC_FIELD(l, "dropped");
    for (uint32_t i = 0; i < f->n_dropped; i++)
        if (f->dropped[i].stage >= f->n_stages) {
            loc_t el = LOC_ELEM(&dl, i);
            return fail(c, &el, pos, SG_EFORMAT,
                        "names stage %" PRIu32 " of a kernel of %" PRIu32 " stages",
                        f->dropped[i].stage, f->n_stages);
        }
    return SG_OK;
}

/* A kernel's access facts (FORMAT.md section 6.3): its pointer words in
 * ascending order inside the parameter bytes. */
static int check_facts(pctx_t *c, const sg_kernel_t *k, const loc_t *l, size_t pos)
{
    const sg_facts_t *f = &k->facts;
    loc_t al = LOC_FIELD(l, "access"), pl = LOC_FIELD(&al, "pointers");
    for (uint32_t i = 0; f->pointers && i < f->n_pointers; i++) {
        loc_t el = LOC_ELEM(&pl, i);
        if (i > 0 && f->pointers[i] <= f->pointers[i - 1])
            return fail(c, &el, pos, SG_EFORMAT, "pointer offsets must be ascending");
        if ((uint64_t)f->pointers[i] + 8 > k->params_size)
            return fail(c, &el, pos, SG_EFORMAT,
                        "the pointer word at %" PRIu32 " reaches past the %" PRIu32
                        " parameter bytes",
                        f->pointers[i], k->params_size);
    }
    return SG_OK;
}

/* Checks of one record beyond its fields' types (FORMAT.md's prose). */
static int check_record(pctx_t *c, const sg_record_t *r, void *base, const loc_t *l, size_t pos)
{
    if (r->id == SG_REC_FUSION) return check_fusion(c, base, l, pos);
    if (r->id == SG_REC_KERNEL) return check_facts(c, base, l, pos);
    if (r->id == SG_REC_SITE) {
        const sg_site_t *st = base;
        if (st->param < -1) {
            loc_t el = LOC_FIELD(l, "param");
            return fail(c, &el, pos, SG_EFORMAT, "must be -1 (none) or a byte offset, found %" PRId32,
                        st->param);
        }
        if (st->offset + st->size < st->offset) {
            loc_t el = LOC_FIELD(l, "size");
            return fail(c, &el, pos, SG_EFORMAT, "offset + size does not fit in 64 bits");
        }
        return SG_OK;
    }
    if (r->id == SG_REC_CAPTURE || r->id == SG_REC_DEVICE) {
        const char *key = r->id == SG_REC_CAPTURE ? "rank" : "ordinal";
        int32_t v = r->id == SG_REC_CAPTURE ? ((const sg_graph_t *)base)->rank
                                            : ((const sg_device_t *)base)->ordinal;
        loc_t vl = LOC_FIELD(l, key);
        if (v < -1) return fail(c, &vl, pos, SG_EFORMAT, "must be -1 (none) or more, found %d", v);
    }
    if (r->id == SG_REC_MEMSET) {
        const sg_memset_t *m = base;
        if (m->element_size != 0 && m->element_size != 1 && m->element_size != 2 &&
            m->element_size != 4) {
            loc_t el = LOC_FIELD(l, "element_size");
            return fail(c, &el, pos, SG_EFORMAT, "must be 1, 2 or 4 (0 = not set), found %" PRIu32,
                        m->element_size);
        }
    } else if (r->id == SG_REC_PARAMS) {
        const sg_kernel_t *k = base;
        for (uint32_t i = 0; i < k->n_params; i++) {
            uint64_t end = (uint64_t)k->param_offsets[i] + k->param_sizes[i];
            if (end <= k->params_size) continue;
            loc_t ll = LOC_FIELD(l, "layout"), el = LOC_ELEM(&ll, i);
            return fail(c, &el, pos, SG_EFORMAT,
                        "parameter %" PRIu32 " [offset %" PRIu32 ", size %" PRIu32
                        "] reaches past the %" PRIu32 " parameter bytes",
                        i, k->param_offsets[i], k->param_sizes[i], k->params_size);
        }
    }
    return SG_OK;
}

/* Fill in what absent fields default to. */
static int finish_record(pctx_t *c, const sg_record_t *r, void *base, uint64_t present,
                         const loc_t *l, size_t pos)
{
    int type = node_type_of(r, base);
    for (uint32_t i = 0; i < r->n_fields; i++) {
        const sg_field_t *f = &r->fields[i];
        if (present >> i & 1u) continue;
        if (type >= 0 && !sg_field_applies(f, type)) continue;
        if (f->flags & SG_F_REQ) {
            loc_t fl = LOC_FIELD(l, f->key);
            return fail(c, &fl, pos, SG_EFORMAT, "required field is missing");
        }
        if (!(f->flags & (SG_F_LABEL | SG_F_NONNULL))) continue;
        char buf[16] = "";
        if (f->flags & SG_F_LABEL) snprintf(buf, sizeof buf, "%c%" PRIu32, (char)f->def, l->id);
        char *d;
        int rc = mem_alloc(c, (void **)&d, strlen(buf) + 1, false, "a label", l, pos);
        if (rc) return rc;
        memcpy(d, buf, strlen(buf) + 1);
        *(char **)sg_field_ptr(f, base) = d;
    }
    return check_record(c, r, base, l, pos);
}

/* Decode an object of record r into base (zeroed by the caller). Keys this
 * record does not know are skipped; a field belonging to a node type other
 * than the node's is one of them. l->id is set once the id is read. */
static int decode_object(pctx_t *c, const sg_record_t *r, void *base, loc_t *l)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_OBJECT, "an object", l);
    if (rc) return rc;
    sg_json_object_begin(&c->r);
    init_fields(r, base, -1, false);
    bool typed = r->id == SG_REC_NODE, type_known = !typed;
    uint64_t seen = 0, present = 0;
    struct {
        uint32_t field;
        size_t pos;
    } later[64];
    uint32_t n_later = 0;
    sg_json_string_t key;
    int k;
    for (size_t i = 0; (k = sg_json_member(&c->r, i, &key)) == 1; i++) {
        const sg_field_t *f = NULL;
        if (!key.escaped)
            f = sg_record_field(r, c->r.text + key.pos, key.raw_len);
        else if (key.len < 64) {
            char name[64];
            sg_json_decode(&c->r, &key, name);
            f = sg_record_field(r, name, key.len);
        }
        if (!f) {
            if (!sg_json_skip(&c->r, NULL)) return json_failed(c, l);
            continue;
        }
        uint32_t fi = (uint32_t)(f - r->fields);
        if (seen >> fi & 1u)
            return fail(c, l, key.pos - 1, SG_EFORMAT, "duplicate key \"%s\"", f->key);
        seen |= 1ull << fi;
        loc_t fl = LOC_FIELD(l, f->key);
        if (sg_json_peek(&c->r) == SG_JSON_NULL) {
            sg_json_null(&c->r);
            continue;
        }
        if (f->types && !type_known) {
            later[n_later].field = fi;
            later[n_later++].pos = sg_json_tell(&c->r);
            if (!sg_json_skip(&c->r, NULL)) return json_failed(c, l);
            present |= 1ull << fi;
            continue;
        }
        if (f->types && !sg_field_applies(f, node_type_of(r, base))) {
            /* another type's payload: an unknown field */
            if (!sg_json_skip(&c->r, NULL)) return json_failed(c, l);
            continue;
        }
        if ((rc = decode_field(c, r, f, base, &fl))) return rc;
        present |= 1ull << fi;
        if (f->flags & SG_F_ID) memcpy(&l->id, sg_field_ptr(f, base), sizeof l->id);
        if (f->flags & SG_F_TYPE) {
            type_known = true;
            init_fields(r, base, node_type_of(r, base), true);
        }
    }
    if (k < 0) return json_failed(c, l);
    if (n_later && type_known) {
        /* payloads met before the type: back to each, then past the object */
        size_t end = c->r.pos;
        int depth = c->r.depth;
        int type = node_type_of(r, base);
        for (uint32_t i = 0; i < n_later; i++) {
            const sg_field_t *f = &r->fields[later[i].field];
            if (!sg_field_applies(f, type)) {
                present &= ~(1ull << later[i].field);
                continue;
            }
            sg_json_seek(&c->r, later[i].pos, depth + 1);
            loc_t fl = LOC_FIELD(l, f->key);
            if ((rc = decode_field(c, r, f, base, &fl))) return rc;
        }
        sg_json_seek(&c->r, end, depth);
    }
    return finish_record(c, r, base, present, l, pos);
}

/* ---- graphs -------------------------------------------------------------------------------- */

/* Where the keys of an object are: one pass over it (checking all of it),
 * recording for each field of the records given the offset of its value and,
 * for an array, how many entries it has. */
typedef struct {
    size_t pos[2][32];
    size_t count[2][32];
    uint32_t present[2]; /* bit per field, null values excluded */
} spans_t;

static int scan_object(pctx_t *c, const sg_record_t *const recs[2], spans_t *sp, const loc_t *l)
{
    memset(sp, 0, sizeof *sp);
    int rc = want(c, SG_JSON_OBJECT, "an object", l);
    if (rc) return rc;
    sg_json_object_begin(&c->r);
    uint32_t seen[2] = {0, 0};
    sg_json_string_t key;
    int k;
    for (size_t i = 0; (k = sg_json_member(&c->r, i, &key)) == 1; i++) {
        char name[64];
        const sg_field_t *f = NULL;
        int which = 0;
        if (key.len < sizeof name) {
            sg_json_decode(&c->r, &key, name);
            for (which = 0; which < 2 && recs[which]; which++)
                if ((f = sg_record_field(recs[which], name, key.len))) break;
        }
        size_t vpos = sg_json_tell(&c->r), n = 0;
        bool is_null = sg_json_peek(&c->r) == SG_JSON_NULL;
        if (!sg_json_skip(&c->r, &n)) return json_failed(c, l);
        if (!f) continue;
        uint32_t fi = (uint32_t)(f - recs[which]->fields);
        if (seen[which] >> fi & 1u)
            return fail(c, l, key.pos - 1, SG_EFORMAT, "duplicate key \"%s\"", f->key);
        seen[which] |= 1u << fi;
        if (is_null) continue;
        sp->pos[which][fi] = vpos;
        sp->count[which][fi] = n;
        sp->present[which] |= 1u << fi;
    }
    return k < 0 ? json_failed(c, l) : SG_OK;
}

/* Place the value of field fi of spans `which` under the reader. */
static bool at_span(pctx_t *c, const spans_t *sp, int which, uint32_t fi, int depth)
{
    if (!(sp->present[which] >> fi & 1u)) return false;
    sg_json_seek(&c->r, sp->pos[which][fi], depth);
    return true;
}

/* A conservative bound on the holes the format allows a text of this size
 * (each node or edge takes at least 40 bytes), for refusing absurd ids
 * before spending memory on them; the exact rule is checked at the end. */
static uint64_t hole_bound(const pctx_t *c)
{
    return sg_bundle_hole_budget(c->r.len / 40 + 1);
}

static int too_many_holes(pctx_t *c, const loc_t *al, size_t pos, const char *what, uint64_t end,
                          uint64_t n, uint64_t budget)
{
    return fail(c, al, pos, SG_ELIMIT,
                "%s ids go up to %" PRIu64 " for only %" PRIu64 " %ss: too many unused ids (the "
                "bundle may have at most %" PRIu64 ")",
                what, end - 1, n, what, budget);
}

static void note_holes(pctx_t *c, const loc_t *al, const char *what, uint64_t end, uint64_t n)
{
    uint64_t holes = end - n;
    c->holes += holes;
    if (holes <= c->worst_holes) return;
    c->worst_holes = holes;
    loc_format(al, c->worst_where, sizeof c->worst_where);
    c->worst_what = what;
    c->worst_end = end;
    c->worst_n = n;
}

/* The id-indexed array of a graph's nodes (edges): every slot a hole until
 * an entry is placed in it. */
static int make_slots(pctx_t *c, sg_graph_t *g, bool edges, uint64_t cap, const loc_t *al,
                      size_t pos)
{
    size_t elem = edges ? sizeof(sg_edge_t) : sizeof(sg_node_t);
    void **arr = edges ? (void **)&g->edges : (void **)&g->nodes;
    uint32_t *have = edges ? &g->cap_edges : &g->cap_nodes;
    uint32_t *n = edges ? &g->n_edges : &g->n_nodes;
    uint32_t old = *have;
    if (cap <= old) {
        *n = old;
        return SG_OK;
    }
    int rc = mem_grow(c, arr, (size_t)old * elem, (size_t)cap * elem,
                      edges ? "the edges of a graph" : "the nodes of a graph", al, pos);
    if (rc) return rc;
    for (uint64_t i = old; i < cap; i++) {
        if (edges)
            g->edges[i] = (sg_edge_t){.id = (uint32_t)i,
                                      .from = SG_NONE,
                                      .to = SG_NONE,
                                      .event = SG_NONE,
                                      .removed = true};
        else
            g->nodes[i] = (sg_node_t){.id = (uint32_t)i, .removed = true};
    }
    *have = (uint32_t)cap;
    *n = (uint32_t)cap; /* until the end is known: every slot is freed with the graph */
    return SG_OK;
}

/* Make room for id in the slots (ids are mostly dense: grow by doubling). */
static int slot_for(pctx_t *c, sg_graph_t *g, bool edges, uint32_t id, uint64_t listed,
                    const loc_t *al, size_t pos)
{
    uint32_t cap = edges ? g->cap_edges : g->cap_nodes;
    if (id < cap) return SG_OK;
    uint64_t budget = hole_bound(c);
    if ((uint64_t)id + 1 > listed + budget)
        return too_many_holes(c, al, pos, edges ? "edge" : "node", (uint64_t)id + 1, listed,
                              budget);
    uint64_t ncap = (uint64_t)cap * 2;
    if (ncap < (uint64_t)id + 1) ncap = (uint64_t)id + 1;
    if (ncap > listed + budget) ncap = listed + budget;
    if (ncap > SG_NONE) ncap = SG_NONE;
    return make_slots(c, g, edges, ncap, al, pos);
}

/* Before the count entries of a graph's nodes (edges) array: the limits on
 * all graphs together, the holes next id leaves, the slots; the reader is
 * then inside the array. */
static int begin_entries(pctx_t *c, sg_graph_t *g, bool edges, size_t count, int64_t next,
                         const loc_t *al)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_ARRAY, "an array", al);
    if (rc) return rc;
    uint64_t *total = edges ? &c->edges : &c->nodes;
    uint64_t limit = edges ? SG_BUNDLE_MAX_EDGES : SG_BUNDLE_MAX_NODES;
    const char *what = edges ? "edge" : "node";
    if (count > limit || (*total += count) > limit)
        return fail(c, al, pos, SG_ELIMIT,
                    "%" PRIu64 " %ss in all graphs, more than the limit %" PRIu64,
                    *total > count ? *total : (uint64_t)count, what, limit);
    uint64_t cap = next > (int64_t)count ? (uint64_t)next : count;
    if (cap > count + hole_bound(c))
        return too_many_holes(c, al, pos, what, cap, count, hole_bound(c));
    if ((rc = make_slots(c, g, edges, cap, al, pos))) return rc;
    sg_json_array_begin(&c->r);
    return SG_OK;
}

static int decode_nodes(pctx_t *c, sg_graph_t *g, int depth, size_t count, int64_t next,
                        const loc_t *nl, uint32_t *end_out)
{
    int rc = begin_entries(c, g, false, count, next, nl);
    if (rc) return rc;
    sg_graph_t *saved_graph = c->graph;
    int saved_depth = c->graph_depth;
    c->graph = g;
    c->graph_depth = depth;
    uint64_t end = 0;
    int k;
    for (size_t i = 0; (k = sg_json_element(&c->r, i)) == 1; i++) {
        loc_t el = LOC_ELEM(nl, i);
        size_t epos = sg_json_tell(&c->r);
        sg_node_t tmp;
        memset(&tmp, 0, sizeof tmp);
        rc = decode_object(c, sg_records[SG_REC_NODE], &tmp, &el);
        if (!rc) rc = slot_for(c, g, false, tmp.id, count, nl, epos);
        if (!rc && !g->nodes[tmp.id].removed) {
            el.id = tmp.id;
            rc = fail(c, &el, epos, SG_EFORMAT, "duplicate node id (also at position %" PRIu32 ")",
                      g->nodes[tmp.id].n_in);
        }
        if (rc) {
            sg_node_release(&tmp);
            c->graph = saved_graph;
            c->graph_depth = saved_depth;
            return rc;
        }
        tmp.n_in = (uint32_t)i; /* its position, for a duplicate's message; reset below */
        g->nodes[tmp.id] = tmp;
        g->live_nodes++;
        if ((uint64_t)tmp.id + 1 > end) end = (uint64_t)tmp.id + 1;
    }
    c->graph = saved_graph;
    c->graph_depth = saved_depth;
    if (k < 0) return json_failed(c, nl);
    *end_out = (uint32_t)end;
    return SG_OK;
}

/* An edge's own rules, once its fields are read; its endpoints are nodes of g. */
static int check_edge(pctx_t *c, const sg_graph_t *g, const sg_edge_t *e, const loc_t *el,
                      size_t pos)
{
    if (!sg_graph_node(g, e->from))
        return fail(c, el, pos, SG_EFORMAT, "\"from\" names unknown node %" PRIu32, e->from);
    if (!sg_graph_node(g, e->to))
        return fail(c, el, pos, SG_EFORMAT, "\"to\" names unknown node %" PRIu32, e->to);
    if (e->from == e->to)
        return fail(c, el, pos, SG_EFORMAT, "self-loop on node %" PRIu32, e->from);
    if (e->kind == SG_EDGE_EVENT && e->event == SG_NONE)
        return fail(c, el, pos, SG_EFORMAT, "an event edge must name its event");
    if (e->kind != SG_EDGE_EVENT && e->event != SG_NONE)
        return fail(c, el, pos, SG_EFORMAT, "a %s edge may not name an event",
                    sg_edge_kind_name(e->kind));
    return SG_OK;
}

/* Position in the edges array (at pos, reader depth vdepth) of the first
 * edge with id `id`: read again only for a duplicate's message. */
static size_t first_edge_with(pctx_t *c, size_t pos, int vdepth, uint32_t id, size_t before)
{
    sg_json_seek(&c->r, pos, vdepth);
    sg_json_array_begin(&c->r);
    for (size_t i = 0; i < before && sg_json_element(&c->r, i) == 1; i++) {
        sg_edge_t e;
        memset(&e, 0, sizeof e);
        loc_t el = LOC_ELEM(NULL, i);
        if (decode_object(c, sg_records[SG_REC_EDGE], &e, &el)) break;
        if (e.id == id) return i;
    }
    return before;
}

static int decode_edges(pctx_t *c, sg_graph_t *g, size_t count, int64_t next, const loc_t *al,
                        size_t array_pos, int vdepth, uint32_t *end_out)
{
    int rc = begin_entries(c, g, true, count, next, al);
    if (rc) return rc;
    uint64_t end = 0;
    int k;
    for (size_t i = 0; (k = sg_json_element(&c->r, i)) == 1; i++) {
        loc_t el = LOC_ELEM(al, i);
        size_t epos = sg_json_tell(&c->r);
        sg_edge_t e;
        memset(&e, 0, sizeof e);
        if ((rc = decode_object(c, sg_records[SG_REC_EDGE], &e, &el)) ||
            (rc = check_edge(c, g, &e, &el, epos)) ||
            (rc = slot_for(c, g, true, e.id, count, al, epos)))
            return rc;
        if (!g->edges[e.id].removed) {
            sg_diag_t *keep = c->diag;
            c->diag = NULL; /* the second reading cannot fail, and must not speak */
            size_t first = first_edge_with(c, array_pos, vdepth, e.id, i);
            c->diag = keep;
            return fail(c, &el, epos, SG_EFORMAT, "duplicate edge id (also at position %zu)",
                        first);
        }
        g->edges[e.id] = e;
        g->live_edges++;
        if ((uint64_t)e.id + 1 > end) end = (uint64_t)e.id + 1;
    }
    if (k < 0) return json_failed(c, al);
    *end_out = (uint32_t)end;
    return SG_OK;
}

/* Each node's in and out lists, sized exactly, edges in id order. */
static int link_edges(pctx_t *c, sg_graph_t *g, const loc_t *al)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        g->nodes[i].n_in = g->nodes[i].n_out = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        if (e->removed) continue;
        g->nodes[e->from].n_out++;
        g->nodes[e->to].n_in++;
    }
    /* in one block, in node order (graph.c's sg_graph__adj_carve) */
    size_t total = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        total += (size_t)g->nodes[i].n_in + g->nodes[i].n_out;
    size_t k = total ? chunk(total * sizeof(sg_edge_id_t)) + SG_GRAPH__BLOCKS_BYTES : 0;
    if (k > c->mem_limit - c->mem)
        return over_budget(c, al, NO_POS, total * sizeof(sg_edge_id_t), "edge lists");
    if (sg_graph__adj_carve(g) != SG_OK) {
        for (uint32_t i = 0; i < g->n_nodes; i++)
            g->nodes[i].n_in = g->nodes[i].n_out = 0;
        return out_of_memory(c, al, NO_POS, total * sizeof(sg_edge_id_t), "edge lists");
    }
    c->mem += k;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        g->nodes[i].n_in = g->nodes[i].n_out = 0;
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = &g->edges[i];
        if (e->removed) continue;
        sg_node_t *a = &g->nodes[e->from], *b = &g->nodes[e->to];
        a->out[a->n_out++] = i;
        b->in[b->n_in++] = i;
    }
    return SG_OK;
}

/* Kahn's algorithm in O(V+E); on a cycle, name a node on it: every node left
 * over has an unprocessed predecessor, so walking those backwards must
 * revisit a node, and the first revisited node lies on a cycle. */
static int check_acyclic(pctx_t *c, const sg_graph_t *g, const loc_t *nl)
{
    uint32_t nn = g->n_nodes;
    if (nn == 0) return SG_OK;
    uint32_t *indeg, *queue;
    int rc =
        mem_alloc(c, (void **)&indeg, nn * sizeof *indeg, false, "the cycle check", nl, NO_POS);
    if (rc) return rc;
    if ((rc = mem_alloc(c, (void **)&queue, nn * sizeof *queue, false, "the cycle check", nl,
                        NO_POS))) {
        mem_free(c, indeg, nn * sizeof *indeg);
        return rc;
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
        rc = fail(c, nl, NO_POS, SG_ECYCLE, "the graph has a cycle through node %" PRIu32, v);
    }
    mem_free(c, indeg, nn * sizeof *indeg);
    mem_free(c, queue, nn * sizeof *queue);
    return rc;
}

/* The graph whose keys sp found (the graph record's spans in sp[which]);
 * its keys' values are at reader depth vdepth. */
static int decode_graph(pctx_t *c, sg_graph_t *g, const spans_t *sp, int which, int depth,
                        int vdepth, const loc_t *gl)
{
    /* the graph record's fields, in table order */
    enum { NODES, NEXT_NODE, EDGES, NEXT_EDGE };
    loc_t nl = LOC_FIELD(gl, "nodes"), el = LOC_FIELD(gl, "edges");
    loc_t nnl = LOC_FIELD(gl, "next_node_id"), nel = LOC_FIELD(gl, "next_edge_id");
    int64_t next_node = -1, next_edge = -1;
    int rc;
    if ((at_span(c, sp, which, NEXT_NODE, vdepth) &&
         (rc = get_int(c, 0, UINT32_MAX, &nnl, &next_node))) ||
        (at_span(c, sp, which, NEXT_EDGE, vdepth) &&
         (rc = get_int(c, 0, UINT32_MAX, &nel, &next_edge))))
        return rc;
    if (!at_span(c, sp, which, NODES, vdepth))
        return fail(c, &nl, NO_POS, SG_EFORMAT, "required field is missing");
    if (!(sp->present[which] >> EDGES & 1u))
        return fail(c, &el, NO_POS, SG_EFORMAT, "required field is missing");
    uint32_t end = 0;
    if ((rc = decode_nodes(c, g, depth, sp->count[which][NODES], next_node, &nl, &end))) return rc;
    if (next_node >= 0 && (uint64_t)next_node < end)
        return fail(c, &nnl, sp->pos[which][NEXT_NODE], SG_EFORMAT,
                    "%" PRId64 " is not above the largest node id %" PRIu32, next_node, end - 1);
    g->n_nodes = next_node >= 0 ? (uint32_t)next_node : end;
    note_holes(c, &nl, "node", g->n_nodes, g->live_nodes);

    at_span(c, sp, which, EDGES, vdepth);
    size_t edges_pos = sp->pos[which][EDGES];
    if ((rc = decode_edges(c, g, sp->count[which][EDGES], next_edge, &el, edges_pos, vdepth, &end)))
        return rc;
    if (next_edge >= 0 && (uint64_t)next_edge < end)
        return fail(c, &nel, sp->pos[which][NEXT_EDGE], SG_EFORMAT,
                    "%" PRId64 " is not above the largest edge id %" PRIu32, next_edge, end - 1);
    g->n_edges = next_edge >= 0 ? (uint32_t)next_edge : end;
    note_holes(c, &el, "edge", g->n_edges, g->live_edges);
    if ((rc = link_edges(c, g, &el))) return rc;
    return check_acyclic(c, g, &nl);
}

/* A body graph object at depth, created in *out (owned by the caller's node). */
static int decode_body(pctx_t *c, sg_graph_t *parent, int depth, const loc_t *l, sg_graph_t **out)
{
    size_t pos = sg_json_tell(&c->r);
    if (depth > SG_BUNDLE_MAX_DEPTH)
        return fail(c, l, pos, SG_ELIMIT, "body graphs nested deeper than the limit %d",
                    SG_BUNDLE_MAX_DEPTH);
    const sg_record_t *recs[2] = {sg_records[SG_REC_GRAPH], NULL};
    spans_t sp;
    int rc = scan_object(c, recs, &sp, l);
    if (rc) return rc;
    size_t end = c->r.pos;
    int d = c->r.depth;
    int k = chunk(sizeof(sg_graph_t)) > c->mem_limit - c->mem;
    if (k) return over_budget(c, l, pos, sizeof(sg_graph_t), "a body graph");
    sg_graph_t *b = sg_graph_create_body(parent);
    if (!b) return out_of_memory(c, l, pos, sizeof(sg_graph_t), "a body graph");
    c->mem += chunk(sizeof(sg_graph_t));
    *out = b;
    rc = decode_graph(c, b, &sp, 0, depth, d + 1, l);
    sg_json_seek(&c->r, end, d);
    return rc;
}

/* ---- top level ----------------------------------------------------------------------------- */

/* A list of the root (a table, whose entry i has "id": i, or the pass log),
 * sized exactly: the scan counted its entries. */
static int decode_table(pctx_t *c, const sg_field_t *f, size_t count, const loc_t *tl)
{
    size_t pos = sg_json_tell(&c->r);
    int rc = want(c, SG_JSON_ARRAY, "an array", tl);
    if (rc) return rc;
    if (count > f->max)
        return fail(c, tl, pos, SG_ELIMIT, "%zu entries, more than the limit %" PRIu32, count,
                    f->max);
    sg_graph_t *g = c->root;
    void **arr = sg_field_ptr(f, g);
    uint32_t *n = (uint32_t *)((char *)g + f->count_off);
    size_t elem = f->sub->size;
    if (count && (rc = mem_alloc(c, arr, count * elem, true, f->key, tl, pos))) return rc;
    uint32_t cap = (uint32_t)count;
    memcpy((char *)g + f->off2, &cap, sizeof cap); /* the model's capacity member */
    /* every entry is owned by the model from here (zeroed until it is read),
     * and an index into this table may name a later entry */
    *n = (uint32_t)count;
    sg_json_array_begin(&c->r);
    int k;
    for (size_t i = 0; (k = sg_json_element(&c->r, i)) == 1; i++) {
        loc_t el = LOC_ELEM(tl, i);
        size_t epos = sg_json_tell(&c->r);
        void *e = (char *)*arr + i * elem;
        if ((rc = decode_object(c, f->sub, e, &el))) return rc;
        if (f->type != SG_FT_TABLE) continue;
        uint32_t id;
        memcpy(&id, e, sizeof id);
        if (id != i)
            return fail(c, &el, epos, SG_EFORMAT,
                        "id %" PRIu32 " is not its position %zu (table ids are dense)", id, i);
    }
    return k < 0 ? json_failed(c, tl) : SG_OK;
}

/* source_image and ptx_image may name a later entry, so their kinds are
 * checked once the whole table is read. Only NVRTC source can be recompiled
 * to PTX, and only a PTX image is PTX; any other kind there would send
 * readers looking for code that is not. */
static int check_image_link(pctx_t *c, uint32_t i, const char *key, uint32_t s,
                            sg_image_kind_t want)
{
    const sg_graph_t *g = c->root;
    if (s == SG_NONE) return SG_OK;
    loc_t fl = LOC_FIELD(NULL, "images");
    loc_t el = LOC_ELEM(&fl, i);
    el.id = i;
    loc_t sl = LOC_FIELD(&el, key);
    if (s == i) return fail(c, &sl, NO_POS, SG_EFORMAT, "names the image itself");
    if (g->images[s].kind != want)
        return fail(c, &sl, NO_POS, SG_EFORMAT, "names image %" PRIu32 ", a %s image, not %s", s,
                    sg_image_kind_name(g->images[s].kind), sg_image_kind_name(want));
    return SG_OK;
}

static int check_images(pctx_t *c)
{
    const sg_graph_t *g = c->root;
    for (uint32_t i = 0; i < g->n_images; i++) {
        int rc = check_image_link(c, i, "source_image", g->images[i].source_image, SG_IMAGE_NVRTC);
        if (!rc) rc = check_image_link(c, i, "ptx_image", g->images[i].ptx_image, SG_IMAGE_PTX);
        if (rc) return rc;
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
        if (!n) return fail(c, &al, NO_POS, SG_EFORMAT, "names unknown node %" PRIu32, a);
        if (n->type != SG_NODE_MEM_ALLOC)
            return fail(c, &al, NO_POS, SG_EFORMAT,
                        "names node %" PRIu32 ", a %s node, not mem_alloc", a,
                        sg_node_type_name(n->type));
    }
    return SG_OK;
}

static int decode_header(pctx_t *c, const spans_t *sp)
{
    /* bundle record fields 0 and 1: format, version */
    loc_t fl = LOC_FIELD(NULL, "format"), vl = LOC_FIELD(NULL, "version");
    if (!at_span(c, sp, 0, 0, 1))
        return fail(c, &fl, NO_POS, SG_EFORMAT, "required field is missing");
    size_t pos = sp->pos[0][0];
    sg_json_string_t s;
    int rc = get_string(c, SG_BUNDLE_MAX_STRING, &fl, &s);
    if (rc) return rc;
    if (!sg_json_string_is(&c->r, &s, SG_FORMAT_NAME)) {
        char shown[65];
        sg_json_string_t cut = s;
        if (cut.len > 64) cut.len = 0; /* shown only when short */
        if (cut.len)
            sg_json_decode(&c->r, &cut, shown);
        else
            snprintf(shown, sizeof shown, "...");
        return fail(c, &fl, pos, SG_EFORMAT, "\"%s\" is not \"" SG_FORMAT_NAME "\"", shown);
    }
    if (!at_span(c, sp, 0, 1, 1))
        return fail(c, &vl, NO_POS, SG_EFORMAT, "required field is missing");
    pos = sp->pos[0][1];
    if ((rc = want(c, SG_JSON_INTEGER, "an integer", &vl))) return rc;
    sg_json_number_t n;
    if (!sg_json_number(&c->r, &n)) return json_failed(c, &vl);
    if (n.integer < SG_FORMAT_VERSION_MIN || n.integer > SG_FORMAT_VERSION)
        return fail(c, &vl, pos, SG_EUNSUPPORTED,
                    "version %" PRId64 " is not supported (this reader supports %d to %d)",
                    n.integer, SG_FORMAT_VERSION_MIN, SG_FORMAT_VERSION);
    c->version = (uint32_t)n.integer;
    return SG_OK;
}

static int decode_top(pctx_t *c)
{
    const sg_record_t *recs[2] = {&sg_record_bundle, sg_records[SG_REC_GRAPH]};
    spans_t sp;
    sg_json_type_t t = sg_json_peek(&c->r);
    if (t != SG_JSON_OBJECT) {
        if (c->r.failed || t == SG_JSON_BAD) {
            if (!c->r.failed) sg_json_skip(&c->r, NULL);
            return json_failed(c, NULL);
        }
        /* a value, but not a bundle: check it is JSON at all, then say so */
        if (!sg_json_skip(&c->r, NULL) || !sg_json_end(&c->r)) return json_failed(c, NULL);
        return fail(c, NULL, 0, SG_EFORMAT, "expected an object at the top level, found %s",
                    type_name(t));
    }
    int rc = scan_object(c, recs, &sp, NULL);
    if (rc) return rc;
    if (!sg_json_end(&c->r)) return json_failed(c, NULL);
    if ((rc = decode_header(c, &sp))) return rc;
    sg_graph_t *g = c->root;
    const sg_record_t *br = &sg_record_bundle;
    for (uint32_t i = 2; i < br->n_fields; i++) {
        const sg_field_t *f = &br->fields[i];
        if (f->type == SG_FT_GRAPH) {
            if ((rc = decode_graph(c, g, &sp, 1, 0, 1, NULL)) || (rc = check_alloc_nodes(c)))
                return rc;
            continue;
        }
        if (!at_span(c, &sp, 0, i, 1)) continue;
        loc_t fl = LOC_FIELD(NULL, f->key);
        if (f->type == SG_FT_TABLE || f->type == SG_FT_RECORDS) {
            if ((rc = decode_table(c, f, sp.count[0][i], &fl))) return rc;
            if (f->sub->id == SG_REC_IMAGE && (rc = check_images(c))) return rc;
        } else if ((rc = decode_field(c, br, f, g, &fl))) {
            return rc;
        }
    }
    /* the holes of all graphs together, now that all entries are counted */
    uint64_t budget = sg_bundle_hole_budget(c->nodes + c->edges);
    if (c->holes > budget) {
        loc_t wl = LOC_FIELD(NULL, c->worst_where);
        return too_many_holes(c, &wl, NO_POS, c->worst_what, c->worst_end, c->worst_n, budget);
    }
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
    pctx_t *c = calloc(1, sizeof *c);
    if (!c) return sg_bundle_diag(diag, SG_ENOMEM, name, 0, 0, "out of memory");
    sg_json_init(&c->r, text, len);
    c->diag = diag;
    c->file = name;
    c->mem_limit = SG_BUNDLE_MEMORY_FACTOR * len + SG_BUNDLE_MEMORY_FLOOR;
    c->root = sg_graph_create();
    int rc = c->root ? decode_top(c) : sg_bundle_diag(diag, SG_ENOMEM, name, 0, 0, "out of memory");
    if (rc) {
        sg_graph_destroy(c->root);
    } else {
        *out = c->root;
    }
    free(c->fused);
    free(c);
    return rc;
}
