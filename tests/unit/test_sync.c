/*
 * test_sync.c — barrier placement by the insert_sync pass, on thread-level
 * IR built by hand (64 threads, shared buffers a, b of 64 floats, thread
 * t owning element t unless said otherwise).
 *
 * Each case gives a statement list and the shape the pass must give back,
 * written as a string: T<n> for the n-th thread range of the input, B a
 * barrier, L{...} a uniform loop and its body, W an async wait, C an
 * async commit.  The cases: a read of another thread's write (RAW), a
 * write over what another thread read (WAR), a thread reading back only
 * its own writes (no barrier), a loop whose only conflict is around its
 * back edge, a dependence only on the first iteration (one barrier before
 * the loop, not one per iteration), barriers already present (dropped and
 * placed again, never duplicated), an async copy (the barrier after its
 * wait, not before), a one-thread role reading what thread 0 wrote (no
 * barrier) and what thread 5 wrote (a barrier).  Two refusals: threads of
 * one thread range conflicting (no barrier can go in divergent code), and
 * a barrier found inside a thread range.  Every accepted result is also
 * run in the thread-level interpreter, which would report a race a
 * missing barrier leaves.
 *
 * Complexity: a run of n thread ranges that repeat the same accesses (a
 * chain of T.Parallel updates of one shared tile; a FlashAttention loop
 * body analysed again to its fixed point) must cost the pass time linear in
 * n, not one conflict question per pair of accesses.  Measured as a ratio
 * (thread CPU time, best of five, n = 256 against n = 64: linear is about
 * 4x, pairwise 16x), so the test does not depend on the machine's speed;
 * the placement of the one barrier at the end is checked too.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/interp_thread.h"
#include "ir/ir.h"
#include "pass/pass.h"
#include "test.h"

enum { NT = 64 };

typedef struct Kb {
    TsArena *a;
    IrKernel *k;
    IrBuffer *sa, *sb, *x; /* shared a, shared b, global x (both 64 floats; x has 256) */
    IrStmt *ranges[16];    /* the thread ranges made, in order (for the shape string) */
    int nr;
} Kb;

static IrExpr *I(Kb *kb, int64_t v) { return ir_i32(kb->a, v); }
static IrExpr *V(Kb *kb, IrVar *v) { return ir_var_ref(kb->a, v); }
static IrExpr *ADD(Kb *kb, IrExpr *x, IrExpr *y) { return ir_bin(kb->a, IR_ADD, x, y); }
static IrExpr *MOD(Kb *kb, IrExpr *x, int64_t m) { return ir_bin(kb->a, IR_FLOORMOD, x, I(kb, m)); }
static IrExpr *LD(Kb *kb, IrBuffer *b, IrExpr *i) { return ir_load(kb->a, b, (IrExpr *[]){i}, 1); }
static IrStmt *ST(Kb *kb, IrBuffer *b, IrExpr *i, IrExpr *v) { return ir_store(kb->a, b, (IrExpr *[]){i}, 1, v); }

static Kb kernel(TsArena *a) {
    Kb kb = {a, ir_kernel_new(a, "sync"), NULL, NULL, NULL, {0}, 0};
    kb.k->threads[0] = NT;
    kb.k->threads[1] = kb.k->threads[2] = 1;
    kb.k->ngrid = 1;
    kb.k->grid[0] = ir_i32(a, 1);
    kb.k->grid[1] = kb.k->grid[2] = ir_i32(a, 1);
    for (int i = 0; i < 3; i++) {
        kb.k->block_idx[i] = ir_var(kb.k, i == 0 ? "bx" : i == 1 ? "by" : "bz", TS_INT32, IR_VAR_BLOCK_IDX);
        kb.k->block_idx[i]->axis = i;
    }
    TsLoc loc = {0};
    kb.x = ir_buffer(kb.k, "x", TS_FLOAT32, IR_SCOPE_GLOBAL, 1, (IrExpr *[]){ir_i32(a, 256)}, loc);
    kb.x->param = 0;
    IrParam p = {"x", kb.x, NULL, 1};
    ts_vec_push(a, kb.k->params, p);
    kb.sa = ir_buffer(kb.k, "a", TS_FLOAT32, IR_SCOPE_SHARED, 1, (IrExpr *[]){ir_i32(a, 256)}, loc);
    kb.sb = ir_buffer(kb.k, "b", TS_FLOAT32, IR_SCOPE_SHARED, 1, (IrExpr *[]){ir_i32(a, 64)}, loc);
    kb.k->body = ir_seq(a);
    return kb;
}

