/*
 * ws_async_copy.c — the CUDA pass that makes a T.ws producer role's loads
 * asynchronous: the vector copies from global to shared memory that a role
 * issues before its mbarrier arrive become cp.async, handed over to the
 * arrive in one of three forms (TsCaps.ws_async, caps.h):
 *   NOINC (the default)  the arrive an IR_MBAR_ARRIVE_ASYNC with mbar.noinc:
 *                       cp.async.mbarrier.arrive.noinc alone, the arrival
 *                       made when the copies have landed being the thread's
 *                       one arrival (T.alloc_barrier's count unchanged);
 *   WAIT                a commit and a wait for every group of the thread
 *                       (cp.async.wait_group 0) before the arrive, which
 *                       stays a plain arrive;
 *   MBAR                the arrive an IR_MBAR_ARRIVE_ASYNC: cp.async.mbarrier.
 *                       arrive (the phase also waits until every cp.async
 *                       the thread issued before has landed), then the arrive.
 *
 * Why.  TileLang's warp-specialised GEMMs (examples/ws_gemm.py) load a tile
 * pair in the producer role and hand it over with an arrive.  Copied by the
 * threads themselves (global load into registers, then a shared store), each
 * producer thread waits for its loads before its stores and its arrive, and
 * ptxas keeps only a few of a thread's 16 loads in flight ahead of their
 * stores (SASS of ws_matmul_ring 4096^3 fp16, sm_90: five load/store rounds
 * per tile pair, each a global-memory latency): the producer, not the
 * tensor cores, set the pace.  As cp.async the thread issues all its copies
 * back to back and holds no registers for them.  In the NOINC and MBAR
 * forms it goes on at once to wait for the next free slot while they land,
 * and the consumer's wait on the same phase still sees the whole tile,
 * since the phase cannot complete before each producer thread's copies
 * have landed; in the WAIT form it waits once for all of them (one memory
 * latency per tile pair) before its arrive.  MBAR was session 7's form:
 * correct on the H200, but compute-sanitizer 2025.3's synccheck reports
 * "Barrier error detected. Missing wait" at its plain arrive.  The tool
 * takes cp.async.mbarrier.arrive for a plain arrive without the pending
 * count's increment, so two arrivals per thread complete a phase when half
 * the producer has arrived (bench/ws_async_variants.sh on the H200: every
 * variant of that form reported, with or without waits at the producer's
 * end; every .noinc variant and WAIT clean, all at the same speed; Compute
 * Sanitizer's 2025.4 release notes call it a false positive, fixed for
 * code from CUDA 13.1 compilers).  NOINC, one arrival per thread and phase,
 * is the asynchronous form the tools accept.  It gives up the plain
 * arrive's release of the thread's other stores, so it is taken only where
 * a producer's threads write no shared or global memory but by their async
 * copies (else the kernel takes WAIT).
 *
 * What is changed, in each T.ws role's uniform code (a statement list of
 * the role body, or of a uniform loop or branch in it): a run of
 * statements that starts with a thread range holding only eligible vector
 * copies and ends at an mbarrier arrive of that same list, where every
 * statement in between is another such thread range or touches none of the
 * copies' destination buffers (no read of a tile while it is in flight) and
 * holds no barrier, async commit or wait, or other mbarrier operation.
 * Eligible: an IR_S_VCOPY from a global buffer to a shared one of the same
 * dtype (cp.async moves bytes; converting copies stay as they are) of 4, 8
 * or 16 bytes, not already async, under unrolled or serial loops and ifs
 * only (a thread range with anything else, a partial tile's element by
 * element path for one, keeps plain copies).  Every thread of the role runs
 * the arrive (uniform code) after its own copies.  In the WAIT form the
 * copies have landed at the same point of every thread as before (the
 * statements in between do not touch them, nor synchronise), so nothing
 * else changes.  In the MBAR form the cp.async arrive raises the phase's
 * pending count and takes it off when they have landed, so the arrive
 * counts of T.alloc_barrier do not change, and the plain arrive still
 * releases the thread's ordinary stores (NOINC: the asynchronous arrival
 * is the thread's one arrival, and there must be no such stores).  In both
 * the whole kernel, rewritten, must then show that a thread other than the
 * producer's reads those tiles only through the producer's arrives: every
 * other access to a copied tile is made in a role whose threads are not a
 * producer's (a consumer, which waits on the mbarrier before reading), and a
 * producer's threads make no other release a reader could rely on instead
 * (a plain arrive, a barrier, a communication op: its copies might still be
 * in flight there).  (Left to the program, as with TileLang's TMA copies: a
 * consumer that reads a tile without waiting on the phase the producer's
 * arrive completes.)  Where that fails, the kernel takes the WAIT form.
 *
 * Only on sm_80 and later (cp.async), unless TsCaps.ws_async is off
 * (TILESCALE_CUDA_WS_ASYNC=0, for before/after runs).  insert_sync keeps
 * such copies in flight until the wait or the role's arrive_async, and the
 * thread-level interpreter lands them there (ir/interp_thread.c), so both
 * check the same rule as for a cp.async group's wait.
 */
