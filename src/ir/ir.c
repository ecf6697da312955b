/*
 * ir.c — building tile IR nodes.
 *
 * Every node is made here, so this is where the IR's typing rules live.
 * The constructors are "smart": ir_bin promotes its operands to a common
 * dtype (inserting explicit casts, so later stages never have to guess
 * which conversion C would do implicitly) and folds constants, and
 * ir_cast folds casts of constants.  Because every producer of IR goes
 * through them, the simplify pass can be little more than "rebuild the
 * tree through the constructors".
 *
 * Promotion follows TVM's spirit: bool yields to anything, int op float
 * gives the float type, otherwise the wider type wins; two different
 * floats of the same width (float16/bfloat16) meet in float32, and signed
 * and unsigned ints of the same width give the unsigned one.
 *
 * Folding is exact for the operand dtype: integer results wrap to the
 * dtype's width, float results are rounded to the dtype's precision
 * (float16, bfloat16 and float8 included) so a folded constant equals
 * what the generated code would compute.  Integer division by a zero
 * constant is left unfolded (it is the program's problem at run time).
 */
#include "ir/ir.h"

#include <math.h>
#include <string.h>

#include "ir/walk.h"

/* ---- kernels, vars, buffers ------------------------------------------- */

IrKernel *ir_kernel_new(TsArena *a, const char *name) {
    IrKernel *k = TS_NEW(a, IrKernel);
    k->arena = a;
    k->name = ts_strdup(a, name ? name : "kernel");
    k->ngrid = 1;
    for (int i = 0; i < 3; i++) {
        k->grid[i] = ir_i32(a, 1);
        k->threads[i] = 1;
    }
    k->threads[0] = 128; /* T.Kernel's default */
    return k;
}

IrVar *ir_var(IrKernel *k, const char *name, TsDType dt, IrVarKind kind) {
    IrVar *v = TS_NEW(k->arena, IrVar);
    v->name = ts_strdup(k->arena, name ? name : "v");
    v->id = k->next_id++;
    v->dt = dt;
    v->kind = kind;
    return v;
}

IrVar *ir_kernel_tid(IrKernel *k) {
    if (!k->tid) {
        k->tid = ir_var(k, "tid", TS_INT32, IR_VAR_THREAD_IDX);
        k->tid->axis = -1; /* the flat index, not one axis of T.get_thread_binding */
    }
    return k->tid;
}

int64_t ir_kernel_nthreads(const IrKernel *k) {
    return (int64_t)k->threads[0] * k->threads[1] * k->threads[2];
}

IrBuffer *ir_buffer(IrKernel *k, const char *name, TsDType dt, IrScope scope, int ndim,
                    IrExpr **shape, TsLoc loc) {
    TsArena *a = k->arena;
    IrBuffer *b = TS_NEW(a, IrBuffer);
    b->name = ts_strdup(a, name ? name : "buf");
    b->id = k->next_id++;
    b->dt = dt;
    b->scope = scope;
    b->ndim = ndim;
    b->shape = TS_NEWN(a, IrExpr *, ndim > 0 ? ndim : 1);
    for (int i = 0; i < ndim; i++) b->shape[i] = shape[i];
    b->param = -1;
    b->stages = 1;
    b->loc = loc;
    ts_vec_push(a, k->buffers, b);
    return b;
}

const char *ir_scope_name(IrScope s) {
    switch (s) {
    case IR_SCOPE_GLOBAL: return "global";
    case IR_SCOPE_SHARED: return "shared";
    case IR_SCOPE_FRAGMENT: return "fragment";
    case IR_SCOPE_LOCAL: return "local";
    case IR_SCOPE_VAR: return "var";
    case IR_SCOPE_TMEM: return "tmem";
    }
    return "?";
}

const char *ir_for_kind_name(IrForKind k) {
    switch (k) {
    case IR_FOR_SERIAL: return "serial";
    case IR_FOR_PARALLEL: return "parallel";
    case IR_FOR_PIPELINED: return "pipelined";
    case IR_FOR_UNROLL: return "unroll";
    case IR_FOR_VECTORIZED: return "vectorized";
    case IR_FOR_THREAD: return "thread_range";
    }
    return "?";
}

/* ---- dtype helpers ------------------------------------------------------ */

static bool dt_unsigned(TsDType dt) {
    const TsDTypeInfo *i = ts_dtype_info(dt);
    return i && (i->kind == 'u' || i->kind == 'b');
}

