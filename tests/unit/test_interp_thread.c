/*
 * test_interp_thread.c — the thread-level interpreter (src/ir/interp_thread.c)
 * on hand-built thread-level kernels.
 *
 * Each kernel is built with ir.c's constructors the way the CUDA passes
 * build thread-level IR (IR_FOR_THREAD loops, barriers, vector and
 * cp.async copies, commit/wait groups, shfl_xor, a tensor-core T.gemm on
 * a fragment with a layout), run on fresh random data, and compared with a
 * naive C loop or the block-level interpreter.  Each correct kernel then
 * gets the bug the interpreter exists to catch, one at a time — a dropped
 * barrier, a missing or too-weak async wait, swapped block indices, a
 * thread loop that drops its last element, a layout that puts two elements
 * in one register, a barrier in a partial thread range, a non-bijective
 * swizzle — and the test asserts that the run fails with the right
 * message or gives a wrong result (outputs are poisoned with NaN first, so
 * an element nobody writes cannot pass by accident).
 */
#include <math.h>
#include <stdlib.h>

#include "ir/interp.h"
#include "ir/interp_thread.h"
#include "ir/ir.h"
#include "ir/layout.h"
#include "op/op.h"
#include "pass/pass.h"
#include "test.h"

static TsArena A;
/* Statements get locations in this made-up source, so messages show them. */
static TsSource SRC;
static uint64_t rng = 0x2545f4914f6cdd1dull;

static double frand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* float32-exact values in [-1, 1) */
static double *rand_array(int64_t n) {
    double *p = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) p[i] = (double)(float)frand();
    return p;
}

/* float16-exact: multiples of 1/8 in [-1, 1) */
static double *rand_exact(int64_t n) {
    double *p = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) p[i] = floor(frand() * 8) / 8;
    return p;
}

static double *nan_array(int64_t n) {
    double *p = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) p[i] = NAN;
    return p;
}

/* Elements that differ; the first few printed unless a mismatch is the
 * expected outcome (quiet). */
static int mismatches_q(const double *got, const double *want, int64_t n, double tol, bool quiet) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])))) {
            if (bad < 3 && !quiet) fprintf(stderr, "  element %lld: got %.9g, want %.9g\n", (long long)i, got[i], want[i]);
            bad++;
        }
    return bad;
}

static int mismatches(const double *got, const double *want, int64_t n, double tol) {
    return mismatches_q(got, want, n, tol, false);
}

/* ---- building kernels ------------------------------------------------------ */

typedef struct Kb {
    IrKernel *k;
    IrStmt *body;
    IrVar *bx, *by;
} Kb;

static Kb kernel(const char *name, int gx, int gy, int threads) {
    Kb kb;
    kb.k = ir_kernel_new(&A, name);
    kb.k->ngrid = 2;
    kb.k->grid[0] = ir_i32(&A, gx);
    kb.k->grid[1] = ir_i32(&A, gy);
    kb.k->threads[0] = threads;
    kb.bx = ir_var(kb.k, "bx", TS_INT32, IR_VAR_BLOCK_IDX);
    kb.by = ir_var(kb.k, "by", TS_INT32, IR_VAR_BLOCK_IDX);
    kb.by->axis = 1;
    kb.k->block_idx[0] = kb.bx;
    kb.k->block_idx[1] = kb.by;
    kb.k->body = kb.body = ir_seq(&A);
    (void)ir_kernel_tid(kb.k);
    return kb;
}

static IrExpr *I(int64_t v) { return ir_i32(&A, v); }
static IrExpr *V(IrVar *v) { return ir_var_ref(&A, v); }
static IrExpr *ADD(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_ADD, a, b); }
static IrExpr *MUL(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_MUL, a, b); }
static IrExpr *DIV(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_FLOORDIV, a, b); }
static IrExpr *MOD(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_FLOORMOD, a, b); }
static IrExpr *SUB(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_SUB, a, b); }
static IrExpr *LT(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_LT, a, b); }

static IrExpr **idx(int n, IrExpr *i0, IrExpr *i1, IrExpr *i2) {
    IrExpr **v = TS_NEWN(&A, IrExpr *, 3);
    v[0] = i0;
    v[1] = i1;
    v[2] = i2;
    (void)n;
    return v;
}

static IrExpr *LD1(IrBuffer *b, IrExpr *i) { return ir_load(&A, b, idx(1, i, NULL, NULL), 1); }
static IrExpr *LD2(IrBuffer *b, IrExpr *i, IrExpr *j) { return ir_load(&A, b, idx(2, i, j, NULL), 2); }
static IrExpr *LD3(IrBuffer *b, IrExpr *i, IrExpr *j, IrExpr *k) { return ir_load(&A, b, idx(3, i, j, k), 3); }
static IrStmt *ST1(IrBuffer *b, IrExpr *i, IrExpr *v) { return ir_store(&A, b, idx(1, i, NULL, NULL), 1, v); }
static IrStmt *ST2(IrBuffer *b, IrExpr *i, IrExpr *j, IrExpr *v) { return ir_store(&A, b, idx(2, i, j, NULL), 2, v); }

static IrStmt *seq2(IrStmt *a, IrStmt *b) {
    IrStmt *s = ir_seq(&A);
    ir_seq_push(&A, s, a);
    if (b) ir_seq_push(&A, s, b);
    return s;
}

static IrStmt *IF(IrExpr *c, IrStmt *then, IrStmt *else_) {
    IrStmt *s = ir_stmt(&A, IR_S_IF, (TsLoc){0});
    s->if_.cond = c;
    s->if_.then = then;
    s->if_.else_ = else_;
    return s;
}

static IrStmt *stmt_at(IrStmtKind kind, int line) {
    return ir_stmt(&A, kind, (TsLoc){&SRC, line, 1});
}

static IrStmt *BARRIER(int line) { return stmt_at(IR_S_BARRIER, line); }

