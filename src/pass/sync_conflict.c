/*
 * sync_conflict.c — may two memory accesses touch one element from two
 * different threads?  The arithmetic behind insert_sync's barriers (the
 * walk and the placement stay in insert_sync.c; its essay describes the
 * accesses: self-contained index expressions, a fresh variable for the
 * thread and for each thread-range loop variable and value read from
 * memory).
 *
 * Two accesses conflict when at least one writes (two atomics never do)
 * and they may touch one element from two different threads.  The
 * arithmetic (src/ir/arith.h) answers with affine forms: for each
 * dimension, and for the whole row-major offset, the difference of the
 * two index expressions is put in affine form (floormod expanded, so a
 * cyclic partition's (L // W) * W + L % W cancels to L); its constant
 * residue modulo the gcd of the other coefficients, and its interval,
 * show either that the elements never meet (different stages of a
 * multi-buffered tile, disjoint tiles) or that they meet only when the
 * two thread variables are equal (a thread reading back its own writes).
 * The second question is answered by enumerating each side's thread terms
 * for every thread of its range against the exact values of the rest,
 * narrowing a bit set of thread pairs dimension by dimension (may_meet);
 * matching values are found through hash tables (KeyIndex) and per-value
 * groups rather than a search per candidate, as FlashAttention's epilogue
 * asks tens of thousands of lookups.  Anything not proven is a conflict.
 *
 * Each question is answered once per pass: it is keyed by the two accesses
 * up to a renaming of their own fresh variables ("Canonical keys" below)
 * and the answer kept in an open-addressing table (SyncMemo).  The same
 * key of one access tells the walk that a set already holds an equal
 * access (sync_acc_equal).
 *
 * Why a file of its own: this is most of the pass's code and all of its
 * cost, it needs none of the walk's state (substitutions, loop and branch
 * contexts, the statements being rebuilt), and the walk needs only the
 * answer.  SyncConflict carries exactly what the answers depend on.  Fresh
 * variables are made here too, since their ranges are part of every key.
 */
#include "pass/sync_conflict.h"

#include <stdlib.h>
#include <string.h>

enum { MAXT = SYNC_MAXT, ENVN = 8, MAXENUM = 1 << 14 };

void sync_conflict_init(SyncConflict *C, TsArena *a, IrArith *ar, const IrKernel *k, int64_t nt) {
    memset(C, 0, sizeof *C);
    C->a = a;
    C->ar = ar;
    C->k = k;
    C->nt = nt;
}

/* A fresh variable carries its range with it (bound in the analysis only
 * while a conflict is decided, so that the analysis's list of ranges stays
 * short however many accesses are recorded). */
typedef struct Fresh {
    IrVar v;      /* the variable (first: a Fresh is an IrVar) */
    int64_t lo;   /* its range */
    int64_t hi;
} Fresh;

enum { FRESH_ID = -7 }; /* IrVar.id of a Fresh */

IrVar *sync_fresh_new(TsArena *a, const char *name, TsDType dt, int64_t lo, int64_t hi) {
    Fresh *f = TS_NEW(a, Fresh);
    f->v.name = name;
    f->v.id = FRESH_ID;
    f->v.dt = dt;
    f->v.kind = IR_VAR_LOOP;
    f->lo = lo;
    f->hi = hi;
    return &f->v;
}

IrInterval sync_fresh_range(const IrVar *v) {
    const Fresh *f = (const Fresh *)v;
    return (IrInterval){f->lo, f->hi};
}

/* Bind the fresh variables of an access (until the caller pops). */
static void bind_fresh(SyncConflict *C, const SyncAcc *x) {
    for (int i = 0; i < x->fv.n; i++) {
        IrInterval r = sync_fresh_range(x->fv.v[i]);
        ir_arith_bind(C->ar, x->fv.v[i], r.lo, r.hi);
    }
}

/* ---- the arithmetic of conflicts ----------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Is some value c + g*n (any integer n; g == 0: c itself) in [lo, hi]? */
static bool hits(int64_t c, int64_t g, int64_t lo, int64_t hi) {
    if (lo > hi) return false;
    if (g == 0) return lo <= c && c <= hi;
    int64_t r = (c - lo) % g;
    if (r < 0) r += g;
    return lo + r <= hi;
}

static bool atom_uses(const IrExpr *atom, const IrVar *v) { return v && ir_expr_uses_var(atom, v); }

/* Values of a few variables. */
typedef struct Env {
    const IrVar *v[ENVN]; /* the variables */
    int64_t lo[ENVN];     /* their ranges */
    int64_t hi[ENVN];
    int64_t x[ENVN];      /* their values now */
    int n;                /* how many */
    bool bits;            /* bitwise operators and shifts evaluated too (sync_exclusive) */
} Env;

static bool env_add(Env *en, SyncConflict *C, const IrVar *v) {
    for (int i = 0; i < en->n; i++)
        if (en->v[i] == v) return true;
    if (en->n == ENVN) return false;
    IrInterval r = ir_arith_var_range(C->ar, v);
    if (r.lo == IR_ARITH_NEG_INF || r.hi == IR_ARITH_POS_INF || r.hi < r.lo || r.hi - r.lo > MAXT) return false;
    en->v[en->n] = v;
    en->lo[en->n] = r.lo;
    en->hi[en->n] = r.hi;
    en->n++;
    return true;
}

typedef struct VarsCtx {
    Env *en;  /* where the variables go */
    SyncConflict *C;  /* for their ranges */
    bool ok;  /* all fit */
} VarsCtx;

static bool add_var_node(const IrExpr *e, void *ctx) {
    VarsCtx *c = ctx;
    if (e->kind == IR_E_VAR && !env_add(c->en, c->C, e->var)) c->ok = false;
    return false;
}

/* e at the values of env (an integer expression of env's variables); false if it is not. */
static bool eval_at(const IrExpr *e, const Env *en, int64_t *out) {
    int64_t a, b;
    switch (e->kind) {
    case IR_E_INT: *out = e->ival; return true;
    case IR_E_VAR:
        for (int i = 0; i < en->n; i++)
            if (en->v[i] == e->var) {
                *out = en->x[i];
                return true;
            }
        return false;
    case IR_E_CAST:
        if (e->dt == TS_BOOL) {
            if (!eval_at(e->un.a, en, &a)) return false;
            *out = a != 0;
            return true;
        }
        if (!ts_dtype_is_int(e->dt) || !(ts_dtype_is_int(e->un.a->dt) || e->un.a->dt == TS_BOOL)) return false;
        return eval_at(e->un.a, en, out);
    case IR_E_BIN:
        if (!eval_at(e->bin.a, en, &a) || !eval_at(e->bin.b, en, &b)) return false;
        if (a < -((int64_t)1 << 40) || a > ((int64_t)1 << 40) || b < -((int64_t)1 << 40) || b > ((int64_t)1 << 40))
            return false;
        switch (e->bin.op) {
        case IR_ADD: *out = a + b; return true;
        case IR_SUB: *out = a - b; return true;
        case IR_MUL:
            if ((a > 0 ? a : -a) > ((int64_t)1 << 20) && (b > 0 ? b : -b) > ((int64_t)1 << 20)) return false;
            *out = a * b;
            return true;
        case IR_FLOORDIV:
        case IR_FLOORMOD: {
            if (b == 0) return false;
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) {
                q--;
                r += b;
            }
            *out = e->bin.op == IR_FLOORDIV ? q : r;
            return true;
        }
        case IR_MIN: *out = a < b ? a : b; return true;
        case IR_MAX: *out = a > b ? a : b; return true;
        case IR_EQ: *out = a == b; return true;
        case IR_NE: *out = a != b; return true;
        case IR_LT: *out = a < b; return true;
        case IR_LE: *out = a <= b; return true;
        case IR_GT: *out = a > b; return true;
        case IR_GE: *out = a >= b; return true;
        case IR_AND: *out = a && b; return true;
        case IR_OR: *out = a || b; return true;
        default: break;
        }
        if (!en->bits) return false;
        switch (e->bin.op) {
        case IR_BITAND: *out = a & b; return true;
        case IR_BITOR: *out = a | b; return true;
        case IR_BITXOR: *out = a ^ b; return true;
        case IR_SHL:
            if (a < 0 || b < 0 || b > 40) return false;
            *out = a << b;
            return true;
        case IR_SHR:
            if (a < 0 || b < 0) return false;
            *out = b > 62 ? 0 : a >> b;
            return true;
        default: return false;
        }
    case IR_E_NOT:
        if (e->dt != TS_BOOL || !eval_at(e->un.a, en, &a)) return false;
        *out = !a;
        return true;
    default: return false;
    }
}

