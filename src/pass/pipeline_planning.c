/*
 * pipeline_planning.c — the CUDA pass that plans `T.Pipelined` loops:
 * which statements of the loop body run ahead (stages), in which order,
 * which shared tiles get one copy per stage, and which copies become
 * asynchronous.  inject_pipeline (inject_pipeline.c), after lowering,
 * turns the plan into a prologue and a steady-state loop.
 *
 * The model is the usual software pipeline (TVM's and TileLang's): every
 * top-level statement i of the body has a stage s_i and a position o_i.
 * With S the largest stage, step t of the pipeline runs, in the order o,
 * each statement i for iteration t - s_i (when that iteration exists), so
 * a statement of stage 0 runs S iterations ahead of one of stage S.
 *
 * Default plan (no `stage=` annotation): every global -> shared T.copy
 * that may run ahead (below) is stage 0, every other statement stage
 * num_stages - 1; the order puts the stage-0 copies first (FlashAttention's
 * V tile, written after the softmax, is then loaded while it runs), each
 * group in program order.  A `stage=`/`order=`
 * annotation (one entry per top-level statement: TileLang's `group=` is
 * not supported and is ignored by the front end) replaces them; a
 * statement placed in an earlier stage than the last must be such a copy,
 * anything else is an error (it would need its own results multi-buffered).
 * Lists with -1 entries are TileLang's marks for its TMA + warp-specialized
 * Hopper schedules (with group=): they get the default plan here.
 *
 * A copy may run ahead when moving it does not change what anyone reads:
 * it copies global memory the loop does not write into a whole shared
 * buffer that nothing outside the loop touches, that no other statement
 * of the loop writes and that no statement before it in the body touches
 * (it is read only after it is written, in the same iteration); its
 * region depends only on the loop variable and values fixed before the
 * loop.  Such a buffer, read by consumers up to d stages later, becomes a
 * new buffer with a leading dimension of d + 1 (the copies in flight plus
 * the one being read), every access in the loop indexed [(k - min) %
 * (d + 1), ...] explicitly (tile-op regions included: a T.gemm reads
 * slot k % (d + 1) of its operand); when every consumer is at least one
 * stage later the copy is marked async (IrTileOp.async), which makes the
 * CUDA lowering issue cp.async without barriers.
 *
 * A loop with num_stages < 2 and no stage annotation, with no copy that
 * may run ahead, or under control flow that differs between threads
 * (its barriers need every thread of the block), is left as it is (its annotations dropped, so that
 * inject_pipeline skips it); so is every loop when TsCaps.pipeline is off.
 * The plan is recorded on the loop: for_.stage / for_.order with one entry
 * per top-level body statement (printed by --dump-after).  The C target
 * never runs this pass; it runs T.Pipelined as a serial loop.
 */
#include <string.h>

#include "op/op.h"
#include "pass/pass.h"

/* A shared buffer made multi-buffered: accesses to `old` become accesses
 * to `nu` with `slot` prepended. */
typedef struct Repl {
    IrBuffer *old; /* the shared tile as declared */
    IrBuffer *nu;  /* its multi-buffered replacement: [slots, ...old's shape] */
    IrExpr *slot;  /* the slot an access indexes: (k - min) % slots */
} Repl;

typedef struct Planner {
    TsPassCtx *cx;     /* the pass's context */
    TS_VEC(Repl) repl; /* every buffer replaced so far */
    int divergent;     /* > 0: under thread-dependent control flow (no pipeline there:
                          its barriers need every thread) */
} Planner;

/* May e differ between the threads of a block (a thread index, a load of
 * a per-thread buffer)?  Conservative enough for loop and branch guards. */
