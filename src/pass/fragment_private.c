/*
 * fragment_private.c — fragments that only single threads touch become
 * each thread's private registers.
 *
 * A fragment (T.alloc_fragment) is the block's tile spread over its
 * threads: T.Parallel loops and tile operators (copy, fill, gemm, reduce)
 * say which thread holds which element.  A fragment that none of them
 * touch, accessed only by element loads and stores outside T.Parallel
 * loops, has no such distribution: every thread that runs an access reads
 * or writes the element for itself, as TileLang's fully replicated layout
 * has it (each thread holds the whole buffer).  deepseek_v32's seesaw
 * sparse MLA keeps each producer thread's prefetched row indices so
 * (`prefetch_indices = T.alloc_fragment([num_stages, 4], ...)` written and
 * read under `if tx >= 256`, each thread its own rows).  Such a fragment
 * becomes a local buffer (IR_SCOPE_LOCAL): registers of each thread on
 * CUDA, a copy per thread where the C target's thread ranges need one
 * (thread_loops_c).  Left as a fragment it would be one tile shared by the
 * threads (layout inference gives up on an access outside a T.Parallel
 * loop: every fragment of the kernel then stays in shared memory) and the
 * threads' writes of their own values would race.
 *
 * Runs after simplify, before anything lowers tile operators, on both
 * targets.  A fragment that is the base of a view, or a view, is left alone.
 */
#include "ir/walk.h"
#include "pass/pass.h"

typedef struct FpState {
    IrKernel *k;
    unsigned char *bad;  /* per buffer id: touched by a tile op or inside T.Parallel */
    unsigned char *used; /* per buffer id: accessed at all */
    int parallel;        /* T.Parallel loops around the statement being walked */
} FpState;

static bool fp_pre(IrVisitor *v, const IrStmt *s) {
    FpState *st = v->ctx;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PARALLEL) st->parallel++;
    return true;
}

static void fp_post(IrVisitor *v, const IrStmt *s) {
    FpState *st = v->ctx;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PARALLEL) st->parallel--;
}

static void fp_access(IrVisitor *v, const IrAccess *acc) {
    FpState *st = v->ctx;
    const IrBuffer *b = acc->buf;
    if (b->id < 0 || b->id >= st->k->next_id) return;
    st->used[b->id] = 1;
    if (acc->region || acc->lanes > 1 || st->parallel) st->bad[b->id] = 1;
}

void ts_pass_fragment_private(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    int n = k->next_id > 0 ? k->next_id : 1;
    FpState st = {k, TS_NEWN(cx->arena, unsigned char, n), TS_NEWN(cx->arena, unsigned char, n), 0};
    IrVisitor v = {.ctx = &st, .pre_stmt = fp_pre, .post_stmt = fp_post, .access = fp_access};
    ir_visit_stmt(&v, k->body);
    for (int i = 0; i < k->buffers.n; i++) {
        IrBuffer *b = k->buffers.v[i];
        if (b->base && b->base->id >= 0 && b->base->id < n) st.bad[b->base->id] = 1;
    }
    for (int i = 0; i < k->buffers.n; i++) {
        IrBuffer *b = k->buffers.v[i];
        if (b->scope != IR_SCOPE_FRAGMENT || b->base || b->id < 0 || b->id >= n || !st.used[b->id] || st.bad[b->id])
            continue;
        b->scope = IR_SCOPE_LOCAL;
    }
}
