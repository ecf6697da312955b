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

static IrExpr *view_load(IrMutator *m, IrExpr *e) {
    if (e->kind != IR_E_LOAD || !e->load.buf->base) return e;
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
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->store.buf = v->base;
        n->store.idx = ir_view_index(a, v, s->store.idx);
        n->store.nidx = v->base->ndim;
        n->store.value = s->store.value;
        return n;
    }
    case IR_S_VCOPY: {
        if (!s->vcopy.dst->base && !s->vcopy.src->base) return s;
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->vcopy = s->vcopy;
        vcopy_operand(vc, s, &n->vcopy.dst, &n->vcopy.didx, &n->vcopy.ndi, n->vcopy.lanes);
        vcopy_operand(vc, s, &n->vcopy.src, &n->vcopy.sidx, &n->vcopy.nsi, n->vcopy.lanes);
        n->vcopy.aligned = 0; /* the base's strides and alignment are tested per vector */
        return n;
    }
    case IR_S_PRINT: {
        if (!s->print.buf || !s->print.buf->base) return s;
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
