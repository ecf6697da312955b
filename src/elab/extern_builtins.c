/*
 * extern_builtins.c — external CUDA source inside a kernel:
 * T.import_source(src), T.call_extern(dtype, "name", args...) and the
 * pointers such a call takes, T.access_ptr(buf, "r"|"w"|"rw", ...) (made by
 * builtins.c, a V_PTR value, which T.ptx_cp_async takes too) and
 * T.address_of(buf[i]).
 *
 * What TileLang means by them (tilelang/language/common.py, tir/op.py,
 * builtin.py at a35008a): T.import_source puts the string in a
 * `pragma_import_c` attribute, which TVM's C-family code generators copy
 * into the declarations ahead of the kernel function; None imports
 * nothing.  T.call_extern builds a call of that name with the arguments
 * as given (a `dtype=` keyword is moved to the front, so both
 * `T.call_extern("handle", "f", a)` and `T.call_extern("f", a, dtype=d)`
 * are written); the generated code calls it by name.  T.access_ptr is the
 * address of a buffer's element (the buffer's first, a region's first, or
 * the element given), plus `offset` elements; the access type says whether
 * the callee reads or writes through it.
 *
 * Here: the imported texts are a fact of the kernel (IrKernel.extern_src,
 * each once, in the order first imported); a call is an IR_EXTERN_CALL
 * whose first argument is the name (an IR string) and the others its
 * arguments, each with its dtype; a pointer argument is an IR_EXTERN_ADDR
 * of the element's load.  The CUDA target prints the texts before the
 * kernel and the calls as written.  The C target and the interpreters
 * cannot run CUDA source: they refuse the kernel at IrKernel.extern_loc.
 *
 * Pointers are taken only of per-thread buffers (T.alloc_local,
 * T.alloc_var), as TileLang's dequantization examples pass them: what
 * the callee does through a pointer into shared or global memory is
 * invisible to the passes (barriers, bounds, layouts), so such a pointer
 * is refused, naming the buffer.  A per-thread buffer whose address is
 * taken is declared 16-byte aligned (IrBuffer.align): the examples' source
 * reads four int8 elements as one 32-bit word.  A 16-bit float element is
 * passed as a pointer to its stored bits (unsigned short), as the target
 * stores it.
 */
#include "elab/elab_int.h"

#include <string.h>

/* X(id, name) — ids are ELAB_EXT_BASE + position. */
#define EXT_BUILTINS(X) X(X_IMPORT_SOURCE, "import_source") X(X_CALL_EXTERN, "call_extern")

enum {
#define X(id, name) id,
    EXT_BUILTINS(X)
#undef X
    X_COUNT
};

static const char *const ext_names[X_COUNT] = {
#define X(id, name) [id] = name,
    EXT_BUILTINS(X)
#undef X
};

Value *ext_builtin_lookup(Elab *E, const char *name, TsLoc loc) {
    for (int i = 0; i < X_COUNT; i++)
        if (!strcmp(ext_names[i], name)) {
            Value *v = val_new(E, V_BUILTIN, loc);
            v->bi = ELAB_EXT_BASE + i;
            return v;
        }
    return NULL;
}

/* The first T.import_source / T.call_extern of the kernel: where the C
 * target and the interpreters refuse it. */
static void note_extern(Elab *E, TsLoc loc) {
    if (!ir_kernel_has_extern(E->k)) E->k->extern_loc = loc;
}

/* The address of an element for an external function: `v` a buffer (its
 * first element), a region (its first element) or an element, plus `off`
 * elements (NULL: none) along the flat row-major order. */
IrExpr *ext_address(Elab *E, Value *v, IrExpr *off, const char *fn, TsLoc loc) {
    IrBuffer *b;
    IrExpr **idx;
    if (v->kind == V_ACCESS) {
        b = v->buf;
        idx = TS_NEWN(E->a, IrExpr *, b->ndim);
        memcpy(idx, v->idx, sizeof *idx * (size_t)b->ndim);
    } else if (v->kind == V_REGION) {
        b = v->reg.buf;
        idx = TS_NEWN(E->a, IrExpr *, b->ndim);
        memcpy(idx, v->reg.start, sizeof *idx * (size_t)b->ndim);
    } else if (v->kind == V_BUFFER) {
        b = v->buf;
        idx = TS_NEWN(E->a, IrExpr *, b->ndim);
        for (int i = 0; i < b->ndim; i++) idx[i] = ir_i32(E->a, 0);
    } else {
        elab_fail(E, TS_ERR_TYPE, loc, "%s takes a buffer, a region or an element of one, got %s", fn,
                  val_kind_name(v));
    }
    if (b->scope != IR_SCOPE_LOCAL && b->scope != IR_SCOPE_VAR)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                  "%s of the %s buffer '%s': only per-thread buffers (T.alloc_local, T.alloc_var) can be passed to "
                  "an external function here (what it does in %s memory would be invisible to the compiler's "
                  "barriers and checks)",
                  fn, ir_scope_name(b->scope), b->name, ir_scope_name(b->scope));
    if (b->base)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s of the view '%s': pass the buffer it views", fn, b->name);
    if (b->dt == TS_INT4 || b->dt == TS_BOOL)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s of the %s buffer '%s': elements of this dtype have no address of "
                  "their own here", fn, ts_dtype_name(b->dt), b->name);
    int64_t z;
    if (off && !(ir_is_const_int(off, &z) && z == 0)) /* rows are contiguous: the last index carries it */
        idx[b->ndim - 1] = ir_bin(E->a, IR_ADD, idx[b->ndim - 1], off);
    if (b->align < 16) b->align = 16;
    IrExpr *ld = ir_load(E->a, b, idx, b->ndim);
    ld->loc = loc;
    IrExpr *r = ir_call(E->a, IR_EXTERN_ADDR, &ld, 1, TS_UINT64);
    r->loc = loc;
    return r;
}

