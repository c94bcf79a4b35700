/* fuse_plan.c: a run of analyzed stages as one fused kernel's memory plan
 * (fuse.h, step 2): slots, the cross-stage rule, what lives in registers,
 * preloads proven inside their buffer, and dead write-backs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "rewrite_internal.h"

void sg_fz_plan_free(sg_fz_plan_t *p)
{
    if (!p) return;
    free(p->slots);
    free(p->site_slot);
    free(p->site_base);
    free(p->site_known);
    free(p->site_sure);
    free(p->stmt_base);
    free(p->never_taken);
    memset(p, 0, sizeof *p);
}

bool sg_fz_slot_untouched(const sg_fz_plan_t *p, uint32_t k)
{
    if (!p || k >= p->n_slots) return false;
    const sg_fz_slot_t *y = &p->slots[k];
    if (!y->lifted || !y->dead || y->preload) return false;
    for (uint32_t s = 0; s < p->n_stages; s++)
        for (uint32_t i = 0; i < p->stages[s].n_sites; i++)
            if (p->site_slot[p->site_base[s] + i] == k && !p->stages[s].sites[i].store &&
                !p->site_known[p->site_base[s] + i])
                return false; /* a fallback load reads the slot's memory */
    return true;
}

/* Where a site's slot starts: its address at t = 0, or for a grid-stride
 * site the address of its first iteration (offset from the base pointer
 * reduced into one period), so every unrolled copy is one slot. */
static uint64_t slot_key(const sg_fz_stage_t *st, const sg_fz_site_t *x)
{
    if (!x->gs || x->base_param == SG_NONE) return x->addr0;
    uint64_t base = x->addr0 - (uint64_t)x->base_k;
    int64_t off = x->base_k % x->period;
    if (off < 0) off += x->period;
    (void)st;
    return base + (uint64_t)off;
}

/* Bytes [lo, hi) a slot's sites may touch (a grid-stride slot: its whole
 * buffer, or everything from its start when it is in none). */
static void slot_span(const sg_fz_slot_t *s, uint64_t tlo, uint64_t thi, uint64_t *lo, uint64_t *hi)
{
    if (s->gs) {
        *lo = s->addr0;
        *hi = s->gs_end;
        return;
    }
    if (!s->t_affine) { /* over every tid.x and ctaid.x of the launch */
        *lo = s->addr0 + (uint64_t)s->cta_lo;
        *hi = s->addr0 + (uint64_t)s->cta_hi + s->width;
        return;
    }
    if (thi <= tlo) thi = tlo + 1;
    uint64_t a = s->addr0 + (uint64_t)(s->stride * (int64_t)tlo);
    uint64_t b = s->addr0 + (uint64_t)(s->stride * (int64_t)(thi - 1));
    *lo = a < b ? a : b;
    *hi = (a < b ? b : a) + s->width;
}

uint32_t sg_fz_plan_untouched_buffers(const sg_graph_t *g, const sg_fz_plan_t *p, uint32_t *out,
                                      uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_slots && n < cap; k++) {
        uint32_t b = p->slots[k].buffer;
        const sg_buffer_t *buf = sg_graph_buffer(g, b);
        if (!buf || !sg_fz_slot_untouched(p, k)) continue;
        bool dup = false, reached = false;
        for (uint32_t i = 0; i < n && !dup; i++) dup = out[i] == b;
        /* any other slot whose bytes (over every element: a superset of its
         * sites' intervals) meet the buffer keeps it */
        for (uint32_t j = 0; j < p->n_slots && !dup && !reached; j++) {
            if (sg_fz_slot_untouched(p, j)) continue;
            uint64_t lo, hi;
            slot_span(&p->slots[j], 0, p->elements, &lo, &hi);
            reached = lo < buf->address + buf->size && buf->address < hi;
        }
        if (!dup && !reached) out[n++] = b;
    }
    return n;
}

typedef struct {
    uint64_t tlo, thi; /* union of its sites' t-intervals */
} slot_extent_t;

