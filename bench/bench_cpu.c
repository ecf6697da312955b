/*
 * bench_cpu.c — CPU run time of the GEMM example (examples/gemm.py, entry
 * matmul) on the C backend, against a naive triple-loop GEMM compiled into
 * this program.  A benchmark program, not a test, not in ctest.
 *
 * These are CPU figures and nothing more: the machine this is written on
 * has no GPU, and the C backend is a correctness backend (one block per
 * worker thread, T.gemm lowered to scalar loops).  The comparison that
 * matters for the project, against cuBLAS, comes with the CUDA backend.
 * What this program can say is whether the generated C is in the same
 * league as the simplest hand-written C, and how it scales to the machine's
 * cores.
 *
 * Method.  A and B are fp16 (the example's dtype), filled from a fixed LCG
 * with values in [-1, 1) rounded to fp16.  The kernel is compiled once per
 * worker count (1 and all cores; TsCompileOptions.num_threads), launched
 * once to warm up (page faults on C, the cache's dlopen), then timed over
 * --runs launches (default 3) with our own monotonic clock around ts_kernel_launch
 * (argument checks and thread start included: that is what a caller pays).
 * The naive references run on one thread, i-j-k order, fp32 accumulation:
 *   naive fp32  inputs converted to float once, before timing;
 *   naive fp16  inputs read as fp16 and converted at every use, the way the
 *               generated code does it today.
 * This file is compiled at -O2 like the generated kernels (see
 * bench/CMakeLists.txt), so flags are not what is measured.  The kernel's
 * output is checked against naive fp32 (max abs error), so a fast wrong
 * kernel cannot report a figure.  $TILESCALE_CFLAGS reaches the C target's
 * compiler (and its cache key): bench/run.sh uses it to measure flags.
 *
 * Usage: bench_cpu [--root DIR] [--size N] [--runs R] [--naive-runs R]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tilescale.h"

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and min of v[0..n); sorts v. */
static void stats(double *v, int n, double *median, double *min) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *min = v[0];
}

/* IEEE binary16 -> float, exact (normal, subnormal, inf, nan). */
static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    float f;
    if (e == 0x1f) {
        x = sign | 0x7f800000u | (m << 13);
    } else if (e) {
        x = sign | ((e + 112u) << 23) | (m << 13);
    } else {
        f = (float)m * 0x1p-24f;
        memcpy(&x, &f, 4);
        x |= sign;
    }
    memcpy(&f, &x, 4);
    return f;
}

/* C = A @ B, row-major n x n, one thread, i-j-k. */
__attribute__((noinline)) static void naive_f32(int n, const float *A, const float *B, float *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < n; k++) acc += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = acc;
        }
}

/* C = A @ B, the same triple loop in i-k-j order: B and C are walked along
 * rows, so the inner loop is unit-stride (and vectorizable).  Per element of
 * C the sum still runs over k in order, so the result is bit-identical. */
__attribute__((noinline)) static void naive_f32_ikj(int n, const float *A, const float *B, float *C) {
    for (int i = 0; i < n; i++) {
        float *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0f;
        for (int k = 0; k < n; k++) {
            const float a = A[(size_t)i * n + k];
            const float *b = B + (size_t)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
}

/* The same (i-j-k) on fp16 storage, converting every element at every use. */
__attribute__((noinline)) static void naive_f16(int n, const uint16_t *A, const uint16_t *B, float *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < n; k++)
                acc += half_to_float(A[(size_t)i * n + k]) * half_to_float(B[(size_t)k * n + j]);
            C[(size_t)i * n + j] = acc;
        }
}

/* Wall and process-CPU samples of a series of timed runs. */
typedef struct Timer {
    double *wall;   /* wall ms per run */
    double *cpu;    /* process CPU ms (all threads) per run */
    double w0, c0;  /* start of the current run */
} Timer;

static void timer_start(Timer *t) {
    t->c0 = cpu_ms();
    t->w0 = now_ms();
}

static void timer_stop(Timer *t, int r) {
    t->wall[r] = now_ms() - t->w0;
    t->cpu[r] = cpu_ms() - t->c0;
}

/* Prints one table row; returns the wall median.  base: the yardstick's
 * wall median (0: this row is the yardstick). */
