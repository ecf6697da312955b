/*
 * test_codegen_c.c — the C backend end to end on hand-built IR: codegen,
 * build (disk cache, compiler errors, ABI asserts), launch (argument
 * checks, shape variables, strides, scalars) and the semantics of the
 * generated code (integer division, conversions, intrinsics, atomics,
 * printing), each compared against an independent reference computed here
 * on fresh random data.
 */
#include "core.h"
#include "runtime/launch.h"
#include "target/c/c_target.h"
#include "test.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- IR building shorthands --------------------------------------------- */

static TsArena *ar;
#define I(v) ir_i32(ar, (v))
#define F(v) ir_float(ar, (v), TS_FLOAT32)
#define VR(v) ir_var_ref(ar, (v))
#define BIN(op, x, y) ir_bin(ar, (op), (x), (y))

static IrExpr *ld(IrBuffer *b, int n, ...) {
    IrExpr *idx[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) idx[i] = va_arg(ap, IrExpr *);
    va_end(ap);
    return ir_load(ar, b, idx, n);
}

static IrStmt *st(IrBuffer *b, IrExpr *v, int n, ...) {
    IrExpr *idx[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) idx[i] = va_arg(ap, IrExpr *);
    va_end(ap);
    return ir_store(ar, b, idx, n, v);
}

static IrStmt *seq(int n, ...) {
    IrStmt *s = ir_seq(ar);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) ir_seq_push(ar, s, va_arg(ap, IrStmt *));
    va_end(ap);
    return s;
}

static IrStmt *if_(IrExpr *c, IrStmt *t, IrStmt *e) {
    IrStmt *s = ir_stmt(ar, IR_S_IF, (TsLoc){0});
    s->if_.cond = c;
    s->if_.then = t;
    s->if_.else_ = e;
    return s;
}

static IrExpr *call1(IrIntrinsic fn, IrExpr *x) { return ir_call(ar, fn, &x, 1, x->dt); }

static IrBuffer *param_buf(IrKernel *k, const char *name, TsDType dt, int ndim, IrExpr **shape) {
    IrBuffer *b = ir_buffer(k, name, dt, IR_SCOPE_GLOBAL, ndim, shape, (TsLoc){0});
    b->param = k->params.n;
    IrParam p = {b->name, b, NULL, 0};
    ts_vec_push(ar, k->params, p);
    return b;
}

static IrVar *param_scalar(IrKernel *k, const char *name, TsDType dt) {
    IrVar *v = ir_var(k, name, dt, IR_VAR_SCALAR);
    v->axis = k->params.n;
    IrParam p = {v->name, NULL, v, 0};
    ts_vec_push(ar, k->params, p);
    return v;
}

static IrKernel *kernel(const char *name, IrExpr *gx) {
    IrKernel *k = ir_kernel_new(ar, name);
    k->grid[0] = gx;
    k->block_idx[0] = ir_var(k, "bx", TS_INT32, IR_VAR_BLOCK_IDX);
    k->block_idx[0]->axis = 0;
    return k;
}

/* ---- compile and launch ----------------------------------------------------- */

static char cache[256];

/* The generated file must be warning-free under -Wall -Wextra -Werror,
 * with every compiler we can find. */
static void warn_check(const char *code) {
    static const char *ccs[] = {"gcc", "clang"};
    char path[300];
    snprintf(path, sizeof path, "%s/warn.c", cache);
    FILE *f = fopen(path, "w");
    if (!f) {
        CHECK(0);
        return;
    }
    fputs(code, f);
    fclose(f);
    for (int c = 0; c < 2; c++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", ccs[c]);
        if (system(cmd) != 0) continue;
        snprintf(cmd, sizeof cmd, "%s -O2 -std=c11 -fPIC -shared -Wall -Wextra -Werror -o %s/warn.so %s",
                 ccs[c], cache, path);
        int rc = system(cmd);
        if (rc != 0) fprintf(stderr, "warnings with %s\n", ccs[c]);
        CHECK_EQ_INT(0, rc);
    }
}

static TsStatus build(TsDiag *d, const IrKernel *k, TsBuf *code, TsModuleC **m, TsBuf *timing) {
    jmp_buf jb, *saved;
    TsCompileOptions opt = {0};
    opt.cache_dir = cache;
    *m = NULL;
    if (ts_try(d, &jb, &saved)) {
        ts_try_end(d, saved);
        return d->status;
    }
    code->n = 0;
    ts_c_codegen(d, k, NULL, code);
    *m = ts_c_build(d, code->s, &opt, timing);
    ts_try_end(d, saved);
    warn_check(code->s);
    return TS_OK;
}

static TsStatus build_text(TsDiag *d, const char *text, TsModuleC **m) {
    jmp_buf jb, *saved;
    TsCompileOptions opt = {0};
    opt.cache_dir = cache;
    *m = NULL;
    if (ts_try(d, &jb, &saved)) {
        ts_try_end(d, saved);
        return d->status;
    }
    *m = ts_c_build(d, text, &opt, NULL);
    ts_try_end(d, saved);
    return TS_OK;
}

static void reset(TsDiag *d) {
    d->msg.n = 0;
    if (d->msg.s) d->msg.s[0] = 0;
    d->status = TS_OK;
}

static TsTensor tens(void *data, TsDType dt, int ndim, const int64_t *shape, const int64_t *strides) {
    TsTensor t = {data, dt, ndim, shape, strides};
    return t;
}

static double urand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* ---- 1: vector add with a shape variable, shared tile, scalar, strides ---- */

