/*
 * sync_conflict.h — the arithmetic of conflicts for insert_sync (internal
 * to src/pass; nothing outside insert_sync.c includes it).
 *
 * insert_sync walks the kernel's uniform code with the set of shared and
 * global memory accesses made since the last barrier; for each new access
 * it asks one question: may these two accesses touch one element from two
 * different threads (with at least one writing)?  That question is pure
 * arithmetic on the accesses' index expressions and the ranges of their
 * variables, and it is where almost all of the pass's code and time go, so
 * it lives in sync_conflict.c, apart from the walk and barrier placement.
 *
 * The interface is small on purpose: the walk builds SyncAcc records (made
 * self-contained, with their own fresh variables from sync_fresh_new) and
 * asks sync_conflict; sync_acc_equal lets a set keep one of several
 * accesses equal up to their own variables; sync_eval_at evaluates a
 * branch condition per thread.  SyncConflict holds what the answers need
 * (the arena, the range analysis, the kernel) and the memo of answers, so
 * the walk's own state (Sync in insert_sync.c) does not carry it.
 */
#ifndef TS_SYNC_CONFLICT_H
#define TS_SYNC_CONFLICT_H

#include "ir/arith.h"

/* Largest thread (or small variable) range enumerated one value at a time. */
enum { SYNC_MAXT = 4096 };
/* Statement sequences an access remembers above it (SyncAcc.path_seq). */
enum { SYNC_MAXPATH = 8 };

/* One access since the last barrier. */
typedef struct SyncAcc {
    const IrBuffer *buf;  /* the buffer */
    int rw;               /* IR_ACC_READ / IR_ACC_WRITE bits */
    bool atomic;          /* an atomic read-modify-write */
    bool inflight;        /* an async copy's write not yet waited for */
    int age;              /* in flight: commits since the one that closed its group (0: the newest
                             group), -1: not committed yet (no wait covers it) */
    bool wg;              /* in flight: not a copy but an asynchronous wgmma gemm's read of its shared
                             operand (age: wgmma groups issued after its own; a wgmma wait lands it) */
    int ndim;             /* dimensions described (== buf->ndim, or 0: the whole buffer) */
    IrExpr **start;       /* per dimension: first index (self-contained, see the essay) */
    int64_t *ext;         /* per dimension: constant extent, or -1 (the whole dimension) */
    const IrVar *th;      /* the thread (a fresh variable), or NULL: any thread */
    TS_VEC(IrVar *) fv;   /* the access's own fresh variables (th included) */
    TS_VEC(const IrVar *) fv_of; /* the loop variable each stands for (NULL: th, a load, a renaming) */
    const IrStmt *at;     /* the statement (for messages) */
    const uint8_t *tmask; /* threads (from the thread range's start) that can make it, or NULL: all */
    const uint64_t *key;  /* its canonical key (see "Canonical keys" in sync_conflict.c), made when first needed; NULL:
                             not yet (a copy that changes the indices resets it) */
    int nkey;             /* words in key */
    int role;             /* the T.ws role whose code made it (insert_sync's key), 0: the block's code */
    /* Inside a thread range: the statement sequences above it that no loop of the range encloses,
     * innermost first, with the index of the child holding it in each (insert_sync's warp_ordered:
     * a __syncwarp of the whole warp between two children orders the warp's lanes) */
    const IrStmt *path_seq[SYNC_MAXPATH];
    int path_idx[SYNC_MAXPATH];
    int npath;            /* entries in path_seq / path_idx (0: none known) */
    IrExpr **conj;        /* conditions it is made under inside its thread range (if/else branches,
                             short-circuit operands, select arms), as conjuncts over its own variables
                             and uniform ones; only sync_exclusive reads them */
    int nconj;            /* how many */
} SyncAcc;

/* What deciding conflicts needs, and the answers decided so far. */
typedef struct SyncConflict {
    TsArena *a;             /* where keys, memo slots and scratch expressions go (the kernel's arena) */
    IrArith *ar;            /* the walk's range analysis: persistent bindings of uniform loop variables;
                               an access's fresh variables are bound here only while it is decided */
    const IrKernel *k;      /* the kernel (may_block: global writes of blocking kernels are ordered) */
    int64_t nt;             /* threads per block */
    const uint8_t *mask_a, *mask_b; /* while deciding a conflict: the two accesses' thread masks */
    bool warp_ordered;      /* set by the caller for one question: two threads of one warp (tid / 32
                               equal) are ordered between the two accesses (a __syncwarp of the
                               whole warp between them), so only threads of different warps count */
    TS_VEC(uint64_t) kw;    /* scratch: the key being built */
    TS_VEC(const IrVar *) kv; /* scratch: the fresh variables it numbered, in order */
    struct SyncMemo *memo;  /* conflicts decided so far (see "Canonical keys" in sync_conflict.c) */
    int memo_n, memo_cap;   /* entries in memo, slots (a power of two, or 0) */
    int epoch;              /* the walk bumps it when a persistent range binding changes a range:
                               older memo entries may have seen other ranges and are not used */
} SyncConflict;

/* Start deciding conflicts for kernel k (ar: the walk's analysis, kept by the caller). */
void sync_conflict_init(SyncConflict *C, TsArena *a, IrArith *ar, const IrKernel *k, int64_t nt);

/* A new fresh variable of range [lo, hi] (not bound in any analysis). */
IrVar *sync_fresh_new(TsArena *a, const char *name, TsDType dt, int64_t lo, int64_t hi);

/* The range a fresh variable was made with. */
IrInterval sync_fresh_range(const IrVar *v);

/* Do x and y conflict: at least one writes (two atomics never do) and they
 * may touch one element from two different threads (or, in a blocking
 * kernel and not within one thread range, both write global memory)?
 * within: two accesses of one thread range.  Memoized. */
bool sync_conflict(SyncConflict *C, const SyncAcc *x, const SyncAcc *y, bool within);

/* Within one thread range, given the conditions the two accesses are made
 * under (SyncAcc.conj): is it proven, by trying every value of the
 * threads, their loop variables and the uniform loop variables around the
 * range (small ranges only), that no element is touched by two different
 * threads?  For data-dependent exchanges such as a bitonic step, where
 * thread i writes elements i and i ^ m only when i < i ^ m.  false: not
 * proven (too many values, an index not computable, ...). */
bool sync_exclusive(SyncConflict *C, const SyncAcc *x, const SyncAcc *y);

/* Are x and y equal up to a renaming of their own fresh variables (their
 * canonical keys, cached on them, equal)? */
bool sync_acc_equal(SyncConflict *C, SyncAcc *x, SyncAcc *y);

/* e (an integer or boolean expression of v alone) at v == x; false if it
 * is not such an expression or cannot be evaluated exactly. */
bool sync_eval_at(const IrExpr *e, const IrVar *v, int64_t x, int64_t *out);

/* Do all writes of store st (to a shared buffer) from the threads of the
 * thread range `range` write one value to each element they meet at?
 * (sync_same_value.c: the value a function of the index's varying part) */
bool sync_same_value_store(const IrKernel *k, TsArena *a, const IrStmt *range, const IrStmt *st);

#endif
