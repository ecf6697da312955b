/*
 * codegen_c.c — lowered tile IR -> one self-contained C11 file.
 *
 * The execution model is the simplest one that is still faithful: one
 * block of the grid is one call of `tsk_block`, run start to finish by one
 * CPU thread (or, for may_block kernels, one coroutine).  Inside a block
 * there is exactly one thread of control, so every IR_FOR — serial,
 * parallel, pipelined, unrolled, vectorized — is a plain C `for`, and
 * T.Parallel's "iterations are independent" promise simply lets the C
 * compiler vectorize.  Code that differs between the block's threads
 * (T.get_thread_binding) comes in thread ranges (IR_FOR_THREAD, made by
 * the thread_loops_c pass): a loop over the threads, `ts_tid` the thread,
 * the thread-index variables spelled from it; outside one they are an
 * internal error.
 *
 * Memory.  Global buffers are the kernel's tensor parameters: a base
 * pointer plus one run-time element stride per dimension taken from the
 * argument struct, so any strided view works (index = sum idx_i*stride_i,
 * in int64_t).  Shared, fragment, local and var buffers are per-block
 * arrays with constant shapes; they are never put on the C stack (tiles
 * can be large, and coroutine stacks are small) but carved out of a
 * per-block scratch area whose size this file computes and the module
 * reports through tsk_info; the scheduler owns that memory.  Buffers do
 * not share scratch space (no liveness analysis yet).
 *
 * Types.  Every value is computed in a "compute type": signed and small
 * unsigned integers in int64_t (so index arithmetic never overflows 32
 * bits; narrowing happens only at casts and stores), uint32/uint64 in
 * their own types, bool as bool, float32 and all narrower floats in
 * float, float64 in double.  float16/bfloat16/fp8 are stored as raw bits
 * (uint16_t / uint8_t) and converted by helpers in the generated prelude:
 * loads widen exactly, stores and casts round to nearest even (fp8
 * saturates to the largest finite value, as CUDA's satfinite conversions
 * do).  Integer `/` truncates, `//` and `%` follow Python; division by zero
 * yields 0 instead of trapping (GPUs do not trap either).  T.round rounds
 * half to even, like numpy and torch.
 *
 * Blocking kernels (IrKernel.may_block), as pass poll_marks marked them.
 * Each iteration of a while loop marked poll (one that reads global
 * memory: only those can be waiting for another block; a yield costs a
 * context switch) first calls the yield callback so the worker can run
 * other blocks; loads marked acquire (global loads inside while loops) are
 * __atomic acquire loads (they can never be hoisted out of the spin) and
 * stores marked release (every global store of the kernel) are release
 * stores, so a flag written after data publishes the data.
 *
 * Kernels whose threads wait for each other (IrKernel.thread_coro, chosen
 * by pass thread_loops_c).  tsk_block hands the block to the scheduler's
 * TsCArgs.threads, which runs `tsk_thread` for every thread as a coroutine
 * (threads_c.c).  tsk_thread is the whole body as one thread sees it
 * (`ts_me` the thread): a thread range is the thread's own code, guarded
 * by its range; barriers call TsCArgs.tbar; warp primitives TsCArgs.warp
 * (the ts_warp_* macros below); while loops yield every iteration (the
 * awaited thread may be in the same block); T.thread_return returns.  The
 * block-level statements (tile-level stores, copies, communication) are
 * the block's, not each thread's: pass coro_sync_c puts them in solo roles
 * (`if (ts_me == lo)`) between two barriers of the block or the T.ws role,
 * which keeps the order program order gives them; mbarrier buffers are
 * zeroed before the threads start.
 *
 * The generated file depends on libc and libm only: printing and yielding
 * go through callbacks in the argument struct (c_target.h describes the
 * ABI; the struct text itself is pasted from c_target.h so it cannot
 * drift).  Every name the generator makes up is `<ir name>_<id>` for IR
 * variables and buffers, and `ts_*` for its own helpers, so user names can
 * never collide with C keywords or helpers.
 */
