/* sass_loop.c: loop summaries for the SASS dataflow (sass_internal.h).
 *
 * Without them a loop joins its entry state with its back edges, so every
 * register the loop changes becomes "differs across paths": CuPy's
 * grid-stride loops (`for (i = gid; i < n; i += ntid.x*nctaid.x)`) lose
 * every index. A summary instead gives the loop's header the state at its
 * K-th pass (K >= 0, an atom of the polynomials), proven by induction:
 *
 *   1. E, the state entering the header (the join of its entry edges), is
 *      run through the loop body once; a register whose value went from e
 *      to e + c (c free of K) is a candidate induction variable, one that
 *      kept its value a candidate invariant, any other is unknown.
 *   2. H(K) gives the candidates e + K*c and e; the body is run from H(K)
 *      and every candidate must come back to the back edge as H(K+1)
 *      exactly (e + (K+1)*c, e). Candidates that do not are made unknown and
 *      the check repeats. H(0) is E (weakened), and H(K) -> H(K+1) holds for
 *      every K, so H(K) describes every pass through the header.
 *   3. Facts: those of E that the back edge keeps, and the loop condition:
 *      a fact F(K) along the back edge whose F(K-1) at K = 0 is a fact of E
 *      holds at every pass as F(K-1) (`i0 + K*S < n` from `i0 < n` and the
 *      latch's `i0 + (K+1)*S < n`).
 *
 * Leaving the loop, the values that use K are rewritten with the K the
 * exit's own condition gives (an equality, K = R - 1 for a counter that
 * ends at R), or made unknown. Only outermost loops that access global
 * memory are summarized, at most SG_LOOPS_MAX of them; a summary holds only
 * for the entry state it was proven from, so the fixpoint repeats passes
 * until no entry state changes (sass_flow.c). */
#include <stdlib.h>
#include <string.h>

#include "code/sass_internal.h"
#include "graph/graph.h"

/* ---- finding loops ----------------------------------------------------------------- */

/* Depth-first order from block 0: rpo[i] is the i-th block in reverse
 * postorder, num[b] its position (UINT32_MAX for unreachable blocks). */
static int reverse_postorder(const ctx_t *x, uint32_t *rpo, uint32_t *num, uint32_t *n_out)
{
    uint32_t nb = x->nblocks;
    uint32_t *stack = malloc(nb * sizeof *stack);
    uint8_t *next = calloc(nb, 1); /* successor index to visit next; 3: done */
    uint32_t *post = malloc(nb * sizeof *post);
    if (!stack || !next || !post) {
        free(stack);
        free(next);
        free(post);
        return SG_ENOMEM;
    }
    for (uint32_t b = 0; b < nb; b++)
        num[b] = UINT32_MAX;
    uint32_t sp = 0, np = 0;
    stack[sp++] = 0;
    next[0] = 1;
    while (sp) {
        uint32_t b = stack[sp - 1];
        if (next[b] <= 2) {
            uint32_t s = x->blocks[b].succ[next[b] - 1];
            next[b]++;
            if (s != UINT32_MAX && !next[s]) {
                next[s] = 1;
                stack[sp++] = s;
            }
            continue;
        }
        post[np++] = b;
        sp--;
    }
    for (uint32_t i = 0; i < np; i++) {
        rpo[i] = post[np - 1 - i];
        num[rpo[i]] = i;
    }
    *n_out = np;
    free(stack);
    free(next);
    free(post);
    return 0;
}

/* Immediate dominators (Cooper, Harvey and Kennedy's iteration over the
 * reverse postorder). */
static void dominators(const ctx_t *x, const uint32_t *rpo, const uint32_t *num, uint32_t n,
                       const uint32_t *pred_off, const uint32_t *preds, uint32_t *idom)
{
    for (uint32_t b = 0; b < x->nblocks; b++)
        idom[b] = UINT32_MAX;
    idom[0] = 0;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = 1; i < n; i++) {
            uint32_t b = rpo[i], nd = UINT32_MAX;
            for (uint32_t k = pred_off[b]; k < pred_off[b + 1]; k++) {
                uint32_t p = preds[k];
                if (idom[p] == UINT32_MAX)
                    continue;
                if (nd == UINT32_MAX) {
                    nd = p;
                    continue;
                }
                uint32_t a = p, c = nd;
                while (a != c) {
                    while (num[a] > num[c])
                        a = idom[a];
                    while (num[c] > num[a])
                        c = idom[c];
                }
                nd = a;
            }
            if (nd != UINT32_MAX && idom[b] != nd) {
                idom[b] = nd;
                changed = true;
            }
        }
    }
}

static bool dominates(const uint32_t *idom, uint32_t h, uint32_t b)
{
    for (;;) {
        if (b == h)
            return true;
        if (b == 0 || idom[b] == UINT32_MAX || idom[b] == b)
            return false;
        b = idom[b];
    }
}

static bool alloc_state(ctx_t *x, state_t *s)
{
    memset(s, 0, sizeof *s);
    s->slots = calloc(x->nslots ? x->nslots : 1, sizeof(slot_t));
    return s->slots != NULL;
}