static bool varies(const IrExpr *e) {
    if (!e) return false;
    switch (e->kind) {
    case IR_E_VAR: return e->var->kind == IR_VAR_THREAD_IDX;
    case IR_E_LOAD:
        if (e->load.buf->scope == IR_SCOPE_LOCAL || e->load.buf->scope == IR_SCOPE_VAR ||
            e->load.buf->scope == IR_SCOPE_FRAGMENT)
            return true;
        for (int i = 0; i < e->load.nidx; i++)
            if (varies(e->load.idx[i])) return true;
        return false;
    case IR_E_BIN: return varies(e->bin.a) || varies(e->bin.b);
    case IR_E_NEG: case IR_E_NOT: case IR_E_CAST: return varies(e->un.a);
    case IR_E_SELECT: return varies(e->sel.cond) || varies(e->sel.a) || varies(e->sel.b);
    case IR_E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (varies(e->call.args[i])) return true;
        return false;
    default: return false;
    }
}

/* ---- who touches what -------------------------------------------------------- */

/* Does e load b?  (b NULL: any buffer other than a private one.) */
static bool expr_loads(const IrExpr *e, const IrBuffer *b) {
    if (!e) return false;
    switch (e->kind) {
    case IR_E_LOAD:
        if (e->load.buf == b) return true;
        for (int i = 0; i < e->load.nidx; i++)
            if (expr_loads(e->load.idx[i], b)) return true;
        return false;
    case IR_E_BIN: return expr_loads(e->bin.a, b) || expr_loads(e->bin.b, b);
    case IR_E_NEG: case IR_E_NOT: case IR_E_CAST: return expr_loads(e->un.a, b);
    case IR_E_SELECT: return expr_loads(e->sel.cond, b) || expr_loads(e->sel.a, b) || expr_loads(e->sel.b, b);
    case IR_E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (expr_loads(e->call.args[i], b)) return true;
        return false;
    default: return false;
    }
}

static bool region_exprs_load(const IrRegion *r, const IrBuffer *b) {
    for (int d = 0; d < r->ndim; d++)
        if (expr_loads(r->start[d], b) || expr_loads(r->extent[d], b)) return true;
    return false;
}

/* Is region i of op written (1) or only read (0)? */
static bool op_writes_region(const IrTileOp *op, int i) {
    switch (op->kind) {
    case TS_OP_COPY: return i == 1;
    case TS_OP_FILL: return i == 0;
    case TS_OP_GEMM: return i == 2;
    case TS_OP_REDUCE: case TS_OP_CUMSUM: return i == 1;
    case TS_OP_ATOMIC_ADD: return i == 0;
    default: return true;
    }
}

/* What s does to b: *rd set if it reads it, *wr if it writes it. */
static void stmt_access(const IrStmt *s, const IrBuffer *b, bool *rd, bool *wr) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) stmt_access(s->seq.v[i], b, rd, wr);
        return;
    case IR_S_FOR:
        *rd |= expr_loads(s->for_.min, b) || expr_loads(s->for_.extent, b);
        stmt_access(s->for_.body, b, rd, wr);
        return;
    case IR_S_IF:
        *rd |= expr_loads(s->if_.cond, b);
        stmt_access(s->if_.then, b, rd, wr);
        stmt_access(s->if_.else_, b, rd, wr);
        return;
    case IR_S_WHILE:
        *rd |= expr_loads(s->while_.cond, b);
        stmt_access(s->while_.body, b, rd, wr);
        return;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if (s->store.buf == b) {
            *wr = true;
            if (s->kind == IR_S_ATOMIC_ADD) *rd = true;
        }
        for (int i = 0; i < s->store.nidx; i++) *rd |= expr_loads(s->store.idx[i], b);
        *rd |= expr_loads(s->store.value, b);
        return;
    case IR_S_LET: *rd |= expr_loads(s->let.value, b); return;
    case IR_S_EVAL: *rd |= expr_loads(s->eval.e, b); return;
    case IR_S_PRINT:
        *rd |= s->print.buf == b || expr_loads(s->print.value, b);
        return;
    case IR_S_TILEOP:
        for (int i = 0; i < s->op->nr; i++) {
            const IrRegion *r = &s->op->r[i];
            *rd |= region_exprs_load(r, b);
            if (r->buf != b) continue;
            if (op_writes_region(s->op, i)) {
                *wr = true;
                /* accumulating or partial writes read too */
                if (s->op->kind != TS_OP_COPY && s->op->kind != TS_OP_FILL) *rd = true;
            } else {
                *rd = true;
            }
        }
        *rd |= expr_loads(s->op->value, b);
        return;
    case IR_S_VCOPY:
        if (s->vcopy.dst == b) *wr = true;
        if (s->vcopy.src == b) *rd = true;
        for (int i = 0; i < s->vcopy.ndi; i++) *rd |= expr_loads(s->vcopy.didx[i], b);
        for (int i = 0; i < s->vcopy.nsi; i++) *rd |= expr_loads(s->vcopy.sidx[i], b);
        *rd |= expr_loads(s->vcopy.pred, b);
        return;
    default: return;
    }
}

