/*
 * gemm.c — T.gemm: its generic lowering, and its part in layout inference.
 *
 * C[M, N] += op(A) * op(B), where A is stored [M, K] ([K, M] with
 * trans_a) and B is stored [K, N] ([N, K] with trans_b), the convention of
 * TileLang's T.gemm.  Operands are regions of shared, fragment or local
 * buffers; the matrix is the last two axes of each region and any leading
 * axes must have extent 1 (e.g. one stage of a multi-buffered tile).
 *
 * The loop nest keeps the dot product in a one-element local accumulator
 * of C's dtype so the inner K loop is a tight multiply-add that a C
 * compiler can keep in a register:
 *
 *     acc = alloc_local C.dtype[1]
 *     for i in parallel(M): for j in parallel(N):
 *         acc[0] = clear_accum ? 0 : C[i, j]
 *         for k in serial(K): acc[0] = acc[0] + C.dtype(A[i, k]) * C.dtype(B[k, j])
 *         C[i, j] = acc[0]
 *
 * Products are formed in C's dtype (float32 for half inputs, int32 for
 * int8 inputs), matching the accumulate-in-C semantics of tensor cores; a
 * half-precision C accumulates in float32 and is rounded once per tile.
 *
 * On the CUDA target a gemm that tensor cores can run never reaches this
 * lowering: the instruction choice of src/target/cuda/lower_gemm_cuda.c
 * keeps it (TS_OP_INST_MMA_SYNC) first.  Everything else takes the generic
 * form here.
 *
 * The kept gemm's part in layout inference (op/op.h) lives here too: its
 * infer_layout (the accumulator and a register A operand take the mma
 * layout over the gemm's warp grid) and its lower_layout (those operands
 * become their register buffers; the shared operands get the ldmatrix
 * swizzle and the kernel its ptxas register level once the kernel
 * succeeds).
 */
#include "op/op_util.h"
#include "ir/layout.h"
#include "ir/walk.h"

#include <stdlib.h>
#include <string.h>

/* The two matrix axes of operand r (its last two), after checking that any
 * leading axes have extent 1. */
static void matrix_axes(TsLowerCtx *cx, const IrStmt *s, const char *what, const IrRegion *r,
                        int *ax0, int *ax1, int64_t *e0, int64_t *e1) {
    if (r->ndim < 2)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.gemm: operand %s (%s) must have at least 2 dims, not %d", what,
                   r->buf->name, r->ndim);
    for (int d = 0; d < r->ndim - 2; d++)
        if (op_region_extent(cx, s, "T.gemm", r, d) != 1)
            ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                       "T.gemm: operand %s region %s has more than 2 non-unit dims", what,
                       op_region_text(cx->arena, r));
    *ax0 = r->ndim - 2;
    *ax1 = r->ndim - 1;
    *e0 = op_region_extent(cx, s, "T.gemm", r, *ax0);
    *e1 = op_region_extent(cx, s, "T.gemm", r, *ax1);
}

/* Index of element (row, col) of the matrix held by region r. */
static IrExpr **mat_index(TsArena *a, const IrRegion *r, int ax0, int ax1, IrExpr *row,
                          IrExpr *col) {
    int dims[2] = {ax0, ax1};
    IrExpr *off[2] = {row, col};
    return op_region_index(a, r, dims, off, 2);
}

/*
 * The C target's lowering when C is held in the accumulation dtype: B's
 * tile is first converted once into a K x N scratch tile of that dtype
 * (transposed if B is), then
 *
 *     for i in parallel(M): for k in serial(K):
 *         a = A[i, k]
 *         for j in parallel(N): C[i, j] = C[i, j] + a * Bt[k, j]
 *
 * whose inner loop is unit-stride and vectorizes.  Each C[i, j] still sums
 * its products in k order in C's dtype, so results equal the generic form.
 * (On the GPU a per-thread K x N tile would be wrong; targets that run
 * blocks as many threads use the generic form.)
 */
