/*
 * verify_target.c — what the lowered IR asks of the target that the target
 * lacks, refused before any code is printed, with the file:line:col of the
 * construct, its source line and an error code (TS_ERR_UNSUPPORTED).  Pass
 * verify_lowered (passes.c) runs it last.
 *
 * Decisions belong in passes; the code generators print what the IR says.
 * Each check here was (or mirrors) a refusal a printer used to make while
 * printing; the printers keep them as internal errors only, so that a pass
 * that lets one through is a compiler bug, not a message the user reads
 * after half a kernel was printed.
 *
 * CUDA:
 *  - a tensor-core gemm in per-thread code (a thread range);
 *  - a block-wide communication barrier (T.barrier_blocks, T.barrier_all)
 *    in per-thread code: every thread of the block must arrive together
 *    (was codegen_cuda.c, emit_comm);
 *  - an atomic add of a communication primitive (T.atom_add, a signal's
 *    add, a put's signal add) on a dtype CUDA's atomics lack: int32/64,
 *    uint32/64, float32/64 only (was comm_cuda.c);
 *  - a swizzled range for T.put/T.get;
 *  - an atomic add on a bool buffer in shared or global memory;
 *  - T.mbarrier_expect_tx below sm_90;
 *  - T.call_extern used as a value of a float narrower than float32 (the
 *    printer keeps such floats as their stored bits; was codegen_cuda.c,
 *    cu_extern);
 *  - a per-thread buffer (T.alloc_local, T.alloc_var, a fragment left in
 *    each thread's registers) of over 2^20 elements (was codegen_cuda.c,
 *    add_buf).
 *
 * C:
 *  - a grid extent that reads a buffer or uses a block index: the C module
 *    computes the grid on the host before any block runs (was
 *    codegen_c.c);
 *  - an atomic add on a bool buffer in global memory, and a communication
 *    primitive's atomic add on a bool buffer (was codegen_c.c, comm_c.c);
 *  - T.sync_grid in a kernel whose threads run as coroutines
 *    (IrKernel.thread_coro, chosen by pass thread_loops_c; was codegen_c.c,
 *    where the error had no location).
 */
#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"
#include "target/cuda/comm_cuda.h"

/* Is the statement being visited inside a thread range (partition_threads'
 * per-thread code)? */
static bool in_thread_range(const IrVisitor *v) {
    for (const IrWalkFrame *f = v->frame; f; f = f->up)
        if (f->s && f->s->kind == IR_S_FOR && f->s->for_.kind == IR_FOR_THREAD) return true;
    return false;
}

/* The buffer a communication primitive adds to atomically (T.atom_add, a
 * signal's add, a put's signal add), or NULL. */
static const IrBuffer *comm_atomic_buf(const IrTileOp *op) {
    if (op->kind != TS_OP_COMM) return NULL;
    if (op->comm == TS_COMM_ATOM_ADD && op->nr >= 1) return op->r[0].buf;
    if (op->comm == TS_COMM_SIGNAL && op->cflags[0] == TS_SIG_ADD && op->nr >= 1) return op->r[0].buf;
    if (op->comm == TS_COMM_PUT && op->nr == 3 && op->cflags[0] == TS_SIG_ADD) return op->r[2].buf;
    return NULL;
}

/* A gemm kept for tensor cores (mma.sync or wgmma): a warp- or
 * warpgroup-wide instruction sequence over the whole block's tiles. */
static bool tensor_core_gemm(const IrStmt *s, void *ctx) {
    const IrStmt **at = ctx;
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_GEMM ||
        (s->op->inst != TS_OP_INST_MMA_SYNC && s->op->inst != TS_OP_INST_WGMMA))
        return false;
    *at = s;
    return true;
}

/* ---- CUDA --------------------------------------------------------------------------- */

