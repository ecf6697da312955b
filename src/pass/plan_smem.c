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
 *  2. Offsets, with reuse.  Live ranges are intervals over statement
 *     lists: the top level, and the body of every serial loop (FOR other
 *     than a thread range, WHILE) and each branch of every if that is a
 *     statement of such a list, nested sequences flattened.  These are the
 *     lists where a barrier may go (uniform code, whose ifs every thread
 *     takes alike; the inside of thread ranges is not).  A branch runs
 *     again only inside a loop body (List.repeats).
 *     Each buffer has a home list: the top level, except for a transient
 *     buffer (IrBuffer.transient: compiler scratch such as a cross-warp
 *     reduction's red_smem, written before it is read every time its
 *     statement runs), whose home is the list of its alloc statement, and
 *     for a buffer used only inside one loop body whose first item using
 *     it writes all of it and reads none (dead before that overwrite in
 *     every iteration: a T.clear/T.fill/whole T.copy into it, a gemm with
 *     clear_accum), whose home is that body.  Its
 *     range is the interval of home statements that access it (through the
 *     shared walker's access callback: loads, stores, vector copies,
 *     tile-op regions), an access inside a loop of the home counting at
 *     that loop, for the whole loop: a buffer allocated outside a loop and
 *     used in it is loop-carried (TileLang's buffers keep their contents
 *     wherever allocated, so a user's T.alloc_shared inside a loop is
 *     homed at the top level too).  Two buffers are compared in the
 *     deepest list that holds both homes (a deeper home counts as the one
 *     statement holding it).  They may share bytes when one's range ends
 *     before the other's begins and barriers can separate them: one in
 *     that list between the two ranges, so that every access to the first
 *     happens, in every thread, before it and every access to the second
 *     after it; and, when that list is a loop body (it runs again), one
 *     after the second range or before the first, for the second's last
 *     use in one iteration and the first's first use in the next.  A
 *     buffer written by cp.async also needs a wait for all groups
 *     (async_wait(0)) of that list between its range and the barrier after
 *     it, since its writes land only then (and may not be the later one in
 *     a loop body).  Buffers are placed each at the lowest
 *     16-byte-aligned offset that overlaps no buffer it cannot share with
 *     (first fit), in three orders (declaration, larger first, earlier
 *     first use first), the smallest total kept.  The plan with reuse is
 *     kept only if it needs fewer bytes than the plain sequential one
 *     (otherwise nothing changes, not even a barrier); it then needs
 *     barriers where the shared pairs are not already separated by one of
 *     their list: per list, one barrier serves every pair whose window
 *     holds it (interval stabbing, each placed as late as possible: right
 *     before the later buffer's first statement), and one barrier at the
 *     end of a loop body serves the pairs around the loop that none of
 *     those serves.  TileLang merges its shared allocations by liveness
 *     too (MergeSharedMemoryAllocations: a linear sequence of statements
 *     with loop scopes, an access lifted to the scope level of the
 *     buffer's allocation, before its thread sync); ours runs after
 *     insert_sync, which does not know of aliasing, hence the barrier
 *     rule above, which does not depend on insert_sync's analysis (the
 *     thread-level interpreter checks it: an access through reused bytes
 *     that no barrier orders is a race).  The typical gains: the
 *     epilogue's staging tile (FlashAttention's O_shared, a GEMM's
 *     C_shared) taking the place of the pipeline's tiles after the main
 *     loop; the reductions of one loop iteration sharing one scratch (MLA
 *     decode).  By default (TsCaps.smem_reuse FIT) reuse is tried only
 *     when the plain layout exceeds the block's limit: a kernel that fits
 *     keeps the sequential layout the code generator used to make, byte
 *     for byte, with no added barrier (so nothing that ran before
 *     changes); one that does not fit (FlashAttention's backward, MLA
 *     decode among TileLang's examples) compiles where reuse brings it
 *     under the limit.  TILESCALE_CUDA_SMEM_REUSE=1 (ALWAYS) reuses
 *     whenever that saves bytes (smaller blocks, perhaps more of them per
 *     SM: for measuring), =0 (OFF) never.  A block still over the limit
 *     loses its row padding (decision 1 is for speed; a block that does
 *     not fit does not run): fused MoE's fragments left in shared memory
 *     fit so.
 *
 *  3. The limit: more bytes than the architecture allows a block
 *     (TsCaps.smem_max) is a user error naming every shared buffer, its
 *     type, bytes and offset.
 *
 * An mbarrier buffer never shares bytes (it lives for the whole kernel:
 * PTX lets its memory be used otherwise only after mbarrier.inval, and a
 * cp.async's arrive on it lands asynchronously).
 *
 * Buffers allocated but never accessed get an offset like the others (in
 * the reusing plan they overlap anything, as nothing reads them).
 */
#include "ir/layout.h"
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
    int alloc_list; /* the list whose item holds its alloc statement (-1: none seen) */
    int home;       /* the list its live range is measured in (0: the top level) */
    int first;      /* first item of `home` that accesses it (-1: never accessed) */
    int last;       /* last one */
    int seen_list;  /* the last place recorded for it (list, item), to skip repeats */
    int seen_item;  /* (see seen_list) */
    bool async;     /* written by cp.async somewhere */
    int64_t off;    /* the offset the plan being built gives it */
} Slot;

/* A place where a slot is accessed: item `item` of list `list`. */
typedef struct Point {
    int slot; /* the slot */
    int list; /* the list */
    int item; /* the item of that list whose statement (or header) makes the access */
} Point;

/* A statement of a list: where it sits, so a barrier can go before it. */
typedef struct Top {
    IrStmt *seq; /* the sequence holding it (NULL: it is a loop's whole body, no sequence) */
    int idx;     /* its index there */
    IrStmt *s;   /* the statement */
} Top;

/* A statement list where barriers may go: the kernel's top level, or the
 * body of a serial loop (FOR other than a thread range, WHILE) or a branch
 * of an if that is an item of such a list; nested sequences flattened. */
typedef struct List {
    int parent;        /* the enclosing list (-1: this is the top level) */
    int at;            /* index in the parent of the loop (or if) whose body (branch) this is */
    bool repeats;      /* it may run again (a loop body, or a branch inside one) */
    int depth;         /* 0 for the top level */
    IrStmt **holder;   /* where this list's statement hangs (kernel or loop body) */
    TS_VEC(Top) items; /* its statements in order */
} List;

/* Whether two slots may share bytes, and what barriers that needs in
 * list `list` (section 2 of the essay). */
typedef struct Pair {
    bool ok;   /* they may share bytes */
    int list;  /* the list that holds both live ranges */
    int lo;    /* forward: a barrier before item p, lo < p <= hi, */
    int hi;    /*   hi < 0: none needed */
    bool wrap; /* the list repeats: a barrier before item p with */
    int wlo;   /*   p > wlo (the later range's last item) */
    int whi;   /*   or p <= whi (the earlier range's first item) */
} Pair;

typedef struct Plan {
    TsPassCtx *cx;
    TS_VEC(List) lists;   /* lists[0]: the top level */
    TS_VEC(Slot) slots;   /* the buffers to place */
    TS_VEC(Point) points; /* where each is accessed */
    int *slot_of;         /* buffer id -> index in slots, or -1 */
    int cur_list;         /* list being walked */
    int cur_item;         /* its item being walked */
    Pair *pair;           /* slots.n x slots.n */
    bool nopad;           /* row padding off (a block that does not fit with it) */
    TS_VEC(IrBuffer *) ab;/* tensor-core A/B operands */
    TS_VEC(IrBuffer *) c; /* tensor-core accumulators */
} Plan;

static void flatten(Plan *P, int l, IrStmt *s) {
    for (int i = 0; i < s->seq.n; i++) {
        IrStmt *c = s->seq.v[i];
        if (c->kind == IR_S_SEQ) flatten(P, l, c);
        else ts_vec_push(P->cx->arena, P->lists.v[l].items, ((Top){s, i, c}));
    }
}

/* A new list for the statement at *holder (a sequence or one statement). */
static int add_list(Plan *P, int parent, int at, IrStmt **holder, bool loop) {
    List L;
    memset(&L, 0, sizeof L);
    L.parent = parent;
    L.at = at;
    L.repeats = loop || (parent >= 0 && P->lists.v[parent].repeats);
    L.depth = parent < 0 ? 0 : P->lists.v[parent].depth + 1;
    L.holder = holder;
    ts_vec_push(P->cx->arena, P->lists, L);
    int id = P->lists.n - 1;
    IrStmt *s = *holder;
    if (s->kind == IR_S_SEQ) flatten(P, id, s);
    else ts_vec_push(P->cx->arena, P->lists.v[id].items, ((Top){NULL, 0, s}));
    return id;
}

static bool in_smem(const IrBuffer *b) {
    return b->scope == IR_SCOPE_SHARED || (b->scope == IR_SCOPE_FRAGMENT && !b->layout);
}

static int slot_index(const Plan *P, const IrBuffer *b) {
    int id = b->id;
    return id >= 0 && id < P->cx->k->next_id ? P->slot_of[id] : -1;
}

static void on_access(IrVisitor *v, const IrAccess *acc) {
    Plan *P = v->ctx;
    int si = slot_index(P, acc->buf);
    if (si < 0) return;
    Slot *sl = &P->slots.v[si];
    if (sl->seen_list != P->cur_list || sl->seen_item != P->cur_item) {
        sl->seen_list = P->cur_list;
        sl->seen_item = P->cur_item;
        ts_vec_push(P->cx->arena, P->points, ((Point){si, P->cur_list, P->cur_item}));
    }
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    if (s && s->kind == IR_S_VCOPY && s->vcopy.async && (acc->rw & IR_ACC_WRITE)) sl->async = true;
}

static bool on_alloc(IrVisitor *v, const IrStmt *s) {
    Plan *P = v->ctx;
    if (s->kind == IR_S_ALLOC) {
        int si = slot_index(P, s->alloc.buf);
        if (si >= 0 && P->slots.v[si].alloc_list < 0) P->slots.v[si].alloc_list = P->cur_list;
    }
    return true;
}

static bool is_jump(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_BREAK || s->kind == IR_S_CONTINUE;
}

/* Walk list l: every item's accesses, serial loops' bodies and ifs'
 * branches as lists of their own (their headers and conditions belong to
 * the item).  An if here is uniform code (insert_sync's premise: every
 * thread takes the same branch, and it places barriers in branches too),
 * so a barrier may go inside a branch; the persistent MLA decode's whole
 * tile is one `if` in its wave loop, two reductions' scratch in it.  (Not
 * an if that holds a break or continue: a barrier put at the end of its
 * branch could be jumped over.) */
static void walk_list(Plan *P, int l) {
    IrVisitor acc = {.ctx = P, .pre_stmt = on_alloc, .access = on_access};
    for (int i = 0; i < P->lists.v[l].items.n; i++) {
        IrStmt *s = P->lists.v[l].items.v[i].s;
        P->cur_list = l;
        P->cur_item = i;
        IrStmt **body = NULL;
        if (s->kind == IR_S_FOR && s->for_.kind != IR_FOR_THREAD && s->for_.body) {
            ir_visit_expr(&acc, s->for_.min);
            ir_visit_expr(&acc, s->for_.extent);
            body = &s->for_.body;
        } else if (s->kind == IR_S_WHILE && s->while_.body) {
            ir_visit_expr(&acc, s->while_.cond);
            body = &s->while_.body;
        } else if (s->kind == IR_S_IF && s->if_.then && !ir_stmt_any(s, is_jump, NULL)) {
            ir_visit_expr(&acc, s->if_.cond);
            walk_list(P, add_list(P, l, i, &s->if_.then, false));
            if (s->if_.else_) {
                P->cur_list = l;
                P->cur_item = i;
                walk_list(P, add_list(P, l, i, &s->if_.else_, false));
            }
            continue;
        }
        if (!body) {
            ir_visit_stmt(&acc, s);
            continue;
        }
        walk_list(P, add_list(P, l, i, body, true));
    }
}

/* The item of list `to` that holds item `item` of list `l` (`to` an
 * ancestor of l or l itself); -1 when l is not inside `to`. */
static int lift(const Plan *P, int l, int item, int to) {
    while (l != to) {
        if (P->lists.v[l].parent < 0) return -1;
        item = P->lists.v[l].at;
        l = P->lists.v[l].parent;
    }
    return item;
}

/* The deepest list holding both a and b. */
static int common_list(const Plan *P, int a, int b) {
    while (a != b) {
        if (P->lists.v[a].depth >= P->lists.v[b].depth) a = P->lists.v[a].parent;
        else b = P->lists.v[b].parent;
    }
    return a;
}

/* ---- dead before a full overwrite --------------------------------------------------

 * A buffer used only inside a loop whose first access in each iteration
 * writes every element of it without reading any (a T.clear, T.fill or
 * whole T.copy into it, a gemm with clear_accum) holds nothing across the
 * loop's back edge: its home is then the loop body, like a transient
 * buffer's, and its bytes may be shared with what the body uses before
 * that overwrite or after its last use.  The overwrite is checked by
 * enumerating the statement's loops (constant bounds) and marking the
 * elements its stores and vector copies write: every element, no
 * predicate, no branch around a write. */

enum { COVER_VARS = 24 };

typedef struct Cover {
    const IrBuffer *b;      /* the buffer */
    int64_t shape[8];       /* its extents */
    int ndim;
    uint8_t *hit;           /* per element (row-major): written */
    IrVar *var[COVER_VARS]; /* the enclosing loops' and lets' variables */
    int64_t val[COVER_VARS];/* ... their values now */
    int nv;
    int64_t steps;          /* statements left to visit (a bound on the work) */
} Cover;

static bool cover_at(Cover *c, IrExpr *const *idx, int nidx, int lanes) {
    if (nidx != c->ndim) return false;
    int64_t e = 0;
    for (int d = 0; d < nidx; d++) {
        int64_t x;
        if (!ir_eval_int(idx[d], c->var, c->val, c->nv, &x) || x < 0 || x + (d == nidx - 1 ? lanes : 1) > c->shape[d])
            return false;
        e = e * c->shape[d] + x;
    }
    for (int l = 0; l < lanes; l++) c->hit[e + l] = 1;
    return true;
}

static bool cover(Cover *c, const IrStmt *s) {
    if (!s) return true;
    if (--c->steps < 0) return false;
    switch (s->kind) {
    case IR_S_SEQ: {
        int mark = c->nv;
        for (int i = 0; i < s->seq.n; i++)
            if (!cover(c, s->seq.v[i])) return false;
        c->nv = mark;
        return true;
    }
    case IR_S_FOR: {
        int64_t lo, ext;
        if (c->nv == COVER_VARS || !ir_eval_int(s->for_.min, c->var, c->val, c->nv, &lo) ||
            !ir_eval_int(s->for_.extent, c->var, c->val, c->nv, &ext))
            return !(ir_stmt_access_rw(s, c->b, 0) & IR_ACC_WRITE);
        int me = c->nv++;
        c->var[me] = s->for_.var;
        for (int64_t i = lo; i < lo + ext; i++) {
            c->val[me] = i;
            if (!cover(c, s->for_.body)) return false;
        }
        c->nv = me;
        return true;
    }
    case IR_S_LET: {
        int64_t x;
        if (c->nv < COVER_VARS && ir_eval_int(s->let.value, c->var, c->val, c->nv, &x)) {
            c->var[c->nv] = s->let.var;
            c->val[c->nv++] = x;
        }
        return true; /* (an unknown value fails the index that uses it) */
    }
    case IR_S_STORE: return s->store.buf != c->b || cover_at(c, s->store.idx, s->store.nidx, 1);
    case IR_S_VCOPY:
        return s->vcopy.dst != c->b || (!s->vcopy.pred && cover_at(c, s->vcopy.didx, s->vcopy.ndi, s->vcopy.lanes));
    default: return !(ir_stmt_access_rw(s, c->b, 0) & IR_ACC_WRITE);
    }
}

/* A gemm with clear_accum into the whole of b. */
static bool clears_accum(const IrStmt *s, const IrBuffer *b) {
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_GEMM || !s->op->clear_accum || s->op->r[2].buf != b) return false;
    const IrRegion *r = &s->op->r[2];
    for (int d = 0; d < r->ndim; d++) {
        int64_t st, e, x;
        if (!ir_is_const_int(r->start[d], &st) || st || !ir_is_const_int(r->extent[d], &e) ||
            !ir_is_const_int(b->shape[d], &x) || e != x)
            return false;
    }
    return r->ndim == b->ndim;
}

