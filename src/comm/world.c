/*
 * world.c — the world, its symmetric heaps and the `sim` backend.
 *
 * sim: the N heaps are N zero-filled allocations of this process; rank r's
 * kernel runs on its own thread (one CPU worker each, blocks of blocking
 * kernels as coroutines, see target/c/sched_c.c), so a rank spinning on a
 * flag never keeps the rank that sets it from running.  A remote access
 * is a plain (or atomic) access to another rank's heap, which is exactly
 * what peer-to-peer loads and stores are on GPUs.
 *
 * Symmetric allocation is a bump pointer shared by all ranks (a world is
 * driven by one host thread), so "the same offset on every rank" holds by
 * construction here; the launch still checks that every heap tensor of a
 * kernel sits at one offset with one shape on all ranks, since that is
 * what the kernels assume and what goes wrong first when host code
 * allocates in a different order per rank.
 *
 * A launch: reset the failure sink and the barrier words, start one thread
 * per rank running the kernel chain through ts_launch_env with its own
 * diagnostic, join, then report the first rank's launch error, else the
 * first run-time failure (a wait that timed out, a peer out of range...).
 */
#include "comm/world.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/launch.h"

/* ---- failure sink, clock ---------------------------------------------------- */

static void buf_clear(TsBuf *b) {
    b->n = 0;
    if (b->s) b->s[0] = 0;
}

void ts_comm_sink_init(TsCommSink *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
}

void ts_comm_sink_free(TsCommSink *s) {
    ts_buf_free(&s->msg);
    pthread_mutex_destroy(&s->mu);
}

void ts_comm_sink_fail(void *sink, const char *text) {
    TsCommSink *s = sink;
    pthread_mutex_lock(&s->mu);
    if (!s->msg.n) ts_buf_puts(&s->msg, text ? text : "a distributed primitive failed");
    pthread_mutex_unlock(&s->mu);
    __atomic_store_n(&s->aborted, 1, __ATOMIC_RELEASE);
}

int64_t ts_comm_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t ts_comm_default_timeout_ms(void) {
    const char *e = getenv("TILESCALE_WAIT_TIMEOUT");
    if (e && *e) {
        char *end;
        double s = strtod(e, &end);
        if (end != e && s > 0 && s < 1e9) return (int64_t)(s * 1000.0 + 0.5);
    }
    return 60 * 1000;
}

/* ---- world, heaps ------------------------------------------------------------ */

TsStatus ts_world_fail(TsContext *ctx, TsStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    buf_clear(&ctx->diag.msg);
    ts_diag_vadd(&ctx->diag, (TsLoc){0}, "error", fmt, ap);
    va_end(ap);
    ctx->diag.status = st;
    return st;
}

TsStatus ts_world_create(TsContext *ctx, const TsWorldOptions *opt, TsWorld **out) {
    if (!ctx || !opt || !out) return TS_ERR_INVALID;
    *out = NULL;
    TsWorldOptions o = *opt;
    if (o.backend != TS_WORLD_SIM && o.backend != TS_WORLD_LOCAL)
        return ts_world_fail(ctx, TS_ERR_UNSUPPORTED, "world: unknown backend %d (sim or local)", (int)o.backend);
    if (o.nranks < 1 || o.nranks > TS_WORLD_MAX_RANKS)
        return ts_world_fail(ctx, TS_ERR_INVALID, "world: %d ranks (1..%d)", o.nranks, TS_WORLD_MAX_RANKS);
    if (o.heap_bytes == 0) o.heap_bytes = (int64_t)64 << 20;
    if (o.heap_bytes < TS_WORLD_SYS_BYTES || o.heap_bytes > ((int64_t)1 << 40))
        return ts_world_fail(ctx, TS_ERR_INVALID, "world: heap size %lld bytes is out of range",
                          (long long)o.heap_bytes);
    o.heap_bytes = (o.heap_bytes + TS_WORLD_ALIGN - 1) / TS_WORLD_ALIGN * TS_WORLD_ALIGN;
    if (o.wait_timeout_ms <= 0) o.wait_timeout_ms = ts_comm_default_timeout_ms();
    TsWorld *w = calloc(1, sizeof *w);
    if (!w) return ts_world_fail(ctx, TS_ERR_NOMEM, "world: out of memory");
    w->ctx = ctx;
    w->opt = o;
    w->used = TS_WORLD_SYS_BYTES;
    ts_comm_sink_init(&w->sink);
    w->base = calloc((size_t)o.nranks, sizeof *w->base);
    if (!w->base) {
        ts_world_destroy(w);
        return ts_world_fail(ctx, TS_ERR_NOMEM, "world: out of memory");
    }
    if (o.backend == TS_WORLD_LOCAL) {
        TsStatus st = ts_local_create(w);
        if (st) {
            ts_world_destroy(w);
            return st;
        }
        *out = w;
        return TS_OK;
    }
    for (int r = 0; r < o.nranks; r++) {
        w->base[r] = aligned_alloc(TS_WORLD_ALIGN, (size_t)o.heap_bytes);
        if (!w->base[r]) {
            ts_world_destroy(w);
            return ts_world_fail(ctx, TS_ERR_NOMEM, "world: cannot allocate %lld-byte heaps for %d ranks",
                              (long long)o.heap_bytes, o.nranks);
        }
        memset(w->base[r], 0, (size_t)o.heap_bytes);
    }
    *out = w;
    return TS_OK;
}

