/*
 * test_prim_copy.c — T.Kernel grids, tensor dtypes and T.copy, run on the
 * C target through the public API and checked against naive C loops on
 * fresh random data (kernel_test.h: seeded, printed, TS_TEST_SEED).
 *
 * What is covered and why it is shaped this way:
 *   - T.Kernel with 1, 2 and 3 grid extents (`as bx`, `as (bx, by)`,
 *     `as (bx, by, bz)`), threads= as a number and a tuple, extents that
 *     do not divide the data; every block writes values that depend on its
 *     own block index, so a wrong index mapping or a missing block shows.
 *   - T.Tensor of float32, float16, bfloat16, int8, int32 and float64, and
 *     T.cast between all of them.
 *   - T.copy between global, shared and fragment buffers: whole buffers,
 *     the "element = start of a tile" form, slices with `a:b` and `:`, 4-D
 *     tensors with unit dims, 1-D rows out of 2-D tensors, dtype changes.
 *   - Bounds guards of partial tiles.  Tensors are strided views into a
 *     larger allocation whose padding (between rows and after the last
 *     row) holds poison: a guarded read must give 0 and never the padding,
 *     and a guarded write must leave the padding untouched.  Without the
 *     padding an unguarded write would land inside the next row and might
 *     go unnoticed.
 */
#include "kernel_test.h"

/* A 2-D float tensor view of shape (m, n) with row stride n + pad into a
 * storage of (m + extra_rows) rows; the storage is returned in *store so
 * that the padding can be checked. */
static TsTensor padded_view(TsTensor *store, TsDType dt, int64_t m, int64_t n, int64_t pad, int64_t extra_rows) {
    *store = kt_tensor(dt, 2, m + extra_rows, n + pad);
    TsTensor v = *store;
    int64_t *shape = malloc(2 * sizeof(int64_t)), *strides = malloc(2 * sizeof(int64_t));
    shape[0] = m;
    shape[1] = n;
    strides[0] = n + pad;
    strides[1] = 1;
    v.shape = shape;
    v.strides = strides;
    return v;
}

static void free_view(TsTensor *v) {
    free((void *)v->shape);
    free((void *)v->strides);
}

/* ---- grids ------------------------------------------------------------------------------ */

static const char *SRC_GRID =
    "@tilelang.jit(out_idx=[-1])\n"
    "def grid1(N, blk):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, blk), threads=64) as bx:\n"
    "            for i in T.Parallel(blk):\n"
    "                if bx * blk + i < N:\n"
    "                    B[bx * blk + i] = A[bx * blk + i] * 3.0 + bx\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def grid2(M, N, bm, bn):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            for i, j in T.Parallel(bm, bn):\n"
    "                if by * bm + i < M and bx * bn + j < N:\n"
    "                    B[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + by * 1000 + bx\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def grid3(Z, Y, X, bl):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((Z, Y, X), \"float32\"), B: T.Tensor((Z, Y, X), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(X, bl), Y, Z, threads=(32, 4)) as (bx, by, bz):\n"
    "            for i in T.Parallel(bl):\n"
    "                if bx * bl + i < X:\n"
    "                    B[bz, by, bx * bl + i] = A[bz, by, bx * bl + i] * 2.0 + bz * 10000 + by * 100 + bx\n"
    "    return main\n";

