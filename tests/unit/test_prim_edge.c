/*
 * test_prim_edge.c — the corners of the primitives, on the C target,
 * against naive C loops on fresh random data (kernel_test.h).
 *
 *   - Fenced tensors (kt_fenced: inaccessible pages on both sides): T.copy
 *     tiles hanging over the end of a tensor, T.atomic_add and T.fill on
 *     partial tiles, and T.if_then_else used as a guard (TVM's
 *     if_then_else only evaluates the taken side, so `if_then_else(i < n,
 *     A[i], 0)` is a legal way to read a ragged tail).  An unguarded
 *     access faults, so these tests cannot pass by luck.
 *   - Integer arithmetic with TIR's meaning: `//` and `%` floor, `/`
 *     truncates, T.floordiv/floormod/truncdiv/truncmod, bit operations,
 *     run-time `and`/`or`/`not`, T.max_value/T.min_value.
 *   - Mixed dtypes: float16 + float32, int8 * float32, bfloat16 products
 *     stored to bfloat16, int32 + float.
 *   - Tile ops on sub-regions: reduce of A_f[a:b, :] into R[c:d], a 3-D
 *     reduce along the middle axis, cumsum on a row region row[1, :] (a
 *     2-D region of extents (1, N): `dim` counts its axes, so dim=1), gemm into a
 *     region of a bigger fragment, T.copy global -> global.
 *   - Loops with run-time bounds (read from a tensor), run-time `while`,
 *     Python `for` over a tuple (unrolled), T.Pipelined with order/stage.
 *   - Run-time break and continue (in T.serial, range and while loops), a
 *     helper def called in a kernel.
 */
#include "kernel_test.h"

/* ---- fenced tensors ------------------------------------------------------------------------- */

static const char *SRC_FENCED =
    "@tilelang.jit(out_idx=[1])\n"
    "def tiles(M, N, bm, bn):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\"),\n"
    "             C: T.Tensor((M, N), \"float32\"), D: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            S = T.alloc_shared((bm, bn), \"float32\")\n"
    "            F = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.copy(A[by * bm, bx * bn], S)\n"
    "            T.copy(S, F)\n"
    "            for i, j in T.Parallel(bm, bn):\n"
    "                F[i, j] = F[i, j] + 1.0\n"
    "            T.copy(F, B[by * bm : (by + 1) * bm, bx * bn : (bx + 1) * bn])\n"
    "            T.atomic_add(C[by * bm, bx * bn], F)\n"
    "            T.fill(D[by * bm : (by + 1) * bm, bx * bn : (bx + 1) * bn], 4.5)\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[1])\n"
    "def ite(n, blk):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((T.ceildiv(n, blk) * blk,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(n, blk), threads=32) as bx:\n"
    "            for i in T.Parallel(blk):\n"
    "                B[bx * blk + i] = T.if_then_else(bx * blk + i < n, A[bx * blk + i], -1.0)\n"
    "    return main\n";

