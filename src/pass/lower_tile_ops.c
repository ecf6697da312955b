/*
 * lower_tile_ops.c — the pass that replaces every tile operator by loops.
 *
 * It rewrites the kernel body on the shared mutator (ir/walk.h), handing
 * each IR_S_TILEOP statement to ts_op_lower (op/op.c), which dispatches to
 * the op's own lowering.
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

#include "ir/walk.h"
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
    TsLowerCtx *lx;                /* the lowering's context (target, options) */
} Uni;

/* A node whose value may differ between threads: a thread index, such a
 * let, or a load from per-thread memory. */
static bool varies_node(const IrExpr *e, void *ctx) {
    const Uni *u = ctx;
    if (e->kind == IR_E_LOAD)
        return e->load.buf->scope == IR_SCOPE_LOCAL || e->load.buf->scope == IR_SCOPE_VAR ||
               e->load.buf->scope == IR_SCOPE_FRAGMENT;
    if (e->kind != IR_E_VAR) return false;
    if (e->var->kind == IR_VAR_THREAD_IDX) return true;
    for (int i = 0; i < u->varying.n; i++)
        if (u->varying.v[i] == e->var) return true;
    return false;
}

static bool expr_varies(const Uni *u, const IrExpr *e) { return ir_expr_any(e, varies_node, (void *)u); }

/* Does the statement of frame f run in thread-dependent control flow (a
 * T.Parallel, thread-range or vectorized loop, a loop with varying bounds,
 * an if/while with a varying condition around it)?  *in_role: inside a
 * T.ws role.  (The conditions read only what is defined before them, so
 * asking now answers as on the way down.) */
static bool divergent_at(const Uni *u, const IrWalkFrame *f, bool *in_role) {
    bool div = false;
    *in_role = false;
    for (f = f ? f->up : NULL; f; f = f->up) {
        const IrStmt *s = f->s;
        if (s->kind == IR_S_ROLE) *in_role = true;
        if (s->kind == IR_S_FOR)
            div |= s->for_.kind == IR_FOR_PARALLEL || s->for_.kind == IR_FOR_THREAD ||
                   s->for_.kind == IR_FOR_VECTORIZED || expr_varies(u, s->for_.min) ||
                   expr_varies(u, s->for_.extent);
        if (s->kind == IR_S_IF) div |= expr_varies(u, s->if_.cond);
        if (s->kind == IR_S_WHILE) div |= expr_varies(u, s->while_.cond);
    }
    return div;
}

/* The lowering, on the shared mutator: a tile op is replaced by its
 * lowering (used as is), a let whose value varies marks its variable. */
static IrStmt *lower_pre(IrMutator *m, IrStmt *s) {
    Uni *u = m->ctx;
    TsLowerCtx *lx = u->lx;
    if (s->kind == IR_S_LET) {
        bool in_role;
        if (divergent_at(u, m->frame, &in_role) || expr_varies(u, s->let.value))
            ts_vec_push(u->a, u->varying, s->let.var);
        return NULL;
    }
    if (s->kind != IR_S_TILEOP) return NULL;
    IrStmt *low = NULL;
    bool in_role, div = divergent_at(u, m->frame, &in_role);
    /* CUDA: instruction choice first (src/target/cuda/), generic otherwise */
    if (lx->target == TS_TARGET_CUDA && s->op->kind == TS_OP_COPY && !div && !in_role)
        low = ts_cuda_lower_copy(lx, s);
    if (lx->target == TS_TARGET_CUDA && s->op->kind == TS_OP_GEMM) low = ts_cuda_lower_gemm(lx, s);
    if (!low) low = ts_op_lower(lx, s);
    if (!low->loc.src) low->loc = s->loc;
    return low;
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

/* Guard pruning on the shared mutator: a loop's variable is ranged while
 * its body is pruned; an if that the ranges decide is replaced by its live
 * branch (pruned), the others lose their conjuncts proven true, and so does
 * a vector copy's in-bounds predicate. */
static IrStmt *prune_pre(IrMutator *m, IrStmt *s) {
    Ranges *r = m->ctx;
    if (s->kind == IR_S_FOR) {
        int64_t m0, m1, e0, e1;
        int id = s->for_.var->id;
        if (id >= 0 && id < r->n && bound(r, s->for_.min, &m0, &m1) && bound(r, s->for_.extent, &e0, &e1) &&
            e1 >= 1) {
            r->known[id] = 1;
            r->lo[id] = m0;
            r->hi[id] = m1 + e1 - 1;
        }
        return NULL;
    }
    if (s->kind != IR_S_IF) return NULL;
    int d = decide(r, s->if_.cond);
    IrStmt *live = d == 1 ? s->if_.then : d == 0 ? s->if_.else_ : NULL;
    if (d < 0) return NULL;
    IrStmt *p = live ? ir_mutate_stmt(m, live) : NULL;
    return p ? p : ir_seq(m->arena);
}

static IrStmt *prune_post(IrMutator *m, IrStmt *s) {
    Ranges *r = m->ctx;
    IrExpr **cond = s->kind == IR_S_IF ? &s->if_.cond : s->kind == IR_S_VCOPY ? &s->vcopy.pred : NULL;
    if (s->kind == IR_S_FOR && s->for_.var->id >= 0 && s->for_.var->id < r->n) r->known[s->for_.var->id] = 0;
    if (!cond || !*cond) return s;
    IrExpr *c = s->kind == IR_S_VCOPY && decide(r, *cond) == 1 ? NULL : drop_true(m->arena, r, *cond);
    if (c == *cond) return s;
    IrStmt *n = ir_stmt(m->arena, s->kind, s->loc);
    *n = *s;
    *(s->kind == IR_S_IF ? &n->if_.cond : &n->vcopy.pred) = c;
    return n;
}

void ts_pass_lower_tile_ops(TsPassCtx *cx) {
    TsLowerCtx lx = {cx->diag, cx->arena, cx->k, cx->target, cx->caps};
    IrKernel *k = cx->k;
    Uni u;
    memset(&u, 0, sizeof u);
    u.a = cx->arena;
    u.lx = &lx;
    IrMutator lm = {.arena = cx->arena, .ctx = &u, .pre_stmt = lower_pre};
    k->body = ir_mutate_stmt(&lm, k->body);

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
    IrMutator pm = {.arena = cx->arena, .ctx = &r, .pre_stmt = prune_pre, .post_stmt = prune_post};
    k->body = ir_mutate_stmt(&pm, k->body);
    if (!k->body) k->body = ir_seq(cx->arena);
}
