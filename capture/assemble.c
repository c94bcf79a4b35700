/* assemble.c: real graph structure + capture record -> model nodes and
 * edges with streams, sequence numbers and edge kinds (assemble.h). */
#include "assemble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/plural.h"

typedef struct {
    uint64_t handle;
    uint32_t index; /* position in nodes[] */
} hix_t;

static int hix_cmp(const void *a, const void *b)
{
    uint64_t x = ((const hix_t *)a)->handle, y = ((const hix_t *)b)->handle;
    return x < y ? -1 : x > y;
}

static uint32_t hix_find(const hix_t *h, uint32_t n, uint64_t handle)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h[mid].handle < handle)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && h[lo].handle == handle ? h[lo].index : SG_NONE;
}

int sg_assemble_stream(sg_graph_t *g, const sg_capture_record_t *rec, uint32_t label,
                       uint32_t *index)
{
    if (!rec || label >= rec->n_streams) return SG_EINVAL;
    const sg_book_stream_info_t *s = &rec->streams[label];
    sg_graph_t *root = g->root ? g->root : g;
    for (uint32_t i = 0; i < root->n_streams; i++) {
        const sg_stream_t *t = &root->streams[i];
        bool same = s->cuda_id && t->cuda_id ? s->cuda_id == t->cuda_id
                                             : t->handle == s->handle && !s->per_thread;
        if (same) {
            *index = i;
            return SG_OK;
        }
    }
    uint32_t id;
    int rc = sg_graph_add_stream(root, NULL, s->handle, &id);
    if (rc) return rc;
    sg_stream_t *t = sg_graph_stream(root, id);
    t->cuda_id = s->cuda_id;
    t->flags = s->flags;
    t->priority = s->priority;
    t->per_thread = s->per_thread;
    *index = id;
    return SG_OK;
}

int sg_assemble_event(sg_graph_t *g, uint64_t handle, bool external, uint32_t *index)
{
    sg_graph_t *root = g->root ? g->root : g;
    for (uint32_t i = 0; i < root->n_events; i++)
        if (root->events[i].handle == handle) {
            root->events[i].external |= external;
            *index = i;
            return SG_OK;
        }
    uint32_t id;
    int rc = sg_graph_add_event(root, NULL, handle, &id);
    if (rc) return rc;
    sg_graph_event(root, id)->external = external;
    *index = id;
    return SG_OK;
}

typedef struct {
    uint32_t index; /* in nodes[] */
    uint64_t seq;
    bool tagged;
} order_t;

