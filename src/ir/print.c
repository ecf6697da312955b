/*
 * print.c — the IR as readable text.
 *
 * The text is what `--dump-after PASS` shows and what golden tests
 * compare, so it is meant to be read by people and to stay stable: the
 * same IR always prints the same way, with nothing (addresses, hash order)
 * that varies between runs.  It resembles TileLang's TVMScript without
 * trying to be parseable:
 *
 *   kernel matmul(A: global float16[256, 160], ..., n: int32) grid(3, 4) threads 128
 *       bx = blockIdx.x
 *       A_shared = alloc_shared float16[64, 32]
 *       for k in pipelined(5, num_stages=3):
 *           copy(A[by * 64:+64, k * 32:+32] -> A_shared)
 *           gemm(A_shared, B_shared, C_local, trans_b=1)
 *
 * Conventions: a region is `buf[start:+extent, ...]`, or just `buf` when
 * it covers the whole buffer; loops print `kind(extent)` when they start
 * at 0 and `kind(min, extent=E)` otherwise; casts print as `dtype(x)`;
 * bool constants as True/False; floats with enough digits to round-trip
 * (%.9g for 32-bit and narrower, %.17g for float64), always with a `.` or
 * exponent, and inf/nan spelled out.  Parentheses appear only where Python
 * precedence needs them.  When distinct vars (or buffers) of a kernel
 * share a name, the first one defined in the text keeps it and the others
 * print as name_1, name_2, ... in order of definition, so the text stays
 * unambiguous and does not depend on internal ids.
 */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tileop.h"

/* Display names of a kernel's vars and buffers (see the top comment):
 * two open-addressing tables, pointer -> name and the set of names given,
 * with the names themselves kept in one string pool. */
typedef struct NameTab {
    size_t cap;          /* slots in each table (a power of two) */
    const void **key;    /* node per slot, NULL when empty */
    size_t *name;        /* its name's offset in pool */
    size_t *used;        /* name set: offset + 1 per slot, 0 when empty */
    TsBuf pool;          /* NUL-separated names */
} NameTab;

typedef struct Printer {
    TsBuf *b;
    NameTab *t;          /* NULL: print raw names */
} Printer;

/* ---- names ------------------------------------------------------------ */

static size_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static const char *tab_lookup(const NameTab *t, const void *x) {
    for (size_t i = hash_ptr(x) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (!t->key[i]) return NULL;
        if (t->key[i] == x) return t->pool.s + t->name[i];
    }
}

static bool tab_name_used(const NameTab *t, const char *name, size_t *slot) {
    size_t i = ts_hash64(name, strlen(name), 0) & (t->cap - 1);
    for (;; i = (i + 1) & (t->cap - 1)) {
        if (!t->used[i]) break;
        if (!strcmp(t->pool.s + t->used[i] - 1, name)) return true;
    }
    *slot = i;
    return false;
}

/* Give x its display name: `name`, or name_1, name_2, ... if taken. */
static void tab_add(NameTab *t, const void *x, const char *name) {
    if (!x || tab_lookup(t, x)) return;
    /* a heap buffer, not a fixed one: a truncated candidate would repeat forever */
    TsBuf tmp = {0};
    size_t slot;
    ts_buf_puts(&tmp, name);
    for (long n = 1; tab_name_used(t, ts_buf_str(&tmp), &slot); n++) {
        tmp.n = 0;
        ts_buf_printf(&tmp, "%s_%ld", name, n);
    }
    size_t off = t->pool.n;
    ts_buf_putn(&t->pool, ts_buf_str(&tmp), tmp.n + 1);
    ts_buf_free(&tmp);
    t->used[slot] = off + 1;
    size_t i = hash_ptr(x) & (t->cap - 1);
    while (t->key[i]) i = (i + 1) & (t->cap - 1);
    t->key[i] = x;
    t->name[i] = off;
}

static void put_var(Printer *p, const IrVar *v) {
    const char *n = p->t ? tab_lookup(p->t, v) : NULL;
    ts_buf_puts(p->b, n ? n : v->name);
}

static void put_buf_name(Printer *p, const IrBuffer *b) {
    const char *n = p->t ? tab_lookup(p->t, b) : NULL;
    ts_buf_puts(p->b, n ? n : b->name);
}

/* ---- expressions ---------------------------------------------------------- */

enum {
    P_OR = 1, P_AND, P_NOT, P_CMP, P_BITOR, P_BITXOR, P_BITAND, P_SHIFT, P_ADD, P_MUL,
    P_UNARY, P_POW, P_ATOM
};

static const char *binop_text[] = {
#define X(e, c, p) [e] = p,
    IR_BINOPS(X)
#undef X
};

