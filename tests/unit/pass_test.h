/*
 * pass_test.h — shared helpers of the pass tests that work below the
 * public API (test_annotate_layout.c, test_layout_infer.c,
 * test_plan_smem.c, test_wait_flag.c, test_pipeline.c): compile a TileLang
 * source string through the parser, the elaborator and ts_run_passes()
 * into an IrKernel the test can inspect, and run such a kernel in the
 * thread-level interpreter.
 *
 * Why a header of its own: each of those tests carried its own copy of
 * the same two functions (the ts_try guard, the "-D" splitting, the
 * interpreter's bind-and-run with its cleanup on the error path), and a
 * fix to one copy did not reach the others.  They stay below the public
 * API (unlike kernel_test.h) because the tests look at the IR itself:
 * buffers, barriers, layouts.
 *
 * Errors never escape: both helpers catch the longjmp of ts_fail_at,
 * append the message to *err and report failure, so a test can also
 * assert that a kernel is rejected or that a planted bug is caught.
 * The arena is the caller's (each test has one, file-static).  All
 * functions are `static inline` so a test that uses only some of them
 * gets no unused-function warning.
 */
#ifndef TS_PASS_TEST_H
#define TS_PASS_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "elab/elab.h"
#include "front/ast.h"
#include "ir/interp_thread.h"
#include "pass/pass.h"

/* The most "-D" values one pt_compile() takes; more are ignored. */
#define PT_MAX_DEFINES 16

/* Parse src, elaborate `entry` with the "-D" values in defs (space
 * separated name=value pairs) and run the passes for target t with caps.
 * elab_caps answers the factory's host queries (ts_elaborate_for; NULL:
 * they are errors).  dump_after/dump are ts_run_passes()'s (NULL: none).
 * The kernel, or NULL and the message appended to *err on failure. */
static inline IrKernel *pt_compile(TsArena *a, const char *src, const char *entry, const char *defs, TsTarget t,
                                   const TsCaps *caps, const TsCaps *elab_caps, const char *dump_after,
                                   TsBuf *dump, TsBuf *err) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        ts_buf_puts(err, ts_buf_str(&d.msg));
        ts_buf_free(&d.msg);
        ts_buf_free(&d.warn);
        return NULL;
    }
    TsSource *s = TS_NEW(a, TsSource);
    s->name = "test.py";
    s->text = src;
    s->len = strlen(src);
    TsDefine df[PT_MAX_DEFINES];
    int nd = 0;
    char *copy = ts_strdup(a, defs);
    for (char *tok = strtok(copy, " "); tok && nd < PT_MAX_DEFINES; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        *eq = 0;
        df[nd].name = tok;
        df[nd++].value = eq + 1;
    }
    AstModule *m = ts_parse_module(a, s);
    IrKernel *k = ts_elaborate_for(&d, a, m, entry, df, nd, false, elab_caps);
    TsPassCtx cx = {&d, a, k, t, caps};
    ts_run_passes(&cx, dump_after, dump, NULL);
    ts_try_end(&d, saved);
    ts_buf_free(&d.msg);
    ts_buf_free(&d.warn); /* (warnings: the kernel's layout_note says the same) */
    return k;
}

/* Run k in the thread-level interpreter (strict model: shared-memory races
 * are errors) on data[] (one array per tensor parameter, in order).  With
 * rev_blocks 0 the whole grid runs; with n > 0 blocks n-1 .. 0 of a 1-D
 * grid run in that order (for kernels whose blocks wait on higher ones).
 * false and the message appended to *err on failure. */
static inline bool pt_run(TsArena *a, IrKernel *k, double **data, int rev_blocks, TsBuf *err) {
    TsDiag d = {0};
    jmp_buf jb, *saved;
    IrTInterp *volatile x = NULL; /* freed on the error path too */
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        ir_tinterp_free(x);
        ts_buf_puts(err, ts_buf_str(&d.msg));
        ts_buf_free(&d.msg);
        return false;
    }
    x = ir_tinterp_new(a, &d, k, IR_TINTERP_STRICT);
    for (int p = 0; p < k->params.n; p++) ir_tinterp_bind_buffer(x, k->params.v[p].buf, data[p]);
    if (rev_blocks > 0)
        for (int b = rev_blocks - 1; b >= 0; b--) ir_tinterp_run_block(x, b, 0, 0);
    else ir_tinterp_run_grid(x);
    ir_tinterp_free(x);
    ts_try_end(&d, saved);
    return true;
}

/* The last buffer of k named `name` (the innermost of a name used twice);
 * NULL when there is none. */
static inline const IrBuffer *pt_buffer(const IrKernel *k, const char *name) {
    for (int i = k->buffers.n - 1; i >= 0; i--)
        if (!strcmp(k->buffers.v[i]->name, name)) return k->buffers.v[i];
    return NULL;
}

#endif
