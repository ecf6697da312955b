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
 * Over TCP (rdzv_tcp.c) the same functions work on this process's copy of
 * the server's state, refreshed before each look, and "died" is the
 * server's word (the rank's connection dropped before it left).
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
    /* nodes: torchrun calls the node's index GROUP_RANK */
    const char *ls = env2("TILESCALE_LOCAL_WORLD_SIZE", "LOCAL_WORLD_SIZE");
    const char *nd = env2("TILESCALE_NODE_RANK", "NODE_RANK"), *nn = env2("TILESCALE_NNODES", "NNODES");
    if (!nd) nd = env2("GROUP_RANK", NULL);
    e->local_size = e->nranks;
    if (ls && (!parse_int(ls, &e->local_size) || e->local_size < 1 || e->local_size > e->nranks)) {
        ts_buf_printf(err, "launcher environment: local world size '%s' is not a number in 1..%d (the world size)", ls,
                      e->nranks);
        return 0;
    }
    if (!lr) e->local_rank = e->rank % e->local_size; /* ranks numbered node by node */
    if (e->local_rank >= e->local_size) {
        ts_buf_printf(err, "launcher environment: local rank %d is not below the local world size %d", e->local_rank,
                      e->local_size);
        return 0;
    }
    e->nnodes = (e->nranks + e->local_size - 1) / e->local_size;
    if (nn && (!parse_int(nn, &e->nnodes) || e->nnodes < 1 || e->nnodes > e->nranks)) {
        ts_buf_printf(err, "launcher environment: node count '%s' is not a number in 1..%d (the world size)", nn,
                      e->nranks);
        return 0;
    }
    e->node = e->rank / e->local_size; /* unless said: ranks numbered node by node */
    if (nd && (!parse_int(nd, &e->node) || e->node < 0 || e->node >= e->nnodes)) {
        ts_buf_printf(err, "launcher environment: node rank '%s' is not a number in 0..%d (%d nodes)", nd,
                      e->nnodes - 1, e->nnodes);
        return 0;
    }
    const char *tcp = getenv("TILESCALE_RDZV_TCP");
    e->tcp = e->nnodes > 1 || (tcp && !strcmp(tcp, "1"));
    const char *port = env2("TILESCALE_MASTER_PORT", "MASTER_PORT");
    int p = 0;
    if (port && (!parse_int(port, &p) || p <= 0 || p > 65535) && (e->tcp || !dir)) {
        ts_buf_printf(err, "launcher environment: port '%s' is not a number in 1..65535", port);
        return 0;
    }
    e->port = port ? p : 0;
    if (e->tcp) {
        const char *addr = env2("TILESCALE_MASTER_ADDR", "MASTER_ADDR");
        if (!port) {
            ts_buf_printf(err, "launcher environment: a world of %d nodes meets at MASTER_ADDR:MASTER_PORT (rank 0's "
                               "node): set MASTER_PORT (or TILESCALE_MASTER_PORT)",
                          e->nnodes);
            return 0;
        }
        e->addr = strdup(addr ? addr : "127.0.0.1");
        if (!e->addr) {
            ts_buf_puts(err, "launcher environment: out of memory");
            return 0;
        }
    }
    if (dir) {
        e->dir = strdup(dir);
        if (!e->dir) ts_buf_puts(err, "launcher environment: out of memory");
        return e->dir != NULL;
    }
    if (!port) {
        ts_buf_puts(err, "launcher environment: no rendezvous: set TILESCALE_RDZV (a directory all ranks see) or "
                         "MASTER_PORT (or TILESCALE_MASTER_PORT)");
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
    free(e->addr);
    e->dir = NULL;
    e->addr = NULL;
}

/* This host's name as the world compares it: TILESCALE_HOST_ID (how tests
 * make two "nodes" of one machine look like two hosts), else gethostname. */