static const char *intrinsic_text[] = {
#define X(e, n, a) [e] = n,
    IR_INTRINSICS(X)
#undef X
};

static int bin_prec(IrBinOp op) {
    switch (op) {
    case IR_OR: return P_OR;
    case IR_AND: return P_AND;
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: return P_CMP;
    case IR_BITOR: return P_BITOR;
    case IR_BITXOR: return P_BITXOR;
    case IR_BITAND: return P_BITAND;
    case IR_SHL: case IR_SHR: return P_SHIFT;
    case IR_ADD: case IR_SUB: return P_ADD;
    case IR_MUL: case IR_DIV: case IR_FLOORDIV: case IR_FLOORMOD: return P_MUL;
    case IR_POW: return P_POW;
    case IR_MIN: case IR_MAX: default: return P_ATOM; /* printed as calls */
    }
}

static int expr_prec(const IrExpr *e) {
    switch (e->kind) {
    case IR_E_BIN: return bin_prec(e->bin.op);
    case IR_E_NEG: return P_UNARY;
    case IR_E_NOT: return e->un.bitnot ? P_UNARY : P_NOT;
    case IR_E_INT: return e->ival < 0 && e->dt != TS_BOOL && ts_dtype_info(e->dt) &&
                              ts_dtype_info(e->dt)->kind == 'i' ? P_UNARY : P_ATOM;
    case IR_E_FLOAT: return (e->fval < 0 || signbit(e->fval)) ? P_UNARY : P_ATOM;
    default: return P_ATOM;
    }
}

static void put_expr(Printer *p, const IrExpr *e);

static void put_sub(Printer *p, const IrExpr *e, bool paren) {
    if (paren) ts_buf_puts(p->b, "(");
    put_expr(p, e);
    if (paren) ts_buf_puts(p->b, ")");
}

static void put_float(TsBuf *b, double v, TsDType dt) {
    if (isnan(v)) { ts_buf_puts(b, "nan"); return; }
    if (isinf(v)) { ts_buf_puts(b, v < 0 ? "-inf" : "inf"); return; }
    char tmp[64];
    snprintf(tmp, sizeof tmp, dt == TS_FLOAT64 ? "%.17g" : "%.9g", v);
    ts_buf_puts(b, tmp);
    if (!strpbrk(tmp, ".e")) ts_buf_puts(b, ".0");
}


static void put_list(Printer *p, IrExpr *const *v, int n) {
    for (int i = 0; i < n; i++) {
        if (i) ts_buf_puts(p->b, ", ");
        put_expr(p, v[i]);
    }
}

static void put_expr(Printer *p, const IrExpr *e) {
    TsBuf *b = p->b;
    if (!e) { ts_buf_puts(b, "<null>"); return; }
    switch (e->kind) {
    case IR_E_INT:
        if (e->dt == TS_BOOL) ts_buf_puts(b, e->ival ? "True" : "False");
        else if (ts_dtype_info(e->dt) && ts_dtype_info(e->dt)->kind == 'u')
            ts_buf_printf(b, "%llu", (unsigned long long)e->ival);
        else ts_buf_printf(b, "%lld", (long long)e->ival);
        break;
    case IR_E_FLOAT: put_float(b, e->fval, e->dt); break;
    case IR_E_VAR: put_var(p, e->var); break;
    case IR_E_STRING: ts_buf_put_quoted(b, e->str, strlen(e->str)); break;
    case IR_E_LOAD:
        put_buf_name(p, e->load.buf);
        ts_buf_puts(b, "[");
        put_list(p, e->load.idx, e->load.nidx);
        ts_buf_puts(b, "]");
        if (e->load.bits) ts_buf_printf(b, ".bits<%s>", ts_dtype_name(e->dt));
        if (e->load.acquire) ts_buf_puts(b, ".acquire"); /* pass poll_marks */
        break;
    case IR_E_BIN: {
        IrBinOp op = e->bin.op;
        if (op == IR_MIN || op == IR_MAX) {
            ts_buf_printf(b, "%s(", binop_text[op]);
            put_expr(p, e->bin.a);
            ts_buf_puts(b, ", ");
            put_expr(p, e->bin.b);
            ts_buf_puts(b, ")");
            break;
        }
        int pr = bin_prec(op), pa = expr_prec(e->bin.a), pb = expr_prec(e->bin.b);
        bool la, rb;
        if (op == IR_POW) { la = pa <= pr; rb = pb < pr; }
        else if (pr == P_CMP) { la = pa <= pr; rb = pb <= pr; }
        else { la = pa < pr; rb = pb <= pr; }
        put_sub(p, e->bin.a, la);
        ts_buf_printf(b, " %s ", binop_text[op]);
        put_sub(p, e->bin.b, rb);
        break;
    }
    case IR_E_NEG:
        ts_buf_puts(b, "-");
        put_sub(p, e->un.a, expr_prec(e->un.a) <= P_UNARY);
        break;
    case IR_E_NOT:
        if (e->un.bitnot) {
            ts_buf_puts(b, "~");
            put_sub(p, e->un.a, expr_prec(e->un.a) < P_UNARY);
        } else {
            ts_buf_puts(b, "not ");
            put_sub(p, e->un.a, expr_prec(e->un.a) < P_NOT);
        }
        break;
    case IR_E_SELECT:
        ts_buf_puts(b, "select(");
        put_expr(p, e->sel.cond);
        ts_buf_puts(b, ", ");
        put_expr(p, e->sel.a);
        ts_buf_puts(b, ", ");
        put_expr(p, e->sel.b);
        ts_buf_puts(b, ")");
        break;
    case IR_E_CAST:
        ts_buf_printf(b, "%s(", ts_dtype_name(e->dt));
        put_expr(p, e->un.a);
        ts_buf_puts(b, ")");
        break;
    case IR_E_CALL:
        ts_buf_printf(b, "%s(", (unsigned)e->call.fn < IR_INTRINSIC_COUNT
                                    ? intrinsic_text[e->call.fn] : "?");
        put_list(p, e->call.args, e->call.nargs);
        if (e->call.fn == IR_REINTERPRET) ts_buf_printf(b, ", %s", ts_dtype_name(e->dt));
        ts_buf_puts(b, ")");
        break;
    }
}

