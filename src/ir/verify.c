/*
 * verify.c — structural checks of a kernel's IR.
 *
 * Every pass may assume well-formed input, so ir_verify runs between
 * passes and says exactly what is wrong when a producer (the elaborator,
 * a pass, an op lowering) breaks the rules.  A failure is a compiler bug,
 * never the user's, so it is reported as an internal error, at the
 * offending node's source location when it has one, with the statement
 * printed.
 *
 * The rules checked:
 *  - ids: every var and buffer has an id below k->next_id, and no two
 *    distinct vars/buffers share one;
 *  - scoping: a var is used only where defined (scalar parameters, shape
 *    vars and vars in global buffers' shapes/strides, block indices, thread
 *    and rank vars anywhere; loop vars in their body; let vars in the rest
 *    of their sequence) and never rebound while in scope; a non-global
 *    buffer is used only after its IR_S_ALLOC in an enclosing sequence;
 *  - types: every expression has a valid dtype; indices, loop bounds and
 *    extents are integers; conditions are bool or integer; binary operands
 *    share a dtype (the constructors insert the casts) and comparisons and
 *    logical ops give bool; stores hold a value of the buffer's dtype;
 *  - shapes: loads and stores carry one index per buffer dim, regions one
 *    start/extent per dim; non-global buffers have constant shapes;
 *  - tile ops: the right number of regions, a fill value, a gemm
 *    accumulator in a fragment or local buffer, operands not in `var`;
 *  - break/continue only inside loops.
 *
 * Scope tracking uses a mark per id (in the kernel's arena, so a failure
 * that unwinds leaks nothing) and a stack of ids defined in open
 * sequences, popped when the sequence ends.
 */
#include <string.h>

#include "ir/ir.h"
#include "ir/walk.h"
#include "ir/tileop.h"

typedef struct Verifier {
    TsDiag *d;
    const IrKernel *k;
    TsArena *a;
    const void **owner;  /* by id: the var or buffer holding it */
    char *live;          /* by id: 1 while in scope */
    TS_VEC(int) stack;   /* ids defined by lets/allocs of open sequences */
    int loop_depth;      /* enclosing for/while loops */
    const IrStmt *cur;   /* statement being checked, for messages */
} Verifier;

TS_NORETURN static void fail(Verifier *v, TsLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);

static void fail(Verifier *v, TsLoc loc, const char *fmt, ...) {
    TsBuf m = {0};
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    if (!loc.src && v->cur) loc = v->cur->loc;
    TsBuf st = {0};
    if (v->cur && v->cur->kind != IR_S_SEQ) ir_print_stmt(&st, v->cur, 0);
    const char *txt = ts_sprintf(v->a, "%s", ts_buf_str(&st));
    const char *msg = ts_sprintf(v->a, "%s", ts_buf_str(&m));
    ts_buf_free(&m);
    ts_buf_free(&st);
    size_t n = strlen(txt);
    ts_fail_at(v->d, TS_ERR_INTERNAL, loc, "IR verification failed in kernel %s: %s%s%.*s",
               v->k->name, msg, n ? "\n  in statement: " : "", (int)(n && txt[n - 1] == '\n' ? n - 1 : n),
               txt);
}

static void check_id(Verifier *v, const void *x, int id, const char *what, const char *name) {
    if (id < 0 || id >= v->k->next_id)
        fail(v, (TsLoc){0}, "%s %s has id %d outside 0..%d", what, name, id, v->k->next_id - 1);
    if (v->owner[id] && v->owner[id] != x)
        fail(v, (TsLoc){0}, "%s %s shares id %d with another var or buffer", what, name, id);
    v->owner[id] = x;
}

static void check_dtype(Verifier *v, TsDType dt, TsLoc loc, const char *what) {
    if ((int)dt < 0 || dt >= TS_DTYPE_COUNT)
        fail(v, loc, "%s has no valid dtype (%d)", what, (int)dt);
}

