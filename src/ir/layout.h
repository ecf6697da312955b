/*
 * layout.h — fragment layouts as objects.
 *
 * A fragment buffer (T.alloc_fragment) is spread over the threads of a
 * block: each element lives in the registers of one thread (or of several,
 * when the layout replicates it) at a local index.  An IrLayout (ir.h) says
 * both ways:
 *
 *   forward  element (i0..in) [+ replica r]  ->  (thread, local index)
 *   inverse  (thread, local digits d0..dk)   ->  element (i0..in)
 *
 * as IR expressions over placeholder variables (so passes can substitute
 * them into loops), and natively here (so passes and tests can enumerate
 * them cheaply).  The local index is a row-major number over `nlocal`
 * digits with extents local_shape[]: lowering walks a thread's elements
 * with one unrolled loop per digit, so every register index is a constant
 * after unrolling.
 *
 * The families, with the facts they come from:
 *
 *   MMA_C(m, n, wm, wn)   the accumulator of warp-tiled mma.sync.m16n8k16
 *                         over an m x n tile: warps in a wm x wn grid
 *                         (warp w at row w / wn, column w % wn), each
 *                         holding an (m/wm) x (n/wn) sub-tile as
 *                         (m/wm/16) x (n/wn/8) m16n8 tiles.  Inside one
 *                         tile, with lane = g * 4 + t (PTX ISA, "Matrix
 *                         Fragments for mma.m16n8k16", C/D layout): c0, c1
 *                         = rows g, columns 2t, 2t+1; c2, c3 = row g + 8.
 *                         Local digits (tile row, tile col, half, pair).
 *                         Two adjacent n8 tiles of it are exactly the A
 *                         operand fragment of one k16 step (a0..a3), which
 *                         is how FlashAttention's P stays in registers.
 *   MMA_ROWS(m, n, wm, wn) the row projection of MMA_C: row i is held by
 *                         the 4 * wn threads that hold any of its columns
 *                         (replicate = 4 * wn); local digits (tile row,
 *                         half).  Reductions along rows land here.
 *   WARP_ROWS(m, n, w)    m / w consecutive rows per warp, column j on
 *                         lane j % 32 at local (row in warp, j / 32): a
 *                         row lives in one warp, so reductions along rows
 *                         are warp shuffles, and a warp's loads of a row
 *                         are consecutive (coalesced).  For fragments no
 *                         instruction constrains whose rows fit.
 *   WARP_ROWS_PROJ(m, n, w) its row projection: row r on all 32 lanes of
 *                         its warp (replicate = 32), local r % (m / w).
 *   WARP_ROWS(m, n, w, v) with v > 1: each thread holds v consecutive
 *                         columns (one 16-byte vector for v = 4 floats),
 *                         L = min(32, n / v) lanes share a row and a warp
 *                         step covers G = 32 / L consecutive rows, so a
 *                         warp moves 32 whole vectors of consecutive
 *                         memory per step (512 bytes of a float row).
 *                         Element (i, j), r = i % (m / w): thread
 *                         (i / (m / w)) * 32 + (r % G) * L + (j / v) % L,
 *                         local digits (r / G, j / (L v), j % v).  Its
 *                         projection: row i on the L lanes of its group
 *                         (replicate = L), local r / G; a row reduction
 *                         is log2(L) shuffle steps.
 *                         Fewer rows than warps (m < w, w a multiple of
 *                         m; RMSNorm's one row per block): row i on the
 *                         L = 32 w / m threads i L .. i L + L - 1 (w / m
 *                         whole warps), thread i L + (j / v) % L, local
 *                         (0, j / (L v), j % v); a row reduction is 5
 *                         shuffle steps and then the w / m warps' partials
 *                         through shared memory.
 *   MMA_A(m, k, wm, wn)   a register A operand (m x k) of an mma.sync gemm
 *                         whose warps form a wm x wn grid: every warp of
 *                         warp row w / wn needs all k columns of its m/wm
 *                         rows, so each row block is held as MMA_C(m, k,
 *                         wm, 1) holds it by each of the wn warps of that
 *                         row (replicate = wn, replica r on warp column
 *                         r).  The local digits are MMA_C's, so the gemm
 *                         reads its a0..a3 at the same register indices
 *                         whatever the warp column.  (FullCol gemms on a
 *                         register P: the persistent MLA decode, 1 x 8
 *                         warps over a 64 x 64 P.)
 *   WGMMA_C(m, n, gm, gn) the accumulator of wgmma.mma_async m64nNk16
 *                         (f32) over warpgroups in a gm x gn grid
 *                         (warpgroup g at row g / gn, column g % gn), each
 *                         holding an (m/gm) x (n/gn) sub-tile as (m/gm/64)
 *                         m64 tiles.  In one m64 tile, warp w of the
 *                         warpgroup holds rows 16w..16w+15 and, with lane
 *                         = g * 4 + t, register i of an instruction's
 *                         accumulator is row 16w + g + 8 * ((i / 2) % 2),
 *                         column 8 * (i / 4) + 2t + i % 2 (PTX ISA,
 *                         "Register Fragments and Shared Memory Matrix
 *                         Layouts", wgmma .m64nNk16 D; doc/HOPPER.md).
 *                         Local digits (m64 tile, n8 block, half, pair):
 *                         an instruction over columns [n0, n0 + N) of
 *                         tile mt writes registers mt * (n/gn/2) + n0 / 2
 *                         onward, N / 2 of them in its order.
 *   CYCLIC(nthreads)      row-major element e -> thread e % nthreads,
 *                         local e / nthreads (the size must be a multiple
 *                         of nthreads): the layout of fragments no
 *                         instruction constrains.  With fewer elements
 *                         than threads (nthreads a multiple of the size
 *                         total, p[1] = total): element e on threads
 *                         e + r * total (replicate nthreads / total),
 *                         local 0 (a 64-element mask in a block of 128).
 */
