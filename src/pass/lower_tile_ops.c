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
 * Lowered copies and fills guard every access to a global buffer, since a
 * tile may hang over the tensor's end.  Most of those guards are provably
 * true (the tensor is a multiple of the tile), so afterwards the pass
 * walks the whole body with the value ranges of the loop variables
 * (constant bounds) and block indices (constant grid extents) and keeps
 * only the live branch of every `if` whose condition interval arithmetic
 * decides, and drops the conjuncts it proves true from the others.  Interval arithmetic is exact enough here because guard
 * conditions are sums of products of ranged vars and constants.
 *
 * On the CUDA target, T.copy from global to shared memory is first offered
 * to the thread-level lowering of src/target/cuda/lower_copy_cuda.c (vector
 * and cp.async copies), and T.gemm to src/target/cuda/lower_gemm_cuda.c
 * (tensor cores); the generic lowering runs where they decline.
 */
#include <string.h>

#include "op/op.h"
#include "pass/pass.h"
#include "target/cuda/lower_copy_cuda.h"
#include "target/cuda/lower_gemm_cuda.h"

/*
 * Where a statement runs: thread-level lowerings (the CUDA copy) put
 * barriers in their output, so they apply only where every thread of the
 * block arrives with the same control flow: not under a T.Parallel or
 * thread-range loop, nor under an if/while whose condition may differ
 * between threads (it reads a thread index, a let derived from one, or a
 * per-thread buffer).
 */
typedef struct Uni {
    TsArena *a;                    /* for the list below */
    TS_VEC(const IrVar *) varying; /* lets whose value may differ between threads */
    int divergent;                 /* > 0: inside thread-dependent control flow */
    int in_role;                   /* > 0: inside a T.ws role (IR_S_ROLE) */
} Uni;

static bool expr_varies(const Uni *u, const IrExpr *e) {
    if (!e) return false;
    switch (e->kind) {
    case IR_E_VAR:
        if (e->var->kind == IR_VAR_THREAD_IDX) return true;
        for (int i = 0; i < u->varying.n; i++)
            if (u->varying.v[i] == e->var) return true;
        return false;
    case IR_E_LOAD:
        if (e->load.buf->scope == IR_SCOPE_LOCAL || e->load.buf->scope == IR_SCOPE_VAR ||
            e->load.buf->scope == IR_SCOPE_FRAGMENT)
            return true;
        for (int i = 0; i < e->load.nidx; i++)
            if (expr_varies(u, e->load.idx[i])) return true;
        return false;
    case IR_E_BIN: return expr_varies(u, e->bin.a) || expr_varies(u, e->bin.b);
    case IR_E_NEG: case IR_E_NOT: case IR_E_CAST: return expr_varies(u, e->un.a);
    case IR_E_SELECT: return expr_varies(u, e->sel.cond) || expr_varies(u, e->sel.a) || expr_varies(u, e->sel.b);
    case IR_E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (expr_varies(u, e->call.args[i])) return true;
        return false;
    default: return false;
    }
}

