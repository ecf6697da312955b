/*
 * expr.c — evaluating expressions.  Operators between two compile-time
 * constants follow Python (`/` gives a float, `//` and `%` floor); as soon
 * as one side is a run-time value they build IR (TIR's meaning).  Buffer
 * subscripts give an element (a load, or the start of a tile) or a region;
 * calls run user functions (inlining macros) or builtins.
 */
#include "elab/elab_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- IR emission ------------------------------------------------------------------ */

void emit(Elab *E, IrStmt *s) {
    if (!E->cur)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc,
                  "this statement must be inside `with T.Kernel(...)` of a @T.prim_func");
    ir_seq_push(E->a, E->cur, s);
}

static bool is_load(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD;
}

static bool is_global_load(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD && e->load.buf->scope == IR_SCOPE_GLOBAL;
}

bool expr_has_load(const IrExpr *e) { return ir_expr_any(e, is_load, NULL); }
bool expr_reads_global(const IrExpr *e) { return ir_expr_any(e, is_global_load, NULL); }

/* Linear forms: sum of coef * atom + constant, to see that
 * (bx + 1) * 64 - bx * 64 is the constant 64. */
typedef struct LinTerm { const IrExpr *atom; int64_t coef; } LinTerm;
typedef struct Lin { LinTerm t[32]; int n; int64_t c; bool overflow; } Lin;

static void lin_add(Lin *L, const IrExpr *e, int64_t coef) {
    int64_t c;
    if (ir_is_const_int(e, &c) && e->dt != TS_BOOL) {
        if (__builtin_mul_overflow(coef, c, &c) || __builtin_add_overflow(L->c, c, &L->c))
            L->overflow = true;
        return;
    }
    if (e->kind == IR_E_BIN && ts_dtype_is_int(e->dt)) {
        switch (e->bin.op) {
        case IR_ADD: lin_add(L, e->bin.a, coef); lin_add(L, e->bin.b, coef); return;
        case IR_SUB:
            if (coef == INT64_MIN) break;
            lin_add(L, e->bin.a, coef);
            lin_add(L, e->bin.b, -coef);
            return;
        case IR_MUL:
            if (ir_is_const_int(e->bin.b, &c) || ir_is_const_int(e->bin.a, &c)) {
                const IrExpr *other = ir_is_const_int(e->bin.b, &c) ? e->bin.a : e->bin.b;
                if (__builtin_mul_overflow(coef, c, &c)) { L->overflow = true; return; }
                lin_add(L, other, c);
                return;
            }
            /* (x + y) * z with z symbolic: expand one level */
            if (e->bin.a->kind == IR_E_BIN &&
                (e->bin.a->bin.op == IR_ADD || e->bin.a->bin.op == IR_SUB)) {
                /* treat a*b as atoms after distributing: keep simple, atom */
            }
            break;
        default: break;
        }
    }
    if (e->kind == IR_E_NEG && coef != INT64_MIN) {
        lin_add(L, e->un.a, -coef);
        return;
    }
    for (int i = 0; i < L->n; i++)
        if (ir_expr_equal(L->t[i].atom, e)) {
            if (__builtin_add_overflow(L->t[i].coef, coef, &L->t[i].coef)) L->overflow = true;
            return;
        }
    if (L->n == TS_COUNTOF(L->t)) {
        L->overflow = true;
        return;
    }
    L->t[L->n++] = (LinTerm){e, coef};
}

/* hi - lo, folded to a constant when the linear forms cancel. */
static IrExpr *sub_simplify(Elab *E, IrExpr *hi, IrExpr *lo) {
    Lin L = {0};
    lin_add(&L, hi, 1);
    lin_add(&L, lo, -1);
    bool cst = !L.overflow;
    for (int i = 0; i < L.n && cst; i++)
        if (L.t[i].coef) cst = false;
    if (cst) return ir_i32(E->a, L.c);
    return ir_bin(E->a, IR_SUB, hi, lo);
}

/* ---- operators ------------------------------------------------------------------------ */

static double const_f(const Value *v) {
    return v->kind == V_FLOAT ? v->f : v->kind == V_INT ? (double)v->i : (double)v->b;
}
static int64_t const_i(const Value *v) { return v->kind == V_INT ? v->i : (int64_t)v->b; }

static int64_t py_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
static int64_t py_mod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

/* Python's integers are unbounded; ours are 64-bit.  Where Python's
 * result fits in an int64 we give exactly that, otherwise a clear error
 * (never a silently wrapped value, never a trap as INT64_MIN // -1 would
 * be in C). */
static TS_NORETURN void int_overflow(Elab *E, AstOp op, int64_t i, int64_t j, TsLoc loc) {
    elab_fail(E, TS_ERR_TYPE, loc,
              "integer overflow: %lld %s %lld does not fit in 64 bits", (long long)i,
              ast_op_name(op), (long long)j);
}

static int64_t checked_pow(Elab *E, int64_t base, int64_t exp, TsLoc loc) {
    int64_t r = 1, b = base, e = exp;
    /* square-and-multiply: at most 63 squarings, so 10 ** 10**18 does not spin */
    while (e > 0) {
        if ((e & 1) && __builtin_mul_overflow(r, b, &r)) int_overflow(E, AST_POW, base, exp, loc);
        e >>= 1;
        if (e > 0 && __builtin_mul_overflow(b, b, &b)) int_overflow(E, AST_POW, base, exp, loc);
    }
    return r;
}

