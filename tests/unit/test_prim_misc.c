/*
 * test_prim_misc.c — loops, allocations, scalar math, control flow, hints,
 * T.print, T.macro and run-time shapes on the C target, each against a
 * naive C loop on fresh random data (kernel_test.h).
 *
 *   - Loops.  T.serial(start, stop, step) forwards and backwards, Python
 *     range(a, b, c), T.unroll, T.Pipelined(start, stop, num_stages=)
 *     are all serial loops: each one folds a recurrence acc = acc/2 + x
 *     whose result depends on the visiting order, so a loop that skips,
 *     repeats or reorders iterations is caught.  T.vectorized, nested
 *     T.Parallel, and T.Parallel over 3 and 4 dims write every element.
 *   - Allocations.  alloc_shared/fragment/local of several shapes, and
 *     alloc_var: assigned, read, `+=` inside loops, `init=`, used as an
 *     index and in a run-time `if`.
 *   - Math.  T.exp/exp2/log/log2/sqrt/rsqrt/abs, T.max/T.min,
 *     T.if_then_else, `x if c else y` on a run-time condition, T.cast to
 *     int (truncation), T.ceildiv on run-time (negative too) integers,
 *     T.infinity compared in expressions; float16 math rounds once.
 *   - Control.  Python `if` on a compile-time constant (the other branch
 *     is not even elaborated: it references a name that does not exist),
 *     `x if c else y` on a constant, run-time if/elif/else.
 *   - T.use_swizzle and T.annotate_layout (make_mma_swizzle_layout from
 *     tilelang.layout) in a GEMM: accepted, results unchanged.
 *   - T.print of a value and of a buffer: compiles, runs, and (stdout
 *     captured) prints the message, the block and the values.
 *   - T.macro: module-level and closure macros called from a kernel.
 *   - T.dynamic / T.symbolic: one compiled kernel launched on two sizes;
 *     two tensors disagreeing on the shared variable give TS_ERR_SHAPE.
 */
#include "kernel_test.h"

#include <fcntl.h>

/* ---- loops ------------------------------------------------------------------------------ */

static const char *SRC_LOOPS =
    "@tilelang.jit(out_idx=[1, 2])\n"
    "def loops(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), S: T.Tensor((M, 6), \"float32\"),\n"
    "             V: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(M, threads=1) as r:\n"
    "            acc = T.alloc_var(\"float32\")\n"
    "            acc = 0.0\n"
    "            for j in T.serial(1, N, 3):\n"
    "                acc = acc * 0.5 + A[r, j]\n"
    "            S[r, 0] = acc\n"
    "            acc = 0.0\n"
    "            for j in T.serial(N - 1, -1, -2):\n"
    "                acc = acc * 0.5 + A[r, j]\n"
    "            S[r, 1] = acc\n"
    "            acc = 0.0\n"
    "            for j in range(2, N, 5):\n"
    "                acc = acc * 0.5 + A[r, j]\n"
    "            S[r, 2] = acc\n"
    "            acc = 0.0\n"
    "            for j in T.unroll(N):\n"
    "                acc = acc * 0.5 + A[r, j]\n"
    "            S[r, 3] = acc\n"
    "            acc = 0.0\n"
    "            for k in T.Pipelined(3, N, num_stages=3):\n"
    "                acc = acc * 0.5 + A[r, k]\n"
    "            S[r, 4] = acc\n"
    "            acc = 0.0\n"
    "            for j in range(N):\n"
    "                acc = acc * 0.5 + A[r, j]\n"
    "            S[r, 5] = acc\n"
    "            for j in T.vectorized(N):\n"
    "                V[r, j] = A[r, j] * 2.0 + 1.0\n"
    "    return main\n"
    "\n"
    /* nested and multi-dimensional T.Parallel */
    "@tilelang.jit(out_idx=[2, 3])\n"
    "def par(P, Q, R, W, bp):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((P, Q, R), \"float32\"), X4: T.Tensor((2, P, Q, W), \"float32\"),\n"
    "             Y: T.Tensor((P, Q, R), \"float32\"), Y4: T.Tensor((2, P, Q, W), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(P, bp), threads=128) as bx:\n"
    "            F = T.alloc_fragment((bp, Q, R), \"float32\")\n"
    "            for p, q, r in T.Parallel(bp, Q, R):\n"
    "                F[p, q, r] = 0.0\n"
    "            for p in T.Parallel(bp):\n"
    "                for q in T.Parallel(Q):\n"
    "                    for r in T.Parallel(R):\n"
    "                        if bx * bp + p < P:\n"
    "                            F[p, q, r] = X[bx * bp + p, q, r] + p * 100 + q * 10 + r\n"
    "            T.copy(F, Y[bx * bp, 0, 0])\n"
    "            for a, p, q, w in T.Parallel(2, bp, Q, W):\n"
    "                if bx * bp + p < P:\n"
    "                    Y4[a, bx * bp + p, q, w] = X4[a, bx * bp + p, q, w] * (a + 1) - w\n"
    "    return main\n";