int sg_loops_find(ctx_t *x)
{
    x->loops = NULL;
    x->nloops = 0;
    uint32_t nb = x->nblocks;
    if (nb < 2)
        return 0;
    int rc = SG_ENOMEM;
    uint32_t *rpo = malloc(nb * sizeof *rpo), *num = malloc(nb * sizeof *num);
    uint32_t *idom = malloc(nb * sizeof *idom), *pred_off = calloc(nb + 1, sizeof *pred_off);
    uint32_t *preds = malloc(2 * nb * sizeof *preds), *stack = malloc(nb * sizeof *stack);
    uint8_t *body = calloc(nb, 1);
    sg_loop_t *found = calloc(SG_LOOPS_MAX, sizeof *found);
    uint32_t nfound = 0, n = 0;
    if (!rpo || !num || !idom || !pred_off || !preds || !stack || !body || !found)
        goto out;
    for (uint32_t b = 0; b < nb; b++)
        for (int k = 0; k < 2; k++)
            if (x->blocks[b].succ[k] != UINT32_MAX)
                pred_off[x->blocks[b].succ[k] + 1]++;
    for (uint32_t b = 0; b < nb; b++)
        pred_off[b + 1] += pred_off[b];
    {
        uint32_t *fill = calloc(nb, sizeof *fill);
        if (!fill)
            goto out;
        for (uint32_t b = 0; b < nb; b++)
            for (int k = 0; k < 2; k++) {
                uint32_t s = x->blocks[b].succ[k];
                if (s != UINT32_MAX)
                    preds[pred_off[s] + fill[s]++] = b;
            }
        free(fill);
    }
    if ((rc = reverse_postorder(x, rpo, num, &n)))
        goto out;
    dominators(x, rpo, num, n, pred_off, preds, idom);
    rc = 0;
    /* headers in reverse postorder: an outer loop's header comes before
     * the headers of the loops inside it */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = rpo[i];
        if (h == 0)
            continue; /* no entry edge to start from */
        memset(body, 0, nb);
        bool is_loop = false;
        uint32_t sp = 0;
        for (uint32_t k = pred_off[h]; k < pred_off[h + 1]; k++) {
            uint32_t b = preds[k];
            if (num[b] == UINT32_MAX || num[b] < num[h] || !dominates(idom, h, b))
                continue; /* not a back edge */
            is_loop = true;
            if (!body[b] && b != h) {
                body[b] = 1;
                stack[sp++] = b;
            }
        }
        if (!is_loop)
            continue;
        body[h] = 1;
        while (sp) {
            uint32_t b = stack[--sp];
            for (uint32_t k = pred_off[b]; k < pred_off[b + 1]; k++) {
                uint32_t p = preds[k];
                if (!body[p] && num[p] != UINT32_MAX) {
                    body[p] = 1;
                    stack[sp++] = p;
                }
            }
        }
        /* the innermost loop found before that holds it: its parent (one
         * level of nesting is summarized, as CuPy's loop around sinf's
         * table loop) */
        uint32_t parent = UINT32_MAX;
        for (uint32_t l = nfound; l-- > 0 && parent == UINT32_MAX;)
            if (found[l].member[h])
                parent = l;
        bool inner = parent != UINT32_MAX && found[parent].parent != UINT32_MAX;
        bool access = false;
        for (uint32_t b = 0; b < nb && !access; b++)
            if (body[b])
                for (uint32_t j = 0; j < x->blocks[b].count && !access; j++)
                    access = sg_flow_is_global_access(x->in[x->blocks[b].first + j].op);
        if (inner || !access || nfound == SG_LOOPS_MAX)
            continue;
        sg_loop_t *L = &found[nfound];
        L->member = malloc(nb);
        if (!L->member || !alloc_state(x, &L->entry) || !alloc_state(x, &L->head)) {
            free(L->member);
            free(L->entry.slots);
            free(L->head.slots);
            rc = SG_ENOMEM;
            goto out;
        }
        memcpy(L->member, body, nb);
        L->head_block = h;
        L->parent = parent;
        L->atom = (uint16_t)(A_LOOP | nfound);
        sg_poly_atom(&L->flat, L->atom);
        nfound++;
    }
out:
    if (rc) {
        for (uint32_t l = 0; l < nfound; l++) {
            free(found[l].member);
            free(found[l].entry.slots);
            free(found[l].head.slots);
        }
        free(found);
    } else if (nfound) {
        x->loops = found;
        x->nloops = nfound;
    } else {
        free(found);
    }
    free(rpo);
    free(num);
    free(idom);
    free(pred_off);
    free(preds);
    free(stack);
    free(body);
    return rc;
}

void sg_loops_free(ctx_t *x)
{
    for (uint32_t l = 0; l < x->nloops; l++) {
        free(x->loops[l].member);
        free(x->loops[l].entry.slots);
        free(x->loops[l].head.slots);
    }
    free(x->loops);
    x->loops = NULL;
    x->nloops = 0;
}

void sg_loops_drop(ctx_t *x)
{
    for (uint32_t l = 0; l < x->nloops; l++)
        x->loops[l].summarized = false;
}

/* ---- values that use K --------------------------------------------------------------- */

static bool val_uses(const val_t *v, uint16_t atom)
{
    return v->kind != V_TOP && sg_poly_has_atom_in(&v->p, atom, atom);
}

static bool cmp_uses(const cmp_t *c, uint16_t atom)
{
    return sg_poly_has_atom_in(&c->l, atom, atom) || sg_poly_has_atom_in(&c->r, atom, atom);
}

/* v with atom := by, or unknown when that does not fit. */
static val_t val_subst(const val_t *v, uint16_t atom, const sg_poly_t *by)
{
    if (!val_uses(v, atom))
        return *v;
    val_t r = *v;
    if (by && sg_poly_subst(&r.p, &v->p, atom, by))
        return r;
    r = sg_val_top(F_JOIN);
    sg_val_merge_prov(&r, v, true);
    return r;
}

