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
 * float16 outputs are checked in ulps by default (issue 9 H: "fp16
 * outputs checked to a few ulp"): an element passes when got and ref are
 * at most 4 units in the last place apart, or when |got - ref| is at most
 * an absolute floor for results near zero after cancellation, where ulps
 * say nothing: 4 ulps at the tensor's own scale (the root mean square of
 * the reference), and at least 1e-3.  The floor scales because a sum's
 * rounding error does: tensor cores accumulate a K = 2048 float16 GEMM with
 * truncation, about 4e-3 off near zero where the typical |C| is 15, while a
 * float16 accumulator is off by whole float16 ulps of the partial sums
 * everywhere.  rtol 1e-2 (the old default) let 10 to 20 ulps through: a
 * K = 64 GEMM accumulating in float16 passed it.  --atol X sets the floor,
 * --ulp N the ulps (for any float dtype, where the floor is N ulps at the
 * tensor's scale); --rtol (without --ulp) brings back numpy.allclose's
 * rule.  The ulp distance is taken between the dtype's bit patterns read as
 * sign-magnitude integers, so it counts representable values, subnormals
 * and the step to infinity included.
 *
 * Special values: a NaN matches a NaN, except in outputs that were
 * poisoned with NaN before the run, where a NaN left behind is an element
 * the kernel never wrote (the reference, poisoned too, may not have
 * written it either); infinities match infinities of the same sign.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

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

int64_t cli_default_ulp(TsDType dt) { return dt == TS_FLOAT16 ? 4 : -1; }

void cli_print_rule(void) {
    printf("  rule: |got - ref| <= atol + rtol * |ref| for every element (numpy.allclose); NaN matches NaN\n"
           "        except in outputs poisoned before the run\n");
}

void cli_print_ulp_rule(int64_t ulp) {
    if (ulp >= 0)
        printf("  rule (--ulp %lld): at most %lld ulps of the dtype apart, or |got - ref| <= atol (by default\n"
               "        %lld ulps at the tensor's scale, the root mean square of ref; float16: at least 1e-3)\n",
               (long long)ulp, (long long)ulp, (long long)ulp);
    else
        printf("  rule for float16 (default; with --rtol, the rule above): at most %lld ulps apart (steps from\n"
               "        one float16 value to the next), or |got - ref| <= atol (for results near 0; by default\n"
               "        max(1e-3, 4 ulps at the tensor's scale: the root mean square of ref))\n",
               (long long)cli_default_ulp(TS_FLOAT16));
}

/* v rounded to dt, its bits read as a sign-magnitude integer: neighbours
 * differ by 1 (0 and -0 are both 0). */
static int64_t ordered(TsDType dt, double v) {
    unsigned char buf[8] = {0};
    int64_t one = 1;
    TsTensor t = {buf, dt, 1, &one, NULL};
    ts_tensor_set(&t, 0, v);
    int bits = ts_dtype_bits(dt);
    if (bits < 8 || bits > 64) return 0;
    uint64_t u = 0;
    memcpy(&u, buf, (size_t)bits / 8); /* little-endian host */
    uint64_t sign = 1ull << (bits - 1);
    return (u & sign) ? -(int64_t)(u & (sign - 1)) : (int64_t)(u & (sign - 1));
}

/* Explicit mantissa bits of a float dtype (an ulp is 2^-m of a power of two). */
static int mantissa_bits(TsDType dt) {
    switch (dt) {
    case TS_FLOAT16: return 10;
    case TS_BFLOAT16: return 7;
    case TS_FLOAT8_E4M3: return 3;
    case TS_FLOAT8_E5M2: return 2;
    case TS_FLOAT32: return 23;
    default: return 52;
    }
}

/* The dtype's ulp at |x| (the spacing of its values there; subnormal
 * spacing below the smallest normal). */
static double ulp_at(TsDType dt, double x) {
    int m = mantissa_bits(dt), emin;
    switch (dt) {
    case TS_FLOAT16: emin = -14; break;
    case TS_BFLOAT16: case TS_FLOAT32: emin = -126; break;
    case TS_FLOAT8_E4M3: emin = -6; break;
    case TS_FLOAT8_E5M2: emin = -14; break;
    default: emin = -1022; break;
    }
    int e = emin;
    if (isfinite(x) && x != 0) {
        frexp(fabs(x), &e); /* |x| = f * 2^e, f in [0.5, 1) */
        e -= 1;
        if (e < emin) e = emin;
    }
    return ldexp(1.0, e - m);
}

/* The ulp distance of got and ref in dt (INT64_MAX when it does not fit). */
static int64_t ulps(TsDType dt, double g, double r) {
    int64_t a = ordered(dt, g), b = ordered(dt, r);
    uint64_t d = a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
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

/* The rule one tensor is checked by. */
typedef struct Tol {
    double atol, rtol; /* allclose's; in the ulp rule atol only */
    int64_t ulp;       /* >= 0: the ulp rule (at most ulp apart, or within atol); -1: allclose */
    TsDType dt;        /* the tensor's dtype, whose ulps count */
} Tol;

/* The error of one element, whether it passes and the share of its
 * allowance it uses (> 1: fails). */
static double elem_err(double g, double r, int poisoned, int *ok, const Tol *t, double *share) {
    if (isnan(g) || isnan(r)) {
        *ok = isnan(g) && isnan(r) && !poisoned;
        *share = *ok ? 0 : INFINITY;
        return *ok ? 0 : INFINITY;
    }
    if (isinf(g) || isinf(r)) {
        *ok = g == r;
        *share = *ok ? 0 : INFINITY;
        return *ok ? 0 : INFINITY;
    }
    double e = fabs(g - r);
    if (t->ulp >= 0) {
        int64_t u = ulps(t->dt, g, r);
        *ok = u <= t->ulp || e <= t->atol;
        double su = u == 0 ? 0 : t->ulp > 0 ? (double)u / (double)t->ulp : INFINITY;
        double sa = e == 0 ? 0 : t->atol > 0 ? e / t->atol : INFINITY;
        *share = su < sa ? su : sa;
    } else {
        double allow = t->atol + t->rtol * fabs(r);
        *ok = e <= allow;
        *share = e == 0 ? 0 : allow > 0 ? e / allow : INFINITY;
    }
    if (!*ok && *share <= 1) *share = INFINITY; /* rounding at the boundary */
    return e;
}

/* ": FAILS" and the like, after the worst element's line. */
static const char *verdict(double g, int ok, int poisoned) {
    return ok ? "" : isnan(g) && poisoned ? ": NaN left in a poisoned output (never written?)" : ": FAILS";
}

int cli_compare(const char *label, const TsTensor *got, const TsTensor *want, int64_t want_off, int poisoned,
                double atol, double rtol) {
    return cli_compare_ulp(label, got, want, want_off, poisoned, atol, rtol, -1);
}

int cli_compare_ulp(const char *label, const TsTensor *got, const TsTensor *want, int64_t want_off, int poisoned,
                    double atol, double rtol, int64_t ulp) {
    Tol t = {atol, rtol, ulp, got->dtype};
    double da, dr;
    cli_default_tol(got->dtype, &da, &dr);
    if (t.ulp < 0 && rtol < 0) t.ulp = cli_default_ulp(got->dtype);
    if (t.ulp >= 0 && got->dtype < TS_FLOAT16) t.ulp = -1; /* integers: allclose (exact by default) */
    int64_t n = ts_tensor_numel(got), bad = 0, first_bad = -1, worst = -1, relpos = -1, max_ulp = 0;
    double rms = 0;
    if (t.ulp >= 0) { /* the floor: ulp ulps at the tensor's scale (float16: at least 1e-3) */
        double ss = 0;
        int64_t nf = 0;
        for (int64_t i = 0; i < n; i++) {
            double r = ts_tensor_get(want, want_off + i);
            if (isfinite(r)) ss += r * r, nf++;
        }
        rms = nf ? sqrt(ss / (double)nf) : 0;
        da = (double)t.ulp * ulp_at(t.dt, rms);
        if (got->dtype == TS_FLOAT16 && da < 1e-3) da = 1e-3;
    }
    if (t.atol < 0) t.atol = da;
    if (t.rtol < 0) t.rtol = dr;
    double max_abs = 0, max_rel = 0, worst_share = -1;
    for (int64_t i = 0; i < n; i++) {
        double g = ts_tensor_get(got, i), r = ts_tensor_get(want, want_off + i), share;
        int ok;
        double e = elem_err(g, r, poisoned, &ok, &t, &share);
        if (share > worst_share) worst_share = share, worst = i;
        if (e > max_abs) max_abs = e;
        if (t.ulp >= 0 && isfinite(e)) {
            int64_t u = ulps(t.dt, g, r);
            if (u > max_ulp) max_ulp = u;
        }
        if (isfinite(e) && fabs(r) > 0 && e / fabs(r) > max_rel) max_rel = e / fabs(r), relpos = i;
        if (!ok) {
            if (first_bad < 0) first_bad = i;
            bad++;
        }
    }
    printf("  %-12s ", label);
    print_shape(got);
    if (t.ulp >= 0)
        printf("  ulp %lld or atol %.3g  max abs err %.3g  max ulp err %lld  max rel err %.3g  %s\n", (long long)t.ulp,
               t.atol, max_abs, (long long)max_ulp, max_rel, bad ? "MISMATCH" : "ok");
    else
        printf("  atol %g rtol %g  max abs err %.3g  max rel err %.3g  %s\n", t.atol, t.rtol, max_abs, max_rel,
               bad ? "MISMATCH" : "ok");
    if (worst >= 0 && worst_share > 0) {
        double g = ts_tensor_get(got, worst), r = ts_tensor_get(want, want_off + worst), share;
        int ok;
        double e = elem_err(g, r, poisoned, &ok, &t, &share);
        printf("    worst element ");
        print_index(got, worst);
        if (t.ulp >= 0 && isfinite(e))
            printf(": got %.9g, expected %.9g, error %.3g = %lld ulp, allowed %lld ulp or atol %.3g (rms |ref| %.3g)%s\n",
                   g, r, e, (long long)ulps(t.dt, g, r), (long long)t.ulp, t.atol, rms, verdict(g, ok, poisoned));
        else
            printf(": got %.9g, expected %.9g, error %.3g, allowed %.3g (atol %g + rtol %g * %.3g)%s\n", g, r, e,
                   t.atol + t.rtol * (isfinite(r) ? fabs(r) : 0), t.atol, t.rtol, isfinite(r) ? fabs(r) : 0,
                   verdict(g, ok, poisoned));
    }
    double rel_limit = t.ulp >= 0 ? ldexp((double)t.ulp, -mantissa_bits(t.dt)) : t.rtol; /* an ulp is at most 2^-m of |ref| */
    if (relpos >= 0 && relpos != worst && max_rel > rel_limit) {
        double g = ts_tensor_get(got, relpos), r = ts_tensor_get(want, want_off + relpos), share;
        int ok;
        double e = elem_err(g, r, poisoned, &ok, &t, &share);
        double allow = t.ulp >= 0 ? t.atol : t.atol + t.rtol * fabs(r);
        if (ok && e <= allow) {
            printf("    largest rel err at ");
            print_index(got, relpos);
            printf(": got %.9g, expected %.9g, error %.3g <= allowed %.3g: passes because |ref| is small (atol)\n", g,
                   r, e, allow);
        }
    }
    if (bad) {
        printf("    %lld of %lld elements fail; the first at ", (long long)bad, (long long)n);
        print_index(got, first_bad);
        printf(": got %.9g, expected %.9g\n", ts_tensor_get(got, first_bad), ts_tensor_get(want, want_off + first_bad));
    }
    return bad == 0;
}
