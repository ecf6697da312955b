/*
 * test_int4.c — T.int4 storage (issue 8 D; doc/LANGUAGE.md "T.int4").
 *
 * int4 tensors are passed as TileLang's callers pass them: int8 bytes, two
 * elements each, the low nibble first, the last extent halved.  The test
 * draws int4 values with the runtime's own TS_INT4 host tensors (whose
 * ts_tensor_set packs nibbles as TileLang's pack_int4 does: checked here
 * against that rule byte by byte), launches the kernels on the C target
 * with int8 tensors over the same bytes, and compares against naive
 * references computed from the unpacked values:
 *   - tests/run/kernels/int4.py gemm_nt (TileLang's examples/gemm_int4
 *     matmul_nt_int4): C = A B^T in int32, whole and ragged tiles (M, N not
 *     multiples of the block, K not a multiple of block_K), C poisoned;
 *   - quant: a T.Parallel store of int4 elements (each thread both halves
 *     of a byte), copied out whole, and read back sign-extended;
 * then compiles both for CUDA (NVRTC's PTX where it is present), and
 * checks what is refused: an odd last extent, an int4 fragment, a copy
 * at an odd column, a T.Parallel store whose pairs would split.
 */
#include "kernel_test.h"

#define FILE_I4 "tests/run/kernels/int4.py"

/* An int8 tensor over the bytes of the int4 tensor t (last extent halved). */
static TsTensor packed(const TsTensor *t, int64_t *shape) {
    for (int i = 0; i < t->ndim; i++) shape[i] = t->shape[i];
    shape[t->ndim - 1] /= 2;
    TsTensor p = {t->data, TS_INT8, t->ndim, shape, NULL};
    return p;
}

/* TileLang's pack_int4: byte j of a row is (x[2j] & 15) | (x[2j+1] & 15) << 4. */
static void check_packing(void) {
    TsTensor t = kt_tensor(TS_INT4, 2, (int64_t)3, (int64_t)10);
    int vals[30];
    for (int i = 0; i < 30; i++) {
        vals[i] = (int)kt_randint(-8, 7);
        ts_tensor_set(&t, i, vals[i]);
    }
    const uint8_t *b = t.data;
    int bad = 0;
    for (int i = 0; i < 15; i++) {
        unsigned want = ((unsigned)vals[2 * i] & 15u) | (((unsigned)vals[2 * i + 1] & 15u) << 4);
        if (b[i] != want && bad++ < 3) fprintf(stderr, "byte %d = %#x, want %#x\n", i, b[i], want);
    }
    for (int i = 0; i < 30; i++)
        if (ts_tensor_get(&t, i) != vals[i] && bad++ < 6) fprintf(stderr, "element %d = %g, want %d\n", i, ts_tensor_get(&t, i), vals[i]);
    CHECK_EQ_INT(0, bad);
    ts_tensor_free(&t);
}

static TsKernel *compile(const char *entry, const char *const *defs, int n, const TsCompileOptions *o) {
    TsDefine d[8];
    char buf[8][64];
    for (int i = 0; i < n; i++) {
        snprintf(buf[i], sizeof buf[i], "%s", defs[i]);
        char *eq = strchr(buf[i], '=');
        *eq = 0;
        d[i].name = buf[i];
        d[i].value = eq + 1;
    }
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(kt_ctx, FILE_I4, entry, d, n, o, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) fprintf(stderr, "%s: %s\n", entry, ts_last_error(kt_ctx));
    return st == TS_OK ? k : NULL;
}

static void check_gemm(int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn, int64_t bk) {
    char d[6][64];
    snprintf(d[0], 64, "M=%lld", (long long)M);
    snprintf(d[1], 64, "N=%lld", (long long)N);
    snprintf(d[2], 64, "K=%lld", (long long)K);
    snprintf(d[3], 64, "block_M=%lld", (long long)bm);
    snprintf(d[4], 64, "block_N=%lld", (long long)bn);
    snprintf(d[5], 64, "block_K=%lld", (long long)bk);
    const char *defs[6] = {d[0], d[1], d[2], d[3], d[4], d[5]};
    TsKernel *k = compile("gemm_nt", defs, 6, &kt_opt);
    if (!k) return;
    TsTensor A = kt_tensor(TS_INT4, 2, M, K), B = kt_tensor(TS_INT4, 2, N, K), C = kt_tensor(TS_INT32, 2, M, N);
    kt_fill(&A, -8, 7);
    kt_fill(&B, -8, 7);
    kt_poison(&C);
    int64_t sa[2], sb[2];
    TsTensor args[3] = {packed(&A, sa), packed(&B, sb), C};
    TsStatus st = ts_kernel_launch(k, args, 3);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
    int bad = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double want = 0;
            for (int64_t x = 0; x < K; x++) want += ts_tensor_get(&A, i * K + x) * ts_tensor_get(&B, j * K + x);
            double got = ts_tensor_get(&C, i * N + j);
            if (got != want && bad++ < 5)
                fprintf(stderr, "gemm_nt %lldx%lldx%lld: C[%lld, %lld] = %g, want %g\n", (long long)M, (long long)N,
                        (long long)K, (long long)i, (long long)j, got, want);
        }
    CHECK_EQ_INT(0, bad);
    ts_tensor_free(&A);
    ts_tensor_free(&B);
    ts_tensor_free(&C);
    ts_kernel_destroy(k);
}

