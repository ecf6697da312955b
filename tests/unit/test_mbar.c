/*
 * test_mbar.c — mbarriers and T.ws roles (warp specialization, first piece).
 *
 *   - the mbarrier model (ir/mbar.c) that the C target and the block-level
 *     interpreter follow: arrive counts, phase completion and parity, the
 *     "phase before phase 0" wait that returns at once, and its errors;
 *   - a producer/consumer ring on the C target, on fresh random data,
 *     against a naive reference whose result depends on the order of the
 *     tiles (a running combine), with 1, 2 and 3 slots;
 *   - the run-time error of a wait whose phase only a later role completes
 *     (the C target runs roles in program order);
 *   - the CUDA passes' decisions on that ring (sm_80): the mbarrier inits
 *     in a one-thread range followed by one block barrier, no block barrier
 *     inside the K loop (the roles' exchanges are the program's mbarriers),
 *     the consumer's own conflicts ordered by its named barrier, nests
 *     inside a role spread over its threads only, and a block barrier
 *     between a role's writes and the block's code after the roles;
 *   - the thread-level interpreter runs the ring (roles, mbarrier phases and
 *     waits, the consumer's named barrier) to the recurrence's values.
 */
#include <math.h>

#include "kernel_test.h"
#include "pass_test.h"

#include "ir/mbar.h"
#include "ir/walk.h"

static TsArena A;

/* ---- the model ------------------------------------------------------------------- */

static void test_model(void) {
    IrMbarState m;
    memset(&m, 0, sizeof m);
    CHECK(ir_mbar_step(&m, IR_MBAR_ARRIVE, 0, 1) != NULL); /* before init */
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 0, 0) != NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_INIT, 3, 0) == NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_INIT, 3, 0) != NULL); /* twice */
    /* phase 0 in progress: parity 1 (the phase before) is complete, 0 is not */
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 1, 0) == NULL);
    CHECK(strstr(ir_mbar_step(&m, IR_MBAR_WAIT, 0, 0), "would block") != NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_ARRIVE, 0, 2) == NULL);
    CHECK(m.pending == 1 && m.phase == 0);
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 0, 0) != NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_ARRIVE, 0, 1) == NULL); /* phase 0 completes */
    CHECK(m.pending == 3 && m.phase == 1);
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 0, 0) == NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 1, 0) != NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_EXPECT_TX, 4096, 0) == NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_ARRIVE, 0, 4) != NULL); /* more than the phase expects */
    CHECK(ir_mbar_step(&m, IR_MBAR_ARRIVE, 0, 3) == NULL);
    CHECK(m.phase == 2);
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 1, 0) == NULL);
    CHECK(ir_mbar_step(&m, IR_MBAR_WAIT, 2, 0) != NULL); /* parities are 0 and 1 */
    IrMbarState z;
    memset(&z, 0, sizeof z);
    CHECK(ir_mbar_step(&z, IR_MBAR_INIT, 0, 0) != NULL);
}

/* ---- a producer/consumer ring on the C target -------------------------------------- */

/* Y[r, j] = fold over k of X[k, r * W + j] (y = y * 0.5 + x): the producer role
 * copies row k of X into slot k % S, the consumer folds it into acc. */
