/*
 * test_fp4.c — T.float4_e2m1fn (doc/LANGUAGE.md "T.float4_e2m1fn") and
 * T.mma_gemm_blockscaled on the C target.
 *
 * float4_e2m1fn tensors are int8 bytes holding two codes each, the low
 * nibble first (torch's float4_e2m1fn_x2, TileLang's packing), the last
 * extent halved.  The expectations here are written out by hand from the
 * OCP MX v1.0 FP4 E2M1 definition (codes 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6;
 * bit 3 the sign), not computed by the library:
 *   - the cast table: every code to float32, bfloat16 and float16 (from_fp4);
 *     float32, bfloat16 and float16 to fp4 (to_fp4, through a shared tile,
 *     and to_fp4_frag, through a fragment) at every midpoint (ties to the
 *     even code), just either side of it, at each value, beyond +-6
 *     (saturation), +-inf, -0 and NaN (+6: FP4 has no NaN);
 *   - the runtime's host packing (ts_tensor_set / get) against the same
 *     table, byte by byte;
 *   - quant (block-wise FP4 quantization with power-of-two scales) against a
 *     naive quantizer on random bfloat16 data, outputs poisoned;
 *   - gemm_bs (T.mma_gemm_blockscaled) against a naive scaled product in
 *     double, in both scale layouts (the blockscaled_chunk_kmajor words
 *     placed by the host permutation TileLang's example documents), C
 *     poisoned; the values are chosen so that every sum is exact;
 * then compiles them for CUDA (NVRTC's PTX where present) and checks what
 * is refused.
 */
#include "kernel_test.h"

#define FILE_F4 "tests/run/kernels/fp4.py"

static const double fp4_table[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};

static TsKernel *compile_o(const char *entry, const char *const *defs, int n, const TsCompileOptions *o) {
    TsDefine d[10];
    char buf[10][96];
    for (int i = 0; i < n; i++) {
        snprintf(buf[i], sizeof buf[i], "%s", defs[i]);
        char *eq = strchr(buf[i], '=');
        *eq = 0;
        d[i].name = buf[i];
        d[i].value = eq + 1;
    }
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(kt_ctx, FILE_F4, entry, d, n, o, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) fprintf(stderr, "%s: %s\n", entry, ts_last_error(kt_ctx));
    return st == TS_OK ? k : NULL;
}

static int launch(TsKernel *k, TsTensor *args, int n) {
    TsStatus st = ts_kernel_launch(k, args, n);
    CHECK_EQ_INT(TS_OK, st);
    if (st != TS_OK) fprintf(stderr, "%s\n", ts_last_error(kt_ctx));
    return st == TS_OK;
}

/* The int8 tensor over n packed codes (n even). */
static TsTensor packed1(uint8_t *data, int64_t *shape, int64_t n) {
    shape[0] = n / 2;
    TsTensor p = {data, TS_INT8, 1, shape, NULL};
    return p;
}

static unsigned code_at(const uint8_t *b, int64_t i) { return (b[i / 2] >> (4 * (i % 2))) & 15u; }

static int same(double g, double w) { return g == w && signbit(g) == signbit(w); }

/* ---- the cast table ------------------------------------------------------------ */

typedef struct Case {
    double x;
    unsigned code;
} Case;

