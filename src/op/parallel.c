/*
 * parallel.c — the T.Parallel pseudo-op of layout inference (parallel.h):
 * what a nest of parallel loops says about the layouts of the fragments it
 * touches, and the nest analysis behind it.
 *
 * A nest's iterations are spread over the block's threads by the layout of
 * one fragment it indexes by its variables (its "driver", chosen when the
 * pass rewrites it): every other fragment indexed the same way must then
 * have that layout too, or its elements would sit on other threads than
 * the iterations that read them; a fragment indexed by the row variable
 * alone is read by every thread holding part of its row, so it takes the
 * row projection.  Those are the COMMON rules, for fragments without a
 * layout; one that another use gave a different layout keeps it, and the
 * pass's rewriting reaches it through a shared copy (a re-layout) or
 * stops, naming both uses.  A nest none of whose
 * fragments has a layout decides only at the FREE level, from its thread
 * binding: rows over warps (16-byte vectors per thread where allowed), or
 * cyclic.  Kept apart from the pass so that the nest offers infer_layout
 * the way the tile ops do (TileLang's ParallelOp plays the same part).
 */
#include "op/parallel.h"

#include "ir/layout.h"
#include "ir/walk.h"

/* ---- nests --------------------------------------------------------------------- */

/* s is a chain of perfectly nested T.Parallel loops from 0 with constant
 * extents (a SEQ of one statement counts as that statement). */
bool ts_nest_get(const IrStmt *s, TsNest *ns) {
    ns->n = 0;
    while (s && s->kind == IR_S_SEQ && s->seq.n == 1) s = s->seq.v[0];
    if (!s || s->kind != IR_S_FOR || s->for_.kind != IR_FOR_PARALLEL) return false;
    for (;;) {
        int64_t lo, e;
        if (ns->n == TS_NEST_MAX || !ir_is_const_int(s->for_.min, &lo) || lo != 0 ||
            !ir_is_const_int(s->for_.extent, &e) || e <= 0)
            return false;
        ns->v[ns->n] = s->for_.var;
        ns->ext[ns->n++] = e;
        IrStmt *b = s->for_.body;
        while (b && b->kind == IR_S_SEQ && b->seq.n == 1) b = b->seq.v[0];
        if (b && b->kind == IR_S_FOR && b->for_.kind == IR_FOR_PARALLEL) {
            s = b;
            continue;
        }
        ns->body = s->for_.body;
        return true;
    }
}


/* The fragment accesses of a nest, on the shared visitor (ir/walk.h): its
 * loads and stores in walk order (a store before its indices and value,
 * a load before its indices). */
typedef struct FragWalk {
    TsLayoutCtx *lx;    /* which buffers are fragments */
    TsFragAccVec *out;  /* the accesses found */
    int *writes_mem;    /* set on a store to shared or global memory (NULL: not asked) */
} FragWalk;

static bool frag_pre(IrVisitor *v, const IrStmt *s) {
    FragWalk *w = v->ctx;
    if (s->kind == IR_S_TILEOP) { /* its regions are not element accesses: stop or count a write */
        for (int r = 0; s->op && r < s->op->nr; r++)
            if (ts_layout_frag(w->lx, s->op->r[r].buf) >= 0)
                ts_layout_give_up(w->lx, "a tile op inside a T.Parallel loop uses a fragment");
        if (w->writes_mem) *w->writes_mem = 1;
        return false;
    }
    if (s->kind == IR_S_PRINT) {
        if (s->print.buf && ts_layout_frag(w->lx, s->print.buf) >= 0)
            ts_layout_give_up(w->lx, "T.print of fragment %s", s->print.buf->name);
        if (w->writes_mem) *w->writes_mem = 1;
    }
    return true;
}

static void frag_access(IrVisitor *v, const IrAccess *acc) {
    FragWalk *w = v->ctx;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    bool store = !acc->e && s && (s->kind == IR_S_STORE || s->kind == IR_S_ATOMIC_ADD);
    if (!acc->e && !store) return; /* a printed buffer (above); no vector copies or mbarriers in a nest */
    if (ts_layout_frag(w->lx, acc->buf) >= 0) {
        TsFragAcc x = {(IrBuffer *)acc->buf, acc->idx, acc->nidx};
        ts_vec_push(w->lx->arena, *w->out, x);
    } else if (store && acc->buf->scope != IR_SCOPE_LOCAL && acc->buf->scope != IR_SCOPE_VAR && w->writes_mem) {
        *w->writes_mem = 1;
    }
}

void ts_nest_frag_expr(TsLayoutCtx *lx, const IrExpr *e, TsFragAccVec *out) {
    FragWalk w = {lx, out, NULL};
    IrVisitor v = {.ctx = &w, .access = frag_access};
    ir_visit_expr(&v, e);
}

