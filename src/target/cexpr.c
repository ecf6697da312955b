/*
 * cexpr.c — IR expressions as C-family source, for the C and CUDA targets.
 *
 * The two code generators used to carry their own copy of every function
 * here, word for word but for type spellings, intrinsic names and error
 * prefixes.  Those differences now live in a TsCxDialect (cexpr.h), and
 * the few expressions whose meaning really depends on the target (thread
 * and rank variables, loads that must be atomic, volatile or refused) go
 * through its hooks.  The printed text is what each target printed
 * before, byte for byte.  Writes are dropped while TsCxGen.o is NULL, so
 * the CUDA target's dry runs (barrier analysis) cost no output.
 */
#include "target/cexpr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void out(TsCxGen *x, const char *s) {
    if (x->o) ts_buf_puts(x->o, s);
}
TS_PRINTF(2, 3) static void outf(TsCxGen *x, const char *fmt, ...) {
    if (!x->o) return;
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(x->o, fmt, ap);
    va_end(ap);
}

const char *ts_cx_name(TsArena *a, const char *name, int id) {
    if (!name || !*name) name = "v";
    size_t n = strlen(name);
    char *s = ts_alloc(a, n + 24);
    size_t j = 0;
    if (name[0] >= '0' && name[0] <= '9') s[j++] = 'v';
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        s[j++] = ok ? c : '_';
    }
    snprintf(s + j, 24, "_%d", id);
    return s;
}

/* ---- types ------------------------------------------------------------------ */

char ts_cx_cat(TsCxGen *x, TsDType dt, TsLoc loc) {
    switch (dt) {
    case TS_BOOL: return 'b';
    case TS_INT8: case TS_UINT8: case TS_INT16: case TS_UINT16: case TS_INT32: case TS_INT64:
        return 'i';
    case TS_UINT32: return 'u';
    case TS_UINT64: return 'U';
    case TS_FLOAT16: case TS_BFLOAT16: case TS_FLOAT32: case TS_FLOAT8_E4M3: case TS_FLOAT8_E5M2:
        return 'f';
    case TS_FLOAT64: return 'd';
    default: break;
    }
    ts_fail_at(x->d, TS_ERR_INTERNAL, loc, "%s: expression without a valid dtype (%d)", x->dl->who, (int)dt);
}

const char *ts_cx_cat_ctype(const TsCxDialect *dl, char c) {
    switch (c) {
    case 'b': return "bool";
    case 'i': return dl->i64;
    case 'u': return dl->u32;
    case 'U': return dl->u64;
    case 'f': return "float";
    default: return "double";
    }
}

const char *ts_cx_compute_ctype(TsCxGen *x, TsDType dt, TsLoc loc) {
    return ts_cx_cat_ctype(x->dl, ts_cx_cat(x, dt, loc));
}

/* The category two operands are computed in. */
static char join_cat(char a, char b) {
    static const char order[] = "biuUfd";
    return strchr(order, a) > strchr(order, b) ? a : b;
}

const char *ts_cx_storage(const TsCxDialect *dl, TsDType dt) {
    return dl->storage ? dl->storage[dt] : ts_dtype_info(dt)->ctype;
}

const char *ts_cx_load_conv(TsCxGen *x, TsDType dt) {
    switch (dt) {
    case TS_FLOAT16: return "ts_h2f(";
    case TS_BFLOAT16: return "ts_bf2f(";
    case TS_FLOAT8_E4M3: return "ts_e4m3_2f(";
    case TS_FLOAT8_E5M2: return "ts_e5m2_2f(";
    case TS_BOOL: return "(0 != ";
    case TS_UINT32: case TS_UINT64: case TS_FLOAT32: case TS_FLOAT64: return "(";
    default: return ts_sprintf(x->a, "(%s)(", x->dl->i64);
    }
}

/* The stored bits of an element of dtype sd as the unsigned integer of its
 * width (IrExpr load.bits): the text before and after the element's lvalue.
 * Integer storage (every dtype but float32/float64: float16, bfloat16 and
 * the fp8 types are stored as integers) is converted to the unsigned type;
 * a float's bits come through the dialect's bitcast.  No float arithmetic
 * touches the value, so a NaN's payload is kept. */
