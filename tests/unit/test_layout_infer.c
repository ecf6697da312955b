/*
 * test_layout_infer.c — the interface of layout inference (op/op.h) and
 * the worklist that drives it (pass/layout_inference.c).
 *
 *  - the table: the tile ops that offer an infer_layout (gemm, reduce,
 *    cumsum) and those that do not (copy, fill, atomic_add, comm: copies
 *    and fills reach layout inference as T.Parallel nests, the pseudo-op);
 *  - the layout table's rule, called directly: a second, equal layout is no
 *    change; a different one stops inference with a reason that names the
 *    fragment and both uses with their layouts and positions;
 *  - the worklist's order, through the whole CUDA pipeline: an instruction's
 *    layout wins over a loop earlier in the program (strict first), and a
 *    row buffer filled before the tile it reduces takes the tile's row
 *    projection (deeper nests choose first at the free level) instead of a
 *    cyclic layout that conflicted (before the worklist: fragments left in
 *    shared memory);
 *  - two uses that need different layouts: a loop over one warp grid's
 *    accumulator reading (or writing) another's, an accumulator read
 *    transposed, a gemm A operand copied from an accumulator of another
 *    grid: the loop goes through a shared copy of the fragment (X_relayout,
 *    read back into the registers where the loop writes it) and everything
 *    else stays in registers; two gemms fixing different layouts for one
 *    accumulator: inference stops, the IR note names the fragment and both
 *    gemms by position, and the fragments stay in shared memory.
 * Every kernel runs through every CUDA pass in the thread-level interpreter
 * (strict: races, unowned elements) on random data with poisoned outputs,
 * against a reference computed here.
 */
#include <math.h>
#include <string.h>

#include "ir/layout.h"
#include "op/op.h"
#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;

static const char *SRC =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit\n"
    "def rowmax(M, N, bm):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:\n"
    "            x = T.alloc_fragment((bm, N), \"float32\")\n"
    "            m = T.alloc_fragment((bm,), \"float32\")\n"
    "            T.fill(m, -T.infinity(\"float32\"))\n"
    "            T.copy(X[bx * bm, 0], x)\n"
    "            T.reduce_max(x, m, dim=1, clear=False)\n"
    "            for i, j in T.Parallel(bm, N):\n"
    "                x[i, j] = x[i, j] - m[i]\n"
    "            T.copy(x, Y[bx * bm, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def bias(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             Bias: T.Tensor((M, N), \"float32\"), C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Cl = T.alloc_fragment((M, N), \"float32\")\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                Cl[i, j] = Bias[i, j]\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[0, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def roles(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             V: T.Tensor((N, N), \"float16\"), O: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Vs = T.alloc_shared((N, N), \"float16\")\n"
    "            S = T.alloc_fragment((M, N), \"float32\")\n"
    "            P = T.alloc_fragment((M, N), \"float16\")\n"
    "            Ol = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.copy(V[0, 0], Vs)\n"
    "            T.gemm(As, Bs, S, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)\n"
    "            T.copy(S, P)\n"
    "            T.gemm(P, Vs, Ol, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.copy(Ol, O[0, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def roles_same(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             V: T.Tensor((N, N), \"float16\"), O: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Vs = T.alloc_shared((N, N), \"float16\")\n"
    "            S = T.alloc_fragment((M, N), \"float32\")\n"
    "            P = T.alloc_fragment((M, N), \"float16\")\n"
    "            Ol = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.copy(V[0, 0], Vs)\n"
    "            T.gemm(As, Bs, S, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.copy(S, P)\n"
    "            T.gemm(P, Vs, Ol, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.copy(Ol, O[0, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def twogrids(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            C1 = T.alloc_fragment((M, N), \"float32\")\n"
    "            C2 = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, C1, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.gemm(As, Bs, C2, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                C1[i, j] = C1[i, j] - C2[i, j] * 0.5\n"
    "            T.copy(C1, C[0, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def written(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\"), D: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            C1 = T.alloc_fragment((M, N), \"float32\")\n"
    "            C2 = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, C1, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.gemm(As, Bs, C2, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                C1[i, j] = C1[i, j] + 1.0\n"
    "                C2[i, j] = C2[i, j] * 2.0 + C1[i, j]\n"
    "            T.copy(C1, C[0, 0])\n"
    "            T.copy(C2, D[0, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def transposed(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             D: T.Tensor((N, M), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Cl = T.alloc_fragment((M, N), \"float32\")\n"
    "            Dl = T.alloc_fragment((N, M), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, Cl, clear_accum=True)\n"
    "            for i, j in T.Parallel(N, M):\n"
    "                Dl[i, j] = Cl[j, i] + 1.0\n"
    "            T.copy(Dl, D[0, 0])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def twoacc(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Cl = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, Cl, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "            T.gemm(As, Bs, Cl, policy=T.GemmWarpPolicy.FullCol)\n"
    "            T.copy(Cl, C[0, 0])\n"
    "    return main\n";

