/*
 * layout_inference.c — fragments in registers (CUDA): give every fragment
 * buffer a layout (element -> thread, local index) and rewrite the code
 * that touches fragments into thread-level IR that follows those layouts.
 *
 * It runs after lower_tile_ops, on IR where T.copy/T.fill/T.clear and the
 * user's T.Parallel loops are perfectly nested parallel loop chains
 * ("nests"), tensor-core gemms are kept tile ops (TS_OP_INST_MMA_SYNC) and
 * T.reduce and T.cumsum on fragments are kept too (TS_OP_INST_FRAGMENT;
 * lowered by their own lower_layout, op/reduce.c and op/cumsum.c: this
 * pass infers and rewrites nests, the ops lower themselves).  Three steps:
 *
 * 1. Inference, by the units that offer an infer_layout (op/op.h): the
 *    kept tile ops (op/gemm.c, reduce.c, cumsum.c) and the T.Parallel
 *    nests (the pseudo-op of op/parallel.c), driven by a worklist over
 *    levels (below, infer_all).  Layouts fixed by an instruction come
 *    first (STRICT): the accumulator of an mma.sync gemm gets MMA_C for
 *    the gemm's warp grid (T.GemmWarpPolicy), a register A operand
 *    (FlashAttention's P) the MMA_C of its own shape with the same warp
 *    rows.  They propagate (COMMON) through nests (a fragment indexed by
 *    the nest's variables in order takes the layout of another indexed
 *    so; one indexed by the row variable alone takes the row projection
 *    MMA_ROWS) and through reductions along rows (the destination takes
 *    MMA_ROWS).  Fragments still without a layout that drive a nest get
 *    warp rows or CYCLIC (FREE).  Two different layouts for one buffer
 *    stop inference, naming the buffer and both uses.
 * 2. Lowering.  Each nest that touches fragments becomes
 *        for t in thread_range(0, threads):
 *            for d0 in unroll(...): ... for dk in unroll(...):
 *                body[nest vars := driver.inverse(t, d)]
 *    driven by one fragment indexed by the nest's variables; every other
 *    fragment access becomes a register index that is an affine function
 *    of the digits, found by enumerating every (thread, digits) pair and
 *    checked to hold for all of them, so each register index is a
 *    constant once the loops are unrolled (no local-memory arrays).  A
 *    fragment becomes a LOCAL buffer of local_size elements that keeps
 *    the layout (the code generator's mma functions read it).  Row
 *    reductions (op/reduce.c) become per-thread partial reductions plus warp shuffles
 *    over the lanes that share a row, and where a row spans several warps
 *    (an mma warp grid with columns of warps, or a warp-rows tile with
 *    fewer rows than warps: RMSNorm's one row per block) a shared scratch
 *    of one float per row and warp with one barrier; row prefix sums
 *    (op/cumsum.c) shuffle along warp rows.  Warp-rows
 *    fragments take 16-byte vectors per thread where no nest over
 *    fragments touches shared memory, and their copies to and from global
 *    memory become vector copies (vector_copy; an mma accumulator's column
 *    pairs too, the GEMM epilogue; a cast between float32 and float16 /
 *    bfloat16 becomes a converting copy); serial loops that start by
 *    loading a register tile prefetch the next tiles (prefetch).  The
 *    mma.sync gemm lowers itself too (op/gemm.c): its fragment operands
 *    become the register buffers, and its shared A/B tiles get an XOR
 *    swizzle (16-byte chunks permuted by row, so that ldmatrix reads them
 *    without bank conflicts) once the whole kernel succeeds.
 *    A nest storing select(a >= b, x, y) into a fragment, with a - b affine
 *    in the nest's variables plus block-uniform terms (a causal or padding
 *    mask), is lowered three times under a block-uniform branch: all
 *    elements x, all y, or per element only where the tile is cut
 *    (split_select).
 *    Two uses that need different layouts for one fragment, where a nest
 *    reaches it at elements the nest's threads do not hold (another warp
 *    grid's accumulator, a transposed read, a copy between grids): the
 *    nest goes through a shared copy of the fragment, X_relayout (the
 *    registers stored there by X's layout, a barrier, the nest on the
 *    copy, and back into the registers if the nest writes X), and X keeps
 *    the layout its other uses agree on (relayout_copy).  A replicated
 *    fragment is copied there by the first replica of each element (a
 *    test of t % c that insert_sync reads); a nest that reaches fragments
 *    but is indexed by none of them (acc_s[i, j] = acc[i + 16 s, j]) stays
 *    a plain T.Parallel loop over the shared copies of all of them
 *    (relay_all).  A nest run by a replicated layout that writes memory
 *    (a row sum copied out) stores from the first replica only.
 *    Fragments no use fixes (written transposed, read by a gemm lowered to
 *    loops) take the free layout of a loop over their own shape (step 4
 *    of infer_all): warp rows, else cyclic, replicated when smaller than
 *    the block; the loops that disagree go through shared copies.
 *    Register budget: a fragment over REG_BUDGET 32-bit registers per
 *    thread (16-bit elements two to a register) stays in shared memory (a warning names it) and inference runs again
 *    without it; the others keep their registers.  Where the block's shared
 *    buffers and such fragments would exceed the block's shared memory,
 *    they stay in registers instead and ptxas spills them (keep_spilled).
 * 3. All or nothing.  Anything the first two steps cannot do (a fragment
 *    read outside a nest, a reduction over a layout other than mma or warp
 *    rows, a replicated driver writing memory it reads, two instructions
 *    fixing different layouts for one fragment, a re-layout of a partial
 *    fragment) leaves the kernel as it was: fragments in shared
 *    memory, kept reductions lowered generically.  The reason is recorded
 *    in IrKernel.layout_note (printed with the IR); a conflict's names the
 *    fragment, both layouts and both uses with their positions.
 *
 * Barriers: the thread-level code made here is placed between barriers by
 * insert_sync, which drops every barrier of uniform code and places them
 * again where threads share data; the ones put here (a reduction's cross-warp
 * step, re-layouts) say what is needed and are placed again like the others.
 */
#include "ir/arith.h"
#include "ir/layout.h"
#include "ir/walk.h"
#include "op/op.h"
#include "op/op_util.h"
#include "op/parallel.h"
#include "pass/pass.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXFRAG = TS_LAYOUT_MAXFRAG, MAXNEST = TS_NEST_MAX, MAXMARK = 64 /* loops whose ranges lower_all binds */ };

typedef struct Li {
    TsLayoutCtx lx;           /* the fragments and their layouts (op/op.h), what the units read and set */
    TsPassCtx *cx;
    IrKernel *k;
    TsArena *a;
    int nt;                   /* threads per block (lx.nt too) */
    IrBuffer *reg[MAXFRAG];   /* the fragments' register buffers (step 2) */
    int loop_depth;           /* serial loops around the statement being lowered (step 2) */
    TsLayoutFinish fin[TS_LAYOUT_MAXFINISH]; /* what the ops' lower_layout asked for if the kernel succeeds
                                                (op/op.h: the gemm's operand swizzle) */
    int nfin;
    IrVar *t;                 /* the thread-range variable of the nest being lowered */
    IrArith ar;               /* lowering: ranges of the loops around the statement (split_select) */
    IrBuffer *over[MAXFRAG];  /* fragments over the register budget, left in shared memory */
    bool spill;               /* fragments over the budget stay in registers (keep_spilled) */
    int nover;
    bool roles;               /* the kernel has T.ws roles: the fragments are laid out one role at a
                                 time, over the role's threads [lx.lo, lx.lo + lx.nt) */
    bool in_role;             /* lowering: inside a role of the threads being laid out */
    int mark[MAXMARK];        /* lowering: ir_arith marks of the loops being lowered (lower_all) */
    int nmark;                /* ... how many loops deep (those past the array are not bound) */
} Li;

/* Is s a T.ws role of the threads being laid out? */
static bool our_role(const Li *li, const IrStmt *s) {
    return s->kind == IR_S_ROLE && s->role.lo == li->lx.lo && s->role.n == li->lx.nt;
}

/* ---- inference: a worklist over levels -------------------------------------------

 * The units of inference are the kept tile ops that offer an infer_layout
 * (op/op.h: TS_TILEOP_LAYOUTS) and the T.Parallel nests (op/parallel.c),
 * in program order, each with the fragments it touches.  As TileLang's
 * LayoutInference does (src/transform/layout_inference.cc: a strict pass,
 * then a queue at the common level, then the free level), but with our own
 * units and rules:
 *
 *   1. every unit at STRICT, in order: the instructions' layouts;
 *   2. every unit at COMMON from a FIFO worklist that starts with all of
 *      them; a unit that gives a fragment its layout puts every other unit
 *      touching that fragment back on the list, until nothing changes;
 *   3. every unit at FREE, the deepest nests first (then in program
 *      order), each choice followed by step 2's worklist from the units
 *      touching the fragments it decided, so that a choice reaches
 *      everything connected to it before the next nest chooses on its own.
 *
 * A conflict (two different layouts for one fragment) stops inference
 * (ts_layout_set names the fragment and both uses).  Tile ops inside a
 * T.Parallel loop are not units (a fragment there stops inference). */

typedef TS_VEC(int) IntVec;

typedef struct Unit {
    IrStmt *s;          /* the tile op, or the outermost loop of a nest */
    TsInferLayoutFn fn; /* its infer_layout */
    IntVec frags;       /* the fragments it touches (indices into lx.frag) */
    int depth;          /* a nest: its depth; a tile op: 0 */
} Unit;

typedef struct Units {
    TS_VEC(Unit) u;         /* in program order */
    IntVec users[MAXFRAG];  /* per fragment: the units touching it */
} Units;

static void add_frag(Li *li, Unit *u, int f) {
    if (f < 0) return;
    for (int i = 0; i < u->frags.n; i++)
        if (u->frags.v[i] == f) return;
    ts_vec_push(li->a, u->frags, f);
}

typedef struct Collect {
    Li *li;
    Units *us;
} Collect;

/* The units of the statements below, in program order, through the shared
 * walker (ir/walk.h): serial loops, branches and the roles being laid out
 * are entered, a T.Parallel nest or a tile op is a unit (not entered). */
static bool collect_stmt(IrVisitor *v, const IrStmt *cs) {
    Collect *c = v->ctx;
    Li *li = c->li;
    Units *us = c->us;
    IrStmt *s = (IrStmt *)cs;
    Unit u;
    memset(&u, 0, sizeof u);
    switch (s->kind) {
    case IR_S_SEQ:
    case IR_S_IF:
    case IR_S_WHILE: return true;
    case IR_S_ROLE: return our_role(li, s);
    case IR_S_FOR:
        if (s->for_.kind != IR_FOR_PARALLEL) return true;
        u.s = s;
        u.fn = ts_parallel_infer_layout;
        TsNest ns;
        if (ts_nest_get(s, &ns)) {
            u.depth = ns.n;
            TsFragAccVec acc = {0};
            int wm = 0;
            ts_nest_frag_stmt(&li->lx, ns.body, &acc, &wm);
            for (int i = 0; i < acc.n; i++) add_frag(li, &u, ts_layout_frag(&li->lx, acc.v[i].buf));
        }
        break;
    case IR_S_TILEOP:
        u.s = s;
        u.fn = ts_op_infer_layout_fn(s->op->kind);
        if (!u.fn) return false; /* an op without infer_layout fixes nothing */
        for (int r = 0; r < s->op->nr; r++) add_frag(li, &u, ts_layout_frag(&li->lx, s->op->r[r].buf));
        break;
    default: return false;
    }
    ts_vec_push(li->a, us->u, u);
    for (int i = 0; i < u.frags.n; i++) ts_vec_push(li->a, us->users[u.frags.v[i]], us->u.n - 1);
    return false;
}

static bool no_expr(IrVisitor *v, const IrExpr *e) {
    (void)v, (void)e;
    return false;
}

static void collect(Li *li, Units *us, IrStmt *s) {
    Collect c = {li, us};
    IrVisitor v;
    memset(&v, 0, sizeof v);
    v.ctx = &c;
    v.pre_stmt = collect_stmt;
    v.pre_expr = no_expr;
    ir_visit_stmt(&v, s);
}

/* Run unit i at a level; the fragments it gave layouts to put their other
 * users on the worklist q (FIFO ring of capacity n, inq: on it). */
static void run_unit(Li *li, Units *us, int i, TsLayoutLevel level, int *q, int *qh, int *qn, bool *inq) {
    li->lx.cur = us->u.v[i].s;
    li->lx.nnew = 0;
    us->u.v[i].fn(&li->lx, us->u.v[i].s, level);
    int n = us->u.n;
    for (int k = 0; k < li->lx.nnew; k++) {
        const IntVec *users = &us->users[li->lx.newf[k]];
        for (int j = 0; j < users->n; j++) {
            int w = users->v[j];
            if (w == i || inq[w]) continue;
            inq[w] = true;
            q[(*qh + (*qn)++) % n] = w;
        }
    }
}

static void drain(Li *li, Units *us, int *q, int *qh, int *qn, bool *inq) {
    int n = us->u.n;
    while (*qn && !li->lx.why) {
        int i = q[*qh];
        *qh = (*qh + 1) % n;
        (*qn)--;
        inq[i] = false;
        run_unit(li, us, i, TS_LAYOUT_COMMON, q, qh, qn, inq);
    }
}

