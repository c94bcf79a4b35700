/* graph.c: the stream-annotated graph model: tables, nodes, edges, queries
 * and the mutations the rewriter is built on (see graph.h for contracts). */
#include "graph.h"
#include "graph_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and names ---------------------------------------------------- */

const char *sg_strerror(int code)
{
    switch (code) {
    case SG_OK: return "success";
    case SG_ENOMEM: return "out of memory";
    case SG_EINVAL: return "invalid argument";
    case SG_ENOENT: return "not found";
    case SG_ECYCLE: return "graph has a cycle";
    case SG_EFORMAT: return "malformed input";
    case SG_EIO: return "input/output error";
    case SG_ELIMIT: return "size or count limit exceeded";
    case SG_EUNSUPPORTED: return "not supported";
    case SG_EEXIST: return "already exists";
    case SG_ECUDA: return "CUDA call failed";
    default: return "unknown error";
    }
}

static const char *const node_type_names[SG_NODE_TYPE_COUNT] = {
    "kernel",    "memcpy",    "memset",   "host",        "empty",       "event_record",
    "event_wait", "mem_alloc", "mem_free", "child_graph", "conditional", "opaque",
};
static const char *const edge_kind_names[SG_EDGE_KIND_COUNT] = {"stream", "event", "control",
                                                                "dealloc"};
static const char *const buffer_kind_names[SG_BUFFER_KIND_COUNT] = {
    "device", "graph_alloc", "async", "managed", "host_pinned", "unknown", "host_pageable"};
static const uint8_t buffer_kind_since[SG_BUFFER_KIND_COUNT] = {1, 1, 1, 1, 1, 1, 2};
static const char *const image_kind_names[SG_IMAGE_KIND_COUNT] = {"fatbin", "cubin", "ptx",
                                                                  "nvrtc", "unknown"};
static const char *const copy_kind_names[SG_COPY_KIND_COUNT] = {"default", "h2d", "d2h", "d2d",
                                                                "h2h"};
static const char *const cond_type_names[SG_COND_TYPE_COUNT] = {"if", "while", "switch"};
static const char *const access_mode_names[] = {"read", "write", "readwrite", "unknown",
                                                "atomic"};
static const int access_mode_values[] = {SG_ACCESS_READ, SG_ACCESS_WRITE, SG_ACCESS_READWRITE,
                                         SG_ACCESS_UNKNOWN, SG_ACCESS_ATOMIC_RMW};
static const uint8_t access_mode_since[] = {1, 1, 1, 1, 6};
static const char *const facts_source_names[SG_FACTS_SOURCE_COUNT] = {"none", "ptx", "sass",
                                                                      "unknown"};
static const uint8_t facts_source_since[SG_FACTS_SOURCE_COUNT] = {6, 6, 6, 6};
static const char *const site_kind_names[] = {"load", "store", "atomic", "call"};
static const int site_kind_values[] = {SG_SITE_LOAD, SG_SITE_STORE, SG_SITE_ATOMIC, SG_SITE_CALL};
static const uint8_t site_kind_since[] = {6, 6, 6, 6};
static const char *const site_status_names[SG_SITE_STATUS_COUNT] = {"known", "never", "unknown"};
static const uint8_t site_status_since[SG_SITE_STATUS_COUNT] = {6, 6, 6};
static const char *const range_kind_names[SG_RANGE_KIND_COUNT] = {"guess", "bound", "exact",
                                                                  "dense"};
static const uint8_t range_kind_since[SG_RANGE_KIND_COUNT] = {6, 6, 6, 6};

const sg_enum_names_t sg_node_types = {"node type", SG_NODE_TYPE_COUNT, node_type_names, NULL,
                                       NULL};
const sg_enum_names_t sg_edge_kinds = {"edge kind", SG_EDGE_KIND_COUNT, edge_kind_names, NULL,
                                       NULL};
const sg_enum_names_t sg_buffer_kinds = {"buffer kind", SG_BUFFER_KIND_COUNT, buffer_kind_names,
                                         NULL, buffer_kind_since};
const sg_enum_names_t sg_image_kinds = {"image kind", SG_IMAGE_KIND_COUNT, image_kind_names, NULL,
                                        NULL};
const sg_enum_names_t sg_copy_kinds = {"copy kind", SG_COPY_KIND_COUNT, copy_kind_names, NULL,
                                       NULL};
const sg_enum_names_t sg_cond_types = {"conditional type", SG_COND_TYPE_COUNT, cond_type_names,
                                       NULL, NULL};
const sg_enum_names_t sg_access_modes = {"access mode", 5, access_mode_names, access_mode_values,
                                         access_mode_since};
const sg_enum_names_t sg_facts_sources = {"facts source", SG_FACTS_SOURCE_COUNT,
                                          facts_source_names, NULL, facts_source_since};
const sg_enum_names_t sg_site_kinds = {"site kind", 4, site_kind_names, site_kind_values,
                                       site_kind_since};
const sg_enum_names_t sg_site_statuses = {"site status", SG_SITE_STATUS_COUNT, site_status_names,
                                          NULL, site_status_since};
const sg_enum_names_t sg_range_kinds = {"range kind", SG_RANGE_KIND_COUNT, range_kind_names, NULL,
                                        range_kind_since};

uint32_t sg_enum_since(const sg_enum_names_t *e, int v)
{
    if (!e->since) return 1;
    for (uint32_t i = 0; i < e->n; i++)
        if ((e->values ? e->values[i] : (int)i) == v) return e->since[i];
    return 1;
}

const char *sg_enum_name(const sg_enum_names_t *e, int v)
{
    if (!e->values) return v >= 0 && (uint32_t)v < e->n ? e->names[v] : "invalid";
    for (uint32_t i = 0; i < e->n; i++)
        if (e->values[i] == v) return e->names[i];
    return "invalid";
}

int sg_enum_value(const sg_enum_names_t *e, const char *name)
{
    for (uint32_t i = 0; name && i < e->n; i++)
        if (strcmp(name, e->names[i]) == 0) return e->values ? e->values[i] : (int)i;
    return -1;
}

const char *sg_node_type_name(sg_node_type_t t)
{
    return sg_enum_name(&sg_node_types, (int)t);
}

int sg_node_type_from_name(const char *name)
{
    return sg_enum_value(&sg_node_types, name);
}

const char *sg_edge_kind_name(sg_edge_kind_t k)
{
    return sg_enum_name(&sg_edge_kinds, (int)k);
}

