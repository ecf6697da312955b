/*
 * rdzv_tcp.c — the rendezvous of a world that spans several nodes, over TCP.
 *
 * On one node the ranks meet in a mapped file (rdzv.c).  Nodes share no
 * file, so rank 0's process serves the same state (TsRdzvCtl, rdzv.h) at
 * MASTER_ADDR:MASTER_PORT, as launchers expect (torchrun's ranks find their
 * store there too), and every rank, rank 0 included, is a client of it.
 * The client keeps its own copy of the state and refreshes it before each
 * look (rdzv.c's barrier, abort and dead-peer polls work on that copy
 * unchanged); updates (arrival at a barrier, a published blob, the abort
 * text, leaving) are sent as they happen.  What a pid test gives on one
 * node, the server gives here: a rank whose connection drops before it
 * left is marked dead, and the others name it at once.  If rank 0's
 * process (the server) goes, every request fails: barriers say the
 * rendezvous was lost, waits see the abort word set.
 *
 * Why a server thread and not NCCL's bootstrap: the world must meet before
 * NCCL exists (rank 0's ncclUniqueId travels through this state), and the
 * proc backend has no NCCL at all.  Why one request per look instead of
 * pushing changes: the state is about 6 KiB without the blobs, the polls
 * are a millisecond apart, and a request/reply protocol needs no client
 * thread.
 *
 * Protocol: a request is a Req header (operation, rank, one integer, the
 * length of what follows) and its bytes; the server answers every request
 * with a Rep header (status, length) and its bytes, so the client's
 * exchanges stay in step.  Integers are the host's byte order: the nodes
 * of one world run one build of this library on one architecture (the
 * join checks a magic word that would differ otherwise).
 */
#include "comm/rdzv.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TCP_MAGIC 0x74537470u  /* "tStp": the first word of a join */
#define MAX_CONN (TS_RDZV_MAX_RANKS + 8)
#define REPLY_MS 120000         /* how long a client waits for the server's answer */

enum { OP_JOIN = 1, OP_STATE = 3, OP_BLOBS = 5, OP_MSG = 7, OP_DIRS = 10 };

/* A request's header. */
typedef struct Req {
    uint32_t op;   /* OP_* or TS_RDZV_* */
    int32_t rank;  /* the sender's rank */
    int64_t arg;   /* the world size (join), the barrier's number (arrive) */
    uint32_t len;  /* bytes that follow */
    uint32_t pad;  /* zero */
} Req;

/* A reply's header. */
typedef struct Rep {
    int32_t ok;    /* 1, or 0 with an error text following */
    uint32_t len;  /* bytes that follow */
} Rep;

/* What a rank sends to join (its directory's name follows). */
typedef struct Join {
    uint32_t magic;               /* TCP_MAGIC */
    int32_t pid;                  /* its process */
    int32_t node;                 /* its node */
    int32_t local;                /* its local rank */
    char host[TS_RDZV_HOST];      /* its host */
} Join;

/* The state's words a look needs (STATE's reply): everything but texts and blobs. */
typedef struct State {
    int32_t nranks;                        /* the world size */
    int32_t aborted;                       /* the abort word */
    int32_t msg_taken;                     /* a failure text is there */
    int32_t msg_done;                      /* ... complete */
    int32_t pid[TS_RDZV_MAX_RANKS];        /* each rank's pid */
    int32_t left[TS_RDZV_MAX_RANKS];       /* left the world */
    int32_t dead[TS_RDZV_MAX_RANKS];       /* connection dropped before leaving */
    int32_t node[TS_RDZV_MAX_RANKS];       /* each rank's node */
    int32_t local[TS_RDZV_MAX_RANKS];      /* each rank's local rank */
    int64_t arrived[TS_RDZV_MAX_RANKS];    /* the last barrier each reached */
    char host[TS_RDZV_MAX_RANKS][TS_RDZV_HOST]; /* each rank's host */
} State;

