/* bundle_fields.c: the tables of bundle_fields.h: every field of graph.json,
 * one line each, in the order the writer puts them (docs/FORMAT.md sections
 * 4 to 9). Records come leaf first, so each can name the ones inside it. */
#include "bundle_fields.h"

#include <math.h>
#include <string.h>

#include "bundle.h"

/* One field of the record whose C struct is T. */
#define F(k, m, t, fl, ...)                                                                        \
    {                                                                                              \
        .key = (k), .type = SG_FT_##t, .flags = (fl), .off = offsetof(T, m),                       \
        .size = sizeof(((T *)0)->m), __VA_ARGS__                                                   \
    }
/* A nested object laid over the whole struct (same C memory, own JSON object). */
#define SELF(k, rec, fl)                                                                           \
    {                                                                                              \
        .key = (k), .type = SG_FT_OBJECT, .flags = (fl), .size = sizeof(T), .sub = &(rec)          \
    }
#define COUNT(m) .count_off = offsetof(T, m)
#define SECOND(m) .off2 = offsetof(T, m)
#define SUB(rec) .sub = &(rec)
#define NAMES(e, fallback) .names = &(e), .def = (fallback)
#define TABLE(t) .table = SG_TABLE_##t
#define TYPES(mask) .types = (mask)
#define MAX(n) .max = (n)
#define DEF(v) .def = (v)
#define SINCE(v) .since = (v)
#define NT(t) (1u << SG_NODE_##t)
#define RECORD(nm, ID)                                                                             \
    const sg_record_t sg_record_##nm = {#nm, ID, sizeof(T), nm##_fields,                           \
                                        sizeof nm##_fields / sizeof nm##_fields[0]}

#define REQ SG_F_REQ
#define OMIT SG_F_OMIT
#define ID (SG_F_ID | SG_F_REQ)

/* The tables are aligned by hand, one field a line: clang-format leaves them be. */
/* clang-format off */

/* ---- kernel payload ---------------------------------------------------------------- */

/* ---- access facts of a kernel launch (FORMAT.md section 6.3, version 6) ------------- */

#define T sg_site_t
static const sg_field_t site_fields[] = {
    F("kind",   kind,   ENUM,  REQ,  NAMES(sg_site_kinds, -1)),
    F("status", status, ENUM,  REQ,  NAMES(sg_site_statuses, -1)),
    F("range",  range,  ENUM,  OMIT, NAMES(sg_range_kinds, SG_RANGE_GUESS)),
    F("line",   line,   U32,   OMIT),
    F("param",  param,  I32,   OMIT, DEF(-1)),
    F("buffer", buffer, INDEX, OMIT, TABLE(BUFFERS)),
    F("offset", offset, U64,   OMIT),
    F("size",   size,   U64,   OMIT),
    F("reason", reason, STR,   OMIT),
};
static RECORD(site, SG_REC_SITE);
#undef T

#define T sg_facts_t
static const sg_field_t facts_fields[] = {
    F("source",    source,    ENUM,    REQ,  NAMES(sg_facts_sources, SG_FACTS_NONE)),
    F("all_known", all_known, BOOL,    OMIT),
    F("complete",  complete,  BOOL,    OMIT),
    F("reason",    reason,    STR,     OMIT),
    F("pointers",  pointers,  U32S,    OMIT, COUNT(n_pointers), MAX(SG_BUNDLE_MAX_PARAM_BYTES)),
    F("sites",     sites,     RECORDS, OMIT, SUB(sg_record_site), COUNT(n_sites), MAX(SG_BUNDLE_MAX_SITES)),
};
static RECORD(facts, SG_REC_FACTS);
#undef T

#define T sg_kernel_t
static const sg_field_t params_fields[] = {
    F("bytes",  param_bytes,   HEX,   0, COUNT(params_size), MAX(SG_BUNDLE_MAX_PARAM_BYTES)),
    F("layout", param_offsets, PAIRS, 0, SECOND(param_sizes), COUNT(n_params), MAX(SG_BUNDLE_MAX_PARAM_BYTES)),
};
static RECORD(params, SG_REC_PARAMS);

