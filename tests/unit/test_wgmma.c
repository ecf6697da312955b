/*
 * test_wgmma.c — T.gemm on sm_90a's wgmma.mma_async (doc/HOPPER.md), as far
 * as a machine without a GPU can check it.
 *
 * Each case compiles a GEMM for CUDA with the sm_90a capabilities and the
 * wgmma switch on, checks that every gemm became a wgmma one (IR:
 * TS_OP_INST_WGMMA, accumulator layout WGMMA_C, operand tiles with their
 * descriptor layouts and aligned to the swizzle's repeat), and runs it in
 * the strict thread-level interpreter against the C target's kernel
 * (it_against_c: every output element, inputs drawn afresh).  The
 * interpreter computes a kept gemm from the logical operands, so what this
 * checks is everything around the instruction: the accumulator's layout as
 * the epilogue reads it, the swizzled and column-blocked tiles as the
 * copies write and the gemm reads them (the interpreter checks every
 * swizzle is a bijection of its buffer), the pipeline, T.wgmma_gemm's
 * semantics.  The descriptors are checked against hand-worked values in
 * test_layout.c; what the tensor cores make of them only the GPU says
 * (bench/wgmma_gpu_check.sh).  With the switch off, or on plain sm_90,
 * the same kernels keep mma.sync.
 */
#include "interp_test.h"
#include "ir/layout.h"
#include "ir/walk.h"

typedef struct Case {
    const char *file, *entry;
    const char *defs[10];
} Case;

static const Case cases[] = {
    /* one warpgroup, two m64 tiles; A 128B K-major, B 128B MN-major in two column blocks */
    {"examples/gemm.py", "matmul", {"M=128", "N=128", "K=192", "block_M=128", "block_N=128", "block_K=64", "threads=128"}},
    /* the bench configuration: two warpgroups, m64n256, both tiles in column blocks */
    {"examples/gemm.py", "matmul",
     {"M=128", "N=256", "K=256", "block_M=128", "block_N=256", "block_K=128", "num_stages=2", "threads=256"}},
    /* tails; A 64B K-major, B 128B; bfloat16 */
    {"examples/gemm.py", "matmul",
     {"M=200", "N=136", "K=88", "block_M=64", "block_N=64", "block_K=32", "threads=128", "dtype=bfloat16"}},
    /* A 32B, B 64B MN-major */
    {"examples/gemm.py", "matmul", {"M=128", "N=64", "K=48", "block_M=64", "block_N=32", "block_K=16", "threads=128"}},
    /* two warpgroups over N (M = 64 per block) */
    {"examples/gemm.py", "matmul", {"M=64", "N=256", "K=64", "block_M=64", "block_N=256", "block_K=64", "threads=256"}},
    /* K-major B (transpose_B), MN-major A (transpose_A), T.wgmma_gemm + T.wait_wgmma */
    {"tests/run/kernels/wgmma_gemm.py", "gemm_tb", {"M=256", "N=128", "K=192"}},
    {"tests/run/kernels/wgmma_gemm.py", "gemm_ta", {"M=128", "N=128", "K=96"}},
    {"tests/run/kernels/wgmma_gemm.py", "gemm_async", {"M=128", "N=64", "K=128"}},
};

static void caps_sm90a(TsCaps *cu, bool wgmma, bool a) {
    it_caps_sm80(cu);
    snprintf(cu->arch, sizeof cu->arch, a ? "sm_90a" : "sm_90");
    cu->sm = 90;
    cu->smem_max = 232448;
    cu->pipeline = true;
    cu->mma_prefetch = TS_PREFETCH_DEFAULT;
    cu->wgmma = wgmma && a; /* (driver/api.c: only sm_90a) */
}

typedef struct Count {
    int wgmma, mma;  /* gemms of each instruction */
    int bad;         /* wgmma gemms whose IR is not what the printer needs */
} Count;

static bool count_gemm(const IrStmt *s, void *ctx) {
    Count *c = ctx;
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_GEMM) return false;
    const IrTileOp *op = s->op;
    if (op->inst == TS_OP_INST_MMA_SYNC) c->mma++;
    if (op->inst != TS_OP_INST_WGMMA) return false;
    c->wgmma++;
    const IrLayout *l = op->r[2].buf->layout;
    c->bad += !l || l->kind != IR_LAYOUT_WGMMA_C || op->wg_ni < 8 || op->wg_ni > 256 || op->wg_ni % 8;
    for (int i = 0; i < 2; i++) {
        const IrBuffer *b = op->r[i].buf;
        c->bad += b->swizzle.kind != IR_SWIZZLE_XOR || b->smem_align != 8 * op->wg[i].row_bytes ||
                  b->smem_offset % b->smem_align || op->wg[i].mode < 1 || op->wg[i].mode > 3;
    }
    return false;
}

