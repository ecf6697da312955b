/*
 * arith.h — the one integer analysis of index expressions, shared by the
 * passes (simplify, pipelining, layout inference, sync insertion) and the
 * code generators.
 *
 * Questions a pass asks about index arithmetic are always the same few:
 * how large can this get (intervals), is it `stride * i + rest` (affine
 * forms), is it a multiple of 8 (divisibility), is this guard always true,
 * can this division be dropped (simplification), and can these two tiles
 * of a buffer share an element (region overlap).  Each used to be answered
 * by a local pattern match; here they are answered once, from the ranges
 * of the variables involved:
 *
 *  - ranges the caller binds (ir_arith_bind / _bind_loop / _bind_let);
 *  - when `frame` is set (a walker's IrWalkFrame, see walk.h): loop vars of
 *    the enclosing FOR statements (any kind, thread ranges included) and
 *    lets earlier in an enclosing sequence, found on demand;
 *  - from the kernel: the flat thread index 0..threads-1, thread axes
 *    0..threads[a]-1, block indices 0..grid[a]-1;
 *  - shape vars are >= 0; anything else ranges over its dtype;
 *  - with `frame`, the provers also use the conditions of enclosing ifs
 *    (true in the then branch, false in the else branch) that involve no
 *    loads or calls, as facts `g >= 0` on affine forms, and symbolic
 *    bounds (v <= min + extent - 1 of its loop, v == a let's value, a
 *    block index <= grid - 1), so `by < m` with grid m and a guard repeated
 *    inside itself are proven.
 *
 * Soundness.  Intervals are sound for the machine's wrap-around arithmetic:
 * where a node's mathematical range could leave its dtype, the analysis
 * says "anything in the dtype" (and remembers that it did).  Affine forms,
 * comparisons and divisions are exact only where nothing wrapped, so the
 * provers refuse (answer "unknown") when either side might have wrapped.
 * Every answer is one-sided: `true` from a prover is a proof, `false`
 * means "could not prove".  Unbounded ends are IR_ARITH_NEG_INF and
 * IR_ARITH_POS_INF (INT64_MIN / INT64_MAX), which absorb arithmetic.
 *
 * The analysis allocates (affine forms, rewritten expressions) in
 * `arena`; it never changes the expressions it is given.
 *
 * Typical use inside a pass:
 *
 *   IrArith ar;
 *   ir_arith_init(&ar, k->arena, k);      once per kernel
 *   ...in a visitor or mutator callback:
 *   ar.frame = v->frame;                   enclosing loops, lets, ifs
 *   if (ir_arith_prove(&ar, guard)) ...    or ir_arith_simplify(&ar, e)
 *
 * or, without a walker, ir_arith_bind(&ar, var, lo, hi) for each variable
 * and ir_arith_mark / ir_arith_pop around a scope.
 */
#ifndef TS_ARITH_H
#define TS_ARITH_H

#include "ir/ir.h"
#include "ir/walk.h"

#define IR_ARITH_NEG_INF INT64_MIN
#define IR_ARITH_POS_INF INT64_MAX

/* lo <= value <= hi (an infinite end is unbounded). */
typedef struct IrInterval {
    int64_t lo; /* least value, or IR_ARITH_NEG_INF */
    int64_t hi; /* greatest value, or IR_ARITH_POS_INF */
} IrInterval;

/* A range the caller bound. */
typedef struct IrArithRange {
    const IrVar *var; /* the variable */
    IrInterval r;     /* its values */
} IrArithRange;

typedef struct IrArith {
    TsArena *arena;             /* where forms and rewritten expressions go */
    const IrKernel *k;          /* thread/block ranges come from it (may be NULL) */
    TS_VEC(IrArithRange) ranges; /* bound by the caller, searched newest first */
    const IrWalkFrame *frame;   /* if set: enclosing loops and lets give ranges */
    int depth;                  /* internal: nesting of range look-ups (cut off cycles) */
    int facts_busy;             /* internal: path conditions are being used (no nesting) */
} IrArith;

/* Start an analysis (nothing bound). */
void ir_arith_init(IrArith *ar, TsArena *a, const IrKernel *k);
/* v takes values in [lo, hi] until popped. */
void ir_arith_bind(IrArith *ar, const IrVar *v, int64_t lo, int64_t hi);
/* The loop var of a FOR ranges over [min, min + extent - 1] (bounds of
 * both, as analysed now). */
void ir_arith_bind_loop(IrArith *ar, const IrStmt *loop);
/* v is bound to value (a LET): v gets value's range. */
void ir_arith_bind_let(IrArith *ar, const IrVar *v, const IrExpr *value);
/* Bindings made after ir_arith_mark are undone by ir_arith_pop. */
int ir_arith_mark(const IrArith *ar);
void ir_arith_pop(IrArith *ar, int mark);

/* The values v can take here. */
IrInterval ir_arith_var_range(IrArith *ar, const IrVar *v);
/* Bounds of an integer (or bool) expression; a float gives (-inf, inf). */
IrInterval ir_arith_bound(IrArith *ar, const IrExpr *e);

/* Interval arithmetic on bounds, exact where the ends fit in int64 and
 * saturating to the infinities where they do not (an infinite end absorbs;
 * 0 times an infinite end is 0): for passes that combine bounds the
 * analysis gave them (a flattened offset sum(index_d * stride_d), say). */
IrInterval ir_interval_add(IrInterval a, IrInterval b);
IrInterval ir_interval_mul(IrInterval a, IrInterval b);

/* ---- affine forms ---------------------------------------------------------------- */

/* coeff * atom.  An atom is a var reference or, where the expression is not
 * affine, an opaque subexpression (a load, a division, a product of two
 * non-constants, ...); atoms are compared structurally. */