static IrVar *loopvar(Kb *kb, const char *name) { return ir_var(kb->k, name, TS_INT32, IR_VAR_LOOP); }

static IrStmt *FOR(IrVar *v, int64_t lo, int64_t n, IrForKind kind, IrStmt *body) {
    return ir_for(&A, v, I(lo), I(n), kind, body);
}

static IrBuffer *param(Kb *kb, const char *name, TsDType dt, int ndim, const int64_t *shape) {
    IrExpr *sh[4];
    for (int i = 0; i < ndim; i++) sh[i] = I(shape[i]);
    IrBuffer *b = ir_buffer(kb->k, name, dt, IR_SCOPE_GLOBAL, ndim, sh, (TsLoc){0});
    b->param = kb->k->params.n;
    IrParam p = {name, b, NULL, 0};
    ts_vec_push(&A, kb->k->params, p);
    return b;
}

static IrBuffer *alloc(Kb *kb, const char *name, TsDType dt, IrScope sc, int ndim, const int64_t *shape) {
    IrExpr *sh[4];
    for (int i = 0; i < ndim; i++) sh[i] = I(shape[i]);
    IrBuffer *b = ir_buffer(kb->k, name, dt, sc, ndim, sh, (TsLoc){&SRC, 1, 1});
    IrStmt *s = ir_stmt(&A, IR_S_ALLOC, (TsLoc){0});
    s->alloc.buf = b;
    ir_seq_push(&A, kb->body, s);
    return b;
}

static void push(Kb *kb, IrStmt *s) { ir_seq_push(&A, kb->body, s); }

/* Barrier statistics of the last run_t, by source line: completed and needed. */
static int64_t stat_done[128], stat_needed[128];

static void record_stats(IrTInterp *x) {
    memset(stat_done, 0, sizeof stat_done);
    memset(stat_needed, 0, sizeof stat_needed);
    const IrTInterpBarrier *b;
    int n = ir_tinterp_barrier_stats(x, &b);
    for (int i = 0; i < n; i++)
        if (b[i].stmt->loc.line > 0 && b[i].stmt->loc.line < 128) {
            stat_done[b[i].stmt->loc.line] += b[i].completed;
            stat_needed[b[i].stmt->loc.line] += b[i].needed;
        }
}

/* Run every block with all its threads; the message of a failure goes to
 * *msg (arena text), "" when it passed. */
static TsStatus run_t(IrKernel *k, double **data, IrTInterpModel model, const char **msg) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    IrTInterp *volatile x = NULL;
    volatile TsStatus st = TS_OK; /* set after the longjmp */
    if (ts_try(&d, &jb, &saved)) {
        st = d.status;
    } else {
        x = ir_tinterp_new(&A, &d, k, model);
        for (int i = 0; i < k->params.n; i++) ir_tinterp_bind_buffer(x, k->params.v[i].buf, data[i]);
        ir_tinterp_run_grid(x);
        record_stats(x);
    }
    ts_try_end(&d, saved);
    ir_tinterp_free(x);
    *msg = ts_strdup(&A, ts_buf_str(&d.msg));
    if (st && getenv("TS_VERBOSE")) fprintf(stderr, "%s: %s\n", k->name, *msg);
    ts_buf_free(&d.msg);
    return st;
}

static bool run_ok(IrKernel *k, double **data, IrTInterpModel model) {
    const char *msg;
    TsStatus st = run_t(k, data, model, &msg);
    if (st) fprintf(stderr, "kernel %s failed: %s\n", k->name, msg);
    return st == TS_OK;
}

/* ---- a tile through shared memory ---------------------------------------------
 * Block (bx, by) loads the 16x32 tile at rows by*16, columns bx*32 of A
 * (64 x 96) into shared memory, 4 elements per thread, then writes
 * B[i][j] = S[15 - i][31 - j] * 2 + S[i][j]: every thread reads elements
 * other threads wrote, so the barrier between the phases is needed. */

enum { TM = 16, TN = 32, GM = 64, GN = 96, NT = 128 };

typedef struct TileBugs {
    bool no_barrier;   /* drop the barrier between the phases */
    bool swap_blocks;  /* use bx for rows and by for columns in the store */
    bool short_loop;   /* the store phase's per-thread loop drops its last element */
    bool extra_barrier;/* a useless barrier before anything touches shared memory */
} TileBugs;

static IrKernel *tile_kernel(TileBugs bug) {
    Kb kb = kernel("tile", GN / TN, GM / TM, NT);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 2, (int64_t[]){GM, GN});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 2, (int64_t[]){GM, GN});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 2, (int64_t[]){TM, TN});
    /* phase 1: for v in thread(128): for r in serial(4): S[e/32][e%32] = A[...] */
    if (bug.extra_barrier) push(&kb, BARRIER(19));
    IrVar *v = loopvar(&kb, "v"), *r = loopvar(&kb, "r");
    IrExpr *e = ADD(MUL(V(r), I(NT)), V(v));
    IrExpr *i = DIV(e, I(TN)), *j = MOD(e, I(TN));
    IrExpr *gi = ADD(MUL(V(kb.by), I(TM)), i), *gj = ADD(MUL(V(kb.bx), I(TN)), j);
    push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, FOR(r, 0, TM * TN / NT, IR_FOR_SERIAL, ST2(s, i, j, LD2(a, gi, gj)))));
    if (!bug.no_barrier) push(&kb, BARRIER(20));
    /* phase 2 */
    IrVar *v2 = loopvar(&kb, "v2"), *r2 = loopvar(&kb, "r2");
    IrExpr *e2 = ADD(MUL(V(r2), I(NT)), V(v2));
    IrExpr *i2 = DIV(e2, I(TN)), *j2 = MOD(e2, I(TN));
    IrVar *rowb = bug.swap_blocks ? kb.bx : kb.by, *colb = bug.swap_blocks ? kb.by : kb.bx;
    IrExpr *oi = ADD(MUL(V(rowb), I(TM)), i2), *oj = ADD(MUL(V(colb), I(TN)), j2);
    IrExpr *val = ADD(MUL(LD2(s, SUB(I(TM - 1), i2), SUB(I(TN - 1), j2)), ir_float(&A, 2, TS_FLOAT32)), LD2(s, i2, j2));
    IrStmt *st = ST2(b, oi, oj, val);
    st->loc = (TsLoc){&SRC, 30, 5};
    /* partial-tile guard, so that swapped indices write nothing out of bounds */
    IrStmt *guarded = IF(ir_bin(&A, IR_AND, LT(oi, I(GM)), LT(oj, I(GN))), st, NULL);
    int trip = TM * TN / NT - (bug.short_loop ? 1 : 0);
    push(&kb, FOR(v2, 0, NT, IR_FOR_THREAD, FOR(r2, 0, trip, IR_FOR_SERIAL, guarded)));
    return kb.k;
}

