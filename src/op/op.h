/*
 * op.h — tile operators.
 *
 * A tile operator acts on whole buffer regions at once: T.copy, T.gemm,
 * T.fill, T.reduce_*, T.cumsum, T.atomic_add, the communication ops of
 * the distributed layer and its tile-level collectives (op/coll.c, whose
 * "lowering" is an expansion into other tile ops, run by the pass
 * lower_coll before lower_tile_ops).  Each lives in its own file
 * (op/copy.c, op/gemm.c, ...) and implements the same small interface,
 * the way TileLang's TileOperator has InferLayout and Lower:
 *
 *   lower:        replace the op by loops of loads and stores (the generic
 *                 lowering, used by the C target and as the fallback of the
 *                 CUDA target; targets may specialize later);
 *   infer_layout: (CUDA backend) propose fragment layouts at a strictness;
 *   regions:      say which of its regions it reads and which it writes
 *                 (every walker of the IR sees a tile op's accesses
 *                 through this: insert_sync, pipelining, plan_smem, ...).
 *
 * The node (IrTileOp) and the list of ops (TS_TILEOPS: enum and names)
 * live with the IR in ir/tileop.h; TS_TILEOP_LOWERINGS below pairs each
 * op with its lowering, TS_TILEOP_REGIONS each with its regions and
 * TS_TILEOP_LAYOUTS each op that has one with its infer_layout; the
 * dispatch is generated from them.  The IR asks for regions without
 * including this file: ir/walk.h declares ir_tileop_region_rw, which op.c
 * defines from TS_TILEOP_REGIONS (the IR names the question, the ops
 * answer it).
 */
#ifndef TS_OP_H
#define TS_OP_H

#include "ir/ir.h"
#include "ir/tileop.h"
#include "ir/walk.h"
#include "base/caps.h"

/* X(enum, lowering function): each tile operator's generic lowering */
#define TS_TILEOP_LOWERINGS(X)                 \
    X(TS_OP_COPY, ts_op_copy_lower)            \
    X(TS_OP_FILL, ts_op_fill_lower)            \
    X(TS_OP_GEMM, ts_op_gemm_lower)            \
    X(TS_OP_REDUCE, ts_op_reduce_lower)        \
    X(TS_OP_CUMSUM, ts_op_cumsum_lower)        \
    X(TS_OP_ATOMIC_ADD, ts_op_atomic_lower)    \
    X(TS_OP_COMM, ts_op_comm_lower)            \
    X(TS_OP_COLL, ts_op_coll_lower)

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

/* X(enum, regions function): how each tile operator touches region i of
 * its node (IrTileOp.r[i]): IR_ACC_READ and/or IR_ACC_WRITE (ir/walk.h).
 * An op not listed reads and writes every region (assuming the worst
 * keeps every pass safe).  The communication primitives answer per kind
 * (op/comm.c: the remote side of a put is written, of a get read, ...). */
#define TS_TILEOP_REGIONS(X)                    \
    X(TS_OP_COPY, ts_op_copy_regions)           \
    X(TS_OP_FILL, ts_op_fill_regions)           \
    X(TS_OP_GEMM, ts_op_gemm_regions)           \
    X(TS_OP_REDUCE, ts_op_reduce_regions)       \
    X(TS_OP_CUMSUM, ts_op_cumsum_regions)       \
    X(TS_OP_ATOMIC_ADD, ts_op_atomic_regions)   \
    X(TS_OP_COMM, ts_op_comm_regions)           \
    X(TS_OP_COLL, ts_op_coll_regions)

#define X(e, f) int f(const IrTileOp *op, int i);
TS_TILEOP_REGIONS(X)
#undef X

/* ---- layout inference (the CUDA pass layout_inference) --------------------
 *
 * Each unit of layout inference (a kept tile op, or a T.Parallel nest: the
 * pseudo-op of op/parallel.c) proposes layouts for the fragments it
 * touches at one of three strictnesses, TileLang's InferLevel:
 *
 *   STRICT  what an instruction fixes whatever else is known (the
 *           accumulator and register A operand of an mma.sync gemm);
 *   COMMON  what follows from layouts already known (a T.Parallel nest
 *           gives its layout to the fragments without one that it indexes
 *           by its variables, a fragment with another is re-laid out
 *           through shared memory by the pass; a row reduction's
 *           destination is the row projection of its source; T.cumsum
 *           keeps its tile's layout);
 *   FREE    a choice where nothing is known yet (a nest's fragments get the
 *           layout its thread binding prefers: warp rows or cyclic).
 *
 * The pass runs every unit at STRICT, then a worklist at COMMON (a unit is
 * run again when a fragment it touches gets a layout), then each unit in
 * program order at FREE, draining the worklist after each choice.  Units
 * only read and set layouts through the calls below; a second, different
 * layout for a fragment is a conflict: inference stops, and the message
 * names the fragment and both uses. */

