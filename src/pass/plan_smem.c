/*
 * plan_smem.c — the CUDA pass that lays out the block's dynamic shared
 * memory: where each shared buffer lives (and fragments that layout
 * inference left in shared memory), how its rows are padded, and how many
 * bytes the block needs.  The code generator used to decide this while
 * printing; now the decision is in the IR (IrBuffer.smem_offset /
 * smem_bytes / row_pad, IrKernel.smem_bytes), printed by the IR printer
 * and visible with --dump-after plan_smem, and the code generator only
 * reads it.
 *
 * It runs after insert_sync, on thread-level IR whose top-level
 * statements are uniform code (every thread runs them, in order), for
 * three decisions:
 *
 *  1. Row padding of tensor-core operands that have no swizzle (the
 *     fallback when swizzles are off or a tile has none): ldmatrix reads 8
 *     rows of 16 bytes per matrix; they hit different banks only if the row
 *     stride is an odd number of 16-byte chunks, so a 16-bit A/B tile whose
 *     rows are an even number of chunks gets 8 more elements per row.
 *     Accumulators kept in shared memory are read and written as 8-byte
 *     pairs by 4 rows per half-warp: rows of 0 or 64 bytes modulo 128 get
 *     32 more bytes, which puts those rows in 4 different bank groups.
 *     (TILESCALE_CUDA_PAD=0, TsCaps.pad, turns it off.)
 *
 *  2. Offsets, with reuse.  Each buffer's live range is the interval of
 *     top-level statements (nested sequences flattened) that access it,
 *     through the shared walker's access callback (loads, stores, vector
 *     copies, tile-op regions).  Two buffers may share bytes when one's
 *     range ends before the other's begins and a barrier can separate
 *     them: every access to the first then happens, in every thread,
 *     before the barrier, and every access to the second after it.  A
 *     buffer written by cp.async also needs a top-level wait for all groups
 *     (async_wait(0)) between its range and that barrier, since its writes
 *     land only then.  Buffers are placed in declaration order, each at the
 *     lowest 16-byte-aligned offset that overlaps no buffer it cannot
 *     share with (first fit).  The plan with reuse is kept only if it
 *     needs fewer bytes than the plain sequential one (otherwise nothing
 *     changes, not even a barrier); it then needs barriers where the
 *     shared pairs are not already separated by one: one top-level
 *     barrier is inserted per group of pairs, as late as possible (right
 *     before the later buffer's first statement), chosen by interval
 *     stabbing so that one barrier serves every pair it can.  TileLang
 *     merges its shared allocations by liveness the same way
 *     (MergeSharedMemoryAllocations, before its thread sync); ours runs
 *     after insert_sync, which does not know of aliasing, hence the
 *     barrier rule above, which does not depend on insert_sync's analysis.
 *     The typical gain is the epilogue's staging tile (FlashAttention's
 *     O_shared, a GEMM's C_shared) taking the place of the pipeline's
 *     tiles after the main loop.  By default (TsCaps.smem_reuse FIT)
 *     reuse is tried only when the plain layout exceeds the block's limit:
 *     a kernel that fits keeps the sequential layout the code generator
 *     used to make, byte for byte, with no added barrier (so nothing that
 *     ran before changes); one that does not fit (FlashAttention's
 *     backward, MLA decode, fused MoE among TileLang's examples) compiles
 *     where reuse brings it under the limit.  TILESCALE_CUDA_SMEM_REUSE=1
 *     (ALWAYS) reuses whenever that saves bytes (smaller blocks, perhaps
 *     more of them per SM: for measuring), =0 (OFF) never.
 *
 *  3. The limit: more bytes than the architecture allows a block
 *     (TsCaps.smem_max) is a user error naming every shared buffer, its
 *     type, bytes and offset.
 *
 * Buffers allocated but never accessed get an offset like the others (in
 * the reusing plan they overlap anything, as nothing reads them).
 */
#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"
#include "target/cuda/cuda_target.h"

#include <stdlib.h>
#include <string.h>

/* One buffer the plan places. */
typedef struct Slot {
    IrBuffer *b;    /* the buffer */
    int64_t bytes;  /* its size, row padding and stages included */
    int first;      /* first top-level statement that accesses it (-1: none) */
    int last;       /* last one */
    bool async;     /* written by cp.async somewhere */
    int64_t off;    /* the offset the plan being built gives it */
} Slot;

/* A top-level statement: where it sits, so a barrier can go before it. */
typedef struct Top {
    IrStmt *seq; /* the sequence holding it */
    int idx;     /* its index there */
    IrStmt *s;   /* the statement */
} Top;

