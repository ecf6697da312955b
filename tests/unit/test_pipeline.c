/*
 * test_pipeline.c — the CUDA software pipeline (pipeline_planning,
 * inject_pipeline) and the thread-level copy lowering
 * (src/target/cuda/lower_copy_cuda.c), without a GPU.
 *
 * Each kernel is compiled from TileLang source twice: for the CUDA target
 * (every CUDA pass, as the CUDA printer will get it) and for the C target.
 * The CUDA IR runs in the thread-level interpreter (every thread of every
 * block, cp.async landing only at its wait, shared-memory races and
 * missing barriers reported), the C IR in the block-level interpreter, on
 * the same random inputs (outputs poisoned with NaN first), and every
 * output element is compared.  The cases cover num_stages 1 to 4, trip
 * counts known at compile time and at run time, below the number of
 * stages included (a trip count of 1 with 4 stages), partial tiles in M,
 * N and K, the vector path's run-time fallback (a K the 16-byte vectors do
 * not divide), order=/stage= annotations (also per group= of statements,
 * 1 to 4 stages), FlashAttention (causal, so
 * the trip count depends on the block), and the switches that turn vector
 * copies (synchronous copy loops fill the multi-buffered tiles) or
 * pipelines off.
 *
 * The schedule is also checked for its shape (prologue commits, the wait
 * count, the barrier after it, the multi-buffered shapes) and by
 * mutation: the same kernel with its steady-state wait one group too weak,
 * or without the barrier after it, must fail in the interpreter; a test
 * that cannot fail proves nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/interp_thread.h"
#include "ir/tileop.h"
#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double frand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

#define PRE "import tilelang\nimport tilelang.language as T\n\n"

/* GEMM with a pipelined K loop; K is a run-time shape when dyn_k is set. */
static const char *SRC_GEMM = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def mm(M, N, K, bm, bn, bk, ns, threads=128, dtype=\"float16\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):\n"
    "            As = T.alloc_shared((bm, bk), dtype)\n"
    "            Bs = T.alloc_shared((bk, bn), dtype)\n"
    "            Cl = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=ns):\n"
    "                T.copy(A[by * bm, k * bk], As)\n"
    "                T.copy(B[k * bk, bx * bn], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * bm, bx * bn])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def mmdyn(M, N, bm, bn, bk, ns, threads=128, dtype=\"float16\"):\n"
    "    K = T.dynamic(\"K\")\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):\n"
    "            As = T.alloc_shared((bm, bk), dtype)\n"
    "            Bs = T.alloc_shared((bk, bn), dtype)\n"
    "            Cl = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=ns):\n"
    "                T.copy(A[by * bm, k * bk], As)\n"
    "                T.copy(B[k * bk, bx * bn], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * bm, bx * bn])\n"
    "    return main\n"
    "\n"
    /* a row sum whose consumer is a plain T.Parallel loop; the annotation
     * runs the consumer of iteration k before the copy of iteration k + 1 */
    "@tilelang.jit(out_idx=[-1])\n"
    "def rsum(M, N, bm, bn, ns):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((M,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, bm), threads=64) as bx:\n"
    "            Xs = T.alloc_shared((bm, bn), \"float32\")\n"
    "            acc = T.alloc_shared((bm,), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=ns, order=[1, 0], stage=[0, 1]):\n"
    "                T.copy(X[bx * bm, k * bn], Xs)\n"
    "                for i in T.Parallel(bm):\n"
    "                    for j in T.serial(bn):\n"
    "                        acc[i] += Xs[i, j] * (k + 1)\n"
    "            T.copy(acc, Y[bx * bm])\n"
    "    return main\n"
    "\n"
    /* TileLang's warp-specialized (TMA, Hopper) annotations: -1 entries and
     * per-group lists; the default plan runs instead */
    "@tilelang.jit(out_idx=[-1])\n"
    "def mmws(M, N, K, bm, bn, bk, ns):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            As = T.alloc_shared((bm, bk), \"float16\")\n"
    "            Bs = T.alloc_shared((bk, bn), \"float16\")\n"
    "            Cl = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=ns, order=[-1, 0], stage=[-1, 1],\n"
    "                                 group=[[0, 1], [2]]):\n"
    "                T.copy(A[by * bm, k * bk], As)\n"
    "                T.copy(B[k * bk, bx * bn], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * bm, bx * bn])\n"
    "    return main\n"
    "\n"
    /* a T.copy under a T.Parallel loop (one row per iteration): per-thread
     * code, where the thread-level copy and its barriers do not apply */
    "@tilelang.jit(out_idx=[-1])\n"
    "def rowcp(M, N):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=64) as bx:\n"
    "            S = T.alloc_shared((M, N), \"float32\")\n"
    "            for i in T.Parallel(M):\n"
    "                T.copy(X[i, 0:N], S[i, 0:N])\n"
    "            T.copy(S, Y)\n"
    "    return main\n"
    "\n"
    /* a pipelined loop that starts at 1, run twice by an outer loop: the
     * second prologue refills slots the first pass's last steps read */
    "@tilelang.jit(out_idx=[-1])\n"
    "def nest(M, N, bm, bn, ns):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((2, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), threads=64) as bx:\n"
    "            Xs = T.alloc_shared((bm, bn), \"float32\")\n"
    "            acc = T.alloc_shared((bn,), \"float32\")\n"
    "            for rep in T.serial(2):\n"
    "                T.clear(acc)\n"
    "                for k in T.Pipelined(1, T.ceildiv(M, bm), num_stages=ns):\n"
    "                    T.copy(X[k * bm, bx * bn], Xs)\n"
    "                    for j in T.Parallel(bn):\n"
    "                        for i in T.serial(bm):\n"
    "                            acc[j] += Xs[i, j] * (rep + 1)\n"
    "                T.copy(acc, Y[rep, bx * bn])\n"
    "    return main\n";

/* TileLang's order=/stage= per statement and the same schedule given per
 * group (group=): a stage depth sd (0..3: 1 to 4 stages) for the gemm,
 * the copies in stage 0; mmord swaps the copies' order through groups. */
static const char *SRC_GROUP = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def mmg(M, N, K, bm, bn, bk, sd, how):\n"
    "    order, stage, group = [0, 1, 2], [0, 0, sd], None\n"
    "    if how == 1:\n"
    "        order, stage, group = [0, 1], [0, sd], [[0, 1], [2]]\n"
    "    if how == 2:\n"
    "        order, stage, group = [1, 0, 2], [0, 0, sd], [[0], [1], [2]]\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            As = T.alloc_shared((bm, bk), \"float16\")\n"
    "            Bs = T.alloc_shared((bk, bn), \"float16\")\n"
    "            Cl = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=sd + 1, order=order, stage=stage,\n"
    "                                 group=group):\n"
    "                T.copy(A[by * bm, k * bk], As)\n"
    "                T.copy(B[k * bk, bx * bn], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * bm, bx * bn])\n"
    "    return main\n";

/* ---- compiling ------------------------------------------------------------------- */

/* Elaborate entry of src with the "-D" values in defs (space separated)
 * and run the passes for target t; NULL (message printed) on failure. */
static IrKernel *compile(const char *src, const char *entry, const char *defs, TsTarget t, const TsCaps *caps,
                         const char *dump_after, TsBuf *dump) {
    TsBuf err = {0};
    IrKernel *k = pt_compile(&A, src, entry, defs, t, caps, NULL, dump_after, dump, &err);
    if (!k) fprintf(stderr, "compile %s (%s): %s\n", entry, defs, ts_buf_str(&err));
    ts_buf_free(&err);
    return k;
}

static bool use_layout = true; /* fragments in registers (layout_inference) */
static bool use_vec = true;    /* vector and cp.async copies (TILESCALE_CUDA_VEC) */
static bool use_pipe = true;   /* software pipelines (TILESCALE_CUDA_PIPELINE) */
static int use_prefetch = TS_PREFETCH_DEFAULT; /* split gemms across the barrier (TILESCALE_CUDA_PREFETCH) */

static TsCaps cuda_caps(void) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_80");
    c.sm = 80;
    c.mma = c.pad = c.swizzle = true;
    c.vec = c.vec_cast = use_vec;
    c.pipeline = use_pipe;
    c.layout = use_layout;
    c.mma_prefetch = use_prefetch;
    return c;
}