TsDType ir_promote(TsDType a, TsDType b) {
    if (a == b) return a;
    if (a == TS_DTYPE_NONE) return b;
    if (b == TS_DTYPE_NONE) return a;
    if (a == TS_BOOL) return b;
    if (b == TS_BOOL) return a;
    bool fa = ts_dtype_is_float(a), fb = ts_dtype_is_float(b);
    if (fa != fb) return fa ? a : b;
    int ba = ts_dtype_bits(a), bb = ts_dtype_bits(b);
    if (ba != bb) return ba > bb ? a : b;
    if (fa) return ba >= 16 ? TS_FLOAT32 : TS_FLOAT16; /* f16 vs bf16, e4m3 vs e5m2 */
    return dt_unsigned(a) ? a : b;
}

/* Wrap an integer to the width and signedness of dt. */
static int64_t wrap_int(int64_t v, TsDType dt) {
    if (dt == TS_BOOL) return v != 0;
    int bits = ts_dtype_bits(dt);
    if (bits <= 0 || bits >= 64) return v;
    uint64_t mask = (1ull << bits) - 1, u = (uint64_t)v & mask;
    if (!dt_unsigned(dt) && ((u >> (bits - 1)) & 1)) u |= ~mask;
    return (int64_t)u;
}

/* Round x to a binary float format with p significand bits (implicit one
 * included), minimum normal exponent emin and largest finite value maxf. */
static double round_fmt(double x, int p, int emin, double maxf) {
    if (!isfinite(x) || x == 0) return x;
    int e;
    (void)frexp(x, &e);
    int ex = e - 1;
    if (ex < emin) ex = emin;
    double scale = ldexp(1.0, p - 1 - ex);
    double r = nearbyint(x * scale) / scale;
    if (fabs(r) > maxf) r = copysign(INFINITY, x);
    return r;
}

/* The value a double becomes when stored as dt (float dtypes). */
static double round_float(double x, TsDType dt) {
    switch (dt) {
    case TS_FLOAT64: return x;
    case TS_FLOAT32: return (double)(float)x;
    case TS_FLOAT16: return round_fmt(x, 11, -14, 65504.0);
    case TS_BFLOAT16: return round_fmt(x, 8, -126, 3.3895313892515355e38);
    case TS_FLOAT8_E4M3: return round_fmt(x, 4, -6, 448.0);
    case TS_FLOAT8_E5M2: return round_fmt(x, 3, -14, 57344.0);
    case TS_FLOAT4_E2M1: return ts_fp4_e2m1_value(ts_fp4_e2m1_code(x));
    default: return x;
    }
}

/* Float to integer the way a C cast does for in-range values; out-of-range
 * and NaN saturate instead of being undefined. */
static int64_t float_to_int(double x, TsDType dt) {
    if (isnan(x)) return 0;
    x = trunc(x);
    if (dt_unsigned(dt)) {
        if (x <= 0) return 0;
        if (x >= 18446744073709551615.0) return (int64_t)UINT64_MAX;
        return wrap_int((int64_t)(uint64_t)x, dt);
    }
    if (x >= 9223372036854775807.0) return wrap_int(INT64_MAX, dt);
    if (x <= -9223372036854775808.0) return wrap_int(INT64_MIN, dt);
    return wrap_int((int64_t)x, dt);
}

static double int_to_double(int64_t v, TsDType dt) {
    return dt_unsigned(dt) ? (double)(uint64_t)v : (double)v;
}

/* ---- leaf expressions --------------------------------------------------- */

static IrExpr *new_expr(TsArena *a, IrExprKind kind, TsDType dt) {
    IrExpr *e = TS_NEW(a, IrExpr);
    e->kind = kind;
    e->dt = dt;
    return e;
}

IrExpr *ir_int(TsArena *a, int64_t v, TsDType dt) {
    if (ts_dtype_is_float(dt)) return ir_float(a, (double)v, dt);
    IrExpr *e = new_expr(a, IR_E_INT, dt);
    e->ival = wrap_int(v, dt);
    return e;
}

IrExpr *ir_i32(TsArena *a, int64_t v) { return ir_int(a, v, TS_INT32); }

IrExpr *ir_float(TsArena *a, double v, TsDType dt) {
    if (!ts_dtype_is_float(dt)) return ir_int(a, float_to_int(v, dt), dt);
    IrExpr *e = new_expr(a, IR_E_FLOAT, dt);
    e->fval = round_float(v, dt);
    return e;
}

