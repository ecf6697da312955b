/*
 * partition_threads.c — the CUDA pass that makes a kernel body entirely
 * thread-level IR (issue 5, Part 0: decisions belong in passes; the code
 * generator prints what the IR says).
 *
 * After layout inference and the copy lowering most of a CUDA kernel is
 * already per thread (IR_FOR_THREAD loops over registers, vector copies).
 * What is left is block-level code, whose meaning in TileLang is "every
 * thread of the block runs it, with the same values" (uniform code), plus
 * three constructs that cannot mean that:
 *
 *  1. A T.Parallel nest in uniform code (one or several perfectly nested
 *     parallel loops whose extents do not depend on each other): its
 *     iterations are spread cyclically over the threads.  The nest is
 *     flattened, iteration L goes to thread L % NT in round L / NT:
 *
 *         for t in thread_range(NT):                 (thread_range(total)
 *             for r in unroll(rounds):                when one round does)
 *                 if t + r * NT < total:             (only when NT does
 *                     body[v_i := min_i + (L // inner_i) % ext_i]  not divide it)
 *
 *     with run-time extents bound by lets first (evaluated uniformly, so
 *     insert_sync sees their loads as reads by every thread).  Consecutive
 *     threads take consecutive iterations of the innermost loop: accesses
 *     along a row coalesce.  Inner T.Parallel loops of the body become
 *     plain serial loops of the thread.
 *  2. A store, atomic add or T.print whose target is memory the threads
 *     share (shared, fragment-in-shared or global buffers) and whose
 *     values are uniform: every thread would write the same value to the
 *     same place, so one thread does it, in a thread role
 *     `for t in thread_range(1)`.
 *  3. Control flow whose condition or bounds differ between threads (a
 *     value derived from T.get_thread_binding, from a thread-range loop or
 *     from a register written in one): it runs per thread, wrapped in
 *     `for t in thread_range(NT)`, so that later passes (insert_sync) see
 *     it as thread-level code where no barrier may go.  A store whose
 *     index or value differs between threads is wrapped the same way
 *     (each thread stores its own).
 *
 * A communication op whose operands differ between threads is wrapped
 * the same way (each thread, or each warp for the *_warp primitives, does
 * its own: TileScale's warp-level code).
 *
 * Everything else (lets, allocations, private stores, uniform loops and
 * ifs, tensor-core gemms and communication ops, which are collective,
 * async commits and waits, barriers) stays uniform.  After this pass the
 * uniform part of the body has no T.Parallel loop and writes no shared or
 * global memory outside a thread range; the code generator needs no
 * uniformity analysis and places no thread guards of its own.
 *
 * "Differs between threads" is a small forward analysis run to a fixed
 * point (the values of a loop may depend on later statements of its body):
 * the flat thread index and T.get_thread_binding values, variables of
 * thread-range and parallel loops and everything bound inside them, lets
 * of such values, and private (local/var) buffers written with such values
 * or inside such code.  Loads from shared or global memory are uniform (all
 * threads read the same element after a barrier).
 */
#include "ir/arith.h"
#include "ir/tileop.h"
#include "ir/walk.h"
#include "op/comm.h"
#include "pass/pass.h"

#include <string.h>

enum { MAXNEST = 8 };

typedef struct Part {
    TsPassCtx *cx;
    IrKernel *k;
    TsArena *a;
    int64_t nt;                       /* threads per block; inside a T.ws role, the role's */
    int64_t lo;                       /* inside a T.ws role: its first thread (0 outside); the thread
                                         ranges made there run over [lo, lo + nt) */
    bool role;                        /* inside a T.ws role */
    TS_VEC(bool) vary;                /* the analysis (mark_stmt): whether the statements being
                                         walked run in per-thread code, innermost last */
    TS_VEC(const IrVar *) vvars;      /* variables whose value differs between threads */
    TS_VEC(const IrBuffer *) vbufs;   /* private buffers holding such values */
    bool changed;                     /* the analysis grew this round */
    bool c;                           /* the C target's form (ts_pass_thread_loops_c): T.Parallel
                                         loops stay loops of the block, not of its threads */
    int64_t **one_n;                  /* by mbarrier buffer id, by element: > 0, every arrival on it is a
                                         group's one arrive (IR_MBAR_ARRIVE_ONE) in a T.ws role of this
                                         many threads, made by each of them (one_arrivals); else 0 or -1 */
} Part;

static int64_t one_each(const Part *p, const IrBuffer *b, const IrExpr *idx);

static bool is_private(const IrBuffer *b) { return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR; }

static bool var_varies(const Part *p, const IrVar *v) {
    if (v->kind == IR_VAR_THREAD_IDX) return true;
    for (int i = 0; i < p->vvars.n; i++)
        if (p->vvars.v[i] == v) return true;
    return false;
}

static bool buf_varies(const Part *p, const IrBuffer *b) {
    for (int i = 0; i < p->vbufs.n; i++)
        if (p->vbufs.v[i] == b) return true;
    return false;
}

static void mark_var(Part *p, const IrVar *v) {
    if (var_varies(p, v)) return;
    ts_vec_push(p->a, p->vvars, v);
    p->changed = true;
}

static void mark_buf(Part *p, const IrBuffer *b) {
    if (buf_varies(p, b)) return;
    ts_vec_push(p->a, p->vbufs, b);
    p->changed = true;
}

static bool varying_node(const IrExpr *e, void *ctx) {
    const Part *p = ctx;
    if (ts_warp_call(e, NULL)) return true; /* a warp primitive's value is the lane's own */
    if (e->kind == IR_E_VAR) return var_varies(p, e->var);
    if (e->kind == IR_E_LOAD) return is_private(e->load.buf) && buf_varies(p, e->load.buf);
    return false;
}

/* Can e differ between the threads of a block? */
static bool expr_varies(Part *p, const IrExpr *e) { return e && ir_expr_any(e, varying_node, p); }

/* A communication op whose peer, operands or addresses differ between
 * threads (TileScale's warp-level code: `T.put_warp(src[warp_start], ...)`
 * with warp_start from T.get_thread_binding) is not one op of the whole
 * block: each thread does its own (the CUDA emitter's per-thread form, a
 * warp variant shared by the lanes that call it with one range). */
static bool comm_varies(Part *p, const IrStmt *s) {
    const IrTileOp *op = s->op;
    if (!op || op->kind != TS_OP_COMM) return false;
    for (int i = 0; i < 3; i++)
        if (expr_varies(p, op->args[i])) return true;
    for (int r = 0; r < op->nr; r++)
        for (int d = 0; d < op->r[r].ndim; d++)
            if (expr_varies(p, op->r[r].start[d]) || expr_varies(p, op->r[r].extent[d])) return true;
    return false;
}

/* Do the expressions of s itself (not of its children) differ between threads? */
static bool header_varies(Part *p, const IrStmt *s) {
    switch (s->kind) {
    case IR_S_FOR: return expr_varies(p, s->for_.min) || expr_varies(p, s->for_.extent);
    case IR_S_IF: return expr_varies(p, s->if_.cond);
    case IR_S_WHILE: return expr_varies(p, s->while_.cond);
    case IR_S_MBAR: return expr_varies(p, s->mbar.idx) || expr_varies(p, s->mbar.value);
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        for (int i = 0; i < s->store.nidx; i++)
            if (expr_varies(p, s->store.idx[i])) return true;
        return expr_varies(p, s->store.value);
    case IR_S_LET: return expr_varies(p, s->let.value);
    case IR_S_PRINT: return expr_varies(p, s->print.value) || (s->print.buf && buf_varies(p, s->print.buf));
    case IR_S_EVAL: return expr_varies(p, s->eval.e);
    case IR_S_TILEOP: return comm_varies(p, s);
    default: return false;
    }
}

