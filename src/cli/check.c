/*
 * check.c — the report of `tilescale run --check-against` (and of
 * --check-target, and of distributed runs): does every element of a
 * kernel's tensor match the reference's, and if a line says "ok", why.
 *
 * The rule is numpy.allclose(got, ref, rtol, atol)'s: an element passes
 * when |got - ref| <= atol + rtol * |ref|.  The tolerance thus grows with
 * the reference's magnitude and never falls below atol, so a relative
 * error far above rtol can pass where |ref| is tiny; printing only
 * "max rel err 0.712 ok" hides that.  The report therefore prints the rule
 * once, the tolerances per tensor, and the worst element: the one whose
 * error uses the largest share of its allowance (error / (atol + rtol *
 * |ref|)), with its multi-dimensional index, both values, the error and
 * the allowance.  Where the largest relative error sits elsewhere and
 * exceeds rtol, that element is printed too, with the reason it passes.
 *
 * Special values: a NaN matches a NaN, except in outputs that were
 * poisoned with NaN before the run, where a NaN left behind is an element
 * the kernel never wrote (the reference, poisoned too, may not have
 * written it either); infinities match infinities of the same sign.
 */
#include <math.h>
#include <stdio.h>

#include "cli/check.h"

void cli_default_tol(TsDType dt, double *atol, double *rtol) {
    switch (dt) {
    case TS_FLOAT16: *atol = *rtol = 1e-2; break;
    case TS_BFLOAT16: *atol = *rtol = 2e-2; break;
    case TS_FLOAT8_E4M3: case TS_FLOAT8_E5M2: *atol = *rtol = 1.3e-1; break;
    case TS_FLOAT32: *atol = *rtol = 1e-4; break;
    case TS_FLOAT64: *atol = *rtol = 1e-10; break;
    default: *atol = *rtol = 0; break;
    }
}

void cli_print_rule(void) {
    printf("  rule: |got - ref| <= atol + rtol * |ref| for every element (numpy.allclose); NaN matches NaN\n"
           "        except in outputs poisoned before the run\n");
}

static void print_index(const TsTensor *t, int64_t flat) {
    int64_t idx[16];
    int nd = t->ndim < 16 ? t->ndim : 16;
    for (int d = nd - 1; d >= 0; d--) {
        int64_t e = t->shape[d] > 0 ? t->shape[d] : 1;
        idx[d] = flat % e;
        flat /= e;
    }
    putchar('[');
    for (int d = 0; d < nd; d++) printf("%s%lld", d ? ", " : "", (long long)idx[d]);
    putchar(']');
}

static void print_shape(const TsTensor *t) {
    printf("%s[", ts_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    putchar(']');
}

/* The error of one element and whether it passes. */
static double elem_err(double g, double r, int poisoned, int *ok, double atol, double rtol) {
    if (isnan(g) || isnan(r)) {
        *ok = isnan(g) && isnan(r) && !poisoned;
        return *ok ? 0 : INFINITY;
    }
    if (isinf(g) || isinf(r)) {
        *ok = g == r;
        return *ok ? 0 : INFINITY;
    }
    double e = fabs(g - r);
    *ok = e <= atol + rtol * fabs(r);
    return e;
}

int cli_compare(const char *label, const TsTensor *got, const TsTensor *want, int64_t want_off, int poisoned,
                double atol, double rtol) {
    double da, dr;
    cli_default_tol(got->dtype, &da, &dr);
    if (atol < 0) atol = da;
    if (rtol < 0) rtol = dr;
    int64_t n = ts_tensor_numel(got), bad = 0, first_bad = -1, worst = -1, relpos = -1;
    double max_abs = 0, max_rel = 0, worst_share = -1;
    for (int64_t i = 0; i < n; i++) {
        double g = ts_tensor_get(got, i), r = ts_tensor_get(want, want_off + i);
        int ok;
        double e = elem_err(g, r, poisoned, &ok, atol, rtol);
        double allow = atol + rtol * (isfinite(r) ? fabs(r) : 0);
        double share = ok && e == 0 ? 0 : allow > 0 ? e / allow : INFINITY;
        if (!ok && share <= 1) share = INFINITY; /* NaN/inf mismatches */
        if (share > worst_share) worst_share = share, worst = i;
        if (e > max_abs) max_abs = e;
        if (isfinite(e) && fabs(r) > 0 && e / fabs(r) > max_rel) max_rel = e / fabs(r), relpos = i;
        if (!ok) {
            if (first_bad < 0) first_bad = i;
            bad++;
        }
    }
    printf("  %-12s ", label);
    print_shape(got);
    printf("  atol %g rtol %g  max abs err %.3g  max rel err %.3g  %s\n", atol, rtol, max_abs, max_rel,
           bad ? "MISMATCH" : "ok");
    if (worst >= 0 && worst_share > 0) {
        double g = ts_tensor_get(got, worst), r = ts_tensor_get(want, want_off + worst);
        int ok;
        double e = elem_err(g, r, poisoned, &ok, atol, rtol);
        printf("    worst element ");
        print_index(got, worst);
        printf(": got %.9g, expected %.9g, error %.3g, allowed %.3g (atol %g + rtol %g * %.3g)%s\n", g, r, e,
               atol + rtol * (isfinite(r) ? fabs(r) : 0), atol, rtol, isfinite(r) ? fabs(r) : 0,
               ok ? "" : isnan(g) && poisoned ? ": NaN left in a poisoned output (never written?)" : ": FAILS");
    }
    if (relpos >= 0 && relpos != worst && max_rel > rtol) {
        double g = ts_tensor_get(got, relpos), r = ts_tensor_get(want, want_off + relpos);
        if (fabs(g - r) <= atol + rtol * fabs(r)) {
            printf("    largest rel err at ");
            print_index(got, relpos);
            printf(": got %.9g, expected %.9g, error %.3g <= allowed %.3g: passes because |ref| is small (atol)\n", g,
                   r, fabs(g - r), atol + rtol * fabs(r));
        }
    }
    if (bad) {
        printf("    %lld of %lld elements fail; the first at ", (long long)bad, (long long)n);
        print_index(got, first_bad);
        printf(": got %.9g, expected %.9g\n", ts_tensor_get(got, first_bad), ts_tensor_get(want, want_off + first_bad));
    }
    return bad == 0;
}
