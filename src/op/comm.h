/*
 * comm.h — the communication primitives of the distributed layer, as one
 * tile operator (TS_OP_COMM) with a kind.
 *
 * Why one op with kinds rather than one op per primitive: they share
 * everything that matters to the compiler — a peer rank, regions on the
 * symmetric heap that other passes must see as read or written, memory
 * semantics — and they reach the targets the same way (the lowering keeps
 * them, marked TS_OP_INST_COMM, for the target's emitter of remote
 * accesses and waits: target/c/comm_c.c, later target/cuda/comm_cuda.c).
 * The tile-level forms (a remote T.copy, the collectives) are lowered by
 * op/comm.c into loops of the element primitives below.
 *
 * Names and meaning are TileScale's (tilelang/language/distributed,
 * tilelang/language/builtin.py of github.com/tile-ai/tilescale) and, for
 * the NVSHMEM-style names, NVSHMEM's device API.  A peer of -1 (or none)
 * means the local rank.  Operands, per kind (r = IrTileOp.r, a = args,
 * f = cflags):
 *
 *  PUT       r0 src, r1 dst (on the peer), a0 peer.  Flat form (a1 set):
 *            a1 elements from the first element of r0 to the first of r1,
 *            in memory order (T.put_block/put_warp, T.putmem_nbi_block
 *            whose byte count is converted to elements).  With a signal
 *            (nr == 3): afterwards r2 (on the peer) is set to / increased
 *            by a2 (f0 = TsCommSigOp), ordered after the data.
 *            f1 = 1: a warp variant (T.put_warp, T.putmem_*_warp): on CUDA,
 *            in per-thread code, the lanes of a warp that call it together
 *            with one range share it (TileScale's warp primitives are
 *            called by a whole warp), one of them then signals; elsewhere
 *            as the block form.
 *            f2 = n > 0: moved by n threads together, a2 this thread's
 *            index among them (0 .. n-1), elements a2, a2 + n, ... (pass
 *            lower_comm sets it on the put/get of uniform code on CUDA:
 *            the block's threads, or a T.ws role's; nr == 2 there, the
 *            signal split off).  f2 = 0: the calling thread alone (or the
 *            warp variant), or the whole block on the C target.
 *            Rows form (a remote tile copy, op/comm.c): r0 and r1 each have
 *            one axis of extent R > 1 (the others 1): R rows of a1
 *            elements, row i starting at index start + i along that axis
 *            of each buffer (ts_comm_rows_axis).
 *  GET       r0 src (on the peer), r1 dst, a0 peer, a1 elements (flat or
 *            rows, as PUT).
 *  COPY      tile form of T.copy(src, dst, dst=rank / src=rank): r0 src,
 *            r1 dst, rectangular, matched like T.copy; a0 peer; f0 = 0 the
 *            destination is remote, 1 the source is.  Lowered to PUT / GET
 *            ranges or element ST / LD.  f1 = L > 0: a T.Scale("warp")
 *            body's copy, made by the warp's L lanes together, a2 this
 *            thread's lane (elab/comm_builtins.c): ranges as warp variants
 *            (CUDA) or by lane 0 (C), elements dealt to the lanes as LANES.
 *  ST        r0 element (on the peer), a0 peer, a1 value; f1 semantics,
 *            f2 scope (T.st).
 *  LD        r0 element (on the peer), r1 local element receiving it,
 *            a0 peer; f1, f2 as ST (T.ld).
 *  WAIT      r0 element (on the peer), a0 peer, a1 operand; spin until
 *            `element f0 operand` (f0 = TsCommCmp) (T.wait_*,
 *            T.signal_wait_until).  Past the world's timeout: an error
 *            naming rank, buffer, offset and the awaited value.
 *  ATOM_ADD  r0 element (on the peer), a0 peer, a1 value (T.atom_add).
 *  SIGNAL    r0 element (on the peer), a0 peer, a1 value, f0 TsCommSigOp
 *            (T.signal_op).
 *  FENCE     f0 = 0 a fence (ordering), 1 quiet (completion); f2 scope
 *            (T.fence_cta/gpu/sys, T.fence, T.quiet).
 *  BARRIER_BLOCKS  r0 first element of an int32 array of nranks words on
 *            the heap; one block per rank calls it; f0 = 1: with a fence
 *            (T.barrier_blocks; 0: T.sync_blocks).  f1 = 1: done by one
 *            thread for its block, the fence already done by every thread
 *            (pass lower_comm's form, CUDA).
 *  BARRIER_ALL  every block of every rank (T.barrier_all, T.sync_all);
 *            f1 as BARRIER_BLOCKS.
 *  LANES     a local T.copy (nr 2: r0 src, r1 dst, matched like T.copy) or
 *            T.fill (nr 1: r0 dst, a1 value) of a T.Scale("warp") body,
 *            done by the warp's f0 lanes together: a2 is this thread's lane;
 *            element e of the flattened region goes to lane e % f0
 *            (elab/comm_builtins.c makes it, op/comm.c lowers it to a loop
 *            of the thread's elements; no peer, nothing remote).
 */
#ifndef TS_OP_COMM_H
#define TS_OP_COMM_H

#include "op/op.h"

/* A statement holding a new communication op of `kind` (operands empty). */
IrStmt *ts_comm_stmt(TsArena *a, TsCommKind kind, TsLoc loc);
/* The remote-copy op (COPY above): src -> dst, the peer on one side
 * (src_remote: the source is the peer's); made by the front end (a
 * remote T.copy, the views) and by the collectives' lowering (op/coll.c). */
IrStmt *ts_comm_remote_copy(TsArena *a, IrRegion src, IrRegion dst, IrExpr *peer, int src_remote, TsLoc loc);
/* C spelling of a comparison ("==", ...). */
const char *ts_comm_cmp_text(int cmp);
/* The axis of a PUT/GET region in the rows form (the one of extent > 1,
 * *rows set to it), or -1 in the flat form. */
int ts_comm_rows_axis(const IrRegion *r, int64_t *rows);
/* Does the kernel contain a communication op (before or after lowering)? */
bool ts_comm_used(const IrStmt *s);
/* Is fn a warp primitive (IR_WARP_*: shuffles, ballot, warp reductions,
 * __syncwarp)?  Their value differs between threads; the CUDA target
 * prints them as __shfl_*_sync / __ballot_sync (comm_cuda.c), the C target
 * exchanges the lanes' values at the statement (pass warp_c). */
bool ts_warp_fn(IrIntrinsic fn);
/* An ir_expr_any visitor: is e a call of a warp primitive? */
bool ts_warp_call(const IrExpr *e, void *ctx);
/* Does s use a warp primitive anywhere? */
bool ts_warp_used(const IrStmt *s);
/* What NCCL's GIN (the CUDA target's transport to other nodes, NCCL's
 * device API) cannot do of primitive op when its peer is on another node:
 * the reason, or NULL where it can (a put, a put with an adding signal, an
 * adding signal, an integer atomic add returning nothing, a store of at
 * most 8 bytes that is not a release, fence, quiet, T.barrier_all).  Set
 * signals are refused: GIN has no ordered way to set one.  Pass lower_comm
 * refuses the others where it sets IrTileOp.xport on CUDA; the printer
 * only asserts. */
const char *ts_comm_gin_lacks(const IrTileOp *op);
/* Is s a thread range of one thread holding one communication op: a
 * block's primitive that pass lower_comm gave to thread 0 (insert_sync
 * puts a barrier before and after it, as around a uniform primitive)? */
bool ts_comm_block_role(const IrStmt *s);

#endif
