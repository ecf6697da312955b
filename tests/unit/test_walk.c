/*
 * test_walk.c — the generic IR walker and rewriter (ir/walk.h).
 *
 * The main check plants a marker `x + k` (k = 1..N, each once) in every
 * expression slot of every statement kind, then asks the visitor which
 * markers it saw and the mutator to replace x everywhere; a slot the
 * walker forgot shows up as a missing k.  Further checks: buffer accesses
 * with their read/write bits and enclosing loop, early stop, deletion,
 * sharing of unchanged subtrees, folding vs shallow rebuilds, deep copies,
 * random expressions rewritten by the mutator compared with the
 * independent ir_subst, and the conditional context (which parts run
 * under which guard, enter/leave balanced).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/walk.h"
#include "op/op.h"
#include "test.h"

static TsArena A;

static IrBuffer *buf(IrKernel *k, const char *name, IrScope sc, int ndim) {
    IrExpr *sh[3];
    for (int i = 0; i < ndim; i++) sh[i] = ir_i32(&A, 16);
    return ir_buffer(k, name, TS_FLOAT32, sc, ndim, sh, (TsLoc){0});
}

/* The marker fixture: x + k for a fresh k. */
typedef struct Fix {
    IrKernel *k;
    IrVar *x, *y, *i, *j;
    IrBuffer *g, *s, *f;
    int next;     /* the next marker number */
    IrStmt *body; /* the kernel body */
} Fix;

static IrExpr *mark(Fix *fx) {
    return ir_bin(&A, IR_ADD, ir_var_ref(&A, fx->x), ir_i32(&A, ++fx->next));
}

static IrExpr *markf(Fix *fx) { return ir_cast(&A, TS_FLOAT32, mark(fx)); }

static IrExpr **idx2(Fix *fx) {
    IrExpr **v = TS_NEWN(&A, IrExpr *, 2);
    v[0] = mark(fx);
    v[1] = mark(fx);
    return v;
}

static IrRegion region(Fix *fx, IrBuffer *b) {
    IrRegion r = {b, 2, idx2(fx), idx2(fx)};
    return r;
}

static IrStmt *tileop(Fix *fx, TsOpKind kind, int nr, IrBuffer **bufs, bool value) {
    IrStmt *s = ir_stmt(&A, IR_S_TILEOP, (TsLoc){0});
    s->op = TS_NEW(&A, IrTileOp);
    s->op->kind = kind;
    s->op->nr = nr;
    for (int i = 0; i < nr; i++) s->op->r[i] = region(fx, bufs[i]);
    if (value) s->op->value = markf(fx);
    return s;
}