static const sg_field_t kernel_fields[] = {
    F("name",         name,         STR,    REQ | SG_F_NONNULL),
    F("image",        image,        INDEX,  OMIT, TABLE(IMAGES)),
    F("grid",         grid,         TRIPLE, REQ),
    F("block",        block,        TRIPLE, REQ),
    F("cluster",      cluster,      TRIPLE, OMIT),
    F("shared_bytes", shared_bytes, U32,    0),
    F("priority",     priority,     I32,    OMIT),
    F("cooperative",  cooperative,  BOOL,   OMIT),
    F("has_extra",    has_extra,    BOOL,   OMIT),
    F("func_handle",  func_handle,  ADDR,   0),
    SELF("params", sg_record_params, OMIT),
    F("access",       facts,        OBJECT, OMIT, SUB(sg_record_facts), SINCE(6)),
};
static RECORD(kernel, SG_REC_KERNEL);
#undef T

/* ---- other payloads ------------------------------------------------------------------ */

#define T sg_memcpy_t
static const sg_field_t memcpy_fields[] = {
    F("dst",       dst,       ADDR, 0),
    F("src",       src,       ADDR, 0),
    F("dst_pitch", dst_pitch, U64,  0),
    F("src_pitch", src_pitch, U64,  0),
    F("width",     width,     U64,  0),
    F("height",    height,    U64,  0),
    F("depth",     depth,     U64,  0),
    F("kind",      kind,      ENUM, 0, NAMES(sg_copy_kinds, SG_COPY_DEFAULT)),
};
static RECORD(memcpy, SG_REC_MEMCPY);
#undef T

#define T sg_memset_t
static const sg_field_t memset_fields[] = {
    F("dst",          dst,          ADDR, 0),
    F("pitch",        pitch,        U64,  0),
    F("value",        value,        U32,  0),
    F("element_size", element_size, U32,  0),
    F("width",        width,        U64,  0),
    F("height",       height,       U64,  0),
};
static RECORD(memset, SG_REC_MEMSET);
#undef T

#define T sg_host_t
static const sg_field_t host_fields[] = {
    F("fn",        fn,        ADDR, 0),
    F("user_data", user_data, ADDR, 0),
};
static RECORD(host, SG_REC_HOST);
#undef T

#define T sg_memnode_t
static const sg_field_t mem_fields[] = {
    F("buffer",  buffer,  INDEX, OMIT, TABLE(BUFFERS)),
    F("address", address, ADDR,  0),
    F("bytes",   bytes,   U64,   0),
};
static RECORD(mem, SG_REC_MEM);
#undef T

#define T sg_conditional_t
static const sg_field_t conditional_fields[] = {
    F("type",          type,          ENUM,   0, NAMES(sg_cond_types, SG_COND_IF)),
    F("handle",        handle,        ADDR,   0),
    F("default_value", default_value, U32,    0),
    F("bodies",        bodies,        BODIES, 0, COUNT(n_bodies), MAX(SG_BUNDLE_MAX_NODES)),
};
static RECORD(conditional, SG_REC_CONDITIONAL);
#undef T

/* The opaque payload is one string in the node's union; this struct has
 * that layout, so the record can describe it like any other. */
typedef struct {
    char *note;
} opaque_payload_t;
#define T opaque_payload_t
static const sg_field_t opaque_fields[] = {
    F("note", note, STR, OMIT),
};
static RECORD(opaque, SG_REC_OPAQUE);
#undef T

/* ---- nodes and edges --------------------------------------------------------------------- */

#define T sg_access_t
static const sg_field_t access_fields[] = {
    F("buffer", buffer, INDEX, REQ, TABLE(BUFFERS)),
    F("offset", offset, U64,   0),
    F("size",   size,   U64,   REQ),
    F("mode",   mode,   ENUM,  REQ, NAMES(sg_access_modes, SG_ACCESS_UNKNOWN)),
    F("range",  range,  ENUM,  OMIT, NAMES(sg_range_kinds, SG_RANGE_GUESS), SINCE(6)),
};
static RECORD(access, SG_REC_ACCESS);
#undef T