static void test_vadd(void) {
    IrKernel *k = kernel("vadd", NULL);
    IrVar *n = ir_var(k, "n", TS_INT32, IR_VAR_SHAPE);
    ts_vec_push(ar, k->shape_vars, n);
    IrExpr *sh[1] = {VR(n)};
    IrBuffer *A = param_buf(k, "A", TS_FLOAT32, 1, sh);
    IrBuffer *B = param_buf(k, "B", TS_FLOAT32, 1, sh);
    IrBuffer *C = param_buf(k, "C", TS_FLOAT32, 1, sh);
    IrVar *alpha = param_scalar(k, "alpha", TS_FLOAT32);
    k->grid[0] = BIN(IR_FLOORDIV, BIN(IR_ADD, VR(n), I(127)), I(128));
    IrExpr *tsh[1] = {I(128)};
    IrBuffer *S = ir_buffer(k, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, tsh, (TsLoc){0});
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP), *j = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrExpr *gi = BIN(IR_ADD, BIN(IR_MUL, VR(k->block_idx[0]), I(128)), VR(i));
    IrExpr *gj = BIN(IR_ADD, BIN(IR_MUL, VR(k->block_idx[0]), I(128)), VR(j));
    IrStmt *alloc = ir_stmt(ar, IR_S_ALLOC, (TsLoc){0});
    alloc->alloc.buf = S;
    k->body = seq(3, alloc,
                  ir_for(ar, i, I(0), I(128), IR_FOR_PARALLEL,
                         if_(BIN(IR_LT, gi, VR(n)), st(S, ld(A, 1, gi), 1, VR(i)), NULL)),
                  ir_for(ar, j, I(0), I(128), IR_FOR_SERIAL,
                         if_(BIN(IR_LT, gj, VR(n)),
                             st(C, BIN(IR_ADD, BIN(IR_MUL, ld(S, 1, VR(j)), VR(alpha)), ld(B, 1, gj)), 1, gj),
                             NULL)));

    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0}, timing = {0};
    TsModuleC *m;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m, &timing));
    if (!m) {
        fprintf(stderr, "%s\n%s\n", ts_buf_str(&d->msg), ts_buf_str(&code));
        return;
    }
    CHECK_CONTAINS(timing.s, "cc ");
    CHECK_CONTAINS(timing.s, "load ");
    CHECK_EQ_INT(128 * 4, m->info.scratch_bytes);
    CHECK_EQ_INT(0, m->info.may_block);
    CHECK_CONTAINS(code.s, "_Static_assert(sizeof(TsCArgs) ==");

    /* Same code again: a cache hit. */
    TsModuleC *m2;
    timing.n = 0;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m2, &timing));
    CHECK_CONTAINS(timing.s, "cache hit ");
    ts_c_module_free(m2);

    TsKernel kk;
    memset(&kk, 0, sizeof kk);
    kk.ctx = &ctx;
    kk.ir = k;
    kk.cmod = m;
    kk.opt.num_threads = 3;

    enum { N = 1000 };
    float *a = malloc(N * sizeof(float)), *b2 = malloc(2 * N * sizeof(float)), *c = malloc(N * sizeof(float));
    unsigned seed = 12345;
    for (int q = 0; q < N; q++) a[q] = (float)(urand(&seed) * 2 - 1), c[q] = -777.0f;
    for (int q = 0; q < 2 * N; q++) b2[q] = (float)(urand(&seed) * 2 - 1);
    double alpha_v = 1.5;
    int64_t shp[1] = {N}, bstr[1] = {2}, shp2[1] = {2 * N};
    TsTensor args[4] = {tens(a, TS_FLOAT32, 1, shp, NULL), tens(b2, TS_FLOAT32, 1, shp, bstr),
                        tens(c, TS_FLOAT32, 1, shp, NULL), tens(&alpha_v, TS_FLOAT64, 0, NULL, NULL)};
    reset(d);
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 4));
    if (d->msg.n) fprintf(stderr, "%s", d->msg.s);
    int bad = 0;
    for (int q = 0; q < N; q++)
        if (c[q] != a[q] * 1.5f + b2[2 * q]) bad++;
    CHECK_EQ_INT(0, bad);

    /* Argument errors name the kernel, the parameter, the dimension. */
    reset(d);
    CHECK_EQ_INT(TS_ERR_ARGCOUNT, ts_launch(&kk, args, 3));
    CHECK_CONTAINS(d->msg.s, "vadd expects 4 arguments, got 3");
    reset(d);
    TsTensor bad_args[4];
    memcpy(bad_args, args, sizeof args);
    bad_args[2].dtype = TS_FLOAT16;
    CHECK_EQ_INT(TS_ERR_DTYPE, ts_launch(&kk, bad_args, 4));
    CHECK_CONTAINS(d->msg.s, "vadd: C has dtype float16, expected float32");
    reset(d);
    memcpy(bad_args, args, sizeof args);
    int64_t shp_b[1] = {N - 4};
    bad_args[1].shape = shp_b;
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_launch(&kk, bad_args, 4));
    CHECK_CONTAINS(d->msg.s, "vadd: n is 1000 from A.shape[0] but 996 from B.shape[0]");
    reset(d);
    memcpy(bad_args, args, sizeof args);
    int64_t shp_2d[2] = {N, 1};
    bad_args[0].ndim = 2;
    bad_args[0].shape = shp_2d;
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_launch(&kk, bad_args, 4));
    CHECK_CONTAINS(d->msg.s, "vadd: A has 2 dimensions, expected 1");
    reset(d);
    memcpy(bad_args, args, sizeof args);
    float fl = 1;
    bad_args[3] = tens(&fl, TS_FLOAT16, 0, NULL, NULL);
    CHECK_EQ_INT(TS_ERR_DTYPE, ts_launch(&kk, bad_args, 4));
    CHECK_CONTAINS(d->msg.s, "scalar parameter alpha");

    /* Strides declared on a buffer are checked against the tensor's. */
    reset(d);
    C->strides = TS_NEWN(ar, IrExpr *, 1);
    C->strides[0] = I(1);
    memcpy(bad_args, args, sizeof args);
    bad_args[2].strides = bstr;
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_launch(&kk, bad_args, 4));
    CHECK_CONTAINS(d->msg.s, "vadd: C.strides[0] is 2, expected 1");
    C->strides = NULL;

    /* A zero-size launch runs nothing and succeeds. */
    reset(d);
    int64_t zero[1] = {0};
    TsTensor zargs[4] = {tens(NULL, TS_FLOAT32, 1, zero, NULL), tens(NULL, TS_FLOAT32, 1, zero, NULL),
                         tens(NULL, TS_FLOAT32, 1, zero, NULL), tens(&alpha_v, TS_FLOAT64, 0, NULL, NULL)};
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, zargs, 4));
    (void)shp2;

    /* The ABI asserts are live: a generated file whose idea of TsCArgs
     * differs from the library's fails to build. */
    const char *p = strstr(code.s, "_Static_assert(sizeof(TsCArgs) == ");
    if (p) {
        TsBuf tampered = {0};
        size_t pre = (size_t)(p - code.s) + strlen("_Static_assert(sizeof(TsCArgs) == ");
        ts_buf_putn(&tampered, code.s, pre);
        ts_buf_printf(&tampered, "%zu + 8", sizeof(TsCArgs));
        const char *rest = code.s + pre;
        while (*rest >= '0' && *rest <= '9') rest++;
        ts_buf_puts(&tampered, rest);
        TsModuleC *mt;
        reset(d);
        CHECK_EQ_INT(TS_ERR_BUILD, build_text(d, tampered.s, &mt));
        CHECK_CONTAINS(d->msg.s, "ABI: TsCArgs");
        CHECK_CONTAINS(d->msg.s, "generated source");
        ts_buf_free(&tampered);
    }

    free(a);
    free(b2);
    free(c);
    ts_c_module_free(m);
    ts_buf_free(&code);
    ts_buf_free(&timing);
    ts_buf_free(&d->msg);
}

