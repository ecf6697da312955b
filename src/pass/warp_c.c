/*
 * warp_c.c — the C target's warp primitives (IR_WARP_*: T.shfl_xor /
 * shfl_down / shfl_up / shfl_sync, the votes, T.warp_reduce_*,
 * T.sync_warp): the lanes' values exchanged exactly where the statement
 * that uses them runs, as on a GPU whose warp runs in lock-step.
 *
 * The C target runs per-thread code as loops over the block's threads
 * (pass thread_loops_c: `for t in thread_range(NT): body`, one thread's
 * whole body after another's).  A shuffle needs the other lanes' values at
 * the same point of the body, so this pass, run after thread_loops_c,
 * cuts every thread range whose body uses a warp primitive into a
 * sequence of ranges that together run the body in lock-step:
 *
 *  - a sequence becomes the sequence of its statements' ranges (`let`s of
 *    values the same for every thread and allocations stay in place,
 *    outside the ranges);
 *  - a loop whose bounds are the same for every thread, or an `if` on such
 *    a condition, stays a loop / if around the ranges of its body; a loop
 *    whose bounds are each thread's own (a warp's: TileScale's
 *    `T.serial(warp_id, n, num_warps)`) runs to the longest trip count,
 *    each thread taking part while its own iterations last;
 *  - an `if` whose condition differs between threads stores each
 *    thread's verdict in a per-thread word first and guards the ranges of
 *    each branch with it (a lane whose branch is not taken takes no part);
 *  - a statement that uses a warp primitive: for each call (innermost
 *    first) a range where every thread stores its operands in per-thread
 *    words (`local [NT]` buffers indexed by the flat thread index), then
 *    the call becomes a load of the word its lane reads: the source lane
 *    of a shuffle (CUDA's rules: width segments, a lane outside its
 *    segment or past the warp reads its own value), the 32 lanes'
 *    predicates or'ed into a ballot; a warp reduction runs as CUDA's
 *    butterfly does (comm_cuda.c: offsets 16, 8, 4, 2, 1, `own op other`
 *    at each step, a range per step), so both targets give the same bits;
 *    then the statement itself runs in a range.
 *
 * Lock-step is one legal order of a warp's threads, and the one a shuffle
 * assumes.  Kernels whose threads wait for each other (IrKernel.thread_coro:
 * a while loop, wait or barrier inside a thread range) skip this pass: their
 * threads run as coroutines and exchange the lanes' values at run time
 * (target/c/threads_c.c).  Not supported here (a clear error): a warp
 * primitive in loop bounds, or beside a break/continue that the cut would
 * move out of its loop, and blocks that are not whole warps.
 */
#include "ir/walk.h"
#include "op/comm.h"
#include "pass/pass.h"

typedef struct Wc {
    TsPassCtx *cx;
    IrKernel *k;
    TsArena *a;
    int64_t nt;      /* threads per block */
    IrVar *tvar;     /* the variable of the range being cut */
    IrStmt *out;     /* where ranges and staging go (the current sequence) */
    IrExpr *pred;    /* the active lanes' guard (per thread), NULL: all */
} Wc;

static IrExpr *tid(Wc *W) { return ir_var_ref(W->a, ir_kernel_tid(W->k)); }
static IrExpr *i32(Wc *W, int64_t v) { return ir_i32(W->a, v); }

/* Does e differ between threads (thread index, the range's variable, a
 * per-thread word, a warp primitive)? */
static bool varying_node(const IrExpr *e, void *ctx) {
    Wc *W = ctx;
    if (e->kind == IR_E_VAR)
        return e->var->kind == IR_VAR_THREAD_IDX || e->var == W->k->tid || e->var == W->tvar;
    if (e->kind == IR_E_LOAD) {
        const IrBuffer *b = e->load.buf;
        return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR;
    }
    return ts_warp_call(e, NULL);
}
static bool varies(Wc *W, const IrExpr *e) { return e && ir_expr_any(e, varying_node, W); }

static bool jumps(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_BREAK || s->kind == IR_S_CONTINUE;
}

