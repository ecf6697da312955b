/*
 * coll.c — the tile-level collectives (TS_OP_COLL: T.allreduce,
 * T.allgather, T.reduce_scatter, T.all_to_all): the regions they read and
 * write, and their expansion into copies, barriers and loops.
 *
 * Why an op and not the elaborator's expansion: the elaborator decides
 * only what the user asked (which collective, which buffers, which
 * reduction, between which units) and checks the shapes; how it is done
 * (scratch slots, barriers, rounds of tiles over the blocks, pulls and
 * pushes) is a decision of the compiler, taken by the pass lower_coll
 * (pass/lower_coll.c), which replaces every COLL op by what this file
 * builds.  Until then the passes see one op with its regions
 * (ts_op_coll_regions), and --dump-after shows the op before and the
 * expansion after.  lower_coll runs after pipeline_planning (CUDA: it
 * plans a T.Pipelined loop around a collective with the op's regions) and
 * before shared_to_fragment and lower_tile_ops, which then treat the
 * expansion as they treated it when the elaborator wrote it: the
 * generated code is the same, up to the names of the variables and
 * buffers the expansion makes (numbered after the kernel's own now) and
 * the order of its staging tiles in shared memory (after the pipeline's
 * multi-buffered tiles now, which pipeline_planning makes first).
 *
 * Semantics (doc/DISTRIBUTED.md):
 *   allreduce(buf, op)            every one's buf = op over all of buf (in place)
 *   allgather(src, dst)           dst[p * rows(src) + i] = src_p[i]
 *   reduce_scatter(src, dst, op)  dst[i] = op over p of src_p[me * rows(dst) + i]
 *   all_to_all(src, dst)          chunk = rows(src) / n: dst[p * chunk + i] = src_p[me * chunk + i]
 * where p runs over the ranks of the world, or over the units (warps,
 * warpgroups) of one block.  Reductions fold in order 0, 1, ..., n - 1, in
 * float32 for narrow floats, so every participant gets the same bits.
 *
 * Between units (coll_units = n > 0): every unit copies its tile into its
 * slot of the call site's shared scratch [n, ...] (r[2], made and
 * allocated by the elaborator, shared by the n units' ops), a barrier of
 * the whole block (every unit takes part, reached from each unit's own
 * role code: not aligned), each unit computes its result from the slots
 * with a parallel loop over its own tile, a second barrier so that a later
 * use of the scratch (the same collective in a loop) cannot overwrite a
 * slot another unit still reads.
 *
 * Between ranks (coll_units 0): every block of every rank takes tiles of R
 * whole rows (R divides the rows, R * row size <= 4096 elements) in rounds
 * t = round * blocks + block, with world barriers between the phases:
 * allgather and all_to_all push each tile to its place on the peers;
 * allreduce and reduce_scatter pull every peer's tile into a staging tile
 * and fold it into an accumulator, then write it.
 */
#include <math.h>
#include <string.h>

#include "op/comm.h"
#include "op/op.h"

/* Which regions are read and written: src read, dst written (allreduce:
 * the same buffer, both), the units' scratch both. */
int ts_op_coll_regions(const IrTileOp *op, int i) {
    if (op->coll == TS_COLL_ALLREDUCE || i >= 2) return IR_ACC_READ | IR_ACC_WRITE;
    return i == 0 ? IR_ACC_READ : IR_ACC_WRITE;
}

static IrBinOp coll_binop(const IrTileOp *op) {
    return op->reduce == TS_REDUCE_MAX ? IR_MAX : op->reduce == TS_REDUCE_MIN ? IR_MIN : IR_ADD;
}

static IrStmt *new_tileop(TsArena *a, TsOpKind kind, TsLoc loc) {
    IrStmt *s = ir_stmt(a, IR_S_TILEOP, loc);
    s->op = TS_NEW(a, IrTileOp);
    s->op->kind = kind;
    return s;
}

/* A barrier of every unit (the whole block): a named one of the block's
 * thread count (bar.sync 1, threads), which insert_sync leaves as it is
 * (the roles' own barriers are numbered above it) and which the units
 * reach from their own roles' code. */
static IrStmt *block_barrier(TsLowerCtx *cx, TsLoc loc) {
    IrStmt *s = ir_stmt(cx->arena, IR_S_BARRIER, loc);
    s->barrier.id = 1;
    s->barrier.count = (int)ir_kernel_nthreads(cx->k);
    return s;
}

/* ---- between the units of a block ------------------------------------------------ */