/* Offsets [lo, hi] of a*i + b*j over i < ni, j < nj. */
static void affine_range(int64_t a, uint64_t ni, int64_t b, uint64_t nj, int64_t *lo, int64_t *hi)
{
    int64_t x = a * (int64_t)(ni - 1), y = b * (int64_t)(nj - 1);
    *lo = (x < 0 ? x : 0) + (y < 0 ? y : 0);
    *hi = (x > 0 ? x : 0) + (y > 0 ? y : 0);
}

/* Do two slots touch the same bytes only from the same CTA? Both must move
 * by the same distance per CTA, and what one CTA touches of both together
 * must fit in that distance: then CTA c's bytes lie in a band
 * [B + c*A, B + (c+1)*A) no other CTA reaches. */
static bool cta_local(const sg_fz_slot_t *x, const sg_fz_slot_t *y, uint32_t ntid)
{
    if (x->gs || y->gs || x->cta_stride != y->cta_stride || x->cta_stride <= 0) return false;
    int64_t xl, xh, yl, yh;
    affine_range(x->stride, ntid, 0, 1, &xl, &xh);
    affine_range(y->stride, ntid, 0, 1, &yl, &yh);
    int64_t lo = (int64_t)x->addr0 + xl < (int64_t)y->addr0 + yl ? (int64_t)x->addr0 + xl
                                                                  : (int64_t)y->addr0 + yl;
    int64_t hi = (int64_t)x->addr0 + xh + x->width > (int64_t)y->addr0 + yh + y->width
                     ? (int64_t)x->addr0 + xh + x->width
                     : (int64_t)y->addr0 + yh + y->width;
    return hi - lo <= x->cta_stride;
}

static bool inside_buffer(const sg_graph_t *g, uint64_t lo, uint64_t hi, uint32_t *buf)
{
    uint32_t b = sg_graph_find_buffer(g, lo);
    *buf = b;
    if (b == SG_NONE) return false;
    const sg_buffer_t *x = sg_graph_buffer(g, b);
    return hi <= x->address + x->size && hi > lo;
}

/* Is buffer b a graph allocation freed in this graph whose every user is
 * one of nodes[0..n)? Then nothing can read what the run writes there. */
static bool dead_buffer(const sg_graph_t *g, const sg_rw_buffers_t *bu, uint32_t b,
                        const sg_fz_stage_t *st, uint32_t n)
{
    const sg_buffer_t *x = sg_graph_buffer(g, b);
    if (!x || x->kind != SG_BUFFER_GRAPH_ALLOC || x->alloc_node == SG_NONE) return false;
    if (b >= bu->n_buffers || bu->free_start[b] == bu->free_start[b + 1]) return false;
    for (uint32_t i = bu->user_start[b]; i < bu->user_start[b + 1]; i++) {
        bool mine = false;
        for (uint32_t s = 0; s < n && !mine; s++) mine = st[s].node->id == bu->users[i];
        if (!mine) return false;
    }
    return true;
}

static void slot_ctype(sg_fz_slot_t *s, sg_ptx_type_t t)
{
    bool f = sg_ptx_type_is_float(t);
    if (s->width == 4) {
        snprintf(s->type_c, sizeof s->type_c, "%s", f ? "float" : "unsigned");
        s->constraint = f ? 'f' : 'r';
    } else {
        snprintf(s->type_c, sizeof s->type_c, "%s", f ? "double" : "unsigned long long");
        s->constraint = f ? 'd' : 'l';
    }
}

/* ---- the fast path ----------------------------------------------------------------- */

#define FAST_MAX_BLOCKS 4096u
#define FAST_MAX_TABLE (4u << 20) /* sites x blocks */

/* Blocks reachable from `from` in f's CFG: through at least one edge when
 * strict, else `from` itself too. seen has f->n_blocks entries; stack as
 * many. */