static const char *SRC_RING =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def ring(K, R, W, S):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((K, R * W), \"float32\"), Y: T.Tensor((R, W), \"float32\")):\n"
    "        with T.Kernel(R, threads=256) as bx:\n"
    "            buf = T.alloc_shared((S, W), \"float32\")\n"
    "            acc = T.alloc_shared((W,), \"float32\")\n"
    "            rev = T.alloc_shared((W,), \"float32\")\n"
    "            bars = T.alloc_barrier([128] * (2 * S))\n"
    "            with T.ws(1):\n"
    "                T.clear(acc)\n"
    "            for k in range(K):\n"
    "                s = k % S\n"
    "                ph = (k // S) % 2\n"
    "                with T.ws(0):\n"
    "                    T.mbarrier_wait_parity(bars[S + s], ph ^ 1)\n"
    "                    T.copy(X[k, bx * W:(bx + 1) * W], buf[s, :])\n"
    "                    T.mbarrier_arrive(bars[s])\n"
    "                with T.ws(1):\n"
    "                    T.barrier_wait(bars[s], ph)\n"
    "                    for j in T.Parallel(W):\n"
    "                        rev[j] = acc[W - 1 - j]\n"
    "                    for j in T.Parallel(W):\n"
    "                        acc[j] = rev[W - 1 - j] * 0.5 + buf[s, j]\n"
    "                    T.barrier_arrive(bars[S + s])\n"
    "            for j in T.Parallel(W):\n"
    "                Y[bx, j] = acc[j]\n"
    "    return main\n"
    /* per-thread code in roles: each producer thread stores its own element, one
     * consumer thread (the role's first) arrives for the whole role */
    "@tilelang.jit(out_idx=[-1])\n"
    "def roles_tid():\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")):\n"
    "        with T.Kernel(1, threads=256) as bx:\n"
    "            s = T.alloc_shared((128,), \"float32\")\n"
    "            full = T.alloc_barrier(128)\n"
    "            done = T.alloc_barrier(1)\n"
    "            with T.ws(1):\n"
    "                tx = T.get_thread_binding(0)\n"
    "                s[255 - tx] = X[tx - 128] * 2.0\n"
    "                T.barrier_arrive(full)\n"
    "            with T.ws(0):\n"
    "                T.barrier_wait(full, 0)\n"
    "                ty = T.get_thread_binding(0)\n"
    "                Y[ty] = s[ty] + ty\n"
    "                if ty == 0:\n"
    "                    T.barrier_arrive(done)\n"
    "                T.barrier_wait(done, 0)\n"
    "    return main\n"
    /* the consumer's role first: its wait needs the producer's later arrive */
    "@tilelang.jit(out_idx=[-1])\n"
    "def wrong_order(W):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((W,), \"float32\"), Y: T.Tensor((W,), \"float32\")):\n"
    "        with T.Kernel(1, threads=256) as bx:\n"
    "            s = T.alloc_shared((W,), \"float32\")\n"
    "            full = T.alloc_barrier(128)\n"
    "            with T.ws(1):\n"
    "                T.barrier_wait(full, 0)\n"
    "                T.copy(s, Y)\n"
    "            with T.ws(0):\n"
    "                T.copy(X, s)\n"
    "                T.barrier_arrive(full)\n"
    "    return main\n";

static void test_ring_c(void) {
    const int64_t R = 3, W = 40;
    for (int S = 1; S <= 3; S++) {
        const int64_t K = 5 + S;
        char defs[64];
        snprintf(defs, sizeof defs, "K=%lld R=%lld W=%lld S=%d", (long long)K, (long long)R, (long long)W, S);
        TsKernel *k = kt_compile(SRC_RING, "ring", defs);
        TsTensor x = kt_tensor(TS_FLOAT32, 2, K, R * W), y = kt_tensor(TS_FLOAT32, 2, R, W);
        kt_fill(&x, -1, 1);
        kt_poison(&y);
        TsTensor args[2] = {x, y};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(R * W);
            for (int64_t r = 0; r < R; r++)
                for (int64_t j = 0; j < W; j++) {
                    float acc = 0;
                    for (int64_t kk = 0; kk < K; kk++)
                        acc = acc * 0.5f + (float)ts_tensor_get(&x, kk * R * W + r * W + j);
                    w[r * W + j] = acc;
                }
            KT_COMPARE(S == 1 ? "ring of 1 slot" : S == 2 ? "ring of 2 slots" : "ring of 3 slots", &y, w, 1e-6, 1e-6);
            free(w);
        }
        ts_tensor_free(&x);
        ts_tensor_free(&y);
        ts_kernel_destroy(k);
    }
    {
        TsKernel *k = kt_compile(SRC_RING, "roles_tid", "");
        TsTensor x = kt_tensor(TS_FLOAT32, 1, (int64_t)128), y = kt_tensor(TS_FLOAT32, 1, (int64_t)128);
        kt_fill(&x, -1, 1);
        kt_poison(&y);
        TsTensor args[2] = {x, y};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(128);
            for (int i = 0; i < 128; i++) w[i] = (double)((float)(ts_tensor_get(&x, 127 - i) * 2.0f) + (float)i);
            KT_COMPARE("per-thread code in T.ws roles", &y, w, 1e-6, 1e-6);
            free(w);
        }
        ts_tensor_free(&x);
        ts_tensor_free(&y);
        ts_kernel_destroy(k);
    }
    /* the consumer's role first in program order: the roles run as coroutines
     * (IrKernel.thread_coro), so its wait lets the producer run */
    TsKernel *k = kt_compile(SRC_RING, "wrong_order", "W=32");
    TsTensor x = kt_tensor(TS_FLOAT32, 1, (int64_t)32), y = kt_tensor(TS_FLOAT32, 1, (int64_t)32);
    kt_fill(&x, -1, 1);
    kt_poison(&y);
    TsTensor args[2] = {x, y};
    if (kt_launch(k, args, 2)) {
        double *w = kt_zeros(32);
        for (int i = 0; i < 32; i++) w[i] = ts_tensor_get(&x, i);
        KT_COMPARE("a role waiting for a later one", &y, w, 0, 0);
        free(w);
    }
    ts_tensor_free(&x);
    ts_tensor_free(&y);
    ts_kernel_destroy(k);
}

/* ---- the CUDA passes' decisions -------------------------------------------------------- */