static void test_fenced(void) {
    int64_t M = 45, N = 29;
    TsKernel *k = kt_compile(SRC_FENCED, "tiles", "M=45 N=29 bm=16 bn=16");
    KtFenced a = kt_fenced(TS_FLOAT32, 2, M, N), b = kt_fenced(TS_FLOAT32, 2, M, N);
    KtFenced c = kt_fenced(TS_FLOAT32, 2, M, N), d = kt_fenced(TS_FLOAT32, 2, M, N);
    kt_fill(&a.t, -1, 1);
    kt_poison(&b.t);
    kt_fill(&c.t, -1, 1);
    kt_poison(&d.t);
    double *wb = kt_zeros(M * N), *wc = kt_values(&c.t), *wd = kt_zeros(M * N);
    for (int64_t i = 0; i < M * N; i++) {
        double x = ts_tensor_get(&a.t, i) + 1;
        wb[i] = kt_round(TS_FLOAT32, x);
        wc[i] = kt_round(TS_FLOAT32, wc[i] + wb[i]);
        wd[i] = 4.5;
    }
    fflush(stdout);
    TsTensor args[4] = {a.t, b.t, c.t, d.t};
    if (kt_launch(k, args, 4)) {
        KT_COMPARE("fenced: T.copy of tiles over the end of A and B", &b.t, wb, 0, 0);
        KT_COMPARE("fenced: T.atomic_add tile over the end of C", &c.t, wc, 0, 1e-7);
        KT_COMPARE("fenced: T.fill region over the end of D", &d.t, wd, 0, 0);
    }
    free(wb);
    free(wc);
    free(wd);
    kt_fenced_free(&a);
    kt_fenced_free(&b);
    kt_fenced_free(&c);
    kt_fenced_free(&d);
    ts_kernel_destroy(k);

    int64_t n = 1000, PN = 1024;
    k = kt_compile(SRC_FENCED, "ite", "n=1000 blk=64");
    KtFenced x = kt_fenced(TS_FLOAT32, 1, n);
    TsTensor y = kt_tensor(TS_FLOAT32, 1, PN);
    kt_fill(&x.t, -1, 1);
    kt_poison(&y);
    TsTensor args2[2] = {x.t, y};
    if (kt_launch(k, args2, 2)) {
        double *w = kt_zeros(PN);
        for (int64_t i = 0; i < PN; i++) w[i] = i < n ? ts_tensor_get(&x.t, i) : -1;
        KT_COMPARE("T.if_then_else as a guard of a ragged tail (fenced)", &y, w, 0, 0);
        free(w);
    }
    kt_fenced_free(&x);
    ts_tensor_free(&y);
    ts_kernel_destroy(k);
}

/* ---- integers ------------------------------------------------------------------------------------ */

#define NINT 18
static const char *SRC_INT =
    "@tilelang.jit(out_idx=[2])\n"
    "def ints(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"int32\"), B: T.Tensor((N,), \"int32\"), O: T.Tensor((18, N), \"int32\")):\n"
    "        with T.Kernel(1, threads=1) as bx:\n"
    "            for i in T.serial(N):\n"
    "                a = A[i]\n"
    "                b = B[i]\n"
    "                O[0, i] = a // b\n"
    "                O[1, i] = a % b\n"
    "                O[2, i] = a / b\n"
    "                O[3, i] = T.floordiv(a, b)\n"
    "                O[4, i] = T.floormod(a, b)\n"
    "                O[5, i] = T.truncdiv(a, b)\n"
    "                O[6, i] = T.truncmod(a, b)\n"
    "                O[7, i] = a & b\n"
    "                O[8, i] = a | b\n"
    "                O[9, i] = a ^ b\n"
    "                O[10, i] = (a & 255) << 3\n"
    "                O[11, i] = a >> 2\n"
    "                O[12, i] = ~a\n"
    "                O[13, i] = T.if_then_else((a > 0 and b > 0) or not (a < b), 1, 0)\n"
    "                O[14, i] = -a * 3 + b\n"
    "                O[15, i] = T.max_value(\"int32\") + T.min(a, 0) * 0\n"
    "                O[16, i] = T.min_value(\"int8\") + a * 0\n"
    "                O[17, i] = a // 4 + a % 4\n"
    "    return main\n";

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
static int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

