/*
 * elab.c — the elaborator's interpreter: values, scopes, expressions and
 * statements, and the entry point ts_elaborate.
 *
 * One walker serves both worlds.  Outside a prim_func (the factory and
 * plain helper functions) statements simply run over compile-time values.
 * Inside a prim_func (E->in_kernel > 0) the same walker also meets values
 * only known when the kernel runs (V_EXPR, buffer accesses): arithmetic on
 * those builds IR expressions, and `for`/`if`/`while` on them emit IR loops
 * and branches into E->cur.  Arithmetic between two constants still folds
 * here, with Python's meaning (`/` on ints gives a float, `//` floors),
 * exactly as it would in TileLang, where Python runs before TVM sees the
 * kernel.
 */
#include "elab/elab_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---------------------------------------------------------------- */

void elab_fail(Elab *E, TsStatus st, TsLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_vfail_at(E->d, st, loc, fmt, ap);
}

/* ---- values ------------------------------------------------------------------ */

Value *val_new(Elab *E, ValueKind kind, TsLoc loc) {
    Value *v = TS_NEW(E->a, Value);
    v->kind = kind;
    v->loc = loc;
    return v;
}

Value *val_int(Elab *E, int64_t i, TsLoc loc) {
    Value *v = val_new(E, V_INT, loc);
    v->i = i;
    return v;
}

Value *val_float(Elab *E, double f, TsLoc loc) {
    Value *v = val_new(E, V_FLOAT, loc);
    v->f = f;
    return v;
}

Value *val_bool(Elab *E, bool b, TsLoc loc) {
    Value *v = val_new(E, V_BOOL, loc);
    v->b = b;
    return v;
}

Value *val_none(Elab *E, TsLoc loc) { return val_new(E, V_NONE, loc); }

Value *val_str(Elab *E, const char *s, TsLoc loc) {
    Value *v = val_new(E, V_STR, loc);
    v->s = s;
    return v;
}

Value *val_expr(Elab *E, IrExpr *e, TsLoc loc) {
    int64_t c;
    if (e->kind == IR_E_INT && ir_is_const_int(e, &c) && e->dt == TS_INT32) return val_int(E, c, loc);
    Value *v = val_new(E, V_EXPR, loc);
    v->e = e;
    return v;
}

Value *val_seq(Elab *E, ValueKind kind, Value **items, int n, TsLoc loc) {
    Value *v = val_new(E, kind, loc);
    v->items = items;
    v->n = n;
    return v;
}

const char *val_kind_name(const Value *v) {
    static const char *names[] = {
        [V_NONE] = "None", [V_BOOL] = "bool", [V_INT] = "int", [V_FLOAT] = "float",
        [V_STR] = "str", [V_DTYPE] = "dtype", [V_TUPLE] = "tuple", [V_LIST] = "list",
        [V_DICT] = "dict", [V_EXPR] = "run-time expression", [V_BUFFER] = "buffer",
        [V_ACCESS] = "buffer element", [V_REGION] = "buffer region", [V_FUNC] = "function",
        [V_BUILTIN] = "builtin function", [V_MODULE] = "module", [V_TENSORTY] = "tensor type",
        [V_KERNEL] = "T.Kernel", [V_ITER] = "loop range", [V_ENUM] = "enum value",
        [V_OPAQUE] = "unsupported value"};
    return names[v->kind];
}

bool val_is_const(const Value *v) {
    return v->kind == V_BOOL || v->kind == V_INT || v->kind == V_FLOAT;
}

static bool val_is_symbolic(const Value *v) {
    return v->kind == V_EXPR || v->kind == V_ACCESS ||
           (v->kind == V_BUFFER && v->buf->scope == IR_SCOPE_VAR);
}

/* An opaque value's i is the status to report (0: unsupported construct). */
static TS_NORETURN void fail_opaque(Elab *E, Value *v, TsLoc loc) {
    elab_fail(E, v->i ? (TsStatus)v->i : TS_ERR_UNSUPPORTED, loc, "%s", v->s ? v->s : "unsupported value");
}

IrExpr *val_to_expr(Elab *E, Value *v, TsLoc loc) {
    switch (v->kind) {
    case V_INT:
        if (v->i >= INT32_MIN && v->i <= INT32_MAX) return ir_i32(E->a, v->i);
        return ir_int(E->a, v->i, TS_INT64);
    case V_FLOAT: return ir_float(E->a, v->f, TS_FLOAT32);
    case V_BOOL: return ir_int(E->a, v->b, TS_BOOL);
    case V_EXPR: return v->e;
    case V_ACCESS: return ir_load(E->a, v->buf, v->idx, v->buf->ndim);
    case V_BUFFER:
        if (v->buf->scope == IR_SCOPE_VAR) {
            IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
            idx[0] = ir_i32(E->a, 0);
            return ir_load(E->a, v->buf, idx, 1);
        }
        elab_fail(E, TS_ERR_TYPE, loc, "buffer '%s' used as a value; index it, e.g. %s[i]",
                  v->buf->name, v->buf->name);
    case V_OPAQUE: fail_opaque(E, v, loc);
    case V_STR:
        elab_fail(E, TS_ERR_TYPE, loc, "expected a number or expression, got the string '%s'", v->s);
    default:
        elab_fail(E, TS_ERR_TYPE, loc, "expected a number or expression, got %s", val_kind_name(v));
    }
}

int64_t val_to_int(Elab *E, Value *v, TsLoc loc, const char *what) {
    if (v->kind == V_INT) return v->i;
    if (v->kind == V_BOOL) return v->b;
    if (v->kind == V_EXPR) {
        int64_t c;
        if (ir_is_const_int(v->e, &c)) return c;
        elab_fail(E, TS_ERR_TYPE, loc, "%s must be a compile-time integer, not a run-time expression",
                  what);
    }
    if (v->kind == V_OPAQUE) fail_opaque(E, v, loc);
    elab_fail(E, TS_ERR_TYPE, loc, "%s must be an integer, got %s", what, val_kind_name(v));
}

bool val_truthy(Elab *E, Value *v, TsLoc loc) {
    switch (v->kind) {
    case V_NONE: return false;
    case V_BOOL: return v->b;
    case V_INT: return v->i != 0;
    case V_FLOAT: return v->f != 0;
    case V_STR: return v->s[0] != 0;
    case V_TUPLE: case V_LIST: case V_DICT: return v->n != 0;
    case V_OPAQUE: fail_opaque(E, v, loc);
    case V_EXPR: case V_ACCESS: {
        int64_t c;
        if (v->kind == V_EXPR && ir_is_const_int(v->e, &c)) return c != 0;
        elab_fail(E, TS_ERR_TYPE, loc, "a run-time condition cannot be used here");
    }
    default: return true;
    }
}

