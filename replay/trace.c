/* trace.c: a replay as Chrome/Perfetto trace JSON ("Trace Event Format"):
 * one track per captured stream, so what ran concurrently is visible. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static const char *stream_label(const sg_graph_t *g, uint32_t s)
{
    const sg_stream_t *st = s == SG_STREAM_EXPLICIT ? NULL : sg_graph_stream(g, s);
    return st ? st->label : "explicit";
}

/* tid: stream index + 1 (Perfetto treats tid 0 specially), the explicit
 * lane after every stream. */
static uint32_t tid_of(const sg_graph_t *g, uint32_t s)
{
    return (s == SG_STREAM_EXPLICIT || s >= g->n_streams) ? g->n_streams + 1 : s + 1;
}

static json_t *meta(const char *what, uint32_t tid, json_t *args)
{
    json_t *o = json_pack("{s:s, s:s, s:i}", "name", what, "ph", "M", "pid", 1);
    if (tid) json_object_set_new(o, "tid", json_integer(tid));
    json_object_set_new(o, "args", args);
    return o;
}

int sg_trace_write(const sg_graph_t *g, const sg_trace_event_t *ev, uint32_t n, FILE *f)
{
    uint64_t t0 = UINT64_MAX;
    bool explicit_used = false;
    for (uint32_t i = 0; i < n; i++) {
        if (ev[i].start_ns < t0) t0 = ev[i].start_ns;
        if (tid_of(g, ev[i].stream) == g->n_streams + 1) explicit_used = true;
    }
    if (t0 == UINT64_MAX) t0 = 0;
    json_t *root = json_object();
    json_t *events = json_array();
    if (!root || !events) {
        json_decref(root);
        json_decref(events);
        return SG_ENOMEM;
    }
    char title[256];
    snprintf(title, sizeof title, "sgcap replay: %s graph #%u", g->program ? g->program : "?",
             g->sequence);
    json_array_append_new(events, meta("process_name", 0, json_pack("{s:s}", "name", title)));
    for (uint32_t s = 0; s <= g->n_streams; s++) {
        if (s == g->n_streams && !explicit_used) break;
        uint32_t tid = s + 1;
        const char *label = s < g->n_streams ? g->streams[s].label : "explicit";
        json_array_append_new(events, meta("thread_name", tid, json_pack("{s:s}", "name", label)));
        json_array_append_new(events,
                              meta("thread_sort_index", tid, json_pack("{s:i}", "sort_index", s)));
    }
    for (uint32_t i = 0; i < n; i++) {
        const sg_trace_event_t *e = &ev[i];
        uint64_t end = e->end_ns > e->start_ns ? e->end_ns : e->start_ns;
        json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f}", "name", e->name, "cat",
                              sg_node_type_name(e->type), "ph", "X", "pid", 1, "tid",
                              (int)tid_of(g, e->stream), "ts", (double)(e->start_ns - t0) / 1000.0,
                              "dur", (double)(end - e->start_ns) / 1000.0);
        if (!o) continue;
        json_object_set_new(o, "args",
                            json_pack("{s:s, s:s, s:s}", "node", e->node, "type",
                                      sg_node_type_name(e->type), "stream",
                                      stream_label(g, e->stream)));
        json_array_append_new(events, o);
    }
    json_object_set_new(root, "traceEvents", events);
    json_object_set_new(root, "displayTimeUnit", json_string("ns"));
    int rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0 || fputc('\n', f) == EOF || ferror(f)) return SG_EIO;
    return SG_OK;
}