static double fold(double acc, double x) { return (double)(float)((double)(float)(acc * 0.5) + x); }

static void test_loops(void) {
    {
        int64_t M = 5, N = 13;
        TsKernel *k = kt_compile(SRC_LOOPS, "loops", "M=5 N=13");
        TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), s = kt_tensor(TS_FLOAT32, 2, M, 6), v = kt_tensor(TS_FLOAT32, 2, M, N);
        kt_fill(&a, -1, 1);
        kt_poison(&s);
        kt_poison(&v);
        TsTensor args[3] = {a, s, v};
        if (kt_launch(k, args, 3)) {
            double *w = kt_zeros(M * 6), *wv = kt_zeros(M * N);
            for (int64_t r = 0; r < M; r++) {
                const int64_t base = r * N;
                double acc = 0;
                for (int64_t j = 1; j < N; j += 3) acc = fold(acc, ts_tensor_get(&a, base + j));
                w[r * 6 + 0] = acc;
                acc = 0;
                for (int64_t j = N - 1; j > -1; j -= 2) acc = fold(acc, ts_tensor_get(&a, base + j));
                w[r * 6 + 1] = acc;
                acc = 0;
                for (int64_t j = 2; j < N; j += 5) acc = fold(acc, ts_tensor_get(&a, base + j));
                w[r * 6 + 2] = acc;
                acc = 0;
                for (int64_t j = 0; j < N; j++) acc = fold(acc, ts_tensor_get(&a, base + j));
                w[r * 6 + 3] = acc;
                w[r * 6 + 5] = acc;
                acc = 0;
                for (int64_t j = 3; j < N; j++) acc = fold(acc, ts_tensor_get(&a, base + j));
                w[r * 6 + 4] = acc;
                for (int64_t j = 0; j < N; j++) wv[base + j] = kt_round(TS_FLOAT32, ts_tensor_get(&a, base + j) * 2 + 1);
            }
            KT_COMPARE("serial(1,N,3) / serial(N-1,-1,-2) / range(2,N,5) / unroll / Pipelined(3,N) / range(N)", &s, w,
                       1e-6, 1e-5);
            KT_COMPARE("T.vectorized", &v, wv, 0, 1e-7);
            free(w);
            free(wv);
        }
        ts_tensor_free(&a);
        ts_tensor_free(&s);
        ts_tensor_free(&v);
        ts_kernel_destroy(k);
    }
    {
        int64_t P = 11, Q = 3, R = 5, W = 6, bp = 4;
        TsKernel *k = kt_compile(SRC_LOOPS, "par", "P=11 Q=3 R=5 W=6 bp=4");
        TsTensor x = kt_tensor(TS_FLOAT32, 3, P, Q, R), x4 = kt_tensor(TS_FLOAT32, 4, 2, P, Q, W);
        TsTensor y = kt_tensor(TS_FLOAT32, 3, P, Q, R), y4 = kt_tensor(TS_FLOAT32, 4, 2, P, Q, W);
        kt_fill(&x, -1, 1);
        kt_fill(&x4, -1, 1);
        kt_poison(&y);
        kt_poison(&y4);
        TsTensor args[4] = {x, x4, y, y4};
        if (kt_launch(k, args, 4)) {
            double *w = kt_zeros(P * Q * R), *w4 = kt_zeros(2 * P * Q * W);
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++)
                    for (int64_t r = 0; r < R; r++) {
                        int64_t i = (p * Q + q) * R + r;
                        w[i] = kt_round(TS_FLOAT32, ts_tensor_get(&x, i) + (double)((p % bp) * 100 + q * 10 + r));
                    }
            for (int64_t i = 0; i < 2 * P * Q * W; i++) {
                int64_t a = i / (P * Q * W), wi = i % W;
                w4[i] = kt_round(TS_FLOAT32, ts_tensor_get(&x4, i) * (double)(a + 1) - (double)wi);
            }
            KT_COMPARE("nested T.Parallel + T.Parallel(a, b, c)", &y, w, 1e-6, 1e-6);
            KT_COMPARE("T.Parallel over 4 dims", &y4, w4, 1e-6, 1e-6);
            free(w);
            free(w4);
        }
        ts_tensor_free(&x);
        ts_tensor_free(&x4);
        ts_tensor_free(&y);
        ts_tensor_free(&y4);
        ts_kernel_destroy(k);
    }
}

