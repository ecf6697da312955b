/*
 * resolve_views.c — accesses through buffer views become accesses of the
 * buffers they view.
 *
 * A view (IrBuffer.base: T.reshape, T.view(buf, shape=), T.Tensor(shape,
 * dtype, buf.data)) names another buffer's storage with another shape.  The
 * elaborator keeps views as buffers of their own, so that tile operators
 * over them (a T.reduce_sum over a reshaped fragment, a T.copy out of a
 * flattened global tensor) are lowered with the view's shape, where the
 * region arithmetic is rectangular.  Right after lower_tile_ops this pass
 * rewrites every load, store, atomic add, vector copy and printed buffer
 * of a view into one of its base through the view's index map
 * (ir_view_index: row-major reinterpretation, written per group of
 * dimensions so that a split dimension is a division and a merged one a
 * sum of products).  After it the views are unreferenced and dropped from
 * the kernel's buffer list: layout inference, insert_sync, plan_smem, the
 * code generators and both interpreters only ever see the one storage.
 *
 * A view of another dtype (T.view(buf, dtype=): a float32 view of a
 * bfloat16 shared tile, the same bytes) is rewritten into accesses of the
 * base's stored bits (IrExpr load.bits / IrStmt store.bits): element f of
 * the view (row-major) is the bytes of base elements [f r, f r + r) when
 * the view's element is r times wider, glued as unsigned integers (lowest
 * address lowest, little-endian as every target here), then reinterpreted
 * as the view's dtype where the value is used; a store splits the bits the
 * same way.  No value passes through the base's dtype, so a NaN's payload
 * in either dtype survives a copy (both targets compute float16/bfloat16 in
 * float32 and the interpreters in double, where converting would lose
 * it); a copy from one such view to another moves integers only (the
 * reinterpret pair is folded).  A view of a narrower dtype is read as a
 * shift of the wider element's bits; writing through it would rewrite
 * the neighbouring bytes of the same element (a race between threads), so
 * it is refused, as are atomic adds, vector copies and prints through any
 * view of another dtype.  The exception is T.int4 (an int4 view of int8
 * bytes, elab_int4_view): a store rewrites its half of the byte, and the
 * T.Parallel loops that store int4 elements are first split into pairs so
 * that one thread writes both halves of each byte (pair_int4_loop).  The
 * base indices are written per row where the rows line up ("where a view
 * element's bits are" below).
 *
 * What cannot be rewritten element by element is refused with the
 * statement's source position: a tile operator the lowering keeps whole
 * (T.gemm and the communication operators) over a view, and a vector copy
 * whose run of elements may not be contiguous in the base (a global view
 * whose last dimension is not the base's last dimension).
 */
#include "ir/arith.h"
#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

/* IrStmt.store.bits of an int4 store inside this pass: one of a pair
 * written low half first by one thread, unconditionally (int4_store). */
#define STORE_INT4_PAIRED 2

/* A float4_e2m1fn value decoded from a code (fp4_value): a store of it
 * into another float4_e2m1fn element moves the code itself. */
typedef struct Fp4Code {
    const IrExpr *value;
    IrExpr *code;
} Fp4Code;

typedef struct ViewCtx {
    TsPassCtx *cx;
    TS_VEC(Fp4Code) fp4;
} ViewCtx;

static bool retyped(const IrBuffer *v) { return v && v->base && v->dt != v->base->dt; }

/* An int4 or float4_e2m1fn view of int8 bytes holding two elements each
 * (shared and global storage, elab_int4_view); a float4_e2m1fn fragment
 * or local is a view of uint8 codes, one to a byte. */
static bool packed4(const IrBuffer *v) { return v && v->base && ts_dtype_bits(v->dt) == 4 && v->base->dt == TS_INT8; }

/* u (an unsigned integer of the view's width) read as the view's dtype. */
static IrExpr *from_bits(TsArena *a, IrExpr *u, TsDType dt) {
    if (u->dt == dt) return u;
    if (u->kind == IR_E_CALL && u->call.fn == IR_REINTERPRET && u->call.args[0]->dt == dt) return u->call.args[0];
    return ir_call(a, IR_REINTERPRET, &u, 1, dt);
}

/* The bits of x as the unsigned integer of its width. */
static IrExpr *to_bits(TsArena *a, IrExpr *x) {
    TsDType u = ir_bits_dtype(x->dt);
    if (x->dt == u) return x;
    if (x->kind == IR_E_CALL && x->call.fn == IR_REINTERPRET && x->call.args[0]->dt == u) return x->call.args[0];
    return ir_call(a, IR_REINTERPRET, &x, 1, u);
}

static IrExpr *bits_shift(TsArena *a, IrBinOp op, IrExpr *x, IrExpr *amount) {
    return ir_bin(a, op, x, ir_cast(a, x->dt, amount));
}

