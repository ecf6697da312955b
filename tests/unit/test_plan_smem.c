/*
 * test_plan_smem.c — the plan_smem pass: offsets of shared buffers in the
 * block's dynamic shared memory, reuse of bytes across live ranges, the
 * barrier that reuse needs, and the thread-level interpreter's check of
 * that reuse.
 *
 * Kernels are compiled from TileLang source through every CUDA pass and
 * run in the thread-level interpreter (every thread, shared-memory races
 * reported) on random data with NaN-poisoned outputs, against the answer
 * computed here by plain loops.  The cases:
 *  - two phases, each staging a tile through its own shared buffer and
 *    reading it reversed (other threads' elements): the buffers share
 *    bytes, one barrier is added between the phases (none other), and the
 *    result is right; without that barrier the interpreter reports a race
 *    through the reused bytes (a planted bug must fail);
 *  - the same with the first buffer read again in the second phase: live
 *    ranges overlap, so no sharing and no barrier;
 *  - a pipelined loop filling its tile by cp.async (2 and 3 stages), then
 *    an epilogue staging tile: it takes the pipeline tile's bytes (after
 *    the loop's final wait for all groups);
 *  - row padding of unswizzled tensor-core tiles (swizzles off) recorded in
 *    the IR and counted in the bytes;
 *  - the block's limit: an error naming each buffer with its bytes;
 *  - reuse inside a loop body: two cross-warp row reductions per
 *    iteration (layout inference's transient red_smem scratch) share one
 *    scratch; the barriers plan_smem adds (between the reductions, and at
 *    the end of the body for the next iteration's first reduction) are
 *    each needed: without either the interpreter reports a race through
 *    the reused bytes; the result matches plain loops;
 *  - a user buffer allocated inside a loop keeps its contents across
 *    iterations (TileLang's semantics): it shares bytes with nothing that
 *    the loop touches, and a kernel reading an earlier iteration's values
 *    from it stays right;
 *  - row padding dropped for a block that fits only without it (kept
 *    when it fits with it, and in the error listing when neither fits);
 *  - the policy: by default reuse only for a block that does not fit
 *    without it (a block that fits keeps the very IR it has with reuse
 *    off), TS_SMEM_REUSE_ALWAYS whenever it saves bytes, and the limit
 *    error when even reuse is not enough.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/walk.h"
#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;
static uint64_t rng = 0x2545F4914F6CDD1Dull;

static double frand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return floor((double)(rng >> 11) / 9007199254740992.0 * 64.0 - 32.0) / 8.0;
}

#define PRE "import tilelang\nimport tilelang.language as T\n\n"

/* Two phases; `again` makes the second phase read S1 too. */
static const char *SRC_TWO = PRE
    "@tilelang.jit\n"
    "def two(n, bn, again=0):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((n,), \"float32\"), Y: T.Tensor((n,), \"float32\"),\n"
    "             P: T.Tensor((n,), \"float32\"), Q: T.Tensor((n,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(n, bn), threads=64) as bx:\n"
    "            S1 = T.alloc_shared((bn,), \"float32\")\n"
    "            S2 = T.alloc_shared((bn,), \"float32\")\n"
    "            T.copy(X[bx * bn], S1)\n"
    "            for i in T.Parallel(bn):\n"
    "                P[bx * bn + i] = S1[bn - 1 - i] * 2\n"
    "            T.copy(Y[bx * bn], S2)\n"
    "            if again:\n"
    "                for i in T.Parallel(bn):\n"
    "                    Q[bx * bn + i] = S2[bn - 1 - i] + 1 + S1[i]\n"
    "            else:\n"
    "                for i in T.Parallel(bn):\n"
    "                    Q[bx * bn + i] = S2[bn - 1 - i] + 1\n"
    "    return main\n";