/* The state leaving loop L (by = the K its exit condition gives, or NULL:
 * forget what uses K). */
static void leave_with(ctx_t *x, sg_loop_t *L, state_t *st, const sg_poly_t *by)
{
    for (uint32_t i = 0; i < x->nslots; i++) {
        st->slots[i].v = val_subst(&st->slots[i].v, L->atom, by);
        st->slots[i].alt = val_subst(&st->slots[i].alt, L->atom, by);
    }
    for (int p = 0; p < NPRED; p++) {
        pred_t *q = &st->preds[p];
        bool uses = (q->kind == P_CMP && cmp_uses(&q->c, L->atom)) ||
                    (q->kind == P_CARRY && sg_poly_has_atom_in(&q->p, L->atom, L->atom));
        if (!uses)
            continue;
        bool ok = by != NULL;
        if (ok && q->kind == P_CMP)
            ok = sg_poly_subst(&q->c.l, &q->c.l, L->atom, by) &&
                 sg_poly_subst(&q->c.r, &q->c.r, L->atom, by);
        if (ok && q->kind == P_CARRY)
            ok = sg_poly_subst(&q->p, &q->p, L->atom, by);
        if (!ok) {
            memset(q, 0, sizeof *q);
            q->ver = ++x->verc;
        }
    }
    uint8_t nf = 0;
    for (uint8_t i = 0; i < st->nfacts; i++) {
        cmp_t f = st->facts[i];
        if (cmp_uses(&f, L->atom) &&
            !(by && sg_poly_subst(&f.l, &f.l, L->atom, by) && sg_poly_subst(&f.r, &f.r, L->atom, by))) {
            st->cond_unknown = true; /* which K the threads left at is not kept */
            continue;
        }
        st->facts[nf++] = f;
    }
    st->nfacts = nf;
}

/* The K an equality fact fixes: l - r = a*K + rest with a = +-1. */
static bool solve_k(const cmp_t *f, uint16_t atom, sg_poly_t *k)
{
    if (f->cmp != C_EQ)
        return false;
    sg_poly_t d, with, rest;
    if (!sg_poly_add(&d, &f->l, &f->r, -1) || !sg_poly_split(&d, atom, &with, &rest))
        return false;
    int64_t a;
    if (!sg_poly_is_const(&with, &a) || (a != 1 && a != -1) ||
        sg_poly_has_atom_in(&rest, atom, atom))
        return false;
    /* a*K + rest = 0: K = -rest / a */
    sg_poly_t z = {0};
    return sg_poly_add(k, &z, &rest, -a);
}

static void leave(ctx_t *x, sg_loop_t *L, state_t *st)
{
    for (uint8_t i = 0; i < st->nfacts; i++) {
        sg_poly_t k;
        if (cmp_uses(&st->facts[i], L->atom) && solve_k(&st->facts[i], L->atom, &k)) {
            leave_with(x, L, st, &k);
            return;
        }
    }
    leave_with(x, L, st, NULL);
}

/* st rewritten for every summarized loop the edge b -> s leaves (a copy in
 * scratch when there is one); self (a loop being summarized) left out. */
static const state_t *exits(ctx_t *x, const sg_loop_t *self, uint32_t b, uint32_t s,
                            const state_t *st, state_t *scratch)
{
    const state_t *r = st;
    for (uint32_t l = 0; l < x->nloops; l++) {
        sg_loop_t *L = &x->loops[l];
        if (L == self || !L->summarized || !L->member[b] || L->member[s])
            continue;
        if (r != scratch) {
            sg_flow_state_copy(x, scratch, st);
            r = scratch;
        }
        leave(x, L, scratch);
    }
    return r;
}

/* The summaries on an edge b -> s (self left out): NULL when it enters or
 * returns to a summarized header (*in_s then gets the summary once, and
 * *dirty is set), else what to join into s. */
static const state_t *apply(ctx_t *x, const sg_loop_t *self, uint32_t b, uint32_t s,
                            const state_t *st, state_t *scratch, state_t *in_s, uint8_t *dirty)
{
    for (uint32_t l = 0; l < x->nloops; l++) {
        sg_loop_t *L = &x->loops[l];
        if (L == self || !L->summarized || L->head_block != s)
            continue;
        if (!L->member[b] && !in_s->reached) {
            sg_flow_state_copy(x, in_s, &L->head);
            *dirty = 1;
        }
        return NULL; /* the summary is the header's state */
    }
    return exits(x, self, b, s, st, scratch);
}

const state_t *sg_loops_edge(ctx_t *x, uint32_t b, uint32_t s, const state_t *st,
                             state_t *scratch, state_t *in, uint8_t *dirty)
{
    return apply(x, NULL, b, s, st, scratch, &in[s], &dirty[s]);
}

/* ---- summaries ------------------------------------------------------------------------ */

/* Do two states say the same (versions aside: they differ between passes)? */
static bool same_state(const ctx_t *x, const state_t *a, const state_t *b)
{
    if (a->reached != b->reached || a->cond_unknown != b->cond_unknown || a->nfacts != b->nfacts)
        return false;
    for (uint8_t i = 0; i < a->nfacts; i++) {
        bool found = false;
        for (uint8_t j = 0; j < b->nfacts && !found; j++)
            found = sg_cmp_eq(&a->facts[i], &b->facts[j]);
        if (!found)
            return false;
    }
    for (int p = 0; p < NPRED; p++) {
        const pred_t *u = &a->preds[p], *v = &b->preds[p];
        if (u->kind != v->kind || (u->g != 0) != (v->g != 0) || u->half != v->half ||
            u->nimp != v->nimp || (u->kind == P_CMP && !sg_cmp_eq(&u->c, &v->c)) ||
            (u->kind == P_CARRY && !sg_poly_eq(&u->p, &v->p)))
            return false;
    }
    for (uint32_t i = 0; i < x->nslots; i++) {
        val_t u = sg_flow_slot_read(&a->slots[i], NULL), v = sg_flow_slot_read(&b->slots[i], NULL);
        if (!sg_val_eq(&u, &v))
            return false;
    }
    return true;
}

