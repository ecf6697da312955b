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
 * Anything not proven is a conflict.
 *
 * Placement.  A conflict between the statement about to run and the set
 * puts a barrier right before that statement, at the level of the
 * innermost enclosing uniform sequence (as late as possible, so one
 * barrier often serves several later reads), and empties the set.  Two
 * accesses inside one thread range that conflict across threads cannot
 * be separated by a barrier (it would be inside divergent code): that is
 * an error, as is a barrier found inside a thread range.  Loops are
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
 * same rule at run time).
 *
 * Collective operations: a tensor-core T.gemm reads and writes its regions
 * as "any thread"; a communication op gets a barrier before and after (it
 * is opaque).  In a blocking kernel (IrKernel.may_block) any two global
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
#include "ir/walk.h"
#include "pass/pass.h"

#include <stdlib.h>
#include <string.h>

enum { MAXDIM = 8, MAXT = 4096, ENVN = 8, MAXENUM = 1 << 14 };

/* One access since the last barrier. */
typedef struct Acc {
    const IrBuffer *buf;  /* the buffer */
    int rw;               /* IR_ACC_READ / IR_ACC_WRITE bits */
    bool atomic;          /* an atomic read-modify-write */
    bool inflight;        /* an async copy's write not yet waited for */
    int age;              /* in flight: commits since the one that closed its group (0: the newest
                             group), -1: not committed yet (no wait covers it) */
    int ndim;             /* dimensions described (== buf->ndim, or 0: the whole buffer) */
    IrExpr **start;       /* per dimension: first index (self-contained, see the essay) */
    int64_t *ext;         /* per dimension: constant extent, or -1 (the whole dimension) */
    const IrVar *th;      /* the thread (a fresh variable), or NULL: any thread */
    TS_VEC(IrVar *) fv;   /* the access's own fresh variables (th included) */
    TS_VEC(const IrVar *) fv_of; /* the loop variable each stands for (NULL: th, a load, a renaming) */
    const IrStmt *at;     /* the statement (for messages) */
    const uint8_t *tmask; /* threads (from the thread range's start) that can make it, or NULL: all */
    const uint64_t *key;  /* its canonical key (see "Canonical keys"), made when first needed; NULL:
                             not yet (a copy that changes the indices resets it) */
    int nkey;             /* words in key */
} Acc;

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
    Acc *cur;             /* the access being built (its fresh variables) */
    AccSet *coll;         /* where a region's accesses go */
    LoopCtx *loop;        /* innermost uniform loop */
    int nbar;             /* barriers placed in the kernel */
    bool bind_fresh;      /* fresh variables are bound as made (a scope the caller pops) */
    int64_t thr_lo, thr_hi; /* inside a thread range: its threads */
    TS_VEC(const IrStmt *) mask_at; /* branches entered under a condition on the thread alone */
    TS_VEC(const uint8_t *) masks;  /* ... and the threads that take them (byte per thread) */
    const uint8_t *mask_a, *mask_b; /* while deciding a conflict: the two accesses' masks */
    TS_VEC(const IrBuffer *) written; /* buffers the kernel writes (the others are read-only) */
    TS_VEC(const IrBuffer *) varying; /* T.alloc_var scalars written inside a thread range */
    TS_VEC(uint64_t) kw;  /* scratch: the key being built */
    TS_VEC(const IrVar *) kv; /* scratch: the variables it numbered, in order */
    struct Memo *memo;    /* conflicts decided so far (see "Canonical keys") */
    int memo_n, memo_cap; /* entries in memo, slots (a power of two, or 0) */
    int epoch;            /* bumped when a persistent range binding changes a range: older
                             memo entries may have seen other ranges and are not used */
} Sync;

static bool shared_mem(const IrBuffer *b) {
    return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_FRAGMENT || b->scope == IR_SCOPE_GLOBAL;
}

/* A fresh variable carries its range with it (bound in the analysis only
 * while a conflict is decided, so that the analysis's list of ranges stays
 * short however many accesses are recorded). */
typedef struct Fresh {
    IrVar v;      /* the variable (first: a Fresh is an IrVar) */
    int64_t lo;   /* its range */
    int64_t hi;
} Fresh;

enum { FRESH_ID = -7 }; /* IrVar.id of a Fresh */

static IrVar *fresh(Sync *S, const char *name, TsDType dt, int64_t lo, int64_t hi) {
    Fresh *f = TS_NEW(S->a, Fresh);
    f->v.name = name;
    f->v.id = FRESH_ID;
    f->v.dt = dt;
    f->v.kind = IR_VAR_LOOP;
    f->lo = lo;
    f->hi = hi;
    if (S->bind_fresh) ir_arith_bind(&S->ar, &f->v, lo, hi);
    return &f->v;
}

static IrInterval fresh_range(const IrVar *v) {
    const Fresh *f = (const Fresh *)v;
    return (IrInterval){f->lo, f->hi};
}

/* Bind the fresh variables of an access (until the caller pops). */
static void bind_fresh(Sync *S, const Acc *x) {
    for (int i = 0; i < x->fv.n; i++) {
        IrInterval r = fresh_range(x->fv.v[i]);
        ir_arith_bind(&S->ar, x->fv.v[i], r.lo, r.hi);
    }
}

/* A scope where fresh variables are bound as they are made (and the
 * current thread variable too): for bounds computed outside conflicts. */