/* A per-thread word of dtype dt: local [NT], allocated here. */
static IrBuffer *word(Wc *W, const char *name, TsDType dt, TsLoc loc) {
    IrBuffer *b = ir_buffer(W->k, name, dt, IR_SCOPE_LOCAL, 1, (IrExpr *[]){i32(W, W->nt)}, loc);
    IrStmt *al = ir_stmt(W->a, IR_S_ALLOC, loc);
    al->alloc.buf = b;
    ir_seq_push(W->a, W->out, al);
    return b;
}
static IrExpr *at(Wc *W, IrBuffer *b, IrExpr *i) {
    IrExpr **ix = TS_NEWN(W->a, IrExpr *, 1);
    ix[0] = i;
    return ir_load(W->a, b, ix, 1);
}
static IrStmt *set(Wc *W, IrBuffer *b, IrExpr *i, IrExpr *v, TsLoc loc) {
    IrExpr **ix = TS_NEWN(W->a, IrExpr *, 1);
    ix[0] = i;
    if (v->dt != b->dt) v = ir_cast(W->a, b->dt, v);
    IrStmt *s = ir_store(W->a, b, ix, 1, v);
    s->loc = loc;
    return s;
}

/* `for t in thread_range(NT): body`, guarded by the active lanes. */
static void range(Wc *W, IrStmt *body, TsLoc loc) {
    if (W->pred) {
        IrStmt *g = ir_stmt(W->a, IR_S_IF, loc);
        g->if_.cond = W->pred;
        g->if_.then = body;
        body = g;
    }
    IrStmt *f = ir_for(W->a, W->tvar, i32(W, 0), i32(W, W->nt), IR_FOR_THREAD, body);
    f->loc = loc;
    ir_seq_push(W->a, W->out, f);
}

/* The butterfly step of a warp reduction: own op other. */
static IrExpr *reduce_op(Wc *W, IrIntrinsic fn, IrExpr *own, IrExpr *oth) {
    TsArena *a = W->a;
    switch (fn) {
    case IR_WARP_SUM: return ir_bin(a, IR_ADD, own, oth);
    case IR_WARP_MAX: return ir_select(a, ir_bin(a, IR_GT, oth, own), oth, own);
    case IR_WARP_MIN: return ir_select(a, ir_bin(a, IR_LT, oth, own), oth, own);
    case IR_WARP_BAND: return ir_bin(a, IR_BITAND, own, oth);
    default: return ir_bin(a, IR_BITOR, own, oth);
    }
}

/* Replaces a warp call (operands already free of calls) by what its lane
 * reads, staging the operands first. */