static IrStmt *lower_c_ikj(TsLowerCtx *cx, const IrStmt *s, IrStmt *out, int64_t K, int64_t M,
                           int64_t N, TsDType cdt, int a0, int a1, int b0, int b1, int c0, int c1) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    const IrRegion *A = &op->r[0], *B = &op->r[1], *C = &op->r[2];
    IrExpr *shape[2] = {ir_i32(a, K), ir_i32(a, N)};
    IrBuffer *bt = ir_buffer(cx->k, "B_tile", cdt, IR_SCOPE_LOCAL, 2, shape, s->loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
    al->alloc.buf = bt;
    ir_seq_push(a, out, al);

    /* Bt[k, j] = cdt(B[k, j])  (B[j, k] when transposed) */
    IrVar *kv = op_loop_var(cx, "k"), *jv = op_loop_var(cx, "j");
    IrExpr *ke = ir_var_ref(a, kv), *je = ir_var_ref(a, jv);
    IrExpr **bi = op->trans_b ? mat_index(a, B, b0, b1, je, ke) : mat_index(a, B, b0, b1, ke, je);
    IrExpr *btidx[2] = {ke, je};
    IrExpr **bti = TS_NEWN(a, IrExpr *, 2);
    memcpy(bti, btidx, sizeof btidx);
    IrStmt *conv = ir_store(a, bt, bti, 2, ir_cast(a, cdt, ir_load(a, B->buf, bi, B->ndim)));
    IrVar *kj[2] = {kv, jv};
    int64_t kn[2] = {K, N};
    ir_seq_push(a, out, op_loops(a, s->loc, kj, kn, 2, IR_FOR_PARALLEL, conv));

    IrVar *i = op_loop_var(cx, "i"), *j = op_loop_var(cx, "j"), *k = op_loop_var(cx, "k");
    IrExpr *ie = ir_var_ref(a, i);
    ke = ir_var_ref(a, k);
    je = ir_var_ref(a, j);
    if (op->clear_accum) {
        IrVar *ij0[2] = {op_loop_var(cx, "i"), op_loop_var(cx, "j")};
        IrExpr **ci0 = mat_index(a, C, c0, c1, ir_var_ref(a, ij0[0]), ir_var_ref(a, ij0[1]));
        IrStmt *z = ir_store(a, C->buf, ci0, C->ndim, ir_int(a, 0, cdt));
        int64_t mn[2] = {M, N};
        ir_seq_push(a, out, op_loops(a, s->loc, ij0, mn, 2, IR_FOR_PARALLEL, z));
    }
    IrExpr **ai = op->trans_a ? mat_index(a, A, a0, a1, ke, ie) : mat_index(a, A, a0, a1, ie, ke);
    IrExpr **ci = mat_index(a, C, c0, c1, ie, je);
    IrExpr *bidx[2] = {ke, je};
    IrExpr **btk = TS_NEWN(a, IrExpr *, 2);
    memcpy(btk, bidx, sizeof bidx);
    IrVar *av = ir_var(cx->k, "a", cdt, IR_VAR_LET);
    IrStmt *let = ir_stmt(a, IR_S_LET, s->loc);
    let->let.var = av;
    let->let.value = ir_cast(a, cdt, ir_load(a, A->buf, ai, A->ndim));
    IrExpr *prod = ir_bin(a, IR_MUL, ir_var_ref(a, av), ir_load(a, bt, btk, 2));
    IrStmt *mac = ir_store(a, C->buf, ci, C->ndim, ir_bin(a, IR_ADD, ir_load(a, C->buf, ci, C->ndim), prod));
    IrStmt *jloop = ir_for(a, j, ir_i32(a, 0), ir_i32(a, N), IR_FOR_PARALLEL, mac);
    jloop->loc = s->loc;
    IrStmt *kbody = ir_seq(a);
    ir_seq_push(a, kbody, let);
    ir_seq_push(a, kbody, jloop);
    IrStmt *kloop = ir_for(a, k, ir_i32(a, 0), ir_i32(a, K), IR_FOR_SERIAL, kbody);
    kloop->loc = s->loc;
    IrStmt *iloop = ir_for(a, i, ir_i32(a, 0), ir_i32(a, M), IR_FOR_PARALLEL, kloop);
    iloop->loc = s->loc;
    ir_seq_push(a, out, iloop);
    return out;
}

/* The operand axes and M, N, K of a T.gemm, after checking that they agree. */
typedef struct GemmShape {
    int a0, a1, b0, b1, c0, c1; /* the matrix axes of A, B, C's regions */
    int64_t M, N, K;
} GemmShape;