static void reach_from(const sg_ptx_func_t *f, uint32_t from, bool strict, bool *seen, uint32_t *stack)
{
    memset(seen, 0, f->n_blocks * sizeof *seen);
    uint32_t n = 0;
    if (strict) {
        const sg_ptx_block_t *b = &f->blocks[from];
        for (uint32_t i = 0; i < b->n_succ; i++)
            if (!seen[b->succ[i]]) seen[b->succ[i]] = true, stack[n++] = b->succ[i];
    } else {
        seen[from] = true;
        stack[n++] = from;
    }
    while (n) {
        const sg_ptx_block_t *b = &f->blocks[stack[--n]];
        for (uint32_t i = 0; i < b->n_succ; i++)
            if (!seen[b->succ[i]]) seen[b->succ[i]] = true, stack[n++] = b->succ[i];
    }
}

/* The block a guarded branch of f jumps to when taken, SG_PTX_NONE for a
 * guarded ret (it leaves), SG_NONE when stmt is neither. */
static uint32_t taken_block(const sg_ptx_func_t *f, uint32_t stmt)
{
    const sg_ptx_stmt_t *s = &f->stmts[stmt];
    if (s->kind != SG_PTX_STMT_INSTR || s->u.ins.guard == SG_PTX_NONE) return SG_NONE;
    const sg_ptx_instr_t *in = &s->u.ins;
    if (in->op == SG_PTX_OP_RET) return SG_PTX_NONE;
    if (in->op != SG_PTX_OP_BRA || in->n_opnds != 1) return SG_NONE;
    const sg_ptx_operand_t *o = &in->opnds[0];
    if (o->kind != SG_PTX_OPND_SYMBOL || o->sym_kind != SG_PTX_SYM_LABEL || o->sym >= f->n_labels)
        return SG_NONE;
    uint32_t b = f->labels[o->sym].block;
    return b < f->n_blocks ? b : SG_NONE;
}

/* Mark stage s's never-taken branches for t < p->fast_n (fuse.h). */
static int mark_never_taken(sg_fz_plan_t *p, uint32_t s)
{
    const sg_fz_stage_t *st = &p->stages[s];
    const sg_ptx_func_t *f = st->func;
    bool *never = p->never_taken + p->stmt_base[s];
    bool any_sure = false;
    for (uint32_t i = 0; i < st->n_sites; i++) any_sure |= p->site_sure[p->site_base[s] + i];
    /* (a huge entry is left whole: its reachability table would not be small) */
    if (!any_sure || !f->n_blocks || f->n_blocks > FAST_MAX_BLOCKS ||
        (uint64_t)st->n_sites * f->n_blocks > FAST_MAX_TABLE)
        return SG_OK;
    bool *seen = malloc(f->n_blocks * sizeof *seen);
    uint32_t *stack = malloc(f->n_blocks * sizeof *stack);
    /* per sure site: the blocks it reaches through an edge (it could have run
     * before a branch there) */
    bool *from_site = malloc((size_t)st->n_sites * f->n_blocks * sizeof *from_site);
    if (!seen || !stack || !from_site) {
        free(seen), free(stack), free(from_site);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < st->n_sites; i++) {
        if (!p->site_sure[p->site_base[s] + i]) continue;
        uint32_t sb = f->stmts[st->sites[i].stmt].block;
        if (sb < f->n_blocks) reach_from(f, sb, true, from_site + (size_t)i * f->n_blocks, stack);
    }
    for (uint32_t k = 0; k < f->n_stmts; k++) {
        uint32_t tb = taken_block(f, k);
        if (tb == SG_NONE) continue;
        uint32_t bb = f->stmts[k].block;
        if (bb >= f->n_blocks || f->blocks[bb].rpo == SG_PTX_NONE) continue;
        if (tb != SG_PTX_NONE) reach_from(f, tb, false, seen, stack);
        for (uint32_t i = 0; i < st->n_sites && !never[k]; i++) {
            if (!p->site_sure[p->site_base[s] + i]) continue;
            const sg_fz_site_t *x = &st->sites[i];
            uint32_t sb = f->stmts[x->stmt].block;
            if (sb >= f->n_blocks) continue;
            /* could the site have run before the branch? */
            if ((sb == bb && x->stmt < k) || from_site[(size_t)i * f->n_blocks + bb]) continue;
            /* could it run after the branch is taken? */
            if (tb != SG_PTX_NONE && seen[sb]) continue;
            never[k] = true;
            p->n_never++;
        }
    }
    free(seen), free(stack), free(from_site);
    return SG_OK;
}

