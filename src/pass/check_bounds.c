/*
 * check_bounds.c — element accesses of block-local buffers (fragments,
 * local arrays, shared tiles) whose index is provably outside the buffer
 * are compile-time errors.
 *
 * These buffers have constant shapes, and on the CUDA target a fragment is
 * spread over the threads' registers by its layout: an index past the
 * extent has no register at all, so the generated code computes garbage
 * (or, unchecked, touches another buffer's registers or shared bytes),
 * and only the run-time bounds check (--check-bounds, the C target's
 * checked build) would say so.  Where the compiler can prove at compile
 * time that the access goes out of bounds, it says so at once, naming the
 * buffer, the index and the extent, at the access's file:line:col.
 * (A fragment indexed at exactly a T.Parallel nest's own loop variables
 * past its extent, as TileLang's attention-sink backward examples write
 * `sinks[i]` of a `T.alloc_fragment([heads])` for every i of
 * `T.Parallel(block_M)`, was widened by the pass before this one,
 * widen_fragments.c, as TileLang's layout inference makes it.)
 *
 * "Provably" is kept strict, so that no correct program is refused: an
 * index counts only where it is an affine function of loop variables
 * whose whole range is certainly run when the access is reached, so that
 * its least and greatest values over those ranges are really taken:
 *
 *  - the loop has constant bounds (after simplify) and a positive extent,
 *    and its body has no break or continue;
 *  - between the loop and the access there is no condition: an `if` or
 *    `while` body, the arms of T.if_then_else, the right operand of
 *    `and`/`or` are conditional, and loop variables bound outside them do
 *    not count inside (loops opened inside do);
 *  - every atom of the index's affine form is such a variable (block and
 *    thread indices, lets, loads, run-time values: no verdict).
 *
 * Each dimension is checked on its own: a value below 0 or at least the
 * extent in any dimension is an access outside the buffer.  Tile operators
 * (T.copy, T.gemm, ...) are checked by their own lowerings; this pass
 * looks at element loads and stores only.  It runs right after simplify,
 * on every target, before lower_tile_ops adds loops of its own.
 *
 * The walk is the shared visitor's (ir/walk.h): which parts are
 * conditional, and where a loop body starts, come from its conditional
 * context (enter_guard / leave_guard), so this file lists no node kinds
 * but the statements it looks into.
 */
#include <string.h>

#include "ir/arith.h"
#include "ir/walk.h"
#include "pass/pass.h"

/* A loop variable whose whole range is run wherever it is visible as free. */
typedef struct FreeVar {
    const IrVar *var; /* the loop variable */
    int64_t lo, hi;   /* its first and last value */
} FreeVar;

typedef struct Saved Saved;

typedef struct Checker {
    TsPassCtx *cx;        /* the pass context (diagnostics, arena, kernel) */
    IrArith ar;           /* affine forms of indices */
    TS_VEC(FreeVar) vars; /* enclosing loops' variables, outermost first */
    int floor;            /* vars[0..floor) are behind a condition: not free here */
    TS_VEC(struct Saved) saved; /* per guarded part entered: what to restore on leaving it */
    TS_VEC(TsLoc) locs;   /* per expression being visited: its position for messages */
} Checker;

/* Does s (a loop body) hold a break or continue of the loop it is the body of? */
static bool has_jump(const IrStmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case IR_S_BREAK:
    case IR_S_CONTINUE:
        return true;
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (has_jump(s->seq.v[i])) return true;
        return false;
    case IR_S_IF:
        return has_jump(s->if_.then) || has_jump(s->if_.else_);
    default: /* an inner loop's jumps are its own */
        return false;
    }
}

static const FreeVar *free_var(const Checker *c, const IrVar *v) {
    for (int i = c->vars.n - 1; i >= c->floor; i--)
        if (c->vars.v[i].var == v) return &c->vars.v[i];
    return NULL;
}

static const char *scope_word(IrScope s) {
    switch (s) {
    case IR_SCOPE_FRAGMENT: return "fragment";
    case IR_SCOPE_LOCAL: return "local buffer";
    case IR_SCOPE_SHARED: return "shared buffer";
    default: return "buffer";
    }
}