static int fresh_scope(Sync *S) {
    int mark = ir_arith_mark(&S->ar);
    S->bind_fresh = true;
    if (S->thread) {
        IrInterval r = fresh_range(S->thread);
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
    x->tmask = S->masks.n ? S->masks.v[S->masks.n - 1] : NULL;
    if (S->thread) {
        ts_vec_push(S->a, x->fv, S->thread);
        ts_vec_push(S->a, x->fv_of, (const IrVar *)NULL);
    }
    return x;
}

/* An access as the visitor reports it, made self-contained. */
static Acc *make_acc(Sync *S, const IrAccess *acc, const IrStmt *at) {
    Acc *x = new_acc(S, acc->buf, acc->rw, at);
    /* a communication op inside a thread range (one thread's signal,
     * atomic, put): ordered by the communication layer, like an atomic */
    x->atomic = at && (at->kind == IR_S_ATOMIC_ADD || (at->kind == IR_S_TILEOP && at->op->kind == TS_OP_COMM));
    x->inflight = at && at->kind == IR_S_VCOPY && at->vcopy.async && (acc->rw & IR_ACC_WRITE);
    x->age = -1;
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
        IrInterval r = fresh_range(x->fv.v[i]);
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
    y->start = TS_NEWN(S->a, IrExpr *, x->ndim);
    IrVar *from[1] = {(IrVar *)v};
    IrExpr *to[1] = {e};
    for (int d = 0; d < x->ndim; d++) y->start[d] = ir_subst(S->a, x->start[d], from, to, 1);
    return y;
}

/* ---- the arithmetic of conflicts ----------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Is some value c + g*n (any integer n; g == 0: c itself) in [lo, hi]? */
static bool hits(int64_t c, int64_t g, int64_t lo, int64_t hi) {
    if (lo > hi) return false;
    if (g == 0) return lo <= c && c <= hi;
    int64_t r = (c - lo) % g;
    if (r < 0) r += g;
    return lo + r <= hi;
}

static bool atom_uses(const IrExpr *atom, const IrVar *v) { return v && ir_expr_uses_var(atom, v); }

/* Values of a few variables. */
typedef struct Env {
    const IrVar *v[ENVN]; /* the variables */
    int64_t lo[ENVN];     /* their ranges */
    int64_t hi[ENVN];
    int64_t x[ENVN];      /* their values now */
    int n;                /* how many */
} Env;

static bool env_add(Env *en, Sync *S, const IrVar *v) {
    for (int i = 0; i < en->n; i++)
        if (en->v[i] == v) return true;
    if (en->n == ENVN) return false;
    IrInterval r = ir_arith_var_range(&S->ar, v);
    if (r.lo == IR_ARITH_NEG_INF || r.hi == IR_ARITH_POS_INF || r.hi < r.lo || r.hi - r.lo > MAXT) return false;
    en->v[en->n] = v;
    en->lo[en->n] = r.lo;
    en->hi[en->n] = r.hi;
    en->n++;
    return true;
}

typedef struct VarsCtx {
    Env *en;  /* where the variables go */
    Sync *S;  /* for their ranges */
    bool ok;  /* all fit */
} VarsCtx;

static bool add_var_node(const IrExpr *e, void *ctx) {
    VarsCtx *c = ctx;
    if (e->kind == IR_E_VAR && !env_add(c->en, c->S, e->var)) c->ok = false;
    return false;
}

/* e at the values of env (an integer expression of env's variables); false if it is not. */
static bool eval_at(const IrExpr *e, const Env *en, int64_t *out) {
    int64_t a, b;
    switch (e->kind) {
    case IR_E_INT: *out = e->ival; return true;
    case IR_E_VAR:
        for (int i = 0; i < en->n; i++)
            if (en->v[i] == e->var) {
                *out = en->x[i];
                return true;
            }
        return false;
    case IR_E_CAST:
        if (e->dt == TS_BOOL) {
            if (!eval_at(e->un.a, en, &a)) return false;
            *out = a != 0;
            return true;
        }
        if (!ts_dtype_is_int(e->dt) || !(ts_dtype_is_int(e->un.a->dt) || e->un.a->dt == TS_BOOL)) return false;
        return eval_at(e->un.a, en, out);
    case IR_E_BIN:
        if (!eval_at(e->bin.a, en, &a) || !eval_at(e->bin.b, en, &b)) return false;
        if (a < -((int64_t)1 << 40) || a > ((int64_t)1 << 40) || b < -((int64_t)1 << 40) || b > ((int64_t)1 << 40))
            return false;
        switch (e->bin.op) {
        case IR_ADD: *out = a + b; return true;
        case IR_SUB: *out = a - b; return true;
        case IR_MUL:
            if ((a > 0 ? a : -a) > ((int64_t)1 << 20) && (b > 0 ? b : -b) > ((int64_t)1 << 20)) return false;
            *out = a * b;
            return true;
        case IR_FLOORDIV:
        case IR_FLOORMOD: {
            if (b == 0) return false;
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) {
                q--;
                r += b;
            }
            *out = e->bin.op == IR_FLOORDIV ? q : r;
            return true;
        }
        case IR_MIN: *out = a < b ? a : b; return true;
        case IR_MAX: *out = a > b ? a : b; return true;
        case IR_EQ: *out = a == b; return true;
        case IR_NE: *out = a != b; return true;
        case IR_LT: *out = a < b; return true;
        case IR_LE: *out = a <= b; return true;
        case IR_GT: *out = a > b; return true;
        case IR_GE: *out = a >= b; return true;
        case IR_AND: *out = a && b; return true;
        case IR_OR: *out = a || b; return true;
        default: return false;
        }
    case IR_E_NOT:
        if (e->dt != TS_BOOL || !eval_at(e->un.a, en, &a)) return false;
        *out = !a;
        return true;
    default: return false;
    }
}

/* (key, thread) pairs, sorted by key. */
typedef struct KeyT {
    int64_t key; /* a value, or a residue */
    int64_t t;   /* the thread */
} KeyT;

