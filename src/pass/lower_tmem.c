/*
 * lower_tmem.c — the pass that places Blackwell tensor memory
 * (T.alloc_tmem, IR_SCOPE_TMEM) and decides how T.tcgen05_gemm runs.
 *
 * Facts used (tile-ai/tilelang at a35008a: tilelang/language/allocate.py,
 * gemm_op.py): T.alloc_tmem(shape, dtype) allocates a tile in tensor
 * memory, which only tcgen05.mma and the tcgen05 load/store instructions
 * (T.copy between tensor memory and fragments) touch; T.tcgen05_gemm(A, B,
 * C, transpose_A, transpose_B, policy, clear_accum, mbar=) issues
 * tcgen05.mma (C, and optionally A, in tensor memory; B in shared memory)
 * without waiting, and when the multiply has completed the hardware
 * arrives once on the mbarrier `mbar` (none with mbar=None); the program
 * waits on it with T.mbarrier_wait_parity before it reads C.
 *
 * A target with tensor memory would keep the scope and the gemm as they
 * are, for its code generator (tcgen05.alloc / mma / commit / ld: the
 * native branch, tmem_native() below, not built).  On every target today
 * (the C target; CUDA up to sm_90a, the H200) the portable branch runs:
 *
 *  - A tensor-memory tile becomes a register fragment of the threads that
 *    use it.  That is sound when all its uses are in one group's uniform
 *    code: the block's (outside every role and thread-dependent branch) or
 *    one T.ws role's (thread_roles made `if tid < n:` branches roles
 *    before this pass): a fragment lives on one set of threads, and T.copy
 *    between it and other fragments is then a register copy or re-layout,
 *    which layout inference already does.  A tile used by two groups (TileLang's
 *    warp-specialized flash attention: the softmax warps write P and O, an
 *    mma warp multiplies them), or under thread-dependent control flow, is
 *    refused with the two places: registers cannot carry data from one
 *    set of threads to another.  With TsCaps.tmem_shared
 *    (TILESCALE_TMEM_SHARED=1; off until the H200's compute-sanitizer
 *    passes it) a tile of two groups stays a fragment, which layout
 *    inference keeps in shared memory (its choice for any fragment two
 *    roles share), the program's mbarriers ordering the hand-over.  (The
 *    racecheck hazards that made session 10 refuse it again came from the
 *    mma role's one arrive being lane 0's only: partition_threads now has
 *    every thread of such a role arrive, doc/LANGUAGE.md "Tensor memory".)
 *  - T.tcgen05_gemm becomes T.gemm on the same operands (transposes,
 *    clear_accum, policy; an A in tensor memory is now a register A
 *    operand), which is done when it ends, followed by the arrive the
 *    hardware would make: one arrival in all on `mbar` (IR_MBAR_ARRIVE_ONE;
 *    partition_threads gives it to the group's first thread), so the
 *    program's T.mbarrier_wait_parity(mbar, k % 2) keeps its phases.
 *
 * It runs after thread_roles (roles are known) and before every pass that
 * reads scopes (check_bounds, pipeline planning, layout inference), on
 * every target; after it no IR_SCOPE_TMEM buffer and no tcgen05 gemm is
 * left (pass verify_lowered would otherwise see a gemm kept for no
 * instruction).  `--dump-after lower_tmem` shows the result.
 */
#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"

#include <string.h>

/* Does the target have tensor memory and tcgen05 (sm_100a and later)?  The
 * native lowering is not built: every target takes the portable branch. */
static bool tmem_native(const TsCaps *caps) {
    (void)caps;
    return false;
}

/* Where a use of a tensor-memory tile runs. */
typedef struct Use {
    const IrStmt *group;  /* the enclosing T.ws role, NULL: the block's uniform code */
    const IrStmt *branch; /* a thread-dependent if/while/loop around it, or NULL */
    TsLoc loc;            /* the using statement's */
    bool seen;            /* (first[]: a use was recorded) */
} Use;

