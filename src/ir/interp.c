/*
 * interp.c — the reference evaluator for tile IR (see interp.h).
 *
 * A tree-walking interpreter over the IR as it is: no preprocessing, no
 * caching, so that what it executes is exactly what a pass produced.
 * Values are a small tagged pair (int64 for integer and bool dtypes,
 * double for floats); the dtype of the expression being evaluated says
 * which half is meaningful.  Variables and buffers are found by their id,
 * which is unique within a kernel.  Control flow (break/continue) travels
 * back up as the return value of exec().
 *
 * The float rounding helpers below deliberately do not share code with
 * ir.c's constant folder: float16 and bfloat16 are rounded through their
 * bit patterns here, by frexp/ldexp there.
 */
#include "ir/interp.h"

#include <math.h>
#include <string.h>

#include "ir/mbar.h"
#include "ir/tileop.h"

typedef struct Val {
    int64_t i; /* integer and bool dtypes */
    double f;  /* float dtypes */
} Val;

struct IrInterp {
    TsArena *a;
    TsDiag *d;
    const IrKernel *k;
    int nid;          /* ids are below this */
    double **data;    /* by buffer id */
    int64_t *cap;     /* by buffer id: elements allocated (local buffers) */
    IrMbarState **mbar; /* by buffer id: the state of a T.alloc_barrier buffer's mbarriers */
    int64_t arrivals; /* threads an mbarrier arrive stands for here: the block's, a role's inside T.ws */
    Val *vars;        /* by var id */
    char *bound;      /* by var id */
    TsBuf out;        /* IR_S_PRINT text */
    int64_t steps;
};

enum { FLOW_NEXT, FLOW_BREAK, FLOW_CONTINUE };

TS_NORETURN static void rt_fail(IrInterp *in, TsLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);
static void rt_fail(IrInterp *in, TsLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_vfail_at(in->d, TS_ERR_RUNTIME, loc, fmt, ap);
}

/* ---- numbers ------------------------------------------------------------ */

/* The common dtypes answered here (these two are the interpreters' hottest
 * calls: a quarter of the thread-level example runs went to the dtype
 * table in base.c); the rest ask the table. */
static bool is_f(TsDType dt) {
    switch (dt) {
    case TS_FLOAT32: case TS_FLOAT16: case TS_BFLOAT16: case TS_FLOAT64: return true;
    case TS_INT32: case TS_INT64: case TS_BOOL: case TS_UINT32: case TS_UINT64: return false;
    default: return ts_dtype_is_float(dt);
    }
}

static bool is_u(TsDType dt) {
    switch (dt) {
    case TS_UINT32: case TS_UINT64: return true;
    case TS_INT32: case TS_INT64: case TS_BOOL: case TS_FLOAT32: case TS_FLOAT16: case TS_BFLOAT16: case TS_FLOAT64:
        return false;
    default: return ts_dtype_info(dt) && ts_dtype_info(dt)->kind == 'u';
    }
}

