/*
 * comm_builtins.c — the distributed names of the T namespace: TileScale's
 * device primitives (T.get_rank, T.put_block, T.st, T.wait_eq, ...), the
 * NVSHMEM-style ones (T.get_pe, T.putmem_nbi_block, T.signal_op, ...),
 * T.address_of, and the warp primitives (shuffles, votes, warp
 * reductions, lane index).
 *
 * Kept apart from builtins.c (which only forwards unknown T.* names and
 * calls here) because they share their own argument conventions: an
 * address is `T.address_of(buf[i, j])` (or just the element, or a whole
 * buffer meaning its first element); a peer of -1 or None is the local
 * rank; NVSHMEM byte counts become element counts of the destination's
 * dtype.  Each primitive becomes one TS_OP_COMM tile op (op/comm.h says
 * which operand goes where); a kernel that waits (T.wait_*, barriers,
 * polling T.ld) runs its blocks as coroutines (IrKernel.may_block).
 *
 * Signatures follow TileScale (tilelang/language/distributed/common.py,
 * tilelang/language/builtin.py, .../multi_device/nvshmem.py).
 */
#include "elab/elab_int.h"

#include <math.h>
#include <string.h>

#include "front/ast.h"
#include "ir/walk.h"

#include "op/comm.h"

/* X(id, name) — ids are ELAB_COMM_BASE + position. */
#define COMM_BUILTINS(X)                                                                  \
    X(C_GET_RANK, "get_rank") X(C_GET_NUM_RANKS, "get_num_ranks") X(C_GET_PE, "get_pe")    \
    X(C_GET_PE_NUM, "get_pe_num") X(C_ADDRESS_OF, "address_of")                            \
    X(C_PUT_BLOCK, "put_block") X(C_PUT_WARP, "put_warp") X(C_GET_BLOCK, "get_block")      \
    X(C_GET_WARP, "get_warp") X(C_PUTMEM_NBI_BLOCK, "putmem_nbi_block")                    \
    X(C_PUTMEM_BLOCK, "putmem_block") X(C_PUTMEM_NBI_WARP, "putmem_nbi_warp")              \
    X(C_PUTMEM_WARP, "putmem_warp") X(C_PUTMEM, "putmem") X(C_PUTMEM_NBI, "putmem_nbi")    \
    X(C_GETMEM_NBI_BLOCK, "getmem_nbi_block") X(C_GETMEM_BLOCK, "getmem_block")            \
    X(C_GETMEM_NBI_WARP, "getmem_nbi_warp") X(C_GETMEM_WARP, "getmem_warp")                \
    X(C_GETMEM, "getmem") X(C_GETMEM_NBI, "getmem_nbi")                                    \
    X(C_PUTMEM_SIGNAL_NBI_BLOCK, "putmem_signal_nbi_block")                                \
    X(C_PUTMEM_SIGNAL_BLOCK, "putmem_signal_block")                                        \
    X(C_PUTMEM_SIGNAL_NBI_WARP, "putmem_signal_nbi_warp")                                  \
    X(C_PUTMEM_SIGNAL_WARP, "putmem_signal_warp") X(C_PUTMEM_SIGNAL, "putmem_signal")      \
    X(C_PUTMEM_SIGNAL_NBI, "putmem_signal_nbi")                                            \
    X(C_SIGNAL_OP, "signal_op") X(C_SIGNAL_WAIT_UNTIL, "signal_wait_until")                \
    X(C_WAIT_EQ, "wait_eq") X(C_WAIT_NE, "wait_ne") X(C_WAIT_GE, "wait_ge")                \
    X(C_WAIT_LE, "wait_le") X(C_WAIT_GT, "wait_gt") X(C_WAIT_LT, "wait_lt")                \
    X(C_ST, "st") X(C_LD, "ld") X(C_ATOM_ADD, "atom_add") X(C_INT_P, "int_p")             \
    X(C_FENCE_CTA, "fence_cta") X(C_FENCE_GPU, "fence_gpu") X(C_FENCE_SYS, "fence_sys")    \
    X(C_FENCE, "fence") X(C_QUIET, "quiet") X(C_BARRIER_BLOCKS, "barrier_blocks")          \
    X(C_SYNC_BLOCKS, "sync_blocks") X(C_BARRIER_ALL, "barrier_all")                        \
    X(C_BARRIER_ALL_BLOCK, "barrier_all_block") X(C_SYNC_ALL, "sync_all")                  \
    X(C_SYNC_ALL_BLOCK, "sync_all_block") X(C_SCALE, "Scale") X(C_ALLREDUCE, "allreduce")      \
    X(C_ALLGATHER, "allgather") X(C_REDUCE_SCATTER, "reduce_scatter") X(C_ALL_TO_ALL, "all_to_all")     \
    X(C_VIEW, "view") X(C_SHFL_XOR, "shfl_xor") X(C_SHFL_DOWN, "shfl_down") X(C_SHFL_UP, "shfl_up")     \
    X(C_SHFL_SYNC, "shfl_sync") X(C_ANY_SYNC, "any_sync") X(C_ALL_SYNC, "all_sync")                      \
    X(C_BALLOT_SYNC, "ballot_sync") X(C_WARP_ANY, "warp_any") X(C_WARP_ALL, "warp_all")                  \
    X(C_GET_LANE_IDX, "get_lane_idx") X(C_SYNC_WARP, "sync_warp") X(C_WARP_SUM, "warp_reduce_sum")       \
    X(C_WARP_MAX, "warp_reduce_max") X(C_WARP_MIN, "warp_reduce_min")                                   \
    X(C_WARP_BITAND, "warp_reduce_bitand") X(C_WARP_BITOR, "warp_reduce_bitor")                         \
    X(C_SHUFFLE_ELECT, "shuffle_elect") X(C_TVM_WARP_SHUFFLE, "tvm_warp_shuffle")

enum {
#define X(id, name) id,
    COMM_BUILTINS(X)
#undef X
    C_COUNT
};

static const char *const comm_names[C_COUNT] = {
#define X(id, name) [id] = name,
    COMM_BUILTINS(X)
#undef X
};

/* NVSHMEM's comparison and signal-operation numbers (nvshmem's
 * NVSHMEM_CMP_* and NVSHMEM_SIGNAL_*; TileScale spells them T.CmpType.GE,
 * T.Amo.SIGNAL_ADD and T.NVSHMEM_CMP_GE): what T.signal_wait_until and
 * the signal ops take. */
static const struct {
    const char *name; /* as in T.CmpType.<name> / T.Amo.<name> / T.NVSHMEM_<...> */
    int value;        /* NVSHMEM's number */
} cmp_names[] = {{"EQ", 0}, {"NE", 1}, {"GT", 2}, {"LE", 3}, {"LT", 4}, {"GE", 5}},
  amo_names[] = {{"SIGNAL_SET", 9}, {"SIGNAL_ADD", 10}, {"AMO_SIGNAL_SET", 9}, {"AMO_SIGNAL_ADD", 10}};

Value *comm_enum_attr(Elab *E, const Value *obj, const char *name, TsLoc loc) {
    int cmp = !strcmp(obj->s, "CmpType");
    if (!cmp && strcmp(obj->s, "Amo")) return NULL;
    int n = cmp ? (int)(sizeof cmp_names / sizeof cmp_names[0]) : (int)(sizeof amo_names / sizeof amo_names[0]);
    for (int i = 0; i < n; i++)
        if (!strcmp(name, cmp ? cmp_names[i].name : amo_names[i].name))
            return val_int(E, cmp ? cmp_names[i].value : amo_names[i].value, loc);
    elab_fail(E, TS_ERR_NAME, loc, "T.%s.%s is not supported (%s)", obj->s, name,
              cmp ? "EQ, NE, GT, LE, LT, GE" : "SIGNAL_SET, SIGNAL_ADD: the signal operations");
    return NULL;
}

/* The *_warp names: called by the lanes of a warp together, one range
 * (op/comm.h: PUT f1). */
static int is_warp(int c) {
    return c == C_PUT_WARP || c == C_GET_WARP || c == C_PUTMEM_NBI_WARP || c == C_PUTMEM_WARP ||
           c == C_GETMEM_NBI_WARP || c == C_GETMEM_WARP || c == C_PUTMEM_SIGNAL_NBI_WARP || c == C_PUTMEM_SIGNAL_WARP;
}

Value *comm_host_map(Elab *E, const Value *m, const Value *key, TsLoc loc) {
    size_t n = strlen(m->s);
    int dsize = n >= 9 && !strcmp(m->s + n - 9, "dsize_map");
    if (!strstr(m->s, "distributed") || (!dsize && (n < 9 || strcmp(m->s + n - 9, "dtype_map")))) return NULL;
    TsDType dt = key->kind == V_DTYPE ? key->dt : key->kind == V_STR ? ts_dtype_from_name(key->s) : TS_DTYPE_NONE;
    if (dt == TS_DTYPE_NONE) elab_fail(E, TS_ERR_TYPE, loc, "%s: the key must be a dtype name", m->s);
    if (dsize) return val_int(E, (ts_dtype_bits(dt) + 7) / 8, loc);
    Value *v = val_new(E, V_DTYPE, loc);
    v->dt = dt;
    return v;
}

Value *comm_builtin_lookup(Elab *E, const char *name, TsLoc loc) {
    if (!strcmp(name, "FullRow") || !strcmp(name, "FullCol") || !strcmp(name, "Replica")) {
        Value *v = val_new(E, V_ENUM, loc); /* a device layout for T.view */
        v->s = ts_sprintf(E->a, "Layout.%s", name);
        return v;
    }
    if (!strcmp(name, "CmpType") || !strcmp(name, "Amo")) {
        Value *v = val_new(E, V_ENUM, loc); /* comm_enum_attr gives its members */
        v->s = !strcmp(name, "Amo") ? "Amo" : "CmpType";
        return v;
    }
    if (!strncmp(name, "NVSHMEM_CMP_", 12))
        for (size_t i = 0; i < sizeof cmp_names / sizeof cmp_names[0]; i++)
            if (!strcmp(name + 12, cmp_names[i].name)) return val_int(E, cmp_names[i].value, loc);
    if (!strcmp(name, "NVSHMEM_SIGNAL_SET") || !strcmp(name, "NVSHMEM_SIGNAL_ADD"))
        return val_int(E, !strcmp(name, "NVSHMEM_SIGNAL_SET") ? 9 : 10, loc);
    for (int i = 0; i < C_COUNT; i++)
        if (!strcmp(comm_names[i], name)) {
            Value *v = val_new(E, V_BUILTIN, loc);
            v->bi = ELAB_COMM_BASE + i;
            return v;
        }
    return NULL;
}

/* ---- arguments: positional names in order, keywords by name ------------------------ */

typedef struct CArgs {
    Value **v;
    int n;
    const char **kw;
    Value **kwv;
    int nkw;
    const char *fn;   /* "T.put_block" */
    TsLoc loc;
} CArgs;

/* The argument at `pos` or keyword `name`, or NULL. */
static Value *comm_arg(Elab *E, CArgs *A, int pos, const char *name) {
    Value *v = pos < A->n ? A->v[pos] : NULL;
    for (int i = 0; i < A->nkw; i++)
        if (!strcmp(A->kw[i], name)) {
            if (v) elab_fail(E, TS_ERR_TYPE, A->loc, "%s got two values for '%s'", A->fn, name);
            v = A->kwv[i];
        }
    return v;
}

