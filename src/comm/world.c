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
 *
 * Nodes (TsWorldOptions.ranks_per_node): rank r is on node r / ranks_per_node.
 * A GPU reaches the heaps of its node's GPUs by load and store (NCCL's LSA
 * team) and nothing else; a rank of another node is reached through a
 * network engine (NCCL's GIN: puts and signals into a registered window,
 * named by peer and offset).  sim ranks emulate that exactly: each rank's
 * peer table holds NULL for the ranks of other nodes (a kernel that
 * forms an address there dereferences NULL, and the generated address
 * check names the node), and the kernels compiled for several nodes
 * (TsCompileOptions.multinode) send those accesses to the world's proxy:
 * a thread serving one FIFO queue of requests (TsCXport: put, get, atomic
 * add, quiet) against the real heaps, in the order they were queued, as
 * a NIC's proxy would.  T.barrier_all's counter on rank 0's heap is
 * reached the same way by the ranks of the other nodes.
 */
#include "comm/world.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "comm/rdzv.h"
#include "runtime/launch.h"
#include "target/c/c_target.h"

static TsStatus proc_create(TsWorld *w, const TsLaunchEnv *env);
static void proc_destroy(TsWorld *w);

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

static TsStatus world_create(TsContext *ctx, const TsWorldOptions *opt, TsWorld **out, TsLaunchEnv *env);

TsStatus ts_world_create(TsContext *ctx, const TsWorldOptions *opt, TsWorld **out) {
    TsLaunchEnv env = {0};
    TsStatus st = world_create(ctx, opt, out, &env);
    ts_launch_env_free(&env); /* the rendezvous keeps its own copy */
    return st;
}

