/*
 * lower_tile_ops.c — the pass that replaces every tile operator by loops.
 *
 * It walks the kernel body and hands each IR_S_TILEOP statement to
 * ts_op_lower (op/op.c), which dispatches to the op's own lowering.
 * Parents of a replaced statement are copied rather than edited, so a
 * statement shared between two places (nothing in the compiler relies on
 * that, but nothing forbids it either) is never changed behind anyone's
 * back; untouched subtrees are kept as they are.
 *
 * This is the generic lowering used by the C target.  The CUDA target
 * will run layout inference first and lower copies and gemms to its own
 * instructions, falling back to this for the rest.
 */
#include "op/op.h"
#include "pass/pass.h"

static IrStmt *lower(TsLowerCtx *lx, IrStmt *s) {
    if (!s) return NULL;
    TsArena *a = lx->arena;
    IrStmt *r;
    switch (s->kind) {
    case IR_S_TILEOP: {
        IrStmt *low = ts_op_lower(lx, s);
        if (!low->loc.src) low->loc = s->loc;
        return low;
    }
    case IR_S_SEQ: {
        IrStmt **kids = TS_NEWN(a, IrStmt *, s->seq.n > 0 ? s->seq.n : 1);
        bool changed = false;
        for (int i = 0; i < s->seq.n; i++) {
            kids[i] = lower(lx, s->seq.v[i]);
            changed |= kids[i] != s->seq.v[i];
        }
        if (!changed) return s;
        r = ir_seq(a);
        r->loc = s->loc;
        for (int i = 0; i < s->seq.n; i++) ir_seq_push(a, r, kids[i]);
        return r;
    }
    case IR_S_FOR: {
        IrStmt *body = lower(lx, s->for_.body);
        if (body == s->for_.body) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->for_.body = body;
        return r;
    }
    case IR_S_IF: {
        IrStmt *t = lower(lx, s->if_.then), *e = lower(lx, s->if_.else_);
        if (t == s->if_.then && e == s->if_.else_) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->if_.then = t;
        r->if_.else_ = e;
        return r;
    }
    case IR_S_WHILE: {
        IrStmt *body = lower(lx, s->while_.body);
        if (body == s->while_.body) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->while_.body = body;
        return r;
    }
    default: return s;
    }
}

void ts_pass_lower_tile_ops(TsPassCtx *cx) {
    TsLowerCtx lx = {cx->diag, cx->arena, cx->k, cx->target};
    cx->k->body = lower(&lx, cx->k->body);
}