/* A pipelined column sum, then an epilogue staging tile. */
static const char *SRC_PIPE = PRE
    "@tilelang.jit\n"
    "def pipe(M, bm, bn, ns):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, bn), \"float32\"), Y: T.Tensor((bm, bn), \"float32\")):\n"
    "        with T.Kernel(1, threads=64) as bx:\n"
    "            Xs = T.alloc_shared((bm, bn), \"float32\")\n"
    "            Cs = T.alloc_shared((bm, bn), \"float32\")\n"
    "            acc = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.Pipelined(T.ceildiv(M, bm), num_stages=ns):\n"
    "                T.copy(X[k * bm, 0], Xs)\n"
    "                for i, j in T.Parallel(bm, bn):\n"
    "                    acc[i, j] += Xs[bm - 1 - i, j]\n"
    "            T.copy(acc, Cs)\n"
    "            for i, j in T.Parallel(bm, bn):\n"
    "                Y[i, j] = Cs[bm - 1 - i, bn - 1 - j]\n"
    "    return main\n";

/* A tensor-core gemm (its tiles padded when not swizzled). */
static const char *SRC_MM = PRE
    "@tilelang.jit\n"
    "def mm(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Cl = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, Cl, clear_accum=True)\n"
    "            T.copy(Cl, C[0, 0])\n"
    "    return main\n";

/* Two cross-warp row reductions (8 warps side by side on a 64-wide tile)
 * in each iteration of a loop; `load` 1: the operand tile is copied in
 * the loop too. */
static const char *SRC_RED2 = PRE
    "@tilelang.jit\n"
    "def red2(M, N, K, iters, load=1):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((iters * M, K), \"float16\"), B: T.Tensor((N, K), \"float16\"),\n"
    "             O: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=256) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((N, K), \"float16\")\n"
    "            S = T.alloc_fragment((M, N), \"float32\")\n"
    "            C = T.alloc_fragment((M, N), \"float32\")\n"
    "            mx = T.alloc_fragment((M,), \"float32\")\n"
    "            sm = T.alloc_fragment((M,), \"float32\")\n"
    "            T.clear(C)\n"
    "            T.copy(B, Bs)\n"
    "            if not load:\n"
    "                T.copy(A[0, 0], As)\n"
    "            for it in T.serial(iters):\n"
    "                if load:\n"
    "                    T.copy(A[it * M, 0], As)\n"
    "                T.gemm(As, Bs, S, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)\n"
    "                T.reduce_max(S, mx, dim=1)\n"
    "                T.reduce_sum(S, sm, dim=1)\n"
    "                for i, j in T.Parallel(M, N):\n"
    "                    C[i, j] += S[i, j] - mx[i] + sm[i] * (it + 1) * 0.125\n"
    "            T.copy(C, O)\n"
    "    return main\n";

/* A user buffer allocated in a loop, read in every iteration, written in
 * the first only; another one staged per iteration after it. */
static const char *SRC_KEEP = PRE
    "@tilelang.jit\n"
    "def keep(n, bn):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((bn,), \"float32\"), Y: T.Tensor((n,), \"float32\"),\n"
    "             P: T.Tensor((n,), \"float32\"), Q: T.Tensor((n,), \"float32\")):\n"
    "        with T.Kernel(1, threads=64) as bx:\n"
    "            for it in T.serial(n // bn):\n"
    "                S1 = T.alloc_shared((bn,), \"float32\")\n"
    "                S2 = T.alloc_shared((bn,), \"float32\")\n"
    "                if it == 0:\n"
    "                    T.copy(X[0], S1)\n"
    "                for i in T.Parallel(bn):\n"
    "                    P[it * bn + i] = S1[bn - 1 - i] * (it + 1)\n"
    "                T.copy(Y[it * bn], S2)\n"
    "                for i in T.Parallel(bn):\n"
    "                    Q[it * bn + i] = S2[bn - 1 - i] + 1\n"
    "    return main\n";

static TsCaps caps(bool swizzle, long long smem_max) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_80");
    c.sm = 80;
    c.mma = c.pad = c.vec = c.vec_cast = c.pipeline = c.layout = true;
    c.smem_reuse = TS_SMEM_REUSE_ALWAYS;
    c.swizzle = swizzle;
    c.smem_max = smem_max;
    return c;
}

/* Elaborate and run every CUDA pass; NULL and the message in *err on failure. */
static IrKernel *compile(const char *src, const char *entry, const char *defs, const TsCaps *c, TsBuf *err) {
    return pt_compile(&A, src, entry, defs, TS_TARGET_CUDA, c, NULL, NULL, NULL, err);
}