int sg_edge_kind_from_name(const char *name)
{
    return sg_enum_value(&sg_edge_kinds, name);
}

const char *sg_buffer_kind_name(sg_buffer_kind_t k)
{
    return sg_enum_name(&sg_buffer_kinds, (int)k);
}

const char *sg_image_kind_name(sg_image_kind_t k)
{
    return sg_enum_name(&sg_image_kinds, (int)k);
}

const char *sg_copy_kind_name(sg_copy_kind_t k)
{
    return sg_enum_name(&sg_copy_kinds, (int)k);
}

const char *sg_cond_type_name(sg_cond_type_t t)
{
    return sg_enum_name(&sg_cond_types, (int)t);
}

const char *sg_access_mode_name(sg_access_mode_t m)
{
    return sg_enum_name(&sg_access_modes, (int)m);
}

const char *sg_facts_source_name(sg_facts_source_t s)
{
    return sg_enum_name(&sg_facts_sources, (int)s);
}

const char *sg_site_kind_name(sg_site_kind_t k)
{
    return sg_enum_name(&sg_site_kinds, (int)k);
}

const char *sg_site_status_name(sg_site_status_t s)
{
    return sg_enum_name(&sg_site_statuses, (int)s);
}

const char *sg_range_kind_name(sg_range_kind_t r)
{
    return sg_enum_name(&sg_range_kinds, (int)r);
}

/* ---- small helpers -------------------------------------------------------- */

static int array_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, bool zero)
{
    if (need <= *cap) return SG_OK;
    if (need == UINT32_MAX) return SG_ELIMIT;
    uint64_t ncap = *cap ? (uint64_t)*cap * 2 : 8;
    while (ncap < need) ncap *= 2;
    if (ncap > UINT32_MAX - 1) ncap = UINT32_MAX - 1;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p) return SG_ENOMEM;
    if (zero) memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *arr = p;
    *cap = (uint32_t)ncap;
    return SG_OK;
}

int sg_array_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    return array_grow(arr, cap, need, elem, true);
}

int sg_array_reserve(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    return array_grow(arr, cap, need, elem, false);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Replace *dst with a copy of src (NULL clears). */
static int set_string(char **dst, const char *src)
{
    char *c = NULL;
    if (src && !(c = strdup(src))) return SG_ENOMEM;
    free(*dst);
    *dst = c;
    return SG_OK;
}

static char *default_label(char prefix, uint32_t id)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%c%u", prefix, id);
    return strdup(buf);
}

static sg_graph_t *root_of(const sg_graph_t *g)
{
    return g->root;
}

/* ---- create / destroy ------------------------------------------------------ */

sg_graph_t *sg_graph_create(void)
{
    sg_graph_t *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->root = g;
    g->rank = -1;
    g->device.ordinal = -1;
    return g;
}

sg_graph_t *sg_graph_create_body(sg_graph_t *parent)
{
    if (!parent) return NULL;
    sg_graph_t *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->root = parent->root;
    return g;
}

void sg_node_release(sg_node_t *n)
{
    free(n->label);
    n->label = NULL;
    free(n->accesses);
    n->accesses = NULL;
    n->n_accesses = 0;
    switch (n->type) {
    case SG_NODE_KERNEL:
        sg_kernel_release(&n->u.kernel);
        break;
    case SG_NODE_CHILD_GRAPH:
        sg_graph_destroy(n->u.child);
        break;
    case SG_NODE_CONDITIONAL:
        for (uint32_t i = 0; i < n->u.cond.n_bodies; i++) sg_graph_destroy(n->u.cond.bodies[i]);
        free(n->u.cond.bodies);
        break;
    case SG_NODE_OPAQUE:
        free(n->u.opaque_note);
        break;
    default:
        break;
    }
    memset(&n->u, 0, sizeof n->u);
}

/* ---- the nodes' lists ------------------------------------------------------------- */

struct sg_graph_blocks {
    sg_edge_id_t *adj; /* edge lists */
    size_t n_adj;
    sg_access_t *acc; /* access lists */
    size_t n_acc;
    char *names; /* kernel names */
    size_t n_names;
};
_Static_assert(sizeof(struct sg_graph_blocks) + 16 <= SG_GRAPH__BLOCKS_BYTES, "blocks record");

static bool in_range(const void *p, const void *lo, size_t bytes)
{
    uintptr_t a = (uintptr_t)p, l = (uintptr_t)lo;
    return p && lo && a >= l && a < l + bytes;
}

/* Is list p (of one of g's nodes) a place in one of g's blocks rather than
 * an allocation of its own? */
static bool adj_in_block(const sg_graph_t *g, const sg_edge_id_t *p)
{
    return g->blocks && in_range(p, g->blocks->adj, g->blocks->n_adj * sizeof *p);
}

static bool acc_in_block(const sg_graph_t *g, const sg_access_t *p)
{
    return g->blocks && in_range(p, g->blocks->acc, g->blocks->n_acc * sizeof *p);
}

static bool name_in_block(const sg_graph_t *g, const char *p)
{
    return g->blocks && in_range(p, g->blocks->names, g->blocks->n_names);
}

static void adj_free(const sg_graph_t *g, sg_edge_id_t *p)
{
    if (!adj_in_block(g, p)) free(p);
}

/* sg_node_release of one of g's nodes, its accesses and kernel name freed
 * only when they are allocations of their own */
static void node_release_in(const sg_graph_t *g, sg_node_t *n)
{
    if (acc_in_block(g, n->accesses)) n->accesses = NULL;
    if (n->type == SG_NODE_KERNEL && name_in_block(g, n->u.kernel.name)) n->u.kernel.name = NULL;
    sg_node_release(n);
}

static struct sg_graph_blocks *blocks_of(sg_graph_t *g)
{
    if (!g->blocks) g->blocks = calloc(1, sizeof *g->blocks);
    return g->blocks;
}

static void blocks_free(sg_graph_t *g)
{
    if (!g->blocks) return;
    free(g->blocks->adj);
    free(g->blocks->acc);
    free(g->blocks->names);
    free(g->blocks);
    g->blocks = NULL;
}