#define T sg_node_t
static const sg_field_t node_fields[] = {
    F("id",          id,            U32,      ID),
    F("type",        type,          ENUM,     REQ | SG_F_TYPE, NAMES(sg_node_types, -1)),
    F("stream",      stream,        STREAM,   REQ),
    F("seq",         seq,           U64,      REQ),
    F("synthesized", synthesized,   BOOL,     OMIT),
    F("label",       label,         STR,      OMIT),
    F("cuda_type",   cuda_type,     U32,      OMIT),
    F("duration_ns", duration_ns,   DURATION, OMIT, DEF(-1)),
    F("accesses",    accesses,      RECORDS,  OMIT, SUB(sg_record_access), COUNT(n_accesses), MAX(SG_BUNDLE_MAX_TABLE)),
    F("kernel",      u.kernel,      OBJECT,   REQ,  SUB(sg_record_kernel), TYPES(NT(KERNEL))),
    F("memcpy",      u.memcpy,      OBJECT,   0,    SUB(sg_record_memcpy), TYPES(NT(MEMCPY))),
    F("memset",      u.memset,      OBJECT,   0,    SUB(sg_record_memset), TYPES(NT(MEMSET))),
    F("host",        u.host,        OBJECT,   0,    SUB(sg_record_host), TYPES(NT(HOST))),
    F("event",       u.event,       INDEX,    OMIT, TABLE(EVENTS), TYPES(NT(EVENT_RECORD) | NT(EVENT_WAIT))),
    F("mem",         u.mem,         OBJECT,   0,    SUB(sg_record_mem), TYPES(NT(MEM_ALLOC) | NT(MEM_FREE))),
    F("body",        u.child,       BODY,     OMIT, TYPES(NT(CHILD_GRAPH))),
    F("conditional", u.cond,        OBJECT,   0,    SUB(sg_record_conditional), TYPES(NT(CONDITIONAL))),
    F("opaque",      u.opaque_note, OBJECT,   OMIT, SUB(sg_record_opaque), TYPES(NT(OPAQUE))),
};
static RECORD(node, SG_REC_NODE);
#undef T

#define T sg_edge_t
static const sg_field_t edge_fields[] = {
    F("id",        id,        U32,   ID),
    F("from",      from,      U32,   REQ),
    F("to",        to,        U32,   REQ),
    F("kind",      kind,      ENUM,  REQ, NAMES(sg_edge_kinds, -1)),
    F("event",     event,     INDEX, OMIT, TABLE(EVENTS)),
    F("from_port", from_port, U8,    OMIT),
    F("to_port",   to_port,   U8,    OMIT),
    F("cuda_type", cuda_type, U8,    OMIT),
};
static RECORD(edge, SG_REC_EDGE);
#undef T

/* A graph object: the root's keys at the top level, a body's on its own. */
#define T sg_graph_t
static const sg_field_t graph_fields[] = {
    F("nodes",        nodes, NODES,   REQ, SUB(sg_record_node), MAX(SG_BUNDLE_MAX_NODES)),
    F("next_node_id", nodes, NEXT_ID, OMIT, DEF(0)),
    F("edges",        edges, EDGES,   REQ, SUB(sg_record_edge), MAX(SG_BUNDLE_MAX_EDGES)),
    F("next_edge_id", edges, NEXT_ID, OMIT, DEF(1)),
};
static RECORD(graph, SG_REC_GRAPH);
#undef T

/* ---- tables of the root ------------------------------------------------------------------- */

#define T sg_stream_t
static const sg_field_t stream_fields[] = {
    F("id",         id,         U32,  ID),
    F("label",      label,      STR,  SG_F_LABEL, DEF('s')),
    F("handle",     handle,     ADDR, 0),
    F("cuda_id",    cuda_id,    U64,  0),
    F("priority",   priority,   I32,  0),
    F("flags",      flags,      U32,  0),
    F("per_thread", per_thread, BOOL, 0),
};
static RECORD(stream, SG_REC_STREAM);
#undef T

