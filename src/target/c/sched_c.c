/*
 * sched_c.c — running the blocks of a grid on CPU worker threads.
 *
 * Blocks are numbered 0..total-1 with x fastest (then y, then z), and
 * workers pull numbers from one shared atomic counter, so the load
 * balances itself and there is no per-block bookkeeping.  Each worker owns
 * the scratch memory its blocks use (shared/fragment/local buffers; the
 * size comes from the module), so blocks never allocate.
 *
 * Ordinary kernels: a worker calls the block function, which runs to the
 * end; one scratch area per worker.
 *
 * Kernels whose blocks wait for each other (TsCInfo.may_block: spin-waits
 * on flags set by other blocks or, later, other ranks).  Running such a
 * block to completion on a worker could deadlock: with W workers, W blocks
 * waiting for a block that has not started yet would hold every worker
 * forever.  So each block runs as a coroutine (ucontext: makecontext /
 * swapcontext) on its own small stack with its own scratch.  Generated
 * waiting loops call the `yield` callback every iteration, which switches
 * back to the worker's scheduler loop.  The loop keeps a list of live
 * blocks and resumes them round-robin; after every live block has yielded
 * once since the last admission, it admits one more block from the shared
 * counter.  Hence:
 *   - every started block is resumed again and again (round-robin), and
 *   - every block is eventually started (a worker whose blocks all wait
 *     keeps admitting new ones until the counter runs out),
 * so a block waiting for any other block of the grid always gets to see
 * it run: no deadlock as long as the wait graph itself has no cycle.
 * The price is memory: up to all blocks of the grid may be live at once
 * when many wait; stacks are mmap'ed lazily (MAP_NORESERVE) with a guard
 * page, and reused once a block finishes.  Coroutines never migrate
 * between threads (ucontext and thread-local state do not mix well).
 *
 * No globals: all state hangs off a Sched on the launching thread's stack.
 * Failures (out of memory) stop the launch: workers abandon their live
 * coroutines — a coroutine's memory can simply be unmapped — and the error
 * is reported through the diagnostic, never by aborting.
 */
#include "target/c/c_target.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* Coroutine stack size.  Generated code keeps its tiles in scratch, so the
 * stack only holds scalars and printf's frames. */
#define CORO_STACK (256 * 1024)

typedef struct Worker Worker;

/* One launch. */
typedef struct Sched {
    const TsModuleC *m;     /* the module */
    TsCArgs args;           /* the caller's arguments with yield/print filled in */
    int64_t grid[3];        /* grid extents */
    int64_t total;          /* number of blocks */
    atomic_llong next;      /* next block number to hand out */
    atomic_int failed;      /* TS_OK, or the status that stops the launch */
    size_t scratch;         /* per-block scratch bytes, rounded up to pages for coroutines */
    size_t page;            /* page size */
    atomic_int faulted;     /* an out-of-bounds access was reported (only the first is kept) */
    TsBuf fault_msg;        /* its diagnostic, written by the block that set faulted */
} Sched;

/* One block running as a coroutine. */
typedef struct Coro {
    ucontext_t uc;          /* its saved context */
    TsCBlock blk;           /* index, scratch, yield_ctx (= this Coro) */
    Worker *w;              /* the worker that runs it */
    unsigned char *mem;     /* mmap'ed: guard page | stack | scratch */
    size_t mem_size;        /* bytes mapped */
    int done;               /* the block function returned */
} Coro;

/* One worker thread. */
struct Worker {
    Sched *s;               /* the launch */
    ucontext_t home;        /* the scheduler loop's context */
    Coro **live;            /* live coroutines, resumed round-robin */
    int nlive, cap_live;    /* count and capacity of live */
    Coro **pool;            /* finished coroutines kept for reuse */
    int npool, cap_pool;    /* count and capacity of pool */
    pthread_t thread;       /* its thread (unused for worker 0) */
    int started;            /* thread was created */
};