static bool touches(const IrStmt *s, const IrBuffer *b) {
    bool rd = false, wr = false;
    stmt_access(s, b, &rd, &wr);
    return rd || wr;
}

/* Does s (outside `skip`) touch b? */
static bool touches_outside(const IrStmt *s, const IrStmt *skip, const IrBuffer *b) {
    if (!s || s == skip) return false;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (touches_outside(s->seq.v[i], skip, b)) return true;
        return false;
    case IR_S_FOR:
        return expr_loads(s->for_.min, b) || expr_loads(s->for_.extent, b) ||
               touches_outside(s->for_.body, skip, b);
    case IR_S_IF:
        return expr_loads(s->if_.cond, b) || touches_outside(s->if_.then, skip, b) ||
               touches_outside(s->if_.else_, skip, b);
    case IR_S_WHILE: return expr_loads(s->while_.cond, b) || touches_outside(s->while_.body, skip, b);
    default: return touches(s, b);
    }
}

/* Does s declare b (an IR_S_ALLOC anywhere inside)? */
static bool allocates(const IrStmt *s, const IrBuffer *b) {
    if (!s) return false;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (allocates(s->seq.v[i], b)) return true;
        return false;
    case IR_S_FOR: return allocates(s->for_.body, b);
    case IR_S_IF: return allocates(s->if_.then, b) || allocates(s->if_.else_, b);
    case IR_S_WHILE: return allocates(s->while_.body, b);
    case IR_S_ALLOC: return s->alloc.buf == b;
    default: return false;
    }
}

/* Mark in `bound` (by var id) the vars that s binds (loops, lets). */
static void mark_bound(const IrStmt *s, char *bound, int nid) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) mark_bound(s->seq.v[i], bound, nid);
        return;
    case IR_S_FOR:
        if (s->for_.var->id >= 0 && s->for_.var->id < nid) bound[s->for_.var->id] = 1;
        mark_bound(s->for_.body, bound, nid);
        return;
    case IR_S_IF:
        mark_bound(s->if_.then, bound, nid);
        mark_bound(s->if_.else_, bound, nid);
        return;
    case IR_S_WHILE: mark_bound(s->while_.body, bound, nid); return;
    case IR_S_LET:
        if (s->let.var->id >= 0 && s->let.var->id < nid) bound[s->let.var->id] = 1;
        return;
    default: return;
    }
}

typedef struct FreeCheck {
    const char *bound;          /* vars bound inside the loop body */
    int nid;                    /* size of bound */
    const IrStmt *body;         /* the loop body (loads of what it writes are refused) */
} FreeCheck;

