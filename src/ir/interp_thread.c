/*
 * interp_thread.c — the thread-level reference interpreter (see
 * interp_thread.h for what it checks).
 *
 * Shape.  Every simulated thread owns an IrInterp (interp.c) that holds
 * its variables and evaluates its expressions, so the arithmetic is the
 * block-level interpreter's, not a second copy.  Control flow is not
 * interp.c's recursion but a re-entrant stepper here: each thread has an
 * explicit stack of frames (a statement list and its position, a loop and
 * its iteration, ...), so a thread can stop at a barrier or a warp
 * collective and resume later without coroutines or separate stacks
 * (longjmp-based errors and the sanitizers stay simple).  The scheduler
 * runs each thread until it blocks or finishes, then releases what can be
 * released: a warp whose 32 lanes all wait at one shfl_xor statement, the
 * block when every thread waits at one barrier (a new epoch) or one
 * tensor-core T.gemm; anything else is a deadlock, reported with both
 * sides.  Threads run in order between synchronization points, so runs
 * are deterministic.
 *
 * Memory.  Global buffers are the caller's arrays.  Shared buffers (and
 * fragments without a layout, which the printer keeps in shared memory)
 * are one array per block with a shadow per element: the epoch and
 * thread of the last write and the last read(s), whether it was ever
 * written, and cp.async copies in flight into it; every access checks the
 * shadow, which is how races, stale async reads and poison reads are
 * found.  Local buffers and fragments with a layout are one view per
 * thread (indexed logically: element i of thread t's view is t's register
 * for i), with an initialized bit per element; the layout says which
 * threads may touch which elements.  Indexing is logical: a swizzle only
 * renames offsets inside a buffer, so for races it matters only through
 * being a bijection, which is checked once.
 *
 * Expressions are evaluated by the thread's IrInterp after a walk over
 * their loads here (bounds, ownership, races, poison); like interp.c, the
 * walk follows only the taken side of a select and the right operand of
 * and/or only where the left does not decide, so it sees exactly the
 * loads the evaluation (and the targets' `?:`, `&&`, `||`) will do.  A statement whose expressions contain
 * shfl_xor runs in lock step over its warp: first every lane's shuffled
 * values are computed (the value of lane l ^ m is its operand evaluated
 * in lane l ^ m's state), then each lane runs a copy of the statement
 * with those values in place.
 */
#include "ir/interp_thread.h"
#include "ir/layout.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/tileop.h"

enum { CTX_UNIFORM, CTX_THREAD };
enum { TH_RUN, TH_BAR, TH_COLL, TH_WARP, TH_MBAR, TH_DONE };
enum { TAG_EXPLICIT }; /* every barrier is an IR_S_BARRIER (the printer adds none) */
enum { MEM_NONE, MEM_GLOBAL, MEM_BLOCK, MEM_THREAD };
enum { A_READ, A_WRITE, A_ATOMIC, A_PEEK /* a read whose value is never used (no poison report) */,
       A_WRITE_SAME /* a write of the value the element holds (shared_check) */ };
enum { ALL_THREADS = -2, MANY_READERS = -3, MAXD = 16 };

typedef enum FrKind {
    FR_SEQ,    /* a statement list: i = next index */
    FR_LOOP,   /* a counted loop: lo, n, i = next iteration */
    FR_WHILE,  /* a while loop */
    FR_ONCE,   /* an IR_FOR_THREAD loop: this thread's one iteration (i = 1: done) */
    FR_ROLE,   /* a T.ws role (IR_S_ROLE): its body once if the thread is one of its threads (i = 1: done) */
} FrKind;

/* One level of a thread's control stack. */
typedef struct Frame {
    FrKind kind;            /* what it is */
    const IrStmt *s;        /* the statement it runs */
    int ctx;                /* CTX_UNIFORM / CTX_THREAD for statements it enters */
    int64_t i, n, lo;       /* position, count, start (loops; FR_ONCE: the thread range) */
} Frame;

/* A cp.async element in flight: lands at a wait covering its group. */
typedef struct Async {
    int buf;     /* buffer id */
    int64_t off; /* element offset */
    double val;  /* value captured at issue (0 for a false predicate) */
    int group;   /* 0: not committed yet, else the thread's group number */
} Async;

/* One simulated thread. */
typedef struct Th {
    int id;                  /* flat thread index */
    IrInterp *in;            /* its variables and evaluator */
    Frame *fr;               /* control stack (heap) */
    int nfr, cap;            /* frames used / allocated */
    int state;               /* TH_* */
    const IrStmt *at;        /* where it waits (TH_BAR/COLL/WARP) */
    int tag;                 /* TH_BAR: explicit barrier or one implied before/after `at` */
    int at_ctx;              /* TH_WARP: the context to enter `at` in */
    int memo_on;             /* entering memo_s with shuffled values known */
    const IrStmt *memo_s;    /* the lock-step statement */
    const IrExpr **memo_e;   /* its outermost shfl_xor nodes (shared by the warp) */
    double *memo_v;          /* this lane's values for them (heap) */
    int nmemo;               /* number of them */
    Async *as;               /* cp.async elements in flight (heap) */
    int nas, ascap;          /* used / allocated */
    int committed;           /* async groups committed so far */
    TsLoc sloc;              /* the statement being run (for loads without a location) */
    int bar_id;              /* TH_BAR: the barrier's id (0: the block's; a run-time id evaluated) */
    int mb;                  /* TH_MBAR: the mbarrier waited on (index into IrTInterp.mbar) */
    int mb_parity;           /* ... until its phase of this parity has completed */
} Th;

/* One mbarrier object (an element of a T.alloc_barrier buffer) of the
 * current block: arrivals still expected in its current phase, and the
 * phases completed so far (the current phase's parity is phase & 1). */
typedef struct Mbar {
    const IrBuffer *b;  /* the barrier buffer */
    int64_t off;        /* the element */
    int64_t count;      /* arrivals per phase (init) */
    int64_t pending;    /* arrivals still expected in the current phase */
    int64_t tx;         /* transaction bytes still expected (expect_tx; nothing here completes them) */
    int64_t phase;      /* completed phases */
    TsLoc loc;          /* its init */
} Mbar;

/* Shadow state of one shared element. */
typedef struct Shadow {
    uint32_t w_epoch, r_epoch; /* epochs of the last write / read(s) */
    int32_t writer, reader;    /* who (ALL_THREADS: a collective; MANY_READERS) */
    uint32_t pr_epoch;         /* the read epoch before r_epoch ... */
    int32_t preader;           /* ... and its reader(s): barrier usefulness across one epoch */
    TsLoc wloc;                /* where the last write was */
    TsLoc rloc;                /* where the last read was */
    int32_t pend;              /* cp.async copies in flight into it */
    int32_t pthread;           /* the thread that issued the last of them */
    TsLoc ploc;                /* and where */
    uint8_t init;              /* ever written */
} Shadow;

/* Storage of one buffer. */
typedef struct Mem {
    const IrBuffer *b; /* the buffer */
    int kind;          /* MEM_* */
    int64_t n;         /* elements (non-global) */
    double *data;      /* BLOCK: n; THREAD: nthreads views of n; GLOBAL: the caller's */
    Shadow *sh;        /* BLOCK: n */
    uint8_t *init;     /* THREAD: nthreads * n written bits */
    int32_t *owner;    /* with a layout: lsize * rep owning threads of the logical elements */
    int32_t *lflat;    /* with a layout: their flat local (register) indices */
    int rep;           /* replicas per element (1 without a layout) */
    bool regs;         /* a local buffer with a layout: indexed by register, not by element */
    int lndim;         /* with a layout: logical dims */
    int64_t lshape[MAXD]; /* and extents */
    int64_t lsize;     /* logical elements */
    /* Bytes shared with other buffers (plan_smem's reuse): every access
     * to this buffer must be in another barrier epoch than those of the
     * buffers sharing its bytes, and none of their cp.async copies may be
     * in flight. */
    int *alias;        /* ids of the buffers whose bytes overlap this one's */
    int nalias;        /* their number */
    uint32_t a_epoch;  /* epoch of the last access (0: none yet) */
    int32_t a_tid;     /* the thread(s) that made it (MANY_READERS: several) */
    TsLoc a_loc;       /* where */
    int32_t apend;     /* cp.async copies in flight into it */
} Mem;

struct IrTInterp {
    TsArena *a;            /* structures */
    TsDiag *d;             /* errors */
    const IrKernel *k;     /* the kernel */
    int model;             /* IrTInterpModel (IR_TINTERP_STRICT) */
    int nid;               /* ids are below this */
    int nt;                /* threads per block */
    Th *th;                /* nt threads */
    Mem *mem;              /* by buffer id */
    IrInterp *aux;         /* evaluates layouts (placeholder vars) */
    uint32_t epoch;        /* barrier epoch of the current block */
    int64_t barriers;      /* barriers completed */
    const IrVar **tvars;   /* thread-index vars found in the body */
    int ntvars;            /* their number */
    const IrStmt **shfl;   /* statements with shfl_xor in their own expressions, sorted */
    int nshfl;             /* their number */
    IrTInterpBarrier *bars;/* barrier statistics (heap) */
    int nbars, barcap;     /* used / allocated */
    int cur_bar;           /* the barrier that began this epoch (index in bars), -1: none */
    bool cur_needed;       /* an access of this epoch conflicts with one of the epoch before it */
    const IrBuffer *ubuf;  /* a read of a never-written shared element, reported at the next barrier */
    int64_t uiv[MAXD];     /* its indices */
    int utid;              /* the reading thread */
    TsLoc uloc;            /* where */
    double *scratch;       /* T.gemm results (heap) */
    int64_t nscratch;      /* its size */
    int mma_lo;            /* the first thread of the warps of the T.gemm being run */
    Mbar *mbar;            /* the block's mbarriers initialized so far (heap) */
    int nmbar, mbarcap;    /* used / allocated */
};

TS_NORETURN static void rt_fail(IrTInterp *x, TsLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);
static void rt_fail(IrTInterp *x, TsLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_vfail_at(x->d, TS_ERR_RUNTIME, loc, fmt, ap);
}

static const char *loc_str(IrTInterp *x, TsLoc l) {
    return l.line ? ts_sprintf(x->a, "%d:%d", l.line, l.col) : "(no location)";
}

static const char *who(IrTInterp *x, int t) {
    if (t == ALL_THREADS) return "the block's T.gemm (all threads)";
    if (t == MANY_READERS) return "several threads";
    return ts_sprintf(x->a, "thread %d", t);
}

static const char *elem_str(IrTInterp *x, const IrBuffer *b, const int64_t *iv, int n) {
    TsBuf t = {0};
    ts_buf_printf(&t, "%s[", b->name);
    for (int i = 0; i < n; i++) ts_buf_printf(&t, i ? ", %lld" : "%lld", (long long)iv[i]);
    ts_buf_puts(&t, "]");
    const char *r = ts_strdup(x->a, ts_buf_str(&t));
    ts_buf_free(&t);
    return r;
}

static bool is_private(const IrBuffer *b) { return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR; }

/* ---- expression helpers --------------------------------------------------- */

/* A warp collective: shfl_xor of the reductions, or a warp primitive
 * (IR_WARP_*: T.shfl_*, votes, T.warp_reduce_*, T.sync_warp). */