/* fast_n, the sure sites and the never-taken branches (fuse.h). Each stage
 * with a must site from t = 0 bounds fast_n by the largest such site's hi. */
static int plan_fast_path(sg_fz_plan_t *p)
{
    uint32_t total = 0, stmts = 0;
    for (uint32_t s = 0; s < p->n_stages; s++) {
        total += p->stages[s].n_sites;
        stmts += p->stages[s].func ? p->stages[s].func->n_stmts : 0;
    }
    p->site_sure = calloc(total ? total : 1, sizeof *p->site_sure);
    p->stmt_base = calloc(p->n_stages, sizeof *p->stmt_base);
    p->never_taken = calloc(stmts ? stmts : 1, sizeof *p->never_taken);
    if (!p->site_sure || !p->stmt_base || !p->never_taken) return SG_ENOMEM;
    p->fast_n = 0;
    if (p->real_mode) return SG_OK;
    uint64_t fast = p->elements;
    for (uint32_t s = 0; s < p->n_stages; s++) {
        uint64_t h = 0;
        for (uint32_t i = 0; i < p->stages[s].n_sites; i++) {
            const sg_fz_site_t *x = &p->stages[s].sites[i];
            if (x->must && x->lo == 0 && x->hi > h) h = x->hi;
        }
        if (h && h < fast) fast = h;
    }
    p->fast_n = fast;
    uint32_t at = 0;
    for (uint32_t s = 0; s < p->n_stages; s++) {
        const sg_fz_stage_t *st = &p->stages[s];
        p->stmt_base[s] = at;
        at += st->func ? st->func->n_stmts : 0;
        for (uint32_t i = 0; i < st->n_sites; i++) {
            const sg_fz_site_t *x = &st->sites[i];
            p->site_sure[p->site_base[s] + i] = x->must && x->lo == 0 && x->hi >= fast;
        }
        if (st->func) {
            int rc = mark_never_taken(p, s);
            if (rc) return rc;
        }
    }
    return SG_OK;
}

