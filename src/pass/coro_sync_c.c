/*
 * coro_sync_c.c — the C target's coroutine kernels: who runs the block's
 * uniform statements, and the barriers around them.
 *
 * A kernel whose threads wait for each other (IrKernel.thread_coro, chosen
 * by pass thread_loops_c) runs every thread of a block as a coroutine
 * (target/c/threads_c.c): each thread runs the whole body as it sees it.
 * Thread ranges, barriers, T.ws roles and warp primitives are per thread
 * and mean the same there as on a GPU.  The other statements (tile-level
 * stores, T.Parallel nests, communication, mbarrier operations in uniform
 * code) are the block's, or a role's: done once for the whole group, in
 * program order with the per-thread code around them.  This pass says in
 * the IR how the C target keeps that promise: each run of such statements
 * in a sequence becomes
 *
 *     barrier(G, count)                 every thread of the group arrives
 *     with solo(thread=lo, for_threads=[lo, lo + n)):
 *         <the run>                     thread lo alone, for the group
 *     barrier(G, count)                 nobody goes on before it is done
 *
 * where the group is the block (G = IR_C_BAR_BLOCK, count 0: every thread
 * still running, so T.thread_return'ed threads do not hang it) or the
 * innermost T.ws role (G = IR_C_BAR_BLOCK + 1 + its first warp, count its
 * threads: roles are whole warps, so no two roles share an id, and the
 * ids stay clear of the hardware's 0..15 that T.sync_threads uses).  A
 * solo role's mbarrier arrive still counts the group's threads (ir.h).
 *
 * What is per thread (every thread runs it, the pass looks inside it):
 * thread ranges, barriers, roles, T.thread_return and whatever holds one;
 * statements using a warp primitive (the lanes must meet); lets (every
 * thread needs the value) and allocations (declarations: the C printer
 * zeroes a coroutine kernel's mbarrier buffers before the threads start).
 * The pass descends into sequences, serial loops, ifs, whiles and roles
 * that are per thread, never into thread ranges (a thread's own code) nor
 * into a run it wraps.  Kernels that are not thread_coro are untouched:
 * the C target runs them in program order, where none of this is needed.
 *
 * Before this pass the C printer chose these barriers and the lead thread
 * itself (the same ids and counts); now --dump-after coro_sync_c shows
 * them and the printer only prints.
 */
#include "ir/walk.h"
#include "op/comm.h"
#include "pass/pass.h"

static bool per_thread_stmt(const IrStmt *s, void *ctx) {
    (void)ctx;
    return (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD) || s->kind == IR_S_BARRIER ||
           s->kind == IR_S_ROLE ||
           (s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_THREAD_RETURN);
}

static bool warp_expr(const IrExpr *e, void *ctx) {
    (void)ctx;
    return ts_warp_call(e, NULL);
}

/* Does every thread run s itself?  Otherwise it is its group's (above). */
static bool every_thread(const IrStmt *s) {
    if (s->kind == IR_S_LET || s->kind == IR_S_SEQ || s->kind == IR_S_ALLOC) return true;
    return ir_stmt_any(s, per_thread_stmt, NULL) || ir_stmt_any_expr(s, warp_expr, NULL);
}

/* The group whose uniform code a statement at the mutator's position is:
 * the innermost enclosing (non-solo) role, else the block. */
typedef struct Group {
    int lo, n, id;     /* its threads [lo, lo + n) and role id (0: the block) */
    int bar, count;    /* the barrier id and count around its uniform runs */
} Group;

static Group group_at(const IrMutator *m, const IrKernel *k) {
    for (const IrWalkFrame *f = m->frame; f; f = f->up)
        if (f->s->kind == IR_S_ROLE && !f->s->role.solo)
            return (Group){f->s->role.lo, f->s->role.n, f->s->role.id, IR_C_BAR_BLOCK + 1 + f->s->role.lo / 32,
                           f->s->role.n};
    return (Group){0, (int)ir_kernel_nthreads(k), 0, IR_C_BAR_BLOCK, 0};
}

static IrStmt *barrier(TsArena *a, const Group *g, TsLoc loc) {
    IrStmt *b = ir_stmt(a, IR_S_BARRIER, loc);
    b->barrier.id = g->bar;
    b->barrier.count = g->count;
    return b;
}

