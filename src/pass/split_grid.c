/*
 * split_grid.c — T.sync_grid() as a kernel boundary, or the kernel
 * cooperative.
 *
 * TileLang's T.sync_grid() is a barrier of every thread of every block of
 * the grid (CUDA's cooperative-groups grid sync).  This pass, the first of
 * the pipeline, decides how each is done.
 *
 * Two launches.  Where the barrier stands at the top level of the kernel
 * body and no block-local state (a shared, fragment or local buffer, an
 * alloc_var, a let reading memory) is used on both sides of it, the
 * barrier is exactly a kernel boundary: what the blocks wrote to global
 * memory before it is what the blocks after it read, and nothing else
 * crosses.  So the body is cut there: the statements after the barrier
 * become a second kernel of the chain (IrKernel.next: launched after this
 * one on the same grid, as a prim_func with two T.Kernel blocks is), with
 * the alloc statements of the buffers only it uses and copies of the
 * top-level lets it needs whose values read no memory (block indices and
 * constants).  The second kernel runs the whole pipeline in its turn (this
 * pass included, for a second barrier).  TileLang's persistent MLA decode
 * (examples/deepseek_mla/example_mla_decode_persistent.py) is the case.
 * This form is kept where it applies because it needs nothing of the
 * launch: any grid size (no residency limit), no workspace, and every
 * target and interpreter runs it.
 *
 * Cooperative.  Every other T.sync_grid() (in a loop or a branch, or with
 * state crossing it) and every collective between the blocks of the grid
 * (T.Scale("block"), coll_units -1, which lower_coll expands into grid
 * barriers) make the kernel cooperative (IrKernel.cooperative): the
 * T.sync_grid statements
 * stay in the body and the targets print them as a grid barrier on the
 * first TS_GRID_BAR_BYTES of the launch's grid workspace (IR_GRID_WS,
 * IrKernel.grid_ws_bytes, zeroed by the launch).  The CUDA launch is
 * cuLaunchCooperativeKernel after checking that every block can be
 * resident at once (cuda_drv.c: a clear error otherwise, never a hang);
 * the C target runs such blocks as coroutines (sched_c.c), so a barrier of
 * every block progresses whatever the number of workers; the interpreters
 * refuse it (they run blocks one after another).  Cooperative is not
 * may_block: the blocks wait for each other only inside the grid barrier,
 * whose fences order every global access before it against every one
 * after it, so the rest of the kernel keeps plain stores (no fence, no
 * volatile), layout inference and vectorized copies; only the C target's
 * scheduler treats both alike (the blocks as coroutines: TsCInfo.may_block
 * is printed for either).  Every thread of a block
 * must reach every grid barrier: one inside T.Parallel, a T.ws role, or a
 * branch or loop on the thread index is refused here (check_uniform).  A
 * branch on data that some blocks take and others skip cannot be seen:
 * the wait times out (C target: the launch's wait timeout, a message;
 * CUDA: a trap after 60 s).
 */
#include "pass/pass.h"

#include <string.h>

#include "ir/tileop.h"
#include "ir/walk.h"

/* Is s `T.sync_grid()` (an IR_S_EVAL of IR_SYNC_GRID)? */
static bool is_grid_sync(const IrStmt *s) {
    return s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_SYNC_GRID;
}

static bool grid_sync_stmt(const IrStmt *s, void *ctx) {
    (void)ctx;
    return is_grid_sync(s);
}

/* The storage a buffer names: a view's base, else itself. */
static const IrBuffer *root_of(const IrBuffer *b) { return b->base ? b->base : b; }

/* Marks (by buffer id) the non-global storage a statement list touches. */
typedef struct Marks {
    TsDiag *d;
    char *used;  /* [nid]: 1 where a buffer's storage is touched */
    int nid;     /* ids below this are covered */
} Marks;

static void mark_access(IrVisitor *v, const IrAccess *acc) {
    Marks *m = v->ctx;
    const IrBuffer *r = root_of(acc->buf);
    if (r->scope == IR_SCOPE_GLOBAL) return;
    if (r->id < 0 || r->id >= m->nid) ts_internal(m->d, "split_grid: buffer id %d outside the kernel's", r->id);
    m->used[r->id] = 1;
}

