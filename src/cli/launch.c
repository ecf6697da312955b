/*
 * launch.c — `tilescale launch -n N [options] [--] PROG [ARGS...]`: start N
 * processes of one world on this node and see them through.
 *
 *   -n N              the world size (1..64)
 *   --rdzv DIR        the rendezvous directory (default: a fresh one under
 *                     /dev/shm, else $TMPDIR or /tmp, removed at the end)
 *   --timeout S       stop the whole job after S seconds (exit status 124)
 *   --grace S         after a failure, how long the others get between
 *                     SIGTERM and SIGKILL (default 3)
 *   --nnodes K, --node-rank I, --master-addr A, --master-port P
 *                     one launcher per node: this one starts ranks
 *                     I*N .. I*N+N-1 of a world of K*N; the ranks meet at
 *                     A:P (rank 0's process serves the rendezvous there,
 *                     comm/rdzv_tcp.c; A defaults to $MASTER_ADDR, else
 *                     127.0.0.1, P to $MASTER_PORT).  Without
 *                     TILESCALE_SEED every node draws the same seed from
 *                     A:P, so all ranks make the same inputs.
 *
 * Each process gets TILESCALE_RANK, TILESCALE_WORLD_SIZE,
 * TILESCALE_LOCAL_RANK, TILESCALE_LOCAL_WORLD_SIZE, TILESCALE_NODE_RANK,
 * TILESCALE_NNODES and TILESCALE_RDZV (this node's directory), the usual
 * RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and NODE_RANK for programs
 * that read those (and MASTER_ADDR/MASTER_PORT with several nodes), and one TILESCALE_SEED for all (so that every rank
 * draws the same random inputs; kept if already set).  A world created in
 * such a process (comm/rdzv.h) finds its peers through the directory.
 * PROG `tilescale` means this very executable, so
 * `./build/tilescale launch -n 4 -- tilescale run ...` needs no PATH.
 *
 * GPUs: with several devices visible, rank r's CUDA_VISIBLE_DEVICES is the
 * list rotated to start at device r mod count, so device 0 of every
 * process is its own GPU while the others stay visible for peer access
 * (the CUDA target uses device 0).  With one GPU all ranks share it.
 *
 * Teardown: the first rank that exits non-zero or by a signal is reported
 * ("rank 1 (pid 4242) exited with status 3"), the others get SIGTERM and,
 * after the grace period, SIGKILL (each rank is a process group of its
 * own, and the whole group gets them, so what a rank started goes too); the launcher exits with that rank's
 * status (128 + signal for a signal).  SIGINT/SIGTERM to the launcher are
 * passed on the same way.  Signals are taken with sigtimedwait on a
 * blocked set, so the launcher needs no handler and no global state; the
 * children's environments are built before fork, since the CUDA driver
 * (asked for the device count) may have started threads by then.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h" /* TsBuf, the library's growable string */
#include "cli/dist.h"
#include "cli/opts.h"
#include "tilescale_comm.h"

extern char **environ;

#define LMAX TS_WORLD_MAX_RANKS

/* One child. */
typedef struct Child {
    pid_t pid;      /* 0 before it started */
    int done;       /* reaped */
    int status;     /* its wait status once done */
    char **envp;    /* its environment (malloc'ed strings) */
} Child;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* "NAME=value" (malloc'ed). */
static char *kv(const char *name, const char *value) {
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s=%s", name, value);
    return s;
}

static char *kvi(const char *name, long v) {
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    return kv(name, b);
}

/* Names this launcher sets: dropped from the inherited environment. */
static int ours(const char *kv) {
    static const char *const names[] = {"TILESCALE_RANK=", "TILESCALE_WORLD_SIZE=", "TILESCALE_LOCAL_RANK=",
                                        "TILESCALE_LOCAL_WORLD_SIZE=", "TILESCALE_RDZV=", "RANK=", "WORLD_SIZE=",
                                        "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "TILESCALE_SEED=",
                                        "CUDA_VISIBLE_DEVICES=", "TILESCALE_NODE_RANK=", "NODE_RANK=",
                                        "GROUP_RANK=", "TILESCALE_NNODES=", "NNODES=", "TILESCALE_MASTER_ADDR=",
                                        "TILESCALE_MASTER_PORT="};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(kv, names[i], strlen(names[i]))) return 1;
    return 0;
}