/* ---- running ---------------------------------------------------------------------- */

typedef struct Data {
    int n;             /* parameters */
    double *buf[8];    /* storage of tensor parameter i (NULL for scalars) */
    int64_t size[8];   /* elements */
} Data;

static int64_t eval_size(IrKernel *k, const IrBuffer *b, const int64_t *shape_vals) {
    TsDiag d = {0};
    IrInterp *in = ir_interp_new(&A, &d, k);
    for (int i = 0; i < k->shape_vars.n; i++) ir_interp_bind_var(in, k->shape_vars.v[i], (double)shape_vals[i]);
    int64_t n = 1;
    for (int i = 0; i < b->ndim; i++) n *= (int64_t)ir_interp_eval(in, b->shape[i]);
    ir_interp_free(in);
    return n;
}

/* Random inputs (multiples of 1/8: exact in float16, products and short
 * sums exact in float32), NaN outputs. */
static Data make_data(IrKernel *k, const int64_t *shape_vals) {
    Data dt;
    memset(&dt, 0, sizeof dt);
    dt.n = k->params.n;
    for (int p = 0; p < k->params.n && p < 8; p++) {
        const IrBuffer *b = k->params.v[p].buf;
        if (!b) continue;
        dt.size[p] = eval_size(k, b, shape_vals);
        dt.buf[p] = TS_NEWN(&A, double, dt.size[p] > 0 ? dt.size[p] : 1);
        for (int64_t i = 0; i < dt.size[p]; i++)
            dt.buf[p][i] = k->params.v[p].is_output ? NAN : floor(frand() * 8) / 8;
    }
    return dt;
}

static Data clone(const Data *s) {
    Data d = *s;
    for (int p = 0; p < s->n; p++) {
        if (!s->buf[p]) continue;
        d.buf[p] = TS_NEWN(&A, double, s->size[p] > 0 ? s->size[p] : 1);
        memcpy(d.buf[p], s->buf[p], sizeof(double) * (size_t)s->size[p]);
    }
    return d;
}

/* Run k on the thread-level interpreter (CUDA IR) or the block-level one;
 * 0 and the message in *err on failure. */