static IrBuffer *buf(const IrKernel *k, const char *name) {
    for (int i = 0; i < k->buffers.n; i++)
        if (!strcmp(k->buffers.v[i]->name, name) && k->buffers.v[i]->smem_bytes) return k->buffers.v[i];
    return NULL;
}

static bool is_barrier(const IrStmt *s, void *ctx) {
    (*(int *)ctx) += s->kind == IR_S_BARRIER;
    return false;
}
static int barriers(const IrKernel *k) {
    int n = 0;
    ir_stmt_any(k->body, is_barrier, &n);
    return n;
}

static double *randv(int64_t n) {
    double *v = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) v[i] = frand();
    return v;
}
static double *nanv(int64_t n) {
    double *v = TS_NEWN(&A, double, n);
    for (int64_t i = 0; i < n; i++) v[i] = NAN;
    return v;
}

/* Remove the top-level barrier right before the first statement touching b. */
static bool drop_barrier_before(IrStmt *seq, const IrBuffer *b) {
    for (int i = 0; i < seq->seq.n; i++) {
        IrStmt *s = seq->seq.v[i];
        if (s->kind == IR_S_SEQ) {
            if (drop_barrier_before(s, b)) return true;
            continue;
        }
        if (!ir_stmt_access_rw(s, b, 0)) continue;
        if (i == 0 || seq->seq.v[i - 1]->kind != IR_S_BARRIER) return false;
        for (int j = i - 1; j + 1 < seq->seq.n; j++) seq->seq.v[j] = seq->seq.v[j + 1];
        seq->seq.n--;
        return true;
    }
    return false;
}

static void test_two_phases(void) {
    enum { N = 256, BN = 128 };
    TsCaps c = caps(true, 0);
    TsBuf err = {0};
    for (int again = 0; again < 2; again++) {
        char defs[64];
        snprintf(defs, sizeof defs, "n=%d bn=%d again=%d", N, BN, again);
        TsCaps nopl = c;
        IrKernel *k = compile(SRC_TWO, "two", defs, &nopl, &err);
        if (!k) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(k != NULL);
        if (!k) return;
        IrBuffer *s1 = buf(k, "S1"), *s2 = buf(k, "S2");
        CHECK(s1 && s2);
        if (!s1 || !s2) return;
        CHECK(k->smem_planned);
        CHECK_EQ_INT(BN * 4, s1->smem_bytes);
        CHECK_EQ_INT(BN * 4, s2->smem_bytes);
        if (!again) { /* apart: one slot, shared */
            CHECK_EQ_INT(s1->smem_offset, s2->smem_offset);
            CHECK_EQ_INT(BN * 4, k->smem_bytes);
        } else { /* S1 still read in phase two: apart */
            CHECK(s2->smem_offset >= s1->smem_offset + s1->smem_bytes || s1->smem_offset >= s2->smem_offset + s2->smem_bytes);
            CHECK_EQ_INT(2 * BN * 4, k->smem_bytes);
        }
        double *X = randv(N), *Y = randv(N), *P = nanv(N), *Q = nanv(N);
        double *data[4] = {X, Y, P, Q};
        bool ok = pt_run(&A, k, data, 0, &err);
        if (!ok) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(ok);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            int b0 = i / BN * BN, r = BN - 1 - (i - b0);
            bad += P[i] != X[b0 + r] * 2;
            bad += Q[i] != Y[b0 + r] + 1 + again * X[i];
        }
        CHECK_EQ_INT(0, bad);
        if (!again) {
            /* the barrier plan_smem added is the one that makes it right */
            ts_buf_free(&err);
            CHECK(drop_barrier_before(k->body, s2));
            double *P2 = nanv(N), *Q2 = nanv(N);
            double *d2[4] = {X, Y, P2, Q2};
            CHECK(!pt_run(&A, k, d2, 0, &err));
            CHECK_CONTAINS(ts_buf_str(&err), "race through reused bytes");
        }
        ts_buf_free(&err);
    }
    /* the barrier count: exactly one more than without reuse (S2 read
     * after its copy and S1 likewise need theirs anyway) */
    IrKernel *k0 = compile(SRC_TWO, "two", "n=256 bn=128 again=0", &c, &err);
    IrKernel *k1 = compile(SRC_TWO, "two", "n=256 bn=128 again=1", &c, &err);
    CHECK(k0 && k1);
    if (k0 && k1) CHECK_EQ_INT(barriers(k1) + 1, barriers(k0));
    ts_buf_free(&err);
}

