/*
 * rasterize.c — T.use_swizzle(panel_size): the order in which the GPU
 * meets a 2-D grid's blocks, for L2 reuse (CUDA).
 *
 * The hardware starts blocks roughly in linear order (x fastest).  For a
 * GEMM whose grid is (N tiles, M tiles), one wave then covers a few rows of
 * M tiles and every column of N tiles, so B is read from DRAM again for
 * every few rows of A.  Rasterization renumbers the blocks so that a wave
 * covers a panel of `panel` rows of blocks column by column: the panel's
 * A tiles and a few B tiles are reused from L2.  Panels alternate
 * direction (a serpentine), so consecutive panels start on the B tiles
 * the previous one ended on.
 *
 * The pass writes the renumbering into the IR: the kernel body becomes
 *     L = by * GX + bx;  P = panel * GX;  p = L // P;  o = L % P
 *     h = min(panel, GY - p * panel)            (rows in this panel)
 *     c = o // h;  bx' = (p odd) ? GX - 1 - c : c;  by' = o % h + p * panel
 *     body[bx := bx', by := by']
 * a bijection of the grid (every panel holds h * GX blocks, the last one
 * fewer rows), so results do not change.  order="col" (any order other
 * than "row", IrKernel.swizzle_col) is the same with the axes' roles
 * swapped, the linear order unchanged (TileLang's rasterization2DColumn):
 *     P = panel * GY;  p = L // P;  o = L % P;  w = min(panel, GX - p * panel)
 *     by' = (p odd) ? GY - 1 - o // w : o // w;  bx' = o % w + p * panel
 * Kernels with a 1-D grid, blocks that wait on each other (ordering
 * matters there) or no use_swizzle are left alone.
 */
#include "pass/pass.h"

static IrExpr *bin(TsArena *a, IrBinOp op, IrExpr *x, IrExpr *y) { return ir_bin(a, op, x, y); }

static IrStmt *let(TsArena *a, IrKernel *k, const char *name, IrExpr *value, IrVar **out) {
    IrVar *v = ir_var(k, name, value->dt, IR_VAR_LET);
    IrStmt *s = ir_stmt(a, IR_S_LET, (TsLoc){0});
    s->let.var = v;
    s->let.value = value;
    *out = v;
    return s;
}

void ts_pass_rasterize(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    TsArena *a = cx->arena;
    if (k->swizzle_panel <= 0 || k->ngrid < 2 || k->may_block || !k->block_idx[0] || !k->block_idx[1]) return;
    bool col = k->swizzle_col;
    int64_t g;
    if (ir_is_const_int(k->grid[col ? 0 : 1], &g) && g <= k->swizzle_panel) return; /* one panel: no change */
    IrVar *bx = k->block_idx[0], *by = k->block_idx[1];
    /* the raw indices: new block-index vars; bx, by become lets */
    IrVar *rx = ir_var(k, "raw_bx", bx->dt, IR_VAR_BLOCK_IDX), *ry = ir_var(k, "raw_by", by->dt, IR_VAR_BLOCK_IDX);
    rx->axis = 0;
    ry->axis = 1;
    TsDType dt = TS_INT64;
    IrExpr *GX = ir_cast(a, dt, k->grid[0]), *GY = ir_cast(a, dt, k->grid[1]), *W = ir_int(a, k->swizzle_panel, dt);
    /* the panels' axis (A: rows of blocks, or columns) and the other (O) */
    IrExpr *GA = col ? GX : GY, *GO = col ? GY : GX;
    IrStmt *body = ir_seq(a);
    IrVar *L, *P, *p, *o, *h, *c, *nbx, *nby;
    ir_seq_push(a, body, let(a, k, "lin", bin(a, IR_ADD, bin(a, IR_MUL, ir_cast(a, dt, ir_var_ref(a, ry)), GX),
                                              ir_cast(a, dt, ir_var_ref(a, rx))), &L));
    ir_seq_push(a, body, let(a, k, "psize", bin(a, IR_MUL, W, GO), &P));
    ir_seq_push(a, body, let(a, k, "panel", bin(a, IR_FLOORDIV, ir_var_ref(a, L), ir_var_ref(a, P)), &p));
    ir_seq_push(a, body, let(a, k, "poff", bin(a, IR_FLOORMOD, ir_var_ref(a, L), ir_var_ref(a, P)), &o));
    ir_seq_push(a, body, let(a, k, col ? "pcols" : "prows",
                             bin(a, IR_MIN, W, bin(a, IR_SUB, GA, bin(a, IR_MUL, ir_var_ref(a, p), W))), &h));
    ir_seq_push(a, body, let(a, k, col ? "prow" : "pcol", bin(a, IR_FLOORDIV, ir_var_ref(a, o), ir_var_ref(a, h)), &c));
    IrExpr *odd = bin(a, IR_EQ, bin(a, IR_FLOORMOD, ir_var_ref(a, p), ir_int(a, 2, dt)), ir_int(a, 1, dt));
    /* along the other axis, serpentine; across, within the panel */
    IrExpr *along = ir_select(a, odd, bin(a, IR_SUB, bin(a, IR_SUB, GO, ir_int(a, 1, dt)), ir_var_ref(a, c)),
                              ir_var_ref(a, c));
    IrExpr *across = bin(a, IR_ADD, bin(a, IR_FLOORMOD, ir_var_ref(a, o), ir_var_ref(a, h)),
                         bin(a, IR_MUL, ir_var_ref(a, p), W));
    ir_seq_push(a, body, let(a, k, "bx", ir_cast(a, bx->dt, col ? across : along), &nbx));
    ir_seq_push(a, body, let(a, k, "by", ir_cast(a, by->dt, col ? along : across), &nby));
    /* a bijection of the grid: the new indices keep the old ones' ranges,
     * which the arithmetic analysis cannot see through the panel
     * arithmetic (vector copies of tiles at bx * 128 need bx's range) */
    nbx->grid_perm = nby->grid_perm = true;
    nbx->axis = 0;
    nby->axis = 1;
    IrVar *from[2] = {bx, by};
    IrExpr *to[2] = {ir_var_ref(a, nbx), ir_var_ref(a, nby)};
    ir_seq_push(a, body, ir_stmt_subst(a, k->body, from, to, 2));
    k->body = body;
    k->block_idx[0] = rx;
    k->block_idx[1] = ry;
}