/* Statement s writes every element of b and reads none. */
static bool overwrites(Plan *P, const IrStmt *s, const IrBuffer *b) {
    if (clears_accum(s, b)) return true;
    if (ir_stmt_access_rw(s, b, 0) != IR_ACC_WRITE || b->ndim < 1 || b->ndim > 8 || b->stages > 1) return false;
    Cover c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.ndim = b->ndim;
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++) {
        if (!ir_is_const_int(b->shape[d], &c.shape[d]) || c.shape[d] <= 0) return false;
        n *= c.shape[d];
        if (n > (1 << 20)) return false;
    }
    c.hit = TS_NEWN(P->cx->arena, uint8_t, n);
    c.steps = 1 << 20;
    if (!cover(&c, s)) return false;
    for (int64_t e = 0; e < n; e++)
        if (!c.hit[e]) return false;
    return true;
}

/* Slot s (home the top level) is used only inside one loop body whose
 * first item using it overwrites it: that body becomes its home. */
static void home_in_loop(Plan *P, int si) {
    Slot *s = &P->slots.v[si];
    int cl = -1;
    for (int p = 0; p < P->points.n; p++)
        if (P->points.v[p].slot == si) cl = cl < 0 ? P->points.v[p].list : common_list(P, cl, P->points.v[p].list);
    if (cl <= 0) return;
    int first = -1;
    for (int p = 0; p < P->points.n; p++) {
        const Point *pt = &P->points.v[p];
        if (pt->slot != si) continue;
        int it = lift(P, pt->list, pt->item, cl);
        if (first < 0 || it < first) first = it;
    }
    if (first >= 0 && overwrites(P, P->lists.v[cl].items.v[first].s, s->b)) s->home = cl;
}

