/*
 * kernel_test.h — shared helpers of the primitive tests (test_prim_*.c,
 * test_api.c): they compile TileLang source strings through the public API
 * only (include/tilescale.h), launch them on host tensors on the C target
 * and compare the outputs against a naive C loop written in the test.
 *
 * Why these helpers and not more: every primitive test has the same five
 * steps, and each step has a way to fool itself that this header closes.
 *   - compile:  kt_compile() prints ts_last_error() and counts a failed
 *               check, so a kernel the compiler rejects is a visible
 *               failure and not a silent skip.
 *   - inputs:   kt_fill() draws from a seeded generator (splitmix64).  The
 *               seed comes from the clock, is printed, and TS_TEST_SEED
 *               overrides it, so a failing draw can be replayed.  Values
 *               are never all zero.
 *   - outputs:  kt_poison() fills them with NaN (floats) or a sentinel
 *               (integers) before the launch, so an element the kernel
 *               forgot to write cannot pass by accident.
 *   - launch:   kt_launch() checks the status and prints the error.
 *               kt_fenced() tensors sit between inaccessible pages, so an
 *               unguarded access past either end crashes the test.
 *   - compare:  KT_COMPARE() checks |got - want| <= atol + rtol * |want|
 *               element by element and prints the max abs/rel error.  A
 *               NaN in `got` fails, even where `want` is NaN too (the
 *               poison left in an element nobody wrote, next to a
 *               reference that computed NaN, passed before issue 9 H);
 *               "this element must still be the poison" is written as
 *               KT_UNTOUCHED in `want`, a NaN with a payload of its own.
 *               KT_COMPARE_ULP() counts representable values between
 *               got and want rounded to got's dtype (fp16: a tolerance in
 *               units in the last place, not a relative guess).
 *
 * The state (context, options, generator) is file-static: each test
 * program is one executable with one context.  All functions are
 * `static inline` so a test that uses only some of them gets no
 * unused-function warning.
 */
#ifndef TS_KERNEL_TEST_H
#define TS_KERNEL_TEST_H

#include "test.h"
#include "tilescale.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Source lines every kernel string gets in front of it (2 lines). */
#define KT_PRELUDE "import tilelang\nimport tilelang.language as T\n"

static TsContext *kt_ctx;        /* the test program's context */
static TsCompileOptions kt_opt;  /* options of every kt_compile() */
static uint64_t kt_rng;          /* splitmix64 state */
static unsigned long kt_seed;    /* the seed, as printed */
static char kt_cache[512];       /* kernel cache directory */

/* Context, options and seed.  `name` is the test's name, for the seed line. */
static inline void kt_init(const char *name) {
    if (ts_context_create(&kt_ctx) != TS_OK) {
        fprintf(stderr, "%s: cannot create a context\n", name);
        exit(1);
    }
    const char *s = getenv("TS_TEST_SEED");
    kt_seed = s && *s ? strtoul(s, NULL, 0) : (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16);
    kt_rng = (uint64_t)kt_seed * 0x9E3779B97F4A7C15ull + 1;
    printf("%s: seed %lu (TS_TEST_SEED=%lu repeats this run)\n", name, kt_seed, kt_seed);
    memset(&kt_opt, 0, sizeof kt_opt);
    kt_opt.target = TS_TARGET_C;
    const char *c = getenv("TILESCALE_CACHE_DIR");
    if (c && *c) snprintf(kt_cache, sizeof kt_cache, "%s", c);
    else
        snprintf(kt_cache, sizeof kt_cache, "%s/ts-test-kcache-%ld",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getuid());
    kt_opt.cache_dir = kt_cache;
}

static inline void kt_finish(void) {
    ts_context_destroy(kt_ctx);
    kt_ctx = NULL;
}

/* ---- random numbers ------------------------------------------------------------------ */