/* Does e use a var bound inside the loop, or load memory the loop writes? */
static bool uses_loop_state(const IrExpr *e, const FreeCheck *fc) {
    if (!e) return false;
    switch (e->kind) {
    case IR_E_VAR: return e->var->id >= 0 && e->var->id < fc->nid && fc->bound[e->var->id];
    case IR_E_LOAD: {
        bool rd = false, wr = false;
        stmt_access(fc->body, e->load.buf, &rd, &wr);
        if (wr) return true;
        for (int i = 0; i < e->load.nidx; i++)
            if (uses_loop_state(e->load.idx[i], fc)) return true;
        return false;
    }
    case IR_E_BIN: return uses_loop_state(e->bin.a, fc) || uses_loop_state(e->bin.b, fc);
    case IR_E_NEG: case IR_E_NOT: case IR_E_CAST: return uses_loop_state(e->un.a, fc);
    case IR_E_SELECT:
        return uses_loop_state(e->sel.cond, fc) || uses_loop_state(e->sel.a, fc) || uses_loop_state(e->sel.b, fc);
    case IR_E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (uses_loop_state(e->call.args[i], fc)) return true;
        return false;
    default: return false;
    }
}

/* Does region r cover the whole of its buffer? */
static bool whole_buffer(const IrRegion *r) {
    for (int d = 0; d < r->ndim; d++) {
        int64_t s0, e0, sh;
        if (!ir_is_const_int(r->start[d], &s0) || s0 != 0) return false;
        if (!ir_is_const_int(r->extent[d], &e0) || !ir_is_const_int(r->buf->shape[d], &sh) || e0 != sh)
            return false;
    }
    return true;
}

/* May body statement i (a T.copy) run ahead of the rest of the body? */
static bool may_run_ahead(const IrKernel *k, const IrStmt *loop, IrStmt *const *st, int m, int i,
                          const FreeCheck *fc) {
    const IrStmt *s = st[i];
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_COPY || s->op->nr < 2) return false;
    const IrRegion *src = &s->op->r[0], *dst = &s->op->r[1];
    if (src->buf->scope != IR_SCOPE_GLOBAL || dst->buf->scope != IR_SCOPE_SHARED) return false;
    if (src->buf->dt != dst->buf->dt || !whole_buffer(dst)) return false;
    if (allocates(fc->body, dst->buf)) return false; /* the prologue would run before its alloc */
    for (int d = 0; d < src->ndim; d++)
        if (uses_loop_state(src->start[d], fc) || uses_loop_state(src->extent[d], fc)) return false;
    for (int j = 0; j < m; j++) {
        bool rd = false, wr = false;
        stmt_access(st[j], src->buf, &rd, &wr);
        if (wr) return false; /* the loop writes what it would read early */
        if (j == i) continue;
        rd = wr = false;
        stmt_access(st[j], dst->buf, &rd, &wr);
        if (wr || (j < i && rd)) return false;
    }
    return !touches_outside(k->body, loop, dst->buf);
}

/* ---- rewriting accesses to multi-buffered buffers --------------------------------- */

static const Repl *find_repl(const Planner *p, const IrBuffer *b) {
    for (int i = 0; i < p->repl.n; i++)
        if (p->repl.v[i].old == b) return &p->repl.v[i];
    return NULL;
}

static IrExpr *rw_expr(Planner *p, IrExpr *e);

static IrExpr **rw_index(Planner *p, const Repl *r, IrExpr **idx, int n, int *nout) {
    TsArena *a = p->cx->arena;
    int off = r ? 1 : 0;
    IrExpr **v = TS_NEWN(a, IrExpr *, n + off > 0 ? n + off : 1);
    if (r) v[0] = r->slot;
    for (int i = 0; i < n; i++) v[i + off] = rw_expr(p, idx[i]);
    *nout = n + off;
    return v;
}

