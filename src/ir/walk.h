/*
 * walk.h — the one generic walker (visitor) and rewriter (mutator) of the
 * tile IR, shared by every pass, analysis and code generator.
 *
 * Before this file each pass carried its own recursive switch over the
 * statement and expression kinds, and every new kind (the thread-level
 * statements, say) had to be taught to a dozen copies, some of which
 * forgot it silently.  Here the children of every node are listed once:
 *
 *   statement     expressions, in order                     statements
 *   SEQ           -                                          v[0..n)
 *   FOR           min, extent                                body
 *   IF            cond                                       then, else
 *   WHILE         cond                                       body
 *   STORE/ATOMIC  idx[0..n), value                           -
 *   LET           value                                      -
 *   TILEOP        r[i].start[..], r[i].extent[..] (each i), value,
 *                 args[0..3) (communication operands)
 *   EVAL          e                                          -
 *   PRINT         value (may be NULL)                        -
 *   VCOPY         didx[..], sidx[..], pred (may be NULL)     -
 *   ALLOC, BREAK, CONTINUE, BARRIER, ASYNC_COMMIT, ASYNC_WAIT: none.
 *
 * and every expression's: LOAD idx, BIN a b, NEG/NOT/CAST a, SELECT cond a
 * b, CALL args.  Buffer shapes and layouts are not walked (they belong to
 * the buffer, not to the statement that uses it).
 *
 * Two tools share that list:
 *
 *  - IrVisitor: read-only, pre/post callbacks on statements and
 *    expressions and one callback per buffer access (load, store, vector
 *    copy, tile-op region, printed buffer) that says read or write.  A pre
 *    callback may skip a node's children; any callback may stop the whole
 *    walk.  The path from the root to the statement being visited is
 *    available as a chain of frames on the C stack (IrWalkFrame), so a
 *    callback finds its enclosing loops without a stack of its own (the
 *    arithmetic analysis in arith.h uses it for loop-variable ranges).
 *    Likewise the conditional context: which parts run only under a
 *    condition (if/else branches, loop bodies, select arms, the right
 *    operand of and/or), as a chain of IrGuard and enter/leave callbacks.
 *
 *  - IrMutator: rebuilds bottom-up.  Children are mutated first; a node
 *    whose children all came back unchanged is returned as itself (no
 *    copy), so a pass that changes nothing allocates nothing and callers
 *    can test `new == old`.  Changed expression nodes are rebuilt either as
 *    shallow copies (exact: same dtypes, same shape) or, with `fold`,
 *    through the IR constructors (ir_bin and friends), which fold constants
 *    and apply the integer identities — what simplify and substitution
 *    want.  `copy` forces a fresh node everywhere (a deep copy, for callers
 *    that will edit the result in place).  A post_stmt callback returning
 *    NULL deletes the statement (from a SEQ; elsewhere an empty SEQ takes
 *    its place, or no else branch).
 *
 * Both are plain recursion over trees whose depth is that of the source
 * program's nesting, which stays small.
 */
#ifndef TS_WALK_H
#define TS_WALK_H

#include "ir/ir.h"

/* One statement on the path from the walk's root to the current node. */
typedef struct IrWalkFrame {
    const IrStmt *s;              /* the statement (the original, for a mutator) */
    const struct IrWalkFrame *up; /* its parent's frame; NULL at the root */
} IrWalkFrame;

/* How a statement touches a buffer. */
enum {
    IR_ACC_READ = 1,  /* the elements are read */
    IR_ACC_WRITE = 2, /* the elements are written */
};

/* Read/write of region i of a tile op (IR_ACC_READ | IR_ACC_WRITE bits).
 * The IR asks, the op answers: this is defined by the op layer (op/op.c,
 * from each op's regions entry, op/op.h TS_TILEOP_REGIONS), so that what
 * an op touches is said once, beside its lowering, and src/ir/ includes
 * nothing of src/op/. */
int ir_tileop_region_rw(const IrTileOp *op, int i);

/* ---- visitor ---------------------------------------------------------------- */

typedef struct IrVisitor IrVisitor;

