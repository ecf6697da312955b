/*
 * test_sched.c — the CPU block scheduler.
 *
 * Blocking kernels: grids with more blocks than workers in which blocks
 * spin-wait on flags that later-numbered blocks set.  Run to completion
 * on 2 workers these would deadlock; as coroutines they must finish, and
 * each block's scratch must survive its yields.  Ordinary kernels: a 3-D
 * grid where every block writes its own index, on 1, 2 and all cores.
 */
#include "core.h"
#include "pass/pass.h"
#include "runtime/launch.h"
#include "target/c/c_target.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static TsArena *ar;
#define I(v) ir_i32(ar, (v))
#define VR(v) ir_var_ref(ar, (v))
#define BIN(op, x, y) ir_bin(ar, (op), (x), (y))

static IrExpr *ld(IrBuffer *b, IrExpr *i) { return ir_load(ar, b, &i, 1); }
static IrStmt *st(IrBuffer *b, IrExpr *i, IrExpr *v) { return ir_store(ar, b, &i, 1, v); }

static IrStmt *seq(int n, ...) {
    IrStmt *s = ir_seq(ar);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) ir_seq_push(ar, s, va_arg(ap, IrStmt *));
    va_end(ap);
    return s;
}

static IrStmt *if_(IrExpr *c, IrStmt *t, IrStmt *e) {
    IrStmt *s = ir_stmt(ar, IR_S_IF, (TsLoc){0});
    s->if_.cond = c;
    s->if_.then = t;
    s->if_.else_ = e;
    return s;
}

static IrStmt *while_(IrExpr *c, IrStmt *body) {
    IrStmt *s = ir_stmt(ar, IR_S_WHILE, (TsLoc){0});
    s->while_.cond = c;
    s->while_.body = body ? body : ir_seq(ar);
    return s;
}

static IrBuffer *param_buf(IrKernel *k, const char *name, TsDType dt, int ndim, IrExpr **shape) {
    IrBuffer *b = ir_buffer(k, name, dt, IR_SCOPE_GLOBAL, ndim, shape, (TsLoc){0});
    b->param = k->params.n;
    IrParam p = {b->name, b, NULL, 0};
    ts_vec_push(ar, k->params, p);
    return b;
}

static IrKernel *kernel(const char *name, int ngrid, int gx, int gy, int gz) {
    IrKernel *k = ir_kernel_new(ar, name);
    const char *names[3] = {"bx", "by", "bz"};
    int g[3] = {gx, gy, gz};
    k->ngrid = ngrid;
    for (int i = 0; i < 3; i++) {
        k->grid[i] = I(g[i]);
        k->block_idx[i] = ir_var(k, names[i], TS_INT32, IR_VAR_BLOCK_IDX);
        k->block_idx[i]->axis = i;
    }
    return k;
}

static char cache[256];

/* Codegen + build + wrap in a TsKernel for ts_launch. */
static int prepare(TsKernel *kk, TsContext *ctx, IrKernel *k, int threads) {
    jmp_buf jb, *saved;
    TsCompileOptions opt = {0};
    opt.cache_dir = cache;
    memset(kk, 0, sizeof *kk);
    kk->ctx = ctx;
    kk->ir = k;
    kk->opt.num_threads = threads;
    TsDiag *d = &ctx->diag;
    if (ts_try(d, &jb, &saved)) {
        ts_try_end(d, saved);
        fprintf(stderr, "%s\n%s", ts_buf_str(&d->msg), ts_buf_str(&kk->code));
        return 0;
    }
    /* the marks of a blocking kernel's loops, loads and stores (the loops
     * yield where pass poll_marks marked them) */
    TsCaps caps;
    memset(&caps, 0, sizeof caps);
    TsPassCtx cx = {d, k->arena, k, TS_TARGET_C, &caps};
    ts_pass_poll_marks(&cx);
    ts_c_codegen(d, k, NULL, &kk->code);
    kk->cmod = ts_c_build(d, kk->code.s, &opt, NULL);
    ts_try_end(d, saved);
    return 1;
}

static void release(TsKernel *kk) {
    ts_c_module_free(kk->cmod);
    ts_buf_free(&kk->code);
}

/* Block 0 spins until the last block sets flag[N-1]; the others finish at
 * once.  Every block also keeps a 16-element shared tile of its own index
 * across the wait, which must survive the other blocks' runs. */
