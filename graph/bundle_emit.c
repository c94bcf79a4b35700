/* bundle_emit.c: the model -> graph.json text (docs/FORMAT.md), deterministic.
 *
 * The top level and its arrays are laid out by hand, one table entry, node or
 * edge per line, so graph.json diffs well and stays readable with `less`;
 * each entry is built as a small jansson value and dumped on its own, which
 * keeps JSON escaping in one trusted place and memory at one entry's worth.
 * Same model in, same bytes out: that makes golden files stable and lets
 * read -> write -> read be compared byte for byte. */
#include "bundle_private.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- enum names shared with the parser --------------------------------------- */

const char *const sg_bundle_buffer_kind_names[SG_BUFFER_KIND_COUNT] = {
    "device", "graph_alloc", "async", "managed", "host_pinned", "unknown"};
const char *const sg_bundle_image_kind_names[SG_IMAGE_KIND_COUNT] = {"fatbin", "cubin", "ptx",
                                                                     "nvrtc", "unknown"};
const char *const sg_bundle_copy_kind_names[5] = {"default", "h2d", "d2h", "d2d", "h2h"};
const char *const sg_bundle_cond_type_names[3] = {"if", "while", "switch"};

const char *sg_bundle_access_mode_name(sg_access_mode_t m)
{
    switch (m) {
    case SG_ACCESS_READ: return "read";
    case SG_ACCESS_WRITE: return "write";
    case SG_ACCESS_READWRITE: return "readwrite";
    default: return "unknown";
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
    int err; /* first error; once set, everything else is a no-op */
} emit_t;

static void out_raw(emit_t *e, const char *s, size_t n)
{
    if (e->err) return;
    if (e->n + n + 1 > e->cap) {
        size_t cap = e->cap ? e->cap : 4096;
        while (cap < e->n + n + 1) cap *= 2;
        char *p = realloc(e->p, cap);
        if (!p) {
            e->err = SG_ENOMEM;
            return;
        }
        e->p = p;
        e->cap = cap;
    }
    memcpy(e->p + e->n, s, n);
    e->n += n;
    e->p[e->n] = '\0';
}

static void out_str(emit_t *e, const char *s)
{
    out_raw(e, s, strlen(s));
}

/* Append one JSON value, compact on one line, and drop it. */
static void out_json(emit_t *e, json_t *v)
{
    if (!v) {
        if (!e->err) e->err = SG_ENOMEM;
        return;
    }
    if (!e->err) {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        if (!s)
            e->err = SG_ENOMEM;
        else
            out_str(e, s);
        free(s);
    }
    json_decref(v);
}

/* ---- value builders --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. The
 * rules are jansson's (no overlongs, no surrogates, nothing past U+10FFFF):
 * whatever passes here, jansson accepts when reading it back. */
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
static json_t *jstr(const char *s)
{
    size_t n = strlen(s);
    size_t i = 0;
    while (i < n) {
        size_t l = utf8_seq((const unsigned char *)s + i, n - i);
        if (!l) break;
        i += l;
    }
    if (i == n && n <= SG_BUNDLE_MAX_STRING) return json_stringn_nocheck(s, n);
    char *c = malloc(3 * n + 1);
    if (!c) return NULL;
    size_t k = 0;
    for (i = 0; i < n;) {
        size_t l = utf8_seq((const unsigned char *)s + i, n - i);
        size_t add = l ? l : 3;
        if (k + add > SG_BUNDLE_MAX_STRING) break;
        if (l) {
            memcpy(c + k, s + i, l);
            i += l;
        } else {
            memcpy(c + k, "\xef\xbf\xbd", 3);
            i++;
        }
        k += add;
    }
    json_t *v = json_stringn_nocheck(c, k);
    free(c);
    return v;
}

static json_t *jaddr(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return json_string_nocheck(buf);
}

/* Integers below 2^53 survive any JSON reader; larger ones travel as hex. */
static json_t *ju64(uint64_t v)
{
    return v < (UINT64_C(1) << 53) ? json_integer((json_int_t)v) : jaddr(v);
}

static json_t *jtriple(const uint32_t v[3])
{
    json_t *a = json_array();
    for (int i = 0; a && i < 3; i++) {
        if (json_array_append_new(a, json_integer(v[i]))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *jhex(const uint8_t *b, uint32_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *s = malloc((size_t)n * 2 + 1);
    if (!s) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        s[2 * i] = digits[b[i] >> 4];
        s[2 * i + 1] = digits[b[i] & 15];
    }
    json_t *v = json_stringn_nocheck(s, (size_t)n * 2);
    free(s);
    return v;
}

/* Set o[k] = v (stolen); remember a failure. */
static void put(emit_t *e, json_t *o, const char *k, json_t *v)
{
    if (!o || !v || json_object_set_new_nocheck(o, k, v)) {
        if (!e->err) e->err = SG_ENOMEM;
    }
}

static void put_opt_str(emit_t *e, json_t *o, const char *k, const char *s)
{
    if (s) put(e, o, k, jstr(s));
}

/* ---- nodes and edges ------------------------------------------------------------- */

static json_t *graph_json(emit_t *e, const sg_graph_t *g, int depth);
static uint32_t live_end_nodes(const sg_graph_t *g);
static uint32_t live_end_edges(const sg_graph_t *g);

static json_t *kernel_json(emit_t *e, const sg_kernel_t *k)
{
    json_t *o = json_object();
    put(e, o, "name", jstr(k->name ? k->name : ""));
    if (k->image != SG_NONE) put(e, o, "image", json_integer(k->image));
    put(e, o, "grid", jtriple(k->grid));
    put(e, o, "block", jtriple(k->block));
    if (k->cluster[0] || k->cluster[1] || k->cluster[2]) put(e, o, "cluster", jtriple(k->cluster));
    put(e, o, "shared_bytes", json_integer(k->shared_bytes));
    if (k->priority) put(e, o, "priority", json_integer(k->priority));
    if (k->cooperative) put(e, o, "cooperative", json_true());
    if (k->has_extra) put(e, o, "has_extra", json_true());
    put(e, o, "func_handle", jaddr(k->func_handle));
    /* Guard against a model edited by hand with sizes but no arrays. */
    uint32_t params_size = k->param_bytes ? k->params_size : 0;
    uint32_t n_params = k->param_offsets && k->param_sizes ? k->n_params : 0;
    if (params_size || n_params) {
        json_t *p = json_object();
        put(e, p, "bytes", params_size ? jhex(k->param_bytes, params_size) : json_string(""));
        json_t *layout = json_array();
        for (uint32_t i = 0; layout && i < n_params; i++) {
            json_t *pair = json_array();
            if (!pair || json_array_append_new(pair, json_integer(k->param_offsets[i])) ||
                json_array_append_new(pair, json_integer(k->param_sizes[i])) ||
                json_array_append_new(layout, pair)) {
                json_decref(layout);
                layout = NULL;
            }
        }
        put(e, p, "layout", layout);
        put(e, o, "params", p);
    }
    return o;
}

static json_t *node_json(emit_t *e, const sg_graph_t *g, const sg_node_t *n, int depth)
{
    json_t *o = json_object();
    put(e, o, "id", json_integer(n->id));
    put(e, o, "type", json_string_nocheck(sg_node_type_name(n->type)));
    put(e, o, "stream",
        n->stream == SG_STREAM_EXPLICIT ? json_string_nocheck("explicit") : json_integer(n->stream));
    put(e, o, "seq", ju64(n->seq));
    if (n->synthesized) put(e, o, "synthesized", json_true());
    put_opt_str(e, o, "label", n->label);
    if (n->cuda_type) put(e, o, "cuda_type", json_integer(n->cuda_type));
    if (n->duration_ns >= 0 && isfinite(n->duration_ns))
        put(e, o, "duration_ns", json_real(n->duration_ns));
    if (n->n_accesses) {
        json_t *arr = json_array();
        for (uint32_t i = 0; arr && i < n->n_accesses; i++) {
            const sg_access_t *a = &n->accesses[i];
            json_t *x = json_object();
            put(e, x, "buffer", json_integer(a->buffer));
            put(e, x, "offset", ju64(a->offset));
            put(e, x, "size", ju64(a->size));
            put(e, x, "mode", json_string_nocheck(sg_bundle_access_mode_name(a->mode)));
            if (!x || json_array_append_new(arr, x)) {
                json_decref(arr);
                arr = NULL;
            }
        }
        put(e, o, "accesses", arr);
    }
    switch (n->type) {
    case SG_NODE_KERNEL: put(e, o, "kernel", kernel_json(e, &n->u.kernel)); break;
    case SG_NODE_MEMCPY: {
        const sg_memcpy_t *c = &n->u.memcpy;
        json_t *x = json_object();
        put(e, x, "dst", jaddr(c->dst));
        put(e, x, "src", jaddr(c->src));
        put(e, x, "dst_pitch", ju64(c->dst_pitch));
        put(e, x, "src_pitch", ju64(c->src_pitch));
        put(e, x, "width", ju64(c->width));
        put(e, x, "height", ju64(c->height));
        put(e, x, "depth", ju64(c->depth));
        put(e, x, "kind",
            json_string_nocheck((unsigned)c->kind < 5 ? sg_bundle_copy_kind_names[c->kind]
                                                      : "default"));
        put(e, o, "memcpy", x);
        break;
    }
    case SG_NODE_MEMSET: {
        const sg_memset_t *m = &n->u.memset;
        json_t *x = json_object();
        put(e, x, "dst", jaddr(m->dst));
        put(e, x, "pitch", ju64(m->pitch));
        put(e, x, "value", json_integer(m->value));
        put(e, x, "element_size", json_integer(m->element_size));
        put(e, x, "width", ju64(m->width));
        put(e, x, "height", ju64(m->height));
        put(e, o, "memset", x);
        break;
    }
    case SG_NODE_HOST: {
        json_t *x = json_object();
        put(e, x, "fn", jaddr(n->u.host.fn));
        put(e, x, "user_data", jaddr(n->u.host.user_data));
        put(e, o, "host", x);
        break;
    }
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        if (n->u.event != SG_NONE) put(e, o, "event", json_integer(n->u.event));
        break;
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE: {
        json_t *x = json_object();
        if (n->u.mem.buffer != SG_NONE) put(e, x, "buffer", json_integer(n->u.mem.buffer));
        put(e, x, "address", jaddr(n->u.mem.address));
        put(e, x, "bytes", ju64(n->u.mem.bytes));
        put(e, o, "mem", x);
        break;
    }
    case SG_NODE_CHILD_GRAPH:
        if (n->u.child) put(e, o, "body", graph_json(e, n->u.child, depth + 1));
        break;
    case SG_NODE_CONDITIONAL: {
        const sg_conditional_t *c = &n->u.cond;
        json_t *x = json_object();
        put(e, x, "type",
            json_string_nocheck((unsigned)c->type < 3 ? sg_bundle_cond_type_names[c->type] : "if"));
        put(e, x, "handle", jaddr(c->handle));
        put(e, x, "default_value", json_integer(c->default_value));
        json_t *bodies = json_array();
        for (uint32_t i = 0; bodies && i < c->n_bodies; i++) {
            json_t *b = graph_json(e, c->bodies[i], depth + 1);
            if (!b || json_array_append_new(bodies, b)) {
                json_decref(bodies);
                bodies = NULL;
            }
        }
        put(e, x, "bodies", bodies);
        put(e, o, "conditional", x);
        break;
    }
    case SG_NODE_OPAQUE:
        if (n->u.opaque_note) {
            json_t *x = json_object();
            put(e, x, "note", jstr(n->u.opaque_note));
            put(e, o, "opaque", x);
        }
        break;
    default: break;
    }
    (void)g;
    return o;
}

static json_t *edge_json(emit_t *e, const sg_edge_t *ed)
{
    json_t *o = json_object();
    put(e, o, "id", json_integer(ed->id));
    put(e, o, "from", json_integer(ed->from));
    put(e, o, "to", json_integer(ed->to));
    put(e, o, "kind", json_string_nocheck(sg_edge_kind_name(ed->kind)));
    if (ed->kind == SG_EDGE_EVENT) put(e, o, "event", json_integer(ed->event));
    if (ed->from_port) put(e, o, "from_port", json_integer(ed->from_port));
    if (ed->to_port) put(e, o, "to_port", json_integer(ed->to_port));
    if (ed->cuda_type) put(e, o, "cuda_type", json_integer(ed->cuda_type));
    return o;
}

/* A body graph as one JSON value (it sits inside its node's line). */
static json_t *graph_json(emit_t *e, const sg_graph_t *g, int depth)
{
    if (depth > SG_BUNDLE_MAX_DEPTH) {
        /* A reader would refuse it: refuse to write it. */
        if (!e->err) e->err = SG_ELIMIT;
        return NULL;
    }
    json_t *o = json_object();
    json_t *nodes = json_array(), *edges = json_array();
    for (uint32_t i = 0; nodes && i < g->n_nodes; i++) {
        if (g->nodes[i].removed) continue;
        json_t *x = node_json(e, g, &g->nodes[i], depth);
        if (!x || json_array_append_new(nodes, x)) {
            json_decref(nodes);
            nodes = NULL;
        }
    }
    for (uint32_t i = 0; edges && i < g->n_edges; i++) {
        if (g->edges[i].removed) continue;
        json_t *x = edge_json(e, &g->edges[i]);
        if (!x || json_array_append_new(edges, x)) {
            json_decref(edges);
            edges = NULL;
        }
    }
    put(e, o, "nodes", nodes);
    put(e, o, "edges", edges);
    /* removed ids past the last live one: keep them from being reused */
    if (g->n_nodes > live_end_nodes(g)) put(e, o, "next_node_id", json_integer(g->n_nodes));
    if (g->n_edges > live_end_edges(g)) put(e, o, "next_edge_id", json_integer(g->n_edges));
    return o;
}

/* ---- top level ---------------------------------------------------------------------- */

static json_t *stream_json(emit_t *e, const sg_stream_t *s)
{
    json_t *o = json_object();
    put(e, o, "id", json_integer(s->id));
    put(e, o, "label", jstr(s->label ? s->label : ""));
    put(e, o, "handle", jaddr(s->handle));
    put(e, o, "cuda_id", ju64(s->cuda_id));
    put(e, o, "priority", json_integer(s->priority));
    put(e, o, "flags", json_integer(s->flags));
    put(e, o, "per_thread", json_boolean(s->per_thread));
    return o;
}

static json_t *event_json(emit_t *e, const sg_event_t *ev)
{
    json_t *o = json_object();
    put(e, o, "id", json_integer(ev->id));
    put(e, o, "label", jstr(ev->label ? ev->label : ""));
    put(e, o, "handle", jaddr(ev->handle));
    put(e, o, "flags", json_integer(ev->flags));
    put(e, o, "external", json_boolean(ev->external));
    return o;
}

static json_t *buffer_json(emit_t *e, const sg_buffer_t *b)
{
    json_t *o = json_object();
    put(e, o, "id", json_integer(b->id));
    put(e, o, "label", jstr(b->label ? b->label : ""));
    put(e, o, "kind",
        json_string_nocheck((unsigned)b->kind < SG_BUFFER_KIND_COUNT
                                ? sg_bundle_buffer_kind_names[b->kind]
                                : "unknown"));
    put(e, o, "address", jaddr(b->address));
    put(e, o, "size", ju64(b->size));
    if (b->alloc_node != SG_NONE) put(e, o, "alloc_node", json_integer(b->alloc_node));
    put_opt_str(e, o, "before", b->before_file);
    put_opt_str(e, o, "after", b->after_file);
    put(e, o, "snapshot_bytes", ju64(b->snapshot_bytes));
    put_opt_str(e, o, "snapshot_note", b->snapshot_note);
    return o;
}

static json_t *archs_json(const uint32_t *a, uint32_t n)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, json_integer(a[i]))) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *image_json(emit_t *e, const sg_image_t *im)
{
    json_t *o = json_object();
    put(e, o, "id", json_integer(im->id));
    put(e, o, "kind",
        json_string_nocheck((unsigned)im->kind < SG_IMAGE_KIND_COUNT
                                ? sg_bundle_image_kind_names[im->kind]
                                : "unknown"));
    put(e, o, "hash", jstr(im->hash));
    put_opt_str(e, o, "file", im->file);
    put(e, o, "size", ju64(im->size));
    put(e, o, "ptx_archs", archs_json(im->ptx_archs, im->n_ptx_archs));
    put(e, o, "sass_archs", archs_json(im->sass_archs, im->n_sass_archs));
    put_opt_str(e, o, "options", im->options);
    put_opt_str(e, o, "note", im->note);
    return o;
}

/* ` "key": value,\n` for a top-level object field. */
static void out_field(emit_t *e, const char *key, json_t *v, bool last)
{
    out_str(e, " \"");
    out_str(e, key);
    out_str(e, "\": ");
    out_json(e, v);
    out_str(e, last ? "\n" : ",\n");
}

/* Open a top-level array; entries follow with out_entry. */
static void out_array_open(emit_t *e, const char *key, uint32_t count)
{
    out_str(e, " \"");
    out_str(e, key);
    out_str(e, count ? "\": [\n" : "\": [");
}

static void out_entry(emit_t *e, json_t *v, bool last)
{
    out_str(e, "  ");
    out_json(e, v);
    out_str(e, last ? "\n" : ",\n");
}

static void out_array_close(emit_t *e, uint32_t count, bool last)
{
    out_str(e, count ? " ]" : "]");
    out_str(e, last ? "\n" : ",\n");
}

/* Index of the last live entry + 1, so "last" can be known while streaming. */
static uint32_t live_end_nodes(const sg_graph_t *g)
{
    uint32_t end = g->n_nodes;
    while (end && g->nodes[end - 1].removed) end--;
    return end;
}

static uint32_t live_end_edges(const sg_graph_t *g)
{
    uint32_t end = g->n_edges;
    while (end && g->edges[end - 1].removed) end--;
    return end;
}

int sg_bundle_to_json(const sg_graph_t *g, char **out)
{
    if (!g || !out || g->root != g) return SG_EINVAL;
    emit_t e = {0};
    out_str(&e, "{\n");
    out_field(&e, "format", json_string_nocheck(SG_FORMAT_NAME), false);
    out_field(&e, "version", json_integer(SG_FORMAT_VERSION), false);

    json_t *cap = json_object();
    put_opt_str(&e, cap, "program", g->program);
    put(&e, cap, "pid", json_integer(g->pid));
    put(&e, cap, "capture_id", ju64(g->capture_id));
    put(&e, cap, "sequence", json_integer(g->sequence));
    put_opt_str(&e, cap, "mode", g->capture_mode);
    out_field(&e, "capture", cap, false);

    const sg_device_t *d = &g->device;
    json_t *dev = json_object();
    put_opt_str(&e, dev, "name", d->name);
    put(&e, dev, "cc_major", json_integer(d->cc_major));
    put(&e, dev, "cc_minor", json_integer(d->cc_minor));
    put(&e, dev, "driver_version", json_integer(d->driver_version));
    put(&e, dev, "total_memory", ju64(d->total_memory));
    char uuid[sizeof d->uuid];
    memcpy(uuid, d->uuid, sizeof uuid);
    uuid[sizeof uuid - 1] = '\0';
    put(&e, dev, "uuid", jstr(uuid));
    put(&e, dev, "sm_count", json_integer(d->sm_count));
    put(&e, dev, "mem_bandwidth_gbs",
        json_real(isfinite(d->mem_bandwidth_gbs) ? d->mem_bandwidth_gbs : 0.0));
    out_field(&e, "device", dev, false);

    json_t *cc = json_object();
    put(&e, cc, "done", json_boolean(g->crosscheck_done));
    put(&e, cc, "ok", json_boolean(g->crosscheck_ok));
    put(&e, cc, "cuda_node_count", json_integer(g->cuda_node_count));
    put(&e, cc, "cuda_edge_count", json_integer(g->cuda_edge_count));
    put_opt_str(&e, cc, "note", g->crosscheck_note);
    out_field(&e, "crosscheck", cc, false);

    out_array_open(&e, "streams", g->n_streams);
    for (uint32_t i = 0; i < g->n_streams; i++)
        out_entry(&e, stream_json(&e, &g->streams[i]), i + 1 == g->n_streams);
    out_array_close(&e, g->n_streams, false);

    out_array_open(&e, "events", g->n_events);
    for (uint32_t i = 0; i < g->n_events; i++)
        out_entry(&e, event_json(&e, &g->events[i]), i + 1 == g->n_events);
    out_array_close(&e, g->n_events, false);

    out_array_open(&e, "buffers", g->n_buffers);
    for (uint32_t i = 0; i < g->n_buffers; i++)
        out_entry(&e, buffer_json(&e, &g->buffers[i]), i + 1 == g->n_buffers);
    out_array_close(&e, g->n_buffers, false);

    out_array_open(&e, "images", g->n_images);
    for (uint32_t i = 0; i < g->n_images; i++)
        out_entry(&e, image_json(&e, &g->images[i]), i + 1 == g->n_images);
    out_array_close(&e, g->n_images, false);

    uint32_t end = live_end_nodes(g);
    out_array_open(&e, "nodes", end);
    for (uint32_t i = 0; i < end && !e.err; i++)
        if (!g->nodes[i].removed) out_entry(&e, node_json(&e, g, &g->nodes[i], 0), i + 1 == end);
    out_array_close(&e, end, false);

    end = live_end_edges(g);
    out_array_open(&e, "edges", end);
    for (uint32_t i = 0; i < end && !e.err; i++)
        if (!g->edges[i].removed) out_entry(&e, edge_json(&e, &g->edges[i]), i + 1 == end);
    out_array_close(&e, end, false);
    if (g->n_nodes > live_end_nodes(g))
        out_field(&e, "next_node_id", json_integer(g->n_nodes), false);
    if (g->n_edges > end) out_field(&e, "next_edge_id", json_integer(g->n_edges), false);

    out_array_open(&e, "pass_log", g->n_pass_log);
    for (uint32_t i = 0; i < g->n_pass_log; i++) {
        json_t *p = json_object();
        put(&e, p, "pass", jstr(g->pass_log[i].pass ? g->pass_log[i].pass : ""));
        put(&e, p, "summary", jstr(g->pass_log[i].summary ? g->pass_log[i].summary : ""));
        out_entry(&e, p, i + 1 == g->n_pass_log);
    }
    out_array_close(&e, g->n_pass_log, true);
    out_str(&e, "}\n");

    if (e.err) {
        free(e.p);
        return e.err;
    }
    *out = e.p;
    return SG_OK;
}