static void test_ints(void) {
    int64_t N = 200;
    TsKernel *k = kt_compile(SRC_INT, "ints", "N=200");
    TsTensor a = kt_tensor(TS_INT32, 1, N), b = kt_tensor(TS_INT32, 1, N), o = kt_tensor(TS_INT32, 2, NINT, N);
    kt_fill(&a, -1000, 1000);
    for (int64_t i = 0; i < N; i++) {
        int64_t v = kt_randint(-20, 20);
        ts_tensor_set(&b, i, (double)(v == 0 ? 7 : v));
    }
    kt_poison(&o);
    TsTensor args[3] = {a, b, o};
    if (kt_launch(k, args, 3)) {
        double *w = kt_zeros(NINT * N);
        for (int64_t i = 0; i < N; i++) {
            int64_t x = (int64_t)ts_tensor_get(&a, i), y = (int64_t)ts_tensor_get(&b, i);
            int64_t r[NINT] = {floor_div(x, y), floor_mod(x, y), x / y,  floor_div(x, y), floor_mod(x, y), x / y,
                               x % y,       x & y,       x | y,  x ^ y,      (x & 255) << 3, x >> 2,
                               ~x,          ((x > 0 && y > 0) || !(x < y)) ? 1 : 0, -x * 3 + y,
                               2147483647,  -128,        floor_div(x, 4) + floor_mod(x, 4)};
            for (int j = 0; j < NINT; j++) w[j * N + i] = (double)r[j];
        }
        KT_COMPARE("int32: // % / floordiv floormod truncdiv truncmod & | ^ << >> ~ and/or/not max_value min_value",
                   &o, w, 0, 0);
        for (int j = 0; j < NINT; j++) {
            int bad = 0;
            for (int64_t i = 0; i < N; i++) bad |= ts_tensor_get(&o, j * N + i) != w[j * N + i];
            if (bad) fprintf(stderr, "  (row %d of the int32 results differs)\n", j);
        }
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&o);
    ts_kernel_destroy(k);
}

/* ---- mixed dtypes ------------------------------------------------------------------------------ */

static const char *SRC_MIXED =
    "@tilelang.jit(out_idx=[4, 5])\n"
    "def mixed(N):\n"
    "    @T.prim_func\n"
    "    def main(H: T.Tensor((N,), \"float16\"), F: T.Tensor((N,), \"float32\"), I8: T.Tensor((N,), \"int8\"),\n"
    "             BF: T.Tensor((N,), \"bfloat16\"), O: T.Tensor((4, N), \"float32\"), OB: T.Tensor((N,), \"bfloat16\")):\n"
    "        with T.Kernel(1, threads=1) as bx:\n"
    "            for i in T.serial(N):\n"
    "                O[0, i] = H[i] + F[i]\n"
    "                O[1, i] = I8[i] * F[i]\n"
    "                O[2, i] = T.cast(I8[i], \"int32\") * 1000 + (I8[i] + 3)\n"
    "                O[3, i] = T.cast(H[i], \"float32\") * T.cast(BF[i], \"float32\")\n"
    "                OB[i] = BF[i] * BF[i]\n"
    "    return main\n";

static void test_mixed(void) {
    int64_t N = 100;
    TsKernel *k = kt_compile(SRC_MIXED, "mixed", "N=100");
    TsTensor h = kt_tensor(TS_FLOAT16, 1, N), f = kt_tensor(TS_FLOAT32, 1, N), i8 = kt_tensor(TS_INT8, 1, N);
    TsTensor bf = kt_tensor(TS_BFLOAT16, 1, N), o = kt_tensor(TS_FLOAT32, 2, 4, N), ob = kt_tensor(TS_BFLOAT16, 1, N);
    kt_fill(&h, -10, 10);
    kt_fill(&f, -10, 10);
    kt_fill(&i8, -120, 120);
    kt_fill(&bf, -10, 10);
    kt_poison(&o);
    kt_poison(&ob);
    TsTensor args[6] = {h, f, i8, bf, o, ob};
    if (kt_launch(k, args, 6)) {
        double *w = kt_zeros(4 * N), *wb = kt_zeros(N);
        for (int64_t i = 0; i < N; i++) {
            double hv = ts_tensor_get(&h, i), fv = ts_tensor_get(&f, i), iv = ts_tensor_get(&i8, i), bv = ts_tensor_get(&bf, i);
            w[i] = kt_round(TS_FLOAT32, hv + fv);
            w[N + i] = kt_round(TS_FLOAT32, iv * fv);
            /* an int constant takes the other operand's dtype (TVM's rule):
             * I8 + 3 is int8, in range here; the explicit cast widens */
            w[2 * N + i] = iv * 1000 + (iv + 3);
            w[3 * N + i] = kt_round(TS_FLOAT32, hv * bv);
            wb[i] = kt_round(TS_BFLOAT16, bv * bv);
        }
        KT_COMPARE("float16 + float32, int8 * float32, int8 + const, cast products", &o, w, 0, 0);
        KT_COMPARE("bfloat16 * bfloat16 stored as bfloat16 (rounded once)", &ob, wb, 0, 0);
        free(w);
        free(wb);
    }
    ts_tensor_free(&h);
    ts_tensor_free(&f);
    ts_tensor_free(&i8);
    ts_tensor_free(&bf);
    ts_tensor_free(&o);
    ts_tensor_free(&ob);
    ts_kernel_destroy(k);
}

