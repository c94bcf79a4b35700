/* bundle_emit.c: the model -> graph.json text (docs/FORMAT.md), deterministic.
 *
 * What is written comes from the field tables (bundle_fields.c): each record
 * is an object whose fields appear in table order, a field marked SG_F_OMIT
 * only when it differs from its default. The layout is by hand, one table
 * entry, node or edge per line, so graph.json diffs well and stays readable
 * with `less`. Same model in, same bytes out: that makes golden files stable
 * and lets read -> write -> read be compared byte for byte. Writing directly
 * into one growing buffer (no JSON tree, no JSON library) keeps the cost a
 * few hundred bytes of appends per node and lets the shim write bundles; the
 * reader re-checks everything written here (tests/fuzz/fuzz_bundle.c). */
#include "bundle_fields.h"
#include "bundle_private.h"
#include "utf8.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- output buffer ------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    int err;                        /* first error; once set, everything else is a no-op */
    uint32_t version;               /* the newest .since of what was written */
    size_t version_at, version_len; /* where the version number is in the text */
    int depth;                      /* nesting of objects/arrays */
    bool first[160];                /* per nesting level: no value written yet */
} emit_t;

static bool reserve_out(emit_t *e, size_t more)
{
    if (e->err) return false;
    if (e->n + more + 1 <= e->cap) return true;
    size_t cap = e->cap ? e->cap : 65536;
    while (cap < e->n + more + 1)
        cap *= 2;
    char *p = realloc(e->p, cap);
    if (!p) {
        e->err = SG_ENOMEM;
        return false;
    }
    e->p = p;
    e->cap = cap;
    return true;
}

static void out_raw(emit_t *e, const char *s, size_t n)
{
    if (!reserve_out(e, n)) return;
    memcpy(e->p + e->n, s, n);
    e->n += n;
    e->p[e->n] = '\0';
}

static void out_str(emit_t *e, const char *s)
{
    out_raw(e, s, strlen(s));
}

/* ---- structure ------------------------------------------------------------------------- */

/* Separator before a value in the current object/array. */
static void sep(emit_t *e)
{
    if (e->depth > 0) {
        if (!e->first[e->depth]) out_raw(e, ", ", 2);
        e->first[e->depth] = false;
    }
}

static void open_(emit_t *e, char c)
{
    sep(e);
    out_raw(e, &c, 1);
    if (e->depth + 1 >= (int)(sizeof e->first / sizeof *e->first)) {
        if (!e->err) e->err = SG_ELIMIT;
        return;
    }
    e->first[++e->depth] = true;
}

static void close_(emit_t *e, char c)
{
    out_raw(e, &c, 1);
    if (e->depth > 0) e->depth--;
}

#define obj_begin(e) open_((e), '{')
#define obj_end(e) close_((e), '}')
#define arr_begin(e) open_((e), '[')
#define arr_end(e) close_((e), ']')

/* `"key": ` inside an object; the value follows without a separator. */
static void key(emit_t *e, const char *k)
{
    sep(e);
    out_raw(e, "\"", 1);
    out_str(e, k);
    out_raw(e, "\": ", 3);
    e->first[e->depth] = true; /* the value that follows takes no separator */
}

/* After a value inside an object the next key needs ", ". */
static void done(emit_t *e)
{
    if (e->depth > 0) e->first[e->depth] = false;
}

/* ---- values ------------------------------------------------------------------------------- */

static void v_raw(emit_t *e, const char *s)
{
    sep(e);
    out_str(e, s);
    done(e);
}

static void v_int(emit_t *e, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    v_raw(e, buf);
}

static void v_addr(emit_t *e, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "\"0x%" PRIx64 "\"", v);
    v_raw(e, buf);
}

/* Integers below 2^53 survive any JSON reader; larger ones travel as hex. */
static void v_u64(emit_t *e, uint64_t v)
{
    if (v < (UINT64_C(1) << 53))
        v_int(e, (int64_t)v);
    else
        v_addr(e, v);
}

static void v_bool(emit_t *e, bool b)
{
    v_raw(e, b ? "true" : "false");
}

/* Shortest "%.Ng" that reads back to the same double, with '.' whatever the
 * locale (the shim runs inside programs that may set LC_NUMERIC), and a ".0"
 * when it would otherwise look like an integer. Callers pass finite values. */