int sg_graph__adj_carve(sg_graph_t *g)
{
    size_t total = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) total += (size_t)g->nodes[i].n_in + g->nodes[i].n_out;
    if (total == 0) return SG_OK;
    struct sg_graph_blocks *k = blocks_of(g);
    sg_edge_id_t *b = k && !k->adj ? malloc(total * sizeof *b) : NULL;
    if (!b) return SG_ENOMEM;
    k->adj = b;
    k->n_adj = total;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *n = &g->nodes[i];
        if (n->removed) continue;
        n->in = n->n_in ? b : NULL;
        b += n->n_in;
        n->out = n->n_out ? b : NULL;
        b += n->n_out;
        n->cap_in = n->n_in;
        n->cap_out = n->n_out;
    }
    return SG_OK;
}

void sg_graph_destroy(sg_graph_t *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node_t *n = &g->nodes[i];
        if (!n->removed) node_release_in(g, n);
        adj_free(g, n->in);
        adj_free(g, n->out);
    }
    blocks_free(g);
    free(g->nodes);
    free(g->edges);
    for (uint32_t i = 0; i < g->n_streams; i++) free(g->streams[i].label);
    free(g->streams);
    for (uint32_t i = 0; i < g->n_events; i++) free(g->events[i].label);
    free(g->events);
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        sg_buffer_t *b = &g->buffers[i];
        free(b->label);
        free(b->before_file);
        free(b->after_file);
        free(b->snapshot_note);
    }
    free(g->buffers);
    for (uint32_t i = 0; i < g->n_images; i++) {
        sg_image_t *im = &g->images[i];
        free(im->file);
        free(im->ptx_archs);
        free(im->sass_archs);
        free(im->options);
        free(im->note);
    }
    free(g->images);
    free(g->program);
    free(g->capture_mode);
    free(g->device.name);
    free(g->crosscheck_note);
    for (uint32_t i = 0; i < g->n_pass_log; i++) {
        free(g->pass_log[i].pass);
        free(g->pass_log[i].summary);
    }
    free(g->pass_log);
    sg_graph__free_fusions(g);
    free(g);
}

/* ---- tables ------------------------------------------------------------------ */

int sg_graph_add_stream(sg_graph_t *g, const char *label, uint64_t handle, uint32_t *out_id)
{
    if (!g) return SG_EINVAL;
    g = root_of(g);
    int rc = sg_array_grow((void **)&g->streams, &g->cap_streams, g->n_streams + 1, sizeof *g->streams);
    if (rc) return rc;
    uint32_t id = g->n_streams;
    sg_stream_t *s = &g->streams[id];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->label = label ? strdup(label) : default_label('s', id);
    if (!s->label) return SG_ENOMEM;
    s->handle = handle;
    g->n_streams++;
    if (out_id) *out_id = id;
    return SG_OK;
}

int sg_graph_add_event(sg_graph_t *g, const char *label, uint64_t handle, uint32_t *out_id)
{
    if (!g) return SG_EINVAL;
    g = root_of(g);
    int rc = sg_array_grow((void **)&g->events, &g->cap_events, g->n_events + 1, sizeof *g->events);
    if (rc) return rc;
    uint32_t id = g->n_events;
    sg_event_t *e = &g->events[id];
    memset(e, 0, sizeof *e);
    e->id = id;
    e->label = label ? strdup(label) : default_label('e', id);
    if (!e->label) return SG_ENOMEM;
    e->handle = handle;
    g->n_events++;
    if (out_id) *out_id = id;
    return SG_OK;
}

int sg_graph_add_buffer(sg_graph_t *g, sg_buffer_kind_t kind, uint64_t address, uint64_t size,
                        uint32_t *out_id)
{
    if (!g || (unsigned)kind >= SG_BUFFER_KIND_COUNT) return SG_EINVAL;
    g = root_of(g);
    int rc = sg_array_grow((void **)&g->buffers, &g->cap_buffers, g->n_buffers + 1, sizeof *g->buffers);
    if (rc) return rc;
    uint32_t id = g->n_buffers;
    sg_buffer_t *b = &g->buffers[id];
    memset(b, 0, sizeof *b);
    b->id = id;
    b->label = default_label('b', id);
    if (!b->label) return SG_ENOMEM;
    b->kind = kind;
    b->address = address;
    b->size = size;
    b->alloc_node = SG_NONE;
    g->n_buffers++;
    if (out_id) *out_id = id;
    return SG_OK;
}

int sg_graph_add_image(sg_graph_t *g, sg_image_kind_t kind, const char *hash, uint64_t size,
                       uint32_t *out_id)
{
    if (!g || (unsigned)kind >= SG_IMAGE_KIND_COUNT || !hash || strlen(hash) != 16)
        return SG_EINVAL;
    g = root_of(g);
    int rc = sg_array_grow((void **)&g->images, &g->cap_images, g->n_images + 1, sizeof *g->images);
    if (rc) return rc;
    uint32_t id = g->n_images;
    sg_image_t *im = &g->images[id];
    memset(im, 0, sizeof *im);
    im->id = id;
    im->kind = kind;
    memcpy(im->hash, hash, 16);
    im->hash[16] = '\0';
    im->size = size;
    im->source_image = SG_NONE;
    im->ptx_image = SG_NONE;
    g->n_images++;
    if (out_id) *out_id = id;
    return SG_OK;
}

sg_stream_t *sg_graph_stream(const sg_graph_t *g, uint32_t id)
{
    if (!g) return NULL;
    g = root_of(g);
    return id < g->n_streams ? &g->streams[id] : NULL;
}

sg_event_t *sg_graph_event(const sg_graph_t *g, uint32_t id)
{
    if (!g) return NULL;
    g = root_of(g);
    return id < g->n_events ? &g->events[id] : NULL;
}

sg_buffer_t *sg_graph_buffer(const sg_graph_t *g, uint32_t id)
{
    if (!g) return NULL;
    g = root_of(g);
    return id < g->n_buffers ? &g->buffers[id] : NULL;
}

sg_image_t *sg_graph_image(const sg_graph_t *g, uint32_t id)
{
    if (!g) return NULL;
    g = root_of(g);
    return id < g->n_images ? &g->images[id] : NULL;
}

uint32_t sg_graph_find_buffer(const sg_graph_t *g, uint64_t addr)
{
    if (!g) return SG_NONE;
    g = root_of(g);
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        if (addr >= b->address && addr - b->address < b->size) return i;
    }
    return SG_NONE;
}

/* ---- nodes ---------------------------------------------------------------------- */