/* ---- sub-regions ---------------------------------------------------------------------------------- */

static const char *SRC_REGIONS =
    "@tilelang.jit(out_idx=[2, 3, 4, 5, 6])\n"
    "def regions(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), X: T.Tensor((2, M, N), \"float32\"),\n"
    "             R: T.Tensor((M,), \"float32\"), R3: T.Tensor((2, N), \"float32\"), Cs: T.Tensor((N,), \"float32\"),\n"
    "             G: T.Tensor((M, M), \"float32\"), Cp: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            F = T.alloc_fragment((M, N), \"float32\")\n"
    "            F3 = T.alloc_fragment((2, M, N), \"float32\")\n"
    "            r = T.alloc_fragment((M + 4,), \"float32\")\n"
    "            r3 = T.alloc_fragment((2, N), \"float32\")\n"
    "            row = T.alloc_shared((3, N), \"float32\")\n"
    "            big = T.alloc_fragment((M + 8, M + 8), \"float32\")\n"
    "            T.copy(A, F)\n"
    "            T.copy(X, F3)\n"
    "            T.fill(r, 0.0)\n"
    "            T.reduce_sum(F[0:K, :], r[2 : 2 + K], dim=1)\n"
    "            T.reduce_max(F[K:M, :], r[2 + K : 2 + M], dim=1)\n"
    "            T.copy(r[2 : 2 + M], R)\n"
    "            T.reduce_sum(F3, r3, dim=1)\n"
    "            T.copy(r3, R3)\n"
    "            T.copy(A[1, :], row[1, :])\n"
    "            T.cumsum(row[1, :], dim=1)\n"
    "            T.copy(row[1, :], Cs)\n"
    "            T.clear(big)\n"
    "            T.gemm(F, F, big[4 : 4 + M, 3 : 3 + M], transpose_B=True, k_pack=1, wg_wait=0)\n"
    "            T.copy(big[4 : 4 + M, 3 : 3 + M], G)\n"
    "            T.copy(A, Cp)\n"
    "    return main\n";

static void test_regions(void) {
    int64_t M = 12, N = 10, K = 5;
    TsKernel *k = kt_compile(SRC_REGIONS, "regions", "M=12 N=10 K=5");
    TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), x = kt_tensor(TS_FLOAT32, 3, 2, M, N), r = kt_tensor(TS_FLOAT32, 1, M);
    TsTensor r3 = kt_tensor(TS_FLOAT32, 2, 2, N), cs = kt_tensor(TS_FLOAT32, 1, N), g = kt_tensor(TS_FLOAT32, 2, M, M);
    TsTensor cp = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_fill(&a, -1, 1);
    kt_fill(&x, -1, 1);
    kt_poison(&r);
    kt_poison(&r3);
    kt_poison(&cs);
    kt_poison(&g);
    kt_poison(&cp);
    TsTensor args[7] = {a, x, r, r3, cs, g, cp};
    if (kt_launch(k, args, 7)) {
        double *wr = kt_zeros(M), *wr3 = kt_zeros(2 * N), *wcs = kt_zeros(N), *wg = kt_zeros(M * M), *wcp = kt_values(&a);
        for (int64_t i = 0; i < M; i++) {
            wr[i] = i < K ? 0 : -INFINITY;
            for (int64_t j = 0; j < N; j++) {
                double v = ts_tensor_get(&a, i * N + j);
                wr[i] = i < K ? wr[i] + v : fmax(wr[i], v);
            }
        }
        for (int64_t z = 0; z < 2; z++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) wr3[z * N + j] += ts_tensor_get(&x, (z * M + i) * N + j);
        double acc = 0;
        for (int64_t j = 0; j < N; j++) wcs[j] = acc += ts_tensor_get(&a, N + j);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < M; j++)
                for (int64_t t = 0; t < N; t++) wg[i * M + j] += ts_tensor_get(&a, i * N + t) * ts_tensor_get(&a, j * N + t);
        KT_COMPARE("reduce_sum / reduce_max of row ranges into sub-regions", &r, wr, 1e-5, 1e-5);
        KT_COMPARE("reduce_sum of a 3-D fragment along the middle axis", &r3, wr3, 1e-5, 1e-5);
        KT_COMPARE("cumsum of a row region row[1, :], dim=1", &cs, wcs, 1e-5, 1e-5);
        KT_COMPARE("gemm into a region of a bigger fragment (A @ A^T)", &g, wg, 1e-5, 1e-5);
        KT_COMPARE("T.copy global -> global", &cp, wcp, 0, 0);
        free(wr);
        free(wr3);
        free(wcs);
        free(wg);
        free(wcp);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&x);
    ts_tensor_free(&r);
    ts_tensor_free(&r3);
    ts_tensor_free(&cs);
    ts_tensor_free(&g);
    ts_tensor_free(&cp);
    ts_kernel_destroy(k);
}