/* ---- 2: integer semantics ------------------------------------------------------ */

static int64_t py_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static void test_intops(void) {
    enum { N = 64, NOPS = 13 };
    IrKernel *k = kernel("intops", I(1));
    IrExpr *sh[1] = {I(N)}, *sh2[2] = {I(N), I(NOPS)};
    IrBuffer *X = param_buf(k, "X", TS_INT32, 1, sh);
    IrBuffer *Y = param_buf(k, "Y", TS_INT32, 1, sh);
    IrBuffer *O = param_buf(k, "O", TS_INT64, 2, sh2);
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrExpr *x = ld(X, 1, VR(i)), *y = ld(Y, 1, VR(i));
    IrExpr *ops[NOPS] = {
        BIN(IR_FLOORDIV, x, y),
        BIN(IR_FLOORMOD, x, y),
        BIN(IR_DIV, x, y),
        BIN(IR_MIN, x, y),
        BIN(IR_MAX, x, y),
        ir_select(ar, BIN(IR_GT, x, y), x, BIN(IR_MUL, y, I(2))),
        BIN(IR_BITXOR, x, y),
        BIN(IR_SHL, x, I(3)),
        BIN(IR_SHR, x, I(1)),
        ir_cast(ar, TS_INT32, BIN(IR_MUL, ir_cast(ar, TS_FLOAT32, x), F(1.7))),
        BIN(IR_POW, y, I(3)),
        call1(IR_ABS, x),
        /* int32 arithmetic is carried in 64 bits: x * 3000000 does not wrap */
        BIN(IR_MUL, ir_cast(ar, TS_INT64, x), I(3000000)),
    };
    IrStmt *body = ir_seq(ar);
    for (int q = 0; q < NOPS; q++) ir_seq_push(ar, body, st(O, ops[q], 2, VR(i), I(q)));
    k->body = ir_for(ar, i, I(0), I(N), IR_FOR_SERIAL, body);

    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0};
    TsModuleC *m;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m, NULL));
    if (!m) {
        fprintf(stderr, "%s\n", ts_buf_str(&d->msg));
        return;
    }
    TsKernel kk;
    memset(&kk, 0, sizeof kk);
    kk.ctx = &ctx;
    kk.ir = k;
    kk.cmod = m;
    int32_t xs[N], ys[N];
    int64_t o[N * NOPS];
    unsigned seed = 777;
    for (int q = 0; q < N; q++) {
        xs[q] = (int32_t)(urand(&seed) * 2000) - 1000;
        do ys[q] = (int32_t)(urand(&seed) * 40) - 20;
        while (ys[q] == 0);
    }
    int64_t s1[1] = {N}, s2[2] = {N, NOPS};
    TsTensor args[3] = {tens(xs, TS_INT32, 1, s1, NULL), tens(ys, TS_INT32, 1, s1, NULL),
                        tens(o, TS_INT64, 2, s2, NULL)};
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 3));
    int bad = 0;
    for (int q = 0; q < N; q++) {
        int64_t a = xs[q], b = ys[q], *r = &o[q * NOPS];
        int64_t want[NOPS] = {py_floordiv(a, b), a - py_floordiv(a, b) * b, a / b, a < b ? a : b,
                              a > b ? a : b, a > b ? a : b * 2, a ^ b, a * 8, a >= 0 ? a / 2 : -((-a + 1) / 2),
                              (int64_t)((float)a * 1.7f), b * b * b, a < 0 ? -a : a, a * 3000000};
        for (int w = 0; w < NOPS; w++)
            if (r[w] != want[w]) {
                if (bad++ < 5) fprintf(stderr, "intops op %d: x=%lld y=%lld got %lld want %lld\n", w,
                                       (long long)a, (long long)b, (long long)r[w], (long long)want[w]);
            }
    }
    CHECK_EQ_INT(0, bad);

    /* A constant extent that does not match. */
    int64_t s2b[2] = {N, NOPS - 1};
    args[2].shape = s2b;
    reset(d);
    CHECK_EQ_INT(TS_ERR_SHAPE, ts_launch(&kk, args, 3));
    CHECK_CONTAINS(d->msg.s, "intops: O.shape[1] is 12, expected 13");
    ts_c_module_free(m);
    ts_buf_free(&code);
    ts_buf_free(&d->msg);
}

