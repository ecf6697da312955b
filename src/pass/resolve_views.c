/*
 * resolve_views.c — accesses through buffer views become accesses of the
 * buffers they view.
 *
 * A view (IrBuffer.base: T.reshape, T.view(buf, shape=), T.Tensor(shape,
 * dtype, buf.data)) names another buffer's storage with another shape.  The
 * elaborator keeps views as buffers of their own, so that tile operators
 * over them (a T.reduce_sum over a reshaped fragment, a T.copy out of a
 * flattened global tensor) are lowered with the view's shape, where the
 * region arithmetic is rectangular.  Right after lower_tile_ops this pass
 * rewrites every load, store, atomic add, vector copy and printed buffer
 * of a view into one of its base through the view's index map
 * (ir_view_index: row-major reinterpretation, written per group of
 * dimensions so that a split dimension is a division and a merged one a
 * sum of products).  After it the views are unreferenced and dropped from
 * the kernel's buffer list: layout inference, insert_sync, plan_smem, the
 * code generators and both interpreters only ever see the one storage.
 *
 * A view of another dtype (T.view(buf, dtype=): a float32 view of a
 * bfloat16 shared tile, the same bytes) is rewritten into accesses of the
 * base's stored bits (IrExpr load.bits / IrStmt store.bits): element f of
 * the view (row-major) is the bytes of base elements [f r, f r + r) when
 * the view's element is r times wider, glued as unsigned integers (lowest
 * address lowest, little-endian as every target here), then reinterpreted
 * as the view's dtype where the value is used; a store splits the bits the
 * same way.  No value passes through the base's dtype, so a NaN's payload
 * in either dtype survives a copy (both targets compute float16/bfloat16 in
 * float32 and the interpreters in double, where converting would lose
 * it); a copy from one such view to another moves integers only (the
 * reinterpret pair is folded).  A view of a narrower dtype is read as a
 * shift of the wider element's bits; writing through it would rewrite
 * the neighbouring bytes of the same element (a race between threads), so
 * it is refused, as are atomic adds, vector copies and prints through any
 * view of another dtype.
 *
 * What cannot be rewritten element by element is refused with the
 * statement's source position: a tile operator the lowering keeps whole
 * (T.gemm and the communication operators) over a view, and a vector copy
 * whose run of elements may not be contiguous in the base (a global view
 * whose last dimension is not the base's last dimension).
 */
#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

typedef struct ViewCtx {
    TsPassCtx *cx;
} ViewCtx;

static bool retyped(const IrBuffer *v) { return v && v->base && v->dt != v->base->dt; }

/* u (an unsigned integer of the view's width) read as the view's dtype. */
static IrExpr *from_bits(TsArena *a, IrExpr *u, TsDType dt) {
    if (u->dt == dt) return u;
    if (u->kind == IR_E_CALL && u->call.fn == IR_REINTERPRET && u->call.args[0]->dt == dt) return u->call.args[0];
    return ir_call(a, IR_REINTERPRET, &u, 1, dt);
}

/* The bits of x as the unsigned integer of its width. */
static IrExpr *to_bits(TsArena *a, IrExpr *x) {
    TsDType u = ir_bits_dtype(x->dt);
    if (x->dt == u) return x;
    if (x->kind == IR_E_CALL && x->call.fn == IR_REINTERPRET && x->call.args[0]->dt == u) return x->call.args[0];
    return ir_call(a, IR_REINTERPRET, &x, 1, u);
}

static IrExpr *bits_shift(TsArena *a, IrBinOp op, IrExpr *x, IrExpr *amount) {
    return ir_bin(a, op, x, ir_cast(a, x->dt, amount));
}