static void mark_list(Marks *m, IrStmt *const *v, int n) {
    IrVisitor vis = {.ctx = m, .access = mark_access};
    for (int i = 0; i < n; i++) ir_visit_stmt(&vis, v[i]);
}

/* Is e free of loads (a value a later kernel can compute again)? */
static bool is_load(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD || (e->kind == IR_E_CALL && e->call.fn >= IR_WARP_SHFL && e->call.fn <= IR_WARP_SYNC);
}

static bool block_coll(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op && s->op->kind == TS_OP_COLL && s->op->coll_units < 0;
}

/* The kernel's blocks meet at grid barriers: see the essay. */
static void make_cooperative(IrKernel *k) {
    k->cooperative = true;
    if (k->grid_ws_bytes < TS_GRID_BAR_BYTES) k->grid_ws_bytes = TS_GRID_BAR_BYTES;
}

/* Can the top-level barrier at v[at] be a kernel boundary?  (No block-local
 * storage used on both sides, no let reading memory needed after it.) */
static bool can_split(TsPassCtx *cx, IrStmt **v, int n, int at, Marks *before, Marks *after) {
    IrKernel *k = cx->k;
    mark_list(before, v, at);
    mark_list(after, v + at + 1, n - at - 1);
    for (int i = 0; i < k->buffers.n; i++) {
        const IrBuffer *b = k->buffers.v[i];
        if (b->scope == IR_SCOPE_GLOBAL || b->base) continue;
        if (before->used[b->id] && after->used[b->id]) return false;
    }
    for (int i = 0; i < at; i++) {
        IrStmt *s = v[i];
        if (s->kind != IR_S_LET || !ir_expr_any(s->let.value, is_load, NULL)) continue;
        for (int j = at + 1; j < n; j++)
            if (ir_stmt_uses_var(v[j], s->let.var)) return false;
    }
    return true;
}

/* Thread-dependent values: the thread index and lets computed from it. */
typedef struct Divergent {
    TsPassCtx *cx;
    TS_VEC(const IrVar *) tvars; /* lets whose values use the thread index */
} Divergent;

static bool thread_dependent(const IrExpr *e, void *ctx) {
    const Divergent *D = ctx;
    if (e->kind != IR_E_VAR) return false;
    if (e->var->kind == IR_VAR_THREAD_IDX) return true;
    for (int i = 0; i < D->tvars.n; i++)
        if (D->tvars.v[i] == e->var) return true;
    return false;
}

/* Every T.sync_grid must be reached by every thread of the block: not in a
 * T.Parallel (or vectorized) loop, a T.ws role, or a branch or loop whose
 * condition or bounds depend on the thread index (on CUDA its bar.sync
 * would wait for threads that never come; on the C target a block would
 * arrive more than once). */
static void check_uniform(Divergent *D, const IrStmt *s, bool div) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) check_uniform(D, s->seq.v[i], div);
        return;
    case IR_S_LET:
        if (ir_expr_any(s->let.value, thread_dependent, D)) ts_vec_push(D->cx->arena, D->tvars, s->let.var);
        return;
    case IR_S_FOR:
        check_uniform(D, s->for_.body,
                      div || (s->for_.kind != IR_FOR_SERIAL && s->for_.kind != IR_FOR_UNROLL &&
                              s->for_.kind != IR_FOR_PIPELINED) ||
                          ir_expr_any(s->for_.min, thread_dependent, D) ||
                          ir_expr_any(s->for_.extent, thread_dependent, D));
        return;
    case IR_S_WHILE:
        check_uniform(D, s->while_.body, div || ir_expr_any(s->while_.cond, thread_dependent, D));
        return;
    case IR_S_IF: {
        bool d = div || ir_expr_any(s->if_.cond, thread_dependent, D);
        check_uniform(D, s->if_.then, d);
        check_uniform(D, s->if_.else_, d);
        return;
    }
    case IR_S_ROLE: check_uniform(D, s->role.body, true); return;
    default:
        if (div && (is_grid_sync(s) || block_coll(s, NULL)))
            ts_fail_at(D->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "%s where not every thread of the block reaches it (inside T.Parallel, a T.ws role, or a "
                       "branch or loop on the thread index): a grid barrier needs every thread of every block",
                       is_grid_sync(s) ? "T.sync_grid()" : "a collective between blocks");
        return;
    }
}

