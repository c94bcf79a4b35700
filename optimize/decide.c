/* decide.c: what the in-app optimizer may do with a graph, decided from its
 * model alone (opt.h): which graphs keep their original executable graph
 * and why, whether the passes changed what CUDA would run, which memory
 * the shadow check covers, which buffer the test plant corrupts, and which
 * exec updates can be carried over to the optimized graph. No driver: the
 * unit tests (tests/unit/test_optimize.c) run all of it on the CPU. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "rewrite/reach.h"

/* ---- refusals ---------------------------------------------------------------------- */

static bool refuse_node(const sg_graph_t *root, const sg_node_t *x, char *why, size_t n)
{
    switch (x->type) {
    case SG_NODE_HOST:
        snprintf(why, n, "host callback: node n%u is one, and the shadow check would run it twice",
                 x->id);
        return true;
    case SG_NODE_OPAQUE:
        snprintf(why, n, "opaque node: sgcap does not understand node n%u (%s)", x->id,
                 x->u.opaque_note ? x->u.opaque_note : "opaque");
        return true;
    case SG_NODE_CONDITIONAL:
        snprintf(why, n,
                 "conditional node: n%u's handle is set from the device, and the program's "
                 "kernels know only the original's",
                 x->id);
        return true;
    case SG_NODE_CHILD_GRAPH:
        snprintf(why, n, "child graph: node n%u holds one, not materialized in the app yet", x->id);
        return true;
    case SG_NODE_KERNEL: {
        const sg_kernel_t *k = &x->u.kernel;
        if (!k->name || !k->name[0] || !k->func_handle) {
            snprintf(why, n,
                     "kernel not recorded: the capture could not read which kernel node n%u "
                     "runs",
                     x->id);
            return true;
        }
        if (sg_replay_kernel_needs_process(k->name)) {
            snprintf(why, n,
                     "NCCL/NVSHMEM kernel: node n%u runs %.80s, and its shadow check cannot run "
                     "a collective twice across ranks",
                     x->id, k->name);
            return true;
        }
        if (k->params_size == 0 && (k->has_extra || k->n_params)) {
            snprintf(why, n, "arguments not recorded: kernel node n%u (%.80s)", x->id, k->name);
            return true;
        }
        return false;
    }
    case SG_NODE_MEM_ALLOC: {
        /* The address a mem_alloc node hands out is its graph's own: the
         * optimized graph gets another one. That is fine for memory the
         * graph also frees (its nodes are rewritten to the new address),
         * not for memory the program goes on using after a launch. */
        uint32_t b = x->u.mem.buffer;
        const sg_buffer_t *buf = b != SG_NONE ? sg_graph_buffer(root, b) : NULL;
        if (!buf) {
            snprintf(why, n, "graph allocation not recorded: mem_alloc node n%u has no buffer",
                     x->id);
            return true;
        }
        for (uint32_t i = 0; i < root->n_nodes; i++) {
            const sg_node_t *f = sg_graph_node(root, i);
            if (f && f->type == SG_NODE_MEM_FREE &&
                (f->u.mem.buffer == b || (f->u.mem.address && f->u.mem.address == buf->address)))
                return false;
        }
        snprintf(why, n,
                 "graph allocation outlives the graph: mem_alloc node n%u's (%s, %" PRIu64
                 " bytes), which the program knows at the original graph's address",
                 x->id, buf->label, buf->size);
        return true;
    }
    default:
        return false;
    }
}

bool sg_opt_refuse(const sg_graph_t *g, char *why, size_t n)
{
    if (g->crosscheck_done && !g->crosscheck_ok) {
        snprintf(why, n,
                 "cross-check: the model disagrees with CUDA's own listing of the graph (%s)",
                 g->crosscheck_note ? g->crosscheck_note : "cross-check");
        return true;
    }
    if (sg_graph_node_count(g) == 0) {
        snprintf(why, n, "empty graph");
        return true;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (x && refuse_node(g, x, why, n)) return true;
    }
    return false;
}

/* ---- did the passes change anything ------------------------------------------------ */

static bool same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || (a && b && memcmp(a, b, n) == 0);
}

