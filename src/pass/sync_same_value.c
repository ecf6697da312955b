/*
 * sync_same_value.c — do all the writes one store statement makes to one
 * shared element, from the threads of one thread range, write one value?
 * Then the threads' write-write race at that element (insert_sync cannot
 * put a barrier inside thread-level code) leaves the element with that
 * value whichever write lands last, and insert_sync lets it be.
 *
 * The case: deepseek_v32's sparse MLA producers.  Each of the 8 threads
 * that load one KV row stores the row's validity flag,
 *
 *     is_kv_valid[stage, r * 16 + (tx - 256) // 8] = Indices[..., base + r * 16 + (tx - 256) // 8] <= limit
 *
 * (through a private variable: indices_local, or seesaw's prefetch_indices
 * filled earlier), so the 8 writers of an element store the same bit.
 *
 * The argument, for the store B[I] = V in thread range R (everything that
 * differs between two executions of the store within one execution of R:
 * the thread index, the variables bound inside thread ranges, values read
 * from private buffers).  Lets are inlined first.  Each index I_d is, in
 * affine form, a uniform part (the same in both executions) plus a varying
 * part W_d; two executions writing one element therefore have equal W_d
 * for every d.  V is then proven a function of the W_d and of uniform
 * values: every integer subexpression of V that varies must have the
 * varying part k * W_d (same atoms, structurally, coefficients in one
 * ratio k), or be an operation on such subexpressions; a load in V must
 * read a global buffer the kernel never writes (the same value for both
 * readers) at such indices, or a private buffer written by an earlier
 * sibling of the store (in its statement sequence, with no other write of
 * the buffer between) that stores such a value (the thread read what it had
 * just written: pipelined's `indices_local`), or one every store of which
 * (i) is made under no thread-dependent branch of its thread range (so all
 *     threads store it in the same round),
 * (ii) has distinct plain loop variables (not a thread range's) or
 *     constants for indices, unified with the load's indices (a constant
 *     must be the load's), and
 * (iii) stores a value that, so rewritten, mentions no other variable
 *     bound inside a thread range than those of R and is itself such a
 *     function (recursively, a few levels).
 * Anything else: not proven, and the race stays an error.
 */
#include <string.h>

#include "ir/arith.h"
#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"
#include "pass/sync_conflict.h"

enum { SV_DEPTH = 4, SV_EXPAND = 8 };

typedef struct Sv {
    const IrKernel *k;
    TsArena *a;
    IrArith ar;
    const IrStmt *range;                /* R */
    TS_VEC(IrVar *) let_var;            /* every let of the kernel ... */
    TS_VEC(IrExpr *) let_val;           /* ... and its value */
    TS_VEC(const IrVar *) trv;          /* variables bound inside thread ranges */
    TS_VEC(const IrVar *) rvar;         /* ... inside R (R's own included) */
    TS_VEC(const IrVar *) thrv;         /* the variables of thread ranges themselves (a thread) */
    TS_VEC(const IrStmt *) pst;         /* stores to private buffers ... */
    TS_VEC(bool) pst_ok;                /* ... made under no thread-dependent branch */
    int thr;                            /* walk: thread ranges around */
    int in_r;                           /* walk: inside R */
    int vbranch;                        /* walk: thread-dependent branches around (inside a range) */
    TS_VEC(bool) branch_stack;          /* walk: which open IF/WHILE counted */
    IrAffine w[8];                      /* the store's index dims: affine forms */
    int nw;
    const IrStmt *store;                /* the store B[I] = V */
    const IrStmt *pseq;                 /* the sequence holding it as a child, and where */
    int pidx;
} Sv;