static TsStatus world_create(TsContext *ctx, const TsWorldOptions *opt, TsWorld **out, TsLaunchEnv *env) {
    if (!ctx || !opt || !out) return TS_ERR_INVALID;
    *out = NULL;
    TsWorldOptions o = *opt;
    if (o.backend != TS_WORLD_SIM && o.backend != TS_WORLD_LOCAL && o.backend != TS_WORLD_PROC &&
        o.backend != TS_WORLD_IPC)
        return ts_world_fail(ctx, TS_ERR_UNSUPPORTED, "world: unknown backend %d (sim, local, proc or ipc)",
                             (int)o.backend);
    int per_process = o.backend == TS_WORLD_PROC || o.backend == TS_WORLD_IPC;
    if (per_process) {
        TsBuf err = {0};
        int ok = ts_launch_env_read(env, &err);
        if (ok && o.nranks && o.nranks != env->nranks)
            ts_buf_printf(&err, "world: %d ranks asked for, but the launcher started %d (rank %d of %d)", o.nranks,
                          env->nranks, env->rank, env->nranks);
        if (!ok || (o.nranks && o.nranks != env->nranks)) {
            ts_world_fail(ctx, TS_ERR_INVALID, "%s", ts_buf_str(&err));
            ts_buf_free(&err);
            return TS_ERR_INVALID;
        }
        o.nranks = env->nranks;
    }
    if (o.nranks < 1 || o.nranks > TS_WORLD_MAX_RANKS)
        return ts_world_fail(ctx, TS_ERR_INVALID, "world: %d ranks (1..%d)", o.nranks, TS_WORLD_MAX_RANKS);
    if (o.heap_bytes == 0) o.heap_bytes = (int64_t)64 << 20;
    if (o.heap_bytes < TS_WORLD_SYS_BYTES || o.heap_bytes > ((int64_t)1 << 40))
        return ts_world_fail(ctx, TS_ERR_INVALID, "world: heap size %lld bytes is out of range",
                          (long long)o.heap_bytes);
    o.heap_bytes = (o.heap_bytes + TS_WORLD_ALIGN - 1) / TS_WORLD_ALIGN * TS_WORLD_ALIGN;
    if (o.wait_timeout_ms <= 0) o.wait_timeout_ms = ts_comm_default_timeout_ms();
    if (o.ranks_per_node == 0 && !per_process) {
        const char *e = getenv("TILESCALE_RANKS_PER_NODE");
        if (e && *e) {
            char *end;
            long v = strtol(e, &end, 10);
            if (*end || v < 1)
                return ts_world_fail(ctx, TS_ERR_INVALID, "world: TILESCALE_RANKS_PER_NODE=%s is not a positive integer", e);
            o.ranks_per_node = v > o.nranks ? o.nranks : (int)v; /* more than the world: one node */
        }
    }
    if (o.ranks_per_node < 0 || o.ranks_per_node > o.nranks)
        return ts_world_fail(ctx, TS_ERR_INVALID, "world: %d ranks per node in a world of %d ranks", o.ranks_per_node,
                             o.nranks);
    if (o.ranks_per_node == 0 || per_process) o.ranks_per_node = o.nranks; /* proc/ipc: the launcher's nodes */
    if (o.backend == TS_WORLD_LOCAL && o.ranks_per_node < o.nranks)
        return ts_world_fail(ctx, TS_ERR_UNSUPPORTED,
                             "world (local): %d ranks per node of %d: the local world's ranks share this process's "
                             "GPUs, which reach each other by load and store; nodes are emulated by sim ranks "
                             "(--target c), and real ones need one process per GPU (ipc through NCCL)",
                             o.ranks_per_node, o.nranks);
    TsWorld *w = calloc(1, sizeof *w);
    if (!w) return ts_world_fail(ctx, TS_ERR_NOMEM, "world: out of memory");
    w->ctx = ctx;
    w->opt = o;
    w->used = TS_WORLD_SYS_BYTES;
    w->self = -1;
    w->dev_share = o.nranks;
    ts_comm_sink_init(&w->sink);
    w->base = calloc((size_t)o.nranks, sizeof *w->base);
    if (!w->base) {
        ts_world_destroy(w);
        return ts_world_fail(ctx, TS_ERR_NOMEM, "world: out of memory");
    }
    if (per_process) {
        TsStatus st = proc_create(w, env);
        if (st) {
            ts_world_destroy(w);
            return st;
        }
        *out = w;
        return TS_OK;
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
    if (w->rdzv) proc_destroy(w);
    if (w->local) ts_local_destroy(w);
    else
        for (int r = 0; w->base && r < w->opt.nranks; r++) free(w->base[r]);
    free(w->base);
    ts_comm_sink_free(&w->sink);
    ts_buf_free(&w->warnings);
    free(w);
}

int ts_world_nranks(const TsWorld *w) { return w ? w->opt.nranks : 0; }

int ts_world_rank(const TsWorld *w) { return w ? w->self : -1; }

const char *ts_world_warnings(const TsWorld *w) { return w && w->warnings.s ? w->warnings.s : ""; }

int ts_world_node(const TsWorld *w, int rank, int *local_rank) {
    if (w && !w->rdzv && rank >= 0 && rank < w->opt.nranks) { /* sim/local: r / ranks_per_node */
        int per = w->opt.ranks_per_node > 0 ? w->opt.ranks_per_node : w->opt.nranks;
        if (local_rank) *local_rank = rank % per;
        return rank / per;
    }
    int one = !w || !w->rdzv || rank < 0 || rank >= w->opt.nranks;
    if (local_rank) *local_rank = one ? rank : ts_rdzv_local(w->rdzv, rank);
    return one ? 0 : ts_rdzv_node(w->rdzv, rank);
}

int64_t ts_world_xport_served(const TsWorld *w) { return w ? w->xport_served : 0; }

int ts_world_ranks_per_node(const TsWorld *w) {
    if (!w) return 0;
    if (!w->rdzv) return w->opt.ranks_per_node > 0 ? w->opt.ranks_per_node : w->opt.nranks;
    int n = 0; /* proc/ipc: the ranks of rank 0's node, as the launcher numbered them */
    for (int r = 0; r < w->opt.nranks; r++) n += ts_rdzv_node(w->rdzv, r) == ts_rdzv_node(w->rdzv, 0);
    return n;
}

int ts_world_same_node(const TsWorld *w, int a, int b) {
    if (!w || a < 0 || b < 0 || a >= w->opt.nranks || b >= w->opt.nranks) return 0;
    return ts_world_node(w, a, NULL) == ts_world_node(w, b, NULL);
}

int ts_world_launched(int *nranks) {
    if (!ts_launch_env_present()) return 0;
    TsLaunchEnv e;
    TsBuf err = {0};
    int ok = ts_launch_env_read(&e, &err);
    ts_buf_free(&err);
    ts_launch_env_free(&e);
    if (nranks) *nranks = ok ? e.nranks : 0;
    return 1;
}

int ts_world_device_count(void) { return ts_local_device_count(); }

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
        for (int r = 0; r < w->opt.nranks; r++)
            if (w->self < 0 || r == w->self) memset((char *)w->base[r] + w->used, 0, (size_t)size);
    w->used += size; /* device heaps are zeroed when created; a peer zeroes its own */
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

/* ---- the transport between emulated nodes (sim) ------------------------------------ */

/* One queued request; PUT's bytes follow it. */
typedef struct XReq {
    struct XReq *next;  /* the queue */
    TsCXport r;         /* the request (r.local of a PUT points at data) */
    int wait;           /* the caller waits for it (GET, ADD with a value, QUIET) */
    int done;           /* set by the proxy (under Xport.mu) once done */
    unsigned char data[]; /* PUT: a copy of the source */
} XReq;

/* The proxy: one thread serving one FIFO queue against the real heaps. */
typedef struct Xport {
    pthread_mutex_t mu;    /* guards everything below */
    pthread_cond_t work;   /* the proxy waits here for requests */
    pthread_cond_t done;   /* callers wait here for theirs */
    XReq *head, *tail;     /* the queue */
    int stop;              /* no more requests: drain and end */
    void *const *base;     /* [nranks] the real heap bases */
    int64_t heap_bytes;    /* each heap's size */
    int nranks;            /* number of ranks */
    int64_t served;        /* requests done (for tests: ts_world_xport_served) */
} Xport;

/* Does one request against the heaps (the proxy thread). */
static void xport_do(Xport *x, XReq *q) {
    TsCXport *r = &q->r;
    char *at = (char *)x->base[r->peer] + r->off;
    switch (r->op) {
    case TS_C_XPORT_PUT:
        /* an aligned word is one release store (a signal set); data is moved, then released */
        if (r->bytes == 4 && !(r->off & 3)) __atomic_store_n((uint32_t *)(void *)at, *(uint32_t *)(void *)q->data, __ATOMIC_RELEASE);
        else if (r->bytes == 8 && !(r->off & 7)) __atomic_store_n((uint64_t *)(void *)at, *(uint64_t *)(void *)q->data, __ATOMIC_RELEASE);
        else {
            memmove(at, q->data, (size_t)r->bytes);
            __atomic_thread_fence(__ATOMIC_RELEASE);
        }
        break;
    case TS_C_XPORT_GET:
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memmove(r->local, at, (size_t)r->bytes);
        break;
    case TS_C_XPORT_ADD: {
        unsigned char old[8];
        if (!r->is_float && r->bytes == 4) {
            uint32_t o = __atomic_fetch_add((uint32_t *)(void *)at, (uint32_t)r->ival, __ATOMIC_ACQ_REL);
            memcpy(old, &o, 4);
        } else if (!r->is_float) {
            uint64_t o = __atomic_fetch_add((uint64_t *)(void *)at, (uint64_t)r->ival, __ATOMIC_ACQ_REL);
            memcpy(old, &o, 8);
        } else if (r->bytes == 4) {
            uint32_t o = __atomic_load_n((uint32_t *)(void *)at, __ATOMIC_ACQUIRE), nw;
            float f;
            do {
                memcpy(&f, &o, 4);
                f = (float)((double)f + r->fval);
                memcpy(&nw, &f, 4);
            } while (!__atomic_compare_exchange_n((uint32_t *)(void *)at, &o, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
            memcpy(old, &o, 4);
        } else {
            uint64_t o = __atomic_load_n((uint64_t *)(void *)at, __ATOMIC_ACQUIRE), nw;
            double f;
            do {
                memcpy(&f, &o, 8);
                f += r->fval;
                memcpy(&nw, &f, 8);
            } while (!__atomic_compare_exchange_n((uint64_t *)(void *)at, &o, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
            memcpy(old, &o, 8);
        }
        if (r->local) memcpy(r->local, old, (size_t)r->bytes);
        break;
    }
    default: break; /* QUIET: every earlier request is done (one FIFO) */
    }
}

static void *xport_main(void *p) {
    Xport *x = p;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        while (!x->head && !x->stop) pthread_cond_wait(&x->work, &x->mu);
        XReq *q = x->head;
        if (!q) break; /* stopped and drained */
        x->head = q->next;
        if (!x->head) x->tail = NULL;
        pthread_mutex_unlock(&x->mu);
        xport_do(x, q);
        pthread_mutex_lock(&x->mu);
        x->served++;
        if (q->wait) {
            q->done = 1;
            pthread_cond_broadcast(&x->done);
        } else {
            free(q);
        }
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* TsCXportFn: the generated code's side (any rank's thread). */
static int xport_call(void *ctx, const TsCXport *req) {
    Xport *x = ctx;
    int quiet = req->op == TS_C_XPORT_QUIET;
    if (!quiet) {
        int64_t b = req->bytes;
        if (req->peer < 0 || req->peer >= x->nranks || req->off < 0 || b < 0 || b > x->heap_bytes - req->off) return 1;
        if (req->op == TS_C_XPORT_ADD && ((b != 4 && b != 8) || (req->off & (b - 1)))) return 1;
        if (b == 0 && req->op != TS_C_XPORT_ADD) return 0;
    }
    size_t extra = req->op == TS_C_XPORT_PUT ? (size_t)req->bytes : 0;
    XReq *q = calloc(1, sizeof *q + extra);
    if (!q) return 1;
    q->r = *req;
    if (extra) memcpy(q->data, req->local, extra); /* the source may change once the call returns */
    q->wait = req->op == TS_C_XPORT_GET || quiet || (req->op == TS_C_XPORT_ADD && req->local);
    pthread_mutex_lock(&x->mu);
    if (x->tail) x->tail->next = q;
    else x->head = q;
    x->tail = q;
    pthread_cond_signal(&x->work);
    if (q->wait) {
        while (!q->done) pthread_cond_wait(&x->done, &x->mu);
        free(q);
    }
    pthread_mutex_unlock(&x->mu);
    return 0;
}

/* ---- launching on every rank ------------------------------------------------------ */

typedef struct RankRun {
    TsKernel *k;          /* the chain's head */
    const TsTensor *args; /* this rank's nargs tensors */
    int nargs;
    TsRankEnv env;        /* its rank, heaps, sink */
    int64_t *sync_base;   /* barrier words of the chain (rank 0's reserved head), NULL on
                             another node than rank 0's (through the transport) */
    void **peers;         /* [nranks] its peer table: NULL for the ranks of other nodes */
    TsDiag diag;          /* its own diagnostic (ranks run concurrently) */
    TsStatus st;          /* its launch status */
} RankRun;

static void *rank_main(void *p) {
    RankRun *R = p;
    int i = 0;
    R->st = TS_OK;
    for (TsKernel *c = R->k; c && R->st == TS_OK; c = c->next, i++) {
        R->env.sync_words = R->sync_base ? R->sync_base + (i % TS_WORLD_MAX_CHAIN) : NULL;
        R->env.sync_off = (int64_t)(i % TS_WORLD_MAX_CHAIN) * (int64_t)sizeof(int64_t);
        R->st = ts_launch_env(c, R->args, R->nargs, &R->diag, &R->env);
    }
    /* a rank that could not start stops the others' waits */
    if (R->st != TS_OK) __atomic_store_n(&R->env.sink->aborted, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int64_t heap_offset(const TsWorld *w, int r, const void *p) { return ts_world_offset(w, r, p); }

/* Is t row-major compact (strides NULL, or the products of the extents
 * beyond each axis; extents of 1 may have any stride)? */
static bool compact(const TsTensor *t) {
    if (!t->strides) return true;
    int64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != want) return false;
        want *= t->shape[d];
    }
    return true;
}

/* Every heap tensor at one offset with one shape on all ranks, and compact
 * row-major: remote tile copies move whole runs of rows as flat ranges
 * (op/comm.c), as TileScale's symmetric tensors are laid out. */
static TsStatus check_symmetric(TsWorld *w, TsKernel *k, const TsTensor *args, int nargs) {
    int n = w->opt.nranks;
    for (int i = 0; i < nargs; i++) {
        const TsTensor *t0 = &args[i];
        int64_t off0 = heap_offset(w, 0, t0->data);
        const char *pn = i < k->ir->params.n && k->ir->params.v[i].name ? k->ir->params.v[i].name : "?";
        for (int r = 0; off0 >= 0 && r < n; r++)
            if (!compact(&args[(size_t)r * (size_t)nargs + (size_t)i]))
                return ts_world_fail(w->ctx, TS_ERR_INVALID,
                                     "%s: argument %s on rank %d is a strided view of the symmetric heap "
                                     "(symmetric tensors must be compact row-major)",
                                     k->ir->name, pn, r);
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

/* ---- proc and ipc: one process per rank -------------------------------------------- */

/* What every rank publishes at the rendezvous. */
typedef struct ProcBlob {
    int64_t heap_bytes;         /* its heap size (all must agree) */
    int32_t backend;            /* its TsWorldBackend (all must agree) */
    int32_t pid;                /* for messages */
    uint64_t dev_key;           /* ipc: its GPU (PCI domain/bus/device) */
    unsigned char handle[128];  /* ipc: its heap's CUDA IPC handle (64 bytes); ipc through NCCL:
                                   rank 0's ncclUniqueId */
} ProcBlob;
_Static_assert(sizeof(ProcBlob) <= TS_RDZV_BLOB, "a rank's blob must fit its rendezvous slot");

static TsStatus rdzv_error(TsWorld *w, TsStatus st, TsBuf *err) {
    ts_world_fail(w->ctx, st, "%s", ts_buf_str(err));
    ts_buf_free(err);
    return st;
}

/* Rank r's heap file in the rendezvous directory (no length limit); its
 * .oom is set if memory ran out (the caller's to check and free). */
static TsBuf heap_path(const TsWorld *w, int r) {
    TsBuf b = {0};
    ts_buf_printf(&b, "%s/heap.%d", ts_rdzv_dir(w->rdzv, r), r); /* its node's directory (one host's files) */
    return b;
}

/* Maps rank r's heap file (creating it, sized, for this rank). */
static TsStatus proc_map(TsWorld *w, int r, int create) {
    TsBuf pb = heap_path(w, r);
    if (pb.oom) {
        ts_buf_free(&pb);
        return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world (proc): out of memory");
    }
    const char *path = ts_buf_str(&pb);
    TsStatus st = TS_OK;
    int fd = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0600);
    if (fd < 0) {
        st = ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (proc): rank %d cannot open %s: %s", w->self, path,
                           strerror(errno));
        goto done;
    }
    if (create && ftruncate(fd, (off_t)w->opt.heap_bytes) != 0) {
        close(fd);
        st = ts_world_fail(w->ctx, TS_ERR_NOMEM, "world (proc): cannot make a %lld-byte heap in %s: %s",
                           (long long)w->opt.heap_bytes, path, strerror(errno));
        goto done;
    }
    void *m = mmap(NULL, (size_t)w->opt.heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        st = ts_world_fail(w->ctx, TS_ERR_NOMEM, "world (proc): cannot map %s: %s", path, strerror(errno));
        goto done;
    }
    w->base[r] = m;
    w->map_len[r] = w->opt.heap_bytes;
done:
    ts_buf_free(&pb);
    return st;
}

/* Removes this rank's heap file (its mappings live on). */
static void heap_unlink(const TsWorld *w) {
    TsBuf pb = heap_path(w, w->self);
    if (!pb.oom) unlink(ts_buf_str(&pb));
    ts_buf_free(&pb);
}

/* Every peer's heap must be reachable by load and store from this rank:
 * heap files (proc) and CUDA IPC handles (ipc) are one host's, so a peer
 * on another host is refused here, naming where each runs.  Through NCCL
 * (ipc) its LSA team decides instead (ts_local_nccl_init): the same
 * refusal, in NCCL's terms.  A transport for other nodes would be NCCL's
 * GIN (device-initiated puts and signals over the network), which the
 * generated code does not use. */
static TsStatus reachable(TsWorld *w, int ipc, int nccl) {
    TsRdzv *z = w->rdzv;
    int me = w->self, n = w->opt.nranks, far = 0, first = -1;
    if (nccl) return TS_OK;
    for (int r = 0; r < n; r++)
        if (strcmp(ts_rdzv_host(z, r), ts_rdzv_host(z, me))) {
            far++;
            if (first < 0) first = r;
        }
    if (!far) return TS_OK;
    ts_rdzv_abort(z, NULL);
    return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                         "world (%s): rank %d (node %d, local rank %d, host %s) cannot reach %d of the %d ranks: rank "
                         "%d (node %d, local rank %d) runs on host %s; %s are one host's, and ranks on other nodes "
                         "would need a network transport (NCCL's GIN), which the generated code does not use (run one "
                         "world per node, or a world of one host's ranks)",
                         ipc ? "ipc" : "proc", me, ts_rdzv_node(z, me), ts_rdzv_local(z, me), ts_rdzv_host(z, me), far,
                         n, first, ts_rdzv_node(z, first), ts_rdzv_local(z, first), ts_rdzv_host(z, first),
                         ipc ? "CUDA IPC handles" : "heap files");
}

static TsStatus proc_create(TsWorld *w, const TsLaunchEnv *env) {
    int n = w->opt.nranks, ipc = w->opt.backend == TS_WORLD_IPC;
    TsBuf err = {0};
    w->self = env->rank;
    w->rdzv = calloc(1, sizeof *w->rdzv);
    w->map_len = calloc((size_t)n, sizeof *w->map_len);
    if (!w->rdzv || !w->map_len) return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world: out of memory");
    if (!ts_rdzv_join(w->rdzv, env, 0, &err)) {
        free(w->rdzv);
        w->rdzv = NULL;
        return rdzv_error(w, TS_ERR_RUNTIME, &err);
    }
    ProcBlob me = {w->opt.heap_bytes, (int32_t)w->opt.backend, (int32_t)getpid(), 0, {0}};
    int nccl = ipc && ts_local_engine_nccl();
    TsStatus st = ipc ? ts_local_create(w) : proc_map(w, w->self, 1);
    if (!st && ipc) st = ts_local_export(w, me.handle, &me.dev_key);
    if (!st && nccl && w->self == 0) st = ts_local_nccl_id(w, me.handle);
    if (st) {
        ts_rdzv_abort(w->rdzv, NULL);
        return st;
    }
    ts_rdzv_publish(w->rdzv, &me, sizeof me);
    if (!ts_rdzv_barrier(w->rdzv, "joining the world", 0, &err)) return rdzv_error(w, TS_ERR_RUNTIME, &err);
    if ((st = reachable(w, ipc, nccl))) return st;
    w->dev_share = 0;
    uint64_t keys[TS_WORLD_MAX_RANKS];
    for (int r = 0; r < n; r++) {
        ProcBlob b;
        memcpy(&b, ts_rdzv_peer(w->rdzv, r), sizeof b);
        keys[r] = b.dev_key;
        if (b.heap_bytes != me.heap_bytes || b.backend != me.backend)
            return ts_world_fail(w->ctx, TS_ERR_INVALID,
                                 "world: rank %d (pid %d) has a %s heap of %lld bytes but rank %d has a %s heap of "
                                 "%lld bytes (every rank must create the world alike: same --heap and target)",
                                 r, (int)b.pid, b.backend == TS_WORLD_IPC ? "GPU" : "host", (long long)b.heap_bytes,
                                 w->self, ipc ? "GPU" : "host", (long long)me.heap_bytes);
        w->dev_share += !ipc || b.dev_key == me.dev_key;
        if (r != w->self && !nccl && (st = ipc ? ts_local_open(w, r, b.handle) : proc_map(w, r, 0))) return st;
    }
    if (nccl) { /* every rank here: NCCL's collective set-up, from rank 0's id */
        ProcBlob b0;
        memcpy(&b0, ts_rdzv_peer(w->rdzv, 0), sizeof b0);
        if ((st = ts_local_nccl_init(w, b0.handle))) {
            ts_rdzv_abort(w->rdzv, NULL);
            return st;
        }
    }
    if (ipc) ts_local_topology(w, keys, &w->warnings);
    if (!ts_rdzv_barrier(w->rdzv, "mapping the peers' heaps", 0, &err)) return rdzv_error(w, TS_ERR_RUNTIME, &err);
    if (!ipc) heap_unlink(w); /* every peer has it mapped: the memory lives on until the last unmaps */
    w->ready = 1;
    return TS_OK;
}

static void proc_destroy(TsWorld *w) {
    TsBuf err = {0};
    /* nobody leaves while a peer may still reach its heap */
    int ok = w->ready && ts_rdzv_barrier(w->rdzv, "leaving the world", 1, &err);
    ts_buf_free(&err);
    if (!w->ready && !w->local && w->map_len && w->map_len[w->self])
        heap_unlink(w); /* creation failed before the peers mapped it */
    if (!w->local)
        for (int r = 0; r < w->opt.nranks; r++) {
            if (w->map_len && w->map_len[r]) munmap(w->base[r], (size_t)w->map_len[r]);
            w->base[r] = NULL;
        }
    ts_rdzv_leave(w->rdzv, ok);
    free(w->rdzv);
    free(w->map_len);
    w->rdzv = NULL;
    w->map_len = NULL;
}

/* Carries an abort both ways while this rank's kernels run (proc), and
 * notices (every 50 ms) a peer process that died during the launch. */
typedef struct Monitor {
    TsWorld *w;   /* the world */
    int stop;     /* set (atomically) when the launch is over */
} Monitor;

static void *monitor_main(void *p) {
    Monitor *m = p;
    TsWorld *w = m->w;
    for (long tick = 0; !__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE); tick++) {
        int pid, dead = tick % 50 == 49 ? ts_rdzv_dead_peer(w->rdzv, &pid) : -1;
        if (dead >= 0) { /* a peer died inside the launch: its waits must not wait for it */
            char core[120], t[140];
            snprintf(core, sizeof core, "rank %d: rank %d (pid %d) exited during the launch", w->self, dead, pid);
            snprintf(t, sizeof t, "error: %s\n", core);
            ts_comm_sink_fail(&w->sink, core);
            ts_rdzv_abort(w->rdzv, t);
        }
        if (ts_rdzv_aborted(w->rdzv)) __atomic_store_n(&w->sink.aborted, 1, __ATOMIC_RELEASE);
        else if (__atomic_load_n(&w->sink.aborted, __ATOMIC_ACQUIRE)) {
            TsBuf t = {0};
            pthread_mutex_lock(&w->sink.mu);
            if (w->sink.msg.n) ts_buf_printf(&t, "error: %s\n", ts_buf_str(&w->sink.msg));
            pthread_mutex_unlock(&w->sink.mu);
            ts_rdzv_abort(w->rdzv, t.n ? ts_buf_str(&t) : NULL);
            ts_buf_free(&t);
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static TsStatus proc_launch(TsWorld *w, TsKernel *k, const TsTensor *args, int nargs) {
    TsRdzv *z = w->rdzv;
    int me = w->self, n = w->opt.nranks;
    TsBuf err = {0};
    if (!ts_rdzv_barrier(z, "before a launch", 1, &err)) return rdzv_error(w, TS_ERR_RUNTIME, &err);
    if (me == 0) {
        unsigned char zero[TS_WORLD_SYS_BYTES] = {0};
        ts_rdzv_clear(z);
        if (w->local) ts_local_copy(w, 1, w->base[0], zero, TS_WORLD_SYS_BYTES);
        else memset(w->base[0], 0, TS_WORLD_SYS_BYTES);
    }
    if (!ts_rdzv_barrier(z, "starting a launch", 1, &err)) return rdzv_error(w, TS_ERR_RUNTIME, &err);
    buf_clear(&w->sink.msg);
    w->sink.aborted = 0;
    TsStatus st;
    TsBuf mine = {0};
    if (w->local) {
        st = ts_local_launch(w, k, args, nargs);
        if (st) {
            ts_buf_puts(&mine, ts_buf_str(&w->ctx->diag.msg));
            int one = 1; /* stop the other ranks' waits on the GPU too */
            ts_local_copy(w, 1, (char *)w->base[0] + TS_WORLD_ABORT_AT, &one, sizeof one);
        }
    } else {
        RankRun R;
        memset(&R, 0, sizeof R);
        R.k = k;
        R.args = args + (size_t)me * (size_t)nargs;
        R.nargs = nargs;
        R.env = (TsRankEnv){me, n, w->base, w->opt.heap_bytes, NULL, &w->sink, w->opt.wait_timeout_ms, 1, NULL, NULL,
                            0, NULL, NULL, 0};
        R.sync_base = (int64_t *)w->base[0];
        Monitor mon = {w, 0};
        pthread_t th;
        int have = pthread_create(&th, NULL, monitor_main, &mon) == 0;
        rank_main(&R);
        __atomic_store_n(&mon.stop, 1, __ATOMIC_RELEASE);
        if (have) pthread_join(th, NULL);
        st = R.st;
        if (st) ts_buf_printf(&mine, "rank %d: %s", me, ts_buf_str(&R.diag.msg));
        else if (w->sink.msg.n) {
            st = TS_ERR_RUNTIME;
            ts_buf_printf(&mine, "error: %s\n", ts_buf_str(&w->sink.msg));
        }
        ts_buf_free(&R.diag.msg);
    }
    if (st) ts_rdzv_abort(z, ts_buf_str(&mine));
    if (!ts_rdzv_barrier(z, "finishing a launch", 1, &err)) {
        ts_buf_free(&mine);
        return rdzv_error(w, TS_ERR_RUNTIME, &err);
    }
    if (!st && ts_rdzv_aborted(z)) {
        st = TS_ERR_RUNTIME;
        const char *m = ts_rdzv_message(z);
        ts_buf_puts(&mine, *m ? m : "error: another rank failed (it left no message)\n");
    }
    buf_clear(&w->ctx->diag.msg);
    if (st) ts_buf_puts(&w->ctx->diag.msg, ts_buf_str(&mine));
    w->ctx->diag.status = st;
    ts_buf_free(&mine);
    return st;
}

TsStatus ts_kernel_launch_world(TsKernel *k, TsWorld *w, const TsTensor *args, int nargs) {
    if (!k || !w || (nargs > 0 && !args)) return TS_ERR_INVALID;
    if (k->ctx != w->ctx) return ts_world_fail(k->ctx, TS_ERR_INVALID, "the kernel and the world belong to different contexts");
    if (!k->cmod && !k->cumod)
        return ts_world_fail(w->ctx, TS_ERR_INVALID, "this kernel was compiled without a build (skip_build)");
    static const char *const names[] = {"sim", "local", "proc", "ipc"};
    if (k->target != (w->local ? TS_TARGET_CUDA : TS_TARGET_C))
        return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED, "%s: the %s world runs kernels of the %s target", k->ir->name,
                             names[w->opt.backend], w->local ? "CUDA" : "C");
    TsStatus st = check_symmetric(w, k, args, nargs);
    if (st) return st;
    if (w->rdzv) return proc_launch(w, k, args, nargs);
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
    int started = 0, per = ts_world_ranks_per_node(w), nodes = per < n;
    Xport xp = {.base = w->base, .heap_bytes = w->opt.heap_bytes, .nranks = n};
    pthread_t xth;
    void **tables = nodes ? calloc((size_t)n * (size_t)n, sizeof *tables) : NULL;
    if (nodes && (!tables || pthread_mutex_init(&xp.mu, NULL) || pthread_cond_init(&xp.work, NULL) ||
                  pthread_cond_init(&xp.done, NULL) || pthread_create(&xth, NULL, xport_main, &xp))) {
        free(tables); /* (a failed init leaves nothing to destroy worth the bookkeeping on this path) */
        free(runs);
        free(th);
        return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world: cannot start the transport between nodes");
    }
    for (int r = 0; r < n; r++) {
        RankRun *R = &runs[r];
        R->k = k;
        R->args = args + (size_t)r * (size_t)nargs;
        R->nargs = nargs;
        R->env = (TsRankEnv){r, n, w->base, w->opt.heap_bytes, NULL, &w->sink, w->opt.wait_timeout_ms, 1, NULL, NULL,
                             per, NULL, NULL, 0};
        R->sync_base = (int64_t *)w->base[0];
        if (nodes) { /* the ranks of other nodes have no address: only the transport reaches them */
            R->peers = tables + (size_t)r * (size_t)n;
            for (int p = 0; p < n; p++) R->peers[p] = ts_world_same_node(w, r, p) ? w->base[p] : NULL;
            R->env.peer_base = R->peers;
            R->env.xport = xport_call;
            R->env.xport_ctx = &xp;
            if (!ts_world_same_node(w, r, 0)) R->sync_base = NULL;
        }
    }
    for (int r = 0; r < n; r++) {
        if (pthread_create(&th[r], NULL, rank_main, &runs[r]) != 0) {
            ts_comm_sink_fail(&w->sink, "world: cannot start a thread for every rank");
            break;
        }
        started++;
    }
    for (int r = 0; r < started; r++) pthread_join(th[r], NULL);
    if (nodes) { /* every queued put lands before the launch returns */
        pthread_mutex_lock(&xp.mu);
        xp.stop = 1;
        pthread_cond_signal(&xp.work);
        pthread_mutex_unlock(&xp.mu);
        pthread_join(xth, NULL);
        pthread_mutex_destroy(&xp.mu);
        pthread_cond_destroy(&xp.work);
        pthread_cond_destroy(&xp.done);
        w->xport_served += xp.served;
        free(tables);
    }

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
