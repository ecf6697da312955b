/*
 * test_lower.c — the generic lowering of every tile operator, checked by
 * running it.
 *
 * Each test builds a small kernel out of tile ops the way the elaborator
 * would, runs the whole pass pipeline (verify, simplify, lower_tile_ops,
 * verify_lowered), executes the lowered IR for every block of the grid
 * with the reference interpreter (src/ir/interp.c) on fresh random data,
 * and compares the output tensors with a naive C computation.  Partial
 * tail tiles are everywhere on purpose: the interpreter bounds-checks
 * every access, so a missing guard fails loudly.
 */
#include <math.h>
#include <stdlib.h>

#include "ir/interp.h"
#include "ir/interp_thread.h"
#include "ir/ir.h"
#include "op/op.h"
#include "pass/pass.h"
#include "test.h"

static TsArena A;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* uniform in [-1, 1) */
static double frand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double *rand_array(int64_t n) {
    double *p = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) p[i] = (double)(float)frand();
    return p;
}

/* values exact in float16: multiples of 1/8 in [-1, 1) */
static double *rand_exact(int64_t n) {
    double *p = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) p[i] = floor(frand() * 8) / 8;
    return p;
}

static double *copy_array(const double *src, int64_t n) {
    double *p = TS_NEWN(&A, double, n);
    memcpy(p, src, sizeof(double) * (size_t)n);
    return p;
}

static bool close_to(double got, double want, double tol) {
    return fabs(got - want) <= tol * (1 + fabs(want));
}

/* Count mismatches between got and want; print the first few. */
static int compare(const char *what, const double *got, const double *want, int64_t n, double tol) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!close_to(got[i], want[i], tol)) { /* NaN fails, in both too (issue 9 H) */
            if (bad < 4)
                fprintf(stderr, "%s: element %lld: got %.9g, want %.9g\n", what, (long long)i,
                        got[i], want[i]);
            bad++;
        }
    return bad;
}

/* ---- building kernels ----------------------------------------------------- */

typedef struct Kb {
    IrKernel *k;
    IrStmt *body; /* where statements go */
    IrVar *bx, *by;
} Kb;

static Kb kernel(const char *name, int gx, int gy) {
    Kb kb;
    kb.k = ir_kernel_new(&A, name);
    kb.k->ngrid = 2;
    kb.k->grid[0] = ir_i32(&A, gx);
    kb.k->grid[1] = ir_i32(&A, gy);
    kb.bx = ir_var(kb.k, "bx", TS_INT32, IR_VAR_BLOCK_IDX);
    kb.by = ir_var(kb.k, "by", TS_INT32, IR_VAR_BLOCK_IDX);
    kb.by->axis = 1;
    kb.k->block_idx[0] = kb.bx;
    kb.k->block_idx[1] = kb.by;
    kb.k->body = kb.body = ir_seq(&A);
    return kb;
}

static IrBuffer *param(Kb *kb, const char *name, TsDType dt, int ndim, const int64_t *shape) {
    IrExpr *sh[8];
    for (int i = 0; i < ndim; i++) sh[i] = ir_i32(&A, shape[i]);
    IrBuffer *b = ir_buffer(kb->k, name, dt, IR_SCOPE_GLOBAL, ndim, sh, (TsLoc){0});
    b->param = kb->k->params.n;
    IrParam p = {name, b, NULL, 0};
    ts_vec_push(&A, kb->k->params, p);
    return b;
}

static IrBuffer *alloc(Kb *kb, const char *name, TsDType dt, IrScope sc, int ndim,
                       const int64_t *shape) {
    IrExpr *sh[8];
    for (int i = 0; i < ndim; i++) sh[i] = ir_i32(&A, shape[i]);
    IrBuffer *b = ir_buffer(kb->k, name, dt, sc, ndim, sh, (TsLoc){0});
    IrStmt *s = ir_stmt(&A, IR_S_ALLOC, (TsLoc){0});
    s->alloc.buf = b;
    ir_seq_push(&A, kb->body, s);
    return b;
}

static IrExpr *I(int64_t v) { return ir_i32(&A, v); }
static IrExpr *V(IrVar *v) { return ir_var_ref(&A, v); }
static IrExpr *MUL(IrExpr *x, int64_t c) { return ir_bin(&A, IR_MUL, x, I(c)); }

