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
 * associative).  On statements it removes what can never run: an `if`
 * whose condition folded to a constant keeps only the live branch, a loop
 * with a constant extent <= 0 and a `while False` disappear, and empty
 * sequences left behind are dropped from their parent.
 *
 * It builds new nodes throughout; the old tree is simply abandoned in the
 * arena.
 */
#include "op/op.h"
#include "pass/pass.h"

static IrExpr *simp_expr(TsArena *a, IrExpr *e);

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

static IrExpr **simp_list(TsArena *a, IrExpr **v, int n) {
    IrExpr **r = TS_NEWN(a, IrExpr *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) r[i] = simp_expr(a, v[i]);
    return r;
}

static IrExpr *simp_expr(TsArena *a, IrExpr *e) {
    if (!e) return NULL;
    IrExpr *r;
    switch (e->kind) {
    case IR_E_BIN: {
        IrExpr *x = simp_expr(a, e->bin.a), *y = simp_expr(a, e->bin.b);
        r = rewrite_bin(a, ir_bin(a, e->bin.op, x, y));
        if (r->dt != e->dt) r = ir_cast(a, e->dt, r);
        break;
    }
    case IR_E_NEG: r = ir_neg(a, simp_expr(a, e->un.a)); break;
    case IR_E_NOT: r = ir_not(a, simp_expr(a, e->un.a)); break;
    case IR_E_CAST: r = ir_cast(a, e->dt, simp_expr(a, e->un.a)); break;
    case IR_E_SELECT:
        r = ir_select(a, simp_expr(a, e->sel.cond), simp_expr(a, e->sel.a),
                      simp_expr(a, e->sel.b));
        break;
    case IR_E_LOAD:
        r = ir_load(a, e->load.buf, simp_list(a, e->load.idx, e->load.nidx), e->load.nidx);
        r->dt = e->dt;
        break;
    case IR_E_CALL:
        r = ir_call(a, e->call.fn, simp_list(a, e->call.args, e->call.nargs), e->call.nargs,
                    e->dt);
        break;
    default: return e; /* leaves are immutable and can be shared */
    }
    if (!r->loc.src) r->loc = e->loc;
    return r;
}

static IrRegion simp_region(TsArena *a, const IrRegion *g) {
    IrRegion r = *g;
    r.start = simp_list(a, g->start, g->ndim);
    r.extent = simp_list(a, g->extent, g->ndim);
    return r;
}

static bool is_empty(const IrStmt *s) { return !s || (s->kind == IR_S_SEQ && s->seq.n == 0); }

static IrStmt *simp_stmt(TsArena *a, const IrStmt *s) {
    if (!s) return NULL;
    IrStmt *r = ir_stmt(a, s->kind, s->loc);
    *r = *s;
    int64_t c;
    switch (s->kind) {
    case IR_S_SEQ:
        r->seq.v = NULL;
        r->seq.n = r->seq.cap = 0;
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *k = simp_stmt(a, s->seq.v[i]);
            if (!is_empty(k)) ir_seq_push(a, r, k);
        }
        break;
    case IR_S_FOR:
        r->for_.min = simp_expr(a, s->for_.min);
        r->for_.extent = simp_expr(a, s->for_.extent);
        if (ir_is_const_int(r->for_.extent, &c) && c <= 0) return ir_seq(a);
        r->for_.body = simp_stmt(a, s->for_.body);
        break;
    case IR_S_IF:
        r->if_.cond = simp_expr(a, s->if_.cond);
        if (ir_is_const_int(r->if_.cond, &c)) {
            IrStmt *live = simp_stmt(a, c ? s->if_.then : s->if_.else_);
            return live ? live : ir_seq(a);
        }
        r->if_.then = simp_stmt(a, s->if_.then);
        r->if_.else_ = simp_stmt(a, s->if_.else_);
        if (r->if_.else_ && is_empty(r->if_.else_)) r->if_.else_ = NULL;
        if (is_empty(r->if_.then) && !r->if_.else_) return ir_seq(a);
        if (!r->if_.then) r->if_.then = ir_seq(a);
        break;
    case IR_S_WHILE:
        r->while_.cond = simp_expr(a, s->while_.cond);
        if (ir_is_const_int(r->while_.cond, &c) && !c) return ir_seq(a);
        r->while_.body = simp_stmt(a, s->while_.body);
        break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        r->store.idx = simp_list(a, s->store.idx, s->store.nidx);
        r->store.value = simp_expr(a, s->store.value);
        break;
    case IR_S_LET: r->let.value = simp_expr(a, s->let.value); break;
    case IR_S_EVAL: r->eval.e = simp_expr(a, s->eval.e); break;
    case IR_S_PRINT: r->print.value = simp_expr(a, s->print.value); break;
    case IR_S_TILEOP: {
        IrTileOp *op = TS_NEW(a, IrTileOp);
        *op = *s->op;
        for (int i = 0; i < op->nr; i++) op->r[i] = simp_region(a, &s->op->r[i]);
        op->value = simp_expr(a, s->op->value);
        r->op = op;
        break;
    }
    case IR_S_VCOPY:
        r->vcopy.didx = simp_list(a, s->vcopy.didx, s->vcopy.ndi);
        r->vcopy.sidx = simp_list(a, s->vcopy.sidx, s->vcopy.nsi);
        r->vcopy.pred = s->vcopy.pred ? simp_expr(a, s->vcopy.pred) : NULL;
        break;
    case IR_S_BREAK:
    case IR_S_CONTINUE:
    case IR_S_ALLOC:
    case IR_S_BARRIER:
    case IR_S_ASYNC_COMMIT:
    case IR_S_ASYNC_WAIT: break;
    }
    return r;
}

void ts_pass_simplify(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    TsArena *a = cx->arena;
    for (int i = 0; i < k->ngrid && i < 3; i++) k->grid[i] = simp_expr(a, k->grid[i]);
    k->body = simp_stmt(a, k->body);
    if (!k->body) k->body = ir_seq(a);
}
