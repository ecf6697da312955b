/*
 * comm_c.c — the C target's emitter of communication primitives (the
 * TS_OP_COMM tile ops kept by op/comm.c), for the `sim` world where ranks
 * are threads of one process.
 *
 * A remote address is computed the way TileScale and NVSHMEM do on GPUs:
 * the local address of the element, minus this rank's heap base, plus the
 * peer's heap base (TsCArgs.peer_base, the rank table the kernel ABI
 * carries).  Every such translation goes through ts_comm_addr, which is
 * also where misuse is caught before it can corrupt anything: a peer out
 * of range, a range running past the end of its tensor, a remote access
 * to a tensor that is not on the symmetric heap.  It reports through the
 * ABI's fail callback (message naming the rank, the primitive and the
 * buffer) and the block returns.
 *
 * Waits spin on an acquire load, yielding to the block scheduler on every
 * iteration (kernels with communication always run their blocks as
 * coroutines, so a waiting block never starves the one it waits for), and
 * give up when another rank failed or when the world's timeout passes —
 * then with a message naming the rank, the buffer, the element, its byte
 * offset in the heap, the value seen and the value awaited.
 *
 * Data moves with memmove, flags with release stores and acq_rel atomics,
 * so a flag set after data publishes the data to whoever acquires the flag
 * (the C11 model plays the role of the GPU's fences here; T.fence_* and
 * T.quiet become full fences).
 *
 * Several nodes (ops marked xport by pass lower_comm: the peer is a rank
 * of another node).  Such a rank's peer_base entry is NULL (the world's
 * LSA team is one node), so ts_comm_addr refuses it, naming the node, in
 * kernels compiled for one node.  xport ops never form the peer's
 * address: ts_comm_xoff checks the range as ts_comm_addr does and gives
 * the byte offset in the peer's heap, and the request goes to
 * TsCArgs.xport (the world's proxy): a put (its source copied at the
 * call; a set signal or T.st is a put of the value), a get (blocking; a
 * wait polls with gets), an atomic add (T.atom_add, signal adds; 32- and
 * 64-bit elements), a quiet (T.fence, T.quiet, before a block barrier).
 *
 * All generated names start with ts_; each primitive is one C block.
 */
#include "target/c/comm_c.h"

#include <stdio.h>
#include <string.h>

#include "op/comm.h"