/* Every statement kind, every expression slot holding a marker. */
static void build(Fix *fx) {
    IrKernel *k = fx->k = ir_kernel_new(&A, "walk");
    fx->x = ir_var(k, "x", TS_INT32, IR_VAR_SCALAR);
    fx->y = ir_var(k, "y", TS_INT32, IR_VAR_SCALAR);
    fx->i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    fx->j = ir_var(k, "j", TS_INT32, IR_VAR_LOOP);
    fx->g = buf(k, "G", IR_SCOPE_GLOBAL, 2);
    fx->s = buf(k, "S", IR_SCOPE_SHARED, 2);
    fx->f = buf(k, "F", IR_SCOPE_FRAGMENT, 2);
    IrStmt *top = ir_seq(&A);
    IrStmt *al = ir_stmt(&A, IR_S_ALLOC, (TsLoc){0});
    al->alloc.buf = fx->s;
    ir_seq_push(&A, top, al);
    IrStmt *inner = ir_seq(&A);
    /* store S[m, m] = G[m, m] */
    ir_seq_push(&A, inner, ir_store(&A, fx->s, idx2(fx), 2, ir_load(&A, fx->g, idx2(fx), 2)));
    /* atomic add */
    IrStmt *at = ir_store(&A, fx->g, idx2(fx), 2, markf(fx));
    at->kind = IR_S_ATOMIC_ADD;
    ir_seq_push(&A, inner, at);
    IrStmt *let = ir_stmt(&A, IR_S_LET, (TsLoc){0});
    let->let.var = ir_var(k, "l", TS_INT32, IR_VAR_LET);
    let->let.value = mark(fx);
    ir_seq_push(&A, inner, let);
    IrStmt *ev = ir_stmt(&A, IR_S_EVAL, (TsLoc){0});
    IrExpr *args[2] = {markf(fx), markf(fx)};
    ev->eval.e = ir_call(&A, IR_SHFL_XOR, args, 2, TS_FLOAT32);
    ir_seq_push(&A, inner, ev);
    IrStmt *pr = ir_stmt(&A, IR_S_PRINT, (TsLoc){0});
    pr->print.value = ir_select(&A, ir_bin(&A, IR_LT, mark(fx), ir_i32(&A, 0)), markf(fx),
                                ir_neg(&A, markf(fx)));
    ir_seq_push(&A, inner, pr);
    IrStmt *pb = ir_stmt(&A, IR_S_PRINT, (TsLoc){0});
    pb->print.buf = fx->f;
    ir_seq_push(&A, inner, pb);
    IrStmt *vc = ir_stmt(&A, IR_S_VCOPY, (TsLoc){0});
    vc->vcopy.dst = fx->s;
    vc->vcopy.src = fx->g;
    vc->vcopy.didx = idx2(fx);
    vc->vcopy.sidx = idx2(fx);
    vc->vcopy.ndi = vc->vcopy.nsi = 2;
    vc->vcopy.lanes = 4;
    vc->vcopy.async = 1;
    vc->vcopy.pred = ir_bin(&A, IR_NE, mark(fx), ir_i32(&A, 0));
    ir_seq_push(&A, inner, vc);
    ir_seq_push(&A, inner, ir_stmt(&A, IR_S_ASYNC_COMMIT, (TsLoc){0}));
    IrStmt *aw = ir_stmt(&A, IR_S_ASYNC_WAIT, (TsLoc){0});
    aw->async_wait.pending = 1;
    ir_seq_push(&A, inner, aw);
    ir_seq_push(&A, inner, ir_stmt(&A, IR_S_BARRIER, (TsLoc){0}));
    IrBuffer *cp[2] = {fx->g, fx->s}, *gm[3] = {fx->s, fx->s, fx->f}, *fl[1] = {fx->f};
    ir_seq_push(&A, inner, tileop(fx, TS_OP_COPY, 2, cp, false));
    ir_seq_push(&A, inner, tileop(fx, TS_OP_GEMM, 3, gm, false));
    ir_seq_push(&A, inner, tileop(fx, TS_OP_FILL, 1, fl, true));
    /* if / else, with a break in the else */
    IrStmt *iff = ir_stmt(&A, IR_S_IF, (TsLoc){0});
    iff->if_.cond = ir_bin(&A, IR_EQ, mark(fx), ir_i32(&A, 3));
    iff->if_.then = ir_store(&A, fx->f, idx2(fx), 2, markf(fx));
    iff->if_.else_ = ir_stmt(&A, IR_S_BREAK, (TsLoc){0});
    ir_seq_push(&A, inner, iff);
    /* thread loop j inside serial loop i inside a while */
    IrStmt *tl = ir_for(&A, fx->j, mark(fx), mark(fx), IR_FOR_THREAD, inner);
    IrStmt *sl = ir_for(&A, fx->i, mark(fx), mark(fx), IR_FOR_SERIAL, tl);
    IrStmt *wh = ir_stmt(&A, IR_S_WHILE, (TsLoc){0});
    wh->while_.cond = ir_bin(&A, IR_GT, mark(fx), ir_i32(&A, 0));
    wh->while_.body = sl;
    ir_seq_push(&A, top, wh);
    ir_seq_push(&A, top, ir_stmt(&A, IR_S_CONTINUE, (TsLoc){0}));
    fx->body = k->body = top;
}

/* ---- visitor: every slot, every statement ---------------------------------------- */

typedef struct Seen {
    const IrVar *x;         /* the marker var */
    int count[256];         /* times each marker was seen */
    int stmts[32];          /* pre_stmt calls per kind */
    int post;               /* post_stmt calls */
    int exprs_pre, exprs_post; /* expression callbacks */
} Seen;