static bool is_shfl(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_CALL &&
           (e->call.fn == IR_SHFL_XOR || (e->call.fn >= IR_WARP_SHFL && e->call.fn <= IR_WARP_SYNC));
}

/* The expressions a statement evaluates itself (not those of its body). */
static int stmt_exprs(const IrStmt *s, const IrExpr **out, int max) {
    int n = 0;
#define ADD(e) do { if ((e) && n < max) out[n++] = (e); } while (0)
    switch (s->kind) {
    case IR_S_FOR: ADD(s->for_.min); ADD(s->for_.extent); break;
    case IR_S_IF: ADD(s->if_.cond); break;
    case IR_S_WHILE: ADD(s->while_.cond); break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        for (int i = 0; i < s->store.nidx; i++) ADD(s->store.idx[i]);
        ADD(s->store.value);
        break;
    case IR_S_LET: ADD(s->let.value); break;
    case IR_S_EVAL: ADD(s->eval.e); break;
    case IR_S_PRINT: ADD(s->print.value); break;
    case IR_S_VCOPY:
        for (int i = 0; i < s->vcopy.ndi; i++) ADD(s->vcopy.didx[i]);
        for (int i = 0; i < s->vcopy.nsi; i++) ADD(s->vcopy.sidx[i]);
        ADD(s->vcopy.pred);
        break;
    case IR_S_TILEOP:
        for (int r = 0; r < s->op->nr; r++)
            for (int d = 0; d < s->op->r[r].ndim; d++) ADD(s->op->r[r].start[d]);
        ADD(s->op->value);
        break;
    default: break;
    }
#undef ADD
    return n;
}

static bool note_tvar(const IrExpr *e, void *ctx) {
    IrTInterp *x = ctx;
    if (e->kind == IR_E_VAR && e->var->kind == IR_VAR_THREAD_IDX) {
        for (int i = 0; i < x->ntvars; i++)
            if (x->tvars[i] == e->var) return false;
        const IrVar **nv = TS_NEWN(x->a, const IrVar *, x->ntvars + 1);
        if (x->ntvars) memcpy(nv, x->tvars, sizeof *nv * (size_t)x->ntvars);
        nv[x->ntvars++] = e->var;
        x->tvars = nv;
    }
    return false;
}

typedef TS_VEC(const IrStmt *) StmtVec;

/* Collect thread-index vars and the statements that shuffle. */
static void scan(IrTInterp *x, const IrStmt *s, StmtVec *shfl) {
    if (!s) return;
    const IrExpr *ex[64];
    int n = stmt_exprs(s, ex, 64);
    bool sh = false;
    for (int i = 0; i < n; i++) {
        (void)ir_expr_any(ex[i], note_tvar, x);
        sh |= ir_expr_any(ex[i], is_shfl, NULL);
    }
    if (sh) ts_vec_push(x->a, *shfl, s);
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) scan(x, s->seq.v[i], shfl);
        break;
    case IR_S_FOR: scan(x, s->for_.body, shfl); break;
    case IR_S_IF: scan(x, s->if_.then, shfl); scan(x, s->if_.else_, shfl); break;
    case IR_S_WHILE: scan(x, s->while_.body, shfl); break;
    case IR_S_ROLE: scan(x, s->role.body, shfl); break;
    default: break;
    }
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t p = (uintptr_t)*(const void *const *)a, q = (uintptr_t)*(const void *const *)b;
    return p < q ? -1 : p > q;
}

static bool shuffles(const IrTInterp *x, const IrStmt *s) {
    return x->nshfl && bsearch(&s, x->shfl, (size_t)x->nshfl, sizeof *x->shfl, cmp_ptr);
}

/* ---- memory ------------------------------------------------------------------- */

static double poison_of(const IrBuffer *b) { return ts_dtype_is_float(b->dt) ? NAN : -777777.0; }

static Mem *mem_of(IrTInterp *x, const IrBuffer *b, TsLoc loc) {
    if (b->id < 0 || b->id >= x->nid || x->mem[b->id].kind == MEM_NONE)
        rt_fail(x, loc, "interp: buffer %s is not one of the kernel's buffers", b->name);
    Mem *m = &x->mem[b->id];
    if (!m->data) rt_fail(x, loc, "interp: buffer %s has no data bound", b->name);
    return m;
}

static int64_t ev_int(IrTInterp *x, Th *t, const IrExpr *e);

/* Offset of element iv of m's buffer; out of bounds is an error. */
static int64_t offset(IrTInterp *x, Th *t, Mem *m, const int64_t *iv, int nidx, TsLoc loc) {
    const IrBuffer *b = m->b;
    if (nidx != b->ndim)
        rt_fail(x, loc, "interp: %s indexed with %d indices, has %d dims", b->name, nidx, b->ndim);
    int64_t off = 0, stride = 1;
    for (int d = nidx - 1; d >= 0; d--) {
        int64_t ext = ev_int(x, t, b->shape[d]);
        if (iv[d] < 0 || iv[d] >= ext)
            rt_fail(x, loc, "interp: out-of-bounds access %s: index %lld of dim %d is outside 0..%lld",
                    elem_str(x, b, iv, nidx), (long long)iv[d], d, (long long)ext - 1);
        int64_t st = b->strides ? ev_int(x, t, b->strides[d]) : stride;
        off += iv[d] * st;
        stride *= ext;
    }
    return off;
}

/* An access to m against the buffers that share its bytes (see Mem). */
static void alias_check(IrTInterp *x, int tid, Mem *m, TsLoc loc) {
    for (int i = 0; i < m->nalias; i++) {
        const Mem *o = &x->mem[m->alias[i]];
        if (o->apend)
            rt_fail(x, loc,
                    "interp: %s uses %s, which shares bytes with %s (plan_smem), while a cp.async copy into %s "
                    "is in flight",
                    who(x, tid), m->b->name, o->b->name, o->b->name);
        if (o->a_epoch == x->epoch && o->a_tid != tid)
            rt_fail(x, loc,
                    "interp: shared-memory race through reused bytes: %s uses %s, which shares bytes with %s "
                    "(plan_smem), and %s used %s at %s since the last barrier",
                    who(x, tid), m->b->name, o->b->name, who(x, o->a_tid), o->b->name, loc_str(x, o->a_loc));
        if (o->a_epoch && o->a_epoch + 1 == x->epoch && o->a_tid != tid) x->cur_needed = true;
    }
    m->a_tid = m->a_epoch == x->epoch && m->a_tid != tid ? MANY_READERS : tid;
    m->a_epoch = x->epoch;
    m->a_loc = loc;
}

static void shared_check(IrTInterp *x, int tid, Mem *m, int64_t off, const int64_t *iv, int mode, TsLoc loc) {
    Shadow *h = &m->sh[off];
    bool peek = mode == A_PEEK;
    if (peek) mode = A_READ;
    if (m->nalias) alias_check(x, tid, m, loc);
    const IrBuffer *b = m->b;
    if (h->pend)
        rt_fail(x, loc,
                "interp: %s %s %s while a cp.async copy into it (issued by thread %d at %s) is in flight: "
                "no async wait covering its group ran before",
                who(x, tid), mode == A_READ ? "reads" : "writes", elem_str(x, b, iv, b->ndim), h->pthread,
                loc_str(x, h->ploc));
    if (mode == A_ATOMIC && !h->init)
        rt_fail(x, loc, "interp: %s adds to %s, which nothing has written (uninitialized shared memory)",
                who(x, tid), elem_str(x, b, iv, b->ndim));
    if (mode == A_ATOMIC) return; /* atomics do not race with each other */
    if (mode == A_READ && !peek && !h->init && !x->ubuf) {
        /* maybe another thread writes it later in this epoch (a race, reported
         * then); if not, it is a poison read, reported at the next barrier */
        x->ubuf = b;
        memcpy(x->uiv, iv, sizeof(int64_t) * (size_t)b->ndim);
        x->utid = tid;
        x->uloc = loc;
    }
    /* the barrier that began this epoch separates this access from a
     * conflicting one of the epoch before: it is needed */
    if ((h->w_epoch + 1 == x->epoch && h->writer != tid) ||
        (mode == A_WRITE && ((h->r_epoch + 1 == x->epoch && h->reader != tid) ||
                             (h->r_epoch == x->epoch && h->pr_epoch + 1 == x->epoch && h->preader != tid))))
        x->cur_needed = true;
    /* a store of the value another thread stored there since the last
     * barrier (the 8 threads of a row storing its one validity flag): the
     * element holds it whichever lands last, no race (insert_sync accepts
     * only stores it proves to write one value: sync_same_value.c) */
    bool same = mode == A_WRITE_SAME;
    if (same) mode = A_WRITE;
    if (h->w_epoch == x->epoch && h->writer != tid && !same)
        rt_fail(x, loc,
                "interp: shared-memory race on %s: %s %s it after %s wrote it at %s, with no barrier between",
                elem_str(x, b, iv, b->ndim), who(x, tid), mode == A_READ ? "reads" : "writes",
                who(x, h->writer), loc_str(x, h->wloc));
    if (mode == A_READ) {
        if (h->r_epoch != x->epoch) {
            h->pr_epoch = h->r_epoch;
            h->preader = h->reader;
            h->r_epoch = x->epoch;
            h->reader = tid;
        } else if (h->reader != tid) {
            h->reader = MANY_READERS;
        }
        h->rloc = loc;
        return;
    }
    if (h->r_epoch == x->epoch && h->reader != tid)
        rt_fail(x, loc,
                "interp: shared-memory race on %s: %s writes it while %s read it (at %s) since the last barrier",
                elem_str(x, b, iv, b->ndim), who(x, tid), who(x, h->reader), loc_str(x, h->rloc));
    h->writer = tid;
    h->w_epoch = x->epoch;
    h->wloc = loc;
    h->init = 1;
}

/* The storage of element iv of b as seen by thread tid (ALL_THREADS: a
 * collective, which reads a fragment element from its first owner). */
static double *access(IrTInterp *x, Th *t, int tid, const IrBuffer *b, const int64_t *iv, int nidx, int mode,
                      TsLoc loc) {
    Mem *m = mem_of(x, b, loc);
    int64_t off = offset(x, t, m, iv, nidx, loc);
    switch (m->kind) {
    case MEM_GLOBAL: return m->data + off;
    case MEM_BLOCK: shared_check(x, tid, m, off, iv, mode, loc); return m->data + off;
    default: break;
    }
    int owner = tid;
    if (m->owner && !m->regs) {
        const int32_t *o = m->owner + off * m->rep;
        if (tid == ALL_THREADS) {
            owner = o[0];
        } else {
            int r = 0;
            while (r < m->rep && o[r] != tid) r++;
            if (r == m->rep)
                rt_fail(x, loc, "interp: thread %d %s %s, which its layout (%s) gives to thread %d", tid,
                        mode == A_READ ? "reads" : "writes", elem_str(x, b, iv, nidx),
                        b->layout->origin ? b->layout->origin : "fragment layout", o[0]);
        }
    } else if (tid == ALL_THREADS) {
        rt_fail(x, loc, "interp: a collective operand %s is private to each thread (no layout)", b->name);
    }
    uint8_t *ini = &m->init[(int64_t)owner * m->n + off];
    if (mode != A_WRITE && !*ini)
        rt_fail(x, loc, "interp: %s reads %s, which it has not written (uninitialized %s memory)", who(x, tid),
                elem_str(x, b, iv, nidx), ir_scope_name(b->scope));
    *ini = 1;
    return m->data + (int64_t)owner * m->n + off;
}