static void tile_reference(const double *a, double *b) {
    for (int bi = 0; bi < GM / TM; bi++)
        for (int bj = 0; bj < GN / TN; bj++)
            for (int i = 0; i < TM; i++)
                for (int j = 0; j < TN; j++) {
                    double x = a[(bi * TM + TM - 1 - i) * GN + bj * TN + TN - 1 - j];
                    double y = a[(bi * TM + i) * GN + bj * TN + j];
                    b[(bi * TM + i) * GN + bj * TN + j] = (double)(float)((float)x * 2.0f + (float)y);
                }
}

static void test_tile(void) {
    double *a = rand_array(GM * GN), *want = TS_NEWN(&A, double, GM * GN);
    tile_reference(a, want);
    const char *msg;
    {
        double *b = nan_array(GM * GN);
        double *data[] = {a, b};
        CHECK(run_ok(tile_kernel((TileBugs){0}), data, IR_TINTERP_STRICT));
        CHECK_EQ_INT(0, mismatches(b, want, GM * GN, 0));
        CHECK_EQ_INT(12, stat_done[20]); /* one per block, each needed */
        CHECK_EQ_INT(12, stat_needed[20]);
    }
    {
        double *b = nan_array(GM * GN);
        double *data[] = {a, b};
        CHECK(run_ok(tile_kernel((TileBugs){.extra_barrier = true}), data, IR_TINTERP_STRICT));
        CHECK_EQ_INT(12, stat_done[19]);
        CHECK_EQ_INT(0, stat_needed[19]); /* redundant: nothing before it */
        CHECK_EQ_INT(12, stat_needed[20]);
    }
    {
        double *b = nan_array(GM * GN);
        double *data[] = {a, b};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(tile_kernel((TileBugs){.no_barrier = true}), data, IR_TINTERP_STRICT, &msg));
        /* threads run ahead and read elements before later threads write them */
        CHECK_CONTAINS(msg, "shared-memory race on S[");
        CHECK_CONTAINS(msg, "read it (at 30:5) since the last barrier");
    }
    {
        double *b = nan_array(GM * GN);
        double *data[] = {a, b};
        CHECK(run_ok(tile_kernel((TileBugs){.swap_blocks = true}), data, IR_TINTERP_STRICT));
        CHECK(mismatches_q(b, want, GM * GN, 0, true) > 0);
    }
    {
        double *b = nan_array(GM * GN);
        double *data[] = {a, b};
        CHECK(run_ok(tile_kernel((TileBugs){.short_loop = true}), data, IR_TINTERP_STRICT));
        CHECK_EQ_INT(GM * GN / 4, mismatches_q(b, want, GM * GN, 0, true));
    }
}

/* ---- a cp.async double-buffered pipeline ---------------------------------------
 * Block by sums the 8 column tiles of its 16 rows of A (16 x 256):
 * B[by*16 + i][j] = sum_t A[by*16 + i][t*32 + j].  Tiles move by cp.async
 * (4 floats per thread per tile) into S[2][16][32]; tile t + 1 is in
 * flight while tile t is summed (wait_group 1), a barrier after the wait
 * publishes the tile, one after the sums protects the buffer the next
 * iteration refills. */

enum { PT = 8, PR = 64, PC = PT * TN };

typedef struct PipeBugs {
    int wait_pending; /* the wait's N (1 is right) */
    bool no_wait;     /* no wait at all */
    bool no_trailing_barrier;
} PipeBugs;

static IrStmt *async_tile(Kb *kb, IrBuffer *s, IrBuffer *a, IrExpr *stage, IrExpr *tile) {
    IrVar *v = loopvar(kb, "cv");
    IrExpr *row = DIV(V(v), I(TN / 4)), *col = MUL(MOD(V(v), I(TN / 4)), I(4));
    IrStmt *c = stmt_at(IR_S_VCOPY, 40);
    c->vcopy.dst = s;
    c->vcopy.src = a;
    c->vcopy.didx = idx(3, stage, row, col);
    c->vcopy.ndi = 3;
    c->vcopy.sidx = idx(2, ADD(MUL(V(kb->by), I(TM)), row), ADD(MUL(tile, I(TN)), col), NULL);
    c->vcopy.nsi = 2;
    c->vcopy.lanes = 4;
    c->vcopy.async = 1;
    c->vcopy.pred = LT(tile, I(PT)); /* zero-fills past the last tile */
    return FOR(v, 0, NT, IR_FOR_THREAD, c);
}