static IrStmt *lower(TsLowerCtx *lx, Uni *u, IrStmt *s) {
    if (!s) return NULL;
    TsArena *a = lx->arena;
    IrStmt *r;
    switch (s->kind) {
    case IR_S_LET:
        if (u->divergent || expr_varies(u, s->let.value)) ts_vec_push(u->a, u->varying, s->let.var);
        return s;
    case IR_S_TILEOP: {
        IrStmt *low = NULL;
        /* CUDA: instruction choice first (src/target/cuda/), generic otherwise */
        if (lx->target == TS_TARGET_CUDA && s->op->kind == TS_OP_COPY && !u->divergent && !u->in_role)
            low = ts_cuda_lower_copy(lx, s);
        if (lx->target == TS_TARGET_CUDA && s->op->kind == TS_OP_GEMM) low = ts_cuda_lower_gemm(lx, s);
        if (!low) low = ts_op_lower(lx, s);
        if (!low->loc.src) low->loc = s->loc;
        return low;
    }
    case IR_S_SEQ: {
        IrStmt **kids = TS_NEWN(a, IrStmt *, s->seq.n > 0 ? s->seq.n : 1);
        bool changed = false;
        for (int i = 0; i < s->seq.n; i++) {
            kids[i] = lower(lx, u, s->seq.v[i]);
            changed |= kids[i] != s->seq.v[i];
        }
        if (!changed) return s;
        r = ir_seq(a);
        r->loc = s->loc;
        for (int i = 0; i < s->seq.n; i++) ir_seq_push(a, r, kids[i]);
        return r;
    }
    case IR_S_FOR: {
        int div = s->for_.kind == IR_FOR_PARALLEL || s->for_.kind == IR_FOR_THREAD ||
                  s->for_.kind == IR_FOR_VECTORIZED || expr_varies(u, s->for_.min) || expr_varies(u, s->for_.extent);
        u->divergent += div;
        IrStmt *body = lower(lx, u, s->for_.body);
        u->divergent -= div;
        if (body == s->for_.body) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->for_.body = body;
        return r;
    }
    case IR_S_IF: {
        int div = expr_varies(u, s->if_.cond);
        u->divergent += div;
        IrStmt *t = lower(lx, u, s->if_.then), *e = lower(lx, u, s->if_.else_);
        u->divergent -= div;
        if (t == s->if_.then && e == s->if_.else_) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->if_.then = t;
        r->if_.else_ = e;
        return r;
    }
    case IR_S_ROLE: {
        /* a T.ws role: its copies become nests that partition_threads spreads over
         * the role's threads (ts_cuda_lower_copy's thread ranges are the block's) */
        u->in_role++;
        IrStmt *body = lower(lx, u, s->role.body);
        u->in_role--;
        if (body == s->role.body) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->role.body = body;
        return r;
    }
    case IR_S_WHILE: {
        int div = expr_varies(u, s->while_.cond);
        u->divergent += div;
        IrStmt *body = lower(lx, u, s->while_.body);
        u->divergent -= div;
        if (body == s->while_.body) return s;
        r = ir_stmt(a, s->kind, s->loc);
        *r = *s;
        r->while_.body = body;
        return r;
    }
    default: return s;
    }
}

/* ---- guard pruning by interval arithmetic ------------------------------ */

typedef struct Ranges {
    int n;           /* ids below this */
    char *known;     /* by var id */
    int64_t *lo, *hi;
} Ranges;

