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
 *  GET       r0 src (on the peer), r1 dst, a0 peer, a1 elements (flat).
 *  COPY      tile form of T.copy(src, dst, dst=rank / src=rank): r0 src,
 *            r1 dst, rectangular, matched like T.copy; a0 peer; f0 = 0 the
 *            destination is remote, 1 the source is.  Lowered to ST / LD.
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
 *            (T.barrier_blocks; 0: T.sync_blocks).
 *  BARRIER_ALL  every block of every rank (T.barrier_all, T.sync_all).
 */
#ifndef TS_OP_COMM_H
#define TS_OP_COMM_H

#include "op/op.h"

/* X(enum, name) */
#define TS_COMM_KINDS(X)                                                         \
    X(TS_COMM_PUT, "put") X(TS_COMM_GET, "get") X(TS_COMM_COPY, "remote_copy")  \
    X(TS_COMM_ST, "st") X(TS_COMM_LD, "ld") X(TS_COMM_WAIT, "wait")              \
    X(TS_COMM_ATOM_ADD, "atom_add") X(TS_COMM_SIGNAL, "signal_op")               \
    X(TS_COMM_FENCE, "fence") X(TS_COMM_BARRIER_BLOCKS, "barrier_blocks")        \
    X(TS_COMM_BARRIER_ALL, "barrier_all")

typedef enum TsCommKind {
#define X(e, n) e,
    TS_COMM_KINDS(X)
#undef X
    TS_COMM_COUNT
} TsCommKind;

/* Comparisons of waits; the values are TileScale's BinaryRelation. */
typedef enum TsCommCmp {
    TS_CMP_EQ = 0, TS_CMP_NE = 1, TS_CMP_GE = 2, TS_CMP_LE = 3, TS_CMP_GT = 4, TS_CMP_LT = 5
} TsCommCmp;

/* Signal updates (NVSHMEM_SIGNAL_SET = 9 and _ADD = 10 in NVSHMEM). */
typedef enum TsCommSigOp { TS_SIG_SET = 0, TS_SIG_ADD = 1 } TsCommSigOp;

/* Memory semantics; values are TileScale's (weak 0 ... relaxed 4), plus acq_rel. */
typedef enum TsCommSem {
    TS_SEM_WEAK = 0, TS_SEM_VOLATILE = 1, TS_SEM_ACQUIRE = 2, TS_SEM_RELEASE = 3,
    TS_SEM_RELAXED = 4, TS_SEM_ACQ_REL = 5
} TsCommSem;

/* Scopes (TileScale's values). */
typedef enum TsCommScope { TS_SCOPE_CTA = 0, TS_SCOPE_GPU = 1, TS_SCOPE_SYS = 2 } TsCommScope;

/* C spelling of a comparison ("==", ...). */
const char *ts_comm_cmp_text(int cmp);
/* Does the kernel contain a communication op (before or after lowering)? */
bool ts_comm_used(const IrStmt *s);

#endif
