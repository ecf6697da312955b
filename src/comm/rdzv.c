/*
 * rdzv.c — the launcher's environment and the rendezvous directory of the
 * one-process-per-rank backends (see rdzv.h for the why).
 *
 * Everything shared lives in one mapped file, `ctl`, accessed with
 * __atomic builtins (lock-free on the 32- and 64-bit words used here, so
 * they work across processes on a MAP_SHARED mapping).  A barrier is a
 * per-rank arrival word: rank r stores "I reached barrier g" and waits
 * until every word is at least g, polling gently (sched_yield first, then
 * short sleeps: several ranks share few cores in CI).  While it waits it
 * looks at the missing ranks' pids, so a rank that died is named at once.
 */
#include "comm/rdzv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RDZV_MAGIC 0x7453727au /* "tSrz" */

struct TsRdzvCtl {
    uint32_t magic;                                        /* RDZV_MAGIC once a rank joined */
    int32_t nranks;                                        /* the world size (first rank to join sets it) */
    int32_t aborted;                                       /* 1 once any rank failed */
    int32_t msg_taken;                                     /* 1 once a failure message is being written */
    int32_t msg_done;                                      /* 1 once it is complete */
    int32_t pid[TS_RDZV_MAX_RANKS];                        /* each rank's pid, 0 before it joined */
    int32_t left[TS_RDZV_MAX_RANKS];                       /* 1 once the rank has left (done or failed) */
    int64_t arrived[TS_RDZV_MAX_RANKS];                    /* the last barrier each rank reached */
    char msg[TS_RDZV_MSG];                                 /* the first failure's text */
    unsigned char blob[TS_RDZV_MAX_RANKS][TS_RDZV_BLOB];   /* what each rank published */
};

/* ---- environment ------------------------------------------------------------- */

static const char *env2(const char *a, const char *b) {
    const char *v = getenv(a);
    if (v && *v) return v;
    v = b ? getenv(b) : NULL;
    return v && *v ? v : NULL;
}

