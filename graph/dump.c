/* dump.c: the canonical text dump of a graph.
 *
 * Golden tests compare it byte for byte and people read it in review diffs,
 * so it is deterministic (tables by index, nodes by id, edges sorted by
 * their endpoints, never by edge id or insertion order), one fact per line,
 * and leaves out what only means something inside the captured process
 * (stream/event/function handles, host callbacks, pid, capture id, GPU
 * UUID). Addresses stay: buffers, copies and pointer parameters are tied
 * together by them, and a bundle round trip must reproduce them exactly.
 * Every value a bundle round trip must keep is printed, so that equal dumps
 * mean equal graphs up to those process-local details.
 */
#include "views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Body graphs nest through node ownership, so depth is finite, but a graph
 * built in memory is not bounded by the bundle reader's limit. */
#define SG_DUMP_MAX_DEPTH 64

/* ---- words and references ------------------------------------------------ */

static bool word_is_plain(const char *s)
{
    if (!*s) return false;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-' || c == ':' || c == '/' || c == '+' ||
                  c == '@' || c == '#' || c == '$';
        if (!ok) return false;
    }
    return true;
}

/* A word as-is when it cannot be mistaken for punctuation of the dump, else
 * quoted with C escapes, so that every item stays on one line whatever a
 * bundle holds. NULL prints as "-". */
