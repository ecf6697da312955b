/*
 * layout.c — fragment layouts: constructors, native evaluation, the IR
 * expressions of both directions, and a check by enumeration that the two
 * agree (see layout.h for the families and where their facts come from).
 *
 * Each family is written twice on purpose: natively (fast, for passes that
 * enumerate a tile's elements) and as IR expressions (what lowering
 * substitutes into loops and the printer shows).  ir_layout_check runs
 * one against the other over every element, so a slip in either shows up
 * in the unit tests rather than as a wrong register on the GPU.
 */
#include "ir/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small IR builders ----------------------------------------------------- */

static IrExpr *c32(TsArena *a, int64_t v) { return ir_i32(a, v); }
static IrExpr *add(TsArena *a, IrExpr *x, IrExpr *y) { return ir_bin(a, IR_ADD, x, y); }
static IrExpr *mul(TsArena *a, IrExpr *x, int64_t c) { return ir_bin(a, IR_MUL, x, c32(a, c)); }
static IrExpr *fdiv(TsArena *a, IrExpr *x, int64_t c) { return ir_bin(a, IR_FLOORDIV, x, c32(a, c)); }
static IrExpr *fmod_(TsArena *a, IrExpr *x, int64_t c) { return ir_bin(a, IR_FLOORMOD, x, c32(a, c)); }
static IrExpr *ref(TsArena *a, IrVar *v) { return ir_var_ref(a, v); }

static IrLayout *new_layout(IrKernel *k, IrLayoutKind kind, int ndim, const int64_t *shape, int nlocal,
                            const int64_t *local_shape, int nthreads, int replicate, const char *origin) {
    TsArena *a = k->arena;
    IrLayout *l = TS_NEW(a, IrLayout);
    l->kind = kind;
    l->ndim = ndim;
    l->nlocal = nlocal;
    l->nthreads = nthreads;
    l->replicate = replicate;
    l->origin = origin;
    l->local_size = 1;
    l->in = TS_NEWN(a, IrVar *, ndim);
    for (int i = 0; i < ndim; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "i%d", i);
        l->in[i] = ir_var(k, nm, TS_INT32, IR_VAR_LOOP);
        l->shape[i] = shape[i];
    }
    l->tv_thread = ir_var(k, "t", TS_INT32, IR_VAR_LOOP);
    l->tv_digit = TS_NEWN(a, IrVar *, nlocal);
    for (int i = 0; i < nlocal; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "d%d", i);
        l->tv_digit[i] = ir_var(k, nm, TS_INT32, IR_VAR_LOOP);
        l->local_shape[i] = local_shape[i];
        l->local_size *= local_shape[i];
    }
    if (replicate > 1) l->rep = ir_var(k, "r", TS_INT32, IR_VAR_LOOP);
    l->local = TS_NEWN(a, IrExpr *, nlocal);
    l->index = TS_NEWN(a, IrExpr *, ndim);
    return l;
}

/* ---- MMA_C and MMA_ROWS ------------------------------------------------------ */

/* Warp grid fits: the warp sub-tile is a whole number of m16n8 tiles. */
static bool mma_fits(int64_t m, int64_t n, int wm, int wn) {
    return wm >= 1 && wn >= 1 && wm * wn <= 32 && m > 0 && n > 0 && m % (16 * wm) == 0 && n % (8 * wn) == 0;
}

/* What MMA_C and MMA_A share: a warp's m16n8 fragments, lanes and digits.
 * warp: the element's warp; r, c: its row and column in that warp's tile.
 * Forward: thread = warp * 32 + (r % 8) * 4 + (c % 8) / 2, digits (it, jt,
 * eh, el) = (r / 16, c / 8, (r % 16) / 8, c % 2).  Inverse from (t, digits):
 * row = (t / 32 / wn) * WM + it * 16 + eh * 8 + lane / 4, col = (t / 32 % wn)
 * * WN + jt * 8 + (lane % 4) * 2 + el, without the first term where WN is 0
 * (MMA_A: every warp column holds the whole K extent). */
static void mma_fragments(TsArena *a, IrLayout *l, IrExpr *warp, IrExpr *r, IrExpr *c, int64_t WM, int wn,
                          int64_t WN) {
    IrExpr *lane = add(a, mul(a, fmod_(a, r, 8), 4), fdiv(a, fmod_(a, c, 8), 2));
    l->thread = add(a, mul(a, warp, 32), lane);
    l->local[0] = fdiv(a, r, 16);
    l->local[1] = fdiv(a, c, 8);
    l->local[2] = fdiv(a, fmod_(a, r, 16), 8);
    l->local[3] = fmod_(a, c, 2);
    IrExpr *t = ref(a, l->tv_thread), *w = fdiv(a, t, 32), *ln = fmod_(a, t, 32);
    l->index[0] = add(a, add(a, mul(a, fdiv(a, w, wn), WM), mul(a, ref(a, l->tv_digit[0]), 16)),
                      add(a, mul(a, ref(a, l->tv_digit[2]), 8), fdiv(a, ln, 4)));
    IrExpr *col = add(a, mul(a, fmod_(a, ln, 4), 2), ref(a, l->tv_digit[3]));
    l->index[1] = WN ? add(a, add(a, mul(a, fmod_(a, w, wn), WN), mul(a, ref(a, l->tv_digit[1]), 8)), col)
                     : add(a, mul(a, ref(a, l->tv_digit[1]), 8), col);
}

