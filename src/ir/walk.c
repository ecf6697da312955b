/*
 * walk.c — the IR walker and rewriter (see walk.h for the contract).
 *
 * The children of each node kind are listed twice below, once for reading
 * (visit_stmt / visit_expr) and once for rebuilding (mutate_stmt /
 * mutate_expr); both switches name every kind, so the compiler's
 * -Wswitch warns here, in one place, when a kind is added.  Frames live
 * on the C stack of the recursion: entering a statement pushes a local
 * IrWalkFrame linked to its parent's, leaving pops it, and nothing is
 * allocated.
 *
 * The mutator keeps sharing: an expression array, tile op or statement is
 * only copied when one of its parts changed (or `copy` asks for it), and a
 * SEQ only when a child changed or was deleted.
 */
#include "ir/walk.h"

#include <string.h>

#include "ir/tileop.h"

/* ---- visitor ---------------------------------------------------------------- */

static void report(IrVisitor *v, const IrBuffer *b, int rw, IrExpr *const *idx, int nidx,
                   int lanes, const IrRegion *r, const IrExpr *e) {
    if (!v->access || v->stop) return;
    IrAccess acc = {b, rw, idx, nidx, lanes, r, e};
    v->access(v, &acc);
}

/* Visit a guarded part: a statement (s: its node) or an expression (e). */
static void guarded(IrVisitor *v, IrGuardKind kind, const IrExpr *cond, bool neg, const IrStmt *s,
                    const IrExpr *e, const IrStmt *part_s, const IrExpr *part_e) {
    if ((!part_s && !part_e) || v->stop) return;
    IrGuard g = {kind, cond, neg, s, e, v->guard};
    v->guard = &g;
    if (v->enter_guard) v->enter_guard(v, &g);
    if (part_s) ir_visit_stmt(v, part_s);
    else ir_visit_expr(v, part_e);
    if (v->leave_guard) v->leave_guard(v, &g);
    v->guard = g.up;
}

static void visit_exprs(IrVisitor *v, IrExpr *const *e, int n) {
    for (int i = 0; i < n && !v->stop; i++) ir_visit_expr(v, e[i]);
}

void ir_visit_expr(IrVisitor *v, const IrExpr *e) {
    if (!e || v->stop) return;
    if (v->pre_expr && !v->pre_expr(v, e)) return;
    switch (e->kind) {
    case IR_E_INT:
    case IR_E_FLOAT:
    case IR_E_VAR:
    case IR_E_STRING: break;
    case IR_E_LOAD:
        report(v, e->load.buf, IR_ACC_READ, e->load.idx, e->load.nidx, 1, NULL, e);
        visit_exprs(v, e->load.idx, e->load.nidx);
        break;
    case IR_E_BIN:
        ir_visit_expr(v, e->bin.a);
        if (e->bin.op == IR_AND || e->bin.op == IR_OR) /* short-circuit: b only where a decides nothing */
            guarded(v, e->bin.op == IR_AND ? IR_GUARD_AND_RHS : IR_GUARD_OR_RHS, e->bin.a, e->bin.op == IR_OR, NULL,
                    e, NULL, e->bin.b);
        else
            ir_visit_expr(v, e->bin.b);
        break;
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST: ir_visit_expr(v, e->un.a); break;
    case IR_E_SELECT:
        ir_visit_expr(v, e->sel.cond);
        guarded(v, IR_GUARD_SELECT_A, e->sel.cond, false, NULL, e, NULL, e->sel.a);
        guarded(v, IR_GUARD_SELECT_B, e->sel.cond, true, NULL, e, NULL, e->sel.b);
        break;
    case IR_E_CALL: visit_exprs(v, e->call.args, e->call.nargs); break;
    }
    if (v->post_expr && !v->stop) v->post_expr(v, e);
}