static GemmShape gemm_shape(TsLowerCtx *cx, const IrStmt *s) {
    const IrTileOp *op = s->op;
    if (op->nr < 3) ts_internal(cx->diag, "T.gemm with %d regions (want 3)", op->nr);
    GemmShape g;
    int64_t ea0, ea1, eb0, eb1;
    matrix_axes(cx, s, "A", &op->r[0], &g.a0, &g.a1, &ea0, &ea1);
    matrix_axes(cx, s, "B", &op->r[1], &g.b0, &g.b1, &eb0, &eb1);
    matrix_axes(cx, s, "C", &op->r[2], &g.c0, &g.c1, &g.M, &g.N);
    int64_t am = op->trans_a ? ea1 : ea0, ak = op->trans_a ? ea0 : ea1;
    int64_t bk = op->trans_b ? eb1 : eb0, bn = op->trans_b ? eb0 : eb1;
    if (am != g.M || bn != g.N || ak != bk)
        ts_fail_at(cx->diag, TS_ERR_SHAPE, s->loc,
                   "T.gemm: shapes do not agree: A is %lldx%lld (MxK), B is %lldx%lld (KxN), "
                   "C is %lldx%lld (MxN)",
                   (long long)am, (long long)ak, (long long)bk, (long long)bn, (long long)g.M,
                   (long long)g.N);
    g.K = ak;
    return g;
}

void op_gemm_shape(TsLowerCtx *cx, const IrStmt *s, int64_t *M, int64_t *N, int64_t *K) {
    GemmShape g = gemm_shape(cx, s);
    *M = g.M;
    *N = g.N;
    *K = g.K;
}

/*
 * A block-scaled gemm (T.mma_gemm_blockscaled, nr == 5; TileLang's SM120
 * NVFP4 form, tilelang/language/gemm_op.py and the SM120 MMA emitter,
 * tilelang/cuda/intrinsics/macro/mma_sm120_macro_generator.py): A and B
 * float4_e2m1fn, C float32, and two regions of uint32 scale words SFA, SFB.
 * A word holds four UE4M3 scale bytes (unsigned E4M3: 4 exponent bits, bias
 * 7, 3 mantissa bits; PTX mma's kind::mxf4nvf4 with scale_vec::4X), byte
 * j of the word (the low byte first) scaling K elements [16 j, 16 j + 16)
 * of a 64-element K chunk.  The generic loops here multiply each product by
 * both scales,
 *     C[m, n] += (A[m, k] sa(m, k)) (B[k, n] sb(n, k)),
 * every factor exact in float32 (a 2-bit significand times a 4-bit one).
 * The word of row r (m for A, n for B; R the region's rows, W its words
 * per row) and K element k of the tile:
 *  - rowmajor: SF[r, (k_start + 64 (k / 64)) / 64]  (k_start the op's args[0]);
 *  - blockscaled_chunk_kmajor: the tile-local word f = (k / 64) R
 *    + (r % 32) (R / 32) + r / 32, at SF[f / W, f % W]: TileLang's
 *    _tile_kmajor_scale_word (the order its host helper
 *    swizzle_blockscaled_chunk_kmajor_scale_words writes), where k_start
 *    plays no part;
 * and the byte is (k % 64) / 16.  A scale byte's top bit (a sign UE4M3 does
 * not have) is ignored.
 */
static IrExpr *sf_scale(TsArena *a, const IrTileOp *op, int which, IrExpr *r, IrExpr *k) {
    const IrRegion *sf = &op->r[3 + which];
    IrExpr *chunk = ir_bin(a, IR_FLOORDIV, k, ir_i32(a, 64));
    IrExpr *row, *col;
    if (op->sf_layout == TS_SF_CHUNK_KMAJOR) {
        int64_t R = 0, W = 0;
        (void)ir_is_const_int(sf->extent[sf->ndim - 2], &R);
        (void)ir_is_const_int(sf->extent[sf->ndim - 1], &W);
        IrExpr *f = ir_bin(a, IR_ADD,
                           ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, chunk, ir_i32(a, R)),
                                  ir_bin(a, IR_MUL, ir_bin(a, IR_FLOORMOD, r, ir_i32(a, 32)), ir_i32(a, R / 32))),
                           ir_bin(a, IR_FLOORDIV, r, ir_i32(a, 32)));
        row = ir_bin(a, IR_FLOORDIV, f, ir_i32(a, W));
        col = ir_bin(a, IR_FLOORMOD, f, ir_i32(a, W));
    } else {
        IrExpr *ks = ir_cast(a, TS_INT32, op->args[0]);
        row = r;
        col = ir_bin(a, IR_FLOORDIV, ir_bin(a, IR_ADD, ks, ir_bin(a, IR_MUL, chunk, ir_i32(a, 64))), ir_i32(a, 64));
    }
    IrExpr **idx = mat_index(a, sf, sf->ndim - 2, sf->ndim - 1, row, col);
    IrExpr *word = ir_cast(a, TS_UINT32, ir_load(a, sf->buf, idx, sf->ndim));
    IrExpr *sh = ir_cast(a, TS_UINT32, ir_bin(a, IR_MUL, ir_bin(a, IR_FLOORDIV, ir_bin(a, IR_FLOORMOD, k, ir_i32(a, 64)), ir_i32(a, 16)),
                                              ir_i32(a, 8)));
    IrExpr *byte = ir_cast(a, TS_UINT8, ir_bin(a, IR_BITAND, ir_bin(a, IR_SHR, word, sh), ir_int(a, 0x7F, TS_UINT32)));
    IrExpr *e4m3 = ir_call(a, IR_REINTERPRET, &byte, 1, TS_FLOAT8_E4M3);
    return ir_cast(a, TS_FLOAT32, e4m3);
}