/* ---- regions, buffers, tile ops ------------------------------------------- */

static bool expr_same_const(const IrExpr *x, const IrExpr *y) {
    int64_t a, c;
    if (x == y) return true;
    if (ir_is_const_int(x, &a) && ir_is_const_int(y, &c)) return a == c;
    return x->kind == IR_E_VAR && y->kind == IR_E_VAR && x->var == y->var;
}

static void put_region(Printer *p, const IrRegion *r) {
    put_buf_name(p, r->buf);
    bool full = r->ndim == r->buf->ndim;
    for (int i = 0; full && i < r->ndim; i++) {
        int64_t s;
        full = ir_is_const_int(r->start[i], &s) && s == 0 &&
               expr_same_const(r->extent[i], r->buf->shape[i]);
    }
    if (full) return;
    ts_buf_puts(p->b, "[");
    for (int i = 0; i < r->ndim; i++) {
        if (i) ts_buf_puts(p->b, ", ");
        put_expr(p, r->start[i]);
        ts_buf_puts(p->b, ":+");
        put_sub(p, r->extent[i], expr_prec(r->extent[i]) <= P_UNARY);
    }
    ts_buf_puts(p->b, "]");
}

static void put_buffer_type(Printer *p, const IrBuffer *b) {
    ts_buf_printf(p->b, "%s[", ts_dtype_name(b->dt));
    put_list(p, b->shape, b->ndim);
    ts_buf_puts(p->b, "]");
}

static const char *policy_name(TsGemmPolicy pol) {
    switch (pol) {
    case TS_GEMM_SQUARE: return "square";
    case TS_GEMM_FULLROW: return "fullrow";
    case TS_GEMM_FULLCOL: return "fullcol";
    }
    return "?";
}