static void visit_kids(IrVisitor *v, const IrStmt *s) {
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n && !v->stop; i++) ir_visit_stmt(v, s->seq.v[i]);
        break;
    case IR_S_FOR:
        ir_visit_expr(v, s->for_.min);
        ir_visit_expr(v, s->for_.extent);
        guarded(v, IR_GUARD_FOR_BODY, NULL, false, s, NULL, s->for_.body, NULL);
        break;
    case IR_S_IF:
        ir_visit_expr(v, s->if_.cond);
        guarded(v, IR_GUARD_THEN, s->if_.cond, false, s, NULL, s->if_.then, NULL);
        guarded(v, IR_GUARD_ELSE, s->if_.cond, true, s, NULL, s->if_.else_, NULL);
        break;
    case IR_S_WHILE:
        ir_visit_expr(v, s->while_.cond);
        guarded(v, IR_GUARD_WHILE_BODY, s->while_.cond, false, s, NULL, s->while_.body, NULL);
        break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        report(v, s->store.buf, s->kind == IR_S_STORE ? IR_ACC_WRITE : IR_ACC_READ | IR_ACC_WRITE,
               s->store.idx, s->store.nidx, 1, NULL, NULL);
        visit_exprs(v, s->store.idx, s->store.nidx);
        ir_visit_expr(v, s->store.value);
        break;
    case IR_S_LET: ir_visit_expr(v, s->let.value); break;
    case IR_S_TILEOP:
        if (!s->op) break; /* a malformed node (the targets report it) */
        for (int i = 0; i < s->op->nr && !v->stop; i++) {
            const IrRegion *r = &s->op->r[i];
            report(v, r->buf, ir_tileop_region_rw(s->op, i), NULL, 0, 1, r, NULL);
            visit_exprs(v, r->start, r->ndim);
            visit_exprs(v, r->extent, r->ndim);
        }
        ir_visit_expr(v, s->op->value);
        for (int i = 0; i < 3; i++) ir_visit_expr(v, s->op->args[i]); /* COMM operands */
        break;
    case IR_S_EVAL: ir_visit_expr(v, s->eval.e); break;
    case IR_S_PRINT:
        if (s->print.buf) report(v, s->print.buf, IR_ACC_READ, NULL, 0, 1, NULL, NULL);
        ir_visit_expr(v, s->print.value);
        break;
    case IR_S_VCOPY:
        report(v, s->vcopy.dst, IR_ACC_WRITE, s->vcopy.didx, s->vcopy.ndi, s->vcopy.lanes, NULL,
               NULL);
        report(v, s->vcopy.src, IR_ACC_READ, s->vcopy.sidx, s->vcopy.nsi, s->vcopy.lanes, NULL,
               NULL);
        visit_exprs(v, s->vcopy.didx, s->vcopy.ndi);
        visit_exprs(v, s->vcopy.sidx, s->vcopy.nsi);
        ir_visit_expr(v, s->vcopy.pred);
        break;
    case IR_S_MBAR: {
        /* an mbarrier object: INIT writes it, WAIT reads it, ARRIVE and
         * EXPECT_TX update it atomically (read and write) */
        int rw = s->mbar.op == IR_MBAR_INIT ? IR_ACC_WRITE
                 : s->mbar.op == IR_MBAR_WAIT ? IR_ACC_READ : IR_ACC_READ | IR_ACC_WRITE;
        report(v, s->mbar.buf, rw, &s->mbar.idx, 1, 1, NULL, NULL);
        ir_visit_expr(v, s->mbar.idx);
        ir_visit_expr(v, s->mbar.value);
        break;
    }
    case IR_S_ROLE: ir_visit_stmt(v, s->role.body); break;
    case IR_S_BARRIER: ir_visit_expr(v, s->barrier.idv); break;
    case IR_S_ALLOC:
    case IR_S_BREAK:
    case IR_S_CONTINUE:
    case IR_S_ASYNC_COMMIT:
    case IR_S_ASYNC_WAIT: break;
    }
}

void ir_visit_stmt(IrVisitor *v, const IrStmt *s) {
    if (!s || v->stop) return;
    IrWalkFrame f = {s, v->frame};
    v->frame = &f;
    if (!v->pre_stmt || v->pre_stmt(v, s)) visit_kids(v, s);
    if (v->post_stmt && !v->stop) v->post_stmt(v, s);
    v->frame = f.up;
}

const IrStmt *ir_frame_loop(const IrWalkFrame *f) {
    for (; f; f = f->up)
        if (f->s->kind == IR_S_FOR) return f->s;
    return NULL;
}

/* ---- queries ------------------------------------------------------------------ */

typedef struct AnyCtx {
    bool (*sfn)(const IrStmt *s, void *ctx); /* statement predicate, or NULL */
    bool (*efn)(const IrExpr *e, void *ctx); /* expression predicate, or NULL */
    void *ctx;                               /* the predicate's context */
    bool found;                              /* the answer */
} AnyCtx;

static bool any_stmt_pre(IrVisitor *v, const IrStmt *s) {
    AnyCtx *c = v->ctx;
    if (c->sfn(s, c->ctx)) c->found = v->stop = true;
    return !v->stop;
}

static bool any_expr_pre(IrVisitor *v, const IrExpr *e) {
    AnyCtx *c = v->ctx;
    if (c->efn(e, c->ctx)) c->found = v->stop = true;
    return !v->stop;
}