static void infer_all(Li *li, IrStmt *body) {
    Units us;
    memset(&us, 0, sizeof us);
    collect(li, &us, body);
    int n = us.u.n;
    if (!n || li->lx.why) return;
    int *q = TS_NEWN(li->a, int, n);
    bool *inq = TS_NEWN(li->a, bool, n);
    int qh = 0, qn = 0;
    /* 1. strict: nothing is queued (every unit is on the list for step 2) */
    for (int i = 0; i < n; i++) {
        q[i] = i;
        inq[i] = true;
    }
    qn = n;
    for (int i = 0; i < n && !li->lx.why; i++) {
        li->lx.cur = us.u.v[i].s;
        us.u.v[i].fn(&li->lx, us.u.v[i].s, TS_LAYOUT_STRICT);
    }
    /* 2. common */
    drain(li, &us, q, &qh, &qn, inq);
    /* 3. free, each choice propagated before the next; the deepest nests
     * choose first: a 2-deep nest's choice (warp rows) projects onto the
     * row fragments it meets, while a 1-deep nest's (cyclic) extends to no
     * 2-deep one, so a row buffer initialized before the tile it reduces
     * (T.fill(m, -inf); ...; T.reduce_max(x, m, clear=False)) takes the
     * tile's row projection instead of a cyclic layout that conflicts */
    for (int depth = TS_NEST_MAX; depth >= 0; depth--)
        for (int i = 0; i < n && !li->lx.why; i++) {
            if (us.u.v[i].depth != depth) continue;
            run_unit(li, &us, i, TS_LAYOUT_FREE, q, &qh, &qn, inq);
            drain(li, &us, q, &qh, &qn, inq);
        }
    /* 4. fragments no unit chose for (no loop indexes them by its variables
     * in order: written transposed, Q_t[k, s] = Q[s, k], and read by a gemm
     * lowered to loops): the free choice of a loop over their own shape
     * (warp rows, else cyclic, replicated when smaller than the block), then
     * step 2 from their users; the loops that reach them at elements their
     * threads do not hold go through shared copies (lower_nest) */
    for (int f = 0; f < li->lx.nfrag && !li->lx.why; f++) {
        if (li->lx.lay[f]) continue;
        const IrBuffer *b = li->lx.frag[f];
        int64_t shape[4];
        bool ok = b->ndim >= 1 && b->ndim <= 4;
        for (int d = 0; ok && d < b->ndim; d++) ok = ir_is_const_int(b->shape[d], &shape[d]) && shape[d] > 0;
        if (!ok) continue;
        IrLayout *l = NULL;
        for (int v = li->lx.vec; b->ndim == 2 && v >= 1 && !l; v /= 2)
            l = ir_layout_warp_rows_vec(li->k, shape[0], shape[1], li->nt / 32, v);
        if (!l) l = ir_layout_cyclic(li->k, b->ndim, shape, li->nt);
        if (!l) continue; /* (no use of it fixes its layout: the kernel keeps shared fragments) */
        li->lx.cur = NULL;
        li->lx.nnew = 0;
        ts_layout_set(&li->lx, f, l, "its loops' threads (no use fixes it)");
        for (int j = 0; j < us.users[f].n; j++) {
            int w = us.users[f].v[j];
            if (inq[w]) continue;
            inq[w] = true;
            q[(qh + qn++) % n] = w;
        }
        drain(li, &us, q, &qh, &qn, inq);
    }
}

/* ---- lowering ------------------------------------------------------------------- */

/* How one fragment access inside a nest maps to registers: local index =
 * base + sum coef[k] * digit k of the driver. */
typedef struct Fit {
    int64_t base, coef[4];
} Fit;

enum { MEMO = 16 };

typedef struct Lower {
    struct {
        IrBuffer *buf;
        IrExpr *const *idx;
        int nidx;
        Fit fit;
    } memo[MEMO];            /* fits found in this nest */
    int nmemo;
    Li *li;
    const TsNest *ns;
    const IrLayout *drv;   /* the driving layout */
    IrVar *dv[4];          /* digit loop variables */
    IrExpr *val[MAXNEST];  /* nest var -> its value as an expression of (t, digits) */
    TsLoc at;              /* the nest (for messages) */
    IrBuffer *relay[MAXFRAG]; /* per fragment: its shared copy for this nest (re-layout), or NULL */
    bool relay_w[MAXFRAG];    /* ... which the nest writes */
    bool relay_new[MAXFRAG];  /* ... which the nest overwrites whole without reading it (no copy in) */
    IrExpr *first;         /* a replicated driver: true on the thread holding the first replica of the
                              iteration's element (the one that writes memory), else NULL */
} Lower;

/* The register index (in the fragment's layout) of access buf[idx] on
 * thread t at the driver's digits; -1 when that thread does not hold it. */
static int64_t point_loc(Lower *lw, const IrLayout *G, IrExpr *const *idx, int nidx, int64_t t, const int64_t *digits) {
    int64_t vals[MAXNEST], eidx[4], gidx[4];
    if (!ir_layout_inverse(lw->drv, t, digits, eidx)) return -1;
    for (int d = 0; d < lw->ns->n; d++) vals[d] = eidx[d];
    for (int d = 0; d < nidx; d++) {
        if (!ir_eval_int(idx[d], lw->ns->v, vals, lw->ns->n, &gidx[d])) return -1;
        if (gidx[d] < 0 || gidx[d] >= G->shape[d]) return -1;
    }
    return ir_layout_local_at(G, gidx, t);
}

/* The register index of a fragment access for every (thread, digits) of
 * the driver, checked affine in the digits and the same for all threads. */
static bool fit_access(Lower *lw, IrBuffer *buf, IrExpr *const *idx, int nidx, Fit *fit) {
    Li *li = lw->li;
    const IrLayout *D = lw->drv, *G = li->lx.lay[ts_layout_frag(&li->lx, buf)];
    if (!G || nidx != G->ndim) return false;
    int nl = D->nlocal;
    /* the driver's own layout indexed by the nest's variables: the identity */
    bool same = ir_layout_equal(G, D) && nidx == lw->ns->n;
    for (int d = 0; d < nidx && same; d++) same = idx[d]->kind == IR_E_VAR && idx[d]->var == lw->ns->v[d];
    if (same) {
        int64_t stride = 1;
        fit->base = 0;
        for (int q = 3; q >= 0; q--) fit->coef[q] = 0;
        for (int q = nl - 1; q >= 0; q--) {
            fit->coef[q] = D->local_shape[q] > 1 ? stride : 0; /* a digit of extent 1 is always 0 */
            stride *= D->local_shape[q];
        }
        return true;
    }
    /* an access with the same indices into a buffer of an equal layout was fitted already */
    for (int i = 0; i < lw->nmemo; i++) {
        const IrLayout *M = li->lx.lay[ts_layout_frag(&li->lx, lw->memo[i].buf)];
        bool eq = ir_layout_equal(M, G) && lw->memo[i].nidx == nidx;
        for (int d = 0; d < nidx && eq; d++) eq = ir_expr_equal(lw->memo[i].idx[d], idx[d]);
        if (eq) {
            *fit = lw->memo[i].fit;
            return true;
        }
    }
    int64_t digits[4] = {0};
    fit->base = point_loc(lw, G, idx, nidx, 0, digits);
    if (fit->base < 0) return false;
    for (int q = 0; q < 4; q++) fit->coef[q] = 0;
    for (int q = 0; q < nl; q++) {
        if (D->local_shape[q] < 2) continue;
        digits[q] = 1;
        int64_t l = point_loc(lw, G, idx, nidx, 0, digits);
        digits[q] = 0;
        if (l < 0) return false;
        fit->coef[q] = l - fit->base;
    }
    for (int64_t t = 0; t < li->nt; t++)
        for (int64_t f = 0; f < D->local_size; f++) {
            int64_t rem = f, want = fit->base;
            for (int q = nl - 1; q >= 0; q--) {
                digits[q] = rem % D->local_shape[q];
                rem /= D->local_shape[q];
                want += fit->coef[q] * digits[q];
            }
            if (point_loc(lw, G, idx, nidx, t, digits) != want) return false;
        }
    if (lw->nmemo < MEMO) {
        lw->memo[lw->nmemo].buf = buf;
        lw->memo[lw->nmemo].idx = idx;
        lw->memo[lw->nmemo].nidx = nidx;
        lw->memo[lw->nmemo++].fit = *fit;
    }
    return true;
}

static IrExpr *fit_expr(Lower *lw, const Fit *f) {
    TsArena *a = lw->li->a;
    IrExpr *e = ir_i32(a, f->base);
    for (int q = 0; q < lw->drv->nlocal; q++)
        if (f->coef[q]) e = ir_bin(a, IR_ADD, e, ir_bin(a, IR_MUL, ir_var_ref(a, lw->dv[q]), ir_i32(a, f->coef[q])));
    return e;
}

/* The nest reaches fragment buf at elements the threads that run it do not
 * hold, and no shared copy can stand in: stop, naming the two uses. */
static void reach_conflict(Lower *lw, const IrBuffer *buf, const char *why) {
    TsLayoutCtx *lx = &lw->li->lx;
    TsBuf b = {0};
    ts_buf_puts(&b, "the T.Parallel loop");
    ts_layout_put_at(&b, lw->at);
    ts_buf_puts(&b, ", run by the layout ");
    ir_layout_describe(&b, lw->drv);
    ts_buf_printf(&b, ", reaches fragment %s at elements its threads do not hold: %s has ", buf->name, buf->name);
    ts_layout_put_use(&b, lx, ts_layout_frag(lx, buf));
    ts_buf_printf(&b, " (%s)", why);
    ts_layout_conflict(lx, lw->at, "%s", b.oom ? "out of memory" : ts_buf_str(&b));
    ts_buf_free(&b);
}

/* The register index of fragment access buf[idx] (NULL: cannot). */
static IrExpr *reg_index(Lower *lw, IrBuffer *buf, IrExpr *const *idx, int nidx) {
    Fit f;
    if (!fit_access(lw, buf, idx, nidx, &f)) {
        reach_conflict(lw, buf, "an index the loop's threads do not hold");
        return NULL;
    }
    return fit_expr(lw, &f);
}

/* The nest's body rewritten for one thread of the driver, through the shared
 * rewriter (ir/walk.h) making fresh nodes (a nest split per tile is lowered
 * three times): the nest's variables become their values in (t, digits),
 * fragment loads and stores their registers (or their shared copy where re-laid
 * out), inner T.Parallel loops serial loops of the thread. */
static IrExpr *low_pre_expr(IrMutator *m, IrExpr *e) {
    Lower *lw = m->ctx;
    Li *li = lw->li;
    TsArena *a = li->a;
    switch (e->kind) {
    case IR_E_VAR:
        for (int d = 0; d < lw->ns->n; d++)
            if (e->var == lw->ns->v[d]) return lw->val[d];
        return e;
    case IR_E_LOAD: {
        int f = ts_layout_frag(&li->lx, e->load.buf);
        if (f < 0) return NULL; /* (its indices are lowered) */
        IrExpr *r;
        if (lw->relay[f]) { /* re-laid out: the shared copy */
            r = ir_load(a, lw->relay[f], ir_mutate_exprs(m, e->load.idx, e->load.nidx), e->load.nidx);
        } else {
            IrExpr *ix = reg_index(lw, e->load.buf, e->load.idx, e->load.nidx);
            if (!ix) return e;
            r = ir_load(a, li->reg[f], &ix, 1);
        }
        r->loc = e->loc;
        r->dt = e->dt; /* (a load of the stored bits stays one: load.bits) */
        r->load.bits = e->load.bits;
        return r;
    }
    default: return NULL;
    }
}

static IrStmt *low_pre_stmt(IrMutator *m, IrStmt *s) {
    Lower *lw = m->ctx;
    Li *li = lw->li;
    TsArena *a = li->a;
    if (s->kind != IR_S_STORE && s->kind != IR_S_ATOMIC_ADD) return NULL;
    int f = ts_layout_frag(&li->lx, s->store.buf);
    bool mem = s->store.buf->scope != IR_SCOPE_LOCAL && s->store.buf->scope != IR_SCOPE_VAR;
    if (f < 0 && !(lw->first && mem)) return NULL;
    IrStmt *r = ir_stmt(a, s->kind, s->loc);
    *r = *s;
    r->store.value = ir_mutate_expr(m, s->store.value);
    if (f < 0) { /* memory, from a replicated driver: one replica stores */
        r->store.idx = ir_mutate_exprs(m, s->store.idx, s->store.nidx);
        return op_if(a, s->loc, lw->first, r, NULL);
    }
    if (lw->relay[f]) { /* re-laid out: the shared copy */
        r->store.buf = lw->relay[f];
        r->store.idx = ir_mutate_exprs(m, s->store.idx, s->store.nidx);
        return r;
    }
    IrExpr *ix = reg_index(lw, s->store.buf, s->store.idx, s->store.nidx);
    if (!ix) return r;
    r->store.buf = li->reg[f];
    r->store.idx = TS_NEWN(a, IrExpr *, 1);
    r->store.idx[0] = ix;
    r->store.nidx = 1;
    return r;
}

static IrStmt *low_post_stmt(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PARALLEL) s->for_.kind = IR_FOR_SERIAL; /* inner parallel loops: per thread */
    return s;
}

static IrMutator low_mutator(Lower *lw) {
    IrMutator m = {.arena = lw->li->a, .ctx = lw, .pre_expr = low_pre_expr, .pre_stmt = low_pre_stmt,
                   .post_stmt = low_post_stmt, .copy = true};
    return m;
}

static IrExpr *low_expr(Lower *lw, const IrExpr *e) {
    IrMutator m = low_mutator(lw);
    return ir_mutate_expr(&m, (IrExpr *)e);
}

static IrExpr **low_list(Lower *lw, IrExpr *const *v, int n) {
    IrMutator m = low_mutator(lw);
    return ir_mutate_exprs(&m, (IrExpr **)v, n);
}

static IrStmt *low_stmt(Lower *lw, const IrStmt *s) {
    IrMutator m = low_mutator(lw);
    return ir_mutate_stmt(&m, (IrStmt *)s);
}

/* Wrap body in `for t in thread_range(0, nt)` and the digit loops. */
static IrStmt *thread_loops(Li *li, IrVar *t, IrVar *const *dv, const int64_t *ext, int n, IrStmt *body, TsLoc loc) {
    return ts_layout_thread_loops(&li->lx, t, dv, ext, n, body, loc);
}

static IrStmt *unwrap1(IrStmt *s) {
    while (s && s->kind == IR_S_SEQ && s->seq.n == 1) s = s->seq.v[0];
    return s;
}

/* Is e the constant zero? */
static bool is_zero(const IrExpr *e) {
    int64_t c;
    return (e->kind == IR_E_FLOAT && e->fval == 0.0) || (ir_is_const_int(e, &c) && c == 0);
}

/* e is j, or x + j / j + x with x free of j: *off = x (NULL for j). */
static bool plus_j(const IrExpr *e, const IrVar *jv, const IrExpr **off) {
    *off = NULL;
    if (e->kind == IR_E_VAR && e->var == jv) return true;
    if (e->kind != IR_E_BIN || e->bin.op != IR_ADD) return false;
    const IrExpr *x = e->bin.a, *y = e->bin.b;
    if (x->kind == IR_E_VAR && x->var == jv && !ir_expr_uses_var(y, jv)) return *off = y, true;
    if (y->kind == IR_E_VAR && y->var == jv && !ir_expr_uses_var(x, jv)) return *off = x, true;
    return false;
}

/* A guard that holds for all v columns of a vector when it holds for the
 * first (j0, a multiple of v): its conjuncts free of j, or of the form
 * x + j < b with x and b multiples of v (then x + j0 < b implies
 * x + j0 + v - 1 < b). */
