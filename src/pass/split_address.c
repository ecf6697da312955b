/*
 * split_address.c — global addresses as one base per thread plus a step.
 *
 * Why: NVRTC's cold compile time (issue 5: <= 0.3 s) goes to NVVM and
 * ptxas working through the kernel body, and a large share of it went to
 * re-deriving addresses.  A thread's copies to and from global memory sit
 * in fully unrolled loops (a GEMM epilogue stores 64 pairs of C, every
 * pipeline stage issues 4-8 cp.async copies of A and B), and each copy's
 * address was printed as one sum, buf + (row * stride + col), in which the
 * thread's and block's part (by * 128 + warp * 64 + lane / 4, ...) and the
 * unrolled loop's part (i * 16 + j * 8) are mixed.  NVVM must take each of
 * the 64 sums apart again to find the common base (the sums are 32-bit,
 * the pointer 64-bit: every one is sign-extended first), which cost the
 * GEMM 4096 about a fifth of its compile time on the CI VM (measured on
 * the generated CUDA: 130 -> 107 ms of CPU for the epilogue alone, same
 * cubin byte for byte; with the cp.async sources 100 ms).
 *
 * What: for every vector copy (IR_S_VCOPY) with a global operand inside at
 * least one loop that is not a thread binding, each of the global
 * operand's indices is split into its additive terms; the terms free of
 * the enclosing loops' variables (and of lets bound inside any loop) form
 * `base`, the rest and the constants form `step`, and the index becomes
 * the node `base + step` with vcopy.split set.  The value is unchanged
 * (the interpreters and the C target see the same index); the CUDA
 * printer then writes the pointer as buf + (flattened base) + (flattened
 * step), two pointer additions, the first the same expression in every
 * copy of the nest, so NVVM computes it once (common subexpressions of
 * pointer arithmetic are cheap for it, unlike re-associating sign-extended
 * integer sums), and the second a small constant or a loop term.
 *
 * Nothing is split where it would not pay (no loop, no base term, no step
 * term) or where it could change a value: in a kernel whose integers are
 * 32-bit (index_width), both flattened parts must be proven non-negative
 * (then each is at most the whole offset, which index_width proved fits);
 * run-time strides are 64-bit values, whose products cannot wrap there.
 * Bounds-checked builds print the plain form (the printer's choice: the
 * checks wrap each index whole).
 *
 * Runs last among the CUDA passes (no pass after it rebuilds the indices
 * and could fold the `base + step` node away).
 */
#include <stdlib.h>

#include "ir/arith.h"
#include "ir/walk.h"
#include "pass/pass.h"

typedef struct Split {
    IrKernel *k;        /* the kernel */
    TsArena *a;         /* its arena */
    IrArith ar;         /* bounds, for the 32-bit proof */
    bool *in_loop_let;  /* by var id: a let bound inside some non-thread loop */
    int nvars;          /* size of in_loop_let */
} Split;

static bool is_step_loop(const IrStmt *s) { return s->kind == IR_S_FOR && s->for_.kind != IR_FOR_THREAD; }

/* ---- lets bound inside loops --------------------------------------------------- */

static bool mark_let(IrVisitor *v, const IrStmt *s) {
    Split *sp = v->ctx;
    if (s->kind != IR_S_LET || s->let.var->id < 0 || s->let.var->id >= sp->nvars) return true;
    for (const IrWalkFrame *f = v->frame ? v->frame->up : NULL; f; f = f->up)
        if (is_step_loop(f->s)) {
            sp->in_loop_let[s->let.var->id] = true;
            break;
        }
    return true;
}

/* ---- terms ------------------------------------------------------------------------ */

typedef struct Vary {
    const Split *sp;           /* for in_loop_let */
    const IrWalkFrame *frame;  /* the copy's enclosing statements */
    bool found;                /* out: the expression reads a varying variable */
} Vary;

static bool var_varies(const Vary *vy, const IrVar *var) {
    if (var->kind == IR_VAR_LET)
        return var->id >= 0 && var->id < vy->sp->nvars && vy->sp->in_loop_let[var->id];
    if (var->kind != IR_VAR_LOOP) return false;
    for (const IrWalkFrame *f = vy->frame; f; f = f->up)
        if (is_step_loop(f->s) && f->s->for_.var == var) return true;
    return false;
}

