/*
 * test_warp.c — the warp primitives (T.shfl_*, votes, T.warp_reduce_*,
 * T.get_lane_idx) as the CUDA target lowers them, run in the thread-level
 * interpreter (every lane of a warp meets at the statement, CUDA's rules
 * for source lanes and widths, the reductions as the printed butterfly)
 * on random data against a naive C reference written here from CUDA's
 * documented rules; and the C target's form (pass warp_c) checked to have
 * no warp call left.  The C target's results are checked end to end by
 * tests/run/warp_prims.sh, the CUDA source by golden cuda_warp_prims.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/walk.h"
#include "op/comm.h"
#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;

enum { NT = 128, NO = 8, NQ = 7 };

static const char *SRC =
    "import tilelang.language as T\n"
    "def warps(NT):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((NT,), 'float32'), I: T.Tensor((NT,), 'int32'),\n"
    "             O: T.Tensor((NT, 8), 'float32'), Q: T.Tensor((NT, 7), 'int32')):\n"
    "        with T.Kernel(1, threads=NT) as (bx):\n"
    "            tx = T.get_thread_binding(0)\n"
    "            x = X[tx]\n"
    "            i = I[tx]\n"
    "            lane = T.get_lane_idx()\n"
    "            O[tx, 0] = T.shfl_xor(x, 5)\n"
    "            O[tx, 1] = T.shfl_down(x, 3)\n"
    "            O[tx, 2] = T.shfl_up(x, 7, width=16)\n"
    "            O[tx, 3] = T.shfl_sync(x, (lane * 7 + 3) % 32)\n"
    "            O[tx, 4] = T.shfl_xor(x, 9, 8)\n"
    "            O[tx, 5] = T.warp_reduce_sum(x)\n"
    "            O[tx, 6] = T.warp_reduce_max(x)\n"
    "            acc = T.alloc_var('float32')\n"
    "            acc = x\n"
    "            for k in T.serial(5):\n"
    "                acc = acc + T.shfl_xor(acc, 16 >> k)\n"
    "            O[tx, 7] = acc\n"
    "            Q[tx, 0] = T.warp_reduce_sum(i)\n"
    "            Q[tx, 1] = T.warp_reduce_bitor(i)\n"
    "            Q[tx, 2] = T.warp_reduce_min(i)\n"
    "            Q[tx, 3] = T.any_sync(0xFFFFFFFF, x > 0.9)\n"
    "            Q[tx, 4] = T.all_sync(0xFFFFFFFF, i > -9)\n"
    "            Q[tx, 5] = lane\n"
    "            Q[tx, 6] = T.cast(T.ballot_sync(0xFFFF, x > 0), 'int32')\n"
    "    return main\n";

static TsCaps cuda_caps(void) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_90");
    c.sm = 90;
    c.mma = c.vec = c.pipeline = c.layout = c.swizzle = c.pad = true;
    return c;
}

/* splitmix64 */
static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The butterfly CUDA's warp reduction does (offsets 16 .. 1, own op
 * other), in float, for lane l of the warp holding v[0..32). */
static float bfly(const float *v, int l, int op) {
    float a[32], b[32];
    memcpy(a, v, sizeof a);
    for (int o = 16; o > 0; o >>= 1) {
        for (int j = 0; j < 32; j++) b[j] = op == 0 ? a[j] + a[j ^ o] : (a[j ^ o] > a[j] ? a[j ^ o] : a[j]);
        memcpy(a, b, sizeof a);
    }
    return a[l];
}

