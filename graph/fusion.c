/* fusion.c: the root graph's table of fused kernels (graph.h, "fused
 * kernels"): records of what each fused node replaced, their copies and
 * their release; and the deep copy of a kernel payload (a stage keeps one),
 * with its access facts. */
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graph_private.h"

static void *dup_bytes(const void *p, size_t n)
{
    if (!p || !n) return NULL;
    void *q = malloc(n);
    if (q) memcpy(q, p, n);
    return q;
}

void sg_facts_release(sg_facts_t *f)
{
    for (uint32_t i = 0; f->sites && i < f->n_sites; i++) free(f->sites[i].reason);
    free(f->sites);
    free(f->pointers);
    free(f->reason);
    memset(f, 0, sizeof *f);
}

int sg_facts_copy(sg_facts_t *dst, const sg_facts_t *src)
{
    *dst = *src;
    dst->reason = src->reason ? strdup(src->reason) : NULL;
    dst->pointers = dup_bytes(src->pointers, src->n_pointers * sizeof(uint32_t));
    dst->sites = dup_bytes(src->sites, src->n_sites * sizeof(sg_site_t));
    bool oom = (src->reason && !dst->reason) || (src->n_pointers && src->pointers && !dst->pointers) ||
               (src->n_sites && src->sites && !dst->sites);
    if (!dst->pointers) dst->n_pointers = 0;
    if (!dst->sites) dst->n_sites = 0;
    for (uint32_t i = 0; i < dst->n_sites; i++) {
        const char *r = src->sites[i].reason;
        dst->sites[i].reason = r ? strdup(r) : NULL;
        if (r && !dst->sites[i].reason) oom = true;
    }
    if (oom) {
        sg_facts_release(dst);
        return SG_ENOMEM;
    }
    return SG_OK;
}

int sg_kernel_copy(sg_kernel_t *dst, const sg_kernel_t *src)
{
    *dst = *src;
    dst->name = src->name ? strdup(src->name) : NULL;
    dst->param_offsets = dup_bytes(src->param_offsets, src->n_params * sizeof(uint32_t));
    dst->param_sizes = dup_bytes(src->param_sizes, src->n_params * sizeof(uint32_t));
    dst->param_bytes = dup_bytes(src->param_bytes, src->params_size);
    int frc = sg_facts_copy(&dst->facts, &src->facts);
    if (frc || (src->name && !dst->name) ||
        (src->n_params && src->param_offsets && (!dst->param_offsets || !dst->param_sizes)) ||
        (src->params_size && src->param_bytes && !dst->param_bytes)) {
        sg_kernel_release(dst);
        return SG_ENOMEM;
    }
    return SG_OK;
}

void sg_kernel_release(sg_kernel_t *k)
{
    free(k->name);
    free(k->param_offsets);
    free(k->param_sizes);
    free(k->param_bytes);
    k->name = NULL;
    k->param_offsets = k->param_sizes = NULL;
    k->param_bytes = NULL;
    sg_facts_release(&k->facts);
}

int sg_graph_add_fusion(sg_graph_t *g, sg_node_id_t node, sg_fusion_t **out)
{
    if (!g) return SG_EINVAL;
    g = g->root;
    int rc = sg_array_grow((void **)&g->fusions, &g->cap_fusions, g->n_fusions + 1,
                           sizeof *g->fusions);
    if (rc) return rc;
    sg_fusion_t *f = &g->fusions[g->n_fusions++];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->ptx_image = f->cubin_image = SG_NONE;
    f->registers = f->spill_bytes = -1;
    if (out) *out = f;
    return SG_OK;
}

int sg_fusion_add_stage(sg_fusion_t *f, sg_node_id_t node, uint64_t seq, const sg_kernel_t *k,
                        uint32_t param_base)
{
    sg_fused_stage_t *s = realloc(f->stages, (f->n_stages + 1) * sizeof *s);
    if (!s) return SG_ENOMEM;
    f->stages = s;
    sg_fused_stage_t *st = &s[f->n_stages];
    memset(st, 0, sizeof *st);
    if (sg_kernel_copy(&st->kernel, k)) return SG_ENOMEM;
    st->node = node;
    st->seq = seq;
    st->param_base = param_base;
    f->n_stages++;
    return SG_OK;
}

int sg_fusion_add_dropped(sg_fusion_t *f, uint32_t stage, uint32_t buffer, uint64_t offset,
                          uint64_t size, const char *reason)
{
    sg_dropped_write_t *d = realloc(f->dropped, (f->n_dropped + 1) * sizeof *d);
    if (!d) return SG_ENOMEM;
    f->dropped = d;
    char *r = reason ? strdup(reason) : NULL;
    if (reason && !r) return SG_ENOMEM;
    d[f->n_dropped++] = (sg_dropped_write_t){stage, buffer, offset, size, r};
    return SG_OK;
}

const sg_fusion_t *sg_graph_fusion(const sg_graph_t *g, sg_node_id_t node)
{
    if (!g) return NULL;
    g = g->root;
    for (uint32_t i = 0; i < g->n_fusions; i++)
        if (g->fusions[i].node == node) return &g->fusions[i];
    return NULL;
}

static void fusion_release(sg_fusion_t *f)
{
    for (uint32_t i = 0; i < f->n_stages; i++) sg_kernel_release(&f->stages[i].kernel);
    free(f->stages);
    for (uint32_t i = 0; i < f->n_dropped; i++) free(f->dropped[i].reason);
    free(f->dropped);
    free(f->codegen);
    free(f->note);
    memset(f, 0, sizeof *f);
}

void sg_graph__free_fusions(sg_graph_t *g)
{
    for (uint32_t i = 0; i < g->n_fusions; i++) fusion_release(&g->fusions[i]);
    free(g->fusions);
    g->fusions = NULL;
    g->n_fusions = g->cap_fusions = 0;
}

int sg_graph__clone_fusions(const sg_graph_t *s, sg_graph_t *d)
{
    for (uint32_t i = 0; i < s->n_fusions; i++) {
        const sg_fusion_t *sf = &s->fusions[i];
        sg_fusion_t *df;
        if (sg_graph_add_fusion(d, sf->node, &df)) return SG_ENOMEM;
        *df = *sf;
        df->stages = NULL;
        df->n_stages = 0;
        df->dropped = NULL;
        df->n_dropped = 0;
        df->codegen = sf->codegen ? strdup(sf->codegen) : NULL;
        df->note = sf->note ? strdup(sf->note) : NULL;
        if ((sf->codegen && !df->codegen) || (sf->note && !df->note)) return SG_ENOMEM;
        for (uint32_t k = 0; k < sf->n_stages; k++) {
            const sg_fused_stage_t *st = &sf->stages[k];
            if (sg_fusion_add_stage(df, st->node, st->seq, &st->kernel, st->param_base))
                return SG_ENOMEM;
        }
        for (uint32_t k = 0; k < sf->n_dropped; k++) {
            const sg_dropped_write_t *w = &sf->dropped[k];
            if (sg_fusion_add_dropped(df, w->stage, w->buffer, w->offset, w->size, w->reason))
                return SG_ENOMEM;
        }
    }
    return SG_OK;
}