static void v_real(emit_t *e, double d)
{
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    const char *point = localeconv()->decimal_point;
    if (point && strcmp(point, ".") != 0 && point[0]) {
        char *q = strstr(buf, point);
        if (q) {
            size_t pl = strlen(point);
            *q = '.';
            memmove(q + 1, q + pl, strlen(q + pl) + 1);
        }
    }
    if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
    v_raw(e, buf);
}

/* A JSON string for a model string. Strings come from the captured program
 * (argv[0], labels) and need not be UTF-8: invalid bytes become U+FFFD. A
 * string longer than a reader accepts is cut at a character boundary, so
 * that whatever sgcap writes, sgcap can read. */
static void v_str(emit_t *e, const char *s)
{
    sep(e);
    size_t n = strlen(s);
    /* worst case: every byte becomes \u00XX (6) or U+FFFD (3) */
    if (!reserve_out(e, 6 * (n < SG_BUNDLE_MAX_STRING ? n : SG_BUNDLE_MAX_STRING) + 2)) return;
    char *o = e->p + e->n;
    *o++ = '"';
    size_t kept = 0; /* decoded bytes so far: what the reader counts */
    for (size_t i = 0; i < n;) {
        const unsigned char *u = (const unsigned char *)s + i;
        size_t l = sg_utf8_seq(u, n - i);
        size_t add = l ? l : 3;
        if (kept + add > SG_BUNDLE_MAX_STRING) break;
        kept += add;
        if (!l) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            continue;
        }
        if (l == 1 && (u[0] < 0x20 || u[0] == '"' || u[0] == '\\')) {
            static const char hex[] = "0123456789abcdef";
            *o++ = '\\';
            switch (u[0]) {
            case '"':
                *o++ = '"';
                break;
            case '\\':
                *o++ = '\\';
                break;
            case '\b':
                *o++ = 'b';
                break;
            case '\f':
                *o++ = 'f';
                break;
            case '\n':
                *o++ = 'n';
                break;
            case '\r':
                *o++ = 'r';
                break;
            case '\t':
                *o++ = 't';
                break;
            default:
                memcpy(o, "u00", 3);
                o[3] = hex[u[0] >> 4];
                o[4] = hex[u[0] & 15];
                o += 5;
            }
        } else {
            memcpy(o, u, l);
            o += l;
        }
        i += l;
    }
    *o++ = '"';
    *o = '\0';
    e->n = (size_t)(o - e->p);
    done(e);
}

static void v_hex(emit_t *e, const uint8_t *b, uint32_t n)
{
    static const char digits[] = "0123456789abcdef";
    sep(e);
    if (!reserve_out(e, (size_t)n * 2 + 2)) return;
    char *o = e->p + e->n;
    *o++ = '"';
    for (uint32_t i = 0; i < n; i++) {
        *o++ = digits[b[i] >> 4];
        *o++ = digits[b[i] & 15];
    }
    *o++ = '"';
    *o = '\0';
    e->n = (size_t)(o - e->p);
    done(e);
}

static void v_triple(emit_t *e, const uint32_t v[3])
{
    arr_begin(e);
    for (int i = 0; i < 3; i++)
        v_int(e, v[i]);
    arr_end(e);
    done(e);
}

static void v_u32_array(emit_t *e, const uint32_t *a, uint32_t n)
{
    arr_begin(e);
    for (uint32_t i = 0; i < n; i++)
        v_int(e, a[i]);
    arr_end(e);
    done(e);
}

/* ---- records ---------------------------------------------------------------------------- */

static void graph_body(emit_t *e, const sg_graph_t *g, int depth);
static void emit_fields(emit_t *e, const sg_record_t *r, const void *base, int depth, bool top);

/* Past the last live entry the ids are holes kept by next_node_id. */
static uint32_t live_end_nodes(const sg_graph_t *g)
{
    uint32_t end = g->n_nodes;
    while (end && g->nodes[end - 1].removed)
        end--;
    return end;
}

static uint32_t live_end_edges(const sg_graph_t *g)
{
    uint32_t end = g->n_edges;
    while (end && g->edges[end - 1].removed)
        end--;
    return end;
}

/* Top-level layout: ` "key": value` lines, arrays one entry per line. The
 * values inside are written at depth 1 of the separator logic. */
static void top_key(emit_t *e, const char *k)
{
    out_str(e, e->n > 2 ? ",\n \"" : " \"");
    out_str(e, k);
    out_str(e, "\": ");
    e->depth = 0;
}

/* An array whose entries are written by entry(i) for i in [0, n) where
 * live(i); on the top level one entry per line. */
typedef struct {
    const void *base;
    const sg_field_t *f;
    int depth;
} entries_t;