/* Python semantics on two constants. */
static Value *const_binop(Elab *E, AstOp op, Value *a, Value *b, TsLoc loc) {
    bool fl = a->kind == V_FLOAT || b->kind == V_FLOAT;
    double x = const_f(a), y = const_f(b);
    int64_t i = const_i(a), j = const_i(b), r;
    switch (op) {
    case AST_ADD:
        if (fl) return val_float(E, x + y, loc);
        if (__builtin_add_overflow(i, j, &r)) int_overflow(E, op, i, j, loc);
        return val_int(E, r, loc);
    case AST_SUB:
        if (fl) return val_float(E, x - y, loc);
        if (__builtin_sub_overflow(i, j, &r)) int_overflow(E, op, i, j, loc);
        return val_int(E, r, loc);
    case AST_MUL:
        if (fl) return val_float(E, x * y, loc);
        if (__builtin_mul_overflow(i, j, &r)) int_overflow(E, op, i, j, loc);
        return val_int(E, r, loc);
    case AST_DIV:
        if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "division by zero");
        return val_float(E, x / y, loc);
    case AST_FLOORDIV:
        if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "division by zero");
        if (fl) return val_float(E, floor(x / y), loc);
        if (i == INT64_MIN && j == -1) int_overflow(E, op, i, j, loc);
        return val_int(E, py_floordiv(i, j), loc);
    case AST_MOD:
        if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "modulo by zero");
        if (fl) return val_float(E, x - floor(x / y) * y, loc);
        if (j == -1) return val_int(E, 0, loc); /* INT64_MIN % -1 traps in C; Python gives 0 */
        return val_int(E, py_mod(i, j), loc);
    case AST_POW:
        if (!fl && j >= 0) return val_int(E, checked_pow(E, i, j, loc), loc);
        return val_float(E, pow(x, y), loc);
    case AST_LSHIFT:
        if (fl) break;
        if (j < 0) elab_fail(E, TS_ERR_TYPE, loc, "negative shift count %lld", (long long)j);
        if (i == 0) return val_int(E, 0, loc);
        /* fits iff shifting back gives i again */
        if (j >= 63 || ((i << j) >> j) != i) int_overflow(E, op, i, j, loc);
        return val_int(E, (int64_t)((uint64_t)i << j), loc);
    case AST_RSHIFT:
        if (fl) break;
        if (j < 0) elab_fail(E, TS_ERR_TYPE, loc, "negative shift count %lld", (long long)j);
        return val_int(E, j >= 63 ? (i < 0 ? -1 : 0) : i >> j, loc);
    case AST_BITAND: if (fl) break; return a->kind == V_BOOL && b->kind == V_BOOL ? val_bool(E, i & j, loc) : val_int(E, i & j, loc);
    case AST_BITOR: if (fl) break; return a->kind == V_BOOL && b->kind == V_BOOL ? val_bool(E, i | j, loc) : val_int(E, i | j, loc);
    case AST_BITXOR: if (fl) break; return val_int(E, i ^ j, loc);
    case AST_EQ: return val_bool(E, fl ? x == y : i == j, loc);
    case AST_NE: return val_bool(E, fl ? x != y : i != j, loc);
    case AST_LT: return val_bool(E, fl ? x < y : i < j, loc);
    case AST_LE: return val_bool(E, fl ? x <= y : i <= j, loc);
    case AST_GT: return val_bool(E, fl ? x > y : i > j, loc);
    case AST_GE: return val_bool(E, fl ? x >= y : i >= j, loc);
    default: break;
    }
    elab_fail(E, TS_ERR_TYPE, loc, "operator '%s' is not defined for %s and %s", ast_op_name(op),
              val_kind_name(a), val_kind_name(b));
}

static bool val_equal(const Value *a, const Value *b) {
    if (val_is_const(a) && val_is_const(b)) return const_f(a) == const_f(b);
    /* TileLang's dtypes equal their names ("float16" == T.float16) */
    if (a->kind == V_STR && b->kind == V_DTYPE) return ts_dtype_from_name(a->s) == b->dt;
    if (a->kind == V_DTYPE && b->kind == V_STR) return ts_dtype_from_name(b->s) == a->dt;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case V_NONE: return true;
    case V_STR: return !strcmp(a->s, b->s);
    case V_DTYPE: return a->dt == b->dt;
    case V_ENUM: return !strcmp(a->s, b->s);
    case V_TUPLE: case V_LIST:
        if (a->n != b->n) return false;
        for (int i = 0; i < a->n; i++)
            if (!val_equal(a->items[i], b->items[i])) return false;
        return true;
    default: return a == b;
    }
}

static IrBinOp ast_to_irop(Elab *E, AstOp op, TsLoc loc) {
    switch (op) {
    case AST_ADD: return IR_ADD;
    case AST_SUB: return IR_SUB;
    case AST_MUL: return IR_MUL;
    case AST_DIV: return IR_DIV;
    case AST_FLOORDIV: return IR_FLOORDIV;
    case AST_MOD: return IR_FLOORMOD;
    case AST_POW: return IR_POW;
    case AST_LSHIFT: return IR_SHL;
    case AST_RSHIFT: return IR_SHR;
    case AST_BITAND: return IR_BITAND;
    case AST_BITOR: return IR_BITOR;
    case AST_BITXOR: return IR_BITXOR;
    case AST_EQ: return IR_EQ;
    case AST_NE: return IR_NE;
    case AST_LT: return IR_LT;
    case AST_LE: return IR_LE;
    case AST_GT: return IR_GT;
    case AST_GE: return IR_GE;
    case AST_AND: return IR_AND;
    case AST_OR: return IR_OR;
    default:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "operator '%s' is not supported in kernel code",
                  ast_op_name(op));
    }
}

/* A Python constant meeting an IR expression takes the expression's dtype
 * where that keeps its meaning (TVM converts literals the same way). */
IrExpr *adapt_literal(Elab *E, Value *lit, TsDType other, TsLoc loc) {
    if (lit->kind == V_INT && (ts_dtype_is_int(other) || ts_dtype_is_float(other)))
        return ts_dtype_is_float(other) ? ir_float(E->a, (double)lit->i, other)
                                        : ir_int(E->a, lit->i, other);
    if (lit->kind == V_FLOAT && ts_dtype_is_float(other)) return ir_float(E->a, lit->f, other);
    return val_to_expr(E, lit, loc);
}