/* float -> code, by hand (the values; each midpoint and its neighbours below) */
static const Case cases[] = {
    {0.0, 0}, {-0.0, 8}, {0.1, 0}, {0.5, 1}, {1.0, 2}, {1.5, 3}, {2.0, 4}, {3.0, 5}, {4.0, 6}, {6.0, 7}, {6.5, 7},
    {7.0, 7}, {1e30, 7}, {INFINITY, 7}, {-0.5, 9}, {-6.0, 15}, {-100.0, 15}, {-INFINITY, 15}, {1e-30, 0},
    {-1e-30, 8}, {NAN, 7}, {0.3, 1}, {-2.9, 13}, {4.5, 6}, {-5.5, 15},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* Each midpoint with the codes of the value just below it (the next one the
 * source dtype holds), of itself (a tie: the even code) and just above it. */
static const struct { double m; unsigned lo, at, hi; } mids[] = {
    {0.25, 0, 0, 1}, {0.75, 1, 2, 2}, {1.25, 2, 2, 3}, {1.75, 3, 4, 4}, {2.5, 4, 4, 5}, {3.5, 5, 6, 6}, {5.0, 6, 6, 7},
};
#define NMIDS ((int)(sizeof mids / sizeof mids[0]))

/* The neighbour of m (positive, held by dt) one step up or down in dt. */
static double step(TsDType dt, double m, int up) {
    int p = dt == TS_FLOAT32 ? 24 : dt == TS_FLOAT16 ? 11 : 8, e;
    (void)frexp(m, &e); /* m = f 2^e, f in [0.5, 1) */
    double ulp = ldexp(1.0, e - p);
    double r = up ? m + ulp : m - (frexp(m, &e) == 0.5 ? ulp / 2 : ulp);
    return r;
}

/* The cases whose value the source dtype holds exactly (bfloat16 and
 * float16 do not hold 1e30 or 1e-30: those are skipped there). */
static int holds(TsDType dt, double x) { return isnan(x) || kt_round(dt, x) == x || isinf(x); }

/* The cases for source dtype dt: the table's it holds, and every midpoint's
 * three (which it must hold: checked). */
static int cases_for(TsDType dt, Case *use) {
    int n = 0;
    for (int i = 0; i < NCASES; i++)
        if (holds(dt, cases[i].x) && (dt != TS_FLOAT16 || fabs(cases[i].x) < 65504 || isinf(cases[i].x)))
            use[n++] = cases[i];
    for (int i = 0; i < NMIDS; i++)
        for (int sg = 0; sg < 2; sg++) {
            double v[3] = {step(dt, mids[i].m, 0), mids[i].m, step(dt, mids[i].m, 1)};
            unsigned c[3] = {mids[i].lo, mids[i].at, mids[i].hi};
            for (int k = 0; k < 3; k++) {
                CHECK(holds(dt, v[k]) && (k == 1) == (v[k] == mids[i].m));
                use[n].x = sg ? -v[k] : v[k];
                use[n++].code = c[k] | (sg ? 8u : 0u);
            }
        }
    return n;
}

static void check_to_fp4(const char *entry, TsDType src, const char *srcname) {
    int frag = strcmp(entry, "to_fp4") != 0;
    Case use[NCASES + 6 * NMIDS];
    int n = cases_for(src, use);
    /* to_fp4: N = 128 elements; to_fp4_frag: M x 16, M = 32 (two row blocks) */
    int64_t M = 32, total = frag ? M * 16 : 128;
    char d0[32], d1[32];
    snprintf(d0, sizeof d0, frag ? "M=%lld" : "N=%lld", (long long)(frag ? M : total));
    snprintf(d1, sizeof d1, "src=%s", srcname);
    const char *defs[3] = {d0, d1, "N=16"};
    TsKernel *k = compile_o(entry, defs, frag ? 3 : 2, &kt_opt);
    if (!k) return;
    TsTensor X = frag ? kt_tensor(src, 2, M, (int64_t)16) : kt_tensor(src, 1, total);
    unsigned want[512];
    for (int64_t i = 0; i < total; i++) { /* every case, then random ones */
        const Case *c = &use[i % n];
        ts_tensor_set(&X, i, c->x);
        want[i] = c->code;
    }
    uint8_t q[256];
    memset(q, 0x5a, sizeof q); /* poison: codes 10 and 5 */
    int64_t sq[2] = {frag ? M : total / 2, 8};
    TsTensor Q = {q, TS_INT8, frag ? 2 : 1, sq, NULL};
    TsTensor args[2] = {X, Q};
    if (launch(k, args, 2)) {
        int bad = 0;
        for (int64_t i = 0; i < total; i++)
            if (code_at(q, i) != want[i] && bad++ < 6)
                fprintf(stderr, "%s(%s): %.9g -> code %u, want %u\n", entry, srcname, use[i % n].x, code_at(q, i),
                        want[i]);
        CHECK_EQ_INT(0, bad);
    }
    ts_tensor_free(&X);
    ts_kernel_destroy(k);
}

static void check_from_fp4(TsDType dst, const char *dstname) {
    const int N = 64;
    char d0[32] = "N=64", d1[32];
    snprintf(d1, sizeof d1, "dst=%s", dstname);
    const char *defs[2] = {d0, d1};
    TsKernel *k = compile_o("from_fp4", defs, 2, &kt_opt);
    if (!k) return;
    uint8_t q[32];
    for (int i = 0; i < 32; i++) q[i] = (uint8_t)(((2 * i) & 15) | (((2 * i + 1) & 15) << 4)); /* codes 0..15, twice... */
    for (int i = 16; i < 32; i++) q[i] = (uint8_t)kt_randint(0, 255);                     /* ...then random bytes */
    int64_t sq[1];
    TsTensor Q = packed1(q, sq, N), Y = kt_tensor(dst, 1, (int64_t)N);
    kt_poison(&Y);
    TsTensor args[2] = {Q, Y};
    if (launch(k, args, 2)) {
        int bad = 0;
        for (int i = 0; i < N; i++) {
            double w = fp4_table[code_at(q, i)], g = ts_tensor_get(&Y, i);
            if (!same(g, w) && bad++ < 6) fprintf(stderr, "from_fp4(%s): code %u -> %g, want %g\n", dstname, code_at(q, i), g, w);
        }
        CHECK_EQ_INT(0, bad);
    }
    ts_tensor_free(&Y);
    ts_kernel_destroy(k);
}

/* The runtime's host tensors: ts_tensor_set packs the same codes. */
static void check_host(void) {
    Case use[NCASES + 6 * NMIDS];
    int n = cases_for(TS_FLOAT32, use);
    TsTensor t = kt_tensor(TS_FLOAT4_E2M1, 1, (int64_t)n + 1);
    CHECK_EQ_INT(1, ts_tensor_numel(&t) == n + 1);
    for (int i = 0; i < n; i++) ts_tensor_set(&t, i, use[i].x);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (code_at(t.data, i) != use[i].code && bad++ < 6)
            fprintf(stderr, "host: %.9g -> code %u, want %u\n", use[i].x, code_at(t.data, i), use[i].code);
        if (!same(ts_tensor_get(&t, i), fp4_table[use[i].code]) && bad++ < 6)
            fprintf(stderr, "host: element %d reads %g\n", i, ts_tensor_get(&t, i));
    }
    CHECK_EQ_INT(0, bad);
    ts_tensor_free(&t);
}