static void set_failed(Sched *s, TsStatus st) {
    int expected = TS_OK;
    atomic_compare_exchange_strong(&s->failed, &expected, (int)st);
}

static void block_index(const Sched *s, int64_t n, int64_t idx[3]) {
    idx[0] = n % s->grid[0];
    idx[1] = (n / s->grid[0]) % s->grid[1];
    idx[2] = n / (s->grid[0] * s->grid[1]);
}

void ts_c_print_stdout(void *print_ctx, const char *text) {
    (void)print_ctx;
    fputs(text, stdout);
}

/* TsCArgs.fault: keep the first report (blocks on other threads may fault
 * at the same time) and stop handing out blocks. */
static void sched_fault(void *ctx, const char *site, const char *source, int32_t dim, int64_t index,
                        int64_t extent, const int64_t *block) {
    Sched *s = ctx;
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->faulted, &expected, 1) && dim < 0) {
        /* (dim < 0: another run-time error, `site` its whole message; mbar_c.c) */
        ts_buf_printf(&s->fault_msg, "%s (block (%lld, %lld, %lld))\n%s", site, (long long)block[0],
                      (long long)block[1], (long long)block[2], source);
    } else if (expected == 0) {
        ts_buf_printf(&s->fault_msg, "%s: index %lld of dimension %d is outside [0, %lld) in block (%lld, %lld, %lld)\n%s",
                      site, (long long)index, (int)dim, (long long)extent, (long long)block[0],
                      (long long)block[1], (long long)block[2], source);
    }
    set_failed(s, TS_ERR_RUNTIME);
}

static void sched_fault(void *ctx, const char *site, const char *source, int32_t dim, int64_t index,
                        int64_t extent, const int64_t *block);

int ts_c_launch_failed(const TsCArgs *a) {
    if (a->fault != sched_fault) return 0; /* not launched by ts_c_run (unit tests) */
    Sched *s = a->fault_ctx;
    return atomic_load_explicit(&s->failed, memory_order_relaxed) != TS_OK;
}

/* yield for kernels run without coroutines: let other threads run. */
static void thread_yield(void *ctx) {
    (void)ctx;
    sched_yield();
}

/* ---- ordinary kernels --------------------------------------------------------- */

static void *run_plain(void *arg) {
    Worker *w = arg;
    Sched *s = w->s;
    void *scratch = NULL;
    if (s->scratch && posix_memalign(&scratch, TS_C_SCRATCH_ALIGN, s->scratch) != 0) {
        set_failed(s, TS_ERR_NOMEM);
        return NULL;
    }
    TsCBlock b;
    memset(&b, 0, sizeof b);
    b.scratch = scratch;
    while (atomic_load_explicit(&s->failed, memory_order_relaxed) == TS_OK) {
        int64_t n = atomic_fetch_add(&s->next, 1);
        if (n >= s->total) break;
        block_index(s, n, b.idx);
        s->m->block(&s->args, &b);
    }
    free(scratch);
    return NULL;
}

/* ---- coroutines --------------------------------------------------------------- */

static void coro_yield(void *ctx) {
    Coro *c = ctx;
    swapcontext(&c->uc, &c->w->home);
}

/* makecontext passes int arguments only: the Coro pointer comes in halves. */
static void coro_entry(unsigned lo, unsigned hi) {
    Coro *c = (Coro *)(uintptr_t)(((uint64_t)hi << 32) | lo);
    Sched *s = c->w->s;
    s->m->block(&s->args, &c->blk);
    c->done = 1; /* returning resumes uc_link: the scheduler loop */
}

static void coro_unmap(Coro *c) {
    munmap(c->mem, c->mem_size);
    free(c);
}

/* A coroutine ready to run block n: from the pool, or freshly mapped. */
static Coro *coro_get(Worker *w) {
    Sched *s = w->s;
    Coro *c;
    if (w->npool) return w->pool[--w->npool];
    c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->mem_size = s->page + CORO_STACK + s->scratch;
    void *mem = mmap(NULL, c->mem_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) {
        free(c);
        return NULL;
    }
    c->mem = mem;
    mprotect(c->mem, s->page, PROT_NONE); /* guard page below the stack */
    c->w = w;
    return c;
}

