/*
 * test_prim_gemm.c — T.gemm on the C target against a naive triple loop in
 * double over the same (rounded) inputs, on fresh random data.
 *
 * One kernel factory covers the whole matrix of cases with compile-time
 * flags: the four transpose_A/transpose_B combinations (the global tensors
 * are stored transposed too, so the copies change shape with the flags),
 * operand A taken from shared memory or from a fragment, float16 /
 * bfloat16 / float32 inputs accumulating in float32 (and int8 in int32,
 * exactly), several K steps in a
 * T.Pipelined loop, partial tiles in M, N and K (zero-filled reads make the
 * overhang contribute nothing), and three accumulator modes:
 *   mode 0  T.clear(C) then clear_accum=False in every step;
 *   mode 1  C filled with garbage, the first step (peeled out of the loop,
 *           which then runs T.Pipelined(1, nk)) with clear_accum=True;
 *   mode 2  C loaded from a global input Cin and never cleared, so the
 *           result is Cin + A @ B (clear_accum=False must keep C).
 * A second kernel keeps two stages of A and B in 3-D shared buffers and
 * passes regions `A_s[k % 2, :, :]` to T.gemm.
 *
 * Inputs of a half type are exact in float32, and products of two of them
 * are exact too, so the only error is float32 summation: the tolerance is
 * a few float32 ulps times sqrt(K) on values of size ~sqrt(K).
 */
#include "kernel_test.h"

static const char *SRC_GEMM =
    "@tilelang.jit(out_idx=[-1])\n"
    "def gemm(M, N, K, bm, bn, bk, dt, ta, tb, a_frag, mode, accum=\"float32\"):\n"
    "    A_shape = (K, M) if ta else (M, K)\n"
    "    B_shape = (N, K) if tb else (K, N)\n"
    "    A_tile = (bk, bm) if ta else (bm, bk)\n"
    "    B_tile = (bn, bk) if tb else (bk, bn)\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor(A_shape, dt), B: T.Tensor(B_shape, dt), Cin: T.Tensor((M, N), accum),\n"
    "             C: T.Tensor((M, N), accum)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared(A_tile, dt)\n"
    "            B_s = T.alloc_shared(B_tile, dt)\n"
    "            A_f = T.alloc_fragment(A_tile, dt)\n"
    "            C_f = T.alloc_fragment((bm, bn), accum)\n"
    "            nk = T.ceildiv(K, bk)\n"
    "            if mode == 0:\n"
    "                T.clear(C_f)\n"
    "            elif mode == 1:\n"
    "                T.fill(C_f, 12345.0)\n"
    "            else:\n"
    "                T.copy(Cin[by * bm, bx * bn], C_f)\n"
    "            if mode == 1:\n"
    "                if ta:\n"
    "                    T.copy(A[0, by * bm], A_s)\n"
    "                else:\n"
    "                    T.copy(A[by * bm, 0], A_s)\n"
    "                if tb:\n"
    "                    T.copy(B[bx * bn, 0], B_s)\n"
    "                else:\n"
    "                    T.copy(B[0, bx * bn], B_s)\n"
    "                if a_frag:\n"
    "                    T.copy(A_s, A_f)\n"
    "                    T.gemm(A_f, B_s, C_f, transpose_A=ta, transpose_B=tb, clear_accum=True)\n"
    "                else:\n"
    "                    T.gemm(A_s, B_s, C_f, ta, tb, clear_accum=True)\n"
    "            for k in T.Pipelined(1 if mode == 1 else 0, nk, num_stages=3):\n"
    "                if ta:\n"
    "                    T.copy(A[k * bk, by * bm], A_s)\n"
    "                else:\n"
    "                    T.copy(A[by * bm, k * bk], A_s)\n"
    "                if tb:\n"
    "                    T.copy(B[bx * bn, k * bk], B_s)\n"
    "                else:\n"
    "                    T.copy(B[k * bk, bx * bn], B_s)\n"
    "                if a_frag:\n"
    "                    T.copy(A_s, A_f)\n"
    "                    T.gemm(A_f, B_s, C_f, transpose_A=ta, transpose_B=tb, clear_accum=False)\n"
    "                else:\n"
    "                    T.gemm(A_s, B_s, C_f, transpose_A=ta, transpose_B=tb,\n"
    "                           policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.copy(C_f, C[by * bm, bx * bn])\n"
    "    return main\n"
    "\n"
    /* two stages in 3-D shared buffers, regions as gemm operands */
    "@tilelang.jit(out_idx=[-1])\n"
    "def gemm_stages(M, N, K, bm, bn, bk, dt=\"float16\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dt), B: T.Tensor((K, N), dt), C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared((2, bm, bk), dt)\n"
    "            B_s = T.alloc_shared((2, bk, bn), dt)\n"
    "            C_f = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(C_f)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):\n"
    "                T.copy(A[by * bm, k * bk], A_s[k % 2, :, :])\n"
    "                T.copy(B[k * bk, bx * bn], B_s[k % 2, :, :])\n"
    "                T.gemm(A_s[k % 2, :, :], B_s[k % 2, :, :], C_f)\n"
    "            T.copy(C_f, C[by * bm : (by + 1) * bm, bx * bn : (bx + 1) * bn])\n"
    "    return main\n";

