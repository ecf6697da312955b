/*
 * lower_copy_cuda.c — T.copy from global to shared memory as thread-level
 * IR on the CUDA target.
 *
 * The generic lowering (op/copy.c) gives a T.Parallel nest of element
 * stores that the code generator spreads over the threads.  Here the copy
 * is decided in the IR instead: the tile is cut into vectors of `lanes`
 * consecutive elements along the last dimension (16 bytes when the row
 * allows, else 8 or 4), vector v of the tile goes to thread v % T (T the
 * block's threads) in round r = v / T, and each thread issues one
 * IR_S_VCOPY per round:
 *
 *     for tx in thread_range(T):
 *         for r in unroll(ceil(NV / T)):
 *             if tx + r * T < NV:            (only when T does not divide NV)
 *                 vcopy<lanes>(dst[.., j0], src[.., j0], if=<in bounds>)
 *
 * Consecutive threads take consecutive vectors of a row, so a warp reads
 * 512 contiguous bytes of a 16-byte-vector row: coalesced.
 *
 * Why the conditions.  A vector must be all inside or all outside the
 * source tensor, since its predicate is one boolean (false: nothing is
 * read and the destination gets zeros, TileLang's padding of partial
 * tiles).  That holds when the vector's first column j0 and the tensor's
 * last extent are multiples of `lanes`: the row length, the destination
 * row start and (for alignment) the shared row stride must be multiples
 * too.  Facts about the destination (a shared buffer: constant shape) are
 * proved here or a smaller vector is taken; facts about the source
 * (run-time shapes, run-time tile starts) that cannot be proved become a
 * run-time test choosing between this and the generic lowering.
 *
 * Contiguity and alignment, decided once.  A tensor parameter without
 * declared strides that a vector copy reads is taken as row-major compact
 * with a data address aligned to the widest vector (IrBuffer.contiguous,
 * .align), as TileLang takes its T.Tensor arguments; the launch checks it
 * (src/runtime/launch.c: a clear error for device tensors, a compact copy
 * for host tensors).  Then every vector is aligned: its column start is a
 * multiple of `lanes` (above) and every stride is a multiple of the last
 * extent, itself a multiple of `lanes`; the VCOPY says so (`aligned`) and
 * the printer emits the move alone, with the strides as constants where
 * the shape is.  Before this, the printer tested the last stride and the
 * address per vector and kept an element-by-element path beside each
 * vector: 8 of them per GEMM main-loop iteration tripled its instruction
 * count.  A parameter with declared strides (or a view of one) keeps the
 * run-time test.  Every vector starts at a multiple of its size within its
 * row and the shared row stride is a multiple of it, so a 16-byte vector
 * is exactly one 16-byte chunk of a row and an XOR swizzle of chunks
 * (IrBuffer.swizzle, applied by the printer to the start) keeps it whole.
 *
 * Barriers.  A plain copy writes shared memory other threads read next,
 * and may overwrite what they still read: it is wrapped in IR_S_BARRIER
 * before and after (conservative, until an insert_sync pass exists).  An
 * async copy (IrTileOp.async, a software-pipeline producer marked by
 * pipeline_planning) gets none: inject_pipeline places the commit, wait
 * and barrier that make its data visible and its slot free.
 */
#include "target/cuda/lower_copy_cuda.h"

#include "ir/arith.h"
#include "op/op_util.h"

/* cond && (e % q == 0), or cond when e is provably a multiple; *bad set
 * when it provably is not. */
static IrExpr *need_multiple(IrArith *ar, TsArena *a, IrExpr *cond, IrExpr *e, int64_t q, int *bad) {
    int m = ir_arith_multiple(ar, e, q); /* 1 yes, 0 provably not, -1 unknown */
    if (m == 1) return cond;
    if (m == 0) {
        *bad = 1;
        return cond;
    }
    IrExpr *c = ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORMOD, e, ir_int(a, q, e->dt)), ir_int(a, 0, e->dt));
    return cond ? ir_bin(a, IR_AND, cond, c) : c;
}