#define T sg_event_t
static const sg_field_t event_fields[] = {
    F("id",       id,       U32,  ID),
    F("label",    label,    STR,  SG_F_LABEL, DEF('e')),
    F("handle",   handle,   ADDR, 0),
    F("flags",    flags,    U32,  0),
    F("external", external, BOOL, 0),
};
static RECORD(event, SG_REC_EVENT);
#undef T

#define T sg_buffer_t
static const sg_field_t buffer_fields[] = {
    F("id",             id,             U32,     ID),
    F("label",          label,          STR,     SG_F_LABEL, DEF('b')),
    F("kind",           kind,           ENUM,    REQ, NAMES(sg_buffer_kinds, SG_BUFFER_UNKNOWN)),
    F("address",        address,        ADDR,    REQ),
    F("size",           size,           U64,     REQ),
    F("alloc_node",     alloc_node,     NODE_ID, OMIT),
    F("before",         before_file,    PATH,    OMIT),
    F("after",          after_file,     PATH,    OMIT),
    F("snapshot_bytes", snapshot_bytes, U64,     0),
    F("snapshot_note",  snapshot_note,  STR,     OMIT),
};
static RECORD(buffer, SG_REC_BUFFER);
#undef T

#define T sg_image_t
static const sg_field_t image_fields[] = {
    F("id",           id,           U32,   ID),
    F("kind",         kind,         ENUM,  REQ, NAMES(sg_image_kinds, SG_IMAGE_UNKNOWN)),
    F("hash",         hash,         HASH,  REQ),
    F("file",         file,         PATH,  OMIT | SG_F_HASHED),
    F("size",         size,         U64,   0),
    F("ptx_archs",    ptx_archs,    U32S,  0, COUNT(n_ptx_archs), MAX(SG_BUNDLE_MAX_TABLE)),
    F("sass_archs",   sass_archs,   U32S,  0, COUNT(n_sass_archs), MAX(SG_BUNDLE_MAX_TABLE)),
    F("options",      options,      STR,   OMIT),
    F("note",         note,         STR,   OMIT),
    F("source_image", source_image, INDEX, OMIT, TABLE(IMAGES)),
    F("ptx_image",    ptx_image,    INDEX, OMIT, TABLE(IMAGES), SINCE(5)),
};
static RECORD(image, SG_REC_IMAGE);
#undef T

#define T sg_pass_log_t
static const sg_field_t pass_log_fields[] = {
    F("pass",    pass,    STR, REQ | SG_F_NONNULL),
    F("summary", summary, STR, SG_F_NONNULL),
};
static RECORD(pass_log, SG_REC_PASS_LOG);
#undef T

/* ---- fused kernels (graph.h, "fused kernels"; FORMAT.md section 4.4) ---------------------- */

#define T sg_fused_stage_t
static const sg_field_t fused_stage_fields[] = {
    F("node",       node,       U32,    REQ),
    F("seq",        seq,        U64,    0),
    F("kernel",     kernel,     OBJECT, REQ, SUB(sg_record_kernel)),
    F("param_base", param_base, U32,    REQ),
};
static RECORD(fused_stage, SG_REC_FUSED_STAGE);
#undef T

#define T sg_dropped_write_t
static const sg_field_t dropped_write_fields[] = {
    F("stage",  stage,  U32,   REQ),
    F("buffer", buffer, INDEX, REQ, TABLE(BUFFERS)),
    F("offset", offset, U64,   REQ),
    F("size",   size,   U64,   REQ),
    F("reason", reason, STR,   SG_F_NONNULL),
};
static RECORD(dropped_write, SG_REC_DROPPED_WRITE);
#undef T