static Value *creq(Elab *E, CArgs *A, int pos, const char *name) {
    Value *v = comm_arg(E, A, pos, name);
    if (!v) elab_fail(E, TS_ERR_TYPE, A->loc, "%s needs an argument '%s'", A->fn, name);
    return v;
}

/* Every keyword must be one of names; at most maxpos positionals. */
static void ccheck(Elab *E, CArgs *A, int maxpos, const char *const *names) {
    if (A->n > maxpos)
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s takes at most %d positional arguments, %d given", A->fn, maxpos, A->n);
    for (int i = 0; i < A->nkw; i++) {
        bool ok = false;
        for (int j = 0; names && names[j]; j++) ok |= !strcmp(A->kw[i], names[j]);
        if (!ok) elab_fail(E, TS_ERR_TYPE, A->loc, "%s got an unexpected keyword argument '%s'", A->fn, A->kw[i]);
    }
}

/* An address: an element, a whole buffer (its first element), a region
 * (its first element). */
static IrRegion addr(Elab *E, CArgs *A, Value *v, const char *what) {
    if (v->kind == V_BUFFER && v->buf->scope == IR_SCOPE_VAR) {
        IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
        idx[0] = ir_i32(E->a, 0);
        IrRegion r = {v->buf, 1, idx, TS_NEWN(E->a, IrExpr *, 1)};
        r.extent[0] = ir_i32(E->a, 1);
        return r;
    }
    IrRegion r = val_to_region(E, v, A->loc, ts_sprintf(E->a, "%s: %s", A->fn, what));
    IrRegion e = r;
    e.extent = TS_NEWN(E->a, IrExpr *, r.ndim > 0 ? r.ndim : 1);
    for (int i = 0; i < r.ndim; i++) e.extent[i] = ir_i32(E->a, 1);
    return e;
}

static IrExpr *int_arg(Elab *E, CArgs *A, Value *v, const char *what) {
    IrExpr *e = val_to_expr(E, v, A->loc);
    if (!ts_dtype_is_int(e->dt))
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s: %s must be an integer, got %s", A->fn, what, ts_dtype_name(e->dt));
    return e;
}

/* A peer: NULL for absent/None/-1 (the local rank). */
static IrExpr *peer_arg(Elab *E, CArgs *A, Value *v) {
    if (!v || v->kind == V_NONE) return NULL;
    if (v->kind == V_INT && v->i == -1) return NULL;
    return int_arg(E, A, v, "the peer rank");
}

static IrExpr *value_for(Elab *E, CArgs *A, Value *v, TsDType dt) {
    IrExpr *e = val_is_const(v) ? adapt_literal(E, v, dt, A->loc) : val_to_expr(E, v, A->loc);
    return e->dt == dt ? e : ir_cast(E->a, dt, e);
}

static const char *str_arg(Elab *E, CArgs *A, Value *v, const char *what) {
    if (v->kind != V_STR) elab_fail(E, TS_ERR_TYPE, A->loc, "%s: %s must be a string", A->fn, what);
    return v->s;
}

static int scope_arg(Elab *E, CArgs *A, Value *v, int dflt) {
    if (!v) return dflt;
    const char *s = str_arg(E, A, v, "scope");
    if (!strcmp(s, "cta")) return TS_SCOPE_CTA;
    if (!strcmp(s, "gpu")) return TS_SCOPE_GPU;
    if (!strcmp(s, "sys")) return TS_SCOPE_SYS;
    elab_fail(E, TS_ERR_TYPE, A->loc, "%s: scope must be 'cta', 'gpu' or 'sys', not '%s'", A->fn, s);
}

static int sem_arg(Elab *E, CArgs *A, Value *v, int dflt, const char *allowed) {
    if (!v) return dflt;
    const char *s = str_arg(E, A, v, "sem");
    static const char *const names[] = {"weak", "volatile", "acquire", "release", "relaxed", "acq_rel"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(s, names[i]) && strstr(allowed, names[i])) return i;
    elab_fail(E, TS_ERR_TYPE, A->loc, "%s: sem must be one of %s, not '%s'", A->fn, allowed, s);
}

static IrStmt *comm_op(Elab *E, TsCommKind kind, TsLoc loc) {
    IrStmt *s = ts_comm_stmt(E->a, kind, loc);
    /* blocks that wait on others run as coroutines (C) / must be co-resident (CUDA) */
    if (kind == TS_COMM_WAIT || kind == TS_COMM_BARRIER_BLOCKS || kind == TS_COMM_BARRIER_ALL) E->k->may_block = true;
    return s;
}

/* ---- warp primitives ---------------------------------------------------------
 *
 * TileLang's and TileScale's names (tilelang/language/builtin.py: shfl_xor /
 * shfl_down / shfl_up / shfl_sync (value, delta or lane, width=32,
 * mask=full), any_sync / all_sync / ballot_sync (mask, predicate),
 * get_lane_idx, sync_warp, shuffle_elect; TileScale's warp_any / warp_all (value, mask)
 * and tilelang/language/reduce.py's warp_reduce_sum/max/min/bitand/bitor)
 * as IR_WARP_* calls.  Lanes are those of 32-thread warps of the flat
 * thread index; a shuffle's width is a power of two up to 32, its mask
 * names the lanes that call it together (as CUDA's: a lane reading one
 * outside the mask reads an undefined value). */

static int warp_const(Elab *E, CArgs *A, Value *v, const char *what, int64_t dflt) {
    if (!v || v->kind == V_NONE) return (int)dflt;
    int64_t c;
    IrExpr *e = int_arg(E, A, v, what);
    if (!ir_is_const_int(e, &c))
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s: %s must be a constant", A->fn, what);
    return (int)c;
}

/* The lane mask of a vote, as a uint32 expression (-1 and None: all). */
static IrExpr *warp_mask(Elab *E, CArgs *A, Value *v) {
    if (!v || v->kind == V_NONE || (v->kind == V_INT && v->i == -1)) return ir_int(E->a, 0xffffffffLL, TS_UINT32);
    IrExpr *e = int_arg(E, A, v, "the lane mask");
    return e->dt == TS_UINT32 ? e : ir_cast(E->a, TS_UINT32, e);
}

/* A shuffle fn(value, lane or delta, width, mask) of the warp primitives
 * (T.shfl_*, T.tvm_warp_shuffle): the width checked first, then the mask
 * argument (position mask_at; required or defaulting to the whole warp). */
static IrExpr *shfl_call(Elab *E, CArgs *A, IrIntrinsic fn, IrExpr *v, IrExpr *lane, int w, int mask_at,
                         bool mask_required) {
    TsArena *a = E->a;
    if (w < 1 || w > 32 || (w & (w - 1)))
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s: the width must be a power of two from 1 to 32, not %d", A->fn, w);
    if (v->dt == TS_BOOL) v = ir_cast(a, TS_INT32, v);
    IrExpr **args = TS_NEWN(a, IrExpr *, 4);
    args[0] = v;
    args[1] = lane->dt == TS_INT32 ? lane : ir_cast(a, TS_INT32, lane);
    args[2] = ir_i32(a, w);
    args[3] = warp_mask(E, A, mask_required ? creq(E, A, mask_at, "mask") : comm_arg(E, A, mask_at, "mask"));
    return ir_call(a, fn, args, 4, v->dt);
}

/* The flat thread index. */
static IrExpr *flat_tid(Elab *E) {
    static const char *const names[3] = {"threadIdx_x", "threadIdx_y", "threadIdx_z"};
    IrExpr *flat = NULL;
    int64_t stride = 1;
    for (int ax = 0; ax < 3; ax++) {
        if (ax > 0 && E->k->threads[ax] <= 1) continue;
        IrVar *v = ir_var(E->k, names[ax], TS_INT32, IR_VAR_THREAD_IDX);
        v->axis = ax;
        IrExpr *t = ir_bin(E->a, IR_MUL, ir_var_ref(E->a, v), ir_i32(E->a, stride));
        flat = flat ? ir_bin(E->a, IR_ADD, flat, t) : t;
        stride *= E->k->threads[ax] > 0 ? E->k->threads[ax] : 1;
    }
    return flat;
}

/* Flat thread index % 32. */
static IrExpr *lane_idx(Elab *E) { return ir_bin(E->a, IR_FLOORMOD, flat_tid(E), ir_i32(E->a, 32)); }

