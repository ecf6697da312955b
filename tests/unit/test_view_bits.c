/*
 * test_view_bits.c — views of another dtype move stored bits exactly.
 *
 * A view of another dtype (T.view(buf, dtype=)) is rewritten by
 * resolve_views into integer loads and stores of its base's elements
 * (IrExpr load.bits, IrStmt store.bits).  Converting through a float dtype
 * instead would turn every NaN into one canonical NaN and quiet the
 * signalling ones; the interpreters, which hold every element as a double,
 * must keep the pattern too.  Here tests/run/kernels/view_dtype.py's
 * bits_copy (uint16 bits into a bfloat16 tile, its float32 view copied into
 * the float32 view of a float16 tile, out as uint16) runs on hand-picked
 * patterns: signalling and quiet NaNs of float32, bfloat16 and float16 with
 * payloads, infinities, negative zero, subnormals.  The output must equal
 * the input bit for bit (with the kernel's own OR on every eighth column),
 * in the block-level interpreter after the C target's passes and in the
 * thread-level interpreter after the CUDA passes.  The C target itself and
 * the CUDA source are checked by tests/run/view_dtype.sh.
 */
#include <stdlib.h>

#include "elab/elab.h"
#include "front/ast.h"
#include "ir/interp.h"
#include "ir/interp_thread.h"
#include "ir/ir.h"
#include "pass/pass.h"
#include "test.h"

enum { M = 32, N = 64 };

static const uint16_t patterns[] = {
    0x0001, 0x7f80, /* float32 0x7f800001: a signalling NaN, payload 1 */
    0xa5a5, 0xffa5, /* float32 0xffa5a5a5: a quiet negative NaN with payload */
    0x7f81, 0x7fc1, /* bfloat16 signalling / quiet NaNs */
    0x7c01, 0xfe03, /* float16 signalling / quiet NaNs */
    0x0000, 0x8000, /* -0.0 as the high half */
    0x7f80, 0xff80, /* bfloat16 +inf, -inf */
    0x0001, 0x03ff, /* float16 subnormals */
    0x0000, 0x7f80, /* float32 +inf */
};

static IrKernel *compile(TsArena *a, TsDiag *d, const TsSource *src, TsTarget target, const TsCaps *caps) {
    TsDefine defs[2] = {{"M", "32"}, {"N", "64"}};
    AstModule *m = ts_parse_module(a, src);
    IrKernel *k = ts_elaborate(d, a, m, "bits_copy", defs, 2, false);
    for (IrKernel *p = k; p; p = p->next) {
        TsPassCtx pc = {d, a, p, target, caps};
        ts_run_passes(&pc, NULL, NULL, NULL);
    }
    return k;
}

/* Runs bits_copy for target (the C target's passes in the block-level
 * interpreter, the CUDA passes in the thread-level one); the number of
 * output elements whose bits differ from the expected ones, -1 on error. */
static int run(TsTarget target) {
    TsArena a;
    ts_arena_init(&a);
    size_t len = 0;
    const char *file = "tests/run/kernels/view_dtype.py";
    char *text = ts_read_file(file, &len);
    if (!text) return -1;
    TsSource src = {file, text, len};
    TsDiag d = {0};
    TsCaps caps;
    memset(&caps, 0, sizeof caps);
    if (target == TS_TARGET_CUDA) {
        snprintf(caps.arch, sizeof caps.arch, "sm_80");
        caps.sm = 80;
        caps.mma = caps.vec = caps.vec_cast = caps.pad = caps.swizzle = caps.layout = caps.pipeline = true;
    }
    static double x[M * N], y[M * N], z[M * N / 2];
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < M * N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = i % N < (int)(sizeof patterns / sizeof *patterns) ? patterns[i % N] : (double)(r >> 48);
        y[i] = -1;
    }
    for (int i = 0; i < M * N / 2; i++) z[i] = -2;
    int bad = -1;
    jmp_buf jb, *saved;
    if (!ts_try(&d, &jb, &saved)) {
        IrKernel *k = compile(&a, &d, &src, target, &caps);
        double *bind[3] = {x, y, z};
        if (target == TS_TARGET_C) {
            IrInterp *in = ir_interp_new(&a, &d, k);
            for (int i = 0; i < 3; i++) ir_interp_bind_buffer(in, k->params.v[i].buf, bind[i]);
            ir_interp_run_grid(in);
            ir_interp_free(in);
        } else {
            IrTInterp *tx = ir_tinterp_new(&a, &d, k, IR_TINTERP_STRICT);
            for (int i = 0; i < 3; i++) ir_tinterp_bind_buffer(tx, k->params.v[i].buf, bind[i]);
            ir_tinterp_run_grid(tx);
            ir_tinterp_free(tx);
        }
        bad = 0;
        for (int i = 0; i < M * N; i++) {
            uint16_t want = (uint16_t)((uint16_t)x[i] | (i % N % 8 == 1 ? 0x7f80 : 0));
            if (y[i] != (double)want && bad++ < 4)
                fprintf(stderr, "%s: Y[%d] = 0x%04x, want 0x%04x\n", target == TS_TARGET_C ? "c" : "cuda", i,
                        (unsigned)y[i], (unsigned)want);
        }
    } else {
        fprintf(stderr, "%s\n", ts_buf_str(&d.msg));
    }
    ts_try_end(&d, saved);
    ts_buf_free(&d.msg);
    free(text);
    ts_arena_free(&a);
    return bad;
}

int main(void) {
    CHECK_EQ_INT(0, run(TS_TARGET_C));
    CHECK_EQ_INT(0, run(TS_TARGET_CUDA));
    return test_done();
}