typedef struct Plan {
    TsPassCtx *cx;
    TS_VEC(Top) top;      /* the top-level statements, in order */
    TS_VEC(Slot) slots;   /* the buffers to place */
    int *slot_of;         /* buffer id -> index in slots, or -1 */
    int cur;              /* top-level statement being walked */
    TS_VEC(IrBuffer *) ab;/* tensor-core A/B operands */
    TS_VEC(IrBuffer *) c; /* tensor-core accumulators */
} Plan;

static void flatten(Plan *P, IrStmt *s) {
    for (int i = 0; i < s->seq.n; i++) {
        IrStmt *c = s->seq.v[i];
        if (c->kind == IR_S_SEQ) flatten(P, c);
        else ts_vec_push(P->cx->arena, P->top, ((Top){s, i, c}));
    }
}

static bool in_smem(const IrBuffer *b) {
    return b->scope == IR_SCOPE_SHARED || (b->scope == IR_SCOPE_FRAGMENT && !b->layout);
}

static void on_access(IrVisitor *v, const IrAccess *acc) {
    Plan *P = v->ctx;
    int id = acc->buf->id, si = id >= 0 && id < P->cx->k->next_id ? P->slot_of[id] : -1;
    if (si < 0) return;
    Slot *sl = &P->slots.v[si];
    if (sl->first < 0) sl->first = P->cur;
    sl->last = P->cur;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    if (s && s->kind == IR_S_VCOPY && s->vcopy.async && (acc->rw & IR_ACC_WRITE)) sl->async = true;
}

static bool on_stmt(IrVisitor *v, const IrStmt *s) {
    Plan *P = v->ctx;
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_MMA_SYNC) {
        ts_vec_push(P->cx->arena, P->ab, s->op->r[0].buf);
        ts_vec_push(P->cx->arena, P->ab, s->op->r[1].buf);
        ts_vec_push(P->cx->arena, P->c, s->op->r[2].buf);
    }
    return true;
}

static bool listed(const IrBuffer *const *v, int n, const IrBuffer *b) {
    for (int i = 0; i < n; i++)
        if (v[i] == b) return true;
    return false;
}

/* Elements of padding per row of b (decision 1 of the essay). */
static int row_pad(const Plan *P, const IrBuffer *b, int64_t row_elems) {
    if (!P->cx->caps->pad || b->ndim < 2 || b->swizzle.kind != IR_SWIZZLE_NONE) return 0;
    int64_t es = (ts_dtype_bits(b->dt) + 7) / 8, bytes = row_elems * es;
    if (es == 2 && bytes % 16 == 0 && (bytes / 16) % 2 == 0 && listed((const IrBuffer *const *)P->ab.v, P->ab.n, b))
        return 8;
    if (es == 4 && (bytes % 128 == 0 || bytes % 128 == 64) && listed((const IrBuffer *const *)P->c.v, P->c.n, b))
        return 8;
    return 0;
}

/* Bytes of b with its padding; an error for run-time or absurd extents. */
static int64_t buffer_bytes(Plan *P, IrBuffer *b) {
    TsDiag *d = P->cx->diag;
    int64_t elems = 1;
    for (int i = b->ndim - 1; i >= 0; i--) {
        int64_t ext;
        if (!b->shape || !ir_is_const_int(b->shape[i], &ext))
            ts_fail_at(d, TS_ERR_UNSUPPORTED, b->loc, "%s buffer '%s' needs constant extents on the CUDA target",
                       ir_scope_name(b->scope), b->name);
        if (ext < 0 || ext > ((int64_t)1 << 40) || elems > ((int64_t)1 << 40) / (ext ? ext : 1))
            ts_fail_at(d, TS_ERR_UNSUPPORTED, b->loc, "%s buffer '%s' is too large", ir_scope_name(b->scope),
                       b->name);
        elems *= ext;
        if (i == b->ndim - 1) {
            b->row_pad = row_pad(P, b, ext);
            elems += b->row_pad;
        }
    }
    return elems * (b->stages > 1 ? b->stages : 1) * ((ts_dtype_bits(b->dt) + 7) / 8);
}

static int64_t align_up(int64_t x) { return (x + TS_CUDA_SMEM_ALIGN - 1) / TS_CUDA_SMEM_ALIGN * TS_CUDA_SMEM_ALIGN; }

/* Where a barrier between x (earlier) and y (later) must go for them to
 * share bytes: before top-level statement p with *lo < p <= y->first.
 * False when they cannot share (ranges overlap, or x is written by
 * cp.async and no wait for all groups lies between). */
