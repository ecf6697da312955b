/*
 * test_refs.c — the examples against references written here in plain C
 * (issue 9 H), on inputs chosen to expose what uniform random data hides.
 *
 * Why not the examples' own *_naive entries: they go through this
 * compiler too, so a bug in a shared piece (reduce lowering, exp2 in the
 * code generator, the gemm loop) can make both sides wrong the same way.
 * The references here are double-precision C loops.
 *
 * Why these inputs: softmax and attention subtract the row maximum before
 * exp, and the result does not depend on which value is subtracted.  With
 * inputs in [-1, 1] a maximum that is wrong (a reduction that skips the
 * last tile, a running max that starts at 0 instead of -inf, a rescale
 * factor left out) still gives the right answer.  Rows at +1000 overflow
 * exp unless the subtracted value is the true maximum, rows at -1000
 * underflow it to 0/0 unless it is, and a row whose maximum sits in its
 * last column or last key tile checks the reduction covers everything.
 * -inf entries (masked) must contribute exactly 0.
 *
 * The GEMM checks: float16 output to 1 ulp of the exact result (float32
 * accumulation rounds once; a float16-accumulating bug is many ulps off),
 * and accum_dtype=float16 against an emulation of the C target's rule (a
 * float32 sum per K tile added to the float16 accumulator), with a check
 * that this reference really differs from float32 accumulation.
 *
 * Also the comparison itself: NaN never matches (only KT_UNTOUCHED takes a
 * NaN), and the ulp distance is right around 0, powers of two and inf.
 */
#include "kernel_test.h"

static TsKernel *compile_file(const char *path, const char *entry, const char *defs) {
    TsDefine d[16];
    char names[16][32], values[16][32];
    int nd = 0;
    const char *p = defs;
    while (*p && nd < 16) {
        int n = 0;
        if (sscanf(p, " %31[^=]=%31s%n", names[nd], values[nd], &n) != 2) break;
        d[nd].name = names[nd];
        d[nd].value = values[nd];
        nd++;
        p += n;
    }
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(kt_ctx, path, entry, d, nd, &kt_opt, &k);
    if (st != TS_OK) {
        fprintf(stderr, "compiling %s:%s (%s) failed: %s\n%s", path, entry, defs, ts_status_name(st),
                ts_last_error(kt_ctx));
        test_failed++;
        return NULL;
    }
    test_passed++;
    return k;
}

/* ---- the comparison itself ------------------------------------------------------------- */

static void test_compare(void) {
    CHECK(!kt_close(NAN, NAN, 1, 1));          /* poison next to a NaN reference: fails */
    CHECK(!kt_close(NAN, 1.0, 1e9, 1e9));      /* poison: fails at any tolerance */
    CHECK(!kt_close(1.0, NAN, 1e9, 1e9));      /* a NaN reference checks nothing: fails */
    CHECK(kt_close(NAN, KT_UNTOUCHED, 0, 0));  /* the poison must stay: passes */
    CHECK(!kt_close(0.0, KT_UNTOUCHED, 1, 1)); /* written where it must not be: fails */
    CHECK(kt_close(INFINITY, INFINITY, 0, 0));
    CHECK(!kt_close(-INFINITY, INFINITY, 1e9, 1e9));
    CHECK(!kt_close(1e30, INFINITY, 1e9, 1e9));
    CHECK(kt_close(1.0 + 1e-6, 1.0, 0, 2e-6));
    CHECK(!kt_close(1.0 + 1e-5, 1.0, 0, 2e-6));
    /* a tensor with one NaN left: KT_COMPARE fails (counted back here) */
    TsTensor t = kt_tensor(TS_FLOAT32, 1, (int64_t)4);
    double w[4] = {1, 2, 3, NAN};
    for (int i = 0; i < 4; i++) ts_tensor_set(&t, i, w[i]);
    int before = test_failed;
    int ok = KT_COMPARE("(expected to fail) NaN in both", &t, w, 1, 1);
    CHECK_EQ_INT(before + 1, test_failed);
    test_failed = before;
    CHECK(!ok);
    ok = KT_COMPARE_ULP("(expected to fail) NaN in both, ulps", &t, w, 1000, 1e9);
    test_failed = before;
    CHECK(!ok);
    ts_tensor_free(&t);
    /* ulps of float16: 1 + 2^-10 is the next value after 1; below 1 the step halves */
    CHECK_EQ_INT(0, kt_ulps(TS_FLOAT16, 1.0, 1.0));
    CHECK_EQ_INT(1, kt_ulps(TS_FLOAT16, 1.0, 1.0 + 1.0 / 1024));
    CHECK_EQ_INT(2, kt_ulps(TS_FLOAT16, 1.0, 1.0 - 1.0 / 1024));
    CHECK_EQ_INT(0, kt_ulps(TS_FLOAT16, -0.0, 0.0));
    CHECK_EQ_INT(2, kt_ulps(TS_FLOAT16, -ldexp(1, -24), ldexp(1, -24))); /* smallest subnormals */
    CHECK_EQ_INT(1, kt_ulps(TS_FLOAT16, 65504, INFINITY));
    CHECK_EQ_INT(1, kt_ulps(TS_FLOAT32, 1.0, 1.0 + ldexp(1, -23)));
    CHECK(kt_ulps(TS_FLOAT16, NAN, 1.0) == INT64_MAX);
}