static bool pre_vary(IrVisitor *v, const IrExpr *e) {
    Vary *vy = v->ctx;
    if (e->kind == IR_E_VAR && var_varies(vy, e->var)) {
        vy->found = true;
        v->stop = true;
    }
    if (e->kind == IR_E_LOAD) { /* a loaded value may change anywhere */
        vy->found = true;
        v->stop = true;
    }
    return true;
}

static bool varies(const Split *sp, const IrWalkFrame *frame, const IrExpr *e) {
    Vary vy = {sp, frame, false};
    IrVisitor v = {0};
    v.ctx = &vy;
    v.pre_expr = pre_vary;
    ir_visit_expr(&v, e);
    return vy.found;
}

/* Sort the additive terms of e into *base (fixed across the loops) and
 * *step (varying, and constants). */
static void sort_terms(Split *sp, const IrWalkFrame *frame, IrExpr *e, int64_t scale, IrExpr **base, IrExpr **step,
                       bool *moving) {
    int64_t c;
    if (e->kind == IR_E_BIN && e->bin.op == IR_ADD && e->bin.a->dt == e->dt && e->bin.b->dt == e->dt) {
        sort_terms(sp, frame, e->bin.a, scale, base, step, moving);
        sort_terms(sp, frame, e->bin.b, scale, base, step, moving);
        return;
    }
    /* (x + y) * c: the terms x * c and y * c (c small: the products are
     * bounded by the whole product's, which index_width checked) */
    if (e->kind == IR_E_BIN && e->bin.op == IR_MUL && e->bin.a->dt == e->dt && ir_is_const_int(e->bin.b, &c) &&
        c > 0 && c <= 65536 && scale <= 65536 && e->bin.a->kind == IR_E_BIN && e->bin.a->bin.op == IR_ADD) {
        sort_terms(sp, frame, e->bin.a, scale * c, base, step, moving);
        return;
    }
    if (scale != 1) e = ir_bin(sp->a, IR_MUL, e, ir_int(sp->a, scale, e->dt));
    IrExpr **to = step;
    if (!ir_is_const_int(e, &c)) {
        if (varies(sp, frame, e)) *moving = true;
        else to = base;
    } else if (c == 0) {
        return;
    }
    *to = *to ? ir_bin(sp->a, IR_ADD, *to, e) : e;
}

/* The node base + step, not folded (the printer reads its two operands). */
static IrExpr *raw_add(TsArena *a, IrExpr *base, IrExpr *step, TsDType dt) {
    IrExpr *e = TS_NEW(a, IrExpr);
    e->kind = IR_E_BIN;
    e->dt = dt;
    e->loc = base->loc;
    e->bin.op = IR_ADD;
    e->bin.a = ir_cast(a, dt, base);
    e->bin.b = ir_cast(a, dt, step);
    return e;
}

/* Strictly inside int32 (an end reached means "may have wrapped"). */
static bool in32(IrInterval r) { return r.lo > INT32_MIN && r.hi < INT32_MAX; }

/* Bounds of the flattened offset sum(part[d] * stride[d]) of the
 * contiguous buffer b (row-major strides from its constant shape) on
 * frame; false where they are not known inside int32. */
static bool flat_bound32(Split *sp, const IrWalkFrame *frame, const IrBuffer *b, IrExpr *const *part, int n,
                         IrInterval *out) {
    IrInterval sum = {0, 0};
    int64_t stride = 1, c;
    sp->ar.frame = frame;
    for (int d = n - 1; d >= 0; d--) {
        IrInterval r = ir_arith_bound(&sp->ar, part[d]);
        if (!in32(r) || stride > INT32_MAX) return false;
        sum = ir_interval_add(sum, ir_interval_mul(r, (IrInterval){stride, stride}));
        if (!in32(sum)) return false;
        if (d > 0 && (!b->shape || !ir_is_const_int(b->shape[d], &c) || c < 0 || c > INT32_MAX)) return false;
        if (d > 0) stride *= c;
    }
    *out = sum;
    return true;
}