Value *binop(Elab *E, AstOp op, Value *a, Value *b, TsLoc loc) {
    if (a->kind == V_OPAQUE) fail_opaque(E, a, loc);
    if (b->kind == V_OPAQUE) fail_opaque(E, b, loc);
    if (val_is_const(a) && val_is_const(b) && op != AST_IS && op != AST_ISNOT)
        return const_binop(E, op, a, b, loc);
    if (val_is_symbolic(a) || val_is_symbolic(b)) {
        IrExpr *x, *y;
        if (val_is_const(a) && val_is_symbolic(b)) {
            y = val_to_expr(E, b, loc);
            x = adapt_literal(E, a, y->dt, loc);
        } else if (val_is_symbolic(a) && val_is_const(b)) {
            x = val_to_expr(E, a, loc);
            y = adapt_literal(E, b, x->dt, loc);
        } else {
            x = val_to_expr(E, a, loc);
            y = val_to_expr(E, b, loc);
        }
        /* TVM refuses these on floats too; the printers' shared emitter used to (target/cexpr.c) */
        if ((op == AST_BITAND || op == AST_BITOR || op == AST_BITXOR || op == AST_LSHIFT || op == AST_RSHIFT) &&
            (ts_dtype_is_float(x->dt) || ts_dtype_is_float(y->dt)))
            elab_fail(E, TS_ERR_TYPE, loc, "bitwise operator on floating-point values");
        IrExpr *r = ir_bin(E->a, ast_to_irop(E, op, loc), x, y);
        r->loc = loc;
        return val_expr(E, r, loc);
    }
    /* sequences and strings */
    if (op == AST_ADD && a->kind == b->kind && (a->kind == V_TUPLE || a->kind == V_LIST)) {
        Value **items = TS_NEWN(E->a, Value *, a->n + b->n);
        memcpy(items, a->items, sizeof(Value *) * (size_t)a->n);
        memcpy(items + a->n, b->items, sizeof(Value *) * (size_t)b->n);
        return val_seq(E, a->kind, items, a->n + b->n, loc);
    }
    if (op == AST_MUL && (a->kind == V_TUPLE || a->kind == V_LIST) && b->kind == V_INT) {
        int n = a->n * (int)(b->i > 0 ? b->i : 0);
        Value **items = TS_NEWN(E->a, Value *, n ? n : 1);
        for (int i = 0; i < n; i++) items[i] = a->items[i % a->n];
        return val_seq(E, a->kind, items, n, loc);
    }
    if (op == AST_ADD && a->kind == V_STR && b->kind == V_STR)
        return val_str(E, ts_sprintf(E->a, "%s%s", a->s, b->s), loc);
    if (op == AST_EQ) return val_bool(E, val_equal(a, b), loc);
    if (op == AST_NE) return val_bool(E, !val_equal(a, b), loc);
    if (op == AST_IS || op == AST_ISNOT) {
        /* identity of constants: same kind and value (True is True, None is None) */
        bool same = a->kind == b->kind && val_equal(a, b);
        return val_bool(E, op == AST_IS ? same : !same, loc);
    }
    if (op == AST_IN || op == AST_NOTIN) {
        bool found = false;
        if (b->kind == V_TUPLE || b->kind == V_LIST) {
            for (int i = 0; i < b->n && !found; i++) found = val_equal(a, b->items[i]);
        } else if (b->kind == V_DICT) {
            for (int i = 0; i < b->n && !found; i += 2) found = val_equal(a, b->items[i]);
        } else if (b->kind == V_STR && a->kind == V_STR) {
            found = strstr(b->s, a->s) != NULL;
        } else {
            elab_fail(E, TS_ERR_TYPE, loc, "'in' needs a tuple, list, dict or str, got %s",
                      val_kind_name(b));
        }
        return val_bool(E, op == AST_IN ? found : !found, loc);
    }
    elab_fail(E, TS_ERR_TYPE, loc, "operator '%s' is not defined for %s and %s", ast_op_name(op),
              val_kind_name(a), val_kind_name(b));
}

static Value *unop(Elab *E, AstOp op, Value *a, TsLoc loc) {
    if (a->kind == V_OPAQUE) fail_opaque(E, a, loc);
    if (op == AST_NOT) {
        if (val_is_symbolic(a)) return val_expr(E, ir_not(E->a, val_to_expr(E, a, loc)), loc);
        return val_bool(E, !val_truthy(E, a, loc), loc);
    }
    if (val_is_const(a)) {
        switch (op) {
        case AST_NEG:
            if (a->kind == V_FLOAT) return val_float(E, -a->f, loc);
            if (const_i(a) == INT64_MIN)
                elab_fail(E, TS_ERR_TYPE, loc, "integer overflow: -(%lld) does not fit in 64 bits",
                          (long long)INT64_MIN);
            return val_int(E, -const_i(a), loc);
        case AST_POS: return a->kind == V_BOOL ? val_int(E, a->b, loc) : a;
        case AST_INVERT:
            if (a->kind == V_FLOAT) break; /* Python: bad operand type for unary ~: 'float' */
            return val_int(E, ~const_i(a), loc);
        default: break;
        }
    }
    if (val_is_symbolic(a)) {
        IrExpr *x = val_to_expr(E, a, loc);
        if (op == AST_NEG) return val_expr(E, ir_neg(E->a, x), loc);
        if (op == AST_POS) return a;
        if (op == AST_INVERT) {
            if (!ts_dtype_is_int(x->dt) && x->dt != TS_BOOL)
                elab_fail(E, TS_ERR_TYPE, loc, "operator '~' needs an integer or bool operand, not %s",
                          ts_dtype_name(x->dt));
            IrExpr *r = ir_not(E->a, x);
            r->un.bitnot = 1;
            r->dt = x->dt;
            return val_expr(E, r, loc);
        }
    }
    elab_fail(E, TS_ERR_TYPE, loc, "operator '%s' is not defined for %s", ast_op_name(op),
              val_kind_name(a));
}

/* ---- subscripts ------------------------------------------------------------------------- */

static int64_t seq_index(Elab *E, Value *seq, Value *ix, TsLoc loc) {
    int64_t i = val_to_int(E, ix, loc, "an index");
    if (i < 0) i += seq->n;
    if (i < 0 || i >= seq->n)
        elab_fail(E, TS_ERR_TYPE, loc, "index %lld out of range for a %s of length %d",
                  (long long)val_to_int(E, ix, loc, "an index"), val_kind_name(seq), seq->n);
    return i;
}

/* An index of a buffer: an integer expression. */
static IrExpr *index_expr(Elab *E, Value *v, TsLoc loc) {
    IrExpr *e = val_to_expr(E, v, loc);
    if (!ts_dtype_is_int(e->dt))
        elab_fail(E, TS_ERR_TYPE, loc, "a buffer index must be an integer, not %s", ts_dtype_name(e->dt));
    return e;
}