static IrKernel *pipe_kernel(PipeBugs bug) {
    Kb kb = kernel("pipe", 1, PR / TM, NT);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 2, (int64_t[]){PR, PC});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 2, (int64_t[]){PR, TN});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 3, (int64_t[]){2, TM, TN});
    IrBuffer *acc = alloc(&kb, "acc", TS_FLOAT32, IR_SCOPE_LOCAL, 1, (int64_t[]){4});
    IrVar *v = loopvar(&kb, "v"), *r = loopvar(&kb, "r");
    push(&kb, FOR(v, 0, NT, IR_FOR_THREAD,
                  FOR(r, 0, 4, IR_FOR_SERIAL, ST1(acc, V(r), ir_float(&A, 0, TS_FLOAT32)))));
    push(&kb, async_tile(&kb, s, a, I(0), I(0)));
    push(&kb, stmt_at(IR_S_ASYNC_COMMIT, 41));
    IrVar *t = loopvar(&kb, "t");
    IrStmt *body = ir_seq(&A);
    ir_seq_push(&A, body, async_tile(&kb, s, a, MOD(ADD(V(t), I(1)), I(2)), ADD(V(t), I(1))));
    ir_seq_push(&A, body, stmt_at(IR_S_ASYNC_COMMIT, 42));
    if (!bug.no_wait) {
        IrStmt *w = stmt_at(IR_S_ASYNC_WAIT, 43);
        w->async_wait.pending = bug.wait_pending;
        ir_seq_push(&A, body, w);
    }
    ir_seq_push(&A, body, BARRIER(44));
    IrVar *v2 = loopvar(&kb, "v2"), *r2 = loopvar(&kb, "r2");
    IrExpr *e = ADD(MUL(V(r2), I(NT)), V(v2));
    IrStmt *sum = ST1(acc, V(r2), ADD(LD1(acc, V(r2)), LD3(s, MOD(V(t), I(2)), DIV(e, I(TN)), MOD(e, I(TN)))));
    sum->loc = (TsLoc){&SRC, 45, 9};
    ir_seq_push(&A, body, FOR(v2, 0, NT, IR_FOR_THREAD, FOR(r2, 0, 4, IR_FOR_SERIAL, sum)));
    if (!bug.no_trailing_barrier) ir_seq_push(&A, body, BARRIER(46));
    push(&kb, FOR(t, 0, PT, IR_FOR_SERIAL, body));
    IrVar *v3 = loopvar(&kb, "v3"), *r3 = loopvar(&kb, "r3");
    IrExpr *e3 = ADD(MUL(V(r3), I(NT)), V(v3));
    push(&kb, FOR(v3, 0, NT, IR_FOR_THREAD,
                  FOR(r3, 0, 4, IR_FOR_SERIAL,
                      ST2(b, ADD(MUL(V(kb.by), I(TM)), DIV(e3, I(TN))), MOD(e3, I(TN)), LD1(acc, V(r3))))));
    return kb.k;
}

