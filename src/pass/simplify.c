/*
 * simplify.c — constant folding and light algebraic simplification over a
 * whole kernel.
 *
 * Most of the work is done by the IR constructors (ir/ir.c): rebuilding an
 * expression bottom-up through ir_bin/ir_cast/ir_select folds every
 * constant subexpression and applies the integer identities (x + 0, x * 1,
 * x * 0, ...).  This pass adds a few rewrites that index arithmetic needs
 * after macros and tile sizes have been substituted:
 *
 *   (x + c1) + c2 -> x + (c1 + c2)      (x - c1) + c2 -> x + (c2 - c1)
 *   (x + c1) - c2 -> x + (c1 - c2)      (x * c1) * c2 -> x * (c1 * c2)
 *   x - x -> 0,  min(x, x) -> x,  max(x, x) -> x   (x the same var)
 *
 * all on integers only, where they are exact (wrap-around arithmetic is
 * associative).  Then the shared integer analysis (ir/arith.h) rewrites
 * what the ranges of loop variables, lets, thread and block indices allow:
 * guards that always hold (`if k * 64 + j < 2048` inside loops that never
 * reach 2048) fold to constants, divisions by tile sizes fold
 * (`(j * 4 + v) // 4` with v in [0, 4) is j), min/max of ordered operands
 * pick a side.  On statements it removes what can never run: an `if`
 * whose condition folded to a constant keeps only the live branch, a loop
 * whose extent is at most 0 and a `while False` disappear, and empty
 * sequences left behind are dropped from their parent.
 *
 * It runs on the shared mutator (ir/walk.h), bottom-up: unchanged subtrees
 * are kept as they are, changed nodes are rebuilt through the folding
 * constructors, and the mutator's frames give the analysis the enclosing
 * loops.
 */
#include "ir/arith.h"
#include "ir/walk.h"
#include "pass/pass.h"

static bool const_int(const IrExpr *e, int64_t *v) {
    return ir_is_const_int(e, v) && ts_dtype_is_int(e->dt);
}

static bool same_var(const IrExpr *x, const IrExpr *y) {
    return x->kind == IR_E_VAR && y->kind == IR_E_VAR && x->var == y->var;
}

/* The extra integer rewrites on an already folded binary node. */
static IrExpr *rewrite_bin(TsArena *a, IrExpr *e) {
    if (e->kind != IR_E_BIN || !ts_dtype_is_int(e->dt)) return e;
    IrBinOp op = e->bin.op;
    IrExpr *x = e->bin.a, *y = e->bin.b;
    int64_t c2, c1;
    if ((op == IR_SUB) && same_var(x, y)) return ir_int(a, 0, e->dt);
    if ((op == IR_MIN || op == IR_MAX) && same_var(x, y)) return x;
    if (!const_int(y, &c2) || x->kind != IR_E_BIN || x->dt != e->dt ||
        !const_int(x->bin.b, &c1))
        return e;
    IrExpr *inner = x->bin.a;
    IrBinOp xop = x->bin.op;
    if (op == IR_ADD && xop == IR_ADD)
        return ir_bin(a, IR_ADD, inner, ir_int(a, (int64_t)((uint64_t)c1 + (uint64_t)c2), e->dt));
    if (op == IR_ADD && xop == IR_SUB)
        return ir_bin(a, IR_ADD, inner, ir_int(a, (int64_t)((uint64_t)c2 - (uint64_t)c1), e->dt));
    if (op == IR_SUB && xop == IR_ADD)
        return ir_bin(a, IR_ADD, inner, ir_int(a, (int64_t)((uint64_t)c1 - (uint64_t)c2), e->dt));
    if (op == IR_MUL && xop == IR_MUL)
        return ir_bin(a, IR_MUL, inner, ir_int(a, (int64_t)((uint64_t)c1 * (uint64_t)c2), e->dt));
    return e;
}