static int run(IrKernel *k, Data *dt, const int64_t *shape_vals, int thread_level, TsBuf *err) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    /* the interpreters, freed on the error path too (planted bugs fail on purpose) */
    IrTInterp *volatile x = NULL;
    IrInterp *volatile in = NULL;
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        ir_tinterp_free(x);
        if (in) ir_interp_free(in);
        ts_buf_puts(err, ts_buf_str(&d.msg));
        ts_buf_free(&d.msg);
        return 0;
    }
    if (thread_level) {
        x = ir_tinterp_new(&A, &d, k, IR_TINTERP_STRICT);
        for (int p = 0; p < k->params.n; p++)
            if (dt->buf[p]) ir_tinterp_bind_buffer(x, k->params.v[p].buf, dt->buf[p]);
        for (int i = 0; i < k->shape_vars.n; i++) ir_tinterp_bind_var(x, k->shape_vars.v[i], (double)shape_vals[i]);
        ir_tinterp_run_grid(x);
        ir_tinterp_free(x);
    } else {
        in = ir_interp_new(&A, &d, k);
        for (int p = 0; p < k->params.n; p++)
            if (dt->buf[p]) ir_interp_bind_buffer(in, k->params.v[p].buf, dt->buf[p]);
        for (int i = 0; i < k->shape_vars.n; i++) ir_interp_bind_var(in, k->shape_vars.v[i], (double)shape_vals[i]);
        ir_interp_run_grid(in);
        ir_interp_free(in);
    }
    ts_try_end(&d, saved);
    return 1;
}

static int mismatches(const Data *got, const Data *want, double tol) {
    int bad = 0;
    for (int p = 0; p < got->n; p++) {
        if (!got->buf[p]) continue;
        for (int64_t i = 0; i < got->size[p]; i++) {
            double g = got->buf[p][i], w = want->buf[p][i];
            /* NaN fails, in both too: outputs start as NaN (issue 9 H) */
            if (isnan(w) || isnan(g) || !(fabs(g - w) <= tol * (1 + fabs(w)))) {
                if (bad < 3) fprintf(stderr, "  param %d element %lld: got %.9g, want %.9g\n", p, (long long)i, g, w);
                bad++;
            }
        }
    }
    return bad;
}

/* Compile entry both ways, run both on the same data, compare.  Returns
 * the CUDA kernel (NULL on failure). */
static IrKernel *check_case(const char *src, const char *entry, const char *defs, const int64_t *shape_vals,
                            double tol) {
    TsCaps cc = cuda_caps(), none;
    memset(&none, 0, sizeof none);
    IrKernel *kc = compile(src, entry, defs, TS_TARGET_CUDA, &cc, NULL, NULL);
    IrKernel *kr = compile(src, entry, defs, TS_TARGET_C, &none, NULL, NULL);
    CHECK(kc && kr);
    if (!kc || !kr) return NULL;
    Data in = make_data(kr, shape_vals), want = clone(&in), got = clone(&in);
    TsBuf err = {0};
    int ok_r = run(kr, &want, shape_vals, 0, &err);
    int ok_c = run(kc, &got, shape_vals, 1, &err);
    if (!ok_r || !ok_c) fprintf(stderr, "%s (%s): %s\n", entry, defs, ts_buf_str(&err));
    CHECK(ok_r && ok_c);
    int bad = ok_r && ok_c ? mismatches(&got, &want, tol) : -1;
    if (bad) fprintf(stderr, "%s (%s): %d mismatches\n", entry, defs, bad);
    CHECK_EQ_INT(0, bad);
    ts_buf_free(&err);
    return kc;
}

/* ---- looking at the schedule -------------------------------------------------------- */

typedef struct Shape {
    int commits_before;  /* async commits before the steady loop (prologue) */
    int wait;            /* the steady loop's wait count (-1: none) */
    int steady_barrier;  /* the steady loop starts with wait + barrier (or barrier) */
    int steady_loops;    /* serial loops holding a wait (steady states) */
    IrStmt *steady;      /* the first of them */
} Shape;

static void scan(IrStmt *s, Shape *sh, int in_loop) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) scan(s->seq.v[i], sh, in_loop);
        return;
    case IR_S_FOR: {
        IrStmt *b = s->for_.body;
        if (s->for_.kind == IR_FOR_SERIAL && b && b->kind == IR_S_SEQ && b->seq.n >= 2 &&
            b->seq.v[0]->kind == IR_S_ASYNC_WAIT) {
            if (!sh->steady) {
                sh->steady = s;
                sh->wait = b->seq.v[0]->async_wait.pending;
                sh->steady_barrier = b->seq.v[1]->kind == IR_S_BARRIER;
            }
            sh->steady_loops++;
            return;
        }
        scan(b, sh, 1);
        return;
    }
    case IR_S_IF:
        scan(s->if_.then, sh, in_loop);
        scan(s->if_.else_, sh, in_loop);
        return;
    case IR_S_ASYNC_COMMIT:
        if (!sh->steady) sh->commits_before++;
        return;
    default: (void)in_loop; return;
    }
}

static Shape shape_of(IrKernel *k) {
    Shape sh;
    memset(&sh, 0, sizeof sh);
    sh.wait = -1;
    scan(k->body, &sh, 0);
    return sh;
}

static const IrBuffer *buffer_named(const IrKernel *k, const char *name) {
    for (int i = 0; i < k->buffers.n; i++)
        if (!strcmp(k->buffers.v[i]->name, name)) return k->buffers.v[i];
    return NULL;
}

/* ---- the tests ------------------------------------------------------------------------ */

