/*
 * interp_test.h — shared steps of the tests that compile a TileLang file
 * for CUDA through every pass and run the result thread by thread in the
 * thread-level interpreter (test_interp_examples.c, test_interp_ws.c,
 * test_scale_coll.c, test_warp_lanes.c).
 *
 * Why a header: each of those tests had grown its own copy of the same
 * steps (read the file, the sm_80 capabilities, elaborate + passes under
 * ts_try, run the strict interpreter under ts_try, and for the two that
 * compare with the C target: parameters checked, inputs drawn, outputs
 * poisoned, both runs, element by element comparison).  The copies drifted
 * in small ways (one compared inputs too, one printed the defines); here
 * each step exists once and every test keeps its own assertions and its
 * own naive references.
 *
 *   it_frand()       a seeded LCG draw in [-1, 1) (it_rng: each test sets
 *                    its seed, so its data stay its own)
 *   it_open()        a case's arena, the file's text, its diagnostics
 *                    (it_close() frees them)
 *   it_caps_sm80()   CUDA capabilities for sm_80 with the tensor-core,
 *                    vector, padding, swizzle and layout paths on
 *   it_compile()     elaborate an entry and run the target's passes; NULL
 *                    (the message printed under a label) on failure
 *   it_run_thread()  a kernel in the strict thread-level interpreter
 *   it_against_c()   a CUDA kernel against the C target's kernel of the
 *                    same parameters: inputs drawn, outputs NaN, both run
 *                    (every kernel of a chain), every element compared
 */
#ifndef TS_INTERP_TEST_H
#define TS_INTERP_TEST_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elab/elab.h"
#include "front/ast.h"
#include "ir/interp.h"
#include "ir/interp_thread.h"
#include "ir/ir.h"
#include "pass/pass.h"
#include "test.h"

static uint64_t it_rng; /* it_frand's state: each test sets its seed first */

