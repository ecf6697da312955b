/*
 * lower_comm.c — the CUDA pass that gives each communication primitive of
 * uniform code (a block's T.st, T.atom_add, T.wait_*, T.barrier_blocks, ...)
 * to one thread, in the IR, so that the CUDA printer prints only what the
 * IR says (issue 6; decisions belong in passes).
 *
 * Before this pass the printer did it on its own: `if (ts_tid == 0) {...}`
 * around the primitive, a `__shared__` scratch word and a __syncthreads()
 * to hand T.atom_add's returned value to the block, a barrier between a
 * put's data and its signal, and a shared verdict word after every wait
 * that made the block return when the launch was aborted.  None of this
 * was visible to plan_smem (shared memory) or insert_sync (barriers).
 *
 * It runs after partition_threads (which leaves a primitive uniform only
 * where its operands are the same for every thread) and before
 * insert_sync.  A uniform primitive becomes, by kind:
 *
 *   ST, SIGNAL, ATOM_ADD (no value wanted), WAIT, an LD into shared or
 *   global memory:
 *       for t in thread_range(1): op                 (the block's role)
 *   ATOM_ADD whose value before the add is wanted (into r1):
 *       atom_old = alloc_shared T[1]
 *       for t in thread_range(1): op, the value into atom_old[0]
 *       r1 = atom_old[0]                      (every thread: it is read by all)
 *   PUT/GET:
 *       put/get with f2 = n, a2 = tid - lo     (the n threads running the code,
 *                                             the block's or a T.ws role's
 *                                             [lo, lo + n), move elements
 *                                             tid - lo, + n, ...: decided here,
 *                                             printed by comm_cuda.c)
 *   PUT/GET with a signal (nr == 3):
 *       put/get without it, as above          (every thread moves a share)
 *       for t in thread_range(1): signal_op   (set or add, on the same peer)
 *   BARRIER_BLOCKS (with its fence), BARRIER_ALL:
 *       fence(sys)                            (every thread's writes published)
 *       for t in thread_range(1): op (f1 = 1: done by one thread for the
 *                                             block, no fence of its own)
 *
 * and stays uniform otherwise (fences, an LD into each thread's own
 * register).  insert_sync treats a range of
 * one thread holding one primitive (ts_comm_block_role) as it treated the
 * uniform primitive, opaque: a barrier before and after, which also orders
 * the scratch word's store before the block reads it and the data of a put
 * before its signal.
 *
 * What changed in meaning: after a wait that gave up (abort or timeout) the
 * block no longer returns at once; it runs on, and every later wait of the
 * launch gives up at once (ts_comm_spin reads the abort word first), so the
 * launch ends and the host reports the first failure as before.
 *
 * Several nodes (TsCaps.multinode, both targets; runs first).  A rank
 * reaches the heaps of its node's ranks by load and store and nothing
 * else; a rank of another node only through the transport (NCCL's GIN on
 * CUDA, the world's proxy on sim ranks).  Which one a primitive takes is
 * decided here, in the IR: every primitive with a peer becomes
 *
 *       if peer < 0 or peer // ranks_per_node == rank // ranks_per_node:
 *           op                                (load/store, as before)
 *       else:
 *           op with xport = 1                 (put / put+signal / signal /
 *                                             get / atomic add / polled get
 *                                             through the transport)
 *
 * (ranks_per_node is IR_VAR_RANK axis 2, a launch argument), T.fence /
 * T.quiet get xport = 1 (on sim ranks they complete the transport's puts;
 * on CUDA they are GIN's flush, which only frees the puts' sources), and
 * T.barrier_blocks too (its words on ranks of other nodes through the
 * transport); T.barrier_all becomes `if ranks_per_node >= num_ranks: op
 * else op with xport = 1` (one node at run time: the load/store barrier
 * on rank 0's counter; else the transport's: on CUDA GIN signals between
 * the ranks, see comm_cuda.c).  On CUDA the transport is NCCL's GIN,
 * which lacks gets, waits on remote memory, fetching or float atomics,
 * any ordered SET (set signals and release stores: no SignalSet, and a
 * putValue after the data may land first), the warp variants, values
 * over 8 bytes and T.barrier_blocks: those are refused here
 * (ts_comm_gin_lacks), at the statement, not by the printer; on the C
 * target (the world's proxy) atomic adds of words other than 32 or 64
 * bits are.  What GIN can do gets its form here (IrTileOp.gin, TsGinForm:
 * put from a window or putValues from a tile, a value, a signal add, a
 * flush), printed as told by comm_cuda.c.  Adding signals: the heap
 * tensors that ops with a peer add to are the kernel's signal buffers
 * (found first, IrKernel.gin_sig_param; the world maps their elements
 * onto GIN signals at launch); an add to one is a GIN signal add on the
 * element's signal, a wait on this rank's word becomes `if
 * ranks_per_node >= num_ranks: wait else wait(gin.wait_signal)` (heap
 * word + signal - shadow), a set of its own word the same branch with
 * gin.reset_signal, and plain loads/stores of it or sets of a peer's word
 * are refused (doc/DISTRIBUTED.md, "Signals across nodes").  On CUDA the
 * transport's put/get is then one
 * thread's (a network operation posted once), not spread over the block.  A kernel
 * compiled without it keeps today's code exactly (goldens unchanged); run
 * in a world of several nodes it fails at its first access to another
 * node, naming it (sim: the peer table holds NULL there).
 */
