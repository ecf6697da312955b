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
 * The table TS_TILEOPS below is the single list of ops: the enum, names
 * and dispatch are generated from it.
 */
#ifndef TS_OP_H
#define TS_OP_H

#include "ir/ir.h"
#include "base/caps.h"

/* X(enum, name, lowering function) */
#define TS_TILEOPS(X)                                      \
    X(TS_OP_COPY, "copy", ts_op_copy_lower)                \
    X(TS_OP_FILL, "fill", ts_op_fill_lower)                \
    X(TS_OP_GEMM, "gemm", ts_op_gemm_lower)                \
    X(TS_OP_REDUCE, "reduce", ts_op_reduce_lower)          \
    X(TS_OP_CUMSUM, "cumsum", ts_op_cumsum_lower)          \
    X(TS_OP_ATOMIC_ADD, "atomic_add", ts_op_atomic_lower)  \
    X(TS_OP_COMM, "comm", ts_op_comm_lower)

typedef enum TsOpKind {
#define X(e, n, f) e,
    TS_TILEOPS(X)
#undef X
    TS_OP_COUNT
} TsOpKind;

typedef enum TsReduceKind {
    TS_REDUCE_SUM,
    TS_REDUCE_MAX,
    TS_REDUCE_MIN,
    TS_REDUCE_ABSSUM,
    TS_REDUCE_ABSMAX,
} TsReduceKind;

/* How a tile operator reaches the target.  A lowering normally replaces
 * the op by loops, so an op in lowered IR is an error; a target-specific
 * lowering may instead keep the op, marked with the instruction family
 * the target's code generator emits for it (verify_lowered lets those
 * through, every other consumer of lowered IR refuses tile ops). */
typedef enum TsOpInst {
    TS_OP_INST_LOOPS,    /* lowered to loops of loads and stores (never seen after lowering) */
    TS_OP_INST_MMA_SYNC, /* GEMM kept for the CUDA code generator: warp-tiled
                            mma.sync.m16n8k16 on operands in shared memory
                            or, once layout inference gave them layouts,
                            register fragments */
    TS_OP_INST_FRAGMENT, /* kept for the CUDA layout_inference pass, which
                            lowers it by the fragments' layouts (T.reduce on
                            register fragments: warp shuffles) or, when it
                            gives no layouts, by the generic lowering */
    TS_OP_INST_COMM,     /* a communication primitive (op/comm.h) kept for the
                            target's emitter of remote accesses and waits */
} TsOpInst;

typedef enum TsGemmPolicy {
    TS_GEMM_SQUARE,  /* T.GemmWarpPolicy.Square (default) */
    TS_GEMM_FULLROW, /* FullRow */
    TS_GEMM_FULLCOL, /* FullCol */
} TsGemmPolicy;

/*
 * One tile operator.  Which fields mean what, per op:
 *
 *  COPY        r[0] = src, r[1] = dst.  The elaborator gives both regions
 *              their extents (the `A[i, j]` "start of a tile" form takes
 *              its extents from the other side).  After dropping extents of
 *              1, both must have the same extents.  Elements outside a
 *              global buffer are not read (zero is copied) or not written.
 *  FILL        r[0] = dst, value = the fill value (T.clear: 0).
 *  GEMM        r[0] = A, r[1] = B, r[2] = C (accumulator);
 *              C += op(A) * op(B) with op = transpose if trans_a/trans_b;
 *              clear_accum zeroes C first.  policy/k_pack/wg_wait are
 *              scheduling hints for the GPU.
 *  REDUCE      r[0] = src, r[1] = dst; reduce `kind` over axis `dim` of
 *              src; dst has src's shape without `dim` (or with it as 1).
 *              clear = 1: dst is overwritten; 0: dst takes part.
 *  CUMSUM      r[0] = src, r[1] = dst (same shape); prefix sums along
 *              `dim`, from the end when `reverse`.
 *  ATOMIC_ADD  r[0] = dst; either r[1] = src region (nr == 2) or value =
 *              a scalar (nr == 1, dst is one element).
 *  COMM        a communication primitive of the distributed layer: `comm`
 *              says which (TsCommKind), op/comm.h which region and
 *              operand is what.
 */
struct IrTileOp {
    TsOpKind kind;
    IrRegion r[3];
    int nr;
    IrExpr *value;        /* FILL value; ATOMIC_ADD scalar */
    int trans_a, trans_b; /* GEMM */
    int clear_accum;      /* GEMM */
    TsGemmPolicy policy;  /* GEMM */
    int k_pack, wg_wait;  /* GEMM hints */
    TsReduceKind reduce;  /* REDUCE */
    int dim;              /* REDUCE, CUMSUM */
    int clear;            /* REDUCE */
    int reverse;          /* CUMSUM */
    TsOpInst inst;        /* set by a target's lowering that keeps the op (see TsOpInst) */
    int async;            /* COPY: a producer of a software pipeline (set by the CUDA pass
                             pipeline_planning): lowered to asynchronous copies with no
                             barrier around them; inject_pipeline places the waits */
    int comm;             /* COMM: TsCommKind (op/comm.h) */
    IrExpr *args[3];      /* COMM: peer rank, count or value, signal value (op/comm.h) */
    int cflags[3];        /* COMM: comparison or signal op, memory semantics, scope */
};

const char *ts_op_name(TsOpKind k);
const char *ts_reduce_name(TsReduceKind k);
const char *ts_comm_name(int comm); /* a TsCommKind's name (op/comm.c) */

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
#define X(e, n, f) IrStmt *f(TsLowerCtx *cx, const IrStmt *s);
TS_TILEOPS(X)
#undef X

/* Dispatch by op kind (op.c). */
IrStmt *ts_op_lower(TsLowerCtx *cx, const IrStmt *s);

#endif