/* A region: starts and constant extents. */
static IrRegion reg(IrBuffer *b, IrExpr *const *start, const int64_t *ext) {
    IrRegion r = {b, b->ndim, TS_NEWN(&A, IrExpr *, b->ndim), TS_NEWN(&A, IrExpr *, b->ndim)};
    for (int i = 0; i < b->ndim; i++) {
        r.start[i] = start[i];
        r.extent[i] = I(ext[i]);
    }
    return r;
}

static IrRegion full(IrBuffer *b) { return ir_region_full(&A, b); }

static IrTileOp *op_new(Kb *kb, TsOpKind kind) {
    IrTileOp *op = TS_NEW(&A, IrTileOp);
    op->kind = kind;
    IrStmt *s = ir_stmt(&A, IR_S_TILEOP, (TsLoc){0});
    s->op = op;
    ir_seq_push(&A, kb->body, s);
    return op;
}

static void copy(Kb *kb, IrRegion src, IrRegion dst) {
    IrTileOp *op = op_new(kb, TS_OP_COPY);
    op->nr = 2;
    op->r[0] = src;
    op->r[1] = dst;
}

static void fill(Kb *kb, IrRegion dst, IrExpr *v) {
    IrTileOp *op = op_new(kb, TS_OP_FILL);
    op->nr = 1;
    op->r[0] = dst;
    op->value = v;
}

/* The target the lowering is done for: the C target has its own GEMM
 * loop order; the others use the generic one.  Both are checked. */
static TsTarget lower_target = TS_TARGET_C;
static TsCaps lower_caps;             /* CUDA runs: tensor cores allowed, as by default */
static const TsCaps no_caps;          /* the C target's */

/* Run the pipeline and every block; data[i] is parameter i's storage.
 * Returns the status; on failure the message is in d. */
static TsStatus run(Kb *kb, double **data, TsDiag *d, bool dump) {
    jmp_buf jb, *saved;
    ts_buf_free(&d->msg);
    if (ts_try(d, &jb, &saved)) {
        ts_try_end(d, saved);
        return d->status;
    }
    TsPassCtx cx = {d, &A, kb->k, lower_target, &lower_caps};
    TsBuf text = {0};
    ts_run_passes(&cx, dump ? "lower_tile_ops" : NULL, &text, NULL);
    if (dump) printf("%s", ts_buf_str(&text));
    ts_buf_free(&text);
    if (lower_target == TS_TARGET_CUDA) {
        /* the CUDA passes leave thread-level IR: every thread simulated */
        IrTInterp *tx = ir_tinterp_new(&A, d, kb->k, IR_TINTERP_STRICT);
        for (int i = 0; i < kb->k->params.n; i++)
            ir_tinterp_bind_buffer(tx, kb->k->params.v[i].buf, data[i]);
        ir_tinterp_run_grid(tx);
        ir_tinterp_free(tx);
        ts_try_end(d, saved);
        return TS_OK;
    }
    IrInterp *in = ir_interp_new(&A, d, kb->k);
    for (int i = 0; i < kb->k->params.n; i++)
        ir_interp_bind_buffer(in, kb->k->params.v[i].buf, data[i]);
    ir_interp_run_grid(in);
    ir_interp_free(in);
    ts_try_end(d, saved);
    return TS_OK;
}

static bool run_ok(Kb *kb, double **data) {
    TsDiag d = {0};
    TsStatus st = run(kb, data, &d, getenv("TS_DUMP") != NULL);
    if (st) fprintf(stderr, "kernel %s failed: %s", kb->k->name, ts_buf_str(&d.msg));
    ts_buf_free(&d.msg);
    return st == TS_OK;
}

/* ---- copy -------------------------------------------------------------------- */