#include "ir/tileop.h"
#include "ir/walk.h"
#include "op/comm.h"
#include "pass/pass.h"

typedef struct LowerComm {
    IrKernel *k;  /* the kernel */
    TsArena *a;   /* its arena */
    int nthreads; /* threads per block */
    TsDiag *d;    /* where a refusal goes */
    bool gin;     /* the transport is NCCL's GIN (CUDA): what it lacks is refused here */
    const IrBuffer *sig[IR_GIN_MAX_SIG]; /* GIN: the signal buffers, by slot (k->gin_sig_param) */
} LowerComm;

/* A copy of s's tile op (kept for the target: TS_OP_INST_COMM). */
static IrStmt *op_copy(LowerComm *L, const IrStmt *s) {
    IrStmt *n = ir_stmt(L->a, IR_S_TILEOP, s->loc);
    n->op = TS_NEW(L->a, IrTileOp);
    *n->op = *s->op;
    return n;
}

static IrStmt *one_thread(LowerComm *L, IrStmt *body, TsLoc loc) {
    IrVar *t = ir_var(L->k, "t", TS_INT32, IR_VAR_LOOP);
    IrStmt *f = ir_for(L->a, t, ir_i32(L->a, 0), ir_i32(L->a, 1), IR_FOR_THREAD, body);
    f->loc = loc;
    return f;
}

static IrStmt *seq2(LowerComm *L, IrStmt *x, IrStmt *y, TsLoc loc) {
    IrStmt *q = ir_seq(L->a);
    q->loc = loc;
    ir_seq_push(L->a, q, x);
    ir_seq_push(L->a, q, y);
    return q;
}

static bool is_private(const IrBuffer *b) { return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR; }