IrExpr *ir_var_ref(TsArena *a, IrVar *v) {
    IrExpr *e = new_expr(a, IR_E_VAR, v->dt);
    e->var = v;
    return e;
}

IrExpr *ir_load(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx) {
    IrExpr *e = new_expr(a, IR_E_LOAD, b->dt);
    e->load.buf = b;
    e->load.nidx = nidx;
    e->load.idx = TS_NEWN(a, IrExpr *, nidx > 0 ? nidx : 1);
    for (int i = 0; i < nidx; i++) e->load.idx[i] = idx[i];
    return e;
}

TsDType ir_bits_dtype(TsDType dt) {
    switch (ts_dtype_bits(dt)) {
    case 8: return TS_UINT8;
    case 16: return TS_UINT16;
    case 32: return TS_UINT32;
    default: return TS_UINT64;
    }
}

IrExpr *ir_load_bits(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx) {
    IrExpr *e = ir_load(a, b, idx, nidx);
    e->dt = ir_bits_dtype(b->dt);
    e->load.bits = 1;
    return e;
}

bool ir_is_const_int(const IrExpr *e, int64_t *out) {
    if (!e || e->kind != IR_E_INT) return false;
    if (out) *out = e->ival;
    return true;
}

static bool is_const(const IrExpr *e) { return e->kind == IR_E_INT || e->kind == IR_E_FLOAT; }

static double const_as_double(const IrExpr *e) {
    return e->kind == IR_E_FLOAT ? e->fval : int_to_double(e->ival, e->dt);
}

/* ---- casts ----------------------------------------------------------------- */

/* On the shared walker (walk.c): stop at the first node fn accepts. */
typedef struct AnyExpr {
    bool (*fn)(const IrExpr *e, void *ctx); /* the caller's predicate */
    void *ctx;                              /* its context */
    bool found;                             /* the answer */
} AnyExpr;

static bool any_expr_pre(IrVisitor *v, const IrExpr *e) {
    AnyExpr *c = v->ctx;
    if (c->fn(e, c->ctx)) c->found = v->stop = true;
    return !v->stop;
}

bool ir_expr_any(const IrExpr *e, bool (*fn)(const IrExpr *e, void *ctx), void *ctx) {
    AnyExpr c = {fn, ctx, false};
    IrVisitor v = {.ctx = &c, .pre_expr = any_expr_pre};
    ir_visit_expr(&v, e);
    return c.found;
}

bool ir_expr_equal(const IrExpr *a, const IrExpr *b) {
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind || a->dt != b->dt) return false;
    switch (a->kind) {
    case IR_E_INT: return a->ival == b->ival;
    case IR_E_FLOAT: return a->fval == b->fval;
    case IR_E_VAR: return a->var == b->var;
    case IR_E_LOAD:
        if (a->load.buf != b->load.buf) return false;
        for (int i = 0; i < a->load.nidx; i++)
            if (!ir_expr_equal(a->load.idx[i], b->load.idx[i])) return false;
        return true;
    case IR_E_BIN:
        return a->bin.op == b->bin.op && ir_expr_equal(a->bin.a, b->bin.a) &&
               ir_expr_equal(a->bin.b, b->bin.b);
    case IR_E_NEG: case IR_E_NOT: case IR_E_CAST:
        return a->un.bitnot == b->un.bitnot && ir_expr_equal(a->un.a, b->un.a);
    case IR_E_SELECT:
        return ir_expr_equal(a->sel.cond, b->sel.cond) && ir_expr_equal(a->sel.a, b->sel.a) &&
               ir_expr_equal(a->sel.b, b->sel.b);
    case IR_E_CALL:
        if (a->call.fn != b->call.fn || a->call.nargs != b->call.nargs) return false;
        for (int i = 0; i < a->call.nargs; i++)
            if (!ir_expr_equal(a->call.args[i], b->call.args[i])) return false;
        return true;
    default: return false;
    }
}


IrExpr *ir_cast(TsArena *a, TsDType dt, IrExpr *x) {
    if (x->dt == dt) return x;
    if (x->kind == IR_E_INT) {
        if (ts_dtype_is_float(dt)) return ir_float(a, int_to_double(x->ival, x->dt), dt);
        return ir_int(a, dt == TS_BOOL ? x->ival != 0 : x->ival, dt);
    }
    if (x->kind == IR_E_FLOAT) {
        if (ts_dtype_is_float(dt)) return ir_float(a, x->fval, dt);
        if (dt == TS_BOOL) return ir_int(a, x->fval != 0, dt);
        return ir_int(a, float_to_int(x->fval, dt), dt);
    }
    IrExpr *e = new_expr(a, IR_E_CAST, dt);
    e->loc = x->loc;
    e->un.a = x;
    return e;
}

