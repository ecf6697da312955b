/*
 * inject_pipeline.c — the CUDA pass that expands a planned T.Pipelined
 * loop (pipeline_planning.c: for_.stage / for_.order per top-level body
 * statement, producers' shared tiles already multi-buffered and indexed
 * [(k - min) % slots, ...]) into the pipeline itself, after lowering.
 *
 * With S the largest stage, n the trip count (any expression, evaluated
 * once) and one async group committed per pipeline step:
 *
 *     barrier                                  (slots may still be read by
 *                                               an earlier use of the loop)
 *     step t = 0 .. S-1 (prologue):            statements with s_i <= t,
 *         [async_wait(W); barrier]             for iteration t - s_i,
 *         stmt_i(k = min + t - s_i)            each guarded by t - s_i < n
 *         async_commit()
 *     for k in serial(min, n):                 (steady state, epilogue folded in)
 *         async_wait(W)                        the oldest group in use is done
 *         barrier                              its data visible to all threads,
 *                                              and every thread done with the
 *                                              slot about to be refilled
 *         stmt_i(k = k + S - s_i)              in the planned order; stages
 *                                              before S guarded by
 *                                              k + S - s_i < min + n
 *         async_commit()
 *     async_wait(0)
 *
 * For the default plan (copies in stage 0, the rest in stage s - 1 = S)
 * the prologue issues iterations 0 .. s-2, and step k issues iteration
 * k + s - 1 right after the barrier and before computing iteration k, so
 * s - 1 copies are in flight while one computes.  W: a consumer d stages
 * after its producer needs the group committed d steps before the
 * current one; with one commit per step, d - 1 newer groups may still be
 * pending: W = (smallest such d) - 1 (s - 2 by default).  Guarded-off
 * producers still commit (an empty group), so the count holds for every
 * trip count, including n < S and n = 0 (nothing issued, nothing run).
 * Why one barrier per step suffices: a slot refilled at step t was last
 * read at step t - 1 or earlier (slots = largest distance + 1), and the
 * barrier of step t separates the two.
 *
 * Loops whose producers stayed synchronous (the copy lowering declined)
 * get the same structure without commits and waits.  Loops that were
 * not planned are untouched.
 */
#include <string.h>

#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

typedef TS_VEC(const IrBuffer *) BufVec; /* a list of buffers */

/* Buffers that async vector copies in s write (appended to out). */
typedef struct Dsts {
    TsArena *a;    /* where the list grows */
    BufVec *out;   /* the list */
    bool all;      /* every vector copy, not only the async ones */
} Dsts;

static bool dst_pre(IrVisitor *v, const IrStmt *s) {
    Dsts *d = v->ctx;
    if (s->kind == IR_S_VCOPY && (d->all || s->vcopy.async)) ts_vec_push(d->a, *d->out, s->vcopy.dst);
    return true;
}

static void vcopy_dsts_of(const IrStmt *s, TsArena *a, BufVec *out, bool all) {
    Dsts d = {a, out, all};
    IrVisitor v = {.ctx = &d, .pre_stmt = dst_pre};
    ir_visit_stmt(&v, s);
}

static void async_dsts(const IrStmt *s, TsArena *a, BufVec *out) { vcopy_dsts_of(s, a, out, false); }

/* Does lowered s read b: loads, kept tile ops' regions (any of them: a
 * region written counts too), vector-copy sources, printed buffers (the
 * target of a store or atomic add does not count)? */
typedef struct Reads {
    const IrBuffer *buf; /* the buffer looked for */
    bool found;          /* read somewhere */
} Reads;

static void reads_access(IrVisitor *v, const IrAccess *acc) {
    Reads *r = v->ctx;
    if (acc->buf != r->buf) return;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    bool target = !acc->e && !acc->region && s && (s->kind == IR_S_STORE || s->kind == IR_S_ATOMIC_ADD);
    if (acc->region || (!target && (acc->rw & IR_ACC_READ))) r->found = v->stop = true;
}

static bool reads(const IrStmt *s, const IrBuffer *b) {
    Reads r = {b, false};
    IrVisitor v = {.ctx = &r, .access = reads_access};
    ir_visit_stmt(&v, s);
    return r.found;
}

typedef struct Inj {
    TsPassCtx *cx; /* the pass's context (arena, kernel, diagnostics) */
    int nfrag;     /* split gemms so far (their ids are 1 .. nfrag) */
} Inj;

static IrStmt *wait_stmt(TsArena *a, int pending, TsLoc loc) {
    IrStmt *w = ir_stmt(a, IR_S_ASYNC_WAIT, loc);
    w->async_wait.pending = pending;
    return w;
}

/* stmt with the loop var replaced by `to`, under `if guard` (guard may be NULL). */
static IrStmt *shifted(TsArena *a, const IrStmt *s, IrVar *k, IrExpr *to, IrExpr *guard) {
    IrStmt *r = to ? ir_stmt_subst(a, s, &k, &to, 1) : (IrStmt *)s;
    if (!guard) return r;
    int64_t c;
    if (ir_is_const_int(guard, &c)) return c ? r : NULL;
    IrStmt *g = ir_stmt(a, IR_S_IF, s->loc);
    g->if_.cond = guard;
    g->if_.then = r;
    return g;
}

/* ---- the tensor-core gemm split across the loop's barrier ------------------------ */

