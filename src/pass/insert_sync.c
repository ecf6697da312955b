/*
 * insert_sync.c — the CUDA pass that places the block's barriers
 * (IR_S_BARRIER, printed as __syncthreads()): one only where a thread
 * reads memory another thread wrote since the last barrier (RAW), or
 * writes memory another thread read or wrote since then (WAR, WAW),
 * including around loop back edges.  It replaces the code generator's
 * conservative barriers (one after every distributed nest, around every
 * thread-0 store and tensor-core call) and the ones earlier passes put in
 * provisionally (lower_copy_cuda around copies, inject_pipeline after its
 * waits): every barrier of the uniform code is dropped and placed again
 * here, so none is duplicated.
 *
 * It runs last among the CUDA passes, on IR that partition_threads made
 * entirely thread-level: uniform code (every thread runs it with the same
 * values; barriers may go there) and thread ranges inside it
 * (IR_FOR_THREAD, per-thread code where no barrier may go).
 *
 * The analysis walks the uniform code in order with the set of memory
 * accesses made since the last barrier.  Each access records its buffer,
 * read/write/atomic, the element indices (a start and a constant extent
 * per dimension) and which thread made it: a fresh variable standing for
 * "the thread" of its thread range (with the range's bounds), or none for
 * uniform code and collective operations (any thread).  Index expressions
 * are made self-contained first: lets are inlined, the loop variables of
 * the thread range become fresh variables of the access's own (so that two
 * accesses never share an iteration by accident), the thread index and
 * T.get_thread_binding values become the thread variable, and values read
 * from memory become unknowns.  Only shared memory (and fragments left in
 * it) and global memory take part; registers are private.
 *
 * Two accesses conflict when at least one writes (two atomics never do)
 * and they may touch one element from two different threads.  The
 * arithmetic (src/ir/arith.h) answers with affine forms: for each
 * dimension, and for the whole row-major offset, the difference of the
 * two index expressions is put in affine form (floormod expanded, so a
 * cyclic partition's (L // W) * W + L % W cancels to L); its constant
 * residue modulo the gcd of the other coefficients, and its interval,
 * show either that the elements never meet (different stages of a
 * multi-buffered tile, disjoint tiles) or that they meet only when the
 * two thread variables are equal (a thread reading back its own writes,
 * e.g. two T.Parallel nests over the same shape, partitioned alike).
 * Anything not proven is a conflict.  That arithmetic (the conflict rule,
 * the per-thread-pair enumeration, the memo of answers keyed up to a
 * renaming of fresh variables, and the fresh variables themselves) lives
 * in sync_conflict.c; this file keeps the walk and the placement.
 *
 * Placement.  A conflict between the statement about to run and the set
 * puts a barrier right before that statement, at the level of the
 * innermost enclosing uniform sequence (as late as possible, so one
 * barrier often serves several later reads), and empties the set.  Two
 * accesses inside one thread range that conflict across threads cannot
 * be separated by a barrier (it would be inside divergent code): that is
 * an error, unless the range holds the program's own barriers (T.sync_threads
 * in thread-level code), which then orders its threads itself.  Loops are
 * analysed to a fixed point: the body runs again from the join of the
 * entry set and the set at the end of the body, its loop variable renamed
 * to an earlier iteration (k - 1 - w, w >= 0); after the loop its
 * variable is any value of its range.  If branches are analysed apart and
 * joined (their conditions are uniform, so a barrier in one branch is
 * legal).  `break` and `continue` carry their set to the loop's exit and
 * back edge.
 *
 * Asynchronous copies (cp.async).  A copy's write is checked when issued
 * (against earlier reads: WAR), then stays in flight, through barriers,
 * until the async wait that covers its group (cp.async.wait_group N lands
 * every committed group but the N newest; a copy not committed yet stays
 * in flight), where it lands as an ordinary write of the issuing thread;
 * so the barrier that makes the data visible goes after that wait, as
 * inject_pipeline's pattern needs (the thread-level interpreter checks the
 * same rule at run time); or, in a T.ws role, until the role's
 * cp.async.mbarrier.arrive (IR_MBAR_ARRIVE_ASYNC), which counts only once
 * they have landed.
 *
 * Asynchronous wgmma gemms (IrTileOp.wg_async: T.wgmma_gemm, and the
 * pipelined gemms inject_pipeline leaves in flight).  The gemm's reads of
 * its shared operands are checked when issued (against earlier writes:
 * RAW), then stay in flight, through barriers, until the wgmma wait
 * (IR_WGMMA_WAIT N: every group but the N newest completes; each such
 * gemm is one group) that completes their group, where they become
 * ordinary reads by any thread: a later write of those elements then
 * needs a barrier after the wait.  A write that may touch an element a
 * pending group reads is an internal error: no barrier can order it (the
 * pass that placed the waits was wrong).
 *
 * Collective operations: a tensor-core T.gemm reads and writes its regions
 * as "any thread"; a communication op gets a barrier before and after (it
 * is opaque), and so does a block's primitive that lower_comm gave to one
 * thread (a thread range of one thread holding it, ts_comm_block_role).  In a blocking kernel (IrKernel.may_block) any two global
 * writes from different threads conflict, so a flag stored by one thread
 * follows a barrier after the block's data (the printer adds the release
 * fence to barriers of such kernels).
 *
 * Cost.  Each conflict question is answered once per pass: questions are
 * keyed by the two accesses up to a renaming of their own fresh variables,
 * so a loop body analysed again to its fixed point, or a chain of
 * statements making the same accesses, does not repeat the arithmetic; and
 * a set keeps one of several accesses equal up to that renaming, so such a
 * chain costs time linear in its length (test_sync measures the ratio).
 * The per-thread-pair enumeration finds matching values through hash
 * tables and per-value groups rather than a search per candidate.  None of
 * this changes an answer: every golden, and the generated CUDA of every
 * TileLang example compiled, is the same as before.
 */
#include "ir/arith.h"
#include "ir/tileop.h"
#include "op/comm.h"
#include "ir/walk.h"
#include "pass/pass.h"
#include "pass/sync_conflict.h"

#include <string.h>

enum { MAXDIM = 8 };
/* Older than any wgmma wait's N (0..7): a pending wgmma read's age stops here. */
enum { WG_AGE_MAX = 8 };

typedef SyncAcc Acc; /* one access since the last barrier (sync_conflict.h) */

typedef TS_VEC(Acc *) AccSet;

/* A substitution in force while collecting accesses. */
typedef struct Sub {
    const IrVar *var;     /* the variable */
    IrExpr *val;          /* a let's value (lets inlined), or NULL */
    int64_t lo, hi;       /* a thread-range loop variable: its range (val NULL) */
} Sub;

/* The enclosing uniform loop: where break / continue send their set. */
typedef struct LoopCtx {
    AccSet brk, cont;     /* sets at `break` / `continue` statements */
    struct LoopCtx *up;   /* the loop outside it */
} LoopCtx;

