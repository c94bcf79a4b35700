/* check.c: the cross-stream hazard check of check.h: races by chain-clock
 * windows, use after free and allocation reuse by batched reachability,
 * each proven or possible from how well both sides' ranges are known;
 * streams joined only by the end of the launch as notes. */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"

static const char *const hazard_names[SG_HAZARD_KIND_COUNT] = {"race", "use_after_free",
                                                               "reuse"};

const char *sg_hazard_kind_name(sg_hazard_kind_t k)
{
    return (unsigned)k < SG_HAZARD_KIND_COUNT ? hazard_names[k] : "invalid";
}

/* ---- collecting ------------------------------------------------------------------ */

typedef struct {
    const sg_graph_t *g;
    sg_reach_t *r;
    sg_rw_buffers_t bufs;
    sg_check_result_t *res;
    size_t cap, max;
} checker_t;

static int emit(checker_t *c, const sg_hazard_t *h)
{
    if (c->res->n >= c->max) {
        c->res->truncated = true;
        return SG_OK;
    }
    if (c->res->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        sg_hazard_t *p = realloc(c->res->hazards, nc * sizeof *p);
        if (!p) return SG_ENOMEM;
        c->res->hazards = p;
        c->cap = nc;
    }
    c->res->hazards[c->res->n++] = *h;
    return SG_OK;
}

static bool full(const checker_t *c)
{
    return c->res->n >= c->max;
}

/* Was a enqueued before b (capture order, ties by id)? */
static bool enqueued_before(const sg_graph_t *g, sg_node_id_t a, sg_node_id_t b)
{
    const sg_node_t *x = &g->nodes[a], *y = &g->nodes[b];
    return x->seq != y->seq ? x->seq < y->seq : a < b;
}

static bool is_graph_alloc(const checker_t *c, uint32_t b)
{
    return c->bufs.alloc[b] != SG_NONE;
}

/* ---- proven or possible --------------------------------------------------------- */

static bool touched(sg_range_kind_t r)
{
    return r == SG_RANGE_EXACT || r == SG_RANGE_DENSE;
}

static bool inside(uint64_t p, uint64_t lo, uint64_t hi)
{
    return p >= lo && p < hi;
}

/* Do two known ranges certainly share a byte? Dense ones share every byte
 * of their overlap; an exact one touches its first and last byte. */
static bool certain_overlap(sg_range_kind_t ka, uint64_t alo, uint64_t ahi, sg_range_kind_t kb,
                            uint64_t blo, uint64_t bhi)
{
    if (!touched(ka) || !touched(kb) || alo >= bhi || blo >= ahi) return false;
    if (ka == SG_RANGE_DENSE && kb == SG_RANGE_DENSE) return true;
    if (ka == SG_RANGE_DENSE) return inside(blo, alo, ahi) || inside(bhi - 1, alo, ahi);
    if (kb == SG_RANGE_DENSE) return inside(alo, blo, bhi) || inside(ahi - 1, blo, bhi);
    return alo == blo || ahi == bhi || alo == bhi - 1 || ahi - 1 == blo;
}

/* Why node n's access to buffer b (range kind r) is not known exactly. */
static void side_why(const sg_graph_t *g, sg_node_id_t n, uint32_t b, sg_range_kind_t r,
                     char *out, size_t len)
{
    const sg_node_t *x = &g->nodes[n];
    const sg_buffer_t *buf = sg_graph_buffer(g, b);
    const char *bl = buf ? SG_RW_LABEL(buf->label) : "?";
    if (x->type != SG_NODE_KERNEL) {
        snprintf(out, len, "n%u (%s): what it touches of %.40s is a guess", n,
                 sg_node_type_name(x->type), bl);
        return;
    }
    const sg_facts_t *f = &x->u.kernel.facts;
    if (r == SG_RANGE_GUESS) {
        if (f->source == SG_FACTS_NONE)
            snprintf(out, len, "n%u is not analysed: its access to %.40s is a guess from its pointer "
                               "arguments", n, bl);
        else if (f->source == SG_FACTS_UNKNOWN) /* the reason last: what a cut loses */
            snprintf(out, len, "n%u's access to %.40s is a guess, its code unknown: %.100s", n, bl,
                     f->reason ? SG_RW_LABEL(f->reason) : "no reason");
        else
            snprintf(out, len,
                     "n%u may reach %.40s through an address its analysis could not "
                     "follow: %.100s",
                     n, bl, f->reason ? SG_RW_LABEL(f->reason) : "no reason");
        return;
    }
    for (uint32_t i = 0; i < f->n_sites; i++) {
        const sg_site_t *s = &f->sites[i];
        if (s->status == SG_SITE_UNKNOWN && s->buffer == b && s->reason) {
            snprintf(out, len, "n%u's offset into %.40s is unknown (%.100s)", n, bl,
                     SG_RW_LABEL(s->reason));
            return;
        }
    }
    if (r == SG_RANGE_BOUND)
        snprintf(out, len, "n%u's range in %.40s is a bound: not every byte of it is touched", n, bl);
    else
        snprintf(out, len, "the bytes n%u touches in %.40s may not be the other's", n, bl);
}