TsDType val_to_dtype(Elab *E, Value *v, TsLoc loc) {
    if (v->kind == V_DTYPE) return v->dt;
    if (v->kind == V_STR) {
        TsDType dt = ts_dtype_from_name(v->s);
        if (dt != TS_DTYPE_NONE) return dt;
        elab_fail(E, TS_ERR_TYPE, loc, "unknown dtype '%s'", v->s);
    }
    if (v->kind == V_OPAQUE) fail_opaque(E, v, loc);
    elab_fail(E, TS_ERR_TYPE, loc, "expected a dtype (e.g. \"float16\" or T.float16), got %s",
              val_kind_name(v));
}

Value **val_items(Elab *E, Value *v, int *n) {
    if (v->kind == V_TUPLE || v->kind == V_LIST) {
        *n = v->n;
        return v->items;
    }
    Value **one = TS_NEWN(E->a, Value *, 1);
    one[0] = v;
    *n = 1;
    return one;
}

IrBuffer *val_to_buffer(Elab *E, Value *v, TsLoc loc, const char *what) {
    if (v->kind == V_BUFFER) return v->buf;
    if (v->kind == V_OPAQUE) fail_opaque(E, v, loc);
    elab_fail(E, TS_ERR_TYPE, loc, "%s must be a buffer, got %s", what, val_kind_name(v));
}

IrRegion val_to_region(Elab *E, Value *v, TsLoc loc, const char *what) {
    if (v->kind == V_REGION) return v->reg;
    if (v->kind == V_BUFFER && v->buf->scope == IR_SCOPE_VAR)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: '%s' is an alloc_var scalar, not a buffer (use alloc_local or alloc_fragment)",
                  what, v->buf->name);
    if (v->kind == V_BUFFER) return ir_region_full(E->a, v->buf);
    if (v->kind == V_ACCESS) {
        IrRegion r = {v->buf, v->buf->ndim, v->idx, TS_NEWN(E->a, IrExpr *, v->buf->ndim)};
        for (int i = 0; i < r.ndim; i++) r.extent[i] = ir_i32(E->a, 1);
        return r;
    }
    if (v->kind == V_OPAQUE) fail_opaque(E, v, loc);
    elab_fail(E, TS_ERR_TYPE, loc, "%s must be a buffer or a region of one, got %s", what,
              val_kind_name(v));
}

/* ---- scopes ---------------------------------------------------------------------- */

Env *env_new(Elab *E, Env *parent) {
    Env *e = TS_NEW(E->a, Env);
    e->parent = parent;
    return e;
}

Value *env_lookup(Env *env, const char *name) {
    for (; env; env = env->parent)
        for (int i = env->vars.n - 1; i >= 0; i--)
            if (!strcmp(env->vars.v[i].name, name)) return env->vars.v[i].v;
    return NULL;
}

void env_set(Elab *E, Env *env, const char *name, Value *v) {
    for (int i = 0; i < env->vars.n; i++)
        if (!strcmp(env->vars.v[i].name, name)) {
            env->vars.v[i].v = v;
            return;
        }
    Binding b = {name, v};
    ts_vec_push(E->a, env->vars, b);
}

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

static bool expr_has_load(const IrExpr *e) { return ir_expr_any(e, is_load, NULL); }
static bool expr_reads_global(const IrExpr *e) { return ir_expr_any(e, is_global_load, NULL); }

/* Linear forms: sum of coef * atom + constant, to see that
 * (bx + 1) * 64 - bx * 64 is the constant 64. */
typedef struct LinTerm { const IrExpr *atom; int64_t coef; } LinTerm;
typedef struct Lin { LinTerm t[32]; int n; int64_t c; bool overflow; } Lin;

static void lin_add(Lin *L, const IrExpr *e, int64_t coef) {
    int64_t c;
    if (ir_is_const_int(e, &c) && e->dt != TS_BOOL) {
        L->c += coef * c;
        return;
    }
    if (e->kind == IR_E_BIN && ts_dtype_is_int(e->dt)) {
        switch (e->bin.op) {
        case IR_ADD: lin_add(L, e->bin.a, coef); lin_add(L, e->bin.b, coef); return;
        case IR_SUB: lin_add(L, e->bin.a, coef); lin_add(L, e->bin.b, -coef); return;
        case IR_MUL:
            if (ir_is_const_int(e->bin.b, &c)) { lin_add(L, e->bin.a, coef * c); return; }
            if (ir_is_const_int(e->bin.a, &c)) { lin_add(L, e->bin.b, coef * c); return; }
            /* (x + y) * z with z symbolic: expand one level */
            if (e->bin.a->kind == IR_E_BIN &&
                (e->bin.a->bin.op == IR_ADD || e->bin.a->bin.op == IR_SUB)) {
                /* treat a*b as atoms after distributing: keep simple, atom */
            }
            break;
        default: break;
        }
    }
    if (e->kind == IR_E_NEG) {
        lin_add(L, e->un.a, -coef);
        return;
    }
    for (int i = 0; i < L->n; i++)
        if (ir_expr_equal(L->t[i].atom, e)) {
            L->t[i].coef += coef;
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

/* Python semantics on two constants. */
static Value *const_binop(Elab *E, AstOp op, Value *a, Value *b, TsLoc loc) {
    bool fl = a->kind == V_FLOAT || b->kind == V_FLOAT;
    double x = const_f(a), y = const_f(b);
    int64_t i = const_i(a), j = const_i(b);
    switch (op) {
    case AST_ADD: return fl ? val_float(E, x + y, loc) : val_int(E, i + j, loc);
    case AST_SUB: return fl ? val_float(E, x - y, loc) : val_int(E, i - j, loc);
    case AST_MUL: return fl ? val_float(E, x * y, loc) : val_int(E, i * j, loc);
    case AST_DIV:
        if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "division by zero");
        return val_float(E, x / y, loc);
    case AST_FLOORDIV:
        if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "division by zero");
        return fl ? val_float(E, floor(x / y), loc) : val_int(E, py_floordiv(i, j), loc);
    case AST_MOD:
        if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "modulo by zero");
        return fl ? val_float(E, x - floor(x / y) * y, loc) : val_int(E, py_mod(i, j), loc);
    case AST_POW:
        if (!fl && j >= 0) {
            int64_t r = 1;
            for (int64_t k = 0; k < j; k++) r *= i;
            return val_int(E, r, loc);
        }
        return val_float(E, pow(x, y), loc);
    case AST_LSHIFT: if (fl) break; return val_int(E, i << j, loc);
    case AST_RSHIFT: if (fl) break; return val_int(E, i >> j, loc);
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
static IrExpr *adapt_literal(Elab *E, Value *lit, TsDType other, TsLoc loc) {
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
        case AST_NEG: return a->kind == V_FLOAT ? val_float(E, -a->f, loc) : val_int(E, -const_i(a), loc);
        case AST_POS: return a;
        case AST_INVERT: return val_int(E, ~const_i(a), loc);
        default: break;
        }
    }
    if (val_is_symbolic(a)) {
        IrExpr *x = val_to_expr(E, a, loc);
        if (op == AST_NEG) return val_expr(E, ir_neg(E->a, x), loc);
        if (op == AST_POS) return a;
        if (op == AST_INVERT) {
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

static Value *subscript(Elab *E, Env *env, const AstExpr *x) {
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
    elab_fail(E, TS_ERR_TYPE, loc, "a %s cannot be indexed", val_kind_name(base));
}

/* ---- calls -------------------------------------------------------------------------------- */

static void exec_block(Elab *E, Env *env, const AstBlock *b);

static Value *call_user(Elab *E, Func *fn, Value **args, int nargs, const char **kw, Value **kwv,
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
    case AST_STR: return val_str(E, x->str, loc);
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
        /* Kept as a value (T.Layout(shape, lambda ...) only stores it); using it fails. */
        Value *v = val_new(E, V_OPAQUE, loc);
        v->s = "lambda expressions are not supported; use a def or a @T.macro";
        return v;
    }
    case AST_COMP:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "comprehensions (%s) are not supported; use a for loop",
                  x->name ? x->name : "list");
    case AST_SET: elab_fail(E, TS_ERR_UNSUPPORTED, loc, "set literals are not supported");
    case AST_YIELD: elab_fail(E, TS_ERR_UNSUPPORTED, loc, "yield is not supported");
    case AST_ELLIPSIS: elab_fail(E, TS_ERR_UNSUPPORTED, loc, "'...' is not supported here");
    default:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "this kind of expression is not supported by the TileLang front end");
    }
}