IrStmt *ts_op_gemm_lower(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    GemmShape g = gemm_shape(cx, s);
    const IrRegion *A = &op->r[0], *B = &op->r[1], *C = &op->r[2];
    int a0 = g.a0, a1 = g.a1, b0 = g.b0, b1 = g.b1, c0 = g.c0, c1 = g.c1;
    int64_t M = g.M, N = g.N, K = g.K;
    TsDType cdt = op_acc_dtype(C->buf->dt);

    IrStmt *out = ir_seq(a);
    out->loc = s->loc;
    bool scaled = op->nr == 5;
    if (cx->target == TS_TARGET_C && cdt == C->buf->dt && !scaled)
        return lower_c_ikj(cx, s, out, K, M, N, cdt, a0, a1, b0, b1, c0, c1);
    IrBuffer *acc = op_local_scalar(cx, out, "acc", cdt, s->loc);

    IrVar *i = op_loop_var(cx, "i"), *j = op_loop_var(cx, "j"), *k = op_loop_var(cx, "k");
    IrExpr *ie = ir_var_ref(a, i), *je = ir_var_ref(a, j), *ke = ir_var_ref(a, k);
    IrExpr **ci = mat_index(a, C, c0, c1, ie, je);
    IrExpr **ai = op->trans_a ? mat_index(a, A, a0, a1, ke, ie) : mat_index(a, A, a0, a1, ie, ke);
    IrExpr **bi = op->trans_b ? mat_index(a, B, b0, b1, je, ke) : mat_index(a, B, b0, b1, ke, je);

    IrStmt *cell = ir_seq(a);
    IrExpr *init = op->clear_accum ? ir_int(a, 0, cdt) : ir_load(a, C->buf, ci, C->ndim);
    ir_seq_push(a, cell, op_scalar_store(a, acc, init));
    IrExpr *av = ir_cast(a, cdt, ir_load(a, A->buf, ai, A->ndim)), *bv = ir_cast(a, cdt, ir_load(a, B->buf, bi, B->ndim));
    if (scaled) {
        av = ir_bin(a, IR_MUL, av, sf_scale(a, op, 0, ie, ke));
        bv = ir_bin(a, IR_MUL, bv, sf_scale(a, op, 1, je, ke));
    }
    IrExpr *prod = ir_bin(a, IR_MUL, av, bv);
    IrStmt *mac = op_scalar_store(a, acc, ir_bin(a, IR_ADD, op_scalar_load(a, acc), prod));
    IrStmt *kloop = ir_for(a, k, ir_i32(a, 0), ir_i32(a, K), IR_FOR_SERIAL, mac);
    kloop->loc = s->loc;
    ir_seq_push(a, cell, kloop);
    ir_seq_push(a, cell, ir_store(a, C->buf, ci, C->ndim, op_scalar_load(a, acc)));

    IrVar *ij[2] = {i, j};
    int64_t mn[2] = {M, N};
    ir_seq_push(a, out, op_loops(a, s->loc, ij, mn, 2, IR_FOR_PARALLEL, cell));
    return out;
}

/* ---- the wgmma form (sm_90a) ------------------------------------------------ */

/* The instruction N for a warpgroup's wn columns: all of them up to 256,
 * else the largest multiple of 8 (and of bw, an MN-major B's column block)
 * up to 256 that divides wn; 0 if none. */
static int wgmma_ni(int64_t wn, int bw) {
    if (wn <= 256 && wn % 8 == 0 && (bw <= 0 || wn <= bw || wn % bw == 0)) return (int)wn;
    for (int ni = 256; ni >= 8; ni -= 8)
        if (wn % ni == 0 && (bw <= 0 || ni % bw == 0)) return ni;
    return 0;
}