/* The server: a thread of rank 0's process. */
typedef struct Server {
    int lfd;                        /* the listening socket */
    int wake[2];                    /* a pipe: rank 0 tells the thread to stop */
    pthread_t th;                   /* the thread */
    int fd[MAX_CONN];               /* connections (-1: free) */
    int who[MAX_CONN];              /* the rank each connection joined as (-1: not yet) */
    int stop;                       /* rank 0 is leaving: 1 stop once the others are gone, 2 stop now (atomic) */
    int done;                       /* set (atomically) when the thread has stopped serving */
    TsRdzvCtl st;                   /* the world's state */
    char *dir[TS_RDZV_MAX_RANKS];   /* each rank's directory (malloc'd) */
} Server;

struct TsRdzvNet {
    int fd;                /* this client's connection */
    int lost;              /* the connection broke: every request fails */
    pthread_mutex_t mu;    /* one exchange at a time (the launch's monitor thread shares it) */
    Server *srv;           /* rank 0: the server it runs */
    char *dirs[TS_RDZV_MAX_RANKS]; /* every rank's directory, once fetched */
    char where[300];       /* "addr:port" for messages */
};

/* ---- bytes on sockets ------------------------------------------------------------ */

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        c += k;
        n -= (size_t)k;
    }
    return 1;
}