static void put_tileop(Printer *p, const IrTileOp *op) {
    TsBuf *b = p->b;
    switch (op->kind) {
    case TS_OP_COPY:
    case TS_OP_CUMSUM:
    case TS_OP_REDUCE:
        if (op->kind == TS_OP_REDUCE) ts_buf_printf(b, "reduce_%s(", ts_reduce_name(op->reduce));
        else ts_buf_printf(b, "%s(", ts_op_name(op->kind));
        put_region(p, &op->r[0]);
        ts_buf_puts(b, " -> ");
        put_region(p, &op->r[1]);
        if (op->kind == TS_OP_REDUCE) ts_buf_printf(b, ", dim=%d, clear=%d", op->dim, op->clear);
        if (op->kind == TS_OP_CUMSUM) {
            ts_buf_printf(b, ", dim=%d", op->dim);
            if (op->reverse) ts_buf_puts(b, ", reverse=1");
        }
        if (op->kind == TS_OP_COPY && op->async) ts_buf_puts(b, ", async=1");
        ts_buf_puts(b, ")");
        break;
    case TS_OP_FILL:
        ts_buf_puts(b, "fill(");
        put_region(p, &op->r[0]);
        ts_buf_puts(b, ", ");
        put_expr(p, op->value);
        ts_buf_puts(b, ")");
        break;
    case TS_OP_GEMM:
        ts_buf_puts(b, "gemm(");
        for (int i = 0; i < 3; i++) {
            if (i) ts_buf_puts(b, ", ");
            put_region(p, &op->r[i]);
        }
        if (op->nr == 5) { /* block-scaled */
            ts_buf_puts(b, ", sfa=");
            put_region(p, &op->r[3]);
            ts_buf_puts(b, ", sfb=");
            put_region(p, &op->r[4]);
            ts_buf_printf(b, ", sf_layout=%s, k_start=", op->sf_layout == TS_SF_CHUNK_KMAJOR ? "chunk_kmajor" : "rowmajor");
            put_expr(p, op->args[0]);
        }
        if (op->trans_a) ts_buf_puts(b, ", trans_a=1");
        if (op->trans_b) ts_buf_puts(b, ", trans_b=1");
        if (op->clear_accum) ts_buf_puts(b, ", clear_accum=1");
        if (op->policy != TS_GEMM_SQUARE) ts_buf_printf(b, ", policy=%s", policy_name(op->policy));
        if (op->k_pack > 1) ts_buf_printf(b, ", k_pack=%d", op->k_pack);
        if (op->wg_wait) ts_buf_printf(b, ", wg_wait=%d", op->wg_wait);
        /* issued on wgmma without a wait of its own (T.wgmma_gemm, a pipelined gemm left in flight) */
        if (op->inst == TS_OP_INST_WGMMA && op->wg_async) ts_buf_puts(b, ", async=1");
        if (op->tcgen05) ts_buf_puts(b, ", tcgen05=1");
        if (op->mbar) {
            ts_buf_puts(b, ", mbar=");
            put_buf_name(p, op->mbar);
            ts_buf_puts(b, "[");
            put_expr(p, op->args[0]);
            ts_buf_puts(b, "]");
        }
        if (op->mma_threads)
            ts_buf_printf(b, ", warps=[%d, %d)", op->mma_lo, op->mma_lo + op->mma_threads);
        if (op->mma_part) {
            static const char *const parts[] = {"whole", "pre", "body", "tail", "rest"};
            ts_buf_printf(b, ", part=%s%d", parts[op->mma_part <= TS_MMA_REST ? op->mma_part : 0], op->mma_frag);
        }
        ts_buf_puts(b, ")");
        break;
    case TS_OP_ATOMIC_ADD:
        ts_buf_puts(b, "atomic_add(");
        if (op->nr >= 2) {
            put_region(p, &op->r[1]);
            ts_buf_puts(b, " -> ");
            put_region(p, &op->r[0]);
        } else {
            put_region(p, &op->r[0]);
            ts_buf_puts(b, ", ");
            put_expr(p, op->value);
        }
        ts_buf_puts(b, ")");
        break;
    case TS_OP_COLL: /* coll.allreduce(src -> dst, op=sum, ranks) / (..., scratch=S, unit=g of 2 warpgroups) */
        ts_buf_printf(b, "coll.%s(", ts_coll_name(op->coll));
        put_region(p, &op->r[0]);
        ts_buf_puts(b, " -> ");
        put_region(p, &op->r[1]);
        if (op->coll == TS_COLL_ALLREDUCE || op->coll == TS_COLL_REDUCE_SCATTER)
            ts_buf_printf(b, ", op=%s", ts_reduce_name(op->reduce));
        if (!op->coll_units) {
            ts_buf_puts(b, ", ranks)");
            break;
        }
        if (op->coll_units < 0) {
            ts_buf_puts(b, ", blocks)");
            break;
        }
        if (op->nr > 2) {
            ts_buf_puts(b, ", scratch=");
            put_region(p, &op->r[2]);
        }
        ts_buf_puts(b, ", unit=");
        put_expr(p, op->args[0]);
        ts_buf_printf(b, " of %d %s)", op->coll_units, op->coll_unit_threads == 32 ? "warps" : "warpgroups");
        break;
    default:
        ts_buf_printf(b, "%s(", op->kind == TS_OP_COMM ? ts_comm_name(op->comm) : ts_op_name(op->kind));
        for (int i = 0; i < op->nr; i++) {
            if (i) ts_buf_puts(b, ", ");
            put_region(p, &op->r[i]);
        }
        for (int i = 0; op->kind == TS_OP_COMM && i < 3; i++) { /* op/comm.h: peer, value, signal or part */
            if (!op->args[i]) continue;
            /* a2: a put's signal value, else this thread's part (op/comm.h) */
            ts_buf_puts(b, i == 0 ? ", peer=" : i == 1 ? ", value=" : op->nr == 3 ? ", signal=" : ", part=");
            put_expr(p, op->args[i]);
        }
        if (op->kind == TS_OP_COMM) ts_buf_printf(b, ", flags=%d/%d/%d", op->cflags[0], op->cflags[1], op->cflags[2]);
        if (op->kind == TS_OP_COMM && op->xport) ts_buf_puts(b, ", xport");
        /* NCCL's GIN form (lower_comm, CUDA); a fence's says what it does not give */
        if (op->kind == TS_OP_COMM && op->gin)
            ts_buf_printf(b, "=gin.%s%s", ts_gin_form_name(op->gin),
                          op->gin == TS_GIN_FLUSH ? " (sources reusable; not remote completion, no order at the peer)"
                                                  : "");
        if (op->kind == TS_OP_COMM && op->gin_sig) ts_buf_printf(b, ", gin_signals=slot %d", op->gin_sig - 1);
        ts_buf_puts(b, ")");
        break;
    }
}