/* Home and live range of every slot: a transient buffer's home is the
 * list of its alloc statement (when every access lies inside it), that of
 * a buffer used only in a loop body that overwrites it first the body, any
 * other buffer's the top level; an access inside a loop item of the home
 * counts at that item, for the whole loop. */
static void live_ranges(Plan *P) {
    for (int i = 0; i < P->slots.n; i++) {
        Slot *s = &P->slots.v[i];
        s->home = s->b->transient && s->alloc_list >= 0 ? s->alloc_list : 0;
        s->first = s->last = -1;
    }
    for (int p = 0; p < P->points.n; p++) {
        const Point *pt = &P->points.v[p];
        Slot *s = &P->slots.v[pt->slot];
        if (lift(P, pt->list, pt->item, s->home) < 0) s->home = 0; /* used outside its list: be plain */
    }
    for (int i = 0; i < P->slots.n; i++)
        if (P->slots.v[i].home == 0 && !P->slots.v[i].b->transient) home_in_loop(P, i);
    for (int p = 0; p < P->points.n; p++) {
        const Point *pt = &P->points.v[p];
        Slot *s = &P->slots.v[pt->slot];
        int it = lift(P, pt->list, pt->item, s->home);
        if (s->first < 0 || it < s->first) s->first = it;
        if (it > s->last) s->last = it;
    }
}