static bool vector_guard(IrArith *ar, const IrExpr *c, const IrVar *jv, int v) {
    if (!ir_expr_uses_var(c, jv)) return true;
    if (c->kind == IR_E_BIN && c->bin.op == IR_AND)
        return vector_guard(ar, c->bin.a, jv, v) && vector_guard(ar, c->bin.b, jv, v);
    const IrExpr *off;
    if (c->kind != IR_E_BIN || c->bin.op != IR_LT || ir_expr_uses_var(c->bin.b, jv) || !plus_j(c->bin.a, jv, &off))
        return false;
    return (!off || ir_arith_divisible(ar, off, v)) && ir_arith_divisible(ar, c->bin.b, v);
}

/* A copy nest between the driving fragment and a global tensor, on a
 * warp-rows layout with v-element vectors (the driver's last digit) or an
 * mma accumulator (column pairs, v = 2), as one IR_S_VCOPY per vector (a
 * converting one where the copy casts float32 <-> float16/bfloat16, in
 * parts of at most 16 bytes):
 *
 *     F[i, j] = G[.., x + j]            -> vcopy<v>(F_reg[..], G[.., x + j0])
 *     if c: F[i, j] = G[..] else: F[i, j] = 0  -> the same with pred c
 *     [if c:] G[.., x + j] = F[i, j]    -> vcopy<v>(G[..], F_reg[..], pred c)
 *
 * (j0: the vector's first column, digit v := 0).  Only where the guard c
 * and every index of G but the last are free of j and the last is j plus
 * something free of j: the vector is then v consecutive elements of G,
 * wholly inside or wholly outside the guard, as the VCOPY's predicate
 * says (false: nothing read, registers zeroed, global left alone).  The
 * global operand's contiguity and alignment are run-time facts the code
 * generator tests (moving element by element where they fail).  NULL when
 * the nest is not such a copy: it is then lowered element by element. */
static IrStmt *vector_copy(Lower *lw) {
    Li *li = lw->li;
    TsArena *a = li->a;
    const TsNest *ns = lw->ns;
    const IrLayout *D = lw->drv;
    /* the vector: the warp-rows layout's last digit (v columns), or an mma
     * accumulator's column pair (digit 3: columns 2c and 2c + 1, registers
     * next to each other; the GEMM epilogue's pairs) */
    int q, v;
    if (D->kind == IR_LAYOUT_WARP_ROWS && D->p[3] >= 2 && D->nlocal == 3) q = 2, v = (int)D->p[3];
    else if (D->kind == IR_LAYOUT_MMA_C && D->nlocal == 4 && D->local_shape[3] == 2) q = 3, v = 2;
    else return NULL;
    if (ns->n != 2) return NULL;
    IrVar *jv = ns->v[1];
    IrArith ar;
    ir_arith_init(&ar, a, li->k);
    IrStmt *b = unwrap1(ns->body), *st = b;
    IrExpr *cond = NULL;
    if (b && b->kind == IR_S_IF) {
        cond = b->if_.cond;
        st = unwrap1(b->if_.then);
        if (!vector_guard(&ar, cond, jv, v)) return NULL;
    }
    if (!st || st->kind != IR_S_STORE) return NULL;
    IrBuffer *F, *G;
    IrExpr *const *gidx, *const *fidx; /* the global side's and the fragment's indices */
    int ngidx;
    bool load;
    if (ts_layout_frag(&li->lx, st->store.buf) >= 0) {
        const IrExpr *val = st->store.value;
        if (val->kind == IR_E_CAST && val->dt == st->store.buf->dt) val = val->un.a;
        if (val->kind != IR_E_LOAD || val->load.buf->scope != IR_SCOPE_GLOBAL || val->load.bits || st->store.bits)
            return NULL;
        F = st->store.buf, G = val->load.buf, gidx = val->load.idx, ngidx = val->load.nidx, load = true;
        fidx = st->store.idx;
        TsFragAcc x = {F, st->store.idx, st->store.nidx};
        if (!ts_nest_full_access(&x, ns)) return NULL;
        if (cond) { /* the else branch must zero the same element */
            IrStmt *e = unwrap1(b->if_.else_);
            if (!e || e->kind != IR_S_STORE || e->store.buf != F || !is_zero(e->store.value)) return NULL;
            TsFragAcc y = {F, e->store.idx, e->store.nidx};
            if (!ts_nest_full_access(&y, ns)) return NULL;
        }
    } else {
        const IrExpr *val = st->store.value;
        if (val->kind == IR_E_CAST && val->dt == st->store.buf->dt) val = val->un.a;
        if (st->kind != IR_S_STORE || st->store.buf->scope != IR_SCOPE_GLOBAL || val->kind != IR_E_LOAD ||
            val->load.bits || st->store.bits || ts_layout_frag(&li->lx, val->load.buf) < 0)
            return NULL;
        if (cond && b->if_.else_) return NULL;
        F = val->load.buf, G = st->store.buf, gidx = st->store.idx, ngidx = st->store.nidx, load = false;
        fidx = val->load.idx;
        TsFragAcc x = {F, val->load.idx, val->load.nidx};
        if (!ts_nest_full_access(&x, ns)) return NULL;
    }
    int f = ts_layout_frag(&li->lx, F);
    /* a casting copy (float32 <-> float16/bfloat16) converts as it moves */
    if (F->dt != G->dt && (!li->cx->caps->vec_cast || !ir_vcopy_dtypes_ok(load ? F->dt : G->dt, load ? G->dt : F->dt)))
        return NULL;
    if (!ir_layout_equal(li->lx.lay[f], D) || ngidx != G->ndim || ngidx < 1) return NULL;
    for (int d = 0; d < ngidx - 1; d++)
        if (ir_expr_uses_var(gidx[d], jv)) return NULL;
    const IrExpr *off; /* last index = off + j */
    if (!plus_j(gidx[ngidx - 1], jv, &off)) return NULL;
    /* Aligned without a run-time test: G a parameter without declared
     * strides, taken as compact row-major and aligned to the vector (the
     * launch contract of IrBuffer.contiguous, lower_copy_cuda.c), its last
     * extent a multiple of v (then every row starts on a vector) and the
     * column offset too (the vector's first column j0 is one). */
    int es = ts_dtype_bits(G->dt) / 8;
    int64_t ext;
    bool aligned = G->param >= 0 && !G->strides && ir_is_const_int(G->shape[ngidx - 1], &ext) && ext % v == 0 &&
                   !li->k->may_block && (!off || ir_arith_divisible(&ar, off, v));
    /* the vector's first element: the vector digit (j % v) at 0 */
    IrVar *from[1] = {lw->dv[q]};
    IrExpr *to[1] = {ir_i32(a, 0)};
    IrExpr **gi = low_list(lw, gidx, ngidx);
    for (int d = 0; d < ngidx; d++) gi[d] = ir_subst(a, gi[d], from, to, 1);
    Fit fit;
    if (!fit_access(lw, F, fidx, 2, &fit)) return NULL;
    if (fit.coef[q] != 1) return NULL; /* (the vector's registers consecutive) */
    fit.coef[q] = 0;
    IrExpr **ri = TS_NEWN(a, IrExpr *, 1);
    ri[0] = fit_expr(lw, &fit);
    /* a converting copy moves at most 16 bytes of its wider side at once:
     * the thread's v elements as v / c copies of c lanes */
    int wes = ts_dtype_bits(F->dt) / 8 > es ? ts_dtype_bits(F->dt) / 8 : es;
    int c = F->dt != G->dt && v * wes > 16 ? 16 / wes : v;
    if (c < 1 || v % c) return NULL;
    IrExpr *pred = cond ? ir_subst(a, low_expr(lw, cond), from, to, 1) : NULL;
    if (aligned) {
        G->contiguous = 1;
        if (G->align < c * es) G->align = c * es;
    }
    IrStmt *out = v == c ? NULL : ir_seq(a);
    for (int k = 0; k < v / c; k++) {
        IrExpr **rk = ri, **gk = gi;
        if (k) {
            rk = TS_NEWN(a, IrExpr *, 1);
            rk[0] = ir_bin(a, IR_ADD, ri[0], ir_i32(a, k * c));
            gk = TS_NEWN(a, IrExpr *, ngidx);
            for (int d = 0; d < ngidx; d++) gk[d] = gi[d];
            gk[ngidx - 1] = ir_bin(a, IR_ADD, gi[ngidx - 1], ir_int(a, k * c, gi[ngidx - 1]->dt));
        }
        IrStmt *vc = ir_stmt(a, IR_S_VCOPY, st->loc);
        vc->vcopy.lanes = c;
        vc->vcopy.aligned = aligned;
        vc->vcopy.pred = pred;
        if (load) {
            vc->vcopy.dst = li->reg[f], vc->vcopy.didx = rk, vc->vcopy.ndi = 1;
            vc->vcopy.src = G, vc->vcopy.sidx = gk, vc->vcopy.nsi = ngidx;
        } else {
            vc->vcopy.dst = G, vc->vcopy.didx = gk, vc->vcopy.ndi = ngidx;
            vc->vcopy.src = li->reg[f], vc->vcopy.sidx = rk, vc->vcopy.nsi = 1;
        }
        if (!out) return vc;
        ir_seq_push(a, out, vc);
    }
    return out;
}

/* The guard of a copy nest at its tile's last row and column: true iff it
 * holds for every element, when each conjunct that uses the nest's
 * variables is x + v < b with v one of them and x, b free of them
 * (increasing in v).  Block-uniform: a branch between vector copies with
 * and without their per-vector predicate (the predicated loads of a
 * partial tile cost a fifth of softmax's bandwidth on the H200 where every
 * block paid for them).  NULL when the guard has another form. */
static IrExpr *tile_uniform(Li *li, const IrExpr *c, const TsNest *ns) {
    TsArena *a = li->a;
    bool uses = false;
    for (int d = 0; d < ns->n; d++) uses |= ir_expr_uses_var(c, ns->v[d]);
    if (!uses) return (IrExpr *)c;
    if (c->kind == IR_E_BIN && c->bin.op == IR_AND) {
        IrExpr *x = tile_uniform(li, c->bin.a, ns), *y = x ? tile_uniform(li, c->bin.b, ns) : NULL;
        return x && y ? ir_bin(a, IR_AND, x, y) : NULL;
    }
    if (c->kind != IR_E_BIN || c->bin.op != IR_LT) return NULL;
    for (int d = 0; d < ns->n; d++) {
        const IrExpr *off;
        if (!plus_j(c->bin.a, ns->v[d], &off)) continue;
        for (int e = 0; e < ns->n; e++)
            if ((off && ir_expr_uses_var(off, ns->v[e])) || ir_expr_uses_var(c->bin.b, ns->v[e])) return NULL;
        IrExpr *last = ir_i32(a, ns->ext[d] - 1);
        return ir_bin(a, IR_LT, off ? ir_bin(a, IR_ADD, (IrExpr *)off, last) : last, c->bin.b);
    }
    return NULL;
}

/* ---- re-layout through shared memory ----------------------------------------------

 * Two uses that need different layouts for one fragment: a T.Parallel loop
 * run by one fragment's layout reaches another fragment at elements other
 * threads hold (an mma accumulator read by a loop over another warp grid's
 * accumulator, or read transposed; a gemm operand copied from an
 * accumulator of another grid).  The fragment keeps its layout (the one its
 * other uses agree on) and the loop goes through a shared copy of it:
 *
 *     X_relayout = alloc_shared X.shape           (per loop)
 *     every thread stores its registers of X there, by X's layout
 *     barrier
 *     the loop, its accesses to X on X_relayout
 *     barrier; every thread loads its registers of X back (if the loop wrote X)
 *
 * Only for a fragment that holds each element once (replicate 1) on every
 * (thread, local) of the block, so that the copy is exact and no two
 * threads write one element; otherwise inference stops, naming both uses. */

static IrExpr *first_replica(Li *li, const IrLayout *L, IrExpr *t);

static bool relayout_ok(const Li *li, int f) {
    const IrLayout *L = li->lx.lay[f];
    const IrBuffer *b = li->lx.frag[f];
    if (!L || L->nthreads != li->nt || L->ndim != b->ndim || L->nlocal > 4) return false;
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++) {
        int64_t e;
        if (!ir_is_const_int(b->shape[d], &e) || e != L->shape[d]) return false;
        n *= e;
    }
    return n * L->replicate == L->local_size * li->nt && (L->replicate == 1 || first_replica((Li *)li, L, ir_i32(li->a, 0)));
}

/* The condition, on thread t, of holding the first replica (rep 0) of its
 * elements of replicated layout L, in a form insert_sync reads (tests of
 * t % c and t / c against constants): MMA_ROWS lane % 4 == 0 of the first
 * warp column, WARP_ROWS_PROJ the first of the L lanes of a row, a
 * replicated CYCLIC the first `total` threads.  Checked against the native
 * maps for every thread; NULL where it does not hold (or another family). */
static IrExpr *first_replica(Li *li, const IrLayout *L, IrExpr *t) {
    TsArena *a = li->a;
    int64_t mod = 0, wdiv = 0, wmod = 0, below = 0;
    if (L->kind == IR_LAYOUT_MMA_ROWS) mod = 4, wdiv = 32, wmod = L->p[3];
    else if (L->kind == IR_LAYOUT_MMA_A) mod = 1, wdiv = 32, wmod = L->p[3]; /* the first warp column */
    else if (L->kind == IR_LAYOUT_WARP_ROWS_PROJ) mod = ir_layout_row_lanes(L);
    else if (L->kind == IR_LAYOUT_CYCLIC && L->p[1]) below = L->p[1];
    else return NULL;
    for (int64_t th = 0; th < L->nthreads; th++) {
        int64_t d[4] = {0}, idx[4], t0, loc;
        if (!ir_layout_inverse(L, th, d, idx)) return NULL;
        ir_layout_forward(L, idx, 0, &t0, &loc);
        bool want = t0 == th;
        bool got = below ? th < below : (th % mod == 0 && (wmod <= 1 || (th / wdiv) % wmod == 0));
        if (want != got) return NULL;
    }
    if (below) return ir_bin(a, IR_LT, t, ir_i32(a, below));
    IrExpr *c = mod > 1 ? ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORMOD, t, ir_i32(a, mod)), ir_i32(a, 0)) : NULL;
    if (wmod > 1) {
        IrExpr *w = ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORMOD, ir_bin(a, IR_FLOORDIV, t, ir_i32(a, wdiv)), ir_i32(a, wmod)),
                           ir_i32(a, 0));
        c = c ? ir_bin(a, IR_AND, c, w) : w;
    }
    if (!c) c = ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORMOD, t, ir_i32(a, mod)), ir_i32(a, 0));
    return c;
}

