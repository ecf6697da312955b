/*
 * prelude_c.c — the fixed text at the top of every generated C file:
 * includes, conversion and arithmetic helpers, the runtime ABI
 * declarations and their layout asserts, and the print helper.
 *
 * Kept apart from codegen_c.c because it is data, not logic: C source
 * held in string literals.  Everything here is `TS_INL` (static inline,
 * marked unused) so a kernel that needs none of it still compiles without
 * warnings under -Wall -Wextra on gcc and clang.  The helpers are the
 * semantics the code generator relies on:
 *
 *   ts_h2f/ts_f2h, ts_bf2f/ts_f2bf, ts_e4m3_2f/ts_f2e4m3, ts_e5m2_2f/...
 *       narrow floats <-> float; encode rounds to nearest even, float8
 *       saturates to the largest finite value (CUDA's satfinite);
 *   ts_div_i / ts_fdiv_i / ts_fmod_i ...  C and Python integer division,
 *       a zero divisor giving 0 (no trap);
 *   ts_ld_T / ts_st_T    acquire loads and release stores (blocking kernels);
 *   ts_atomic_add_*      fetch_add on integers, compare-and-swap loops on
 *                        float, double, float16, bfloat16, float8; each
 *                        returns the value before the add (T.atom_add's);
 *   ts_print             one line of T.print output through the callback.
 *
 * The ABI declarations are not written here: they are pasted from
 * c_target.h's TS_C_ABI block (ts_c_abi_source()), the same tokens the
 * library compiles, followed by _Static_asserts of this library's
 * sizeof/offsetof values.
 */
#include "target/c/c_target.h"

#include <stddef.h>

/* ---- the prelude: helpers every generated file carries ------------------ */

