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
 * The choice lives here, with the target, because it is the target's
 * instruction set that decides it; the wgmma path of sm_90a will be a
 * second answer of the same function.
 */
#include "target/cuda/lower_gemm_cuda.h"

#include "op/op_util.h"

/* Operands the warp-tiled function reads from shared memory or (after
 * layout inference) registers: shared and fragment buffers. */
static bool on_chip(const IrBuffer *b) { return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_FRAGMENT; }

static bool const_shape(const IrBuffer *b) {
    for (int i = 0; i < b->ndim; i++)
        if (!b->shape || !ir_is_const_int(b->shape[i], NULL)) return false;
    return true;
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
    keep->inst = TS_OP_INST_MMA_SYNC;
    IrStmt *r = ir_stmt(cx->arena, IR_S_TILEOP, s->loc);
    r->op = keep;
    return r;
}
