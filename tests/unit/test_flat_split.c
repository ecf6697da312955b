/*
 * test_flat_split.c — insert_sync's flat offsets of split indices (session 10)
 * and T.dp4a, thread by thread.
 *
 * tests/run/kernels/extern_prims.py's flat_split stores, per thread in a
 * uniform loop, to a shared tile at [jdx // K, jdx % K] and reads another at
 * [idx // K, idx % K] (TileLang's dequantization macros split flat indices
 * so); insert_sync compares such accesses by their flat offsets and places
 * no barrier inside the loop.  Here the kernel, compiled for CUDA, runs in
 * the strict thread-level interpreter (a race is an error) on random
 * integers and must give C[jdx] = 3 A[idx] + 1 exactly, computed here; with
 * its barriers removed it must fail (the copy out reads rows other threads
 * wrote), so the check has teeth.  dp4a_dot runs the same way against dot
 * products computed here, on bytes of either sign.
 */
#include "interp_test.h"
#include "ir/walk.h"

static IrStmt *no_barrier(IrMutator *m, IrStmt *s) {
    (void)m;
    return s->kind == IR_S_BARRIER ? NULL : s;
}

/* Compile entry for CUDA (sm_80), run it strictly on bufs; the result (true: ran). */
static bool run(const char *entry, const char *const *defs_text, double **bufs, int nb, bool drop_barriers) {
    ItCase t;
    if (!it_open(&t, "tests/run/kernels/extern_prims.py")) return false;
    TsCaps caps;
    it_caps_sm80(&caps);
    TsDefine defs[8];
    int nd = it_defines(&t.a, defs_text, defs, 8);
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, entry, defs, nd, true, TS_TARGET_CUDA, &caps, entry);
    bool ok = k != NULL;
    if (ok && drop_barriers) {
        IrMutator m = {.arena = &t.a, .post_stmt = no_barrier};
        k->body = ir_mutate_stmt(&m, k->body);
    }
    if (ok) ok = it_run_thread(&t.a, &t.d, k, bufs, nb, entry);
    it_close(&t);
    return ok;
}

static void test_flat_split(int n, int kk, int threads) {
    int64_t total = (int64_t)n * kk;
    double *a = malloc(sizeof *a * (size_t)total), *c = malloc(sizeof *c * (size_t)total),
           *want = malloc(sizeof *want * (size_t)total);
    for (int64_t e = 0; e < total; e++) a[e] = (double)(int64_t)(it_frand() * 100000);
    for (int64_t i = 0; i < total / threads / 4; i++)
        for (int64_t tt = 0; tt < threads; tt++)
            for (int64_t v = 0; v < 4; v++)
                want[i * threads * 4 + v * threads + tt] = 3 * a[i * threads * 4 + tt * 4 + v] + 1;
    char dn[32], dk[32], dt[32];
    snprintf(dn, sizeof dn, "N=%d", n);
    snprintf(dk, sizeof dk, "K=%d", kk);
    snprintf(dt, sizeof dt, "threads=%d", threads);
    const char *defs[] = {dn, dk, dt, NULL};
    for (int drop = 0; drop < 2; drop++) {
        for (int64_t e = 0; e < total; e++) c[e] = NAN;
        double *bufs[2] = {a, c};
        bool ok = run("flat_split", defs, bufs, 2, drop);
        int bad = 0;
        for (int64_t e = 0; e < total && ok; e++) bad += !(c[e] == want[e]);
        if (!drop) {
            CHECK(ok);
            CHECK_EQ_INT(0, bad);
        } else {
            CHECK(!ok || bad > 0); /* without barriers: a race reported (or wrong values) */
        }
    }
    free(a);
    free(c);
    free(want);
}

static void test_dp4a(int m, int n, int kk) {
    double *a = malloc(sizeof(double) * (size_t)(m * kk)), *b = malloc(sizeof(double) * (size_t)(n * kk)),
           *c = malloc(sizeof(double) * (size_t)(m * n));
    for (int i = 0; i < m * kk; i++) a[i] = (double)(int)(it_frand() * 128);
    for (int i = 0; i < n * kk; i++) b[i] = (double)(int)(it_frand() * 128);
    for (int i = 0; i < m * n; i++) c[i] = NAN;
    char dm[32], dn[32], dk[32];
    snprintf(dm, sizeof dm, "M=%d", m);
    snprintf(dn, sizeof dn, "N=%d", n);
    snprintf(dk, sizeof dk, "K=%d", kk);
    const char *defs[] = {dm, dn, dk, NULL};
    double *bufs[3] = {a, b, c};
    CHECK(run("dp4a_dot", defs, bufs, 3, false));
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int q = 0; q < kk; q++) s += a[i * kk + q] * b[j * kk + q];
            bad += !(c[i * n + j] == s);
        }
    CHECK_EQ_INT(0, bad);
    free(a);
    free(b);
    free(c);
}

int main(void) {
    it_rng = 0x5eed10ull;
    test_flat_split(64, 128, 64);
    test_flat_split(32, 256, 128);
    test_dp4a(4, 32, 64);
    test_dp4a(3, 96, 128);
    return test_done();
}
