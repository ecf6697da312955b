/*
 * test_api.c — the public API (include/tilescale.h) from a user's side:
 * contexts, compile errors (status codes, `file:line:col: error:` text),
 * kernel queries (parameters, outputs, grid, generated source, IR,
 * timing), launch-time checks (argument count, dtype, shape), scalar
 * parameters, strided (non-contiguous) tensors, .npy round trips, and
 * robustness: NULL arguments, garbage and mutated sources never crash,
 * and the context compiles and runs correctly after any error; compile
 * warnings (ts_last_warnings).
 *
 * Results of the kernels run here are compared against naive C loops on
 * fresh random data like the primitive tests (kernel_test.h).
 */
#include "kernel_test.h"

static const char *SRC_AXPY =
    "@tilelang.jit(out_idx=[-1])\n"
    "def axpy(M, N, bm=16, dt=\"float32\"):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), dt), Y: T.Tensor((N, M), dt), Z: T.Tensor((M, N), dt)):\n"
    "        with T.Kernel(T.ceildiv(M, bm), threads=96) as bx:\n"
    "            for i, j in T.Parallel(bm, N):\n"
    "                if bx * bm + i < M:\n"
    "                    Z[bx * bm + i, j] = X[bx * bm + i, j] * 2.0 + Y[j, bx * bm + i]\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[0, 2])\n"
    "def outs(n):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n, 3), \"int8\"), B: T.Tensor((4,), \"bfloat16\"), C: T.Tensor((2, n), \"float64\")):\n"
    "        with T.Kernel(2, n, threads=32) as (bx, by):\n"
    "            A[by, bx] = B[bx]\n"
    "            C[bx, by] = B[bx]\n"
    "    return main\n"
    "\n"
    /* scalar parameters */
    "@tilelang.jit(out_idx=[-1])\n"
    "def scal(N):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((N,), \"float32\"), alpha: T.float32, k: T.int32, Y: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=1) as bx:\n"
    "            for i in T.serial(N):\n"
    "                Y[i] = X[i] * alpha + k\n"
    "    return main\n";

/* ---- contexts and helpers --------------------------------------------------------------------- */

static void test_context(void) {
    CHECK_EQ_INT(TS_ERR_INVALID, ts_context_create(NULL));
    TsContext *c = NULL;
    CHECK_EQ_INT(TS_OK, ts_context_create(&c));
    CHECK(c != NULL);
    CHECK_EQ_STR("", ts_last_error(c));
    ts_context_destroy(c);
    ts_context_destroy(NULL);
    CHECK_EQ_STR("", ts_last_error(NULL));
    for (int s = TS_OK; s <= TS_ERR_INTERNAL; s++) CHECK(ts_status_name((TsStatus)s) && *ts_status_name((TsStatus)s));
    CHECK(ts_status_name((TsStatus)999) != NULL);
    /* dtype helpers */
    static const struct { TsDType dt; const char *name; int bits; } dts[] = {
        {TS_FLOAT32, "float32", 32}, {TS_FLOAT16, "float16", 16}, {TS_BFLOAT16, "bfloat16", 16},
        {TS_INT8, "int8", 8},        {TS_INT32, "int32", 32},     {TS_FLOAT64, "float64", 64},
    };
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_STR(dts[i].name, ts_dtype_name(dts[i].dt));
        CHECK_EQ_INT(dts[i].dt, ts_dtype_from_name(dts[i].name));
        CHECK_EQ_INT(dts[i].bits, ts_dtype_bits(dts[i].dt));
    }
    CHECK_EQ_INT(TS_DTYPE_NONE, ts_dtype_from_name("float33"));
    CHECK_EQ_INT(TS_FLOAT32, ts_dtype_from_dlpack(2, 32, 1));
    CHECK_EQ_INT(TS_BFLOAT16, ts_dtype_from_dlpack(4, 16, 1));
    CHECK_EQ_INT(TS_INT8, ts_dtype_from_dlpack(0, 8, 1));
    CHECK_EQ_INT(TS_UINT8, ts_dtype_from_dlpack(1, 8, 1));
    CHECK_EQ_INT(TS_DTYPE_NONE, ts_dtype_from_dlpack(2, 32, 4));
    /* tensor helpers */
    TsTensor t = kt_tensor(TS_FLOAT16, 2, 3, 5);
    CHECK_EQ_INT(15, ts_tensor_numel(&t));
    ts_tensor_set(&t, 7, 1.0 / 3.0);
    CHECK(ts_tensor_get(&t, 7) == kt_round(TS_FLOAT16, 1.0 / 3.0) && ts_tensor_get(&t, 7) != 1.0 / 3.0);
    ts_tensor_free(&t);
    ts_tensor_free(NULL);
    int64_t neg = -3;
    CHECK(ts_tensor_alloc(&t, TS_FLOAT32, 1, &neg) != TS_OK);
}

/* ---- compile errors --------------------------------------------------------------------------- */

/* Compiles `src` (no prelude added) and checks the status and that the
 * message contains `where` (file:line:col) and `what`. */
