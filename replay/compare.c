/* compare.c: snapshot comparison, bitwise or as float32 with a ULP
 * tolerance, with the per-buffer statistics the validation report prints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Position of a float on the number line as an integer: negative floats are
 * mirrored so that the order of the integers is the order of the floats and
 * +0 and -0 land on the same point. */
static int64_t ordered(uint32_t bits)
{
    int64_t magnitude = (int64_t)(bits & 0x7fffffffu);
    return (bits & 0x80000000u) ? -magnitude : magnitude;
}

uint64_t sg_float32_ulp_distance(float a, float b)
{
    uint32_t ua = float_bits(a), ub = float_bits(b);
    if (ua == ub) return 0;
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return (na && nb) ? 0 : SG_ULP_INF;
    /* An overflow to infinity is a real difference, not "one step past
     * FLT_MAX": only an infinity equals itself. */
    if (isinf(a) || isinf(b)) return SG_ULP_INF;
    int64_t d = ordered(ua) - ordered(ub);
    return (uint64_t)(d < 0 ? -d : d);
}

/* Statistics of the float32 view; whether the pair counts as a mismatch is
 * decided by the caller. */
static void float_stats(float g, float w, sg_compare_result_t *r, uint64_t *ulp_out)
{
    uint64_t ulp = sg_float32_ulp_distance(g, w);
    *ulp_out = ulp;
    if (ulp > r->max_ulp) r->max_ulp = ulp;
    if (isfinite(g) && isfinite(w)) {
        double d = fabs((double)g - (double)w);
        if (d > r->max_abs) r->max_abs = d;
    } else if (isinf(g) != isinf(w) && !isnan(g) && !isnan(w)) {
        r->max_abs = INFINITY;
    }
}

void sg_compare_buffers(const void *got, const void *want, size_t n, const sg_compare_options_t *o,
                        sg_compare_result_t *r)
{
    const unsigned char *g = got, *w = want;
    bool as_float = o && o->float32;
    memset(r, 0, sizeof *r);
    r->bytes = n;
    r->first_mismatch = UINT64_MAX;
    r->as_float = (n % 4) == 0;
    size_t whole = n - n % 4;

    if (!as_float) {
        r->elements = n;
        /* memcmp first: the common case (a match) stays at memory speed. */
        if (memcmp(g, w, n) == 0) return;
        for (size_t i = 0; i < n; i++) {
            if (g[i] == w[i]) continue;
            if (r->first_mismatch == UINT64_MAX) r->first_mismatch = i;
            r->mismatches++;
        }
        if (r->as_float) {
            for (size_t i = 0; i < whole; i += 4) {
                if (memcmp(g + i, w + i, 4) == 0) continue;
                float fg, fw;
                uint64_t ulp;
                memcpy(&fg, g + i, 4);
                memcpy(&fw, w + i, 4);
                float_stats(fg, fw, r, &ulp);
            }
        }
        return;
    }

    uint64_t tol = o->ulp;
    r->elements = whole / 4;
    for (size_t i = 0; i < whole; i += 4) {
        if (memcmp(g + i, w + i, 4) == 0) continue;
        float fg, fw;
        uint64_t ulp;
        memcpy(&fg, g + i, 4);
        memcpy(&fw, w + i, 4);
        float_stats(fg, fw, r, &ulp);
        if (ulp == 0) continue; /* NaN payloads, +0/-0: equal as numbers */
        r->differing++;
        if (ulp > tol) {
            if (r->first_mismatch == UINT64_MAX) r->first_mismatch = i / 4;
            r->mismatches++;
        }
    }
    /* A tail that is not a whole float: bytes, bitwise, counted as one element. */
    if (whole < n && memcmp(g + whole, w + whole, n - whole) != 0) {
        r->differing++;
        if (r->first_mismatch == UINT64_MAX) r->first_mismatch = whole / 4;
        r->mismatches++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sg_replay_median(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