static int64_t wrap(int64_t v, TsDType dt) {
    if (dt == TS_BOOL) return v != 0;
    int bits = ts_dtype_bits(dt);
    if (bits >= 64) return v;
    uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & m;
    if (!is_u(dt) && (u & ((uint64_t)1 << (bits - 1)))) return (int64_t)(u | ~m);
    return (int64_t)u;
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* float32 -> float16 -> float32 with round-to-nearest-even. */
static float via_f16(float f) {
    if (isnan(f)) return f;
    float a = fabsf(f);
    float sign = signbit(f) ? -1.0f : 1.0f;
    if (a >= 65520.0f) return sign * INFINITY;      /* rounds past the max 65504 */
    if (a < 6.103515625e-05f) {                      /* subnormal: step 2^-24 */
        float q = nearbyintf(a * 16777216.0f);
        return sign * q / 16777216.0f;
    }
    uint32_t u = f32_bits(a);
    uint32_t lsb = (u >> 13) & 1;
    u += 0xfff + lsb;
    u &= ~0x1fffu;
    return sign * bits_f32(u);
}

/* float32 -> bfloat16 -> float32 with round-to-nearest-even. */
static float via_bf16(float f) {
    if (isnan(f)) return f;
    uint32_t u = f32_bits(f);
    u += 0x7fff + ((u >> 16) & 1);
    u &= 0xffff0000u;
    return bits_f32(u);
}

/* A generic small float: p significand bits, min normal exponent emin. */
static double via_small(double x, int p, int emin, double maxf) {
    if (!isfinite(x) || x == 0) return x;
    int e = ilogb(x);
    if (e < emin) e = emin;
    double q = ldexp(nearbyint(ldexp(x, p - 1 - e)), e - (p - 1));
    return fabs(q) > maxf ? copysign(INFINITY, x) : q;
}

/* Round to how dt stores a value. */
static double round_to(double x, TsDType dt) {
    switch (dt) {
    case TS_FLOAT64: return x;
    case TS_FLOAT32: return (float)x;
    case TS_FLOAT16: return via_f16((float)x);
    case TS_BFLOAT16: return via_bf16((float)x);
    case TS_FLOAT8_E4M3: return via_small(x, 4, -6, 448);
    case TS_FLOAT8_E5M2: return via_small(x, 3, -14, 57344);
    default: return x;
    }
}

/* Precision arithmetic on dt is carried out in (half types: float32). */
static double round_arith(double x, TsDType dt) { return dt == TS_FLOAT64 ? x : (float)x; }

static double as_double(Val v, TsDType dt) {
    if (is_f(dt)) return v.f;
    return is_u(dt) ? (double)(uint64_t)v.i : (double)v.i;
}

static int64_t f2i(double x, TsDType to) {
    if (isnan(x)) return 0;
    x = trunc(x);
    if (is_u(to)) return x <= 0 ? 0 : x >= 18446744073709551615.0 ? -1 : (int64_t)(uint64_t)x;
    if (x >= 9223372036854775807.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}

/* The bits of a small float format (1 sign bit, `eb` exponent bits of bias
 * 2^(eb-1)-1, `mb` mantissa bits) holding x, which is exact in it (stored
 * values and casts are rounded first, round_to).  `fn`: no infinities,
 * the all-ones pattern is NaN (float8_e4m3fn). */
static uint64_t small_bits(double x, int eb, int mb, bool fn) {
    uint64_t s = signbit(x) ? (uint64_t)1 << (eb + mb) : 0, ones = ((uint64_t)1 << eb) - 1;
    int bias = (1 << (eb - 1)) - 1;
    double a = fabs(x);
    if (isnan(x) || (fn && isinf(x))) return s | (ones << mb) | (fn ? ((uint64_t)1 << mb) - 1 : (uint64_t)1 << (mb - 1));
    if (isinf(x)) return s | (ones << mb);
    if (a < ldexp(1.0, 1 - bias)) return s | (uint64_t)ldexp(a, mb - (1 - bias)); /* subnormal or zero */
    int e = ilogb(a);
    return s | ((uint64_t)(e + bias) << mb) | ((uint64_t)ldexp(a, mb - e) - ((uint64_t)1 << mb));
}

static double small_value(uint64_t u, int eb, int mb, bool fn) {
    int bias = (1 << (eb - 1)) - 1;
    uint64_t m = u & (((uint64_t)1 << mb) - 1), e = (u >> mb) & (((uint64_t)1 << eb) - 1);
    double sign = (u >> (eb + mb)) & 1 ? -1.0 : 1.0, ones = (double)(((uint64_t)1 << eb) - 1);
    if (fn ? (e == ones && m == ((uint64_t)1 << mb) - 1) : (e == ones && m)) return NAN;
    if (!fn && e == ones) return sign * INFINITY;
    if (!e) return sign * ldexp((double)m, 1 - bias - mb);
    return sign * ldexp((double)(m | ((uint64_t)1 << mb)), (int)e - bias - mb);
}

/* T.reinterpret: the storage bits of v (dtype dt), and a value from bits. */
static uint64_t val_bits(Val v, TsDType dt) {
    switch (dt) {
    case TS_FLOAT64: { uint64_t u; memcpy(&u, &v.f, 8); return u; }
    case TS_FLOAT32: return f32_bits((float)v.f);
    case TS_FLOAT16: return small_bits(via_f16((float)v.f), 5, 10, false);
    case TS_BFLOAT16: return f32_bits(via_bf16((float)v.f)) >> 16;
    case TS_FLOAT8_E4M3: return small_bits(round_to(v.f, dt), 4, 3, true);
    case TS_FLOAT8_E5M2: return small_bits(round_to(v.f, dt), 5, 2, false);
    default: {
        int bits = ts_dtype_bits(dt);
        return bits >= 64 ? (uint64_t)v.i : (uint64_t)v.i & (((uint64_t)1 << bits) - 1);
    }
    }
}

static Val bits_val(uint64_t u, TsDType dt) {
    Val r = {0, 0};
    switch (dt) {
    case TS_FLOAT64: memcpy(&r.f, &u, 8); return r;
    case TS_FLOAT32: r.f = bits_f32((uint32_t)u); return r;
    case TS_FLOAT16: r.f = small_value(u, 5, 10, false); return r;
    case TS_BFLOAT16: r.f = bits_f32((uint32_t)u << 16); return r;
    case TS_FLOAT8_E4M3: r.f = small_value(u, 4, 3, true); return r;
    case TS_FLOAT8_E5M2: r.f = small_value(u, 5, 2, false); return r;
    default: r.i = wrap((int64_t)u, dt); return r;
    }
}

static Val convert(Val v, TsDType from, TsDType to) {
    Val r = {0, 0};
    if (is_f(to)) r.f = round_to(as_double(v, from), to);
    else if (to == TS_BOOL) r.i = is_f(from) ? v.f != 0 : v.i != 0;
    else r.i = wrap(is_f(from) ? f2i(v.f, to) : v.i, to);
    return r;
}

/* ---- storage ---------------------------------------------------------------- */

static void check_id(IrInterp *in, int id, const char *name) {
    if (id < 0 || id >= in->nid)
        rt_fail(in, (TsLoc){0}, "interp: %s has id %d beyond the kernel's %d", name, id, in->nid);
}

static Val eval(IrInterp *in, const IrExpr *e);

static int64_t eval_int(IrInterp *in, const IrExpr *e) {
    Val v = eval(in, e);
    return is_f(e->dt) ? f2i(v.f, TS_INT64) : v.i;
}

/* The address of element idx of b (bounds-checked). */
static double *element(IrInterp *in, const IrBuffer *b, IrExpr *const *idx, int nidx, TsLoc loc) {
    check_id(in, b->id, b->name);
    double *base = in->data[b->id];
    if (b->addr) rt_fail(in, loc, "interp: T.make_tensor buffer %s is at a run-time address (run it on the C or CUDA target)", b->name);
    if (!base) rt_fail(in, loc, "interp: buffer %s has no storage (unbound or not allocated)", b->name);
    if (nidx != b->ndim)
        rt_fail(in, loc, "interp: %s indexed with %d indices, has %d dims", b->name, nidx, b->ndim);
    int64_t off = 0, stride = 1;
    int64_t iv[16];
    for (int d = 0; d < nidx && d < 16; d++) iv[d] = eval_int(in, idx[d]);
    for (int d = nidx - 1; d >= 0; d--) {
        int64_t ext = eval_int(in, b->shape[d]);
        if (d >= 16 || iv[d] < 0 || iv[d] >= ext) {
            TsBuf t = {0};
            for (int j = 0; j < nidx && j < 16; j++) ts_buf_printf(&t, j ? ", %lld" : "%lld", (long long)iv[j]);
            const char *txt = ts_strdup(in->a, ts_buf_str(&t));
            ts_buf_free(&t);
            rt_fail(in, loc, "interp: out-of-bounds access %s[%s]: index %lld of dim %d is outside 0..%lld",
                    b->name, txt, (long long)(d < 16 ? iv[d] : -1), d, (long long)ext - 1);
        }
        int64_t st = b->strides ? eval_int(in, b->strides[d]) : stride;
        off += iv[d] * st;
        stride *= ext;
    }
    if (b->scope != IR_SCOPE_GLOBAL && (off < 0 || off >= in->cap[b->id]))
        rt_fail(in, loc, "interp: offset %lld outside %s's storage", (long long)off, b->name);
    return base + off;
}

static Val load(IrInterp *in, const IrBuffer *b, IrExpr *const *idx, int nidx, TsLoc loc) {
    double x = *element(in, b, idx, nidx, loc);
    Val v = {0, 0};
    if (is_f(b->dt)) v.f = x;
    else v.i = (int64_t)x;
    return v;
}

static void store(IrInterp *in, const IrBuffer *b, IrExpr *const *idx, int nidx, Val v,
                  TsDType vdt, bool add, TsLoc loc) {
    double *p = element(in, b, idx, nidx, loc);
    if (add) {
        Val old = {0, 0};
        if (is_f(b->dt)) old.f = *p;
        else old.i = (int64_t)*p;
        Val w = convert(v, vdt, b->dt);
        if (is_f(b->dt)) v.f = round_arith(old.f + w.f, b->dt);
        else v.i = (int64_t)((uint64_t)old.i + (uint64_t)w.i);
        vdt = b->dt;
    }
    Val r = convert(v, vdt, b->dt);
    *p = is_f(b->dt) ? r.f : is_u(b->dt) ? (double)(uint64_t)r.i : (double)r.i;
}

/* ---- stored bits (IrExpr load.bits, IrStmt store.bits) ------------------------------
 *
 * A cell holds an element as a double; reading a float element's bits
 * through a conversion would turn a NaN of any payload into one NaN (and
 * quiet a signalling one).  A NaN stored as bits is therefore kept in the
 * cell as a quiet double NaN whose low bits are the element's pattern, and
 * read back from there; every other value is exact in a double. */
static bool nan_pattern(uint64_t u, TsDType dt) {
    switch (dt) {
    case TS_FLOAT32: return (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu);
    case TS_FLOAT16: return (u & 0x7c00u) == 0x7c00u && (u & 0x3ffu);
    case TS_BFLOAT16: return (u & 0x7f80u) == 0x7f80u && (u & 0x7fu);
    case TS_FLOAT8_E5M2: return (u & 0x7cu) == 0x7cu && (u & 3u);
    case TS_FLOAT8_E4M3: return (u & 0x7fu) == 0x7fu;
    default: return false;
    }
}

static uint64_t cell_bits(double c, TsDType dt) {
    Val v = {0, 0};
    if (is_f(dt)) {
        uint64_t d;
        memcpy(&d, &c, 8);
        int w = ts_dtype_bits(dt);
        if (dt != TS_FLOAT64 && isnan(c) && ((d >> w) & (((uint64_t)1 << (51 - w)) - 1)) == 0 &&
            nan_pattern(d & (((uint64_t)1 << w) - 1), dt))
            return d & (((uint64_t)1 << w) - 1);
        v.f = c;
    } else {
        v.i = (int64_t)c;
    }
    return val_bits(v, dt);
}

static double bits_cell(uint64_t u, TsDType dt) {
    if (dt != TS_FLOAT64 && nan_pattern(u, dt)) {
        uint64_t d = 0x7ff8000000000000ull | u;
        double c;
        memcpy(&c, &d, 8);
        return c;
    }
    Val v = bits_val(u, dt);
    return is_f(dt) ? v.f : is_u(dt) ? (double)(uint64_t)v.i : (double)v.i;
}

/* ---- expressions ---------------------------------------------------------------- */

static Val fbin(IrInterp *in, const IrExpr *e, double x, double y) {
    Val r = {0, 0};
    double v;
    switch (e->bin.op) {
    case IR_ADD: v = x + y; break;
    case IR_SUB: v = x - y; break;
    case IR_MUL: v = x * y; break;
    case IR_DIV: v = x / y; break;
    case IR_FLOORDIV: v = floor(x / y); break;
    case IR_FLOORMOD: v = x - floor(x / y) * y; break;
    case IR_MIN: v = x < y ? x : y; break;
    case IR_MAX: v = x > y ? x : y; break;
    case IR_POW: v = pow(x, y); break;
    case IR_EQ: r.i = x == y; return r;
    case IR_NE: r.i = x != y; return r;
    case IR_LT: r.i = x < y; return r;
    case IR_LE: r.i = x <= y; return r;
    case IR_GT: r.i = x > y; return r;
    case IR_GE: r.i = x >= y; return r;
    case IR_AND: r.i = x != 0 && y != 0; return r;
    case IR_OR: r.i = x != 0 || y != 0; return r;
    default: rt_fail(in, e->loc, "interp: operator %d on floats", (int)e->bin.op);
    }
    r.f = round_arith(v, e->dt);
    return r;
}

static Val ibin(IrInterp *in, const IrExpr *e, int64_t x, int64_t y, TsDType dt) {
    bool u = is_u(dt);
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    Val r = {0, 0};
    int64_t v = 0;
    IrBinOp op = e->bin.op;
    if ((op == IR_DIV || op == IR_FLOORDIV || op == IR_FLOORMOD) && y == 0)
        rt_fail(in, e->loc, "interp: integer division by zero");
    switch (op) {
    case IR_ADD: v = (int64_t)(ux + uy); break;
    case IR_SUB: v = (int64_t)(ux - uy); break;
    case IR_MUL: v = (int64_t)(ux * uy); break;
    case IR_DIV: v = u ? (int64_t)(ux / uy) : x / y; break;
    case IR_FLOORDIV:
        if (u) { v = (int64_t)(ux / uy); break; }
        v = x / y - ((x % y != 0) && ((x % y < 0) != (y < 0)));
        break;
    case IR_FLOORMOD:
        if (u) { v = (int64_t)(ux % uy); break; }
        v = x % y;
        if (v != 0 && ((v < 0) != (y < 0))) v += y;
        break;
    case IR_MIN: v = u ? (int64_t)(ux < uy ? ux : uy) : x < y ? x : y; break;
    case IR_MAX: v = u ? (int64_t)(ux > uy ? ux : uy) : x > y ? x : y; break;
    case IR_EQ: r.i = x == y; return r;
    case IR_NE: r.i = x != y; return r;
    case IR_LT: r.i = u ? ux < uy : x < y; return r;
    case IR_LE: r.i = u ? ux <= uy : x <= y; return r;
    case IR_GT: r.i = u ? ux > uy : x > y; return r;
    case IR_GE: r.i = u ? ux >= uy : x >= y; return r;
    case IR_AND: r.i = x && y; return r;
    case IR_OR: r.i = x || y; return r;
    case IR_BITAND: v = x & y; break;
    case IR_BITOR: v = x | y; break;
    case IR_BITXOR: v = x ^ y; break;
    case IR_SHL: v = (y < 0 || y > 63) ? 0 : (int64_t)(ux << y); break;
    case IR_SHR:
        if (y < 0 || y > 63) v = (!u && x < 0) ? -1 : 0;
        else v = u ? (int64_t)(ux >> y) : (x < 0 ? ~(~x >> y) : x >> y);
        break;
    case IR_POW: {
        uint64_t acc = 1;
        for (int64_t i = 0; i < y && i < 64; i++) acc *= ux;
        v = (int64_t)acc;
        break;
    }
    default: rt_fail(in, e->loc, "interp: operator %d on integers", (int)op);
    }
    r.i = wrap(v, e->dt);
    return r;
}

static double call_fn(IrIntrinsic fn, double x, double y) {
    switch (fn) {
    case IR_EXP: return exp(x);
    case IR_EXP2: return exp2(x);
    case IR_LOG: return log(x);
    case IR_LOG2: return log2(x);
    case IR_SQRT: return sqrt(x);
    case IR_RSQRT: return 1.0 / sqrt(x);
    case IR_ABS: return fabs(x);
    case IR_SIN: return sin(x);
    case IR_COS: return cos(x);
    case IR_TANH: return tanh(x);
    case IR_FLOOR: return floor(x);
    case IR_CEIL: return ceil(x);
    case IR_ROUND: return nearbyint(x);
    case IR_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case IR_LOG1P: return log1p(x);
    case IR_EXP10: return pow(10.0, x);
    case IR_ISINF: return isinf(x) ? 1 : 0;
    case IR_ISNAN: return isnan(x) ? 1 : 0;
    case IR_FMOD: return fmod(x, y);
    case IR_POWF: return pow(x, y);
    case IR_ATAN2: return atan2(x, y);
    case IR_ERF: return erf(x);
    case IR_TRUNC: return trunc(x);
    case IR_SHFL_XOR: /* a warp collective: only thread-level runs know other lanes */
    case IR_REINTERPRET: /* eval() answers it: bits, not a number */
    case IR_WARP_SHFL: case IR_WARP_SHFL_UP: case IR_WARP_SHFL_DOWN: case IR_WARP_SHFL_XOR:
    case IR_WARP_BALLOT: case IR_WARP_SUM: case IR_WARP_MAX: case IR_WARP_MIN: case IR_WARP_BAND:
    case IR_WARP_BOR: case IR_WARP_SYNC:
    case IR_THREAD_RETURN: /* a statement, not a value (thread-level code only) */
    case IR_SET_MAX_NREG:  /* a register hint of the GPU: nothing to do here */
    case IR_WGMMA_WAIT:    /* gemms are synchronous here */
    case IR_FENCE_PROXY_ASYNC: /* (one proxy here) */
    case IR_SYNC_GRID:     /* cooperative kernels are refused (ts_interp_run) */
    case IR_GRID_WS:
    case IR_CLUSTER_RANK:  /* pass lower_cluster's arithmetic here */
    case IR_EXTERN_CALL: case IR_EXTERN_ADDR: /* refused with the kernel (ir_interp_new) */
    case IR_INTRINSIC_COUNT: break;
    }
    return NAN;
}

static Val eval(IrInterp *in, const IrExpr *e) {
    Val r = {0, 0};
    switch (e->kind) {
    case IR_E_INT: r.i = e->ival; return r;
    case IR_E_FLOAT: r.f = e->fval; return r;
    case IR_E_STRING: return r;
    case IR_E_VAR:
        check_id(in, e->var->id, e->var->name);
        if (!in->bound[e->var->id])
            rt_fail(in, e->loc, "interp: var %s (id %d) has no value", e->var->name, e->var->id);
        return convert(in->vars[e->var->id], e->var->dt, e->dt);
    case IR_E_LOAD:
        if (e->load.bits) {
            r.i = wrap((int64_t)cell_bits(*element(in, e->load.buf, e->load.idx, e->load.nidx, e->loc),
                                          e->load.buf->dt), e->dt);
            return r;
        }
        return convert(load(in, e->load.buf, e->load.idx, e->load.nidx, e->loc), e->load.buf->dt,
                       e->dt);
    case IR_E_BIN: {
        TsDType odt = e->bin.a->dt;
        if (e->bin.op == IR_AND || e->bin.op == IR_OR) {
            /* short-circuit, as the targets' && and || (and the walker's AND_RHS /
             * OR_RHS guards) have it: b's loads do not happen where a decides */
            Val x = eval(in, e->bin.a);
            bool xa = is_f(odt) ? x.f != 0 : x.i != 0;
            if (xa == (e->bin.op == IR_OR)) {
                r.i = xa;
                return r;
            }
            Val y = eval(in, e->bin.b);
            r.i = is_f(e->bin.b->dt) ? y.f != 0 : y.i != 0;
            return r;
        }
        Val x = eval(in, e->bin.a), y = convert(eval(in, e->bin.b), e->bin.b->dt, odt);
        if (is_f(odt)) {
            r = fbin(in, e, x.f, y.f);
            return e->dt == TS_BOOL ? r : convert(r, odt, e->dt);
        }
        r = ibin(in, e, x.i, y.i, odt);
        return r;
    }
    case IR_E_NEG: {
        Val x = eval(in, e->un.a);
        if (is_f(e->dt)) r.f = -x.f;
        else r.i = wrap((int64_t)(0 - (uint64_t)x.i), e->dt);
        return r;
    }
    case IR_E_NOT: {
        Val x = eval(in, e->un.a);
        if (e->un.bitnot) r.i = wrap(~x.i, e->dt);
        else r.i = is_f(e->un.a->dt) ? x.f == 0 : x.i == 0;
        return r;
    }
    case IR_E_CAST: return convert(eval(in, e->un.a), e->un.a->dt, e->dt);
    case IR_E_SELECT: {
        /* the taken side only, as the targets' `?:` (and the walker's
         * SELECT_A / SELECT_B guards) have it: the other side's loads do
         * not happen (T.if_then_else(i < n, A[i], 0) reads no A[n]) */
        Val c = eval(in, e->sel.cond);
        bool t = is_f(e->sel.cond->dt) ? c.f != 0 : c.i != 0;
        const IrExpr *arm = t ? e->sel.a : e->sel.b;
        return convert(eval(in, arm), arm->dt, e->dt);
    }
    case IR_E_CALL: {
        if (e->call.fn == IR_REINTERPRET)
            return bits_val(val_bits(eval(in, e->call.args[0]), e->call.args[0]->dt), e->dt);
        if (e->call.fn >= IR_WARP_SHFL && e->call.fn <= IR_WARP_SYNC)
            rt_fail(in, e->loc, "interp: a warp primitive needs the other lanes: run it on the C target (pass warp_c) "
                                "or the thread-level interpreter");
        double args[2] = {0, 0};
        for (int i = 0; i < e->call.nargs && i < 2; i++)
            args[i] = as_double(eval(in, e->call.args[i]), e->call.args[i]->dt);
        if (e->call.fn == IR_ABS && !is_f(e->dt)) {
            Val x = eval(in, e->call.args[0]);
            r.i = wrap(x.i < 0 ? (int64_t)(0 - (uint64_t)x.i) : x.i, e->dt);
            return r;
        }
        Val v = {0, call_fn(e->call.fn, args[0], args[1])};
        return convert(v, TS_FLOAT64, e->dt);
    }
    }
    rt_fail(in, e->loc, "interp: unknown expression kind %d", (int)e->kind);
}

/* ---- statements ------------------------------------------------------------------- */

static void bind(IrInterp *in, const IrVar *v, Val x) {
    check_id(in, v->id, v->name);
    in->vars[v->id] = x;
    in->bound[v->id] = 1;
}

static void alloc_local(IrInterp *in, const IrBuffer *b, TsLoc loc) {
    check_id(in, b->id, b->name);
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++) {
        int64_t e = eval_int(in, b->shape[d]);
        if (e < 0) rt_fail(in, loc, "interp: %s has negative extent %lld", b->name, (long long)e);
        n *= e;
    }
    if (in->cap[b->id] < n) {
        in->data[b->id] = TS_NEWN(in->a, double, n > 0 ? n : 1);
        in->cap[b->id] = n;
    }
    double poison = is_f(b->dt) ? NAN : -777777.0;
    for (int64_t i = 0; i < n; i++) in->data[b->id][i] = poison;
    if (b->mbar_count) in->mbar[b->id] = TS_NEWN(in->a, IrMbarState, n > 0 ? n : 1);
}

static int exec(IrInterp *in, const IrStmt *s) {
    if (!s) return FLOW_NEXT;
    in->steps++;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) {
            int f = exec(in, s->seq.v[i]);
            if (f != FLOW_NEXT) return f;
        }
        return FLOW_NEXT;
    case IR_S_FOR: {
        int64_t lo = eval_int(in, s->for_.min), n = eval_int(in, s->for_.extent);
        for (int64_t i = 0; i < n; i++) {
            Val v = {wrap(lo + i, s->for_.var->dt), (double)(lo + i)};
            bind(in, s->for_.var, v);
            if (exec(in, s->for_.body) == FLOW_BREAK) break;
        }
        return FLOW_NEXT;
    }
    case IR_S_WHILE:
        for (;;) {
            Val c = eval(in, s->while_.cond);
            if (is_f(s->while_.cond->dt) ? c.f == 0 : c.i == 0) break;
            if (exec(in, s->while_.body) == FLOW_BREAK) break;
        }
        return FLOW_NEXT;
    case IR_S_IF: {
        Val c = eval(in, s->if_.cond);
        bool t = is_f(s->if_.cond->dt) ? c.f != 0 : c.i != 0;
        return exec(in, t ? s->if_.then : s->if_.else_);
    }
    case IR_S_BREAK: return FLOW_BREAK;
    case IR_S_CONTINUE: return FLOW_CONTINUE;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if (s->store.bits) {
            Val u = eval(in, s->store.value);
            double *p = element(in, s->store.buf, s->store.idx, s->store.nidx, s->loc);
            *p = bits_cell(val_bits(u, s->store.value->dt), s->store.buf->dt);
            return FLOW_NEXT;
        }
        store(in, s->store.buf, s->store.idx, s->store.nidx, eval(in, s->store.value),
              s->store.value->dt, s->kind == IR_S_ATOMIC_ADD, s->loc);
        return FLOW_NEXT;
    case IR_S_LET:
        bind(in, s->let.var, convert(eval(in, s->let.value), s->let.value->dt, s->let.var->dt));
        return FLOW_NEXT;
    case IR_S_ALLOC: alloc_local(in, s->alloc.buf, s->loc); return FLOW_NEXT;
    case IR_S_EVAL: (void)eval(in, s->eval.e); return FLOW_NEXT;
    case IR_S_PRINT:
        if (s->print.msg) ts_buf_printf(&in->out, "%s ", s->print.msg);
        if (s->print.value) {
            const IrExpr *v = s->print.value;
            if (v->kind == IR_E_STRING) ts_buf_puts(&in->out, v->str);
            else if (is_f(v->dt)) ts_buf_printf(&in->out, "%.9g", eval(in, v).f);
            else ts_buf_printf(&in->out, "%lld", (long long)eval(in, v).i);
        } else if (s->print.buf) {
            ts_buf_printf(&in->out, "<buffer %s>", s->print.buf->name);
        }
        ts_buf_puts(&in->out, "\n");
        return FLOW_NEXT;
    case IR_S_ROLE: {
        int64_t saved = in->arrivals;
        in->arrivals = s->role.n;
        int f = exec(in, s->role.body);
        in->arrivals = saved;
        return f;
    }
    case IR_S_MBAR: {
        const IrBuffer *b = s->mbar.buf;
        int64_t i = eval_int(in, s->mbar.idx), v = s->mbar.value ? eval_int(in, s->mbar.value) : 0;
        int64_t nb = 0;
        if (!in->mbar[b->id] || !ir_is_const_int(b->shape[0], &nb) || i < 0 || i >= nb)
            rt_fail(in, s->loc, "interp: mbarrier %s[%lld] does not exist", b->name, (long long)i);
        const char *why = ir_mbar_step(&in->mbar[b->id][i], s->mbar.op, v, in->arrivals);
        if (why)
            rt_fail(in, s->loc, "mbarrier %s[%lld]: %s (%s)", b->name, (long long)i, why, ir_mbar_op_name(s->mbar.op));
        return FLOW_NEXT;
    }
    case IR_S_TILEOP:
        rt_fail(in, s->loc, "interp: tile operator %s was not lowered", ts_op_name(s->op->kind));
    case IR_S_BARRIER:
        /* the C target's barriers around a coroutine kernel's uniform code
         * (pass coro_sync_c): a block-level run is program order already */
        if (s->barrier.id >= IR_C_BAR_BLOCK && !s->barrier.idv) return FLOW_NEXT;
        rt_fail(in, s->loc, "interp: a thread-level statement in a block-level run");
    case IR_S_VCOPY:
    case IR_S_ASYNC_COMMIT:
    case IR_S_ASYNC_WAIT:
        rt_fail(in, s->loc, "interp: a thread-level statement in a block-level run");
    }
    rt_fail(in, s->loc, "interp: unknown statement kind %d", (int)s->kind);
}