typedef struct Sync {
    TsPassCtx *cx;
    IrKernel *k;
    TsArena *a;
    IrArith ar;           /* ranges of the fresh variables accumulate here */
    int64_t nt;           /* threads per block */
    TS_VEC(Sub) subs;     /* substitutions in force */
    IrVar *thread;        /* inside a thread range: its fresh thread variable, else NULL */
    bool own_sync;        /* the thread range being collected holds the program's own barriers */
    Acc *cur;             /* the access being built (its fresh variables) */
    AccSet *coll;         /* where a region's accesses go */
    LoopCtx *loop;        /* innermost uniform loop */
    int nbar;             /* barriers placed in the kernel */
    bool bind_fresh;      /* fresh variables are bound as made (a scope the caller pops) */
    int64_t thr_lo, thr_hi; /* inside a thread range: its threads */
    TS_VEC(const uint8_t *) masks;  /* branches entered in a thread range: the threads taking them (byte
                                     * per thread; NULL: all), innermost last */
    TS_VEC(const IrBuffer *) written; /* buffers the kernel writes (the others are read-only) */
    TS_VEC(const IrBuffer *) varying; /* T.alloc_var scalars written inside a thread range */
    TS_VEC(const IrStmt *) loops; /* the uniform FOR loops around the statement being analysed */
    SyncConflict cf;      /* the arithmetic of conflicts: its context and memo (sync_conflict.h) */
    /* Inside a T.ws role (IR_S_ROLE): its key (SyncAcc.role), threads and named barrier;
     * role 0 outside.  Barriers placed there are `bar.sync id, n` of the role's threads and
     * order only the role's own accesses; accesses of two roles never conflict (the
     * program's mbarriers order them), those of the block's code and a role do. */
    int role, role_lo, role_n, role_bar;
    int user_bar; /* the largest id of the program's own named barriers (T.sync_threads(id, count)); 0: none */
    int nroles;           /* distinct roles numbered so far (named barriers 1 .. 15) */
    int role_key[15][2];  /* ... their (first thread, threads) */
} Sync;

static bool shared_mem(const IrBuffer *b) {
    return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_FRAGMENT || b->scope == IR_SCOPE_GLOBAL;
}

/* A fresh variable of range [lo, hi] (sync_fresh_new), bound at once
 * inside a fresh_scope. */
static IrVar *fresh(Sync *S, const char *name, TsDType dt, int64_t lo, int64_t hi) {
    IrVar *v = sync_fresh_new(S->a, name, dt, lo, hi);
    if (S->bind_fresh) ir_arith_bind(&S->ar, v, lo, hi);
    return v;
}

/* A scope where fresh variables are bound as they are made (and the
 * current thread variable too): for bounds computed outside conflicts. */
static int fresh_scope(Sync *S) {
    int mark = ir_arith_mark(&S->ar);
    S->bind_fresh = true;
    if (S->thread) {
        IrInterval r = sync_fresh_range(S->thread);
        ir_arith_bind(&S->ar, S->thread, r.lo, r.hi);
    }
    return mark;
}

static void fresh_scope_end(Sync *S, int mark) {
    S->bind_fresh = false;
    ir_arith_pop(&S->ar, mark);
}

/* Does the kernel leave b unchanged (a global input no statement, atomic
 * or tile op writes; nothing in a blocking or communicating kernel)? */
static bool read_only(const Sync *S, const IrBuffer *b) {
    if (b->scope != IR_SCOPE_GLOBAL || S->k->may_block) return false;
    for (int i = 0; i < S->written.n; i++)
        if (S->written.v[i] == b) return false;
    return true;
}

/* A T.alloc_var scalar that no thread range writes: uniform code sets it
 * (every thread the same value, e.g. `offset = k * n` before a T.Parallel),
 * so at any one moment all threads read one value from it.  Its loads in
 * an access are one unknown shared by the access's instances for two
 * threads (fresh for each access, as the value may change between them). */
static bool uniform_var(const Sync *S, const IrBuffer *b) {
    if (b->scope != IR_SCOPE_VAR) return false;
    for (int i = 0; i < S->varying.n; i++)
        if (S->varying.v[i] == b) return false;
    return true;
}

/* Is e the same value in every thread of the block for its whole life
 * (made of block indices, shape and scalar parameters, ranks and elements
 * of read-only buffers at such indices; no loop variable, thread, fresh
 * variable or other memory)? */
static bool binv_node(const IrExpr *e, void *ctx) {
    const Sync *S = ctx;
    if (e->kind == IR_E_LOAD) return !read_only(S, e->load.buf);
    if (e->kind != IR_E_VAR) return false;
    return !(e->var->kind == IR_VAR_BLOCK_IDX || e->var->kind == IR_VAR_SHAPE || e->var->kind == IR_VAR_SCALAR ||
             e->var->kind == IR_VAR_RANK);
}

static bool block_invariant(const Sync *S, const IrExpr *e) { return !ir_expr_any(e, binv_node, (void *)S); }

/* ---- making index expressions self-contained -------------------------------- */

static IrExpr *sub_pre(IrMutator *m, IrExpr *e);

static IrExpr *self_contained(Sync *S, IrExpr *e) {
    IrMutator m = {.arena = S->a, .ctx = S, .pre_expr = sub_pre};
    return ir_mutate_expr(&m, e);
}

static IrExpr *sub_pre(IrMutator *m, IrExpr *e) {
    Sync *S = m->ctx;
    if (e->kind == IR_E_LOAD && read_only(S, e->load.buf)) {
        /* an element of a read-only buffer at a block-invariant index (the
         * start of a variable-length sequence, cu_seqlens[bz]): the same value
         * in every access, kept as it is */
        IrExpr **idx = TS_NEWN(S->a, IrExpr *, e->load.nidx ? e->load.nidx : 1);
        for (int i = 0; i < e->load.nidx; i++) idx[i] = self_contained(S, e->load.idx[i]);
        IrExpr *l = ir_load(S->a, e->load.buf, idx, e->load.nidx);
        l->dt = e->dt;
        l->load.bits = e->load.bits;
        if (block_invariant(S, l)) return l;
    }
    if (e->kind == IR_E_LOAD) {
        /* a value read from memory: unknown (and not the same for two accesses) */
        IrInterval r = ir_arith_bound(&S->ar, e);
        IrVar *u = fresh(S, "mem", e->dt, r.lo, r.hi);
        if (uniform_var(S, e->load.buf)) return ir_var_ref(S->a, u); /* one value for all threads: not renamed */
        if (S->cur) {
            ts_vec_push(S->a, S->cur->fv, u);
            ts_vec_push(S->a, S->cur->fv_of, (const IrVar *)NULL);
        }
        return ir_var_ref(S->a, u);
    }
    if (e->kind != IR_E_VAR) return NULL;
    const IrVar *v = e->var;
    if (v->kind == IR_VAR_THREAD_IDX && S->thread) {
        IrExpr *t = ir_var_ref(S->a, S->thread);
        const int *th = S->k->threads;
        if (v->axis < 0) return ir_cast(S->a, e->dt, t);
        if (v->axis == 0) return ir_cast(S->a, e->dt, ir_bin(S->a, IR_FLOORMOD, t, ir_i32(S->a, th[0])));
        IrExpr *q = ir_bin(S->a, IR_FLOORDIV, t, ir_i32(S->a, v->axis == 1 ? th[0] : th[0] * th[1]));
        if (v->axis == 1) q = ir_bin(S->a, IR_FLOORMOD, q, ir_i32(S->a, th[1]));
        return ir_cast(S->a, e->dt, q);
    }
    for (int i = S->subs.n - 1; i >= 0; i--) {
        Sub *s = &S->subs.v[i];
        if (s->var != v) continue;
        if (s->val) return self_contained(S, s->val);
        /* a loop variable of the thread range: the access's own copy */
        if (S->cur)
            for (int j = 0; j < S->cur->fv_of.n; j++)
                if (S->cur->fv_of.v[j] == v) return ir_var_ref(S->a, S->cur->fv.v[j]);
        IrVar *f = fresh(S, v->name, v->dt, s->lo, s->hi);
        if (S->cur) {
            ts_vec_push(S->a, S->cur->fv, f);
            ts_vec_push(S->a, S->cur->fv_of, v);
        }
        return ir_var_ref(S->a, f);
    }
    return NULL;
}

/* ---- accesses --------------------------------------------------------------- */