/* ---- statements -------------------------------------------------------------------------------- */

/* Store v into buffer element access `acc` (a V_ACCESS). */
static void emit_store(Elab *E, IrBuffer *buf, IrExpr **idx, Value *v, TsLoc loc) {
    IrExpr *e;
    if (val_is_const(v)) e = adapt_literal(E, v, buf->dt, loc);
    else e = val_to_expr(E, v, loc);
    if (e->dt != buf->dt) e = ir_cast(E->a, buf->dt, e);
    IrStmt *s = ir_store(E->a, buf, idx, buf->ndim, e);
    s->loc = loc;
    emit(E, s);
}

static IrExpr **zero_idx(Elab *E) {
    IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
    idx[0] = ir_i32(E->a, 0);
    return idx;
}

static void assign(Elab *E, Env *env, const AstExpr *target, Value *v, TsLoc loc) {
    switch (target->kind) {
    case AST_NAME: {
        if (v->kind == V_BUFFER && !v->buf->name[0]) { /* T.alloc_* / T.empty result */
            v->buf->name = target->name;
            if (v->buf->param >= 0 && v->buf->param < E->k->params.n)
                E->k->params.v[v->buf->param].name = target->name;
        }
        Value *old = env_lookup(env, target->name);
        if (E->in_kernel && old && old->kind == V_BUFFER && old->buf->scope == IR_SCOPE_VAR &&
            v->kind != V_BUFFER) {
            emit_store(E, old->buf, zero_idx(E), v, loc);
            return;
        }
        if (E->in_kernel && (v->kind == V_EXPR || v->kind == V_ACCESS) && E->cur) {
            IrExpr *e = val_to_expr(E, v, loc);
            if (expr_has_load(e)) {
                /* A let, so the value is read now, not wherever the name is used. */
                IrVar *var = ir_var(E->k, target->name, e->dt, IR_VAR_LET);
                IrStmt *s = ir_stmt(E->a, IR_S_LET, loc);
                s->let.var = var;
                s->let.value = e;
                emit(E, s);
                v = val_expr(E, ir_var_ref(E->a, var), loc);
            }
        }
        env_set(E, env, target->name, v);
        return;
    }
    case AST_TUPLE:
    case AST_LIST: {
        int n;
        Value **items = val_items(E, v, &n);
        if (v->kind != V_TUPLE && v->kind != V_LIST)
            elab_fail(E, TS_ERR_TYPE, loc, "cannot unpack a %s", val_kind_name(v));
        if (n != target->n)
            elab_fail(E, TS_ERR_TYPE, loc, "cannot unpack %d values into %d names", n, target->n);
        for (int i = 0; i < n; i++) assign(E, env, target->items[i], items[i], loc);
        return;
    }
    case AST_SUBSCRIPT: {
        Value *dst = subscript(E, env, target);
        if (dst->kind == V_ACCESS) {
            emit_store(E, dst->buf, dst->idx, v, loc);
            return;
        }
        if (dst->kind == V_REGION)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "assigning to a slice is not supported; use T.copy or T.fill");
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "assigning into a %s is not supported",
                  val_kind_name(eval(E, env, target->a)));
    }
    default:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "this assignment target is not supported");
    }
}

/*
 * Names bound inside a run-time construct (an IR loop body, a branch of a
 * run-time `if`, a run-time `while`) cannot be used after it: they may
 * name loop variables or lets that exist only inside, and a Python value
 * assigned in one branch would silently win over the other.  After such a
 * construct, every binding of `env` that it added or changed becomes an
 * opaque value that explains this if used.
 */
typedef struct EnvSnap {
    Binding *v;
    int n;
} EnvSnap;

static EnvSnap env_snapshot(Elab *E, Env *env) {
    EnvSnap sn = {TS_NEWN(E->a, Binding, env->vars.n ? env->vars.n : 1), env->vars.n};
    for (int i = 0; i < env->vars.n; i++) sn.v[i] = env->vars.v[i];
    return sn;
}

static void env_seal(Elab *E, Env *env, EnvSnap sn, const char *what) {
    for (int i = 0; i < env->vars.n; i++) {
        Binding *b = &env->vars.v[i];
        if (i < sn.n && sn.v[i].v == b->v) continue;
        if (b->v->kind == V_OPAQUE) continue;
        Value *o = val_new(E, V_OPAQUE, b->v->loc);
        o->s = ts_sprintf(E->a,
                          "'%s' was assigned inside a %s and cannot be used after it; "
                          "use T.alloc_var (or a buffer) for a value that outlives it",
                          b->name, what);
        b->v = o;
    }
}