/* One round of the analysis, through the shared walker (ir/walk.h): the
 * visitor's pre_stmt marks what a statement binds or writes given whether
 * it runs in per-thread code (the top of p->vary), and pushes that for
 * the children of the statements that have some (loops, branches, roles,
 * lists), which post_stmt pops.  Expressions are not entered. */
static bool mark_pre(IrVisitor *v, const IrStmt *s) {
    Part *p = v->ctx;
    bool vary = p->vary.n ? p->vary.v[p->vary.n - 1] : false;
    switch (s->kind) {
    case IR_S_SEQ:
    case IR_S_ROLE: break;
    case IR_S_FOR:
        vary = vary || (!p->c && s->for_.kind == IR_FOR_PARALLEL) || s->for_.kind == IR_FOR_THREAD ||
               header_varies(p, s);
        if (vary) mark_var(p, s->for_.var);
        break;
    case IR_S_IF:
    case IR_S_WHILE: vary = vary || header_varies(p, s); break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if (is_private(s->store.buf) && (vary || header_varies(p, s))) mark_buf(p, s->store.buf);
        return false;
    case IR_S_VCOPY:
        if (is_private(s->vcopy.dst)) mark_buf(p, s->vcopy.dst);
        return false;
    case IR_S_TILEOP: /* T.ld (or T.atom_add's old value) into a register of a thread of its own */
        if (s->op && s->op->kind == TS_OP_COMM && (s->op->comm == TS_COMM_LD || s->op->comm == TS_COMM_ATOM_ADD) &&
            s->op->nr > 1 &&
            is_private(s->op->r[1].buf) && (vary || header_varies(p, s)))
            mark_buf(p, s->op->r[1].buf);
        return false;
    case IR_S_LET:
        if (vary || header_varies(p, s)) mark_var(p, s->let.var);
        return false;
    default: return false;
    }
    ts_vec_push(p->a, p->vary, vary);
    return true;
}

static void mark_post(IrVisitor *v, const IrStmt *s) {
    Part *p = v->ctx;
    switch (s->kind) {
    case IR_S_SEQ:
    case IR_S_ROLE:
    case IR_S_FOR:
    case IR_S_IF:
    case IR_S_WHILE: p->vary.n--; return;
    default: return;
    }
}

static bool mark_expr(IrVisitor *v, const IrExpr *e) {
    (void)v, (void)e;
    return false;
}

/* One round of the analysis over s; `vary`: s runs in per-thread code. */
static void mark_stmt(Part *p, const IrStmt *s, bool vary) {
    IrVisitor v;
    memset(&v, 0, sizeof v);
    v.ctx = p;
    v.pre_stmt = mark_pre;
    v.post_stmt = mark_post;
    v.pre_expr = mark_expr;
    p->vary.n = 0;
    ts_vec_push(p->a, p->vary, vary);
    ir_visit_stmt(&v, s);
}

/* ---- rewriting -------------------------------------------------------------- */

static IrStmt *thread_range(Part *p, const char *name, IrExpr *extent, IrStmt *body, TsLoc loc) {
    IrVar *t = ir_var(p->k, name, TS_INT32, IR_VAR_LOOP);
    IrStmt *f = ir_for(p->a, t, ir_i32(p->a, (int32_t)p->lo), extent, IR_FOR_THREAD, body);
    f->loc = loc;
    return f;
}

/* The thread's index within the threads a nest is spread over (the role's
 * inside a T.ws role). */
static IrExpr *rel_thread(Part *p, IrVar *t) {
    IrExpr *e = ir_var_ref(p->a, t);
    return p->lo ? ir_bin(p->a, IR_SUB, e, ir_i32(p->a, (int32_t)p->lo)) : e;
}

/* Inside per-thread code: T.Parallel loops are plain loops of the thread. */
static IrStmt *serial_post(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PARALLEL) s->for_.kind = IR_FOR_SERIAL;
    return s;
}

static bool is_parallel(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_PARALLEL;
}

static IrStmt *serialize(Part *p, IrStmt *s) {
    if (!ir_stmt_any(s, is_parallel, NULL)) return s;
    IrMutator m = {.arena = p->a, .post_stmt = serial_post, .copy = true};
    return ir_mutate_stmt(&m, s);
}

/* A `break` that would leave the parallel nest itself (not a loop inside it):
 * one in its lists and branches (loops catch their own breaks). */
static bool break_pre(IrVisitor *v, const IrStmt *s) {
    if (s->kind == IR_S_BREAK) v->stop = *(bool *)v->ctx = true;
    return s->kind == IR_S_SEQ || s->kind == IR_S_IF;
}

static bool breaks_out(const IrStmt *s) {
    bool found = false;
    IrVisitor v;
    memset(&v, 0, sizeof v);
    v.ctx = &found;
    v.pre_stmt = break_pre;
    v.pre_expr = mark_expr;
    ir_visit_stmt(&v, s);
    return found;
}

static bool reads_memory(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD;
}

/* ---- vector copies -------------------------------------------------------------
 *
 * A nest whose body is a plain copy `dst[..] = src[..]` between
 * shared/global buffers of one dtype, or a cast between float32 and
 * float16/bfloat16 (a converting IR_S_VCOPY, TsCaps.vec_cast), possibly
 * under guards, moves `V` consecutive elements per iteration (16 bytes of
 * the wider dtype, or 8 or 4) as one IR_S_VCOPY: the
 * innermost variable j must index the last dimension of both as `x + j`
 * and nothing else, its constant extent must be a multiple of V, and a
 * shared side must be provably V-aligned (row strides and x multiples of
 * V).  A guard on j must be `e < bound` with e increasing by one with j.
 * Per vector (j0 .. j0 + V - 1): when every guard holds at j0 + V - 1 the
 * vector moves at once, else its elements run the original body one by one
 * (partial tiles keep their exact semantics).  Global alignment and
 * contiguity are run-time facts the printer tests (IR_S_VCOPY's contract),
 * except for a tensor parameter without declared strides whose last
 * extent is a constant multiple of V and whose vector starts are proven
 * multiples of V: it is taken as compact and aligned to the vector, the
 * launch contract that lower_copy_cuda.c states for the copies into
 * shared memory (IrBuffer.contiguous/.align, checked by the launch), and
 * the copy is marked `aligned` (one move, no run-time test and no
 * element-by-element path beside it: FlashAttention's output store had
 * both, a fifth of its NVRTC compile time).
 */

enum { VEC_MAXCOND = 16 };

/* The coefficient of j in e (an affine integer expression), or 0 if not affine / absent. */
static int64_t coeff_of(IrArith *ar, const IrExpr *e, const IrVar *j) {
    IrAffine f;
    if (!ir_arith_affine(ar, e, false, &f) || !f.affine) return 0;
    return ir_affine_coeff(&f, j);
}

static bool guard_ok(IrArith *ar, const IrExpr *c, const IrVar *j) {
    if (!ir_expr_uses_var(c, j)) return true;
    if (c->kind != IR_E_BIN) return false;
    if (c->bin.op == IR_AND) return guard_ok(ar, c->bin.a, j) && guard_ok(ar, c->bin.b, j);
    return c->bin.op == IR_LT && !ir_expr_uses_var(c->bin.b, j) && coeff_of(ar, c->bin.a, j) == 1;
}

/* idx indexes b with j only in the last dimension, as x + j; aligned: the
 * first element of a vector (j a multiple of v) is v-aligned in b (for a
 * global b: may be tested at run time); *proven (global b): it is, under
 * the launch contract of a compact parameter (see above). */