static double input(const void *ctx, const IrBuffer *b, int i, int64_t j, int64_t last) {
    (void)ctx, (void)i, (void)j, (void)last;
    return ts_dtype_is_float(b->dt) ? floor(it_frand() * 16) / 16 : floor(it_frand() * 8);
}

static void run_case(const Case *c) {
    ItCase t;
    if (!it_open(&t, c->file)) {
        CHECK(false);
        return;
    }
    TsDefine defs[10];
    int nd = it_defines(&t.a, c->defs, defs, 10);
    char label[256];
    snprintf(label, sizeof label, "%s:%s %s %s %s", c->file, c->entry, c->defs[0], c->defs[1], c->defs[2]);
    TsCaps cu, cc, off, plain;
    caps_sm90a(&cu, true, true);
    caps_sm90a(&off, false, true);
    caps_sm90a(&plain, true, false);
    memset(&cc, 0, sizeof cc);
    IrKernel *kc = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, false, TS_TARGET_C, &cc, label);
    IrKernel *kg = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, false, TS_TARGET_CUDA, &cu, label);
    CHECK(kc != NULL);
    CHECK(kg != NULL);
    if (kg) {
        Count n = {0, 0, 0};
        (void)ir_stmt_any(kg->body, count_gemm, &n);
        if (!n.wgmma || n.mma || n.bad || kg->layout_note)
            fprintf(stderr, "%s: %d wgmma gemms, %d mma.sync, %d not as printed, layouts: %s\n", label, n.wgmma, n.mma,
                    n.bad, kg->layout_note ? kg->layout_note : "ok");
        CHECK(n.wgmma > 0);
        CHECK_EQ_INT(0, n.mma);
        CHECK_EQ_INT(0, n.bad);
        ItCompare cmp = {label, 1e-4, false, input, c};
        CHECK(it_against_c(&t.a, &t.d, kc, kg, &cmp));
    }
    /* the switch off, and sm_90 without the a: mma.sync */
    for (int w = 0; w < 2; w++) {
        IrKernel *k = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, false, TS_TARGET_CUDA, w ? &plain : &off, label);
        CHECK(k != NULL);
        if (!k) continue;
        Count n = {0, 0, 0};
        (void)ir_stmt_any(k->body, count_gemm, &n);
        CHECK_EQ_INT(0, n.wgmma);
        CHECK(n.mma > 0);
    }
    it_close(&t);
}

/* Kernels whose accumulators have uses WGMMA_C does not serve yet (row
 * reductions, a register A operand: FlashAttention) keep mma.sync with the
 * switch on, their fragments in registers (not a layout inference that gave
 * up, which left FlashAttention over the shared-memory limit). */
static void keeps_mma(const char *file, const char *entry, const char *const *dtext) {
    ItCase t;
    if (!it_open(&t, file)) {
        CHECK(false);
        return;
    }
    TsDefine defs[10];
    int nd = it_defines(&t.a, dtext, defs, 10);
    TsCaps cu;
    caps_sm90a(&cu, true, true);
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, entry, defs, nd, false, TS_TARGET_CUDA, &cu, entry);
    CHECK(k != NULL);
    if (k) {
        Count n = {0, 0, 0};
        (void)ir_stmt_any(k->body, count_gemm, &n);
        CHECK_EQ_INT(0, n.wgmma);
        CHECK(n.mma > 0);
        if (k->layout_note) fprintf(stderr, "%s: layouts gave up: %s\n", entry, k->layout_note);
        CHECK(k->layout_note == NULL);
    }
    it_close(&t);
}

int main(void) {
    it_rng = 0x9e3779b97f4a7c15ull;
    const char *only = getenv("TS_ONLY");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (only && strcmp(only, cases[i].entry)) continue;
        double t0 = ts_now_ms();
        run_case(&cases[i]);
        if (getenv("TS_VERBOSE")) fprintf(stderr, "%s %s: %.0f ms\n", cases[i].file, cases[i].entry, ts_now_ms() - t0);
    }
    if (!only || !strcmp(only, "flashattn")) {
        static const char *const fa[] = {"batch=1", "heads=2", "seq_len=256", "dim=128", "is_causal=0", "block_M=128",
                                         "block_N=128", "num_stages=2", "threads=256", NULL};
        keeps_mma("examples/flash_attention.py", "flashattn", fa);
    }
    return test_done();
}