/* ---- 3: float conversions and intrinsics ---------------------------------------- */

/* Round x to p significand bits, min normal exponent emin (RNE), the
 * way a narrow float format stores it; overflow per `maxf`. */
static double ref_round(double x, int p, int emin, double maxf, int saturate) {
    if (isnan(x) || x == 0) return x;
    if (isinf(x)) return saturate ? copysign(maxf, x) : x;
    int e;
    frexp(x, &e);
    int ex = e - 1 < emin ? emin : e - 1;
    double q = ldexp(1.0, ex - (p - 1));
    double r = nearbyint(x / q) * q;
    if (fabs(r) > maxf) r = saturate ? copysign(maxf, x) : copysign(INFINITY, x);
    return r;
}

static double dec_half(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

static double dec_bf16(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static double dec_e4m3(uint8_t v) {
    int e = (v >> 3) & 15, m = v & 7;
    double r = (e == 15 && m == 7) ? NAN : e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (v & 0x80) ? -r : r;
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int close_to(double got, double want) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= 1e-5 * (1 + fabs(want));
}

static void test_floats(void) {
    enum { N = 256, NR = 9 };
    IrKernel *k = kernel("floats", I(2));
    IrExpr *sh[1] = {I(N)}, *shr[2] = {I(N), I(NR)};
    IrBuffer *X = param_buf(k, "X", TS_FLOAT32, 1, sh);
    IrBuffer *H = param_buf(k, "H", TS_FLOAT16, 1, sh);
    IrBuffer *BF = param_buf(k, "BF", TS_BFLOAT16, 1, sh);
    IrBuffer *E4 = param_buf(k, "E4", TS_FLOAT8_E4M3, 1, sh);
    IrBuffer *R = param_buf(k, "R", TS_FLOAT32, 2, shr);
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrExpr *idx = BIN(IR_ADD, BIN(IR_MUL, VR(k->block_idx[0]), I(N / 2)), VR(i));
    IrExpr *x = ld(X, 1, idx);
    IrExpr *ax = call1(IR_ABS, x);
    IrExpr *r[NR] = {
        call1(IR_EXP, BIN(IR_MUL, x, F(0.01))),
        call1(IR_SQRT, ax),
        call1(IR_TANH, BIN(IR_MUL, x, F(0.001))),
        call1(IR_FLOOR, x),
        call1(IR_SIGMOID, BIN(IR_MUL, x, F(0.01))),
        call1(IR_RSQRT, BIN(IR_ADD, ax, F(1))),
        BIN(IR_MAX, x, F(0)),
        BIN(IR_FLOORDIV, x, F(0.5)),
        BIN(IR_FLOORMOD, x, F(0.75)),
    };
    IrStmt *body = seq(3, st(H, x, 1, idx), st(BF, x, 1, idx), st(E4, x, 1, idx));
    for (int q = 0; q < NR; q++) ir_seq_push(ar, body, st(R, r[q], 2, idx, I(q)));
    k->body = ir_for(ar, i, I(0), I(N / 2), IR_FOR_VECTORIZED, body);

    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0};
    TsModuleC *m;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m, NULL));
    if (!m) {
        fprintf(stderr, "%s\n", ts_buf_str(&d->msg));
        return;
    }
    TsKernel kk;
    memset(&kk, 0, sizeof kk);
    kk.ctx = &ctx;
    kk.ir = k;
    kk.cmod = m;
    float xs[N], rs[N * NR];
    uint16_t hs[N], bs[N];
    uint8_t es[N];
    float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65519.99f, 65520.0f,
                       1e-8f, 5.96046448e-8f, 2.98023224e-8f, 2.98023225e-8f, 6.1e-5f, 1.00048828125f,
                       1.001464843750f, 448.0f, 464.0f, 1e6f, 0.0009765625f, 3.4e38f, -1.5e-45f};
    unsigned seed = 99;
    for (int q = 0; q < N; q++) {
        if (q < (int)(sizeof special / sizeof special[0])) xs[q] = special[q];
        else {
            double mag = ldexp(1.0, (int)(urand(&seed) * 40) - 20);
            xs[q] = (float)((urand(&seed) * 2 - 1) * mag);
        }
    }
    int64_t s1[1] = {N}, s2[2] = {N, NR};
    TsTensor args[5] = {tens(xs, TS_FLOAT32, 1, s1, NULL), tens(hs, TS_FLOAT16, 1, s1, NULL),
                        tens(bs, TS_BFLOAT16, 1, s1, NULL), tens(es, TS_FLOAT8_E4M3, 1, s1, NULL),
                        tens(rs, TS_FLOAT32, 2, s2, NULL)};
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 5));
    int bad = 0;
    for (int q = 0; q < N; q++) {
        double xv = xs[q];
        double wh = ref_round(xv, 11, -14, 65504.0, 0), wb = ref_round(xv, 8, -126, 3.3895313892515355e38, 0);
        double we = ref_round(xv, 4, -6, 448.0, 1);
        if (!same(dec_half(hs[q]), wh) || !same(dec_bf16(bs[q]), wb) || !same(dec_e4m3(es[q]), we)) {
            if (bad++ < 5)
                fprintf(stderr, "convert %.9g: half %.9g (want %.9g) bf16 %.9g (%.9g) e4m3 %.9g (%.9g)\n", xv,
                        dec_half(hs[q]), wh, dec_bf16(bs[q]), wb, dec_e4m3(es[q]), we);
        }
        float xf = xs[q], af = fabsf(xf);
        double want[NR] = {expf(xf * 0.01f), sqrtf(af), tanhf(xf * 0.001f), floorf(xf),
                           1.0f / (1.0f + expf(-(xf * 0.01f))), 1.0f / sqrtf(af + 1.0f), xf > 0 ? xf : 0.0f,
                           floorf(xf / 0.5f), (double)xf - floor((double)xf / 0.75) * 0.75};
        for (int w = 0; w < NR; w++) {
            if (!isfinite(xv) && w >= 7) continue; /* inf // 0.5 etc.: not compared */
            if (w == 8) { /* float32 remainder: compare loosely, small x only */
                if (fabs(xv) < 1000 && fabs(rs[q * NR + w] - want[w]) > 1e-3) bad++;
                continue;
            }
            if (!close_to(rs[q * NR + w], want[w])) {
                if (bad++ < 10) fprintf(stderr, "intrinsic %d of %.9g: got %.9g want %.9g\n", w, xv,
                                        rs[q * NR + w], want[w]);
            }
        }
    }
    CHECK_EQ_INT(0, bad);
    ts_c_module_free(m);
    ts_buf_free(&code);
    ts_buf_free(&d->msg);
}

