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
 *
 * Besides: its infer_layout (a row reduction's destination is the row
 * projection of its source) and its lowering by layout for the CUDA pass
 * layout_inference (per-thread partials, warp shuffles, and a shared
 * scratch where a row spans several warps), each described where it is.
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

/* ---- lowering by layout (layout_inference, CUDA) ------------------------- */

/* The second half of a row reduction of an MMA_C tile whose rows are
 * spread over wn warps (a warp grid with wn > 1 columns): after the
 * shuffles (`cell`, in a thread range with digits dv), every lane of a row
 * in a warp holds that warp's partial; lane 4g (the row's first lane)
 * writes it to a shared scratch of m x wn floats at [row, warp column];
 * one barrier; then every thread holding the row (MMA_ROWS: the 4 lanes
 * times wn warps) combines the wn partials in warp-column order, the same
 * order everywhere, so all replicas agree bit for bit.  A second barrier
 * (before the scratch is written again) only where the reduction runs in
 * a loop. */
static IrStmt *cross_warp(TsLayoutLower *ll, IrStmt *s, const IrLayout *S, int64_t wn, IrBuffer *acc, IrStmt *al, IrStmt *cell,
                          IrVar *t, IrVar *const *dv, const int64_t *ext, IrExpr *di, double idv) {
    TsArena *a = ll->lx->arena;
    IrTileOp *op = s->op;
    int fd = ts_layout_frag(ll->lx, op->r[1].buf);
    /* (a warp-rows tile with fewer rows than warps: row r on the wn warps
     * from r * wn, every lane of each holding the warp's partial after the
     * shuffles; lane 0 writes it) */
    bool rows = S->kind == IR_LAYOUT_WARP_ROWS;
    int64_t m = S->p[0], WM = m / S->p[2];
    IrExpr *shp = ir_i32(a, m * wn);
    IrBuffer *sc = ir_buffer(ll->lx->k, "red_smem", TS_FLOAT32, IR_SCOPE_SHARED, 1, &shp, s->loc);
    sc->transient = 1; /* written then read within this statement: its bytes are free outside it */
    IrStmt *sal = ir_stmt(a, IR_S_ALLOC, s->loc);
    sal->alloc.buf = sc;
    IrExpr *z = ir_i32(a, 0);
    /* the row of digits (tile row, half) on thread t, and the warp column */
    IrExpr *row_of[2];
    IrExpr *warpc[2];
    IrVar *t2 = ir_var(ll->lx->k, "t", TS_INT32, IR_VAR_LOOP);
    IrVar *dv2[2] = {ir_var(ll->lx->k, "d", TS_INT32, IR_VAR_LOOP), ir_var(ll->lx->k, "d", TS_INT32, IR_VAR_LOOP)};
    IrVar *tt[2] = {t, t2};
    IrVar *const *dd[2] = {dv, dv2};
    for (int h = 0; h < 2; h++) {
        IrExpr *tv = ir_var_ref(a, tt[h]), *w = ir_bin(a, IR_FLOORDIV, tv, ir_i32(a, 32));
        IrExpr *ln = ir_bin(a, IR_FLOORMOD, tv, ir_i32(a, 32));
        warpc[h] = ir_bin(a, IR_FLOORMOD, w, ir_i32(a, wn));
        if (rows) {
            row_of[h] = ir_bin(a, IR_FLOORDIV, w, ir_i32(a, wn));
            continue;
        }
        IrExpr *r = ir_bin(a, IR_MUL, ir_bin(a, IR_FLOORDIV, w, ir_i32(a, wn)), ir_i32(a, WM));
        r = ir_bin(a, IR_ADD, r, ir_bin(a, IR_MUL, ir_var_ref(a, dd[h][0]), ir_i32(a, 16)));
        r = ir_bin(a, IR_ADD, r, ir_bin(a, IR_MUL, ir_var_ref(a, dd[h][1]), ir_i32(a, 8)));
        row_of[h] = ir_bin(a, IR_ADD, r, ir_bin(a, IR_FLOORDIV, ln, ir_i32(a, 4)));
    }
    /* phase 1: partials to the scratch */
    IrExpr *slot = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, row_of[0], ir_i32(a, wn)), warpc[0]);
    IrExpr *first = ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORMOD, ir_var_ref(a, t), ir_i32(a, rows ? 32 : 4)), ir_i32(a, 0));
    IrStmt *wr = ir_store(a, sc, &slot, 1, ir_load(a, acc, &z, 1));
    wr->loc = s->loc;
    ir_seq_push(a, cell, op_if(a, s->loc, first, wr, NULL));
    IrStmt *b1 = ir_seq(a);
    ir_seq_push(a, b1, al);
    ir_seq_push(a, b1, cell);
    IrStmt *out = ir_seq(a);
    out->loc = s->loc;
    ir_seq_push(a, out, sal);
    ir_seq_push(a, out, ts_layout_thread_loops(ll->lx, t, dv, ext, 2, b1, s->loc));
    ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, s->loc));
    /* phase 2: every holder of a row combines its wn partials */
    IrVar *c = ir_var(ll->lx->k, "c", TS_INT32, IR_VAR_LOOP);
    IrExpr *base = ir_bin(a, IR_MUL, row_of[1], ir_i32(a, wn));
    IrExpr *rd = ir_bin(a, IR_ADD, base, ir_var_ref(a, c));
    IrExpr *acc_ld = ir_load(a, acc, &z, 1);
    IrStmt *b2 = ir_seq(a);
    IrStmt *al2 = ir_stmt(a, IR_S_ALLOC, s->loc);
    IrExpr *one = ir_i32(a, 1);
    IrBuffer *acc2 = ir_buffer(ll->lx->k, "red", TS_FLOAT32, IR_SCOPE_LOCAL, 1, &one, s->loc);
    al2->alloc.buf = acc2;
    IrExpr *acc2_ld = ir_load(a, acc2, &z, 1);
    (void)acc_ld;
    ir_seq_push(a, b2, al2);
    ir_seq_push(a, b2, ir_store(a, acc2, &z, 1, ir_float(a, idv, TS_FLOAT32)));
    IrStmt *comb = ir_store(a, acc2, &z, 1, combine(a, op->reduce, acc2_ld, ir_load(a, sc, &rd, 1)));
    ir_seq_push(a, b2, ir_for(a, c, ir_i32(a, 0), ir_i32(a, wn), IR_FOR_UNROLL, comb));
    IrVar *from[2] = {dv[0], dv[1]};
    IrExpr *to[2] = {ir_var_ref(a, dv2[0]), ir_var_ref(a, dv2[1])};
    IrExpr *di2 = ir_subst(a, di, from, to, 2);
    IrExpr *res = acc2_ld;
    if (!op->clear) res = combine(a, op->reduce, ir_load(a, ll->reg[fd], &di2, 1), res);
    ir_seq_push(a, b2, ir_store(a, ll->reg[fd], &di2, 1, res));
    for (int i = 0; i < b2->seq.n; i++)
        if (!b2->seq.v[i]->loc.src) b2->seq.v[i]->loc = s->loc;
    for (int i = 0; i < cell->seq.n; i++)
        if (!cell->seq.v[i]->loc.src) cell->seq.v[i]->loc = s->loc;
    ir_seq_push(a, out, ts_layout_thread_loops(ll->lx, t2, dv2, ext, 2, b2, s->loc));
    if (ll->in_loop) ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, s->loc));
    return out;
}