IrLayout *ir_layout_mma_c(IrKernel *k, int64_t m, int64_t n, int wm, int wn) {
    if (!mma_fits(m, n, wm, wn)) return NULL;
    TsArena *a = k->arena;
    int64_t WM = m / wm, WN = n / wn, mi = WM / 16, ni = WN / 8;
    int64_t shape[2] = {m, n}, lshape[4] = {mi, ni, 2, 2};
    IrLayout *l = new_layout(k, IR_LAYOUT_MMA_C, 2, shape, 4, lshape, wm * wn * 32, 1, "mma.sync accumulator");
    l->p[0] = m, l->p[1] = n, l->p[2] = wm, l->p[3] = wn;
    /* forward: (row, col) -> thread, digits */
    IrExpr *row = ref(a, l->in[0]), *col = ref(a, l->in[1]);
    IrExpr *r = fmod_(a, row, WM), *c = fmod_(a, col, WN);
    IrExpr *warp = add(a, mul(a, fdiv(a, row, WM), wn), fdiv(a, col, WN));
    mma_fragments(a, l, warp, r, c, WM, wn, WN); /* and the inverse: (t, it, jt, eh, el) -> (row, col) */
    l->local_size = mi * ni * 4;
    return l;
}

IrLayout *ir_layout_mma_rows(IrKernel *k, int64_t m, int64_t n, int wm, int wn) {
    if (!mma_fits(m, n, wm, wn)) return NULL;
    TsArena *a = k->arena;
    int64_t WM = m / wm, mi = WM / 16;
    int64_t shape[1] = {m}, lshape[2] = {mi, 2};
    IrLayout *l = new_layout(k, IR_LAYOUT_MMA_ROWS, 1, shape, 2, lshape, wm * wn * 32, 4 * wn,
                             "rows of an mma.sync accumulator");
    l->p[0] = m, l->p[1] = n, l->p[2] = wm, l->p[3] = wn;
    IrExpr *row = ref(a, l->in[0]), *r = fmod_(a, row, WM), *rep = ref(a, l->rep);
    IrExpr *warp = add(a, mul(a, fdiv(a, row, WM), wn), fdiv(a, rep, 4));
    l->thread = add(a, mul(a, warp, 32), add(a, mul(a, fmod_(a, r, 8), 4), fmod_(a, rep, 4)));
    l->local[0] = fdiv(a, r, 16);
    l->local[1] = fdiv(a, fmod_(a, r, 16), 8);
    IrExpr *t = ref(a, l->tv_thread), *w = fdiv(a, t, 32), *ln = fmod_(a, t, 32);
    l->index[0] = add(a, add(a, mul(a, fdiv(a, w, wn), WM), mul(a, ref(a, l->tv_digit[0]), 16)),
                      add(a, mul(a, ref(a, l->tv_digit[1]), 8), fdiv(a, ln, 4)));
    return l;
}

IrLayout *ir_layout_mma_a(IrKernel *k, int64_t m, int64_t kk, int wm, int wn) {
    if (!mma_fits(m, kk, wm, 1) || wn < 1 || wm * wn > 32) return NULL;
    TsArena *a = k->arena;
    int64_t WM = m / wm, mi = WM / 16, ni = kk / 8;
    int64_t shape[2] = {m, kk}, lshape[4] = {mi, ni, 2, 2};
    IrLayout *l = new_layout(k, IR_LAYOUT_MMA_A, 2, shape, 4, lshape, wm * wn * 32, wn,
                             "register A operand of mma.sync");
    l->p[0] = m, l->p[1] = kk, l->p[2] = wm, l->p[3] = wn;
    /* forward: (row, col) + replica -> thread, digits (MMA_C's with one warp column) */
    IrExpr *row = ref(a, l->in[0]), *col = ref(a, l->in[1]);
    IrExpr *r = fmod_(a, row, WM);
    IrExpr *rep = wn > 1 ? ref(a, l->rep) : c32(a, 0);
    IrExpr *warp = add(a, mul(a, fdiv(a, row, WM), wn), rep);
    /* the inverse whatever t's warp column (WN 0: the whole K extent) */
    mma_fragments(a, l, warp, r, col, WM, wn, 0);
    l->local_size = mi * ni * 4;
    return l;
}

/* ---- WGMMA_C ------------------------------------------------------------------- */

/* Warpgroup grid fits: each warpgroup's sub-tile is whole m64 tiles by n8 columns. */
static bool wgmma_fits(int64_t m, int64_t n, int gm, int gn) {
    return gm >= 1 && gn >= 1 && gm * gn <= 8 && m > 0 && n > 0 && m % (64 * gm) == 0 && n % (8 * gn) == 0;
}