static inline double it_frand(void) {
    it_rng = it_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(it_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* One case's arena, source text and diagnostics (it_open .. it_close). */
typedef struct ItCase {
    TsArena a;    /* the kernels' nodes */
    TsSource src; /* the file's text */
    TsDiag d;     /* where errors go (ts_try) */
} ItCase;

/* Read `file`; false, with a message and nothing to close, if unreadable. */
static inline bool it_open(ItCase *t, const char *file) {
    memset(t, 0, sizeof *t);
    size_t len = 0;
    char *text = ts_read_file(file, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", file);
        return false;
    }
    ts_arena_init(&t->a);
    t->src = (TsSource){file, text, len};
    return true;
}

static inline void it_close(ItCase *t) {
    ts_buf_free(&t->d.msg);
    ts_buf_free(&t->d.warn);
    free((char *)t->src.text);
    ts_arena_free(&t->a);
}

static inline void it_caps_sm80(TsCaps *cu) {
    memset(cu, 0, sizeof *cu);
    snprintf(cu->arch, sizeof cu->arch, "sm_80");
    cu->sm = 80;
    cu->mma = cu->vec = cu->vec_cast = cu->pad = cu->swizzle = cu->layout = true;
}

/* Elaborate entry (lenient: defines it does not declare are ignored) and
 * run the target's passes over every kernel of the chain; NULL, with
 * "label: message" printed, on failure. */
static inline IrKernel *it_compile(TsArena *a, TsDiag *d, const TsSource *src, const char *entry, const TsDefine *defs,
                                   int nd, bool lenient, TsTarget target, const TsCaps *caps, const char *label) {
    jmp_buf jb, *saved;
    IrKernel *volatile k = NULL;
    if (!ts_try(d, &jb, &saved)) {
        AstModule *m = ts_parse_module(a, src);
        IrKernel *kk = ts_elaborate(d, a, m, entry, defs, nd, lenient);
        for (IrKernel *p = kk; p; p = p->next) {
            TsPassCtx pc = {d, a, p, target, caps};
            ts_run_passes(&pc, NULL, NULL, NULL);
        }
        k = kk;
    } else {
        fprintf(stderr, "%s (%s): %s\n", label, target == TS_TARGET_C ? "c" : "cuda", ts_buf_str(&d->msg));
        k = NULL;
    }
    ts_try_end(d, saved);
    return k;
}

/* Defines from "name=value" strings (NULL-terminated, at most max). */
static inline int it_defines(TsArena *a, const char *const *text, TsDefine *defs, int max) {
    int nd = 0;
    for (; nd < max && text[nd]; nd++) {
        const char *eq = strchr(text[nd], '=');
        defs[nd].name = ts_strndup(a, text[nd], (size_t)(eq - text[nd]));
        defs[nd].value = eq + 1;
    }
    return nd;
}

/* Run k in the strict thread-level interpreter, parameter i bound to
 * bufs[i] (NULL: left unbound); false, with "label: message", on failure. */
static inline bool it_run_thread(TsArena *a, TsDiag *d, IrKernel *k, double *const *bufs, int nb, const char *label) {
    jmp_buf jb, *saved;
    volatile bool ok = true;
    IrTInterp *volatile tx = NULL;
    if (ts_try(d, &jb, &saved)) {
        fprintf(stderr, "%s: %s\n", label, ts_buf_str(&d->msg));
        ok = false;
    } else {
        tx = ir_tinterp_new(a, d, k, IR_TINTERP_STRICT);
        for (int i = 0; i < nb; i++)
            if (bufs[i]) ir_tinterp_bind_buffer(tx, k->params.v[i].buf, bufs[i]);
        ir_tinterp_run_grid(tx);
    }
    ts_try_end(d, saved);
    if (tx) ir_tinterp_free(tx);
    return ok;
}

/* it_against_c's options. */
typedef struct ItCompare {
    const char *label; /* names the case in messages */
    double tol;        /* relative tolerance: |got - want| <= tol * (1 + |want|) */
    bool quiet;        /* a planted bug's run: messages only with $TS_VERBOSE */
    /* element j of parameter i (buffer b, last axis `last` long) before
     * the run; outputs are NaN whatever it says */
    double (*input)(const void *ctx, const IrBuffer *b, int i, int64_t j, int64_t last);
    const void *ctx; /* input's first argument */
} ItCompare;

/* Run kc (the reference: the C target's kernels, block interpreter) and kg
 * (CUDA, strict thread-level interpreter), each over every kernel of its
 * chain, on the same inputs, outputs NaN first; true when every parameter
 * has constant extents equal in both, both runs succeed and every element
 * of every parameter agrees (an output the reference left NaN fails).
 * $TS_DUMP prints kg after a failed run, $TS_BARRIERS what each barrier
 * was good for. */
static inline bool it_against_c(TsArena *a, TsDiag *d, IrKernel *kc, IrKernel *kg, const ItCompare *o) {
    bool talk = !o->quiet || getenv("TS_VERBOSE");
    volatile bool ok = kc && kg && kc->params.n == kg->params.n;
    int np = ok ? kc->params.n : 0;
    double **ref = TS_NEWN(a, double *, np ? np : 1), **got = TS_NEWN(a, double *, np ? np : 1);
    int64_t *cnt = TS_NEWN(a, int64_t, np ? np : 1);
    for (int i = 0; i < np && ok; i++) {
        const IrBuffer *b = kc->params.v[i].buf, *bg = kg->params.v[i].buf;
        if (!b || !bg || b->ndim != bg->ndim) {
            fprintf(stderr, "%s: parameter %s: not a buffer, or not the same in both kernels\n", o->label,
                    kc->params.v[i].name);
            ok = false;
            break;
        }
        int64_t n = 1, e = 0, eg = 0;
        for (int j = 0; j < b->ndim; j++) {
            if (!ir_is_const_int(b->shape[j], &e) || !ir_is_const_int(bg->shape[j], &eg) || e != eg) {
                fprintf(stderr, "%s: %s has a run-time extent or differs between the kernels\n", o->label, b->name);
                ok = false;
            }
            n *= e;
        }
        cnt[i] = n;
        ref[i] = TS_NEWN(a, double, n > 0 ? n : 1);
        got[i] = TS_NEWN(a, double, n > 0 ? n : 1);
        int64_t last = 1;
        if (b->ndim > 0) ir_is_const_int(b->shape[b->ndim - 1], &last);
        for (int64_t j = 0; j < n; j++) {
            double v = o->input(o->ctx, b, i, j, last);
            if (kc->params.v[i].is_output) v = NAN;
            ref[i][j] = got[i][j] = v;
        }
    }
    jmp_buf jb, *saved;
    IrInterp *volatile in = NULL;
    IrTInterp *volatile tx = NULL;
    if (ok) {
        if (ts_try(d, &jb, &saved)) {
            if (talk) fprintf(stderr, "%s: %s\n", o->label, ts_buf_str(&d->msg));
            if (getenv("TS_DUMP")) {
                TsBuf t = {0};
                ir_print_kernel(&t, kg);
                fprintf(stderr, "%s", ts_buf_str(&t));
                ts_buf_free(&t);
            }
            ok = false;
        } else {
            for (IrKernel *p = kc; p; p = p->next) {
                in = ir_interp_new(a, d, p);
                for (int i = 0; i < np; i++) ir_interp_bind_buffer(in, p->params.v[i].buf, ref[i]);
                ir_interp_run_grid(in);
                ir_interp_free(in);
                in = NULL;
            }
            for (IrKernel *p = kg; p; p = p->next) {
                tx = ir_tinterp_new(a, d, p, IR_TINTERP_STRICT);
                for (int i = 0; i < np; i++) ir_tinterp_bind_buffer(tx, p->params.v[i].buf, got[i]);
                ir_tinterp_run_grid(tx);
                if (getenv("TS_BARRIERS")) {
                    const IrTInterpBarrier *bs;
                    int nb = ir_tinterp_barrier_stats(tx, &bs);
                    for (int i = 0; i < nb; i++)
                        fprintf(stderr, "%s: barrier line %d: completed %lld, needed %lld\n", o->label,
                                bs[i].stmt->loc.line, (long long)bs[i].completed, (long long)bs[i].needed);
                }
                ir_tinterp_free(tx);
                tx = NULL;
            }
        }
        ts_try_end(d, saved);
    }
    if (in) ir_interp_free(in);
    if (tx) ir_tinterp_free(tx);
    for (int i = 0; i < np && ok; i++) {
        int bad = 0;
        for (int64_t j = 0; j < cnt[i]; j++) {
            double w = ref[i][j], g = got[i][j];
            bool same = g == w || (isnan(w) && isnan(g)) || fabs(g - w) <= o->tol * (1 + fabs(w));
            if (!same && bad++ < 3 && talk)
                fprintf(stderr, "%s: %s[%lld]: cuda %.9g, c %.9g\n", o->label, kc->params.v[i].name, (long long)j, g,
                        w);
            if (kc->params.v[i].is_output && isnan(w) && bad < 3) {
                if (talk)
                    fprintf(stderr, "%s: %s[%lld] not written by the C target\n", o->label, kc->params.v[i].name,
                            (long long)j);
                bad++;
            }
        }
        if (bad) {
            if (talk) fprintf(stderr, "%s: elements of %s differ\n", o->label, kc->params.v[i].name);
            ok = false;
        }
    }
    return ok;
}

#endif