bool op_gemm_wgmma_grid(const IrTileOp *op, int64_t m, int64_t n, int nwg, int bw, int *gm, int *gn, int *ni) {
    if (nwg < 1 || nwg > 8 || m <= 0 || n <= 0) return false;
    /* candidates in order of preference: the policy's side first (Square and
     * FullRow: all warpgroups on M, as TileLang's wgmma policy prefers) */
    for (int pass = 0; pass < 2; pass++)
        for (int a = nwg; a >= 1; a--) {
            if (nwg % a) continue;
            int r = op->policy == TS_GEMM_FULLCOL ? nwg / a : a, c = nwg / r;
            if (pass == 0 && op->policy == TS_GEMM_FULLCOL && c != nwg) continue;
            if (m % (64 * r) || n % (8 * c)) continue;
            int64_t wn = n / c;
            /* an MN-major B's warpgroup columns start at a column block (or there is one warpgroup column) */
            if (bw > 0 && c > 1 && wn % bw) continue;
            int x = wgmma_ni(wn, c > 1 ? bw : (wn > bw ? bw : 0));
            if (!x) continue;
            *gm = r, *gn = c, *ni = x;
            return true;
        }
    return false;
}

bool op_gemm_wgmma_matrix(const IrRegion *r, int64_t *rows, int64_t *cols) {
    int nd = r->ndim;
    if (nd < 2 || !r->buf->shape) return false;
    for (int d = 0; d < nd; d++) {
        int64_t e, x, st;
        if (!ir_is_const_int(r->extent[d], &e) || !ir_is_const_int(r->buf->shape[d], &x)) return false;
        if (d < nd - 2 ? e != 1 : (e != x || !ir_is_const_int(r->start[d], &st) || st != 0)) return false;
    }
    ir_is_const_int(r->buf->shape[nd - 2], rows);
    ir_is_const_int(r->buf->shape[nd - 1], cols);
    return true;
}

/* The column block of an MN-major B (its swizzled row, in elements), 0
 * for a K-major one. */
static int wgmma_bw(const IrTileOp *op) {
    int64_t rows, cols;
    if (op->trans_b || !op_gemm_wgmma_matrix(&op->r[1], &rows, &cols)) return 0;
    return cols >= 64 ? 64 : (int)cols;
}

/* Layout inference of a wgmma gemm: the accumulator takes WGMMA_C over the
 * warpgroup grid (lower_gemm_cuda.c checked that one fits). */
static void wgmma_infer_layout(TsLayoutCtx *lx, const IrStmt *s) {
    IrTileOp *op = s->op;
    IrRegion *C = &op->r[2];
    int fc = ts_layout_frag(lx, C->buf);
    if (fc < 0) return;
    int64_t m, n;
    int gm, gn, ni;
    if (!op_region_whole(C) || C->ndim != 2 || !ir_is_const_int(C->extent[0], &m) || !ir_is_const_int(C->extent[1], &n) ||
        lx->nt % 128 || !op_gemm_wgmma_grid(op, m, n, lx->nt / 128, wgmma_bw(op), &gm, &gn, &ni)) {
        ts_layout_give_up(lx, "no warpgroup grid fits the %s wgmma accumulator %s", op_region_text(lx->arena, C),
                          C->buf->name);
        return;
    }
    ts_layout_set(lx, fc, ir_layout_wgmma_c(lx->k, m, n, gm, gn), "the accumulator of T.gemm (wgmma)");
}

/* Once the kernel's layouts succeed: a wgmma operand tile takes the
 * layout its descriptors read (ir_wgmma_operand: swizzle and column
 * blocks) and the alignment of its swizzle pattern's repeat (8 rows). */
static void wgmma_operand_layout(IrKernel *k, const TsCaps *caps, IrBuffer *b) {
    (void)k, (void)caps;
    int64_t rows, cols;
    IrWgmmaOperand w;
    if (b->ndim < 2 || !ir_is_const_int(b->shape[b->ndim - 2], &rows) || !ir_is_const_int(b->shape[b->ndim - 1], &cols))
        return;
    if (!ir_wgmma_operand(rows, cols, 0, &b->swizzle, &w)) return;
    b->smem_align = 8 * w.row_bytes;
}

/* ---- infer_layout (layout_inference, CUDA) -------------------------------- */

/* The warp grid of an mma.sync gemm: wm x wn warps over an m x n tile.  A
 * T.wgmma_gemm (wg_async) on mma.sync with the Square policy takes its warps
 * on M, as wgmma's own layout has them (the 4 warps of a warpgroup hold
 * rows 16w .. 16w + 15 of each m64 tile: doc/HOPPER.md): kernels written
 * for it (FlashMLA) pass its row statistics and its accumulator as the next
 * gemm's register A operand between gemms of one warp grid, with no
 * exchange through shared memory. */