/* The 1-based line of SRC where `marker` first occurs. */
static int line_of(const char *marker) {
    const char *p = strstr(SRC, marker);
    if (!p) return -1;
    int line = 1;
    for (const char *q = SRC; q < p; q++) line += *q == '\n';
    return line;
}

static IrKernel *compile(const char *entry, const char *defs, TsBuf *err) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_80");
    c.sm = 80;
    c.mma = c.pad = c.vec = c.vec_cast = c.pipeline = c.layout = c.swizzle = true;
    return pt_compile(&A, SRC, entry, defs, TS_TARGET_CUDA, &c, &c, NULL, NULL, err);
}

static uint64_t rng = 12345;

/* Random quarters in [-1, 1]: products and sums of a few hundred are exact
 * in float16 inputs and float32 accumulators. */
static double *rand_tensor(int n) {
    double *v = TS_NEWN(&A, double, n);
    for (int i = 0; i < n; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)((int)(rng >> 40) % 9 - 4) / 4;
    }
    return v;
}

static double *poisoned(int n) {
    double *v = TS_NEWN(&A, double, n);
    for (int i = 0; i < n; i++) v[i] = NAN;
    return v;
}

/* C[M, N] = A[M, K] B[K, N] */
static double *matmul(const double *a, const double *b, int M, int N, int K) {
    double *c = TS_NEWN(&A, double, M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
            c[i * N + j] = s;
        }
    return c;
}

static int mismatches(const double *got, const double *want, int n) {
    int bad = 0;
    for (int i = 0; i < n; i++) bad += !(fabs(got[i] - want[i]) <= 1e-6 * (1 + fabs(want[i])));
    return bad;
}

/* Compile entry, check it ran through the pipeline, run it on data[], and
 * return the kernel (NULL on failure, reported). */
static IrKernel *compile_run(const char *entry, const char *defs, double **data) {
    TsBuf err = {0};
    IrKernel *k = compile(entry, defs, &err);
    if (!k) fprintf(stderr, "%s: %s\n", entry, ts_buf_str(&err));
    CHECK(k != NULL);
    if (k && !pt_run(&A, k, data, 0, &err)) {
        fprintf(stderr, "%s: %s\n", entry, ts_buf_str(&err));
        CHECK(false);
        k = NULL;
    }
    ts_buf_free(&err);
    return k;
}

static void test_table(void) {
    CHECK(ts_op_infer_layout_fn(TS_OP_GEMM) == ts_op_gemm_infer_layout);
    CHECK(ts_op_infer_layout_fn(TS_OP_REDUCE) == ts_op_reduce_infer_layout);
    CHECK(ts_op_infer_layout_fn(TS_OP_CUMSUM) == ts_op_cumsum_infer_layout);
    CHECK(ts_op_infer_layout_fn(TS_OP_COPY) == NULL);
    CHECK(ts_op_infer_layout_fn(TS_OP_FILL) == NULL);
    CHECK(ts_op_infer_layout_fn(TS_OP_ATOMIC_ADD) == NULL);
    CHECK(ts_op_infer_layout_fn(TS_OP_COMM) == NULL);
}