/* Up to this many units a reduction's fold is one expression per element;
 * beyond (blocks of a grid), a loop over the slots. */
#define SLOTS_UNROLLED 8

static IrBuffer *staging(TsLowerCtx *cx, IrStmt *out, const char *name, TsDType dt, int ndim, IrExpr **shape,
                         TsLoc loc);

/* A grid barrier (T.sync_grid's statement; split_grid made the kernel
 * cooperative): every thread of every block of the grid arrives first. */
static IrStmt *grid_barrier(TsLowerCtx *cx, TsLoc loc) {
    IrStmt *s = ir_stmt(cx->arena, IR_S_EVAL, loc);
    s->eval.e = ir_call(cx->arena, IR_SYNC_GRID, NULL, 0, TS_INT32);
    return s;
}

/* The slots form, for the units of a block (scratch S in shared memory,
 * block barriers) and for the blocks of the grid (S in the grid
 * workspace, grid barriers): n units, g this one's index; appended to out. */
static IrStmt *slots_lower(TsLowerCtx *cx, const IrStmt *s, IrStmt *out, int n, IrBuffer *S, IrExpr *g,
                           IrStmt *(*barrier)(TsLowerCtx *, TsLoc)) {
    TsArena *a = cx->arena;
    const IrTileOp *o = s->op;
    TsLoc loc = s->loc;
    IrBuffer *src = o->r[0].buf, *dst = o->r[1].buf;
    int64_t rs = 0, rd = 0;
    ir_is_const_int(src->shape[0], &rs);
    ir_is_const_int(dst->shape[0], &rd);
    if (src->ndim > 7 || rs <= 0 || rd <= 0)
        ts_internal(cx->diag, "lower_coll: %s between units on tiles of unexpected shape", ts_coll_name(o->coll));
    /* 1. my tile into my slot */
    IrStmt *cp = new_tileop(a, TS_OP_COPY, loc);
    cp->op->r[0] = ir_region_full(a, src);
    IrRegion slot = ir_region_full(a, S);
    slot.start[0] = g;
    slot.extent[0] = ir_i32(a, 1);
    cp->op->r[1] = slot;
    cp->op->nr = 2;
    ir_seq_push(a, out, cp);
    ir_seq_push(a, out, barrier(cx, loc));
    /* 2. dst[idx] from the slots, a parallel loop over dst */
    int nd = dst->ndim;
    IrVar *v[8];
    IrExpr **idx = TS_NEWN(a, IrExpr *, nd), **sidx = TS_NEWN(a, IrExpr *, nd + 1);
    for (int i = 0; i < nd; i++) {
        v[i] = ir_var(cx->k, "ui", TS_INT32, IR_VAR_LOOP);
        idx[i] = ir_var_ref(a, v[i]);
        sidx[i + 1] = idx[i];
    }
    IrExpr *val = NULL;
    if ((o->coll == TS_COLL_ALLREDUCE || o->coll == TS_COLL_REDUCE_SCATTER) && n > SLOTS_UNROLLED) {
        /* many units (blocks): the fold as a loop over the slots, into dst
         * where it has the accumulation type, else into a staging tile */
        TsDType accdt = ts_dtype_is_float(src->dt) && src->dt != TS_FLOAT64 ? TS_FLOAT32 : src->dt;
        if (o->coll == TS_COLL_REDUCE_SCATTER) sidx[1] = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, g, ir_i32(a, rd)), idx[0]);
        IrBuffer *acc = dst->dt == accdt ? dst : staging(cx, out, "coll_acc", accdt, nd, dst->shape, loc);
        IrVar *uv = ir_var(cx->k, "slot", TS_INT32, IR_VAR_LOOP);
        for (int phase = 0; phase < (acc == dst ? 2 : 3); phase++) {
            IrExpr **si = TS_NEWN(a, IrExpr *, nd + 1);
            memcpy(si, sidx, sizeof(IrExpr *) * (size_t)(nd + 1));
            si[0] = phase == 0 ? ir_i32(a, 0) : ir_var_ref(a, uv);
            IrExpr *x = ir_load(a, S, si, nd + 1);
            if (x->dt != accdt) x = ir_cast(a, accdt, x);
            IrBuffer *to = phase == 2 ? dst : acc;
            if (phase == 1) x = ir_bin(a, coll_binop(o), ir_load(a, acc, idx, nd), x);
            if (phase == 2) x = ir_load(a, acc, idx, nd);
            if (x->dt != to->dt) x = ir_cast(a, to->dt, x);
            IrStmt *st = ir_store(a, to, idx, nd, x);
            st->loc = loc;
            /* (each phase its own loop variables: a variable is bound by one loop) */
            IrVar *pv[8];
            IrExpr **pidx = TS_NEWN(a, IrExpr *, nd);
            for (int i = 0; i < nd; i++) {
                pv[i] = ir_var(cx->k, "ui", TS_INT32, IR_VAR_LOOP);
                pidx[i] = ir_var_ref(a, pv[i]);
            }
            st = ir_stmt_subst(a, st, v, pidx, nd);
            for (int i = nd - 1; i >= 0; i--) {
                st = ir_for(a, pv[i], ir_i32(a, 0), dst->shape[i], IR_FOR_PARALLEL, st);
                st->loc = loc;
            }
            if (phase == 1) {
                st = ir_for(a, uv, ir_i32(a, 1), ir_i32(a, n - 1), IR_FOR_SERIAL, st); /* (start, extent) */
                st->loc = loc;
            }
            ir_seq_push(a, out, st);
        }
        ir_seq_push(a, out, barrier(cx, loc));
        return out;
    }
    if (o->coll == TS_COLL_ALLREDUCE || o->coll == TS_COLL_REDUCE_SCATTER) {
        TsDType accdt = ts_dtype_is_float(src->dt) && src->dt != TS_FLOAT64 ? TS_FLOAT32 : src->dt;
        if (o->coll == TS_COLL_REDUCE_SCATTER) sidx[1] = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, g, ir_i32(a, rd)), idx[0]);
        for (int u = 0; u < n; u++) {
            IrExpr **si = TS_NEWN(a, IrExpr *, nd + 1);
            memcpy(si, sidx, sizeof(IrExpr *) * (size_t)(nd + 1));
            si[0] = ir_i32(a, u);
            IrExpr *x = ir_load(a, S, si, nd + 1);
            if (x->dt != accdt) x = ir_cast(a, accdt, x);
            val = val ? ir_bin(a, coll_binop(o), val, x) : x;
        }
    } else {
        /* allgather: row r of dst is row r % rs of unit r / rs's tile;
         * all_to_all: row r is row g * chunk + r % chunk of unit r / chunk's */
        int64_t per = o->coll == TS_COLL_ALLGATHER ? rs : rs / n;
        sidx[0] = ir_bin(a, IR_FLOORDIV, idx[0], ir_i32(a, per));
        sidx[1] = ir_bin(a, IR_FLOORMOD, idx[0], ir_i32(a, per));
        if (o->coll == TS_COLL_ALL_TO_ALL) sidx[1] = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, g, ir_i32(a, per)), sidx[1]);
        val = ir_load(a, S, sidx, nd + 1);
    }
    if (val->dt != dst->dt) val = ir_cast(a, dst->dt, val);
    IrStmt *body = ir_store(a, dst, idx, nd, val);
    body->loc = loc;
    for (int i = nd - 1; i >= 0; i--) {
        body = ir_for(a, v[i], ir_i32(a, 0), dst->shape[i], IR_FOR_PARALLEL, body);
        body->loc = loc;
    }
    ir_seq_push(a, out, body);
    ir_seq_push(a, out, barrier(cx, loc));
    return out;
}