static Value *warp_builtin(Elab *E, int c, CArgs *A, TsLoc loc) {
    TsArena *a = E->a;
    switch (c) {
    case C_SHFL_XOR: case C_SHFL_DOWN: case C_SHFL_UP: case C_SHFL_SYNC: {
        static const char *const kws[] = {"value", "delta", "offset", "srcLane", "width", "mask", NULL};
        ccheck(E, A, 4, kws);
        IrExpr *v = val_to_expr(E, creq(E, A, 0, "value"), loc);
        Value *d = comm_arg(E, A, 1, c == C_SHFL_SYNC ? "srcLane" : "delta");
        if (!d && c != C_SHFL_SYNC) d = comm_arg(E, A, 1, "offset");
        if (!d) elab_fail(E, TS_ERR_TYPE, loc, "%s needs the %s", A->fn, c == C_SHFL_SYNC ? "source lane" : "lane delta");
        IrExpr *de = int_arg(E, A, d, c == C_SHFL_SYNC ? "the source lane" : "the lane delta");
        int w = warp_const(E, A, comm_arg(E, A, 2, "width"), "the width", 32);
        IrIntrinsic fn = c == C_SHFL_XOR ? IR_WARP_SHFL_XOR : c == C_SHFL_DOWN ? IR_WARP_SHFL_DOWN
                       : c == C_SHFL_UP ? IR_WARP_SHFL_UP : IR_WARP_SHFL;
        return val_expr(E, shfl_call(E, A, fn, v, de, w, 3, false), loc);
    }
    case C_ANY_SYNC: case C_ALL_SYNC: case C_BALLOT_SYNC: case C_WARP_ANY: case C_WARP_ALL: {
        bool tl = c == C_ANY_SYNC || c == C_ALL_SYNC || c == C_BALLOT_SYNC; /* (mask, predicate) */
        static const char *const kws_tl[] = {"mask", "predicate", NULL}, *const kws_ts[] = {"value", "mask", NULL};
        ccheck(E, A, 2, tl ? kws_tl : kws_ts);
        IrExpr *mask = warp_mask(E, A, comm_arg(E, A, tl ? 0 : 1, "mask"));
        IrExpr *p = val_to_expr(E, creq(E, A, tl ? 1 : 0, tl ? "predicate" : "value"), loc);
        IrExpr **args = TS_NEWN(a, IrExpr *, 2);
        args[0] = mask;
        args[1] = ir_bin(a, IR_NE, p, ir_int(a, 0, p->dt));
        IrExpr *b = ir_call(a, IR_WARP_BALLOT, args, 2, TS_UINT32);
        if (c == C_BALLOT_SYNC) return val_expr(E, ir_cast(a, TS_UINT64, b), loc);
        IrExpr *r = c == C_ANY_SYNC || c == C_WARP_ANY ? ir_bin(a, IR_NE, b, ir_int(a, 0, TS_UINT32))
                                                       : ir_bin(a, IR_EQ, b, mask);
        return val_expr(E, ir_cast(a, TS_INT32, r), loc);
    }
    case C_GET_LANE_IDX: {
        static const char *const kws[] = {"warp_size", NULL};
        ccheck(E, A, 1, kws);
        int w = warp_const(E, A, comm_arg(E, A, 0, "warp_size"), "the warp size", 32);
        if (w != 32) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: warps have 32 lanes here, not %d", A->fn, w);
        return val_expr(E, lane_idx(E), loc);
    }
    case C_TVM_WARP_SHUFFLE: {
        /* TVM's builtin (mask, value, lane, width, warp_size): __shfl_sync(mask,
         * value, lane, width) (TileScale's DeepEP, TileLang's hadamard example) */
        static const char *const kws[] = {NULL};
        ccheck(E, A, 5, kws);
        IrExpr *v = val_to_expr(E, creq(E, A, 1, "value"), loc);
        IrExpr *lane = int_arg(E, A, creq(E, A, 2, "lane"), "the source lane");
        int w = warp_const(E, A, creq(E, A, 3, "width"), "the width", 32);
        /* warp_size: TVM's lowering's, not the hardware's (hadamard passes its
         * threads per warp, 8 or 16 in small blocks); the warp is CUDA's 32 */
        int ws = warp_const(E, A, creq(E, A, 4, "warp_size"), "the warp size", 32);
        if (ws < 1 || ws > 32 || (ws & (ws - 1)))
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the warp size must be a power of two up to 32, not %d", A->fn, ws);
        return val_expr(E, shfl_call(E, A, IR_WARP_SHFL, v, lane, w, 0, true), loc);
    }
    case C_SHUFFLE_ELECT: { /* one thread of each group of n (0: of the block): its first, as
                             * elect.sync picks the lowest lane of a whole warp */
        static const char *const kws[] = {"thread_extent", NULL};
        ccheck(E, A, 1, kws);
        int n = warp_const(E, A, creq(E, A, 0, "thread_extent"), "the group size", 0);
        if (n < 0) elab_fail(E, TS_ERR_TYPE, loc, "%s: the group size must not be negative", A->fn);
        IrExpr *f = flat_tid(E);
        if (n > 0) f = ir_bin(a, IR_FLOORMOD, f, ir_i32(a, n));
        return val_expr(E, ir_bin(a, IR_EQ, f, ir_i32(a, 0)), loc);
    }
    case C_SYNC_WARP: {
        static const char *const kws[] = {"mask", NULL};
        ccheck(E, A, 1, kws);
        IrExpr **args = TS_NEWN(a, IrExpr *, 1);
        args[0] = warp_mask(E, A, comm_arg(E, A, 0, "mask"));
        IrStmt *s = ir_stmt(a, IR_S_EVAL, loc);
        s->eval.e = ir_call(a, IR_WARP_SYNC, args, 1, TS_INT32);
        emit(E, s);
        return val_none(E, loc);
    }
    default: { /* the warp reductions */
        static const char *const kws[] = {"value", NULL};
        ccheck(E, A, 1, kws);
        IrExpr *v = val_to_expr(E, creq(E, A, 0, "value"), loc);
        bool bits = c == C_WARP_BITAND || c == C_WARP_BITOR;
        if (bits && !ts_dtype_is_int(v->dt))
            elab_fail(E, TS_ERR_TYPE, loc, "%s takes an integer, not %s", A->fn, ts_dtype_name(v->dt));
        if (v->dt == TS_BOOL) v = ir_cast(a, TS_INT32, v);
        IrExpr **args = TS_NEWN(a, IrExpr *, 1);
        args[0] = v;
        IrIntrinsic fn = c == C_WARP_SUM ? IR_WARP_SUM : c == C_WARP_MAX ? IR_WARP_MAX : c == C_WARP_MIN ? IR_WARP_MIN
                       : c == C_WARP_BITAND ? IR_WARP_BAND : IR_WARP_BOR;
        return val_expr(E, ir_call(a, fn, args, 1, v->dt), loc);
    }
    }
}

static Value *rank_var(Elab *E, int axis, TsLoc loc) {
    IrVar *v = ir_var(E->k, axis ? "num_ranks" : "rank", TS_INT32, IR_VAR_RANK);
    v->axis = axis;
    return val_expr(E, ir_var_ref(E->a, v), loc);
}

/* Bytes -> elements of dt (NVSHMEM counts bytes, the op counts elements). */
static IrExpr *bytes_to_elems(Elab *E, IrExpr *bytes, TsDType dt) {
    int64_t sz = (ts_dtype_bits(dt) + 7) / 8;
    if (sz == 1) return bytes;
    return ir_bin(E->a, IR_FLOORDIV, bytes, ir_int(E->a, sz, bytes->dt));
}

/* ---- the hierarchical layer: remote tile copies, T.Scale, collectives ---------------- */

/* A copy operand's region; an element written as the start of a tile takes
 * its extents from the other operand (trailing dims aligned), as T.copy. */
static IrRegion tile_region(Elab *E, Value *v, Value *other, TsLoc loc, const char *what) {
    IrRegion r = val_to_region(E, v, loc, what);
    if (v->kind != V_ACCESS || other->kind == V_ACCESS) return r;
    IrRegion o = val_to_region(E, other, loc, what);
    int first = 0;
    while (first < o.ndim - 1) {
        int64_t c;
        if (!ir_is_const_int(o.extent[first], &c) || c != 1) break;
        first++;
    }
    int m = o.ndim - first;
    if (m > r.ndim) elab_fail(E, TS_ERR_SHAPE, loc, "%s: a %d-d tile cannot start at an element of a %d-d buffer", what, m, r.ndim);
    r.extent = TS_NEWN(E->a, IrExpr *, r.ndim > 0 ? r.ndim : 1);
    for (int i = 0; i < r.ndim; i++) r.extent[i] = ir_i32(E->a, 1);
    for (int i = 0; i < m; i++) r.extent[r.ndim - m + i] = o.extent[first + i];
    return r;
}

/* ---- device views: T.view(A, layout=T.FullRow | T.FullCol | T.Replica) ----------
 *
 * A view is the logical tensor a kernel parameter is one rank's shard of.
 * FullRow: A [m, ...] on every rank is rows p*m .. (p+1)*m of a logical
 * [P*m, ...] tensor, rank p holding them; FullCol: the same along the last
 * axis; Replica: every rank holds all of it (the view is A itself).  A view
 * is an IrBuffer of the logical shape that never reaches the IR: its
 * `param` is -2 - (the shard's parameter index) and its name ends in
 * "@FullRow" / "@FullCol"; T.copy to or from a tile of it becomes a remote
 * tile copy with the owning rank (a tile must lie within one shard).
 * Anything else done with a view is refused. */

static bool is_view(const IrBuffer *b) { return b && b->scope == IR_SCOPE_GLOBAL && b->param <= -2; }

/* A warpgroup's (or warp's) view of a block tile (TileScale's README:
 * T.view of a tile inside T.Scale("warpgroup")): FullRow, rows
 * [g R / n, (g + 1) R / n) of the tile for unit g of n; FullCol, the same
 * along the last axis; Replica, all of it.  g is a constant in each
 * role copy of the body (scale_roles), tid // 32 in a warp's lane form. */
static Value *wg_view(Elab *E, CArgs *A, IrBuffer *b, const char *kind) {
    Value *v = val_new(E, V_BUFFER, A->loc);
    v->buf = b;
    if (!strcmp(kind, "Replica")) return v;
    if (b->ndim < 1) elab_fail(E, TS_ERR_TYPE, A->loc, "%s: a warpgroup view of a scalar", A->fn);
    int axis = !strcmp(kind, "FullRow") ? 0 : b->ndim - 1;
    int64_t ext;
    if (!ir_is_const_int(b->shape[axis], &ext) || ext % E->unit_num)
        elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: '%s' axis %d (%s) must split evenly over the %d units of the scale",
                  A->fn, b->name, axis, kind, E->unit_num);
    IrRegion r = ir_region_full(E->a, b);
    r.start[axis] = ir_bin(E->a, IR_MUL, E->unit_id, ir_i32(E->a, ext / E->unit_num));
    r.extent[axis] = ir_i32(E->a, ext / E->unit_num);
    v->kind = V_REGION;
    v->reg = r;
    return v;
}

static Value *make_view(Elab *E, CArgs *A) {
    static const char *const kws[] = {"buffer", "layout", NULL};
    ccheck(E, A, 2, kws);
    IrBuffer *b = val_to_buffer(E, creq(E, A, 0, "buffer"), A->loc, A->fn);
    Value *lv = creq(E, A, 1, "layout");
    if (lv->kind != V_ENUM || strncmp(lv->s, "Layout.", 7))
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s: layout must be T.FullRow, T.FullCol or T.Replica", A->fn);
    const char *kind = lv->s + 7;
    if (E->unit_num > 0 && b->scope != IR_SCOPE_GLOBAL) return wg_view(E, A, b, kind);
    int p = -1;
    for (int i = 0; i < E->k->params.n; i++)
        if (E->k->params.v[i].buf == b) p = i;
    if (p < 0 || b->ndim < 1)
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s: '%s' must be a tensor parameter of the kernel (one rank's shard)", A->fn,
                  b->name);
    Value *v = val_new(E, V_BUFFER, A->loc);
    if (!strcmp(kind, "Replica")) {
        v->buf = b;
        return v;
    }
    int axis = !strcmp(kind, "FullRow") ? 0 : b->ndim - 1;
    IrBuffer *vb = TS_NEW(E->a, IrBuffer);
    *vb = *b;
    vb->name = ts_sprintf(E->a, "%s@%s", b->name, kind);
    vb->id = E->k->next_id++;
    vb->shape = TS_NEWN(E->a, IrExpr *, b->ndim);
    for (int i = 0; i < b->ndim; i++) vb->shape[i] = b->shape[i];
    vb->shape[axis] = ir_bin(E->a, IR_MUL, b->shape[axis], rank_var(E, 1, A->loc)->e);
    vb->strides = NULL;
    vb->param = -2 - p;
    v->buf = vb;
    return v;
}

/* A region of a view -> the shard's region and the owning rank. */
static IrRegion view_local(Elab *E, IrRegion r, IrExpr **owner) {
    IrBuffer *vb = r.buf;
    IrBuffer *b = E->k->params.v[-2 - vb->param].buf;
    int axis = strstr(vb->name, "@FullRow") ? 0 : b->ndim - 1;
    IrExpr **start = TS_NEWN(E->a, IrExpr *, r.ndim);
    for (int i = 0; i < r.ndim; i++) start[i] = r.start[i];
    *owner = ir_bin(E->a, IR_FLOORDIV, r.start[axis], b->shape[axis]);
    start[axis] = ir_bin(E->a, IR_FLOORMOD, r.start[axis], b->shape[axis]);
    IrRegion l = {b, r.ndim, start, r.extent};
    return l;
}