/* The world's shape as this launcher sees it. */
typedef struct Nodes {
    int nnodes;        /* nodes (one launcher each) */
    int node;          /* this launcher's node */
    const char *addr;  /* MASTER_ADDR (several nodes) */
    int port;          /* MASTER_PORT (several nodes) */
} Nodes;

/* Local rank r's environment: the inherited one plus the world's names. */
static char **make_env(int r, int n, const Nodes *nd, const char *dir, unsigned long long seed, const char *gpus) {
    size_t k = 0, m = 0;
    while (environ[m]) m++;
    char **e = calloc(m + 24, sizeof *e);
    if (!e) return NULL;
    int multi = nd->nnodes > 1;
    for (size_t i = 0; i < m; i++)
        if (!ours(environ[i]) &&
            !(multi && (!strncmp(environ[i], "MASTER_ADDR=", 12) || !strncmp(environ[i], "MASTER_PORT=", 12))))
            e[k++] = strdup(environ[i]);
    int g = nd->node * n + r, size = nd->nnodes * n; /* ranks numbered node by node, as torchrun does */
    e[k++] = kvi("TILESCALE_RANK", g);
    e[k++] = kvi("TILESCALE_WORLD_SIZE", size);
    e[k++] = kvi("TILESCALE_LOCAL_RANK", r);
    e[k++] = kvi("TILESCALE_LOCAL_WORLD_SIZE", n);
    e[k++] = kvi("TILESCALE_NODE_RANK", nd->node);
    e[k++] = kvi("TILESCALE_NNODES", nd->nnodes);
    e[k++] = kvi("RANK", g);
    e[k++] = kvi("WORLD_SIZE", size);
    e[k++] = kvi("LOCAL_RANK", r);
    e[k++] = kvi("LOCAL_WORLD_SIZE", n);
    e[k++] = kvi("NODE_RANK", nd->node);
    if (multi) {
        e[k++] = kv("MASTER_ADDR", nd->addr);
        e[k++] = kvi("MASTER_PORT", nd->port);
    }
    e[k++] = kv("TILESCALE_RDZV", dir);
    char sb[64];
    snprintf(sb, sizeof sb, "TILESCALE_SEED=%llu", seed);
    e[k++] = strdup(sb);
    if (gpus) e[k++] = kv("CUDA_VISIBLE_DEVICES", gpus);
    for (size_t i = 0; i < k; i++)
        if (!e[i]) return NULL;
    return e;
}

static void free_env(char **e) {
    for (size_t i = 0; e && e[i]; i++) free(e[i]);
    free(e);
}

/* The device list rotated to start at position r (NULL: leave it alone). */
static char *rotate_gpus(int r, int ndev) {
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    char *ids[LMAX];
    int m = 0;
    char *buf = cvd && *cvd ? strdup(cvd) : NULL; /* any length: no fixed buffer */
    size_t cap = (buf ? strlen(buf) : 0) + 64;
    if (buf) {
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && m < LMAX; t = strtok_r(NULL, ",", &save))
            ids[m++] = t;
    } else {
        static const char *const digits[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
                                             "10", "11", "12", "13", "14", "15"};
        for (; m < ndev && m < 16; m++) ids[m] = (char *)digits[m];
    }
    char *out = m < 2 ? NULL : malloc(cap); /* the same ids, rotated: as long as the list */
    size_t k = 0;
    for (int i = 0; out && i < m; i++) k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? "," : "", ids[(r + i) % m]);
    free(buf);
    return out;
}