/* num_stages 1..4 on trip counts 5 (partial M, N, K tiles), 1 and 3. */
static void test_gemm_stages(void) {
    static const char *shapes[] = {"M=50 N=40 K=72", "M=32 N=32 K=16", "M=40 N=64 K=48"};
    for (int ns = 1; ns <= 4; ns++) {
        for (int si = 0; si < 3; si++) {
            char defs[160];
            snprintf(defs, sizeof defs, "%s bm=32 bn=32 bk=16 ns=%d", shapes[si], ns);
            IrKernel *k = check_case(SRC_GEMM, "mm", defs, NULL, 0);
            if (!k) continue;
            Shape sh = shape_of(k);
            const IrBuffer *as = buffer_named(k, "As");
            CHECK(as != NULL);
            if (ns == 1) {
                /* num_stages=1: the loop is left alone, copies plain */
                CHECK_EQ_INT(0, sh.steady_loops);
                CHECK_EQ_INT(0, sh.commits_before);
                if (as) CHECK_EQ_INT(2, as->ndim);
            } else {
                CHECK_EQ_INT(1, sh.steady_loops);
                CHECK_EQ_INT(ns - 1, sh.commits_before);
                CHECK_EQ_INT(ns - 2, sh.wait);
                CHECK(sh.steady_barrier);
                if (as) {
                    CHECK_EQ_INT(3, as->ndim);
                    int64_t v = 0;
                    if (as->ndim == 3) CHECK(ir_is_const_int(as->shape[0], &v) && v == ns);
                }
            }
        }
    }
}

/* Where the parts of split gemms are: PRE outside loops, BODY and TAIL in
 * a serial loop whose body ends wait(W), barrier, TAIL; with LOAD_FIRST,
 * PRE and REST in the loop. */
typedef struct Split {
    int pre, body, tail;  /* parts found */
    int rest;             /* REST parts (LOAD_FIRST) */
    int pre_in_loop;      /* PRE inside a loop (wrong unless LOAD_FIRST) */
    int tail_last;        /* a loop body ending async_wait, barrier, TAIL */
    int wait;             /* that wait's count */
    int tail_barrier;     /* with a barrier between the two */
    int whole;            /* gemms not split */
} Split;

static void scan_split(const IrStmt *s, Split *sp, int in_loop) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) scan_split(s->seq.v[i], sp, in_loop);
        return;
    case IR_S_FOR: {
        const IrStmt *b = s->for_.body;
        if (b && b->kind == IR_S_SEQ && b->seq.n >= 3) {
            /* (no barrier where nothing ever wrote the stage TAIL reads: one iteration;
             * EARLY_COPY: the next copies and their commit between the barrier and TAIL) */
            int n = b->seq.n, w = n - 2, bar = 0;
            while (w > 0 && b->seq.v[w]->kind != IR_S_ASYNC_WAIT) bar |= b->seq.v[w--]->kind == IR_S_BARRIER;
            const IrStmt *t = b->seq.v[n - 1];
            int body_before = 0;
            for (int i = 0; i < w; i++)
                body_before |= b->seq.v[i]->kind == IR_S_TILEOP && b->seq.v[i]->op->mma_part == TS_MMA_BODY;
            if (t->kind == IR_S_TILEOP && t->op->mma_part == TS_MMA_TAIL && b->seq.v[w]->kind == IR_S_ASYNC_WAIT &&
                body_before) {
                sp->tail_last++;
                sp->wait = b->seq.v[w]->async_wait.pending;
                sp->tail_barrier += bar;
            }
        }
        scan_split(b, sp, 1);
        return;
    }
    case IR_S_IF:
        scan_split(s->if_.then, sp, in_loop);
        scan_split(s->if_.else_, sp, in_loop);
        return;
    case IR_S_TILEOP:
        if (s->op->kind != TS_OP_GEMM) return;
        switch (s->op->mma_part) {
        case TS_MMA_PRE: sp->pre++, sp->pre_in_loop += in_loop; return;
        case TS_MMA_BODY: sp->body++; return;
        case TS_MMA_TAIL: sp->tail++; return;
        case TS_MMA_REST: sp->rest++; return;
        default: sp->whole++; return;
        }
    default: return;
    }
}

/* inject_pipeline's split gemm (bk = 64: four k16 steps): the schedule's
 * shape, and results equal to the C target's on constant and run-time
 * trip counts (1 .. 4 iterations, partial K tiles: the last TAIL loads a
 * stage past the end, never used), 2 to 4 stages; off, or with one or two
 * k16 steps (bk = 16, 32), the gemm stays whole, except that LOAD_FIRST
 * makes it PRE and REST in the loop at two steps. */