static Value *subscript_buffer(Elab *E, Env *env, Value *base, const AstExpr *ix, TsLoc loc) {
    IrBuffer *buf = base->buf;
    const AstExpr *const *items;
    const AstExpr *one[1] = {ix};
    int n;
    if (ix->kind == AST_TUPLE && !ix->parens) {
        items = (const AstExpr *const *)ix->items;
        n = ix->n;
    } else {
        items = one;
        n = 1;
    }
    /* A tuple value used as the index (A[idx] with idx = (i, j)) spreads. */
    Value *spread = NULL;
    if (n == 1 && items[0]->kind != AST_SLICE) {
        Value *v = eval(E, env, items[0]);
        if (v->kind == V_TUPLE || v->kind == V_LIST) spread = v;
        else if (buf->ndim == 1 || buf->scope == IR_SCOPE_VAR) {
            IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
            idx[0] = index_expr(E, v, items[0]->loc);
            if (buf->ndim != 1)
                elab_fail(E, TS_ERR_TYPE, loc, "buffer '%s' has %d dimensions, indexed with 1",
                          buf->name, buf->ndim);
            Value *r = val_new(E, V_ACCESS, loc);
            r->buf = buf;
            r->idx = idx;
            return r;
        } else {
            spread = val_seq(E, V_TUPLE, TS_NEWN(E->a, Value *, 1), 1, loc);
            spread->items[0] = v;
        }
    }
    int cnt = spread ? spread->n : n;
    if (cnt > buf->ndim)
        elab_fail(E, TS_ERR_TYPE, loc, "buffer '%s' has %d dimension%s, indexed with %d", buf->name,
                  buf->ndim, buf->ndim == 1 ? "" : "s", cnt);
    bool any_slice = cnt < buf->ndim;
    IrExpr **start = TS_NEWN(E->a, IrExpr *, buf->ndim);
    IrExpr **extent = TS_NEWN(E->a, IrExpr *, buf->ndim);
    for (int d = 0; d < buf->ndim; d++) {
        if (d >= cnt) {
            start[d] = ir_i32(E->a, 0);
            extent[d] = buf->shape[d];
            continue;
        }
        if (spread) {
            start[d] = index_expr(E, spread->items[d], loc);
            extent[d] = NULL;
            continue;
        }
        const AstExpr *it = items[d];
        if (it->kind == AST_SLICE) {
            any_slice = true;
            if (it->c) elab_fail(E, TS_ERR_UNSUPPORTED, it->loc, "slices with a step are not supported");
            IrExpr *lo = it->a ? index_expr(E, eval(E, env, it->a), it->a->loc) : ir_i32(E->a, 0);
            IrExpr *hi = it->b ? index_expr(E, eval(E, env, it->b), it->b->loc) : buf->shape[d];
            start[d] = lo;
            extent[d] = sub_simplify(E, hi, lo);
        } else {
            start[d] = index_expr(E, eval(E, env, it), it->loc);
            extent[d] = NULL;
        }
    }
    if (!any_slice) {
        Value *r = val_new(E, V_ACCESS, loc);
        r->buf = buf;
        r->idx = start;
        return r;
    }
    for (int d = 0; d < buf->ndim; d++)
        if (!extent[d]) extent[d] = ir_i32(E->a, 1);
    Value *r = val_new(E, V_REGION, loc);
    r->reg = (IrRegion){buf, buf->ndim, start, extent};
    return r;
}

Value *subscript(Elab *E, Env *env, const AstExpr *x) {
    Value *base = eval(E, env, x->a);
    TsLoc loc = x->loc;
    if (base->kind == V_BUFFER) return subscript_buffer(E, env, base, x->b, loc);
    if (base->kind == V_OPAQUE) fail_opaque(E, base, loc);
    if (base->kind == V_BUILTIN) return builtin_subscript(E, base, eval(E, env, x->b), loc);
    if (x->b->kind == AST_SLICE && (base->kind == V_TUPLE || base->kind == V_LIST)) {
        int64_t n = base->n;
        int64_t lo = x->b->a ? val_to_int(E, eval(E, env, x->b->a), loc, "a slice bound") : 0;
        int64_t hi = x->b->b ? val_to_int(E, eval(E, env, x->b->b), loc, "a slice bound") : n;
        int64_t st = x->b->c ? val_to_int(E, eval(E, env, x->b->c), loc, "a slice step") : 1;
        if (st == 0) elab_fail(E, TS_ERR_TYPE, loc, "slice step cannot be zero");
        if (lo < 0) lo += n;
        if (hi < 0) hi += n;
        lo = lo < 0 ? 0 : lo > n ? n : lo;
        hi = hi < 0 ? 0 : hi > n ? n : hi;
        Value **items = TS_NEWN(E->a, Value *, n ? n : 1);
        int m = 0;
        if (st > 0)
            for (int64_t i = lo; i < hi; i += st) items[m++] = base->items[i];
        else
            for (int64_t i = (x->b->a ? lo : n - 1); i > (x->b->b ? hi : -1); i += st)
                items[m++] = base->items[i];
        return val_seq(E, base->kind, items, m, loc);
    }
    Value *ix = eval(E, env, x->b);
    if (base->kind == V_TUPLE || base->kind == V_LIST) return base->items[seq_index(E, base, ix, loc)];
    if (base->kind == V_DICT) {
        for (int i = 0; i < base->n; i += 2)
            if (val_equal(base->items[i], ix)) return base->items[i + 1];
        elab_fail(E, TS_ERR_NAME, loc, "key not found in dict");
    }
    if (base->kind == V_STR) {
        int64_t i = val_to_int(E, ix, loc, "an index"), n = (int64_t)strlen(base->s);
        if (i < 0) i += n;
        if (i < 0 || i >= n) elab_fail(E, TS_ERR_TYPE, loc, "string index out of range");
        return val_str(E, ts_strndup(E->a, base->s + i, 1), loc);
    }
    if (base->kind == V_MODULE) {
        Value *v = comm_host_map(E, base, ix, loc);
        if (v) return v;
    }
    elab_fail(E, TS_ERR_TYPE, loc, "a %s cannot be indexed", val_kind_name(base));
}

/* ---- calls -------------------------------------------------------------------------------- */