void ts_cx_bits_load(TsCxGen *x, TsDType sd, const char **open, const char **close) {
    TsDType ud = ir_bits_dtype(sd);
    const char *const(*bc)[2] = x->dl->bitcast;
    const char *conv = ts_cx_load_conv(x, ud);
    if ((sd == TS_FLOAT32 || sd == TS_FLOAT64) && bc) {
        int k = sd == TS_FLOAT32 ? 0 : 2;
        *open = ts_sprintf(x->a, "%s%s", conv, bc[k][0]);
        *close = ts_sprintf(x->a, "%s)", bc[k][1]);
    } else {
        *open = ts_sprintf(x->a, "%s(%s)(", conv, ts_cx_storage(x->dl, ud));
        *close = "))";
    }
}

/* The store of bits (an unsigned integer of sd's width: IrStmt store.bits)
 * into an element of dtype sd: the text before and after the value. */
void ts_cx_bits_store(TsCxGen *x, TsDType sd, const char **open, const char **close) {
    TsDType ud = ir_bits_dtype(sd);
    const char *const(*bc)[2] = x->dl->bitcast;
    if ((sd == TS_FLOAT32 || sd == TS_FLOAT64) && bc) {
        int k = sd == TS_FLOAT32 ? 1 : 3;
        *open = ts_sprintf(x->a, "%s(%s)(", bc[k][0], ts_cx_storage(x->dl, ud));
        *close = ts_sprintf(x->a, ")%s", bc[k][1]);
    } else {
        *open = ts_sprintf(x->a, "(%s)((%s)(", ts_cx_storage(x->dl, sd), ts_cx_storage(x->dl, ud));
        *close = "))";
    }
}

const char *ts_cx_store_conv(TsCxGen *x, TsDType dt) {
    switch (dt) {
    case TS_FLOAT16: return "ts_f2h((float)(";
    case TS_BFLOAT16: return "ts_f2bf((float)(";
    case TS_FLOAT8_E4M3: return "ts_f2e4m3((float)(";
    case TS_FLOAT8_E5M2: return "ts_f2e5m2((float)(";
    case TS_BOOL: return ts_sprintf(x->a, "(%s)(0 != (", ts_cx_storage(x->dl, TS_UINT8));
    case TS_FLOAT32: return "(float)((";
    case TS_INT8: case TS_UINT8: case TS_INT16: case TS_UINT16: case TS_INT32: case TS_UINT32:
    case TS_INT64: case TS_UINT64:
        return ts_sprintf(x->a, "(%s)((", ts_cx_storage(x->dl, dt));
    default: return "(double)((";
    }
}

/* ---- expressions ----------------------------------------------------------- */

/* The suffix of a signed integer literal of the compute type. */
static const char *sfx(const TsCxGen *x) { return x->dl->int_sfx ? x->dl->int_sfx : "LL"; }

static void emit_int_lit(TsCxGen *x, int64_t v, TsDType dt) {
    char c = dt == TS_DTYPE_NONE ? 'i' : ts_cx_cat(x, dt, (TsLoc){0});
    if (c == 'b') {
        out(x, v ? "true" : "false");
    } else if (c == 'u' || c == 'U') {
        outf(x, "%lluu%s", (unsigned long long)(uint64_t)v, c == 'U' ? "ll" : "");
    } else if (c == 'f' || c == 'd') {
        outf(x, "%lld.0%s", (long long)v, c == 'f' ? "f" : "");
    } else if (v == INT64_MIN) {
        out(x, "(-9223372036854775807LL - 1)");
    } else if (v < 0) {
        outf(x, "(%lld%s)", (long long)v, sfx(x));
    } else {
        outf(x, "%lld%s", (long long)v, sfx(x));
    }
}