/* Reads n bytes, waiting at most ms for each piece (ms < 0: no limit). */
static int read_all(int fd, void *p, size_t n, int ms) {
    char *c = p;
    while (n) {
        if (ms >= 0) {
            struct pollfd q = {fd, POLLIN, 0};
            int r = poll(&q, 1, ms);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return 0;
        }
        ssize_t k = recv(fd, c, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        c += k;
        n -= (size_t)k;
    }
    return 1;
}

static int reply(int fd, int ok, const void *p, size_t n) {
    Rep r = {ok, (uint32_t)n};
    return write_all(fd, &r, sizeof r) && (!n || write_all(fd, p, n));
}

/* ---- the server ------------------------------------------------------------------ */

static int reply_err(int fd, const char *fmt, ...) TS_PRINTF(2, 3);
static int reply_err(int fd, const char *fmt, ...) {
    char b[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    return reply(fd, 0, b, strlen(b) + 1);
}

static int do_join(Server *S, int c, const Req *q, const unsigned char *body) {
    TsRdzvCtl *st = &S->st;
    Join j;
    if (q->len < sizeof j) return reply_err(S->fd[c], "rendezvous: a malformed join");
    memcpy(&j, body, sizeof j);
    if (j.magic != TCP_MAGIC) return reply_err(S->fd[c], "rendezvous: a join from another build or architecture");
    int r = q->rank, n = (int)q->arg;
    j.host[TS_RDZV_HOST - 1] = 0;
    if (st->nranks == 0) st->nranks = n;
    if (n != st->nranks)
        return reply_err(S->fd[c], "rendezvous: rank %d (on %s) was started for a world of %d ranks, but rank 0's "
                                   "world has %d", r, j.host, n, st->nranks);
    if (r < 0 || r >= n) return reply_err(S->fd[c], "rendezvous: rank %d is outside the world (%d ranks)", r, n);
    if (st->pid[r] && !st->dead[r])
        return reply_err(S->fd[c], "rendezvous: rank %d is already taken by pid %d on %s (two processes with one rank)",
                         r, (int)st->pid[r], st->host[r]);
    for (int p = 0; p < n; p++)
        if (p != r && st->pid[p] && !st->dead[p] && st->node[p] == j.node && st->local[p] == j.local)
            return reply_err(S->fd[c], "rendezvous: ranks %d and %d both say they are local rank %d of node %d", p, r,
                             j.local, j.node);
    size_t dn = q->len - sizeof j;
    char *dir = malloc(dn + 1);
    if (!dir) return reply_err(S->fd[c], "rendezvous: out of memory");
    memcpy(dir, body + sizeof j, dn);
    dir[dn] = 0;
    free(S->dir[r]);
    S->dir[r] = dir;
    st->pid[r] = j.pid;
    st->dead[r] = 0;
    st->left[r] = 0;
    st->node[r] = j.node;
    st->local[r] = j.local;
    memcpy(st->host[r], j.host, TS_RDZV_HOST);
    st->magic = 1;
    S->who[c] = r;
    return reply(S->fd[c], 1, NULL, 0);
}

/* Serves one request on connection c; 0 when the connection is to go. */
static int serve(Server *S, int c) {
    Req q;
    if (!read_all(S->fd[c], &q, sizeof q, 10000)) return 0;
    if (q.len > (1u << 20)) return 0;
    unsigned char *body = q.len ? malloc(q.len) : NULL;
    if (q.len && (!body || !read_all(S->fd[c], body, q.len, 10000))) {
        free(body);
        return 0;
    }
    TsRdzvCtl *st = &S->st;
    int r = S->who[c], ok = 1;
    if (q.op != OP_JOIN && r < 0) {
        free(body);
        return 0; /* nothing before a join */
    }
    switch (q.op) {
    case OP_JOIN: ok = do_join(S, c, &q, body); break;
    case TS_RDZV_ARRIVE:
        if (q.arg > st->arrived[r]) st->arrived[r] = q.arg;
        ok = reply(S->fd[c], 1, NULL, 0);
        break;
    case OP_STATE: {
        State s;
        memset(&s, 0, sizeof s);
        s.nranks = st->nranks;
        s.aborted = st->aborted;
        s.msg_taken = st->msg_taken;
        s.msg_done = st->msg_done;
        memcpy(s.pid, st->pid, sizeof s.pid);
        memcpy(s.left, st->left, sizeof s.left);
        memcpy(s.dead, st->dead, sizeof s.dead);
        memcpy(s.node, st->node, sizeof s.node);
        memcpy(s.local, st->local, sizeof s.local);
        memcpy(s.arrived, st->arrived, sizeof s.arrived);
        memcpy(s.host, st->host, sizeof s.host);
        ok = reply(S->fd[c], 1, &s, sizeof s);
        break;
    }
    case TS_RDZV_PUBLISH:
        memcpy(st->blob[r], body, q.len < TS_RDZV_BLOB ? q.len : TS_RDZV_BLOB);
        ok = reply(S->fd[c], 1, NULL, 0);
        break;
    case OP_BLOBS: ok = reply(S->fd[c], 1, st->blob, (size_t)st->nranks * TS_RDZV_BLOB); break;
    case TS_RDZV_ABORT:
        if (q.len > 1 && !st->msg_taken) { /* the first failure's text, cut as the file cuts it */
            body[q.len - 1] = 0;
            size_t n = strlen((char *)body);
            if (n < sizeof st->msg) memcpy(st->msg, body, n + 1);
            else snprintf(st->msg, sizeof st->msg, "%.*s...\n", (int)sizeof st->msg - 5, (char *)body);
            st->msg_taken = st->msg_done = 1;
        }
        st->aborted = 1;
        ok = reply(S->fd[c], 1, NULL, 0);
        break;
    case OP_MSG: ok = reply(S->fd[c], 1, st->msg_done ? st->msg : "", st->msg_done ? strlen(st->msg) + 1 : 1); break;
    case TS_RDZV_CLEAR:
        st->aborted = st->msg_taken = st->msg_done = 0;
        st->msg[0] = 0;
        ok = reply(S->fd[c], 1, NULL, 0);
        break;
    case TS_RDZV_LEAVE:
        st->left[r] = 1;
        ok = reply(S->fd[c], 1, NULL, 0);
        break;
    case OP_DIRS: { /* every rank's directory, each ended by a NUL */
        TsBuf b = {0};
        for (int p = 0; p < st->nranks; p++) {
            const char *d = S->dir[p] ? S->dir[p] : "";
            ts_buf_putn(&b, d, strlen(d) + 1);
        }
        ok = !b.oom && reply(S->fd[c], 1, b.s, b.n);
        ts_buf_free(&b);
        break;
    }
    default: ok = 0;
    }
    free(body);
    return ok;
}

/* Every rank that joined has left or died (those that never came are not
 * waited for: rank 0 leaves after a failure too). */
static int all_gone(const Server *S) {
    const TsRdzvCtl *st = &S->st;
    for (int p = 0; p < st->nranks; p++)
        if (st->pid[p] && !st->left[p] && !st->dead[p]) return 0;
    return 1;
}

static void drop(Server *S, int c) {
    int r = S->who[c];
    if (r >= 0 && !S->st.left[r]) S->st.dead[r] = 1; /* went without leaving: a crash, a kill, a lost node */
    close(S->fd[c]);
    S->fd[c] = -1;
    S->who[c] = -1;
}

static void *server_main(void *p) {
    Server *S = p;
    struct pollfd q[MAX_CONN + 2];
    for (;;) {
        int stop = __atomic_load_n(&S->stop, __ATOMIC_ACQUIRE);
        if (stop == 2 || (stop == 1 && all_gone(S))) break;
        int n = 0;
        q[n++] = (struct pollfd){S->wake[0], POLLIN, 0};
        q[n++] = (struct pollfd){S->lfd, POLLIN, 0};
        int map[MAX_CONN];
        for (int c = 0; c < MAX_CONN; c++)
            if (S->fd[c] >= 0) {
                map[n - 2] = c;
                q[n++] = (struct pollfd){S->fd[c], POLLIN, 0};
            }
        int k = poll(q, (nfds_t)n, 1000);
        if (k < 0 && errno != EINTR) break;
        if (k <= 0) continue;
        if (q[0].revents) { /* rank 0 is leaving: the loop's test says when to stop */
            char x[8];
            ssize_t got = read(S->wake[0], x, sizeof x);
            (void)got;
            continue;
        }
        for (int i = 2; i < n; i++)
            if (q[i].revents && !serve(S, map[i - 2])) drop(S, map[i - 2]);
        if (q[1].revents & POLLIN) {
            int fd = accept(S->lfd, NULL, NULL);
            int c = 0;
            while (fd >= 0 && c < MAX_CONN && S->fd[c] >= 0) c++;
            if (fd >= 0 && c == MAX_CONN) close(fd);
            else if (fd >= 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                S->fd[c] = fd;
                S->who[c] = -1;
            }
        }
    }
    __atomic_store_n(&S->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void server_free(Server *S) {
    if (!S) return;
    for (int c = 0; c < MAX_CONN; c++)
        if (S->fd[c] >= 0) close(S->fd[c]);
    if (S->lfd >= 0) close(S->lfd);
    if (S->wake[0] >= 0) close(S->wake[0]);
    if (S->wake[1] >= 0) close(S->wake[1]);
    for (int r = 0; r < TS_RDZV_MAX_RANKS; r++) free(S->dir[r]);
    free(S);
}

/* getaddrinfo for MASTER_ADDR:MASTER_PORT, TCP, any address family;
 * passive: an address to listen at.  Returns getaddrinfo's code. */
static int lookup(const TsLaunchEnv *e, int passive, struct addrinfo **ai) {
    char port[16];
    snprintf(port, sizeof port, "%d", e->port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (passive) hints.ai_flags = AI_PASSIVE;
    return getaddrinfo(e->addr, port, &hints, ai);
}

/* Rank 0: listens at addr:port and starts the serving thread. */
static Server *server_start(const TsLaunchEnv *e, TsBuf *err) {
    Server *S = calloc(1, sizeof *S);
    if (!S) {
        ts_buf_puts(err, "rendezvous: out of memory");
        return NULL;
    }
    S->lfd = S->wake[0] = S->wake[1] = -1;
    for (int c = 0; c < MAX_CONN; c++) S->fd[c] = S->who[c] = -1;
    struct addrinfo *ai = NULL;
    int g = lookup(e, 1, &ai), why = 0;
    if (g) {
        ts_buf_printf(err, "rank 0: rendezvous: MASTER_ADDR '%s': %s", e->addr, gai_strerror(g));
        server_free(S);
        return NULL;
    }
    for (struct addrinfo *a = ai; a && S->lfd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol), one = 1;
        if (fd < 0) continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, MAX_CONN) == 0) S->lfd = fd;
        else {
            why = errno;
            close(fd);
        }
    }
    freeaddrinfo(ai);
    if (S->lfd < 0) {
        ts_buf_printf(err, "rank 0: rendezvous: cannot listen at %s:%d (MASTER_ADDR:MASTER_PORT): %s", e->addr, e->port,
                      strerror(why));
        server_free(S);
        return NULL;
    }
    if (pipe(S->wake) != 0 || pthread_create(&S->th, NULL, server_main, S) != 0) {
        ts_buf_printf(err, "rank 0: rendezvous: cannot start the server: %s", strerror(errno));
        server_free(S);
        return NULL;
    }
    return S;
}

/* ---- the client ------------------------------------------------------------------ */

/* One exchange: the request, then the reply's bytes into a malloc'd *out
 * (NULL to drop them).  0 if the connection is gone; *ok gets the status. */
static int exchange(TsRdzvNet *N, int op, int rank, int64_t arg, const void *data, size_t n, int *ok, void **out,
                    size_t *outn) {
    if (out) *out = NULL;
    if (N->lost) return 0;
    Req q = {(uint32_t)op, rank, arg, (uint32_t)n, 0};
    Rep r;
    int good = write_all(N->fd, &q, sizeof q) && (!n || write_all(N->fd, data, n)) &&
               read_all(N->fd, &r, sizeof r, REPLY_MS);
    void *b = NULL;
    if (good && r.len) {
        b = malloc(r.len);
        good = b && read_all(N->fd, b, r.len, REPLY_MS);
    }
    if (!good) {
        free(b);
        N->lost = 1;
        return 0;
    }
    if (ok) *ok = r.ok;
    if (out) *out = b;
    else free(b);
    if (outn) *outn = r.len;
    return 1;
}

static int request(TsRdzv *z, int op, int64_t arg, const void *data, size_t n, void **out, size_t *outn) {
    TsRdzvNet *N = z->net;
    pthread_mutex_lock(&N->mu);
    int ok = 0, got = exchange(N, op, z->env.rank, arg, data, n, &ok, out, outn);
    pthread_mutex_unlock(&N->mu);
    return got && ok;
}

static int connect_to(const TsLaunchEnv *e, int *fdp, char *why, size_t whyn) {
    struct addrinfo *ai = NULL;
    int g = lookup(e, 0, &ai);
    if (g) {
        snprintf(why, whyn, "%s", gai_strerror(g));
        return 0;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            snprintf(why, whyn, "%s", strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) return 0;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *fdp = fd;
    return 1;
}

int ts_rdzv_tcp_join(TsRdzv *z, const char *host, TsBuf *err) {
    const TsLaunchEnv *e = &z->env;
    TsRdzvNet *N = calloc(1, sizeof *N);
    if (!N) {
        ts_buf_puts(err, "rendezvous: out of memory");
        return 0;
    }
    N->fd = -1;
    pthread_mutex_init(&N->mu, NULL);
    snprintf(N->where, sizeof N->where, "%s:%d", e->addr, e->port);
    z->net = N;
    if (e->rank == 0 && !(N->srv = server_start(e, err))) return 0;
    /* the others try until rank 0 listens (it may start last, or compile first) */
    char why[200] = "no answer";
    for (int64_t t0 = now_ms();;) {
        if (connect_to(e, &N->fd, why, sizeof why)) break;
        if (now_ms() - t0 > z->timeout_ms) {
            ts_buf_printf(err, "rank %d: rendezvous: cannot reach rank 0 at %s (MASTER_ADDR:MASTER_PORT) after %.1f s: "
                               "%s",
                          e->rank, N->where, (double)z->timeout_ms / 1000.0, why);
            return 0;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    TsBuf b = {0};
    Join j = {TCP_MAGIC, (int32_t)getpid(), e->node, e->local_rank, {0}};
    memcpy(j.host, host, TS_RDZV_HOST);
    ts_buf_putn(&b, (const char *)&j, sizeof j);
    ts_buf_puts(&b, e->dir ? e->dir : "");
    int ok = 0;
    void *msg = NULL;
    int got = !b.oom && exchange(N, OP_JOIN, e->rank, e->nranks, b.s, b.n, &ok, &msg, NULL);
    ts_buf_free(&b);
    if (!got || !ok) {
        if (msg) ts_buf_puts(err, (const char *)msg);
        else ts_buf_printf(err, "rank %d: rendezvous: the server at %s closed the connection", e->rank, N->where);
        free(msg);
        return 0;
    }
    free(msg);
    return ts_rdzv_tcp_refresh(z);
}

void ts_rdzv_tcp_leave(TsRdzv *z) {
    TsRdzvNet *N = z->net;
    if (!N) return;
    if (N->fd >= 0) close(N->fd);
    if (N->srv) { /* serve the others until they have left (or died), at most a minute */
        Server *S = N->srv;
        __atomic_store_n(&S->stop, 1, __ATOMIC_RELEASE);
        int poked = write(S->wake[1], "x", 1) == 1;
        for (int64_t t0 = now_ms(); poked && !__atomic_load_n(&S->done, __ATOMIC_ACQUIRE) && now_ms() - t0 < 60000;) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        __atomic_store_n(&S->stop, 2, __ATOMIC_RELEASE);
        if (write(S->wake[1], "x", 1) != 1) { /* (a full pipe has pokes enough) */
        }
        pthread_join(S->th, NULL);
        server_free(N->srv);
    }
    for (int r = 0; r < TS_RDZV_MAX_RANKS; r++) free(N->dirs[r]);
    pthread_mutex_destroy(&N->mu);
    free(N);
    z->net = NULL;
}

int ts_rdzv_tcp_refresh(TsRdzv *z) {
    void *b = NULL;
    size_t n = 0;
    if (!request(z, OP_STATE, 0, NULL, 0, &b, &n) || n != sizeof(State)) {
        free(b);
        return 0;
    }
    State s;
    memcpy(&s, b, sizeof s);
    free(b);
    TsRdzvCtl *c = z->ctl;
    c->nranks = s.nranks;
    __atomic_store_n(&c->aborted, s.aborted, __ATOMIC_RELEASE);
    c->msg_taken = s.msg_taken;
    c->msg_done = s.msg_done;
    memcpy(c->pid, s.pid, sizeof c->pid);
    memcpy(c->left, s.left, sizeof c->left);
    memcpy(c->dead, s.dead, sizeof c->dead);
    memcpy(c->node, s.node, sizeof c->node);
    memcpy(c->local, s.local, sizeof c->local);
    memcpy(c->arrived, s.arrived, sizeof c->arrived);
    memcpy(c->host, s.host, sizeof c->host);
    return 1;
}

int ts_rdzv_tcp_blobs(TsRdzv *z) {
    void *b = NULL;
    size_t n = 0;
    int ok = request(z, OP_BLOBS, 0, NULL, 0, &b, &n) && n <= sizeof z->ctl->blob;
    if (ok) memcpy(z->ctl->blob, b, n);
    free(b);
    return ok;
}

int ts_rdzv_tcp_message(TsRdzv *z) {
    void *b = NULL;
    size_t n = 0;
    int ok = request(z, OP_MSG, 0, NULL, 0, &b, &n) && n >= 1 && n <= sizeof z->ctl->msg;
    if (ok) {
        memcpy(z->ctl->msg, b, n);
        z->ctl->msg[n - 1] = 0;
        z->ctl->msg_done = z->ctl->msg[0] != 0;
    }
    free(b);
    return ok;
}

const char *ts_rdzv_tcp_dir(TsRdzv *z, int rank) {
    TsRdzvNet *N = z->net;
    if (rank == z->env.rank) return z->env.dir ? z->env.dir : "";
    if (!N->dirs[rank] || !*N->dirs[rank]) { /* (a rank not joined yet has none: asked again later) */
        void *b = NULL;
        size_t n = 0;
        if (request(z, OP_DIRS, 0, NULL, 0, &b, &n) && n) {
            const char *p = b, *end = p + n;
            for (int r = 0; r < z->env.nranks && p < end; r++) {
                size_t k = strnlen(p, (size_t)(end - p));
                free(N->dirs[r]);
                N->dirs[r] = strndup(p, k);
                p += k + 1;
            }
        }
        free(b);
    }
    return N->dirs[rank] ? N->dirs[rank] : "";
}

int ts_rdzv_tcp_send(TsRdzv *z, int op, int64_t arg, const void *data, size_t n) {
    return request(z, op, arg, data, n, NULL, NULL);
}

const char *ts_rdzv_tcp_where(const TsRdzv *z) { return z->net ? z->net->where : "?"; }