static void test_grids(void) {
    {
        int64_t N = 1000, blk = 64;
        TsKernel *k = kt_compile(SRC_GRID, "grid1", "N=1000 blk=64");
        if (k) {
            int64_t g[3];
            int th;
            ts_kernel_grid(k, g, &th);
            CHECK_EQ_INT(16, g[0]);
            CHECK_EQ_INT(1, g[1]);
            CHECK_EQ_INT(1, g[2]);
            CHECK_EQ_INT(64, th);
        }
        TsTensor a = kt_tensor(TS_FLOAT32, 1, N), b = kt_tensor(TS_FLOAT32, 1, N);
        kt_fill(&a, -4, 4);
        kt_poison(&b);
        TsTensor args[2] = {a, b};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(N);
            for (int64_t i = 0; i < N; i++) w[i] = kt_round(TS_FLOAT32, ts_tensor_get(&a, i) * 3.0 + (double)(i / blk));
            KT_COMPARE("grid1 (1-D grid, 1000 over blocks of 64)", &b, w, 1e-5, 1e-6);
            free(w);
        }
        ts_tensor_free(&a);
        ts_tensor_free(&b);
        ts_kernel_destroy(k);
    }
    {
        int64_t M = 100, N = 75, bm = 16, bn = 32;
        TsKernel *k = kt_compile(SRC_GRID, "grid2", "M=100 N=75 bm=16 bn=32");
        if (k) {
            int64_t g[3];
            int th;
            ts_kernel_grid(k, g, &th);
            CHECK_EQ_INT(3, g[0]);
            CHECK_EQ_INT(7, g[1]);
            CHECK_EQ_INT(1, g[2]);
            CHECK_EQ_INT(128, th);
        }
        TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), b = kt_tensor(TS_FLOAT32, 2, M, N);
        kt_fill(&a, -1, 1);
        kt_poison(&b);
        TsTensor args[2] = {a, b};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(M * N);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++)
                    w[i * N + j] = kt_round(TS_FLOAT32, ts_tensor_get(&a, i * N + j) + (double)(i / bm) * 1000 + (double)(j / bn));
            KT_COMPARE("grid2 (2-D grid, 100x75 over 16x32)", &b, w, 0, 1e-6);
            free(w);
        }
        ts_tensor_free(&a);
        ts_tensor_free(&b);
        ts_kernel_destroy(k);
    }
    {
        int64_t Z = 3, Y = 5, X = 70, bl = 32;
        TsKernel *k = kt_compile(SRC_GRID, "grid3", "Z=3 Y=5 X=70 bl=32");
        if (k) {
            int64_t g[3];
            int th;
            ts_kernel_grid(k, g, &th);
            CHECK_EQ_INT(3, g[0]);
            CHECK_EQ_INT(5, g[1]);
            CHECK_EQ_INT(3, g[2]);
            CHECK_EQ_INT(128, th);
        }
        TsTensor a = kt_tensor(TS_FLOAT32, 3, Z, Y, X), b = kt_tensor(TS_FLOAT32, 3, Z, Y, X);
        kt_fill(&a, -1, 1);
        kt_poison(&b);
        TsTensor args[2] = {a, b};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(Z * Y * X);
            for (int64_t z = 0; z < Z; z++)
                for (int64_t y = 0; y < Y; y++)
                    for (int64_t x = 0; x < X; x++) {
                        int64_t i = (z * Y + y) * X + x;
                        w[i] = kt_round(TS_FLOAT32, ts_tensor_get(&a, i) * 2.0 + (double)(z * 10000 + y * 100 + x / bl));
                    }
            KT_COMPARE("grid3 (3-D grid, threads=(32, 4))", &b, w, 0, 1e-6);
            free(w);
        }
        ts_tensor_free(&a);
        ts_tensor_free(&b);
        ts_kernel_destroy(k);
    }
}

/* ---- dtypes and casts ------------------------------------------------------------------ */

/* C = A * 2 + B computed in the tensors' dtype; D = cast(A, odt); E = cast(D, "float64"). */
static const char *SRC_DTYPE =
    "@tilelang.jit(out_idx=[2, 3, 4])\n"
    "def elem(M, N, dt, odt, bm=16, bn=16):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), dt), B: T.Tensor((M, N), dt), C: T.Tensor((M, N), dt),\n"
    "             D: T.Tensor((M, N), odt), E: T.Tensor((M, N), \"float64\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):\n"
    "            for i, j in T.Parallel(bm, bn):\n"
    "                r = by * bm + i\n"
    "                c = bx * bn + j\n"
    "                if r < M and c < N:\n"
    "                    C[r, c] = A[r, c] * 2 + B[r, c]\n"
    "                    D[r, c] = T.cast(A[r, c], odt)\n"
    "                    E[r, c] = T.cast(D[r, c], \"float64\")\n"
    "    return main\n";

