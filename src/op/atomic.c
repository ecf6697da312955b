/*
 * atomic.c — the generic lowering of T.atomic_add.
 *
 * Two forms (op.h): a scalar one, `T.atomic_add(C[i, j], v)`, which
 * becomes a single IR_S_ATOMIC_ADD statement (buf[idx] += value, done
 * atomically by the target: the C backend uses a compiler atomic or a
 * compare-and-swap loop for half types), and a region one,
 * `T.atomic_add(C[by * 64, bx * 64], C_local)`, which becomes a parallel
 * loop nest of such statements, matched element by element like T.copy
 * (extent-1 dims dropped, remaining extents equal).  Elements outside a
 * global destination are skipped; elements read from outside a global
 * source add nothing.
 */
#include "op/op_util.h"

static IrStmt *atomic_stmt(TsArena *a, TsLoc loc, IrBuffer *b, IrExpr **idx, int nidx,
                           IrExpr *value) {
    IrStmt *st = ir_store(a, b, idx, nidx, value);
    st->kind = IR_S_ATOMIC_ADD;
    st->loc = loc;
    return st;
}

IrStmt *ts_op_atomic_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    if (op->nr < 1) ts_internal(cx->diag, "T.atomic_add without a destination");
    const IrRegion *dst = &op->r[0];
    int dd[OP_MAXDIM];
    int64_t de[OP_MAXDIM];
    int nd = op_region_shape(cx, s, "T.atomic_add", dst, dd, de);

    if (op->nr == 1) {
        if (!op->value) ts_internal(cx->diag, "scalar T.atomic_add without a value");
        if (nd != 0)
            ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                       "T.atomic_add: a scalar value needs a one-element destination, not %s",
                       op_region_text(a, dst));
        IrExpr **di = op_region_index(a, dst, dd, NULL, 0);
        IrStmt *st = atomic_stmt(a, s->loc, dst->buf, di, dst->ndim, op->value);
        return op_if(a, s->loc, op_in_bounds(a, dst->buf, di), st, NULL);
    }

    const IrRegion *src = &op->r[1];
    OpPair p;
    op_pair_regions(cx, s, "T.atomic_add", src, dst, &p);
    IrExpr **si = p.src_idx, **di = p.dst_idx;
    IrStmt *body = atomic_stmt(a, s->loc, dst->buf, di, dst->ndim,
                               ir_load(a, src->buf, si, src->ndim));
    body = op_if(a, s->loc, op_in_bounds(a, src->buf, si), body, NULL);
    body = op_if(a, s->loc, op_in_bounds(a, dst->buf, di), body, NULL);
    return op_loops(a, s->loc, p.v, p.ext, p.n, IR_FOR_PARALLEL, body);
}

/* The destination r[0] is read and written (an atomic read-modify-write);
 * the source region r[1], where there is one, is read. */
int ts_op_atomic_regions(const IrTileOp *op, int i) {
    (void)op;
    return i == 0 ? IR_ACC_READ | IR_ACC_WRITE : IR_ACC_READ;
}