/* ---- evaluation ---------------------------------------------------------------- */

static double eval_in(IrTInterp *x, Th *t, const IrExpr *e);

/* Bounds, ownership, races and poison for every load in e, as thread t. */
static void prewalk(IrTInterp *x, Th *t, const IrExpr *e) {
    if (!e) return;
    switch (e->kind) {
    case IR_E_LOAD: {
        int64_t iv[MAXD];
        if (e->load.nidx > MAXD) rt_fail(x, e->loc, "interp: too many indices");
        for (int i = 0; i < e->load.nidx; i++) {
            prewalk(x, t, e->load.idx[i]);
            iv[i] = (int64_t)ir_interp_eval(t->in, e->load.idx[i]);
        }
        (void)access(x, t, t->id, e->load.buf, iv, e->load.nidx, A_READ, e->loc.line ? e->loc : t->sloc);
        return;
    }
    case IR_E_BIN:
        prewalk(x, t, e->bin.a);
        /* short-circuit and/or: b's loads happen only where a does not decide
         * (as with the targets' && and ||, and ir_interp_eval) */
        if (e->bin.op == IR_AND || e->bin.op == IR_OR) {
            bool a = ir_interp_eval(t->in, e->bin.a) != 0;
            if (a == (e->bin.op == IR_OR)) return;
        }
        prewalk(x, t, e->bin.b);
        return;
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST: prewalk(x, t, e->un.a); return;
    case IR_E_SELECT:
        /* only the taken side's loads happen (the targets' `?:`, and
         * ir_interp_eval): a race or a bad index in the other is none */
        prewalk(x, t, e->sel.cond);
        prewalk(x, t, ir_interp_eval(t->in, e->sel.cond) != 0 ? e->sel.a : e->sel.b);
        return;
    case IR_E_CALL:
        for (int i = 0; i < e->call.nargs; i++) prewalk(x, t, e->call.args[i]);
        return;
    default: return;
    }
}

static double shfl_value(IrTInterp *x, Th *t, const IrExpr *node);

/* A copy of e with its outermost shfl_xor nodes replaced by their values
 * for thread t: from t's memo when it has one for them, else computed. */
static const IrExpr *subst(IrTInterp *x, Th *t, const IrExpr *e) {
    if (!e || !ir_expr_any(e, is_shfl, NULL)) return e;
    if (is_shfl(e, NULL)) {
        double v = NAN;
        int j = 0;
        if (t->memo_on) {
            while (j < t->nmemo && t->memo_e[j] != e) j++;
            if (j == t->nmemo) rt_fail(x, e->loc, "interp: internal: shfl_xor without its lock-step value");
            v = t->memo_v[j];
        } else {
            v = shfl_value(x, t, e);
        }
        return ts_dtype_is_float(e->dt) ? ir_float(x->a, v, e->dt) : ir_int(x->a, (int64_t)v, e->dt);
    }
    IrExpr *c = TS_NEW(x->a, IrExpr);
    *c = *e;
    switch (e->kind) {
    case IR_E_LOAD:
        c->load.idx = TS_NEWN(x->a, IrExpr *, e->load.nidx);
        for (int i = 0; i < e->load.nidx; i++) c->load.idx[i] = (IrExpr *)subst(x, t, e->load.idx[i]);
        break;
    case IR_E_BIN:
        c->bin.a = (IrExpr *)subst(x, t, e->bin.a);
        c->bin.b = (IrExpr *)subst(x, t, e->bin.b);
        break;
    case IR_E_NEG:
    case IR_E_NOT:
    case IR_E_CAST: c->un.a = (IrExpr *)subst(x, t, e->un.a); break;
    case IR_E_SELECT:
        c->sel.cond = (IrExpr *)subst(x, t, e->sel.cond);
        c->sel.a = (IrExpr *)subst(x, t, e->sel.a);
        c->sel.b = (IrExpr *)subst(x, t, e->sel.b);
        break;
    case IR_E_CALL:
        c->call.args = TS_NEWN(x->a, IrExpr *, e->call.nargs);
        for (int i = 0; i < e->call.nargs; i++) c->call.args[i] = (IrExpr *)subst(x, t, e->call.args[i]);
        break;
    default: break;
    }
    return c;
}

/* Thread s's value of e (s at the same statement as t: lock-step). */
static double lane_eval(IrTInterp *x, Th *t, int s, const IrExpr *node, const IrExpr *e) {
    if (s >= x->nt)
        rt_fail(x, node->loc, "interp: a warp primitive: lane %d of warp %d reads thread %d, beyond the block's %d threads",
                t->id % 32, t->id / 32, s, x->nt);
    Th *o = &x->th[s];
    if (o != t && (o->state != TH_WARP || o->at != t->at))
        rt_fail(x, node->loc, "interp: a warp primitive: thread %d reads thread %d, which is not at this statement",
                t->id, s);
    int memo = o->memo_on;
    o->memo_on = 0;
    double v = eval_in(x, o, e);
    o->memo_on = memo;
    return v;
}

/* v as a value of dtype dt (rounded or wrapped as a store would). */
static double as_dtype(double v, TsDType dt) {
    switch (dt) {
    case TS_FLOAT32: return (double)(float)v;
    case TS_INT32: return (double)(int32_t)(uint32_t)(int64_t)v;
    case TS_UINT32: return (double)(uint32_t)(int64_t)v;
    default: return v;
    }
}

/* A warp primitive (IR_WARP_*) for thread t, by CUDA's rules: the source
 * lane of a shuffle within its width segment (its own value when outside
 * it), the ballot of the 32 lanes, a reduction as the butterfly the CUDA
 * target prints (offsets 16 .. 1, own op other, rounded at each step). */
static double warp_value(IrTInterp *x, Th *t, const IrExpr *node) {
    IrIntrinsic fn = node->call.fn;
    int lane = t->id % 32, base = t->id - lane;
    if (fn == IR_WARP_SYNC) return 0;
    if (fn == IR_WARP_BALLOT) {
        uint32_t m = (uint32_t)(int64_t)eval_in(x, t, node->call.args[0]), r = 0;
        for (int j = 0; j < 32; j++)
            if ((m >> j & 1u) && lane_eval(x, t, base + j, node, node->call.args[1]) != 0) r |= 1u << j;
        return (double)r;
    }
    if (fn >= IR_WARP_SUM) {
        double v[32], w[32];
        for (int j = 0; j < 32; j++) v[j] = lane_eval(x, t, base + j, node, node->call.args[0]);
        for (int o = 16; o > 0; o >>= 1) {
            for (int j = 0; j < 32; j++) {
                double a = v[j], b = v[j ^ o];
                switch (fn) {
                case IR_WARP_SUM: w[j] = a + b; break;
                case IR_WARP_MAX: w[j] = b > a ? b : a; break;
                case IR_WARP_MIN: w[j] = b < a ? b : a; break;
                case IR_WARP_BAND: w[j] = (double)((int64_t)a & (int64_t)b); break;
                default: w[j] = (double)((int64_t)a | (int64_t)b); break;
                }
            }
            for (int j = 0; j < 32; j++) v[j] = as_dtype(w[j], node->dt);
        }
        return v[lane];
    }
    int64_t d = (int64_t)eval_in(x, t, node->call.args[1]), w = (int64_t)eval_in(x, t, node->call.args[2]);
    int64_t in = lane & (w - 1), seg = lane - in, src = lane;
    switch (fn) {
    case IR_WARP_SHFL: src = seg + (d & (w - 1)); break;
    case IR_WARP_SHFL_UP: src = d >= 0 && in - d >= 0 ? lane - d : lane; break;
    case IR_WARP_SHFL_DOWN: src = d >= 0 && in + d < w ? lane + d : lane; break;
    default: src = lane ^ d; if (src < 0 || src >= seg + w) src = lane; break;
    }
    return lane_eval(x, t, base + (int)src, node, node->call.args[0]);
}

/* shfl_xor(value, mask) for thread t: value as lane (t ^ mask) computes it. */
static double shfl_value(IrTInterp *x, Th *t, const IrExpr *node) {
    if (node->call.fn != IR_SHFL_XOR) return warp_value(x, t, node);
    int64_t mask = (int64_t)eval_in(x, t, node->call.args[1]);
    int lane = t->id % 32, base = t->id - lane;
    int64_t src = lane ^ mask;
    int s = (src < 0 || src >= 32) ? t->id : base + (int)src;
    if (s >= x->nt)
        rt_fail(x, node->loc, "interp: shfl_xor: lane %d of warp %d reads lane %lld, beyond the block's %d threads",
                lane, t->id / 32, (long long)src, x->nt);
    Th *o = &x->th[s];
    if (o != t && (o->state != TH_WARP || o->at != t->at))
        rt_fail(x, node->loc, "interp: shfl_xor: thread %d reads thread %d, which is not at this statement", t->id,
                s);
    int memo = o->memo_on;
    o->memo_on = 0;
    double v = eval_in(x, o, node->call.args[0]);
    o->memo_on = memo;
    return v;
}

/* Value of e in thread t (loads checked first). */
static double eval_in(IrTInterp *x, Th *t, const IrExpr *e) {
    e = subst(x, t, e);
    prewalk(x, t, e);
    return ir_interp_eval(t->in, e);
}

static int64_t ev_int(IrTInterp *x, Th *t, const IrExpr *e) {
    if (!t) t = &x->th[0];
    int64_t c;
    if (ir_is_const_int(e, &c)) return c;
    return (int64_t)eval_in(x, t, e);
}

/* ---- the control stack ------------------------------------------------------------ */