/* ---- allocations and alloc_var -------------------------------------------------------- */

/* Per row r: cnt = number of positive A[r, j] (var += in a loop under a
 * run-time if), tot = init 1.5 + sum of A[r, j] * loc[j % 4] with loc an
 * alloc_local, O[r, cnt] = tot (a var as an index), Cnt[r] = cnt. */
static const char *SRC_ALLOC =
    "@tilelang.jit(out_idx=[])\n"
    "def allocs(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), O: T.Tensor((M, N + 1), \"float32\"),\n"
    "             Cnt: T.Tensor((M,), \"int32\")):\n"
    "        with T.Kernel(M, threads=32) as r:\n"
    "            sh = T.alloc_shared((N,), \"float32\")\n"
    "            fr = T.alloc_fragment((2, N), \"float32\")\n"
    "            loc = T.alloc_local((4,), \"float32\")\n"
    "            cnt = T.alloc_var(\"int32\")\n"
    "            tot = T.alloc_var(\"float32\", init=1.5)\n"
    "            T.copy(A[r, :], sh)\n"
    "            for j in T.Parallel(N):\n"
    "                fr[0, j] = sh[j]\n"
    "                fr[1, j] = -sh[j]\n"
    "            for t in T.serial(4):\n"
    "                loc[t] = t + 1.0\n"
    "            cnt = 0\n"
    "            for j in T.serial(N):\n"
    "                if fr[0, j] > 0:\n"
    "                    cnt += 1\n"
    "                for t in T.serial(1):\n"
    "                    tot += fr[0, j] * loc[j % 4] + fr[1, j] * 0.0\n"
    "            O[r, cnt] = tot\n"
    "            Cnt[r] = cnt\n"
    "    return main\n";

static void test_allocs(void) {
    int64_t M = 9, N = 21;
    TsKernel *k = kt_compile(SRC_ALLOC, "allocs", "M=9 N=21");
    TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), o = kt_tensor(TS_FLOAT32, 2, M, N + 1), c = kt_tensor(TS_INT32, 1, M);
    kt_fill(&a, -1, 1);
    kt_poison(&o);
    kt_poison(&c);
    double *w = kt_values(&o), *wc = kt_zeros(M);
    TsTensor args[3] = {a, o, c};
    if (kt_launch(k, args, 3)) {
        for (int64_t r = 0; r < M; r++) {
            int cnt = 0;
            double tot = 1.5;
            for (int64_t j = 0; j < N; j++) {
                double x = ts_tensor_get(&a, r * N + j);
                cnt += x > 0;
                tot += x * (double)(j % 4 + 1);
            }
            w[r * (N + 1) + cnt] = tot;
            wc[r] = cnt;
        }
        KT_COMPARE("alloc_var count as an index (other elements untouched)", &o, w, 1e-5, 1e-5);
        KT_COMPARE("alloc_var += under a run-time if", &c, wc, 0, 0);
    }
    free(w);
    free(wc);
    ts_tensor_free(&a);
    ts_tensor_free(&o);
    ts_tensor_free(&c);
    ts_kernel_destroy(k);
}