/* A load of the view v (of another dtype than its base) at idx. */
static IrExpr *retyped_load(TsArena *a, IrBuffer *v, IrExpr **idx, TsLoc loc) {
    IrBuffer *b = v->base;
    int wv = ts_dtype_bits(v->dt), wb = ts_dtype_bits(b->dt);
    TsDType uv = ir_bits_dtype(v->dt);
    IrExpr *f = ir_flat_index(a, v, idx), *u = NULL;
    if (wv >= wb) {
        int r = wv / wb;
        for (int j = 0; j < r; j++) {
            IrExpr *fj = r == 1 ? f : ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, f, ir_i32(a, r)), ir_i32(a, j));
            IrExpr *part = ir_cast(a, uv, ir_load_bits(a, b, ir_unflat_index(a, b, fj), b->ndim));
            part->loc = loc;
            if (j) part = bits_shift(a, IR_SHL, part, ir_i32(a, (int64_t)wb * j));
            u = u ? ir_bin(a, IR_BITOR, u, part) : part;
        }
    } else {
        int r = wb / wv;
        IrExpr *w = ir_load_bits(a, b, ir_unflat_index(a, b, ir_bin(a, IR_FLOORDIV, f, ir_i32(a, r))), b->ndim);
        w->loc = loc;
        IrExpr *sh = ir_bin(a, IR_MUL, ir_bin(a, IR_FLOORMOD, f, ir_i32(a, r)), ir_i32(a, wv));
        u = ir_cast(a, uv, ir_bin(a, IR_BITAND, bits_shift(a, IR_SHR, w, sh),
                                  ir_int(a, (int64_t)(((uint64_t)1 << wv) - 1), w->dt)));
    }
    IrExpr *out = from_bits(a, u, v->dt);
    out->loc = loc;
    return out;
}

/* A store of value into the view v (of another dtype) at idx. */
static IrStmt *retyped_store(IrMutator *m, IrStmt *s) {
    ViewCtx *vc = m->ctx;
    TsArena *a = m->arena;
    IrBuffer *v = s->store.buf, *b = v->base;
    int wv = ts_dtype_bits(v->dt), wb = ts_dtype_bits(b->dt);
    if (s->kind != IR_S_STORE || wv < wb)
        ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "%s the %s view '%s' of the %s buffer '%s' is not supported%s",
                   s->kind != IR_S_STORE ? "an atomic add through" : "a store through", ts_dtype_name(v->dt),
                   v->name, ts_dtype_name(b->dt), b->name,
                   s->kind != IR_S_STORE ? "" : " (its elements are parts of the base's: writing one rewrites the "
                                                "rest of that element)");
    IrExpr *u = to_bits(a, s->store.value);
    IrExpr *f = ir_flat_index(a, v, s->store.idx);
    if (wv == wb) return ir_store_bits(a, b, ir_unflat_index(a, b, f), b->ndim, u);
    int r = wv / wb;
    TsDType ub = ir_bits_dtype(b->dt);
    IrStmt *seq = ir_seq(a);
    seq->loc = s->loc;
    IrVar *t = ir_var(vc->cx->k, "bits", u->dt, IR_VAR_LET);
    IrStmt *let = ir_stmt(a, IR_S_LET, s->loc);
    let->let.var = t;
    let->let.value = u;
    ir_seq_push(a, seq, let);
    for (int j = 0; j < r; j++) {
        IrExpr *fj = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, f, ir_i32(a, r)), ir_i32(a, j));
        IrExpr *part = ir_var_ref(a, t);
        if (j) part = bits_shift(a, IR_SHR, part, ir_i32(a, (int64_t)wb * j));
        IrStmt *st = ir_store_bits(a, b, ir_unflat_index(a, b, fj), b->ndim, ir_cast(a, ub, part));
        st->loc = s->loc;
        ir_seq_push(a, seq, st);
    }
    return seq;
}

static IrExpr *view_load(IrMutator *m, IrExpr *e) {
    if (e->kind != IR_E_LOAD || !e->load.buf->base) return e;
    if (retyped(e->load.buf)) return retyped_load(m->arena, e->load.buf, e->load.idx, e->loc);
    IrExpr *n = ir_load(m->arena, e->load.buf->base, ir_view_index(m->arena, e->load.buf, e->load.idx),
                        e->load.buf->base->ndim);
    n->loc = e->loc;
    return n;
}

/* The view's last dimension is the base's last dimension (the same
 * constant extent, mapped one to one): a run of elements along it is a
 * run in the base. */
static bool last_dim_kept(const IrBuffer *v) {
    int64_t x, y;
    return v->ndim >= 1 && v->base->ndim >= 1 && ir_is_const_int(v->shape[v->ndim - 1], &x) &&
           ir_is_const_int(v->base->shape[v->base->ndim - 1], &y) && x == y;
}

