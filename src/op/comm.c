/*
 * comm.c — the lowering of the communication tile op (TS_OP_COMM).
 *
 * The element primitives (put/get of a flat range, st, ld, waits, atomics,
 * signals, fences, barriers) stay tile ops after lowering, marked
 * TS_OP_INST_COMM: what they need — an address on another rank's heap, a
 * bounded spin, a fence — is not expressible in loads and stores, so each
 * target's emitter prints them (target/c/comm_c.c).  This file checks
 * their operands once for every target.
 *
 * The tile form, a remote T.copy (op/comm.h: COPY), becomes ranges where
 * both tiles are plain row-major memory (flat PUT/GET, one per contiguous
 * run, which the targets move with all threads of a block in 16-byte
 * vectors), and otherwise a loop nest over the matched regions, exactly
 * as T.copy pairs them (op_pair_regions), whose body is one ST
 * (destination remote) or LD (source remote) per element, with the same
 * bounds guards as T.copy on global buffers (see lower_copy).  The
 * collectives of the hierarchical layer are written in the front end in
 * terms of these (elab/comm_builtins.c), so they arrive here already as
 * primitives and remote copies.
 */
#include "op/comm.h"

#include "ir/walk.h"
#include "op/op_util.h"

IrStmt *ts_comm_stmt(TsArena *a, TsCommKind kind, TsLoc loc) {
    IrStmt *s = ir_stmt(a, IR_S_TILEOP, loc);
    s->op = TS_NEW(a, IrTileOp);
    s->op->kind = TS_OP_COMM;
    s->op->comm = kind;
    return s;
}

IrStmt *ts_comm_remote_copy(TsArena *a, IrRegion src, IrRegion dst, IrExpr *peer, int src_remote, TsLoc loc) {
    IrStmt *s = ts_comm_stmt(a, TS_COMM_COPY, loc);
    s->op->r[0] = src;
    s->op->r[1] = dst;
    s->op->nr = 2;
    s->op->args[0] = peer;
    s->op->cflags[0] = src_remote;
    return s;
}

const char *ts_comm_cmp_text(int cmp) {
    switch (cmp) {
    case TS_CMP_EQ: return "==";
    case TS_CMP_NE: return "!=";
    case TS_CMP_GE: return ">=";
    case TS_CMP_LE: return "<=";
    case TS_CMP_GT: return ">";
    case TS_CMP_LT: return "<";
    default: return "?";
    }
}

int ts_comm_rows_axis(const IrRegion *r, int64_t *rows) {
    for (int d = 0; d < r->ndim; d++) {
        int64_t e;
        if (ir_is_const_int(r->extent[d], &e) && e > 1) {
            *rows = e;
            return d;
        }
    }
    return -1;
}

static bool comm_stmt_p(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op && s->op->kind == TS_OP_COMM;
}

/* Every statement kind the shared walker descends into (T.ws roles too: a
 * hand-written recursion here missed IR_S_ROLE, so a role's primitive got
 * no prelude on the C target and no lower_comm on CUDA). */
bool ts_comm_used(const IrStmt *s) { return s && ir_stmt_any(s, comm_stmt_p, NULL); }

bool ts_warp_fn(IrIntrinsic fn) { return fn >= IR_WARP_SHFL && fn <= IR_WARP_SYNC; }

bool ts_warp_call(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_CALL && ts_warp_fn(e->call.fn);
}

bool ts_warp_used(const IrStmt *s) { return s && ir_stmt_any_expr(s, ts_warp_call, NULL); }

/* NCCL's device API (nccl_device.h of 2.28.9, and its device GIN page up
 * to 2.31: ncclGin put / putValue / signal / flush; doc/DISTRIBUTED.md has
 * the facts): one-sided puts of window memory or of a value of at most 8
 * bytes, signals that are only ADDED to (SignalAdd / SignalInc; a
 * SignalSet is "support deferred" in every release so far), visible at
 * the peer after the payloads of the context's earlier puts to it; no
 * fetching atomics, no addresses of another node's memory.  So a set
 * signal or a release store (a flag) has no ordered form and is refused
 * (a putValue after the data may land first); adds go to GIN signals
 * (pass lower_comm maps the signal buffers, TsGinForm). */
static const char gin_no_set[] =
    "NCCL's GIN cannot set a signal in order after the data (its signals are only added to: no SignalSet "
    "up to NCCL 2.31, and a putValue after the data may land before it); use an adding signal "
    "(T.Amo.SIGNAL_ADD, and wait with GE for the count), or T.barrier_all after the data";

