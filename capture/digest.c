/* digest.c: graph digest for deduplicating re-captures (digest.h). Fields go
 * into one XXH64 stream with a tag byte before each group, so two different
 * field sequences cannot produce the same byte stream by shifting. */
#include "digest.h"

#include <string.h>
#include <xxhash.h>

static void put(XXH64_state_t *h, const void *p, size_t n)
{
    XXH64_update(h, p, n);
}

static void put_u64(XXH64_state_t *h, uint64_t v)
{
    put(h, &v, sizeof v);
}

static void put_u32(XXH64_state_t *h, uint32_t v)
{
    put(h, &v, sizeof v);
}

static void put_tag(XXH64_state_t *h, char tag)
{
    put(h, &tag, 1);
}

static void put_str(XXH64_state_t *h, const char *s)
{
    uint64_t n = s ? strlen(s) : UINT64_MAX;
    put_u64(h, n);
    if (s) put(h, s, (size_t)n);
}

static void digest_graph(XXH64_state_t *h, const sg_graph_t *g, int depth);

static void digest_node(XXH64_state_t *h, const sg_graph_t *g, const sg_node_t *n, int depth)
{
    put_tag(h, 'N');
    put_u32(h, n->id);
    put_u32(h, (uint32_t)n->type);
    put_u32(h, n->stream);
    put_u64(h, n->seq);
    put_u32(h, n->cuda_type);
    switch (n->type) {
    case SG_NODE_KERNEL: {
        const sg_kernel_t *k = &n->u.kernel;
        put_str(h, k->name);
        const sg_image_t *im = k->image != SG_NONE ? sg_graph_image(g, k->image) : NULL;
        put_str(h, im ? im->hash : NULL);
        put(h, k->grid, sizeof k->grid);
        put(h, k->block, sizeof k->block);
        put(h, k->cluster, sizeof k->cluster);
        put_u32(h, k->shared_bytes);
        put_u32(h, k->n_params);
        if (k->n_params) {
            put(h, k->param_offsets, k->n_params * sizeof *k->param_offsets);
            put(h, k->param_sizes, k->n_params * sizeof *k->param_sizes);
        }
        put_u32(h, k->params_size);
        if (k->params_size && k->param_bytes) put(h, k->param_bytes, k->params_size);
        put_u32(h, (uint32_t)k->priority);
        put_u32(h, (uint32_t)k->cooperative | (uint32_t)k->has_extra << 1);
        break;
    }
    case SG_NODE_MEMCPY: {
        const sg_memcpy_t *c = &n->u.memcpy;
        uint64_t v[8] = {c->dst,   c->src,    c->dst_pitch, c->src_pitch,
                         c->width, c->height, c->depth,     (uint64_t)c->kind};
        put(h, v, sizeof v);
        break;
    }
    case SG_NODE_MEMSET: {
        const sg_memset_t *s = &n->u.memset;
        uint64_t v[6] = {s->dst, s->pitch, s->value, s->element_size, s->width, s->height};
        put(h, v, sizeof v);
        break;
    }
    case SG_NODE_HOST:
        put_u64(h, n->u.host.fn);
        put_u64(h, n->u.host.user_data);
        break;
    case SG_NODE_EVENT_RECORD:
    case SG_NODE_EVENT_WAIT:
        put_u32(h, n->u.event);
        break;
    case SG_NODE_MEM_ALLOC:
    case SG_NODE_MEM_FREE:
        put_u64(h, n->u.mem.address);
        put_u64(h, n->u.mem.bytes);
        break;
    case SG_NODE_CHILD_GRAPH:
        put_tag(h, '(');
        if (n->u.child && depth < 64) digest_graph(h, n->u.child, depth + 1);
        put_tag(h, ')');
        break;
    case SG_NODE_CONDITIONAL: {
        const sg_conditional_t *c = &n->u.cond;
        put_u32(h, (uint32_t)c->type);
        put_u32(h, c->default_value);
        put_u32(h, c->n_bodies);
        for (uint32_t i = 0; i < c->n_bodies; i++) {
            put_tag(h, '(');
            if (c->bodies[i] && depth < 64) digest_graph(h, c->bodies[i], depth + 1);
            put_tag(h, ')');
        }
        break;
    }
    case SG_NODE_OPAQUE:
        put_str(h, n->u.opaque_note);
        break;
    default:
        break;
    }
}

static void digest_graph(XXH64_state_t *h, const sg_graph_t *g, int depth)
{
    put_tag(h, 'G');
    put_u32(h, sg_graph_node_count(g));
    put_u32(h, sg_graph_edge_count(g));
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (n) digest_node(h, g, n, depth);
    }
    for (uint32_t i = 0; i < g->n_edges; i++) {
        const sg_edge_t *e = sg_graph_edge(g, i);
        if (!e) continue;
        put_tag(h, 'E');
        uint32_t v[4] = {e->from, e->to, (uint32_t)e->kind, e->event};
        put(h, v, sizeof v);
        uint8_t d[3] = {e->from_port, e->to_port, e->cuda_type};
        put(h, d, sizeof d);
    }
}

uint64_t sg_graph_digest(const sg_graph_t *g)
{
    XXH64_state_t *h = XXH64_createState();
    if (!h) return 0;
    XXH64_reset(h, 0);
    const sg_graph_t *r = g->root ? g->root : g;
    put_tag(h, 'T');
    put_u32(h, r->n_streams);
    put_u32(h, r->n_events);
    put_u32(h, r->n_buffers);
    for (uint32_t i = 0; i < r->n_buffers; i++) {
        const sg_buffer_t *b = &r->buffers[i];
        uint64_t v[4] = {(uint64_t)b->kind, b->address, b->size, b->alloc_node};
        put(h, v, sizeof v);
    }
    for (uint32_t i = 0; i < r->n_events; i++)
        put_u32(h, r->events[i].external);
    digest_graph(h, g, 0);
    uint64_t d = XXH64_digest(h);
    XXH64_freeState(h);
    return d;
}
