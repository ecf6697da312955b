/*
 * reduce.c — the generic lowering of T.reduce_sum/max/min/abssum/absmax.
 *
 * The source region is reduced along axis `dim`; the destination has the
 * source's shape without that axis, or with it kept as extent 1.  For each
 * point of the other axes (a parallel loop nest) a one-element local
 * accumulator starts at the identity of the reduction, a serial loop folds
 * the reduced axis into it, and the result is written:
 *
 *     clear = 1:  dst[p] = acc
 *     clear = 0:  dst[p] = combine(dst[p], acc)      (dst takes part)
 *
 * Identities: sum/abssum 0, absmax 0 (absolute values are never
 * negative), max -inf and min +inf; for integer dtypes the type's min and
 * max instead of the infinities.  The accumulator has dst's dtype, widened
 * to float32 for half-precision floats.
 */
#include "op/op_util.h"
#include "ir/layout.h"

#include <math.h>

/* The extreme values of an integer dtype. */
static int64_t int_limit(TsDType dt, bool want_max) {
    int bits = ts_dtype_bits(dt);
    bool uns = ts_dtype_info(dt)->kind != 'i';
    if (uns) {
        if (!want_max) return 0;
        return bits >= 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << bits) - 1);
    }
    if (bits >= 64) return want_max ? INT64_MAX : INT64_MIN;
    int64_t m = (int64_t)((1ull << (bits - 1)) - 1);
    return want_max ? m : -m - 1;
}

static IrExpr *identity(TsArena *a, TsReduceKind k, TsDType dt) {
    bool isf = ts_dtype_is_float(dt);
    switch (k) {
    case TS_REDUCE_MAX:
        return isf ? ir_float(a, -INFINITY, dt) : ir_int(a, int_limit(dt, false), dt);
    case TS_REDUCE_MIN:
        return isf ? ir_float(a, INFINITY, dt) : ir_int(a, int_limit(dt, true), dt);
    default: return ir_int(a, 0, dt);
    }
}

static IrExpr *combine(TsArena *a, TsReduceKind k, IrExpr *x, IrExpr *y) {
    switch (k) {
    case TS_REDUCE_MAX:
    case TS_REDUCE_ABSMAX: return ir_bin(a, IR_MAX, x, y);
    case TS_REDUCE_MIN: return ir_bin(a, IR_MIN, x, y);
    default: return ir_bin(a, IR_ADD, x, y);
    }
}