static bool same_kernel(const sg_kernel_t *a, const sg_kernel_t *b)
{
    if (a->func_handle != b->func_handle || a->image != b->image) return false;
    if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name) != 0))
        return false;
    if (memcmp(a->grid, b->grid, sizeof a->grid) || memcmp(a->block, b->block, sizeof a->block) ||
        memcmp(a->cluster, b->cluster, sizeof a->cluster))
        return false;
    if (a->shared_bytes != b->shared_bytes || a->priority != b->priority ||
        a->cooperative != b->cooperative || a->has_extra != b->has_extra)
        return false;
    if (a->n_params != b->n_params || a->params_size != b->params_size) return false;
    return same_bytes(a->param_offsets, b->param_offsets, a->n_params * sizeof(uint32_t)) &&
           same_bytes(a->param_sizes, b->param_sizes, a->n_params * sizeof(uint32_t)) &&
           same_bytes(a->param_bytes, b->param_bytes, a->params_size);
}

bool sg_opt_same_payload(const sg_node_t *a, const sg_node_t *b)
{
    if (a->type != b->type) return false;
    switch (a->type) {
    case SG_NODE_KERNEL:
        return same_kernel(&a->u.kernel, &b->u.kernel);
    case SG_NODE_MEMCPY:
        return !memcmp(&a->u.memcpy, &b->u.memcpy, sizeof a->u.memcpy);
    case SG_NODE_MEMSET:
        return !memcmp(&a->u.memset, &b->u.memset, sizeof a->u.memset);
    case SG_NODE_HOST:
        return a->u.host.fn == b->u.host.fn && a->u.host.user_data == b->u.host.user_data;
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        return a->u.event == b->u.event;
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE:
        return a->u.mem.buffer == b->u.mem.buffer && a->u.mem.address == b->u.mem.address &&
               a->u.mem.bytes == b->u.mem.bytes;
    case SG_NODE_EMPTY:
        return true;
    default:
        return false; /* bodies and opaque nodes: never assumed equal */
    }
}

/* Is every edge of `of` an ordering `in` has (by some path), with the same
 * edge data where it carries any? Ports and programmatic dependencies are
 * not orderings a path can stand for: those edges must exist as they are. */
static int edges_implied(const sg_graph_t *of, const sg_graph_t *in, sg_reach_t *reach_in,
                         const char *what_of, const char *what_in, bool *implied, char *what,
                         size_t n)
{
    *implied = true;
    sg_node_id_t(*pairs)[2] = malloc((of->live_edges + 1) * sizeof *pairs);
    uint8_t *ans = malloc(of->live_edges + 1);
    if (!pairs || !ans) {
        free(pairs);
        free(ans);
        return SG_ENOMEM;
    }
    size_t np = 0;
    for (uint32_t i = 0; i < of->n_edges && *implied; i++) {
        const sg_edge_t *e = sg_graph_edge(of, i);
        if (!e) continue;
        if (e->from_port || e->to_port || e->cuda_type) {
            bool found = false;
            uint32_t n_out = 0;
            const sg_edge_id_t *out = sg_graph_out_edges(in, e->from, &n_out);
            for (uint32_t k = 0; k < n_out && !found; k++) {
                const sg_edge_t *f = sg_graph_edge(in, out[k]);
                found = f && f->to == e->to && f->from_port == e->from_port &&
                        f->to_port == e->to_port && f->cuda_type == e->cuda_type;
            }
            if (!found) {
                snprintf(what, n,
                         "edge n%u -> n%u with edge data (ports %u/%u, type %u) of the %s "
                         "graph is not in the %s one",
                         e->from, e->to, e->from_port, e->to_port, e->cuda_type, what_of, what_in);
                *implied = false;
            }
            continue;
        }
        pairs[np][0] = e->from;
        pairs[np][1] = e->to;
        np++;
    }
    int rc = SG_OK;
    if (*implied && np)
        rc = sg_reach_query_batch(reach_in, (const sg_node_id_t(*)[2])pairs, np, ans);
    for (size_t i = 0; rc == SG_OK && *implied && i < np; i++) {
        if (ans[i]) continue;
        snprintf(what, n, "the %s graph orders n%u before n%u and the %s one does not", what_of,
                 pairs[i][0], pairs[i][1], what_in);
        *implied = false;
    }
    free(pairs);
    free(ans);
    return rc;
}