const char *ts_comm_gin_lacks(const IrTileOp *op) {
    const int64_t most = 8; /* putValue's value, bytes */
    const IrBuffer *sig = op->comm == TS_COMM_PUT && op->nr == 3 ? op->r[2].buf : op->r[0].buf;
    int sig_int = sig && ts_dtype_is_int(sig->dt) && ts_dtype_bits(sig->dt) >= 32;
    switch (op->comm) {
    case TS_COMM_GET:
    case TS_COMM_LD: return "NCCL's GIN has no gets before NCCL 2.30.3 (and then not on every backend)";
    case TS_COMM_WAIT: return "a wait polls memory, and another node's has no address (wait on this rank's)";
    case TS_COMM_ATOM_ADD:
        if (op->nr > 1) return "GIN's adds return nothing (T.atom_add's value before the add)";
        return sig_int ? NULL : "GIN adds 64-bit integers to its signals, not to words of this type";
    case TS_COMM_SIGNAL:
        if (op->cflags[0] == TS_SIG_SET) return gin_no_set;
        return sig_int ? NULL : "GIN adds 64-bit integers to its signals: the signal must be a 32- or 64-bit integer";
    case TS_COMM_ST:
        if (op->cflags[1] == TS_SEM_RELEASE || op->cflags[1] == TS_SEM_ACQ_REL)
            return "a release store is a flag, and NCCL's GIN lands a putValue in no promised order with the "
                   "puts before it; use an adding signal (T.signal_op with T.Amo.SIGNAL_ADD) after the data";
        return ts_dtype_bits(op->r[0].buf->dt) > most * 8 ? "GIN puts values of at most 8 bytes" : NULL;
    case TS_COMM_PUT:
        if (op->cflags[1] == 1) return "a warp variant's lanes would each post the range (use the block form)";
        if (op->nr == 3 && op->cflags[0] == TS_SIG_SET) return gin_no_set;
        if (op->nr == 3 && !sig_int)
            return "GIN adds 64-bit integers to its signals: the signal must be a 32- or 64-bit integer";
        return NULL;
    case TS_COMM_BARRIER_BLOCKS:
        return "its per-peer counters are heap words, which GIN cannot add to or poll on another node";
    case TS_COMM_BARRIER_ALL: return NULL; /* GIN signals between the ranks (comm_cuda.c emit_barrier_all_gin) */
    default: return NULL;
    }
}

bool ts_comm_block_role(const IrStmt *s) {
    int64_t n;
    if (!s || s->kind != IR_S_FOR || s->for_.kind != IR_FOR_THREAD || !ir_is_const_int(s->for_.extent, &n) || n != 1)
        return false;
    const IrStmt *b = s->for_.body;
    while (b && b->kind == IR_S_SEQ && b->seq.n == 1) b = b->seq.v[0];
    return b && b->kind == IR_S_TILEOP && b->op && b->op->kind == TS_OP_COMM;
}

/* How each kind touches its regions (op/comm.h lists them).  The remote
 * side is named by the local buffer of the same symmetric tensor: a put
 * to another rank writes no local element, but to the own rank it does,
 * so the destination counts as written.  Waits only read; a signal that
 * adds and an atomic read and write; the block barriers' counters are
 * read and written.  Passes that must order a primitive with everything
 * around it (insert_sync: a barrier before and after) do so by its kind,
 * not by these bits. */
int ts_op_comm_regions(const IrTileOp *op, int i) {
    const int R = IR_ACC_READ, W = IR_ACC_WRITE;
    switch (op->comm) {
    case TS_COMM_PUT:
    case TS_COMM_GET:
        return i == 0 ? R : i == 1 ? W : op->cflags[0] == TS_SIG_ADD ? R | W : W; /* r2: the signal */
    case TS_COMM_COPY: return i == 0 ? R : W;
    case TS_COMM_LANES: return op->nr == 1 ? W : i == 0 ? R : W;
    case TS_COMM_ST: return W;
    case TS_COMM_LD: return i == 0 ? R : W;
    case TS_COMM_WAIT: return R;
    case TS_COMM_ATOM_ADD: return i == 0 ? R | W : W;
    case TS_COMM_SIGNAL: return op->cflags[0] == TS_SIG_ADD ? R | W : W;
    default: return R | W; /* the barriers' counters; anything new: the worst */
    }
}