static bool vec_side(IrArith *ar, const IrBuffer *b, IrExpr *const *idx, int nidx, const IrVar *j, int64_t v,
                     bool *aligned, bool *proven) {
    if (b->ndim < 1 || nidx != b->ndim) return false;
    int last = b->ndim - 1;
    for (int d = 0; d < last; d++)
        if (ir_expr_uses_var(idx[d], j)) return false;
    if (coeff_of(ar, idx[last], j) != 1) return false;
    *aligned = true;
    *proven = false;
    int64_t stride = 1, e;
    if (b->scope == IR_SCOPE_GLOBAL) {
        /* compact with a constant last extent that is a multiple of v: every
         * row starts v-aligned; then x (the start within the row) must be */
        if (b->param < 0 || b->strides || !b->shape || !ir_is_const_int(b->shape[last], &e) || e % v) return true;
        IrAffine f;
        if (!ir_arith_affine(ar, idx[last], false, &f)) return true;
        IrAffine r = f;
        r.t = TS_NEWN(ar->arena, IrAffTerm, f.n ? f.n : 1);
        r.n = 0;
        for (int i = 0; i < f.n; i++)
            if (!(f.t[i].atom->kind == IR_E_VAR && f.t[i].atom->var == j)) r.t[r.n++] = f.t[i];
        *proven = ir_arith_divisible(ar, ir_affine_expr(ar->arena, &r, idx[last]->dt), v);
        return true;
    }
    for (int d = last; d >= 0; d--) {
        IrExpr *x = idx[d];
        if (d == last) {
            IrAffine f;
            if (!ir_arith_affine(ar, x, false, &f)) return false;
            /* x + j with j a multiple of v: x must be one */
            IrAffine r = f;
            r.t = TS_NEWN(ar->arena, IrAffTerm, f.n ? f.n : 1);
            r.n = 0;
            for (int i = 0; i < f.n; i++)
                if (!(f.t[i].atom->kind == IR_E_VAR && f.t[i].atom->var == j)) r.t[r.n++] = f.t[i];
            if (!ir_arith_divisible(ar, ir_affine_expr(ar->arena, &r, x->dt), v)) *aligned = false;
        } else if (stride % v) {
            *aligned = false;
        }
        if (!ir_is_const_int(b->shape[d], &e)) return false;
        stride *= e;
    }
    return true;
}

/* The copy nest lv[0..n) (constant extents ext[], product total) as vector
 * copies, or NULL when it is not one (see above). */
static IrStmt *vector_copy(Part *p, const IrWalkFrame *frame, IrStmt *const *lv, int n, const int64_t *ext,
                           int64_t total) {
    TsArena *a = p->a;
    const TsCaps *caps = p->cx->caps;
    if (!caps || !caps->vec || p->k->may_block || n < 1) return NULL;
    const IrVar *j = lv[n - 1]->for_.var;
    int64_t c;
    if (!ir_is_const_int(lv[n - 1]->for_.min, &c) || c != 0) return NULL;
    for (int i = 0; i < n; i++)
        if (!ir_is_const_int(lv[i]->for_.min, &c)) return NULL;
    IrArith ar;
    ir_arith_init(&ar, a, p->k);
    /* the enclosing loops' ranges: a tile start `k * 64` in a K loop is
     * affine only when k cannot wrap (else its vectors went element by
     * element: the ws GEMMs' A copy, 64 scalar loads per thread and tile) */
    ar.frame = frame;
    for (int i = 0; i < n; i++) {
        ir_is_const_int(lv[i]->for_.min, &c);
        ir_arith_bind(&ar, lv[i]->for_.var, c, c + ext[i] - 1);
    }
    const IrExpr *cond[VEC_MAXCOND];
    int ncond = 0;
    const IrStmt *st = lv[n - 1]->for_.body;
    for (;;) {
        while (st && st->kind == IR_S_SEQ && st->seq.n == 1) st = st->seq.v[0];
        if (!st || st->kind != IR_S_IF) break;
        if (st->if_.else_ || ncond == VEC_MAXCOND || !guard_ok(&ar, st->if_.cond, j)) return NULL;
        cond[ncond++] = st->if_.cond;
        st = st->if_.then;
    }
    if (!st || st->kind != IR_S_STORE) return NULL;
    const IrExpr *val = st->store.value;
    const IrBuffer *db = st->store.buf;
    if (val && val->kind == IR_E_CAST && val->dt == db->dt) val = val->un.a;
    if (!val || val->kind != IR_E_LOAD || val->load.buf == db) return NULL;
    if (val->load.bits || st->store.bits) return NULL; /* stored bits (a view of another dtype): element by element */
    const IrBuffer *sb = val->load.buf;
    /* a casting copy (float32 <-> float16/bfloat16) converts as it moves */
    if (sb->dt != db->dt && (!caps->vec_cast || !ir_vcopy_dtypes_ok(db->dt, sb->dt))) return NULL;
    if (is_private(db) || is_private(sb) || db->scope == IR_SCOPE_FRAGMENT || sb->scope == IR_SCOPE_FRAGMENT)
        return NULL;
    int bits = ts_dtype_bits(db->dt), sbits = ts_dtype_bits(sb->dt);
    if (bits % 8 || bits < 8 || bits > 64) return NULL;
    int es = (sbits > bits ? sbits : bits) / 8; /* lanes: 16 bytes (or 8, 4) of the wider side */
    int64_t v = 0;
    bool dproven = false, sproven = false;
    for (int vb = 16; vb >= 4 && !v; vb /= 2) {
        if (vb <= es || vb % es || ext[n - 1] % (vb / es)) continue;
        bool da, sa;
        if (!vec_side(&ar, db, st->store.idx, st->store.nidx, j, vb / es, &da, &dproven) ||
            !vec_side(&ar, sb, val->load.idx, val->load.nidx, j, vb / es, &sa, &sproven))
            return NULL;
        if (da && sa) v = vb / es;
    }
    if (!v) return NULL;
    /* iterations: vectors instead of elements along j */
    int64_t nvec = total / v, extv = ext[n - 1] / v;
    int64_t rounds = (nvec + p->nt - 1) / p->nt;
    IrVar *t = ir_var(p->k, "t", TS_INT32, IR_VAR_LOOP);
    IrVar *r = rounds > 1 ? ir_var(p->k, "r", TS_INT32, IR_VAR_LOOP) : NULL;
    IrExpr *L = rel_thread(p, t);
    if (r) L = ir_bin(a, IR_ADD, L, ir_bin(a, IR_MUL, ir_var_ref(a, r), ir_i32(a, p->nt)));
    IrVar *from[MAXNEST];
    IrExpr *to[MAXNEST];
    for (int i = 0; i < n; i++) {
        int64_t inner = 1;
        for (int k = i + 1; k < n; k++) inner *= k == n - 1 ? extv : ext[k];
        IrExpr *x = inner != 1 ? ir_bin(a, IR_FLOORDIV, L, ir_i32(a, inner)) : L;
        if (i > 0) x = ir_bin(a, IR_FLOORMOD, x, ir_i32(a, i == n - 1 ? extv : ext[i]));
        if (i == n - 1) x = ir_bin(a, IR_MUL, x, ir_i32(a, v));
        x = ir_cast(a, lv[i]->for_.var->dt, x);
        if (ir_is_const_int(lv[i]->for_.min, &c) && c != 0) x = ir_bin(a, IR_ADD, lv[i]->for_.min, x);
        from[i] = lv[i]->for_.var;
        to[i] = x;
    }
    /* the fast path's test: every guard at j0 + v - 1 */
    IrExpr *last = ir_bin(a, IR_ADD, to[n - 1], ir_int(a, v - 1, to[n - 1]->dt));
    IrExpr *full = NULL;
    for (int i = 0; i < ncond; i++) {
        IrExpr *g = ir_subst(a, (IrExpr *)cond[i], from, to, n - 1);
        IrVar *jj[1] = {(IrVar *)j};
        g = ir_subst(a, g, jj, &last, 1);
        full = full ? ir_bin(a, IR_AND, full, g) : g;
    }
    IrStmt *vc = ir_stmt(a, IR_S_VCOPY, st->loc);
    vc->vcopy.dst = (IrBuffer *)db;
    vc->vcopy.src = (IrBuffer *)sb;
    vc->vcopy.ndi = db->ndim;
    vc->vcopy.nsi = sb->ndim;
    vc->vcopy.didx = TS_NEWN(a, IrExpr *, db->ndim);
    vc->vcopy.sidx = TS_NEWN(a, IrExpr *, sb->ndim);
    for (int d = 0; d < db->ndim; d++) vc->vcopy.didx[d] = ir_subst(a, st->store.idx[d], from, to, n);
    for (int d = 0; d < sb->ndim; d++) vc->vcopy.sidx[d] = ir_subst(a, val->load.idx[d], from, to, n);
    vc->vcopy.lanes = (int)v;
    /* one global side, same dtype, proven aligned: one move (the launch
     * checks the contract; a wider vector elsewhere raises the alignment) */
    bool dg = db->scope == IR_SCOPE_GLOBAL, sg = sb->scope == IR_SCOPE_GLOBAL;
    if (caps->store_align && dg != sg && db->dt == sb->dt && (dg ? dproven : sproven)) {
        IrBuffer *G = (IrBuffer *)(dg ? db : sb);
        G->contiguous = 1;
        if (G->align < v * (bits / 8)) G->align = (int)(v * (bits / 8));
        vc->vcopy.aligned = 1;
    }
    IrStmt *body = vc;
    if (full) {
        /* a partial vector: its elements one by one, with the original guards */
        IrVar *e = ir_var(p->k, "e", TS_INT32, IR_VAR_LOOP);
        IrExpr *je = ir_bin(a, IR_ADD, to[n - 1], ir_cast(a, to[n - 1]->dt, ir_var_ref(a, e)));
        IrExpr *to2[MAXNEST];
        for (int i = 0; i < n; i++) to2[i] = i == n - 1 ? je : to[i];
        IrStmt *one = serialize(p, ir_stmt_subst(a, lv[n - 1]->for_.body, from, to2, n));
        IrStmt *slow = ir_for(a, e, ir_i32(a, 0), ir_i32(a, v), IR_FOR_UNROLL, one);
        slow->loc = st->loc;
        IrStmt *g = ir_stmt(a, IR_S_IF, st->loc);
        g->if_.cond = full;
        g->if_.then = vc;
        g->if_.else_ = slow;
        body = g;
    }
    if (rounds * p->nt != nvec && rounds > 1) {
        IrStmt *g = ir_stmt(a, IR_S_IF, st->loc);
        g->if_.cond = ir_bin(a, IR_LT, L, ir_i32(a, nvec));
        g->if_.then = body;
        body = g;
    }
    if (r) {
        body = ir_for(a, r, ir_i32(a, 0), ir_i32(a, rounds), rounds <= 16 ? IR_FOR_UNROLL : IR_FOR_SERIAL, body);
        body->loc = st->loc;
    }
    IrStmt *f = ir_for(a, t, ir_i32(a, (int32_t)p->lo), ir_i32(a, rounds == 1 ? nvec : p->nt), IR_FOR_THREAD, body);
    f->loc = lv[0]->loc;
    return f;
}