/* Every float16 / bfloat16 / float8 bit pattern decodes like the
 * independent decoders above (NaNs as NaN). */
static double dec_e5m2(uint8_t v) { return dec_half((uint16_t)(v << 8)); }

static void test_decode_all(void) {
    enum { N = 65536 };
    IrKernel *k = kernel("decode", I(4));
    IrExpr *sh[1] = {I(N)}, *sh8[1] = {I(256)};
    IrBuffer *H = param_buf(k, "H", TS_FLOAT16, 1, sh);
    IrBuffer *B = param_buf(k, "B", TS_BFLOAT16, 1, sh);
    IrBuffer *E4 = param_buf(k, "E4", TS_FLOAT8_E4M3, 1, sh8);
    IrBuffer *E5 = param_buf(k, "E5", TS_FLOAT8_E5M2, 1, sh8);
    IrBuffer *O = param_buf(k, "O", TS_FLOAT32, 1, (IrExpr *[]){I(4 * N)});
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP), *j = ir_var(k, "j", TS_INT32, IR_VAR_LOOP);
    IrExpr *bx = VR(k->block_idx[0]);
    IrExpr *g = BIN(IR_ADD, BIN(IR_MUL, bx, I(N / 4)), VR(i));
    k->body = seq(2,
                  ir_for(ar, i, I(0), I(N / 4), IR_FOR_PARALLEL,
                         seq(2, st(O, ir_cast(ar, TS_FLOAT32, ld(H, 1, g)), 1, g),
                             st(O, ir_cast(ar, TS_FLOAT32, ld(B, 1, g)), 1, BIN(IR_ADD, g, I(N))))),
                  if_(BIN(IR_EQ, bx, I(0)),
                      ir_for(ar, j, I(0), I(256), IR_FOR_SERIAL,
                             seq(2, st(O, ir_cast(ar, TS_FLOAT32, ld(E4, 1, VR(j))), 1, BIN(IR_ADD, VR(j), I(2 * N))),
                                 st(O, ir_cast(ar, TS_FLOAT32, ld(E5, 1, VR(j))), 1, BIN(IR_ADD, VR(j), I(3 * N))))),
                      NULL));
    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0};
    TsModuleC *m;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m, NULL));
    if (!m) {
        fprintf(stderr, "%s\n", ts_buf_str(&d->msg));
        return;
    }
    TsKernel kk;
    memset(&kk, 0, sizeof kk);
    kk.ctx = &ctx;
    kk.ir = k;
    kk.cmod = m;
    uint16_t *hb = malloc(N * 2);
    uint8_t e[256];
    float *o = malloc(4 * N * sizeof(float));
    for (int q = 0; q < N; q++) hb[q] = (uint16_t)q;
    for (int q = 0; q < 256; q++) e[q] = (uint8_t)q;
    int64_t s1[1] = {N}, s8[1] = {256}, s4[1] = {4 * N};
    TsTensor args[5] = {tens(hb, TS_FLOAT16, 1, s1, NULL), tens(hb, TS_BFLOAT16, 1, s1, NULL),
                        tens(e, TS_FLOAT8_E4M3, 1, s8, NULL), tens(e, TS_FLOAT8_E5M2, 1, s8, NULL),
                        tens(o, TS_FLOAT32, 1, s4, NULL)};
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 5));
    int bad = 0;
    for (int q = 0; q < N; q++) {
        if (!same(o[q], dec_half((uint16_t)q)) || !signbit(o[q]) != !signbit(dec_half((uint16_t)q))) {
            if (bad++ < 5) fprintf(stderr, "half %04x: got %.9g want %.9g\n", q, o[q], dec_half((uint16_t)q));
        }
        if (!same(o[N + q], dec_bf16((uint16_t)q))) bad++;
    }
    for (int q = 0; q < 256; q++) {
        if (!same(o[2 * N + q], dec_e4m3((uint8_t)q))) {
            if (bad++ < 10) fprintf(stderr, "e4m3 %02x: got %.9g want %.9g\n", q, o[2 * N + q], dec_e4m3((uint8_t)q));
        }
        if (!same(o[3 * N + q], dec_e5m2((uint8_t)q))) {
            if (bad++ < 10) fprintf(stderr, "e5m2 %02x: got %.9g want %.9g\n", q, o[3 * N + q], dec_e5m2((uint8_t)q));
        }
    }
    CHECK_EQ_INT(0, bad);
    free(hb);
    free(o);
    ts_c_module_free(m);
    ts_buf_free(&code);
    ts_buf_free(&d->msg);
}

/* ---- 4: atomic adds from many blocks on many threads ---------------------------- */

