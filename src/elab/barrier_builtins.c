/*
 * barrier_builtins.c — TileLang's warp-specialization surface (tile-ai/
 * tilelang at a35008a: tilelang/language/allocate.py, builtin.py,
 * copy_op.py, cuda/language/warpgroup.py), elaborated to IR_S_MBAR and
 * IR_S_ROLE statements (ir/ir.h):
 *
 *   bars = T.alloc_barrier(128) / T.alloc_barrier([128, 128, ...])
 *       a shared buffer of uint64 mbarriers, element i expecting counts[i]
 *       arrivals per phase; each is initialised right here (uniform code at
 *       the top of the kernel body: partition_threads gives the init to one
 *       thread, insert_sync puts the block barrier before the first use).
 *   T.mbarrier_arrive(bar) / T.barrier_arrive(bar)
 *       every thread that runs it arrives once (in a T.ws role's uniform
 *       code: each of its threads, so the TileLang examples' arrive count is
 *       the role's 128 threads).
 *   T.mbarrier_wait_parity(bar, parity) / T.barrier_wait(bar, parity)
 *       wait until the phase of that parity has completed.
 *   T.mbarrier_expect_tx(bar, bytes), T.mbarrier_arrive_expect_tx(bar, bytes)
 *       (sm_90 transaction counts).
 *   T.tma_copy(src, dst, barrier=bar)
 *       TileLang issues a TMA load that completes transaction bytes on bar
 *       and leaves the arrive to the user.  Here it is a T.copy done by the
 *       threads that run it, complete when each thread's part is done: the
 *       user's T.barrier_arrive that follows (release) and the consumer's
 *       wait (acquire) order it exactly as the TMA's completion would.  No
 *       transaction bytes are announced, so the phase needs only the
 *       arrivals.  (A real TMA path needs tensor maps from the host.)
 *   T.cp_async_barrier_noinc(bar)
 *       (tilelang/language/builtin.py; PTX cp.async.mbarrier.arrive.noinc)
 *       the running thread's arrival on bar, made once every T.ptx_cp_async
 *       it issued before has landed; it is the thread's one arrival (noinc:
 *       the count T.alloc_barrier gave is not raised), an IR_MBAR_ARRIVE_ASYNC
 *       with mbar.noinc.  On the C target the copies landed at once and it
 *       is a plain arrive.
 *   with T.ws(i, ...):
 *       warp groups i... (threads [128 i, 128 (i + 1))) run the body; the
 *       ids must be consecutive.  The body is the role's uniform code: tile
 *       ops in it are the role's collective work (its threads partition
 *       them, its warps run its tensor-core gemms).
 *   T.sync_grid()
 *       an IR_SYNC_GRID statement: at the top level of the kernel body the
 *       pass split_grid makes it the boundary of two launches (a
 *       cooperative launch, every block resident, is not built); elsewhere
 *       refused there.
 *
 * Bad uses found here: a barrier argument that is not a T.alloc_barrier
 * buffer or element, an element index provably outside it, an arrive
 * count that is not positive, T.alloc_barrier below the top level of the
 * kernel body, a role that does not fit the block or is nested.
 */
#include "elab/elab_int.h"
#include "ir/tileop.h"

#include <string.h>

enum {
    W_ALLOC_BARRIER,
    W_ARRIVE,
    W_WAIT,
    W_EXPECT_TX,
    W_ARRIVE_EXPECT_TX,
    W_TMA_COPY,
    W_CP_ASYNC_NOINC,
    W_WS,
    W_SYNC_GRID,
    W_TCGEN05_ARRIVE,
};

static const struct { const char *name; int id; } bar_names[] = {
    {"alloc_barrier", W_ALLOC_BARRIER},
    {"mbarrier_arrive", W_ARRIVE},
    {"barrier_arrive", W_ARRIVE},
    {"mbarrier_wait_parity", W_WAIT},
    {"barrier_wait", W_WAIT},
    {"mbarrier_expect_tx", W_EXPECT_TX},
    {"mbarrier_arrive_expect_tx", W_ARRIVE_EXPECT_TX},
    {"tma_copy", W_TMA_COPY},
    {"cp_async_barrier_noinc", W_CP_ASYNC_NOINC},
    {"ws", W_WS},
    {"WarpSpecialize", W_WS},
    {"sync_grid", W_SYNC_GRID},
    {"tcgen05_mma_arrive", W_TCGEN05_ARRIVE},
};