/* Helpers every generated file with communication carries (after the ABI). */
static const char comm_prelude[] =
    "/* communication helpers (src/target/c/comm_c.c) */\n"
    "__attribute__((format(printf, 2, 3)))\n"
    "TS_INL void ts_comm_fail(const TsCArgs *a, const char *fmt, ...) {\n"
    "    char small[512], *m = small; /* the whole message, never cut (buffer names of any length) */\n"
    "    va_list ap;\n"
    "    int n1 = snprintf(small, sizeof small, \"rank %d: \", (int)a->rank);\n"
    "    va_start(ap, fmt);\n"
    "    int n2 = vsnprintf(NULL, 0, fmt, ap);\n"
    "    va_end(ap);\n"
    "    if (n1 < 0 || n2 < 0) return;\n"
    "    size_t len = (size_t)n1 + (size_t)n2 + 1;\n"
    "    if (len > sizeof small && !(m = malloc(len))) {\n"
    "        m = small; /* out of memory: the message as far as it fits */\n"
    "        len = sizeof small;\n"
    "    }\n"
    "    if (m != small) memcpy(m, small, (size_t)n1 + 1);\n"
    "    va_start(ap, fmt);\n"
    "    vsnprintf(m + n1, len - (size_t)n1, fmt, ap);\n"
    "    va_end(ap);\n"
    "    if (a->fail) a->fail(a->fail_ctx, m);\n"
    "    if (m != small) free(m);\n"
    "}\n"
    /* offset of p in this rank's heap, or -1 */
    "TS_INL int64_t ts_comm_heap_off(const TsCArgs *a, const void *p) {\n"
    "    if (!a->peer_base) return -1;\n"
    "    const char *b = (const char *)a->peer_base[a->rank], *q = (const char *)p;\n"
    "    return q >= b && q < b + a->heap_bytes ? (int64_t)(q - b) : -1;\n"
    "}\n"
    /* the address on rank pe (-1: this one) of `bytes` bytes at local p,
     * inside [lo, hi) of buffer `name`; NULL after reporting misuse */
    "TS_INL void *ts_comm_addr(const TsCArgs *a, const char *what, const char *name, int64_t pe,\n"
    "                          const void *p, int64_t bytes, const void *lo, const void *hi) {\n"
    "    const char *q = (const char *)p, *l = (const char *)lo, *h = (const char *)hi;\n"
    "    if (q < l || bytes < 0 || bytes > h - q) {\n"
    "        ts_comm_fail(a, \"%s: %lld bytes at byte %lld of '%s' are outside it (%lld bytes)\", what,\n"
    "                     (long long)bytes, (long long)(q - l), name, (long long)(h - l));\n"
    "        return NULL;\n"
    "    }\n"
    "    if (pe < 0 || pe == a->rank) return (void *)q;\n"
    "    if (pe >= a->nranks) {\n"
    "        ts_comm_fail(a, \"%s: peer rank %lld is out of range (%d rank%s) for '%s'\", what,\n"
    "                     (long long)pe, (int)a->nranks, a->nranks == 1 ? \"\" : \"s\", name);\n"
    "        return NULL;\n"
    "    }\n"
    "    int64_t off = ts_comm_heap_off(a, q);\n"
    "    if (off < 0 || bytes > a->heap_bytes - off) {\n"
    "        ts_comm_fail(a, \"%s: '%s' is not on the symmetric heap, so rank %lld has no copy of it\",\n"
    "                     what, name, (long long)pe);\n"
    "        return NULL;\n"
    "    }\n"
    "    if (!a->peer_base[pe]) {\n"
    "        int per = a->ranks_per_node > 0 ? a->ranks_per_node : a->nranks;\n"
    "        ts_comm_fail(a, \"%s: rank %lld is on node %lld, not on this rank's node %d (%d ranks per node), \"\n"
    "                     \"so '%s' there has no load/store address; a kernel compiled for several nodes \"\n"
    "                     \"(multinode) reaches it through the transport\", what, (long long)pe,\n"
    "                     (long long)(pe / per), (int)(a->rank / per), per, name);\n"
    "        return NULL;\n"
    "    }\n"
    "    return (char *)a->peer_base[pe] + off;\n"
    "}\n"
    /* the same checks for rank pe of another node, reached through the
     * transport: the byte offset in pe's heap, or -1 after reporting */
    "TS_INL int64_t ts_comm_xoff(const TsCArgs *a, const char *what, const char *name, int64_t pe,\n"
    "                            const void *p, int64_t bytes, const void *lo, const void *hi) {\n"
    "    const char *q = (const char *)p, *l = (const char *)lo, *h = (const char *)hi;\n"
    "    if (q < l || bytes < 0 || bytes > h - q) {\n"
    "        ts_comm_fail(a, \"%s: %lld bytes at byte %lld of '%s' are outside it (%lld bytes)\", what,\n"
    "                     (long long)bytes, (long long)(q - l), name, (long long)(h - l));\n"
    "        return -1;\n"
    "    }\n"
    "    if (pe < 0 || pe >= a->nranks) {\n"
    "        ts_comm_fail(a, \"%s: peer rank %lld is out of range (%d rank%s) for '%s'\", what,\n"
    "                     (long long)pe, (int)a->nranks, a->nranks == 1 ? \"\" : \"s\", name);\n"
    "        return -1;\n"
    "    }\n"
    "    int64_t off = ts_comm_heap_off(a, q);\n"
    "    if (off < 0 || bytes > a->heap_bytes - off) {\n"
    "        ts_comm_fail(a, \"%s: '%s' is not on the symmetric heap, so rank %lld has no copy of it\",\n"
    "                     what, name, (long long)pe);\n"
    "        return -1;\n"
    "    }\n"
    "    if (!a->xport) {\n"
    "        ts_comm_fail(a, \"%s: rank %lld is on another node and this launch has no transport\", what, (long long)pe);\n"
    "        return -1;\n"
    "    }\n"
    "    return off;\n"
    "}\n"
    /* one transport request; 0 after reporting a refusal */
    "TS_INL int ts_comm_xport(const TsCArgs *a, const char *what, int32_t op, int64_t pe, int64_t off,\n"
    "                         int64_t bytes, void *local, int is_float, int64_t ival, double fval) {\n"
    "    TsCXport r = {op, (int32_t)pe, off, bytes, local, is_float, ival, fval};\n"
    "    if (!a->xport || a->xport(a->xport_ctx, &r) != 0) {\n"
    "        ts_comm_fail(a, \"%s: the transport refused %lld bytes at byte %lld of rank %lld's heap\", what,\n"
    "                     (long long)bytes, (long long)off, (long long)pe);\n"
    "        return 0;\n"
    "    }\n"
    "    return 1;\n"
    "}\n"
    "TS_INL void ts_comm_quiet(const TsCArgs *a) {\n"
    "    if (a->xport) ts_comm_xport(a, \"T.quiet\", TS_C_XPORT_QUIET, 0, 0, 0, NULL, 0, 0, 0.0);\n"
    "}\n"
    /* one iteration of a wait: 0 go on, 1 give up (another rank failed),
     * 2 timed out (the caller reports) */
    "TS_INL int ts_comm_spin(const TsCArgs *a, TsCBlock *b, int64_t *t0, int64_t *n) {\n"
    "    if (a->yield) a->yield(b->yield_ctx);\n"
    "    if (a->aborted && __atomic_load_n(a->aborted, __ATOMIC_ACQUIRE)) return 1;\n"
    "    if ((++*n & 255) != 1 || !a->now_ms) return 0;\n"
    "    int64_t now = a->now_ms();\n"
    "    if (*t0 == 0) *t0 = now;\n"
    "    return now - *t0 > a->wait_timeout_ms ? 2 : 0;\n"
    "}\n\n";

void ts_c_comm_prelude(TsBuf *o) { ts_buf_puts(o, comm_prelude); }

/* ---- emitter state --------------------------------------------------------------- */

typedef struct Ce {
    TsCxGen *x;
    TsBuf *o;
    int ind;
    const IrStmt *s;
    const char *what;   /* "T.put_block" etc., for messages */
} Ce;

static void out(Ce *c, const char *s) { ts_buf_puts(c->o, s); }
TS_PRINTF(2, 3) static void outf(Ce *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(c->o, fmt, ap);
    va_end(ap);
}
static void line(Ce *c) { ts_buf_indent(c->o, c->ind); }

static int param_of(const IrKernel *k, const IrBuffer *b) {
    for (int i = 0; i < k->params.n; i++)
        if (k->params.v[i].buf == b) return i;
    return -1;
}

static const char *cname(Ce *c, const IrBuffer *b) { return ts_cx_name(c->x->a, b->name, b->id); }

static int64_t elem_bytes(TsDType dt) { return (ts_dtype_bits(dt) + 7) / 8; }

/* `&name[index]` of the first element of r. */
static void emit_addr(Ce *c, const IrRegion *r) {
    const IrBuffer *b = r->buf;
    int p = b->scope == IR_SCOPE_GLOBAL ? param_of(c->x->k, b) : -1;
    int64_t *strides = NULL;
    if (p < 0) {
        strides = TS_NEWN(c->x->a, int64_t, b->ndim > 0 ? b->ndim : 1);
        int64_t acc = 1;
        for (int i = b->ndim - 1; i >= 0; i--) {
            int64_t e = 1;
            ir_is_const_int(b->shape[i], &e);
            strides[i] = acc;
            acc *= e;
        }
    }
    outf(c, "&%s[", cname(c, b));
    ts_cx_index(c->x, b, cname(c, b), p >= 0, strides, r->start, r->ndim, c->s->loc);
    out(c, "]");
}