static bool int_like(TsDType dt) { return ts_dtype_is_int(dt); }

/* ---- definitions ------------------------------------------------------- */

static void define_var(Verifier *v, const IrVar *x, bool scoped) {
    if (!x) fail(v, (TsLoc){0}, "a NULL var is defined");
    check_id(v, x, x->id, "var", x->name);
    check_dtype(v, x->dt, (TsLoc){0}, x->name);
    if (v->live[x->id] && scoped)
        fail(v, (TsLoc){0}, "var %s (id %d) is bound again while already in scope", x->name,
             x->id);
    v->live[x->id] = 1;
}

static void define_buffer(Verifier *v, const IrBuffer *b) {
    check_id(v, b, b->id, "buffer", b->name);
    if (v->live[b->id]) fail(v, b->loc, "buffer %s is allocated twice in one scope", b->name);
    v->live[b->id] = 1;
}

/* ---- expressions ---------------------------------------------------------- */

static void check_expr(Verifier *v, const IrExpr *e);

static void use_buffer(Verifier *v, const IrBuffer *b, TsLoc loc) {
    if (!b) fail(v, loc, "a NULL buffer is used");
    check_id(v, b, b->id, "buffer", b->name);
    if (b->base) b = b->base; /* a view: its base's storage must be in scope */
    if (b->scope != IR_SCOPE_GLOBAL && !v->live[b->id])
        fail(v, loc, "%s buffer %s is used but no alloc statement for it is in scope",
             ir_scope_name(b->scope), b->name);
}

static void check_index(Verifier *v, const IrExpr *e, const char *what) {
    if (!e) fail(v, (TsLoc){0}, "%s is NULL", what);
    check_expr(v, e);
    if (!int_like(e->dt))
        fail(v, e->loc, "%s has dtype %s, not an integer", what, ts_dtype_name(e->dt));
}

static void check_access(Verifier *v, const IrBuffer *b, IrExpr *const *idx, int nidx,
                         TsLoc loc) {
    use_buffer(v, b, loc);
    if (nidx != b->ndim)
        fail(v, loc, "buffer %s has %d dims but is indexed with %d indices", b->name, b->ndim,
             nidx);
    for (int i = 0; i < nidx; i++) check_index(v, idx[i], "an index");
}

static const int intrinsic_arity[] = {
#define X(e, n, ar) [e] = ar,
    IR_INTRINSICS(X)
#undef X
};