static IrExpr *exchange(IrMutator *m, IrExpr *e) {
    Wc *W = m->ctx;
    if (!ts_warp_call(e, NULL)) return e;
    TsArena *a = W->a;
    TsLoc loc = e->loc;
    IrIntrinsic fn = e->call.fn;
    if (fn == IR_WARP_SYNC) return ir_int(a, 0, e->dt); /* lock-step already */
    IrExpr *lane = ir_bin(a, IR_FLOORMOD, tid(W), i32(W, 32));
    IrExpr *base = ir_bin(a, IR_SUB, tid(W), lane);
    if (fn == IR_WARP_BALLOT) {
        IrBuffer *p = word(W, "vote", TS_INT32, loc);
        if (W->pred) { /* lanes that do not take part vote 0 */
            IrExpr *g = W->pred;
            W->pred = NULL;
            range(W, set(W, p, tid(W), i32(W, 0), loc), loc);
            W->pred = g;
        }
        range(W, set(W, p, tid(W), ir_cast(a, TS_INT32, e->call.args[1]), loc), loc);
        IrExpr *r = NULL, *mask = e->call.args[0];
        for (int j = 0; j < 32; j++) {
            IrExpr *on = ir_bin(a, IR_NE, at(W, p, ir_bin(a, IR_ADD, base, i32(W, j))), i32(W, 0));
            IrExpr *bit = ir_select(a, on, ir_int(a, 1LL << j, TS_UINT32), ir_int(a, 0, TS_UINT32));
            r = r ? ir_bin(a, IR_BITOR, r, bit) : bit;
        }
        return ir_bin(a, IR_BITAND, r, mask);
    }
    IrExpr *v = e->call.args[0];
    IrBuffer *xv = word(W, "lane_val", e->dt, loc);
    if (fn >= IR_WARP_SUM) { /* CUDA's butterfly, one range per step */
        IrBuffer *xt = word(W, "lane_tmp", e->dt, loc);
        range(W, set(W, xv, tid(W), v, loc), loc);
        for (int o = 16; o > 0; o >>= 1) {
            IrExpr *oth = at(W, xv, ir_bin(a, IR_ADD, base, ir_bin(a, IR_BITXOR, lane, i32(W, o))));
            range(W, set(W, xt, tid(W), reduce_op(W, fn, at(W, xv, tid(W)), oth), loc), loc);
            range(W, set(W, xv, tid(W), at(W, xt, tid(W)), loc), loc);
        }
        return at(W, xv, tid(W));
    }
    /* shuffles: the value and this lane's operand, then the source lane */
    IrBuffer *xd = word(W, "lane_arg", TS_INT32, loc);
    IrStmt *st = ir_seq(a);
    st->loc = loc;
    ir_seq_push(a, st, set(W, xv, tid(W), v, loc));
    ir_seq_push(a, st, set(W, xd, tid(W), e->call.args[1], loc));
    range(W, st, loc);
    int64_t w = 32;
    ir_is_const_int(e->call.args[2], &w);
    IrExpr *d = at(W, xd, tid(W));
    IrExpr *inseg = ir_bin(a, IR_BITAND, lane, i32(W, w - 1));  /* lane within its segment */
    IrExpr *seg = ir_bin(a, IR_SUB, lane, inseg);                 /* the segment's first lane */
    IrExpr *src = NULL, *ok = NULL;                                /* the source lane, valid */
    switch (fn) {
    case IR_WARP_SHFL: /* lane (src % width) of this segment */
        src = ir_bin(a, IR_ADD, seg, ir_bin(a, IR_BITAND, d, i32(W, w - 1)));
        ok = ir_int(a, 1, TS_BOOL);
        break;
    case IR_WARP_SHFL_UP: /* lane - d, when still in the segment */
        src = ir_bin(a, IR_SUB, lane, d);
        ok = ir_bin(a, IR_AND, ir_bin(a, IR_GE, d, i32(W, 0)), ir_bin(a, IR_GE, ir_bin(a, IR_SUB, inseg, d), i32(W, 0)));
        break;
    case IR_WARP_SHFL_DOWN: /* lane + d, when still in the segment */
        src = ir_bin(a, IR_ADD, lane, d);
        ok = ir_bin(a, IR_AND, ir_bin(a, IR_GE, d, i32(W, 0)), ir_bin(a, IR_LT, ir_bin(a, IR_ADD, inseg, d), i32(W, w)));
        break;
    default: /* lane ^ d, unless in a later segment (CUDA: then its own value) */
        src = ir_bin(a, IR_BITXOR, lane, d);
        ok = ir_bin(a, IR_AND, ir_bin(a, IR_GE, src, i32(W, 0)), ir_bin(a, IR_LT, src, ir_bin(a, IR_ADD, seg, i32(W, w))));
        break;
    }
    IrExpr *from = ir_select(a, ok, ir_bin(a, IR_ADD, base, src), tid(W));
    return at(W, xv, from);
}

static void cut(Wc *W, IrStmt *s);

/* The cut of s into a fresh sequence (the body of a loop or branch). */
static IrStmt *cut_into(Wc *W, IrStmt *s, IrExpr *pred) {
    IrStmt *q = ir_seq(W->a), *saved = W->out;
    IrExpr *sp = W->pred;
    q->loc = s ? s->loc : (TsLoc){0};
    W->out = q;
    W->pred = pred;
    if (s) cut(W, s);
    W->out = saved;
    W->pred = sp;
    return q;
}

static void unsupported(Wc *W, const IrStmt *s, const char *why) {
    ts_fail_at(W->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
               "a warp primitive (T.shfl_*, T.*_sync, T.warp_*) %s is not supported on the C target", why);
}