/* ---- softmax ---------------------------------------------------------------------------- */

/* Row r of an M x N softmax input: one of seven kinds. */
static void softmax_row(double *x, int64_t N, int kind) {
    for (int64_t j = 0; j < N; j++) x[j] = kt_uniform(-1, 1);
    switch (kind) {
    case 0: break;                                                         /* plain */
    case 1: for (int64_t j = 0; j < N; j++) x[j] = 1000 + kt_uniform(-8, 8); break;  /* exp overflows */
    case 2: for (int64_t j = 0; j < N; j++) x[j] = -1000 + kt_uniform(-8, 8); break; /* all negative */
    case 3: x[N - 1] = 200; break;                                         /* max in the last column */
    case 4: x[N / 2 + kt_randint(0, N / 2 - 1)] = 150; break;              /* max in the second half */
    case 5:                                                                /* masked first half, offset */
        for (int64_t j = 0; j < N; j++) x[j] = j < N / 2 || kt_randint(0, 3) == 0 ? -INFINITY : 500 + kt_uniform(-3, 3);
        x[N - 1] = 500;
        break;
    default: for (int64_t j = 0; j < N; j++) x[j] = kt_uniform(-80, 80); break; /* wide */
    }
}

static void softmax_ref(const double *x, double *y, int64_t N) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; j++) mx = x[j] > mx ? x[j] : mx;
    for (int64_t j = 0; j < N; j++) sum += exp(x[j] - mx);
    for (int64_t j = 0; j < N; j++) y[j] = exp(x[j] - mx) / sum;
}

static void test_softmax(int64_t M, int64_t N) {
    char defs[64];
    snprintf(defs, sizeof defs, "M=%lld N=%lld", (long long)M, (long long)N);
    TsKernel *k = compile_file("examples/softmax.py", "softmax", defs);
    if (!k) return;
    TsTensor x = kt_tensor(TS_FLOAT32, 2, M, N), y = kt_tensor(TS_FLOAT32, 2, M, N);
    double *xv = kt_zeros(M * N), *want = kt_zeros(M * N);
    for (int64_t i = 0; i < M; i++) {
        softmax_row(xv + i * N, N, (int)(i % 7));
        for (int64_t j = 0; j < N; j++) ts_tensor_set(&x, i * N + j, xv[i * N + j]);
        for (int64_t j = 0; j < N; j++) xv[i * N + j] = ts_tensor_get(&x, i * N + j); /* as float32 */
        softmax_ref(xv + i * N, want + i * N, N);
    }
    kt_poison(&y);
    TsTensor args[2] = {x, y};
    char what[200];
    snprintf(what, sizeof what, "softmax %s vs C, rows at +-1000, max last, -inf masked", defs);
    if (kt_launch(k, args, 2)) KT_COMPARE(what, &y, want, 1e-7, 2e-5);
    free(xv);
    free(want);
    ts_tensor_free(&x);
    ts_tensor_free(&y);
    ts_kernel_destroy(k);
}

/* ---- attention -------------------------------------------------------------------------- */