static IrStmt *unit_lower(TsLowerCtx *cx, const IrStmt *s) {
    const IrTileOp *o = s->op;
    return slots_lower(cx, s, ir_seq(cx->arena), o->coll_units, o->r[2].buf, o->args[0], block_barrier);
}

static void block_linear(TsLowerCtx *cx, IrExpr **id, IrExpr **count);

/* Between the blocks of the grid (coll_units -1; the kernel is cooperative,
 * its grid constant: split_grid and the elaborator checked): the slots
 * [blocks, src's shape...] are this call site's bytes of the grid
 * workspace, after the barrier's words and earlier call sites' slots,
 * reached through a T.make_tensor-style buffer whose address a let binds
 * at the start of the expansion. */
static IrStmt *block_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    IrKernel *k = cx->k;
    const IrTileOp *o = s->op;
    IrBuffer *src = o->r[0].buf;
    int64_t n = 1, elems = 1;
    for (int i = 0; i < k->ngrid; i++) {
        int64_t e = 0;
        if (!ir_is_const_int(k->grid[i], &e) || e < 1)
            ts_internal(cx->diag, "lower_coll: %s between blocks on a grid of run-time extents", ts_coll_name(o->coll));
        n *= e;
    }
    if (!k->cooperative) ts_internal(cx->diag, "lower_coll: %s between blocks of a kernel not cooperative", ts_coll_name(o->coll));
    int nd = src->ndim;
    IrExpr **shape = TS_NEWN(a, IrExpr *, nd + 1);
    IrExpr **strides = TS_NEWN(a, IrExpr *, nd + 1);
    shape[0] = ir_i32(a, n);
    for (int i = 0; i < nd; i++) shape[i + 1] = src->shape[i];
    for (int i = nd; i >= 0; i--) {
        int64_t e = 0;
        strides[i] = ir_int(a, elems, TS_INT64);
        ir_is_const_int(shape[i], &e);
        elems *= e;
    }
    if (k->grid_ws_bytes < TS_GRID_BAR_BYTES) k->grid_ws_bytes = TS_GRID_BAR_BYTES;
    int64_t off = k->grid_ws_bytes;
    k->grid_ws_bytes += (elems * ts_dtype_bits(src->dt) / 8 + 63) / 64 * 64;
    IrStmt *out = ir_seq(a);
    IrVar *var = ir_var(k, "coll_ws_addr", TS_INT64, IR_VAR_LET);
    IrStmt *let = ir_stmt(a, IR_S_LET, s->loc);
    let->let.var = var;
    let->let.value = ir_bin(a, IR_ADD, ir_call(a, IR_GRID_WS, NULL, 0, TS_INT64), ir_int(a, off, TS_INT64));
    ir_seq_push(a, out, let);
    IrBuffer *S = ir_buffer(k, "coll_slots", src->dt, IR_SCOPE_GLOBAL, nd + 1, shape, s->loc);
    S->strides = strides;
    S->addr = var;
    IrExpr *bid, *nb;
    block_linear(cx, &bid, &nb);
    return slots_lower(cx, s, out, (int)n, S, bid, grid_barrier);
}