/* The one-element region buf[idx]. */
static IrRegion elem_region(TsArena *a, IrBuffer *b, IrExpr **idx) {
    IrRegion r = {b, b->ndim, idx, TS_NEWN(a, IrExpr *, b->ndim > 0 ? b->ndim : 1)};
    for (int d = 0; d < b->ndim; d++) r.extent[d] = ir_i32(a, 1);
    return r;
}

static IrStmt *comm_stmt(TsArena *a, TsLoc loc, const IrTileOp *proto) {
    IrStmt *s = ir_stmt(a, IR_S_TILEOP, loc);
    s->op = TS_NEW(a, IrTileOp);
    *s->op = *proto;
    s->op->inst = TS_OP_INST_COMM;
    return s;
}

static IrStmt *deal_lanes(TsLowerCtx *cx, TsLoc loc, IrStmt *body, IrVar **v, const int64_t *ext, int n, int64_t per,
                          IrExpr *lane);

/* COPY, element by element: loops of ST (remote destination) or LD
 * (remote source), each guarded like T.copy.  On CUDA every element is a
 * primitive of its own between barriers: correct for any tile (register
 * fragments, swizzled or multi-buffered shared tiles, partial tiles,
 * conversions), slow.  The fallback of lower_copy below. */
static IrStmt *copy_elements(TsLowerCtx *cx, const IrStmt *s, OpPair *p) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    IrTileOp e = {0};
    e.kind = TS_OP_COMM;
    e.args[0] = op->args[0];
    e.cflags[1] = TS_SEM_WEAK;
    e.cflags[2] = TS_SCOPE_SYS;
    if (op->cflags[0] == 0) {
        e.comm = TS_COMM_ST;
        e.r[0] = elem_region(a, dst->buf, p->dst_idx);
        e.nr = 1;
        IrExpr *v = ir_load(a, src->buf, p->src_idx, src->ndim);
        e.args[1] = v->dt == dst->buf->dt ? v : ir_cast(a, dst->buf->dt, v);
    } else {
        e.comm = TS_COMM_LD;
        e.r[0] = elem_region(a, src->buf, p->src_idx);
        e.r[1] = elem_region(a, dst->buf, p->dst_idx);
        e.nr = 2;
    }
    IrStmt *body = comm_stmt(a, s->loc, &e);
    body = op_if(a, s->loc, op_in_bounds(a, src->buf, p->src_idx), body, NULL);
    body = op_if(a, s->loc, op_in_bounds(a, dst->buf, p->dst_idx), body, NULL);
    if (op->cflags[1] > 0) /* a warp's copy: the elements dealt to its lanes (op/comm.h) */
        return deal_lanes(cx, s->loc, body, p->v, p->ext, p->n, op->cflags[1], op->args[2]);
    return op_loops(a, s->loc, p->v, p->ext, p->n, IR_FOR_SERIAL, body);
}

static bool gemm_uses(const IrStmt *s, void *ctx) {
    if (s->kind != IR_S_TILEOP || s->op->kind != TS_OP_GEMM) return false;
    for (int i = 0; i < s->op->nr; i++)
        if (s->op->r[i].buf == ctx) return true;
    return false;
}

/* Can a range of b be addressed as plain row-major memory, now and after
 * the CUDA passes that follow?  Global tensors on the heap are compact
 * row-major (ts_kernel_launch_world checks it); shared tiles are, unless
 * multi-buffered, swizzled, or a T.gemm operand (layout_inference swizzles
 * those later).  Register fragments and locals have no addresses a block
 * can share. */
static bool flat_buffer(TsLowerCtx *cx, const IrBuffer *b) {
    if (b->scope == IR_SCOPE_GLOBAL) return b->param >= 0;
    if (b->scope != IR_SCOPE_SHARED) return false;
    return b->stages <= 1 && b->swizzle.kind == IR_SWIZZLE_NONE && !ir_stmt_any(cx->k->body, gemm_uses, (void *)b);
}

/* The row-major stride of axis d of b, or -1 when not a constant. */
static int64_t const_stride(const IrBuffer *b, int d) {
    int64_t st = 1, c;
    for (int e = d + 1; e < b->ndim; e++) {
        if (!ir_is_const_int(b->shape[e], &c) || c < 0 || (c && st > INT64_MAX / c)) return -1;
        st *= c;
    }
    return st;
}

/* The first paired dim j0 such that dims j0 .. n-1 of r (buffer axes
 * dims[]) are one contiguous run in row-major memory; n when even the
 * last is not (it is not the buffer's last axis). */
