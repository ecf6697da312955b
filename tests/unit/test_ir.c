/*
 * test_ir.c — the IR core: constructors (dtype promotion, constant
 * folding), the printer's text, the verifier catching broken kernels, the
 * simplify pass and the pass driver (dump-after, timing, bad pass names).
 * Lowering of tile ops is tested by execution in test_lower.c.
 */
#include <math.h>
#include <stdlib.h>

#include "ir/interp.h"
#include "ir/ir.h"
#include "op/op.h"
#include "pass/pass.h"
#include "test.h"

static const TsCaps no_caps; /* the C target's */

static TsArena A;

static IrKernel *new_kernel(const char *name) {
    IrKernel *k = ir_kernel_new(&A, name);
    return k;
}

static IrBuffer *param(IrKernel *k, const char *name, TsDType dt, int ndim, const int64_t *shape) {
    IrExpr *sh[8];
    for (int i = 0; i < ndim; i++) sh[i] = ir_i32(&A, shape[i]);
    IrBuffer *b = ir_buffer(k, name, dt, IR_SCOPE_GLOBAL, ndim, sh, (TsLoc){0});
    b->param = k->params.n;
    IrParam p = {name, b, NULL, 0};
    ts_vec_push(&A, k->params, p);
    return b;
}

static IrBuffer *alloc(IrKernel *k, IrStmt *seq, const char *name, TsDType dt, IrScope sc,
                       int ndim, const int64_t *shape) {
    IrExpr *sh[8];
    for (int i = 0; i < ndim; i++) sh[i] = ir_i32(&A, shape[i]);
    IrBuffer *b = ir_buffer(k, name, dt, sc, ndim, sh, (TsLoc){0});
    IrStmt *s = ir_stmt(&A, IR_S_ALLOC, (TsLoc){0});
    s->alloc.buf = b;
    ir_seq_push(&A, seq, s);
    return b;
}

static const char *expr_text(const IrExpr *e) {
    static TsBuf b;
    ts_buf_free(&b);
    ir_print_expr(&b, e);
    return ts_buf_str(&b);
}

static IrRegion region(IrBuffer *b, IrExpr *s0, int64_t e0, IrExpr *s1, int64_t e1) {
    IrRegion r = {b, 2, TS_NEWN(&A, IrExpr *, 2), TS_NEWN(&A, IrExpr *, 2)};
    r.start[0] = s0;
    r.start[1] = s1;
    r.extent[0] = ir_i32(&A, e0);
    r.extent[1] = ir_i32(&A, e1);
    return r;
}

static IrStmt *tileop(IrTileOp *op) {
    IrStmt *s = ir_stmt(&A, IR_S_TILEOP, (TsLoc){0});
    s->op = op;
    return s;
}

/* ---- folding and promotion -------------------------------------------- */

static void test_fold_int(void) {
    IrExpr *e = ir_bin(&A, IR_ADD, ir_i32(&A, 3), ir_i32(&A, 4));
    CHECK(e->kind == IR_E_INT && e->ival == 7 && e->dt == TS_INT32);
    struct { IrBinOp op; int64_t x, y, want; } cases[] = {
        {IR_FLOORDIV, -7, 2, -4}, {IR_FLOORMOD, -7, 2, 1}, {IR_FLOORMOD, 7, -2, -1},
        {IR_FLOORDIV, 7, -2, -4}, {IR_FLOORDIV, -8, 2, -4}, {IR_FLOORMOD, -8, 2, 0},
        {IR_DIV, -7, 2, -3}, {IR_DIV, 7, -2, -3}, {IR_MIN, -3, 5, -3}, {IR_MAX, -3, 5, 5},
        {IR_SUB, 3, 10, -7}, {IR_MUL, -6, 7, -42}, {IR_SHL, 1, 10, 1024},
        {IR_SHR, -16, 2, -4}, {IR_BITXOR, 12, 10, 6}, {IR_POW, 3, 4, 81},
        {IR_ADD, 2147483647, 1, -2147483648LL}, /* int32 wraps */
    };
    for (int i = 0; i < TS_COUNTOF(cases); i++) {
        IrExpr *r = ir_bin(&A, cases[i].op, ir_i32(&A, cases[i].x), ir_i32(&A, cases[i].y));
        CHECK(r->kind == IR_E_INT);
        CHECK_EQ_INT(cases[i].want, r->ival);
    }
    IrExpr *c = ir_bin(&A, IR_LT, ir_i32(&A, 3), ir_i32(&A, 4));
    CHECK(c->kind == IR_E_INT && c->dt == TS_BOOL && c->ival == 1);
    /* division by a zero constant is left for run time */
    CHECK(ir_bin(&A, IR_FLOORDIV, ir_i32(&A, 3), ir_i32(&A, 0))->kind == IR_E_BIN);
    /* int32 literal with int64 gives int64 */
    IrExpr *w = ir_bin(&A, IR_ADD, ir_int(&A, 5, TS_INT64), ir_i32(&A, 1));
    CHECK(w->dt == TS_INT64 && w->ival == 6);
    /* uint8 arithmetic wraps */
    IrExpr *u = ir_bin(&A, IR_ADD, ir_int(&A, 250, TS_UINT8), ir_int(&A, 10, TS_UINT8));
    CHECK_EQ_INT(4, u->ival);
}