/* ---- where a view element's bits are ---------------------------------------------
 *
 * The base index of the view element's bits is written per row where the
 * rows line up, so that insert_sync's analysis, which narrows thread pairs
 * dimension by dimension, sees the rows and columns of the base instead of
 * one flat offset split by a division and a remainder (a float32 view of a
 * bfloat16 shared tile stored from an mma accumulator, dsa_sparse_finetune's
 * sparse MLA backward: each dimension's question is small, the flat one is
 * over the analysis's enumeration limit).  With P the view's leading
 * indices flattened, j its last index, N its last extent and C the base's:
 *  - a view element r base elements wide (part k): its row is L = N r base
 *    elements; where L is a multiple of C and C of r, the base row (over
 *    the base's leading dimensions, flattened) is P (L / C) + j / (C / r)
 *    and the column (j % (C / r)) r + k;
 *  - r view elements to a base element (int4 in int8): where N is a
 *    multiple of r and N / r of C, the row is P (N / r / C) + (j / r) / C,
 *    the column (j / r) % C, the place in the element j % r.
 * Otherwise the whole index is flattened and split over the base. */

typedef struct Rows {
    IrExpr *P, *j;   /* the view's leading indices flattened, its last index */
    int64_t N, C;    /* the view's and the base's last extents */
} Rows;

static bool rows_of(TsArena *a, const IrBuffer *v, IrExpr **idx, Rows *rw) {
    const IrBuffer *b = v->base;
    if (v->ndim < 1 || b->ndim < 1 || !ir_is_const_int(v->shape[v->ndim - 1], &rw->N) ||
        !ir_is_const_int(b->shape[b->ndim - 1], &rw->C) || rw->N < 1 || rw->C < 1)
        return false;
    for (int d = 0; d < b->ndim - 1; d++)
        if (!ir_is_const_int(b->shape[d], NULL)) return false;
    IrBuffer lead = *v; /* the view's leading dimensions */
    lead.ndim = v->ndim - 1;
    rw->P = lead.ndim ? ir_flat_index(a, &lead, idx) : ir_i32(a, 0);
    rw->j = idx[v->ndim - 1];
    return true;
}

/* The base index of (row flat over the base's leading dimensions, column). */
static IrExpr **row_col(TsArena *a, const IrBuffer *b, IrExpr *row, IrExpr *col) {
    IrExpr **out = TS_NEWN(a, IrExpr *, b->ndim);
    if (b->ndim > 1) {
        IrBuffer lead = *b;
        lead.ndim = b->ndim - 1;
        IrExpr **r = ir_unflat_index(a, &lead, row);
        for (int d = 0; d < b->ndim - 1; d++) out[d] = r[d];
    }
    out[b->ndim - 1] = col;
    return out;
}

static IrExpr *i32(TsArena *a, int64_t c) { return ir_i32(a, c); }

/* The base index of part k (0 <= k < r) of view element idx (r base
 * elements to a view element). */
static IrExpr **wide_index(TsArena *a, const IrBuffer *v, IrExpr **idx, int r, int k) {
    const IrBuffer *b = v->base;
    Rows rw;
    if (rows_of(a, v, idx, &rw) && (rw.N * r) % rw.C == 0 && rw.C % r == 0 && (b->ndim > 1 || rw.N * r == rw.C)) {
        int64_t per = rw.C / r, rows = rw.N * r / rw.C; /* view elements per base row, base rows per view row */
        IrExpr *row = rows == 1 ? rw.P : ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, rw.P, i32(a, rows)), ir_bin(a, IR_FLOORDIV, rw.j, i32(a, per)));
        IrExpr *jj = rows == 1 ? rw.j : ir_bin(a, IR_FLOORMOD, rw.j, i32(a, per));
        IrExpr *col = r == 1 ? jj : ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, jj, i32(a, r)), i32(a, k));
        return row_col(a, b, row, col);
    }
    IrExpr *f = ir_flat_index(a, v, idx);
    IrExpr *fk = r == 1 ? f : ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, f, i32(a, r)), i32(a, k));
    return ir_unflat_index(a, b, fk);
}

/* The base element holding view element idx (r view elements to a base
 * element) and, in *pos, the view element's place in it (0 .. r-1). */
static IrExpr **narrow_index(TsArena *a, const IrBuffer *v, IrExpr **idx, int r, IrExpr **pos) {
    const IrBuffer *b = v->base;
    Rows rw;
    if (rows_of(a, v, idx, &rw) && rw.N % r == 0 && (rw.N / r) % rw.C == 0 && (b->ndim > 1 || rw.N / r == rw.C)) {
        int64_t rows = rw.N / r / rw.C;
        IrExpr *e = ir_bin(a, IR_FLOORDIV, rw.j, i32(a, r));
        *pos = ir_bin(a, IR_FLOORMOD, rw.j, i32(a, r));
        if (rows == 1) return row_col(a, b, rw.P, e);
        return row_col(a, b, ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, rw.P, i32(a, rows)), ir_bin(a, IR_FLOORDIV, e, i32(a, rw.C))),
                       ir_bin(a, IR_FLOORMOD, e, i32(a, rw.C)));
    }
    IrExpr *f = ir_flat_index(a, v, idx);
    *pos = ir_bin(a, IR_FLOORMOD, f, i32(a, r));
    return ir_unflat_index(a, b, ir_bin(a, IR_FLOORDIV, f, i32(a, r)));
}

/* A packed 4-bit view (packed4: int4, float4_e2m1fn in shared or global
 * memory): its element [i.., j] is nibble j % 2 (the low one first) of
 * byte [i.., j / 2] of its int8 base, whose last extent is the view's
 * halved (rounded up where it is a run-time value, elab_int4_packed_shape). */