static bool seen_expr(IrVisitor *v, const IrExpr *e) {
    Seen *s = v->ctx;
    s->exprs_pre++;
    int64_t c;
    if (e->kind == IR_E_BIN && e->bin.op == IR_ADD && e->bin.a->kind == IR_E_VAR &&
        e->bin.a->var == s->x && ir_is_const_int(e->bin.b, &c) && c > 0 && c < 256)
        s->count[c]++;
    return true;
}

static void seen_post_expr(IrVisitor *v, const IrExpr *e) {
    (void)e;
    ((Seen *)v->ctx)->exprs_post++;
}

static bool seen_stmt(IrVisitor *v, const IrStmt *st) {
    Seen *s = v->ctx;
    s->stmts[st->kind]++;
    CHECK(v->frame && v->frame->s == st);
    return true;
}

static void seen_post(IrVisitor *v, const IrStmt *st) {
    CHECK(v->frame && v->frame->s == st);
    ((Seen *)v->ctx)->post++;
}

static void check_all_marks(Fix *fx, const IrStmt *body, const IrVar *x, const char *what) {
    Seen s = {0};
    s.x = x;
    IrVisitor v = {.ctx = &s, .pre_stmt = seen_stmt, .post_stmt = seen_post,
                   .pre_expr = seen_expr, .post_expr = seen_post_expr};
    ir_visit_stmt(&v, body);
    CHECK(v.frame == NULL);
    int bad = 0;
    for (int k = 1; k <= fx->next; k++)
        if (s.count[k] != 1) {
            bad++;
            fprintf(stderr, "%s: marker %d seen %d times\n", what, k, s.count[k]);
        }
    CHECK_EQ_INT(0, bad);
    for (int k = fx->next + 1; k < 256; k++) CHECK_EQ_INT(0, s.count[k]);
    CHECK_EQ_INT(s.exprs_pre, s.exprs_post);
    /* statement kinds: every one in the fixture, counted */
    CHECK_EQ_INT(2, s.stmts[IR_S_SEQ]);
    CHECK_EQ_INT(2, s.stmts[IR_S_FOR]);
    CHECK_EQ_INT(1, s.stmts[IR_S_WHILE]);
    CHECK_EQ_INT(1, s.stmts[IR_S_IF]);
    CHECK_EQ_INT(2, s.stmts[IR_S_STORE]);
    CHECK_EQ_INT(1, s.stmts[IR_S_ATOMIC_ADD]);
    CHECK_EQ_INT(3, s.stmts[IR_S_TILEOP]);
    CHECK_EQ_INT(1, s.stmts[IR_S_VCOPY]);
    CHECK_EQ_INT(1, s.stmts[IR_S_BARRIER]);
    CHECK_EQ_INT(1, s.stmts[IR_S_ASYNC_COMMIT]);
    CHECK_EQ_INT(1, s.stmts[IR_S_ASYNC_WAIT]);
    CHECK_EQ_INT(1, s.stmts[IR_S_BREAK]);
    CHECK_EQ_INT(1, s.stmts[IR_S_CONTINUE]);
    CHECK_EQ_INT(2, s.stmts[IR_S_PRINT]);
    CHECK_EQ_INT(1, s.stmts[IR_S_ALLOC]);
    int total = 0;
    for (int k = 0; k < 32; k++) total += s.stmts[k];
    CHECK_EQ_INT(total, s.post);
}

/* ---- accesses ------------------------------------------------------------------ */

typedef struct Acc {
    char log[2048]; /* "name:rw:loopvar " per access */
    int n;
} Acc;

static void log_access(IrVisitor *v, const IrAccess *a) {
    Acc *c = v->ctx;
    const IrStmt *loop = ir_frame_loop(v->frame);
    size_t len = strlen(c->log);
    snprintf(c->log + len, sizeof c->log - len, "%s:%s%s:%s:%s:%d ", a->buf->name,
             a->rw & IR_ACC_READ ? "R" : "", a->rw & IR_ACC_WRITE ? "W" : "",
             a->region ? "r" : a->idx ? "i" : "-", loop ? loop->for_.var->name : "none",
             a->lanes);
    c->n++;
}