static Acc *new_acc(Sync *S, const IrBuffer *b, int rw, const IrStmt *at) {
    Acc *x = TS_NEW(S->a, Acc);
    memset(x, 0, sizeof *x);
    x->buf = b;
    x->rw = rw;
    x->at = at;
    x->th = S->thread;
    x->role = S->role;
    x->tmask = S->masks.n ? S->masks.v[S->masks.n - 1] : NULL;
    if (S->thread) {
        ts_vec_push(S->a, x->fv, S->thread);
        ts_vec_push(S->a, x->fv_of, (const IrVar *)NULL);
    }
    return x;
}

/* The condition c (negated if neg) an access x is made under, split into
 * conjuncts made self-contained with x's own variables (x is S->cur). */
static void add_conj(Sync *S, Acc *x, const IrExpr *c, bool neg) {
    if (c->kind == IR_E_BIN && c->bin.op == (neg ? IR_OR : IR_AND)) {
        add_conj(S, x, c->bin.a, neg);
        add_conj(S, x, c->bin.b, neg);
        return;
    }
    if (c->kind == IR_E_NOT && !c->un.bitnot && c->dt == TS_BOOL) {
        add_conj(S, x, c->un.a, !neg);
        return;
    }
    IrExpr *e = self_contained(S, (IrExpr *)c);
    if (neg) e = e->dt == TS_BOOL ? ir_not(S->a, e) : ir_bin(S->a, IR_EQ, e, ir_int(S->a, 0, e->dt));
    IrExpr **v = TS_NEWN(S->a, IrExpr *, x->nconj + 1);
    if (x->nconj) memcpy(v, x->conj, sizeof *v * (size_t)x->nconj);
    v[x->nconj++] = e;
    x->conj = v;
}

/* A gemm issued on wgmma without waiting for its group. */
static bool async_wgmma(const IrStmt *s) {
    return s && s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_WGMMA &&
           s->op->wg_async;
}

static bool is_wgmma_wait(const IrStmt *s) {
    return s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_WGMMA_WAIT;
}

/* An access as the visitor reports it, made self-contained; g: the guarded
 * parts around it (inside a thread range: their conditions are recorded). */
static Acc *make_acc(Sync *S, const IrAccess *acc, const IrStmt *at, const IrGuard *g) {
    Acc *x = new_acc(S, acc->buf, acc->rw, at);
    /* a communication op inside a thread range (one thread's signal,
     * atomic, put): ordered by the communication layer, like an atomic */
    x->atomic = at && (at->kind == IR_S_ATOMIC_ADD || (at->kind == IR_S_TILEOP && at->op->kind == TS_OP_COMM) ||
                       /* mbarrier operations are the hardware's synchronization (only their
                        * init, a plain write by one thread, must be ordered before them) */
                       (at->kind == IR_S_MBAR && at->mbar.op != IR_MBAR_INIT));
    x->inflight = at && at->kind == IR_S_VCOPY && at->vcopy.async && (acc->rw & IR_ACC_WRITE);
    x->age = -1;
    if (async_wgmma(at) && acc->buf->scope == IR_SCOPE_SHARED && !(acc->rw & IR_ACC_WRITE)) {
        x->inflight = x->wg = true; /* its group is committed at once (the gemm's own commit) */
        x->age = 0;
    }
    int n = acc->buf->ndim;
    S->cur = x;
    if (acc->idx && acc->nidx == n && n <= MAXDIM) {
        x->ndim = n;
        x->start = TS_NEWN(S->a, IrExpr *, n ? n : 1);
        x->ext = TS_NEWN(S->a, int64_t, n ? n : 1);
        for (int d = 0; d < n; d++) {
            x->start[d] = self_contained(S, acc->idx[d]);
            x->ext[d] = d == n - 1 ? acc->lanes : 1;
        }
    } else if (acc->region && acc->region->ndim == n && n <= MAXDIM) {
        x->ndim = n;
        x->start = TS_NEWN(S->a, IrExpr *, n ? n : 1);
        x->ext = TS_NEWN(S->a, int64_t, n ? n : 1);
        for (int d = 0; d < n; d++) {
            x->start[d] = self_contained(S, acc->region->start[d]);
            if (!ir_is_const_int(acc->region->extent[d], &x->ext[d]) || x->ext[d] < 0) x->ext[d] = -1;
        }
    }
    for (; S->thread && g; g = g->up)
        if (g->cond && g->kind != IR_GUARD_WHILE_BODY) add_conj(S, x, g->cond, g->negated);
    for (int i = 0; S->thread && i < S->loops.n; i++) {
        /* the uniform loops' bounds hold too (i2 <= i1 in a loop nest over a triangle) */
        const IrStmt *l = S->loops.v[i];
        IrExpr *lv = ir_var_ref(S->a, l->for_.var);
        add_conj(S, x, ir_bin(S->a, IR_GE, lv, l->for_.min), false);
        add_conj(S, x, ir_bin(S->a, IR_LT, lv, ir_bin(S->a, IR_ADD, l->for_.min, l->for_.extent)), false);
    }
    S->cur = NULL;
    return x;
}

/* x with its fresh variables replaced by new ones of the same ranges (a
 * second instance: another thread, other iterations). */
static Acc *instance(Sync *S, const Acc *x) {
    Acc *y = TS_NEW(S->a, Acc);
    *y = *x;
    y->key = NULL;
    memset(&y->fv, 0, sizeof y->fv);
    memset(&y->fv_of, 0, sizeof y->fv_of);
    int n = x->fv.n;
    IrVar **from = TS_NEWN(S->a, IrVar *, n ? n : 1);
    IrExpr **to = TS_NEWN(S->a, IrExpr *, n ? n : 1);
    for (int i = 0; i < n; i++) {
        IrInterval r = sync_fresh_range(x->fv.v[i]);
        IrVar *f = fresh(S, x->fv.v[i]->name, x->fv.v[i]->dt, r.lo, r.hi);
        from[i] = x->fv.v[i];
        to[i] = ir_var_ref(S->a, f);
        ts_vec_push(S->a, y->fv, f);
        ts_vec_push(S->a, y->fv_of, (const IrVar *)NULL);
        if (x->th == x->fv.v[i]) y->th = f;
    }
    if (x->ndim) {
        y->start = TS_NEWN(S->a, IrExpr *, x->ndim);
        for (int d = 0; d < x->ndim; d++) y->start[d] = ir_subst(S->a, x->start[d], from, to, n);
    }
    if (x->nconj) {
        y->conj = TS_NEWN(S->a, IrExpr *, x->nconj);
        for (int c = 0; c < x->nconj; c++) y->conj[c] = ir_subst(S->a, x->conj[c], from, to, n);
    }
    return y;
}

/* x with variable v replaced by e (loop renaming); v's fresh copies are kept. */
static Acc *renamed(Sync *S, const Acc *x, const IrVar *v, IrExpr *e, IrVar *extra) {
    bool uses = false;
    for (int d = 0; d < x->ndim; d++) uses |= ir_expr_uses_var(x->start[d], v);
    if (!uses) return (Acc *)x;
    Acc *y = TS_NEW(S->a, Acc);
    *y = *x;
    y->key = NULL;
    memset(&y->fv, 0, sizeof y->fv);
    memset(&y->fv_of, 0, sizeof y->fv_of);
    for (int i = 0; i < x->fv.n; i++) {
        ts_vec_push(S->a, y->fv, x->fv.v[i]);
        ts_vec_push(S->a, y->fv_of, (const IrVar *)NULL);
    }
    if (extra) {
        ts_vec_push(S->a, y->fv, extra);
        ts_vec_push(S->a, y->fv_of, (const IrVar *)NULL);
    }
    y->conj = NULL; /* (read only within a thread range, where nothing is renamed) */
    y->nconj = 0;
    y->start = TS_NEWN(S->a, IrExpr *, x->ndim);
    IrVar *from[1] = {(IrVar *)v};
    IrExpr *to[1] = {e};
    for (int d = 0; d < x->ndim; d++) y->start[d] = ir_subst(S->a, x->start[d], from, to, 1);
    return y;
}