#include "target/c/c_target.h"
#include "target/c/comm_c.h"
#include "target/c/mbar_c.h"
#include "target/cexpr.h"
#include "ir/walk.h"
#include "op/comm.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* thread_coro kernels: the warp primitives cexpr.c prints (ts_warp_<op>(value
 * in its compute type, operands)) as calls of TsCArgs.warp, the value passed
 * as bits with its kind (threads_c.c computes every lane's result). */
static const char ts_c_warp_macros[] =
    "#define TS_WK(v) _Generic((v), float: TS_C_WK_F32, double: TS_C_WK_F64, uint32_t: TS_C_WK_U32, \\\n"
    "                      uint64_t: TS_C_WK_U64, default: TS_C_WK_I64)\n"
    "TS_INL int64_t ts_wb_f(float v) { uint32_t u; memcpy(&u, &v, 4); return (int64_t)u; }\n"
    "TS_INL int64_t ts_wb_d(double v) { int64_t u; memcpy(&u, &v, 8); return u; }\n"
    "TS_INL int64_t ts_wb_i(int64_t v) { return v; }\n"
    "TS_INL float ts_wv_f(int64_t b) { uint32_t u = (uint32_t)b; float v; memcpy(&v, &u, 4); return v; }\n"
    "TS_INL double ts_wv_d(int64_t b) { double v; memcpy(&v, &b, 8); return v; }\n"
    "TS_INL int64_t ts_wv_i(int64_t b) { return b; }\n"
    "#define TS_WX(op, v, l, w, k) _Generic((v), float: ts_wv_f, double: ts_wv_d, default: ts_wv_i)( \\\n"
    "    ts_a->warp(ts_b->yield_ctx, (op), TS_WK(v), _Generic((v), float: ts_wb_f, double: ts_wb_d, \\\n"
    "               default: ts_wb_i)(v), (int32_t)(l), (int32_t)(w), (uint32_t)(k)))\n"
    "#define ts_warp_shfl(v, l, w, k) TS_WX(TS_C_WARP_SHFL, v, l, w, k)\n"
    "#define ts_warp_shfl_up(v, l, w, k) TS_WX(TS_C_WARP_SHFL_UP, v, l, w, k)\n"
    "#define ts_warp_shfl_down(v, l, w, k) TS_WX(TS_C_WARP_SHFL_DOWN, v, l, w, k)\n"
    "#define ts_warp_shfl_xor(v, l, w, k) TS_WX(TS_C_WARP_SHFL_XOR, v, l, w, k)\n"
    "#define ts_warp_sum(v) TS_WX(TS_C_WARP_SUM, v, 0, 32, 0xffffffffu)\n"
    "#define ts_warp_max(v) TS_WX(TS_C_WARP_MAX, v, 0, 32, 0xffffffffu)\n"
    "#define ts_warp_min(v) TS_WX(TS_C_WARP_MIN, v, 0, 32, 0xffffffffu)\n"
    "#define ts_warp_bitand(v) TS_WX(TS_C_WARP_BAND, v, 0, 32, 0xffffffffu)\n"
    "#define ts_warp_bitor(v) TS_WX(TS_C_WARP_BOR, v, 0, 32, 0xffffffffu)\n"
    "#define ts_warp_ballot(k, p) ((uint32_t)ts_a->warp(ts_b->yield_ctx, TS_C_WARP_BALLOT, TS_C_WK_I64, (p), 0, 32, (k)))\n"
    "#define ts_warp_sync(k) ts_a->warp(ts_b->yield_ctx, TS_C_WARP_SYNC, TS_C_WK_I64, 0, 0, 32, (k))\n\n";

/* ---- generator state ----------------------------------------------------- */

/* Where a buffer lives in generated code. */
typedef struct CgBuf {
    const IrBuffer *buf; /* the IR buffer */
    const char *name;    /* C name of its base pointer */
    int param;           /* global: parameter index; else -1 */
    int64_t offset;      /* non-global: byte offset in the block's scratch */
    int64_t *strides;    /* non-global: constant row-major element strides */
} CgBuf;

typedef struct Cg {
    TsDiag *d;
    const IrKernel *k;
    TsArena *a;                      /* the kernel's arena, for names and tables */
    TsBuf *o;                        /* output */
    int ind;                         /* indentation level */
    int in_grid;                     /* emitting tsk_grid: no block-level names */
    int in_thread;                   /* inside a thread range: ts_tid is the thread (thread_loops_c) */
    int coro;                        /* IrKernel.thread_coro: emitting tsk_thread, ts_me the thread */
    int64_t arrivals;                /* threads an mbarrier arrive in uniform code stands for: the
                                        block's, or the T.ws role's inside one (mbar_c.c) */
    TS_VEC(CgBuf) bufs;              /* every buffer the kernel touches */
    int64_t scratch;                 /* bytes of scratch used so far */
    TsCxScopes scopes;               /* LET vars declared in the open C scopes */
    TsCxGen x;                       /* the shared expression emitter's state */
    int check;                       /* bounds-checked accesses (TsCaps.check_bounds) */
    TsLoc stmt_loc;                  /* the innermost statement with a source location */
    TS_VEC(const char *) site_msg;   /* per checked access site: "file:l:c: error: kernel ...: ..." */
    TS_VEC(const char *) site_src;   /* ... and its source line with a caret ("" if none) */
} Cg;

static void emit_expr(Cg *g, const IrExpr *e);
static void emit_stmt(Cg *g, const IrStmt *s);
static void emit_stmt_at(Cg *g, const IrStmt *s);

static bool is_loop(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_FOR || s->kind == IR_S_WHILE;
}

/* Does s contain a loop (for or while)? */
static int stmt_has_loop(const IrStmt *s) { return s && ir_stmt_any(s, is_loop, NULL); }

static void out(Cg *g, const char *s) { ts_buf_puts(g->o, s); }
TS_PRINTF(2, 3) static void outf(Cg *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(g->o, fmt, ap);
    va_end(ap);
}
static void line_start(Cg *g) { ts_buf_indent(g->o, g->ind); }

static CgBuf *find_buf(Cg *g, const IrBuffer *b, TsLoc loc) {
    for (int i = 0; i < g->bufs.n; i++)
        if (g->bufs.v[i].buf == b) return &g->bufs.v[i];
    ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "C codegen: buffer '%s' is not known to the kernel",
               b ? b->name : "?");
}


/* ---- expressions: the shared emitter (target/cexpr.c) with the C spellings ---- */

/* Variables only the C target knows how to refuse (1: handled). */
static int c_var(TsCxGen *x, const IrExpr *e) {
    Cg *g = x->user;
    const IrVar *v = e->var;
    if (v->kind == IR_VAR_BLOCK_IDX && g->in_grid) /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, e->loc, "C codegen: the grid extent uses the block index '%s'", v->name);
    if (v->kind == IR_VAR_THREAD_IDX) {
        if (!g->in_thread) /* thread_loops_c puts every use in a thread range */
            ts_fail_at(g->d, TS_ERR_INTERNAL, e->loc,
                       "C codegen: thread index '%s' used outside per-thread code", v->name);
        const int *t = g->k->threads;
        if (v->axis == 0) outf(g, "((int32_t)(ts_tid %% %d))", t[0]);
        else if (v->axis == 1) outf(g, "((int32_t)((ts_tid / %d) %% %d))", t[0], t[1]);
        else if (v->axis == 2) outf(g, "((int32_t)(ts_tid / %d))", t[0] * t[1]);
        else out(g, "((int32_t)ts_tid)"); /* the flat index (ir_kernel_tid) */
        return 1;
    }
    return 0;
}

static void c_load(TsCxGen *x, const IrExpr *e);

static const char *const c_intrin[IR_INTRINSIC_COUNT][2] = {
    [IR_EXP] = {"expf", "exp"}, [IR_EXP2] = {"exp2f", "exp2"}, [IR_LOG] = {"logf", "log"},
    [IR_LOG2] = {"log2f", "log2"}, [IR_SQRT] = {"sqrtf", "sqrt"}, [IR_RSQRT] = {NULL, NULL},
    [IR_ABS] = {"fabsf", "fabs"}, [IR_SIN] = {"sinf", "sin"}, [IR_COS] = {"cosf", "cos"},
    [IR_TANH] = {"tanhf", "tanh"}, [IR_FLOOR] = {"floorf", "floor"}, [IR_CEIL] = {"ceilf", "ceil"},
    [IR_ROUND] = {"nearbyintf", "nearbyint"}, [IR_SIGMOID] = {"ts_sigmoid_f", "ts_sigmoid_d"},
    [IR_LOG1P] = {"log1pf", "log1p"}, [IR_EXP10] = {"ts_exp10_f", "ts_exp10_d"},
    [IR_ISINF] = {"isinf", "isinf"}, [IR_ISNAN] = {"isnan", "isnan"}, [IR_FMOD] = {"fmodf", "fmod"},
    [IR_POWF] = {"powf", "pow"}, [IR_ATAN2] = {"atan2f", "atan2"}, [IR_ERF] = {"erff", "erf"},
    [IR_TRUNC] = {"truncf", "trunc"},
};

/* Bits of a float read through a union (C11 6.5.2.3: defined, unlike a
 * pointer cast) */
static const char *const c_bitcast[4][2] = {
    {"((union { float f; uint32_t u; }){.f = (", ")}).u"},
    {"((union { uint32_t u; float f; }){.u = (", ")}).f"},
    {"((union { double f; uint64_t u; }){.f = (", ")}).u"},
    {"((union { uint64_t u; double f; }){.u = (", ")}).f"},
};

static const TsCxDialect c_dialect = {
    .who = "C codegen",
    .i64 = "int64_t", .u32 = "uint32_t", .u64 = "uint64_t",
    .storage = NULL,
    .nan_f = "NAN", .nan_d = "(double)NAN", .inf_f = "INFINITY", .inf_d = "(double)INFINITY",
    .rank = "((int64_t)ts_a->rank)", .nranks = "((int64_t)ts_a->nranks)", .rpn = "((int64_t)ts_a->ranks_per_node)",
    .grid_ws = "((int64_t)(uintptr_t)ts_a->grid_ws)",
    .intrin = c_intrin,
    .bitcast = c_bitcast,
    .cast_helper_args = 0,
    .var = c_var,
    .load = c_load,
};