static void check_expr(Verifier *v, const IrExpr *e) {
    if (!e) fail(v, (TsLoc){0}, "a NULL expression");
    check_dtype(v, e->dt, e->loc, "an expression");
    switch (e->kind) {
    case IR_E_INT:
        if (!int_like(e->dt) && e->dt != TS_BOOL)
            fail(v, e->loc, "an integer constant has dtype %s", ts_dtype_name(e->dt));
        break;
    case IR_E_FLOAT:
        if (!ts_dtype_is_float(e->dt))
            fail(v, e->loc, "a float constant has dtype %s", ts_dtype_name(e->dt));
        break;
    case IR_E_STRING: break;
    case IR_E_VAR: {
        const IrVar *x = e->var;
        if (!x) fail(v, e->loc, "a var reference without a var");
        check_id(v, x, x->id, "var", x->name);
        if (x->kind == IR_VAR_THREAD_IDX || x->kind == IR_VAR_RANK) break;
        if (!v->live[x->id])
            fail(v, e->loc, "var %s (id %d) is used where it is not defined", x->name, x->id);
        if (e->dt != x->dt)
            fail(v, e->loc, "a reference to %s has dtype %s but the var is %s", x->name,
                 ts_dtype_name(e->dt), ts_dtype_name(x->dt));
        break;
    }
    case IR_E_LOAD:
        check_access(v, e->load.buf, e->load.idx, e->load.nidx, e->loc);
        if (e->load.bits ? e->dt != ir_bits_dtype(e->load.buf->dt) : e->dt != e->load.buf->dt)
            fail(v, e->loc, "a load%s of %s has dtype %s, the buffer holds %s", e->load.bits ? " of the bits" : "",
                 e->load.buf->name,
                 ts_dtype_name(e->dt), ts_dtype_name(e->load.buf->dt));
        if (e->load.acquire && e->load.buf->scope != IR_SCOPE_GLOBAL)
            fail(v, e->loc, "a polling (acquire) load of %s buffer %s", ir_scope_name(e->load.buf->scope),
                 e->load.buf->name);
        break;
    case IR_E_BIN: {
        IrBinOp op = e->bin.op;
        check_expr(v, e->bin.a);
        check_expr(v, e->bin.b);
        if ((unsigned)op >= IR_BINOP_COUNT) fail(v, e->loc, "unknown binary operator %d", op);
        if (e->bin.a->dt != e->bin.b->dt)
            fail(v, e->loc, "binary operands have dtypes %s and %s (a cast is missing)",
                 ts_dtype_name(e->bin.a->dt), ts_dtype_name(e->bin.b->dt));
        bool boolean = op == IR_EQ || op == IR_NE || op == IR_LT || op == IR_LE ||
                       op == IR_GT || op == IR_GE || op == IR_AND || op == IR_OR;
        if (boolean ? e->dt != TS_BOOL : e->dt != e->bin.a->dt)
            fail(v, e->loc, "a binary expression on %s has dtype %s",
                 ts_dtype_name(e->bin.a->dt), ts_dtype_name(e->dt));
        break;
    }
    case IR_E_NEG:
    case IR_E_NOT:
        check_expr(v, e->un.a);
        if (e->dt != e->un.a->dt)
            fail(v, e->loc, "a unary expression changes dtype %s to %s",
                 ts_dtype_name(e->un.a->dt), ts_dtype_name(e->dt));
        break;
    case IR_E_CAST: check_expr(v, e->un.a); break;
    case IR_E_SELECT:
        check_expr(v, e->sel.cond);
        check_expr(v, e->sel.a);
        check_expr(v, e->sel.b);
        if (e->sel.a->dt != e->dt || e->sel.b->dt != e->dt)
            fail(v, e->loc, "select arms have dtypes %s and %s, the select %s",
                 ts_dtype_name(e->sel.a->dt), ts_dtype_name(e->sel.b->dt), ts_dtype_name(e->dt));
        break;
    case IR_E_CALL:
        if ((unsigned)e->call.fn >= IR_INTRINSIC_COUNT)
            fail(v, e->loc, "unknown intrinsic %d", (int)e->call.fn);
        if (e->call.fn == IR_EXTERN_CALL &&
            (e->call.nargs < 1 || e->call.args[0]->kind != IR_E_STRING))
            fail(v, e->loc, "extern call without its function name");
        if (e->call.fn == IR_EXTERN_ADDR && (e->call.args[0]->kind != IR_E_LOAD || e->call.args[0]->load.bits))
            fail(v, e->loc, "extern address of something other than a buffer element");
        if (intrinsic_arity[e->call.fn] >= 0 && e->call.nargs != intrinsic_arity[e->call.fn])
            fail(v, e->loc, "intrinsic call with %d arguments, wants %d", e->call.nargs,
                 intrinsic_arity[e->call.fn]);
        for (int i = 0; i < e->call.nargs; i++) check_expr(v, e->call.args[i]);
        if (e->call.fn == IR_REINTERPRET &&
            (ts_dtype_bits(e->dt) != ts_dtype_bits(e->call.args[0]->dt) || e->dt == TS_BOOL ||
             e->call.args[0]->dt == TS_BOOL))
            fail(v, e->loc, "reinterpret of a %s as a %s: the widths differ or one is bool",
                 ts_dtype_name(e->call.args[0]->dt), ts_dtype_name(e->dt));
        break;
    default: fail(v, e->loc, "unknown expression kind %d", (int)e->kind);
    }
}

