/*
 * value.c — the elaborator's values and scopes: constructors, the
 * conversions every builtin and statement uses (to an IR expression, an
 * int, a dtype, a region...), each failing with a clear error, and the
 * environments names are bound in.
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
        [V_OPAQUE] = "unsupported value", [V_SCHED] = "T.PersistentTileScheduler", [V_PTR] = "pointer (T.access_ptr)"};
    return names[v->kind];
}

bool val_is_const(const Value *v) {
    return v->kind == V_BOOL || v->kind == V_INT || v->kind == V_FLOAT;
}

bool val_is_symbolic(const Value *v) {
    return v->kind == V_EXPR || v->kind == V_ACCESS ||
           (v->kind == V_BUFFER && v->buf->scope == IR_SCOPE_VAR);
}

/* An opaque value's i is the status to report (0: unsupported construct). */
TS_NORETURN void fail_opaque(Elab *E, Value *v, TsLoc loc) {
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
    case V_ACCESS: {
        IrExpr *e = ir_load(E->a, v->buf, v->idx, v->buf->ndim);
        e->loc = v->loc.src ? v->loc : loc; /* bounds-check reports name the subscript */
        return e;
    }
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

/* int(d) as Python computes it, an error where the result needs more than
 * 64 bits (a C cast would be undefined there) or d is inf/nan. */
int64_t val_float_to_int(Elab *E, double d, TsLoc loc) {
    if (isnan(d)) elab_fail(E, TS_ERR_TYPE, loc, "cannot convert float NaN to integer");
    /* 2^63 is exact as a double; every double below it truncates into range */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        elab_fail(E, TS_ERR_TYPE, loc, "the float %g does not fit in a 64-bit integer", d);
    return (int64_t)d;
}

bool val_truthy(Elab *E, Value *v, TsLoc loc) {
    switch (v->kind) {
    case V_NONE: return false;
    case V_BOOL: return v->b;
    case V_INT: return v->i != 0;
    case V_FLOAT: return v->f != 0;
    case V_STR:
        if (v->b)
            elab_fail(E, TS_ERR_PARAM, loc,
                      "the -D value '%s' is used as a condition: give True, False or a number", v->s);
        return v->s[0] != 0;
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

#define ENV_INDEX_MIN 16 /* scopes smaller than this are searched linearly */

static size_t name_hash(const char *name) { return (size_t)ts_hash64(name, strlen(name), 0); }

/* The binding of name in env itself (not its parents), or -1. */
static int env_find(const Env *env, const char *name) {
    if (env->nslots) {
        size_t mask = (size_t)env->nslots - 1;
        for (size_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
            int k = env->slots[i];
            if (!k) return -1;
            if (!strcmp(env->vars.v[k - 1].name, name)) return k - 1;
        }
    }
    for (int i = env->vars.n - 1; i >= 0; i--)
        if (!strcmp(env->vars.v[i].name, name)) return i;
    return -1;
}

static void env_index_put(Env *env, int k) {
    size_t mask = (size_t)env->nslots - 1;
    size_t i = name_hash(env->vars.v[k].name) & mask;
    while (env->slots[i]) i = (i + 1) & mask;
    env->slots[i] = k + 1;
}

Value *env_lookup(Env *env, const char *name) {
    for (; env; env = env->parent) {
        int k = env_find(env, name);
        if (k >= 0) return env->vars.v[k].v;
    }
    return NULL;
}

void env_set(Elab *E, Env *env, const char *name, Value *v) {
    int k = env_find(env, name);
    if (k >= 0) {
        env->vars.v[k].v = v;
        return;
    }
    Binding b = {name, v};
    ts_vec_push(E->a, env->vars, b);
    if (env->vars.n < ENV_INDEX_MIN) return;
    if ((size_t)env->vars.n * 2 > (size_t)env->nslots) { /* (re)build at load <= 1/2 */
        int n = env->nslots ? env->nslots : 64;
        while ((size_t)env->vars.n * 2 > (size_t)n) n *= 2;
        env->slots = TS_NEWN(E->a, int, n); /* zeroed; the old index is abandoned in the arena */
        env->nslots = n;
        for (int i = 0; i < env->vars.n; i++) env_index_put(env, i);
    } else {
        env_index_put(env, env->vars.n - 1);
    }
}


/* Python's str() of a float: the shortest text that reads back the same. */
static const char *float_text(Elab *E, double f) {
    if (isnan(f)) return "nan";
    if (isinf(f)) return f > 0 ? "inf" : "-inf";
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, f);
        if (strtod(buf, NULL) == f) break;
    }
    if (!strpbrk(buf, ".en")) strcat(buf, ".0");
    return ts_sprintf(E->a, "%s", buf);
}

const char *val_text(Elab *E, const Value *v, bool repr) {
    switch (v->kind) {
    case V_STR: return repr ? ts_sprintf(E->a, "'%s'", v->s) : v->s;
    case V_INT: return ts_sprintf(E->a, "%lld", (long long)v->i);
    case V_BOOL: return v->b ? "True" : "False";
    case V_NONE: return "None";
    case V_FLOAT: return float_text(E, v->f);
    case V_DTYPE: return repr ? ts_sprintf(E->a, "'%s'", ts_dtype_name(v->dt)) : ts_dtype_name(v->dt);
    case V_TUPLE:
    case V_LIST: {
        TsBuf b = {0};
        ts_buf_puts(&b, v->kind == V_TUPLE ? "(" : "[");
        for (int i = 0; i < v->n; i++) {
            const char *t = val_text(E, v->items[i], true);
            if (!t) {
                ts_buf_free(&b);
                return NULL;
            }
            ts_buf_printf(&b, "%s%s", i ? ", " : "", t);
        }
        ts_buf_puts(&b, v->kind == V_TUPLE ? (v->n == 1 ? ",)" : ")") : "]");
        const char *r = ts_sprintf(E->a, "%s", ts_buf_str(&b));
        ts_buf_free(&b);
        return r;
    }
    default: return NULL;
    }
}
