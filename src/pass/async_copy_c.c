/*
 * async_copy_c.c — the C target's form of explicit asynchronous copies
 * (T.ptx_cp_async, T.ptx_commit_group, T.ptx_wait_group; elab/builtins.c).
 *
 * On CUDA an async IR_S_VCOPY is a cp.async that lands later: after the
 * thread's wait for its group, or at the arrival T.cp_async_barrier_noinc
 * makes.  The C target runs tile-level IR (a block as one thread of
 * control, or its threads as coroutines) and has no vector copies: here
 * each such copy becomes what it means once it has landed, a loop of
 * element stores
 *
 *     for e in serial(lanes): dst[..., j + e] = pred ? src[..., i + e] : 0
 *
 * at the copy's own place (it lands at once), and the group commits and
 * waits are dropped (every group is complete when it is waited for).  An
 * arrival made when the copies have landed (IR_MBAR_ARRIVE_ASYNC) is then
 * a plain arrive, which the C printer and the block-level interpreter
 * already make of it.  Runs first thing after simplify, so that every
 * later C pass (thread_loops_c puts per-thread stores in thread ranges)
 * sees plain stores.
 */
#include "ir/walk.h"
#include "pass/pass.h"

static IrStmt *lower_post(IrMutator *m, IrStmt *s) {
    IrKernel *k = m->ctx;
    TsArena *a = m->arena;
    if (s->kind == IR_S_ASYNC_COMMIT || s->kind == IR_S_ASYNC_WAIT) return NULL;
    if (s->kind != IR_S_VCOPY) return s;
    IrVar *e = ir_var(k, "cp_e", TS_INT32, IR_VAR_LOOP);
    IrExpr **di = TS_NEWN(a, IrExpr *, s->vcopy.ndi), **si = TS_NEWN(a, IrExpr *, s->vcopy.nsi);
    for (int d = 0; d < s->vcopy.ndi; d++) di[d] = s->vcopy.didx[d];
    for (int d = 0; d < s->vcopy.nsi; d++) si[d] = s->vcopy.sidx[d];
    di[s->vcopy.ndi - 1] = ir_bin(a, IR_ADD, di[s->vcopy.ndi - 1], ir_var_ref(a, e));
    si[s->vcopy.nsi - 1] = ir_bin(a, IR_ADD, si[s->vcopy.nsi - 1], ir_var_ref(a, e));
    IrExpr *v = ir_load(a, s->vcopy.src, si, s->vcopy.nsi);
    v->loc = s->loc;
    if (s->vcopy.pred) v = ir_select(a, s->vcopy.pred, v, ir_cast(a, v->dt, ir_i32(a, 0)));
    IrStmt *st = ir_store(a, s->vcopy.dst, di, s->vcopy.ndi, v);
    st->loc = s->loc;
    IrStmt *f = ir_for(a, e, ir_i32(a, 0), ir_i32(a, s->vcopy.lanes), IR_FOR_SERIAL, st);
    f->loc = s->loc;
    return f;
}

void ts_pass_async_copy_c(TsPassCtx *cx) {
    IrMutator m = {.arena = cx->arena, .ctx = cx->k, .post_stmt = lower_post};
    cx->k->body = ir_mutate_stmt(&m, cx->k->body);
    if (!cx->k->body) cx->k->body = ir_seq(cx->arena);
}
