/*
 * arith.c — integer analysis of IR expressions (see arith.h).
 *
 * One recursive function, analyze(), computes three facts of a node at
 * once from those of its operands: its interval, its residue (e == m*k + r)
 * and whether the machine value might have wrapped around its dtype (the
 * mathematical interval left the dtype's range).  A node that might have
 * wrapped gets the whole dtype range and a residue only modulo the power
 * of two of its width, which wrap-around preserves; its parents then stay
 * sound, and `wrap` tells the provers that affine reasoning (which is
 * mathematics, not machine arithmetic) is off for it.
 *
 * Interval arithmetic saturates at IR_ARITH_NEG_INF / POS_INF (INT64_MIN /
 * INT64_MAX), computing products and quotients in 128 bits.  Comparisons
 * are decided by bounding the affine difference of their sides, where
 * equal atoms cancel: `i*4 + j < i*4 + 4` holds for j in [0, 3] although
 * neither side is bounded tightly.  Divisions are simplified by splitting
 * the dividend's affine form into multiples of the divisor and a rest
 * whose bounds decide the quotient.
 *
 * Arithmetic facts used (standard; floor division rounds down, floormod
 * has the divisor's sign, as in Python and TIR's FloorDiv/FloorMod):
 *   floor((c*Q + R) / c) = Q + floor(R / c),   (c*Q + R) mod c = R mod c;
 *   x = m*k + r  =>  x*y = m1*m2*k1*k2 + m1*r2*k1 + m2*r1*k2 + r1*r2, so the
 *   product's modulus is gcd(m1*m2, m1*r2, m2*r1);
 *   x & (2^b - 1) = x mod 2^b in two's complement.
 */
#include "ir/arith.h"

#include <string.h>

#define NEG IR_ARITH_NEG_INF
#define POS IR_ARITH_POS_INF

typedef __int128 i128;

/* ---- saturating interval arithmetic -------------------------------------- */

static IrInterval iv(int64_t lo, int64_t hi) { return (IrInterval){lo, hi}; }
static const IrInterval FULL = {NEG, POS};

static bool finite(IrInterval a) { return a.lo != NEG && a.hi != POS; }

/* An end point as a 128-bit number: the infinities lie beyond int64. */
static i128 wide(int64_t x) {
    if (x == NEG) return -((i128)1 << 64);
    if (x == POS) return (i128)1 << 64;
    return x;
}

static int64_t narrow(i128 x) {
    if (x <= (i128)NEG) return NEG;
    if (x >= (i128)POS) return POS;
    return (int64_t)x;
}

static int64_t add_lo(int64_t a, int64_t b) {
    if (a == NEG || b == NEG) return NEG;
    return narrow(wide(a) + wide(b));
}

static int64_t add_hi(int64_t a, int64_t b) {
    if (a == POS || b == POS) return POS;
    return narrow(wide(a) + wide(b));
}

static int64_t neg_end(int64_t a) {
    if (a == NEG) return POS;
    if (a == POS) return NEG;
    return -a;
}

static IrInterval iv_add(IrInterval a, IrInterval b) { return iv(add_lo(a.lo, b.lo), add_hi(a.hi, b.hi)); }
static IrInterval iv_neg(IrInterval a) { return iv(neg_end(a.hi), neg_end(a.lo)); }
static IrInterval iv_sub(IrInterval a, IrInterval b) { return iv_add(a, iv_neg(b)); }

/* 0 * inf is 0 here, which is right for intervals of integers. */
static int64_t mul_end(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    bool inf = a == NEG || a == POS || b == NEG || b == POS;
    if (inf) return (a < 0) != (b < 0) ? NEG : POS;
    return narrow((i128)a * (i128)b);
}

static IrInterval iv_mul(IrInterval a, IrInterval b) {
    int64_t p[4] = {mul_end(a.lo, b.lo), mul_end(a.lo, b.hi), mul_end(a.hi, b.lo), mul_end(a.hi, b.hi)};
    IrInterval r = {p[0], p[0]};
    for (int i = 1; i < 4; i++) {
        if (p[i] < r.lo) r.lo = p[i];
        if (p[i] > r.hi) r.hi = p[i];
    }
    return r;
}