static void test_gemm_split(void) {
    static const char *shapes[] = {"M=50 N=40 K=72", "M=32 N=32 K=32", "M=40 N=64 K=200"};
    for (int ns = 2; ns <= 4; ns++)
        for (int bk = 16; bk <= 64; bk *= 2)
            for (int si = 0; si < 3; si++)
                for (int mode = 1; mode <= 13; mode += 6) { /* TS_PREFETCH_* bits: SPLIT, all three, + LOAD_FIRST */
                use_prefetch = mode;
                char defs[160];
                snprintf(defs, sizeof defs, "%s bm=32 bn=32 bk=%d ns=%d", shapes[si], bk, ns);
                IrKernel *k = check_case(SRC_GEMM, "mm", defs, NULL, 0);
                if (!k) continue;
                Split sp;
                memset(&sp, 0, sizeof sp);
                scan_split(k->body, &sp, 0);
                int split = bk >= 64 || (bk == 32 && (mode & TS_PREFETCH_TWO_STEPS));
                int first = !split && bk == 32 && (mode & TS_PREFETCH_LOAD_FIRST);
                CHECK_EQ_INT(split + first, sp.pre);
                CHECK_EQ_INT(split, sp.body);
                CHECK_EQ_INT(split, sp.tail);
                CHECK_EQ_INT(split, sp.tail_last);
                CHECK_EQ_INT(first, sp.rest);
                CHECK_EQ_INT(first, sp.pre_in_loop);
                CHECK_EQ_INT(!split && !first, sp.whole);
                if (split) CHECK_EQ_INT(ns - 2, sp.wait);
                if (split) CHECK_EQ_INT(si != 1, sp.tail_barrier); /* shape 1: one iteration */
                }
    use_prefetch = TS_PREFETCH_DEFAULT;
    static const int64_t ks[] = {16, 40, 112, 200};
    for (int ns = 2; ns <= 4; ns++)
        for (int i = 0; i < 8; i++) {
            use_prefetch = i < 4 ? TS_PREFETCH_SPLIT : TS_PREFETCH_SPLIT | TS_PREFETCH_EARLY_COPY;
            char defs[160];
            snprintf(defs, sizeof defs, "M=40 N=48 bm=32 bn=32 bk=64 ns=%d", ns);
            int64_t sv[1] = {ks[i % 4]};
            IrKernel *k = check_case(SRC_GEMM, "mmdyn", defs, sv, 0);
            if (!k) continue;
            Split sp;
            memset(&sp, 0, sizeof sp);
            scan_split(k->body, &sp, 0);
            CHECK_EQ_INT(1, sp.tail_last);
        }
    use_prefetch = 0;
    IrKernel *k = check_case(SRC_GEMM, "mm", "M=50 N=40 K=72 bm=32 bn=32 bk=64 ns=3", NULL, 0);
    use_prefetch = TS_PREFETCH_DEFAULT;
    if (k) {
        Split sp;
        memset(&sp, 0, sizeof sp);
        scan_split(k->body, &sp, 0);
        CHECK_EQ_INT(0, sp.pre + sp.body + sp.tail);
        CHECK_EQ_INT(1, sp.whole);
    }
}

/* The loop of a split gemm (its body ends with part `last`: TAIL, or REST
 * with LOAD_FIRST), in s. */
static IrStmt *part_loop(IrStmt *s, int last) {
    if (!s) return NULL;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *r = part_loop(s->seq.v[i], last);
            if (r) return r;
        }
        return NULL;
    }
    if (s->kind != IR_S_FOR) return NULL;
    IrStmt *b = s->for_.body;
    if (b && b->kind == IR_S_SEQ && b->seq.n && b->seq.v[b->seq.n - 1]->kind == IR_S_TILEOP &&
        b->seq.v[b->seq.n - 1]->op->mma_part == last)
        return s;
    return part_loop(b, last);
}

static IrStmt *split_loop(IrStmt *s) { return part_loop(s, TS_MMA_TAIL); }

/* LOAD_FIRST (two k16 steps): the loop body is wait, barrier, PRE, the
 * guarded copies, commit, REST; its results equal the C target's with no
 * race, and the thread-level interpreter catches the barrier dropped and
 * the wait one group too weak. */
static void test_load_first(void) {
    TsCaps cc = cuda_caps(), none;
    memset(&none, 0, sizeof none);
    const char *defs = "M=32 N=32 K=160 bm=32 bn=32 bk=32 ns=3";
    use_prefetch = TS_PREFETCH_DEFAULT | TS_PREFETCH_LOAD_FIRST;
    for (int mut = 0; mut < 3; mut++) {
        cc = cuda_caps();
        IrKernel *kc = compile(SRC_GEMM, "mm", defs, TS_TARGET_CUDA, &cc, NULL, NULL);
        IrKernel *kr = compile(SRC_GEMM, "mm", defs, TS_TARGET_C, &none, NULL, NULL);
        CHECK(kc && kr);
        if (!kc || !kr) break;
        IrStmt *l = part_loop(kc->body, TS_MMA_REST);
        CHECK(l != NULL);
        if (!l) break;
        IrStmt *b = l->for_.body;
        int n = b->seq.n;
        CHECK(n >= 5 && b->seq.v[0]->kind == IR_S_ASYNC_WAIT && b->seq.v[1]->kind == IR_S_BARRIER &&
              b->seq.v[2]->kind == IR_S_TILEOP && b->seq.v[2]->op->mma_part == TS_MMA_PRE &&
              b->seq.v[n - 2]->kind == IR_S_ASYNC_COMMIT);
        if (n < 5 || b->seq.v[1]->kind != IR_S_BARRIER) break;
        if (mut == 0) b->seq.v[1] = ir_seq(&A);
        else if (mut == 1) b->seq.v[0]->async_wait.pending++;
        Data in = make_data(kr, NULL), want = clone(&in), got = clone(&in);
        TsBuf err = {0};
        CHECK(run(kr, &want, NULL, 0, &err));
        int ok = run(kc, &got, NULL, 1, &err);
        int caught = !ok || mismatches(&got, &want, 0) > 0;
        if (mut == 2) CHECK(!caught); /* unmutated: equal, no race */
        else {
            if (!caught) fprintf(stderr, "load-first mutation %d was not caught\n", mut);
            CHECK(caught);
        }
        ts_buf_free(&err);
    }
    use_prefetch = TS_PREFETCH_DEFAULT;
}

/* The thread-level interpreter catches a split gemm's schedule broken: the
 * barrier before TAIL dropped, the wait before it one group too weak. */