/* ---- API ------------------------------------------------------------------------------ */

IrInterp *ir_interp_new(TsArena *a, TsDiag *d, const IrKernel *k) {
    if (ir_kernel_has_extern(k)) /* (the thread-level interpreter makes its threads here too) */
        ts_fail_at(d, TS_ERR_UNSUPPORTED, k->extern_loc,
                   "interp: kernel '%s' uses external CUDA source (T.import_source / T.call_extern), which the "
                   "interpreters cannot run",
                   k->name ? k->name : "?");
    IrInterp *in = TS_NEW(a, IrInterp);
    in->a = a;
    in->d = d;
    in->k = k;
    in->nid = k->next_id > 0 ? k->next_id : 1;
    in->data = TS_NEWN(a, double *, in->nid);
    in->cap = TS_NEWN(a, int64_t, in->nid);
    in->mbar = TS_NEWN(a, IrMbarState *, in->nid);
    in->arrivals = ir_kernel_nthreads(k);
    in->vars = TS_NEWN(a, Val, in->nid);
    in->bound = TS_NEWN(a, char, in->nid);
    return in;
}

void ir_interp_bind_buffer(IrInterp *in, const IrBuffer *b, double *data) {
    check_id(in, b->id, b->name);
    in->data[b->id] = data;
}