typedef struct Tmem {
    TsPassCtx *cx;
    uint8_t *varying;     /* by var id: its value differs between threads */
    Use *first;           /* by buffer id: the first use seen (loc.src NULL: none yet) */
    bool any;
} Tmem;

static bool varying_node(const IrExpr *e, void *ctx) {
    const Tmem *t = ctx;
    return e->kind == IR_E_VAR && (e->var->kind == IR_VAR_THREAD_IDX || t->varying[e->var->id]);
}

static bool expr_varies(const Tmem *t, const IrExpr *e) { return e && ir_expr_any(e, varying_node, (void *)t); }

/* Lets whose value depends on the thread index (`tid = T.get_thread_binding()`
 * is the variable itself; `w = tid // 32` a let of it), in program order. */
static bool mark_let(const IrStmt *s, void *ctx) {
    Tmem *t = ctx;
    if (s->kind == IR_S_LET && expr_varies(t, s->let.value)) t->varying[s->let.var->id] = 1;
    return false;
}

static Use use_here(const Tmem *t, const IrWalkFrame *f, TsLoc loc) {
    Use u = {.loc = loc};
    for (; f; f = f->up) {
        const IrStmt *s = f->s;
        if (s->kind == IR_S_ROLE && !u.group) u.group = s;
        if (u.group) continue; /* (the role's own threads decide below it) */
        if ((s->kind == IR_S_IF && expr_varies(t, s->if_.cond)) ||
            (s->kind == IR_S_WHILE && expr_varies(t, s->while_.cond)) ||
            (s->kind == IR_S_FOR && (s->for_.kind == IR_FOR_THREAD || expr_varies(t, s->for_.min) ||
                                     expr_varies(t, s->for_.extent))))
            u.branch = s;
    }
    return u;
}

static const char *group_name(TsPassCtx *cx, const Use *u) {
    if (u->branch) return "per-thread code (a branch or loop on the thread index)";
    if (!u->group) return "the block's uniform code";
    return ts_sprintf(cx->arena, "the thread role of threads [%d, %d)", u->group->role.lo,
                      u->group->role.lo + u->group->role.n);
}

static void tmem_access(IrVisitor *v, const IrAccess *acc) {
    Tmem *t = v->ctx;
    const IrBuffer *b = acc->buf->base ? acc->buf->base : acc->buf;
    if (b->scope != IR_SCOPE_TMEM) return;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    TsLoc loc = s ? s->loc : b->loc;
    Use u = use_here(t, v->frame, loc);
    TsPassCtx *cx = t->cx;
    if (u.branch)
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, loc,
                   "tensor memory '%s' is used under a branch or loop on the thread index (line %d); this target "
                   "has no tensor memory and keeps the tile in registers of the threads that use it, which must "
                   "run it as uniform code (the block's or one T.ws role's)",
                   b->name, u.branch->loc.line);
    Use *f = &t->first[b->id];
    if (!f->seen) {
        *f = u;
        f->seen = true;
        return;
    }
    if (f->group != u.group && !(cx->caps && cx->caps->tmem_shared))
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, loc,
                   "tensor memory '%s' is used here by %s and at line %d by %s; this target has no tensor memory "
                   "and keeps the tile in registers, which cannot carry it from one set of threads to another "
                   "(use it in one role, or pass it through T.alloc_shared)",
                   b->name, group_name(cx, &u), f->loc.line, group_name(cx, f));
}

/* A tcgen05 gemm's arrive, or T.tcgen05_mma_arrive's, must be made by one group: not under
 * per-thread control flow. */
