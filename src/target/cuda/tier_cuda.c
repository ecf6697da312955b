/*
 * tier_cuda.c — the background half of a tiered CUDA build.
 *
 * A kernel whose full build is large (pass tier_plan) is compiled twice
 * on a cache miss (driver/api.c decides, TsCompileOptions.tiered): its
 * quick tier synchronously, so that the first launch comes early, and its
 * full tier here, on a thread of its own, while the quick tier runs.  The
 * worker only compiles: ts_cuda_image (the disk cache, NVRTC on a miss,
 * the cubin written to the cache, so the next process finds the full tier
 * and skips the quick one) touches no driver state, so no CUDA context is
 * needed on this thread.  Loading the module needs the context and is
 * left to the launching thread, which takes the finished image
 * (ts_cuda_tier_take), loads it and swaps it into the kernel object.
 *
 * State machine (TS_CUDA_TIER_*), guarded by `mu`; `state` is also read
 * without the lock (an atomic load) so that a launch pays one load while
 * the build runs:
 *
 *     RUNNING --worker done--> READY --take (one caller)--> TAKEN
 *        \--compile error--> FAILED        \--load error--> FAILED
 *
 * Freeing joins the thread: NVRTC cannot be interrupted, so a running
 * compile is waited for, and its cubin lands in the cache (a build freed
 * before it started would be cut short only to leave the cache without
 * the full tier, which the next process then builds again with a quick
 * tier first: so it is never skipped).  Everything the
 * worker uses is owned by the TsCudaTier (its code, cache directory and
 * diagnostic), none of it shared with the caller, and nothing is global.
 */
#include "target/cuda/cuda_target.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct TsCudaTier {
    pthread_t thread;          /* the worker */
    int started;               /* 1 once pthread_create succeeded (joined in ts_cuda_tier_free) */
    pthread_mutex_t mu;        /* guards everything below but `state`'s lock-free reads */
    pthread_cond_t done;       /* signalled when the worker leaves RUNNING */
    int state;                 /* TS_CUDA_TIER_* (written under mu with __atomic stores) */
    char *name;                /* the kernel's name, for messages */
    char *code;                /* the full tier's CUDA source */
    char *cache_dir;           /* the disk cache directory (TsCompileOptions.cache_dir for the worker) */
    char want_arch[24];        /* the architecture asked for */
    const TsCudaCodeInfo *ci;  /* shared memory, threads, bounds-check sites (the kernel's arena) */
    unsigned char *img;        /* READY: the image (taken by ts_cuda_tier_take) */
    size_t size;               /* its bytes */
    char arch[24];             /* what it was built for */
    int ptx;                   /* 1: PTX for the driver to JIT */
    double ms;                 /* the worker's build time */
    TsDiag diag;               /* the worker's errors (FAILED: the message) */
};

/* The build inside the worker's own error handler (ts_fail_at longjmps to
 * the nearest ts_try of the diagnostic it is given: this one's). */
static unsigned char *build(TsCudaTier *t, size_t *size, char arch[24], int *ptx) {
    jmp_buf jb;
    jmp_buf *volatile saved = NULL;
    TsCompileOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.target = TS_TARGET_CUDA;
    opt.cache_dir = t->cache_dir;
    if (ts_try(&t->diag, &jb, &saved)) {
        ts_try_end(&t->diag, saved);
        return NULL;
    }
    unsigned char *img = ts_cuda_image(&t->diag, t->want_arch, t->code, t->name, &opt, 0, NULL, size, arch, ptx);
    ts_try_end(&t->diag, saved);
    return img;
}

static void *worker(void *arg) {
    TsCudaTier *t = arg;
    double t0 = ts_now_ms();
    size_t size = 0;
    char arch[24] = "";
    int ptx = 0;
    unsigned char *img = build(t, &size, arch, &ptx);
    pthread_mutex_lock(&t->mu);
    t->img = img;
    t->size = size;
    memcpy(t->arch, arch, sizeof arch);
    t->ptx = ptx;
    t->ms = ts_now_ms() - t0;
    __atomic_store_n(&t->state, img ? TS_CUDA_TIER_READY : TS_CUDA_TIER_FAILED, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->done);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static void tier_release(TsCudaTier *t) {
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->done);
    free(t->img);
    free(t->name);
    free(t->code);
    free(t->cache_dir);
    ts_buf_free(&t->diag.msg);
    ts_buf_free(&t->diag.warn);
    free(t);
}