static void emit_float_lit(TsCxGen *x, double v, TsDType dt) {
    char c = ts_cx_cat(x, dt, (TsLoc){0});
    if (c != 'f' && c != 'd') {
        emit_int_lit(x, (int64_t)v, dt); /* a float constant with an integer dtype: truncate */
        return;
    }
    if (v != v) {
        out(x, c == 'f' ? x->dl->nan_f : x->dl->nan_d);
        return;
    }
    if (isinf(v)) {
        outf(x, "%s%s)", v < 0 ? "(-" : "(", c == 'f' ? x->dl->inf_f : x->dl->inf_d);
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, c == 'f' ? "%.9g" : "%.17g", c == 'f' ? (double)(float)v : v);
    if (!strpbrk(tmp, ".eE")) strcat(tmp, ".0");
    outf(x, "%s%s%s%s", tmp[0] == '-' ? "(" : "", tmp, c == 'f' ? "f" : "", tmp[0] == '-' ? ")" : "");
}

void ts_cx_string(TsCxGen *x, const char *s) {
    out(x, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\' || c == '?') outf(x, "\\%c", c);
        else if (c < 32 || c >= 127) outf(x, "\\%03o", c);
        else if (x->o) ts_buf_putn(x->o, (const char *)&c, 1); /* '%' too: never used as a format */
    }
    out(x, "\"");
}

static void emit_var(TsCxGen *x, const IrExpr *e) {
    const IrVar *v = e->var;
    if (x->dl->var && x->dl->var(x, e)) return;
    switch (v->kind) {
    case IR_VAR_BLOCK_IDX:
        if (v->axis < 0 || v->axis > 2)
            ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: block index axis %d", x->dl->who, v->axis);
        outf(x, "ts_bidx%d", v->axis);
        return;
    case IR_VAR_THREAD_IDX:
        ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: thread index '%s'", x->dl->who, v->name);
    case IR_VAR_RANK: out(x, v->axis == 2 ? x->dl->rpn : v->axis == 1 ? x->dl->nranks : x->dl->rank); return;
    case IR_VAR_SHAPE: {
        int found = 0;
        for (int i = 0; i < x->k->shape_vars.n; i++) found |= x->k->shape_vars.v[i] == v;
        if (!found)
            ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: shape variable '%s' is not in the kernel's shape_vars",
                       x->dl->who, v->name);
        break;
    }
    case IR_VAR_SCALAR: {
        int found = 0;
        for (int i = 0; i < x->k->params.n; i++) found |= x->k->params.v[i].var == v;
        if (!found)
            ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: scalar '%s' is not a kernel parameter", x->dl->who,
                       v->name);
        break;
    }
    default: break;
    }
    out(x, ts_cx_name(x->a, v->name, v->id));
}

void ts_cx_index(TsCxGen *x, const IrBuffer *b, const char *name, int global, const int64_t *strides,
                 IrExpr *const *idx, int nidx, TsLoc loc) {
    if (nidx != b->ndim && !(b->ndim == 0 && nidx == 1))
        ts_fail_at(x->d, TS_ERR_INTERNAL, loc, "%s: %d indices for %d-dimensional buffer '%s'", x->dl->who, nidx,
                   b->ndim, b->name);
    int64_t konst = 0, c;
    int terms = 0;
    for (int i = 0; i < b->ndim; i++) {
        if (!global && ir_is_const_int(idx[i], &c)) {
            int64_t t;
            /* a constant index so large that its offset overflows (a
             * fuzzer find: t[9223372036854775807, 0] was signed overflow
             * here, undefined behaviour in the compiler) */
            if (__builtin_mul_overflow(c, strides[i], &t) || __builtin_add_overflow(konst, t, &konst))
                ts_fail_at(x->d, TS_ERR_TYPE, loc, "index %lld of buffer '%s' is out of range (the offset overflows 64 bits)",
                           (long long)c, b->name);
            continue;
        }
        if (terms++) out(x, " + ");
        if (ts_cx_cat(x, idx[i]->dt, idx[i]->loc) == 'i') {
            ts_cx_expr(x, idx[i]);
        } else {
            outf(x, "(%s)(", x->dl->i64);
            ts_cx_expr(x, idx[i]);
            out(x, ")");
        }
        if (global) outf(x, " * %s_s%d", name, i);
        else if (strides[i] != 1) outf(x, " * %lld%s", (long long)strides[i], sfx(x));
    }
    if (!terms) outf(x, "%lld", (long long)konst);
    else if (konst) outf(x, " + %lld%s", (long long)konst, sfx(x));
}