static void test_fold_float_and_promote(void) {
    IrExpr *e = ir_bin(&A, IR_MUL, ir_float(&A, 1.5, TS_FLOAT32), ir_float(&A, 2.0, TS_FLOAT32));
    CHECK(e->kind == IR_E_FLOAT && e->fval == 3.0 && e->dt == TS_FLOAT32);
    IrExpr *inf = ir_bin(&A, IR_DIV, ir_float(&A, 1, TS_FLOAT32), ir_float(&A, 0, TS_FLOAT32));
    CHECK(inf->kind == IR_E_FLOAT && isinf(inf->fval));
    CHECK_EQ_STR("inf", expr_text(inf));
    IrExpr *fd = ir_bin(&A, IR_FLOORMOD, ir_float(&A, -7.5, TS_FLOAT64), ir_float(&A, 2, TS_FLOAT64));
    CHECK(fd->fval == 0.5);
    /* int op float -> float, the int operand gets a cast */
    IrKernel *k = new_kernel("p");
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrVar *h = ir_var(k, "h", TS_FLOAT16, IR_VAR_LET);
    IrVar *f = ir_var(k, "f", TS_FLOAT32, IR_VAR_LET);
    IrExpr *m = ir_bin(&A, IR_ADD, ir_var_ref(&A, i), ir_float(&A, 0.5, TS_FLOAT32));
    CHECK(m->dt == TS_FLOAT32 && m->bin.a->kind == IR_E_CAST);
    CHECK_EQ_STR("float32(i) + 0.5", expr_text(m));
    IrExpr *hf = ir_bin(&A, IR_MUL, ir_var_ref(&A, h), ir_var_ref(&A, f));
    CHECK(hf->dt == TS_FLOAT32);
    CHECK_EQ_INT(TS_FLOAT32, ir_promote(TS_FLOAT16, TS_BFLOAT16));
    CHECK_EQ_INT(TS_UINT8, ir_promote(TS_INT8, TS_UINT8));
    CHECK_EQ_INT(TS_INT32, ir_promote(TS_BOOL, TS_INT32));
    CHECK_EQ_INT(TS_FLOAT16, ir_promote(TS_INT64, TS_FLOAT16));
    CHECK_EQ_INT(TS_INT64, ir_promote(TS_INT32, TS_INT64));
    /* comparisons and logic give bool */
    IrExpr *cmp = ir_bin(&A, IR_LT, ir_var_ref(&A, i), ir_i32(&A, 4));
    CHECK(cmp->dt == TS_BOOL);
    CHECK(ir_bin(&A, IR_AND, cmp, cmp)->dt == TS_BOOL);
    /* a constant false or true side of and/or (a bool after the cast) */
    for (int side = 0; side < 2; side++) {
        IrExpr *fa = ir_int(&A, 0, TS_BOOL), *tr = ir_int(&A, 1, TS_BOOL);
        IrExpr *af = side ? ir_bin(&A, IR_AND, cmp, fa) : ir_bin(&A, IR_AND, fa, cmp);
        CHECK(af->kind == IR_E_INT && af->ival == 0);
        CHECK((side ? ir_bin(&A, IR_AND, cmp, tr) : ir_bin(&A, IR_AND, tr, cmp)) == cmp);
        IrExpr *ot = side ? ir_bin(&A, IR_OR, cmp, tr) : ir_bin(&A, IR_OR, tr, cmp);
        CHECK(ot->kind == IR_E_INT && ot->ival == 1);
        CHECK((side ? ir_bin(&A, IR_OR, cmp, fa) : ir_bin(&A, IR_OR, fa, cmp)) == cmp);
        /* an int 0 cast to bool on the way in */
        IrExpr *ai = ir_bin(&A, IR_AND, ir_i32(&A, 0), cmp);
        CHECK(ai->kind == IR_E_INT && ai->ival == 0);
    }
    /* identities on ints (x + 0, 0 + x, x * 1, x * 0), not on floats */
    IrExpr *x = ir_var_ref(&A, i);
    CHECK(ir_bin(&A, IR_ADD, x, ir_i32(&A, 0)) == x);
    CHECK(ir_bin(&A, IR_ADD, ir_i32(&A, 0), x) == x);
    CHECK(ir_bin(&A, IR_MUL, x, ir_i32(&A, 1)) == x);
    IrExpr *z = ir_bin(&A, IR_MUL, x, ir_i32(&A, 0));
    CHECK(z->kind == IR_E_INT && z->ival == 0);
    CHECK(ir_bin(&A, IR_MUL, ir_var_ref(&A, f), ir_float(&A, 0, TS_FLOAT32))->kind == IR_E_BIN);
    /* an int64 zero added to an int32 var keeps the int64 type */
    CHECK(ir_bin(&A, IR_ADD, x, ir_int(&A, 0, TS_INT64))->dt == TS_INT64);
    /* casts fold and round */
    IrExpr *c1 = ir_cast(&A, TS_INT32, ir_float(&A, -3.7, TS_FLOAT32));
    CHECK(c1->kind == IR_E_INT && c1->ival == -3);
    IrExpr *c2 = ir_cast(&A, TS_FLOAT16, ir_float(&A, 0.1, TS_FLOAT64));
    CHECK(c2->kind == IR_E_FLOAT && c2->fval == 0.0999755859375);
    IrExpr *c3 = ir_cast(&A, TS_FLOAT16, ir_float(&A, 70000, TS_FLOAT32));
    CHECK(isinf(c3->fval));
    IrExpr *c4 = ir_cast(&A, TS_BFLOAT16, ir_float(&A, 1.0 + 1.0 / 256, TS_FLOAT32));
    CHECK(c4->fval == 1.0); /* a tie rounds to even */
    IrExpr *c5 = ir_cast(&A, TS_INT8, ir_i32(&A, 300));
    CHECK_EQ_INT(44, c5->ival);
    /* select folds on constant conditions */
    IrExpr *s = ir_select(&A, ir_int(&A, 0, TS_BOOL), ir_i32(&A, 1), x);
    CHECK(s == x);
    /* substitution folds the result */
    IrExpr *ex = ir_bin(&A, IR_ADD, ir_bin(&A, IR_MUL, x, ir_i32(&A, 64)), ir_i32(&A, 3));
    IrExpr *to = ir_i32(&A, 2);
    IrExpr *sub = ir_subst(&A, ex, &i, &to, 1);
    CHECK(sub->kind == IR_E_INT && sub->ival == 131);
    CHECK_EQ_STR("i * 64 + 3", expr_text(ex));
}