bool comm_copy_remote(Elab *E, Value **args, int nargs, const char **kw, Value **kwv, int nkw, TsLoc loc) {
    Value *rank = NULL;
    int src_remote = 0;
    for (int i = 0; i < nkw; i++) {
        bool d = !strcmp(kw[i], "dst_rank") || (!strcmp(kw[i], "dst") && nargs >= 2);
        bool s = !strcmp(kw[i], "src_rank") || (!strcmp(kw[i], "src") && nargs >= 2);
        if (!d && !s) continue;
        if (rank) elab_fail(E, TS_ERR_TYPE, loc, "T.copy: give one remote rank (dst= or src=), not both");
        rank = kwv[i];
        src_remote = s;
    }
    if (!rank && nargs >= 2) { /* a tile of a device view: a remote copy with its owner */
        IrBuffer *sb = args[0]->kind == V_BUFFER || args[0]->kind == V_ACCESS ? args[0]->buf
                       : args[0]->kind == V_REGION ? args[0]->reg.buf : NULL;
        IrBuffer *db = args[1]->kind == V_BUFFER || args[1]->kind == V_ACCESS ? args[1]->buf
                       : args[1]->kind == V_REGION ? args[1]->reg.buf : NULL;
        if (!is_view(sb) && !is_view(db)) return false;
        if (is_view(sb) && is_view(db)) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "T.copy between two device views");
        if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "T.copy must be used inside `with T.Kernel(...)`");
        IrRegion src = tile_region(E, args[0], args[1], loc, "T.copy source");
        IrRegion dst = tile_region(E, args[1], args[0], loc, "T.copy destination");
        IrExpr *owner;
        if (is_view(sb)) src = view_local(E, src, &owner);
        else dst = view_local(E, dst, &owner);
        emit(E, ts_comm_remote_copy(E->a, src, dst, owner, is_view(sb), loc));
        return true;
    }
    if (!rank) return false;
    if (nargs != 2) elab_fail(E, TS_ERR_TYPE, loc, "T.copy(src, dst, dst=rank) takes the two tiles positionally");
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "T.copy must be used inside `with T.Kernel(...)`");
    CArgs A0 = {args, nargs, NULL, NULL, 0, "T.copy()", loc};
    IrRegion src = tile_region(E, args[0], args[1], loc, "T.copy source");
    IrRegion dst = tile_region(E, args[1], args[0], loc, "T.copy destination");
    IrRegion far = src_remote ? src : dst;
    if (far.buf->scope != IR_SCOPE_GLOBAL)
        elab_fail(E, TS_ERR_TYPE, loc, "T.copy: the %s tile on the other rank must be in a tensor on the symmetric heap, not %s memory",
                  src_remote ? "source" : "destination", ir_scope_name(far.buf->scope));
    emit(E, ts_comm_remote_copy(E->a, src, dst, peer_arg(E, &A0, rank), src_remote, loc));
    return true;
}

/* Tile operators a per-warp body may hold: those whose generic lowering
 * is right when one thread runs them (copies, fills, atomic adds,
 * communication);
 * tensor-core GEMMs, reductions and the like need the whole block. */
static bool warp_body_bad(const IrStmt *st, void *ctx) {
    (void)ctx;
    if (st->kind == IR_S_BARRIER) return true;
    return st->kind == IR_S_TILEOP && st->op && st->op->kind != TS_OP_COPY && st->op->kind != TS_OP_FILL &&
           st->op->kind != TS_OP_COMM && st->op->kind != TS_OP_ATOMIC_ADD;
}

static bool private_load(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_LOAD && (e->load.buf->scope == IR_SCOPE_LOCAL || e->load.buf->scope == IR_SCOPE_VAR ||
                                    e->load.buf->scope == IR_SCOPE_FRAGMENT);
}

/* A local T.copy / T.fill of a warp's body that its 32 lanes can share:
 * between shared or global tiles (a register of lane 0 is not the
 * others'), its operands read no register (lane 0 may have set it alone),
 * not a pipeline's asynchronous copy. */
static bool lanes_can_share(const IrStmt *st) {
    if (st->kind != IR_S_TILEOP || !st->op || (st->op->kind != TS_OP_COPY && st->op->kind != TS_OP_FILL) ||
        st->op->async)
        return false;
    const IrTileOp *op = st->op;
    if (op->kind == TS_OP_FILL && (op->nr != 1 || !op->value || ir_expr_any(op->value, private_load, NULL)))
        return false;
    if (op->kind == TS_OP_COPY && op->nr != 2) return false;
    for (int r = 0; r < op->nr; r++) {
        const IrRegion *g = &op->r[r];
        if (g->buf->scope != IR_SCOPE_SHARED && g->buf->scope != IR_SCOPE_GLOBAL) return false;
        for (int d = 0; d < g->ndim; d++)
            if (ir_expr_any(g->start[d], private_load, NULL) || ir_expr_any(g->extent[d], private_load, NULL))
                return false;
    }
    return true;
}

static IrStmt *warp_sync_stmt(Elab *E, TsLoc loc) {
    IrExpr **m = TS_NEWN(E->a, IrExpr *, 1);
    m[0] = ir_int(E->a, 0xffffffffLL, TS_UINT32);
    IrStmt *sy = ir_stmt(E->a, IR_S_EVAL, loc);
    sy->eval.e = ir_call(E->a, IR_WARP_SYNC, m, 1, TS_INT32);
    return sy;
}

/* A remote T.copy of a warp's body that its lanes can make together: its
 * regions and peer read no register (lane 0 may have set them alone). */
static bool lanes_can_send(const IrStmt *st) {
    if (st->kind != IR_S_TILEOP || !st->op || st->op->kind != TS_OP_COMM || st->op->comm != TS_COMM_COPY)
        return false;
    const IrTileOp *op = st->op;
    if (op->args[0] && ir_expr_any(op->args[0], private_load, NULL)) return false;
    for (int r = 0; r < op->nr; r++) {
        const IrRegion *g = &op->r[r];
        if (g->buf->scope != IR_SCOPE_SHARED && g->buf->scope != IR_SCOPE_GLOBAL) return false;
        for (int d = 0; d < g->ndim; d++)
            if (ir_expr_any(g->start[d], private_load, NULL) || ir_expr_any(g->extent[d], private_load, NULL))
                return false;
    }
    return true;
}

static bool lanes_share_any(const IrStmt *st, void *ctx) {
    (void)ctx;
    return lanes_can_share(st) || lanes_can_send(st);
}

/* Counting the thread index's uses in an expression, and those that are
 * `tid // (32 k)` (the same for every lane of a warp). */
typedef struct LaneUse {
    const IrVar *tid; /* the kernel's thread index */
    int uses;         /* its uses */
    int warp_uses;    /* ... of them inside tid // (32 k) */
    bool lane_call;   /* a warp primitive (its value differs between lanes) */
} LaneUse;

static bool count_lane_use(const IrExpr *e, void *ctx) {
    LaneUse *u = ctx;
    int64_t c;
    if (e->kind == IR_E_VAR && e->var == u->tid) u->uses++;
    if (e->kind == IR_E_BIN && e->bin.op == IR_FLOORDIV && e->bin.a->kind == IR_E_VAR && e->bin.a->var == u->tid &&
        ir_is_const_int(e->bin.b, &c) && c > 0 && c % 32 == 0)
        u->warp_uses++;
    if (ts_warp_call(e, NULL)) u->lane_call = true;
    return false;
}

/* Is e the same for every lane of a warp (no register read, no lane)?
 * Then all lanes of the warp take one way at a branch or loop bound, and
 * the __syncwarp of the whole warp in it is met by every lane. */
static bool warp_uniform(Elab *E, const IrExpr *e) {
    LaneUse u = {ir_kernel_tid(E->k), 0, 0, false};
    ir_expr_any(e, count_lane_use, &u);
    return u.uses == u.warp_uses && !u.lane_call && !ir_expr_any(e, private_load, NULL);
}

/* A serial loop or a branch of a warp's body that all lanes can run
 * together: its bounds or condition are the same for every lane and read
 * no register (lane 0 may have set it alone), and it holds a copy or fill
 * the lanes can share (else it is lane 0's, as a whole). */
static bool lanes_can_enter(Elab *E, const IrStmt *st) {
    if (st->kind == IR_S_FOR)
        return st->for_.kind == IR_FOR_SERIAL && !st->for_.num_stages && warp_uniform(E, st->for_.min) &&
               warp_uniform(E, st->for_.extent) && ir_stmt_any(st->for_.body, lanes_share_any, NULL);
    if (st->kind == IR_S_IF)
        return warp_uniform(E, st->if_.cond) && (ir_stmt_any(st->if_.then, lanes_share_any, NULL) ||
                                                 (st->if_.else_ && ir_stmt_any(st->if_.else_, lanes_share_any, NULL)));
    return false;
}

static IrStmt *warp_seq(Elab *E, IrStmt *body, IrExpr *lane, TsLoc loc);

/* s as a SEQ (a loop's or branch's body may be one statement). */
static IrStmt *as_seq(Elab *E, IrStmt *s) {
    if (s->kind == IR_S_SEQ) return s;
    IrStmt *q = ir_seq(E->a);
    q->loc = s->loc;
    ir_seq_push(E->a, q, s);
    return q;
}

/* A T.Scale("warp") body (SEQ) as the warp runs it: lets of values every
 * lane can compute and allocations for all lanes; local tile copies and
 * fills between shared/global tiles shared by the 32 lanes (TS_COMM_LANES,
 * a T.sync_warp before and after: the lanes see lane 0's stores and each
 * other's), remote T.copy of such tiles too (T.put_warp's meaning: the
 * ranges shared by the lanes, element copies dealt to them); serial loops and branches that hold such copies run by all
 * lanes, their bodies treated the same way (a T.sync_warp first where lane
 * 0's statements came before: the lanes read the bounds or condition after
 * them); everything else by lane 0 (`if lane == 0`), as before.  After a
 * let that only lane 0 can compute, the rest of that body stays with lane
 * 0. */