static void put_word(FILE *f, const char *s)
{
    if (!s) {
        fputc('-', f);
        return;
    }
    if (word_is_plain(s)) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (*p < 0x20 || *p >= 0x7f)
                fprintf(f, "\\x%02x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void put_stream(FILE *f, const sg_graph_t *g, uint32_t stream)
{
    const sg_stream_t *s = sg_graph_stream(g, stream);
    if (stream == SG_STREAM_EXPLICIT)
        fputs("explicit", f);
    else if (s)
        put_word(f, s->label);
    else
        fprintf(f, "stream#%" PRIu32, stream);
}

static void put_event(FILE *f, const sg_graph_t *g, uint32_t event)
{
    const sg_event_t *e = sg_graph_event(g, event);
    if (event == SG_NONE)
        fputs("-", f);
    else if (e)
        put_word(f, e->label);
    else
        fprintf(f, "event#%" PRIu32, event);
}

static void put_buffer(FILE *f, const sg_graph_t *g, uint32_t buffer)
{
    const sg_buffer_t *b = sg_graph_buffer(g, buffer);
    if (buffer == SG_NONE)
        fputs("-", f);
    else if (b)
        put_word(f, b->label);
    else
        fprintf(f, "buffer#%" PRIu32, buffer);
}

/* Address -> buffer lookup for the whole dump: buffers sorted by start
 * address, with the running maximum of their ends, so that a lookup costs
 * O(log buffers) when buffers do not overlap (sg_graph_find_buffer is
 * O(buffers), and a dump asks once per pointer parameter). The answer is the
 * same as sg_graph_find_buffer's: the lowest-numbered buffer holding addr. */
typedef struct {
    const sg_graph_t *root;
    uint32_t *order;  /* buffer ids by (address, id); NULL: fall back */
    uint64_t *maxend; /* max(address + size) over order[0..i], saturating */
    uint32_t n;
} addr_index_t;

static int cmp_buffer_start(const void *pa, const void *pb)
{
    /* (address, id) pairs: qsort has no context argument to reach the table */
    const uint64_t *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

static void index_build(addr_index_t *ix, const sg_graph_t *root)
{
    memset(ix, 0, sizeof *ix);
    ix->root = root;
    uint32_t n = root->n_buffers;
    if (n == 0) return;
    uint64_t *pairs = malloc((size_t)n * 2 * sizeof *pairs);
    ix->order = malloc((size_t)n * sizeof *ix->order);
    ix->maxend = malloc((size_t)n * sizeof *ix->maxend);
    if (!pairs || !ix->order || !ix->maxend) {
        free(pairs);
        free(ix->order);
        free(ix->maxend);
        ix->order = NULL;
        ix->maxend = NULL;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        pairs[2 * i] = root->buffers[i].address;
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_buffer_start);
    uint64_t maxend = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sg_buffer_t *b = &root->buffers[pairs[2 * i + 1]];
        uint64_t end = b->address + b->size < b->address ? UINT64_MAX : b->address + b->size;
        if (end > maxend) maxend = end;
        ix->order[i] = (uint32_t)pairs[2 * i + 1];
        ix->maxend[i] = maxend;
    }
    ix->n = n;
    free(pairs);
}

static void index_free(addr_index_t *ix)
{
    free(ix->order);
    free(ix->maxend);
}

static uint32_t index_find(const addr_index_t *ix, uint64_t addr)
{
    if (!ix->order) return sg_graph_find_buffer(ix->root, addr);
    /* last position whose start <= addr */
    uint32_t lo = 0, hi = ix->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->root->buffers[ix->order[mid]].address <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t best = SG_NONE;
    /* walk back while some earlier buffer may still reach addr */
    for (uint32_t i = lo; i-- > 0 && ix->maxend[i] > addr;) {
        const sg_buffer_t *b = &ix->root->buffers[ix->order[i]];
        if (addr - b->address < b->size && ix->order[i] < best) best = ix->order[i];
    }
    return best;
}

/* " (b3+0x40)" when addr falls inside a buffer: lets a reader check that a
 * pointer parameter or a copy points where the accesses say it does. */
static void put_addr_owner(FILE *f, const addr_index_t *ix, uint64_t addr)
{
    uint32_t b = index_find(ix, addr);
    if (b == SG_NONE) return;
    fputs(" (", f);
    put_buffer(f, ix->root, b);
    fprintf(f, "+0x%" PRIx64 ")", addr - sg_graph_buffer(ix->root, b)->address);
}

static void put_indent(FILE *f, int indent)
{
    fprintf(f, "%*s", indent, "");
}

static void put_dims(FILE *f, const uint32_t d[3])
{
    fprintf(f, "%" PRIu32 ",%" PRIu32 ",%" PRIu32, d[0], d[1], d[2]);
}

/* ---- tables ---------------------------------------------------------------- */

static void put_arch_list(FILE *f, const char *key, const uint32_t *archs, uint32_t n)
{
    fprintf(f, " %s=", key);
    if (n == 0) fputc('-', f);
    for (uint32_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu32, i ? "," : "", archs[i]);
}

static void dump_tables(const sg_graph_t *g, FILE *f)
{
    fprintf(f, "\nstreams (%" PRIu32 ")\n", g->n_streams);
    for (uint32_t i = 0; i < g->n_streams; i++) {
        const sg_stream_t *s = &g->streams[i];
        fputs("  ", f);
        put_word(f, s->label);
        fprintf(f, "  id=%" PRIu32 " priority=%" PRId32 " flags=0x%" PRIx32 "%s\n", i, s->priority,
                s->flags, s->per_thread ? " per_thread" : "");
    }
    fprintf(f, "\nevents (%" PRIu32 ")\n", g->n_events);
    for (uint32_t i = 0; i < g->n_events; i++) {
        const sg_event_t *e = &g->events[i];
        fputs("  ", f);
        put_word(f, e->label);
        fprintf(f, "  id=%" PRIu32 " flags=0x%" PRIx32 "%s\n", i, e->flags,
                e->external ? " external" : "");
    }
    fprintf(f, "\nbuffers (%" PRIu32 ")\n", g->n_buffers);
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        fputs("  ", f);
        put_word(f, b->label);
        fprintf(f, "  id=%" PRIu32 " %s 0x%" PRIx64 " size=%" PRIu64, i, sg_buffer_kind_name(b->kind),
                b->address, b->size);
        if (b->alloc_node != SG_NONE) fprintf(f, " alloc=n%" PRIu32, b->alloc_node);
        if (b->before_file) {
            fputs(" before=", f);
            put_word(f, b->before_file);
        }
        if (b->after_file) {
            fputs(" after=", f);
            put_word(f, b->after_file);
        }
        if (b->snapshot_bytes) fprintf(f, " snapshot_bytes=%" PRIu64, b->snapshot_bytes);
        if (b->snapshot_note) {
            fputs(" snapshot_note=", f);
            put_word(f, b->snapshot_note);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nimages (%" PRIu32 ")\n", g->n_images);
    for (uint32_t i = 0; i < g->n_images; i++) {
        const sg_image_t *im = &g->images[i];
        fprintf(f, "  img%" PRIu32 "  %s ", i, sg_image_kind_name(im->kind));
        put_word(f, im->hash);
        fprintf(f, " size=%" PRIu64, im->size);
        if (im->file) {
            fputs(" file=", f);
            put_word(f, im->file);
        }
        put_arch_list(f, "ptx", im->ptx_archs, im->n_ptx_archs);
        put_arch_list(f, "sass", im->sass_archs, im->n_sass_archs);
        if (im->options) {
            fputs(" options=", f);
            put_word(f, im->options);
        }
        if (im->note) {
            fputs(" note=", f);
            put_word(f, im->note);
        }
        if (im->source_image != SG_NONE) fprintf(f, " source=img%" PRIu32, im->source_image);
        if (im->ptx_image != SG_NONE) fprintf(f, " ptx=img%" PRIu32, im->ptx_image);
        fputc('\n', f);
    }
}

/* ---- nodes ----------------------------------------------------------------- */

static void put_hex_bytes(FILE *f, const uint8_t *p, uint64_t n, int cont_indent)
{
    for (uint64_t i = 0; i < n; i++) {
        if (i && i % 16 == 0) {
            fputc('\n', f);
            put_indent(f, cont_indent);
        } else if (i) {
            fputc(' ', f);
        }
        fprintf(f, "%02x", p[i]);
    }
}

/* One row of the parameter table: "[i]  +off   size  hex bytes", with
 * continuation rows lined up under the first byte. */
static void put_param_row(FILE *f, int ind, const char *tag, uint32_t off, uint32_t size,
                          const uint8_t *bytes)
{
    char o[16], z[16];
    snprintf(o, sizeof o, "+%" PRIu32, off);
    snprintf(z, sizeof z, "%" PRIu32, size);
    put_indent(f, ind);
    int w = fprintf(f, "%-5s %-6s %-4s ", tag, o, z);
    put_hex_bytes(f, bytes, size, ind + (w > 0 ? w : 0));
}

static void put_pointer_owner(FILE *f, const addr_index_t *ix, const uint8_t *p)
{
    uint64_t v = 0;
    for (int b = 7; b >= 0; b--)
        v = v << 8 | p[b];
    uint32_t buf = index_find(ix, v);
    if (buf == SG_NONE) return;
    fputs("  -> ", f);
    put_buffer(f, ix->root, buf);
    fprintf(f, "+0x%" PRIx64, v - sg_graph_buffer(ix->root, buf)->address);
}

/* Bytes no parameter covers (alignment padding, or all of them when the
 * layout is unknown) are part of the argument buffer that replay submits,
 * so they are shown too, as "pad" rows placed before the first parameter
 * that lies beyond them. */
static void put_pad_rows(FILE *f, int ind, const uint8_t *covered, const uint8_t *bytes,
                         uint32_t *pos, uint32_t limit)
{
    while (*pos < limit) {
        if (covered[*pos]) {
            (*pos)++;
            continue;
        }
        uint32_t e = *pos;
        while (e < limit && !covered[e])
            e++;
        put_param_row(f, ind, "pad", *pos, e - *pos, bytes + *pos);
        fputc('\n', f);
        *pos = e;
    }
}

static void dump_params(const addr_index_t *ix, const sg_kernel_t *k, FILE *f, int ind)
{
    put_indent(f, ind);
    fprintf(f, "params   %" PRIu32 " (%" PRIu32 " bytes)\n", k->n_params, k->params_size);
    uint8_t *covered = NULL;
    if (k->params_size && k->param_bytes) {
        covered = calloc(k->params_size, 1);
        if (!covered) return; /* short output, but the stream itself is fine */
        for (uint32_t i = 0; i < k->n_params; i++) {
            uint64_t off = k->param_offsets[i], end = off + k->param_sizes[i];
            for (uint64_t b = off; b < end && b < k->params_size; b++)
                covered[b] = 1;
        }
    }
    uint32_t pos = 0; /* padding before this offset has been shown */
    for (uint32_t i = 0; i < k->n_params; i++) {
        uint32_t off = k->param_offsets[i], size = k->param_sizes[i];
        char tag[16];
        snprintf(tag, sizeof tag, "[%" PRIu32 "]", i);
        if (!covered || (uint64_t)off + size > k->params_size) {
            put_indent(f, ind + 2);
            fprintf(f, "%-5s +%" PRIu32 " %" PRIu32 " (outside the argument buffer)\n", tag, off,
                    size);
            continue;
        }
        put_pad_rows(f, ind + 2, covered, k->param_bytes, &pos, off);
        put_param_row(f, ind + 2, tag, off, size, k->param_bytes + off);
        if (size == 8) put_pointer_owner(f, ix, k->param_bytes + off);
        fputc('\n', f);
    }
    if (covered) put_pad_rows(f, ind + 2, covered, k->param_bytes, &pos, k->params_size);
    free(covered);
}

static void dump_kernel(const addr_index_t *ix, const sg_kernel_t *k, FILE *f, int ind)
{
    char shortname[256];
    put_indent(f, ind);
    fputs("kernel   ", f);
    put_word(f, k->name);
    fputs("  ", f);
    put_word(f, sg_kernel_short_name(k->name, shortname, sizeof shortname));
    if (k->image != SG_NONE) fprintf(f, "  image=img%" PRIu32, k->image);
    fputc('\n', f);
    put_indent(f, ind);
    fputs("launch   grid=", f);
    put_dims(f, k->grid);
    fputs(" block=", f);
    put_dims(f, k->block);
    if (k->cluster[0] || k->cluster[1] || k->cluster[2]) {
        fputs(" cluster=", f);
        put_dims(f, k->cluster);
    }
    fprintf(f, " smem=%" PRIu32 "\n", k->shared_bytes);
    if (k->priority || k->cooperative || k->has_extra) {
        put_indent(f, ind);
        fputs("attrs   ", f);
        if (k->priority) fprintf(f, " priority=%" PRId32, k->priority);
        if (k->cooperative) fputs(" cooperative", f);
        if (k->has_extra) fputs(" extra", f);
        fputc('\n', f);
    }
    dump_params(ix, k, f, ind);
}

static void dump_graph_body(const addr_index_t *ix, const sg_graph_t *g, FILE *f, int ind,
                            int depth);

static void dump_node(const addr_index_t *ix, const sg_graph_t *g, const sg_node_t *n, FILE *f,
                      int ind, int depth)
{
    put_indent(f, ind);
    fprintf(f, "n%" PRIu32 "  %s  ", n->id, sg_node_type_name(n->type));
    put_stream(f, g, n->stream);
    fprintf(f, "  seq=%" PRIu64 " cuda=%" PRIu32, n->seq, n->cuda_type);
    if (n->synthesized) fputs(" synthesized", f);
    if (n->duration_ns >= 0) fprintf(f, " duration=%.3fns", n->duration_ns);
    fputc('\n', f);
    int ind2 = ind + 4;
    if (n->label) {
        put_indent(f, ind2);
        fputs("label    ", f);
        put_word(f, n->label);
        fputc('\n', f);
    }
    switch (n->type) {
    case SG_NODE_KERNEL:
        dump_kernel(ix, &n->u.kernel, f, ind2);
        break;
    case SG_NODE_MEMCPY: {
        const sg_memcpy_t *c = &n->u.memcpy;
        put_indent(f, ind2);
        fprintf(f, "copy     %s dst=0x%" PRIx64, sg_copy_kind_name(c->kind), c->dst);
        put_addr_owner(f, ix, c->dst);
        fprintf(f, " src=0x%" PRIx64, c->src);
        put_addr_owner(f, ix, c->src);
        fputc('\n', f);
        put_indent(f, ind2);
        fprintf(f,
                "shape    width=%" PRIu64 " height=%" PRIu64 " depth=%" PRIu64 " dst_pitch=%" PRIu64
                " src_pitch=%" PRIu64 "\n",
                c->width, c->height, c->depth, c->dst_pitch, c->src_pitch);
        break;
    }
    case SG_NODE_MEMSET: {
        const sg_memset_t *s = &n->u.memset;
        put_indent(f, ind2);
        fprintf(f, "set      dst=0x%" PRIx64, s->dst);
        put_addr_owner(f, ix, s->dst);
        fprintf(f,
                " value=0x%" PRIx32 " element=%" PRIu32 " width=%" PRIu64 " height=%" PRIu64
                " pitch=%" PRIu64 "\n",
                s->value, s->element_size, s->width, s->height, s->pitch);
        break;
    }
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        put_indent(f, ind2);
        fputs("event    ", f);
        put_event(f, g, n->u.event);
        fputc('\n', f);
        break;
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE:
        put_indent(f, ind2);
        fputs("buffer   ", f);
        put_buffer(f, g, n->u.mem.buffer);
        fprintf(f, " address=0x%" PRIx64, n->u.mem.address);
        if (n->type == SG_NODE_MEM_ALLOC || n->u.mem.bytes)
            fprintf(f, " bytes=%" PRIu64, n->u.mem.bytes);
        fputc('\n', f);
        break;
    case SG_NODE_CHILD_GRAPH:
        put_indent(f, ind2);
        if (!n->u.child) {
            fputs("body     (none)\n", f);
        } else {
            fprintf(f, "body     (%" PRIu32 " nodes, %" PRIu32 " edges)\n",
                    sg_graph_node_count(n->u.child), sg_graph_edge_count(n->u.child));
            dump_graph_body(ix, n->u.child, f, ind2 + 2, depth + 1);
        }
        break;
    case SG_NODE_CONDITIONAL: {
        const sg_conditional_t *c = &n->u.cond;
        put_indent(f, ind2);
        fprintf(f, "cond     %s default=%" PRIu32 " bodies=%" PRIu32 "\n", sg_cond_type_name(c->type),
                c->default_value, c->n_bodies);
        for (uint32_t i = 0; i < c->n_bodies; i++) {
            put_indent(f, ind2);
            if (!c->bodies[i]) {
                fprintf(f, "body %" PRIu32 "   (none)\n", i);
                continue;
            }
            fprintf(f, "body %" PRIu32 "   (%" PRIu32 " nodes, %" PRIu32 " edges)\n", i,
                    sg_graph_node_count(c->bodies[i]), sg_graph_edge_count(c->bodies[i]));
            dump_graph_body(ix, c->bodies[i], f, ind2 + 2, depth + 1);
        }
        break;
    }
    case SG_NODE_OPAQUE:
        put_indent(f, ind2);
        fputs("note     ", f);
        put_word(f, n->u.opaque_note);
        fputc('\n', f);
        break;
    default: /* host (its function pointer is process-local), empty */
        break;
    }
    if (n->type == SG_NODE_KERNEL && n->u.kernel.facts.source != SG_FACTS_NONE) {
        /* what the access pass found: the sites' statuses, the pointer words */
        const sg_facts_t *fa = &n->u.kernel.facts;
        uint32_t by[SG_SITE_STATUS_COUNT] = {0};
        for (uint32_t i = 0; i < fa->n_sites; i++)
            if (fa->sites[i].status < SG_SITE_STATUS_COUNT) by[fa->sites[i].status]++;
        put_indent(f, ind2);
        fprintf(f, "facts    %s%s%s sites=%u (known %u, never %u, unknown %u) pointers=",
                sg_facts_source_name(fa->source), fa->all_known ? " all_known" : "",
                fa->complete ? " complete" : "", fa->n_sites, by[SG_SITE_KNOWN], by[SG_SITE_NEVER],
                by[SG_SITE_UNKNOWN]);
        for (uint32_t i = 0; i < fa->n_pointers; i++) fprintf(f, "%s%u", i ? "," : "", fa->pointers[i]);
        if (!fa->n_pointers) fputc('-', f);
        fputc('\n', f);
    }
    for (uint32_t i = 0; i < n->n_accesses; i++) {
        const sg_access_t *a = &n->accesses[i];
        put_indent(f, ind2);
        fputs("access   ", f);
        put_buffer(f, g, a->buffer);
        fprintf(f, " %s offset=%" PRIu64 " size=%" PRIu64, sg_access_mode_name(a->mode), a->offset,
                a->size);
        if (a->range != SG_RANGE_GUESS) fprintf(f, " range=%s", sg_range_kind_name(a->range));
        fputc('\n', f);
    }
}

/* ---- edges ----------------------------------------------------------------- */

static int cmp_edge(const void *pa, const void *pb)
{
    const sg_edge_t *a = *(const sg_edge_t *const *)pa, *b = *(const sg_edge_t *const *)pb;
#define SG_CMP_FIELD(x)                                                                            \
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    SG_CMP_FIELD(from)
    SG_CMP_FIELD(to)
    SG_CMP_FIELD(kind)
    SG_CMP_FIELD(event)
    SG_CMP_FIELD(from_port)
    SG_CMP_FIELD(to_port)
    SG_CMP_FIELD(cuda_type)
#undef SG_CMP_FIELD
    return 0;
}

static void dump_edges(const sg_graph_t *g, FILE *f, int ind)
{
    uint32_t live = sg_graph_edge_count(g);
    put_indent(f, ind);
    fprintf(f, "edges (%" PRIu32 ")\n", live);
    if (!live) return;
    const sg_edge_t **sorted = malloc(live * sizeof *sorted);
    if (!sorted) {
        put_indent(f, ind + 2);
        fputs("(out of memory)\n", f);
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_edges && k < live; i++)
        if (!g->edges[i].removed) sorted[k++] = &g->edges[i];
    qsort(sorted, k, sizeof *sorted, cmp_edge);
    for (uint32_t i = 0; i < k; i++) {
        const sg_edge_t *e = sorted[i];
        put_indent(f, ind + 2);
        fprintf(f, "n%" PRIu32 " -> n%" PRIu32 "  %s", e->from, e->to, sg_edge_kind_name(e->kind));
        if (e->kind == SG_EDGE_EVENT || e->event != SG_NONE) {
            fputc(' ', f);
            put_event(f, g, e->event);
        }
        if (e->from_port || e->to_port)
            fprintf(f, "  ports=%u->%u", (unsigned)e->from_port, (unsigned)e->to_port);
        if (e->cuda_type) fprintf(f, "  cuda_type=%u", (unsigned)e->cuda_type);
        fputc('\n', f);
    }
    free(sorted);
}

static void dump_graph_body(const addr_index_t *ix, const sg_graph_t *g, FILE *f, int ind,
                            int depth)
{
    if (depth > SG_DUMP_MAX_DEPTH) {
        put_indent(f, ind);
        fputs("(body nesting too deep)\n", f);
        return;
    }
    put_indent(f, ind);
    fprintf(f, "nodes (%" PRIu32 ")\n", sg_graph_node_count(g));
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].removed) dump_node(ix, g, &g->nodes[i], f, ind + 2, depth);
    if (depth == 0) fputc('\n', f);
    dump_edges(g, f, ind);
}

/* ---- header ---------------------------------------------------------------- */

static void dump_header(const sg_graph_t *g, FILE *f)
{
    fputs("sgcap dump 1\n", f);
    fputs("program     ", f);
    put_word(f, g->program);
    fputs("\ncapture     mode=", f);
    put_word(f, g->capture_mode);
    fprintf(f, " sequence=%" PRIu32, g->sequence);
    if (g->rank >= 0) fprintf(f, " rank=%" PRId32, g->rank); /* only when known: old dumps stay */
    fputc('\n', f);
    const sg_device_t *d = &g->device;
    fputs("device      ", f);
    put_word(f, d->name);
    fprintf(f, " cc=%d.%d sms=%" PRIu32 " memory=%" PRIu64 " driver=%d bandwidth=%.3fGB/s",
            d->cc_major, d->cc_minor, d->sm_count, d->total_memory, d->driver_version,
            d->mem_bandwidth_gbs);
    if (d->ordinal >= 0) fprintf(f, " ordinal=%" PRId32, d->ordinal);
    fputc('\n', f);
    if (g->crosscheck_done || g->crosscheck_note) {
        fprintf(f, "crosscheck  %s cuda_nodes=%" PRIu32 " cuda_edges=%" PRIu32,
                !g->crosscheck_done ? "not-done"
                : g->crosscheck_ok  ? "ok"
                                    : "MISMATCH",
                g->cuda_node_count, g->cuda_edge_count);
        if (g->crosscheck_note) {
            fputc(' ', f);
            put_word(f, g->crosscheck_note);
        }
        fputc('\n', f);
    }
}

static void dump_pass_log(const sg_graph_t *g, FILE *f)
{
    fprintf(f, "\npass log (%" PRIu32 ")\n", g->n_pass_log);
    for (uint32_t i = 0; i < g->n_pass_log; i++) {
        fprintf(f, "  [%" PRIu32 "] ", i);
        put_word(f, g->pass_log[i].pass);
        fputc(' ', f);
        put_word(f, g->pass_log[i].summary);
        fputc('\n', f);
    }
}

int sg_dump(const sg_graph_t *g, FILE *f)
{
    if (!g || !f) return SG_EINVAL;
    const sg_graph_t *root = g->root ? g->root : g;
    if (root == g) {
        dump_header(g, f);
        dump_tables(g, f);
        fputc('\n', f);
    }
    addr_index_t ix;
    index_build(&ix, root);
    dump_graph_body(&ix, g, f, 0, 0);
    index_free(&ix);
    if (root == g) dump_pass_log(g, f);
    return ferror(f) ? SG_EIO : SG_OK;
}

int sg_dump_string(const sg_graph_t *g, char **out)
{
    if (!g || !out) return SG_EINVAL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return SG_ENOMEM;
    int rc = sg_dump(g, f);
    if (fclose(f) != 0 && rc == SG_OK) rc = SG_ENOMEM;
    if (rc != SG_OK) {
        free(buf);
        return rc == SG_EIO ? SG_ENOMEM : rc;
    }
    *out = buf;
    return SG_OK;
}
