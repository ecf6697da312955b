/*
 * test_make_tensor.c — T.make_tensor(ptr, shape, dtype) on the C target:
 * global tensors whose addresses a kernel reads at run time from pointer
 * tables (T.Tensor([n], T.ptr)), as TileLang's grouped GEMM by pointers
 * does.  A pointer table holds real addresses, which neither .npy files nor
 * the CLI can give, so this test builds the tables through the C API, with
 * every group's tensors separate allocations, and checks the kernels of
 * tests/run/kernels/make_tensor.py against a naive grouped GEMM computed
 * here on fresh random inputs, outputs poisoned first (rows a kernel must
 * not write must keep the poison).  Where NVRTC is present the same kernels
 * are compiled to PTX (the CUDA target's printing of them); a GPU run is
 * bench/cov7_gpu_check.sh's.
 */
#include "kernel_test.h"

#define FILE_MT "tests/run/kernels/make_tensor.py"

/* grouped_ptr with groups of `sizes` rows, K, N, block_M: C_g = A_g @ B_g. */
static void check_grouped(const int64_t *sizes, int count, int64_t K, int64_t N, int64_t block_M) {
    char sz[128] = "(", kb[32], nb[32], mb[32];
    for (int g = 0; g < count; g++)
        snprintf(sz + strlen(sz), sizeof sz - strlen(sz), "%lld%s", (long long)sizes[g], g + 1 < count ? ", " : ",)");
    snprintf(kb, sizeof kb, "%lld", (long long)K);
    snprintf(nb, sizeof nb, "%lld", (long long)N);
    snprintf(mb, sizeof mb, "%lld", (long long)block_M);
    TsDefine d[4] = {{"sizes", sz}, {"K", kb}, {"N", nb}, {"block_M", mb}};
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(kt_ctx, FILE_MT, "grouped_ptr", d, 4, &kt_opt, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) {
        fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
        return;
    }
    int64_t max_M = 0;
    for (int g = 0; g < count; g++) max_M = sizes[g] > max_M ? sizes[g] : max_M;
    TsTensor A[8], B[8], C[8];
    TsTensor ap = kt_tensor(TS_INT64, 1, (int64_t)count), bp = kt_tensor(TS_INT64, 1, (int64_t)count);
    TsTensor cp = kt_tensor(TS_INT64, 1, (int64_t)count), off = kt_tensor(TS_INT32, 1, (int64_t)count);
    int64_t tiles = 0;
    for (int g = 0; g < count; g++) {
        A[g] = kt_tensor(TS_FLOAT16, 2, max_M, K);
        B[g] = kt_tensor(TS_FLOAT16, 2, K, N);
        C[g] = kt_tensor(TS_FLOAT16, 2, max_M, N);
        kt_fill(&A[g], -1, 1);
        kt_fill(&B[g], -1, 1);
        kt_poison(&C[g]);
        ((int64_t *)ap.data)[g] = (int64_t)(uintptr_t)A[g].data;
        ((int64_t *)bp.data)[g] = (int64_t)(uintptr_t)B[g].data;
        ((int64_t *)cp.data)[g] = (int64_t)(uintptr_t)C[g].data;
        ((int32_t *)off.data)[g] = (int32_t)tiles;
        tiles += (sizes[g] + block_M - 1) / block_M;
    }
    TsTensor args[4] = {ap, bp, cp, off};
    st = ts_kernel_launch(k, args, 4);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
    int bad = 0;
    for (int g = 0; g < count; g++) {
        /* the group's row tiles, cut at the tensor's max_M rows */
        int64_t rows = (sizes[g] + block_M - 1) / block_M * block_M;
        if (rows > max_M) rows = max_M;
        for (int64_t i = 0; i < max_M; i++)
            for (int64_t j = 0; j < N; j++) {
                double got = ts_tensor_get(&C[g], i * N + j);
                if (i >= rows) {
                    if (!isnan(got) && bad++ < 5) fprintf(stderr, "group %d: C[%lld, %lld] written (%g)\n", g, (long long)i, (long long)j, got);
                    continue;
                }
                double want = 0;
                for (int64_t x = 0; x < K; x++) want += ts_tensor_get(&A[g], i * K + x) * ts_tensor_get(&B[g], x * N + j);
                want = kt_round(TS_FLOAT16, want);
                if (!(fabs(got - want) <= 2e-2 + 1e-2 * fabs(want)) && bad++ < 5)
                    fprintf(stderr, "group %d: C[%lld, %lld] = %g, want %g\n", g, (long long)i, (long long)j, got, want);
            }
    }
    CHECK_EQ_INT(0, bad);
    for (int g = 0; g < count; g++) {
        ts_tensor_free(&A[g]);
        ts_tensor_free(&B[g]);
        ts_tensor_free(&C[g]);
    }
    ts_tensor_free(&ap);
    ts_tensor_free(&bp);
    ts_tensor_free(&cp);
    ts_tensor_free(&off);
    ts_kernel_destroy(k);
}

