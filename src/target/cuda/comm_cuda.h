/*
 * comm_cuda.h — the CUDA target's emitter of communication primitives
 * (comm_cuda.c) and the two hooks codegen_cuda.c calls: the prelude once per
 * file that communicates, and one emission per kept TS_OP_COMM op (in
 * uniform code the code generator puts barriers before and after it; in
 * per-thread code, T.Parallel bodies, the calling thread does it alone).
 */
#ifndef TS_TARGET_CUDA_COMM_CUDA_H
#define TS_TARGET_CUDA_COMM_CUDA_H

#include "target/cexpr.h"

/* How the code generator names a buffer. */
typedef struct TsCudaCommBuf {
    const char *name;        /* C name of its base pointer or array */
    int param;               /* kernel parameter index (global), else -1 */
    const int64_t *strides;  /* non-global: constant row-major element strides */
} TsCudaCommBuf;

/* What the emitter gets from the code generator. */
typedef struct TsCudaComm {
    TsCxGen *x;              /* the shared expression emitter (x->o: output, NULL in a dry run) */
    int ind;                 /* indentation level */
    int nthreads;            /* threads per block */
    TsCudaCommBuf (*buf)(void *g, const IrBuffer *b); /* a buffer's names */
    void *g;                 /* the code generator, for buf */
    int per_thread;          /* 1: in per-thread code (a T.Parallel body): this
                                thread alone does the primitive, no barriers */
} TsCudaComm;

/* Appends the communication globals and helpers (after the prelude). */
void ts_cuda_comm_prelude(TsBuf *o);
/* Several nodes (IrKernel.multinode): nccl_device.h, the GIN globals (ts_gin_comm, ts_gin_win,
 * ts_comm_rpn) and ts_gin_off, after the communication prelude. */
void ts_cuda_gin_prelude(TsBuf *o);
/* Appends the warp primitives' helpers (ts_warp_*: shuffles, ballot,
 * butterfly reductions), for kernels that use them. */
void ts_cuda_warp_prelude(TsBuf *o);
/* Whether op can be done by one thread (in per-thread code): element
 * stores, loads, atomics, signals, waits, fences and put/get; not the
 * block-wide barriers. */
int ts_cuda_comm_per_thread_ok(const IrTileOp *op);
/* Emits the kept communication op s (IR_S_TILEOP, TS_OP_INST_COMM). */
void ts_cuda_comm_emit(const TsCudaComm *h, const IrStmt *s);

#endif