int sg_graph_add_node(sg_graph_t *g, sg_node_type_t type, uint32_t stream, uint64_t seq,
                      sg_node_id_t *out_id)
{
    if (!g || (unsigned)type >= SG_NODE_TYPE_COUNT) return SG_EINVAL;
    int rc = sg_array_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes);
    if (rc) return rc;
    sg_node_id_t id = g->n_nodes;
    sg_node_t *n = &g->nodes[id];
    memset(n, 0, sizeof *n);
    n->id = id;
    n->type = type;
    n->stream = stream;
    n->seq = seq;
    n->duration_ns = -1.0;
    if (type == SG_NODE_KERNEL) n->u.kernel.image = SG_NONE;
    if (type == SG_NODE_EVENT_RECORD || type == SG_NODE_EVENT_WAIT) n->u.event = SG_NONE;
    if (type == SG_NODE_MEM_ALLOC || type == SG_NODE_MEM_FREE) n->u.mem.buffer = SG_NONE;
    g->n_nodes++;
    g->live_nodes++;
    if (out_id) *out_id = id;
    return SG_OK;
}

sg_node_t *sg_graph_node(const sg_graph_t *g, sg_node_id_t id)
{
    if (!g || id >= g->n_nodes || g->nodes[id].removed) return NULL;
    return &g->nodes[id];
}

uint32_t sg_graph_node_count(const sg_graph_t *g)
{
    return g ? g->live_nodes : 0;
}

uint32_t sg_graph_edge_count(const sg_graph_t *g)
{
    return g ? g->live_edges : 0;
}

int sg_node_set_label(sg_graph_t *g, sg_node_id_t id, const char *label)
{
    sg_node_t *n = sg_graph_node(g, id);
    return n ? set_string(&n->label, label) : SG_EINVAL;
}

int sg_node_set_kernel_name(sg_graph_t *g, sg_node_id_t id, const char *name)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n || n->type != SG_NODE_KERNEL || !name) return SG_EINVAL;
    char *d = strdup(name);
    if (!d) return SG_ENOMEM;
    if (!name_in_block(g, n->u.kernel.name)) free(n->u.kernel.name);
    n->u.kernel.name = d;
    return SG_OK;
}

int sg_node_set_kernel_params(sg_graph_t *g, sg_node_id_t id, uint32_t n_params,
                              const uint32_t *offsets, const uint32_t *sizes,
                              const uint8_t *bytes, uint32_t params_size)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n || n->type != SG_NODE_KERNEL) return SG_EINVAL;
    if ((n_params && (!offsets || !sizes)) || (params_size && !bytes)) return SG_EINVAL;
    for (uint32_t i = 0; i < n_params; i++)
        if ((uint64_t)offsets[i] + sizes[i] > params_size) return SG_EINVAL;
    uint32_t *o = NULL, *s = NULL;
    uint8_t *b = NULL;
    if (n_params) {
        o = malloc(n_params * sizeof *o);
        s = malloc(n_params * sizeof *s);
    }
    if (params_size) b = malloc(params_size);
    if ((n_params && (!o || !s)) || (params_size && !b)) {
        free(o);
        free(s);
        free(b);
        return SG_ENOMEM;
    }
    if (n_params) {
        memcpy(o, offsets, n_params * sizeof *o);
        memcpy(s, sizes, n_params * sizeof *s);
    }
    if (params_size) memcpy(b, bytes, params_size);
    sg_kernel_t *k = &n->u.kernel;
    free(k->param_offsets);
    free(k->param_sizes);
    free(k->param_bytes);
    k->param_offsets = o;
    k->param_sizes = s;
    k->param_bytes = b;
    k->n_params = n_params;
    k->params_size = params_size;
    return SG_OK;
}

int sg_node_add_access(sg_graph_t *g, sg_node_id_t id, uint32_t buffer, uint64_t offset,
                       uint64_t size, sg_access_mode_t mode)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n || !sg_graph_buffer(g, buffer)) return SG_EINVAL;
    if (!strcmp(sg_access_mode_name(mode), "invalid")) return SG_EINVAL;
    if (n->n_accesses == UINT32_MAX) return SG_ELIMIT;
    sg_access_t *a;
    if (acc_in_block(g, n->accesses)) { /* out of the block, into its own */
        a = malloc((size_t)(n->n_accesses + 1) * sizeof *a);
        if (a) memcpy(a, n->accesses, (size_t)n->n_accesses * sizeof *a);
    } else {
        a = realloc(n->accesses, (size_t)(n->n_accesses + 1) * sizeof *a);
    }
    if (!a) return SG_ENOMEM;
    n->accesses = a;
    a[n->n_accesses++] = (sg_access_t){buffer, offset, size, mode, SG_RANGE_GUESS};
    return SG_OK;
}

int sg_node_set_accesses(sg_graph_t *g, sg_node_id_t id, const sg_access_t *acc, uint32_t n)
{
    sg_node_t *x = sg_graph_node(g, id);
    if (!x || (n && !acc)) return SG_EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (!sg_graph_buffer(g, acc[i].buffer) || !strcmp(sg_access_mode_name(acc[i].mode), "invalid") ||
            acc[i].range >= SG_RANGE_KIND_COUNT)
            return SG_EINVAL;
    sg_access_t *a = NULL;
    if (n) {
        a = malloc((size_t)n * sizeof *a);
        if (!a) return SG_ENOMEM;
        memcpy(a, acc, (size_t)n * sizeof *a);
    }
    if (!acc_in_block(g, x->accesses)) free(x->accesses);
    x->accesses = a;
    x->n_accesses = n;
    return SG_OK;
}

int sg_node_set_opaque_note(sg_graph_t *g, sg_node_id_t id, const char *note)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n || n->type != SG_NODE_OPAQUE) return SG_EINVAL;
    return set_string(&n->u.opaque_note, note);
}

int sg_node_make_child_body(sg_graph_t *g, sg_node_id_t id, sg_graph_t **out)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n || n->type != SG_NODE_CHILD_GRAPH) return SG_EINVAL;
    sg_graph_t *b = sg_graph_create_body(g);
    if (!b) return SG_ENOMEM;
    sg_graph_destroy(n->u.child);
    n->u.child = b;
    if (out) *out = b;
    return SG_OK;
}

int sg_node_add_cond_body(sg_graph_t *g, sg_node_id_t id, sg_graph_t **out)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n || n->type != SG_NODE_CONDITIONAL) return SG_EINVAL;
    sg_conditional_t *c = &n->u.cond;
    if (c->n_bodies == UINT32_MAX) return SG_ELIMIT;
    sg_graph_t **bodies = realloc(c->bodies, (size_t)(c->n_bodies + 1) * sizeof *bodies);
    if (!bodies) return SG_ENOMEM;
    c->bodies = bodies;
    sg_graph_t *b = sg_graph_create_body(g);
    if (!b) return SG_ENOMEM;
    c->bodies[c->n_bodies++] = b;
    if (out) *out = b;
    return SG_OK;
}