/*
 * One buffer access, as the visitor reports it:
 *  - a load: rw = READ, idx/nidx its indices, region NULL, e the load;
 *  - a store: WRITE; an atomic add: READ|WRITE; idx the store's; e NULL;
 *  - a vector copy: dst WRITE then src READ, idx the start (the copy covers
 *    `lanes` elements along the last dim), e NULL;
 *  - a tile-op region: rw from ir_tileop_region_rw, region set, idx NULL;
 *  - T.print of a buffer: READ of the whole buffer, idx NULL, region NULL.
 * The statement making it is v->frame->s (NULL when walking a bare
 * expression).
 */
typedef struct IrAccess {
    const IrBuffer *buf;  /* the buffer touched */
    int rw;               /* IR_ACC_READ and/or IR_ACC_WRITE */
    IrExpr *const *idx;   /* element indices (load, store, vcopy start), or NULL */
    int nidx;             /* number of indices */
    int lanes;            /* elements along the last dim from idx (1 but for vcopy) */
    const IrRegion *region; /* tile-op region, or NULL */
    const IrExpr *e;      /* the load expression, or NULL */
} IrAccess;

/*
 * Conditional context: a part of a node that runs only under a condition
 * the node states, or once per value of a loop variable (so perhaps never),
 * is a guarded part.  The visitor says when it enters and leaves one
 * (enter_guard / leave_guard) and keeps the chain of guards around the
 * node being visited (IrVisitor.guard, innermost first, on the C stack
 * like the frames), so a callback knows under which conditions the code
 * it sees runs:
 *
 *   kind         node    part              runs where
 *   THEN         IF      then              cond
 *   ELSE         IF      else              !cond
 *   WHILE_BODY   WHILE   body              cond (each iteration)
 *   FOR_BODY     FOR     body              min <= var < min + extent (cond NULL)
 *   SELECT_A     SELECT  a                 cond
 *   SELECT_B     SELECT  b                 !cond
 *   AND_RHS      a && b  b                 a (b is not evaluated otherwise)
 *   OR_RHS       a || b  b                 !a
 *
 * The parts outside these (conditions, loop bounds, left operands) run
 * wherever the node runs.  A missing part (no else) is not entered.
 */
typedef enum IrGuardKind {
    IR_GUARD_THEN,       /* the then branch of an IF */
    IR_GUARD_ELSE,       /* its else branch */
    IR_GUARD_WHILE_BODY, /* the body of a WHILE */
    IR_GUARD_FOR_BODY,   /* the body of a FOR */
    IR_GUARD_SELECT_A,   /* the value of a select where its condition holds */
    IR_GUARD_SELECT_B,   /* ... where it does not */
    IR_GUARD_AND_RHS,    /* the right operand of a short-circuit `and` */
    IR_GUARD_OR_RHS,     /* the right operand of a short-circuit `or` */
} IrGuardKind;

typedef struct IrGuard {
    IrGuardKind kind;          /* which part (table above) */
    const IrExpr *cond;        /* the condition it runs under (NULL: FOR_BODY) */
    bool negated;              /* it runs where cond is false (ELSE, SELECT_B, OR_RHS) */
    const IrStmt *s;           /* the IF, WHILE or FOR whose part it is; NULL for an expression's */
    const IrExpr *e;           /* the SELECT or and/or whose operand it is; NULL for a statement's */
    const struct IrGuard *up;  /* the enclosing guard; NULL outside every guarded part */
} IrGuard;

struct IrVisitor {
    void *ctx; /* the caller's state */
    /* Before a statement's expressions and children.  Return false to skip
     * them (post_stmt still runs).  NULL: always descend. */
    bool (*pre_stmt)(IrVisitor *v, const IrStmt *s);
    /* After them. */
    void (*post_stmt)(IrVisitor *v, const IrStmt *s);
    /* Before an expression's operands; false skips them (and post_expr).
     * The access callback of a load runs before its indices are walked. */
    bool (*pre_expr)(IrVisitor *v, const IrExpr *e);
    /* After its operands. */
    void (*post_expr)(IrVisitor *v, const IrExpr *e);
    /* Every buffer access (see IrAccess). */
    void (*access)(IrVisitor *v, const IrAccess *acc);
    /* Entering / leaving a guarded part (see IrGuard); v->guard is g
     * during both.  Each enter_guard is matched by one leave_guard, even
     * when a callback stops the walk in between.  NULL: nothing. */
    void (*enter_guard)(IrVisitor *v, const IrGuard *g);
    void (*leave_guard)(IrVisitor *v, const IrGuard *g);
    /* Set by a callback to end the walk as soon as possible. */
    bool stop;
    /* Maintained by the walker: the innermost statement being visited
     * (its expressions included) and the path above it. */
    const IrWalkFrame *frame;
    /* Maintained by the walker: the innermost guarded part around the node
     * being visited (NULL: none), the others through its `up`. */
    const IrGuard *guard;
};