void ts_world_destroy(TsWorld *w) {
    if (!w) return;
    if (w->local) ts_local_destroy(w);
    else
        for (int r = 0; w->base && r < w->opt.nranks; r++) free(w->base[r]);
    free(w->base);
    ts_comm_sink_free(&w->sink);
    free(w);
}

int ts_world_nranks(const TsWorld *w) { return w ? w->opt.nranks : 0; }

TsStatus ts_world_alloc(TsWorld *w, int64_t bytes, int64_t *offset) {
    if (!w || !offset || bytes < 0) return TS_ERR_INVALID;
    int64_t size = (bytes + TS_WORLD_ALIGN - 1) / TS_WORLD_ALIGN * TS_WORLD_ALIGN;
    if (size > w->opt.heap_bytes - w->used)
        return ts_world_fail(w->ctx, TS_ERR_NOMEM,
                          "world: symmetric heap exhausted: %lld bytes wanted, %lld of %lld left",
                          (long long)bytes, (long long)(w->opt.heap_bytes - w->used),
                          (long long)w->opt.heap_bytes);
    *offset = w->used;
    if (!w->local)
        for (int r = 0; r < w->opt.nranks; r++) memset((char *)w->base[r] + w->used, 0, (size_t)size);
    w->used += size; /* local heaps are zeroed when created */
    return TS_OK;
}

/* Copy between host memory and a rank's heap (sim: memcpy). */
static TsStatus world_copy(TsWorld *w, int to_heap, int rank, int64_t offset, void *host, int64_t bytes) {
    if (!w || !host || rank < 0 || rank >= w->opt.nranks || offset < 0 || bytes < 0 ||
        bytes > w->opt.heap_bytes - offset)
        return w ? ts_world_fail(w->ctx, TS_ERR_INVALID, "world: copy of %lld bytes at offset %lld of rank %d's heap is out of range",
                                 (long long)bytes, (long long)offset, rank)
                 : TS_ERR_INVALID;
    char *p = (char *)w->base[rank] + offset;
    if (w->local) return ts_local_copy(w, to_heap, p, host, bytes);
    if (to_heap) memcpy(p, host, (size_t)bytes);
    else memcpy(host, p, (size_t)bytes);
    return TS_OK;
}

TsStatus ts_world_write(TsWorld *w, int rank, int64_t offset, const void *src, int64_t bytes) {
    return world_copy(w, 1, rank, offset, (void *)src, bytes);
}

TsStatus ts_world_read(TsWorld *w, int rank, int64_t offset, void *dst, int64_t bytes) {
    return world_copy(w, 0, rank, offset, dst, bytes);
}

int64_t ts_world_offset(const TsWorld *w, int rank, const void *p) {
    if (!w || rank < 0 || rank >= w->opt.nranks || !p) return -1;
    const char *b = w->base[rank], *q = p;
    return q >= b && q < b + w->opt.heap_bytes ? (int64_t)(q - b) : -1;
}

void *ts_world_ptr(TsWorld *w, int rank, int64_t offset) {
    if (!w || rank < 0 || rank >= w->opt.nranks || offset < 0 || offset >= w->opt.heap_bytes) return NULL;
    return (char *)w->base[rank] + offset;
}

TsStatus ts_world_tensor(TsWorld *w, TsDType dt, int ndim, const int64_t *shape, TsTensor *out) {
    if (!w || !out || ndim < 0 || (ndim > 0 && !shape) || !ts_dtype_info(dt)) return TS_ERR_INVALID;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && n > ((int64_t)1 << 40) / shape[i])) return TS_ERR_INVALID;
        n *= shape[i];
    }
    int64_t off;
    TsStatus st = ts_world_alloc(w, n * ((ts_dtype_bits(dt) + 7) / 8), &off);
    if (st) return st;
    for (int r = 0; r < w->opt.nranks; r++)
        out[r] = (TsTensor){ts_world_ptr(w, r, off), dt, ndim, shape, NULL};
    return TS_OK;
}

/* ---- launching on every rank ------------------------------------------------------ */

typedef struct RankRun {
    TsKernel *k;          /* the chain's head */
    const TsTensor *args; /* this rank's nargs tensors */
    int nargs;
    TsRankEnv env;        /* its rank, heaps, sink */
    int64_t *sync_base;   /* barrier words of the chain (rank 0's reserved head) */
    TsDiag diag;          /* its own diagnostic (ranks run concurrently) */
    TsStatus st;          /* its launch status */
} RankRun;