static IrStmt *warp_seq(Elab *E, IrStmt *body, IrExpr *lane, TsLoc loc) {
    TsArena *a = E->a;
    IrStmt *out = ir_seq(a), *group = NULL;
    out->loc = loc;
    bool spread = true;
    for (int i = 0; i < body->seq.n; i++) {
        IrStmt *st = body->seq.v[i];
        bool hoist = spread && (st->kind == IR_S_ALLOC ||
                                (st->kind == IR_S_LET && !ir_expr_any(st->let.value, private_load, NULL)));
        bool share = spread && !hoist && lanes_can_share(st);
        bool send = spread && !hoist && !share && lanes_can_send(st);
        bool enter = spread && !hoist && !share && !send && lanes_can_enter(E, st);
        if (hoist) {
            group = NULL;
            ir_seq_push(a, out, st);
            continue;
        }
        if (enter) {
            if (group) ir_seq_push(a, out, warp_sync_stmt(E, st->loc));
            group = NULL;
            IrStmt *n = ir_stmt(a, st->kind, st->loc);
            *n = *st;
            if (st->kind == IR_S_FOR) {
                n->for_.body = warp_seq(E, as_seq(E, st->for_.body), lane, st->loc);
            } else {
                n->if_.then = warp_seq(E, as_seq(E, st->if_.then), lane, st->loc);
                if (st->if_.else_) n->if_.else_ = warp_seq(E, as_seq(E, st->if_.else_), lane, st->loc);
            }
            ir_seq_push(a, out, n);
            continue;
        }
        if (send) { /* a remote copy: the lanes together (op/comm.h: COPY, f1) */
            group = NULL;
            IrStmt *c = ir_stmt(a, IR_S_TILEOP, st->loc);
            c->op = TS_NEW(a, IrTileOp);
            *c->op = *st->op;
            c->op->cflags[1] = 32;
            c->op->args[2] = lane;
            ir_seq_push(a, out, warp_sync_stmt(E, st->loc));
            ir_seq_push(a, out, c);
            ir_seq_push(a, out, warp_sync_stmt(E, st->loc));
            continue;
        }
        if (share) {
            group = NULL;
            IrStmt *c = ir_stmt(a, IR_S_TILEOP, st->loc);
            c->op = TS_NEW(a, IrTileOp);
            c->op->kind = TS_OP_COMM;
            c->op->comm = TS_COMM_LANES;
            c->op->nr = st->op->nr;
            for (int r = 0; r < st->op->nr; r++) c->op->r[r] = st->op->r[r];
            c->op->args[1] = st->op->kind == TS_OP_FILL ? st->op->value : NULL;
            c->op->args[2] = lane;
            c->op->cflags[0] = 32;
            ir_seq_push(a, out, warp_sync_stmt(E, st->loc));
            ir_seq_push(a, out, c);
            ir_seq_push(a, out, warp_sync_stmt(E, st->loc));
            continue;
        }
        if (st->kind == IR_S_LET) spread = false;
        if (!group) {
            IrStmt *g = ir_stmt(a, IR_S_IF, st->loc);
            g->if_.cond = ir_bin(a, IR_EQ, lane, ir_i32(a, 0));
            g->if_.then = group = ir_seq(a);
            ir_seq_push(a, out, g);
        }
        ir_seq_push(a, group, st);
    }
    return out;
}

/* The tile regions written by tile operators in a role body, in order. */
typedef struct RoleWrites {
    TsArena *a;                /* where the lists grow */
    const IrStmt *body;        /* the role's body (allocations in it are the unit's own) */
    TS_VEC(const IrRegion *) r; /* the regions written */
    TS_VEC(const IrStmt *) at;  /* ... by these statements */
} RoleWrites;

static bool alloc_of(const IrStmt *st, void *ctx) {
    return st->kind == IR_S_ALLOC && st->alloc.buf == ctx;
}

static bool collect_writes(const IrStmt *st, void *ctx) {
    RoleWrites *w = ctx;
    if (st->kind != IR_S_TILEOP || !st->op || st->op->kind == TS_OP_COLL) return false; /* (a collective's scratch
                                                                               is shared by design) */
    for (int i = 0; i < st->op->nr; i++)
        if ((ir_tileop_region_rw(st->op, i) & IR_ACC_WRITE) && st->op->r[i].buf->scope != IR_SCOPE_GLOBAL &&
            !ir_stmt_any(w->body, alloc_of, st->op->r[i].buf)) {
            ts_vec_push(w->a, w->r, &st->op->r[i]);
            ts_vec_push(w->a, w->at, st);
        }
    return false;
}

static bool same_region(const IrRegion *x, const IrRegion *y) {
    if (x->buf != y->buf || x->ndim != y->ndim) return false;
    for (int d = 0; d < x->ndim; d++)
        if (!ir_expr_equal(x->start[d], y->start[d]) || !ir_expr_equal(x->extent[d], y->extent[d])) return false;
    return true;
}

/* Units of one T.Scale that write one tile of the block at the same place
 * with a tile operator (every warp's T.gemm into one accumulator, every
 * warpgroup's T.copy into one shared tile): a race between the units, which
 * run at the same time; refused (each unit's own tile is allocated in the
 * body or a T.view of the block's). */
static void same_tile_check(Elab *E, const AstStmt *s, const IrStmt *parent, int per, const char *lv) {
    const IrStmt *b[2] = {NULL, NULL};
    int nb = 0;
    for (int i = parent->kind == IR_S_SEQ ? parent->seq.n - 1 : -1; i >= 0 && nb < 2; i--) {
        const IrStmt *r = parent->seq.v[i];
        if (r->kind != IR_S_ROLE || r->role.n != per) break;
        b[1 - nb++] = r->role.body; /* the last two units' bodies, in order */
    }
    if (nb < 2) return;
    RoleWrites w0 = {E->a, b[0], {0}, {0}}, w1 = {E->a, b[1], {0}, {0}};
    ir_stmt_any(b[0], collect_writes, &w0);
    ir_stmt_any(b[1], collect_writes, &w1);
    const IrStmt *bad = NULL;
    const IrBuffer *buf = NULL;
    for (int i = 0; i < w0.r.n && !bad; i++)
        for (int j = 0; j < w1.r.n && !bad; j++)
            if (same_region(w0.r.v[i], w1.r.v[j])) {
                bad = w0.at.v[i];
                buf = w0.r.v[i]->buf;
            }
    if (bad)
        elab_fail(E, TS_ERR_UNSUPPORTED, bad->loc,
                  "T.Scale(\"%s\"): every %s writes the same part of '%s', a tile of the whole block, at the same "
                  "time (a race); give each %s its own tile (allocate it in the body) or its part (T.view)",
                  lv, lv, buf->name, lv);
    (void)s;
}

static bool is_barrier_stmt(const IrStmt *st, void *ctx) {
    (void)ctx;
    return st->kind == IR_S_BARRIER;
}

/* The mark a collective leaves in a warp's lane form (count -1): the body
 * is then elaborated again as roles (unit_collective). */
static bool is_coll_mark(const IrStmt *st, void *ctx) {
    (void)ctx;
    return st->kind == IR_S_BARRIER && st->barrier.count == -1;
}

static IrStmt *tileop_stmt(Elab *E, TsOpKind kind, TsLoc loc);

/* ---- collectives between the units of one block ----------------------------------
 *
 * T.allreduce / T.allgather / T.reduce_scatter / T.all_to_all inside
 * `with T.Scale("warpgroup"|"warp")` run between the units (warpgroups,
 * warps) of one block, on each unit's own tile: a buffer allocated in the
 * Scale's body, so every unit has its own (doc/DISTRIBUTED.md has the
 * semantics).  A body with a collective runs as roles (scale_roles: the
 * body elaborated once per unit, id a constant); each unit's copy of the
 * body holds a TS_OP_COLL op with its own tile, its unit index and the
 * call site's shared scratch tile [units, ...], which all the units' ops
 * share; the pass lower_coll expands it (op/coll.c: the copies into the
 * slots, the barriers of the block, the fold in unit order).  The scratch
 * is created by unit 0's copy of the body and found by name by the
 * others; scale_roles puts its allocation before the roles. */

#define UNIT_SCRATCH "coll_unit_"

static bool allocs_buf(const IrStmt *st, void *ctx) {
    return st->kind == IR_S_ALLOC && st->alloc.buf == (const IrBuffer *)ctx;
}

/* b is the unit's own: allocated in the body of the unit's role. */
static void unit_buffer_check(Elab *E, CArgs *A, IrBuffer *b, const char *lv) {
    if (!E->role_body || !ir_stmt_any(E->role_body, allocs_buf, b))
        elab_fail(E, TS_ERR_TYPE, A->loc,
                  "%s inside T.Scale(\"%s\"): '%s' is not a tile of each %s (a collective between the %ss of a "
                  "block takes a buffer allocated in the T.Scale body, one per %s)",
                  A->fn, lv, b->name, lv, lv, lv);
    if (b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_FRAGMENT)
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s inside T.Scale(\"%s\"): '%s' must be a shared or fragment tile", A->fn,
                  lv, b->name);
    for (int i = 0; i < b->ndim; i++) {
        int64_t c;
        if (!ir_is_const_int(b->shape[i], &c))
            elab_fail(E, TS_ERR_UNSUPPORTED, A->loc, "%s inside T.Scale(\"%s\"): tiles with constant shapes only",
                      A->fn, lv);
    }
}

/* The call site's scratch [n, shape...] in shared memory: made by unit 0,
 * found by the others (the latest of its name). */
static IrBuffer *unit_scratch(Elab *E, CArgs *A, IrBuffer *like, int n) {
    const char *name = ts_sprintf(E->a, UNIT_SCRATCH "%d_%d", A->loc.line, A->loc.col);
    int64_t g = -1;
    ir_is_const_int(E->unit_id, &g);
    if (g > 0)
        for (int i = E->k->buffers.n - 1; i >= 0; i--) {
            IrBuffer *b = E->k->buffers.v[i];
            if (strcmp(b->name, name)) continue;
            bool same = b->dt == like->dt && b->ndim == like->ndim + 1;
            for (int d = 0; same && d < like->ndim; d++) same = ir_expr_equal(b->shape[d + 1], like->shape[d]);
            if (!same)
                elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: the units' tiles differ in shape or type", A->fn);
            return b;
        }
    IrExpr **sh = TS_NEWN(E->a, IrExpr *, like->ndim + 1);
    sh[0] = ir_i32(E->a, n);
    for (int d = 0; d < like->ndim; d++) sh[d + 1] = like->shape[d];
    return ir_buffer(E->k, name, like->dt, IR_SCOPE_SHARED, like->ndim + 1, sh, A->loc);
}

/* The op's TsCollKind of a builtin id. */
static int coll_kind(int c) {
    return c == C_ALLREDUCE ? TS_COLL_ALLREDUCE : c == C_ALLGATHER ? TS_COLL_ALLGATHER
           : c == C_REDUCE_SCATTER ? TS_COLL_REDUCE_SCATTER : TS_COLL_ALL_TO_ALL;
}

static void unit_collective(Elab *E, CArgs *A, int c, IrBuffer *src, IrBuffer *dst, TsReduceKind op) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    const char *lv = E->role_threads == 32 ? "warp" : "warpgroup";
    int n = E->unit_num;
    IrExpr *g = E->unit_id;
    unit_buffer_check(E, A, src, lv);
    if (dst != src) unit_buffer_check(E, A, dst, lv);
    if (dst->ndim != src->ndim || src->ndim < 1)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' must have the same number of dims", A->fn, src->name,
                  dst->name);
    int64_t rs, rd, e1, e2;
    ir_is_const_int(src->shape[0], &rs);
    ir_is_const_int(dst->shape[0], &rd);
    for (int i = 1; i < src->ndim; i++)
        if (ir_is_const_int(src->shape[i], &e1) && ir_is_const_int(dst->shape[i], &e2) && e1 != e2)
            elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' must agree beyond their first axis", A->fn, src->name,
                      dst->name);
    if (c == C_ALLGATHER && rd != rs * n)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' needs %lld rows (%d %ss x %lld), not %lld", A->fn, dst->name,
                  (long long)(rs * n), n, lv, (long long)rs, (long long)rd);
    if (c == C_REDUCE_SCATTER && rs != rd * n)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' needs %lld rows (%d %ss x %lld), not %lld", A->fn, src->name,
                  (long long)(rd * n), n, lv, (long long)rd, (long long)rs);
    if (c == C_ALL_TO_ALL && (rs != rd || rs % n))
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' need the same rows, a multiple of the %d %ss", A->fn,
                  src->name, dst->name, n, lv);
    IrBuffer *S = unit_scratch(E, A, src, n);
    IrStmt *st = tileop_stmt(E, TS_OP_COLL, loc);
    IrTileOp *o = st->op;
    o->coll = coll_kind(c);
    o->reduce = op;
    o->r[0] = ir_region_full(a, src);
    o->r[1] = ir_region_full(a, dst);
    o->r[2] = ir_region_full(a, S);
    o->nr = 3;
    o->args[0] = g;
    o->coll_units = n;
    o->coll_unit_threads = E->role_threads;
    emit(E, st);
}

