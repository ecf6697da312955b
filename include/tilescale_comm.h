/*
 * tilescale_comm.h — the public C API of the distributed world.
 *
 * A world is N ranks, each with a symmetric heap of the same size.  A
 * buffer allocated on the heap sits at the same byte offset on every rank,
 * so a kernel that knows every rank's heap base reaches a peer's copy of
 * any heap tensor as `peer base + offset` (that is what T.put_block,
 * T.st(..., dst_pe=...) and the other primitives do).  Kernels launched on
 * a world run once per rank, concurrently, each seeing its own rank id.
 *
 * Backends:
 *   TS_WORLD_SIM   ranks are threads of this process, kernels run on the
 *                  C target; how every distributed kernel is tested in CI.
 *   TS_WORLD_LOCAL one process drives N ranks on GPU 0, a CUDA stream each
 *                  (kernels of the CUDA target); heaps are device memory,
 *                  filled and read with ts_world_write / ts_world_read.
 *   TS_WORLD_PROC  one process per rank, C target: heaps are shared-memory
 *                  files every rank maps (the sim backend across processes).
 *   TS_WORLD_IPC   one process per rank, CUDA target: each rank's heap is
 *                  its own device allocation, exported with
 *                  cuIpcGetMemHandle and opened by every peer (one GPU or
 *                  several of one node).
 *   PROC and IPC worlds are made by processes that `tilescale launch -n N`
 *   (or another launcher) started: rank, world size and the rendezvous
 *   come from the environment (TILESCALE_RANK, TILESCALE_WORLD_SIZE,
 *   TILESCALE_RDZV, or RANK, WORLD_SIZE, MASTER_PORT); every process
 *   calls the same functions in the same order, and a launch runs only
 *   this process's rank (ts_world_rank), between host barriers.
 *
 * Typical use (2 ranks, an all-gather):
 *
 *   TsWorldOptions wo = {TS_WORLD_SIM, 2, 1 << 24, 0};
 *   TsWorld *w; ts_world_create(ctx, &wo, &w);
 *   TsTensor A[2], B[2];            // A[r], B[r]: rank r's copy
 *   ts_world_tensor(w, TS_FLOAT32, 1, shapeA, A);
 *   ts_world_tensor(w, TS_FLOAT32, 1, shapeB, B);
 *   TsTensor args[2 * 2] = {A[0], B[0], A[1], B[1]};   // rank-major
 *   ts_kernel_launch_world(k, w, args, 2);
 *   ts_world_destroy(w);
 *
 * Errors follow tilescale.h: a TsStatus, the text in ts_last_error(ctx).
 * A primitive misused at run time (a peer out of range, a put past the
 * end of a tensor, a wait that never ends) fails the launch with
 * TS_ERR_RUNTIME and a message naming the rank, the buffer and the value;
 * no launch hangs: waits give up after the world's timeout.
 */
#ifndef TILESCALE_COMM_H
#define TILESCALE_COMM_H

#include "tilescale.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TsWorldBackend {
    TS_WORLD_SIM = 0, /* threads of this process, C target */
    TS_WORLD_LOCAL,   /* one process, ranks on GPU 0, CUDA target */
    TS_WORLD_PROC,    /* a process per rank, shared-memory heaps, C target */
    TS_WORLD_IPC      /* a process per rank, CUDA IPC heaps, CUDA target */
} TsWorldBackend;

typedef struct TsWorldOptions {
    TsWorldBackend backend;  /* TS_WORLD_SIM */
    int nranks;              /* 1..TS_WORLD_MAX_RANKS */
    int64_t heap_bytes;      /* per rank; 0: 64 MiB */
    int64_t wait_timeout_ms; /* 0: $TILESCALE_WAIT_TIMEOUT (seconds) or 60 s */
    int ranks_per_node;      /* ranks of one node, r's node = r / ranks_per_node (SIM: emulated
                              * nodes, a rank of another node reached only through the
                              * transport); 0: $TILESCALE_RANKS_PER_NODE, else the launcher's
                              * LOCAL_WORLD_SIZE, else every rank on one node */
                             /* PROC/IPC: nranks must match the environment's
                              * world size (0: take it from there) */
} TsWorldOptions;