static bool cuda_stmt(IrVisitor *v, const IrStmt *s) {
    TsPassCtx *cx = v->ctx;
    /* a tensor-core gemm is run by every thread of the block with the same
     * operands: never inside a thread range (partition_threads' per-thread
     * code: a T.Parallel loop, thread-dependent control flow) */
    const IrStmt *g = NULL;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD && ir_stmt_any(s->for_.body, tensor_core_gemm, &g))
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, g->loc,
                   "T.gemm on tensor cores must be reached by every thread of the block with the same operands "
                   "(not under a T.Parallel loop or thread-dependent control flow); TILESCALE_CUDA_MMA=0 lowers "
                   "it to loops instead");
    if (s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_ARRIVE_ASYNC && cx->caps->sm < 80)
        ts_internal(cx->diag, "kernel %s: cp.async.mbarrier.arrive below sm_80", cx->k->name);
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_COMM) {
        const IrTileOp *op = s->op;
        if (op->comm == TS_COMM_PUT || op->comm == TS_COMM_GET)
            for (int i = 0; i < 2; i++) /* a range moves plain row-major memory */
                if (op->r[i].buf->swizzle.kind != IR_SWIZZLE_NONE)
                    ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                               "T.%s: '%s' has a swizzled layout; a range needs plain row-major addresses",
                               ts_comm_name(op->comm), op->r[i].buf->name);
        if (!ts_cuda_comm_per_thread_ok(op) && in_thread_range(v))
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "T.%s under a T.Parallel loop or thread-dependent control flow is not supported on the CUDA "
                       "target (every thread of the block must arrive together)",
                       ts_comm_name(op->comm));
        const IrBuffer *ab = op->xport ? NULL : comm_atomic_buf(op); /* (NCCL's GIN: lower_comm's to refuse) */
        if (ab && ab->dt != TS_INT32 && ab->dt != TS_UINT32 && ab->dt != TS_INT64 && ab->dt != TS_UINT64 &&
            ab->dt != TS_FLOAT32 && ab->dt != TS_FLOAT64)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "T.%s on %s is not supported on the CUDA target (int32/64, uint32/64, float32/64)",
                       ts_comm_name(op->comm), ts_dtype_name(ab->dt));
    }
    /* an atomic add on bools has no instruction (CUDA: atomics on shared and
     * global memory; private buffers are updated in place) */
    if (s->kind == IR_S_ATOMIC_ADD && s->store.buf->dt == TS_BOOL && s->store.buf->scope != IR_SCOPE_LOCAL &&
        s->store.buf->scope != IR_SCOPE_VAR)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc, "atomic add on a bool buffer ('%s')", s->store.buf->name);
    if (s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_EXPECT_TX && cx->caps->sm < 90)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "T.mbarrier_expect_tx needs sm_90 or later (transaction counts); the target is sm_%d",
                   cx->caps->sm);
    return true;
}

/* An external function's value (T.call_extern used inside an expression,
 * not a call statement of its own) of a float narrower than float32: the
 * CUDA printer keeps such floats as their stored bits (ts_u16, ts_u8), so
 * what a function returning `half_t` or `__nv_bfloat16` gives could not
 * be converted to the number it holds.  A call statement (IR_S_EVAL of
 * the call itself) drops its value and is fine. */
static bool cuda_expr(IrVisitor *v, const IrExpr *e) {
    TsPassCtx *cx = v->ctx;
    if (e->kind != IR_E_CALL || e->call.fn != IR_EXTERN_CALL) return true;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    if (s && s->kind == IR_S_EVAL && s->eval.e == e) return true; /* a call statement: its value unused */
    if (ts_dtype_is_float(e->dt) && e->dt != TS_FLOAT32 && e->dt != TS_FLOAT64)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, e->loc,
                   "T.call_extern('%s') returning %s used as a value: 16-, 8- and 4-bit floats are kept as their "
                   "stored bits on the CUDA target; call it as a statement that writes its result through a "
                   "pointer (T.access_ptr), or return float32",
                   e->call.args[0]->str, ts_dtype_name(e->dt));
    return true;
}

