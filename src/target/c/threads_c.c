/*
 * threads_c.c — a block's threads as coroutines, for kernels whose threads
 * wait for each other (IrKernel.thread_coro, chosen by pass thread_loops_c).
 *
 * The C target normally runs a block's per-thread code as loops over the
 * threads, one thread's statement after another's (exact between
 * barriers).  That order cannot run code where one thread of a block waits
 * for another: a thread spinning on a flag that a later thread sets, a
 * named barrier inside a loop whose trip count differs between threads,
 * warps that each run their own queue loop (TileScale's DeepEP dispatch
 * and combine).  For such kernels the generated tsk_block hands the block
 * to ts_c_run_threads, which runs the generated per-thread function
 * (tsk_thread: the whole block body seen by one thread) once per thread,
 * each on its own small stack, switching between them:
 *
 *  - a thread runs until it waits: at a barrier (TsCArgs.tbar: T.sync_threads,
 *    named or not; pass coro_sync_c has the block's uniform statements run
 *    by thread 0 between two barriers, a T.ws role's by its first thread
 *    between two barriers of the role), at a warp primitive (TsCArgs.warp: the lanes
 *    meet, the last one computes every lane's result with CUDA's rules:
 *    source lanes of shuffles, butterflies of reductions, ballots), or in a
 *    spin (TsCArgs.yield: a wait, a polling load, any while-loop
 *    iteration);
 *  - the block's scheduler resumes the threads that can go on, round-robin;
 *    after a round in which a thread spun it yields the block itself (to
 *    the worker's block scheduler, sched_c.c), so that other blocks and
 *    ranks get to set the flags awaited here;
 *  - a thread that returns (the end of the body, T.thread_return) no
 *    longer counts for whole-block barriers and its warp's primitives.
 *
 * Deadlock: a round where every thread left is blocked at a barrier or
 * warp primitive can never end; the block fails at once with a message
 * naming the block, the rank and where the threads wait.  Threads that
 * spin forever on a flag end the usual way: the wait's timeout (comm_c.c)
 * names the rank, the buffer, the value awaited and the value seen.
 *
 * Why ucontext and not a hand-rolled stack switch: C11 has no way to switch
 * stacks; the alternatives are assembly per architecture or this POSIX
 * interface, which sched_c.c already uses for blocks (and which the
 * sanitizers know about).  Its cost is a signal-mask system call per
 * switch; that is acceptable for a correctness model (a barrier of a
 * 768-thread block costs about a millisecond).  Protothreads (switch-based
 * resumable functions) would need every per-thread local kept in memory
 * and every loop rewritten; one stack per thread keeps the generated code
 * plain C.
 *
 * Everything of a block's threads runs on the one OS thread that runs the
 * block (coroutines never migrate), so the barrier and warp state needs no
 * atomics.  Stacks: one mapping per block run (a guard page below each
 * stack), released when the block ends.
 */
#include "target/c/c_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* Stack of one thread: generated code keeps buffers in scratch, so this
 * holds scalars and printf's frames. */
#define THR_STACK (64 * 1024)

/* Barrier ids: bar.sync's 16, then pass coro_sync_c's around block-level
 * code (16) and each T.ws role's (17 + the role's first warp; 1024
 * threads): ir.h's IR_C_BAR_END. */
#define TS_NBAR (17 + 32)

enum { T_READY, T_BAR, T_WARP, T_DONE };

typedef struct TBlock TBlock;

/* One thread of the block. */
typedef struct Thr {
    ucontext_t uc;          /* its saved context */
    TBlock *tb;             /* its block */
    TsCBlock blk;           /* what the generated code gets: idx, scratch, yield_ctx = this */
    int32_t tid;            /* flat thread index */
    int state;              /* T_READY, T_BAR (waits at bar_id), T_WARP, T_DONE */
    int32_t bar_id;         /* T_BAR: the barrier */
} Thr;