static void test_accesses(Fix *fx) {
    Acc c = {{0}, 0};
    IrVisitor v = {.ctx = &c, .access = log_access};
    ir_visit_stmt(&v, fx->body);
    CHECK_EQ_STR("S:W:i:j:1 G:R:i:j:1 G:RW:i:j:1 F:R:-:j:1 S:W:i:j:4 G:R:i:j:4 "
                 "G:R:r:j:1 S:W:r:j:1 S:R:r:j:1 S:R:r:j:1 F:RW:r:j:1 F:W:r:j:1 F:W:i:j:1 ",
                 c.log);
    unsigned shared = 1u << IR_SCOPE_SHARED, global = 1u << IR_SCOPE_GLOBAL;
    CHECK_EQ_INT(IR_ACC_READ | IR_ACC_WRITE, ir_stmt_access_rw(fx->body, fx->s, 0));
    CHECK_EQ_INT(IR_ACC_READ | IR_ACC_WRITE, ir_stmt_access_rw(fx->body, NULL, shared));
    CHECK_EQ_INT(IR_ACC_READ | IR_ACC_WRITE, ir_stmt_access_rw(fx->body, NULL, global));
    /* the fill alone writes F; the gemm alone reads S and read-writes F */
    IrStmt *inner = fx->body->seq.v[1]->while_.body->for_.body->for_.body;
    const IrStmt *fill = inner->seq.v[12], *gemm = inner->seq.v[11];
    CHECK_EQ_INT(TS_OP_FILL, fill->op->kind);
    CHECK_EQ_INT(IR_ACC_WRITE, ir_stmt_access_rw(fill, fx->f, 0));
    CHECK_EQ_INT(0, ir_stmt_access_rw(fill, fx->s, 0));
    CHECK_EQ_INT(IR_ACC_READ, ir_stmt_access_rw(gemm, fx->s, 0));
    CHECK_EQ_INT(IR_ACC_READ | IR_ACC_WRITE, ir_stmt_access_rw(gemm, fx->f, 0));
    gemm->op->clear_accum = 1;
    CHECK_EQ_INT(IR_ACC_WRITE, ir_stmt_access_rw(gemm, fx->f, 0));
    gemm->op->clear_accum = 0;
    CHECK(ir_expr_loads(inner->seq.v[0]->store.value, fx->g));
    CHECK(!ir_expr_loads(inner->seq.v[0]->store.value, fx->s));
    CHECK(!ir_expr_loads(inner->seq.v[0]->store.idx[0], NULL));
}

/* ---- queries and early stop ------------------------------------------------------- */

static bool is_barrier(const IrStmt *s, void *ctx) {
    (*(int *)ctx)++;
    return s->kind == IR_S_BARRIER;
}

static bool is_const7(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_INT && e->ival == 7;
}

static void test_queries(Fix *fx) {
    int calls = 0;
    CHECK(ir_stmt_any(fx->body, is_barrier, &calls));
    int first = calls;
    /* SEQ, ALLOC, WHILE, FOR, FOR, SEQ, then 10 statements up to the barrier */
    CHECK_EQ_INT(6 + 10, first);
    calls = 0;
    CHECK(!ir_stmt_any(fx->body->seq.v[0], is_barrier, &calls));
    CHECK_EQ_INT(1, calls);
    CHECK(ir_stmt_any_expr(fx->body, is_const7, NULL));
    CHECK(ir_stmt_uses_var(fx->body, fx->x));
    CHECK(!ir_stmt_uses_var(fx->body, fx->y));
    CHECK(!ir_stmt_uses_var(fx->body, fx->i)); /* bound, never referenced */
    IrExpr *e = ir_bin(&A, IR_MUL, ir_var_ref(&A, fx->i), ir_i32(&A, 3));
    CHECK(ir_expr_uses_var(e, fx->i));
    CHECK(!ir_expr_uses_var(e, fx->j));
}

/* ---- mutator ----------------------------------------------------------------------- */

typedef struct Sub {
    IrVar *from;  /* replaced var */
    IrExpr *to;   /* by this */
    int posts;    /* post_stmt calls */
} Sub;