IrLayout *ir_layout_wgmma_c(IrKernel *k, int64_t m, int64_t n, int gm, int gn) {
    if (!wgmma_fits(m, n, gm, gn)) return NULL;
    TsArena *a = k->arena;
    int64_t WM = m / gm, WN = n / gn;
    int64_t shape[2] = {m, n}, lshape[4] = {WM / 64, WN / 8, 2, 2};
    IrLayout *l = new_layout(k, IR_LAYOUT_WGMMA_C, 2, shape, 4, lshape, gm * gn * 128, 1, "wgmma accumulator");
    l->p[0] = m, l->p[1] = n, l->p[2] = gm, l->p[3] = gn;
    /* forward: (row, col) -> thread, digits (m64 tile, n8 block, row half, column pair) */
    IrExpr *row = ref(a, l->in[0]), *col = ref(a, l->in[1]);
    IrExpr *r = fmod_(a, row, WM), *c = fmod_(a, col, WN), *rr = fmod_(a, r, 64);
    IrExpr *grp = add(a, mul(a, fdiv(a, row, WM), gn), fdiv(a, col, WN));
    IrExpr *lane = add(a, mul(a, fmod_(a, rr, 8), 4), fdiv(a, fmod_(a, c, 8), 2));
    l->thread = add(a, add(a, mul(a, grp, 128), mul(a, fdiv(a, rr, 16), 32)), lane);
    l->local[0] = fdiv(a, r, 64);
    l->local[1] = fdiv(a, c, 8);
    l->local[2] = fdiv(a, fmod_(a, rr, 16), 8);
    l->local[3] = fmod_(a, c, 2);
    /* inverse: (t, mt, nb, h, p) -> (row, col) */
    IrExpr *t = ref(a, l->tv_thread), *g = fdiv(a, t, 128), *w = fdiv(a, fmod_(a, t, 128), 32), *ln = fmod_(a, t, 32);
    l->index[0] = add(a, add(a, mul(a, fdiv(a, g, gn), WM), mul(a, ref(a, l->tv_digit[0]), 64)),
                      add(a, add(a, mul(a, w, 16), mul(a, ref(a, l->tv_digit[2]), 8)), fdiv(a, ln, 4)));
    l->index[1] = add(a, add(a, mul(a, fmod_(a, g, gn), WN), mul(a, ref(a, l->tv_digit[1]), 8)),
                      add(a, mul(a, fmod_(a, ln, 4), 2), ref(a, l->tv_digit[3])));
    return l;
}

/* ---- CYCLIC ------------------------------------------------------------------- */

IrLayout *ir_layout_cyclic(IrKernel *k, int ndim, const int64_t *shape, int nthreads) {
    if (ndim < 1 || ndim > 4 || nthreads < 1) return NULL;
    int64_t total = 1;
    for (int i = 0; i < ndim; i++) {
        /* no layout for a tile whose element count overflows (fuzzer:
         * block_M=9223372036854775807 was signed overflow here) */
        if (shape[i] <= 0 || __builtin_mul_overflow(total, shape[i], &total)) return NULL;
    }
    TsArena *a = k->arena;
    if (total < nthreads && nthreads % total == 0) {
        /* fewer elements than threads: element e on threads e + r * total,
         * replicate nthreads / total, one register each (p[1] = total) */
        int64_t one[1] = {1};
        IrLayout *l = new_layout(k, IR_LAYOUT_CYCLIC, ndim, shape, 1, one, nthreads, (int)(nthreads / total),
                                 "cyclic over threads, replicated");
        l->p[0] = nthreads;
        l->p[1] = total;
        IrExpr *e = ref(a, l->in[0]);
        for (int i = 1; i < ndim; i++) e = add(a, mul(a, e, shape[i]), ref(a, l->in[i]));
        l->thread = add(a, e, mul(a, ref(a, l->rep), total));
        l->local[0] = c32(a, 0);
        IrExpr *lin = fmod_(a, ref(a, l->tv_thread), total);
        int64_t inner = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            IrExpr *q = inner == 1 ? lin : fdiv(a, lin, inner);
            l->index[i] = i == 0 ? q : fmod_(a, q, shape[i]);
            inner *= shape[i];
        }
        return l;
    }
    if (total % nthreads) return NULL;
    int64_t lshape[1] = {total / nthreads};
    IrLayout *l = new_layout(k, IR_LAYOUT_CYCLIC, ndim, shape, 1, lshape, nthreads, 1, "cyclic over threads");
    l->p[0] = nthreads;
    IrExpr *e = ref(a, l->in[0]);
    for (int i = 1; i < ndim; i++) e = add(a, mul(a, e, shape[i]), ref(a, l->in[i]));
    l->thread = fmod_(a, e, nthreads);
    l->local[0] = fdiv(a, e, nthreads);
    IrExpr *lin = add(a, mul(a, ref(a, l->tv_digit[0]), nthreads), ref(a, l->tv_thread));
    int64_t inner = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        IrExpr *q = inner == 1 ? lin : fdiv(a, lin, inner);
        l->index[i] = i == 0 ? q : fmod_(a, q, shape[i]);
        inner *= shape[i];
    }
    return l;
}

/* ---- WARP_ROWS (with vectors) --------------------------------------------------- */

/* The shape of a warp-rows layout with v consecutive columns per thread:
 * L lanes share a row (min(32, n / v)), G = 32 / L rows per warp step,
 * RW = m / nw rows per warp, T = 32 threads per group of RW rows.  v == 1
 * keeps the original family (a row on all 32 lanes, n a multiple of 32).
 * Fewer rows than warps (m < nw, nw a multiple of m: RMSNorm's one row per
 * block): each row spreads over W = nw / m whole warps, T = L = 32 W
 * threads share it (lanes beyond 32 are other warps), RW = G = 1. */
typedef struct Wr {
    int64_t RW, L, G, v, T;
} Wr;

static bool warp_rows_fit(int64_t m, int64_t n, int nw, int64_t v, Wr *w) {
    if (nw < 1 || nw > 32 || m <= 0 || n <= 0 || v < 1 || n % v) return false;
    if (m > ((int64_t)1 << 24) || n > ((int64_t)1 << 24)) return false; /* (element counts stay far from overflow) */
    if (v == 1 && n % 32) return false;
    int64_t lanes = n / v;
    w->v = v;
    if (m < nw) { /* rows over several warps */
        if (nw % m) return false;
        w->T = w->L = 32 * (nw / m);
        w->G = w->RW = 1;
        return lanes % w->L == 0;
    }
    if (m % nw) return false;
    w->T = 32;
    w->L = lanes >= 32 ? 32 : lanes;
    if (32 % w->L || lanes % w->L) return false; /* a power of two below 32, or whole warps */
    w->G = 32 / w->L;
    w->RW = m / nw;
    return w->RW % w->G == 0;
}