static void emit_expr(Cg *g, const IrExpr *e) { ts_cx_expr(&g->x, e); }

/* A checked access site: its message head and source excerpt, kept for the
 * tables emitted ahead of the functions; returns its number. */
static int new_site(Cg *g, const CgBuf *cb, TsLoc loc, const char *what) {
    TsBuf m = {0}, src = {0};
    if (loc.src) ts_buf_printf(&m, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    else ts_buf_puts(&m, "tilescale: ");
    ts_buf_printf(&m, "error: kernel '%s': out-of-bounds %s %s buffer '%s'", g->k->name ? g->k->name : "?", what,
                  ir_scope_name(cb->buf->scope), cb->buf->name && *cb->buf->name ? cb->buf->name : "?");
    ts_diag_source(&src, loc);
    ts_vec_push(g->a, g->site_msg, ts_strdup(g->a, ts_buf_str(&m)));
    ts_vec_push(g->a, g->site_src, ts_strdup(g->a, ts_buf_str(&src)));
    ts_buf_free(&m);
    ts_buf_free(&src);
    return g->site_msg.n - 1;
}

/* Element offset of buf[idx] (block-private buffers have constant strides).
 * Checked kernels wrap each index in ts_ck(..., extent, site, dim), which
 * reports and ends the block when the index is outside [0, extent);
 * constant indices of block-private buffers are checked here instead. */
static void emit_index(Cg *g, const CgBuf *cb, IrExpr *const *idx, int nidx, TsLoc loc, const char *what) {
    const IrBuffer *b = cb->buf;
    int global = cb->param >= 0;
    if (!g->check || b->ndim == 0 || nidx != b->ndim) {
        ts_cx_index(&g->x, b, cb->name, global, cb->strides, idx, nidx, loc);
        return;
    }
    int64_t konst = 0, c, ext = 0;
    int terms = 0, site = -1;
    for (int i = 0; i < b->ndim; i++) {
        if (!global && !ir_is_const_int(b->shape[i], &ext))
            ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "C codegen: buffer '%s' has a non-constant extent", b->name);
        if (!global && ir_is_const_int(idx[i], &c) && c >= 0 && c < ext) {
            konst += c * cb->strides[i];
            continue;
        }
        if (site < 0) site = new_site(g, cb, loc, what);
        if (terms++) out(g, " + ");
        out(g, "ts_ck(ts_a, ts_b, ts_jb, (int64_t)(");
        emit_expr(g, idx[i]);
        if (global) outf(g, "), ts_a->shape[%d][%d], %d, %d)", cb->param, i, site, i);
        else outf(g, "), %lldLL, %d, %d)", (long long)ext, site, i);
        if (global) outf(g, " * %s_s%d", cb->name, i);
        else if (cb->strides[i] != 1) outf(g, " * %lldLL", (long long)cb->strides[i]);
    }
    if (!terms) outf(g, "%lld", (long long)konst);
    else if (konst) outf(g, " + %lldLL", (long long)konst);
}

/* Loads: refused in the grid function; __atomic acquire loads of global
 * memory inside the while loops of blocking kernels. */
static void c_load(TsCxGen *x, const IrExpr *e) {
    Cg *g = x->user;
    if (g->in_grid) /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, e->loc, "C codegen: the grid extent reads a buffer");
    const CgBuf *cb = find_buf(g, e->load.buf, e->loc);
    TsDType dt = cb->buf->dt;
    int atomic = e->load.acquire && (cb->param >= 0 || cb->buf->addr); /* a polling load (pass poll_marks) */
    const char *open = ts_cx_load_conv(x, dt), *close = ")";
    if (e->load.bits) ts_cx_bits_load(x, dt, &open, &close); /* the stored bits, no conversion */
    out(g, open);
    if (atomic) outf(g, "ts_ld_%s(&", ts_cx_storage(&c_dialect, dt));
    outf(g, "%s[", cb->name);
    emit_index(g, cb, e->load.idx, e->load.nidx, e->loc.src ? e->loc : g->stmt_loc, "load from");
    out(g, atomic ? "])" : "]");
    out(g, close);
}

/* ---- statements --------------------------------------------------------------- */

static void scope_open(Cg *g) { ts_cx_scope_open(g->a, &g->scopes); }
static void scope_close(Cg *g) { ts_cx_scope_close(&g->scopes); }

/* The statements of s (a SEQ's children, or s itself) at the current level. */
static void emit_body(Cg *g, const IrStmt *s) {
    if (!s) return;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->seq.n; i++) emit_stmt(g, s->seq.v[i]);
    } else {
        emit_stmt(g, s);
    }
}

/* `{` body `}` as a new C scope; the caller has written the header. */
static void emit_block(Cg *g, const IrStmt *s) {
    out(g, "{\n");
    g->ind++;
    scope_open(g);
    emit_body(g, s);
    scope_close(g);
    g->ind--;
    line_start(g);
    out(g, "}");
}

static void emit_print(Cg *g, const IrStmt *s) {
    const char *msg = s->print.msg ? s->print.msg : "";
    if (s->print.value) {
        const IrExpr *v = s->print.value;
        char c = ts_cx_cat(&g->x, v->dt, v->loc);
        line_start(g);
        out(g, "ts_print(ts_a, ts_b, ");
        ts_cx_string(&g->x, msg);
        if (c == 'f' || c == 'd') out(g, ", \"%g\", (double)(");
        else if (c == 'u' || c == 'U') out(g, ", \"%llu\", (unsigned long long)(");
        else out(g, ", \"%lld\", (long long)(");
        emit_expr(g, v);
        out(g, "));\n");
        return;
    }
    if (!s->print.buf) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: T.print of nothing");
    const CgBuf *cb = find_buf(g, s->print.buf, s->loc);
    const IrBuffer *b = cb->buf;
    /* for (i0...) for (i1...) ts_print(..., "name[%lld, %lld] = %g", i0, i1, value) */
    line_start(g);
    out(g, "{\n");
    g->ind++;
    for (int i = 0; i < b->ndim; i++) {
        line_start(g);
        outf(g, "for (int64_t ts_p%d = 0; ts_p%d < ", i, i);
        if (cb->param >= 0) outf(g, "ts_a->shape[%d][%d]", cb->param, i);
        else emit_expr(g, b->shape[i]);
        outf(g, "; ts_p%d++)\n", i);
        g->ind++;
    }
    char c = ts_cx_cat(&g->x, b->dt, b->loc);
    line_start(g);
    out(g, "ts_print(ts_a, ts_b, ");
    ts_cx_string(&g->x, msg);
    out(g, ", \"");
    for (const char *p = b->name; *p; p++)
        if (*p != '%' && *p != '"' && *p != '\\' && *p != '?' && *p >= 32 && *p < 127)
            ts_buf_putn(g->o, p, 1);
    out(g, "[");
    for (int i = 0; i < b->ndim; i++) out(g, i ? ", %lld" : "%lld");
    outf(g, "] = %s\"", c == 'f' || c == 'd' ? "%g" : c == 'u' || c == 'U' ? "%llu" : "%lld");
    for (int i = 0; i < b->ndim; i++) outf(g, ", (long long)ts_p%d", i);
    out(g, c == 'f' || c == 'd' ? ", (double)" : c == 'u' || c == 'U' ? ", (unsigned long long)" : ", (long long)");
    outf(g, "%s%s[", ts_cx_load_conv(&g->x, b->dt), cb->name);
    for (int i = 0; i < b->ndim; i++) {
        if (i) out(g, " + ");
        if (cb->param >= 0) outf(g, "ts_p%d * %s_s%d", i, cb->name, i);
        else outf(g, "ts_p%d * %lldLL", i, (long long)cb->strides[i]);
    }
    if (b->ndim == 0) out(g, "0");
    out(g, "]));\n");
    g->ind -= b->ndim + 1;
    line_start(g);
    out(g, "}\n");
}