/* Every thread's registers of fragment f to (back: from) its shared copy sc. */
static IrStmt *relayout_copy(Li *li, int f, IrBuffer *sc, bool back, TsLoc loc) {
    TsArena *a = li->a;
    const IrLayout *L = li->lx.lay[f];
    IrVar *t = ir_var(li->k, "t", TS_INT32, IR_VAR_LOOP);
    IrVar *dv[4], *from[5];
    IrExpr *to[5];
    from[0] = L->tv_thread, to[0] = ir_var_ref(a, t);
    IrExpr *local = ir_i32(a, 0);
    int64_t stride = 1;
    for (int q = L->nlocal - 1; q >= 0; q--) {
        dv[q] = ir_var(li->k, "d", TS_INT32, IR_VAR_LOOP);
        from[q + 1] = L->tv_digit[q], to[q + 1] = ir_var_ref(a, dv[q]);
        if (L->local_shape[q] > 1)
            local = ir_bin(a, IR_ADD, local, ir_bin(a, IR_MUL, ir_var_ref(a, dv[q]), ir_i32(a, stride)));
        stride *= L->local_shape[q];
    }
    IrExpr **el = TS_NEWN(a, IrExpr *, L->ndim);
    for (int d = 0; d < L->ndim; d++) el[d] = ir_subst(a, L->index[d], from, to, L->nlocal + 1);
    IrStmt *body = back ? ir_store(a, li->reg[f], &local, 1, ir_load(a, sc, el, L->ndim))
                        : ir_store(a, sc, el, L->ndim, ir_load(a, li->reg[f], &local, 1));
    body->loc = loc;
    if (!back && L->replicate > 1) /* a replicated fragment: its first replicas store (relayout_ok: there is a test) */
        body = op_if(a, loc, first_replica(li, L, ir_var_ref(a, t)), body, NULL);
    return thread_loops(li, t, dv, L->local_shape, L->nlocal, body, loc);
}

IrBuffer *ts_layout_spill(TsLayoutLower *ll, int f, IrStmt *out, TsLoc loc) {
    Li *li = (Li *)ll->lx; /* (lx is Li's first member: the pass made ll from its Li) */
    if (!relayout_ok(li, f)) return NULL;
    const IrBuffer *b = li->lx.frag[f];
    IrBuffer *sc = ir_buffer(li->k, ts_sprintf(li->a, "%s_smem", b->name), b->dt, IR_SCOPE_SHARED, b->ndim, b->shape, loc);
    sc->transient = 1; /* written whole, then read, each time the op runs */
    IrStmt *al = ir_stmt(li->a, IR_S_ALLOC, loc);
    al->alloc.buf = sc;
    ir_seq_push(li->a, out, al);
    ir_seq_push(li->a, out, relayout_copy(li, f, sc, false, loc));
    return sc;
}

/* Access i reaches only its iteration's own element, the same for every
 * access of its buffer in the nest: its indices are the nest's variables in
 * some order over their extents (Q_t[k, s] = Q[s, k]), and every other
 * access of the buffer has the same indices. */
static bool own_element(const TsNest *ns, const TsFragAccVec *acc, int i) {
    const TsFragAcc *x = &acc->v[i];
    if (x->nidx != ns->n || x->buf->ndim != ns->n) return false;
    bool used[MAXNEST] = {false};
    for (int d = 0; d < ns->n; d++) {
        int j = 0;
        while (j < ns->n && !(x->idx[d]->kind == IR_E_VAR && x->idx[d]->var == ns->v[j])) j++;
        int64_t e;
        if (j == ns->n || used[j] || !ir_is_const_int(x->buf->shape[d], &e) || e != ns->ext[j]) return false;
        used[j] = true;
    }
    for (int k = 0; k < acc->n; k++) {
        if (acc->v[k].buf != x->buf) continue;
        for (int d = 0; d < ns->n; d++)
            if (acc->v[k].nidx != ns->n || !ir_expr_equal(acc->v[k].idx[d], x->idx[d])) return false;
    }
    return true;
}

/* The nest stores b unconditionally at its own element (own_element holds)
 * and never reads it: every element is written, none read before. */
static bool overwrites(const TsNest *ns, const IrBuffer *b) {
    if (ir_stmt_access_rw(ns->body, b, 0) & IR_ACC_READ) return false;
    const IrStmt *body = ns->body;
    if (body->kind == IR_S_STORE) return body->store.buf == b;
    if (body->kind != IR_S_SEQ) return false;
    for (int i = 0; i < body->seq.n; i++)
        if (body->seq.v[i]->kind == IR_S_STORE && body->seq.v[i]->store.buf == b) return true;
    return false;
}

static bool is_print_or_tileop(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_PRINT || s->kind == IR_S_TILEOP;
}

/* s stores to b somewhere. */
static bool stores_to(const IrStmt *s, const IrBuffer *b) {
    return (ir_stmt_access_rw(s, b, 0) & IR_ACC_WRITE) != 0;
}

/* Is the body stores to memory only (no fragment, private buffer, let or
 * control flow)?  Then every read it makes is inside a store that only the
 * first replica runs: `logsum[i] += logsum_1[i]` (FlashMLA) reads and
 * writes the shared logsum[i], all in one thread. */
static bool only_mem_stores(Li *li, const IrStmt *s) {
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->seq.n; i++)
            if (!only_mem_stores(li, s->seq.v[i])) return false;
        return true;
    }
    if (s->kind != IR_S_STORE && s->kind != IR_S_ATOMIC_ADD) return false;
    const IrBuffer *b = s->store.buf;
    return b->scope != IR_SCOPE_LOCAL && b->scope != IR_SCOPE_VAR && ts_layout_frag(&li->lx, b) < 0;
}

/* A nest run by a replicated layout may write memory when only stores do
 * (each guarded so that one replica stores) and it reads no buffer it
 * writes (the other replicas would read before the one store), unless
 * every such read is inside a guarded store (only_mem_stores). */
static bool replica_writes_ok(Li *li, IrStmt *body) {
    if (ir_stmt_any(body, is_print_or_tileop, NULL)) return false;
    if (only_mem_stores(li, body)) return true;
    for (int i = 0; i < li->k->buffers.n; i++) {
        IrBuffer *b = li->k->buffers.v[i];
        if (b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR || ts_layout_frag(&li->lx, b) >= 0) continue;
        if (ir_stmt_access_rw(body, b, 0) == (IR_ACC_READ | IR_ACC_WRITE)) return false;
    }
    return true;
}

static IrStmt *with_relays(Li *li, const Lower *lw, IrStmt *r, TsLoc loc);
static IrStmt *relay_all(Li *li, IrStmt *s, const TsNest *ns, const TsFragAccVec *acc);
static IrStmt *rebuild_nest(Li *li, const TsNest *ns, IrStmt *body, TsLoc loc);

/* ---- a nest reaching a fragment at shifted indices --------------------------------

 *     for i, j in T.Parallel(32, 512):
 *         if i < 16: S[i, j] = F[i + 16 * s, j]
 *
 * (sparse MLA backward's split store of its dKV accumulator, s a serial
 * loop) reaches F at the nest's variables plus offsets that do not depend
 * on the nest: no fragment is indexed by the variables themselves, so the
 * nest would go through a shared copy of all of F (64 KB there).  Where
 * every iteration that does anything reaches F inside its extents (the
 * variables' ranges, narrowed by the body's guard when the body is one if
 * without else, plus the offsets' ranges over the loops around), the nest
 * is rewritten over F's own index space: r over F's extent, i = r - 16 * s,
 * the body under 0 <= r - 16 * s < 32, F's accesses F[r, j].  F's layout
 * then drives it.  The iterations the rewrite drops reach F outside its
 * extents, so they are ones the guard makes no-ops. */

/* idx is v + off (or off + v, v - c, v): *off the offset (NULL for 0). */
static bool var_plus(TsArena *a, IrExpr *idx, const IrVar *v, IrExpr **off) {
    *off = NULL;
    if (idx->kind == IR_E_VAR) return idx->var == v;
    if (idx->kind != IR_E_BIN || (idx->bin.op != IR_ADD && idx->bin.op != IR_SUB)) return false;
    IrExpr *x = idx->bin.a, *y = idx->bin.b;
    if (x->kind == IR_E_VAR && x->var == v) {
        *off = idx->bin.op == IR_ADD ? y : ir_bin(a, IR_SUB, ir_i32(a, 0), y);
        return !ir_expr_uses_var(y, v);
    }
    if (idx->bin.op == IR_ADD && y->kind == IR_E_VAR && y->var == v) {
        *off = x;
        return !ir_expr_uses_var(x, v);
    }
    return false;
}

/* Narrow [lo[d], hi[d]] of the nest's variables by the conjuncts of cond
 * that compare one of them with a constant. */
static void guard_ranges(const IrExpr *c, const TsNest *ns, int64_t *lo, int64_t *hi) {
    if (c->kind != IR_E_BIN) return;
    if (c->bin.op == IR_AND) {
        guard_ranges(c->bin.a, ns, lo, hi);
        guard_ranges(c->bin.b, ns, lo, hi);
        return;
    }
    const IrExpr *x = c->bin.a, *y = c->bin.b;
    IrBinOp op = c->bin.op;
    int64_t k;
    if (x->kind != IR_E_VAR) { /* c < v: v > c */
        const IrExpr *t = x;
        x = y, y = t;
        op = op == IR_LT ? IR_GT : op == IR_LE ? IR_GE : op == IR_GT ? IR_LT : op == IR_GE ? IR_LE : op;
    }
    if (x->kind != IR_E_VAR || !ir_is_const_int(y, &k)) return;
    for (int d = 0; d < ns->n; d++) {
        if (ns->v[d] != x->var) continue;
        if (op == IR_LT && k - 1 < hi[d]) hi[d] = k - 1;
        if (op == IR_LE && k < hi[d]) hi[d] = k;
        if (op == IR_GT && k + 1 > lo[d]) lo[d] = k + 1;
        if (op == IR_GE && k > lo[d]) lo[d] = k;
    }
}

typedef struct Shift {
    IrBuffer *f;        /* the fragment */
    IrExpr *const *idx; /* the shifted indices, as written */
    IrExpr **to;        /* F's accesses with those indices get these (the new variables) */
    int n;
} Shift;

static bool same_idx(const Shift *sh, IrExpr *const *idx, int n) {
    if (n != sh->n) return false;
    for (int d = 0; d < n; d++)
        if (!ir_expr_equal(idx[d], sh->idx[d])) return false;
    return true;
}

static IrExpr *shift_load(IrMutator *m, IrExpr *e) {
    const Shift *sh = m->ctx;
    if (e->kind != IR_E_LOAD || e->load.buf != sh->f || e->load.bits || !same_idx(sh, e->load.idx, e->load.nidx))
        return NULL;
    return ir_load(m->arena, sh->f, sh->to, sh->n);
}

static IrStmt *shift_store(IrMutator *m, IrStmt *s) {
    const Shift *sh = m->ctx;
    const IrStmt *o = m->frame->s;
    if (s->kind != IR_S_STORE || s->store.buf != sh->f || s->store.bits || !same_idx(sh, o->store.idx, o->store.nidx))
        return s;
    IrStmt *r = ir_store(m->arena, sh->f, sh->to, sh->n, s->store.value);
    r->loc = s->loc;
    return r;
}

static IrStmt *shift_nest(Li *li, IrStmt *s, const TsNest *ns, const TsFragAccVec *acc) {
    TsArena *a = li->a;
    for (int i = 0; i < acc->n; i++) {
        const TsFragAcc *x = &acc->v[i];
        int f = ts_layout_frag(&li->lx, x->buf);
        if (!li->lx.lay[f] || x->nidx != ns->n || x->buf->ndim != ns->n) continue;
        IrExpr *off[MAXNEST];
        int64_t shape[MAXNEST], lo[MAXNEST], hi[MAXNEST];
        bool ok = true, moved = false;
        for (int d = 0; d < ns->n && ok; d++) {
            ok = var_plus(a, x->idx[d], ns->v[d], &off[d]) && ir_is_const_int(x->buf->shape[d], &shape[d]);
            for (int e = 0; e < ns->n && ok && off[d]; e++) ok = !ir_expr_uses_var(off[d], ns->v[e]);
            moved |= ok && (off[d] || shape[d] != ns->ext[d]);
            lo[d] = 0, hi[d] = ns->ext[d] - 1;
        }
        if (!ok || !moved) continue;
        IrStmt *body = unwrap1(ns->body);
        if (body->kind == IR_S_IF && !body->if_.else_) guard_ranges(body->if_.cond, ns, lo, hi);
        for (int d = 0; d < ns->n && ok; d++) {
            IrInterval o = off[d] ? ir_arith_bound(&li->ar, off[d]) : (IrInterval){0, 0};
            ok = o.lo != IR_ARITH_NEG_INF && o.hi != IR_ARITH_POS_INF && lo[d] + o.lo >= 0 && hi[d] + o.hi < shape[d];
        }
        if (!ok) continue;
        /* F's accesses at these indices become F[r0, r1, ...] */
        IrVar *nv[MAXNEST];
        IrExpr **to = TS_NEWN(a, IrExpr *, ns->n);
        for (int d = 0; d < ns->n; d++) {
            nv[d] = ir_var(li->k, ns->v[d]->name, TS_INT32, IR_VAR_LOOP);
            to[d] = ir_var_ref(a, nv[d]);
        }
        Shift sh = {x->buf, x->idx, to, ns->n};
        IrMutator m = {.arena = a, .ctx = &sh, .pre_expr = shift_load, .post_stmt = shift_store};
        IrStmt *nb = ir_mutate_stmt(&m, ns->body);
        /* every other use of the old variables: v = r - off */
        IrVar *from[MAXNEST];
        IrExpr *val[MAXNEST], *guard = NULL;
        for (int d = 0; d < ns->n; d++) {
            from[d] = ns->v[d];
            val[d] = off[d] ? ir_bin(a, IR_SUB, to[d], off[d]) : to[d];
            if (!off[d] && shape[d] == ns->ext[d]) continue;
            IrExpr *in = ir_bin(a, IR_AND, ir_bin(a, IR_GE, val[d], ir_i32(a, 0)), ir_bin(a, IR_LT, val[d], ir_i32(a, ns->ext[d])));
            guard = guard ? ir_bin(a, IR_AND, guard, in) : in;
        }
        nb = ir_stmt_subst(a, nb, from, val, ns->n);
        if (guard) nb = op_if(a, s->loc, guard, nb, NULL);
        TsNest n2 = *ns;
        for (int d = 0; d < ns->n; d++) n2.v[d] = nv[d], n2.ext[d] = shape[d];
        return rebuild_nest(li, &n2, nb, s->loc);
    }
    return NULL;
}