static void host_id(char out[TS_RDZV_HOST]) {
    const char *h = getenv("TILESCALE_HOST_ID");
    if (h && *h) snprintf(out, TS_RDZV_HOST, "%s", h);
    else if (gethostname(out, TS_RDZV_HOST) != 0) snprintf(out, TS_RDZV_HOST, "?");
    out[TS_RDZV_HOST - 1] = 0;
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
    z->env.addr = e->addr ? strdup(e->addr) : NULL;
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
    char host[TS_RDZV_HOST];
    host_id(host);
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
    if (e->tcp) { /* several nodes: the state lives with rank 0's server, the directory holds heaps only */
        z->ctl = calloc(1, sizeof *z->ctl);
        if (!z->ctl) {
            ts_buf_puts(err, "rendezvous: out of memory");
            goto fail;
        }
        if (!ts_rdzv_tcp_join(z, host, err)) goto fail;
        free(path);
        return 1;
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
    c->node[e->rank] = e->node;
    c->local[e->rank] = e->local_rank;
    memcpy(c->host[e->rank], host, sizeof host);
    __atomic_store_n(&c->magic, RDZV_MAGIC, __ATOMIC_RELEASE);
    z->gen = __atomic_load_n(&c->arrived[e->rank], __ATOMIC_ACQUIRE);
    free(path);
    return 1;
fail:
    if (z->net) ts_rdzv_tcp_leave(z);
    if (z->ctl && e->tcp) free(z->ctl);
    else if (z->ctl) munmap(z->ctl, sizeof(TsRdzvCtl));
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
    if (z->net) {
        ts_rdzv_tcp_send(z, TS_RDZV_LEAVE, 0, NULL, 0);
        ts_rdzv_tcp_leave(z); /* rank 0: serves the others until they have left too */
        if (z->port_dir) rmdir(z->env.dir); /* the last of this host's ranks out removes it */
        free(z->ctl);
        z->ctl = NULL;
        ts_launch_env_free(&z->env);
        return;
    }
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

/* The TCP server (rank 0's process) cannot be reached any more. */
static int lost(const TsRdzv *z, const char *what, TsBuf *err) {
    ts_buf_printf(err, "rank %d: %s: lost the rendezvous at %s (rank 0's process: it has exited or its node is down)",
                  z->env.rank, what, ts_rdzv_tcp_where(z));
    return 0;
}

int ts_rdzv_barrier(TsRdzv *z, const char *what, int slow, TsBuf *err) {
    TsRdzvCtl *c = z->ctl;
    int n = z->env.nranks;
    int64_t limit = slow && z->timeout_ms < 600000 ? 600000 : z->timeout_ms;
    int64_t g = ++z->gen, t0 = now_ms(), last_check = t0;
    __atomic_store_n(&c->arrived[z->env.rank], g, __ATOMIC_RELEASE);
    if (z->net && !ts_rdzv_tcp_send(z, TS_RDZV_ARRIVE, g, NULL, 0)) return lost(z, what, err);
    for (long spin = 0;; spin++) {
        if (z->net) { /* a round trip to the server per look, a millisecond apart */
            struct timespec ms = {0, 1000000};
            if (spin) nanosleep(&ms, NULL);
            if (!ts_rdzv_tcp_refresh(z)) return lost(z, what, err);
        }
        int missing = 0;
        for (int p = 0; p < n; p++) missing += __atomic_load_n(&c->arrived[p], __ATOMIC_ACQUIRE) < g;
        if (!missing) return 1;
        if (!z->net && spin < 200) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, spin < 2000 ? 50000 : 500000};
        if (!z->net) nanosleep(&ts, NULL);
        int64_t t = now_ms();
        if (t - last_check < 20 && t - t0 <= limit) continue;
        last_check = t;
        for (int p = 0; p < n; p++) {
            int32_t pid = __atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE);
            if (__atomic_load_n(&c->arrived[p], __ATOMIC_ACQUIRE) >= g) continue;
            if (z->net ? __atomic_load_n(&c->dead[p], __ATOMIC_ACQUIRE) : pid > 0 && !alive(pid)) {
                ts_buf_printf(err, "rank %d: %s: rank %d (pid %d", z->env.rank, what, p, (int)pid);
                if (z->net) ts_buf_printf(err, " on %s", c->host[p]);
                ts_buf_puts(err, ") has exited");
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
    if (z->net) ts_rdzv_tcp_send(z, TS_RDZV_PUBLISH, 0, z->ctl->blob[z->env.rank], TS_RDZV_BLOB);
}

const void *ts_rdzv_peer(TsRdzv *z, int rank) {
    if (z->net && rank != z->env.rank) ts_rdzv_tcp_blobs(z); /* (lost: the copy stays; the next barrier says so) */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return z->ctl->blob[rank];
}

int ts_rdzv_node(const TsRdzv *z, int rank) { return z->ctl->node[rank]; }
int ts_rdzv_local(const TsRdzv *z, int rank) { return z->ctl->local[rank]; }
const char *ts_rdzv_host(const TsRdzv *z, int rank) { return z->ctl->host[rank]; }
const char *ts_rdzv_dir(TsRdzv *z, int rank) { return z->net ? ts_rdzv_tcp_dir(z, rank) : z->env.dir; }

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
    if (z->net) ts_rdzv_tcp_send(z, TS_RDZV_ABORT, 0, text, text ? strlen(text) + 1 : 0);
}

int ts_rdzv_aborted(TsRdzv *z) {
    if (z->net && !ts_rdzv_tcp_refresh(z)) return 1; /* the server is gone: nobody can finish */
    return __atomic_load_n(&z->ctl->aborted, __ATOMIC_ACQUIRE);
}

int ts_rdzv_dead_peer(TsRdzv *z, int *pid) {
    const TsRdzvCtl *c = z->ctl;
    if (z->net && !ts_rdzv_tcp_refresh(z) && z->env.rank != 0) { /* rank 0's process, the server, is gone */
        if (pid) *pid = (int)c->pid[0];
        return 0;
    }
    for (int p = 0; p < z->env.nranks; p++) {
        int32_t q = __atomic_load_n(&c->pid[p], __ATOMIC_ACQUIRE);
        int gone = z->net ? __atomic_load_n(&c->dead[p], __ATOMIC_ACQUIRE) : !alive(q);
        if (p != z->env.rank && q > 0 && !__atomic_load_n(&c->left[p], __ATOMIC_ACQUIRE) && gone) {
            if (pid) *pid = (int)q;
            return p;
        }
    }
    return -1;
}

const char *ts_rdzv_message(TsRdzv *z) {
    if (z->net) ts_rdzv_tcp_message(z);
    return __atomic_load_n(&z->ctl->msg_done, __ATOMIC_ACQUIRE) ? z->ctl->msg : "";
}

void ts_rdzv_clear(TsRdzv *z) {
    TsRdzvCtl *c = z->ctl;
    if (z->net) ts_rdzv_tcp_send(z, TS_RDZV_CLEAR, 0, NULL, 0);
    __atomic_store_n(&c->aborted, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&c->msg_done, 0, __ATOMIC_RELEASE);
    c->msg[0] = 0;
    __atomic_store_n(&c->msg_taken, 0, __ATOMIC_RELEASE);
}