static void test_atomics(void) {
    enum { NB = 300 };
    IrKernel *k = kernel("atomics", I(NB));
    IrExpr *sh4[1] = {I(4)}, *sh1[1] = {I(1)};
    IrBuffer *Acc = param_buf(k, "Acc", TS_FLOAT32, 1, sh4);
    IrBuffer *Cnt = param_buf(k, "Cnt", TS_INT32, 1, sh1);
    IrBuffer *H = param_buf(k, "H", TS_FLOAT16, 1, sh1);
    IrBuffer *D = param_buf(k, "D", TS_FLOAT64, 1, sh1);
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrExpr *bx = VR(k->block_idx[0]);
    IrStmt *a1 = ir_store(ar, Acc, (IrExpr *[]){VR(i)}, 1,
                          ir_cast(ar, TS_FLOAT32, BIN(IR_FLOORMOD, BIN(IR_ADD, bx, VR(i)), I(7))));
    a1->kind = IR_S_ATOMIC_ADD;
    IrStmt *a2 = ir_store(ar, Cnt, (IrExpr *[]){I(0)}, 1, I(1));
    a2->kind = IR_S_ATOMIC_ADD;
    IrStmt *a3 = ir_store(ar, H, (IrExpr *[]){I(0)}, 1, ir_float(ar, 1.0, TS_FLOAT16));
    a3->kind = IR_S_ATOMIC_ADD;
    IrStmt *a4 = ir_store(ar, D, (IrExpr *[]){I(0)}, 1, ir_cast(ar, TS_FLOAT64, bx));
    a4->kind = IR_S_ATOMIC_ADD;
    k->body = seq(4, ir_for(ar, i, I(0), I(4), IR_FOR_SERIAL, a1), a2, a3, a4);

    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0};
    TsModuleC *m;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m, NULL));
    if (!m) {
        fprintf(stderr, "%s\n", ts_buf_str(&d->msg));
        return;
    }
    TsKernel kk;
    memset(&kk, 0, sizeof kk);
    kk.ctx = &ctx;
    kk.ir = k;
    kk.cmod = m;
    kk.opt.num_threads = 8;
    for (int rep = 0; rep < 3; rep++) {
        float acc[4] = {0.5f, 0, 0, 0};
        int32_t cnt = 5;
        uint16_t h = 0;
        double dd = 0;
        int64_t s4[1] = {4}, s1[1] = {1};
        TsTensor args[4] = {tens(acc, TS_FLOAT32, 1, s4, NULL), tens(&cnt, TS_INT32, 1, s1, NULL),
                            tens(&h, TS_FLOAT16, 1, s1, NULL), tens(&dd, TS_FLOAT64, 1, s1, NULL)};
        CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 4));
        for (int q = 0; q < 4; q++) {
            double want = q == 0 ? 0.5 : 0;
            for (int b = 0; b < NB; b++) want += (b + q) % 7;
            CHECK_EQ_INT((long long)(want * 2), (long long)(acc[q] * 2));
        }
        CHECK_EQ_INT(5 + NB, cnt);
        CHECK_EQ_INT(NB, (long long)dec_half(h));
        CHECK_EQ_INT(NB * (NB - 1) / 2, (long long)dd);
    }
    ts_c_module_free(m);
    ts_buf_free(&code);
    ts_buf_free(&d->msg);
}

/* ---- 5: while/let/break/continue, local buffers, bool/uint32, print ------------- */

typedef struct Lines {
    pthread_mutex_t mu;
    TsBuf text;
} Lines;

static void collect(void *ctx, const char *text) {
    Lines *l = ctx;
    pthread_mutex_lock(&l->mu);
    ts_buf_puts(&l->text, text);
    pthread_mutex_unlock(&l->mu);
}