static IrStmt *lower_nest(Li *li, IrStmt *s) {
    TsArena *a = li->a;
    TsNest ns;
    if (!ts_nest_get(s, &ns)) return s;
    TsFragAccVec acc = {0};
    int writes = 0;
    ts_nest_frag_stmt(&li->lx, ns.body, &acc, &writes);
    if (!acc.n) return s;
    const IrLayout *drv = NULL;
    for (int i = 0; i < acc.n; i++) {
        const IrLayout *l = li->lx.lay[ts_layout_frag(&li->lx, acc.v[i].buf)];
        if (ts_nest_full_access(&acc.v[i], &ns) && l && (!drv || l->replicate < drv->replicate)) drv = l;
    }
    /* a loop writing a fragment left in shared memory (over the register
     * budget) from rows of fragments: the rows go through shared copies and
     * the loop stays a plain T.Parallel loop (insert_sync cannot tell the
     * elements of an mma layout's threads apart in a shared buffer) */
    for (int i = 0; i < li->nover && !drv; i++)
        if (stores_to(ns.body, li->over[i])) {
            IrStmt *r = relay_all(li, s, &ns, &acc);
            if (r) return r;
        }
    for (int i = 0; i < acc.n && !drv; i++) {
        /* only rows of fragments (x[i, j] = ... y[i] over shared/global x):
         * the nest follows the 2-D layout whose row projection they have */
        const IrLayout *l = li->lx.lay[ts_layout_frag(&li->lx, acc.v[i].buf)];
        if (!l || !ts_nest_row_access(&acc.v[i], &ns)) continue;
        if (l->kind == IR_LAYOUT_MMA_ROWS)
            drv = ir_layout_mma_c(li->k, l->p[0], ns.ext[1], (int)l->p[2], (int)l->p[3]);
        else if (l->kind == IR_LAYOUT_WARP_ROWS_PROJ) {
            /* (a different row length may share rows between lanes differently:
             * then the fits below fail and the kernel keeps shared fragments) */
            drv = ir_layout_warp_rows_vec(li->k, l->p[0], ns.ext[1], (int)l->p[2], (int)l->p[3]);
            if (!drv) drv = ir_layout_warp_rows(li->k, l->p[0], ns.ext[1], (int)l->p[2]);
        }
    }
    if (!drv) { /* a fragment at the variables plus offsets: the nest over its indices instead */
        IrStmt *sn = shift_nest(li, s, &ns, &acc);
        if (sn) return lower_nest(li, sn);
    }
    if (!drv) {
        IrStmt *r = relay_all(li, s, &ns, &acc);
        if (r) return r;
        ts_layout_give_up(&li->lx, "a T.Parallel loop uses fragment %s but no fragment is indexed by its variables "
                                   "(and it cannot go through shared memory)",
                acc.v[0].buf->name);
        return s;
    }
    if (drv->nthreads != li->nt) {
        ts_layout_give_up(&li->lx, "a fragment layout for %d threads in a block of %d", drv->nthreads, li->nt);
        return s;
    }
    if (drv->replicate > 1 && writes && (!replica_writes_ok(li, ns.body) || !first_replica(li, drv, ir_i32(a, 0)))) {
        ts_layout_give_up(&li->lx, "a T.Parallel loop over replicated fragment elements writes memory it reads "
                                   "(or prints, or runs a tile op) (line %d)", s->loc.line);
        return s;
    }
    Lower lw;
    memset(&lw, 0, sizeof lw);
    lw.li = li;
    lw.at = s->loc;
    lw.ns = &ns;
    lw.drv = drv;
    IrVar *t = ir_var(li->k, "t", TS_INT32, IR_VAR_LOOP);
    IrExpr *tv = ir_var_ref(a, t);
    IrVar *from[5];
    IrExpr *to[5];
    from[0] = drv->tv_thread, to[0] = tv;
    for (int q = 0; q < drv->nlocal; q++) {
        lw.dv[q] = ir_var(li->k, "d", TS_INT32, IR_VAR_LOOP);
        from[q + 1] = drv->tv_digit[q];
        to[q + 1] = ir_var_ref(a, lw.dv[q]);
    }
    for (int d = 0; d < ns.n; d++) lw.val[d] = ir_subst(a, drv->index[d], from, to, drv->nlocal + 1);
    if (drv->replicate > 1 && writes) lw.first = first_replica(li, drv, tv); /* the element's first replica stores */
    IrStmt *vc = vector_copy(&lw);
    if (vc) {
        IrStmt *r = thread_loops(li, t, lw.dv, drv->local_shape, drv->nlocal - 1, vc, s->loc);
        IrStmt *b = unwrap1(ns.body);
        /* (not inside loops: there the copy is the first statement that
         * prefetch looks for, and its tile test would run every iteration) */
        const IrStmt *vc1 = vc->kind == IR_S_SEQ ? vc->seq.v[0] : vc; /* (a converting copy in parts) */
        IrExpr *whole_tile = vc1->vcopy.pred && b->kind == IR_S_IF && li->loop_depth == 0
                                 ? tile_uniform(li, b->if_.cond, &ns)
                                 : NULL;
        if (!whole_tile) return r;
        /* the same copies without their predicate where the whole tile is inside */
        IrVar *fr[4];
        IrExpr *tov[4];
        int n = 0;
        fr[n] = t, tov[n++] = ir_var_ref(a, ir_var(li->k, "t", TS_INT32, IR_VAR_LOOP));
        for (int q = 0; q < drv->nlocal - 1; q++)
            fr[n] = lw.dv[q], tov[n++] = ir_var_ref(a, ir_var(li->k, "d", TS_INT32, IR_VAR_LOOP));
        IrStmt *vc2 = ir_stmt_subst(a, vc, fr, tov, n);
        if (vc2->kind == IR_S_SEQ)
            for (int i = 0; i < vc2->seq.n; i++) vc2->seq.v[i]->vcopy.pred = NULL;
        else vc2->vcopy.pred = NULL;
        IrVar *dv2[4];
        for (int q = 0; q + 1 < n; q++) dv2[q] = tov[q + 1]->var;
        IrStmt *r2 = thread_loops(li, tov[0]->var, dv2, drv->local_shape, drv->nlocal - 1, vc2, s->loc);
        return op_if(a, s->loc, whole_tile, r2, r);
    }
    /* fragments the loop reaches at elements its threads do not hold: re-laid out */
    int nrel = 0;
    for (int i = 0; i < acc.n && !li->lx.why; i++) {
        int f = ts_layout_frag(&li->lx, acc.v[i].buf);
        Fit fit;
        if (lw.relay[f] || fit_access(&lw, acc.v[i].buf, acc.v[i].idx, acc.v[i].nidx, &fit)) continue;
        if (!relayout_ok(li, f)) {
            reach_conflict(&lw, acc.v[i].buf, "and it cannot go through shared memory: replicated or partial");
            return s;
        }
        lw.relay[f] = ir_buffer(li->k, ts_sprintf(a, "%s_relayout", acc.v[i].buf->name), acc.v[i].buf->dt,
                                IR_SCOPE_SHARED, acc.v[i].buf->ndim, acc.v[i].buf->shape, s->loc);
        nrel++;
    }
    if (nrel) {
        /* which of them the loop writes (a replicated driver would write
         * each element from several threads) */
        for (int i = 0; i < acc.n; i++) {
            int f = ts_layout_frag(&li->lx, acc.v[i].buf);
            if (lw.relay[f] && stores_to(ns.body, acc.v[i].buf)) lw.relay_w[f] = true;
        }
        for (int f = 0; f < li->lx.nfrag; f++)
            if (lw.relay_w[f] && drv->replicate > 1) {
                reach_conflict(&lw, li->lx.frag[f], "and the loop, run by a replicated layout, writes it");
                return s;
            }
        /* a written copy is accessed only at each iteration's own element:
         * reads of elements other iterations write would race in the copy */
        for (int i = 0; i < acc.n; i++) {
            int f = ts_layout_frag(&li->lx, acc.v[i].buf);
            if (lw.relay_w[f] && !own_element(&ns, &acc, i)) {
                reach_conflict(&lw, acc.v[i].buf, "and the loop writes it and reaches other elements of it");
                return s;
            }
            if (lw.relay_w[f]) lw.relay_new[f] = overwrites(&ns, acc.v[i].buf);
        }
    }
    IrStmt *body = low_stmt(&lw, ns.body);
    IrStmt *r = thread_loops(li, t, lw.dv, drv->local_shape, drv->nlocal, body, s->loc);
    if (!nrel) return r;
    return with_relays(li, &lw, r, s->loc);
}

/* The shared copies of lw's re-laid out fragments around r (the lowered
 * loop): written from the registers before the loop, read back after it
 * where it wrote them; barriers between (insert_sync places them again)
 * and, in a loop, before the next iteration's copy. */
static IrStmt *with_relays(Li *li, const Lower *lw, IrStmt *r, TsLoc loc) {
    TsArena *a = li->a;
    IrStmt *out = ir_seq(a);
    out->loc = loc;
    for (int f = 0; f < li->lx.nfrag; f++) {
        if (!lw->relay[f]) continue;
        IrStmt *al = ir_stmt(a, IR_S_ALLOC, loc);
        al->alloc.buf = lw->relay[f];
        ir_seq_push(a, out, al);
    }
    if (li->loop_depth > 0) ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, loc));
    for (int f = 0; f < li->lx.nfrag; f++)
        if (lw->relay[f] && !lw->relay_new[f]) ir_seq_push(a, out, relayout_copy(li, f, lw->relay[f], false, loc));
    ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, loc));
    ir_seq_push(a, out, r);
    bool back = false;
    for (int f = 0; f < li->lx.nfrag; f++) back = back || lw->relay_w[f];
    if (back) {
        ir_seq_push(a, out, ir_stmt(a, IR_S_BARRIER, loc));
        for (int f = 0; f < li->lx.nfrag; f++)
            if (lw->relay_w[f]) ir_seq_push(a, out, relayout_copy(li, f, lw->relay[f], true, loc));
    }
    return out;
}

/* A loop that touches fragments none of which is indexed by its variables
 * (acc_s[i, j] = acc[i + s * 16, j]; x[i, j] += y[i, j % 32]): every
 * fragment it touches goes through a shared copy and the loop stays a
 * T.Parallel loop over shared memory (partition_threads spreads it), where
 * the copies can be made (each element once or by its first replica; a
 * written one only at each iteration's own element); NULL where not. */
static IrStmt *relay_all(Li *li, IrStmt *s, const TsNest *ns, const TsFragAccVec *acc) {
    TsArena *a = li->a;
    Lower lw;
    memset(&lw, 0, sizeof lw);
    lw.li = li;
    lw.at = s->loc;
    lw.ns = ns;
    for (int d = 0; d < ns->n; d++) lw.val[d] = ir_var_ref(a, ns->v[d]);
    for (int i = 0; i < acc->n; i++) {
        int f = ts_layout_frag(&li->lx, acc->v[i].buf);
        if (lw.relay[f]) continue;
        if (!relayout_ok(li, f)) return NULL;
        lw.relay[f] = ir_buffer(li->k, ts_sprintf(a, "%s_relayout", acc->v[i].buf->name), acc->v[i].buf->dt,
                                IR_SCOPE_SHARED, acc->v[i].buf->ndim, acc->v[i].buf->shape, s->loc);
        if (stores_to(ns->body, acc->v[i].buf)) lw.relay_w[f] = true;
    }
    for (int i = 0; i < acc->n; i++) {
        int f = ts_layout_frag(&li->lx, acc->v[i].buf);
        if (lw.relay_w[f] && !own_element(ns, acc, i)) return NULL;
        if (lw.relay_w[f]) lw.relay_new[f] = overwrites(ns, acc->v[i].buf);
    }
    IrStmt *body = low_stmt(&lw, ns->body);
    return with_relays(li, &lw, rebuild_nest(li, ns, body, s->loc), s->loc);
}

/* The nest chain of ns again (T.Parallel loops, same variables) around body. */
static IrStmt *rebuild_nest(Li *li, const TsNest *ns, IrStmt *body, TsLoc loc) {
    for (int d = ns->n - 1; d >= 0; d--) {
        body = ir_for(li->a, ns->v[d], ir_i32(li->a, 0), ir_i32(li->a, ns->ext[d]), IR_FOR_PARALLEL, body);
        body->loc = loc;
    }
    return body;
}

/*
 * Masks decided per tile.  A nest whose only statement is
 *     frag[...] = select(a >= b, x, y)        (or >, <, <=)
 * with a - b affine in the nest's variables plus terms uniform over the
 * block (block indices, serial loop variables, shape variables, scalars)
 * becomes
 *     if (U + lo >= 0)     the nest storing x      every element true
 *     else if (U + hi < 0) the nest storing y      every element false
 *     else                 the nest as it was
 * where U is the uniform part and [lo, hi] the range of the nest part: a
 * block-uniform branch, so FlashAttention's causal mask (and its padding
 * mask of a partial last tile) costs a compare and a select per element
 * only on the tiles the mask cuts, the diagonal ones.  NULL where the
 * pattern does not apply.
 */
