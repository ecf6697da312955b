/*
 * fill.c — the generic lowering of T.fill and T.clear.
 *
 * One parallel loop per non-unit dim of the destination region around a
 * store of the value converted once to the buffer's dtype.  Writes to a
 * global buffer past its end (a tail tile) are skipped, as in T.copy.
 */
#include "op/op_util.h"

IrStmt *ts_op_fill_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    if (op->nr < 1 || !op->value) ts_internal(cx->diag, "T.fill without a region or a value");
    const IrRegion *dst = &op->r[0];
    int dd[OP_MAXDIM];
    int64_t de[OP_MAXDIM];
    int n = op_region_shape(cx, s, "T.fill", dst, dd, de);
    IrVar *v[OP_MAXDIM];
    IrExpr *off[OP_MAXDIM];
    op_loop_vars(cx, v, n, 'i');
    op_var_refs(a, v, n, off);
    IrExpr **di = op_region_index(a, dst, dd, off, n);
    IrStmt *body = ir_store(a, dst->buf, di, dst->ndim, ir_cast(a, dst->buf->dt, op->value));
    body->loc = s->loc;
    body = op_if(a, s->loc, op_in_bounds(a, dst->buf, di), body, NULL);
    /* A thread's own registers (T.alloc_local / alloc_var) are filled whole
     * by every thread (TileLang's per-thread loop), never spread over the
     * block. */
    bool own = dst->buf->scope == IR_SCOPE_LOCAL || dst->buf->scope == IR_SCOPE_VAR;
    return op_loops(a, s->loc, v, de, n, own ? IR_FOR_SERIAL : IR_FOR_PARALLEL, body);
}

/* The one region, the destination, is written. */
int ts_op_fill_regions(const IrTileOp *op, int i) {
    (void)op, (void)i;
    return IR_ACC_WRITE;
}