IrLayout *ir_layout_warp_rows_vec(IrKernel *k, int64_t m, int64_t n, int nw, int v) {
    Wr w;
    if (!warp_rows_fit(m, n, nw, v, &w)) return NULL;
    TsArena *a = k->arena;
    int64_t shape[2] = {m, n}, lshape[3] = {w.RW / w.G, n / (w.L * v), v};
    IrLayout *l = new_layout(k, IR_LAYOUT_WARP_ROWS, 2, shape, v > 1 ? 3 : 2, lshape, nw * 32, 1, "rows over warps");
    l->p[0] = m, l->p[1] = n, l->p[2] = nw, l->p[3] = v;
    IrExpr *row = ref(a, l->in[0]), *col = ref(a, l->in[1]);
    IrExpr *rr = fmod_(a, row, w.RW), *cv = v > 1 ? fdiv(a, col, v) : col;
    IrExpr *lane = fmod_(a, cv, w.L);
    if (w.G > 1) lane = add(a, mul(a, fmod_(a, rr, w.G), w.L), lane);
    l->thread = add(a, mul(a, fdiv(a, row, w.RW), w.T), lane);
    l->local[0] = w.G > 1 ? fdiv(a, rr, w.G) : rr;
    l->local[1] = fdiv(a, cv, w.L);
    if (v > 1) l->local[2] = fmod_(a, col, v);
    IrExpr *t = ref(a, l->tv_thread), *ln = fmod_(a, t, w.T);
    IrExpr *r0 = w.G > 1 ? mul(a, ref(a, l->tv_digit[0]), w.G) : ref(a, l->tv_digit[0]);
    if (w.G > 1) r0 = add(a, r0, fdiv(a, ln, w.L));
    l->index[0] = add(a, mul(a, fdiv(a, t, w.T), w.RW), r0);
    IrExpr *c = add(a, mul(a, ref(a, l->tv_digit[1]), w.L), w.G > 1 ? fmod_(a, ln, w.L) : ln);
    if (v > 1) c = add(a, mul(a, c, v), ref(a, l->tv_digit[2]));
    l->index[1] = c;
    return l;
}

IrLayout *ir_layout_warp_rows_vec_proj(IrKernel *k, int64_t m, int64_t n, int nw, int v) {
    Wr w;
    if (!warp_rows_fit(m, n, nw, v, &w)) return NULL;
    TsArena *a = k->arena;
    int64_t shape[1] = {m}, lshape[1] = {w.RW / w.G};
    IrLayout *l = new_layout(k, IR_LAYOUT_WARP_ROWS_PROJ, 1, shape, 1, lshape, nw * 32, (int)w.L,
                             "rows of a warp-rows tile");
    l->p[0] = m, l->p[1] = n, l->p[2] = nw, l->p[3] = v;
    IrExpr *row = ref(a, l->in[0]), *rr = fmod_(a, row, w.RW);
    IrExpr *lane = l->rep ? ref(a, l->rep) : c32(a, 0);
    if (w.G > 1) lane = add(a, mul(a, fmod_(a, rr, w.G), w.L), lane);
    l->thread = add(a, mul(a, fdiv(a, row, w.RW), w.T), lane);
    l->local[0] = w.G > 1 ? fdiv(a, rr, w.G) : rr;
    IrExpr *t = ref(a, l->tv_thread);
    IrExpr *r0 = ref(a, l->tv_digit[0]);
    if (w.G > 1) r0 = add(a, mul(a, r0, w.G), fdiv(a, fmod_(a, t, w.T), w.L));
    l->index[0] = add(a, mul(a, fdiv(a, t, w.T), w.RW), r0);
    return l;
}

IrLayout *ir_layout_warp_rows(IrKernel *k, int64_t m, int64_t n, int nw) {
    return ir_layout_warp_rows_vec(k, m, n, nw, 1);
}

IrLayout *ir_layout_warp_rows_proj(IrKernel *k, int64_t m, int64_t n, int nw) {
    return ir_layout_warp_rows_vec_proj(k, m, n, nw, 1);
}

int ir_layout_row_lanes(const IrLayout *l) {
    Wr w;
    if (l->kind != IR_LAYOUT_WARP_ROWS && l->kind != IR_LAYOUT_WARP_ROWS_PROJ) return 0;
    if (!warp_rows_fit(l->p[0], l->p[1], (int)l->p[2], l->p[3], &w)) return 0;
    return (int)w.L;
}

int ir_layout_row_warps(const IrLayout *l) {
    Wr w;
    if (l->kind != IR_LAYOUT_WARP_ROWS && l->kind != IR_LAYOUT_WARP_ROWS_PROJ) return 0;
    if (!warp_rows_fit(l->p[0], l->p[1], (int)l->p[2], l->p[3], &w)) return 0;
    return (int)(w.T / 32);
}

/* ---- native evaluation ------------------------------------------------------------ */