static IrStmt *split_select(Li *li, IrStmt *s, const TsNest *ns) {
    TsArena *a = li->a;
    IrStmt *b = ns->body;
    while (b && b->kind == IR_S_SEQ && b->seq.n == 1) b = b->seq.v[0];
    if (!b || b->kind != IR_S_STORE || ts_layout_frag(&li->lx, b->store.buf) < 0) return NULL;
    const IrExpr *v = b->store.value, *c = v->kind == IR_E_SELECT ? v->sel.cond : NULL;
    if (!c || c->kind != IR_E_BIN) return NULL;
    const IrExpr *hi_side = c->bin.a, *lo_side = c->bin.b; /* cond: hi_side - lo_side - strict >= 0 */
    int strict = 0;
    switch (c->bin.op) {
    case IR_GE: break;
    case IR_GT: strict = 1; break;
    case IR_LE: hi_side = c->bin.b, lo_side = c->bin.a; break;
    case IR_LT: hi_side = c->bin.b, lo_side = c->bin.a, strict = 1; break;
    default: return NULL;
    }
    if (!ts_dtype_is_int(hi_side->dt) || !ts_dtype_is_int(lo_side->dt)) return NULL;
    int mark = ir_arith_mark(&li->ar);
    for (int d = 0; d < ns->n; d++) ir_arith_bind(&li->ar, ns->v[d], 0, ns->ext[d] - 1);
    IrAffine fa, fb;
    bool ok = ir_arith_affine(&li->ar, hi_side, false, &fa) && ir_arith_affine(&li->ar, lo_side, false, &fb);
    ir_arith_pop(&li->ar, mark);
    if (!ok) return NULL;
    if (!fa.affine || !fb.affine) return NULL;
    int64_t coef[MAXNEST] = {0};
    IrAffine u = {TS_NEWN(a, IrAffTerm, fa.n + fb.n + 1), 0, fa.c - fb.c - strict, true};
    for (int side = 0; side < 2; side++) {
        const IrAffine *f = side ? &fb : &fa;
        for (int i = 0; i < f->n; i++) {
            const IrVar *x = f->t[i].atom->var;
            int64_t k = side ? -f->t[i].coeff : f->t[i].coeff;
            int d = 0;
            while (d < ns->n && ns->v[d] != x) d++;
            if (d < ns->n) {
                coef[d] += k;
                continue;
            }
            if (x->kind != IR_VAR_LOOP && x->kind != IR_VAR_BLOCK_IDX && x->kind != IR_VAR_SHAPE &&
                x->kind != IR_VAR_SCALAR)
                return NULL;
            int j = 0;
            while (j < u.n && u.t[j].atom->var != x) j++;
            if (j == u.n) u.t[u.n++] = (IrAffTerm){f->t[i].atom, 0};
            u.t[j].coeff += k;
        }
    }
    int64_t lo = 0, hi = 0, any = 0;
    for (int d = 0; d < ns->n; d++) {
        int64_t e = coef[d] * (ns->ext[d] - 1); /* small: extents and coefficients of a tile */
        if (coef[d] < -(1 << 20) || coef[d] > (1 << 20)) return NULL;
        lo += e < 0 ? e : 0;
        hi += e > 0 ? e : 0;
        any |= coef[d];
    }
    int nu = 0;
    for (int j = 0; j < u.n; j++)
        if (u.t[j].coeff) u.t[nu++] = u.t[j];
    u.n = nu;
    if (!any || !u.n) return NULL; /* the same for every element, or decided at compile time */
    TsDType dt = ir_promote(hi_side->dt, lo_side->dt);
    IrExpr *U = ir_affine_expr(a, &u, dt);
    IrExpr *all = ir_bin(a, IR_GE, U, ir_int(a, -lo, dt));  /* U + lo >= 0 */
    IrExpr *none = ir_bin(a, IR_LT, U, ir_int(a, -hi, dt)); /* U + hi < 0 */
    IrStmt *arm[2];
    for (int i = 0; i < 2; i++) {
        IrStmt *st = ir_stmt(a, IR_S_STORE, b->loc);
        *st = *b;
        st->store.value = i ? v->sel.b : v->sel.a;
        arm[i] = lower_nest(li, rebuild_nest(li, ns, st, s->loc));
    }
    IrStmt *inner = ir_stmt(a, IR_S_IF, s->loc), *outer = ir_stmt(a, IR_S_IF, s->loc);
    inner->if_.cond = none;
    inner->if_.then = arm[1];
    inner->if_.else_ = lower_nest(li, s);
    outer->if_.cond = all;
    outer->if_.then = arm[0];
    outer->if_.else_ = inner;
    return outer;
}

/* The whole body, lowered by the layouts, through the shared rewriter
 * (ir/walk.h): nests over fragments, kept ops and fragment allocations are
 * replaced (pre_stmt); loops, branches and the roles being laid out are
 * entered with the loop ranges bound and their depth counted (undone in
 * post_stmt); expressions are not entered (nothing in them is lowered
 * here); every other use of a fragment gives up.  After giving up nothing
 * more is rewritten. */
static IrExpr *keep_expr(IrMutator *m, IrExpr *e) {
    (void)m;
    return e;
}

static IrStmt *lower_pre(IrMutator *m, IrStmt *s) {
    Li *li = m->ctx;
    TsArena *a = li->a;
    if (li->lx.why) return s;
    switch (s->kind) {
    case IR_S_SEQ: return NULL;
    case IR_S_FOR: {
        if (s->for_.kind == IR_FOR_PARALLEL) {
            TsNest ns;
            if (ts_nest_get(s, &ns)) {
                TsFragAccVec acc = {0};
                int w = 0;
                ts_nest_frag_stmt(&li->lx, ns.body, &acc, &w);
                if (!acc.n) return s;
                IrStmt *split = split_select(li, s, &ns);
                return split ? split : lower_nest(li, s);
            }
        }
        TsFragAccVec acc = {0};
        ts_nest_frag_expr(&li->lx, s->for_.min, &acc);
        ts_nest_frag_expr(&li->lx, s->for_.extent, &acc);
        if (acc.n) ts_layout_give_up(&li->lx, "a loop bound reads fragment %s", acc.v[0].buf->name);
        if (li->nmark < MAXMARK) {
            li->mark[li->nmark] = ir_arith_mark(&li->ar);
            ir_arith_bind_loop(&li->ar, s);
        }
        li->nmark++;
        li->loop_depth++;
        return NULL;
    }
    case IR_S_IF: {
        TsFragAccVec acc = {0};
        ts_nest_frag_expr(&li->lx, s->if_.cond, &acc);
        if (acc.n) ts_layout_give_up(&li->lx, "an if condition reads fragment %s", acc.v[0].buf->name);
        return NULL;
    }
    case IR_S_WHILE: {
        TsFragAccVec acc = {0};
        ts_nest_frag_expr(&li->lx, s->while_.cond, &acc);
        if (acc.n) ts_layout_give_up(&li->lx, "a while condition reads fragment %s", acc.v[0].buf->name);
        li->loop_depth++;
        return NULL;
    }
    case IR_S_ALLOC: {
        int f = ts_layout_frag(&li->lx, s->alloc.buf);
        if (f < 0) return s;
        IrStmt *r = ir_stmt(a, IR_S_ALLOC, s->loc);
        r->alloc.buf = li->reg[f];
        return r;
    }
    case IR_S_ROLE:
        if (!our_role(li, s)) return s; /* (another role's threads: its own round) */
        li->in_role = true;
        return NULL;
    case IR_S_TILEOP: {
        IrTileOp *op = s->op;
        if (li->roles && !li->in_role) return s; /* (a kept op of another role's fragments) */
        TsLowerLayoutFn lf =
            op->inst == TS_OP_INST_FRAGMENT || op->inst == TS_OP_INST_MMA_SYNC || op->inst == TS_OP_INST_WGMMA
                ? ts_op_lower_layout_fn(op->kind)
                : NULL;
        if (lf) { /* the op's own lowering by the layouts (op/gemm.c, reduce.c, cumsum.c) */
            TsLayoutLower ll = {&li->lx, li->reg, li->loop_depth > 0, li->fin, &li->nfin};
            return lf(&ll, s);
        }
        for (int i = 0; i < op->nr; i++)
            if (ts_layout_frag(&li->lx, op->r[i].buf) >= 0) ts_layout_give_up(&li->lx, "T.%s on fragment %s", ts_op_name(op->kind), op->r[i].buf->name);
        return s;
    }
    default: {
        TsFragAccVec acc = {0};
        int w = 0;
        ts_nest_frag_stmt(&li->lx, s, &acc, &w);
        if (acc.n) ts_layout_give_up(&li->lx, "fragment %s is used outside a T.Parallel loop", acc.v[0].buf->name);
        return s;
    }
    }
}

static IrStmt *lower_post(IrMutator *m, IrStmt *s) {
    Li *li = m->ctx;
    const IrStmt *o = m->frame->s; /* (the statement before its children were lowered) */
    switch (o->kind) {
    case IR_S_FOR:
        li->loop_depth--;
        if (--li->nmark < MAXMARK) ir_arith_pop(&li->ar, li->mark[li->nmark]);
        if (o->for_.kind == IR_FOR_PARALLEL) {
            TsFragAccVec in = {0};
            int w = 0;
            ts_nest_frag_stmt(&li->lx, o->for_.body, &in, &w);
            if (in.n) ts_layout_give_up(&li->lx, "fragment %s is used in a T.Parallel loop that is not a plain nest", in.v[0].buf->name);
        }
        return s;
    case IR_S_WHILE: li->loop_depth--; return s;
    case IR_S_ROLE: li->in_role = false; return s;
    default: return s;
    }
}

static IrStmt *lower_all(Li *li, IrStmt *s) {
    IrMutator m = {.arena = li->a, .ctx = li, .pre_expr = keep_expr, .pre_stmt = lower_pre, .post_stmt = lower_post};
    return ir_mutate_stmt(&m, s);
}

/* ---- register prefetch of serial loops ------------------------------------------

 * A serial loop whose body starts by loading a register tile from global
 * memory (a thread range of vector copies into a fragment's registers:
 * RMSNorm's `for k: T.copy(A[.., k], A_shared); ...`) waits a full memory
 * latency per iteration, with only that tile's loads in flight: with few
 * blocks per SM (RMSNorm 8192^2: 256 blocks of 4 warps) that is far from
 * the bandwidth.  The loads of the next S - 1 iterations are issued ahead
 * into S - 1 more register tiles, rotated at the top of each iteration:
 *
 *     P_s = load(k := min + s)            if s < n      (s = 0 .. S-2)
 *     for k in serial(min, n):
 *         R = P_0; P_0 = P_1; ...; P_{S-3} = P_{S-2}     (registers)
 *         if k + S-1 < min + n: P_{S-2} = load(k := k + S-1)
 *         rest of the body
 *
 * Legal when nothing in the loop writes the loaded tensor and the load's
 * indices and predicate read no memory; a load then moves above the
 * stores of earlier iterations to other tensors, which assumes distinct
 * tensor parameters do not overlap (TileLang's contract: its prim_funcs
 * are `tir.noalias`, its kernels' pointers __restrict__).  S is 4 where
 * the extra tiles take at most 64 registers, else fewer. */

/* The vector copy at the bottom of a thread range of unrolled loops. */
static IrStmt *reg_load_of(IrStmt *s, int nt) {
    s = unwrap1(s);
    int64_t e;
    if (!s || s->kind != IR_S_FOR || s->for_.kind != IR_FOR_THREAD || !ir_is_const_int(s->for_.extent, &e) ||
        e != nt)
        return NULL;
    s = unwrap1(s->for_.body);
    while (s && s->kind == IR_S_FOR && s->for_.kind == IR_FOR_UNROLL) s = unwrap1(s->for_.body);
    if (!s || s->kind != IR_S_VCOPY || s->vcopy.async || s->vcopy.dst->scope != IR_SCOPE_LOCAL ||
        !s->vcopy.dst->layout || s->vcopy.src->scope != IR_SCOPE_GLOBAL)
        return NULL;
    for (int i = 0; i < s->vcopy.nsi; i++)
        if (ir_expr_loads(s->vcopy.sidx[i], NULL)) return NULL;
    for (int i = 0; i < s->vcopy.ndi; i++)
        if (ir_expr_loads(s->vcopy.didx[i], NULL)) return NULL;
    if (s->vcopy.pred && ir_expr_loads(s->vcopy.pred, NULL)) return NULL;
    return s;
}

/* A copy of load statement ld with the loop variable k := at, fresh loop
 * variables, loading into dst. */
static IrStmt *load_copy(Li *li, IrStmt *ld, IrVar *k, IrExpr *at, IrBuffer *dst) {
    IrVar *from[8];
    IrExpr *to[8];
    int n = 0;
    from[n] = k, to[n++] = at;
    for (IrStmt *s = unwrap1(ld); s && s->kind == IR_S_FOR && n < 8; s = unwrap1(s->for_.body)) {
        from[n] = s->for_.var;
        to[n++] = ir_var_ref(li->a, ir_var(li->k, s->for_.var->name, s->for_.var->dt, IR_VAR_LOOP));
    }
    IrStmt *c = ir_stmt_subst(li->a, ld, from, to, n);
    /* rebind the loops to the fresh variables (ir_stmt_subst keeps binders) */
    int q = 1;
    for (IrStmt *s = unwrap1(c); s && s->kind == IR_S_FOR && q < n; s = unwrap1(s->for_.body)) s->for_.var = to[q++]->var;
    IrStmt *vc = reg_load_of(c, li->nt);
    vc->vcopy.dst = dst;
    return c;
}

static IrStmt *prefetch_loop(Li *li, IrStmt *loop) {
    TsArena *a = li->a;
    IrStmt *body = unwrap1(loop->for_.body);
    if (loop->for_.kind != IR_FOR_SERIAL || !body || body->kind != IR_S_SEQ || body->seq.n < 2) return loop;
    IrStmt *ld = body->seq.v[0], *vc = reg_load_of(ld, li->nt);
    if (!vc) return loop;
    IrBuffer *R = vc->vcopy.dst, *G = vc->vcopy.src;
    if (ir_stmt_access_rw(loop->for_.body, G, 0) & IR_ACC_WRITE) return loop;
    int64_t ls;
    if (!ir_is_const_int(R->shape[0], &ls) || ls < 1) return loop;
    int S = 4;
    int64_t trip;
    while (S > 1 && (S - 1) * ls > 64) S--;
    /* no more tiles ahead than iterations (the rotation then never moves
     * a tile no load wrote; with a run-time trip count below S - 1 it
     * moves unused garbage between registers, harmless) */
    if (ir_is_const_int(loop->for_.extent, &trip) && trip + 1 < S) S = (int)trip + 1;
    if (S < 2) return loop;
    IrVar *k = loop->for_.var;
    IrExpr *lo = loop->for_.min, *end = ir_bin(a, IR_ADD, loop->for_.min, loop->for_.extent);
    IrBuffer *P[3];
    IrStmt *out = ir_seq(a);
    out->loc = loop->loc;
    for (int i = 0; i < S - 1; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%.40s_next", R->name);
        P[i] = ir_buffer(li->k, nm, R->dt, IR_SCOPE_LOCAL, 1, R->shape, R->loc);
        P[i]->layout = R->layout;
        IrStmt *al = ir_stmt(a, IR_S_ALLOC, loop->loc);
        al->alloc.buf = P[i];
        ir_seq_push(a, out, al);
    }
    for (int i = 0; i < S - 1; i++) {
        IrExpr *at = ir_bin(a, IR_ADD, lo, ir_i32(a, i));
        IrExpr *c = ir_bin(a, IR_LT, at, end);
        int64_t cv;
        IrStmt *l = load_copy(li, ld, k, at, P[i]);
        ir_seq_push(a, out, ir_is_const_int(c, &cv) && cv ? l : op_if(a, loop->loc, c, l, NULL));
    }
    /* the rotation: R = P_0, P_i = P_{i+1} */
    IrVar *t = ir_var(li->k, "t", TS_INT32, IR_VAR_LOOP), *e = ir_var(li->k, "e", TS_INT32, IR_VAR_LOOP);
    IrExpr *ev = ir_var_ref(a, e);
    IrStmt *rot = ir_seq(a);
    ir_seq_push(a, rot, ir_store(a, R, &ev, 1, ir_load(a, P[0], &ev, 1)));
    for (int i = 0; i + 1 < S - 1; i++) ir_seq_push(a, rot, ir_store(a, P[i], &ev, 1, ir_load(a, P[i + 1], &ev, 1)));
    for (int i = 0; i < rot->seq.n; i++) rot->seq.v[i]->loc = ld->loc;
    IrStmt *rl = ir_for(a, e, ir_i32(a, 0), ir_i32(a, ls), IR_FOR_UNROLL, rot);
    rl->loc = ld->loc;
    rl = ir_for(a, t, ir_i32(a, 0), ir_i32(a, li->nt), IR_FOR_THREAD, rl);
    rl->loc = ld->loc;
    IrStmt *nb = ir_seq(a);
    nb->loc = body->loc;
    ir_seq_push(a, nb, rl);
    IrExpr *ahead = ir_bin(a, IR_ADD, ir_var_ref(a, k), ir_i32(a, S - 1));
    ir_seq_push(a, nb, op_if(a, ld->loc, ir_bin(a, IR_LT, ahead, end), load_copy(li, ld, k, ahead, P[S - 2]), NULL));
    for (int i = 1; i < body->seq.n; i++) ir_seq_push(a, nb, body->seq.v[i]);
    IrStmt *nl = ir_stmt(a, IR_S_FOR, loop->loc);
    *nl = *loop;
    nl->for_.body = nb;
    ir_seq_push(a, out, nl);
    return out;
}

