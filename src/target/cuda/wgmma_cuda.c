/*
 * wgmma_cuda.c — the device functions of T.gemm on sm_90a's wgmma.mma_async
 * (TS_OP_INST_WGMMA; doc/HOPPER.md has the facts and their sources).
 *
 * Everything here is decided before: lower_gemm_cuda.c chose the
 * instruction, layout inference gave the accumulator its WGMMA_C layout
 * (the warpgroup grid), the operand tiles their swizzled column-block
 * layout and the op the descriptor fields of that layout (IrTileOp.wg)
 * and the instruction's N (IrTileOp.wg_ni).  This file only prints: one
 * function per distinct gemm, which a warpgroup runs as
 *
 *     wgmma.fence                              (its registers and the tiles, ordered)
 *     for each k16 step, m64 tile, N chunk:    wgmma.mma_async m64nNk16
 *                                              (descriptors: the tile's address plus
 *                                              the step's constant byte offset)
 *     wgmma.commit_group
 *     wgmma.wait_group W                       (T.gemm: W = wg_wait, 0 by default;
 *                                              T.wgmma_gemm: none, T.wait_wgmma waits)
 *
 * A pipelined loop's gemm over the stage tiles is issued without a wait
 * (wg_async, set by inject_pipeline), the loop's IR waits printed where
 * they stand (IR_WGMMA_WAIT).
 *
 * The descriptors' constant part (LBO, SBO, swizzle mode) is
 * ir_wgmma_desc of the IR's fields, computed here once per function; the
 * address part is added at run time.  Byte offsets inside a tile follow
 * IrWgmmaOperand: element (r, c) of the stored matrix, before the swizzle,
 * is at r * row_bytes + (c / w) * blk_bytes + (c % w) * 2 (w = row_bytes /
 * 2), and the hardware applies the swizzle to the address it forms, which
 * is why the tiles are aligned to the pattern's repeat (plan_smem,
 * IrBuffer.smem_align) and a k16 step inside a swizzled row is a plain
 * byte offset of the start address.
 */
#include "target/cuda/cuda_target.h"
#include "ir/layout.h"

#include <stdio.h>
#include <string.h>

const char ts_cuda_wgmma_prelude[] =
    /* column blocks of a wgmma operand tile (IrSwizzle.lblk; only wgmma
     * operands have them): the matrix of r rows x 2^lc elements stored as
     * blocks of r x 2^lb, one after the other, before the XOR */
    "template <typename T> TS_DEV T ts_blk(T o, int lb, int lc, int r) {\n"
    "    const T tile = (T)r << lc, t = o % tile, c = t & (((T)1 << lc) - 1);\n"
    "    return o - t + (c >> lb) * ((T)r << lb) + ((t >> lc) << lb) + (c & (((T)1 << lb) - 1));\n"
    "}\n"
    /* the shared-window address of a pointer into dynamic shared memory */
    "TS_DEV ts_u32 ts_wg_smem(const void *p) {\n"
    "    return (ts_u32)__cvta_generic_to_shared(p);\n"
    "}\n"
    "TS_DEV void ts_wgmma_fence() {\n"
    "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
    "    asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
    "#endif\n"
    "}\n"
    "TS_DEV void ts_wgmma_commit() {\n"
    "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
    "    asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
    "#endif\n"
    "}\n"
    "template <int N> TS_DEV void ts_wgmma_wait() {\n"
    "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
    "    asm volatile(\"wgmma.wait_group.sync.aligned %0;\" :: \"n\"(N) : \"memory\");\n"
    "#endif\n"
    "}\n"
    /* shared memory written through the generic proxy (stores, cp.async),
     * then read by wgmma (the async proxy): PTX ISA, "Async proxy" */
    "TS_DEV void ts_fence_proxy_async() {\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
    "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
    "#endif\n"
    "}\n"
    /* the compiler must not move accesses of accumulator registers across
     * the asynchronous instructions that write them (fence before the
     * issue, after the wait) */
    "TS_DEV void ts_wgmma_regs(float *c, int n) {\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < n; i++) asm volatile(\"\" : \"+f\"(c[i]) :: \"memory\");\n"
    "}\n\n";

/* The name of the wrapper of one wgmma.mma_async shape. */
static void wrapper_name(char *buf, size_t n, const TsCudaWgmma *p) {
    snprintf(buf, n, "ts_wgmma_m64n%dk16_%s_%d%d", p->ni, p->bf16 ? "bf16" : "f16", p->trans_a, !p->trans_b);
}

/* `void ts_wgmma_m64n<N>k16_<t>_<ta><tb>(float *d, ts_u64 da, ts_u64 db, int scale_d)`:
 * one instruction, d its N / 2 accumulator registers in the order of the
 * PTX ISA's D fragment; ta / tb the transpose flags (1: MN-major). */