#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"

/* The copy statements of one thread range, when every leaf is an eligible copy. */
static bool only_copies(const IrStmt *s, int *ncopies) {
    if (!s) return true;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (!only_copies(s->seq.v[i], ncopies)) return false;
        return true;
    case IR_S_FOR:
        if (s->for_.kind != IR_FOR_UNROLL && s->for_.kind != IR_FOR_SERIAL) return false;
        return only_copies(s->for_.body, ncopies);
    case IR_S_IF: return only_copies(s->if_.then, ncopies) && only_copies(s->if_.else_, ncopies);
    case IR_S_LET: return true;
    case IR_S_VCOPY: {
        const IrBuffer *d = s->vcopy.dst, *r = s->vcopy.src;
        int bytes = s->vcopy.lanes * (ts_dtype_bits(d->dt) / 8);
        if (s->vcopy.async || d->scope != IR_SCOPE_SHARED || r->scope != IR_SCOPE_GLOBAL || d->dt != r->dt ||
            ts_dtype_bits(d->dt) % 8 || (bytes != 4 && bytes != 8 && bytes != 16))
            return false;
        ++*ncopies;
        return true;
    }
    default: return false;
    }
}

/* A thread range of eligible copies (at least one). */
static bool copy_range(const IrStmt *s) {
    int n = 0;
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD && only_copies(s->for_.body, &n) && n > 0;
}

/* What may not run while a copy is in flight, or orders it otherwise. */
static bool blocks_async(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_BARRIER || s->kind == IR_S_ASYNC_COMMIT || s->kind == IR_S_ASYNC_WAIT ||
           s->kind == IR_S_MBAR || s->kind == IR_S_ROLE || (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_COMM);
}

/* Destination buffers of the copies of a copy range. */
typedef struct Dsts {
    TsArena *a;                 /* where the list grows */
    TS_VEC(const IrBuffer *) v; /* the buffers */
} Dsts;

static bool note_dst(const IrStmt *s, void *ctx) {
    Dsts *d = ctx;
    if (s->kind == IR_S_VCOPY) ts_vec_push(d->a, d->v, s->vcopy.dst);
    return false;
}

static IrStmt *make_async(IrMutator *m, IrStmt *s) {
    if (s->kind != IR_S_VCOPY) return s;
    IrStmt *c = ir_stmt(m->arena, IR_S_VCOPY, s->loc);
    *c = *s;
    c->vcopy.async = 1;
    return c;
}

/* One statement list of a role's uniform code with the runs described
 * above made asynchronous (a new list), or seq itself when it has none.
 * The run's end: TS_WS_ASYNC_WAIT puts a commit and a wait for every
 * group before the (plain) arrive, TS_WS_ASYNC_MBAR / _NOINC make the
 * arrive an arrive_async (noinc for the latter). */