/* Declares `const char *<lo>, *<hi>`: the byte span of r's buffer. */
static void emit_span(Ce *c, const IrRegion *r, const char *lo, const char *hi) {
    const IrBuffer *b = r->buf;
    int p = b->scope == IR_SCOPE_GLOBAL ? param_of(c->x->k, b) : -1;
    line(c);
    if (p >= 0) {
        outf(c, "const char *%s = (const char *)ts_a->data[%d], *%s = %s;\n", lo, p, hi, lo);
        line(c);
        outf(c, "{ int64_t ts_mx = 0, ts_e = 1; for (int ts_d = 0; ts_d < %d; ts_d++) {"
                " if (ts_a->shape[%d][ts_d] == 0) ts_e = 0; else if (ts_a->strides[%d][ts_d] > 0)"
                " ts_mx += (ts_a->shape[%d][ts_d] - 1) * ts_a->strides[%d][ts_d]; }"
                " %s += ts_e ? (ts_mx + 1) * %lld : 0; }\n",
             b->ndim, p, p, p, p, hi, (long long)elem_bytes(b->dt));
    } else {
        int64_t n = 1;
        for (int i = 0; i < b->ndim; i++) {
            int64_t e = 1;
            ir_is_const_int(b->shape[i], &e);
            n *= e;
        }
        outf(c, "const char *%s = (const char *)%s, *%s = %s + %lld;\n", lo, cname(c, b), hi, lo,
             (long long)(n * elem_bytes(b->dt) * (b->stages > 1 ? b->stages : 1)));
    }
}

/* The element stride of axis d of b: the run-time stride of a tensor
 * parameter, the row-major one of a local array. */
static void emit_stride(Ce *c, const IrBuffer *b, int d) {
    int p = b->scope == IR_SCOPE_GLOBAL ? param_of(c->x->k, b) : -1;
    if (p >= 0) {
        outf(c, "ts_a->strides[%d][%d]", p, d);
        return;
    }
    int64_t acc = 1;
    for (int i = b->ndim - 1; i > d; i--) {
        int64_t e = 1;
        ir_is_const_int(b->shape[i], &e);
        acc *= e;
    }
    outf(c, "(int64_t)%lld", (long long)acc);
}

static void emit_peer(Ce *c) {
    if (c->s->op->args[0]) {
        out(c, "(int64_t)(");
        ts_cx_expr(c->x, c->s->op->args[0]);
        out(c, ")");
    } else {
        out(c, "-1");
    }
}

/* `<T> *<var> = ts_comm_addr(...)` for `count` elements at r on the peer
 * (peer: emit_peer when remote, else -1); returns on failure. */
static void emit_remote_off(Ce *c, const char *var, const IrRegion *r, int remote, const char *count, const char *off);
static void emit_remote(Ce *c, const char *var, const IrRegion *r, int remote, const char *count) {
    emit_remote_off(c, var, r, remote, count, NULL);
}

/* The same for the address `off` elements past r's first element. */
static void emit_remote_off(Ce *c, const char *var, const IrRegion *r, int remote, const char *count, const char *off) {
    const IrBuffer *b = r->buf;
    const char *st = ts_cx_storage(c->x->dl, b->dt);
    TsBuf lo = {0}, hi = {0}; /* no fixed buffer for names made from var */
    ts_buf_printf(&lo, "%s_lo", var);
    ts_buf_printf(&hi, "%s_hi", var);
    emit_span(c, r, ts_buf_str(&lo), ts_buf_str(&hi));
    line(c);
    outf(c, "%s *%s = (%s *)ts_comm_addr(ts_a, \"%s\", \"%s\", ", st, var, st, c->what, b->name);
    if (remote) emit_peer(c);
    else out(c, "-1");
    out(c, ", ");
    emit_addr(c, r);
    if (off) outf(c, " + (%s)", off);
    outf(c, ", (int64_t)(%s) * %lld, %s, %s);\n", count, (long long)elem_bytes(b->dt), ts_buf_str(&lo), ts_buf_str(&hi));
    ts_buf_free(&lo);
    ts_buf_free(&hi);
    line(c);
    outf(c, "if (!%s) return;\n", var);
}

static void open_block(Ce *c) {
    line(c);
    out(c, "{\n");
    c->ind++;
}
static void close_block(Ce *c) {
    c->ind--;
    line(c);
    out(c, "}\n");
}

/* Suffix of the prelude's atomic add for dt (ts_atomic_add_<sfx>). */
static const char *atomic_sfx(Ce *c, TsDType dt) {
    switch (dt) {
    case TS_BOOL: /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(c->x->d, TS_ERR_INTERNAL, c->s->loc, "C codegen: %s: an atomic add on a bool buffer", c->what);
    case TS_FLOAT16: return "f16";
    case TS_BFLOAT16: return "bf16";
    case TS_FLOAT8_E4M3: return "e4m3";
    case TS_FLOAT8_E5M2: return "e5m2";
    default: return ts_cx_storage(c->x->dl, dt);
    }
}

static int is_narrow(TsDType dt) {
    return dt == TS_FLOAT16 || dt == TS_BFLOAT16 || dt == TS_FLOAT8_E4M3 || dt == TS_FLOAT8_E5M2 || dt == TS_BOOL;
}