static void emit_bin(TsCxGen *x, const IrExpr *e) {
    const IrExpr *l = e->bin.a, *r = e->bin.b;
    char c = join_cat(ts_cx_cat(x, l->dt, l->loc), ts_cx_cat(x, r->dt, r->loc));
    int fl = c == 'f' || c == 'd';
    int64_t rc;
    if (c == 'i' && (e->bin.op == IR_FLOORDIV || e->bin.op == IR_FLOORMOD) && ir_is_const_int(r, &rc) && rc > 0 &&
        rc <= ((int64_t)1 << 62) && !(rc & (rc - 1))) {
        /* by a power of two: floor division is the arithmetic shift and the
         * floor modulo the mask, for negative dividends too (two's
         * complement), so no helper call and no branches on the GPU */
        int sh = 0;
        while (((int64_t)1 << sh) < rc) sh++;
        outf(x, "((%s)(", x->dl->i64);
        ts_cx_expr(x, l);
        if (e->bin.op == IR_FLOORDIV) outf(x, ") >> %d)", sh);
        else outf(x, ") & %lld%s)", (long long)(rc - 1), sfx(x));
        return;
    }
    const char *fn = NULL, *op = NULL;
    switch (e->bin.op) {
    case IR_ADD: op = "+"; break;
    case IR_SUB: op = "-"; break;
    case IR_MUL: op = "*"; break;
    case IR_DIV: if (fl) op = c == 'f' && x->dl->fdiv_f ? NULL : "/", fn = op ? NULL : x->dl->fdiv_f; else fn = c == 'u' ? "ts_div_u" : c == 'U' ? "ts_div_U" : "ts_div_i"; break;
    case IR_FLOORDIV:
        fn = c == 'f' ? "ts_fdiv_f" : c == 'd' ? "ts_fdiv_d" : c == 'u' ? "ts_div_u" : c == 'U' ? "ts_div_U" : "ts_fdiv_i";
        break;
    case IR_FLOORMOD:
        fn = c == 'f' ? "ts_fmod_f" : c == 'd' ? "ts_fmod_d" : c == 'u' ? "ts_mod_u" : c == 'U' ? "ts_mod_U" : "ts_fmod_i";
        break;
    case IR_MIN:
        fn = c == 'f' ? "ts_min_f" : c == 'd' ? "ts_min_d" : c == 'u' ? "ts_min_u" : c == 'U' ? "ts_min_U" : "ts_min_i";
        break;
    case IR_MAX:
        fn = c == 'f' ? "ts_max_f" : c == 'd' ? "ts_max_d" : c == 'u' ? "ts_max_u" : c == 'U' ? "ts_max_U" : "ts_max_i";
        break;
    case IR_EQ: op = "=="; break;
    case IR_NE: op = "!="; break;
    case IR_LT: op = "<"; break;
    case IR_LE: op = "<="; break;
    case IR_GT: op = ">"; break;
    case IR_GE: op = ">="; break;
    case IR_AND: op = "&&"; break;
    case IR_OR: op = "||"; break;
    case IR_BITAND: op = "&"; break;
    case IR_BITOR: op = "|"; break;
    case IR_BITXOR: op = "^"; break;
    case IR_SHL: if (c == 'i' || c == 'b') fn = "ts_shl_i"; else op = "<<"; break;
    case IR_SHR: if (c == 'i' || c == 'b') fn = "ts_shr_i"; else op = ">>"; break;
    case IR_POW: fn = c == 'f' ? "powf" : c == 'd' ? "pow" : "ts_pow_i"; break;
    default: ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: binary operator %d", x->dl->who, (int)e->bin.op);
    }
    if (fl && (e->bin.op == IR_BITAND || e->bin.op == IR_BITOR || e->bin.op == IR_BITXOR ||
               e->bin.op == IR_SHL || e->bin.op == IR_SHR))
        ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: a bitwise operator on floating-point values (the elaborator "
                   "refuses it)", x->dl->who);
    if (fn && c == 'i' && x->dl->int_fn_sfx &&
        (e->bin.op == IR_DIV || e->bin.op == IR_FLOORDIV || e->bin.op == IR_FLOORMOD || e->bin.op == IR_MIN ||
         e->bin.op == IR_MAX))
        fn = ts_sprintf(x->a, "%s%s", fn, x->dl->int_fn_sfx);
    if (fn && x->dl->cast_helper_args) {
        /* operands converted to the helper's type: no ambiguous overloads */
        const char *t = ts_cx_cat_ctype(x->dl, c == 'b' ? 'i' : c);
        outf(x, "%s((%s)(", fn, t);
        ts_cx_expr(x, l);
        outf(x, "), (%s)(", t);
        ts_cx_expr(x, r);
        out(x, "))");
    } else if (fn) {
        outf(x, "%s(", fn);
        ts_cx_expr(x, l);
        out(x, ", ");
        ts_cx_expr(x, r);
        out(x, ")");
    } else {
        out(x, "(");
        ts_cx_expr(x, l);
        outf(x, " %s ", op);
        ts_cx_expr(x, r);
        out(x, ")");
    }
}