/* buf[idx] += value: a CAS loop (or fetch_add) on global memory, where
 * other blocks may add concurrently; a plain update on block-private
 * buffers. */
static void emit_atomic_add(Cg *g, const IrStmt *s) {
    const CgBuf *cb = find_buf(g, s->store.buf, s->loc);
    TsDType dt = cb->buf->dt;
    line_start(g);
    if (cb->param < 0 && !cb->buf->addr) {
        outf(g, "%s[", cb->name);
        emit_index(g, cb, s->store.idx, s->store.nidx, g->stmt_loc, "atomic add to");
        outf(g, "] = %s%s%s[", ts_cx_store_conv(&g->x, dt), ts_cx_load_conv(&g->x, dt), cb->name);
        emit_index(g, cb, s->store.idx, s->store.nidx, g->stmt_loc, "atomic add to");
        out(g, "]) + (");
        emit_expr(g, s->store.value);
        out(g, ")));\n");
        return;
    }
    const char *fn, *arg;
    switch (dt) {
    case TS_BOOL: /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: an atomic add on the bool buffer '%s'", cb->buf->name);
    case TS_FLOAT16: fn = "f16"; arg = "float"; break;
    case TS_BFLOAT16: fn = "bf16"; arg = "float"; break;
    case TS_FLOAT8_E4M3: fn = "e4m3"; arg = "float"; break;
    case TS_FLOAT8_E5M2: fn = "e5m2"; arg = "float"; break;
    default: fn = arg = ts_cx_storage(&c_dialect, dt); break;
    }
    outf(g, "ts_atomic_add_%s(&%s[", fn, cb->name);
    emit_index(g, cb, s->store.idx, s->store.nidx, g->stmt_loc, "atomic add to");
    outf(g, "], (%s)(", arg);
    emit_expr(g, s->store.value);
    out(g, "));\n");
}


/* The wait timeout inside a polling loop `for (int64_t ts_t0 = 0, ts_n = 0;
 * ...)` (an mbarrier wait of a coroutine kernel, a grid barrier): every
 * 256th poll reads the clock (TsCArgs.now_ms); past the launch's
 * wait_timeout_ms, on_timeout prints what ends the wait (one emitter for
 * every such loop of the C target). */
static void emit_wait_timeout(Cg *g, void (*on_timeout)(Cg *g, const void *ctx), const void *ctx) {
    line_start(g);
    out(g, "    if ((++ts_n & 255) != 1 || !ts_a->now_ms || ts_a->wait_timeout_ms <= 0) continue;\n");
    line_start(g);
    out(g, "    const int64_t ts_now = ts_a->now_ms();\n");
    line_start(g);
    out(g, "    if (!ts_t0) ts_t0 = ts_now;\n");
    line_start(g);
    out(g, "    else if (ts_now - ts_t0 > ts_a->wait_timeout_ms) {\n");
    g->ind += 2;
    on_timeout(g, ctx);
    g->ind -= 2;
    line_start(g);
    out(g, "    }\n");
}

/* An mbarrier wait's timeout: the message, then out of the loop. */
static void mbar_timed_out(Cg *g, const void *ctx) {
    (void)ctx;
    line_start(g);
    out(g, "ts_mw = \"timed out: its phase never completed\";\n");
    line_start(g);
    out(g, "break;\n");
}

/* A grid barrier's timeout (ctx: its source line): the launch fails with
 * the arrivals counted. */
static void grid_timed_out(Cg *g, const void *ctx) {
    line_start(g);
    out(g, "char ts_m[256];\n");
    line_start(g);
    outf(g, "snprintf(ts_m, sizeof ts_m, \"kernel '%%s': T.sync_grid (line %d): timed out after %%lld ms: %%lld of "
            "the %%lld blocks arrived (a block that never reaches it: a branch some blocks skip?)\", ",
         *(const int *)ctx);
    ts_cx_string(&g->x, g->k->name ? g->k->name : "");
    out(g, ", (long long)ts_a->wait_timeout_ms, (long long)(ts_tot - (ts_goal - ts_v)), (long long)ts_tot);\n");
    line_start(g);
    out(g, "if (ts_a->fail) ts_a->fail(ts_a->fail_ctx, ts_m);\n");
    line_start(g);
    out(g, "return;\n");
}
/* An mbarrier operation through ts_mbar (mbar_c.c); an error reports the
 * buffer, index, reason and source line and ends the block. */