/* for t in thread_range(lo, n): body(t) — the body made by fn from t. */
static IrStmt *range(Kb *kb, int64_t lo, int64_t n, IrStmt *(*fn)(Kb *, IrExpr *t)) {
    IrVar *t = ir_var(kb->k, "t", TS_INT32, IR_VAR_LOOP);
    IrStmt *f = ir_for(kb->a, t, I(kb, lo), I(kb, n), IR_FOR_THREAD, fn(kb, V(kb, t)));
    kb->ranges[kb->nr++] = f;
    return f;
}

static void add(Kb *kb, IrStmt *seq, IrStmt *s) { ir_seq_push(kb->a, seq, s); }

/* The shape string of s (see the essay). */
static void shape(const Kb *kb, const IrStmt *s, TsBuf *o) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) shape(kb, s->seq.v[i], o);
        return;
    case IR_S_BARRIER: ts_buf_puts(o, "B"); return;
    case IR_S_ASYNC_WAIT: ts_buf_puts(o, "W"); return;
    case IR_S_ASYNC_COMMIT: ts_buf_puts(o, "C"); return;
    case IR_S_FOR:
        if (s->for_.kind == IR_FOR_THREAD) {
            for (int i = 0; i < kb->nr; i++)
                if (kb->ranges[i]->for_.var == s->for_.var) ts_buf_printf(o, "T%d", i);
            return;
        }
        ts_buf_puts(o, "L{");
        shape(kb, s->for_.body, o);
        ts_buf_puts(o, "}");
        return;
    case IR_S_IF:
        ts_buf_puts(o, "I{");
        shape(kb, s->if_.then, o);
        ts_buf_puts(o, "}");
        return;
    default: ts_buf_puts(o, "?"); return;
    }
}

/* Run insert_sync on kb's kernel; the shape string, or "error: <message>". */
static const char *sync_shape(Kb *kb, TsStatus *st) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    TsCaps caps;
    memset(&caps, 0, sizeof caps);
    TsBuf o = {0};
    *st = TS_OK;
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        *st = d.status;
        ts_buf_printf(&o, "error: %s", ts_buf_str(&d.msg));
        ts_buf_free(&d.msg);
    } else {
        TsPassCtx cx = {&d, kb->a, kb->k, TS_TARGET_CUDA, &caps};
        ts_pass_insert_sync(&cx);
        ts_try_end(&d, saved);
        shape(kb, kb->k->body, &o);
    }
    const char *r = ts_strdup(kb->a, ts_buf_str(&o));
    ts_buf_free(&o);
    return r;
}

/* Run the kernel in the thread-level interpreter (strict): true if clean. */
static bool runs_clean(Kb *kb) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    double data[256];
    for (int i = 0; i < 256; i++) data[i] = i * 0.5 - 7;
    volatile bool ok = true;
    IrTInterp *volatile tx = NULL;
    if (ts_try(&d, &jb, &saved)) {
        fprintf(stderr, "interpreter: %s\n", ts_buf_str(&d.msg));
        ok = false;
    } else {
        tx = ir_tinterp_new(kb->a, &d, kb->k, IR_TINTERP_STRICT);
        ir_tinterp_bind_buffer(tx, kb->x, data);
        ir_tinterp_run_grid(tx);
    }
    ts_try_end(&d, saved);
    if (tx) ir_tinterp_free(tx);
    ts_buf_free(&d.msg);
    return ok;
}

/* ---- thread bodies ------------------------------------------------------ */