/* The folder and the interpreter round float16 independently: they must agree. */
static void test_f16_agreement(void) {
    IrKernel *k = new_kernel("r");
    TsDiag d = {0};
    IrVar *x = ir_var(k, "x", TS_FLOAT32, IR_VAR_LET);
    IrInterp *in = ir_interp_new(&A, &d, k);
    unsigned seed = 12345;
    int bad = 0;
    for (int n = 0; n < 2000; n++) {
        seed = seed * 1103515245u + 12345u;
        double v = ((double)(seed >> 8) / (1u << 24) - 0.5) * pow(2.0, (int)(seed % 40) - 20);
        for (int t = 0; t < 2; t++) {
            TsDType dt = t ? TS_BFLOAT16 : TS_FLOAT16;
            IrExpr *folded = ir_cast(&A, dt, ir_float(&A, v, TS_FLOAT32));
            ir_interp_bind_var(in, x, (float)v);
            double run = ir_interp_eval(in, ir_cast(&A, dt, ir_var_ref(&A, x)));
            if (folded->fval != run) bad++;
        }
    }
    CHECK_EQ_INT(0, bad);
    ir_interp_free(in);
}

/* ---- printer -------------------------------------------------------------- */

/* The matmul kernel of TileLang's README: 64x64 tiles, K step 32. */
static IrKernel *matmul_kernel(void) {
    IrKernel *k = new_kernel("matmul");
    IrBuffer *a = param(k, "A", TS_FLOAT16, 2, (int64_t[]){256, 160});
    IrBuffer *b = param(k, "B", TS_FLOAT16, 2, (int64_t[]){160, 256});
    IrBuffer *c = param(k, "C", TS_FLOAT32, 2, (int64_t[]){256, 256});
    k->params.v[2].is_output = 1;
    k->ngrid = 2;
    k->grid[0] = ir_i32(&A, 4);
    k->grid[1] = ir_i32(&A, 4);
    IrVar *bx = ir_var(k, "bx", TS_INT32, IR_VAR_BLOCK_IDX);
    IrVar *by = ir_var(k, "by", TS_INT32, IR_VAR_BLOCK_IDX);
    by->axis = 1;
    k->block_idx[0] = bx;
    k->block_idx[1] = by;
    IrStmt *body = ir_seq(&A);
    IrBuffer *as = alloc(k, body, "A_shared", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){64, 32});
    IrBuffer *bs = alloc(k, body, "B_shared", TS_FLOAT16, IR_SCOPE_SHARED, 2, (int64_t[]){32, 64});
    IrBuffer *cl = alloc(k, body, "C_local", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){64, 64});
    IrTileOp *fill = TS_NEW(&A, IrTileOp);
    fill->kind = TS_OP_FILL;
    fill->nr = 1;
    fill->r[0] = ir_region_full(&A, cl);
    fill->value = ir_float(&A, 0, TS_FLOAT32);
    ir_seq_push(&A, body, tileop(fill));
    IrVar *kv = ir_var(k, "k", TS_INT32, IR_VAR_LOOP);
    IrStmt *lb = ir_seq(&A);
    IrExpr *byx = ir_bin(&A, IR_MUL, ir_var_ref(&A, by), ir_i32(&A, 64));
    IrExpr *bxx = ir_bin(&A, IR_MUL, ir_var_ref(&A, bx), ir_i32(&A, 64));
    IrExpr *kx = ir_bin(&A, IR_MUL, ir_var_ref(&A, kv), ir_i32(&A, 32));
    IrTileOp *c1 = TS_NEW(&A, IrTileOp);
    c1->kind = TS_OP_COPY;
    c1->nr = 2;
    c1->r[0] = region(a, byx, 64, kx, 32);
    c1->r[1] = ir_region_full(&A, as);
    ir_seq_push(&A, lb, tileop(c1));
    IrTileOp *c2 = TS_NEW(&A, IrTileOp);
    *c2 = *c1;
    c2->r[0] = region(b, kx, 32, bxx, 64);
    c2->r[1] = ir_region_full(&A, bs);
    ir_seq_push(&A, lb, tileop(c2));
    IrTileOp *g = TS_NEW(&A, IrTileOp);
    g->kind = TS_OP_GEMM;
    g->nr = 3;
    g->r[0] = ir_region_full(&A, as);
    g->r[1] = ir_region_full(&A, bs);
    g->r[2] = ir_region_full(&A, cl);
    ir_seq_push(&A, lb, tileop(g));
    IrStmt *loop = ir_for(&A, kv, ir_i32(&A, 0), ir_i32(&A, 5), IR_FOR_PIPELINED, lb);
    loop->for_.num_stages = 3;
    ir_seq_push(&A, body, loop);
    IrTileOp *c3 = TS_NEW(&A, IrTileOp);
    c3->kind = TS_OP_COPY;
    c3->nr = 2;
    c3->r[0] = ir_region_full(&A, cl);
    c3->r[1] = region(c, byx, 64, bxx, 64);
    ir_seq_push(&A, body, tileop(c3));
    k->body = body;
    return k;
}