typedef struct IrAffTerm {
    const IrExpr *atom; /* the var reference or opaque subexpression */
    int64_t coeff;      /* never 0 */
} IrAffTerm;

/* sum(t[i].coeff * t[i].atom) + c. */
typedef struct IrAffine {
    IrAffTerm *t; /* terms, in order of first appearance; distinct atoms */
    int n;        /* number of terms */
    int64_t c;    /* the constant */
    bool affine;  /* every atom is a var: the expression is truly affine */
} IrAffine;

/* The affine form of an integer expression.  With expand_mod, floormod(x, c)
 * (c > 0 constant) becomes x - c * floordiv(x, c), so sums of quotients and
 * remainders cancel.  False if e is not an integer expression, might wrap
 * around its dtype (then no form is exact) or a coefficient overflows. */
bool ir_arith_affine(IrArith *ar, const IrExpr *e, bool expand_mod, IrAffine *out);
/* The coefficient of var v in f (0 if v is not an atom of f). */
int64_t ir_affine_coeff(const IrAffine *f, const IrVar *v);
/* An expression for f, with dtype dt (terms in order, then the constant). */
IrExpr *ir_affine_expr(TsArena *a, const IrAffine *f, TsDType dt);

/* ---- divisibility ------------------------------------------------------------------- */

/* e == m * k + r for some integer k: m >= 0, 0 <= r < m (m == 0: e == r
 * exactly; m == 1: nothing known). */
typedef struct IrModFact {
    int64_t m; /* the modulus (0: e is the constant r) */
    int64_t r; /* the residue */
} IrModFact;

IrModFact ir_arith_mod(IrArith *ar, const IrExpr *e);
/* Is e provably a multiple of q (q > 0)? */
bool ir_arith_divisible(IrArith *ar, const IrExpr *e, int64_t q);
/* Is e a multiple of q (q > 0)?  1: provably, 0: provably not (its
 * residue modulo q is known and not 0), -1: unknown at compile time. */
int ir_arith_multiple(IrArith *ar, const IrExpr *e, int64_t q);
/* The largest d known to divide e (0 if e is the constant 0). */
int64_t ir_arith_divisor(IrArith *ar, const IrExpr *e);

/* ---- proving ---------------------------------------------------------------------- */

/* Is the condition (bool or integer, nonzero = true) true for every value
 * of its variables in range?  False means unknown. */
bool ir_arith_prove(IrArith *ar, const IrExpr *cond);
/* ... false for every value? */
bool ir_arith_disprove(IrArith *ar, const IrExpr *cond);
/* a == b, a < b, a <= b for every value (integer expressions). */
bool ir_arith_prove_eq(IrArith *ar, const IrExpr *a, const IrExpr *b);
bool ir_arith_prove_lt(IrArith *ar, const IrExpr *a, const IrExpr *b);
bool ir_arith_prove_le(IrArith *ar, const IrExpr *a, const IrExpr *b);
/* Bounds of a - b (mathematical, not wrapped), taken on the affine
 * difference of the two (equal atoms cancel: (bx*128 + i*4 + j) -
 * (bx*128 + i*4) is j's range however large bx is), with what the
 * provers use besides (remainders expanded, symbolic bounds, facts of
 * enclosing ifs with `frame`).  False where a side might wrap (no bound
 * is exact then). */
bool ir_arith_diff_bound(IrArith *ar, const IrExpr *a, const IrExpr *b, IrInterval *out);

/* A guard with what the ranges decide taken out: a constant (the
 * condition's dtype, 1 or 0) when the whole is proven or disproven, else
 * the conjuncts of its top-level `and` chain that are not proven true (in
 * their order), else cond itself (no copy when nothing is dropped). */
IrExpr *ir_arith_prune_cond(IrArith *ar, IrExpr *cond);

/* ---- simplification ------------------------------------------------------------------ */

/*
 * e rewritten with what the ranges allow (returns e itself when nothing
 * applies):
 *  - comparisons, &&, ||, ! that are proven or disproven become constants
 *    (and selects on them their live arm);
 *  - floordiv(x, c) / floormod(x, c), c > 0: x = c*Q + R with R in [0, c)
 *    gives Q / R, and constant quotients fold (q*c <= x < (q+1)*c gives q
 *    and x - q*c); a truncating x / c with x >= 0 is a floordiv; terms of
 *    x that are multiples of c leave a floormod; a residue known from
 *    divisibility is a constant;
 *  - min/max whose order is proven pick one side;
 *  - sums and differences whose terms cancel to a constant fold.
 * The result computes the same value as e wherever the ranges hold.
 */
IrExpr *ir_arith_simplify(IrArith *ar, IrExpr *e);
/* The same rewrites on the node e alone, its operands taken as they are:
 * for passes running their own mutator (post_expr), which gives the
 * bottom-up order. */
IrExpr *ir_arith_simplify_node(IrArith *ar, IrExpr *e);

/* ---- regions ------------------------------------------------------------------------ */

/* May regions a and b share an element?  False only when proven disjoint
 * (different buffers, or in some dim one ends before the other starts).
 * Buffers are compared by identity (two parameters are distinct memory). */
bool ir_arith_regions_may_overlap(IrArith *ar, const IrRegion *a, const IrRegion *b);
/* The same for region a at var = v1 and region b at var = v2, for any two
 * different values v1 != v2 in var's range (two threads, two loop
 * iterations): false when proven disjoint for every such pair. */
bool ir_arith_regions_may_overlap_across(IrArith *ar, const IrRegion *a, const IrRegion *b,
                                         const IrVar *var);

#endif