/* 50x70 through 32x32 tiles: the last row and column of blocks hang over. */
static void test_copy_tail(void) {
    enum { M = 50, N = 70, T = 32 };
    Kb kb = kernel("copy_tail", 3, 2);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 2, (int64_t[]){M, N});
    IrBuffer *b = param(&kb, "B", TS_FLOAT32, 2, (int64_t[]){M, N});
    IrBuffer *p = param(&kb, "P", TS_FLOAT32, 2, (int64_t[]){64, 96});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 2, (int64_t[]){T, T});
    IrExpr *st[2] = {MUL(V(kb.by), T), MUL(V(kb.bx), T)};
    int64_t ext[2] = {T, T};
    copy(&kb, reg(a, st, ext), full(s));
    copy(&kb, full(s), reg(b, st, ext));
    copy(&kb, full(s), reg(p, st, ext));
    double *da = rand_array(M * N), *db = rand_array(M * N), *dp = rand_array(64 * 96);
    CHECK(run_ok(&kb, (double *[]){da, db, dp}));
    CHECK_EQ_INT(0, compare("copy B", db, da, M * N, 0));
    double *want = TS_NEWN(&A, double, 64 * 96);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 96; j++) want[i * 96 + j] = i < M && j < N ? da[i * N + j] : 0;
    CHECK_EQ_INT(0, compare("copy P (zero padding)", dp, want, 64 * 96, 0));
}

/* Conversions on the way: float32 -> float16 (rounding) and -> int32 (truncation). */
static void test_copy_dtype(void) {
    Kb kb = kernel("copy_dtype", 1, 1);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 2, (int64_t[]){16, 8});
    IrBuffer *o = param(&kb, "O", TS_FLOAT32, 2, (int64_t[]){16, 8});
    IrBuffer *q = param(&kb, "Q", TS_FLOAT32, 2, (int64_t[]){16, 8});
    IrBuffer *h = alloc(&kb, "H", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){16, 8});
    IrBuffer *n = alloc(&kb, "N", TS_INT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){16, 8});
    copy(&kb, full(a), full(h));
    copy(&kb, full(h), full(o));
    copy(&kb, full(a), full(n));
    copy(&kb, full(n), full(q));
    double *da = rand_array(128), *dq = rand_array(128), *dout = rand_array(128);
    for (int i = 0; i < 128; i++) da[i] *= 100;
    CHECK(run_ok(&kb, (double *[]){da, dout, dq}));
    double *wq = TS_NEWN(&A, double, 128);
    for (int i = 0; i < 128; i++) wq[i] = trunc(da[i]);
    CHECK_EQ_INT(0, compare("copy to int32", dq, wq, 128, 0));
#ifdef __FLT16_MAX__
    double *wo = TS_NEWN(&A, double, 128);
    for (int i = 0; i < 128; i++) wo[i] = (double)(_Float16)(float)da[i];
    CHECK_EQ_INT(0, compare("copy through float16", dout, wo, 128, 0));
#else
    CHECK_EQ_INT(0, compare("copy through float16", dout, da, 128, 1e-3));
#endif
}

/* Extent-1 dims are dropped: a row of a matrix into a vector, a matrix into a 1xMxN tile. */
static void test_copy_rank(void) {
    Kb kb = kernel("copy_rank", 1, 1);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 2, (int64_t[]){4, 64});
    IrBuffer *o = param(&kb, "O", TS_FLOAT32, 2, (int64_t[]){2, 64});
    IrBuffer *o3 = param(&kb, "O3", TS_FLOAT32, 2, (int64_t[]){4, 64});
    IrBuffer *row = alloc(&kb, "row", TS_FLOAT32, IR_SCOPE_FRAGMENT, 1, (int64_t[]){64});
    IrBuffer *t3 = alloc(&kb, "T3", TS_FLOAT32, IR_SCOPE_SHARED, 3, (int64_t[]){2, 4, 64});
    copy(&kb, reg(a, (IrExpr *[]){I(2), I(0)}, (int64_t[]){1, 64}), full(row));
    copy(&kb, full(row), reg(o, (IrExpr *[]){I(1), I(0)}, (int64_t[]){1, 64}));
    copy(&kb, full(a), reg(t3, (IrExpr *[]){I(1), I(0), I(0)}, (int64_t[]){1, 4, 64}));
    copy(&kb, reg(t3, (IrExpr *[]){I(1), I(0), I(0)}, (int64_t[]){1, 4, 64}), full(o3));
    double *da = rand_array(256), *dout = rand_array(128), *d3 = rand_array(256);
    double *want = copy_array(dout, 128);
    CHECK(run_ok(&kb, (double *[]){da, dout, d3}));
    for (int j = 0; j < 64; j++) want[64 + j] = da[2 * 64 + j];
    CHECK_EQ_INT(0, compare("row copy", dout, want, 128, 0));
    CHECK_EQ_INT(0, compare("3-d tile copy", d3, da, 256, 0));
}