typedef struct Shape {
    int block_bars;        /* block barriers (id 0) anywhere */
    int block_bars_loop;   /* ... inside the K loop */
    int named_in_role;     /* named barriers inside a role */
    int init_one_thread;   /* mbarrier inits in a thread range of one thread */
    int ranges_outside;    /* thread ranges inside a role reaching outside its threads */
    int roles;
} Shape;

static void shape_of(const IrStmt *s, Shape *sh, int loop, const IrStmt *role, const IrStmt *range) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) shape_of(s->seq.v[i], sh, loop, role, range);
        return;
    case IR_S_FOR: {
        if (s->for_.kind == IR_FOR_THREAD && role) {
            int64_t lo = -1, n = -1;
            ir_is_const_int(s->for_.min, &lo);
            ir_is_const_int(s->for_.extent, &n);
            if (lo < role->role.lo || lo + n > role->role.lo + role->role.n) sh->ranges_outside++;
        }
        shape_of(s->for_.body, sh, loop || s->for_.kind == IR_FOR_SERIAL, role,
                 s->for_.kind == IR_FOR_THREAD ? s : range);
        return;
    }
    case IR_S_IF:
        shape_of(s->if_.then, sh, loop, role, range);
        shape_of(s->if_.else_, sh, loop, role, range);
        return;
    case IR_S_ROLE:
        sh->roles++;
        shape_of(s->role.body, sh, loop, s, range);
        return;
    case IR_S_BARRIER:
        if (s->barrier.id == 0) {
            sh->block_bars++;
            sh->block_bars_loop += loop;
        } else if (role && s->barrier.count == role->role.n) {
            sh->named_in_role++;
        }
        return;
    case IR_S_MBAR: {
        int64_t n = 0;
        if (s->mbar.op == IR_MBAR_INIT && range && ir_is_const_int(range->for_.extent, &n) && n == 1)
            sh->init_one_thread++;
        return;
    }
    default: return;
    }
}

static TsCaps caps80(void) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_80");
    c.sm = 80;
    c.mma = c.pad = c.vec = c.vec_cast = c.pipeline = c.layout = true;
    c.smem_max = 227 * 1024;
    return c;
}

static void test_cuda_passes(void) {
    TsCaps c = caps80();
    TsBuf err = {0};
    IrKernel *k = pt_compile(&A, SRC_RING, "ring", "K=6 R=2 W=64 S=2", TS_TARGET_CUDA, &c, NULL, NULL, NULL, &err);
    CHECK(k != NULL);
    if (!k) {
        printf("  %s\n", ts_buf_str(&err));
        ts_buf_free(&err);
        return;
    }
    Shape sh;
    memset(&sh, 0, sizeof sh);
    shape_of(k->body, &sh, 0, NULL, NULL);
    CHECK(sh.roles == 3);
    CHECK(sh.init_one_thread == 4);
    CHECK(sh.block_bars == 2);      /* after the inits, before the store of Y */
    CHECK(sh.block_bars_loop == 0); /* the roles' exchanges are the mbarriers' */
    CHECK(sh.named_in_role >= 2);   /* the consumer's reversed reads and writes of acc */
    CHECK(sh.ranges_outside == 0);
    if (sh.block_bars != 2 || sh.block_bars_loop || sh.named_in_role < 2)
        printf("  block %d (in loop %d), named %d\n", sh.block_bars, sh.block_bars_loop, sh.named_in_role);
    /* the thread-level interpreter runs the roles and the mbarrier ring (each
     * thread waits until the phase it waits for completes): Y is the
     * recurrence acc = acc / 2 + X[k] over the K tiles */
    double *data[2] = {calloc(6 * 128, sizeof(double)), calloc(128, sizeof(double))};
    for (int i = 0; i < 6 * 128; i++) data[0][i] = (double)((i * 37 + 11) % 17 - 8) / 8;
    for (int i = 0; i < 128; i++) data[1][i] = NAN;
    TsBuf e2 = {0};
    CHECK(pt_run(&A, k, data, 0, &e2));
    if (ts_buf_str(&e2)[0]) printf("  %s\n", ts_buf_str(&e2));
    int bad = 0;
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 64; j++) {
            double acc = 0;
            for (int kk = 0; kk < 6; kk++) acc = acc * 0.5 + data[0][kk * 128 + r * 64 + j];
            bad += fabs(data[1][r * 64 + j] - acc) > 1e-6 * (1 + fabs(acc)) || isnan(data[1][r * 64 + j]);
        }
    CHECK(bad == 0);
    free(data[0]);
    free(data[1]);
    ts_buf_free(&e2);
    ts_buf_free(&err);
}

int main(void) {
    kt_init("test_mbar");
    test_model();
    test_ring_c();
    test_cuda_passes();
    ts_arena_free(&A);
    kt_finish();
    return test_done();
}