static void put_layout(Printer *p, const IrLayout *l) {
    TsBuf *b = p->b;
    ts_buf_puts(b, " layout(");
    for (int i = 0; i < l->ndim; i++) {
        if (i) ts_buf_puts(b, ", ");
        put_var(p, l->in[i]);
    }
    ts_buf_puts(b, " -> thread=");
    put_expr(p, l->thread);
    ts_buf_puts(b, ", local=[");
    put_list(p, l->local, l->nlocal);
    ts_buf_printf(b, "], local_size=%lld", (long long)l->local_size);
    if (l->replicate > 1) ts_buf_printf(b, ", replicate=%d", l->replicate);
    ts_buf_puts(b, ")");
}

/* ---- statements ------------------------------------------------------------ */

static void put_ints(TsBuf *b, const char *name, const int *v, int n) {
    ts_buf_printf(b, ", %s=[", name);
    for (int i = 0; i < n; i++) ts_buf_printf(b, i ? ", %d" : "%d", v[i]);
    ts_buf_puts(b, "]");
}

static void put_stmt(Printer *p, const IrStmt *s, int ind);

/* A nested body; `pass` when it is empty. */
static void put_body(Printer *p, const IrStmt *s, int ind) {
    if (!s || (s->kind == IR_S_SEQ && !s->seq.n)) {
        ts_buf_indent(p->b, ind);
        ts_buf_puts(p->b, "pass\n");
        return;
    }
    put_stmt(p, s, ind);
}