static void test_copy_errors(void) {
    TsDiag d = {0};
    Kb kb = kernel("copy_bad", 1, 1);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 2, (int64_t[]){64, 64});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 2, (int64_t[]){32, 32});
    copy(&kb, reg(a, (IrExpr *[]){I(0), I(0)}, (int64_t[]){64, 32}), full(s));
    CHECK_EQ_INT(TS_ERR_SHAPE, run(&kb, (double *[]){rand_array(4096)}, &d, false));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "T.copy: source region 64x32 does not match destination 32x32");

    Kb kb2 = kernel("copy_dyn", 1, 1);
    IrBuffer *a2 = param(&kb2, "A", TS_FLOAT32, 1, (int64_t[]){64});
    IrVar *n = ir_var(kb2.k, "n", TS_INT32, IR_VAR_SCALAR);
    IrParam pn = {"n", NULL, n, 0};
    ts_vec_push(&A, kb2.k->params, pn);
    IrBuffer *s2 = alloc(&kb2, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, (int64_t[]){64});
    IrRegion r = full(a2);
    r.extent[0] = V(n);
    copy(&kb2, r, full(s2));
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, run(&kb2, (double *[]){rand_array(64), NULL}, &d, false));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "T.copy: the extent of A along axis 0 (n) must be a compile-time constant");
    ts_buf_free(&d.msg);
}

/* ---- fill ------------------------------------------------------------------------- */

static void test_fill(void) {
    Kb kb = kernel("fill", 1, 2);
    IrBuffer *g = param(&kb, "G", TS_FLOAT32, 2, (int64_t[]){40, 16});
    IrBuffer *o = param(&kb, "O", TS_FLOAT32, 2, (int64_t[]){8, 8});
    IrBuffer *oi = param(&kb, "OI", TS_INT32, 1, (int64_t[]){8});
    IrBuffer *f = alloc(&kb, "F", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){8, 8});
    IrBuffer *fi = alloc(&kb, "FI", TS_INT32, IR_SCOPE_LOCAL, 1, (int64_t[]){8});
    fill(&kb, full(f), ir_float(&A, 2.5, TS_FLOAT32));
    fill(&kb, reg(f, (IrExpr *[]){I(2), I(3)}, (int64_t[]){1, 4}), ir_float(&A, -4, TS_FLOAT64));
    copy(&kb, full(f), full(o));
    fill(&kb, full(fi), ir_float(&A, 3.7, TS_FLOAT32));
    copy(&kb, full(fi), full(oi));
    /* a global tile that hangs over the end: rows 32..63 of a 40-row tensor */
    fill(&kb, reg(g, (IrExpr *[]){MUL(V(kb.by), 32), I(0)}, (int64_t[]){32, 16}), ir_float(&A, -1.5, TS_FLOAT32));
    double *dg = rand_array(640), *dout = rand_array(64), *di = rand_array(8);
    CHECK(run_ok(&kb, (double *[]){dg, dout, di}));
    double wg[640], wo[64], wi[8];
    for (int i = 0; i < 640; i++) wg[i] = -1.5;
    for (int i = 0; i < 64; i++) wo[i] = (i / 8 == 2 && i % 8 >= 3 && i % 8 < 7) ? -4 : 2.5;
    for (int i = 0; i < 8; i++) wi[i] = 3;
    CHECK_EQ_INT(0, compare("fill global", dg, wg, 640, 0));
    CHECK_EQ_INT(0, compare("fill fragment", dout, wo, 64, 0));
    CHECK_EQ_INT(0, compare("fill int", di, wi, 8, 0));
}

/* ---- gemm ---------------------------------------------------------------------------- */

/* C (MxN) from A, B in 32x16 blocks with K steps of 8; M, N, K not multiples
 * of the tiles.  mode 0: C = C0 + A*B (accumulate onto a loaded C tile);
 * mode 1: clear_accum on every step over a C tile pre-filled with 7, so
 * only the last K step (k in 32..35) survives. */