/* Case 1 of the essay: the T.Parallel nest starting at s, spread over the threads. */
static IrStmt *partition_nest(Part *p, const IrWalkFrame *frame, IrStmt *s) {
    TsArena *a = p->a;
    IrStmt *lv[MAXNEST];
    int n = 0;
    IrStmt *cur = s;
    for (;;) {
        lv[n++] = cur;
        IrStmt *b = cur->for_.body;
        while (b && b->kind == IR_S_SEQ && b->seq.n == 1) b = b->seq.v[0];
        if (n == MAXNEST || !b || b->kind != IR_S_FOR || b->for_.kind != IR_FOR_PARALLEL) break;
        bool dep = false;
        for (int i = 0; i < n; i++)
            dep |= ir_expr_uses_var(b->for_.extent, lv[i]->for_.var) || ir_expr_uses_var(b->for_.min, lv[i]->for_.var);
        if (dep) break;
        cur = b;
    }
    IrStmt *body = lv[n - 1]->for_.body;
    if (breaks_out(body))
        ts_fail_at(p->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "'break' out of a T.Parallel loop is not supported on the CUDA target");
    IrStmt *out = ir_seq(a);
    out->loc = s->loc;
    /* extents: constants, or values bound once by uniform lets */
    int64_t ext[MAXNEST], total = 1;
    bool all_const = true;
    IrExpr *eexp[MAXNEST], *mins[MAXNEST];
    for (int i = 0; i < n; i++) {
        mins[i] = lv[i]->for_.min;
        if (ir_expr_any(mins[i], reads_memory, NULL)) {
            IrVar *v = ir_var(p->k, "par_min", mins[i]->dt, IR_VAR_LET);
            IrStmt *l = ir_stmt(a, IR_S_LET, s->loc);
            l->let.var = v;
            l->let.value = mins[i];
            ir_seq_push(a, out, l);
            mins[i] = ir_var_ref(a, v);
        }
        if (ir_is_const_int(lv[i]->for_.extent, &ext[i])) {
            if (ext[i] < 0) ext[i] = 0;
            if (total < ((int64_t)1 << 40)) total *= ext[i];
            eexp[i] = ir_int(a, ext[i], TS_INT64);
            continue;
        }
        all_const = false;
        IrVar *v = ir_var(p->k, "par_n", TS_INT64, IR_VAR_LET);
        IrStmt *l = ir_stmt(a, IR_S_LET, s->loc);
        l->let.var = v;
        l->let.value = ir_bin(a, IR_MAX, ir_cast(a, TS_INT64, lv[i]->for_.extent), ir_int(a, 0, TS_INT64));
        ir_seq_push(a, out, l);
        eexp[i] = ir_var_ref(a, v);
    }
    bool small = all_const && total < ((int64_t)1 << 31);
    TsDType it = small ? TS_INT32 : TS_INT64;
    IrExpr *ntot;
    if (small) {
        ntot = ir_i32(a, total);
    } else {
        ntot = eexp[0];
        for (int i = 1; i < n; i++) ntot = ir_bin(a, IR_MUL, ntot, eexp[i]);
        if (n > 1) {
            IrVar *v = ir_var(p->k, "par_total", TS_INT64, IR_VAR_LET);
            IrStmt *l = ir_stmt(a, IR_S_LET, s->loc);
            l->let.var = v;
            l->let.value = ntot;
            ir_seq_push(a, out, l);
            ntot = ir_var_ref(a, v);
        }
    }
    if (small && total == 0) return out; /* nothing to run */
    if (small && out->seq.n == 0) {
        IrStmt *vc = vector_copy(p, frame, lv, n, ext, total);
        if (vc) return vc;
    }
    /* thread t, round r: L = t + r * NT */
    IrVar *t = ir_var(p->k, "t", TS_INT32, IR_VAR_LOOP);
    int64_t rounds = small ? (total + p->nt - 1) / p->nt : 0;
    IrVar *r = (!small || rounds > 1) ? ir_var(p->k, "r", TS_INT32, IR_VAR_LOOP) : NULL;
    IrExpr *L = rel_thread(p, t);
    if (!small) L = ir_cast(a, TS_INT64, L);
    if (r) {
        IrExpr *rr = ir_var_ref(a, r);
        if (!small) rr = ir_cast(a, TS_INT64, rr);
        L = ir_bin(a, IR_ADD, L, ir_bin(a, IR_MUL, rr, ir_int(a, p->nt, it)));
    }
    IrVar *from[MAXNEST];
    IrExpr *to[MAXNEST];
    for (int i = 0; i < n; i++) {
        IrExpr *x = L;
        if (small) {
            int64_t inner = 1;
            for (int j = i + 1; j < n; j++) inner *= ext[j];
            if (inner != 1) x = ir_bin(a, IR_FLOORDIV, x, ir_i32(a, inner));
            if (i > 0) x = ir_bin(a, IR_FLOORMOD, x, ir_i32(a, ext[i]));
        } else {
            IrExpr *inner = NULL;
            for (int j = i + 1; j < n; j++) inner = inner ? ir_bin(a, IR_MUL, inner, eexp[j]) : eexp[j];
            if (inner) x = ir_bin(a, IR_FLOORDIV, x, inner);
            if (i > 0) x = ir_bin(a, IR_FLOORMOD, x, eexp[i]);
        }
        x = ir_cast(a, lv[i]->for_.var->dt, x);
        int64_t c;
        if (!ir_is_const_int(mins[i], &c) || c != 0) x = ir_bin(a, IR_ADD, mins[i], x);
        from[i] = lv[i]->for_.var;
        to[i] = x;
    }
    IrStmt *nb = ir_stmt_subst(a, body, from, to, n);
    nb = serialize(p, nb);
    bool guard = small ? rounds * p->nt != total && rounds > 1 : true;
    if (guard) {
        IrStmt *g = ir_stmt(a, IR_S_IF, s->loc);
        g->if_.cond = ir_bin(a, IR_LT, L, ntot);
        g->if_.then = nb;
        nb = g;
    }
    if (r) {
        IrExpr *re = small ? ir_i32(a, rounds)
                           : ir_cast(a, TS_INT32, ir_bin(a, IR_FLOORDIV,
                                                         ir_bin(a, IR_ADD, ntot, ir_int(a, p->nt - 1, TS_INT64)),
                                                         ir_int(a, p->nt, TS_INT64)));
        nb = ir_for(a, r, ir_i32(a, 0), re, small && rounds <= 16 ? IR_FOR_UNROLL : IR_FOR_SERIAL, nb);
        nb->loc = s->loc;
    }
    int64_t text = small && rounds == 1 ? total : p->nt; /* one round: only the first `total` threads */
    IrStmt *f = ir_for(a, t, ir_i32(a, (int32_t)p->lo), ir_i32(a, text), IR_FOR_THREAD, nb);
    f->loc = s->loc;
    if (out->seq.n == 0) return f;
    ir_seq_push(a, out, f);
    return out;
}