static bool warp_grid(const IrTileOp *op, int64_t m, int64_t n, int nw, int *wm, int *wn) {
    bool row = op->policy == TS_GEMM_FULLROW || (op->wg_async && op->policy == TS_GEMM_SQUARE),
         col = op->policy == TS_GEMM_FULLCOL;
    if ((row && m % (16 * nw) == 0) || (col && n % (8 * nw) == 0)) {
        *wm = row ? nw : 1, *wn = row ? 1 : nw;
    } else if (row || col) {
        /* the tile is too small for every warp on its side (FullCol with 8 warps
         * over 32 columns: sparse MLA's backward): as many warps on that side as
         * fit, the rest on the other */
        *wm = *wn = 0;
        for (int a = nw; a >= 1 && !*wm; a--) {
            if (nw % a) continue;
            int b = nw / a; /* a warps on the policy's side, b on the other */
            int r = row ? a : b, c = row ? b : a;
            if (m % (16 * r) == 0 && n % (8 * c) == 0) *wm = r, *wn = c;
        }
        if (!*wm) return false;
    } else {
        int64_t best = -1;
        for (int a = 1; a <= nw; a++) {
            if (nw % a) continue;
            int b = nw / a;
            if (m % (16 * a) || n % (8 * b)) continue;
            int64_t d = llabs(m / a - n / b);
            if (best < 0 || d < best) best = d, *wm = a, *wn = b;
        }
        if (best < 0) return false;
    }
    return m % (16 * *wm) == 0 && n % (8 * *wn) == 0;
}

/* The accumulator (and a register A operand) of a gemm kept for mma.sync
 * (TS_OP_INST_MMA_SYNC) takes the instruction's layout over the gemm's warp
 * grid (T.GemmWarpPolicy): MMA_C, whatever else is known (every level). */
void ts_op_gemm_infer_layout(TsLayoutCtx *lx, const IrStmt *s, TsLayoutLevel level) {
    (void)level;
    if (s->op->inst == TS_OP_INST_WGMMA) {
        wgmma_infer_layout(lx, s);
        return;
    }
    if (s->op->inst != TS_OP_INST_MMA_SYNC) return; /* lowered to loops: no instruction layout */
    IrTileOp *op = s->op;
    IrRegion *A = &op->r[0], *B = &op->r[1], *C = &op->r[2];
    int fa = ts_layout_frag(lx, A->buf), fb = ts_layout_frag(lx, B->buf), fc = ts_layout_frag(lx, C->buf);
    if (fb >= 0) ts_layout_give_up(lx, "T.gemm with B in a fragment (%s)", B->buf->name);
    if (fc < 0) return; /* accumulator in shared memory: nothing to infer */
    if (!op_region_whole(C) || C->ndim != 2) {
        ts_layout_give_up(lx, "T.gemm accumulates into part of fragment %s", C->buf->name);
        return;
    }
    int64_t m, n;
    ir_is_const_int(C->extent[0], &m);
    ir_is_const_int(C->extent[1], &n);
    int wm = 0, wn = 0;
    if (!warp_grid(op, m, n, lx->nt / 32, &wm, &wn)) {
        ts_layout_give_up(lx, "no warp grid of %d warps fits a %lld x %lld mma.sync accumulator", lx->nt / 32, (long long)m,
                (long long)n);
        return;
    }
    ts_layout_set(lx, fc, ir_layout_mma_c(lx->k, m, n, wm, wn), "the accumulator of T.gemm");
    if (fa >= 0) {
        int64_t ka;
        if (op->trans_a || A->ndim != 2 || !op_region_whole(A) || !ir_is_const_int(A->extent[1], &ka)) {
            ts_layout_give_up(lx, "T.gemm with A in fragment %s needs it whole and untransposed", A->buf->name);
            return;
        }
        /* warps in rows only: each warp holds its rows of A as an accumulator of
         * m x k would (MMA_C); with warps in columns too (FullCol) every warp of a
         * warp row needs all of its rows, so they are replicated over the row's
         * warps (MMA_A, the same registers in each) */
        ts_layout_set(lx, fa, wn == 1 ? ir_layout_mma_c(lx->k, m, ka, wm, 1) : ir_layout_mma_a(lx->k, m, ka, wm, wn),
                      "the register A operand of T.gemm");
    }
}

/* ---- lower_layout (layout_inference, once every fragment has a layout) ---- */