static void test_pipeline(void) {
    double *a = rand_array(PR * PC), *want = TS_NEWN(&A, double, PR * TN);
    for (int i = 0; i < PR; i++)
        for (int j = 0; j < TN; j++) {
            float s = 0;
            for (int t = 0; t < PT; t++) s += (float)a[i * PC + t * TN + j];
            want[i * TN + j] = s;
        }
    const char *msg;
    {
        double *b = nan_array(PR * TN);
        double *data[] = {a, b};
        CHECK(run_ok(pipe_kernel((PipeBugs){.wait_pending = 1}), data, IR_TINTERP_STRICT));
        CHECK_EQ_INT(0, mismatches(b, want, PR * TN, 0));
        /* 4 blocks x 8 tiles; the barrier after the sums is needed except
         * after the last tile (nothing refills its stage) */
        CHECK_EQ_INT(32, stat_done[44]);
        CHECK_EQ_INT(32, stat_needed[44]);
        CHECK_EQ_INT(32, stat_done[46]);
        CHECK_EQ_INT(28, stat_needed[46]);
        /* wait_group 0 is slower but just as correct */
        double *b0 = nan_array(PR * TN);
        double *data0[] = {a, b0};
        CHECK(run_ok(pipe_kernel((PipeBugs){.wait_pending = 0}), data0, IR_TINTERP_STRICT));
        CHECK_EQ_INT(0, mismatches(b0, want, PR * TN, 0));
    }
    {
        double *b = nan_array(PR * TN);
        double *data[] = {a, b};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(pipe_kernel((PipeBugs){.no_wait = true}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, ":45:9:");
        CHECK_CONTAINS(msg, "while a cp.async copy into it (issued by thread");
        CHECK_CONTAINS(msg, "no async wait covering its group ran before");
    }
    {
        /* wait_group 2 leaves the tile being summed in flight */
        double *b = nan_array(PR * TN);
        double *data[] = {a, b};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(pipe_kernel((PipeBugs){.wait_pending = 2}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "is in flight");
    }
    {
        double *b = nan_array(PR * TN);
        double *data[] = {a, b};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(pipe_kernel((PipeBugs){.wait_pending = 1, .no_trailing_barrier = true}),
                                           data, IR_TINTERP_STRICT, &msg));
        /* thread 0 refills stage 0 while thread 1 has still to sum it */
        CHECK_CONTAINS(msg, "thread 1 reads S[0, 0, 1] while a cp.async copy into it (issued by thread 0 at 40:1)");
    }
}

/* ---- tensor-core gemm on a fragment with a layout ------------------------------
 * C (16 x 16 float32, a fragment) = A (16 x 32 fp16, shared) * B (32 x 16
 * fp16, shared); C's layout: element e = i*16 + j on thread e % 128 at
 * local e / 128 (the broken one: thread e % 64, so e and e + 64 share a
 * register).  Threads fill A and B, a barrier, the gemm, and each thread
 * writes its own two elements of C to D. */

typedef struct GemmBugs {
    bool twice;       /* layout with two elements per register */
    bool outside;     /* layout giving elements to threads past the block */
    bool library;     /* layout.c's cyclic layout (with its inverse) instead of the hand-made one */
    bool bad_inverse; /* ... whose inverse map is broken */
    bool wrong_owner; /* the store loop walks elements it does not own */
    bool no_barrier;
} GemmBugs;

static IrLayout *cyclic_layout(Kb *kb, int64_t n_cols, int mod) {
    IrLayout *l = TS_NEW(&A, IrLayout);
    l->ndim = 2;
    l->in = TS_NEWN(&A, IrVar *, 2);
    l->in[0] = ir_var(kb->k, "li", TS_INT32, IR_VAR_LOOP);
    l->in[1] = ir_var(kb->k, "lj", TS_INT32, IR_VAR_LOOP);
    IrExpr *e = ADD(MUL(V(l->in[0]), I(n_cols)), V(l->in[1]));
    l->thread = MOD(e, I(mod));
    l->nlocal = 1;
    l->local = TS_NEWN(&A, IrExpr *, 1);
    l->local[0] = DIV(e, I(NT));
    l->local_size = 2;
    l->replicate = 1;
    l->nthreads = NT;
    l->origin = "test cyclic";
    return l;
}

static IrKernel *gemm_kernel(GemmBugs bug) {
    enum { M = 16, N = 16, K = 32 };
    Kb kb = kernel("gemm", 1, 1, NT);
    IrBuffer *ga = param(&kb, "GA", TS_FLOAT16, 2, (int64_t[]){M, K});
    IrBuffer *gb = param(&kb, "GB", TS_FLOAT16, 2, (int64_t[]){K, N});
    IrBuffer *d = param(&kb, "D", TS_FLOAT32, 2, (int64_t[]){M, N});
    IrBuffer *sa = alloc(&kb, "SA", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){M, K});
    IrBuffer *sb = alloc(&kb, "SB", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){K, N});
    IrBuffer *c = alloc(&kb, "C", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){M, N});
    c->layout = cyclic_layout(&kb, N, bug.twice ? 64 : NT);
    if (bug.outside) c->layout->thread = ADD(c->layout->thread, I(64));
    if (bug.library || bug.bad_inverse) c->layout = ir_layout_cyclic(kb.k, 2, (int64_t[]){M, N}, NT);
    if (bug.bad_inverse) c->layout->index[1] = I(0);
    IrVar *v = loopvar(&kb, "v"), *r = loopvar(&kb, "r");
    IrExpr *e = ADD(MUL(V(r), I(NT)), V(v));
    IrStmt *fill = ir_seq(&A);
    ir_seq_push(&A, fill, ST2(sa, DIV(e, I(K)), MOD(e, I(K)), LD2(ga, DIV(e, I(K)), MOD(e, I(K)))));
    ir_seq_push(&A, fill, ST2(sb, DIV(e, I(N)), MOD(e, I(N)), LD2(gb, DIV(e, I(N)), MOD(e, I(N)))));
    push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, FOR(r, 0, M * K / NT, IR_FOR_SERIAL, fill)));
    if (!bug.no_barrier) push(&kb, BARRIER(50));
    IrTileOp *op = TS_NEW(&A, IrTileOp);
    op->kind = TS_OP_GEMM;
    op->nr = 3;
    op->r[0] = ir_region_full(&A, sa);
    op->r[1] = ir_region_full(&A, sb);
    op->r[2] = ir_region_full(&A, c);
    op->clear_accum = 1;
    op->inst = TS_OP_INST_MMA_SYNC;
    IrStmt *g = stmt_at(IR_S_TILEOP, 51);
    g->op = op;
    push(&kb, g);
    IrVar *v2 = loopvar(&kb, "v2"), *r2 = loopvar(&kb, "r2");
    IrExpr *e2 = bug.wrong_owner ? ADD(MUL(V(v2), I(2)), V(r2)) : ADD(MUL(V(r2), I(NT)), V(v2));
    IrStmt *st = ST2(d, DIV(e2, I(N)), MOD(e2, I(N)), LD2(c, DIV(e2, I(N)), MOD(e2, I(N))));
    st->loc = (TsLoc){&SRC, 52, 3};
    push(&kb, FOR(v2, 0, NT, IR_FOR_THREAD, FOR(r2, 0, 2, IR_FOR_SERIAL, st)));
    return kb.k;
}

static void test_gemm(void) {
    enum { M = 16, N = 16, K = 32 };
    double *ga = rand_exact(M * K), *gb = rand_exact(K * N), *want = TS_NEWN(&A, double, M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += ga[i * K + k] * gb[k * N + j];
            want[i * N + j] = s;
        }
    const char *msg;
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK(run_ok(gemm_kernel((GemmBugs){0}), data, IR_TINTERP_STRICT));
        CHECK_EQ_INT(0, mismatches(d, want, M * N, 0));
    }
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(gemm_kernel((GemmBugs){.twice = true}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "fragment C: elements C[0, 0] and C[4, 0] are both held by thread 0");
        CHECK_CONTAINS(msg, "one register owned twice");
    }
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK(run_ok(gemm_kernel((GemmBugs){.library = true}), data, IR_TINTERP_STRICT));
        CHECK_EQ_INT(0, mismatches(d, want, M * N, 0));
    }
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(gemm_kernel((GemmBugs){.outside = true}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "element C[4, 0] is given to thread 128, outside the block's 128 threads");
    }
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK_EQ_INT(TS_ERR_RUNTIME,
                     run_t(gemm_kernel((GemmBugs){.bad_inverse = true}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "the inverse map puts C[0, 0] in register 0 of thread 1, the forward map puts C[0, 1] there");
    }
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK_EQ_INT(TS_ERR_RUNTIME,
                     run_t(gemm_kernel((GemmBugs){.wrong_owner = true}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, ":52:3:");
        CHECK_CONTAINS(msg, "thread 0 reads C[0, 1], which its layout (test cyclic) gives to thread 1");
    }
    {
        double *d = nan_array(M * N);
        double *data[] = {ga, gb, d};
        CHECK_EQ_INT(TS_ERR_RUNTIME,
                     run_t(gemm_kernel((GemmBugs){.no_barrier = true}), data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, ":51:1:");
        CHECK_CONTAINS(msg, "the block's T.gemm (all threads) reads it after thread");
    }
}

/* ---- warp shuffles -------------------------------------------------------------
 * Each thread loads A[tid] into a register, a butterfly of shfl_xor adds
 * the warp's 32 values (red[0] = red[0] + shfl_xor(red[0], m): every lane
 * must read its partner's value from before the update), lane 0 writes
 * the warp's sum.  In a thread range of 48 (a warp and a half) the second
 * warp's shuffle has no partner lanes: an error. */

static IrKernel *shfl_kernel(int range) {
    Kb kb = kernel("shfl", 1, 1, NT);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 1, (int64_t[]){NT});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){NT / 32});
    IrBuffer *red = alloc(&kb, "red", TS_FLOAT32, IR_SCOPE_LOCAL, 1, (int64_t[]){1});
    IrVar *v = loopvar(&kb, "v");
    IrStmt *body = ir_seq(&A);
    ir_seq_push(&A, body, ST1(red, I(0), LD1(a, V(v))));
    for (int m = 16; m >= 1; m /= 2) {
        IrExpr *args[2] = {LD1(red, I(0)), I(m)};
        IrExpr *sh = ir_call(&A, IR_SHFL_XOR, args, 2, TS_FLOAT32);
        IrStmt *st = ST1(red, I(0), ADD(LD1(red, I(0)), sh));
        st->loc = (TsLoc){&SRC, 60 + m, 1};
        ir_seq_push(&A, body, st);
    }
    ir_seq_push(&A, body, IF(ir_bin(&A, IR_EQ, MOD(V(v), I(32)), I(0)), ST1(b, DIV(V(v), I(32)), LD1(red, I(0))), NULL));
    push(&kb, FOR(v, 0, range, IR_FOR_THREAD, body));
    return kb.k;
}