/* Slot s's live range counted in list c (an ancestor of its home, or it). */
static void range_in(const Plan *P, const Slot *s, int c, int *f, int *l) {
    if (s->home == c) {
        *f = s->first;
        *l = s->last;
        return;
    }
    int h = s->home;
    while (P->lists.v[h].parent != c) h = P->lists.v[h].parent;
    *f = *l = P->lists.v[h].at;
}

static bool is_wait_all(const IrStmt *s) { return s->kind == IR_S_ASYNC_WAIT && s->async_wait.pending == 0; }

/* May slots i and j share bytes, and with which barriers? */
static Pair decide(const Plan *P, int i, int j) {
    Pair r = {true, 0, -1, -1, false, -1, -1};
    const Slot *a = &P->slots.v[i], *b = &P->slots.v[j];
    if (i != j && (a->b->mbar_count || b->b->mbar_count)) {
        /* an mbarrier keeps its bytes for the whole kernel: PTX lets its memory serve another
         * purpose only after mbarrier.inval, and an asynchronous arrive (a cp.async's
         * cp.async.mbarrier.arrive.noinc) lands when the unit says, not in program order (the
         * H200's racecheck, session 11: gemm_tcgen5mma_ws's epilogue fragment placed over its
         * three mbarriers reported a hazard) */
        r.ok = false;
        return r;
    }
    if (i == j || a->first < 0 || b->first < 0) return r; /* never accessed: nothing to separate */
    int c = common_list(P, a->home, b->home), af, al, bf, bl;
    range_in(P, a, c, &af, &al);
    range_in(P, b, c, &bf, &bl);
    const Slot *x = a, *y = b;
    int xf = af, xl = al, yf = bf, yl = bl;
    if (bl < af) {
        x = b, y = a;
        xf = bf, xl = bl, yf = af, yl = al;
    } else if (al >= bf) {
        r.ok = false; /* live at once */
        return r;
    }
    const List *L = &P->lists.v[c];
    r.list = c;
    r.lo = xl;
    r.hi = yf;
    if (x->async) { /* x's writes land only at a wait for all groups */
        int w = xl + 1;
        while (w < yf && !is_wait_all(L->items.v[w].s)) w++;
        if (w >= yf) {
            r.ok = false;
            return r;
        }
        r.lo = w;
    }
    if (L->repeats) { /* a loop body runs again: y's last use, then x's first */
        if (y->async) {
            r.ok = false;
            return r;
        }
        r.wrap = true;
        r.wlo = yl;
        r.whi = xf;
    }
    return r;
}

