/*
 * widen_fragments.c — a fragment indexed by a T.Parallel nest's own loop
 * variables past its declared extent takes the loop's extent, with a
 * warning, as TileLang's layout inference makes it.
 *
 * In TileLang a fragment's storage is not its declared shape: layout
 * inference gives it a layout, and the lowering replaces the buffer by
 * each thread's registers of that layout.  Where a T.Parallel nest
 * accesses a fragment at exactly its loop variables, in order
 * (`for i in T.Parallel(64): f[i] = ...`: ParallelOp's "common access"),
 * the fragment takes the loop's layout itself, whose domain is the loop's
 * iteration space, whatever shape the fragment was declared with.  Its
 * elements 0..63 then each have a register and behave as those of a
 * fragment declared [64]: what f[i] stores, a later f[i] of the same
 * thread layout reads back.  TileLang's attention-sink backward examples
 * count on it: `sinks = T.alloc_fragment([heads])`, written
 * `sinks[i] = Sinks[by]` for every row i of T.Parallel(block_M) and read
 * `sinks[i]` per row, with heads < block_M.
 *
 * This pass computes the same thing on purpose: for each such access, a
 * dimension whose loop (constant bounds, from 0) runs past the declared
 * extent is widened to the loop's extent (the largest over the kernel's
 * accesses), and a warning at the first access that widened it says so
 * (file:line:col, the source line).  Everything else still meets
 * check_bounds, which runs right after on the widened shapes: an index
 * that is not the bare loop variable (i + 1, 2 * i), a serial loop, a
 * shared or local buffer, a fragment that is a view or the base of one,
 * or a dimension the nest does not index, is refused as before.
 *
 * Runs after simplify and lower_tmem, right before check_bounds, on every
 * target (the C target allocates the widened array, as CUDA's layout
 * inference lays out the widened tile).
 */
#include <string.h>

#include "ir/walk.h"
#include "pass/pass.h"

/* Per fragment that some access widens: the widest extent per dimension
 * and where that was first needed. */
typedef struct Widen {
    IrBuffer *b;
    int64_t *ext;      /* ndim extents: max(declared, loops') */
    TsLoc at;          /* the first access that needed more than declared */
    const char *vars;  /* its loop variables there, "i, j" (for the message) */
    const char *over;  /* their extents there, "64, 32" */
} Widen;

typedef struct WfState {
    TsPassCtx *cx;
    TS_VEC(Widen) w;
    TS_VEC(TsLoc) locs; /* per expression being visited: its position */
} WfState;

static Widen *widen_of(WfState *st, const IrBuffer *b) {
    for (int i = 0; i < st->w.n; i++)
        if (st->w.v[i].b == b) return &st->w.v[i];
    return NULL;
}

/* The enclosing T.Parallel loops of the statement being visited, outermost
 * first, into out[] (at most max); their number, or -1 if more than max. */
static int parallel_nest(const IrVisitor *v, const IrStmt **out, int max) {
    int n = 0;
    for (const IrWalkFrame *f = v->frame; f; f = f->up)
        if (f->s->kind == IR_S_FOR && f->s->for_.kind == IR_FOR_PARALLEL) {
            if (n == max) return -1;
            out[n++] = f->s;
        }
    for (int i = 0; i < n / 2; i++) {
        const IrStmt *t = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = t;
    }
    return n;
}