/* One barrier id (bar.sync): arrivals of the current round. */
typedef struct Bar {
    int32_t arrived;        /* threads waiting at it now */
    int32_t count;          /* the count they asked for (0: every live thread) */
} Bar;

/* One warp's meeting point for warp primitives. */
typedef struct Warp {
    int32_t arrived;        /* lanes that reached the current primitive */
    int32_t live;           /* lanes not yet returned */
    int32_t op;             /* the primitive (TS_C_WARP_*), set by the first lane */
    int32_t kind;           /* the value's kind (TS_C_WK_*) */
    int32_t width;          /* shuffle width (power of two <= 32) */
    uint32_t mask;          /* ballot's lane mask */
    uint32_t present;       /* lanes that arrived (bit per lane) */
    int64_t val[32];        /* each lane's value (bits) */
    int32_t arg[32];        /* each lane's lane / delta operand */
    int64_t res[32];        /* each lane's result, valid once all arrived */
} Warp;

struct TBlock {
    TsCArgs a;              /* the kernel's arguments, yield/tbar/warp pointing here */
    const TsCArgs *outer;   /* the block's own arguments (its yield: to the worker) */
    TsCBlock *ob;           /* the block's own TsCBlock */
    TsCThreadFn fn;         /* the generated per-thread function */
    int32_t nt;             /* threads of the block */
    int32_t live;           /* threads not yet returned */
    Thr *thr;               /* [nt] */
    Warp *warp;             /* [(nt + 31) / 32] */
    Bar bar[TS_NBAR];       /* the 16 hardware barrier ids; 16: around block-level code, 17 + w:
                               around the T.ws role from warp w (pass coro_sync_c) */
    unsigned char *stacks;  /* one mapping: per thread a guard page and a stack */
    size_t stacks_size;     /* its bytes */
    size_t page;            /* page size */
    ucontext_t home;        /* the block scheduler's context */
    int spun;               /* a thread yielded in a spin this round */
    int abandon;            /* stop: a thread reported an error */
};

/* ---- run-time errors ---------------------------------------------------------- */

/* Reports text through the kernel's fault callback (dim < 0: the whole
 * message; it also stops the launch) and abandons the block. */
static void thr_error(TBlock *tb, const char *text) {
    if (tb->outer->fault) tb->outer->fault(tb->outer->fault_ctx, text, "", -1, 0, 0, tb->ob->idx);
    tb->abandon = 1;
}

/* Leaves the thread for good (after thr_error). */
static void thr_park(Thr *t) {
    t->state = T_BAR;
    t->bar_id = -1;
    swapcontext(&t->uc, &t->tb->home);
}

/* ---- barriers ------------------------------------------------------------------- */

/* Releases barrier id if enough threads arrived. */
static void bar_check(TBlock *tb, int32_t id) {
    Bar *b = &tb->bar[id];
    int32_t need = b->count > 0 ? b->count : tb->live;
    if (b->arrived == 0 || b->arrived < need) return;
    for (int32_t i = 0; i < tb->nt; i++)
        if (tb->thr[i].state == T_BAR && tb->thr[i].bar_id == id) tb->thr[i].state = T_READY;
    b->arrived = 0;
    b->count = 0;
}

/* TsCArgs.tbar: T.sync_threads(id, count); count 0: every live thread;
 * ids 16..48: pass coro_sync_c's barriers around block-level code. */
static void thr_bar(void *ctx, int32_t id, int32_t count) {
    Thr *t = ctx;
    TBlock *tb = t->tb;
    if (id < 0 || id >= TS_NBAR || count < 0 || count > tb->nt) {
        char msg[160];
        snprintf(msg, sizeof msg, "thread %d: barrier id %d is outside [0, 15] (or %d threads outside [1, %d])",
                 (int)t->tid, (int)id, (int)count, (int)tb->nt);
        thr_error(tb, msg);
        thr_park(t);
    }
    Bar *b = &tb->bar[id];
    if (b->arrived == 0) b->count = count;
    b->arrived++;
    t->state = T_BAR;
    t->bar_id = id;
    bar_check(tb, id);
    if (t->state == T_BAR) swapcontext(&t->uc, &tb->home);
}