bool ir_stmt_any(const IrStmt *s, bool (*fn)(const IrStmt *s, void *ctx), void *ctx) {
    AnyCtx c = {fn, NULL, ctx, false};
    IrVisitor v = {.ctx = &c, .pre_stmt = any_stmt_pre};
    ir_visit_stmt(&v, s);
    return c.found;
}

bool ir_stmt_any_expr(const IrStmt *s, bool (*fn)(const IrExpr *e, void *ctx), void *ctx) {
    AnyCtx c = {NULL, fn, ctx, false};
    IrVisitor v = {.ctx = &c, .pre_expr = any_expr_pre};
    ir_visit_stmt(&v, s);
    return c.found;
}

static bool is_var(const IrExpr *e, void *ctx) { return e->kind == IR_E_VAR && e->var == ctx; }

bool ir_expr_uses_var(const IrExpr *e, const IrVar *v) {
    return ir_expr_any(e, is_var, (void *)v);
}

bool ir_stmt_uses_var(const IrStmt *s, const IrVar *v) {
    return ir_stmt_any_expr(s, is_var, (void *)v);
}

static bool loads_buf(const IrExpr *e, void *ctx) {
    return e->kind == IR_E_LOAD && (!ctx || e->load.buf == ctx);
}

bool ir_expr_loads(const IrExpr *e, const IrBuffer *b) {
    return ir_expr_any(e, loads_buf, (void *)b);
}

typedef struct RwCtx {
    const IrBuffer *b; /* the buffer asked about, or NULL */
    unsigned scopes;   /* with b NULL: the scopes asked about */
    int rw;            /* the union so far */
} RwCtx;

static void rw_access(IrVisitor *v, const IrAccess *acc) {
    RwCtx *c = v->ctx;
    if (c->b ? acc->buf == c->b : ((c->scopes >> acc->buf->scope) & 1)) c->rw |= acc->rw;
    if (c->rw == (IR_ACC_READ | IR_ACC_WRITE)) v->stop = true;
}

int ir_stmt_access_rw(const IrStmt *s, const IrBuffer *b, unsigned scopes) {
    RwCtx c = {b, scopes, 0};
    IrVisitor v = {.ctx = &c, .access = rw_access};
    ir_visit_stmt(&v, s);
    return c.rw;
}

/* ---- rebuilding one node -------------------------------------------------------- */

IrExpr *ir_expr_rebuild(TsArena *a, const IrExpr *e, IrExpr *const *kids, bool fold) {
    IrExpr *r;
    if (!fold) {
        r = TS_NEW(a, IrExpr);
        *r = *e;
        switch (e->kind) {
        case IR_E_LOAD:
            r->load.idx = TS_NEWN(a, IrExpr *, e->load.nidx > 0 ? e->load.nidx : 1);
            for (int i = 0; i < e->load.nidx; i++) r->load.idx[i] = kids[i];
            break;
        case IR_E_BIN:
            r->bin.a = kids[0];
            r->bin.b = kids[1];
            break;
        case IR_E_NEG:
        case IR_E_NOT:
        case IR_E_CAST: r->un.a = kids[0]; break;
        case IR_E_SELECT:
            r->sel.cond = kids[0];
            r->sel.a = kids[1];
            r->sel.b = kids[2];
            break;
        case IR_E_CALL:
            r->call.args = TS_NEWN(a, IrExpr *, e->call.nargs > 0 ? e->call.nargs : 1);
            for (int i = 0; i < e->call.nargs; i++) r->call.args[i] = kids[i];
            break;
        case IR_E_INT:
        case IR_E_FLOAT:
        case IR_E_VAR:
        case IR_E_STRING: break;
        }
        return r;
    }
    switch (e->kind) {
    case IR_E_LOAD:
        r = ir_load(a, e->load.buf, (IrExpr **)kids, e->load.nidx);
        r->dt = e->dt;
        r->load.bits = e->load.bits;
        r->load.acquire = e->load.acquire;
        break;
    case IR_E_BIN: r = ir_bin(a, e->bin.op, kids[0], kids[1]); break;
    case IR_E_NEG: r = ir_neg(a, kids[0]); break;
    case IR_E_NOT: r = ir_not(a, kids[0]); break;
    case IR_E_CAST: r = ir_cast(a, e->dt, kids[0]); break;
    case IR_E_SELECT: r = ir_select(a, kids[0], kids[1], kids[2]); break;
    case IR_E_CALL:
        r = ir_call(a, e->call.fn, (IrExpr **)kids, e->call.nargs, e->dt);
        break;
    case IR_E_INT:
    case IR_E_FLOAT:
    case IR_E_VAR:
    case IR_E_STRING:
    default:
        r = TS_NEW(a, IrExpr);
        *r = *e;
        return r;
    }
    if (r->dt != e->dt && e->dt != TS_DTYPE_NONE) r = ir_cast(a, e->dt, r);
    if (!r->loc.src) r->loc = e->loc;
    return r;
}