static IrStmt *a_from_x(Kb *kb, IrExpr *t) { return ST(kb, kb->sa, t, LD(kb, kb->x, t)); }
static IrStmt *a_twice(Kb *kb, IrExpr *t) {
    return ST(kb, kb->sa, t, ir_bin(kb->a, IR_MUL, LD(kb, kb->sa, t), ir_float(kb->a, 2, TS_FLOAT32)));
}
static IrStmt *b_from_next_a(Kb *kb, IrExpr *t) { return ST(kb, kb->sb, t, LD(kb, kb->sa, MOD(kb, ADD(kb, t, I(kb, 1)), 64))); }
static IrStmt *b_from_a(Kb *kb, IrExpr *t) { return ST(kb, kb->sb, t, LD(kb, kb->sa, t)); }
static IrStmt *a_from_b(Kb *kb, IrExpr *t) {
    return ST(kb, kb->sa, t, ir_bin(kb->a, IR_ADD, LD(kb, kb->sb, t), ir_float(kb->a, 1, TS_FLOAT32)));
}
static IrStmt *a_zero(Kb *kb, IrExpr *t) { return ST(kb, kb->sa, t, ir_float(kb->a, 0, TS_FLOAT32)); }
static IrStmt *x_from_b(Kb *kb, IrExpr *t) { return ST(kb, kb->x, t, LD(kb, kb->sb, t)); }
static IrStmt *x_from_a(Kb *kb, IrExpr *t) { return ST(kb, kb->x, t, LD(kb, kb->sa, t)); }
/* a[t] written and a[t + 1] read by the same range: threads race */
static IrStmt *a_race(Kb *kb, IrExpr *t) {
    IrStmt *s = ir_seq(kb->a);
    add(kb, s, a_from_x(kb, t));
    add(kb, s, ST(kb, kb->sb, t, LD(kb, kb->sa, MOD(kb, ADD(kb, t, I(kb, 1)), 64))));
    return s;
}
static IrStmt *barrier_inside(Kb *kb, IrExpr *t) {
    IrStmt *s = ir_seq(kb->a);
    add(kb, s, a_from_x(kb, t));
    add(kb, s, ir_stmt(kb->a, IR_S_BARRIER, (TsLoc){0}));
    return s;
}
/* thread 0 role: x[0] = a[0];  thread 0 role: x[1] = a[5] */
static IrStmt *x0_from_a0(Kb *kb, IrExpr *t) {
    (void)t;
    return ST(kb, kb->x, I(kb, 0), LD(kb, kb->sa, I(kb, 0)));
}
static IrStmt *x1_from_a5(Kb *kb, IrExpr *t) {
    (void)t;
    return ST(kb, kb->x, I(kb, 1), LD(kb, kb->sa, I(kb, 5)));
}
/* async copy of 4 floats per thread into a[4t .. 4t + 4) */
static IrStmt *a_async(Kb *kb, IrExpr *t) {
    IrStmt *v = ir_stmt(kb->a, IR_S_VCOPY, (TsLoc){0});
    IrExpr *i = ir_bin(kb->a, IR_MUL, t, I(kb, 4));
    v->vcopy.dst = kb->sa;
    v->vcopy.src = kb->x;
    v->vcopy.didx = TS_NEWN(kb->a, IrExpr *, 1);
    v->vcopy.sidx = TS_NEWN(kb->a, IrExpr *, 1);
    v->vcopy.didx[0] = v->vcopy.sidx[0] = i;
    v->vcopy.ndi = v->vcopy.nsi = 1;
    v->vcopy.lanes = 4;
    v->vcopy.async = 1;
    return v;
}
/* b[t] = a[4 * ((t + 1) % 64)]: another thread's copy */
static IrStmt *b_from_async(Kb *kb, IrExpr *t) {
    return ST(kb, kb->sb, t, LD(kb, kb->sa, ir_bin(kb->a, IR_MUL, MOD(kb, ADD(kb, t, I(kb, 1)), 64), I(kb, 4))));
}

static IrStmt *loop(Kb *kb, int64_t n, IrStmt *body) {
    IrVar *k = ir_var(kb->k, "k", TS_INT32, IR_VAR_LOOP);
    return ir_for(kb->a, k, I(kb, 0), I(kb, n), IR_FOR_SERIAL, body);
}

typedef struct Case {
    const char *name;  /* what it shows */
    const char *want;  /* the shape string (or the start of an error message) */
} Case;