/* *p = value (converted to p's dtype), with a release store. */
static void emit_store_to(Ce *c, const char *p, TsDType dt, const IrExpr *value) {
    line(c);
    if (is_narrow(dt)) {
        outf(c, "{ %s ts_sv = %s", ts_cx_storage(c->x->dl, dt), ts_cx_store_conv(c->x, dt));
        ts_cx_expr(c->x, value);
        outf(c, ")); __atomic_store(%s, &ts_sv, __ATOMIC_RELEASE); }\n", p);
        return;
    }
    outf(c, "ts_st_%s(%s, %s", ts_cx_storage(c->x->dl, dt), p, ts_cx_store_conv(c->x, dt));
    ts_cx_expr(c->x, value);
    out(c, ")));\n");
}

/* An acquire load of *p, converted to the compute type. */
static void emit_load_from(Ce *c, const char *p, TsDType dt) {
    if (is_narrow(dt)) {
        outf(c, "%s__extension__({ %s ts_lv; __atomic_load(%s, &ts_lv, __ATOMIC_ACQUIRE); ts_lv; }))",
             ts_cx_load_conv(c->x, dt), ts_cx_storage(c->x->dl, dt), p);
        return;
    }
    outf(c, "%sts_ld_%s(%s))", ts_cx_load_conv(c->x, dt), ts_cx_storage(c->x->dl, dt), p);
}

/* A spin until `cond` (C text over ts_v) holds, with the timeout message. */
static void emit_spin(Ce *c, const char *cond_fmt_var, const char *timeout_fmt, const char *timeout_args) {
    line(c);
    out(c, "int64_t ts_t0 = 0, ts_n = 0;\n");
    line(c);
    outf(c, "for (;;) {\n");
    c->ind++;
    line(c);
    outf(c, "%s\n", cond_fmt_var);
    line(c);
    out(c, "int ts_r = ts_comm_spin(ts_a, ts_b, &ts_t0, &ts_n);\n");
    line(c);
    outf(c, "if (ts_r == 2) ts_comm_fail(ts_a, %s, %s);\n", timeout_fmt, timeout_args);
    line(c);
    out(c, "if (ts_r) return;\n");
    c->ind--;
    line(c);
    out(c, "}\n");
}

/* A wait's values: `const T ts_want = <operand>`, `const int64_t ts_pe =
 * <peer>` and `T ts_v = 0` (T: the word's compute type). */
static void emit_wait_vars(Ce *c, const IrTileOp *op) {
    const IrBuffer *b = op->r[0].buf;
    const char *ct = ts_cx_compute_ctype(c->x, b->dt, c->s->loc);
    line(c);
    outf(c, "const %s ts_want = (%s)(", ct, ct);
    ts_cx_expr(c->x, op->args[1]);
    out(c, ");\n");
    line(c);
    out(c, "const int64_t ts_pe = ");
    emit_peer(c);
    out(c, ";\n");
    line(c);
    outf(c, "%s ts_v = 0;\n", ct);
}

/* A wait's spin (after emit_wait_vars), the same for the word read on the
 * heap and through the transport: `read` (C statements that set ts_v),
 * the comparison, and past the timeout an error naming the word: `where`
 * (printf text with %lld for each of `where_args`). */
static void emit_wait_loop(Ce *c, const IrTileOp *op, const char *read, const char *where, const char *where_args) {
    const IrBuffer *b = op->r[0].buf;
    char cat = ts_cx_cat(c->x, b->dt, c->s->loc);
    const char *vf = cat == 'f' || cat == 'd' ? "%g" : "%lld";
    const char *vc = cat == 'f' || cat == 'd' ? "(double)" : "(long long)";
    TsBuf cond = {0}, fmt = {0}, args = {0};
    ts_buf_printf(&cond, "%s; if (ts_v %s ts_want) break;", read, ts_comm_cmp_text(op->cflags[0]));
    ts_buf_printf(&fmt, "\"%s: timed out after %%lld ms waiting for %s to be %s %s; it is %s\"", c->what, where,
                  ts_comm_cmp_text(op->cflags[0]), vf, vf);
    ts_buf_printf(&args, "(long long)ts_a->wait_timeout_ms, %s, %s ts_want, %s ts_v", where_args, vc, vc);
    emit_spin(c, ts_buf_str(&cond), ts_buf_str(&fmt), ts_buf_str(&args));
    ts_buf_free(&cond);
    ts_buf_free(&fmt);
    ts_buf_free(&args);
}

/* ---- through the transport (xport: the peer is on another node) ---- */

/* `int64_t <var> = ts_comm_xoff(...)`: the byte offset on the peer of
 * `count` elements `off` elements past r's first; returns on failure. */
static void emit_xoff(Ce *c, const char *var, const IrRegion *r, const char *count, const char *off) {
    const IrBuffer *b = r->buf;
    TsBuf lo = {0}, hi = {0};
    ts_buf_printf(&lo, "%s_lo", var);
    ts_buf_printf(&hi, "%s_hi", var);
    emit_span(c, r, ts_buf_str(&lo), ts_buf_str(&hi));
    line(c);
    outf(c, "const int64_t %s = ts_comm_xoff(ts_a, \"%s\", \"%s\", ", var, c->what, b->name);
    emit_peer(c);
    out(c, ", ");
    emit_addr(c, r);
    if (off) outf(c, " + (%s)", off);
    outf(c, ", (int64_t)(%s) * %lld, %s, %s);\n", count, (long long)elem_bytes(b->dt), ts_buf_str(&lo), ts_buf_str(&hi));
    ts_buf_free(&lo);
    ts_buf_free(&hi);
    line(c);
    outf(c, "if (%s < 0) return;\n", var);
}

/* A transport request (ts_comm_xport); returns from the block if refused. */
static void emit_xreq(Ce *c, const char *op, const char *off, const char *bytes, const char *local, const char *num) {
    line(c);
    outf(c, "if (!ts_comm_xport(ts_a, \"%s\", %s, ", c->what, op);
    emit_peer(c);
    outf(c, ", %s, %s, %s, %s)) return;\n", off, bytes, local, num ? num : "0, 0, 0.0");
}