IrStmt *ts_op_reduce_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    if (op->nr < 2) ts_internal(cx->diag, "T.reduce with %d regions (want 2)", op->nr);
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    int nd = src->ndim, dim = op->dim < 0 ? op->dim + nd : op->dim;
    if (dim < 0 || dim >= nd)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.reduce_%s: dim %d is out of range for a %d-dim source",
                   ts_reduce_name(op->reduce), op->dim, nd);
    if (nd > OP_MAXDIM)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "T.reduce_%s: more than %d dims", ts_reduce_name(op->reduce), OP_MAXDIM);
    bool keep = dst->ndim == nd;
    if (!keep && dst->ndim != nd - 1)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.reduce_%s: destination %s must have the source's %d dims without dim %d",
                   ts_reduce_name(op->reduce), op_region_text(a, dst), nd, dim);

    /* the kept axes: src axis sd[j] <-> dst axis dd[j] */
    int sd[OP_MAXDIM], dd[OP_MAXDIM], n = 0;
    int64_t ext[OP_MAXDIM];
    for (int d = 0; d < nd; d++) {
        if (d == dim) continue;
        int64_t es = op_region_extent(cx, s, "T.reduce", src, d);
        int ddim = keep ? d : (d < dim ? d : d - 1);
        int64_t ed = op_region_extent(cx, s, "T.reduce", dst, ddim);
        if (es != ed)
            ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                       "T.reduce_%s: source %s and destination %s disagree on axis %d",
                       ts_reduce_name(op->reduce), op_region_text(a, src),
                       op_region_text(a, dst), d);
        sd[n] = d;
        dd[n] = ddim;
        ext[n++] = es;
    }
    if (keep && op_region_extent(cx, s, "T.reduce", dst, dim) != 1)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.reduce_%s: destination %s must have extent 1 along the reduced dim %d",
                   ts_reduce_name(op->reduce), op_region_text(a, dst), dim);
    int64_t rext = op_region_extent(cx, s, "T.reduce", src, dim);

    TsDType dt = op_acc_dtype(dst->buf->dt);
    IrStmt *out = ir_seq(a);
    out->loc = s->loc;
    IrBuffer *acc = op_local_scalar(cx, out, "acc", dt, s->loc);

    IrVar *v[OP_MAXDIM];
    IrExpr *off[OP_MAXDIM + 1];
    op_loop_vars(cx, v, n, 'i');
    op_var_refs(a, v, n, off);
    IrVar *r = op_loop_var(cx, "r");
    IrExpr **di = op_region_index(a, dst, dd, off, n);
    int sdr[OP_MAXDIM + 1];
    for (int j = 0; j < n; j++) sdr[j] = sd[j];
    sdr[n] = dim;
    off[n] = ir_var_ref(a, r);
    IrExpr **si = op_region_index(a, src, sdr, off, n + 1);

    IrStmt *cell = ir_seq(a);
    ir_seq_push(a, cell, op_scalar_store(a, acc, identity(a, op->reduce, dt)));
    IrExpr *x = ir_cast(a, dt, ir_load(a, src->buf, si, src->ndim));
    if (op->reduce == TS_REDUCE_ABSSUM || op->reduce == TS_REDUCE_ABSMAX)
        x = ir_call(a, IR_ABS, &x, 1, dt);
    IrStmt *step = op_scalar_store(a, acc, combine(a, op->reduce, op_scalar_load(a, acc), x));
    step = op_if(a, s->loc, op_in_bounds(a, src->buf, si), step, NULL);
    IrStmt *rloop = ir_for(a, r, ir_i32(a, 0), ir_i32(a, rext), IR_FOR_SERIAL, step);
    rloop->loc = s->loc;
    ir_seq_push(a, cell, rloop);
    IrExpr *res = op_scalar_load(a, acc);
    if (!op->clear)
        res = combine(a, op->reduce, ir_cast(a, dt, ir_load(a, dst->buf, di, dst->ndim)), res);
    IrStmt *st = ir_store(a, dst->buf, di, dst->ndim, res);
    st->loc = s->loc;
    ir_seq_push(a, cell, op_if(a, s->loc, op_in_bounds(a, dst->buf, di), st, NULL));
    ir_seq_push(a, out, op_loops(a, s->loc, v, ext, n, IR_FOR_PARALLEL, cell));
    return out;
}

/* ---- infer_layout (layout_inference, CUDA) -------------------------------- */

/* A row reduction between fragments kept for layout_inference
 * (TS_OP_INST_FRAGMENT): the destination takes the row projection of the
 * source's layout, where the source's rows lie in the lanes of whole warps
 * (mma accumulator, warp rows); any other layout stops inference. */
void ts_op_reduce_infer_layout(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level) {
    if (level == TS_LAYOUT_STRICT || s->op->inst != TS_OP_INST_FRAGMENT) return; /* (propagation only) */
    IrTileOp *op = s->op;
    int fs = ts_layout_frag(lx, op->r[0].buf), fd = ts_layout_frag(lx, op->r[1].buf);
    if (fs < 0 || fd < 0 || !lx->lay[fs]) return;
    IrLayout *l = lx->lay[fs];
    int dim = op->dim < 0 ? op->dim + op->r[0].ndim : op->dim;
    if (l->kind == IR_LAYOUT_MMA_C && dim == 1 && op->r[1].ndim == 1) {
        ts_layout_set(lx, fd, ir_layout_mma_rows(lx->k, l->p[0], l->p[1], (int)l->p[2], (int)l->p[3]), "T.reduce");
        return;
    }
    if (l->kind == IR_LAYOUT_WARP_ROWS && dim == 1 && op->r[1].ndim == 1) {
        ts_layout_set(lx, fd, ir_layout_warp_rows_vec_proj(lx->k, l->p[0], l->p[1], (int)l->p[2], (int)l->p[3]),
                   "T.reduce");
        return;
    }
    TsBuf b = {0};
    ir_layout_describe(&b, l);
    ts_layout_give_up(lx, "T.reduce_%s of %s along dim %d: its layout (%s) does not keep rows in the lanes of whole warps; "
                "such reductions are not done in registers yet",
            ts_reduce_name(op->reduce), op->r[0].buf->name, dim, ts_buf_str(&b));
    ts_buf_free(&b);
}

/* The source is read; the destination written, and read too when it takes
 * part (clear = 0). */
int ts_op_reduce_regions(const IrTileOp *op, int i) {
    if (i == 0) return IR_ACC_READ;
    return op->clear ? IR_ACC_WRITE : IR_ACC_READ | IR_ACC_WRITE;
}