static Frame *push(IrTInterp *x, Th *t, FrKind kind, const IrStmt *s, int ctx) {
    if (t->nfr == t->cap) {
        int nc = t->cap ? t->cap * 2 : 16;
        Frame *nf = realloc(t->fr, sizeof *nf * (size_t)nc);
        if (!nf) rt_fail(x, s->loc, "interp: out of memory");
        t->fr = nf;
        t->cap = nc;
    }
    Frame *f = &t->fr[t->nfr++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->s = s;
    f->ctx = ctx;
    return f;
}

static void bind_i(Th *t, const IrVar *v, int64_t val) { ir_interp_bind_var(t->in, v, (double)val); }

/* Wait at a barrier (explicit, or implied before/after s). */
static void wait_bar(IrTInterp *x, Th *t, const IrStmt *s, int tag) {
    for (int i = 0; i < t->nfr; i++) {
        const Frame *f = &t->fr[i];
        if (f->kind == FR_ROLE && s->barrier.id == 0 && (f->lo > 0 || f->lo + f->n < x->nt))
            rt_fail(x, s->loc,
                    "interp: block barrier inside the T.ws role of threads [%lld, %lld) (at %s): the other threads "
                    "of the block never reach it (deadlock); a role synchronizes with its named barrier",
                    (long long)f->lo, (long long)(f->lo + f->n), loc_str(x, f->s->loc));
        /* (a named barrier there counts only its threads: released once `count` wait) */
        if (f->kind == FR_ONCE && !s->barrier.id && !s->barrier.idv && (f->lo > 0 || f->lo + f->n < x->nt))
            rt_fail(x, s->loc,
                    "interp: %sbarrier inside the thread range [%lld, %lld) of a %d-thread block (the loop at %s): "
                    "the other threads never reach it (deadlock)",
                    tag == TAG_EXPLICIT ? "" : "implied ", (long long)f->lo, (long long)(f->lo + f->n), x->nt,
                    loc_str(x, f->s->loc));
    }
    t->state = TH_BAR;
    t->at = s;
    t->tag = tag;
    t->bar_id = s->barrier.idv ? (int)ev_int(x, t, s->barrier.idv) : s->barrier.id;
}

static void do_store(IrTInterp *x, Th *t, const IrStmt *s) {
    int64_t iv[MAXD];
    if (s->store.nidx > MAXD) rt_fail(x, s->loc, "interp: too many indices");
    for (int i = 0; i < s->store.nidx; i++) iv[i] = (int64_t)eval_in(x, t, s->store.idx[i]);
    prewalk(x, t, s->store.value);
    int mode = s->kind == IR_S_ATOMIC_ADD ? A_ATOMIC : A_WRITE;
    if (mode == A_WRITE && s->store.buf->scope == IR_SCOPE_SHARED && !s->store.bits) {
        Mem *m = mem_of(x, s->store.buf, s->loc);
        if (m->kind == MEM_BLOCK) {
            int64_t off = offset(x, t, m, iv, s->store.nidx, s->loc);
            const Shadow *h = &m->sh[off];
            if (h->init && h->w_epoch == x->epoch && h->writer != t->id && !h->pend &&
                ir_interp_round(eval_in(x, t, s->store.value), s->store.buf->dt) == m->data[off])
                mode = A_WRITE_SAME;
        }
    }
    (void)access(x, t, t->id, s->store.buf, iv, s->store.nidx, mode,
                 s->loc);
    ir_interp_run(t->in, s);
}

static void do_vcopy(IrTInterp *x, Th *t, const IrStmt *s) {
    const IrBuffer *db = s->vcopy.dst, *sb = s->vcopy.src;
    bool conv = db->dt != sb->dt; /* a converting copy: each element rounded to dst's dtype */
    if (conv && (!ir_vcopy_dtypes_ok(db->dt, sb->dt) || s->vcopy.async))
        rt_fail(x, s->loc, "interp: %svector copy from %s (%s) to %s (%s)", s->vcopy.async ? "async " : "", sb->name,
                ts_dtype_name(sb->dt), db->name, ts_dtype_name(db->dt));
    if (s->vcopy.ndi > MAXD || s->vcopy.nsi > MAXD || s->vcopy.ndi < 1 || s->vcopy.nsi < 1)
        rt_fail(x, s->loc, "interp: vector copy with %d/%d indices", s->vcopy.ndi, s->vcopy.nsi);
    bool pred = !s->vcopy.pred || eval_in(x, t, s->vcopy.pred) != 0;
    int64_t di[MAXD], si[MAXD];
    for (int i = 0; i < s->vcopy.ndi; i++) di[i] = (int64_t)eval_in(x, t, s->vcopy.didx[i]);
    for (int i = 0; i < s->vcopy.nsi; i++) si[i] = (int64_t)eval_in(x, t, s->vcopy.sidx[i]);
    if (s->vcopy.async && (db->scope != IR_SCOPE_SHARED || sb->scope != IR_SCOPE_GLOBAL))
        rt_fail(x, s->loc, "interp: cp.async from %s memory to %s memory (only global -> shared exists)",
                ir_scope_name(sb->scope), ir_scope_name(db->scope));
    for (int e = 0; e < s->vcopy.lanes; e++) {
        double v = 0;
        if (pred) v = *access(x, t, t->id, sb, si, s->vcopy.nsi, A_READ, s->loc);
        else if (db->scope == IR_SCOPE_GLOBAL) goto next;
        if (conv) v = ir_interp_round(v, db->dt);
        if (s->vcopy.async) {
            Mem *m = mem_of(x, db, s->loc);
            int64_t off = offset(x, t, m, di, s->vcopy.ndi, s->loc);
            Shadow *h = &m->sh[off];
            const char *el = NULL;
            if ((h->w_epoch == x->epoch && h->writer != t->id) || (h->r_epoch == x->epoch && h->reader != t->id))
                el = elem_str(x, db, di, s->vcopy.ndi);
            if (el)
                rt_fail(x, s->loc,
                        "interp: shared-memory race on %s: thread %d starts a cp.async into it while %s %s it "
                        "since the last barrier",
                        el, t->id, who(x, h->w_epoch == x->epoch && h->writer != t->id ? h->writer : h->reader),
                        h->w_epoch == x->epoch && h->writer != t->id ? "wrote" : "read");
            /* the copy may land any time from now: a barrier that ended
             * another thread's use of the element is needed */
            if ((h->w_epoch + 1 == x->epoch && h->writer != t->id) ||
                (h->r_epoch + 1 == x->epoch && h->reader != t->id) ||
                (h->r_epoch == x->epoch && h->pr_epoch + 1 == x->epoch && h->preader != t->id))
                x->cur_needed = true;
            if (m->nalias) alias_check(x, t->id, m, s->loc);
            h->pend++;
            m->apend++;
            h->pthread = t->id;
            h->ploc = s->loc;
            if (t->nas == t->ascap) {
                int nc = t->ascap ? t->ascap * 2 : 64;
                Async *na = realloc(t->as, sizeof *na * (size_t)nc);
                if (!na) rt_fail(x, s->loc, "interp: out of memory");
                t->as = na;
                t->ascap = nc;
            }
            t->as[t->nas++] = (Async){db->id, off, v, 0};
        } else {
            *access(x, t, t->id, db, di, s->vcopy.ndi, A_WRITE, s->loc) = v;
        }
    next:
        di[s->vcopy.ndi - 1]++;
        si[s->vcopy.nsi - 1]++;
    }
}

/* The thread's copies of its committed groups up to `upto` land now (a
 * write by this thread, checked as such); all: every copy in flight, the
 * ones not committed yet too. */
static void land_async(IrTInterp *x, Th *t, int upto, bool all, TsLoc loc) {
    int keep = 0;
    for (int i = 0; i < t->nas; i++) {
        Async a = t->as[i];
        if (!all && (a.group == 0 || a.group > upto)) {
            t->as[keep++] = a;
            continue;
        }
        Mem *m = &x->mem[a.buf];
        m->sh[a.off].pend--;
        m->apend--;
        int64_t iv[MAXD], rest = a.off;
        for (int d = m->b->ndim - 1; d >= 0; d--) {
            int64_t ext = ev_int(x, t, m->b->shape[d]);
            iv[d] = rest % ext;
            rest /= ext;
        }
        shared_check(x, t->id, m, a.off, iv, A_WRITE, loc);
        m->data[a.off] = a.val;
    }
    t->nas = keep;
}

/* cp.async.wait_group N: the thread's copies of all but its N newest
 * committed groups land. */
static void do_async_wait(IrTInterp *x, Th *t, const IrStmt *s) {
    land_async(x, t, t->committed - s->async_wait.pending, false, s->loc);
}

/* The two non-unit axes of a gemm operand region. */
typedef struct Operand {
    const IrBuffer *b;  /* the buffer */
    Mem *m;             /* its storage */
    bool regs;          /* registers by a layout: (d0, d1) are the layout's logical axes */
    int64_t start[MAXD];/* the region's start */
    int d0, d1;         /* row and column axes */
    int64_t e0, e1;     /* their extents */
    int lo;             /* registers: the first thread of the gemm's warps (a T.ws role's: its
                           layouts number the role's threads from 0) */
} Operand;

static Operand operand(IrTInterp *x, const IrRegion *r, const char *what, TsLoc loc) {
    Operand o;
    memset(&o, 0, sizeof o);
    o.b = r->buf;
    o.m = mem_of(x, r->buf, loc);
    o.d0 = o.d1 = -1;
    o.lo = x->mma_lo;
    if (o.m->regs) {
        if (o.m->lndim != 2)
            rt_fail(x, loc, "interp: T.gemm operand %s (%s) has a %d-dim layout", what, r->buf->name, o.m->lndim);
        o.regs = true;
        o.d0 = 0;
        o.d1 = 1;
        o.e0 = o.m->lshape[0];
        o.e1 = o.m->lshape[1];
        return o;
    }
    if (r->ndim > MAXD) rt_fail(x, loc, "interp: too many dims");
    /* the region's indices in the first thread of the gemm's warps (a T.ws
     * role's: its loop variables are that role's, thread 0 may be elsewhere) */
    Th *t0 = &x->th[x->mma_lo >= 0 && x->mma_lo < x->nt ? x->mma_lo : 0];
    for (int d = 0; d < r->ndim; d++) {
        o.start[d] = ev_int(x, t0, r->start[d]);
        int64_t e = ev_int(x, t0, r->extent[d]);
        if (e == 1) continue;
        if (o.d0 < 0) o.d0 = d, o.e0 = e;
        else if (o.d1 < 0) o.d1 = d, o.e1 = e;
        else rt_fail(x, loc, "interp: T.gemm operand %s (%s) has more than two axes", what, r->buf->name);
    }
    if (o.d1 < 0) rt_fail(x, loc, "interp: T.gemm operand %s (%s) is not a matrix", what, r->buf->name);
    return o;
}

/* Register of replica r of logical element (i, j) of a layout operand. */
static double *reg_of(IrTInterp *x, Mem *m, int lo, int64_t i, int64_t j, int r, bool reading, TsLoc loc) {
    int64_t q = (i * m->lshape[1] + j) * m->rep + r;
    int64_t at = ((int64_t)m->owner[q] + lo) * m->n + m->lflat[q];
    if (reading && !m->init[at])
        rt_fail(x, loc, "interp: the T.gemm reads %s's element [%lld, %lld] (register %d of thread %d), which was "
                "never written",
                m->b->name, (long long)i, (long long)j, m->lflat[q], m->owner[q] + lo);
    if (!reading) m->init[at] = 1;
    return m->data + at;
}

static double opnd(IrTInterp *x, const Operand *o, int64_t i, int64_t j, TsLoc loc) {
    if (o->regs) return *reg_of(x, o->m, o->lo, i, j, 0, true, loc);
    int64_t iv[MAXD];
    memcpy(iv, o->start, sizeof iv);
    iv[o->d0] += i;
    iv[o->d1] += j;
    return *access(x, NULL, ALL_THREADS, o->b, iv, o->b->ndim, A_READ, loc);
}

/* A tensor-core T.gemm, computed from the operands each thread holds:
 * C (+)= op(A) * op(B), products summed in double, rounded to C's dtype. */
static void do_gemm(IrTInterp *x, const IrStmt *s) {
    const IrTileOp *op = s->op;
    Operand A = operand(x, &op->r[0], "A", s->loc), B = operand(x, &op->r[1], "B", s->loc),
            C = operand(x, &op->r[2], "C", s->loc);
    int64_t M = C.e0, N = C.e1, K = op->trans_a ? A.e0 : A.e1;
    if ((op->trans_a ? A.e1 : A.e0) != M || (op->trans_b ? B.e1 : B.e0) != K || (op->trans_b ? B.e0 : B.e1) != N)
        rt_fail(x, s->loc, "interp: T.gemm operand shapes do not agree");
    if (C.b->dt != TS_FLOAT32 && C.b->dt != TS_FLOAT64)
        rt_fail(x, s->loc, "interp: tensor-core T.gemm accumulating in %s", ts_dtype_name(C.b->dt));
    if (x->nscratch < M * N) {
        free(x->scratch);
        x->scratch = malloc(sizeof *x->scratch * (size_t)(M * N > 0 ? M * N : 1));
        x->nscratch = x->scratch ? M * N : 0;
        if (!x->scratch) rt_fail(x, s->loc, "interp: out of memory");
    }
    double *res = x->scratch;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = op->clear_accum ? 0 : opnd(x, &C, i, j, s->loc);
            for (int64_t kk = 0; kk < K; kk++)
                acc += (op->trans_a ? opnd(x, &A, kk, i, s->loc) : opnd(x, &A, i, kk, s->loc)) *
                       (op->trans_b ? opnd(x, &B, j, kk, s->loc) : opnd(x, &B, kk, j, s->loc));
            res[i * N + j] = C.b->dt == TS_FLOAT32 ? (double)(float)acc : acc;
        }
    Mem *m = C.m;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            if (C.regs) {
                for (int r = 0; r < m->rep; r++) *reg_of(x, m, C.lo, i, j, r, false, s->loc) = res[i * N + j];
                continue;
            }
            int64_t iv[MAXD];
            memcpy(iv, C.start, sizeof iv);
            iv[C.d0] += i;
            iv[C.d1] += j;
            int64_t off = offset(x, NULL, m, iv, C.b->ndim, s->loc);
            double v = res[i * N + j];
            if (m->kind == MEM_BLOCK) {
                shared_check(x, ALL_THREADS, m, off, iv, A_WRITE, s->loc);
                m->data[off] = v;
            } else if (m->kind == MEM_THREAD && m->owner) {
                for (int r = 0; r < m->rep; r++) {
                    int64_t o = (int64_t)m->owner[off * m->rep + r] * m->n + off;
                    m->data[o] = v;
                    m->init[o] = 1;
                }
            } else {
                rt_fail(x, s->loc, "interp: T.gemm accumulator %s in %s memory", C.b->name,
                        ir_scope_name(C.b->scope));
            }
        }
}