static void test_spin_last(void) {
    enum { N = 64 };
    IrKernel *k = kernel("spin_last", 1, N, 1, 1);
    k->may_block = true;
    IrExpr *sh[1] = {I(N)}, *t16[1] = {I(16)};
    IrBuffer *flag = param_buf(k, "flag", TS_INT32, 1, sh);
    IrBuffer *out = param_buf(k, "out", TS_INT32, 1, sh);
    IrBuffer *S = ir_buffer(k, "S", TS_INT32, IR_SCOPE_SHARED, 1, t16, (TsLoc){0});
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP), *j = ir_var(k, "j", TS_INT32, IR_VAR_LOOP);
    IrExpr *bx = VR(k->block_idx[0]);
    IrStmt *fill = ir_for(ar, i, I(0), I(16), IR_FOR_SERIAL, st(S, VR(i), bx));
    /* after the wait: out[bx] = (S all equal bx) ? result : -1 */
    IrBuffer *okb = ir_buffer(k, "ok", TS_INT32, IR_SCOPE_VAR, 1, (IrExpr *[]){I(1)}, (TsLoc){0});
    IrStmt *check = seq(2, st(okb, I(0), I(1)),
                        ir_for(ar, j, I(0), I(16), IR_FOR_SERIAL,
                               if_(BIN(IR_NE, ld(S, VR(j)), bx), st(okb, I(0), I(0)), NULL)));
    IrExpr *okv = BIN(IR_EQ, ld(okb, I(0)), I(1));
    /* a purely local loop (cannot be waiting for anyone): no yield */
    IrBuffer *cnt = ir_buffer(k, "cnt", TS_INT32, IR_SCOPE_VAR, 1, (IrExpr *[]){I(1)}, (TsLoc){0});
    IrStmt *local_loop = seq(2, st(cnt, I(0), I(0)),
                             while_(BIN(IR_LT, ld(cnt, I(0)), I(5)),
                                    st(cnt, I(0), BIN(IR_ADD, ld(cnt, I(0)), I(1)))));
    k->body = seq(
        4, local_loop, fill,
        if_(BIN(IR_EQ, bx, I(0)),
            seq(3, while_(BIN(IR_EQ, ld(flag, I(N - 1)), I(0)), NULL), check,
                st(out, I(0), ir_select(ar, okv, BIN(IR_ADD, ld(flag, I(N - 1)), I(100)), I(-1)))),
            if_(BIN(IR_EQ, bx, I(N - 1)), seq(2, st(out, bx, I(7)), st(flag, bx, I(1))),
                st(out, bx, bx))),
        ir_seq(ar));

    TsContext ctx = {0};
    TsKernel kk;
    if (!prepare(&kk, &ctx, k, 2)) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(1, kk.cmod->info.may_block);
    CHECK_CONTAINS(kk.code.s, "ts_a->yield(ts_b->yield_ctx);");
    const char *y = strstr(kk.code.s, "ts_a->yield(ts_b->yield_ctx);");
    CHECK(y && !strstr(y + 1, "ts_a->yield(ts_b->yield_ctx);")); /* only the waiting loop yields */
    CHECK_CONTAINS(kk.code.s, "ts_ld_int32_t(&flag_");
    for (int rep = 0; rep < 20; rep++) {
        int32_t flags[N] = {0}, outs[N];
        for (int q = 0; q < N; q++) outs[q] = -5;
        int64_t s1[1] = {N};
        TsTensor args[2] = {{flags, TS_INT32, 1, s1, NULL}, {outs, TS_INT32, 1, s1, NULL}};
        CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 2));
        int bad = outs[0] != 101 || outs[N - 1] != 7;
        for (int q = 1; q < N - 1; q++) bad += outs[q] != q;
        CHECK_EQ_INT(0, bad);
    }
    release(&kk);
    ts_buf_free(&ctx.diag.msg);
}

/* Block b waits for flag[b+1], then sets flag[b]: a chain that resolves
 * from the last block down to block 0, each block seeing its successor's
 * result (published by the release store of the flag). */
