/* views.h: human and machine views of a graph: the canonical text dump
 * (stable order, used by golden tests), DOT export with one lane per stream,
 * and short kernel names for labels. */
#ifndef SGCAP_VIEWS_H
#define SGCAP_VIEWS_H

#include <stdio.h>
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Canonical dump: deterministic text, independent of process addresses that
 * do not matter (handles), so that read -> write -> read gives the same text.
 * Nodes in id order with their stream label, seq, payload and accesses; edges
 * in (from, to, kind) order; tables; pass log. Returns 0 or SG_EIO. */
int sg_dump(const sg_graph_t *g, FILE *f);
/* The same into a malloc'd string. */
int sg_dump_string(const sg_graph_t *g, char **out);

/* What a drawing shows of its graph. */
typedef struct {
    uint32_t nodes;        /* nodes of the graph (its own level) */
    uint32_t boxes;        /* boxes drawn: nodes, when nothing was folded */
    uint32_t folded_boxes; /* boxes that stand for several nodes */
    uint32_t folded_nodes; /* the nodes inside them */
    uint32_t bands;        /* > 0: drawn as this many bands (see dot_fold.h) */
    bool bodies_hidden;    /* folded: bodies of child/conditional nodes not drawn */
} sg_dot_summary_t;

typedef struct {
    bool show_ids;       /* append "#id" to labels */
    bool show_params;    /* kernel geometry is always shown; this adds param sizes */
    const char *title;   /* graph label, NULL for none */
    uint32_t max_nodes;  /* more nodes (bodies included) than this: fold the
                            drawing into about this many boxes (runs of one
                            stream, repeats, bands; graph/dot_fold.h); 0: never */
    sg_dot_summary_t *summary; /* filled in when not NULL */
} sg_dot_options_t;

/* DOT: one coloured cluster per stream ("explicit" gets its own lane), event
 * edges dashed and labelled with the event, control edges dotted, dealloc
 * edges bold red, kernel nodes labelled with a short demangled name and
 * grid/block; folded above opt->max_nodes, and then the title says how.
 * opt may be NULL. 0, SG_ENOMEM or SG_EIO. */
int sg_dot_write(const sg_graph_t *g, FILE *f, const sg_dot_options_t *opt);
/* One line saying how a drawing was folded ("" when it was not). */
const char *sg_dot_summary_text(const sg_dot_summary_t *s, char *buf, size_t n);

/* Short, readable kernel name: demangled, without parameter list and
 * template arguments collapsed when long ("add_kernel", "ns::scale<...>").
 * Writes at most n bytes including the NUL; returns buf. Uses libstdc++'s
 * demangler (names.c): offline code only, never linked into the shim. */
const char *sg_kernel_short_name(const char *mangled, char *buf, size_t n);
/* Without a demangler (in the app too, mangled.c): the first identifier of
 * an Itanium name (`_Z6k_axpbPfPKfffm` -> "k_axpb"), else the name as it
 * is. Writes at most n bytes including the NUL; returns buf. */
const char *sg_kernel_plain_name(const char *mangled, char *buf, size_t n);

/* Which parameters of a C++ kernel are pointers to const, read from its
 * mangled name (`_Z6k_axpbPfPKfffm` -> {0, 1, 0, 0, 0}). A kernel reads
 * through such a pointer unless it casts const away, so capture may record
 * those accesses as reads instead of "unknown". Fills ro[0..n_params) and
 * returns 0; returns -1 (ro all false) when the name cannot be read, is not
 * a plain function, or its parameter count is not n_params. Pure C, no
 * demangler (mangled.c): it runs inside the shim. */
int sg_kernel_const_pointer_params(const char *mangled, uint32_t n_params, bool *ro);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_VIEWS_H */