static IrExpr **packed4_index(TsArena *a, const IrBuffer *v, IrExpr **idx, IrExpr **pos) {
    int n = v->ndim;
    IrExpr **bi = TS_NEWN(a, IrExpr *, n);
    for (int d = 0; d < n - 1; d++) bi[d] = idx[d];
    bi[n - 1] = ir_bin(a, IR_FLOORDIV, idx[n - 1], i32(a, 2));
    *pos = ir_bin(a, IR_FLOORMOD, idx[n - 1], i32(a, 2));
    return bi;
}

/* T.int4 (elab_int4_view): element f of an int4 view is nibble f % 2 of
 * byte f / 2 of its int8 base, the low nibble first. */
static IrExpr *int4_byte(TsArena *a, IrBuffer *v, IrExpr **bi, TsLoc loc) {
    IrExpr *w = ir_load_bits(a, v->base, bi, v->base->ndim);
    w->loc = loc;
    return ir_cast(a, TS_INT32, w);
}

/* The element, sign-extended: ((byte >> shift) & 15 ^ 8) - 8, an int8. */
static IrExpr *int4_load(TsArena *a, IrBuffer *v, IrExpr **idx, TsLoc loc) {
    IrExpr *pos, **bi = packed4_index(a, v, idx, &pos);
    IrExpr *nib = ir_bin(a, IR_BITAND, ir_bin(a, IR_SHR, int4_byte(a, v, bi, loc), ir_bin(a, IR_MUL, pos, i32(a, 4))), i32(a, 15));
    IrExpr *out = ir_cast(a, TS_INT8, ir_bin(a, IR_SUB, ir_bin(a, IR_BITXOR, nib, i32(a, 8)), i32(a, 8)));
    out->loc = loc;
    return out;
}

/* A store of an element: its byte read, its half replaced, written back
 * (the other half is another element: the T.Parallel loops are split so
 * that one thread writes both halves of a byte, pair_int4_loop).  paired:
 * the store is one of a pair that writes both halves, the low one first,
 * unconditionally (STORE_INT4_PAIRED): the low half is written with a zero
 * high half, without reading the byte (nothing needs to be there yet). */
static IrStmt *int4_store(TsArena *a, IrBuffer *v, IrExpr **idx, IrExpr *value, bool paired, TsLoc loc) {
    IrExpr *pos, **bi = packed4_index(a, v, idx, &pos), *sh = ir_bin(a, IR_MUL, pos, i32(a, 4));
    IrExpr *nib = ir_bin(a, IR_BITAND, ir_cast(a, TS_INT32, value), i32(a, 15));
    IrExpr *keep = ir_bin(a, IR_BITAND, int4_byte(a, v, bi, loc), ir_bin(a, IR_SHR, i32(a, 0xF0), sh));
    IrStmt *st = ir_store_bits(a, v->base, bi, v->base->ndim, ir_bin(a, IR_BITOR, keep, ir_bin(a, IR_SHL, nib, sh)));
    st->loc = loc;
    if (!paired) return st;
    IrStmt *lo = ir_store_bits(a, v->base, bi, v->base->ndim, nib);
    lo->loc = loc;
    IrStmt *s = ir_stmt(a, IR_S_IF, loc);
    s->if_.cond = ir_bin(a, IR_EQ, pos, i32(a, 0));
    s->if_.then = lo;
    s->if_.else_ = st;
    return s;
}

/* ---- T.float4_e2m1fn -------------------------------------------------------
 *
 * OCP MX v1.0 FP4 E2M1 (the OCP Microscaling Formats specification, section
 * 5.3.3): a sign bit (8), two exponent bits (bias 1) and one mantissa bit;
 * the magnitudes of codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 (code 1 is
 * the subnormal 0.5), with no infinity or NaN.  Elements live as 4-bit
 * codes (two to an int8 byte in shared and global memory, one to a uint8 in
 * registers); this pass writes every conversion as integer and float32
 * arithmetic of the IR, so no later pass, target or interpreter sees the
 * dtype:
 *  - a code c to float32: the magnitudes in halves are the nibbles of the
 *    constant 0xC8643210 (0, 1, 2, 3, 4, 6, 8, 12), so the value is
 *    float((0xC8643210 >> 4 (c & 7)) & 15) * (0.5 - (c >> 3)): exact, and
 *    code 8 gives -0;
 *  - a float x to its code, rounding to nearest with ties to even (the tie
 *    goes to the code whose mantissa bit is 0) and saturating at 6, the
 *    sign bit kept: the magnitude's code counts the midpoints |x| is past,
 *        (|x| > 0.25) + (|x| >= 0.75) + (|x| > 1.25) + (|x| >= 1.75)
 *      + (|x| > 2.5) + (|x| >= 3.5) + (|x| > 5),
 *    strict where the lower neighbour is even (0.25: 0 vs 0.5 goes to 0),
 *    inclusive where the upper one is (0.75: 0.5 vs 1 goes to 1); past the
 *    last midpoint every magnitude (infinity too) is 6: the saturation the
 *    OCP conversion to a format without infinity asks for.  NaN has no code:
 *    it becomes +6 (code 7), the choice NVIDIA's cvt.satfinite makes for
 *    e2m1 (the OCP spec leaves it to the implementation).
 * A float64 value is compared in float64 (no double rounding through
 * float32); bfloat16 and float16 values are exact in float32. */

