/*
 * interp_thread.h — a thread-level reference interpreter for one block.
 *
 * The block-level interpreter (interp.h) runs a kernel the way the C
 * target does: one sequential walk per block.  After the CUDA passes the
 * IR is per thread (SPMD, see doc and src/ir/ir.h: IR_FOR_THREAD,
 * IR_S_BARRIER, IR_S_VCOPY, cp.async groups, shfl_xor, fragment layouts,
 * swizzles), and its bugs are bugs of concurrency: a missing barrier, a
 * missing async wait, an element no thread owns.  This interpreter runs
 * every thread of a block, switching between them at barriers and warp
 * collectives, and reports those bugs deterministically, as TS_ERR_RUNTIME
 * errors with the statement's source location (ts_fail_at through the
 * TsDiag, so callers need ts_try):
 *
 *   - a shared-memory race: two different threads touch one element of a
 *     shared buffer between two barriers, at least one of them writing;
 *   - a cp.async copy whose destination is read (or written) before an
 *     async wait covering its group ran: copies land only at that wait;
 *   - an element of a fragment read or written by a thread its layout
 *     does not give it to, and layouts that put two elements in one
 *     register or an element on no thread of the block;
 *   - a swizzle that is not a bijection on its buffer;
 *   - reads of shared, fragment or local memory nothing wrote (poison),
 *     out-of-bounds accesses;
 *   - a barrier some threads reach and others do not (deadlock), or one
 *     inside a partial thread range; a warp collective without its warp.
 *
 * The model is strict: the IR is entirely per thread (the CUDA passes
 * partition_threads and insert_sync leave nothing to the code generator),
 * every statement is run by every thread, and a plain T.Parallel loop is a
 * plain loop of each thread (so an unpartitioned nest that writes shared
 * memory is a race).  Thread-level statements mean what ir.h says.  (An
 * earlier "printer" model ran block-level leftovers the way the CUDA
 * printer used to: cyclic nests, thread-0 stores and barriers it added; the
 * passes made it unnecessary.)
 *
 * Values and arithmetic are those of the block-level interpreter (each
 * simulated thread owns an IrInterp for its variables), so results can be
 * compared with it and with the C target bit for bit where no reduction
 * order differs.
 */
#ifndef TS_IR_INTERP_THREAD_H
#define TS_IR_INTERP_THREAD_H

#include "ir/ir.h"

typedef struct IrTInterp IrTInterp;

typedef enum IrTInterpModel {
    IR_TINTERP_STRICT,  /* every statement per thread (the thread-level IR contract) */
} IrTInterpModel;

/* An interpreter for kernel k (its threads per block, its buffers);
 * structures in arena a, errors to d.  Checks layouts and swizzles of the
 * kernel's buffers (errors through d: call inside ts_try). */
IrTInterp *ir_tinterp_new(TsArena *a, TsDiag *d, const IrKernel *k, IrTInterpModel model);
/* Host data of a global buffer (row-major by its shape, or by its strides);
 * written through. */
void ir_tinterp_bind_buffer(IrTInterp *x, const IrBuffer *b, double *data);
/* A scalar parameter or shape variable, for every thread. */
void ir_tinterp_bind_var(IrTInterp *x, const IrVar *v, double value);
/* Run block (bx, by, bz) with all of its threads. */
void ir_tinterp_run_block(IrTInterp *x, int64_t bx, int64_t by, int64_t bz);
/* Every block of the grid, in order. */
void ir_tinterp_run_grid(IrTInterp *x);
/* Barriers completed so far. */
int64_t ir_tinterp_barriers(const IrTInterp *x);
/* What each barrier was good for, over the blocks run so far: a barrier
 * is needed in a run when an access after it conflicts with another
 * thread's access before it (same shared element, one of them writing,
 * in the epochs just before and after it) — without it, that pair would
 * be a race.  A barrier that is never needed is redundant for these
 * inputs (what insert_sync should not emit). */
typedef struct IrTInterpBarrier {
    const IrStmt *stmt; /* the IR_S_BARRIER */
    int implied;        /* 0 (every barrier is an explicit IR_S_BARRIER now) */
    int64_t completed;  /* times all threads passed it */
    int64_t needed;     /* of those, times it separated a conflicting pair */
} IrTInterpBarrier;
/* The barriers met so far (*out points into x; valid until the next run). */
int ir_tinterp_barrier_stats(const IrTInterp *x, const IrTInterpBarrier **out);
/* Text printed by thread 0's IR_S_PRINT statements. */
const char *ir_tinterp_output(IrTInterp *x);
/* Frees heap storage (shadow memory, per-thread views). */
void ir_tinterp_free(IrTInterp *x);

#endif