static IrInterval iv_union(IrInterval a, IrInterval b) {
    return iv(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
}

static IrInterval iv_meet(IrInterval a, IrInterval b) {
    IrInterval r = iv(a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi);
    return r.lo <= r.hi ? r : a; /* contradictory facts: keep the first (code never runs) */
}

static int64_t floordiv64(int64_t x, int64_t d) {
    int64_t q = x / d;
    if ((x % d != 0) && ((x < 0) != (d < 0))) q--;
    return q;
}

static int64_t floormod64(int64_t x, int64_t d) { return x - floordiv64(x, d) * d; }

/* x / d rounded down (floor) or toward zero, on finite ends (d != 0). */
static int64_t div_end(int64_t x, int64_t d, bool floor) {
    if (x == NEG || x == POS) return (x == POS) == (d > 0) ? POS : NEG;
    return floor ? floordiv64(x, d) : x / d;
}

/* Quotient interval; the divisor must not contain 0. */
static IrInterval iv_div(IrInterval a, IrInterval d, bool floor) {
    if (d.lo <= 0 && d.hi >= 0) return FULL;
    if (!finite(d)) {
        /* |d| >= 1: the quotient of x lies between 0 and x */
        IrInterval x = d.lo >= 1 ? a : iv_neg(a);
        return iv(x.lo < 0 ? x.lo : 0, x.hi > 0 ? x.hi : 0);
    }
    int64_t p[4] = {div_end(a.lo, d.lo, floor), div_end(a.lo, d.hi, floor), div_end(a.hi, d.lo, floor),
                    div_end(a.hi, d.hi, floor)};
    IrInterval r = {p[0], p[0]};
    for (int i = 1; i < 4; i++) {
        if (p[i] < r.lo) r.lo = p[i];
        if (p[i] > r.hi) r.hi = p[i];
    }
    return r;
}

static IrInterval iv_mod(IrInterval a, IrInterval d) {
    if (d.lo == d.hi && d.lo > 0 && finite(a)) {
        int64_t c = d.lo;
        if (floordiv64(a.lo, c) == floordiv64(a.hi, c)) {
            int64_t q = floordiv64(a.lo, c) * c;
            return iv(a.lo - q, a.hi - q);
        }
        return iv(0, c - 1);
    }
    if (d.lo >= 1) {
        if (a.lo >= 0 && a.hi < d.lo) return a;
        return iv(0, d.hi == POS ? POS : d.hi - 1);
    }
    if (d.hi <= -1) return iv(d.lo == NEG ? NEG : d.lo + 1, 0);
    return FULL;
}

IrInterval ir_interval_add(IrInterval a, IrInterval b) { return iv_add(a, b); }
IrInterval ir_interval_mul(IrInterval a, IrInterval b) { return iv_mul(a, b); }

/* ---- residues ------------------------------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x > (uint64_t)INT64_MAX ? (int64_t)1 << 62 : (int64_t)x;
}

static const IrModFact NOFACT = {1, 0};

/* (m, r) with r reduced into [0, m); values that do not fit give NOFACT. */
static IrModFact mf(i128 m, i128 r) {
    if (m < 0) m = -m;
    if (m > ((i128)1 << 62)) return NOFACT;
    if (m == 0) {
        if (r < (i128)NEG + 1 || r > (i128)POS - 1) return NOFACT;
        return (IrModFact){0, (int64_t)r};
    }
    i128 x = r % m;
    if (x < 0) x += m;
    return (IrModFact){(int64_t)m, (int64_t)x};
}

static IrModFact mf_add(IrModFact a, IrModFact b) {
    return mf(gcd64(a.m, b.m), (i128)a.r + b.r);
}

static IrModFact mf_neg(IrModFact a) { return mf(a.m, -(i128)a.r); }

/* The fact of a value that is one of two values (min, max, select). */
static IrModFact mf_either(IrModFact a, IrModFact b) {
    i128 d = (i128)a.r - b.r;
    if (d > ((i128)1 << 62) || d < -((i128)1 << 62)) return NOFACT;
    return mf(gcd64(gcd64(a.m, b.m), (int64_t)d), a.r);
}

static IrModFact mf_mul(IrModFact a, IrModFact b) {
    i128 t1 = (i128)a.m * b.m, t2 = (i128)a.m * b.r, t3 = (i128)b.m * a.r;
    i128 lim = (i128)1 << 62;
    if (t1 > lim || t2 > lim || t2 < -lim || t3 > lim || t3 < -lim) return NOFACT;
    int64_t m = gcd64(gcd64((int64_t)t1, (int64_t)t2), (int64_t)t3);
    return mf(m, (i128)a.r * b.r);
}

/* ---- dtypes ---------------------------------------------------------------------- */

static IrInterval dt_range(TsDType dt) {
    if (dt == TS_BOOL) return iv(0, 1);
    const TsDTypeInfo *in = ts_dtype_info(dt);
    if (!in || (in->kind != 'i' && in->kind != 'u')) return FULL;
    int b = in->bits;
    if (in->kind == 'i') return b >= 64 ? FULL : iv(-((int64_t)1 << (b - 1)), ((int64_t)1 << (b - 1)) - 1);
    return b >= 64 ? iv(0, POS) : b == 63 ? iv(0, POS) : iv(0, ((int64_t)1 << b) - 1);
}

static bool is_int(TsDType dt) { return ts_dtype_is_int(dt) || dt == TS_BOOL; }

/* ---- variable ranges ------------------------------------------------------------- */

void ir_arith_init(IrArith *ar, TsArena *a, const IrKernel *k) {
    memset(ar, 0, sizeof *ar);
    ar->arena = a;
    ar->k = k;
}

void ir_arith_bind(IrArith *ar, const IrVar *v, int64_t lo, int64_t hi) {
    IrArithRange r = {v, iv(lo, hi)};
    ts_vec_push(ar->arena, ar->ranges, r);
}

static IrInterval loop_range(IrArith *ar, const IrStmt *loop) {
    IrInterval mn = ir_arith_bound(ar, loop->for_.min), ex = ir_arith_bound(ar, loop->for_.extent);
    /* the body runs only for extent >= 1: v in [min, min + extent - 1] */
    int64_t hi = add_hi(mn.hi, add_hi(ex.hi, -1));
    if (hi < mn.lo) hi = mn.lo;
    return iv(mn.lo, hi);
}

void ir_arith_bind_loop(IrArith *ar, const IrStmt *loop) {
    IrInterval r = loop_range(ar, loop);
    ir_arith_bind(ar, loop->for_.var, r.lo, r.hi);
}

void ir_arith_bind_let(IrArith *ar, const IrVar *v, const IrExpr *value) {
    IrInterval r = ir_arith_bound(ar, value);
    ir_arith_bind(ar, v, r.lo, r.hi);
}

int ir_arith_mark(const IrArith *ar) { return ar->ranges.n; }

void ir_arith_pop(IrArith *ar, int mark) {
    if (mark >= 0 && mark <= ar->ranges.n) ar->ranges.n = mark;
}

static IrInterval var_range_found(IrArith *ar, const IrVar *v);

/* The statement binding v on the frames' path: a FOR whose body the walk
 * is in (not its own bounds), or a LET earlier in an enclosing SEQ. */
static const IrStmt *frame_binder(const IrArith *ar, const IrVar *v) {
    const IrWalkFrame *below = NULL;
    for (const IrWalkFrame *f = ar->frame; f; below = f, f = f->up) {
        const IrStmt *s = f->s;
        if (!below) continue;
        if (s->kind == IR_S_FOR && s->for_.var == v) {
            if (below->s == s->for_.body) return s;
        } else if (s->kind == IR_S_SEQ) {
            for (int i = 0; i < s->seq.n && s->seq.v[i] != below->s; i++)
                if (s->seq.v[i]->kind == IR_S_LET && s->seq.v[i]->let.var == v) return s->seq.v[i];
        }
    }
    return NULL;
}

/* The range an enclosing loop or earlier let gives v, searching the frames. */
static bool frame_range(IrArith *ar, const IrVar *v, IrInterval *out) {
    const IrStmt *s = frame_binder(ar, v);
    if (!s) return false;
    *out = s->kind == IR_S_FOR ? loop_range(ar, s) : ir_arith_bound(ar, s->let.value);
    return true;
}

/* Symbolic bounds *L <= v <= *U (NULL where only the interval is known):
 * an enclosing loop's min and min + extent - 1, a let's value, a block
 * index's grid extent - 1.  Explicitly bound vars have none. */
static bool impure_node(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD || e->kind == IR_E_CALL;
}

/* No loads or calls: the value cannot change between where the expression
 * stands and where a bound taken from it is used. */
static bool pure_expr(const IrExpr *e) { return !ir_expr_any(e, impure_node, NULL); }

static void sym_bounds(IrArith *ar, const IrVar *v, const IrExpr **L, const IrExpr **U) {
    *L = *U = NULL;
    for (int i = ar->ranges.n - 1; i >= 0; i--)
        if (ar->ranges.v[i].var == v) return;
    TsArena *a = ar->arena;
    const IrStmt *s = ar->frame ? frame_binder(ar, v) : NULL;
    if (s && s->kind == IR_S_FOR) {
        *L = s->for_.min;
        *U = ir_bin(a, IR_SUB, ir_bin(a, IR_ADD, s->for_.min, s->for_.extent),
                    ir_int(a, 1, s->for_.min->dt));
    } else if (((!s && v->kind == IR_VAR_BLOCK_IDX) || (v->kind == IR_VAR_LET && v->grid_perm)) && ar->k &&
               v->axis >= 0 && v->axis < 3 && ar->k->grid[v->axis]) {
        /* a block index, or one renumbered (its let's value says less than this) */
        const IrExpr *g = ar->k->grid[v->axis];
        *U = ir_bin(a, IR_SUB, (IrExpr *)g, ir_int(a, 1, g->dt));
    } else if (s && s->kind == IR_S_LET) {
        *L = *U = s->let.value;
    }
    if (*L && ((*L)->kind == IR_E_INT || !pure_expr(*L))) *L = NULL;
    if (*U && ((*U)->kind == IR_E_INT || !pure_expr(*U))) *U = NULL;
}

IrInterval ir_arith_var_range(IrArith *ar, const IrVar *v) {
    IrInterval dr = dt_range(v->dt), r = FULL;
    for (int i = ar->ranges.n - 1; i >= 0; i--)
        if (ar->ranges.v[i].var == v) return iv_meet(ar->ranges.v[i].r, dr);
    /* Ranges found below (frames, the grid) are bounds of other
     * expressions; ill-formed IR could make them cyclic. */
    if (ar->depth > 48) return v->kind == IR_VAR_LOOP || v->kind == IR_VAR_LET ? dr : iv_meet(iv(0, POS), dr);
    ar->depth++;
    r = var_range_found(ar, v);
    ar->depth--;
    return iv_meet(r, dr);
}

/* The range of block index `axis`: 0 .. grid[axis] - 1. */
static IrInterval block_range(IrArith *ar, int axis) {
    const IrKernel *k = ar->k;
    IrInterval r = iv(0, POS);
    if (k && axis >= 0 && axis < 3 && k->grid[axis]) {
        IrInterval g = ir_arith_bound(ar, k->grid[axis]);
        if (g.hi != POS && g.hi >= 1) r.hi = g.hi - 1;
    }
    return r;
}

static IrInterval var_range_found(IrArith *ar, const IrVar *v) {
    IrInterval r = FULL;
    if (v->kind == IR_VAR_LET && v->grid_perm) { /* a renumbered block index: the grid's range */
        IrInterval g = block_range(ar, v->axis);
        if (ar->frame && frame_range(ar, v, &r)) return iv_meet(r, g);
        return g;
    }
    if (ar->frame && frame_range(ar, v, &r)) return r;
    const IrKernel *k = ar->k;
    switch (v->kind) {
    case IR_VAR_THREAD_IDX:
        if (!k) r = iv(0, POS);
        else if (v->axis >= 0 && v->axis < 3) r = iv(0, k->threads[v->axis] - 1);
        else r = iv(0, ir_kernel_nthreads(k) - 1);
        break;
    case IR_VAR_BLOCK_IDX: r = block_range(ar, v->axis); break;
    case IR_VAR_SHAPE:
    case IR_VAR_RANK: r = iv(0, POS); break;
    default: break;
    }
    return r;
}

/* ---- the analysis of one node ----------------------------------------------------- */

typedef struct Info {
    IrInterval iv; /* the machine value's interval */
    IrModFact mf;  /* the machine value's residue */
    bool wrap;     /* it (or an operand feeding it arithmetically) may have wrapped */
} Info;

static Info analyze(IrArith *ar, const IrExpr *e);
static int decide(IrArith *ar, const IrExpr *c);

/* Clamp a computed node to its dtype.  can_wrap: the operation is one
 * whose machine result wraps (add, sub, mul, shl, neg, narrowing casts). */
static Info finish(Info x, TsDType dt, bool can_wrap) {
    IrInterval dr = dt_range(dt);
    bool out = x.iv.lo < dr.lo || x.iv.hi > dr.hi;
    if (!out && can_wrap && (dr.lo == NEG || dr.hi == POS) && (x.iv.lo == NEG || x.iv.hi == POS))
        out = true; /* 64-bit: a saturated end may hide a wrap */
    if (out) {
        x.iv = dr;
        x.wrap = true;
        const TsDTypeInfo *in = ts_dtype_info(dt);
        int bits = in ? in->bits : 64;
        x.mf = mf(gcd64(x.mf.m, (int64_t)1 << (bits < 62 ? bits : 62)), x.mf.r);
    }
    if (x.mf.m == 0) x.iv = iv(x.mf.r, x.mf.r);
    else if (x.iv.lo == x.iv.hi) x.mf = (IrModFact){0, x.iv.lo};
    return x;
}

static Info info_of(IrInterval r) {
    Info x = {r, NOFACT, false};
    if (r.lo == r.hi) x.mf = (IrModFact){0, r.lo};
    return x;
}

static bool const_of(const Info *x, int64_t *c) {
    if (x->iv.lo != x->iv.hi) return false;
    *c = x->iv.lo;
    return true;
}

static Info analyze_bin(IrArith *ar, const IrExpr *e) {
    IrBinOp op = e->bin.op;
    switch (op) {
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    case IR_AND: case IR_OR: {
        int d = decide(ar, e);
        return info_of(d > 0 ? iv(1, 1) : d < 0 ? iv(0, 0) : iv(0, 1));
    }
    default: break;
    }
    Info a = analyze(ar, e->bin.a), b = analyze(ar, e->bin.b);
    Info r = {FULL, NOFACT, a.wrap || b.wrap};
    bool can_wrap = false;
    int64_t c;
    switch (op) {
    case IR_ADD:
        r.iv = iv_add(a.iv, b.iv);
        r.mf = mf_add(a.mf, b.mf);
        can_wrap = true;
        break;
    case IR_SUB:
        r.iv = iv_sub(a.iv, b.iv);
        r.mf = mf_add(a.mf, mf_neg(b.mf));
        can_wrap = true;
        break;
    case IR_MUL:
        r.iv = iv_mul(a.iv, b.iv);
        r.mf = mf_mul(a.mf, b.mf);
        can_wrap = true;
        break;
    case IR_FLOORDIV:
    case IR_DIV: {
        bool fl = op == IR_FLOORDIV || a.iv.lo >= 0;
        r.iv = iv_div(a.iv, b.iv, op == IR_FLOORDIV);
        if (const_of(&b, &c) && c > 0 && fl) {
            if (a.mf.m == 0) r.mf = mf(0, floordiv64(a.mf.r, c));
            else if (a.mf.m % c == 0) r.mf = mf(a.mf.m / c, floordiv64(a.mf.r, c));
        }
        break;
    }
    case IR_FLOORMOD:
        r.iv = iv_mod(a.iv, b.iv);
        if (const_of(&b, &c) && c > 0) {
            if (a.mf.m == 0) r.mf = mf(0, floormod64(a.mf.r, c));
            else {
                int64_t g = gcd64(a.mf.m, c);
                r.mf = g == c ? mf(0, floormod64(a.mf.r, c)) : mf(g, a.mf.r);
            }
        }
        break;
    case IR_MIN:
        r.iv = iv(a.iv.lo < b.iv.lo ? a.iv.lo : b.iv.lo, a.iv.hi < b.iv.hi ? a.iv.hi : b.iv.hi);
        r.mf = mf_either(a.mf, b.mf);
        break;
    case IR_MAX:
        r.iv = iv(a.iv.lo > b.iv.lo ? a.iv.lo : b.iv.lo, a.iv.hi > b.iv.hi ? a.iv.hi : b.iv.hi);
        r.mf = mf_either(a.mf, b.mf);
        break;
    case IR_BITAND:
        if (const_of(&b, &c) && c >= 0) {
            r.iv = iv(0, c);
            if (a.iv.lo >= 0 && a.iv.hi < c) r.iv.hi = a.iv.hi;
            if (c < ((int64_t)1 << 62) && (c & (c + 1)) == 0) { /* c = 2^k - 1: a mod 2^k */
                int64_t p = c + 1, g = gcd64(a.mf.m, p);
                r.mf = a.mf.m == 0 ? mf(0, floormod64(a.mf.r, p)) : g == p ? mf(0, floormod64(a.mf.r, p)) : mf(g, a.mf.r);
                if (finite(a.iv) && floordiv64(a.iv.lo, p) == floordiv64(a.iv.hi, p))
                    r.iv = iv(a.iv.lo - floordiv64(a.iv.lo, p) * p, a.iv.hi - floordiv64(a.iv.lo, p) * p);
            }
        } else if (a.iv.lo >= 0 && b.iv.lo >= 0) {
            r.iv = iv(0, a.iv.hi < b.iv.hi ? a.iv.hi : b.iv.hi);
        } else if (a.iv.lo >= 0) {
            r.iv = iv(0, a.iv.hi);
        }
        break;
    case IR_BITOR:
    case IR_BITXOR:
        if (a.iv.lo >= 0 && b.iv.lo >= 0 && a.iv.hi != POS && b.iv.hi != POS) {
            int64_t m = a.iv.hi > b.iv.hi ? a.iv.hi : b.iv.hi, p = 1;
            while (p <= m && p < ((int64_t)1 << 62)) p <<= 1;
            r.iv = iv(0, p - 1);
        }
        break;
    case IR_SHL:
        if (const_of(&b, &c) && c >= 0 && c < 62) {
            IrInterval p = iv((int64_t)1 << c, (int64_t)1 << c);
            r.iv = iv_mul(a.iv, p);
            r.mf = mf_mul(a.mf, mf(0, (int64_t)1 << c));
            can_wrap = true;
        } else {
            r.wrap = true;
        }
        break;
    case IR_SHR:
        if (const_of(&b, &c) && c >= 0 && c < 62) {
            int64_t p = (int64_t)1 << c;
            r.iv = iv_div(a.iv, iv(p, p), true);
            if (a.mf.m == 0) r.mf = mf(0, floordiv64(a.mf.r, p));
            else if (a.mf.m % p == 0) r.mf = mf(a.mf.m / p, floordiv64(a.mf.r, p));
        }
        break;
    case IR_POW:
        r.wrap = true;
        break;
    default: break;
    }
    return finish(r, e->dt, can_wrap);
}

static Info analyze(IrArith *ar, const IrExpr *e) {
    if (!e || !is_int(e->dt)) return (Info){FULL, NOFACT, false};
    switch (e->kind) {
    case IR_E_INT: return info_of(iv(e->ival, e->ival));
    case IR_E_VAR: return finish(info_of(ir_arith_var_range(ar, e->var)), e->dt, false);
    case IR_E_BIN: return analyze_bin(ar, e);
    case IR_E_NEG: {
        Info a = analyze(ar, e->un.a);
        Info r = {iv_neg(a.iv), mf_neg(a.mf), a.wrap};
        return finish(r, e->dt, true);
    }
    case IR_E_NOT:
        if (!e->un.bitnot) {
            int d = decide(ar, e);
            return info_of(d > 0 ? iv(1, 1) : d < 0 ? iv(0, 0) : iv(0, 1));
        } else {
            Info a = analyze(ar, e->un.a); /* ~x = -x - 1 */
            Info r = {iv_add(iv_neg(a.iv), iv(-1, -1)), mf_add(mf_neg(a.mf), mf(0, -1)), a.wrap};
            return finish(r, e->dt, true);
        }
    case IR_E_CAST: {
        if (e->dt == TS_BOOL) {
            int d = decide(ar, e->un.a);
            return info_of(d > 0 ? iv(1, 1) : d < 0 ? iv(0, 0) : iv(0, 1));
        }
        if (!is_int(e->un.a->dt)) return finish(info_of(dt_range(e->dt)), e->dt, false);
        Info a = analyze(ar, e->un.a);
        return finish(a, e->dt, true);
    }
    case IR_E_SELECT: {
        int d = decide(ar, e->sel.cond);
        if (d > 0) return analyze(ar, e->sel.a);
        if (d < 0) return analyze(ar, e->sel.b);
        Info a = analyze(ar, e->sel.a), b = analyze(ar, e->sel.b);
        Info r = {iv_union(a.iv, b.iv), NOFACT, a.wrap || b.wrap};
        r.mf = mf_either(a.mf, b.mf);
        return finish(r, e->dt, false);
    }
    case IR_E_LOAD:
    case IR_E_CALL:
    case IR_E_FLOAT:
    case IR_E_STRING: break;
    }
    return finish(info_of(dt_range(e->dt)), e->dt, false);
}

IrInterval ir_arith_bound(IrArith *ar, const IrExpr *e) {
    if (!e || !is_int(e->dt)) return FULL;
    return analyze(ar, e).iv;
}

IrModFact ir_arith_mod(IrArith *ar, const IrExpr *e) {
    if (!e || !is_int(e->dt)) return NOFACT;
    return analyze(ar, e).mf;
}

bool ir_arith_divisible(IrArith *ar, const IrExpr *e, int64_t q) {
    if (q <= 0) return false;
    IrModFact f = ir_arith_mod(ar, e);
    if (f.m == 0) return f.r % q == 0;
    return f.m % q == 0 && f.r % q == 0;
}

int ir_arith_multiple(IrArith *ar, const IrExpr *e, int64_t q) {
    if (q <= 0) return -1;
    if (q == 1) return 1;
    IrModFact f = ir_arith_mod(ar, e);
    if (f.m == 0) return f.r % q == 0;
    if (f.m % q == 0) return f.r % q == 0; /* e = r (mod q) */
    return -1;
}

int64_t ir_arith_divisor(IrArith *ar, const IrExpr *e) {
    IrModFact f = ir_arith_mod(ar, e);
    if (f.m == 0) return f.r < 0 ? -f.r : f.r;
    return gcd64(f.m, f.r);
}

/* ---- affine forms -------------------------------------------------------------------- */

typedef struct Form {
    TS_VEC(IrAffTerm) t; /* terms, distinct atoms */
    int64_t c;           /* constant */
    bool ok;             /* no coefficient overflowed */
} Form;

static bool ovf(i128 x) { return x > (i128)INT64_MAX / 2 || x < -((i128)INT64_MAX / 2); }

static void form_add_term(IrArith *ar, Form *f, const IrExpr *atom, i128 coeff) {
    for (int i = 0; i < f->t.n; i++)
        if (ir_expr_equal(f->t.v[i].atom, atom)) {
            i128 s = (i128)f->t.v[i].coeff + coeff;
            if (ovf(s)) f->ok = false;
            f->t.v[i].coeff = (int64_t)s;
            return;
        }
    if (coeff == 0) return;
    if (ovf(coeff)) f->ok = false;
    IrAffTerm t = {atom, (int64_t)coeff};
    ts_vec_push(ar->arena, f->t, t);
}

static void form_add_const(Form *f, i128 c) {
    i128 s = (i128)f->c + c;
    if (ovf(s)) f->ok = false;
    f->c = (int64_t)s;
}

/* f += scale * form(e). */
static void form_of(IrArith *ar, const IrExpr *e, bool expand, i128 scale, Form *f) {
    if (!f->ok || scale == 0) return;
    int64_t c;
    switch (e->kind) {
    case IR_E_INT: form_add_const(f, scale * (i128)e->ival); return;
    case IR_E_NEG: form_of(ar, e->un.a, expand, -scale, f); return;
    case IR_E_CAST:
        /* a widening int -> int cast is the identity on values */
        if (ts_dtype_is_int(e->dt) && ts_dtype_is_int(e->un.a->dt) &&
            ts_dtype_bits(e->dt) >= ts_dtype_bits(e->un.a->dt) &&
            dt_range(e->dt).lo <= dt_range(e->un.a->dt).lo) {
            form_of(ar, e->un.a, expand, scale, f);
            return;
        }
        break;
    case IR_E_BIN:
        switch (e->bin.op) {
        case IR_ADD:
            form_of(ar, e->bin.a, expand, scale, f);
            form_of(ar, e->bin.b, expand, scale, f);
            return;
        case IR_SUB:
            form_of(ar, e->bin.a, expand, scale, f);
            form_of(ar, e->bin.b, expand, -scale, f);
            return;
        case IR_MUL:
            if (ir_is_const_int(e->bin.b, &c)) {
                if (ovf(scale * c)) f->ok = false;
                else form_of(ar, e->bin.a, expand, scale * c, f);
                return;
            }
            if (ir_is_const_int(e->bin.a, &c)) {
                if (ovf(scale * c)) f->ok = false;
                else form_of(ar, e->bin.b, expand, scale * c, f);
                return;
            }
            break;
        case IR_SHL:
            if (ir_is_const_int(e->bin.b, &c) && c >= 0 && c < 40) {
                form_of(ar, e->bin.a, expand, scale * ((i128)1 << c), f);
                return;
            }
            break;
        case IR_FLOORMOD:
            if (expand && ir_is_const_int(e->bin.b, &c) && c > 0) {
                /* x mod c = x - c * (x // c) */
                form_of(ar, e->bin.a, expand, scale, f);
                IrExpr *q = ir_bin(ar->arena, IR_FLOORDIV, e->bin.a, e->bin.b);
                if (q->kind == IR_E_INT) form_add_const(f, -scale * c * (i128)q->ival);
                else form_add_term(ar, f, q, -scale * c);
                return;
            }
            break;
        default: break;
        }
        break;
    default: break;
    }
    form_add_term(ar, f, e, scale);
}

static bool form(IrArith *ar, const IrExpr *e, bool expand, Form *f) {
    memset(f, 0, sizeof *f);
    f->ok = true;
    if (!e || !is_int(e->dt)) return false;
    form_of(ar, e, expand, 1, f);
    /* drop cancelled terms */
    int n = 0;
    for (int i = 0; i < f->t.n; i++)
        if (f->t.v[i].coeff != 0) f->t.v[n++] = f->t.v[i];
    f->t.n = n;
    return f->ok;
}

bool ir_arith_affine(IrArith *ar, const IrExpr *e, bool expand_mod, IrAffine *out) {
    Form f;
    memset(out, 0, sizeof *out);
    if (!e || !is_int(e->dt) || analyze(ar, e).wrap) return false;
    if (!form(ar, e, expand_mod, &f)) return false;
    out->t = f.t.v;
    out->n = f.t.n;
    out->c = f.c;
    out->affine = true;
    for (int i = 0; i < f.t.n; i++)
        if (f.t.v[i].atom->kind != IR_E_VAR) out->affine = false;
    return true;
}

int64_t ir_affine_coeff(const IrAffine *f, const IrVar *v) {
    for (int i = 0; i < f->n; i++)
        if (f->t[i].atom->kind == IR_E_VAR && f->t[i].atom->var == v) return f->t[i].coeff;
    return 0;
}

IrExpr *ir_affine_expr(TsArena *a, const IrAffine *f, TsDType dt) {
    IrExpr *acc = NULL;
    for (int i = 0; i < f->n; i++) {
        int64_t c = f->t[i].coeff;
        uint64_t mag = c < 0 ? 0 - (uint64_t)c : (uint64_t)c;
        IrExpr *t = ir_cast(a, dt, (IrExpr *)f->t[i].atom);
        if (mag != 1) t = ir_bin(a, IR_MUL, t, ir_int(a, (int64_t)mag, dt));
        if (!acc) acc = c < 0 ? ir_neg(a, t) : t;
        else acc = ir_bin(a, c < 0 ? IR_SUB : IR_ADD, acc, t);
    }
    if (!acc) return ir_int(a, f->c, dt);
    if (f->c > 0) acc = ir_bin(a, IR_ADD, acc, ir_int(a, f->c, dt));
    else if (f->c < 0) acc = ir_bin(a, IR_SUB, acc, ir_int(a, (int64_t)(0 - (uint64_t)f->c), dt));
    return acc;
}

/* Bounds of a form: each atom bounded on its own. */
static IrInterval form_bound(IrArith *ar, const Form *f) {
    IrInterval r = iv(f->c, f->c);
    for (int i = 0; i < f->t.n && (r.lo != NEG || r.hi != POS); i++) {
        IrInterval a = ir_arith_bound(ar, f->t.v[i].atom);
        r = iv_add(r, iv_mul(a, iv(f->t.v[i].coeff, f->t.v[i].coeff)));
    }
    return r;
}

static IrModFact form_mod(IrArith *ar, const Form *f) {
    IrModFact r = mf(0, f->c);
    for (int i = 0; i < f->t.n; i++)
        r = mf_add(r, mf_mul(ir_arith_mod(ar, f->t.v[i].atom), mf(0, f->t.v[i].coeff)));
    return r;
}

/* b - a as a form; false if either side might have wrapped or a
 * coefficient overflowed. */
static bool diff_form(IrArith *ar, const IrExpr *a, const IrExpr *b, bool expand, Form *f) {
    if (!is_int(a->dt) || !is_int(b->dt)) return false;
    if (analyze(ar, a).wrap || analyze(ar, b).wrap) return false;
    if (!form(ar, b, expand, f)) return false;
    form_of(ar, a, expand, -1, f);
    int n = 0;
    for (int i = 0; i < f->t.n; i++)
        if (f->t.v[i].coeff != 0) f->t.v[n++] = f->t.v[i];
    f->t.n = n;
    return f->ok;
}

/* ---- proving ----------------------------------------------------------------------- */

static bool is_cmp(IrBinOp op) {
    return op == IR_EQ || op == IR_NE || op == IR_LT || op == IR_LE || op == IR_GT || op == IR_GE;
}

/* Sign facts of b - a: *lo, *hi bound it, *nz: provably nonzero. */
/* f with var terms replaced by their symbolic bounds on the side that
 * keeps `f >= result` (lower) or `f <= result` (upper) true for every
 * valid value: c*v with c > 0 is at least c*L and at most c*U, with c < 0
 * the other way round.  Each var is replaced once; the bounds brought in
 * may have bounds of their own (an inner loop's extent over an outer
 * loop's var), so it goes round a few times.  False if nothing changed. */
static bool sym_subst(IrArith *ar, const Form *f, bool lower, Form *out) {
    const IrVar *done[16];
    int nd = 0;
    Form cur = *f;
    bool any = false;
    for (int round = 0; round < 4; round++) {
        Form next;
        memset(&next, 0, sizeof next);
        next.ok = true;
        next.c = cur.c;
        bool changed = false;
        for (int i = 0; i < cur.t.n; i++) {
            const IrAffTerm *t = &cur.t.v[i];
            const IrVar *v = t->atom->kind == IR_E_VAR ? t->atom->var : NULL;
            bool seen = false;
            for (int j = 0; j < nd && v; j++) seen |= done[j] == v;
            if (v && !seen && nd < 16) {
                const IrExpr *L, *U;
                sym_bounds(ar, v, &L, &U);
                const IrExpr *bd = (t->coeff > 0) == lower ? L : U;
                if (bd && is_int(bd->dt) && !analyze(ar, bd).wrap) {
                    form_of(ar, bd, false, t->coeff, &next);
                    done[nd++] = v;
                    changed = true;
                    continue;
                }
            }
            form_add_term(ar, &next, t->atom, t->coeff);
        }
        if (!changed || !next.ok) break;
        int n = 0;
        for (int i = 0; i < next.t.n; i++)
            if (next.t.v[i].coeff != 0) next.t.v[n++] = next.t.v[i];
        next.t.n = n;
        cur = next;
        any = true;
    }
    *out = cur;
    return any;
}

/* ---- path conditions ---------------------------------------------------------------- */

enum { MAX_FACTS = 16 };

/* Facts g >= 0 from condition c (known true when `truth`). */
static void add_facts(IrArith *ar, const IrExpr *c, bool truth, Form *out, int *n) {
    if (*n >= MAX_FACTS) return;
    if (c->kind == IR_E_NOT && !c->un.bitnot) {
        add_facts(ar, c->un.a, !truth, out, n);
        return;
    }
    if (c->kind != IR_E_BIN) return;
    IrBinOp op = c->bin.op;
    if ((op == IR_AND && truth) || (op == IR_OR && !truth)) {
        add_facts(ar, c->bin.a, truth, out, n);
        add_facts(ar, c->bin.b, truth, out, n);
        return;
    }
    if (!is_cmp(op) || !ts_dtype_is_int(c->bin.a->dt)) return;
    if (!truth) { /* not (a < b) is a >= b, ... */
        switch (op) {
        case IR_LT: op = IR_GE; break;
        case IR_LE: op = IR_GT; break;
        case IR_GT: op = IR_LE; break;
        case IR_GE: op = IR_LT; break;
        case IR_NE: op = IR_EQ; break;
        default: return;
        }
    }
    const IrExpr *x = c->bin.a, *y = c->bin.b;
    if (!pure_expr(x) || !pure_expr(y)) return;
    /* x < y: y - x - 1 >= 0; x <= y: y - x >= 0; x == y: both ways */
    const IrExpr *lo = x, *hi = y;
    int64_t off = 0;
    switch (op) {
    case IR_LT: off = -1; break;
    case IR_LE: break;
    case IR_GT: lo = y, hi = x, off = -1; break;
    case IR_GE: lo = y, hi = x; break;
    case IR_EQ: break;
    default: return;
    }
    for (int k = 0; k < (op == IR_EQ ? 2 : 1) && *n < MAX_FACTS; k++) {
        Form f;
        const IrExpr *p = k ? lo : hi, *q = k ? hi : lo;
        if (!diff_form(ar, q, p, false, &f)) return;
        form_add_const(&f, off);
        if (f.ok && f.t.n) out[(*n)++] = f;
    }
}

/* Facts from the conditions of the ifs enclosing the frame. */
static int path_facts(IrArith *ar, Form *out) {
    int n = 0;
    const IrWalkFrame *below = NULL;
    for (const IrWalkFrame *f = ar->frame; f && n < MAX_FACTS; below = f, f = f->up) {
        const IrStmt *s = f->s;
        if (!below || s->kind != IR_S_IF) continue;
        if (below->s == s->if_.then) add_facts(ar, s->if_.cond, true, out, &n);
        else if (below->s == s->if_.else_) add_facts(ar, s->if_.cond, false, out, &n);
    }
    return n;
}

/* f - scale * g. */
static Form form_minus(IrArith *ar, const Form *f, const Form *g, int64_t scale) {
    Form r;
    memset(&r, 0, sizeof r);
    r.ok = f->ok && g->ok;
    r.c = f->c;
    for (int i = 0; i < f->t.n; i++) form_add_term(ar, &r, f->t.v[i].atom, f->t.v[i].coeff);
    for (int i = 0; i < g->t.n; i++) form_add_term(ar, &r, g->t.v[i].atom, -(i128)scale * g->t.v[i].coeff);
    form_add_const(&r, -(i128)scale * g->c);
    int n = 0;
    for (int i = 0; i < r.t.n; i++)
        if (r.t.v[i].coeff != 0) r.t.v[n++] = r.t.v[i];
    r.t.n = n;
    return r;
}

/* Lower (upper) bound of f using symbolic bounds. */
static int64_t sym_lo(IrArith *ar, const Form *f) {
    int64_t lo = form_bound(ar, f).lo;
    Form g;
    if (sym_subst(ar, f, true, &g)) {
        int64_t l2 = form_bound(ar, &g).lo;
        if (l2 > lo) lo = l2;
    }
    return lo;
}

static int64_t sym_hi(IrArith *ar, const Form *f) {
    int64_t hi = form_bound(ar, f).hi;
    Form g;
    if (sym_subst(ar, f, false, &g)) {
        int64_t h2 = form_bound(ar, &g).hi;
        if (h2 < hi) hi = h2;
    }
    return hi;
}

static bool diff_facts(IrArith *ar, const IrExpr *a, const IrExpr *b, IrInterval *r, bool *nz) {
    Form f;
    if (!diff_form(ar, a, b, false, &f)) return false;
    *r = form_bound(ar, &f);
    IrModFact m = form_mod(ar, &f);
    *nz = r->lo > 0 || r->hi < 0 || m.r != 0; /* b - a = m*k + r, 0 < r < m */
    if (r->lo != 0 || r->hi != 0) {
        /* quotients and remainders of the same division may cancel */
        Form g;
        if (f.t.n && diff_form(ar, a, b, true, &g)) {
            IrInterval r2 = form_bound(ar, &g);
            *r = iv_meet(*r, r2);
            if (r->lo > 0 || r->hi < 0) *nz = true;
        }
    }
    if (r->lo != r->hi && f.t.n) {
        /* symbolic bounds: `by < m` where by < grid = m, `k < n` in range(n) */
        if (r->lo <= 0) {
            int64_t lo = sym_lo(ar, &f);
            if (lo > r->lo) r->lo = lo;
        }
        if (r->hi >= 0) {
            int64_t hi = sym_hi(ar, &f);
            if (hi < r->hi) r->hi = hi;
        }
        /* enclosing conditions g >= 0: f >= f - g and f <= f + g */
        if (ar->frame && !ar->facts_busy && r->lo <= 0 && r->hi >= 0) {
            Form facts[MAX_FACTS];
            ar->facts_busy = 1;
            int n = path_facts(ar, facts);
            for (int i = 0; i < n; i++) {
                Form h = form_minus(ar, &f, &facts[i], 1);
                if (h.ok) {
                    int64_t lo = sym_lo(ar, &h);
                    if (lo > r->lo) r->lo = lo;
                }
                h = form_minus(ar, &f, &facts[i], -1);
                if (h.ok) {
                    int64_t hi = sym_hi(ar, &h);
                    if (hi < r->hi) r->hi = hi;
                }
            }
            ar->facts_busy = 0;
        }
        if (r->lo > 0 || r->hi < 0) *nz = true;
    }
    return true;
}

/* 1: c is true wherever the ranges hold; -1: false; 0: unknown. */
static int decide(IrArith *ar, const IrExpr *c) {
    if (!c) return 0;
    switch (c->kind) {
    case IR_E_INT: return c->ival ? 1 : -1;
    case IR_E_NOT:
        if (!c->un.bitnot) return -decide(ar, c->un.a);
        break;
    case IR_E_CAST:
        if (c->dt == TS_BOOL) return decide(ar, c->un.a);
        break;
    case IR_E_BIN: {
        IrBinOp op = c->bin.op;
        if (op == IR_AND) {
            int x = decide(ar, c->bin.a);
            if (x < 0) return -1;
            int y = decide(ar, c->bin.b);
            if (y < 0) return -1;
            return x > 0 && y > 0 ? 1 : 0;
        }
        if (op == IR_OR) {
            int x = decide(ar, c->bin.a);
            if (x > 0) return 1;
            int y = decide(ar, c->bin.b);
            if (y > 0) return 1;
            return x < 0 && y < 0 ? -1 : 0;
        }
        if (!is_cmp(op) || !is_int(c->bin.a->dt)) break;
        IrInterval d; /* b - a */
        bool nz;
        if (!diff_facts(ar, c->bin.a, c->bin.b, &d, &nz)) return 0;
        switch (op) {
        case IR_EQ: return d.lo == 0 && d.hi == 0 ? 1 : nz ? -1 : 0;
        case IR_NE: return d.lo == 0 && d.hi == 0 ? -1 : nz ? 1 : 0;
        case IR_LT: return d.lo >= 1 ? 1 : d.hi <= 0 ? -1 : 0;
        case IR_LE: return d.lo >= 0 ? 1 : d.hi <= -1 ? -1 : 0;
        case IR_GT: return d.hi <= -1 ? 1 : d.lo >= 0 ? -1 : 0;
        case IR_GE: return d.hi <= 0 ? 1 : d.lo >= 1 ? -1 : 0;
        default: return 0;
        }
    }
    default: break;
    }
    /* an integer or bool value used as a condition (not a comparison this
     * could not decide, e.g. of floats: analyze would ask decide again) */
    if (is_int(c->dt) && !(c->kind == IR_E_BIN && is_cmp(c->bin.op))) {
        Info x = analyze(ar, c);
        if (x.iv.lo > 0 || x.iv.hi < 0) return 1;
        if (x.iv.lo == 0 && x.iv.hi == 0) return -1;
    }
    return 0;
}

bool ir_arith_prove(IrArith *ar, const IrExpr *cond) { return decide(ar, cond) > 0; }
bool ir_arith_disprove(IrArith *ar, const IrExpr *cond) { return decide(ar, cond) < 0; }

bool ir_arith_prove_eq(IrArith *ar, const IrExpr *a, const IrExpr *b) {
    IrInterval d;
    bool nz;
    return diff_facts(ar, a, b, &d, &nz) && d.lo == 0 && d.hi == 0;
}

bool ir_arith_prove_lt(IrArith *ar, const IrExpr *a, const IrExpr *b) {
    IrInterval d;
    bool nz;
    return diff_facts(ar, a, b, &d, &nz) && d.lo >= 1;
}

bool ir_arith_prove_le(IrArith *ar, const IrExpr *a, const IrExpr *b) {
    IrInterval d;
    bool nz;
    return diff_facts(ar, a, b, &d, &nz) && d.lo >= 0;
}

bool ir_arith_diff_bound(IrArith *ar, const IrExpr *a, const IrExpr *b, IrInterval *out) {
    bool nz;
    *out = FULL;
    if (!a || !b) return false;
    return diff_facts(ar, b, a, out, &nz); /* diff_facts bounds its second minus its first */
}

/* The conjuncts of c not proven true (c decided neither way as a whole). */
static IrExpr *drop_proven(IrArith *ar, IrExpr *c) {
    if (c->kind != IR_E_BIN || c->bin.op != IR_AND) return c;
    if (decide(ar, c->bin.a) > 0) return drop_proven(ar, c->bin.b);
    if (decide(ar, c->bin.b) > 0) return drop_proven(ar, c->bin.a);
    IrExpr *x = drop_proven(ar, c->bin.a), *y = drop_proven(ar, c->bin.b);
    if (x == c->bin.a && y == c->bin.b) return c;
    IrExpr *r = ir_bin(ar->arena, IR_AND, x, y);
    if (!r->loc.src) r->loc = c->loc;
    return r;
}

IrExpr *ir_arith_prune_cond(IrArith *ar, IrExpr *cond) {
    if (!cond) return cond;
    int d = decide(ar, cond);
    if (d) return ir_int(ar->arena, d > 0, cond->dt);
    return drop_proven(ar, cond);
}

/* ---- simplification -------------------------------------------------------------------- */

static IrExpr *form_expr(IrArith *ar, const Form *f, TsDType dt) {
    IrAffine a = {f->t.v, f->t.n, f->c, false};
    return ir_affine_expr(ar->arena, &a, dt);
}

/* x = c*Q + R: Q (coefficients divided by c, the constant floor-divided)
 * and R (the other terms and the constant's residue). */
static void split(IrArith *ar, const Form *x, int64_t c, Form *q, Form *r) {
    memset(q, 0, sizeof *q);
    memset(r, 0, sizeof *r);
    q->ok = r->ok = true;
    for (int i = 0; i < x->t.n; i++) {
        const IrAffTerm *t = &x->t.v[i];
        if (t->coeff % c == 0) form_add_term(ar, q, t->atom, t->coeff / c);
        else form_add_term(ar, r, t->atom, t->coeff);
    }
    q->c = floordiv64(x->c, c);
    r->c = floormod64(x->c, c);
}

/* A rewritten node is used only if nothing in it can wrap (its terms are
 * computed in a different order than the original's). */
static IrExpr *checked(IrArith *ar, IrExpr *orig, IrExpr *e) {
    return analyze(ar, e).wrap ? orig : e;
}

static IrExpr *simp_divmod(IrArith *ar, IrExpr *e) {
    int64_t c;
    IrBinOp op = e->bin.op;
    IrExpr *x = e->bin.a;
    if (!ir_is_const_int(e->bin.b, &c) || c <= 0 || !ts_dtype_is_int(e->dt)) return e;
    Info xi = analyze(ar, x);
    if (op == IR_DIV && xi.iv.lo < 0) return e; /* truncation differs from floor */
    TsArena *a = ar->arena;
    if (finite(xi.iv) && floordiv64(xi.iv.lo, c) == floordiv64(xi.iv.hi, c)) {
        int64_t q = floordiv64(xi.iv.lo, c);
        if (op != IR_FLOORMOD) return ir_int(a, q, e->dt);
        return q == 0 ? x : ir_bin(a, IR_SUB, x, ir_int(a, q * c, e->dt));
    }
    if (op == IR_FLOORMOD && xi.mf.m != 0 && xi.mf.m % c == 0)
        return ir_int(a, floormod64(xi.mf.r, c), e->dt);
    if (xi.wrap) return e;
    Form f, q, r;
    if (!form(ar, x, false, &f)) return e;
    split(ar, &f, c, &q, &r);
    if (!q.ok || !r.ok) return e;
    IrInterval rb = form_bound(ar, &r);
    if (finite(rb) && floordiv64(rb.lo, c) == floordiv64(rb.hi, c)) {
        int64_t k = floordiv64(rb.lo, c);
        if (op != IR_FLOORMOD) {
            form_add_const(&q, k);
            return checked(ar, e, form_expr(ar, &q, e->dt));
        }
        form_add_const(&r, -(i128)k * c);
        return checked(ar, e, form_expr(ar, &r, e->dt));
    }
    /* (c*Q + R) mod c = R mod c: drop the multiples of c */
    if (op == IR_FLOORMOD && q.t.n && r.t.n)
        return checked(ar, e, ir_bin(a, IR_FLOORMOD, form_expr(ar, &r, e->dt), e->bin.b));
    return e;
}

static IrExpr *simp_node(IrMutator *m, IrExpr *e) { return ir_arith_simplify_node(m->ctx, e); }

IrExpr *ir_arith_simplify_node(IrArith *ar, IrExpr *e) {
    TsArena *a = ar->arena;
    if (e->kind == IR_E_NOT && !e->un.bitnot) {
        int d = decide(ar, e);
        if (d) return ir_int(a, d > 0, e->dt);
        return e;
    }
    if (e->kind != IR_E_BIN) return e;
    IrBinOp op = e->bin.op;
    if (is_cmp(op) || op == IR_AND || op == IR_OR) {
        if (!is_int(e->bin.a->dt)) return e;
        int d = decide(ar, e);
        if (d) return ir_int(a, d > 0, e->dt);
        return e;
    }
    if (!ts_dtype_is_int(e->dt)) return e;
    switch (op) {
    case IR_FLOORDIV:
    case IR_FLOORMOD:
    case IR_DIV: return simp_divmod(ar, e);
    case IR_MIN:
    case IR_MAX: {
        bool le = ir_arith_prove_le(ar, e->bin.a, e->bin.b);
        bool ge = !le && ir_arith_prove_le(ar, e->bin.b, e->bin.a);
        if (le) return op == IR_MIN ? e->bin.a : e->bin.b;
        if (ge) return op == IR_MIN ? e->bin.b : e->bin.a;
        return e;
    }
    case IR_ADD:
    case IR_SUB: {
        if (analyze(ar, e).wrap) return e;
        Form f;
        if (!form(ar, e, false, &f)) return e;
        if (f.t.n == 0) return ir_int(a, f.c, e->dt);
        if (f.t.n == 1 && f.c == 0 && f.t.v[0].coeff == 1) return ir_cast(a, e->dt, (IrExpr *)f.t.v[0].atom);
        return e;
    }
    default: return e;
    }
}

IrExpr *ir_arith_simplify(IrArith *ar, IrExpr *e) {
    IrMutator m = {.arena = ar->arena, .ctx = ar, .post_expr = simp_node, .fold = true};
    return ir_mutate_expr(&m, e);
}

/* ---- regions ------------------------------------------------------------------------------ */

/* Is [s1, s1 + e1) provably disjoint from [s2, s2 + e2)? */
static bool dim_disjoint(IrArith *ar, IrExpr *s1, IrExpr *e1, IrExpr *s2, IrExpr *e2) {
    TsArena *a = ar->arena;
    IrInterval b1 = ir_arith_bound(ar, e1), b2 = ir_arith_bound(ar, e2);
    if (b1.hi <= 0 || b2.hi <= 0) return true; /* an empty region */
    return ir_arith_prove_le(ar, ir_bin(a, IR_ADD, s1, e1), s2) ||
           ir_arith_prove_le(ar, ir_bin(a, IR_ADD, s2, e2), s1);
}

bool ir_arith_regions_may_overlap(IrArith *ar, const IrRegion *a, const IrRegion *b) {
    if (a->buf != b->buf) return false;
    int n = a->ndim < b->ndim ? a->ndim : b->ndim;
    for (int d = 0; d < n; d++)
        if (dim_disjoint(ar, a->start[d], a->extent[d], b->start[d], b->extent[d])) return false;
    return true;
}

bool ir_arith_regions_may_overlap_across(IrArith *ar, const IrRegion *a, const IrRegion *b,
                                         const IrVar *var) {
    if (a->buf != b->buf) return false;
    IrInterval r = ir_arith_var_range(ar, var);
    if (r.lo == r.hi) return false; /* no two different values */
    TsArena *ar_a = ar->arena;
    /* v2 = v1 + 1 + w or v2 = v1 - 1 - w, w in [0, hi - lo - 1] */
    IrVar *w = TS_NEW(ar_a, IrVar);
    w->name = "w";
    w->id = -1;
    w->dt = var->dt;
    w->kind = IR_VAR_LOOP;
    int64_t span = finite(r) ? (int64_t)(wide(r.hi) - wide(r.lo) - 1) : POS;
    int mark = ir_arith_mark(ar);
    ir_arith_bind(ar, w, 0, span);
    bool may = false;
    for (int side = 0; side < 2 && !may; side++) {
        IrExpr *one = ir_int(ar_a, 1, var->dt), *wv = ir_var_ref(ar_a, w);
        IrExpr *off = ir_bin(ar_a, IR_ADD, one, wv);
        IrExpr *v2 = ir_bin(ar_a, side ? IR_SUB : IR_ADD, ir_var_ref(ar_a, (IrVar *)var), off);
        IrVar *from[1] = {(IrVar *)var};
        IrExpr *to[1] = {v2};
        IrRegion b2 = *b;
        b2.start = TS_NEWN(ar_a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
        b2.extent = TS_NEWN(ar_a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
        for (int d = 0; d < b->ndim; d++) {
            b2.start[d] = ir_subst(ar_a, b->start[d], from, to, 1);
            b2.extent[d] = ir_subst(ar_a, b->extent[d], from, to, 1);
        }
        may = ir_arith_regions_may_overlap(ar, a, &b2);
    }
    ir_arith_pop(ar, mark);
    return may;
}