#define T sg_fusion_t
static const sg_field_t fusion_fields[] = {
    F("node",        node,        NODE_ID, REQ),
    F("hash",        hash,        HASH,    REQ),
    F("tier",        tier,        U32,     REQ),
    F("codegen",     codegen,     STR,     OMIT),
    F("ptx_image",   ptx_image,   INDEX,   OMIT, TABLE(IMAGES)),
    F("cubin_image", cubin_image, INDEX,   OMIT, TABLE(IMAGES)),
    F("registers",   registers,   I32,     0, DEF(-1)),
    F("spill_bytes", spill_bytes, I32,     0, DEF(-1)),
    F("stages",      stages,      RECORDS, REQ, SUB(sg_record_fused_stage), COUNT(n_stages), MAX(SG_BUNDLE_MAX_FUSED_STAGES)),
    F("dropped",     dropped,     RECORDS, 0, SUB(sg_record_dropped_write), COUNT(n_dropped), MAX(SG_BUNDLE_MAX_DROPPED_WRITES)),
    F("note",        note,        STR,     OMIT),
};
static RECORD(fusion, SG_REC_FUSION);
#undef T

/* ---- provenance and the top level --------------------------------------------------------- */

#define T sg_graph_t
static const sg_field_t capture_fields[] = {
    F("program",    program,      STR, OMIT),
    F("pid",        pid,          I64, 0),
    F("capture_id", capture_id,   U64, 0),
    F("sequence",   sequence,     U32, 0),
    F("rank",       rank,         I32, OMIT, DEF(-1), SINCE(4)),
    F("mode",       capture_mode, STR, OMIT),
};
static RECORD(capture, SG_REC_CAPTURE);

static const sg_field_t crosscheck_fields[] = {
    F("done",            crosscheck_done, BOOL, 0),
    F("ok",              crosscheck_ok,   BOOL, 0),
    F("cuda_node_count", cuda_node_count, U32,  0),
    F("cuda_edge_count", cuda_edge_count, U32,  0),
    F("note",            crosscheck_note, STR,  OMIT),
};
static RECORD(crosscheck, SG_REC_CROSSCHECK);
#undef T

#define T sg_device_t
static const sg_field_t device_fields[] = {
    F("name",              name,              STR,   OMIT),
    F("cc_major",          cc_major,          I32,   0),
    F("cc_minor",          cc_minor,          I32,   0),
    F("driver_version",    driver_version,    I32,   0),
    F("total_memory",      total_memory,      U64,   0),
    F("uuid",              uuid,              CHARS, 0),
    F("sm_count",          sm_count,          U32,   0),
    F("ordinal",           ordinal,           I32,   OMIT, DEF(-1), SINCE(4)),
    F("mem_bandwidth_gbs", mem_bandwidth_gbs, REAL,  0),
};
static RECORD(device, SG_REC_DEVICE);
#undef T

#define T sg_graph_t
static const sg_field_t bundle_fields[] = {
    {.key = "format", .type = SG_FT_FORMAT, .flags = REQ},
    {.key = "version", .type = SG_FT_VERSION, .flags = REQ},
    SELF("capture", sg_record_capture, 0),
    F("device",     device,   OBJECT,  0, SUB(sg_record_device)),
    SELF("crosscheck", sg_record_crosscheck, 0),
    F("streams",    streams,  TABLE,   0, SUB(sg_record_stream), COUNT(n_streams), SECOND(cap_streams), MAX(SG_BUNDLE_MAX_TABLE)),
    F("events",     events,   TABLE,   0, SUB(sg_record_event), COUNT(n_events), SECOND(cap_events), MAX(SG_BUNDLE_MAX_TABLE)),
    F("buffers",    buffers,  TABLE,   0, SUB(sg_record_buffer), COUNT(n_buffers), SECOND(cap_buffers), MAX(SG_BUNDLE_MAX_TABLE)),
    F("images",     images,   TABLE,   0, SUB(sg_record_image), COUNT(n_images), SECOND(cap_images), MAX(SG_BUNDLE_MAX_TABLE)),
    /* the root graph's keys (nodes, edges, ...) sit at the top level */
    {.type = SG_FT_GRAPH, .flags = REQ, .size = sizeof(T), .sub = &sg_record_graph},
    F("fusions",    fusions,  RECORDS, OMIT, SUB(sg_record_fusion), COUNT(n_fusions), SECOND(cap_fusions), MAX(SG_BUNDLE_MAX_TABLE), SINCE(3)),
    F("pass_log",   pass_log, RECORDS, 0, SUB(sg_record_pass_log), COUNT(n_pass_log), SECOND(cap_pass_log), MAX(SG_BUNDLE_MAX_TABLE)),
};
#undef T
const sg_record_t sg_record_bundle = {"bundle", SG_REC_BUNDLE, sizeof(sg_graph_t), bundle_fields,
                                      sizeof bundle_fields / sizeof bundle_fields[0]};