Value *bar_builtin_lookup(Elab *E, const char *name, TsLoc loc) {
    for (size_t i = 0; i < sizeof bar_names / sizeof bar_names[0]; i++)
        if (!strcmp(bar_names[i].name, name)) {
            Value *v = val_new(E, V_BUILTIN, loc);
            v->bi = ELAB_BAR_BASE + (int)i;
            return v;
        }
    return NULL;
}

/* The argument at `pos` or keyword `name`, or NULL. */
static Value *barg(Elab *E, const char *fn, Value **args, int nargs, const char **kw, Value **kwv, int nkw, int pos,
                   const char *name, TsLoc loc) {
    Value *v = pos >= 0 && pos < nargs ? args[pos] : NULL;
    for (int i = 0; i < nkw; i++)
        if (!strcmp(kw[i], name)) {
            if (v) elab_fail(E, TS_ERR_TYPE, loc, "%s got two values for '%s'", fn, name);
            v = kwv[i];
        }
    return v;
}

/* An mbarrier: a T.alloc_barrier buffer (its element 0) or one element. */
void elab_barrier_of(Elab *E, const char *fn, Value *v, TsLoc loc, IrBuffer **buf, IrExpr **idx) {
    if (!v) elab_fail(E, TS_ERR_TYPE, loc, "%s needs an mbarrier argument", fn);
    IrBuffer *b = v->kind == V_BUFFER || v->kind == V_ACCESS ? v->buf : NULL;
    if (!b || !b->mbar_count)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: the mbarrier must be a T.alloc_barrier buffer or one of its elements, "
                  "got %s", fn, b ? ts_sprintf(E->a, "%s buffer '%s'", ir_scope_name(b->scope), b->name)
                                  : val_kind_name(v));
    IrExpr *i = v->kind == V_ACCESS ? v->idx[0] : ir_i32(E->a, 0);
    int64_t c, n = 0;
    ir_is_const_int(b->shape[0], &n);
    if (ir_is_const_int(i, &c) && (c < 0 || c >= n))
        elab_fail(E, TS_ERR_TYPE, loc, "%s: mbarrier %s[%lld] does not exist (T.alloc_barrier made %lld)", fn, b->name,
                  (long long)c, (long long)n);
    *buf = b;
    *idx = i;
}

static void mbar_stmt(Elab *E, IrMbarOp op, IrBuffer *b, IrExpr *idx, IrExpr *value, TsLoc loc) {
    IrStmt *s = ir_stmt(E->a, IR_S_MBAR, loc);
    s->mbar.op = op;
    s->mbar.buf = b;
    s->mbar.idx = idx;
    s->mbar.value = value;
    emit(E, s);
}

static IrExpr *int_value(Elab *E, const char *fn, Value *v, const char *what, TsLoc loc) {
    if (!v) elab_fail(E, TS_ERR_TYPE, loc, "%s needs an argument '%s'", fn, what);
    IrExpr *e = val_to_expr(E, v, loc);
    if (!ts_dtype_is_int(e->dt) && e->dt != TS_BOOL)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %s must be an integer, got %s", fn, what, ts_dtype_name(e->dt));
    return e->dt == TS_INT32 ? e : ir_cast(E->a, TS_INT32, e);
}

static Value *alloc_barrier(Elab *E, const char *fn, Value *counts, TsLoc loc) {
    if (!counts) elab_fail(E, TS_ERR_TYPE, loc, "%s needs an argument 'arrive_count'", fn);
    if (E->cur != E->k->body)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be at the top level of the T.Kernel body (its mbarriers are "
                  "initialised there, once, before any thread uses them)", fn);
    int n = 1;
    Value **items = &counts;
    if (counts->kind == V_LIST || counts->kind == V_TUPLE) items = val_items(E, counts, &n);
    if (n < 1) elab_fail(E, TS_ERR_TYPE, loc, "%s: an empty list of arrive counts", fn);
    int *cnt = TS_NEWN(E->a, int, n);
    int64_t nt = ir_kernel_nthreads(E->k);
    for (int i = 0; i < n; i++) {
        int64_t c = val_to_int(E, items[i], loc, "an arrive count");
        if (c <= 0 || c > nt)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: arrive count %lld of mbarrier %d is outside [1, %lld] (the block's "
                      "threads)", fn, (long long)c, i, (long long)nt);
        cnt[i] = (int)c;
    }
    IrExpr **shape = TS_NEWN(E->a, IrExpr *, 1);
    shape[0] = ir_i32(E->a, n);
    IrBuffer *b = ir_buffer(E->k, "", TS_UINT64, IR_SCOPE_SHARED, 1, shape, loc);
    b->mbar_count = cnt;
    IrStmt *s = ir_stmt(E->a, IR_S_ALLOC, loc);
    s->alloc.buf = b;
    emit(E, s);
    for (int i = 0; i < n; i++) mbar_stmt(E, IR_MBAR_INIT, b, ir_i32(E->a, i), ir_i32(E->a, cnt[i]), loc);
    Value *v = val_new(E, V_BUFFER, loc);
    v->buf = b;
    return v;
}