/* ---- the walk --------------------------------------------------------------------- */

static void set_add(Sync *S, AccSet *s, Acc *x) { ts_vec_push(S->a, *s, x); }

/* Add x unless the set holds an access equal to it up to its own
 * variables, in the same state (see "Canonical keys"). */
static void set_add_new(Sync *S, AccSet *s, Acc *x) {
    for (int i = 0; i < s->n; i++) {
        Acc *y = s->v[i];
        if (y->buf != x->buf || y->rw != x->rw || y->inflight != x->inflight || y->age != x->age || y->wg != x->wg)
            continue;
        if (sync_acc_equal(&S->cf, x, y)) return;
    }
    set_add(S, s, x);
}

static AccSet set_copy(Sync *S, const AccSet *s) {
    AccSet c = {0};
    for (int i = 0; i < s->n; i++) set_add(S, &c, s->v[i]);
    return c;
}

static void set_join(Sync *S, AccSet *into, const AccSet *s) {
    for (int i = 0; i < s->n; i++) {
        bool have = false;
        for (int j = 0; j < into->n && !have; j++) have = into->v[j] == s->v[i];
        if (!have) set_add(S, into, s->v[i]);
    }
}

/* A barrier: everything but the copies in flight is ordered (inside a T.ws
 * role, only the role's own accesses). */
static void set_barrier(Sync *S, AccSet *s) {
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (s->v[i]->inflight || (S->role && s->v[i]->role != S->role)) s->v[n++] = s->v[i];
    s->n = n;
}

/* Does the new access conflict with anything in the set (copies in flight
 * excepted: they are checked when they land)? */
static const Acc *conflicts_with(Sync *S, const AccSet *st, const Acc *x) {
    for (int i = 0; i < st->n; i++)
        if (st->v[i]->wg && st->v[i]->inflight && (x->rw & IR_ACC_WRITE) && sync_conflict(&S->cf, st->v[i], x, false))
            ts_fail_at(S->cx->diag, TS_ERR_INTERNAL, x->at ? x->at->loc : (TsLoc){0},
                       "insert_sync: '%s' is written while an asynchronous wgmma gemm (line %d) may still read it: "
                       "no wgmma wait completes its group first",
                       x->buf->name, st->v[i]->at ? st->v[i]->at->loc.line : 0);
    for (int i = 0; i < st->n; i++)
        if (!st->v[i]->inflight && sync_conflict(&S->cf, st->v[i], x, false)) return st->v[i];
    return NULL;
}

/* --- collecting the accesses of a statement ---------------------------------------- */

/* Inside a thread range: the statement sequences above the access at f
 * that no loop of the range encloses, innermost first, with the child
 * holding it in each (SyncAcc.path_seq; none when there are more than
 * SYNC_MAXPATH). */
static void seq_path(Sync *S, Acc *x, const IrWalkFrame *f) {
    x->npath = 0;
    if (!S->thread || !f) return;
    const IrWalkFrame *child = f;
    for (const IrWalkFrame *p = f->up; p; child = p, p = p->up) {
        const IrStmt *s = p->s;
        if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD) break;
        if (s->kind == IR_S_FOR || s->kind == IR_S_WHILE) { /* the sequences below run again: forget them */
            x->npath = 0;
            continue;
        }
        if (s->kind != IR_S_SEQ) continue;
        int i = 0;
        while (i < s->seq.n && s->seq.v[i] != child->s) i++;
        if (i == s->seq.n || x->npath == SYNC_MAXPATH) { /* not found (a rebuilt child), or too deep */
            x->npath = 0;
            return;
        }
        x->path_seq[x->npath] = s;
        x->path_idx[x->npath++] = i;
    }
}

static void coll_access(IrVisitor *v, const IrAccess *acc) {
    Sync *S = v->ctx;
    if (!shared_mem(acc->buf)) return;
    Acc *x = make_acc(S, acc, v->frame ? v->frame->s : NULL, v->guard);
    seq_path(S, x, v->frame);
    set_add(S, S->coll, x);
}

/* `__syncwarp()` of the whole warp (T.sync_warp(), the warp copies of
 * T.Scale("warp")). */
static bool full_warp_sync(const IrStmt *s) {
    int64_t m;
    return s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_WARP_SYNC &&
           s->eval.e->call.nargs == 1 && ir_is_const_int(s->eval.e->call.args[0], &m) && (m & 0xffffffffLL) == 0xffffffffLL;
}

/* Two accesses of one thread range: does a __syncwarp of the whole warp
 * run between them on every path, so that two lanes of one warp making
 * them are ordered?  So when their innermost common statement sequence
 * (one that no loop of the range encloses) holds them in different
 * children with such a statement between those children: one execution of
 * the range runs the earlier child, the __syncwarp, then the later one
 * (T.Scale("warp")'s shared copies, serial loops and branches of the warp
 * around them: insert_sync cannot put a barrier inside thread-level code,
 * and the lanes need none). */
static bool warp_ordered(const Acc *x, const Acc *y) {
    for (int i = 0; i < x->npath; i++)
        for (int j = 0; j < y->npath; j++) {
            if (x->path_seq[i] != y->path_seq[j]) continue;
            int a = x->path_idx[i], b = y->path_idx[j];
            if (a > b) {
                int t = a;
                a = b;
                b = t;
            }
            for (int k = a + 1; k < b; k++)
                if (full_warp_sync(x->path_seq[i]->seq.v[k])) return true;
            return false;
        }
    return false;
}

/* The threads of the current range for which cond (a function of the
 * thread alone, after substitution) holds, negated if neg; NULL if cond is
 * not such a function.  Combined with the enclosing branch's mask. */
static const uint8_t *branch_mask(Sync *S, const IrExpr *cond, bool neg) {
    if (!S->thread || S->thr_hi < S->thr_lo || S->thr_hi - S->thr_lo >= SYNC_MAXT) return NULL;
    IrExpr *c = self_contained(S, (IrExpr *)cond);
    int64_t n = S->thr_hi - S->thr_lo + 1;
    uint8_t *m = TS_NEWN(S->a, uint8_t, n);
    const uint8_t *up = S->masks.n ? S->masks.v[S->masks.n - 1] : NULL;
    for (int64_t t = 0; t < n; t++) {
        int64_t val;
        if (!sync_eval_at(c, S->thread, S->thr_lo + t, &val)) return NULL;
        m[t] = (uint8_t)((val != 0) != neg) && (!up || up[t]);
    }
    return m;
}

/* A branch of an if inside a thread range: the threads that take it (the
 * enclosing branch's mask when its condition is not one of the thread
 * alone), popped when it is left. */
static void coll_enter(IrVisitor *v, const IrGuard *g) {
    Sync *S = v->ctx;
    if (!S->thread || (g->kind != IR_GUARD_THEN && g->kind != IR_GUARD_ELSE)) return;
    const uint8_t *m = branch_mask(S, g->cond, g->negated);
    if (!m && S->masks.n) m = S->masks.v[S->masks.n - 1];
    ts_vec_push(S->a, S->masks, m);
}

static void coll_leave(IrVisitor *v, const IrGuard *g) {
    Sync *S = v->ctx;
    if (S->thread && (g->kind == IR_GUARD_THEN || g->kind == IR_GUARD_ELSE)) S->masks.n--;
}