/* The pass's state: the analysis, which sees the mutator's frames. */
typedef struct Simp {
    IrArith ar; /* ranges of loop vars, lets, threads and blocks */
} Simp;

static IrExpr *simp_post_expr(IrMutator *m, IrExpr *e) {
    Simp *sp = m->ctx;
    if (e->kind != IR_E_BIN) return e->kind == IR_E_NOT ? ir_arith_simplify_node(&sp->ar, e) : e;
    TsDType dt = e->dt;
    IrExpr *r = rewrite_bin(m->arena, e);
    sp->ar.frame = m->frame;
    r = ir_arith_simplify_node(&sp->ar, r);
    if (r->dt != dt) r = ir_cast(m->arena, dt, r);
    if (!r->loc.src) r->loc = e->loc;
    return r;
}

static bool is_empty(const IrStmt *s) { return !s || (s->kind == IR_S_SEQ && s->seq.n == 0); }

/* Dead code, on a statement whose parts are simplified already. */
static IrStmt *simp_post_stmt(IrMutator *m, IrStmt *s) {
    TsArena *a = m->arena;
    int64_t c;
    switch (s->kind) {
    case IR_S_SEQ: {
        int keep = 0;
        for (int i = 0; i < s->seq.n; i++) keep += !is_empty(s->seq.v[i]);
        if (keep == s->seq.n) return s;
        IrStmt *r = ir_seq(a);
        r->loc = s->loc;
        for (int i = 0; i < s->seq.n; i++)
            if (!is_empty(s->seq.v[i])) ir_seq_push(a, r, s->seq.v[i]);
        return r;
    }
    case IR_S_FOR: {
        Simp *sp = m->ctx;
        sp->ar.frame = m->frame->up; /* the loop's bounds are outside it */
        if (ir_arith_bound(&sp->ar, s->for_.extent).hi <= 0) return ir_seq(a);
        return s;
    }
    case IR_S_IF: {
        if (ir_is_const_int(s->if_.cond, &c)) {
            IrStmt *live = c ? s->if_.then : s->if_.else_;
            return live ? live : ir_seq(a);
        }
        bool drop_else = s->if_.else_ && is_empty(s->if_.else_);
        if (is_empty(s->if_.then) && (!s->if_.else_ || drop_else)) return ir_seq(a);
        if (!drop_else && s->if_.then) return s;
        IrStmt *r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        if (drop_else) r->if_.else_ = NULL;
        if (!r->if_.then) r->if_.then = ir_seq(a);
        return r;
    }
    case IR_S_WHILE:
        if (ir_is_const_int(s->while_.cond, &c) && !c) return ir_seq(a);
        return s;
    default: return s;
    }
}

static bool async_copy(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_VCOPY && s->vcopy.async;
}

static IrStmt *drop_group_op(IrMutator *m, IrStmt *s) {
    (void)m;
    return s->kind == IR_S_ASYNC_COMMIT || s->kind == IR_S_ASYNC_WAIT ? NULL : s;
}

void ts_pass_simplify(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    TsArena *a = cx->arena;
    Simp sp;
    ir_arith_init(&sp.ar, a, k);
    IrMutator m = {.arena = a, .ctx = &sp, .post_expr = simp_post_expr,
                   .post_stmt = simp_post_stmt, .fold = true};
    for (int i = 0; i < k->ngrid && i < 3; i++) k->grid[i] = ir_mutate_expr(&m, k->grid[i]);
    k->body = ir_mutate_stmt(&m, k->body);
    /* the group commits and waits of a kernel without asynchronous copies
     * (T.ptx_commit_group / T.ptx_wait_group around TileLang's prefer_async
     * copies, synchronous here) have nothing to wait for: dead code.  (The
     * pipelining passes, later, add their own.) */
    if (k->body && !ir_stmt_any(k->body, async_copy, NULL)) {
        IrMutator d = {.arena = a, .post_stmt = drop_group_op};
        k->body = ir_mutate_stmt(&d, k->body);
    }
    if (!k->body) k->body = ir_seq(a);
}