static void exec_for_ir(Elab *E, Env *env, const AstStmt *s, IterSpec *it) {
    EnvSnap snap = env_snapshot(E, env);
    const AstExpr *t = s->target;
    int nt = 1;
    const AstExpr *const *names = &t;
    if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
        nt = t->n;
        names = (const AstExpr *const *)t->items;
    }
    if (nt != it->n)
        elab_fail(E, TS_ERR_TYPE, t->loc, "the loop has %d level%s but %d name%s", it->n,
                  it->n == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
    if (s->orelse.n)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "`for ... else` is not supported in kernel code");
    IrStmt *saved = E->cur;
    IrStmt *outer = NULL, *inner_parent = NULL;
    for (int l = 0; l < it->n; l++) {
        if (names[l]->kind != AST_NAME)
            elab_fail(E, TS_ERR_UNSUPPORTED, names[l]->loc, "a loop variable must be a name");
        IrVar *var = ir_var(E->k, names[l]->name, TS_INT32, IR_VAR_LOOP);
        IrExpr *ve = ir_var_ref(E->a, var);
        Value *bound;
        IrExpr *extent = it->extent[l], *start = it->start[l];
        if (it->step) {
            /* for v in serial(start, stop, step): iterate i, v = start + i * step */
            bound = val_expr(E, ir_bin(E->a, IR_ADD, start, ir_bin(E->a, IR_MUL, ve, it->step)), s->loc);
            start = ir_i32(E->a, 0);
        } else {
            bound = val_expr(E, ve, s->loc);
        }
        env_set(E, env, names[l]->name, bound);
        IrStmt *body = ir_seq(E->a);
        IrStmt *f = ir_for(E->a, var, start, extent, it->kind, body);
        f->loc = s->loc;
        if (l == 0) {
            f->for_.num_stages = it->num_stages;
            f->for_.order = it->order;
            f->for_.stage = it->stage;
            f->for_.norder = it->norder;
        }
        if (!outer) outer = f;
        else ir_seq_push(E->a, inner_parent, f);
        inner_parent = body;
    }
    emit(E, outer);
    E->cur = inner_parent;
    E->ir_loops++;
    exec_block(E, env, &s->body);
    E->ir_loops--;
    E->breaking = E->continuing = false;
    E->cur = saved;
    env_seal(E, env, snap, "run-time loop");
}

static void exec_for(Elab *E, Env *env, const AstStmt *s) {
    Value *iter = eval(E, env, s->cond);
    if (iter->kind == V_ITER && !iter->iter->host) {
        exec_for_ir(E, env, s, iter->iter);
        return;
    }
    /* Compile-time loop: range() over constants, tuples, lists, dict keys. */
    int64_t lo = 0, hi = 0, step = 1;
    int n = 0;
    Value **items = NULL;
    if (iter->kind == V_ITER) {
        int64_t c;
        ir_is_const_int(iter->iter->start[0], &lo);
        ir_is_const_int(iter->iter->extent[0], &c);
        step = iter->iter->step ? iter->iter->step->ival : 1;
        hi = lo + c * step;
    } else if (iter->kind == V_TUPLE || iter->kind == V_LIST) {
        items = iter->items;
        n = iter->n;
    } else if (iter->kind == V_DICT) {
        n = iter->n / 2;
        items = TS_NEWN(E->a, Value *, n ? n : 1);
        for (int i = 0; i < n; i++) items[i] = iter->items[2 * i];
    } else {
        if (iter->kind == V_OPAQUE) fail_opaque(E, iter, s->cond->loc);
        elab_fail(E, TS_ERR_TYPE, s->cond->loc, "cannot iterate over a %s", val_kind_name(iter));
    }
    int64_t count = items ? n : (step > 0 ? (hi - lo + step - 1) / step : (lo - hi - step - 1) / -step);
    bool broke = false;
    for (int64_t i = 0; i < count; i++) {
        Value *v = items ? items[i] : val_int(E, lo + i * step, s->loc);
        assign(E, env, s->target, v, s->loc);
        exec_block(E, env, &s->body);
        if (E->returning) return;
        if (E->breaking) {
            E->breaking = false;
            broke = true;
            break;
        }
        E->continuing = false;
    }
    if (!broke) exec_block(E, env, &s->orelse);
}

static void exec_if(Elab *E, Env *env, const AstStmt *s) {
    Value *c = eval(E, env, s->cond);
    if (!val_is_symbolic(c)) {
        exec_block(E, env, val_truthy(E, c, s->cond->loc) ? &s->body : &s->orelse);
        return;
    }
    IrStmt *st = ir_stmt(E->a, IR_S_IF, s->loc);
    st->if_.cond = val_to_expr(E, c, s->cond->loc);
    st->if_.then = ir_seq(E->a);
    emit(E, st);
    EnvSnap snap = env_snapshot(E, env);
    IrStmt *saved = E->cur;
    E->cur = st->if_.then;
    exec_block(E, env, &s->body);
    if (s->orelse.n) {
        st->if_.else_ = ir_seq(E->a);
        E->cur = st->if_.else_;
        exec_block(E, env, &s->orelse);
    }
    E->cur = saved;
    env_seal(E, env, snap, "run-time `if`");
    if (E->returning)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "`return` under a run-time condition is not supported");
    /* A break/continue that reached here belongs to a loop run at compile
     * time (unrolled): it cannot depend on a run-time condition. */
    if (E->breaking || E->continuing)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc,
                  "`%s` under a run-time condition inside a loop that runs at compile time (a `while` on a "
                  "constant, a `for` over a tuple or list); use T.serial/range or a `while` on a run-time condition",
                  E->breaking ? "break" : "continue");
}

static void exec_while(Elab *E, Env *env, const AstStmt *s) {
    Value *c = eval(E, env, s->cond);
    if (val_is_symbolic(c)) {
        IrStmt *st = ir_stmt(E->a, IR_S_WHILE, s->loc);
        st->while_.cond = val_to_expr(E, c, s->cond->loc);
        /* A loop waiting on global memory waits for other blocks (or ranks):
         * the C target then runs blocks as coroutines so waiting never deadlocks. */
        if (expr_reads_global(st->while_.cond)) E->k->may_block = true;
        st->while_.body = ir_seq(E->a);
        emit(E, st);
        EnvSnap snap = env_snapshot(E, env);
        IrStmt *saved = E->cur;
        E->cur = st->while_.body;
        E->ir_loops++;
        exec_block(E, env, &s->body);
        E->ir_loops--;
        E->breaking = E->continuing = false;
        E->cur = saved;
        env_seal(E, env, snap, "run-time `while`");
        return;
    }
    while (val_truthy(E, c, s->cond->loc)) {
        exec_block(E, env, &s->body);
        if (E->returning) return;
        if (E->breaking) {
            E->breaking = false;
            return;
        }
        E->continuing = false;
        c = eval(E, env, s->cond);
        if (val_is_symbolic(c))
            elab_fail(E, TS_ERR_UNSUPPORTED, s->cond->loc,
                      "a while condition that becomes a run-time value is not supported");
    }
    exec_block(E, env, &s->orelse);
}

