/*
 * test_reinterpret.c — T.reinterpret(value, dtype) and TVM's tir.const /
 * tir.reinterpret / tir.Select (`from tvm import tirx`, TileLang's
 * dequantization examples) on the C target, against bit patterns computed
 * here with memcpy and shifts on fresh random data.
 *
 * The kernels read the bits of float32, float16, bfloat16 and int8 values
 * as unsigned integers of the same width and back (random bit patterns,
 * NaNs avoided since a NaN compares unequal to itself), the two sign-
 * ordering keys of TileLang's deepseek_v32/topk_selector, and the 4-bit
 * unpacking helpers of dequantize_gemm (int4 -> int8 by a shift pair and
 * fp4 e2m1 -> float16 by assembling the half's bits) as those examples
 * write them.  Every output is poisoned first and compared bit for bit.
 * A width mismatch is an error with file:line:col.  The same kernels run
 * through the CUDA passes in the thread-level interpreter
 * (tests/unit/test_interp_examples.c: tests/run/kernels/reinterpret.py).
 */
#include "kernel_test.h"

#define N 300

static const char *SRC_BITS = KT_PRELUDE
    "@tilelang.jit\n"
    "def bits(n, blk=64):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((n,), 'float32'), H: T.Tensor((n,), 'float16'), B: T.Tensor((n,), 'bfloat16'),\n"
    "             I: T.Tensor((n,), 'int8'), U: T.Tensor((n,), 'uint32'), V: T.Tensor((n,), 'int16'),\n"
    "             XU: T.Tensor((n,), 'uint32'), HU: T.Tensor((n,), 'uint16'), BU: T.Tensor((n,), 'int16'),\n"
    "             IU: T.Tensor((n,), 'uint8'), UF: T.Tensor((n,), 'float32'), VH: T.Tensor((n,), 'float16'),\n"
    "             VB: T.Tensor((n,), 'bfloat16'), K: T.Tensor((n,), 'uint32')):\n"
    "        with T.Kernel(T.ceildiv(n, blk), threads=64) as bx:\n"
    "            for i in T.Parallel(blk):\n"
    "                j = bx * blk + i\n"
    "                if j < n:\n"
    "                    XU[j] = T.reinterpret(X[j], T.uint32)\n"
    "                    HU[j] = T.reinterpret(H[j], 'uint16')\n"
    "                    BU[j] = T.reinterpret(B[j], dtype=T.int16)\n"
    "                    IU[j] = T.reinterpret(I[j] + T.int8(1), T.uint8)\n"
    "                    UF[j] = T.reinterpret(U[j], T.float32) * 2.0\n"
    "                    VH[j] = T.reinterpret(V[j], T.float16)\n"
    "                    VB[j] = T.reinterpret(V[j], T.bfloat16)\n"
    "                    x = X[j]\n"
    "                    u = T.reinterpret(x, T.uint32)\n"
    "                    K[j] = T.if_then_else(x < 0, ~u & T.cast(0xFFFFFFFF, T.uint32),\n"
    "                                          u | T.cast(0x80000000, T.uint32))\n"
    "    return main\n";

/* dequantize_gemm/example_dequant_gemm_w4a8.py's and _fp4_hopper.py's helpers */
static const char *SRC_TIR = KT_PRELUDE
    "from tvm import tirx\n"
    "def u8_to_i8(nbit, val, pos, dtype):\n"
    "    assert val.dtype == T.uint8\n"
    "    mask = tirx.const((1 << nbit) - 1, T.uint8)\n"
    "    i4 = (val >> (pos.astype(T.uint8) * tirx.const(nbit, T.uint8))) & mask\n"
    "    i8_shifted = tirx.reinterpret(T.int8, i4 << tirx.const(4, T.uint8))\n"
    "    return i8_shifted >> tirx.const(4, T.int8)\n"
    "def u8_to_f16(nbit, val, pos, dtype):\n"
    "    mask = tirx.const((1 << nbit) - 1, T.uint16)\n"
    "    f4 = (val >> (pos.astype(T.uint16) * tirx.const(nbit, T.uint16))) & mask\n"
    "    s = f4 >> tirx.const(3, T.uint16)\n"
    "    e_f4 = (f4 & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)\n"
    "    e_f16 = e_f4 + tirx.const(14, T.uint16)\n"
    "    m_f16 = f4 & tirx.const(1, T.uint16)\n"
    "    return tirx.reinterpret(T.float16, ((e_f16 | (s << tirx.const(5, T.uint16))) << tirx.const(10, T.uint16)\n"
    "                                        | m_f16 << tirx.const(9, T.uint16)).astype(T.uint16))\n"
    "@tilelang.jit\n"
    "def unpack(R, C):\n"
    "    @T.prim_func\n"
    "    def main(Q: T.Tensor((R, C // 2), 'uint8'), O: T.Tensor((R, C), 'int8'), F: T.Tensor((R, C), 'float16'),\n"
    "             S: T.Tensor((R, C), 'float32')):\n"
    "        with T.Kernel(R, threads=32) as bx:\n"
    "            for j in T.Parallel(C):\n"
    "                O[bx, j] = u8_to_i8(4, Q[bx, j // 2], j % 2, dtype=T.int8)\n"
    "                F[bx, j] = u8_to_f16(4, Q[bx, j // 2], j % 2, dtype=T.float16)\n"
    "                S[bx, j] = tirx.Select(j % 3 == 0, tirx.const(1.5), tirx.Cast(T.float32, j))\n"
    "    return main\n";