static double timer_row(const char *what, int threads, Timer *t, int n, double flop, double base,
                        const char *err) {
    double wm, wmin, cm, cmin;
    stats(t->wall, n, &wm, &wmin);
    stats(t->cpu, n, &cm, &cmin);
    printf("| %s | %d | %.1f | %.1f | %.1f | %.3f | %.2fx | %s |\n", what, threads, wm, wmin, cm, flop / wm * 1e-6,
           base > 0 ? base / wm : 1.0, err);
    return wm;
}

/* max |x[i] - y[i]| (NaN sticks). */
static double max_abs_diff_f(const float *x, const float *y, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - (double)y[i]);
        if (!(e <= m)) m = e;
    }
    return m;
}

static int arg_int(const char *s, const char *what) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 100000) {
        fprintf(stderr, "bench_cpu: bad %s '%s'\n", what, s);
        exit(2);
    }
    return (int)v;
}

static void die_ts(TsContext *ctx, TsStatus st, const char *what) {
    fprintf(stderr, "bench_cpu: %s: %s\n%s", what, ts_status_name(st), ts_last_error(ctx));
    exit(1);
}

int main(int argc, char **argv) {
    const char *root = ".";
    int n = 1024, runs = 3, naive_runs = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) n = arg_int(argv[++i], "--size");
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = arg_int(argv[++i], "--runs");
        else if (!strcmp(argv[i], "--naive-runs") && i + 1 < argc)
            naive_runs = arg_int(argv[++i], "--naive-runs");
        else {
            fprintf(stderr, "usage: bench_cpu [--root DIR] [--size N] [--runs R] [--naive-runs R]\n");
            return 2;
        }
    }
    if (n % 128) {
        fprintf(stderr, "bench_cpu: --size must be a multiple of 128 (the block size)\n");
        return 2;
    }
    const double flop = 2.0 * n * n * n;
    char path[4096], ns[32];
    snprintf(path, sizeof path, "%s/examples/gemm.py", root);
    snprintf(ns, sizeof ns, "%d", n);
    TsDefine defs[] = {{"M", ns}, {"N", ns}, {"K", ns}, {"block_M", "128"}, {"block_N", "128"}, {"block_K", "32"}};

    TsContext *ctx;
    if (ts_context_create(&ctx)) return 2;
    TsStatus st;

    /* Inputs: fp16 from a fixed LCG, and their float copies. */
    int64_t shape[2] = {n, n};
    TsTensor A, B, C;
    if ((st = ts_tensor_alloc(&A, TS_FLOAT16, 2, shape)) || (st = ts_tensor_alloc(&B, TS_FLOAT16, 2, shape)) ||
        (st = ts_tensor_alloc(&C, TS_FLOAT16, 2, shape)))
        die_ts(ctx, st, "ts_tensor_alloc");
    size_t nn = (size_t)n * n;
    float *Af = malloc(nn * sizeof(float)), *Bf = malloc(nn * sizeof(float));
    float *ref = malloc(nn * sizeof(float)), *ref2 = malloc(nn * sizeof(float));
    if (!Af || !Bf || !ref || !ref2) {
        fprintf(stderr, "bench_cpu: out of memory\n");
        return 2;
    }
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (size_t i = 0; i < 2 * nn; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        ts_tensor_set(i < nn ? &A : &B, (int64_t)(i % nn), v);
    }
    for (size_t i = 0; i < nn; i++) {
        Af[i] = (float)ts_tensor_get(&A, (int64_t)i);
        Bf[i] = (float)ts_tensor_get(&B, (int64_t)i);
    }

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *cflags = getenv("TILESCALE_CFLAGS");
    printf("### CPU GEMM, %d x %d x %d, fp16 in / fp32 accumulate (CPU figures only: no GPU here)\n\n", n, n, n);
    printf("Kernel: examples/gemm.py matmul, block 128/128/32, C target, cc flags: -O2 (build_c.c BASE_FLAGS)%s%s; "
           "%ld online CPUs.\n\n",
           cflags && *cflags ? " + $TILESCALE_CFLAGS=" : "", cflags && *cflags ? cflags : "", ncpu);
    printf("| what | threads | wall median ms | wall min ms | CPU ms (median) | GFLOP/s (wall median) "
           "| vs naive fp32 i-j-k | max abs err vs naive fp32 |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");

    Timer tm;
    tm.wall = malloc(sizeof(double) * (size_t)(runs > naive_runs ? runs : naive_runs));
    tm.cpu = malloc(sizeof(double) * (size_t)(runs > naive_runs ? runs : naive_runs));
    if (!tm.wall || !tm.cpu) return 2;

    /* Naive references first: naive fp32 i-j-k is the yardstick. */
    for (int r = 0; r < naive_runs; r++) {
        timer_start(&tm);
        naive_f32(n, Af, Bf, ref);
        timer_stop(&tm, r);
    }
    double base = timer_row("naive C fp32 (i-j-k, -O2)", 1, &tm, naive_runs, flop, 0, "(reference)");
    for (int r = 0; r < naive_runs; r++) {
        timer_start(&tm);
        naive_f32_ikj(n, Af, Bf, ref2);
        timer_stop(&tm, r);
    }
    char err[64];
    snprintf(err, sizeof err, "%.3g", max_abs_diff_f(ref2, ref, nn));
    timer_row("naive C fp32 (i-k-j, -O2)", 1, &tm, naive_runs, flop, base, err);
    for (int r = 0; r < naive_runs; r++) {
        timer_start(&tm);
        naive_f16(n, (const uint16_t *)A.data, (const uint16_t *)B.data, ref2);
        timer_stop(&tm, r);
    }
    snprintf(err, sizeof err, "%.3g", max_abs_diff_f(ref2, ref, nn));
    timer_row("naive C fp16 storage (i-j-k, -O2)", 1, &tm, naive_runs, flop, base, err);

    int thread_counts[2] = {1, 0};
    int bad = 0;
    for (int ti = 0; ti < 2; ti++) {
        if (ti == 1 && ncpu <= 1) break;
        TsCompileOptions opt;
        memset(&opt, 0, sizeof opt);
        opt.num_threads = thread_counts[ti];
        TsKernel *k;
        if ((st = ts_compile_file(ctx, path, "matmul", defs, 6, &opt, &k))) die_ts(ctx, st, "compile");
        TsTensor args[3] = {A, B, C};
        if ((st = ts_kernel_launch(k, args, 3))) die_ts(ctx, st, "launch");
        for (int r = 0; r < runs; r++) {
            timer_start(&tm);
            st = ts_kernel_launch(k, args, 3);
            timer_stop(&tm, r);
            if (st) die_ts(ctx, st, "launch");
        }
        double maxerr = 0, maxref = 0;
        for (size_t i = 0; i < nn; i++) {
            double e = fabs(ts_tensor_get(&C, (int64_t)i) - (double)ref[i]);
            if (!(e <= maxerr)) maxerr = e; /* NaN sticks */
            if (fabs(ref[i]) > maxref) maxref = fabs(ref[i]);
        }
        /* fp16 output: half an ulp at |C| <= maxref, plus summation-order slack. */
        double tol = maxref * 0x1p-10 + 1e-3;
        if (!(maxerr <= tol)) bad = 1;
        snprintf(err, sizeof err, "%.3g%s", maxerr, maxerr <= tol ? "" : " WRONG");
        timer_row("TileScale C backend, matmul", thread_counts[ti] ? thread_counts[ti] : (int)ncpu, &tm, runs,
                  flop, base, err);
        if (!(maxerr <= tol))
            fprintf(stderr, "bench_cpu: threads=%d: max abs error %.3g exceeds %.3g (max |C| %.3g)\n",
                    thread_counts[ti], maxerr, tol, maxref);
        ts_kernel_destroy(k);
    }
    printf("\n%d timed launches per kernel row (after one warm-up launch), %d runs of each naive reference. "
           "CPU ms is process CPU time (all threads) over the same interval: well below wall x threads means "
           "the machine was busy with something else. Kernel error tolerance: max|C| * 2^-10 + 1e-3 "
           "(fp16 output rounding).\n",
           runs, naive_runs);

    free(tm.wall);
    free(tm.cpu);
    free(Af);
    free(Bf);
    free(ref);
    free(ref2);
    ts_tensor_free(&A);
    ts_tensor_free(&B);
    ts_tensor_free(&C);
    ts_context_destroy(ctx);
    if (bad) {
        printf("\nWRONG RESULT: the kernel's output does not match the naive reference; figures are void.\n");
        return 1;
    }
    return 0;
}