/* T.reduce along the rows of an MMA_C fragment into MMA_ROWS: a thread's
 * partial over its own columns, then the 4 lanes of a row group by
 * shuffles (lane bits 0 and 1); warps in one row (wn > 1) would need
 * shared memory and are left to the generic path. */
IrStmt *ts_op_reduce_lower_layout(TsLayoutLower *ll, IrStmt *s) {
    TsArena *a = ll->lx->arena;
    IrTileOp *op = s->op;
    int fs = ts_layout_frag(ll->lx, op->r[0].buf), fd = ts_layout_frag(ll->lx, op->r[1].buf);
    IrLayout *S = fs >= 0 ? ll->lx->lay[fs] : NULL, *D = fd >= 0 ? ll->lx->lay[fd] : NULL;
    int dim = op->dim < 0 ? op->dim + op->r[0].ndim : op->dim;
    bool mma = S && D && S->kind == IR_LAYOUT_MMA_C && D->kind == IR_LAYOUT_MMA_ROWS && D->p[0] == S->p[0] &&
               D->p[2] == S->p[2] && D->p[3] == S->p[3];
    bool wr = S && D && S->kind == IR_LAYOUT_WARP_ROWS && D->kind == IR_LAYOUT_WARP_ROWS_PROJ && D->p[0] == S->p[0] &&
              D->p[2] == S->p[2] && ir_layout_row_lanes(S) == ir_layout_row_lanes(D) &&
              S->local_shape[0] == D->local_shape[0];
    /* warps sharing each row: > 1 needs shared memory */
    int64_t wn = mma ? S->p[3] : wr ? ir_layout_row_warps(S) : 1;
    if (!(mma || wr) || dim != 1 || !op_region_whole(&op->r[0]) || !op_region_whole(&op->r[1]) || op->r[1].buf->dt != TS_FLOAT32 ||
        !ts_dtype_is_float(op->r[0].buf->dt)) {
        ts_layout_give_up(ll->lx, "T.reduce_%s from %s to %s is not a row reduction of an mma.sync accumulator within warps",
                ts_reduce_name(op->reduce), op->r[0].buf->name, op->r[1].buf->name);
        return s;
    }
    TsDType dt = TS_FLOAT32;
    IrStmt *body = ir_seq(a);
    IrExpr *shp = ir_i32(a, 1);
    IrBuffer *acc = ir_buffer(ll->lx->k, "red", dt, IR_SCOPE_LOCAL, 1, &shp, s->loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
    al->alloc.buf = acc;
    IrVar *t = ir_var(ll->lx->k, "t", TS_INT32, IR_VAR_LOOP);
    IrVar *dv[2] = {ir_var(ll->lx->k, "d", TS_INT32, IR_VAR_LOOP), ir_var(ll->lx->k, "d", TS_INT32, IR_VAR_LOOP)};
    IrVar *jt = ir_var(ll->lx->k, "j", TS_INT32, IR_VAR_LOOP), *el = ir_var(ll->lx->k, "e", TS_INT32, IR_VAR_LOOP);
    IrExpr *z = ir_i32(a, 0);
    IrExpr *acc_ld = ir_load(a, acc, &z, 1);
    double idv = op->reduce == TS_REDUCE_MAX ? -INFINITY : op->reduce == TS_REDUCE_MIN ? INFINITY : 0.0;
    IrStmt *cell = ir_seq(a);
    ir_seq_push(a, cell, ir_store(a, acc, &z, 1, ir_float(a, idv, dt)));
    IrExpr *si, *di;
    int nd, lanes;
    int64_t ext[2];
    IrStmt *inner;
    if (mma) {
        /* dst digits (tile row, half); src register ((d0 * ni + jt) * 2 + d1) * 2 + el;
         * a row's 4 lanes differ in lane bits 0 and 1 */
        int64_t ni = S->local_shape[1];
        si = ir_bin(a, IR_MUL, ir_var_ref(a, dv[0]), ir_i32(a, ni));
        si = ir_bin(a, IR_ADD, si, ir_var_ref(a, jt));
        si = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, si, ir_i32(a, 2)), ir_var_ref(a, dv[1]));
        si = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, si, ir_i32(a, 2)), ir_var_ref(a, el));
        di = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, dv[0]), ir_i32(a, 2)), ir_var_ref(a, dv[1]));
        nd = 2, ext[0] = S->local_shape[0], ext[1] = 2, lanes = 4;
        IrExpr *x = ir_cast(a, dt, ir_load(a, ll->reg[fs], &si, 1));
        if (op->reduce == TS_REDUCE_ABSSUM || op->reduce == TS_REDUCE_ABSMAX) x = ir_call(a, IR_ABS, &x, 1, dt);
        IrStmt *step = ir_store(a, acc, &z, 1, combine(a, op->reduce, acc_ld, x));
        inner = ir_for(a, jt, ir_i32(a, 0), ir_i32(a, ni), IR_FOR_UNROLL,
                       ir_for(a, el, ir_i32(a, 0), ir_i32(a, 2), IR_FOR_UNROLL, step));
    } else {
        /* dst digit (row step in warp); src register d0 * nc + c (a thread's
         * columns of that row: its vectors, consecutive); the L lanes of the
         * row differ in the low lane bits */
        int64_t nc = S->local_size / S->local_shape[0];
        si = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, dv[0]), ir_i32(a, nc)), ir_var_ref(a, jt));
        di = ir_var_ref(a, dv[0]);
        nd = 1, ext[0] = S->local_shape[0], ext[1] = 1, lanes = ir_layout_row_lanes(S);
        if (lanes > 32) lanes = 32; /* (a row over several warps: their partials meet in cross_warp) */
        IrExpr *x = ir_cast(a, dt, ir_load(a, ll->reg[fs], &si, 1));
        if (op->reduce == TS_REDUCE_ABSSUM || op->reduce == TS_REDUCE_ABSMAX) x = ir_call(a, IR_ABS, &x, 1, dt);
        IrStmt *step = ir_store(a, acc, &z, 1, combine(a, op->reduce, acc_ld, x));
        inner = ir_for(a, jt, ir_i32(a, 0), ir_i32(a, nc), IR_FOR_UNROLL, step);
    }
    ir_seq_push(a, cell, inner);
    for (int m = 1; m < lanes; m <<= 1) {
        IrExpr *args[2] = {acc_ld, ir_float(a, m, dt)};
        IrExpr *sh = ir_call(a, IR_SHFL_XOR, args, 2, dt);
        ir_seq_push(a, cell, ir_store(a, acc, &z, 1, combine(a, op->reduce, acc_ld, sh)));
    }
    if (wn > 1) return cross_warp(ll, s, S, wn, acc, al, cell, t, dv, ext, di, idv);
    IrExpr *res = acc_ld;
    if (!op->clear) res = combine(a, op->reduce, ir_load(a, ll->reg[fd], &di, 1), res);
    ir_seq_push(a, cell, ir_store(a, ll->reg[fd], &di, 1, res));
    ir_seq_push(a, body, al);
    ir_seq_push(a, body, cell);
    IrStmt *out = ts_layout_thread_loops(ll->lx, t, dv, ext, nd, body, s->loc);
    for (int i = 0; i < cell->seq.n; i++)
        if (!cell->seq.v[i]->loc.src) cell->seq.v[i]->loc = s->loc;
    return out;
}

/* The source is read; the destination written, and read too when it takes
 * part (clear = 0). */
int ts_op_reduce_regions(const IrTileOp *op, int i) {
    if (i == 0) return IR_ACC_READ;
    return op->clear ? IR_ACC_WRITE : IR_ACC_READ | IR_ACC_WRITE;
}