static const char *const prelude[] = {
    "#include <stdint.h>\n#include <stddef.h>\n#include <stdbool.h>\n",
    "#include <string.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <stdarg.h>\n#include <math.h>\n#include <setjmp.h>\n\n",
    "#define TS_EXPORT __attribute__((visibility(\"default\")))\n",
    "#define TS_INL static inline __attribute__((unused))\n",
    /* Innermost T.Parallel loops carry no dependence between iterations
     * (that is what T.Parallel means); telling GCC lets it vectorize them
     * without run-time alias checks, which -O2's cost model refuses. */
    "#if defined(__GNUC__) && !defined(__clang__)\n#define TS_IVDEP _Pragma(\"GCC ivdep\")\n#else\n#define TS_IVDEP\n#endif\n\n",
    /* float16 <-> float, round to nearest even */
    /* exponent and mantissa moved into float position, then rebiased by
     * multiplying with 2^112 (exact, subnormals included); inf/NaN get
     * the all-ones exponent.  Branch-free, so loops vectorize. */
    "TS_INL float ts_h2f(uint16_t h) {\n"
    "    uint32_t em = h & 0x7fffu, x = em << 13, y;\n"
    "    float f;\n"
    "    memcpy(&f, &x, 4);\n"
    "    f *= 0x1p112f;\n"
    "    memcpy(&y, &f, 4);\n"
    "    y = em >= 0x7c00u ? (x | 0x7f800000u) : y;\n"
    "    y |= (uint32_t)(h & 0x8000u) << 16;\n"
    "    memcpy(&f, &y, 4);\n"
    "    return f;\n"
    "}\n",
    "TS_INL uint16_t ts_f2h(float f) {\n"
    "    uint32_t x, s, a, r, q, rem;\n"
    "    memcpy(&x, &f, 4);\n"
    "    s = (x >> 16) & 0x8000u;\n"
    "    a = x & 0x7fffffffu;\n"
    "    if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));\n"
    "    if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);\n"
    "    if (a < 0x38800000u) {\n"
    "        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, sh;\n"
    "        if (a < 0x33000000u) return (uint16_t)s;\n"
    "        sh = 126u - e;\n"
    "        q = m >> sh;\n"
    "        rem = m & ((1u << sh) - 1u);\n"
    "        r = 1u << (sh - 1u);\n"
    "        if (rem > r || (rem == r && (q & 1u))) q++;\n"
    "        return (uint16_t)(s | q);\n"
    "    }\n"
    "    r = a - 0x38000000u;\n"
    "    q = r >> 13;\n"
    "    rem = r & 0x1fffu;\n"
    "    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;\n"
    "    return (uint16_t)(s | q);\n"
    "}\n",
    /* bfloat16 */
    "TS_INL float ts_bf2f(uint16_t h) {\n"
    "    uint32_t x = (uint32_t)h << 16;\n"
    "    float f;\n"
    "    memcpy(&f, &x, 4);\n"
    "    return f;\n"
    "}\n"
    "TS_INL uint16_t ts_f2bf(float f) {\n"
    "    uint32_t x;\n"
    "    memcpy(&x, &f, 4);\n"
    "    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);\n"
    "    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
    "}\n",
    /* fp8: decode is exact; encode rounds to nearest even and saturates */
    "TS_INL float ts_fp8_dec(uint8_t v, int mbits, int bias, int ieee) {\n"
    "    int e = (v & 0x7f) >> mbits, m = v & ((1 << mbits) - 1), emax = (0x7f >> mbits);\n"
    "    float f;\n"
    "    if (ieee && e == emax) f = m ? NAN : INFINITY;\n"
    "    else if (!ieee && e == emax && m == (1 << mbits) - 1) f = NAN;\n"
    "    else if (e == 0) f = ldexpf((float)m, 1 - bias - mbits);\n"
    "    else f = ldexpf((float)(m + (1 << mbits)), e - bias - mbits);\n"
    "    return (v & 0x80) ? -f : f;\n"
    "}\n"
    "TS_INL uint8_t ts_fp8_enc(float f, int mbits, int bias, float maxv, uint8_t nan) {\n"
    "    uint8_t s = signbit(f) ? 0x80 : 0;\n"
    "    float a = fabsf(f), q, v;\n"
    "    int ex, code;\n"
    "    if (isnan(f)) return (uint8_t)(s | nan);\n"
    "    if (a >= maxv) v = maxv;\n"
    "    else {\n"
    "        frexpf(a, &ex);\n"
    "        ex -= 1;\n"
    "        if (ex < 1 - bias) ex = 1 - bias;\n"
    "        q = ldexpf(1.0f, ex - mbits);\n"
    "        v = nearbyintf(a / q) * q;\n"
    "        if (v > maxv) v = maxv;\n"
    "    }\n"
    "    if (v < ldexpf(1.0f, 1 - bias)) code = (int)(v / ldexpf(1.0f, 1 - bias - mbits));\n"
    "    else {\n"
    "        frexpf(v, &ex);\n"
    "        ex -= 1;\n"
    "        code = ((ex + bias) << mbits) | (int)(ldexpf(v, mbits - ex) - (float)(1 << mbits));\n"
    "    }\n"
    "    return (uint8_t)(s | code);\n"
    "}\n"
    "TS_INL float ts_e4m3_2f(uint8_t v) { return ts_fp8_dec(v, 3, 7, 0); }\n"
    "TS_INL uint8_t ts_f2e4m3(float f) { return ts_fp8_enc(f, 3, 7, 448.0f, 0x7f); }\n"
    "TS_INL float ts_e5m2_2f(uint8_t v) { return ts_fp8_dec(v, 2, 15, 1); }\n"
    "TS_INL uint8_t ts_f2e5m2(float f) { return ts_fp8_enc(f, 2, 15, 57344.0f, 0x7f); }\n",
    /* integer division with Python / C semantics, zero divisor -> 0 */
    "TS_INL int64_t ts_div_i(int64_t a, int64_t b) {\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (int64_t)(0 - (uint64_t)a);\n"
    "    return a / b;\n"
    "}\n"
    "TS_INL int64_t ts_fdiv_i(int64_t a, int64_t b) {\n"
    "    int64_t q;\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (int64_t)(0 - (uint64_t)a);\n"
    "    q = a / b;\n"
    "    if (a % b != 0 && ((a < 0) != (b < 0))) q--;\n"
    "    return q;\n"
    "}\n"
    "TS_INL int64_t ts_fmod_i(int64_t a, int64_t b) {\n"
    "    int64_t r;\n"
    "    if (b == 0 || b == -1) return 0;\n"
    "    r = a % b;\n"
    "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
    "    return r;\n"
    "}\n"
    "TS_INL uint32_t ts_div_u(uint32_t a, uint32_t b) { return b ? a / b : 0u; }\n"
    "TS_INL uint32_t ts_mod_u(uint32_t a, uint32_t b) { return b ? a % b : 0u; }\n"
    "TS_INL uint64_t ts_div_U(uint64_t a, uint64_t b) { return b ? a / b : 0u; }\n"
    "TS_INL uint64_t ts_mod_U(uint64_t a, uint64_t b) { return b ? a % b : 0u; }\n"
    "TS_INL float ts_fdiv_f(float a, float b) { return floorf(a / b); }\n"
    "TS_INL double ts_fdiv_d(double a, double b) { return floor(a / b); }\n"
    "TS_INL float ts_fmod_f(float a, float b) { return a - floorf(a / b) * b; }\n"
    "TS_INL double ts_fmod_d(double a, double b) { return a - floor(a / b) * b; }\n",
    "TS_INL int64_t ts_shl_i(int64_t a, int64_t b) { return (int64_t)((uint64_t)a << (b & 63)); }\n"
    "TS_INL int64_t ts_shr_i(int64_t a, int64_t b) { return a >> (b & 63); }\n"
    "TS_INL int64_t ts_pow_i(int64_t a, int64_t b) {\n"
    "    uint64_t r = 1, x = (uint64_t)a;\n"
    "    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "    for (; b; b >>= 1, x *= x)\n"
    "        if (b & 1) r *= x;\n"
    "    return (int64_t)r;\n"
    "}\n"
    "TS_INL int64_t ts_abs_i(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }\n"
    "TS_INL int64_t ts_min_i(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "TS_INL int64_t ts_max_i(int64_t a, int64_t b) { return a > b ? a : b; }\n"
    "TS_INL uint32_t ts_min_u(uint32_t a, uint32_t b) { return a < b ? a : b; }\n"
    "TS_INL uint32_t ts_max_u(uint32_t a, uint32_t b) { return a > b ? a : b; }\n"
    "TS_INL uint64_t ts_min_U(uint64_t a, uint64_t b) { return a < b ? a : b; }\n"
    "TS_INL uint64_t ts_max_U(uint64_t a, uint64_t b) { return a > b ? a : b; }\n"
    "TS_INL float ts_min_f(float a, float b) { return fminf(a, b); }\n"
    "TS_INL float ts_max_f(float a, float b) { return fmaxf(a, b); }\n"
    "TS_INL double ts_min_d(double a, double b) { return fmin(a, b); }\n"
    "TS_INL double ts_max_d(double a, double b) { return fmax(a, b); }\n"
    "TS_INL float ts_sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }\n"
    "TS_INL double ts_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }\n"
    "TS_INL float ts_exp10_f(float x) { return powf(10.0f, x); }\n"
    "TS_INL double ts_exp10_d(double x) { return pow(10.0, x); }\n",
    /* acquire loads / release stores for blocking kernels */
    "#define TS_LDST(T) \\\n"
    "    TS_INL T ts_ld_##T(const T *p) { T v; __atomic_load(p, &v, __ATOMIC_ACQUIRE); return v; } \\\n"
    "    TS_INL void ts_st_##T(T *p, T v) { __atomic_store(p, &v, __ATOMIC_RELEASE); }\n"
    "TS_LDST(int8_t) TS_LDST(uint8_t) TS_LDST(int16_t) TS_LDST(uint16_t) TS_LDST(int32_t)\n"
    "TS_LDST(uint32_t) TS_LDST(int64_t) TS_LDST(uint64_t) TS_LDST(float) TS_LDST(double)\n",
    /* atomic adds: read-modify-write with compare-and-swap where needed */
    "#define TS_ATOMIC_ADD_INT(T) \\\n"
    "    TS_INL T ts_atomic_add_##T(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }\n"
    "TS_ATOMIC_ADD_INT(int8_t) TS_ATOMIC_ADD_INT(uint8_t) TS_ATOMIC_ADD_INT(int16_t)\n"
    "TS_ATOMIC_ADD_INT(uint16_t) TS_ATOMIC_ADD_INT(int32_t) TS_ATOMIC_ADD_INT(uint32_t)\n"
    "TS_ATOMIC_ADD_INT(int64_t) TS_ATOMIC_ADD_INT(uint64_t)\n"
    "#define TS_ATOMIC_ADD_CAS(N, T, C, DEC, ENC) \\\n"
    "    TS_INL C ts_atomic_add_##N(T *p, C v) { \\\n"
    "        T o, n; \\\n"
    "        __atomic_load(p, &o, __ATOMIC_RELAXED); \\\n"
    "        do n = ENC(DEC(o) + v); \\\n"
    "        while (!__atomic_compare_exchange(p, &o, &n, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)); \\\n"
    "        return DEC(o); \\\n"
    "    }\n"
    "#define TS_ID(x) (x)\n"
    "TS_ATOMIC_ADD_CAS(float, float, float, TS_ID, TS_ID)\n"
    "TS_ATOMIC_ADD_CAS(double, double, double, TS_ID, TS_ID)\n"
    "TS_ATOMIC_ADD_CAS(f16, uint16_t, float, ts_h2f, ts_f2h)\n"
    "TS_ATOMIC_ADD_CAS(bf16, uint16_t, float, ts_bf2f, ts_f2bf)\n"
    "TS_ATOMIC_ADD_CAS(e4m3, uint8_t, float, ts_e4m3_2f, ts_f2e4m3)\n"
    "TS_ATOMIC_ADD_CAS(e5m2, uint8_t, float, ts_e5m2_2f, ts_f2e5m2)\n\n",
    NULL};

