/*
 * test_split_address.c — the pass split_address writes the global index of
 * a vector copy inside loops as base + step without changing its value.
 *
 * A hand-built kernel stores a thread's register pairs to a contiguous
 * global C[256, 256] in an unrolled nest, as a GEMM epilogue does:
 * C[by * 128 + t / 4 + i * 16, (bx * 64 + (t % 4 + j * 4) * 2)].  After the
 * pass: the copy is marked split; each index is an ADD whose left side
 * reads no loop variable of the nest (nor a let bound inside it) and whose
 * right side holds the loop terms; and for every block, thread and
 * iteration the new index equals the old one (evaluated independently,
 * by ir_eval_int on both trees).  Left alone: a copy outside any loop but
 * its thread binding, a global operand with run-time strides (not
 * contiguous), a copy whose terms all move, and every copy when the
 * switch (TsCaps.split_addr) is off, a flattened base that could leave
 * int32 (rows of 2^24 * 256 elements), and a step that may be negative
 * (the base pointer alone could point before the tensor).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/layout.h"
#include "ir/walk.h"
#include "pass/pass.h"
#include "test.h"

static TsArena A;

typedef struct K {
    IrKernel *k;
    IrBuffer *c, *r; /* global C, registers */
    IrVar *t, *i, *j, *in_let; /* thread, loop vars, a let bound in the loop */
    IrStmt *copy;    /* the copy as built */
} K;

static IrExpr *V(IrVar *v) { return ir_var_ref(&A, v); }
static IrExpr *I(int64_t c) { return ir_i32(&A, c); }
static IrExpr *ADD(IrExpr *a, IrExpr *b) { return ir_bin(&A, IR_ADD, a, b); }
static IrExpr *MUL(IrExpr *a, int64_t c) { return ir_bin(&A, IR_MUL, a, I(c)); }

/* mode 0: the epilogue nest; 1: no loop but the thread binding; 2: C not
 * contiguous; 3: every term moves; 4: the column has a let of the loop;
 * 5: C has 2^25 rows and the row's base is by * 2^24 (its flattened
 * base leaves int32); 6: the row's step may be negative (32 - i * 16) */