static void expect(Kb *kb, const Case *c, TsStatus want_st) {
    TsStatus st;
    const char *got = sync_shape(kb, &st);
    if (strcmp(got, c->want) != 0 && !(want_st && strstr(got, c->want)))
        fprintf(stderr, "case '%s': want %s, got %s\n", c->name, c->want, got);
    CHECK(strcmp(got, c->want) == 0 || (want_st && strstr(got, c->want)));
    CHECK_EQ_INT(want_st, st);
    if (!want_st) CHECK(runs_clean(kb));
}

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Run insert_sync on kb's kernel: its status. */
static TsStatus run_sync(Kb *kb) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    TsCaps caps;
    memset(&caps, 0, sizeof caps);
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        ts_buf_free(&d.msg);
        return d.status;
    }
    TsPassCtx cx = {&d, kb->a, kb->k, TS_TARGET_CUDA, &caps};
    ts_pass_insert_sync(&cx);
    ts_try_end(&d, saved);
    return TS_OK;
}

/* a[t] = x[t]; n times (a[t] *= 2 or b[t] = a[t], alternating: all by
 * thread t, no barrier); then b[t] = a[t + 1] (one barrier before it).
 * The pass's CPU time in ms (best of five); *ok: every run placed the
 * barrier right. */
static double chain_ms(int n, bool *ok) {
    double best = 1e30;
    TsBuf want = {0};
    for (int i = 0; i <= n; i++) ts_buf_printf(&want, "T%d", i);
    ts_buf_printf(&want, "BT%d", n + 1);
    for (int rep = 0; rep < 5; rep++) {
        TsArena a;
        ts_arena_init(&a);
        Kb kb = kernel(&a);
        IrStmt **ranges = TS_NEWN(&a, IrStmt *, n + 2);
        for (int i = 0; i <= n + 1; i++) {
            ranges[i] = range(&kb, 0, NT, i == 0 ? a_from_x : i == n + 1 ? b_from_next_a : i % 2 ? a_twice : b_from_a);
            kb.nr = 0; /* (kb.ranges holds 16: these are numbered here instead) */
            add(&kb, kb.k->body, ranges[i]);
        }
        double t0 = cpu_ms();
        TsStatus st = run_sync(&kb);
        double t = cpu_ms() - t0;
        if (t < best) best = t;
        /* the shape: thread ranges by position */
        TsBuf got = {0};
        int next = 0;
        const IrStmt *body = kb.k->body;
        while (body->kind == IR_S_SEQ && body->seq.n == 1 && body->seq.v[0]->kind == IR_S_SEQ) body = body->seq.v[0];
        for (int i = 0; st == TS_OK && i < body->seq.n; i++) {
            const IrStmt *s = body->seq.v[i];
            if (s->kind == IR_S_BARRIER) ts_buf_puts(&got, "B");
            else if (s->kind == IR_S_FOR && next <= n + 1 && s == ranges[next]) ts_buf_printf(&got, "T%d", next++);
            else ts_buf_puts(&got, "?");
        }
        if (st != TS_OK || strcmp(ts_buf_str(&got), ts_buf_str(&want)) != 0) {
            fprintf(stderr, "chain of %d: want %s, got %s\n", n, ts_buf_str(&want), ts_buf_str(&got));
            *ok = false;
        }
        ts_buf_free(&got);
        ts_arena_free(&a);
    }
    ts_buf_free(&want);
    return best;
}

/* A named barrier (id, count) statement, and a T.ws role of threads [lo, lo + n) around body. */
static IrStmt *named_barrier(Kb *kb, int id, int count) {
    IrStmt *b = ir_stmt(kb->a, IR_S_BARRIER, (TsLoc){0});
    b->barrier.id = id;
    b->barrier.count = count;
    return b;
}
static IrStmt *role_of(Kb *kb, int lo, int n, int id, IrStmt *body) {
    IrStmt *r = ir_stmt(kb->a, IR_S_ROLE, (TsLoc){0});
    r->role.lo = lo;
    r->role.n = n;
    r->role.id = id;
    r->role.body = ir_seq(kb->a);
    ir_seq_push(kb->a, r->role.body, body);
    return r;
}

