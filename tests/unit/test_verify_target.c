/*
 * test_verify_target.c — what a target lacks is refused by the pass
 * pipeline (verify_lowered, src/pass/verify_target.c), not by a printer:
 * each kernel below goes through the target's passes alone (no code
 * generation) and must fail with its construct's file:line:col and the
 * message; a kernel one step inside the limit passes.  Before session 11
 * the passes accepted these and only the printers refused them (some
 * without a location).  The goldens err_target_*.py and
 * err_extern_f16_value.py pin the whole messages through the CLI.
 */
#include "interp_test.h"

/* Compile entry of file for target (defines "name=value", NULL-ended) through the passes;
 * expect is NULL for success, else a text the error must contain. */
static void one(const char *file, const char *entry, const char *const *defs, TsTarget target, const char *expect) {
    ItCase t;
    CHECK(it_open(&t, file));
    TsDefine dv[4];
    int nd = defs ? it_defines(&t.a, defs, dv, 4) : 0;
    TsCaps cu, cc;
    it_caps_sm80(&cu);
    memset(&cc, 0, sizeof cc);
    if (expect) fprintf(stderr, "(an expected error follows)\n");
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, entry, dv, nd, false, target, target == TS_TARGET_CUDA ? &cu : &cc,
                             entry);
    if (expect) {
        CHECK(k == NULL);
        CHECK_EQ_INT(TS_ERR_UNSUPPORTED, t.d.status);
        CHECK_CONTAINS(ts_buf_str(&t.d.msg), expect);
    } else {
        CHECK(k != NULL);
    }
    it_close(&t);
}

int main(void) {
    const char *f = "tests/run/kernels/target_refusals.py";
    /* CUDA: per-thread buffers of at most 2^20 elements */
    static const char *const big[] = {"n=1048577", NULL}, *const fits[] = {"n=1048576", NULL};
    one(f, "local_big", big, TS_TARGET_CUDA,
        "target_refusals.py:17:19: error: local buffer 'L' has 1048577 elements per thread; the CUDA target allows "
        "at most 1048576");
    one(f, "local_big", fits, TS_TARGET_CUDA, NULL);
    one(f, "local_big", big, TS_TARGET_C, NULL); /* (the C target has no such limit) */
    /* C: the host computes the grid; CUDA's launch evaluates it (and says so there) */
    one(f, "grid_load", NULL, TS_TARGET_C, "target_refusals.py:28:23: error: the grid extent reads a buffer");
    /* C: atomics on bools (CUDA's: golden err_atomic_bool, test_atomic_bool) */
    one(f, "atomic_bool", NULL, TS_TARGET_C, "target_refusals.py:39:19: error: atomic add on a bool buffer ('B')");
    /* C: a grid barrier among coroutine threads, now at the statement (the printer had no location) */
    one(f, "sync_coro", NULL, TS_TARGET_C,
        "target_refusals.py:53:19: error: C target: T.sync_grid (a grid barrier) in a kernel whose threads run as "
        "coroutines");
    /* CUDA: a communication primitive's atomic add on a dtype without an atomic instruction, and a
     * block-wide barrier in per-thread code */
    const char *c = "tests/run/kernels/comm_refusals.py";
    static const char *const i16[] = {"P=2", "what=atom_add_int16", NULL}, *const bar[] = {"P=2", NULL};
    one(c, "kern", i16, TS_TARGET_CUDA,
        "comm_refusals.py:21:19: error: T.atom_add on int16 is not supported on the CUDA target (int32/64, "
        "uint32/64, float32/64)");
    one(c, "barrier_par", bar, TS_TARGET_CUDA,
        "comm_refusals.py:57:19: error: T.barrier_all under a T.Parallel loop or thread-dependent control flow is "
        "not supported on the CUDA target");
    one(c, "barrier_par", bar, TS_TARGET_C, NULL); /* (the C target runs its threads as loops or coroutines) */
    /* CUDA: an external function's float16 value */
    one("tests/golden/err_extern_f16_value.py", "ext_half", NULL, TS_TARGET_CUDA,
        "err_extern_f16_value.py:21:49: error: T.call_extern('twice') returning float16 used as a value");
    return test_done();
}
