/*
 * test_arith.c — the integer analysis (ir/arith.h), checked against brute
 * force.
 *
 * Random integer expressions over a few variables with small random ranges
 * are evaluated at every point of those ranges by an evaluator written
 * here (independent of the analysis and of the IR's constant folder); every
 * claim the analysis makes must hold at every point: the interval contains
 * each value, the residue matches, the affine form evaluates to the same
 * value, a proven comparison is true everywhere (a disproven one false),
 * a simplified expression gives the same values, disjoint regions never
 * share an element.  Counters check the analysis is not vacuously right
 * (it proves and simplifies a good share of the cases).  Fixed cases pin
 * the facts passes rely on: loop ranges from frames, thread and block
 * ranges from the kernel, wrap-around refusals, classic index identities.
 */
#include <stdlib.h>

#include "ir/arith.h"
#include "ir/ir.h"
#include "ir/walk.h"
#include "test.h"

static TsArena A;

/* ---- an independent evaluator ------------------------------------------------------ */

enum { NV = 4 };

typedef struct Env {
    IrVar *var[NV];  /* the variables */
    int64_t val[NV]; /* their current values */
    int64_t lo[NV], hi[NV]; /* their ranges */
} Env;

static int64_t wrap32(int64_t x) { return (int64_t)(int32_t)(uint32_t)(uint64_t)x; }

static int64_t fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t fmod_(int64_t a, int64_t b) { return a - fdiv(a, b) * b; }

static bool eval_ok; /* cleared on division by zero */

static int64_t eval(const Env *env, const IrExpr *e) {
    switch (e->kind) {
    case IR_E_INT: return e->ival;
    case IR_E_VAR:
        for (int i = 0; i < NV; i++)
            if (env->var[i] == e->var) return env->val[i];
        eval_ok = false;
        return 0;
    case IR_E_NEG: return wrap32(-eval(env, e->un.a));
    case IR_E_NOT: return e->un.bitnot ? ~eval(env, e->un.a) : !eval(env, e->un.a);
    case IR_E_CAST: {
        int64_t x = eval(env, e->un.a);
        if (e->dt == TS_BOOL) return x != 0;
        return e->dt == TS_INT32 ? wrap32(x) : x;
    }
    case IR_E_SELECT: return eval(env, e->sel.cond) ? eval(env, e->sel.a) : eval(env, e->sel.b);
    case IR_E_BIN: {
        int64_t a = eval(env, e->bin.a), b = eval(env, e->bin.b), r;
        switch (e->bin.op) {
        case IR_ADD: r = a + b; break;
        case IR_SUB: r = a - b; break;
        case IR_MUL: r = a * b; break;
        case IR_DIV:
            if (!b) { eval_ok = false; return 0; }
            r = a / b;
            break;
        case IR_FLOORDIV:
            if (!b) { eval_ok = false; return 0; }
            r = fdiv(a, b);
            break;
        case IR_FLOORMOD:
            if (!b) { eval_ok = false; return 0; }
            r = fmod_(a, b);
            break;
        case IR_MIN: r = a < b ? a : b; break;
        case IR_MAX: r = a > b ? a : b; break;
        case IR_EQ: return a == b;
        case IR_NE: return a != b;
        case IR_LT: return a < b;
        case IR_LE: return a <= b;
        case IR_GT: return a > b;
        case IR_GE: return a >= b;
        case IR_AND: return a && b;
        case IR_OR: return a || b;
        case IR_BITAND: r = a & b; break;
        case IR_BITOR: r = a | b; break;
        case IR_BITXOR: r = a ^ b; break;
        case IR_SHL: r = (int64_t)((uint64_t)a << b); break;
        case IR_SHR: r = a >> b; break;
        default: eval_ok = false; return 0;
        }
        return e->dt == TS_INT32 ? wrap32(r) : r;
    }
    default: eval_ok = false; return 0;
    }
}

/* Calls fn at every point of the ranges; stops when fn returns false. */
static bool for_all(Env *env, bool (*fn)(Env *env, void *ctx), void *ctx, int d) {
    if (d == NV) return fn(env, ctx);
    for (int64_t v = env->lo[d]; v <= env->hi[d]; v++) {
        env->val[d] = v;
        if (!for_all(env, fn, ctx, d + 1)) return false;
    }
    return true;
}

/* ---- random expressions --------------------------------------------------------------- */

static uint64_t rs = 0x243f6a8885a308d3ull; /* TEST_SEED overrides (exploration) */

static int64_t rnd(int64_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (int64_t)(rs % (uint64_t)n);
}

static IrExpr *var(Env *env, int i) { return ir_var_ref(&A, env->var[i]); }

/* Mostly affine index arithmetic, with divisions, min/max and selects. */
static IrExpr *gen(Env *env, int depth) {
    if (depth <= 0 || rnd(5) == 0) {
        if (rnd(3)) return var(env, (int)rnd(NV));
        return ir_i32(&A, rnd(21) - 6);
    }
    IrExpr *a = gen(env, depth - 1);
    switch (rnd(16)) {
    case 0: case 1: case 2: return ir_bin(&A, IR_ADD, a, gen(env, depth - 1));
    case 3: case 4: return ir_bin(&A, IR_SUB, a, gen(env, depth - 1));
    case 5: case 6: return ir_bin(&A, IR_MUL, a, ir_i32(&A, rnd(9) - 2));
    case 7: return ir_bin(&A, IR_MUL, a, gen(env, depth - 1));
    case 8: return ir_bin(&A, IR_FLOORDIV, a, ir_i32(&A, 1 + rnd(8)));
    case 9: return ir_bin(&A, IR_FLOORMOD, a, ir_i32(&A, 1 + rnd(8)));
    case 10: return ir_bin(&A, IR_DIV, a, ir_i32(&A, 1 + rnd(5)));
    case 11: return ir_bin(&A, rnd(2) ? IR_MIN : IR_MAX, a, gen(env, depth - 1));
    case 12: return ir_neg(&A, a);
    case 13: {
        static const IrBinOp cmp[] = {IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE};
        IrExpr *c = ir_bin(&A, cmp[rnd(6)], a, gen(env, depth - 1));
        return ir_select(&A, c, gen(env, depth - 1), gen(env, depth - 1));
    }
    case 14:
        if (rnd(2)) return ir_bin(&A, IR_BITAND, a, ir_i32(&A, (1 << rnd(4)) - 1));
        return ir_bin(&A, IR_SHL, a, ir_i32(&A, rnd(3)));
    default:
        /* division by a positive variable (var 3 ranges over [1, ..]) */
        return ir_bin(&A, rnd(2) ? IR_FLOORDIV : IR_FLOORMOD, a, var(env, 3));
    }
}