static void check_cond(Verifier *v, const IrExpr *c, const char *what) {
    check_expr(v, c);
    if (c->dt != TS_BOOL && !int_like(c->dt))
        fail(v, c->loc, "%s condition has dtype %s", what, ts_dtype_name(c->dt));
}

/* ---- tile ops ---------------------------------------------------------------- */

static void check_region(Verifier *v, const IrRegion *r, const char *what) {
    if (!r->buf) fail(v, (TsLoc){0}, "%s region has no buffer", what);
    use_buffer(v, r->buf, (TsLoc){0});
    if (r->ndim != r->buf->ndim)
        fail(v, (TsLoc){0}, "%s region of %s has %d dims, the buffer %d", what, r->buf->name,
             r->ndim, r->buf->ndim);
    if (r->buf->scope == IR_SCOPE_VAR)
        fail(v, (TsLoc){0}, "%s operand %s is an alloc_var scalar, not a buffer", what,
             r->buf->name);
    for (int i = 0; i < r->ndim; i++) {
        check_index(v, r->start[i], "a region start");
        check_index(v, r->extent[i], "a region extent");
    }
}

static void check_tileop(Verifier *v, const IrTileOp *op) {
    static const char *names[5] = {"first", "second", "third", "fourth", "fifth"};
    int want_lo, want_hi;
    switch (op->kind) {
    case TS_OP_FILL: want_lo = want_hi = 1; break;
    case TS_OP_GEMM: /* 5: block-scaled (scale regions, args[0] = k_start) */
        want_lo = 3, want_hi = 5;
        if (op->nr == 5 && !op->args[0]) fail(v, (TsLoc){0}, "block-scaled gemm without k_start");
        if (op->args[0]) check_expr(v, op->args[0]);
        break;
    case TS_OP_ATOMIC_ADD: want_lo = 1; want_hi = 2; break;
    case TS_OP_COPY:
    case TS_OP_REDUCE:
    case TS_OP_CUMSUM: want_lo = want_hi = 2; break;
    case TS_OP_COMM:
        want_lo = 0, want_hi = 3;
        for (int i = 0; i < 3; i++)
            if (op->args[i]) check_expr(v, op->args[i]);
        break;
    case TS_OP_COLL:
        want_lo = 2, want_hi = 3;
        if (op->coll < 0 || op->coll >= TS_COLL_COUNT) fail(v, (TsLoc){0}, "unknown collective %d", op->coll);
        if (op->coll_units > 0 && (!op->args[0] || op->nr != 3))
            fail(v, (TsLoc){0}, "collective %s between units has no unit index or scratch", ts_coll_name(op->coll));
        if (op->args[0]) check_expr(v, op->args[0]);
        break;
    default: fail(v, (TsLoc){0}, "unknown tile operator kind %d", (int)op->kind);
    }
    if (op->nr < want_lo || op->nr > want_hi)
        fail(v, (TsLoc){0}, "tile op %s has %d regions", ts_op_name(op->kind), op->nr);
    for (int i = 0; i < op->nr; i++) check_region(v, &op->r[i], names[i]);
    if ((op->kind == TS_OP_FILL || (op->kind == TS_OP_ATOMIC_ADD && op->nr == 1)) && !op->value)
        fail(v, (TsLoc){0}, "tile op %s has no value", ts_op_name(op->kind));
    if (op->value) check_expr(v, op->value);
    if (op->kind == TS_OP_GEMM) {
        IrScope cs = op->r[2].buf->scope;
        if (op->mbar) { /* T.tcgen05_gemm's completion mbarrier (before lower_tmem) */
            if (!op->tcgen05 || !op->mbar->mbar_count || !op->args[0])
                fail(v, (TsLoc){0}, "gemm with an mbarrier %s that is not a tcgen05 gemm's", op->mbar->name);
            check_access(v, op->mbar, &op->args[0], 1, (TsLoc){0});
        }
        if (cs != IR_SCOPE_FRAGMENT && cs != IR_SCOPE_LOCAL && cs != IR_SCOPE_TMEM)
            fail(v, (TsLoc){0}, "gemm accumulator %s is in %s memory, not a fragment/local",
                 op->r[2].buf->name, ir_scope_name(cs));
    }
}