static void gemm_case(int ta, int tb, int mode) {
    enum { M = 50, N = 40, K = 36, BM = 32, BN = 16, BK = 8, KT = 5 };
    Kb kb = kernel("gemm", 3, 2);
    int64_t ashape[2] = {ta ? K : M, ta ? M : K}, bshape[2] = {tb ? N : K, tb ? K : N};
    IrBuffer *a = param(&kb, "A", TS_FLOAT16, 2, ashape);
    IrBuffer *b = param(&kb, "B", TS_FLOAT16, 2, bshape);
    IrBuffer *c0 = param(&kb, "C0", TS_FLOAT32, 2, (int64_t[]){M, N});
    IrBuffer *c = param(&kb, "C", TS_FLOAT32, 2, (int64_t[]){M, N});
    int64_t as[2] = {ta ? BK : BM, ta ? BM : BK}, bs[2] = {tb ? BN : BK, tb ? BK : BN};
    IrBuffer *sa = alloc(&kb, "A_s", TS_FLOAT16, IR_SCOPE_SHARED, 2, as);
    IrBuffer *sb = alloc(&kb, "B_s", TS_FLOAT16, IR_SCOPE_SHARED, 2, bs);
    IrBuffer *cl = alloc(&kb, "C_l", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){BM, BN});
    IrExpr *cst[2] = {MUL(V(kb.by), BM), MUL(V(kb.bx), BN)};
    int64_t cext[2] = {BM, BN};
    if (mode == 0) copy(&kb, reg(c0, cst, cext), full(cl));
    else fill(&kb, full(cl), ir_float(&A, 7, TS_FLOAT32));

    IrVar *k = ir_var(kb.k, "k", TS_INT32, IR_VAR_LOOP);
    IrStmt *outer = kb.body;
    kb.body = ir_seq(&A);
    IrExpr *km = MUL(V(k), BK), *mm = MUL(V(kb.by), BM), *nn = MUL(V(kb.bx), BN);
    copy(&kb, reg(a, ta ? (IrExpr *[]){km, mm} : (IrExpr *[]){mm, km}, as), full(sa));
    copy(&kb, reg(b, tb ? (IrExpr *[]){nn, km} : (IrExpr *[]){km, nn}, bs), full(sb));
    IrTileOp *g = op_new(&kb, TS_OP_GEMM);
    g->nr = 3;
    g->r[0] = full(sa);
    g->r[1] = full(sb);
    g->r[2] = full(cl);
    g->trans_a = ta;
    g->trans_b = tb;
    g->clear_accum = mode == 1;
    IrStmt *loop = ir_for(&A, k, I(0), I(KT), IR_FOR_PIPELINED, kb.body);
    loop->for_.num_stages = 2;
    kb.body = outer;
    ir_seq_push(&A, kb.body, loop);
    copy(&kb, full(cl), reg(c, cst, cext));

    double *da = rand_exact(M * K), *dbb = rand_exact(K * N), *dc0 = rand_array(M * N);
    double *dc = rand_array(M * N);
    CHECK(run_ok(&kb, (double *[]){da, dbb, dc0, dc}));
    double *want = TS_NEWN(&A, double, M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = mode == 0 ? dc0[i * N + j] : 0;
            for (int kk = mode == 0 ? 0 : 32; kk < K; kk++) {
                double x = ta ? da[kk * M + i] : da[i * K + kk];
                double y = tb ? dbb[j * K + kk] : dbb[kk * N + j];
                s += x * y;
            }
            want[i * N + j] = s;
        }
    char what[64];
    snprintf(what, sizeof what, "gemm trans_a=%d trans_b=%d mode=%d", ta, tb, mode);
    CHECK_EQ_INT(0, compare(what, dc, want, M * N, 1e-5));
}

static void test_gemm(void) {
    for (int t = 0; t < 2; t++) {
        lower_target = t ? TS_TARGET_CUDA : TS_TARGET_C;
        lower_caps.mma = t == 1;
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int mode = 0; mode < 2; mode++) gemm_case(ta, tb, mode);
    }
    lower_target = TS_TARGET_C;
}