/* Every serial loop, innermost first, through the shared rewriter: serial
 * loops and branches are entered, per-thread code (no tile loads start
 * there) and everything else is not. */
static IrStmt *prefetch_pre(IrMutator *m, IrStmt *s) {
    (void)m;
    switch (s->kind) {
    case IR_S_SEQ:
    case IR_S_IF: return NULL;
    case IR_S_FOR: return s->for_.kind == IR_FOR_THREAD ? s : NULL;
    default: return s;
    }
}

static IrStmt *prefetch_post(IrMutator *m, IrStmt *s) {
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_SERIAL ? prefetch_loop(m->ctx, s) : s;
}

static IrStmt *prefetch(Li *li, IrStmt *s) {
    IrMutator m = {.arena = li->a, .ctx = li, .pre_expr = keep_expr, .pre_stmt = prefetch_pre, .post_stmt = prefetch_post};
    return ir_mutate_stmt(&m, s);
}

/* Lower the kept reductions generically (the fallback; a wgmma gemm becomes
 * mma.sync's shared-accumulator one), through the shared
 * rewriter (ir/walk.h): a kept op becomes its generic loops, everything
 * else is kept (no tile op hides in an expression: expressions are not
 * entered). */
static IrStmt *unkeep_op(IrMutator *m, IrStmt *s) {
    Li *li = m->ctx;
    TsArena *a = li->a;
    if (s->kind == IR_S_TILEOP && s->op->inst == TS_OP_INST_WGMMA) {
        /* a wgmma gemm needs its accumulator in registers: without layouts it
         * is mma.sync's shared-accumulator gemm */
        IrTileOp *op = TS_NEW(a, IrTileOp);
        *op = *s->op;
        op->inst = TS_OP_INST_MMA_SYNC;
        IrStmt *t = ir_stmt(a, IR_S_TILEOP, s->loc);
        t->op = op;
        return t;
    }
    if (s->kind != IR_S_TILEOP || s->op->inst != TS_OP_INST_FRAGMENT) return NULL;
    TsLowerCtx lx = {li->cx->diag, a, li->k, li->cx->target, li->cx->caps};
    IrTileOp *op = TS_NEW(a, IrTileOp);
    *op = *s->op;
    op->inst = TS_OP_INST_LOOPS;
    IrStmt *t = ir_stmt(a, IR_S_TILEOP, s->loc);
    t->op = op;
    IrStmt *low = op->kind == TS_OP_CUMSUM ? ts_op_cumsum_lower(&lx, t) : ts_op_reduce_lower(&lx, t);
    if (!low->loc.src) low->loc = s->loc;
    return low;
}

static IrStmt *unkeep(Li *li, IrStmt *s) {
    IrMutator m = {.arena = li->a, .ctx = li, .pre_expr = keep_expr, .pre_stmt = unkeep_op};
    return ir_mutate_stmt(&m, s);
}

/* ---- shared tiles that are per-element staging: fragments ----------------------

 * A shared tile whose every use is elementwise at its own position — whole
 * T.copy from or to a global tensor, T.fill/T.clear of it, and accesses
 * inside T.Parallel nests indexed exactly by the nest's variables — is
 * never read at an element another iteration wrote: no thread ever needs
 * another thread's element of it, whatever the thread mapping.  Such a
 * tile is the fragment a TileLang user would have written had they not
 * staged through shared memory (whole copies from or to a fragment count
 * too: elementwise_add's C_local -> C_shared -> C) (RMSNorm's A_shared: T.copy in, x *= s[i],
 * T.copy out), and layout_inference can keep it in registers with a
 * layout shared with the fragments it meets, turning its copies into
 * 16-byte register vectors without barriers.  This step (run before
 * lower_tile_ops, which would otherwise lower its copies to shared memory)
 * makes such tiles fragments.  Not: kernels with a T.gemm, pipelined tiles (their copies are
 * cp.async producers), swizzled or multi-buffered ones, tiles used by any
 * other tile op or outside such nests, and tiles over 64 elements per
 * thread (registers).  If layout inference later gives up, the tile is a
 * fragment in shared memory, where it was. */

typedef struct Promo {
    IrBuffer *cand[MAXFRAG]; /* shared tiles considered */
    bool bad[MAXFRAG];       /* a use that is not per-element */
    bool copied[MAXFRAG];    /* a whole T.copy to or from global memory */
    int n;
} Promo;

static int promo_of(const Promo *p, const IrBuffer *b) {
    for (int i = 0; i < p->n; i++)
        if (p->cand[i] == b) return i;
    return -1;
}

static void promo_access(IrVisitor *v, const IrAccess *acc) {
    Promo *p = v->ctx;
    int c = promo_of(p, acc->buf);
    if (c < 0) return;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    if (acc->region) {
        const IrTileOp *op = s && s->kind == IR_S_TILEOP ? s->op : NULL;
        bool ok = op && op_region_whole(acc->region) && !op->async &&
                  ((op->kind == TS_OP_FILL && op->nr >= 1 && op->r[0].buf == acc->buf) ||
                   (op->kind == TS_OP_COPY && op->nr == 2 && op->r[0].buf != op->r[1].buf &&
                    (op->r[op->r[0].buf == acc->buf ? 1 : 0].buf->scope == IR_SCOPE_GLOBAL ||
                     (op->r[op->r[0].buf == acc->buf ? 1 : 0].buf->scope == IR_SCOPE_FRAGMENT &&
                      op_region_whole(&op->r[op->r[0].buf == acc->buf ? 1 : 0])))));
        if (ok && op->kind == TS_OP_COPY) p->copied[c] = true;
        if (!ok) p->bad[c] = true;
        return;
    }
    /* an element access: inside a T.Parallel nest, indexed by its variables */
    const IrStmt *outer = NULL;
    for (const IrWalkFrame *f = v->frame; f; f = f->up)
        if (f->s->kind == IR_S_FOR && f->s->for_.kind == IR_FOR_PARALLEL) outer = f->s;
    TsNest ns;
    if (!outer || !acc->idx || acc->lanes != 1 || !ts_nest_get((IrStmt *)outer, &ns)) {
        p->bad[c] = true;
        return;
    }
    TsFragAcc x = {(IrBuffer *)acc->buf, acc->idx, acc->nidx};
    if (!ts_nest_full_access(&x, &ns)) p->bad[c] = true;
}

static bool is_role(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_ROLE;
}

static bool is_gemm(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM;
}

void ts_pass_shared_to_fragment(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    int nt = (int)ir_kernel_nthreads(k);
    if (!cx->caps->layout || cx->caps->sm < 80 || nt % 32 || k->may_block || ir_stmt_any(k->body, is_role, NULL)) return;
    /* (kernels with tensor-core gemms keep their tiles: the epilogue of an
     * mma accumulator through a shared tile is the coalesced store) */
    if (ir_stmt_any(k->body, is_gemm, NULL)) return;
    Promo p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < k->buffers.n && p.n < MAXFRAG; i++) {
        IrBuffer *b = k->buffers.v[i];
        int64_t e, total = 1;
        bool ok = b->scope == IR_SCOPE_SHARED && b->stages <= 1 && b->swizzle.kind == IR_SWIZZLE_NONE &&
                  !ir_buffer_has_view(k, b) && /* (its uses under a view's name are not seen here) */
                  !b->swizzle_annotated &&
                  b->ndim >= 1 && b->ndim <= MAXNEST && !b->layout;
        for (int d = 0; ok && d < b->ndim; d++) {
            /* (tiles over 64 registers per thread are not taken: the product stops there) */
            ok = ir_is_const_int(b->shape[d], &e) && e > 0 && e <= 64 * (int64_t)nt && total <= 64 * (int64_t)nt;
            total *= ok ? e : 1;
        }
        if (ok && total % nt == 0 && total / nt <= 64) p.cand[p.n++] = b;
    }
    if (!p.n) return;
    IrVisitor v;
    memset(&v, 0, sizeof v);
    v.ctx = &p;
    v.access = promo_access;
    ir_visit_stmt(&v, k->body);
    for (int i = 0; i < p.n; i++)
        if (!p.bad[i] && p.copied[i]) p.cand[i]->scope = IR_SCOPE_FRAGMENT;
}

/* A T.Parallel loop that touches both fragments and shared memory. */
static bool frag_shared_nest(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PARALLEL &&
           ir_stmt_access_rw(s, NULL, 1u << IR_SCOPE_FRAGMENT) && ir_stmt_access_rw(s, NULL, 1u << IR_SCOPE_SHARED);
}

/* The widest vector a warp-rows layout may give one thread: 16 bytes of
 * the widest fragment element type, or 1 (no vectors) when some nest over
 * fragments also reads or writes shared memory, or vectors are off. */
static int pick_vec(const Li *li) {
    int eb = 1;
    for (int f = 0; f < li->lx.nfrag; f++) {
        int b = ts_dtype_bits(li->lx.frag[f]->dt) / 8;
        if (b > eb) eb = b;
    }
    if (!li->cx->caps->vec || eb > 8 || ir_stmt_any(li->k->body, frag_shared_nest, NULL)) return 1;
    return 16 / eb;
}

/* The register budget of one fragment: at most this many registers per
 * thread (255 is what a thread can address at all; the kernel's other
 * values need some too).  A fragment over it stays in shared memory, the
 * others keep their registers: inference runs again without it, where it
 * is a shared buffer to the loops and ops that touch it. */
enum { REG_BUDGET = 255 };

/* The 32-bit registers of fragment f per thread: its elements packed, two
 * 16-bit or four 8-bit ones to a register.  (The CUDA target loads and
 * stores them in vectors of whole registers, and the gemm's operands are
 * pairs: ptxas keeps such a tile packed.  The AMD MLA decode's 64 x 512
 * float16 Q tile on 4 warps is 256 halves, 128 registers.) */
static int64_t frag_regs(const Li *li, int f) {
    const IrLayout *l = li->lx.lay[f];
    int bits = ts_dtype_bits(li->lx.frag[f]->dt);
    if (bits <= 0 || bits > 32) bits = 32;
    return (l->local_size * bits + 31) / 32;
}

static bool over_budget(const Li *li) {
    for (int f = 0; f < li->lx.nfrag; f++)
        if (li->lx.lay[f] && frag_regs(li, f) > REG_BUDGET) return true;
    return false;
}

/* Fragments over the budget that stay in registers anyway: at most this
 * many per thread (ptxas spills what does not fit; 2 KB of local memory
 * per thread at most). */
enum { SPILL_CAP = 512 };

/* The bytes of a buffer's elements (stages included), 0 if not constant. */
static int64_t buffer_bytes(const IrBuffer *b) {
    int64_t n = (ts_dtype_bits(b->dt) + 7) / 8 * (b->stages > 1 ? b->stages : 1), c;
    for (int d = 0; d < b->ndim; d++) {
        if (!ir_is_const_int(b->shape[d], &c) || c < 0 || __builtin_mul_overflow(n, c, &n)) return 0;
    }
    return n;
}

/* The fragments over the register budget stay in registers (li->spill),
 * with a warning naming them, where keeping them in shared memory is not
 * expected to fit: the block's shared buffers and these fragments together
 * are more bytes than a block may use.  The count is taken before
 * plan_smem's reuse of bytes between buffers whose lives do not overlap
 * (which runs much later), so it is an estimate: a block it sends to
 * registers might have fitted with reuse (then the fragment spills where
 * shared memory would have done), one it keeps in shared memory fits.
 * TileLang leaves such a fragment to ptxas, which spills it to local
 * memory (dsa_sparse_finetune's sparse MLA backward: acc_dq, 64 x 512
 * float32 on 128 threads, 256 registers; 319,008 bytes in shared memory
 * after reuse, over sm_90's 232,448).  Each must be at most SPILL_CAP
 * registers. */
static void keep_spilled(Li *li) {
    long long limit = li->cx->caps->smem_max;
    if (limit <= 0) return;
    int64_t bytes = 0;
    for (int i = 0; i < li->k->buffers.n; i++)
        if (li->k->buffers.v[i]->scope == IR_SCOPE_SHARED && !li->k->buffers.v[i]->base)
            bytes += buffer_bytes(li->k->buffers.v[i]);
    TsBuf names = {0};
    TsLoc at = {0};
    for (int f = 0; f < li->lx.nfrag; f++) {
        int64_t r = frag_regs(li, f);
        if (!li->lx.lay[f] || r <= REG_BUDGET) continue;
        if (r > SPILL_CAP) {
            ts_buf_free(&names);
            return;
        }
        bytes += buffer_bytes(li->lx.frag[f]);
        if (!at.src) at = li->lx.frag[f]->loc;
        ts_buf_printf(&names, "%s%s (%lld registers per thread)", names.n ? ", " : "", li->lx.frag[f]->name, (long long)r);
    }
    if (bytes > limit) {
        li->spill = true;
        ts_warn_at(li->cx->diag, at,
                   "fragments over the register budget of %d per thread stay in registers (ptxas spills what does not "
                   "fit): %s; in shared memory the block's buffers would need %lld bytes before reuse, over the %lld a "
                   "block may use",
                   REG_BUDGET, names.oom ? "?" : ts_buf_str(&names), (long long)bytes, limit);
    }
    ts_buf_free(&names);
}

