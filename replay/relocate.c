/* relocate.c: where recorded buffers go (regions) and, when they cannot go
 * back to their recorded addresses, the relocation of the pointers the
 * graph holds: kernel parameter words, memcpy/memset/free addresses and
 * conditional handles. For a kernel whose access facts are complete
 * (graph.h sg_facts_t) exactly the parameter words its code uses as
 * addresses; for the others a heuristic (docs/REPLAY.md §4): a 64-bit
 * integer that happens to equal an address is rewritten too, and pointers
 * stored in device memory are never seen. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph/text.h"
#include "replay.h"
#include "graph/plural.h"

/* ---- regions ----------------------------------------------------------------- */

typedef struct {
    uint64_t base, end;
    bool host, pageable;
} span_t;

static int cmp_span(const void *pa, const void *pb)
{
    const span_t *a = pa, *b = pb;
    if (a->host != b->host) return a->host ? 1 : -1;
    return (a->base > b->base) - (a->base < b->base);
}

static bool in_region(sg_buffer_kind_t k)
{
    return k != SG_BUFFER_GRAPH_ALLOC;
}

int sg_replay_plan_regions(const sg_graph_t *g, uint64_t device_granularity, uint64_t host_page,
                           sg_region_t **out, uint32_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!device_granularity || (device_granularity & (device_granularity - 1)) || !host_page ||
        (host_page & (host_page - 1)))
        return SG_EINVAL;
    span_t *s = calloc(g->n_buffers + 1, sizeof *s);
    if (!s) return SG_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        if (!in_region(b->kind) || b->size == 0) continue;
        bool host = sg_buffer_kind_is_host(b->kind);
        uint64_t gran = host ? host_page : device_granularity;
        uint64_t end = b->address + b->size;
        if (end < b->address || end + gran - 1 < end) {
            free(s);
            return SG_EINVAL;
        }
        s[n].base = b->address & ~(gran - 1);
        s[n].end = (end + gran - 1) & ~(gran - 1);
        s[n].host = host;
        s[n].pageable = b->kind == SG_BUFFER_HOST_PAGEABLE;
        n++;
    }
    qsort(s, n, sizeof *s, cmp_span);
    sg_region_t *r = calloc(n + 1, sizeof *r);
    if (!r) {
        free(s);
        return SG_ENOMEM;
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* merge spans that overlap or touch: one reservation covers both */
        if (m && r[m - 1].host == s[i].host && r[m - 1].pageable == s[i].pageable &&
            s[i].base <= r[m - 1].base + r[m - 1].size) {
            uint64_t end = r[m - 1].base + r[m - 1].size;
            if (s[i].end > end) r[m - 1].size = s[i].end - r[m - 1].base;
            continue;
        }
        r[m].base = s[i].base;
        r[m].size = s[i].end - s[i].base;
        r[m].host = s[i].host;
        r[m].pageable = s[i].pageable;
        m++;
    }
    free(s);
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        if (!in_region(b->kind) || b->size == 0) continue;
        uint32_t k = sg_region_find(r, m, b->address, b->size, sg_buffer_kind_is_host(b->kind));
        if (k != SG_NONE) r[k].n_buffers++;
    }
    *out = r;
    *n_out = m;
    return SG_OK;
}

uint32_t sg_region_find(const sg_region_t *r, uint32_t n, uint64_t addr, uint64_t size, bool host)
{
    for (uint32_t i = 0; i < n; i++) {
        if (r[i].host != host) continue;
        if (addr >= r[i].base && addr - r[i].base <= r[i].size && size <= r[i].size &&
            addr - r[i].base + size <= r[i].size)
            return i;
    }
    return SG_NONE;
}

/* ---- the map ------------------------------------------------------------------ */

void sg_reloc_map_init(sg_reloc_map_t *m)
{
    memset(m, 0, sizeof *m);
}

void sg_reloc_map_free(sg_reloc_map_t *m)
{
    free(m->ranges);
    free(m->handles);
    memset(m, 0, sizeof *m);
}