static int parse_int(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < INT_MIN || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

int ts_launch_env_present(void) { return env2("TILESCALE_WORLD_SIZE", "WORLD_SIZE") != NULL; }

int ts_launch_env_read(TsLaunchEnv *e, TsBuf *err) {
    memset(e, 0, sizeof *e);
    const char *ws = env2("TILESCALE_WORLD_SIZE", "WORLD_SIZE"), *rk = env2("TILESCALE_RANK", "RANK");
    const char *lr = env2("TILESCALE_LOCAL_RANK", "LOCAL_RANK"), *dir = env2("TILESCALE_RDZV", NULL);
    if (!ws || !rk) {
        ts_buf_puts(err, "launcher environment: no world: TILESCALE_RANK and TILESCALE_WORLD_SIZE (or RANK and "
                         "WORLD_SIZE) must be set (`tilescale launch -n N ...` sets them)");
        return 0;
    }
    if (!parse_int(ws, &e->nranks) || e->nranks < 1 || e->nranks > TS_RDZV_MAX_RANKS) {
        ts_buf_printf(err, "launcher environment: world size '%s' is not a number in 1..%d", ws, TS_RDZV_MAX_RANKS);
        return 0;
    }
    if (!parse_int(rk, &e->rank) || e->rank < 0 || e->rank >= e->nranks) {
        ts_buf_printf(err, "launcher environment: rank '%s' is not a number in 0..%d (world size %d)", rk,
                      e->nranks - 1, e->nranks);
        return 0;
    }
    e->local_rank = e->rank;
    if (lr && (!parse_int(lr, &e->local_rank) || e->local_rank < 0)) {
        ts_buf_printf(err, "launcher environment: local rank '%s' is not a number >= 0", lr);
        return 0;
    }
    if (dir) {
        e->dir = strdup(dir);
        if (!e->dir) ts_buf_puts(err, "launcher environment: out of memory");
        return e->dir != NULL;
    }
    const char *port = env2("TILESCALE_MASTER_PORT", "MASTER_PORT");
    int p;
    if (!port) {
        ts_buf_puts(err, "launcher environment: no rendezvous: set TILESCALE_RDZV (a directory all ranks see) or "
                         "MASTER_PORT (or TILESCALE_MASTER_PORT)");
        return 0;
    }
    if (!parse_int(port, &p) || p <= 0 || p > 65535) {
        ts_buf_printf(err, "launcher environment: port '%s' is not a number in 1..65535", port);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    TsBuf b = {0};
    ts_buf_printf(&b, "%s/tilescale-rdzv-%u-%d", tmp, (unsigned)getuid(), p);
    if (b.oom || !b.s) {
        ts_buf_free(&b);
        ts_buf_puts(err, "launcher environment: out of memory");
        return 0;
    }
    e->dir = b.s; /* ours now */
    return 1;
}

void ts_launch_env_free(TsLaunchEnv *e) {
    if (!e) return;
    free(e->dir);
    e->dir = NULL;
}

/* dir/name, or NULL (out of memory); free() it. */
static char *dir_file(const char *dir, const char *name) {
    TsBuf b = {0};
    ts_buf_printf(&b, "%s/%s", dir, name);
    if (b.oom) {
        ts_buf_free(&b);
        return NULL;
    }
    return b.s;
}

/* ---- joining and leaving ------------------------------------------------------ */

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int alive(int32_t pid) { return pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH; }

int ts_rdzv_join(TsRdzv *z, const TsLaunchEnv *e, int64_t timeout_ms, TsBuf *err) {
    memset(z, 0, sizeof *z);
    z->env = *e;
    z->env.dir = e->dir ? strdup(e->dir) : NULL;
    char *path = z->env.dir ? dir_file(e->dir, "ctl") : NULL;
    if (!path) {
        ts_buf_puts(err, e->dir ? "rendezvous: out of memory" : "rendezvous: no directory");
        goto fail;
    }
    z->timeout_ms = timeout_ms > 0 ? timeout_ms : 300000;
    const char *tv = getenv("TILESCALE_RDZV_TIMEOUT");
    if (timeout_ms <= 0 && tv && *tv) {
        char *end;
        double s = strtod(tv, &end);
        if (end != tv && s > 0 && s < 1e9) z->timeout_ms = (int64_t)(s * 1000.0 + 0.5);
    }
    z->port_dir = !(getenv("TILESCALE_RDZV") && *getenv("TILESCALE_RDZV"));
    struct stat st;
    if (stat(e->dir, &st) != 0) {
        /* the MASTER_PORT form makes its directory; a named one must exist */
        if (!z->port_dir) {
            ts_buf_printf(err, "rendezvous: directory %s does not exist", e->dir);
            goto fail;
        }
        if (mkdir(e->dir, 0700) != 0 && errno != EEXIST) {
            ts_buf_printf(err, "rendezvous: cannot create %s: %s", e->dir, strerror(errno));
            goto fail;
        }
    }
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
        ts_buf_printf(err, "rendezvous: cannot open %s: %s", path, strerror(errno));
        goto fail;
    }
    if (ftruncate(fd, (off_t)sizeof(TsRdzvCtl)) != 0) {
        ts_buf_printf(err, "rendezvous: cannot size %s: %s", path, strerror(errno));
        close(fd);
        goto fail;
    }
    void *m = mmap(NULL, sizeof(TsRdzvCtl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        ts_buf_printf(err, "rendezvous: cannot map %s: %s", path, strerror(errno));
        goto fail;
    }
    z->ctl = m;
    TsRdzvCtl *c = z->ctl;
    int32_t want = 0;
    if (!__atomic_compare_exchange_n(&c->nranks, &want, e->nranks, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        want != e->nranks) {
        ts_buf_printf(err, "rendezvous: rank %d was started for a world of %d ranks, but another rank of %s for %d",
                      e->rank, e->nranks, e->dir, want);
        goto fail;
    }
    int32_t free_ = 0, me = (int32_t)getpid();
    if (!__atomic_compare_exchange_n(&c->pid[e->rank], &free_, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        free_ != me) {
        ts_buf_printf(err, "rendezvous: rank %d is already taken by pid %d%s (two processes with one rank, or a "
                           "directory left by an earlier run: remove %s)",
                      e->rank, (int)free_, alive(free_) ? "" : ", which has exited", e->dir);
        goto fail;
    }
    __atomic_store_n(&c->magic, RDZV_MAGIC, __ATOMIC_RELEASE);
    z->gen = __atomic_load_n(&c->arrived[e->rank], __ATOMIC_ACQUIRE);
    free(path);
    return 1;
fail:
    if (z->ctl) munmap(z->ctl, sizeof(TsRdzvCtl));
    z->ctl = NULL;
    free(path);
    ts_launch_env_free(&z->env);
    return 0;
}

void ts_rdzv_leave(TsRdzv *z, int last) {
    if (!z) return;
    if (!z->ctl) {
        ts_launch_env_free(&z->env);
        return;
    }
    TsRdzvCtl *c = z->ctl;
    __atomic_store_n(&c->left[z->env.rank], 1, __ATOMIC_RELEASE);
    /* after a failure, the last rank out (of those that came and did not
     * die) removes ctl, so the next run with the same directory starts
     * afresh */
    int all = 1;
    for (int p = 0; p < z->env.nranks; p++)
        all &= __atomic_load_n(&c->left[p], __ATOMIC_ACQUIRE) || !__atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE) ||
               !alive(__atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE));
    if ((last && z->env.rank == 0) || (!last && all)) {
        char *path = dir_file(z->env.dir, "ctl");
        if (path) unlink(path); /* (out of memory: left for the next run's ranks to reuse) */
        free(path);
        if (z->port_dir) rmdir(z->env.dir); /* a named directory belongs to whoever named it */
    }
    munmap(z->ctl, sizeof(TsRdzvCtl));
    z->ctl = NULL;
    ts_launch_env_free(&z->env);
}

/* ---- barriers, blobs, abort ----------------------------------------------------- */

int ts_rdzv_barrier(TsRdzv *z, const char *what, int slow, TsBuf *err) {
    TsRdzvCtl *c = z->ctl;
    int n = z->env.nranks;
    int64_t limit = slow && z->timeout_ms < 600000 ? 600000 : z->timeout_ms;
    int64_t g = ++z->gen, t0 = now_ms(), last_check = t0;
    __atomic_store_n(&c->arrived[z->env.rank], g, __ATOMIC_RELEASE);
    for (long spin = 0;; spin++) {
        int missing = 0;
        for (int p = 0; p < n; p++) missing += __atomic_load_n(&c->arrived[p], __ATOMIC_ACQUIRE) < g;
        if (!missing) return 1;
        if (spin < 200) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, spin < 2000 ? 50000 : 500000};
        nanosleep(&ts, NULL);
        int64_t t = now_ms();
        if (t - last_check < 20 && t - t0 <= limit) continue;
        last_check = t;
        for (int p = 0; p < n; p++) {
            int32_t pid = __atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE);
            if (__atomic_load_n(&c->arrived[p], __ATOMIC_ACQUIRE) >= g) continue;
            if (pid > 0 && !alive(pid)) {
                ts_buf_printf(err, "rank %d: %s: rank %d (pid %d) has exited", z->env.rank, what, p, (int)pid);
                return 0;
            }
            if (__atomic_load_n(&c->left[p], __ATOMIC_ACQUIRE)) {
                const char *m = ts_rdzv_message(z);
                if (!strncmp(m, "error: ", 7)) m += 7;
                int len = (int)strcspn(m, "\n");
                ts_buf_printf(err, "rank %d: %s: rank %d has left the world (it failed%s%.*s)", z->env.rank, what, p,
                              len ? ": " : "", len, m);
                return 0;
            }
        }
        if (t - t0 > limit) {
            ts_buf_printf(err, "rank %d: %s: timed out after %.1f s waiting for rank", z->env.rank, what,
                          (double)limit / 1000.0);
            int k = 0;
            for (int p = 0; p < n; p++)
                if (__atomic_load_n(&c->arrived[p], __ATOMIC_ACQUIRE) < g)
                    ts_buf_printf(err, "%s %d%s", k++ ? "," : (missing > 1 ? "s" : ""), p,
                                  __atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE) ? "" : " (never joined)");
            ts_buf_printf(err, " of %d", n);
            return 0;
        }
    }
}