static const Pair *pair_of(const Plan *P, int i, int j) { return &P->pair[i * P->slots.n + j]; }

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
    if (!P->cx->caps->pad || P->nopad || b->ndim < 2 || b->swizzle.kind != IR_SWIZZLE_NONE) return 0;
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

/* x rounded up for slot s: to its buffer's own alignment where it asks for
 * more (a wgmma operand: its swizzle pattern's repeat, IrBuffer.smem_align). */
static int64_t align_for(const Slot *s, int64_t x) {
    int64_t al = s->b->smem_align > TS_CUDA_SMEM_ALIGN ? s->b->smem_align : TS_CUDA_SMEM_ALIGN;
    return (x + al - 1) / al * al;
}

/* Place every slot in the order given; reuse: share bytes where allowed
 * (first fit).  Returns the total. */
static int64_t place(Plan *P, bool reuse, const int *order) {
    int64_t total = 0;
    for (int oi = 0; oi < P->slots.n; oi++) {
        int i = order[oi];
        Slot *s = &P->slots.v[i];
        int64_t off = 0;
        if (!reuse) {
            off = align_for(s, total);
        } else {
            /* the lowest candidate start (0 or the aligned end of a placed
             * buffer it cannot share with) clear of them all */
            int64_t best = -1;
            for (int oc = -1; oc < oi; oc++) {
                int c = oc < 0 ? -1 : order[oc];
                if (c >= 0 && pair_of(P, c, i)->ok) continue;
                int64_t cand = c < 0 ? 0 : align_for(s, P->slots.v[c].off + P->slots.v[c].bytes);
                bool clear = true;
                for (int oo = 0; oo < oi && clear; oo++) {
                    const Slot *q = &P->slots.v[order[oo]];
                    if (pair_of(P, order[oo], i)->ok) continue;
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

/* The orders tried for the reusing plan (first fit depends on the order):
 * declaration, larger buffers first, earlier first use first. */
enum { N_ORDERS = 3 };

static void make_order(const Plan *P, int which, int *order) {
    int n = P->slots.n;
    int64_t *key = TS_NEWN(P->cx->arena, int64_t, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        const Slot *s = &P->slots.v[i];
        int f = 0, l = 0;
        if (which == 2 && s->first >= 0) range_in(P, s, 0, &f, &l);
        key[i] = which == 1 ? -s->bytes : which == 2 ? f : 0;
    }
    /* stable insertion sort by key (a handful of buffers) */
    for (int i = 0; i < n; i++) {
        int k = i;
        while (k > 0 && key[order[k - 1]] > key[i]) k--;
        for (int m = i; m > k; m--) order[m] = order[m - 1];
        order[k] = i;
    }
}

/* The best plan: plain (sequential), or with reuse the smallest over the
 * orders; the offsets are left in the slots.  Returns the total. */
static int64_t layout(Plan *P, bool reuse) {
    int *order = TS_NEWN(P->cx->arena, int, P->slots.n > 0 ? P->slots.n : 1);
    make_order(P, 0, order);
    if (!reuse) return place(P, false, order);
    int64_t best = -1;
    int best_o = 0;
    for (int o = 0; o < N_ORDERS; o++) {
        make_order(P, o, order);
        int64_t t = place(P, true, order);
        if (best < 0 || t < best) {
            best = t;
            best_o = o;
        }
    }
    make_order(P, best_o, order);
    return place(P, true, order);
}

/* A barrier the reusing plan needs in list `list`: before item p with
 * lo < p <= hi (forward), or p > lo or p <= hi (wrap: around the loop). */
typedef struct Need {
    int list;  /* the list */
    bool wrap; /* around the loop (see above) */
    int lo, hi;/* the window */
} Need;

static int need_cmp(const void *x, const void *y) {
    const Need *a = x, *b = y;
    if (a->list != b->list) return a->list < b->list ? -1 : 1;
    if (a->wrap != b->wrap) return a->wrap ? 1 : -1;
    return a->hi != b->hi ? (a->hi < b->hi ? -1 : 1) : (a->lo < b->lo ? -1 : a->lo > b->lo);
}

/* A barrier to insert: before item p of list `list` (p == its item count: at its end). */
typedef struct At {
    int list; /* the list */
    int p;    /* the position */
} At;

static int at_cmp(const void *x, const void *y) {
    const At *a = x, *b = y;
    if (a->list != b->list) return a->list < b->list ? -1 : 1;
    return a->p > b->p ? -1 : a->p < b->p; /* from the back, so earlier indices stay valid */
}

static bool barrier_item(const List *L, int t) { return L->items.v[t].s->kind == IR_S_BARRIER; }

/* Does a barrier before item p serve need n? */
static bool serves(const Need *n, int p) { return n->wrap ? (p > n->lo || p <= n->hi) : (p > n->lo && p <= n->hi); }

/* Put a barrier before item p of list l (p == item count: at the end). */
static void put_barrier(Plan *P, int l, int p) {
    TsArena *a = P->cx->arena;
    List *L = &P->lists.v[l];
    if (L->items.n == 1 && !L->items.v[0].seq) { /* a loop body of one statement: make it a sequence */
        IrStmt *seq = ir_seq(a);
        seq->loc = (*L->holder)->loc;
        ir_seq_push(a, seq, *L->holder);
        *L->holder = seq;
        L->items.v[0].seq = seq;
        L->items.v[0].idx = 0;
    }
    IrStmt *ref = p < L->items.n ? L->items.v[p].s : L->items.v[L->items.n - 1].s;
    IrStmt *bar = ir_stmt(a, IR_S_BARRIER, ref->loc);
    if (p == L->items.n) {
        ir_seq_push(a, *L->holder, bar);
        return;
    }
    Top *t = &L->items.v[p];
    IrStmt *seq = t->seq;
    ir_seq_push(a, seq, bar); /* grow by one, then shift */
    for (int k = seq->seq.n - 1; k > t->idx; k--) seq->seq.v[k] = seq->seq.v[k - 1];
    seq->seq.v[t->idx] = bar;
}

/* The barriers the reusing plan needs: pairs that overlap in memory and
 * are not already separated by a barrier of their list; greedy stabbing
 * per list (sorted by the latest position, one barrier there serves every
 * pair whose window contains it), then one barrier at the end of a loop
 * body for the pairs around the loop that none of those serves.  Returns
 * how many were inserted. */
static int insert_barriers(Plan *P) {
    TsArena *a = P->cx->arena;
    TS_VEC(Need) need = {0};
    for (int i = 0; i < P->slots.n; i++)
        for (int j = 0; j < i; j++) {
            const Slot *x = &P->slots.v[i], *y = &P->slots.v[j];
            if (x->off >= y->off + y->bytes || y->off >= x->off + x->bytes) continue;
            const Pair *pr = pair_of(P, j, i);
            if (!pr->ok)
                ts_internal(P->cx->diag, "plan_smem: '%s' and '%s' overlap but may not", x->b->name, y->b->name);
            const List *L = &P->lists.v[pr->list];
            if (pr->hi >= 0) {
                bool fenced = false;
                for (int t = pr->lo + 1; t < pr->hi && !fenced; t++) fenced = barrier_item(L, t);
                if (!fenced) ts_vec_push(a, need, ((Need){pr->list, false, pr->lo, pr->hi}));
            }
            if (pr->wrap) {
                bool fenced = false;
                for (int t = 0; t < L->items.n && !fenced; t++)
                    fenced = barrier_item(L, t) && (t > pr->wlo || t < pr->whi);
                if (!fenced) ts_vec_push(a, need, ((Need){pr->list, true, pr->wlo, pr->whi}));
            }
        }
    if (!need.n) return 0;
    qsort(need.v, (size_t)need.n, sizeof *need.v, need_cmp);
    At *at = TS_NEWN(a, At, need.n);
    int nat = 0;
    for (int i = 0; i < need.n; i++) {
        const Need *n = &need.v[i];
        bool served = false;
        for (int k = nat - 1; k >= 0 && at[k].list == n->list && !served; k--) served = serves(n, at[k].p);
        if (served) continue;
        at[nat++] = (At){n->list, n->wrap ? P->lists.v[n->list].items.n : n->hi};
    }
    qsort(at, (size_t)nat, sizeof *at, at_cmp);
    for (int i = 0; i < nat; i++) put_barrier(P, at[i].list, at[i].p);
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

/* Every slot's bytes (row padding as P->nopad says). */
static void size_slots(Plan *P) {
    for (int i = 0; i < P->slots.n; i++) P->slots.v[i].bytes = buffer_bytes(P, P->slots.v[i].b);
}

/* The plan for the slots' current bytes: plain, or reusing where the
 * policy asks and that saves bytes (*reused then true); the offsets are
 * left in the slots.  Returns the total. */
static int64_t choose(Plan *P, bool *reused) {
    int64_t plain = layout(P, false);
    int reuse = P->cx->caps->smem_reuse;
    bool over = P->cx->caps->smem_max > 0 && plain > P->cx->caps->smem_max;
    *reused = false;
    if (P->slots.n > 1 && (reuse == TS_SMEM_REUSE_ALWAYS || (reuse == TS_SMEM_REUSE_FIT && over))) {
        int64_t shared = layout(P, true);
        if (shared < plain) {
            *reused = true;
            return shared;
        }
        layout(P, false);
    }
    return plain;
}

void ts_pass_plan_smem(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    TsArena *a = cx->arena;
    Plan P;
    memset(&P, 0, sizeof P);
    P.cx = cx;
    P.slot_of = TS_NEWN(a, int, k->next_id > 0 ? k->next_id : 1);
    for (int i = 0; i < k->next_id; i++) P.slot_of[i] = -1;
    if (!k->body) k->body = ir_seq(a);
    if (k->body->kind != IR_S_SEQ) {
        IrStmt *seq = ir_seq(a);
        ir_seq_push(a, seq, k->body);
        k->body = seq;
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
        ts_vec_push(a, P.slots, ((Slot){b, buffer_bytes(&P, b), -1, 0, -1, -1, -1, -1, false, 0}));
    }

    /* the lists, where each buffer is used, live ranges, which pairs may share */
    walk_list(&P, add_list(&P, -1, 0, &k->body, false));
    live_ranges(&P);
    int n = P.slots.n;
    P.pair = TS_NEWN(a, Pair, n > 0 ? n * n : 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) P.pair[i * n + j] = decide(&P, i, j);

    bool reused;
    int64_t total = choose(&P, &reused);
    long long limit = cx->caps->smem_max;
    bool padded = false;
    for (int i = 0; i < n; i++) padded |= P.slots.v[i].b->row_pad > 0;
    if (limit > 0 && total > limit && padded) { /* padding is for speed: a block that does not fit does not run */
        P.nopad = true;
        size_slots(&P);
        bool r2;
        int64_t t2 = choose(&P, &r2);
        if (t2 <= limit) {
            total = t2;
            reused = r2;
        } else { /* not even so: the error shows the plan as it was */
            P.nopad = false;
            size_slots(&P);
            total = choose(&P, &reused);
        }
    }
    if (reused) insert_barriers(&P);
    for (int i = 0; i < n; i++) {
        P.slots.v[i].b->smem_offset = P.slots.v[i].off;
        P.slots.v[i].b->smem_bytes = P.slots.v[i].bytes;
    }
    k->smem_bytes = total;
    k->smem_planned = true;
    check_limit(&P, total);
}