static int64_t fd(int64_t x, int64_t y) {
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
static int64_t fm(int64_t x, int64_t y) { return x - fd(x, y) * y; }

static int64_t flat_digits(const IrLayout *l, const int64_t *d) {
    int64_t f = 0;
    for (int i = 0; i < l->nlocal; i++) f = f * l->local_shape[i] + d[i];
    return f;
}

void ir_layout_forward(const IrLayout *l, const int64_t *idx, int64_t rep, int64_t *thread, int64_t *local) {
    int64_t d[4] = {0};
    switch (l->kind) {
    case IR_LAYOUT_MMA_C:
    case IR_LAYOUT_MMA_ROWS: {
        int64_t m = l->p[0], n = l->p[1], wm = l->p[2], wn = l->p[3], WM = m / wm, WN = n / wn;
        int64_t row = idx[0], r = row % WM;
        if (l->kind == IR_LAYOUT_MMA_C) {
            int64_t col = idx[1], c = col % WN;
            *thread = ((row / WM) * wn + col / WN) * 32 + (r % 8) * 4 + (c % 8) / 2;
            d[0] = r / 16, d[1] = c / 8, d[2] = (r % 16) / 8, d[3] = c % 2;
        } else {
            *thread = ((row / WM) * wn + rep / 4) * 32 + (r % 8) * 4 + rep % 4;
            d[0] = r / 16, d[1] = (r % 16) / 8;
        }
        break;
    }
    case IR_LAYOUT_MMA_A: {
        int64_t WM = l->p[0] / l->p[2], wn = l->p[3], row = idx[0], r = row % WM, col = idx[1];
        *thread = ((row / WM) * wn + rep) * 32 + (r % 8) * 4 + (col % 8) / 2;
        d[0] = r / 16, d[1] = col / 8, d[2] = (r % 16) / 8, d[3] = col % 2;
        break;
    }
    case IR_LAYOUT_WGMMA_C: {
        int64_t WM = l->p[0] / l->p[2], WN = l->p[1] / l->p[3], gn = l->p[3];
        int64_t r = idx[0] % WM, c = idx[1] % WN, rr = r % 64;
        *thread = ((idx[0] / WM) * gn + idx[1] / WN) * 128 + (rr / 16) * 32 + (rr % 8) * 4 + (c % 8) / 2;
        d[0] = r / 64, d[1] = c / 8, d[2] = (rr % 16) / 8, d[3] = c % 2;
        break;
    }
    case IR_LAYOUT_CYCLIC: {
        int64_t e = 0;
        for (int i = 0; i < l->ndim; i++) e = e * l->shape[i] + idx[i];
        if (l->p[1]) { /* replicated: fewer elements than threads */
            *thread = e + rep * l->p[1];
            break;
        }
        *thread = e % l->p[0];
        d[0] = e / l->p[0];
        break;
    }
    case IR_LAYOUT_WARP_ROWS:
    case IR_LAYOUT_WARP_ROWS_PROJ: {
        Wr w = {0}; /* (a WARP_ROWS layout exists only where the fit succeeded; the Release build's
                     * -Wmaybe-uninitialized cannot see that) */
        (void)warp_rows_fit(l->p[0], l->p[1], (int)l->p[2], l->p[3], &w);
        int64_t rr = idx[0] % w.RW, lane = (rr % w.G) * w.L;
        lane += l->kind == IR_LAYOUT_WARP_ROWS ? (idx[1] / w.v) % w.L : rep;
        *thread = (idx[0] / w.RW) * w.T + lane;
        d[0] = rr / w.G;
        if (l->kind == IR_LAYOUT_WARP_ROWS) d[1] = idx[1] / (w.L * w.v), d[2] = idx[1] % w.v;
        break;
    }
    }
    *local = flat_digits(l, d);
}

bool ir_layout_inverse(const IrLayout *l, int64_t t, const int64_t *d, int64_t *idx) {
    if (t < 0 || t >= l->nthreads) return false;
    for (int i = 0; i < l->nlocal; i++)
        if (d[i] < 0 || d[i] >= l->local_shape[i]) return false;
    switch (l->kind) {
    case IR_LAYOUT_MMA_C:
    case IR_LAYOUT_MMA_ROWS: {
        int64_t m = l->p[0], n = l->p[1], wm = l->p[2], wn = l->p[3], WM = m / wm, WN = n / wn;
        int64_t w = t / 32, ln = t % 32;
        if (l->kind == IR_LAYOUT_MMA_C) {
            idx[0] = (w / wn) * WM + d[0] * 16 + d[2] * 8 + ln / 4;
            idx[1] = (w % wn) * WN + d[1] * 8 + (ln % 4) * 2 + d[3];
        } else {
            idx[0] = (w / wn) * WM + d[0] * 16 + d[1] * 8 + ln / 4;
        }
        return true;
    }
    case IR_LAYOUT_WARP_ROWS:
    case IR_LAYOUT_WARP_ROWS_PROJ: {
        Wr w = {0}; /* (see ir_layout_forward) */
        (void)warp_rows_fit(l->p[0], l->p[1], (int)l->p[2], l->p[3], &w);
        int64_t ln = t % w.T;
        idx[0] = (t / w.T) * w.RW + d[0] * w.G + ln / w.L;
        if (l->kind == IR_LAYOUT_WARP_ROWS) idx[1] = (d[1] * w.L + ln % w.L) * w.v + (w.v > 1 ? d[2] : 0);
        return true;
    }
    case IR_LAYOUT_MMA_A: {
        int64_t WM = l->p[0] / l->p[2], w = t / 32, ln = t % 32;
        idx[0] = (w / l->p[3]) * WM + d[0] * 16 + d[2] * 8 + ln / 4;
        idx[1] = d[1] * 8 + (ln % 4) * 2 + d[3];
        return true;
    }
    case IR_LAYOUT_WGMMA_C: {
        int64_t WM = l->p[0] / l->p[2], WN = l->p[1] / l->p[3], gn = l->p[3];
        int64_t g = t / 128, w = (t % 128) / 32, ln = t % 32;
        idx[0] = (g / gn) * WM + d[0] * 64 + w * 16 + d[2] * 8 + ln / 4;
        idx[1] = (g % gn) * WN + d[1] * 8 + (ln % 4) * 2 + d[3];
        return true;
    }
    case IR_LAYOUT_CYCLIC: {
        int64_t e = l->p[1] ? t % l->p[1] : d[0] * l->p[0] + t;
        for (int i = l->ndim - 1; i >= 0; i--) {
            idx[i] = e % l->shape[i];
            e /= l->shape[i];
        }
        return true;
    }
    }
    return false;
}

int64_t ir_layout_local_at(const IrLayout *l, const int64_t *idx, int64_t thread) {
    int64_t rep = 0, t, loc;
    if (thread < 0 || thread >= l->nthreads) return -1;
    if (l->kind == IR_LAYOUT_MMA_ROWS) rep = ((thread / 32) % l->p[3]) * 4 + thread % 4; /* warp column, lane % 4 */
    else if (l->kind == IR_LAYOUT_WARP_ROWS_PROJ)
        rep = thread % (32 * ir_layout_row_warps(l)) % ir_layout_row_lanes(l);
    else if (l->kind == IR_LAYOUT_CYCLIC && l->p[1])
        rep = thread / l->p[1];
    else if (l->kind == IR_LAYOUT_MMA_A)
        rep = (thread / 32) % l->p[3]; /* the warp column */
    ir_layout_forward(l, idx, rep, &t, &loc);
    return t == thread ? loc : -1;
}

int64_t ir_layout_local_size(const IrLayout *l) { return l->local_size; }

bool ir_layout_equal(const IrLayout *a, const IrLayout *b) {
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind || a->ndim != b->ndim) return false;
    for (int i = 0; i < 4; i++)
        /* MMA_ROWS: the row map does not depend on the accumulator's width n (p[1]):
         * the rows of a 128 x 128 score tile and of a 128 x 64 output tile on the same
         * warp grid are held alike (FlashAttention's row statistics serve both) */
        if (a->p[i] != b->p[i] && !(a->kind == IR_LAYOUT_MMA_ROWS && i == 1)) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

/* ---- evaluation of IR integer expressions ---------------------------------------- */

bool ir_eval_int(const IrExpr *e, IrVar *const *vars, const int64_t *vals, int n, int64_t *out) {
    int64_t x, y;
    switch (e->kind) {
    case IR_E_INT: *out = e->ival; return true;
    case IR_E_VAR:
        for (int i = 0; i < n; i++)
            if (vars[i] == e->var) {
                *out = vals[i];
                return true;
            }
        return false;
    case IR_E_CAST:
        if (ts_dtype_is_float(e->dt)) return false;
        return ir_eval_int(e->un.a, vars, vals, n, out);
    case IR_E_NEG:
        if (!ir_eval_int(e->un.a, vars, vals, n, &x)) return false;
        *out = -x;
        return true;
    case IR_E_SELECT:
        if (!ir_eval_int(e->sel.cond, vars, vals, n, &x)) return false;
        return ir_eval_int(x ? e->sel.a : e->sel.b, vars, vals, n, out);
    case IR_E_BIN:
        if (!ir_eval_int(e->bin.a, vars, vals, n, &x) || !ir_eval_int(e->bin.b, vars, vals, n, &y)) return false;
        switch (e->bin.op) {
        case IR_ADD: *out = x + y; return true;
        case IR_SUB: *out = x - y; return true;
        case IR_MUL: *out = x * y; return true;
        case IR_DIV:
            if (!y) return false;
            *out = x / y;
            return true;
        case IR_FLOORDIV:
            if (!y) return false;
            *out = fd(x, y);
            return true;
        case IR_FLOORMOD:
            if (!y) return false;
            *out = fm(x, y);
            return true;
        case IR_MIN: *out = x < y ? x : y; return true;
        case IR_MAX: *out = x > y ? x : y; return true;
        case IR_EQ: *out = x == y; return true;
        case IR_NE: *out = x != y; return true;
        case IR_LT: *out = x < y; return true;
        case IR_LE: *out = x <= y; return true;
        case IR_GT: *out = x > y; return true;
        case IR_GE: *out = x >= y; return true;
        case IR_AND: *out = x && y; return true;
        case IR_OR: *out = x || y; return true;
        case IR_BITAND: *out = x & y; return true;
        case IR_BITOR: *out = x | y; return true;
        case IR_BITXOR: *out = x ^ y; return true;
        case IR_SHL:
            if (y < 0 || y > 62 || x < 0) return false;
            *out = (int64_t)((uint64_t)x << y);
            return true;
        case IR_SHR:
            if (y < 0 || y > 63) return false;
            *out = x >> y;
            return true;
        default: return false;
        }
    default: return false;
    }
}

/* ---- the check ------------------------------------------------------------------------- */

bool ir_layout_check(TsArena *a, const IrLayout *l, const char **why) {
    int64_t total = 1;
    for (int i = 0; i < l->ndim; i++) total *= l->shape[i];
    int64_t slots = (int64_t)l->nthreads * l->local_size;
    if (total * l->replicate != slots) {
        *why = ts_sprintf(a, "%lld elements x %d replicas but %d threads x %lld locals", (long long)total,
                         l->replicate, l->nthreads, (long long)l->local_size);
        return false;
    }
    int64_t *owner = TS_NEWN(a, int64_t, slots > 0 ? slots : 1);
    for (int64_t i = 0; i < slots; i++) owner[i] = -1;
    IrVar *vars[10];
    int64_t vals[10];
    int nv = 0;
    for (int i = 0; i < l->ndim; i++) vars[nv++] = l->in[i];
    int irep = nv;
    vars[nv++] = l->rep;
    for (int64_t e = 0; e < total; e++) {
        int64_t idx[4], rem = e;
        for (int i = l->ndim - 1; i >= 0; i--) {
            idx[i] = rem % l->shape[i];
            rem /= l->shape[i];
            vals[i] = idx[i];
        }
        for (int64_t r = 0; r < l->replicate; r++) {
            int64_t t, loc, te, de[4] = {0}, back[4];
            ir_layout_forward(l, idx, r, &t, &loc);
            vals[irep] = r;
            if (!ir_eval_int(l->thread, vars, vals, nv, &te) || te != t) {
                *why = ts_sprintf(a, "element %lld: thread expression disagrees (%lld vs %lld)", (long long)e,
                                 (long long)te, (long long)t);
                return false;
            }
            int64_t fl = 0;
            for (int i = 0; i < l->nlocal; i++) {
                if (!ir_eval_int(l->local[i], vars, vals, nv, &de[i])) {
                    *why = ts_sprintf(a, "element %lld: local digit %d does not evaluate", (long long)e, i);
                    return false;
                }
                fl = fl * l->local_shape[i] + de[i];
            }
            if (fl != loc || t < 0 || t >= l->nthreads || loc < 0 || loc >= l->local_size) {
                *why = ts_sprintf(a, "element %lld: local %lld vs %lld (thread %lld)", (long long)e, (long long)fl,
                                 (long long)loc, (long long)t);
                return false;
            }
            if (owner[t * l->local_size + loc] >= 0) {
                *why = ts_sprintf(a, "thread %lld local %lld holds elements %lld and %lld", (long long)t,
                                 (long long)loc, (long long)owner[t * l->local_size + loc], (long long)e);
                return false;
            }
            owner[t * l->local_size + loc] = e;
            /* inverse, native and as IR */
            if (!ir_layout_inverse(l, t, de, back)) {
                *why = ts_sprintf(a, "element %lld: no inverse at thread %lld", (long long)e, (long long)t);
                return false;
            }
            IrVar *iv[5];
            int64_t ivals[5];
            int ni = 0;
            iv[ni] = l->tv_thread, ivals[ni++] = t;
            for (int i = 0; i < l->nlocal; i++) iv[ni] = l->tv_digit[i], ivals[ni++] = de[i];
            for (int i = 0; i < l->ndim; i++) {
                int64_t x;
                if (back[i] != idx[i] || !ir_eval_int(l->index[i], iv, ivals, ni, &x) || x != idx[i]) {
                    *why = ts_sprintf(a, "element %lld: inverse gives a different element in dim %d", (long long)e, i);
                    return false;
                }
            }
        }
    }
    return true;
}

void ir_layout_describe(TsBuf *b, const IrLayout *l) {
    switch (l->kind) {
    case IR_LAYOUT_MMA_C:
        ts_buf_printf(b, "mma_c(%lld x %lld, warps %lld x %lld)", (long long)l->p[0], (long long)l->p[1],
                      (long long)l->p[2], (long long)l->p[3]);
        return;
    case IR_LAYOUT_MMA_ROWS:
        ts_buf_printf(b, "mma_rows(%lld of %lld x %lld, warps %lld x %lld)", (long long)l->p[0], (long long)l->p[0],
                      (long long)l->p[1], (long long)l->p[2], (long long)l->p[3]);
        return;
    case IR_LAYOUT_MMA_A:
        ts_buf_printf(b, "mma_a(%lld x %lld, warps %lld x %lld, replicated %lld times)", (long long)l->p[0],
                      (long long)l->p[1], (long long)l->p[2], (long long)l->p[3], (long long)l->p[3]);
        return;
    case IR_LAYOUT_WGMMA_C:
        ts_buf_printf(b, "wgmma_c(%lld x %lld, warpgroups %lld x %lld)", (long long)l->p[0], (long long)l->p[1],
                      (long long)l->p[2], (long long)l->p[3]);
        return;
    case IR_LAYOUT_CYCLIC:
        ts_buf_printf(b, "cyclic(%lld threads", (long long)l->p[0]);
        if (l->p[1]) ts_buf_printf(b, ", replicated %lld times", (long long)(l->p[0] / l->p[1]));
        ts_buf_puts(b, ")");
        return;
    case IR_LAYOUT_WARP_ROWS:
        ts_buf_printf(b, "warp_rows(%lld x %lld, %lld warps", (long long)l->p[0], (long long)l->p[1], (long long)l->p[2]);
        if (l->p[3] > 1) ts_buf_printf(b, ", %lld-element vectors", (long long)l->p[3]);
        ts_buf_puts(b, ")");
        return;
    case IR_LAYOUT_WARP_ROWS_PROJ:
        ts_buf_printf(b, "warp_rows_proj(%lld of %lld x %lld, %lld warps", (long long)l->p[0], (long long)l->p[0],
                      (long long)l->p[1], (long long)l->p[2]);
        if (l->p[3] > 1) ts_buf_printf(b, ", %lld-element vectors", (long long)l->p[3]);
        ts_buf_puts(b, ")");
        return;
    }
}

/* ---- shared-memory swizzles --------------------------------------------------------------- */

static int log2_exact(int64_t x) {
    int l = 0;
    while (l < 62 && ((int64_t)1 << l) < x) l++;
    return ((int64_t)1 << l) == x ? l : -1;
}

bool ir_swizzle_for_tile(int elem_bits, const int64_t *shape, int ndim, IrSwizzle *out) {
    memset(out, 0, sizeof *out);
    if (ndim < 2 || elem_bits < 8 || elem_bits > 128 || elem_bits % 8) return false;
    int64_t es = elem_bits / 8, vec = 16 / es, cols = shape[ndim - 1], total = 1;
    int m = log2_exact(vec), lg = log2_exact(cols);
    if (m < 0 || lg < 0) return false;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] <= 0 || total > ((int64_t)1 << 40) / shape[d]) return false;
        total *= shape[d];
    }
    /* rows of at least 32 bytes; whole 8-chunk groups (the XOR stays inside them) */
    if (cols * es < 32 || total % (vec * 8)) return false;
    out->kind = IR_SWIZZLE_XOR;
    out->bits = 3;
    out->base = m;
    out->shift = cols * es >= 128 ? lg - m : 3;
    return true;
}