/* T.atom_add's value before the add, for the whole block (see the essay). */
static IrStmt *atom_value(LowerComm *L, const IrStmt *s) {
    TsArena *a = L->a;
    const IrBuffer *b = s->op->r[0].buf;
    const IrRegion *r1 = &s->op->r[1];
    IrBuffer *old = ir_buffer(L->k, "atom_old", b->dt, IR_SCOPE_SHARED, 1, (IrExpr *[]){ir_i32(a, 1)}, s->loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, s->loc);
    al->alloc.buf = old;
    IrStmt *op = op_copy(L, s);
    IrExpr **zero = (IrExpr *[]){ir_i32(a, 0)};
    IrExpr **z = TS_NEWN(a, IrExpr *, 1);
    z[0] = zero[0];
    IrExpr **one = TS_NEWN(a, IrExpr *, 1);
    one[0] = ir_i32(a, 1);
    op->op->r[1] = (IrRegion){old, 1, z, one};
    IrExpr *v = ir_load(a, old, z, 1);
    if (v->dt != r1->buf->dt) v = ir_cast(a, r1->buf->dt, v);
    IrStmt *st = ir_store(a, r1->buf, r1->start, r1->ndim, v);
    st->loc = s->loc;
    if (!is_private(r1->buf)) st = one_thread(L, st, s->loc); /* memory the threads share: one writes it */
    IrStmt *q = ir_seq(a);
    q->loc = s->loc;
    ir_seq_push(a, q, al);
    ir_seq_push(a, q, one_thread(L, op, s->loc));
    ir_seq_push(a, q, st);
    return q;
}

/* A put/get with a signal: the data by the block, the signal by one thread. */
static IrStmt *split_signal(LowerComm *L, const IrStmt *s) {
    IrStmt *data = op_copy(L, s);
    data->op->nr = 2;
    data->op->r[2] = (IrRegion){0};
    data->op->args[2] = NULL;
    IrStmt *sig = op_copy(L, s);
    IrTileOp *o = sig->op;
    o->comm = TS_COMM_SIGNAL;
    o->r[0] = s->op->r[2];
    o->r[1] = o->r[2] = (IrRegion){0};
    o->nr = 1;
    o->args[1] = s->op->args[2];
    o->args[2] = NULL;
    o->cflags[0] = s->op->cflags[0];
    o->cflags[1] = o->cflags[2] = 0;
    return seq2(L, data, one_thread(L, sig, s->loc), s->loc);
}

/* The block barriers: every thread's fence, then one thread's arrival. */
static IrStmt *block_barrier(LowerComm *L, const IrStmt *s) {
    IrStmt *op = op_copy(L, s);
    op->op->cflags[1] = 1;
    bool fence = s->op->comm == TS_COMM_BARRIER_ALL || s->op->cflags[0];
    if (s->op->comm == TS_COMM_BARRIER_BLOCKS) op->op->cflags[0] = 0;
    if (!fence) return one_thread(L, op, s->loc);
    IrStmt *f = ir_stmt(L->a, IR_S_TILEOP, s->loc);
    f->op = TS_NEW(L->a, IrTileOp);
    f->op->kind = TS_OP_COMM;
    f->op->inst = TS_OP_INST_COMM;
    f->op->comm = TS_COMM_FENCE;
    f->op->cflags[2] = TS_SCOPE_SYS;
    return seq2(L, f, one_thread(L, op, s->loc), s->loc);
}

/* A put/get of uniform code moved by every thread that runs that code:
 * the block's threads, or a T.ws role's inside one (IR_S_ROLE), thread
 * tid - lo taking elements tid - lo, + n, + 2n, ... (op/comm.h: PUT, f2 and
 * a2).  The printer prints the loop it is given. */
static IrStmt *spread(LowerComm *L, const IrMutator *m, IrStmt *s) {
    int lo = 0, n = L->nthreads;
    for (const IrWalkFrame *f = m->frame; f; f = f->up)
        if (f->s->kind == IR_S_ROLE) {
            lo = f->s->role.lo;
            n = f->s->role.n;
            break;
        }
    IrTileOp *op = s->op;
    IrExpr *t = ir_var_ref(L->a, ir_kernel_tid(L->k));
    op->cflags[2] = n;
    op->args[2] = lo ? ir_bin(L->a, IR_SUB, t, ir_i32(L->a, lo)) : t;
    return s;
}

/* ---- several nodes ---- */