/*
 * A pipelined loop whose last statement is a tensor-core gemm over the
 * stage's shared tiles (C in registers) spends, every step, the latency
 * of the barrier and of the first ldmatrix after it with the tensor cores
 * idle.  Loading the first k16 step's fragments of stage k+1 right after
 * the barrier at the end of step k, while the last k16 step of stage k
 * still multiplies, hides it (the sm_80 multistage main loops of the
 * vendor libraries do the same; here by rotating the loop):
 *
 *     [async_wait(W); barrier]                 (the loop's first)
 *     gemm PRE(k = min)                        fragments of step 0, set 0
 *     for k:
 *         producers(k + S), guarded; async_commit()
 *         gemm BODY(k)                         load step s+1, multiply step s
 *         async_wait(W); barrier               (the next step's)
 *         gemm TAIL(k -> k + 1)                load step 0 of stage k+1 into
 *                                              set 0, multiply the last step
 *     async_wait(0)
 *
 * The wait and barrier at the end of step k are those the original loop
 * had at the start of step k + 1 (nothing runs between), so the data
 * flow is the same; the last TAIL reads the fragments of a stage past the
 * end, which it never multiplies (the tiles are in bounds, only stale).
 * Two fragment sets alternate by k16 step, so K / 16 must be even for
 * step 0 to find its set in set 0 every stage.  And at least 4: with two
 * steps BODY is one step whose operands are ready at the top of the loop,
 * and ptxas issues its mma.sync before the stage's cp.async copies, a
 * k16 step later than without the split; with short K tiles the copies'
 * latency is what the loop waits for (ncu: long scoreboard), and on the
 * H200 (2026-12-01, same run) the split made 4096^3 fp16 at 128x128x32
 * 4% slower (0.348 -> 0.362 ms) while 8192^3 at 128x256x64 (four steps)
 * went 8% faster (2.742 -> 2.511 ms).  TsCaps.mma_prefetch (ts_caps.h,
 * TILESCALE_CUDA_PREFETCH) has the split (1), the split with two steps too
 * (2) and EARLY_COPY (4), the default with the split:
 *
 *     prologue: producers of iterations 0 .. S (S + 1 groups), then
 *     [async_wait(W + 1); barrier]; gemm PRE(min)
 *     for k:
 *         gemm BODY(k)
 *         async_wait(W); barrier
 *         producers(k + S + 1), guarded; async_commit()
 *         gemm TAIL(k -> k + 1)
 *
 * The slot the producers of k + S + 1 fill, k % (S + 1), was last read by
 * BODY(k) and TAIL(k - 1), both before that barrier; so the copies start
 * one k16 step (TAIL) earlier than at the top of the next step, and the
 * wait still finds its stage k + 1 W groups back.  Same run on the H200,
 * 8192^3 at 128x256x64: fp16 2.666 / 2.625 ms split, 2.573 / 2.365 with
 * EARLY_COPY (identical code measured twice: the spread between equal
 * kernels in one run was up to 12%, so these are means of a few runs at
 * best: the split about 4% faster than none, EARLY_COPY about 4% more).
 *
 * LOAD_FIRST (8), for the gemms not split (two k16 steps: 128x128x32):
 * after the loop's barrier the first step's fragments are loaded (PRE),
 * then the copies of stage k + S are issued, then the rest of the gemm
 * (REST) multiplies, so that the copies' issue overlaps the ldmatrix
 * latency instead of delaying it (the cp.async and ldmatrix asm keep
 * their order in the PTX, and ptxas does not move shared-memory loads
 * across them):
 *
 *     for k:
 *         async_wait(W); barrier
 *         gemm PRE(k)                          fragments of step 0, set 0
 *         producers(k + S), guarded; async_commit()
 *         gemm REST(k)                         load step s+1, multiply step s
 */
static bool split_gemm_ok(const IrStmt *g, const BufVec *dsts, int64_t min_k) {
    if (!g || g->kind != IR_S_TILEOP) return false;
    const IrTileOp *op = g->op;
    if (op->kind != TS_OP_GEMM || op->inst != TS_OP_INST_MMA_SYNC || op->mma_part != TS_MMA_WHOLE || op->clear_accum)
        return false;
    const IrBuffer *A = op->r[0].buf, *B = op->r[1].buf, *C = op->r[2].buf;
    if (!C->layout || C->layout->kind != IR_LAYOUT_MMA_C || A->layout || B->layout) return false;
    if (A->scope != IR_SCOPE_SHARED || B->scope != IR_SCOPE_SHARED) return false;
    bool fa = false, fb = false;
    for (int i = 0; i < dsts->n; i++) {
        fa |= dsts->v[i] == A;
        fb |= dsts->v[i] == B;
    }
    if (!fa || !fb) return false;
    const IrRegion *ra = &op->r[0];
    int64_t kk;
    if (ra->ndim < 2 || !ir_is_const_int(ra->extent[op->trans_a ? ra->ndim - 2 : ra->ndim - 1], &kk)) return false;
    return kk >= min_k && kk % 32 == 0;
}

/* s (a kept gemm) as part `part` of split gemm `id`, its loop variable k replaced by `to` (may be NULL). */
static IrStmt *gemm_part(TsArena *a, const IrStmt *s, IrVar *k, IrExpr *to, int part, int id) {
    IrStmt *r = ir_stmt(a, IR_S_TILEOP, s->loc);
    *r = *(to ? ir_stmt_subst(a, s, &k, &to, 1) : s);
    IrTileOp *op = TS_NEW(a, IrTileOp);
    *op = *r->op;
    op->mma_part = part;
    op->mma_frag = id;
    r->op = op;
    return r;
}

/* ---- the wgmma gemm left in flight across the loop's steps ------------------------ */