static int contiguous_from(const IrRegion *r, const int *dims, const int64_t *ext, int n) {
    if (n == 0 || dims[n - 1] != r->buf->ndim - 1) return n;
    int j0 = n - 1;
    int64_t run = ext[n - 1];
    while (j0 > 0) {
        int64_t st = const_stride(r->buf, dims[j0 - 1]);
        if (st < 0 || st != run) break;
        j0--;
        run *= ext[j0];
    }
    return j0;
}

/* start[d] + extent[d] <= shape[d] on every axis of a global region (all
 * of it inside the tensor); NULL when it folds to true. */
static IrExpr *region_inside(TsArena *a, const IrRegion *r) {
    if (r->buf->scope != IR_SCOPE_GLOBAL) return NULL;
    IrExpr *cond = NULL;
    for (int d = 0; d < r->ndim; d++) {
        IrExpr *end = ir_bin(a, IR_ADD, r->start[d], r->extent[d]);
        IrExpr *c = ir_bin(a, IR_AND, ir_bin(a, IR_GE, r->start[d], ir_int(a, 0, r->start[d]->dt)),
                           ir_bin(a, IR_LE, end, r->buf->shape[d]));
        int64_t v;
        if (ir_is_const_int(c, &v) && v) continue;
        cond = cond ? ir_bin(a, IR_AND, cond, c) : c;
    }
    return cond;
}

/* COPY: a remote tile copy.  Where both tiles are plain row-major memory
 * with one dtype, the copy becomes ranges: the longest run of trailing
 * dims contiguous on both sides is one range (a whole tile of full rows,
 * as the collectives' tiles are, is a single flat PUT/GET), the dim before
 * it the rows of one PUT/GET in the rows form (a 2-D tile of a wider
 * tensor: one op, R rows of BN elements), and the dims before that loops.
 * The target moves each op with every thread of the block in 16-byte
 * vectors where the addresses allow (comm_cuda.c; memmove on the C
 * target).  A
 * global tile that may hang over its tensor's end is tested at run time:
 * partial tiles take the element path, which guards every element. */
static IrStmt *lower_copy(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    OpPair p;
    op_pair_regions(cx, s, "T.copy", src, dst, &p);
    IrStmt *slow = copy_elements(cx, s, &p);
    if (p.n == 0 || src->buf->dt != dst->buf->dt || ts_dtype_bits(src->buf->dt) < 8 || !flat_buffer(cx, src->buf) ||
        !flat_buffer(cx, dst->buf))
        return slow;
    int sd[OP_MAXDIM], dd[OP_MAXDIM];
    int64_t ext[OP_MAXDIM];
    op_region_shape(cx, s, "T.copy", src, sd, ext);
    op_region_shape(cx, s, "T.copy", dst, dd, ext);
    int js = contiguous_from(src, sd, p.ext, p.n), jd = contiguous_from(dst, dd, p.ext, p.n);
    int j0 = js > jd ? js : jd;
    if (j0 >= p.n) return slow;
    int64_t run = 1;
    for (int j = j0; j < p.n; j++) run *= p.ext[j];
    /* dim j0-1 (if any) becomes the rows of the range (op/comm.h: the rows
     * form); one such op per point of the dims before it */
    int nl = j0 > 0 ? j0 - 1 : 0;
    IrVar *ov[OP_MAXDIM];
    IrExpr *off[OP_MAXDIM];
    op_loop_vars(cx, ov, nl, 'i');
    for (int j = 0; j < p.n; j++) off[j] = j < nl ? ir_var_ref(a, ov[j]) : NULL;
    IrTileOp e = {0};
    e.kind = TS_OP_COMM;
    e.comm = op->cflags[0] == 0 ? TS_COMM_PUT : TS_COMM_GET;
    e.args[0] = op->args[0];
    e.args[1] = ir_int(a, run, TS_INT64);
    e.r[0] = elem_region(a, src->buf, op_region_index(a, src, sd, off, p.n));
    e.r[1] = elem_region(a, dst->buf, op_region_index(a, dst, dd, off, p.n));
    if (j0 > 0) {
        e.r[0].extent[sd[j0 - 1]] = ir_i32(a, p.ext[j0 - 1]);
        e.r[1].extent[dd[j0 - 1]] = ir_i32(a, p.ext[j0 - 1]);
    }
    e.nr = 2;
    IrStmt *one = comm_stmt(a, s->loc, &e);
    if (op->cflags[1] > 0) {
        /* a warp's copy: on CUDA each range by the lanes together, as
         * T.put_warp / T.get_warp (the lanes calling it with one range share
         * it, comm_cuda.c); on the C target, where a range is one memmove,
         * by lane 0 */
        if (cx->target == TS_TARGET_CUDA) one->op->cflags[1] = 1;
        else one = op_if(a, s->loc, ir_bin(a, IR_EQ, op->args[2], ir_i32(a, 0)), one, NULL);
    }
    IrStmt *fast = op_loops(a, s->loc, ov, p.ext, nl, IR_FOR_SERIAL, one);
    IrExpr *in = region_inside(a, src), *in2 = region_inside(a, dst);
    if (in && in2) in = ir_bin(a, IR_AND, in, in2);
    else if (!in) in = in2;
    return in ? op_if(a, s->loc, in, fast, slow) : fast;
}