static void test_print(void) {
    IrKernel *k = matmul_kernel();
    TsBuf b = {0};
    ir_print_kernel(&b, k);
    CHECK_EQ_STR(
        "kernel matmul(A: global float16[256, 160], B: global float16[160, 256], "
        "C: global float32[256, 256] out) grid(4, 4) threads 128\n"
        "    bx = blockIdx.x\n"
        "    by = blockIdx.y\n"
        "    A_shared = alloc_shared float16[64, 32]\n"
        "    B_shared = alloc_shared float16[32, 64]\n"
        "    C_local = alloc_fragment float32[64, 64]\n"
        "    fill(C_local, 0.0)\n"
        "    for k in pipelined(5, num_stages=3):\n"
        "        copy(A[by * 64:+64, k * 32:+32] -> A_shared)\n"
        "        copy(B[k * 32:+32, bx * 64:+64] -> B_shared)\n"
        "        gemm(A_shared, B_shared, C_local)\n"
        "    copy(C_local -> C[by * 64:+64, bx * 64:+64])\n",
        ts_buf_str(&b));
    ts_buf_free(&b);

    /* precedence: parentheses only where needed */
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP), *j = ir_var(k, "j", TS_INT32, IR_VAR_LOOP);
    IrExpr *ie = ir_var_ref(&A, i), *je = ir_var_ref(&A, j);
    CHECK_EQ_STR("(i + j) * 4", expr_text(ir_bin(&A, IR_MUL, ir_bin(&A, IR_ADD, ie, je), ir_i32(&A, 4))));
    CHECK_EQ_STR("i - (j - 1)", expr_text(ir_bin(&A, IR_SUB, ie, ir_bin(&A, IR_SUB, je, ir_i32(&A, 1)))));
    CHECK_EQ_STR("i - j - 1", expr_text(ir_bin(&A, IR_SUB, ir_bin(&A, IR_SUB, ie, je), ir_i32(&A, 1))));
    CHECK_EQ_STR("i // 2 % 3", expr_text(ir_bin(&A, IR_FLOORMOD, ir_bin(&A, IR_FLOORDIV, ie, ir_i32(&A, 2)), ir_i32(&A, 3))));
    CHECK_EQ_STR("i < 4 and j >= 2", expr_text(ir_bin(&A, IR_AND, ir_bin(&A, IR_LT, ie, ir_i32(&A, 4)), ir_bin(&A, IR_GE, je, ir_i32(&A, 2)))));
    CHECK_EQ_STR("-(i + j)", expr_text(ir_neg(&A, ir_bin(&A, IR_ADD, ie, je))));
    CHECK_EQ_STR("min(i, j + 1)", expr_text(ir_bin(&A, IR_MIN, ie, ir_bin(&A, IR_ADD, je, ir_i32(&A, 1)))));
    CHECK_EQ_STR("1e+30", expr_text(ir_float(&A, 1e30, TS_FLOAT64)));
    CHECK_EQ_STR("0.100000001", expr_text(ir_float(&A, 0.1, TS_FLOAT32)));
    CHECK_EQ_STR("-inf", expr_text(ir_float(&A, -INFINITY, TS_FLOAT32)));
    IrExpr *call = ir_call(&A, IR_EXP2, &ie, 1, TS_FLOAT32);
    CHECK_EQ_STR("exp2(i)", expr_text(call));
}