/* Classify h from its two sides (side 1 may be a mem node: known). */
static void classify(const sg_graph_t *g, sg_hazard_t *h, bool certain)
{
    h->proven = certain;
    h->why[0] = '\0';
    if (certain) return;
    char a[240] = "", b[240] = "";
    if (!touched(h->ranges[0])) side_why(g, h->nodes[0], h->buffers[0], h->ranges[0], a, sizeof a);
    if (h->kind == SG_HAZARD_RACE && !touched(h->ranges[1]))
        side_why(g, h->nodes[1], h->buffers[1], h->ranges[1], b, sizeof b);
    if (a[0] && b[0])
        snprintf(h->why, sizeof h->why, "%.118s; %.118s", a, b);
    else if (a[0] || b[0])
        snprintf(h->why, sizeof h->why, "%s", a[0] ? a : b);
    else if (h->ranges[0] == SG_RANGE_DENSE || h->ranges[1] == SG_RANGE_DENSE)
        snprintf(h->why, sizeof h->why,
                 "the ranges overlap, but the exact one's touched bytes may not meet the other's");
    else
        snprintf(h->why, sizeof h->why,
                 "the ranges overlap, but neither is dense: the bytes touched may differ");
}

/* ---- races ----------------------------------------------------------------------- */

typedef struct {
    uint32_t region, chain, pos;
    sg_node_id_t node;
    uint32_t buffer;
    uint64_t lo, hi;
    uint8_t mode;
    uint8_t range; /* sg_range_kind_t */
} acc_t;

static int cmp_acc(const void *pa, const void *pb)
{
    const acc_t *a = pa, *b = pb;
    if (a->region != b->region) return a->region < b->region ? -1 : 1;
    if (a->chain != b->chain) return a->chain < b->chain ? -1 : 1;
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    if (a->node != b->node) return a->node < b->node ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}


typedef struct {
    uint32_t chain, begin, end; /* accs[begin, end) */
} group_t;

static bool streams_differ(const sg_graph_t *g, sg_node_id_t a, sg_node_id_t b)
{
    uint32_t sa = g->nodes[a].stream, sb = g->nodes[b].stream;
    if (sa >= g->root->n_streams || sb >= g->root->n_streams) return true; /* explicit */
    return sa != sb;
}