/*
 * A wgmma gemm (sm_90a, TS_OP_INST_WGMMA) waits for its own group at its
 * end by default (wgmma.wait_group 0 inside the call): the tensor cores
 * then idle from the last wgmma of step k until step k + 1 has waited for
 * its copies, passed the barrier and issued its own.  Where the loop's
 * last statement is such a gemm over the stage's tiles (A and B both
 * filled by the loop's stage-0 async copies, the gemm in stage S) and
 * nothing else in the body touches its accumulator, the gemm is issued
 * asynchronously (IrTileOp.wg_async: wgmma.fence, the wgmmas,
 * commit_group, no wait) and the waits (IR_WGMMA_WAIT) go where its
 * reads must have finished: the accumulator is read only after the loop
 * (a wait 0 there), and the slot a group reads is refilled by the copies
 * of a later step.  Step k's copies fill slot (k + S) % (S + 1) = the slot
 * gemm k - 1 read, so gemm k - 1 must be complete, in every warpgroup
 * (warpgroups over M all read B), before any thread issues them:
 *
 *   ONE (TsCaps.wgmma_inflight; the default is AUTO: OFF with S = 1, TOP above):
 *     for k:
 *         async_wait(W); barrier               stage k landed, visible
 *         gemm(k), issued                      groups pending: k - 1, k
 *         wgmma_wait(1)                        gemm k - 1 complete (this warpgroup)
 *         barrier                              ... in every warpgroup
 *         producers(k + S), guarded; async_commit()
 *     wgmma_wait(0)                            the accumulator is the threads' again
 *
 *   the tensor cores go from gemm k - 1 to gemm k without a gap: gemm k is
 *   issued while k - 1 still runs; the copies of step k run during gemm k.
 *
 *   TOP (AUTO's choice for S >= 2):
 *     for k:
 *         async_wait(W); wgmma_wait(0); barrier
 *         gemm(k), issued
 *         producers(k + S), guarded; async_commit()
 *     wgmma_wait(0)
 *
 *   the copies' issue and the wait for the next stage run during gemm k,
 *   but gemm k + 1 starts only after gemm k ended and a barrier.
 *
 *   SLOT (S >= 2; else ONE): one slot of the S + 1 kept for the pending
 *   group, the copies D = S - 1 steps ahead instead of S, one barrier:
 *     prologue: producers of iterations 0 .. S - 2 (S - 1 groups)
 *     for k:
 *         async_wait(W - 1); wgmma_wait(1)     stage k landed; gemm k - 2 complete
 *         barrier                              (every thread, every warpgroup)
 *         gemm(k), issued                      groups pending: k - 1, k
 *         producers(k + S - 1), guarded        slot (k - 2) % (S + 1): gemm k - 2's
 *         async_commit()
 *     wgmma_wait(0)
 *
 * Correct for every S >= 1 (num_stages >= 2; with one stage nothing is
 * pipelined and nothing changes): the slot arithmetic above does not
 * depend on S, and W (cp.async groups) is unchanged since each step still
 * commits one group.  insert_sync keeps an async gemm's operand reads in
 * flight until the wgmma wait that completes them (so the barrier after
 * wait_group 1 is kept, and a copy into a slot a pending group reads would
 * be an error), pass wgmma_waits lists the accumulators each wait
 * completes for the printer's register fences.  PTX ISA rules kept: each
 * gemm begins with wgmma.fence (its accumulator was last written by the
 * previous gemm's wgmmas, of the same shape, or by the threads before the
 * loop), no instruction of the threads touches the accumulator registers
 * while a group is pending (the body has no other access; after the loop
 * the wait 0 comes first), and the shared tiles are read through the async
 * proxy after fence.proxy.async (each gemm's own, and the barriers').
 */
static IrStmt *wgmma_wait_stmt(TsArena *a, int pending, TsLoc loc) {
    IrExpr **xs = TS_NEWN(a, IrExpr *, 1);
    xs[0] = ir_i32(a, pending);
    IrStmt *s = ir_stmt(a, IR_S_EVAL, loc);
    s->eval.e = ir_call(a, IR_WGMMA_WAIT, xs, 1, TS_INT32);
    s->eval.e->loc = loc;
    return s;
}

static bool inflight_gemm_ok(const IrStmt *g, const BufVec *dsts, IrStmt *const *st, int m) {
    if (!g || g->kind != IR_S_TILEOP) return false;
    const IrTileOp *op = g->op;
    if (op->kind != TS_OP_GEMM || op->inst != TS_OP_INST_WGMMA || op->wg_async || op->wg_wait > 0) return false;
    const IrBuffer *A = op->r[0].buf, *B = op->r[1].buf, *C = op->r[2].buf;
    bool fa = false, fb = false;
    for (int i = 0; i < dsts->n; i++) {
        fa |= dsts->v[i] == A;
        fb |= dsts->v[i] == B;
    }
    if (!fa || !fb) return false;
    for (int i = 0; i < m; i++)
        if (st[i] != g && ir_stmt_access_rw(st[i], C, 0)) return false;
    return true;
}

/* g as an asynchronous gemm (its own op, wg_async set). */
static IrStmt *async_gemm(TsArena *a, const IrStmt *g) {
    IrStmt *r = ir_stmt(a, IR_S_TILEOP, g->loc);
    *r = *g;
    IrTileOp *op = TS_NEW(a, IrTileOp);
    *op = *g->op;
    op->wg_async = 1;
    r->op = op;
    return r;
}