/* ---- binary operators ------------------------------------------------------ */

static bool is_cmp(IrBinOp op) {
    return op == IR_EQ || op == IR_NE || op == IR_LT || op == IR_LE || op == IR_GT ||
           op == IR_GE;
}

static int64_t ipow(int64_t b, int64_t e) {
    uint64_t r = 1, ub = (uint64_t)b;
    while (e > 0) {
        if (e & 1) r *= ub;
        ub *= ub;
        e >>= 1;
    }
    return (int64_t)r;
}

/* Fold two integer constants of dtype dt (the promoted operand type).
 * Returns false when the operation must stay (division by zero, negative
 * power, oversize shift). */
static bool fold_int(IrBinOp op, int64_t x, int64_t y, TsDType dt, int64_t *r) {
    bool u = dt_unsigned(dt);
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case IR_ADD: *r = (int64_t)(ux + uy); return true;
    case IR_SUB: *r = (int64_t)(ux - uy); return true;
    case IR_MUL: *r = (int64_t)(ux * uy); return true;
    case IR_DIV:
        if (y == 0 || (!u && x == INT64_MIN && y == -1)) return false;
        *r = u ? (int64_t)(ux / uy) : x / y;
        return true;
    case IR_FLOORDIV:
        if (y == 0 || (!u && x == INT64_MIN && y == -1)) return false;
        if (u) { *r = (int64_t)(ux / uy); return true; }
        *r = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) *r -= 1;
        return true;
    case IR_FLOORMOD:
        if (y == 0 || (!u && x == INT64_MIN && y == -1)) return false;
        if (u) { *r = (int64_t)(ux % uy); return true; }
        *r = x % y;
        if (*r != 0 && ((*r < 0) != (y < 0))) *r += y;
        return true;
    case IR_MIN: *r = u ? (int64_t)(ux < uy ? ux : uy) : (x < y ? x : y); return true;
    case IR_MAX: *r = u ? (int64_t)(ux > uy ? ux : uy) : (x > y ? x : y); return true;
    case IR_EQ: *r = x == y; return true;
    case IR_NE: *r = x != y; return true;
    case IR_LT: *r = u ? ux < uy : x < y; return true;
    case IR_LE: *r = u ? ux <= uy : x <= y; return true;
    case IR_GT: *r = u ? ux > uy : x > y; return true;
    case IR_GE: *r = u ? ux >= uy : x >= y; return true;
    case IR_AND: *r = x && y; return true;
    case IR_OR: *r = x || y; return true;
    case IR_BITAND: *r = x & y; return true;
    case IR_BITOR: *r = x | y; return true;
    case IR_BITXOR: *r = x ^ y; return true;
    case IR_SHL:
        if (y < 0 || y >= 64) return false;
        *r = (int64_t)(ux << y);
        return true;
    case IR_SHR:
        if (y < 0 || y >= 64) return false;
        *r = u ? (int64_t)(ux >> y) : (x < 0 ? ~(~x >> y) : x >> y);
        return true;
    case IR_POW:
        if (y < 0) return false;
        *r = ipow(x, y);
        return true;
    case IR_BINOP_COUNT: break;
    }
    return false;
}

/* Fold two float constants; false for ops that have no float meaning. */
static bool fold_float(IrBinOp op, double x, double y, double *r) {
    switch (op) {
    case IR_ADD: *r = x + y; return true;
    case IR_SUB: *r = x - y; return true;
    case IR_MUL: *r = x * y; return true;
    case IR_DIV: *r = x / y; return true;
    case IR_FLOORDIV: *r = floor(x / y); return true;
    case IR_FLOORMOD: *r = x - floor(x / y) * y; return true;
    case IR_MIN: *r = x < y ? x : y; return true;
    case IR_MAX: *r = x > y ? x : y; return true;
    case IR_EQ: *r = x == y; return true;
    case IR_NE: *r = x != y; return true;
    case IR_LT: *r = x < y; return true;
    case IR_LE: *r = x <= y; return true;
    case IR_GT: *r = x > y; return true;
    case IR_GE: *r = x >= y; return true;
    case IR_AND: *r = x != 0 && y != 0; return true;
    case IR_OR: *r = x != 0 || y != 0; return true;
    case IR_POW: *r = pow(x, y); return true;
    default: return false;
    }
}