/* The nth (0: first) buffer named `name` that has bytes in shared memory. */
static IrBuffer *nth_buf(const IrKernel *k, const char *name, int nth) {
    for (int i = 0; i < k->buffers.n; i++)
        if (!strcmp(k->buffers.v[i]->name, name) && k->buffers.v[i]->smem_bytes && nth-- == 0) return k->buffers.v[i];
    return NULL;
}

/* Remove the barrier right before the first statement touching b, looking
 * into sequences and serial loop bodies. */
static bool drop_barrier_before_deep(IrStmt *seq, const IrBuffer *b) {
    for (int i = 0; i < seq->seq.n; i++) {
        IrStmt *s = seq->seq.v[i];
        if (!ir_stmt_access_rw(s, b, 0)) continue;
        if (s->kind == IR_S_SEQ) return drop_barrier_before_deep(s, b);
        if (s->kind == IR_S_FOR && s->for_.kind != IR_FOR_THREAD && s->for_.body->kind == IR_S_SEQ)
            return drop_barrier_before_deep(s->for_.body, b);
        if (i == 0 || seq->seq.v[i - 1]->kind != IR_S_BARRIER) return false;
        for (int j = i - 1; j + 1 < seq->seq.n; j++) seq->seq.v[j] = seq->seq.v[j + 1];
        seq->seq.n--;
        return true;
    }
    return false;
}

/* Remove the barrier that ends the body of the kernel's serial loop. */
static bool drop_loop_end_barrier(IrStmt *body) {
    for (int i = 0; i < body->seq.n; i++) {
        IrStmt *s = body->seq.v[i];
        if (s->kind != IR_S_FOR || s->for_.kind == IR_FOR_THREAD || s->for_.body->kind != IR_S_SEQ) continue;
        IrStmt *lb = s->for_.body;
        if (!lb->seq.n || lb->seq.v[lb->seq.n - 1]->kind != IR_S_BARRIER) return false;
        lb->seq.n--;
        return true;
    }
    return false;
}

static void test_loop_scratch(void) {
    enum { M = 64, N = 64, K = 32, IT = 3 };
    TsBuf err = {0};
    for (int load = 0; load < 2; load++) {
        char defs[96];
        snprintf(defs, sizeof defs, "M=%d N=%d K=%d iters=%d load=%d", M, N, K, IT, load);
        TsCaps c = caps(true, 0), off = c;
        off.smem_reuse = TS_SMEM_REUSE_OFF;
        IrKernel *k0 = compile(SRC_RED2, "red2", defs, &off, &err);
        IrKernel *k = compile(SRC_RED2, "red2", defs, &c, &err);
        if (!k || !k0) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(k && k0);
        if (!k || !k0) return;
        IrBuffer *r0 = nth_buf(k, "red_smem", 0), *r1 = nth_buf(k, "red_smem", 1);
        CHECK(r0 && r1 && r0->transient && r1->transient);
        if (!r0 || !r1) return;
        /* one scratch for both reductions */
        CHECK_EQ_INT(M * 8 * 4, r0->smem_bytes);
        CHECK_EQ_INT(r0->smem_offset, r1->smem_offset);
        if (!load) {
            CHECK_EQ_INT(k0->smem_bytes - M * 8 * 4, k->smem_bytes);
            /* the barriers that takes: between the reductions and, the loop
             * having no barrier of its own after the second one, at the end of
             * the body */
            CHECK_EQ_INT(barriers(k0) + 2, barriers(k));
        } else {
            /* As, copied in whole first in every iteration and used only in the
             * loop, is dead across the back edge (plan_smem's rule for buffers
             * overwritten first in a loop body): it shares bytes with the
             * scratch too, with barriers of its own */
            IrBuffer *as = buf(k, "As");
            CHECK(as && as->smem_offset < r0->smem_offset + r0->smem_bytes &&
                  r0->smem_offset < as->smem_offset + as->smem_bytes);
            CHECK(k->smem_bytes < k0->smem_bytes - M * 8 * 4);
            CHECK(barriers(k) > barriers(k0) + 1);
        }
        double *A_ = randv(IT * M * K), *B_ = randv(N * K), *O = nanv(M * N);
        double *data[3] = {A_, B_, O};
        bool ok = pt_run(&A, k, data, 0, &err);
        if (!ok) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(ok);
        int bad = 0;
        double *want = TS_NEWN(&A, double, M * N), *S = TS_NEWN(&A, double, N);
        for (int i = 0; i < M * N; i++) want[i] = 0;
        for (int it = 0; it < IT; it++)
            for (int i = 0; i < M; i++) {
                const double *a = &A_[((load ? it : 0) * M + i) * K];
                double mx = -INFINITY, sm = 0;
                for (int j = 0; j < N; j++) {
                    S[j] = 0;
                    for (int q = 0; q < K; q++) S[j] += a[q] * B_[j * K + q];
                    mx = S[j] > mx ? S[j] : mx;
                    sm += S[j];
                }
                for (int j = 0; j < N; j++) want[i * N + j] += S[j] - mx + sm * (it + 1) * 0.125;
            }
        for (int i = 0; i < M * N; i++) bad += !(fabs(O[i] - want[i]) <= 1e-4 * (1 + fabs(want[i])));
        CHECK_EQ_INT(0, bad);
        ts_buf_free(&err);
        /* planted bugs: each added barrier is needed */
        for (int plant = 0; plant < (load ? 1 : 2); plant++) {
            IrKernel *kp = compile(SRC_RED2, "red2", defs, &c, &err);
            CHECK(kp != NULL);
            if (!kp) return;
            IrBuffer *p1 = nth_buf(kp, "red_smem", 1);
            CHECK(plant ? drop_loop_end_barrier(kp->body) : drop_barrier_before_deep(kp->body, p1));
            double *O2 = nanv(M * N);
            double *d2[3] = {A_, B_, O2};
            CHECK(!pt_run(&A, kp, d2, 0, &err));
            CHECK_CONTAINS(ts_buf_str(&err), "race through reused bytes");
            ts_buf_free(&err);
        }
    }
}