/* `<storage> ts_xv = value` converted to dt's storage. */
static void emit_xvalue(Ce *c, TsDType dt, const IrExpr *value) {
    line(c);
    outf(c, "%s ts_xv = %s", ts_cx_storage(c->x->dl, dt), ts_cx_store_conv(c->x, dt));
    ts_cx_expr(c->x, value);
    out(c, "));\n");
}

/* An atomic add of value to the element at byte `off` of the peer (a
 * T.atom_add or an adding signal); `old`: where its value before goes. */
static void emit_xadd(Ce *c, TsDType dt, const IrExpr *value, const char *off, const char *old) {
    int64_t eb = elem_bytes(dt);
    char cat = ts_cx_cat(c->x, dt, c->s->loc);
    int fl = cat == 'f' || cat == 'd';
    if (eb != 4 && eb != 8) /* (lower_comm refused the others) */
        ts_fail_at(c->x->d, TS_ERR_INTERNAL, c->s->loc, "C codegen: %s through the transport on %s", c->what,
                   ts_dtype_name(dt));
    line(c);
    outf(c, "const %s ts_xo = (%s)(", fl ? "double" : "int64_t", fl ? "double" : "int64_t");
    ts_cx_expr(c->x, value);
    out(c, ");\n");
    char num[64], bytes[24];
    snprintf(num, sizeof num, "%d, %s, %s", fl, fl ? "0" : "ts_xo", fl ? "ts_xo" : "0.0");
    snprintf(bytes, sizeof bytes, "%lld", (long long)eb);
    emit_xreq(c, "TS_C_XPORT_ADD", off, bytes, old ? old : "NULL", num);
}

/* put / get (and a put's signal) through the transport. */
static void emit_xput_get(Ce *c, const IrTileOp *op) {
    int get = op->comm == TS_COMM_GET;
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    const IrRegion *far = get ? src : dst, *near = get ? dst : src;
    int64_t eb = elem_bytes(dst->buf->dt); /* (the source's too: op/comm.c checks) */
    open_block(c);
    line(c);
    out(c, "const int64_t ts_cnt = (int64_t)(");
    ts_cx_expr(c->x, op->args[1]);
    out(c, ");\n");
    emit_remote(c, "ts_np", near, 0, "ts_cnt");
    emit_xoff(c, "ts_fo", far, "ts_cnt", NULL);
    int64_t rows = 1;
    int ad = ts_comm_rows_axis(dst, &rows), as = ts_comm_rows_axis(src, &rows);
    char bytes[64], opn[24];
    snprintf(bytes, sizeof bytes, "ts_cnt * %lld", (long long)eb);
    snprintf(opn, sizeof opn, "%s", get ? "TS_C_XPORT_GET" : "TS_C_XPORT_PUT");
    if (ad >= 0) {
        /* rows: the last row checked like the first, then a request per row */
        line(c);
        out(c, "const int64_t ts_frs = ");
        emit_stride(c, far->buf, get ? as : ad);
        out(c, ", ts_nrs = ");
        emit_stride(c, near->buf, get ? ad : as);
        out(c, ";\n");
        char off[64];
        snprintf(off, sizeof off, "%lld * ts_nrs", (long long)(rows - 1));
        emit_remote_off(c, "ts_nl", near, 0, "ts_cnt", off);
        snprintf(off, sizeof off, "%lld * ts_frs", (long long)(rows - 1));
        emit_xoff(c, "ts_fl", far, "ts_cnt", off);
        line(c);
        outf(c, "for (int64_t ts_r = 0; ts_cnt > 0 && ts_r < %lld; ts_r++)\n", (long long)rows);
        c->ind++;
        line(c);
        outf(c, "if (!ts_comm_xport(ts_a, \"%s\", %s, ", c->what, opn);
        emit_peer(c);
        outf(c, ", ts_fo + ts_r * ts_frs * %lld, %s, ts_np + ts_r * ts_nrs, 0, 0, 0.0)) return;\n", (long long)eb, bytes);
        c->ind--;
    } else {
        line(c);
        out(c, "if (ts_cnt > 0)\n");
        c->ind++;
        emit_xreq(c, opn, "ts_fo", bytes, "ts_np", NULL);
        c->ind--;
    }
    if (op->nr == 3) { /* the signal after the data: one FIFO keeps the order */
        const IrRegion *sig = &op->r[2];
        emit_xoff(c, "ts_so", sig, "1", NULL);
        if (op->cflags[0] == TS_SIG_ADD) {
            emit_xadd(c, sig->buf->dt, op->args[2], "ts_so", NULL);
        } else {
            emit_xvalue(c, sig->buf->dt, op->args[2]);
            char sb[24];
            snprintf(sb, sizeof sb, "%lld", (long long)elem_bytes(sig->buf->dt));
            emit_xreq(c, "TS_C_XPORT_PUT", "ts_so", sb, "&ts_xv", NULL);
        }
    }
    close_block(c);
}