/* ---- verifier ---------------------------------------------------------------- */

/* Run ir_verify on k; returns the status and leaves the message in d. */
static TsStatus verify(IrKernel *k, TsDiag *d) {
    jmp_buf jb, *saved;
    ts_buf_free(&d->msg);
    if (ts_try(d, &jb, &saved)) {
        ts_try_end(d, saved);
        return d->status;
    }
    ir_verify(d, k);
    ts_try_end(d, saved);
    return TS_OK;
}

static void test_verify(void) {
    TsDiag d = {0};
    IrKernel *k = matmul_kernel();
    CHECK_EQ_INT(TS_OK, verify(k, &d));

    /* a var used outside its definition */
    IrKernel *k2 = new_kernel("bad");
    IrBuffer *o = param(k2, "O", TS_FLOAT32, 1, (int64_t[]){16});
    IrVar *x = ir_var(k2, "x", TS_INT32, IR_VAR_LET);
    IrExpr *xe = ir_var_ref(&A, x);
    k2->body = ir_seq(&A);
    ir_seq_push(&A, k2->body, ir_store(&A, o, &xe, 1, ir_float(&A, 1, TS_FLOAT32)));
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k2, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "var x (id 1) is used where it is not defined");
    CHECK_CONTAINS(ts_buf_str(&d.msg), "in statement: O[x] = 1.0");

    /* a load with the wrong number of indices */
    IrKernel *k3 = new_kernel("bad2");
    IrBuffer *o3 = param(k3, "O", TS_FLOAT32, 2, (int64_t[]){4, 4});
    IrExpr *idx[2] = {ir_i32(&A, 0), ir_i32(&A, 1)};
    k3->body = ir_seq(&A);
    ir_seq_push(&A, k3->body, ir_store(&A, o3, idx, 2, ir_load(&A, o3, idx, 1)));
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k3, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "buffer O has 2 dims but is indexed with 1 indices");

    /* a gemm accumulating into shared memory, and a buffer used before its alloc */
    IrKernel *k4 = matmul_kernel();
    IrStmt *loop = k4->body->seq.v[4];
    IrTileOp *g = loop->for_.body->seq.v[2]->op;
    g->r[2].buf->scope = IR_SCOPE_SHARED;
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k4, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "gemm accumulator C_local is in shared memory");
    g->r[2].buf->scope = IR_SCOPE_FRAGMENT;
    IrStmt *first = k4->body->seq.v[0];
    k4->body->seq.v[0] = k4->body->seq.v[4];
    k4->body->seq.v[4] = first;
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k4, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "shared buffer A_shared is used but no alloc");

    /* a store whose value has the wrong dtype (bypassing ir_store) */
    IrKernel *k5 = new_kernel("bad3");
    IrBuffer *o5 = param(k5, "O", TS_FLOAT16, 1, (int64_t[]){4});
    IrExpr *z = ir_i32(&A, 0);
    IrStmt *st = ir_store(&A, o5, &z, 1, ir_float(&A, 1, TS_FLOAT16));
    st->store.value = ir_float(&A, 2, TS_FLOAT32);
    k5->body = st;
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k5, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "a store of a float32 value into float16 buffer O");

    /* the C target's own barrier ids and solo roles (pass coro_sync_c): coroutine kernels only */
    IrKernel *k6 = new_kernel("coro");
    IrBuffer *o6 = param(k6, "O", TS_FLOAT32, 1, (int64_t[]){4});
    IrStmt *bar = ir_stmt(&A, IR_S_BARRIER, (TsLoc){0});
    bar->barrier.id = IR_C_BAR_BLOCK;
    IrStmt *solo = ir_stmt(&A, IR_S_ROLE, (TsLoc){0});
    solo->role.n = 64;
    solo->role.solo = true;
    solo->role.body = ir_store(&A, o6, &z, 1, ir_float(&A, 1, TS_FLOAT32));
    k6->body = ir_seq(&A);
    ir_seq_push(&A, k6->body, bar);
    ir_seq_push(&A, k6->body, solo);
    ir_seq_push(&A, k6->body, bar);
    k6->thread_coro = true;
    CHECK_EQ_INT(TS_OK, verify(k6, &d));
    k6->thread_coro = false;
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k6, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "barrier 16 of 0 threads");
    k6->thread_coro = true;
    bar->barrier.id = IR_C_BAR_END;
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k6, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "barrier 49 of 0 threads");
    k6->thread_coro = false;
    k6->body = solo;
    CHECK_EQ_INT(TS_ERR_INTERNAL, verify(k6, &d));
    CHECK_CONTAINS(ts_buf_str(&d.msg), "solo role 0 of threads [0, 64)");
    ts_buf_free(&d.msg);
}