typedef struct {
    uint32_t *members; /* block numbers, ascending */
    uint32_t n;
    uint32_t *index; /* block -> position in members */
    state_t *in;     /* per member */
    uint8_t *dirty;
    state_t cur, scratch;
} region_t;

/* The join of the states entering L's header from outside it: from the
 * whole kernel's in-states (in), or inside the region R of the loop being
 * summarized (self) that holds L. */
static void entry_state(ctx_t *x, sg_loop_t *L, const state_t *in, const sg_loop_t *self,
                        const region_t *R, state_t *E, state_t *tmp, state_t *scratch)
{
    E->reached = false;
    for (uint32_t p = 0; p < x->nblocks; p++) {
        if (L->member[p] || (self && !self->member[p]))
            continue;
        const state_t *ip = self ? &R->in[R->index[p]] : &in[p];
        if (!ip->reached)
            continue;
        for (int k = 0; k < 2; k++) {
            if (x->blocks[p].succ[k] != L->head_block)
                continue;
            sg_flow_state_copy(x, tmp, ip);
            sg_flow_run_block(x, tmp, p);
            sg_flow_edge_facts(x, tmp, p, k);
            const state_t *j = exits(x, self, p, L->head_block, tmp, scratch);
            sg_flow_state_join(x, E, j, L->head_block);
        }
    }
}

/* Run L's blocks to their fixed point from header state H; back: the join
 * of the states on the edges back to the header. */
static int run_region(ctx_t *x, const sg_loop_t *L, region_t *R, const state_t *H, state_t *back)
{
    back->reached = false;
    for (uint32_t i = 0; i < R->n; i++) {
        R->in[i].reached = false;
        R->dirty[i] = 0;
    }
    uint32_t hi = R->index[L->head_block];
    sg_flow_state_copy(x, &R->in[hi], H);
    R->dirty[hi] = 1;
    uint64_t visits = 0, cap = (uint64_t)R->n * 16 + 64;
    bool any = true;
    while (any) {
        any = false;
        for (uint32_t i = 0; i < R->n; i++) {
            if (!R->dirty[i])
                continue;
            R->dirty[i] = 0;
            any = true;
            if (++visits > cap)
                return SG_ELIMIT;
            uint32_t b = R->members[i];
            sg_flow_state_copy(x, &R->cur, &R->in[i]);
            sg_flow_run_block(x, &R->cur, b);
            for (int k = 0; k < 2; k++) {
                uint32_t s = x->blocks[b].succ[k];
                if (s == UINT32_MAX || !L->member[s])
                    continue;
                uint8_t nf0 = R->cur.nfacts;
                bool cu0 = R->cur.cond_unknown;
                sg_flow_edge_facts(x, &R->cur, b, k);
                if (s == L->head_block) {
                    sg_flow_state_join(x, back, &R->cur, s);
                } else {
                    /* the summaries of the loops inside */
                    uint32_t si = R->index[s];
                    const state_t *j = apply(x, L, b, s, &R->cur, &R->scratch, &R->in[si],
                                             &R->dirty[si]);
                    if (j && sg_flow_state_join(x, &R->in[si], j, s))
                        R->dirty[si] = 1;
                }
                R->cur.nfacts = nf0;
                R->cur.cond_unknown = cu0;
                R->cur.nheld = 0;
            }
        }
        if (x->err)
            return x->err;
    }
    return 0;
}

static int summarize(ctx_t *x, sg_loop_t *L);

/* (Re)summarize the loop C from its entry state E when E changed. */
static int resummarize(ctx_t *x, sg_loop_t *C, const state_t *E, bool *changed)
{
    if (C->tried && same_state(x, E, &C->entry))
        return 0;
    bool was = C->summarized;
    C->tried = true;
    if (!E->reached) {
        C->entry.reached = false;
        C->summarized = false;
        *changed |= was;
        return 0;
    }
    sg_flow_state_copy(x, &C->entry, E);
    int rc = summarize(x, C);
    *changed |= was || C->summarized;
    return rc;
}

/* run_region, with the loops directly inside L summarized from its states
 * until those no longer change (at a bound, without them). */
static int region_fixed(ctx_t *x, sg_loop_t *L, region_t *R, const state_t *H, state_t *back)
{
    uint32_t self = (uint32_t)(L - x->loops);
    bool inner = false;
    for (uint32_t l = 0; l < x->nloops; l++)
        inner |= x->loops[l].parent == self;
    if (!inner)
        return run_region(x, L, R, H, back);
    state_t E = {0}, tmp = {0};
    int rc = SG_ENOMEM;
    if (!alloc_state(x, &E) || !alloc_state(x, &tmp))
        goto out;
    for (int round = 0;; round++) {
        if ((rc = run_region(x, L, R, H, back)))
            break;
        bool changed = false;
        for (uint32_t l = 0; l < x->nloops && !rc; l++) {
            sg_loop_t *C = &x->loops[l];
            if (C->parent != self)
                continue;
            entry_state(x, C, NULL, L, R, &E, &tmp, &R->scratch);
            rc = resummarize(x, C, &E, &changed);
        }
        if (rc || !changed)
            break;
        if (round == 3) {
            for (uint32_t l = 0; l < x->nloops; l++)
                if (x->loops[l].parent == self)
                    x->loops[l].summarized = false;
            rc = run_region(x, L, R, H, back);
            break;
        }
    }
out:
    free(E.slots);
    free(tmp.slots);
    return rc;
}