/* LANES (op/comm.h): the elements of a T.copy or T.fill dealt to the
 * lanes (element e of the flattened region to lane e % f0, a partial last
 * round where f0 does not divide the element count), each element guarded
 * like T.copy / T.fill. */
static IrStmt *lower_lanes(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    IrVar *v[OP_MAXDIM];
    int64_t ext[OP_MAXDIM];
    int n;
    IrStmt *body;
    if (op->nr == 2) {
        const IrRegion *src = &op->r[0], *dst = &op->r[1];
        OpPair p;
        op_pair_regions(cx, s, "T.copy", src, dst, &p);
        IrExpr *val = ir_load(a, src->buf, p.src_idx, src->ndim);
        body = ir_store(a, dst->buf, p.dst_idx, dst->ndim, val->dt == dst->buf->dt ? val : ir_cast(a, dst->buf->dt, val));
        body->loc = s->loc;
        body = op_if(a, s->loc, op_in_bounds(a, src->buf, p.src_idx), body, NULL);
        body = op_if(a, s->loc, op_in_bounds(a, dst->buf, p.dst_idx), body, NULL);
        n = p.n;
        for (int j = 0; j < n; j++) v[j] = p.v[j], ext[j] = p.ext[j];
    } else {
        const IrRegion *dst = &op->r[0];
        int dd[OP_MAXDIM];
        IrExpr *off[OP_MAXDIM];
        n = op_region_shape(cx, s, "T.fill", dst, dd, ext);
        op_loop_vars(cx, v, n, 'i');
        op_var_refs(a, v, n, off);
        IrExpr **di = op_region_index(a, dst, dd, off, n);
        body = ir_store(a, dst->buf, di, dst->ndim, ir_cast(a, dst->buf->dt, op->args[1]));
        body->loc = s->loc;
        body = op_if(a, s->loc, op_in_bounds(a, dst->buf, di), body, NULL);
    }
    return deal_lanes(cx, s->loc, body, v, ext, n, op->cflags[0], op->args[2]);
}

/* body at element e of the flattened nest v[0..n) (extents ext, row-major
 * strides stride). */
static IrStmt *lane_elem(TsArena *a, IrStmt *body, IrVar **v, const int64_t *ext, const int64_t *stride, int n,
                         IrExpr *e) {
    IrExpr *pt[OP_MAXDIM];
    for (int j = 0; j < n; j++) {
        IrExpr *q = stride[j] > 1 ? ir_bin(a, IR_FLOORDIV, e, ir_i32(a, stride[j])) : e;
        pt[j] = j > 0 ? ir_bin(a, IR_FLOORMOD, q, ir_i32(a, ext[j])) : q;
    }
    return ir_stmt_subst(a, body, v, pt, n);
}

/* The element nest body over v[0..n) (extents ext) dealt to per lanes,
 * lane being this thread's: element e of the flattened nest to lane
 * e % per (below). */