int64_t ir_swizzle_apply(const IrSwizzle *z, int64_t o) {
    if (z->kind != IR_SWIZZLE_XOR) return o;
    if (z->lblk > 0) { /* column blocks first (ir.h) */
        int64_t tile = z->rows << z->lcols, t = o % tile, c = t & (((int64_t)1 << z->lcols) - 1);
        o = o - t + (c >> z->lblk) * (z->rows << z->lblk) + ((t >> z->lcols) << z->lblk) +
            (c & (((int64_t)1 << z->lblk) - 1));
    }
    return o ^ (((o >> (z->base + z->shift)) & ((1 << z->bits) - 1)) << z->base);
}

int64_t ir_swizzle_period(const IrSwizzle *z) {
    if (z->kind != IR_SWIZZLE_XOR) return 1;
    if (z->lblk > 0) return z->rows << z->lcols;
    return (int64_t)1 << (z->base + z->shift + z->bits);
}

bool ir_wgmma_operand(int64_t rows, int64_t cols, int mn_major, IrSwizzle *z, IrWgmmaOperand *w) {
    memset(z, 0, sizeof *z);
    memset(w, 0, sizeof *w);
    int lc = log2_exact(cols);
    /* 16-bit elements: a swizzled row is 16, 32 or 64 of them (32, 64, 128 bytes) */
    if (lc < 4 || rows <= 0 || rows % 8 || rows > (1 << 16) || cols > (1 << 16)) return false;
    int lb = lc > 6 ? 6 : lc; /* the widest swizzle the row allows */
    z->kind = IR_SWIZZLE_XOR;
    z->bits = lb - 3; /* 1, 2, 3: 16-byte chunks XORed by bits of the row (Swizzle<B, 4, 3> on bytes) */
    z->base = 3;
    z->shift = 3;
    if (lc > lb) {
        z->lblk = lb;
        z->lcols = lc;
        z->rows = rows;
    }
    w->mn_major = mn_major;
    w->row_bytes = 2 << lb;
    w->mode = lb == 6 ? 1 : lb == 5 ? 2 : 3;
    w->blk_bytes = rows * w->row_bytes;
    w->sbo = 8 * (int64_t)w->row_bytes; /* from one group of 8 rows to the next */
    w->lbo = mn_major ? w->blk_bytes : 16; /* MN-major: from one column block to the next; K-major: unused */
    return w->blk_bytes < (1 << 18); /* (the 14-bit fields count 16-byte units) */
}