/* ts_layout_set's rule, on a table made by hand. */
static void test_set_rule(void) {
    IrKernel *k = ir_kernel_new(&A, "k");
    TsSource src = {"t.py", "", 0};
    IrExpr *shp[2] = {ir_i32(&A, 64), ir_i32(&A, 64)};
    TsLayoutCtx lx;
    memset(&lx, 0, sizeof lx);
    lx.arena = &A;
    lx.k = k;
    lx.nt = 128;
    lx.frag[0] = ir_buffer(k, "X", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, shp, (TsLoc){&src, 2, 5});
    lx.frag[1] = ir_buffer(k, "Y", TS_FLOAT32, IR_SCOPE_FRAGMENT, 2, shp, (TsLoc){&src, 2, 5});
    lx.nfrag = 2;
    CHECK_EQ_INT(0, ts_layout_frag(&lx, lx.frag[0]));
    CHECK_EQ_INT(1, ts_layout_frag(&lx, lx.frag[1]));
    CHECK_EQ_INT(-1, ts_layout_frag(&lx, NULL));
    IrStmt *u1 = ir_stmt(&A, IR_S_SEQ, (TsLoc){&src, 3, 5}), *u2 = ir_stmt(&A, IR_S_SEQ, (TsLoc){&src, 7, 9});
    int64_t shape[2] = {64, 64};
    lx.cur = u1;
    ts_layout_set(&lx, 0, ir_layout_cyclic(k, 2, shape, 128), "use one");
    CHECK_EQ_INT(1, lx.nnew);
    CHECK_EQ_INT(0, lx.newf[0]);
    CHECK(lx.why == NULL);
    /* an equal layout again (another object): no change, no conflict */
    lx.cur = u2;
    ts_layout_set(&lx, 0, ir_layout_cyclic(k, 2, shape, 128), "use two");
    CHECK_EQ_INT(1, lx.nnew);
    CHECK(lx.why == NULL);
    CHECK_EQ_STR("use one", lx.use[0]);
    /* a different one: stop, naming the fragment and both uses */
    ts_layout_set(&lx, 0, ir_layout_warp_rows(k, 64, 64, 4), "use two");
    CHECK(lx.why != NULL);
    if (lx.why) {
        CHECK_CONTAINS(lx.why, "fragment X needs two layouts: cyclic");
        CHECK_CONTAINS(lx.why, "for use one (at t.py:3:5)");
        CHECK_CONTAINS(lx.why, " and warp_rows");
        CHECK_CONTAINS(lx.why, "for use two (at t.py:7:9)");
    }
    const char *first = lx.why;
    /* the first reason stays; no layout at all is a reason of its own */
    ts_layout_set(&lx, 1, NULL, "use three");
    CHECK(lx.why == first);
    lx.why = NULL;
    ts_layout_set(&lx, 1, NULL, "use three");
    CHECK(lx.why != NULL);
    if (lx.why) CHECK_CONTAINS(lx.why, "no layout fits Y for use three");
}

/* Strict first: the mma accumulator's layout reaches the loop that
 * initializes it earlier in the program. */
static void test_strict_first(void) {
    enum { M = 64, N = 64, K = 32 };
    double *a = rand_tensor(M * K), *b = rand_tensor(K * N), *bias = rand_tensor(M * N), *c = poisoned(M * N);
    double *data[4] = {a, b, bias, c};
    IrKernel *k = compile_run("bias", "M=64 N=64 K=32", data);
    if (!k) return;
    CHECK(k->layout_note == NULL);
    const IrBuffer *cl = pt_buffer(k, "Cl");
    CHECK(cl && cl->layout && cl->layout->kind == IR_LAYOUT_MMA_C);
    double *want = matmul(a, b, M, N, K);
    for (int i = 0; i < M * N; i++) want[i] += bias[i];
    CHECK_EQ_INT(0, mismatches(c, want, M * N));
}

/* Free level, deepest nests first: m (filled before x is reduced into it)
 * takes x's row projection. */