/* buf[idx[0..n)] at loc: an error if some index certainly leaves its extent. */
static void check_access(Checker *c, const IrBuffer *b, IrExpr *const *idx, int n, TsLoc loc) {
    if (b->scope == IR_SCOPE_GLOBAL || b->scope == IR_SCOPE_VAR || n != b->ndim) return;
    for (int d = 0; d < n; d++) {
        int64_t ext;
        if (!ir_is_const_int(b->shape[d], &ext)) return;
        IrAffine f;
        int64_t kc;
        if (ir_is_const_int(idx[d], &kc)) { /* a constant: itself (however large; the affine form may give up) */
            memset(&f, 0, sizeof f);
            f.affine = true;
            f.c = kc;
        } else if (!ir_arith_affine(&c->ar, idx[d], false, &f) || !f.affine) {
            continue;
        }
        int64_t lo = f.c, hi = f.c;
        bool ok = true;
        for (int t = 0; t < f.n && ok; t++) {
            const IrExpr *atom = f.t[t].atom;
            const FreeVar *fv = atom->kind == IR_E_VAR ? free_var(c, atom->var) : NULL;
            if (!fv) {
                ok = false;
                break;
            }
            int64_t k = f.t[t].coeff;
            /* (constant tile sizes: these products are far from overflowing) */
            lo += k > 0 ? k * fv->lo : k * fv->hi;
            hi += k > 0 ? k * fv->hi : k * fv->lo;
        }
        if (!ok || (lo >= 0 && hi < ext)) continue;
        TsBuf it = {0}, sh = {0};
        ir_print_expr(&it, idx[d]);
        for (int j = 0; j < b->ndim; j++) {
            int64_t e = 0;
            ir_is_const_int(b->shape[j], &e);
            ts_buf_printf(&sh, "%s%lld", j ? ", " : "", (long long)e);
        }
        const char *its = ts_sprintf(c->cx->arena, "%s", ts_buf_str(&it));
        const char *shs = ts_sprintf(c->cx->arena, "%s", ts_buf_str(&sh));
        ts_buf_free(&it);
        ts_buf_free(&sh);
        int64_t bad = hi >= ext ? hi : lo;
        ts_fail_at(c->cx->diag, TS_ERR_SHAPE, loc.src ? loc : b->loc,
                   "index %s of %s '%s' reaches %lld, outside its extent %lld%s (the buffer is [%s], declared "
                   "at line %d); every value of the loop%s is run here",
                   its, scope_word(b->scope), b->name, (long long)bad, (long long)ext,
                   b->ndim > 1 ? ts_sprintf(c->cx->arena, " in dimension %d", d) : "", shs, b->loc.line,
                   f.n > 1 ? "s" : "");
    }
}

/* ---- the walk: the shared visitor with its conditional context ------------------ */

/* What entering a guarded part changed, to undo on leaving it. */
typedef struct Saved {
    int nvars; /* c->vars.n before */
    int floor; /* c->floor before */
    int mark;  /* the arithmetic's bindings before (a loop body binds its variable) */
} Saved;

/* A guarded part: a loop body whose every iteration certainly runs makes
 * its variable free; any other part (a branch, a select arm, the right
 * operand of and/or, a while body, a loop that may not run all its
 * iterations) puts the variables bound so far behind a condition. */
static void enter_guard(IrVisitor *v, const IrGuard *g) {
    Checker *c = v->ctx;
    ts_vec_push(c->cx->arena, c->saved, ((Saved){c->vars.n, c->floor, ir_arith_mark(&c->ar)}));
    if (g->kind != IR_GUARD_FOR_BODY) {
        c->floor = c->vars.n;
        return;
    }
    const IrStmt *s = g->s;
    int64_t mn, ext;
    bool whole = ir_is_const_int(s->for_.min, &mn) && ir_is_const_int(s->for_.extent, &ext) && ext > 0 &&
                 !has_jump(s->for_.body);
    ir_arith_bind_loop(&c->ar, s); /* (the affine forms need the ranges to rule out wrap-around) */
    if (whole)
        ts_vec_push(c->cx->arena, c->vars, ((FreeVar){s->for_.var, mn, mn + ext - 1}));
    else
        c->floor = c->vars.n; /* its iterations may not all run: nothing outside counts inside */
}

static void leave_guard(IrVisitor *v, const IrGuard *g) {
    (void)g;
    Checker *c = v->ctx;
    Saved sv = c->saved.v[--c->saved.n];
    ir_arith_pop(&c->ar, sv.mark);
    c->vars.n = sv.nvars;
    c->floor = sv.floor;
}

/* The statements whose element accesses are checked (tile operators check
 * their own regions; printed values, vector copies and the rest are not
 * looked into). */
static bool pre_stmt(IrVisitor *v, const IrStmt *s) {
    (void)v;
    switch (s->kind) {
    case IR_S_SEQ:
    case IR_S_FOR:
    case IR_S_IF:
    case IR_S_WHILE:
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
    case IR_S_LET:
    case IR_S_EVAL: return true;
    default: return false;
    }
}

/* A store is checked after its indices and value (inner accesses first). */
static void post_stmt(IrVisitor *v, const IrStmt *s) {
    if (s->kind == IR_S_STORE || s->kind == IR_S_ATOMIC_ADD)
        check_access(v->ctx, s->store.buf, s->store.idx, s->store.nidx, s->loc);
}

/* Positions: an expression's own where it has one, else its parent's (the
 * statement's at the top). */
static bool pre_expr(IrVisitor *v, const IrExpr *e) {
    Checker *c = v->ctx;
    TsLoc up = c->locs.n ? c->locs.v[c->locs.n - 1] : v->frame->s->loc;
    ts_vec_push(c->cx->arena, c->locs, e->loc.src ? e->loc : up);
    return true;
}

/* A load is checked after its indices (inner accesses first). */
static void post_expr(IrVisitor *v, const IrExpr *e) {
    Checker *c = v->ctx;
    TsLoc here = c->locs.v[--c->locs.n];
    if (e->kind == IR_E_LOAD) check_access(c, e->load.buf, e->load.idx, e->load.nidx, here);
}

void ts_pass_check_bounds(TsPassCtx *cx) {
    Checker c;
    memset(&c, 0, sizeof c);
    c.cx = cx;
    ir_arith_init(&c.ar, cx->arena, cx->k);
    IrVisitor v = {.ctx = &c,
                   .pre_stmt = pre_stmt,
                   .post_stmt = post_stmt,
                   .pre_expr = pre_expr,
                   .post_expr = post_expr,
                   .enter_guard = enter_guard,
                   .leave_guard = leave_guard};
    ir_visit_stmt(&v, cx->k->body);
}
