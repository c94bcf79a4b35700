/* access_sass.c: the SASS path's facts (code/sass.h) as an access analysis
 * result (code/access.h), so that evaluation, the bundle and every pass see
 * one kind of answer whatever code a kernel had. Each SASS access becomes a
 * site: its pointer word, its affine index over the special registers as the
 * offset, its known conditions as facts, and the wrap checks a 32-bit index
 * or comparison needs; what the SASS side could not attribute stays unknown
 * with its reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_internal.h"
#include "code/sass.h"

/* sass.h's atom numbering -> access.h's special registers. */
static bool sreg_of(uint8_t a, sg_access_atom_t *out)
{
    if (a == SG_SASS_GRID_K || a == SG_SASS_LOOP_K) return false; /* see atom_expr */
    uint32_t r;
    if (a >= SG_SASS_TID_X && a <= SG_SASS_TID_Z)
        r = SG_ACCESS_TID_X + (a - SG_SASS_TID_X);
    else if (a >= SG_SASS_CTAID_X && a <= SG_SASS_CTAID_Z)
        r = SG_ACCESS_CTAID_X + (a - SG_SASS_CTAID_X);
    else if (a >= SG_SASS_NTID_X && a <= SG_SASS_NTID_Z)
        r = SG_ACCESS_NTID_X + (a - SG_SASS_NTID_X);
    else if (a >= SG_SASS_NCTAID_X && a <= SG_SASS_NCTAID_Z)
        r = SG_ACCESS_NCTAID_X + (a - SG_SASS_NCTAID_X);
    else
        return false;
    *out = SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, r);
    return true;
}

/* The loop counts the sites use, each bounded by each site's own
 * conditions: K0 a grid-stride loop's pass, K1 another loop's. */
#define GRID_LOOP SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, 0)
#define OTHER_LOOP SG_ACCESS_ATOM(SG_ACCESS_ATOM_LOOP, 1)

/* One sass.h atom as an expression: a special register, or for
 * SG_SASS_GRID_K the product ntid.x*nctaid.x*K. */
static bool atom_expr(uint8_t a, sg_access_expr_t *out)
{
    sg_access_atom_t r;
    if (a == SG_SASS_LOOP_K) {
        ax_atom(out, OTHER_LOOP, 1);
        return true;
    }
    if (a == SG_SASS_GRID_K) {
        sg_access_expr_t n, g, k;
        ax_atom(&n, SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, SG_ACCESS_NTID_X), 1);
        ax_atom(&g, SG_ACCESS_ATOM(SG_ACCESS_ATOM_SREG, SG_ACCESS_NCTAID_X), 1);
        ax_atom(&k, GRID_LOOP, 1);
        return ax_mul(&n, &g, out) && ax_mul(out, &k, out);
    }
    if (!sreg_of(a, &r)) return false;
    ax_atom(out, r, 1);
    return true;
}

static bool affine_expr(const sg_sass_affine_t *f, sg_access_expr_t *out)
{
    ax_zero(out);
    if (f->n > SG_SASS_MAX_TERMS) return false;
    for (uint32_t i = 0; i < f->n; i++) {
        sg_access_expr_t t, x, y;
        uint8_t ta = f->t[i].a, tb = f->t[i].b;
        ax_const(&t, f->t[i].coef);
        if (ta != SG_SASS_ATOM_NONE && (!atom_expr(ta, &x) || !ax_mul(&t, &x, &t))) return false;
        if (tb != SG_SASS_ATOM_NONE && (!atom_expr(tb, &y) || !ax_mul(&t, &y, &t))) return false;
        if (!ax_add(out, &t, 1, out)) return false;
    }
    return true;
}

/* The loops f uses: bit 0 the grid-stride loop's K0, bit 1 K1. */
static unsigned uses_loop(const sg_sass_affine_t *f)
{
    unsigned m = 0;
    for (uint32_t i = 0; i < f->n && i < SG_SASS_MAX_TERMS; i++) {
        m |= f->t[i].a == SG_SASS_GRID_K || f->t[i].b == SG_SASS_GRID_K ? 1u : 0u;
        m |= f->t[i].a == SG_SASS_LOOP_K || f->t[i].b == SG_SASS_LOOP_K ? 2u : 0u;
    }
    return m;
}