/* ---- warp primitives --------------------------------------------------------------- */

static int64_t f2b(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (int64_t)u;
}
static float b2f(int64_t b) {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static int64_t d2b(double d) {
    int64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static double b2d(int64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* own op other, in the value's kind (CUDA's butterfly step) */
static int64_t reduce2(int op, int kind, int64_t x, int64_t y) {
    switch (kind) {
    case TS_C_WK_F32: {
        float a = b2f(x), b = b2f(y);
        return f2b(op == TS_C_WARP_SUM ? a + b : op == TS_C_WARP_MAX ? (b > a ? b : a) : (b < a ? b : a));
    }
    case TS_C_WK_F64: {
        double a = b2d(x), b = b2d(y);
        return d2b(op == TS_C_WARP_SUM ? a + b : op == TS_C_WARP_MAX ? (b > a ? b : a) : (b < a ? b : a));
    }
    case TS_C_WK_U32:
    case TS_C_WK_U64: {
        uint64_t a = (uint64_t)x, b = (uint64_t)y, r;
        if (kind == TS_C_WK_U32) a = (uint32_t)a, b = (uint32_t)b;
        switch (op) {
        case TS_C_WARP_SUM: r = a + b; break;
        case TS_C_WARP_MAX: r = b > a ? b : a; break;
        case TS_C_WARP_MIN: r = b < a ? b : a; break;
        case TS_C_WARP_BAND: r = a & b; break;
        default: r = a | b; break;
        }
        if (kind == TS_C_WK_U32) r = (uint32_t)r;
        return (int64_t)r;
    }
    default: {
        switch (op) {
        case TS_C_WARP_SUM: return (int64_t)((uint64_t)x + (uint64_t)y);
        case TS_C_WARP_MAX: return y > x ? y : x;
        case TS_C_WARP_MIN: return y < x ? y : x;
        case TS_C_WARP_BAND: return x & y;
        default: return x | y;
        }
    }
    }
}

/* Every lane's result once the lanes met (the rules of pass warp_c). */
static void warp_complete(TBlock *tb, Warp *w, int32_t first_tid) {
    int op = w->op, wd = w->width > 0 ? w->width : 32;
    if (op == TS_C_WARP_BALLOT) {
        uint32_t bits = 0;
        for (int l = 0; l < 32; l++)
            if ((w->present >> l & 1u) && w->val[l]) bits |= 1u << l;
        for (int l = 0; l < 32; l++) w->res[l] = (int64_t)(bits & w->mask);
    } else if (op >= TS_C_WARP_SUM) {
        int64_t v[32], t[32];
        for (int l = 0; l < 32; l++) v[l] = (w->present >> l & 1u) ? w->val[l] : 0;
        for (int o = 16; o > 0; o >>= 1) {
            for (int l = 0; l < 32; l++) t[l] = reduce2(op, w->kind, v[l], v[l ^ o]);
            memcpy(v, t, sizeof v);
        }
        memcpy(w->res, v, sizeof v);
    } else if (op == TS_C_WARP_SYNC) {
        memset(w->res, 0, sizeof w->res);
    } else {
        for (int l = 0; l < 32; l++) {
            int32_t d = w->arg[l], inseg = l & (wd - 1), seg = l - inseg, src = l;
            switch (op) {
            case TS_C_WARP_SHFL: src = seg + (d & (wd - 1)); break;
            case TS_C_WARP_SHFL_UP: if (d >= 0 && inseg - d >= 0) src = l - d; break;
            case TS_C_WARP_SHFL_DOWN: if (d >= 0 && inseg + d < wd) src = l + d; break;
            default: if ((l ^ d) >= 0 && (l ^ d) < seg + wd) src = l ^ d; break;
            }
            w->res[l] = (w->present >> src & 1u) ? w->val[src] : w->val[l];
        }
    }
    for (int l = 0; l < 32 && first_tid + l < tb->nt; l++)
        if (tb->thr[first_tid + l].state == T_WARP) tb->thr[first_tid + l].state = T_READY;
    w->arrived = 0;
    w->present = 0;
}

/* TsCArgs.warp: this lane's part of a warp primitive; returns its result. */
static int64_t thr_warp(void *ctx, int32_t op, int32_t kind, int64_t bits, int32_t arg, int32_t width,
                        uint32_t mask) {
    Thr *t = ctx;
    TBlock *tb = t->tb;
    Warp *w = &tb->warp[t->tid / 32];
    int lane = t->tid % 32;
    if (w->arrived == 0) {
        w->op = op;
        w->kind = kind;
        w->width = width;
        w->mask = mask;
    } else if (w->op != op || w->kind != kind) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "kernel: lanes of warp %d reached different warp primitives at once (thread %d: primitive %d, "
                 "an earlier lane: %d); divergent warp code",
                 (int)(t->tid / 32), (int)t->tid, (int)op, (int)w->op);
        thr_error(tb, msg);
        thr_park(t);
    }
    w->val[lane] = bits;
    w->arg[lane] = arg;
    w->present |= 1u << lane;
    w->arrived++;
    t->state = T_WARP;
    if (w->arrived >= w->live) warp_complete(tb, w, t->tid - lane);
    if (t->state == T_WARP) swapcontext(&t->uc, &tb->home);
    return w->res[lane];
}