/* ---- math ------------------------------------------------------------------------------- */

#define NMATH 16
static const char *SRC_MATH =
    "@tilelang.jit(out_idx=[3, 4, 5])\n"
    "def math(N, blk):\n"
    "    @T.prim_func\n"
    "    def main(P: T.Tensor((N,), \"float32\"), X: T.Tensor((N,), \"float32\"), I: T.Tensor((N,), \"int32\"),\n"
    "             O: T.Tensor((16, N), \"float32\"), OI: T.Tensor((3, N), \"int32\"), H: T.Tensor((N,), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, blk), threads=64) as bx:\n"
    "            for t in T.Parallel(blk):\n"
    "                i = bx * blk + t\n"
    "                if i < N:\n"
    "                    p = P[i]\n"
    "                    x = X[i]\n"
    "                    O[0, i] = T.exp(x)\n"
    "                    O[1, i] = T.exp2(x)\n"
    "                    O[2, i] = T.log(p)\n"
    "                    O[3, i] = T.log2(p)\n"
    "                    O[4, i] = T.sqrt(p)\n"
    "                    O[5, i] = T.rsqrt(p)\n"
    "                    O[6, i] = T.abs(x)\n"
    "                    O[7, i] = T.max(p, x)\n"
    "                    O[8, i] = T.min(p, x * 3.0)\n"
    "                    O[9, i] = T.if_then_else(x > 0, p, x * 2.0)\n"
    "                    O[10, i] = p if x < 0.25 else -p\n"
    "                    O[11, i] = T.cast(T.cast(x * 100.0, \"int32\"), \"float32\")\n"
    "                    O[12, i] = T.max(x, -T.infinity(\"float32\")) + T.min(x, T.infinity(\"float32\"))\n"
    "                    O[13, i] = T.if_then_else(x * 0.0 - T.infinity(\"float32\") < x, 1.0, 0.0)\n"
    "                    O[14, i] = T.max(T.min(x, 0.5), -0.5)\n"
    "                    O[15, i] = T.exp(x) * T.log(p + 1.0) / T.sqrt(p + 2.0)\n"
    "                    OI[0, i] = T.ceildiv(I[i], 7)\n"
    "                    OI[1, i] = T.max(I[i], 3) + T.min(I[i], -3)\n"
    "                    OI[2, i] = T.abs(I[i]) % 5\n"
    "                    H[i] = T.exp(T.cast(x, \"float16\"))\n"
    "    return main\n";

