/*
 * tier_plan.c — how large a kernel's cold CUDA build is, and what its
 * quick tier gives up to build fast (issue 5: NVRTC cold <= 0.3 s).
 *
 * A tensor-core loop whose gemms unroll to hundreds of mma.sync per warp
 * is most of a cold NVRTC build: GEMM 128x256x128 with 256 threads (256
 * mma.sync per warp and iteration) and FlashAttention D128 (two gemms of
 * 128) take 455-667 ms on the H200 host, whose CPU needs about twice this
 * CI VM's time per compile.  The runtime can therefore build a kernel in
 * two tiers (src/target/cuda/tier_cuda.c): a quick one compiled first and
 * launched, the full one compiled on a background thread and swapped in.
 * This pass makes the two IR decisions that needs; the printer and NVRTC
 * only follow the fields it sets:
 *
 *  - IrKernel.tier_mmas / tier_large, every CUDA compile: mma.sync per warp
 *    of all the kernel's tensor-core gemms (m*n*k / (16*8*16) over the
 *    block's warps; a gemm inside a loop counts once: the loop body is what
 *    NVVM and ptxas unroll; a gemm split across a pipeline's barrier counts
 *    once, by its BODY/REST part).  16 or more is "large" (TIER_LARGE_MMAS):
 *    on the H200 host (bench/RESULTS.md, 2026-12-01 23:25) the full builds
 *    of GEMM 128x256x128 on 256 threads (256 per warp) and FlashAttention
 *    D128 took 602-686 ms true cold, and also GEMM 128x128x32 on 128
 *    threads (64) 364 ms and FlashAttention 64x64 (16) 333 ms, over the
 *    0.3 s goal; their quick tiers 146-233 ms.  Below 16 (a few mma.sync
 *    per warp, or none) the build is small and goes in one tier.
 *    TsCompileOptions.tiered's default builds a quick tier first only for
 *    the large ones.
 *  - In the quick tier (TsCaps.quick_tier), IrKernel.gemm_k_rolled: the k16
 *    steps of every tensor-core gemm stay a loop (the fragments of one
 *    step are loaded and multiplied in a rolled loop instead of K/16
 *    copies: the register accumulators keep constant indices, only a
 *    register A operand (FlashAttention's P) is indexed by the step and
 *    goes to local memory), and IrKernel.nvrtc_fast_compile: NVRTC's
 *    --Ofast-compile=min for NVVM and ptxas.  Measured on the CI VM
 *    (bench/RESULTS.md, "Tiered CUDA build"): GEMM 4096 128x256x128 and
 *    FlashAttention D128 go to about a third and under half of their full
 *    builds' CPU time; rolling alone leaves FlashAttention at ~0.6 (its
 *    softmax over 64-element register fragments stays unrolled).
 *
 * The quick tier's IR is the full tier's IR but for the gemm split the
 * driver turns off (TsCaps.mma_prefetch, an existing path) and these
 * flags: the thread-level interpreter runs the same IR for both, and the
 * flags change only the printed unroll pragma and NVRTC's options.
 */
#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

/* mma.sync per warp from which a cold build counts as large (see above). */
enum { TIER_LARGE_MMAS = 16 };

static bool count_mma(const IrStmt *s, void *ctx) {
    int64_t *n = ctx;
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_GEMM || s->op->inst != TS_OP_INST_MMA_SYNC) return false;
    const IrTileOp *op = s->op;
    /* the parts of a split gemm are one gemm: count it by its main part */
    if (op->mma_part == TS_MMA_PRE || op->mma_part == TS_MMA_TAIL) return false;
    /* the sizes from the operands (the accumulator may be a register buffer of
     * another shape): A is M x K (K x M transposed), B is K x N (N x K transposed) */
    const IrRegion *ra = &op->r[0], *rb = &op->r[1];
    int64_t m, nn, kk;
    if (ra->ndim < 2 || rb->ndim < 2 || !ir_is_const_int(ra->extent[ra->ndim - (op->trans_a ? 1 : 2)], &m) ||
        !ir_is_const_int(ra->extent[ra->ndim - (op->trans_a ? 2 : 1)], &kk) ||
        !ir_is_const_int(rb->extent[rb->ndim - (op->trans_b ? 2 : 1)], &nn))
        return false;
    *n += m * nn * kk / (16 * 8 * 16);
    return false; /* keep looking: every gemm counts */
}

void ts_pass_tier_plan(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    int64_t n = 0, warps = ir_kernel_nthreads(k) / 32;
    (void)ir_stmt_any(k->body, count_mma, &n);
    n = warps > 0 ? n / warps : n;
    k->tier_mmas = n > 1000000 ? 1000000 : (int)n;
    k->tier_large = k->tier_mmas >= TIER_LARGE_MMAS;
    k->gemm_k_rolled = cx->caps->quick_tier && n > 0;
    k->nvrtc_fast_compile = cx->caps->quick_tier;
}