static void emit_mbar(Cg *g, const IrStmt *s) {
    const CgBuf *cb = find_buf(g, s->mbar.buf, s->loc);
    TsBuf m = {0}, src = {0};
    TsLoc loc = s->loc.src ? s->loc : g->stmt_loc;
    if (loc.src) ts_buf_printf(&m, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    else ts_buf_puts(&m, "tilescale: ");
    ts_buf_printf(&m, "error: kernel '%s': mbarrier_%s on '%s'", g->k->name ? g->k->name : "?",
                  ir_mbar_op_name(s->mbar.op), cb->buf->name);
    ts_diag_source(&src, loc);
    line_start(g);
    out(g, "{\n");
    g->ind++;
    line_start(g);
    out(g, "const int64_t ts_mi = (int64_t)(");
    emit_expr(g, s->mbar.idx);
    out(g, ");\n");
    line_start(g);
    int64_t n = 1;
    ir_is_const_int(cb->buf->shape[0], &n);
    /* thread_coro kernels: a wait spins (the roles run as coroutines), up to the wait timeout */
    int spin = g->coro && s->mbar.op == IR_MBAR_WAIT;
    if (spin) {
        out(g, "const char *ts_mw;\n");
        line_start(g);
        out(g, "for (int64_t ts_t0 = 0, ts_n = 0;; ts_a->yield(ts_b->yield_ctx)) {\n");
        line_start(g);
        out(g, "    ");
    } else {
        out(g, "const char *");
    }
    outf(g, "ts_mw = (uint64_t)ts_mi >= %lldu ? \"outside the barrier buffer\" : ts_mbar(&%s[ts_mi], %d, ",
         (long long)n, cb->name,
         (int)(s->mbar.op == IR_MBAR_ARRIVE_ASYNC || s->mbar.op == IR_MBAR_ARRIVE_ONE ? IR_MBAR_ARRIVE : s->mbar.op));
    if (s->mbar.value) {
        out(g, "(int64_t)(");
        emit_expr(g, s->mbar.value);
        out(g, ")");
    } else {
        out(g, "0");
    }
    /* ARRIVE_ONE: one arrival for the group, whoever runs it */
    outf(g, ", %lld);\n",
         spin ? -1LL : (long long)(g->in_thread || s->mbar.op == IR_MBAR_ARRIVE_ONE ? 1 : g->arrivals));
    if (spin) {
        line_start(g);
        out(g, "    if (!ts_mw || *ts_mw) break; /* \"\": not yet */\n");
        emit_wait_timeout(g, mbar_timed_out, NULL);
        line_start(g);
        out(g, "}\n");
    }
    line_start(g);
    out(g, "if (ts_mw) {\n");
    line_start(g);
    out(g, "    ts_mbar_fail(ts_a, ts_b, ");
    ts_cx_string(&g->x, ts_buf_str(&m));
    out(g, ", ");
    ts_cx_string(&g->x, ts_buf_str(&src));
    out(g, ", ts_mi, ts_mw);\n");
    line_start(g);
    out(g, "    return;\n");
    line_start(g);
    out(g, "}\n");
    g->ind--;
    line_start(g);
    out(g, "}\n");
    ts_buf_free(&m);
    ts_buf_free(&src);
}

static void emit_stmt_at(Cg *g, const IrStmt *s);

/* T.sync_grid in a cooperative kernel (pass split_grid): every block of
 * the launch arrives before any goes on.  The count is the first word of
 * the grid workspace, zeroed per launch by the scheduler; each arrival
 * takes a ticket, and the barrier's round ends at the next multiple of the
 * block count (every block passes every barrier, so the rounds line up).
 * The blocks run as coroutines (may_block), so waiting yields; a wait
 * longer than the launch's wait timeout (a block that never arrives) fails
 * the launch with a message, as the world's barriers do. */
static void emit_grid_sync(Cg *g, int line) {
    if (g->coro) /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, g->k->body->loc, "C codegen: T.sync_grid in a coroutine kernel");
    line_start(g);
    out(g, "{ /* T.sync_grid: every block of the launch */\n");
    g->ind++;
    line_start(g);
    out(g, "int64_t ts_g[3];\n");
    line_start(g);
    out(g, "tsk_grid(ts_a, ts_g);\n");
    line_start(g);
    out(g, "const int64_t ts_tot = ts_g[0] * ts_g[1] * ts_g[2];\n");
    line_start(g);
    out(g, "int64_t *ts_w = (int64_t *)(void *)ts_a->grid_ws;\n");
    line_start(g);
    out(g, "const int64_t ts_goal = (__atomic_fetch_add(ts_w, 1, __ATOMIC_ACQ_REL) / ts_tot + 1) * ts_tot;\n");
    line_start(g);
    out(g, "for (int64_t ts_t0 = 0, ts_n = 0, ts_v; (ts_v = __atomic_load_n(ts_w, __ATOMIC_ACQUIRE)) < ts_goal;) {\n");
    line_start(g);
    out(g, "    ts_a->yield(ts_b->yield_ctx);\n");
    line_start(g);
    out(g, "    if (ts_a->aborted && __atomic_load_n(ts_a->aborted, __ATOMIC_ACQUIRE)) return;\n");
    emit_wait_timeout(g, grid_timed_out, &line);
    line_start(g);
    out(g, "}\n");
    g->ind--;
    line_start(g);
    out(g, "}\n");
}

static void emit_stmt(Cg *g, const IrStmt *s) {
    if (!s) return;
    TsLoc saved_loc = g->stmt_loc;
    if (s->loc.src) g->stmt_loc = s->loc;
    emit_stmt_at(g, s);
    g->stmt_loc = saved_loc;
}