/* The print helper needs the ABI structs, so it comes after them. */
static const char print_helper[] =
    "__attribute__((format(printf, 4, 5)))\n"
    "TS_INL void ts_print(const TsCArgs *ts_a, const TsCBlock *ts_b, const char *msg,\n"
    "                            const char *fmt, ...) {\n"
    "    char small[512], *line = small;\n"
    "    va_list ap;\n"
    "    int n1 = snprintf(NULL, 0, \"%s%sblock (%lld, %lld, %lld): \", msg, msg[0] ? \": \" : \"\",\n"
    "                      (long long)ts_b->idx[0], (long long)ts_b->idx[1], (long long)ts_b->idx[2]);\n"
    "    va_start(ap, fmt);\n"
    "    int n2 = vsnprintf(NULL, 0, fmt, ap);\n"
    "    va_end(ap);\n"
    "    if (n1 < 0 || n2 < 0) return;\n"
    "    size_t len = (size_t)n1 + (size_t)n2 + 2; /* the whole line, never cut */\n"
    "    if (len > sizeof small && !(line = malloc(len))) return;\n"
    "    snprintf(line, len, \"%s%sblock (%lld, %lld, %lld): \", msg, msg[0] ? \": \" : \"\",\n"
    "             (long long)ts_b->idx[0], (long long)ts_b->idx[1], (long long)ts_b->idx[2]);\n"
    "    va_start(ap, fmt);\n"
    "    vsnprintf(line + n1, len - (size_t)n1, fmt, ap);\n"
    "    va_end(ap);\n"
    "    line[n1 + n2] = '\\n';\n"
    "    line[n1 + n2 + 1] = 0;\n"
    "    if (ts_a->print) ts_a->print(ts_a->print_ctx, line);\n"
    "    else fputs(line, stdout);\n"
    "    if (line != small) free(line);\n"
    "}\n\n";