/* The PRE or TAIL part of a split gemm (TsMmaPart): the fragment loads of
 * the first k16 step of its A and B regions (the next stage's, for TAIL),
 * checked for races and copies in flight like any read; their values are
 * never used (the whole product is computed at BODY, which reads the same
 * stage in the same barrier interval), and the last TAIL loads a stage
 * past the end, so they are not poison reads. */
static void gemm_step0(IrTInterp *x, const IrStmt *s) {
    const IrTileOp *op = s->op;
    Operand A = operand(x, &op->r[0], "A", s->loc), B = operand(x, &op->r[1], "B", s->loc);
    for (int w = 0; w < 2; w++) {
        const Operand *o = w ? &B : &A;
        if (o->regs) rt_fail(x, s->loc, "interp: a split T.gemm with operand %s in registers", o->b->name);
        /* the k axis: A's columns (rows if transposed), B's rows (columns if transposed) */
        bool krow = w ? !op->trans_b : op->trans_a;
        int64_t n0 = krow ? 16 : o->e0, n1 = krow ? o->e1 : 16;
        for (int64_t i = 0; i < n0; i++)
            for (int64_t j = 0; j < n1; j++) {
                int64_t iv[MAXD];
                memcpy(iv, o->start, sizeof iv);
                iv[o->d0] += i;
                iv[o->d1] += j;
                (void)access(x, NULL, ALL_THREADS, o->b, iv, o->b->ndim, A_PEEK, s->loc);
            }
    }
}

/* ---- warp specialization: mbarriers ----------------------------------------------
 *
 * An mbarrier (T.alloc_barrier, PTX ISA "mbarrier") counts the arrivals
 * still expected in its current phase; the last one completes the phase
 * (its parity flips) and the count starts again.  A wait for parity p
 * returns once the phase of parity p has completed, i.e. while the
 * current phase's parity is not p (so a wait for the phase before phase 0
 * returns at once).  A waiting thread stops (TH_MBAR) until an arrival of
 * another thread completes that phase; a wait nobody completes is a
 * deadlock, reported with the waiters.  Race checking: a completed phase
 * orders what every thread did before it before what any does after it (a
 * new epoch of the whole block), which is exact for the hand-over the
 * waiting threads see but also orders threads that did not wait: races
 * between two roles are not all found (their values still are checked by
 * the run).  Transaction bytes (expect_tx, TMA copies) are not modelled. */

static void close_epoch(IrTInterp *x);

static int mbar_find(IrTInterp *x, Th *t, const IrStmt *s, bool init) {
    Mem *m = mem_of(x, s->mbar.buf, s->loc);
    int64_t iv[1] = {ev_int(x, t, s->mbar.idx)};
    int64_t off = offset(x, t, m, iv, 1, s->loc);
    for (int i = 0; i < x->nmbar; i++)
        if (x->mbar[i].b == s->mbar.buf && x->mbar[i].off == off) return i;
    if (!init)
        rt_fail(x, s->loc, "interp: %s uses mbarrier %s before any thread initialized it", who(x, t->id),
                elem_str(x, s->mbar.buf, iv, 1));
    if (x->nmbar == x->mbarcap) {
        int nc = x->mbarcap ? 2 * x->mbarcap : 16;
        Mbar *nb = realloc(x->mbar, sizeof *nb * (size_t)nc);
        if (!nb) rt_fail(x, s->loc, "interp: out of memory");
        x->mbar = nb;
        x->mbarcap = nc;
    }
    memset(&x->mbar[x->nmbar], 0, sizeof *x->mbar);
    x->mbar[x->nmbar].b = s->mbar.buf;
    x->mbar[x->nmbar].off = off;
    return x->nmbar++;
}

static void do_mbar(IrTInterp *x, Th *t, const IrStmt *s) {
    int i = mbar_find(x, t, s, s->mbar.op == IR_MBAR_INIT);
    Mbar *mb = &x->mbar[i];
    switch (s->mbar.op) {
    case IR_MBAR_INIT:
        mb->count = mb->pending = ev_int(x, t, s->mbar.value);
        mb->phase = mb->tx = 0;
        mb->loc = s->loc;
        if (mb->count < 1) rt_fail(x, s->loc, "interp: mbarrier initialized with %lld arrivals", (long long)mb->count);
        return;
    case IR_MBAR_ARRIVE_ASYNC:
        /* cp.async.mbarrier.arrive + arrive: the phase cannot complete
         * before every copy the thread issued has landed; here they land
         * now, just before its arrival */
        land_async(x, t, 0, true, s->loc);
        /* fall through */
    case IR_MBAR_ARRIVE:
        if (--mb->pending > 0) return;
        /* the phase completes: what came before it is ordered before what follows */
        mb->phase++;
        mb->pending = mb->count;
        close_epoch(x);
        x->epoch++;
        return;
    case IR_MBAR_EXPECT_TX:
        rt_fail(x, s->loc, "interp: mbarrier expect_tx (TMA transaction bytes) is not modelled");
    case IR_MBAR_ARRIVE_ONE: /* partition_threads made it one thread's ARRIVE */
        rt_fail(x, s->loc, "interp: a group's single mbarrier arrive in thread-level IR");
    case IR_MBAR_WAIT: {
        int p = (int)(ev_int(x, t, s->mbar.value) & 1);
        if ((mb->phase & 1) != p) return;
        t->state = TH_MBAR;
        t->at = s;
        t->mb = i;
        t->mb_parity = p;
        return;
    }
    }
}

/* A copy of s whose own expressions have this lane's shuffled values in. */
static const IrStmt *subst_own(IrTInterp *x, Th *t, const IrStmt *s) {
    IrStmt *c = TS_NEW(x->a, IrStmt);
    *c = *s;
#define SUB(e) ((IrExpr *)subst(x, t, (e)))
    switch (s->kind) {
    case IR_S_FOR: c->for_.min = SUB(s->for_.min); c->for_.extent = SUB(s->for_.extent); break;
    case IR_S_IF: c->if_.cond = SUB(s->if_.cond); break;
    case IR_S_WHILE: rt_fail(x, s->loc, "interp: shfl_xor in a while condition is not supported");
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        c->store.idx = TS_NEWN(x->a, IrExpr *, s->store.nidx);
        for (int i = 0; i < s->store.nidx; i++) c->store.idx[i] = SUB(s->store.idx[i]);
        c->store.value = SUB(s->store.value);
        break;
    case IR_S_LET: c->let.value = SUB(s->let.value); break;
    case IR_S_EVAL: c->eval.e = SUB(s->eval.e); break;
    case IR_S_PRINT: c->print.value = SUB(s->print.value); break;
    case IR_S_VCOPY:
        c->vcopy.didx = TS_NEWN(x->a, IrExpr *, s->vcopy.ndi);
        c->vcopy.sidx = TS_NEWN(x->a, IrExpr *, s->vcopy.nsi);
        for (int i = 0; i < s->vcopy.ndi; i++) c->vcopy.didx[i] = SUB(s->vcopy.didx[i]);
        for (int i = 0; i < s->vcopy.nsi; i++) c->vcopy.sidx[i] = SUB(s->vcopy.sidx[i]);
        c->vcopy.pred = SUB(s->vcopy.pred);
        break;
    default: rt_fail(x, s->loc, "interp: shfl_xor in this statement is not supported");
    }
#undef SUB
    return c;
}


static void unwind(IrTInterp *x, Th *t, const IrStmt *s, bool brk) {
    while (t->nfr) {
        Frame *f = &t->fr[t->nfr - 1];
        if (f->kind == FR_LOOP || f->kind == FR_WHILE || f->kind == FR_ONCE) {
            if (brk) t->nfr--;
            return;
        }
        t->nfr--;
    }
    rt_fail(x, s->loc, "interp: %s outside a loop", brk ? "break" : "continue");
}