static Value *warp_specialize(Elab *E, const char *fn, Value **args, int nargs, int nkw, TsLoc loc) {
    if (nkw) elab_fail(E, TS_ERR_TYPE, loc, "%s takes warp-group ids only", fn);
    if (nargs < 1) elab_fail(E, TS_ERR_TYPE, loc, "%s needs at least one warp-group id", fn);
    int64_t first = 0;
    for (int i = 0; i < nargs; i++) {
        int64_t g = val_to_int(E, args[i], loc, "a warp-group id");
        if (i == 0) first = g;
        if (g < 0 || g != first + i)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: the warp-group ids must be consecutive and non-negative "
                      "(ids %lld .. are the threads [128 id, 128 (id + 1)))", fn, (long long)first);
    }
    int64_t nt = ir_kernel_nthreads(E->k), lo = 128 * first, n = 128 * (int64_t)nargs;
    if (lo + n > nt)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: threads [%lld, %lld) (warp group%s %s) are outside the block's %lld threads",
                  fn, (long long)lo, (long long)(lo + n), nargs > 1 ? "s" : "",
                  nargs > 1 ? ts_sprintf(E->a, "%lld..%lld", (long long)first, (long long)(first + nargs - 1))
                            : ts_sprintf(E->a, "%lld", (long long)first),
                  (long long)nt);
    Value *v = val_new(E, V_ENUM, loc);
    v->s = "T.ws";
    v->i = lo;
    v->n = (int)n;
    return v;
}

void bar_exec_role(Elab *E, Env *env, const AstStmt *s, Value *ws) {
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "T.ws must be used inside `with T.Kernel(...)`");
    if (E->role_depth) elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "a T.ws role inside another T.ws role");
    if (s->targets[0]) elab_fail(E, TS_ERR_TYPE, s->targets[0]->loc, "T.ws binds no name");
    IrStmt *r = ir_stmt(E->a, IR_S_ROLE, s->loc);
    r->role.lo = (int)ws->i;
    r->role.n = ws->n;
    r->role.id = 1; /* (insert_sync numbers the roles' named barriers) */
    r->role.body = ir_seq(E->a);
    emit(E, r);
    IrStmt *saved = E->cur;
    E->cur = r->role.body;
    E->role_depth++;
    E->role_threads = ws->n;
    E->role_body = r->role.body;
    exec_block(E, env, &s->body);
    E->role_depth--;
    E->role_threads = 0;
    E->role_body = NULL;
    E->cur = saved;
}