static void test_math(void) {
    int64_t N = 300;
    TsKernel *k = kt_compile(SRC_MATH, "math", "N=300 blk=64");
    TsTensor p = kt_tensor(TS_FLOAT32, 1, N), x = kt_tensor(TS_FLOAT32, 1, N), in = kt_tensor(TS_INT32, 1, N);
    TsTensor o = kt_tensor(TS_FLOAT32, 2, NMATH, N), oi = kt_tensor(TS_INT32, 2, 3, N), h = kt_tensor(TS_FLOAT16, 1, N);
    kt_fill(&p, 0.01, 10);
    kt_fill(&x, -3, 3);
    kt_fill(&in, -100, 100);
    kt_poison(&o);
    kt_poison(&oi);
    kt_poison(&h);
    TsTensor args[6] = {p, x, in, o, oi, h};
    if (kt_launch(k, args, 6)) {
        double *w = kt_zeros(NMATH * N), *wi = kt_zeros(3 * N), *wh = kt_zeros(N);
        for (int64_t i = 0; i < N; i++) {
            double pv = ts_tensor_get(&p, i), xv = ts_tensor_get(&x, i);
            int64_t iv = (int64_t)ts_tensor_get(&in, i);
            double *c = w + i;
            c[0 * N] = exp(xv);
            c[1 * N] = exp2(xv);
            c[2 * N] = log(pv);
            c[3 * N] = log2(pv);
            c[4 * N] = sqrt(pv);
            c[5 * N] = 1 / sqrt(pv);
            c[6 * N] = fabs(xv);
            c[7 * N] = fmax(pv, xv);
            c[8 * N] = fmin(pv, (double)(float)(xv * 3));
            c[9 * N] = xv > 0 ? pv : xv * 2;
            c[10 * N] = xv < 0.25 ? pv : -pv;
            c[11 * N] = trunc((double)(float)(xv * 100));
            c[12 * N] = 2 * xv;
            c[13 * N] = 1;
            c[14 * N] = fmax(fmin(xv, 0.5), -0.5);
            c[15 * N] = exp(xv) * log(pv + 1) / sqrt(pv + 2);
            /* ceil division: the integer ceiling of iv / 7 */
            wi[i] = (double)(iv >= 0 ? (iv + 6) / 7 : -((-iv) / 7));
            wi[N + i] = (double)((iv > 3 ? iv : 3) + (iv < -3 ? iv : -3));
            wi[2 * N + i] = (double)((iv < 0 ? -iv : iv) % 5);
            wh[i] = kt_round(TS_FLOAT16, exp(kt_round(TS_FLOAT16, xv)));
        }
        KT_COMPARE("exp exp2 log log2 sqrt rsqrt abs max min if_then_else ifexp cast infinity", &o, w, 1e-6, 4e-6);
        KT_COMPARE("T.ceildiv / T.max / T.min / abs / % on int32 (negatives too)", &oi, wi, 0, 0);
        KT_COMPARE("T.exp in float16 (rounded once)", &h, wh, 0, 1e-3);
        free(w);
        free(wi);
        free(wh);
    }
    ts_tensor_free(&p);
    ts_tensor_free(&x);
    ts_tensor_free(&in);
    ts_tensor_free(&o);
    ts_tensor_free(&oi);
    ts_tensor_free(&h);
    ts_kernel_destroy(k);
}

/* ---- compile-time vs run-time conditions ----------------------------------------------------- */

static const char *SRC_IFS =
    "@tilelang.jit(out_idx=[1])\n"
    "def ifs(N, flag, mode):\n"
    "    scale = 2.0 if flag else 3.0\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N, ), \"float32\"), B: T.Tensor((N, 3), \"float32\")):\n"
    "        with T.Kernel(1, threads=1) as bx:\n"
    "            for i in T.serial(N):\n"
    "                if flag:\n"
    "                    B[i, 0] = A[i] * scale\n"
    "                else:\n"
    "                    B[i, 0] = this_name_does_not_exist(A[i])\n"
    "                if mode == 1:\n"
    "                    B[i, 1] = A[i] + 10.0\n"
    "                elif mode == 2:\n"
    "                    B[i, 1] = A[i] + 20.0\n"
    "                else:\n"
    "                    B[i, 1] = A[i] + 30.0\n"
    "                if A[i] > 0.5:\n"
    "                    B[i, 2] = 1.0\n"
    "                elif A[i] > -0.5:\n"
    "                    B[i, 2] = A[i] * scale + (1.0 if mode == 2 else 0.0)\n"
    "                else:\n"
    "                    B[i, 2] = -1.0\n"
    "    return main\n";

