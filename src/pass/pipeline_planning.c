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

#include "ir/walk.h"
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
    bool divergent;    /* the loop being planned is under thread-dependent control flow
                          (no pipeline there: its barriers need every thread) */
} Planner;

/* May e differ between the threads of a block (a thread index, a load of
 * a per-thread buffer)?  Conservative enough for loop and branch guards. */
static bool varying_node(const IrExpr *e, void *ctx) {
    (void)ctx;
    if (e->kind == IR_E_VAR) return e->var->kind == IR_VAR_THREAD_IDX;
    return e->kind == IR_E_LOAD && (e->load.buf->scope == IR_SCOPE_LOCAL || e->load.buf->scope == IR_SCOPE_VAR ||
                                    e->load.buf->scope == IR_SCOPE_FRAGMENT);
}

static bool varies(const IrExpr *e) { return e && ir_expr_any(e, varying_node, NULL); }

/* ---- who touches what (the shared walker's accesses) ------------------------- */

/* What s does to b: *rd set if it reads it, *wr if it writes it. */
static void stmt_access(const IrStmt *s, const IrBuffer *b, bool *rd, bool *wr) {
    int rw = ir_stmt_access_rw(s, b, 0);
    *rd |= (rw & IR_ACC_READ) != 0;
    *wr |= (rw & IR_ACC_WRITE) != 0;
}

/* Does s (outside `skip`) touch b? */
typedef struct Outside {
    const IrStmt *skip;  /* the subtree not looked at */
    const IrBuffer *buf; /* the buffer looked for */
    bool found;          /* an access to it was seen */
} Outside;

static bool outside_pre(IrVisitor *v, const IrStmt *s) { return s != ((Outside *)v->ctx)->skip; }

static void outside_access(IrVisitor *v, const IrAccess *acc) {
    Outside *o = v->ctx;
    if (acc->buf == o->buf) o->found = v->stop = true;
}

static bool touches_outside(const IrStmt *s, const IrStmt *skip, const IrBuffer *b) {
    Outside o = {skip, b, false};
    IrVisitor v = {.ctx = &o, .pre_stmt = outside_pre, .access = outside_access};
    ir_visit_stmt(&v, s);
    return o.found;
}

/* Does s declare b (an IR_S_ALLOC anywhere inside)? */
static bool alloc_of(const IrStmt *s, void *b) { return s->kind == IR_S_ALLOC && s->alloc.buf == b; }

static bool allocates(const IrStmt *s, const IrBuffer *b) { return ir_stmt_any(s, alloc_of, (void *)b); }

typedef struct FreeCheck {
    const char *bound;          /* vars bound inside the loop body */
    int nid;                    /* size of bound */
    const IrStmt *body;         /* the loop body (loads of what it writes are refused) */
} FreeCheck;

/* Mark in `bound` (by var id) the vars that s binds (loops, lets). */
static bool bind_mark(IrVisitor *v, const IrStmt *s) {
    FreeCheck *fc = v->ctx;
    const IrVar *x = s->kind == IR_S_FOR ? s->for_.var : s->kind == IR_S_LET ? s->let.var : NULL;
    if (x && x->id >= 0 && x->id < fc->nid) ((char *)fc->bound)[x->id] = 1;
    return true;
}

static void mark_bound(const IrStmt *s, FreeCheck *fc) {
    IrVisitor v = {.ctx = fc, .pre_stmt = bind_mark};
    ir_visit_stmt(&v, s);
}

/* Does e use a var bound inside the loop, or load memory the loop writes? */
static bool loop_state_node(const IrExpr *e, void *ctx) {
    const FreeCheck *fc = ctx;
    if (e->kind == IR_E_VAR) return e->var->id >= 0 && e->var->id < fc->nid && fc->bound[e->var->id];
    return e->kind == IR_E_LOAD && (ir_stmt_access_rw(fc->body, e->load.buf, 0) & IR_ACC_WRITE);
}

