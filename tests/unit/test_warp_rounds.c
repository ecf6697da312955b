/*
 * test_warp_rounds.c — the block barrier between two T.Scale("warp")
 * copies whose lanes take several rounds and a partial last one
 * (tests/run/kernels/warp_rounds.py `rotate`: 8 x 33 tiles, 8 rounds of 32
 * lanes then lanes 0-7; the second copy reads the next warp's slice).
 *
 * insert_sync places exactly one barrier: after the first copy's partial
 * round, before the second copy, because there a lane reads an element a
 * lane of another warp wrote (a conflict sync_conflict finds between
 * warps).  Between a copy's full rounds and its own partial round it places
 * none: before session 9 the analysis of the rounds' loop at its exit kept
 * the accesses of "earlier iterations" (v - 1 - w) whose range reached
 * before the first iteration, pairing a lane's element with the previous
 * warp's, and put a barrier there that nothing needed (uniform_loop now
 * drops them at the exit: the body's own accesses at any iteration cover
 * them exactly).
 *
 * The kernel (CUDA, sm_80, every pass) runs thread by thread in the strict
 * interpreter, which checks every shared access against the last writer's
 * thread and barrier epoch: with the barrier it must give the reference's
 * Y; with the barrier deleted (a planted bug) it must fail.
 */
#include "interp_test.h"
#include "ir/walk.h"

static IrStmt *drop_barrier(IrMutator *m, IrStmt *s) {
    if (s->kind != IR_S_BARRIER) return s;
    (*(int *)m->ctx)++;
    return NULL;
}

/* The top-level statements of the body, nested sequences flattened. */
typedef struct Flat {
    const IrStmt *v[256]; /* the statements */
    int n;                /* how many */
} Flat;

static void flatten(Flat *f, const IrStmt *s) {
    if (!s) return;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->seq.n; i++) flatten(f, s->seq.v[i]);
        return;
    }
    if (f->n < 256) f->v[f->n++] = s;
}

/* A thread range holding `tid % 32 < r` (a partial round of lanes). */
static bool partial_cond(const IrExpr *e, void *ctx) {
    (void)ctx;
    int64_t c, m;
    return e->kind == IR_E_BIN && e->bin.op == IR_LT && ir_is_const_int(e->bin.b, &c) && c > 0 && c < 32 &&
           e->bin.a->kind == IR_E_BIN && e->bin.a->bin.op == IR_FLOORMOD && ir_is_const_int(e->bin.a->bin.b, &m) &&
           m == 32;
}

static bool is_partial_round(const IrStmt *s) {
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD && ir_stmt_any_expr(s, partial_cond, NULL);
}

static bool is_rounds_loop(const IrStmt *s) { return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_SERIAL; }

enum { ROWS = 64, COLS = 33, TM = 8, W = 4, BM = TM * W };

/* Run the kernel (its barriers deleted when plant) on fresh data: did the
 * interpreter accept it and give the reference's Y? */
static bool run(bool plant, int *barriers) {
    ItCase t;
    if (!it_open(&t, "tests/run/kernels/warp_rounds.py")) return false;
    TsCaps cu;
    it_caps_sm80(&cu);
    const char *label = plant ? "rotate without its barrier" : "rotate";
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, "rotate", NULL, 0, false, TS_TARGET_CUDA, &cu, label);
    bool ok = k != NULL;
    if (k && !plant) {
        /* one barrier: after the first copy's partial round, right before the
         * second copy's rounds; none between a copy's rounds and its partial one */
        Flat f = {{0}, 0};
        flatten(&f, k->body);
        int nbar = 0, at = -1, partial[2] = {-1, -1}, np = 0, loops[2] = {-1, -1}, nl = 0;
        for (int i = 0; i < f.n; i++) {
            if (f.v[i]->kind == IR_S_BARRIER) nbar++, at = i;
            if (is_partial_round(f.v[i]) && np < 2) partial[np++] = i;
            if (is_rounds_loop(f.v[i]) && nl < 2) loops[nl++] = i;
        }
        if (nbar != 1) {
            TsBuf b = {0};
            ir_print_kernel(&b, k);
            fprintf(stderr, "%s: %d barriers, want 1:\n%s", label, nbar, ts_buf_str(&b));
            ts_buf_free(&b);
        }
        CHECK_EQ_INT(1, nbar);
        CHECK_EQ_INT(2, np);
        CHECK_EQ_INT(2, nl);
        CHECK(loops[0] < partial[0] && partial[0] < at && at < loops[1] && loops[1] < partial[1]);
    }
    if (k && plant) {
        IrMutator m = {.arena = &t.a, .ctx = barriers, .post_stmt = drop_barrier};
        k->body = ir_mutate_stmt(&m, k->body);
    }
    double *x = malloc(sizeof(double) * ROWS * COLS), *y = malloc(sizeof(double) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++) {
        x[i] = floor(it_frand() * 512) / 8;
        y[i] = NAN;
    }
    if (ok && plant) fprintf(stderr, "(the planted bug: the interpreter's message below is expected)\n");
    if (ok) ok = it_run_thread(&t.a, &t.d, k, (double *[]){x, y}, 2, label);
    int bad = 0;
    for (int i = 0; ok && i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            int blk = i / BM, w = (i % BM) / TM;
            double want = x[(blk * BM + ((w + 1) % W) * TM + i % TM) * COLS + j];
            if (!(y[i * COLS + j] == want) && bad++ < 3 && !plant)
                fprintf(stderr, "%s: Y[%d, %d] = %g, want %g\n", label, i, j, y[i * COLS + j], want);
        }
    free(x);
    free(y);
    it_close(&t);
    return ok && !bad;
}

int main(void) {
    it_rng = 0x2545f4914f6cdd1dull;
    CHECK(run(false, NULL));
    int dropped = 0;
    CHECK(!run(true, &dropped)); /* the planted bug must be caught */
    CHECK_EQ_INT(1, dropped);
    return test_done();
}