/* ---- edges ------------------------------------------------------------------------- */

static int adj_push(const sg_graph_t *g, sg_edge_id_t **arr, uint32_t *n, uint32_t *cap,
                    sg_edge_id_t e)
{
    if (*n == *cap && adj_in_block(g, *arr)) { /* out of the block, into its own */
        uint32_t nc = *cap < 4 ? 8 : *cap * 2;
        sg_edge_id_t *p = malloc((size_t)nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        memcpy(p, *arr, (size_t)*n * sizeof *p);
        *arr = p;
        *cap = nc;
    }
    int rc = sg_array_reserve((void **)arr, cap, *n + 1, sizeof **arr);
    if (rc) return rc;
    (*arr)[(*n)++] = e;
    return SG_OK;
}

/* Remove e from the list; true when another entry moved into its place
 * (the list is no longer in id order). */
static bool adj_remove(sg_edge_id_t *arr, uint32_t *n, sg_edge_id_t e)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (arr[i] == e) {
            arr[i] = arr[--*n];
            return i != *n;
        }
    }
    return false;
}

static int add_edge_full(sg_graph_t *g, sg_node_id_t from, sg_node_id_t to, sg_edge_kind_t kind,
                         uint32_t event, uint8_t from_port, uint8_t to_port, uint8_t cuda_type,
                         sg_edge_id_t *out_id)
{
    sg_node_t *a = sg_graph_node(g, from), *b = sg_graph_node(g, to);
    if (!a || !b || from == to || (unsigned)kind >= SG_EDGE_KIND_COUNT) return SG_EINVAL;
    if (kind == SG_EDGE_EVENT ? !sg_graph_event(g, event) : event != SG_NONE) return SG_EINVAL;
    /* every field of the new entry is written below */
    int rc = sg_array_reserve((void **)&g->edges, &g->cap_edges, g->n_edges + 1, sizeof *g->edges);
    if (rc) return rc;
    sg_edge_id_t id = g->n_edges;
    if ((rc = adj_push(g, &a->out, &a->n_out, &a->cap_out, id))) return rc;
    if ((rc = adj_push(g, &b->in, &b->n_in, &b->cap_in, id))) {
        a->n_out--;
        return rc;
    }
    g->edges[id] = (sg_edge_t){.id = id,
                               .from = from,
                               .to = to,
                               .kind = kind,
                               .event = event,
                               .from_port = from_port,
                               .to_port = to_port,
                               .cuda_type = cuda_type};
    g->n_edges++;
    g->live_edges++;
    if (out_id) *out_id = id;
    return SG_OK;
}

int sg_graph_add_edge(sg_graph_t *g, sg_node_id_t from, sg_node_id_t to, sg_edge_kind_t kind,
                      uint32_t event, sg_edge_id_t *out_id)
{
    return add_edge_full(g, from, to, kind, event, 0, 0, 0, out_id);
}

sg_edge_t *sg_graph_edge(const sg_graph_t *g, sg_edge_id_t id)
{
    if (!g || id >= g->n_edges || g->edges[id].removed) return NULL;
    return &g->edges[id];
}

int sg_graph_remove_edge(sg_graph_t *g, sg_edge_id_t id)
{
    sg_edge_t *e = sg_graph_edge(g, id);
    if (!e) return SG_EINVAL;
    sg_node_t *a = &g->nodes[e->from], *b = &g->nodes[e->to];
    if (adj_remove(a->out, &a->n_out, id)) g->lists_unordered = true;
    if (adj_remove(b->in, &b->n_in, id)) g->lists_unordered = true;
    e->removed = true;
    g->live_edges--;
    return SG_OK;
}

sg_edge_id_t sg_graph_find_edge(const sg_graph_t *g, sg_node_id_t from, sg_node_id_t to)
{
    const sg_node_t *a = sg_graph_node(g, from);
    if (!a) return SG_NONE;
    for (uint32_t i = 0; i < a->n_out; i++)
        if (g->edges[a->out[i]].to == to) return a->out[i];
    return SG_NONE;
}

const sg_edge_id_t *sg_graph_in_edges(const sg_graph_t *g, sg_node_id_t id, uint32_t *n)
{
    const sg_node_t *x = sg_graph_node(g, id);
    *n = x ? x->n_in : 0;
    return x ? x->in : NULL;
}

const sg_edge_id_t *sg_graph_out_edges(const sg_graph_t *g, sg_node_id_t id, uint32_t *n)
{
    const sg_node_t *x = sg_graph_node(g, id);
    *n = x ? x->n_out : 0;
    return x ? x->out : NULL;
}

int sg_graph_remove_node(sg_graph_t *g, sg_node_id_t id)
{
    sg_node_t *n = sg_graph_node(g, id);
    if (!n) return SG_EINVAL;
    while (n->n_in) sg_graph_remove_edge(g, n->in[n->n_in - 1]);
    while (n->n_out) sg_graph_remove_edge(g, n->out[n->n_out - 1]);
    node_release_in(g, n);
    adj_free(g, n->in);
    adj_free(g, n->out);
    n->in = n->out = NULL;
    n->cap_in = n->cap_out = 0;
    n->removed = true;
    g->live_nodes--;
    return SG_OK;
}

/* ---- queries ---------------------------------------------------------------------- */

/* Order by (seq, id). */
static bool node_before(const sg_graph_t *g, sg_node_id_t x, sg_node_id_t y)
{
    const sg_node_t *a = &g->nodes[x], *b = &g->nodes[y];
    return a->seq != b->seq ? a->seq < b->seq : a->id < b->id;
}

/* Stable merge sort of node ids by (seq, id); qsort has no context argument
 * and this code also runs on several threads inside the shim. */