static void ifs_case(int flag, int mode) {
    int64_t N = 64;
    char defs[100];
    snprintf(defs, sizeof defs, "N=64 flag=%s mode=%d", flag ? "True" : "False", mode);
    if (!flag) {
        /* the untaken branch is not elaborated, the taken one is */
        TsKernel *k = NULL;
        char src[4096];
        snprintf(src, sizeof src, "%s%s", KT_PRELUDE, SRC_IFS);
        TsDefine d[3] = {{"N", "64"}, {"flag", "False"}, {"mode", "1"}};
        TsStatus st = ts_compile_source(kt_ctx, "ifs.py", src, "ifs", d, 3, &kt_opt, &k);
        CHECK_EQ_INT(TS_ERR_NAME, st);
        CHECK_CONTAINS(ts_last_error(kt_ctx), "this_name_does_not_exist");
        ts_kernel_destroy(k);
        return;
    }
    TsKernel *k = kt_compile(SRC_IFS, "ifs", defs);
    TsTensor a = kt_tensor(TS_FLOAT32, 1, N), b = kt_tensor(TS_FLOAT32, 2, N, 3);
    kt_fill(&a, -1, 1);
    kt_poison(&b);
    TsTensor args[2] = {a, b};
    if (kt_launch(k, args, 2)) {
        double *w = kt_zeros(N * 3);
        for (int64_t i = 0; i < N; i++) {
            double x = ts_tensor_get(&a, i);
            w[i * 3] = x * 2;
            w[i * 3 + 1] = x + (mode == 1 ? 10 : mode == 2 ? 20 : 30);
            w[i * 3 + 2] = x > 0.5 ? 1 : x > -0.5 ? x * 2 + (mode == 2 ? 1 : 0) : -1;
        }
        char what[100];
        snprintf(what, sizeof what, "compile-time if/elif (mode %d), run-time if/elif/else", mode);
        KT_COMPARE(what, &b, w, 1e-6, 1e-6);
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_kernel_destroy(k);
}

static void test_ifs(void) {
    ifs_case(1, 1);
    ifs_case(1, 2);
    ifs_case(1, 3);
    ifs_case(0, 1);
}

/* ---- swizzle / annotate_layout / macro ---------------------------------------------------- */

static const char *SRC_HINTS =
    "from tilelang.layout import make_mma_swizzle_layout\n"
    "\n"
    "@T.macro\n"
    "def load_tile(src, dst, r0, c0):\n"
    "    T.copy(src[r0, c0], dst)\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def mm(M, N, K, bm, bn, bk, swz, lay):\n"
    "    @T.macro\n"
    "    def scale(buf, s):\n"
    "        for i, j in T.Parallel(bm, bn):\n"
    "            buf[i, j] = buf[i, j] * s\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((bm, bk), \"float16\")\n"
    "            B_shared = T.alloc_shared((bk, bn), \"float16\")\n"
    "            C_f = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            if lay:\n"
    "                T.annotate_layout({A_shared: make_mma_swizzle_layout(A_shared),\n"
    "                                   B_shared: make_mma_swizzle_layout(B_shared)})\n"
    "            if swz:\n"
    "                T.use_swizzle(panel_size=3)\n"
    "            T.clear(C_f)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):\n"
    "                load_tile(A, A_shared, by * bm, k * bk)\n"
    "                load_tile(B, B_shared, k * bk, bx * bn)\n"
    "                T.gemm(A_shared, B_shared, C_f)\n"
    "            scale(C_f, 0.5)\n"
    "            T.copy(C_f, C[by * bm, bx * bn])\n"
    "    return main\n";

static void test_hints(void) {
    int64_t M = 80, N = 112, K = 48;
    TsTensor a = kt_tensor(TS_FLOAT16, 2, M, K), b = kt_tensor(TS_FLOAT16, 2, K, N), c = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_fill(&a, -1, 1);
    kt_fill(&b, -1, 1);
    double *w = kt_zeros(M * N);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t kk = 0; kk < K; kk++) s += ts_tensor_get(&a, i * K + kk) * ts_tensor_get(&b, kk * N + j);
            w[i * N + j] = s * 0.5;
        }
    static const char *defs[] = {
        "M=80 N=112 K=48 bm=16 bn=16 bk=16 swz=False lay=False",
        "M=80 N=112 K=48 bm=16 bn=16 bk=16 swz=True lay=False",
        "M=80 N=112 K=48 bm=16 bn=16 bk=16 swz=False lay=True",
        "M=80 N=112 K=48 bm=16 bn=16 bk=16 swz=True lay=True",
    };
    static const char *what[] = {
        "gemm with macros (module-level and closure)",
        "T.use_swizzle(panel_size=3) leaves results unchanged",
        "T.annotate_layout(make_mma_swizzle_layout) leaves results unchanged",
        "use_swizzle + annotate_layout",
    };
    for (int v = 0; v < 4; v++) {
        TsKernel *k = kt_compile(SRC_HINTS, "mm", defs[v]);
        kt_poison(&c);
        TsTensor args[3] = {a, b, c};
        if (kt_launch(k, args, 3)) KT_COMPARE(what[v], &c, w, 1e-5, 1e-5);
        ts_kernel_destroy(k);
    }
    free(w);
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&c);
}