/* Appends to W->out the lock-step form of s (see the essay). */
static void cut(Wc *W, IrStmt *s) {
    TsArena *a = W->a;
    if (!ts_warp_used(s)) {
        /* thread_loops_c made the lets whose value differs between threads
         * per-thread words: those left are uniform and stay in place */
        if (s->kind == IR_S_ALLOC || s->kind == IR_S_LET) ir_seq_push(a, W->out, s);
        else range(W, s, s->loc);
        return;
    }
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) cut(W, s->seq.v[i]);
        return;
    case IR_S_FOR: {
        if (ir_stmt_any(s->for_.body, jumps, NULL)) unsupported(W, s, "in a loop with break or continue");
        if (varies(W, s->for_.min) || varies(W, s->for_.extent)) {
            /* bounds of the thread's own (a warp's, TileScale's `T.serial(warp_id, n, num_warps)`):
             * every thread's bounds in per-thread words, the loop run to the longest trip count with
             * each thread taking part while its own iterations last, as a warp runs it */
            if (ir_expr_any(s->for_.min, ts_warp_call, NULL) || ir_expr_any(s->for_.extent, ts_warp_call, NULL))
                unsupported(W, s, "in a loop's bounds");
            IrBuffer *lo = word(W, "loop_min", TS_INT32, s->loc), *ext = word(W, "loop_n", TS_INT32, s->loc);
            IrStmt *st = ir_seq(a);
            st->loc = s->loc;
            ir_seq_push(a, st, set(W, lo, tid(W), s->for_.min, s->loc));
            ir_seq_push(a, st, set(W, ext, tid(W), s->for_.extent, s->loc));
            IrExpr *g = W->pred; /* every thread stores its bounds, those not taking part none */
            W->pred = NULL;
            range(W, set(W, ext, tid(W), i32(W, 0), s->loc), s->loc);
            W->pred = g;
            range(W, st, s->loc);
            IrBuffer *most = ir_buffer(W->k, "loop_most", TS_INT32, IR_SCOPE_VAR, 1, (IrExpr *[]){i32(W, 1)}, s->loc);
            IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
            al->alloc.buf = most;
            ir_seq_push(a, W->out, al);
            IrExpr **z = TS_NEWN(a, IrExpr *, 1);
            z[0] = i32(W, 0);
            IrStmt *init = ir_store(a, most, z, 1, i32(W, 0));
            init->loc = s->loc;
            ir_seq_push(a, W->out, init);
            IrVar *u = ir_var(W->k, "u", TS_INT32, IR_VAR_LOOP);
            IrStmt *mx = ir_store(a, most, z, 1, ir_bin(a, IR_MAX, ir_load(a, most, z, 1), at(W, ext, ir_var_ref(a, u))));
            mx->loc = s->loc;
            IrStmt *fu = ir_for(a, u, i32(W, 0), i32(W, W->nt), IR_FOR_SERIAL, mx);
            fu->loc = s->loc;
            ir_seq_push(a, W->out, fu);
            IrVar *it = ir_var(W->k, s->for_.var->name, TS_INT32, IR_VAR_LOOP);
            IrExpr *now = ir_bin(a, IR_ADD, at(W, lo, tid(W)), ir_var_ref(a, it));
            if (now->dt != s->for_.var->dt) now = ir_cast(a, s->for_.var->dt, now);
            IrStmt *body = ir_stmt_subst(a, s->for_.body, &s->for_.var, &now, 1);
            IrExpr *in = ir_bin(a, IR_LT, ir_var_ref(a, it), at(W, ext, tid(W)));
            IrStmt *f = ir_for(a, it, i32(W, 0), ir_load(a, most, z, 1), IR_FOR_SERIAL,
                               cut_into(W, body, W->pred ? ir_bin(a, IR_AND, W->pred, in) : in));
            f->loc = s->loc;
            ir_seq_push(a, W->out, f);
            return;
        }
        IrStmt *f = ir_for(a, s->for_.var, s->for_.min, s->for_.extent,
                           s->for_.kind == IR_FOR_UNROLL ? IR_FOR_UNROLL : IR_FOR_SERIAL, cut_into(W, s->for_.body, W->pred));
        f->loc = s->loc;
        ir_seq_push(a, W->out, f);
        return;
    }
    case IR_S_IF: {
        if (ir_stmt_any(s, jumps, NULL)) unsupported(W, s, "beside break or continue");
        IrStmt *g = ir_stmt(a, IR_S_IF, s->loc);
        if (!varies(W, s->if_.cond)) {
            g->if_.cond = s->if_.cond;
            g->if_.then = cut_into(W, s->if_.then, W->pred);
            g->if_.else_ = s->if_.else_ ? cut_into(W, s->if_.else_, W->pred) : NULL;
            ir_seq_push(a, W->out, g);
            return;
        }
        IrMutator m = {.arena = a, .ctx = W, .post_expr = exchange}; /* a vote in the condition */
        IrExpr *cond = ir_mutate_expr(&m, s->if_.cond);
        IrBuffer *taken = word(W, "taken", TS_INT32, s->loc);
        range(W, set(W, taken, tid(W), ir_cast(a, TS_INT32, cond), s->loc), s->loc);
        IrExpr *yes = ir_bin(a, IR_NE, at(W, taken, tid(W)), i32(W, 0));
        IrExpr *no = ir_bin(a, IR_EQ, at(W, taken, tid(W)), i32(W, 0));
        IrExpr *p = W->pred;
        IrStmt *t = cut_into(W, s->if_.then, p ? ir_bin(a, IR_AND, p, yes) : yes);
        ir_seq_push(a, W->out, t);
        if (s->if_.else_) ir_seq_push(a, W->out, cut_into(W, s->if_.else_, p ? ir_bin(a, IR_AND, p, no) : no));
        return;
    }
    case IR_S_WHILE: unsupported(W, s, "in a while loop"); return;
    case IR_S_LET: unsupported(W, s, "in a let the C target keeps uniform"); return;
    default: {
        IrMutator m = {.arena = a, .ctx = W, .post_expr = exchange};
        IrStmt *n = ir_mutate_stmt(&m, s);
        range(W, n, s->loc);
        return;
    }
    }
}

