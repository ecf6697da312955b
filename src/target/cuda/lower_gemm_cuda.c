/*
 * lower_gemm_cuda.c — which instruction family runs a T.gemm on the CUDA
 * target.
 *
 * Tensor cores (mma.sync.m16n8k16 with fp32 accumulation, PTX ISA
 * "Warp-level matrix multiply-accumulate instructions") take A and B of
 * float16 or bfloat16 (the same type) and C of float32, in tiles whose M is
 * a multiple of 16, N of 8 and K of 16.  The op is then kept, marked
 * TS_OP_INST_MMA_SYNC: layout_inference gives its fragments register
 * layouts (or leaves them in shared memory) and the code generator prints
 * the warp-tiled device function.  Anything else (other dtypes, ragged
 * tiles, a C that is also an input, a block of partial warps, operands in
 * global or local memory, or TsCaps.mma off, which TILESCALE_CUDA_MMA=0
 * sets at the API boundary for before/after benchmarks) takes the
 * generic loops of op/gemm.c.
 *
 * On sm_90a with TsCaps.wgmma (TILESCALE_CUDA_WGMMA=1) a gemm whose A and
 * B are whole shared tiles, whose accumulator is a fragment and whose
 * block is whole warpgroups is marked TS_OP_INST_WGMMA instead
 * (wgmma.mma_async, doc/HOPPER.md): the tiles must take the layout the
 * matrix descriptors read (ir_wgmma_operand), so no other gemm may read
 * them, nor may T.annotate_layout have fixed theirs, and a warpgroup grid
 * must fit the accumulator (op_gemm_wgmma_grid).  Layout inference gives
 * the accumulator its WGMMA_C layout and the tiles their layouts; where it
 * gives no layouts the gemm becomes mma.sync's shared-accumulator form.
 * Not yet: a register A operand (wgmma allows it), T.ws roles.
 *
 * The choice lives here, with the target, because it is the target's
 * instruction set that decides it.
 */
#include "target/cuda/lower_gemm_cuda.h"

#include "ir/layout.h"
#include "ir/walk.h"
#include "op/op_util.h"

/* Operands the warp-tiled function reads from shared memory or (after
 * layout inference) registers: shared and fragment buffers. */
static bool on_chip(const IrBuffer *b) { return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_FRAGMENT; }

static bool const_shape(const IrBuffer *b) {
    for (int i = 0; i < b->ndim; i++)
        if (!b->shape || !ir_is_const_int(b->shape[i], NULL)) return false;
    return true;
}

/* How many T.gemm statements read buffer b as A or B. */
typedef struct GemmReads {
    const IrBuffer *b; /* the buffer */
    int n;             /* gemms reading it */
} GemmReads;

static bool count_reads(const IrStmt *s, void *ctx) {
    GemmReads *g = ctx;
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && (s->op->r[0].buf == g->b || s->op->r[1].buf == g->b)) g->n++;
    return false;
}

static bool is_role(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_ROLE;
}

/* The wgmma form fits the gemm s itself (see the essay). */
static bool wgmma_fits_op(TsLowerCtx *cx, const IrTileOp *op, int64_t M, int64_t N, int64_t nt) {
    const IrRegion *A = &op->r[0], *B = &op->r[1], *C = &op->r[2];
    if (!cx->caps->wgmma || !cx->caps->layout || A->buf->scope != IR_SCOPE_SHARED || B->buf->scope != IR_SCOPE_SHARED ||
        C->buf->scope != IR_SCOPE_FRAGMENT || A->buf == B->buf || nt % 128 || M % 64)
        return false;
    if (ir_stmt_any(cx->k->body, is_role, NULL)) return false;
    int64_t rows[2], cols[2];
    IrSwizzle z;
    IrWgmmaOperand w;
    for (int i = 0; i < 2; i++) {
        const IrBuffer *b = op->r[i].buf;
        GemmReads g = {b, 0};
        if (b->swizzle_annotated || !op_gemm_wgmma_matrix(&op->r[i], &rows[i], &cols[i]) ||
            !ir_wgmma_operand(rows[i], cols[i], 0, &z, &w))
            return false;
        (void)ir_stmt_any(cx->k->body, count_reads, &g);
        if (g.n != 1) return false;
    }
    int gm, gn, ni, bw = op->trans_b ? 0 : (cols[1] >= 64 ? 64 : (int)cols[1]);
    return op_gemm_wgmma_grid(op, M, N, (int)(nt / 128), bw, &gm, &gn, &ni);
}

