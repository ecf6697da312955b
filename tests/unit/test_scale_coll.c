/*
 * test_scale_coll.c — collectives between the units of one block
 * (T.allreduce / T.allgather / T.reduce_scatter / T.all_to_all inside
 * T.Scale("warp") / ("warpgroup"), examples/scale_coll.py) compiled for
 * CUDA and run thread by thread in the thread-level interpreter.
 *
 * The interpreter runs every thread of the block in the strict model, so
 * this is where a missing or misplaced barrier between the units (a unit
 * reading a scratch slot another has not written yet, or overwriting one
 * still read), an element no thread of a unit owns, or units that do not
 * all reach the block barrier (a deadlock) show up without a GPU.  The
 * outputs are checked against a naive computation here, in C, from the
 * same random inputs (multiples of 1/8, so sums are exact); each unit's
 * input is its own slice, so units hold different data.  The C target is
 * checked against naive kernels in tests/run/scale_coll.sh.
 */
#include "interp_test.h"

/* Multiples of 1/8 in [-8, 8). */
static double frand8(void) { return floor(it_frand() * 64) / 8; }

typedef enum Coll { ALLREDUCE, REDUCE_SCATTER, ALLGATHER, ALL_TO_ALL } Coll;

typedef struct Case {
    Coll coll;
    const char *level; /* "warp" or "warpgroup" */
    int threads;       /* of the block */
    int op;            /* 0 sum, 1 max, 2 min */
    const char *scope; /* allreduce: "shared" or "fragment" */
} Case;

static const char *const entry_of[] = {"allreduce", "reduce_scatter", "allgather", "all_to_all"};
static const char *const op_of[] = {"sum", "max", "min"};

static double fold(int op, double a, double b) { return op == 0 ? a + b : op == 1 ? fmax(a, b) : fmin(a, b); }

/* Compiles the case for CUDA (sm_80) up to the last pass and runs it. */
static bool run_case(const Case *c) {
    int n = c->threads / (!strcmp(c->level, "warp") ? 32 : 128);
    /* the example's default sizes: allreduce R=8 C=16; reduce_scatter, allgather R=4 C=16; all_to_all chunk=2 */
    int C = 16, R = c->coll == ALLREDUCE ? 8 : 4;
    int rin = c->coll == REDUCE_SCATTER ? n * R : c->coll == ALL_TO_ALL ? n * 2 : R;
    int rout = c->coll == ALLGATHER ? n * R : c->coll == ALL_TO_ALL ? n * 2 : R;
    ItCase t;
    if (!it_open(&t, "examples/scale_coll.py")) return false;
    TsCaps cu;
    it_caps_sm80(&cu);
    char thr[16];
    snprintf(thr, sizeof thr, "%d", c->threads);
    TsDefine defs[4] = {{"level", c->level}, {"threads", thr}, {"op", op_of[c->op]}, {"scope", c->scope}};
    int nd = c->coll == ALLREDUCE ? 4 : c->coll == REDUCE_SCATTER ? 3 : 2;
    double *x = TS_NEWN(&t.a, double, (size_t)n * rin * C), *y = TS_NEWN(&t.a, double, (size_t)n * rout * C);
    for (int i = 0; i < n * rin * C; i++) x[i] = frand8();
    for (int i = 0; i < n * rout * C; i++) y[i] = NAN;
    char label[128];
    snprintf(label, sizeof label, "%s %s threads=%d", entry_of[c->coll], c->level, c->threads);
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, entry_of[c->coll], defs, nd, false, TS_TARGET_CUDA, &cu, label);
    bool ok = k && it_run_thread(&t.a, &t.d, k, (double *[]){x, y}, 2, label);
    int bad = 0;
    for (int g = 0; ok && g < n; g++)
        for (int r = 0; r < rout; r++)
            for (int j = 0; j < C; j++) {
                double want = 0;
                if (c->coll == ALLREDUCE || c->coll == REDUCE_SCATTER) {
                    int row = c->coll == ALLREDUCE ? r : g * R + r;
                    want = x[(size_t)row * C + j];
                    for (int u = 1; u < n; u++) want = fold(c->op, want, x[((size_t)u * rin + row) * C + j]);
                } else if (c->coll == ALLGATHER) {
                    want = x[((size_t)(r / R) * rin + r % R) * C + j];
                } else {
                    want = x[((size_t)(r / 2) * rin + g * 2 + r % 2) * C + j];
                }
                double got = y[((size_t)g * rout + r) * C + j];
                if (!(got == want) && bad++ < 3)
                    fprintf(stderr, "%s %s threads=%d unit %d [%d, %d]: got %g, want %g\n", entry_of[c->coll], c->level,
                            c->threads, g, r, j, got, want);
            }
    it_close(&t);
    return ok && !bad;
}

int main(void) {
    it_rng = 0x2545f4914f6cdd1dull;
    static const Case cases[] = {
        {ALLREDUCE, "warp", 128, 0, "shared"},      {ALLREDUCE, "warp", 256, 1, "fragment"},
        {ALLREDUCE, "warpgroup", 256, 2, "shared"}, {ALLREDUCE, "warpgroup", 512, 0, "fragment"},
        {REDUCE_SCATTER, "warp", 128, 1, ""},       {REDUCE_SCATTER, "warpgroup", 256, 0, ""},
        {ALLGATHER, "warp", 256, 0, ""},            {ALLGATHER, "warpgroup", 256, 0, ""},
        {ALL_TO_ALL, "warp", 128, 0, ""},           {ALL_TO_ALL, "warpgroup", 512, 0, ""},
    };
    size_t nc = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < nc; i++) CHECK(run_case(&cases[i]));
    return test_done();
}