static bool shares_memory(const IrBuffer *b) { return b && !is_private(b); }

/* ---- loops that wait on other blocks ---------------------------------------------
 *
 * In a kernel whose blocks wait for each other (IrKernel.may_block), a while
 * loop whose condition reads global memory polls a flag another block
 * sets.  Two decisions are the IR's:
 *
 *  - acquire (IrStmt.while_.acquire): after such a loop each thread must
 *    see what the awaited block wrote before its flag (the printer spells
 *    it as a fence after the loop); set on every such loop, wherever it is;
 *  - in uniform code with more than one thread, the threads must leave
 *    together (each reading the flag itself could see it change between
 *    two threads' reads, and the block would split): one thread reads it
 *    into a shared word and everyone decides on that word:
 *
 *        wait_flag = alloc_shared int32[1]
 *        while true:                           # acquire
 *            for t in thread_range(1):
 *                wait_flag[0] = int32(cond)
 *            go = wait_flag[0]
 *            if go == 0:
 *                break
 *            body
 *
 *    insert_sync then puts the barriers in (after the store, and before the
 *    next iteration's store overwrites what the others read).
 */

static bool reads_global(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD && e->load.buf->scope == IR_SCOPE_GLOBAL;
}

static bool polls_global(const Part *p, const IrStmt *s) {
    return p->k->may_block && s->kind == IR_S_WHILE && ir_expr_any(s->while_.cond, reads_global, NULL);
}