static void sort_by_seq(const sg_graph_t *g, sg_node_id_t *a, sg_node_id_t *tmp, uint32_t n)
{
    if (n < 2) return;
    uint32_t h = n / 2;
    sort_by_seq(g, a, tmp, h);
    sort_by_seq(g, a + h, tmp, n - h);
    uint32_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = node_before(g, a[j], a[i]) ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

int sg_graph_stream_order(const sg_graph_t *g, uint32_t stream, sg_node_id_t **out, uint32_t *n)
{
    if (!g || !out || !n) return SG_EINVAL;
    uint32_t count = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed && g->nodes[i].stream == stream) count++;
    sg_node_id_t *ids = malloc((count ? count : 1) * sizeof *ids);
    sg_node_id_t *tmp = malloc((count ? count : 1) * sizeof *tmp);
    if (!ids || !tmp) {
        free(ids);
        free(tmp);
        return SG_ENOMEM;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed && g->nodes[i].stream == stream) ids[k++] = i;
    sort_by_seq(g, ids, tmp, count);
    free(tmp);
    *out = ids;
    *n = count;
    return SG_OK;
}

/* Binary min-heap of node ids ordered by (seq, id). */
typedef struct {
    sg_node_id_t *a;
    uint32_t n;
} heap_t;

static void heap_push(const sg_graph_t *g, heap_t *h, sg_node_id_t x)
{
    uint32_t i = h->n++;
    h->a[i] = x;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!node_before(g, h->a[i], h->a[p])) break;
        sg_node_id_t t = h->a[i];
        h->a[i] = h->a[p];
        h->a[p] = t;
        i = p;
    }
}

static sg_node_id_t heap_pop(const sg_graph_t *g, heap_t *h)
{
    sg_node_id_t top = h->a[0];
    h->a[0] = h->a[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && node_before(g, h->a[l], h->a[m])) m = l;
        if (r < h->n && node_before(g, h->a[r], h->a[m])) m = r;
        if (m == i) break;
        sg_node_id_t t = h->a[i];
        h->a[i] = h->a[m];
        h->a[m] = t;
        i = m;
    }
    return top;
}

int sg_graph_topo_order(const sg_graph_t *g, sg_node_id_t **out, uint32_t *n)
{
    if (!g || !out || !n) return SG_EINVAL;
    uint32_t *indeg = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *indeg);
    sg_node_id_t *order = malloc((g->live_nodes ? g->live_nodes : 1) * sizeof *order);
    heap_t h = {malloc((g->live_nodes ? g->live_nodes : 1) * sizeof *h.a), 0};
    if (!indeg || !order || !h.a) {
        free(indeg);
        free(order);
        free(h.a);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].removed) continue;
        indeg[i] = g->nodes[i].n_in;
        if (indeg[i] == 0) heap_push(g, &h, i);
    }
    uint32_t k = 0;
    while (h.n) {
        sg_node_id_t x = heap_pop(g, &h);
        order[k++] = x;
        const sg_node_t *nx = &g->nodes[x];
        for (uint32_t i = 0; i < nx->n_out; i++) {
            sg_node_id_t y = g->edges[nx->out[i]].to;
            if (--indeg[y] == 0) heap_push(g, &h, y);
        }
    }
    free(indeg);
    free(h.a);
    if (k != g->live_nodes) {
        free(order);
        return SG_ECYCLE;
    }
    *out = order;
    *n = k;
    return SG_OK;
}

bool sg_graph_reaches(const sg_graph_t *g, sg_node_id_t from, sg_node_id_t to)
{
    if (!sg_graph_node(g, from) || !sg_graph_node(g, to)) return false;
    if (from == to) return true;
    uint8_t *seen = calloc(g->n_nodes, 1);
    sg_node_id_t *stack = malloc(g->n_nodes * sizeof *stack);
    bool found = false;
    if (!seen || !stack) goto out; /* out of memory: answer conservatively "no" */
    uint32_t top = 0;
    stack[top++] = from;
    seen[from] = 1;
    while (top && !found) {
        const sg_node_t *x = &g->nodes[stack[--top]];
        for (uint32_t i = 0; i < x->n_out; i++) {
            sg_node_id_t y = g->edges[x->out[i]].to;
            if (y == to) {
                found = true;
                break;
            }
            if (!seen[y]) {
                seen[y] = 1;
                stack[top++] = y;
            }
        }
    }
out:
    free(seen);
    free(stack);
    return found;
}

/* ---- merge -------------------------------------------------------------------------- */

static int cmp_id(const void *pa, const void *pb)
{
    sg_node_id_t a = *(const sg_node_id_t *)pa, b = *(const sg_node_id_t *)pb;
    return a < b ? -1 : a > b;
}

static bool in_sorted(const sg_node_id_t *ids, uint32_t n, sg_node_id_t x)
{
    return bsearch(&x, ids, n, sizeof *ids, cmp_id) != NULL;
}

/* Does `keep` already have an edge of the same kind/event to/from `other`? */
static bool has_same_edge(const sg_graph_t *g, const sg_node_t *keep, bool outgoing,
                          sg_node_id_t other, const sg_edge_t *e)
{
    uint32_t n = outgoing ? keep->n_out : keep->n_in;
    const sg_edge_id_t *ids = outgoing ? keep->out : keep->in;
    for (uint32_t i = 0; i < n; i++) {
        const sg_edge_t *f = &g->edges[ids[i]];
        sg_node_id_t end = outgoing ? f->to : f->from;
        if (end == other && f->kind == e->kind && f->event == e->event &&
            f->from_port == e->from_port && f->to_port == e->to_port &&
            f->cuda_type == e->cuda_type)
            return true;
    }
    return false;
}