static IrStmt *expand(Inj *ij, const IrStmt *loop) {
    TsPassCtx *cx = ij->cx;
    TsArena *a = cx->arena;
    const IrStmt *body = loop->for_.body;
    int m = body && body->kind == IR_S_SEQ ? body->seq.n : -1;
    if (m != loop->for_.norder)
        ts_fail_at(cx->diag, TS_ERR_INTERNAL, loop->loc,
                   "inject_pipeline: the planned loop has %d statements, its plan %d", m, loop->for_.norder);
    IrStmt *const *st = body->seq.v;
    const int *stage = loop->for_.stage;
    int S = 0;
    for (int i = 0; i < m; i++)
        if (stage[i] > S) S = stage[i];
    int *at = TS_NEWN(a, int, m); /* at[position] = statement */
    for (int i = 0; i < m; i++) at[loop->for_.order[i]] = i;

    /* async producers and the nearest consumer distance */
    int dmin = 1 << 30;
    bool any_async = false;
    for (int i = 0; i < m; i++) {
        BufVec dsts = {0};
        async_dsts(st[i], a, &dsts);
        for (int b = 0; b < dsts.n; b++) {
            any_async = true;
            for (int j = 0; j < m; j++) {
                if (j == i || !reads(st[j], dsts.v[b])) continue;
                int d = stage[j] - stage[i];
                if (d < 1)
                    ts_fail_at(cx->diag, TS_ERR_INTERNAL, st[j]->loc,
                               "inject_pipeline: '%s' is read %d stages after its async copy", dsts.v[b]->name, d);
                if (d < dmin) dmin = d;
            }
        }
    }
    int W = any_async && dmin != 1 << 30 ? dmin - 1 : 0;

    IrStmt *out = ir_seq(a);
    out->loc = loop->loc;
    IrVar *k = loop->for_.var;
    IrExpr *min = loop->for_.min, *n = loop->for_.extent;
    int64_t nc = -1, c;
    if (!ir_is_const_int(n, &nc)) {
        nc = -1;
        if (n->kind != IR_E_VAR) {
            IrVar *nv = ir_var(cx->k, "n_pipe", n->dt, IR_VAR_LET);
            IrStmt *let = ir_stmt(a, IR_S_LET, loop->loc);
            let->let.var = nv;
            let->let.value = n;
            ir_seq_push(a, out, let);
            n = ir_var_ref(a, nv);
        }
    }
    if (!ir_is_const_int(min, &c) && min->kind != IR_E_VAR) {
        IrVar *mv = ir_var(cx->k, "min_pipe", min->dt, IR_VAR_LET);
        IrStmt *let = ir_stmt(a, IR_S_LET, loop->loc);
        let->let.var = mv;
        let->let.value = min;
        ir_seq_push(a, out, let);
        min = ir_var_ref(a, mv);
    }
    ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, loop->loc));

    /* the gemm at the end split across the barrier: the last statement in
     * order, in stage S, after producers of stage 0 only (then the tiles
     * have S + 1 slots) */
    const IrStmt *split = NULL;
    int mode = cx->caps->mma_prefetch;
    if ((mode & TS_PREFETCH_SPLIT) && any_async && S > 0 && m >= 2 && stage[at[m - 1]] == S) {
        BufVec dsts = {0};
        bool producers = true;
        for (int p = 0; p + 1 < m; p++) {
            producers &= stage[at[p]] == 0;
            async_dsts(st[at[p]], a, &dsts);
        }
        if (producers && split_gemm_ok(st[at[m - 1]], &dsts, mode & TS_PREFETCH_TWO_STEPS ? 32 : 64))
            split = st[at[m - 1]];
    }
    bool early = split && (mode & TS_PREFETCH_EARLY_COPY);
    /* LOAD_FIRST, where the gemm is not split: PRE, the copies, REST */
    const IrStmt *first = NULL;
    if (!split && (mode & TS_PREFETCH_LOAD_FIRST) && any_async && S > 0 && m >= 2 && stage[at[m - 1]] == S) {
        BufVec dsts = {0};
        bool producers = true;
        for (int p = 0; p + 1 < m; p++) {
            producers &= stage[at[p]] == 0;
            async_dsts(st[at[p]], a, &dsts);
        }
        if (producers && split_gemm_ok(st[at[m - 1]], &dsts, 32)) first = st[at[m - 1]];
    }

    /* the wgmma gemm left in flight (above): the last statement, in stage S,
     * after producers of stage 0 only */
    const IrStmt *wg = NULL;
    int wmode = cx->caps->wgmma_inflight;
    /* AUTO: measured on the H200 (bench/RESULTS.md, 2026-12-02 batch 1): with two stages
     * (128x256x128) every gemm waiting for its own group was fastest (8192^3 fp16 2.29 ms;
     * TOP 2.36, ONE 2.53: its copies, issued after the gemm, are waited for in the next
     * step), with three TOP was (128x256x64: 2.15 vs 2.44 waiting; 4000^3 128x128x32:
     * 0.362 vs 0.373, ONE 0.394) */
    if (wmode == TS_WGMMA_INFLIGHT_AUTO) wmode = S >= 2 ? TS_WGMMA_INFLIGHT_TOP : TS_WGMMA_INFLIGHT_OFF;
    if (wmode != TS_WGMMA_INFLIGHT_OFF && !split && !first && any_async && S > 0 && m >= 2 &&
        stage[at[m - 1]] == S) {
        BufVec dsts = {0};
        bool producers = true;
        for (int p = 0; p + 1 < m; p++) {
            producers &= stage[at[p]] == 0;
            async_dsts(st[at[p]], a, &dsts);
        }
        if (producers && inflight_gemm_ok(st[at[m - 1]], &dsts, st, m)) wg = st[at[m - 1]];
    }
    /* SLOT: copies D = S - 1 steps ahead (one slot for the pending group); needs S >= 2 */
    if (wg && wmode == TS_WGMMA_INFLIGHT_SLOT && S < 2) wmode = TS_WGMMA_INFLIGHT_ONE;
    int D = wg && wmode == TS_WGMMA_INFLIGHT_SLOT ? S - 1 : S; /* the copies run D steps ahead */

    /* prologue */
    for (int t = 0; t < D; t++) {
        IrStmt *step = ir_seq(a);
        step->loc = loop->loc;
        bool consumer = false;
        for (int p = 0; p < m; p++)
            consumer |= stage[at[p]] <= t && stage[at[p]] > 0;
        if (consumer) {
            if (any_async) ir_seq_push(a, step, wait_stmt(a, W, loop->loc));
            ir_seq_push(a, step, ir_stmt(a, IR_S_BARRIER, loop->loc));
        }
        for (int p = 0; p < m; p++) {
            int i = at[p];
            if (stage[i] > t) continue;
            int64_t it = t - stage[i];
            if (nc >= 0 && it >= nc) continue;
            IrExpr *to = ir_bin(a, IR_ADD, min, ir_i32(a, it));
            IrExpr *guard = nc >= 0 ? NULL : ir_bin(a, IR_LT, ir_i32(a, it), n);
            IrStmt *s = shifted(a, st[i], k, to, guard);
            if (s) ir_seq_push(a, step, s);
        }
        if (any_async) ir_seq_push(a, step, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
        ir_seq_push(a, out, step);
    }

    /* the first stage in flight once more (EARLY_COPY: its iteration S) */
    if (early && !(nc >= 0 && S >= nc)) {
        IrStmt *step = ir_seq(a);
        step->loc = loop->loc;
        for (int p = 0; p + 1 < m; p++) {
            IrExpr *to = ir_bin(a, IR_ADD, min, ir_i32(a, S));
            IrStmt *s = shifted(a, st[at[p]], k, to, nc >= 0 ? NULL : ir_bin(a, IR_LT, ir_i32(a, S), n));
            if (s) ir_seq_push(a, step, s);
        }
        ir_seq_push(a, step, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
        ir_seq_push(a, out, step);
    } else if (early) {
        ir_seq_push(a, out, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
    }
    if (wg) {
        IrStmt *sb = ir_seq(a);
        sb->loc = body->loc;
        ir_seq_push(a, sb, wait_stmt(a, wmode == TS_WGMMA_INFLIGHT_SLOT ? W - 1 : W, loop->loc));
        if (wmode == TS_WGMMA_INFLIGHT_TOP) ir_seq_push(a, sb, wgmma_wait_stmt(a, 0, loop->loc));
        if (wmode == TS_WGMMA_INFLIGHT_SLOT) ir_seq_push(a, sb, wgmma_wait_stmt(a, 1, loop->loc));
        ir_seq_push(a, sb, ir_stmt(a, IR_S_BARRIER, loop->loc));
        ir_seq_push(a, sb, async_gemm(a, wg));
        if (wmode == TS_WGMMA_INFLIGHT_ONE) {
            ir_seq_push(a, sb, wgmma_wait_stmt(a, 1, loop->loc));
            ir_seq_push(a, sb, ir_stmt(a, IR_S_BARRIER, loop->loc));
        }
        if (!(nc >= 0 && D >= nc)) {
            IrExpr *to = ir_bin(a, IR_ADD, ir_var_ref(a, k), ir_i32(a, D));
            IrStmt *group = ir_seq(a);
            group->loc = loop->loc;
            for (int p = 0; p + 1 < m; p++) ir_seq_push(a, group, shifted(a, st[at[p]], k, to, NULL));
            IrStmt *g = ir_stmt(a, IR_S_IF, loop->loc);
            g->if_.cond = ir_bin(a, IR_LT, to, ir_bin(a, IR_ADD, min, n));
            g->if_.then = group;
            ir_seq_push(a, sb, g);
        }
        ir_seq_push(a, sb, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
        IrStmt *steady = ir_for(a, k, min, n, IR_FOR_SERIAL, sb);
        steady->loc = loop->loc;
        ir_seq_push(a, out, steady);
        ir_seq_push(a, out, wgmma_wait_stmt(a, 0, loop->loc));
        ir_seq_push(a, out, wait_stmt(a, 0, loop->loc));
        return out;
    }

    int fid = 0;
    if (first) fid = ++ij->nfrag;
    if (split) {
        fid = ++ij->nfrag;
        ir_seq_push(a, out, wait_stmt(a, early ? W + 1 : W, loop->loc));
        ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, loop->loc));
        ir_seq_push(a, out, gemm_part(a, split, k, min, TS_MMA_PRE, fid));
    }

    /* steady state with the epilogue folded in */
    IrStmt *sb = ir_seq(a);
    sb->loc = body->loc;
    if (!split) {
        if (any_async) ir_seq_push(a, sb, wait_stmt(a, W, loop->loc));
        ir_seq_push(a, sb, ir_stmt(a, IR_S_BARRIER, loop->loc));
        if (first) ir_seq_push(a, sb, gemm_part(a, first, k, NULL, TS_MMA_PRE, fid));
    }
    bool committed = false;
    IrStmt *group = NULL; /* consecutive statements of one shift share a guard */
    int group_sh = 0;
    if (early) { /* BODY; wait; barrier; the producers of iteration k + S + 1; commit; TAIL */
        ir_seq_push(a, sb, gemm_part(a, split, k, NULL, TS_MMA_BODY, fid));
        ir_seq_push(a, sb, wait_stmt(a, W, loop->loc));
        ir_seq_push(a, sb, ir_stmt(a, IR_S_BARRIER, loop->loc));
        IrExpr *to = ir_bin(a, IR_ADD, ir_var_ref(a, k), ir_i32(a, S + 1));
        if (!(nc >= 0 && S + 1 >= nc)) {
            group = ir_seq(a);
            group->loc = loop->loc;
            for (int p = 0; p + 1 < m; p++) ir_seq_push(a, group, shifted(a, st[at[p]], k, to, NULL));
            IrStmt *g = ir_stmt(a, IR_S_IF, loop->loc);
            g->if_.cond = ir_bin(a, IR_LT, to, ir_bin(a, IR_ADD, min, n));
            g->if_.then = group;
            ir_seq_push(a, sb, g);
        }
        ir_seq_push(a, sb, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
        IrExpr *next = ir_bin(a, IR_ADD, ir_var_ref(a, k), ir_i32(a, 1));
        ir_seq_push(a, sb, gemm_part(a, split, k, next, TS_MMA_TAIL, fid));
        m = 0; /* (the statements are placed) */
    }
    for (int p = 0; p < m; p++) {
        int i = at[p], sh = S - stage[i];
        if (sh == 0 && st[i] == first) { /* (the last statement) */
            ir_seq_push(a, sb, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
            committed = true;
            ir_seq_push(a, sb, gemm_part(a, first, k, NULL, TS_MMA_REST, fid));
            continue;
        }
        if (sh == 0) {
            ir_seq_push(a, sb, st[i] == split ? gemm_part(a, split, k, NULL, TS_MMA_BODY, fid) : st[i]);
            group = NULL;
            continue;
        }
        if (nc >= 0 && sh >= nc) continue; /* never an iteration to run */
        IrExpr *to = ir_bin(a, IR_ADD, ir_var_ref(a, k), ir_i32(a, sh));
        IrStmt *s = shifted(a, st[i], k, to, NULL);
        if (group && group_sh == sh) {
            ir_seq_push(a, group, s);
            continue;
        }
        group = ir_seq(a);
        group->loc = st[i]->loc;
        group_sh = sh;
        ir_seq_push(a, group, s);
        IrStmt *g = ir_stmt(a, IR_S_IF, st[i]->loc);
        g->if_.cond = ir_bin(a, IR_LT, to, ir_bin(a, IR_ADD, min, n));
        g->if_.then = group;
        ir_seq_push(a, sb, g);
    }
    if (any_async && !early && !committed) ir_seq_push(a, sb, ir_stmt(a, IR_S_ASYNC_COMMIT, loop->loc));
    if (split && !early) {
        ir_seq_push(a, sb, wait_stmt(a, W, loop->loc));
        ir_seq_push(a, sb, ir_stmt(a, IR_S_BARRIER, loop->loc));
        IrExpr *next = ir_bin(a, IR_ADD, ir_var_ref(a, k), ir_i32(a, 1));
        ir_seq_push(a, sb, gemm_part(a, split, k, next, TS_MMA_TAIL, fid));
    }
    IrStmt *steady = ir_for(a, k, min, n, IR_FOR_SERIAL, sb);
    steady->loc = loop->loc;
    ir_seq_push(a, out, steady);
    if (any_async) ir_seq_push(a, out, wait_stmt(a, 0, loop->loc));
    return out;
}

/* ---- copies before a pipeline, made asynchronous -------------------------------- */

/* A load of shared or global memory (anything but registers). */
static bool mem_node(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD && e->load.buf->scope != IR_SCOPE_LOCAL && e->load.buf->scope != IR_SCOPE_VAR;
}

static bool expr_mem(const IrExpr *e) { return e && ir_expr_any(e, mem_node, NULL); }

/* A statement that is not register-only on its own (its children are
 * looked at separately): one touching shared/global memory, a tile op,
 * copy, wait or loop other than for/if. */
static bool not_regs_node(const IrStmt *s, void *ctx) {
    (void)ctx;
    switch (s->kind) {
    case IR_S_SEQ: return false;
    case IR_S_FOR: return expr_mem(s->for_.min) || expr_mem(s->for_.extent);
    case IR_S_IF: return expr_mem(s->if_.cond);
    case IR_S_STORE:
        if (s->store.buf->scope != IR_SCOPE_LOCAL && s->store.buf->scope != IR_SCOPE_VAR) return true;
        for (int i = 0; i < s->store.nidx; i++)
            if (expr_mem(s->store.idx[i])) return true;
        return expr_mem(s->store.value);
    case IR_S_LET: return expr_mem(s->let.value);
    case IR_S_ALLOC: case IR_S_BARRIER: return false;
    default: return true;
    }
}

/* s touches registers only (no shared/global memory, tile op, copy, wait
 * or barrier other than the provisional ones insert_sync places again). */
static bool regs_only(const IrStmt *s) { return !s || !ir_stmt_any(s, not_regs_node, NULL); }

/* A statement that breaks the shape of sync_tile_copy: anything but
 * sequences (of at least one copy, barriers directly in them), serial /
 * unrolled / thread-range loops with register-only bounds, and
 * synchronous global -> shared vector copies of 4, 8 or 16 bytes with a
 * register-only predicate. */
static bool not_tile_copy_node(IrVisitor *v, const IrStmt *s, bool *bad) {
    switch (s->kind) {
    case IR_S_SEQ: {
        int copies = 0;
        for (int i = 0; i < s->seq.n; i++) copies += s->seq.v[i]->kind != IR_S_BARRIER;
        *bad |= copies == 0;
        return true;
    }
    case IR_S_BARRIER: *bad |= !v->frame->up || v->frame->up->s->kind != IR_S_SEQ; return true;
    case IR_S_FOR:
        *bad |= !(s->for_.kind == IR_FOR_THREAD || s->for_.kind == IR_FOR_UNROLL || s->for_.kind == IR_FOR_SERIAL) ||
                expr_mem(s->for_.min) || expr_mem(s->for_.extent);
        return true;
    case IR_S_VCOPY: {
        int bytes = s->vcopy.lanes * ts_dtype_info(s->vcopy.dst->dt)->bits / 8;
        *bad |= !(!s->vcopy.async && s->vcopy.src->scope == IR_SCOPE_GLOBAL && s->vcopy.dst->scope == IR_SCOPE_SHARED &&
                  s->vcopy.dst->dt == s->vcopy.src->dt && (bytes == 4 || bytes == 8 || bytes == 16) &&
                  !(s->vcopy.pred && expr_mem(s->vcopy.pred)));
        return true;
    }
    default: *bad = true; return true;
    }
}

typedef struct Shape {
    bool bad;   /* a statement off the shape */
    int copies; /* vector copies seen */
} Shape;

static bool tile_copy_pre(IrVisitor *v, const IrStmt *s) {
    Shape *sh = v->ctx;
    not_tile_copy_node(v, s, &sh->bad);
    sh->copies += s->kind == IR_S_VCOPY;
    if (sh->bad) v->stop = true;
    return true;
}

/* s is thread-range loops around synchronous global -> shared vector copies
 * of 4, 8 or 16 bytes (what cp.async moves) and nothing else (the copy
 * lowering's provisional barriers around them are placed again by
 * insert_sync). */
static bool sync_tile_copy(const IrStmt *s) {
    if (!s || s->kind == IR_S_BARRIER) return false;
    Shape sh = {false, 0};
    IrVisitor v = {.ctx = &sh, .pre_stmt = tile_copy_pre};
    ir_visit_stmt(&v, s);
    return !sh.bad && sh.copies > 0;
}

/* A copy of s with its vector copies made asynchronous (the shared
 * rewriter, deep-copying). */
static IrStmt *async_post(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_VCOPY) s->vcopy.async = 1; /* s is a fresh copy */
    return s;
}

static IrStmt *make_async(TsArena *a, IrStmt *s) {
    IrMutator m = {.arena = a, .post_stmt = async_post, .copy = true};
    return ir_mutate_stmt(&m, s);
}

static void vcopy_dsts(const IrStmt *s, TsArena *a, BufVec *out) { vcopy_dsts_of(s, a, out, true); }

/* Does s write b (stores, vector copies, kept tile ops)? */
static bool writes(const IrStmt *s, const IrBuffer *b) { return (ir_stmt_access_rw(s, b, 0) & IR_ACC_WRITE) != 0; }

/*
 * In seq (before expansion), the statements right before the planned loop
 * at index li that only load tiles from global into shared memory
 * synchronously (FlashAttention's Q), with nothing but register code
 * between them and the loop, become cp.async copies: they join the
 * prologue's first group, so their latency overlaps the first K/V tiles'
 * instead of preceding it.  The loop waits for that group (the oldest)
 * before its first step computes, behind its barrier, and its last wait
 * (async_wait(0)) covers a loop that runs no step.  Only where the loop
 * has async copies of its own (so its waits exist), reads the tile only
 * from statements after the prologue's copies (stage > 0), and never
 * writes it.
 */
static void prefetch_before(Inj *ij, IrStmt *seq, int li) {
    TsArena *a = ij->cx->arena;
    const IrStmt *loop = seq->seq.v[li];
    const IrStmt *body = loop->for_.body;
    if (!body || body->kind != IR_S_SEQ || body->seq.n != loop->for_.norder) return;
    BufVec own = {0};
    async_dsts(body, a, &own);
    if (!own.n) return;
    for (int j = li - 1; j >= 0; j--) {
        IrStmt *c = seq->seq.v[j];
        if (regs_only(c)) continue;
        if (!sync_tile_copy(c)) return;
        BufVec dsts = {0};
        vcopy_dsts(c, a, &dsts);
        bool ok = true;
        for (int b = 0; b < dsts.n && ok; b++) {
            for (int x = j + 1; x < li && ok; x++) ok = !reads(seq->seq.v[x], dsts.v[b]);
            for (int i = 0; i < body->seq.n && ok; i++)
                ok = !writes(body->seq.v[i], dsts.v[b]) &&
                     (!reads(body->seq.v[i], dsts.v[b]) || loop->for_.stage[i] > 0);
        }
        if (!ok) return;
        seq->seq.v[j] = make_async(a, c);
    }
}

static bool planned(const IrStmt *s) {
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PIPELINED && s->for_.stage && s->for_.norder;
}

/* The shared rewriter, bottom-up: a planned loop directly in a sequence is
 * expanded by the sequence (after prefetch_before looked at it and the
 * statements before it), one elsewhere by itself. */
static IrStmt *inject_post(IrMutator *m, IrStmt *s) {
    Inj *ij = m->ctx;
    TsArena *a = m->arena;
    switch (s->kind) {
    case IR_S_SEQ: {
        IrStmt *r = NULL;
        for (int i = 0; i < s->seq.n; i++) {
            if (!planned(s->seq.v[i])) continue;
            if (!r) { /* a copy of the sequence: earlier statements may become async */
                r = ir_seq(a);
                r->loc = s->loc;
                for (int j = 0; j < s->seq.n; j++) ir_seq_push(a, r, s->seq.v[j]);
            }
            prefetch_before(ij, r, i);
            r->seq.v[i] = expand(ij, r->seq.v[i]);
        }
        return r ? r : s;
    }
    case IR_S_FOR: {
        const IrWalkFrame *up = m->frame->up;
        if (planned(s) && !(up && up->s->kind == IR_S_SEQ)) return expand(ij, s);
        return s;
    }
    case IR_S_VCOPY:
        /* an async copy outside a pipeline would have no wait */
        if (s->vcopy.async && !s->vcopy.user) {
            bool in = false;
            for (const IrWalkFrame *f = m->frame->up; f && !in; f = f->up) in = planned(f->s);
            if (!in)
                ts_fail_at(ij->cx->diag, TS_ERR_INTERNAL, s->loc,
                           "inject_pipeline: an async copy into '%s' outside a planned pipeline", s->vcopy.dst->name);
        }
        return s;
    default: return s;
    }
}

/* ptxas's fast-compile level for large tensor-core loops, an opt-in trade
 * (TsCaps.ptxas_fast, TILESCALE_CUDA_PTXAS_FAST; off by default).  A
 * pipelined loop whose gemms unroll to many mma.sync per warp is most of a
 * cold NVRTC build (issue 5: <= 0.3 s): GEMM 128x256x128 with 256 threads
 * (256 mma.sync per warp and iteration) spends ~140 ms of ~240 in ptxas on
 * the CI VM, ~70 with -Ofc=min (same instruction count, registers within a
 * few, another interleaving of ldmatrix/cp.async with the mma.sync; min and
 * mid give the same SASS; NVVM's part and the PTX do not change).  On the
 * H200 (2026-12-01, bench/RESULTS.md "CUDA compile time: ptxas's
 * fast-compile level") that made the kernels slower: GEMM 128x256x128
 * 4-5%, FlashAttention D128 12-15% (its ldmatrix results no longer kept
 * ahead of the mma), below issue 5's speed goals, so nothing asks for it
 * unless told: =2 the loops of at least PTXAS_FAST_MMAS mma.sync per warp
 * (GEMM 128x256 tiles, FlashAttention D128; not GEMM 128x128x32 or
 * FlashAttention 64x64: 64 per warp), =1 every pipelined tensor-core loop.
 * Counted per planned loop: every mma.sync gemm in its body, M*N*K /
 * (16*8*16) over the block's warps (a gemm in a loop nested inside counts
 * once). */
enum { PTXAS_FAST_MMAS = 128 };

typedef struct MmaCount {
    int64_t warps;  /* warps per block */
    int64_t most;   /* most mma.sync per warp of one planned loop so far */
} MmaCount;

static bool mma_gemm(const IrStmt *s, void *ctx) {
    int64_t *n = ctx;
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_GEMM || s->op->inst != TS_OP_INST_MMA_SYNC) return false;
    /* the sizes from the operands (the accumulator may be a register buffer of another shape):
     * A is M x K (K x M transposed), B is K x N (N x K transposed) */
    const IrTileOp *op = s->op;
    const IrRegion *ra = &op->r[0], *rb = &op->r[1];
    int64_t m, nn, kk;
    if (ra->ndim < 2 || rb->ndim < 2 || !ir_is_const_int(ra->extent[ra->ndim - (op->trans_a ? 1 : 2)], &m) ||
        !ir_is_const_int(ra->extent[ra->ndim - (op->trans_a ? 2 : 1)], &kk) ||
        !ir_is_const_int(rb->extent[rb->ndim - (op->trans_b ? 2 : 1)], &nn))
        return false;
    *n += m * nn * kk / (16 * 8 * 16);
    return false; /* keep looking: every gemm of the loop counts */
}

static bool mma_loop_pre(IrVisitor *v, const IrStmt *s) {
    MmaCount *c = v->ctx;
    if (planned(s)) {
        int64_t n = 0;
        (void)ir_stmt_any(s->for_.body, mma_gemm, &n);
        if (c->warps > 0 && n / c->warps > c->most) c->most = n / c->warps;
    }
    return true;
}

static bool has_async_pre(IrVisitor *v, const IrStmt *s) {
    if (s->kind == IR_S_VCOPY && s->vcopy.async) *(bool *)v->ctx = true;
    return true;
}

void ts_pass_inject_pipeline(TsPassCtx *cx) {
    MmaCount mc = {ir_kernel_nthreads(cx->k) / 32, 0};
    IrVisitor mv = {.ctx = &mc, .pre_stmt = mma_loop_pre};
    if (cx->caps->ptxas_fast != TS_PTXAS_FAST_OFF) ir_visit_stmt(&mv, cx->k->body);
    cx->k->ptxas_fast_compile =
        mc.most > 0 && (cx->caps->ptxas_fast == TS_PTXAS_FAST_ALL || mc.most >= PTXAS_FAST_MMAS);
    Inj ij = {cx, 0};
    IrMutator m = {.arena = cx->arena, .ctx = &ij, .post_stmt = inject_post};
    cx->k->body = ir_mutate_stmt(&m, cx->k->body);
    /* the asynchronous copies are all made by now: the L2 prefetch hint they carry (an
     * instruction choice the printer prints, never decides) */
    bool any = false;
    IrVisitor v = {.ctx = &any, .pre_stmt = has_async_pre};
    if (cx->caps->l2_prefetch) ir_visit_stmt(&v, cx->k->body);
    cx->k->cp_async_l2_prefetch = any ? cx->caps->l2_prefetch : 0;
}