static const char *SRC_BAD = KT_PRELUDE
    "@T.prim_func\n"
    "def bad(X: T.Tensor((8,), 'float16'), Y: T.Tensor((8,), 'uint32')):\n"
    "    with T.Kernel(1, threads=8) as bx:\n"
    "        for i in T.Parallel(8):\n"
    "            Y[i] = T.reinterpret(X[i], T.uint32)\n";

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A random uint32 that is not a NaN's bit pattern as a float32. */
static uint32_t rand_f32_bits(void) {
    for (;;) {
        uint32_t u = (uint32_t)kt_next();
        if ((u & 0x7f800000u) != 0x7f800000u) return u;
    }
}

static void test_bits(void) {
    TsKernel *k = kt_compile(SRC_BITS, "bits", "n=300");
    if (!k) return;
    TsTensor t[14];
    static const TsDType dts[14] = {TS_FLOAT32, TS_FLOAT16, TS_BFLOAT16, TS_INT8,   TS_UINT32, TS_INT16,    TS_UINT32,
                                    TS_UINT16,  TS_INT16,   TS_UINT8,    TS_FLOAT32, TS_FLOAT16, TS_BFLOAT16, TS_UINT32};
    for (int i = 0; i < 14; i++) t[i] = kt_tensor(dts[i], 1, (int64_t)N);
    kt_fill(&t[0], -1e6, 1e6);
    for (int i = 0; i < N; i += 7) ((float *)t[0].data)[i] = (float)kt_uniform(-1e-38, 1e-38); /* subnormals */
    ((float *)t[0].data)[3] = -0.0f;
    kt_fill(&t[1], -6e4, 6e4);
    kt_fill(&t[2], -1e30, 1e30);
    kt_fill(&t[3], -128, 126);
    uint32_t *u = t[4].data;
    for (int i = 0; i < N; i++) u[i] = rand_f32_bits();
    int16_t *v = t[5].data;
    for (int i = 0; i < N; i++) {
        uint16_t w;
        do w = (uint16_t)kt_next(); /* not a NaN as float16 (exponent all ones) nor as bfloat16 */
        while ((w & 0x7c00u) == 0x7c00u || (w & 0x7f80u) == 0x7f80u);
        v[i] = (int16_t)w;
    }
    for (int i = 6; i < 14; i++) kt_poison(&t[i]);
    if (kt_launch(k, t, 14)) {
        int bad = 0;
        for (int i = 0; i < N && bad < 5; i++) {
            float x = ((float *)t[0].data)[i];
            uint32_t want_k = x < 0 ? ~f32_bits(x) : f32_bits(x) | 0x80000000u;
            float want_uf = 0;
            memcpy(&want_uf, &u[i], 4);
            want_uf *= 2.0f;
            struct { const char *what; uint64_t got, want; } c[] = {
                {"XU", ((uint32_t *)t[6].data)[i], f32_bits(x)},
                {"HU", ((uint16_t *)t[7].data)[i], ((uint16_t *)t[1].data)[i]},
                {"BU", (uint16_t)((int16_t *)t[8].data)[i], ((uint16_t *)t[2].data)[i]},
                {"IU", ((uint8_t *)t[9].data)[i], (uint8_t)(((int8_t *)t[3].data)[i] + 1)},
                {"UF", f32_bits(((float *)t[10].data)[i]), f32_bits(want_uf)},
                {"VH", ((uint16_t *)t[11].data)[i], (uint16_t)v[i]},
                {"VB", ((uint16_t *)t[12].data)[i], (uint16_t)v[i]},
                {"K", ((uint32_t *)t[13].data)[i], want_k},
            };
            for (size_t j = 0; j < sizeof c / sizeof *c; j++)
                if (c[j].got != c[j].want) {
                    printf("  %s[%d]: got 0x%llx, want 0x%llx\n", c[j].what, i, (unsigned long long)c[j].got,
                           (unsigned long long)c[j].want);
                    bad++;
                }
        }
        CHECK(bad == 0);
        /* the key orders as the floats do (what topk_selector relies on) */
        int order_ok = 1;
        for (int i = 1; i < N; i++) {
            float a = ((float *)t[0].data)[i - 1], b = ((float *)t[0].data)[i];
            uint32_t ka = ((uint32_t *)t[13].data)[i - 1], kb = ((uint32_t *)t[13].data)[i];
            if ((a < b && !(ka < kb)) || (a > b && !(ka > kb))) order_ok = 0;
        }
        CHECK(order_ok);
    }
    for (int i = 0; i < 14; i++) ts_tensor_free(&t[i]);
    ts_kernel_destroy(k);
}

