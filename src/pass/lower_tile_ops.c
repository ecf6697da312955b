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
 * walks the whole body with the shared integer analysis (ir/arith.h: the
 * ranges of loop variables, lets, thread and block indices, the
 * conditions of enclosing ifs) and keeps only the live branch of every
 * `if` whose condition it decides, and drops the conjuncts it proves true
 * from the others (ir_arith_prune_cond).
 *
 * On the CUDA target, T.copy from global to shared memory is first offered
 * to the thread-level lowering of src/target/cuda/lower_copy_cuda.c (vector
 * and cp.async copies), and T.gemm to src/target/cuda/lower_gemm_cuda.c
 * (tensor cores); the generic lowering runs where they decline.
 */
#include <string.h>

#include "ir/arith.h"
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

/* ---- guard pruning by the shared analysis ------------------------------ */

/* Guard pruning on the shared mutator, the analysis (ir/arith.h) seeing
 * its frames (enclosing loops, lets, if conditions; thread and block
 * ranges from the kernel): an if that it decides is replaced by its live
 * branch (pruned), the others lose their conjuncts proven true, and so
 * does a vector copy's in-bounds predicate (dropped when proven). */
static IrStmt *prune_pre(IrMutator *m, IrStmt *s) {
    IrArith *ar = m->ctx;
    if (s->kind != IR_S_IF) return NULL;
    ar->frame = m->frame;
    IrExpr *c = ir_arith_prune_cond(ar, s->if_.cond);
    int64_t d;
    if (!ir_is_const_int(c, &d)) return NULL;
    IrStmt *live = d ? s->if_.then : s->if_.else_;
    IrStmt *p = live ? ir_mutate_stmt(m, live) : NULL;
    return p ? p : ir_seq(m->arena);
}

static IrStmt *prune_post(IrMutator *m, IrStmt *s) {
    IrArith *ar = m->ctx;
    IrExpr **cond = s->kind == IR_S_IF ? &s->if_.cond : s->kind == IR_S_VCOPY ? &s->vcopy.pred : NULL;
    if (!cond || !*cond) return s;
    ar->frame = m->frame;
    IrExpr *c = ir_arith_prune_cond(ar, *cond);
    int64_t d;
    if (s->kind == IR_S_VCOPY && ir_is_const_int(c, &d) && d) c = NULL;
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

    IrArith ar;
    ir_arith_init(&ar, cx->arena, k);
    IrMutator pm = {.arena = cx->arena, .ctx = &ar, .pre_stmt = prune_pre, .post_stmt = prune_post};
    k->body = ir_mutate_stmt(&pm, k->body);
    if (!k->body) k->body = ir_seq(cx->arena);
}