static void emit_cast(TsCxGen *x, const IrExpr *e) {
    const IrExpr *a = e->un.a;
    switch (e->dt) {
    case TS_BOOL: out(x, "(0 != ("); ts_cx_expr(x, a); out(x, "))"); return;
    case TS_FLOAT16: case TS_BFLOAT16: case TS_FLOAT8_E4M3: case TS_FLOAT8_E5M2:
        /* round through the narrow format */
        out(x, ts_cx_load_conv(x, e->dt));
        out(x, ts_cx_store_conv(x, e->dt));
        ts_cx_expr(x, a);
        out(x, ")))");
        return;
    default:
        if (ts_cx_cat(x, e->dt, e->loc) == 'i' && e->dt != TS_INT64)
            outf(x, "((%s)(%s)(", x->dl->i64, ts_cx_storage(x->dl, e->dt));
        else
            outf(x, "((%s)(", ts_cx_compute_ctype(x, e->dt, e->loc));
        ts_cx_expr(x, a);
        out(x, "))");
        return;
    }
}

/* T.reinterpret: the operand's storage bits (its store conversion, then a
 * float's bits through the dialect's bitcast), read as the result dtype's
 * storage (an integer conversion between integer types of one width keeps
 * the bits; a float's through the bitcast) and loaded as any value of that
 * dtype.  No pointer punning: the C target's bitcast is a union. */
static void emit_reinterpret(TsCxGen *x, const IrExpr *e) {
    const IrExpr *a = e->call.args[0];
    TsDType s = a->dt, d = e->dt;
    if (ts_dtype_bits(s) != ts_dtype_bits(d) || s == TS_BOOL || d == TS_BOOL || !x->dl->bitcast)
        ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: reinterpret of %s as %s", x->dl->who, ts_dtype_name(s),
                   ts_dtype_name(d));
    const char *const(*bc)[2] = x->dl->bitcast;
    int to = d == TS_FLOAT32 ? 1 : d == TS_FLOAT64 ? 3 : -1, from = s == TS_FLOAT32 ? 0 : s == TS_FLOAT64 ? 2 : -1;
    out(x, ts_cx_load_conv(x, d));
    if (to >= 0) outf(x, "%s(%s)(", bc[to][0], to == 1 ? x->dl->u32 : x->dl->u64);
    else outf(x, "((%s)(", ts_cx_storage(x->dl, d));
    if (from >= 0) out(x, bc[from][0]);
    out(x, ts_cx_store_conv(x, s));
    ts_cx_expr(x, a);
    out(x, "))");
    if (from >= 0) out(x, bc[from][1]);
    if (to >= 0) outf(x, ")%s", bc[to][1]);
    else out(x, "))");
    out(x, ")");
}

/* A warp primitive (IR_WARP_*): `ts_warp_<op>(value in its compute type,
 * int operands)`, helpers the CUDA target defines (target/cuda/comm_cuda.c:
 * __shfl_*_sync, __ballot_sync, butterflies of __shfl_xor_sync).  The C
 * target never prints one: pass warp_c exchanges the lanes' values in the
 * IR first. */