static bool coll_pre(IrVisitor *v, const IrStmt *s) {
    Sync *S = v->ctx;
    if (s->kind == IR_S_BARRIER) S->own_sync = true; /* the program's T.sync_threads in thread-level code */
    if (s->kind == IR_S_FOR && S->thread && s->for_.kind != IR_FOR_THREAD) {
        int mark = fresh_scope(S);
        IrInterval lo = ir_arith_bound(&S->ar, self_contained(S, s->for_.min));
        IrInterval ex = ir_arith_bound(&S->ar, self_contained(S, s->for_.extent));
        fresh_scope_end(S, mark);
        int64_t hi = lo.hi == IR_ARITH_POS_INF || ex.hi == IR_ARITH_POS_INF ? IR_ARITH_POS_INF : lo.hi + ex.hi - 1;
        Sub sb = {s->for_.var, NULL, lo.lo, hi};
        ts_vec_push(S->a, S->subs, sb);
    }
    return true;
}

static void coll_post(IrVisitor *v, const IrStmt *s) {
    Sync *S = v->ctx;
    if (s->kind == IR_S_FOR && S->thread && s->for_.kind != IR_FOR_THREAD) S->subs.n--;
    if (s->kind == IR_S_LET) {
        /* visible to the rest of the enclosing sequence (popped with it) */
        Sub sb = {s->let.var, s->let.value, 0, 0};
        ts_vec_push(S->a, S->subs, sb);
    }
}

static bool coll_seq_pre(IrVisitor *v, const IrStmt *s);
static void coll_seq_post(IrVisitor *v, const IrStmt *s);

/* The lets of a sequence go out of scope at its end. */
typedef struct CollCtx {
    Sync *S;
    TS_VEC(int) marks; /* subs.n at each open sequence */
} CollCtx;

/* Every shared/global access of s (thread-level code when S->thread is set). */
static void collect(Sync *S, const IrStmt *s, AccSet *into) {
    AccSet *saved = S->coll;
    int mark = S->subs.n;
    S->coll = into;
    IrVisitor v = {.ctx = S, .pre_stmt = coll_seq_pre, .post_stmt = coll_seq_post, .access = coll_access,
                   .enter_guard = coll_enter, .leave_guard = coll_leave};
    ir_visit_stmt(&v, s);
    S->subs.n = mark;
    S->coll = saved;
}

static bool coll_seq_pre(IrVisitor *v, const IrStmt *s) {
    Sync *S = v->ctx;
    if (s->kind == IR_S_SEQ) {
        /* remember where this sequence's lets start: a marker entry */
        Sub sb = {NULL, NULL, 0, 0};
        ts_vec_push(S->a, S->subs, sb);
    }
    return coll_pre(v, s);
}

static void coll_seq_post(IrVisitor *v, const IrStmt *s) {
    Sync *S = v->ctx;
    coll_post(v, s);
    if (s->kind == IR_S_SEQ)
        while (S->subs.n > 0 && S->subs.v[--S->subs.n].var) {
        }
}

/* --- uniform code ---------------------------------------------------------------- */

static IrStmt *barrier(Sync *S, TsLoc loc) {
    S->nbar++;
    IrStmt *b = ir_stmt(S->a, IR_S_BARRIER, loc);
    if (S->role) { /* inside a T.ws role: the role's named barrier */
        b->barrier.id = S->role_bar;
        b->barrier.count = S->role_n;
    }
    return b;
}


static void push(Sync *S, IrStmt *seq, IrStmt *s) { ir_seq_push(S->a, seq, s); }

/* The accesses xs of one statement about to run after the set st: a
 * barrier first if any conflicts; then they join the set.  `self`: also
 * check them against each other across threads (thread-level code). */
static void step(Sync *S, AccSet *st, AccSet *xs, IrStmt *out, const IrStmt *s, bool self) {
    bool need = false;
    for (int i = 0; i < xs->n && !need; i++) need = conflicts_with(S, st, xs->v[i]) != NULL;
    if (need) {
        push(S, out, barrier(S, s->loc));
        set_barrier(S, st);
    }
    if (self)
        for (int i = 0; i < xs->n; i++)
            for (int j = i; j < xs->n; j++) {
                const Acc *x = xs->v[i], *y = instance(S, xs->v[j]);
                /* one global store made by several threads at one element (all
                 * threads of a split-K row storing its sum): the program's own
                 * write-write race, which no barrier orders; CUDA keeps one of
                 * the values, as TileLang's output does */
                if (i == j && x->buf->scope == IR_SCOPE_GLOBAL && x->rw == IR_ACC_WRITE && !x->atomic) continue;
                S->cf.warp_ordered = warp_ordered(x, y);
                bool c = x->th && sync_conflict(&S->cf, x, y, true) && !sync_exclusive(&S->cf, x, y);
                S->cf.warp_ordered = false;
                /* one store to shared memory made by several threads at one
                 * element with one value (deepseek_v32's sparse MLA: the 8
                 * threads that load a KV row each store its validity flag;
                 * their own reads of it forwarded by pass forward_stores):
                 * whichever write lands, the element holds that value */
                if (c && i == j && x->buf->scope == IR_SCOPE_SHARED && x->rw == IR_ACC_WRITE && !x->atomic &&
                    sync_same_value_store(S->k, S->a, s, x->at))
                    c = false;
                if (c && !S->k->user_sync) /* (user_sync: the program's own barriers order them) */
                    ts_fail_at(S->cx->diag, TS_ERR_UNSUPPORTED, y->at ? y->at->loc : s->loc,
                               "threads of one thread range may access the same element of '%s' (at lines %d "
                               "and %d), one of them writing: no barrier can go inside thread-level code",
                               x->buf->name, x->at ? x->at->loc.line : 0, y->at ? y->at->loc.line : 0);
            }
    for (int i = 0; i < xs->n; i++) set_add_new(S, st, xs->v[i]);
}

/* Reads made by uniform expressions (every thread reads). */
static void uniform_reads(Sync *S, AccSet *st, IrExpr *const *e, int n, IrStmt *out, const IrStmt *s) {
    AccSet xs = {0};
    for (int i = 0; i < n; i++) {
        if (!e[i]) continue;
        IrStmt tmp = {.kind = IR_S_EVAL, .loc = s->loc};
        tmp.eval.e = e[i];
        collect(S, &tmp, &xs);
    }
    for (int i = 0; i < xs.n; i++) xs.v[i]->at = s;
    step(S, st, &xs, out, s, false);
}

static IrStmt *uniform(Sync *S, IrStmt *s, AccSet *st);
static void leaf(Sync *S, IrStmt *s, AccSet *st, IrStmt *out);

static IrStmt *copy_stmt(Sync *S, const IrStmt *s) {
    IrStmt *c = TS_NEW(S->a, IrStmt);
    *c = *s;
    return c;
}

/* A body in its own sequence (barriers may be put before any of its statements). */
static IrStmt *uniform_body(Sync *S, IrStmt *body, AccSet *st) {
    IrStmt *o = uniform(S, body, st);
    if (!o) return ir_seq(S->a);
    /* a body that was one statement and got no barrier stays one statement */
    if (body && body->kind != IR_S_SEQ && o->kind == IR_S_SEQ && o->seq.n == 1) return o->seq.v[0];
    return o;
}

static bool count_barrier(IrVisitor *v, const IrStmt *s) {
    *(int *)v->ctx += s->kind == IR_S_BARRIER;
    return true;
}

static int count_barriers(const IrStmt *s) {
    int n = 0;
    IrVisitor v = {.ctx = &n, .pre_stmt = count_barrier};
    ir_visit_stmt(&v, s);
    return n;
}