/* ---- quant ------------------------------------------------------------------------ */

/* The nearest table value of x (clamped to +-6 already), ties to the even
 * code: a plain search over the 8 magnitudes. */
static unsigned nearest_code(double x) {
    double m = fabs(x);
    unsigned best = 0;
    for (unsigned c = 1; c < 8; c++) {
        double d = fabs(fp4_table[c] - m), bd = fabs(fp4_table[best] - m);
        if (d < bd || (d == bd && c % 2 == 0)) best = c;
    }
    return best | (x < 0 || (x == 0 && signbit(x)) ? 8u : 0u);
}

static void check_quant(int64_t M, int64_t N) {
    char d0[32], d1[32];
    snprintf(d0, sizeof d0, "M=%lld", (long long)M);
    snprintf(d1, sizeof d1, "N=%lld", (long long)N);
    const char *defs[2] = {d0, d1};
    TsKernel *k = compile_o("quant", defs, 2, &kt_opt);
    if (!k) return;
    const int64_t G = 32;
    TsTensor X = kt_tensor(TS_BFLOAT16, 2, M, N), S = kt_tensor(TS_FLOAT32, 2, M, N / G);
    for (int64_t i = 0; i < M * N; i++) { /* normal-ish values, a few exact ties and zeros */
        double v = kt_uniform(-3, 3) * (1 + 10 * (i % 7 == 0));
        if (i % 11 == 0) v = 0.75 * (1 << (i % 5));
        if (i % 13 == 0) v = 0;
        ts_tensor_set(&X, i, v);
    }
    uint8_t *q = malloc((size_t)(M * N / 2));
    memset(q, 0x5a, (size_t)(M * N / 2));
    kt_poison(&S);
    int64_t sq[2] = {M, N / 2};
    TsTensor Q = {q, TS_INT8, 2, sq, NULL};
    TsTensor args[3] = {X, Q, S};
    if (launch(k, args, 3)) {
        int bad = 0;
        for (int64_t r = 0; r < M; r++)
            for (int64_t g = 0; g < N / G; g++) {
                double amax = 0;
                for (int64_t j = 0; j < G; j++) amax = fmax(amax, fabs(ts_tensor_get(&X, r * N + g * G + j)));
                amax = fmax(amax, 6 * ldexp(1, -126));
                double s = ldexp(1, (int)ceil(log2((double)(float)(amax * (float)(1.0 / 6.0)))));
                if (ts_tensor_get(&S, r * (N / G) + g) != s && bad++ < 6)
                    fprintf(stderr, "quant: scale[%lld, %lld] = %g, want %g\n", (long long)r, (long long)g,
                            ts_tensor_get(&S, r * (N / G) + g), s);
                for (int64_t j = 0; j < G; j++) {
                    int64_t i = r * N + g * G + j;
                    double y = (double)(float)(ts_tensor_get(&X, i) / s);
                    y = y > 6 ? 6 : y < -6 ? -6 : y;
                    unsigned want = nearest_code(y);
                    if (code_at(q, i) != want && bad++ < 6)
                        fprintf(stderr, "quant: x[%lld] = %g (/ %g): code %u, want %u\n", (long long)i,
                                ts_tensor_get(&X, i), s, code_at(q, i), want);
                }
            }
        CHECK_EQ_INT(0, bad);
    }
    free(q);
    ts_tensor_free(&X);
    ts_tensor_free(&S);
    ts_kernel_destroy(k);
}

