/*
 * thread_roles.c — the pass that turns thread-range branches into T.ws
 * roles (IR_S_ROLE), so that warp-specialized kernels written with the
 * thread index read like TileLang's (TileScale's sp_ag_attention,
 * DeepSeek's MLA decoders):
 *
 *     tid = T.get_thread_binding(0)
 *     if tid < 256:              # consumers: gemms, reductions on 256 threads
 *         ...
 *     elif tid < 384:            # producer: copies into shared tiles
 *         ...
 *
 * In TileLang the tile ops inside such a branch are the work of the
 * branch's threads (its warp-specialization pass partitions them over that
 * thread range).  Here such a branch would otherwise be thread-dependent
 * control flow, which partition_threads runs per thread, where a tile op (a
 * copy nest, a tensor-core gemm) cannot go.  So an `if` of uniform code
 * whose condition depends on the thread index alone, and whose branches
 * hold tile ops, becomes a role per branch (T.Parallel nests in it are then
 * spread over the branch's threads): the
 * threads where the condition holds run the `then` part, the others the
 * `else` part (an `elif` chain narrows the rest further).  Each branch's
 * threads must be one range of whole warps (the role's named barrier and
 * its gemm's warps need that); otherwise the `if` is left as it is (and
 * fails later where a tile op cannot be per thread, as before).  Branches
 * with no tile op are left alone too: they are ordinary per-thread code
 * (a T.Parallel nest there is run whole by each thread, as before).
 *
 * The thread set of a condition is found by evaluating it for every thread
 * of the block (at most 1024): substituting the thread index variables
 * (T.get_thread_binding(0..2), the flat index) by constants folds it to a
 * constant when it depends on nothing else.
 *
 * It runs right after simplify on every target: the C target runs the
 * roles too (its mbarrier model counts a role's arrivals by its threads).
 */
#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"

#include <string.h>

typedef struct Roles {
    TsPassCtx *cx;
    IrKernel *k;
    TsArena *a;
    int64_t nt;          /* threads per block */
    IrVar *tv[4];        /* the thread index variables the kernel uses (axes 0..2, the flat index) */
    int ntv;             /* how many */
} Roles;

static bool collect_tvar(const IrExpr *e, void *ctx) {
    Roles *r = ctx;
    if (e->kind == IR_E_VAR && e->var->kind == IR_VAR_THREAD_IDX) {
        for (int i = 0; i < r->ntv; i++)
            if (r->tv[i] == e->var) return false;
        if (r->ntv < 4) r->tv[r->ntv++] = e->var;
    }
    return false;
}

/* Any variable but the thread index, or any load: the condition is not a
 * function of the thread alone. */
static bool other_node(const IrExpr *e, void *ctx) {
    (void)ctx;
    if (e->kind == IR_E_LOAD || e->kind == IR_E_CALL) return true;
    return e->kind == IR_E_VAR && e->var->kind != IR_VAR_THREAD_IDX;
}

/* The threads (byte per thread) for which cond holds, or false when cond
 * is not a function of the thread index alone. */
static bool thread_set(Roles *r, const IrExpr *cond, uint8_t *set) {
    r->ntv = 0;
    ir_expr_any(cond, collect_tvar, r);
    if (!r->ntv || ir_expr_any(cond, other_node, NULL)) return false;
    const IrKernel *k = r->k;
    for (int64_t t = 0; t < r->nt; t++) {
        IrExpr *to[4];
        for (int i = 0; i < r->ntv; i++) {
            const IrVar *v = r->tv[i];
            int64_t x = v->axis == 0 ? t % k->threads[0]
                        : v->axis == 1 ? (t / k->threads[0]) % k->threads[1]
                        : v->axis == 2 ? t / ((int64_t)k->threads[0] * k->threads[1])
                                       : t; /* the flat index (ir_kernel_tid: axis -1) */
            to[i] = ir_int(r->a, x, v->dt);
        }
        IrExpr *c = ir_subst(r->a, (IrExpr *)cond, r->tv, to, r->ntv);
        int64_t val;
        if (!ir_is_const_int(c, &val)) return false;
        set[t] = val != 0;
    }
    return true;
}