static K build(int mode, bool index32) {
    K x;
    memset(&x, 0, sizeof x);
    IrKernel *k = x.k = ir_kernel_new(&A, "k");
    k->ngrid = 2;
    k->grid[0] = I(4), k->grid[1] = I(2), k->grid[2] = I(1);
    for (int a = 0; a < 3; a++) {
        k->block_idx[a] = ir_var(k, a == 0 ? "bx" : a == 1 ? "by" : "bz", TS_INT32, IR_VAR_BLOCK_IDX);
        k->block_idx[a]->axis = a;
    }
    k->threads[0] = 128, k->threads[1] = k->threads[2] = 1;
    k->index32 = index32;
    IrExpr **shape = TS_NEWN(&A, IrExpr *, 2);
    shape[0] = I(mode == 5 ? (int64_t)1 << 25 : 256), shape[1] = I(256);
    x.c = ir_buffer(k, "C", TS_FLOAT32, IR_SCOPE_GLOBAL, 2, shape, (TsLoc){0});
    x.c->contiguous = mode != 2;
    x.c->align = 16;
    ts_vec_push(&A, k->params, ((IrParam){"C", x.c, NULL, 0})); /* a tensor parameter, as split_address asks */
    IrExpr **rs = TS_NEWN(&A, IrExpr *, 1);
    rs[0] = I(16);
    x.r = ir_buffer(k, "R", TS_FLOAT32, IR_SCOPE_LOCAL, 1, rs, (TsLoc){0});
    x.t = ir_var(k, "t", TS_INT32, IR_VAR_LOOP);
    x.i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    x.j = ir_var(k, "j", TS_INT32, IR_VAR_LOOP);
    x.in_let = ir_var(k, "w", TS_INT32, IR_VAR_LET);
    IrExpr *bx = V(k->block_idx[0]), *by = V(k->block_idx[1]), *t = V(x.t);
    IrExpr *row, *col;
    if (mode == 3) {
        row = ADD(MUL(V(x.i), 16), V(x.j));
        col = MUL(V(x.j), 8);
    } else if (mode == 5) {
        row = ADD(ADD(MUL(by, (int64_t)1 << 24), ir_bin(&A, IR_FLOORDIV, t, I(4))), MUL(V(x.i), 16));
        col = ADD(MUL(bx, 64), MUL(ir_bin(&A, IR_FLOORMOD, t, I(4)), 2));
    } else if (mode == 6) {
        row = ADD(ADD(MUL(by, 128), ir_bin(&A, IR_FLOORDIV, t, I(4))), ADD(MUL(V(x.i), -16), I(32)));
        col = ADD(MUL(bx, 64), MUL(ir_bin(&A, IR_FLOORMOD, t, I(4)), 2));
    } else {
        row = ADD(ADD(MUL(by, 128), ir_bin(&A, IR_FLOORDIV, t, I(4))), MUL(V(x.i), 16));
        /* (t % 4 + j * 4) * 2: a product over a sum, taken apart */
        col = ADD(MUL(bx, 64), MUL(ADD(ir_bin(&A, IR_FLOORMOD, t, I(4)), mode == 4 ? V(x.in_let) : MUL(V(x.j), 4)), 2));
    }
    IrStmt *vc = x.copy = ir_stmt(&A, IR_S_VCOPY, (TsLoc){0});
    vc->vcopy.dst = x.c;
    vc->vcopy.src = x.r;
    vc->vcopy.didx = TS_NEWN(&A, IrExpr *, 2);
    vc->vcopy.didx[0] = row, vc->vcopy.didx[1] = col;
    vc->vcopy.ndi = 2;
    vc->vcopy.sidx = TS_NEWN(&A, IrExpr *, 1);
    vc->vcopy.sidx[0] = mode == 1 ? I(0) : ADD(MUL(V(x.i), 4), MUL(V(x.j), 2));
    vc->vcopy.nsi = 1;
    vc->vcopy.lanes = 2;
    vc->vcopy.aligned = 1;
    IrStmt *body = vc;
    if (mode != 1) {
        IrStmt *jb = ir_seq(&A);
        if (mode == 4) {
            IrStmt *l = ir_stmt(&A, IR_S_LET, (TsLoc){0});
            l->let.var = x.in_let;
            l->let.value = MUL(V(x.j), 4);
            ir_seq_push(&A, jb, l);
        }
        ir_seq_push(&A, jb, vc);
        body = ir_for(&A, x.i, I(0), I(4), IR_FOR_UNROLL, ir_for(&A, x.j, I(0), I(2), IR_FOR_UNROLL, jb));
    }
    k->body = ir_seq(&A);
    ir_seq_push(&A, k->body, ir_for(&A, x.t, I(0), I(128), IR_FOR_THREAD, body));
    return x;
}

/* The copy in the kernel now (the pass may have replaced the statement). */
static bool find_vcopy(const IrStmt *s, void *ctx) {
    if (s->kind == IR_S_VCOPY) *(const IrStmt **)ctx = s;
    return false;
}
static const IrStmt *copy_of(const IrKernel *k) {
    const IrStmt *c = NULL;
    ir_stmt_any(k->body, find_vcopy, &c);
    return c;
}

static void run(K *x, bool on) {
    TsDiag d;
    memset(&d, 0, sizeof d);
    TsCaps caps;
    memset(&caps, 0, sizeof caps);
    caps.split_addr = on;
    caps.index32 = true;
    TsPassCtx cx = {&d, &A, x->k, TS_TARGET_CUDA, &caps};
    ts_pass_split_address(&cx);
}

static bool uses(const IrExpr *e, const IrVar *v) { return ir_expr_uses_var(e, v); }