/* Run-time extents: the packed tensor is (M, (N + 1) / 2) bytes, bound at launch. */
static void check_dyn(int64_t M, int64_t N) {
    TsKernel *k = compile_o("to_fp4_dyn", NULL, 0, &kt_opt);
    if (!k) return;
    TsTensor X = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_fill(&X, -7, 7);
    uint8_t *q = malloc((size_t)(M * N / 2));
    memset(q, 0x5a, (size_t)(M * N / 2));
    int64_t sq[2] = {M, N / 2};
    TsTensor Q = {q, TS_INT8, 2, sq, NULL};
    TsTensor args[2] = {X, Q};
    if (launch(k, args, 2)) {
        int bad = 0;
        for (int64_t i = 0; i < M * N; i++) {
            double x = ts_tensor_get(&X, i);
            unsigned want = nearest_code(x > 6 ? 6 : x < -6 ? -6 : x);
            if (code_at(q, i) != want && bad++ < 6)
                fprintf(stderr, "to_fp4_dyn %lldx%lld: %g -> code %u, want %u\n", (long long)M, (long long)N, x,
                        code_at(q, i), want);
        }
        CHECK_EQ_INT(0, bad);
    }
    free(q);
    ts_tensor_free(&X);
    ts_kernel_destroy(k);
}

/* ---- the block-scaled gemm --------------------------------------------------------- */