static int coro_start(Worker *w, Coro *c, int64_t n) {
    Sched *s = w->s;
    if (getcontext(&c->uc) != 0) return -1;
    c->uc.uc_stack.ss_sp = c->mem + s->page;
    c->uc.uc_stack.ss_size = CORO_STACK;
    c->uc.uc_link = &w->home;
    c->done = 0;
    memset(&c->blk, 0, sizeof c->blk);
    block_index(s, n, c->blk.idx);
    c->blk.scratch = s->scratch ? c->mem + s->page + CORO_STACK : NULL;
    c->blk.yield_ctx = c;
    uint64_t p = (uint64_t)(uintptr_t)c;
    makecontext(&c->uc, (void (*)(void))coro_entry, 2, (unsigned)(p & 0xffffffffu), (unsigned)(p >> 32));
    return 0;
}

static int push(Coro ***v, int *n, int *cap, Coro *c) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        Coro **nv = realloc(*v, sizeof **v * (size_t)nc);
        if (!nv) return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = c;
    return 0;
}

/* Take one more block if there is one.  Returns 1 if admitted, 0 if the
 * grid is exhausted, -1 if memory ran out. */
static int admit(Worker *w) {
    Sched *s = w->s;
    if (atomic_load_explicit(&s->next, memory_order_relaxed) >= s->total) return 0;
    Coro *c = coro_get(w);
    if (!c) return -1;
    int64_t n = atomic_fetch_add(&s->next, 1);
    if (n >= s->total) {
        if (push(&w->pool, &w->npool, &w->cap_pool, c) != 0) coro_unmap(c);
        return 0;
    }
    if (coro_start(w, c, n) != 0 || push(&w->live, &w->nlive, &w->cap_live, c) != 0) {
        coro_unmap(c);
        set_failed(s, TS_ERR_NOMEM); /* block n is lost: the launch cannot complete */
        return -1;
    }
    return 1;
}

static void *run_coro(void *arg) {
    Worker *w = arg;
    Sched *s = w->s;
    int exhausted = 0;
    int yields = 0; /* yields since the last admission */
    int rr = 0;     /* next live coroutine to resume */
    while (atomic_load_explicit(&s->failed, memory_order_relaxed) == TS_OK) {
        if (!exhausted && (w->nlive == 0 || yields >= w->nlive)) {
            int r = admit(w);
            if (r == 0) exhausted = 1;
            if (r == 1) yields = 0;
            if (r < 0 && w->nlive == 0) {
                set_failed(s, TS_ERR_NOMEM);
                break;
            }
        }
        if (w->nlive == 0) {
            if (exhausted) break;
            continue;
        }
        if (rr >= w->nlive) rr = 0;
        Coro *c = w->live[rr];
        if (swapcontext(&w->home, &c->uc) != 0) {
            set_failed(s, TS_ERR_RUNTIME);
            break;
        }
        if (c->done) {
            w->live[rr] = w->live[--w->nlive]; /* rr now holds an unvisited one */
            if (push(&w->pool, &w->npool, &w->cap_pool, c) != 0) coro_unmap(c);
        } else {
            yields++;
            rr++;
            /* Everything here waits on blocks elsewhere: give the core away
             * for a moment instead of spinning through contexts. */
            if (exhausted && yields >= w->nlive) {
                yields = 0;
                sched_yield();
            }
        }
    }
    /* On failure, live coroutines are abandoned mid-block: just unmap them. */
    for (int i = 0; i < w->nlive; i++) coro_unmap(w->live[i]);
    for (int i = 0; i < w->npool; i++) coro_unmap(w->pool[i]);
    free(w->live);
    free(w->pool);
    w->live = w->pool = NULL;
    w->nlive = w->npool = 0;
    return NULL;
}