static bool is_comm(const IrStmt *s) {
    return s->kind == IR_S_TILEOP && s->op && s->op->kind == TS_OP_COMM && s->op->inst == TS_OP_INST_COMM;
}

static IrExpr *rank_axis(LowerComm *L, int axis) {
    IrVar *v = ir_var(L->k, axis == 2 ? "ranks_per_node" : axis == 1 ? "num_ranks" : "rank", TS_INT32, IR_VAR_RANK);
    v->axis = axis;
    return ir_var_ref(L->a, v);
}

/* On CUDA, a primitive that NCCL's GIN cannot do (ts_comm_gin_lacks) when
 * its peer is on another node is an error here, at the statement, rather
 * than while printing: `--dump-after lower_comm` refuses it too.  A
 * primitive with a peer is refused even though the peer may turn out to
 * be on this node at run time: its transport branch is compiled anyway. */
static void gin_check(LowerComm *L, const IrStmt *s) {
    const IrTileOp *op = s->op;
    const char *why = ts_comm_gin_lacks(op);
    if (!why) return;
    if (op->comm == TS_COMM_BARRIER_BLOCKS || op->comm == TS_COMM_BARRIER_ALL)
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc, "T.%s across nodes: %s; compile for one node",
                   ts_comm_name(op->comm), why);
    ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
               "T.%s to a rank of another node: %s (or compile for one node)", ts_comm_name(op->comm), why);
}

/* On the C target the transport (the world's proxy, TsCXport ADD) adds to
 * 32- and 64-bit words only: an atomic add, an adding signal or a put's
 * adding signal on narrower elements is an error here, at the statement
 * (the C printer used to refuse it). */
static void proxy_check(LowerComm *L, const IrStmt *s) {
    const IrTileOp *op = s->op;
    const IrBuffer *b = NULL;
    if (op->comm == TS_COMM_ATOM_ADD || (op->comm == TS_COMM_SIGNAL && op->cflags[0] != TS_SIG_SET)) b = op->r[0].buf;
    else if (op->comm == TS_COMM_PUT && op->nr == 3 && op->cflags[0] != TS_SIG_SET) b = op->r[2].buf;
    int bytes = b ? (ts_dtype_bits(b->dt) + 7) / 8 : 4;
    if (bytes == 4 || bytes == 8) return;
    ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
               "T.%s: an atomic add on a rank of another node (through the transport) needs 32- or 64-bit "
               "elements, not %s",
               ts_comm_name(op->comm), ts_dtype_name(b->dt));
}

/* ---- several nodes on CUDA: signal buffers as GIN signals ---- */

static bool loads_buf(const IrExpr *e, void *ctx) { return e->kind == IR_E_LOAD && e->load.buf == ctx; }

/* T.atom_add's value before the add (r1, a register the front end always
 * makes) that nothing reads: GIN's add can drop it. */
static bool old_unread(const LowerComm *L, const IrTileOp *op) {
    return op->comm == TS_COMM_ATOM_ADD && op->nr == 2 && is_private(op->r[1].buf) &&
           !ir_stmt_any_expr(L->k->body, loads_buf, op->r[1].buf);
}

/* The buffer an adding primitive with a peer adds to (the signal of a
 * put, T.signal_op add, an integer T.atom_add whose old value nothing
 * reads), or NULL: what ranks of other nodes add to through GIN signals. */
static const IrBuffer *adds_to(const LowerComm *L, const IrTileOp *op) {
    if (!op->args[0]) return NULL;
    if (op->comm == TS_COMM_PUT && op->nr == 3 && op->cflags[0] == TS_SIG_ADD) return op->r[2].buf;
    if (op->comm == TS_COMM_SIGNAL && op->cflags[0] == TS_SIG_ADD) return op->r[0].buf;
    if (op->comm == TS_COMM_ATOM_ADD && (op->nr == 1 || old_unread(L, op))) return op->r[0].buf;
    return NULL;
}

