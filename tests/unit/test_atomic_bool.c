/*
 * test_atomic_bool.c — an atomic add on a bool buffer is refused by the
 * pass pipeline (verify_lowered), not by the CUDA printer: compiling
 * tests/golden/err_atomic_bool.py's kernel through the CUDA target's passes
 * alone (no code generation) must fail with the statement's
 * file:line:col and the message golden err_atomic_bool pins.  Before
 * session 9 the passes accepted it and only the printer refused it.
 */
#include "interp_test.h"

int main(void) {
    ItCase t;
    CHECK(it_open(&t, "tests/golden/err_atomic_bool.py"));
    TsCaps cu;
    it_caps_sm80(&cu);
    fprintf(stderr, "(an expected error follows)\n");
    IrKernel *k = it_compile(&t.a, &t.d, &t.src, "k", NULL, 0, false, TS_TARGET_CUDA, &cu, "atomic on bool");
    CHECK(k == NULL);
    CHECK_CONTAINS(ts_buf_str(&t.d.msg), "tests/golden/err_atomic_bool.py:15:19: error: atomic add on a bool buffer ('B')");
    it_close(&t);
    return test_done();
}