static int cmp_acc_lo(const void *pa, const void *pb)
{
    const acc_t *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->node != b->node) return a->node < b->node ? -1 : 1;
    return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static int races(checker_t *c)
{
    const sg_graph_t *g = c->g;
    uint32_t n_regions = 0;
    acc_t *accs = NULL;
    group_t *groups = NULL;
    uint32_t *reg_groups = NULL; /* n_regions + 1 offsets into groups */
    uint8_t *reg_writes = NULL;
    int rc = SG_OK;
    size_t na = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed || x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) continue;
        na += x->n_accesses;
    }
    accs = malloc((na ? na : 1) * sizeof *accs);
    if (!accs) {
        rc = SG_ENOMEM;
        goto out;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *x = &g->nodes[i];
        if (x->removed || x->type == SG_NODE_MEM_ALLOC || x->type == SG_NODE_MEM_FREE) continue;
        for (uint32_t a = 0; a < x->n_accesses; a++) {
            uint64_t lo, hi;
            if (!sg_rw_access_range(g, &x->accesses[a], &lo, &hi)) continue;
            accs[k++] = (acc_t){0,
                                sg_reach_chain_of(c->r, i),
                                sg_reach_pos(c->r, i),
                                i,
                                sg_rw_access_buffer(&c->bufs, i, a),
                                lo,
                                hi,
                                (uint8_t)x->accesses[a].mode,
                                (uint8_t)x->accesses[a].range};
        }
    }
    na = k;
    /* Regions: connected runs of overlapping access ranges (by address, so
     * an access past its buffer's end still meets its neighbours), so any
     * two accesses that overlap share a region. */
    qsort(accs, na, sizeof *accs, cmp_acc_lo);
    uint64_t end = 0;
    for (size_t i = 0; i < na; i++) {
        if (i > 0 && accs[i].lo >= end) n_regions++;
        if (i == 0 || accs[i].hi > end) end = accs[i].hi;
        accs[i].region = n_regions;
    }
    if (na) n_regions++;
    qsort(accs, na, sizeof *accs, cmp_acc);
    groups = malloc((na ? na : 1) * sizeof *groups);
    reg_groups = calloc((size_t)n_regions + 1, sizeof *reg_groups);
    reg_writes = calloc(n_regions ? n_regions : 1, 1);
    if (!groups || !reg_groups || !reg_writes) {
        rc = SG_ENOMEM;
        goto out;
    }
    uint32_t ng = 0;
    for (size_t i = 0; i < na; i++) {
        if (sg_rw_writes(accs[i].mode)) reg_writes[accs[i].region] = 1;
        if (i == 0 || accs[i].region != accs[i - 1].region || accs[i].chain != accs[i - 1].chain) {
            groups[ng++] = (group_t){accs[i].chain, (uint32_t)i, (uint32_t)i};
            reg_groups[accs[i].region + 1]++;
        }
        groups[ng - 1].end = (uint32_t)i + 1;
    }
    for (uint32_t i = 0; i < n_regions; i++) reg_groups[i + 1] += reg_groups[i];
    uint32_t nblocks = sg_reach_block_count(c->r);
    for (uint32_t blk = 0; blk < nblocks && !full(c); blk++) {
        uint32_t c0, cw;
        if ((rc = sg_reach_load_block(c->r, blk, &c0, &cw))) goto out;
        for (uint32_t reg = 0; reg < n_regions && !full(c); reg++) {
            if (!reg_writes[reg]) continue;
            uint32_t g0 = reg_groups[reg], g1 = reg_groups[reg + 1];
            if (g1 - g0 < 2) continue; /* one chain: all ordered */
            for (uint32_t xi = groups[g0].begin; xi < groups[g1 - 1].end && !full(c); xi++) {
                const acc_t *x = &accs[xi];
                for (uint32_t gi = g0; gi < g1 && !full(c); gi++) {
                    const group_t *gr = &groups[gi];
                    if (gr->chain == x->chain || gr->chain < c0 || gr->chain - c0 >= cw) continue;
                    int32_t after = sg_reach_last_reaching(c->r, x->node, gr->chain);
                    int32_t before = sg_reach_first_reached(c->r, x->node, gr->chain);
                    /* first access with pos > after */
                    uint32_t lo = gr->begin, hi = gr->end;
                    while (lo < hi) {
                        uint32_t mid = lo + (hi - lo) / 2;
                        if ((int64_t)accs[mid].pos > after)
                            hi = mid;
                        else
                            lo = mid + 1;
                    }
                    for (uint32_t yi = lo; yi < gr->end && (int64_t)accs[yi].pos < before; yi++) {
                        const acc_t *y = &accs[yi];
                        if (x->node >= y->node) continue; /* each pair once, from its lower id */
                        if (!sg_rw_writes(x->mode) && !sg_rw_writes(y->mode)) continue;
                        if (x->mode == SG_ACCESS_ATOMIC_RMW && y->mode == SG_ACCESS_ATOMIC_RMW)
                            continue; /* atomics of both: no race */
                        if (x->lo >= y->hi || y->lo >= x->hi) continue;
                        if (!streams_differ(g, x->node, y->node)) continue;
                        if (x->buffer != y->buffer && is_graph_alloc(c, x->buffer) &&
                            is_graph_alloc(c, y->buffer) &&
                            sg_rw_buffers_overlap(g, x->buffer, y->buffer))
                            continue; /* reused memory: judged as reuse */
                        sg_hazard_t h = {.kind = SG_HAZARD_RACE};
                        h.nodes[0] = x->node;
                        h.nodes[1] = y->node;
                        h.streams[0] = g->nodes[x->node].stream;
                        h.streams[1] = g->nodes[y->node].stream;
                        h.buffers[0] = x->buffer;
                        h.buffers[1] = y->buffer;
                        h.modes[0] = x->mode;
                        h.modes[1] = y->mode;
                        h.ranges[0] = (sg_range_kind_t)x->range;
                        h.ranges[1] = (sg_range_kind_t)y->range;
                        h.lo = x->lo > y->lo ? x->lo : y->lo;
                        h.hi = x->hi < y->hi ? x->hi : y->hi;
                        bool xf = enqueued_before(g, x->node, y->node);
                        h.missing_from = xf ? x->node : y->node;
                        h.missing_to = xf ? y->node : x->node;
                        classify(g, &h,
                                 certain_overlap(x->range, x->lo, x->hi, y->range, y->lo, y->hi));
                        if ((rc = emit(c, &h))) goto out;
                    }
                }
            }
        }
    }
