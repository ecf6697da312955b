/*
 * parallel.h — T.Parallel loops as a pseudo tile operator of layout
 * inference, and the nest analysis that layout_inference's rewriting
 * shares with it.
 *
 * After lower_tile_ops, the user's T.Parallel loops and the loops that
 * T.copy / T.fill lowered to are chains of perfectly nested parallel loops
 * ("nests").  A nest takes part in layout inference like a tile op
 * (TileLang's ParallelOp): its infer_layout shares one layout among the
 * fragments it indexes by its variables in order, projects it onto the
 * fragments it indexes by its row variable alone, and at the FREE level
 * chooses one from its thread binding (warp rows, else cyclic).  The
 * nest's pieces (its variables and extents, its fragment accesses) are
 * what the pass's rewriting of the nest into thread-level IR reads too,
 * so they are declared here rather than kept private to either.
 */
#ifndef TS_OP_PARALLEL_H
#define TS_OP_PARALLEL_H

#include "op/op.h"

enum { TS_NEST_MAX = 4 }; /* deepest nest layout inference handles */

/* A chain of perfectly nested T.Parallel loops from 0 with constant extents. */
typedef struct TsNest {
    IrVar *v[TS_NEST_MAX];    /* loop variables, outermost first */
    int64_t ext[TS_NEST_MAX]; /* constant extents */
    int n;                    /* depth */
    IrStmt *body;             /* the innermost body */
} TsNest;

/* s is such a chain (a SEQ of one statement counts as that statement):
 * fill *ns and return true. */
bool ts_nest_get(const IrStmt *s, TsNest *ns);

/* One fragment access (a load or a store). */
typedef struct TsFragAcc {
    IrBuffer *buf;      /* the fragment */
    IrExpr *const *idx; /* its indices */
    int nidx;           /* how many */
} TsFragAcc;
typedef TS_VEC(TsFragAcc) TsFragAccVec;

/* The accesses to lx's fragments in an expression / a statement, in order
 * (vectors in lx's arena).  *writes_mem: set when the statement stores to
 * a buffer that is neither a fragment nor private (local, var); a tile op
 * or T.print of a fragment inside stops inference. */
void ts_nest_frag_expr(TsLayoutCtx *lx, const IrExpr *e, TsFragAccVec *out);
void ts_nest_frag_stmt(TsLayoutCtx *lx, const IrStmt *s, TsFragAccVec *out, int *writes_mem);
/* x is indexed exactly by the nest's variables, in order, over its extents. */
bool ts_nest_full_access(const TsFragAcc *x, const TsNest *ns);
/* x is indexed by the first variable alone of a 2-deep nest (a row). */
bool ts_nest_row_access(const TsFragAcc *x, const TsNest *ns);

/* The pseudo-op's infer_layout (s: the outermost loop of a nest; other
 * statements are ignored). */
void ts_parallel_infer_layout(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level);

#endif