static void random_ranges(Env *env, IrArith *ar) {
    ar->ranges.n = 0;
    for (int i = 0; i < NV; i++) {
        env->lo[i] = i == 3 ? 1 + rnd(3) : rnd(9) - 4;
        env->hi[i] = env->lo[i] + rnd(i == 3 ? 4 : 7);
        if (i == 0 && rnd(10) == 0) { /* near the int32 limits: wrap-around must be handled */
            env->lo[i] = rnd(2) ? INT32_MAX - 6 : INT32_MIN;
            env->hi[i] = env->lo[i] + 6;
        }
        ir_arith_bind(ar, env->var[i], env->lo[i], env->hi[i]);
    }
}

/* ---- claims checked at every point ------------------------------------------------------ */

typedef struct Claim {
    const IrExpr *e;    /* the expression */
    IrInterval b;       /* claimed bounds */
    IrModFact m;        /* claimed residue */
    IrAffine f;         /* claimed affine form (n < 0: none) */
    bool has_form;      /* f is valid */
    const IrExpr *simp; /* claimed equal expression */
    int64_t div;        /* claimed divisor (0: none) */
    int bad;            /* violations found */
    int points;         /* points evaluated */
} Claim;

static bool check_point(Env *env, void *ctx) {
    Claim *c = ctx;
    eval_ok = true;
    int64_t v = eval(env, c->e);
    if (!eval_ok) return true;
    c->points++;
    bool bad = false;
    if (v < c->b.lo || v > c->b.hi) bad = true;
    if (c->m.m == 0 ? v != c->m.r : fmod_(v, c->m.m) != c->m.r) bad = true;
    if (c->div && fmod_(v, c->div) != 0) bad = true;
    if (c->has_form) {
        int64_t s = c->f.c;
        for (int i = 0; i < c->f.n; i++) s += c->f.t[i].coeff * eval(env, c->f.t[i].atom);
        if (eval_ok && s != v) bad = true;
    }
    if (c->simp) {
        int64_t w = eval(env, c->simp);
        if (eval_ok && w != v) bad = true;
    }
    if (bad) {
        c->bad++;
        return false;
    }
    return true;
}

static const char *text(const IrExpr *e) {
    TsBuf b = {0};
    ir_print_expr(&b, e);
    const char *s = ts_sprintf(&A, "%s", ts_buf_str(&b));
    ts_buf_free(&b);
    return s;
}

static void dump_env(const Env *env) {
    for (int i = 0; i < NV; i++)
        fprintf(stderr, "  %s in [%lld, %lld]\n", env->var[i]->name, (long long)env->lo[i],
                (long long)env->hi[i]);
}

/* ir_arith_multiple's claim: 1 every point a multiple of q, 0 none. */
typedef struct MulClaim {
    const IrExpr *e; /* the expression */
    int64_t q;       /* the divisor */
    int want;        /* the claim (1 or 0) */
    int bad;         /* points against it */
} MulClaim;

static bool mul_point(Env *env, void *ctx) {
    MulClaim *c = ctx;
    eval_ok = true;
    int64_t v = eval(env, c->e);
    if (eval_ok && (fmod_(v, c->q) == 0) != (c->want == 1)) {
        c->bad++;
        return false;
    }
    return true;
}

static void test_random_exprs(Env *env, IrArith *ar) {
    int trials = 4000, bad = 0, finite_b = 0, simplified = 0, mods = 0, pure = 0, multiples = 0;
    for (int t = 0; t < trials; t++) {
        random_ranges(env, ar);
        IrExpr *e = gen(env, 1 + (int)rnd(4));
        Claim c = {0};
        c.e = e;
        c.b = ir_arith_bound(ar, e);
        c.m = ir_arith_mod(ar, e);
        c.has_form = ir_arith_affine(ar, e, rnd(2), &c.f);
        IrExpr *s = ir_arith_simplify(ar, e);
        c.simp = s;
        int64_t d = ir_arith_divisor(ar, e);
        c.div = d > 1 ? d : 0;
        for_all(env, check_point, &c, 0);
        if (c.bad) {
            bad++;
            if (bad < 5) {
                fprintf(stderr, "wrong claim on %s (simplified %s): [%lld, %lld] mod (%lld, %lld) div %lld\n",
                        text(e), text(s), (long long)c.b.lo, (long long)c.b.hi, (long long)c.m.m,
                        (long long)c.m.r, (long long)c.div);
                dump_env(env);
            }
        }
        MulClaim mc = {e, 2 + rnd(7), 0, 0};
        mc.want = ir_arith_multiple(ar, e, mc.q);
        if (mc.want >= 0) {
            for_all(env, mul_point, &mc, 0);
            multiples++;
            if (mc.bad && ++bad < 5) fprintf(stderr, "wrong multiple-of-%lld claim %d on %s\n", (long long)mc.q, mc.want, text(e));
        }
        finite_b += c.b.lo > -1000 && c.b.hi < 1000;
        simplified += s != e;
        mods += c.m.m != 1;
        pure += c.has_form && c.f.affine;
    }
    CHECK_EQ_INT(0, bad);
    /* not vacuous: most bounds are finite, many expressions simplify */
    CHECK(finite_b > trials * 8 / 10);
    CHECK(simplified > trials / 10);
    CHECK(mods > trials / 5);
    CHECK(pure > trials / 10);
    CHECK(multiples > trials / 10);
    printf("random exprs: %d multiple-of claims; ", multiples);
    printf("random exprs: %d finite bounds, %d simplified, %d residues, %d affine of %d\n",
           finite_b, simplified, mods, pure, trials);
}

/* Comparisons: a proof must hold everywhere, a disproof nowhere. */
typedef struct CmpClaim {
    const IrExpr *c; /* the condition */
    int want;        /* 1: true everywhere, -1: false everywhere */
    int bad;         /* violations */
} CmpClaim;

static bool check_cmp(Env *env, void *ctx) {
    CmpClaim *c = ctx;
    eval_ok = true;
    int64_t v = eval(env, c->c);
    if (!eval_ok) return true;
    if ((c->want > 0 && !v) || (c->want < 0 && v)) {
        c->bad++;
        return false;
    }
    return true;
}

/* Is the condition constant over all points (1 true, -1 false, 0 mixed)? */
typedef struct Truth {
    const IrExpr *c; /* the condition */
    bool t, f;       /* seen true, seen false */
} Truth;

