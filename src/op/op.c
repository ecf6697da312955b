/*
 * op.c — what all tile operators share: the dispatch of
 * the generic lowering, of the regions read and written, of infer_layout
 * and of the lowering by layout, generated from the TS_TILEOP_LOWERINGS,
 * TS_TILEOP_REGIONS, TS_TILEOP_LAYOUTS and TS_TILEOP_LAYOUT_LOWERINGS
 * tables in op.h
 * so that adding an op means one table line and one file; and the layout
 * table the infer_layout functions read and write (TsLayoutCtx), with its
 * one rule: a fragment has one layout, and a second, different one is a
 * conflict reported with both uses.
 *
 * The op files themselves (copy.c, fill.c, gemm.c, reduce.c, cumsum.c,
 * atomic.c) use the small helpers declared in op_util.h, which live here:
 * region arithmetic (dropping unit dims, element indices of a region),
 * fresh loop variables, and out-of-bounds guards for global buffers.
 */
#include "op/op.h"

#include "op/op_util.h"
#include "ir/layout.h"

#include <stdarg.h>

IrStmt *ts_op_lower(TsLowerCtx *cx, const IrStmt *s) {
    if (!s || s->kind != IR_S_TILEOP || !s->op)
        ts_internal(cx->diag, "ts_op_lower: not a tile operator statement");
    const IrTileOp *o = s->op;
    if ((o->kind == TS_OP_REDUCE || o->kind == TS_OP_CUMSUM) && cx->target == TS_TARGET_CUDA && cx->caps->layout &&
        o->nr >= 2 &&
        o->r[0].buf->scope == IR_SCOPE_FRAGMENT && o->r[1].buf->scope == IR_SCOPE_FRAGMENT &&
        !o->r[0].buf->base && !o->r[1].buf->base) { /* (over a view: the generic loops, resolve_views) */
        IrStmt *r = ir_stmt(cx->arena, IR_S_TILEOP, s->loc);
        IrTileOp *kept = TS_NEW(cx->arena, IrTileOp);
        *kept = *o;
        kept->inst = TS_OP_INST_FRAGMENT;
        r->op = kept;
        return r;
    }
    switch (s->op->kind) {
#define X(e, f) case e: return f(cx, s);
        TS_TILEOP_LOWERINGS(X)
#undef X
    case TS_OP_COUNT: break;
    }
    ts_internal(cx->diag, "ts_op_lower: unknown tile operator kind %d", (int)s->op->kind);
}

/* The IR's question (ir/walk.h), answered by the op of that kind. */
int ir_tileop_region_rw(const IrTileOp *op, int i) {
    switch (op->kind) {
#define X(e, f) case e: return f(op, i);
        TS_TILEOP_REGIONS(X)
#undef X
    default: return IR_ACC_READ | IR_ACC_WRITE; /* not listed (or unknown): assume the worst */
    }
}

TsInferLayoutFn ts_op_infer_layout_fn(TsOpKind k) {
    switch (k) {
#define X(e, f) case e: return f;
        TS_TILEOP_LAYOUTS(X)
#undef X
    default: return NULL;
    }
}

TsLowerLayoutFn ts_op_lower_layout_fn(TsOpKind k) {
    switch (k) {
#define X(e, f) case e: return f;
        TS_TILEOP_LAYOUT_LOWERINGS(X)
#undef X
    default: return NULL;
    }
}

void ts_layout_on_success(TsLayoutLower *ll, TsLayoutFinishFn fn, IrBuffer *b) {
    for (int i = 0; i < *ll->nfin; i++)
        if (ll->fin[i].fn == fn && ll->fin[i].buf == b) return;
    if (*ll->nfin < TS_LAYOUT_MAXFINISH) ll->fin[(*ll->nfin)++] = (TsLayoutFinish){fn, b};
}

IrStmt *ts_layout_thread_loops(const TsLayoutCtx *lx, IrVar *t, IrVar *const *dv, const int64_t *ext, int n,
                               IrStmt *body, TsLoc loc) {
    TsArena *a = lx->arena;
    for (int q = n - 1; q >= 0; q--) {
        body = ir_for(a, dv[q], ir_i32(a, 0), ir_i32(a, ext[q]), IR_FOR_UNROLL, body);
        body->loc = loc;
    }
    if (lx->lo) { /* a role's threads: the body's t is the index within the role */
        IrVar *ft = ir_var(lx->k, t->name, t->dt, IR_VAR_LOOP);
        IrVar *from[1] = {t};
        IrExpr *to[1] = {ir_bin(a, IR_SUB, ir_var_ref(a, ft), ir_i32(a, lx->lo))};
        body = ir_stmt_subst(a, body, from, to, 1);
        t = ft;
    }
    IrStmt *r = ir_for(a, t, ir_i32(a, lx->lo), ir_i32(a, lx->nt), IR_FOR_THREAD, body);
    r->loc = loc;
    return r;
}

/* ---- the layout table of layout inference (TsLayoutCtx) ------------------- */