enum { S_TOP = 0, S_INV, S_IV };

/* Are v's pointer candidates and flags all in h's? */
static bool prov_within(const val_t *v, const val_t *h)
{
    if ((v->flags & ~h->flags) & ~F_JOIN)
        return false;
    for (uint8_t i = 0; i < v->nprov; i++) {
        bool found = false;
        for (uint8_t j = 0; j < h->nprov && !found; j++)
            found = h->prov[j].atom == v->prov[i].atom && !(v->prov[i].base & ~h->prov[j].base);
        if (!found && !(h->flags & F_MANY))
            return false;
    }
    return true;
}

/* An unknown value standing for every pass: what flowed into it so far. */
static val_t loop_top(const val_t *a, const val_t *b)
{
    val_t t = sg_val_top(F_JOIN);
    sg_val_merge_prov(&t, a, true);
    sg_val_merge_prov(&t, b, true);
    return t;
}

/* e + K*c (the poly of value e); false when it does not fit. */
static bool at_pass(uint16_t atom, const sg_poly_t *e, const sg_poly_t *c, sg_poly_t *out)
{
    sg_poly_t k, kc;
    sg_poly_atom(&k, atom);
    return sg_poly_mul(&kc, &k, c) && sg_poly_add(out, e, &kc, 1);
}

/* Is c a comparison of two constants that holds? */
static bool const_true(const cmp_t *c)
{
    sg_poly_t d;
    int64_t v;
    if (!sg_poly_add(&d, &c->l, &c->r, -1) || !sg_poly_is_const(&d, &v))
        return false;
    switch (c->cmp) {
    case C_LT: return v < 0;
    case C_LE: return v <= 0;
    case C_GT: return v > 0;
    case C_GE: return v >= 0;
    case C_EQ: return v == 0;
    default: return v != 0;
    }
}

/* A counter: the passes K = 0, 1, 2, ... all have K != m (a header fact
 * K - m != 0, m a constant), so they stop before m: K <= m - 1 (m >= 0;
 * below 2^32 for a 32-bit comparison, whose first K with K == m mod 2^32
 * is then m). */
static void counter_bound(const sg_loop_t *L, state_t *H)
{
    uint8_t n = H->nfacts;
    for (uint8_t i = 0; i < n; i++) {
        const cmp_t *h = &H->facts[i];
        sg_poly_t d, with, rest;
        int64_t a, c0;
        if (h->cmp != C_NE || !sg_poly_add(&d, &h->l, &h->r, -1) ||
            !sg_poly_split(&d, L->atom, &with, &rest) || !sg_poly_is_const(&with, &a) ||
            (a != 1 && a != -1) || !sg_poly_is_const(&rest, &c0))
            continue;
        int64_t m = -c0 * a; /* a*K + c0 = 0 at K = m */
        if (m < 0 || (!h->wide && m > (int64_t)UINT32_MAX) || m == INT64_MIN)
            continue;
        cmp_t f = {.cmp = C_LE, .wide = true};
        sg_poly_atom(&f.l, L->atom);
        sg_poly_const(&f.r, m - 1);
        sg_flow_add_fact(H, &f);
    }
}

/* The facts of the header at every pass: E's (facts are about values a
 * thread never changes, so what held on entry holds at every pass), and
 * F(K-1) for a fact F of the back edge whose F(-1) is one of E's. exact:
 * these facts describe exactly the passes that reach the header (nothing
 * else in the body decides, and F(K) implies F(K-1)). cur: the header's
 * facts the body ran with. */
static void head_facts(const sg_loop_t *L, const state_t *E, const state_t *cur,
                       const state_t *B, state_t *H, bool *exact)
{
    *exact = !E->cond_unknown && !B->cond_unknown;
    H->nfacts = 0;
    for (uint8_t i = 0; i < E->nfacts; i++)
        sg_flow_add_fact(H, &E->facts[i]);
    sg_poly_t km1, minus1;
    sg_poly_const(&minus1, -1);
    sg_poly_atom(&km1, L->atom);
    sg_poly_add(&km1, &km1, &minus1, 1);
    for (uint8_t j = 0; j < B->nfacts; j++) {
        const cmp_t *f = &B->facts[j];
        bool known = false;
        for (uint8_t i = 0; i < cur->nfacts && !known; i++)
            known = sg_cmp_eq(&cur->facts[i], f);
        for (uint8_t i = 0; i < E->nfacts && !known; i++)
            known = sg_cmp_eq(&E->facts[i], f);
        if (known)
            continue; /* carried round from the header */
        cmp_t g = *f, g0 = *f;
        bool base = cmp_uses(f, L->atom) && sg_poly_subst(&g.l, &f->l, L->atom, &km1) &&
                    sg_poly_subst(&g.r, &f->r, L->atom, &km1) &&
                    sg_poly_subst(&g0.l, &f->l, L->atom, &minus1) &&
                    sg_poly_subst(&g0.r, &f->r, L->atom, &minus1);
        /* F(-1): one of E's facts, or a comparison of constants that holds */
        bool in_e = base && const_true(&g0);
        for (uint8_t i = 0; base && i < E->nfacts && !in_e; i++)
            in_e = sg_cmp_eq(&E->facts[i], &g0);
        if (!in_e || !sg_flow_add_fact(H, &g)) {
            *exact = false; /* the body decides more than the facts say */
            continue;
        }
        /* exact only when F(K) implies F(K-1): its left side minus its
         * right grows with K by a positive multiple of the launch sizes
         * (for < and <=; shrinks for > and >=) */
        sg_poly_t d, with, rest;
        bool mono = sg_poly_add(&d, &g.l, &g.r, -1) && sg_poly_split(&d, L->atom, &with, &rest) &&
                    with.n > 0;
        int sign = g.cmp == C_LT || g.cmp == C_LE ? 1 : g.cmp == C_GT || g.cmp == C_GE ? -1 : 0;
        for (uint8_t t = 0; mono && t < with.n; t++) {
            mono = sign != 0 && with.t[t].c * sign > 0;
            for (int k = 0; mono && k < SG_POLY_DEGREE; k++) {
                uint16_t a = with.t[t].at[k];
                mono = !a || (a >= SG_SASS_NTID_X && a <= SG_SASS_NCTAID_Z);
            }
        }
        if (!mono)
            *exact = false;
    }
}