int sg_reloc_map_add(sg_reloc_map_t *m, uint32_t buffer, uint64_t old_base, uint64_t size,
                     uint64_t new_base)
{
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->ranges[i].buffer == buffer) {
            m->ranges[i] = (sg_reloc_range_t){old_base, size, new_base, buffer};
            m->sorted = false;
            return SG_OK;
        }
    }
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? 2 * m->cap : 16;
        sg_reloc_range_t *r = realloc(m->ranges, cap * sizeof *r);
        if (!r) return SG_ENOMEM;
        m->ranges = r;
        m->cap = cap;
    }
    m->ranges[m->n++] = (sg_reloc_range_t){old_base, size, new_base, buffer};
    m->sorted = false;
    return SG_OK;
}

int sg_reloc_map_add_handle(sg_reloc_map_t *m, uint64_t old_value, uint64_t new_value)
{
    if (m->n_handles == m->cap_handles) {
        uint32_t cap = m->cap_handles ? 2 * m->cap_handles : 8;
        uint64_t(*h)[2] = realloc(m->handles, cap * sizeof *h);
        if (!h) return SG_ENOMEM;
        m->handles = h;
        m->cap_handles = cap;
    }
    m->handles[m->n_handles][0] = old_value;
    m->handles[m->n_handles][1] = new_value;
    m->n_handles++;
    return SG_OK;
}

static int cmp_range(const void *pa, const void *pb)
{
    const sg_reloc_range_t *a = pa, *b = pb;
    if (a->old_base != b->old_base)
        return (a->old_base > b->old_base) - (a->old_base < b->old_base);
    /* same start: the larger first, so the walk down in translate meets
     * the inner (smaller) one first */
    return (a->size < b->size) - (a->size > b->size);
}