/* scale_roles: the scratch tiles made by the body's collectives
 * (buffers[from..]) allocated in parent at `at`, before the roles. */
static void unit_scratch_allocs(Elab *E, IrStmt *parent, int at, int from) {
    for (int i = from; i < E->k->buffers.n; i++) {
        IrBuffer *b = E->k->buffers.v[i];
        if (strncmp(b->name, UNIT_SCRATCH, strlen(UNIT_SCRATCH))) continue;
        IrStmt *al = ir_stmt(E->a, IR_S_ALLOC, b->loc);
        al->alloc.buf = b;
        ir_seq_push(E->a, parent, al);
        for (int j = parent->seq.n - 1; j > at; j--) parent->seq.v[j] = parent->seq.v[j - 1];
        parent->seq.v[at++] = al;
    }
}

/* with T.Scale("warpgroup") as (id, count): every warpgroup of the block
 * (128 threads) runs the body as its own unit of work, a T.ws role of its
 * threads [128 g, 128 (g + 1)) per warpgroup g, the body elaborated once
 * per warpgroup with id = g a constant: tile operators in it are the
 * warpgroup's (its threads partition copies and fills, its warps run a
 * T.gemm), barriers the role's named ones (insert_sync), and T.view of a
 * block tile is the warpgroup's part of it (wg_view).  A body inside a
 * T.ws role keeps the old form (one lane per warpgroup).  The same for a
 * T.Scale("warp") body holding tile operators of the whole warp (a warp's
 * own T.gemm: per = 32, roles of 32 threads). */
static void scale_roles(Elab *E, Env *env, const AstStmt *s, int per, const char *lv) {
    IrKernel *k = E->k;
    int64_t nt = ir_kernel_nthreads(k);
    int n = (int)(nt / per);
    if (n < 1 || nt % per)
        elab_fail(E, TS_ERR_TYPE, s->loc, "T.Scale(\"%s\"): a block of %lld threads is not whole %ss", lv,
                  (long long)nt, lv);
    if (n > 15)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "T.Scale(\"%s\") with tile operators of the whole unit: %d %ss, "
                  "each a T.ws-like role with its own named barrier, and there are 15", lv, n, lv);
    const AstExpr *t = s->targets[0];
    const AstExpr *n0 = NULL, *n1 = NULL;
    if (t) {
        bool tup = t->kind == AST_TUPLE || t->kind == AST_LIST;
        if ((tup && t->n != 2) || (!tup && t->kind != AST_NAME))
            elab_fail(E, TS_ERR_TYPE, t->loc, "T.Scale binds (id, count) or just id");
        n0 = tup ? t->items[0] : t;
        n1 = tup ? t->items[1] : NULL;
        if (n0->kind != AST_NAME || (n1 && n1->kind != AST_NAME))
            elab_fail(E, TS_ERR_UNSUPPORTED, t->loc, "expected names");
    }
    IrStmt *saved = E->cur;
    IrExpr *sid = E->unit_id;
    int snum = E->unit_num;
    int at = saved->seq.n, from = k->buffers.n;
    for (int g = 0; g < n; g++) {
        IrStmt *r = ir_stmt(E->a, IR_S_ROLE, s->loc);
        r->role.lo = per * g;
        r->role.n = per;
        r->role.id = 1; /* (insert_sync numbers the roles' named barriers) */
        r->role.body = ir_seq(E->a);
        E->cur = saved;
        emit(E, r);
        if (n0) env_set(E, env, n0->name, val_expr(E, ir_i32(E->a, g), n0->loc));
        if (n1) env_set(E, env, n1->name, val_expr(E, ir_i32(E->a, n), n1->loc));
        E->cur = r->role.body;
        E->role_depth++;
        E->role_threads = per;
        E->role_body = r->role.body;
        E->unit_id = ir_i32(E->a, g);
        E->unit_num = n;
        exec_block(E, env, &s->body);
        E->role_depth--;
        E->role_threads = 0;
        E->role_body = NULL;
    }
    E->unit_id = sid;
    E->unit_num = snum;
    E->cur = saved;
    unit_scratch_allocs(E, saved, at, from);
    if (n > 1) same_tile_check(E, s, saved, per, lv);
}

/* with T.Scale(level) as (id, count): the body is SPMD over the units of
 * the level.  device: every rank runs it, (rank, ranks).  block: every
 * block, (linear block index, blocks).  warpgroup: scale_warpgroups.
 * warp (and warpgroup inside a T.ws role): every warp (32 threads) /
 * warpgroup (128) of the block runs the body once, (index,
 * count): as real warps, the body runs on the first lane of each unit
 * (`if tid % 32 == 0`, id = tid // 32), so on CUDA the units run at the
 * same time and on the C target thread_loops_c runs them one after
 * another; warp primitives called there move the range with that lane.
 * In a warp's body, local T.copy / T.fill between shared and global
 * tiles are shared by its 32 lanes instead, also inside serial loops and
 * branches of the body (warp_seq).
 * Tile operators that need the whole block (T.gemm, reductions) and
 * T.sync_threads are refused in such a body. */
void comm_exec_scale(Elab *E, Env *env, const AstStmt *s, Value *scale) {
    const char *lv = scale->s + 6;
    TsArena *a = E->a;
    IrKernel *k = E->k;
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "T.Scale must be used inside `with T.Kernel(...)`");
    IrExpr *id, *count;
    IrStmt *loop = NULL, *saved = E->cur;
    if (!strcmp(lv, "device")) {
        id = rank_var(E, 0, s->loc)->e;
        count = rank_var(E, 1, s->loc)->e;
    } else if (!strcmp(lv, "block")) {
        id = ir_var_ref(a, k->block_idx[0]);
        count = k->grid[0];
        for (int i = 1; i < k->ngrid; i++) {
            id = ir_bin(a, IR_ADD, id, ir_bin(a, IR_MUL, ir_var_ref(a, k->block_idx[i]), count));
            count = ir_bin(a, IR_MUL, count, k->grid[i]);
        }
    } else if (!strcmp(lv, "warpgroup") && !E->role_depth) {
        scale_roles(E, env, s, 128, lv);
        return;
    } else {
        int per = !strcmp(lv, "warp") ? 32 : 128;
        int n = k->threads[0] * k->threads[1] * k->threads[2] / per;
        if (n < 1)
            elab_fail(E, TS_ERR_TYPE, s->loc, "T.Scale(\"%s\"): a block of %d threads has no whole %s", lv,
                      k->threads[0] * k->threads[1] * k->threads[2], lv);
        IrExpr *tid = ir_var_ref(a, ir_kernel_tid(k));
        loop = ir_stmt(a, IR_S_IF, s->loc);
        loop->if_.cond = ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORMOD, tid, ir_i32(a, per)), ir_i32(a, 0));
        loop->if_.then = ir_seq(a);
        id = ir_bin(a, IR_FLOORDIV, ir_var_ref(a, ir_kernel_tid(k)), ir_i32(a, per));
        count = ir_i32(a, n);
    }
    const AstExpr *t = s->targets[0];
    if (t) {
        bool tup = t->kind == AST_TUPLE || t->kind == AST_LIST;
        if ((tup && t->n != 2) || (!tup && t->kind != AST_NAME))
            elab_fail(E, TS_ERR_TYPE, t->loc, "T.Scale binds (id, count) or just id");
        const AstExpr *n0 = tup ? t->items[0] : t, *n1 = tup ? t->items[1] : NULL;
        if (n0->kind != AST_NAME || (n1 && n1->kind != AST_NAME))
            elab_fail(E, TS_ERR_UNSUPPORTED, t->loc, "expected names");
        env_set(E, env, n0->name, val_expr(E, id, n0->loc));
        if (n1) env_set(E, env, n1->name, val_expr(E, count, n1->loc));
    }
    IrExpr *sid = E->unit_id;
    int snum = E->unit_num;
    if (loop) {
        emit(E, loop);
        E->cur = loop->if_.then;
        E->unit_id = id;
        int64_t c;
        E->unit_num = ir_is_const_int(count, &c) ? (int)c : 0;
    } else if (!strcmp(lv, "block")) { /* (collectives on a block's own tiles are refused: collective) */
        E->unit_id = NULL;
        E->unit_num = -1;
    }
    exec_block(E, env, &s->body);
    E->unit_id = sid;
    E->unit_num = snum;
    E->cur = saved;
    if (loop && !strcmp(lv, "warp") && !E->role_depth && ir_stmt_any(loop->if_.then, warp_body_bad, NULL) &&
        (!ir_stmt_any(loop->if_.then, is_barrier_stmt, NULL) || ir_stmt_any(loop->if_.then, is_coll_mark, NULL))) {
        /* a tile operator of the whole warp (a warp's T.gemm on its own
         * tile, a reduction): the body again, as a role of each warp's 32
         * threads (scale_roles) instead of lane 0's code */
        E->cur = saved;
        loop->kind = IR_S_SEQ;
        loop->seq = (IrStmtList){0};
        scale_roles(E, env, s, 32, lv);
        return;
    }
    if (loop && ir_stmt_any(loop->if_.then, warp_body_bad, NULL))
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc,
                  "T.Scale(\"%s\"): the body runs on one lane of each %s; tile operators that need the whole block "
                  "(T.gemm, reductions, ...) and T.sync_threads cannot be in it", lv, lv);
    if (loop && !strcmp(lv, "warp") && loop->if_.then->kind == IR_S_SEQ) { /* copies and fills over the lanes */
        IrStmt *w = warp_seq(E, loop->if_.then, ir_bin(a, IR_FLOORMOD, ir_var_ref(a, ir_kernel_tid(k)), ir_i32(a, 32)),
                             s->loc);
        *loop = *w;
    }
}

static IrStmt *tileop_stmt(Elab *E, TsOpKind kind, TsLoc loc) {
    IrStmt *s = ir_stmt(E->a, IR_S_TILEOP, loc);
    s->op = TS_NEW(E->a, IrTileOp);
    s->op->kind = kind;
    return s;
}

/* A collective between the blocks of the grid (inside T.Scale("block"),
 * on each block's own tile): the units are the blocks, so their number is
 * the grid's, which must be a constant (the staging in the grid workspace
 * has one slot per block).  Recorded as a COLL op with coll_units -1;
 * split_grid makes the kernel cooperative, lower_coll expands it. */