const sg_record_t *const sg_records[SG_REC_COUNT] = {
    [SG_REC_BUNDLE] = &sg_record_bundle,   [SG_REC_GRAPH] = &sg_record_graph,
    [SG_REC_CAPTURE] = &sg_record_capture, [SG_REC_DEVICE] = &sg_record_device,
    [SG_REC_CROSSCHECK] = &sg_record_crosscheck, [SG_REC_STREAM] = &sg_record_stream,
    [SG_REC_EVENT] = &sg_record_event,     [SG_REC_BUFFER] = &sg_record_buffer,
    [SG_REC_IMAGE] = &sg_record_image,     [SG_REC_NODE] = &sg_record_node,
    [SG_REC_ACCESS] = &sg_record_access,   [SG_REC_KERNEL] = &sg_record_kernel,
    [SG_REC_PARAMS] = &sg_record_params,   [SG_REC_MEMCPY] = &sg_record_memcpy,
    [SG_REC_MEMSET] = &sg_record_memset,   [SG_REC_HOST] = &sg_record_host,
    [SG_REC_MEM] = &sg_record_mem,         [SG_REC_CONDITIONAL] = &sg_record_conditional,
    [SG_REC_OPAQUE] = &sg_record_opaque,   [SG_REC_EDGE] = &sg_record_edge,
    [SG_REC_PASS_LOG] = &sg_record_pass_log, [SG_REC_FUSION] = &sg_record_fusion,
    [SG_REC_FUSED_STAGE] = &sg_record_fused_stage,
    [SG_REC_DROPPED_WRITE] = &sg_record_dropped_write,
    [SG_REC_FACTS] = &sg_record_facts,     [SG_REC_SITE] = &sg_record_site,
};

/* clang-format on */

/* A member added to a model struct must be added here too (or deliberately
 * left out of the format): these sizes catch most additions at compile time.
 * Update a size only together with the table of its struct. */
#if defined(__x86_64__) || defined(__aarch64__)
#define M(t) #t " changed: list the new member in graph/bundle_fields.c, then update this size"
_Static_assert(sizeof(sg_graph_t) == 312, M(sg_graph_t)); /* + blocks: internal */
_Static_assert(sizeof(sg_device_t) == 88, M(sg_device_t));
_Static_assert(sizeof(sg_stream_t) == 48, M(sg_stream_t));
_Static_assert(sizeof(sg_event_t) == 32, M(sg_event_t));
_Static_assert(sizeof(sg_buffer_t) == 80, M(sg_buffer_t));
_Static_assert(sizeof(sg_image_t) == 104, M(sg_image_t));
_Static_assert(sizeof(sg_node_t) == 240, M(sg_node_t)); /* members reordered for the passes */
_Static_assert(sizeof(sg_access_t) == 32, M(sg_access_t));
_Static_assert(sizeof(sg_kernel_t) == 152, M(sg_kernel_t));
_Static_assert(sizeof(sg_facts_t) == 48, M(sg_facts_t));
_Static_assert(sizeof(sg_site_t) == 48, M(sg_site_t));
_Static_assert(sizeof(sg_memcpy_t) == 64, M(sg_memcpy_t));
_Static_assert(sizeof(sg_memset_t) == 40, M(sg_memset_t));
_Static_assert(sizeof(sg_host_t) == 16, M(sg_host_t));
_Static_assert(sizeof(sg_memnode_t) == 24, M(sg_memnode_t));
_Static_assert(sizeof(sg_conditional_t) == 32, M(sg_conditional_t));
_Static_assert(sizeof(sg_edge_t) == 24, M(sg_edge_t));
_Static_assert(sizeof(sg_pass_log_t) == 16, M(sg_pass_log_t));
_Static_assert(sizeof(sg_fusion_t) == 96, M(sg_fusion_t));
_Static_assert(sizeof(sg_fused_stage_t) == 176, M(sg_fused_stage_t));
_Static_assert(sizeof(sg_dropped_write_t) == 32, M(sg_dropped_write_t));
#undef M
#endif