static void dtype_case(TsDType dt, TsDType odt) {
    int64_t M = 37, N = 45;
    char defs[200];
    snprintf(defs, sizeof defs, "M=37 N=45 dt=%s odt=%s", ts_dtype_name(dt), ts_dtype_name(odt));
    char what[200];
    TsKernel *k = kt_compile(SRC_DTYPE, "elem", defs);
    if (k) {
        TsParamInfo p;
        CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 0, &p));
        CHECK_EQ_INT(dt, p.dtype);
        CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 3, &p));
        CHECK_EQ_INT(odt, p.dtype);
    }
    TsTensor a = kt_tensor(dt, 2, M, N), b = kt_tensor(dt, 2, M, N), c = kt_tensor(dt, 2, M, N);
    TsTensor d = kt_tensor(odt, 2, M, N), e = kt_tensor(TS_FLOAT64, 2, M, N);
    int isf = kt_is_float(dt);
    /* integers: small enough that A*2+B fits int8; floats: fractional */
    kt_fill(&a, isf ? -50 : -40, isf ? 50 : 40);
    kt_fill(&b, isf ? -8 : -40, isf ? 8 : 40);
    kt_poison(&c);
    kt_poison(&d);
    kt_poison(&e);
    TsTensor args[5] = {a, b, c, d, e};
    if (kt_launch(k, args, 5)) {
        double *wc = kt_zeros(M * N), *wd = kt_zeros(M * N);
        for (int64_t i = 0; i < M * N; i++) {
            double x = ts_tensor_get(&a, i), y = ts_tensor_get(&b, i);
            wc[i] = kt_round(dt, x * 2 + y);
            /* float -> int conversion truncates toward zero, as C and TVM do */
            wd[i] = kt_is_float(odt) ? kt_round(odt, x) : trunc(x);
        }
        snprintf(what, sizeof what, "%s: A * 2 + B", ts_dtype_name(dt));
        if (isf) KT_COMPARE_ULP(what, &c, wc, 1, 0); /* at most a second rounding: 1 ulp (issue 9 H) */
        else KT_COMPARE(what, &c, wc, 0, 0);
        snprintf(what, sizeof what, "T.cast(%s -> %s)", ts_dtype_name(dt), ts_dtype_name(odt));
        KT_COMPARE(what, &d, wd, 0, 0); /* a single rounding: exact */
        snprintf(what, sizeof what, "T.cast(%s -> float64)", ts_dtype_name(odt));
        KT_COMPARE(what, &e, wd, 0, 0);
        free(wc);
        free(wd);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&c);
    ts_tensor_free(&d);
    ts_tensor_free(&e);
    ts_kernel_destroy(k);
}

static void test_dtypes(void) {
    static const TsDType dts[] = {TS_FLOAT32, TS_FLOAT16, TS_BFLOAT16, TS_INT8, TS_INT32, TS_FLOAT64};
    int n = (int)(sizeof dts / sizeof dts[0]);
    for (int i = 0; i < n; i++) dtype_case(dts[i], dts[(i + 1) % n]);
    /* every float dtype cast to every other dtype and to int32 */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && j != (i + 1) % n && kt_is_float(dts[i])) dtype_case(dts[i], dts[j]);
}

/* ---- T.copy ------------------------------------------------------------------------------ */

/* global -> shared -> fragment -> shared -> global, tiles given by their
 * start element, M and N not multiples of the tile: Out = In * 2 in odt. */
