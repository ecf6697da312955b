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
 *
 * Besides: its infer_layout (a cumsum keeps its tile's layout) and its
 * lowering by layout for the CUDA pass layout_inference (rows of a
 * warp-rows fragment scanned in registers with warp shuffles), each
 * described where it is.
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

/* ---- lowering by layout (layout_inference, CUDA) ------------------------- */

/* T.cumsum along the rows of a warp-rows fragment (a row within one warp),
 * in registers.  A row's elements in order are its chunks (digit 1: L
 * lanes times v columns each), within a chunk the lanes in order, within a
 * lane its v consecutive columns (digit 2).  Per chunk: each thread scans
 * its own v elements, the L lanes scan their chunk totals by log2(L)
 * butterfly steps (partner lane ^ m: its group's total goes into the
 * exclusive prefix of the upper half, and every lane's total doubles its
 * group), every element adds its lane's exclusive prefix and the running
 * total of the earlier chunks (a register carried along the unrolled chunk
 * loop).  reverse: the same from the end (chunks and columns descending,
 * the lower half taking the upper half's total).  The sums are associated
 * differently from the serial generic lowering (exact for integers and
 * for float values whose sums are exact). */
IrStmt *ts_op_cumsum_lower_layout(TsLayoutLower *ll, IrStmt *s) {
    TsArena *a = ll->lx->arena;
    IrTileOp *op = s->op;
    int fs = ts_layout_frag(ll->lx, op->r[0].buf), fd = ts_layout_frag(ll->lx, op->r[1].buf);
    IrLayout *S = fs >= 0 ? ll->lx->lay[fs] : NULL, *D = fd >= 0 ? ll->lx->lay[fd] : NULL;
    int dim = op->dim < 0 ? op->dim + op->r[0].ndim : op->dim;
    if (!S || !D || S->kind != IR_LAYOUT_WARP_ROWS || !ir_layout_equal(S, D) || ir_layout_row_warps(S) != 1 ||
        dim != 1 || op->r[0].ndim != 2 || !op_region_whole(&op->r[0]) || !op_region_whole(&op->r[1])) {
        ts_layout_give_up(ll->lx, "T.cumsum from %s to %s is not along the rows of a fragment whose rows stay in one warp",
                op->r[0].buf->name, op->r[1].buf->name);
        return s;
    }
    TsDType dt = op_acc_dtype(op->r[1].buf->dt);
    int64_t L = ir_layout_row_lanes(S), nc = S->local_shape[1], v = S->nlocal == 3 ? S->local_shape[2] : 1;
    IrBuffer *src = ll->reg[fs], *dst = ll->reg[fd];
    IrStmt *body = ir_seq(a);
    IrBuffer *sc[4]; /* carry, the thread's running sum, its group total, its exclusive prefix */
    static const char *const nm[4] = {"carry", "run", "tot", "pre"};
    IrExpr *one = ir_i32(a, 1), *z = ir_i32(a, 0);
    for (int i = 0; i < 4; i++) {
        sc[i] = ir_buffer(ll->lx->k, nm[i], dt, IR_SCOPE_LOCAL, 1, &one, s->loc);
        IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
        al->alloc.buf = sc[i];
        ir_seq_push(a, body, al);
    }
    IrBuffer *oth = ir_buffer(ll->lx->k, "oth", dt, IR_SCOPE_LOCAL, 1, &one, s->loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
    al->alloc.buf = oth;
    ir_seq_push(a, body, al);
#define LD(b) ir_load(a, (b), &z, 1)
#define ST(b, x) ir_store(a, (b), &z, 1, (x))
    IrVar *t = ir_var(ll->lx->k, "t", TS_INT32, IR_VAR_LOOP);
    IrVar *dv[1] = {ir_var(ll->lx->k, "d", TS_INT32, IR_VAR_LOOP)};
    IrVar *ck = ir_var(ll->lx->k, "c", TS_INT32, IR_VAR_LOOP), *ev = ir_var(ll->lx->k, "e", TS_INT32, IR_VAR_LOOP);
    ir_seq_push(a, body, ST(sc[0], ir_int(a, 0, dt)));
    /* chunk c (descending when reverse), element e of the lane's v */
    IrExpr *cx = op->reverse ? ir_bin(a, IR_SUB, ir_i32(a, nc - 1), ir_var_ref(a, ck)) : ir_var_ref(a, ck);
    IrExpr *ex = op->reverse ? ir_bin(a, IR_SUB, ir_i32(a, v - 1), ir_var_ref(a, ev)) : ir_var_ref(a, ev);
    IrExpr *ri = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, dv[0]),
                                                                              ir_i32(a, nc)), cx), ir_i32(a, v)), ex);
    IrStmt *chunk = ir_seq(a);
    ir_seq_push(a, chunk, ST(sc[1], ir_int(a, 0, dt)));
    IrStmt *own = ir_seq(a);
    ir_seq_push(a, own, ST(sc[1], ir_bin(a, IR_ADD, LD(sc[1]), ir_cast(a, dt, ir_load(a, src, &ri, 1)))));
    ir_seq_push(a, own, ir_store(a, dst, &ri, 1, ir_cast(a, dst->dt, LD(sc[1]))));
    ir_seq_push(a, chunk, ir_for(a, ev, ir_i32(a, 0), ir_i32(a, v), IR_FOR_UNROLL, own));
    ir_seq_push(a, chunk, ST(sc[2], LD(sc[1])));
    ir_seq_push(a, chunk, ST(sc[3], ir_int(a, 0, dt)));
    IrExpr *lane = ir_bin(a, IR_FLOORMOD, ir_var_ref(a, t), ir_i32(a, 32));
    for (int64_t m = 1; m < L; m <<= 1) {
        IrExpr *args[2] = {LD(sc[2]), ir_float(a, (double)m, dt)};
        ir_seq_push(a, chunk, ST(oth, ir_call(a, IR_SHFL_XOR, args, 2, dt)));
        /* the partner's group is before this lane's (after it, reverse) */
        IrExpr *bit = ir_bin(a, IR_FLOORMOD, ir_bin(a, IR_FLOORDIV, lane, ir_i32(a, m)), ir_i32(a, 2));
        IrExpr *take = ir_bin(a, IR_EQ, bit, ir_i32(a, op->reverse ? 0 : 1));
        ir_seq_push(a, chunk, ST(sc[3], ir_select(a, take, ir_bin(a, IR_ADD, LD(sc[3]), LD(oth)), LD(sc[3]))));
        ir_seq_push(a, chunk, ST(sc[2], ir_bin(a, IR_ADD, LD(sc[2]), LD(oth))));
    }
    IrExpr *add = ir_bin(a, IR_ADD, LD(sc[3]), LD(sc[0]));
    IrStmt *fix = ir_store(a, dst, &ri, 1, ir_cast(a, dst->dt, ir_bin(a, IR_ADD, ir_cast(a, dt, ir_load(a, dst, &ri, 1)),
                                                                     add)));
    ir_seq_push(a, chunk, ir_for(a, ev, ir_i32(a, 0), ir_i32(a, v), IR_FOR_UNROLL, fix));
    ir_seq_push(a, chunk, ST(sc[0], ir_bin(a, IR_ADD, LD(sc[0]), LD(sc[2]))));
#undef LD
#undef ST
    ir_seq_push(a, body, ir_for(a, ck, ir_i32(a, 0), ir_i32(a, nc), IR_FOR_UNROLL, chunk));
    for (int i = 0; i < body->seq.n; i++)
        if (!body->seq.v[i]->loc.src) body->seq.v[i]->loc = s->loc;
    int64_t ext[1] = {S->local_shape[0]};
    return ts_layout_thread_loops(ll->lx, t, dv, ext, 1, body, s->loc);
}

/* The source is read, the destination written. */
int ts_op_cumsum_regions(const IrTileOp *op, int i) {
    (void)op;
    return i == 0 ? IR_ACC_READ : IR_ACC_WRITE;
}