static inline uint64_t kt_next(void) {
    uint64_t z = (kt_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double kt_uniform(double lo, double hi) {
    return lo + (hi - lo) * ((double)(kt_next() >> 11) * (1.0 / 9007199254740992.0));
}

/* Uniform integer in [lo, hi]. */
static inline int64_t kt_randint(int64_t lo, int64_t hi) {
    return lo + (int64_t)(kt_next() % (uint64_t)(hi - lo + 1));
}

/* ---- tensors --------------------------------------------------------------------------- */

/* A contiguous host tensor: kt_tensor(TS_FLOAT32, 2, M, N). */
static inline TsTensor kt_tensor(TsDType dt, int ndim, ...) {
    int64_t shape[8] = {0};
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim && i < 8; i++) shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    TsTensor t;
    if (ts_tensor_alloc(&t, dt, ndim, shape) != TS_OK) {
        fprintf(stderr, "kt_tensor: cannot allocate\n");
        exit(1);
    }
    return t;
}

static inline int kt_is_float(TsDType dt) {
    return dt == TS_FLOAT16 || dt == TS_BFLOAT16 || dt == TS_FLOAT32 || dt == TS_FLOAT64 ||
           dt == TS_FLOAT8_E4M3 || dt == TS_FLOAT8_E5M2;
}

/* Random values: floats uniform in [lo, hi), integers uniform in [lo, hi].
 * A draw that came out all zero (impossible in practice) is redone. */
static inline void kt_fill(TsTensor *t, double lo, double hi) {
    int64_t n = ts_tensor_numel(t);
    int nonzero = 0;
    do {
        for (int64_t i = 0; i < n; i++) {
            double v = kt_is_float(t->dtype) ? kt_uniform(lo, hi) : (double)kt_randint((int64_t)lo, (int64_t)hi);
            ts_tensor_set(t, i, v);
            nonzero |= ts_tensor_get(t, i) != 0;
        }
    } while (!nonzero && n > 0);
}

/* The poison of a dtype: NaN for floats, an unlikely value for integers. */
static inline double kt_poison_value(TsDType dt) {
    switch (dt) {
    case TS_INT8: return -107;
    case TS_UINT8: return 201;
    case TS_INT16: return -30111;
    case TS_INT32: return -1234567891;
    case TS_INT64: return -987654321012345.0;
    case TS_BOOL: return 1;
    default: return kt_is_float(dt) ? NAN : 77;
    }
}

static inline void kt_poison(TsTensor *t) {
    int64_t n = ts_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) ts_tensor_set(t, i, kt_poison_value(t->dtype));
}

/* v rounded to dtype dt (through a one-element tensor: round to nearest even). */
static inline double kt_round(TsDType dt, double v) {
    unsigned char buf[16] = {0};
    int64_t one = 1;
    TsTensor t = {buf, dt, 1, &one, NULL};
    ts_tensor_set(&t, 0, v);
    return ts_tensor_get(&t, 0);
}

static inline double kt_untouched(void);

/* All elements as doubles (row-major), malloc'ed: the `want` of a tensor
 * that must keep its values, so a NaN (the poison) becomes KT_UNTOUCHED. */
static inline double *kt_values(const TsTensor *t) {
    int64_t n = ts_tensor_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!v) exit(1);
    for (int64_t i = 0; i < n; i++) {
        v[i] = ts_tensor_get(t, i);
        if (isnan(v[i])) v[i] = kt_untouched();
    }
    return v;
}

/* A zeroed double array of n elements. */
static inline double *kt_zeros(int64_t n) {
    double *v = calloc((size_t)(n ? n : 1), sizeof(double));
    if (!v) exit(1);
    return v;
}

/* Relative tolerance suited to a dtype whose values were computed in
 * (at least) that precision and rounded once or a few times. */
static inline double kt_rtol(TsDType dt) {
    switch (dt) {
    case TS_FLOAT16: return 2e-3;
    case TS_BFLOAT16: return 1.6e-2;
    case TS_FLOAT32: return 1e-5;
    case TS_FLOAT64: return 1e-12;
    case TS_FLOAT8_E4M3: return 1.3e-1;
    case TS_FLOAT8_E5M2: return 2.6e-1;
    default: return 0;
    }
}

/* A tensor whose data ends exactly at a page boundary followed by an
 * inaccessible page (and starts right after one), so a kernel that reads
 * or writes past either end faults instead of passing by luck.  Free with
 * kt_fenced_free. */
typedef struct KtFenced {
    TsTensor t;   /* the tensor (shape malloc'ed, no strides) */
    void *map;    /* the whole mapping */
    size_t len;   /* its length */
} KtFenced;

static inline KtFenced kt_fenced(TsDType dt, int ndim, ...) {
    KtFenced f;
    memset(&f, 0, sizeof f);
    int64_t *shape = calloc(8, sizeof(int64_t)), n = 1;
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim && i < 8; i++) n *= (shape[i] = va_arg(ap, int64_t));
    va_end(ap);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)n * (size_t)(ts_dtype_bits(dt) / 8);
    size_t body = (bytes + page - 1) / page * page;
    f.len = body + 2 * page;
    f.map = mmap(NULL, f.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (f.map == MAP_FAILED || mprotect((char *)f.map + page, body, PROT_READ | PROT_WRITE)) {
        fprintf(stderr, "kt_fenced: mmap failed\n");
        exit(1);
    }
    f.t.data = (char *)f.map + page + (body - bytes);
    f.t.dtype = dt;
    f.t.ndim = ndim;
    f.t.shape = shape;
    f.t.strides = NULL;
    return f;
}