static IrExpr *rw_expr(Planner *p, IrExpr *e) {
    if (!e) return NULL;
    TsArena *a = p->cx->arena;
    IrExpr *r;
    switch (e->kind) {
    case IR_E_LOAD: {
        const Repl *rp = find_repl(p, e->load.buf);
        int n;
        IrExpr **idx = rw_index(p, rp, e->load.idx, e->load.nidx, &n);
        r = ir_load(a, rp ? rp->nu : e->load.buf, idx, n);
        r->loc = e->loc;
        return r;
    }
    case IR_E_BIN:
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST:
    case IR_E_SELECT:
    case IR_E_CALL:
        r = TS_NEW(a, IrExpr);
        *r = *e;
        if (e->kind == IR_E_BIN) {
            r->bin.a = rw_expr(p, e->bin.a);
            r->bin.b = rw_expr(p, e->bin.b);
        } else if (e->kind == IR_E_SELECT) {
            r->sel.cond = rw_expr(p, e->sel.cond);
            r->sel.a = rw_expr(p, e->sel.a);
            r->sel.b = rw_expr(p, e->sel.b);
        } else if (e->kind == IR_E_CALL) {
            r->call.args = TS_NEWN(a, IrExpr *, e->call.nargs > 0 ? e->call.nargs : 1);
            for (int i = 0; i < e->call.nargs; i++) r->call.args[i] = rw_expr(p, e->call.args[i]);
        } else {
            r->un.a = rw_expr(p, e->un.a);
        }
        return r;
    default: return e;
    }
}

static IrRegion rw_region(Planner *p, const IrRegion *g) {
    TsArena *a = p->cx->arena;
    const Repl *rp = find_repl(p, g->buf);
    IrRegion r;
    int n;
    r.buf = rp ? rp->nu : g->buf;
    r.start = rw_index(p, rp, g->start, g->ndim, &n);
    r.ndim = n;
    if (rp) {
        r.extent = TS_NEWN(a, IrExpr *, n);
        r.extent[0] = ir_i32(a, 1);
        for (int i = 0; i < g->ndim; i++) r.extent[i + 1] = rw_expr(p, g->extent[i]);
    } else {
        r.extent = rw_index(p, NULL, g->extent, g->ndim, &n);
    }
    return r;
}

/* A copy of s with every replaced buffer's accesses rewritten (allocs of
 * replaced buffers declare the new one). */
static IrStmt *rw_stmt(Planner *p, const IrStmt *s) {
    if (!s) return NULL;
    TsArena *a = p->cx->arena;
    IrStmt *r = ir_stmt(a, s->kind, s->loc);
    *r = *s;
    switch (s->kind) {
    case IR_S_SEQ:
        r->seq.v = NULL;
        r->seq.n = r->seq.cap = 0;
        for (int i = 0; i < s->seq.n; i++) ir_seq_push(a, r, rw_stmt(p, s->seq.v[i]));
        break;
    case IR_S_FOR:
        r->for_.min = rw_expr(p, s->for_.min);
        r->for_.extent = rw_expr(p, s->for_.extent);
        r->for_.body = rw_stmt(p, s->for_.body);
        break;
    case IR_S_IF:
        r->if_.cond = rw_expr(p, s->if_.cond);
        r->if_.then = rw_stmt(p, s->if_.then);
        r->if_.else_ = rw_stmt(p, s->if_.else_);
        break;
    case IR_S_WHILE:
        r->while_.cond = rw_expr(p, s->while_.cond);
        r->while_.body = rw_stmt(p, s->while_.body);
        break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD: {
        const Repl *rp = find_repl(p, s->store.buf);
        r->store.buf = rp ? rp->nu : s->store.buf;
        r->store.idx = rw_index(p, rp, s->store.idx, s->store.nidx, &r->store.nidx);
        r->store.value = rw_expr(p, s->store.value);
        break;
    }
    case IR_S_LET: r->let.value = rw_expr(p, s->let.value); break;
    case IR_S_EVAL: r->eval.e = rw_expr(p, s->eval.e); break;
    case IR_S_PRINT: r->print.value = rw_expr(p, s->print.value); break;
    case IR_S_ALLOC: {
        const Repl *rp = find_repl(p, s->alloc.buf);
        if (rp) r->alloc.buf = rp->nu;
        break;
    }
    case IR_S_TILEOP: {
        IrTileOp *op = TS_NEW(a, IrTileOp);
        *op = *s->op;
        for (int i = 0; i < op->nr; i++) op->r[i] = rw_region(p, &s->op->r[i]);
        op->value = rw_expr(p, s->op->value);
        r->op = op;
        break;
    }
    case IR_S_VCOPY: {
        const Repl *rd = find_repl(p, s->vcopy.dst), *rs = find_repl(p, s->vcopy.src);
        if (rd) r->vcopy.dst = rd->nu;
        if (rs) r->vcopy.src = rs->nu;
        r->vcopy.didx = rw_index(p, rd, s->vcopy.didx, s->vcopy.ndi, &r->vcopy.ndi);
        r->vcopy.sidx = rw_index(p, rs, s->vcopy.sidx, s->vcopy.nsi, &r->vcopy.nsi);
        r->vcopy.pred = rw_expr(p, s->vcopy.pred);
        break;
    }
    default: break;
    }
    return r;
}