/* The one range [lo, hi) of whole warps that set is, or false. */
static bool warp_range(const Roles *r, const uint8_t *set, int *lo, int *hi) {
    int64_t a = -1, b = -1;
    for (int64_t t = 0; t < r->nt; t++)
        if (set[t]) {
            if (a < 0) a = t;
            else if (b >= 0) return false; /* a second range */
        } else if (a >= 0 && b < 0) {
            b = t;
        }
    if (a < 0) return false;
    if (b < 0) b = r->nt;
    if (a % 32 || b % 32) return false;
    *lo = (int)a;
    *hi = (int)b;
    return true;
}

static bool collective(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP;
}

static IrStmt *role(Roles *r, int lo, int hi, IrStmt *body, TsLoc loc) {
    IrStmt *s = ir_stmt(r->a, IR_S_ROLE, loc);
    s->role.lo = lo;
    s->role.n = hi - lo;
    s->role.id = 1; /* (insert_sync numbers them) */
    s->role.body = body ? body : ir_seq(r->a);
    return s;
}

/* `if` s over the threads in dom (byte per thread) as roles appended to
 * out; false (out unchanged in meaning: the caller drops it) when some
 * branch's threads are not one range of whole warps. */
static bool split(Roles *r, const IrStmt *s, const uint8_t *dom, IrStmt *out) {
    uint8_t *yes = TS_NEWN(r->a, uint8_t, r->nt), *no = TS_NEWN(r->a, uint8_t, r->nt);
    if (!thread_set(r, s->if_.cond, yes)) return false;
    int any_yes = 0, any_no = 0;
    for (int64_t t = 0; t < r->nt; t++) {
        no[t] = dom[t] && !yes[t];
        yes[t] = dom[t] && yes[t];
        any_yes |= yes[t];
        any_no |= no[t];
    }
    int lo, hi;
    if (any_yes) {
        if (!warp_range(r, yes, &lo, &hi)) return false;
        ir_seq_push(r->a, out, role(r, lo, hi, s->if_.then, s->loc));
    }
    const IrStmt *e = s->if_.else_;
    while (e && e->kind == IR_S_SEQ && e->seq.n == 1) e = e->seq.v[0];
    if (!e || !any_no) return true;
    if (e->kind == IR_S_IF && thread_set(r, e->if_.cond, yes)) return split(r, e, no, out); /* elif */
    if (!warp_range(r, no, &lo, &hi)) return false;
    ir_seq_push(r->a, out, role(r, lo, hi, (IrStmt *)e, e->loc));
    return true;
}

static IrStmt *roles_pre(IrMutator *m, IrStmt *s) {
    Roles *r = m->ctx;
    switch (s->kind) {
    case IR_S_ROLE:
    case IR_S_WHILE:
        return s; /* (a role already; a while loop's code stays as written) */
    case IR_S_FOR:
        if (s->for_.kind != IR_FOR_SERIAL && s->for_.kind != IR_FOR_PIPELINED && s->for_.kind != IR_FOR_UNROLL)
            return s; /* T.Parallel bodies and thread ranges are per-element / per-thread code */
        return NULL;
    case IR_S_IF: {
        r->ntv = 0;
        ir_expr_any(s->if_.cond, collect_tvar, r);
        if (!r->ntv) return NULL; /* uniform: its branches are uniform code too */
        /* thread-dependent: roles, or per-thread code left whole (no role inside it) */
        if (!ir_stmt_any(s, collective, NULL)) return s;
        uint8_t *dom = TS_NEWN(r->a, uint8_t, r->nt);
        memset(dom, 1, (size_t)r->nt);
        IrStmt *out = ir_seq(r->a);
        out->loc = s->loc;
        return split(r, s, dom, out) ? out : s;
    }
    default: return NULL;
    }
}

void ts_pass_thread_roles(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    Roles r = {.cx = cx, .k = k, .a = cx->arena, .nt = ir_kernel_nthreads(k)};
    if (r.nt < 64 || r.nt > 1024 || !k->body) return;
    IrMutator m = {.arena = cx->arena, .ctx = &r, .pre_stmt = roles_pre};
    k->body = ir_mutate_stmt(&m, k->body);
}