/* ---- between the ranks of the world ---------------------------------------------- */

static IrExpr *rank_ref(TsLowerCtx *cx, int axis) {
    IrVar *v = ir_var(cx->k, axis ? "num_ranks" : "rank", TS_INT32, IR_VAR_RANK);
    v->axis = axis;
    return ir_var_ref(cx->arena, v);
}

/* Linear index and count of the grid's blocks. */
static void block_linear(TsLowerCtx *cx, IrExpr **id, IrExpr **count) {
    TsArena *a = cx->arena;
    IrKernel *k = cx->k;
    *id = ir_var_ref(a, k->block_idx[0]);
    *count = k->grid[0];
    for (int i = 1; i < k->ngrid; i++) {
        *id = ir_bin(a, IR_ADD, *id, ir_bin(a, IR_MUL, ir_var_ref(a, k->block_idx[i]), *count));
        *count = ir_bin(a, IR_MUL, *count, k->grid[i]);
    }
}

/* A staging tile in shared memory (every thread of a GPU block must reach
 * every element: thread 0 receives, all combine), allocated in out. */
static IrBuffer *staging(TsLowerCtx *cx, IrStmt *out, const char *name, TsDType dt, int ndim, IrExpr **shape,
                         TsLoc loc) {
    IrBuffer *b = ir_buffer(cx->k, name, dt, IR_SCOPE_SHARED, ndim, shape, loc);
    IrStmt *al = ir_stmt(cx->arena, IR_S_ALLOC, loc);
    al->alloc.buf = b;
    ir_seq_push(cx->arena, out, al);
    return b;
}

/* A region of b: rows [row, row + R) and everything else. */
static IrRegion rows_of(TsArena *a, IrBuffer *b, IrExpr *row, int64_t R) {
    IrRegion r = {b, b->ndim, TS_NEWN(a, IrExpr *, b->ndim), TS_NEWN(a, IrExpr *, b->ndim)};
    for (int i = 0; i < b->ndim; i++) {
        r.start[i] = i ? ir_i32(a, 0) : row;
        r.extent[i] = i ? b->shape[i] : ir_i32(a, R);
    }
    return r;
}