static void enter(IrTInterp *x, Th *t, const IrStmt *s, int ctx) {
    if (!s) return;
    t->sloc = s->loc;
    if (x->nshfl && shuffles(x, s)) {
        if (!(t->memo_on && t->memo_s == s)) {
            t->state = TH_WARP;
            t->at = s;
            t->at_ctx = ctx;
            return;
        }
        s = subst_own(x, t, s);
        t->memo_on = 0;
    }
    switch (s->kind) {
    case IR_S_SEQ: push(x, t, FR_SEQ, s, ctx); return;
    case IR_S_FOR: {
        if (s->for_.kind == IR_FOR_THREAD) {
            int64_t lo = ev_int(x, t, s->for_.min), n = ev_int(x, t, s->for_.extent);
            Frame *f = push(x, t, FR_ONCE, s, CTX_THREAD);
            f->lo = lo;
            f->n = n;
            f->i = (t->id >= lo && t->id < lo + n) ? 0 : 1;
            if (!f->i) bind_i(t, s->for_.var, t->id);
            return;
        }
        int64_t lo = ev_int(x, t, s->for_.min), n = ev_int(x, t, s->for_.extent);
        Frame *f = push(x, t, FR_LOOP, s, ctx);
        f->lo = lo;
        f->n = n;
        return;
    }
    case IR_S_IF:
        enter(x, t, eval_in(x, t, s->if_.cond) != 0 ? s->if_.then : s->if_.else_, ctx);
        return;
    case IR_S_WHILE:
        push(x, t, FR_WHILE, s, ctx);
        return;
    case IR_S_BREAK: unwind(x, t, s, true); return;
    case IR_S_CONTINUE: unwind(x, t, s, false); return;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        do_store(x, t, s);
        return;
    case IR_S_LET:
        prewalk(x, t, s->let.value);
        ir_interp_run(t->in, s);
        return;
    case IR_S_ALLOC: {
        Mem *m = mem_of(x, s->alloc.buf, s->loc);
        if (m->kind == MEM_THREAD && (!m->owner || m->regs)) {
            double p = poison_of(m->b);
            for (int64_t i = 0; i < m->n; i++) m->data[(int64_t)t->id * m->n + i] = p;
            memset(m->init + (int64_t)t->id * m->n, 0, (size_t)m->n);
        }
        return;
    }
    case IR_S_EVAL: (void)eval_in(x, t, s->eval.e); return;
    case IR_S_PRINT:
        prewalk(x, t, s->print.value);
        ir_interp_run(t->in, s);
        return;
    case IR_S_TILEOP:
        if (s->op->kind != TS_OP_GEMM || (s->op->inst != TS_OP_INST_MMA_SYNC && s->op->inst != TS_OP_INST_WGMMA))
            rt_fail(x, s->loc, "interp: tile operator %s was not lowered", ts_op_name(s->op->kind));
        t->state = TH_COLL;
        t->at = s;
        return;
    case IR_S_BARRIER: wait_bar(x, t, s, TAG_EXPLICIT); return;
    case IR_S_VCOPY: do_vcopy(x, t, s); return;
    case IR_S_ASYNC_COMMIT:
        t->committed++;
        for (int i = 0; i < t->nas; i++)
            if (!t->as[i].group) t->as[i].group = t->committed;
        return;
    case IR_S_ASYNC_WAIT: do_async_wait(x, t, s); return;
    case IR_S_MBAR: do_mbar(x, t, s); return;
    case IR_S_ROLE: {
        Frame *f = push(x, t, FR_ROLE, s, CTX_UNIFORM);
        f->lo = s->role.lo;
        f->n = s->role.n;
        f->i = t->id >= f->lo && t->id < f->lo + f->n ? 0 : 1;
        return;
    }
    }
    rt_fail(x, s->loc, "interp: unknown statement kind %d", (int)s->kind);
}

/* Run t until it waits or finishes. */
static void run_thread(IrTInterp *x, Th *t) {
    while (t->state == TH_RUN) {
        if (!t->nfr) {
            t->state = TH_DONE;
            return;
        }
        Frame *f = &t->fr[t->nfr - 1];
        const IrStmt *s = f->s;
        t->sloc = s->loc;
        switch (f->kind) {
        case FR_SEQ:
            if (f->i < s->seq.n) enter(x, t, s->seq.v[f->i++], f->ctx);
            else t->nfr--;
            break;
        case FR_LOOP:
            if (f->i < f->n) {
                bind_i(t, s->for_.var, f->lo + f->i);
                f->i++;
                enter(x, t, s->for_.body, f->ctx);
            } else {
                t->nfr--;
            }
            break;
        case FR_ONCE:
            if (f->i == 0) {
                f->i = 1;
                enter(x, t, s->for_.body, CTX_THREAD);
            } else {
                t->nfr--;
            }
            break;
        case FR_ROLE:
            if (f->i == 0) {
                f->i = 1;
                enter(x, t, s->role.body, CTX_UNIFORM);
            } else {
                t->nfr--;
            }
            break;
        case FR_WHILE: {
            int ctx = f->ctx;
            if (eval_in(x, t, s->while_.cond) != 0) enter(x, t, s->while_.body, ctx);
            else t->nfr--;
            break;
        }
        }
    }
}

static const char *describe(IrTInterp *x, const Th *t) {
    switch (t->state) {
    case TH_DONE: return "has finished";
    case TH_COLL: return ts_sprintf(x->a, "waits at the T.gemm at %s", loc_str(x, t->at->loc));
    case TH_WARP: return ts_sprintf(x->a, "waits at the shfl_xor at %s", loc_str(x, t->at->loc));
    case TH_MBAR:
        return ts_sprintf(x->a, "waits for the phase of parity %d of mbarrier %s (element %lld, %lld of %lld "
                          "arrivals missing) at %s",
                          t->mb_parity, x->mbar[t->mb].b->name, (long long)x->mbar[t->mb].off,
                          (long long)x->mbar[t->mb].pending, (long long)x->mbar[t->mb].count, loc_str(x, t->at->loc));
    default:
        return ts_sprintf(x->a, "waits at the barrier at %s", loc_str(x, t->at->loc));
    }
}

static bool same_wait(const Th *a, const Th *b) {
    return a->state == b->state && (a->state == TH_DONE || (a->at == b->at && a->tag == b->tag));
}

TS_NORETURN static void deadlock(IrTInterp *x) {
    const Th *r = NULL, *o = NULL;
    for (int i = 0; i < x->nt && !r; i++)
        if (x->th[i].state == TH_WARP) r = &x->th[i];
    if (r) {
        int base = r->id - r->id % 32;
        for (int i = base; i < base + 32 && i < x->nt && !o; i++)
            if (!same_wait(&x->th[i], r)) o = &x->th[i];
    } else {
        for (int i = 0; i < x->nt && !r; i++)
            if (x->th[i].state != TH_DONE) r = &x->th[i];
        for (int i = 0; i < x->nt && !o; i++)
            if (!same_wait(&x->th[i], r)) o = &x->th[i];
    }
    if (!r || !o) rt_fail(x, (TsLoc){0}, "interp: internal: no deadlock to report");
    rt_fail(x, r->at->loc, "interp: deadlock: thread %d %s but thread %d %s", r->id, describe(x, r), o->id,
            describe(x, o));
}

static void lockstep(IrTInterp *x, int base, int end) {
    const IrStmt *s = x->th[base].at;
    const IrExpr *ex[64];
    int n = stmt_exprs(s, ex, 64);
    TS_VEC(const IrExpr *) nodes = {0};
    for (int i = 0; i < n; i++) {
        /* outermost shfl nodes of each expression, by a small explicit walk */
        const IrExpr *stack[256];
        int sp = 0;
        stack[sp++] = ex[i];
        while (sp) {
            const IrExpr *e = stack[--sp];
            if (!e) continue;
            if (is_shfl(e, NULL)) {
                ts_vec_push(x->a, nodes, e);
                continue;
            }
            if (sp > 240) rt_fail(x, s->loc, "interp: expression too deep for a warp collective");
            switch (e->kind) {
            case IR_E_LOAD:
                for (int j = 0; j < e->load.nidx && sp < 250; j++) stack[sp++] = e->load.idx[j];
                break;
            case IR_E_BIN: stack[sp++] = e->bin.a; stack[sp++] = e->bin.b; break;
            case IR_E_NEG: case IR_E_NOT: case IR_E_CAST: stack[sp++] = e->un.a; break;
            case IR_E_SELECT: stack[sp++] = e->sel.cond; stack[sp++] = e->sel.a; stack[sp++] = e->sel.b; break;
            case IR_E_CALL:
                for (int j = 0; j < e->call.nargs && sp < 250; j++) stack[sp++] = e->call.args[j];
                break;
            default: break;
            }
        }
    }
    for (int l = base; l < end; l++) {
        Th *t = &x->th[l];
        free(t->memo_v);
        t->memo_v = malloc(sizeof(double) * (size_t)(nodes.n ? nodes.n : 1));
        if (!t->memo_v) rt_fail(x, s->loc, "interp: out of memory");
        t->memo_e = nodes.v;
        t->nmemo = nodes.n;
        t->memo_on = 0;
        for (int j = 0; j < nodes.n; j++) t->memo_v[j] = shfl_value(x, t, nodes.v[j]);
    }
    for (int l = base; l < end; l++) {
        Th *t = &x->th[l];
        t->memo_on = 1;
        t->memo_s = s;
    }
    for (int l = base; l < end; l++) {
        Th *t = &x->th[l];
        t->state = TH_RUN;
        t->memo_on = 1;
        enter(x, t, s, t->at_ctx);
        t->memo_on = 0;
    }
}

static void report_uninit(IrTInterp *x) {
    if (x->ubuf)
        rt_fail(x, x->uloc, "interp: %s reads %s, which nothing has written (uninitialized shared memory)",
                who(x, x->utid), elem_str(x, x->ubuf, x->uiv, x->ubuf->ndim));
}

/* The epoch that the barrier cur_bar began ends: count it. */
static void close_epoch(IrTInterp *x) {
    if (x->cur_bar >= 0) {
        x->bars[x->cur_bar].completed++;
        x->bars[x->cur_bar].needed += x->cur_needed;
    }
    x->cur_bar = -1;
    x->cur_needed = false;
}

/* A barrier (s, tag) completes: a new epoch. */
static void new_epoch(IrTInterp *x, const IrStmt *s, int tag) {
    close_epoch(x);
    int i = 0;
    while (i < x->nbars && !(x->bars[i].stmt == s && x->bars[i].implied == tag)) i++;
    if (i == x->nbars) {
        if (x->nbars == x->barcap) {
            int nc = x->barcap ? x->barcap * 2 : 16;
            IrTInterpBarrier *nb = realloc(x->bars, sizeof *nb * (size_t)nc);
            if (!nb) rt_fail(x, s->loc, "interp: out of memory");
            x->bars = nb;
            x->barcap = nc;
        }
        x->bars[x->nbars++] = (IrTInterpBarrier){s, tag, 0, 0};
    }
    x->cur_bar = i;
    x->epoch++;
    x->barriers++;
}

/* Synchronization of part of the block (a T.ws role's): a tensor-core gemm
 * whose warps are recorded (IrTileOp.mma_lo/mma_threads) runs once all of
 * its threads wait at it; a named barrier (id > 0) completes once `count`
 * threads wait at barriers of its id, as bar.sync counts them.  True if
 * one was released. */
static bool part_sync(IrTInterp *x) {
    for (int i = 0; i < x->nt; i++) {
        Th *t = &x->th[i];
        if (t->state == TH_COLL && t->at->op->mma_threads) {
            const IrTileOp *op = t->at->op;
            int lo = op->mma_lo, hi = op->mma_lo + op->mma_threads;
            if (i != lo || hi > x->nt) {
                if (i < lo || i >= hi)
                    rt_fail(x, t->at->loc, "interp: thread %d reaches the T.gemm of the warps of threads [%d, %d)",
                            i, lo, hi);
                continue;
            }
            bool all = true;
            for (int j = lo; j < hi && all; j++) all = x->th[j].state == TH_COLL && x->th[j].at == t->at;
            if (!all) continue;
            x->mma_lo = lo;
            if (op->mma_part == TS_MMA_PRE || op->mma_part == TS_MMA_TAIL) gemm_step0(x, t->at);
            else do_gemm(x, t->at);
            x->mma_lo = 0;
            for (int j = lo; j < hi; j++) x->th[j].state = TH_RUN;
            return true;
        }
        if (t->state == TH_BAR && t->bar_id) {
            int id = t->bar_id, need = t->at->barrier.count, n = 0;
            for (int j = 0; j < x->nt; j++)
                if (x->th[j].state == TH_BAR && x->th[j].bar_id == id) {
                    n++;
                    if (x->th[j].at->barrier.count != need)
                        rt_fail(x, t->at->loc, "interp: named barrier %d waited for by %d threads here and %d at %s", id,
                                need, x->th[j].at->barrier.count, loc_str(x, x->th[j].at->loc));
                }
            if (n < need) continue;
            if (n > need)
                rt_fail(x, t->at->loc, "interp: %d threads wait at named barrier %d of %d threads", n, id, need);
            new_epoch(x, t->at, t->tag);
            for (int j = 0; j < x->nt; j++)
                if (x->th[j].state == TH_BAR && x->th[j].bar_id == id) x->th[j].state = TH_RUN;
            return true;
        }
    }
    return false;
}

