/*
 * test_rasterize.c — the rasterize pass (T.use_swizzle) renumbers a 2-D
 * grid's blocks by a bijection, for grids whose rows do and do not fill
 * the last panel, and leaves 1-D grids, one-panel grids and kernels
 * without use_swizzle alone, in both orders (row: panels of block rows;
 * col: of block columns); the order is compared block by block with the
 * one TileLang documents.  The lets the pass writes are evaluated for
 * every raw block index and the (bx, by) they give must cover the grid
 * exactly once.  The renumbered indices keep the block indices' ranges
 * for the arithmetic analysis (IrVar.grid_perm): a staged tile store
 * C[by * 64 + i, bx * 64 + j] = S[i, j] after T.use_swizzle becomes
 * 16-byte vector copies proven aligned (it was one 2-byte store per
 * element), and runs right in the thread-level interpreter.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "ir/layout.h"
#include "ir/walk.h"
#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;

/* A kernel with a gx x gy grid whose body is one let reading bx, by. */
static IrKernel *grid_kernel(int64_t gx, int64_t gy, int panel, bool col) {
    IrKernel *k = ir_kernel_new(&A, "k");
    k->ngrid = 2;
    k->grid[0] = ir_i32(&A, gx);
    k->grid[1] = ir_i32(&A, gy);
    k->grid[2] = ir_i32(&A, 1);
    for (int i = 0; i < 3; i++) {
        k->block_idx[i] = ir_var(k, i == 0 ? "bx" : i == 1 ? "by" : "bz", TS_INT32, IR_VAR_BLOCK_IDX);
        k->block_idx[i]->axis = i;
    }
    k->threads[0] = 128, k->threads[1] = k->threads[2] = 1;
    k->swizzle_panel = panel;
    k->swizzle_col = col;
    k->body = ir_seq(&A);
    IrStmt *s = ir_stmt(&A, IR_S_LET, (TsLoc){0});
    s->let.var = ir_var(k, "use", TS_INT32, IR_VAR_LET);
    s->let.value = ir_bin(&A, IR_ADD, ir_var_ref(&A, k->block_idx[0]),
                          ir_bin(&A, IR_MUL, ir_var_ref(&A, k->block_idx[1]), ir_i32(&A, 1000)));
    ir_seq_push(&A, k->body, s);
    return k;
}

/* Evaluate the pass's let chain for raw (x, y): the value of `use`. */
static int64_t run_lets(const IrKernel *k, int64_t x, int64_t y) {
    IrVar *vars[32];
    int64_t vals[32];
    int n = 0;
    vars[n] = k->block_idx[0], vals[n++] = x;
    vars[n] = k->block_idx[1], vals[n++] = y;
    const IrStmt *b = k->body;
    for (int i = 0; i < b->seq.n && n < 32; i++) {
        const IrStmt *s = b->seq.v[i];
        if (s->kind == IR_S_SEQ) {
            b = s;
            i = -1;
            continue;
        }
        if (s->kind != IR_S_LET) continue;
        int64_t v;
        if (!ir_eval_int(s->let.value, vars, vals, n, &v)) return -1;
        if (!strcmp(s->let.var->name, "use")) return v;
        vars[n] = s->let.var, vals[n++] = v;
    }
    return -1;
}

/* The order TileLang documents for rasterization2DRow / rasterization2DColumn
 * (tile-ai/tilelang src/tl_templates/cuda/threadblock_swizzle.h), written
 * independently: linear block L = x + y * gx in panels of `panel` rows (or
 * columns) of blocks, the last panel narrower, direction alternating. */
static void reference(int64_t gx, int64_t gy, int64_t panel, bool col, int64_t x, int64_t y, int64_t *bx, int64_t *by) {
    int64_t L = x + y * gx, other = col ? gy : gx, along = col ? gx : gy;
    int64_t psize = panel * other, p = L / psize, off = L % psize;
    int64_t width = (p + 1) * panel <= along ? panel : along - p * panel;
    int64_t a = off / width, c = off % width + p * panel;
    if (p & 1) a = other - 1 - a;
    *bx = col ? c : a;
    *by = col ? a : c;
}

static void check_grid(int64_t gx, int64_t gy, int panel, bool col, int expect_change) {
    IrKernel *k = grid_kernel(gx, gy, panel, col);
    IrStmt *before = k->body;
    TsDiag d = {0};
    TsCaps caps = {0};
    TsPassCtx cx = {&d, &A, k, TS_TARGET_CUDA, &caps};
    ts_pass_rasterize(&cx);
    CHECK_EQ_INT(expect_change, k->body != before);
    char *seen = calloc((size_t)(gx * gy), 1);
    int bad = 0, off_ref = 0;
    for (int64_t y = 0; y < gy; y++)
        for (int64_t x = 0; x < gx; x++) {
            int64_t u = run_lets(k, x, y), bx = u % 1000, by = u / 1000;
            if (u < 0 || bx < 0 || bx >= gx || by < 0 || by >= gy || seen[by * gx + bx]++) bad++;
            if (expect_change) {
                int64_t rx, ry;
                reference(gx, gy, panel, col, x, y, &rx, &ry);
                off_ref += rx != bx || ry != by;
            }
        }
    if (bad || off_ref)
        fprintf(stderr, "grid %lld x %lld panel %d %s: %d blocks missed or repeated, %d off TileLang's order\n",
                (long long)gx, (long long)gy, panel, col ? "col" : "row", bad, off_ref);
    CHECK_EQ_INT(0, bad);
    CHECK_EQ_INT(0, off_ref);
    if (expect_change) { /* the new bx, by: renumbered block indices with the grid's ranges */
        IrStmt *b = k->body;
        const IrVar *nb[2] = {NULL, NULL};
        for (int i = 0; i < b->seq.n; i++)
            if (b->seq.v[i]->kind == IR_S_LET && b->seq.v[i]->let.var->grid_perm) {
                const IrVar *v = b->seq.v[i]->let.var;
                if (v->axis == 0 || v->axis == 1) nb[v->axis] = v;
            }
        CHECK(nb[0] && nb[1] && nb[0] != nb[1]);
        IrArith ar;
        ir_arith_init(&ar, &A, k);
        for (int ax = 0; ax < 2 && nb[0] && nb[1]; ax++) {
            IrInterval r = ir_arith_var_range(&ar, nb[ax]);
            CHECK_EQ_INT(0, (int)r.lo);
            CHECK_EQ_INT((int)(ax ? gy : gx) - 1, (int)r.hi);
        }
    }
    free(seen);
    ts_buf_free(&d.msg);
}

