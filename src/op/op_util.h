/*
 * op_util.h — helpers shared by the generic lowerings of the tile
 * operators (the files under op/), implemented in op.c.
 *
 * Every lowering does the same few things: look at a region's extents
 * (dropping the extent-1 dims that T.copy and friends ignore), make fresh
 * int32 loop variables, build a nest of loops, compute the element index
 * a loop point maps to inside a region (start + offset), guard accesses to
 * global buffers that a partial tail tile may run past, and keep a
 * one-element local accumulator.  Keeping these in one place keeps each op
 * file about the op's own semantics.
 */
#ifndef TS_OP_UTIL_H
#define TS_OP_UTIL_H

#include "op/op.h"

#define OP_MAXDIM 8 /* most dims a lowered region may have */

/* The dims of r whose extent is not 1, in order: axis numbers into dims[],
 * constant extents into ext[]; returns their number.  A non-constant
 * extent, or more than OP_MAXDIM dims, is a TS_ERR_UNSUPPORTED error at
 * s->loc naming `opname` (e.g. "T.copy"). */
int op_region_shape(TsLowerCtx *cx, const IrStmt *s, const char *opname,
                    const IrRegion *r, int *dims, int64_t *ext);
/* Constant extent of axis `axis` of r (same error rules). */
int64_t op_region_extent(TsLowerCtx *cx, const IrStmt *s, const char *opname,
                         const IrRegion *r, int axis);
/* r covers all of its buffer (starts 0, extents the shape, all constant). */
bool op_region_whole(const IrRegion *r);
/* "64x32": the region's extents, for messages (allocated in the arena). */
const char *op_region_text(TsArena *a, const IrRegion *r);

/* The element index into r->buf for a point: start[d] + off[j] on axis
 * dims[j], start[d] elsewhere.  off[j] may be NULL (offset 0). */
IrExpr **op_region_index(TsArena *a, const IrRegion *r, const int *dims, IrExpr **off, int n);

/* The condition that idx lies inside b when b is a global buffer (every
 * idx[d] < shape[d]); NULL when b is not global or the check folds to
 * true. */
/* Element-wise pairing of two regions whose shapes match once extent-1
 * dims are dropped (copy, atomic_add): n loop vars over the shared shape
 * and each side's index at those vars.  A mismatch is a TS_ERR_SHAPE
 * error naming both regions. */
typedef struct OpPair {
    int n;                     /* loop nest depth */
    IrVar *v[OP_MAXDIM];       /* loop variables */
    int64_t ext[OP_MAXDIM];    /* their extents */
    IrExpr **src_idx, **dst_idx;
} OpPair;
void op_pair_regions(TsLowerCtx *cx, const IrStmt *s, const char *opname, const IrRegion *src,
                     const IrRegion *dst, OpPair *p);

IrExpr *op_in_bounds(TsArena *a, const IrBuffer *b, IrExpr **idx);
/* cond ? then : else_, or just `then` when cond is NULL. */
IrStmt *op_if(TsArena *a, TsLoc loc, IrExpr *cond, IrStmt *then, IrStmt *else_);

/* A fresh int32 loop variable. */
IrVar *op_loop_var(TsLowerCtx *cx, const char *name);
/* Fresh loop variables for n dims, named i, j, k, l, ... (first_name on). */
void op_loop_vars(TsLowerCtx *cx, IrVar **v, int n, char first_name);
/* for v[0] in kind(ext[0]): for v[1] ...: body */
IrStmt *op_loops(TsArena *a, TsLoc loc, IrVar **v, const int64_t *ext, int n, IrForKind kind,
                 IrStmt *body);
/* References to loop vars as expressions. */
void op_var_refs(TsArena *a, IrVar **v, int n, IrExpr **out);

/* A one-element local buffer, declared by an IR_S_ALLOC pushed onto seq. */
IrBuffer *op_local_scalar(TsLowerCtx *cx, IrStmt *seq, const char *name, TsDType dt, TsLoc loc);
/* acc[0] as a load and as a store target. */
IrExpr *op_scalar_load(TsArena *a, IrBuffer *acc);
IrStmt *op_scalar_store(TsArena *a, IrBuffer *acc, IrExpr *value);
/* The dtype to accumulate dt in: float32 for floats narrower than 32 bits. */
TsDType op_acc_dtype(TsDType dt);

/* M, N, K of the T.gemm statement s, after checking that its operands'
 * shapes agree (an error at s otherwise); for the targets' instruction
 * choice (op/gemm.c). */
void op_gemm_shape(TsLowerCtx *cx, const IrStmt *s, int64_t *M, int64_t *N, int64_t *K);

/* The wgmma form of a T.gemm (doc/HOPPER.md), decided for the CUDA target
 * on sm_90a (target/cuda/lower_gemm_cuda.c) and laid out by layout
 * inference (op/gemm.c): the warpgroup grid gm x gn of an m x n
 * accumulator on nwg warpgroups by the gemm's warp policy (M split first,
 * as whole m64 tiles; N in n8 columns, and for an MN-major B (bw > 0: its
 * column block, in elements) in whole blocks), and the N of one
 * instruction (*ni, at most 256).  False when none fits. */
bool op_gemm_wgmma_grid(const IrTileOp *op, int64_t m, int64_t n, int nwg, int bw, int *gm, int *gn, int *ni);
/* The stored matrix of a wgmma operand region: its rows and columns (the
 * buffer's last two extents); false unless the region is that whole
 * matrix (leading axes: one index each, e.g. a pipeline stage). */
bool op_gemm_wgmma_matrix(const IrRegion *r, int64_t *rows, int64_t *cols);

#endif