/* The parameter holding byte offset `off` of the argument buffer. */
static void locate_param(const sg_access_kernel_t *k, uint32_t off, sg_access_site_t *s)
{
    s->param_index = SG_NONE;
    for (uint32_t i = 0; i < k->n_params; i++)
        if (off >= k->param_offsets[i] && off - k->param_offsets[i] < k->param_sizes[i]) {
            s->param_index = i;
            s->param_inner = off - k->param_offsets[i];
        }
}

/* A SASS condition `lhs OP rhs` as a fact e REL 0, with the checks its
 * comparison needs: a 4-byte comparison sees its left side as a 32-bit
 * value, which must then fit (signed or unsigned as compared). */
static bool sass_fact(const sg_sass_cond_t *c, sg_access_cond_t *fact, sg_access_cond_t *chk,
                      uint32_t *n_chk)
{
    sg_access_expr_t l, r;
    memset(fact, 0, sizeof *fact);
    *n_chk = 0;
    if (!affine_expr(&c->lhs, &l)) return false;
    if (c->param >= 0) {
        if (c->width != 4 && c->width != 8) return false;
        ax_atom(&r, sg_access_param_atom((uint32_t)c->param, c->width, !c->uns), 1);
    } else {
        ax_const(&r, c->rhs_const);
    }
    bool flip = c->op == SG_SASS_GT || c->op == SG_SASS_GE;
    if (!ax_add(flip ? &r : &l, flip ? &l : &r, -1, &fact->e)) return false;
    switch (c->op) {
    case SG_SASS_LT:
    case SG_SASS_GT: fact->rel = SG_ACCESS_LT; break;
    case SG_SASS_LE:
    case SG_SASS_GE: fact->rel = SG_ACCESS_LE; break;
    case SG_SASS_EQ: fact->rel = SG_ACCESS_EQ; break;
    case SG_SASS_NE: fact->rel = SG_ACCESS_NE; break;
    default: return false;
    }
    bool narrow = c->param < 0 || c->width == 4;
    chk[0].e = l;
    chk[0].rel = narrow ? (c->uns ? SG_ACCESS_FITS_U32 : SG_ACCESS_FITS_S32)
                        : (c->uns ? SG_ACCESS_FITS_U64 : SG_ACCESS_FITS_U64);
    chk[0].from_iter = 0;
    chk[0].n_checks = 0;
    chk[0].first_check = 0;
    *n_chk = narrow || c->uns ? 1 : 0;
    unsigned loops = uses_loop(&c->lhs);
    if (*n_chk && (loops == 1 || loops == 2)) {
        /* a loop's condition, compared in 32 bits at every pass: the left
         * side fits at the first pass (K = 0), and a pass where it held
         * gives one where it fits again (the step check, verified one pass
         * ahead under the condition itself): by induction the comparison
         * never wrapped */
        sg_access_expr_t zero;
        ax_const(&zero, 0);
        chk[1] = chk[0];
        chk[1].from_iter = (uint16_t)loops; /* loop L + 1: K0 1, K1 2 */
        if (!ax_subst(&l, loops == 1 ? GRID_LOOP : OTHER_LOOP, &zero, &chk[0].e)) return false;
        *n_chk = 2;
    } else if (*n_chk && loops) {
        return false; /* two loops in one 32-bit comparison: not checked */
    }
    fact->n_checks = (uint16_t)*n_chk;
    return true;
}

/* Which access.h reason a SASS reason text stands for. */
static uint8_t reason_of(const sg_sass_access_t *a)
{
    const char *r = a->reason;
    bool loaded = strstr(r, "loaded from memory") != NULL;
    if (a->base < 0 && !a->symbol[0]) return loaded ? SG_ACCESS_R_LOADED_ADDRESS : SG_ACCESS_R_NO_BASE;
    if (loaded) return SG_ACCESS_R_DATA_DEPENDENT;
    if (strstr(r, "loop") || strstr(r, "across paths")) return SG_ACCESS_R_LOOP;
    if (strstr(r, "not reached")) return SG_ACCESS_R_CONTROL_FLOW;
    if (strstr(r, "call")) return SG_ACCESS_R_CALL;
    if (strstr(r, "complex") || strstr(r, "beyond")) return SG_ACCESS_R_TOO_COMPLEX;
    return SG_ACCESS_R_NONAFFINE;
}