/* ---- planning one loop ---------------------------------------------------------------- */

static void drop_plan(IrStmt *loop) {
    loop->for_.order = loop->for_.stage = NULL;
    loop->for_.norder = 0;
}

/* Plan the pipelined loop `loop` (owned: a copy made by plan_stmt of
 * `orig`, the loop as it stands in the kernel body). */
static void plan_loop(Planner *p, IrStmt *loop, const IrStmt *orig) {
    TsPassCtx *cx = p->cx;
    TsArena *a = cx->arena;
    IrKernel *k = cx->k;
    int ns = loop->for_.num_stages;
    bool annotated = loop->for_.stage != NULL;
    /* TileLang marks its TMA + warp-specialized (Hopper) schedules with -1
     * entries (and per-group lists, group=): not this path; the default
     * plan runs them instead */
    bool ws = false;
    for (int i = 0; i < loop->for_.norder; i++)
        ws |= (loop->for_.stage && loop->for_.stage[i] == -1) || (loop->for_.order && loop->for_.order[i] == -1);
    if (ws) {
        drop_plan(loop);
        annotated = false;
    }
    /* num_stages=1 (TileLang: no software pipeline) would leave every tile
     * copy synchronous, a full memory latency per iteration; it is run as
     * two stages when the second slot of its tiles fits (decided below) */
    bool upgrade = ns == 1 && !annotated;
    if (upgrade) ns = 2;
    if (!cx->caps->pipeline || (ns < 2 && !annotated) || p->divergent || varies(loop->for_.extent) ||
        varies(loop->for_.min)) {
        drop_plan(loop);
        return;
    }
    IrStmt *body = loop->for_.body;
    if (!body || body->kind != IR_S_SEQ) {
        IrStmt *seq = ir_seq(a);
        seq->loc = loop->loc;
        if (body) ir_seq_push(a, seq, body);
        body = seq;
    }
    int m = body->seq.n;
    IrStmt **st = TS_NEWN(a, IrStmt *, m > 0 ? m : 1); /* ours: the body may be shared */
    for (int i = 0; i < m; i++) st[i] = body->seq.v[i];
    if (m == 0) {
        drop_plan(loop);
        return;
    }
    if (loop->for_.norder && loop->for_.norder != m)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, loop->loc,
                   "T.Pipelined: the order/stage lists have %d entries but the loop body has %d statements "
                   "(one entry per statement; group= lists are expanded to that by the front end)",
                   loop->for_.norder, m);

    FreeCheck fc;
    char *bound = TS_NEWN(a, char, k->next_id > 0 ? k->next_id : 1);
    mark_bound(body, bound, k->next_id);
    fc.bound = bound;
    fc.nid = k->next_id;
    fc.body = body;
    bool *ahead = TS_NEWN(a, bool, m);
    int nahead = 0;
    for (int i = 0; i < m; i++) nahead += ahead[i] = may_run_ahead(k, orig, st, m, i, &fc);

    if (upgrade && nahead) {
        /* the kernel's shared tiles (and fragments, which may stay in
         * shared memory) plus a second slot of every tile copied ahead */
        int64_t bytes = 0;
        for (int i = 0; i < k->buffers.n; i++) {
            const IrBuffer *b = k->buffers.v[i];
            if (b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_FRAGMENT) continue;
            int64_t n = (ts_dtype_bits(b->dt) + 7) / 8, e;
            for (int d = 0; d < b->ndim; d++) n *= ir_is_const_int(b->shape[d], &e) && e > 0 ? e : 1;
            bytes += n * (b->stages > 1 ? b->stages : 1) + 128; /* + alignment */
            for (int j = 0; j < m; j++)
                if (ahead[j] && st[j]->op->r[1].buf == b) bytes += n;
        }
        if (bytes > cx->caps->smem_max) {
            drop_plan(loop);
            return;
        }
    }
    int *stage = TS_NEWN(a, int, m), *order = TS_NEWN(a, int, m);
    int smax = 0;
    if (annotated) {
        for (int i = 0; i < m; i++) {
            stage[i] = loop->for_.stage[i];
            if (stage[i] < 0)
                ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, st[i]->loc,
                           "T.Pipelined: stage %d of this statement is not supported (stages are 0, 1, ...)",
                           stage[i]);
            if (stage[i] > smax) smax = stage[i];
        }
        for (int i = 0; i < m; i++)
            if (stage[i] < smax && !ahead[i])
                ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, st[i]->loc,
                           "T.Pipelined: this statement is placed in stage %d, before the last stage (%d), but only "
                           "a T.copy from global to a whole shared buffer that the loop reads only after it can run "
                           "ahead on the CUDA target",
                           stage[i], smax);
    } else {
        if (!nahead) {
            drop_plan(loop);
            return;
        }
        smax = ns - 1;
        for (int i = 0; i < m; i++) stage[i] = ahead[i] ? 0 : smax;
    }
    if (smax == 0) {
        drop_plan(loop);
        return;
    }
    if (loop->for_.order) {
        char *seen = TS_NEWN(a, char, m);
        for (int i = 0; i < m; i++) {
            int o = loop->for_.order[i];
            if (o < 0 || o >= m || seen[o])
                ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, loop->loc,
                           "T.Pipelined: order must list each of the %d statement positions 0..%d once", m, m - 1);
            seen[o] = 1;
            order[i] = o;
        }
    } else {
        /* the statements running ahead first, each group in program
         * order: a step's copies are issued right after its barrier and
         * overlap all of its compute (legal: they depend on nothing in the
         * step and fill the slot no statement of the step reads) */
        int pos = 0;
        for (int i = 0; i < m; i++)
            if (stage[i] < smax) order[i] = pos++;
        for (int i = 0; i < m; i++)
            if (stage[i] == smax) order[i] = pos++;
    }

    /* multi-buffer what runs ahead: one slot per stage in flight */
    IrExpr *kv = ir_var_ref(a, loop->for_.var);
    IrExpr *rel = ir_bin(a, IR_SUB, kv, loop->for_.min);
    for (int i = 0; i < m; i++) {
        if (!ahead[i] || stage[i] == smax) continue;
        IrBuffer *old = st[i]->op->r[1].buf;
        int dmin = 1 << 30, dmax = 0;
        for (int j = 0; j < m; j++) {
            bool rd = false, wr = false;
            if (j == i) continue;
            stmt_access(st[j], old, &rd, &wr);
            if (!rd) continue;
            int d = stage[j] - stage[i];
            if (d < dmin) dmin = d;
            if (d > dmax) dmax = d;
        }
        if (dmax < 0 || dmin < 0)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, st[i]->loc,
                       "T.Pipelined: '%s' is read in an earlier stage than this copy writes it", old->name);
        IrTileOp *op = TS_NEW(a, IrTileOp);
        *op = *st[i]->op;
        op->async = dmin >= 1 && dmin != 1 << 30;
        IrStmt *cp = ir_stmt(a, IR_S_TILEOP, st[i]->loc);
        cp->op = op;
        st[i] = cp;
        if (dmax == 0) continue;
        int v = dmax + 1;
        IrExpr **shape = TS_NEWN(a, IrExpr *, old->ndim + 1);
        shape[0] = ir_i32(a, v);
        for (int d = 0; d < old->ndim; d++) shape[d + 1] = old->shape[d];
        IrBuffer *nu = ir_buffer(k, old->name, old->dt, old->scope, old->ndim + 1, shape, old->loc);
        nu->swizzle = old->swizzle;
        nu->swizzle_annotated = old->swizzle_annotated;
        for (int b = 0; b < k->buffers.n; b++)
            if (k->buffers.v[b] == old) {
                memmove(&k->buffers.v[b], &k->buffers.v[b + 1], sizeof(IrBuffer *) * (size_t)(k->buffers.n - b - 1));
                k->buffers.n--;
                break;
            }
        Repl r = {old, nu, ir_bin(a, IR_FLOORMOD, rel, ir_i32(a, v))};
        ts_vec_push(a, p->repl, r);
    }
    IrStmt *nb = ir_seq(a);
    nb->loc = body->loc;
    for (int i = 0; i < m; i++) ir_seq_push(a, nb, rw_stmt(p, st[i]));
    loop->for_.body = nb;
    loop->for_.stage = stage;
    loop->for_.order = order;
    loop->for_.norder = m;
}