/* ---- spins and the scheduler ---------------------------------------------------- */

/* TsCArgs.yield of a thread: back to the block scheduler. */
static void thr_yield(void *ctx) {
    Thr *t = ctx;
    t->tb->spun = 1;
    swapcontext(&t->uc, &t->tb->home);
}

/* makecontext passes int arguments only: the Thr pointer comes in halves. */
static void thr_entry(unsigned lo, unsigned hi) {
    Thr *t = (Thr *)(uintptr_t)(((uint64_t)hi << 32) | lo);
    TBlock *tb = t->tb;
    tb->fn(&tb->a, &t->blk, t->tid);
    t->state = T_DONE; /* returning resumes uc_link: the scheduler */
}

/* A thread returned: it no longer counts for its warp and whole-block barriers. */
static void thr_done(TBlock *tb, Thr *t) {
    tb->live--;
    Warp *w = &tb->warp[t->tid / 32];
    w->live--;
    if (w->arrived > 0 && w->arrived >= w->live) warp_complete(tb, w, t->tid - t->tid % 32);
    for (int32_t id = 0; id < TS_NBAR; id++) bar_check(tb, id);
}

/* Where the threads of a deadlocked block wait, for the message. */
static void deadlock(TBlock *tb) {
    TsBuf b = {0};
    const TsCArgs *a = tb->outer;
    ts_buf_printf(&b, "threads of block (%lld, %lld, %lld) of rank %d wait for each other forever:",
                  (long long)tb->ob->idx[0], (long long)tb->ob->idx[1], (long long)tb->ob->idx[2], (int)a->rank);
    for (int32_t id = 0; id < TS_NBAR; id++)
        if (tb->bar[id].arrived)
            ts_buf_printf(&b, " barrier %d: %d of %d threads arrived;", (int)id, (int)tb->bar[id].arrived,
                          (int)(tb->bar[id].count > 0 ? tb->bar[id].count : tb->live));
    for (int32_t w = 0; w < (tb->nt + 31) / 32; w++)
        if (tb->warp[w].arrived)
            ts_buf_printf(&b, " warp %d: %d of %d lanes at a warp primitive;", (int)w, (int)tb->warp[w].arrived,
                          (int)tb->warp[w].live);
    ts_buf_printf(&b, " %d thread%s returned", (int)(tb->nt - tb->live), tb->nt - tb->live == 1 ? "" : "s");
    thr_error(tb, ts_buf_str(&b));
    ts_buf_free(&b);
}