static const char *SRC_COPY_TILES =
    "@tilelang.jit(out_idx=[-1])\n"
    "def tiles(M, N, bm, bn, dt, odt):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), dt), B: T.Tensor((M, N), odt)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((bm, bn), dt)\n"
    "            A_frag = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            B_shared = T.alloc_shared((bm, bn), odt)\n"
    "            T.copy(A[by * bm, bx * bn], A_shared)\n"
    "            T.copy(A_shared, A_frag)\n"
    "            for i, j in T.Parallel(bm, bn):\n"
    "                A_frag[i, j] = A_frag[i, j] * 2\n"
    "            T.copy(A_frag, B_shared)\n"
    "            T.copy(B_shared, B[by * bm, bx * bn])\n"
    "    return main\n"
    "\n"
    /* Reads a partial tile and stores the whole tile, zero fill included,
     * into a bigger output: Out[(bm*gm), (bn*gn)]. */
    "@tilelang.jit(out_idx=[-1])\n"
    "def readpad(M, N, bm, bn):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"),\n"
    "             B: T.Tensor((T.ceildiv(M, bm) * bm, T.ceildiv(N, bn) * bn), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((bm, bn), \"float32\")\n"
    "            A_frag = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.copy(A[by * bm, bx * bn], A_shared)\n"
    "            T.copy(A_shared, A_frag)\n"
    "            T.copy(A_frag, B[by * bm : (by + 1) * bm, bx * bn : (bx + 1) * bn])\n"
    "    return main\n";

static void copy_tiles_case(TsDType dt, TsDType odt) {
    int64_t M = 70, N = 52, bm = 32, bn = 16, pad = 5, extra = 3;
    char defs[200], what[200];
    snprintf(defs, sizeof defs, "M=%lld N=%lld bm=%lld bn=%lld dt=%s odt=%s", (long long)M, (long long)N,
             (long long)bm, (long long)bn, ts_dtype_name(dt), ts_dtype_name(odt));
    TsKernel *k = kt_compile(SRC_COPY_TILES, "tiles", defs);
    TsTensor as, bs;
    TsTensor a = padded_view(&as, dt, M, N, pad, extra), b = padded_view(&bs, odt, M, N, pad, extra);
    /* the padding of the input holds huge values: reading it would show */
    kt_fill(&as, 1e4, 2e4);
    kt_fill(&a, -3, 3);
    kt_poison(&bs);
    double *want = kt_values(&bs); /* all poison: padding must stay so */
    TsTensor args[2] = {a, b};
    if (kt_launch(k, args, 2)) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                want[i * (N + pad) + j] = kt_round(odt, 2 * ts_tensor_get(&a, i * N + j));
        snprintf(what, sizeof what, "copy tiles %s->%s (storage incl. padding)", ts_dtype_name(dt), ts_dtype_name(odt));
        if (kt_is_float(odt)) KT_COMPARE_ULP(what, &bs, want, 0, 0); /* 2x is exact: one rounding, 0 ulp */
        else KT_COMPARE(what, &bs, want, 0, 0);
    }
    free(want);
    free_view(&a);
    free_view(&b);
    ts_tensor_free(&as);
    ts_tensor_free(&bs);
    ts_kernel_destroy(k);
}

static void test_copy_guards(void) {
    copy_tiles_case(TS_FLOAT32, TS_FLOAT32);
    copy_tiles_case(TS_FLOAT16, TS_FLOAT32);
    copy_tiles_case(TS_FLOAT32, TS_BFLOAT16);
    copy_tiles_case(TS_INT32, TS_FLOAT64);

    /* zero fill of reads past the end */
    int64_t M = 45, N = 27, pad = 3; /* tiles of 16x8 */
    int64_t PM = 48, PN = 32;
    TsKernel *k = kt_compile(SRC_COPY_TILES, "readpad", "M=45 N=27 bm=16 bn=8");
    TsTensor as, a = padded_view(&as, TS_FLOAT32, M, N, pad, 4);
    TsTensor b = kt_tensor(TS_FLOAT32, 2, PM, PN);
    kt_fill(&as, 100, 200);
    kt_fill(&a, -1, 1);
    kt_poison(&b);
    TsTensor args[2] = {a, b};
    if (kt_launch(k, args, 2)) {
        double *w = kt_zeros(PM * PN);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) w[i * PN + j] = ts_tensor_get(&a, i * N + j);
        KT_COMPARE("partial tiles read as zero past the end", &b, w, 0, 0);
        free(w);
    }
    free_view(&a);
    ts_tensor_free(&as);
    ts_tensor_free(&b);
    ts_kernel_destroy(k);
}

/* Slices: a:b and `:` on a 4-D BSHD tensor with unit dims (FlashAttention's
 * Q[bz, i0:i1, by, :]), sub-tiles of shared buffers, rows of 2-D tensors. */