static int keyt_cmp(const void *x, const void *y) {
    const KeyT *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* (thread, key) order */
static int keyt_cmp_t(const void *x, const void *y) {
    const KeyT *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int i64_cmp(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The first of the n sorted keys that is >= key (n if none). */
static int64_t lower_bound(const int64_t *keys, int64_t n, int64_t key) {
    int64_t l = 0, h = n;
    while (l < h) {
        int64_t m = l + (h - l) / 2;
        if (keys[m] < key) l = m + 1;
        else h = m;
    }
    return l;
}

static int64_t pmod(int64_t x, int64_t g) {
    int64_t r = x % g;
    return r < 0 ? r + g : r;
}

/* The distinct sorted keys of a table, found by value in constant time
 * (open addressing, linear probing, at most half full): the pair
 * enumeration below looks a key up for every (thread, value) of one
 * side, tens of thousands of times in FlashAttention's epilogue. */
typedef struct KeyIndex {
    int32_t *slot;  /* per slot: an index into the keys, or -1 (empty) */
    uint64_t mask;  /* slots - 1 (slots a power of two) */
    int shift;      /* 64 - log2(slots): the hash's top bits pick the slot */
} KeyIndex;

static uint64_t key_slot(const KeyIndex *ki, int64_t key) {
    return ((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> ki->shift;
}

/* Index the n distinct keys; false when out of memory. */
static bool key_index(KeyIndex *ki, const int64_t *keys, int64_t n) {
    ki->slot = NULL;
    if (n > INT32_MAX) return false;
    int bits = 4;
    while (((int64_t)1 << bits) < 2 * n) bits++;
    ki->mask = ((uint64_t)1 << bits) - 1;
    ki->shift = 64 - bits;
    ki->slot = malloc(sizeof *ki->slot * (size_t)(ki->mask + 1));
    if (!ki->slot) return false;
    memset(ki->slot, 0xff, sizeof *ki->slot * (size_t)(ki->mask + 1));
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = key_slot(ki, keys[i]);
        while (ki->slot[h] >= 0) h = (h + 1) & ki->mask;
        ki->slot[h] = (int32_t)i;
    }
    return true;
}

/* The index of key among the keys, or -1. */
static int64_t key_find(const KeyIndex *ki, const int64_t *keys, int64_t key) {
    for (uint64_t h = key_slot(ki, key);; h = (h + 1) & ki->mask) {
        int32_t i = ki->slot[h];
        if (i < 0) return -1;
        if (keys[i] == key) return i;
    }
}

/*
 * Can diff (the difference of two index expressions) lie in [lo, hi] ...
 *  - same_thread == false: ... at all?  false: proven never;
 *  - same_thread == true: ... with ta != tb?  false: proven never (so the
 *    two accesses meet only within one thread).
 * diff = A(ta) + B(tb) + rest: the terms whose atoms hold a thread
 * variable are evaluated for every thread of its range (the atoms must be
 * functions of that thread alone: t // 32, t % 32 // 4, ...); rest is in
 * c + gZ (g the gcd of its coefficients).  For each thread ta and each
 * target x, the values of B that would meet it are looked up among the
 * sorted values (or residues mod g) of the other side.
 */
static bool may_meet(Sync *S, IrExpr *diff, int64_t lo, int64_t hi, const IrVar *ta, const IrVar *tb,
                     bool same_thread, uint64_t *pairs) {
    IrInterval all = ir_arith_bound(&S->ar, diff);
    if (all.hi != IR_ARITH_POS_INF && all.hi < lo) return false;
    if (all.lo != IR_ARITH_NEG_INF && all.lo > hi) return false;
    IrAffine f;
    if (!ir_arith_affine(&S->ar, diff, true, &f)) return true;
    /* the variables of each side: its thread and whatever shares an atom with it */
    Env ea = {{0}, {0}, {0}, {0}, 0}, eb = ea;
    bool ok = true;
    if (same_thread) {
        ok = env_add(&ea, S, ta) && env_add(&eb, S, tb);
        for (int i = 0; i < f.n && ok; i++) {
            bool ua = atom_uses(f.t[i].atom, ta), ub = atom_uses(f.t[i].atom, tb);
            if (ua && ub) ok = false;
            VarsCtx c = {ua ? &ea : &eb, S, true};
            if (ua || ub) ir_expr_any(f.t[i].atom, add_var_node, &c);
            ok = ok && c.ok;
        }
        if (!ok) return true;
    }
    int64_t g = 0;
    int na = 0, nb = 0;
    IrAffTerm *ta_t = TS_NEWN(S->a, IrAffTerm, f.n ? f.n : 1), *tb_t = TS_NEWN(S->a, IrAffTerm, f.n ? f.n : 1);
    IrAffine rest = {TS_NEWN(S->a, IrAffTerm, f.n ? f.n : 1), 0, f.c, true};
    for (int i = 0; i < f.n; i++) {
        const IrExpr *at = f.t[i].atom;
        bool ua = false, ub = false;
        if (same_thread) {
            /* a term on a side when all its variables are that side's */
            Env t1 = ea, t2 = eb;
            VarsCtx c1 = {&t1, S, true}, c2 = {&t2, S, true};
            ir_expr_any(at, add_var_node, &c1);
            ir_expr_any(at, add_var_node, &c2);
            ua = c1.ok && t1.n == ea.n && at->kind != IR_E_INT;
            ub = !ua && c2.ok && t2.n == eb.n && at->kind != IR_E_INT;
        }
        if (ua) ta_t[na++] = f.t[i];
        else if (ub) tb_t[nb++] = f.t[i];
        else {
            g = gcd64(g, f.t[i].coeff);
            rest.t[rest.n++] = f.t[i];
        }
    }
    IrInterval rb = ir_arith_bound(&S->ar, ir_affine_expr(S->a, &rest, diff->dt));
    if (!same_thread) {
        int64_t l = lo > rb.lo ? lo : rb.lo, h = hi < rb.hi ? hi : rb.hi;
        return hits(f.c, g, l, h);
    }
    if (!pairs) return true;
    if (hi - lo >= 64) return true;
    if (g == 0) rb.lo = rb.hi = f.c;
    if (rb.lo == IR_ARITH_NEG_INF || rb.hi == IR_ARITH_POS_INF) return true;
    IrInterval ra = ir_arith_var_range(&S->ar, ta), rt = ir_arith_var_range(&S->ar, tb);
    int64_t n2t = rt.hi - rt.lo + 1;
    /* every assignment of each side's variables (thread first, mixed radix) */
    int64_t c1 = 1, c2 = 1;
    for (int i = 0; i < ea.n; i++) c1 *= ea.hi[i] - ea.lo[i] + 1;
    for (int i = 0; i < eb.n; i++) c2 *= eb.hi[i] - eb.lo[i] + 1;
    if (c1 > MAXENUM || c2 > MAXENUM || c1 < 1 || c2 < 1) return true;
    KeyT *A = malloc(sizeof *A * (size_t)c1), *B = malloc(sizeof *B * (size_t)c2);
    ok = A && B;
    for (int pass = 0; pass < 2 && ok; pass++) {
        Env *en = pass ? &eb : &ea;
        IrAffTerm *tt = pass ? tb_t : ta_t;
        int nt = pass ? nb : na;
        int64_t cnt = pass ? c2 : c1;
        KeyT *out = pass ? B : A;
        for (int64_t q = 0; q < cnt && ok; q++) {
            int64_t rem = q;
            for (int i = en->n - 1; i >= 0; i--) {
                int64_t w = en->hi[i] - en->lo[i] + 1;
                en->x[i] = en->lo[i] + rem % w;
                rem /= w;
            }
            int64_t val = 0;
            for (int i = 0; i < nt && ok; i++) {
                int64_t v;
                ok = eval_at(tt[i].atom, en, &v);
                val += tt[i].coeff * v;
            }
            out[q].key = val;
            out[q].t = en->x[0]; /* the thread (added first) */
            /* a thread its branch conditions exclude makes no access: a key no lookup finds */
            const uint8_t *mk = pass ? S->mask_b : S->mask_a;
            int64_t base = pass ? rt.lo : ra.lo;
            if (mk && !mk[en->x[0] - base]) out[q].t = IR_ARITH_NEG_INF;
        }
        int64_t kept = 0;
        for (int64_t q = 0; q < cnt; q++)
            if (out[q].t != IR_ARITH_NEG_INF) out[kept++] = out[q];
        if (pass) c2 = kept;
        else c1 = kept;
    }
    int64_t budget = (int64_t)1 << 20; /* candidate pairs looked at */
    /* the values the rest can take, where its terms are few small ranges:
     * every combination enumerated, sorted, duplicates dropped */
    int64_t *rv = NULL, nrv = 0;
    if (ok) {
        int64_t combos = 1;
        bool fine = true;
        for (int i = 0; i < rest.n && fine; i++) {
            const IrExpr *at = rest.t[i].atom;
            IrInterval r = at->kind == IR_E_VAR ? ir_arith_var_range(&S->ar, at->var) : (IrInterval){1, 0};
            if (r.lo > r.hi || r.hi - r.lo >= 4096) fine = false;
            else combos *= r.hi - r.lo + 1;
            if (combos > 4096) fine = false;
        }
        if (fine && (rv = malloc(sizeof *rv * (size_t)combos)) != NULL) {
            for (int64_t q = 0; q < combos; q++) {
                int64_t rem = q, val = f.c;
                for (int i = rest.n - 1; i >= 0; i--) {
                    IrInterval r = ir_arith_var_range(&S->ar, rest.t[i].atom->var);
                    int64_t w = r.hi - r.lo + 1;
                    val += rest.t[i].coeff * (r.lo + rem % w);
                    rem /= w;
                }
                rv[q] = val;
            }
            qsort(rv, (size_t)combos, sizeof *rv, i64_cmp);
            for (int64_t q = 0; q < combos; q++)
                if (!nrv || rv[nrv - 1] != rv[q]) rv[nrv++] = rv[q];
        }
    }
    int64_t n1t = ra.hi - ra.lo + 1;
    int64_t n2w = (n2t + 63) / 64; /* 64-bit words per row of thread pairs */
    uint64_t *mine = ok ? calloc((size_t)(n1t * n2w), sizeof(uint64_t)) : NULL;
    ok = ok && mine;
    if (ok) qsort(B, (size_t)c2, sizeof *B, keyt_cmp);
    /* B grouped by value: each distinct value, where its entries start in
     * B, and the threads that have it (as bits, where they fit) */
    int64_t ng = 0, *gkey = NULL, *gbeg = NULL;
    uint64_t *gthr = NULL;
    if (ok) {
        gkey = malloc(sizeof *gkey * (size_t)(c2 + 1));
        gbeg = malloc(sizeof *gbeg * (size_t)(c2 + 1));
        ok = gkey && gbeg;
        for (int64_t j = 0; ok && j < c2; j++)
            if (!ng || gkey[ng - 1] != B[j].key) {
                gbeg[ng] = j;
                gkey[ng++] = B[j].key;
            }
        if (ok) gbeg[ng] = c2;
        gthr = ok && ng * n2w <= ((int64_t)1 << 22) ? calloc((size_t)(ng * n2w + 1), sizeof(uint64_t)) : NULL;
        for (int64_t gi = 0; gthr && gi < ng; gi++)
            for (int64_t j = gbeg[gi]; j < gbeg[gi + 1]; j++) {
                int64_t b = B[j].t - rt.lo;
                gthr[gi * n2w + b / 64] |= (uint64_t)1 << (b % 64);
            }
    }
    if (ok && rv && gthr) {
        /* A + B + R = x for one of the rest's values R, i.e. A + B in the
         * targets W = {x - R}; each group ORed into a thread's row once (A
         * sorted by thread: stamps).  Per value of A, either every target
         * is looked up among the groups or every group among the targets,
         * whichever list is shorter: the same pairs either way. */
        qsort(A, (size_t)c1, sizeof *A, keyt_cmp_t);
        int64_t nw = 0, *W = malloc(sizeof *W * (size_t)((hi - lo + 1) * nrv));
        for (int64_t x = lo; W && x <= hi; x++)
            for (int64_t k = 0; k < nrv; k++) W[nw++] = (int64_t)((uint64_t)x - (uint64_t)rv[k]);
        if (W) qsort(W, (size_t)nw, sizeof *W, i64_cmp);
        int64_t nwd = 0;
        for (int64_t q = 0; W && q < nw; q++)
            if (!nwd || W[nwd - 1] != W[q]) W[nwd++] = W[q];
        nw = nwd;
        int64_t *stamp = W ? malloc(sizeof *stamp * (size_t)ng) : NULL;
        for (int64_t i = 0; stamp && i < ng; i++) stamp[i] = IR_ARITH_NEG_INF;
        KeyIndex kg = {0}, kw = {0}; /* the groups' keys, the targets */
        bool by_target = nw <= ng;
        if (stamp && !(by_target ? key_index(&kg, gkey, ng) : key_index(&kw, W, nw))) {
            free(stamp);
            stamp = NULL;
        }
        for (int64_t q = 0; stamp && q < c1; q++) {
            if (q > 0 && A[q].t == A[q - 1].t && A[q].key == A[q - 1].key) continue;
            uint64_t *row = mine + (A[q].t - ra.lo) * n2w;
            for (int64_t j = 0; j < (by_target ? nw : ng); j++) {
                int64_t l = j;
                if (by_target) l = key_find(&kg, gkey, (int64_t)((uint64_t)W[j] - (uint64_t)A[q].key));
                else if (key_find(&kw, W, (int64_t)((uint64_t)gkey[j] + (uint64_t)A[q].key)) < 0) l = -1;
                if (l >= 0 && stamp[l] != A[q].t) {
                    stamp[l] = A[q].t;
                    const uint64_t *gt = gthr + l * n2w;
                    for (int64_t i = 0; i < n2w; i++) row[i] |= gt[i];
                }
            }
        }
        free(kg.slot);
        free(kw.slot);
        free(W);
        if (!stamp) ok = false;
        free(stamp);
    } else if (ok) {
        /* A + B + R = x with R in [rb.lo, rb.hi], R = c (mod g): for each
         * entry of A and each x, the candidates are B's entries with values
         * in [x - A - rb.hi, x - A - rb.lo].  At most `budget` candidates in
         * all (counted first, from the groups' starts), else no answer;
         * then the residue test once per group, its threads ORed in. */
        int64_t total = 0;
        for (int64_t q = 0; q < c1 && ok; q++)
            for (int64_t x = lo; x <= hi && ok; x++) {
                int64_t gl = lower_bound(gkey, ng, x - A[q].key - rb.hi);
                int64_t gu = lower_bound(gkey, ng, x - A[q].key - rb.lo + 1);
                if (gu > gl) total += gbeg[gu] - gbeg[gl];
                if (total > budget) ok = false;
            }
        if (ok) qsort(A, (size_t)c1, sizeof *A, keyt_cmp_t);
        for (int64_t q = 0; q < c1 && ok; q++) {
            if (q > 0 && A[q].t == A[q - 1].t && A[q].key == A[q - 1].key) continue;
            uint64_t *row = mine + (A[q].t - ra.lo) * n2w;
            for (int64_t x = lo; x <= hi; x++) {
                int64_t gl = lower_bound(gkey, ng, x - A[q].key - rb.hi);
                for (int64_t gi = gl; gi < ng && gkey[gi] <= x - A[q].key - rb.lo; gi++) {
                    int64_t R = x - A[q].key - gkey[gi];
                    if (!(g ? pmod(R - f.c, g) == 0 : R == f.c)) continue;
                    if (gthr)
                        for (int64_t i = 0; i < n2w; i++) row[i] |= gthr[gi * n2w + i];
                    else
                        for (int64_t j = gbeg[gi]; j < gbeg[gi + 1]; j++)
                            row[(B[j].t - rt.lo) / 64] |= (uint64_t)1 << ((B[j].t - rt.lo) % 64);
                }
            }
        }
    }
    /* one thread meeting itself is not a conflict */
    for (int64_t t = ra.lo; ok && t <= ra.hi; t++)
        if (t >= rt.lo && t <= rt.hi)
            mine[(t - ra.lo) * n2w + (t - rt.lo) / 64] &= ~((uint64_t)1 << ((t - rt.lo) % 64));
    free(rv);
    free(gkey);
    free(gbeg);
    free(gthr);
    bool meet = true;
    if (ok) {
        meet = false;
        for (int64_t i = 0; i < n1t * n2w; i++) {
            pairs[i] &= mine[i];
            meet |= pairs[i] != 0;
        }
    }
    free(mine);
    free(A);
    free(B);
    return meet;
}

static IrExpr *sub64(Sync *S, IrExpr *x, IrExpr *y);

/* The bound of x - y, the terms both share (the same atom with the same
 * coefficient: block indices, uniform loop variables) cancelled first. */
static IrInterval diff_bound(Sync *S, IrExpr *x, IrExpr *y) {
    IrAffine fx, fy;
    if (!ir_arith_affine(&S->ar, x, false, &fx) || !ir_arith_affine(&S->ar, y, false, &fy))
        return ir_arith_bound(&S->ar, sub64(S, x, y));
    IrAffine rx = {TS_NEWN(S->a, IrAffTerm, fx.n ? fx.n : 1), 0, fx.c, fx.affine};
    IrAffine ry = {TS_NEWN(S->a, IrAffTerm, fy.n ? fy.n : 1), 0, fy.c, fy.affine};
    bool *used = TS_NEWN(S->a, bool, fy.n ? fy.n : 1);
    for (int i = 0; i < fx.n; i++) {
        bool same = false;
        for (int j = 0; j < fy.n && !same; j++)
            if (!used[j] && fy.t[j].coeff == fx.t[i].coeff && ir_expr_equal(fy.t[j].atom, fx.t[i].atom))
                same = used[j] = true;
        if (!same) rx.t[rx.n++] = fx.t[i];
    }
    for (int j = 0; j < fy.n; j++)
        if (!used[j]) ry.t[ry.n++] = fy.t[j];
    IrInterval bx = ir_arith_bound(&S->ar, ir_affine_expr(S->a, &rx, TS_INT64));
    IrInterval by = ir_arith_bound(&S->ar, ir_affine_expr(S->a, &ry, TS_INT64));
    if (bx.lo == IR_ARITH_NEG_INF || bx.hi == IR_ARITH_POS_INF || by.lo == IR_ARITH_NEG_INF ||
        by.hi == IR_ARITH_POS_INF)
        return (IrInterval){IR_ARITH_NEG_INF, IR_ARITH_POS_INF};
    return (IrInterval){bx.lo - by.hi, bx.hi - by.lo};
}

enum { MAXTERMS = 16 };

/* The terms of e as a sum of one integer dtype (its IR_ADD tree), or -1
 * when there are more than MAXTERMS. */
static int sum_terms(IrExpr *e, IrExpr **t, int n) {
    if (e->kind == IR_E_BIN && e->bin.op == IR_ADD && e->bin.a->dt == e->dt && e->bin.b->dt == e->dt) {
        n = sum_terms(e->bin.a, t, n);
        return n < 0 ? n : sum_terms(e->bin.b, t, n);
    }
    if (n >= MAXTERMS) return -1;
    t[n] = e;
    return n + 1;
}

static bool uses_fresh_of(const IrExpr *e, const Acc *a) {
    for (int i = 0; i < a->fv.n; i++)
        if (ir_expr_uses_var(e, a->fv.v[i])) return true;
    return false;
}

/* x and y (the index expressions of accesses ax and ay, of one dtype) less
 * the terms their sums share that stand for one value in both: no variable
 * of either access's own (threads, thread-range loop variables, per-access
 * unknowns) in them.  A T.use_swizzle block index is a select and casts
 * over run-time extents, a uniform T.alloc_var an unknown of any value,
 * so x - y taken whole "may wrap" and hides the thread terms beside them.
 * Dropping the shared term is exact: u + a and u + b are equal (mod 2^w
 * too) exactly when a and b are, and their difference is a - b for the
 * in-bounds indices a well-formed kernel makes. */
static void strip_common(Sync *S, const Acc *ax, const Acc *ay, IrExpr **x, IrExpr **y) {
    IrExpr *tx[MAXTERMS], *ty[MAXTERMS];
    if ((*x)->dt != (*y)->dt) return;
    int nx = sum_terms(*x, tx, 0), ny = sum_terms(*y, ty, 0);
    if (nx < 2 && ny < 2) return;
    if (nx < 0 || ny < 0) return;
    bool usedy[MAXTERMS] = {0}, dropx[MAXTERMS] = {0}, any = false;
    for (int i = 0; i < nx; i++) {
        if (uses_fresh_of(tx[i], ax) || uses_fresh_of(tx[i], ay)) continue;
        for (int j = 0; j < ny; j++)
            if (!usedy[j] && ir_expr_equal(tx[i], ty[j])) {
                usedy[j] = dropx[i] = any = true;
                break;
            }
    }
    if (!any) return;
    IrExpr *rx = NULL, *ry = NULL;
    for (int i = 0; i < nx; i++)
        if (!dropx[i]) rx = rx ? ir_bin(S->a, IR_ADD, rx, tx[i]) : tx[i];
    for (int j = 0; j < ny; j++)
        if (!usedy[j]) ry = ry ? ir_bin(S->a, IR_ADD, ry, ty[j]) : ty[j];
    *x = rx ? rx : ir_int(S->a, 0, (*x)->dt);
    *y = ry ? ry : ir_int(S->a, 0, (*y)->dt);
}

/* The row-major element offset of the starts of x and y, differenced, or
 * NULL.  Shared buffers use their constant strides.  Global ones (run-time
 * strides) use as stride of each dimension the span of the index
 * difference in the dimensions inside it: with digits |d_i| < span_i, a
 * weighted sum is zero only if every digit is, so the offsets of two index
 * tuples (lanes included) meet exactly when the tuples do. */
static IrExpr *offset_diff(Sync *S, const Acc *x, const Acc *y) {
    const IrBuffer *b = x->buf;
    int n = x->ndim;
    if (!n || n != y->ndim) return NULL;
    for (int d = 0; d + 1 < n; d++)
        if (x->ext[d] != 1 || y->ext[d] != 1) return NULL;
    if (x->ext[n - 1] < 1 || y->ext[n - 1] < 1) return NULL;
    IrExpr *o = NULL;
    int64_t stride = 1;
    for (int d = n - 1; d >= 0; d--) {
        IrExpr *xs = x->start[d], *ys = y->start[d];
        strip_common(S, x, y, &xs, &ys);
        IrExpr *t = sub64(S, xs, ys);
        int64_t e;
        if (b->scope == IR_SCOPE_GLOBAL) {
            IrInterval r = diff_bound(S, xs, ys);
            if (r.lo == IR_ARITH_NEG_INF || r.hi == IR_ARITH_POS_INF) return NULL;
            int64_t m = -r.lo > r.hi ? -r.lo : r.hi;
            if (d == n - 1) m += (x->ext[d] > y->ext[d] ? x->ext[d] : y->ext[d]) - 1;
            e = m + 1;
        } else if (!ir_is_const_int(b->shape[d], &e)) {
            return NULL;
        }
        if (stride != 1) t = ir_bin(S->a, IR_MUL, t, ir_int(S->a, stride, TS_INT64));
        o = o ? ir_bin(S->a, IR_ADD, t, o) : t;
        if (e < 1 || e > ((int64_t)1 << 30) || stride > ((int64_t)1 << 62) / e) return NULL;
        stride *= e;
    }
    return o;
}

static IrExpr *sub64(Sync *S, IrExpr *x, IrExpr *y) {
    return ir_bin(S->a, IR_SUB, ir_cast(S->a, TS_INT64, x), ir_cast(S->a, TS_INT64, y));
}

/* May x and y touch one element (same_thread: from two different threads)? */
static bool elements_meet(Sync *S, const Acc *x, const Acc *y, bool same_thread) {
    if (!x->ndim || !y->ndim || x->ndim != y->ndim) return true;
    /* same_thread: the thread pairs (ta != tb) that may meet, narrowed by each dimension */
    uint64_t *pairs = NULL;
    if (same_thread) {
        IrInterval ra = ir_arith_var_range(&S->ar, x->th), rt = ir_arith_var_range(&S->ar, y->th);
        if (ra.hi < ra.lo || rt.hi < rt.lo) return false; /* an empty thread range: no access at all */
        if (ra.lo == IR_ARITH_NEG_INF || ra.hi == IR_ARITH_POS_INF || rt.lo == IR_ARITH_NEG_INF ||
            rt.hi == IR_ARITH_POS_INF || ra.hi - ra.lo >= MAXT || rt.hi - rt.lo >= MAXT ||
            (ra.hi - ra.lo + 1) * (rt.hi - rt.lo + 1) > ((int64_t)1 << 22))
            return true;
        size_t n = (size_t)((ra.hi - ra.lo + 1) * ((rt.hi - rt.lo + 1 + 63) / 64));
        pairs = malloc(n * sizeof *pairs);
        if (!pairs) return true;
        memset(pairs, 0xff, n * sizeof *pairs); /* (bits past a row's end stay 0 in every narrowing) */
    }
    bool meet = true;
    for (int d = 0; d < x->ndim && meet; d++) {
        if (x->ext[d] < 1 || y->ext[d] < 1) continue;
        IrExpr *xs = x->start[d], *ys = y->start[d];
        strip_common(S, x, y, &xs, &ys);
        meet = may_meet(S, sub64(S, xs, ys), -(x->ext[d] - 1), y->ext[d] - 1, x->th, y->th,
                        same_thread, pairs);
    }
    if (meet) {
        int64_t lx = x->ext[x->ndim - 1], ly = y->ext[y->ndim - 1];
        IrExpr *od = offset_diff(S, x, y);
        if (od) meet = may_meet(S, od, -(lx - 1), ly - 1, x->th, y->th, same_thread, pairs);
    }
    free(pairs);
    return meet;
}

/* ---- canonical keys ------------------------------------------------------------------
 *
 * Whether two accesses conflict depends only on their buffers, kinds, extents,
 * thread masks and index expressions, on the ranges of the variables in them,
 * and on which variables they share, not on the names or identities of their
 * own fresh variables: the analysis treats those as any variable of that range.
 * So the answer is kept under a key that describes the pair exactly, up to a
 * renaming of fresh variables: every expression node (kind, dtype, operator,
 * constant), buffers and other variables by identity, fresh variables numbered
 * by first appearance with their dtype and range (and whether the conflict binds
 * them: an access's own variables; the one-value unknowns of a uniform
 * T.alloc_var are not bound).  Ranges of the other variables come from the
 * analysis's persistent bindings (uniform loop variables); a binding that
 * changes one starts a new epoch, in which older answers are not used.  Loop
 * bodies analysed again to a fixed point, and runs of statements that make the
 * same accesses (a chain of T.Parallel updates of one shared tile), ask the same
 * questions again and again: each is now decided once.
 *
 * The same key of one access decides whether a set already holds an access
 * that is equal to it up to its own variables: every later conflict with either
 * one has the same answer (the later access shares no fresh variable with
 * either), so the set keeps one; without that, a run of n such statements
 * costs n^2 conflict questions. */

static void key_put(Sync *S, uint64_t w) { ts_vec_push(S->a, S->kw, w); }

/* A variable: fresh ones numbered (with dtype, range and whether bound, i.e.
 * one of bound_a's or bound_b's own), others by identity. */
static void key_var(Sync *S, const IrVar *v, const Acc *bound_a, const Acc *bound_b) {
    if (v->id != FRESH_ID) {
        key_put(S, 1);
        key_put(S, (uint64_t)(uintptr_t)v);
        return;
    }
    for (int i = 0; i < S->kv.n; i++)
        if (S->kv.v[i] == v) {
            key_put(S, 2);
            key_put(S, (uint64_t)i);
            return;
        }
    ts_vec_push(S->a, S->kv, v);
    bool bound = false;
    for (int i = 0; bound_a && i < bound_a->fv.n && !bound; i++) bound = bound_a->fv.v[i] == v;
    for (int i = 0; bound_b && i < bound_b->fv.n && !bound; i++) bound = bound_b->fv.v[i] == v;
    IrInterval r = fresh_range(v);
    key_put(S, 3);
    key_put(S, (uint64_t)v->dt | (uint64_t)bound << 32);
    key_put(S, (uint64_t)r.lo);
    key_put(S, (uint64_t)r.hi);
}

static void key_expr(Sync *S, const IrExpr *e, const Acc *ba, const Acc *bb) {
    if (!e) {
        key_put(S, 0);
        return;
    }
    key_put(S, (uint64_t)e->kind + 16 * (uint64_t)e->dt + 1);
    switch (e->kind) {
    case IR_E_INT: key_put(S, (uint64_t)e->ival); return;
    case IR_E_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &e->fval, sizeof bits);
        key_put(S, bits);
        return;
    }
    case IR_E_VAR: key_var(S, e->var, ba, bb); return;
    case IR_E_LOAD:
        key_put(S, (uint64_t)(uintptr_t)e->load.buf);
        key_put(S, (uint64_t)e->load.nidx);
        for (int i = 0; i < e->load.nidx; i++) key_expr(S, e->load.idx[i], ba, bb);
        return;
    case IR_E_BIN:
        key_put(S, (uint64_t)e->bin.op);
        key_expr(S, e->bin.a, ba, bb);
        key_expr(S, e->bin.b, ba, bb);
        return;
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST:
        key_put(S, (uint64_t)e->un.bitnot);
        key_expr(S, e->un.a, ba, bb);
        return;
    case IR_E_SELECT:
        key_expr(S, e->sel.cond, ba, bb);
        key_expr(S, e->sel.a, ba, bb);
        key_expr(S, e->sel.b, ba, bb);
        return;
    case IR_E_CALL:
        key_put(S, (uint64_t)e->call.fn);
        key_put(S, (uint64_t)e->call.nargs);
        for (int i = 0; i < e->call.nargs; i++) key_expr(S, e->call.args[i], ba, bb);
        return;
    default: key_put(S, (uint64_t)(uintptr_t)e); return; /* only equal to itself */
    }
}

/* Append x's description to the key (ba, bb: the accesses whose own
 * variables the question binds). */
static void key_acc(Sync *S, const Acc *x, const Acc *ba, const Acc *bb) {
    key_put(S, (uint64_t)(uintptr_t)x->buf);
    key_put(S, (uint64_t)x->rw | (uint64_t)x->atomic << 8 | (uint64_t)x->ndim << 16);
    for (int d = 0; d < x->ndim; d++) {
        key_put(S, (uint64_t)x->ext[d]);
        key_expr(S, x->start[d], ba, bb);
    }
    if (x->th) key_var(S, x->th, ba, bb);
    else key_put(S, 0);
    if (x->th && x->tmask) {
        IrInterval r = fresh_range(x->th);
        key_put(S, 1);
        for (int64_t t = 0; t <= r.hi - r.lo; t += 8) {
            uint64_t w = 0;
            for (int64_t i = t; i < t + 8 && i <= r.hi - r.lo; i++) w |= (uint64_t)x->tmask[i] << (8 * (i - t));
            key_put(S, w);
        }
    } else {
        key_put(S, 0);
    }
}

/* x's own key (cached on it). */
static void acc_key(Sync *S, Acc *x) {
    if (x->key) return;
    S->kw.n = S->kv.n = 0;
    key_acc(S, x, x, NULL);
    uint64_t *k = TS_NEWN(S->a, uint64_t, S->kw.n);
    memcpy(k, S->kw.v, sizeof *k * (size_t)S->kw.n);
    x->key = k;
    x->nkey = S->kw.n;
}

/* One decided conflict. */
typedef struct Memo {
    const uint64_t *key; /* the question's key (NULL: an empty slot) */
    int nkey;            /* its words */
    int epoch;           /* when it was decided */
    bool conflict;       /* the answer */
} Memo;

static uint64_t key_hash(const uint64_t *w, int n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int i = 0; i < n; i++) h = (h ^ w[i]) * UINT64_C(0x100000001b3) + (h >> 29);
    return h;
}

/* The slot of the key in S->kw: its entry, or the empty slot where it goes. */
static Memo *memo_slot(Sync *S) {
    uint64_t mask = (uint64_t)S->memo_cap - 1;
    for (uint64_t i = key_hash(S->kw.v, S->kw.n) & mask;; i = (i + 1) & mask) {
        Memo *m = &S->memo[i];
        if (!m->key || (m->nkey == S->kw.n && !memcmp(m->key, S->kw.v, sizeof *m->key * (size_t)m->nkey)))
            return m;
    }
}

/* The answer for the key in S->kw: 0 / 1, or -1 if not known in this epoch. */
static int memo_find(Sync *S) {
    if (!S->memo_cap) return -1;
    Memo *m = memo_slot(S);
    return m->key && m->epoch == S->epoch ? m->conflict : -1;
}

/* Record the answer for the key in S->kw. */
static void memo_put(Sync *S, bool c) {
    if (2 * (S->memo_n + 1) > S->memo_cap) {
        Memo *old = S->memo;
        int ocap = S->memo_cap;
        S->memo_cap = ocap ? 2 * ocap : 256;
        S->memo = TS_NEWN(S->a, Memo, S->memo_cap);
        memset(S->memo, 0, sizeof *S->memo * (size_t)S->memo_cap);
        uint64_t mask = (uint64_t)S->memo_cap - 1;
        for (int j = 0; j < ocap; j++) {
            if (!old[j].key) continue;
            uint64_t i = key_hash(old[j].key, old[j].nkey) & mask;
            while (S->memo[i].key) i = (i + 1) & mask;
            S->memo[i] = old[j];
        }
    }
    Memo *m = memo_slot(S);
    if (!m->key) {
        uint64_t *k = TS_NEWN(S->a, uint64_t, S->kw.n);
        memcpy(k, S->kw.v, sizeof *k * (size_t)S->kw.n);
        m->key = k;
        m->nkey = S->kw.n;
        S->memo_n++;
    }
    m->epoch = S->epoch;
    m->conflict = c;
}

static bool one_thread(Sync *S, const IrVar *t, int64_t *at) {
    if (!t) return false;
    IrInterval r = ir_arith_var_range(&S->ar, t);
    *at = r.lo;
    return r.lo == r.hi;
}

/* Do x and y conflict (see the essay)?  within: two accesses of one
 * thread range (the blocking kernels' ordering of global writes is between
 * statements, not inside one). */
static bool conflict_bound(Sync *S, const Acc *x, const Acc *y, bool within);

static bool conflict(Sync *S, const Acc *x, const Acc *y, bool within) {
    if (x->buf != y->buf && !S->k->may_block) return false;
    if (x->buf == y->buf && !((x->rw | y->rw) & IR_ACC_WRITE)) return false;
    /* the same question, up to the accesses' own variables, answered before? */
    S->kw.n = S->kv.n = 0;
    ts_vec_push(S->a, S->kw, (uint64_t)within);
    key_acc(S, x, x, y);
    key_acc(S, y, x, y);
    int known = memo_find(S);
    if (known >= 0) return known;
    int mark = ir_arith_mark(&S->ar);
    bind_fresh(S, x);
    bind_fresh(S, y);
    bool c = conflict_bound(S, x, y, within);
    ir_arith_pop(&S->ar, mark);
    memo_put(S, c);
    return c;
}

static bool conflict_bound(Sync *S, const Acc *x, const Acc *y, bool within) {
    int64_t tx, ty;
    bool same1 = one_thread(S, x->th, &tx) && one_thread(S, y->th, &ty) && tx == ty;
    if (S->k->may_block && !within && x->buf->scope == IR_SCOPE_GLOBAL && y->buf->scope == IR_SCOPE_GLOBAL &&
        (x->rw & IR_ACC_WRITE) && (y->rw & IR_ACC_WRITE) && !same1 && S->nt > 1)
        return true; /* blocking kernels: global writes are ordered (a flag after the data) */
    if (x->buf != y->buf) return false;
    if (!((x->rw | y->rw) & IR_ACC_WRITE)) return false;
    if (x->atomic && y->atomic) return false;
    if (S->nt <= 1 || same1) return false;
    if (!elements_meet(S, x, y, false)) return false;
    S->mask_a = x->tmask;
    S->mask_b = y->tmask;
    bool meet = !(x->th && y->th) || elements_meet(S, x, y, true);
    S->mask_a = S->mask_b = NULL;
    return meet;
}

/* ---- the walk --------------------------------------------------------------------- */

static void set_add(Sync *S, AccSet *s, Acc *x) { ts_vec_push(S->a, *s, x); }

/* Add x unless the set holds an access equal to it up to its own
 * variables, in the same state (see "Canonical keys"). */
static void set_add_new(Sync *S, AccSet *s, Acc *x) {
    for (int i = 0; i < s->n; i++) {
        Acc *y = s->v[i];
        if (y->buf != x->buf || y->rw != x->rw || y->inflight != x->inflight || y->age != x->age) continue;
        acc_key(S, x);
        acc_key(S, y);
        if (x->nkey == y->nkey && !memcmp(x->key, y->key, sizeof *x->key * (size_t)x->nkey)) return;
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

/* A barrier: everything but the copies in flight is ordered. */
static void set_barrier(AccSet *s) {
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (s->v[i]->inflight) s->v[n++] = s->v[i];
    s->n = n;
}

/* Does the new access conflict with anything in the set (copies in flight
 * excepted: they are checked when they land)? */
static const Acc *conflicts_with(Sync *S, const AccSet *st, const Acc *x) {
    for (int i = 0; i < st->n; i++)
        if (!st->v[i]->inflight && conflict(S, st->v[i], x, false)) return st->v[i];
    return NULL;
}

/* --- collecting the accesses of a statement ---------------------------------------- */

static void coll_access(IrVisitor *v, const IrAccess *acc) {
    Sync *S = v->ctx;
    if (!shared_mem(acc->buf)) return;
    set_add(S, S->coll, make_acc(S, acc, v->frame ? v->frame->s : NULL));
}

/* The threads of the current range for which cond (a function of the
 * thread alone, after substitution) holds, negated if neg; NULL if cond is
 * not such a function.  Combined with the enclosing branch's mask. */
static const uint8_t *branch_mask(Sync *S, const IrExpr *cond, bool neg) {
    if (!S->thread || S->thr_hi < S->thr_lo || S->thr_hi - S->thr_lo >= MAXT) return NULL;
    IrExpr *c = self_contained(S, (IrExpr *)cond);
    Env en = {{0}, {0}, {0}, {0}, 0};
    en.v[0] = S->thread;
    en.n = 1;
    int64_t n = S->thr_hi - S->thr_lo + 1;
    uint8_t *m = TS_NEWN(S->a, uint8_t, n);
    const uint8_t *up = S->masks.n ? S->masks.v[S->masks.n - 1] : NULL;
    for (int64_t t = 0; t < n; t++) {
        int64_t val;
        en.x[0] = S->thr_lo + t;
        if (!eval_at(c, &en, &val)) return NULL;
        m[t] = (uint8_t)((val != 0) != neg) && (!up || up[t]);
    }
    return m;
}

static bool coll_pre(IrVisitor *v, const IrStmt *s) {
    Sync *S = v->ctx;
    const IrWalkFrame *up = v->frame ? v->frame->up : NULL;
    if (S->thread && up && up->s->kind == IR_S_IF && (up->s->if_.then == s || up->s->if_.else_ == s)) {
        const uint8_t *m = branch_mask(S, up->s->if_.cond, up->s->if_.else_ == s);
        if (m) {
            ts_vec_push(S->a, S->mask_at, s);
            ts_vec_push(S->a, S->masks, m);
        }
    }
    if (s->kind == IR_S_BARRIER)
        ts_fail_at(S->cx->diag, TS_ERR_INTERNAL, s->loc,
                   "insert_sync: a barrier inside a thread range (divergent code) in kernel %s", S->k->name);
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
    if (S->mask_at.n && S->mask_at.v[S->mask_at.n - 1] == s) {
        S->mask_at.n--;
        S->masks.n--;
    }
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
    IrVisitor v = {.ctx = S, .pre_stmt = coll_seq_pre, .post_stmt = coll_seq_post, .access = coll_access};
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
    return ir_stmt(S->a, IR_S_BARRIER, loc);
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
        set_barrier(st);
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
                if (x->th && conflict(S, x, y, true))
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

static int count_barriers(const IrStmt *s) {
    if (!s) return 0;
    switch (s->kind) {
    case IR_S_BARRIER: return 1;
    case IR_S_SEQ: {
        int n = 0;
        for (int i = 0; i < s->seq.n; i++) n += count_barriers(s->seq.v[i]);
        return n;
    }
    case IR_S_FOR: return count_barriers(s->for_.body);
    case IR_S_IF: return count_barriers(s->if_.then) + count_barriers(s->if_.else_);
    case IR_S_WHILE: return count_barriers(s->while_.body);
    default: return 0;
    }
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
static IrStmt *uniform_loop(Sync *S, IrStmt *body, const IrVar *v, IrExpr *cond, const IrStmt *s,
                            AccSet *st, int64_t lo, int64_t hi, bool may_skip) {
    AccSet entry = set_copy(S, st), back = {0};
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
                IrVar *any = fresh(S, v->name, v->dt, lo, hi);
                for (int i = 0; i < exit.n; i++) exit.v[i] = renamed(S, exit.v[i], v, ir_var_ref(S->a, any), any);
            }
            *st = exit;
            return b;
        }
        prev = nbar;
        /* the end of an iteration, seen from the next one: v -> v - 1 - w */
        AccSet nback = {0};
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
        for (int i = 0; i < head.n; i++) {
            const Acc *x = head.v[i];
            if (!v) set_add(S, &nback, (Acc *)x);
            else if (own && !x->inflight) set_add(S, &nback, renamed(S, x, v, last_it, NULL));
            else set_add(S, &nback, renamed(S, x, v, prev_it, w));
        }
        back = nback;
    }
    ts_fail_at(S->cx->diag, TS_ERR_INTERNAL, s->loc, "insert_sync: no fixed point for a loop of kernel %s",
               S->k->name);
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
    case IR_S_BARRIER: return; /* placed again below where needed */
    case IR_S_FOR: {
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
            collect(S, s->for_.body, &xs);
            S->thread = NULL;
            S->subs.n--;
            step(S, st, &xs, out, s, true);
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
        if (was.lo != now.lo || was.hi != now.hi) S->epoch++;
        IrStmt *c = copy_stmt(S, s);
        AccSet st0 = set_copy(S, st);
        int nbar = S->nbar;
        c->for_.body = uniform_loop(S, s->for_.body, s->for_.var, NULL, s, st, lo.lo, hi, may_skip);
        if (starts_with_barrier(c->for_.body) && st0.n) {
            /* is the first barrier only for what came before the loop?
             * then one before the loop does, once */
            AccSet st1 = set_copy(S, &st0);
            set_barrier(&st1);
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
                set_barrier(st);
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
            if (st->v[i]->inflight && st->v[i]->age < (1 << 20)) {
                Acc *y = TS_NEW(S->a, Acc);
                *y = *st->v[i];
                y->age++;
                st->v[i] = y;
            }
        push(S, out, s);
        return;
    case IR_S_ASYNC_WAIT: /* cp.async.wait_group N: all groups but the N newest land */
        for (int i = 0; i < st->n; i++)
            if (st->v[i]->inflight && st->v[i]->age >= s->async_wait.pending) {
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
        leaf(S, s, st, out); /* a collective: any thread of the block */
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

/* Drop a barrier that follows another with nothing in between. */
static IrStmt *tidy_post(IrMutator *m, IrStmt *s) {
    (void)m;
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

void ts_pass_insert_sync(TsPassCtx *cx) {
    Sync S = {.cx = cx, .k = cx->k, .a = cx->arena, .nt = ir_kernel_nthreads(cx->k)};
    ir_arith_init(&S.ar, cx->arena, cx->k);
    IrVisitor wv = {.ctx = &S, .access = note_written};
    ir_visit_stmt(&wv, cx->k->body);
    AccSet st = {0};
    IrStmt *body = uniform(&S, cx->k->body, &st);
    IrMutator m = {.arena = cx->arena, .post_stmt = tidy_post};
    cx->k->body = ir_mutate_stmt(&m, body);
}
