/* sass_poly.c: the polynomials the SASS dataflow keeps in registers
 * (sass_internal.h): integer coefficients over products of up to four
 * atoms (special registers, parameter words, loop counts, quotients), at
 * most SG_POLY_TERMS terms, kept sorted so that equal polynomials compare
 * equal term by term. Every operation fails (returns false) rather than
 * overflow a coefficient, exceed the degree or drop a term. */
#include <string.h>

#include "code/sass_internal.h"

uint64_t sg_poly_key(const sg_term_t *t)
{
    return ((uint64_t)t->at[0] << 48) | ((uint64_t)t->at[1] << 32) | ((uint64_t)t->at[2] << 16) |
           t->at[3];
}

uint32_t sg_poly_degree(const sg_term_t *t)
{
    uint32_t d = 0;
    for (int k = 0; k < SG_POLY_DEGREE; k++)
        d += t->at[k] != 0;
    return d;
}

bool sg_poly_eq(const sg_poly_t *x, const sg_poly_t *y)
{
    if (x->n != y->n)
        return false;
    for (uint8_t i = 0; i < x->n; i++)
        if (x->t[i].c != y->t[i].c || sg_poly_key(&x->t[i]) != sg_poly_key(&y->t[i]))
            return false;
    return true;
}

void sg_poly_const(sg_poly_t *p, int64_t c)
{
    memset(p, 0, sizeof *p);
    if (c) {
        p->n = 1;
        p->t[0].c = c;
    }
}

void sg_poly_atom(sg_poly_t *p, uint16_t a)
{
    memset(p, 0, sizeof *p);
    p->n = 1;
    p->t[0].c = 1;
    p->t[0].at[SG_POLY_DEGREE - 1] = a;
}

/* Sort the atoms of a term ascending, zeros (no atom) first. */
static void sort_atoms(uint16_t at[SG_POLY_DEGREE])
{
    for (int i = 1; i < SG_POLY_DEGREE; i++)
        for (int j = i; j > 0 && at[j - 1] > at[j]; j--) {
            uint16_t t = at[j];
            at[j] = at[j - 1];
            at[j - 1] = t;
        }
}

bool sg_poly_add_term(sg_poly_t *p, int64_t c, const uint16_t atoms[SG_POLY_DEGREE])
{
    if (!c)
        return true;
    sg_term_t nt = {.c = c};
    memcpy(nt.at, atoms, sizeof nt.at);
    sort_atoms(nt.at);
    uint64_t k = sg_poly_key(&nt);
    uint8_t i = 0;
    while (i < p->n && sg_poly_key(&p->t[i]) < k)
        i++;
    if (i < p->n && sg_poly_key(&p->t[i]) == k) {
        if (__builtin_add_overflow(p->t[i].c, c, &p->t[i].c))
            return false;
        if (p->t[i].c == 0) {
            memmove(&p->t[i], &p->t[i + 1], (size_t)(p->n - i - 1) * sizeof(sg_term_t));
            p->n--;
        }
        return true;
    }
    if (p->n >= SG_POLY_TERMS)
        return false;
    memmove(&p->t[i + 1], &p->t[i], (size_t)(p->n - i) * sizeof(sg_term_t));
    p->t[i] = nt;
    p->n++;
    return true;
}

bool sg_poly_add(sg_poly_t *r, const sg_poly_t *x, const sg_poly_t *y, int64_t ys)
{
    sg_poly_t o = *x;
    for (uint8_t i = 0; i < y->n; i++) {
        int64_t c;
        if (__builtin_mul_overflow(y->t[i].c, ys, &c) || !sg_poly_add_term(&o, c, y->t[i].at))
            return false;
    }
    *r = o;
    return true;
}

bool sg_poly_mul(sg_poly_t *r, const sg_poly_t *x, const sg_poly_t *y)
{
    sg_poly_t o = {0};
    for (uint8_t i = 0; i < x->n; i++)
        for (uint8_t j = 0; j < y->n; j++) {
            const sg_term_t *u = &x->t[i], *v = &y->t[j];
            uint16_t f[SG_POLY_DEGREE] = {0};
            int nf = 0;
            for (int k = 0; k < 2 * SG_POLY_DEGREE; k++) {
                uint16_t a = k < SG_POLY_DEGREE ? u->at[k] : v->at[k - SG_POLY_DEGREE];
                if (!a)
                    continue;
                if (nf == SG_POLY_DEGREE)
                    return false; /* beyond the degree */
                f[nf++] = a;
            }
            int64_t c;
            if (__builtin_mul_overflow(u->c, v->c, &c) || !sg_poly_add_term(&o, c, f))
                return false;
        }
    *r = o;
    return true;
}

bool sg_poly_is_const(const sg_poly_t *p, int64_t *c)
{
    if (p->n == 0) {
        *c = 0;
        return true;
    }
    if (p->n == 1 && sg_poly_degree(&p->t[0]) == 0) {
        *c = p->t[0].c;
        return true;
    }
    return false;
}

bool sg_poly_has_atom_in(const sg_poly_t *p, uint16_t lo, uint16_t hi)
{
    for (uint8_t i = 0; i < p->n; i++)
        for (int k = 0; k < SG_POLY_DEGREE; k++)
            if (p->t[i].at[k] >= lo && p->t[i].at[k] <= hi && p->t[i].at[k])
                return true;
    return false;
}

bool sg_poly_has_params(const sg_poly_t *p)
{
    for (uint8_t i = 0; i < p->n; i++)
        for (int k = 0; k < SG_POLY_DEGREE; k++)
            if (p->t[i].at[k] & A_PARAM)
                return true;
    return false;
}

uint16_t sg_poly_term_atom(const sg_term_t *t)
{
    return sg_poly_degree(t) == 1 ? t->at[SG_POLY_DEGREE - 1] : 0;
}

bool sg_poly_subst(sg_poly_t *r, const sg_poly_t *p, uint16_t atom, const sg_poly_t *by)
{
    sg_poly_t o = {0};
    for (uint8_t i = 0; i < p->n; i++) {
        /* the term without `atom`, times `by` once for every occurrence */
        sg_poly_t t = {0}, f;
        uint16_t rest[SG_POLY_DEGREE] = {0};
        int nr = 0, times = 0;
        for (int k = 0; k < SG_POLY_DEGREE; k++) {
            if (p->t[i].at[k] == atom && atom)
                times++;
            else if (p->t[i].at[k])
                rest[nr++] = p->t[i].at[k];
        }
        if (!sg_poly_add_term(&t, p->t[i].c, rest))
            return false;
        for (int k = 0; k < times; k++) {
            if (!sg_poly_mul(&f, &t, by))
                return false;
            t = f;
        }
        if (!sg_poly_add(&o, &o, &t, 1))
            return false;
    }
    *r = o;
    return true;
}

bool sg_poly_split(const sg_poly_t *p, uint16_t atom, sg_poly_t *with, sg_poly_t *without)
{
    sg_poly_t w = {0}, wo = {0};
    for (uint8_t i = 0; i < p->n; i++) {
        int times = 0;
        uint16_t rest[SG_POLY_DEGREE] = {0};
        int nr = 0;
        for (int k = 0; k < SG_POLY_DEGREE; k++) {
            if (p->t[i].at[k] == atom && atom)
                times++;
            else if (p->t[i].at[k])
                rest[nr++] = p->t[i].at[k];
        }
        if (times > 1)
            return false;
        if (!sg_poly_add_term(times ? &w : &wo, p->t[i].c, times ? rest : p->t[i].at))
            return false;
    }
    *with = w;
    *without = wo;
    return true;
}
