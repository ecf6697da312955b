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
 * instead of waiting for its timeout.  Multi-node worlds would bootstrap
 * through NCCL instead (doc/DISTRIBUTED.md); this is the single-node path.
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
    char *dir;         /* the rendezvous directory (malloc'd: ts_launch_env_free) */
} TsLaunchEnv;

/* 1 if the environment names a world (a world size is set), else 0. */
int ts_launch_env_present(void);
/* Reads and checks the environment; 0 and a message in err on failure
 * (either way e is to be freed with ts_launch_env_free). */
int ts_launch_env_read(TsLaunchEnv *e, TsBuf *err);
void ts_launch_env_free(TsLaunchEnv *e);

typedef struct TsRdzvCtl TsRdzvCtl; /* the shared file's layout (rdzv.c) */

/* One process's handle on the rendezvous. */
typedef struct TsRdzv {
    TsLaunchEnv env;    /* who we are (its own copy of the directory's name) */
    TsRdzvCtl *ctl;     /* the mapped control file */
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
const void *ts_rdzv_peer(const TsRdzv *z, int rank);
/* The abort word: set with the first failure's text (kept if one is
 * there; NULL: set the word only), read, and cleared by rank 0 between
 * launches. */
void ts_rdzv_abort(TsRdzv *z, const char *text);
int ts_rdzv_aborted(const TsRdzv *z);
/* A peer that joined and has exited without leaving (a crash, a kill), or
 * -1; *pid gets its pid. */
int ts_rdzv_dead_peer(const TsRdzv *z, int *pid);
const char *ts_rdzv_message(const TsRdzv *z);
void ts_rdzv_clear(TsRdzv *z);

#endif