/* 1 + the slot of b among the kernel's signal buffers, 0 if it is none. */
static int sig_slot(const LowerComm *L, const IrBuffer *b) {
    for (int i = 0; i < L->k->gin_nsig; i++)
        if (L->sig[i] == b) return i + 1;
    return 0;
}

/* Every adding primitive with a peer names a signal buffer (first pass,
 * before any op is rewritten: a wait may come before the adds). */
static bool collect_sig(const IrStmt *s, void *ctx) {
    LowerComm *L = ctx;
    if (!is_comm(s)) return false;
    const IrBuffer *b = adds_to(L, s->op);
    IrTileOp o = *s->op;
    if (old_unread(L, &o)) o.nr = 1;
    if (!b || sig_slot(L, b) || ts_comm_gin_lacks(&o)) return false; /* (the refusal comes with its op) */
    if (b->scope != IR_SCOPE_GLOBAL || b->param < 0)
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
                   "T.%s: '%s' is added to by ranks of other nodes, through NCCL's GIN signals, so it must be a "
                   "tensor parameter on the symmetric heap", ts_comm_name(s->op->comm), b->name);
    if (L->k->gin_nsig >= IR_GIN_MAX_SIG)
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
                   "T.%s: '%s' would be the kernel's %dth buffer that ranks of other nodes add to (GIN signals); "
                   "at most %d: use fewer, larger signal tensors", ts_comm_name(s->op->comm), b->name,
                   IR_GIN_MAX_SIG + 1, IR_GIN_MAX_SIG);
    L->sig[L->k->gin_nsig] = b;
    L->k->gin_sig_param[L->k->gin_nsig++] = b->param;
    return false;
}

/* Is the op's peer this rank itself (none, or T.get_rank())? */
static bool own_word(const IrTileOp *op) {
    const IrExpr *p = op->args[0];
    while (p && p->kind == IR_E_CAST) p = p->un.a;
    return !p || (p->kind == IR_E_VAR && p->var->kind == IR_VAR_RANK && p->var->axis == 0);
}

/* Loads and stores of a signal buffer outside the primitives see (and
 * set) only the heap half of its words: refused, naming the primitive to
 * use instead. */
static bool sig_access(const IrStmt *s, void *ctx) {
    LowerComm *L = ctx;
    if (s->kind == IR_S_STORE && sig_slot(L, s->store.buf))
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
                   "'%s' is added to by ranks of other nodes through NCCL's GIN signals (a word is the heap word "
                   "plus its signal): a plain store would not reset the signal; set this rank's own word with "
                   "T.signal_op(..., T.Amo.SIGNAL_SET, T.get_rank()) instead", s->store.buf->name);
    return false;
}
static bool sig_load(const IrExpr *e, void *ctx) {
    LowerComm *L = ctx;
    if (e->kind == IR_E_LOAD && sig_slot(L, e->load.buf))
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, e->loc,
                   "'%s' is added to by ranks of other nodes through NCCL's GIN signals (a word is the heap word "
                   "plus its signal): a plain load sees only the heap half; read it with a wait "
                   "(T.signal_wait_until / T.wait_*)", e->load.buf->name);
    return false;
}

/* `if ranks_per_node >= num_ranks: s else s as the transport's form`:
 * the world spans nodes only at run time. */
static IrStmt *world_branch(LowerComm *L, const IrStmt *s, int form, int slot) {
    IrStmt *far = op_copy(L, s);
    far->op->xport = 1;
    far->op->gin = form;
    far->op->gin_sig = slot;
    IrStmt *i = ir_stmt(L->a, IR_S_IF, s->loc);
    i->if_.cond = ir_bin(L->a, IR_GE, rank_axis(L, 2), rank_axis(L, 1));
    i->if_.then = op_copy(L, s);
    i->if_.else_ = far;
    return i;
}