static IrStmt *list_async(TsArena *a, IrStmt *seq, int form) {
    IrStmt *out = seq;
    for (int i = 0; i < seq->seq.n; i++) {
        if (!copy_range(seq->seq.v[i])) continue;
        Dsts d = {.a = a};
        int j = i, arrive = -1;
        for (; j < seq->seq.n; j++) {
            const IrStmt *s = seq->seq.v[j];
            if (s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_ARRIVE) {
                arrive = j;
                break;
            }
            if (copy_range(s)) {
                ir_stmt_any(s, note_dst, &d);
                continue;
            }
            bool touches = ir_stmt_any(s, blocks_async, NULL);
            for (int b = 0; b < d.v.n && !touches; b++) touches = ir_stmt_access_rw(s, d.v.v[b], 0) != 0;
            if (touches) break;
        }
        if (arrive < 0) {
            i = j;
            continue;
        }
        if (out == seq) { /* a list of our own: the original one stays as it was */
            out = ir_seq(a);
            out->loc = seq->loc;
            for (int k = 0; k < seq->seq.n; k++) ir_seq_push(a, out, seq->seq.v[k]);
        }
        /* (out holds what seq holds from i on, at an offset of the statements
         * this function inserted before) */
        int off = out->seq.n - seq->seq.n;
        IrMutator m = {.arena = a, .post_stmt = make_async};
        for (int k = i; k < arrive; k++)
            if (copy_range(out->seq.v[k + off])) out->seq.v[k + off] = ir_mutate_stmt(&m, out->seq.v[k + off]);
        const IrStmt *ar0 = out->seq.v[arrive + off];
        if (form != TS_WS_ASYNC_WAIT) {
            IrStmt *ar = ir_stmt(a, IR_S_MBAR, ar0->loc);
            *ar = *ar0;
            ar->mbar.op = IR_MBAR_ARRIVE_ASYNC;
            ar->mbar.noinc = form == TS_WS_ASYNC_NOINC;
            out->seq.v[arrive + off] = ar;
        } else { /* TS_WS_ASYNC_WAIT: commit, wait for all, then the arrive as it was */
            IrStmt *w = ir_stmt(a, IR_S_ASYNC_WAIT, ar0->loc);
            w->async_wait.pending = 0;
            IrStmt *ins[2] = {ir_stmt(a, IR_S_ASYNC_COMMIT, ar0->loc), w};
            IrStmt *n = ir_seq(a);
            n->loc = out->loc;
            for (int k = 0; k < out->seq.n; k++) {
                if (k == arrive + off)
                    for (int q = 0; q < 2; q++) ir_seq_push(a, n, ins[q]);
                ir_seq_push(a, n, out->seq.v[k]);
            }
            out = n;
        }
        i = arrive;
    }
    return out;
}

/* A statement list of a role's uniform code: inside a T.ws role, outside
 * any thread range (the frames above it, innermost first). */
static bool role_uniform(const IrWalkFrame *f) {
    for (; f; f = f->up) {
        if (f->s->kind == IR_S_ROLE) return true;
        if (f->s->kind == IR_S_FOR && f->s->for_.kind == IR_FOR_THREAD) return false;
    }
    return false;
}

static IrStmt *seq_post(IrMutator *m, IrStmt *s) {
    if (s->kind != IR_S_SEQ || !role_uniform(m->frame ? m->frame->up : NULL)) return s;
    return list_async(m->arena, s, *(const int *)m->ctx);
}

/* ---- the whole kernel's check ---------------------------------------------- */

/* What the check collects over the rewritten body. */
typedef struct Chk {
    TsArena *a;                      /* where the lists grow */
    TS_VEC(const IrStmt *) producers; /* roles holding an arrive_async */
    TS_VEC(const IrBuffer *) dsts;   /* destinations of the async copies */
    bool bad;                        /* a condition of the essay fails */
    bool writes;                     /* a producer's thread writes shared or global memory
                                      * other than by its async copies (no NOINC form) */
} Chk;

static const IrStmt *role_of(const IrWalkFrame *f) {
    for (; f; f = f->up)
        if (f->s->kind == IR_S_ROLE) return f->s;
    return NULL;
}