static bool entry_live(const entries_t *x, uint32_t i)
{
    const void *arr = *(void *const *)sg_field_ptr(x->f, x->base);
    if (x->f->type == SG_FT_NODES) return !((const sg_node_t *)arr)[i].removed;
    if (x->f->type == SG_FT_EDGES) return !((const sg_edge_t *)arr)[i].removed;
    return true;
}

static void entry_write(emit_t *e, const entries_t *x, uint32_t i)
{
    const char *arr = *(const char *const *)sg_field_ptr(x->f, x->base);
    const sg_record_t *r = x->f->sub;
    if (x->f->type == SG_FT_BODIES) {
        graph_body(e, ((sg_graph_t *const *)arr)[i], x->depth + 1);
        return;
    }
    obj_begin(e);
    emit_fields(e, r, arr + (size_t)i * r->size, x->depth, false);
    obj_end(e);
    done(e);
}

static void emit_entries(emit_t *e, const entries_t *x, uint32_t n, bool top)
{
    if (!top) {
        arr_begin(e);
        for (uint32_t i = 0; i < n && !e->err; i++)
            if (entry_live(x, i)) entry_write(e, x, i);
        arr_end(e);
        done(e);
        return;
    }
    out_str(e, n ? "[\n" : "[");
    for (uint32_t i = 0; i < n && !e->err; i++) {
        if (!entry_live(x, i)) continue;
        out_str(e, "  ");
        e->depth = 0;
        entry_write(e, x, i);
        out_str(e, i + 1 == n ? "\n" : ",\n");
    }
    out_str(e, n ? " ]" : "]");
}

static int32_t load_i32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t load_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t load_u64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* A char[] member as a string, whatever the model left in it. */
static void v_chars(emit_t *e, const char *p, size_t size)
{
    char buf[64];
    size_t n = size < sizeof buf ? size : sizeof buf;
    memcpy(buf, p, n);
    buf[n - 1] = '\0';
    v_str(e, buf);
}

static void v_name(emit_t *e, const char *name)
{
    sep(e);
    out_raw(e, "\"", 1);
    out_str(e, name); /* enum names: plain ASCII */
    out_raw(e, "\"", 1);
    done(e);
}

static void emit_value(emit_t *e, const sg_field_t *f, const void *base, int depth, bool top)
{
    const void *p = sg_field_ptr(f, base);
    switch (f->type) {
    case SG_FT_U8:
        v_int(e, *(const uint8_t *)p);
        break;
    case SG_FT_U32:
        v_int(e, load_u32(p));
        break;
    case SG_FT_I32:
        v_int(e, load_i32(p));
        break;
    case SG_FT_I64:
        v_int(e, (int64_t)load_u64(p));
        break;
    case SG_FT_U64:
        v_u64(e, load_u64(p));
        break;
    case SG_FT_ADDR:
        v_addr(e, load_u64(p));
        break;
    case SG_FT_BOOL:
        v_bool(e, *(const bool *)p);
        break;
    case SG_FT_REAL:
    case SG_FT_DURATION: {
        double d = *(const double *)p;
        v_real(e, isfinite(d) ? d : 0.0);
        break;
    }
    case SG_FT_STR:
    case SG_FT_PATH: {
        const char *s = *(const char *const *)p;
        v_str(e, s ? s : "");
        break;
    }
    case SG_FT_CHARS:
    case SG_FT_HASH:
        v_chars(e, p, f->size);
        break;
    case SG_FT_ENUM: {
        const char *name = sg_enum_name(f->names, load_i32(p));
        if (strcmp(name, "invalid") == 0) {
            if (f->def < 0) {
                if (!e->err) e->err = SG_EINVAL; /* no spelling a reader would accept */
                return;
            }
            name = sg_enum_name(f->names, (int)f->def);
        }
        uint32_t since = sg_enum_since(f->names, load_i32(p));
        if (since > e->version) e->version = since;
        v_name(e, name);
        break;
    }
    case SG_FT_INDEX:
    case SG_FT_NODE_ID:
        v_int(e, load_u32(p));
        break;
    case SG_FT_STREAM:
        if (load_u32(p) == SG_STREAM_EXPLICIT)
            v_name(e, "explicit");
        else
            v_int(e, load_u32(p));
        break;
    case SG_FT_TRIPLE:
        v_triple(e, p);
        break;
    case SG_FT_U32S:
        v_u32_array(e, *(uint32_t *const *)p, sg_field_count(f, base));
        break;
    case SG_FT_HEX:
        v_hex(e, *(uint8_t *const *)p, sg_field_count(f, base));
        break;
    case SG_FT_PAIRS: {
        const uint32_t *a = *(uint32_t *const *)p;
        const uint32_t *b = *(uint32_t *const *)((const char *)base + f->off2);
        uint32_t n = sg_field_count(f, base);
        arr_begin(e);
        for (uint32_t i = 0; i < n; i++) {
            arr_begin(e);
            v_int(e, a[i]);
            v_int(e, b[i]);
            arr_end(e);
        }
        arr_end(e);
        done(e);
        break;
    }
    case SG_FT_OBJECT:
        obj_begin(e);
        emit_fields(e, f->sub, p, depth, false);
        obj_end(e);
        done(e);
        break;
    case SG_FT_RECORDS:
    case SG_FT_TABLE:
    case SG_FT_BODIES: {
        entries_t x = {base, f, depth};
        emit_entries(e, &x, sg_field_count(f, base), top);
        break;
    }
    case SG_FT_NODES: {
        entries_t x = {base, f, depth};
        emit_entries(e, &x, live_end_nodes(base), top);
        break;
    }
    case SG_FT_EDGES: {
        entries_t x = {base, f, depth};
        emit_entries(e, &x, live_end_edges(base), top);
        break;
    }
    case SG_FT_NEXT_ID: {
        const sg_graph_t *g = base;
        v_int(e, f->def ? g->n_edges : g->n_nodes);
        break;
    }
    case SG_FT_BODY:
        graph_body(e, *(sg_graph_t *const *)p, depth + 1);
        break;
    case SG_FT_FORMAT:
        v_name(e, SG_FORMAT_NAME);
        break;
    case SG_FT_VERSION:
        /* a placeholder: the version is known once everything is written */
        sep(e);
        e->version_at = e->n;
        out_str(e, "1");
        e->version_len = 1;
        done(e);
        break;
    case SG_FT_GRAPH:
        break; /* inline: emit_fields */
    }
}