uint64_t ir_wgmma_desc(uint32_t smem_addr, int64_t lbo, int64_t sbo, int mode) {
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | ((uint64_t)(mode & 3) << 62);
}

int ir_swizzle_match(IrVar *const *in, const int64_t *shape, int ndim, IrExpr *const *phys, int nphys,
                     IrSwizzle *out) {
    memset(out, 0, sizeof *out);
    if (ndim < 1 || ndim > 8 || (nphys != 1 && nphys != ndim)) return -1;
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] <= 0 || total > ((int64_t)1 << 20) / shape[d]) return -1;
        total *= shape[d];
    }
    int64_t *p = malloc(sizeof *p * (size_t)total);
    uint8_t *seen = calloc((size_t)total, 1);
    int rc = -1;
    if (!p || !seen) goto done;
    int64_t iv[8];
    for (int64_t e = 0; e < total; e++) {
        int64_t r = e;
        for (int d = ndim - 1; d >= 0; d--) {
            iv[d] = r % shape[d];
            r /= shape[d];
        }
        int64_t off = 0, x;
        for (int j = 0; j < nphys; j++) {
            if (!ir_eval_int(phys[j], in, iv, ndim, &x)) goto done;
            if (nphys > 1 && (x < 0 || x >= shape[j])) goto done;
            off = nphys > 1 ? off * shape[j] + x : x;
        }
        if (off < 0 || off >= total || seen[off]) goto done; /* not a bijection of the tile */
        seen[off] = 1;
        p[e] = off;
    }
    /* row-major, or one of the XOR swizzles of chunks */
    bool plain = true;
    for (int64_t e = 0; e < total && plain; e++) plain = p[e] == e;
    if (plain) {
        rc = 0;
        goto done;
    }
    for (int bits = 1; bits <= 3 && rc < 0; bits++)
        for (int base = 0; base <= 4 && rc < 0; base++)
            for (int shift = bits; shift <= 16 && rc < 0; shift++) {
                IrSwizzle z = {.kind = IR_SWIZZLE_XOR, .bits = bits, .base = base, .shift = shift};
                bool ok = true;
                for (int64_t e = 0; e < total && ok; e++) ok = p[e] == ir_swizzle_apply(&z, e);
                if (ok) {
                    *out = z;
                    rc = 1;
                }
            }
done:
    free(p);
    free(seen);
    return rc;
}