/* (tx + r * T) // inner % ext (ext 0: no modulo), the coordinate of
 * vector tx + r * T along one dimension, with the round's part taken out
 * where T allows: (tx // inner) % ext when rounds move along the outer
 * dimensions only, tx // inner + r * (T / inner) when they move along this
 * one.  A thread's coordinates are then the same in every round but for a
 * constant term, which the printer keeps outside a swizzle and the
 * compiler folds into an immediate address offset (GEMM 4096^3: 201 -> 159
 * SASS instructions per main-loop iteration with the printer's part). */
static IrExpr *split_index(TsArena *a, IrVar *tx, IrVar *rv, int64_t T, int64_t inner, int64_t ext) {
    IrExpr *t = ir_var_ref(a, tx);
    if (rv && T % inner == 0) {
        int64_t q = T / inner;
        IrExpr *x = inner > 1 ? ir_bin(a, IR_FLOORDIV, t, ir_i32(a, inner)) : t;
        if (ext && q % ext == 0) return ir_bin(a, IR_FLOORMOD, x, ir_i32(a, ext));
        if (!ext) return ir_bin(a, IR_ADD, x, ir_bin(a, IR_MUL, ir_var_ref(a, rv), ir_i32(a, q)));
    }
    IrExpr *vid = rv ? ir_bin(a, IR_ADD, t, ir_bin(a, IR_MUL, ir_var_ref(a, rv), ir_i32(a, T))) : t;
    IrExpr *x = inner > 1 ? ir_bin(a, IR_FLOORDIV, vid, ir_i32(a, inner)) : vid;
    return ext ? ir_bin(a, IR_FLOORMOD, x, ir_i32(a, ext)) : x;
}