static void fp4_record(ViewCtx *vc, const IrExpr *value, IrExpr *code) {
    Fp4Code f = {value, code};
    ts_vec_push(vc->cx->arena, vc->fp4, f);
}

static IrExpr *fp4_recorded(const ViewCtx *vc, const IrExpr *value) {
    for (int i = vc->fp4.n - 1; i >= 0; i--)
        if (vc->fp4.v[i].value == value) return vc->fp4.v[i].code;
    return NULL;
}

/* The float32 value of code c (an int32 in 0..15). */
static IrExpr *fp4_value(ViewCtx *vc, IrExpr *c, TsLoc loc) {
    TsArena *a = vc->cx->arena;
    IrExpr *sh = ir_cast(a, TS_UINT32, ir_bin(a, IR_MUL, ir_bin(a, IR_BITAND, c, i32(a, 7)), i32(a, 4)));
    IrExpr *halves = ir_bin(a, IR_BITAND, ir_bin(a, IR_SHR, ir_int(a, 0xC8643210, TS_UINT32), sh), ir_int(a, 15, TS_UINT32));
    IrExpr *sg = ir_bin(a, IR_SUB, ir_float(a, 0.5, TS_FLOAT32), ir_cast(a, TS_FLOAT32, ir_bin(a, IR_SHR, c, i32(a, 3))));
    IrExpr *v = ir_bin(a, IR_MUL, ir_cast(a, TS_FLOAT32, halves), sg);
    v->loc = loc;
    fp4_record(vc, v, c);
    return v;
}

/* The code (an int32) of x, a float32 or float64 expression (used several
 * times: a variable, or small). */
static IrExpr *fp4_code(TsArena *a, IrExpr *x) {
    TsDType F = x->dt, U = F == TS_FLOAT64 ? TS_UINT64 : TS_UINT32;
    IrExpr *u = ir_call(a, IR_REINTERPRET, &x, 1, U);
    IrExpr *sign = ir_bin(a, IR_SHL, ir_cast(a, TS_INT32, ir_bin(a, IR_SHR, u, ir_int(a, ts_dtype_bits(F) - 1, U))), i32(a, 3));
    IrExpr *mag = ir_call(a, IR_ABS, &x, 1, F);
    static const double mid[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};
    IrExpr *m = NULL;
    for (int i = 0; i < 7; i++) {
        IrExpr *past = ir_cast(a, TS_INT32, ir_bin(a, i % 2 ? IR_GE : IR_GT, mag, ir_float(a, mid[i], F)));
        m = m ? ir_bin(a, IR_ADD, m, past) : past;
    }
    IrExpr *nan = ir_call(a, IR_ISNAN, &x, 1, TS_BOOL);
    return ir_select(a, nan, i32(a, 7), ir_bin(a, IR_BITOR, sign, m));
}

/* x (any dtype) as a float of the width its conversion compares in. */
static IrExpr *fp4_source(TsArena *a, IrExpr *x) {
    return ir_cast(a, x->dt == TS_FLOAT64 ? TS_FLOAT64 : TS_FLOAT32, x);
}

/* x rounded to float4_e2m1fn, as a float32 (a cast, an fp4 constant or an
 * operation computed in the dtype). */
static IrExpr *fp4_round(ViewCtx *vc, IrExpr *x, TsLoc loc) {
    IrExpr *c = fp4_recorded(vc, x);
    if (c) return x;
    return fp4_value(vc, fp4_code(vc->cx->arena, fp4_source(vc->cx->arena, x)), loc);
}

/* A load of a float4_e2m1fn element: its code (a nibble of a packed byte,
 * or a register byte), decoded. */
static IrExpr *fp4_load(ViewCtx *vc, IrBuffer *v, IrExpr **idx, TsLoc loc) {
    TsArena *a = vc->cx->arena;
    IrExpr *c;
    if (packed4(v)) {
        IrExpr *pos, **bi = packed4_index(a, v, idx, &pos);
        c = ir_bin(a, IR_BITAND, ir_bin(a, IR_SHR, int4_byte(a, v, bi, loc), ir_bin(a, IR_MUL, pos, i32(a, 4))), i32(a, 15));
    } else {
        IrExpr *w = ir_load_bits(a, v->base, ir_view_index(a, v, idx), v->base->ndim);
        w->loc = loc;
        c = ir_bin(a, IR_BITAND, ir_cast(a, TS_INT32, w), i32(a, 15));
    }
    return fp4_value(vc, c, loc);
}

/* A store into a float4_e2m1fn element: the code of the value (the
 * value's own code when it was loaded from float4_e2m1fn, else converted
 * from a let of it), into its half byte (int4_store) or register byte. */