static void test_gemm_errors(void) {
    TsDiag d = {0};
    Kb kb = kernel("gemm_bad", 1, 1);
    IrBuffer *sa = alloc(&kb, "A_s", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){16, 8});
    IrBuffer *sb = alloc(&kb, "B_s", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){16, 8});
    IrBuffer *cl = alloc(&kb, "C_l", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){16, 8});
    IrTileOp *g = op_new(&kb, TS_OP_GEMM);
    g->nr = 3;
    g->r[0] = full(sa);
    g->r[1] = full(sb);
    g->r[2] = full(cl);
    CHECK_EQ_INT(TS_ERR_SHAPE, run(&kb, NULL, &d, false));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "T.gemm: shapes do not agree: A is 16x8 (MxK), B is 16x8 (KxN), C is 16x8 (MxN)");
    ts_buf_free(&d.msg);
}

/* ---- reduce ------------------------------------------------------------------------------ */

static double red_init(TsReduceKind k) {
    return k == TS_REDUCE_MAX ? -INFINITY : k == TS_REDUCE_MIN ? INFINITY : 0;
}

static double red_step(TsReduceKind k, double acc, double x) {
    switch (k) {
    case TS_REDUCE_SUM: return acc + x;
    case TS_REDUCE_ABSSUM: return acc + fabs(x);
    case TS_REDUCE_MAX: return x > acc ? x : acc;
    case TS_REDUCE_MIN: return x < acc ? x : acc;
    case TS_REDUCE_ABSMAX: return fabs(x) > acc ? fabs(x) : acc;
    }
    return NAN;
}

static double red_combine(TsReduceKind k, double old, double r) {
    switch (k) {
    case TS_REDUCE_MAX: case TS_REDUCE_ABSMAX: return old > r ? old : r;
    case TS_REDUCE_MIN: return old < r ? old : r;
    default: return old + r;
    }
}

/* X (R x C) reduced along dim into a fragment, then written out.
 * keep: the destination keeps the reduced dim with extent 1. */
static void reduce_case(TsReduceKind kind, int dim, int clear, int keep, TsDType dt) {
    enum { R = 24, C = 20 };
    Kb kb = kernel("reduce", 1, 1);
    int64_t n = dim == 0 ? C : R;
    int64_t dshape[2] = {dim == 0 ? 1 : R, dim == 0 ? C : 1};
    IrBuffer *x = param(&kb, "X", dt, 2, (int64_t[]){R, C});
    IrBuffer *d0 = param(&kb, "D0", dt, keep ? 2 : 1, keep ? dshape : &n);
    IrBuffer *o = param(&kb, "O", dt, keep ? 2 : 1, keep ? dshape : &n);
    IrBuffer *s = alloc(&kb, "S", dt, IR_SCOPE_FRAGMENT, 2, (int64_t[]){R, C});
    IrBuffer *dd = alloc(&kb, "D", dt, IR_SCOPE_FRAGMENT, keep ? 2 : 1, keep ? dshape : &n);
    copy(&kb, full(x), full(s));
    if (!clear) copy(&kb, full(d0), full(dd));
    IrTileOp *op = op_new(&kb, TS_OP_REDUCE);
    op->nr = 2;
    op->r[0] = full(s);
    op->r[1] = full(dd);
    op->reduce = kind;
    op->dim = dim;
    op->clear = clear;
    copy(&kb, full(dd), full(o));

    bool isint = dt == TS_INT32;
    double *dx = rand_array(R * C), *dd0 = rand_array(n), *dout = rand_array(n);
    if (isint) {
        /* all negative: a wrong 0 identity for max would show */
        for (int i = 0; i < R * C; i++) dx[i] = -1 - floor(fabs(dx[i]) * 1000);
        for (int i = 0; i < n; i++) dd0[i] = floor(dd0[i] * 1000);
    }
    CHECK(run_ok(&kb, (double *[]){dx, dd0, dout}));
    double *want = TS_NEWN(&A, double, n);
    for (int p = 0; p < n; p++) {
        double acc = red_init(kind);
        int len = dim == 0 ? R : C;
        for (int q = 0; q < len; q++) acc = red_step(kind, acc, dim == 0 ? dx[q * C + p] : dx[p * C + q]);
        want[p] = clear ? acc : red_combine(kind, dd0[p], acc);
    }
    char what[96];
    snprintf(what, sizeof what, "reduce_%s dim=%d clear=%d keep=%d %s", ts_reduce_name(kind), dim,
             clear, keep, ts_dtype_name(dt));
    CHECK_EQ_INT(0, compare(what, dout, want, n, 1e-5));
}