/* T.st, T.ld, T.wait, T.atom_add, T.signal_op through the transport. */
static void emit_xelem(Ce *c, const IrTileOp *op) {
    const IrBuffer *b = op->r[0].buf;
    char eb[24];
    snprintf(eb, sizeof eb, "%lld", (long long)elem_bytes(b->dt));
    open_block(c);
    emit_xoff(c, "ts_fo", &op->r[0], "1", NULL);
    switch (op->comm) {
    case TS_COMM_ST:
        emit_xvalue(c, b->dt, op->args[1]);
        emit_xreq(c, "TS_C_XPORT_PUT", "ts_fo", eb, "&ts_xv", NULL);
        break;
    case TS_COMM_SIGNAL:
        if (op->cflags[0] == TS_SIG_SET) {
            emit_xvalue(c, b->dt, op->args[1]);
            emit_xreq(c, "TS_C_XPORT_PUT", "ts_fo", eb, "&ts_xv", NULL);
        } else {
            emit_xadd(c, b->dt, op->args[1], "ts_fo", NULL);
        }
        break;
    case TS_COMM_ATOM_ADD: {
        int old = op->nr > 1;
        if (old) {
            line(c);
            outf(c, "%s ts_xl;\n", ts_cx_storage(c->x->dl, b->dt));
        }
        emit_xadd(c, b->dt, op->args[1], "ts_fo", old ? "&ts_xl" : NULL);
        if (old) {
            line(c);
            out(c, "(");
            emit_addr(c, &op->r[1]);
            outf(c, ")[0] = %s%sts_xl)));\n", ts_cx_store_conv(c->x, op->r[1].buf->dt), ts_cx_load_conv(c->x, b->dt));
        }
        break;
    }
    case TS_COMM_LD:
        line(c);
        outf(c, "%s ts_xl;\n", ts_cx_storage(c->x->dl, b->dt));
        emit_xreq(c, "TS_C_XPORT_GET", "ts_fo", eb, "&ts_xl", NULL);
        line(c);
        out(c, "(");
        emit_addr(c, &op->r[1]);
        outf(c, ")[0] = %s%sts_xl)));\n", ts_cx_store_conv(c->x, op->r[1].buf->dt), ts_cx_load_conv(c->x, b->dt));
        if (op->cflags[1] != TS_SEM_WEAK) {
            line(c);
            out(c, "if (ts_a->yield) ts_a->yield(ts_b->yield_ctx);\n");
        }
        break;
    default: { /* WAIT: a get per poll */
        emit_wait_vars(c, op);
        line(c);
        outf(c, "%s ts_xl;\n", ts_cx_storage(c->x->dl, b->dt));
        TsBuf read = {0}, where = {0};
        ts_buf_printf(&read, "if (!ts_comm_xport(ts_a, \"%s\", TS_C_XPORT_GET, ts_pe, ts_fo, %s, &ts_xl, 0, 0, 0.0)) return; "
                             "ts_v = %sts_xl)",
                      c->what, eb, ts_cx_load_conv(c->x, b->dt));
        ts_buf_printf(&where, "%s (byte %%lld of rank %%lld's heap)", b->name);
        emit_wait_loop(c, op, ts_buf_str(&read), ts_buf_str(&where), "(long long)ts_fo, (long long)ts_pe");
        ts_buf_free(&read);
        ts_buf_free(&where);
        break;
    }
    }
    close_block(c);
}

static void emit_put_get(Ce *c, const IrTileOp *op) {
    if (op->xport) {
        emit_xput_get(c, op);
        return;
    }
    int get = op->comm == TS_COMM_GET;
    const IrRegion *src = &op->r[0], *dst = &op->r[1]; /* elements of one size (op/comm.c checks) */
    open_block(c);
    line(c);
    out(c, "const int64_t ts_cnt = (int64_t)(");
    ts_cx_expr(c->x, op->args[1]);
    out(c, ");\n");
    emit_remote(c, "ts_dp", dst, !get, "ts_cnt");
    emit_remote(c, "ts_sp", src, get, "ts_cnt");
    int64_t rows = 1;
    int ad = ts_comm_rows_axis(dst, &rows), as = ts_comm_rows_axis(src, &rows);
    if (ad >= 0) {
        /* rows (op/comm.h): the last row checked like the first, then a memmove per row */
        line(c);
        out(c, "const int64_t ts_drs = ");
        emit_stride(c, dst->buf, ad);
        out(c, ", ts_srs = ");
        emit_stride(c, src->buf, as);
        out(c, ";\n");
        char off[64];
        snprintf(off, sizeof off, "%lld * ts_drs", (long long)(rows - 1));
        emit_remote_off(c, "ts_dl", dst, !get, "ts_cnt", off);
        snprintf(off, sizeof off, "%lld * ts_srs", (long long)(rows - 1));
        emit_remote_off(c, "ts_sl", src, get, "ts_cnt", off);
        line(c);
        outf(c, "for (int64_t ts_r = 0; ts_cnt > 0 && ts_r < %lld; ts_r++) "
                "memmove(ts_dp + ts_r * ts_drs, ts_sp + ts_r * ts_srs, (size_t)ts_cnt * %lldu);\n",
             (long long)rows, (long long)elem_bytes(dst->buf->dt));
    } else {
        line(c);
        outf(c, "if (ts_cnt > 0) memmove(ts_dp, ts_sp, (size_t)ts_cnt * %lldu);\n", (long long)elem_bytes(dst->buf->dt));
    }
    if (op->nr == 3) {
        const IrRegion *sig = &op->r[2];
        line(c);
        out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
        emit_remote(c, "ts_sg", sig, 1, "1");
        if (op->cflags[0] == TS_SIG_ADD) {
            line(c);
            outf(c, "ts_atomic_add_%s(ts_sg, (%s)(", atomic_sfx(c, sig->buf->dt), ts_cx_storage(c->x->dl, sig->buf->dt));
            ts_cx_expr(c->x, op->args[2]);
            out(c, "));\n");
        } else {
            emit_store_to(c, "ts_sg", sig->buf->dt, op->args[2]);
        }
    }
    close_block(c);
}