/* ---- a staged tile store after rasterization: vector copies ----------------------- */

static const char *STAGED =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit\n"
    "def staged(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):\n"
    "            S = T.alloc_shared((64, 64), \"float16\")\n"
    "            T.use_swizzle(panel_size=2)\n"
    "            for i, j in T.Parallel(64, 64):\n"
    "                S[i, j] = A[by * 64 + i, bx * 64 + j] * 2.0\n"
    "            T.copy(S, C[by * 64, bx * 64])\n"
    "    return main\n";

typedef struct VcopyFind {
    const IrBuffer *dst; /* the global buffer stored to */
    int n, lanes, aligned, scalar; /* vcopies to it, their lanes and aligned flags; scalar stores to it */
} VcopyFind;

static bool find_vcopy(IrVisitor *v, const IrStmt *s) {
    VcopyFind *f = v->ctx;
    if (s->kind == IR_S_VCOPY && s->vcopy.dst == f->dst) {
        f->n++;
        f->lanes = s->vcopy.lanes;
        f->aligned = s->vcopy.aligned;
    }
    if (s->kind == IR_S_STORE && s->store.buf == f->dst) f->scalar++;
    return true;
}

static void test_staged_store(void) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_90");
    c.sm = 90;
    c.mma = c.vec = c.vec_cast = c.pipeline = c.layout = c.swizzle = c.store_align = true;
    enum { M = 256, N = 192 }; /* a 3 x 4 grid: two panels of 2 block rows */
    TsBuf err = {0};
    IrKernel *k = pt_compile(&A, STAGED, "staged", "M=256 N=192", TS_TARGET_CUDA, &c, &c, NULL, NULL, &err);
    CHECK(k != NULL);
    if (!k) {
        fprintf(stderr, "%s", ts_buf_str(&err));
        ts_buf_free(&err);
        return;
    }
    VcopyFind f = {0};
    for (int p = 0; p < k->params.n; p++)
        if (!strcmp(k->params.v[p].buf->name, "C")) f.dst = k->params.v[p].buf;
    IrVisitor v = {.ctx = &f, .pre_stmt = find_vcopy};
    ir_visit_stmt(&v, k->body);
    CHECK_EQ_INT(1, f.n);      /* the store of S is one vector copy ... */
    CHECK_EQ_INT(8, f.lanes);  /* of 16 bytes */
    CHECK_EQ_INT(1, f.aligned); /* proven aligned: bx * 64 + 8 q with bx in the grid */
    CHECK_EQ_INT(0, f.scalar); /* and no element stores beside it */
    /* run: random input, poisoned output, against C = 2 A */
    double *a = malloc(sizeof(double) * M * N), *o = malloc(sizeof(double) * M * N);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < M * N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = (double)(int64_t)(x % 2001) / 64.0 - 15.0; /* exact in float16 and doubled */
        o[i] = 1e30;
    }
    double *data[2] = {a, o};
    CHECK(pt_run(&A, k, data, 0, &err));
    int wrong = 0;
    for (int i = 0; i < M * N; i++) wrong += o[i] != 2 * a[i];
    CHECK_EQ_INT(0, wrong);
    if (err.n) fprintf(stderr, "%s", ts_buf_str(&err));
    ts_buf_free(&err);
    free(a);
    free(o);
}

int main(void) {
    ts_arena_init(&A);
    for (int col = 0; col < 2; col++) {
        check_grid(32, 32, 10, col, 1); /* 3 full panels and one of 2 rows (columns) */
        check_grid(7, 23, 4, col, 1);
        check_grid(23, 7, 4, col, 1);
        check_grid(5, 40, 10, col, !col); /* rows: panels fill exactly; columns: one panel */
        check_grid(40, 5, 10, col, col);
        check_grid(64, 11, 10, col, 1);
        check_grid(9, 10, 10, col, 0);  /* one panel: unchanged */
        check_grid(9, 30, 0, col, 0);   /* no use_swizzle */
    }
    /* the raster order itself: block (0, 0), then down the first panel's column 0 */
    IrKernel *k = grid_kernel(8, 16, 4, false);
    TsDiag d = {0};
    TsCaps caps = {0};
    TsPassCtx cx = {&d, &A, k, TS_TARGET_CUDA, &caps};
    ts_pass_rasterize(&cx);
    CHECK_EQ_INT(0 * 1000 + 0, (int)run_lets(k, 0, 0));
    CHECK_EQ_INT(1 * 1000 + 0, (int)run_lets(k, 1, 0)); /* linear block 1: row 1 of panel 0, column 0 */
    CHECK_EQ_INT(0 * 1000 + 1, (int)run_lets(k, 4, 0)); /* linear block 4: column 1 */
    CHECK_EQ_INT(4 * 1000 + 7, (int)run_lets(k, 0, 4)); /* panel 1 starts at the last column (serpentine) */
    ts_buf_free(&d.msg);
    test_staged_store();
    ts_arena_free(&A);
    return test_done();
}