static inline void kt_fenced_free(KtFenced *f) {
    munmap(f->map, f->len);
    free((void *)f->t.shape);
    memset(f, 0, sizeof *f);
}

/* ---- compile and launch ------------------------------------------------------------------ */

/* Compiles KT_PRELUDE + src, entry `entry`, with defines given as one
 * string "M=64 N=32 dtype=float16".  Prints the error and counts a failed
 * check on failure (returns NULL); counts a passed check on success. */
static inline TsKernel *kt_compile_at(const char *file, int line, const char *src, const char *entry,
                                      const char *defs) {
    char names[32][64], values[32][64];
    TsDefine d[32];
    int nd = 0;
    const char *p = defs ? defs : "";
    while (*p && nd < 32) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *e = strchr(p, '='), *end = p + strcspn(p, " ");
        if (!e || e > end) {
            fprintf(stderr, "%s:%d: bad define list \"%s\"\n", file, line, defs);
            test_failed++;
            return NULL;
        }
        snprintf(names[nd], 64, "%.*s", (int)(e - p), p);
        snprintf(values[nd], 64, "%.*s", (int)(end - e - 1), e + 1);
        d[nd].name = names[nd];
        d[nd].value = values[nd];
        nd++;
        p = end;
    }
    size_t n = strlen(KT_PRELUDE) + strlen(src) + 1;
    char *text = malloc(n);
    if (!text) exit(1);
    snprintf(text, n, "%s%s", KT_PRELUDE, src);
    char fname[300];
    snprintf(fname, sizeof fname, "%s:%d", file, line);
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(kt_ctx, fname, text, entry, d, nd, &kt_opt, &k);
    free(text);
    if (st != TS_OK || !k) {
        fprintf(stderr, "%s:%d: compiling %s (%s) failed: %s\n%s", file, line, entry, defs ? defs : "",
                ts_status_name(st), ts_last_error(kt_ctx));
        test_failed++;
        return NULL;
    }
    test_passed++;
    return k;
}
#define kt_compile(src, entry, defs) kt_compile_at(__FILE__, __LINE__, (src), (entry), (defs))

/* Launches and checks the status; 1 on success. */
static inline int kt_launch_at(const char *file, int line, TsKernel *k, const TsTensor *args, int n) {
    if (!k) return 0;
    TsStatus st = ts_kernel_launch(k, args, n);
    if (st != TS_OK) {
        fprintf(stderr, "%s:%d: launching %s failed: %s\n%s", file, line, ts_kernel_name(k),
                ts_status_name(st), ts_last_error(kt_ctx));
        test_failed++;
        return 0;
    }
    test_passed++;
    return 1;
}
#define kt_launch(k, args, n) kt_launch_at(__FILE__, __LINE__, (k), (args), (n))

/* ---- comparison ------------------------------------------------------------------------------ */

/* The `want` of an element that must still hold the poison (the kernel
 * must not write it): a NaN whose payload no arithmetic produces. */
#define KT_UNTOUCHED_BITS 0x7FF80000DEADBEEFull
static inline double kt_untouched(void) {
    union { uint64_t u; double d; } v = {KT_UNTOUCHED_BITS};
    return v.d;
}
#define KT_UNTOUCHED kt_untouched()
static inline int kt_is_untouched(double w) {
    union { double d; uint64_t u; } v = {w};
    return v.u == KT_UNTOUCHED_BITS;
}

/* One element: got within atol + rtol*|want| of want.  A NaN in got
 * passes only where want is KT_UNTOUCHED; a NaN in want otherwise fails
 * (a reference that computes NaN checks nothing); inf matches the same
 * inf only. */
static inline int kt_close(double g, double w, double atol, double rtol) {
    if (kt_is_untouched(w)) return isnan(g);
    if (isnan(g) || isnan(w)) return 0;
    if (isinf(w) || isinf(g)) return g == w;
    return fabs(g - w) <= atol + rtol * fabs(w);
}

/* The bits of v rounded to dtype dt, as an integer that orders like the
 * values (sign-magnitude folded): the distance between two of them is
 * the number of representable values between, in units in the last
 * place.  Floating dtypes of 16 or 32 bits; NaN: INT64_MAX. */
static inline int64_t kt_ordered(TsDType dt, double v) {
    if (isnan(v)) return INT64_MAX;
    unsigned char buf[8] = {0};
    int64_t one = 1;
    TsTensor t = {buf, dt, 1, &one, NULL};
    ts_tensor_set(&t, 0, v);
    int bits = ts_dtype_bits(dt);
    uint64_t u = 0;
    memcpy(&u, buf, (size_t)bits / 8); /* little-endian host */
    uint64_t sign = 1ull << (bits - 1);
    return (u & sign) ? -(int64_t)(u & (sign - 1)) : (int64_t)u;
}

