/* bundle_fields.h: every field of graph.json, described once.
 *
 * Each kind of JSON object in a bundle (a node, an edge, a stream, the
 * kernel payload, ...) is a record: an ordered list of fields, each naming
 * its JSON key, the C member of the model struct it maps to (offset, size),
 * its value type, whether it is required, when the writer leaves it out,
 * its default, its limits and the format version that added it. The tables
 * are in bundle_fields.c, one line per field; they drive the writer
 * (bundle_emit.c), the reader (bundle_parse.c), the deep comparison
 * (sg_bundle_same) and the walk over every file a bundle names
 * (sg_bundle_each_file). docs/FORMAT.md documents the same fields, and
 * tests/unit/test_bundle.c checks that every key here appears there.
 *
 * Adding a field: one line in its record in bundle_fields.c with
 * .since = the next format version, SG_FORMAT_VERSION bumped (bundle.h), a
 * row in FORMAT.md's table for the record and in its version history.
 * Readers accept the field from any bundle; older readers refuse bundles of
 * the newer version. What a field means beyond its type (cross-field rules
 * such as "an event edge names its event") lives in bundle_parse.c's
 * record checks. */
#ifndef SGCAP_BUNDLE_FIELDS_H
#define SGCAP_BUNDLE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"

typedef enum {
    SG_FT_U8,       /* uint8_t */
    SG_FT_U32,      /* uint32_t (or an enum-sized unsigned) */
    SG_FT_I32,      /* int32_t / int */
    SG_FT_I64,      /* int64_t */
    SG_FT_U64,      /* uint64_t: integer below 2^53, else "0x..." */
    SG_FT_ADDR,     /* uint64_t, always written "0x..." */
    SG_FT_BOOL,     /* bool */
    SG_FT_REAL,     /* double, finite (a non-finite one is written as 0) */
    SG_FT_DURATION, /* double, negative or non-finite = unknown (left out) */
    SG_FT_STR,      /* char *, owned */
    SG_FT_PATH,     /* char *, a file name inside the bundle */
    SG_FT_CHARS,    /* char[size], NUL-terminated in place */
    SG_FT_HASH,     /* char[17]: 16 lowercase hex digits */
    SG_FT_ENUM,     /* an enum (int-sized), spelled by .names */
    SG_FT_INDEX,    /* uint32_t index into the root table .table, SG_NONE = none */
    SG_FT_NODE_ID,  /* uint32_t id of a node of the root graph, SG_NONE = none */
    SG_FT_STREAM,   /* uint32_t stream index, or "explicit" (SG_STREAM_EXPLICIT) */
    SG_FT_TRIPLE,   /* uint32_t[3] */
    SG_FT_U32S,     /* uint32_t *, count at .count_off */
    SG_FT_HEX,      /* uint8_t *, count at .count_off: hexbytes */
    SG_FT_PAIRS,    /* uint32_t * at .off and .off2, count at .count_off: [[a, b], ...] */
    SG_FT_OBJECT,   /* the record .sub, laid over the struct at .off */
    SG_FT_RECORDS,  /* array of .sub records: pointer at .off, count at .count_off */
    SG_FT_TABLE,    /* a root table: RECORDS whose entry i has "id": i */
    SG_FT_BODY,     /* sg_graph_t * body graph, NULL = none */
    SG_FT_BODIES,   /* sg_graph_t ** body graphs, count at .count_off */
    SG_FT_NODES,    /* the graph's nodes (ids, holes: bundle_parse.c) */
    SG_FT_EDGES,    /* the graph's edges */
    SG_FT_NEXT_ID,  /* next_node_id / next_edge_id (.def: 0 nodes, 1 edges) */
    SG_FT_GRAPH,    /* the keys of .sub (the graph record) inline in this object; no key */
    SG_FT_FORMAT,   /* "format": SG_FORMAT_NAME */
    SG_FT_VERSION,  /* "version": the format version */
} sg_field_type_t;