/* scaled_rows: Y[g, j] = 2 X_g[j] + g through one table, read in a loop. */
static void check_rows(int count, int64_t n) {
    char cb[32], nb[32];
    snprintf(cb, sizeof cb, "%d", count);
    snprintf(nb, sizeof nb, "%lld", (long long)n);
    TsDefine d[2] = {{"count", cb}, {"n", nb}};
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(kt_ctx, FILE_MT, "scaled_rows", d, 2, &kt_opt, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) {
        fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
        return;
    }
    TsTensor X[8], xp = kt_tensor(TS_INT64, 1, (int64_t)count), Y = kt_tensor(TS_FLOAT32, 2, (int64_t)count, n);
    /* the groups in reverse order of allocation: the table, not the layout, decides */
    for (int g = count - 1; g >= 0; g--) {
        X[g] = kt_tensor(TS_FLOAT32, 1, n);
        kt_fill(&X[g], -4, 4);
        ((int64_t *)xp.data)[g] = (int64_t)(uintptr_t)X[g].data;
    }
    kt_poison(&Y);
    TsTensor args[2] = {xp, Y};
    st = ts_kernel_launch(k, args, 2);
    CHECK_EQ_INT(TS_OK, st);
    int bad = 0;
    for (int g = 0; g < count; g++)
        for (int64_t j = 0; j < n; j++) {
            double want = (double)(float)(ts_tensor_get(&X[g], j) * 2.0 + g), got = ts_tensor_get(&Y, g * n + j);
            if (got != want && bad++ < 5) fprintf(stderr, "Y[%d, %lld] = %g, want %g\n", g, (long long)j, got, want);
        }
    CHECK_EQ_INT(0, bad);
    for (int g = 0; g < count; g++) ts_tensor_free(&X[g]);
    ts_tensor_free(&xp);
    ts_tensor_free(&Y);
    ts_kernel_destroy(k);
}

/* The CUDA target prints them (the address cast where the let binds it) and,
 * where NVRTC is present, compiles them. */
static void check_cuda(void) {
    TsCompileOptions o = kt_opt;
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    const char *entries[2] = {"grouped_ptr", "scaled_rows"};
    for (int e = 0; e < 2; e++) {
        TsKernel *k = NULL;
        TsStatus st = ts_compile_file(kt_ctx, FILE_MT, entries[e], NULL, 0, &o, &k);
        CHECK_EQ_INT(TS_OK, st);
        if (st != TS_OK) {
            fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
            continue;
        }
        CHECK(strstr(ts_kernel_source(k), "(ts_u64)(ts_addr_") != NULL);
        CHECK(strstr(ts_kernel_source(k), "/* T.make_tensor */") != NULL);
        void *code = NULL;
        size_t size = 0;
        st = ts_kernel_device_code(k, "ptx", &code, &size);
        if (st == TS_OK) CHECK(size > 0 && strstr((const char *)code, ".entry") != NULL);
        else if (st == TS_ERR_BUILD && strstr(ts_last_error(kt_ctx), "NVRTC not found")) printf("NVRTC not found: PTX of %s not checked\n", entries[e]);
        else {
            fprintf(stderr, "%s: %s\n", entries[e], ts_last_error(kt_ctx));
            CHECK_EQ_INT(TS_OK, st);
        }
        free(code);
        ts_kernel_destroy(k);
    }
}

/* What is refused, with the place: strides, a 32-bit address. */
static void check_errors(void) {
    static const char *src =
        "import tilelang.language as T\n"
        "@T.prim_func\n"
        "def strided(P: T.Tensor([2], T.ptr), Y: T.Tensor((4,), \"float32\")):\n"
        "    with T.Kernel(1, threads=32) as bx:\n"
        "        X = T.make_tensor(P[0], (4,), \"float32\", strides=(2,))\n"
        "        Y[0] = X[0]\n"
        "@T.prim_func\n"
        "def narrow(P: T.Tensor([2], \"int32\"), Y: T.Tensor((4,), \"float32\")):\n"
        "    with T.Kernel(1, threads=32) as bx:\n"
        "        X = T.make_tensor(P[0], (4,), \"float32\")\n"
        "        Y[0] = X[0]\n";
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, ts_compile_source(kt_ctx, "mt.py", src, "strided", NULL, 0, &kt_opt, &k));
    CHECK(strstr(ts_last_error(kt_ctx), "mt.py:5:") && strstr(ts_last_error(kt_ctx), "only row-major tensors"));
    CHECK_EQ_INT(TS_ERR_TYPE, ts_compile_source(kt_ctx, "mt.py", src, "narrow", NULL, 0, &kt_opt, &k));
    CHECK(strstr(ts_last_error(kt_ctx), "mt.py:10:") && strstr(ts_last_error(kt_ctx), "64-bit integer"));
}

int main(void) {
    kt_init("test_make_tensor");
    int64_t s1[3] = {5, 9, 13}, s2[4] = {70, 1, 33, 64};
    check_grouped(s1, 3, 64, 96, 64);
    check_grouped(s2, 4, 96, 40, 32);
    check_rows(3, 40);
    check_rows(5, 7);
    check_cuda();
    check_errors();
    kt_finish();
    return test_done();
}