static const char *SRC_COPY_SLICES =
    "@tilelang.jit(out_idx=[1])\n"
    "def bshd(B, S, H, D, bs):\n"
    "    @T.prim_func\n"
    "    def main(Q: T.Tensor((B, S, H, D), \"float16\"), O: T.Tensor((B, S, H, D), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(S, bs), H, B, threads=128) as (bx, by, bz):\n"
    "            Q_shared = T.alloc_shared((bs, D), \"float16\")\n"
    "            acc = T.alloc_fragment((bs, D), \"float32\")\n"
    "            T.copy(Q[bz, bx * bs : (bx + 1) * bs, by, :], Q_shared)\n"
    "            T.copy(Q_shared, acc)\n"
    "            for i, j in T.Parallel(bs, D):\n"
    "                acc[i, j] = acc[i, j] + bz * 100 + by * 10\n"
    "            T.copy(acc, O[bz, bx * bs : (bx + 1) * bs, by, :])\n"
    "    return main\n"
    "\n"
    /* Out[r0:r1, c0:c1] = A[r0:r1, c0:c1] * 3 from one block, through the
     * middle of a bigger shared tile; everything else of Out keeps its
     * initial values (Out is also an input, not in out_idx). Plus a row
     * copy: Row[:] = A[r0, 0:N] and a column in a 2-D buffer. */
    "@tilelang.jit(out_idx=[])\n"
    "def sub(M, N, r0, r1, c0, c1):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), Out: T.Tensor((M, N), \"float32\"),\n"
    "             Row: T.Tensor((N,), \"float32\"), Col: T.Tensor((M, 1), \"float32\")):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            S = T.alloc_shared((r1 - r0 + 4, c1 - c0 + 6), \"float32\")\n"
    "            F = T.alloc_fragment((r1 - r0, c1 - c0), \"float32\")\n"
    "            row = T.alloc_fragment((N,), \"float32\")\n"
    "            col = T.alloc_shared((M, 2), \"float32\")\n"
    "            T.copy(A[r0:r1, c0:c1], S[2 : 2 + r1 - r0, 3 : 3 + c1 - c0])\n"
    "            T.copy(S[2 : 2 + r1 - r0, 3 : 3 + c1 - c0], F)\n"
    "            for i, j in T.Parallel(r1 - r0, c1 - c0):\n"
    "                F[i, j] = F[i, j] * 3\n"
    "            T.copy(F, Out[r0:r1, c0:c1])\n"
    "            T.copy(A[r0, 0:N], row)\n"
    "            T.copy(row, Row)\n"
    "            T.copy(A[:, c0], col[:, 1])\n"
    "            T.copy(col[:, 1], Col[:, 0])\n"
    "    return main\n";