out:
    free(accs);
    free(groups);
    free(reg_groups);
    free(reg_writes);
    return rc;
}

/* ---- memory lifetime ----------------------------------------------------------------- */

/* The access of node x to buffer b it is surest of (for the mode and range
 * shown): the best known range, the first of those. */
static const sg_access_t *access_of(const checker_t *c, sg_node_id_t x, uint32_t b)
{
    const sg_node_t *n = &c->g->nodes[x];
    const sg_access_t *best = NULL;
    for (uint32_t i = 0; i < n->n_accesses; i++)
        if (sg_rw_access_buffer(&c->bufs, x, i) == b &&
            (!best || n->accesses[i].range > best->range))
            best = &n->accesses[i];
    return best;
}


/* The user side of a use_after_free: its mode and range; proven when the
 * user certainly touches the allocation (its range is exact or dense: the
 * mem node's side, the allocation itself, is always known). */
static void fill_user_side(const checker_t *c, sg_hazard_t *h, sg_node_id_t user, uint32_t b)
{
    const sg_graph_t *g = c->g;
    const sg_access_t *a = access_of(c, user, b);
    h->modes[0] = a ? a->mode : 0;
    h->ranges[0] = a ? a->range : SG_RANGE_GUESS;
    h->ranges[1] = SG_RANGE_DENSE;
    uint64_t lo = 0, hi = 0;
    if (a && sg_rw_access_range(g, a, &lo, &hi)) {
        h->lo = lo;
        h->hi = hi;
    } else {
        const sg_buffer_t *bf = sg_graph_buffer(g, b);
        h->lo = bf ? bf->address : 0;
        h->hi = bf ? sg_rw_end(bf->address, bf->size) : 0;
    }
    classify(g, h, a && touched(a->range) && lo < hi);
}

static int use_after_free(checker_t *c)
{
    const sg_graph_t *g = c->g;
    const sg_rw_buffers_t *bf = &c->bufs;
    sg_rw_pairs_t ps = {0};
    uint32_t *buf_of = NULL;
    uint8_t *ans = NULL;
    int rc = SG_OK;
    for (uint32_t b = 0; b < bf->n_buffers; b++) {
        for (uint32_t i = bf->user_start[b]; i < bf->user_start[b + 1]; i++) {
            sg_node_id_t u = bf->users[i];
            if (bf->alloc[b] != SG_NONE && (rc = sg_rw_pairs_push(&ps, bf->alloc[b], u))) goto out;
            for (uint32_t k = bf->free_start[b]; k < bf->free_start[b + 1]; k++)
                if ((rc = sg_rw_pairs_push(&ps, u, bf->frees[k]))) goto out;
        }
    }
    buf_of = malloc((ps.n ? ps.n : 1) * sizeof *buf_of);
    ans = malloc(ps.n ? ps.n : 1);
    if (!buf_of || !ans) {
        rc = SG_ENOMEM;
        goto out;
    }
    size_t k = 0;
    for (uint32_t b = 0; b < bf->n_buffers; b++) {
        uint32_t per = (bf->alloc[b] != SG_NONE) + (bf->free_start[b + 1] - bf->free_start[b]);
        for (uint32_t i = bf->user_start[b]; i < bf->user_start[b + 1]; i++)
            for (uint32_t j = 0; j < per; j++) buf_of[k++] = b;
    }
    if ((rc = sg_reach_query_batch(c->r, (const sg_node_id_t(*)[2])ps.p, ps.n, ans))) goto out;
    for (size_t i = 0; i < ps.n && !full(c); i++) {
        if (ans[i]) continue;
        uint32_t b = buf_of[i];
        sg_node_id_t a = ps.p[i][0], z = ps.p[i][1];
        bool before_free = g->nodes[z].type == SG_NODE_MEM_FREE && a != bf->alloc[b];
        sg_node_id_t user = before_free ? a : z, mem = before_free ? z : a;
        sg_hazard_t h = {.kind = SG_HAZARD_USE_AFTER_FREE};
        h.nodes[0] = user;
        h.nodes[1] = mem;
        h.streams[0] = g->nodes[user].stream;
        h.streams[1] = g->nodes[mem].stream;
        h.buffers[0] = h.buffers[1] = b;
        fill_user_side(c, &h, user, b);
        h.missing_from = a;
        h.missing_to = z;
        if ((rc = emit(c, &h))) goto out;
    }
out:
    free(ps.p);
    free(buf_of);
    free(ans);
    return rc;
}