Value *bar_builtin_call(Elab *E, int id, Value **args, int nargs, const char **kw, Value **kwv, int nkw, TsLoc loc) {
    int w = bar_names[id - ELAB_BAR_BASE].id;
    const char *fn = ts_sprintf(E->a, "T.%s()", bar_names[id - ELAB_BAR_BASE].name);
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside `with T.Kernel(...)`", fn);
#define ARG(pos, name) barg(E, fn, args, nargs, kw, kwv, nkw, pos, name, loc)
    IrBuffer *b;
    IrExpr *i;
    switch (w) {
    case W_ALLOC_BARRIER:
        if (nargs + nkw > 1) elab_fail(E, TS_ERR_TYPE, loc, "%s takes one argument, arrive_count", fn);
        return alloc_barrier(E, fn, ARG(0, "arrive_count"), loc);
    case W_ARRIVE:
        if (ARG(1, "cta_id"))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: cta_id (an arrive on another block of a cluster) is not "
                      "supported: distributed shared memory (another block's mbarriers) is not built", fn);
        elab_barrier_of(E, fn, ARG(0, "mbarrier"), loc, &b, &i);
        {
            /* an arrive straight in a role's body is one per thread of the role: more
             * than a phase expects is certain when each mbarrier the index may name
             * expects fewer */
            int64_t c, n = 0, most = 0;
            ir_is_const_int(b->shape[0], &n);
            for (int64_t j = 0; j < n; j++)
                if (!ir_is_const_int(i, &c) || c == j) most = b->mbar_count[j] > most ? b->mbar_count[j] : most;
            if (E->role_depth && E->cur == E->role_body && most < E->role_threads)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: the %d threads of this T.ws role each arrive, but mbarrier %s "
                          "expects %lld arrivals per phase", fn, E->role_threads, b->name, (long long)most);
        }
        mbar_stmt(E, IR_MBAR_ARRIVE, b, i, NULL, loc);
        return val_none(E, loc);
    case W_TCGEN05_ARRIVE: {
        /* T.tcgen05_mma_arrive(mbar) (tilelang/language/builtin.py at a35008a):
         * tcgen05.commit, one arrival on mbar once the tcgen05 gemms the
         * group issued before have completed: IR_MBAR_ARRIVE_ONE (on targets
         * without tensor memory those gemms are done when they end, pass
         * lower_tmem) */
        Value *two = ARG(1, "arrive_2cta");
        if (two && val_truthy(E, two, loc))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: arrive_2cta (the peer block of a 2-CTA cluster) is not "
                      "supported: distributed shared memory (another block's mbarriers) is not built", fn);
        elab_barrier_of(E, fn, ARG(0, "mbar"), loc, &b, &i);
        mbar_stmt(E, IR_MBAR_ARRIVE_ONE, b, i, NULL, loc);
        return val_none(E, loc);
    }
    case W_WAIT:
        elab_barrier_of(E, fn, ARG(0, "mbarrier"), loc, &b, &i);
        mbar_stmt(E, IR_MBAR_WAIT, b, i, int_value(E, fn, ARG(1, "parity"), "parity", loc), loc);
        return val_none(E, loc);
    case W_EXPECT_TX:
    case W_ARRIVE_EXPECT_TX:
        elab_barrier_of(E, fn, ARG(0, "mbarrier"), loc, &b, &i);
        mbar_stmt(E, IR_MBAR_EXPECT_TX, b, i, int_value(E, fn, ARG(1, "tx"), "tx", loc), loc);
        if (w == W_ARRIVE_EXPECT_TX) mbar_stmt(E, IR_MBAR_ARRIVE, b, i, NULL, loc);
        return val_none(E, loc);
    case W_TMA_COPY: {
        Value *src = ARG(0, "src"), *dst = ARG(1, "dst"), *bar = ARG(-1, "barrier");
        if (!src || !dst) elab_fail(E, TS_ERR_TYPE, loc, "%s needs src and dst", fn);
        if (bar) elab_barrier_of(E, fn, bar, loc, &b, &i); /* (checked; the copy completes in place, see above) */
        for (int k = 0; k < nkw; k++)
            if (strcmp(kw[k], "src") && strcmp(kw[k], "dst") && strcmp(kw[k], "barrier") &&
                strcmp(kw[k], "eviction_policy") && strcmp(kw[k], "annotations") &&
                strcmp(kw[k], "leader_scope_threads"))
                elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: '%s' is not supported%s", fn, kw[k],
                          !strcmp(kw[k], "cluster_mask") ? " (multicast to the blocks of a cluster is not built)" : "");
        Value *cargs[2] = {src, dst};
        Value *copy = builtin_attr(E, module_value(E, "T", loc), "copy", loc);
        return call_value(E, copy, cargs, 2, NULL, NULL, 0, loc);
    }
    case W_CP_ASYNC_NOINC: {
        if (nargs + nkw != 1) elab_fail(E, TS_ERR_TYPE, loc, "%s takes one argument, the mbarrier", fn);
        elab_barrier_of(E, fn, ARG(0, "barrier"), loc, &b, &i);
        IrStmt *s = ir_stmt(E->a, IR_S_MBAR, loc);
        s->mbar.op = IR_MBAR_ARRIVE_ASYNC;
        s->mbar.buf = b;
        s->mbar.idx = i;
        s->mbar.noinc = true;
        emit(E, s);
        return val_none(E, loc);
    }
    case W_WS: return warp_specialize(E, fn, args, nargs, nkw, loc);
    case W_SYNC_GRID: {
        /* the boundary of two launches (pass split_grid says where it may be) */
        if (nargs || nkw) elab_fail(E, TS_ERR_TYPE, loc, "%s takes no arguments", fn);
        IrStmt *s = ir_stmt(E->a, IR_S_EVAL, loc);
        s->eval.e = ir_call(E->a, IR_SYNC_GRID, NULL, 0, TS_INT32);
        emit(E, s);
        return val_none(E, loc);
    }
    }
#undef ARG
    elab_fail(E, TS_ERR_INTERNAL, loc, "%s: unknown builtin", fn);
}