static bool is_int_value(const IrExpr *e, int64_t v) {
    return e->kind == IR_E_INT && e->ival == v && ts_dtype_is_int(e->dt);
}

static bool is_pos_const(const IrExpr *e, int64_t *v) { return e->kind == IR_E_INT && (*v = e->ival) > 0; }

/* x // c % m * c + x % c is x % (c * m), and x // c * c + x % c is x
 * (floor division and modulo, c, m > 0): the digits of a delinearized
 * index put back together, as a view's index map (T.reshape) over a
 * T.Parallel nest that partition_threads flattened makes them.  p is the
 * product, q the modulo; NULL where the pattern does not match. */
static IrExpr *regroup_digits(TsArena *a, IrExpr *p, IrExpr *q) {
    int64_t c, c2, m;
    if (p->kind != IR_E_BIN || p->bin.op != IR_MUL || q->kind != IR_E_BIN || q->bin.op != IR_FLOORMOD) return NULL;
    if (!is_pos_const(q->bin.b, &c)) return NULL;
    IrExpr *hi = p->bin.a;
    if (!is_pos_const(p->bin.b, &c2)) {
        if (!is_pos_const(p->bin.a, &c2)) return NULL;
        hi = p->bin.b;
    }
    if (c2 != c || hi->kind != IR_E_BIN) return NULL;
    IrExpr *x = q->bin.a;
    if (hi->bin.op == IR_FLOORDIV && is_int_value(hi->bin.b, c) && ir_expr_equal(hi->bin.a, x)) return x;
    if (hi->bin.op != IR_FLOORMOD || !is_pos_const(hi->bin.b, &m)) return NULL;
    IrExpr *d = hi->bin.a;
    if (d->kind != IR_E_BIN || d->bin.op != IR_FLOORDIV || !is_int_value(d->bin.b, c) || !ir_expr_equal(d->bin.a, x))
        return NULL;
    int64_t cm;
    if (__builtin_mul_overflow(c, m, &cm)) return NULL;
    return ir_bin(a, IR_FLOORMOD, x, ir_int(a, cm, x->dt));
}

IrExpr *ir_bin(TsArena *a, IrBinOp op, IrExpr *x, IrExpr *y) {
    TsDType dt;
    if (op == IR_AND || op == IR_OR) {
        dt = TS_BOOL;
    } else {
        dt = ir_promote(x->dt, y->dt);
    }
    x = ir_cast(a, dt, x);
    y = ir_cast(a, dt, y);
    TsDType rdt = (is_cmp(op) || op == IR_AND || op == IR_OR) ? TS_BOOL : dt;

    /* constant folding */
    if (x->kind == IR_E_INT && y->kind == IR_E_INT) {
        int64_t r;
        if (fold_int(op, x->ival, y->ival, dt, &r)) return ir_int(a, r, rdt);
    } else if (is_const(x) && is_const(y)) {
        double r;
        if (fold_float(op, const_as_double(x), const_as_double(y), &r))
            return rdt == TS_BOOL ? ir_int(a, r != 0, TS_BOOL) : ir_float(a, r, rdt);
    }

    /* integer identities (expressions have no side effects) */
    if (ts_dtype_is_int(dt)) {
        switch (op) {
        case IR_ADD: {
            if (is_int_value(y, 0)) return x;
            if (is_int_value(x, 0)) return y;
            IrExpr *r = regroup_digits(a, x, y);
            if (!r) r = regroup_digits(a, y, x);
            if (r && r->dt == dt) return r;
            break;
        }
        case IR_SUB:
            if (is_int_value(y, 0)) return x;
            break;
        case IR_MUL:
            if (is_int_value(y, 1)) return x;
            if (is_int_value(x, 1)) return y;
            if (is_int_value(y, 0) || is_int_value(x, 0)) return ir_int(a, 0, dt);
            break;
        case IR_DIV:
        case IR_FLOORDIV:
            if (is_int_value(y, 1)) return x;
            break;
        case IR_FLOORMOD:
            if (is_int_value(y, 1)) return ir_int(a, 0, dt);
            break;
        default: break;
        }
    }
    if (op == IR_AND) { /* x and y are bool constants here (TS_BOOL is not an int dtype) */
        if ((x->kind == IR_E_INT && !x->ival) || (y->kind == IR_E_INT && !y->ival)) return ir_int(a, 0, TS_BOOL);
        if (x->kind == IR_E_INT) return y;
        if (y->kind == IR_E_INT) return x;
    } else if (op == IR_OR) {
        if ((x->kind == IR_E_INT && x->ival) || (y->kind == IR_E_INT && y->ival))
            return ir_int(a, 1, TS_BOOL);
        if (x->kind == IR_E_INT) return y;
        if (y->kind == IR_E_INT) return x;
    }

    IrExpr *e = new_expr(a, IR_E_BIN, rdt);
    e->loc = x->loc.src ? x->loc : y->loc;
    e->bin.op = op;
    e->bin.a = x;
    e->bin.b = y;
    return e;
}