static void schedule(IrTInterp *x) {
    for (;;) {
        for (int i = 0; i < x->nt; i++) run_thread(x, &x->th[i]);
        report_uninit(x);
        int ndone = 0, nwarp = 0;
        for (int i = 0; i < x->nt; i++) {
            ndone += x->th[i].state == TH_DONE;
            nwarp += x->th[i].state == TH_WARP;
        }
        if (ndone == x->nt) {
            close_epoch(x);
            return;
        }
        bool progress = false;
        for (int base = 0; nwarp && base < x->nt; base += 32) {
            int end = base + 32 < x->nt ? base + 32 : x->nt;
            bool all = true;
            for (int i = base; i < end && all; i++)
                all = x->th[i].state == TH_WARP && x->th[i].at == x->th[base].at;
            if (all) {
                lockstep(x, base, end);
                progress = true;
            }
        }
        if (progress) continue;
        /* mbarrier waits whose phase has completed */
        for (int i = 0; i < x->nt; i++) {
            Th *t = &x->th[i];
            if (t->state == TH_MBAR && (x->mbar[t->mb].phase & 1) != t->mb_parity) {
                t->state = TH_RUN;
                progress = true;
            }
        }
        if (progress) continue;
        if (part_sync(x)) continue;
        x->mma_lo = 0;
        const Th *t0 = &x->th[0];
        bool same = t0->state == TH_BAR || t0->state == TH_COLL;
        for (int i = 1; i < x->nt && same; i++) same = same_wait(&x->th[i], t0);
        if (!same) deadlock(x);
        if (t0->state == TH_BAR) {
            new_epoch(x, t0->at, t0->tag);
        } else if (t0->at->op->mma_part == TS_MMA_PRE || t0->at->op->mma_part == TS_MMA_TAIL) {
            gemm_step0(x, t0->at);
        } else {
            do_gemm(x, t0->at);
        }
        for (int i = 0; i < x->nt; i++) x->th[i].state = TH_RUN;
    }
}

/* ---- setup: buffers, layouts, swizzles ------------------------------------------- */

static void fail_layout(IrTInterp *x, const IrBuffer *b, const char *fmt, ...) TS_PRINTF(3, 4);
static void fail_layout(IrTInterp *x, const IrBuffer *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    TsBuf t = {0};
    ts_buf_printf(&t, "interp: fragment %s: ", b->name);
    ts_buf_vprintf(&t, fmt, ap); /* no fixed buffer: the message is never cut */
    va_end(ap);
    const char *m = ts_strdup(x->a, ts_buf_str(&t));
    ts_buf_free(&t);
    rt_fail(x, b->loc, "%s", m);
}

/* Element e of a row-major shape as indices. */
static void unflatten(int64_t e, const int64_t *shape, int ndim, int64_t *iv) {
    for (int d = ndim - 1; d >= 0; d--) {
        iv[d] = shape[d] ? e % shape[d] : 0;
        e = shape[d] ? e / shape[d] : 0;
    }
}

static const char *lelem(IrTInterp *x, const Mem *m, int64_t e) {
    int64_t iv[MAXD];
    unflatten(e, m->lshape, m->lndim, iv);
    return elem_str(x, m->b, iv, m->lndim);
}

/* Owner and register tables of a layout, with its checks: every element
 * on `replicate` distinct threads of the block, no two elements (or
 * replicas) in one register of one thread, registers inside the buffer;
 * where the layout has its inverse (thread, register) -> element, the two
 * directions agree and every element is held exactly `replicate` times. */
static void setup_layout(IrTInterp *x, Mem *m) {
    const IrBuffer *b = m->b;
    const IrLayout *l = b->layout;
    int rep = l->replicate > 0 ? l->replicate : 1;
    if (l->ndim < 1 || l->ndim > MAXD || l->nlocal > MAXD || l->nlocal < 0)
        fail_layout(x, b, "layout has %d dims and %d local digits", l->ndim, l->nlocal);
    m->lndim = l->ndim;
    m->lsize = 1;
    for (int d = 0; d < l->ndim; d++) {
        m->lshape[d] = m->regs ? (d < 4 ? l->shape[d] : 0) : ev_int(x, NULL, b->shape[d]);
        m->lsize *= m->lshape[d];
    }
    if (!m->regs && l->ndim != b->ndim) fail_layout(x, b, "layout has %d dims, the buffer %d", l->ndim, b->ndim);
    if (m->lsize <= 0 || m->lsize > ((int64_t)1 << 24)) fail_layout(x, b, "layout covers %lld elements", (long long)m->lsize);
    m->rep = rep;
    m->owner = malloc(sizeof(int32_t) * (size_t)(m->lsize * rep));
    m->lflat = malloc(sizeof(int32_t) * (size_t)(m->lsize * rep));
    if (!m->owner || !m->lflat) rt_fail(x, b->loc, "interp: out of memory");
    int64_t *digits = TS_NEWN(x->a, int64_t, m->lsize * rep * (l->nlocal ? l->nlocal : 1));
    int64_t ext[MAXD] = {0};
    bool given = l->nlocal <= 4;
    for (int j = 0; j < l->nlocal && given; j++) given = l->local_shape[j] > 0;
    for (int64_t e = 0; e < m->lsize; e++) {
        int64_t iv[MAXD];
        unflatten(e, m->lshape, m->lndim, iv);
        for (int d = 0; d < l->ndim; d++) ir_interp_bind_var(x->aux, l->in[d], (double)iv[d]);
        for (int r = 0; r < rep; r++) {
            if (l->rep) ir_interp_bind_var(x->aux, l->rep, (double)r);
            int64_t th = (int64_t)ir_interp_eval(x->aux, l->thread);
            if (th < 0 || th >= x->nt)
                fail_layout(x, b, "element %s is given to thread %lld, outside the block's %d threads: no thread "
                            "of the block holds it",
                            lelem(x, m, e), (long long)th, x->nt);
            for (int r2 = 0; r2 < r; r2++)
                if (m->owner[e * rep + r2] == th)
                    fail_layout(x, b, "element %s is held twice by thread %lld (replicas %d and %d)", lelem(x, m, e),
                                (long long)th, r2, r);
            m->owner[e * rep + r] = (int32_t)th;
            for (int j = 0; j < l->nlocal; j++) {
                int64_t v = (int64_t)ir_interp_eval(x->aux, l->local[j]);
                if (v < 0 || (given && v >= l->local_shape[j]))
                    fail_layout(x, b, "element %s has local digit %d = %lld, outside its extent", lelem(x, m, e), j,
                                (long long)v);
                digits[(e * rep + r) * l->nlocal + j] = v;
                if (!given && v + 1 > ext[j]) ext[j] = v + 1;
            }
        }
    }
    for (int j = 0; j < l->nlocal && given; j++) ext[j] = l->local_shape[j];
    int64_t slots = 1;
    for (int j = 0; j < l->nlocal; j++) slots *= ext[j];
    if (m->regs && slots > m->n)
        fail_layout(x, b, "layout needs %lld registers per thread, the buffer has %lld", (long long)slots,
                    (long long)m->n);
    if (slots > ((int64_t)1 << 26) / x->nt) fail_layout(x, b, "layout's local index space is too large to check");
    int64_t *slot = TS_NEWN(x->a, int64_t, slots * x->nt);
    for (int64_t i = 0; i < slots * x->nt; i++) slot[i] = -1;
    for (int64_t q = 0; q < m->lsize * rep; q++) {
        int64_t flat = 0;
        for (int j = 0; j < l->nlocal; j++) flat = flat * ext[j] + digits[q * l->nlocal + j];
        m->lflat[q] = (int32_t)flat;
        int64_t at = (int64_t)m->owner[q] * slots + flat;
        if (slot[at] >= 0)
            fail_layout(x, b, "elements %s and %s are both held by thread %d at local index %lld: one register "
                        "owned twice",
                        lelem(x, m, slot[at] / rep), lelem(x, m, q / rep), m->owner[q], (long long)flat);
        slot[at] = q;
    }
    /* the inverse map, where the layout has one */
    if (!l->tv_thread || !l->tv_digit || !l->index || l->nthreads <= 0 || !given) return;
    int32_t *cnt = TS_NEWN(x->a, int32_t, m->lsize);
    int nth = l->nthreads < x->nt ? l->nthreads : x->nt;
    for (int th = 0; th < nth; th++) {
        ir_interp_bind_var(x->aux, l->tv_thread, (double)th);
        for (int64_t f = 0; f < slots; f++) {
            int64_t dg[MAXD], rest = f;
            for (int j = l->nlocal - 1; j >= 0; j--) {
                dg[j] = rest % ext[j];
                rest /= ext[j];
            }
            for (int j = 0; j < l->nlocal; j++) ir_interp_bind_var(x->aux, l->tv_digit[j], (double)dg[j]);
            int64_t e = 0;
            bool in = true;
            for (int d = 0; d < l->ndim; d++) {
                int64_t v = (int64_t)ir_interp_eval(x->aux, l->index[d]);
                in = in && v >= 0 && v < m->lshape[d];
                e = e * m->lshape[d] + v;
            }
            if (!in) continue; /* this thread holds nothing there */
            int64_t q = slot[(int64_t)th * slots + f];
            if (q < 0 || q / rep != e)
                fail_layout(x, b, "the inverse map puts %s in register %lld of thread %d, the forward map %s", lelem(x, m, e),
                            (long long)f, th,
                            q < 0 ? "puts nothing there" : ts_sprintf(x->a, "puts %s there", lelem(x, m, q / rep)));
            cnt[e]++;
        }
    }
    for (int64_t e = 0; e < m->lsize; e++)
        if (cnt[e] != rep)
            fail_layout(x, b, "by the inverse map, element %s is held by %d threads, not %d%s", lelem(x, m, e), cnt[e],
                        rep, cnt[e] ? "" : " (owned by no thread)");
}