/* acc = acc (op) tmp, elementwise (both tiles of one shape). */
static IrStmt *combine(TsLowerCtx *cx, IrBuffer *acc, IrBuffer *tmp, IrBinOp op, TsLoc loc) {
    TsArena *a = cx->arena;
    int n = acc->ndim;
    IrVar *v[8];
    IrExpr **idx = TS_NEWN(a, IrExpr *, n);
    for (int i = 0; i < n; i++) {
        v[i] = ir_var(cx->k, "ci", TS_INT32, IR_VAR_LOOP);
        idx[i] = ir_var_ref(a, v[i]);
    }
    IrExpr *x = ir_load(a, tmp, idx, n);
    if (x->dt != acc->dt) x = ir_cast(a, acc->dt, x);
    IrStmt *body = ir_store(a, acc, idx, n, ir_bin(a, op, ir_load(a, acc, idx, n), x));
    body->loc = loc;
    for (int i = n - 1; i >= 0; i--) {
        body = ir_for(a, v[i], ir_i32(a, 0), acc->shape[i], IR_FOR_PARALLEL, body);
        body->loc = loc;
    }
    return body;
}

static IrStmt *rank_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *o = s->op;
    TsLoc loc = s->loc;
    int c = o->coll;
    IrBinOp op = coll_binop(o);
    IrBuffer *src = o->r[0].buf, *dst = o->r[1].buf;
    int64_t rows_s = 0, rows_d = 0, rest = 1;
    ir_is_const_int(src->shape[0], &rows_s);
    ir_is_const_int(dst->shape[0], &rows_d);
    for (int i = 1; i < src->ndim; i++) {
        int64_t e = 1;
        ir_is_const_int(src->shape[i], &e);
        rest *= e;
    }
    if (src->ndim > 7 || rows_s <= 0 || rows_d <= 0)
        ts_internal(cx->diag, "lower_coll: %s over ranks on tensors of unexpected shape", ts_coll_name(c));
    IrStmt *out = ir_seq(a);
    int64_t rows = c == TS_COLL_ALLREDUCE || c == TS_COLL_ALLGATHER ? rows_s : rows_d; /* rows each rank handles */
    int64_t R = 1;
    if (c != TS_COLL_ALL_TO_ALL)
        for (int64_t r = 1; r <= rows; r++)
            if (rows % r == 0 && r * rest <= 4096) R = r;
    if (c == TS_COLL_ALL_TO_ALL) rows = rows_s;
    int64_t ntiles = rows / R;
    IrExpr *bid, *nb;
    block_linear(cx, &bid, &nb);
    IrExpr *me = rank_ref(cx, 0), *np = rank_ref(cx, 1);
    IrExpr **tshape = TS_NEWN(a, IrExpr *, src->ndim);
    tshape[0] = ir_i32(a, R);
    for (int i = 1; i < src->ndim; i++) tshape[i] = src->shape[i];
    TsDType accdt = ts_dtype_is_float(src->dt) ? TS_FLOAT32 : src->dt;
    if (src->dt == TS_FLOAT64) accdt = TS_FLOAT64;
    IrBuffer *tmp = NULL, *acc = NULL;
    if (c == TS_COLL_ALLREDUCE || c == TS_COLL_REDUCE_SCATTER) {
        tmp = staging(cx, out, "coll_tmp", src->dt, src->ndim, tshape, loc);
        acc = staging(cx, out, "coll_acc", accdt, src->ndim, tshape, loc);
    }
    /* for k in rounds: t = k * blocks + block */
    IrVar *kv = ir_var(cx->k, "round", TS_INT32, IR_VAR_LOOP);
    IrExpr *rounds = ir_bin(a, IR_FLOORDIV, ir_bin(a, IR_ADD, ir_i32(a, ntiles), ir_bin(a, IR_SUB, nb, ir_i32(a, 1))), nb);
    IrStmt *body = ir_seq(a);
    IrStmt *loop = ir_for(a, kv, ir_i32(a, 0), rounds, IR_FOR_SERIAL, body);
    loop->loc = loc;
    IrExpr *t = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, kv), nb), bid);
    IrExpr *live = ir_bin(a, IR_LT, t, ir_i32(a, ntiles));
    IrExpr *row = ir_bin(a, IR_MUL, t, ir_i32(a, R));
    IrVar *pv = ir_var(cx->k, "peer", TS_INT32, IR_VAR_LOOP);
    IrExpr *p = ir_var_ref(a, pv);
    if (c == TS_COLL_ALLGATHER || c == TS_COLL_ALL_TO_ALL) {
        /* push: for every peer, my tile to its place on the peer */
        IrStmt *pb;
        if (c == TS_COLL_ALLGATHER) {
            IrExpr *drow = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, me, ir_i32(a, rows_s)), row);
            pb = ts_comm_remote_copy(a, rows_of(a, src, row, R), rows_of(a, dst, drow, R), p, 0, loc);
        } else {
            /* row t of src goes to rank t / chunk, row rank * chunk + t % chunk */
            IrExpr *chunk = ir_bin(a, IR_FLOORDIV, ir_i32(a, rows_s), np);
            IrExpr *to = ir_bin(a, IR_FLOORDIV, row, chunk);
            IrExpr *drow = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, me, chunk), ir_bin(a, IR_FLOORMOD, row, chunk));
            pb = ts_comm_remote_copy(a, rows_of(a, src, row, 1), rows_of(a, dst, drow, 1), to, 0, loc);
        }
        IrStmt *inner = pb;
        if (c == TS_COLL_ALLGATHER) {
            inner = ir_for(a, pv, ir_i32(a, 0), np, IR_FOR_SERIAL, pb);
            inner->loc = loc;
        }
        IrStmt *iff = ir_stmt(a, IR_S_IF, loc);
        iff->if_.cond = live;
        iff->if_.then = inner;
        ir_seq_push(a, body, iff);
        ir_seq_push(a, out, loop);
        ir_seq_push(a, out, ts_comm_stmt(a, TS_COMM_BARRIER_ALL, loc));
        return out;
    }
    /* pull and combine: one barrier first (every rank's src is complete);
     * per round acc = op over peers of their tile, then the write.  In
     * place (allreduce) a barrier per round between pull and write: no rank
     * overwrites a tile a peer may still pull (rounds are the same tiles on
     * every rank; later rounds never read earlier rounds' tiles).  Otherwise
     * one barrier at the end, so that src may be reused once the collective
     * returns.  (Before: two barriers per round, which dominated: 32 MiB
     * reduce-scatter 0.56 ms on 2 ranks of the H200, 16 rounds.) */
    ir_seq_push(a, out, ts_comm_stmt(a, TS_COMM_BARRIER_ALL, loc));
    IrStmt *work = ir_seq(a);
    IrStmt *fill = new_tileop(a, TS_OP_FILL, loc);
    fill->op->r[0] = ir_region_full(a, acc);
    fill->op->nr = 1;
    fill->op->value = op == IR_ADD ? (ts_dtype_is_float(accdt) ? ir_float(a, 0, accdt) : ir_int(a, 0, accdt))
                      : ts_dtype_is_float(accdt) ? ir_float(a, op == IR_MAX ? -INFINITY : INFINITY, accdt)
                      : ir_int(a, op == IR_MAX ? INT64_MIN / 2 : INT64_MAX / 2, accdt);
    ir_seq_push(a, work, fill);
    IrExpr *srow = c == TS_COLL_ALLREDUCE ? row : ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, me, ir_i32(a, rows_d)), row);
    IrStmt *per = ir_seq(a);
    ir_seq_push(a, per, ts_comm_remote_copy(a, rows_of(a, src, srow, R), ir_region_full(a, tmp), p, 1, loc));
    ir_seq_push(a, per, combine(cx, acc, tmp, op, loc));
    IrStmt *pl = ir_for(a, pv, ir_i32(a, 0), np, IR_FOR_SERIAL, per);
    pl->loc = loc;
    ir_seq_push(a, work, pl);
    IrStmt *iff = ir_stmt(a, IR_S_IF, loc);
    iff->if_.cond = live;
    iff->if_.then = work;
    ir_seq_push(a, body, iff);
    if (c == TS_COLL_ALLREDUCE) ir_seq_push(a, body, ts_comm_stmt(a, TS_COMM_BARRIER_ALL, loc));
    IrStmt *wr = new_tileop(a, TS_OP_COPY, loc);
    wr->op->r[0] = ir_region_full(a, acc);
    wr->op->r[1] = rows_of(a, dst, row, R);
    wr->op->nr = 2;
    IrStmt *iff2 = ir_stmt(a, IR_S_IF, loc);
    iff2->if_.cond = live;
    iff2->if_.then = wr;
    ir_seq_push(a, body, iff2);
    ir_seq_push(a, out, loop);
    if (c != TS_COLL_ALLREDUCE) ir_seq_push(a, out, ts_comm_stmt(a, TS_COMM_BARRIER_ALL, loc));
    return out;
}

/* The expansion of one COLL op: a sequence (lower_coll splices it into the
 * enclosing one). */
IrStmt *ts_op_coll_lower(TsLowerCtx *cx, const IrStmt *s) {
    return s->op->coll_units > 0 ? unit_lower(cx, s) : s->op->coll_units < 0 ? block_lower(cx, s) : rank_lower(cx, s);
}