/* UE4M3 bytes the test draws scales from (values 0.5, 1, 1.5, 2: every sum exact). */
static const uint8_t sf_bytes[4] = {0x30, 0x38, 0x3C, 0x40};
static double ue4m3(uint8_t b) { return b == 0x30 ? 0.5 : b == 0x38 ? 1.0 : b == 0x3C ? 1.5 : 2.0; }

/* Semantic words [rows, K / 64] (byte j of word w scales K elements
 * 64 w + 16 j ..) placed for the kernel's SF tensor of kw words per row:
 *  - chunk_kmajor: TileLang's example helper (rows padded to 128, viewed
 *    as (row blocks, 4, 32, words), permuted to (row blocks, words, 32, 4)),
 *    then read as rows of kw words;
 *  - rowmajor: as they are, read as rows of kw words. */
static void place_words(const uint32_t *sem, int64_t rows, int64_t nw, int chunk, uint32_t *out) {
    if (!chunk) {
        memcpy(out, sem, sizeof(uint32_t) * (size_t)(rows * nw));
        return;
    }
    int64_t padded = (rows + 127) / 128 * 128;
    for (int64_t rb = 0; rb < padded / 128; rb++)
        for (int64_t c = 0; c < nw; c++)
            for (int64_t l = 0; l < 32; l++)
                for (int64_t s4 = 0; s4 < 4; s4++) {
                    int64_t row = rb * 128 + s4 * 32 + l;
                    out[((rb * nw + c) * 32 + l) * 4 + s4] = row < rows ? sem[row * nw + c] : 0;
                }
}

static void check_gemm(int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn, int64_t bk, int chunk) {
    char d[7][64];
    snprintf(d[0], 64, "M=%lld", (long long)M);
    snprintf(d[1], 64, "N=%lld", (long long)N);
    snprintf(d[2], 64, "K=%lld", (long long)K);
    snprintf(d[3], 64, "block_M=%lld", (long long)bm);
    snprintf(d[4], 64, "block_N=%lld", (long long)bn);
    snprintf(d[5], 64, "block_K=%lld", (long long)bk);
    snprintf(d[6], 64, "layout=%s", chunk ? "blockscaled_chunk_kmajor" : "rowmajor");
    const char *defs[7] = {d[0], d[1], d[2], d[3], d[4], d[5], d[6]};
    TsKernel *k = compile_o("gemm_bs", defs, 7, &kt_opt);
    if (!k) return;
    int64_t nw = K / 64, kw = bk / 64;
    int64_t Mp = chunk ? (M + 127) / 128 * 128 : M, Np = chunk ? (N + 127) / 128 * 128 : N;
    uint8_t *a = malloc((size_t)(M * K / 2)), *b = malloc((size_t)(N * K / 2));
    for (int64_t i = 0; i < M * K / 2; i++) a[i] = (uint8_t)kt_randint(0, 255);
    for (int64_t i = 0; i < N * K / 2; i++) b[i] = (uint8_t)kt_randint(0, 255);
    uint32_t *sa = malloc(sizeof(uint32_t) * (size_t)(M * nw)), *sb = malloc(sizeof(uint32_t) * (size_t)(N * nw));
    for (int64_t i = 0; i < M * nw; i++)
        sa[i] = sf_bytes[kt_randint(0, 3)] | (uint32_t)sf_bytes[kt_randint(0, 3)] << 8 |
                (uint32_t)sf_bytes[kt_randint(0, 3)] << 16 | (uint32_t)sf_bytes[kt_randint(0, 3)] << 24;
    for (int64_t i = 0; i < N * nw; i++)
        sb[i] = sf_bytes[kt_randint(0, 3)] | (uint32_t)sf_bytes[kt_randint(0, 3)] << 8 |
                (uint32_t)sf_bytes[kt_randint(0, 3)] << 16 | (uint32_t)sf_bytes[kt_randint(0, 3)] << 24;
    uint32_t *pa = calloc((size_t)(Mp * nw), sizeof(uint32_t)), *pb = calloc((size_t)(Np * nw), sizeof(uint32_t));
    place_words(sa, M, nw, chunk, pa);
    place_words(sb, N, nw, chunk, pb);
    int64_t shA[2] = {M, K / 2}, shB[2] = {N, K / 2}, shSA[2] = {Mp * nw / kw, kw}, shSB[2] = {Np * nw / kw, kw};
    TsTensor A = {a, TS_INT8, 2, shA, NULL}, B = {b, TS_INT8, 2, shB, NULL};
    TsTensor SA = {pa, TS_UINT32, 2, shSA, NULL}, SB = {pb, TS_UINT32, 2, shSB, NULL};
    TsTensor C = kt_tensor(TS_FLOAT32, 2, M, N);
    kt_poison(&C);
    TsTensor args[5] = {A, B, SA, SB, C};
    if (launch(k, args, 5)) {
        int bad = 0;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double want = 0;
                for (int64_t x = 0; x < K; x++) {
                    double av = fp4_table[code_at(a, i * K + x)] * ue4m3((uint8_t)(sa[i * nw + x / 64] >> (8 * ((x % 64) / 16))));
                    double bv = fp4_table[code_at(b, j * K + x)] * ue4m3((uint8_t)(sb[j * nw + x / 64] >> (8 * ((x % 64) / 16))));
                    want += av * bv;
                }
                double got = ts_tensor_get(&C, i * N + j);
                if (got != want && bad++ < 5)
                    fprintf(stderr, "gemm_bs %lldx%lldx%lld (%s): C[%lld, %lld] = %g, want %g\n", (long long)M,
                            (long long)N, (long long)K, chunk ? "chunk_kmajor" : "rowmajor", (long long)i, (long long)j,
                            got, want);
            }
        CHECK_EQ_INT(0, bad);
    }
    free(a);
    free(b);
    free(sa);
    free(sb);
    free(pa);
    free(pb);
    ts_tensor_free(&C);
    ts_kernel_destroy(k);
}

