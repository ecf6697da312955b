/*
 * test_elab.c — unit tests of the elaborator: Python-level evaluation in
 * kernel factories (with Python's meaning of /, //, %, **, comparisons,
 * and/or, sequences, helper functions), binding of -D values, and the
 * error codes of bad input.  Each case elaborates a tiny kernel whose body
 * stores one compile-time value, and checks the IR text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilescale.h"

static TsContext *ctx;

/* IR text of a kernel storing `expr` (computed in the factory) into an
 * int32 or float32 tensor, or NULL with the error printed. */
static char *ir_of(const char *prelude, const char *expr, const char *dtype) {
    static char src[8192];
    snprintf(src, sizeof src,
             "import math\n"
             "import tilelang\n"
             "import tilelang.language as T\n"
             "%s\n"
             "def k(a=3, b=4.5, name='x'):\n"
             "    v = %s\n"
             "    @T.prim_func\n"
             "    def main(A: T.Tensor((1,), \"%s\")):\n"
             "        with T.Kernel(1) as bx:\n"
             "            A[0] = v\n"
             "    return main\n",
             prelude, expr, dtype);
    TsCompileOptions o = {0};
    o.skip_build = 1;
    TsKernel *k;
    if (ts_compile_source(ctx, "t.py", src, "k", NULL, 0, &o, &k)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return NULL;
    }
    char *ir = strdup(ts_kernel_ir(k));
    ts_kernel_destroy(k);
    return ir;
}

static void expect(const char *prelude, const char *expr, const char *dtype, const char *want) {
    char *ir = ir_of(prelude, expr, dtype);
    char line[256];
    snprintf(line, sizeof line, "A[0] = %s\n", want);
    CHECK_CONTAINS(ir, line);
    if (ir && !strstr(ir, line)) fprintf(stderr, "  (expression: %s)\n", expr);
    free(ir);
}
#define EXPECT_I(expr, want) expect("", expr, "int32", want)
#define EXPECT_F(expr, want) expect("", expr, "float32", want)

static TsStatus compile_status(const char *src, const TsDefine *defs, int nd) {
    TsCompileOptions o = {0};
    o.skip_build = 1;
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(ctx, "e.py", src, "k", defs, nd, &o, &k);
    ts_kernel_destroy(k);
    return st;
}