static void test_user_alloc_in_loop(void) {
    enum { N = 256, BN = 64 };
    TsBuf err = {0};
    TsCaps c = caps(true, 0);
    IrKernel *k = compile(SRC_KEEP, "keep", "n=256 bn=64", &c, &err);
    if (!k) fprintf(stderr, "%s\n", ts_buf_str(&err));
    CHECK(k != NULL);
    if (!k) return;
    IrBuffer *s1 = buf(k, "S1"), *s2 = buf(k, "S2");
    CHECK(s1 && s2);
    if (!s1 || !s2) return;
    CHECK(!s1->transient && !s2->transient);
    CHECK(s2->smem_offset >= s1->smem_offset + s1->smem_bytes || s1->smem_offset >= s2->smem_offset + s2->smem_bytes);
    double *X = randv(BN), *Y = randv(N), *P = nanv(N), *Q = nanv(N);
    double *data[4] = {X, Y, P, Q};
    bool ok = pt_run(&A, k, data, 0, &err);
    if (!ok) fprintf(stderr, "%s\n", ts_buf_str(&err));
    CHECK(ok);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int it = i / BN, r = BN - 1 - i % BN;
        bad += P[i] != X[r] * (it + 1);
        bad += Q[i] != Y[it * BN + r] + 1;
    }
    CHECK_EQ_INT(0, bad);
    ts_buf_free(&err);
}