static bool truth_point(Env *env, void *ctx) {
    Truth *t = ctx;
    eval_ok = true;
    int64_t v = eval(env, t->c);
    if (eval_ok) {
        if (v) t->t = true;
        else t->f = true;
    }
    return true;
}

static void test_random_cmps(Env *env, IrArith *ar) {
    static const IrBinOp cmp[] = {IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE};
    int trials = 4000, bad = 0, decided = 0, constant = 0;
    for (int t = 0; t < trials; t++) {
        random_ranges(env, ar);
        IrExpr *a = gen(env, 1 + (int)rnd(3));
        /* b is often a plus a small change, so that atoms cancel */
        IrExpr *b = rnd(2) ? ir_bin(&A, IR_ADD, a, gen(env, (int)rnd(2))) : gen(env, 1 + (int)rnd(3));
        IrExpr *c = ir_bin(&A, cmp[rnd(6)], a, b);
        if (c->kind == IR_E_INT) continue;
        CmpClaim cl = {c, 0, 0};
        if (ir_arith_prove(ar, c)) cl.want = 1;
        else if (ir_arith_disprove(ar, c)) cl.want = -1;
        Truth tr = {c, false, false};
        for_all(env, truth_point, &tr, 0);
        if (tr.t != tr.f) constant++;
        if (!cl.want) continue;
        decided++;
        for_all(env, check_cmp, &cl, 0);
        if (cl.bad) {
            bad++;
            if (bad < 5) {
                fprintf(stderr, "wrong %s: %s\n", cl.want > 0 ? "proof" : "disproof", text(c));
                dump_env(env);
            }
        }
    }
    CHECK_EQ_INT(0, bad);
    /* it decides most of the conditions that are in fact constant */
    CHECK(decided > constant / 2);
    printf("random comparisons: %d decided, %d constant in fact\n", decided, constant);
}

/* Bounds of a difference: every point's a - b inside the claimed interval. */
typedef struct DiffClaim {
    const IrExpr *a, *b; /* the two sides */
    IrInterval r;        /* claimed bounds of a - b */
    int bad;             /* points outside */
} DiffClaim;

static bool diff_point(Env *env, void *ctx) {
    DiffClaim *c = ctx;
    eval_ok = true;
    int64_t x = eval(env, c->a), y = eval(env, c->b);
    if (eval_ok && (x - y < c->r.lo || x - y > c->r.hi)) {
        c->bad++;
        return false;
    }
    return true;
}

static void test_random_diffs(Env *env, IrArith *ar) {
    int trials = 3000, bad = 0, bounded = 0, tighter = 0;
    for (int t = 0; t < trials; t++) {
        random_ranges(env, ar);
        IrExpr *a = gen(env, 1 + (int)rnd(3));
        /* b often shares a's terms, so that they must cancel */
        IrExpr *b = rnd(3) ? ir_bin(&A, IR_ADD, a, gen(env, (int)rnd(2))) : gen(env, 1 + (int)rnd(3));
        if (rnd(2)) a = ir_bin(&A, IR_ADD, a, gen(env, (int)rnd(2)));
        DiffClaim c = {a, b, {0, 0}, 0};
        if (!ir_arith_diff_bound(ar, a, b, &c.r)) continue;
        for_all(env, diff_point, &c, 0);
        if (c.bad) {
            bad++;
            if (bad < 5) {
                fprintf(stderr, "wrong difference bounds [%lld, %lld] of %s - %s\n", (long long)c.r.lo,
                        (long long)c.r.hi, text(a), text(b));
                dump_env(env);
            }
        }
        if (c.r.lo != IR_ARITH_NEG_INF && c.r.hi != IR_ARITH_POS_INF) {
            bounded++;
            /* tighter than bounding the two sides apart */
            IrInterval ba = ir_arith_bound(ar, a), bb = ir_arith_bound(ar, b);
            if (c.r.hi - c.r.lo < (ba.hi - ba.lo) + (bb.hi - bb.lo)) tighter++;
        }
    }
    CHECK_EQ_INT(0, bad);
    CHECK(bounded > trials / 2);
    CHECK(tighter > trials / 10);
    printf("difference bounds: %d bounded, %d tighter than the sides apart, of %d\n", bounded, tighter, trials);
}

/* Regions: a disjointness claim means no point makes the boxes meet. */
typedef struct RegClaim {
    const IrRegion *a, *b; /* the regions */
    const IrVar *across;   /* NULL, or the var taking different values in b */
    Env *env;              /* for the across loop */
    int across_i;          /* index of `across` in env */
    bool met;              /* the boxes met at some point */
} RegClaim;

static bool boxes_meet(Env *env, const IrRegion *a, const IrRegion *b, int64_t v2, int vi) {
    int64_t sa[2], ea[2], sb[2], eb[2];
    for (int d = 0; d < a->ndim; d++) {
        sa[d] = eval(env, a->start[d]);
        ea[d] = eval(env, a->extent[d]);
    }
    int64_t save = vi >= 0 ? env->val[vi] : 0;
    if (vi >= 0) env->val[vi] = v2;
    for (int d = 0; d < b->ndim; d++) {
        sb[d] = eval(env, b->start[d]);
        eb[d] = eval(env, b->extent[d]);
    }
    if (vi >= 0) env->val[vi] = save;
    for (int d = 0; d < a->ndim; d++)
        if (ea[d] <= 0 || eb[d] <= 0 || sa[d] + ea[d] <= sb[d] || sb[d] + eb[d] <= sa[d]) return false;
    return true;
}

static bool reg_point(Env *env, void *ctx) {
    RegClaim *c = ctx;
    if (!c->across) {
        if (boxes_meet(env, c->a, c->b, 0, -1)) c->met = true;
    } else {
        int i = c->across_i;
        for (int64_t v2 = env->lo[i]; v2 <= env->hi[i]; v2++)
            if (v2 != env->val[i] && boxes_meet(env, c->a, c->b, v2, i)) c->met = true;
    }
    return !c->met;
}

static IrExpr *affine_start(Env *env) {
    IrExpr *e = ir_i32(&A, rnd(9) - 2);
    for (int i = 0; i < 3; i++)
        if (rnd(2)) e = ir_bin(&A, IR_ADD, e, ir_bin(&A, IR_MUL, var(env, i), ir_i32(&A, rnd(9) - 2)));
    return e;
}