/* Per-thread buffers live in each thread's local memory: at most 2^20
 * elements (stages included), as the printer declares them. */
static void cuda_buffers(TsPassCtx *cx) {
    const IrKernel *k = cx->k;
    for (int i = 0; i < k->buffers.n; i++) {
        const IrBuffer *b = k->buffers.v[i];
        if ((b->scope != IR_SCOPE_LOCAL && b->scope != IR_SCOPE_VAR) || b->addr) continue;
        int64_t elems = 1, ext;
        bool known = true;
        for (int d = 0; d < b->ndim && known; d++) {
            known = b->shape && ir_is_const_int(b->shape[d], &ext) && ext >= 0 && ext <= ((int64_t)1 << 40) &&
                    elems <= ((int64_t)1 << 40) / (ext ? ext : 1);
            if (known) elems *= ext;
        }
        if (!known) continue; /* (the elaborator's extents are constants of at most 2^40 bytes) */
        elems *= b->stages > 1 ? b->stages : 1;
        if (elems > (1 << 20))
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, b->loc,
                       "%s buffer '%s' has %lld elements per thread; the CUDA target allows at most %d",
                       ir_scope_name(b->scope), b->name, (long long)elems, 1 << 20);
    }
}

/* ---- C --------------------------------------------------------------------------------- */

static bool c_stmt(IrVisitor *v, const IrStmt *s) {
    TsPassCtx *cx = v->ctx;
    /* an atomic add on bools: refused on global memory (a block's own
     * buffers are updated in place) and in a primitive's atomics */
    if (s->kind == IR_S_ATOMIC_ADD && s->store.buf->dt == TS_BOOL && s->store.buf->scope == IR_SCOPE_GLOBAL)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc, "atomic add on a bool buffer ('%s')", s->store.buf->name);
    if (s->kind == IR_S_TILEOP) {
        const IrBuffer *ab = comm_atomic_buf(s->op);
        if (ab && ab->dt == TS_BOOL)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc, "T.%s: atomic add on a bool buffer ('%s')",
                       ts_comm_name(s->op->comm), ab->name);
    }
    /* a grid barrier needs every block's threads running to it: the C
     * target's coroutine threads (waiting for each other) cannot */
    if (cx->k->thread_coro && s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL &&
        s->eval.e->call.fn == IR_SYNC_GRID)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "C target: T.sync_grid (a grid barrier) in a kernel whose threads run as coroutines (threads "
                   "waiting for each other) is not supported");
    return true;
}

/* The C module computes the grid on the host, before any block runs: from
 * constants, scalar parameters and shapes, never from a block index or a
 * buffer's element. */
static bool c_grid_expr(IrVisitor *v, const IrExpr *e) {
    TsPassCtx *cx = v->ctx;
    if (e->kind == IR_E_VAR && e->var->kind == IR_VAR_BLOCK_IDX)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, e->loc, "the grid extent uses the block index '%s'", e->var->name);
    if (e->kind == IR_E_LOAD) ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, e->loc, "the grid extent reads a buffer");
    return true;
}

void ts_verify_target(TsPassCtx *cx) {
    if (cx->target == TS_TARGET_CUDA) {
        IrVisitor v = {.ctx = cx, .pre_stmt = cuda_stmt, .pre_expr = cuda_expr};
        ir_visit_stmt(&v, cx->k->body);
        cuda_buffers(cx);
        return;
    }
    IrVisitor g = {.ctx = cx, .pre_expr = c_grid_expr};
    for (int i = 0; i < cx->k->ngrid && i < 3; i++)
        if (cx->k->grid[i]) ir_visit_expr(&g, cx->k->grid[i]);
    IrVisitor v = {.ctx = cx, .pre_stmt = c_stmt};
    ir_visit_stmt(&v, cx->k->body);
}