/* ---- passes ---------------------------------------------------------------------- */

static void test_passes(void) {
    TsDiag d = {0};
    IrKernel *k = matmul_kernel();
    TsPassCtx cx = {&d, &A, k, TS_TARGET_C, &no_caps};
    jmp_buf jb, *saved;
    TsBuf dump = {0}, timing = {0};
    int failed = 0;
    if (ts_try(&d, &jb, &saved)) {
        failed = 1;
    } else {
        ts_run_passes(&cx, "nonsense", &dump, &timing);
    }
    ts_try_end(&d, saved);
    CHECK(failed);
    CHECK_EQ_INT(TS_ERR_PARAM, d.status);
    CHECK_CONTAINS(ts_buf_str(&d.msg),
                   "unknown pass 'nonsense' for --dump-after; valid passes: verify, simplify, "
                   "fragment_private, async_copy_c, split_grid, ");
    CHECK_CONTAINS(ts_buf_str(&d.msg), "pipeline_planning, lower_coll, shared_to_fragment, lower_tile_ops, ");
    CHECK_CONTAINS(ts_buf_str(&d.msg), "inject_pipeline, tier_plan, rasterize, partition_threads, lower_comm, "
                   "ws_async_copy, ws_role_regs, forward_stores, insert_sync, index_width, plan_smem, thread_loops_c, "
                   "warp_c, coro_sync_c, split_address, poll_marks, arch_hints, wgmma_waits, verify_lowered");
    ts_buf_free(&d.msg);

    failed = 0;
    if (ts_try(&d, &jb, &saved)) failed = 1;
    else ts_run_passes(&cx, "lower_tile_ops", &dump, &timing);
    ts_try_end(&d, saved);
    CHECK(!failed);
    if (failed) fprintf(stderr, "%s", ts_buf_str(&d.msg));
    CHECK_CONTAINS(ts_buf_str(&timing), "pass verify ");
    CHECK_CONTAINS(ts_buf_str(&timing), "pass verify_lowered ");
    CHECK_CONTAINS(ts_buf_str(&dump), "for k in pipelined(5, num_stages=3):");
    CHECK_CONTAINS(ts_buf_str(&dump), "C_local[i, j] = 0.0");
    CHECK_CONTAINS(ts_buf_str(&dump), "C_local[i_3, j_4] = C_local[i_3, j_4] + a * B_tile[k_2, j_4]");
    CHECK(!strstr(ts_buf_str(&dump), "gemm("));
    /* 256x160 in 64x32 tiles: every bounds guard is provably true and pruned */
    CHECK(!strstr(ts_buf_str(&dump), "if "));
    CHECK_CONTAINS(ts_buf_str(&dump), "A_shared[i_1, j_1] = A[by * 64 + i_1, k * 32 + j_1]");
    ts_buf_free(&dump);
    ts_buf_free(&timing);
    ts_buf_free(&d.msg);
}