static void test_free_order(void) {
    enum { M = 64, N = 128, BM = 16 };
    double *x = rand_tensor(M * N), *y = poisoned(M * N);
    double *data[2] = {x, y};
    IrKernel *k = compile_run("rowmax", "M=64 N=128 bm=16", data);
    if (!k) return;
    if (k->layout_note) fprintf(stderr, "rowmax: %s\n", k->layout_note);
    CHECK(k->layout_note == NULL);
    const IrBuffer *xb = pt_buffer(k, "x"), *mb = pt_buffer(k, "m");
    CHECK(xb && xb->layout && xb->layout->kind == IR_LAYOUT_WARP_ROWS);
    CHECK(mb && mb->layout && mb->layout->kind == IR_LAYOUT_WARP_ROWS_PROJ);
    double *want = TS_NEWN(&A, double, M * N);
    for (int i = 0; i < M; i++) {
        double mx = -INFINITY;
        for (int j = 0; j < N; j++) mx = fmax(mx, x[i * N + j]);
        for (int j = 0; j < N; j++) want[i * N + j] = x[i * N + j] - mx;
    }
    CHECK_EQ_INT(0, mismatches(y, want, M * N));
}

/* A re-laid-out kernel: no fallback, the shared copy of `relaid` is there,
 * the other fragments are in registers. */
static void check_relayout(const IrKernel *k, const char *relaid, const char *const *regs) {
    if (k->layout_note) fprintf(stderr, "%s: %s\n", k->name, k->layout_note);
    CHECK(k->layout_note == NULL);
    char nm[64];
    snprintf(nm, sizeof nm, "%s_relayout", relaid);
    const IrBuffer *sc = pt_buffer(k, nm);
    CHECK(sc != NULL && sc->scope == IR_SCOPE_SHARED);
    for (int i = 0; regs[i]; i++) {
        const IrBuffer *b = pt_buffer(k, regs[i]);
        CHECK(b && b->layout);
    }
}