/* The first buffer's maximal users not ordered before a2. */
static int reuse_pair(checker_t *c, uint32_t first, uint32_t second)
{
    const sg_graph_t *g = c->g;
    const sg_rw_buffers_t *bf = &c->bufs;
    sg_node_id_t a2 = bf->alloc[second];
    for (uint32_t k = bf->free_start[first]; k < bf->free_start[first + 1]; k++)
        if (sg_reach_query(c->r, bf->frees[k], a2)) return SG_OK; /* ordered reuse */
    /* offending users, keeping only the maximal ones */
    sg_node_id_t *bad = NULL;
    uint32_t nbad = 0;
    for (uint32_t i = bf->user_start[first]; i < bf->user_start[first + 1]; i++) {
        sg_node_id_t u = bf->users[i];
        if (sg_reach_query(c->r, u, a2)) continue;
        sg_node_id_t *p = realloc(bad, (nbad + 1) * sizeof *p);
        if (!p) {
            free(bad);
            return SG_ENOMEM;
        }
        bad = p;
        bad[nbad++] = u;
    }
    /* One finding per pair of allocations: the offending user enqueued
     * last among the maximal ones (the one most likely still running). The
     * fix is the first buffer's free before the reallocation (which orders
     * every user that precedes the free), else the user itself. */
    int rc = SG_OK;
    sg_node_id_t pick = SG_NONE;
    for (uint32_t i = 0; i < nbad; i++) {
        bool dominated = false;
        for (uint32_t j = 0; j < nbad && !dominated; j++)
            dominated = j != i && sg_reach_query(c->r, bad[i], bad[j]);
        if (!dominated && (pick == SG_NONE || enqueued_before(g, pick, bad[i]))) pick = bad[i];
    }
    if (pick != SG_NONE && !full(c)) {
        sg_node_id_t fix = bf->free_start[first + 1] > bf->free_start[first]
                               ? bf->frees[bf->free_start[first]]
                               : pick;
        sg_hazard_t h = {.kind = SG_HAZARD_REUSE};
        h.nodes[0] = pick;
        h.nodes[1] = a2;
        h.streams[0] = g->nodes[pick].stream;
        h.streams[1] = g->nodes[a2].stream;
        h.buffers[0] = first;
        h.buffers[1] = second;
        const sg_buffer_t *x = &g->root->buffers[first], *y = &g->root->buffers[second];
        const sg_access_t *acc = access_of(c, pick, first);
        h.modes[0] = acc ? acc->mode : 0;
        h.ranges[0] = acc ? acc->range : SG_RANGE_GUESS;
        h.ranges[1] = SG_RANGE_DENSE;
        uint64_t xe = sg_rw_end(x->address, x->size), ye = sg_rw_end(y->address, y->size);
        h.lo = x->address > y->address ? x->address : y->address;
        h.hi = xe < ye ? xe : ye;
        /* proven when the user certainly touches memory the second allocation holds */
        uint64_t alo = 0, ahi = 0;
        bool certain = acc && sg_rw_access_range(g, acc, &alo, &ahi) &&
                       certain_overlap(acc->range, alo, ahi, SG_RANGE_DENSE, h.lo, h.hi);
        if (certain) {
            if (alo > h.lo) h.lo = alo;
            if (ahi < h.hi) h.hi = ahi;
        }
        h.missing_from = fix;
        h.missing_to = a2;
        classify(g, &h, certain);
        rc = emit(c, &h);
    }
    free(bad);
    return rc;
}

/* The same without enumerating overlapping pairs (a pool address reused m
 * times has m^2): with every chain's clocks loaded, for an allocation A1 of
 * b1 and a chain c, the allocations on c that are neither before A1 nor
 * after a free of b1 form one window of positions, (last position reaching
 * A1, first position a free of b1 reaches); only allocations in it that
 * overlap b1 are candidates, and in a correct graph there are none. Uses
 * the cluster index of common.c (allocations by cluster, chain, position). */