static void emit_warp(TsCxGen *x, const IrExpr *e) {
    static const char *const names[] = {
        [IR_WARP_SHFL] = "ts_warp_shfl", [IR_WARP_SHFL_UP] = "ts_warp_shfl_up",
        [IR_WARP_SHFL_DOWN] = "ts_warp_shfl_down", [IR_WARP_SHFL_XOR] = "ts_warp_shfl_xor",
        [IR_WARP_BALLOT] = "ts_warp_ballot", [IR_WARP_SUM] = "ts_warp_sum", [IR_WARP_MAX] = "ts_warp_max",
        [IR_WARP_MIN] = "ts_warp_min", [IR_WARP_BAND] = "ts_warp_bitand", [IR_WARP_BOR] = "ts_warp_bitor",
        [IR_WARP_SYNC] = "ts_warp_sync",
    };
    const char *ct = ts_cx_compute_ctype(x, e->dt, e->loc);
    IrIntrinsic fn = e->call.fn;
    outf(x, "((%s)%s(", ct, names[fn]);
    if (fn == IR_WARP_BALLOT || fn == IR_WARP_SYNC) {
        out(x, "(unsigned)(");
        ts_cx_expr(x, e->call.args[0]);
        out(x, ")");
        if (fn == IR_WARP_BALLOT) {
            out(x, ", (int)(0 != (");
            ts_cx_expr(x, e->call.args[1]);
            out(x, "))");
        }
    } else {
        outf(x, "(%s)(", ct);
        ts_cx_expr(x, e->call.args[0]);
        out(x, ")");
        for (int i = 1; i < e->call.nargs; i++) { /* lane/delta, width; the mask */
            out(x, i == 3 ? ", (unsigned)(" : ", (int)(");
            ts_cx_expr(x, e->call.args[i]);
            out(x, ")");
        }
    }
    out(x, "))");
}

static void emit_call(TsCxGen *x, const IrExpr *e) {
    static const int arity[] = {
#define X(en, n, ar) [en] = ar,
        IR_INTRINSICS(X)
#undef X
    };
    IrIntrinsic fn = e->call.fn;
    if ((int)fn < 0 || fn >= IR_INTRINSIC_COUNT)
        ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: intrinsic %d", x->dl->who, (int)fn);
    if (arity[fn] >= 0 && e->call.nargs != arity[fn])
        ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: intrinsic %d with %d arguments", x->dl->who, (int)fn,
                   e->call.nargs);
    if (fn == IR_EXTERN_CALL || fn == IR_EXTERN_ADDR) {
        if (!x->dl->ext) ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: an external call", x->dl->who);
        x->dl->ext(x, e);
        return;
    }
    if (fn == IR_THREAD_RETURN || fn == IR_SET_MAX_NREG || fn == IR_SYNC_GRID || fn == IR_WGMMA_WAIT ||
        fn == IR_FENCE_PROXY_ASYNC) /* statements: the printers' (or gone) */
        ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: %s as a value", x->dl->who, fn == IR_THREAD_RETURN ? "T.thread_return" : "set_max_nreg");
    if (fn == IR_GRID_WS) {
        out(x, x->dl->grid_ws);
        return;
    }
    if (fn == IR_CLUSTER_RANK) {
        if (!x->dl->cluster_rank) ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: a cluster rank", x->dl->who);
        out(x, x->dl->cluster_rank);
        return;
    }
    if (fn == IR_REINTERPRET) {
        emit_reinterpret(x, e);
        return;
    }
    if (fn >= IR_WARP_SHFL && fn <= IR_WARP_SYNC) {
        emit_warp(x, e);
        return;
    }
    char ac = ts_cx_cat(x, e->call.args[0]->dt, e->call.args[0]->loc);
    int arg_float = ac == 'f' || ac == 'd';
    if (!arg_float) { /* integer arguments of integer-valued functions */
        switch (fn) {
        case IR_FLOOR: case IR_CEIL: case IR_ROUND: case IR_TRUNC:
            if (!ts_dtype_is_float(e->dt)) {
                ts_cx_expr(x, e->call.args[0]);
                return;
            }
            break;
        case IR_ABS:
            if (!ts_dtype_is_float(e->dt)) {
                if (x->dl->cast_helper_args) outf(x, "ts_abs_i((%s)(", x->dl->i64);
                else out(x, "ts_abs_i(");
                ts_cx_expr(x, e->call.args[0]);
                out(x, x->dl->cast_helper_args ? "))" : ")");
                return;
            }
            break;
        case IR_ISINF: case IR_ISNAN: out(x, "false"); return;
        default: break;
        }
    }
    /* float or double flavour: the result's type if float, else the argument's */
    char c = ts_cx_cat(x, e->dt, e->loc);
    if (c != 'f' && c != 'd') c = arg_float ? ac : 'd';
    if (fn == IR_ISINF || fn == IR_ISNAN) c = ac;
    const int flavour = c == 'f' ? 0 : 1;
    const char *name = x->dl->intrin_over && x->dl->intrin_over[fn][flavour] ? x->dl->intrin_over[fn][flavour]
                                                                                : x->dl->intrin[fn][flavour];
    if (!name && fn == IR_RSQRT) {
        out(x, c == 'f' ? "(1.0f / sqrtf(" : "(1.0 / sqrt(");
        ts_cx_expr(x, e->call.args[0]);
        out(x, "))");
        return;
    }
    if (!name) ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: intrinsic %d has no name", x->dl->who, (int)fn);
    outf(x, "%s(", name);
    for (int i = 0; i < e->call.nargs; i++) {
        if (i) out(x, ", ");
        /* the flavour's type, so overloaded / generic functions pick the right one */
        outf(x, "(%s)(", ts_cx_cat_ctype(x->dl, c));
        ts_cx_expr(x, e->call.args[i]);
        out(x, ")");
    }
    out(x, ")");
}

