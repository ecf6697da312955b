/*
 * op.h — tile operators.
 *
 * A tile operator acts on whole buffer regions at once: T.copy, T.gemm,
 * T.fill, T.reduce_*, T.cumsum, T.atomic_add, and (later) the
 * communication ops of the distributed layer.  Each lives in its own file
 * (op/copy.c, op/gemm.c, ...) and implements the same small interface,
 * the way TileLang's TileOperator has InferLayout and Lower:
 *
 *   lower:        replace the op by loops of loads and stores (the generic
 *                 lowering, used by the C target and as the fallback of the
 *                 CUDA target; targets may specialize later);
 *   infer_layout: (CUDA backend) propose fragment layouts at a strictness;
 *   regions:      report read and write regions (for sync and pipelining).
 *
 * The node (IrTileOp) and the list of ops (TS_TILEOPS: enum and names)
 * live with the IR in ir/tileop.h; TS_TILEOP_LOWERINGS below pairs each
 * op with its lowering, and the dispatch is generated from it.
 */
#ifndef TS_OP_H
#define TS_OP_H

#include "ir/ir.h"
#include "ir/tileop.h"
#include "base/caps.h"

/* X(enum, lowering function): each tile operator's generic lowering */
#define TS_TILEOP_LOWERINGS(X)                 \
    X(TS_OP_COPY, ts_op_copy_lower)            \
    X(TS_OP_FILL, ts_op_fill_lower)            \
    X(TS_OP_GEMM, ts_op_gemm_lower)            \
    X(TS_OP_REDUCE, ts_op_reduce_lower)        \
    X(TS_OP_CUMSUM, ts_op_cumsum_lower)        \
    X(TS_OP_ATOMIC_ADD, ts_op_atomic_lower)    \
    X(TS_OP_COMM, ts_op_comm_lower)

/* What a lowering function gets. */
typedef struct TsLowerCtx {
    TsDiag *diag;
    TsArena *arena;   /* the kernel's arena */
    IrKernel *k;
    TsTarget target;
    const TsCaps *caps; /* what the target offers (never NULL) */
} TsLowerCtx;

/* Lowering functions, one per op file.  Each returns a statement (usually a
 * loop nest) that replaces `s`, which is an IR_S_TILEOP of its kind. */
#define X(e, f) IrStmt *f(TsLowerCtx *cx, const IrStmt *s);
TS_TILEOP_LOWERINGS(X)
#undef X

/* Dispatch by op kind (op.c). */
IrStmt *ts_op_lower(TsLowerCtx *cx, const IrStmt *s);

#endif