/* The interval of an integer expression, when the ranges decide it. */
static bool bound(const Ranges *r, const IrExpr *e, int64_t *lo, int64_t *hi) {
    int64_t a0, a1, b0, b1;
    if (!ts_dtype_is_int(e->dt)) return false;
    switch (e->kind) {
    case IR_E_INT: *lo = *hi = e->ival; return true;
    case IR_E_VAR:
        if (e->var->id < 0 || e->var->id >= r->n || !r->known[e->var->id]) return false;
        *lo = r->lo[e->var->id];
        *hi = r->hi[e->var->id];
        return true;
    case IR_E_CAST:
        return ts_dtype_is_int(e->un.a->dt) && ts_dtype_bits(e->dt) >= ts_dtype_bits(e->un.a->dt) &&
               ts_dtype_info(e->dt)->kind == 'i' && ts_dtype_info(e->un.a->dt)->kind == 'i' &&
               bound(r, e->un.a, lo, hi);
    case IR_E_BIN: break;
    default: return false;
    }
    if (!bound(r, e->bin.a, &a0, &a1) || !bound(r, e->bin.b, &b0, &b1)) return false;
    /* stay far from int64 overflow: ranges beyond 2^40 are not decided */
    const int64_t big = (int64_t)1 << 40;
    if (a0 < -big || a1 > big || b0 < -big || b1 > big) return false;
    switch (e->bin.op) {
    case IR_ADD: *lo = a0 + b0; *hi = a1 + b1; break;
    case IR_SUB: *lo = a0 - b1; *hi = a1 - b0; break;
    case IR_MUL: {
        if (b0 != b1 && a0 != a1 && ((a1 - a0) > (1 << 20) || (b1 - b0) > (1 << 20))) return false;
        int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
        *lo = *hi = p[0];
        for (int i = 1; i < 4; i++) {
            if (p[i] < *lo) *lo = p[i];
            if (p[i] > *hi) *hi = p[i];
        }
        break;
    }
    case IR_FLOORDIV:
        if (b0 != b1 || b0 <= 0) return false;
        *lo = a0 >= 0 ? a0 / b0 : -((-a0 + b0 - 1) / b0);
        *hi = a1 >= 0 ? a1 / b0 : -((-a1 + b0 - 1) / b0);
        break;
    case IR_FLOORMOD:
        if (b0 != b1 || b0 <= 0) return false;
        *lo = 0;
        *hi = b0 - 1;
        if (a0 >= 0 && a1 < b0) { *lo = a0; *hi = a1; }
        break;
    case IR_MIN: *lo = a0 < b0 ? a0 : b0; *hi = a1 < b1 ? a1 : b1; break;
    case IR_MAX: *lo = a0 > b0 ? a0 : b0; *hi = a1 > b1 ? a1 : b1; break;
    default: return false;
    }
    return true;
}

/* 1: always true, 0: always false, -1: undecided. */
static int decide(const Ranges *r, const IrExpr *c) {
    int64_t a0, a1, b0, b1;
    if (c->kind == IR_E_INT) return c->ival != 0;
    if (c->kind == IR_E_NOT && !c->un.bitnot) {
        int x = decide(r, c->un.a);
        return x < 0 ? -1 : !x;
    }
    if (c->kind != IR_E_BIN) return -1;
    IrBinOp op = c->bin.op;
    if (op == IR_AND || op == IR_OR) {
        int x = decide(r, c->bin.a), y = decide(r, c->bin.b);
        if (op == IR_AND) return (x == 0 || y == 0) ? 0 : (x == 1 && y == 1) ? 1 : -1;
        return (x == 1 || y == 1) ? 1 : (x == 0 && y == 0) ? 0 : -1;
    }
    if (!bound(r, c->bin.a, &a0, &a1) || !bound(r, c->bin.b, &b0, &b1)) return -1;
    switch (op) {
    case IR_LT: return a1 < b0 ? 1 : a0 >= b1 ? 0 : -1;
    case IR_LE: return a1 <= b0 ? 1 : a0 > b1 ? 0 : -1;
    case IR_GT: return a0 > b1 ? 1 : a1 <= b0 ? 0 : -1;
    case IR_GE: return a0 >= b1 ? 1 : a1 < b0 ? 0 : -1;
    default: return -1;
    }
}

/* c without the conjuncts that are always true (c itself when none is). */
static IrExpr *drop_true(TsArena *a, const Ranges *r, IrExpr *c) {
    if (c->kind != IR_E_BIN || c->bin.op != IR_AND) return c;
    if (decide(r, c->bin.a) == 1) return drop_true(a, r, c->bin.b);
    if (decide(r, c->bin.b) == 1) return drop_true(a, r, c->bin.a);
    IrExpr *x = drop_true(a, r, c->bin.a), *y = drop_true(a, r, c->bin.b);
    if (x == c->bin.a && y == c->bin.b) return c;
    return ir_bin(a, IR_AND, x, y);
}