/* ---- mutator ---------------------------------------------------------------------- */

IrExpr **ir_mutate_exprs(IrMutator *m, IrExpr **v, int n) {
    IrExpr **r = NULL;
    for (int i = 0; i < n; i++) {
        IrExpr *x = ir_mutate_expr(m, v[i]);
        if (!r && (x != v[i] || m->copy)) {
            r = TS_NEWN(m->arena, IrExpr *, n);
            memcpy(r, v, sizeof(IrExpr *) * (size_t)i);
        }
        if (r) r[i] = x;
    }
    return r ? r : v;
}

IrExpr *ir_mutate_expr(IrMutator *m, IrExpr *e) {
    if (!e) return NULL;
    if (m->pre_expr) {
        IrExpr *r = m->pre_expr(m, e);
        if (r) return r;
    }
    IrExpr *small[3], **kids = small, *r = e;
    int n = 0;
    bool changed = m->copy;
    switch (e->kind) {
    case IR_E_LOAD:
    case IR_E_CALL: {
        IrExpr **v = e->kind == IR_E_LOAD ? e->load.idx : e->call.args;
        n = e->kind == IR_E_LOAD ? e->load.nidx : e->call.nargs;
        kids = ir_mutate_exprs(m, v, n);
        changed |= kids != v;
        break;
    }
    case IR_E_BIN:
        n = 2;
        small[0] = ir_mutate_expr(m, e->bin.a);
        small[1] = ir_mutate_expr(m, e->bin.b);
        changed |= small[0] != e->bin.a || small[1] != e->bin.b;
        break;
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST:
        n = 1;
        small[0] = ir_mutate_expr(m, e->un.a);
        changed |= small[0] != e->un.a;
        break;
    case IR_E_SELECT:
        n = 3;
        small[0] = ir_mutate_expr(m, e->sel.cond);
        small[1] = ir_mutate_expr(m, e->sel.a);
        small[2] = ir_mutate_expr(m, e->sel.b);
        changed |= small[0] != e->sel.cond || small[1] != e->sel.a || small[2] != e->sel.b;
        break;
    case IR_E_INT:
    case IR_E_FLOAT:
    case IR_E_VAR:
    case IR_E_STRING: break;
    }
    (void)n;
    if (changed) r = ir_expr_rebuild(m->arena, e, kids, m->fold);
    if (m->post_expr) r = m->post_expr(m, r);
    return r;
}

static IrRegion mutate_region(IrMutator *m, const IrRegion *g, bool *changed) {
    IrRegion r = *g;
    r.start = ir_mutate_exprs(m, g->start, g->ndim);
    r.extent = ir_mutate_exprs(m, g->extent, g->ndim);
    *changed |= r.start != g->start || r.extent != g->extent;
    return r;
}

static int *copy_ints(TsArena *a, const int *v, int n) {
    if (!v) return NULL;
    int *r = TS_NEWN(a, int, n > 0 ? n : 1);
    memcpy(r, v, sizeof(int) * (size_t)n);
    return r;
}

/* A statement's child after mutation: NULL (deleted) becomes an empty SEQ. */
static IrStmt *mutate_body(IrMutator *m, IrStmt *s) {
    if (!s) return NULL;
    IrStmt *r = ir_mutate_stmt(m, s);
    return r ? r : ir_seq(m->arena);
}