void ts_cuda_wgmma_wrapper(TsBuf *o, const TsCudaWgmma *p) {
    char name[64];
    wrapper_name(name, sizeof name, p);
    int nr = p->ni / 2;
    const char *t = p->bf16 ? "bf16" : "f16";
    ts_buf_printf(o, "TS_DEV void %s(float *d, ts_u64 da, ts_u64 db, int scale_d) {\n", name);
    ts_buf_puts(o, "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n");
    ts_buf_printf(o, "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", nr + 2);
    ts_buf_printf(o, "                 \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", p->ni, t, t);
    for (int i = 0; i < nr; i++) ts_buf_printf(o, "%s%%%d", i ? ", " : "", i);
    ts_buf_printf(o, "}, %%%d, %%%d, p, 1, 1, %d, %d;\\n}\\n\"\n", nr, nr + 1, p->trans_a, !p->trans_b);
    ts_buf_puts(o, "                 : ");
    for (int i = 0; i < nr; i++) ts_buf_printf(o, "%s\"+f\"(d[%d])", i ? (i % 8 ? ", " : ",\n                   ") : "", i);
    ts_buf_puts(o, "\n                 : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n");
    ts_buf_puts(o, "#endif\n}\n\n");
}

bool ts_cuda_wgmma_same_wrapper(const TsCudaWgmma *a, const TsCudaWgmma *b) {
    return a->ni == b->ni && a->bf16 == b->bf16 && a->trans_a == b->trans_a && a->trans_b == b->trans_b;
}

/* Byte offset of element (r, c) of a stored operand matrix, before the
 * swizzle (IrWgmmaOperand). */
static int64_t canon(const IrWgmmaOperand *w, int64_t r, int64_t c) {
    int64_t ce = w->row_bytes / 2;
    return r * w->row_bytes + (c / ce) * w->blk_bytes + (c % ce) * 2;
}

/* Byte offset of A's element (m, k) and B's element (k, n) in their tiles. */
static int64_t off_a(const TsCudaWgmma *p, int64_t m, int64_t k) {
    return p->trans_a ? canon(&p->wa, k, m) : canon(&p->wa, m, k);
}
static int64_t off_b(const TsCudaWgmma *p, int64_t k, int64_t n) {
    return p->trans_b ? canon(&p->wb, n, k) : canon(&p->wb, k, n);
}

void ts_cuda_wgmma_emit(TsBuf *o, const char *name, const TsCudaWgmma *p) {
    int WM = p->m / p->gm, WN = p->n / p->gn, MT = WM / 64, NC = WN / p->ni;
    char wname[64];
    wrapper_name(wname, sizeof wname, p);
    uint64_t da = ir_wgmma_desc(0, p->wa.lbo, p->wa.sbo, p->wa.mode);
    uint64_t db = ir_wgmma_desc(0, p->wb.lbo, p->wb.sbo, p->wb.mode);
    ts_buf_printf(o, "/* C[%d x %d] %s= A%s * B%s over K = %d (%s): wgmma.mma_async m64n%dk16, warpgroups %d x %d;\n"
                     " * A %s-major, %dB swizzle; B %s-major, %dB swizzle */\n",
                  p->m, p->n, p->clear ? "" : "+", p->trans_a ? "^T" : "", p->trans_b ? "^T" : "", p->k,
                  p->bf16 ? "bfloat16" : "float16", p->ni, p->gm, p->gn, p->wa.mn_major ? "M" : "K", p->wa.row_bytes,
                  p->wb.mn_major ? "N" : "K", p->wb.row_bytes);
    ts_buf_printf(o, "TS_DEV void %s(ts_u32 A, ts_u32 B, float *C, int tid) {\n", name);
    ts_buf_puts(o, "    const int wg = tid >> 7;\n");
    /* the warpgroup's first row of A and column of B: whole m64 tiles, and
     * (MN-major B) whole column blocks, so that the offsets are linear */
    ts_buf_printf(o, "    const ts_u32 a0 = A + (ts_u32)((wg / %d) * %lld), b0 = B + (ts_u32)((wg %% %d) * %lld);\n", p->gn,
                  (long long)off_a(p, WM, 0), p->gn, (long long)off_b(p, 0, WN));
    ts_buf_printf(o, "    const ts_u64 da = 0x%llxull | (ts_u64)((a0 & 0x3FFFF) >> 4), db = 0x%llxull | (ts_u64)((b0 & 0x3FFFF) >> 4);\n",
                  (unsigned long long)da, (unsigned long long)db);
    ts_buf_printf(o, "    ts_wgmma_regs(C, %d);\n", MT * WN / 2);
    ts_buf_puts(o, "    ts_fence_proxy_async();\n    ts_wgmma_fence();\n");
    for (int kk = 0; kk < p->k / 16; kk++)
        for (int mt = 0; mt < MT; mt++)
            for (int nc = 0; nc < NC; nc++) {
                int64_t oa = off_a(p, (int64_t)mt * 64, (int64_t)kk * 16), ob = off_b(p, (int64_t)kk * 16, (int64_t)nc * p->ni);
                ts_buf_printf(o, "    %s(C + %d, da + %lld, db + %lld, %d);\n", wname, mt * WN / 2 + nc * p->ni / 2,
                              (long long)(oa >> 4), (long long)(ob >> 4), kk > 0 || !p->clear);
            }
    ts_buf_puts(o, "    ts_wgmma_commit();\n");
    if (p->wait >= 0) {
        ts_buf_printf(o, "    ts_wgmma_wait<%d>();\n", p->wait);
        ts_buf_printf(o, "    ts_wgmma_regs(C, %d);\n", MT * WN / 2);
    }
    ts_buf_puts(o, "}\n\n");
}