static void test_split_mutations(void) {
    TsCaps cc = cuda_caps(), none;
    memset(&none, 0, sizeof none);
    const char *defs = "M=32 N=32 K=160 bm=32 bn=32 bk=64 ns=3";
    for (int mut = 0; mut < 4; mut++) {
        use_prefetch = mut < 2 ? TS_PREFETCH_SPLIT : TS_PREFETCH_SPLIT | TS_PREFETCH_EARLY_COPY;
        cc = cuda_caps();
        IrKernel *kc = compile(SRC_GEMM, "mm", defs, TS_TARGET_CUDA, &cc, NULL, NULL);
        IrKernel *kr = compile(SRC_GEMM, "mm", defs, TS_TARGET_C, &none, NULL, NULL);
        CHECK(kc && kr);
        if (!kc || !kr) return;
        IrStmt *l = split_loop(kc->body);
        CHECK(l != NULL);
        if (!l) return;
        IrStmt *b = l->for_.body;
        int n = b->seq.n, w = n - 1, bar = -1;
        while (w > 0 && b->seq.v[w]->kind != IR_S_ASYNC_WAIT) {
            if (b->seq.v[w]->kind == IR_S_BARRIER) bar = w;
            w--;
        }
        CHECK(w > 0 && bar > w);
        if (w <= 0 || bar <= w) return;
        if (mut % 2 == 0) b->seq.v[bar] = ir_seq(&A);
        else b->seq.v[w]->async_wait.pending++;
        Data in = make_data(kr, NULL), want = clone(&in), got = clone(&in);
        TsBuf err = {0};
        CHECK(run(kr, &want, NULL, 0, &err));
        int ok = run(kc, &got, NULL, 1, &err);
        int caught = !ok || mismatches(&got, &want, 0) > 0;
        if (!caught) fprintf(stderr, "split mutation %d was not caught\n", mut);
        else if (getenv("TS_VERBOSE")) fprintf(stderr, "split mutation %d: %s\n", mut, ts_buf_str(&err));
        CHECK(caught);
        ts_buf_free(&err);
    }
    use_prefetch = TS_PREFETCH_DEFAULT;
}

/* Other dtypes: bfloat16 (tensor cores), float32 (the gemm lowered to
 * loops that read the multi-buffered tiles), 4-byte vectors of a 4-wide
 * float32 row. */
static void test_dtypes(void) {
    check_case(SRC_GEMM, "mm", "M=50 N=40 K=72 bm=32 bn=32 bk=16 ns=3 dtype=bfloat16", NULL, 0);
    check_case(SRC_GEMM, "mm", "M=20 N=24 K=40 bm=16 bn=8 bk=8 ns=2 dtype=float32", NULL, 1e-5);
    check_case(SRC_GEMM, "mm", "M=20 N=12 K=12 bm=16 bn=4 bk=4 ns=4 threads=32 dtype=float32", NULL, 1e-5);
}

/* Run-time trip counts: K a shape variable (1, 3, 7 iterations with 16-wide
 * K tiles; K = 36 and 20 are not multiples of the 8-element vector, so the
 * A copy takes its generic fallback at run time). */
static void test_gemm_runtime_trip(void) {
    static const int64_t ks[] = {16, 40, 112, 36, 20};
    for (int ns = 2; ns <= 4; ns++) {
        for (int i = 0; i < 5; i++) {
            char defs[160];
            snprintf(defs, sizeof defs, "M=40 N=48 bm=32 bn=32 bk=16 ns=%d", ns);
            int64_t sv[1] = {ks[i]};
            IrKernel *k = check_case(SRC_GEMM, "mmdyn", defs, sv, 0);
            if (!k) continue;
            Shape sh = shape_of(k);
            CHECK_EQ_INT(ns - 2, sh.wait);
            CHECK_EQ_INT(ns - 1, sh.commits_before);
        }
    }
}

/* order=/stage= annotations: the copy one stage ahead of its consumer,
 * issued after it within a step. */
static void test_annotated(void) {
    for (int ns = 2; ns <= 3; ns++) {
        char defs[96];
        snprintf(defs, sizeof defs, "M=40 N=56 bm=16 bn=8 ns=%d", ns);
        IrKernel *k = check_case(SRC_GEMM, "rsum", defs, NULL, 1e-6);
        if (!k) continue;
        Shape sh = shape_of(k);
        CHECK_EQ_INT(1, sh.steady_loops);
        CHECK_EQ_INT(0, sh.wait); /* stage distance 1: the newest group */
        CHECK_EQ_INT(1, sh.commits_before);
        const IrBuffer *xs = buffer_named(k, "Xs");
        int64_t v = 0;
        CHECK(xs && xs->ndim == 3 && ir_is_const_int(xs->shape[0], &v) && v == 2);
    }
}

static const char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = TS_NEWN(&A, char, n + 1);
    if (fread(p, 1, (size_t)n, f) != (size_t)n) n = 0;
    p[n] = 0;
    fclose(f);
    return p;
}

/* order=/stage= lists per statement, and the same per group (group=),
 * for 1 to 4 stages: the same schedule (same IR), right results, the
 * expected shape; groups reordering the copies reorder the steady state. */