/* ---- CUDA ---------------------------------------------------------------------- */

static void check_cuda(void) {
    TsCompileOptions o = kt_opt;
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    const char *t[2] = {"N=128", "src=bfloat16"};
    const char *f[2] = {"N=64", "dst=float16"};
    const char *q[2] = {"M=64", "N=256"};
    const char *g[7] = {"M=256", "N=256", "K=512", "block_M=128", "block_N=128", "block_K=256", "layout=blockscaled_chunk_kmajor"};
    const char *fr[3] = {"M=64", "N=32", "src=float32"};
    TsKernel *ks[5] = {compile_o("to_fp4", t, 2, &o), compile_o("from_fp4", f, 2, &o), compile_o("quant", q, 2, &o),
                       compile_o("gemm_bs", g, 7, &o), compile_o("to_fp4_frag", fr, 3, &o)};
    for (int e = 0; e < 5; e++) {
        if (!ks[e]) continue;
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

/* ---- refusals ---------------------------------------------------------------------- */

static void refused(const char *src, TsStatus want, const char *line, const char *msg) {
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(kt_ctx, "f4.py", src, "main", NULL, 0, &kt_opt, &k);
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
    refused(HEAD "def main(A: T.Tensor((4, 7), T.float4_e2m1fn), C: T.Tensor((4,), \"float32\")):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        C[0] = A[0, 0]\n",
            TS_ERR_SHAPE, "f4.py:3:", "must be an even constant (two elements to a byte), not 7");
    refused(HEAD "def main(A: T.Tensor((4, 16), \"float32\"), Q: T.Tensor((4, 16), T.float4_e2m1fn)):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        for i, j in T.Parallel(4, 15):\n"
                 "            Q[i, j + 1] = A[i, j]\n",
            TS_ERR_UNSUPPORTED, "f4.py:6:", "must give each thread both elements of a byte");
    refused(HEAD "def main(A: T.Tensor((4, 16), T.float4_e2m1fn), C: T.Tensor((4,), \"float32\")):\n"
                 "    with T.Kernel(1, threads=32) as bx:\n"
                 "        S = T.alloc_shared((4, 8), T.float4_e2m1fn)\n"
                 "        T.copy(A[0, 3], S)\n"
                 "        C[0] = S[0, 0]\n",
            TS_ERR_SHAPE, "f4.py:6:", "T.copy of float4_e2m1fn tiles moves whole bytes");
    const char *gemm_head = HEAD "def main(A: T.Tensor((64, 128), T.float4_e2m1fn), B: T.Tensor((64, 128), T.float4_e2m1fn),\n"
                                 "         S: T.Tensor((64, 3), T.uint32), C: T.Tensor((64, 64), \"float32\")):\n"
                                 "    with T.Kernel(1, threads=128) as bx:\n"
                                 "        acc = T.alloc_fragment((64, 64), \"float32\")\n";
    char src[2048];
    snprintf(src, sizeof src, "%s        T.mma_gemm_blockscaled(A, B, acc, S, S, transpose_B=True, k_start=0,\n"
                              "            sf_a_granularity_k=32, sf_b_granularity_k=16)\n", gemm_head);
    refused(src, TS_ERR_TYPE, "f4.py:7:", "sf_a_granularity_k is 32: the NVFP4 form scales 16 K elements per byte");
    snprintf(src, sizeof src, "%s        T.mma_gemm_blockscaled(A, B, acc, C, S, transpose_B=True, k_start=0,\n"
                              "            sf_a_granularity_k=16, sf_b_granularity_k=16)\n", gemm_head);
    refused(src, TS_ERR_TYPE, "f4.py:7:", "scales SFA ('C') must be uint32, not float32");
    snprintf(src, sizeof src, "%s        T.mma_gemm_blockscaled(A, B, acc, S, S, transpose_B=True, k_start=0,\n"
                              "            sf_a_granularity_k=16, sf_b_granularity_k=16, sf_layout=\"blockscaled_chunk_kmajor\")\n",
             gemm_head);
    refused(src, TS_ERR_SHAPE, "f4.py:7:", "a tile of 64 rows (a multiple of 32) by K / 64 = 2 words, not 64 x 3");
    snprintf(src, sizeof src, "%s        T.mma_gemm_blockscaled(A, B, acc, S, S, transpose_B=True,\n"
                              "            sf_a_granularity_k=16, sf_b_granularity_k=16)\n", gemm_head);
    refused(src, TS_ERR_TYPE, "f4.py:7:", "needs an argument 'k_start'");
}

int main(void) {
    kt_init("test_fp4");
    check_host();
    check_from_fp4(TS_FLOAT32, "float32");
    check_from_fp4(TS_BFLOAT16, "bfloat16");
    check_from_fp4(TS_FLOAT16, "float16");
    check_to_fp4("to_fp4", TS_FLOAT32, "float32");
    check_to_fp4("to_fp4", TS_BFLOAT16, "bfloat16");
    check_to_fp4("to_fp4", TS_FLOAT16, "float16");
    check_to_fp4("to_fp4_frag", TS_FLOAT32, "float32");
    check_to_fp4("to_fp4_frag", TS_BFLOAT16, "bfloat16");
    check_quant(64, 128);
    check_quant(96, 64);
    check_dyn(5, 96);
    check_dyn(3, 32);
    check_gemm(128, 128, 256, 64, 64, 128, 0);
    check_gemm(128, 128, 256, 128, 128, 128, 1);
    check_gemm(256, 128, 512, 128, 128, 256, 1);
    check_cuda();
    check_errors();
    kt_finish();
    return test_done();
}