int sg_graph_merge_chain(sg_graph_t *g, const sg_node_id_t *chain, uint32_t n)
{
    if (!g || !chain || n == 0) return SG_EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (!sg_graph_node(g, chain[i])) return SG_EINVAL;
    for (uint32_t i = 0; i + 1 < n; i++)
        if (sg_graph_find_edge(g, chain[i], chain[i + 1]) == SG_NONE) return SG_EINVAL;
    if (n == 1) return SG_OK;
    sg_node_id_t *sorted = malloc(n * sizeof *sorted);
    if (!sorted) return SG_ENOMEM;
    memcpy(sorted, chain, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_id);
    for (uint32_t i = 0; i + 1 < n; i++) {
        if (sorted[i] == sorted[i + 1]) {
            free(sorted);
            return SG_EINVAL;
        }
    }
    sg_node_id_t keep = chain[0];
    int rc = SG_OK;
    /* chain[0]'s own edges into the chain disappear. */
    for (int dir = 0; dir < 2; dir++) {
        sg_node_t *k = &g->nodes[keep];
        for (uint32_t i = dir ? k->n_in : k->n_out; i-- > 0;) {
            sg_edge_id_t eid = dir ? k->in[i] : k->out[i];
            sg_node_id_t other = dir ? g->edges[eid].from : g->edges[eid].to;
            if (in_sorted(sorted, n, other)) sg_graph_remove_edge(g, eid);
        }
    }
    for (uint32_t c = 1; c < n && rc == SG_OK; c++) {
        sg_node_id_t x = chain[c];
        for (int dir = 0; dir < 2 && rc == SG_OK; dir++) {
            /* re-fetch: adding edges may reallocate g->edges, never g->nodes */
            sg_node_t *nx = &g->nodes[x];
            while (rc == SG_OK && (dir ? nx->n_in : nx->n_out)) {
                sg_edge_id_t eid = dir ? nx->in[nx->n_in - 1] : nx->out[nx->n_out - 1];
                sg_edge_t e = g->edges[eid];
                sg_node_id_t other = dir ? e.from : e.to;
                sg_graph_remove_edge(g, eid);
                if (in_sorted(sorted, n, other)) continue;
                bool outgoing = dir == 0;
                if (has_same_edge(g, &g->nodes[keep], outgoing, other, &e)) continue;
                rc = outgoing ? add_edge_full(g, keep, other, e.kind, e.event, e.from_port,
                                              e.to_port, e.cuda_type, NULL)
                              : add_edge_full(g, other, keep, e.kind, e.event, e.from_port,
                                              e.to_port, e.cuda_type, NULL);
            }
        }
        if (rc == SG_OK) rc = sg_graph_remove_node(g, x);
    }
    free(sorted);
    return rc;
}

/* ---- pass log ------------------------------------------------------------------------- */

int sg_graph_log_pass(sg_graph_t *g, const char *pass, const char *summary)
{
    if (!g || !pass) return SG_EINVAL;
    g = root_of(g);
    int rc = sg_array_grow((void **)&g->pass_log, &g->cap_pass_log, g->n_pass_log + 1, sizeof *g->pass_log);
    if (rc) return rc;
    sg_pass_log_t *l = &g->pass_log[g->n_pass_log];
    l->pass = strdup(pass);
    l->summary = strdup(summary ? summary : "");
    if (!l->pass || !l->summary) {
        free(l->pass);
        free(l->summary);
        return SG_ENOMEM;
    }
    g->n_pass_log++;
    return SG_OK;
}

/* ---- clone ------------------------------------------------------------------------------ */

static void *dup_mem(const void *p, size_t n)
{
    if (!p || n == 0) return NULL;
    void *q = malloc(n);
    if (q) memcpy(q, p, n);
    return q;
}

/* Copy nodes and edges of src into dst (an empty graph with the right root). */
static int clone_dag(const sg_graph_t *src, sg_graph_t *dst)
{
    if (src->n_nodes) {
        dst->nodes = calloc(src->n_nodes, sizeof *dst->nodes);
        if (!dst->nodes) return SG_ENOMEM;
        dst->cap_nodes = src->n_nodes;
    }
    if (src->n_edges) {
        dst->edges = dup_mem(src->edges, src->n_edges * sizeof *src->edges);
        if (!dst->edges) return SG_ENOMEM;
        dst->cap_edges = src->n_edges;
    }
    dst->n_edges = src->n_edges;
    dst->live_edges = src->live_edges;
    dst->lists_unordered = src->lists_unordered; /* the lists are copied as they are */
    dst->live_nodes = src->live_nodes;
    for (uint32_t i = 0; i < src->n_nodes; i++) {
        const sg_node_t *s = &src->nodes[i];
        sg_node_t *d = &dst->nodes[i];
        dst->n_nodes = i + 1; /* so destroy frees what was copied so far */
        *d = *s;
        d->label = NULL;
        d->accesses = NULL;
        d->in = d->out = NULL;
        d->cap_in = d->cap_out = 0;
        d->n_in = d->n_out = 0;
        memset(&d->u, 0, sizeof d->u);
        if (s->removed) continue;
        d->n_accesses = 0;
        d->label = dup_or_null(s->label);
        if (s->label && !d->label) return SG_ENOMEM;
        switch (s->type) {
        case SG_NODE_KERNEL: {
            sg_kernel_t k = s->u.kernel; /* its name goes in the names block, below */
            k.name = NULL;
            if (sg_kernel_copy(&d->u.kernel, &k)) {
                memset(&d->u.kernel, 0, sizeof d->u.kernel);
                return SG_ENOMEM;
            }
            break;
        }
        case SG_NODE_CHILD_GRAPH:
            if (s->u.child) {
                d->u.child = sg_graph_create_body(dst);
                if (!d->u.child) return SG_ENOMEM;
                int rc = clone_dag(s->u.child, d->u.child);
                if (rc) return rc;
            }
            break;
        case SG_NODE_CONDITIONAL: {
            d->u.cond = s->u.cond;
            d->u.cond.n_bodies = 0;
            d->u.cond.bodies = NULL;
            if (s->u.cond.n_bodies) {
                d->u.cond.bodies = calloc(s->u.cond.n_bodies, sizeof *d->u.cond.bodies);
                if (!d->u.cond.bodies) return SG_ENOMEM;
            }
            for (uint32_t b = 0; b < s->u.cond.n_bodies; b++) {
                d->u.cond.bodies[b] = sg_graph_create_body(dst);
                if (!d->u.cond.bodies[b]) return SG_ENOMEM;
                d->u.cond.n_bodies = b + 1;
                int rc = clone_dag(s->u.cond.bodies[b], d->u.cond.bodies[b]);
                if (rc) return rc;
            }
            break;
        }
        case SG_NODE_OPAQUE:
            d->u.opaque_note = dup_or_null(s->u.opaque_note);
            if (s->u.opaque_note && !d->u.opaque_note) return SG_ENOMEM;
            break;
        default:
            d->u = s->u;
            break;
        }
    }
    /* the kernel names, the access lists and the edge lists, each in one
     * block in node order */
    size_t n_chars = 0;
    for (uint32_t i = 0; i < src->n_nodes; i++) {
        const sg_node_t *s = &src->nodes[i];
        if (!s->removed && s->type == SG_NODE_KERNEL && s->u.kernel.name)
            n_chars += strlen(s->u.kernel.name) + 1;
    }
    if (n_chars) {
        struct sg_graph_blocks *k = blocks_of(dst);
        if (!k || !(k->names = malloc(n_chars))) return SG_ENOMEM;
        k->n_names = n_chars;
        char *at = k->names;
        for (uint32_t i = 0; i < src->n_nodes; i++) {
            const sg_node_t *s = &src->nodes[i];
            if (s->removed || s->type != SG_NODE_KERNEL || !s->u.kernel.name) continue;
            size_t len = strlen(s->u.kernel.name) + 1;
            memcpy(at, s->u.kernel.name, len);
            dst->nodes[i].u.kernel.name = at;
            at += len;
        }
    }
    size_t n_acc = 0;
    for (uint32_t i = 0; i < src->n_nodes; i++)
        if (!src->nodes[i].removed) n_acc += src->nodes[i].n_accesses;
    if (n_acc) {
        struct sg_graph_blocks *k = blocks_of(dst);
        if (!k || !(k->acc = malloc(n_acc * sizeof *k->acc))) return SG_ENOMEM;
        k->n_acc = n_acc;
        sg_access_t *at = k->acc;
        for (uint32_t i = 0; i < src->n_nodes; i++) {
            const sg_node_t *s = &src->nodes[i];
            if (s->removed || !s->n_accesses) continue;
            memcpy(at, s->accesses, s->n_accesses * sizeof *at);
            dst->nodes[i].accesses = at;
            dst->nodes[i].n_accesses = s->n_accesses;
            at += s->n_accesses;
        }
    }
    for (uint32_t i = 0; i < src->n_nodes; i++) {
        if (src->nodes[i].removed) continue;
        dst->nodes[i].n_in = src->nodes[i].n_in;
        dst->nodes[i].n_out = src->nodes[i].n_out;
    }
    if (sg_graph__adj_carve(dst) != SG_OK) {
        for (uint32_t i = 0; i < src->n_nodes; i++) dst->nodes[i].n_in = dst->nodes[i].n_out = 0;
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < src->n_nodes; i++) {
        const sg_node_t *s = &src->nodes[i];
        sg_node_t *d = &dst->nodes[i];
        if (s->removed) continue;
        if (s->n_in) memcpy(d->in, s->in, s->n_in * sizeof *s->in);
        if (s->n_out) memcpy(d->out, s->out, s->n_out * sizeof *s->out);
    }
    return SG_OK;
}