/* Q, K, V [B, S, H, D] float16; kind 0 plain, 1 large scores (exp of the
 * raw score overflows float32), 2 the largest scores in the last key tile
 * (block_N = 64). */
static void attention_inputs(TsTensor *q, TsTensor *k, TsTensor *v, int64_t S, int64_t H, int64_t D, int kind) {
    int64_t n = ts_tensor_numel(q);
    for (int64_t i = 0; i < n; i++) {
        int64_t d = i % D, s = (i / (D * H)) % S;
        double qv = kt_uniform(-1, 1), kv = kt_uniform(-1, 1);
        if (kind == 1 && d == 0) qv = 30 + kt_uniform(0, 1), kv = 30 + kt_uniform(0, 1);
        if (kind == 2 && d == 0) qv = 10, kv = s < 64 ? -20 + kt_uniform(0, 1) : s / 64 * 8 + kt_uniform(0, 1);
        ts_tensor_set(q, i, qv);
        ts_tensor_set(k, i, kv);
        ts_tensor_set(v, i, kt_uniform(-1, 1));
    }
}

static void attention_ref(const TsTensor *q, const TsTensor *k, const TsTensor *v, double *out, int64_t B, int64_t S,
                          int64_t H, int64_t D, int causal) {
    double *p = kt_zeros(S);
    double scale = 1 / sqrt((double)D);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < S; j++) {
                    double acc = 0;
                    for (int64_t d = 0; d < D; d++)
                        acc += ts_tensor_get(q, ((b * S + i) * H + h) * D + d) * ts_tensor_get(k, ((b * S + j) * H + h) * D + d);
                    p[j] = causal && j > i ? -INFINITY : acc * scale;
                    mx = p[j] > mx ? p[j] : mx;
                }
                for (int64_t j = 0; j < S; j++) sum += p[j] = exp(p[j] - mx);
                for (int64_t d = 0; d < D; d++) {
                    double o = 0;
                    for (int64_t j = 0; j < S; j++) o += p[j] * ts_tensor_get(v, ((b * S + j) * H + h) * D + d);
                    out[((b * S + i) * H + h) * D + d] = o / sum;
                }
            }
    free(p);
}

static void test_attention(int64_t B, int64_t H, int64_t S, int64_t D, int causal, int kind, const char *extra) {
    char defs[160];
    snprintf(defs, sizeof defs, "batch=%lld heads=%lld seq_len=%lld dim=%lld is_causal=%s%s", (long long)B,
             (long long)H, (long long)S, (long long)D, causal ? "True" : "False", extra);
    TsKernel *kn = compile_file("examples/flash_attention.py", "flashattn", defs);
    if (!kn) return;
    TsTensor q = kt_tensor(TS_FLOAT16, 4, B, S, H, D), k = kt_tensor(TS_FLOAT16, 4, B, S, H, D),
             v = kt_tensor(TS_FLOAT16, 4, B, S, H, D), o = kt_tensor(TS_FLOAT16, 4, B, S, H, D);
    attention_inputs(&q, &k, &v, S, H, D, kind);
    double *want = kt_zeros(ts_tensor_numel(&o));
    attention_ref(&q, &k, &v, want, B, S, H, D, causal);
    kt_poison(&o);
    TsTensor args[4] = {q, k, v, o};
    static const char *kinds[] = {"plain", "scores ~ +160 (exp overflows)", "max in the last key tile"};
    char what[400];
    snprintf(what, sizeof what, "flashattn %s, %s, vs C", defs, kinds[kind]);
    /* the kernel rounds P (each in [0, 1]) to float16 before P @ V: an
     * error of at most 2^-11 * sum|p_j v_j| / sum p_j <= 4.9e-4 (|v| < 1),
     * plus the output's own rounding: 4 ulps, or 1e-3 absolute where the
     * output is small after cancellation and ulps say nothing */
    if (kt_launch(kn, args, 4)) KT_COMPARE_ULP(what, &o, want, 4, 1e-3);
    free(want);
    ts_tensor_free(&q);
    ts_tensor_free(&k);
    ts_tensor_free(&v);
    ts_tensor_free(&o);
    ts_kernel_destroy(kn);
}

/* ---- GEMM ------------------------------------------------------------------------------- */