/* ---- launch --------------------------------------------------------------------- */

TsStatus ts_c_run(TsDiag *d, const TsModuleC *m, const TsCArgs *a, const int64_t grid[3],
                  int nthreads) {
    Sched s;
    memset(&s, 0, sizeof s);
    s.m = m;
    s.args = *a;
    int64_t total = 1;
    for (int i = 0; i < 3; i++) {
        if (grid[i] < 0) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s: grid extent %c is %lld", m->info.name,
                        "xyz"[i], (long long)grid[i]);
            return d->status = TS_ERR_RUNTIME;
        }
        if (grid[i] == 0) total = 0;
        else if (total > ((int64_t)1 << 62) / grid[i]) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s: grid of %lld x %lld x %lld blocks is too large",
                        m->info.name, (long long)grid[0], (long long)grid[1], (long long)grid[2]);
            return d->status = TS_ERR_RUNTIME;
        } else total *= grid[i];
        s.grid[i] = grid[i];
    }
    if (total == 0) return TS_OK;
    s.total = total;
    atomic_init(&s.next, 0);
    atomic_init(&s.failed, TS_OK);
    long page = sysconf(_SC_PAGESIZE);
    s.page = page > 0 ? (size_t)page : 4096;
    s.scratch = (size_t)m->info.scratch_bytes;
    if (m->info.may_block) s.scratch = (s.scratch + s.page - 1) / s.page * s.page;
    s.args.yield = m->info.may_block ? coro_yield : thread_yield;
    if (!s.args.print) s.args.print = ts_c_print_stdout;
    s.args.fault = sched_fault;
    s.args.fault_ctx = &s;
    /* The grid workspace (T.sync_grid's count, block collectives' staging):
     * zeroed, one per launch, so concurrent launches of one module (sim
     * ranks) never share it. */
    unsigned char *gws = NULL;
    if (m->info.grid_ws_bytes > 0) {
        gws = calloc(1, (size_t)m->info.grid_ws_bytes);
        if (!gws) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s: out of memory for its %lld-byte grid workspace", m->info.name,
                        (long long)m->info.grid_ws_bytes);
            return d->status = TS_ERR_NOMEM;
        }
    }
    s.args.grid_ws = gws;
    ts_c_threads_fill(&s.args);
    atomic_init(&s.faulted, 0);

    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    if (nthreads > 1024) nthreads = 1024;
    if ((int64_t)nthreads > total) nthreads = (int)total;
    Worker *w = calloc((size_t)nthreads, sizeof *w);
    if (!w) {
        free(gws);
        ts_diag_add(d, (TsLoc){0}, "error", "%s: out of memory starting %d workers", m->info.name,
                    nthreads);
        return d->status = TS_ERR_NOMEM;
    }
    void *(*fn)(void *) = m->info.may_block ? run_coro : run_plain;
    for (int i = 0; i < nthreads; i++) w[i].s = &s;
    /* Fewer threads than asked is fine: any number of workers finishes the grid. */
    for (int i = 1; i < nthreads; i++) w[i].started = pthread_create(&w[i].thread, NULL, fn, &w[i]) == 0;
    fn(&w[0]);
    for (int i = 1; i < nthreads; i++)
        if (w[i].started) pthread_join(w[i].thread, NULL);
    free(w);
    free(gws);

    TsStatus st = (TsStatus)atomic_load(&s.failed);
    if (atomic_load(&s.faulted)) {
        ts_buf_puts(&d->msg, ts_buf_str(&s.fault_msg));
        ts_buf_free(&s.fault_msg);
        return d->status = TS_ERR_RUNTIME;
    }
    if (st != TS_OK) {
        ts_diag_add(d, (TsLoc){0}, "error", "%s: %s while running the kernel's blocks", m->info.name,
                    st == TS_ERR_NOMEM ? "out of memory for block stacks or scratch"
                                       : "a block could not be scheduled");
        d->status = st;
    }
    return st;
}