static void block_collective(Elab *E, CArgs *A, int c, IrBuffer *src, IrBuffer *dst, TsReduceKind op) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    int64_t n = 1;
    for (int i = 0; i < E->k->ngrid; i++) {
        int64_t e;
        if (!ir_is_const_int(E->k->grid[i], &e))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "%s inside T.Scale(\"block\"): a collective between the blocks needs a grid of constant extents "
                      "(one staging slot per block)", A->fn);
        n *= e;
    }
    if (n > 4096)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                  "%s inside T.Scale(\"block\"): %lld blocks; a collective between the blocks takes at most 4096 "
                  "(every block must be resident at once)", A->fn, (long long)n);
    IrBuffer *bs[2] = {src, dst};
    for (int j = 0; j < 2; j++)
        if (bs[j]->scope == IR_SCOPE_GLOBAL || is_view(bs[j]))
            elab_fail(E, TS_ERR_TYPE, loc,
                      "%s inside T.Scale(\"block\"): '%s' must be the block's own tile (shared, fragment or local), "
                      "as the other operand is", A->fn, bs[j]->name);
    if (dst->ndim != src->ndim || src->ndim < 1)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' must have the same number of dims", A->fn, src->name,
                  dst->name);
    int64_t rs = 0, rd = 0, e1, e2;
    if (!ir_is_const_int(src->shape[0], &rs) || !ir_is_const_int(dst->shape[0], &rd))
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: tiles of constant shape only", A->fn);
    for (int i = 1; i < src->ndim; i++)
        if (!ir_is_const_int(src->shape[i], &e1) || !ir_is_const_int(dst->shape[i], &e2) || e1 != e2)
            elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' must agree beyond their first axis", A->fn, src->name,
                      dst->name);
    if (c == C_ALLGATHER && rd != rs * n)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' needs %lld rows (%lld blocks x %lld), not %lld", A->fn, dst->name,
                  (long long)(rs * n), (long long)n, (long long)rs, (long long)rd);
    if (c == C_REDUCE_SCATTER && rs != rd * n)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' needs %lld rows (%lld blocks x %lld), not %lld", A->fn, src->name,
                  (long long)(rd * n), (long long)n, (long long)rd, (long long)rs);
    if (c == C_ALL_TO_ALL && (rs != rd || rs % n))
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' need the same rows, a multiple of the %lld blocks", A->fn,
                  src->name, dst->name, (long long)n);
    IrStmt *st = tileop_stmt(E, TS_OP_COLL, loc);
    IrTileOp *o = st->op;
    o->coll = coll_kind(c);
    o->reduce = op;
    o->r[0] = ir_region_full(a, src);
    o->r[1] = ir_region_full(a, dst);
    o->nr = 2;
    o->coll_units = -1;
    emit(E, st);
}

/* The collectives: T.allreduce, T.allgather, T.reduce_scatter and
 * T.all_to_all, between the ranks of the world on tensors on the
 * symmetric heap (inside T.Scale("device") or anywhere else in a kernel),
 * or between the warps / warpgroups of a block (unit_collective).  The
 * elaborator checks the operands and records one TS_OP_COLL tile op; the
 * pass lower_coll expands it (op/coll.c: semantics and how). */
static void collective(Elab *E, CArgs *A, int c) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    static const char *const kws[] = {"buffer", "src", "dst", "op", NULL};
    ccheck(E, A, 3, kws);
    IrBuffer *src = val_to_buffer(E, creq(E, A, 0, c == C_ALLREDUCE ? "buffer" : "src"), loc, A->fn);
    IrBuffer *dst = c == C_ALLREDUCE ? src : val_to_buffer(E, creq(E, A, 1, "dst"), loc, A->fn);
    Value *opv = comm_arg(E, A, c == C_ALLREDUCE ? 1 : 2, "op");
    TsReduceKind op = TS_REDUCE_SUM;
    if (opv) {
        const char *o = str_arg(E, A, opv, "op");
        op = !strcmp(o, "sum") ? TS_REDUCE_SUM : !strcmp(o, "max") ? TS_REDUCE_MAX : !strcmp(o, "min") ? TS_REDUCE_MIN
                                                                                                  : TS_REDUCE_ABSSUM;
        if (op == TS_REDUCE_ABSSUM)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: op must be 'sum', 'max' or 'min', not '%s'", A->fn, o);
    }
    if (E->unit_num == -1 && (src->scope != IR_SCOPE_GLOBAL || dst->scope != IR_SCOPE_GLOBAL)) {
        block_collective(E, A, c, src, dst, op);
        return;
    }
    if (E->unit_id && E->unit_num > 0) { /* between the warps / warpgroups of the block */
        int64_t gc;
        if (ir_is_const_int(E->unit_id, &gc) && E->role_depth) {
            unit_collective(E, A, c, src, dst, op);
        } else if (!E->role_depth) { /* a warp's lane form: the body again as roles (comm_exec_scale) */
            IrStmt *m = ir_stmt(a, IR_S_BARRIER, loc);
            m->barrier.count = -1;
            emit(E, m);
        } else {
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: a collective between the units of a T.Scale inside a T.ws role",
                      A->fn);
        }
        return;
    }
    if (is_view(src) || is_view(dst))
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: on a FullRow/FullCol device view (give the shard, or a Replica view)", A->fn);
    if (src->scope != IR_SCOPE_GLOBAL || dst->scope != IR_SCOPE_GLOBAL || src->ndim < 1 || dst->ndim != src->ndim)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: operates on tensors (of one rank) on the symmetric heap", A->fn);
    int64_t rows_s, rows_d;
    if (!ir_is_const_int(src->shape[0], &rows_s) || !ir_is_const_int(dst->shape[0], &rows_d))
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: tensors with constant shapes only", A->fn);
    for (int i = 1; i < src->ndim; i++) {
        int64_t e1, e2;
        if (!ir_is_const_int(src->shape[i], &e1) || !ir_is_const_int(dst->shape[i], &e2) || e1 != e2)
            elab_fail(E, TS_ERR_SHAPE, loc, "%s: '%s' and '%s' must agree beyond their first axis", A->fn, src->name, dst->name);
    }
    E->k->may_block = true; /* (world barriers: blocks wait for each other) */
    IrStmt *st = tileop_stmt(E, TS_OP_COLL, loc);
    st->op->coll = coll_kind(c);
    st->op->reduce = op;
    st->op->r[0] = ir_region_full(a, src);
    st->op->r[1] = ir_region_full(a, dst);
    st->op->nr = 2;
    emit(E, st);
}