/* Does s begin with a barrier (nothing of its own before it)? */
static bool starts_with_barrier(const IrStmt *s) {
    while (s && s->kind == IR_S_SEQ && s->seq.n > 0 && s->seq.v[0]->kind == IR_S_SEQ) s = s->seq.v[0];
    return s && s->kind == IR_S_SEQ && s->seq.n > 0 && s->seq.v[0]->kind == IR_S_BARRIER;
}

/* s (a body with its barriers placed) runs a barrier on every path: one in
 * its top-level sequence (nested sequences included). */
static bool top_barrier(const IrStmt *s) {
    if (!s) return false;
    if (s->kind == IR_S_BARRIER) return true;
    if (s->kind != IR_S_SEQ) return false;
    for (int i = 0; i < s->seq.n; i++)
        if (top_barrier(s->seq.v[i])) return true;
    return false;
}

/* A uniform loop (FOR with var v in [lo, hi], or WHILE with its condition
 * `cond`, read before every iteration): the body to a fixed point around
 * the back edge.  st: the set before the loop (the condition's first test
 * already in it), then after it.  may_skip: the body may run zero times. */
/* Does every run of the loop body issue an async wgmma group (such a gemm
 * directly in its top-level sequence)? */
static bool body_issues_group(const IrStmt *body) {
    if (async_wgmma(body)) return true;
    if (!body || body->kind != IR_S_SEQ) return false;
    for (int i = 0; i < body->seq.n; i++)
        if (body_issues_group(body->seq.v[i])) return true;
    return false;
}

static IrStmt *uniform_loop(Sync *S, IrStmt *body, const IrVar *v, IrExpr *cond, const IrStmt *s,
                            AccSet *st, int64_t lo, int64_t hi, bool may_skip) {
    AccSet entry = set_copy(S, st), back = {0};
    /* back.v[i] renames orig.v[i] to an earlier iteration (equal: not renamed) */
    AccSet orig = {0};
    int prev = -1;
    for (int round = 0; round < 6; round++) {
        AccSet head = set_copy(S, &entry);
        set_join(S, &head, &back);
        LoopCtx lc = {{0}, {0}, S->loop};
        S->loop = &lc;
        IrStmt *b = uniform_body(S, body, &head);
        S->loop = lc.up;
        set_join(S, &head, &lc.cont);
        /* a while condition is tested again at the end of the body */
        if (cond) {
            if (b->kind != IR_S_SEQ) {
                IrStmt *q = ir_seq(S->a);
                push(S, q, b);
                b = q;
            }
            uniform_reads(S, &head, &cond, 1, b, s);
        }
        int nbar = count_barriers(b);
        if (round > 0 && nbar == prev) {
            /* the exit: the loop variable is any value of its range */
            AccSet exit = {0};
            if (may_skip) set_join(S, &exit, &entry);
            set_join(S, &exit, &head);
            set_join(S, &exit, &lc.brk);
            if (v) {
                /* an earlier iteration's access (renamed on the back edge:
                 * v - 1 - w) is its own access at another value of v, which
                 * the renaming to any value covers exactly; kept, it would
                 * also stand for iterations before the first (v - 1 - w < lo:
                 * a lanes' round of T.Scale("warp") pairing with the previous
                 * warp's elements, a barrier nobody needs before the partial
                 * last round) */
                int n = 0;
                for (int i = 0; i < exit.n; i++) {
                    bool covered = false;
                    for (int j = 0; j < back.n && !covered; j++) {
                        if (back.v[j] != exit.v[i] || orig.v[j] == back.v[j]) continue;
                        for (int q = 0; q < exit.n && !covered; q++) {
                            Acc *y = exit.v[q], *x = orig.v[j];
                            covered = y == x || (y->buf == x->buf && y->rw == x->rw && y->inflight == x->inflight &&
                                                 y->age == x->age && sync_acc_equal(&S->cf, y, x));
                        }
                    }
                    if (!covered) exit.v[n++] = exit.v[i];
                }
                exit.n = n;
                IrVar *any = fresh(S, v->name, v->dt, lo, hi);
                for (int i = 0; i < exit.n; i++) exit.v[i] = renamed(S, exit.v[i], v, ir_var_ref(S->a, any), any);
            }
            *st = exit;
            return b;
        }
        prev = nbar;
        /* a loop of one iteration at most has no back edge (no earlier
         * iteration for v - 1 - w to name: e.g. T.Scale("warp")'s one full
         * round of lanes before a partial one) */
        if (v && lo != IR_ARITH_NEG_INF && hi != IR_ARITH_POS_INF && hi <= lo) {
            back = orig = (AccSet){0};
            continue;
        }
        /* the end of an iteration, seen from the next one: v -> v - 1 - w */
        AccSet nback = {0}, norig = {0};
        IrVar *w = NULL;
        IrExpr *prev_it = NULL;
        if (v) {
            int64_t span = hi == IR_ARITH_POS_INF || lo == IR_ARITH_NEG_INF ? IR_ARITH_POS_INF
                                                                            : (hi - lo - 1 > 0 ? hi - lo - 1 : 0);
            w = fresh(S, "w", v->dt, 0, span);
            prev_it = ir_bin(S->a, IR_SUB, ir_bin(S->a, IR_SUB, ir_var_ref(S->a, (IrVar *)v), ir_int(S->a, 1, v->dt)),
                             ir_var_ref(S->a, w));
        }
        /* a body that always runs a barrier (and never continues past it) ends
         * with the accesses of its own iteration only, besides copies still in
         * flight: those are of iteration v - 1 exactly */
        bool own = v && !lc.cont.n && top_barrier(b);
        IrExpr *last_it = v ? ir_bin(S->a, IR_SUB, ir_var_ref(S->a, (IrVar *)v), ir_int(S->a, 1, v->dt)) : NULL;
        /* an async wgmma gemm's read still pending at the end with no group
         * issued after it: where every iteration issues a group (one at the top
         * level of the body, no `continue`), it is of the last iteration, v - 1
         * exactly (a pipelined gemm's slot is then known) */
        bool issues = v && !lc.cont.n && body_issues_group(body);
        for (int i = 0; i < head.n; i++) {
            const Acc *x = head.v[i];
            if (!v) set_add(S, &nback, (Acc *)x);
            else if (own && !x->inflight) set_add(S, &nback, renamed(S, x, v, last_it, NULL));
            else if (issues && x->wg && x->inflight && x->age == 0) set_add(S, &nback, renamed(S, x, v, last_it, NULL));
            else set_add(S, &nback, renamed(S, x, v, prev_it, w));
            set_add(S, &norig, (Acc *)x);
        }
        back = nback;
        orig = norig;
    }
    ts_fail_at(S->cx->diag, TS_ERR_INTERNAL, s->loc, "insert_sync: no fixed point for a loop of kernel %s",
               S->k->name);
}

/* A T.ws role: a block barrier first if the block's code left accesses not
 * yet ordered (the mbarrier inits among them), then its body as the uniform
 * code of its threads. */