/* ---- ABI text and layout asserts ----------------------------------------- */

/* Re-indent the one-line stringified ABI declarations: a newline after
 * `{` and `;`, one before `}`. */
static void emit_abi_text(TsBuf *o) {
    const char *s = ts_c_abi_source();
    int depth = 0, bol = 1;
    for (; *s; s++) {
        if (bol && *s == ' ') continue;
        if (*s == '}') {
            depth--;
            if (!bol) ts_buf_puts(o, "\n");
            ts_buf_indent(o, depth);
            bol = 0;
        } else if (bol) {
            ts_buf_indent(o, depth);
            bol = 0;
        }
        ts_buf_putn(o, s, 1);
        if (*s == '{') depth++;
        if (*s == '{' || (*s == ';' && depth >= 0)) {
            ts_buf_puts(o, "\n");
            bol = 1;
        }
    }
    if (!bol) ts_buf_puts(o, "\n");
}

#define ARGS_FIELDS(X)                                                         \
    X(abi_version) X(nparams) X(data) X(shape) X(strides) X(shape_vars) X(rank) \
    X(nranks) X(yield) X(print) X(print_ctx) X(fault) X(fault_ctx) X(peer_base) X(heap_bytes) \
    X(sync_words) X(aborted) X(wait_timeout_ms) X(fail) X(fail_ctx) X(now_ms) X(threads) X(tbar) X(warp) \
    X(ranks_per_node) X(xport) X(xport_ctx) X(sync_off) X(grid_ws)
#define BLOCK_FIELDS(X) X(idx) X(scratch) X(yield_ctx)
#define INFO_FIELDS(X) X(abi_version) X(nparams) X(nshape_vars) X(may_block) X(scratch_bytes) X(name) X(grid_ws_bytes)

void ts_c_emit_abi_asserts(TsBuf *o) {
#define SIZE(T) ts_buf_printf(o, "_Static_assert(sizeof(" #T ") == %zu, \"ABI: " #T "\");\n", sizeof(T));
#define OFF(T, f)                                                                              \
    ts_buf_printf(o, "_Static_assert(offsetof(" #T ", " #f ") == %zu, \"ABI: " #T "." #f "\");\n", \
                  offsetof(T, f));
#define OFF_ARGS(f) OFF(TsCArgs, f)
#define OFF_BLOCK(f) OFF(TsCBlock, f)
#define OFF_INFO(f) OFF(TsCInfo, f)
    SIZE(TsCArgs) ARGS_FIELDS(OFF_ARGS)
    SIZE(TsCBlock) BLOCK_FIELDS(OFF_BLOCK)
    SIZE(TsCInfo) INFO_FIELDS(OFF_INFO)
#undef SIZE
#undef OFF
#undef OFF_ARGS
#undef OFF_BLOCK
#undef OFF_INFO
}

void ts_c_emit_prelude(TsBuf *o) {
    for (int i = 0; prelude[i]; i++) ts_buf_puts(o, prelude[i]);
    ts_buf_puts(o, "/* The runtime ABI (src/target/c/c_target.h). */\n");
    emit_abi_text(o);
    ts_c_emit_abi_asserts(o);
    ts_buf_puts(o, "\n");
    ts_buf_puts(o, print_helper);
}