static void emit_wait(Ce *c, const IrTileOp *op) {
    const IrBuffer *b = op->r[0].buf;
    open_block(c);
    emit_remote(c, "ts_wp", &op->r[0], 1, "1");
    emit_wait_vars(c, op);
    /* the read of the word */
    TsBuf read = {0}, where = {0}, args = {0};
    TsBuf *saved = c->o;
    c->o = &read;
    out(c, "ts_v = ");
    emit_load_from(c, "ts_wp", b->dt);
    c->o = saved;
    /* the heap offset is the same on every rank: take the local address's */
    ts_buf_printf(&where, "%s[element %%lld] (byte %%lld of rank %%lld's heap)", b->name);
    ts_buf_printf(&args, "(long long)(ts_wp_off / %lld), (long long)ts_comm_heap_off(ts_a, ts_wp_lo + ts_wp_off), "
                         "(long long)(ts_pe < 0 ? ts_a->rank : ts_pe)",
                  (long long)elem_bytes(b->dt));
    line(c);
    out(c, "const int64_t ts_wp_off = (const char *)(");
    emit_addr(c, &op->r[0]);
    out(c, ") - ts_wp_lo;\n");
    line(c);
    out(c, "(void)ts_wp_off;\n");
    emit_wait_loop(c, op, ts_buf_str(&read), ts_buf_str(&where), ts_buf_str(&args));
    ts_buf_free(&read);
    ts_buf_free(&where);
    ts_buf_free(&args);
    close_block(c);
}

static void emit_barrier_blocks(Ce *c, const IrTileOp *op) {
    const IrBuffer *b = op->r[0].buf;
    open_block(c);
    emit_remote(c, "ts_bar", &op->r[0], 0, "ts_a->nranks");
    if (op->cflags[0]) {
        line(c);
        out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
    }
    if (op->xport) { /* this rank's puts to other nodes land before it arrives */
        line(c);
        out(c, "ts_comm_quiet(ts_a);\n");
    }
    /* TileScale's scheme (tl_templates/cuda/sync.h, barrier_blocks): rank r
     * adds a tag to its word t and takes it from rank t's word r; a word
     * is back at or below zero once both sides of the pair arrived. */
    line(c);
    out(c, "for (int ts_t = 0; ts_t < ts_a->nranks; ts_t++) {\n");
    c->ind++;
    line(c);
    out(c, "__atomic_fetch_add(ts_bar + ts_t, 1024, __ATOMIC_ACQ_REL);\n");
    if (op->xport) { /* rank t's word through the transport where t is on another node */
        line(c);
        out(c, "if (ts_a->peer_base && !ts_a->peer_base[ts_t]) {\n");
        c->ind++;
        line(c);
        outf(c, "const int64_t ts_fo = ts_comm_xoff(ts_a, \"%s\", \"%s\", ts_t, ts_bar + ts_a->rank, 4, ts_bar_lo, ts_bar_hi);\n",
             c->what, b->name);
        line(c);
        outf(c, "if (ts_fo < 0 || !ts_comm_xport(ts_a, \"%s\", TS_C_XPORT_ADD, ts_t, ts_fo, 4, NULL, 0, -1024, 0.0)) return;\n",
             c->what);
        line(c);
        out(c, "continue;\n");
        c->ind--;
        line(c);
        out(c, "}\n");
    }
    line(c);
    outf(c, "int32_t *ts_peer = (int32_t *)ts_comm_addr(ts_a, \"%s\", \"%s\", ts_t, ts_bar + ts_a->rank, 4, ts_bar_lo, ts_bar_hi);\n",
         c->what, b->name);
    line(c);
    out(c, "if (!ts_peer) return;\n");
    line(c);
    out(c, "__atomic_fetch_sub(ts_peer, 1024, __ATOMIC_ACQ_REL);\n");
    c->ind--;
    line(c);
    out(c, "}\n");
    line(c);
    out(c, "for (int ts_t = 0; ts_t < ts_a->nranks; ts_t++) {\n");
    c->ind++;
    line(c);
    out(c, "int32_t ts_v = 0;\n");
    TsBuf fmt = {0};
    ts_buf_printf(&fmt, "\"%s: timed out after %%lld ms waiting for rank %%d (word %%d of barrier '%s' is %%d)\"",
                  c->what, b->name);
    emit_spin(c, "ts_v = __atomic_load_n(ts_bar + ts_t, __ATOMIC_ACQUIRE); if (ts_v <= 0) break;",
              ts_buf_str(&fmt), "(long long)ts_a->wait_timeout_ms, ts_t, ts_t, (int)ts_v");
    ts_buf_free(&fmt);
    c->ind--;
    line(c);
    out(c, "}\n");
    line(c);
    out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
    close_block(c);
}

/* T.barrier_all on a rank of another node than rank 0's, whose counter
 * it reaches through the transport (an add, then polling gets). */
static void emit_xbarrier_all(Ce *c) {
    line(c);
    out(c, "if (!ts_a->sync_words) {\n");
    c->ind++;
    line(c);
    out(c, "int64_t ts_g[3], ts_old = 0, ts_v = 0;\n");
    line(c);
    out(c, "tsk_grid(ts_a, ts_g);\n");
    line(c);
    out(c, "const int64_t ts_tot = ts_g[0] * ts_g[1] * ts_g[2] * (int64_t)ts_a->nranks;\n");
    line(c);
    out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
    line(c);
    out(c, "if (!ts_comm_xport(ts_a, \"T.barrier_all\", TS_C_XPORT_ADD, 0, ts_a->sync_off, 8, &ts_old, 0, 1, 0.0)) return;\n");
    line(c);
    out(c, "const int64_t ts_goal = (ts_old / ts_tot + 1) * ts_tot;\n");
    emit_spin(c, "if (!ts_comm_xport(ts_a, \"T.barrier_all\", TS_C_XPORT_GET, 0, ts_a->sync_off, 8, &ts_v, 0, 0, 0.0)) return; "
                 "if (ts_v >= ts_goal) break;",
              "\"T.barrier_all: timed out after %lld ms: %lld of the %lld blocks of all ranks arrived "
              "(a rank or block that never calls it?)\"",
              "(long long)ts_a->wait_timeout_ms, (long long)(ts_tot - (ts_goal - ts_v)), (long long)ts_tot");
    line(c);
    out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
    c->ind--;
    line(c);
    out(c, "} else\n");
}