/* ---- T.ws roles: the fragments of each role over its own threads ---------------

 * In a warp-specialised kernel (IR_S_ROLE, from T.ws or pass thread_roles)
 * a role's tile ops are the work of its threads only, so a fragment used
 * inside one role is laid out over that role's threads: the layouts number
 * them from 0 (a role of 128 consumer threads doing T.gemm gets the mma.sync
 * accumulator layout of its 4 warps) and the thread loops run over the
 * role's range [lo, lo + n) with the layout's thread t - lo
 * (ts_layout_thread_loops).  Inference and lowering run once per role
 * (threads lo, n), each round seeing only that role's fragments and
 * entering only that role's statements (a role may be several IR_S_ROLE
 * statements of the same threads, e.g. one per loop iteration).  A
 * fragment touched by two roles, or by a role and the block's code outside
 * the roles, has no one set of threads to live on: the whole kernel keeps
 * its fragments in shared memory as before, with a warning naming the
 * fragment and both (the documented choice; the program's mbarriers order
 * such a hand-over through memory, which registers cannot do).  All or
 * nothing over the roles too. */

/* Which threads use each fragment: the role's (lo, n), or lo -1 (the
 * block's code outside every role); n 0: not seen yet. */
typedef struct RoleMap {
    Li *li;
    int lo[MAXFRAG], n[MAXFRAG]; /* per fragment (index into lx.frag) */
    TsLoc at[MAXFRAG];           /* where that use is */
} RoleMap;

static const char *role_words(TsArena *a, int lo, int n) {
    return lo < 0 ? "the block's code outside the T.ws roles"
                  : ts_sprintf(a, "the T.ws role of threads [%d, %d)", lo, lo + n);
}

static void role_access(IrVisitor *v, const IrAccess *acc) {
    RoleMap *rm = v->ctx;
    Li *li = rm->li;
    int f = ts_layout_frag(&li->lx, acc->buf);
    if (f < 0 || li->lx.why) return;
    int lo = -1, n = -1;
    for (const IrWalkFrame *fr = v->frame; fr; fr = fr->up)
        if (fr->s->kind == IR_S_ROLE) {
            lo = fr->s->role.lo, n = fr->s->role.n;
            break;
        }
    TsLoc at = v->frame ? v->frame->s->loc : (TsLoc){0};
    if (!rm->n[f]) {
        rm->lo[f] = lo, rm->n[f] = n, rm->at[f] = at;
        return;
    }
    if (rm->lo[f] == lo && rm->n[f] == n) return;
    TsBuf b = {0};
    ts_buf_printf(&b, "fragment %s is used by %s", acc->buf->name, role_words(li->a, rm->lo[f], rm->n[f]));
    ts_layout_put_at(&b, rm->at[f]);
    ts_buf_printf(&b, " and by %s", role_words(li->a, lo, n));
    ts_layout_put_at(&b, at);
    ts_buf_puts(&b, ": a fragment lives in the registers of one role's threads");
    ts_layout_conflict(&li->lx, at, "%s", b.oom ? "out of memory" : ts_buf_str(&b));
    ts_buf_free(&b);
}

/* Infer and lower the fragments lx.frag[0 .. nfrag) over threads [lx.lo,
 * lx.lo + lx.nt) (the block's, or one role's): the body, lowered (NULL on
 * giving up, lx.why set); each fragment's layout is left in lx.lay. */
static IrStmt *lay_out(Li *li, IrStmt *body) {
    IrKernel *k = li->k;
    li->lx.vec = pick_vec(li);
    infer_all(li, body);
    for (int f = 0; f < li->lx.nfrag && !li->lx.why; f++) {
        if (!li->lx.lay[f]) {
            ts_layout_give_up(&li->lx, "no use of fragment %s fixes its layout", li->lx.frag[f]->name);
            break;
        }
        /* (ir_layout_check, native maps against the IR expressions, is
         * what tests/unit/test_layout.c runs for every family over many
         * parameters; at 1 M expression evaluations per 128 x 128 tile it
         * is too slow for every compile) */
        if (frag_regs(li, f) > 255) ts_layout_give_up(&li->lx, "fragment %s needs %lld registers per thread", li->lx.frag[f]->name,
                                                 (long long)frag_regs(li, f));
        IrExpr *shp = ir_i32(li->a, li->lx.lay[f]->local_size);
        const char *nm = ts_sprintf(li->a, "%s_reg", li->lx.frag[f]->name);
        li->reg[f] = ir_buffer(k, nm, li->lx.frag[f]->dt, IR_SCOPE_LOCAL, 1, &shp, li->lx.frag[f]->loc);
        li->reg[f]->layout = li->lx.lay[f];
    }
    IrStmt *r = li->lx.why ? NULL : lower_all(li, body);
    return li->lx.why ? NULL : r;
}

/* The role kernel's fragments, one role at a time (see above): the lowered
 * body, or NULL (lx.why set).  The layouts found go to lay[] (by buffer
 * index into all[0 .. nall)). */
static IrStmt *lay_out_roles(Li *li, IrBuffer *const *all, int nall, IrLayout **lay) {
    RoleMap rm;
    memset(&rm, 0, sizeof rm);
    rm.li = li;
    IrVisitor v;
    memset(&v, 0, sizeof v);
    v.ctx = &rm;
    v.access = role_access;
    ir_visit_stmt(&v, li->k->body);
    if (li->lx.why) return NULL;
    for (int f = 0; f < nall; f++) {
        if (!rm.n[f]) continue; /* never used (a body elaborated once per unit leaves its first try) */
        if (rm.lo[f] < 0) {
            ts_layout_give_up(&li->lx, "fragment %s is used outside the T.ws roles of its kernel", all[f]->name);
            return NULL;
        }
    }
    IrStmt *body = li->k->body;
    bool done[MAXFRAG] = {false};
    for (int g = 0; g < nall; g++) {
        if (done[g] || !rm.n[g]) continue;
        /* the round of the role of fragment g: its fragments, its threads */
        li->lx.nfrag = 0;
        int idx[MAXFRAG];
        for (int f = g; f < nall; f++)
            if (!done[f] && rm.lo[f] == rm.lo[g] && rm.n[f] == rm.n[g]) {
                done[f] = true;
                idx[li->lx.nfrag] = f;
                li->lx.frag[li->lx.nfrag] = all[f];
                li->lx.lay[li->lx.nfrag++] = NULL;
            }
        li->lx.lo = rm.lo[g];
        li->lx.nt = li->nt = rm.n[g];
        if (li->nt % 32 || li->lx.lo % 32) {
            ts_layout_give_up(&li->lx, "the T.ws role of threads [%d, %d) is not whole warps", li->lx.lo,
                              li->lx.lo + li->nt);
            return NULL;
        }
        body = lay_out(li, body);
        if (!body) return NULL;
        for (int f = 0; f < li->lx.nfrag; f++) lay[idx[f]] = li->lx.lay[f];
    }
    return body;
}

/* A kernel with T.ws roles: its fragments, one role at a time (see above;
 * no register budget split: a role's fragment over it gives up). */
static void layout_roles(Li *li) {
    TsPassCtx *cx = li->cx;
    IrKernel *k = li->k;
    /* every fragment, and the layout each gets (each round sees only its own in lx) */
    int nall = li->lx.nfrag;
    IrBuffer *all[MAXFRAG];
    IrLayout *lay[MAXFRAG];
    for (int f = 0; f < nall; f++) all[f] = li->lx.frag[f], lay[f] = NULL;
    IrStmt *body = li->lx.why ? NULL : lay_out_roles(li, all, nall, lay);
    if (li->lx.why) {
        k->layout_note = li->lx.why;
        if (li->lx.conflict) /* the user wrote something that cannot be fast: say so */
            ts_warn_at(cx->diag, li->lx.conflict_at, "%s; the kernel's fragments stay in shared memory (correct, not fast)",
                       li->lx.why);
        for (int f = 0; f < nall; f++) all[f]->layout = NULL;
        k->body = unkeep(li, k->body);
        return;
    }
    for (int f = 0; f < nall; f++) all[f]->layout = lay[f];
    for (int i = 0; i < li->nfin; i++) li->fin[i].fn(k, cx->caps, li->fin[i].buf);
    li->nt = li->lx.nt = (int)ir_kernel_nthreads(k);
    li->lx.lo = 0;
    if (cx->caps->pipeline) body = prefetch(li, body);
    k->body = body; /* the fragments, now unused, keep their layouts for the layout pictures */
}

static void infer_kernel(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    Li li;
    memset(&li, 0, sizeof li);
    li.cx = cx;
    li.k = k;
    li.a = cx->arena;
    li.nt = (int)ir_kernel_nthreads(k);
    li.lx.arena = li.a;
    li.lx.k = k;
    li.lx.nt = li.nt;
    ir_arith_init(&li.ar, li.a, k);
    for (int i = 0; i < k->buffers.n; i++)
        if (k->buffers.v[i]->scope == IR_SCOPE_FRAGMENT) {
            if (li.lx.nfrag == MAXFRAG) {
                ts_layout_give_up(&li.lx, "more than %d fragments", MAXFRAG);
                break;
            }
            li.lx.frag[li.lx.nfrag++] = k->buffers.v[i];
        }
    if (!cx->caps->layout || cx->caps->sm < 80) ts_layout_give_up(&li.lx, "register fragments are off for this target");
    li.roles = ir_stmt_any(k->body, is_role, NULL);
    if (li.roles && !cx->caps->ws_layout)
        ts_layout_give_up(&li.lx, "T.ws roles: fragment layouts over a role's threads are off (TILESCALE_CUDA_WS_LAYOUT)");
    if (li.nt % 32 || li.nt > 1024) ts_layout_give_up(&li.lx, "%d threads is not a whole number of warps", li.nt);
    if (!li.lx.nfrag) {
        k->body = unkeep(&li, k->body);
        return;
    }
    if (li.roles) {
        layout_roles(&li);
        return;
    }
    li.lx.vec = pick_vec(&li);
    infer_all(&li, k->body);
    if (!li.lx.why && over_budget(&li)) keep_spilled(&li);
    if (!li.lx.why && !li.spill && over_budget(&li)) { /* again without the fragments over the register budget */
        Li l2;
        memset(&l2, 0, sizeof l2);
        l2.cx = cx, l2.k = k, l2.a = li.a, l2.nt = li.nt;
        l2.lx.arena = li.a, l2.lx.k = k, l2.lx.nt = li.nt;
        ir_arith_init(&l2.ar, l2.a, k);
        TsBuf kept = {0};
        TsLoc at = {0};
        for (int f = 0; f < li.lx.nfrag; f++)
            if (frag_regs(&li, f) > REG_BUDGET && (at = at.src ? at : li.lx.frag[f]->loc, true))
                ts_buf_printf(&kept, "%s%s (%lld registers per thread)", kept.n ? ", " : "", li.lx.frag[f]->name,
                              (long long)frag_regs(&li, f));
            else l2.lx.frag[l2.lx.nfrag++] = li.lx.frag[f];
        for (int f = 0; f < li.lx.nfrag; f++)
            if (frag_regs(&li, f) > REG_BUDGET) l2.over[l2.nover++] = li.lx.frag[f];
        l2.lx.vec = li.lx.vec;
        li = l2;
        infer_all(&li, k->body);
        if (!li.lx.why && over_budget(&li)) ts_layout_give_up(&li.lx, "fragments over the register budget");
        if (!li.lx.why)
            ts_warn_at(cx->diag, at, "fragments over the register budget of %d per thread stay in shared memory: %s",
                       REG_BUDGET, kept.oom ? "?" : ts_buf_str(&kept));
        ts_buf_free(&kept);
    }
    for (int f = 0; f < li.lx.nfrag && !li.lx.why; f++) {
        if (!li.lx.lay[f]) {
            ts_layout_give_up(&li.lx, "no use of fragment %s fixes its layout", li.lx.frag[f]->name);
            break;
        }
        /* (ir_layout_check, native maps against the IR expressions, is
         * what tests/unit/test_layout.c runs for every family over many
         * parameters; at 1 M expression evaluations per 128 x 128 tile it
         * is too slow for every compile) */
        if (frag_regs(&li, f) > (li.spill ? SPILL_CAP : 255))
            ts_layout_give_up(&li.lx, "fragment %s needs %lld registers per thread", li.lx.frag[f]->name,
                              (long long)frag_regs(&li, f));
        IrExpr *shp = ir_i32(li.a, li.lx.lay[f]->local_size);
        const char *nm = ts_sprintf(li.a, "%s_reg", li.lx.frag[f]->name);
        li.reg[f] = ir_buffer(k, nm, li.lx.frag[f]->dt, IR_SCOPE_LOCAL, 1, &shp, li.lx.frag[f]->loc);
        li.reg[f]->layout = li.lx.lay[f];
    }
    IrStmt *body = li.lx.why ? NULL : lower_all(&li, k->body);
    if (li.lx.why) {
        k->layout_note = li.lx.why;
        if (li.lx.conflict) /* the user wrote something that cannot be fast: say so */
            ts_warn_at(cx->diag, li.lx.conflict_at, "%s; the kernel's fragments stay in shared memory (correct, not fast)",
                       li.lx.why);
        for (int f = 0; f < li.lx.nfrag; f++) li.lx.frag[f]->layout = NULL;
        k->body = unkeep(&li, k->body);
        return;
    }
    for (int f = 0; f < li.lx.nfrag; f++) li.lx.frag[f]->layout = li.lx.lay[f];
    for (int i = 0; i < li.nfin; i++) li.fin[i].fn(k, cx->caps, li.fin[i].buf);
    if (cx->caps->pipeline) body = prefetch(&li, body);
    k->body = body; /* the fragments, now unused, keep their layouts for the layout pictures */
}

void ts_pass_layout_inference(TsPassCtx *cx) {
    infer_kernel(cx);
    ts_op_gemm_plain_operands(cx->k);
}