static void test_simplify(void) {
    TsDiag d = {0};
    IrKernel *k = new_kernel("s");
    IrBuffer *o = param(k, "O", TS_INT32, 1, (int64_t[]){64});
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrExpr *ie = ir_var_ref(&A, i);
    /* O[(i + 3) + 4] = i - i ; built without folding the nesting */
    IrExpr *in = TS_NEW(&A, IrExpr);
    *in = (IrExpr){.kind = IR_E_BIN, .dt = TS_INT32};
    in->bin.op = IR_ADD;
    in->bin.a = ir_bin(&A, IR_ADD, ie, ir_i32(&A, 3));
    in->bin.b = ir_i32(&A, 4);
    IrExpr *diff = TS_NEW(&A, IrExpr);
    *diff = (IrExpr){.kind = IR_E_BIN, .dt = TS_INT32};
    diff->bin.op = IR_SUB;
    diff->bin.a = ie;
    diff->bin.b = ir_var_ref(&A, i);
    IrStmt *body = ir_seq(&A);
    ir_seq_push(&A, body, ir_store(&A, o, &in, 1, diff));
    IrStmt *dead = ir_stmt(&A, IR_S_IF, (TsLoc){0});
    dead->if_.cond = ir_bin(&A, IR_GT, ir_i32(&A, 2), ir_i32(&A, 3));
    dead->if_.then = ir_store(&A, o, &ie, 1, ir_i32(&A, 9));
    ir_seq_push(&A, body, dead);
    IrStmt *loop = ir_for(&A, i, ir_i32(&A, 0), ir_i32(&A, 8), IR_FOR_SERIAL, body);
    k->body = ir_seq(&A);
    ir_seq_push(&A, k->body, loop);
    ir_seq_push(&A, k->body, ir_for(&A, ir_var(k, "e", TS_INT32, IR_VAR_LOOP), ir_i32(&A, 0),
                                    ir_i32(&A, 0), IR_FOR_SERIAL, ir_seq(&A)));
    TsPassCtx cx = {&d, &A, k, TS_TARGET_C, &no_caps};
    ts_pass_simplify(&cx);
    TsBuf b = {0};
    ir_print_stmt(&b, k->body, 0);
    CHECK_EQ_STR("for i in serial(8):\n    O[i + 7] = 0\n", ts_buf_str(&b));
    ts_buf_free(&b);
}