void ts_pass_split_grid(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    if (!k->body) return;
    if (ir_stmt_any(k->body, grid_sync_stmt, NULL) || ir_stmt_any(k->body, block_coll, NULL)) {
        Divergent D = {cx, {0}};
        check_uniform(&D, k->body, false);
    }
    if (ir_stmt_any(k->body, block_coll, NULL)) make_cooperative(k);
    if (!ir_stmt_any(k->body, grid_sync_stmt, NULL)) return;
    IrStmt *body = k->body;
    int at = -1;
    if (body->kind == IR_S_SEQ && !k->cooperative)
        for (int i = 0; i < body->seq.n && at < 0; i++)
            if (is_grid_sync(body->seq.v[i])) at = i;
    if (at < 0) {
        make_cooperative(k);
        return;
    }
    IrStmt **v = body->seq.v;
    int n = body->seq.n;
    Marks before = {cx->diag, TS_NEWN(cx->arena, char, k->next_id + 1), k->next_id + 1};
    Marks after = {cx->diag, TS_NEWN(cx->arena, char, k->next_id + 1), k->next_id + 1};
    if (!can_split(cx, v, n, at, &before, &after)) {
        make_cooperative(k);
        return;
    }
    /* the second kernel's body: its buffers' allocs, the lets it needs, the rest */
    IrStmt *seq2 = ir_seq(cx->arena);
    IrStmt *seq1 = ir_seq(cx->arena);
    for (int i = 0; i < at; i++) {
        IrStmt *s = v[i];
        if (s->kind == IR_S_ALLOC && !before.used[root_of(s->alloc.buf)->id] && after.used[root_of(s->alloc.buf)->id]) {
            ir_seq_push(cx->arena, seq2, s);
            continue;
        }
        if (s->kind == IR_S_LET) {
            bool needed = false;
            for (int j = at + 1; j < n && !needed; j++) needed = ir_stmt_uses_var(v[j], s->let.var);
            if (needed) ir_seq_push(cx->arena, seq2, s); /* computed again by the second kernel (can_split) */
        }
        ir_seq_push(cx->arena, seq1, s);
    }
    for (int i = at + 1; i < n; i++) ir_seq_push(cx->arena, seq2, v[i]);
    IrKernel *k2 = ir_kernel_new(cx->arena, k->name);
    k2->body = seq2;
    k2->next_id = k->next_id; /* above every id the two share (the parameters') */
    k2->ngrid = k->ngrid;
    for (int i = 0; i < 3; i++) {
        k2->grid[i] = k->grid[i];
        k2->block_idx[i] = k->block_idx[i];
        k2->threads[i] = k->threads[i];
    }
    for (int i = 0; i < k->params.n; i++) ts_vec_push(cx->arena, k2->params, k->params.v[i]);
    for (int i = 0; i < k->shape_vars.n; i++) ts_vec_push(cx->arena, k2->shape_vars, k->shape_vars.v[i]);
    /* buffers: the globals in both, block-local storage (and its views) where used */
    int keep = 0;
    for (int i = 0; i < k->buffers.n; i++) {
        IrBuffer *b = k->buffers.v[i];
        const IrBuffer *r = root_of(b);
        bool to2 = r->scope != IR_SCOPE_GLOBAL && after.used[r->id] && !before.used[r->id];
        if (b->scope == IR_SCOPE_GLOBAL || to2) ts_vec_push(cx->arena, k2->buffers, b);
        if (b->scope == IR_SCOPE_GLOBAL || !to2) k->buffers.v[keep++] = b;
    }
    k->buffers.n = keep;
    k2->swizzle_panel = k->swizzle_panel;
    memcpy(k2->cluster, k->cluster, sizeof k->cluster);
    k2->cluster_loc = k->cluster_loc;
    k2->swizzle_col = k->swizzle_col;
    k2->may_block = k->may_block;
    k2->fast_math = k->fast_math;
    k2->user_sync = k->user_sync;
    k2->extern_src = k->extern_src; /* the imported source serves both halves' calls */
    k2->extern_loc = k->extern_loc;
    k->body = seq1;
    k2->next = k->next;
    k->next = k2;
}