/* Removes the files a world leaves in the directory, and it if we made it. */
static void clean_dir(const char *dir, int made) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (!strcmp(e->d_name, "ctl") || !strncmp(e->d_name, "heap.", 5)) {
                TsBuf path = {0}; /* no length limit */
                ts_buf_printf(&path, "%s/%s", dir, e->d_name);
                if (!path.oom) unlink(ts_buf_str(&path));
                ts_buf_free(&path);
            }
        closedir(d);
    }
    if (made) rmdir(dir);
}

static void describe(char *out, size_t n, int status) {
    if (WIFSIGNALED(status)) snprintf(out, n, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
}

static int code_of(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

#define LAUNCH_USAGE                                                                                         \
    "usage: tilescale launch -n N [--rdzv DIR] [--timeout SECONDS] [--grace SECONDS]\n"                           \
    "                        [--nnodes K --node-rank I [--master-addr A] [--master-port P]] [--] PROG [ARGS...]\n"

static void usage_launch(void) { fprintf(stderr, LAUNCH_USAGE); }

int ts_cli_launch(int argc, char **argv) {
    int n = 0, i = 2, node_given = 0;
    const char *rdzv = NULL, *port_s = NULL;
    Nodes nd = {1, 0, NULL, 0};
    double timeout = 0, grace = 3;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-') break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf(LAUNCH_USAGE);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "tilescale: error: launch: %s needs a value\n", a);
            usage_launch();
            return 2;
        }
        int64_t v = 0;
        if (!strcmp(a, "-n") || !strcmp(a, "--nproc")) {
            if (!cli_parse_int(a, argv[++i], 1, LMAX, &v)) return 2;
            n = (int)v;
        } else if (!strcmp(a, "--nnodes")) {
            if (!cli_parse_int(a, argv[++i], 1, LMAX, &v)) return 2;
            nd.nnodes = (int)v;
        } else if (!strcmp(a, "--node-rank")) {
            if (!cli_parse_int(a, argv[++i], 0, LMAX - 1, &v)) return 2;
            nd.node = (int)v;
            node_given = 1;
        } else if (!strcmp(a, "--master-addr")) nd.addr = argv[++i];
        else if (!strcmp(a, "--master-port")) port_s = argv[++i];
        else if (!strcmp(a, "--rdzv")) rdzv = argv[++i];
        else if (!strcmp(a, "--timeout")) {
            if (!cli_parse_double(a, argv[++i], 0, &timeout)) return 2;
        } else if (!strcmp(a, "--grace")) {
            if (!cli_parse_double(a, argv[++i], 0, &grace)) return 2;
        } else {
            fprintf(stderr, "tilescale: error: launch: unknown option '%s'\n", a);
            usage_launch();
            return 2;
        }
    }
    if (n < 1 || n > LMAX) {
        fprintf(stderr, "tilescale: error: launch: -n must be in 1..%d\n", LMAX);
        usage_launch();
        return 2;
    }
    if (i >= argc) {
        fprintf(stderr, "tilescale: error: launch: no program to start\n");
        usage_launch();
        return 2;
    }
    if (nd.nnodes > 1) { /* the others' launchers run the same command on their nodes */
        if (!node_given) {
            fprintf(stderr, "tilescale: error: launch: --nnodes %d needs --node-rank (this node's index)\n", nd.nnodes);
            return 2;
        }
        if (nd.node >= nd.nnodes) {
            fprintf(stderr, "tilescale: error: launch: --node-rank %d is not below --nnodes %d\n", nd.node, nd.nnodes);
            return 2;
        }
        if (n * nd.nnodes > LMAX) {
            fprintf(stderr, "tilescale: error: launch: %d nodes x %d ranks is more than %d ranks\n", nd.nnodes, n, LMAX);
            return 2;
        }
        if (!port_s) port_s = getenv("MASTER_PORT");
        if (!nd.addr) nd.addr = getenv("MASTER_ADDR") && *getenv("MASTER_ADDR") ? getenv("MASTER_ADDR") : "127.0.0.1";
        int64_t pv = 0;
        if (!port_s || !*port_s) {
            fprintf(stderr, "tilescale: error: launch: --nnodes %d needs --master-port (or MASTER_PORT): where rank 0 "
                            "serves the rendezvous\n", nd.nnodes);
            return 2;
        }
        if (!cli_parse_int("--master-port", port_s, 1, 65535, &pv)) return 2;
        nd.port = (int)pv;
    } else if (node_given && nd.node != 0) {
        fprintf(stderr, "tilescale: error: launch: --node-rank %d without --nnodes\n", nd.node);
        return 2;
    }
    char **prog = argv + i;
    uint64_t seed_check;
    if (cli_env_seed(&seed_check) < 0) return 2;
    char *self = NULL; /* this executable's path, of any length */
    const char *path = prog[0];
    if (!strcmp(prog[0], "tilescale")) {
        for (size_t cap = 256; cap <= (1u << 20); cap *= 2) {
            char *p = realloc(self, cap);
            if (!p) break;
            self = p;
            ssize_t k = readlink("/proc/self/exe", self, cap);
            if (k <= 0) break;
            if ((size_t)k < cap) {
                self[k] = 0;
                path = self;
                break;
            }
        }
    }

    /* the rendezvous directory (any length: the OS says if it is too long) */
    TsBuf dirb = {0};
    int made = 0;
    if (rdzv) ts_buf_puts(&dirb, rdzv);
    else {
        struct stat st;
        const char *tmp = getenv("TMPDIR");
        const char *root = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
                               ? "/dev/shm"
                               : tmp && *tmp ? tmp : "/tmp";
        ts_buf_printf(&dirb, "%s/tilescale-XXXXXX", root);
    }
    if (dirb.oom || !dirb.s) {
        fprintf(stderr, "tilescale: error: launch: out of memory\n");
        ts_buf_free(&dirb);
        free(self);
        return 1;
    }
    char *dir = dirb.s;
    if (rdzv) {
        if (mkdir(dir, 0700) == 0) made = 1;
        else if (errno != EEXIST) {
            fprintf(stderr, "tilescale: error: launch: cannot create %s: %s\n", dir, strerror(errno));
            ts_buf_free(&dirb);
            free(self);
            return 1;
        }
    } else {
        if (!mkdtemp(dir)) {
            fprintf(stderr, "tilescale: error: launch: cannot create a directory in %.*s: %s\n",
                    (int)(strlen(dir) - strlen("/tilescale-XXXXXX")), dir, strerror(errno));
            ts_buf_free(&dirb);
            free(self);
            return 1;
        }
        made = 1;
    }
    uint64_t seed64 = 0;
    if (!cli_env_seed(&seed64)) { /* (a malformed one was refused before) */
        seed64 = cli_entropy_seed();
        if (nd.nnodes > 1) { /* one seed on every node without talking: from the meeting point */
            seed64 = 1469598103934665603ull;
            for (const char *c = nd.addr; *c; c++) seed64 = (seed64 ^ (unsigned char)*c) * 1099511628211ull;
            seed64 = (seed64 ^ (uint64_t)nd.port) * 1099511628211ull;
        }
    }
    unsigned long long seed = seed64;
    int ndev = getenv("TILESCALE_LAUNCH_NO_GPU") ? 0 : ts_world_device_count();

    Child ch[LMAX];
    memset(ch, 0, sizeof ch);
    int rc = 0;
    for (int r = 0; r < n; r++) {
        char *gpus = ndev > 1 ? rotate_gpus(r, ndev) : NULL;
        ch[r].envp = make_env(r, n, &nd, dir, seed, gpus);
        free(gpus);
        if (!ch[r].envp) {
            fprintf(stderr, "tilescale: error: launch: out of memory\n");
            rc = 1;
        }
    }

    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    fflush(NULL);
    int started = 0;
    for (int r = 0; r < n && !rc; r++) {
        pid_t p = fork();
        if (p == 0) {
            setpgid(0, 0); /* its own process group: stopping it stops what it started */
            sigprocmask(SIG_SETMASK, &old, NULL);
            execvpe(path, prog, ch[r].envp);
            fprintf(stderr, "tilescale: error: launch: rank %d: cannot run '%s': %s\n", nd.node * n + r, prog[0], strerror(errno));
            _exit(127);
        }
        if (p < 0) {
            fprintf(stderr, "tilescale: error: launch: cannot start rank %d: %s\n", nd.node * n + r, strerror(errno));
            rc = 1;
            break;
        }
        setpgid(p, p);
        ch[r].pid = p;
        started++;
    }

    /* watch them */
    double t0 = now_s(), kill_at = 0;
    int stopping = rc != 0, left = started, first = -1;
    if (stopping) {
        for (int r = 0; r < n; r++)
            if (ch[r].pid) kill(-ch[r].pid, SIGTERM);
        kill_at = now_s() + grace;
    }
    while (left > 0) {
        struct timespec tick = {0, 50 * 1000 * 1000};
        siginfo_t si;
        int sig = sigtimedwait(&set, &si, &tick);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            if (!stopping) {
                fprintf(stderr, "tilescale launch: %s: stopping all ranks\n", strsignal(sig));
                rc = 128 + sig;
            }
            stopping = 1;
            kill_at = now_s() + grace;
            for (int r = 0; r < n; r++)
                if (ch[r].pid && !ch[r].done) kill(-ch[r].pid, SIGTERM);
        }
        int status;
        pid_t p;
        while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
            for (int r = 0; r < n; r++) {
                if (ch[r].pid != p || ch[r].done) continue;
                ch[r].done = 1;
                ch[r].status = status;
                left--;
                int bad = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
                if (bad && !stopping) {
                    char what[128];
                    describe(what, sizeof what, status);
                    fprintf(stderr, "tilescale launch: rank %d (pid %d) %s; stopping the other ranks%s\n", nd.node * n + r,
                            (int)p, what, nd.nnodes > 1 ? " of this node" : "");
                    first = r;
                    rc = code_of(status);
                    stopping = 1;
                    kill_at = now_s() + grace;
                    for (int q = 0; q < n; q++)
                        if (ch[q].pid && !ch[q].done) kill(-ch[q].pid, SIGTERM);
                }
            }
        }
        double t = now_s();
        if (!stopping && timeout > 0 && t - t0 > timeout) {
            fprintf(stderr, "tilescale launch: timed out after %g s; stopping ranks", timeout);
            for (int r = 0; r < n; r++)
                if (!ch[r].done) fprintf(stderr, " %d", r);
            fprintf(stderr, "\n");
            rc = 124;
            stopping = 1;
            kill_at = t + grace;
            for (int r = 0; r < n; r++)
                if (ch[r].pid && !ch[r].done) kill(-ch[r].pid, SIGTERM);
        }
        if (stopping && kill_at > 0 && t > kill_at) {
            for (int r = 0; r < n; r++)
                if (ch[r].pid && !ch[r].done) kill(-ch[r].pid, SIGKILL);
            kill_at = 0;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (first >= 0)
        for (int r = 0; r < n; r++)
            if (r != first && ch[r].done && WIFEXITED(ch[r].status) && WEXITSTATUS(ch[r].status)) {
                char what[128];
                describe(what, sizeof what, ch[r].status);
                fprintf(stderr, "tilescale launch: rank %d %s\n", nd.node * n + r, what);
            }
    clean_dir(dir, made);
    for (int r = 0; r < n; r++) free_env(ch[r].envp);
    ts_buf_free(&dirb);
    free(self);
    return rc;
}