/* C = A @ B with float16 A, B, C; accum float32 (to 1 ulp of the exact
 * result) or float16 (the C target's rule, emulated: per K tile of bk, a
 * float32 sum started from the float16 accumulator, rounded back). */
static void test_gemm(int64_t M, int64_t N, int64_t K, int64_t bk, int acc16) {
    char defs[200];
    snprintf(defs, sizeof defs, "M=%lld N=%lld K=%lld block_M=32 block_N=32 block_K=%lld num_stages=2 accum_dtype=%s",
             (long long)M, (long long)N, (long long)K, (long long)bk, acc16 ? "float16" : "float32");
    TsKernel *kn = compile_file("examples/gemm.py", "matmul", defs);
    if (!kn) return;
    TsTensor a = kt_tensor(TS_FLOAT16, 2, M, K), b = kt_tensor(TS_FLOAT16, 2, K, N), c = kt_tensor(TS_FLOAT16, 2, M, N);
    kt_fill(&a, 0, 1); /* positive: no cancellation, so every output is many ulps from 0 */
    kt_fill(&b, 0, 1);
    double *exact = kt_zeros(M * N), *emul = kt_zeros(M * N);
    int64_t differ = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double e = 0;
            float acc16v = 0; /* the float16 accumulator, held as a float */
            for (int64_t k0 = 0; k0 < K; k0 += bk) {
                float s = acc16v;
                for (int64_t k = k0; k < k0 + bk && k < K; k++) {
                    float p = (float)ts_tensor_get(&a, i * K + k) * (float)ts_tensor_get(&b, k * N + j); /* exact */
                    s += p;
                    e += (double)p;
                }
                acc16v = (float)kt_round(TS_FLOAT16, s);
            }
            exact[i * N + j] = e;
            emul[i * N + j] = acc16v;
            differ += kt_ulps(TS_FLOAT16, acc16v, e) > 1;
        }
    kt_poison(&c);
    TsTensor args[3] = {a, b, c};
    char what[400];
    if (kt_launch(kn, args, 3)) {
        if (!acc16) {
            snprintf(what, sizeof what, "gemm %s, float16 output within 1 ulp of the exact product", defs);
            KT_COMPARE_ULP(what, &c, exact, 1, 0);
        } else {
            /* the emulation is exact (products of halves are exact in
             * float32, the sums are in order), so 0 ulp; the test means
             * something only if float16 accumulation is off the exact
             * product somewhere (a kernel accumulating in float32 would
             * then differ there) */
            CHECK(differ > M * N / 100);
            snprintf(what, sizeof what, "gemm %s vs a float16-accumulating reference (%lld of %lld over 1 ulp from exact)",
                     defs, (long long)differ, (long long)(M * N));
            if (kt_opt.target == TS_TARGET_C) KT_COMPARE_ULP(what, &c, emul, 0, 0);
            else KT_COMPARE_ULP(what, &c, exact, 24, 0); /* tensor cores: their own order and rounding */
        }
    }
    free(exact);
    free(emul);
    ts_tensor_free(&a);
    ts_tensor_free(&b);
    ts_tensor_free(&c);
    ts_kernel_destroy(kn);
}

static void suite(void) {
    test_softmax(70, 96);
    test_softmax(35, 200);
    test_attention(1, 2, 128, 32, 0, 0, "");
    test_attention(1, 2, 128, 32, 1, 1, "");
    test_attention(1, 1, 192, 32, 0, 2, "");
    test_attention(1, 1, 192, 32, 1, 2, "");
    test_attention(1, 1, 96, 32, 1, 1, " block_M=64 block_N=32"); /* rows whose second key tile is all -inf */
    test_attention(2, 1, 100, 16, 0, 1, "");                      /* a partial last key tile (-inf columns) */
    test_gemm(96, 80, 512, 32, 0);
    test_gemm(64, 48, 512, 32, 1);
}

int main(void) {
    kt_init("test_refs");
    test_compare();
    suite();
    /* the same on the GPU where there is one (host tensors are copied) */
    if (ts_target_available(TS_TARGET_CUDA)) {
        printf("test_refs: CUDA target\n");
        kt_opt.target = TS_TARGET_CUDA;
        suite();
    } else {
        printf("test_refs: no CUDA device: the CUDA half is not run\n");
    }
    kt_finish();
    return test_done();
}