static void role_into(Sync *S, IrStmt *s, AccSet *st, IrStmt *out) {
    if (S->role || S->thread)
        ts_fail_at(S->cx->diag, TS_ERR_UNSUPPORTED, s->loc, "a T.ws role inside another role or per-thread code");
    bool block = false;
    for (int i = 0; i < st->n && !block; i++) block = !st->v[i]->inflight && !st->v[i]->role;
    if (block) {
        push(S, out, barrier(S, s->loc));
        set_barrier(S, st);
    }
    int id = 0;
    for (int i = 0; i < S->nroles && !id; i++)
        if (S->role_key[i][0] == s->role.lo && S->role_key[i][1] == s->role.n) id = S->user_bar + i + 1;
    if (!id) {
        /* ids 1..user_bar are the program's own T.sync_threads(id, count):
         * the roles' barriers are numbered above them (16 in hardware) */
        if (S->user_bar + S->nroles >= 15)
            ts_fail_at(S->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "more T.ws roles than named barriers left (16 in all: id 0 is the block's, "
                       "ids up to %d the program's own T.sync_threads(id, count), %d the roles before this one)",
                       S->user_bar, S->nroles);
        S->role_key[S->nroles][0] = s->role.lo;
        S->role_key[S->nroles][1] = s->role.n;
        id = S->user_bar + ++S->nroles;
    }
    S->role = s->role.lo + 1 + 2048 * s->role.n;
    S->role_lo = s->role.lo;
    S->role_n = s->role.n;
    S->role_bar = id;
    IrStmt *c = copy_stmt(S, s);
    c->role.id = id;
    c->role.body = uniform_body(S, s->role.body, st);
    S->role = S->role_lo = S->role_n = S->role_bar = 0;
    push(S, out, c);
}

/* Uniform statement s after the set st: the statement with barriers
 * placed (or NULL for a dropped one); st becomes the set after it.
 * Barriers needed before s itself go to `out` first. */
static void uniform_into(Sync *S, IrStmt *s, AccSet *st, IrStmt *out) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ: {
        IrStmt *o = ir_seq(S->a);
        o->loc = s->loc;
        int mark = S->subs.n;
        for (int i = 0; i < s->seq.n; i++) uniform_into(S, s->seq.v[i], st, o);
        S->subs.n = mark;
        push(S, out, o);
        return;
    }
    case IR_S_BARRIER:
        if (s->barrier.id) push(S, out, s); /* T.sync_threads(id, count): the program's own */
        return; /* (block barriers are placed again below where needed) */
    case IR_S_ROLE: role_into(S, s, st, out); return;
    case IR_S_MBAR:
        /* cp.async.mbarrier.arrive + arrive: the phase completes only once
         * the arriving threads' copies have landed (pass ws_async_copy puts
         * it in the role that issued them): they land here as its writes */
        if (s->mbar.op == IR_MBAR_ARRIVE_ASYNC)
            for (int i = 0; i < st->n; i++)
                if (st->v[i]->inflight && !st->v[i]->wg && st->v[i]->role == S->role) {
                    Acc *y = TS_NEW(S->a, Acc);
                    *y = *st->v[i];
                    y->inflight = false;
                    st->v[i] = y;
                }
        leaf(S, s, st, out);
        return;
    case IR_S_FOR: {
        if (ts_comm_block_role(s)) { /* a block's primitive given to one thread (lower_comm): opaque */
            if (S->nt > 1 && st->n) push(S, out, barrier(S, s->loc));
            push(S, out, s);
            if (S->nt > 1) push(S, out, barrier(S, s->loc));
            st->n = 0;
            return;
        }
        if (s->for_.kind == IR_FOR_THREAD) {
            int mark = fresh_scope(S);
            IrInterval lo = ir_arith_bound(&S->ar, self_contained(S, s->for_.min));
            IrInterval ex = ir_arith_bound(&S->ar, self_contained(S, s->for_.extent));
            fresh_scope_end(S, mark);
            int64_t l = lo.lo < 0 ? 0 : lo.lo;
            int64_t h = lo.hi == IR_ARITH_POS_INF || ex.hi == IR_ARITH_POS_INF ? S->nt - 1 : lo.hi + ex.hi - 1;
            if (h > S->nt - 1) h = S->nt - 1;
            IrVar *t = fresh(S, "thr", TS_INT32, l, h);
            Sub sb = {s->for_.var, ir_var_ref(S->a, t), 0, 0};
            ts_vec_push(S->a, S->subs, sb);
            S->thread = t;
            S->thr_lo = l;
            S->thr_hi = h;
            AccSet xs = {0};
            S->own_sync = false;
            collect(S, s->for_.body, &xs);
            S->thread = NULL;
            S->subs.n--;
            /* a range with the program's own barriers (TileScale's DeepEP: named
             * barriers in each warp group's queue loop) orders its threads
             * itself: its accesses are not checked against each other */
            step(S, st, &xs, out, s, !S->own_sync);
            push(S, out, s);
            return;
        }
        IrExpr *hdr[2] = {s->for_.min, s->for_.extent};
        uniform_reads(S, st, hdr, 2, out, s);
        int mark = fresh_scope(S);
        IrInterval lo = ir_arith_bound(&S->ar, self_contained(S, s->for_.min));
        IrInterval ex = ir_arith_bound(&S->ar, self_contained(S, s->for_.extent));
        int64_t hi = lo.hi == IR_ARITH_POS_INF || ex.hi == IR_ARITH_POS_INF ? IR_ARITH_POS_INF : lo.hi + ex.hi - 1;
        bool may_skip = !ir_arith_prove_lt(&S->ar, ir_i32(S->a, 0), self_contained(S, s->for_.extent));
        fresh_scope_end(S, mark);
        /* (the loop variable's range stays bound: renamed copies refer to it) */
        IrInterval was = ir_arith_var_range(&S->ar, s->for_.var);
        ir_arith_bind(&S->ar, s->for_.var, lo.lo, hi);
        IrInterval now = ir_arith_var_range(&S->ar, s->for_.var);
        if (was.lo != now.lo || was.hi != now.hi) S->cf.epoch++;
        IrStmt *c = copy_stmt(S, s);
        AccSet st0 = set_copy(S, st);
        int nbar = S->nbar;
        ts_vec_push(S->a, S->loops, (const IrStmt *)s);
        c->for_.body = uniform_loop(S, s->for_.body, s->for_.var, NULL, s, st, lo.lo, hi, may_skip);
        if (starts_with_barrier(c->for_.body) && st0.n) {
            /* is the first barrier only for what came before the loop?
             * then one before the loop does, once */
            AccSet st1 = set_copy(S, &st0);
            set_barrier(S, &st1);
            int nbar1 = S->nbar;
            IrStmt *b1 = uniform_loop(S, s->for_.body, s->for_.var, NULL, s, &st1, lo.lo, hi, may_skip);
            if (!starts_with_barrier(b1)) {
                S->nbar = nbar + (S->nbar - nbar1);
                push(S, out, barrier(S, s->loc));
                c->for_.body = b1;
                *st = st1;
            } else {
                S->nbar = nbar1;
            }
        }
        S->loops.n--;
        push(S, out, c);
        return;
    }
    case IR_S_WHILE: {
        uniform_reads(S, st, &s->while_.cond, 1, out, s);
        IrStmt *c = copy_stmt(S, s);
        c->while_.body = uniform_loop(S, s->while_.body, NULL, s->while_.cond, s, st, 0, 0, true);
        push(S, out, c);
        return;
    }
    case IR_S_IF: {
        uniform_reads(S, st, &s->if_.cond, 1, out, s);
        for (int pass = 0; pass < 2; pass++) {
            AccSet t = set_copy(S, st), e = set_copy(S, st);
            IrStmt *c = copy_stmt(S, s);
            int nbar = S->nbar;
            c->if_.then = uniform_body(S, s->if_.then, &t);
            if (s->if_.else_) c->if_.else_ = uniform_body(S, s->if_.else_, &e);
            if (pass == 0 && (starts_with_barrier(c->if_.then) || starts_with_barrier(c->if_.else_))) {
                /* a branch needs one before anything of its own: one before
                 * the if serves both paths */
                S->nbar = nbar;
                push(S, out, barrier(S, s->loc));
                set_barrier(S, st);
                continue;
            }
            set_join(S, &t, &e);
            *st = t;
            push(S, out, c);
            return;
        }
        return;
    }
    case IR_S_BREAK:
    case IR_S_CONTINUE:
        if (S->loop) set_join(S, s->kind == IR_S_BREAK ? &S->loop->brk : &S->loop->cont, st);
        st->n = 0; /* nothing runs after it */
        push(S, out, s);
        return;
    case IR_S_LET: {
        uniform_reads(S, st, &s->let.value, 1, out, s);
        Sub sb = {s->let.var, s->let.value, 0, 0};
        ts_vec_push(S->a, S->subs, sb);
        push(S, out, s);
        return;
    }
    case IR_S_ASYNC_COMMIT: /* the copies issued since the last commit form the newest group */
        for (int i = 0; i < st->n; i++)
            if (st->v[i]->inflight && !st->v[i]->wg && st->v[i]->age < (1 << 20)) {
                Acc *y = TS_NEW(S->a, Acc);
                *y = *st->v[i];
                y->age++;
                st->v[i] = y;
            }
        push(S, out, s);
        return;
    case IR_S_ASYNC_WAIT: /* cp.async.wait_group N: all groups but the N newest land */
        for (int i = 0; i < st->n; i++)
            if (st->v[i]->inflight && !st->v[i]->wg && st->v[i]->age >= s->async_wait.pending) {
                Acc *y = TS_NEW(S->a, Acc);
                *y = *st->v[i];
                y->inflight = false;
                st->v[i] = y;
            }
        push(S, out, s);
        return;
    case IR_S_TILEOP:
        if (s->op->kind == TS_OP_COMM) {
            /* opaque: ordered with everything before and after it */
            if (S->nt > 1 && st->n) push(S, out, barrier(S, s->loc));
            push(S, out, s);
            if (S->nt > 1) push(S, out, barrier(S, s->loc));
            st->n = 0;
            return;
        }
        if (async_wgmma(s)) /* one more wgmma group: the pending ones age */
            for (int i = 0; i < st->n; i++)
                if (st->v[i]->wg && st->v[i]->inflight && st->v[i]->age < WG_AGE_MAX) {
                    Acc *y = TS_NEW(S->a, Acc);
                    *y = *st->v[i];
                    y->age++;
                    st->v[i] = y;
                }
        leaf(S, s, st, out); /* a collective: any thread of the block */
        return;
    case IR_S_EVAL:
        if (is_wgmma_wait(s)) { /* wgmma.wait_group N: every group but the N newest completes */
            int64_t n = 0;
            if (!ir_is_const_int(s->eval.e->call.args[0], &n)) n = 0;
            for (int i = 0; i < st->n; i++)
                if (st->v[i]->wg && st->v[i]->inflight && st->v[i]->age >= n) {
                    Acc *y = TS_NEW(S->a, Acc);
                    *y = *st->v[i];
                    y->inflight = false;
                    st->v[i] = y;
                }
        }
        leaf(S, s, st, out);
        return;
    default: leaf(S, s, st, out); return;
    }
}

