/*
 * world.h — the world of ranks and their symmetric heaps, below the targets.
 *
 * One interface, several backends (include/tilescale_comm.h lists them):
 * a TsWorld owns N heaps of one size, hands out symmetric allocations (one
 * offset valid on every rank), and launches a kernel on every rank.  What
 * a rank's kernel needs to reach the others is a TsRankEnv: its rank, the
 * table of every rank's heap base (the kernel ABI carries it, so remote
 * address = peer base + offset), the world's failure sink and the wait
 * timeout.  A launch outside any world runs as rank 0 of 1 with a private
 * sink, so the same generated code works alone.
 *
 * Failures.  Generated code reports a misused primitive (peer out of
 * range, an access past the end of a tensor, a wait past its timeout)
 * through TsCommSink: the first message is kept, `aborted` goes to 1, and
 * every rank's waits see it and return, so one failure ends the whole
 * launch instead of leaving the other ranks spinning.
 *
 * The first TS_WORLD_SYS_BYTES of every heap are the world's own: counters
 * of T.barrier_all (one 64-bit word per kernel of a chain, on rank 0's
 * heap) and, at TS_WORLD_ABORT_AT, the world's abort word (CUDA kernels of
 * the ipc backend set and watch it, so a failure in one process stops the
 * others' waits), reset before every launch.
 *
 * proc/ipc (one process per rank): the world holds this process's heap
 * and its mappings of the peers' (base[] is per process, the offsets are
 * the same everywhere); `self` is the rank it runs and `rdzv` how it meets
 * the others (rdzv.h).  A launch is: barrier; rank 0 clears the reserved
 * words and the abort state; barrier; this rank's kernels (a monitor
 * thread carries an abort between this process's failure sink and the
 * rendezvous); barrier; every rank reports the first failure of any.
 */
#ifndef TS_COMM_WORLD_H
#define TS_COMM_WORLD_H

#include <pthread.h>

#include "core.h"
#include "tilescale_comm.h"

#define TS_WORLD_SYS_BYTES 256   /* reserved head of every heap */
#define TS_WORLD_ALIGN 256       /* alignment of symmetric allocations */
#define TS_WORLD_MAX_CHAIN 31    /* kernels of a chain with their own barrier word */
#define TS_WORLD_ABORT_AT 248    /* byte offset of the abort word in rank 0's head */

/* Where run-time failures of generated code go (thread-safe). */
typedef struct TsCommSink {
    pthread_mutex_t mu;  /* guards msg */
    TsBuf msg;           /* the first failure's text ("" if none) */
    int32_t aborted;     /* 1 once anything failed (read atomically by waits) */
} TsCommSink;

void ts_comm_sink_init(TsCommSink *s);
void ts_comm_sink_free(TsCommSink *s);
/* TsCFailFn: keeps the first message, sets aborted. */
void ts_comm_sink_fail(void *sink, const char *text);
/* TsCClockFn. */
int64_t ts_comm_now_ms(void);
/* The wait timeout: $TILESCALE_WAIT_TIMEOUT seconds, else 60 s. */
int64_t ts_comm_default_timeout_ms(void);

struct TsCXport; /* target/c/c_target.h: a transport request */

/* What one rank's launch gets. */
typedef struct TsRankEnv {
    int rank, nranks;          /* this rank, number of ranks */
    void *const *peer_base;    /* [nranks] heap bases (NULL outside a world) */
    int64_t heap_bytes;        /* size of each heap */
    int64_t *sync_words;       /* barrier counters (rank 0's reserved head) */
    TsCommSink *sink;          /* failures */
    int64_t wait_timeout_ms;   /* waits fail past this */
    int num_threads;           /* CPU workers for this rank (0: the kernel's option) */
    void *stream;              /* local world: the rank's CUstream */
    void *cumod;               /* local world on several GPUs: the kernel's TsModuleCuda
                                  loaded on this rank's GPU (NULL: the kernel's own) */
    int ranks_per_node;        /* ranks of one node (0: nranks); peer_base[p] is NULL for a
                                  rank p of another node */
    int (*xport)(void *ctx, const struct TsCXport *req); /* sim: the transport to other nodes (TsCXportFn), or NULL */
    void *xport_ctx;           /* its first argument */
    int64_t sync_off;          /* byte offset of sync_words in rank 0's heap */
} TsRankEnv;

typedef struct TsLocal TsLocal; /* local_cuda.c */
typedef struct TsRdzv TsRdzv;   /* rdzv.h */

struct TsWorld {
    TsContext *ctx;            /* errors go to its diagnostic */
    TsWorldOptions opt;        /* as created (defaults filled in) */
    void **base;               /* [nranks] heap bases (local: device addresses) */
    int64_t used;              /* bytes allocated so far (same on every rank) */
    TsCommSink sink;           /* failures of the current launch (sim) */
    TsLocal *local;            /* the local backend's driver state, or NULL (sim) */
    int self;                  /* proc/ipc: the rank this process runs; -1: all */
    int dev_share;             /* ranks on this process's GPU (co-residency check) */
    TsRdzv *rdzv;              /* proc/ipc: the rendezvous, else NULL */
    int64_t *map_len;          /* proc: [nranks] bytes mapped at base[r] (0: none) */
    int ready;                 /* proc/ipc: creation completed (leaving waits for the peers) */
    TsBuf warnings;            /* start-up topology warnings, a line each ("" if none) */
    int64_t xport_served;      /* sim with several nodes: transport requests done so far (all launches) */
};

/* Replaces the context's diagnostic with "error: <message>" and returns st. */
TsStatus ts_world_fail(TsContext *ctx, TsStatus st, const char *fmt, ...) TS_PRINTF(3, 4);

/* ---- the local backend (local_cuda.c): ranks on device 0 of this process ---- */

/* Loads the driver, allocates the heaps (w->base), streams; errors via ctx. */
TsStatus ts_local_create(TsWorld *w);
void ts_local_destroy(TsWorld *w);
/* Host <-> device copy of bytes at a heap address. */
TsStatus ts_local_copy(TsWorld *w, int to_device, void *dev, void *host, int64_t bytes);
/* Every rank's launch of k (and its chain), each on its own stream, with
 * the module's world globals set and a co-residency check first. */
TsStatus ts_local_launch(TsWorld *w, TsKernel *k, const TsTensor *args, int nargs);
/* ipc (w->self >= 0): this rank's IPC handle (64 bytes) and a key of its
 * GPU (same key: same device); map a peer's heap from its handle. */
TsStatus ts_local_export(TsWorld *w, unsigned char handle[64], uint64_t *dev_key);
TsStatus ts_local_open(TsWorld *w, int rank, const unsigned char handle[64]);
/* Start-up topology checks of this rank's GPU against every peer's (keys
 * from ts_local_export): visible, peer access, native peer atomics; what
 * does not hold is appended to warn, a line each. */
void ts_local_topology(TsWorld *w, const uint64_t *keys, TsBuf *warn);
/* ipc through NCCL ($TILESCALE_ENGINE=nccl): whether it is asked for;
 * rank 0's ncclUniqueId (128 bytes); the communicator, the heap
 * (ncclMemAlloc) and its symmetric window, every rank's heap base from it
 * (collective: every rank calls it after the rendezvous). */
int ts_local_engine_nccl(void);
TsStatus ts_local_nccl_id(TsWorld *w, unsigned char id[128]);
TsStatus ts_local_nccl_init(TsWorld *w, const unsigned char id[128]);
/* Number of CUDA devices (0 without a driver); for the launcher. */
int ts_local_device_count(void);

#endif