/* ---- CuPy's unrolled grid-stride loop ------------------------------------------------ */

/* ntid.x*nctaid.x: the grid's threads, the step of a grid-stride loop. */
static void grid_size(sg_poly_t *s)
{
    const uint16_t at[SG_POLY_DEGREE] = {0, 0, SG_SASS_NTID_X, SG_SASS_NCTAID_X};
    memset(s, 0, sizeof *s);
    sg_poly_add_term(s, 1, at);
}

/* Is the mod atom R = (Q + 1) mod U with Q = floor((n - 1 - i0) / S) for
 * the bounds check g "i0 < n" (S the grid size)? Then *u = U. */
static bool remainder_of_trips(const ctx_t *x, uint16_t r, const cmp_t *g, uint32_t *u)
{
    /* a 64-bit bounds check: n - 1 - i0 >= 0 is then the dividend's value */
    if (r < A_MOD || r > A_MOD_MAX || (r & 0xff) >= x->nmod || g->cmp != C_LT || !g->wide)
        return false;
    const sg_mod_t *m = &x->mods[r & 0xff];
    sg_poly_t one, q;
    sg_poly_const(&one, 1);
    if (!sg_poly_add(&q, &m->value, &one, -1) || q.n != 1 || q.t[0].c != 1)
        return false;
    uint16_t qa = sg_poly_term_atom(&q.t[0]);
    if ((qa & 0xff00) != A_QUO || (qa & 0xff) >= x->nquo)
        return false;
    const sg_quo_t *quo = &x->quo[qa & 0xff];
    sg_poly_t s, d;
    grid_size(&s);
    /* the dividend is n - 1 - i0 */
    if (!sg_poly_eq(&quo->divisor, &s) || !sg_poly_add(&d, &g->r, &g->l, -1) ||
        !sg_poly_add(&d, &d, &one, -1) || !sg_poly_eq(&d, &quo->dividend))
        return false;
    *u = m->modulus;
    return true;
}

/* v = i0 + c*S for a poly c (the rest of v): add c*S to g's left side. */
static bool shifted(const cmp_t *g, const sg_poly_t *c, cmp_t *out)
{
    sg_poly_t s, cs;
    grid_size(&s);
    *out = *g;
    return sg_poly_mul(&cs, c, &s) && sg_poly_add(&out->l, &g->l, &cs, 1);
}

/* The remainder loop before an unrolled one: its header's fact R - K != 0
 * (a counter from R down to 0, entered when R != 0) with R = (Q+1) mod U
 * of the trip count Q + 1 = floor((n-1-i0)/S) + 1 of `for (i = i0; i < n;
 * i += S)`: the passes K < R <= min(U-1, Q+1) give i0 + K*S < n and
 * K <= U-2. */
static void remainder_lemma(const ctx_t *x, const sg_loop_t *L, const state_t *E, state_t *H)
{
    sg_poly_t k;
    sg_poly_atom(&k, L->atom);
    uint8_t n = H->nfacts;
    for (uint8_t i = 0; i < n; i++) {
        const cmp_t *h = &H->facts[i];
        sg_poly_t d, with, rest;
        int64_t a;
        if (h->cmp != C_NE || !sg_poly_add(&d, &h->l, &h->r, -1) ||
            !sg_poly_split(&d, L->atom, &with, &rest) || !sg_poly_is_const(&with, &a) ||
            (a != 1 && a != -1) || rest.n != 1 || rest.t[0].c != -a)
            continue;
        uint16_t r = sg_poly_term_atom(&rest.t[0]);
        for (uint8_t j = 0; j < E->nfacts; j++) {
            uint32_t u;
            if (!remainder_of_trips(x, r, &E->facts[j], &u) || u < 2)
                continue;
            cmp_t f1, f2 = {.cmp = C_LE, .wide = true};
            sg_poly_t s, top;
            grid_size(&s);
            sg_poly_const(&top, (int64_t)u - 2);
            if (shifted(&E->facts[j], &k, &f1) && sg_poly_mul(&f2.l, &k, &s) &&
                sg_poly_mul(&f2.r, &top, &s)) {
                sg_flow_add_fact(H, &f1);
                sg_flow_add_fact(H, &f2);
            }
            return;
        }
    }
}