IrStmt *ts_cuda_lower_copy(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    /* (blocking kernels read global memory through volatile accesses) */
    if (!op || op->kind != TS_OP_COPY || op->nr < 2 || !cx->caps->vec || cx->k->may_block) return NULL;
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    const IrBuffer *sb = src->buf, *db = dst->buf;
    if (sb->scope != IR_SCOPE_GLOBAL || db->scope != IR_SCOPE_SHARED || sb->dt != db->dt) return NULL;
    int bits = ts_dtype_bits(db->dt);
    if (bits % 8 || bits < 8 || bits > 64 || sb->ndim < 1 || db->ndim < 1) return NULL;
    int es = bits / 8;
    int64_t c;
    for (int d = 0; d < src->ndim; d++)
        if (!ir_is_const_int(src->extent[d], &c)) return NULL;
    for (int d = 0; d < dst->ndim; d++)
        if (!ir_is_const_int(dst->extent[d], &c)) return NULL;
    int sd[OP_MAXDIM], dd[OP_MAXDIM];
    int64_t se[OP_MAXDIM], de[OP_MAXDIM];
    int n = op_region_shape(cx, s, "T.copy", src, sd, se);
    if (n != op_region_shape(cx, s, "T.copy", dst, dd, de) || n == 0) return NULL;
    for (int j = 0; j < n; j++)
        if (se[j] != de[j]) return NULL; /* the generic lowering reports it */
    int slast = sb->ndim - 1, dlast = db->ndim - 1;
    if (sd[n - 1] != slast || dd[n - 1] != dlast) return NULL; /* rows are not the contiguous dim */
    int64_t row = se[n - 1], drow;
    if (!ir_is_const_int(db->shape[dlast], &drow)) return NULL;

    /* the widest vector whose facts hold or can be tested */
    IrArith ar;
    ir_arith_init(&ar, a, cx->k);
    int lanes = 0;
    IrExpr *test = NULL;
    for (int bytes = 16; bytes >= 4 && !lanes; bytes /= 2) {
        int64_t q = bytes / es;
        if (q < 1 || bytes % es || row % q || drow % q) continue;
        int bad = 0;
        if (ir_arith_multiple(&ar, dst->start[dlast], q) != 1) continue;
        IrExpr *t = need_multiple(&ar, a, NULL, src->start[slast], q, &bad);
        t = need_multiple(&ar, a, t, sb->shape[slast], q, &bad);
        if (bad) continue;
        lanes = (int)q;
        test = t;
    }
    if (!lanes) return NULL;

    /* vectors, threads, rounds */
    int64_t nv = row / lanes, T = ir_kernel_nthreads(cx->k);
    for (int j = 0; j < n - 1; j++) {
        if (nv > ((int64_t)1 << 30) / (se[j] ? se[j] : 1)) return NULL;
        nv *= se[j];
    }
    if (nv < 1 || T < 1) return NULL;
    int64_t rounds = (nv + T - 1) / T;
    IrVar *tx = op_loop_var(cx, "tx"), *rv = rounds > 1 ? op_loop_var(cx, "r") : NULL;
    IrExpr *vid = ir_var_ref(a, tx);
    if (rv) vid = ir_bin(a, IR_ADD, vid, ir_bin(a, IR_MUL, ir_var_ref(a, rv), ir_i32(a, T)));
    IrExpr *off[OP_MAXDIM];
    int64_t inner = 1;
    for (int j = n - 1; j >= 0; j--) {
        int64_t ext = j == n - 1 ? row / lanes : se[j];
        IrExpr *x = split_index(a, tx, rv, T, inner, j > 0 ? ext : 0); /* vid < nv: no wrap outermost */
        if (j == n - 1 && lanes > 1) x = ir_bin(a, IR_MUL, x, ir_i32(a, lanes));
        off[j] = x;
        inner *= ext;
    }
    IrExpr **si = op_region_index(a, src, sd, off, n);
    IrExpr **di = op_region_index(a, dst, dd, off, n);

    IrStmt *vc = ir_stmt(a, IR_S_VCOPY, s->loc);
    vc->vcopy.dst = (IrBuffer *)db;
    vc->vcopy.src = (IrBuffer *)sb;
    vc->vcopy.didx = di;
    vc->vcopy.sidx = si;
    vc->vcopy.ndi = db->ndim;
    vc->vcopy.nsi = sb->ndim;
    vc->vcopy.lanes = lanes;
    vc->vcopy.async = op->async != 0;
    if (sb->param >= 0 && !sb->strides) {
        /* the launch contract above; a wider vector elsewhere raises it */
        IrBuffer *gb = (IrBuffer *)sb;
        gb->contiguous = 1;
        if (gb->align < lanes * es) gb->align = lanes * es;
        vc->vcopy.aligned = 1;
    }
    /* in bounds, simplified over the thread and round ranges */
    IrExpr *pred = op_in_bounds(a, sb, si);
    if (pred) {
        ir_arith_bind(&ar, tx, 0, T - 1);
        if (rv) ir_arith_bind(&ar, rv, 0, rounds - 1);
        pred = ir_arith_simplify(&ar, pred);
        int64_t pc;
        if (ir_is_const_int(pred, &pc) && pc) pred = NULL;
    }
    vc->vcopy.pred = pred;
    IrStmt *body = vc;
    if (rounds * T != nv) body = op_if(a, s->loc, ir_bin(a, IR_LT, vid, ir_i32(a, nv)), body, NULL);
    if (rv) {
        /* unrolled so that a thread's copies are in flight together; a
         * long loop (few threads, a big tile) stays a loop */
        body = ir_for(a, rv, ir_i32(a, 0), ir_i32(a, rounds), rounds <= 16 ? IR_FOR_UNROLL : IR_FOR_SERIAL, body);
        body->loc = s->loc;
    }
    IrStmt *thr = ir_for(a, tx, ir_i32(a, 0), ir_i32(a, T), IR_FOR_THREAD, body);
    thr->loc = s->loc;

    IrStmt *res = thr;
    if (!op->async) {
        res = ir_seq(a);
        res->loc = s->loc;
        ir_seq_push(a, res, ir_stmt(a, IR_S_BARRIER, s->loc));
        ir_seq_push(a, res, thr);
        ir_seq_push(a, res, ir_stmt(a, IR_S_BARRIER, s->loc));
    }
    if (test) test = ir_arith_simplify(&ar, test);
    int64_t tc;
    if (test && ir_is_const_int(test, &tc)) test = tc ? NULL : test; /* (never false: checked above) */
    if (test) res = op_if(a, s->loc, test, res, ts_op_copy_lower(cx, s));
    return res;
}