static IrStmt *fp4_store(ViewCtx *vc, IrStmt *s) {
    TsArena *a = vc->cx->arena;
    IrBuffer *v = s->store.buf;
    IrExpr *code = fp4_recorded(vc, s->store.value);
    IrStmt *seq = NULL;
    if (!code) {
        IrExpr *x = fp4_source(a, s->store.value);
        IrVar *t = ir_var(vc->cx->k, "fp4_in", x->dt, IR_VAR_LET);
        IrStmt *let = ir_stmt(a, IR_S_LET, s->loc);
        let->let.var = t;
        let->let.value = x;
        seq = ir_seq(a);
        seq->loc = s->loc;
        ir_seq_push(a, seq, let);
        code = fp4_code(a, ir_var_ref(a, t));
    }
    IrStmt *st;
    if (packed4(v)) {
        st = int4_store(a, v, s->store.idx, code, s->store.bits == STORE_INT4_PAIRED, s->loc);
    } else {
        st = ir_store_bits(a, v->base, ir_view_index(a, v, s->store.idx), v->base->ndim, ir_cast(a, TS_UINT8, code));
        st->loc = s->loc;
    }
    if (!seq) return st;
    ir_seq_push(a, seq, st);
    return seq;
}

/* A load of the view v (of another dtype than its base) at idx. */
static IrExpr *retyped_load(TsArena *a, IrBuffer *v, IrExpr **idx, TsLoc loc) {
    IrBuffer *b = v->base;
    if (v->dt == TS_INT4 && b->dt == TS_INT8) return int4_load(a, v, idx, loc);
    int wv = ts_dtype_bits(v->dt), wb = ts_dtype_bits(b->dt);
    TsDType uv = ir_bits_dtype(v->dt);
    IrExpr *u = NULL;
    if (wv >= wb) {
        int r = wv / wb;
        for (int j = 0; j < r; j++) {
            IrExpr *part = ir_cast(a, uv, ir_load_bits(a, b, wide_index(a, v, idx, r, j), b->ndim));
            part->loc = loc;
            if (j) part = bits_shift(a, IR_SHL, part, ir_i32(a, (int64_t)wb * j));
            u = u ? ir_bin(a, IR_BITOR, u, part) : part;
        }
    } else {
        int r = wb / wv;
        IrExpr *pos, **bi = narrow_index(a, v, idx, r, &pos);
        IrExpr *w = ir_load_bits(a, b, bi, b->ndim);
        w->loc = loc;
        IrExpr *sh = ir_bin(a, IR_MUL, pos, ir_i32(a, wv));
        u = ir_cast(a, uv, ir_bin(a, IR_BITAND, bits_shift(a, IR_SHR, w, sh),
                                  ir_int(a, (int64_t)(((uint64_t)1 << wv) - 1), w->dt)));
    }
    IrExpr *out = from_bits(a, u, v->dt);
    out->loc = loc;
    return out;
}

/* A store of value into the view v (of another dtype) at idx. */
static IrStmt *retyped_store(IrMutator *m, IrStmt *s) {
    ViewCtx *vc = m->ctx;
    TsArena *a = m->arena;
    IrBuffer *v = s->store.buf, *b = v->base;
    int wv = ts_dtype_bits(v->dt), wb = ts_dtype_bits(b->dt);
    if (s->kind == IR_S_STORE && v->dt == TS_FLOAT4_E2M1) return fp4_store(vc, s);
    if (s->kind == IR_S_STORE && v->dt == TS_INT4 && b->dt == TS_INT8)
        return int4_store(a, v, s->store.idx, s->store.value, s->store.bits == STORE_INT4_PAIRED, s->loc);
    if (s->kind != IR_S_STORE || wv < wb)
        ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "%s the %s view '%s' of the %s buffer '%s' is not supported%s",
                   s->kind != IR_S_STORE ? "an atomic add through" : "a store through", ts_dtype_name(v->dt),
                   v->name, ts_dtype_name(b->dt), b->name,
                   s->kind != IR_S_STORE ? "" : " (its elements are parts of the base's: writing one rewrites the "
                                                "rest of that element)");
    IrExpr *u = to_bits(a, s->store.value);
    if (wv == wb) return ir_store_bits(a, b, wide_index(a, v, s->store.idx, 1, 0), b->ndim, u);
    int r = wv / wb;
    TsDType ub = ir_bits_dtype(b->dt);
    IrStmt *seq = ir_seq(a);
    seq->loc = s->loc;
    IrVar *t = ir_var(vc->cx->k, "bits", u->dt, IR_VAR_LET);
    IrStmt *let = ir_stmt(a, IR_S_LET, s->loc);
    let->let.var = t;
    let->let.value = u;
    ir_seq_push(a, seq, let);
    for (int j = 0; j < r; j++) {
        IrExpr *part = ir_var_ref(a, t);
        if (j) part = bits_shift(a, IR_SHR, part, ir_i32(a, (int64_t)wb * j));
        IrStmt *st = ir_store_bits(a, b, wide_index(a, v, s->store.idx, r, j), b->ndim, ir_cast(a, ub, part));
        st->loc = s->loc;
        ir_seq_push(a, seq, st);
    }
    return seq;
}