static bool tmem_pre(IrVisitor *v, const IrStmt *s) {
    Tmem *t = v->ctx;
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->tcgen05) {
        t->any = true;
        Use u = use_here(t, v->frame->up, s->loc);
        if (u.branch && s->op->mbar)
            ts_fail_at(t->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "T.tcgen05_gemm with mbar= under a branch or loop on the thread index (line %d): its one "
                       "arrive on the mbarrier is made for the group running the gemm, which must run it as "
                       "uniform code (the block's or one T.ws role's)",
                       u.branch->loc.line);
    }
    if (s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_ARRIVE_ONE) { /* T.tcgen05_mma_arrive */
        Use u = use_here(t, v->frame->up, s->loc);
        if (u.branch)
            ts_fail_at(t->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "T.tcgen05_mma_arrive under a branch or loop on the thread index (line %d): its one arrive "
                       "on the mbarrier is made for the group running it, which must run it as uniform code (the "
                       "block's or one T.ws role's)",
                       u.branch->loc.line);
    }
    return true;
}

/* The portable branch: a gemm done when it ends, then the hardware's arrive. */
static IrStmt *arrive_after(TsArena *a, IrStmt *g) {
    IrTileOp *op = g->op;
    op->tcgen05 = 0;
    if (!op->mbar) return NULL;
    IrStmt *ar = ir_stmt(a, IR_S_MBAR, g->loc);
    ar->mbar.op = IR_MBAR_ARRIVE_ONE;
    ar->mbar.buf = op->mbar;
    ar->mbar.idx = op->args[0];
    op->mbar = NULL;
    op->args[0] = NULL;
    return ar;
}

static bool is_tc_gemm(const IrStmt *s) {
    return s && s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->tcgen05;
}

static IrStmt *portable_post(IrMutator *m, IrStmt *s) {
    if (s->kind == IR_S_SEQ) {
        int n = 0;
        for (int i = 0; i < s->seq.n; i++) n += is_tc_gemm(s->seq.v[i]) && s->seq.v[i]->op->mbar;
        if (!n) {
            for (int i = 0; i < s->seq.n; i++)
                if (is_tc_gemm(s->seq.v[i])) s->seq.v[i]->op->tcgen05 = 0;
            return s;
        }
        IrStmt *q = ir_seq(m->arena);
        q->loc = s->loc;
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *c = s->seq.v[i];
            ir_seq_push(m->arena, q, c);
            if (is_tc_gemm(c)) {
                IrStmt *ar = arrive_after(m->arena, c);
                if (ar) ir_seq_push(m->arena, q, ar);
            }
        }
        return q;
    }
    if (is_tc_gemm(s)) { /* a gemm that is not in a statement list: make it one */
        IrStmt *ar = arrive_after(m->arena, s);
        if (!ar) return s;
        IrStmt *q = ir_seq(m->arena);
        q->loc = s->loc;
        ir_seq_push(m->arena, q, s);
        ir_seq_push(m->arena, q, ar);
        return q;
    }
    return s;
}

void ts_pass_lower_tmem(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    bool has = false;
    for (int i = 0; i < k->buffers.n; i++) has |= k->buffers.v[i]->scope == IR_SCOPE_TMEM;
    Tmem t = {.cx = cx};
    int nid = k->next_id > 0 ? k->next_id : 1;
    t.varying = TS_NEWN(cx->arena, uint8_t, nid);
    t.first = TS_NEWN(cx->arena, Use, nid);
    ir_stmt_any(k->body, mark_let, &t);
    IrVisitor v = {.ctx = &t, .pre_stmt = tmem_pre, .access = has ? tmem_access : NULL};
    ir_visit_stmt(&v, k->body);
    if (!has && !t.any) return;
    if (tmem_native(cx->caps))
        ts_internal(cx->diag, "kernel %s: the native tensor-memory lowering is not built", k->name);
    /* portable: tensor memory -> register fragments of their one group */
    for (int i = 0; i < k->buffers.n; i++)
        if (k->buffers.v[i]->scope == IR_SCOPE_TMEM) k->buffers.v[i]->scope = IR_SCOPE_FRAGMENT;
    IrMutator m = {.arena = cx->arena, .post_stmt = portable_post};
    k->body = ir_mutate_stmt(&m, k->body);
    if (!k->body) k->body = ir_seq(cx->arena);
}
