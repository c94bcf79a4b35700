/* bundle_emit.c: the model -> graph.json text (docs/FORMAT.md), deterministic.
 *
 * The text is laid out by hand, one table entry, node or edge per line, so
 * graph.json diffs well and stays readable with `less`; fields come in the
 * order of docs/FORMAT.md. Same model in, same bytes out: that makes golden
 * files stable and lets read -> write -> read be compared byte for byte.
 * Writing directly into one growing buffer (no JSON tree) keeps the cost a
 * few hundred bytes of appends per node; jansson is only on the read side,
 * which re-checks everything written here (tests/fuzz/fuzz_bundle.c). */
#include "bundle_private.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- enum names shared with the parser --------------------------------------- */

const char *const sg_bundle_buffer_kind_names[SG_BUFFER_KIND_COUNT] = {
    "device", "graph_alloc", "async", "managed", "host_pinned", "unknown", "host_pageable"};
const char *const sg_bundle_image_kind_names[SG_IMAGE_KIND_COUNT] = {"fatbin", "cubin", "ptx",
                                                                     "nvrtc", "unknown"};
const char *const sg_bundle_copy_kind_names[5] = {"default", "h2d", "d2h", "d2d", "h2h"};
const char *const sg_bundle_cond_type_names[3] = {"if", "while", "switch"};

const char *sg_bundle_access_mode_name(sg_access_mode_t m)
{
    switch (m) {
    case SG_ACCESS_READ:
        return "read";
    case SG_ACCESS_WRITE:
        return "write";
    case SG_ACCESS_READWRITE:
        return "readwrite";
    default:
        return "unknown";
    }
}

int sg_bundle_access_mode_from_name(const char *name)
{
    if (strcmp(name, "read") == 0) return SG_ACCESS_READ;
    if (strcmp(name, "write") == 0) return SG_ACCESS_WRITE;
    if (strcmp(name, "readwrite") == 0) return SG_ACCESS_READWRITE;
    if (strcmp(name, "unknown") == 0) return SG_ACCESS_UNKNOWN;
    return -1;
}

/* ---- output buffer ------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    int err;         /* first error; once set, everything else is a no-op */
    int depth;       /* nesting of objects/arrays */
    bool first[160]; /* per nesting level: no value written yet */
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

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. The
 * rules are jansson's (no overlongs, no surrogates, nothing past U+10FFFF):
 * whatever passes here, the reader accepts. */
static size_t utf8_seq(const unsigned char *s, size_t n)
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
        size_t l = utf8_seq(u, n - i);
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

/* key + value helpers */
#define K_INT(e, k, v) (key((e), (k)), v_int((e), (v)))
#define K_U64(e, k, v) (key((e), (k)), v_u64((e), (v)))
#define K_ADDR(e, k, v) (key((e), (k)), v_addr((e), (v)))
#define K_BOOL(e, k, v) (key((e), (k)), v_bool((e), (v)))
#define K_STR(e, k, v) (key((e), (k)), v_str((e), (v)))
#define K_RAWSTR(e, k, v) (key((e), (k)), v_raw((e), "\"" v "\""))

static void k_opt_str(emit_t *e, const char *k, const char *s)
{
    if (s) K_STR(e, k, s);
}

static void k_name(emit_t *e, const char *k, const char *name)
{
    key(e, k);
    sep(e);
    out_raw(e, "\"", 1);
    out_str(e, name); /* enum names: plain ASCII */
    out_raw(e, "\"", 1);
    done(e);
}

/* ---- nodes and edges ------------------------------------------------------------- */

static void graph_body(emit_t *e, const sg_graph_t *g, int depth);

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