static void put_stmt(Printer *p, const IrStmt *s, int ind) {
    TsBuf *b = p->b;
    if (!s) return;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->seq.n; i++) put_stmt(p, s->seq.v[i], ind);
        return;
    }
    ts_buf_indent(b, ind);
    switch (s->kind) {
    case IR_S_SEQ: break;
    case IR_S_FOR: {
        int64_t m;
        ts_buf_puts(b, "for ");
        put_var(p, s->for_.var);
        ts_buf_printf(b, " in %s(", ir_for_kind_name(s->for_.kind));
        if (!(ir_is_const_int(s->for_.min, &m) && m == 0)) {
            put_expr(p, s->for_.min);
            ts_buf_puts(b, ", extent=");
        }
        put_expr(p, s->for_.extent);
        if (s->for_.num_stages) ts_buf_printf(b, ", num_stages=%d", s->for_.num_stages);
        if (s->for_.order) put_ints(b, "order", s->for_.order, s->for_.norder);
        if (s->for_.stage) put_ints(b, "stage", s->for_.stage, s->for_.norder);
        ts_buf_puts(b, "):\n");
        put_body(p, s->for_.body, ind + 1);
        return;
    }
    case IR_S_IF:
        ts_buf_puts(b, "if ");
        put_expr(p, s->if_.cond);
        ts_buf_puts(b, ":\n");
        put_body(p, s->if_.then, ind + 1);
        if (s->if_.else_) {
            ts_buf_indent(b, ind);
            ts_buf_puts(b, "else:\n");
            put_body(p, s->if_.else_, ind + 1);
        }
        return;
    case IR_S_WHILE:
        ts_buf_puts(b, "while ");
        put_expr(p, s->while_.cond);
        ts_buf_puts(b, s->while_.acquire && s->while_.poll ? ": # acquire, poll\n"
                       : s->while_.acquire                 ? ": # acquire\n"
                       : s->while_.poll                    ? ": # poll\n"
                                                           : ":\n");
        put_body(p, s->while_.body, ind + 1);
        return;
    case IR_S_BREAK: ts_buf_puts(b, "break"); break;
    case IR_S_CONTINUE: ts_buf_puts(b, "continue"); break;
    case IR_S_STORE:
    case IR_S_ATOMIC_ADD:
        if (s->kind == IR_S_ATOMIC_ADD) ts_buf_puts(b, "atomic ");
        if (s->kind == IR_S_STORE && s->store.release) ts_buf_puts(b, "release ");
        put_buf_name(p, s->store.buf);
        ts_buf_puts(b, "[");
        put_list(p, s->store.idx, s->store.nidx);
        ts_buf_puts(b, s->kind == IR_S_ATOMIC_ADD ? "] += " : s->store.bits ? "].bits = " : "] = ");
        put_expr(p, s->store.value);
        break;
    case IR_S_LET:
        put_var(p, s->let.var);
        ts_buf_printf(b, ": %s = ", ts_dtype_name(s->let.var->dt));
        put_expr(p, s->let.value);
        break;
    case IR_S_ALLOC: {
        const IrBuffer *buf = s->alloc.buf;
        put_buf_name(p, buf);
        ts_buf_printf(b, " = alloc_%s ", ir_scope_name(buf->scope));
        put_buffer_type(p, buf);
        if (buf->stages > 1) ts_buf_printf(b, " stages=%d", buf->stages);
        if (buf->swizzle.kind == IR_SWIZZLE_XOR)
            ts_buf_printf(b, " swizzle(%d, %d, %d)", buf->swizzle.bits, buf->swizzle.base,
                          buf->swizzle.shift);
        if (buf->swizzle_annotated) ts_buf_puts(b, " annotated");
        if (buf->row_pad) ts_buf_printf(b, " row_pad(%d)", buf->row_pad);
        if (buf->align > 1 && (buf->scope == IR_SCOPE_LOCAL || buf->scope == IR_SCOPE_VAR))
            ts_buf_printf(b, " align(%d)", buf->align); /* an external function takes its address */
        if (buf->smem_bytes)
            ts_buf_printf(b, " smem[%lld, %lld)", (long long)buf->smem_offset,
                          (long long)(buf->smem_offset + buf->smem_bytes));
        if (buf->layout) put_layout(p, buf->layout);
        break;
    }
    case IR_S_TILEOP: put_tileop(p, s->op); break;
    case IR_S_BARRIER:
        if (s->barrier.idv) {
            ts_buf_puts(b, "barrier(");
            put_expr(p, s->barrier.idv);
            ts_buf_printf(b, ", %d%s)", s->barrier.count, s->barrier.unaligned ? ", unaligned" : "");
        } else if (s->barrier.id)
            ts_buf_printf(b, "barrier(%d, %d%s)", s->barrier.id, s->barrier.count,
                          s->barrier.unaligned ? ", unaligned" : "");
        else ts_buf_printf(b, "barrier(%s%s%s)", s->barrier.async_fence ? "async_fence" : "",
                           s->barrier.async_fence && s->barrier.release ? ", " : "",
                           s->barrier.release ? "release" : "");
        break;
    case IR_S_MBAR:
        ts_buf_printf(b, "mbarrier_%s%s(", ir_mbar_op_name(s->mbar.op), s->mbar.noinc ? "_noinc" : "");
        put_buf_name(p, s->mbar.buf);
        ts_buf_puts(b, "[");
        put_expr(p, s->mbar.idx);
        ts_buf_puts(b, "]");
        if (s->mbar.value) {
            ts_buf_puts(b, ", ");
            put_expr(p, s->mbar.value);
        }
        ts_buf_puts(b, ")");
        break;
    case IR_S_ROLE:
        if (s->role.solo) /* thread lo alone, for the group */
            ts_buf_printf(b, "with solo(thread=%d, for_threads=[%d, %d)):\n", s->role.lo, s->role.lo,
                          s->role.lo + s->role.n);
        else
            ts_buf_printf(b, "with role(%d, threads=[%d, %d)):\n", s->role.id, s->role.lo, s->role.lo + s->role.n);
        put_body(p, s->role.body, ind + 1);
        return;
    case IR_S_ASYNC_COMMIT: ts_buf_puts(b, "async_commit()"); break;
    case IR_S_ASYNC_WAIT: ts_buf_printf(b, "async_wait(%d)", s->async_wait.pending); break;
    case IR_S_VCOPY:
        ts_buf_printf(b, "%s<%d>(", s->vcopy.async ? "cp_async" : "vcopy", s->vcopy.lanes);
        put_buf_name(p, s->vcopy.dst);
        ts_buf_puts(b, "[");
        put_list(p, s->vcopy.didx, s->vcopy.ndi);
        ts_buf_puts(b, "], ");
        put_buf_name(p, s->vcopy.src);
        ts_buf_puts(b, "[");
        put_list(p, s->vcopy.sidx, s->vcopy.nsi);
        ts_buf_puts(b, "]");
        if (s->vcopy.pred) {
            ts_buf_puts(b, ", if=");
            put_expr(p, s->vcopy.pred);
        }
        if (s->vcopy.aligned) ts_buf_puts(b, ", aligned");
        if (s->vcopy.dst->dt != s->vcopy.src->dt)
            ts_buf_printf(b, ", %s->%s", ts_dtype_name(s->vcopy.src->dt), ts_dtype_name(s->vcopy.dst->dt));
        ts_buf_puts(b, ")");
        break;
    case IR_S_EVAL:
        ts_buf_puts(b, "eval ");
        put_expr(p, s->eval.e);
        for (int i = 0; i < s->eval.ndone; i++) { /* a wgmma wait's completed accumulators */
            ts_buf_puts(b, i ? ", " : " completes=[");
            put_buf_name(p, s->eval.done[i]);
        }
        if (s->eval.ndone) ts_buf_puts(b, "]");
        break;
    case IR_S_PRINT:
        ts_buf_puts(b, "print(");
        if (s->print.buf) put_buf_name(p, s->print.buf);
        else put_expr(p, s->print.value);
        if (s->print.msg) {
            ts_buf_puts(b, ", msg=");
            ts_buf_put_quoted(b, s->print.msg, strlen(s->print.msg));
        }
        ts_buf_puts(b, ")");
        break;
    }
    ts_buf_puts(b, "\n");
}