static void test_control(void) {
    enum { N = 40 };
    IrKernel *k = kernel("control", I(2));
    IrExpr *sh[1] = {I(N)}, *sh1[1] = {I(1)}, *sh3[1] = {I(3)};
    IrBuffer *X = param_buf(k, "X", TS_INT32, 1, sh);
    IrBuffer *Steps = param_buf(k, "Steps", TS_INT32, 1, sh);
    IrBuffer *Odd = param_buf(k, "Odd", TS_BOOL, 1, sh);
    IrBuffer *Hash = param_buf(k, "Hash", TS_UINT32, 1, sh);
    IrBuffer *cur = ir_buffer(k, "cur", TS_INT64, IR_SCOPE_VAR, 1, sh1, (TsLoc){0});
    IrBuffer *loc = ir_buffer(k, "loc", TS_FLOAT32, IR_SCOPE_LOCAL, 1, sh3, (TsLoc){0});
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrVar *g = ir_var(k, "g", TS_INT32, IR_VAR_LET);
    IrVar *steps = ir_var(k, "steps", TS_INT32, IR_VAR_LET);
    IrVar *h = ir_var(k, "h", TS_UINT32, IR_VAR_LET);
    IrExpr *bx = VR(k->block_idx[0]);
    IrStmt *let_g = ir_stmt(ar, IR_S_LET, (TsLoc){0});
    let_g->let.var = g;
    let_g->let.value = BIN(IR_ADD, BIN(IR_MUL, bx, I(N / 2)), VR(i));
    /* collatz: steps until cur == 1 (break), skipping (continue) nothing odd */
    IrExpr *c = ld(cur, 1, I(0));
    IrStmt *wbody = seq(3,
                        if_(BIN(IR_EQ, c, ir_int(ar, 1, TS_INT64)), ir_stmt(ar, IR_S_BREAK, (TsLoc){0}), NULL),
                        st(Steps, BIN(IR_ADD, ld(Steps, 1, VR(g)), I(1)), 1, VR(g)),
                        if_(BIN(IR_EQ, BIN(IR_FLOORMOD, c, ir_int(ar, 2, TS_INT64)), ir_int(ar, 0, TS_INT64)),
                            seq(2, st(cur, BIN(IR_FLOORDIV, c, ir_int(ar, 2, TS_INT64)), 1, I(0)),
                                ir_stmt(ar, IR_S_CONTINUE, (TsLoc){0})),
                            st(cur, BIN(IR_ADD, BIN(IR_MUL, c, ir_int(ar, 3, TS_INT64)), ir_int(ar, 1, TS_INT64)),
                               1, I(0))));
    IrStmt *wl = ir_stmt(ar, IR_S_WHILE, (TsLoc){0});
    wl->while_.cond = ir_int(ar, 1, TS_BOOL);
    wl->while_.body = wbody;
    IrStmt *let_s = ir_stmt(ar, IR_S_LET, (TsLoc){0});
    let_s->let.var = steps;
    let_s->let.value = ld(Steps, 1, VR(g));
    /* uint32 hash with wrap-around: h = steps * 2654435761u, stored xor'ed with 7 */
    IrStmt *let_h = ir_stmt(ar, IR_S_LET, (TsLoc){0});
    let_h->let.var = h;
    let_h->let.value = BIN(IR_MUL, ir_cast(ar, TS_UINT32, VR(steps)), ir_int(ar, 2654435761u, TS_UINT32));
    IrStmt *ev = ir_stmt(ar, IR_S_EVAL, (TsLoc){0});
    ev->eval.e = BIN(IR_ADD, VR(h), ir_int(ar, 1, TS_UINT32));
    IrStmt *body = seq(10, let_g, st(Steps, I(0), 1, VR(g)), st(cur, ir_cast(ar, TS_INT64, ld(X, 1, VR(g))), 1, I(0)),
                       wl, let_s, st(Odd, BIN(IR_EQ, BIN(IR_FLOORMOD, VR(steps), I(2)), I(1)), 1, VR(g)),
                       st(loc, ir_cast(ar, TS_FLOAT32, VR(steps)), 1, I(2)), let_h,
                       st(Hash, BIN(IR_BITXOR, VR(h), ir_int(ar, 7, TS_UINT32)), 1, VR(g)), ev);
    IrStmt *pr = ir_stmt(ar, IR_S_PRINT, (TsLoc){0});
    pr->print.value = BIN(IR_MUL, bx, I(10));
    pr->print.msg = "bx times \"10\"";
    IrStmt *prb = ir_stmt(ar, IR_S_PRINT, (TsLoc){0});
    prb->print.buf = loc;
    prb->print.msg = "loc";
    k->body = seq(3, ir_for(ar, i, I(0), I(N / 2), IR_FOR_UNROLL, body), pr, prb);

    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0};
    TsModuleC *m;
    CHECK_EQ_INT(TS_OK, build(d, k, &code, &m, NULL));
    if (!m) {
        fprintf(stderr, "%s\n%s\n", ts_buf_str(&d->msg), ts_buf_str(&code));
        return;
    }
    CHECK_EQ_INT(64 + 64, m->info.scratch_bytes); /* two buffers, each 64-byte aligned */
    int32_t xs[N], steps_out[N];
    uint8_t odd[N];
    uint32_t hash[N];
    unsigned seed = 4242;
    for (int q = 0; q < N; q++) xs[q] = 1 + (int32_t)(urand(&seed) * 10000);
    void *data[4] = {xs, steps_out, odd, hash};
    int64_t s1[1] = {N}, st1[1] = {1};
    const int64_t *shapes[4] = {s1, s1, s1, s1}, *strides[4] = {st1, st1, st1, st1};
    Lines lines = {PTHREAD_MUTEX_INITIALIZER, {0}};
    TsCArgs a;
    memset(&a, 0, sizeof a);
    a.abi_version = TS_C_ABI_VERSION;
    a.nparams = 4;
    a.data = data;
    a.shape = shapes;
    a.strides = strides;
    a.nranks = 1;
    a.print = collect;
    a.print_ctx = &lines;
    int64_t grid[3];
    m->grid(&a, grid);
    CHECK_EQ_INT(2, grid[0]);
    CHECK_EQ_INT(TS_OK, ts_c_run(d, m, &a, grid, 2));
    int bad = 0;
    for (int q = 0; q < N; q++) {
        int64_t v = xs[q];
        int s = 0;
        while (v != 1) {
            v = v % 2 == 0 ? v / 2 : 3 * v + 1;
            s++;
        }
        uint32_t wh = ((uint32_t)s * 2654435761u) ^ 7u;
        if (steps_out[q] != s || odd[q] != (s % 2 == 1) || hash[q] != wh) bad++;
    }
    CHECK_EQ_INT(0, bad);
    CHECK_CONTAINS(lines.text.s, "bx times \"10\": block (1, 0, 0): 10\n");
    CHECK_CONTAINS(lines.text.s, "bx times \"10\": block (0, 0, 0): 0\n");
    CHECK_CONTAINS(lines.text.s, "loc: block (0, 0, 0): loc[2] = ");
    ts_buf_free(&lines.text);
    ts_c_module_free(m);
    ts_buf_free(&code);
    ts_buf_free(&d->msg);
}

/* ---- 6: concurrent builds of one new kernel into one cache ---------------------- */

typedef struct BuildJob {
    const char *code; /* source to build */
    TsStatus st;      /* result */
    TsDiag d;         /* this thread's diagnostics */
} BuildJob;

static void *build_thread(void *arg) {
    BuildJob *j = arg;
    TsModuleC *m;
    j->st = build_text(&j->d, j->code, &m);
    if (m) {
        TsCInfo info = m->info;
        if (info.abi_version != TS_C_ABI_VERSION) j->st = TS_ERR_INTERNAL;
        ts_c_module_free(m);
    }
    return NULL;
}