static void kernel_obj(emit_t *e, const sg_kernel_t *k)
{
    obj_begin(e);
    K_STR(e, "name", k->name ? k->name : "");
    if (k->image != SG_NONE) K_INT(e, "image", k->image);
    key(e, "grid"), v_triple(e, k->grid);
    key(e, "block"), v_triple(e, k->block);
    if (k->cluster[0] || k->cluster[1] || k->cluster[2]) key(e, "cluster"), v_triple(e, k->cluster);
    K_INT(e, "shared_bytes", k->shared_bytes);
    if (k->priority) K_INT(e, "priority", k->priority);
    if (k->cooperative) K_BOOL(e, "cooperative", true);
    if (k->has_extra) K_BOOL(e, "has_extra", true);
    K_ADDR(e, "func_handle", k->func_handle);
    /* Guard against a model edited by hand with sizes but no arrays. */
    uint32_t params_size = k->param_bytes ? k->params_size : 0;
    uint32_t n_params = k->param_offsets && k->param_sizes ? k->n_params : 0;
    if (params_size || n_params) {
        key(e, "params");
        obj_begin(e);
        key(e, "bytes"), v_hex(e, k->param_bytes, params_size);
        key(e, "layout");
        arr_begin(e);
        for (uint32_t i = 0; i < n_params; i++) {
            arr_begin(e);
            v_int(e, k->param_offsets[i]);
            v_int(e, k->param_sizes[i]);
            arr_end(e);
        }
        arr_end(e);
        done(e);
        obj_end(e);
        done(e);
    }
    obj_end(e);
    done(e);
}

/* One record of the fusions table (section 4.4). */
static void fusion_obj(emit_t *e, const sg_fusion_t *f)
{
    obj_begin(e);
    K_INT(e, "node", f->node);
    K_STR(e, "hash", f->hash);
    K_INT(e, "tier", f->tier);
    k_opt_str(e, "codegen", f->codegen);
    if (f->ptx_image != SG_NONE) K_INT(e, "ptx_image", f->ptx_image);
    if (f->cubin_image != SG_NONE) K_INT(e, "cubin_image", f->cubin_image);
    K_INT(e, "registers", f->registers);
    K_INT(e, "spill_bytes", f->spill_bytes);
    key(e, "stages");
    arr_begin(e);
    for (uint32_t i = 0; i < f->n_stages; i++) {
        const sg_fused_stage_t *st = &f->stages[i];
        obj_begin(e);
        K_INT(e, "node", st->node);
        K_U64(e, "seq", st->seq);
        key(e, "kernel"), kernel_obj(e, &st->kernel);
        K_INT(e, "param_base", st->param_base);
        obj_end(e);
    }
    arr_end(e);
    done(e);
    key(e, "dropped");
    arr_begin(e);
    for (uint32_t i = 0; i < f->n_dropped; i++) {
        const sg_dropped_write_t *w = &f->dropped[i];
        obj_begin(e);
        K_INT(e, "stage", w->stage);
        K_INT(e, "buffer", w->buffer);
        K_U64(e, "offset", w->offset);
        K_U64(e, "size", w->size);
        K_STR(e, "reason", w->reason ? w->reason : "");
        obj_end(e);
    }
    arr_end(e);
    done(e);
    k_opt_str(e, "note", f->note);
    obj_end(e);
    done(e);
}