static int reuse_windows(checker_t *c)
{
    const sg_graph_t *g = c->g;
    const sg_rw_buffers_t *bf = &c->bufs;
    sg_rw_reuse_t ru;
    int rc = sg_rw_reuse_build(g, c->r, bf, &ru);
    if (rc) return rc;
    for (uint32_t b1 = 0; b1 < ru.n_buffers && rc == SG_OK && !full(c); b1++) {
        sg_node_id_t a1 = bf->alloc[b1];
        if (a1 == SG_NONE) continue;
        uint32_t cl = ru.cluster[b1];
        for (uint32_t ri = ru.rstart[cl]; ri < ru.rstart[cl + 1] && rc == SG_OK; ri++) {
            uint32_t ch = ru.runs[ri].chain, i = ru.runs[ri].first, j = ru.runs[ri].end;
            int32_t lo = sg_reach_last_reaching(c->r, a1, ch), hi = INT32_MAX;
            for (uint32_t k = bf->free_start[b1]; k < bf->free_start[b1 + 1]; k++) {
                int32_t p = sg_reach_first_reached(c->r, bf->frees[k], ch);
                if (p < hi) hi = p;
            }
            uint32_t s = i, e = j;
            while (s < e) {
                uint32_t mid = s + (e - s) / 2;
                if ((int64_t)sg_reach_pos(c->r, ru.allocs[mid]) > lo)
                    e = mid;
                else
                    s = mid + 1;
            }
            for (; s < j && (int64_t)sg_reach_pos(c->r, ru.allocs[s]) < hi && rc == SG_OK; s++) {
                sg_node_id_t a2 = ru.allocs[s];
                uint32_t b2 = g->nodes[a2].u.mem.buffer;
                if (a2 == a1 || b2 == b1 || !sg_rw_buffers_overlap(g, b1, b2)) continue;
                /* b1 is first when A1 reaches A2, or neither reaches the
                 * other and A1 was enqueued first (the other order is met
                 * from b2's side) */
                if (!sg_reach_query(c->r, a1, a2) && !enqueued_before(g, a1, a2)) continue;
                rc = reuse_pair(c, b1, b2);
            }
        }
    }
    sg_rw_reuse_free(&ru);
    return rc;
}

static int reuse(checker_t *c)
{
    const sg_graph_t *g = c->g;
    if (sg_reach_all_loaded(c->r, true)) return reuse_windows(c);
    uint32_t nb = g->root->n_buffers, n = 0;
    sg_rw_span_t *sp = malloc((nb ? nb : 1) * sizeof *sp);
    if (!sp) return SG_ENOMEM;
    for (uint32_t i = 0; i < nb; i++) {
        const sg_buffer_t *b = &g->root->buffers[i];
        if (b->size == 0 || !is_graph_alloc(c, i)) continue;
        sp[n++] = (sg_rw_span_t){b->address, sg_rw_end(b->address, b->size), i};
    }
    qsort(sp, n, sizeof *sp, sg_rw_cmp_span);
    int rc = SG_OK;
    for (uint32_t i = 0; i < n && rc == SG_OK && !full(c); i++) {
        for (uint32_t j = i + 1; j < n && sp[j].lo < sp[i].hi && rc == SG_OK; j++) {
            uint32_t b1 = sp[i].id, b2 = sp[j].id;
            sg_node_id_t a1 = c->bufs.alloc[b1], a2 = c->bufs.alloc[b2];
            bool first_is_b1;
            if (sg_reach_query(c->r, a1, a2))
                first_is_b1 = true;
            else if (sg_reach_query(c->r, a2, a1))
                first_is_b1 = false;
            else
                first_is_b1 = enqueued_before(g, a1, a2);
            rc = first_is_b1 ? reuse_pair(c, b1, b2) : reuse_pair(c, b2, b1);
        }
    }
    free(sp);
    return rc;
}

/* ---- streams joined by the end of the launch ---------------------------------------------- */

static int joined_at_end(checker_t *c)
{
    const sg_graph_t *g = c->g;
    uint32_t origin = sg_rw_origin_stream(g);
    if (origin == SG_NONE) return SG_OK;
    sg_rw_streams_t st;
    int rc = sg_rw_streams_build(g, c->r, &st);
    if (rc) return rc;
    sg_node_id_t olast = st.start[origin + 1] > st.start[origin] ? st.nodes[st.start[origin + 1] - 1]
                                                                  : SG_NONE;
    for (uint32_t s = 0; s < st.n_streams && olast != SG_NONE; s++) {
        if (s == origin || st.start[s + 1] == st.start[s]) continue;
        sg_node_id_t last = st.nodes[st.start[s + 1] - 1];
        if (sg_reach_query(c->r, last, olast)) continue;
        sg_check_joined_t *p = realloc(c->res->joined_at_end,
                                       (c->res->n_joined_at_end + 1) * sizeof *p);
        if (!p) {
            rc = SG_ENOMEM;
            break;
        }
        c->res->joined_at_end = p;
        p[c->res->n_joined_at_end++] = (sg_check_joined_t){s, last, olast};
    }
    sg_rw_streams_free(&st);
    return rc;
}

/* ---- entry ------------------------------------------------------------------------------ */