/* The argument at pos or keyword name (NULL if neither). */
static Value *xarg(Elab *E, Value **args, int nargs, const char **kw, Value **kwv, int nkw, bool *used, int pos,
                   const char *name, const char *fn, TsLoc loc) {
    Value *v = pos >= 0 && pos < nargs ? args[pos] : NULL;
    for (int i = 0; i < nkw; i++)
        if (!strcmp(kw[i], name)) {
            if (v) elab_fail(E, TS_ERR_TYPE, loc, "%s got two values for '%s'", fn, name);
            v = kwv[i];
            used[i] = true;
        }
    return v;
}

static void no_other_kw(Elab *E, const char **kw, int nkw, const bool *used, const char *fn, TsLoc loc) {
    for (int i = 0; i < nkw; i++)
        if (!used[i] && strcmp(kw[i], "span"))
            elab_fail(E, TS_ERR_TYPE, loc, "%s got an unexpected keyword argument '%s'", fn, kw[i]);
}

/* T.call_extern(dtype, name, args...) (a `dtype=` keyword comes first). */
static Value *call_extern(Elab *E, Value **args, int nargs, const char **kw, Value **kwv, int nkw, bool *used,
                          const char *fn, TsLoc loc) {
    Value *dv = xarg(E, args, nargs, kw, kwv, nkw, used, -1, "dtype", fn, loc);
    no_other_kw(E, kw, nkw, used, fn, loc);
    int first = 0;
    if (!dv) {
        if (nargs < 1) elab_fail(E, TS_ERR_TYPE, loc, "%s needs the result dtype and the function's name", fn);
        dv = args[first++];
    }
    if (nargs <= first || args[first]->kind != V_STR)
        elab_fail(E, TS_ERR_TYPE, loc, "%s needs the function's name as a string after the dtype", fn);
    const char *name = args[first]->s;
    bool ident = name[0] && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p && ident; p++)
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                (*p == ':' && p[1] == ':' && p++); /* a namespace-qualified name */
    if (!ident) elab_fail(E, TS_ERR_TYPE, loc, "%s: '%s' is not a function name", fn, name);
    bool handle = dv->kind == V_STR && !strcmp(dv->s, "handle");
    TsDType dt = handle ? TS_INT32 : val_to_dtype(E, dv, loc);
    int n = nargs - first;
    IrExpr **xs = TS_NEWN(E->a, IrExpr *, n);
    xs[0] = TS_NEW(E->a, IrExpr);
    xs[0]->kind = IR_E_STRING;
    xs[0]->dt = TS_INT32;
    xs[0]->str = ts_strdup(E->a, name);
    xs[0]->loc = args[first]->loc.src ? args[first]->loc : loc;
    for (int i = 1; i < n; i++) {
        Value *a = args[first + i];
        TsLoc al = a->loc.src ? a->loc : loc;
        if ((a->kind == V_ACCESS || a->kind == V_BUFFER || a->kind == V_REGION) && a->b) /* T.address_of */
            xs[i] = ext_address(E, a, NULL, "T.address_of", al);
        else if (a->kind == V_PTR) { /* T.access_ptr (builtins.c): its element, offset included */
            Value el = {.kind = V_ACCESS, .loc = a->loc, .buf = a->buf, .idx = a->idx};
            xs[i] = ext_address(E, &el, NULL, "T.access_ptr()", al);
        }
        else if (a->kind == V_STR)
            elab_fail(E, TS_ERR_TYPE, al, "%s: argument %d is a string; external functions take numbers and "
                      "pointers (T.access_ptr) here", fn, i);
        else if (a->kind == V_BUFFER && a->buf->scope != IR_SCOPE_VAR)
            elab_fail(E, TS_ERR_TYPE, al, "%s: argument %d is the buffer '%s'; pass T.access_ptr(%s, \"rw\") for "
                      "its address", fn, i, a->buf->name, a->buf->name);
        else xs[i] = val_to_expr(E, a, al);
    }
    IrExpr *call = ir_call(E->a, IR_EXTERN_CALL, xs, n, dt);
    call->loc = loc;
    note_extern(E, loc);
    if (!handle) return val_expr(E, call, loc); /* a statement of its own: elab.c makes it one */
    IrStmt *st = ir_stmt(E->a, IR_S_EVAL, loc); /* "handle": nothing to use, a call statement */
    st->eval.e = call;
    emit(E, st);
    return val_none(E, loc);
}