static void test_reduce(void) {
    for (int k = TS_REDUCE_SUM; k <= TS_REDUCE_ABSMAX; k++)
        for (int dim = 0; dim < 2; dim++)
            for (int clear = 0; clear < 2; clear++) reduce_case((TsReduceKind)k, dim, clear, 0, TS_FLOAT32);
    reduce_case(TS_REDUCE_SUM, 1, 1, 1, TS_FLOAT32);
    reduce_case(TS_REDUCE_MAX, 0, 0, 1, TS_FLOAT32);
    reduce_case(TS_REDUCE_MAX, 1, 1, 0, TS_INT32);
    reduce_case(TS_REDUCE_MIN, 0, 1, 0, TS_INT32);
    reduce_case(TS_REDUCE_SUM, 0, 0, 0, TS_INT32);
}

/* ---- cumsum ------------------------------------------------------------------------------- */

static void cumsum_case(int dim, int reverse, int inplace) {
    enum { R = 6, C = 10 };
    Kb kb = kernel("cumsum", 1, 1);
    IrBuffer *x = param(&kb, "X", TS_FLOAT32, 2, (int64_t[]){R, C});
    IrBuffer *o = param(&kb, "O", TS_FLOAT32, 2, (int64_t[]){R, C});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){R, C});
    IrBuffer *t = inplace ? s : alloc(&kb, "T", TS_FLOAT32, IR_SCOPE_SHARED, 2, (int64_t[]){R, C});
    copy(&kb, full(x), full(s));
    IrTileOp *op = op_new(&kb, TS_OP_CUMSUM);
    op->nr = 2;
    op->r[0] = full(s);
    op->r[1] = full(t);
    op->dim = dim;
    op->reverse = reverse;
    copy(&kb, full(t), full(o));
    double *dx = rand_array(R * C), *dout = rand_array(R * C);
    CHECK(run_ok(&kb, (double *[]){dx, dout}));
    double want[R * C];
    int outer = dim == 0 ? C : R, len = dim == 0 ? R : C;
    for (int p = 0; p < outer; p++) {
        double acc = 0;
        for (int q = 0; q < len; q++) {
            int qq = reverse ? len - 1 - q : q;
            int at = dim == 0 ? qq * C + p : p * C + qq;
            acc += dx[at];
            want[at] = acc;
        }
    }
    char what[64];
    snprintf(what, sizeof what, "cumsum dim=%d reverse=%d inplace=%d", dim, reverse, inplace);
    CHECK_EQ_INT(0, compare(what, dout, want, R * C, 1e-5));
}

static void test_cumsum(void) {
    for (int dim = 0; dim < 2; dim++)
        for (int rev = 0; rev < 2; rev++) cumsum_case(dim, rev, (dim + rev) % 2);
    cumsum_case(1, 1, 1);
    cumsum_case(0, 0, 0);
}

/* ---- atomic_add ------------------------------------------------------------------------------ */

/* Three blocks each add their 16x8 tile of X (40 rows: the last tile is
 * partial) into one 16x8 output, into a 10-row output (rows past 10 are
 * skipped), and a scalar 1.5 into Cnt[bx % 2]. */