/* Appends the run v[0..n) to seq as barrier, solo role, barrier. */
static void push_solo(TsArena *a, const Group *g, IrStmt *seq, IrStmt *const *v, int n) {
    TsLoc loc = v[0]->loc;
    IrStmt *body = ir_seq(a);
    body->loc = loc;
    for (int i = 0; i < n; i++) ir_seq_push(a, body, v[i]);
    IrStmt *r = ir_stmt(a, IR_S_ROLE, loc);
    r->role.lo = g->lo;
    r->role.n = g->n;
    r->role.id = g->id;
    r->role.solo = true;
    r->role.body = body;
    ir_seq_push(a, seq, barrier(a, g, loc));
    ir_seq_push(a, seq, r);
    ir_seq_push(a, seq, barrier(a, g, loc));
}

/* A body that is one statement of its group: wrapped alone. */
static IrStmt *wrap_body(TsArena *a, const Group *g, IrStmt *body) {
    if (!body || body->kind == IR_S_SEQ || every_thread(body)) return body;
    IrStmt *seq = ir_seq(a);
    seq->loc = body->loc;
    push_solo(a, g, seq, &body, 1);
    return seq;
}

typedef struct Cs {
    const IrKernel *k; /* the kernel */
} Cs;

/* Thread ranges (a thread's own code) and the group's statements (wrapped
 * whole by their parent) are not entered. */
static IrStmt *cs_pre(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD) return s;
    return every_thread(s) ? NULL : s;
}

static IrStmt *cs_post(IrMutator *m, IrStmt *s) {
    const Cs *c = m->ctx;
    TsArena *a = m->arena;
    Group g = group_at(m, c->k);
    switch (s->kind) {
    case IR_S_SEQ: {
        bool any = false;
        for (int i = 0; i < s->seq.n && !any; i++) any = !every_thread(s->seq.v[i]);
        if (!any) return s;
        IrStmt *seq = ir_seq(a);
        seq->loc = s->loc;
        for (int i = 0; i < s->seq.n;) {
            /* a run: the group's statements, and allocations between them (moved
             * ahead of it: a declaration may come earlier in its sequence) */
            int j = i, n = 0;
            while (j < s->seq.n && (s->seq.v[j]->kind == IR_S_ALLOC || !every_thread(s->seq.v[j]))) j++;
            while (j > i && s->seq.v[j - 1]->kind == IR_S_ALLOC) j--;
            if (j == i) {
                ir_seq_push(a, seq, s->seq.v[i++]);
                continue;
            }
            IrStmt **run = TS_NEWN(a, IrStmt *, j - i);
            for (; i < j; i++)
                if (s->seq.v[i]->kind == IR_S_ALLOC) ir_seq_push(a, seq, s->seq.v[i]);
                else run[n++] = s->seq.v[i];
            push_solo(a, &g, seq, run, n);
        }
        return seq;
    }
    case IR_S_FOR:
    case IR_S_WHILE:
    case IR_S_IF:
    case IR_S_ROLE: {
        IrStmt *t = TS_NEW(a, IrStmt);
        *t = *s;
        bool changed = false;
        IrStmt **body[2] = {NULL, NULL};
        if (s->kind == IR_S_FOR) body[0] = &t->for_.body;
        else if (s->kind == IR_S_WHILE) body[0] = &t->while_.body;
        else if (s->kind == IR_S_ROLE) body[0] = &t->role.body;
        else body[0] = &t->if_.then, body[1] = &t->if_.else_;
        for (int i = 0; i < 2; i++) {
            if (!body[i]) continue;
            IrStmt *w = wrap_body(a, &g, *body[i]);
            changed |= w != *body[i];
            *body[i] = w;
        }
        return changed ? t : s;
    }
    default: return s;
    }
}

void ts_pass_coro_sync_c(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    if (cx->target != TS_TARGET_C || !k->body || !k->thread_coro) return;
    Cs c = {k};
    IrMutator m = {.arena = cx->arena, .ctx = &c, .pre_stmt = cs_pre, .post_stmt = cs_post};
    IrStmt *body = ir_mutate_stmt(&m, k->body);
    if (body && body->kind != IR_S_SEQ && !every_thread(body)) { /* the whole body is the block's */
        IrStmt *seq = ir_seq(cx->arena);
        seq->loc = body->loc;
        Group g = {0, (int)ir_kernel_nthreads(k), 0, IR_C_BAR_BLOCK, 0};
        push_solo(cx->arena, &g, seq, &body, 1);
        body = seq;
    }
    k->body = body;
}