int ts_layout_frag(const TsLayoutCtx *lx, const IrBuffer *b) {
    for (int i = 0; i < lx->nfrag; i++)
        if (lx->frag[i] == b) return i;
    return -1;
}

void ts_layout_give_up(TsLayoutCtx *lx, const char *fmt, ...) {
    if (lx->why) return;
    va_list ap;
    va_start(ap, fmt);
    TsBuf tmp = {0}; /* no fixed buffer: the reason names buffers of any length */
    ts_buf_vprintf(&tmp, fmt, ap);
    va_end(ap);
    lx->why = ts_strdup(lx->arena, tmp.oom ? "out of memory" : ts_buf_str(&tmp));
    ts_buf_free(&tmp);
}

void ts_layout_conflict(TsLayoutCtx *lx, TsLoc at, const char *fmt, ...) {
    if (lx->why) return;
    va_list ap;
    va_start(ap, fmt);
    TsBuf tmp = {0};
    ts_buf_vprintf(&tmp, fmt, ap);
    va_end(ap);
    lx->why = ts_strdup(lx->arena, tmp.oom ? "out of memory" : ts_buf_str(&tmp));
    ts_buf_free(&tmp);
    lx->conflict = true;
    lx->conflict_at = at;
}

void ts_layout_put_at(TsBuf *b, TsLoc loc) {
    if (loc.src && loc.line > 0)
        ts_buf_printf(b, " (at %s:%d:%d)", loc.src->name ? loc.src->name : "<input>", loc.line, loc.col);
}

void ts_layout_put_use(TsBuf *b, const TsLayoutCtx *lx, int f) {
    if (f < 0 || !lx->lay[f]) {
        ts_buf_puts(b, "no layout");
        return;
    }
    ir_layout_describe(b, lx->lay[f]);
    ts_buf_printf(b, " for %s", lx->use[f] ? lx->use[f] : "?");
    ts_layout_put_at(b, lx->at[f]);
}

void ts_layout_set(TsLayoutCtx *lx, int f, IrLayout *l, const char *use) {
    TsLoc here = lx->cur ? lx->cur->loc : (TsLoc){0};
    if (!l) {
        ts_layout_give_up(lx, "no layout fits %s for %s", lx->frag[f]->name, use);
        return;
    }
    if (lx->lay[f]) {
        if (!ir_layout_equal(lx->lay[f], l)) {
            /* the conflict, with both uses: which layout each wants, for what, where */
            TsBuf b = {0};
            ts_buf_printf(&b, "fragment %s needs two layouts: ", lx->frag[f]->name);
            ts_layout_put_use(&b, lx, f);
            ts_buf_puts(&b, " and ");
            ir_layout_describe(&b, l);
            ts_buf_printf(&b, " for %s", use);
            ts_layout_put_at(&b, here);
            ts_layout_conflict(lx, here, "%s", b.oom ? "out of memory" : ts_buf_str(&b));
            ts_buf_free(&b);
        }
        return;
    }
    lx->lay[f] = l;
    lx->use[f] = use;
    lx->at[f] = here;
    if (lx->nnew < TS_LAYOUT_MAXFRAG) lx->newf[lx->nnew++] = f; /* (each fragment is set once) */
}

/* ---- helpers for the op files (op_util.h) --------------------------------- */

int64_t op_region_extent(TsLowerCtx *cx, const IrStmt *s, const char *opname,
                         const IrRegion *r, int axis) {
    int64_t e;
    if (!ir_is_const_int(r->extent[axis], &e)) {
        TsBuf t = {0};
        ir_print_expr(&t, r->extent[axis]);
        const char *txt = ts_strdup(cx->arena, ts_buf_str(&t));
        ts_buf_free(&t);
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "%s: the extent of %s along axis %d (%s) must be a compile-time constant",
                   opname, r->buf->name, axis, txt);
    }
    if (e < 0)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc, "%s: negative extent %lld for %s", opname,
                   (long long)e, r->buf->name);
    return e;
}

int op_region_shape(TsLowerCtx *cx, const IrStmt *s, const char *opname,
                    const IrRegion *r, int *dims, int64_t *ext) {
    int n = 0;
    for (int d = 0; d < r->ndim; d++) {
        int64_t e = op_region_extent(cx, s, opname, r, d);
        if (e == 1) continue;
        if (n == OP_MAXDIM)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "%s: regions with more than %d dims are not supported", opname, OP_MAXDIM);
        dims[n] = d;
        ext[n++] = e;
    }
    return n;
}

bool op_region_whole(const IrRegion *r) {
    for (int d = 0; d < r->ndim; d++) {
        int64_t s, e, x;
        if (!ir_is_const_int(r->start[d], &s) || s != 0 || !ir_is_const_int(r->extent[d], &e) ||
            !ir_is_const_int(r->buf->shape[d], &x) || e != x)
            return false;
    }
    return true;
}