Value *ext_builtin_call(Elab *E, int id, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                        TsLoc loc) {
    int x = id - ELAB_EXT_BASE;
    const char *fn = ts_sprintf(E->a, "T.%s()", ext_names[x]);
    bool *used = TS_NEWN(E->a, bool, nkw ? nkw : 1);
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside `with T.Kernel(...)`", fn);
    switch (x) {
    case X_IMPORT_SOURCE: {
        Value *src = xarg(E, args, nargs, kw, kwv, nkw, used, 0, "source", fn, loc);
        no_other_kw(E, kw, nkw, used, fn, loc);
        if (nargs > 1) elab_fail(E, TS_ERR_TYPE, loc, "%s takes one argument, the source text", fn);
        if (!src || src->kind == V_NONE) return val_none(E, loc); /* TileLang: None imports nothing */
        if (src->kind != V_STR) elab_fail(E, TS_ERR_TYPE, loc, "%s takes the source as a string, got %s", fn,
                                          val_kind_name(src));
        note_extern(E, loc);
        IrKernel *k = E->k;
        for (int i = 0; i < k->extern_src.n; i++)
            if (!strcmp(k->extern_src.v[i], src->s)) return val_none(E, loc); /* once per kernel */
        ts_vec_push(E->a, k->extern_src, ts_strdup(E->a, src->s));
        return val_none(E, loc);
    }
    case X_CALL_EXTERN: return call_extern(E, args, nargs, kw, kwv, nkw, used, fn, loc);
    }
    elab_fail(E, TS_ERR_INTERNAL, loc, "extern builtin %d", id);
}

/* The buffer and indices of an element operand (a buffer: its first
 * element; a region: its start). */
static IrBuffer *elem_of(Elab *E, Value *v, IrExpr ***idx, const char *what, TsLoc loc) {
    IrBuffer *b = v->kind == V_REGION ? v->reg.buf : v->kind == V_ACCESS || v->kind == V_BUFFER ? v->buf : NULL;
    if (!b) elab_fail(E, TS_ERR_TYPE, loc, "T.dp4a: %s must be an element of a buffer, got %s", what, val_kind_name(v));
    *idx = TS_NEWN(E->a, IrExpr *, b->ndim);
    for (int i = 0; i < b->ndim; i++)
        (*idx)[i] = v->kind == V_ACCESS ? v->idx[i] : v->kind == V_REGION ? v->reg.start[i] : ir_i32(E->a, 0);
    return b;
}

/*
 * T.dp4a(a, b, c): TileLang writes it as an external call of its DP4A
 * template (tilelang/language/customize.py; tl_templates/cuda/common.h:
 * `*c = __dp4a(*(int *)a, *(int *)b, *c)`): the four signed int8 elements
 * from a and from b, their products summed into the int32 c.  Here it is
 * plain IR, c[0] = c[0] + a[0] * b[0] + ... + a[3] * b[3] (the four along
 * the last axis), so every target and interpreter runs it.
 */
void ext_dp4a(Elab *E, Value *a, Value *b, Value *c, TsLoc loc) {
    IrExpr **ia, **ib, **ic;
    IrBuffer *ba = elem_of(E, a, &ia, "A", loc), *bb = elem_of(E, b, &ib, "B", loc), *bc = elem_of(E, c, &ic, "C", loc);
    if (ba->dt != TS_INT8 || bb->dt != TS_INT8)
        elab_fail(E, TS_ERR_TYPE, loc, "T.dp4a needs int8 inputs, got %s and %s", ts_dtype_name(ba->dt),
                  ts_dtype_name(bb->dt));
    if (bc->dt != TS_INT32) elab_fail(E, TS_ERR_TYPE, loc, "T.dp4a accumulates into int32, got %s", ts_dtype_name(bc->dt));
    IrExpr *sum = ir_load(E->a, bc, ic, bc->ndim);
    sum->loc = loc;
    for (int j = 0; j < 4; j++) {
        IrExpr **xa = TS_NEWN(E->a, IrExpr *, ba->ndim), **xb = TS_NEWN(E->a, IrExpr *, bb->ndim);
        memcpy(xa, ia, sizeof *xa * (size_t)ba->ndim);
        memcpy(xb, ib, sizeof *xb * (size_t)bb->ndim);
        xa[ba->ndim - 1] = ir_bin(E->a, IR_ADD, ia[ba->ndim - 1], ir_i32(E->a, j));
        xb[bb->ndim - 1] = ir_bin(E->a, IR_ADD, ib[bb->ndim - 1], ir_i32(E->a, j));
        IrExpr *la = ir_load(E->a, ba, xa, ba->ndim), *lb = ir_load(E->a, bb, xb, bb->ndim);
        la->loc = lb->loc = loc;
        IrExpr *p = ir_bin(E->a, IR_MUL, ir_cast(E->a, TS_INT32, la), ir_cast(E->a, TS_INT32, lb));
        sum = ir_bin(E->a, IR_ADD, sum, p);
    }
    IrStmt *st = ir_store(E->a, bc, ic, bc->ndim, sum);
    st->loc = loc;
    emit(E, st);
}