static IrStmt *deal_lanes(TsLowerCtx *cx, TsLoc loc, IrStmt *body, IrVar **v, const int64_t *ext, int n, int64_t per,
                          IrExpr *lane) {
    TsArena *a = cx->arena;
    if (n == 0) return body;
    int64_t total = 1, stride[OP_MAXDIM];
    for (int j = n - 1; j >= 0; j--) {
        stride[j] = total;
        total *= ext[j];
    }
    /* lane l: elements l, l + per, l + 2 per, ... of the flattened region
     * (row-major: consecutive lanes on consecutive elements, and every lane
     * busy whatever the tile's shape, a [16, 8] tile as well as a [2, 256]
     * or a [5, 5] one); element e is the point (e / s_j) % ext_j, s_j the
     * product of the extents after j.  total / per full rounds for every
     * lane: a loop of a fixed trip count, over which insert_sync's analysis
     * proves that no two lanes touch one element (the row-major offsets of
     * the lanes' elements differ) and places no barrier inside the warp's
     * code; then, where per does not divide total, a partial last round
     * `if lane < total % per` (one element, its index fixed but for the
     * lane: the analysis takes the lanes that pass the condition). */
    int64_t full = total / per, rem = total % per;
    IrStmt *rounds = NULL, *last = NULL;
    if (full > 0) {
        IrVar *c = op_loop_var(cx, "c");
        IrExpr *e = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, c), ir_i32(a, per)), lane);
        rounds = ir_for(a, c, ir_i32(a, 0), ir_i32(a, full), IR_FOR_SERIAL, lane_elem(a, body, v, ext, stride, n, e));
        rounds->loc = loc;
    }
    if (rem) {
        IrExpr *e = ir_bin(a, IR_ADD, ir_i32(a, full * per), lane);
        last = op_if(a, loc, ir_bin(a, IR_LT, lane, ir_i32(a, rem)), lane_elem(a, body, v, ext, stride, n, e), NULL);
    }
    if (!rounds || !last) return rounds ? rounds : last;
    IrStmt *q = ir_seq(a);
    q->loc = loc;
    ir_seq_push(a, q, rounds);
    ir_seq_push(a, q, last);
    return q;
}

static void need_int(TsLowerCtx *cx, const IrStmt *s, const IrExpr *e, const char *what) {
    if (e && !ts_dtype_is_int(e->dt))
        ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc, "%s: %s must be an integer, not %s",
                   ts_comm_name(s->op->comm), what, ts_dtype_name(e->dt));
}

IrStmt *ts_op_comm_lower(TsLowerCtx *cx, const IrStmt *s) {
    const IrTileOp *op = s->op;
    if (op->comm < 0 || op->comm >= TS_COMM_COUNT)
        ts_internal(cx->diag, "communication op of unknown kind %d", op->comm);
    need_int(cx, s, op->args[0], "the peer rank");
    switch (op->comm) {
    case TS_COMM_COPY: return lower_copy(cx, s);
    case TS_COMM_LANES: return lower_lanes(cx, s);
    case TS_COMM_PUT:
    case TS_COMM_GET:
        need_int(cx, s, op->args[1], "the size");
        if (op->nr < 2 || !op->args[1]) ts_internal(cx->diag, "put/get without two addresses and a size");
        /* a range moves bytes: both sides' elements must be as wide (the targets' printers checked
         * this each on their own until issue 5 part 0) */
        if ((ts_dtype_bits(op->r[0].buf->dt) + 7) / 8 != (ts_dtype_bits(op->r[1].buf->dt) + 7) / 8)
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc, "T.%s: '%s' (%s) and '%s' (%s) have elements of different sizes",
                       ts_comm_name(op->comm), op->r[0].buf->name, ts_dtype_name(op->r[0].buf->dt),
                       op->r[1].buf->name, ts_dtype_name(op->r[1].buf->dt));
        break;
    case TS_COMM_WAIT:
    case TS_COMM_ATOM_ADD:
    case TS_COMM_SIGNAL:
    case TS_COMM_BARRIER_BLOCKS: {
        const IrBuffer *b = op->r[0].buf;
        if (op->nr < 1) ts_internal(cx->diag, "%s without an address", ts_comm_name(op->comm));
        if (op->comm == TS_COMM_BARRIER_BLOCKS && b->dt != TS_INT32)
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc,
                       "T.barrier_blocks: the barrier '%s' must be an int32 array of num_ranks words, not %s",
                       b->name, ts_dtype_name(b->dt));
        if (op->comm != TS_COMM_ATOM_ADD && op->comm != TS_COMM_WAIT && !ts_dtype_is_int(b->dt))
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc, "%s: the signal '%s' must be an integer buffer, not %s",
                       ts_comm_name(op->comm), b->name, ts_dtype_name(b->dt));
        if (op->comm == TS_COMM_BARRIER_BLOCKS && b->scope != IR_SCOPE_GLOBAL)
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc,
                       "T.barrier_blocks: the barrier '%s' must be a tensor on the symmetric heap", b->name);
        break;
    }
    default: break;
    }
    return comm_stmt(cx->arena, s->loc, op);
}