static IrStmt *flag_loop(IrMutator *m, Part *p, IrStmt *s) {
    TsArena *a = p->a;
    IrExpr *zero = ir_i32(a, 0);
    IrBuffer *flag = ir_buffer(p->k, "wait_flag", TS_INT32, IR_SCOPE_SHARED, 1, (IrExpr *[]){ir_i32(a, 1)}, s->loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
    al->alloc.buf = flag;
    IrStmt *body = ir_seq(a);
    body->loc = s->loc;
    IrStmt *st = ir_store(a, flag, (IrExpr *[]){zero}, 1, ir_cast(a, TS_INT32, s->while_.cond));
    st->loc = s->loc;
    ir_seq_push(a, body, thread_range(p, "t", ir_i32(a, 1), st, s->loc));
    IrVar *go = ir_var(p->k, "go", TS_INT32, IR_VAR_LET);
    IrStmt *l = ir_stmt(a, IR_S_LET, s->loc);
    l->let.var = go;
    l->let.value = ir_load(a, flag, (IrExpr *[]){zero}, 1);
    ir_seq_push(a, body, l);
    IrStmt *stop = ir_stmt(a, IR_S_IF, s->loc);
    stop->if_.cond = ir_bin(a, IR_EQ, ir_var_ref(a, go), zero);
    stop->if_.then = ir_stmt(a, IR_S_BREAK, s->loc);
    ir_seq_push(a, body, stop);
    IrStmt *rest = ir_mutate_stmt(m, s->while_.body); /* the body is uniform code too */
    if (rest) ir_seq_push(a, body, rest);
    IrStmt *w = ir_stmt(a, IR_S_WHILE, s->loc);
    w->while_.cond = ir_int(a, 1, TS_BOOL);
    w->while_.body = body;
    w->while_.acquire = true;
    IrStmt *out = ir_seq(a);
    out->loc = s->loc;
    ir_seq_push(a, out, al);
    ir_seq_push(a, out, w);
    return out;
}

static IrStmt *acquire_post(IrMutator *m, IrStmt *s) {
    Part *p = m->ctx;
    if (!polls_global(p, s) || s->while_.acquire) return s;
    IrStmt *c = TS_NEW(p->a, IrStmt);
    *c = *s;
    c->while_.acquire = true;
    return c;
}

/* A loop over the block's threads inside s (layout inference's form of
 * fragment code: each thread works on its own registers), into *ctx. */
static bool thread_loop_at(const IrStmt *s, void *ctx) {
    if (s->kind != IR_S_FOR || s->for_.kind != IR_FOR_THREAD) return false;
    *(const IrStmt **)ctx = s;
    return true;
}

/*
 * Control flow that differs between threads, run per thread (case 3).
 * Fragment code inside it is refused: layout inference spread that work
 * over all NT threads (each its own registers), and only the threads the
 * condition lets in would do their part, so the others' elements would
 * silently be missing (a fragment written and stored under `if
 * T.get_thread_binding() < 32` in a 128-thread block stored a quarter of
 * its rows).  TileLang lays such fragments over the threads the condition
 * bounds (its thread-bounds analysis); we do not yet.
 */
static IrStmt *varying_range(Part *p, IrStmt *s) {
    const IrStmt *inner = NULL;
    if (ir_stmt_any(s, thread_loop_at, &inner) && inner)
        ts_fail_at(p->cx->diag, TS_ERR_UNSUPPORTED, inner->loc,
                   "fragment code (a T.Parallel loop, copy or reduction over a fragment) inside control flow that "
                   "depends on the thread index (line %d): its work is spread over all %lld threads of the block, "
                   "and only some of them run here; laying fragments over part of the block is not supported "
                   "(move the fragment work out of the thread-dependent branch or loop)",
                   s->loc.line, (long long)p->nt);
    return thread_range(p, "t", ir_i32(p->a, p->nt), serialize(p, s), s->loc);
}

/* The rewrite of uniform code (see the essay); thread ranges are left alone
 * but for their T.Parallel loops. */
/* A copy of the T.ws role s whose body is rewritten by m with the role's
 * threads (first thread, count) as the threads in scope; both callers'
 * scopes are restored after. */
static IrStmt *role_body(IrMutator *m, Part *p, IrStmt *s) {
    int64_t nt = p->nt, lo = p->lo;
    bool role = p->role;
    p->nt = s->role.n;
    p->lo = s->role.lo;
    p->role = true;
    IrStmt *r = ir_stmt(p->a, IR_S_ROLE, s->loc);
    *r = *s;
    r->role.body = ir_mutate_stmt(m, s->role.body);
    if (!r->role.body) r->role.body = ir_seq(p->a);
    p->nt = nt;
    p->lo = lo;
    p->role = role;
    return r;
}

/* A tensor-core gemm in a T.ws role runs on the role's warps, numbered from
 * its first thread: recorded on the op (IrTileOp.mma_lo/mma_threads) for the
 * printer, which derives nothing from the role (layout inference laid out
 * its register operands over the same threads). */
static IrStmt *role_gemm(Part *p, IrStmt *s) {
    if (!p->role || s->op->kind != TS_OP_GEMM || s->op->inst != TS_OP_INST_MMA_SYNC) return NULL;
    if (s->op->mma_lo == p->lo && s->op->mma_threads == p->nt) return NULL;
    IrTileOp *op = TS_NEW(p->a, IrTileOp);
    *op = *s->op;
    op->mma_lo = (int)p->lo;
    op->mma_threads = (int)p->nt;
    IrStmt *r = ir_stmt(p->a, IR_S_TILEOP, s->loc);
    *r = *s;
    r->op = op;
    return r;
}

static IrStmt *part_pre(IrMutator *m, IrStmt *s) {
    Part *p = m->ctx;
    switch (s->kind) {
    case IR_S_FOR:
        if (s->for_.kind == IR_FOR_THREAD) return serialize(p, s);
        if (s->for_.kind == IR_FOR_PARALLEL) return partition_nest(p, m->frame, s);
        if (header_varies(p, s)) return varying_range(p, s);
        return NULL;
    case IR_S_IF:
    case IR_S_WHILE:
        if (header_varies(p, s)) return varying_range(p, s);
        if (p->nt > 1 && polls_global(p, s)) return flag_loop(m, p, s);
        return NULL;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if (!shares_memory(s->store.buf)) return NULL;
        return thread_range(p, "t", ir_i32(p->a, header_varies(p, s) ? p->nt : 1), s, s->loc);
    case IR_S_PRINT:
        return thread_range(p, "t", ir_i32(p->a, header_varies(p, s) ? p->nt : 1), s, s->loc);
    case IR_S_VCOPY:
        return thread_range(p, "t", ir_i32(p->a, p->nt), s, s->loc);
    case IR_S_TILEOP:
        if (comm_varies(p, s)) return thread_range(p, "t", ir_i32(p->a, p->nt), s, s->loc);
        return role_gemm(p, s);
    case IR_S_MBAR:
        /* mbarrier.init by one thread (insert_sync orders it before the uses);
         * the other operations are each running thread's own */
        if (s->mbar.op == IR_MBAR_INIT) {
            int64_t n = one_each(p, s->mbar.buf, s->mbar.idx);
            if (n > 0) { /* its arrivals are made by each of a role's n threads (one_arrivals): n times the count */
                IrStmt *in = ir_stmt(p->a, IR_S_MBAR, s->loc);
                in->mbar = s->mbar;
                int64_t c;
                in->mbar.value = ir_is_const_int(s->mbar.value, &c) ? ir_i32(p->a, c * n)
                                                                   : ir_bin(p->a, IR_MUL, s->mbar.value, ir_i32(p->a, n));
                s = in;
            }
            return thread_range(p, "t", ir_i32(p->a, 1), s, s->loc);
        }
        if (s->mbar.op == IR_MBAR_ARRIVE_ONE && p->role && one_each(p, s->mbar.buf, s->mbar.idx) == p->nt) {
            /* each of the role's threads arrives (the count was multiplied): see one_arrivals */
            IrStmt *each = ir_stmt(p->a, IR_S_MBAR, s->loc);
            each->mbar = s->mbar;
            each->mbar.op = IR_MBAR_ARRIVE;
            return each;
        }
        if (s->mbar.op == IR_MBAR_ARRIVE_ONE) { /* the group's one arrival: its first thread's */
            IrStmt *one = ir_stmt(p->a, IR_S_MBAR, s->loc);
            one->mbar = s->mbar;
            one->mbar.op = IR_MBAR_ARRIVE;
            IrStmt *first = thread_range(p, "t", ir_i32(p->a, 1), one, s->loc);
            if (p->nt == ir_kernel_nthreads(p->k)) return first; /* the block: each reads its own registers */
            /* a T.ws role whose mbarrier has other arrivals too (one_arrivals): what its other
             * lanes did (a tensor-memory tile shared with another role lives in shared memory)
             * must be ordered before the arrive that releases it: __syncwarp, then lane 0
             * arrives (ordered by the PTX memory model; compute-sanitizer racecheck does not
             * follow it) */
            if (p->nt != 32)
                ts_fail_at(p->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                           "the one arrive of a tcgen05 gemm or T.tcgen05_mma_arrive in a T.ws role of %d threads: "
                           "only a one-warp role is supported (TileLang issues tcgen05 from one warp)", (int)p->nt);
            IrExpr **wm = TS_NEWN(p->a, IrExpr *, 1);
            wm[0] = ir_int(p->a, -1, TS_INT32); /* (all lanes; an int32 keeps index_width's 32 bits) */
            IrStmt *sy = ir_stmt(p->a, IR_S_EVAL, s->loc);
            sy->eval.e = ir_call(p->a, IR_WARP_SYNC, wm, 1, TS_INT32);
            IrStmt *q = ir_seq(p->a);
            q->loc = s->loc;
            ir_seq_push(p->a, q, thread_range(p, "t", ir_i32(p->a, p->nt), sy, s->loc));
            ir_seq_push(p->a, q, first);
            return q;
        }
        if (header_varies(p, s)) return thread_range(p, "t", ir_i32(p->a, p->nt), s, s->loc);
        return NULL;
    case IR_S_ROLE: {
        /* a T.ws role: its uniform code is spread over its own threads */
        if (p->lo || p->nt != ir_kernel_nthreads(p->k))
            ts_fail_at(p->cx->diag, TS_ERR_UNSUPPORTED, s->loc, "a T.ws role inside another");
        return role_body(m, p, s);
    }
    default: return NULL;
    }
}

/* A group's one arrive (IR_MBAR_ARRIVE_ONE: what a tcgen05 gemm's mbar= or
 * T.tcgen05_mma_arrive makes when its work is done; pass lower_tmem made
 * such gemms ordinary ones, done when they end) in a T.ws role releases
 * what the role's threads did before it: the gemm's reads of its shared
 * operand tiles (which a producer then overwrites) and its writes of an
 * accumulator another role reads (a tensor-memory tile two roles share
 * lives in shared memory).  An mbarrier arrive releases the arriving
 * thread's own accesses; one lane's arrive after a __syncwarp or a named
 * barrier of the role is ordered by the PTX memory model's cumulativity,
 * but compute-sanitizer racecheck does not follow that chain (session 11
 * on the H200: tc_roles and tc_ws reported races with __syncwarp and with
 * bar.sync over the warp, none with every lane arriving).  So every thread
 * of the role arrives itself and the mbarrier expects n times as many
 * arrivals per phase (its INIT count times the role's n threads): the same
 * phases, and each thread's arrive releases its own accesses.  That is
 * done for an mbarrier buffer all of whose arrivals are one arrives in
 * roles of the same size; any other arrival on it (a thread's own arrive,
 * a one arrive in the block's code or in a role of another size) keeps
 * the first thread's single arrive after a __syncwarp (part_pre). */
typedef struct OneScan {
    TsArena *a;
    int64_t **n; /* by buffer id: by element, 0 (no arrival seen), n > 0 or -1 */
} OneScan;

static int64_t mbar_elems(const IrBuffer *b) {
    int64_t n = 1;
    if (b->ndim >= 1 && (!ir_is_const_int(b->shape[0], &n) || n < 1)) n = 1;
    return n;
}

static bool one_pre(IrVisitor *v, const IrStmt *s) {
    OneScan *o = v->ctx;
    if (s->kind != IR_S_MBAR || s->mbar.op == IR_MBAR_INIT || s->mbar.op == IR_MBAR_WAIT ||
        s->mbar.op == IR_MBAR_EXPECT_TX)
        return true;
    const IrBuffer *b = s->mbar.buf;
    int64_t ne = mbar_elems(b);
    if (!o->n[b->id]) o->n[b->id] = TS_NEWN(o->a, int64_t, ne);
    int64_t *el = o->n[b->id];
    int64_t n = -1, c;
    if (s->mbar.op == IR_MBAR_ARRIVE_ONE)
        for (const IrWalkFrame *f = v->frame; f; f = f->up)
            if (f->s->kind == IR_S_ROLE) {
                n = f->s->role.n;
                break;
            }
    bool one = ir_is_const_int(s->mbar.idx, &c) && c >= 0 && c < ne;
    for (int64_t i = one ? c : 0; i < (one ? c + 1 : ne); i++) el[i] = n < 0 || (el[i] && el[i] != n) ? -1 : n;
    return true;
}

/* The role size whose threads each make the one arrives on mbar[idx]
 * (INIT's or an arrive's index), or 0: that element keeps one arrival. */
static int64_t one_each(const Part *p, const IrBuffer *b, const IrExpr *idx) {
    const int64_t *el = p->one_n ? p->one_n[b->id] : NULL;
    if (!el) return 0;
    int64_t ne = mbar_elems(b), c, n = 0;
    bool one = ir_is_const_int(idx, &c) && c >= 0 && c < ne;
    for (int64_t i = one ? c : 0; i < (one ? c + 1 : ne); i++) {
        if (el[i] <= 0 || (n && el[i] != n)) return 0;
        n = el[i];
    }
    return n;
}

static int64_t **one_arrivals(TsPassCtx *cx, IrKernel *k) {
    int nid = k->next_id > 0 ? k->next_id : 1;
    OneScan o = {.a = cx->arena, .n = TS_NEWN(cx->arena, int64_t *, nid)};
    IrVisitor v = {.ctx = &o, .pre_stmt = one_pre};
    ir_visit_stmt(&v, k->body);
    return o.n;
}

void ts_pass_partition_threads(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    Part p = {.cx = cx, .k = k, .a = cx->arena, .nt = ir_kernel_nthreads(k)};
    p.one_n = one_arrivals(cx, k);
    do {
        p.changed = false;
        mark_stmt(&p, k->body, false);
    } while (p.changed);
    IrMutator m = {.arena = cx->arena, .ctx = &p, .pre_stmt = part_pre};
    k->body = ir_mutate_stmt(&m, k->body);
    if (k->may_block) {
        IrMutator acq = {.arena = cx->arena, .ctx = &p, .post_stmt = acquire_post};
        k->body = ir_mutate_stmt(&acq, k->body);
    }
}

/* ---- the C target: per-thread code as loops over the threads ----------------------
 *
 * The C target runs a block as one thread of control (codegen_c.c), so
 * block-level code, T.Parallel nests and uniform stores included, already
 * means "what the block's threads do together" there and stays as it is.
 * Only case 3 of the essay needs work: code that differs between threads
 * (T.get_thread_binding / T.thread_binding values and what is derived from
 * them) goes into thread ranges, which the C printer runs as a loop over
 * the block's threads (ts_tid = 0 .. n-1, the thread-index variables
 * spelled from it).  Running the threads one after another is exact
 * between two barriers; a barrier (T.sync_threads) itself is not emitted
 * on the C target, and the analysis puts none inside a thread range.
 * What else it needs:
 *
 *  - a `let` whose value differs between threads becomes a private buffer
 *    of one element, stored by each thread in a thread range at the let's
 *    place, and its uses load it;
 *  - a private (local/var) buffer holding values that differ between
 *    threads gets a copy per thread: a leading dimension of the block's
 *    thread count indexed by the flat thread index (its stores in uniform
 *    code go into a thread range, so that every copy is written);
 *  - a warp primitive (T.put_warp, T.get_warp, f1 = 1) inside a thread
 *    range is done by lane 0 of each warp, with lane 0's operands
 *    (TileScale calls them with one range per warp; on CUDA the lanes share
 *    it the same way).
 *
 * Program order cannot run a thread that waits for another thread of its
 * block: a wait or a spinning while loop inside a thread range (two warps
 * handing work to each other), a barrier there (T.sync_threads(id, count)
 * in a loop whose trip count differs between threads), T.thread_return,
 * T.ws roles that wait on mbarriers (a role may wait for one later in
 * program order).  Such kernels are marked thread_coro: the printer then runs every thread
 * as a coroutine (target/c/threads_c.c) and keeps the barriers; everywhere
 * else the barriers are dropped (program order needs none).
 */

typedef struct CThr {
    Part *p;
    TS_VEC(IrVar *) from;  /* varying lets replaced ... */
    TS_VEC(IrExpr *) to;   /* ... by loads of these */
    TS_VEC(IrStmt *) allocs; /* their buffers' allocations, put first in the body */
} CThr;

static IrStmt *c_range(Part *p, IrStmt *s) { return thread_range(p, "t", ir_i32(p->a, p->nt), s, s->loc); }

static IrStmt *c_pre(IrMutator *m, IrStmt *s) {
    CThr *c = m->ctx;
    Part *p = c->p;
    switch (s->kind) {
    case IR_S_FOR:
        if (s->for_.kind == IR_FOR_THREAD) return s;
        return header_varies(p, s) ? c_range(p, s) : NULL;
    case IR_S_IF:
    case IR_S_WHILE: return header_varies(p, s) ? c_range(p, s) : NULL;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        return header_varies(p, s) || (is_private(s->store.buf) && buf_varies(p, s->store.buf)) ? c_range(p, s)
                                                                                                 : NULL;
    case IR_S_PRINT:
    case IR_S_EVAL: return header_varies(p, s) ? c_range(p, s) : NULL;
    case IR_S_TILEOP:
        if (comm_varies(p, s)) return c_range(p, s);
        if (s->op && s->op->kind == TS_OP_COMM && (s->op->comm == TS_COMM_LD || s->op->comm == TS_COMM_ATOM_ADD) &&
            s->op->nr > 1 && is_private(s->op->r[1].buf) && buf_varies(p, s->op->r[1].buf))
            return c_range(p, s);
        return NULL;
    case IR_S_LET: {
        if (!header_varies(p, s)) return NULL;
        TsArena *a = p->a;
        IrBuffer *b = ir_buffer(p->k, s->let.var->name, s->let.var->dt, IR_SCOPE_LOCAL, 1,
                                (IrExpr *[]){ir_i32(a, 1)}, s->loc);
        mark_buf(p, b);
        IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
        al->alloc.buf = b;
        ts_vec_push(a, c->allocs, al);
        IrStmt *st = ir_store(a, b, (IrExpr *[]){ir_i32(a, 0)}, 1, s->let.value);
        st->loc = s->loc;
        ts_vec_push(a, c->from, s->let.var);
        ts_vec_push(a, c->to, ir_load(a, b, (IrExpr *[]){ir_i32(a, 0)}, 1));
        return c_range(p, st);
    }
    case IR_S_ROLE: {
        /* a T.ws role: its per-thread code runs over the role's threads */
        return role_body(m, p, s);
    }
    case IR_S_MBAR: return header_varies(p, s) ? c_range(p, s) : NULL;
    default: return NULL;
    }
}

/* Per-thread copies of the varying private buffers: index [tid, ...]. */
static IrExpr **c_idx(Part *p, IrExpr **idx, int n) {
    IrExpr **v = TS_NEWN(p->a, IrExpr *, n + 1);
    v[0] = ir_var_ref(p->a, ir_kernel_tid(p->k));
    for (int i = 0; i < n; i++) v[i + 1] = idx[i];
    return v;
}

static bool c_copied(const Part *p, const IrBuffer *b) { return b && is_private(b) && buf_varies(p, b); }

static IrExpr *c_post_expr(IrMutator *m, IrExpr *e) {
    Part *p = ((CThr *)m->ctx)->p;
    if (e->kind != IR_E_LOAD || !c_copied(p, e->load.buf) || e->load.nidx != e->load.buf->ndim - 1) return e;
    IrExpr *n = TS_NEW(p->a, IrExpr);
    *n = *e;
    n->load.idx = c_idx(p, e->load.idx, e->load.nidx);
    n->load.nidx = e->load.nidx + 1;
    return n;
}

static IrStmt *c_post_stmt(IrMutator *m, IrStmt *s) {
    Part *p = ((CThr *)m->ctx)->p;
    if ((s->kind == IR_S_STORE || s->kind == IR_S_ATOMIC_ADD) && c_copied(p, s->store.buf) &&
        s->store.nidx == s->store.buf->ndim - 1) {
        IrStmt *n = TS_NEW(p->a, IrStmt);
        *n = *s;
        n->store.idx = c_idx(p, s->store.idx, s->store.nidx);
        n->store.nidx = s->store.nidx + 1;
        return n;
    }
    if (s->kind == IR_S_TILEOP && s->op) {
        bool any = false;
        for (int r = 0; r < s->op->nr; r++) any |= c_copied(p, s->op->r[r].buf);
        if (!any) return s;
        IrStmt *n = TS_NEW(p->a, IrStmt);
        *n = *s;
        n->op = TS_NEW(p->a, IrTileOp);
        *n->op = *s->op;
        for (int r = 0; r < s->op->nr; r++) {
            IrRegion *g = &n->op->r[r];
            if (!c_copied(p, g->buf) || g->ndim != g->buf->ndim - 1) continue;
            g->start = c_idx(p, g->start, g->ndim);
            IrExpr **ext = TS_NEWN(p->a, IrExpr *, g->ndim + 1);
            ext[0] = ir_i32(p->a, 1);
            for (int i = 0; i < g->ndim; i++) ext[i + 1] = g->extent[i];
            g->extent = ext;
            g->ndim++;
        }
        return n;
    }
    return s;
}

/* Warp primitives in thread ranges: lane 0 of each warp. */
static IrStmt *c_lane_post(IrMutator *m, IrStmt *s) {
    Part *p = ((CThr *)m->ctx)->p;
    if (s->kind != IR_S_TILEOP || !s->op || s->op->kind != TS_OP_COMM || !s->op->cflags[1] ||
        (s->op->comm != TS_COMM_PUT && s->op->comm != TS_COMM_GET))
        return s;
    bool inside = false;
    for (const IrWalkFrame *f = m->frame; f; f = f->up)
        inside |= f->s && f->s->kind == IR_S_FOR && f->s->for_.kind == IR_FOR_THREAD;
    if (!inside) return s;
    IrStmt *g = ir_stmt(p->a, IR_S_IF, s->loc);
    g->if_.cond = ir_bin(p->a, IR_EQ, ir_bin(p->a, IR_FLOORMOD, ir_var_ref(p->a, ir_kernel_tid(p->k)), ir_i32(p->a, 32)),
                         ir_i32(p->a, 0));
    g->if_.then = s;
    return g;
}

static bool thread_ref(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_VAR && e->var->kind == IR_VAR_THREAD_IDX;
}

static bool is_thread_return(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_THREAD_RETURN;
}

/* What program order cannot run inside a thread range (see above). */
static bool waits_on_threads(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_BARRIER || s->kind == IR_S_WHILE || is_thread_return(s, NULL) ||
           (s->kind == IR_S_TILEOP && s->op && s->op->kind == TS_OP_COMM && s->op->comm == TS_COMM_WAIT);
}

static bool coro_range(const IrStmt *s, void *ctx) {
    return s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD && ir_stmt_any(s->for_.body, waits_on_threads, ctx);
}

static IrStmt *drop_barrier(IrMutator *m, IrStmt *s) {
    (void)m;
    return s->kind == IR_S_BARRIER ? NULL : s;
}

static bool mbar_wait(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_WAIT;
}

/* A T.ws role that waits on an mbarrier (another role may have to run first). */
static bool waiting_role(const IrStmt *s, void *ctx) {
    return s->kind == IR_S_ROLE && ir_stmt_any(s->role.body, mbar_wait, ctx);
}

/* A barrier inside a role of more threads than the role's: roles meet
 * there (the collectives between T.Scale units, comm_builtins.c), which
 * program order (one role after the other) cannot run. */
static bool role_meets(const IrStmt *s, void *ctx) {
    return s->kind == IR_S_BARRIER && (s->barrier.count == 0 || s->barrier.count > *(const int *)ctx);
}

static bool roles_meet(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_ROLE && ir_stmt_any(s->role.body, role_meets, (void *)&s->role.n);
}

/* thread_coro, or no barriers: see the essay above. */
static void c_choose(TsPassCtx *cx, IrKernel *k) {
    k->thread_coro = ir_stmt_any(k->body, coro_range, NULL) || ir_stmt_any(k->body, is_thread_return, NULL) ||
                     ir_stmt_any(k->body, waiting_role, NULL) || ir_stmt_any(k->body, roles_meet, NULL);
    if (k->thread_coro) return;
    IrMutator m = {.arena = cx->arena, .post_stmt = drop_barrier};
    k->body = ir_mutate_stmt(&m, k->body);
    if (!k->body) k->body = ir_seq(cx->arena);
}

void ts_pass_thread_loops_c(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    if (cx->target != TS_TARGET_C || !k->body) return;
    if (!ir_stmt_any_expr(k->body, thread_ref, NULL) && !ts_warp_used(k->body)) {
        c_choose(cx, k);
        return;
    }
    Part p = {.cx = cx, .k = k, .a = cx->arena, .nt = ir_kernel_nthreads(k), .c = true};
    do {
        p.changed = false;
        mark_stmt(&p, k->body, false);
    } while (p.changed);
    CThr c = {.p = &p};
    IrMutator m = {.arena = cx->arena, .ctx = &c, .pre_stmt = c_pre};
    k->body = ir_mutate_stmt(&m, k->body);
    if (c.from.n) {
        k->body = ir_stmt_subst(cx->arena, k->body, c.from.v, c.to.v, c.from.n);
        IrStmt *body = ir_seq(cx->arena);
        body->loc = k->body->loc;
        for (int i = 0; i < c.allocs.n; i++) ir_seq_push(cx->arena, body, c.allocs.v[i]);
        ir_seq_push(cx->arena, body, k->body);
        k->body = body;
    }
    /* the copies per thread: a leading dimension of NT */
    for (int i = 0; i < p.vbufs.n; i++) {
        IrBuffer *b = (IrBuffer *)p.vbufs.v[i];
        if (!is_private(b)) continue;
        IrExpr **sh = TS_NEWN(p.a, IrExpr *, b->ndim + 1);
        sh[0] = ir_i32(p.a, p.nt);
        for (int d = 0; d < b->ndim; d++) sh[d + 1] = b->shape[d];
        b->shape = sh;
        b->ndim++;
    }
    IrMutator rw = {.arena = cx->arena, .ctx = &c, .post_expr = c_post_expr, .post_stmt = c_post_stmt};
    k->body = ir_mutate_stmt(&rw, k->body);
    IrMutator lane = {.arena = cx->arena, .ctx = &c, .post_stmt = c_lane_post};
    k->body = ir_mutate_stmt(&lane, k->body);
    c_choose(cx, k);
}