static void test_relayout(void) {
    enum { M = 64, N = 64, K = 32 };
    double *a = rand_tensor(M * K), *b = rand_tensor(K * N), *v = rand_tensor(N * N);
    double *ab = matmul(a, b, M, N, K);
    /* S (mma grid 1 x 4) copied to P, the A operand of a gemm on grid 4 x 1 */
    {
        double *o = poisoned(M * N);
        double *data[4] = {a, b, v, o};
        IrKernel *k = compile_run("roles", "M=64 N=64 K=32", data);
        if (k) {
            static const char *const regs[] = {"S", "P", "Ol", NULL};
            check_relayout(k, "S", regs);
            CHECK_EQ_INT(0, mismatches(o, matmul(ab, v, M, N, N), M * N));
        }
    }
    /* the same with continuous random data (S rounded to float16 for P):
     * bit for bit what the kernel without a re-layout (both gemms on 4 x 1)
     * computes, so the copy moves every element exactly */
    {
        double *ac = TS_NEWN(&A, double, M * K), *bc = TS_NEWN(&A, double, K * N), *vc = TS_NEWN(&A, double, N * N);
        double *in[3] = {ac, bc, vc};
        int sz[3] = {M * K, K * N, N * N};
        for (int t = 0; t < 3; t++)
            for (int i = 0; i < sz[t]; i++) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                in[t][i] = (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
            }
        double *o1 = poisoned(M * N), *o2 = poisoned(M * N);
        double *d1[4] = {ac, bc, vc, o1}, *d2[4] = {ac, bc, vc, o2};
        IrKernel *k1 = compile_run("roles", "M=64 N=64 K=32", d1);
        IrKernel *k2 = compile_run("roles_same", "M=64 N=64 K=32", d2);
        CHECK(k2 && !k2->layout_note && !pt_buffer(k2, "S_relayout"));
        if (k1 && k2) {
            int differ = 0;
            for (int i = 0; i < M * N; i++) differ += !(o1[i] == o2[i]);
            CHECK_EQ_INT(0, differ);
        }
    }
    /* a loop over C1 (grid 4 x 1) reading C2 (grid 1 x 4) */
    {
        double *c = poisoned(M * N);
        double *data[3] = {a, b, c};
        IrKernel *k = compile_run("twogrids", "M=64 N=64 K=32", data);
        if (k) {
            static const char *const regs[] = {"C1", "C2", NULL};
            check_relayout(k, "C2", regs);
            double *want = TS_NEWN(&A, double, M * N);
            for (int i = 0; i < M * N; i++) want[i] = ab[i] * 0.5;
            CHECK_EQ_INT(0, mismatches(c, want, M * N));
        }
    }
    /* the loop over C1 writes C2 too: its copy goes back into C2's registers */
    {
        double *c = poisoned(M * N), *d = poisoned(M * N);
        double *data[4] = {a, b, c, d};
        IrKernel *k = compile_run("written", "M=64 N=64 K=32", data);
        if (k) {
            static const char *const regs[] = {"C1", "C2", NULL};
            check_relayout(k, "C2", regs);
            double *w1 = TS_NEWN(&A, double, M * N), *w2 = TS_NEWN(&A, double, M * N);
            for (int i = 0; i < M * N; i++) w1[i] = ab[i] + 1, w2[i] = 3 * ab[i] + 1;
            CHECK_EQ_INT(0, mismatches(c, w1, M * N));
            CHECK_EQ_INT(0, mismatches(d, w2, M * N));
        }
    }
    /* the accumulator read transposed by a loop over another fragment */
    {
        double *d = poisoned(M * N);
        double *data[3] = {a, b, d};
        IrKernel *k = compile_run("transposed", "M=64 N=64 K=32", data);
        if (k) {
            static const char *const regs[] = {"Cl", "Dl", NULL};
            check_relayout(k, "Cl", regs);
            double *want = TS_NEWN(&A, double, M * N);
            for (int i = 0; i < N; i++)
                for (int j = 0; j < M; j++) want[i * M + j] = ab[j * N + i] + 1.0;
            CHECK_EQ_INT(0, mismatches(d, want, M * N));
        }
    }
}

/* Two instructions fix different layouts for one accumulator: inference
 * stops, naming both; the kernel keeps its fragments in shared memory and
 * stays correct. */
static void test_conflict(void) {
    enum { M = 64, N = 64, K = 32 };
    double *a = rand_tensor(M * K), *b = rand_tensor(K * N), *c = poisoned(M * N);
    double *data[3] = {a, b, c};
    IrKernel *k = compile_run("twoacc", "M=64 N=64 K=32", data);
    if (!k) return;
    CHECK(k->layout_note != NULL);
    if (k->layout_note) {
        char at1[64], at2[64];
        snprintf(at1, sizeof at1, "for the accumulator of T.gemm (at test.py:%d:",
                 line_of("T.gemm(As, Bs, Cl, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)"));
        snprintf(at2, sizeof at2, "for the accumulator of T.gemm (at test.py:%d:",
                 line_of("T.gemm(As, Bs, Cl, policy=T.GemmWarpPolicy.FullCol)"));
        CHECK_CONTAINS(k->layout_note, "fragment Cl needs two layouts: mma_c(64 x 64, warps 4 x 1)");
        CHECK_CONTAINS(k->layout_note, at1);
        CHECK_CONTAINS(k->layout_note, "mma_c(64 x 64, warps 1 x 4)");
        CHECK_CONTAINS(k->layout_note, at2);
    }
    const IrBuffer *cl = pt_buffer(k, "Cl");
    CHECK(cl && !cl->layout);
    double *ab = matmul(a, b, M, N, K);
    double *want = TS_NEWN(&A, double, M * N);
    for (int i = 0; i < M * N; i++) want[i] = 2 * ab[i];
    CHECK_EQ_INT(0, mismatches(c, want, M * N));
}

int main(void) {
    test_table();
    test_set_rule();
    test_strict_first();
    test_free_order();
    test_relayout();
    test_conflict();
    ts_arena_free(&A);
    return test_done();
}