static void test_concurrent_build(void) {
    IrKernel *k = kernel("concurrent", I(1));
    IrBuffer *A = param_buf(k, "A", TS_INT32, 1, (IrExpr *[]){I(1)});
    k->body = st(A, I(42), 1, I(0));
    TsContext ctx = {0};
    TsBuf code = {0};
    jmp_buf jb, *saved;
    if (ts_try(&ctx.diag, &jb, &saved)) {
        ts_try_end(&ctx.diag, saved);
        CHECK(0);
        return;
    }
    ts_c_codegen(&ctx.diag, k, NULL, &code);
    ts_try_end(&ctx.diag, saved);
    /* a comment makes the source (and key) new for this run */
    ts_buf_printf(&code, "/* run %d */\n", (int)getpid());
    enum { NT = 6 };
    BuildJob jobs[NT];
    pthread_t th[NT];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < NT; i++) {
        jobs[i].code = code.s;
        pthread_create(&th[i], NULL, build_thread, &jobs[i]);
    }
    for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NT; i++) {
        CHECK_EQ_INT(TS_OK, jobs[i].st);
        if (jobs[i].st) fprintf(stderr, "%s", ts_buf_str(&jobs[i].d.msg));
        ts_buf_free(&jobs[i].d.msg);
    }
    /* no temporary files are left behind */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp-", cache);
    CHECK(system(cmd) != 0);

    /* an unusable cache directory is an I/O error, not a crash */
    TsCompileOptions opt = {0};
    opt.cache_dir = "/proc/self/no/such/dir";
    reset(&ctx.diag);
    volatile TsStatus stt = TS_OK;
    if (ts_try(&ctx.diag, &jb, &saved)) {
        ts_try_end(&ctx.diag, saved);
        stt = ctx.diag.status;
    } else {
        TsModuleC *m = ts_c_build(&ctx.diag, code.s, &opt, NULL);
        ts_try_end(&ctx.diag, saved);
        ts_c_module_free(m);
    }
    CHECK_EQ_INT(TS_ERR_IO, stt);
    CHECK_CONTAINS(ctx.diag.msg.s, "cannot create the kernel cache directory");
    ts_buf_free(&code);
    ts_buf_free(&ctx.diag.msg);
}

/* ---- 7: what the C target refuses ---------------------------------------------- */

static void test_refusals(void) {
    TsContext ctx = {0};
    TsDiag *d = &ctx.diag;
    TsBuf code = {0};
    TsModuleC *m;

    IrKernel *k = kernel("threads", I(1));
    IrExpr *sh[1] = {I(4)};
    IrBuffer *A = param_buf(k, "A", TS_INT32, 1, sh);
    IrVar *tx = ir_var(k, "tx", TS_INT32, IR_VAR_THREAD_IDX);
    k->body = st(A, VR(tx), 1, I(0));
    /* thread_loops_c puts every use of a thread index in a thread range */
    CHECK_EQ_INT(TS_ERR_INTERNAL, build(d, k, &code, &m, NULL));
    CHECK_CONTAINS(d->msg.s, "thread index 'tx' used outside per-thread code");

    /* in a thread range it is the loop over the block's threads: thread
     * (x, y) of a 2 x 2 block stores 10 * y + x at A[2 * y + x] */
    reset(d);
    IrKernel *k3 = kernel("thread_range", I(1));
    k3->threads[0] = k3->threads[1] = 2;
    IrBuffer *A3 = param_buf(k3, "A", TS_INT32, 1, sh);
    IrVar *x3 = ir_var(k3, "x", TS_INT32, IR_VAR_THREAD_IDX), *y3 = ir_var(k3, "y", TS_INT32, IR_VAR_THREAD_IDX);
    x3->axis = 0;
    y3->axis = 1;
    IrExpr *val = ir_bin(ar, IR_ADD, ir_bin(ar, IR_MUL, I(10), VR(y3)), VR(x3));
    IrStmt *body3 = st(A3, val, 1, ir_bin(ar, IR_ADD, ir_bin(ar, IR_MUL, I(2), VR(y3)), VR(x3)));
    k3->body = ir_for(ar, ir_var(k3, "t", TS_INT32, IR_VAR_LOOP), I(0), I(4), IR_FOR_THREAD, body3);
    CHECK_EQ_INT(TS_OK, build(d, k3, &code, &m, NULL));
    if (m) {
        int32_t out[4] = {-1, -1, -1, -1};
        void *data3[1] = {out};
        int64_t s4[1] = {4}, st4[1] = {1};
        const int64_t *shapes3[1] = {s4}, *strides3[1] = {st4};
        TsCArgs a3;
        memset(&a3, 0, sizeof a3);
        a3.abi_version = TS_C_ABI_VERSION;
        a3.nparams = 1;
        a3.data = data3;
        a3.shape = shapes3;
        a3.strides = strides3;
        a3.nranks = 1;
        int64_t grid3[3];
        m->grid(&a3, grid3);
        CHECK_EQ_INT(TS_OK, ts_c_run(d, m, &a3, grid3, 1));
        CHECK_EQ_INT(0, out[0]);
        CHECK_EQ_INT(1, out[1]);
        CHECK_EQ_INT(10, out[2]);
        CHECK_EQ_INT(11, out[3]);
        ts_c_module_free(m);
    }

    reset(d);
    IrKernel *k2 = kernel("tileop", I(1));
    k2->body = ir_stmt(ar, IR_S_TILEOP, (TsLoc){0});
    CHECK_EQ_INT(TS_ERR_INTERNAL, build(d, k2, &code, &m, NULL));
    CHECK_CONTAINS(d->msg.s, "not lowered");

    reset(d);
    CHECK_EQ_INT(TS_ERR_BUILD, build_text(d, "int main(void) { return syntax error; }\n", &m));
    CHECK_CONTAINS(d->msg.s, "did not compile");
    CHECK_CONTAINS(d->msg.s, "syntax");

    reset(d);
    CHECK_EQ_INT(TS_ERR_BUILD, build_text(d, "int x;\n", &m));
    CHECK_CONTAINS(d->msg.s, "not a TileScale kernel module");
    ts_buf_free(&code);
    ts_buf_free(&d->msg);
}

int main(void) {
    TsArena arena;
    ts_arena_init(&arena);
    ar = &arena;
    snprintf(cache, sizeof cache, "%s/ts-test-codegen-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    test_vadd();
    test_intops();
    test_floats();
    test_decode_all();
    test_atomics();
    test_control();
    test_concurrent_build();
    test_refusals();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (!getenv("TS_KEEP_CACHE") && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cache);
    ts_arena_free(&arena);
    return test_done();
}