static void node_obj(emit_t *e, const sg_node_t *n, int depth)
{
    obj_begin(e);
    K_INT(e, "id", n->id);
    k_name(e, "type", sg_node_type_name(n->type));
    if (n->stream == SG_STREAM_EXPLICIT)
        K_RAWSTR(e, "stream", "explicit");
    else
        K_INT(e, "stream", n->stream);
    K_U64(e, "seq", n->seq);
    if (n->synthesized) K_BOOL(e, "synthesized", true);
    k_opt_str(e, "label", n->label);
    if (n->cuda_type) K_INT(e, "cuda_type", n->cuda_type);
    if (n->duration_ns >= 0 && isfinite(n->duration_ns))
        key(e, "duration_ns"), v_real(e, n->duration_ns);
    if (n->n_accesses && n->accesses) {
        key(e, "accesses");
        arr_begin(e);
        for (uint32_t i = 0; i < n->n_accesses; i++) {
            const sg_access_t *a = &n->accesses[i];
            obj_begin(e);
            K_INT(e, "buffer", a->buffer);
            K_U64(e, "offset", a->offset);
            K_U64(e, "size", a->size);
            k_name(e, "mode", sg_bundle_access_mode_name(a->mode));
            obj_end(e);
        }
        arr_end(e);
        done(e);
    }
    switch (n->type) {
    case SG_NODE_KERNEL:
        key(e, "kernel"), kernel_obj(e, &n->u.kernel);
        break;
    case SG_NODE_MEMCPY: {
        const sg_memcpy_t *c = &n->u.memcpy;
        key(e, "memcpy");
        obj_begin(e);
        K_ADDR(e, "dst", c->dst);
        K_ADDR(e, "src", c->src);
        K_U64(e, "dst_pitch", c->dst_pitch);
        K_U64(e, "src_pitch", c->src_pitch);
        K_U64(e, "width", c->width);
        K_U64(e, "height", c->height);
        K_U64(e, "depth", c->depth);
        k_name(e, "kind", (unsigned)c->kind < 5 ? sg_bundle_copy_kind_names[c->kind] : "default");
        obj_end(e);
        done(e);
        break;
    }
    case SG_NODE_MEMSET: {
        const sg_memset_t *m = &n->u.memset;
        key(e, "memset");
        obj_begin(e);
        K_ADDR(e, "dst", m->dst);
        K_U64(e, "pitch", m->pitch);
        K_INT(e, "value", m->value);
        K_INT(e, "element_size", m->element_size);
        K_U64(e, "width", m->width);
        K_U64(e, "height", m->height);
        obj_end(e);
        done(e);
        break;
    }
    case SG_NODE_HOST:
        key(e, "host");
        obj_begin(e);
        K_ADDR(e, "fn", n->u.host.fn);
        K_ADDR(e, "user_data", n->u.host.user_data);
        obj_end(e);
        done(e);
        break;
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        if (n->u.event != SG_NONE) K_INT(e, "event", n->u.event);
        break;
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE:
        key(e, "mem");
        obj_begin(e);
        if (n->u.mem.buffer != SG_NONE) K_INT(e, "buffer", n->u.mem.buffer);
        K_ADDR(e, "address", n->u.mem.address);
        K_U64(e, "bytes", n->u.mem.bytes);
        obj_end(e);
        done(e);
        break;
    case SG_NODE_CHILD_GRAPH:
        if (n->u.child) key(e, "body"), graph_body(e, n->u.child, depth + 1);
        break;
    case SG_NODE_CONDITIONAL: {
        const sg_conditional_t *c = &n->u.cond;
        key(e, "conditional");
        obj_begin(e);
        k_name(e, "type", (unsigned)c->type < 3 ? sg_bundle_cond_type_names[c->type] : "if");
        K_ADDR(e, "handle", c->handle);
        K_INT(e, "default_value", c->default_value);
        key(e, "bodies");
        arr_begin(e);
        for (uint32_t i = 0; i < c->n_bodies; i++)
            graph_body(e, c->bodies[i], depth + 1);
        arr_end(e);
        done(e);
        obj_end(e);
        done(e);
        break;
    }
    case SG_NODE_OPAQUE:
        if (n->u.opaque_note) {
            key(e, "opaque");
            obj_begin(e);
            K_STR(e, "note", n->u.opaque_note);
            obj_end(e);
            done(e);
        }
        break;
    default:
        break;
    }
    obj_end(e);
    done(e);
}

static void edge_obj(emit_t *e, const sg_edge_t *ed)
{
    obj_begin(e);
    K_INT(e, "id", ed->id);
    K_INT(e, "from", ed->from);
    K_INT(e, "to", ed->to);
    k_name(e, "kind", sg_edge_kind_name(ed->kind));
    if (ed->kind == SG_EDGE_EVENT) K_INT(e, "event", ed->event);
    if (ed->from_port) K_INT(e, "from_port", ed->from_port);
    if (ed->to_port) K_INT(e, "to_port", ed->to_port);
    if (ed->cuda_type) K_INT(e, "cuda_type", ed->cuda_type);
    obj_end(e);
    done(e);
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
    key(e, "nodes");
    arr_begin(e);
    for (uint32_t i = 0; i < g->n_nodes && !e->err; i++)
        if (!g->nodes[i].removed) node_obj(e, &g->nodes[i], depth);
    arr_end(e);
    done(e);
    key(e, "edges");
    arr_begin(e);
    for (uint32_t i = 0; i < g->n_edges && !e->err; i++)
        if (!g->edges[i].removed) edge_obj(e, &g->edges[i]);
    arr_end(e);
    done(e);
    /* removed ids past the last live one: keep them from being reused */
    if (g->n_nodes > live_end_nodes(g)) K_INT(e, "next_node_id", g->n_nodes);
    if (g->n_edges > live_end_edges(g)) K_INT(e, "next_edge_id", g->n_edges);
    obj_end(e);
    done(e);
}

/* ---- top level ---------------------------------------------------------------------- */

/* Top-level layout: ` "key": value,\n`, arrays one entry per line. The
 * values inside are written at depth 1 of the separator logic. */
