/*
 * poll_marks.c — the memory order of blocking kernels, as marks on the IR.
 *
 * Why: a blocking kernel (IrKernel.may_block: its blocks wait for each
 * other, or for other ranks, through global memory) spins in while loops
 * on words that another agent writes.  The spin must read the word anew
 * every iteration, must see the data the writer stored before the word,
 * and, on the C target, where the blocks run as coroutines of a few
 * threads, must give the writer a chance to run.  These choices were made
 * by the CUDA and C printers from IrKernel.may_block and the loop nesting
 * they were printing; this pass makes them on the IR, once for both
 * targets, and the printers print the marks it leaves (doc/ARCHITECTURE.md,
 * "the code generator prints what the IR says").
 *
 * What (the marks, ir/ir.h):
 *  - IrExpr load.acquire: every load of global memory inside a while loop
 *    (its condition or body, at any depth) of a blocking kernel: a polling
 *    load (CUDA volatile, C __atomic acquire);
 *  - IrStmt while_.poll: a while loop of a blocking kernel that reads
 *    global memory (some other agent may be what it waits for), and every
 *    while loop of a C thread_coro kernel (the threads of the block run as
 *    coroutines: the awaited thread may be in the same block); the C
 *    target yields each iteration;
 *  - IrStmt store.release: every store to global memory of a blocking
 *    kernel (a flag stored after data publishes the data: CUDA
 *    __threadfence() then a volatile store, C a release store);
 *  - IrStmt barrier.release: every block barrier (id 0) of a blocking
 *    kernel (CUDA: a __threadfence() first, so that a flag one thread
 *    stores after insert_sync's barrier follows the whole block's data).
 *
 * The after-loop fence of a flag loop (while_.acquire) is partition_threads'
 * mark, made where it builds the loop.  Runs after every pass that makes
 * loads, stores, loops or barriers (late, before arch_hints), on both
 * targets.
 */
#include "ir/walk.h"
#include "pass/pass.h"

typedef struct Marks {
    bool block; /* the kernel may block (IrKernel.may_block) */
    bool coro;  /* the C target runs its threads as coroutines (IrKernel.thread_coro) */
} Marks;

/* Global memory another agent may write or read. */
static bool is_global(const IrBuffer *b) { return b->scope == IR_SCOPE_GLOBAL; }

static bool in_while(const IrMutator *m) {
    for (const IrWalkFrame *f = m->frame; f; f = f->up)
        if (f->s->kind == IR_S_WHILE) return true;
    return false;
}

static IrExpr *mark_load(IrMutator *m, IrExpr *e) {
    const Marks *k = m->ctx;
    if (e->kind != IR_E_LOAD || e->load.acquire || !k->block || !is_global(e->load.buf) || !in_while(m)) return e;
    IrExpr *r = TS_NEW(m->arena, IrExpr);
    *r = *e;
    r->load.acquire = true;
    return r;
}

static IrStmt *mark_stmt(IrMutator *m, IrStmt *s) {
    const Marks *k = m->ctx;
    bool poll = s->kind == IR_S_WHILE && !s->while_.poll &&
                (k->coro || (k->block && (ir_stmt_access_rw(s, NULL, 1u << IR_SCOPE_GLOBAL) & IR_ACC_READ)));
    bool release = k->block && s->kind == IR_S_STORE && !s->store.release && is_global(s->store.buf);
    bool bar = k->block && s->kind == IR_S_BARRIER && !s->barrier.id && !s->barrier.idv && !s->barrier.release;
    if (!poll && !release && !bar) return s;
    IrStmt *r = TS_NEW(m->arena, IrStmt);
    *r = *s;
    if (poll) r->while_.poll = true;
    if (release) r->store.release = true;
    if (bar) r->barrier.release = true;
    return r;
}

void ts_pass_poll_marks(TsPassCtx *cx) {
    Marks k = {cx->k->may_block, cx->target == TS_TARGET_C && cx->k->thread_coro};
    if (!k.block && !k.coro) return;
    IrMutator m = {.arena = cx->arena, .ctx = &k, .post_expr = mark_load, .post_stmt = mark_stmt};
    cx->k->body = ir_mutate_stmt(&m, cx->k->body);
}