static void test_groups(void) {
    for (int sd = 0; sd <= 3; sd++) {
        IrKernel *kk[3];
        for (int how = 0; how < 3; how++) {
            char defs[128];
            snprintf(defs, sizeof defs, "M=50 N=40 K=72 bm=32 bn=32 bk=16 sd=%d how=%d", sd, how);
            kk[how] = check_case(SRC_GROUP, "mmg", defs, NULL, 0);
            if (!kk[how]) return;
            Shape sh = shape_of(kk[how]);
            const IrBuffer *as = buffer_named(kk[how], "As");
            int64_t v = 0;
            if (sd == 0) { /* one stage: no pipeline */
                CHECK_EQ_INT(0, sh.steady_loops);
                CHECK_EQ_INT(0, sh.commits_before);
                CHECK(as && as->ndim == 2);
            } else {
                CHECK_EQ_INT(1, sh.steady_loops);
                CHECK_EQ_INT(sd, sh.commits_before);
                CHECK_EQ_INT(sd - 1, sh.wait);
                CHECK(as && as->ndim == 3 && ir_is_const_int(as->shape[0], &v) && v == sd + 1);
            }
        }
        TsBuf t0 = {0}, t1 = {0}, t2 = {0};
        ir_print_kernel(&t0, kk[0]);
        ir_print_kernel(&t1, kk[1]);
        ir_print_kernel(&t2, kk[2]);
        CHECK(!strcmp(ts_buf_str(&t0), ts_buf_str(&t1))); /* groups expand to the per-statement lists */
        if (sd > 0) {
            CHECK(strcmp(ts_buf_str(&t0), ts_buf_str(&t2)) != 0);
            /* the steady state issues B's copy before A's */
            const char *st = strstr(ts_buf_str(&t2), "for k in serial");
            const char *a = st ? strstr(st, "(As[(k + ") : NULL, *b = st ? strstr(st, "(Bs[(k + ") : NULL;
            CHECK(a && b && b < a);
        }
        ts_buf_free(&t0);
        ts_buf_free(&t1);
        ts_buf_free(&t2);
    }
    /* a group list that misses a statement */
    TsCaps cc = cuda_caps();
    CHECK(compile(PRE "@tilelang.jit\n"
                      "def f(n):\n"
                      "    @T.prim_func\n"
                      "    def main(X: T.Tensor((n,), \"float32\")):\n"
                      "        with T.Kernel(1, threads=32) as bx:\n"
                      "            for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0], [2]]):\n"
                      "                X[k] = 1.0\n"
                      "    return main\n",
                  "f", "n=8", TS_TARGET_CUDA, &cc, NULL, NULL) == NULL);
}

/* A loop starting at 1 inside an outer loop, trip counts 0 to 4. */
static void test_nested(void) {
    static const char *ms[] = {"M=16", "M=20", "M=40", "M=80"};
    for (int ns = 2; ns <= 3; ns++)
        for (int i = 0; i < 4; i++) {
            char defs[96];
            snprintf(defs, sizeof defs, "%s N=96 bm=16 bn=64 ns=%d", ms[i], ns);
            IrKernel *k = check_case(SRC_GEMM, "nest", defs, NULL, 1e-6);
            if (k) CHECK_EQ_INT(i == 0 ? 0 : 1, shape_of(k).steady_loops); /* M=16: no iteration, no loop */
        }
}

/* Warp-specialization annotations (-1 entries, group=) get the default plan. */
static void test_ws_annotations(void) {
    IrKernel *k = check_case(SRC_GEMM, "mmws", "M=50 N=40 K=72 bm=32 bn=32 bk=16 ns=3", NULL, 0);
    if (!k) return;
    Shape sh = shape_of(k);
    CHECK_EQ_INT(1, sh.steady_loops);
    CHECK_EQ_INT(2, sh.commits_before);
    CHECK_EQ_INT(1, sh.wait);
}

/* A copy in per-thread code stays the generic loops (no barrier there). */
static void test_divergent(void) {
    TsCaps cc = cuda_caps();
    TsBuf dump = {0};
    IrKernel *k = compile(SRC_GEMM, "rowcp", "M=8 N=32", TS_TARGET_CUDA, &cc, "lower_tile_ops", &dump);
    CHECK(k != NULL);
    const char *txt = ts_buf_str(&dump);
    const char *par = strstr(txt, "for i in parallel(8)");
    CHECK(par != NULL);
    /* no vector copy: the one under the loop stays loops (S -> Y is shared to global) */
    CHECK(strstr(txt, "vcopy") == NULL);
    ts_buf_free(&dump);
    check_case(SRC_GEMM, "rowcp", "M=8 N=32", NULL, 0);
}

/* The switches: with vectors off the multi-buffered tiles are filled by
 * plain (synchronous) copy loops, with no commit or wait; with pipelines
 * off the loop stays as written. */
static void test_switches(void) {
    use_vec = false;
    for (int ns = 2; ns <= 4; ns++) {
        char defs[160];
        snprintf(defs, sizeof defs, "M=50 N=40 K=72 bm=32 bn=32 bk=16 ns=%d", ns);
        IrKernel *k = check_case(SRC_GEMM, "mm", defs, NULL, 0);
        if (!k) continue;
        Shape sh = shape_of(k);
        CHECK_EQ_INT(0, sh.commits_before);
        const IrBuffer *as = buffer_named(k, "As");
        CHECK(as && as->ndim == 3);
        int64_t sv[1] = {20};
        snprintf(defs, sizeof defs, "M=40 N=48 bm=32 bn=32 bk=16 ns=%d", ns);
        check_case(SRC_GEMM, "mmdyn", defs, sv, 0);
    }
    use_vec = true;
    use_pipe = false;
    IrKernel *k = check_case(SRC_GEMM, "mm", "M=50 N=40 K=72 bm=32 bn=32 bk=16 ns=3", NULL, 0);
    if (k) {
        Shape sh = shape_of(k);
        CHECK_EQ_INT(0, sh.commits_before);
        const IrBuffer *as = buffer_named(k, "As");
        CHECK(as && as->ndim == 2);
    }
    use_pipe = true;
}

/* ptxas's fast-compile level (IrKernel.ptxas_fast_compile): with
 * TS_PTXAS_FAST_LARGE only for a pipelined loop of at least 128 mma.sync
 * per warp (M*N*K / 2048 over the warps); every pipelined tensor-core loop
 * with TS_PTXAS_FAST_ALL; none with OFF (the default); never without
 * mma.sync. */