static void test_random_regions(Env *env, IrArith *ar, IrBuffer *buf) {
    int trials = 3000, bad = 0, disjoint = 0, met = 0;
    for (int t = 0; t < trials; t++) {
        random_ranges(env, ar);
        IrRegion r[2];
        for (int k = 0; k < 2; k++) {
            r[k].buf = buf;
            r[k].ndim = 2;
            r[k].start = TS_NEWN(&A, IrExpr *, 2);
            r[k].extent = TS_NEWN(&A, IrExpr *, 2);
            for (int d = 0; d < 2; d++) {
                r[k].start[d] = affine_start(env);
                r[k].extent[d] = rnd(4) ? ir_i32(&A, 1 + rnd(6)) : ir_bin(&A, IR_ADD, var(env, 3), ir_i32(&A, rnd(3)));
            }
        }
        int ai = (int)rnd(3);
        RegClaim c = {&r[0], &r[1], t % 2 ? env->var[ai] : NULL, env, ai, false};
        bool may = c.across ? ir_arith_regions_may_overlap_across(ar, &r[0], &r[1], c.across)
                            : ir_arith_regions_may_overlap(ar, &r[0], &r[1]);
        for_all(env, reg_point, &c, 0);
        met += c.met;
        if (!may) {
            disjoint++;
            if (c.met) {
                bad++;
                if (bad < 4) fprintf(stderr, "regions claimed disjoint but meet (across %d)\n", !!c.across);
            }
        }
    }
    CHECK_EQ_INT(0, bad);
    CHECK(disjoint > (trials - met) / 3); /* proves a fair share of the disjoint pairs */
    printf("random regions: %d proven disjoint, %d in fact disjoint of %d\n", disjoint, trials - met, trials);
}

/* ---- symbolic bounds: a loop whose range depends on other vars ----------------------- */

typedef struct Dep {
    const IrExpr *min, *ext; /* the loop over var 2: [min, min + ext) */
    const IrExpr *guard;     /* only points where this is `guard_truth` (NULL: all) */
    bool guard_truth;        /* then branch (true) or else branch (false) */
    const IrExpr *c;         /* the condition */
    bool t, f;               /* seen true, seen false */
} Dep;

static void dep_points(Env *env, Dep *d, int i) {
    if (i == 2) {
        dep_points(env, d, 3);
        return;
    }
    if (i == NV) {
        eval_ok = true;
        int64_t mn = eval(env, d->min), ex = eval(env, d->ext);
        for (int64_t v = mn; v < mn + ex; v++) {
            env->val[2] = v;
            if (d->guard && (eval(env, d->guard) != 0) != d->guard_truth) continue;
            int64_t r = eval(env, d->c);
            if (!eval_ok) return;
            if (r) d->t = true;
            else d->f = true;
        }
        return;
    }
    for (int64_t v = env->lo[i]; v <= env->hi[i]; v++) {
        env->val[i] = v;
        dep_points(env, d, i + 1);
    }
}

static void test_random_symbolic(Env *env, IrArith *ar) {
    static const IrBinOp cmp[] = {IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE};
    int trials = 3000, bad = 0, decided = 0, constant = 0, need_sym = 0, need_fact = 0;
    IrExpr *sh[1] = {ir_i32(&A, 8)};
    IrBuffer *b = ir_buffer((IrKernel *)ar->k, "D", TS_INT32, IR_SCOPE_SHARED, 1, sh, (TsLoc){0});
    for (int t = 0; t < trials; t++) {
        random_ranges(env, ar);
        env->lo[0] = rnd(5) - 1; /* keep var 0 small: it feeds the loop's extent */
        env->hi[0] = env->lo[0] + rnd(5);
        ar->ranges.n = 0;
        for (int i = 0; i < NV; i++)
            if (i != 2) ir_arith_bind(ar, env->var[i], env->lo[i], env->hi[i]);
        /* for c in [min, min + ext): min and ext affine in a, b */
        IrExpr *mn = ir_bin(&A, IR_ADD, ir_bin(&A, IR_MUL, var(env, 0), ir_i32(&A, rnd(3))), ir_i32(&A, rnd(5) - 2));
        IrExpr *ex = ir_bin(&A, IR_ADD, ir_bin(&A, IR_ADD, var(env, rnd(2) ? 0 : 1), ir_i32(&A, rnd(4))),
                            ir_bin(&A, IR_MUL, var(env, 3), ir_i32(&A, rnd(2))));
        IrExpr *ix[1] = {ir_i32(&A, 0)};
        IrStmt *st = ir_store(&A, b, ix, 1, ir_i32(&A, 0));
        IrStmt *loop = ir_for(&A, env->var[2], mn, ex, IR_FOR_SERIAL, st);
        IrWalkFrame fl = {loop, NULL}, fs = {st, &fl}, fi = {NULL, &fl};
        IrExpr *guard = NULL;
        bool then = true;
        if (rnd(2)) { /* inside if (guard) or its else branch */
            static const IrBinOp gc[] = {IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE};
            guard = ir_bin(&A, gc[rnd(6)], rnd(2) ? var(env, 2) : gen(env, 1 + (int)rnd(2)), gen(env, 1 + (int)rnd(2)));
            if (rnd(3) == 0) guard = ir_bin(&A, IR_AND, guard, ir_bin(&A, IR_LT, gen(env, 1), gen(env, 2)));
            if (rnd(4) == 0) guard = ir_not(&A, guard);
            then = rnd(3) != 0;
            IrStmt *iff = ir_stmt(&A, IR_S_IF, (TsLoc){0});
            iff->if_.cond = guard;
            iff->if_.then = then ? st : ir_seq(&A);
            iff->if_.else_ = then ? NULL : st;
            loop->for_.body = iff;
            fi.s = iff;
            fs.up = &fi;
            if (guard->kind == IR_E_INT) guard = NULL, loop->for_.body = st, fs.up = &fl;
        }
        /* conditions comparing c with the bounds, plus random ones */
        IrExpr *c2 = var(env, 2), *lhs, *rhs;
        switch (rnd(5)) {
        case 0: lhs = c2; rhs = ir_bin(&A, IR_ADD, mn, ex); break;
        case 1: lhs = ir_bin(&A, IR_ADD, c2, ir_i32(&A, rnd(3) - 1)); rhs = ir_bin(&A, IR_ADD, mn, ex); break;
        case 2: lhs = ir_bin(&A, IR_SUB, c2, mn); rhs = gen(env, 1 + (int)rnd(2)); break;
        case 3:
            if (guard && guard->kind == IR_E_BIN && guard->bin.op != IR_AND) { /* the guard's own sides */
                lhs = ir_bin(&A, IR_ADD, guard->bin.a, ir_i32(&A, rnd(3) - 1));
                rhs = guard->bin.b;
                break;
            }
            /* fall through */
        default: lhs = gen(env, 1 + (int)rnd(3)); rhs = gen(env, 1 + (int)rnd(3)); break;
        }
        IrExpr *c = ir_bin(&A, cmp[rnd(6)], lhs, rhs);
        if (c->kind == IR_E_INT) continue;
        ar->frame = &fs;
        int want = ir_arith_prove(ar, c) ? 1 : ir_arith_disprove(ar, c) ? -1 : 0;
        IrWalkFrame fno = {st, &fl}; /* the same without the if */
        ar->frame = &fno;
        int want_noif = ir_arith_prove(ar, c) ? 1 : ir_arith_disprove(ar, c) ? -1 : 0;
        ar->frame = NULL;
        int plain = ir_arith_prove(ar, c) || ir_arith_disprove(ar, c); /* c unbounded: int32 */
        Dep d = {mn, ex, guard, then, c, false, false};
        dep_points(env, &d, 0);
        if (!d.t && !d.f) continue; /* the loop never runs */
        if (d.t != d.f) constant++;
        if (!want) continue;
        decided++;
        need_sym += !plain;
        need_fact += !want_noif;
        if ((want > 0 && d.f) || (want < 0 && d.t)) {
            bad++;
            if (bad < 5) {
                fprintf(stderr, "wrong %s with c in [%s, %s + %s): %s\n", want > 0 ? "proof" : "disproof",
                        text(mn), text(mn), text(ex), text(c));
                dump_env(env);
            }
        }
    }
    CHECK_EQ_INT(0, bad);
    CHECK(decided > constant / 2);
    CHECK(need_sym > trials / 10);
    CHECK(need_fact > trials / 50);
    printf("symbolic loop bounds: %d decided (%d needing the loop, %d the if), %d constant in fact\n",
           decided, need_sym, need_fact, constant);
}