/* The decorators that matter: T.prim_func, T.macro, tilelang.jit(out_idx=...).
 * Others (autotune, functools) are left unevaluated. */
static Func *make_func(Elab *E, Env *env, const AstStmt *s) {
    Func *fn = TS_NEW(E->a, Func);
    fn->def = s;
    fn->closure = env;
    fn->kind = FN_PLAIN;
    for (int i = 0; i < s->ndecorators; i++) {
        const AstExpr *d = s->decorators[i];
        const AstExpr *callee = d->kind == AST_CALL ? d->a : d;
        const char *name = callee->kind == AST_ATTR ? callee->name
                           : callee->kind == AST_NAME ? callee->name : "";
        if (!strcmp(name, "prim_func")) fn->kind = FN_PRIM;
        else if (!strcmp(name, "macro")) fn->kind = FN_MACRO;
        else if (!strcmp(name, "jit") && d->kind == AST_CALL) {
            for (int j = 0; j < d->n; j++)
                if (d->kwnames && d->kwnames[j] && !strcmp(d->kwnames[j], "out_idx"))
                    fn->out_idx = eval(E, env, d->items[j]);
        }
    }
    return fn;
}

static void exec_with(Elab *E, Env *env, const AstStmt *s) {
    if (s->ntargets != 1)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "only `with T.Kernel(...) as ...` is supported");
    Value *ctx = eval(E, env, s->items[0]);
    if (ctx->kind != V_KERNEL)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->items[0]->loc,
                  "only `with T.Kernel(...) as ...` is supported, not a %s", val_kind_name(ctx));
    if (!E->in_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "T.Kernel must be used inside a @T.prim_func");
    if (E->have_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "a second T.Kernel in one prim_func is not supported");
    E->have_kernel = true;
    IrKernel *k = E->k;
    if (s->targets[0]) {
        const AstExpr *t = s->targets[0];
        int nt = (t->kind == AST_TUPLE || t->kind == AST_LIST) ? t->n : 1;
        if (nt != k->ngrid)
            elab_fail(E, TS_ERR_TYPE, t->loc, "T.Kernel has %d grid dimension%s but %d name%s bound",
                      k->ngrid, k->ngrid == 1 ? "" : "s", nt, nt == 1 ? " is" : "s are");
        for (int i = 0; i < nt; i++) {
            const AstExpr *ni = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items[i] : t;
            if (ni->kind != AST_NAME) elab_fail(E, TS_ERR_UNSUPPORTED, ni->loc, "expected a name");
            k->block_idx[i]->name = ni->name;
            env_set(E, env, ni->name, val_expr(E, ir_var_ref(E->a, k->block_idx[i]), ni->loc));
        }
    }
    IrStmt *saved = E->cur;
    E->cur = k->body;
    exec_block(E, env, &s->body);
    E->cur = saved;
}

static void exec_stmt(Elab *E, Env *env, const AstStmt *s) {
    if (++E->steps > 2000000)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "compile-time evaluation runs too long (endless loop?)");
    switch (s->kind) {
    case AST_EXPR: {
        if (s->value->kind == AST_STR) return; /* docstring */
        eval(E, env, s->value);
        return;
    }
    case AST_ASSIGN: {
        Value *v = eval(E, env, s->value);
        for (int i = 0; i < s->ntargets; i++) assign(E, env, s->targets[i], v, s->loc);
        return;
    }
    case AST_AUGASSIGN: {
        const AstExpr *t = s->target;
        Value *rhs = eval(E, env, s->value);
        if (t->kind == AST_SUBSCRIPT) {
            Value *dst = subscript(E, env, t);
            if (dst->kind != V_ACCESS)
                elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "augmented assignment needs one element");
            emit_store(E, dst->buf, dst->idx, binop(E, s->op, dst, rhs, s->loc), s->loc);
            return;
        }
        if (t->kind != AST_NAME)
            elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "this augmented assignment target is not supported");
        Value *old = env_lookup(env, t->name);
        if (!old) elab_fail(E, TS_ERR_NAME, t->loc, "name '%s' is not defined", t->name);
        assign(E, env, t, binop(E, s->op, old, rhs, s->loc), s->loc);
        return;
    }
    case AST_ANNASSIGN: {
        if (!s->value) {
            /* Eager style: `A: T.Tensor((M, K), dtype)` declares parameter A. */
            Value *ann = eval(E, env, s->annot);
            if (!E->eager || s->target->kind != AST_NAME || ann->kind != V_TENSORTY || E->cur)
                elab_fail(E, TS_ERR_UNSUPPORTED, s->loc,
                          "an annotation without a value declares a tensor parameter only in an eager-style "
                          "@tilelang.jit function, before its T.Kernel");
            Value *bv = val_new(E, V_BUFFER, s->loc);
            bv->buf = add_tensor_param(E, s->target->name, ann, false, s->loc);
            env_set(E, env, s->target->name, bv);
            return;
        }
        Value *v = eval(E, env, s->value);
        Value *ann = eval(E, env, s->annot);
        if (ann->kind == V_DTYPE && (val_is_const(v) || val_is_symbolic(v)) && E->in_kernel) {
            IrExpr *e = val_is_const(v) ? adapt_literal(E, v, ann->dt, s->loc) : val_to_expr(E, v, s->loc);
            if (e->dt != ann->dt) e = ir_cast(E->a, ann->dt, e);
            v = val_expr(E, e, s->loc);
        }
        assign(E, env, s->target, v, s->loc);
        return;
    }
    case AST_IF: exec_if(E, env, s); return;
    case AST_FOR: exec_for(E, env, s); return;
    case AST_WHILE: exec_while(E, env, s); return;
    case AST_WITH: exec_with(E, env, s); return;
    case AST_DEF: {
        Value *v = val_new(E, V_FUNC, s->loc);
        v->fn = make_func(E, env, s);
        env_set(E, env, s->name, v);
        return;
    }
    case AST_CLASS: {
        Value *v = val_new(E, V_OPAQUE, s->loc);
        v->s = ts_sprintf(E->a, "class '%s' is outside the supported subset", s->name);
        env_set(E, env, s->name, v);
        return;
    }
    case AST_RETURN:
        E->retval = s->value ? eval(E, env, s->value) : val_none(E, s->loc);
        E->returning = true;
        return;
    case AST_PASS: case AST_GLOBAL: case AST_DEL: return;
    case AST_BREAK:
    case AST_CONTINUE:
        if (E->ir_loops > 0) {
            emit(E, ir_stmt(E->a, s->kind == AST_BREAK ? IR_S_BREAK : IR_S_CONTINUE, s->loc));
            return;
        }
        if (s->kind == AST_BREAK) E->breaking = true;
        else E->continuing = true;
        return;
    case AST_IMPORT: {
        const char *bind;
        Value *m;
        if (s->member) {
            m = module_value(E, ts_sprintf(E->a, "%s.%s", s->module, s->member), s->loc);
            bind = s->alias ? s->alias : s->member;
        } else {
            m = module_value(E, s->module, s->loc);
            if (s->alias) bind = s->alias;
            else {
                /* `import a.b` binds `a` */
                const char *dot = strchr(s->module, '.');
                bind = dot ? ts_strndup(E->a, s->module, (size_t)(dot - s->module)) : s->module;
                if (dot) m = module_value(E, bind, s->loc);
            }
        }
        if (!strcmp(bind, "*")) return;
        env_set(E, env, bind, m);
        return;
    }
    case AST_ASSERT: {
        Value *c = eval(E, env, s->cond);
        if (val_is_symbolic(c)) return; /* a run-time assert: not checked on the C target */
        if (!val_truthy(E, c, s->loc)) {
            Value *msg = s->value ? eval(E, env, s->value) : NULL;
            elab_fail(E, TS_ERR_PARAM, s->loc, "assertion failed%s%s",
                      msg && msg->kind == V_STR ? ": " : "", msg && msg->kind == V_STR ? msg->s : "");
        }
        return;
    }
    case AST_RAISE:
        elab_fail(E, TS_ERR_PARAM, s->loc, "the kernel factory raised an exception");
    case AST_TRY: exec_block(E, env, &s->body); return;
    case AST_UNPARSED:
        ts_buf_puts(&E->d->msg, s->error ? s->error : "syntax error\n");
        ts_rethrow(E->d, s->error_status ? s->error_status : TS_ERR_SYNTAX);
    }
}