/* b is a tensor parameter of k (the pointer the printer adds base and step to). */
static bool is_param(const IrKernel *k, const IrBuffer *b) {
    for (int i = 0; i < k->params.n; i++)
        if (k->params.v[i].buf == b) return true;
    return false;
}

/* The split indices of the global operand (idx, n) of the copy on frame,
 * or NULL where it does not pay or could change a value. */
static IrExpr **split_indices(Split *sp, const IrWalkFrame *frame, const IrBuffer *b, IrExpr **idx, int n) {
    bool any_loop = false;
    for (const IrWalkFrame *f = frame; f; f = f->up) any_loop |= is_step_loop(f->s);
    /* run-time strides (64-bit values): NVVM handles those sums as well
     * split as not (FlashAttention: same time, and a different cubin) */
    if (!any_loop || n < 1 || n != b->ndim || !b->contiguous || !is_param(sp->k, b)) return NULL;
    if (n > 8) return NULL;
    IrExpr **out = TS_NEWN(sp->a, IrExpr *, n), *base[8], *step[8];
    bool moving = false, have_base = false;
    for (int d = 0; d < n; d++) {
        if (!ts_dtype_is_int(idx[d]->dt)) return NULL;
        base[d] = step[d] = NULL;
        sort_terms(sp, frame, idx[d], 1, &base[d], &step[d], &moving);
        have_base |= base[d] != NULL;
        if (!base[d]) base[d] = ir_int(sp->a, 0, idx[d]->dt);
        if (!step[d]) step[d] = ir_int(sp->a, 0, idx[d]->dt);
    }
    if (!moving || !have_base) return NULL;
    /* Each flattened part is a new value, which must fit in int32 (in a
     * 64-bit kernel too: the bounds are known or nothing is split); the
     * step must not be negative, so that the base pointer alone stays
     * between the buffer's start and the element (no pointer formed
     * outside the tensor) */
    IrInterval fb, fs;
    if (!flat_bound32(sp, frame, b, base, n, &fb) || !flat_bound32(sp, frame, b, step, n, &fs) || fs.lo < 0)
        return NULL;
    for (int d = 0; d < n; d++) out[d] = raw_add(sp->a, base[d], step[d], idx[d]->dt);
    return out;
}

static IrStmt *post_stmt(IrMutator *m, IrStmt *s) {
    Split *sp = m->ctx;
    if (s->kind != IR_S_VCOPY || s->vcopy.split) return s;
    bool dg = s->vcopy.dst->scope == IR_SCOPE_GLOBAL, sg = s->vcopy.src->scope == IR_SCOPE_GLOBAL;
    if (dg == sg) return s; /* none global (nothing to do) or both (not a copy the targets make) */
    IrExpr **idx = split_indices(sp, m->frame, dg ? s->vcopy.dst : s->vcopy.src, dg ? s->vcopy.didx : s->vcopy.sidx,
                                 dg ? s->vcopy.ndi : s->vcopy.nsi);
    if (!idx) return s;
    IrStmt *t = s;
    if (t == m->frame->s) { /* unchanged so far: the original, maybe shared; copy it */
        t = ir_stmt(sp->a, IR_S_VCOPY, s->loc);
        t->vcopy = s->vcopy;
    }
    if (dg) t->vcopy.didx = idx;
    else t->vcopy.sidx = idx;
    t->vcopy.split = 1;
    return t;
}

void ts_pass_split_address(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    /* off by request, and in bounds-checked builds (each element access checked
     * against its extents by the unsplit index) */
    if (cx->caps && (!cx->caps->split_addr || cx->caps->check_bounds)) return;
    Split sp = {0};
    sp.k = k;
    sp.a = cx->arena;
    ir_arith_init(&sp.ar, cx->arena, k);
    sp.nvars = k->next_id + 1;
    sp.in_loop_let = TS_NEWN(cx->arena, bool, sp.nvars);
    for (int i = 0; i < sp.nvars; i++) sp.in_loop_let[i] = false;
    IrVisitor v = {0};
    v.ctx = &sp;
    v.pre_stmt = mark_let;
    ir_visit_stmt(&v, k->body);
    IrMutator m = {0};
    m.arena = cx->arena;
    m.ctx = &sp;
    m.post_stmt = post_stmt;
    k->body = ir_mutate_stmt(&m, k->body);
}