/* A statement without uniform children (its accesses by any thread). */
static void leaf(Sync *S, IrStmt *s, AccSet *st, IrStmt *out) {
    if ((s->kind == IR_S_STORE || s->kind == IR_S_ATOMIC_ADD) && shared_mem(s->store.buf))
        ts_fail_at(S->cx->diag, TS_ERR_INTERNAL, s->loc,
                   "insert_sync: a store to '%s' in uniform code (partition_threads puts those in a thread "
                   "range)", s->store.buf->name);
    AccSet xs = {0};
    collect(S, s, &xs);
    step(S, st, &xs, out, s, false);
    push(S, out, s);
}

static IrStmt *uniform(Sync *S, IrStmt *s, AccSet *st) {
    IrStmt *o = ir_seq(S->a);
    o->loc = s ? s->loc : (TsLoc){0};
    uniform_into(S, s, st, o);
    if (o->seq.n == 1 && o->seq.v[0]->kind == IR_S_SEQ) return o->seq.v[0];
    return o;
}

/* Whether a named barrier's threads may reach it from different
 * instructions (IR_S_BARRIER.unaligned; the CUDA printer then prints PTX's
 * barrier.sync instead of bar.sync, which is .aligned).  Known to be one
 * instruction for all its threads only where the barrier is of exactly the
 * threads of the T.ws role around it (insert_sync's own barriers there, a
 * role's T.sync_threads) or of the whole block outside every role; a
 * run-time id, a barrier inside a role counting threads outside it (the
 * unit collectives' block barrier: every unit has its own copy) or a
 * partial barrier outside roles (under a branch the pass cannot see
 * through) may be reached from several. */
static bool barrier_unaligned(const IrStmt *s, const IrWalkFrame *up, int64_t nthreads) {
    if (s->barrier.idv) return true;
    for (const IrWalkFrame *f = up; f; f = f->up)
        if (f->s->kind == IR_S_ROLE) return s->barrier.count != f->s->role.n;
    return s->barrier.count != 0 && s->barrier.count != nthreads;
}

/* Drop a barrier that follows another with nothing in between; mark the
 * named barriers that are reached from several instructions. */
static IrStmt *tidy_post(IrMutator *m, IrStmt *s) {
    if (s->kind == IR_S_BARRIER && (s->barrier.id || s->barrier.idv))
        s->barrier.unaligned = barrier_unaligned(s, m->frame ? m->frame->up : NULL, *(const int64_t *)m->ctx);
    if (s->kind != IR_S_SEQ) return s;
    int n = 0;
    for (int i = 0; i < s->seq.n; i++) {
        if (s->seq.v[i]->kind == IR_S_BARRIER && n > 0 && s->seq.v[n - 1]->kind == IR_S_BARRIER) continue;
        s->seq.v[n++] = s->seq.v[i];
    }
    s->seq.n = n;
    return s;
}

static void note_written(IrVisitor *v, const IrAccess *acc) {
    Sync *S = v->ctx;
    if ((acc->rw & IR_ACC_WRITE) || (v->frame && v->frame->s->kind == IR_S_TILEOP &&
                                     v->frame->s->op->kind == TS_OP_COMM))
        ts_vec_push(S->a, S->written, acc->buf);
    if ((acc->rw & IR_ACC_WRITE) && acc->buf->scope == IR_SCOPE_VAR) {
        bool in_range = false; /* written per thread: its value may differ between threads */
        for (const IrWalkFrame *f = v->frame; f && !in_range; f = f->up)
            in_range = f->s->kind == IR_S_FOR && f->s->for_.kind == IR_FOR_THREAD;
        if (in_range) ts_vec_push(S->a, S->varying, acc->buf);
    }
}

/* Records the largest id of the program's own named barriers, above which
 * role_into numbers the roles' barriers. */
static bool note_user_barrier(IrVisitor *v, const IrStmt *s) {
    Sync *S = v->ctx;
    if (s->kind == IR_S_BARRIER && s->barrier.id > S->user_bar) S->user_bar = s->barrier.id;
    return true;
}

void ts_pass_insert_sync(TsPassCtx *cx) {
    Sync S = {.cx = cx, .k = cx->k, .a = cx->arena, .nt = ir_kernel_nthreads(cx->k)};
    ir_arith_init(&S.ar, cx->arena, cx->k);
    sync_conflict_init(&S.cf, cx->arena, &S.ar, cx->k, S.nt);
    IrVisitor wv = {.ctx = &S, .access = note_written, .pre_stmt = note_user_barrier};
    ir_visit_stmt(&wv, cx->k->body);
    AccSet st = {0};
    IrStmt *body = uniform(&S, cx->k->body, &st);
    int64_t nt = S.nt;
    IrMutator m = {.arena = cx->arena, .ctx = &nt, .post_stmt = tidy_post};
    cx->k->body = ir_mutate_stmt(&m, body);
}