static void expect_error(const char *src, const char *entry, const TsDefine *d, int nd, TsStatus want,
                         const char *where, const char *what) {
    TsKernel *k = (TsKernel *)1;
    TsStatus st = ts_compile_source(kt_ctx, "bad.py", src, entry, d, nd, &kt_opt, &k);
    CHECK_EQ_INT(want, st);
    CHECK(k == NULL);
    const char *e = ts_last_error(kt_ctx);
    if (where) CHECK_CONTAINS(e, where);
    if (what) CHECK_CONTAINS(e, what);
    if (st == TS_OK) ts_kernel_destroy(k);
}

static void test_compile_errors(void) {
    TsDefine n4[] = {{"n", "4"}};
    /* line 6, col 31: the end of the `for` line (columns count from 1) */
    expect_error(KT_PRELUDE "@tilelang.jit(out_idx=[-1])\n"
                            "def kern(n):\n"
                            "    @T.prim_func\n"
                            "    def main(A: T.Tensor((n,), \"float32\")):\n"
                            "        with T.Kernel(1) as bx:\n"
                            "            for i in T.Parallel(n)\n"
                            "                A[i] = 0.0\n"
                            "    return main\n",
                 "kern", n4, 1, TS_ERR_SYNTAX, "bad.py:8:35: error:", "expected ':'");
    const char *body_hdr = KT_PRELUDE "def kern(n):\n"
                                      "    @T.prim_func\n"
                                      "    def main(A: T.Tensor((n,), \"float32\")):\n"
                                      "        with T.Kernel(1) as bx:\n";
    char src[2048];
    snprintf(src, sizeof src, "%s            A[0] = undefined_thing + 1.0\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_NAME, "bad.py:7:20: error:", "undefined_thing");
    snprintf(src, sizeof src, "%s            T.fancy_new_op(A)\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_NAME, "bad.py:7:15: error:", "T.fancy_new_op");
    snprintf(src, sizeof src, "%s            S = T.alloc_shared((4, 4), \"float32\")\n            T.copy(A[0:3], S)\n    return main\n",
             body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_SHAPE, "bad.py:8:", "T.copy");
    snprintf(src, sizeof src, "%s            T.gemm(A, A, A)\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_TYPE, "bad.py:7:15: error:", "T.gemm accumulator");
    snprintf(src, sizeof src, "%s            F = T.alloc_fragment((4, 4), \"float32\")\n            T.gemm(F, F, F, transpose_A=True)\n            T.gemm(F, F[0:4, 0:3], F)\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_SHAPE, "bad.py:9:15: error:", "T.gemm");
    /* a run-time break inside a loop unrolled at compile time was silently
     * dropped together with the loop */
    snprintf(src, sizeof src, "%s            while True:\n                if A[0] > 0.5:\n                    break\n                A[0] = A[0] + 1.0\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_UNSUPPORTED, "bad.py:8:17: error:", "`break` under a run-time condition");
    snprintf(src, sizeof src, "%s            for c in (1, 2, 3):\n                if A[c] > 0.5:\n                    continue\n                A[c] = 0.0\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_UNSUPPORTED, "bad.py:8:17: error:", "`continue` under a run-time condition");
    snprintf(src, sizeof src, "%s            v = T.alloc_var(\"float32\")\n            T.copy(v, A)\n    return main\n", body_hdr);
    expect_error(src, "kern", n4, 1, TS_ERR_TYPE, "bad.py:8:15: error:", "alloc_var");
    snprintf(src, sizeof src, "%s            A[0] = 1.0\n    return main\n", body_hdr);
    expect_error(src, "kern", NULL, 0, TS_ERR_PARAM, "n", NULL);                              /* missing -D */
    TsDefine extra[] = {{"n", "4"}, {"bogus", "1"}};
    expect_error(src, "kern", extra, 2, TS_ERR_PARAM, "bogus", NULL);                       /* unknown -D */
    expect_error(src, "nokern", n4, 1, TS_ERR_NAME, "nokern", NULL);                        /* no such entry */
    /* lenient defines ignore the unknown one */
    TsCompileOptions o = kt_opt;
    o.lenient_defines = 1;
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(kt_ctx, "ok.py", src, "kern", extra, 2, &o, &k));
    ts_kernel_destroy(k);
    /* NULL arguments */
    k = NULL;
    CHECK_EQ_INT(TS_ERR_INVALID, ts_compile_source(NULL, "x.py", src, "kern", n4, 1, &kt_opt, &k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_compile_source(kt_ctx, "x.py", NULL, "kern", n4, 1, &kt_opt, &k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_compile_source(kt_ctx, "x.py", src, NULL, n4, 1, &kt_opt, &k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_compile_source(kt_ctx, "x.py", src, "kern", NULL, 1, &kt_opt, &k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_compile_source(kt_ctx, "x.py", src, "kern", n4, 1, &kt_opt, NULL));
    CHECK_EQ_INT(TS_ERR_IO, ts_compile_file(kt_ctx, "/nonexistent/dir/k.py", "kern", n4, 1, &kt_opt, &k));
    CHECK_CONTAINS(ts_last_error(kt_ctx), "/nonexistent/dir/k.py");
    /* the CUDA target is refused with a message, not a crash */
    o = kt_opt;
    o.target = TS_TARGET_CUDA;
    TsStatus st = ts_compile_source(kt_ctx, "x.py", src, "kern", n4, 1, &o, &k);
    CHECK(st != TS_OK || k != NULL);
    if (st == TS_OK) ts_kernel_destroy(k);
    /* a C compiler that does not exist: TS_ERR_BUILD (source made unique so
     * no cached build can answer) */
    char uniq[2400];
    snprintf(uniq, sizeof uniq, "%s            A[0] = %lu.0\n    return main\n", body_hdr, kt_seed);
    o = kt_opt;
    o.cc = "/nonexistent/bin/cc";
    k = NULL;
    CHECK_EQ_INT(TS_ERR_BUILD, ts_compile_source(kt_ctx, "x.py", uniq, "kern", n4, 1, &o, &k));
    CHECK(k == NULL);
    /* skip_build: source but no launch */
    o = kt_opt;
    o.skip_build = 1;
    CHECK_EQ_INT(TS_OK, ts_compile_source(kt_ctx, "x.py", src, "kern", n4, 1, &o, &k));
    if (k) {
        CHECK(strlen(ts_kernel_source(k)) > 0);
        float f[4];
        int64_t sh[1] = {4};
        TsTensor t = {f, TS_FLOAT32, 1, sh, NULL};
        CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch(k, &t, 1));
        ts_kernel_destroy(k);
    }
}

/* ---- kernel queries ------------------------------------------------------------------------------ */

static void test_queries(void) {
    TsCompileOptions o = kt_opt;
    o.timing = 1;
    o.dump_after = "simplify";
    char *src = malloc(strlen(KT_PRELUDE) + strlen(SRC_AXPY) + 1);
    strcpy(src, KT_PRELUDE);
    strcat(src, SRC_AXPY);
    TsDefine d[] = {{"M", "50"}, {"N", "24"}};
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(kt_ctx, "axpy.py", src, "axpy", d, 2, &o, &k));
    free(src);
    if (!k) return;
    CHECK_EQ_STR("main", ts_kernel_name(k));
    CHECK_EQ_INT(3, ts_kernel_num_params(k));
    static const char *names[] = {"X", "Y", "Z"};
    static const int64_t shapes[3][2] = {{50, 24}, {24, 50}, {50, 24}};
    for (int i = 0; i < 3; i++) {
        TsParamInfo p;
        CHECK_EQ_INT(TS_OK, ts_kernel_param(k, i, &p));
        CHECK_EQ_STR(names[i], p.name);
        CHECK_EQ_INT(1, p.is_tensor);
        CHECK_EQ_INT(i == 2, p.is_output);
        CHECK_EQ_INT(TS_FLOAT32, p.dtype);
        CHECK_EQ_INT(2, p.ndim);
        CHECK_EQ_INT(shapes[i][0], p.shape[0]);
        CHECK_EQ_INT(shapes[i][1], p.shape[1]);
        CHECK(p.shape_names[0] == NULL);
    }
    TsParamInfo p;
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_param(k, 3, &p));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_param(k, -1, &p));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_param(k, 0, NULL));
    int64_t g[3];
    int th;
    ts_kernel_grid(k, g, &th);
    CHECK_EQ_INT(4, g[0]);
    CHECK_EQ_INT(1, g[1]);
    CHECK_EQ_INT(1, g[2]);
    CHECK_EQ_INT(96, th);
    CHECK(strlen(ts_kernel_source(k)) > 100);
    CHECK(strlen(ts_kernel_ir(k)) > 0);
    CHECK_CONTAINS(ts_kernel_timing(k), "parse");
    CHECK_CONTAINS(ts_kernel_timing(k), "codegen");
    ts_kernel_destroy(k);
    ts_kernel_destroy(NULL);
    CHECK_EQ_INT(0, ts_kernel_num_params(NULL));
    CHECK_EQ_STR("", ts_kernel_source(NULL));

    /* out_idx=[0, 2]; mixed dtypes; a 2-D grid */
    k = kt_compile(SRC_AXPY, "outs", "n=5");
    if (k) {
        static const TsDType dts[] = {TS_INT8, TS_BFLOAT16, TS_FLOAT64};
        for (int i = 0; i < 3; i++) {
            CHECK_EQ_INT(TS_OK, ts_kernel_param(k, i, &p));
            CHECK_EQ_INT(i != 1, p.is_output);
            CHECK_EQ_INT(dts[i], p.dtype);
        }
        ts_kernel_grid(k, g, &th);
        CHECK_EQ_INT(2, g[0]);
        CHECK_EQ_INT(5, g[1]);
        CHECK_EQ_INT(32, th);
        TsTensor a = kt_tensor(TS_INT8, 2, 5, 3), b = kt_tensor(TS_BFLOAT16, 1, 4), c = kt_tensor(TS_FLOAT64, 2, 2, 5);
        kt_fill(&b, -100, 100);
        kt_poison(&a);
        kt_poison(&c);
        double *wa = kt_values(&a), *wc = kt_zeros(10);
        TsTensor args[3] = {a, b, c};
        if (kt_launch(k, args, 3)) {
            for (int y = 0; y < 5; y++)
                for (int x = 0; x < 2; x++) {
                    wa[y * 3 + x] = trunc(ts_tensor_get(&b, x));
                    wc[x * 5 + y] = ts_tensor_get(&b, x);
                }
            KT_COMPARE("bfloat16 -> int8 (third column untouched)", &a, wa, 0, 0);
            KT_COMPARE("bfloat16 -> float64", &c, wc, 0, 0);
        }
        free(wa);
        free(wc);
        ts_tensor_free(&a);
        ts_tensor_free(&b);
        ts_tensor_free(&c);
        ts_kernel_destroy(k);
    }
}

/* ---- launches ---------------------------------------------------------------------------------- */

static void test_launch(void) {
    int64_t M = 50, N = 24;
    TsKernel *k = kt_compile(SRC_AXPY, "axpy", "M=50 N=24");
    if (!k) return;
    TsTensor x = kt_tensor(TS_FLOAT32, 2, M, N), y = kt_tensor(TS_FLOAT32, 2, N, M), z = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_fill(&x, -1, 1);
    kt_fill(&y, -1, 1);
    kt_poison(&z);
    double *w = kt_zeros(M * N);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) w[i * N + j] = kt_round(TS_FLOAT32, ts_tensor_get(&x, i * N + j) * 2 + ts_tensor_get(&y, j * M + i));

    TsTensor args[3] = {x, y, z};
    CHECK_EQ_INT(TS_ERR_ARGCOUNT, ts_kernel_launch(k, args, 2));
    CHECK_CONTAINS(ts_last_error(kt_ctx), "expects 3 arguments, got 2");
    TsTensor four[4] = {x, y, z, z};
    CHECK_EQ_INT(TS_ERR_ARGCOUNT, ts_kernel_launch(k, four, 4));
    CHECK_EQ_INT(TS_ERR_ARGCOUNT, ts_kernel_launch(k, args, 0));
    TsTensor bad = kt_tensor(TS_FLOAT16, 2, N, M);
    args[1] = bad;
    CHECK_EQ_INT(TS_ERR_DTYPE, ts_kernel_launch(k, args, 3));
    CHECK_CONTAINS(ts_last_error(kt_ctx), "Y has dtype float16, expected float32");
    ts_tensor_free(&bad);
    bad = kt_tensor(TS_FLOAT32, 2, N, M + 1);
    args[1] = bad;
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_kernel_launch(k, args, 3));
    CHECK_CONTAINS(ts_last_error(kt_ctx), "Y.shape[1] is 51, expected 50");
    ts_tensor_free(&bad);
    bad = kt_tensor(TS_FLOAT32, 1, N * M);
    args[1] = bad;
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_kernel_launch(k, args, 3));
    ts_tensor_free(&bad);
    args[1] = y;
    args[1].data = NULL;
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch(k, args, 3));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch(NULL, args, 3));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch(k, NULL, 3));
    /* none of the refused launches wrote anything */
    int untouched = 1;
    for (int64_t i = 0; i < M * N; i++) untouched &= isnan(ts_tensor_get(&z, i));
    CHECK(untouched);
    /* and a good launch still works */
    args[1] = y;
    if (kt_launch(k, args, 3)) KT_COMPARE("axpy after refused launches", &z, w, 0, 0);

    /* Strided inputs: X as a transposed view of an (N, M) storage, Y as a
     * view with a row stride of 2 * M + 3 and a column stride of 2 into a
     * bigger storage; Z written through a transposed view too. */
    TsTensor xs = kt_tensor(TS_FLOAT32, 2, N, M), ys = kt_tensor(TS_FLOAT32, 2, N, 2 * M + 3);
    TsTensor zs = kt_tensor(TS_FLOAT32, 2, N, M);
    kt_fill(&ys, 1e6, 2e6); /* garbage between the viewed elements */
    int64_t xshape[2] = {M, N}, xstr[2] = {1, M};
    int64_t yshape[2] = {N, M}, ystr[2] = {2 * M + 3, 2};
    TsTensor xv = {xs.data, TS_FLOAT32, 2, xshape, xstr};
    TsTensor yv = {ys.data, TS_FLOAT32, 2, yshape, ystr};
    TsTensor zv = {zs.data, TS_FLOAT32, 2, xshape, xstr};
    for (int64_t i = 0; i < M * N; i++) {
        ts_tensor_set(&xv, i, ts_tensor_get(&x, i));
        ts_tensor_set(&yv, i, ts_tensor_get(&y, i));
    }
    kt_poison(&zs);
    TsTensor sargs[3] = {xv, yv, zv};
    if (kt_launch(k, sargs, 3)) {
        KT_COMPARE("strided inputs (transposed, step 2) and a transposed output", &zv, w, 0, 0);
        double *wz = kt_zeros(M * N); /* the storage of Z: Z transposed */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) wz[j * M + i] = w[i * N + j];
        KT_COMPARE("transposed output storage", &zs, wz, 0, 0);
        free(wz);
    }
    /* negative strides (X flipped upside down) and a zero stride (Y
     * broadcast: every row of Y is the same storage row) */
    {
        TsTensor xst = kt_tensor(TS_FLOAT32, 2, M, N), yst = kt_tensor(TS_FLOAT32, 1, M), zz = kt_tensor(TS_FLOAT32, 2, M, N);
        kt_fill(&xst, -1, 1);
        kt_fill(&yst, -1, 1);
        kt_poison(&zz);
        int64_t fshape[2] = {M, N}, fstr[2] = {-N, 1}, bshape[2] = {N, M}, bstr[2] = {0, 1};
        TsTensor xf = {(float *)xst.data + (M - 1) * N, TS_FLOAT32, 2, fshape, fstr};
        TsTensor yb = {yst.data, TS_FLOAT32, 2, bshape, bstr};
        TsTensor fargs[3] = {xf, yb, zz};
        if (kt_launch(k, fargs, 3)) {
            double *wf = kt_zeros(M * N);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++)
                    wf[i * N + j] = kt_round(TS_FLOAT32, ts_tensor_get(&xst, (M - 1 - i) * N + j) * 2 + ts_tensor_get(&yst, i));
            KT_COMPARE("negative strides (flipped X) and a zero stride (broadcast Y)", &zz, wf, 0, 0);
            free(wf);
        }
        ts_tensor_free(&xst);
        ts_tensor_free(&yst);
        ts_tensor_free(&zz);
    }
    ts_tensor_free(&xs);
    ts_tensor_free(&ys);
    ts_tensor_free(&zs);
    free(w);
    ts_tensor_free(&x);
    ts_tensor_free(&y);
    ts_tensor_free(&z);
    ts_kernel_destroy(k);

    /* scalar parameters: 0-d tensors */
    k = kt_compile(SRC_AXPY, "scal", "N=33");
    if (k) {
        TsParamInfo p;
        CHECK_EQ_INT(4, ts_kernel_num_params(k));
        CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 1, &p));
        CHECK_EQ_STR("alpha", p.name);
        CHECK_EQ_INT(0, p.is_tensor);
        CHECK_EQ_INT(TS_FLOAT32, p.dtype);
        CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 2, &p));
        CHECK_EQ_INT(TS_INT32, p.dtype);
        TsTensor xx = kt_tensor(TS_FLOAT32, 1, 33), yy = kt_tensor(TS_FLOAT32, 1, 33);
        kt_fill(&xx, -1, 1);
        kt_poison(&yy);
        float alpha = (float)kt_uniform(-3, 3);
        int32_t kk = (int32_t)kt_randint(-50, 50);
        TsTensor sa[4] = {xx, {&alpha, TS_FLOAT32, 0, NULL, NULL}, {&kk, TS_INT32, 0, NULL, NULL}, yy};
        if (kt_launch(k, sa, 4)) {
            double *wy = kt_zeros(33);
            for (int i = 0; i < 33; i++) wy[i] = kt_round(TS_FLOAT32, kt_round(TS_FLOAT32, ts_tensor_get(&xx, i) * alpha) + kk);
            KT_COMPARE("scalar parameters alpha: float32, k: int32", &yy, wy, 0, 1e-7);
            free(wy);
        }
        float half_alpha[1] = {1};
        TsTensor wrong = {half_alpha, TS_FLOAT16, 0, NULL, NULL};
        sa[1] = wrong;
        CHECK_EQ_INT(TS_ERR_DTYPE, ts_kernel_launch(k, sa, 4));
        ts_tensor_free(&xx);
        ts_tensor_free(&yy);
        ts_kernel_destroy(k);
    }
}