#ifndef TS_IR_LAYOUT_H
#define TS_IR_LAYOUT_H

#include "ir/ir.h"
#include "ir/tileop.h"

/* Constructors (nodes in k's arena).  NULL when the parameters do not
 * describe a layout (sizes not multiples of the instruction tile, ...). */
IrLayout *ir_layout_mma_c(IrKernel *k, int64_t m, int64_t n, int wm, int wn);
IrLayout *ir_layout_mma_rows(IrKernel *k, int64_t m, int64_t n, int wm, int wn);
IrLayout *ir_layout_mma_a(IrKernel *k, int64_t m, int64_t kk, int wm, int wn);
IrLayout *ir_layout_wgmma_c(IrKernel *k, int64_t m, int64_t n, int gm, int gn);
IrLayout *ir_layout_cyclic(IrKernel *k, int ndim, const int64_t *shape, int nthreads);
IrLayout *ir_layout_warp_rows(IrKernel *k, int64_t m, int64_t n, int nwarps);
IrLayout *ir_layout_warp_rows_proj(IrKernel *k, int64_t m, int64_t n, int nwarps);
IrLayout *ir_layout_warp_rows_vec(IrKernel *k, int64_t m, int64_t n, int nwarps, int v);
IrLayout *ir_layout_warp_rows_vec_proj(IrKernel *k, int64_t m, int64_t n, int nwarps, int v);
/* The lanes that share a row of a WARP_ROWS(_PROJ) layout (L above); 0
 * for other families. */
int ir_layout_row_lanes(const IrLayout *l);
/* The warps that share a row of a WARP_ROWS(_PROJ) layout (1 unless it has
 * fewer rows than warps); 0 for other families. */
int ir_layout_row_warps(const IrLayout *l);

/* Native evaluation.  forward: the thread holding element idx (replica
 * rep, 0 <= rep < replicate) and its local index; inverse: the element at
 * (thread, local digits), false when that thread holds nothing there. */
void ir_layout_forward(const IrLayout *l, const int64_t *idx, int64_t rep, int64_t *thread, int64_t *local);
bool ir_layout_inverse(const IrLayout *l, int64_t thread, const int64_t *digits, int64_t *idx);
/* The local index at which `thread` holds element idx, or -1 when it holds
 * no copy of it (the replica, if any, is found from the thread). */