int sg_fz_plan(const sg_graph_t *g, sg_fz_stage_t *st, uint32_t n, sg_fz_plan_t *p)
{
    if (!g || !st || !n || !p) return SG_EINVAL;
    memset(p, 0, sizeof *p);
    p->stages = st;
    p->n_stages = n;
    p->elements = st[0].threads;
    p->split_at = SG_NONE;
    for (uint32_t s = 0; s < n; s++) p->cta |= st[s].cta;
    if (p->cta) p->real_mode = true;
    uint32_t total = 0;
    for (uint32_t s = 0; s < n; s++) total += st[s].n_sites;
    p->site_slot = malloc((total ? total : 1) * sizeof *p->site_slot);
    p->site_base = malloc(n * sizeof *p->site_base);
    p->site_known = calloc(total ? total : 1, sizeof *p->site_known);
    p->slots = malloc((total ? total : 1) * sizeof *p->slots);
    slot_extent_t *ext = malloc((total ? total : 1) * sizeof *ext);
    sg_rw_buffers_t bu = {0};
    int rc = sg_rw_buffers_build(g, &bu);
    if (!p->site_slot || !p->site_base || !p->site_known || !p->slots || !ext || rc) {
        free(ext);
        sg_rw_buffers_free(&bu);
        sg_fz_plan_free(p);
        return rc ? rc : SG_ENOMEM;
    }
    uint32_t used = 0;
    for (uint32_t s = 0; s < n && p->split_at == SG_NONE; s++) {
        p->site_base[s] = used;
        uint32_t slots_before = p->n_slots;
        for (uint32_t i = 0; i < st[s].n_sites; i++) {
            const sg_fz_site_t *x = &st[s].sites[i];
            uint64_t key = slot_key(&st[s], x);
            uint32_t k = SG_NONE;
            for (uint32_t j = 0; j < p->n_slots && k == SG_NONE; j++) {
                const sg_fz_slot_t *y = &p->slots[j];
                if (y->addr0 == key && y->stride == x->stride && y->cta_stride == x->cta_stride &&
                    y->width == x->width && y->gs == x->gs)
                    k = j;
            }
            if (k == SG_NONE) {
                k = p->n_slots++;
                sg_fz_slot_t *y = &p->slots[k];
                memset(y, 0, sizeof *y);
                y->addr0 = key;
                y->gs = x->gs;
                y->stride = x->stride;
                y->cta_stride = x->cta_stride;
                y->t_affine = x->t_affine;
                y->width = x->width;
                y->first_stage = s;
                y->first_site = i;
                y->lifted = true;
                if (!y->t_affine)
                    affine_range(y->stride, st[s].ntid, y->cta_stride, st[s].nctaid, &y->cta_lo, &y->cta_hi);
                y->buffer = sg_graph_find_buffer(g, key);
                if (y->gs) {
                    const sg_buffer_t *bb = sg_graph_buffer(g, y->buffer);
                    y->gs_end = bb ? bb->address + bb->size : UINT64_MAX;
                    p->real_mode = true;
                }
                slot_ctype(y, x->type);
                ext[k].tlo = x->lo;
                ext[k].thi = x->hi;
            }
            sg_fz_slot_t *y = &p->slots[k];
            if (x->lo < ext[k].tlo) ext[k].tlo = x->lo;
            if (x->hi > ext[k].thi) ext[k].thi = x->hi;
            y->loaded |= !x->store;
            if (x->store) {
                y->stored = true;
                y->last_store_stage = s;
            }
            if (!x->lowerable) y->lifted = false;
            if (sg_ptx_type_is_float(x->type) != (y->constraint == 'f' || y->constraint == 'd'))
                y->lifted = false; /* float and integer views of one slot: keep it in memory */
            p->site_slot[used++] = k;
        }
        /* the cross-stage rule: overlapping slots, one of them written, must be one */
        for (uint32_t a = 0; a < p->n_slots && p->split_at == SG_NONE; a++)
            for (uint32_t b = 0; b < a && p->split_at == SG_NONE; b++) {
                const sg_fz_slot_t *x = &p->slots[a], *y = &p->slots[b];
                if (!x->stored && !y->stored) continue;
                uint64_t xl, xh, yl, yh;
                slot_span(x, ext[a].tlo, ext[a].thi, &xl, &xh);
                slot_span(y, ext[b].tlo, ext[b].thi, &yl, &yh);
                if (xl >= yh || yl >= xh) continue;
                if (p->cta && cta_local(x, y, st[0].ntid)) continue;
                p->split_at = s;
                snprintf(p->split_reason, sizeof p->split_reason,
                         "stage %u (%s) %s [0x%llx, 0x%llx) and stage %u %s [0x%llx, 0x%llx): "
                         "the same bytes at different elements (not thread-local)",
                         s, st[s].node->u.kernel.name, x->stored ? "writes" : "reads",
                         (unsigned long long)xl, (unsigned long long)xh, y->first_stage,
                         y->stored ? "writes" : "reads", (unsigned long long)yl,
                         (unsigned long long)yh);
            }
        if (p->split_at != SG_NONE) {
            /* forget stage s: its sites and the slots it added */
            p->n_slots = slots_before;
            for (uint32_t j = 0; j < p->n_slots; j++) {
                /* recompute flags from the stages kept */
                p->slots[j].loaded = p->slots[j].stored = false;
                p->slots[j].lifted = true;
            }
            for (uint32_t t = 0; t < s; t++)
                for (uint32_t i = 0; i < st[t].n_sites; i++) {
                    sg_fz_slot_t *y = &p->slots[p->site_slot[p->site_base[t] + i]];
                    const sg_fz_site_t *x = &st[t].sites[i];
                    y->loaded |= !x->store;
                    if (x->store) y->stored = true, y->last_store_stage = t;
                    if (!x->lowerable) y->lifted = false;
                }
            p->n_stages = s;
        }
    }
    /* grid-stride loops: every access stays in memory, in the original geometry */
    if (p->real_mode)
        for (uint32_t k = 0; k < p->n_slots; k++) p->slots[k].lifted = false;
    /* preloads and dead write-backs */
    for (uint32_t k = 0; k < p->n_slots; k++) {
        sg_fz_slot_t *y = &p->slots[k];
        if (!y->lifted) continue;
        /* preload only what the run reads before any stage of it writes:
         * later reads of a stored slot are forwarded (and fall back to a
         * real load where the store did not happen) */
        bool read_first = false;
        for (uint32_t s = 0; s < p->n_stages && !read_first; s++) {
            bool ld = false, stv = false;
            for (uint32_t i = 0; i < st[s].n_sites; i++) {
                if (p->site_slot[p->site_base[s] + i] != k) continue;
                if (st[s].sites[i].store) stv = true;
                else ld = true;
            }
            if (stv && !ld) break;
            read_first = ld;
        }
        if (y->loaded && read_first) {
            /* the largest bound a load site has, if its bytes are all in one buffer */
            uint64_t best = 0;
            sg_fz_bound_t best_rt = {SG_NONE, 0, false, 0};
            for (uint32_t s = 0; s < p->n_stages; s++)
                for (uint32_t i = 0; i < st[s].n_sites; i++) {
                    const sg_fz_site_t *x = &st[s].sites[i];
                    if (p->site_slot[p->site_base[s] + i] != k || x->store || x->lo != 0) continue;
                    uint64_t lo, hi;
                    uint32_t b;
                    slot_span(y, 0, x->hi, &lo, &hi);
                    if (x->hi > best && inside_buffer(g, lo, hi, &b)) {
                        best = x->hi;
                        best_rt = x->hi_rt;
                        if (best_rt.param_off == SG_NONE) best_rt.k = (int64_t)best;
                        y->first_stage = s; /* base and bound: that stage's parameters */
                        y->first_site = i;
                    }
                }
            if (best) {
                y->preload = true;
                y->preload_n = best;
                y->preload_rt = best_rt;
            }
        }
        if (y->stored && y->buffer != SG_NONE && dead_buffer(g, &bu, y->buffer, st, p->n_stages))
            y->dead = true;
    }
    /* loads whose register value is certainly valid */
    for (uint32_t s = 0; s < p->n_stages; s++)
        for (uint32_t i = 0; i < st[s].n_sites; i++) {
            const sg_fz_site_t *x = &st[s].sites[i];
            uint32_t k = p->site_slot[p->site_base[s] + i];
            const sg_fz_slot_t *y = &p->slots[k];
            if (x->store || !y->lifted) continue;
            bool known = y->preload && x->hi <= y->preload_n && y->preload_rt.param_off == x->hi_rt.param_off;
            for (uint32_t t = 0; t < s && !known; t++)
                for (uint32_t j = 0; j < st[t].n_sites && !known; j++) {
                    const sg_fz_site_t *w = &st[t].sites[j];
                    if (p->site_slot[p->site_base[t] + j] != k || !w->store || !w->must) continue;
                    known = w->lo <= x->lo && x->hi <= w->hi;
                }
            p->site_known[p->site_base[s] + i] = known;
        }
    free(ext);
    sg_rw_buffers_free(&bu);
    rc = plan_fast_path(p);
    if (rc) sg_fz_plan_free(p);
    return rc;
}
