/* access_internal.h: what code/access*.c share: the polynomial algebra over
 * sg_access_expr_t, intervals, and the atom kinds only the analysis uses
 * while it runs (addresses of symbols, loop placeholders). */
#ifndef SGCAP_CODE_ACCESS_INTERNAL_H
#define SGCAP_CODE_ACCESS_INTERNAL_H

#include "code/access.h"

/* Internal atom kinds; never in a finished result. */
enum {
    AX_SYMADDR = 6, /* address of a symbol: arg = sym_kind << 20 | index */
    AX_PH = 7,      /* placeholder for a register's value at a loop head (first pass) */
};

typedef __int128 i128;
#define AX_INF ((i128)1 << 100)

typedef struct {
    i128 lo, hi; /* inclusive; +-AX_INF when unbounded */
} ival_t;

/* Building and combining expressions. Every function returns false when the
 * result does not fit (more than SG_ACCESS_MAX_TERMS terms, a degree above
 * SG_ACCESS_MAX_DEGREE, 64-bit coefficient overflow); out is then undefined.
 * Outputs may alias inputs. */
void ax_zero(sg_access_expr_t *e);
void ax_const(sg_access_expr_t *e, int64_t c);
void ax_atom(sg_access_expr_t *e, sg_access_atom_t a, int64_t coef);
bool ax_add(const sg_access_expr_t *a, const sg_access_expr_t *b, int64_t kb, sg_access_expr_t *out);
bool ax_add_const(const sg_access_expr_t *a, int64_t k, sg_access_expr_t *out);
bool ax_scale(const sg_access_expr_t *a, int64_t k, sg_access_expr_t *out);
bool ax_mul(const sg_access_expr_t *a, const sg_access_expr_t *b, sg_access_expr_t *out);
/* Replace every occurrence of `atom` by `by`. */
bool ax_subst(const sg_access_expr_t *e, sg_access_atom_t atom, const sg_access_expr_t *by,
              sg_access_expr_t *out);
bool ax_equal(const sg_access_expr_t *a, const sg_access_expr_t *b);
bool ax_is_const(const sg_access_expr_t *e, int64_t *c);
/* Bit set of atom kinds used (1 << kind). */
uint32_t ax_kinds(const sg_access_expr_t *e);
bool ax_has_atom(const sg_access_expr_t *e, sg_access_atom_t a);
/* Coefficient of the degree-1 term `a` (0 if none); *other: a appears in another term. */
int64_t ax_linear_coef(const sg_access_expr_t *e, sg_access_atom_t a, bool *other);
/* Exact division of every coefficient and the constant by d (false if not exact). */
bool ax_div_exact(const sg_access_expr_t *e, int64_t d, sg_access_expr_t *out);
/* Largest t with 2^t dividing every coefficient and the constant (64 for 0). */
uint32_t ax_trailing_zeros(const sg_access_expr_t *e);
uint64_t ax_hash(const sg_access_expr_t *e);

/* Interval of an expression, given each atom's interval. */
typedef ival_t (*ax_range_fn)(void *ctx, sg_access_atom_t a);
ival_t ax_range(const sg_access_expr_t *e, ax_range_fn fn, void *ctx);
ival_t iv_add(ival_t a, ival_t b);
ival_t iv_mul(ival_t a, ival_t b);
ival_t iv_point(i128 v);
bool iv_bounded(ival_t a);

/* Format with the internal kinds too ("&S3", "X7"). */
int ax_format(const sg_access_expr_t *e, char *buf, size_t n);

#endif /* SGCAP_CODE_ACCESS_INTERNAL_H */