/* Row padding is for speed: a block that fits only without it loses it. */
static void test_padding_dropped(void) {
    enum { M = 32, N = 64, K = 64 };
    TsBuf err = {0};
    struct {
        long long limit; /* the block's limit */
        int pad;         /* row padding wanted (-1: the limit error) */
    } cases[] = {{0, 8}, {32 * 72 * 2 + 64 * 72 * 2, 8}, {32 * 64 * 2 + 64 * 64 * 2, 0}, {32 * 64 * 2 + 64 * 64 * 2 - 16, -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TsCaps c = caps(false, cases[i].limit);
        c.smem_reuse = TS_SMEM_REUSE_FIT;
        IrKernel *k = compile(SRC_MM, "mm", "M=32 N=64 K=64", &c, &err);
        if (cases[i].pad < 0) {
            CHECK(k == NULL);
            /* the listing shows the padded plan */
            CHECK_CONTAINS(ts_buf_str(&err), "'As' shared float16[32, 64]: 4608 bytes at offset 0");
            ts_buf_free(&err);
            continue;
        }
        if (!k) fprintf(stderr, "case %d: %s\n", (int)i, ts_buf_str(&err));
        CHECK(k != NULL);
        if (!k) return;
        IrBuffer *as = buf(k, "As"), *bs = buf(k, "Bs");
        CHECK(as && bs);
        if (!as || !bs) return;
        CHECK_EQ_INT(cases[i].pad, as->row_pad);
        CHECK_EQ_INT(cases[i].pad, bs->row_pad);
        CHECK_EQ_INT((int64_t)M * (K + cases[i].pad) * 2, as->smem_bytes);
        double *A_ = randv(M * K), *B_ = randv(K * N), *C = nanv(M * N);
        double *data[3] = {A_, B_, C};
        bool ok = pt_run(&A, k, data, 0, &err);
        if (!ok) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(ok);
        int bad = 0;
        for (int r = 0; r < M; r++)
            for (int col = 0; col < N; col++) {
                double want = 0;
                for (int q = 0; q < K; q++) want += A_[r * K + q] * B_[q * N + col];
                bad += C[r * N + col] != want;
            }
        CHECK_EQ_INT(0, bad);
        ts_buf_free(&err);
    }
}

static void test_pipeline_epilogue(void) {
    enum { M = 96, BM = 16, BN = 32 };
    TsCaps c = caps(true, 0);
    TsBuf err = {0};
    for (int ns = 2; ns <= 3; ns++) {
        char defs[64];
        snprintf(defs, sizeof defs, "M=%d bm=%d bn=%d ns=%d", M, BM, BN, ns);
        IrKernel *k = compile(SRC_PIPE, "pipe", defs, &c, &err);
        if (!k) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(k != NULL);
        if (!k) return;
        IrBuffer *xs = buf(k, "Xs"), *cs = buf(k, "Cs");
        CHECK(xs && cs);
        if (!xs || !cs) return;
        CHECK_EQ_INT((int64_t)ns * BM * BN * 4, xs->smem_bytes);
        /* the epilogue tile lies on the pipeline's bytes */
        CHECK(cs->smem_offset < xs->smem_offset + xs->smem_bytes && xs->smem_offset < cs->smem_offset + cs->smem_bytes);
        CHECK(k->smem_bytes < xs->smem_bytes + cs->smem_bytes);
        double *X = randv(M * BN), *Y = nanv(BM * BN);
        double *data[2] = {X, Y};
        bool ok = pt_run(&A, k, data, 0, &err);
        if (!ok) fprintf(stderr, "%s\n", ts_buf_str(&err));
        CHECK(ok);
        int bad = 0;
        for (int i = 0; i < BM; i++)
            for (int j = 0; j < BN; j++) {
                double want = 0;
                for (int t = 0; t < M / BM; t++) want += X[(t * BM + i) * BN + (BN - 1 - j)];
                bad += Y[i * BN + j] != want;
            }
        CHECK_EQ_INT(0, bad);
    }
    ts_buf_free(&err);
}

static void test_padding_and_limit(void) {
    TsBuf err = {0};
    /* swizzles off: the 16-bit operand tiles get 8 more elements per row */
    TsCaps c = caps(false, 0);
    IrKernel *k = compile(SRC_MM, "mm", "M=32 N=64 K=64", &c, &err);
    if (!k) fprintf(stderr, "%s\n", ts_buf_str(&err));
    CHECK(k != NULL);
    if (k) {
        IrBuffer *as = buf(k, "As"), *bs = buf(k, "Bs");
        CHECK(as && bs);
        if (as && bs) {
            CHECK_EQ_INT(8, as->row_pad);
            CHECK_EQ_INT(32 * (64 + 8) * 2, as->smem_bytes);
            CHECK_EQ_INT(8, bs->row_pad);
            TsBuf t = {0};
            ir_print_kernel(&t, k);
            CHECK_CONTAINS(ts_buf_str(&t), "row_pad(8) smem[");
            ts_buf_free(&t);
        }
    }
    /* swizzled: no padding */
    c = caps(true, 0);
    k = compile(SRC_MM, "mm", "M=32 N=64 K=64", &c, &err);
    CHECK(k != NULL);
    if (k && buf(k, "As")) CHECK_EQ_INT(0, buf(k, "As")->row_pad);
    /* over the limit: the error names the buffers */
    c = caps(true, 8192);
    ts_buf_free(&err);
    k = compile(SRC_MM, "mm", "M=32 N=64 K=64", &c, &err);
    CHECK(k == NULL);
    CHECK_CONTAINS(ts_buf_str(&err), "needs 12288 bytes of shared memory per block, more than the 8192 bytes sm_80 allows");
    CHECK_CONTAINS(ts_buf_str(&err), "'As' shared float16[32, 64]: 4096 bytes at offset 0");
    CHECK_CONTAINS(ts_buf_str(&err), "'Bs' shared float16[64, 64]: 8192 bytes at offset 4096");
    ts_buf_free(&err);
}

/* The policy (TsCaps.smem_reuse): by default (FIT) a block that fits keeps
 * the plain layout, identical IR to reuse off, and one that does not fit
 * gets the reusing layout (and runs right); ALWAYS reuses whenever it
 * saves bytes; a block over the limit even with reuse is an error. */
static void test_reuse_policy(void) {
    enum { N = 256, BN = 128 };
    const char *defs = "n=256 bn=128 again=0";
    TsBuf err = {0};
    struct {
        int reuse;          /* the policy */
        long long limit;    /* the block's limit (0: none) */
        int64_t want_bytes; /* the block's bytes (0: the limit error) */
    } cases[] = {
        {TS_SMEM_REUSE_OFF, 0, 2 * BN * 4},
        {TS_SMEM_REUSE_FIT, 0, 2 * BN * 4},        /* fits: plain */
        {TS_SMEM_REUSE_FIT, 2 * BN * 4, 2 * BN * 4}, /* fits exactly: plain */
        {TS_SMEM_REUSE_FIT, 2 * BN * 4 - 16, BN * 4}, /* only fits with reuse */
        {TS_SMEM_REUSE_ALWAYS, 0, BN * 4},
        {TS_SMEM_REUSE_FIT, BN * 4 - 16, 0}, /* not even with reuse */
    };
    TsBuf plain_ir = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TsCaps c = caps(true, cases[i].limit);
        c.smem_reuse = cases[i].reuse;
        IrKernel *k = compile(SRC_TWO, "two", defs, &c, &err);
        if (!cases[i].want_bytes) {
            CHECK(k == NULL);
            CHECK_CONTAINS(ts_buf_str(&err), "bytes of shared memory per block");
            ts_buf_free(&err);
            continue;
        }
        if (!k) fprintf(stderr, "case %d: %s\n", (int)i, ts_buf_str(&err));
        CHECK(k != NULL);
        if (!k) return;
        CHECK_EQ_INT(cases[i].want_bytes, k->smem_bytes);
        TsBuf ir = {0};
        ir_print_kernel(&ir, k);
        if (i == 0) ts_buf_puts(&plain_ir, ts_buf_str(&ir));
        /* a block that fits: the same IR as with reuse off, barriers included */
        if (cases[i].want_bytes == 2 * BN * 4) CHECK_EQ_STR(ts_buf_str(&plain_ir), ts_buf_str(&ir));
        ts_buf_free(&ir);
        double *X = randv(N), *Y = randv(N), *P = nanv(N), *Q = nanv(N);
        double *data[4] = {X, Y, P, Q};
        bool ok = pt_run(&A, k, data, 0, &err);
        if (!ok) fprintf(stderr, "case %d: %s\n", (int)i, ts_buf_str(&err));
        CHECK(ok);
        int bad = 0;
        for (int j = 0; j < N; j++) {
            int b0 = j / BN * BN, r = BN - 1 - (j - b0);
            bad += P[j] != X[b0 + r] * 2;
            bad += Q[j] != Y[b0 + r] + 1;
        }
        CHECK_EQ_INT(0, bad);
        ts_buf_free(&err);
    }
    ts_buf_free(&plain_ir);
}

int main(void) {
    test_reuse_policy();
    test_two_phases();
    test_pipeline_epilogue();
    test_padding_and_limit();
    test_loop_scratch();
    test_user_alloc_in_loop();
    test_padding_dropped();
    ts_arena_free(&A);
    return test_done();
}