/* ---- .npy -------------------------------------------------------------------------------------- */

static void test_npy(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/ts-test-api-%ld.npy", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    static const TsDType dts[] = {TS_FLOAT32, TS_FLOAT16, TS_INT8, TS_INT32, TS_FLOAT64, TS_UINT8, TS_INT64};
    for (int i = 0; i < 7; i++) {
        TsTensor t = i % 2 ? kt_tensor(dts[i], 3, 2, 3, 7) : kt_tensor(dts[i], 2, 11, 4);
        kt_fill(&t, kt_is_float(dts[i]) ? -100 : 0, 100);
        CHECK_EQ_INT(TS_OK, ts_npy_save(kt_ctx, path, &t));
        TsTensor u;
        CHECK_EQ_INT(TS_OK, ts_npy_load(kt_ctx, path, &u));
        CHECK_EQ_INT(dts[i], u.dtype);
        CHECK_EQ_INT(t.ndim, u.ndim);
        for (int d = 0; d < t.ndim && d < u.ndim; d++) CHECK_EQ_INT(t.shape[d], u.shape[d]);
        if (u.dtype == t.dtype && ts_tensor_numel(&u) == ts_tensor_numel(&t)) {
            double *w = kt_values(&t);
            char what[100];
            snprintf(what, sizeof what, ".npy round trip %s", ts_dtype_name(dts[i]));
            KT_COMPARE(what, &u, w, 0, 0);
            free(w);
        }
        ts_tensor_free(&t);
        ts_tensor_free(&u);
    }
    /* a strided (transposed) tensor is saved in its logical order */
    TsTensor s = kt_tensor(TS_FLOAT32, 2, 5, 3);
    kt_fill(&s, -1, 1);
    int64_t shape[2] = {3, 5}, str[2] = {1, 3};
    TsTensor v = {s.data, TS_FLOAT32, 2, shape, str};
    CHECK_EQ_INT(TS_OK, ts_npy_save(kt_ctx, path, &v));
    TsTensor u;
    if (ts_npy_load(kt_ctx, path, &u) == TS_OK) {
        CHECK_EQ_INT(3, u.shape[0]);
        double *w = kt_values(&v);
        KT_COMPARE(".npy of a transposed view", &u, w, 0, 0);
        free(w);
        ts_tensor_free(&u);
    } else {
        CHECK(0);
    }
    ts_tensor_free(&s);
    /* errors */
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs("\x93NUMPY garbage", f);
        fclose(f);
    }
    CHECK_EQ_INT(TS_ERR_IO, ts_npy_load(kt_ctx, path, &u));
    CHECK_CONTAINS(ts_last_error(kt_ctx), path);
    unlink(path);
    CHECK_EQ_INT(TS_ERR_IO, ts_npy_load(kt_ctx, path, &u));
    CHECK_EQ_INT(TS_ERR_IO, ts_npy_save(kt_ctx, "/nonexistent/dir/x.npy", &v));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_npy_load(kt_ctx, NULL, &u));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_npy_save(kt_ctx, path, NULL));
}