static void test_atomic(void) {
    Kb kb = kernel("atomic", 3, 1);
    IrBuffer *x = param(&kb, "X", TS_FLOAT32, 2, (int64_t[]){40, 8});
    IrBuffer *out = param(&kb, "Out", TS_FLOAT32, 2, (int64_t[]){16, 8});
    IrBuffer *out2 = param(&kb, "Out2", TS_FLOAT32, 2, (int64_t[]){10, 8});
    IrBuffer *cnt = param(&kb, "Cnt", TS_FLOAT32, 1, (int64_t[]){2});
    IrBuffer *t = alloc(&kb, "T", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){16, 8});
    copy(&kb, reg(x, (IrExpr *[]){MUL(V(kb.bx), 16), I(0)}, (int64_t[]){16, 8}), full(t));
    IrTileOp *a1 = op_new(&kb, TS_OP_ATOMIC_ADD);
    a1->nr = 2;
    a1->r[0] = full(out);
    a1->r[1] = full(t);
    IrTileOp *a2 = op_new(&kb, TS_OP_ATOMIC_ADD);
    a2->nr = 2;
    a2->r[0] = reg(out2, (IrExpr *[]){I(0), I(0)}, (int64_t[]){16, 8});
    a2->r[1] = full(t);
    IrTileOp *a3 = op_new(&kb, TS_OP_ATOMIC_ADD);
    a3->nr = 1;
    a3->r[0] = reg(cnt, (IrExpr *[]){ir_bin(&A, IR_FLOORMOD, V(kb.bx), I(2))}, (int64_t[]){1});
    a3->value = ir_float(&A, 1.5, TS_FLOAT32);
    double *dx = rand_array(320), *dout = rand_array(128), *dout2 = rand_array(80);
    double dcnt[2] = {0.25, -3};
    double *w1 = copy_array(dout, 128), *w2 = copy_array(dout2, 80);
    CHECK(run_ok(&kb, (double *[]){dx, dout, dout2, dcnt}));
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++) {
                int r = b * 16 + i;
                double v = r < 40 ? dx[r * 8 + j] : 0;
                w1[i * 8 + j] += v;
                if (i < 10) w2[i * 8 + j] += v;
            }
    CHECK_EQ_INT(0, compare("atomic_add region", dout, w1, 128, 1e-6));
    CHECK_EQ_INT(0, compare("atomic_add guarded region", dout2, w2, 80, 1e-6));
    CHECK(dcnt[0] == 0.25 + 3.0 && dcnt[1] == -3 + 1.5);
}

/* ---- the lowered text ------------------------------------------------------------------------- */

static void test_lowered_text(void) {
    Kb kb = kernel("text", 2, 1);
    IrBuffer *a = param(&kb, "A", TS_FLOAT32, 1, (int64_t[]){100});
    IrBuffer *s = alloc(&kb, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, (int64_t[]){64});
    copy(&kb, reg(a, (IrExpr *[]){MUL(V(kb.bx), 64)}, (int64_t[]){64}), full(s));
    TsDiag d = {0};
    TsPassCtx cx = {&d, &A, kb.k, TS_TARGET_C, &no_caps};
    jmp_buf jb, *saved;
    TsBuf text = {0};
    if (!ts_try(&d, &jb, &saved)) ts_run_passes(&cx, "lower_tile_ops", &text, NULL);
    ts_try_end(&d, saved);
    CHECK_EQ_STR("kernel text(A: global float32[100]) grid(2, 1) threads 128\n"
                 "    bx = blockIdx.x\n"
                 "    by = blockIdx.y\n"
                 "    S = alloc_shared float32[64]\n"
                 "    for i in parallel(64):\n"
                 "        if bx * 64 + i < 100:\n"
                 "            S[i] = A[bx * 64 + i]\n"
                 "        else:\n"
                 "            S[i] = 0.0\n",
                 ts_buf_str(&text));
    ts_buf_free(&text);

    /* a 2-d tile where only the row guard is needed: the column conjunct goes */
    Kb kb2 = kernel("text2", 1, 2);
    IrBuffer *a2 = param(&kb2, "A", TS_FLOAT32, 2, (int64_t[]){100, 16});
    IrBuffer *s2 = alloc(&kb2, "S", TS_FLOAT32, IR_SCOPE_SHARED, 2, (int64_t[]){64, 16});
    copy(&kb2, reg(a2, (IrExpr *[]){MUL(V(kb2.by), 64), I(0)}, (int64_t[]){64, 16}), full(s2));
    cx.k = kb2.k;
    if (!ts_try(&d, &jb, &saved)) ts_run_passes(&cx, "lower_tile_ops", &text, NULL);
    ts_try_end(&d, saved);
    CHECK_CONTAINS(ts_buf_str(&text), "            if by * 64 + i < 100:\n"
                                      "                S[i, j] = A[by * 64 + i, j]\n");
    ts_buf_free(&text);
    ts_buf_free(&d.msg);
}

int main(void) {
    ts_arena_init(&A);
    test_copy_tail();
    test_copy_dtype();
    test_copy_rank();
    test_copy_errors();
    test_fill();
    test_gemm();
    test_gemm_errors();
    test_reduce();
    test_cumsum();
    test_atomic();
    test_lowered_text();
    ts_arena_free(&A);
    return test_done();
}