static void test_chain(int n, int threads) {
    IrKernel *k = kernel("chain", 1, n, 1, 1);
    k->may_block = true;
    IrExpr *sh[1] = {I(n)}, *t8[1] = {I(8)};
    IrBuffer *flag = param_buf(k, "flag", TS_INT32, 1, sh);
    IrBuffer *out = param_buf(k, "out", TS_INT64, 1, sh);
    IrBuffer *S = ir_buffer(k, "S", TS_INT64, IR_SCOPE_FRAGMENT, 1, t8, (TsLoc){0});
    IrExpr *bx = VR(k->block_idx[0]);
    IrExpr *next = BIN(IR_ADD, bx, I(1));
    IrStmt *wait_next = while_(BIN(IR_EQ, ld(flag, next), I(0)), NULL);
    /* S[3] = bx * 1000 before waiting; out[b] = out[b+1] + 1 + (S[3] - bx*1000) */
    k->body = seq(3, st(S, I(3), BIN(IR_MUL, ir_cast(ar, TS_INT64, bx), ir_int(ar, 1000, TS_INT64))),
                  if_(BIN(IR_LT, bx, I(n - 1)),
                      seq(2, wait_next,
                          st(out, bx,
                             BIN(IR_ADD, BIN(IR_ADD, ld(out, next), ir_int(ar, 1, TS_INT64)),
                                 BIN(IR_SUB, ld(S, I(3)),
                                     BIN(IR_MUL, ir_cast(ar, TS_INT64, bx), ir_int(ar, 1000, TS_INT64)))))),
                      st(out, bx, ir_int(ar, 0, TS_INT64))),
                  st(flag, bx, I(1)));

    TsContext ctx = {0};
    TsKernel kk;
    if (!prepare(&kk, &ctx, k, threads)) {
        CHECK(0);
        return;
    }
    int32_t *flags = calloc((size_t)n, sizeof *flags);
    int64_t *outs = calloc((size_t)n, sizeof *outs);
    for (int q = 0; q < n; q++) outs[q] = -9;
    int64_t s1[1] = {n};
    TsTensor args[2] = {{flags, TS_INT32, 1, s1, NULL}, {outs, TS_INT64, 1, s1, NULL}};
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 2));
    int bad = 0;
    for (int q = 0; q < n; q++) bad += outs[q] != n - 1 - q || flags[q] != 1;
    CHECK_EQ_INT(0, bad);
    free(flags);
    free(outs);
    release(&kk);
    ts_buf_free(&ctx.diag.msg);
}

/* A plain kernel on a 3-D grid: every block writes its index once. */
static void test_plain(int threads) {
    enum { GX = 7, GY = 5, GZ = 3 };
    IrKernel *k = kernel("plain", 3, GX, GY, GZ);
    IrExpr *sh[3] = {I(GZ), I(GY), I(GX * 4)};
    IrBuffer *out = param_buf(k, "out", TS_INT32, 3, sh);
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP);
    IrExpr *bx = VR(k->block_idx[0]), *by = VR(k->block_idx[1]), *bz = VR(k->block_idx[2]);
    IrExpr *idx[3] = {bz, by, BIN(IR_ADD, BIN(IR_MUL, bx, I(4)), VR(i))};
    IrExpr *v = BIN(IR_ADD, BIN(IR_ADD, bx, BIN(IR_MUL, by, I(10))), BIN(IR_MUL, bz, I(100)));
    k->body = ir_for(ar, i, I(0), I(4), IR_FOR_PARALLEL,
                     ir_store(ar, out, idx, 3, BIN(IR_ADD, v, VR(i))));
    TsContext ctx = {0};
    TsKernel kk;
    if (!prepare(&kk, &ctx, k, threads)) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(0, kk.cmod->info.may_block);
    CHECK(!strstr(kk.code.s, "ts_a->yield("));
    static int32_t o[GZ][GY][GX * 4];
    memset(o, 0xff, sizeof o);
    int64_t s3[3] = {GZ, GY, GX * 4};
    TsTensor args[1] = {{o, TS_INT32, 3, s3, NULL}};
    CHECK_EQ_INT(TS_OK, ts_launch(&kk, args, 1));
    int bad = 0;
    for (int z = 0; z < GZ; z++)
        for (int y = 0; y < GY; y++)
            for (int x = 0; x < GX * 4; x++) bad += o[z][y][x] != x / 4 + 10 * y + 100 * z + x % 4;
    CHECK_EQ_INT(0, bad);
    release(&kk);
    ts_buf_free(&ctx.diag.msg);
}

int main(void) {
    TsArena arena;
    ts_arena_init(&arena);
    ar = &arena;
    snprintf(cache, sizeof cache, "%s/ts-test-sched-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    test_spin_last();
    test_chain(64, 2);
    test_chain(500, 2);
    test_chain(300, 0);
    test_chain(40, 1);
    test_plain(1);
    test_plain(2);
    test_plain(0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cache);
    ts_arena_free(&arena);
    return test_done();
}
