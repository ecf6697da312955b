/*
 * test_threads_c.c — the C target's block-thread coroutines (threads_c.c)
 * driven directly, without generated code: thread functions written here
 * call the callbacks generated code calls (yield, tbar, warp).
 *
 * Checked: a consumer thread spinning on a flag that a later thread of the
 * same block sets (program order would never end); named barriers inside
 * loops whose trip counts differ between thread groups, ids chosen at run
 * time; warp shuffles, reductions and ballots against CUDA's rules written
 * out here; threads that return early no longer count for whole-block
 * barriers and their warp; a barrier nobody else reaches fails at once with
 * a message naming it (not a hang), as do lanes meeting at different warp
 * primitives; a spinning block yields to the block scheduler.
 */
#include "test.h"

#include "target/c/c_target.h"

#include <math.h>
#include <string.h>

/* What the threads of one test share (passed as the block's scratch). */
typedef struct State {
    int flag, data, got;          /* producer / consumer */
    int val[4];                   /* per group: the value its leader publishes */
    int64_t sum[256];             /* per thread: what it accumulated */
    int64_t res[256][8];          /* per thread: warp primitive results */
    int outer_yields;             /* calls of the block's own yield */
    int faults;                   /* fault reports */
    char msg[512];                /* the first one */
} State;

static void on_fault(void *ctx, const char *site, const char *source, int32_t dim, int64_t index, int64_t extent,
                     const int64_t *block) {
    (void)source, (void)dim, (void)index, (void)extent, (void)block;
    State *st = ctx;
    if (!st->faults++) snprintf(st->msg, sizeof st->msg, "%s", site);
}

static void outer_yield(void *ctx) { ((State *)ctx)->outer_yields++; }

static void run(State *st, int32_t nt, TsCThreadFn fn) {
    TsCArgs a;
    memset(&a, 0, sizeof a);
    a.abi_version = TS_C_ABI_VERSION;
    a.fault = on_fault;
    a.fault_ctx = st;
    a.yield = outer_yield;
    ts_c_threads_fill(&a);
    TsCBlock b;
    memset(&b, 0, sizeof b);
    b.scratch = (unsigned char *)st;
    b.yield_ctx = st;
    a.threads(&a, &b, nt, fn);
}

static State *S(TsCBlock *b) { return (State *)(void *)b->scratch; }

/* thread 0 waits for thread 33, which publishes after a few spins of its own */
static void producer_consumer(const TsCArgs *a, TsCBlock *b, int32_t tid) {
    State *st = S(b);
    if (tid == 0) {
        while (!st->flag) a->yield(b->yield_ctx);
        st->got = st->data;
    } else if (tid == 33) {
        for (int i = 0; i < 5; i++) a->yield(b->yield_ctx);
        st->data = 4242;
        st->flag = 1;
    }
}

/* groups of 64 threads, barrier id 1 + group, group g runs g + 2 rounds:
 * its leader publishes a value, the group meets, everyone adds it, meets */
static void named_barriers(const TsCArgs *a, TsCBlock *b, int32_t tid) {
    State *st = S(b);
    int g = tid / 64;
    for (int it = 0; it < g + 2; it++) {
        if (tid % 64 == 0) st->val[g] = 10 * it + g + 1;
        a->tbar(b->yield_ctx, 1 + g, 64);
        st->sum[tid] += st->val[g];
        a->tbar(b->yield_ctx, 1 + g, 64);
    }
}

