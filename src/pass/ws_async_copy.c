/*
 * ws_async_copy.c — the CUDA pass that makes a T.ws producer role's loads
 * asynchronous: the vector copies from global to shared memory that a role
 * issues before its mbarrier arrive become cp.async, and that arrive an
 * IR_MBAR_ARRIVE_ASYNC: cp.async.mbarrier.arrive (the phase also waits until
 * every cp.async the thread issued before has landed), then the arrive.
 *
 * Why.  TileLang's warp-specialised GEMMs (examples/ws_gemm.py) load a tile
 * pair in the producer role and hand it over with an arrive.  Copied by the
 * threads themselves (global load into registers, then a shared store), each
 * producer thread waits for its loads before its stores and its arrive, and
 * ptxas keeps only a few of a thread's 16 loads in flight ahead of their
 * stores (SASS of ws_matmul_ring 4096^3 fp16, sm_90: five load/store rounds
 * per tile pair, each a global-memory latency): the producer, not the
 * tensor cores, set the pace.  As cp.async the thread issues all its copies
 * back to back, holds no registers for them, and goes on to wait for the
 * next free slot while they land; the consumer's wait on the same mbarrier
 * phase still sees the whole tile, since the phase cannot complete before
 * each producer thread's copies have landed.
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
 * the arrive (uniform code) after its own copies; the cp.async arrive
 * raises the phase's pending count and takes it off when they have landed,
 * so the arrive counts of T.alloc_barrier do not change, and the plain
 * arrive still releases the thread's ordinary stores.
 *
 * The whole kernel, rewritten, must then show that a thread other than the
 * producer's reads those tiles only through the producer's arrives: every
 * other access to a copied tile is made in a role whose threads are not a
 * producer's (a consumer, which waits on the mbarrier before reading), and a
 * producer's threads make no other release a reader could rely on instead
 * (a plain arrive, a barrier, a communication op: its copies might still be
 * in flight there).  Otherwise the kernel keeps its plain copies.  (Left to
 * the program, as with TileLang's TMA copies: a consumer that reads a tile
 * without waiting on the phase the producer's arrive completes.)
 *
 * Only on sm_80 and later (cp.async), with TsCaps.ws_async
 * (TILESCALE_CUDA_WS_ASYNC=0 turns it off for before/after runs).
 * insert_sync keeps such copies in flight until the role's arrive_async
 * and the thread-level interpreter lands them there (ir/interp_thread.c),
 * so both check the same rule as for a cp.async group's wait.
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
 * above made asynchronous (a new list), or seq itself when it has none. */
static IrStmt *list_async(TsArena *a, IrStmt *seq) {
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
        IrMutator m = {.arena = a, .post_stmt = make_async};
        for (int k = i; k < arrive; k++)
            if (copy_range(out->seq.v[k])) out->seq.v[k] = ir_mutate_stmt(&m, out->seq.v[k]);
        IrStmt *ar = ir_stmt(a, IR_S_MBAR, out->seq.v[arrive]->loc);
        *ar = *out->seq.v[arrive];
        ar->mbar.op = IR_MBAR_ARRIVE_ASYNC;
        out->seq.v[arrive] = ar;
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
    return list_async(m->arena, s);
}

/* ---- the whole kernel's check ---------------------------------------------- */

/* What the check collects over the rewritten body. */
typedef struct Chk {
    TsArena *a;                      /* where the lists grow */
    TS_VEC(const IrStmt *) producers; /* roles holding an arrive_async */
    TS_VEC(const IrBuffer *) dsts;   /* destinations of the async copies */
    bool bad;                        /* a condition of the essay fails */
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
    bool dst = false;
    for (int i = 0; i < c->dsts.n; i++) dst |= c->dsts.v[i] == acc->buf;
    if (!dst) return;
    const IrStmt *at = v->frame ? v->frame->s : NULL;
    if (at && at->kind == IR_S_VCOPY && at->vcopy.async) return;
    const IrStmt *r = role_of(v->frame);
    for (int i = 0; i < c->producers.n && !c->bad; i++) c->bad = !r || overlap(r, c->producers.v[i]);
}

void ts_pass_ws_async_copy(TsPassCtx *cx) {
    if (!cx->caps->ws_async || cx->caps->sm < 80 || cx->k->may_block) return;
    IrMutator m = {.arena = cx->arena, .post_stmt = seq_post};
    IrStmt *body = ir_mutate_stmt(&m, cx->k->body);
    if (body == cx->k->body) return;
    /* the rewrite stands only where the copies are seen through their
     * arrive alone (see the essay); else the kernel keeps plain copies */
    Chk c = {.a = cx->arena};
    IrVisitor v = {.ctx = &c, .pre_stmt = collect_pre};
    ir_visit_stmt(&v, body);
    IrVisitor w = {.ctx = &c, .pre_stmt = release_pre, .access = dst_access};
    ir_visit_stmt(&w, body);
    if (!c.bad) cx->k->body = body;
}