static IrStmt *mutate_kids(IrMutator *m, IrStmt *s) {
    IrStmt t = *s; /* the candidate, copied to the arena if anything changed */
    bool changed = m->copy;
    switch (s->kind) {
    case IR_S_SEQ: {
        IrStmt **v = NULL;
        int n = 0;
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *x = ir_mutate_stmt(m, s->seq.v[i]);
            if (!v && (x != s->seq.v[i] || m->copy)) {
                v = TS_NEWN(m->arena, IrStmt *, s->seq.n > 0 ? s->seq.n : 1);
                memcpy(v, s->seq.v, sizeof(IrStmt *) * (size_t)i);
                n = i;
            }
            if (v && x) v[n++] = x;
        }
        if (v) {
            changed = true;
            t.seq.v = v;
            t.seq.n = n;
            t.seq.cap = s->seq.n;
        }
        break;
    }
    case IR_S_FOR:
        t.for_.min = ir_mutate_expr(m, s->for_.min);
        t.for_.extent = ir_mutate_expr(m, s->for_.extent);
        t.for_.body = mutate_body(m, s->for_.body);
        changed |= t.for_.min != s->for_.min || t.for_.extent != s->for_.extent ||
                   t.for_.body != s->for_.body;
        if (m->copy) {
            t.for_.order = copy_ints(m->arena, s->for_.order, s->for_.norder);
            t.for_.stage = copy_ints(m->arena, s->for_.stage, s->for_.norder);
        }
        break;
    case IR_S_IF:
        t.if_.cond = ir_mutate_expr(m, s->if_.cond);
        t.if_.then = mutate_body(m, s->if_.then);
        t.if_.else_ = s->if_.else_ ? ir_mutate_stmt(m, s->if_.else_) : NULL;
        changed |= t.if_.cond != s->if_.cond || t.if_.then != s->if_.then ||
                   t.if_.else_ != s->if_.else_;
        break;
    case IR_S_WHILE:
        t.while_.cond = ir_mutate_expr(m, s->while_.cond);
        t.while_.body = mutate_body(m, s->while_.body);
        changed |= t.while_.cond != s->while_.cond || t.while_.body != s->while_.body;
        break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        t.store.idx = ir_mutate_exprs(m, s->store.idx, s->store.nidx);
        t.store.value = ir_mutate_expr(m, s->store.value);
        changed |= t.store.idx != s->store.idx || t.store.value != s->store.value;
        break;
    case IR_S_LET:
        t.let.value = ir_mutate_expr(m, s->let.value);
        changed |= t.let.value != s->let.value;
        break;
    case IR_S_TILEOP: {
        IrTileOp op = *s->op;
        bool oc = m->copy;
        for (int i = 0; i < op.nr; i++) op.r[i] = mutate_region(m, &s->op->r[i], &oc);
        op.value = ir_mutate_expr(m, s->op->value);
        oc |= op.value != s->op->value;
        for (int i = 0; i < 3; i++) { /* COMM operands */
            op.args[i] = ir_mutate_expr(m, s->op->args[i]);
            oc |= op.args[i] != s->op->args[i];
        }
        if (oc) {
            t.op = TS_NEW(m->arena, IrTileOp);
            *t.op = op;
            changed = true;
        }
        break;
    }
    case IR_S_EVAL:
        t.eval.e = ir_mutate_expr(m, s->eval.e);
        changed |= t.eval.e != s->eval.e;
        break;
    case IR_S_PRINT:
        t.print.value = ir_mutate_expr(m, s->print.value);
        changed |= t.print.value != s->print.value;
        break;
    case IR_S_VCOPY:
        t.vcopy.didx = ir_mutate_exprs(m, s->vcopy.didx, s->vcopy.ndi);
        t.vcopy.sidx = ir_mutate_exprs(m, s->vcopy.sidx, s->vcopy.nsi);
        t.vcopy.pred = ir_mutate_expr(m, s->vcopy.pred);
        changed |= t.vcopy.didx != s->vcopy.didx || t.vcopy.sidx != s->vcopy.sidx ||
                   t.vcopy.pred != s->vcopy.pred;
        break;
    case IR_S_MBAR:
        t.mbar.idx = ir_mutate_expr(m, s->mbar.idx);
        t.mbar.value = ir_mutate_expr(m, s->mbar.value);
        changed |= t.mbar.idx != s->mbar.idx || t.mbar.value != s->mbar.value;
        break;
    case IR_S_ROLE:
        t.role.body = mutate_body(m, s->role.body);
        changed |= t.role.body != s->role.body;
        break;
    case IR_S_BARRIER:
        t.barrier.idv = ir_mutate_expr(m, s->barrier.idv);
        changed |= t.barrier.idv != s->barrier.idv;
        break;
    case IR_S_ALLOC:
    case IR_S_BREAK:
    case IR_S_CONTINUE:
    case IR_S_ASYNC_COMMIT:
    case IR_S_ASYNC_WAIT: break;
    }
    if (!changed) return s;
    IrStmt *r = TS_NEW(m->arena, IrStmt);
    *r = t;
    return r;
}

IrStmt *ir_mutate_stmt(IrMutator *m, IrStmt *s) {
    if (!s) return NULL;
    IrWalkFrame f = {s, m->frame};
    m->frame = &f;
    IrStmt *r = m->pre_stmt ? m->pre_stmt(m, s) : NULL;
    if (!r) {
        r = mutate_kids(m, s);
        if (m->post_stmt) r = m->post_stmt(m, r);
    }
    m->frame = f.up;
    return r;
}