static void reference(const float *X, const int *I, float (*O)[NO], int (*Q)[NQ]) {
    for (int w = 0; w < NT / 32; w++) {
        const float *x = X + 32 * w;
        const int *in = I + 32 * w;
        int sum = 0, or = 0, mn = in[0], any = 0, all = 1, bal = 0;
        for (int j = 0; j < 32; j++) {
            sum += in[j];
            or |= in[j];
            mn = in[j] < mn ? in[j] : mn;
            any |= x[j] > 0.9f;
            all &= in[j] > -9;
            if (j < 16 && x[j] > 0) bal |= 1 << j;
        }
        for (int l = 0; l < 32; l++) {
            int g = 32 * w + l, s9 = l ^ 9;
            O[g][0] = x[l ^ 5];
            O[g][1] = l + 3 < 32 ? x[l + 3] : x[l];
            O[g][2] = l % 16 >= 7 ? x[l - 7] : x[l];
            O[g][3] = x[(l * 7 + 3) % 32];
            O[g][4] = s9 < l / 8 * 8 + 8 ? x[s9] : x[l];
            O[g][5] = bfly(x, l, 0);
            O[g][6] = bfly(x, l, 1);
            O[g][7] = bfly(x, l, 0);
            Q[g][0] = sum;
            Q[g][1] = or;
            Q[g][2] = mn;
            Q[g][3] = any;
            Q[g][4] = all;
            Q[g][5] = l;
            Q[g][6] = bal;
        }
    }
}

static void test_cuda_ir(uint64_t seed) {
    TsCaps c = cuda_caps();
    TsBuf err = {0};
    IrKernel *k = pt_compile(&A, SRC, "warps", "NT=128", TS_TARGET_CUDA, &c, NULL, NULL, NULL, &err);
    if (!k) printf("%s\n", ts_buf_str(&err));
    CHECK(k != NULL);
    if (!k) return;
    CHECK(ts_warp_used(k->body)); /* kept for the printer */
    static double x[NT], in[NT], o[NT * NO], q[NT * NQ];
    static float X[NT], O[NT][NO];
    static int I[NT], Q[NT][NQ];
    for (int t = 0; t < NT; t++) {
        X[t] = (float)((double)(rnd(&seed) >> 11) / 9007199254740992.0 * 2 - 1);
        I[t] = (int)(rnd(&seed) % 17) - 8;
        x[t] = X[t];
        in[t] = I[t];
    }
    for (int i = 0; i < NT * NO; i++) o[i] = NAN; /* poisoned */
    for (int i = 0; i < NT * NQ; i++) q[i] = -777777;
    double *data[] = {x, in, o, q};
    bool ok = pt_run(&A, k, data, 0, &err);
    if (!ok) printf("%s\n", ts_buf_str(&err));
    CHECK(ok);
    reference(X, I, O, Q);
    int bad = 0;
    for (int t = 0; t < NT; t++) {
        for (int j = 0; j < NO; j++)
            if (o[t * NO + j] != (double)O[t][j] && bad++ < 5)
                printf("O[%d, %d] = %.9g, want %.9g\n", t, j, o[t * NO + j], (double)O[t][j]);
        for (int j = 0; j < NQ; j++)
            if (q[t * NQ + j] != (double)Q[t][j] && bad++ < 5)
                printf("Q[%d, %d] = %.0f, want %d\n", t, j, q[t * NQ + j], Q[t][j]);
    }
    CHECK_EQ_INT(0, bad);
    ts_buf_free(&err);
}

/* The C target's form: warp_c leaves no warp call (the lanes' values go
 * through per-thread words), a block that is not whole warps is refused. */
static void test_c_form(void) {
    TsBuf err = {0};
    TsCaps none;
    memset(&none, 0, sizeof none);
    IrKernel *k = pt_compile(&A, SRC, "warps", "NT=128", TS_TARGET_C, &none, NULL, NULL, NULL, &err);
    if (!k) printf("%s\n", ts_buf_str(&err));
    CHECK(k != NULL);
    if (k) CHECK(!ts_warp_used(k->body));
    ts_buf_free(&err);
    k = pt_compile(&A, SRC, "warps", "NT=48", TS_TARGET_C, &none, NULL, NULL, NULL, &err);
    CHECK(k == NULL);
    CHECK_CONTAINS(ts_buf_str(&err), "need whole warps of 32 threads; the block has 48");
    ts_buf_free(&err);
}

int main(void) {
    const char *seed_env = getenv("TS_TEST_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu (TS_TEST_SEED replays it)\n", (unsigned long long)seed);
    test_cuda_ir(seed);
    test_cuda_ir(seed + 1);
    test_c_form();
    ts_arena_free(&A);
    return test_done();
}