static bool wgmma_fits_stmt(TsLowerCtx *cx, const IrStmt *s) {
    int64_t M, N, K;
    op_gemm_shape(cx, s, &M, &N, &K);
    int64_t nt = (int64_t)cx->k->threads[0] * cx->k->threads[1] * cx->k->threads[2];
    return wgmma_fits_op(cx, s->op, M, N, nt);
}

/* Every use of the accumulator is one its WGMMA_C layout serves: T.clear /
 * T.fill, a gemm into it that takes the wgmma form too, a T.copy from it
 * to shared or global memory (examples/gemm.py).  Anything else (a
 * reduction over its rows, element access in a T.Parallel loop, a fragment
 * copy, a register A operand of another gemm: FlashAttention) keeps
 * mma.sync, whose layouts those uses know; TODO: WGMMA_C's row projection
 * and element-wise uses, the RS form (A from registers). */
typedef struct CUses {
    TsLowerCtx *cx;    /* the lowering */
    const IrBuffer *c; /* the accumulator */
    bool bad;          /* a use that is not served */
} CUses;

static void c_access(IrVisitor *v, const IrAccess *acc) {
    CUses *u = v->ctx;
    if (acc->buf != u->c) return;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    bool ok = false;
    if (acc->region && s && s->kind == IR_S_TILEOP) {
        const IrTileOp *op = s->op;
        ok = op->kind == TS_OP_FILL ||
             (op->kind == TS_OP_GEMM && acc->region == &op->r[2] && wgmma_fits_stmt(u->cx, s)) ||
             (op->kind == TS_OP_COPY && acc->region == &op->r[0] &&
              (op->r[1].buf->scope == IR_SCOPE_SHARED || op->r[1].buf->scope == IR_SCOPE_GLOBAL));
    }
    if (!ok) u->bad = v->stop = true;
}

static bool wgmma_fits(TsLowerCtx *cx, const IrTileOp *op, int64_t M, int64_t N, int64_t nt) {
    if (!wgmma_fits_op(cx, op, M, N, nt)) return false;
    CUses u = {cx, op->r[2].buf, false};
    IrVisitor v = {.ctx = &u, .access = c_access};
    ir_visit_stmt(&v, cx->k->body);
    return !u.bad;
}

IrStmt *ts_cuda_lower_gemm(TsLowerCtx *cx, const IrStmt *s) {
    int64_t M, N, K;
    op_gemm_shape(cx, s, &M, &N, &K);
    const IrTileOp *op = s->op;
    const IrBuffer *A = op->r[0].buf, *B = op->r[1].buf, *C = op->r[2].buf;
    if (cx->target != TS_TARGET_CUDA || !cx->caps->mma) return NULL;
    if (A->dt != B->dt || (A->dt != TS_FLOAT16 && A->dt != TS_BFLOAT16) || C->dt != TS_FLOAT32) return NULL;
    if (!on_chip(A) || !on_chip(B) || !on_chip(C) || C == A || C == B) return NULL;
    if (!const_shape(A) || !const_shape(B) || !const_shape(C)) return NULL;
    if (M <= 0 || N <= 0 || K <= 0 || M % 16 || N % 8 || K % 16) return NULL;
    int64_t nt = (int64_t)cx->k->threads[0] * cx->k->threads[1] * cx->k->threads[2];
    if (nt < 32 || nt > 1024 || nt % 32) return NULL;
    IrTileOp *keep = TS_NEW(cx->arena, IrTileOp);
    *keep = *op;
    keep->inst = wgmma_fits(cx, op, M, N, nt) ? TS_OP_INST_WGMMA : TS_OP_INST_MMA_SYNC;
    IrStmt *r = ir_stmt(cx->arena, IR_S_TILEOP, s->loc);
    r->op = keep;
    return r;
}