static void check_swizzle(IrTInterp *x, const IrBuffer *b, int64_t n) {
    const IrSwizzle *z = &b->swizzle;
    if (z->kind == IR_SWIZZLE_NONE) return;
    if (z->bits < 0 || z->base < 0 || z->shift < 0 || z->bits + z->base + z->shift > 40)
        rt_fail(x, b->loc, "interp: shared buffer %s: bad swizzle <%d, %d, %d>", b->name, z->bits, z->base, z->shift);
    uint8_t *seen = calloc((size_t)n, 1);
    if (!seen) rt_fail(x, b->loc, "interp: out of memory");
    if (z->lblk > 0 && (z->rows <= 0 || z->lblk > z->lcols || z->lcols > 30 || n % (z->rows << z->lcols)))
        rt_fail(x, b->loc, "interp: shared buffer %s: column blocks of a swizzle that do not tile it", b->name);
    for (int64_t o = 0; o < n; o++) {
        int64_t p = ir_swizzle_apply(z, o);
        if (p < 0 || p >= n || seen[p]) {
            free(seen);
            rt_fail(x, b->loc,
                    "interp: shared buffer %s: swizzle <%d, %d, %d> is not a bijection on its %lld elements "
                    "(offset %lld maps to %lld)",
                    b->name, z->bits, z->base, z->shift, (long long)n, (long long)o, (long long)p);
        }
        seen[p] = 1;
    }
    free(seen);
}

static void setup_buffer(IrTInterp *x, const IrBuffer *b) {
    Mem *m = &x->mem[b->id];
    m->b = b;
    m->rep = 1;
    if (b->addr) rt_fail(x, b->loc, "interp: T.make_tensor buffer %s is at a run-time address (run it on the C or CUDA target)", b->name);
    if (b->scope == IR_SCOPE_GLOBAL) {
        m->kind = MEM_GLOBAL;
        return;
    }
    int64_t n = 1, shape[MAXD];
    if (b->ndim > MAXD) rt_fail(x, b->loc, "interp: %s has too many dims", b->name);
    for (int d = 0; d < b->ndim; d++) {
        if (!ir_is_const_int(b->shape[d], &shape[d]) || shape[d] < 0)
            rt_fail(x, b->loc, "interp: %s buffer %s has a non-constant extent", ir_scope_name(b->scope), b->name);
        n *= shape[d];
    }
    m->n = n;
    bool per_thread = is_private(b) || (b->scope == IR_SCOPE_FRAGMENT && b->layout);
    m->regs = is_private(b) && b->layout;
    size_t cnt = (size_t)(per_thread ? n * x->nt : n);
    m->data = malloc(sizeof(double) * (cnt ? cnt : 1));
    if (!m->data) rt_fail(x, b->loc, "interp: out of memory");
    if (per_thread) {
        m->kind = MEM_THREAD;
        m->init = calloc(cnt ? cnt : 1, 1);
        if (!m->init) rt_fail(x, b->loc, "interp: out of memory");
        for (int t = 0; t < x->nt; t++) ir_interp_bind_storage(x->th[t].in, b, m->data + (int64_t)t * n, n);
        if (b->layout) setup_layout(x, m);
    } else {
        m->kind = MEM_BLOCK;
        m->sh = calloc(n ? (size_t)n : 1, sizeof *m->sh);
        if (!m->sh) rt_fail(x, b->loc, "interp: out of memory");
        for (int t = 0; t < x->nt; t++) ir_interp_bind_storage(x->th[t].in, b, m->data, n);
        if (b->scope == IR_SCOPE_SHARED) check_swizzle(x, b, n);
    }
}

/* Which block buffers plan_smem put on overlapping bytes (Mem.alias). */
static void setup_aliases(IrTInterp *x) {
    const IrKernel *k = x->k;
    for (int i = 0; i < k->buffers.n; i++) {
        const IrBuffer *b = k->buffers.v[i];
        Mem *m = &x->mem[b->id];
        if (m->kind != MEM_BLOCK || !b->smem_bytes) continue;
        for (int j = 0; j < k->buffers.n; j++) {
            const IrBuffer *c = k->buffers.v[j];
            if (c == b || x->mem[c->id].kind != MEM_BLOCK || !c->smem_bytes ||
                c->smem_offset >= b->smem_offset + b->smem_bytes || b->smem_offset >= c->smem_offset + c->smem_bytes)
                continue;
            if (!m->alias) m->alias = TS_NEWN(x->a, int, k->buffers.n);
            m->alias[m->nalias++] = c->id;
        }
    }
}

/* ---- API -------------------------------------------------------------------------- */

IrTInterp *ir_tinterp_new(TsArena *a, TsDiag *d, const IrKernel *k, IrTInterpModel model) {
    IrTInterp *x = TS_NEW(a, IrTInterp);
    x->a = a;
    x->d = d;
    x->k = k;
    x->model = model;
    x->nid = k->next_id > 0 ? k->next_id : 1;
    int64_t nt = ir_kernel_nthreads(k);
    if (nt < 1 || nt > 1024) rt_fail(x, (TsLoc){0}, "interp: %lld threads per block", (long long)nt);
    x->nt = (int)nt;
    x->th = TS_NEWN(a, Th, x->nt);
    for (int t = 0; t < x->nt; t++) {
        x->th[t].id = t;
        x->th[t].in = ir_interp_new(a, d, k);
    }
    x->aux = ir_interp_new(a, d, k);
    x->mem = TS_NEWN(a, Mem, x->nid);
    StmtVec shfl = {0};
    scan(x, k->body, &shfl);
    if (shfl.n) qsort(shfl.v, (size_t)shfl.n, sizeof *shfl.v, cmp_ptr);
    x->shfl = shfl.v;
    x->nshfl = shfl.n;
    if (k->tid) {
        bool have = false;
        for (int i = 0; i < x->ntvars; i++) have |= x->tvars[i] == k->tid;
        if (!have) {
            const IrVar **nv = TS_NEWN(a, const IrVar *, x->ntvars + 1);
            if (x->ntvars) memcpy(nv, x->tvars, sizeof *nv * (size_t)x->ntvars);
            nv[x->ntvars++] = k->tid;
            x->tvars = nv;
        }
    }
    for (int t = 0; t < x->nt; t++)
        for (int i = 0; i < x->ntvars; i++) {
            const IrVar *v = x->tvars[i];
            int64_t val = t;
            if (v->axis == 0) val = t % k->threads[0];
            else if (v->axis == 1) val = t / k->threads[0] % (k->threads[1] > 0 ? k->threads[1] : 1);
            else if (v->axis == 2) val = t / (k->threads[0] * (k->threads[1] > 0 ? k->threads[1] : 1));
            bind_i(&x->th[t], v, val);
        }
    /* a layout or swizzle error frees what was set up before it unwinds */
    jmp_buf jb, *saved;
    if (ts_try(d, &jb, &saved)) {
        ts_try_end(d, saved);
        ir_tinterp_free(x);
        ts_rethrow(d, d->status);
    }
    for (int i = 0; i < k->buffers.n; i++) setup_buffer(x, k->buffers.v[i]);
    if (k->smem_planned) setup_aliases(x);
    ts_try_end(d, saved);
    return x;
}

void ir_tinterp_bind_buffer(IrTInterp *x, const IrBuffer *b, double *data) {
    if (b->id < 0 || b->id >= x->nid || x->mem[b->id].kind != MEM_GLOBAL)
        rt_fail(x, b->loc, "interp: %s is not a global buffer of the kernel", b->name);
    x->mem[b->id].data = data;
    for (int t = 0; t < x->nt; t++) ir_interp_bind_buffer(x->th[t].in, b, data);
}

void ir_tinterp_bind_var(IrTInterp *x, const IrVar *v, double value) {
    for (int t = 0; t < x->nt; t++) ir_interp_bind_var(x->th[t].in, v, value);
    ir_interp_bind_var(x->aux, v, value);
}

void ir_tinterp_run_block(IrTInterp *x, int64_t bx, int64_t by, int64_t bz) {
    if (x->k->cooperative)
        rt_fail(x, x->k->body ? x->k->body->loc : (TsLoc){0},
                "interp: kernel '%s' is cooperative (T.sync_grid in a loop or branch, or a collective between "
                "blocks): its blocks wait for each other, and the interpreter runs them one after another; run it "
                "on the C or CUDA target", x->k->name ? x->k->name : "?");
    int64_t bi[3] = {bx, by, bz};
    for (int i = 0; i < 3; i++)
        if (x->k->block_idx[i]) ir_tinterp_bind_var(x, x->k->block_idx[i], (double)bi[i]);
    for (int i = 0; i < x->nid; i++) {
        Mem *m = &x->mem[i];
        if (m->kind == MEM_BLOCK) {
            double p = poison_of(m->b);
            for (int64_t j = 0; j < m->n; j++) m->data[j] = p;
            memset(m->sh, 0, sizeof *m->sh * (size_t)m->n);
            m->a_epoch = 0;
            m->apend = 0;
        } else if (m->kind == MEM_THREAD) {
            double p = poison_of(m->b);
            for (int64_t j = 0; j < m->n * x->nt; j++) m->data[j] = p;
            memset(m->init, 0, (size_t)(m->n * x->nt));
        }
    }
    x->epoch = 1;
    x->nmbar = 0;
    x->ubuf = NULL;
    x->cur_bar = -1;
    x->cur_needed = false;
    for (int t = 0; t < x->nt; t++) {
        Th *th = &x->th[t];
        th->nfr = 0;
        th->nas = 0;
        th->committed = 0;
        th->memo_on = 0;
        th->state = TH_RUN;
        if (x->k->body) {
            if (x->k->body->kind == IR_S_SEQ) push(x, th, FR_SEQ, x->k->body, CTX_UNIFORM);
            else {
                IrStmt *seq = ir_seq(x->a);
                ir_seq_push(x->a, seq, x->k->body);
                push(x, th, FR_SEQ, seq, CTX_UNIFORM);
            }
        }
    }
    schedule(x);
}

void ir_tinterp_run_grid(IrTInterp *x) {
    int64_t g[3] = {1, 1, 1};
    for (int i = 0; i < x->k->ngrid && i < 3; i++) g[i] = ev_int(x, NULL, x->k->grid[i]);
    for (int64_t z = 0; z < g[2]; z++)
        for (int64_t y = 0; y < g[1]; y++)
            for (int64_t xx = 0; xx < g[0]; xx++) ir_tinterp_run_block(x, xx, y, z);
}

int64_t ir_tinterp_barriers(const IrTInterp *x) { return x->barriers; }

int ir_tinterp_barrier_stats(const IrTInterp *x, const IrTInterpBarrier **out) {
    *out = x->bars;
    return x->nbars;
}

const char *ir_tinterp_output(IrTInterp *x) { return ir_interp_output(x->th[0].in); }

void ir_tinterp_free(IrTInterp *x) {
    if (!x) return;
    free(x->mbar);
    x->mbar = NULL;
    for (int i = 0; i < x->nid; i++) {
        Mem *m = &x->mem[i];
        if (m->kind != MEM_GLOBAL) free(m->data);
        free(m->sh);
        free(m->init);
        free(m->owner);
        free(m->lflat);
        m->lflat = NULL;
        m->data = NULL;
        m->sh = NULL;
        m->init = NULL;
        m->owner = NULL;
    }
    for (int t = 0; t < x->nt; t++) {
        Th *th = &x->th[t];
        free(th->fr);
        free(th->as);
        free(th->memo_v);
        th->fr = NULL;
        th->as = NULL;
        th->memo_v = NULL;
        ir_interp_free(th->in);
    }
    ir_interp_free(x->aux);
    free(x->scratch);
    x->scratch = NULL;
    free(x->bars);
    x->bars = NULL;
}