/* Uniform code: thread ranges using warp primitives are cut. */
static IrStmt *wc_pre(IrMutator *m, IrStmt *s) {
    Wc *W = m->ctx;
    if (s->kind != IR_S_FOR || s->for_.kind != IR_FOR_THREAD) return NULL;
    if (!ts_warp_used(s)) return s;
    int64_t lo, n;
    if (!ir_is_const_int(s->for_.min, &lo) || !ir_is_const_int(s->for_.extent, &n) || lo != 0 || n != W->nt)
        unsupported(W, s, "in a thread range that is not the whole block");
    W->tvar = s->for_.var;
    return cut_into(W, s->for_.body, NULL);
}

static bool first_call(const IrExpr *e, void *ctx) {
    if (!ts_warp_call(e, NULL)) return false;
    *(TsLoc *)ctx = e->loc;
    return true;
}

void ts_pass_warp_c(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    /* thread_coro kernels exchange the lanes' values at run time (threads_c.c) */
    if (cx->target != TS_TARGET_C || !k->body || !ts_warp_used(k->body) || k->thread_coro) return;
    Wc W = {.cx = cx, .k = k, .a = cx->arena, .nt = ir_kernel_nthreads(k)};
    TsLoc at = k->body->loc;
    (void)ir_stmt_any_expr(k->body, first_call, &at);
    if (W.nt % 32)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, at,
                   "warp primitives (T.shfl_*, T.*_sync, T.warp_*) need whole warps of 32 threads; the block has %lld",
                   (long long)W.nt);
    IrMutator m = {.arena = cx->arena, .ctx = &W, .pre_stmt = wc_pre};
    k->body = ir_mutate_stmt(&m, k->body);
    if (ts_warp_used(k->body))
        ts_internal(cx->diag, "warp_c: a warp primitive outside a thread range (thread_loops_c puts them in one)");
}
