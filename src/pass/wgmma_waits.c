/*
 * wgmma_waits.c — which accumulators each T.wait_wgmma hands back.
 *
 * Why: a wgmma gemm on sm_90a writes its accumulator registers
 * asynchronously (wgmma.mma_async, one commit group per gemm); the
 * compiler must not move the threads' own reads and writes of those
 * registers across the wait that completes the group.  The CUDA printer
 * pins them with a register fence (ts_wgmma_regs) after each
 * wgmma.wait_group.  It used to fence, at every T.wait_wgmma, the
 * accumulator of every asynchronous gemm of the kernel, a decision taken
 * while printing; this pass takes it on the IR instead and the printer
 * prints the list it leaves (IR_S_EVAL eval.done).
 *
 * What: wgmma.wait_group N returns once at most N of the warpgroup's
 * groups are pending, the N newest (PTX ISA, "wgmma.wait_group"), so it
 * completes every older group.  The pass follows the statements in
 * program order with, for each accumulator, how old its pending groups
 * may be (the number of groups issued after one of them): the youngest
 * and the oldest over every path that reaches the statement.  A gemm
 * (IR_S_TILEOP, TS_OP_INST_WGMMA) issues one group: every pending group
 * ages by one and its accumulator gets a group of age 0; a gemm that
 * waits itself (T.gemm, not T.wgmma_gemm) then waits as below with its
 * wg_wait.  A wait N lists the accumulators with a group that may be
 * N or more groups old (may be completed by it, on some path); after it,
 * an accumulator whose youngest group is that old has none pending, the
 * others keep only groups younger than N.  Branches join (union, the
 * youngest and oldest of both); loops run their body until the state at
 * the loop's head stops changing (ages stop at AGE_MAX, older than any
 * wait's N, so that it does), with the state at `continue` joined into
 * the head's and at `break` into the exit's.  Over-approximating only
 * fences more registers than needed (an empty asm on them), never fewer.
 *
 * The list of a wait reached at several points (a statement shared by
 * two places of the tree) is the union of what each point completes.
 * Runs after arch_hints, which keeps T.wait_wgmma only in kernels with
 * wgmma gemms.
 */
#include <string.h>

#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

/* Older than any wait's N (T.wait_wgmma takes 0..7): ages stop here. */
#define AGE_MAX 8

/* For each accumulator: the youngest and oldest age of its pending groups
 * (young -1: none pending); live false: no path reaches the point. */
typedef struct State {
    bool live;
    signed char *young, *old;
} State;

/* A wait statement and the accumulators it completes (by index). */
typedef struct Done {
    IrStmt *s;
    bool *acc;
} Done;

typedef struct Loop {
    State brk, cont; /* joined states at break / continue */
    struct Loop *up;
} Loop;

typedef struct Ww {
    TsPassCtx *cx;
    TS_VEC(IrBuffer *) accs; /* the accumulators of the kernel's wgmma gemms */
    TS_VEC(Done) waits;
    Loop *loop;              /* the innermost loop around the statement */
} Ww;

static bool is_wgmma_gemm(const IrStmt *s) {
    return s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_WGMMA;
}

static bool is_wait(const IrStmt *s) {
    return s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_WGMMA_WAIT;
}

static int acc_index(Ww *w, const IrBuffer *b) {
    for (int i = 0; i < w->accs.n; i++)
        if (w->accs.v[i] == b) return i;
    return -1;
}

/* The accumulators of the kernel's wgmma gemms, once each. */
static bool collect(IrVisitor *v, const IrStmt *s) {
    Ww *w = v->ctx;
    if (is_wgmma_gemm(s) && acc_index(w, s->op->r[2].buf) < 0) ts_vec_push(w->cx->arena, w->accs, s->op->r[2].buf);
    return true;
}

/* ---- states --------------------------------------------------------------------- */

static State st_new(Ww *w, bool live) {
    State t = {live, TS_NEWN(w->cx->arena, signed char, w->accs.n + 1), TS_NEWN(w->cx->arena, signed char, w->accs.n + 1)};
    for (int i = 0; i < w->accs.n; i++) t.young[i] = t.old[i] = -1;
    return t;
}

static State st_copy(Ww *w, const State *s) {
    State t = st_new(w, s->live);
    memcpy(t.young, s->young, (size_t)w->accs.n);
    memcpy(t.old, s->old, (size_t)w->accs.n);
    return t;
}

/* a = a joined with b (either path may have been taken) */
static void st_join(Ww *w, State *a, const State *b) {
    if (!b->live) return;
    if (!a->live) {
        *a = st_copy(w, b);
        return;
    }
    for (int i = 0; i < w->accs.n; i++) {
        if (b->young[i] < 0) continue;
        if (a->young[i] < 0 || b->young[i] < a->young[i]) a->young[i] = b->young[i];
        if (b->old[i] > a->old[i]) a->old[i] = b->old[i];
    }
}