static void exec_block(Elab *E, Env *env, const AstBlock *b) {
    for (int i = 0; i < b->n; i++) {
        exec_stmt(E, env, b->v[i]);
        if (E->returning || E->breaking || E->continuing) return;
    }
}

/* ---- module level --------------------------------------------------------------------------------- */

/* Top-level statements run as the module would, except that statements
 * whose evaluation fails (host code using torch, argparse...) leave their
 * names bound to an opaque value carrying the error.  `if __name__ ==
 * "__main__":` blocks are skipped. */
static void exec_module(Elab *E, const AstModule *m) {
    for (int i = 0; i < m->body.n; i++) {
        const AstStmt *s = m->body.v[i];
        if (s->kind == AST_IF || s->kind == AST_EXPR || s->kind == AST_FOR || s->kind == AST_WHILE ||
            s->kind == AST_WITH || s->kind == AST_TRY || s->kind == AST_RETURN || s->kind == AST_RAISE)
            continue;
        if (s->kind == AST_UNPARSED) {
            if (s->name) {
                Value *v = val_new(E, V_OPAQUE, s->loc);
                v->s = ts_sprintf(E->a, "'%s' could not be parsed:\n%s", s->name, s->error ? s->error : "");
                v->i = s->error_status ? s->error_status : TS_ERR_SYNTAX;
                v->unparsed = s; /* as the entry, it reports the parser's own text */
                env_set(E, E->globals, s->name, v);
            }
            continue;
        }
        size_t msg_len = E->d->msg.n;
        jmp_buf jb;
        jmp_buf *volatile saved = NULL;
        if (ts_try(E->d, &jb, &saved)) {
            ts_try_end(E->d, saved);
            /* Remember why, drop the message: it matters only if used. */
            const char *why = ts_strdup(E->a, ts_buf_str(&E->d->msg) + msg_len);
            E->d->msg.n = msg_len;
            if (E->d->msg.s) E->d->msg.s[msg_len] = 0;
            E->steps = 0;
            E->cur = NULL;
            E->in_kernel = 0;
            E->depth = 0;
            E->returning = E->breaking = E->continuing = false;
            for (int t = 0; t < s->ntargets; t++)
                if (s->targets[t] && s->targets[t]->kind == AST_NAME) {
                    Value *v = val_new(E, V_OPAQUE, s->loc);
                    v->s = ts_sprintf(E->a, "'%s' is defined by code this compiler cannot run:\n%s",
                                      s->targets[t]->name, why);
                    env_set(E, E->globals, s->targets[t]->name, v);
                }
            continue;
        }
        exec_stmt(E, E->globals, s);
        ts_try_end(E->d, saved);
    }
}

/* A -D value: int, float, True/False/None, or a string (dtype names stay
 * strings; anything expecting a dtype accepts them). */
Value *define_value(Elab *E, const char *text) {
    char *end;
    if (!*text) return val_str(E, text, (TsLoc){0});
    long long i = strtoll(text, &end, 0);
    if (!*end) return val_int(E, i, (TsLoc){0});
    double f = strtod(text, &end);
    if (!*end) return val_float(E, f, (TsLoc){0});
    if (!strcmp(text, "True") || !strcmp(text, "true")) return val_bool(E, true, (TsLoc){0});
    if (!strcmp(text, "False") || !strcmp(text, "false")) return val_bool(E, false, (TsLoc){0});
    if (!strcmp(text, "None")) return val_none(E, (TsLoc){0});
    return val_str(E, ts_strdup(E->a, text), (TsLoc){0});
}