/* A primitive on a signal buffer's word of this rank or of a peer (other
 * than an add, which takes the peer branch below): NULL if there is
 * nothing special to do. */
static IrStmt *sig_word(LowerComm *L, const IrStmt *s) {
    const IrTileOp *op = s->op;
    int slot = op->comm == TS_COMM_PUT || op->comm == TS_COMM_GET ? 0 : sig_slot(L, op->r[0].buf);
    if (!slot) return NULL;
    const char *name = op->r[0].buf->name;
    bool set = op->comm == TS_COMM_ST || (op->comm == TS_COMM_SIGNAL && op->cflags[0] == TS_SIG_SET);
    if (op->comm == TS_COMM_WAIT && own_word(op)) return world_branch(L, s, TS_GIN_WAIT_SIGNAL, slot);
    if (set && own_word(op)) return world_branch(L, s, TS_GIN_RESET, slot);
    if (set)
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
                   "T.%s: '%s' is added to by ranks of other nodes through NCCL's GIN signals, and only a rank "
                   "itself can reset its word (the signal's shadow is its own): set it on this rank (peer "
                   "T.get_rank()), after a barrier, not on a peer", ts_comm_name(op->comm), name);
    if (op->comm == TS_COMM_LD || (op->comm == TS_COMM_ATOM_ADD && op->nr > 1))
        ts_fail_at(L->d, TS_ERR_UNSUPPORTED, s->loc,
                   "T.%s: '%s' is added to by ranks of other nodes through NCCL's GIN signals, and this would "
                   "read only its heap half; wait on it (T.signal_wait_until / T.wait_*) instead",
                   ts_comm_name(op->comm), name);
    return NULL;
}

/* GIN's form of an op with xport (TsGinForm). */
static int gin_form(const IrTileOp *op) {
    switch (op->comm) {
    case TS_COMM_PUT: return op->r[0].buf->scope == IR_SCOPE_GLOBAL && op->r[0].buf->param >= 0 ? TS_GIN_PUT
                                                                                              : TS_GIN_PUT_VALUES;
    case TS_COMM_ST: return TS_GIN_VALUE;
    case TS_COMM_SIGNAL:
    case TS_COMM_ATOM_ADD: return TS_GIN_SIGNAL_ADD;
    case TS_COMM_FENCE: return TS_GIN_FLUSH;
    case TS_COMM_BARRIER_ALL: return TS_GIN_BARRIER;
    default: return TS_GIN_NONE;
    }
}

/* The transport where the peer is on another node (see the essay). */
static IrStmt *node_pre(IrMutator *m, IrStmt *s) {
    LowerComm *L = m->ctx;
    if (!is_comm(s)) return NULL;
    if (L->gin && old_unread(L, s->op)) { /* GIN adds without returning the old value: drop what nothing reads */
        s = op_copy(L, s);
        s->op->nr = 1;
        s->op->r[1] = (IrRegion){0};
    }
    const IrTileOp *op = s->op;
    if (L->gin) {
        IrStmt *w = sig_word(L, s);
        if (w) return w;
    }
    bool xport = op->comm != TS_COMM_FENCE &&
                 (op->args[0] || op->comm == TS_COMM_BARRIER_BLOCKS || op->comm == TS_COMM_BARRIER_ALL);
    if (xport && L->gin) gin_check(L, s);
    if (xport && !L->gin) proxy_check(L, s);
    switch (op->comm) {
    case TS_COMM_PUT:
    case TS_COMM_GET:
    case TS_COMM_ST:
    case TS_COMM_LD:
    case TS_COMM_WAIT:
    case TS_COMM_ATOM_ADD:
    case TS_COMM_SIGNAL: {
        if (!op->args[0]) return s; /* this rank's own memory */
        TsArena *a = L->a;
        IrExpr *peer = op->args[0], *rpn = rank_axis(L, 2);
        if (peer->dt != TS_INT32) peer = ir_cast(a, TS_INT32, peer);
        IrExpr *mine = ir_bin(a, IR_FLOORDIV, rank_axis(L, 0), rpn);
        IrExpr *same = ir_bin(a, IR_OR, ir_bin(a, IR_LT, peer, ir_i32(a, 0)),
                              ir_bin(a, IR_EQ, ir_bin(a, IR_FLOORDIV, peer, rpn), mine));
        IrStmt *far = op_copy(L, s);
        far->op->xport = 1;
        if (L->gin) {
            far->op->gin = gin_form(op);
            const IrBuffer *b = adds_to(L, op);
            far->op->gin_sig = b ? sig_slot(L, b) : 0;
        }
        IrStmt *i = ir_stmt(a, IR_S_IF, s->loc);
        i->if_.cond = same;
        i->if_.then = op_copy(L, s);
        i->if_.else_ = far;
        return i;
    }
    case TS_COMM_BARRIER_ALL: /* the transport's barrier only where the world spans nodes at run time */
        return world_branch(L, s, L->gin ? TS_GIN_BARRIER : TS_GIN_NONE, 0);
    case TS_COMM_FENCE:
    case TS_COMM_BARRIER_BLOCKS: {
        IrStmt *n = op_copy(L, s);
        n->op->xport = 1;
        if (L->gin) n->op->gin = gin_form(op);
        return n;
    }
    default: return s;
    }
}