static IrExpr *sub_pre(IrMutator *m, IrExpr *e) {
    Sub *s = m->ctx;
    return e->kind == IR_E_VAR && e->var == s->from ? s->to : NULL;
}

static IrStmt *count_post(IrMutator *m, IrStmt *s) {
    ((Sub *)m->ctx)->posts++;
    return s;
}

static const char *stmt_text(const IrStmt *s) {
    static TsBuf b;
    ts_buf_free(&b);
    ir_print_stmt(&b, s, 0);
    return ts_sprintf(&A, "%s", ts_buf_str(&b));
}

static const char *expr_text(const IrExpr *e) {
    static TsBuf b;
    ts_buf_free(&b);
    ir_print_expr(&b, e);
    return ts_sprintf(&A, "%s", ts_buf_str(&b));
}

static void test_mutate(Fix *fx) {
    /* nothing to change: the very same tree comes back */
    Sub s0 = {fx->y, ir_i32(&A, 0), 0};
    IrMutator m0 = {.arena = &A, .ctx = &s0, .pre_expr = sub_pre, .post_stmt = count_post};
    CHECK(ir_mutate_stmt(&m0, fx->body) == fx->body);
    CHECK(m0.frame == NULL);
    CHECK(s0.posts > 20);

    /* x -> y everywhere, shallow: the markers become y + k */
    Sub s1 = {fx->x, ir_var_ref(&A, fx->y), 0};
    IrMutator m1 = {.arena = &A, .ctx = &s1, .pre_expr = sub_pre};
    const char *before = stmt_text(fx->body);
    IrStmt *r = ir_mutate_stmt(&m1, fx->body);
    CHECK(r != fx->body);
    CHECK(!ir_stmt_uses_var(r, fx->x));
    CHECK_EQ_STR(before, stmt_text(fx->body)); /* the original is untouched */
    check_all_marks(fx, r, fx->y, "x->y");
    /* the alloc had nothing to change: shared */
    CHECK(r->seq.v[0] == fx->body->seq.v[0]);
    CHECK(r->seq.v[2] == fx->body->seq.v[2]);

    /* x -> 10 with folding: the markers become constants 11.. */
    Sub s2 = {fx->x, ir_i32(&A, 10), 0};
    IrMutator m2 = {.arena = &A, .ctx = &s2, .pre_expr = sub_pre, .fold = true};
    IrStmt *r2 = ir_mutate_stmt(&m2, fx->body);
    CHECK(!ir_stmt_uses_var(r2, fx->x));
    const IrStmt *w = r2->seq.v[1], *w0 = fx->body->seq.v[1];
    int64_t kc = w0->while_.cond->bin.a->bin.b->ival, ke = w0->while_.body->for_.extent->bin.b->ival;
    CHECK(w->while_.cond->kind == IR_E_INT && w->while_.cond->ival == 1); /* 10 + k > 0 */
    CHECK_EQ_STR(ts_sprintf(&A, "%d", (int)(10 + ke)), expr_text(w->while_.body->for_.extent));
    /* without folding the same rewrite keeps the additions */
    IrMutator m3 = {.arena = &A, .ctx = &s2, .pre_expr = sub_pre};
    IrStmt *r3 = ir_mutate_stmt(&m3, fx->body);
    CHECK_EQ_STR(ts_sprintf(&A, "10 + %d > 0", (int)kc), expr_text(r3->seq.v[1]->while_.cond));

    /* deep copy: fresh nodes everywhere, same text */
    IrMutator mc = {.arena = &A, .copy = true};
    IrStmt *c = ir_mutate_stmt(&mc, fx->body);
    CHECK(c != fx->body && c->seq.v[0] != fx->body->seq.v[0]);
    CHECK(c->seq.v[1]->while_.cond != fx->body->seq.v[1]->while_.cond);
    CHECK_EQ_STR(before, stmt_text(c));
    check_all_marks(fx, c, fx->x, "copy");
}

/* Deletion: barriers and async statements go; a loop body that is deleted
 * becomes an empty sequence. */
static IrStmt *drop_sync(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_BARRIER || s->kind == IR_S_ASYNC_COMMIT || s->kind == IR_S_ASYNC_WAIT)
        return NULL;
    return s;
}