/* The whole register buffer of fragment f, as a one-dimensional region. */
static IrRegion reg_region(TsLayoutLower *ll, int f) {
    TsArena *a = ll->lx->arena;
    IrRegion r;
    r.buf = ll->reg[f];
    r.ndim = 1;
    r.start = TS_NEWN(a, IrExpr *, 1);
    r.extent = TS_NEWN(a, IrExpr *, 1);
    r.start[0] = ir_i32(a, 0);
    r.extent[0] = ir_i32(a, ll->lx->lay[f]->local_size);
    return r;
}

/* (a walk that never stops: ir_stmt_any visits every statement) */
static bool reads_plain(const IrStmt *s, void *ctx) {
    (void)ctx;
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_MMA_SYNC &&
        !s->op->r[2].buf->layout)
        for (int i = 0; i < 2; i++) {
            IrBuffer *b = s->op->r[i].buf;
            if (b->scope == IR_SCOPE_SHARED) {
                b->swizzle = (IrSwizzle){0};
                b->swizzle_annotated = 0;
            }
        }
    return false;
}

/* A tensor-core gemm whose accumulator stays in shared memory (no layout:
 * over the register budget, or layout inference gave up) is printed as
 * the shared-accumulator form, which indexes A and B unswizzled: the tiles
 * such a gemm reads keep their plain layout, even where swizzle_operand
 * (for another gemm reading the same tile: the AMD MLA decode's KV tile)
 * or T.annotate_layout (TileLang's gdn chunk_o_bwd) asked for a swizzle.
 * A swizzle is only where the elements sit: every other access of the
 * tile follows the plain layout as well.  Run last in layout_inference,
 * whichever way the kernel went. */
void ts_op_gemm_plain_operands(IrKernel *k) { (void)ir_stmt_any(k->body, reads_plain, NULL); }

/* A wgmma gemm reads operand b (it has the descriptors' layout instead). */
static bool wgmma_reads(const IrStmt *s, void *ctx) {
    const IrBuffer *b = ctx;
    return s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_WGMMA &&
           (s->op->r[0].buf == b || s->op->r[1].buf == b);
}

/* 16-byte chunks of each row XORed by the row (or, for rows shorter than
 * 128 bytes, by the 128-byte line), so that the 8 rows one ldmatrix reads
 * fall in 8 different bank groups; the row padding is then not needed. */
static void swizzle_operand(IrKernel *k, const TsCaps *caps, IrBuffer *b) {
    if (ir_stmt_any(k->body, wgmma_reads, b)) return;
    if (!caps->swizzle || b->scope != IR_SCOPE_SHARED || b->swizzle.kind != IR_SWIZZLE_NONE || b->swizzle_annotated)
        return; /* (T.annotate_layout's choice stands) */
    if (ts_dtype_bits(b->dt) != 16 || b->ndim < 2 || b->ndim > 8) return;
    int64_t shape[8];
    for (int d = 0; d < b->ndim; d++)
        if (!ir_is_const_int(b->shape[d], &shape[d])) return;
    ir_swizzle_for_tile(16, shape, b->ndim, &b->swizzle); /* (none where it does not apply) */
}

/* Tensor-core loops in registers (an mma.sync gemm whose accumulator has
 * its layout) ask ptxas to trade registers for its schedule.  At its
 * default level ptxas picked, by heuristics that moved with unrelated
 * changes of the source, either ~225 registers with each ldmatrix issued
 * 10-45 instructions before its mma, or ~175 with the loads just in time:
 * FlashAttention D128 causal 1.89 or 2.13 ms, non-causal 3.37 or 3.92 ms
 * (H200, bench/RESULTS.md).  From level 7 on it took the first on every
 * bench kernel (checked through NVRTC on the CPU: registers and
 * load-to-mma distances, the GEMMs' unchanged).  The level is recorded on
 * the kernel; the CUDA printer writes it where nvrtc.c reads it. */
static void reg_level(IrKernel *k, const TsCaps *caps, IrBuffer *b) {
    (void)caps, (void)b;
    k->ptxas_reg_level = 8;
}

/* A gemm kept for mma.sync stays a tile op (the CUDA code generator's mma
 * functions read the registers by the layouts): its fragment accumulator
 * and register A operand become their register buffers, and its shared
 * operands get an XOR swizzle if the kernel succeeds.  An accumulator in
 * shared memory leaves the gemm as it is. */
/* A wgmma gemm whose accumulator has its layout: the accumulator becomes
 * its register buffer, the operands' descriptor layouts are recorded on
 * the op (their tiles take them if the kernel succeeds). */