/* Units in the last place of dt between got and want (want rounded to dt
 * first: the reference is exact, the kernel's result is in dt). */
static inline int64_t kt_ulps(TsDType dt, double got, double want) {
    int64_t a = kt_ordered(dt, got), b = kt_ordered(dt, want);
    if (a == INT64_MAX || b == INT64_MAX) return INT64_MAX;
    return a > b ? a - b : b - a;
}

/* One check: every element of `got` within atol + rtol*|want| of want[i]
 * (kt_close: NaN in got fails unless want is KT_UNTOUCHED).  Prints the
 * max abs/rel error, and the first mismatches with their row-major index. */
static inline int kt_compare_at(const char *file, int line, const char *what, const TsTensor *got,
                                const double *want, double atol, double rtol) {
    int64_t n = ts_tensor_numel(got), bad = 0;
    double max_abs = 0, max_rel = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = ts_tensor_get(got, i), w = want[i];
        int ok = kt_close(g, w, atol, rtol);
        if (!isnan(w) && !isnan(g) && !isinf(w) && !isinf(g)) {
            double e = fabs(g - w);
            if (e > max_abs) max_abs = e;
            if (w != 0 && e / fabs(w) > max_rel) max_rel = e / fabs(w);
        }
        if (!ok) {
            if (bad < 5) {
                fprintf(stderr, "%s:%d: %s: element %lld (", file, line, what, (long long)i);
                int64_t r = i, idx[8];
                for (int d = got->ndim - 1; d >= 0; d--) {
                    idx[d] = r % got->shape[d];
                    r /= got->shape[d];
                }
                for (int d = 0; d < got->ndim; d++) fprintf(stderr, "%s%lld", d ? ", " : "", (long long)idx[d]);
                fprintf(stderr, "): got %.9g, want %.9g\n", g, w);
            }
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "%s:%d: %s: %lld of %lld elements wrong (seed %lu); max abs err %.3g, max rel err %.3g\n",
                file, line, what, (long long)bad, (long long)n, kt_seed, max_abs, max_rel);
        test_failed++;
        return 0;
    }
    if (getenv("TS_TEST_VERBOSE"))
        printf("  %-40s %8lld elements  max abs err %.3g  max rel err %.3g\n", what, (long long)n, max_abs, max_rel);
    test_passed++;
    return 1;
}
#define KT_COMPARE(what, got, want, atol, rtol) kt_compare_at(__FILE__, __LINE__, (what), (got), (want), (atol), (rtol))

/* One check in units in the last place of got's dtype (16- or 32-bit
 * floats): every element at most max_ulp representable values from
 * want[i] rounded to that dtype, or within abs_floor of it (for results
 * near zero after cancellation, where ulps say nothing; 0: none).  NaN
 * in got fails, except against KT_UNTOUCHED.  Prints the worst element. */
static inline int kt_compare_ulp_at(const char *file, int line, const char *what, const TsTensor *got,
                                    const double *want, int64_t max_ulp, double abs_floor) {
    int64_t n = ts_tensor_numel(got), bad = 0, worst = 0, worst_i = -1;
    for (int64_t i = 0; i < n; i++) {
        double g = ts_tensor_get(got, i), w = want[i];
        int64_t u = kt_is_untouched(w) ? (isnan(g) ? 0 : INT64_MAX) : kt_ulps(got->dtype, g, w);
        int ok = kt_is_untouched(w) ? isnan(g) : !isnan(g) && !isnan(w) && (u <= max_ulp || fabs(g - w) <= abs_floor);
        if (!ok) {
            if (bad < 5)
                fprintf(stderr, "%s:%d: %s: element %lld: got %.9g, want %.9g (%.9g in %s): %lld ulp\n", file, line,
                        what, (long long)i, g, w, kt_round(got->dtype, w), ts_dtype_name(got->dtype), (long long)u);
            bad++;
        }
        if (u > worst && u != INT64_MAX) worst = u, worst_i = i;
    }
    if (bad) {
        fprintf(stderr, "%s:%d: %s: %lld of %lld elements over %lld ulp (seed %lu); worst %lld ulp at %lld\n", file,
                line, what, (long long)bad, (long long)n, (long long)max_ulp, kt_seed, (long long)worst,
                (long long)worst_i);
        test_failed++;
        return 0;
    }
    if (getenv("TS_TEST_VERBOSE"))
        printf("  %-40s %8lld elements  worst %lld ulp\n", what, (long long)n, (long long)worst);
    test_passed++;
    return 1;
}
#define KT_COMPARE_ULP(what, got, want, max_ulp, abs_floor) \
    kt_compare_ulp_at(__FILE__, __LINE__, (what), (got), (want), (max_ulp), (abs_floor))

#endif