/* The text of every tile-op form, and ir_stmt_subst on a loop nest. */
static void test_print_ops_and_subst(void) {
    IrKernel *k = new_kernel("ops");
    IrBuffer *g = param(k, "G", TS_FLOAT32, 2, (int64_t[]){64, 64});
    IrStmt *body = ir_seq(&A);
    IrBuffer *f = alloc(k, body, "F", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, (int64_t[]){16, 8});
    IrBuffer *v = alloc(k, body, "v", TS_FLOAT32, IR_SCOPE_FRAGMENT, 1, (int64_t[]){16});
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrTileOp *ops[5];
    for (int n = 0; n < 5; n++) {
        ops[n] = TS_NEW(&A, IrTileOp);
        ops[n]->nr = 2;
        ops[n]->r[0] = ir_region_full(&A, f);
        ops[n]->r[1] = ir_region_full(&A, v);
    }
    ops[0]->kind = TS_OP_REDUCE;
    ops[0]->reduce = TS_REDUCE_ABSMAX;
    ops[0]->dim = 1;
    ops[1]->kind = TS_OP_CUMSUM;
    ops[1]->r[1] = ir_region_full(&A, f);
    ops[1]->reverse = 1;
    ops[2]->kind = TS_OP_ATOMIC_ADD;
    ops[2]->r[0] = region(g, ir_bin(&A, IR_MUL, ir_var_ref(&A, i), ir_i32(&A, 16)), 16, ir_i32(&A, 0), 8);
    ops[2]->r[1] = ir_region_full(&A, f);
    ops[3]->kind = TS_OP_ATOMIC_ADD;
    ops[3]->nr = 1;
    ops[3]->r[0] = region(g, ir_var_ref(&A, i), 1, ir_i32(&A, 3), 1);
    ops[3]->value = ir_float(&A, 2, TS_FLOAT32);
    ops[4]->kind = TS_OP_FILL;
    ops[4]->nr = 1;
    ops[4]->r[0] = region(f, ir_i32(&A, 0), 4, ir_i32(&A, 2), 2);
    ops[4]->value = ir_float(&A, -1.25, TS_FLOAT32);
    IrStmt *lb = ir_seq(&A);
    for (int n = 0; n < 5; n++) ir_seq_push(&A, lb, tileop(ops[n]));
    ir_seq_push(&A, body, ir_for(&A, i, ir_i32(&A, 0), ir_i32(&A, 4), IR_FOR_SERIAL, lb));
    k->body = body;
    TsBuf b = {0};
    ir_print_kernel(&b, k);
    CHECK_EQ_STR("kernel ops(G: global float32[64, 64]) grid(1) threads 128\n"
                 "    F = alloc_fragment float32[16, 8]\n"
                 "    v = alloc_fragment float32[16]\n"
                 "    for i in serial(4):\n"
                 "        reduce_absmax(F -> v, dim=1, clear=0)\n"
                 "        cumsum(F -> F, dim=0, reverse=1)\n"
                 "        atomic_add(F -> G[i * 16:+16, 0:+8])\n"
                 "        atomic_add(G[i:+1, 3:+1], 2.0)\n"
                 "        fill(F[0:+4, 2:+2], -1.25)\n",
                 ts_buf_str(&b));
    TsDiag d = {0};
    CHECK_EQ_INT(TS_OK, verify(k, &d));
    ts_buf_free(&b);

    /* substitute i := 2 in the loop body: starts fold */
    IrExpr *two = ir_i32(&A, 2);
    IrStmt *copy = ir_stmt_subst(&A, lb, &i, &two, 1);
    ir_print_stmt(&b, copy, 0);
    CHECK_CONTAINS(ts_buf_str(&b), "atomic_add(F -> G[32:+16, 0:+8])");
    CHECK_CONTAINS(ts_buf_str(&b), "atomic_add(G[2:+1, 3:+1], 2.0)");
    CHECK(copy->seq.v[2]->op != ops[2]); /* a deep copy */
    ts_buf_free(&b);
    ir_print_stmt(&b, lb, 0);
    CHECK_CONTAINS(ts_buf_str(&b), "atomic_add(F -> G[i * 16:+16, 0:+8])"); /* original intact */
    ts_buf_free(&b);
    ts_buf_free(&d.msg);
}

int main(void) {
    ts_arena_init(&A);
    test_fold_int();
    test_fold_float_and_promote();
    test_f16_agreement();
    test_print();
    test_verify();
    test_passes();
    test_simplify();
    test_print_ops_and_subst();
    ts_arena_free(&A);
    return test_done();
}