static IrStmt *drop_stores(IrMutator *m, IrStmt *s) {
    (void)m;
    return s->kind == IR_S_STORE ? NULL : s;
}

static bool is_sync(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_BARRIER || s->kind == IR_S_ASYNC_COMMIT || s->kind == IR_S_ASYNC_WAIT;
}

static void test_delete(Fix *fx) {
    IrMutator m = {.arena = &A, .post_stmt = drop_sync};
    IrStmt *inner = fx->body->seq.v[1]->while_.body->for_.body->for_.body;
    IrStmt *r = ir_mutate_stmt(&m, fx->body);
    IrStmt *rin = r->seq.v[1]->while_.body->for_.body->for_.body;
    CHECK_EQ_INT(inner->seq.n - 3, rin->seq.n);
    CHECK(!ir_stmt_any(r, is_sync, NULL));
    CHECK(ir_stmt_any(fx->body, is_sync, NULL));
    CHECK(rin->seq.v[0] == inner->seq.v[0]);
    IrStmt *loop = ir_for(&A, fx->i, ir_i32(&A, 0), ir_i32(&A, 4), IR_FOR_SERIAL,
                          ir_store(&A, fx->f, idx2(fx), 2, markf(fx)));
    IrMutator md = {.arena = &A, .post_stmt = drop_stores};
    IrStmt *rl = ir_mutate_stmt(&md, loop);
    CHECK(rl != loop && rl->kind == IR_S_FOR);
    CHECK(rl->for_.body && rl->for_.body->kind == IR_S_SEQ && rl->for_.body->seq.n == 0);
    CHECK(ir_mutate_stmt(&md, loop->for_.body) == NULL);
}

/* post_stmt sees the rebuilt node while the frame still shows the original. */
typedef struct FrameCk {
    int bad;  /* mismatches */
    int fors; /* loops seen */
} FrameCk;

static IrStmt *frame_post(IrMutator *m, IrStmt *s) {
    FrameCk *c = m->ctx;
    if (!m->frame || m->frame->s->kind != s->kind) c->bad++;
    if (s->kind == IR_S_FOR) c->fors++;
    return s;
}

static IrExpr *frame_pre_expr(IrMutator *m, IrExpr *e) {
    FrameCk *c = m->ctx;
    (void)e;
    if (!m->frame) c->bad++;
    return NULL;
}

static void test_mutate_frames(Fix *fx) {
    FrameCk c = {0, 0};
    IrMutator m = {.arena = &A, .ctx = &c, .post_stmt = frame_post, .pre_expr = frame_pre_expr,
                   .copy = true};
    ir_mutate_stmt(&m, fx->body);
    CHECK_EQ_INT(0, c.bad);
    CHECK_EQ_INT(2, c.fors);
}