Value *call_user(Elab *E, Func *fn, Value **args, int nargs, const char **kw, Value **kwv,
                        int nkw, TsLoc loc) {
    const AstStmt *def = fn->def;
    if (E->depth > 200)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "calls nested more than 200 deep (recursion?)");
    Env *env = env_new(E, fn->closure);
    int pos = 0;
    bool *used = TS_NEWN(E->a, bool, nkw ? nkw : 1);
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        if (pa->star == 1) {
            int rest = nargs - pos > 0 ? nargs - pos : 0;
            Value **items = TS_NEWN(E->a, Value *, rest ? rest : 1);
            for (int i = 0; i < rest; i++) items[i] = args[pos + i];
            pos += rest;
            env_set(E, env, pa->name, val_seq(E, V_TUPLE, items, rest, loc));
            continue;
        }
        if (pa->star == 2) {
            int m = 0;
            Value **items = TS_NEWN(E->a, Value *, 2 * (nkw ? nkw : 1));
            for (int i = 0; i < nkw; i++)
                if (!used[i]) {
                    items[m++] = val_str(E, kw[i], loc);
                    items[m++] = kwv[i];
                    used[i] = true;
                }
            env_set(E, env, pa->name, val_seq(E, V_DICT, items, m, loc));
            continue;
        }
        Value *v = NULL;
        if (pos < nargs) v = args[pos++];
        for (int i = 0; i < nkw; i++)
            if (!strcmp(kw[i], pa->name)) {
                if (v) elab_fail(E, TS_ERR_TYPE, loc, "%s() got multiple values for '%s'", def->name, pa->name);
                v = kwv[i];
                used[i] = true;
            }
        if (!v && pa->dflt) v = eval(E, fn->closure, pa->dflt);
        if (!v)
            elab_fail(E, TS_ERR_TYPE, loc, "%s() is missing a value for parameter '%s'", def->name,
                      pa->name);
        env_set(E, env, pa->name, v);
    }
    if (pos < nargs)
        elab_fail(E, TS_ERR_TYPE, loc, "%s() takes %d positional arguments but %d were given",
                  def->name, pos, nargs);
    for (int i = 0; i < nkw; i++)
        if (!used[i]) elab_fail(E, TS_ERR_TYPE, loc, "%s() got an unexpected keyword argument '%s'", def->name, kw[i]);
    bool saved_ret = E->returning;
    Value *saved_val = E->retval;
    int saved_loops = E->ir_loops;
    E->returning = false;
    E->retval = NULL;
    if (fn->kind == FN_PLAIN) E->ir_loops = 0;
    E->depth++;
    exec_block(E, env, &def->body);
    E->depth--;
    Value *r = E->retval ? E->retval : val_none(E, loc);
    E->returning = saved_ret;
    E->retval = saved_val;
    E->ir_loops = saved_loops;
    E->breaking = E->continuing = false;
    return r;
}

Value *call_value(Elab *E, Value *f, Value **args, int nargs, const char **kw, Value **kwv,
                  int nkw, TsLoc loc) {
    switch (f->kind) {
    case V_FUNC:
        if (f->fn->kind == FN_PRIM)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "calling a @T.prim_func from Python code is not supported; return it from the factory");
        return call_user(E, f->fn, args, nargs, kw, kwv, nkw, loc);
    case V_BUILTIN:
    case V_DTYPE:
    case V_MODULE:
    case V_ENUM:
        return builtin_call(E, f, args, nargs, kw, kwv, nkw, loc);
    case V_OPAQUE: fail_opaque(E, f, loc);
    default: elab_fail(E, TS_ERR_TYPE, loc, "a %s is not callable", val_kind_name(f));
    }
}

static Value *eval_call(Elab *E, Env *env, const AstExpr *x) {
    Value *f = eval(E, env, x->a);
    TS_VEC(Value *) args = {0};
    TS_VEC(const char *) kw = {0};
    TS_VEC(Value *) kwv = {0};
    for (int i = 0; i < x->n; i++) {
        const AstExpr *it = x->items[i];
        if (x->kwnames && x->kwnames[i]) {
            ts_vec_push(E->a, kw, x->kwnames[i]);
            ts_vec_push(E->a, kwv, eval(E, env, it));
        } else if (it->kind == AST_STARRED) {
            Value *s = eval(E, env, it->a);
            int n;
            Value **items = val_items(E, s, &n);
            if (s->kind != V_TUPLE && s->kind != V_LIST)
                elab_fail(E, TS_ERR_TYPE, it->loc, "*%s: expected a tuple or list", val_kind_name(s));
            for (int j = 0; j < n; j++) ts_vec_push(E->a, args, items[j]);
        } else if (it->kind == AST_DSTARRED) {
            Value *s = eval(E, env, it->a);
            if (s->kind != V_DICT) elab_fail(E, TS_ERR_TYPE, it->loc, "**: expected a dict");
            for (int j = 0; j < s->n; j += 2) {
                if (s->items[j]->kind != V_STR) elab_fail(E, TS_ERR_TYPE, it->loc, "**: keys must be strings");
                ts_vec_push(E->a, kw, s->items[j]->s);
                ts_vec_push(E->a, kwv, s->items[j + 1]);
            }
        } else {
            ts_vec_push(E->a, args, eval(E, env, it));
        }
    }
    return call_value(E, f, args.v, args.n, kw.v, kwv.v, kw.n, x->loc);
}

/* ---- f-strings, formatted at compile time -------------------------------------------------------
 *
 * The lexer keeps an f-string's raw text; here its replacement fields are
 * evaluated and formatted.  A field is any expression (parsed in place by
 * fstring_field, so its errors point into the file), with an optional
 * !r/!s conversion and a format spec of the forms
 * [[fill]<|>|^][0][width][.precision][type] (types d x X o b f e g s, and
 * none).  A
 * spec outside those, or a nested field in a spec, is an error naming it:
 * a field's text is never copied through. */

/* Where the field's expression text f[0..n) is in the file: the first
 * "{f" after the string's start (the string's own start if not found, as
 * for a string assembled from several parts). */
static TsLoc field_loc(const char *f, size_t n, TsLoc sloc) {
    const TsSource *src = sloc.src;
    if (!src || !src->text || sloc.line < 1) return sloc;
    const char *p = src->text, *end = src->text + src->len;
    for (int l = 1; l < sloc.line && p < end; p++)
        if (*p == '\n') l++;
    p += sloc.col - 1;
    for (const char *q = p; q + n < end && q < p + 4096; q++)
        if (*q == '{' && !memcmp(q + 1, f, n)) {
            TsLoc r = sloc;
            for (const char *c = p; c <= q; c++) {
                if (*c == '\n') {
                    r.line++;
                    r.col = 1;
                } else {
                    r.col++;
                }
            }
            return r;
        }
    return sloc;
}

/* A field's expression, parsed where it stands in the file: the text is
 * laid out at its own line and column inside parentheses (so indentation
 * does not matter), parsed, and the synthesized source then given the
 * file's text, so that diagnostics show the file's line with the caret
 * under the expression. */