static void test_tir(void) {
    const int R = 5, C = 64;
    TsKernel *k = kt_compile(SRC_TIR, "unpack", "R=5 C=64");
    if (!k) return;
    TsTensor q = kt_tensor(TS_UINT8, 2, (int64_t)R, (int64_t)C / 2), o = kt_tensor(TS_INT8, 2, (int64_t)R, (int64_t)C);
    TsTensor f = kt_tensor(TS_FLOAT16, 2, (int64_t)R, (int64_t)C), s = kt_tensor(TS_FLOAT32, 2, (int64_t)R, (int64_t)C);
    kt_fill(&q, 0, 255);
    kt_poison(&o);
    kt_poison(&f);
    kt_poison(&s);
    TsTensor args[4] = {q, o, f, s};
    if (kt_launch(k, args, 4)) {
        int bad = 0;
        const uint8_t *qb = q.data;
        for (int r = 0; r < R; r++)
            for (int j = 0; j < C; j++) {
                unsigned nib = (qb[r * (C / 2) + j / 2] >> (4 * (j % 2))) & 15u;
                int want_o = nib >= 8 ? (int)nib - 16 : (int)nib; /* the nibble as a signed 4-bit value */
                /* e2m1 -> half: sign bit 15, exponent e + 14 at bit 10, mantissa at bit 9 */
                uint16_t want_f = (uint16_t)(((nib >> 3) << 15) | ((((nib >> 1) & 3u) + 14u) << 10) | ((nib & 1u) << 9));
                float want_s = j % 3 == 0 ? 1.5f : (float)j;
                int got_o = ((int8_t *)o.data)[r * C + j];
                uint16_t got_f = ((uint16_t *)f.data)[r * C + j];
                float got_s = ((float *)s.data)[r * C + j];
                if ((got_o != want_o || got_f != want_f || got_s != want_s) && bad++ < 5)
                    printf("  [%d,%d] nibble %u: int8 %d (want %d), half 0x%04x (want 0x%04x), select %g (want %g)\n", r,
                           j, nib, got_o, want_o, got_f, want_f, got_s, want_s);
            }
        CHECK(bad == 0);
    }
    ts_tensor_free(&q);
    ts_tensor_free(&o);
    ts_tensor_free(&f);
    ts_tensor_free(&s);
    ts_kernel_destroy(k);
}

static void test_bad(void) {
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(kt_ctx, "bad.py", SRC_BAD, "bad", NULL, 0, &kt_opt, &k);
    CHECK(st != TS_OK);
    const char *e = ts_last_error(kt_ctx);
    printf("  %s\n", e);
    CHECK(strstr(e, "bad.py:7:22: error:") != NULL);
    CHECK(strstr(e, "float16 (16 bits) read as uint32 (32 bits)") != NULL);
    if (k) ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_reinterpret");
    test_bits();
    test_tir();
    test_bad();
    kt_finish();
    return test_done();
}