/* The loop unrolled by U after that remainder loop: its back edge's fact
 * i0 + (R + U*(K+1))*S < n, its entry fact Q >= U-1 (T = Q+1 >= U passes
 * in all). The passes T - R left are a multiple of U, so a header pass
 * i0 + (R + U*K)*S < n (or K = 0, T >= U) has U passes left:
 * i0 + (R + U*K + U-1)*S < n. Sets L->flat = R + U*K. */
static void unroll_lemma(const ctx_t *x, sg_loop_t *L, const state_t *E, const state_t *B,
                         state_t *H)
{
    sg_poly_t k, s;
    sg_poly_atom(&k, L->atom);
    grid_size(&s);
    for (uint8_t i = 0; i < B->nfacts; i++) {
        const cmp_t *f = &B->facts[i];
        if (f->cmp != C_LT || !cmp_uses(f, L->atom))
            continue;
        for (uint8_t j = 0; j < E->nfacts; j++) {
            const cmp_t *g = &E->facts[j];
            if (g->cmp != C_LT || g->wide != f->wide || g->uns != f->uns)
                continue;
            /* (f.l - f.r) - (g.l - g.r) = S * (R + U*K + U) */
            sg_poly_t df, dg, diff;
            if (!sg_poly_add(&df, &f->l, &f->r, -1) || !sg_poly_add(&dg, &g->l, &g->r, -1) ||
                !sg_poly_add(&diff, &df, &dg, -1))
                continue;
            for (uint8_t t = 0; t < diff.n; t++)
                for (int a = 0; a < SG_POLY_DEGREE; a++) {
                    uint16_t r = diff.t[t].at[a];
                    uint32_t u;
                    if (r < A_MOD || r > A_MOD_MAX || !remainder_of_trips(x, r, g, &u))
                        continue;
                    sg_poly_t flat, fu, want, rp, cu;
                    sg_poly_atom(&rp, r);
                    sg_poly_const(&cu, u);
                    if (!sg_poly_mul(&flat, &k, &cu) || !sg_poly_add(&flat, &flat, &rp, 1) ||
                        !sg_poly_add(&fu, &flat, &cu, 1) || !sg_poly_mul(&want, &fu, &s) ||
                        !sg_poly_eq(&want, &diff))
                        continue;
                    /* Q >= U - 1 on entry */
                    sg_poly_t q = x->mods[r & 0xff].value, one, um1;
                    sg_poly_const(&one, 1);
                    sg_poly_const(&um1, (int64_t)u - 1);
                    sg_poly_add(&q, &q, &one, -1);
                    bool entered = false;
                    for (uint8_t e = 0; e < E->nfacts && !entered; e++) {
                        const cmp_t *c = &E->facts[e];
                        entered = (c->cmp == C_GE && sg_poly_eq(&c->l, &q) && sg_poly_eq(&c->r, &um1)) ||
                                  (c->cmp == C_LE && sg_poly_eq(&c->r, &q) && sg_poly_eq(&c->l, &um1));
                    }
                    cmp_t f3, f4;
                    sg_poly_t last;
                    if (!entered || !sg_poly_add(&last, &flat, &um1, 1) || !shifted(g, &last, &f3) ||
                        !shifted(g, &um1, &f4))
                        continue;
                    sg_flow_add_fact(H, &f3);
                    sg_flow_add_fact(H, &f4);
                    L->flat = flat;
                    return;
                }
        }
    }
}