/* ---- unary, select, calls ---------------------------------------------- */

IrExpr *ir_neg(TsArena *a, IrExpr *x) {
    if (x->kind == IR_E_INT) return ir_int(a, (int64_t)(0 - (uint64_t)x->ival), x->dt);
    if (x->kind == IR_E_FLOAT) return ir_float(a, -x->fval, x->dt);
    IrExpr *e = new_expr(a, IR_E_NEG, x->dt);
    e->loc = x->loc;
    e->un.a = x;
    return e;
}

/* Logical not for bool (and for floats, giving bool); bitwise not for ints. */
IrExpr *ir_not(TsArena *a, IrExpr *x) {
    bool bitnot = ts_dtype_is_int(x->dt);
    if (!bitnot) x = ir_cast(a, TS_BOOL, x);
    if (x->kind == IR_E_INT) return ir_int(a, bitnot ? ~x->ival : !x->ival, x->dt);
    IrExpr *e = new_expr(a, IR_E_NOT, x->dt);
    e->loc = x->loc;
    e->un.a = x;
    e->un.bitnot = bitnot;
    return e;
}

IrExpr *ir_select(TsArena *a, IrExpr *c, IrExpr *x, IrExpr *y) {
    TsDType dt = ir_promote(x->dt, y->dt);
    c = ir_cast(a, TS_BOOL, c);
    x = ir_cast(a, dt, x);
    y = ir_cast(a, dt, y);
    if (c->kind == IR_E_INT) return c->ival ? x : y;
    IrExpr *e = new_expr(a, IR_E_SELECT, dt);
    e->loc = c->loc;
    e->sel.cond = c;
    e->sel.a = x;
    e->sel.b = y;
    return e;
}

IrExpr *ir_call(TsArena *a, IrIntrinsic fn, IrExpr **args, int nargs, TsDType dt) {
    IrExpr *e = new_expr(a, IR_E_CALL, dt);
    e->call.fn = fn;
    e->call.nargs = nargs;
    e->call.args = TS_NEWN(a, IrExpr *, nargs > 0 ? nargs : 1);
    for (int i = 0; i < nargs; i++) e->call.args[i] = args[i];
    if (nargs > 0) e->loc = args[0]->loc;
    return e;
}

/* ---- statements ------------------------------------------------------------ */

const char *ir_mbar_op_name(IrMbarOp op) {
    switch (op) {
    case IR_MBAR_INIT: return "init";
    case IR_MBAR_ARRIVE: return "arrive";
    case IR_MBAR_EXPECT_TX: return "expect_tx";
    case IR_MBAR_WAIT: return "wait_parity";
    case IR_MBAR_ARRIVE_ASYNC: return "arrive_async";
    case IR_MBAR_ARRIVE_ONE: return "arrive_one";
    }
    return "?";
}

IrStmt *ir_stmt(TsArena *a, IrStmtKind kind, TsLoc loc) {
    IrStmt *s = TS_NEW(a, IrStmt);
    s->kind = kind;
    s->loc = loc;
    return s;
}

IrStmt *ir_seq(TsArena *a) { return ir_stmt(a, IR_S_SEQ, (TsLoc){0}); }

bool ir_vcopy_dtypes_ok(TsDType dst, TsDType src) {
    if (dst == src) return true;
    bool d16 = dst == TS_FLOAT16 || dst == TS_BFLOAT16, s16 = src == TS_FLOAT16 || src == TS_BFLOAT16;
    return (d16 && src == TS_FLOAT32) || (s16 && dst == TS_FLOAT32);
}