int64_t ir_layout_local_at(const IrLayout *l, const int64_t *idx, int64_t thread);
/* Elements per thread (the product of local_shape). */
int64_t ir_layout_local_size(const IrLayout *l);
/* Same family and parameters (hence the same map). */
bool ir_layout_equal(const IrLayout *a, const IrLayout *b);

/* Checks by enumeration that the native maps and the IR expressions agree
 * and that every element is held by exactly `replicate` threads, each at
 * one local index, with no two elements on one (thread, local).  Returns
 * false with a reason in *why (arena text) on the first disagreement. */
bool ir_layout_check(TsArena *a, const IrLayout *l, const char **why);

/* Evaluate an integer expression whose variables are among vars[0..n)
 * (values vals[]); false if it uses anything else (loads, other vars,
 * floats). */
bool ir_eval_int(const IrExpr *e, IrVar *const *vars, const int64_t *vals, int n, int64_t *out);

/* Shared-memory swizzles (IrSwizzle).  The XOR swizzle the CUDA target
 * gives a shared tile of elem_bits-bit elements (its last dimension
 * contiguous): 16-byte chunks XORed by the row, or by the 128-byte line for
 * rows shorter than 128 bytes, so that 8 rows read at one column hit 8
 * different bank groups (what ldmatrix and column reads need).  False
 * (*out = none) where it does not apply: rows under 32 bytes, a row length
 * not a power of two, a tile that is not whole groups of 8 chunks.  Used
 * for layout inference's tensor-core operands and for
 * T.annotate_layout(make_swizzled_layout(...)). */
bool ir_swizzle_for_tile(int elem_bits, const int64_t *shape, int ndim, IrSwizzle *out);
/* The offset at which element offset o of a buffer with swizzle z is
 * stored (the identity for none; column blocks, then the XOR); and the
 * period: offsets that are multiples of it add outside the swizzle,
 * z(P + o) == P + z(o). */
int64_t ir_swizzle_apply(const IrSwizzle *z, int64_t o);
int64_t ir_swizzle_period(const IrSwizzle *z);
/* The shared layout a wgmma gemm reads a 16-bit operand matrix of rows x
 * cols (cols contiguous; mn_major: cols is the M or N axis) in: the widest
 * swizzle its rows allow (128B for 64 or more columns, 64B for 32, 32B for
 * 16), in column blocks of that width where the rows are wider, and the
 * descriptor fields of that layout (doc/HOPPER.md).  False where no
 * canonical layout fits (cols not a power of two of at least 16, rows not
 * a multiple of 8). */
bool ir_wgmma_operand(int64_t rows, int64_t cols, int mn_major, IrSwizzle *z, IrWgmmaOperand *w);
/* The 64-bit wgmma matrix descriptor (PTX ISA, "Matrix Descriptor
 * Format"): bits 0-13 the shared address >> 4 (of its low 18 bits), 16-29
 * the leading dimension byte offset >> 4, 32-45 the stride dimension byte
 * offset >> 4, 49-51 the base offset (0: the swizzle pattern's repeats
 * are aligned), 62-63 the swizzle mode (0 none, 1 128B, 2 64B, 3 32B). */
uint64_t ir_wgmma_desc(uint32_t smem_addr, int64_t lbo, int64_t sbo, int mode);
/* Which layout a user's index map is (T.annotate_layout with a function):
 * phys[0..nphys) are the physical indices over placeholder vars in[0..ndim)
 * (nphys == ndim: indices into the same shape; 1: a flat offset).  Every
 * element is enumerated (tiles up to 2^20 elements): 0 if the map is
 * row-major, 1 if it is an XOR swizzle (*out), -1 if it is neither (or not
 * a bijection of the tile, or not evaluable). */
int ir_swizzle_match(IrVar *const *in, const int64_t *shape, int ndim, IrExpr *const *phys, int nphys,
                     IrSwizzle *out);

/* One-line description for the IR printer and messages. */
void ir_layout_describe(TsBuf *b, const IrLayout *l);

#endif