static bool separable(const Plan *P, const Slot *x, const Slot *y, int *lo) {
    if (x->first < 0 || y->first < 0) { /* never accessed: nothing to separate */
        *lo = -1;
        return true;
    }
    if (x->last >= y->first) return false;
    *lo = x->last;
    if (!x->async) return true;
    for (int i = x->last + 1; i < y->first; i++) {
        const IrStmt *s = P->top.v[i].s;
        if (s->kind == IR_S_ASYNC_WAIT && s->async_wait.pending == 0) {
            *lo = i;
            return true;
        }
    }
    return false;
}

/* May slots i and j share bytes? (*lo, *hi] is then where the barrier
 * goes (*hi < 0: no barrier needed). */
static bool can_share(const Plan *P, int i, int j, int *lo, int *hi) {
    const Slot *a = &P->slots.v[i], *b = &P->slots.v[j];
    *hi = -1;
    if (a->first < 0 || b->first < 0) return true;
    if (a->last < b->first) {
        if (!separable(P, a, b, lo)) return false;
        *hi = b->first;
        return true;
    }
    if (!separable(P, b, a, lo)) return false;
    *hi = a->first;
    return true;
}

/* Place every slot; reuse: share bytes where allowed.  Returns the total. */
static int64_t place(Plan *P, bool reuse) {
    int64_t total = 0;
    for (int i = 0; i < P->slots.n; i++) {
        Slot *s = &P->slots.v[i];
        int64_t off = 0;
        if (!reuse) {
            off = align_up(total);
        } else {
            /* first fit: the lowest candidate start (0 or the aligned end
             * of a placed buffer it cannot share with) clear of them all */
            int64_t best = -1;
            for (int c = -1; c < i; c++) {
                int lo, hi;
                if (c >= 0 && can_share(P, c, i, &lo, &hi)) continue;
                int64_t cand = c < 0 ? 0 : align_up(P->slots.v[c].off + P->slots.v[c].bytes);
                bool clear = true;
                for (int o = 0; o < i && clear; o++) {
                    const Slot *q = &P->slots.v[o];
                    if (can_share(P, o, i, &lo, &hi)) continue;
                    clear = cand >= q->off + q->bytes || cand + s->bytes <= q->off;
                }
                if (clear && (best < 0 || cand < best)) best = cand;
            }
            off = best;
        }
        s->off = off;
        if (off + s->bytes > total) total = off + s->bytes;
    }
    return align_up(total);
}

/* One pair that shares bytes: a barrier before statement p, lo < p <= hi. */
typedef struct Need {
    int lo, hi;
} Need;

static int need_cmp(const void *x, const void *y) {
    const Need *a = x, *b = y;
    return a->hi != b->hi ? (a->hi < b->hi ? -1 : 1) : (a->lo < b->lo ? -1 : a->lo > b->lo);
}

/* The barriers the reusing plan needs: pairs that overlap in memory and
 * are not already separated by a top-level barrier; greedy stabbing
 * (sorted by the latest position, one barrier there serves every pair
 * whose window contains it).  Returns how many were inserted. */
static int insert_barriers(Plan *P) {
    TsArena *a = P->cx->arena;
    TS_VEC(Need) need = {0};
    for (int i = 0; i < P->slots.n; i++)
        for (int j = 0; j < i; j++) {
            const Slot *x = &P->slots.v[i], *y = &P->slots.v[j];
            if (x->off >= y->off + y->bytes || y->off >= x->off + x->bytes) continue;
            int lo, hi;
            if (!can_share(P, j, i, &lo, &hi))
                ts_internal(P->cx->diag, "plan_smem: '%s' and '%s' overlap but may not", x->b->name, y->b->name);
            if (hi < 0) continue;
            bool fenced = false;
            for (int t = lo + 1; t < hi && !fenced; t++) fenced = P->top.v[t].s->kind == IR_S_BARRIER;
            if (!fenced) ts_vec_push(a, need, ((Need){lo, hi}));
        }
    if (!need.n) return 0;
    qsort(need.v, (size_t)need.n, sizeof *need.v, need_cmp);
    int *at = TS_NEWN(a, int, need.n), nat = 0;
    for (int i = 0; i < need.n; i++) {
        if (nat && at[nat - 1] > need.v[i].lo && at[nat - 1] <= need.v[i].hi) continue;
        at[nat++] = need.v[i].hi;
    }
    /* from the last position back, so earlier indices stay valid */
    for (int i = nat - 1; i >= 0; i--) {
        Top *t = &P->top.v[at[i]];
        IrStmt *bar = ir_stmt(a, IR_S_BARRIER, t->s->loc);
        IrStmt *seq = t->seq;
        ir_seq_push(a, seq, bar); /* grow by one, then shift */
        for (int k = seq->seq.n - 1; k > t->idx; k--) seq->seq.v[k] = seq->seq.v[k - 1];
        seq->seq.v[t->idx] = bar;
    }
    return nat;
}