/* Last range whose old_base <= addr, by binary search. */
static int64_t last_at_or_below(const sg_reloc_map_t *m, uint64_t addr)
{
    int64_t lo = 0, hi = (int64_t)m->n - 1, best = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (m->ranges[mid].old_base <= addr) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

bool sg_reloc_translate(sg_reloc_map_t *m, uint64_t addr, uint64_t *out, uint32_t *buffer,
                        bool *one_past_end)
{
    if (!m->sorted) {
        qsort(m->ranges, m->n, sizeof *m->ranges, cmp_range);
        m->sorted = true;
    }
    const sg_reloc_range_t *hit = NULL, *end_hit = NULL;
    /* Walk down from the last range starting at or below addr: ranges may
     * nest (a sub-buffer recorded inside its allocation), so the holder is
     * the nearest one below addr that still reaches it. The walk is bounded:
     * nesting is rare and shallow, and an address that lies in no buffer
     * must not cost a scan of every buffer. */
    int64_t top = last_at_or_below(m, addr);
    for (int64_t i = top; i >= 0 && top - i < 64; i--) {
        const sg_reloc_range_t *r = &m->ranges[i];
        uint64_t off = addr - r->old_base;
        if (off < r->size) {
            hit = r;
            break;
        }
        if (off == r->size && !end_hit) end_hit = r;
    }
    bool past = false;
    if (!hit && end_hit) {
        hit = end_hit;
        past = true;
    }
    if (!hit) return false;
    if (out) *out = hit->new_base + (addr - hit->old_base);
    if (buffer) *buffer = hit->buffer;
    if (one_past_end) *one_past_end = past;
    return true;
}

/* ---- scanning ------------------------------------------------------------------ */

static int report_add(sg_reloc_report_t *rep, const sg_reloc_entry_t *e)
{
    if (!rep) return SG_OK;
    if (rep->n == rep->cap) {
        uint32_t cap = rep->cap ? 2 * rep->cap : 32;
        sg_reloc_entry_t *x = realloc(rep->entries, cap * sizeof *x);
        if (!x) return SG_ENOMEM;
        rep->entries = x;
        rep->cap = cap;
    }
    rep->entries[rep->n++] = *e;
    return SG_OK;
}

void sg_reloc_report_free(sg_reloc_report_t *r)
{
    free(r->entries);
    memset(r, 0, sizeof *r);
}

static void copy_node(char dst[64], const char *node)
{
    snprintf(dst, 64, "%s", node ? node : "?");
}

/* Rewrite the word at `off` if it needs it; 1 when rewritten. */
static int scan_word(sg_reloc_map_t *m, uint8_t *bytes, uint32_t off, uint32_t param,
                     const char *node, sg_reloc_report_t *rep)
{
    uint64_t v;
    memcpy(&v, bytes + off, 8);
    if (v == 0) return 0;
    sg_reloc_entry_t e = {.site = SG_RELOC_PARAM, .param = param, .offset = off, .old_value = v};
    for (uint32_t h = 0; h < m->n_handles; h++) {
        if (m->handles[h][0] != v) continue;
        if (m->handles[h][1] == v) return 0;
        e.site = SG_RELOC_HANDLE;
        e.new_value = m->handles[h][1];
        e.buffer = SG_NONE;
        goto rewrite;
    }
    uint64_t nv;
    uint32_t buf;
    bool past;
    if (!sg_reloc_translate(m, v, &nv, &buf, &past) || nv == v) return 0;
    e.new_value = nv;
    e.buffer = buf;
    e.one_past_end = past;
rewrite:
    memcpy(bytes + off, &e.new_value, 8);
    copy_node(e.node, node);
    if (report_add(rep, &e)) return SG_ENOMEM;
    return 1;
}

/* The parameter index holding byte `off` (SG_NONE without a layout). */
static uint32_t param_at(const sg_kernel_t *k, uint32_t off)
{
    for (uint32_t p = 0; k->param_offsets && k->param_sizes && p < k->n_params; p++)
        if (off >= k->param_offsets[p] && off - k->param_offsets[p] < k->param_sizes[p]) return p;
    return SG_NONE;
}

/* Does the code analysis say which words are addresses? Complete facts
 * from PTX or SASS: every address the kernel uses starts from one of them. */
static bool exact_from_code(const sg_kernel_t *k)
{
    return (k->facts.source == SG_FACTS_PTX || k->facts.source == SG_FACTS_SASS) &&
           k->facts.complete;
}

int sg_reloc_kernel_params(sg_reloc_map_t *m, const sg_kernel_t *k, uint8_t *bytes,
                           const char *node, sg_reloc_report_t *rep)
{
    int count = 0;
    if (!k->param_bytes || k->params_size < 8) return 0;
    if (exact_from_code(k)) {
        /* exactly the words the code uses as addresses: a 64-bit integer
         * that equals an address is left alone */
        if (rep) rep->from_code++;
        for (uint32_t i = 0; i < k->facts.n_pointers; i++) {
            uint32_t off = k->facts.pointers[i];
            if (off > k->params_size - 8) continue;
            int rc = scan_word(m, bytes, off, param_at(k, off), node, rep);
            if (rc < 0) return rc;
            count += rc;
        }
        return count;
    }
    if (rep) rep->heuristic++;
    if (k->n_params == 0 || !k->param_offsets || !k->param_sizes) {
        if (rep) rep->scanned_without_layout++;
        for (uint32_t off = 0; off + 8 <= k->params_size; off += 8) {
            int rc = scan_word(m, bytes, off, SG_NONE, node, rep);
            if (rc < 0) return rc;
            count += rc;
        }
        return count;
    }
    for (uint32_t p = 0; p < k->n_params; p++) {
        uint32_t po = k->param_offsets[p], ps = k->param_sizes[p];
        if (ps < 8 || po > k->params_size || ps > k->params_size - po) continue;
        /* Pointers sit at 8-byte-aligned offsets of the argument buffer (the
         * ABI aligns a pointer member to 8 inside a by-value struct, and the
         * struct itself to at least that); anything else is not a pointer. */
        uint32_t first = (po + 7) & ~7u;
        for (uint32_t off = first; off + 8 <= po + ps; off += 8) {
            int rc = scan_word(m, bytes, off, p, node, rep);
            if (rc < 0) return rc;
            count += rc;
        }
    }
    return count;
}

int sg_reloc_address(sg_reloc_map_t *m, uint64_t *addr, sg_reloc_site_t site, const char *node,
                     sg_reloc_report_t *rep)
{
    uint64_t nv;
    uint32_t buf;
    bool past;
    if (!sg_reloc_translate(m, *addr, &nv, &buf, &past) || past) return SG_ENOENT;
    if (nv == *addr) return 0;
    sg_reloc_entry_t e = {
        .site = site, .param = SG_NONE, .old_value = *addr, .new_value = nv, .buffer = buf};
    copy_node(e.node, node);
    *addr = nv;
    if (report_add(rep, &e)) return SG_ENOMEM;
    return 1;
}

const char *sg_reloc_site_name(sg_reloc_site_t s)
{
    static const char *const names[] = {"param",      "handle",     "memcpy src",
                                        "memcpy dst", "memset dst", "mem_free"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

void sg_reloc_report_print(const sg_reloc_report_t *r, const sg_graph_t *g, bool full, FILE *f)
{
    if (!f) return;
    uint32_t params = 0, handles = 0, others = 0, past = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const sg_reloc_entry_t *e = &r->entries[i];
        if (e->site == SG_RELOC_PARAM)
            params++;
        else if (e->site == SG_RELOC_HANDLE)
            handles++;
        else
            others++;
        if (e->one_past_end) past++;
    }
    fprintf(f,
            "relocation: %u kernel parameter %s, %u node %s, %u conditional %s rewritten\n",
            params, sg_plural(params, "word", "words"), others,
            sg_plural(others, "address", "addresses"), handles,
            sg_plural(handles, "handle", "handles"));
    if (r->scanned_without_layout)
        fprintf(f,
                "relocation: %u %s no parameter layout: every aligned word of %s "
                "argument buffer was scanned\n",
                r->scanned_without_layout,
                sg_plural(r->scanned_without_layout, "kernel had", "kernels had"),
                sg_plural(r->scanned_without_layout, "its", "their"));
    if (past)
        fprintf(f,
                "relocation: %u %s one past the end of a buffer and %s moved with it\n",
                past, sg_plural(past, "word pointed", "words pointed"),
                sg_plural(past, "was", "were"));
    uint32_t shown = full ? r->n : (r->n < 20 ? r->n : 20);
    for (uint32_t i = 0; i < shown; i++) {
        const sg_reloc_entry_t *e = &r->entries[i];
        const sg_buffer_t *b = e->buffer != SG_NONE ? sg_graph_buffer(g, e->buffer) : NULL;
        fprintf(f, "  %-12s %-10s", e->node, sg_reloc_site_name(e->site));
        if (e->site == SG_RELOC_PARAM || e->site == SG_RELOC_HANDLE) {
            if (e->param != SG_NONE)
                fprintf(f, " param %u @%-4u", e->param, e->offset);
            else
                fprintf(f, " word @%-4u   ", e->offset);
        }
        fprintf(f, " 0x%" PRIx64 " -> 0x%" PRIx64, e->old_value, e->new_value);
        if (b) {
            char label[128]; /* from the bundle: escaped for the terminal */
            sg_text_escape(label, sizeof label, b->label);
            fprintf(f, " (%s%s)", label, e->one_past_end ? ", one past its end" : "");
        }
        if (e->site == SG_RELOC_HANDLE) fputs(" (conditional handle)", f);
        fputc('\n', f);
    }
    if (shown < r->n) fprintf(f, "  ... %u more (--verbose shows all)\n", r->n - shown);
    if (r->from_code || r->heuristic)
        fprintf(f,
                "relocation: %u %s exactly the parameter words %s code uses as addresses "
                "(access analysis), %u by the heuristic\n",
                r->from_code, sg_plural(r->from_code, "kernel had", "kernels had"),
                sg_plural(r->from_code, "its", "their"), r->heuristic);
    if (r->n && r->heuristic)
        fprintf(f,
                "warning: relocation of the %u %s without complete access facts is a heuristic: "
                "a 64-bit integer parameter that equals an address inside a recorded buffer was "
                "rewritten too, and pointers stored in device memory (or packed at unaligned "
                "offsets) were not seen. A validation mismatch after relocation may come from "
                "that rather than from the graph.\n",
                r->heuristic, sg_plural(r->heuristic, "kernel", "kernels"));
}