/* ---- random expressions: mutator substitution == ir_subst -------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static IrExpr *rand_expr(IrVar **vars, int nv, IrBuffer *b, int depth) {
    if (depth <= 0 || rnd(4) == 0) {
        if (rnd(2)) return ir_var_ref(&A, vars[rnd((unsigned)nv)]);
        return ir_i32(&A, (int64_t)rnd(9) - 2);
    }
    static const IrBinOp ops[] = {IR_ADD, IR_SUB, IR_MUL, IR_FLOORDIV, IR_FLOORMOD, IR_MIN, IR_MAX};
    switch (rnd(6)) {
    case 0: return ir_neg(&A, rand_expr(vars, nv, b, depth - 1));
    case 1: {
        IrExpr *c = ir_bin(&A, IR_LT, rand_expr(vars, nv, b, depth - 1), rand_expr(vars, nv, b, depth - 1));
        return ir_select(&A, c, rand_expr(vars, nv, b, depth - 1), rand_expr(vars, nv, b, depth - 1));
    }
    case 2: {
        IrExpr *ix[2] = {rand_expr(vars, nv, b, depth - 1), rand_expr(vars, nv, b, depth - 1)};
        return ir_cast(&A, TS_INT32, ir_load(&A, b, ix, 2));
    }
    default:
        return ir_bin(&A, ops[rnd(7)], rand_expr(vars, nv, b, depth - 1),
                      rand_expr(vars, nv, b, depth - 1));
    }
}

static void test_random_subst(Fix *fx) {
    IrVar *vars[3] = {fx->x, fx->y, fx->i};
    int same = 0, trials = 300;
    for (int t = 0; t < trials; t++) {
        IrExpr *e = rand_expr(vars, 3, fx->g, 5);
        IrExpr *to = rnd(2) ? ir_i32(&A, (int64_t)rnd(7) - 3)
                            : ir_bin(&A, IR_ADD, ir_var_ref(&A, fx->j), ir_i32(&A, 1));
        IrVar *from[1] = {fx->x};
        IrExpr *tov[1] = {to};
        IrExpr *want = ir_subst(&A, e, from, tov, 1);
        Sub s = {fx->x, to, 0};
        IrMutator m = {.arena = &A, .ctx = &s, .pre_expr = sub_pre, .fold = true};
        IrExpr *got = ir_mutate_expr(&m, e);
        if (!strcmp(expr_text(want), expr_text(got))) same++;
        else
            fprintf(stderr, "subst differs:\n  %s\n  %s\n", expr_text(want), expr_text(got));
        CHECK(!ir_expr_uses_var(got, fx->x));
        if (!ir_expr_uses_var(e, fx->x)) CHECK(got == e); /* untouched: shared */
    }
    CHECK_EQ_INT(trials, same);
}

/* ---- conditional context (IrGuard) ------------------------------------------------ */

typedef struct GuardLog {
    char chain[16][64];  /* per marker k: the kinds of the guards around it, innermost first */
    IrGuard inner[16];   /* a copy of the innermost guard at marker k */
    int enters, leaves;  /* callback counts */
    int depth, bad;      /* guards entered and not left; v->guard mismatches seen */
} GuardLog;

static const char *guard_name(IrGuardKind k) {
    static const char *const n[] = {"THEN", "ELSE", "WHILE", "FOR", "SEL_A", "SEL_B", "AND", "OR"};
    return n[k];
}

static bool guard_pre_expr(IrVisitor *v, const IrExpr *e) {
    GuardLog *L = v->ctx;
    int64_t c;
    if (e->kind == IR_E_BIN && e->bin.op == IR_ADD && e->bin.a->kind == IR_E_VAR && ir_is_const_int(e->bin.b, &c) &&
        c > 0 && c < 16) {
        char *o = L->chain[c];
        o[0] = 0;
        for (const IrGuard *g = v->guard; g; g = g->up)
            snprintf(o + strlen(o), 64 - strlen(o), "%s%s", o[0] ? " " : "", guard_name(g->kind));
        if (v->guard) L->inner[c] = *v->guard;
    }
    return true;
}

static bool guard_stop_pre(IrVisitor *v, const IrExpr *e) {
    GuardLog *L = v->ctx;
    guard_pre_expr(v, e);
    if (L->chain[10][0]) v->stop = true;
    return !v->stop;
}

static void guard_enter(IrVisitor *v, const IrGuard *g) {
    GuardLog *L = v->ctx;
    L->enters++;
    L->depth++;
    if (v->guard != g) L->bad++;
}

static void guard_leave(IrVisitor *v, const IrGuard *g) {
    GuardLog *L = v->ctx;
    L->leaves++;
    L->depth--;
    if (v->guard != g) L->bad++;
}

/* Marker k (x + k) inside a comparison, usable as a condition. */
static IrExpr *gm(Fix *fx, int k) {
    return ir_bin(&A, IR_LT, ir_bin(&A, IR_ADD, ir_var_ref(&A, fx->x), ir_i32(&A, k)), ir_i32(&A, 100));
}

static IrStmt *ev(IrExpr *e) {
    IrStmt *s = ir_stmt(&A, IR_S_EVAL, (TsLoc){0});
    s->eval.e = e;
    return s;
}

/* Which parts are guarded, by what, with what condition: if/else branches,
 * select arms, the right operands of and/or, loop bodies; conditions, loop
 * bounds and left operands are not. */
