/*
 * test_warp_lanes.c — T.Scale("warp") copies and fills dealt to the 32
 * lanes over the flattened tile (op/comm.c deal_lanes), compiled for CUDA
 * (sm_80) through every pass and run thread by thread in the thread-level
 * interpreter, whose strict model runs each statement per thread: a lane
 * that skips an element, two lanes on one element, or a barrier some
 * threads never reach shows up here without a GPU.
 *
 * The tiles cover a multiple of 32 elements (8 x 12) and not (8 x 33: a
 * partial last round of 8 lanes; 8 x 5: 40 elements; 4 x 7: 28, a partial
 * round alone), with rows past the tensor's end, at the top of the warp's
 * body and inside a serial loop and a branch that differs between the
 * warps (tests/run/warp_lanes.py; tests/run/warp_lanes.sh runs the same on
 * the C target against one-thread references).  Also checked: where the
 * count is not a multiple of 32, the copy is dealt flattened (a condition
 * `lane < count % 32` in the lowered IR), not by columns as before.
 */
#include "interp_test.h"
#include "ir/walk.h"

/* Multiples of 1/8 in [-64, 64). */
static double frand(void) { return floor(it_frand() * 512) / 8; }

typedef struct Case {
    const char *entry; /* "lanes" or "lanes_loops" */
    int rows, cols, TM; /* the tensors' shape, each warp's rows */
} Case;

/* `tid % 32 < r` (r = the partial round's lanes) somewhere in the lowered IR. */
typedef struct Want {
    int64_t rem; /* lanes of the partial round */
    bool seen;   /* found */
} Want;

static bool partial_guard(const IrExpr *e, void *ctx) {
    Want *w = ctx;
    int64_t c, m;
    if (e->kind == IR_E_BIN && e->bin.op == IR_LT && ir_is_const_int(e->bin.b, &c) && c == w->rem &&
        e->bin.a->kind == IR_E_BIN && e->bin.a->bin.op == IR_FLOORMOD && ir_is_const_int(e->bin.a->bin.b, &m) &&
        m == 32)
        w->seen = true;
    return false;
}

static bool run_case(const Case *c) {
    ItCase t;
    if (!it_open(&t, "tests/run/warp_lanes.py")) return false;
    TsCaps cu;
    it_caps_sm80(&cu);
    char rows[16], cols[16], tm[16];
    snprintf(rows, sizeof rows, "%d", c->rows);
    snprintf(cols, sizeof cols, "%d", c->cols);
    snprintf(tm, sizeof tm, "%d", c->TM);
    TsDefine defs[3] = {{"rows", rows}, {"cols", cols}, {"TM", tm}};
    bool loops = !strcmp(c->entry, "lanes_loops");
    int W = 4, n = c->rows * c->cols;
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n),
           *f = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) {
        x[i] = frand();
        y[i] = f[i] = NAN;
    }
    Want want = {(int64_t)c->TM * c->cols % 32, false};
    char label[128];
    snprintf(label, sizeof label, "%s %dx%d", c->entry, c->TM, c->cols);
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, c->entry, defs, 3, false, TS_TARGET_CUDA, &cu, label);
    if (k && want.rem) {
        ir_stmt_any_expr(k->body, partial_guard, &want);
        if (!want.seen) fprintf(stderr, "%s: no partial round `lane < %lld`\n", label, (long long)want.rem);
        CHECK(want.seen);
    }
    bool ok = k && it_run_thread(&t.a, &t.d, k, (double *[]){x, y, loops ? NULL : f}, 3, label);
    int bad = 0;
    for (int i = 0; ok && i < c->rows; i++)
        for (int j = 0; j < c->cols; j++) {
            double gy = y[i * c->cols + j], wy = x[i * c->cols + j];
            double gf = f[i * c->cols + j], wf = (i / c->TM) % W + 1;
            if (!(gy == wy) && bad++ < 3)
                fprintf(stderr, "%s %dx%d: Y[%d, %d] = %g, want %g\n", c->entry, c->TM, c->cols, i, j, gy, wy);
            if (!loops && !(gf == wf) && bad++ < 3)
                fprintf(stderr, "%s %dx%d: F[%d, %d] = %g, want %g\n", c->entry, c->TM, c->cols, i, j, gf, wf);
        }
    free(x);
    free(y);
    free(f);
    it_close(&t);
    return ok && !bad;
}

int main(void) {
    it_rng = 0x9e3779b97f4a7c15ull;
    static const Case cases[] = {
        {"lanes", 70, 12, 8}, {"lanes", 70, 33, 8},       {"lanes", 70, 5, 8},        {"lanes", 30, 7, 4},
        {"lanes_loops", 90, 25, 4}, {"lanes_loops", 90, 7, 4}, {"lanes_loops", 90, 24, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) CHECK(run_case(&cases[i]));
    return test_done();
}
