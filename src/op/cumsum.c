/*
 * cumsum.c — the generic lowering of T.cumsum.
 *
 * Inclusive prefix sums of the source region along axis `dim`, written to
 * a destination of the same shape; with `reverse` the sums run from the
 * end (dst[i] = src[i] + ... + src[n-1]).  For each point of the other
 * axes (a parallel nest) a local accumulator walks the axis serially:
 *
 *     acc[0] = 0
 *     for r in serial(n):  p = reverse ? n - 1 - r : r
 *         acc[0] = acc[0] + src[.., p, ..];  dst[.., p, ..] = acc[0]
 *
 * Each position is read before it is written and never read again, so
 * src may be the same buffer as dst (in-place cumsum).  Half-precision
 * data accumulates in float32.
 */
#include "op/op_util.h"
#include "ir/layout.h"

IrStmt *ts_op_cumsum_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    if (op->nr < 2) ts_internal(cx->diag, "T.cumsum with %d regions (want 2)", op->nr);
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    int nd = src->ndim, dim = op->dim < 0 ? op->dim + nd : op->dim;
    if (dst->ndim != nd)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.cumsum: source %s and destination %s must have the same shape",
                   op_region_text(a, src), op_region_text(a, dst));
    if (dim < 0 || dim >= nd)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.cumsum: dim %d is out of range for a %d-dim source", op->dim, nd);
    if (nd > OP_MAXDIM)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc, "T.cumsum: more than %d dims",
                   OP_MAXDIM);
    int od[OP_MAXDIM + 1], n = 0;
    int64_t ext[OP_MAXDIM];
    for (int d = 0; d < nd; d++) {
        int64_t es = op_region_extent(cx, s, "T.cumsum", src, d);
        if (es != op_region_extent(cx, s, "T.cumsum", dst, d))
            ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                       "T.cumsum: source %s and destination %s must have the same shape",
                       op_region_text(a, src), op_region_text(a, dst));
        if (d == dim) continue;
        od[n] = d;
        ext[n++] = es;
    }
    int64_t len = op_region_extent(cx, s, "T.cumsum", src, dim);

    TsDType dt = op_acc_dtype(dst->buf->dt);
    IrStmt *out = ir_seq(a);
    out->loc = s->loc;
    IrBuffer *acc = op_local_scalar(cx, out, "acc", dt, s->loc);

    IrVar *v[OP_MAXDIM];
    IrExpr *off[OP_MAXDIM + 1];
    op_loop_vars(cx, v, n, 'i');
    op_var_refs(a, v, n, off);
    IrVar *r = op_loop_var(cx, "r");
    IrExpr *re = ir_var_ref(a, r);
    od[n] = dim;
    off[n] = op->reverse ? ir_bin(a, IR_SUB, ir_i32(a, len - 1), re) : re;
    IrExpr **si = op_region_index(a, src, od, off, n + 1);
    IrExpr **di = op_region_index(a, dst, od, off, n + 1);

    IrStmt *cell = ir_seq(a);
    ir_seq_push(a, cell, op_scalar_store(a, acc, ir_int(a, 0, dt)));
    IrStmt *step = ir_seq(a);
    IrStmt *add = op_scalar_store(
        a, acc, ir_bin(a, IR_ADD, op_scalar_load(a, acc), ir_load(a, src->buf, si, nd)));
    ir_seq_push(a, step, op_if(a, s->loc, op_in_bounds(a, src->buf, si), add, NULL));
    IrStmt *st = ir_store(a, dst->buf, di, nd, op_scalar_load(a, acc));
    st->loc = s->loc;
    ir_seq_push(a, step, op_if(a, s->loc, op_in_bounds(a, dst->buf, di), st, NULL));
    IrStmt *rloop = ir_for(a, r, ir_i32(a, 0), ir_i32(a, len), IR_FOR_SERIAL, step);
    rloop->loc = s->loc;
    ir_seq_push(a, cell, rloop);
    ir_seq_push(a, out, op_loops(a, s->loc, v, ext, n, IR_FOR_PARALLEL, cell));
    return out;
}

/* ---- infer_layout (layout_inference, CUDA) -------------------------------- */

/* T.cumsum between fragments keeps the tile's layout: the destination
 * takes the source's (or the source the destination's). */
void ts_op_cumsum_infer_layout(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level) {
    if (level == TS_LAYOUT_STRICT || s->op->inst != TS_OP_INST_FRAGMENT) return; /* (propagation only) */
    IrTileOp *op = s->op;
    int fs = ts_layout_frag(lx, op->r[0].buf), fd = ts_layout_frag(lx, op->r[1].buf);
    if (fs < 0 || fd < 0 || fs == fd) return;
    if (lx->lay[fs] && op->r[1].buf->ndim == op->r[0].buf->ndim) ts_layout_set(lx, fd, lx->lay[fs], "T.cumsum");
    else if (lx->lay[fd] && op->r[1].buf->ndim == op->r[0].buf->ndim) ts_layout_set(lx, fs, lx->lay[fd], "T.cumsum");
}

/* The source is read, the destination written. */
int ts_op_cumsum_regions(const IrTileOp *op, int i) {
    (void)op;
    return i == 0 ? IR_ACC_READ : IR_ACC_WRITE;
}