/* want[i, j] = (mode 2 ? Cin[i, j] : 0) + sum_k opA[i, k] * opB[k, j] */
static double *naive_gemm(const TsTensor *a, const TsTensor *b, const TsTensor *cin, int64_t M, int64_t N,
                          int64_t K, int ta, int tb, int add_cin) {
    double *w = kt_zeros(M * N);
    double *av = kt_values(a), *bv = kt_values(b);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = add_cin ? ts_tensor_get(cin, i * N + j) : 0;
            for (int64_t k = 0; k < K; k++)
                s += (ta ? av[k * M + i] : av[i * K + k]) * (tb ? bv[j * K + k] : bv[k * N + j]);
            w[i * N + j] = s;
        }
    free(av);
    free(bv);
    return w;
}

static void gemm_case_acc(TsDType dt, TsDType acc, int ta, int tb, int a_frag, int mode) {
    int64_t M = 70, N = 52, K = 45, bm = 32, bn = 32, bk = 16;
    char defs[300], what[200];
    snprintf(defs, sizeof defs,
             "M=%lld N=%lld K=%lld bm=%lld bn=%lld bk=%lld dt=%s ta=%s tb=%s a_frag=%s mode=%d accum=%s",
             (long long)M, (long long)N, (long long)K, (long long)bm, (long long)bn, (long long)bk,
             ts_dtype_name(dt), ta ? "True" : "False", tb ? "True" : "False", a_frag ? "True" : "False", mode,
             ts_dtype_name(acc));
    snprintf(what, sizeof what, "gemm %s->%s ta=%d tb=%d A from %s, mode %d", ts_dtype_name(dt), ts_dtype_name(acc),
             ta, tb, a_frag ? "fragment" : "shared", mode);
    TsKernel *k = kt_compile(SRC_GEMM, "gemm", defs);
    TsTensor a = ta ? kt_tensor(dt, 2, K, M) : kt_tensor(dt, 2, M, K);
    TsTensor b = tb ? kt_tensor(dt, 2, N, K) : kt_tensor(dt, 2, K, N);
    TsTensor cin = kt_tensor(acc, 2, M, N), c = kt_tensor(acc, 2, M, N);
    int isf = kt_is_float(dt);
    kt_fill(&a, isf ? -1 : -128, isf ? 1 : 127);
    kt_fill(&b, isf ? -1 : -128, isf ? 1 : 127);
    kt_fill(&cin, isf ? -10 : -100000, isf ? 10 : 100000);
    kt_poison(&c);
    TsTensor args[4] = {a, b, cin, c};
    if (kt_launch(k, args, 4)) {
        double *w = naive_gemm(&a, &b, &cin, M, N, K, ta, tb, mode == 2);
        KT_COMPARE(what, &c, w, isf ? 2e-5 : 0, isf ? 2e-5 : 0); /* int8 -> int32: exact */
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&cin);
    ts_tensor_free(&c);
    ts_kernel_destroy(k);
}

static void gemm_case(TsDType dt, int ta, int tb, int a_frag, int mode) { gemm_case_acc(dt, TS_FLOAT32, ta, tb, a_frag, mode); }

static void test_gemm_matrix(void) {
    static const TsDType dts[] = {TS_FLOAT16, TS_BFLOAT16, TS_FLOAT32};
    /* all transposes in each dtype, shared A, plain accumulation */
    for (int d = 0; d < 3; d++)
        for (int t = 0; t < 4; t++) gemm_case(dts[d], t & 1, t >> 1, 0, 0);
    /* A from a fragment, all transposes */
    for (int t = 0; t < 4; t++) gemm_case(TS_FLOAT16, t & 1, t >> 1, 1, t & 1 ? 2 : 0);
    /* clear_accum=True over garbage, and accumulation onto loaded C */
    for (int d = 0; d < 3; d++) {
        gemm_case(dts[d], d == 1, d == 2, 0, 1);
        gemm_case(dts[d], d == 0, d != 1, d == 2, 2);
    }
    gemm_case(TS_BFLOAT16, 1, 1, 1, 1);
    /* int8 inputs accumulate in int32 */
    gemm_case_acc(TS_INT8, TS_INT32, 0, 0, 0, 0);
    gemm_case_acc(TS_INT8, TS_INT32, 0, 1, 1, 2);
}

static void test_gemm_stages(void) {
    int64_t M = 64, N = 48, K = 80; /* tiles 32x16, k steps of 16 */
    TsKernel *k = kt_compile(SRC_GEMM, "gemm_stages", "M=64 N=48 K=80 bm=32 bn=16 bk=16");
    TsTensor a = kt_tensor(TS_FLOAT16, 2, M, K), b = kt_tensor(TS_FLOAT16, 2, K, N), c = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_fill(&a, -2, 2);
    kt_fill(&b, -2, 2);
    kt_poison(&c);
    TsTensor args[3] = {a, b, c};
    if (kt_launch(k, args, 3)) {
        double *w = naive_gemm(&a, &b, NULL, M, N, K, 0, 0, 0);
        KT_COMPARE("gemm on stage regions A_s[k % 2, :, :] of 3-D shared buffers", &c, w, 1e-4, 2e-5);
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&c);
    ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_prim_gemm");
    test_gemm_matrix();
    test_gemm_stages();
    kt_finish();
    return test_done();
}