static int order_cmp(const void *a, const void *b)
{
    const order_t *x = a, *y = b;
    if (x->tagged != y->tagged) return x->tagged ? -1 : 1;
    if (x->tagged && x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

typedef struct {
    sg_node_id_t from, to;
    uint32_t k; /* in edges[] */
} eorder_t;

static int eorder_cmp(const void *a, const void *b)
{
    const eorder_t *x = a, *y = b;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

int sg_assemble(sg_graph_t *g, const sg_capture_record_t *rec, const sg_asm_node_t *nodes,
                uint32_t n_nodes, const sg_asm_edge_t *edges, uint32_t n_edges, sg_node_id_t *ids,
                sg_asm_report_t *rep)
{
    memset(rep, 0, sizeof *rep);
    int rc = SG_ENOMEM;
    hix_t *hix = malloc((n_nodes ? n_nodes : 1) * sizeof *hix);
    order_t *ord = malloc((n_nodes ? n_nodes : 1) * sizeof *ord);
    uint32_t *stream_of = NULL, *event_of = NULL;
    eorder_t *eo = malloc((n_edges ? n_edges : 1) * sizeof *eo);
    if (!hix || !ord || !eo) goto out;
    rep->overflow = rec && rec->overflow;

    /* Tables first, in label order, so that in a root built from one record
     * stream sK is table entry K and event eK entry K. */
    if (rec) {
        stream_of = malloc((rec->n_streams ? rec->n_streams : 1) * sizeof *stream_of);
        event_of = malloc((rec->n_events ? rec->n_events : 1) * sizeof *event_of);
        if (!stream_of || !event_of) goto out;
        for (uint32_t i = 0; i < rec->n_streams; i++)
            if ((rc = sg_assemble_stream(g, rec, i, &stream_of[i]))) goto out;
        for (uint32_t i = 0; i < rec->n_events; i++)
            if ((rc = sg_assemble_event(g, rec->events[i], false, &event_of[i]))) goto out;
    }

    uint64_t max_seq = 0;
    for (uint32_t i = 0; i < n_nodes; i++) {
        hix[i].handle = nodes[i].handle;
        hix[i].index = i;
        const sg_tag_t *t = sg_book_find_tag(rec, nodes[i].handle);
        ord[i].index = i;
        ord[i].tagged = t != NULL;
        ord[i].seq = t ? t->seq : 0;
        if (t && t->seq + 1 > max_seq) max_seq = t->seq + 1;
    }
    qsort(hix, n_nodes, sizeof *hix, hix_cmp);
    qsort(ord, n_nodes, sizeof *ord, order_cmp);
    uint64_t explicit_seq = max_seq;
    for (uint32_t k = 0; k < n_nodes; k++) {
        uint32_t i = ord[k].index;
        const sg_tag_t *t = sg_book_find_tag(rec, nodes[i].handle);
        uint32_t stream = SG_STREAM_EXPLICIT;
        uint64_t seq;
        if (t && t->stream < rec->n_streams) {
            stream = stream_of[t->stream];
            seq = t->seq;
            rep->tagged++;
        } else {
            seq = explicit_seq++;
            rep->explicit_nodes++;
        }
        if ((rc = sg_graph_add_node(g, nodes[i].type, stream, seq, &ids[i]))) goto out;
        sg_graph_node(g, ids[i])->cuda_type = nodes[i].cuda_type;
    }
    if (rec) rep->tags_missing = rec->n_tags - rep->tagged;

    uint32_t m = 0;
    for (uint32_t k = 0; k < n_edges; k++) {
        uint32_t a = hix_find(hix, n_nodes, edges[k].from);
        uint32_t b = hix_find(hix, n_nodes, edges[k].to);
        if (a == SG_NONE || b == SG_NONE || a == b) {
            rep->dropped_edges++;
            continue;
        }
        eo[m].from = ids[a];
        eo[m].to = ids[b];
        eo[m].k = k;
        m++;
    }
    qsort(eo, m, sizeof *eo, eorder_cmp);
    for (uint32_t j = 0; j < m; j++) {
        const sg_asm_edge_t *e = &edges[eo[j].k];
        uint8_t kind;
        uint32_t ev;
        bool known = sg_book_edge_kind(rec, e->from, e->to, &kind, &ev);
        if (known)
            rep->explained++;
        else if (!sg_book_find_tag(rec, e->to))
            rep->explicit_edges++; /* into a node the program added itself */
        else
            rep->unexplained++;
        if (kind == SG_EDGE_EVENT) {
            if (ev < rec->n_events) {
                ev = event_of[ev];
            } else {
                kind = SG_EDGE_CONTROL;
                ev = SG_NONE;
            }
        }
        sg_edge_id_t eid;
        if ((rc = sg_graph_add_edge(g, eo[j].from, eo[j].to, (sg_edge_kind_t)kind, ev, &eid)))
            goto out;
        sg_edge_t *ed = sg_graph_edge(g, eid);
        ed->from_port = e->from_port;
        ed->to_port = e->to_port;
        ed->cuda_type = e->type;
    }

    /* Predicted edges (a tagged node's recorded predecessors that are still
     * in the graph) that the graph does not have. */
    if (rec) {
        for (uint32_t i = 0; i < n_nodes; i++) {
            const sg_tag_t *t = sg_book_find_tag(rec, nodes[i].handle);
            if (!t) continue;
            for (uint32_t p = 0; p < t->n_preds; p++) {
                uint32_t a = hix_find(hix, n_nodes, t->preds[p].node);
                if (a == SG_NONE) {
                    rep->predicted_missing++;
                    continue;
                }
                if (sg_graph_find_edge(g, ids[a], ids[i]) == SG_NONE) rep->predicted_missing++;
            }
        }
    }
    rc = SG_OK;
out:
    free(hix);
    free(ord);
    free(eo);
    free(stream_of);
    free(event_of);
    return rc;
}

bool sg_asm_report_ok(const sg_asm_report_t *rep, bool captured)
{
    if (rep->dropped_edges) return false;
    if (!captured) return true;
    return rep->unexplained == 0 && rep->predicted_missing == 0 && rep->tags_missing == 0 &&
           !rep->overflow;
}

void sg_asm_report_note(const sg_asm_report_t *rep, bool captured, char *buf, size_t n)
{
    if (n == 0) return;
    buf[0] = '\0';
    if (sg_asm_report_ok(rep, captured)) {
        if (!captured) snprintf(buf, n, "built explicitly: no capture to compare with");
        return;
    }
    snprintf(buf, n,
             "capture explains %u of %u %s into captured nodes: %u unexplained, %u predicted "
             "missing, %llu captured %s gone, %u explicit %s, %u %s dropped%s",
             rep->explained, rep->explained + rep->unexplained,
             sg_plural(rep->explained + rep->unexplained, "edge", "edges"), rep->unexplained,
             rep->predicted_missing, (unsigned long long)rep->tags_missing,
             sg_plural(rep->tags_missing, "node", "nodes"), rep->explicit_nodes,
             sg_plural(rep->explicit_nodes, "node", "nodes"), rep->dropped_edges,
             sg_plural(rep->dropped_edges, "edge", "edges"),
             rep->overflow ? ", tagging stopped at its bound" : "");
}