/* ---- helpers -------------------------------------------------------------------------------- */

uint32_t sg_field_count(const sg_field_t *f, const void *base)
{
    uint32_t n;
    memcpy(&n, (const char *)base + f->count_off, sizeof n);
    /* a model edited by hand may hold a count without its array */
    if (*(void *const *)sg_field_ptr(f, base) == NULL) return 0;
    if (f->type == SG_FT_PAIRS && *(void *const *)((const char *)base + f->off2) == NULL) return 0;
    return n;
}

static uint64_t load_bits(const void *p, size_t size)
{
    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
    switch (size) {
    case 1:
        memcpy(&u8, p, 1);
        return u8;
    case 4:
        memcpy(&u32, p, 4);
        return u32;
    default:
        memcpy(&u64, p, 8);
        return u64;
    }
}

/* The graph's node (edge) array ends in removed entries: a next id is due. */
static bool trailing_holes(const sg_graph_t *g, bool edges)
{
    if (edges) return g->n_edges && g->edges[g->n_edges - 1].removed;
    return g->n_nodes && g->nodes[g->n_nodes - 1].removed;
}

bool sg_field_is_default(const sg_field_t *f, const void *base)
{
    const void *p = sg_field_ptr(f, base);
    switch (f->type) {
    case SG_FT_I32:
        return (int64_t)(int32_t)load_bits(p, 4) == f->def;
    case SG_FT_U8:
    case SG_FT_U32:
    case SG_FT_I64:
    case SG_FT_U64:
    case SG_FT_ADDR:
        return load_bits(p, f->size) == 0;
    case SG_FT_BOOL:
        return !*(const bool *)p;
    case SG_FT_ENUM:
        return (int64_t)(int32_t)load_bits(p, 4) == f->def;
    case SG_FT_REAL: {
        double d = *(const double *)p;
        return d == 0 || !isfinite(d);
    }
    case SG_FT_DURATION: {
        double d = *(const double *)p;
        return d < 0 || !isfinite(d);
    }
    case SG_FT_STR:
    case SG_FT_PATH:
    case SG_FT_BODY:
        return *(void *const *)p == NULL;
    case SG_FT_CHARS:
    case SG_FT_HASH:
        return *(const char *)p == '\0';
    case SG_FT_INDEX:
    case SG_FT_NODE_ID:
        return load_bits(p, 4) == SG_NONE;
    case SG_FT_TRIPLE: {
        const uint32_t *t = p;
        return !t[0] && !t[1] && !t[2];
    }
    case SG_FT_U32S:
    case SG_FT_HEX:
    case SG_FT_PAIRS:
    case SG_FT_RECORDS:
    case SG_FT_TABLE:
    case SG_FT_BODIES:
        return sg_field_count(f, base) == 0;
    case SG_FT_OBJECT:
        for (uint32_t i = 0; i < f->sub->n_fields; i++)
            if (!sg_field_is_default(&f->sub->fields[i], p)) return false;
        return true;
    case SG_FT_NEXT_ID:
        return !trailing_holes(base, f->def == 1);
    default:
        return false;
    }
}

const sg_field_t *sg_record_field(const sg_record_t *r, const char *key, size_t n)
{
    for (uint32_t i = 0; i < r->n_fields; i++) {
        const char *k = r->fields[i].key;
        if (k && strlen(k) == n && memcmp(k, key, n) == 0) return &r->fields[i];
    }
    return NULL;
}