static bool uses_loop_state(const IrExpr *e, const FreeCheck *fc) {
    return e && ir_expr_any(e, loop_state_node, (void *)fc);
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
    /* a view or a viewed buffer: accesses under the other name are not seen here, and
     * multi-buffering would not follow them (resolve_views runs later) */
    if (ir_buffer_has_view(k, src->buf) || ir_buffer_has_view(k, dst->buf)) return false;
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

/* A copy of s with every replaced buffer's accesses rewritten (the slot
 * index first; allocs of replaced buffers declare the new one): the
 * shared rewriter, deep-copying (the loops planned are edited in place). */
static IrExpr **with_slot(TsArena *a, const Repl *r, IrExpr **idx, int n, int *nout) {
    IrExpr **v = TS_NEWN(a, IrExpr *, n + 1);
    v[0] = r->slot;
    for (int i = 0; i < n; i++) v[i + 1] = idx[i];
    *nout = n + 1;
    return v;
}

static IrExpr *rw_post_expr(IrMutator *m, IrExpr *e) {
    Planner *p = m->ctx;
    const Repl *rp = e->kind == IR_E_LOAD ? find_repl(p, e->load.buf) : NULL;
    if (!rp) return e;
    int n;
    IrExpr **idx = with_slot(m->arena, rp, e->load.idx, e->load.nidx, &n);
    IrExpr *r = ir_load(m->arena, rp->nu, idx, n);
    r->loc = e->loc;
    r->dt = e->dt;
    r->load.bits = e->load.bits;
    return r;
}

static IrStmt *rw_post_stmt(IrMutator *m, IrStmt *s) {
    Planner *p = m->ctx;
    TsArena *a = m->arena;
    const Repl *rp, *rs;
    switch (s->kind) { /* s is a fresh copy (m->copy) */
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if ((rp = find_repl(p, s->store.buf))) {
            s->store.buf = rp->nu;
            s->store.idx = with_slot(a, rp, s->store.idx, s->store.nidx, &s->store.nidx);
        }
        return s;
    case IR_S_ALLOC:
        if ((rp = find_repl(p, s->alloc.buf))) s->alloc.buf = rp->nu;
        return s;
    case IR_S_TILEOP:
        for (int i = 0; i < s->op->nr; i++) {
            IrRegion *g = &s->op->r[i];
            if (!(rp = find_repl(p, g->buf))) continue;
            int n;
            IrExpr **ext = TS_NEWN(a, IrExpr *, g->ndim + 1);
            ext[0] = ir_i32(a, 1);
            for (int d = 0; d < g->ndim; d++) ext[d + 1] = g->extent[d];
            g->buf = rp->nu;
            g->start = with_slot(a, rp, g->start, g->ndim, &n);
            g->extent = ext;
            g->ndim = n;
        }
        return s;
    case IR_S_VCOPY:
        if ((rp = find_repl(p, s->vcopy.dst))) {
            s->vcopy.dst = rp->nu;
            s->vcopy.didx = with_slot(a, rp, s->vcopy.didx, s->vcopy.ndi, &s->vcopy.ndi);
        }
        if ((rs = find_repl(p, s->vcopy.src))) {
            s->vcopy.src = rs->nu;
            s->vcopy.sidx = with_slot(a, rs, s->vcopy.sidx, s->vcopy.nsi, &s->vcopy.nsi);
        }
        return s;
    default: return s;
    }
}

static IrStmt *rw_stmt(Planner *p, IrStmt *s) {
    IrMutator m = {.arena = p->cx->arena, .ctx = p, .post_expr = rw_post_expr, .post_stmt = rw_post_stmt, .copy = true};
    return ir_mutate_stmt(&m, s);
}

/* ---- planning one loop ---------------------------------------------------------------- */

static void drop_plan(IrStmt *loop) {
    loop->for_.order = loop->for_.stage = NULL;
    loop->for_.norder = 0;
}

/* Plan the pipelined loop `loop` (owned: a copy made by plan_post of
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
    fc.bound = TS_NEWN(a, char, k->next_id > 0 ? k->next_id : 1);
    fc.nid = k->next_id;
    fc.body = body;
    mark_bound(body, &fc);
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

/* Is the statement of frame f under thread-dependent control flow (an
 * enclosing parallel, thread or vectorized loop, or a loop, branch or
 * while whose header differs between threads)?  No pipeline there: its
 * barriers need every thread. */
static bool divergent(const IrWalkFrame *f) {
    for (const IrWalkFrame *u = f ? f->up : NULL; u; u = u->up) {
        const IrStmt *s = u->s;
        if (s->kind == IR_S_FOR &&
            (s->for_.kind == IR_FOR_PARALLEL || s->for_.kind == IR_FOR_THREAD || s->for_.kind == IR_FOR_VECTORIZED ||
             varies(s->for_.min) || varies(s->for_.extent)))
            return true;
        if (s->kind == IR_S_IF && varies(s->if_.cond)) return true;
        if (s->kind == IR_S_WHILE && varies(s->while_.cond)) return true;
    }
    return false;
}

/* Every pipelined loop, innermost first (the shared rewriter, bottom-up):
 * planned on a copy of the loop as its body came back. */
static IrStmt *plan_post(IrMutator *m, IrStmt *s) {
    Planner *p = m->ctx;
    if (s->kind != IR_S_FOR || s->for_.kind != IR_FOR_PIPELINED) return s;
    IrStmt *r = ir_stmt(m->arena, IR_S_FOR, s->loc);
    *r = *s;
    p->divergent = divergent(m->frame);
    plan_loop(p, r, m->frame->s);
    return r;
}

void ts_pass_pipeline_planning(TsPassCtx *cx) {
    Planner p;
    memset(&p, 0, sizeof p);
    p.cx = cx;
    IrMutator m = {.arena = cx->arena, .ctx = &p, .post_stmt = plan_post};
    cx->k->body = ir_mutate_stmt(&m, cx->k->body);
    /* the allocs of multi-buffered buffers declare the new ones */
    if (p.repl.n) cx->k->body = rw_stmt(&p, cx->k->body);
}