/* ---- naming ---------------------------------------------------------------- */

static int count_stmt(const IrStmt *s) {
    if (!s) return 0;
    int n = 1;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) n += count_stmt(s->seq.v[i]);
        break;
    case IR_S_FOR: n += count_stmt(s->for_.body); break;
    case IR_S_IF: n += count_stmt(s->if_.then) + count_stmt(s->if_.else_); break;
    case IR_S_WHILE: n += count_stmt(s->while_.body); break;
    default: break;
    }
    return n;
}

/* Names in order of definition, so the user's names win over those of
 * vars a lowering introduced later in the text. */
static void name_stmt(NameTab *t, const IrStmt *s) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) name_stmt(t, s->seq.v[i]);
        break;
    case IR_S_FOR:
        tab_add(t, s->for_.var, s->for_.var->name);
        name_stmt(t, s->for_.body);
        break;
    case IR_S_IF:
        name_stmt(t, s->if_.then);
        name_stmt(t, s->if_.else_);
        break;
    case IR_S_WHILE: name_stmt(t, s->while_.body); break;
    case IR_S_LET: tab_add(t, s->let.var, s->let.var->name); break;
    case IR_S_ALLOC: tab_add(t, s->alloc.buf, s->alloc.buf->name); break;
    default: break;
    }
}

static bool name_kernel(NameTab *t, const IrKernel *k) {
    size_t need = (size_t)(count_stmt(k->body) + k->params.n + k->shape_vars.n + 8) * 2;
    t->cap = 64;
    while (t->cap < need) t->cap *= 2;
    t->key = calloc(t->cap, sizeof *t->key);
    t->name = calloc(t->cap, sizeof *t->name);
    t->used = calloc(t->cap, sizeof *t->used);
    if (!t->key || !t->name || !t->used) return false; /* no memory: print raw names */
    for (int i = 0; i < k->params.n; i++) {
        const IrParam *pa = &k->params.v[i];
        if (pa->buf) tab_add(t, pa->buf, pa->buf->name);
        if (pa->var) tab_add(t, pa->var, pa->var->name);
    }
    for (int i = 0; i < k->shape_vars.n; i++) tab_add(t, k->shape_vars.v[i], k->shape_vars.v[i]->name);
    for (int i = 0; i < 3; i++)
        if (k->block_idx[i]) tab_add(t, k->block_idx[i], k->block_idx[i]->name);
    name_stmt(t, k->body);
    return true;
}

static void free_names(NameTab *t) {
    free(t->key);
    free(t->name);
    free(t->used);
    ts_buf_free(&t->pool);
}

/* ---- entry points --------------------------------------------------------------- */

void ir_print_expr(TsBuf *b, const IrExpr *e) {
    Printer p = {b, NULL};
    put_expr(&p, e);
}

void ir_print_stmt(TsBuf *b, const IrStmt *s, int indent) {
    Printer p = {b, NULL};
    put_stmt(&p, s, indent);
}