#define TS_WORLD_MAX_RANKS 64

typedef struct TsWorld TsWorld;

TsStatus ts_world_create(TsContext *ctx, const TsWorldOptions *opt, TsWorld **out);
void ts_world_destroy(TsWorld *w);
int ts_world_nranks(const TsWorld *w);
/* The rank this process runs (PROC/IPC), or -1 when it runs all of them. */
int ts_world_rank(const TsWorld *w);
/* What the start-up topology checks found (IPC: a peer's GPU not visible,
 * no peer access, no native peer atomics), a line each; "" if all holds. */
const char *ts_world_warnings(const TsWorld *w);
/* The node rank `rank` runs on, and (local_rank, may be NULL) its rank
 * among that node's processes, as the launcher said (PROC/IPC; one node,
 * local rank = rank, otherwise). */
int ts_world_node(const TsWorld *w, int rank, int *local_rank);
/* Ranks per node (SIM/LOCAL: the option; PROC/IPC: the launcher's local
 * world size); a world of one node gives nranks. */
int ts_world_ranks_per_node(const TsWorld *w);
/* 1 if ranks a and b are on one node: in one LSA team, each reaching the
 * other's heap by load and store. */
int ts_world_same_node(const TsWorld *w, int a, int b);
/* SIM worlds of several nodes: the requests the transport between nodes
 * has carried so far (puts, gets, atomics, quiets), over all launches. */
int64_t ts_world_xport_served(const TsWorld *w);
/* 1 if this process was started by a launcher (the environment names a
 * world: TILESCALE_WORLD_SIZE or WORLD_SIZE); *nranks gets its size. */
int ts_world_launched(int *nranks);
/* Number of CUDA devices of this node (0 without a driver or device). */
int ts_world_device_count(void);
/* Reserve `bytes` on every rank's heap at one offset (256-byte aligned,
 * zero-filled). */
TsStatus ts_world_alloc(TsWorld *w, int64_t bytes, int64_t *offset);
/* Rank r's address of a heap offset (sim: a pointer of this process;
 * local: a device address; proc/ipc: this process's mapping of rank r's
 * heap). */
void *ts_world_ptr(TsWorld *w, int rank, int64_t offset);
/* A contiguous tensor on every rank's heap: out[r] is rank r's copy.  The
 * tensors keep pointing at `shape`, which must outlive them. */
TsStatus ts_world_tensor(TsWorld *w, TsDType dt, int ndim, const int64_t *shape, TsTensor *out);
/* Copy bytes between host memory and rank r's heap at a byte offset (the
 * local backend's heaps are device memory: this is how they are filled
 * and read; on sim it is memcpy). */
TsStatus ts_world_write(TsWorld *w, int rank, int64_t offset, const void *src, int64_t bytes);
TsStatus ts_world_read(TsWorld *w, int rank, int64_t offset, void *dst, int64_t bytes);
/* Byte offset of p in rank r's heap, or -1 if it is not there. */
int64_t ts_world_offset(const TsWorld *w, int rank, const void *p);
/* Run k (and its chain) on every rank at once: args holds nranks groups of
 * nargs tensors, rank-major (args[r * nargs + i] is rank r's i-th).  Tensors
 * that remote primitives reach must be on the heap (ts_world_tensor).
 * PROC/IPC: every process passes the same table (its own mappings of the
 * peers' tensors); only this process's rank runs, and the call returns
 * when every rank's kernels are done (an error of any rank is reported by
 * all). */
TsStatus ts_kernel_launch_world(TsKernel *k, TsWorld *w, const TsTensor *args, int nargs);

#ifdef __cplusplus
}
#endif
#endif