static int cmp_hazard(const void *pa, const void *pb)
{
    const sg_hazard_t *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->nodes[0] != b->nodes[0]) return a->nodes[0] < b->nodes[0] ? -1 : 1;
    if (a->nodes[1] != b->nodes[1]) return a->nodes[1] < b->nodes[1] ? -1 : 1;
    if (a->buffers[0] != b->buffers[0]) return a->buffers[0] < b->buffers[0] ? -1 : 1;
    if (a->proven != b->proven) return a->proven ? -1 : 1; /* the proven one is kept */
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

int sg_check_run(const sg_graph_t *g, const sg_check_options_t *opt, sg_check_result_t *out)
{
    if (!g || !out || g->root != g) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    checker_t c = {0};
    c.g = g;
    c.res = out;
    c.max = opt && opt->max_hazards ? opt->max_hazards : 100000;
    int rc = sg_reach_build(g, SG_REACH_FORWARD, &c.r);
    if (rc) return rc;
    if ((rc = sg_rw_buffers_build(g, &c.bufs))) goto out;
    if ((rc = races(&c))) goto out;
    if ((rc = use_after_free(&c))) goto out;
    if ((rc = reuse(&c))) goto out;
    if ((rc = joined_at_end(&c))) goto out;
    if (out->n) qsort(out->hazards, out->n, sizeof *out->hazards, cmp_hazard);
    /* one hazard per (kind, node pair): several accesses of one node to
     * the same memory are one finding (a reuse is per pair of buffers, and
     * one user may hold two of them); a proven one sorts first and stays */
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        const sg_hazard_t *h = &out->hazards[i];
        const sg_hazard_t *p = w > 0 ? &out->hazards[w - 1] : NULL;
        if (p && p->kind == h->kind && p->nodes[0] == h->nodes[0] && p->nodes[1] == h->nodes[1] &&
            (h->kind != SG_HAZARD_REUSE || p->buffers[0] == h->buffers[0]))
            continue;
        out->hazards[w++] = *h;
    }
    out->n = w;
    for (size_t i = 0; i < out->n; i++) {
        const sg_hazard_t *h = &out->hazards[i];
        out->counts[h->kind]++;
        out->proven_counts[h->kind] += h->proven;
        if (h->proven)
            out->n_proven++;
        else
            out->n_possible++;
    }
out:
    sg_rw_buffers_free(&c.bufs);
    sg_reach_destroy(c.r);
    if (rc) sg_check_result_free(out);
    return rc;
}

void sg_check_result_free(sg_check_result_t *res)
{
    if (!res) return;
    free(res->hazards);
    free(res->joined_at_end);
    memset(res, 0, sizeof *res);
}

/* ---- formatting ---------------------------------------------------------------------------- */

static const char *mode_verb(sg_access_mode_t m)
{
    switch (m) {
    case SG_ACCESS_READ: return "reads";
    case SG_ACCESS_WRITE: return "writes";
    case SG_ACCESS_READWRITE: return "reads and writes";
    case SG_ACCESS_UNKNOWN: return "may write";
    case SG_ACCESS_ATOMIC_RMW: return "atomically updates";
    default: return "uses";
    }
}

/* raw, for JSON; text takes SG_RW_LABEL of it */
static const char *buf_label(const sg_graph_t *g, uint32_t b)
{
    const sg_buffer_t *x = sg_graph_buffer(g, b);
    return x ? x->label : "?";
}

/* Does buffer b hold all of [lo, hi)? */
static bool holds(const sg_graph_t *g, uint32_t b, uint64_t lo, uint64_t hi)
{
    const sg_buffer_t *x = sg_graph_buffer(g, b);
    return x && lo >= x->address && hi <= sg_rw_end(x->address, x->size);
}

/* The buffer a race's memory is in: one of the two accesses' own buffers
 * when it holds the overlap, else whichever buffer holds its start (an
 * access past its own buffer's end met another buffer's memory). */
static uint32_t race_buffer(const sg_graph_t *g, const sg_hazard_t *h)
{
    for (int i = 0; i < 2; i++)
        if (holds(g, h->buffers[i], h->lo, h->hi)) return h->buffers[i];
    uint32_t b = sg_graph_find_buffer(g, h->lo);
    return b != SG_NONE ? b : h->buffers[0];
}

/* " (past the end of A)" for a side whose access leaves its own buffer. */
static const char *past_end(const sg_graph_t *g, const sg_hazard_t *h, int side, char *buf,
                            size_t n)
{
    buf[0] = '\0';
    if (!holds(g, h->buffers[side], h->lo, h->hi))
        snprintf(buf, n, " (past the end of %s)", SG_RW_LABEL(buf_label(g, h->buffers[side])));
    return buf;
}

