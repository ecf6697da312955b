/*
 * rdzv.h — how the processes of one world find each other: the launcher's
 * environment and a rendezvous through a directory of one node.
 *
 * The `proc` and `ipc` backends run one rank per process.  The processes
 * are started by `tilescale launch` (cli/launch.c) or by another launcher
 * (torchrun, mpirun with a wrapper); what a process learns from its
 * environment is its rank, the world size, its local rank and where the
 * rendezvous lives.  Names, first match wins:
 *
 *   rank        TILESCALE_RANK, RANK
 *   world size  TILESCALE_WORLD_SIZE, WORLD_SIZE
 *   local rank  TILESCALE_LOCAL_RANK, LOCAL_RANK (default: the rank)
 *   directory   TILESCALE_RDZV; else, for launchers that give only
 *               MASTER_ADDR/MASTER_PORT, ${TMPDIR:-/tmp}/tilescale-rdzv-<uid>-<port>
 *               with the port from TILESCALE_MASTER_PORT or MASTER_PORT
 *
 * The directory holds `ctl`, a small file every rank maps shared: a slot
 * per rank (its pid, what it publishes: heap size, IPC handle, device),
 * arrival counters for host barriers, an abort word and the first failure
 * message.  Every rank creates it with O_CREAT and ftruncate to one size,
 * so no rank has to come first and nothing is ever zeroed twice.
 *
 * Why a directory and not a socket server: all ranks of a node see the
 * same /dev/shm or /tmp, a mapped file needs no thread to serve it, and a
 * rank that dies leaves its pid behind for the others to test with
 * kill(pid, 0), so a barrier reports "rank 1 (pid 4242) has exited"
 * instead of waiting for its timeout.
 *
 * Several nodes (rdzv_tcp.c): a directory is one host's, so a world whose
 * launcher says it spans nodes (node rank TILESCALE_NODE_RANK, NODE_RANK or
 * torchrun's GROUP_RANK; TILESCALE_NNODES or NNODES, else world size /
 * local world size; local world size TILESCALE_LOCAL_WORLD_SIZE or
 * LOCAL_WORLD_SIZE), or TILESCALE_RDZV_TCP=1, meets instead at
 * MASTER_ADDR:MASTER_PORT (TILESCALE_MASTER_ADDR / _PORT first; address
 * 127.0.0.1 if none), where rank 0's process serves the same state over
 * TCP: the client keeps a copy of the shared layout below and refreshes
 * it from the server, so barriers, blobs and the abort word behave as
 * with the file, and a rank whose connection drops without leaving is
 * "exited" as a dead pid is here.  The directory then only holds this
 * node's heap files (a peer's is found through the directory it gave when
 * joining).  Each rank also records its node, local rank and host
 * (gethostname, or TILESCALE_HOST_ID), which gives the rank -> (node,
 * local rank) map and says which peers share this host's memory.
 *
 * Paths have no length limit: the directory is the environment's string,
 * copied, and the files' paths in it are built as needed (a fixed 512-byte
 * buffer used to refuse a long TILESCALE_RDZV and silently drop a long
 * TMPDIR for /tmp).  The failure message in ctl is the one fixed size (it
 * lives in the shared file): a longer one is cut there with "...", and the
 * rank that failed still reports its own whole message.
 *
 * Barriers: barrier number g is passed when every rank's arrival word is
 * at least g; a barrier gives up on the abort word, on a peer that has
 * exited, and after its timeout, naming the ranks that did not arrive.
 */
#ifndef TS_COMM_RDZV_H
#define TS_COMM_RDZV_H

#include <stdint.h>

#include "core.h"

#define TS_RDZV_MAX_RANKS 64  /* = TS_WORLD_MAX_RANKS */
#define TS_RDZV_BLOB 192      /* bytes each rank publishes */
#define TS_RDZV_MSG 2048      /* bytes of the first failure message */

/* What the launcher's environment says about this process. */
typedef struct TsLaunchEnv {
    int rank;          /* this process's rank */
    int nranks;        /* the world size */
    int local_rank;    /* rank among this node's processes (device choice) */
    int local_size;    /* processes on this node (default: the world size) */
    int node;          /* this node's index (default 0) */
    int nnodes;        /* nodes in the world (default: world size / local size, rounded up) */
    int tcp;           /* meet over TCP at addr:port instead of through dir's ctl file */
    int port;          /* MASTER_PORT (0: none given) */
    char *addr;        /* MASTER_ADDR (malloc'd; only with tcp) */
    char *dir;         /* the rendezvous directory (malloc'd: ts_launch_env_free) */
} TsLaunchEnv;

/* 1 if the environment names a world (a world size is set), else 0. */
int ts_launch_env_present(void);
/* Reads and checks the environment; 0 and a message in err on failure
 * (either way e is to be freed with ts_launch_env_free). */
int ts_launch_env_read(TsLaunchEnv *e, TsBuf *err);
void ts_launch_env_free(TsLaunchEnv *e);

#define TS_RDZV_HOST 64        /* bytes of a host's name */

/* The shared state: the mapped file `ctl` on one node, the server's state
 * (and each client's copy of it) over TCP.  Accessed with __atomic
 * builtins in the file. */