static bool st_equal(Ww *w, const State *a, const State *b) {
    if (a->live != b->live) return false;
    return !a->live || (!memcmp(a->young, b->young, (size_t)w->accs.n) && !memcmp(a->old, b->old, (size_t)w->accs.n));
}

static signed char older(signed char age) { return age < AGE_MAX ? (signed char)(age + 1) : age; }

/* One group issued for accumulator i. */
static void st_issue(Ww *w, State *st, int i) {
    for (int j = 0; j < w->accs.n; j++)
        if (st->young[j] >= 0) {
            st->young[j] = older(st->young[j]);
            st->old[j] = older(st->old[j]);
        }
    st->young[i] = 0;
    if (st->old[i] < 0) st->old[i] = 0;
}

/* wgmma.wait_group n; done (may be NULL) gets the accumulators it may complete. */
static void st_wait(Ww *w, State *st, int n, bool *done) {
    if (!st->live) return;
    for (int j = 0; j < w->accs.n; j++) {
        if (st->young[j] < 0 || st->old[j] < n) continue;
        if (done) done[j] = true;
        if (st->young[j] >= n) st->young[j] = st->old[j] = -1;
        else st->old[j] = (signed char)(n - 1);
    }
}

/* ---- the walk --------------------------------------------------------------------- */

static void flow(Ww *w, IrStmt *s, State *st);

static Done *done_of(Ww *w, IrStmt *s) {
    for (int i = 0; i < w->waits.n; i++)
        if (w->waits.v[i].s == s) return &w->waits.v[i];
    Done d = {s, TS_NEWN(w->cx->arena, bool, w->accs.n + 1)};
    ts_vec_push(w->cx->arena, w->waits, d);
    return &w->waits.v[w->waits.n - 1];
}

/* A loop's body, run until the state at its head is stable; the body may
 * run no time at all. */
static void flow_loop(Ww *w, IrStmt *body, State *st) {
    State head = st_copy(w, st);
    Loop lp = {.up = w->loop};
    for (;;) {
        lp.brk = st_new(w, false);
        lp.cont = st_new(w, false);
        w->loop = &lp;
        State end = st_copy(w, &head);
        flow(w, body, &end);
        w->loop = lp.up;
        st_join(w, &end, &lp.cont);
        State next = st_copy(w, &head);
        st_join(w, &next, &end);
        if (st_equal(w, &next, &head)) break;
        head = next;
    }
    st_join(w, &head, &lp.brk);
    *st = head;
}

static void flow(Ww *w, IrStmt *s, State *st) {
    if (!s || !st->live) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) flow(w, s->seq.v[i], st);
        return;
    case IR_S_IF:
    case IR_S_ROLE: { /* a role's threads run its body, the others skip it */
        State a = st_copy(w, st);
        flow(w, s->kind == IR_S_IF ? s->if_.then : s->role.body, &a);
        if (s->kind == IR_S_IF && s->if_.else_) flow(w, s->if_.else_, st);
        st_join(w, st, &a);
        return;
    }
    case IR_S_FOR: flow_loop(w, s->for_.body, st); return;
    case IR_S_WHILE: flow_loop(w, s->while_.body, st); return;
    case IR_S_BREAK:
    case IR_S_CONTINUE:
        if (w->loop) st_join(w, s->kind == IR_S_BREAK ? &w->loop->brk : &w->loop->cont, st);
        st->live = false;
        return;
    case IR_S_TILEOP:
        if (is_wgmma_gemm(s)) {
            st_issue(w, st, acc_index(w, s->op->r[2].buf));
            if (!s->op->wg_async) st_wait(w, st, s->op->wg_wait > 0 ? s->op->wg_wait : 0, NULL);
        }
        return;
    case IR_S_EVAL: {
        int64_t n = 0;
        if (!is_wait(s)) return;
        if (!ir_is_const_int(s->eval.e->call.args[0], &n) || n < 0 || n >= AGE_MAX)
            ts_fail_at(w->cx->diag, TS_ERR_INTERNAL, s->loc, "wgmma_waits: a wait of no constant count 0..7");
        st_wait(w, st, (int)n, done_of(w, s)->acc);
        return;
    }
    default: return;
    }
}

void ts_pass_wgmma_waits(TsPassCtx *cx) {
    Ww w = {.cx = cx};
    IrVisitor v = {.ctx = &w, .pre_stmt = collect};
    ir_visit_stmt(&v, cx->k->body);
    if (!w.accs.n) return;
    State st = st_new(&w, true);
    flow(&w, cx->k->body, &st);
    for (int i = 0; i < w.waits.n; i++) {
        IrStmt *s = w.waits.v[i].s;
        s->eval.ndone = 0;
        s->eval.done = TS_NEWN(cx->arena, IrBuffer *, w.accs.n);
        for (int j = 0; j < w.accs.n; j++)
            if (w.waits.v[i].acc[j]) s->eval.done[s->eval.ndone++] = w.accs.v[j];
    }
}