static void check_quant(int64_t M, int64_t N, int64_t bm) {
    char d[3][64];
    snprintf(d[0], 64, "M=%lld", (long long)M);
    snprintf(d[1], 64, "N=%lld", (long long)N);
    snprintf(d[2], 64, "block_M=%lld", (long long)bm);
    const char *defs[3] = {d[0], d[1], d[2]};
    TsKernel *k = compile("quant", defs, 3, &kt_opt);
    if (!k) return;
    TsTensor X = kt_tensor(TS_INT32, 2, M, N), Q = kt_tensor(TS_INT4, 2, M, N), R = kt_tensor(TS_INT32, 2, M, N);
    kt_fill(&X, -12, 12);
    memset(Q.data, 0x5a, (size_t)(M * N / 2)); /* poison: every nibble 10 or 5, never what a clamp gives both */
    kt_poison(&R);
    int64_t sq[2];
    TsTensor args[3] = {X, packed(&Q, sq), R};
    TsStatus st = ts_kernel_launch(k, args, 3);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
    int bad = 0;
    for (int64_t i = 0; i < M * N; i++) {
        double x = ts_tensor_get(&X, i), q = x > 7 ? 7 : x < -8 ? -8 : x;
        if ((ts_tensor_get(&Q, i) != q || ts_tensor_get(&R, i) != 3 * q) && bad++ < 5)
            fprintf(stderr, "quant: element %lld: Q %g, R %g, want %g and %g\n", (long long)i, ts_tensor_get(&Q, i),
                    ts_tensor_get(&R, i), q, 3 * q);
    }
    CHECK_EQ_INT(0, bad);
    ts_tensor_free(&X);
    ts_tensor_free(&Q);
    ts_tensor_free(&R);
    ts_kernel_destroy(k);
}

/* Both compile for CUDA; PTX by NVRTC where present. */
static void check_cuda(void) {
    TsCompileOptions o = kt_opt;
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    const char *g[6] = {"M=256", "N=256", "K=256", "block_M=128", "block_N=128", "block_K=64"};
    const char *q[2] = {"M=64", "N=128"};
    TsKernel *ks[2] = {compile("gemm_nt", g, 6, &o), compile("quant", q, 2, &o)};
    for (int e = 0; e < 2; e++) {
        if (!ks[e]) continue;
        CHECK(strstr(ts_kernel_source(ks[e]), "ts_i8 *A_0") != NULL || e == 1);
        void *code = NULL;
        size_t size = 0;
        TsStatus st = ts_kernel_device_code(ks[e], "ptx", &code, &size);
        if (st == TS_OK) CHECK(size > 0 && strstr((const char *)code, ".entry") != NULL);
        else if (st == TS_ERR_BUILD && strstr(ts_last_error(kt_ctx), "NVRTC not found")) printf("NVRTC not found: PTX not checked\n");
        else {
            fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
            CHECK_EQ_INT(TS_OK, st);
        }
        free(code);
        ts_kernel_destroy(ks[e]);
    }
}

static void refused(const char *src, TsStatus want, const char *line, const char *msg) {
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(kt_ctx, "i4.py", src, "main", NULL, 0, &kt_opt, &k);
    CHECK_EQ_INT(want, st);
    if (st == TS_OK) {
        ts_kernel_destroy(k);
        return;
    }
    const char *e = ts_last_error(kt_ctx);
    if (!strstr(e, line) || !strstr(e, msg)) fprintf(stderr, "unexpected message:\n%s\n", e);
    CHECK(strstr(e, line) && strstr(e, msg));
}

#define HEAD "import tilelang.language as T\n@T.prim_func\n"

static void check_errors(void) {
    refused(HEAD "def main(A: T.Tensor((4, 7), T.int4), C: T.Tensor((4,), \"int32\")):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        C[0] = A[0, 0]\n",
            TS_ERR_SHAPE, "i4.py:3:", "must be an even constant (two elements to a byte), not 7");
    refused(HEAD "def main(A: T.Tensor((4, 8), T.int4), C: T.Tensor((4,), \"int32\")):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        F = T.alloc_fragment((4, 8), T.int4)\n"
                 "        C[0] = 1\n",
            TS_ERR_UNSUPPORTED, "i4.py:5:", "int4 fragment buffers are not supported");
    refused(HEAD "def main(A: T.Tensor((4, 16), T.int4), C: T.Tensor((4,), \"int32\")):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        S = T.alloc_shared((4, 8), T.int4)\n"
                 "        T.copy(A[0, 3], S)\n"
                 "        C[0] = S[0, 0]\n",
            TS_ERR_SHAPE, "i4.py:6:", "T.copy of int4 tiles moves whole bytes");
    refused(HEAD "def main(A: T.Tensor((4, 16), \"int8\"), Q: T.Tensor((4, 16), T.int4)):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        for i, j in T.Parallel(4, 15):\n"
                 "            Q[i, j + 1] = A[i, j]\n",
            TS_ERR_UNSUPPORTED, "i4.py:6:", "must give each thread both elements of a byte");
    refused(HEAD "def main(A: T.Tensor((4, 16), \"int8\"), Q: T.Tensor((4, 16), T.int4)):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        S = T.alloc_shared((4, 16), \"int8\")\n"
                 "        T.copy(A, S)\n"
                 "        T.copy(S, Q)\n",
            TS_ERR_UNSUPPORTED, "i4.py:7:", "copy int4 to int4");
}

int main(void) {
    kt_init("test_int4");
    check_packing();
    check_gemm(64, 96, 128, 32, 32, 64);
    check_gemm(40, 72, 96, 32, 32, 64); /* ragged M, N and K */
    check_gemm(16, 16, 32, 16, 16, 32);
    check_quant(32, 64, 16);
    check_quant(48, 10, 16);
    check_cuda();
    check_errors();
    kt_finish();
    return test_done();
}