static void test_shfl(void) {
    double *a = rand_array(NT), *want = TS_NEWN(&A, double, NT / 32);
    for (int w = 0; w < NT / 32; w++) {
        double s = 0;
        for (int l = 0; l < 32; l++) s += a[w * 32 + l];
        want[w] = s;
    }
    double *b = nan_array(NT / 32);
    double *data[] = {a, b};
    CHECK(run_ok(shfl_kernel(NT), data, IR_TINTERP_STRICT));
    CHECK_EQ_INT(0, mismatches(b, want, NT / 32, 1e-6));
    const char *msg;
    double *b2 = nan_array(NT / 32);
    double *data2[] = {a, b2};
    CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(shfl_kernel(48), data2, IR_TINTERP_STRICT, &msg));
    CHECK_CONTAINS(msg, "deadlock: thread 32 waits at the shfl_xor at 76:1 but thread 48 has finished");
}

/* ---- barriers that cannot complete ----------------------------------------------- */

static void test_deadlock(void) {
    const char *msg;
    {
        /* a barrier inside a thread role (threads 0..63 of 128) */
        Kb kb = kernel("role", 1, 1, NT);
        IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){NT});
        IrVar *v = loopvar(&kb, "v");
        push(&kb, FOR(v, 0, 64, IR_FOR_THREAD, seq2(BARRIER(70), ST1(b, V(v), ir_float(&A, 1, TS_FLOAT32)))));
        double *data[] = {nan_array(NT)};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kb.k, data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, ":70:1: error: interp: barrier inside the thread range [0, 64) of a 128-thread block");
    }
    {
        /* a barrier under `if tid < 96` */
        Kb kb = kernel("cond", 1, 1, NT);
        IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){NT});
        IrExpr *tid = V(kb.k->tid);
        push(&kb, IF(LT(tid, I(96)), BARRIER(71), NULL));
        push(&kb, ST1(b, V(kb.k->tid), ir_float(&A, 1, TS_FLOAT32)));
        double *data[] = {nan_array(NT)};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kb.k, data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, ":71:1: error: interp: deadlock: thread 0 waits at the barrier at 71:1 but thread 96 "
                            "has finished");
    }
}

/* ---- memory errors ------------------------------------------------------------- */

static void test_memory_errors(void) {
    const char *msg;
    {
        /* reading a shared element nobody wrote */
        Kb kb = kernel("uninit", 1, 1, NT);
        IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){NT});
        IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, (int64_t[]){NT});
        IrVar *v = loopvar(&kb, "v");
        IrStmt *w = IF(LT(V(v), I(NT - 1)), ST1(s, V(v), ir_float(&A, 3, TS_FLOAT32)), NULL);
        push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, w));
        push(&kb, BARRIER(80));
        IrVar *v2 = loopvar(&kb, "v2");
        push(&kb, FOR(v2, 0, NT, IR_FOR_THREAD, ST1(b, V(v2), LD1(s, SUB(I(NT - 1), V(v2))))));
        double *data[] = {nan_array(NT)};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kb.k, data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "thread 0 reads S[127], which nothing has written (uninitialized shared memory)");
    }
    {
        /* a register read before anything was stored in it */
        Kb kb = kernel("uninit_local", 1, 1, NT);
        IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){NT});
        IrBuffer *r = alloc(&kb, "r", TS_FLOAT32, IR_SCOPE_LOCAL, 1, (int64_t[]){2});
        IrVar *v = loopvar(&kb, "v");
        IrStmt *w = IF(LT(V(v), I(100)), ST1(r, I(1), ir_float(&A, 3, TS_FLOAT32)), NULL);
        IrStmt *st = ST1(b, V(v), LD1(r, I(1)));
        st->loc = (TsLoc){&SRC, 81, 7};
        push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, seq2(w, st)));
        double *data[] = {nan_array(NT)};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kb.k, data, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "kernel.py:81:7: error: interp: thread 100 reads r[1], which it has not written "
                            "(uninitialized local memory)");
    }
    {
        /* one past the end of a shared buffer */
        Kb kb = kernel("oob", 1, 1, NT);
        IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, (int64_t[]){NT});
        IrVar *v = loopvar(&kb, "v");
        push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, ST1(s, ADD(V(v), I(1)), ir_float(&A, 3, TS_FLOAT32))));
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kb.k, NULL, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "out-of-bounds access S[128]: index 128 of dim 0 is outside 0..127");
    }
    {
        /* a swizzle that maps offsets past the end of the buffer */
        Kb kb = kernel("swz", 1, 1, NT);
        IrBuffer *s = alloc(&kb, "S", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){10, 60});
        s->swizzle = (IrSwizzle){.kind = IR_SWIZZLE_XOR, .bits = 3, .base = 3, .shift = 3};
        CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kb.k, NULL, IR_TINTERP_STRICT, &msg));
        CHECK_CONTAINS(msg, "swizzle <3, 3, 3> is not a bijection on its 600 elements (offset 592 maps to 600)");
        s->shape[0] = I(16); /* 16 x 64: whole 64-element chunks, a bijection */
        s->shape[1] = I(64);
        CHECK_EQ_INT(TS_OK, run_t(kb.k, NULL, IR_TINTERP_STRICT, &msg));
    }
}