static void *rank_main(void *p) {
    RankRun *R = p;
    int i = 0;
    R->st = TS_OK;
    for (TsKernel *c = R->k; c && R->st == TS_OK; c = c->next, i++) {
        R->env.sync_words = R->sync_base + (i % TS_WORLD_MAX_CHAIN);
        R->st = ts_launch_env(c, R->args, R->nargs, &R->diag, &R->env);
    }
    /* a rank that could not start stops the others' waits */
    if (R->st != TS_OK) __atomic_store_n(&R->env.sink->aborted, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int64_t heap_offset(const TsWorld *w, int r, const void *p) { return ts_world_offset(w, r, p); }

/* Every heap tensor at one offset with one shape on all ranks. */
static TsStatus check_symmetric(TsWorld *w, TsKernel *k, const TsTensor *args, int nargs) {
    int n = w->opt.nranks;
    for (int i = 0; i < nargs; i++) {
        const TsTensor *t0 = &args[i];
        int64_t off0 = heap_offset(w, 0, t0->data);
        const char *pn = i < k->ir->params.n && k->ir->params.v[i].name ? k->ir->params.v[i].name : "?";
        for (int r = 1; r < n; r++) {
            const TsTensor *t = &args[(size_t)r * (size_t)nargs + (size_t)i];
            int64_t off = heap_offset(w, r, t->data);
            if ((off0 < 0) != (off < 0))
                return ts_world_fail(w->ctx, TS_ERR_INVALID,
                                  "%s: argument %s is on the symmetric heap on rank %d but not on rank %d",
                                  k->ir->name, pn, off0 < 0 ? r : 0, off0 < 0 ? 0 : r);
            if (off0 < 0) continue;
            if (off != off0)
                return ts_world_fail(w->ctx, TS_ERR_INVALID,
                                  "%s: argument %s is at heap offset %lld on rank 0 but %lld on rank %d "
                                  "(symmetric tensors must be allocated in the same order on every rank)",
                                  k->ir->name, pn, (long long)off0, (long long)off, r);
            int same = t->ndim == t0->ndim && t->dtype == t0->dtype;
            for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == t0->shape[d];
            if (!same)
                return ts_world_fail(w->ctx, TS_ERR_SHAPE,
                                  "%s: argument %s has a different shape or dtype on rank %d than on rank 0 "
                                  "(symmetric tensors are the same on every rank)",
                                  k->ir->name, pn, r);
        }
    }
    return TS_OK;
}

TsStatus ts_kernel_launch_world(TsKernel *k, TsWorld *w, const TsTensor *args, int nargs) {
    if (!k || !w || (nargs > 0 && !args)) return TS_ERR_INVALID;
    if (k->ctx != w->ctx) return ts_world_fail(k->ctx, TS_ERR_INVALID, "the kernel and the world belong to different contexts");
    if (!k->cmod && !k->cumod)
        return ts_world_fail(w->ctx, TS_ERR_INVALID, "this kernel was compiled without a build (skip_build)");
    if (k->target != (w->local ? TS_TARGET_CUDA : TS_TARGET_C))
        return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED, "%s: the %s world runs kernels of the %s target", k->ir->name,
                             w->local ? "local" : "sim", w->local ? "CUDA" : "C");
    TsStatus st = check_symmetric(w, k, args, nargs);
    if (st) return st;
    if (w->local) return ts_local_launch(w, k, args, nargs);
    int n = w->opt.nranks;
    buf_clear(&w->sink.msg);
    w->sink.aborted = 0;
    memset(w->base[0], 0, TS_WORLD_SYS_BYTES);
    RankRun *runs = calloc((size_t)n, sizeof *runs);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!runs || !th) {
        free(runs);
        free(th);
        return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world: out of memory");
    }
    int started = 0;
    for (int r = 0; r < n; r++) {
        RankRun *R = &runs[r];
        R->k = k;
        R->args = args + (size_t)r * (size_t)nargs;
        R->nargs = nargs;
        R->env = (TsRankEnv){r, n, w->base, w->opt.heap_bytes, NULL, &w->sink, w->opt.wait_timeout_ms, 1, NULL};
        R->sync_base = (int64_t *)w->base[0];
    }
    for (int r = 0; r < n; r++) {
        if (pthread_create(&th[r], NULL, rank_main, &runs[r]) != 0) {
            ts_comm_sink_fail(&w->sink, "world: cannot start a thread for every rank");
            break;
        }
        started++;
    }
    for (int r = 0; r < started; r++) pthread_join(th[r], NULL);

    buf_clear(&w->ctx->diag.msg);
    st = TS_OK;
    for (int r = 0; r < started && st == TS_OK; r++)
        if (runs[r].st != TS_OK) {
            st = runs[r].st;
            ts_buf_printf(&w->ctx->diag.msg, "rank %d: %s", r, ts_buf_str(&runs[r].diag.msg));
        }
    if (st == TS_OK && (w->sink.msg.n || started < n)) {
        st = TS_ERR_RUNTIME;
        ts_buf_printf(&w->ctx->diag.msg, "error: %s\n", ts_buf_str(&w->sink.msg));
    }
    w->ctx->diag.status = st;
    for (int r = 0; r < n; r++) ts_buf_free(&runs[r].diag.msg);
    free(runs);
    free(th);
    return st;
}