static void emit_stmt_at(Cg *g, const IrStmt *s) {
    switch (s->kind) {
    case IR_S_SEQ:
        line_start(g);
        emit_block(g, s);
        out(g, "\n");
        return;
    case IR_S_FOR: {
        const IrVar *v = s->for_.var;
        const char *n = ts_cx_name(g->a, v->name, v->id);
        if (s->for_.kind == IR_FOR_THREAD) {
            /* a thread range: the block's threads one after another (exact
             * between barriers, which the C target does not emit) */
            if (g->in_thread)
                ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: a thread range inside a thread range");
            line_start(g);
            if (g->coro) { /* this thread's part, if the range has it */
                out(g, "for (int32_t ts_tid = ts_me, ts_tid_lo = (int32_t)(");
                emit_expr(g, s->for_.min);
                out(g, "), ts_tid_once = 1; ts_tid_once && ts_tid >= ts_tid_lo && ts_tid < ts_tid_lo + (int32_t)(");
                emit_expr(g, s->for_.extent);
                out(g, "); ts_tid_once = 0) {\n");
            } else {
                out(g, "for (int32_t ts_tid = (int32_t)(");
                emit_expr(g, s->for_.min);
                out(g, "), ts_tid_end = ts_tid + (int32_t)(");
                emit_expr(g, s->for_.extent);
                out(g, "); ts_tid < ts_tid_end; ts_tid++) {\n");
            }
            g->ind++;
            line_start(g);
            outf(g, "const int32_t %s = ts_tid;\n", n);
            line_start(g);
            outf(g, "(void)%s;\n", n);
            g->in_thread = 1;
            scope_open(g);
            emit_body(g, s->for_.body);
            scope_close(g);
            g->in_thread = 0;
            g->ind--;
            line_start(g);
            out(g, "}\n");
            return;
        }
        if ((s->for_.kind == IR_FOR_PARALLEL || s->for_.kind == IR_FOR_VECTORIZED) &&
            !stmt_has_loop(s->for_.body)) {
            line_start(g);
            out(g, "TS_IVDEP\n");
        }
        line_start(g);
        outf(g, "for (%s %s = ", ts_cx_compute_ctype(&g->x, v->dt, s->loc), n);
        emit_expr(g, s->for_.min);
        outf(g, ", %s_end = %s + (", n, n);
        emit_expr(g, s->for_.extent);
        outf(g, "); %s < %s_end; %s++) ", n, n, n);
        emit_block(g, s->for_.body);
        out(g, "\n");
        return;
    }
    case IR_S_IF:
        line_start(g);
        out(g, "if (");
        emit_expr(g, s->if_.cond);
        out(g, ") ");
        emit_block(g, s->if_.then);
        if (s->if_.else_) {
            out(g, " else ");
            emit_block(g, s->if_.else_);
        }
        out(g, "\n");
        return;
    case IR_S_WHILE:
        line_start(g);
        out(g, "while (");
        emit_expr(g, s->while_.cond);
        out(g, ") {\n");
        g->ind++;
        if (s->while_.poll) { /* pass poll_marks: the loop may wait for another block or thread */
            line_start(g);
            out(g, "ts_a->yield(ts_b->yield_ctx);\n");
        }
        scope_open(g);
        emit_body(g, s->while_.body);
        scope_close(g);
        g->ind--;
        line_start(g);
        out(g, "}\n");
        return;
    case IR_S_BREAK: line_start(g); out(g, "break;\n"); return;
    case IR_S_CONTINUE: line_start(g); out(g, "continue;\n"); return;
    case IR_S_STORE: {
        const CgBuf *cb = find_buf(g, s->store.buf, s->loc);
        TsDType dt = cb->buf->dt;
        int atomic = s->store.release && (cb->param >= 0 || cb->buf->addr); /* pass poll_marks */
        const IrExpr *v = s->store.value;
        /* the store converts (and rounds) exactly like a cast to dt would */
        if (v && v->kind == IR_E_CAST && v->dt == dt && !s->store.bits) v = v->un.a;
        /* copying an element of the same dtype: move the stored bits */
        if (v && v->kind == IR_E_LOAD && v->load.buf->dt == dt && !v->load.bits && !s->store.bits && !atomic &&
            !v->load.acquire) {
            const CgBuf *src = find_buf(g, v->load.buf, v->loc);
            line_start(g);
            outf(g, "%s[", cb->name);
            emit_index(g, cb, s->store.idx, s->store.nidx, g->stmt_loc, "store to");
            outf(g, "] = %s[", src->name);
            emit_index(g, src, v->load.idx, v->load.nidx, v->loc.src ? v->loc : g->stmt_loc, "load from");
            out(g, "];\n");
            return;
        }
        line_start(g);
        if (atomic) outf(g, "ts_st_%s(&%s[", ts_cx_storage(&c_dialect, dt), cb->name);
        else outf(g, "%s[", cb->name);
        emit_index(g, cb, s->store.idx, s->store.nidx, g->stmt_loc, "store to");
        out(g, atomic ? "], " : "] = ");
        const char *open = ts_cx_store_conv(&g->x, dt), *close = "))";
        if (s->store.bits) ts_cx_bits_store(&g->x, dt, &open, &close); /* bits as they are */
        out(g, open);
        emit_expr(g, v);
        out(g, close);
        out(g, atomic ? ");\n" : ";\n");
        return;
    }
    case IR_S_ATOMIC_ADD: emit_atomic_add(g, s); return;
    case IR_S_LET: {
        const IrVar *v = s->let.var;
        const char *n = ts_cx_name(g->a, v->name, v->id);
        int fresh = !ts_cx_declared_here(&g->scopes, v);
        line_start(g);
        if (fresh) outf(g, "%s %s = ", ts_cx_compute_ctype(&g->x, v->dt, s->loc), n);
        else outf(g, "%s = ", n);
        emit_expr(g, s->let.value);
        out(g, ";\n");
        if (fresh) {
            ts_cx_declare(g->a, &g->scopes, v);
            line_start(g);
            outf(g, "(void)%s;\n", n);
        }
        return;
    }
    case IR_S_ALLOC:
        /* carved out of the scratch area up front; mbarriers start uninitialised
         * (thread_coro kernels: zeroed before the threads start, emit_block_fn) */
        if (s->alloc.buf->mbar_count && !g->coro) {
            const CgBuf *cb = find_buf(g, s->alloc.buf, s->loc);
            int64_t n = 1;
            ir_is_const_int(cb->buf->shape[0], &n);
            line_start(g);
            outf(g, "memset(%s, 0, %lld);\n", cb->name, (long long)n * 8);
        }
        return;
    case IR_S_ROLE: {
        int64_t saved = g->arrivals;
        g->arrivals = s->role.n;
        line_start(g);
        if (s->role.solo)
            outf(g, "/* solo: thread %d, for threads [%d, %d) */\n", s->role.lo, s->role.lo, s->role.lo + s->role.n);
        else
            outf(g, "/* T.ws role %d: threads [%d, %d) */\n", s->role.id, s->role.lo, s->role.lo + s->role.n);
        line_start(g);
        if (s->role.solo) { /* coro_sync_c: the group's uniform code, by its first thread */
            if (!g->coro) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: a solo role outside a thread_coro kernel");
            outf(g, "if (ts_me == %d) ", s->role.lo);
        } else if (g->coro) { /* the role's threads run its body */
            outf(g, "if (ts_me >= %d && ts_me < %d) ", s->role.lo, s->role.lo + s->role.n);
        }
        emit_block(g, s->role.body);
        out(g, "\n");
        g->arrivals = saved;
        return;
    }
    case IR_S_MBAR: emit_mbar(g, s); return;
    case IR_S_TILEOP:
        if (s->op && s->op->inst == TS_OP_INST_COMM) { /* communication: comm_c.c */
            ts_c_comm_emit(&g->x, s, g->ind);
            return;
        }
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: a tile operator was not lowered");
    case IR_S_BARRIER:
        if (g->coro) { /* bar.sync id, count; id 0, count 0: every live thread */
            line_start(g);
            out(g, "ts_a->tbar(ts_b->yield_ctx, ");
            if (s->barrier.idv) {
                out(g, "(int32_t)(");
                emit_expr(g, s->barrier.idv);
                out(g, ")");
            } else {
                outf(g, "%d", s->barrier.id);
            }
            outf(g, ", %d);\n", s->barrier.count);
            return;
        }
        return; /* program order: nothing to wait for */
    case IR_S_VCOPY:
    case IR_S_ASYNC_COMMIT:
    case IR_S_ASYNC_WAIT:
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: a thread-level statement (the C target runs tile-level IR)");
    case IR_S_EVAL:
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_THREAD_RETURN) {
            if (!g->coro) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: T.thread_return outside a thread_coro kernel");
            line_start(g);
            out(g, "return;\n");
            return;
        }
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_SYNC_GRID) {
            emit_grid_sync(g, s->loc.line);
            return;
        }
        line_start(g);
        out(g, "(void)(");
        emit_expr(g, s->eval.e);
        out(g, ");\n");
        return;
    case IR_S_PRINT: emit_print(g, s); return;
    }
    ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "C codegen: statement kind %d", (int)s->kind);
}

/* ---- buffers and scratch layout -------------------------------------------------- */