static int clone_tables(const sg_graph_t *s, sg_graph_t *d)
{
    if (s->n_streams) {
        d->streams = calloc(s->n_streams, sizeof *d->streams);
        if (!d->streams) return SG_ENOMEM;
        d->cap_streams = s->n_streams;
    }
    for (uint32_t i = 0; i < s->n_streams; i++) {
        d->streams[i] = s->streams[i];
        d->streams[i].label = dup_or_null(s->streams[i].label);
        d->n_streams = i + 1;
        if (!d->streams[i].label) return SG_ENOMEM;
    }
    if (s->n_events) {
        d->events = calloc(s->n_events, sizeof *d->events);
        if (!d->events) return SG_ENOMEM;
        d->cap_events = s->n_events;
    }
    for (uint32_t i = 0; i < s->n_events; i++) {
        d->events[i] = s->events[i];
        d->events[i].label = dup_or_null(s->events[i].label);
        d->n_events = i + 1;
        if (!d->events[i].label) return SG_ENOMEM;
    }
    if (s->n_buffers) {
        d->buffers = calloc(s->n_buffers, sizeof *d->buffers);
        if (!d->buffers) return SG_ENOMEM;
        d->cap_buffers = s->n_buffers;
    }
    for (uint32_t i = 0; i < s->n_buffers; i++) {
        const sg_buffer_t *sb = &s->buffers[i];
        sg_buffer_t *db = &d->buffers[i];
        *db = *sb;
        db->label = dup_or_null(sb->label);
        db->before_file = dup_or_null(sb->before_file);
        db->after_file = dup_or_null(sb->after_file);
        db->snapshot_note = dup_or_null(sb->snapshot_note);
        d->n_buffers = i + 1;
        if ((sb->label && !db->label) || (sb->before_file && !db->before_file) ||
            (sb->after_file && !db->after_file) || (sb->snapshot_note && !db->snapshot_note))
            return SG_ENOMEM;
    }
    if (s->n_images) {
        d->images = calloc(s->n_images, sizeof *d->images);
        if (!d->images) return SG_ENOMEM;
        d->cap_images = s->n_images;
    }
    for (uint32_t i = 0; i < s->n_images; i++) {
        const sg_image_t *si = &s->images[i];
        sg_image_t *di = &d->images[i];
        *di = *si;
        di->file = dup_or_null(si->file);
        di->ptx_archs = dup_mem(si->ptx_archs, si->n_ptx_archs * sizeof(uint32_t));
        di->sass_archs = dup_mem(si->sass_archs, si->n_sass_archs * sizeof(uint32_t));
        di->options = dup_or_null(si->options);
        di->note = dup_or_null(si->note);
        d->n_images = i + 1;
        if ((si->file && !di->file) || (si->n_ptx_archs && !di->ptx_archs) ||
            (si->n_sass_archs && !di->sass_archs) || (si->options && !di->options) ||
            (si->note && !di->note))
            return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < s->n_pass_log; i++) {
        int rc = sg_graph_log_pass(d, s->pass_log[i].pass, s->pass_log[i].summary);
        if (rc) return rc;
    }
    return sg_graph__clone_fusions(s, d);
}

sg_graph_t *sg_graph_clone(const sg_graph_t *g)
{
    if (!g || g->root != g) return NULL;
    sg_graph_t *c = sg_graph_create();
    if (!c) return NULL;
    c->program = dup_or_null(g->program);
    c->capture_mode = dup_or_null(g->capture_mode);
    c->crosscheck_note = dup_or_null(g->crosscheck_note);
    c->pid = g->pid;
    c->capture_id = g->capture_id;
    c->sequence = g->sequence;
    c->rank = g->rank;
    c->device = g->device;
    c->device.name = dup_or_null(g->device.name);
    c->crosscheck_done = g->crosscheck_done;
    c->crosscheck_ok = g->crosscheck_ok;
    c->cuda_node_count = g->cuda_node_count;
    c->cuda_edge_count = g->cuda_edge_count;
    if ((g->program && !c->program) || (g->capture_mode && !c->capture_mode) ||
        (g->crosscheck_note && !c->crosscheck_note) || (g->device.name && !c->device.name) ||
        clone_tables(g, c) != SG_OK || clone_dag(g, c) != SG_OK) {
        sg_graph_destroy(c);
        return NULL;
    }
    return c;
}