void ir_interp_bind_storage(IrInterp *in, const IrBuffer *b, double *data, int64_t n) {
    check_id(in, b->id, b->name);
    in->data[b->id] = data;
    in->cap[b->id] = n;
}

void ir_interp_bind_var(IrInterp *in, const IrVar *v, double value) {
    Val x = {is_f(v->dt) ? 0 : (int64_t)value, value};
    bind(in, v, x);
}

void ir_interp_run_block(IrInterp *in, int64_t bx, int64_t by, int64_t bz) {
    int64_t b[3] = {bx, by, bz};
    if (in->k->cooperative)
        rt_fail(in, in->k->body ? in->k->body->loc : (TsLoc){0},
                "interp: kernel '%s' is cooperative (T.sync_grid in a loop or branch, or a collective between "
                "blocks): its blocks wait for each other, and the interpreter runs them one after another; run it "
                "on the C or CUDA target", in->k->name ? in->k->name : "?");
    for (int i = 0; i < 3; i++)
        if (in->k->block_idx[i]) {
            Val v = {b[i], (double)b[i]};
            bind(in, in->k->block_idx[i], v);
        }
    exec(in, in->k->body);
}

void ir_interp_run_grid(IrInterp *in) {
    int64_t g[3] = {1, 1, 1};
    for (int i = 0; i < in->k->ngrid && i < 3; i++) g[i] = eval_int(in, in->k->grid[i]);
    for (int64_t z = 0; z < g[2]; z++)
        for (int64_t y = 0; y < g[1]; y++)
            for (int64_t x = 0; x < g[0]; x++) ir_interp_run_block(in, x, y, z);
}

void ir_interp_run(IrInterp *in, const IrStmt *s) { exec(in, s); }

double ir_interp_eval(IrInterp *in, const IrExpr *e) { return as_double(eval(in, e), e->dt); }

double ir_interp_round(double x, TsDType dt) { return round_to(x, dt); }

const char *ir_interp_output(IrInterp *in) { return ts_buf_str(&in->out); }

int64_t ir_interp_steps(const IrInterp *in) { return in->steps; }

void ir_interp_free(IrInterp *in) { ts_buf_free(&in->out); }