/* ---- vector copies with a predicate ----------------------------------------------
 * Thread v copies A[2v .. 2v+2) into S[v, 0..2) when v < 40; the others'
 * predicate is false, so their S row is zero-filled; after a barrier each
 * thread copies S row 127 - v back to B (a global destination: false
 * predicates leave it alone). */

static void test_vcopy_pred(void) {
    Kb kb = kernel("vcopy", 1, 1, NT);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 1, (int64_t[]){2 * NT});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 2, (int64_t[]){NT, 2});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 2, (int64_t[]){NT, 2});
    IrVar *v = loopvar(&kb, "v"), *v2 = loopvar(&kb, "v2");
    IrStmt *c1 = stmt_at(IR_S_VCOPY, 90);
    c1->vcopy.dst = s;
    c1->vcopy.src = a;
    c1->vcopy.didx = idx(2, V(v), I(0), NULL);
    c1->vcopy.ndi = 2;
    c1->vcopy.sidx = idx(1, MUL(V(v), I(2)), NULL, NULL);
    c1->vcopy.nsi = 1;
    c1->vcopy.lanes = 2;
    c1->vcopy.pred = LT(V(v), I(40));
    push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, c1));
    push(&kb, BARRIER(91));
    IrStmt *c2 = stmt_at(IR_S_VCOPY, 92);
    c2->vcopy.dst = b;
    c2->vcopy.src = s;
    c2->vcopy.didx = idx(2, V(v2), I(0), NULL);
    c2->vcopy.ndi = 2;
    c2->vcopy.sidx = idx(2, SUB(I(NT - 1), V(v2)), I(0), NULL);
    c2->vcopy.nsi = 2;
    c2->vcopy.lanes = 2;
    c2->vcopy.pred = LT(V(v2), I(100));
    push(&kb, FOR(v2, 0, NT, IR_FOR_THREAD, c2));
    double *ad = rand_array(2 * NT), *bd = nan_array(2 * NT), *want = TS_NEWN(&A, double, 2 * NT);
    for (int t = 0; t < NT; t++)
        for (int e = 0; e < 2; e++) {
            int src = NT - 1 - t;
            want[t * 2 + e] = t >= 100 ? NAN : src < 40 ? ad[src * 2 + e] : 0.0;
        }
    double *data[] = {ad, bd};
    CHECK(run_ok(kb.k, data, IR_TINTERP_STRICT));
    int bad = 0;
    for (int i = 0; i < 2 * NT; i++) bad += !(isnan(want[i]) ? isnan(bd[i]) : bd[i] == want[i]);
    CHECK_EQ_INT(0, bad);
}

/* ---- selects: only the taken side's loads happen ----------------------------------
 * Thread v writes S[v] = A[v]; then, with no barrier in between, each thread
 * stores B[v] = select(c, S[v - 1] (+ A[v + NT]), S[v] * 2).  The first side
 * reads an element another thread wrote in the same epoch (a race; thread
 * 0 reads S[127], which nothing wrote yet) and, with `oob`, one past A's
 * end; the second reads only the thread's own element.  The targets print
 * `c ? x : y`, which loads only the taken side: where c is false for
 * every thread (it compares data in [-1, 1) with -5) the kernel is
 * correct and must run clean with B = 2A; where c holds for threads
 * 64..127 (v >= 64) the race is real and must be reported.  Before the
 * interpreters followed only the taken side, the first kernel failed. */

static IrKernel *select_kernel(bool taken, bool oob) {
    Kb kb = kernel(taken ? "sel_taken" : "sel_untaken", 1, 1, NT);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 1, (int64_t[]){NT});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){NT});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, (int64_t[]){NT});
    IrVar *v = loopvar(&kb, "v"), *v2 = loopvar(&kb, "v2");
    push(&kb, FOR(v, 0, NT, IR_FOR_THREAD, ST1(s, V(v), LD1(a, V(v)))));
    IrExpr *other = LD1(s, MOD(ADD(V(v2), I(NT - 1)), I(NT)));
    if (oob) other = ir_bin(&A, IR_ADD, other, LD1(a, ADD(V(v2), I(NT))));
    IrExpr *own = ir_bin(&A, IR_MUL, LD1(s, V(v2)), ir_float(&A, 2, TS_FLOAT32));
    IrExpr *c = taken ? ir_bin(&A, IR_GE, V(v2), I(NT / 2)) : LT(LD1(a, V(v2)), ir_float(&A, -5, TS_FLOAT32));
    IrStmt *st = ST1(b, V(v2), ir_select(&A, c, other, own));
    st->loc = (TsLoc){&SRC, 95, 5};
    push(&kb, FOR(v2, 0, NT, IR_FOR_THREAD, st));
    return kb.k;
}