TsCudaTier *ts_cuda_tier_start(TsDiag *d, const char *name, const TsCudaCodeInfo *ci, const char *want_arch,
                               const char *code, const char *cache_dir) {
    TsCudaTier *t = calloc(1, sizeof *t);
    if (!t) goto oom;
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        goto oom;
    }
    if (pthread_cond_init(&t->done, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        free(t);
        goto oom;
    }
    t->name = strdup(name ? name : "kernel");
    t->code = strdup(code);
    t->cache_dir = strdup(cache_dir ? cache_dir : "");
    snprintf(t->want_arch, sizeof t->want_arch, "%s", want_arch);
    t->ci = ci;
    if (!t->name || !t->code || !t->cache_dir) {
        tier_release(t);
        goto oom;
    }
    if (pthread_create(&t->thread, NULL, worker, t) != 0) {
        tier_release(t);
        ts_diag_add(d, (TsLoc){0}, "error", "cannot start the thread that builds the full tier of '%s'",
                    name ? name : "kernel");
        d->status = TS_ERR_RUNTIME;
        return NULL;
    }
    t->started = 1;
    return t;
oom:
    ts_diag_add(d, (TsLoc){0}, "error", "out of memory");
    d->status = TS_ERR_NOMEM;
    return NULL;
}

int ts_cuda_tier_state(const TsCudaTier *t) { return __atomic_load_n(&t->state, __ATOMIC_ACQUIRE); }

int ts_cuda_tier_wait(TsCudaTier *t) {
    pthread_mutex_lock(&t->mu);
    while (t->state == TS_CUDA_TIER_RUNNING) pthread_cond_wait(&t->done, &t->mu);
    int st = t->state;
    pthread_mutex_unlock(&t->mu);
    return st;
}

TsModuleCuda *ts_cuda_tier_take(TsCudaTier *t, int wait, TsDiag *d, double *ms) {
    if (!wait && ts_cuda_tier_state(t) != TS_CUDA_TIER_READY) {
        if (ts_cuda_tier_state(t) == TS_CUDA_TIER_FAILED) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_cuda_tier_error(t));
            d->status = TS_ERR_BUILD;
        }
        return NULL;
    }
    pthread_mutex_lock(&t->mu);
    while (wait && t->state == TS_CUDA_TIER_RUNNING) pthread_cond_wait(&t->done, &t->mu);
    if (t->state != TS_CUDA_TIER_READY) {
        int failed = t->state == TS_CUDA_TIER_FAILED;
        pthread_mutex_unlock(&t->mu);
        if (failed) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_cuda_tier_error(t));
            d->status = TS_ERR_BUILD;
        }
        return NULL;
    }
    unsigned char *img = t->img;
    t->img = NULL;
    __atomic_store_n(&t->state, TS_CUDA_TIER_TAKEN, __ATOMIC_RELEASE);
    if (ms) *ms = t->ms;
    pthread_mutex_unlock(&t->mu);
    /* the module and its load on the calling (launching) thread: the driver's context is here */
    TsModuleCuda *m = ts_cuda_module_new(d, t->name, t->ci, img, t->size, t->arch, t->ptx, TS_ERR_BUILD, NULL);
    if (!m) {
        pthread_mutex_lock(&t->mu);
        ts_buf_puts(&t->diag.msg, ts_buf_str(&d->msg));
        __atomic_store_n(&t->state, TS_CUDA_TIER_FAILED, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&t->mu);
    }
    return m;
}

const char *ts_cuda_tier_error(const TsCudaTier *t) {
    /* written by the worker before it leaves RUNNING (or by the one taker): read after that */
    return ts_cuda_tier_state(t) == TS_CUDA_TIER_RUNNING || !t->diag.msg.s ? "" : t->diag.msg.s;
}

void ts_cuda_tier_free(TsCudaTier *t) {
    if (!t) return;
    if (t->started) pthread_join(t->thread, NULL);
    tier_release(t);
}