/* ---- robustness ---------------------------------------------------------------------------------- */

/* Hostile sources: each must come back with a status (any), never crash or
 * hang; afterwards the context still compiles and runs a correct kernel. */
static void test_robustness(void) {
    static const char *garbage[] = {
        "",
        "\n\n\n",
        "def",
        "def kern(:\n",
        "@tilelang.jit(out_idx=[-1])\ndef kern(n):\n    return main\n",
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(n) as bx:\n            A[bx] = \"str\"\n    return main\n",
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(n) as bx:\n            A[bx, 1, 2] = 1.0\n    return main\n",
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(1) as bx:\n            S = T.alloc_shared((-4,), \"float32\")\n    return main\n",
        "def kern(n):\n    while True:\n        n = n + 1\n    return n\n",
        "def kern(n):\n    return kern(n)\n",
        "def kern(n):\n    x = \"unterminated\n",
        "def kern(n):\n\treturn (((((((((((((((((((((((((((((((((((((((((((((((((((n)))))))))))))))))))))))))))))))))))))))))))))))))))\n",
        "\xff\xfe\x00garbage\x01\x02",
        /* kernel targets that are not names (a starred name once crashed the elaborator) */
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(1) as* bx:\n            A[0] = 1.0\n    return main\n",
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(1) as A[0]:\n            A[0] = 1.0\n    return main\n",
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(1, 2) as (bx, A.x):\n            A[0] = 1.0\n    return main\n",
        "def kern(n):\n    @T.prim_func\n    def main(A: T.Tensor((n,), \"float32\")):\n        with T.Kernel(1) as bx:\n            T.copy(A, A, A, A)\n            T.reduce_sum(A, A, dim=7)\n    return main\n",
    };
    TsDefine n4[] = {{"n", "4"}};
    for (int i = 0; i < (int)(sizeof garbage / sizeof garbage[0]); i++) {
        char *src = malloc(strlen(KT_PRELUDE) + strlen(garbage[i]) + 1);
        strcpy(src, KT_PRELUDE);
        strcat(src, garbage[i]);
        TsKernel *k = NULL;
        TsStatus st = ts_compile_source(kt_ctx, "g.py", src, "kern", n4, 1, &kt_opt, &k);
        CHECK(st != TS_OK && k == NULL && strlen(ts_last_error(kt_ctx)) > 0);
        if (st == TS_OK) fprintf(stderr, "garbage source %d compiled\n", i);
        ts_kernel_destroy(k);
        free(src);
    }
    /* deep nesting: a diagnostic or success, no stack overflow */
    {
        size_t depth = 100000;
        char *src = malloc(depth * 2 + 200);
        char *p = src + sprintf(src, "def kern(n):\n    return ");
        for (size_t i = 0; i < depth; i++) *p++ = '(';
        *p++ = 'n';
        for (size_t i = 0; i < depth; i++) *p++ = ')';
        strcpy(p, "\n");
        TsKernel *k = NULL;
        TsStatus st = ts_compile_source(kt_ctx, "deep.py", src, "kern", n4, 1, &kt_opt, &k);
        CHECK(st != TS_OK);
        ts_kernel_destroy(k);
        free(src);
    }
    /* random mutations of a good kernel (code generation only) */
    {
        size_t n = strlen(KT_PRELUDE) + strlen(SRC_AXPY);
        char *good = malloc(n + 1), *src = malloc(n + 64);
        strcpy(good, KT_PRELUDE);
        strcat(good, SRC_AXPY);
        TsCompileOptions o = kt_opt;
        o.skip_build = 1;
        TsDefine d[] = {{"M", "50"}, {"N", "24"}};
        static const char alphabet[] = "()[]:,.=+-*/ \n\tabT0123456789\"'#@";
        int ok = 0;
        for (int it = 0; it < 300; it++) {
            memcpy(src, good, n + 1);
            size_t len = n;
            int edits = (int)kt_randint(1, 4);
            for (int e = 0; e < edits; e++) {
                size_t at = (size_t)kt_randint(0, (int64_t)len - 1);
                int kind = (int)kt_randint(0, 2);
                if (kind == 0) { /* delete */
                    memmove(src + at, src + at + 1, len - at);
                    len--;
                } else if (kind == 1) { /* replace */
                    src[at] = alphabet[kt_randint(0, (int64_t)sizeof alphabet - 2)];
                } else { /* insert */
                    memmove(src + at + 1, src + at, len - at + 1);
                    src[at] = alphabet[kt_randint(0, (int64_t)sizeof alphabet - 2)];
                    len++;
                }
            }
            if (getenv("TS_TEST_VERBOSE")) { /* so a crash leaves the culprit behind */
                fprintf(stderr, "--- mutation %d:\n%s\n", it, src);
                fflush(stderr);
            }
            TsKernel *k = NULL;
            TsStatus st = ts_compile_source(kt_ctx, "m.py", src, "axpy", d, 2, &o, &k);
            ok += st == TS_OK;
            if (st != TS_OK && !*ts_last_error(kt_ctx)) {
                fprintf(stderr, "mutation %d failed (%s) without a message\n", it, ts_status_name(st));
                test_failed++;
            }
            if (st == TS_ERR_INTERNAL) { /* a library bug, not a user error */
                fprintf(stderr, "mutation %d: internal error:\n%s\n--- source:\n%s\n", it, ts_last_error(kt_ctx), src);
                test_failed++;
            }
            ts_kernel_destroy(k);
        }
        printf("test_api: %d of 300 mutated sources still compiled\n", ok);
        test_passed++;
        free(good);
        free(src);
    }
    /* empty and negative grids: nothing runs, nothing crashes */
    for (int g = 0; g < 2; g++) {
        static const char *grid_src =
            "@tilelang.jit(out_idx=[])\n"
            "def kern(n, g):\n"
            "    @T.prim_func\n"
            "    def main(A: T.Tensor((n,), \"float32\")):\n"
            "        with T.Kernel(g, threads=1) as bx:\n"
            "            A[bx] = 1.0\n"
            "    return main\n";
        char defs[40];
        snprintf(defs, sizeof defs, "n=4 g=%d", g ? -1 : 0);
        char *src = malloc(strlen(KT_PRELUDE) + strlen(grid_src) + 1);
        strcpy(src, KT_PRELUDE);
        strcat(src, grid_src);
        TsDefine gd[2] = {{"n", "4"}, {"g", g ? "-1" : "0"}};
        TsKernel *k = NULL;
        TsStatus st = ts_compile_source(kt_ctx, "grid.py", src, "kern", gd, 2, &kt_opt, &k);
        free(src);
        if (st == TS_OK) {
            TsTensor a = kt_tensor(TS_FLOAT32, 1, 4);
            kt_poison(&a);
            double w[4] = {KT_UNTOUCHED, KT_UNTOUCHED, KT_UNTOUCHED, KT_UNTOUCHED};
            st = ts_kernel_launch(k, &a, 1);
            if (st == TS_OK) KT_COMPARE(g ? "grid of -1 blocks runs nothing" : "grid of 0 blocks runs nothing", &a, w, 0, 0);
            else CHECK(strlen(ts_last_error(kt_ctx)) > 0);
            ts_tensor_free(&a);
        } else {
            CHECK(strlen(ts_last_error(kt_ctx)) > 0);
        }
        printf("test_api: grid %s: %s\n", defs, ts_status_name(st));
        ts_kernel_destroy(k);
    }
    /* the context still works */
    int64_t M = 20, N = 7;
    TsKernel *k = kt_compile(SRC_AXPY, "axpy", "M=20 N=7 bm=8");
    TsTensor x = kt_tensor(TS_FLOAT32, 2, M, N), y = kt_tensor(TS_FLOAT32, 2, N, M), z = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_fill(&x, -1, 1);
    kt_fill(&y, -1, 1);
    kt_poison(&z);
    TsTensor args[3] = {x, y, z};
    if (kt_launch(k, args, 3)) {
        double *w = kt_zeros(M * N);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) w[i * N + j] = kt_round(TS_FLOAT32, ts_tensor_get(&x, i * N + j) * 2 + ts_tensor_get(&y, j * M + i));
        KT_COMPARE("compile and run after errors", &z, w, 0, 0);
        free(w);
    }
    ts_tensor_free(&x);
    ts_tensor_free(&y);
    ts_tensor_free(&z);
    ts_kernel_destroy(k);
}