void ir_seq_push(TsArena *a, IrStmt *seq, IrStmt *s) {
    if (!s) return;
    ts_vec_push(a, seq->seq, s);
}

IrStmt *ir_for(TsArena *a, IrVar *v, IrExpr *min, IrExpr *extent, IrForKind kind,
               IrStmt *body) {
    IrStmt *s = ir_stmt(a, IR_S_FOR, (TsLoc){0});
    s->for_.var = v;
    s->for_.min = min;
    s->for_.extent = extent;
    s->for_.kind = kind;
    s->for_.body = body;
    return s;
}

/* The value is converted to the buffer's dtype here, explicitly. */
IrStmt *ir_store(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx, IrExpr *value) {
    IrStmt *s = ir_stmt(a, IR_S_STORE, value ? value->loc : (TsLoc){0});
    s->store.buf = b;
    s->store.nidx = nidx;
    s->store.idx = TS_NEWN(a, IrExpr *, nidx > 0 ? nidx : 1);
    for (int i = 0; i < nidx; i++) s->store.idx[i] = idx[i];
    s->store.value = value ? ir_cast(a, b->dt, value) : NULL;
    return s;
}

IrStmt *ir_store_bits(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx, IrExpr *bits) {
    IrStmt *s = ir_store(a, b, idx, nidx, NULL);
    s->loc = bits->loc;
    s->store.value = ir_cast(a, ir_bits_dtype(b->dt), bits);
    s->store.bits = 1;
    return s;
}

/* The indices of base dims [j0, j1] for the row-major flat index `flat`
 * of that group (extents ext[j0..j1]). */
static void view_split(TsArena *a, IrExpr *flat, IrExpr *const *ext, int j0, int j1, IrExpr **out) {
    IrExpr *inner = NULL; /* product of the extents right of j */
    for (int j = j1; j >= j0; j--) {
        IrExpr *x = inner ? ir_bin(a, IR_FLOORDIV, flat, inner) : flat;
        out[j] = j > j0 ? ir_bin(a, IR_FLOORMOD, x, ext[j]) : x;
        inner = inner ? ir_bin(a, IR_MUL, inner, ext[j]) : ext[j];
    }
}

/* Row-major flat index of view dims [i0, i1]. */
static IrExpr *view_flat(TsArena *a, IrExpr *const *idx, IrExpr *const *ext, int i0, int i1) {
    IrExpr *f = NULL;
    for (int i = i0; i <= i1; i++) f = f ? ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, f, ext[i]), idx[i]) : idx[i];
    return f ? f : ir_i32(a, 0);
}

IrExpr *ir_flat_index(TsArena *a, const IrBuffer *b, IrExpr *const *idx) {
    return view_flat(a, idx, b->shape, 0, b->ndim - 1);
}