static int add_access(sg_access_kernel_t *k, const sg_sass_access_t *a, uint32_t index,
                      unsigned *uses)
{
    sg_access_site_t s;
    memset(&s, 0, sizeof s);
    s.kind = a->kind == SG_SASS_STORE    ? SG_ACCESS_STORE
             : a->kind == SG_SASS_ATOMIC ? SG_ACCESS_ATOMIC
                                         : SG_ACCESS_LOAD;
    s.generic = a->generic;
    s.width = a->width;
    s.vector = a->width > 8;
    s.stmt = index;
    s.line = a->pc;
    s.param_index = SG_NONE;
    if (a->base >= 0) {
        s.base_kind = SG_ACCESS_BASE_PARAM;
        s.base_param = (uint32_t)a->base;
        locate_param(k, s.base_param, &s);
    } else if (a->symbol[0]) {
        s.base_kind = SG_ACCESS_BASE_SYMBOL;
        snprintf(s.base_symbol, sizeof s.base_symbol, "%s", a->symbol);
    }
    sg_access_cond_t facts[SG_SASS_MAX_CONDS], fchk[2 * SG_SASS_MAX_CONDS], chk[2];
    uint32_t nf = 0, nfc = 0, nk = 0;
    bool ok = (a->base >= 0 || a->symbol[0]) && a->index_known && !a->reason[0] &&
              affine_expr(&a->index, &s.offset);
    if (ok && a->scaled) {
        /* the index times a stride word (signed) */
        sg_access_expr_t w;
        ok = a->scale_width == 4 || a->scale_width == 8;
        ax_atom(&w, sg_access_param_atom(a->scale_param, a->scale_width ? a->scale_width : 4, true), 1);
        ok = ok && ax_mul(&s.offset, &w, &s.offset);
    }
    *uses |= ok ? uses_loop(&a->index) : 0;
    bool facts_ok = true;
    for (uint32_t i = 0; i < a->n_conds && i < SG_SASS_MAX_CONDS; i++) {
        uint32_t nc;
        if (!sass_fact(&a->conds[i], &facts[nf], &fchk[nfc], &nc)) {
            facts_ok = false;
            break;
        }
        nf++;
        nfc += nc;
        *uses |= uses_loop(&a->conds[i].lhs);
    }
    if (!facts_ok) {
        ok = false;
        nf = nfc = 0; /* fewer facts only widen what the site may do */
    }
    if (ok && a->index_32bit) {
        /* computed in 32 bits, then extended (sign or zero: either is the
         * true value only in [0, 2^31)) */
        memset(chk, 0, sizeof chk);
        chk[0].e = chk[1].e = s.offset;
        chk[0].rel = SG_ACCESS_FITS_S32;
        chk[1].rel = SG_ACCESS_FITS_U32;
        nk = 2;
    }
    if (ok) {
        s.reason = SG_ACCESS_OK;
        s.exact = a->conditions_exact;
        s.thread_local = true;
        snprintf(s.detail, sizeof s.detail, "%.40s at 0x%x", a->op, a->pc);
        return sg_access_kernel_add_site(k, &s, facts, nf, fchk, chk, nk);
    }
    s.reason = a->reason[0] || (a->base < 0 && !a->symbol[0]) ? reason_of(a) : SG_ACCESS_R_TOO_COMPLEX;
    snprintf(s.detail, sizeof s.detail, "0x%x %.30s: %.56s", a->pc, a->op,
             a->reason[0] ? a->reason : "conditions beyond the analysis");
    ax_zero(&s.offset);
    /* its conditions still say when it runs (evaluation: maybe never) */
    return sg_access_kernel_add_site(k, &s, facts, nf, fchk, NULL, 0);
}