/* Prove L's header state at pass K from L->entry (section 1-3 above). */
static int summarize(ctx_t *x, sg_loop_t *L)
{
    int rc = SG_ENOMEM;
    region_t R = {0};
    state_t B = {0}, H0 = {0};
    uint8_t *cls = calloc(x->nslots ? x->nslots : 1, 1);
    sg_poly_t *step = calloc(x->nslots ? x->nslots : 1, sizeof *step);
    R.index = malloc(x->nblocks * sizeof *R.index);
    R.members = malloc(x->nblocks * sizeof *R.members);
    if (!cls || !step || !R.index || !R.members || !alloc_state(x, &B) || !alloc_state(x, &H0) ||
        !alloc_state(x, &R.cur) || !alloc_state(x, &R.scratch))
        goto out;
    for (uint32_t b = 0; b < x->nblocks; b++)
        if (L->member[b]) {
            R.index[b] = R.n;
            R.members[R.n++] = b;
        }
    R.in = calloc(R.n, sizeof *R.in);
    R.dirty = calloc(R.n, 1);
    if (!R.in || !R.dirty)
        goto out;
    for (uint32_t i = 0; i < R.n; i++)
        if (!alloc_state(x, &R.in[i]))
            goto out;
    rc = 0;
    L->summarized = false;
    const state_t *E = &L->entry;
    /* H(0): E with every slot unguarded */
    sg_flow_state_copy(x, &H0, E);
    for (uint32_t i = 0; i < x->nslots; i++) {
        H0.slots[i].v = H0.slots[i].alt = sg_flow_slot_read(&E->slots[i], NULL);
        H0.slots[i].g = -1;
        H0.slots[i].gver = 0;
    }
    H0.cond_unknown = false;
    if ((rc = region_fixed(x, L, &R, &H0, &B)) || !B.reached)
        goto out;
    /* candidates from one pass */
    uint32_t n_iv = 0;
    for (uint32_t i = 0; i < x->nslots; i++) {
        val_t e = H0.slots[i].v, b = sg_flow_slot_read(&B.slots[i], NULL);
        cls[i] = S_TOP;
        if (e.kind == V_VAL && b.kind == V_LO && i + 1 < x->nslots && (i + 1 != x->nr)) {
            /* a 32-bit value zero-extended into a pair that the loop steps as 64 bits */
            val_t eh = H0.slots[i + 1].v, bh = sg_flow_slot_read(&B.slots[i + 1], NULL);
            int64_t z;
            if (eh.kind == V_VAL && sg_poly_is_const(&eh.p, &z) && z == 0 && bh.kind == V_HI &&
                sg_poly_eq(&bh.p, &b.p)) {
                if (!sg_val_exact32(&e, false))
                    e.flags |= F_W32; /* its high word is 0 only if it did not wrap */
                e.kind = V_LO;
                eh = e;
                eh.kind = V_HI;
                H0.slots[i].v = H0.slots[i].alt = e;
                H0.slots[i + 1].v = H0.slots[i + 1].alt = eh;
            }
        }
        if (e.kind == V_TOP || b.kind != e.kind)
            continue;
        if (sg_poly_eq(&e.p, &b.p)) {
            cls[i] = S_INV;
        } else if (sg_poly_add(&step[i], &b.p, &e.p, -1) &&
                   !sg_poly_has_atom_in(&step[i], L->atom, L->atom)) {
            cls[i] = S_IV;
            n_iv++;
        }
    }
    if (!n_iv)
        goto out; /* nothing steps: the plain join says as much */
    /* H(K) */
    state_t *H = &L->head;
    sg_flow_state_copy(x, H, &H0);
    for (uint32_t i = 0; i < x->nslots; i++) {
        val_t e = H0.slots[i].v, b = sg_flow_slot_read(&B.slots[i], NULL);
        slot_t *s = &H->slots[i];
        if (cls[i] == S_IV && !at_pass(L->atom, &e.p, &step[i], &s->v.p))
            cls[i] = S_TOP;
        if (cls[i] == S_TOP)
            s->v = loop_top(&e, &b);
        else
            sg_val_merge_prov(&s->v, &b, true);
        s->alt = s->v;
    }
    bool exact = false;
    for (int round = 0; round < 8; round++) {
        H->cond_unknown = false;
        if ((rc = region_fixed(x, L, &R, H, &B)))
            goto out;
        if (!B.reached)
            goto out;
        bool changed = false;
        for (uint32_t i = 0; i < x->nslots; i++) {
            slot_t *s = &H->slots[i];
            val_t b = sg_flow_slot_read(&B.slots[i], NULL);
            if (cls[i] != S_TOP) {
                sg_poly_t want = s->v.p;
                bool ok = b.kind == s->v.kind &&
                          (cls[i] == S_INV || sg_poly_add(&want, &s->v.p, &step[i], 1)) &&
                          sg_poly_eq(&b.p, &want);
                if (!ok) {
                    cls[i] = S_TOP;
                    s->v = s->alt = loop_top(&s->v, &b);
                    changed = true;
                } else if (!prov_within(&b, &s->v)) {
                    sg_val_merge_prov(&s->v, &b, true);
                    s->alt = s->v;
                    changed = true;
                }
            } else if (!prov_within(&b, &s->v)) {
                s->v = s->alt = loop_top(&s->v, &b);
                changed = true;
            }
        }
        for (int p = 0; p < NPRED; p++)
            if (H->preds[p].kind != P_TOP && B.preds[p].ver != H->preds[p].ver) {
                memset(&H->preds[p], 0, sizeof H->preds[p]);
                H->preds[p].ver = ++x->verc;
                changed = true;
            }
        state_t F = *H; /* facts only: the slots stay shared */
        head_facts(L, E, H, &B, &F, &exact);
        sg_poly_atom(&L->flat, L->atom);
        counter_bound(L, &F);
        remainder_lemma(x, L, E, &F);
        unroll_lemma(x, L, E, &B, &F);
        bool same = F.nfacts == H->nfacts;
        for (uint8_t i = 0; i < F.nfacts && same; i++)
            same = sg_cmp_eq(&F.facts[i], &H->facts[i]);
        if (!same) {
            memcpy(H->facts, F.facts, sizeof F.facts);
            H->nfacts = F.nfacts;
            changed = true;
        }
        if (!changed) {
            H->cond_unknown = !exact;
            H->reached = true;
            L->summarized = true;
            goto out;
        }
    }
out:
    free(cls);
    free(step);
    free(B.slots);
    free(H0.slots);
    free(R.cur.slots);
    free(R.scratch.slots);
    if (R.in)
        for (uint32_t i = 0; i < R.n; i++)
            free(R.in[i].slots);
    free(R.in);
    free(R.dirty);
    free(R.index);
    free(R.members);
    if (rc == SG_ELIMIT) {
        L->summarized = false; /* a loop too big to summarize is joined as before */
        rc = 0;
    }
    return rc;
}

int sg_loops_update(ctx_t *x, state_t *in, bool *changed)
{
    *changed = false;
    state_t E = {0}, tmp = {0}, scratch = {0};
    int rc = SG_ENOMEM;
    if (!alloc_state(x, &E) || !alloc_state(x, &tmp) || !alloc_state(x, &scratch))
        goto out;
    rc = 0;
    for (uint32_t l = 0; l < x->nloops && !rc; l++) {
        sg_loop_t *L = &x->loops[l];
        /* a loop inside a summarized one is summarized in its region */
        if (L->parent != UINT32_MAX && x->loops[L->parent].summarized)
            continue;
        entry_state(x, L, in, NULL, NULL, &E, &tmp, &scratch);
        rc = resummarize(x, L, &E, changed);
    }
out:
    free(E.slots);
    free(tmp.slots);
    free(scratch.slots);
    return rc ? rc : x->err;
}