int main(void) {
    ts_context_create(&ctx);

    /* arithmetic with Python's meaning */
    EXPECT_I("7 // 2", "3");
    EXPECT_I("-7 // 2", "-4");
    EXPECT_I("-7 % 3", "2");
    EXPECT_I("7 % -3", "-2");
    EXPECT_F("7 / 2", "3.5");
    EXPECT_I("2 ** 10", "1024");
    EXPECT_F("2 ** -1", "0.5");
    EXPECT_I("1 << 4 | 3", "19");
    EXPECT_I("-a + a * 2", "3");
    EXPECT_F("(1.0 / 64) ** 0.5 * 2", "0.25");
    EXPECT_F("b * 2", "9.0");
    EXPECT_I("int(b)", "4");
    EXPECT_I("abs(-5) + max(1, 7, 3) + min([4, 2])", "14");
    EXPECT_I("math.ceil(2.1) + math.floor(2.9)", "5");
    EXPECT_F("math.sqrt(16.0)", "4.0");
    EXPECT_I("math.gcd(12, 18)", "6");
    /* comparisons, boolean operators, conditional expressions */
    EXPECT_I("1 if 1 < 2 < 3 else 0", "1");
    EXPECT_I("1 if 1 < 3 < 2 else 0", "0");
    EXPECT_I("0 or 5", "5");
    EXPECT_I("3 and 6", "6");
    EXPECT_I("1 if not (a == 3) else 2", "2");
    EXPECT_I("1 if name == 'x' and name != 'y' else 0", "1");
    EXPECT_I("1 if 3 in (1, 2, 3) else 0", "1");
    EXPECT_I("1 if 4 not in [1, 2, 3] else 0", "1");
    EXPECT_I("1 if None is None else 0", "1");
    /* sequences */
    EXPECT_I("(1, 2, 3)[-1]", "3");
    EXPECT_I("len([1, 2] + [3] * 3)", "5");
    EXPECT_I("sum((1, 2, 3)[1:])", "5");
    EXPECT_I("[5, 6, 7][::-1][0]", "7");
    EXPECT_I("{'a': 1, 'b': 2}['b']", "2");
    EXPECT_I("len(list(range(2, 11, 3)))", "3");
    /* T.* on constants */
    EXPECT_I("T.ceildiv(10, 4)", "3");
    EXPECT_I("T.max(3, 9)", "9");
    /* helper functions: defaults, keywords, *args, closures, loops */
    expect("def f(x, y=10, *rest):\n    s = x + y\n    for r in rest:\n        s += r\n    return s\n",
           "f(1) + f(1, 2, 3, 4) + f(y=1, x=1)", "int32", "23");
    expect("def outer(n):\n    def inner(m):\n        return n * m\n    return inner(3)\n",
           "outer(5)", "int32", "15");
    expect("def fib(n):\n    a, b = 0, 1\n    while n > 0:\n        a, b = b, a + b\n        n -= 1\n    return a\n",
           "fib(10)", "int32", "55");
    expect("def first_div(n):\n    for d in range(2, n):\n        if n % d == 0:\n            break\n    else:\n        d = n\n    return d\n",
           "first_div(35) * 100 + first_div(13)", "int32", "513");

    /* -D values bind factory parameters; missing or unknown ones are errors */
    const char *fac =
        "import tilelang.language as T\n"
        "def k(n, dtype='float32'):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((n,), dtype)):\n"
        "        with T.Kernel(1) as bx:\n"
        "            T.clear(A)\n"
        "    return main\n";
    TsDefine d1[] = {{"n", "8"}, {"dtype", "float16"}};
    CHECK_EQ_INT(TS_OK, compile_status(fac, d1, 2));
    CHECK_EQ_INT(TS_ERR_PARAM, compile_status(fac, NULL, 0));
    TsDefine d2[] = {{"n", "8"}, {"m", "3"}};
    CHECK_EQ_INT(TS_ERR_PARAM, compile_status(fac, d2, 2));
    TsDefine d3[] = {{"n", "8"}, {"dtype", "float17"}};
    CHECK_EQ_INT(TS_ERR_TYPE, compile_status(fac, d3, 2));
    CHECK_CONTAINS(ts_last_error(ctx), "unknown dtype 'float17'");
    TsDefine d4[] = {{"n", "8"}, {"n", "9"}};
    CHECK_EQ_INT(TS_ERR_PARAM, compile_status(fac, d4, 2));

    /* several run-time shape variables at once */
    {
        const char *src =
            "import tilelang.language as T\n"
            "def k():\n"
            "    M, N = T.dynamic('M, N')\n"
            "    @T.prim_func\n"
            "    def main(A: T.Tensor((M, N), 'float32')):\n"
            "        with T.Kernel(M) as bx:\n"
            "            for j in T.serial(N):\n"
            "                A[bx, j] = 1.0\n"
            "    return main\n";
        TsCompileOptions o = {0};
        o.skip_build = 1;
        TsKernel *kk = NULL;
        CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "d.py", src, "k", NULL, 0, &o, &kk));
        if (kk) CHECK_CONTAINS(ts_kernel_ir(kk), "A: global float32[M, N]");
        TsParamInfo pi;
        if (kk && ts_kernel_param(kk, 0, &pi) == TS_OK) {
            CHECK_EQ_STR("M", pi.shape_names[0]);
            CHECK_EQ_STR("N", pi.shape_names[1]);
        }
        ts_kernel_destroy(kk);
    }

    /* two T.Kernel blocks: a chain of two kernels with the same parameters */
    {
        const char *src =
            "import tilelang.language as T\n"
            "def k(n):\n"
            "    @T.prim_func\n"
            "    def main(A: T.Tensor((n,), 'float32'), B: T.Tensor((n,), 'float32')):\n"
            "        with T.Kernel(n) as bx:\n"
            "            A[bx] = A[bx] * 2.0\n"
            "        with T.Kernel(1) as bx:\n"
            "            for i in T.serial(n):\n"
            "                B[i] = A[n - 1 - i]\n"
            "    return main\n";
        TsDefine dn[] = {{"n", "16"}};
        TsKernel *kk = NULL;
        CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "c.py", src, "k", dn, 1, NULL, &kk));
        const TsKernel *second = ts_kernel_next(kk);
        CHECK(second != NULL);
        CHECK(ts_kernel_next(second) == NULL);
        if (second) CHECK_EQ_INT(2, ts_kernel_num_params(second));
        int64_t g[3];
        if (second) {
            ts_kernel_grid(second, g, NULL);
            CHECK_EQ_INT(1, g[0]);
        }
        if (kk) {
            /* run: the second kernel sees the first one's results */
            int64_t shape[1] = {16};
            TsTensor t[2];
            ts_tensor_alloc(&t[0], TS_FLOAT32, 1, shape);
            ts_tensor_alloc(&t[1], TS_FLOAT32, 1, shape);
            for (int i = 0; i < 16; i++) {
                ts_tensor_set(&t[0], i, i + 0.5);
                ts_tensor_set(&t[1], i, -1);
            }
            CHECK_EQ_INT(TS_OK, ts_kernel_launch(kk, t, 2));
            int bad = 0;
            for (int i = 0; i < 16; i++) bad += ts_tensor_get(&t[1], i) != 2 * (15 - i + 0.5);
            CHECK_EQ_INT(0, bad);
            ts_tensor_free(&t[0]);
            ts_tensor_free(&t[1]);
        }
        ts_kernel_destroy(kk);
    }

    /* error codes of bad source */
    CHECK_EQ_INT(TS_ERR_SYNTAX, compile_status("def k(:\n    pass\n", NULL, 0));
    CHECK_EQ_INT(TS_ERR_NAME, compile_status("import tilelang.language as T\ndef j():\n    pass\n", NULL, 0));
    CHECK_EQ_INT(TS_ERR_NAME,
                 compile_status("import tilelang.language as T\n"
                                "def k():\n"
                                "    @T.prim_func\n"
                                "    def main(A: T.Tensor((4,), 'float32')):\n"
                                "        with T.Kernel(1) as bx:\n"
                                "            T.no_such_op(A)\n"
                                "    return main\n",
                                NULL, 0));
    CHECK_CONTAINS(ts_last_error(ctx), "e.py:6:15: error: unknown TileLang function or name 'T.no_such_op'");
    CHECK_EQ_INT(TS_ERR_TYPE, compile_status("import tilelang.language as T\n"
                                             "def k():\n"
                                             "    return 3\n",
                                             NULL, 0));
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED,
                 compile_status("import tilelang.language as T\n"
                                "def k():\n"
                                "    @T.prim_func\n"
                                "    def main(A: T.Tensor((4,), 'float32')):\n"
                                "        T.clear(A)\n"
                                "    return main\n",
                                NULL, 0));
    /* endless compile-time loops are stopped, not hung */
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, compile_status("def k():\n    while True:\n        pass\n", NULL, 0));
    /* runaway recursion is stopped */
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, compile_status("def f(n):\n    return f(n + 1)\ndef k():\n    return f(0)\n", NULL, 0));

    ts_context_destroy(ctx);
    return test_done();
}