/* ---- warnings ------------------------------------------------------------------------------------ */

/* Two gemms fixing different layouts for one accumulator (issue 5 A's
 * conflict fallback): the kernel compiles (fragments in shared memory) and
 * ts_last_warnings says why, at the second gemm, naming the fragment, both
 * layouts and both gemms by position, with the source line and a caret;
 * the next compile starts without warnings, and a compile that fails keeps
 * the warnings made before the error. */
static const char *SRC_TWOACC = KT_PRELUDE
    "@tilelang.jit\n"
    "def twoacc(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Cl = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, Cl, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.gemm(As, Bs, Cl, policy=T.GemmWarpPolicy.FullCol)\n"
    "            T.copy(Cl, C[0, 0])\n"
    "    return main\n";

static void test_warnings(void) {
    TsDefine d[3] = {{"M", "64"}, {"N", "64"}, {"K", "32"}};
    TsCompileOptions o = kt_opt;
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    TsKernel *k = NULL;
    CHECK_EQ_STR("", ts_last_warnings(NULL));
    CHECK_EQ_INT(TS_OK, ts_compile_source(kt_ctx, "two.py", SRC_TWOACC, "twoacc", d, 3, &o, &k));
    const char *w = ts_last_warnings(kt_ctx);
    /* the second gemm (line 15, at `gemm`) is where, the first (line 14) is named */
    const char *want = "two.py:15:15: warning: fragment Cl needs two layouts: mma_c(64 x 64, warps 4 x 1) for the "
                       "accumulator of T.gemm (at two.py:14:15) and mma_c(64 x 64, warps 1 x 4) for the accumulator "
                       "of T.gemm (at two.py:15:15); the kernel's fragments stay in shared memory";
    CHECK(!strncmp(w, want, strlen(want)));
    CHECK_CONTAINS(w, "\n                T.gemm(As, Bs, Cl, policy=T.GemmWarpPolicy.FullCol)\n                  ^\n");
    CHECK_EQ_STR("", ts_last_error(kt_ctx));
    if (k) CHECK(strstr(ts_kernel_ir(k), "fragments stay in shared memory") != NULL);
    ts_kernel_destroy(k);
    /* warnings last until the next compile, not through other calls */
    TsTensor t = {0};
    ts_npy_load(kt_ctx, "/nonexistent/x.npy", &t);
    CHECK_CONTAINS(ts_last_warnings(kt_ctx), "warning: fragment Cl needs two layouts");
    /* a compile without a conflict: no warnings */
    k = NULL;
    char axpy[2048];
    snprintf(axpy, sizeof axpy, "%s%s", KT_PRELUDE, SRC_AXPY);
    CHECK_EQ_INT(TS_OK, ts_compile_source(kt_ctx, "x.py", axpy, "axpy", d, 2, &o, &k));
    CHECK_EQ_STR("", ts_last_warnings(kt_ctx));
    ts_kernel_destroy(k);
    /* a failing compile: its error, and no stale warnings */
    k = NULL;
    CHECK(ts_compile_source(kt_ctx, "x.py", "def broken(:\n", "broken", NULL, 0, &o, &k) != TS_OK);
    CHECK_EQ_STR("", ts_last_warnings(kt_ctx));
    CHECK_CONTAINS(ts_last_error(kt_ctx), "error");
}