static IrStmt *wgmma_lower_layout(TsLayoutLower *ll, IrStmt *s, int fc) {
    TsArena *a = ll->lx->arena;
    IrTileOp *op = s->op, *n = TS_NEW(a, IrTileOp);
    *n = *op;
    for (int i = 0; i < 2; i++) {
        int64_t rows = 0, cols = 0;
        IrSwizzle z;
        int mn = i == 0 ? op->trans_a : !op->trans_b;
        if (!op_gemm_wgmma_matrix(&op->r[i], &rows, &cols) || !ir_wgmma_operand(rows, cols, mn, &z, &n->wg[i])) {
            ts_layout_give_up(ll->lx, "wgmma gemm operand %s without a descriptor layout", op->r[i].buf->name);
            return s; /* (lower_gemm_cuda.c checked it: not reached) */
        }
        ts_layout_on_success(ll, wgmma_operand_layout, op->r[i].buf);
    }
    const IrLayout *cl = ll->lx->lay[fc];
    int gm, gn;
    if (cl->kind != IR_LAYOUT_WGMMA_C ||
        !op_gemm_wgmma_grid(op, cl->p[0], cl->p[1], (int)(cl->p[2] * cl->p[3]), wgmma_bw(op), &gm, &gn, &n->wg_ni) ||
        gm != cl->p[2] || gn != cl->p[3]) {
        ts_layout_give_up(ll->lx, "the accumulator %s of a wgmma gemm has another layout", op->r[2].buf->name);
        return s;
    }
    n->r[2] = reg_region(ll, fc);
    IrStmt *r = ir_stmt(a, IR_S_TILEOP, s->loc);
    r->op = n;
    return r;
}

IrStmt *ts_op_gemm_lower_layout(TsLayoutLower *ll, IrStmt *s) {
    IrTileOp *op = s->op;
    if (op->inst == TS_OP_INST_WGMMA) {
        int fc = ts_layout_frag(ll->lx, op->r[2].buf);
        if (fc >= 0) return wgmma_lower_layout(ll, s, fc);
        /* the accumulator stays in shared memory (over the register budget):
         * wgmma cannot write there, mma.sync's shared-accumulator form runs it */
        IrTileOp *n = TS_NEW(ll->lx->arena, IrTileOp);
        *n = *op;
        n->inst = TS_OP_INST_MMA_SYNC;
        IrStmt *r = ir_stmt(ll->lx->arena, IR_S_TILEOP, s->loc);
        r->op = n;
        return r;
    }
    if (op->inst != TS_OP_INST_MMA_SYNC) return s;
    TsArena *a = ll->lx->arena;
    int fa = ts_layout_frag(ll->lx, op->r[0].buf), fc = ts_layout_frag(ll->lx, op->r[2].buf);
    if (fc < 0 && fa >= 0) {
        /* the accumulator stays in shared memory (over the register budget: the
         * AMD MLA decode's 64 x 512 float32 acc_o on 4 warps) while A is a register
         * fragment: the gemm reads A from a shared copy of its registers */
        IrStmt *out = ir_seq(a);
        out->loc = s->loc;
        IrBuffer *sc = ts_layout_spill(ll, fa, out, s->loc);
        if (!sc) {
            ts_layout_give_up(ll->lx, "T.gemm with A in fragment %s and its accumulator %s in shared memory",
                              op->r[0].buf->name, op->r[2].buf->name);
            return s;
        }
        IrStmt *g = ir_stmt(a, IR_S_TILEOP, s->loc);
        IrTileOp *n = TS_NEW(a, IrTileOp);
        *n = *op;
        n->r[0].buf = sc; /* (the same shape: the region's indices hold) */
        g->op = n;
        ir_seq_push(a, out, g);
        return out;
    }
    if (fc < 0) return s;
    IrStmt *r = ir_stmt(a, IR_S_TILEOP, s->loc);
    IrTileOp *n = TS_NEW(a, IrTileOp);
    *n = *op;
    n->r[2] = reg_region(ll, fc);
    if (fa >= 0) n->r[0] = reg_region(ll, fa);
    else ts_layout_on_success(ll, swizzle_operand, op->r[0].buf);
    ts_layout_on_success(ll, swizzle_operand, op->r[1].buf);
    ts_layout_on_success(ll, reg_level, NULL);
    r->op = n;
    return r;
}

/* A and B are read; C is read and written (only written with clear_accum). */
int ts_op_gemm_regions(const IrTileOp *op, int i) {
    if (i != 2) return IR_ACC_READ; /* A, B, and a block-scaled gemm's scale words */
    return op->clear_accum ? IR_ACC_WRITE : IR_ACC_READ | IR_ACC_WRITE;
}