const char *op_region_text(TsArena *a, const IrRegion *r) {
    TsBuf t = {0};
    for (int d = 0; d < r->ndim; d++) {
        if (d) ts_buf_puts(&t, "x");
        ir_print_expr(&t, r->extent[d]);
    }
    if (r->ndim == 0) ts_buf_puts(&t, "scalar");
    const char *res = ts_strdup(a, ts_buf_str(&t));
    ts_buf_free(&t);
    return res;
}

IrExpr **op_region_index(TsArena *a, const IrRegion *r, const int *dims, IrExpr **off, int n) {
    IrExpr **idx = TS_NEWN(a, IrExpr *, r->ndim > 0 ? r->ndim : 1);
    for (int d = 0; d < r->ndim; d++) idx[d] = r->start[d];
    for (int j = 0; j < n; j++)
        if (off[j]) idx[dims[j]] = ir_bin(a, IR_ADD, r->start[dims[j]], off[j]);
    return idx;
}

IrExpr *op_in_bounds(TsArena *a, const IrBuffer *b, IrExpr **idx) {
    if (b->scope != IR_SCOPE_GLOBAL) return NULL;
    IrExpr *cond = NULL;
    for (int d = 0; d < b->ndim; d++) {
        IrExpr *c = ir_bin(a, IR_LT, idx[d], b->shape[d]);
        cond = cond ? ir_bin(a, IR_AND, cond, c) : c;
    }
    int64_t v;
    if (!cond || (ir_is_const_int(cond, &v) && v)) return NULL;
    return cond;
}

IrStmt *op_if(TsArena *a, TsLoc loc, IrExpr *cond, IrStmt *then, IrStmt *else_) {
    if (!cond) return then;
    IrStmt *s = ir_stmt(a, IR_S_IF, loc);
    s->if_.cond = cond;
    s->if_.then = then;
    s->if_.else_ = else_;
    return s;
}

IrVar *op_loop_var(TsLowerCtx *cx, const char *name) {
    return ir_var(cx->k, name, TS_INT32, IR_VAR_LOOP);
}

void op_loop_vars(TsLowerCtx *cx, IrVar **v, int n, char first_name) {
    for (int j = 0; j < n; j++) {
        char name[2] = {(char)(first_name + j), 0};
        v[j] = op_loop_var(cx, name);
    }
}

IrStmt *op_loops(TsArena *a, TsLoc loc, IrVar **v, const int64_t *ext, int n, IrForKind kind,
                 IrStmt *body) {
    for (int j = n - 1; j >= 0; j--) {
        body = ir_for(a, v[j], ir_i32(a, 0), ir_i32(a, ext[j]), kind, body);
        body->loc = loc;
    }
    return body;
}

void op_var_refs(TsArena *a, IrVar **v, int n, IrExpr **out) {
    for (int j = 0; j < n; j++) out[j] = ir_var_ref(a, v[j]);
}

IrBuffer *op_local_scalar(TsLowerCtx *cx, IrStmt *seq, const char *name, TsDType dt, TsLoc loc) {
    IrExpr *one = ir_i32(cx->arena, 1);
    IrBuffer *b = ir_buffer(cx->k, name, dt, IR_SCOPE_LOCAL, 1, &one, loc);
    IrStmt *al = ir_stmt(cx->arena, IR_S_ALLOC, loc);
    al->alloc.buf = b;
    ir_seq_push(cx->arena, seq, al);
    return b;
}

IrExpr *op_scalar_load(TsArena *a, IrBuffer *acc) {
    IrExpr *zero = ir_i32(a, 0);
    return ir_load(a, acc, &zero, 1);
}

IrStmt *op_scalar_store(TsArena *a, IrBuffer *acc, IrExpr *value) {
    IrExpr *zero = ir_i32(a, 0);
    return ir_store(a, acc, &zero, 1, value);
}

TsDType op_acc_dtype(TsDType dt) {
    if (ts_dtype_is_float(dt) && ts_dtype_bits(dt) < 32) return TS_FLOAT32;
    return dt;
}

void op_pair_regions(TsLowerCtx *cx, const IrStmt *s, const char *opname, const IrRegion *src,
                     const IrRegion *dst, OpPair *p) {
    TsArena *a = cx->arena;
    int sd[OP_MAXDIM], dd[OP_MAXDIM];
    int64_t de[OP_MAXDIM];
    int ns = op_region_shape(cx, s, opname, src, sd, p->ext);
    int nd = op_region_shape(cx, s, opname, dst, dd, de);
    bool same = ns == nd;
    for (int j = 0; same && j < ns; j++) same = p->ext[j] == de[j];
    if (!same)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc, "%s: source region %s does not match destination %s",
                   opname, op_region_text(a, src), op_region_text(a, dst));
    IrExpr *off[OP_MAXDIM];
    p->n = ns;
    op_loop_vars(cx, p->v, ns, 'i');
    op_var_refs(a, p->v, ns, off);
    p->src_idx = op_region_index(a, src, sd, off, ns);
    p->dst_idx = op_region_index(a, dst, dd, off, ns);
}
