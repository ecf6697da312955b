/*
 * forward_stores.c — the CUDA pass that lets a thread read back its own
 * store to shared memory from a register: inside a thread range,
 *
 *     B[I] = V                          let fw = (B.dtype) V
 *     ...                        ->     B[I] = fw
 *     if B[I]: ...                      ...
 *                                       if fw: ...
 *
 * for a later load of the same element (indices structurally equal, free
 * of loads: the same values at both places, since variables are bound
 * once) in the statements that follow the store in its sequence, up to the
 * first that synchronises (a barrier, an mbarrier operation, an async
 * wait, a warp sync, a communication op) or writes B again.
 *
 * Why: deepseek_v32's sparse MLA producers write a row's validity flag from
 * each of the 8 threads that load the row and test it right after
 * (`is_kv_valid[stage, r * 16 + (tx - 256) // 8] = index <= max_kv_i`, then
 * `if is_kv_valid[stage, r * 16 + (tx - 256) // 8]:`).  Another thread's
 * store of the element between a thread's store and its load races with
 * both; with no barrier possible inside thread-level code, insert_sync would
 * refuse the kernel.  The rewrite is exact where no other thread stores the
 * element, and where one does the load returning the thread's own value is
 * one of the outcomes the racing program allows (the thread's store read as
 * the last one).  What is left, the threads' stores of one element by the
 * one statement, is the program's own write-write race (insert_sync).
 */
#include "ir/walk.h"
#include "op/comm.h"
#include "pass/pass.h"

typedef struct Fwd {
    TsPassCtx *cx;
    int thread;        /* inside thread ranges (depth) */
} Fwd;

/* A statement that orders this thread's accesses with other threads'. */
static bool syncs(const IrStmt *s, void *ctx) {
    (void)ctx;
    switch (s->kind) {
    case IR_S_BARRIER:
    case IR_S_MBAR:
    case IR_S_ASYNC_WAIT:
    case IR_S_ASYNC_COMMIT:
    case IR_S_TILEOP:
    case IR_S_WHILE: return true;
    case IR_S_EVAL: return s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn != IR_SET_MAX_NREG;
    default: return false;
    }
}

typedef struct Repl {
    const IrBuffer *buf;
    IrExpr *const *idx;
    int nidx;
    IrExpr *with;
    int n;             /* loads replaced */
} Repl;

static bool same_idx(IrExpr *const *a, IrExpr *const *b, int n) {
    for (int i = 0; i < n; i++)
        if (!ir_expr_equal(a[i], b[i])) return false;
    return true;
}

static IrExpr *repl_expr(IrMutator *m, IrExpr *e) {
    Repl *r = m->ctx;
    if (e->kind == IR_E_LOAD && e->load.buf == r->buf && !e->load.bits && e->load.nidx == r->nidx &&
        same_idx(e->load.idx, r->idx, r->nidx)) {
        r->n++;
        return r->with;
    }
    return e;
}

static IrStmt *fwd_seq(IrMutator *m, IrStmt *s) {
    Fwd *f = m->ctx;
    TsArena *a = m->arena;
    if (!f->thread || s->kind != IR_S_SEQ) return s;
    IrStmt *out = NULL;
    for (int i = 0; i < s->seq.n; i++) {
        IrStmt *st = (out ? out : s)->seq.v[i];
        if (st->kind != IR_S_STORE || st->store.bits) continue;
        const IrBuffer *b = st->store.buf;
        if (b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_FRAGMENT) continue;
        bool loads = false;
        for (int d = 0; d < st->store.nidx && !loads; d++) loads = ir_expr_loads(st->store.idx[d], NULL);
        if (loads) continue;
        /* the following statements up to the first that synchronises or writes b */
        int end = i + 1;
        while (end < s->seq.n) {
            const IrStmt *n = (out ? out : s)->seq.v[end];
            if (ir_stmt_any(n, syncs, NULL) || (ir_stmt_access_rw(n, b, 0) & IR_ACC_WRITE)) break;
            end++;
        }
        if (end == i + 1) continue;
        IrVar *v = ir_var(f->cx->k, "fw", b->dt, IR_VAR_LET);
        Repl r = {b, st->store.idx, st->store.nidx, ir_var_ref(a, v), 0};
        IrMutator rm = {.arena = a, .ctx = &r, .post_expr = repl_expr};
        IrStmt **nv = TS_NEWN(a, IrStmt *, end - i - 1);
        for (int j = i + 1; j < end; j++) nv[j - i - 1] = ir_mutate_stmt(&rm, (out ? out : s)->seq.v[j]);
        if (!r.n) continue;
        IrStmt *let = ir_stmt(a, IR_S_LET, st->loc);
        let->let.var = v;
        let->let.value = st->store.value->dt == b->dt ? st->store.value : ir_cast(a, b->dt, st->store.value);
        IrStmt *ns = ir_stmt(a, IR_S_STORE, st->loc);
        *ns = *st;
        ns->store.value = ir_var_ref(a, v);
        IrStmt *o = ir_seq(a);
        o->loc = s->loc;
        for (int j = 0; j < i; j++) ir_seq_push(a, o, (out ? out : s)->seq.v[j]);
        ir_seq_push(a, o, let);
        ir_seq_push(a, o, ns);
        for (int j = i + 1; j < end; j++) ir_seq_push(a, o, nv[j - i - 1]);
        for (int j = end; j < s->seq.n; j++) ir_seq_push(a, o, (out ? out : s)->seq.v[j]);
        out = o;
        i++; /* (the let went in before the store) */
        s = o;
    }
    return out ? out : s;
}

static IrStmt *fwd_pre(IrMutator *m, IrStmt *s) {
    Fwd *f = m->ctx;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD) f->thread++;
    return NULL;
}

static IrStmt *fwd_post(IrMutator *m, IrStmt *s) {
    Fwd *f = m->ctx;
    const IrStmt *orig = m->frame ? m->frame->s : s;
    if (orig->kind == IR_S_FOR && orig->for_.kind == IR_FOR_THREAD) {
        f->thread--;
        return s;
    }
    return fwd_seq(m, s);
}

void ts_pass_forward_stores(TsPassCtx *cx) {
    Fwd f = {cx, 0};
    IrMutator m = {.arena = cx->arena, .ctx = &f, .pre_stmt = fwd_pre, .post_stmt = fwd_post};
    cx->k->body = ir_mutate_stmt(&m, cx->k->body);
}