int sg_access_from_sass(const sg_sass_kernel_t *sk, uint32_t n_params, const uint32_t *offsets,
                        const uint32_t *sizes, uint32_t params_size, sg_access_kernel_t *out)
{
    if (!sk || !out || (n_params && (!offsets || !sizes))) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    out->source = SG_ACCESS_SOURCE_SASS;
    out->kernel = strdup(sk->name ? sk->name : "");
    out->param_offsets = malloc((n_params ? n_params : 1) * sizeof(uint32_t));
    out->param_sizes = malloc((n_params ? n_params : 1) * sizeof(uint32_t));
    if (!out->kernel || !out->param_offsets || !out->param_sizes) {
        sg_access_kernel_free(out);
        return SG_ENOMEM;
    }
    out->n_params = n_params;
    if (n_params) {
        memcpy(out->param_offsets, offsets, n_params * sizeof(uint32_t));
        memcpy(out->param_sizes, sizes, n_params * sizeof(uint32_t));
    }
    out->params_size = sk->param_size ? sk->param_size : params_size;
    if (sk->status != SG_SASS_ANALYSED) {
        out->status = SG_EUNSUPPORTED;
        out->reason = sk->status == SG_SASS_NO_DISASSEMBLER ? SG_ACCESS_R_NO_DISASSEMBLER
                      : sk->status == SG_SASS_TOO_COMPLEX  ? SG_ACCESS_R_TOO_COMPLEX
                                                           : SG_ACCESS_R_DISASSEMBLER;
        snprintf(out->detail, sizeof out->detail, "SASS: %.150s", sk->reason);
        return SG_OK;
    }
    unsigned loops = 0;
    for (uint32_t i = 0; i < sk->n_accesses; i++) {
        int rc = add_access(out, &sk->accesses[i], i, &loops);
        if (rc) {
            sg_access_kernel_free(out);
            return rc;
        }
    }
    if (loops) {
        /* the loop counts K0 (grid-stride loops) and K1 (others): bounded by
         * each site's conditions */
        out->n_loops = loops & 2 ? 2 : 1;
        out->loops = calloc(out->n_loops, sizeof *out->loops);
        if (!out->loops) {
            sg_access_kernel_free(out);
            return SG_ENOMEM;
        }
        for (uint32_t l = 0; l < out->n_loops; l++) {
            out->loops[l].parent = SG_NONE;
            out->loops[l].trip_cond = SG_NONE;
        }
    }
    /* a store through an unattributed address is an unknown site already;
     * anything else that made the kernel uncertain (a call out of it, an
     * indirect branch) escapes the analysis as a whole */
    bool escaped = !sk->certain && !strstr(sk->uncertain_reason, "unattributed address");
    if (escaped) {
        out->reason = SG_ACCESS_R_UNSUPPORTED;
        snprintf(out->detail, sizeof out->detail, "SASS: %.150s", sk->uncertain_reason);
    }
    for (uint32_t i = 0; i < sk->n_accesses; i++)
        if (sk->accesses[i].kind == SG_SASS_ATOMIC) out->flags |= 1ull << SG_ACCESS_F_ATOMIC;
    /* every word the SASS side saw used as an address, candidates of a
     * select included: relocation rewrites them all */
    out->address_words = malloc((sk->n_params + 1) * sizeof(uint32_t));
    if (!out->address_words) {
        sg_access_kernel_free(out);
        return SG_ENOMEM;
    }
    for (uint32_t i = 0; i < sk->n_params; i++) out->address_words[i] = sk->params[i].offset;
    out->n_address_words = sk->n_params;
    int rc = sg_access_kernel_addresses(out);
    if (rc) {
        sg_access_kernel_free(out);
        return rc;
    }
    /* Complete for relocation: every access starts from a named word (its
     * base, or one of the candidates a select chose between) or from a
     * loaded pointer, and nothing escaped (a call out, an indirect branch). */
    bool complete = !escaped;
    for (uint32_t i = 0; i < sk->n_accesses && complete; i++) {
        const sg_sass_access_t *a = &sk->accesses[i];
        bool loaded = strstr(a->reason, "loaded from memory") != NULL;
        /* (a module symbol's address is the module's own: nothing to relocate) */
        complete = a->base >= 0 || loaded || a->n_candidates > 0 || a->symbol[0];
    }
    out->addresses_complete = complete;
    return SG_OK;
}