/* Old and new index trees agree for every block, thread and iteration. */
static void check_values(const K *x, const IrStmt *c) {
    IrVar *vars[6] = {x->k->block_idx[0], x->k->block_idx[1], x->t, x->i, x->j, x->in_let};
    int64_t vals[6];
    int bad = 0, n = 0;
    for (int bx = 0; bx < 4; bx++)
        for (int by = 0; by < 2; by++)
            for (int t = 0; t < 128; t++)
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 2; j++) {
                        vals[0] = bx, vals[1] = by, vals[2] = t, vals[3] = i, vals[4] = j, vals[5] = j * 4;
                        for (int d = 0; d < 2; d++) {
                            int64_t want = -1, got = -2;
                            bool ok1 = ir_eval_int(x->copy->vcopy.didx[d], vars, vals, 6, &want);
                            bool ok2 = ir_eval_int(c->vcopy.didx[d], vars, vals, 6, &got);
                            bad += !ok1 || !ok2 || want != got;
                            n++;
                        }
                    }
    CHECK_EQ_INT(0, bad);
    CHECK(n == 4 * 2 * 128 * 4 * 2 * 2);
}

int main(void) {
    ts_arena_init(&A);

    /* the epilogue nest, 32-bit and 64-bit kernels */
    for (int w = 0; w < 2; w++) {
        K x = build(0, w == 0);
        run(&x, true);
        const IrStmt *c = copy_of(x.k);
        CHECK(c && c->vcopy.split == 1);
        if (!c || !c->vcopy.split) continue;
        for (int d = 0; d < 2; d++) {
            const IrExpr *e = c->vcopy.didx[d];
            CHECK(e->kind == IR_E_BIN && e->bin.op == IR_ADD);
            if (e->kind != IR_E_BIN || e->bin.op != IR_ADD) continue;
            CHECK(!uses(e->bin.a, x.i) && !uses(e->bin.a, x.j)); /* the base: fixed in the nest */
            CHECK(uses(e->bin.a, x.t));                          /* ... and per thread */
        }
        CHECK(uses(c->vcopy.didx[0]->bin.b, x.i));
        CHECK(uses(c->vcopy.didx[1]->bin.b, x.j));
        CHECK(!uses(c->vcopy.didx[1]->bin.b, x.t)); /* (t % 4) * 2 went to the base */
        CHECK(c->vcopy.sidx == x.copy->vcopy.sidx);  /* the register side is left alone */
        check_values(&x, c);
    }

    /* a let bound inside the nest counts as moving */
    {
        K x = build(4, true);
        run(&x, true);
        const IrStmt *c = copy_of(x.k);
        CHECK(c && c->vcopy.split == 1);
        if (c && c->vcopy.split) {
            CHECK(!uses(c->vcopy.didx[1]->bin.a, x.in_let));
            CHECK(uses(c->vcopy.didx[1]->bin.b, x.in_let));
            check_values(&x, c);
        }
    }

    /* left alone: no loop, run-time strides, nothing fixed, switch off, a
     * base that may leave int32 (32- and 64-bit kernels), a negative step */
    int modes[7] = {1, 2, 3, 0, 5, 5, 6};
    bool on[7] = {true, true, true, false, true, true, true}, w32[7] = {true, true, true, true, true, false, true};
    for (int m = 0; m < 7; m++) {
        K x = build(modes[m], w32[m]);
        run(&x, on[m]);
        const IrStmt *c = copy_of(x.k);
        CHECK(c && c->vcopy.split == 0);
        CHECK(c && c->vcopy.didx == x.copy->vcopy.didx);
    }
    ts_arena_free(&A);
    /* the pass decides what the printer may split: nothing in a bounds-checked
     * build, and only tensor parameters */
    {
        K x = build(0, true);
        TsDiag d;
        memset(&d, 0, sizeof d);
        TsCaps caps;
        memset(&caps, 0, sizeof caps);
        caps.split_addr = true;
        caps.index32 = true;
        caps.check_bounds = true;
        TsPassCtx cx = {&d, &A, x.k, TS_TARGET_CUDA, &caps};
        ts_pass_split_address(&cx);
        const IrStmt *c = copy_of(x.k);
        CHECK(c && !c->vcopy.split);
        K y = build(0, true);
        y.k->params.n = 0; /* C is no longer a parameter */
        run(&y, true);
        c = copy_of(y.k);
        CHECK(c && !c->vcopy.split);
    }
    return test_done();
}