static IrExpr *view_load(IrMutator *m, IrExpr *e) {
    ViewCtx *vc = m->ctx;
    if (e->dt == TS_FLOAT4_E2M1) {
        if (e->kind == IR_E_LOAD && retyped(e->load.buf)) return fp4_load(vc, e->load.buf, e->load.idx, e->loc);
        if (e->kind == IR_E_INT || e->kind == IR_E_FLOAT) /* a constant: its rounded value */
            return ir_float(m->arena, ts_fp4_e2m1_value(ts_fp4_e2m1_code(e->kind == IR_E_INT ? (double)e->ival : e->fval)),
                            TS_FLOAT32);
        if (e->kind == IR_E_CAST) return fp4_round(vc, e->un.a, e->loc);
        if (e->kind == IR_E_VAR) { /* a let of the dtype holds the rounded float32 (view_stmt) */
            e->var->dt = TS_FLOAT32;
            return ir_var_ref(m->arena, e->var);
        }
        /* an operation in the dtype: computed in float32, rounded (its operands
         * appear several times in the conversion: a store's value is a let) */
        IrExpr *f = ts_alloc(m->arena, sizeof *f);
        *f = *e;
        f->dt = TS_FLOAT32;
        return fp4_round(vc, f, e->loc);
    }
    if (e->kind == IR_E_INT && e->dt == TS_INT4) /* an int4 constant: wrapped to 4 bits, held as an int8 */
        return ir_int(m->arena, (int64_t)((((uint64_t)e->ival & 15u) ^ 8u)) - 8, TS_INT8);
    if (e->kind == IR_E_CAST && e->dt == TS_INT4) { /* to int4: the same, computed */
        TsArena *a = m->arena;
        IrExpr *x = ir_bin(a, IR_BITAND, ir_cast(a, TS_INT32, e->un.a), ir_i32(a, 15));
        IrExpr *out = ir_cast(a, TS_INT8, ir_bin(a, IR_SUB, ir_bin(a, IR_BITXOR, x, ir_i32(a, 8)), ir_i32(a, 8)));
        out->loc = e->loc;
        return out;
    }
    if (e->kind != IR_E_LOAD || !e->load.buf->base) return e;
    if (retyped(e->load.buf)) return retyped_load(m->arena, e->load.buf, e->load.idx, e->loc);
    IrExpr *n = ir_load(m->arena, e->load.buf->base, ir_view_index(m->arena, e->load.buf, e->load.idx),
                        e->load.buf->base->ndim);
    n->loc = e->loc;
    return n;
}

/* The view's last dimension is the base's last dimension (the same
 * constant extent, mapped one to one): a run of elements along it is a
 * run in the base. */
static bool last_dim_kept(const IrBuffer *v) {
    int64_t x, y;
    return v->ndim >= 1 && v->base->ndim >= 1 && ir_is_const_int(v->shape[v->ndim - 1], &x) &&
           ir_is_const_int(v->base->shape[v->base->ndim - 1], &y) && x == y;
}

static void vcopy_operand(ViewCtx *vc, const IrStmt *s, IrBuffer **buf, IrExpr ***idx, int *n, int lanes) {
    IrBuffer *v = *buf;
    if (!v->base) return;
    /* on-chip: the vector starts at a multiple of `lanes` of the view's row
     * (lower_copy_cuda proves it of a shared destination), so with both
     * last extents multiples of `lanes` it stays within one row of the base */
    int64_t x, y;
    bool runs = v->base->scope != IR_SCOPE_GLOBAL && ir_is_const_int(v->shape[v->ndim - 1], &x) &&
                ir_is_const_int(v->base->shape[v->base->ndim - 1], &y) && x % lanes == 0 && y % lanes == 0;
    if (lanes > 1 && !last_dim_kept(v) && !runs)
        ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                   "a vector copy through the view '%s' of '%s', whose last dimension is not '%s''s last "
                   "dimension, is not supported",
                   v->name, v->base->name, v->base->name);
    *idx = ir_view_index(vc->cx->arena, v, *idx);
    *n = v->base->ndim;
    *buf = v->base;
}

/* Before a store into a float4_e2m1fn element: its value's conversion to
 * the dtype is the store's own (fp4_store converts from a let of the value,
 * where a cast in the expression would convert a copy of it per use). */
static IrStmt *fp4_pre_stmt(IrMutator *m, IrStmt *s) {
    if (s->kind != IR_S_STORE || s->store.buf->dt != TS_FLOAT4_E2M1 || !s->store.buf->base ||
        s->store.value->kind != IR_E_CAST || s->store.value->dt != TS_FLOAT4_E2M1)
        return NULL;
    IrExpr *x = s->store.value->un.a;
    if (x->dt == TS_FLOAT4_E2M1) return NULL; /* a move of codes */
    IrStmt *n = ir_stmt(m->arena, IR_S_STORE, s->loc);
    n->store = s->store;
    n->store.value = x;
    return ir_mutate_stmt(m, n);
}