static bool has_var(const IrVar *const *v, int n, const IrVar *x) {
    for (int i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

static bool is_private(const IrBuffer *b) { return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR; }

/* Does e differ between two executions in R (before any substitution)? */
static bool vary_node(const IrExpr *e, void *ctx) {
    const Sv *sv = ctx;
    if (e->kind == IR_E_VAR) return e->var->kind == IR_VAR_THREAD_IDX || has_var(sv->trv.v, sv->trv.n, e->var);
    if (e->kind == IR_E_LOAD) return is_private(e->load.buf);
    return false;
}

static bool varies(const Sv *sv, const IrExpr *e) { return e && ir_expr_any(e, vary_node, (void *)sv); }

static bool sv_pre(IrVisitor *v, const IrStmt *s) {
    Sv *sv = v->ctx;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (s->seq.v[i] == sv->store) sv->pseq = s, sv->pidx = i;
        break;
    case IR_S_FOR:
        ir_arith_bind_loop(&sv->ar, s); /* (ranges, for the affine forms' overflow test) */
        if (s->for_.kind == IR_FOR_THREAD) {
            sv->thr++;
            ts_vec_push(sv->a, sv->thrv, s->for_.var);
        }
        if (s == sv->range) sv->in_r++;
        if (sv->thr) ts_vec_push(sv->a, sv->trv, s->for_.var);
        if (sv->in_r) ts_vec_push(sv->a, sv->rvar, s->for_.var);
        break;
    case IR_S_LET:
        ir_arith_bind_let(&sv->ar, s->let.var, s->let.value);
        ts_vec_push(sv->a, sv->let_var, s->let.var);
        ts_vec_push(sv->a, sv->let_val, s->let.value);
        if (sv->thr) ts_vec_push(sv->a, sv->trv, s->let.var);
        if (sv->in_r) ts_vec_push(sv->a, sv->rvar, s->let.var);
        break;
    case IR_S_IF:
    case IR_S_WHILE: {
        bool vb = sv->thr && varies(sv, s->kind == IR_S_IF ? s->if_.cond : s->while_.cond);
        ts_vec_push(sv->a, sv->branch_stack, vb);
        sv->vbranch += vb;
        break;
    }
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if (is_private(s->store.buf)) {
            ts_vec_push(sv->a, sv->pst, s);
            ts_vec_push(sv->a, sv->pst_ok, s->kind == IR_S_STORE && !sv->vbranch && !s->store.bits);
        }
        break;
    case IR_S_VCOPY:
    case IR_S_TILEOP: /* a private buffer written otherwise: poison it */
        if (s->kind == IR_S_VCOPY && is_private(s->vcopy.dst)) {
            ts_vec_push(sv->a, sv->pst, s);
            ts_vec_push(sv->a, sv->pst_ok, false);
        }
        if (s->kind == IR_S_TILEOP && s->op)
            for (int r = 0; r < s->op->nr; r++)
                if (is_private(s->op->r[r].buf)) {
                    ts_vec_push(sv->a, sv->pst, s);
                    ts_vec_push(sv->a, sv->pst_ok, false);
                }
        break;
    default: break;
    }
    return true;
}

static void sv_post(IrVisitor *v, const IrStmt *s) {
    Sv *sv = v->ctx;
    if (s->kind == IR_S_FOR) {
        if (s->for_.kind == IR_FOR_THREAD) sv->thr--;
        if (s == sv->range) sv->in_r--;
    }
    if ((s->kind == IR_S_IF || s->kind == IR_S_WHILE) && sv->branch_stack.n)
        sv->vbranch -= sv->branch_stack.v[--sv->branch_stack.n];
}

/* e with every let inlined (a few rounds: lets of lets). */
static IrExpr *expand(Sv *sv, IrExpr *e) {
    for (int i = 0; i < SV_EXPAND && e; i++) {
        bool any = false;
        for (int j = 0; j < sv->let_var.n && !any; j++) any = ir_expr_uses_var(e, sv->let_var.v[j]);
        if (!any) return e;
        e = ir_subst(sv->a, e, sv->let_var.v, sv->let_val.v, sv->let_var.n);
    }
    return e;
}

/* The varying terms of f (atoms that vary) match k * the varying terms of
 * some index dim's form. */
static bool matches_w(Sv *sv, const IrAffine *f) {
    int nf = 0;
    for (int i = 0; i < f->n; i++) nf += varies(sv, f->t[i].atom);
    if (!nf) return false;
    for (int d = 0; d < sv->nw; d++) {
        const IrAffine *w = &sv->w[d];
        int nw = 0;
        for (int i = 0; i < w->n; i++) nw += varies(sv, w->t[i].atom);
        if (nw != nf) continue;
        int64_t num = 0, den = 0;
        bool ok = true;
        for (int i = 0; i < f->n && ok; i++) {
            if (!varies(sv, f->t[i].atom)) continue;
            int j = 0;
            while (j < w->n && !ir_expr_equal(w->t[j].atom, f->t[i].atom)) j++;
            if (j == w->n) {
                ok = false;
                break;
            }
            if (!den) num = f->t[i].coeff, den = w->t[j].coeff;
            else ok = f->t[i].coeff * den == num * w->t[j].coeff;
        }
        if (ok) return true;
    }
    return false;
}

static bool det(Sv *sv, IrExpr *e, int depth);

/* v, the value store st (to the private buffer ld reads) stores, with the
 * store's index variables replaced by ld's indices; NULL if they do not
 * unify (distinct loop variables of the store's own, or equal constants)
 * or a variable of another thread range is left in it. */
static IrExpr *unified(Sv *sv, const IrStmt *st, const IrExpr *ld) {
    if (st->kind != IR_S_STORE || st->store.bits || st->store.nidx != ld->load.nidx || st->store.nidx > 8) return NULL;
    IrVar *from[8];
    IrExpr *to[8];
    int n = 0;
    for (int d = 0; d < st->store.nidx; d++) {
        IrExpr *si = st->store.idx[d];
        int64_t c;
        if (si->kind == IR_E_VAR) {
            /* a loop variable of the store's own (not a thread's), each once */
            if (si->var->kind != IR_VAR_LOOP || has_var(sv->thrv.v, sv->thrv.n, si->var) ||
                has_var((const IrVar *const *)from, n, si->var))
                return NULL;
            from[n] = si->var, to[n] = ld->load.idx[d], n++;
        } else if (!(ir_is_const_int(si, &c) && ir_expr_equal(si, ld->load.idx[d]))) {
            return NULL;
        }
    }
    IrExpr *v = expand(sv, ir_subst(sv->a, st->store.value, from, to, n));
    for (int j = 0; j < sv->trv.n; j++)
        if (!has_var(sv->rvar.v, sv->rvar.n, sv->trv.v[j]) && ir_expr_uses_var(v, sv->trv.v[j])) return NULL;
    return v;
}

/* A load of private buffer b at idx in the stored value itself (depth 0):
 * the latest earlier sibling of the store in its sequence that writes b,
 * when it is a store that unifies, is what the load reads (the thread ran
 * it just before, whatever branches it is under).  Else, and deeper: every
 * store of b, made under no thread-dependent branch and unified with idx,
 * stores a value that is a function of the W_d. */
static bool private_det(Sv *sv, const IrExpr *ld, int depth) {
    if (depth >= SV_DEPTH) return false;
    const IrBuffer *b = ld->load.buf;
    if (depth == 0 && sv->pseq)
        for (int j = sv->pidx - 1; j >= 0; j--) {
            const IrStmt *c = sv->pseq->seq.v[j];
            if (!(ir_stmt_access_rw(c, b, 0) & IR_ACC_WRITE)) continue;
            IrExpr *v = c->kind == IR_S_STORE && c->store.buf == b ? unified(sv, c, ld) : NULL;
            if (v) return det(sv, v, depth + 1);
            break;
        }
    bool any = false;
    for (int i = 0; i < sv->pst.n; i++) {
        const IrStmt *st = sv->pst.v[i];
        if (st->kind == IR_S_STORE || st->kind == IR_S_ATOMIC_ADD) {
            if (st->store.buf != b) continue;
        } else if (st->kind == IR_S_VCOPY) {
            if (st->vcopy.dst != b) continue;
        } else {
            bool touches = false;
            for (int r = 0; r < st->op->nr; r++) touches |= st->op->r[r].buf == b;
            if (!touches) continue;
        }
        if (!sv->pst_ok.v[i]) return false;
        IrExpr *v = unified(sv, st, ld);
        if (!v || !det(sv, v, depth + 1)) return false;
        any = true;
    }
    return any;
}

static bool written(const Sv *sv, const IrBuffer *b) {
    return (ir_stmt_access_rw(sv->k->body, b, 0) & IR_ACC_WRITE) != 0 || sv->k->may_block;
}

static bool det(Sv *sv, IrExpr *e, int depth) {
    if (!e || !varies(sv, e)) return true;
    IrAffine f;
    /* an integer whose varying part is k * W_d (its other terms do not vary) */
    if (ts_dtype_is_int(e->dt) && ir_arith_affine(&sv->ar, e, false, &f) && matches_w(sv, &f)) return true;
    switch (e->kind) {
    case IR_E_VAR: return false;
    case IR_E_LOAD: {
        for (int i = 0; i < e->load.nidx; i++)
            if (!det(sv, e->load.idx[i], depth)) return false;
        if (is_private(e->load.buf)) return private_det(sv, e, depth);
        return e->load.buf->scope == IR_SCOPE_GLOBAL && !written(sv, e->load.buf);
    }
    case IR_E_BIN: return det(sv, e->bin.a, depth) && det(sv, e->bin.b, depth);
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST: return det(sv, e->un.a, depth);
    case IR_E_SELECT: return det(sv, e->sel.cond, depth) && det(sv, e->sel.a, depth) && det(sv, e->sel.b, depth);
    case IR_E_CALL:
        if (e->call.fn >= IR_INTRINSIC_COUNT || e->call.fn == IR_EXTERN_CALL || e->call.fn == IR_EXTERN_ADDR)
            return false;
        for (int i = 0; i < e->call.nargs; i++)
            if (!det(sv, e->call.args[i], depth)) return false;
        return true;
    default: return false;
    }
}

bool sync_same_value_store(const IrKernel *k, TsArena *a, const IrStmt *range, const IrStmt *st) {
    if (!st || st->kind != IR_S_STORE || st->store.bits || st->store.nidx > 8) return false;
    Sv sv;
    memset(&sv, 0, sizeof sv);
    sv.k = k;
    sv.a = a;
    sv.range = range;
    sv.store = st;
    ir_arith_init(&sv.ar, a, k);
    IrVisitor v = {.ctx = &sv, .pre_stmt = sv_pre, .post_stmt = sv_post};
    ir_visit_stmt(&v, k->body);
    sv.nw = st->store.nidx;
    for (int d = 0; d < sv.nw; d++) {
        IrExpr *ix = expand(&sv, st->store.idx[d]);
        if (ir_expr_loads(ix, NULL) || !ir_arith_affine(&sv.ar, ix, false, &sv.w[d])) return false;
    }
    return det(&sv, expand(&sv, st->store.value), 0);
}