static void emit_barrier_all(Ce *c, const IrTileOp *op) {
    open_block(c);
    if (op->xport) {
        line(c);
        out(c, "ts_comm_quiet(ts_a);\n");
        emit_xbarrier_all(c);
    }
    open_block(c);
    line(c);
    out(c, "int64_t ts_g[3];\n");
    line(c);
    out(c, "tsk_grid(ts_a, ts_g);\n");
    line(c);
    out(c, "const int64_t ts_tot = ts_g[0] * ts_g[1] * ts_g[2] * (int64_t)ts_a->nranks;\n");
    line(c);
    out(c, "int64_t *ts_w = ts_a->sync_words;\n");
    line(c);
    out(c, "if (!ts_w) { ts_comm_fail(ts_a, \"T.barrier_all: no world barrier word\"); return; }\n");
    line(c);
    out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
    line(c);
    out(c, "const int64_t ts_goal = (__atomic_fetch_add(ts_w, 1, __ATOMIC_ACQ_REL) / ts_tot + 1) * ts_tot;\n");
    line(c);
    out(c, "int64_t ts_v = 0;\n");
    emit_spin(c, "ts_v = __atomic_load_n(ts_w, __ATOMIC_ACQUIRE); if (ts_v >= ts_goal) break;",
              "\"T.barrier_all: timed out after %lld ms: %lld of the %lld blocks of all ranks arrived "
              "(a rank or block that never calls it?)\"",
              "(long long)ts_a->wait_timeout_ms, (long long)(ts_tot - (ts_goal - ts_v)), (long long)ts_tot");
    close_block(c);
    close_block(c);
}

void ts_c_comm_emit(TsCxGen *x, const IrStmt *s, int ind) {
    const IrTileOp *op = s->op;
    Ce c0 = {x, x->o, ind, s, NULL}, *c = &c0;
    static const char *const names[TS_COMM_COUNT] = {
        [TS_COMM_PUT] = "T.put", [TS_COMM_GET] = "T.get", [TS_COMM_COPY] = "T.copy",
        [TS_COMM_ST] = "T.st", [TS_COMM_LD] = "T.ld", [TS_COMM_WAIT] = "T.wait",
        [TS_COMM_ATOM_ADD] = "T.atom_add", [TS_COMM_SIGNAL] = "T.signal_op", [TS_COMM_FENCE] = "T.fence",
        [TS_COMM_BARRIER_BLOCKS] = "T.barrier_blocks", [TS_COMM_BARRIER_ALL] = "T.barrier_all",
    };
    c->what = op->comm >= 0 && op->comm < TS_COMM_COUNT ? names[op->comm] : "comm";
    if (op->xport && (op->comm == TS_COMM_ST || op->comm == TS_COMM_LD || op->comm == TS_COMM_WAIT ||
                      op->comm == TS_COMM_ATOM_ADD || op->comm == TS_COMM_SIGNAL)) {
        emit_xelem(c, op);
        return;
    }
    switch (op->comm) {
    case TS_COMM_PUT:
    case TS_COMM_GET: emit_put_get(c, op); return;
    case TS_COMM_ST: {
        open_block(c);
        emit_remote(c, "ts_p", &op->r[0], 1, "1");
        emit_store_to(c, "ts_p", op->r[0].buf->dt, op->args[1]);
        close_block(c);
        return;
    }
    case TS_COMM_LD: {
        const IrBuffer *d = op->r[1].buf;
        open_block(c);
        emit_remote(c, "ts_p", &op->r[0], 1, "1");
        line(c);
        out(c, "(");
        emit_addr(c, &op->r[1]);
        out(c, ")[0] = ");
        out(c, ts_cx_store_conv(x, d->dt));
        emit_load_from(c, "ts_p", op->r[0].buf->dt);
        out(c, "));\n");
        if (op->cflags[1] != TS_SEM_WEAK) { /* polling loads let the other blocks run */
            line(c);
            out(c, "if (ts_a->yield) ts_a->yield(ts_b->yield_ctx);\n");
        }
        close_block(c);
        return;
    }
    case TS_COMM_WAIT: emit_wait(c, op); return;
    case TS_COMM_ATOM_ADD:
    case TS_COMM_SIGNAL: {
        const IrBuffer *b = op->r[0].buf;
        open_block(c);
        emit_remote(c, "ts_p", &op->r[0], 1, "1");
        if (op->comm == TS_COMM_SIGNAL && op->cflags[0] == TS_SIG_SET) {
            emit_store_to(c, "ts_p", b->dt, op->args[1]);
        } else {
            const char *sfx = atomic_sfx(c, b->dt);
            int old = op->comm == TS_COMM_ATOM_ADD && op->nr > 1; /* T.atom_add's value before the add */
            line(c);
            if (old) {
                out(c, "(");
                emit_addr(c, &op->r[1]);
                outf(c, ")[0] = %s", ts_cx_store_conv(x, op->r[1].buf->dt));
            }
            outf(c, "ts_atomic_add_%s(ts_p, (%s)(", sfx, is_narrow(b->dt) ? "float" : ts_cx_storage(x->dl, b->dt));
            ts_cx_expr(x, op->args[1]);
            out(c, old ? "))));\n" : "));\n");
        }
        close_block(c);
        return;
    }
    case TS_COMM_FENCE:
        line(c);
        out(c, "__atomic_thread_fence(__ATOMIC_SEQ_CST);\n");
        if (op->xport) { /* the transport's puts complete too (NVSHMEM's quiet; a fence orders them, one FIFO) */
            line(c);
            out(c, "ts_comm_quiet(ts_a);\n");
        }
        return;
    case TS_COMM_BARRIER_BLOCKS: emit_barrier_blocks(c, op); return;
    case TS_COMM_BARRIER_ALL: emit_barrier_all(c, op); return;
    default:
        ts_fail_at(x->d, TS_ERR_INTERNAL, s->loc, "C codegen: communication op '%s' was not lowered",
                   ts_comm_name(op->comm));
    }
}