/* Guard pruning (ir_arith_prune_cond): a chain of conjuncts, each a random
 * comparison; the pruned guard must take the same truth value as the
 * original at every point, and conjuncts that are true everywhere must be
 * dropped often enough to show the pruning is not vacuous. */
typedef struct PruneClaim {
    const IrExpr *c, *p; /* the guard, the pruned one */
    int bad;             /* points where they differ */
} PruneClaim;

static bool prune_point(Env *env, void *ctx) {
    PruneClaim *c = ctx;
    eval_ok = true;
    int64_t x = eval(env, c->c) != 0, y = eval(env, c->p) != 0;
    if (eval_ok && x != y) {
        c->bad++;
        return false;
    }
    return true;
}

static int conjuncts(const IrExpr *c) {
    if (c->kind == IR_E_BIN && c->bin.op == IR_AND) return conjuncts(c->bin.a) + conjuncts(c->bin.b);
    return 1;
}

static void test_random_prune(Env *env, IrArith *ar) {
    static const IrBinOp cmp[] = {IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE};
    int trials = 3000, bad = 0, partial = 0, whole = 0, same = 0;
    for (int t = 0; t < trials; t++) {
        random_ranges(env, ar);
        IrExpr *c = NULL;
        int n = 2 + (int)rnd(3);
        for (int i = 0; i < n; i++) {
            IrExpr *a = gen(env, 1 + (int)rnd(2));
            IrExpr *b = rnd(2) ? ir_bin(&A, IR_ADD, a, gen(env, (int)rnd(2))) : gen(env, 1 + (int)rnd(2));
            IrExpr *q = ir_bin(&A, cmp[rnd(6)], a, b);
            if (q->kind == IR_E_INT) q = ir_bin(&A, IR_LT, var(env, (int)rnd(NV)), ir_i32(&A, rnd(9) - 4));
            c = c ? ir_bin(&A, IR_AND, c, q) : q;
        }
        if (c->kind == IR_E_INT) continue;
        IrExpr *p = ir_arith_prune_cond(ar, c);
        PruneClaim cl = {c, p, 0};
        for_all(env, prune_point, &cl, 0);
        if (cl.bad) {
            bad++;
            if (bad < 5) {
                fprintf(stderr, "wrong pruning: %s -> %s\n", text(c), text(p));
                dump_env(env);
            }
        }
        if (p == c) same++;
        else if (p->kind == IR_E_INT) whole++;
        else if (conjuncts(p) < conjuncts(c)) partial++;
    }
    CHECK_EQ_INT(0, bad);
    CHECK(partial > trials / 20);
    CHECK(whole > trials / 50);
    CHECK(same > trials / 100);
    printf("guard pruning: %d partly pruned, %d decided, %d unchanged of %d\n", partial, whole, same, trials);
}

/* ---- fixed cases ------------------------------------------------------------------------- */

static void test_fixed(void) {
    IrKernel *k = ir_kernel_new(&A, "arith");
    k->threads[0] = 128;
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP), *j = ir_var(k, "j", TS_INT32, IR_VAR_LOOP);
    IrVar *x = ir_var(k, "x", TS_INT32, IR_VAR_SCALAR), *n = ir_var(k, "n", TS_INT32, IR_VAR_SHAPE);
    IrVar *tid = ir_kernel_tid(k);
    IrVar *bx = ir_var(k, "bx", TS_INT32, IR_VAR_BLOCK_IDX);
    k->block_idx[0] = bx;
    k->grid[0] = ir_i32(&A, 64);
    IrArith ar;
    ir_arith_init(&ar, &A, k);
    IrExpr *I = ir_var_ref(&A, i), *J = ir_var_ref(&A, j), *X = ir_var_ref(&A, x);
    IrExpr *T = ir_var_ref(&A, tid), *B = ir_var_ref(&A, bx), *N = ir_var_ref(&A, n);