int main(void) {
    TsArena a;
    ts_arena_init(&a);
    {
        /* complexity: a chain 4x as long costs about 4x, not 16x */
        bool ok = true;
        chain_ms(16, &ok); /* warm up */
        double t64 = chain_ms(64, &ok), t256 = chain_ms(256, &ok);
        fprintf(stderr, "insert_sync on a chain of 64 / 256 thread ranges: %.3f / %.3f ms (ratio %.1f)\n", t64, t256,
                t256 / t64);
        CHECK(ok);
        CHECK(t256 < 8 * t64);
    }
    {
        /* which named barriers are reached from one instruction by all their threads (bar.sync,
         * .aligned) and which from several (barrier.sync): a role's barrier of its own 32 threads,
         * the two roles' copies of a barrier of the whole block (the unit collectives' shape), a
         * barrier of the block outside roles, and one of half the block outside roles */
        Kb kb = kernel(&a);
        IrStmt *own = named_barrier(&kb, 2, 32), *unit0 = named_barrier(&kb, 1, NT), *unit1 = named_barrier(&kb, 1, NT);
        IrStmt *whole = named_barrier(&kb, 3, NT), *half = named_barrier(&kb, 4, NT / 2);
        add(&kb, kb.k->body, role_of(&kb, 0, 32, 1, own));
        add(&kb, kb.k->body, role_of(&kb, 0, 32, 1, unit0));
        add(&kb, kb.k->body, role_of(&kb, 32, 32, 2, unit1));
        add(&kb, kb.k->body, whole);
        add(&kb, kb.k->body, half);
        TsStatus st;
        sync_shape(&kb, &st);
        CHECK_EQ_INT(TS_OK, st);
        CHECK(!own->barrier.unaligned);
        CHECK(unit0->barrier.unaligned);
        CHECK(unit1->barrier.unaligned);
        CHECK(!whole->barrier.unaligned);
        CHECK(half->barrier.unaligned);
    }
    {
        /* RAW: b[t] = a[t + 1] after a[t] = x[t]; then the same thread's a[t] * 2 needs none */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, range(&kb, 0, NT, a_twice));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_next_a));
        expect(&kb, &(Case){"RAW", "T0T1BT2"}, TS_OK);
    }
    {
        /* WAR: a[t] = 0 while thread t - 1 may still read a[t] (after the RAW) */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_next_a));
        add(&kb, kb.k->body, range(&kb, 0, NT, a_zero));
        add(&kb, kb.k->body, range(&kb, 0, NT, x_from_a));
        expect(&kb, &(Case){"WAR", "T0BT1BT2T3"}, TS_OK);
    }
    {
        /* same thread: a[t], b[t] and x[t] all by thread t: no barrier at all */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_a));
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_b));
        add(&kb, kb.k->body, range(&kb, 0, NT, x_from_b));
        expect(&kb, &(Case){"same thread", "T0T1T2T3"}, TS_OK);
    }
    {
        /* loop-carried: in the body a[t] = b[t] + 1 then b[t] = a[t + 1]; the
         * second needs a barrier (RAW on a), the first one too, but only
         * because of the previous iteration (WAR on a around the back edge) */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_a));
        IrStmt *body = ir_seq(&a);
        add(&kb, body, range(&kb, 0, NT, a_from_b));
        add(&kb, body, range(&kb, 0, NT, b_from_next_a));
        add(&kb, kb.k->body, loop(&kb, 3, body));
        expect(&kb, &(Case){"loop-carried", "T0T1L{BT2BT3}"}, TS_OK);
    }
    {
        /* first iteration only: b[t] = a[t + 1] in a loop after a[t] = x[t]:
         * one barrier before the loop, none per iteration */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        IrStmt *body = ir_seq(&a);
        add(&kb, body, range(&kb, 0, NT, b_from_next_a));
        add(&kb, kb.k->body, loop(&kb, 4, body));
        add(&kb, kb.k->body, range(&kb, 0, NT, x_from_b));
        expect(&kb, &(Case){"hoisted out of the loop", "T0BL{T1}T2"}, TS_OK);
    }
    {
        /* barriers already there (a copy lowering's, a pipeline's) are
         * placed again: none where nothing needs it, never two in a row */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_BARRIER, (TsLoc){0}));
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_BARRIER, (TsLoc){0}));
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_BARRIER, (TsLoc){0}));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_a));
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_BARRIER, (TsLoc){0}));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_next_a));
        expect(&kb, &(Case){"existing barriers", "T0T1BT2"}, TS_OK);
    }
    {
        /* an async copy lands at its wait: the barrier goes after the wait */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_async));
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_ASYNC_COMMIT, (TsLoc){0}));
        IrStmt *w = ir_stmt(&a, IR_S_ASYNC_WAIT, (TsLoc){0});
        w->async_wait.pending = 0;
        add(&kb, kb.k->body, w);
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_async));
        expect(&kb, &(Case){"async copy", "T0CWBT1"}, TS_OK);
    }
    {
        /* cp.async.wait_group 1 leaves the newest group in flight: the copy
         * lands at the wait_group 0 after it, and the barrier goes there */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_async));
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_ASYNC_COMMIT, (TsLoc){0}));
        IrStmt *w1 = ir_stmt(&a, IR_S_ASYNC_WAIT, (TsLoc){0}), *w0 = ir_stmt(&a, IR_S_ASYNC_WAIT, (TsLoc){0});
        w1->async_wait.pending = 1;
        w0->async_wait.pending = 0;
        add(&kb, kb.k->body, w1);
        add(&kb, kb.k->body, w0);
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_async));
        expect(&kb, &(Case){"wait_group counts", "T0CWWBT1"}, TS_OK);
    }
    {
        /* a copy not committed yet is covered by no wait: it lands at the
         * wait after its commit */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_async));
        IrStmt *w1 = ir_stmt(&a, IR_S_ASYNC_WAIT, (TsLoc){0}), *w0 = ir_stmt(&a, IR_S_ASYNC_WAIT, (TsLoc){0});
        w1->async_wait.pending = 0;
        w0->async_wait.pending = 0;
        add(&kb, kb.k->body, w1);
        add(&kb, kb.k->body, ir_stmt(&a, IR_S_ASYNC_COMMIT, (TsLoc){0}));
        add(&kb, kb.k->body, w0);
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_async));
        expect(&kb, &(Case){"uncommitted copy", "T0WCWBT1"}, TS_OK);
    }
    {
        /* a one-thread role: a[0] was written by thread 0 itself (no
         * barrier), a[5] by thread 5 (a barrier) */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, range(&kb, 0, 1, x0_from_a0));
        add(&kb, kb.k->body, range(&kb, 0, 1, x1_from_a5));
        expect(&kb, &(Case){"one-thread role", "T0T1BT2"}, TS_OK);
    }
    {
        /* threads of one range conflict: refused (no barrier in divergent code) */
        Kb kb = kernel(&a);
        add(&kb, kb.k->body, range(&kb, 0, NT, a_race));
        expect(&kb, &(Case){"race inside a thread range", "no barrier can go inside thread-level code"},
               TS_ERR_UNSUPPORTED);
    }
    {
        /* the program's own barrier inside a thread range (T.sync_threads in
         * thread-level code, TileScale's DeepEP): the range orders its threads
         * itself, so the race check inside it is not made; no barrier added */
        Kb kb = kernel(&a);
        IrStmt *r = range(&kb, 0, NT, barrier_inside); /* a[t] = x[t]; barrier; b[t] = a[t + 1] */
        IrExpr *t = ir_var_ref(&a, r->for_.var);
        ir_seq_push(&a, r->for_.body, ST(&kb, kb.sb, t, LD(&kb, kb.sa, MOD(&kb, ADD(&kb, t, I(&kb, 1)), 64))));
        add(&kb, kb.k->body, r);
        expect(&kb, &(Case){"barrier in divergent code", "T0"}, TS_OK);
    }
    {
        /* a uniform loop's exit: what the last iteration wrote is read after it */
        Kb kb = kernel(&a);
        IrStmt *body = ir_seq(&a);
        add(&kb, body, range(&kb, 0, NT, a_from_x));
        add(&kb, kb.k->body, loop(&kb, 2, body));
        add(&kb, kb.k->body, range(&kb, 0, NT, b_from_next_a));
        add(&kb, kb.k->body, range(&kb, 0, NT, x_from_a));
        expect(&kb, &(Case){"after a loop", "L{T0}BT1T2"}, TS_OK);
    }
    ts_arena_free(&a);
    return test_done();
}