static void vcopy_operand(ViewCtx *vc, const IrStmt *s, IrBuffer **buf, IrExpr ***idx, int *n, int lanes) {
    IrBuffer *v = *buf;
    if (!v->base) return;
    /* on-chip: the vector starts at a multiple of `lanes` of the view's row
     * (lower_copy_cuda proves it of a shared destination), so with both
     * last extents multiples of `lanes` it stays within one row of the base */
    int64_t x, y;
    bool runs = v->base->scope != IR_SCOPE_GLOBAL && ir_is_const_int(v->shape[v->ndim - 1], &x) &&
                ir_is_const_int(v->base->shape[v->base->ndim - 1], &y) && x % lanes == 0 && y % lanes == 0;
    if (lanes > 1 && !last_dim_kept(v) && !runs)
        ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "a vector copy through the view '%s' of '%s', whose last dimension is not '%s''s last "
                   "dimension, is not supported",
                   v->name, v->base->name, v->base->name);
    *idx = ir_view_index(vc->cx->arena, v, *idx);
    *n = v->base->ndim;
    *buf = v->base;
}

static IrStmt *view_stmt(IrMutator *m, IrStmt *s) {
    ViewCtx *vc = m->ctx;
    TsArena *a = m->arena;
    switch (s->kind) {
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD: {
        IrBuffer *v = s->store.buf;
        if (!v->base) return s;
        if (retyped(v)) return retyped_store(m, s);
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->store.buf = v->base;
        n->store.idx = ir_view_index(a, v, s->store.idx);
        n->store.nidx = v->base->ndim;
        n->store.value = s->store.value;
        return n;
    }
    case IR_S_VCOPY: {
        if (!s->vcopy.dst->base && !s->vcopy.src->base) return s;
        if (retyped(s->vcopy.dst) || retyped(s->vcopy.src)) {
            IrBuffer *v = retyped(s->vcopy.dst) ? s->vcopy.dst : s->vcopy.src;
            ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "a vector copy through the %s view '%s' of the %s buffer '%s' is not supported",
                       ts_dtype_name(v->dt), v->name, ts_dtype_name(v->base->dt), v->base->name);
        }
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->vcopy = s->vcopy;
        vcopy_operand(vc, s, &n->vcopy.dst, &n->vcopy.didx, &n->vcopy.ndi, n->vcopy.lanes);
        vcopy_operand(vc, s, &n->vcopy.src, &n->vcopy.sidx, &n->vcopy.nsi, n->vcopy.lanes);
        n->vcopy.aligned = 0; /* the base's strides and alignment are tested per vector */
        return n;
    }
    case IR_S_PRINT: {
        if (!s->print.buf || !s->print.buf->base) return s;
        if (retyped(s->print.buf))
            ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc, "T.print of the %s view '%s' of the %s buffer '%s'",
                       ts_dtype_name(s->print.buf->dt), s->print.buf->name, ts_dtype_name(s->print.buf->base->dt),
                       s->print.buf->base->name);
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->print = s->print;
        n->print.buf = s->print.buf->base;
        return n;
    }
    case IR_S_TILEOP:
        for (int i = 0; i < s->op->nr; i++)
            if (s->op->r[i].buf && s->op->r[i].buf->base)
                ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                           "T.%s on the view '%s' of '%s' is not supported: give '%s' itself",
                           ts_op_name(s->op->kind), s->op->r[i].buf->name, s->op->r[i].buf->base->name,
                           s->op->r[i].buf->base->name);
        return s;
    default: return s;
    }
}

void ts_pass_resolve_views(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    /* (a view made before the first T.Kernel of a chain is in the first
     * kernel's buffer list but may be used in any: every body is walked) */
    ViewCtx vc = {cx};
    IrMutator m = {.arena = cx->arena, .ctx = &vc, .post_expr = view_load, .post_stmt = view_stmt};
    k->body = ir_mutate_stmt(&m, k->body);
    int n = 0;
    for (int i = 0; i < k->buffers.n; i++)
        if (!k->buffers.v[i]->base) k->buffers.v[n++] = k->buffers.v[i];
    k->buffers.n = n;
}