/* The fields of record r over base, in table order, into the open object
 * (or, on the top level, as lines). */
static void emit_fields(emit_t *e, const sg_record_t *r, const void *base, int depth, bool top)
{
    int type = r->id == SG_REC_NODE ? (int)((const sg_node_t *)base)->type : -1;
    for (uint32_t i = 0; i < r->n_fields && !e->err; i++) {
        const sg_field_t *f = &r->fields[i];
        if (f->type == SG_FT_GRAPH) {
            emit_fields(e, f->sub, base, depth, top);
            continue;
        }
        if (type >= 0 && !sg_field_applies(f, type)) continue;
        if ((f->flags & SG_F_OMIT) && sg_field_is_default(f, base)) continue;
        if (f->since > e->version) e->version = f->since;
        if (top)
            top_key(e, f->key);
        else
            key(e, f->key);
        emit_value(e, f, base, depth, top);
    }
}

/* A body graph as one JSON object (it sits inside its node's line). */
static void graph_body(emit_t *e, const sg_graph_t *g, int depth)
{
    if (depth > SG_BUNDLE_MAX_DEPTH) {
        /* A reader would refuse it: refuse to write it. */
        if (!e->err) e->err = SG_ELIMIT;
        return;
    }
    obj_begin(e);
    emit_fields(e, sg_records[SG_REC_GRAPH], g, depth, false);
    obj_end(e);
    done(e);
}

int sg_bundle_to_json(const sg_graph_t *g, char **out)
{
    if (!g || !out || g->root != g) return SG_EINVAL;
    emit_t *e = calloc(1, sizeof *e);
    if (!e) return SG_ENOMEM;
    out_str(e, "{\n");
    e->version = SG_FORMAT_VERSION_MIN;
    emit_fields(e, &sg_record_bundle, g, 0, true);
    out_str(e, "\n}\n");
    if (!e->err) {
        /* the oldest version that says everything written (FORMAT.md section 11) */
        char v[16];
        int k = snprintf(v, sizeof v, "%u", e->version);
        if (reserve_out(e, (size_t)k)) {
            memmove(e->p + e->version_at + k, e->p + e->version_at + e->version_len,
                    e->n - e->version_at - e->version_len + 1);
            memcpy(e->p + e->version_at, v, (size_t)k);
            e->n = e->n + (size_t)k - e->version_len;
        }
    }
    int rc = e->err;
    if (rc)
        free(e->p);
    else
        *out = e->p;
    free(e);
    return rc;
}