/* ---- T.print ------------------------------------------------------------------------------- */

static const char *SRC_PRINT =
    "@tilelang.jit(out_idx=[1])\n"
    "def pr(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"int32\"), B: T.Tensor((N,), \"int32\")):\n"
    "        with T.Kernel(2, threads=1) as bx:\n"
    "            buf = T.alloc_shared((N,), \"int32\")\n"
    "            T.copy(A, buf)\n"
    "            T.print(bx * 7 + 3, msg=\"value\")\n"
    "            if bx == 1:\n"
    "                T.print(buf, msg=\"tile\")\n"
    "                T.copy(buf, B)\n"
    "    return main\n";

/* Runs the kernel with stdout redirected into a temporary file; returns
 * what was printed (malloc'ed) or NULL. */
static char *launch_capturing(TsKernel *k, const TsTensor *args, int n, int *ok) {
    char path[] = "/tmp/ts-test-print-XXXXXX";
    int fd = mkstemp(path);
    *ok = 0;
    if (fd < 0) return NULL;
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    *ok = kt_launch(k, args, n);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = malloc((size_t)len + 1);
    lseek(fd, 0, SEEK_SET);
    ssize_t got = len > 0 ? read(fd, text, (size_t)len) : 0;
    text[got > 0 ? got : 0] = 0;
    close(fd);
    unlink(path);
    return text;
}

static void test_print(void) {
    int64_t N = 4;
    TsKernel *k = kt_compile(SRC_PRINT, "pr", "N=4");
    TsTensor a = kt_tensor(TS_INT32, 1, N), b = kt_tensor(TS_INT32, 1, N);
    kt_fill(&a, 100, 999);
    kt_poison(&b);
    TsTensor args[2] = {a, b};
    int ok;
    char *text = k ? launch_capturing(k, args, 2, &ok) : NULL;
    if (text && ok) {
        double *w = kt_values(&a);
        KT_COMPARE("kernel with T.print still computes", &b, w, 0, 0);
        free(w);
        CHECK_CONTAINS(text, "value: block (0, 0, 0): 3\n");
        CHECK_CONTAINS(text, "value: block (1, 0, 0): 10\n");
        char line[100];
        snprintf(line, sizeof line, "[3] = %d\n", (int)ts_tensor_get(&a, 3));
        CHECK_CONTAINS(text, line);
        CHECK_CONTAINS(text, "tile: block (1, 0, 0): ");
        CHECK(strstr(text, "tile: block (0, 0, 0)") == NULL);
    }
    free(text);
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_kernel_destroy(k);
}

/* ---- run-time shapes ---------------------------------------------------------------------- */

static const char *SRC_DYN =
    "@tilelang.jit(out_idx=[-1])\n"
    "def dyn(N, blk):\n"
    "    n = T.dynamic(\"n\")\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n, N), \"float32\"), B: T.Tensor((n, N), \"float32\"), C: T.Tensor((n, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(n, blk), threads=64) as bx:\n"
    "            a = T.alloc_shared((blk, N), \"float32\")\n"
    "            c = T.alloc_fragment((blk, N), \"float32\")\n"
    "            T.copy(A[bx * blk, 0], a)\n"
    "            T.copy(B[bx * blk, 0], c)\n"
    "            for i, j in T.Parallel(blk, N):\n"
    "                c[i, j] = a[i, j] * c[i, j] + n\n"
    "            T.copy(c, C[bx * blk, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[1])\n"
    "def sym(blk):\n"
    "    m = T.symbolic(\"m\")\n"
    "    k = T.dynamic(\"k\", \"int32\")\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((m, k), \"float32\"), S: T.Tensor((m,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(m, blk), threads=32) as bx:\n"
    "            for i in T.Parallel(blk):\n"
    "                if bx * blk + i < m:\n"
    "                    S[bx * blk + i] = 0.0\n"
    "                    for j in T.serial(k):\n"
    "                        S[bx * blk + i] = S[bx * blk + i] + X[bx * blk + i, j]\n"
    "    return main\n";