/* ---- run-time loops ------------------------------------------------------------------------------- */

static const char *SRC_RTLOOPS =
    "@tilelang.jit(out_idx=[2])\n"
    "def rtl(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), L: T.Tensor((M, 2), \"int32\"), S: T.Tensor((M, 4), \"float32\")):\n"
    "        with T.Kernel(M, threads=1) as r:\n"
    "            acc = T.alloc_var(\"float32\")\n"
    "            j = T.alloc_var(\"int32\")\n"
    "            acc = 0.0\n"
    "            for t in T.serial(L[r, 0], L[r, 1]):\n"
    "                acc = acc * 0.5 + A[r, t]\n"
    "            S[r, 0] = acc\n"
    "            acc = 0.0\n"
    "            j = L[r, 0]\n"
    "            while j < L[r, 1]:\n"
    "                acc = acc * 0.5 + A[r, j]\n"
    "                j += 2\n"
    "            S[r, 1] = acc\n"
    "            acc = 0.0\n"
    "            for c in (3, 0, 5):\n"
    "                acc = acc * 0.5 + A[r, c]\n"
    "            S[r, 2] = acc\n"
    "            acc = 0.0\n"
    "            for t in T.Pipelined(L[r, 1], num_stages=2, order=[0, 1], stage=[0, 1]):\n"
    "                acc = acc * 0.5 + A[r, t]\n"
    "            S[r, 3] = acc\n"
    "    return main\n";

static double fold(double acc, double x) { return (double)(float)((double)(float)(acc * 0.5) + x); }

static void test_rtloops(void) {
    int64_t M = 8, N = 16;
    TsKernel *k = kt_compile(SRC_RTLOOPS, "rtl", "M=8 N=16");
    TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), l = kt_tensor(TS_INT32, 2, M, 2), s = kt_tensor(TS_FLOAT32, 2, M, 4);
    kt_fill(&a, -1, 1);
    for (int64_t i = 0; i < M; i++) {
        int64_t lo = kt_randint(0, N - 1), hi = kt_randint(lo, N);
        if (i == 0) hi = lo; /* an empty range */
        ts_tensor_set(&l, i * 2, (double)lo);
        ts_tensor_set(&l, i * 2 + 1, (double)hi);
    }
    kt_poison(&s);
    TsTensor args[3] = {a, l, s};
    if (kt_launch(k, args, 3)) {
        double *w = kt_zeros(M * 4);
        for (int64_t r = 0; r < M; r++) {
            int64_t lo = (int64_t)ts_tensor_get(&l, r * 2), hi = (int64_t)ts_tensor_get(&l, r * 2 + 1);
            double acc = 0;
            for (int64_t t = lo; t < hi; t++) acc = fold(acc, ts_tensor_get(&a, r * N + t));
            w[r * 4] = acc;
            acc = 0;
            for (int64_t t = lo; t < hi; t += 2) acc = fold(acc, ts_tensor_get(&a, r * N + t));
            w[r * 4 + 1] = acc;
            acc = 0;
            static const int cs[3] = {3, 0, 5};
            for (int c = 0; c < 3; c++) acc = fold(acc, ts_tensor_get(&a, r * N + cs[c]));
            w[r * 4 + 2] = acc;
            acc = 0;
            for (int64_t t = 0; t < hi; t++) acc = fold(acc, ts_tensor_get(&a, r * N + t));
            w[r * 4 + 3] = acc;
        }
        KT_COMPARE("T.serial(lo, hi) from a tensor, while, for over a tuple, Pipelined(order, stage)", &s, w, 1e-6, 1e-5);
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&l);
    ts_tensor_free(&s);
    ts_kernel_destroy(k);
}