/* T.alloc_global workspaces through the C API: hidden from the parameter
 * count, described past it, allocated by ts_kernel_launch for the whole
 * chain (kernel 1 writes them, kernel 2 reads them), an argument count
 * with them is an error; the result against a loop here on random data. */
static void test_workspaces(void) {
    TsDefine d[3] = {{"M", "13"}, {"N", "70"}, {"S", "3"}};
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(kt_ctx, "tests/run/kernels/workspace.py", "split_sum", d, 3, &kt_opt, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (st) {
        printf("%s", ts_last_error(kt_ctx));
        return;
    }
    CHECK_EQ_INT(3, ts_kernel_num_params(k));
    CHECK_EQ_INT(2, ts_kernel_num_workspaces(k));
    TsParamInfo pi;
    CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 3, &pi));
    CHECK(pi.name && !strcmp(pi.name, "part") && pi.is_tensor && pi.dtype == TS_FLOAT32 && pi.ndim == 2 &&
          pi.shape[0] == 3 && pi.shape[1] == 13 && !pi.is_output);
    CHECK_EQ_INT(TS_OK, ts_kernel_param(k, 4, &pi));
    CHECK(pi.name && !strcmp(pi.name, "cnt") && pi.dtype == TS_INT32);
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_param(k, 5, &pi));
    TsTensor a[5];
    a[0] = kt_tensor(TS_FLOAT32, 2, (int64_t)13, (int64_t)70);
    a[1] = kt_tensor(TS_FLOAT32, 1, (int64_t)13);
    a[2] = kt_tensor(TS_INT32, 1, (int64_t)13);
    kt_fill(&a[0], -1, 1);
    for (int rep = 0; rep < 2; rep++) { /* twice: fresh workspaces each launch */
        kt_poison(&a[1]);
        kt_poison(&a[2]);
        if (!kt_launch(k, a, 3)) break;
        double *want = kt_zeros(13), *wc = kt_zeros(13);
        const float *x = a[0].data;
        for (int m = 0; m < 13; m++) {
            float tot = 0;
            for (int s = 0; s < 3; s++) {
                float acc = 0;
                for (int j = 0; j < 24; j++)
                    if (s * 24 + j < 70) acc += x[m * 70 + s * 24 + j];
                tot += acc;
            }
            want[m] = tot;
            wc[m] = 70;
        }
        KT_COMPARE("workspace split sum", &a[1], want, 0, 0);
        KT_COMPARE("workspace column counts", &a[2], wc, 0, 0);
        free(want);
        free(wc);
    }
    /* the workspaces are not the caller's to pass */
    a[3] = kt_tensor(TS_FLOAT32, 2, (int64_t)3, (int64_t)13);
    a[4] = kt_tensor(TS_INT32, 2, (int64_t)3, (int64_t)13);
    CHECK_EQ_INT(TS_ERR_ARGCOUNT, ts_kernel_launch(k, a, 5));
    CHECK(strstr(ts_last_error(kt_ctx), "main expects 3 arguments, got 5 (its 2 T.alloc_global workspaces are the launch's own)") != NULL);
    for (int i = 0; i < 5; i++) ts_tensor_free(&a[i]);
    ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_api");
    test_workspaces();
    test_context();
    test_compile_errors();
    test_queries();
    test_launch();
    test_npy();
    test_robustness();
    test_warnings();
    kt_finish();
    return test_done();
}