static void dyn_run(TsKernel *k, int64_t n, int64_t N) {
    TsTensor a = kt_tensor(TS_FLOAT32, 2, n, N), b = kt_tensor(TS_FLOAT32, 2, n, N), c = kt_tensor(TS_FLOAT32, 2, n, N);
    kt_fill(&a, -1, 1);
    kt_fill(&b, -1, 1);
    kt_poison(&c);
    TsTensor args[3] = {a, b, c};
    if (kt_launch(k, args, 3)) {
        double *w = kt_zeros(n * N);
        for (int64_t i = 0; i < n * N; i++) w[i] = ts_tensor_get(&a, i) * ts_tensor_get(&b, i) + (double)n;
        char what[100];
        snprintf(what, sizeof what, "T.dynamic n = %lld", (long long)n);
        KT_COMPARE(what, &c, w, 1e-5, 1e-6);
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&c);
}

static void test_dynamic(void) {
    int64_t N = 24;
    TsKernel *k = kt_compile(SRC_DYN, "dyn", "N=24 blk=16");
    if (!k) return;
    TsParamInfo p;
    CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 0, &p));
    CHECK_EQ_INT(-1, p.shape[0]);
    CHECK_EQ_STR("n", p.shape_names[0]);
    CHECK_EQ_INT(24, p.shape[1]);
    int64_t g[3];
    int th;
    ts_kernel_grid(k, g, &th);
    CHECK_EQ_INT(-1, g[0]);
    dyn_run(k, 37, N);
    dyn_run(k, 100, N);
    dyn_run(k, 5, N);
    /* A and B disagree on n */
    TsTensor a = kt_tensor(TS_FLOAT32, 2, 37, N), b = kt_tensor(TS_FLOAT32, 2, 40, N), c = kt_tensor(TS_FLOAT32, 2, 37, N);
    kt_fill(&a, -1, 1);
    kt_fill(&b, -1, 1);
    kt_poison(&c);
    TsTensor args[3] = {a, b, c};
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_kernel_launch(k, args, 3));
    CHECK_CONTAINS(ts_last_error(kt_ctx), "n");
    /* nothing ran */
    CHECK(isnan(ts_tensor_get(&c, 0)) && isnan(ts_tensor_get(&c, 37 * N - 1)));
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&c);
    ts_kernel_destroy(k);

    k = kt_compile(SRC_DYN, "sym", "blk=8");
    for (int rep = 0; rep < 2; rep++) {
        int64_t m = rep ? 9 : 30, kk = rep ? 50 : 3;
        TsTensor x = kt_tensor(TS_FLOAT32, 2, m, kk), s = kt_tensor(TS_FLOAT32, 1, m);
        kt_fill(&x, -1, 1);
        kt_poison(&s);
        TsTensor sa[2] = {x, s};
        if (kt_launch(k, sa, 2)) {
            double *w = kt_zeros(m);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < kk; j++) w[i] += ts_tensor_get(&x, i * kk + j);
            KT_COMPARE("T.symbolic m and T.dynamic k as a loop bound", &s, w, 1e-5, 1e-5);
            free(w);
        }
        ts_tensor_free(&x);
        ts_tensor_free(&s);
    }
    {
        TsTensor x = kt_tensor(TS_FLOAT32, 2, 6, 4), s = kt_tensor(TS_FLOAT32, 1, 7);
        TsTensor sa[2] = {x, s};
        CHECK_EQ_INT(TS_ERR_SHAPE, k ? ts_kernel_launch(k, sa, 2) : TS_ERR_SHAPE);
        ts_tensor_free(&x);
        ts_tensor_free(&s);
    }
    ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_prim_misc");
    test_loops();
    test_allocs();
    test_math();
    test_ifs();
    test_hints();
    test_print();
    test_dynamic();
    kt_finish();
    return test_done();
}