const char *sg_hazard_format(const sg_graph_t *g, const sg_hazard_t *h, char *buf, size_t n)
{
    char a[200], b[200], f[200], t[200], pa[160], pb[160], what[1024];
    sg_rw_node_name(g, h->nodes[0], a, sizeof a);
    sg_rw_node_name(g, h->nodes[1], b, sizeof b);
    snprintf(f, sizeof f, "n%u", h->missing_from);
    snprintf(t, sizeof t, "n%u", h->missing_to);
    switch (h->kind) {
    case SG_HAZARD_RACE:
        snprintf(what, sizeof what,
                 "race on %s [0x%" PRIx64 ", 0x%" PRIx64 "): %s %s it%s, %s %s it%s, no path "
                 "between them; missing edge %s -> %s",
                 SG_RW_LABEL(buf_label(g, race_buffer(g, h))), h->lo, h->hi, a,
                 mode_verb(h->modes[0]), past_end(g, h, 0, pa, sizeof pa), b,
                 mode_verb(h->modes[1]), past_end(g, h, 1, pb, sizeof pb), f, t);
        break;
    case SG_HAZARD_USE_AFTER_FREE: {
        bool free_side = h->missing_from == h->nodes[0];
        snprintf(what, sizeof what,
                 "use_after_free of %s [0x%" PRIx64 ", 0x%" PRIx64 "): %s %s it but is not "
                 "ordered %s %s; missing edge %s -> %s",
                 SG_RW_LABEL(buf_label(g, h->buffers[0])), h->lo, h->hi, a, mode_verb(h->modes[0]),
                 free_side ? "before its free" : "after its alloc", b, f, t);
        break;
    }
    case SG_HAZARD_REUSE:
        snprintf(what, sizeof what,
                 "reuse of [0x%" PRIx64 ", 0x%" PRIx64 "): %s allocates memory of %s while %s "
                 "may still use it (no free of %s is ordered before the reallocation); missing "
                 "edge %s -> %s",
                 h->lo, h->hi, b, SG_RW_LABEL(buf_label(g, h->buffers[0])), a,
                 SG_RW_LABEL(buf_label(g, h->buffers[0])), f, t);
        break;
    default:
        snprintf(buf, n, "invalid hazard");
        return buf;
    }
    if (h->proven)
        snprintf(buf, n, "proven %s", what);
    else
        snprintf(buf, n, "possible %s; not proven: %s", what, h->why);
    return buf;
}

static json_t *hex(uint64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "0x%" PRIx64, v);
    return json_string(s);
}

json_t *sg_hazard_json(const sg_graph_t *g, const sg_hazard_t *h)
{
    char msg[1600];
    sg_hazard_format(g, h, msg, sizeof msg);
    json_t *o = json_pack("{s:s, s:b, s:o, s:s, s:[o,o]}", "kind", sg_hazard_kind_name(h->kind),
                          "proven", h->proven, "why", h->proven ? json_null() : json_string(h->why),
                          "message", msg, "nodes", sg_rw_node_json(g, h->nodes[0]),
                          sg_rw_node_json(g, h->nodes[1]));
    if (!o) return NULL;
    json_t *bufs = json_array();
    for (int i = 0; i < 2; i++)
        json_array_append_new(bufs, h->buffers[i] != SG_NONE
                                        ? json_string(buf_label(g, h->buffers[i]))
                                        : json_null());
    json_object_set_new(o, "buffers", bufs);
    json_object_set_new(o, "ranges", json_pack("[s,s]", sg_range_kind_name(h->ranges[0]),
                                               sg_range_kind_name(h->ranges[1])));
    json_object_set_new(o, "range", json_pack("{s:o, s:o}", "lo", hex(h->lo), "hi", hex(h->hi)));
    json_object_set_new(o, "missing_edge", json_pack("{s:I, s:I}", "from", (json_int_t)h->missing_from,
                                                     "to", (json_int_t)h->missing_to));
    return o;
}

const char *sg_check_joined_format(const sg_graph_t *g, const sg_check_joined_t *j, char *buf,
                                   size_t n)
{
    char a[200], b[200];
    sg_rw_node_name(g, j->last, a, sizeof a);
    sg_rw_node_name(g, j->origin_last, b, sizeof b);
    snprintf(buf, n,
             "note: stream %s ends at %s, which has no path to the origin stream's last node %s: "
             "joined by the end of the graph launch (no hazard)",
             SG_RW_STREAM(g, j->stream), a, b);
    return buf;
}

json_t *sg_check_joined_json(const sg_graph_t *g, const sg_check_joined_t *j)
{
    return json_pack("{s:s, s:o, s:o}", "stream", sg_rw_stream_label(g, j->stream), "last",
                     sg_rw_node_json(g, j->last), "origin_last", sg_rw_node_json(g, j->origin_last));
}