#define C(v) ir_i32(&A, v)
#define BIN(op, a, b) ir_bin(&A, IR_##op, a, b)
    /* kernel ranges */
    IrInterval r = ir_arith_bound(&ar, T);
    CHECK_EQ_INT(0, r.lo);
    CHECK_EQ_INT(127, r.hi);
    r = ir_arith_bound(&ar, BIN(ADD, BIN(MUL, B, C(128)), T));
    CHECK_EQ_INT(0, r.lo);
    CHECK_EQ_INT(64 * 128 - 1, r.hi);
    CHECK_EQ_INT(0, ir_arith_bound(&ar, N).lo);
    /* symbolic: by ranges over the grid's run-time extent n */
    IrVar *by = ir_var(k, "by", TS_INT32, IR_VAR_BLOCK_IDX);
    by->axis = 1;
    k->block_idx[1] = by;
    k->grid[1] = N;
    IrExpr *BY = ir_var_ref(&A, by);
    CHECK(ir_arith_prove(&ar, BIN(LT, BY, N)));
    CHECK(ir_arith_prove(&ar, BIN(LE, BIN(ADD, BY, C(1)), N)));
    CHECK(!ir_arith_prove(&ar, BIN(LT, BIN(ADD, BY, C(1)), N)));
    CHECK(ir_arith_disprove(&ar, BIN(GE, BY, N)));
    CHECK_EQ_STR("True", text(ir_arith_simplify(&ar, BIN(LT, BY, N))));
    /* unbounded scalar: x < x + 1 is not provable (x may be INT32_MAX) */
    CHECK(!ir_arith_prove(&ar, BIN(LT, X, BIN(ADD, X, C(1)))));
    int mark = ir_arith_mark(&ar);
    ir_arith_bind(&ar, x, 0, 100);
    CHECK(ir_arith_prove(&ar, BIN(LT, X, BIN(ADD, X, C(1)))));
    ir_arith_pop(&ar, mark);
    CHECK(!ir_arith_prove(&ar, BIN(LT, X, BIN(ADD, X, C(1)))));
    /* i in [0, 31], j in [0, 3] */
    ir_arith_bind(&ar, i, 0, 31);
    ir_arith_bind(&ar, j, 0, 3);
    CHECK_EQ_STR("0", text(ir_arith_simplify(&ar, BIN(FLOORDIV, I, C(32)))));
    CHECK_EQ_STR("i", text(ir_arith_simplify(&ar, BIN(FLOORMOD, I, C(32)))));
    IrExpr *ij = BIN(ADD, BIN(MUL, I, C(4)), J);
    CHECK_EQ_STR("i", text(ir_arith_simplify(&ar, BIN(FLOORDIV, ij, C(4)))));
    CHECK_EQ_STR("j", text(ir_arith_simplify(&ar, BIN(FLOORMOD, ij, C(4)))));
    CHECK_EQ_STR("i", text(ir_arith_simplify(&ar, BIN(DIV, ij, C(4)))));
    CHECK_EQ_STR("i + 1", text(ir_arith_simplify(&ar, BIN(FLOORDIV, BIN(ADD, ij, C(4)), C(4)))));
    CHECK_EQ_STR("(i * 4 + j + 4) // 2", text(ir_arith_simplify(&ar, BIN(FLOORDIV, BIN(ADD, ij, C(4)), C(2)))));
    CHECK_EQ_STR("j % 2", text(ir_arith_simplify(&ar, BIN(FLOORMOD, BIN(ADD, BIN(MUL, I, C(64)), J), C(2)))));
    CHECK_EQ_STR("True", text(ir_arith_simplify(&ar, BIN(LT, ij, C(128)))));
    CHECK_EQ_STR("False", text(ir_arith_simplify(&ar, BIN(GE, ij, C(128)))));
    CHECK_EQ_STR("i * 4 + j < n", text(ir_arith_simplify(&ar, BIN(LT, ij, N))));
    /* interval arithmetic on bounds: exact, saturating past int64 */
    {
        IrInterval q = ir_interval_add((IrInterval){1, 2}, (IrInterval){3, 4});
        CHECK(q.lo == 4 && q.hi == 6);
        q = ir_interval_add((IrInterval){IR_ARITH_NEG_INF, 5}, (IrInterval){-7, 1});
        CHECK(q.lo == IR_ARITH_NEG_INF && q.hi == 6);
        q = ir_interval_add((IrInterval){INT64_MAX - 9, INT64_MAX - 1}, (IrInterval){5, 5});
        CHECK(q.lo == INT64_MAX - 4 && q.hi == IR_ARITH_POS_INF);
        q = ir_interval_mul((IrInterval){-3, 2}, (IrInterval){4, 5});
        CHECK(q.lo == -15 && q.hi == 10);
        q = ir_interval_mul((IrInterval){-3, -2}, (IrInterval){-5, 4});
        CHECK(q.lo == -12 && q.hi == 15);
        q = ir_interval_mul((IrInterval){0, 0}, (IrInterval){IR_ARITH_NEG_INF, IR_ARITH_POS_INF});
        CHECK(q.lo == 0 && q.hi == 0);
        int64_t big = (int64_t)1 << 40;
        q = ir_interval_mul((IrInterval){-big, big}, (IrInterval){big, big});
        CHECK(q.lo == IR_ARITH_NEG_INF && q.hi == IR_ARITH_POS_INF);
        q = ir_interval_mul((IrInterval){(int64_t)1 << 31, (int64_t)1 << 31}, (IrInterval){-((int64_t)1 << 31), 3});
        CHECK(q.lo == -((int64_t)1 << 62) && q.hi == 3 * ((int64_t)1 << 31));
        q = ir_interval_mul((IrInterval){-2, 3}, (IrInterval){IR_ARITH_NEG_INF, 1});
        CHECK(q.lo == IR_ARITH_NEG_INF && q.hi == IR_ARITH_POS_INF);
    }
    /* bounds of a difference: shared terms cancel */
    {
        IrInterval q;
        IrExpr *big = BIN(MUL, B, C(128)); /* bx in [0, 63]: up to 8064 */
        CHECK(ir_arith_diff_bound(&ar, BIN(ADD, BIN(ADD, big, BIN(MUL, I, C(4))), J), BIN(ADD, big, BIN(MUL, I, C(4))), &q));
        CHECK(q.lo == 0 && q.hi == 3);
        CHECK(ir_arith_diff_bound(&ar, BIN(MUL, I, C(3)), BIN(MUL, I, C(2)), &q)); /* i, not 3i - 2i apart */
        CHECK(q.lo == 0 && q.hi == 31);
        CHECK(ir_arith_diff_bound(&ar, BY, N, &q)); /* by <= n - 1 (grid y = n) */
        CHECK(q.hi == -1);
        CHECK(!ir_arith_diff_bound(&ar, BIN(ADD, X, C(1)), X, &q)); /* x + 1 may wrap */
    }
    /* guard pruning: proven conjuncts go, the rest stay in order; decided
     * guards become constants; nothing dropped gives the guard itself */
    {
        IrExpr *g1 = BIN(LT, ij, C(128)), *g2 = BIN(LT, ij, N), *g3 = BIN(GE, I, C(0));
        IrExpr *g4 = BIN(LT, X, N), *g = BIN(AND, BIN(AND, g2, g1), BIN(AND, g3, g4));
        CHECK_EQ_STR("i * 4 + j < n and x < n", text(ir_arith_prune_cond(&ar, g)));
        CHECK_EQ_STR("True", text(ir_arith_prune_cond(&ar, BIN(AND, g1, g3))));
        CHECK_EQ_STR("False", text(ir_arith_prune_cond(&ar, BIN(AND, g2, BIN(GE, ij, C(128))))));
        IrExpr *keep = BIN(AND, g2, g4);
        CHECK(ir_arith_prune_cond(&ar, keep) == keep);
        CHECK(ir_arith_prune_cond(&ar, g2) == g2);
        /* an `or` is decided as a whole or kept whole */
        IrExpr *o = BIN(OR, g2, g4);
        CHECK(ir_arith_prune_cond(&ar, o) == o);
        CHECK_EQ_STR("True", text(ir_arith_prune_cond(&ar, BIN(OR, g2, g1))));
        /* i * 4 + j < 124 is not proven (i = 31 gives up to 127) and stays */
        IrExpr *near = BIN(LT, ij, C(124));
        CHECK(ir_arith_prune_cond(&ar, BIN(AND, near, g1)) == near);
    }
    CHECK_EQ_STR("j", text(ir_arith_simplify(&ar, BIN(MIN, J, C(8)))));
    CHECK_EQ_STR("4", text(ir_arith_simplify(&ar, BIN(SUB, BIN(ADD, I, C(4)), I))));
    CHECK_EQ_STR("i", text(ir_arith_simplify(&ar, BIN(SUB, BIN(ADD, I, J), J))));
    /* (i // 4) * 4 + i % 4 == i, only with the remainder expanded */
    IrExpr *qr = BIN(ADD, BIN(MUL, BIN(FLOORDIV, I, C(4)), C(4)), BIN(FLOORMOD, I, C(4)));
    CHECK(ir_arith_prove_eq(&ar, qr, I));
    /* divisibility */
    CHECK_EQ_INT(8, ir_arith_divisor(&ar, BIN(ADD, BIN(MUL, I, C(8)), C(16))));
    CHECK_EQ_INT(2, ir_arith_divisor(&ar, BIN(ADD, BIN(MUL, I, C(6)), BIN(MUL, J, C(4)))));
    CHECK(ir_arith_divisible(&ar, BIN(MUL, BIN(ADD, I, C(1)), C(16)), 8));
    CHECK(!ir_arith_divisible(&ar, BIN(ADD, BIN(MUL, I, C(16)), C(4)), 8));
    CHECK(ir_arith_divisible(&ar, BIN(MUL, BIN(FLOORDIV, BIN(MUL, I, C(32)), C(4)), C(1)), 8));
    CHECK_EQ_INT(1, ir_arith_multiple(&ar, BIN(ADD, BIN(MUL, I, C(16)), C(8)), 8));
    CHECK_EQ_INT(0, ir_arith_multiple(&ar, BIN(ADD, BIN(MUL, I, C(16)), C(4)), 8)); /* 4 mod 8, always */
    CHECK_EQ_INT(-1, ir_arith_multiple(&ar, BIN(ADD, BIN(MUL, I, C(4)), C(8)), 8)); /* i = 0 yes, i = 1 no */
    CHECK_EQ_INT(0, ir_arith_multiple(&ar, C(-3), 4));
    CHECK_EQ_INT(1, ir_arith_multiple(&ar, C(-8), 4));
    CHECK_EQ_INT(1, ir_arith_multiple(&ar, X, 1));
    CHECK_EQ_INT(-1, ir_arith_multiple(&ar, X, 2));
    IrModFact mf = ir_arith_mod(&ar, BIN(ADD, BIN(MUL, I, C(8)), C(3)));
    CHECK_EQ_INT(8, mf.m);
    CHECK_EQ_INT(3, mf.r);
    CHECK_EQ_STR("3", text(ir_arith_simplify(&ar, BIN(FLOORMOD, BIN(ADD, BIN(MUL, X, C(8)), C(3)), C(4)))));
    /* affine forms */
    IrAffine f;
    CHECK(ir_arith_affine(&ar, BIN(SUB, BIN(MUL, BIN(ADD, I, C(2)), C(3)), J), false, &f));
    CHECK(f.affine);
    CHECK_EQ_INT(3, ir_affine_coeff(&f, i));
    CHECK_EQ_INT(-1, ir_affine_coeff(&f, j));
    CHECK_EQ_INT(6, f.c);
    CHECK(ir_arith_affine(&ar, BIN(ADD, BIN(MUL, I, J), C(1)), false, &f));
    CHECK(!f.affine);
    CHECK_EQ_INT(1, f.n);
    /* regions: consecutive tiles are disjoint, overlapping ones are not */
    IrExpr *sh[1] = {C(1024)};
    IrBuffer *buf = ir_buffer(k, "S", TS_FLOAT32, IR_SCOPE_SHARED, 1, sh, (TsLoc){0});
    IrBuffer *other = ir_buffer(k, "R", TS_FLOAT32, IR_SCOPE_SHARED, 1, sh, (TsLoc){0});
    IrExpr *s0[1] = {BIN(MUL, I, C(32))}, *s1[1] = {BIN(ADD, BIN(MUL, I, C(32)), C(32))};
    IrExpr *s2[1] = {BIN(ADD, BIN(MUL, I, C(32)), C(16))}, *e32[1] = {C(32)};
    IrRegion ra = {buf, 1, s0, e32}, rb = {buf, 1, s1, e32}, rc = {buf, 1, s2, e32}, rd = {other, 1, s0, e32};
    CHECK(!ir_arith_regions_may_overlap(&ar, &ra, &rb));
    CHECK(ir_arith_regions_may_overlap(&ar, &ra, &rc));
    CHECK(!ir_arith_regions_may_overlap(&ar, &ra, &rd));
    /* across iterations of i: tile i and tile i' != i never meet; i + 16 and i' do */
    CHECK(!ir_arith_regions_may_overlap_across(&ar, &ra, &ra, i));
    CHECK(ir_arith_regions_may_overlap_across(&ar, &ra, &rb, i));
    /* across threads: S[tid] is private to each thread, S[tid // 2] is not */
    IrExpr *st[1] = {T}, *sh2[1] = {BIN(FLOORDIV, T, C(2))}, *e1[1] = {C(1)};
    IrRegion pt = {buf, 1, st, e1}, ph = {buf, 1, sh2, e1};
    CHECK(!ir_arith_regions_may_overlap_across(&ar, &pt, &pt, tid));
    CHECK(ir_arith_regions_may_overlap_across(&ar, &ph, &ph, tid));
    CHECK(ir_arith_regions_may_overlap(&ar, &pt, &pt));