IrExpr **ir_unflat_index(TsArena *a, const IrBuffer *b, IrExpr *flat) {
    IrExpr **out = TS_NEWN(a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
    if (b->ndim > 0) view_split(a, flat, b->shape, 0, b->ndim - 1, out);
    return out;
}

IrExpr **ir_view_index(TsArena *a, const IrBuffer *view, IrExpr *const *idx) {
    const IrBuffer *b = view->base;
    int nv = view->ndim, nb = b->ndim;
    IrExpr **out = TS_NEWN(a, IrExpr *, nb > 0 ? nb : 1);
    int64_t ev[16], eb[16];
    bool consts = nv <= 16 && nb <= 16;
    for (int i = 0; consts && i < nv; i++) consts = ir_is_const_int(view->shape[i], &ev[i]) && ev[i] > 0;
    for (int j = 0; consts && j < nb; j++) consts = ir_is_const_int(b->shape[j], &eb[j]) && eb[j] > 0;
    if (!consts || nv == 0 || nb == 0) { /* one group: the flat index */
        view_split(a, view_flat(a, idx, view->shape, 0, nv - 1), b->shape, 0, nb - 1, out);
        for (int j = 0; j < nb && nv == 0; j++) out[j] = ir_i32(a, 0);
        return out;
    }
    int i = 0, j = 0;
    while (i < nv && j < nb) {
        int i0 = i, j0 = j;
        int64_t pv = ev[i], pb = eb[j];
        while (pv != pb) {
            if (pv < pb) {
                if (++i >= nv) break;
                pv *= ev[i];
            } else {
                if (++j >= nb) break;
                pb *= eb[j];
            }
        }
        if (i >= nv || j >= nb) { /* element counts differ: the elaborator refuses that */
            i = nv - 1, j = nb - 1;
        }
        view_split(a, view_flat(a, idx, view->shape, i0, i), b->shape, j0, j, out);
        i++, j++;
    }
    for (; j < nb; j++) out[j] = ir_i32(a, 0); /* trailing extent-1 dims */
    return out;
}

bool ir_buffer_has_view(const IrKernel *k, const IrBuffer *b) {
    if (b->base) return true;
    for (int i = 0; i < k->buffers.n; i++)
        if (k->buffers.v[i]->base == b) return true;
    return false;
}

IrRegion ir_region_full(TsArena *a, IrBuffer *b) {
    IrRegion r = {0};
    r.buf = b;
    r.ndim = b->ndim;
    r.start = TS_NEWN(a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
    r.extent = TS_NEWN(a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
    for (int i = 0; i < b->ndim; i++) {
        r.start[i] = ir_i32(a, 0);
        r.extent[i] = b->shape[i];
    }
    return r;
}

/* ---- substitution ------------------------------------------------------------ */

static IrExpr **subst_list(TsArena *a, IrExpr **v, int n, IrVar **from, IrExpr **to,
                           int nmap) {
    IrExpr **r = TS_NEWN(a, IrExpr *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) r[i] = ir_subst(a, v[i], from, to, nmap);
    return r;
}

IrExpr *ir_subst(TsArena *a, IrExpr *e, IrVar **from, IrExpr **to, int n) {
    if (!e) return NULL;
    IrExpr *r;
    switch (e->kind) {
    case IR_E_VAR:
        for (int i = 0; i < n; i++)
            if (from[i] == e->var) return to[i];
        r = ir_var_ref(a, e->var);
        break;
    case IR_E_INT:
    case IR_E_FLOAT:
    case IR_E_STRING:
        r = new_expr(a, e->kind, e->dt);
        *r = *e;
        break;
    case IR_E_LOAD:
        r = ir_load(a, e->load.buf, subst_list(a, e->load.idx, e->load.nidx, from, to, n),
                    e->load.nidx);
        r->dt = e->dt;
        r->load.bits = e->load.bits;
        r->load.acquire = e->load.acquire;
        break;
    case IR_E_BIN: {
        IrExpr *x = ir_subst(a, e->bin.a, from, to, n);
        IrExpr *y = ir_subst(a, e->bin.b, from, to, n);
        r = ir_bin(a, e->bin.op, x, y);
        if (r->kind == IR_E_BIN && r->dt != e->dt && e->dt != TS_DTYPE_NONE) r = ir_cast(a, e->dt, r);
        break;
    }
    case IR_E_NEG: r = ir_neg(a, ir_subst(a, e->un.a, from, to, n)); break;
    case IR_E_NOT: r = ir_not(a, ir_subst(a, e->un.a, from, to, n)); break;
    case IR_E_CAST: r = ir_cast(a, e->dt, ir_subst(a, e->un.a, from, to, n)); break;
    case IR_E_SELECT:
        r = ir_select(a, ir_subst(a, e->sel.cond, from, to, n),
                      ir_subst(a, e->sel.a, from, to, n), ir_subst(a, e->sel.b, from, to, n));
        break;
    case IR_E_CALL:
        r = ir_call(a, e->call.fn, subst_list(a, e->call.args, e->call.nargs, from, to, n),
                    e->call.nargs, e->dt);
        break;
    default:
        r = new_expr(a, e->kind, e->dt);
        *r = *e;
        break;
    }
    if (r->kind == e->kind && r->dt == e->dt && !r->loc.src) r->loc = e->loc;
    return r;
}

/* The statement part is the shared mutator in deep-copy mode; every
 * expression root goes through ir_subst (which copies it whole). */
typedef struct SubstMap {
    IrVar **from; /* vars replaced */
    IrExpr **to;  /* by these */
    int n;        /* map size */
} SubstMap;

static IrExpr *subst_pre(IrMutator *m, IrExpr *e) {
    const SubstMap *s = m->ctx;
    return ir_subst(m->arena, e, s->from, s->to, s->n);
}

IrStmt *ir_stmt_subst(TsArena *a, const IrStmt *s, IrVar **from, IrExpr **to, int n) {
    SubstMap map = {from, to, n};
    IrMutator m = {.arena = a, .ctx = &map, .pre_expr = subst_pre, .copy = true};
    return ir_mutate_stmt(&m, (IrStmt *)s);
}