static Value *fstring_field(Elab *E, Env *env, const char *f, size_t n, TsLoc sloc) {
    while (n && (*f == ' ')) f++, n--;
    while (n && f[n - 1] == ' ') n--;
    if (!n) elab_fail(E, TS_ERR_SYNTAX, sloc, "f-string: empty expression not allowed");
    TsLoc at = field_loc(f, n, sloc);
    TsBuf b = {0};
    for (int l = 1; l < at.line; l++) ts_buf_puts(&b, "\n");
    ts_buf_puts(&b, "(");
    for (int c = 2; c < at.col; c++) ts_buf_puts(&b, " ");
    ts_buf_printf(&b, "%.*s)\n", (int)n, f);
    TsSource *src = TS_NEW(E->a, TsSource);
    src->name = sloc.src && sloc.src->name ? sloc.src->name : "<f-string>";
    src->text = ts_strndup(E->a, ts_buf_str(&b), b.n);
    src->len = b.n;
    ts_buf_free(&b);
    AstModule *m = ts_parse_module(E->a, src);
    if (sloc.src && sloc.src->text && at.col >= 2) { /* diagnostics show the file's own line */
        src->text = sloc.src->text;
        src->len = sloc.src->len;
    }
    if (m->fatal || m->body.n != 1 || m->body.v[0]->kind != AST_EXPR)
        elab_fail(E, TS_ERR_SYNTAX, at, "f-string: '%.*s' is not an expression", (int)n, f);
    return eval(E, env, m->body.v[0]->value);
}

static const char *fstring_format(Elab *E, Value *v, char conv, const char *spec, TsLoc loc) {
    if (conv == 'r' || conv == 's' || conv == 'a' || !*spec) {
        const char *t = val_text(E, v, conv == 'r' || conv == 'a');
        if (!t)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "f-string: a %s cannot be formatted at compile time", val_kind_name(v));
        if (!*spec) return t;
        v = val_str(E, t, loc);
    }
    const char *p = spec;
    char fill = ' ', align = 0;
    if (p[0] && strchr("<>^", p[1]) && p[1]) {
        fill = p[0];
        align = p[1];
        p += 2;
    } else if (p[0] && strchr("<>^", p[0])) {
        align = *p++;
    }
    bool zero = *p == '0';
    if (zero) p++;
    int width = 0, prec = -1;
    while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
    if (*p == '.') {
        prec = 0;
        p++;
        while (*p >= '0' && *p <= '9') prec = prec * 10 + (*p++ - '0');
    }
    char type = *p ? *p++ : 0;
    if (*p || width > 200 || prec > 60)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "f-string format spec ':%s' is not supported", spec);
    char body[300];
    if ((type == 'b' || type == 'd' || type == 'x' || type == 'X' || type == 'o' || (!type && v->kind == V_INT)) &&
        (v->kind == V_INT || v->kind == V_BOOL)) {
        int64_t i = v->kind == V_INT ? v->i : v->b;
        if (type == 'b') {
            uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
            char bits[70];
            int nb = 0;
            do bits[nb++] = (char)('0' + (u & 1)); while (u >>= 1);
            int k = 0;
            if (i < 0) body[k++] = '-';
            while (nb) body[k++] = bits[--nb];
            body[k] = 0;
        } else {
            /* Python prints the magnitude in hex/octal with a sign */
            unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;
            const char *sg = i < 0 ? "-" : "";
            if (type == 'x') snprintf(body, sizeof body, "%s%llx", sg, u);
            else if (type == 'X') snprintf(body, sizeof body, "%s%llX", sg, u);
            else if (type == 'o') snprintf(body, sizeof body, "%s%llo", sg, u);
            else snprintf(body, sizeof body, "%lld", (long long)i);
        }
    } else if ((type == 'f' || type == 'e' || type == 'g' || (!type && v->kind == V_FLOAT)) && val_is_const(v)) {
        double d = v->kind == V_FLOAT ? v->f : v->kind == V_INT ? (double)v->i : v->b;
        if (!type) {
            if (prec < 0) snprintf(body, sizeof body, "%s", val_text(E, v, false));
            else snprintf(body, sizeof body, "%.*g", prec, d);
        } else {
            int pr = prec < 0 ? 6 : prec;
            if (type == 'f') snprintf(body, sizeof body, "%.*f", pr, d);
            else if (type == 'e') snprintf(body, sizeof body, "%.*e", pr, d);
            else snprintf(body, sizeof body, "%.*g", pr, d);
        }
    } else if ((type == 's' || !type) && (v->kind == V_STR || v->kind == V_DTYPE)) {
        const char *t = v->kind == V_STR ? v->s : ts_dtype_name(v->dt);
        snprintf(body, sizeof body, "%.*s", prec < 0 ? 250 : prec, t);
    } else {
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "f-string format spec ':%s' does not apply to a %s", spec, val_kind_name(v));
    }
    size_t len = strlen(body);
    if ((int)len >= width) return ts_sprintf(E->a, "%s", body);
    bool num = v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL;
    char *out = ts_alloc(E->a, (size_t)width + 1);
    size_t pad = (size_t)width - len;
    if (align) { /* explicit alignment: fill before, after or around */
        size_t before = align == '>' ? pad : align == '^' ? pad / 2 : 0;
        for (size_t i = 0; i < before; i++) out[i] = fill;
        memcpy(out + before, body, len);
        for (size_t i = before + len; i < (size_t)width; i++) out[i] = fill;
        out[width] = 0;
        return out;
    }
    if (num) { /* right-aligned; zero padding after the sign */
        size_t k = 0, sgn = body[0] == '-' ? 1 : 0;
        if (zero && sgn) out[k++] = '-';
        for (size_t i = 0; i < pad; i++) out[k++] = zero ? '0' : ' ';
        memcpy(out + k, body + (zero ? sgn : 0), len - (zero ? sgn : 0));
        k += len - (zero ? sgn : 0);
        out[k] = 0;
    } else { /* strings are left-aligned */
        memcpy(out, body, len);
        for (size_t i = 0; i < pad; i++) out[len + i] = zero ? '0' : ' ';
        out[width] = 0;
    }
    return out;
}

/* A string built in the arena (an error may longjmp out of the middle of
 * building it: nothing to free then). */
typedef struct ArenaStr {
    char *s;    /* the text, NUL-terminated */
    size_t n;   /* its length */
    size_t cap; /* bytes allocated */
} ArenaStr;