static IrStmt *lower_pre(IrMutator *m, IrStmt *s) {
    LowerComm *L = m->ctx;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD) return s; /* per-thread code: the thread's own */
    if (!is_comm(s)) return NULL;
    const IrTileOp *op = s->op;
    if (op->xport && (op->comm == TS_COMM_PUT || op->comm == TS_COMM_GET)) /* posted once, signal included */
        return one_thread(L, op_copy(L, s), s->loc);
    switch (op->comm) {
    case TS_COMM_ST:
    case TS_COMM_SIGNAL:
    case TS_COMM_WAIT: return one_thread(L, op_copy(L, s), s->loc);
    case TS_COMM_ATOM_ADD: return op->nr > 1 ? atom_value(L, s) : one_thread(L, op_copy(L, s), s->loc);
    case TS_COMM_LD: return op->nr > 1 && is_private(op->r[1].buf) ? s : one_thread(L, op_copy(L, s), s->loc);
    case TS_COMM_PUT:
    case TS_COMM_GET:
        if (op->nr == 3) {
            IrStmt *q = split_signal(L, s);
            spread(L, m, q->seq.v[0]);
            return q;
        }
        return spread(L, m, op_copy(L, s));
    case TS_COMM_BARRIER_BLOCKS:
    case TS_COMM_BARRIER_ALL: return block_barrier(L, s);
    default: return s;
    }
}

void ts_pass_lower_comm(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    if (!k->body || !ts_comm_used(k->body)) return;
    LowerComm L = {k, cx->arena, k->threads[0] * k->threads[1] * k->threads[2], cx->diag,
                   cx->target == TS_TARGET_CUDA, {0}};
    if (cx->caps->multinode) {
        k->multinode = true;
        if (L.gin) { /* the signal buffers first: a wait on one may come before its adds */
            k->gin_nsig = 0;
            ir_stmt_any(k->body, collect_sig, &L);
            if (k->gin_nsig) {
                ir_stmt_any(k->body, sig_access, &L);
                ir_stmt_any_expr(k->body, sig_load, &L);
            }
        }
        IrMutator n = {.arena = cx->arena, .ctx = &L, .pre_stmt = node_pre};
        k->body = ir_mutate_stmt(&n, k->body);
    }
    if (cx->target != TS_TARGET_CUDA) return;
    IrMutator m = {.arena = cx->arena, .ctx = &L, .pre_stmt = lower_pre};
    k->body = ir_mutate_stmt(&m, k->body);
}