Value *comm_builtin_call(Elab *E, int id, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                         TsLoc loc) {
    int c = id - ELAB_COMM_BASE;
    CArgs A0 = {args, nargs, kw, kwv, nkw, ts_sprintf(E->a, "T.%s()", comm_names[c]), loc}, *A = &A0;
    if (!E->cur)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside `with T.Kernel(...)`", A->fn);
    if (c >= C_SHFL_XOR && c <= C_TVM_WARP_SHUFFLE) return warp_builtin(E, c, A, loc);
    switch (c) {
    case C_GET_RANK:
    case C_GET_PE:
    case C_GET_NUM_RANKS:
    case C_GET_PE_NUM:
        ccheck(E, A, 0, NULL);
        return rank_var(E, c == C_GET_NUM_RANKS || c == C_GET_PE_NUM, loc);
    case C_ADDRESS_OF: {
        ccheck(E, A, 1, NULL);
        Value *v = creq(E, A, 0, "buffer_load");
        if (v->kind != V_ACCESS && v->kind != V_BUFFER && v->kind != V_REGION)
            elab_fail(E, TS_ERR_TYPE, loc, "T.address_of takes an element of a buffer, got %s", val_kind_name(v));
        /* marked (b): an argument of T.call_extern is then a pointer (extern_builtins.c); the
         * distributed primitives take the element, buffer or region as it is */
        Value *r = val_new(E, v->kind, v->loc);
        *r = *v;
        r->b = true;
        return r;
    }
    case C_PUT_BLOCK:
    case C_PUT_WARP:
    case C_GET_BLOCK:
    case C_GET_WARP: {
        bool get = c == C_GET_BLOCK || c == C_GET_WARP;
        static const char *const kws[] = {"src", "dst", "size", "dst_pe", "src_pe", "unroll_factor",
                                          "enable_aggressive_vectorize", NULL};
        ccheck(E, A, 6, kws);
        IrStmt *s = comm_op(E, get ? TS_COMM_GET : TS_COMM_PUT, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "src"), "the source");
        s->op->r[1] = addr(E, A, creq(E, A, 1, "dst"), "the destination");
        s->op->nr = 2;
        s->op->args[1] = int_arg(E, A, creq(E, A, 2, "size"), "size");
        s->op->args[0] = peer_arg(E, A, comm_arg(E, A, 3, get ? "src_pe" : "dst_pe"));
        s->op->cflags[1] = is_warp(c);
        emit(E, s);
        return val_none(E, loc);
    }
    case C_PUTMEM_NBI_BLOCK: case C_PUTMEM_BLOCK: case C_PUTMEM_NBI_WARP: case C_PUTMEM_WARP:
    case C_PUTMEM: case C_PUTMEM_NBI:
    case C_GETMEM_NBI_BLOCK: case C_GETMEM_BLOCK: case C_GETMEM_NBI_WARP: case C_GETMEM_WARP:
    case C_GETMEM: case C_GETMEM_NBI: {
        bool get = c >= C_GETMEM_NBI_BLOCK;
        static const char *const kws[] = {"dest", "src", "nelems", "pe", NULL};
        ccheck(E, A, 4, kws);
        IrStmt *s = comm_op(E, get ? TS_COMM_GET : TS_COMM_PUT, loc);
        s->op->r[1] = addr(E, A, creq(E, A, 0, "dest"), "the destination");
        s->op->r[0] = addr(E, A, creq(E, A, 1, "src"), "the source");
        s->op->nr = 2;
        s->op->args[1] = bytes_to_elems(E, int_arg(E, A, creq(E, A, 2, "nelems"), "the byte count"), s->op->r[1].buf->dt);
        s->op->args[0] = peer_arg(E, A, creq(E, A, 3, "pe"));
        s->op->cflags[1] = is_warp(c);
        emit(E, s);
        return val_none(E, loc);
    }
    case C_PUTMEM_SIGNAL_NBI_BLOCK: case C_PUTMEM_SIGNAL_BLOCK: case C_PUTMEM_SIGNAL_NBI_WARP:
    case C_PUTMEM_SIGNAL_WARP: case C_PUTMEM_SIGNAL: case C_PUTMEM_SIGNAL_NBI: {
        static const char *const kws[] = {"dest", "src", "nelems", "sig_addr", "signal", "sig_op", "pe", NULL};
        ccheck(E, A, 7, kws);
        IrStmt *s = comm_op(E, TS_COMM_PUT, loc);
        IrTileOp *op = s->op;
        op->r[1] = addr(E, A, creq(E, A, 0, "dest"), "the destination");
        op->r[0] = addr(E, A, creq(E, A, 1, "src"), "the source");
        op->r[2] = addr(E, A, creq(E, A, 3, "sig_addr"), "the signal");
        op->nr = 3;
        op->args[1] = bytes_to_elems(E, int_arg(E, A, creq(E, A, 2, "nelems"), "the byte count"), op->r[1].buf->dt);
        op->args[2] = value_for(E, A, creq(E, A, 4, "signal"), op->r[2].buf->dt);
        int64_t so = val_to_int(E, creq(E, A, 5, "sig_op"), loc, "sig_op");
        if (so != 9 && so != 10)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: sig_op must be 9 (NVSHMEM_SIGNAL_SET) or 10 (NVSHMEM_SIGNAL_ADD), not %lld",
                      A->fn, (long long)so);
        op->cflags[0] = so == 10 ? TS_SIG_ADD : TS_SIG_SET;
        op->args[0] = peer_arg(E, A, creq(E, A, 6, "pe"));
        op->cflags[1] = is_warp(c);
        emit(E, s);
        return val_none(E, loc);
    }
    case C_SIGNAL_OP: {
        static const char *const kws[] = {"sig_addr", "signal", "sig_op", "pe", NULL};
        ccheck(E, A, 4, kws);
        IrStmt *s = comm_op(E, TS_COMM_SIGNAL, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "sig_addr"), "the signal");
        s->op->nr = 1;
        s->op->args[1] = value_for(E, A, creq(E, A, 1, "signal"), s->op->r[0].buf->dt);
        int64_t so = val_to_int(E, creq(E, A, 2, "sig_op"), loc, "sig_op");
        if (so != 9 && so != 10)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: sig_op must be 9 (NVSHMEM_SIGNAL_SET) or 10 (NVSHMEM_SIGNAL_ADD), not %lld",
                      A->fn, (long long)so);
        s->op->cflags[0] = so == 10 ? TS_SIG_ADD : TS_SIG_SET;
        s->op->args[0] = peer_arg(E, A, creq(E, A, 3, "pe"));
        emit(E, s);
        return val_none(E, loc);
    }
    case C_SIGNAL_WAIT_UNTIL: {
        static const char *const kws[] = {"sig_addr", "cmp", "cmp_value", NULL};
        ccheck(E, A, 3, kws);
        IrStmt *s = comm_op(E, TS_COMM_WAIT, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "sig_addr"), "the signal");
        s->op->nr = 1;
        /* NVSHMEM_CMP_EQ, NE, GT, LE, LT, GE = 0..5 */
        static const int map[6] = {TS_CMP_EQ, TS_CMP_NE, TS_CMP_GT, TS_CMP_LE, TS_CMP_LT, TS_CMP_GE};
        int64_t cmp = val_to_int(E, creq(E, A, 1, "cmp"), loc, "cmp");
        if (cmp < 0 || cmp > 5)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: cmp must be an NVSHMEM_CMP_* value 0..5, not %lld", A->fn, (long long)cmp);
        s->op->cflags[0] = map[cmp];
        s->op->args[1] = value_for(E, A, creq(E, A, 2, "cmp_value"), s->op->r[0].buf->dt);
        emit(E, s);
        return val_none(E, loc);
    }
    case C_WAIT_EQ: case C_WAIT_NE: case C_WAIT_GE: case C_WAIT_LE: case C_WAIT_GT: case C_WAIT_LT: {
        static const char *const kws[] = {"value", "expected", "peer", NULL};
        ccheck(E, A, 3, kws);
        IrStmt *s = comm_op(E, TS_COMM_WAIT, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "value"), "the awaited element");
        s->op->nr = 1;
        static const int map[6] = {TS_CMP_EQ, TS_CMP_NE, TS_CMP_GE, TS_CMP_LE, TS_CMP_GT, TS_CMP_LT};
        s->op->cflags[0] = map[c - C_WAIT_EQ];
        s->op->args[1] = value_for(E, A, creq(E, A, 1, "expected"), s->op->r[0].buf->dt);
        s->op->args[0] = peer_arg(E, A, comm_arg(E, A, 2, "peer"));
        emit(E, s);
        return val_none(E, loc);
    }
    case C_ST:
    case C_INT_P: {
        IrStmt *s = comm_op(E, TS_COMM_ST, loc);
        if (c == C_INT_P) {
            static const char *const kws[] = {"dest", "value", "pe", NULL};
            ccheck(E, A, 3, kws);
            s->op->r[0] = addr(E, A, creq(E, A, 0, "dest"), "the destination");
            s->op->args[0] = peer_arg(E, A, creq(E, A, 2, "pe"));
            s->op->cflags[1] = TS_SEM_WEAK;
            s->op->cflags[2] = TS_SCOPE_SYS;
        } else {
            static const char *const kws[] = {"dst", "value", "scope", "sem", "na", "dst_pe", NULL};
            ccheck(E, A, 6, kws);
            s->op->r[0] = addr(E, A, creq(E, A, 0, "dst"), "the destination");
            s->op->cflags[2] = scope_arg(E, A, comm_arg(E, A, 2, "scope"), TS_SCOPE_GPU);
            s->op->cflags[1] = sem_arg(E, A, comm_arg(E, A, 3, "sem"), TS_SEM_WEAK, "weak, volatile, release, relaxed");
            s->op->args[0] = peer_arg(E, A, comm_arg(E, A, 5, "dst_pe"));
        }
        s->op->nr = 1;
        s->op->args[1] = value_for(E, A, creq(E, A, 1, "value"), s->op->r[0].buf->dt);
        emit(E, s);
        return val_none(E, loc);
    }
    case C_LD: {
        static const char *const kws[] = {"src", "value", "scope", "sem", "na", "nc", "src_pe", NULL};
        ccheck(E, A, 7, kws);
        IrStmt *s = comm_op(E, TS_COMM_LD, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "src"), "the source");
        Value *dv = creq(E, A, 1, "value");
        IrBuffer *var = NULL; /* an alloc_var receives through a one-element local buffer */
        if (dv->kind == V_BUFFER && dv->buf->scope == IR_SCOPE_VAR) {
            var = dv->buf;
            IrExpr *one = ir_i32(E->a, 1);
            IrBuffer *tmp = ir_buffer(E->k, "ld_tmp", var->dt, IR_SCOPE_LOCAL, 1, &one, loc);
            IrStmt *al = ir_stmt(E->a, IR_S_ALLOC, loc);
            al->alloc.buf = tmp;
            emit(E, al);
            dv = val_new(E, V_BUFFER, loc);
            dv->buf = tmp;
        }
        s->op->r[1] = addr(E, A, dv, "the receiving value");
        if (s->op->r[1].buf->scope == IR_SCOPE_GLOBAL)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the value receiving the load must be a local buffer or variable", A->fn);
        s->op->nr = 2;
        s->op->cflags[2] = scope_arg(E, A, comm_arg(E, A, 2, "scope"), TS_SCOPE_GPU);
        s->op->cflags[1] = sem_arg(E, A, comm_arg(E, A, 3, "sem"), TS_SEM_WEAK, "weak, volatile, acquire, relaxed");
        if (s->op->cflags[1] != TS_SEM_WEAK) E->k->may_block = true; /* a polling load */
        s->op->args[0] = peer_arg(E, A, comm_arg(E, A, 6, "src_pe"));
        emit(E, s);
        if (var) {
            IrExpr **z = TS_NEWN(E->a, IrExpr *, 2);
            z[0] = z[1] = ir_i32(E->a, 0);
            emit(E, ir_store(E->a, var, z, 1, ir_load(E->a, s->op->r[1].buf, z + 1, 1)));
        }
        return val_none(E, loc);
    }
    case C_ATOM_ADD: {
        static const char *const kws[] = {"target", "value", "scope", "sem", "peer", NULL};
        ccheck(E, A, 5, kws);
        IrStmt *s = comm_op(E, TS_COMM_ATOM_ADD, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "target"), "the target");
        s->op->args[1] = value_for(E, A, creq(E, A, 1, "value"), s->op->r[0].buf->dt);
        s->op->cflags[2] = scope_arg(E, A, comm_arg(E, A, 2, "scope"), TS_SCOPE_GPU);
        s->op->cflags[1] = sem_arg(E, A, comm_arg(E, A, 3, "sem"), TS_SEM_RELAXED, "relaxed, acquire, release, acq_rel");
        s->op->args[0] = peer_arg(E, A, comm_arg(E, A, 4, "peer"));
        /* the value before the add (TileScale's atom_add returns it, as
         * atomicAdd does) lands in a one-element register, r1 */
        IrExpr *one = ir_i32(E->a, 1), *zero = ir_i32(E->a, 0);
        IrBuffer *old = ir_buffer(E->k, "atom_old", s->op->r[0].buf->dt, IR_SCOPE_LOCAL, 1, &one, loc);
        IrStmt *al = ir_stmt(E->a, IR_S_ALLOC, loc);
        al->alloc.buf = old;
        emit(E, al);
        s->op->r[1] = (IrRegion){old, 1, TS_NEWN(E->a, IrExpr *, 1), TS_NEWN(E->a, IrExpr *, 1)};
        s->op->r[1].start[0] = zero;
        s->op->r[1].extent[0] = one;
        s->op->nr = 2;
        emit(E, s);
        return val_expr(E, ir_load(E->a, old, &zero, 1), loc);
    }
    case C_FENCE_CTA: case C_FENCE_GPU: case C_FENCE_SYS: case C_FENCE: case C_QUIET: {
        ccheck(E, A, 0, NULL);
        IrStmt *s = comm_op(E, TS_COMM_FENCE, loc);
        s->op->cflags[0] = c == C_QUIET;
        s->op->cflags[2] = c == C_FENCE_CTA ? TS_SCOPE_CTA : c == C_FENCE_GPU ? TS_SCOPE_GPU : TS_SCOPE_SYS;
        emit(E, s);
        return val_none(E, loc);
    }
    case C_BARRIER_BLOCKS:
    case C_SYNC_BLOCKS: {
        static const char *const kws[] = {"barrier", NULL};
        ccheck(E, A, 1, kws);
        IrStmt *s = comm_op(E, TS_COMM_BARRIER_BLOCKS, loc);
        s->op->r[0] = addr(E, A, creq(E, A, 0, "barrier"), "the barrier");
        s->op->nr = 1;
        s->op->cflags[0] = c == C_BARRIER_BLOCKS;
        emit(E, s);
        return val_none(E, loc);
    }
    case C_BARRIER_ALL: case C_BARRIER_ALL_BLOCK: case C_SYNC_ALL: case C_SYNC_ALL_BLOCK:
        ccheck(E, A, 0, NULL);
        emit(E, comm_op(E, TS_COMM_BARRIER_ALL, loc));
        return val_none(E, loc);
    case C_SCALE: {
        static const char *const kws[] = {"level", NULL};
        ccheck(E, A, 1, kws);
        const char *lv = str_arg(E, A, creq(E, A, 0, "level"), "the level");
        if (strcmp(lv, "device") && strcmp(lv, "block") && strcmp(lv, "warpgroup") && strcmp(lv, "warp"))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "T.Scale: level '%s' is not supported (device, block, warpgroup, warp)", lv);
        Value *v = val_new(E, V_ENUM, loc);
        v->s = ts_sprintf(E->a, "Scale.%s", lv);
        return v;
    }
    case C_ALLREDUCE: case C_ALLGATHER: case C_REDUCE_SCATTER: case C_ALL_TO_ALL:
        collective(E, A, c);
        return val_none(E, loc);
    case C_VIEW: return make_view(E, A);
    default: break;
    }
    elab_fail(E, TS_ERR_INTERNAL, loc, "distributed builtin %d", c);
}