static void test_guards(Fix *fx) {
    IrExpr *c1 = gm(fx, 1), *c3 = gm(fx, 3), *c9 = gm(fx, 9), *c11 = gm(fx, 11);
    IrStmt *body = ir_seq(&A);
    IrStmt *ifs = ir_stmt(&A, IR_S_IF, (TsLoc){0});
    ifs->if_.cond = c1;
    ifs->if_.then = ev(gm(fx, 2));
    ifs->if_.else_ = ev(ir_select(&A, c3, gm(fx, 4), gm(fx, 5)));
    ir_seq_push(&A, body, ifs);
    IrStmt *loop = ir_for(&A, fx->i, ir_bin(&A, IR_ADD, ir_var_ref(&A, fx->x), ir_i32(&A, 6)),
                          ir_bin(&A, IR_ADD, ir_var_ref(&A, fx->x), ir_i32(&A, 7)), IR_FOR_SERIAL,
                          ev(ir_bin(&A, IR_AND, gm(fx, 8), ir_bin(&A, IR_OR, c9, gm(fx, 10)))));
    ir_seq_push(&A, body, loop);
    IrStmt *wh = ir_stmt(&A, IR_S_WHILE, (TsLoc){0});
    wh->while_.cond = c11;
    wh->while_.body = ev(gm(fx, 12));
    ir_seq_push(&A, body, wh);
    GuardLog L;
    memset(&L, 0, sizeof L);
    IrVisitor v = {.ctx = &L, .pre_expr = guard_pre_expr, .enter_guard = guard_enter, .leave_guard = guard_leave};
    ir_visit_stmt(&v, body);
    static const char *const want[13] = {
        NULL, "", "THEN", "ELSE", "SEL_A ELSE", "SEL_B ELSE", "", "", "FOR", "AND FOR", "OR AND FOR", "", "WHILE"};
    for (int k = 1; k <= 12; k++) CHECK_EQ_STR(want[k], L.chain[k]);
    CHECK(L.inner[2].cond == c1 && !L.inner[2].negated && L.inner[2].s == ifs && !L.inner[2].e);
    CHECK(L.inner[3].cond == c1 && L.inner[3].negated);
    CHECK(L.inner[4].cond == c3 && !L.inner[4].negated && L.inner[4].e && !L.inner[4].s);
    CHECK(L.inner[5].cond == c3 && L.inner[5].negated);
    CHECK(L.inner[8].cond == NULL && L.inner[8].s == loop);
    CHECK(L.inner[9].cond == L.inner[9].e->bin.a && !L.inner[9].negated); /* and: under its left operand */
    CHECK(L.inner[10].cond == c9 && L.inner[10].negated);                 /* or: where c9 is false */
    CHECK(L.inner[12].cond == c11 && L.inner[12].s == wh);
    CHECK_EQ_INT(8, L.enters); /* then, else, 2 arms, for, and, or, while */
    CHECK_EQ_INT(L.enters, L.leaves);
    CHECK_EQ_INT(0, L.depth);
    CHECK_EQ_INT(0, L.bad);
    CHECK(v.guard == NULL);
    /* a stop inside three guards (marker 10) still leaves each guard entered */
    memset(&L, 0, sizeof L);
    IrVisitor w = {.ctx = &L, .enter_guard = guard_enter, .leave_guard = guard_leave, .pre_expr = guard_stop_pre};
    ir_visit_stmt(&w, body);
    CHECK(w.stop);
    CHECK_EQ_STR("OR AND FOR", L.chain[10]);
    CHECK_EQ_STR("", L.chain[12]); /* (not reached) */
    CHECK_EQ_INT(L.enters, L.leaves);
    CHECK(L.enters >= 3);
    CHECK(w.guard == NULL);
}

int main(void) {
    ts_arena_init(&A);
    Fix fx = {0};
    build(&fx);
    check_all_marks(&fx, fx.body, fx.x, "visit");
    CHECK(fx.next > 40);
    test_accesses(&fx);
    test_queries(&fx);
    test_mutate(&fx);
    test_delete(&fx);
    test_mutate_frames(&fx);
    test_random_subst(&fx);
    test_guards(&fx);
    ts_arena_free(&A);
    return test_done();
}