static int launch_stopped(const TBlock *tb) {
    const TsCArgs *a = tb->outer;
    return ts_c_launch_failed(a) || (a->aborted && __atomic_load_n(a->aborted, __ATOMIC_ACQUIRE));
}

/* TsCArgs.threads: run fn for every thread of block b. */
static void run_threads(const TsCArgs *a, TsCBlock *b, int32_t nt, TsCThreadFn fn) {
    TBlock *tb = calloc(1, sizeof *tb);
    if (!tb) {
        if (a->fault) a->fault(a->fault_ctx, "out of memory for a block's threads", "", -1, 0, 0, b->idx);
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    tb->page = page > 0 ? (size_t)page : 4096;
    tb->a = *a;
    tb->a.yield = thr_yield;
    tb->outer = a;
    tb->ob = b;
    tb->fn = fn;
    tb->nt = tb->live = nt;
    int32_t nw = (nt + 31) / 32;
    tb->thr = calloc((size_t)nt, sizeof *tb->thr);
    tb->warp = calloc((size_t)nw, sizeof *tb->warp);
    tb->stacks_size = (size_t)nt * (tb->page + THR_STACK);
    void *mem = mmap(NULL, tb->stacks_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (!tb->thr || !tb->warp || mem == MAP_FAILED) {
        if (a->fault) a->fault(a->fault_ctx, "out of memory for a block's thread stacks", "", -1, 0, 0, b->idx);
        if (mem != MAP_FAILED) munmap(mem, tb->stacks_size);
        free(tb->thr);
        free(tb->warp);
        free(tb);
        return;
    }
    tb->stacks = mem;
    for (int32_t w = 0; w < nw; w++) tb->warp[w].live = nt - 32 * w < 32 ? nt - 32 * w : 32;
    for (int32_t i = 0; i < nt; i++) {
        Thr *t = &tb->thr[i];
        unsigned char *base = tb->stacks + (size_t)i * (tb->page + THR_STACK);
        mprotect(base, tb->page, PROT_NONE); /* guard page below the stack */
        t->tb = tb;
        t->tid = i;
        t->blk = *b;
        t->blk.yield_ctx = t;
        getcontext(&t->uc);
        t->uc.uc_stack.ss_sp = base + tb->page;
        t->uc.uc_stack.ss_size = THR_STACK;
        t->uc.uc_link = &tb->home;
        uint64_t p = (uint64_t)(uintptr_t)t;
        makecontext(&t->uc, (void (*)(void))thr_entry, 2, (unsigned)(p & 0xffffffffu), (unsigned)(p >> 32));
    }
    while (tb->live > 0 && !tb->abandon) {
        if (launch_stopped(tb)) break; /* another block or rank failed: give the block up */
        tb->spun = 0;
        int ran = 0;
        for (int32_t i = 0; i < nt && !tb->abandon; i++) {
            Thr *t = &tb->thr[i];
            if (t->state != T_READY) continue;
            ran = 1;
            swapcontext(&tb->home, &t->uc);
            if (t->state == T_DONE) thr_done(tb, t);
        }
        if (tb->abandon) break;
        if (!ran && tb->live > 0) {
            deadlock(tb);
            break;
        }
        /* A thread spins: what it waits for may come from another block, so
         * let the other blocks run.  (Warp primitives met in the spin loop
         * count as progress, so "only spins" cannot be told apart.) */
        if (tb->spun && a->yield) a->yield(b->yield_ctx);
    }
    munmap(tb->stacks, tb->stacks_size);
    free(tb->thr);
    free(tb->warp);
    free(tb);
}

void ts_c_threads_fill(TsCArgs *a) {
    a->threads = run_threads;
    a->tbar = thr_bar;
    a->warp = thr_warp;
}