static void top_key(emit_t *e, const char *k)
{
    out_str(e, " \"");
    out_str(e, k);
    out_str(e, "\": ");
    e->depth = 0;
}

static void top_next(emit_t *e, bool last)
{
    out_str(e, last ? "\n" : ",\n");
}

static void top_array_open(emit_t *e, const char *k, uint32_t count)
{
    top_key(e, k);
    out_str(e, count ? "[\n" : "[");
}

static void top_entry_begin(emit_t *e)
{
    out_str(e, "  ");
    e->depth = 0;
}

static void top_entry_end(emit_t *e, bool last)
{
    out_str(e, last ? "\n" : ",\n");
}

static void top_array_close(emit_t *e, uint32_t count, bool last)
{
    out_str(e, count ? " ]" : "]");
    top_next(e, last);
}

int sg_bundle_to_json(const sg_graph_t *g, char **out)
{
    if (!g || !out || g->root != g) return SG_EINVAL;
    emit_t *e = calloc(1, sizeof *e);
    if (!e) return SG_ENOMEM;
    out_str(e, "{\n");
    top_key(e, "format");
    v_raw(e, "\"" SG_FORMAT_NAME "\"");
    top_next(e, false);
    top_key(e, "version");
    int version = SG_FORMAT_VERSION_MIN;
    for (uint32_t i = 0; i < g->n_buffers; i++)
        if (g->buffers[i].kind == SG_BUFFER_HOST_PAGEABLE) version = 2;
    v_int(e, version);
    top_next(e, false);

    top_key(e, "capture");
    obj_begin(e);
    k_opt_str(e, "program", g->program);
    K_INT(e, "pid", g->pid);
    K_U64(e, "capture_id", g->capture_id);
    K_INT(e, "sequence", g->sequence);
    k_opt_str(e, "mode", g->capture_mode);
    obj_end(e);
    top_next(e, false);

    const sg_device_t *d = &g->device;
    top_key(e, "device");
    obj_begin(e);
    k_opt_str(e, "name", d->name);
    K_INT(e, "cc_major", d->cc_major);
    K_INT(e, "cc_minor", d->cc_minor);
    K_INT(e, "driver_version", d->driver_version);
    K_U64(e, "total_memory", d->total_memory);
    char uuid[sizeof d->uuid];
    memcpy(uuid, d->uuid, sizeof uuid);
    uuid[sizeof uuid - 1] = '\0';
    K_STR(e, "uuid", uuid);
    K_INT(e, "sm_count", d->sm_count);
    key(e, "mem_bandwidth_gbs");
    v_real(e, isfinite(d->mem_bandwidth_gbs) ? d->mem_bandwidth_gbs : 0.0);
    obj_end(e);
    top_next(e, false);

    top_key(e, "crosscheck");
    obj_begin(e);
    K_BOOL(e, "done", g->crosscheck_done);
    K_BOOL(e, "ok", g->crosscheck_ok);
    K_INT(e, "cuda_node_count", g->cuda_node_count);
    K_INT(e, "cuda_edge_count", g->cuda_edge_count);
    k_opt_str(e, "note", g->crosscheck_note);
    obj_end(e);
    top_next(e, false);

    top_array_open(e, "streams", g->n_streams);
    for (uint32_t i = 0; i < g->n_streams; i++) {
        const sg_stream_t *s = &g->streams[i];
        top_entry_begin(e);
        obj_begin(e);
        K_INT(e, "id", s->id);
        K_STR(e, "label", s->label ? s->label : "");
        K_ADDR(e, "handle", s->handle);
        K_U64(e, "cuda_id", s->cuda_id);
        K_INT(e, "priority", s->priority);
        K_INT(e, "flags", s->flags);
        K_BOOL(e, "per_thread", s->per_thread);
        obj_end(e);
        top_entry_end(e, i + 1 == g->n_streams);
    }
    top_array_close(e, g->n_streams, false);

    top_array_open(e, "events", g->n_events);
    for (uint32_t i = 0; i < g->n_events; i++) {
        const sg_event_t *ev = &g->events[i];
        top_entry_begin(e);
        obj_begin(e);
        K_INT(e, "id", ev->id);
        K_STR(e, "label", ev->label ? ev->label : "");
        K_ADDR(e, "handle", ev->handle);
        K_INT(e, "flags", ev->flags);
        K_BOOL(e, "external", ev->external);
        obj_end(e);
        top_entry_end(e, i + 1 == g->n_events);
    }
    top_array_close(e, g->n_events, false);

    top_array_open(e, "buffers", g->n_buffers);
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        top_entry_begin(e);
        obj_begin(e);
        K_INT(e, "id", b->id);
        K_STR(e, "label", b->label ? b->label : "");
        k_name(e, "kind",
               (unsigned)b->kind < SG_BUFFER_KIND_COUNT ? sg_bundle_buffer_kind_names[b->kind]
                                                        : "unknown");
        K_ADDR(e, "address", b->address);
        K_U64(e, "size", b->size);
        if (b->alloc_node != SG_NONE) K_INT(e, "alloc_node", b->alloc_node);
        k_opt_str(e, "before", b->before_file);
        k_opt_str(e, "after", b->after_file);
        K_U64(e, "snapshot_bytes", b->snapshot_bytes);
        k_opt_str(e, "snapshot_note", b->snapshot_note);
        obj_end(e);
        top_entry_end(e, i + 1 == g->n_buffers);
    }
    top_array_close(e, g->n_buffers, false);

    top_array_open(e, "images", g->n_images);
    for (uint32_t i = 0; i < g->n_images; i++) {
        const sg_image_t *im = &g->images[i];
        top_entry_begin(e);
        obj_begin(e);
        K_INT(e, "id", im->id);
        k_name(e, "kind",
               (unsigned)im->kind < SG_IMAGE_KIND_COUNT ? sg_bundle_image_kind_names[im->kind]
                                                        : "unknown");
        K_STR(e, "hash", im->hash);
        k_opt_str(e, "file", im->file);
        K_U64(e, "size", im->size);
        key(e, "ptx_archs"), v_u32_array(e, im->ptx_archs, im->ptx_archs ? im->n_ptx_archs : 0);
        key(e, "sass_archs"), v_u32_array(e, im->sass_archs, im->sass_archs ? im->n_sass_archs : 0);
        k_opt_str(e, "options", im->options);
        k_opt_str(e, "note", im->note);
        if (im->source_image != SG_NONE) K_INT(e, "source_image", im->source_image);
        obj_end(e);
        top_entry_end(e, i + 1 == g->n_images);
    }
    top_array_close(e, g->n_images, false);

    uint32_t end = live_end_nodes(g);
    top_array_open(e, "nodes", end);
    for (uint32_t i = 0; i < end && !e->err; i++) {
        if (g->nodes[i].removed) continue;
        top_entry_begin(e);
        node_obj(e, &g->nodes[i], 0);
        top_entry_end(e, i + 1 == end);
    }
    top_array_close(e, end, false);
    if (g->n_nodes > end) {
        top_key(e, "next_node_id");
        v_int(e, g->n_nodes);
        top_next(e, false);
    }

    end = live_end_edges(g);
    top_array_open(e, "edges", end);
    for (uint32_t i = 0; i < end && !e->err; i++) {
        if (g->edges[i].removed) continue;
        top_entry_begin(e);
        edge_obj(e, &g->edges[i]);
        top_entry_end(e, i + 1 == end);
    }
    top_array_close(e, end, false);
    if (g->n_edges > end) {
        top_key(e, "next_edge_id");
        v_int(e, g->n_edges);
        top_next(e, false);
    }

    if (g->n_fusions) { /* fused kernels, docs/FORMAT.md section 4.4 */
        top_array_open(e, "fusions", g->n_fusions);
        for (uint32_t i = 0; i < g->n_fusions; i++) {
            top_entry_begin(e);
            fusion_obj(e, &g->fusions[i]);
            top_entry_end(e, i + 1 == g->n_fusions);
        }
        top_array_close(e, g->n_fusions, false);
    }
    top_array_open(e, "pass_log", g->n_pass_log);
    for (uint32_t i = 0; i < g->n_pass_log; i++) {
        top_entry_begin(e);
        obj_begin(e);
        K_STR(e, "pass", g->pass_log[i].pass ? g->pass_log[i].pass : "");
        K_STR(e, "summary", g->pass_log[i].summary ? g->pass_log[i].summary : "");
        obj_end(e);
        top_entry_end(e, i + 1 == g->n_pass_log);
    }
    top_array_close(e, g->n_pass_log, true);
    out_str(e, "}\n");

    int rc = e->err;
    if (rc)
        free(e->p);
    else
        *out = e->p;
    free(e);
    return rc;
}