typedef enum TsLayoutLevel {
    TS_LAYOUT_STRICT, /* fixed by an instruction */
    TS_LAYOUT_COMMON, /* propagated from known layouts */
    TS_LAYOUT_FREE,   /* chosen where nothing else decides */
} TsLayoutLevel;

enum { TS_LAYOUT_MAXFRAG = 64 }; /* fragments per kernel layout inference handles */

/* The layouts known so far, as the units see them (owned by the pass). */
typedef struct TsLayoutCtx {
    TsArena *arena;                      /* the kernel's arena */
    IrKernel *k;                         /* the kernel */
    int nt;                              /* threads per block; inside a T.ws role, the role's */
    int lo;                              /* the first thread of those (a role's; 0 outside roles): layouts
                                            number the threads from 0, thread loops run over [lo, lo + nt) */
    int vec;                             /* widest vector (elements) a warp-rows layout may give a thread */
    int nfrag;                           /* fragment buffers of the kernel */
    IrBuffer *frag[TS_LAYOUT_MAXFRAG];   /* ... */
    IrLayout *lay[TS_LAYOUT_MAXFRAG];    /* their layouts (NULL: none yet) */
    const char *use[TS_LAYOUT_MAXFRAG];  /* the use that gave each its layout, in words */
    TsLoc at[TS_LAYOUT_MAXFRAG];         /* where that use is */
    const IrStmt *cur;                   /* the unit being run (where a use is) */
    int nnew;                            /* fragments given a layout since the driver last looked */
    int newf[TS_LAYOUT_MAXFRAG];         /* ... (indices into frag) */
    const char *why;                     /* first reason to give up (NULL: none) */
    bool conflict;                       /* that reason is two uses needing different layouts for
                                            one fragment (the user is warned: ts_layout_conflict) */
    TsLoc conflict_at;                   /* ... where the second use is */
} TsLayoutCtx;

/* The index of fragment b in lx->frag, or -1 (not a fragment). */
int ts_layout_frag(const TsLayoutCtx *lx, const IrBuffer *b);
/* Fragment f takes layout l for `use` (words: "the accumulator of T.gemm");
 * l NULL (no layout fits) or a different layout already set: give up. */
void ts_layout_set(TsLayoutCtx *lx, int f, IrLayout *l, const char *use);
/* For messages: " (at file:line:col)" (nothing without a position), and
 * "<layout> for <use> (at ...)", how fragment f got its layout. */
void ts_layout_put_at(TsBuf *b, TsLoc loc);
void ts_layout_put_use(TsBuf *b, const TsLayoutCtx *lx, int f);
/* Stop inference with a reason (the first one stays). */
void ts_layout_give_up(TsLayoutCtx *lx, const char *fmt, ...) TS_PRINTF(2, 3);
/* The same for a conflict, two uses that need different layouts for one
 * fragment where nothing can reconcile them, the second at `at`: the
 * reason (which names the fragment, both layouts and both uses with their
 * positions) also becomes a warning to the user. */
void ts_layout_conflict(TsLayoutCtx *lx, TsLoc at, const char *fmt, ...) TS_PRINTF(3, 4);

/* A unit's layout proposal at `level`; s is its statement. */
typedef void (*TsInferLayoutFn)(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level);

/* X(enum, infer_layout function): the tile ops that offer an infer_layout;
 * an op not listed fixes no layout (its fragments, if any, take theirs
 * from other uses; lowering refuses a fragment it cannot read) */
#define TS_TILEOP_LAYOUTS(X)                       \
    X(TS_OP_GEMM, ts_op_gemm_infer_layout)         \
    X(TS_OP_REDUCE, ts_op_reduce_infer_layout)     \
    X(TS_OP_CUMSUM, ts_op_cumsum_infer_layout)

#define X(e, f) void f(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level);
TS_TILEOP_LAYOUTS(X)
#undef X

/* The infer_layout of op kind k (op.c), NULL for an op without one. */
TsInferLayoutFn ts_op_infer_layout_fn(TsOpKind k);