static bool overlap(const IrStmt *r, const IrStmt *q) {
    return r->role.lo < q->role.lo + q->role.n && q->role.lo < r->role.lo + r->role.n;
}

static bool collect_pre(IrVisitor *v, const IrStmt *s) {
    Chk *c = v->ctx;
    if (s->kind == IR_S_VCOPY && s->vcopy.async) ts_vec_push(c->a, c->dsts, s->vcopy.dst);
    if (s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_ARRIVE_ASYNC) {
        const IrStmt *r = role_of(v->frame);
        bool have = false;
        for (int i = 0; i < c->producers.n; i++) have |= c->producers.v[i] == r;
        if (r && !have) ts_vec_push(c->a, c->producers, r);
    }
    return true;
}

/* A producer's threads make no other release (a plain arrive, a barrier,
 * a communication op) that a reader could rely on instead of the arrive
 * that covers the copies. */
static bool release_pre(IrVisitor *v, const IrStmt *s) {
    Chk *c = v->ctx;
    bool release = (s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_ARRIVE) || s->kind == IR_S_BARRIER ||
                   (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_COMM);
    if (!release) return true;
    const IrStmt *r = role_of(v->frame);
    for (int i = 0; i < c->producers.n && !c->bad; i++) c->bad = !r || overlap(r, c->producers.v[i]);
    return true;
}

/* Every other access to an async copy's destination is made in a role
 * whose threads are not a producer's (readers there wait on its mbarrier). */
static void dst_access(IrVisitor *v, const IrAccess *acc) {
    Chk *c = v->ctx;
    const IrStmt *at0 = v->frame ? v->frame->s : NULL, *r0 = role_of(v->frame);
    if ((acc->rw & IR_ACC_WRITE) && r0 && !acc->buf->mbar_count &&
        (acc->buf->scope == IR_SCOPE_SHARED || acc->buf->scope == IR_SCOPE_GLOBAL) &&
        !(at0 && at0->kind == IR_S_VCOPY && at0->vcopy.async))
        for (int i = 0; i < c->producers.n; i++) c->writes |= overlap(r0, c->producers.v[i]);
    bool dst = false;
    for (int i = 0; i < c->dsts.n; i++) dst |= c->dsts.v[i] == acc->buf;
    if (!dst) return;
    const IrStmt *at = v->frame ? v->frame->s : NULL;
    if (at && at->kind == IR_S_VCOPY && at->vcopy.async) return;
    const IrStmt *r = role_of(v->frame);
    for (int i = 0; i < c->producers.n && !c->bad; i++) c->bad = !r || overlap(r, c->producers.v[i]);
}

/* The body with the runs of every role rewritten in `form`. */
static IrStmt *rewrite(TsPassCtx *cx, int form) {
    IrMutator m = {.arena = cx->arena, .ctx = &form, .post_stmt = seq_post};
    return ir_mutate_stmt(&m, cx->k->body);
}

void ts_pass_ws_async_copy(TsPassCtx *cx) {
    int form = cx->caps->ws_async;
    if (form == TS_WS_ASYNC_OFF || cx->caps->sm < 80 || cx->k->may_block) return;
    IrStmt *body = rewrite(cx, form);
    if (body == cx->k->body) return;
    if (form != TS_WS_ASYNC_WAIT) {
        /* an arrive_async stands only where the copies are seen through
         * their arrive alone (see the essay), and its NOINC form only where
         * the producers have nothing else to release; else the WAIT form */
        Chk c = {.a = cx->arena};
        IrVisitor v = {.ctx = &c, .pre_stmt = collect_pre};
        ir_visit_stmt(&v, body);
        IrVisitor w = {.ctx = &c, .pre_stmt = release_pre, .access = dst_access};
        ir_visit_stmt(&w, body);
        if (c.bad || (form == TS_WS_ASYNC_NOINC && c.writes)) body = rewrite(cx, TS_WS_ASYNC_WAIT);
    }
    cx->k->body = body;
}