void ts_rdzv_publish(TsRdzv *z, const void *blob, size_t n) {
    memcpy(z->ctl->blob[z->env.rank], blob, n < TS_RDZV_BLOB ? n : TS_RDZV_BLOB);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

const void *ts_rdzv_peer(const TsRdzv *z, int rank) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return z->ctl->blob[rank];
}

void ts_rdzv_abort(TsRdzv *z, const char *text) {
    TsRdzvCtl *c = z->ctl;
    int32_t zero = 0;
    if (text && __atomic_compare_exchange_n(&c->msg_taken, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        size_t n = strlen(text);
        if (n < sizeof c->msg) memcpy(c->msg, text, n + 1);
        else /* the shared file's fixed slot: cut visibly ("...\n") */
            snprintf(c->msg, sizeof c->msg, "%.*s...\n", (int)sizeof c->msg - 5, text);
        __atomic_store_n(&c->msg_done, 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&c->aborted, 1, __ATOMIC_RELEASE);
}

int ts_rdzv_aborted(const TsRdzv *z) { return __atomic_load_n(&z->ctl->aborted, __ATOMIC_ACQUIRE); }

int ts_rdzv_dead_peer(const TsRdzv *z, int *pid) {
    const TsRdzvCtl *c = z->ctl;
    for (int p = 0; p < z->env.nranks; p++) {
        int32_t q = __atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE);
        if (p != z->env.rank && q > 0 && !__atomic_load_n(&c->left[p], __ATOMIC_ACQUIRE) && !alive(q)) {
            if (pid) *pid = (int)q;
            return p;
        }
    }
    return -1;
}

const char *ts_rdzv_message(const TsRdzv *z) {
    return __atomic_load_n(&z->ctl->msg_done, __ATOMIC_ACQUIRE) ? z->ctl->msg : "";
}

void ts_rdzv_clear(TsRdzv *z) {
    TsRdzvCtl *c = z->ctl;
    __atomic_store_n(&c->aborted, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&c->msg_done, 0, __ATOMIC_RELEASE);
    c->msg[0] = 0;
    __atomic_store_n(&c->msg_taken, 0, __ATOMIC_RELEASE);
}