typedef struct TsRdzvCtl {
    uint32_t magic;                                        /* RDZV_MAGIC once a rank joined */
    int32_t nranks;                                        /* the world size (first rank to join sets it) */
    int32_t aborted;                                       /* 1 once any rank failed */
    int32_t msg_taken;                                     /* 1 once a failure message is being written */
    int32_t msg_done;                                      /* 1 once it is complete */
    int32_t pid[TS_RDZV_MAX_RANKS];                        /* each rank's pid, 0 before it joined */
    int32_t left[TS_RDZV_MAX_RANKS];                       /* 1 once the rank has left (done or failed) */
    int32_t dead[TS_RDZV_MAX_RANKS];                       /* TCP: 1 once its connection dropped before it left */
    int32_t node[TS_RDZV_MAX_RANKS];                       /* each rank's node */
    int32_t local[TS_RDZV_MAX_RANKS];                      /* each rank's local rank on its node */
    int64_t arrived[TS_RDZV_MAX_RANKS];                    /* the last barrier each rank reached */
    char host[TS_RDZV_MAX_RANKS][TS_RDZV_HOST];            /* each rank's host (whose memory it shares) */
    char msg[TS_RDZV_MSG];                                 /* the first failure's text */
    unsigned char blob[TS_RDZV_MAX_RANKS][TS_RDZV_BLOB];   /* what each rank published */
} TsRdzvCtl;

typedef struct TsRdzvNet TsRdzvNet; /* a TCP rendezvous' connection (rdzv_tcp.c) */

/* One process's handle on the rendezvous. */
typedef struct TsRdzv {
    TsLaunchEnv env;    /* who we are (its own copy of the directory's name) */
    TsRdzvCtl *ctl;     /* the mapped control file, or over TCP this client's copy of the server's */
    TsRdzvNet *net;     /* the TCP connection (NULL: the file) */
    int64_t gen;        /* barriers passed so far */
    int64_t timeout_ms; /* how long a barrier waits */
    int port_dir;       /* the directory is the MASTER_PORT form (ours to remove) */
} TsRdzv;

/* Joins: maps ctl, claims this rank's slot (pid), checks the world size
 * against the other ranks'.  timeout_ms: how long a barrier waits for a
 * rank that does not come (<= 0: $TILESCALE_RDZV_TIMEOUT seconds, else
 * 300 s; peers compile their kernels first, and a dead or failed peer is
 * noticed at once anyway).  0 and a message in err on failure. */
int ts_rdzv_join(TsRdzv *z, const TsLaunchEnv *e, int64_t timeout_ms, TsBuf *err);
/* Unmaps; the last rank out (after a final barrier) removes ctl.  Frees
 * the copy of the environment. */
void ts_rdzv_leave(TsRdzv *z, int last);
/* Every rank arrives, then all go on.  `what` names it in errors.  0 and a
 * message on failure (timeout, a rank that exited or left).  `slow`: the
 * peers may be busy first (kernels, host work between launches), so the
 * timeout is max(timeout_ms, 10 min): a dead peer is found by its pid
 * anyway; joining uses timeout_ms, since a peer that never started can be
 * found no other way. */
int ts_rdzv_barrier(TsRdzv *z, const char *what, int slow, TsBuf *err);
/* This rank's published bytes (at most TS_RDZV_BLOB), and a peer's. */
void ts_rdzv_publish(TsRdzv *z, const void *blob, size_t n);
const void *ts_rdzv_peer(TsRdzv *z, int rank);
/* The abort word: set with the first failure's text (kept if one is
 * there; NULL: set the word only), read, and cleared by rank 0 between
 * launches. */
void ts_rdzv_abort(TsRdzv *z, const char *text);
int ts_rdzv_aborted(TsRdzv *z);
/* A peer that joined and has exited without leaving (a crash, a kill), or
 * -1; *pid gets its pid. */
int ts_rdzv_dead_peer(TsRdzv *z, int *pid);
const char *ts_rdzv_message(TsRdzv *z);
void ts_rdzv_clear(TsRdzv *z);
/* Where rank r runs: its node and local rank, its host's name, and the
 * directory holding its heap file (valid after the joining barrier). */
int ts_rdzv_node(const TsRdzv *z, int rank);
int ts_rdzv_local(const TsRdzv *z, int rank);
const char *ts_rdzv_host(const TsRdzv *z, int rank);
const char *ts_rdzv_dir(TsRdzv *z, int rank);

/* The TCP form (rdzv_tcp.c), called by rdzv.c when z->net is set.  Each
 * returns 0 when the server cannot be reached (and says so in err where
 * it takes one). */
int ts_rdzv_tcp_join(TsRdzv *z, const char *host, TsBuf *err);
void ts_rdzv_tcp_leave(TsRdzv *z);
int ts_rdzv_tcp_refresh(TsRdzv *z);                /* the state's words into z->ctl */
int ts_rdzv_tcp_blobs(TsRdzv *z);                  /* every rank's blob into z->ctl */
int ts_rdzv_tcp_message(TsRdzv *z);                /* the failure text into z->ctl */
const char *ts_rdzv_tcp_dir(TsRdzv *z, int rank);  /* rank's heap directory (fetched once) */
int ts_rdzv_tcp_send(TsRdzv *z, int op, int64_t arg, const void *data, size_t n); /* a one-way update */
const char *ts_rdzv_tcp_where(const TsRdzv *z);    /* "addr:port" */
enum { TS_RDZV_ARRIVE = 2, TS_RDZV_PUBLISH = 4, TS_RDZV_ABORT = 6, TS_RDZV_CLEAR = 8, TS_RDZV_LEAVE = 9 };

#endif