/* ---- statements ---------------------------------------------------------------- */

static void check_stmt(Verifier *v, const IrStmt *s) {
    if (!s) fail(v, (TsLoc){0}, "a NULL statement");
    const IrStmt *saved = v->cur;
    v->cur = s;
    switch (s->kind) {
    case IR_S_SEQ: {
        int mark = v->stack.n;
        for (int i = 0; i < s->seq.n; i++) check_stmt(v, s->seq.v[i]);
        while (v->stack.n > mark) v->live[v->stack.v[--v->stack.n]] = 0;
        break;
    }
    case IR_S_FOR:
        check_index(v, s->for_.min, "a loop start");
        check_index(v, s->for_.extent, "a loop extent");
        define_var(v, s->for_.var, true);
        if (!int_like(s->for_.var->dt))
            fail(v, s->loc, "loop var %s has dtype %s", s->for_.var->name,
                 ts_dtype_name(s->for_.var->dt));
        v->loop_depth++;
        check_stmt(v, s->for_.body);
        v->loop_depth--;
        v->live[s->for_.var->id] = 0;
        break;
    case IR_S_IF:
        check_cond(v, s->if_.cond, "an if");
        check_stmt(v, s->if_.then);
        if (s->if_.else_) check_stmt(v, s->if_.else_);
        break;
    case IR_S_WHILE:
        check_cond(v, s->while_.cond, "a while");
        v->loop_depth++;
        check_stmt(v, s->while_.body);
        v->loop_depth--;
        break;
    case IR_S_BREAK:
    case IR_S_CONTINUE:
        if (!v->loop_depth) fail(v, s->loc, "break/continue outside a loop");
        break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        check_access(v, s->store.buf, s->store.idx, s->store.nidx, s->loc);
        check_expr(v, s->store.value);
        if (s->store.release && (s->kind != IR_S_STORE || s->store.buf->scope != IR_SCOPE_GLOBAL))
            fail(v, s->loc, "a release mark on a store to %s buffer %s", ir_scope_name(s->store.buf->scope),
                 s->store.buf->name);
        if (s->store.bits && (s->kind != IR_S_STORE || s->store.value->dt != ir_bits_dtype(s->store.buf->dt)))
            fail(v, s->loc, "a store of %s bits into %s buffer %s", ts_dtype_name(s->store.value->dt),
                 ts_dtype_name(s->store.buf->dt), s->store.buf->name);
        else if (!s->store.bits && s->store.value->dt != s->store.buf->dt)
            fail(v, s->loc, "a store of a %s value into %s buffer %s (a cast is missing)",
                 ts_dtype_name(s->store.value->dt), ts_dtype_name(s->store.buf->dt),
                 s->store.buf->name);
        break;
    case IR_S_LET:
        check_expr(v, s->let.value);
        define_var(v, s->let.var, true);
        ts_vec_push(v->a, v->stack, s->let.var->id);
        break;
    case IR_S_ALLOC: {
        const IrBuffer *b = s->alloc.buf;
        if (!b) fail(v, s->loc, "an alloc without a buffer");
        if (b->scope == IR_SCOPE_GLOBAL) fail(v, s->loc, "alloc of global buffer %s", b->name);
        check_dtype(v, b->dt, s->loc, b->name);
        for (int i = 0; i < b->ndim; i++) {
            check_index(v, b->shape[i], "a buffer extent");
            if (!ir_is_const_int(b->shape[i], NULL))
                fail(v, s->loc, "%s buffer %s has a non-constant extent in dim %d",
                     ir_scope_name(b->scope), b->name, i);
        }
        define_buffer(v, b);
        ts_vec_push(v->a, v->stack, b->id);
        break;
    }
    case IR_S_TILEOP:
        if (!s->op) fail(v, s->loc, "a tile op statement without an op");
        check_tileop(v, s->op);
        break;
    case IR_S_EVAL:
        check_expr(v, s->eval.e);
        if (s->eval.ndone && (s->eval.e->kind != IR_E_CALL || s->eval.e->call.fn != IR_WGMMA_WAIT))
            fail(v, s->loc, "completed accumulators on a statement that is no wgmma wait");
        for (int i = 0; i < s->eval.ndone; i++)
            if (s->eval.done[i]->scope != IR_SCOPE_FRAGMENT && s->eval.done[i]->scope != IR_SCOPE_LOCAL)
                fail(v, s->loc, "wgmma wait completes %s, which is not in registers", s->eval.done[i]->name);
        break;
    case IR_S_BARRIER: {
        /* the C target's own ids (IR_C_BAR_BLOCK..): coroutine kernels only, count 0 the live threads */
        bool own = v->k->thread_coro && s->barrier.id >= IR_C_BAR_BLOCK && s->barrier.id < IR_C_BAR_END &&
                   !s->barrier.idv;
        if (s->barrier.id < 0 || (s->barrier.id > 15 && !own) ||
            (s->barrier.id && (s->barrier.count < (own ? 0 : 1) || s->barrier.count % 32)))
            fail(v, s->loc, "barrier %d of %d threads", s->barrier.id, s->barrier.count);
        if (s->barrier.idv) check_expr(v, s->barrier.idv);
        break;
    }
    case IR_S_ASYNC_COMMIT: break;
    case IR_S_MBAR:
        if (!s->mbar.buf->mbar_count) fail(v, s->loc, "an mbarrier operation on buffer %s, not a barrier", s->mbar.buf->name);
        check_access(v, s->mbar.buf, &s->mbar.idx, 1, s->loc);
        if ((s->mbar.value != NULL) == (s->mbar.op == IR_MBAR_ARRIVE || s->mbar.op == IR_MBAR_ARRIVE_ASYNC ||
                                         s->mbar.op == IR_MBAR_ARRIVE_ONE))
            fail(v, s->loc, "mbarrier %s with%s a value", ir_mbar_op_name(s->mbar.op), s->mbar.value ? "" : "out");
        if (s->mbar.value) check_index(v, s->mbar.value, "an mbarrier operand");
        break;
    case IR_S_ROLE:
        if (s->role.lo < 0 || s->role.n <= 0 || s->role.id < (s->role.solo ? 0 : 1) ||
            (s->role.solo && !v->k->thread_coro))
            fail(v, s->loc, "%srole %d of threads [%d, %d)", s->role.solo ? "solo " : "", s->role.id, s->role.lo,
                 s->role.lo + s->role.n);
        check_stmt(v, s->role.body);
        break;
    case IR_S_ASYNC_WAIT:
        if (s->async_wait.pending < 0) fail(v, s->loc, "async_wait of %d groups", s->async_wait.pending);
        break;
    case IR_S_VCOPY:
        check_access(v, s->vcopy.dst, s->vcopy.didx, s->vcopy.ndi, s->loc);
        check_access(v, s->vcopy.src, s->vcopy.sidx, s->vcopy.nsi, s->loc);
        if (s->vcopy.pred) check_cond(v, s->vcopy.pred, "a vector copy");
        if (s->vcopy.lanes < 1) fail(v, s->loc, "a vector copy of %d lanes", s->vcopy.lanes);
        if (!ir_vcopy_dtypes_ok(s->vcopy.dst->dt, s->vcopy.src->dt) ||
            (s->vcopy.async && s->vcopy.dst->dt != s->vcopy.src->dt))
            fail(v, s->loc, "a%s vector copy from %s buffer %s to %s buffer %s", s->vcopy.async ? "n async" : "",
                 ts_dtype_name(s->vcopy.src->dt), s->vcopy.src->name, ts_dtype_name(s->vcopy.dst->dt),
                 s->vcopy.dst->name);
        break;
    case IR_S_PRINT:
        if (s->print.buf) use_buffer(v, s->print.buf, s->loc);
        else if (s->print.value) check_expr(v, s->print.value);
        else fail(v, s->loc, "a print without a value or buffer");
        break;
    default: fail(v, s->loc, "unknown statement kind %d", (int)s->kind);
    }
    v->cur = saved;
}