static void test_select_arms(void) {
    const char *msg;
    for (int oob = 0; oob < 2; oob++) {
        double *a = rand_array(NT), *b = nan_array(NT);
        double *data[] = {a, b};
        CHECK(run_ok(select_kernel(false, oob), data, IR_TINTERP_STRICT));
        int bad = 0;
        for (int i = 0; i < NT; i++) bad += b[i] != 2 * a[i];
        CHECK_EQ_INT(0, bad);
    }
    /* the block-level interpreter agrees (no out-of-bounds report from the
     * untaken side); it runs the thread loops one after the other */
    {
        double *a = rand_array(NT), *b = nan_array(NT);
        TsDiag d = {0};
        jmp_buf jb, *saved;
        IrKernel *k = select_kernel(false, true);
        if (!ts_try(&d, &jb, &saved)) {
            IrInterp *in = ir_interp_new(&A, &d, k);
            ir_interp_bind_buffer(in, k->params.v[0].buf, a);
            ir_interp_bind_buffer(in, k->params.v[1].buf, b);
            ir_interp_run_grid(in);
            ir_interp_free(in);
        }
        ts_try_end(&d, saved);
        CHECK_EQ_STR("", ts_buf_str(&d.msg));
        ts_buf_free(&d.msg);
        int bad = 0;
        for (int i = 0; i < NT; i++) bad += b[i] != 2 * a[i];
        CHECK_EQ_INT(0, bad);
    }
    /* the race in the taken side is still caught */
    double *data[] = {rand_array(NT), nan_array(NT)};
    CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(select_kernel(true, false), data, IR_TINTERP_STRICT, &msg));
    CHECK_CONTAINS(msg, "kernel.py:95:5: error: interp: shared-memory race on S[63]: thread 64 reads it after "
                        "thread 63 wrote it");
}

/* ---- block-level IR through the CUDA passes -------------------------------------
 * T.Parallel nests and a uniform read-modify-write of shared memory: run
 * as they are in the thread-level interpreter, every thread runs the whole
 * nest, which is a race; after partition_threads (nests spread over the
 * threads, the uniform store by one thread) and insert_sync (its barriers)
 * the thread-level run gives the block-level interpreter's results, and
 * without insert_sync's barriers it races again. */

static IrKernel *block_level_kernel(void) {
    enum { L = 200 };
    Kb kb = kernel("blocklevel", 3, 1, NT);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 1, (int64_t[]){3 * L});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 1, (int64_t[]){3 * L});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, (int64_t[]){L});
    IrVar *i = loopvar(&kb, "i"), *i2 = loopvar(&kb, "i2");
    IrExpr *base = MUL(V(kb.bx), I(L));
    push(&kb, FOR(i, 0, L, IR_FOR_PARALLEL, ST1(s, V(i), LD1(a, ADD(base, V(i))))));
    push(&kb, ST1(s, I(0), ADD(LD1(s, I(0)), LD1(s, I(L - 1)))));
    push(&kb, FOR(i2, 0, L, IR_FOR_PARALLEL, ST1(b, ADD(base, V(i2)), LD1(s, SUB(I(L - 1), V(i2))))));
    return kb.k;
}

/* partition_threads, then insert_sync unless no_sync: true if they ran clean. */
static bool cuda_passes(IrKernel *k, bool no_sync) {
    TsCaps caps;
    memset(&caps, 0, sizeof caps);
    TsDiag d = {0};
    jmp_buf jb, *saved;
    volatile bool ok = true;
    if (!ts_try(&d, &jb, &saved)) {
        TsPassCtx cx = {&d, &A, k, TS_TARGET_CUDA, &caps};
        ts_pass_partition_threads(&cx);
        if (!no_sync) ts_pass_insert_sync(&cx);
    } else {
        fprintf(stderr, "passes: %s\n", ts_buf_str(&d.msg));
        ok = false;
    }
    ts_try_end(&d, saved);
    ts_buf_free(&d.msg);
    return ok;
}

static void test_block_level_through_passes(void) {
    enum { L = 200 };
    IrKernel *k = block_level_kernel();
    double *a = rand_array(3 * L), *want = nan_array(3 * L), *got = nan_array(3 * L);
    TsDiag d = {0};
    jmp_buf jb, *saved;
    if (!ts_try(&d, &jb, &saved)) {
        IrInterp *in = ir_interp_new(&A, &d, k);
        ir_interp_bind_buffer(in, k->params.v[0].buf, a);
        ir_interp_bind_buffer(in, k->params.v[1].buf, want);
        ir_interp_run_grid(in);
        ir_interp_free(in);
    }
    ts_try_end(&d, saved);
    CHECK_EQ_STR("", ts_buf_str(&d.msg));
    ts_buf_free(&d.msg);
    const char *msg;
    double *data2[] = {a, nan_array(3 * L)};
    CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(k, data2, IR_TINTERP_STRICT, &msg));
    CHECK_CONTAINS(msg, "shared-memory race on S[0]: thread 1 writes it after thread 0 wrote it");
    for (int no_sync = 0; no_sync < 2; no_sync++) {
        IrKernel *kp = block_level_kernel();
        CHECK(cuda_passes(kp, no_sync));
        if (!no_sync) {
            double *data[] = {a, got};
            CHECK(run_ok(kp, data, IR_TINTERP_STRICT));
            CHECK_EQ_INT(0, mismatches(got, want, 3 * L, 0));
        } else {
            double *data3[] = {a, nan_array(3 * L)};
            CHECK_EQ_INT(TS_ERR_RUNTIME, run_t(kp, data3, IR_TINTERP_STRICT, &msg));
            CHECK_CONTAINS(msg, "shared-memory race");
        }
    }
}

int main(void) {
    ts_arena_init(&A);
    TsBuf text = {0};
    for (int i = 1; i <= 100; i++) ts_buf_printf(&text, "line %d of the kernel\n", i);
    SRC.name = "kernel.py";
    SRC.text = ts_strdup(&A, ts_buf_str(&text));
    SRC.len = strlen(SRC.text);
    ts_buf_free(&text);
    test_tile();
    test_pipeline();
    test_gemm();
    test_shfl();
    test_deadlock();
    test_memory_errors();
    test_vcopy_pred();
    test_select_arms();
    test_block_level_through_passes();
    ts_arena_free(&A);
    return test_done();
}