static void test_copy_slices(void) {
    {
        int64_t B = 2, S = 40, H = 3, D = 16;
        TsKernel *k = kt_compile(SRC_COPY_SLICES, "bshd", "B=2 S=40 H=3 D=16 bs=16");
        TsTensor q = kt_tensor(TS_FLOAT16, 4, B, S, H, D), o = kt_tensor(TS_FLOAT32, 4, B, S, H, D);
        kt_fill(&q, -2, 2);
        kt_poison(&o);
        TsTensor args[2] = {q, o};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(B * S * H * D);
            for (int64_t b = 0; b < B; b++)
                for (int64_t s = 0; s < S; s++)
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t d = 0; d < D; d++) {
                            int64_t i = ((b * S + s) * H + h) * D + d;
                            w[i] = kt_round(TS_FLOAT32, ts_tensor_get(&q, i) + (double)(b * 100 + h * 10));
                        }
            KT_COMPARE("copy Q[bz, i0:i1, by, :] (4-D, unit dims, partial)", &o, w, 0, 1e-6);
            free(w);
        }
        ts_tensor_free(&q);
        ts_tensor_free(&o);
        ts_kernel_destroy(k);
    }
    {
        int64_t M = 30, N = 20, r0 = 5, r1 = 17, c0 = 3, c1 = 14;
        TsKernel *k = kt_compile(SRC_COPY_SLICES, "sub", "M=30 N=20 r0=5 r1=17 c0=3 c1=14");
        if (k) {
            TsParamInfo p;
            for (int i = 0; i < 4; i++) {
                CHECK_EQ_INT(TS_OK, ts_kernel_param(k, i, &p));
                CHECK_EQ_INT(0, p.is_output);
            }
        }
        TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), out = kt_tensor(TS_FLOAT32, 2, M, N);
        TsTensor row = kt_tensor(TS_FLOAT32, 1, N), col = kt_tensor(TS_FLOAT32, 2, M, 1);
        kt_fill(&a, -1, 1);
        kt_fill(&out, 5, 6); /* initial values that must survive outside the slice */
        kt_poison(&row);
        kt_poison(&col);
        double *w = kt_values(&out);
        TsTensor args[4] = {a, out, row, col};
        if (kt_launch(k, args, 4)) {
            for (int64_t i = r0; i < r1; i++)
                for (int64_t j = c0; j < c1; j++) w[i * N + j] = kt_round(TS_FLOAT32, 3 * ts_tensor_get(&a, i * N + j));
            KT_COMPARE("copy A[a:b, c:d] through a sub-tile of shared, rest untouched", &out, w, 0, 0);
            double *wr = kt_zeros(N), *wc = kt_zeros(M);
            for (int64_t j = 0; j < N; j++) wr[j] = ts_tensor_get(&a, r0 * N + j);
            for (int64_t i = 0; i < M; i++) wc[i] = ts_tensor_get(&a, i * N + c0);
            KT_COMPARE("copy row A[r, 0:N] into a 1-D fragment", &row, wr, 0, 0);
            KT_COMPARE("copy column A[:, c] through col[:, 1]", &col, wc, 0, 0);
            free(wr);
            free(wc);
        }
        free(w);
        ts_tensor_free(&a);
        ts_tensor_free(&out);
        ts_tensor_free(&row);
        ts_tensor_free(&col);
        ts_kernel_destroy(k);
    }
}

/* The K loop of a GEMM without the GEMM: tiles A[by*bm, k*bk] start at an
 * element; each block sums its rows' tiles over k into a fragment.  K is
 * not a multiple of bk, so the last tile of every row is partial (zero
 * filled), and M not a multiple of bm (guarded store). */
static const char *SRC_COPY_KLOOP =
    "@tilelang.jit(out_idx=[-1])\n"
    "def kloop(M, K, bm, bk):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float32\"), S: T.Tensor((M, bk), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, bm), threads=128) as by:\n"
    "            A_shared = T.alloc_shared((bm, bk), \"float32\")\n"
    "            acc = T.alloc_fragment((bm, bk), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):\n"
    "                T.copy(A[by * bm, k * bk], A_shared)\n"
    "                for i, j in T.Parallel(bm, bk):\n"
    "                    acc[i, j] += A_shared[i, j]\n"
    "            T.copy(acc, S[by * bm, 0])\n"
    "    return main\n";

static void test_copy_kloop(void) {
    int64_t M = 50, K = 77, bk = 8; /* row tiles of 16 */
    TsKernel *k = kt_compile(SRC_COPY_KLOOP, "kloop", "M=50 K=77 bm=16 bk=8");
    TsTensor a = kt_tensor(TS_FLOAT32, 2, M, K), s = kt_tensor(TS_FLOAT32, 2, M, bk);
    kt_fill(&a, -1, 1);
    kt_poison(&s);
    TsTensor args[2] = {a, s};
    if (kt_launch(k, args, 2)) {
        double *w = kt_zeros(M * bk);
        for (int64_t i = 0; i < M; i++)
            for (int64_t kk = 0; kk < K; kk++) w[i * bk + kk % bk] += ts_tensor_get(&a, i * K + kk);
        KT_COMPARE("copy A[by*bm, k*bk] tiles in a K loop (partial last tile)", &s, w, 1e-5, 1e-5);
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&s);
    ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_prim_copy");
    test_grids();
    test_dtypes();
    test_copy_guards();
    test_copy_slices();
    test_copy_kloop();
    kt_finish();
    return test_done();
}