static void add_buf(Cg *g, const IrBuffer *b) {
    for (int i = 0; i < g->bufs.n; i++)
        if (g->bufs.v[i].buf == b) return;
    CgBuf cb = {b, ts_cx_name(g->a, b->name, b->id), -1, 0, NULL};
    if (b->addr) { /* T.make_tensor: row-major at the address its let bound (IrBuffer.addr) */
        cb.name = ts_sprintf(g->a, "((%s *)(uintptr_t)(%s))", ts_cx_storage(&c_dialect, b->dt),
                             ts_cx_name(g->a, b->addr->name, b->addr->id));
        cb.strides = TS_NEWN(g->a, int64_t, b->ndim > 0 ? b->ndim : 1);
        for (int i = 0; i < b->ndim; i++)
            if (!ir_is_const_int(b->strides[i], &cb.strides[i]))
                ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "C codegen: T.make_tensor '%s' without constant strides", b->name);
    } else if (b->scope == IR_SCOPE_GLOBAL) {
        for (int i = 0; i < g->k->params.n; i++)
            if (g->k->params.v[i].buf == b) cb.param = i;
        if (cb.param < 0) /* (tensors, T.alloc_global workspaces and T.make_tensor are) */
            ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "C codegen: global buffer '%s' is not a kernel parameter",
                       b->name);
    } else {
        int64_t elems = 1;
        cb.strides = TS_NEWN(g->a, int64_t, b->ndim > 0 ? b->ndim : 1);
        for (int i = b->ndim - 1; i >= 0; i--) {
            int64_t ext; /* (the elaborator's extents: constants, at most 2^40 bytes in all) */
            if (!b->shape || !ir_is_const_int(b->shape[i], &ext))
                ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "C codegen: %s buffer '%s' without constant extents",
                           ir_scope_name(b->scope), b->name);
            if (ext < 0 || ext > ((int64_t)1 << 40) || elems > ((int64_t)1 << 40) / (ext ? ext : 1))
                ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "C codegen: %s buffer '%s' is too large",
                           ir_scope_name(b->scope), b->name);
            cb.strides[i] = elems;
            elems *= ext;
        }
        int64_t bytes = elems * ((ts_dtype_bits(b->dt) + 7) / 8) * (b->stages > 1 ? b->stages : 1);
        g->scratch = (g->scratch + TS_C_SCRATCH_ALIGN - 1) / TS_C_SCRATCH_ALIGN * TS_C_SCRATCH_ALIGN;
        cb.offset = g->scratch;
        g->scratch += bytes;
    }
    ts_vec_push(g->a, g->bufs, cb);
}

/* Every buffer the body touches joins the table (on the shared visitor,
 * ir/walk.h: every access, and allocations). */
static void add_access(IrVisitor *v, const IrAccess *acc) { add_buf(v->ctx, acc->buf); }

static bool add_alloc(IrVisitor *v, const IrStmt *s) {
    if (s->kind == IR_S_ALLOC) add_buf(v->ctx, s->alloc.buf);
    return true;
}

static void add_bufs(Cg *g, const IrStmt *body) {
    IrVisitor v = {.ctx = g, .pre_stmt = add_alloc, .access = add_access};
    ir_visit_stmt(&v, body);
}

/* ---- functions ----------------------------------------------------------------- */

/* Declarations of scalars and shape variables, shared by tsk_grid and tsk_block. */
static void emit_scalar_prologue(Cg *g) {
    const IrKernel *k = g->k;
    for (int i = 0; i < k->shape_vars.n; i++) {
        const IrVar *v = k->shape_vars.v[i];
        const char *n = ts_cx_name(g->a, v->name, v->id);
        line_start(g);
        outf(g, "const %s %s = (%s)ts_a->shape_vars[%d];\n", ts_cx_compute_ctype(&g->x, v->dt, (TsLoc){0}), n,
             ts_cx_compute_ctype(&g->x, v->dt, (TsLoc){0}), i);
        line_start(g);
        outf(g, "(void)%s;\n", n);
    }
    for (int i = 0; i < k->params.n; i++) {
        const IrVar *v = k->params.v[i].var;
        if (!v || k->params.v[i].buf) continue;
        const char *n = ts_cx_name(g->a, v->name, v->id);
        line_start(g);
        outf(g, "const %s %s = %s*(const %s *)ts_a->data[%d]);\n", ts_cx_compute_ctype(&g->x, v->dt, (TsLoc){0}), n,
             ts_cx_load_conv(&g->x, v->dt), ts_cx_storage(&c_dialect, v->dt), i);
        line_start(g);
        outf(g, "(void)%s;\n", n);
    }
}

static void emit_grid_fn(Cg *g) {
    const IrKernel *k = g->k;
    out(g, "TS_EXPORT void tsk_grid(const TsCArgs *ts_a, int64_t ts_grid[3]) {\n");
    g->ind = 1;
    g->in_grid = 1;
    line_start(g);
    out(g, "(void)ts_a;\n");
    emit_scalar_prologue(g);
    for (int i = 0; i < 3; i++) {
        line_start(g);
        outf(g, "ts_grid[%d] = ", i);
        if (i < k->ngrid && k->grid[i]) {
            out(g, "(int64_t)(");
            emit_expr(g, k->grid[i]);
            out(g, ");\n");
        } else {
            out(g, "1;\n");
        }
    }
    g->in_grid = 0;
    g->ind = 0;
    out(g, "}\n\n");
}

static void emit_block_fn(Cg *g) {
    const IrKernel *k = g->k;
    if (g->coro) {
        /* one thread's view of the body (threads_c.c runs one per thread) */
        out(g, "static void tsk_thread_body(const TsCArgs *ts_a, TsCBlock *ts_b, jmp_buf *ts_jb, int32_t ts_me) {\n");
        out(g, "    (void)ts_jb; (void)ts_me;\n");
    } else if (g->check) {
        /* the body apart, so that setjmp does not pessimize its code */
        out(g, "static void tsk_body(const TsCArgs *ts_a, TsCBlock *ts_b, jmp_buf *ts_jb) {\n");
        out(g, "    (void)ts_jb;\n");
    } else {
        out(g, "TS_EXPORT void tsk_block(const TsCArgs *ts_a, TsCBlock *ts_b) {\n");
    }
    g->ind = 1;
    line_start(g);
    out(g, "unsigned char *ts_scratch = ts_b->scratch;\n");
    line_start(g);
    out(g, "(void)ts_a; (void)ts_b; (void)ts_scratch;\n");
    for (int i = 0; i < 3; i++) {
        line_start(g);
        outf(g, "const int64_t ts_bidx%d = ts_b->idx[%d];\n", i, i);
        line_start(g);
        outf(g, "(void)ts_bidx%d;\n", i);
    }
    emit_scalar_prologue(g);
    for (int i = 0; i < g->bufs.n; i++) {
        const CgBuf *cb = &g->bufs.v[i];
        const char *st = ts_cx_storage(&c_dialect, cb->buf->dt);
        if (cb->buf->addr) continue; /* T.make_tensor: its address is a let of the body */
        line_start(g);
        if (cb->param >= 0) {
            outf(g, "%s *%s = (%s *)ts_a->data[%d];\n", st, cb->name, st, cb->param);
            for (int d = 0; d < cb->buf->ndim; d++) {
                line_start(g);
                outf(g, "const int64_t %s_s%d = ts_a->strides[%d][%d];\n", cb->name, d, cb->param, d);
                line_start(g);
                outf(g, "(void)%s_s%d;\n", cb->name, d);
            }
        } else {
            outf(g, "%s *restrict %s = (%s *)(void *)(ts_scratch + %lld); /* %s */\n", st, cb->name, st,
                 (long long)cb->offset, ir_scope_name(cb->buf->scope));
        }
        line_start(g);
        outf(g, "(void)%s;\n", cb->name);
    }
    scope_open(g);
    emit_body(g, k->body);
    scope_close(g);
    g->ind = 0;
    out(g, "}\n");
    if (g->coro) {
        out(g, "\nstatic void tsk_thread(const TsCArgs *ts_a, TsCBlock *ts_b, int32_t ts_me) {\n");
        if (g->check) {
            out(g, "    jmp_buf ts_jb;\n");
            out(g, "    if (setjmp(ts_jb)) return; /* an out-of-bounds access was reported */\n");
            out(g, "    tsk_thread_body(ts_a, ts_b, &ts_jb, ts_me);\n");
        } else {
            out(g, "    tsk_thread_body(ts_a, ts_b, NULL, ts_me);\n");
        }
        out(g, "}\n");
        out(g, "\nTS_EXPORT void tsk_block(const TsCArgs *ts_a, TsCBlock *ts_b) {\n");
        for (int i = 0; i < g->bufs.n; i++) { /* mbarriers start uninitialised, before any thread runs */
            const CgBuf *cb = &g->bufs.v[i];
            int64_t n = 1;
            if (!cb->buf->mbar_count || cb->param >= 0) continue;
            ir_is_const_int(cb->buf->shape[0], &n);
            outf(g, "    memset((unsigned char *)ts_b->scratch + %lld, 0, %lld); /* %s */\n", (long long)cb->offset,
                 (long long)n * 8, cb->name);
        }
        outf(g, "    ts_a->threads(ts_a, ts_b, %lld, tsk_thread);\n", (long long)ir_kernel_nthreads(k));
        out(g, "}\n");
    } else if (g->check) {
        out(g, "\nTS_EXPORT void tsk_block(const TsCArgs *ts_a, TsCBlock *ts_b) {\n");
        out(g, "    jmp_buf ts_jb;\n");
        out(g, "    if (setjmp(ts_jb)) return; /* an out-of-bounds access was reported */\n");
        out(g, "    tsk_body(ts_a, ts_b, &ts_jb);\n");
        out(g, "}\n");
    }
}