static int64_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (int64_t)u;
}
static float bitsf(int64_t b) {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the value lane l of warp w holds */
static int64_t ival(int32_t tid) { return (tid * 37 + 11) % 101 - 50; }
static float fval(int32_t tid) { return (float)((tid * 53 + 7) % 97) * 0.25f - 3.0f; }

static void warp_prims(const TsCArgs *a, TsCBlock *b, int32_t tid) {
    State *st = S(b);
    int lane = tid % 32;
    int64_t *r = st->res[tid];
    r[0] = a->warp(b->yield_ctx, TS_C_WARP_SHFL, TS_C_WK_I64, ival(tid), (lane * 7 + 3) % 32, 32, ~0u);
    r[1] = a->warp(b->yield_ctx, TS_C_WARP_SHFL_UP, TS_C_WK_I64, ival(tid), 3, 16, ~0u);
    r[2] = a->warp(b->yield_ctx, TS_C_WARP_SHFL_DOWN, TS_C_WK_I64, ival(tid), 5, 32, ~0u);
    r[3] = a->warp(b->yield_ctx, TS_C_WARP_SHFL_XOR, TS_C_WK_I64, ival(tid), 9, 8, ~0u);
    r[4] = a->warp(b->yield_ctx, TS_C_WARP_SUM, TS_C_WK_I64, ival(tid), 0, 32, ~0u);
    r[5] = a->warp(b->yield_ctx, TS_C_WARP_MAX, TS_C_WK_F32, fbits(fval(tid)), 0, 32, ~0u);
    r[6] = a->warp(b->yield_ctx, TS_C_WARP_BALLOT, TS_C_WK_I64, ival(tid) > 0, 0, 32, 0x0000ffffu);
    r[7] = a->warp(b->yield_ctx, TS_C_WARP_SUM, TS_C_WK_F32, fbits(fval(tid)), 0, 32, ~0u);
}

/* warps 2 and 3 return at once; the others meet at a whole-block barrier
 * and a warp reduction, which must not wait for them */
static void early_return(const TsCArgs *a, TsCBlock *b, int32_t tid) {
    State *st = S(b);
    if (tid >= 64) return;
    a->tbar(b->yield_ctx, 0, 0);
    st->sum[tid] = a->warp(b->yield_ctx, TS_C_WARP_SUM, TS_C_WK_I64, 1, 0, 32, ~0u);
    a->tbar(b->yield_ctx, 0, 0);
}

/* thread 5 waits at named barrier 3 of 64 threads; nobody else comes */
static void lonely_barrier(const TsCArgs *a, TsCBlock *b, int32_t tid) {
    if (tid == 5) a->tbar(b->yield_ctx, 3, 64);
}

/* lanes of one warp at different primitives */
static void divergent_warp(const TsCArgs *a, TsCBlock *b, int32_t tid) {
    if (tid % 2) a->warp(b->yield_ctx, TS_C_WARP_SUM, TS_C_WK_I64, 1, 0, 32, ~0u);
    else a->warp(b->yield_ctx, TS_C_WARP_SHFL, TS_C_WK_I64, 1, 0, 32, ~0u);
}

int main(void) {
    static State st;

    memset(&st, 0, sizeof st);
    run(&st, 64, producer_consumer);
    CHECK_EQ_INT(4242, st.got);
    CHECK_EQ_INT(0, st.faults);
    CHECK(st.outer_yields > 0); /* spinning threads let other blocks run */

    memset(&st, 0, sizeof st);
    run(&st, 192, named_barriers);
    CHECK_EQ_INT(0, st.faults);
    for (int t = 0; t < 192; t++) {
        int g = t / 64;
        int64_t want = 0;
        for (int it = 0; it < g + 2; it++) want += 10 * it + g + 1;
        if (st.sum[t] != want) {
            CHECK_EQ_INT(want, st.sum[t]);
            break;
        }
    }

    memset(&st, 0, sizeof st);
    run(&st, 64, warp_prims);
    CHECK_EQ_INT(0, st.faults);
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        int l = t % 32, w0 = t - l;
        int64_t want[8];
        want[0] = ival(w0 + (l * 7 + 3) % 32);
        want[1] = (l % 16) >= 3 ? ival(t - 3) : ival(t);          /* up 3 within 16-lane segments */
        want[2] = l + 5 < 32 ? ival(t + 5) : ival(t);             /* down 5 */
        /* xor 9 in 8-lane segments: a partner in a later segment means the own value */
        want[3] = (l ^ 9) < (l & ~7) + 8 ? ival(w0 + (l ^ 9)) : ival(t);
        int64_t s = 0;
        float m = -INFINITY;
        uint32_t bal = 0;
        for (int j = 0; j < 32; j++) {
            s += ival(w0 + j);
            if (fval(w0 + j) > m) m = fval(w0 + j);
            if (ival(w0 + j) > 0) bal |= 1u << j;
        }
        want[4] = s;
        want[5] = fbits(m);
        want[6] = bal & 0x0000ffffu;
        /* the float sum as CUDA's butterfly: offsets 16..1, own + partner's */
        float v[32], tmp[32];
        for (int j = 0; j < 32; j++) v[j] = fval(w0 + j);
        for (int o = 16; o > 0; o >>= 1) {
            for (int j = 0; j < 32; j++) tmp[j] = v[j] + v[j ^ o];
            memcpy(v, tmp, sizeof v);
        }
        want[7] = fbits(v[l]);
        for (int k = 0; k < 8; k++)
            if (st.res[t][k] != want[k] && !bad++) {
                printf("thread %d primitive %d: want %lld got %lld (%g)\n", t, k, (long long)want[k],
                       (long long)st.res[t][k], (double)bitsf(st.res[t][k]));
            }
    }
    CHECK_EQ_INT(0, bad);

    memset(&st, 0, sizeof st);
    run(&st, 128, early_return);
    CHECK_EQ_INT(0, st.faults);
    CHECK_EQ_INT(32, st.sum[0]);
    CHECK_EQ_INT(32, st.sum[63]);

    memset(&st, 0, sizeof st);
    run(&st, 96, lonely_barrier);
    CHECK_EQ_INT(1, st.faults);
    CHECK_CONTAINS(st.msg, "wait for each other forever");
    CHECK_CONTAINS(st.msg, "barrier 3: 1 of 64 threads arrived");

    memset(&st, 0, sizeof st);
    run(&st, 32, divergent_warp);
    CHECK_EQ_INT(1, st.faults);
    CHECK_CONTAINS(st.msg, "different warp primitives");
    return test_done();
}