static void wf_access(IrVisitor *v, const IrAccess *acc) {
    WfState *st = v->ctx;
    const IrBuffer *b = acc->buf;
    if (b->scope != IR_SCOPE_FRAGMENT || b->base || !acc->idx || acc->region || acc->lanes != 1 || acc->nidx != b->ndim ||
        b->ndim <= 0 || b->ndim > 8)
        return;
    const IrStmt *nest[8];
    int n = parallel_nest(v, nest, 8);
    if (n != b->ndim) return; /* TileLang's common access: the indices are the nest's variables */
    int64_t ext[8], lext[8];
    int grow = -1;
    for (int d = 0; d < n; d++) {
        const IrExpr *x = acc->idx[d];
        int64_t mn, le, decl;
        if (x->kind != IR_E_VAR || x->var != nest[d]->for_.var) return;
        if (!ir_is_const_int(nest[d]->for_.min, &mn) || mn != 0 || !ir_is_const_int(nest[d]->for_.extent, &le) ||
            !ir_is_const_int(b->shape[d], &decl))
            return;
        lext[d] = le;
        ext[d] = le > decl ? le : decl;
        if (le > decl && grow < 0) grow = d;
    }
    if (grow < 0) return;
    Widen *w = widen_of(st, b);
    if (!w) {
        Widen nw = {(IrBuffer *)b, TS_NEWN(st->cx->arena, int64_t, n), {0}, NULL, NULL};
        TsBuf vb = {0}, ob = {0};
        for (int d = 0; d < n; d++) {
            ts_buf_printf(&vb, "%s%s", d ? ", " : "", nest[d]->for_.var->name);
            ts_buf_printf(&ob, "%s%lld", d ? ", " : "", (long long)lext[d]);
        }
        nw.vars = ts_sprintf(st->cx->arena, "%s", ts_buf_str(&vb));
        nw.over = ts_sprintf(st->cx->arena, "%s", ts_buf_str(&ob));
        ts_buf_free(&vb);
        ts_buf_free(&ob);
        /* a load's position is on top of locs (pushed by pre_expr); a store's is its statement's */
        nw.at = acc->e && st->locs.n ? st->locs.v[st->locs.n - 1] : v->frame->s->loc;
        for (int d = 0; d < n; d++) ir_is_const_int(b->shape[d], &nw.ext[d]);
        ts_vec_push(st->cx->arena, st->w, nw);
        w = &st->w.v[st->w.n - 1];
    }
    for (int d = 0; d < n; d++)
        if (ext[d] > w->ext[d]) w->ext[d] = ext[d];
}

/* Positions, as check_bounds keeps them: an expression's own where it has
 * one, else its parent's (the statement's at the top). */
static bool wf_pre_expr(IrVisitor *v, const IrExpr *e) {
    WfState *st = v->ctx;
    TsLoc up = st->locs.n ? st->locs.v[st->locs.n - 1] : v->frame->s->loc;
    ts_vec_push(st->cx->arena, st->locs, e->loc.src ? e->loc : up);
    return true;
}

static void wf_post_expr(IrVisitor *v, const IrExpr *e) {
    (void)e;
    WfState *st = v->ctx;
    st->locs.n--;
}

static const char *shape_str(TsArena *a, const int64_t *ext, IrExpr **shape, int n) {
    TsBuf sb = {0};
    for (int d = 0; d < n; d++) {
        int64_t e = 0;
        if (ext) e = ext[d];
        else ir_is_const_int(shape[d], &e);
        ts_buf_printf(&sb, "%s%lld", d ? ", " : "", (long long)e);
    }
    const char *s = ts_sprintf(a, "%s", ts_buf_str(&sb));
    ts_buf_free(&sb);
    return s;
}

void ts_pass_widen_fragments(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    WfState st;
    memset(&st, 0, sizeof st);
    st.cx = cx;
    IrVisitor v = {.ctx = &st, .access = wf_access, .pre_expr = wf_pre_expr, .post_expr = wf_post_expr};
    ir_visit_stmt(&v, k->body);
    for (int i = 0; i < st.w.n; i++) {
        Widen *w = &st.w.v[i];
        IrBuffer *b = w->b;
        bool viewed = false; /* a view's element count is its base's: leave both to check_bounds */
        for (int j = 0; j < k->buffers.n; j++)
            if (k->buffers.v[j]->base == b) viewed = true;
        if (viewed) continue;
        const char *was = shape_str(cx->arena, NULL, b->shape, b->ndim);
        const char *now = shape_str(cx->arena, w->ext, NULL, b->ndim);
        IrExpr **shape = TS_NEWN(cx->arena, IrExpr *, b->ndim);
        for (int d = 0; d < b->ndim; d++) shape[d] = ir_int(cx->arena, w->ext[d], b->shape[d]->dt);
        b->shape = shape;
        ts_warn_at(cx->diag, w->at,
                   "fragment '%s' is declared [%s] (line %d), but this T.Parallel nest indexes it at its loop "
                   "variable%s (%s) over [%s]: it is widened to [%s], as TileLang's layout inference gives it "
                   "the loop's layout",
                   b->name, was, b->loc.line, b->ndim > 1 ? "s" : "", w->vars, w->over, now);
    }
}