/* The check, ahead of the functions; the function reporting a failure
 * is only declared here, its sites' tables are complete only at the end. */
static void emit_check_head(Cg *g) {
    if (!g->check) return;
    out(g, "static void ts_ck_fail(const TsCArgs *ts_a, const TsCBlock *ts_b, jmp_buf *ts_jb, int64_t i,\n"
           "                       int64_t n, int site, int dim) __attribute__((noinline, noreturn, cold));\n"
           "TS_INL int64_t ts_ck(const TsCArgs *ts_a, const TsCBlock *ts_b, jmp_buf *ts_jb, int64_t i, int64_t n,\n"
           "                    int site, int dim) {\n"
           "    if (__builtin_expect((uint64_t)i >= (uint64_t)n, 0)) ts_ck_fail(ts_a, ts_b, ts_jb, i, n, site, dim);\n"
           "    return i;\n"
           "}\n\n");
}

/* The sites' messages (one per checked access in the source) and the
 * report: through the scheduler's fault callback, then out of the block. */
static void emit_check_tail(Cg *g) {
    if (!g->check) return;
    for (int t = 0; t < 2; t++) {
        outf(g, "\nstatic const char *const ts_ck_%s[%d] = {\n", t ? "src" : "site",
             g->site_msg.n ? g->site_msg.n : 1);
        for (int i = 0; i < g->site_msg.n; i++) {
            out(g, "    ");
            ts_cx_string(&g->x, t ? g->site_src.v[i] : g->site_msg.v[i]);
            out(g, ",\n");
        }
        if (!g->site_msg.n) out(g, "    \"\",\n");
        out(g, "};\n");
    }
    out(g, "static void ts_ck_fail(const TsCArgs *ts_a, const TsCBlock *ts_b, jmp_buf *ts_jb, int64_t i,\n"
           "                       int64_t n, int site, int dim) {\n"
           "    if (ts_a->fault) ts_a->fault(ts_a->fault_ctx, ts_ck_site[site], ts_ck_src[site], dim, i, n, ts_b->idx);\n"
           "    longjmp(*ts_jb, 1);\n"
           "}\n");
}

void ts_c_codegen(TsDiag *d, const IrKernel *k, const TsCaps *caps, TsBuf *o) {
    Cg g = {0};
    g.d = d;
    g.k = k;
    g.a = k->arena;
    g.o = o;
    g.x = (TsCxGen){&c_dialect, d, k->arena, k, o, &g};
    g.check = caps ? caps->check_bounds : 1;
    g.coro = k->thread_coro;
    g.arrivals = ir_kernel_nthreads(k);
    if (k->ngrid < 0 || k->ngrid > 3)
        ts_fail_at(d, TS_ERR_INTERNAL, (TsLoc){0}, "C codegen: %d grid dimensions", k->ngrid);

    /* Buffers: parameters first (in order), then everything else touched. */
    for (int i = 0; i < k->params.n; i++)
        if (k->params.v[i].buf) add_buf(&g, k->params.v[i].buf);
    for (int i = 0; i < k->buffers.n; i++)
        if (k->buffers.v[i]->scope != IR_SCOPE_GLOBAL) add_buf(&g, k->buffers.v[i]);
    add_bufs(&g, k->body);
    int64_t scratch = (g.scratch + TS_C_SCRATCH_ALIGN - 1) / TS_C_SCRATCH_ALIGN * TS_C_SCRATCH_ALIGN;

    ts_buf_printf(o, "/* Generated by TileScale (C target, ABI %u) for kernel '", TS_C_ABI_VERSION);
    for (const char *p = k->name ? k->name : "?"; *p; p++)
        if (*p != '*' && *p != '/') ts_buf_putn(o, p, 1);
    ts_buf_puts(o, "'.  Do not edit. */\n");
    ts_c_emit_prelude(o);
    if (ts_comm_used(k->body)) ts_c_comm_prelude(o);
    for (int i = 0; i < k->buffers.n; i++)
        if (k->buffers.v[i]->mbar_count) {
            ts_c_mbar_prelude(o);
            break;
        }

    ts_buf_printf(o, "TS_EXPORT uint32_t tsk_abi_version(void) { return %uu; }\n\n", TS_C_ABI_VERSION);
    ts_buf_puts(o, "TS_EXPORT void tsk_info(TsCInfo *ts_i) {\n");
    ts_buf_printf(o, "    ts_i->abi_version = %uu;\n", TS_C_ABI_VERSION);
    ts_buf_printf(o, "    ts_i->nparams = %d;\n", k->params.n);
    ts_buf_printf(o, "    ts_i->nshape_vars = %d;\n", k->shape_vars.n);
    /* the scheduler runs the blocks as coroutines for either (a cooperative
     * kernel's blocks meet at grid barriers) */
    ts_buf_printf(o, "    ts_i->may_block = %d;\n", k->may_block || k->cooperative ? 1 : 0);
    ts_buf_printf(o, "    ts_i->scratch_bytes = %lld;\n", (long long)scratch);
    ts_buf_printf(o, "    ts_i->grid_ws_bytes = %lld;\n", (long long)k->grid_ws_bytes);
    ts_buf_puts(o, "    ts_i->name = ");
    ts_cx_string(&g.x, k->name ? k->name : "");
    ts_buf_puts(o, ";\n}\n\n");

    if (g.coro) ts_buf_puts(o, ts_c_warp_macros);
    emit_check_head(&g);
    emit_grid_fn(&g);
    emit_block_fn(&g);
    emit_check_tail(&g);
}
