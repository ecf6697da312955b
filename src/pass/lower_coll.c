/*
 * lower_coll.c — the pass that expands every tile-level collective
 * (TS_OP_COLL: T.allreduce, T.allgather, T.reduce_scatter, T.all_to_all,
 * between the ranks of the world or between the warps / warpgroups of a
 * block) into copies, barriers and loops (op/coll.c builds them; issue 6:
 * decisions belong in passes, the elaborator only records the op).
 *
 * It runs on every target after check_bounds and (CUDA) pipeline_planning,
 * which sees the op with its regions, and before shared_to_fragment and
 * lower_tile_ops: the expansion is made of ordinary tile ops
 * (T.copy, T.fill, remote copies, world barriers) and T.Parallel loops,
 * which those passes lower as any others.  Each op's expansion (a
 * sequence) is spliced into the sequence that held the op, so the IR
 * after this pass is the one the elaborator used to write.
 */
#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

typedef struct LowerColl {
    TsLowerCtx lx;            /* what the expansion gets */
    TS_VEC(const IrStmt *) made; /* the expansions made (sequences to splice into their parent) */
} LowerColl;

static bool is_coll(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op && s->op->kind == TS_OP_COLL;
}

static bool was_made(const LowerColl *L, const IrStmt *s) {
    for (int i = 0; i < L->made.n; i++)
        if (L->made.v[i] == s) return true;
    return false;
}

static IrStmt *coll_post(IrMutator *m, IrStmt *s) {
    LowerColl *L = m->ctx;
    if (is_coll(s, NULL)) {
        IrStmt *x = ts_op_coll_lower(&L->lx, s);
        ts_vec_push(m->arena, L->made, x);
        return x;
    }
    if (s->kind != IR_S_SEQ) return s;
    bool any = false;
    for (int i = 0; i < s->seq.n && !any; i++) any = was_made(L, s->seq.v[i]);
    if (!any) return s;
    IrStmt *r = ir_seq(m->arena); /* (s may be the mutator's copy or the original: build anew) */
    r->loc = s->loc;
    for (int i = 0; i < s->seq.n; i++) {
        const IrStmt *c = s->seq.v[i];
        if (!was_made(L, c)) {
            ir_seq_push(m->arena, r, s->seq.v[i]);
            continue;
        }
        for (int j = 0; j < c->seq.n; j++) ir_seq_push(m->arena, r, c->seq.v[j]);
    }
    return r;
}

void ts_pass_lower_coll(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    if (!k->body || !ir_stmt_any(k->body, is_coll, NULL)) return;
    LowerColl L = {{cx->diag, cx->arena, k, cx->target, cx->caps}, {0}};
    IrMutator m = {.arena = cx->arena, .ctx = &L, .post_stmt = coll_post};
    k->body = ir_mutate_stmt(&m, k->body);
}