void ir_print_kernel(TsBuf *b, const IrKernel *k) {
    static const char *axis[3] = {"x", "y", "z"};
    NameTab t = {0};
    Printer p = {b, name_kernel(&t, k) ? &t : NULL};
    ts_buf_printf(b, "kernel %s(", k->name);
    for (int i = 0; i < k->params.n; i++) {
        const IrParam *pa = &k->params.v[i];
        if (i) ts_buf_puts(b, ", ");
        if (pa->buf) {
            put_buf_name(&p, pa->buf);
            ts_buf_printf(b, ": %s ", ir_scope_name(pa->buf->scope));
            put_buffer_type(&p, pa->buf);
            if (pa->buf->strides) {
                ts_buf_puts(b, " strides(");
                put_list(&p, pa->buf->strides, pa->buf->ndim);
                ts_buf_puts(b, ")");
            }
            if (pa->buf->contiguous) ts_buf_printf(b, " contiguous align(%d)", pa->buf->align);
        } else if (pa->var) {
            put_var(&p, pa->var);
            ts_buf_printf(b, ": %s", ts_dtype_name(pa->var->dt));
        } else {
            ts_buf_printf(b, "%s: ?", pa->name ? pa->name : "?");
        }
        if (pa->is_output) ts_buf_puts(b, " out");
    }
    ts_buf_puts(b, ") grid(");
    int ng = k->ngrid < 1 ? 1 : k->ngrid > 3 ? 3 : k->ngrid;
    put_list(&p, k->grid, ng);
    ts_buf_printf(b, ") threads %d", k->threads[0]);
    if (k->threads[1] > 1 || k->threads[2] > 1)
        ts_buf_printf(b, ", %d, %d", k->threads[1], k->threads[2]);
    if (k->cluster[0]) ts_buf_printf(b, " cluster(%d, %d, %d)", k->cluster[0], k->cluster[1], k->cluster[2]);
    ts_buf_puts(b, "\n");
    if (k->swizzle_panel) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "use_swizzle(%d%s)\n", k->swizzle_panel, k->swizzle_col ? ", col" : "");
    }
    if (k->may_block) {
        ts_buf_indent(b, 1);
        ts_buf_puts(b, "may_block\n");
    }
    if (k->cooperative) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "cooperative grid_workspace %lld\n", (long long)k->grid_ws_bytes);
    }
    if (k->index32) {
        ts_buf_indent(b, 1);
        ts_buf_puts(b, "index32\n");
    }
    if (k->fast_math) {
        ts_buf_indent(b, 1);
        ts_buf_puts(b, "fast_math\n");
    }
    if (k->ptxas_reg_level) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "ptxas_register_usage_level %d\n", k->ptxas_reg_level);
    }
    if (k->min_blocks) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "min_blocks %d\n", k->min_blocks);
    }
    if (k->ptxas_fast_compile) {
        ts_buf_indent(b, 1);
        ts_buf_puts(b, "ptxas_fast_compile min\n");
    }
    if (k->multinode) { /* lower_comm: accesses to other nodes through the transport */
        ts_buf_indent(b, 1);
        ts_buf_puts(b, "multinode\n");
    }
    if (k->gin_nsig > 0) { /* lower_comm: signal buffers, each mapped onto GIN signals at launch */
        ts_buf_indent(b, 1);
        ts_buf_puts(b, "gin_signal_buffers");
        for (int i = 0; i < k->gin_nsig; i++) {
            int pi = k->gin_sig_param[i];
            ts_buf_printf(b, " %d:%s", i, pi >= 0 && pi < k->params.n ? k->params.v[pi].name : "?");
        }
        ts_buf_puts(b, "\n");
    }
    if (k->gemm_k_rolled || k->nvrtc_fast_compile) { /* the quick tier's (tier_plan) */
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "quick_tier%s%s\n", k->gemm_k_rolled ? " gemm_k_rolled" : "",
                      k->nvrtc_fast_compile ? " nvrtc_fast_compile min" : "");
    }
    if (k->cp_async_l2_prefetch) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "cp_async_l2_prefetch %d bytes\n", k->cp_async_l2_prefetch);
    }
    for (int i = 0; i < k->extern_src.n; i++) { /* T.import_source: its size and first line */
        const char *txt = k->extern_src.v[i];
        while (*txt == '\n' || *txt == ' ') txt++;
        size_t n = strcspn(txt, "\n");
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "import_source %d: %zu bytes, ", i + 1, strlen(k->extern_src.v[i]));
        ts_buf_put_quoted(b, txt, n > 60 ? 60 : n);
        ts_buf_puts(b, n > 60 ? "...\n" : "\n");
    }
    if (k->smem_planned && k->smem_bytes) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "shared_memory %lld bytes\n", (long long)k->smem_bytes);
    }
    if (k->layout_note) {
        ts_buf_indent(b, 1);
        ts_buf_printf(b, "# fragments stay in shared memory: %s\n", k->layout_note);
    }
    for (int i = 0; i < 3; i++) {
        if (!k->block_idx[i]) continue;
        ts_buf_indent(b, 1);
        put_var(&p, k->block_idx[i]);
        ts_buf_printf(b, " = blockIdx.%s\n", axis[i]);
    }
    put_stmt(&p, k->body, 1);
    free_names(&t);
}