/* Plan every pipelined loop under s, innermost first; returns s or its
 * replacement. */
static IrStmt *plan_stmt(Planner *p, IrStmt *s) {
    if (!s) return NULL;
    TsArena *a = p->cx->arena;
    switch (s->kind) {
    case IR_S_SEQ: {
        IrStmt *r = NULL;
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *c = plan_stmt(p, s->seq.v[i]);
            if (c != s->seq.v[i] && !r) {
                r = ir_seq(a);
                r->loc = s->loc;
                for (int j = 0; j < i; j++) ir_seq_push(a, r, s->seq.v[j]);
            }
            if (r) ir_seq_push(a, r, c);
        }
        return r ? r : s;
    }
    case IR_S_FOR: {
        int div = s->for_.kind == IR_FOR_PARALLEL || s->for_.kind == IR_FOR_THREAD ||
                  s->for_.kind == IR_FOR_VECTORIZED || varies(s->for_.min) || varies(s->for_.extent);
        p->divergent += div;
        IrStmt *body = plan_stmt(p, s->for_.body);
        p->divergent -= div;
        if (body == s->for_.body && s->for_.kind != IR_FOR_PIPELINED) return s;
        IrStmt *r = ir_stmt(a, IR_S_FOR, s->loc);
        *r = *s;
        r->for_.body = body;
        if (r->for_.kind == IR_FOR_PIPELINED) plan_loop(p, r, s);
        return r;
    }
    case IR_S_IF: {
        int div = varies(s->if_.cond);
        p->divergent += div;
        IrStmt *t = plan_stmt(p, s->if_.then), *e = plan_stmt(p, s->if_.else_);
        p->divergent -= div;
        if (t == s->if_.then && e == s->if_.else_) return s;
        IrStmt *r = ir_stmt(a, IR_S_IF, s->loc);
        *r = *s;
        r->if_.then = t;
        r->if_.else_ = e;
        return r;
    }
    case IR_S_WHILE: {
        int div = varies(s->while_.cond);
        p->divergent += div;
        IrStmt *body = plan_stmt(p, s->while_.body);
        p->divergent -= div;
        if (body == s->while_.body) return s;
        IrStmt *r = ir_stmt(a, IR_S_WHILE, s->loc);
        *r = *s;
        r->while_.body = body;
        return r;
    }
    default: return s;
    }
}

void ts_pass_pipeline_planning(TsPassCtx *cx) {
    Planner p;
    memset(&p, 0, sizeof p);
    p.cx = cx;
    cx->k->body = plan_stmt(&p, cx->k->body);
    /* the allocs of multi-buffered buffers declare the new ones */
    if (p.repl.n) cx->k->body = rw_stmt(&p, cx->k->body);
}