static IrStmt *prune(TsArena *a, Ranges *r, IrStmt *s) {
    if (!s) return NULL;
    switch (s->kind) {
    case IR_S_SEQ: {
        IrStmt **kids = TS_NEWN(a, IrStmt *, s->seq.n > 0 ? s->seq.n : 1);
        bool changed = false;
        for (int i = 0; i < s->seq.n; i++) {
            kids[i] = prune(a, r, s->seq.v[i]);
            changed |= kids[i] != s->seq.v[i];
        }
        if (!changed) return s;
        IrStmt *n = ir_seq(a);
        n->loc = s->loc;
        for (int i = 0; i < s->seq.n; i++) ir_seq_push(a, n, kids[i]);
        return n;
    }
    case IR_S_FOR: {
        int64_t m0, m1, e0, e1;
        int id = s->for_.var->id;
        bool ranged = id >= 0 && id < r->n && bound(r, s->for_.min, &m0, &m1) &&
                      bound(r, s->for_.extent, &e0, &e1) && e1 >= 1;
        if (ranged) {
            r->known[id] = 1;
            r->lo[id] = m0;
            r->hi[id] = m1 + e1 - 1;
        }
        IrStmt *body = prune(a, r, s->for_.body);
        if (ranged) r->known[id] = 0;
        if (body == s->for_.body) return s;
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        *n = *s;
        n->for_.body = body;
        return n;
    }
    case IR_S_IF: {
        int d = decide(r, s->if_.cond);
        if (d == 1) return prune(a, r, s->if_.then);
        if (d == 0) return s->if_.else_ ? prune(a, r, s->if_.else_) : ir_seq(a);
        IrStmt *t = prune(a, r, s->if_.then), *e = prune(a, r, s->if_.else_);
        IrExpr *c = drop_true(a, r, s->if_.cond);
        if (t == s->if_.then && e == s->if_.else_ && c == s->if_.cond) return s;
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        *n = *s;
        n->if_.cond = c;
        n->if_.then = t;
        n->if_.else_ = e;
        return n;
    }
    case IR_S_VCOPY: {
        /* the in-bounds predicate of a vector copy, pruned like a guard */
        if (!s->vcopy.pred) return s;
        int d = decide(r, s->vcopy.pred);
        IrExpr *p = d == 1 ? NULL : drop_true(a, r, s->vcopy.pred);
        if (p == s->vcopy.pred) return s;
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        *n = *s;
        n->vcopy.pred = p;
        return n;
    }
    case IR_S_ROLE: {
        IrStmt *body = prune(a, r, s->role.body);
        if (body == s->role.body) return s;
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        *n = *s;
        n->role.body = body;
        return n;
    }
    case IR_S_WHILE: {
        IrStmt *body = prune(a, r, s->while_.body);
        if (body == s->while_.body) return s;
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        *n = *s;
        n->while_.body = body;
        return n;
    }
    default: return s;
    }
}

void ts_pass_lower_tile_ops(TsPassCtx *cx) {
    TsLowerCtx lx = {cx->diag, cx->arena, cx->k, cx->target, cx->caps};
    IrKernel *k = cx->k;
    Uni u;
    memset(&u, 0, sizeof u);
    u.a = cx->arena;
    k->body = lower(&lx, &u, k->body);

    Ranges r;
    r.n = k->next_id;
    r.known = TS_NEWN(cx->arena, char, r.n > 0 ? r.n : 1);
    r.lo = TS_NEWN(cx->arena, int64_t, r.n > 0 ? r.n : 1);
    r.hi = TS_NEWN(cx->arena, int64_t, r.n > 0 ? r.n : 1);
    for (int i = 0; i < 3; i++) {
        IrVar *b = k->block_idx[i];
        int64_t g = 1;
        if (!b || b->id < 0 || b->id >= r.n) continue;
        if (i < k->ngrid && !ir_is_const_int(k->grid[i], &g)) continue;
        if (g < 1) continue;
        r.known[b->id] = 1;
        r.lo[b->id] = 0;
        r.hi[b->id] = g - 1;
    }
    k->body = prune(cx->arena, &r, k->body);
}