/* Vars appearing in a global buffer's shape or strides are defined by the
 * launch (they are bound from the argument tensors): every var reference
 * in them, found by the shared walker. */
static bool define_var_ref(IrVisitor *w, const IrExpr *e) {
    Verifier *v = w->ctx;
    if (e->kind == IR_E_VAR) {
        check_id(v, e->var, e->var->id, "var", e->var->name);
        v->live[e->var->id] = 1;
    }
    return true;
}

static void define_expr_vars(Verifier *v, const IrExpr *e) {
    IrVisitor w = {.ctx = v, .pre_expr = define_var_ref};
    ir_visit_expr(&w, e);
}

void ir_verify(TsDiag *d, const IrKernel *k) {
    TsArena *a = k->arena;
    Verifier v = {0};
    v.d = d;
    v.k = k;
    v.a = a;
    int n = k->next_id > 0 ? k->next_id : 1;
    v.owner = TS_NEWN(a, const void *, n);
    v.live = TS_NEWN(a, char, n);

    if (k->ngrid < 1 || k->ngrid > 3) fail(&v, (TsLoc){0}, "grid has %d dims", k->ngrid);
    for (int i = 0; i < 3; i++)
        if (k->threads[i] < 1) fail(&v, (TsLoc){0}, "threads[%d] is %d", i, k->threads[i]);
    for (int i = 0; i < k->shape_vars.n; i++) define_var(&v, k->shape_vars.v[i], false);
    for (int i = 0; i < k->params.n; i++) {
        const IrParam *p = &k->params.v[i];
        if (!!p->buf == !!p->var)
            fail(&v, (TsLoc){0}, "parameter %d (%s) must be exactly one of tensor or scalar", i,
                 p->name ? p->name : "?");
        if (p->var) {
            define_var(&v, p->var, false);
            continue;
        }
        const IrBuffer *b = p->buf;
        check_id(&v, b, b->id, "buffer", b->name);
        check_dtype(&v, b->dt, b->loc, b->name);
        if (b->scope != IR_SCOPE_GLOBAL)
            fail(&v, b->loc, "tensor parameter %s is in %s memory", b->name,
                 ir_scope_name(b->scope));
        if (b->param != i)
            fail(&v, b->loc, "tensor parameter %s records parameter index %d, not %d", b->name,
                 b->param, i);
        for (int j = 0; j < b->ndim; j++) {
            define_expr_vars(&v, b->shape[j]);
            if (b->strides) define_expr_vars(&v, b->strides[j]);
        }
    }
    for (int i = 0; i < k->params.n; i++) {
        const IrBuffer *b = k->params.v[i].buf;
        for (int j = 0; b && j < b->ndim; j++) {
            check_index(&v, b->shape[j], "a tensor extent");
            if (b->strides) check_index(&v, b->strides[j], "a tensor stride");
        }
    }
    for (int i = 0; i < 3; i++) {
        if (!k->block_idx[i]) continue;
        define_var(&v, k->block_idx[i], false);
        if (k->block_idx[i]->kind != IR_VAR_BLOCK_IDX)
            fail(&v, (TsLoc){0}, "block index %s is not a BLOCK_IDX var", k->block_idx[i]->name);
    }
    for (int i = 0; i < k->ngrid; i++) check_index(&v, k->grid[i], "a grid extent");
    if (!k->body) fail(&v, (TsLoc){0}, "the kernel has no body");
    check_stmt(&v, k->body);
}