static void as_add(Elab *E, ArenaStr *b, const char *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *s = ts_alloc(E->a, cap);
        if (b->n) memcpy(s, b->s, b->n);
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, p, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void as_puts(Elab *E, ArenaStr *b, const char *p) { as_add(E, b, p, strlen(p)); }

static Value *eval_fstring(Elab *E, Env *env, const AstExpr *x) {
    const char *s = x->str;
    size_t n = x->len;
    ArenaStr b = {0};
    as_add(E, &b, "", 0);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((c == '{' || c == '}') && i + 1 < n && s[i + 1] == c) {
            as_add(E, &b, &c, 1);
            i++;
        } else if (c == '}') {
            elab_fail(E, TS_ERR_SYNTAX, x->loc, "f-string: single '}' is not allowed");
        } else if (c == '{') {
            /* the field: an expression (brackets and quotes skipped over), then
             * !conversion, then :spec, up to the matching '}' */
            size_t j = i + 1, conv_at = 0, spec_at = 0;
            int depth = 0;
            char quote = 0;
            for (; j < n; j++) {
                char d = s[j];
                if (quote) {
                    if (d == quote) quote = 0;
                } else if (spec_at) {
                    if (d == '{') break; /* a nested field in the spec: refused below */
                    if (d == '}') break;
                } else if (d == '\'' || d == '"') {
                    quote = d;
                } else if (d == '(' || d == '[' || d == '{') {
                    depth++;
                } else if ((d == ')' || d == ']' || d == '}') && depth > 0) {
                    depth--;
                } else if (d == '}') {
                    break;
                } else if (!depth && d == '!' && j + 1 < n && s[j + 1] != '=' && !conv_at) {
                    conv_at = j;
                } else if (!depth && d == ':') {
                    spec_at = j;
                }
            }
            if (j >= n || s[j] != '}') {
                elab_fail(E, TS_ERR_UNSUPPORTED, x->loc, "f-string: an unclosed field or a nested field in a format spec");
            }
            size_t e = conv_at ? conv_at : spec_at ? spec_at : j;
            char conv = 0;
            const char *spec = spec_at ? ts_strndup(E->a, s + spec_at + 1, j - spec_at - 1) : "";
            if (conv_at) {
                conv = s[conv_at + 1];
                size_t after = conv_at + 2;
                if (!strchr("rsa", conv) || (after != j && after != spec_at)) {
                    elab_fail(E, TS_ERR_SYNTAX, x->loc, "f-string: invalid conversion character");
                }
            }
            Value *v = fstring_field(E, env, s + i + 1, e - i - 1, x->loc);
            as_puts(E, &b, fstring_format(E, v, conv, spec, x->loc));
            i = j;
        } else if (c == '\\' && i + 1 < n) {
            char d = s[++i];
            const char *rep = d == 'n' ? "\n" : d == 't' ? "\t" : d == 'r' ? "\r" : d == '0' ? "" : NULL;
            if (rep) as_puts(E, &b, rep);
            else if (d == '\\' || d == '\'' || d == '"') as_add(E, &b, &d, 1);
            else {
                as_add(E, &b, "\\", 1);
                as_add(E, &b, &d, 1);
            }
        } else {
            as_add(E, &b, &c, 1);
        }
    }
    return val_str(E, b.s, x->loc);
}

/* ---- comprehensions, run at compile time ------------------------------------------------------ */

Value **iter_items(Elab *E, Value *it, TsLoc loc, int *n) {
    switch (it->kind) {
    case V_TUPLE: case V_LIST: *n = it->n; return it->items;
    case V_DICT: {
        *n = it->n / 2;
        Value **items = TS_NEWN(E->a, Value *, *n ? *n : 1);
        for (int i = 0; i < *n; i++) items[i] = it->items[2 * i];
        return items;
    }
    case V_STR: case V_DTYPE: {
        const char *s = it->kind == V_STR ? it->s : ts_dtype_name(it->dt);
        *n = (int)strlen(s);
        Value **items = TS_NEWN(E->a, Value *, *n ? *n : 1);
        for (int i = 0; i < *n; i++) items[i] = val_str(E, ts_strndup(E->a, s + i, 1), loc);
        return items;
    }
    case V_ITER: {
        int64_t lo, c;
        if (it->iter->host && ir_is_const_int(it->iter->start[0], &lo) && ir_is_const_int(it->iter->extent[0], &c)) {
            int64_t step = it->iter->step ? it->iter->step->ival : 1;
            if (c > (1 << 22)) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "a compile-time range of %lld items is too long", (long long)c);
            *n = (int)(c > 0 ? c : 0);
            Value **items = TS_NEWN(E->a, Value *, *n ? *n : 1);
            for (int i = 0; i < *n; i++) items[i] = val_int(E, lo + i * step, loc);
            return items;
        }
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "only a range over constants can be iterated here, not a run-time loop");
    }
    case V_OPAQUE: fail_opaque(E, it, loc);
    default: elab_fail(E, TS_ERR_TYPE, loc, "cannot iterate over a %s", val_kind_name(it));
    }
}

typedef TS_VEC(Value *) ValueVec;

/* The comprehension's clauses from `ci` on, appending what they produce. */
static void comp_clauses(Elab *E, Env *env, const AstExpr *x, int ci, ValueVec *out) {
    if (ci == x->ncomp) {
        ts_vec_push(E->a, *out, eval(E, env, x->a));
        if (x->c) ts_vec_push(E->a, *out, eval(E, env, x->c)); /* dict: key, value */
        if (out->n > (1 << 22)) elab_fail(E, TS_ERR_UNSUPPORTED, x->loc, "a comprehension of over 4M items");
        return;
    }
    const AstCompFor *f = &x->comp[ci];
    int n;
    Value **items = iter_items(E, eval(E, env, f->iter), f->iter->loc, &n);
    for (int i = 0; i < n; i++) {
        assign_target(E, env, f->target, items[i], f->target->loc);
        bool keep = true;
        for (int j = 0; j < f->nifs && keep; j++) {
            Value *c = eval(E, env, f->ifs[j]);
            if (val_is_symbolic(c))
                elab_fail(E, TS_ERR_UNSUPPORTED, f->ifs[j]->loc, "a comprehension's condition must be known at compile time");
            keep = val_truthy(E, c, f->ifs[j]->loc);
        }
        if (keep) comp_clauses(E, env, x, ci + 1, out);
    }
}

