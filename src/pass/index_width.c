/*
 * index_width.c — may the kernel's integer arithmetic be 32-bit?
 *
 * The code generators compute every signed integer in 64 bits: an index
 * never wraps there, whatever the tensor sizes.  On the GPU that is dear.
 * A 64-bit add is two instructions, a 64-bit multiply three or more, a
 * 64-bit register is two registers, and the compiler cannot fold address
 * arithmetic into the 32-bit immediate offsets of the memory instructions.
 * The GEMM main loop spent a quarter of its instructions on it.
 *
 * This pass proves, with the shared interval analysis (src/ir/arith.h),
 * that every signed integer value the kernel computes fits in int32, and
 * records it (IrKernel.index32, printed as `index32`); the CUDA printer
 * then spells the integer type `int`.  "Every value" means:
 *
 *  - every integer node of every expression (sub-expressions included: a
 *    wrapped product can hide under a modulo), with the ranges of the
 *    enclosing loops, lets, threads and blocks;
 *  - what the printer builds from them: a loop's end (min + extent) and
 *    the flattened element offset of each access, sum(index_i * stride_i)
 *    (+ lanes for a vector copy), for every buffer whose strides are
 *    constants (non-global buffers, contiguous global parameters with a
 *    static shape; the strides of the others stay 64-bit run-time values,
 *    so their products are 64-bit anyway).
 *
 * A node whose bound reaches an end of int32 counts as not fitting: the
 * analysis clamps a node that may wrap to its dtype's range, so a bound
 * equal to that range says nothing.  Shape variables, scalar parameters
 * and integer loads (other than 8- and 16-bit) range over their dtype and
 * so keep a kernel in 64 bits: the proof needs static extents, as the
 * GEMM and FlashAttention configurations have.  Unsigned types keep their
 * own widths either way.
 */
#include "ir/arith.h"
#include "ir/walk.h"
#include "pass/pass.h"

typedef struct Width {
    IrArith ar;  /* the analysis, its frame set per callback */
    bool fits;   /* false once some value may leave int32 */
} Width;

/* Strictly inside int32 (an end reached means "may have wrapped"). */
static bool in32(IrInterval r) { return r.lo > INT32_MIN && r.hi < INT32_MAX; }

static bool is_signed_int(TsDType dt) {
    return dt == TS_INT8 || dt == TS_INT16 || dt == TS_INT32 || dt == TS_INT64;
}

static void post_expr(IrVisitor *v, const IrExpr *e) {
    Width *w = v->ctx;
    if (!is_signed_int(e->dt)) return;
    /* calls that are statements (an IR_S_EVAL's setmaxnreg, thread return) compute no value */
    if (e->kind == IR_E_CALL && (e->call.fn == IR_SET_MAX_NREG || e->call.fn == IR_THREAD_RETURN || e->call.fn == IR_WGMMA_WAIT ||
                                  e->call.fn == IR_FENCE_PROXY_ASYNC)) return;
    w->ar.frame = v->frame;
    if (!in32(ir_arith_bound(&w->ar, e))) {
        w->fits = false;
        v->stop = true;
    }
}

/* The printer's flattened offset of an access: sum(index_d * stride_d)
 * over the dimensions whose strides are constants (all of them but for a
 * global buffer with run-time extents, whose outer strides are 64-bit
 * run-time values: those terms are 64-bit, only the inner part must fit).
 * A shared buffer's rows may be padded by the printer (at most doubling
 * the row stride): its strides are bounded by twice the shape's. */
static void access(IrVisitor *v, const IrAccess *acc) {
    Width *w = v->ctx;
    const IrBuffer *b = acc->buf;
    if (!acc->idx || b->ndim == 0 || acc->nidx != b->ndim) return;
    if (b->scope == IR_SCOPE_GLOBAL && !b->contiguous) return; /* 64-bit run-time strides */
    int64_t stride = 1, c, pad = b->scope == IR_SCOPE_GLOBAL ? 1 : 2;
    IrInterval sum = {0, acc->lanes};
    w->ar.frame = v->frame;
    for (int d = b->ndim - 1; d >= 0 && in32(sum); d--) {
        IrInterval t = ir_interval_mul(ir_arith_bound(&w->ar, acc->idx[d]), (IrInterval){stride, stride});
        sum = in32(t) ? ir_interval_add(sum, t) : t; /* each product is computed too */
        if (!b->shape || !ir_is_const_int(b->shape[d], &c) || c < 0 || c > ((int64_t)1 << 61)) {
            if (b->scope != IR_SCOPE_GLOBAL) sum = (IrInterval){IR_ARITH_NEG_INF, IR_ARITH_POS_INF};
            break;
        }
        int64_t f = d == b->ndim - 1 ? c * pad : c, cap = (int64_t)INT32_MAX + 1; /* c * pad: c < 2^62 */
        stride = f && stride > cap / f ? cap : stride * f;
        if (stride > cap) stride = cap;
    }
    if (!in32(sum)) {
        w->fits = false;
        v->stop = true;
    }
}

/* A loop's end, min + extent, which the printer computes. */
static bool pre_stmt(IrVisitor *v, const IrStmt *s) {
    Width *w = v->ctx;
    if (s->kind != IR_S_FOR) return true;
    w->ar.frame = v->frame;
    IrInterval a = ir_arith_bound(&w->ar, s->for_.min), b = ir_arith_bound(&w->ar, s->for_.extent);
    if (!in32(a) || !in32(b) || !in32(ir_interval_add(a, b))) {
        w->fits = false;
        v->stop = true;
    }
    return true;
}

void ts_pass_index_width(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    k->index32 = false;
    if (cx->caps && !cx->caps->index32) return;
    for (int i = 0; i < 3; i++) {
        int64_t g;
        if (i < k->ngrid && k->grid[i] && (!ir_is_const_int(k->grid[i], &g) || g > INT32_MAX)) return;
    }
    Width w;
    ir_arith_init(&w.ar, cx->arena, k);
    w.fits = true;
    IrVisitor v = {0};
    v.ctx = &w;
    v.pre_stmt = pre_stmt;
    v.post_expr = post_expr;
    v.access = access;
    ir_visit_stmt(&v, k->body);
    k->index32 = w.fits;
}