/* ---- lowering by layout (layout_inference, once every fragment has one) ----
 *
 * An op kept for layout inference (TS_OP_INST_FRAGMENT: T.reduce and
 * T.cumsum between fragments) is lowered by its lower_layout into
 * thread-level IR over the fragments' register buffers: warp shuffles
 * along the rows the layouts give.  A gemm kept for mma.sync
 * (TS_OP_INST_MMA_SYNC) stays a tile op: its lower_layout points its
 * fragment operands at their register buffers and asks for its shared
 * operands' swizzle (ts_layout_on_success).  An op that cannot be lowered so gives
 * up (ts_layout_give_up) and returns s; the pass then leaves the kernel's
 * fragments in shared memory and lowers the op generically. */

/* A step an op's lower_layout asks for on buffer b (or NULL), run only
 * once the whole kernel is lowered by layouts (never when the pass gives
 * up): the gemm's ldmatrix swizzle of its shared operands. */
typedef void (*TsLayoutFinishFn)(IrKernel *k, const TsCaps *caps, IrBuffer *b);

/* One such step. */
typedef struct TsLayoutFinish {
    TsLayoutFinishFn fn; /* what to do */
    IrBuffer *buf;       /* to which buffer (NULL: the kernel) */
} TsLayoutFinish;

enum { TS_LAYOUT_MAXFINISH = 2 * TS_LAYOUT_MAXFRAG }; /* finishing steps per kernel (more are dropped) */

/* What a lower_layout gets (owned by the pass). */
typedef struct TsLayoutLower {
    TsLayoutCtx *lx;      /* the fragments and their layouts (all set) */
    IrBuffer *const *reg; /* per fragment (index into lx->frag): its register buffer (LOCAL,
                             the layout's local_size elements) */
    bool in_loop;         /* the op runs inside a serial loop (a shared scratch it reuses
                             needs a barrier before the next iteration writes it) */
    TsLayoutFinish *fin;  /* the pass's finishing steps (TS_LAYOUT_MAXFINISH entries) */
    int *nfin;            /* ... how many are set */
} TsLayoutLower;

/* Ask for fn(k, caps, b) once the kernel succeeds (an equal step already
 * asked for is not repeated; steps run in the order first asked). */
void ts_layout_on_success(TsLayoutLower *ll, TsLayoutFinishFn fn, IrBuffer *b);

typedef IrStmt *(*TsLowerLayoutFn)(TsLayoutLower *ll, IrStmt *s);

/* X(enum, lower_layout function): the ops kept for layout inference
 * (TS_OP_INST_FRAGMENT: reduce and cumsum between fragments;
 * TS_OP_INST_MMA_SYNC: the tensor-core gemm, whose fragment operands
 * become the register buffers) */
#define TS_TILEOP_LAYOUT_LOWERINGS(X)                \
    X(TS_OP_GEMM, ts_op_gemm_lower_layout)           \
    X(TS_OP_REDUCE, ts_op_reduce_lower_layout)       \
    X(TS_OP_CUMSUM, ts_op_cumsum_lower_layout)

#define X(e, f) IrStmt *f(TsLayoutLower *ll, IrStmt *s);
TS_TILEOP_LAYOUT_LOWERINGS(X)
#undef X

/* Last step of layout_inference: the shared tiles that a tensor-core gemm
 * with its accumulator in shared memory reads lose any swizzle (that
 * gemm's CUDA form indexes them plain).  (op/gemm.c) */
void ts_op_gemm_plain_operands(IrKernel *k);

/* The lower_layout of op kind k (op.c), NULL for an op without one. */
TsLowerLayoutFn ts_op_lower_layout_fn(TsOpKind k);

/* For an op that must read fragment f from memory: appends to `out` the
 * alloc of a new shared buffer of f's shape (transient) and the copy of
 * every thread's registers into it (a replicated fragment's first replicas
 * store); returns the buffer, or NULL when f cannot be copied so (a layout
 * over other threads or shape).  (layout_inference.c) */
IrBuffer *ts_layout_spill(TsLayoutLower *ll, int f, IrStmt *out, TsLoc loc);

/* `for t in thread_range(0, lx->nt)` around the unrolled digit loops
 * dv[0..n) (extents ext) around body, all at loc: the shape of every
 * thread-level loop nest layout inference writes.  Inside a T.ws role
 * (lx->lo > 0) the range is the role's, [lo, lo + nt), and body sees t as
 * the thread's index within the role (t - lo), the layouts' numbering. */
IrStmt *ts_layout_thread_loops(const TsLayoutCtx *lx, IrVar *t, IrVar *const *dv, const int64_t *ext, int n,
                               IrStmt *body, TsLoc loc);

#endif