/* More bytes than the block may have: the error names every buffer. */
static void check_limit(Plan *P, int64_t total) {
    TsPassCtx *cx = P->cx;
    long long limit = cx->caps->smem_max;
    if (limit <= 0 || total <= limit) return;
    TsBuf list = {0};
    const IrBuffer *largest = NULL;
    int64_t largest_bytes = -1;
    for (int i = 0; i < P->slots.n; i++) {
        const Slot *s = &P->slots.v[i];
        const IrBuffer *b = s->b;
        ts_buf_printf(&list, "    '%s' %s %s[", b->name, ir_scope_name(b->scope), ts_dtype_name(b->dt));
        for (int j = 0; j < b->ndim; j++) {
            int64_t e = 0;
            ir_is_const_int(b->shape[j], &e);
            ts_buf_printf(&list, "%s%lld", j ? ", " : "", (long long)e);
        }
        ts_buf_printf(&list, "]%s: %lld bytes at offset %lld\n", b->stages > 1 ? " x stages" : "",
                      (long long)s->bytes, (long long)s->off);
        if (s->bytes > largest_bytes) {
            largest_bytes = s->bytes;
            largest = b;
        }
    }
    TsDiag *d = cx->diag;
    ts_diag_add(d, largest ? largest->loc : (TsLoc){0}, "error",
                "kernel '%s' needs %lld bytes of shared memory per block, more than the %lld bytes %s allows",
                cx->k->name, (long long)total, limit, cx->caps->arch[0] ? cx->caps->arch : "the device");
    ts_buf_printf(&d->msg, "  the block's shared buffers:\n%s", ts_buf_str(&list));
    if (cx->k->layout_note) /* fragments counted above because layout inference left them there */
        ts_buf_printf(&d->msg, "  (fragments stay in shared memory: %s)\n", cx->k->layout_note);
    ts_buf_free(&list);
    ts_rethrow(d, TS_ERR_UNSUPPORTED);
}

void ts_pass_plan_smem(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    TsArena *a = cx->arena;
    Plan P;
    memset(&P, 0, sizeof P);
    P.cx = cx;
    P.slot_of = TS_NEWN(a, int, k->next_id > 0 ? k->next_id : 1);
    for (int i = 0; i < k->next_id; i++) P.slot_of[i] = -1;
    if (k->body && k->body->kind == IR_S_SEQ) flatten(&P, k->body);
    else if (k->body) {
        IrStmt *seq = ir_seq(a);
        ir_seq_push(a, seq, k->body);
        k->body = seq;
        flatten(&P, seq);
    }

    /* tensor-core operands first (their padding), then the buffers */
    IrVisitor ops = {.ctx = &P, .pre_stmt = on_stmt};
    ir_visit_stmt(&ops, k->body);
    for (int i = 0; i < k->buffers.n; i++) {
        IrBuffer *b = k->buffers.v[i];
        b->smem_offset = b->smem_bytes = 0;
        b->row_pad = 0;
        if (!in_smem(b)) continue;
        if (b->id < 0 || b->id >= k->next_id) ts_internal(cx->diag, "plan_smem: buffer '%s' without an id", b->name);
        P.slot_of[b->id] = P.slots.n;
        ts_vec_push(a, P.slots, ((Slot){b, buffer_bytes(&P, b), -1, -1, false, 0}));
    }

    /* live ranges over the top-level statements */
    IrVisitor acc = {.ctx = &P, .access = on_access};
    for (P.cur = 0; P.cur < P.top.n; P.cur++) ir_visit_stmt(&acc, P.top.v[P.cur].s);

    int64_t plain = place(&P, false), total = plain;
    int reuse = cx->caps->smem_reuse;
    bool over = cx->caps->smem_max > 0 && plain > cx->caps->smem_max;
    if (P.slots.n > 1 && (reuse == TS_SMEM_REUSE_ALWAYS || (reuse == TS_SMEM_REUSE_FIT && over))) {
        int64_t shared = place(&P, true);
        if (shared < plain) {
            total = shared;
            insert_barriers(&P);
        } else {
            place(&P, false);
        }
    }
    for (int i = 0; i < P.slots.n; i++) {
        P.slots.v[i].b->smem_offset = P.slots.v[i].off;
        P.slots.v[i].b->smem_bytes = P.slots.v[i].bytes;
    }
    k->smem_bytes = total;
    k->smem_planned = true;
    check_limit(&P, total);
}