IrBuffer *add_tensor_param(Elab *E, const char *name, Value *ann, bool is_output, TsLoc loc) {
    IrKernel *k = E->k;
    for (int i = 0; i < k->params.n; i++)
        if (!strcmp(k->params.v[i].name, name))
            elab_fail(E, TS_ERR_TYPE, loc, "tensor parameter '%s' is declared twice", name);
    IrExpr **shape = TS_NEWN(E->a, IrExpr *, ann->n ? ann->n : 1);
    for (int d = 0; d < ann->n; d++) {
        shape[d] = val_to_expr(E, ann->items[d], loc);
        if (!ts_dtype_is_int(shape[d]->dt))
            elab_fail(E, TS_ERR_TYPE, loc, "tensor extents must be integers");
    }
    IrBuffer *b = ir_buffer(k, name, ann->dt, IR_SCOPE_GLOBAL, ann->n, shape, loc);
    b->param = k->params.n;
    IrParam ip = {name, b, NULL, is_output};
    ts_vec_push(E->a, k->params, ip);
    return b;
}

/* Apply @tilelang.jit(out_idx=...) to the kernel's parameters. */
static void mark_outputs(Elab *E) {
    IrKernel *k = E->k;
    if (!E->out_idx) return;
    int n;
    Value **items = val_items(E, E->out_idx, &n);
    for (int i = 0; i < n; i++) {
        int64_t j = val_to_int(E, items[i], E->out_idx->loc, "an out_idx entry");
        if (j < 0) j += k->params.n;
        if (j < 0 || j >= k->params.n)
            elab_fail(E, TS_ERR_PARAM, E->out_idx->loc, "out_idx %lld is out of range (%d parameters)",
                      (long long)val_to_int(E, items[i], E->out_idx->loc, "an out_idx entry"), k->params.n);
        k->params.v[j].is_output = 1;
    }
}

static bool block_has(const AstBlock *b, bool (*pred)(const AstStmt *)) {
    for (int i = 0; i < b->n; i++) {
        const AstStmt *s = b->v[i];
        if (pred(s)) return true;
        if (s->kind != AST_DEF && s->kind != AST_CLASS &&
            (block_has(&s->body, pred) || block_has(&s->orelse, pred)))
            return true;
    }
    return false;
}

static bool is_prim_func_def(const AstStmt *s) {
    if (s->kind != AST_DEF) return false;
    for (int d = 0; d < s->ndecorators; d++) {
        const AstExpr *e = s->decorators[d];
        if (e->kind == AST_CALL) e = e->a;
        if (e->kind == AST_ATTR && !strcmp(e->name, "prim_func")) return true;
    }
    return false;
}

static bool is_kernel_with(const AstStmt *s) {
    if (s->kind != AST_WITH || s->ntargets < 1 || !s->items[0]) return false;
    const AstExpr *e = s->items[0];
    if (e->kind == AST_CALL) e = e->a;
    return e->kind == AST_ATTR && !strcmp(e->name, "Kernel");
}

/*
 * Eager style (TileLang's newer @tilelang.jit form): the jit function is the
 * kernel.  Its parameters are compile-time values (from -D or defaults),
 * except those declared as tensors by `A: T.Tensor(shape, dtype)` in the
 * body; `T.const("M, N")` names shape values (from -D, else run-time shape
 * variables); `T.empty(shape, dtype)` creates an output.  Kernel parameters:
 * the tensor parameters in signature order, then the T.empty outputs.
 */
static void elab_eager(Elab *E, Func *fn, const TsDefine *defs, int ndefs, bool lenient) {
    const AstStmt *def = fn->def;
    IrKernel *k = E->k;
    k->name = def->name;
    Env *env = env_new(E, fn->closure);
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        bool tensor = false;
        for (int i = 0; i < def->body.n; i++) {
            const AstStmt *s = def->body.v[i];
            if (s->kind == AST_ANNASSIGN && !s->value && s->target->kind == AST_NAME &&
                !strcmp(s->target->name, pa->name))
                tensor = true;
        }
        const TsDefine *dv = NULL;
        for (int i = 0; i < ndefs; i++)
            if (!strcmp(defs[i].name, pa->name)) dv = &defs[i];
        Value *v;
        if (tensor) {
            v = val_new(E, V_OPAQUE, pa->loc);
            v->s = ts_sprintf(E->a, "tensor parameter '%s' is used before its `%s: T.Tensor(...)` annotation",
                              pa->name, pa->name);
        } else if (dv) {
            v = define_value(E, dv->value);
        } else if (pa->dflt) {
            v = eval(E, fn->closure, pa->dflt);
        } else if (pa->star) {
            v = val_seq(E, pa->star == 1 ? V_TUPLE : V_DICT, NULL, 0, pa->loc);
        } else {
            ts_diag_add(E->d, pa->loc, "error", "missing compile-time value for '%s' of '%s': pass -D %s=VALUE",
                        pa->name, def->name, pa->name);
            ts_rethrow(E->d, TS_ERR_PARAM);
        }
        env_set(E, env, pa->name, v);
    }
    /* -D names that are neither parameters nor T.const names are errors */
    (void)lenient;
    E->eager = true;
    E->defs = defs;
    E->ndefs = ndefs;
    E->in_kernel++;
    E->cur = NULL;
    exec_block(E, env, &def->body);
    E->in_kernel--;
    if (!E->have_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, def->loc, "'%s' has no `with T.Kernel(...)`", def->name);
    /* reorder: signature tensors first, then outputs, keeping each group's order */
    TS_VEC(IrParam) ordered = {0};
    for (int p = 0; p < def->nparams; p++)
        for (int i = 0; i < k->params.n; i++)
            if (!k->params.v[i].is_output && !strcmp(k->params.v[i].name, def->params[p].name))
                ts_vec_push(E->a, ordered, k->params.v[i]);
    for (int i = 0; i < k->params.n; i++) {
        bool in_sig = false;
        for (int p = 0; p < def->nparams; p++)
            in_sig |= !k->params.v[i].is_output && !strcmp(k->params.v[i].name, def->params[p].name);
        if (!in_sig) ts_vec_push(E->a, ordered, k->params.v[i]);
    }
    k->params.n = 0;
    for (int i = 0; i < ordered.n; i++) {
        IrParam ip = ordered.v[i];
        if (ip.buf) ip.buf->param = i;
        if (ip.var) ip.var->axis = i;
        ts_vec_push(E->a, k->params, ip);
    }
    mark_outputs(E);
}