bool sync_eval_at(const IrExpr *e, const IrVar *v, int64_t x, int64_t *out) {
    Env en = {{0}, {0}, {0}, {0}, 0, false};
    en.v[0] = v;
    en.x[0] = x;
    en.n = 1;
    return eval_at(e, &en, out);
}

/* (key, thread) pairs, sorted by key. */
typedef struct KeyT {
    int64_t key; /* a value, or a residue */
    int64_t t;   /* the thread */
} KeyT;

static int keyt_cmp(const void *x, const void *y) {
    const KeyT *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* (thread, key) order */
static int keyt_cmp_t(const void *x, const void *y) {
    const KeyT *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int i64_cmp(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The first of the n sorted keys that is >= key (n if none). */
static int64_t lower_bound(const int64_t *keys, int64_t n, int64_t key) {
    int64_t l = 0, h = n;
    while (l < h) {
        int64_t m = l + (h - l) / 2;
        if (keys[m] < key) l = m + 1;
        else h = m;
    }
    return l;
}

static int64_t pmod(int64_t x, int64_t g) {
    int64_t r = x % g;
    return r < 0 ? r + g : r;
}

/* The distinct sorted keys of a table, found by value in constant time
 * (open addressing, linear probing, at most half full): the pair
 * enumeration below looks a key up for every (thread, value) of one
 * side, tens of thousands of times in FlashAttention's epilogue. */
typedef struct KeyIndex {
    int32_t *slot;  /* per slot: an index into the keys, or -1 (empty) */
    uint64_t mask;  /* slots - 1 (slots a power of two) */
    int shift;      /* 64 - log2(slots): the hash's top bits pick the slot */
} KeyIndex;

static uint64_t key_slot(const KeyIndex *ki, int64_t key) {
    return ((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> ki->shift;
}

/* Index the n distinct keys; false when out of memory. */
static bool key_index(KeyIndex *ki, const int64_t *keys, int64_t n) {
    ki->slot = NULL;
    if (n > INT32_MAX) return false;
    int bits = 4;
    while (((int64_t)1 << bits) < 2 * n) bits++;
    ki->mask = ((uint64_t)1 << bits) - 1;
    ki->shift = 64 - bits;
    ki->slot = malloc(sizeof *ki->slot * (size_t)(ki->mask + 1));
    if (!ki->slot) return false;
    memset(ki->slot, 0xff, sizeof *ki->slot * (size_t)(ki->mask + 1));
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = key_slot(ki, keys[i]);
        while (ki->slot[h] >= 0) h = (h + 1) & ki->mask;
        ki->slot[h] = (int32_t)i;
    }
    return true;
}

/* The index of key among the keys, or -1. */
static int64_t key_find(const KeyIndex *ki, const int64_t *keys, int64_t key) {
    for (uint64_t h = key_slot(ki, key);; h = (h + 1) & ki->mask) {
        int32_t i = ki->slot[h];
        if (i < 0) return -1;
        if (keys[i] == key) return i;
    }
}

/*
 * Can diff (the difference of two index expressions) lie in [lo, hi] ...
 *  - same_thread == false: ... at all?  false: proven never;
 *  - same_thread == true: ... with ta != tb?  false: proven never (so the
 *    two accesses meet only within one thread).
 * diff = A(ta) + B(tb) + rest: the terms whose atoms hold a thread
 * variable are evaluated for every thread of its range (the atoms must be
 * functions of that thread alone: t // 32, t % 32 // 4, ...); rest is in
 * c + gZ (g the gcd of its coefficients).  For each thread ta and each
 * target x, the values of B that would meet it are looked up among the
 * sorted values (or residues mod g) of the other side.
 */
static bool may_meet(SyncConflict *C, IrExpr *diff, int64_t lo, int64_t hi, const IrVar *ta, const IrVar *tb,
                     bool same_thread, uint64_t *pairs) {
    IrInterval all = ir_arith_bound(C->ar, diff);
    if (all.hi != IR_ARITH_POS_INF && all.hi < lo) return false;
    if (all.lo != IR_ARITH_NEG_INF && all.lo > hi) return false;
    IrAffine f;
    if (!ir_arith_affine(C->ar, diff, true, &f)) return true;
    /* the variables of each side: its thread and whatever shares an atom with it */
    Env ea = {{0}, {0}, {0}, {0}, 0, false}, eb = ea;
    bool ok = true;
    if (same_thread) {
        ok = env_add(&ea, C, ta) && env_add(&eb, C, tb);
        for (int i = 0; i < f.n && ok; i++) {
            bool ua = atom_uses(f.t[i].atom, ta), ub = atom_uses(f.t[i].atom, tb);
            if (ua && ub) ok = false;
            VarsCtx c = {ua ? &ea : &eb, C, true};
            if (ua || ub) ir_expr_any(f.t[i].atom, add_var_node, &c);
            ok = ok && c.ok;
        }
        if (!ok) return true;
    }
    int64_t g = 0;
    int na = 0, nb = 0;
    IrAffTerm *ta_t = TS_NEWN(C->a, IrAffTerm, f.n ? f.n : 1), *tb_t = TS_NEWN(C->a, IrAffTerm, f.n ? f.n : 1);
    IrAffine rest = {TS_NEWN(C->a, IrAffTerm, f.n ? f.n : 1), 0, f.c, true};
    for (int i = 0; i < f.n; i++) {
        const IrExpr *at = f.t[i].atom;
        bool ua = false, ub = false;
        if (same_thread) {
            /* a term on a side when all its variables are that side's */
            Env t1 = ea, t2 = eb;
            VarsCtx c1 = {&t1, C, true}, c2 = {&t2, C, true};
            ir_expr_any(at, add_var_node, &c1);
            ir_expr_any(at, add_var_node, &c2);
            ua = c1.ok && t1.n == ea.n && at->kind != IR_E_INT;
            ub = !ua && c2.ok && t2.n == eb.n && at->kind != IR_E_INT;
        }
        if (ua) ta_t[na++] = f.t[i];
        else if (ub) tb_t[nb++] = f.t[i];
        else {
            g = gcd64(g, f.t[i].coeff);
            rest.t[rest.n++] = f.t[i];
        }
    }
    IrInterval rb = ir_arith_bound(C->ar, ir_affine_expr(C->a, &rest, diff->dt));
    if (!same_thread) {
        int64_t l = lo > rb.lo ? lo : rb.lo, h = hi < rb.hi ? hi : rb.hi;
        return hits(f.c, g, l, h);
    }
    if (!pairs) return true;
    if (hi - lo >= 64) return true;
    if (g == 0) rb.lo = rb.hi = f.c;
    if (rb.lo == IR_ARITH_NEG_INF || rb.hi == IR_ARITH_POS_INF) return true;
    IrInterval ra = ir_arith_var_range(C->ar, ta), rt = ir_arith_var_range(C->ar, tb);
    int64_t n2t = rt.hi - rt.lo + 1;
    /* every assignment of each side's variables (thread first, mixed radix) */
    int64_t c1 = 1, c2 = 1;
    for (int i = 0; i < ea.n; i++) c1 *= ea.hi[i] - ea.lo[i] + 1;
    for (int i = 0; i < eb.n; i++) c2 *= eb.hi[i] - eb.lo[i] + 1;
    if (c1 > MAXENUM || c2 > MAXENUM || c1 < 1 || c2 < 1) return true;
    KeyT *A = malloc(sizeof *A * (size_t)c1), *B = malloc(sizeof *B * (size_t)c2);
    ok = A && B;
    for (int pass = 0; pass < 2 && ok; pass++) {
        Env *en = pass ? &eb : &ea;
        IrAffTerm *tt = pass ? tb_t : ta_t;
        int nt = pass ? nb : na;
        int64_t cnt = pass ? c2 : c1;
        KeyT *out = pass ? B : A;
        for (int64_t q = 0; q < cnt && ok; q++) {
            int64_t rem = q;
            for (int i = en->n - 1; i >= 0; i--) {
                int64_t w = en->hi[i] - en->lo[i] + 1;
                en->x[i] = en->lo[i] + rem % w;
                rem /= w;
            }
            int64_t val = 0;
            for (int i = 0; i < nt && ok; i++) {
                int64_t v;
                ok = eval_at(tt[i].atom, en, &v);
                val += tt[i].coeff * v;
            }
            out[q].key = val;
            out[q].t = en->x[0]; /* the thread (added first) */
            /* a thread its branch conditions exclude makes no access: a key no lookup finds */
            const uint8_t *mk = pass ? C->mask_b : C->mask_a;
            int64_t base = pass ? rt.lo : ra.lo;
            if (mk && !mk[en->x[0] - base]) out[q].t = IR_ARITH_NEG_INF;
        }
        int64_t kept = 0;
        for (int64_t q = 0; q < cnt; q++)
            if (out[q].t != IR_ARITH_NEG_INF) out[kept++] = out[q];
        if (pass) c2 = kept;
        else c1 = kept;
    }
    int64_t budget = (int64_t)1 << 20; /* candidate pairs looked at */
    /* the values the rest can take, where its terms are few small ranges:
     * every combination enumerated, sorted, duplicates dropped */
    int64_t *rv = NULL, nrv = 0;
    if (ok) {
        int64_t combos = 1;
        bool fine = true;
        for (int i = 0; i < rest.n && fine; i++) {
            const IrExpr *at = rest.t[i].atom;
            IrInterval r = at->kind == IR_E_VAR ? ir_arith_var_range(C->ar, at->var) : (IrInterval){1, 0};
            if (r.lo > r.hi || r.hi - r.lo >= 4096) fine = false;
            else combos *= r.hi - r.lo + 1;
            if (combos > 4096) fine = false;
        }
        if (fine && (rv = malloc(sizeof *rv * (size_t)combos)) != NULL) {
            for (int64_t q = 0; q < combos; q++) {
                int64_t rem = q, val = f.c;
                for (int i = rest.n - 1; i >= 0; i--) {
                    IrInterval r = ir_arith_var_range(C->ar, rest.t[i].atom->var);
                    int64_t w = r.hi - r.lo + 1;
                    val += rest.t[i].coeff * (r.lo + rem % w);
                    rem /= w;
                }
                rv[q] = val;
            }
            qsort(rv, (size_t)combos, sizeof *rv, i64_cmp);
            for (int64_t q = 0; q < combos; q++)
                if (!nrv || rv[nrv - 1] != rv[q]) rv[nrv++] = rv[q];
        }
    }
    int64_t n1t = ra.hi - ra.lo + 1;
    int64_t n2w = (n2t + 63) / 64; /* 64-bit words per row of thread pairs */
    uint64_t *mine = ok ? calloc((size_t)(n1t * n2w), sizeof(uint64_t)) : NULL;
    ok = ok && mine;
    if (ok) qsort(B, (size_t)c2, sizeof *B, keyt_cmp);
    /* B grouped by value: each distinct value, where its entries start in
     * B, and the threads that have it (as bits, where they fit) */
    int64_t ng = 0, *gkey = NULL, *gbeg = NULL;
    uint64_t *gthr = NULL;
    if (ok) {
        gkey = malloc(sizeof *gkey * (size_t)(c2 + 1));
        gbeg = malloc(sizeof *gbeg * (size_t)(c2 + 1));
        ok = gkey && gbeg;
        for (int64_t j = 0; ok && j < c2; j++)
            if (!ng || gkey[ng - 1] != B[j].key) {
                gbeg[ng] = j;
                gkey[ng++] = B[j].key;
            }
        if (ok) gbeg[ng] = c2;
        gthr = ok && ng * n2w <= ((int64_t)1 << 22) ? calloc((size_t)(ng * n2w + 1), sizeof(uint64_t)) : NULL;
        for (int64_t gi = 0; gthr && gi < ng; gi++)
            for (int64_t j = gbeg[gi]; j < gbeg[gi + 1]; j++) {
                int64_t b = B[j].t - rt.lo;
                gthr[gi * n2w + b / 64] |= (uint64_t)1 << (b % 64);
            }
    }
    if (ok && rv && gthr) {
        /* A + B + R = x for one of the rest's values R, i.e. A + B in the
         * targets W = {x - R}; each group ORed into a thread's row once (A
         * sorted by thread: stamps).  Per value of A, either every target
         * is looked up among the groups or every group among the targets,
         * whichever list is shorter: the same pairs either way. */
        qsort(A, (size_t)c1, sizeof *A, keyt_cmp_t);
        int64_t nw = 0, *W = malloc(sizeof *W * (size_t)((hi - lo + 1) * nrv));
        for (int64_t x = lo; W && x <= hi; x++)
            for (int64_t k = 0; k < nrv; k++) W[nw++] = (int64_t)((uint64_t)x - (uint64_t)rv[k]);
        if (W) qsort(W, (size_t)nw, sizeof *W, i64_cmp);
        int64_t nwd = 0;
        for (int64_t q = 0; W && q < nw; q++)
            if (!nwd || W[nwd - 1] != W[q]) W[nwd++] = W[q];
        nw = nwd;
        int64_t *stamp = W ? malloc(sizeof *stamp * (size_t)ng) : NULL;
        for (int64_t i = 0; stamp && i < ng; i++) stamp[i] = IR_ARITH_NEG_INF;
        KeyIndex kg = {0}, kw = {0}; /* the groups' keys, the targets */
        bool by_target = nw <= ng;
        if (stamp && !(by_target ? key_index(&kg, gkey, ng) : key_index(&kw, W, nw))) {
            free(stamp);
            stamp = NULL;
        }
        for (int64_t q = 0; stamp && q < c1; q++) {
            if (q > 0 && A[q].t == A[q - 1].t && A[q].key == A[q - 1].key) continue;
            uint64_t *row = mine + (A[q].t - ra.lo) * n2w;
            for (int64_t j = 0; j < (by_target ? nw : ng); j++) {
                int64_t l = j;
                if (by_target) l = key_find(&kg, gkey, (int64_t)((uint64_t)W[j] - (uint64_t)A[q].key));
                else if (key_find(&kw, W, (int64_t)((uint64_t)gkey[j] + (uint64_t)A[q].key)) < 0) l = -1;
                if (l >= 0 && stamp[l] != A[q].t) {
                    stamp[l] = A[q].t;
                    const uint64_t *gt = gthr + l * n2w;
                    for (int64_t i = 0; i < n2w; i++) row[i] |= gt[i];
                }
            }
        }
        free(kg.slot);
        free(kw.slot);
        free(W);
        if (!stamp) ok = false;
        free(stamp);
    } else if (ok) {
        /* A + B + R = x with R in [rb.lo, rb.hi], R = c (mod g): for each
         * entry of A and each x, the candidates are B's entries with values
         * in [x - A - rb.hi, x - A - rb.lo].  At most `budget` candidates in
         * all (counted first, from the groups' starts), else no answer;
         * then the residue test once per group, its threads ORed in. */
        int64_t total = 0;
        for (int64_t q = 0; q < c1 && ok; q++)
            for (int64_t x = lo; x <= hi && ok; x++) {
                int64_t gl = lower_bound(gkey, ng, x - A[q].key - rb.hi);
                int64_t gu = lower_bound(gkey, ng, x - A[q].key - rb.lo + 1);
                if (gu > gl) total += gbeg[gu] - gbeg[gl];
                if (total > budget) ok = false;
            }
        if (ok) qsort(A, (size_t)c1, sizeof *A, keyt_cmp_t);
        for (int64_t q = 0; q < c1 && ok; q++) {
            if (q > 0 && A[q].t == A[q - 1].t && A[q].key == A[q - 1].key) continue;
            uint64_t *row = mine + (A[q].t - ra.lo) * n2w;
            for (int64_t x = lo; x <= hi; x++) {
                int64_t gl = lower_bound(gkey, ng, x - A[q].key - rb.hi);
                for (int64_t gi = gl; gi < ng && gkey[gi] <= x - A[q].key - rb.lo; gi++) {
                    int64_t R = x - A[q].key - gkey[gi];
                    if (!(g ? pmod(R - f.c, g) == 0 : R == f.c)) continue;
                    if (gthr)
                        for (int64_t i = 0; i < n2w; i++) row[i] |= gthr[gi * n2w + i];
                    else
                        for (int64_t j = gbeg[gi]; j < gbeg[gi + 1]; j++)
                            row[(B[j].t - rt.lo) / 64] |= (uint64_t)1 << ((B[j].t - rt.lo) % 64);
                }
            }
        }
    }
    /* one thread meeting itself is not a conflict */
    for (int64_t t = ra.lo; ok && t <= ra.hi; t++)
        if (t >= rt.lo && t <= rt.hi)
            mine[(t - ra.lo) * n2w + (t - rt.lo) / 64] &= ~((uint64_t)1 << ((t - rt.lo) % 64));
    free(rv);
    free(gkey);
    free(gbeg);
    free(gthr);
    bool meet = true;
    if (ok) {
        meet = false;
        for (int64_t i = 0; i < n1t * n2w; i++) {
            pairs[i] &= mine[i];
            meet |= pairs[i] != 0;
        }
    }
    free(mine);
    free(A);
    free(B);
    return meet;
}

static IrExpr *sub64(SyncConflict *C, IrExpr *x, IrExpr *y);

/* The bound of x - y on their affine difference (the terms both share,
 * block indices and uniform loop variables, cancel); where a side might
 * wrap, of their 64-bit difference. */
static IrInterval diff_bound(SyncConflict *C, IrExpr *x, IrExpr *y) {
    IrInterval r;
    if (ir_arith_diff_bound(C->ar, x, y, &r)) return r;
    return ir_arith_bound(C->ar, sub64(C, x, y));
}

enum { MAXTERMS = 16 };

/* The terms of e as a sum of one integer dtype (its IR_ADD tree), or -1
 * when there are more than MAXTERMS. */
static int sum_terms(IrExpr *e, IrExpr **t, int n) {
    if (e->kind == IR_E_BIN && e->bin.op == IR_ADD && e->bin.a->dt == e->dt && e->bin.b->dt == e->dt) {
        n = sum_terms(e->bin.a, t, n);
        return n < 0 ? n : sum_terms(e->bin.b, t, n);
    }
    if (n >= MAXTERMS) return -1;
    t[n] = e;
    return n + 1;
}

static bool uses_fresh_of(const IrExpr *e, const SyncAcc *a) {
    for (int i = 0; i < a->fv.n; i++)
        if (ir_expr_uses_var(e, a->fv.v[i])) return true;
    return false;
}

/* x and y (the index expressions of accesses ax and ay, of one dtype) less
 * the terms their sums share that stand for one value in both: no variable
 * of either access's own (threads, thread-range loop variables, per-access
 * unknowns) in them.  A T.use_swizzle block index is a select and casts
 * over run-time extents, a uniform T.alloc_var an unknown of any value,
 * so x - y taken whole "may wrap" and hides the thread terms beside them.
 * Dropping the shared term is exact: u + a and u + b are equal (mod 2^w
 * too) exactly when a and b are, and their difference is a - b for the
 * in-bounds indices a well-formed kernel makes. */
static void strip_common(SyncConflict *C, const SyncAcc *ax, const SyncAcc *ay, IrExpr **x, IrExpr **y) {
    IrExpr *tx[MAXTERMS], *ty[MAXTERMS];
    if ((*x)->dt != (*y)->dt) return;
    int nx = sum_terms(*x, tx, 0), ny = sum_terms(*y, ty, 0);
    if (nx < 2 && ny < 2) return;
    if (nx < 0 || ny < 0) return;
    bool usedy[MAXTERMS] = {0}, dropx[MAXTERMS] = {0}, any = false;
    for (int i = 0; i < nx; i++) {
        if (uses_fresh_of(tx[i], ax) || uses_fresh_of(tx[i], ay)) continue;
        for (int j = 0; j < ny; j++)
            if (!usedy[j] && ir_expr_equal(tx[i], ty[j])) {
                usedy[j] = dropx[i] = any = true;
                break;
            }
    }
    if (!any) return;
    IrExpr *rx = NULL, *ry = NULL;
    for (int i = 0; i < nx; i++)
        if (!dropx[i]) rx = rx ? ir_bin(C->a, IR_ADD, rx, tx[i]) : tx[i];
    for (int j = 0; j < ny; j++)
        if (!usedy[j]) ry = ry ? ir_bin(C->a, IR_ADD, ry, ty[j]) : ty[j];
    *x = rx ? rx : ir_int(C->a, 0, (*x)->dt);
    *y = ry ? ry : ir_int(C->a, 0, (*y)->dt);
}

/* The row-major element offset of the starts of x and y, differenced, or
 * NULL.  Shared buffers use their constant strides.  Global ones (run-time
 * strides) use as stride of each dimension the span of the index
 * difference in the dimensions inside it: with digits |d_i| < span_i, a
 * weighted sum is zero only if every digit is, so the offsets of two index
 * tuples (lanes included) meet exactly when the tuples do. */
/* Is a - b provably a multiple of k?  The terms of the two sums that are
 * the same expression cancel first; the rest must be divisible. */
static bool differ_by_multiple(SyncConflict *C, IrExpr *a, IrExpr *b, int64_t k) {
    IrExpr *ta[MAXTERMS], *tb[MAXTERMS];
    int na = sum_terms(a, ta, 0), nb = sum_terms(b, tb, 0);
    if (na < 0 || nb < 0) return false;
    bool used[MAXTERMS] = {0};
    IrExpr *ra = NULL, *rb = NULL;
    for (int i = 0; i < na; i++) {
        bool same = false;
        for (int j = 0; j < nb && !same; j++)
            if (!used[j] && ir_expr_equal(ta[i], tb[j])) same = used[j] = true;
        if (!same) ra = ra ? ir_bin(C->a, IR_ADD, ra, ta[i]) : ta[i];
    }
    for (int j = 0; j < nb; j++)
        if (!used[j]) rb = rb ? ir_bin(C->a, IR_ADD, rb, tb[j]) : tb[j];
    if (!ra && !rb) return true;
    IrExpr *d = !rb ? ra : !ra ? rb : sub64(C, ra, rb);
    return ir_arith_divisible(C->ar, d, k);
}

/* The row-major flat offset of access x's start in a buffer of constant
 * strides st[0..n), where a pair of indices (X // K, X' % K) with K the
 * extent of the inner one and X - X' a multiple of K (simplify drops from
 * the modulo the terms that are: i * 512 + 4 * tid + v in a row of 128)
 * counts as X * st[d + 1], which it is: (X // K) * K + X % K = X.  A flat
 * index a kernel splits into rows itself (TileLang's dequantization
 * macros: B_shared[index // block_K, index % block_K]) then differs between
 * two threads by its thread terms, where the row and column apart hide it.
 * NULL where no pair collapses (the digits' differences then do better). */
static IrExpr *flat_collapsed(SyncConflict *C, const SyncAcc *x, const int64_t *st, int n) {
    IrExpr *o = NULL;
    bool any = false;
    for (int d = 0; d < n; d++) {
        IrExpr *a = x->start[d], *t = NULL;
        int64_t k;
        if (d + 1 < n && a->kind == IR_E_BIN && a->bin.op == IR_FLOORDIV && ir_is_const_int(a->bin.b, &k) &&
            k == st[d] / st[d + 1] && k > 0 && x->start[d + 1]->kind == IR_E_BIN &&
            x->start[d + 1]->bin.op == IR_FLOORMOD && x->start[d + 1]->bin.b->kind == IR_E_INT &&
            x->start[d + 1]->bin.b->ival == k && st[d + 1] == 1 &&
            differ_by_multiple(C, a->bin.a, x->start[d + 1]->bin.a, k)) {
            t = ir_cast(C->a, TS_INT64, a->bin.a);
            any = true;
            d++;
        } else {
            t = ir_cast(C->a, TS_INT64, a);
            if (st[d] != 1) t = ir_bin(C->a, IR_MUL, t, ir_int(C->a, st[d], TS_INT64));
        }
        o = o ? ir_bin(C->a, IR_ADD, o, t) : t;
    }
    return any ? o : NULL;
}

static IrExpr *offset_diff(SyncConflict *C, const SyncAcc *x, const SyncAcc *y) {
    const IrBuffer *b = x->buf;
    int n = x->ndim;
    if (!n || n != y->ndim) return NULL;
    for (int d = 0; d + 1 < n; d++)
        if (x->ext[d] != 1 || y->ext[d] != 1) return NULL;
    if (x->ext[n - 1] < 1 || y->ext[n - 1] < 1) return NULL;
    if (b->scope != IR_SCOPE_GLOBAL && n >= 2 && n <= 8) { /* constant strides: a flat index split by the kernel */
        int64_t st[8], acc = 1, e;
        bool ok = true;
        for (int d = n - 1; d >= 0 && ok; d--) {
            st[d] = acc;
            ok = ir_is_const_int(b->shape[d], &e) && e >= 1 && e <= ((int64_t)1 << 30) && acc <= ((int64_t)1 << 32) / e;
            acc *= ok ? e : 1;
        }
        IrExpr *fx = ok ? flat_collapsed(C, x, st, n) : NULL, *fy = ok ? flat_collapsed(C, y, st, n) : NULL;
        if (fx && fy) {
            strip_common(C, x, y, &fx, &fy);
            return sub64(C, fx, fy);
        }
    }
    IrExpr *o = NULL;
    int64_t stride = 1;
    for (int d = n - 1; d >= 0; d--) {
        IrExpr *xs = x->start[d], *ys = y->start[d];
        strip_common(C, x, y, &xs, &ys);
        IrExpr *t = sub64(C, xs, ys);
        int64_t e;
        if (b->scope == IR_SCOPE_GLOBAL) {
            IrInterval r = diff_bound(C, xs, ys);
            if (r.lo == IR_ARITH_NEG_INF || r.hi == IR_ARITH_POS_INF) return NULL;
            int64_t m = -r.lo > r.hi ? -r.lo : r.hi;
            if (d == n - 1) m += (x->ext[d] > y->ext[d] ? x->ext[d] : y->ext[d]) - 1;
            e = m + 1;
        } else if (!ir_is_const_int(b->shape[d], &e)) {
            return NULL;
        }
        if (stride != 1) t = ir_bin(C->a, IR_MUL, t, ir_int(C->a, stride, TS_INT64));
        o = o ? ir_bin(C->a, IR_ADD, t, o) : t;
        if (e < 1 || e > ((int64_t)1 << 30) || stride > ((int64_t)1 << 62) / e) return NULL;
        stride *= e;
    }
    return o;
}

static IrExpr *sub64(SyncConflict *C, IrExpr *x, IrExpr *y) {
    return ir_bin(C->a, IR_SUB, ir_cast(C->a, TS_INT64, x), ir_cast(C->a, TS_INT64, y));
}

/* May x and y touch one element (same_thread: from two different threads)? */
static bool elements_meet(SyncConflict *C, const SyncAcc *x, const SyncAcc *y, bool same_thread) {
    if (!x->ndim || !y->ndim || x->ndim != y->ndim) return true;
    /* same_thread: the thread pairs (ta != tb) that may meet, narrowed by each dimension */
    uint64_t *pairs = NULL;
    if (same_thread) {
        IrInterval ra = ir_arith_var_range(C->ar, x->th), rt = ir_arith_var_range(C->ar, y->th);
        if (ra.hi < ra.lo || rt.hi < rt.lo) return false; /* an empty thread range: no access at all */
        if (ra.lo == IR_ARITH_NEG_INF || ra.hi == IR_ARITH_POS_INF || rt.lo == IR_ARITH_NEG_INF ||
            rt.hi == IR_ARITH_POS_INF || ra.hi - ra.lo >= MAXT || rt.hi - rt.lo >= MAXT ||
            (ra.hi - ra.lo + 1) * (rt.hi - rt.lo + 1) > ((int64_t)1 << 22))
            return true;
        size_t n = (size_t)((ra.hi - ra.lo + 1) * ((rt.hi - rt.lo + 1 + 63) / 64));
        pairs = malloc(n * sizeof *pairs);
        if (!pairs) return true;
        memset(pairs, 0xff, n * sizeof *pairs); /* (bits past a row's end stay 0 in every narrowing) */
        if (C->warp_ordered) { /* two lanes of one warp are ordered by a __syncwarp between the accesses */
            int64_t n2w = (rt.hi - rt.lo + 1 + 63) / 64;
            bool any = false;
            for (int64_t ta = ra.lo; ta <= ra.hi; ta++) {
                uint64_t *row = pairs + (ta - ra.lo) * n2w;
                for (int64_t tb = rt.lo; tb <= rt.hi; tb++)
                    if (ta / 32 == tb / 32) row[(tb - rt.lo) / 64] &= ~((uint64_t)1 << ((tb - rt.lo) % 64));
                    else any = true;
            }
            if (!any) { /* only lanes of one warp could meet: none unordered */
                free(pairs);
                return false;
            }
        }
    }
    bool meet = true;
    for (int d = 0; d < x->ndim && meet; d++) {
        if (x->ext[d] < 1 || y->ext[d] < 1) continue;
        IrExpr *xs = x->start[d], *ys = y->start[d];
        strip_common(C, x, y, &xs, &ys);
        meet = may_meet(C, sub64(C, xs, ys), -(x->ext[d] - 1), y->ext[d] - 1, x->th, y->th,
                        same_thread, pairs);
    }
    if (meet) {
        int64_t lx = x->ext[x->ndim - 1], ly = y->ext[y->ndim - 1];
        IrExpr *od = offset_diff(C, x, y);
        if (od) meet = may_meet(C, od, -(lx - 1), ly - 1, x->th, y->th, same_thread, pairs);
    }
    free(pairs);
    return meet;
}

/* ---- canonical keys ------------------------------------------------------------------
 *
 * Whether two accesses conflict depends only on their buffers, kinds, extents,
 * thread masks and index expressions, on the ranges of the variables in them,
 * and on which variables they share, not on the names or identities of their
 * own fresh variables: the analysis treats those as any variable of that range.
 * So the answer is kept under a key that describes the pair exactly, up to a
 * renaming of fresh variables: every expression node (kind, dtype, operator,
 * constant), buffers and other variables by identity, fresh variables numbered
 * by first appearance with their dtype and range (and whether the conflict binds
 * them: an access's own variables; the one-value unknowns of a uniform
 * T.alloc_var are not bound).  Ranges of the other variables come from the
 * analysis's persistent bindings (uniform loop variables); a binding that
 * changes one starts a new epoch, in which older answers are not used.  Loop
 * bodies analysed again to a fixed point, and runs of statements that make the
 * same accesses (a chain of T.Parallel updates of one shared tile), ask the same
 * questions again and again: each is now decided once.
 *
 * The same key of one access decides whether a set already holds an access
 * that is equal to it up to its own variables: every later conflict with either
 * one has the same answer (the later access shares no fresh variable with
 * either), so the set keeps one; without that, a run of n such statements
 * costs n^2 conflict questions. */

static void key_put(SyncConflict *C, uint64_t w) { ts_vec_push(C->a, C->kw, w); }

/* A variable: fresh ones numbered (with dtype, range and whether bound, i.e.
 * one of bound_a's or bound_b's own), others by identity. */
static void key_var(SyncConflict *C, const IrVar *v, const SyncAcc *bound_a, const SyncAcc *bound_b) {
    if (v->id != FRESH_ID) {
        key_put(C, 1);
        key_put(C, (uint64_t)(uintptr_t)v);
        return;
    }
    for (int i = 0; i < C->kv.n; i++)
        if (C->kv.v[i] == v) {
            key_put(C, 2);
            key_put(C, (uint64_t)i);
            return;
        }
    ts_vec_push(C->a, C->kv, v);
    bool bound = false;
    for (int i = 0; bound_a && i < bound_a->fv.n && !bound; i++) bound = bound_a->fv.v[i] == v;
    for (int i = 0; bound_b && i < bound_b->fv.n && !bound; i++) bound = bound_b->fv.v[i] == v;
    IrInterval r = sync_fresh_range(v);
    key_put(C, 3);
    key_put(C, (uint64_t)v->dt | (uint64_t)bound << 32);
    key_put(C, (uint64_t)r.lo);
    key_put(C, (uint64_t)r.hi);
}

static void key_expr(SyncConflict *C, const IrExpr *e, const SyncAcc *ba, const SyncAcc *bb) {
    if (!e) {
        key_put(C, 0);
        return;
    }
    key_put(C, (uint64_t)e->kind + 16 * (uint64_t)e->dt + 1);
    switch (e->kind) {
    case IR_E_INT: key_put(C, (uint64_t)e->ival); return;
    case IR_E_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &e->fval, sizeof bits);
        key_put(C, bits);
        return;
    }
    case IR_E_VAR: key_var(C, e->var, ba, bb); return;
    case IR_E_LOAD:
        key_put(C, (uint64_t)(uintptr_t)e->load.buf);
        key_put(C, (uint64_t)e->load.nidx);
        for (int i = 0; i < e->load.nidx; i++) key_expr(C, e->load.idx[i], ba, bb);
        return;
    case IR_E_BIN:
        key_put(C, (uint64_t)e->bin.op);
        key_expr(C, e->bin.a, ba, bb);
        key_expr(C, e->bin.b, ba, bb);
        return;
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST:
        key_put(C, (uint64_t)e->un.bitnot);
        key_expr(C, e->un.a, ba, bb);
        return;
    case IR_E_SELECT:
        key_expr(C, e->sel.cond, ba, bb);
        key_expr(C, e->sel.a, ba, bb);
        key_expr(C, e->sel.b, ba, bb);
        return;
    case IR_E_CALL:
        key_put(C, (uint64_t)e->call.fn);
        key_put(C, (uint64_t)e->call.nargs);
        for (int i = 0; i < e->call.nargs; i++) key_expr(C, e->call.args[i], ba, bb);
        return;
    default: key_put(C, (uint64_t)(uintptr_t)e); return; /* only equal to itself */
    }
}

/* Append x's description to the key (ba, bb: the accesses whose own
 * variables the question binds). */
static void key_acc(SyncConflict *C, const SyncAcc *x, const SyncAcc *ba, const SyncAcc *bb) {
    key_put(C, (uint64_t)(uintptr_t)x->buf);
    key_put(C, (uint64_t)x->rw | (uint64_t)x->atomic << 8 | (uint64_t)x->ndim << 16);
    for (int d = 0; d < x->ndim; d++) {
        key_put(C, (uint64_t)x->ext[d]);
        key_expr(C, x->start[d], ba, bb);
    }
    if (x->th) key_var(C, x->th, ba, bb);
    else key_put(C, 0);
    if (x->th && x->tmask) {
        IrInterval r = sync_fresh_range(x->th);
        key_put(C, 1);
        for (int64_t t = 0; t <= r.hi - r.lo; t += 8) {
            uint64_t w = 0;
            for (int64_t i = t; i < t + 8 && i <= r.hi - r.lo; i++) w |= (uint64_t)x->tmask[i] << (8 * (i - t));
            key_put(C, w);
        }
    } else {
        key_put(C, 0);
    }
}

/* x's own key (cached on it). */
static void acc_key(SyncConflict *C, SyncAcc *x) {
    if (x->key) return;
    C->kw.n = C->kv.n = 0;
    key_acc(C, x, x, NULL);
    uint64_t *k = TS_NEWN(C->a, uint64_t, C->kw.n);
    memcpy(k, C->kw.v, sizeof *k * (size_t)C->kw.n);
    x->key = k;
    x->nkey = C->kw.n;
}

bool sync_acc_equal(SyncConflict *C, SyncAcc *x, SyncAcc *y) {
    acc_key(C, x);
    acc_key(C, y);
    return x->nkey == y->nkey && !memcmp(x->key, y->key, sizeof *x->key * (size_t)x->nkey);
}

/* One decided conflict. */
typedef struct SyncMemo {
    const uint64_t *key; /* the question's key (NULL: an empty slot) */
    int nkey;            /* its words */
    int epoch;           /* when it was decided */
    bool conflict;       /* the answer */
} SyncMemo;

static uint64_t key_hash(const uint64_t *w, int n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int i = 0; i < n; i++) h = (h ^ w[i]) * UINT64_C(0x100000001b3) + (h >> 29);
    return h;
}

/* The slot of the key in C->kw: its entry, or the empty slot where it goes. */
static SyncMemo *memo_slot(SyncConflict *C) {
    uint64_t mask = (uint64_t)C->memo_cap - 1;
    for (uint64_t i = key_hash(C->kw.v, C->kw.n) & mask;; i = (i + 1) & mask) {
        SyncMemo *m = &C->memo[i];
        if (!m->key || (m->nkey == C->kw.n && !memcmp(m->key, C->kw.v, sizeof *m->key * (size_t)m->nkey)))
            return m;
    }
}

/* The answer for the key in C->kw: 0 / 1, or -1 if not known in this epoch. */
static int memo_find(SyncConflict *C) {
    if (!C->memo_cap) return -1;
    SyncMemo *m = memo_slot(C);
    return m->key && m->epoch == C->epoch ? m->conflict : -1;
}

/* Record the answer for the key in C->kw. */
static void memo_put(SyncConflict *C, bool c) {
    if (2 * (C->memo_n + 1) > C->memo_cap) {
        SyncMemo *old = C->memo;
        int ocap = C->memo_cap;
        C->memo_cap = ocap ? 2 * ocap : 256;
        C->memo = TS_NEWN(C->a, SyncMemo, C->memo_cap);
        memset(C->memo, 0, sizeof *C->memo * (size_t)C->memo_cap);
        uint64_t mask = (uint64_t)C->memo_cap - 1;
        for (int j = 0; j < ocap; j++) {
            if (!old[j].key) continue;
            uint64_t i = key_hash(old[j].key, old[j].nkey) & mask;
            while (C->memo[i].key) i = (i + 1) & mask;
            C->memo[i] = old[j];
        }
    }
    SyncMemo *m = memo_slot(C);
    if (!m->key) {
        uint64_t *k = TS_NEWN(C->a, uint64_t, C->kw.n);
        memcpy(k, C->kw.v, sizeof *k * (size_t)C->kw.n);
        m->key = k;
        m->nkey = C->kw.n;
        C->memo_n++;
    }
    m->epoch = C->epoch;
    m->conflict = c;
}

static bool one_thread(SyncConflict *C, const IrVar *t, int64_t *at) {
    if (!t) return false;
    IrInterval r = ir_arith_var_range(C->ar, t);
    *at = r.lo;
    return r.lo == r.hi;
}

/* Do x and y conflict (see the essay)?  within: two accesses of one
 * thread range (the blocking kernels' ordering of global writes is between
 * statements, not inside one). */
static bool conflict_bound(SyncConflict *C, const SyncAcc *x, const SyncAcc *y, bool within);

bool sync_conflict(SyncConflict *C, const SyncAcc *x, const SyncAcc *y, bool within) {
    if (x->buf != y->buf && !C->k->may_block) return false;
    /* two T.ws roles: ordered by their mbarriers, which is the program's part
     * (as in TileLang, where warp-specialized code places its own) */
    if (x->role && y->role && x->role != y->role) return false;
    if (x->buf == y->buf && !((x->rw | y->rw) & IR_ACC_WRITE)) return false;
    /* the same question, up to the accesses' own variables, answered before? */
    C->kw.n = C->kv.n = 0;
    ts_vec_push(C->a, C->kw, (uint64_t)within | (uint64_t)C->warp_ordered << 1);
    key_acc(C, x, x, y);
    key_acc(C, y, x, y);
    int known = memo_find(C);
    if (known >= 0) return known;
    int mark = ir_arith_mark(C->ar);
    bind_fresh(C, x);
    bind_fresh(C, y);
    bool c = conflict_bound(C, x, y, within);
    ir_arith_pop(C->ar, mark);
    memo_put(C, c);
    return c;
}

static bool conflict_bound(SyncConflict *C, const SyncAcc *x, const SyncAcc *y, bool within) {
    int64_t tx, ty;
    bool same1 = one_thread(C, x->th, &tx) && one_thread(C, y->th, &ty) && tx == ty;
    if (C->k->may_block && !within && x->buf->scope == IR_SCOPE_GLOBAL && y->buf->scope == IR_SCOPE_GLOBAL &&
        (x->rw & IR_ACC_WRITE) && (y->rw & IR_ACC_WRITE) && !same1 && C->nt > 1)
        return true; /* blocking kernels: global writes are ordered (a flag after the data) */
    if (x->buf != y->buf) return false;
    if (!((x->rw | y->rw) & IR_ACC_WRITE)) return false;
    if (x->atomic && y->atomic) return false;
    if (C->nt <= 1 || same1) return false;
    if (!elements_meet(C, x, y, false)) return false;
    C->mask_a = x->tmask;
    C->mask_b = y->tmask;
    bool meet = !(x->th && y->th) || elements_meet(C, x, y, true);
    C->mask_a = C->mask_b = NULL;
    return meet;
}

/* ---- exhaustive check under branch conditions ------------------------------ */

enum { XDIM = 4 };

/* One instance of an access: its element and thread. */
typedef struct XElem {
    int64_t idx[XDIM]; /* the element (dimensions of extent 1; the others 0) */
    int64_t t;         /* the thread */
} XElem;

static int xelem_cmp(const void *p, const void *q) {
    const XElem *a = p, *b = q;
    for (int d = 0; d < XDIM; d++)
        if (a->idx[d] != b->idx[d]) return a->idx[d] < b->idx[d] ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

/* Distinct variables of expressions. */
typedef struct XVars {
    const IrVar *v[ENVN]; /* the variables */
    int n;                /* how many */
    bool over;            /* more than ENVN */
} XVars;

static bool xvars_node(const IrExpr *e, void *ctx) {
    XVars *c = ctx;
    if (e->kind != IR_E_VAR) return false;
    for (int i = 0; i < c->n; i++)
        if (c->v[i] == e->var) return false;
    if (c->n == ENVN) c->over = true;
    else c->v[c->n++] = e->var;
    return false;
}

static bool owns(const SyncAcc *x, const IrVar *v) {
    for (int i = 0; i < x->fv.n; i++)
        if (x->fv.v[i] == v) return true;
    return false;
}

/* Is e, over its variables, a function of the thread th only? */
static bool only_thread(const IrExpr *e, const IrVar *th) {
    XVars t = {{0}, 0, false};
    ir_expr_any(e, xvars_node, &t);
    return !t.over && t.n == 1 && t.v[0] == th;
}

/* A uniform value without small bounds (a scalar parameter) that one side
 * compares equal to a function of its thread (`if tx == rank`): only the
 * values that function takes over the thread's range give that side
 * instances, so only those can make the two sides meet; *r becomes their
 * interval (unchanged when no such conjunct is found). */
static void eq_thread_range(const SyncAcc *x, const SyncAcc *y, const IrVar *v, IrInterval *r) {
    const SyncAcc *side[2] = {x, y};
    for (int k = 0; k < 2; k++) {
        const IrVar *th = side[k]->th;
        if (!th) continue;
        IrInterval tr = sync_fresh_range(th);
        if (tr.lo == IR_ARITH_NEG_INF || tr.hi == IR_ARITH_POS_INF || tr.hi < tr.lo || tr.hi - tr.lo >= MAXT)
            continue;
        for (int c = 0; c < side[k]->nconj; c++) {
            const IrExpr *e = side[k]->conj[c];
            if (e->kind != IR_E_BIN || e->bin.op != IR_EQ) continue;
            const IrExpr *f = e->bin.a->kind == IR_E_VAR && e->bin.a->var == v   ? e->bin.b
                              : e->bin.b->kind == IR_E_VAR && e->bin.b->var == v ? e->bin.a
                                                                                 : NULL;
            if (!f || !only_thread(f, th)) continue;
            Env en = {{th}, {tr.lo}, {tr.hi}, {tr.lo}, 1, true};
            IrInterval out = {IR_ARITH_POS_INF, IR_ARITH_NEG_INF};
            bool ok = true;
            for (int64_t t = tr.lo; t <= tr.hi && ok; t++) {
                int64_t val;
                en.x[0] = t;
                ok = eval_at(f, &en, &val);
                if (ok && val < out.lo) out.lo = val;
                if (ok && val > out.hi) out.hi = val;
            }
            if (ok) {
                *r = out;
                return;
            }
        }
    }
}

/* The range to enumerate v over: an access's own variable (the range it was
 * made with) or a shared one the analysis bounds (uniform loop variables,
 * block indices); false if not a small integer range. */
static bool xrange(SyncConflict *C, const SyncAcc *x, const SyncAcc *y, const IrVar *v, int64_t *lo, int64_t *hi) {
    IrInterval r = owns(x, v) || owns(y, v) ? sync_fresh_range(v) : ir_arith_var_range(C->ar, v);
    if (r.lo == IR_ARITH_NEG_INF || r.hi == IR_ARITH_POS_INF || r.hi - r.lo >= MAXT) eq_thread_range(x, y, v, &r);
    if (!ts_dtype_is_int(v->dt) || r.lo == IR_ARITH_NEG_INF || r.hi == IR_ARITH_POS_INF || r.hi < r.lo ||
        r.hi - r.lo >= MAXT)
        return false;
    *lo = r.lo;
    *hi = r.hi;
    return true;
}

/* The next values of en's variables [from, to) (mixed radix, the first
 * fastest); false after the last (all back at their first values). */
static bool xnext(Env *en, int from, int to) {
    for (int i = from; i < to; i++) {
        if (en->x[i] < en->hi[i]) {
            en->x[i]++;
            return true;
        }
        en->x[i] = en->lo[i];
    }
    return false;
}

/* The instances of x for the current values of en's variables outside
 * [from, to), those inside enumerated: the elements touched where every
 * conjunct evaluates true (one that cannot be evaluated counts as true). */
static int64_t xside(const SyncAcc *x, Env *en, int from, int to, const IrExpr *const *conj, int nconj, XElem *out,
                     bool *ok) {
    int th = -1;
    for (int i = from; i < to; i++) {
        en->x[i] = en->lo[i];
        if (en->v[i] == x->th) th = i;
    }
    int64_t n = 0;
    do {
        bool take = true;
        for (int c = 0; c < nconj && take; c++) {
            int64_t val;
            if (eval_at(conj[c], en, &val)) take = val != 0;
        }
        if (!take) continue;
        XElem *el = &out[n++];
        memset(el, 0, sizeof *el);
        el->t = th >= 0 ? en->x[th] : 0;
        for (int d = 0; d < x->ndim && *ok; d++)
            if (x->ext[d] == 1) *ok = eval_at(x->start[d], en, &el->idx[d]);
    } while (*ok && xnext(en, from, to));
    return n;
}

bool sync_exclusive(SyncConflict *C, const SyncAcc *x, const SyncAcc *y) {
    if (!x->th || !y->th || x->buf != y->buf || x->ndim != y->ndim || x->ndim < 1 || x->ndim > XDIM)
        return false;
    for (int d = 0; d < x->ndim; d++)
        if ((x->ext[d] != 1 && x->ext[d] != -1) || x->ext[d] != y->ext[d]) return false;
    /* the variables of the indices and threads (all must be enumerable) */
    XVars vs = {{0}, 0, false};
    const SyncAcc *side[2] = {x, y};
    for (int k = 0; k < 2; k++) {
        for (int d = 0; d < side[k]->ndim; d++) ir_expr_any(side[k]->start[d], xvars_node, &vs);
        IrExpr th = {.kind = IR_E_VAR, .var = (IrVar *)side[k]->th};
        xvars_node(&th, &vs);
    }
    if (vs.over) return false;
    /* the conjuncts whose variables are all enumerable, with their variables */
    const IrExpr **conj[2];
    int nconj[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        conj[k] = TS_NEWN(C->a, const IrExpr *, side[k]->nconj ? side[k]->nconj : 1);
        for (int c = 0; c < side[k]->nconj; c++) {
            XVars t = vs;
            ir_expr_any(side[k]->conj[c], xvars_node, &t);
            bool fine = !t.over;
            for (int i = vs.n; i < t.n && fine; i++) {
                int64_t lo, hi;
                fine = !owns(side[1 - k], t.v[i]) && xrange(C, x, y, t.v[i], &lo, &hi);
            }
            if (!fine) continue;
            conj[k][nconj[k]++] = side[k]->conj[c];
            vs = t;
        }
    }
    /* the environment: shared variables first, then x's, then y's */
    Env en = {{0}, {0}, {0}, {0}, 0, true};
    int first[4] = {0, 0, 0, 0};
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < vs.n; i++) {
            const IrVar *v = vs.v[i];
            if ((owns(x, v) ? 1 : owns(y, v) ? 2 : 0) != pass) continue;
            if (!xrange(C, x, y, v, &en.lo[en.n], &en.hi[en.n])) return false;
            en.v[en.n] = v;
            en.x[en.n] = en.lo[en.n];
            en.n++;
        }
        first[pass + 1] = en.n;
    }
    int64_t cnt[3] = {1, 1, 1};
    for (int pass = 0; pass < 3; pass++)
        for (int i = first[pass]; i < first[pass + 1]; i++) {
            cnt[pass] *= en.hi[i] - en.lo[i] + 1;
            if (cnt[pass] > MAXENUM) return false;
        }
    if (cnt[0] * (cnt[1] + cnt[2]) > ((int64_t)1 << 22)) return false;
    XElem *ex = malloc(sizeof *ex * (size_t)cnt[1]), *ey = malloc(sizeof *ey * (size_t)cnt[2]);
    bool ok = ex && ey, meet = false;
    do {
        int64_t n1 = xside(x, &en, first[1], first[2], conj[0], nconj[0], ex, &ok);
        int64_t n2 = ok ? xside(y, &en, first[2], first[3], conj[1], nconj[1], ey, &ok) : 0;
        if (!ok) break;
        qsort(ey, (size_t)n2, sizeof *ey, xelem_cmp);
        for (int64_t i = 0; i < n1 && !meet; i++) {
            /* y's instances at x's element (sorted by thread): one of another thread? */
            XElem key = ex[i];
            key.t = IR_ARITH_NEG_INF;
            int64_t lo = 0, hi = n2;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (xelem_cmp(&ey[mid], &key) < 0) lo = mid + 1;
                else hi = mid;
            }
            for (int64_t j = lo; j < n2 && !meet && !memcmp(ey[j].idx, ex[i].idx, sizeof ex[i].idx); j++)
                meet = ey[j].t != ex[i].t;
        }
    } while (!meet && xnext(&en, first[0], first[1]));
    free(ex);
    free(ey);
    return ok && !meet;
}