/* [e for ...], (e for ...) (a list here), {k: v for ...}: run at compile
 * time in a scope of their own, as Python does. */
static Value *eval_comp(Elab *E, Env *env, const AstExpr *x) {
    if (!strcmp(x->name, "set")) elab_fail(E, TS_ERR_UNSUPPORTED, x->loc, "set comprehensions are not supported");
    if (!x->ncomp) elab_fail(E, TS_ERR_INTERNAL, x->loc, "a comprehension without a for clause");
    ValueVec out = {0};
    comp_clauses(E, env_new(E, env), x, 0, &out);
    return val_seq(E, x->c ? V_DICT : V_LIST, out.v, out.n, x->loc);
}

/* ---- expressions ------------------------------------------------------------------------------ */

static Value *eval_attr(Elab *E, Env *env, const AstExpr *x) {
    Value *obj = eval(E, env, x->a);
    Value *r = builtin_attr(E, obj, x->name, x->loc);
    if (r) return r;
    if (obj->kind == V_OPAQUE) fail_opaque(E, obj, x->loc);
    elab_fail(E, TS_ERR_NAME, x->loc, "%s has no attribute '%s'", val_kind_name(obj), x->name);
}

Value *eval(Elab *E, Env *env, const AstExpr *x) {
    TsLoc loc = x->loc;
    switch (x->kind) {
    case AST_NAME: {
        Value *v = env_lookup(env, x->name);
        if (!v) v = builtin_global(E, x->name, loc);
        if (!v) elab_fail(E, TS_ERR_NAME, loc, "name '%s' is not defined", x->name);
        return v;
    }
    case AST_INT: return val_int(E, x->ival, loc);
    case AST_FLOAT: return val_float(E, x->fval, loc);
    case AST_STR: return x->fstring ? eval_fstring(E, env, x) : val_str(E, x->str, loc);
    case AST_TRUE: return val_bool(E, true, loc);
    case AST_FALSE: return val_bool(E, false, loc);
    case AST_NONE: return val_none(E, loc);
    case AST_BINOP: return binop(E, x->op, eval(E, env, x->a), eval(E, env, x->b), loc);
    case AST_UNARY: return unop(E, x->op, eval(E, env, x->a), loc);
    case AST_BOOLOP: {
        Value *a = eval(E, env, x->a);
        if (!val_is_symbolic(a)) {
            bool t = val_truthy(E, a, loc);
            if (x->op == AST_AND ? !t : t) return a;
            return eval(E, env, x->b);
        }
        Value *b = eval(E, env, x->b);
        return binop(E, x->op, a, b, loc);
    }
    case AST_COMPARE: {
        Value *left = eval(E, env, x->a), *acc = NULL;
        for (int i = 0; i < x->n; i++) {
            Value *right = eval(E, env, x->items[i]);
            Value *r = binop(E, x->ops[i], left, right, x->items[i]->loc);
            if (!acc) acc = r;
            else if (val_is_symbolic(acc) || val_is_symbolic(r)) acc = binop(E, AST_AND, acc, r, loc);
            else if (!val_truthy(E, acc, loc)) return acc;
            else acc = r;
            left = right;
        }
        return acc;
    }
    case AST_IFEXP: {
        Value *c = eval(E, env, x->a);
        if (!val_is_symbolic(c)) return eval(E, env, val_truthy(E, c, loc) ? x->b : x->c);
        Value *t = eval(E, env, x->b), *f = eval(E, env, x->c);
        IrExpr *te = val_to_expr(E, t, loc), *fe = val_to_expr(E, f, loc);
        return val_expr(E, ir_select(E->a, val_to_expr(E, c, loc), te, fe), loc);
    }
    case AST_CALL: return eval_call(E, env, x);
    case AST_ATTR: return eval_attr(E, env, x);
    case AST_SUBSCRIPT: return subscript(E, env, x);
    case AST_TUPLE:
    case AST_LIST: {
        TS_VEC(Value *) items = {0};
        for (int i = 0; i < x->n; i++) {
            const AstExpr *it = x->items[i];
            if (it->kind == AST_STARRED) {
                int n;
                Value **sub = val_items(E, eval(E, env, it->a), &n);
                for (int j = 0; j < n; j++) ts_vec_push(E->a, items, sub[j]);
            } else {
                ts_vec_push(E->a, items, eval(E, env, it));
            }
        }
        return val_seq(E, x->kind == AST_TUPLE ? V_TUPLE : V_LIST, items.v, items.n, loc);
    }
    case AST_DICT: {
        Value **items = TS_NEWN(E->a, Value *, x->n ? x->n : 1);
        for (int i = 0; i < x->n; i++) items[i] = eval(E, env, x->items[i]);
        return val_seq(E, V_DICT, items, x->n, loc);
    }
    case AST_SLICE:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "a slice is only allowed inside a subscript");
    case AST_LAMBDA: {
        /* `lambda params: body` is the function `def <lambda>(params): return body`
         * (T.comm_reducer's combine; T.Layout(shape, lambda ...) only stores it) */
        AstStmt *ret = TS_NEW(E->a, AstStmt), *def = TS_NEW(E->a, AstStmt);
        ret->kind = AST_RETURN;
        ret->loc = x->a ? x->a->loc : loc;
        ret->value = x->a;
        def->kind = AST_DEF;
        def->loc = loc;
        def->name = "<lambda>";
        def->params = x->params;
        def->nparams = x->nparams;
        def->body.v = TS_NEWN(E->a, AstStmt *, 1);
        def->body.v[0] = ret;
        def->body.n = 1;
        Func *fn = TS_NEW(E->a, Func);
        fn->def = def;
        fn->closure = env;
        fn->kind = FN_PLAIN;
        Value *v = val_new(E, V_FUNC, loc);
        v->fn = fn;
        return v;
    }
    case AST_COMP: return eval_comp(E, env, x);
    case AST_SET: elab_fail(E, TS_ERR_UNSUPPORTED, loc, "set literals are not supported");
    case AST_YIELD: elab_fail(E, TS_ERR_UNSUPPORTED, loc, "yield is not supported");
    case AST_ELLIPSIS: elab_fail(E, TS_ERR_UNSUPPORTED, loc, "'...' is not supported here");
    default:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "this kind of expression is not supported by the TileLang front end");
    }
}