/* writes_mem: a store to a non-fragment, non-private buffer */
void ts_nest_frag_stmt(TsLayoutCtx *lx, const IrStmt *s, TsFragAccVec *out, int *writes_mem) {
    FragWalk w = {lx, out, writes_mem};
    IrVisitor v = {.ctx = &w, .pre_stmt = frag_pre, .access = frag_access};
    ir_visit_stmt(&v, s);
}

/* Indexed exactly by the nest's variables, in order, over its extents. */
bool ts_nest_full_access(const TsFragAcc *x, const TsNest *ns) {
    if (x->nidx != ns->n || x->buf->ndim != ns->n) return false;
    for (int d = 0; d < ns->n; d++) {
        int64_t e;
        if (x->idx[d]->kind != IR_E_VAR || x->idx[d]->var != ns->v[d]) return false;
        if (!ir_is_const_int(x->buf->shape[d], &e) || e != ns->ext[d]) return false;
    }
    return true;
}

/* Indexed by the first nest variable alone (a row of a 2-D nest). */
bool ts_nest_row_access(const TsFragAcc *x, const TsNest *ns) {
    int64_t e;
    return ns->n == 2 && x->nidx == 1 && x->buf->ndim == 1 && x->idx[0]->kind == IR_E_VAR &&
           x->idx[0]->var == ns->v[0] && ir_is_const_int(x->buf->shape[0], &e) && e == ns->ext[0];
}

/* ---- infer_layout ------------------------------------------------------------ */

void ts_parallel_infer_layout(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level) {
    if (level == TS_LAYOUT_STRICT) return; /* no instruction here */
    bool final = level == TS_LAYOUT_FREE;
    TsNest ns;
    if (!ts_nest_get(s, &ns)) return;
    TsFragAccVec acc = {0};
    int wm = 0;
    ts_nest_frag_stmt(lx, ns.body, &acc, &wm);
    if (!acc.n) return;
    IrLayout *full = NULL;
    for (int i = 0; i < acc.n; i++) {
        int f = ts_layout_frag(lx, acc.v[i].buf);
        if (ts_nest_full_access(&acc.v[i], &ns) && lx->lay[f] && (!full || full->replicate > lx->lay[f]->replicate))
            full = lx->lay[f];
    }
    if (!full && final) {
        /* no instruction fixed anything here: the first fully indexed
         * fragment takes the cyclic layout */
        for (int i = 0; i < acc.n && !full; i++)
            if (ts_nest_full_access(&acc.v[i], &ns)) {
                int f = ts_layout_frag(lx, acc.v[i].buf);
                int64_t shape[TS_NEST_MAX];
                for (int d = 0; d < ns.n; d++) shape[d] = ns.ext[d];
                /* rows over warps where they fit (row reductions stay in a warp), with
                 * 16-byte vectors per thread where no nest over fragments touches
                 * shared memory (a thread's v consecutive words would be a v-way bank
                 * conflict for a warp's scalar shared accesses), else cyclic */
                IrLayout *l = NULL;
                for (int v = lx->vec; ns.n == 2 && v >= 1 && !l; v /= 2)
                    l = ir_layout_warp_rows_vec(lx->k, shape[0], shape[1], lx->nt / 32, v);
                if (!l) l = ir_layout_cyclic(lx->k, ns.n, shape, lx->nt);
                ts_layout_set(lx, f, l, "a T.Parallel loop");
                full = lx->lay[f];
            }
    }
    if (!full) return;
    for (int i = 0; i < acc.n; i++) {
        int f = ts_layout_frag(lx, acc.v[i].buf);
        /* a fragment whose layout another use fixed keeps it: where it differs
         * from the loop's, layout_inference's rewriting of the loop reaches it
         * through a shared copy (a re-layout) or stops, naming both uses */
        if (lx->lay[f]) continue;
        if (ts_nest_full_access(&acc.v[i], &ns)) {
            ts_layout_set(lx, f, full, "a T.Parallel loop");
        } else if (ts_nest_row_access(&acc.v[i], &ns) && full->kind == IR_LAYOUT_MMA_C) {
            ts_layout_set(lx, f, ir_layout_mma_rows(lx->k, full->p[0], full->p[1], (int)full->p[2], (int)full->p[3]),
                       "a row of a T.Parallel loop");
        } else if (ts_nest_row_access(&acc.v[i], &ns) && full->kind == IR_LAYOUT_WARP_ROWS) {
            ts_layout_set(lx, f,
                       ir_layout_warp_rows_vec_proj(lx->k, full->p[0], full->p[1], (int)full->p[2], (int)full->p[3]),
                       "a row of a T.Parallel loop");
        }
    }
}