enum {
    SG_F_REQ = 1u << 0,     /* required (null counts as absent) */
    SG_F_OMIT = 1u << 1,    /* the writer leaves it out when it is the default */
    SG_F_ID = 1u << 2,      /* the entry's id */
    SG_F_TYPE = 1u << 3,    /* the node's type: fields with .types wait for it */
    SG_F_LABEL = 1u << 4,   /* absent: the default label, .def (a letter) and the id */
    SG_F_NONNULL = 1u << 5, /* absent: "" (the model never holds NULL here) */
    SG_F_HASHED = 1u << 6,  /* a PATH whose bytes the record's HASH field is the XXH64 of */
};

/* Root tables an index may point into. */
enum { SG_TABLE_STREAMS, SG_TABLE_EVENTS, SG_TABLE_BUFFERS, SG_TABLE_IMAGES };

/* Records, for the checks bundle_parse.c adds to particular ones. */
typedef enum {
    SG_REC_BUNDLE,
    SG_REC_GRAPH,
    SG_REC_CAPTURE,
    SG_REC_DEVICE,
    SG_REC_CROSSCHECK,
    SG_REC_STREAM,
    SG_REC_EVENT,
    SG_REC_BUFFER,
    SG_REC_IMAGE,
    SG_REC_NODE,
    SG_REC_ACCESS,
    SG_REC_KERNEL,
    SG_REC_PARAMS,
    SG_REC_MEMCPY,
    SG_REC_MEMSET,
    SG_REC_HOST,
    SG_REC_MEM,
    SG_REC_CONDITIONAL,
    SG_REC_OPAQUE,
    SG_REC_EDGE,
    SG_REC_PASS_LOG,
    SG_REC_FUSION,
    SG_REC_FUSED_STAGE,
    SG_REC_DROPPED_WRITE,
    SG_REC_FACTS,
    SG_REC_SITE,
    SG_REC_COUNT
} sg_record_id_t;

typedef struct sg_record sg_record_t;

typedef struct {
    const char *key;
    sg_field_type_t type;
    unsigned flags;
    uint32_t since;   /* format version that added the field */
    size_t off, size; /* the C member */
    size_t off2;      /* PAIRS: the second array; root lists: the capacity member */
    size_t count_off; /* lists: the uint32_t count member */
    int64_t def;      /* default; ENUM: the name written for an invalid value (-1: none,
                         the writer refuses); LABEL: the letter; I32: an absent field's value */
    uint32_t table;   /* INDEX: SG_TABLE_* */
    uint32_t types;   /* node types the field belongs to (1u << type), 0 = any */
    uint32_t max;     /* lists: most entries; strings: most bytes; 0 = the usual limit */
    const sg_enum_names_t *names; /* ENUM */
    const sg_record_t *sub;       /* OBJECT, RECORDS, TABLE, GRAPH */
} sg_field_t;

struct sg_record {
    const char *name; /* "node", for messages */
    sg_record_id_t id;
    size_t size; /* sizeof the C struct: the stride of RECORDS and TABLE arrays */
    const sg_field_t *fields;
    uint32_t n_fields;
};

/* The top-level object of graph.json and every record below it. */
extern const sg_record_t sg_record_bundle;
extern const sg_record_t *const sg_records[SG_REC_COUNT];

/* Member access. */
static inline void *sg_field_ptr(const sg_field_t *f, const void *base)
{
    return (char *)base + f->off;
}
uint32_t sg_field_count(const sg_field_t *f, const void *base);
/* Does f belong to a node of type t (fields without .types belong to all)? */
static inline bool sg_field_applies(const sg_field_t *f, int node_type)
{
    return !f->types || (f->types >> node_type & 1u);
}
/* Is f at its default in base, so that an SG_F_OMIT field is left out? */
bool sg_field_is_default(const sg_field_t *f, const void *base);
/* The record's field named key (n bytes, not NUL-terminated), or NULL. */
const sg_field_t *sg_record_field(const sg_record_t *r, const char *key, size_t n);

#endif /* SGCAP_BUNDLE_FIELDS_H */
