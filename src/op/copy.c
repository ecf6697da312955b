/*
 * copy.c — the generic lowering of T.copy.
 *
 * T.copy moves a tile between any two buffers (global <-> shared <->
 * fragment).  Its regions may differ in rank as long as they agree once
 * extents of 1 are dropped: `T.copy(A[by * 64, k * 32], A_shared)` or a
 * row `T.copy(B[k, 0:64], row)` are the common cases.  The lowering is one
 * parallel loop per remaining dim around a single store
 *
 *     dst[dst_start + i...] = cast(src[src_start + i...])
 *
 * Tiles at the edge of a global tensor can hang over its end (M not a
 * multiple of the block size), so every access to a global buffer is
 * guarded: a read outside gives 0 (TileLang pads with zeros), a write
 * outside is skipped.  The guard is an `if` (a select evaluates only its
 * taken side too, but cannot skip a write), which lower_tile_ops drops
 * where the analysis proves it true.
 */
#include "op/op_util.h"

IrStmt *ts_op_copy_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    if (op->nr < 2) ts_internal(cx->diag, "T.copy with %d regions (want 2)", op->nr);
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    OpPair p;
    op_pair_regions(cx, s, "T.copy", src, dst, &p);
    /* A fragment tile copied to or from a region of the same rank keeps its
     * unit dims as loops of extent 1 (RMSNorm's 1 x N row tiles): the loop
     * nest then indexes the fragment by its variables in order, as its
     * T.Parallel loops do, and layout inference sees one tile shape. */
    bool keep = (src->buf->scope == IR_SCOPE_FRAGMENT || dst->buf->scope == IR_SCOPE_FRAGMENT) &&
                src->ndim == dst->ndim && src->ndim <= OP_MAXDIM && p.n < src->ndim;
    for (int d = 0; keep && d < src->ndim; d++)
        keep = op_region_extent(cx, s, "T.copy", src, d) == op_region_extent(cx, s, "T.copy", dst, d);
    if (keep) {
        int all[OP_MAXDIM];
        IrExpr *off[OP_MAXDIM];
        p.n = src->ndim;
        for (int d = 0; d < p.n; d++) all[d] = d, p.ext[d] = op_region_extent(cx, s, "T.copy", src, d);
        op_loop_vars(cx, p.v, p.n, 'i');
        op_var_refs(a, p.v, p.n, off);
        p.src_idx = op_region_index(a, src, all, off, p.n);
        p.dst_idx = op_region_index(a, dst, all, off, p.n);
    }
    IrExpr **si = p.src_idx, **di = p.dst_idx;

    IrExpr *val = ir_cast(a, dst->buf->dt, ir_load(a, src->buf, si, src->ndim));
    IrStmt *body = ir_store(a, dst->buf, di, dst->ndim, val);
    body->loc = s->loc;
    IrExpr *rd = op_in_bounds(a, src->buf, si);
    if (rd) {
        IrStmt *zero = ir_store(a, dst->buf, di, dst->ndim, ir_int(a, 0, dst->buf->dt));
        zero->loc = s->loc;
        body = op_if(a, s->loc, rd, body, zero);
    }
    body = op_if(a, s->loc, op_in_bounds(a, dst->buf, di), body, NULL);
    /* A copy to or from a thread's own registers (T.alloc_local / alloc_var)
     * is that thread's: every thread runs all of its iterations, as in
     * TileLang (its per-thread loop), never spread over the block (each
     * thread would fill one element of its own array). */
    bool own = src->buf->scope == IR_SCOPE_LOCAL || src->buf->scope == IR_SCOPE_VAR ||
               dst->buf->scope == IR_SCOPE_LOCAL || dst->buf->scope == IR_SCOPE_VAR;
    return op_loops(a, s->loc, p.v, p.ext, p.n, own ? IR_FOR_SERIAL : IR_FOR_PARALLEL, body);
}

/* r[0] (the source) is read, r[1] (the destination) written. */
int ts_op_copy_regions(const IrTileOp *op, int i) {
    (void)op;
    return i == 0 ? IR_ACC_READ : IR_ACC_WRITE;
}