void ts_cx_expr(TsCxGen *x, const IrExpr *e) {
    if (!e) ts_fail_at(x->d, TS_ERR_INTERNAL, (TsLoc){0}, "%s: missing expression", x->dl->who);
    switch (e->kind) {
    case IR_E_INT: emit_int_lit(x, e->ival, e->dt); return;
    case IR_E_FLOAT: emit_float_lit(x, e->fval, e->dt); return;
    case IR_E_VAR: emit_var(x, e); return;
    case IR_E_LOAD: x->dl->load(x, e); return;
    case IR_E_BIN: emit_bin(x, e); return;
    case IR_E_NEG: out(x, "(-"); ts_cx_expr(x, e->un.a); out(x, ")"); return;
    case IR_E_NOT:
        out(x, e->un.bitnot ? "(~" : "(!");
        ts_cx_expr(x, e->un.a);
        out(x, ")");
        return;
    case IR_E_SELECT:
        out(x, "(");
        ts_cx_expr(x, e->sel.cond);
        out(x, " ? ");
        ts_cx_expr(x, e->sel.a);
        out(x, " : ");
        ts_cx_expr(x, e->sel.b);
        out(x, ")");
        return;
    case IR_E_CAST: emit_cast(x, e); return;
    case IR_E_CALL: emit_call(x, e); return;
    case IR_E_STRING: ts_cx_string(x, e->str); return;
    }
    ts_fail_at(x->d, TS_ERR_INTERNAL, e->loc, "%s: expression kind %d", x->dl->who, (int)e->kind);
}

/* ---- scopes ----------------------------------------------------------------- */

void ts_cx_scope_open(TsArena *a, TsCxScopes *sc) { ts_vec_push(a, sc->start, sc->declared.n); }

void ts_cx_scope_close(TsCxScopes *sc) { sc->declared.n = sc->start.v[--sc->start.n]; }

bool ts_cx_declared_here(const TsCxScopes *sc, const IrVar *v) {
    int from = sc->start.n ? sc->start.v[sc->start.n - 1] : 0;
    for (int i = from; i < sc->declared.n; i++)
        if (sc->declared.v[i] == v) return true;
    return false;
}

void ts_cx_declare(TsArena *a, TsCxScopes *sc, const IrVar *v) { ts_vec_push(a, sc->declared, v); }