/* ---- break / continue / helpers ---------------------------------------------------------------- */

/* Per row: F[r, 0] = index of the first element > th (N if none) via break;
 * F[r, 1] = sum of the elements < 0 via continue; F[r, 2] = number of
 * steps of a run-time while loop left by a break; F[r, 3] = a helper def (inlined at
 * compile time) applied to the first element. */
static const char *SRC_CONTROL =
    "def sq_plus(x, c):\n"
    "    return x * x + c\n"
    "\n"
    "@tilelang.jit(out_idx=[1])\n"
    "def ctl(M, N, th):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), F: T.Tensor((M, 4), \"float32\")):\n"
    "        with T.Kernel(M, threads=1) as r:\n"
    "            first = T.alloc_var(\"int32\")\n"
    "            neg = T.alloc_var(\"float32\")\n"
    "            steps = T.alloc_var(\"int32\")\n"
    "            first = N\n"
    "            for j in T.serial(N):\n"
    "                if A[r, j] > th:\n"
    "                    first = j\n"
    "                    break\n"
    "            neg = 0.0\n"
    "            for j in range(N):\n"
    "                if A[r, j] >= 0:\n"
    "                    continue\n"
    "                neg += A[r, j]\n"
    "            steps = 0\n"
    "            while steps < N:\n"
    "                if A[r, steps] > th:\n"
    "                    break\n"
    "                steps += 1\n"
    "            F[r, 0] = first\n"
    "            F[r, 1] = neg\n"
    "            F[r, 2] = steps\n"
    "            F[r, 3] = sq_plus(A[r, 0], 0.25)\n"
    "    return main\n";

static void test_control(void) {
    int64_t M = 12, N = 20;
    TsKernel *k = kt_compile(SRC_CONTROL, "ctl", "M=12 N=20 th=0.8");
    TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), f = kt_tensor(TS_FLOAT32, 2, M, 4);
    kt_fill(&a, -1, 1);
    for (int64_t j = 0; j < N; j++) ts_tensor_set(&a, j, 0.5); /* row 0: no element above th */
    kt_poison(&f);
    TsTensor args[2] = {a, f};
    if (kt_launch(k, args, 2)) {
        double *w = kt_zeros(M * 4);
        for (int64_t r = 0; r < M; r++) {
            int64_t first = N;
            double neg = 0;
            for (int64_t j = 0; j < N; j++)
                if (ts_tensor_get(&a, r * N + j) > (double)(float)0.8) {
                    first = j;
                    break;
                }
            for (int64_t j = 0; j < N; j++)
                if (ts_tensor_get(&a, r * N + j) < 0) neg += ts_tensor_get(&a, r * N + j);
            double x = ts_tensor_get(&a, r * N);
            w[r * 4] = (double)first;
            w[r * 4 + 1] = neg;
            w[r * 4 + 2] = (double)first;
            w[r * 4 + 3] = kt_round(TS_FLOAT32, kt_round(TS_FLOAT32, x * x) + 0.25);
        }
        KT_COMPARE("run-time break, continue, while + break, helper def", &f, w, 1e-6, 1e-6);
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&f);
    ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_prim_edge");
    test_fenced();
    test_ints();
    test_mixed();
    test_regions();
    test_rtloops();
    test_control();
    kt_finish();
    return test_done();
}