static void test_ptxas_fast(void) {
    static const struct {
        const char *entry, *defs; /* SRC_GEMM kernel and its -D values */
        int mmas;                 /* mma.sync per warp in its loop */
    } cases[] = {
        {"mm", "M=128 N=128 K=128 bm=64 bn=64 bk=32 ns=2", 16},
        {"mm", "M=128 N=128 K=256 bm=128 bn=64 bk=64 ns=2", 64},
        {"mm", "M=128 N=128 K=256 bm=128 bn=128 bk=64 ns=2", 128},
        {"mm", "M=128 N=128 K=256 bm=128 bn=128 bk=64 ns=2 threads=256", 64},
        {"mm", "M=128 N=256 K=256 bm=128 bn=256 bk=64 ns=3 threads=256", 128},
        {"rsum", "M=40 N=56 bm=16 bn=8 ns=2", 0},
    };
    for (int c = 0; c < TS_COUNTOF(cases); c++)
        for (int mode = TS_PTXAS_FAST_OFF; mode <= TS_PTXAS_FAST_LARGE; mode++) {
            TsCaps cc = cuda_caps();
            snprintf(cc.arch, sizeof cc.arch, "sm_90");
            cc.sm = 90;
            cc.smem_max = 227 * 1024;
            cc.ptxas_fast = mode;
            IrKernel *k = compile(SRC_GEMM, cases[c].entry, cases[c].defs, TS_TARGET_CUDA, &cc, NULL, NULL);
            CHECK(k != NULL);
            if (!k) continue;
            int want = mode == TS_PTXAS_FAST_ALL ? cases[c].mmas > 0
                       : mode == TS_PTXAS_FAST_LARGE ? cases[c].mmas >= 128 : 0;
            if (k->ptxas_fast_compile != want)
                fprintf(stderr, "ptxas_fast %s (%s) mode %d: %d, want %d\n", cases[c].entry, cases[c].defs, mode,
                        k->ptxas_fast_compile, want);
            CHECK_EQ_INT(want, k->ptxas_fast_compile);
        }
}

/* FlashAttention: K and V tiles pipelined; causal makes the trip count
 * depend on the block. */
static void test_flash_attention(void) {
    const char *src = read_file("examples/flash_attention.py");
    CHECK(src != NULL);
    if (!src) return;
    static const char *defs[] = {
        "batch=1 heads=2 seq_len=80 dim=32 is_causal=True block_M=32 block_N=32 num_stages=2",
        "batch=1 heads=1 seq_len=96 dim=32 is_causal=False block_M=32 block_N=32 num_stages=3",
    };
    for (int i = 0; i < 2; i++) {
        IrKernel *k = check_case(src, "flashattn", defs[i], NULL, 2e-2);
        if (!k) continue;
        Shape sh = shape_of(k);
        CHECK_EQ_INT(1, sh.steady_loops);
        CHECK_EQ_INT(i == 0 ? 0 : 1, sh.wait);
    }
}

/* The interpreter catches a schedule that is one group short or lacks its
 * barrier: the checks above are able to fail. */
static void test_mutations(void) {
    TsCaps cc = cuda_caps(), none;
    memset(&none, 0, sizeof none);
    static const char *const entry[] = {"mm", "rsum", "mm", "rsum"};
    static const char *const defs[] = {"M=32 N=32 K=80 bm=32 bn=32 bk=16 ns=3", "M=40 N=56 bm=16 bn=8 ns=2",
                                       "M=32 N=32 K=80 bm=32 bn=32 bk=16 ns=3", "M=40 N=56 bm=16 bn=8 ns=2"};
    for (int mut = 0; mut < 4; mut++) {
        IrKernel *kc = compile(SRC_GEMM, entry[mut], defs[mut], TS_TARGET_CUDA, &cc, NULL, NULL);
        IrKernel *kr = compile(SRC_GEMM, entry[mut], defs[mut], TS_TARGET_C, &none, NULL, NULL);
        CHECK(kc && kr);
        if (!kc || !kr) return;
        Shape sh = shape_of(kc);
        CHECK(sh.steady != NULL);
        if (!sh.steady) return;
        IrStmt *b = sh.steady->for_.body;
        if (mut < 2) b->seq.v[0]->async_wait.pending++; /* one group too weak */
        else b->seq.v[1] = ir_seq(&A);                  /* the barrier dropped */
        Data in = make_data(kr, NULL), want = clone(&in), got = clone(&in);
        TsBuf err = {0};
        CHECK(run(kr, &want, NULL, 0, &err));
        int ok = run(kc, &got, NULL, 1, &err);
        int caught = !ok || mismatches(&got, &want, 0) > 0;
        if (!caught) fprintf(stderr, "mutation %d was not caught\n", mut);
        else if (getenv("TS_VERBOSE")) fprintf(stderr, "mutation %d: %s\n", mut, ts_buf_str(&err));
        CHECK(caught);
        ts_buf_free(&err);
    }
}

int main(void) {
    ts_arena_init(&A);
    test_gemm_stages();
    use_layout = false; /* the same with fragments in shared memory */
    test_gemm_stages();
    use_layout = true;
    test_gemm_runtime_trip();
    test_gemm_split();
    test_split_mutations();
    test_load_first();
    test_dtypes();
    test_annotated();
    test_groups();
    test_switches();
    test_ptxas_fast();
    test_ws_annotations();
    test_divergent();
    test_nested();
    test_flash_attention();
    test_mutations();
    ts_arena_free(&A);
    return test_done();
}