/* Elaborate a @T.prim_func into E->k: parameters first, then the body. */
static void elab_prim_func(Elab *E, Func *fn) {
    const AstStmt *def = fn->def;
    IrKernel *k = E->k;
    k->name = def->name;
    Env *env = env_new(E, fn->closure);
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        if (!pa->annot)
            elab_fail(E, TS_ERR_TYPE, pa->loc,
                      "parameter '%s' of a @T.prim_func needs an annotation such as T.Tensor((M, N), \"float16\")",
                      pa->name);
        Value *ann = eval(E, fn->closure, pa->annot);
        IrParam ip = {pa->name, NULL, NULL, 0};
        if (ann->kind == V_TENSORTY) {
            Value *bv = val_new(E, V_BUFFER, pa->loc);
            bv->buf = add_tensor_param(E, pa->name, ann, false, pa->annot->loc);
            env_set(E, env, pa->name, bv);
            continue;
        } else if (ann->kind == V_DTYPE) {
            IrVar *v = ir_var(k, pa->name, ann->dt, IR_VAR_SCALAR);
            v->axis = k->params.n;
            ip.var = v;
            env_set(E, env, pa->name, val_expr(E, ir_var_ref(E->a, v), pa->loc));
        } else {
            elab_fail(E, TS_ERR_TYPE, pa->annot->loc,
                      "parameter annotation must be T.Tensor(shape, dtype) or a dtype, got %s",
                      val_kind_name(ann));
        }
        ts_vec_push(E->a, k->params, ip);
    }
    mark_outputs(E);
    E->in_kernel++;
    E->cur = NULL;
    exec_block(E, env, &def->body);
    E->in_kernel--;
    if (!E->have_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, def->loc, "@T.prim_func '%s' has no `with T.Kernel(...)`", def->name);
}

IrKernel *ts_elaborate(TsDiag *d, TsArena *a, const AstModule *m, const char *entry,
                       const TsDefine *defs, int ndefs, bool lenient_defines) {
    Elab E0 = {0}, *E = &E0;
    E->d = d;
    E->a = a;
    E->mod = m;
    E->globals = env_new(E, NULL);
    E->k = ir_kernel_new(a, entry);
    E->k->body = ir_seq(a);
    exec_module(E, m);

    TsLoc none = {0};
    Value *ev = env_lookup(E->globals, entry);
    if (!ev || ev->kind == V_OPAQUE) {
        if (ev && ev->kind == V_OPAQUE && ev->unparsed) {
            const AstStmt *u = ev->unparsed;
            ts_buf_puts(&d->msg, u->error ? u->error : "syntax error\n");
            ts_rethrow(d, (TsStatus)ev->i);
        }
        if (ev && ev->kind == V_OPAQUE) fail_opaque(E, ev, ev->loc);
        ts_buf_printf(&d->msg, "error: no function '%s' in %s; defined functions:", entry, m->src->name);
        for (int i = 0; i < E->globals->vars.n; i++)
            if (E->globals->vars.v[i].v->kind == V_FUNC)
                ts_buf_printf(&d->msg, " %s", E->globals->vars.v[i].name);
        ts_buf_puts(&d->msg, "\n");
        ts_rethrow(d, TS_ERR_NAME);
    }
    if (ev->kind != V_FUNC)
        elab_fail(E, TS_ERR_NAME, ev->loc, "'%s' is a %s, not a kernel function", entry, val_kind_name(ev));
    Func *fn = ev->fn;
    if (fn->kind == FN_PRIM) {
        if (ndefs && !lenient_defines)
            elab_fail(E, TS_ERR_PARAM, fn->def->loc,
                      "'%s' is a @T.prim_func and takes no -D values; -D %s was given", entry, defs[0].name);
        elab_prim_func(E, fn);
        return E->k;
    }
    if (fn->kind == FN_MACRO)
        elab_fail(E, TS_ERR_NAME, fn->def->loc, "'%s' is a @T.macro, not a kernel factory", entry);
    const AstStmt *def = fn->def;
    if (!block_has(&def->body, is_prim_func_def) && block_has(&def->body, is_kernel_with)) {
        E->out_idx = fn->out_idx;
        elab_eager(E, fn, defs, ndefs, lenient_defines);
        return E->k;
    }
    /* A factory: bind -D values to its parameters. */
    TS_VEC(const char *) kw = {0};
    TS_VEC(Value *) kwv = {0};
    for (int i = 0; i < ndefs; i++) {
        int found = 0;
        for (int p = 0; p < def->nparams; p++)
            if (!strcmp(def->params[p].name, defs[i].name) && !def->params[p].star) found = 1;
        if (!found && lenient_defines) continue;
        if (!found) {
            ts_diag_add(d, def->loc, "error", "-D %s: '%s' has no parameter named '%s'", defs[i].name,
                        entry, defs[i].name);
            ts_rethrow(d, TS_ERR_PARAM);
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(defs[j].name, defs[i].name))
                elab_fail(E, TS_ERR_PARAM, none, "-D %s given twice", defs[i].name);
        ts_vec_push(a, kw, defs[i].name);
        ts_vec_push(a, kwv, define_value(E, defs[i].value));
    }
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        if (pa->star || pa->dflt) continue;
        int given = 0;
        for (int i = 0; i < ndefs; i++) given |= !strcmp(defs[i].name, pa->name);
        if (!given) {
            ts_diag_add(d, pa->loc, "error", "missing compile-time value for '%s' of '%s': pass -D %s=VALUE",
                        pa->name, entry, pa->name);
            ts_rethrow(d, TS_ERR_PARAM);
        }
    }
    E->out_idx = fn->out_idx;
    Value *r = call_user(E, fn, NULL, 0, kw.v, kwv.v, kw.n, def->loc);
    /* A factory may return another factory (the autotuning idiom
     * `def matmul(M, N, K): def kernel(block_M, ...): ...; return kernel`):
     * call it with the -D values named after its parameters. */
    if (r->kind == V_FUNC && r->fn->kind == FN_PLAIN) {
        const AstStmt *inner = r->fn->def;
        TS_VEC(const char *) kw2 = {0};
        TS_VEC(Value *) kwv2 = {0};
        for (int i = 0; i < ndefs; i++)
            for (int p = 0; p < inner->nparams; p++)
                if (!strcmp(inner->params[p].name, defs[i].name) && !inner->params[p].star) {
                    ts_vec_push(a, kw2, defs[i].name);
                    ts_vec_push(a, kwv2, define_value(E, defs[i].value));
                }
        if (r->fn->out_idx && !E->out_idx) E->out_idx = r->fn->out_idx;
        r = call_user(E, r->fn, NULL, 0, kw2.v, kwv2.v, kw2.n, inner->loc);
    }
    if (r->kind != V_FUNC || r->fn->kind != FN_PRIM)
        elab_fail(E, TS_ERR_TYPE, def->loc, "'%s' must return a @T.prim_func, but returned a %s", entry,
                  r->kind == V_FUNC ? "plain function" : val_kind_name(r));
    if (r->fn->out_idx && !E->out_idx) E->out_idx = r->fn->out_idx;
    elab_prim_func(E, r->fn);
    return E->k;
}