int sg_opt_changed(const sg_graph_t *before, const sg_graph_t *after, bool *changed, char *what,
                   size_t n)
{
    *changed = true;
    what[0] = '\0';
    uint32_t ids = before->n_nodes > after->n_nodes ? before->n_nodes : after->n_nodes;
    for (uint32_t i = 0; i < ids; i++) {
        const sg_node_t *a = i < before->n_nodes ? sg_graph_node(before, i) : NULL;
        const sg_node_t *b = i < after->n_nodes ? sg_graph_node(after, i) : NULL;
        if (!a && !b) continue;
        if (!a || !b) {
            snprintf(what, n, "node n%u was %s", i, a ? "removed" : "added");
            return SG_OK;
        }
        if (!sg_opt_same_payload(a, b)) {
            snprintf(what, n, "node n%u (%s) changed", i, sg_node_type_name(b->type));
            return SG_OK;
        }
    }
    sg_reach_t *rb = NULL, *ra = NULL;
    int rc = sg_reach_build(before, 0, &rb);
    if (rc == SG_OK) rc = sg_reach_build(after, 0, &ra);
    bool implied = false;
    if (rc == SG_OK)
        rc = edges_implied(after, before, rb, "rewritten", "original", &implied, what, n);
    if (rc == SG_OK && implied)
        rc = edges_implied(before, after, ra, "original", "rewritten", &implied, what, n);
    sg_reach_destroy(rb);
    sg_reach_destroy(ra);
    if (rc == SG_OK && implied) *changed = false;
    return rc;
}

/* ---- fusion ----------------------------------------------------------------------------- */

uint32_t sg_opt_fused_nodes(const sg_graph_t *g)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (x && x->type == SG_NODE_KERNEL && x->synthesized) count++;
    }
    return count;
}

bool sg_opt_fusion_blind(const sg_graph_t *model, const sg_graph_t *rewritten, char *why, size_t n)
{
    if (!sg_opt_fused_nodes(rewritten)) return false;
    for (uint32_t i = 0; i < model->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(model, i);
        if (x && x->type == SG_NODE_KERNEL && x->u.kernel.n_params == 0 &&
            x->u.kernel.params_size > 0) {
            snprintf(why, n,
                     "fusion blind: a fused kernel shares the graph with kernel node n%u (%.80s), "
                     "whose accesses the analysis cannot see (no parameter layout)",
                     x->id, x->u.kernel.name ? x->u.kernel.name : "?");
            return true;
        }
    }
    return false;
}

/* ---- the shadow set ------------------------------------------------------------------- */

int sg_opt_shadow_set(const sg_graph_t *g, sg_opt_span_t **spans, uint32_t *n, uint64_t *bytes)
{
    *spans = NULL;
    *n = 0;
    *bytes = 0;
    sg_opt_span_t *s = malloc((g->n_buffers + 1) * sizeof *s);
    if (!s) return SG_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_buffers; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        if (b->kind == SG_BUFFER_GRAPH_ALLOC || b->size == 0) continue;
        s[k].addr = b->address;
        s[k].size = b->size;
        s[k].buffer = i;
        s[k].host = sg_buffer_kind_is_host(b->kind);
        s[k].pageable = b->kind == SG_BUFFER_HOST_PAGEABLE;
        *bytes += b->size;
        k++;
    }
    *spans = s;
    *n = k;
    return SG_OK;
}

uint32_t sg_opt_plant_target(const sg_graph_t *g)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = sg_graph_node(g, i);
        if (!x) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            const sg_access_t *ac = &x->accesses[a];
            const sg_buffer_t *b = sg_graph_buffer(g, ac->buffer);
            if (!b || !(ac->mode & SG_ACCESS_WRITE) || b->size == 0) continue;
            if (b->kind == SG_BUFFER_DEVICE || b->kind == SG_BUFFER_ASYNC ||
                b->kind == SG_BUFFER_MANAGED || b->kind == SG_BUFFER_UNKNOWN)
                return ac->buffer;
        }
    }
    return SG_NONE;
}

/* ---- exec updates ------------------------------------------------------------------------ */

bool sg_opt_address_ok(const sg_graph_t *g, uint64_t old_addr, uint64_t new_addr, const char *what,
                       char *why, size_t n)
{
    if (old_addr == new_addr) return true;
    uint32_t a = sg_graph_find_buffer(g, old_addr), b = sg_graph_find_buffer(g, new_addr);
    if (a == b && a != SG_NONE) return true;
    const sg_buffer_t *ba = a != SG_NONE ? sg_graph_buffer(g, a) : NULL;
    const sg_buffer_t *bb = b != SG_NONE ? sg_graph_buffer(g, b) : NULL;
    snprintf(why, n, "%s moves from %s (0x%" PRIx64 ") to %s (0x%" PRIx64 ")", what,
             ba ? ba->label : "memory the graph did not touch", old_addr,
             bb ? bb->label : "memory the optimized graph was not checked with", new_addr);
    return false;
}