/* Walk s (NULL is allowed and does nothing). */
void ir_visit_stmt(IrVisitor *v, const IrStmt *s);
/* Walk one expression (NULL allowed). */
void ir_visit_expr(IrVisitor *v, const IrExpr *e);

/* Innermost enclosing FOR statement of the frame (itself included), or NULL. */
const IrStmt *ir_frame_loop(const IrWalkFrame *f);

/* ---- common queries built on the visitor ------------------------------------ */

/* True if fn holds for some statement of s (pre-order; s itself included). */
bool ir_stmt_any(const IrStmt *s, bool (*fn)(const IrStmt *s, void *ctx), void *ctx);
/* True if fn holds for some expression anywhere in s (every statement's
 * expressions, tile-op regions included). */
bool ir_stmt_any_expr(const IrStmt *s, bool (*fn)(const IrExpr *e, void *ctx), void *ctx);
/* Does var v appear in e / anywhere in s (as a reference; binding it in a
 * loop or let does not count)? */
bool ir_expr_uses_var(const IrExpr *e, const IrVar *v);
bool ir_stmt_uses_var(const IrStmt *s, const IrVar *v);
/* Does e load from b (b NULL: from any buffer)? */
bool ir_expr_loads(const IrExpr *e, const IrBuffer *b);
/* Union of the IR_ACC_* bits of every access s makes to b (b NULL: to any
 * buffer whose scope bit (1 << IrScope) is in scopes). */
int ir_stmt_access_rw(const IrStmt *s, const IrBuffer *b, unsigned scopes);

/* ---- mutator ------------------------------------------------------------------ */

typedef struct IrMutator IrMutator;

struct IrMutator {
    TsArena *arena; /* where new nodes go (the kernel's) */
    void *ctx;      /* the caller's state */
    /* Before an expression's operands: return a replacement, used as is
     * (neither its operands nor post_expr see it), or NULL to go on. */
    IrExpr *(*pre_expr)(IrMutator *m, IrExpr *e);
    /* After: e has the mutated operands (e is the original node when none
     * changed); return what replaces it (e to keep it). */
    IrExpr *(*post_expr)(IrMutator *m, IrExpr *e);
    /* Before a statement's expressions and children: a replacement (used as
     * is), or NULL to go on.  m->frame->s is s. */
    IrStmt *(*pre_stmt)(IrMutator *m, IrStmt *s);
    /* After: s has the mutated parts (s itself when nothing changed); return
     * the replacement, s to keep it, NULL to delete it.  m->frame->s is
     * still the original statement. */
    IrStmt *(*post_stmt)(IrMutator *m, IrStmt *s);
    /* Rebuild changed expression nodes through the IR constructors (constant
     * folding, identities); the result is cast back to the node's dtype if
     * folding changed it.  Otherwise changed nodes are shallow copies. */
    bool fold;
    /* Make a fresh node for every statement, expression and tile op even
     * when nothing changed (a deep copy); variables and buffers are shared. */
    bool copy;
    /* Maintained by the mutator: the original statements on the path. */
    const IrWalkFrame *frame;
};

/* Mutate e / s (NULL gives NULL). */
IrExpr *ir_mutate_expr(IrMutator *m, IrExpr *e);
IrStmt *ir_mutate_stmt(IrMutator *m, IrStmt *s);
/* Mutate an array of n expressions: returns v itself when none changed
 * (and !m->copy), else a new array. */
IrExpr **ir_mutate_exprs(IrMutator *m, IrExpr **v, int n);

/* A node rebuilt with new operands (kids in walk order: LOAD idx..., BIN a
 * b, NEG/NOT/CAST a, SELECT cond a b, CALL args...), through the
 * constructors when fold is set; leaves are copied.  Exposed for passes
 * that rebuild one node by hand. */
IrExpr *ir_expr_rebuild(TsArena *a, const IrExpr *e, IrExpr *const *kids, bool fold);

#endif