static IrStmt *view_stmt(IrMutator *m, IrStmt *s) {
    ViewCtx *vc = m->ctx;
    TsArena *a = m->arena;
    if (s->kind == IR_S_LET && s->let.var->dt == TS_FLOAT4_E2M1) s->let.var->dt = TS_FLOAT32; /* its value is rounded */
    switch (s->kind) {
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD: {
        IrBuffer *v = s->store.buf;
        if (!v->base) return s;
        if (retyped(v)) return retyped_store(m, s);
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->store.buf = v->base;
        n->store.idx = ir_view_index(a, v, s->store.idx);
        n->store.nidx = v->base->ndim;
        n->store.value = s->store.value;
        return n;
    }
    case IR_S_VCOPY: {
        if (!s->vcopy.dst->base && !s->vcopy.src->base) return s;
        if (retyped(s->vcopy.dst) || retyped(s->vcopy.src)) {
            IrBuffer *v = retyped(s->vcopy.dst) ? s->vcopy.dst : s->vcopy.src;
            ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                       "a vector copy through the %s view '%s' of the %s buffer '%s' is not supported",
                       ts_dtype_name(v->dt), v->name, ts_dtype_name(v->base->dt), v->base->name);
        }
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->vcopy = s->vcopy;
        vcopy_operand(vc, s, &n->vcopy.dst, &n->vcopy.didx, &n->vcopy.ndi, n->vcopy.lanes);
        vcopy_operand(vc, s, &n->vcopy.src, &n->vcopy.sidx, &n->vcopy.nsi, n->vcopy.lanes);
        n->vcopy.aligned = 0; /* the base's strides and alignment are tested per vector */
        return n;
    }
    case IR_S_PRINT: {
        if (!s->print.buf || !s->print.buf->base) return s;
        if (retyped(s->print.buf))
            ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc, "T.print of the %s view '%s' of the %s buffer '%s'",
                       ts_dtype_name(s->print.buf->dt), s->print.buf->name, ts_dtype_name(s->print.buf->base->dt),
                       s->print.buf->base->name);
        IrStmt *n = ir_stmt(a, s->kind, s->loc);
        n->print = s->print;
        n->print.buf = s->print.buf->base;
        return n;
    }
    case IR_S_TILEOP:
        for (int i = 0; i < s->op->nr; i++)
            if (s->op->r[i].buf && s->op->r[i].buf->base)
                ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, s->loc,
                           "T.%s on the view '%s' of '%s' is not supported: give '%s' itself",
                           ts_op_name(s->op->kind), s->op->r[i].buf->name, s->op->r[i].buf->base->name,
                           s->op->r[i].buf->base->name);
        return s;
    default: return s;
    }
}

/* ---- T.int4 stores in T.Parallel loops ------------------------------------
 *
 * A store of one int4 element rewrites its byte (int4_store), so the two
 * elements of a byte must be stored by one thread.  A T.Parallel loop whose
 * variable j gives the last index of such a store as j + (an even
 * remainder) is split into pairs before any thread is given an iteration:
 *
 *     for j in parallel(E): body(j)
 *  => for jp in parallel(E / 2): for h in unroll(2): body(2 jp + h)
 *
 * E must be even.  A store whose last index follows a parallel variable in
 * any other way (an odd remainder, a coefficient other than 1) is refused. */

typedef struct PairScan {
    TsPassCtx *cx;
    const IrVar *j; /* the loop's variable */
    IrArith ar;     /* affine forms */
    bool pair;      /* some int4 store's last index is j + even */
    const IrStmt *bad; /* a store that cannot be paired */
} PairScan;

/* e is even whatever its variables are (wrapping around the dtype keeps
 * the parity): an even constant, a product with an even factor, a sum or
 * difference of even terms, a left shift, or what the analysis proves. */
static bool even_term(PairScan *ps, const IrExpr *e) {
    while (e->kind == IR_E_CAST && ts_dtype_is_int(e->dt) && ts_dtype_is_int(e->un.a->dt) &&
           ts_dtype_bits(e->dt) >= ts_dtype_bits(e->un.a->dt))
        e = e->un.a;
    if (e->kind == IR_E_INT) return e->ival % 2 == 0;
    if (e->kind == IR_E_BIN) {
        const IrExpr *a = e->bin.a, *b = e->bin.b;
        switch (e->bin.op) {
        case IR_MUL: return even_term(ps, a) || even_term(ps, b);
        case IR_ADD: case IR_SUB: return even_term(ps, a) && even_term(ps, b);
        case IR_SHL: return b->kind == IR_E_INT && b->ival >= 1 && b->ival < ts_dtype_bits(e->dt);
        default: break;
        }
    }
    return ir_arith_divisible(&ps->ar, e, 2);
}

/* x is the loop variable plus even terms (a sum with the variable once, added). */
static bool var_plus_even(PairScan *ps, const IrExpr *x, bool neg, int *seen) {
    while (x->kind == IR_E_CAST && ts_dtype_is_int(x->dt) && ts_dtype_is_int(x->un.a->dt) &&
           ts_dtype_bits(x->dt) >= ts_dtype_bits(x->un.a->dt))
        x = x->un.a;
    if (x->kind == IR_E_BIN && (x->bin.op == IR_ADD || x->bin.op == IR_SUB))
        return var_plus_even(ps, x->bin.a, neg, seen) &&
               var_plus_even(ps, x->bin.b, x->bin.op == IR_SUB ? !neg : neg, seen);
    if (x->kind == IR_E_VAR && x->var == ps->j) {
        ++*seen;
        return !neg;
    }
    return !ir_expr_uses_var(x, ps->j) && even_term(ps, x);
}

