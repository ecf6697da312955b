/*
 * split_grid.c — T.sync_grid() as a kernel boundary.
 *
 * TileLang's T.sync_grid() is a barrier of every thread of every block of
 * the grid (CUDA's cooperative-groups grid sync): it needs a cooperative
 * launch with every block resident at once, which this compiler does not
 * build (nor could the C target's scheduler promise it).  Where the
 * barrier stands at the top level of the kernel body and no block-local
 * state (a shared, fragment or local buffer, an alloc_var, a let) is used
 * on both sides of it, the barrier is exactly a kernel boundary: what the
 * blocks wrote to global memory before it is what the blocks after it
 * read, and nothing else crosses.  So this pass, the first of the
 * pipeline, cuts the body there: the statements after the barrier become
 * a second kernel of the chain (IrKernel.next: launched after this one on
 * the same grid, as a prim_func with two T.Kernel blocks is), with the
 * alloc statements of the buffers only it uses and copies of the
 * top-level lets it needs whose values read no memory (block indices and
 * constants: `tile_id = sm_num * w + block_id` style values).  The second
 * kernel runs the whole pipeline in its turn (this pass included, for a
 * second barrier).  TileLang's persistent MLA decode
 * (examples/deepseek_mla/example_mla_decode_persistent.py) is the case.
 *
 * Refused, naming the barrier: a T.sync_grid() below the top level (in a
 * loop or a branch: only a cooperative launch could run it), and state
 * used on both sides (its contents would not survive the boundary).
 */
#include "pass/pass.h"

#include <string.h>

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

void ts_pass_split_grid(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    if (!ir_stmt_any(k->body, grid_sync_stmt, NULL)) return;
    IrStmt *body = k->body;
    int at = -1;
    if (body->kind == IR_S_SEQ)
        for (int i = 0; i < body->seq.n && at < 0; i++)
            if (is_grid_sync(body->seq.v[i])) at = i;
    if (at < 0) {
        /* somewhere below the top level: the first one, for the message */
        const IrStmt *s = NULL;
        IrStmt *stack[64];
        int sp = 0;
        stack[sp++] = body;
        while (sp && !s) { /* (a shallow search: the message needs a place, not the exact first) */
            IrStmt *t = stack[--sp];
            if (is_grid_sync(t)) s = t;
            else if (t->kind == IR_S_SEQ)
                for (int i = t->seq.n - 1; i >= 0 && sp < 64; i--) stack[sp++] = t->seq.v[i];
            else if (t->kind == IR_S_FOR && sp < 64) stack[sp++] = t->for_.body;
            else if (t->kind == IR_S_WHILE && sp < 64) stack[sp++] = t->while_.body;
            else if (t->kind == IR_S_ROLE && sp < 64) stack[sp++] = t->role.body;
            else if (t->kind == IR_S_IF) {
                if (t->if_.else_ && sp < 64) stack[sp++] = t->if_.else_;
                if (sp < 64) stack[sp++] = t->if_.then;
            }
        }
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, s ? s->loc : body->loc,
                   "T.sync_grid() inside a loop or a branch: a grid-wide barrier there needs a cooperative launch "
                   "(cuLaunchCooperativeKernel, every block resident at once), which is not built; at the top level "
                   "of the kernel body it ends one launch and starts the next");
    }
    TsLoc where = body->seq.v[at]->loc;
    IrStmt **v = body->seq.v;
    int n = body->seq.n;
    /* block-local storage on each side */
    Marks before = {cx->diag, TS_NEWN(cx->arena, char, k->next_id + 1), k->next_id + 1};
    Marks after = {cx->diag, TS_NEWN(cx->arena, char, k->next_id + 1), k->next_id + 1};
    mark_list(&before, v, at);
    mark_list(&after, v + at + 1, n - at - 1);
    for (int i = 0; i < k->buffers.n; i++) {
        const IrBuffer *b = k->buffers.v[i];
        if (b->scope == IR_SCOPE_GLOBAL || b->base) continue;
        if (before.used[b->id] && after.used[b->id])
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, where,
                       "T.sync_grid(): '%s' (%s, declared at line %d) is used on both sides of the grid barrier; "
                       "this compiler ends one launch there and starts the next (a cooperative launch is not "
                       "built), so block-local contents do not survive it: keep what crosses in global memory",
                       b->name, ir_scope_name(b->scope), b->loc.line);
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
            if (needed) {
                if (ir_expr_any(s->let.value, is_load, NULL))
                    ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, where,
                               "T.sync_grid(): '%s' (line %d) reads memory before the grid barrier and is used after "
                               "it; this compiler ends one launch there and starts the next (a cooperative launch "
                               "is not built): read it again after the barrier",
                               s->let.var->name, s->loc.line);
                ir_seq_push(cx->arena, seq2, s); /* computed again by the second kernel */
            }
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
    k2->swizzle_col = k->swizzle_col;
    k2->may_block = k->may_block;
    k2->fast_math = k->fast_math;
    k2->user_sync = k->user_sync;
    k->body = seq1;
    k2->next = k->next;
    k->next = k2;
}