#undef C
#undef BIN
}

/* Ranges found through a walker's frames: loop vars and lets. */
typedef struct FrameT {
    IrArith *ar;       /* the analysis */
    const IrVar *i, *l; /* loop var, let var */
    IrInterval ri, rl;  /* what was found at the store */
    int stores;         /* stores seen */
} FrameT;

static bool frame_pre(IrVisitor *v, const IrStmt *s) {
    FrameT *t = v->ctx;
    if (s->kind == IR_S_STORE) {
        t->ar->frame = v->frame;
        t->ri = ir_arith_var_range(t->ar, t->i);
        t->rl = ir_arith_var_range(t->ar, t->l);
        t->ar->frame = NULL;
        t->stores++;
    }
    return true;
}

static void test_frames(void) {
    IrKernel *k = ir_kernel_new(&A, "frames");
    IrVar *i = ir_var(k, "i", TS_INT32, IR_VAR_LOOP), *l = ir_var(k, "l", TS_INT32, IR_VAR_LET);
    IrExpr *sh[1] = {ir_i32(&A, 64)};
    IrBuffer *b = ir_buffer(k, "S", TS_INT32, IR_SCOPE_SHARED, 1, sh, (TsLoc){0});
    IrStmt *body = ir_seq(&A);
    IrStmt *let = ir_stmt(&A, IR_S_LET, (TsLoc){0});
    let->let.var = l;
    let->let.value = ir_bin(&A, IR_MUL, ir_var_ref(&A, i), ir_i32(&A, 2));
    ir_seq_push(&A, body, let);
    IrExpr *ix[1] = {ir_var_ref(&A, l)};
    ir_seq_push(&A, body, ir_store(&A, b, ix, 1, ir_var_ref(&A, i)));
    IrStmt *loop = ir_for(&A, i, ir_i32(&A, 3), ir_i32(&A, 10), IR_FOR_THREAD, body);
    IrArith ar;
    ir_arith_init(&ar, &A, k);
    FrameT t = {&ar, i, l, {0, 0}, {0, 0}, 0};
    IrVisitor v = {.ctx = &t, .pre_stmt = frame_pre};
    ir_visit_stmt(&v, loop);
    CHECK_EQ_INT(1, t.stores);
    CHECK_EQ_INT(3, t.ri.lo);
    CHECK_EQ_INT(12, t.ri.hi);
    CHECK_EQ_INT(6, t.rl.lo);
    CHECK_EQ_INT(24, t.rl.hi);
    /* outside the loop: i is just an int32 */
    CHECK(ir_arith_var_range(&ar, i).hi == INT32_MAX);

    /* if conditions are facts inside their branches, unless they load */
    IrExpr *z[1] = {ir_i32(&A, 0)};
    IrExpr *ld = ir_load(&A, b, z, 1), *I = ir_var_ref(&A, i);
    IrVar *n = ir_var(k, "n", TS_INT32, IR_VAR_SCALAR);
    IrExpr *N = ir_var_ref(&A, n);
    IrExpr *g1 = ir_bin(&A, IR_LT, ir_bin(&A, IR_MUL, I, ir_i32(&A, 4)), N);
    IrExpr *g2 = ir_bin(&A, IR_LT, ld, ir_i32(&A, 3));
    IrStmt *st = ir_store(&A, b, z, 1, ir_i32(&A, 7));
    IrStmt *if1 = ir_stmt(&A, IR_S_IF, (TsLoc){0});
    if1->if_.cond = ir_bin(&A, IR_AND, g1, g2);
    if1->if_.then = ir_seq(&A);
    if1->if_.else_ = st;
    IrStmt *if0 = ir_stmt(&A, IR_S_IF, (TsLoc){0});
    if0->if_.cond = g1;
    if0->if_.then = st;
    IrWalkFrame f0 = {if0, NULL}, fin0 = {st, &f0}, f1 = {if1, NULL}, fin1 = {st, &f1};
    ir_arith_bind(&ar, i, 0, 100);
    ar.frame = &fin0;
    CHECK(ir_arith_prove(&ar, g1));
    CHECK(ir_arith_prove(&ar, ir_bin(&A, IR_LE, ir_bin(&A, IR_ADD, ir_bin(&A, IR_MUL, I, ir_i32(&A, 4)), ir_i32(&A, 1)), N)));
    CHECK(!ir_arith_prove(&ar, ir_bin(&A, IR_LT, ir_bin(&A, IR_MUL, I, ir_i32(&A, 5)), N)));
    ar.frame = &fin1; /* else of (g1 and g2): nothing known */
    CHECK(!ir_arith_prove(&ar, g1) && !ir_arith_disprove(&ar, g1));
    if1->if_.cond = ir_bin(&A, IR_OR, g1, g2); /* else of (g1 or g2): not g1 */
    CHECK(ir_arith_disprove(&ar, g1));
    if1->if_.cond = g2; /* a load may change inside the branch: no fact */
    CHECK(!ir_arith_prove(&ar, ir_bin(&A, IR_GE, ld, ir_i32(&A, 3))));
    ar.frame = NULL;
}

int main(void) {
    ts_arena_init(&A);
    if (getenv("TEST_SEED")) rs = strtoull(getenv("TEST_SEED"), NULL, 0) | 1;
    IrKernel *k = ir_kernel_new(&A, "rand");
    Env env = {0};
    const char *names[NV] = {"a", "b", "c", "m"};
    for (int i = 0; i < NV; i++) env.var[i] = ir_var(k, names[i], TS_INT32, IR_VAR_LOOP);
    IrArith ar;
    ir_arith_init(&ar, &A, k);
    test_fixed();
    test_frames();
    test_random_exprs(&env, &ar);
    test_random_cmps(&env, &ar);
    test_random_symbolic(&env, &ar);
    test_random_prune(&env, &ar);
    test_random_diffs(&env, &ar);
    IrExpr *sh[2] = {ir_i32(&A, 64), ir_i32(&A, 64)};
    test_random_regions(&env, &ar, ir_buffer(k, "S", TS_FLOAT32, IR_SCOPE_SHARED, 2, sh, (TsLoc){0}));
    ts_arena_free(&A);
    return test_done();
}