static bool int4_store_scan(const IrStmt *s, void *ctx) {
    PairScan *ps = ctx;
    if ((s->kind != IR_S_STORE && s->kind != IR_S_ATOMIC_ADD) || !packed4(s->store.buf)) return false;
    IrExpr *x = s->store.idx[s->store.nidx - 1];
    if (!ir_expr_uses_var(x, ps->j)) return false;
    int seen = 0;
    if (s->kind == IR_S_STORE && var_plus_even(ps, x, false, &seen) && seen == 1) { /* e.g. bx * 32 + j, bx unbounded */
        ps->pair = true;
        return false;
    }
    IrAffine f;
    if (s->kind != IR_S_STORE || !ir_arith_affine(&ps->ar, x, false, &f) || ir_affine_coeff(&f, ps->j) != 1) {
        ps->bad = s;
        return true;
    }
    for (int i = 0; i < f.n; i++)
        if (!(f.t[i].atom->kind == IR_E_VAR && f.t[i].atom->var == ps->j) && f.t[i].coeff % 2 &&
            !ir_arith_divisible(&ps->ar, f.t[i].atom, 2)) {
            ps->bad = s;
            return true;
        }
    if (f.c % 2) {
        ps->bad = s;
        return true;
    }
    ps->pair = true;
    return false;
}

static IrStmt *pair_int4_loop(IrMutator *m, IrStmt *s) {
    ViewCtx *vc = m->ctx;
    TsArena *a = m->arena;
    if (s->kind != IR_S_FOR || s->for_.kind != IR_FOR_PARALLEL) return s;
    PairScan ps = {.cx = vc->cx, .j = s->for_.var};
    ir_arith_init(&ps.ar, a, vc->cx->k);
    ir_stmt_any(s->for_.body, int4_store_scan, &ps);
    int64_t lo, e;
    if (ps.bad || (ps.pair && (!ir_is_const_int(s->for_.min, &lo) || lo % 2 || !ir_is_const_int(s->for_.extent, &e) || e % 2))) {
        const IrStmt *at = ps.bad ? ps.bad : s;
        const IrBuffer *q = ps.bad ? ps.bad->store.buf : NULL;
        ts_fail_at(vc->cx->diag, TS_ERR_UNSUPPORTED, at->loc,
                   "a T.Parallel store of %s elements%s%s must give each thread both elements of a byte: its last "
                   "index must be the loop variable '%s' plus an even offset, over an even extent from an even start",
                   q ? ts_dtype_name(q->dt) : "4-bit", q ? " into " : "", q ? q->name : "", s->for_.var->name);
    }
    if (!ps.pair) return s;
    IrVar *jp = ir_var(vc->cx->k, ts_sprintf(a, "%s_pair", s->for_.var->name), s->for_.var->dt, IR_VAR_LOOP);
    IrVar *h = ir_var(vc->cx->k, ts_sprintf(a, "%s_half", s->for_.var->name), s->for_.var->dt, IR_VAR_LOOP);
    TsDType dt = s->for_.var->dt;
    IrExpr *jv = ir_bin(a, IR_ADD, ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, jp), ir_int(a, 2, dt)), ir_var_ref(a, h)),
                        ir_int(a, lo, dt));
    IrVar *from = s->for_.var;
    IrStmt *body = ir_stmt_subst(a, s->for_.body, &from, &jv, 1);
    /* the body's own int4 stores at j (not under an if or a loop) write both halves */
    IrStmt **top = body->kind == IR_S_SEQ ? body->seq.v : &body;
    int ntop = body->kind == IR_S_SEQ ? body->seq.n : 1;
    for (int i = 0; i < ntop; i++)
        if (top[i]->kind == IR_S_STORE && packed4(top[i]->store.buf) &&
            ir_expr_uses_var(top[i]->store.idx[top[i]->store.nidx - 1], jp))
            top[i]->store.bits = STORE_INT4_PAIRED;
    IrStmt *inner = ir_for(a, h, ir_int(a, 0, dt), ir_int(a, 2, dt), IR_FOR_UNROLL, body);
    inner->loc = s->loc;
    IrStmt *outer = ir_for(a, jp, ir_int(a, 0, dt), ir_int(a, e / 2, dt), IR_FOR_PARALLEL, inner);
    outer->loc = s->loc;
    return outer;
}

/* No float4_e2m1fn value is left after the rewrite (targets and
 * interpreters have no such type): one that is is refused where it is. */
static void fp4_left(IrVisitor *v, const IrExpr *e) {
    if (e->dt != TS_FLOAT4_E2M1 || v->stop) return;
    TsPassCtx *cx = v->ctx;
    ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, e->loc.line ? e->loc : v->frame ? v->frame->s->loc : e->loc,
               "this float4_e2m1fn value is not supported here (float4_e2m1fn is a storage dtype: load it from, "
               "or store it into, a buffer)");
}

void ts_pass_resolve_views(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    {
        ViewCtx pc = {.cx = cx};
        IrMutator pm = {.arena = cx->arena, .ctx = &pc, .post_stmt = pair_int4_loop};
        k->body = ir_mutate_stmt(&pm, k->body);
    }
    /* (a view made before the first T.Kernel of a chain is in the first
     * kernel's buffer list but may be used in any: every body is walked) */
    ViewCtx vc = {.cx = cx};
    IrMutator m = {.arena = cx->arena, .ctx = &vc, .post_expr = view_load, .pre_stmt = fp4_pre_stmt, .post_stmt = view_stmt};
    k->body = ir_mutate_stmt(&m, k->body);
    IrVisitor left = {.ctx = cx, .post_expr = fp4_left};
    ir_visit_stmt(&left, k->body);
    int n = 0;
    for (int i = 0; i < k->buffers.n; i++)
        if (!k->buffers.v[i]->base) k->buffers.v[n++] = k->buffers.v[i];
    k->buffers.n = n;
}