bool sg_opt_kernel_args_ok(const sg_graph_t *g, const sg_kernel_t *old, const uint8_t *bytes,
                           uint32_t size, char *why, size_t n)
{
    if (size != old->params_size) {
        snprintf(why, n, "the argument buffer changes size (%u -> %u bytes)", old->params_size,
                 size);
        return false;
    }
    if (old->n_params == 0 && size) {
        snprintf(why, n, "the kernel has no recorded parameter layout");
        return false;
    }
    for (uint32_t p = 0; p < old->n_params; p++) {
        uint32_t off = old->param_offsets[p], sz = old->param_sizes[p];
        if (sz < 8) continue;
        for (uint32_t o = (off + 7) & ~7u; o + 8 <= off + sz && o + 8 <= size; o += 8) {
            uint64_t was, now;
            memcpy(&was, old->param_bytes + o, 8);
            memcpy(&now, bytes + o, 8);
            if (was == now) continue;
            uint32_t a = sg_graph_find_buffer(g, was), b = sg_graph_find_buffer(g, now);
            if (a == b) continue; /* the same buffer, or a plain value both times */
            char what[64];
            snprintf(what, sizeof what, "parameter %u (byte %u)", p, o);
            return sg_opt_address_ok(g, was, now, what, why, n);
        }
    }
    return true;
}

static bool same_edges(const sg_graph_t *a, const sg_graph_t *b, sg_node_id_t id, char *why,
                       size_t n)
{
    uint32_t na = 0, nb = 0;
    const sg_edge_id_t *ia = sg_graph_in_edges(a, id, &na);
    const sg_edge_id_t *ib = sg_graph_in_edges(b, id, &nb);
    /* Parallel edges of different sgcap kinds are one dependency to CUDA:
     * compare the sets of (source, edge data). */
    for (int pass = 0; pass < 2; pass++) {
        const sg_graph_t *x = pass ? b : a, *y = pass ? a : b;
        const sg_edge_id_t *ix = pass ? ib : ia, *iy = pass ? ia : ib;
        uint32_t nx = pass ? nb : na, ny = pass ? na : nb;
        for (uint32_t i = 0; i < nx; i++) {
            const sg_edge_t *e = sg_graph_edge(x, ix[i]);
            if (!e) continue;
            bool found = false;
            for (uint32_t j = 0; j < ny && !found; j++) {
                const sg_edge_t *f = sg_graph_edge(y, iy[j]);
                found = f && f->from == e->from && f->from_port == e->from_port &&
                        f->to_port == e->to_port && f->cuda_type == e->cuda_type;
            }
            if (!found) {
                snprintf(why, n, "the edge n%u -> n%u is %s", e->from, id, pass ? "new" : "gone");
                return false;
            }
        }
    }
    return true;
}

int sg_opt_diff(const sg_graph_t *was, const sg_graph_t *now, bool *same, sg_node_id_t **changed,
                uint32_t *n_changed, char *why, size_t n)
{
    *same = false;
    *changed = NULL;
    *n_changed = 0;
    if (sg_graph_node_count(was) != sg_graph_node_count(now)) {
        snprintf(why, n, "the graph has %u nodes instead of %u", sg_graph_node_count(now),
                 sg_graph_node_count(was));
        return SG_OK;
    }
    uint32_t ids = was->n_nodes > now->n_nodes ? was->n_nodes : now->n_nodes;
    sg_node_id_t *list = malloc((ids + 1) * sizeof *list);
    if (!list) return SG_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < ids; i++) {
        const sg_node_t *a = i < was->n_nodes ? sg_graph_node(was, i) : NULL;
        const sg_node_t *b = i < now->n_nodes ? sg_graph_node(now, i) : NULL;
        if (!a && !b) continue;
        if (!a || !b || a->type != b->type) {
            snprintf(why, n, "node n%u is %s", i, !a ? "new" : !b ? "gone" : "of another type");
            free(list);
            return SG_OK;
        }
        if (!same_edges(was, now, i, why, n)) {
            free(list);
            return SG_OK;
        }
        if (!sg_opt_same_payload(a, b)) list[k++] = i;
    }
    *same = true;
    *changed = list;
    *n_changed = k;
    return SG_OK;
}
